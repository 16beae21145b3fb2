/* opara bench FILE... --sim DEVICE[,DEVICE...] [--batch 1,2,4] [--json OUT] [--trace OUT] [--svg OUT]
               [--metric smem|dominant] [--stream-cap N] [--shape NAME=d0,...] [--default-dim N]

   Puts every strategy side by side on the GPU timing simulator: for each device, batch size,
   strategy and launch mode, the simulated latency, the speedup over the sequential graph, the
   SM-busy fraction, streams, events, peak memory and the time planning took. Every timing is a
   MODEL (src/sim/opara_sim.c), labelled "simulated" in every output.
   FILE is a model the library can load, or `synthetic:inception` (two Inception-v3 35x35 blocks
   built in, so the bench runs without the importer). --trace/--svg show the Opara graph-mode
   timeline of the first device and batch. */

typedef struct bench_model {
    opara_model* model;
    char name[128];
} bench_model;

typedef struct bench_variant {
    opara_strategy strategy;
    opara_sim_mode mode;
    const char* label;
} bench_variant;

static const bench_variant bench_variants[] = {
    {OPARA_STRATEGY_SEQUENTIAL, OPARA_SIM_GRAPH, "sequential graph"},
    {OPARA_STRATEGY_WAVEFRONT, OPARA_SIM_GRAPH, "wavefront graph"},
    {OPARA_STRATEGY_NIMBLE, OPARA_SIM_GRAPH, "nimble graph"},
    {OPARA_STRATEGY_OPARA, OPARA_SIM_GRAPH, "opara graph"},
    {OPARA_STRATEGY_OPARA_TOPO, OPARA_SIM_GRAPH, "opara-topo graph"},
    {OPARA_STRATEGY_SEQUENTIAL, OPARA_SIM_EAGER, "sequential eager"},
    {OPARA_STRATEGY_WAVEFRONT, OPARA_SIM_EAGER, "wavefront eager"},
    {OPARA_STRATEGY_NIMBLE, OPARA_SIM_EAGER, "nimble eager"},
    {OPARA_STRATEGY_OPARA, OPARA_SIM_EAGER, "opara eager"},
    {OPARA_STRATEGY_OPARA_TOPO, OPARA_SIM_EAGER, "opara-topo eager"},
};

typedef struct bench_row {
    const bench_variant* variant;
    double latency_us, speedup, sm_busy, plan_ms;
    uint32_t streams, events;
    uint64_t peak_bytes;
} bench_row;

/* ---- models ---------------------------------------------------------------------------------- */

/* The built-in model, through the public builder. Weights are graph inputs (no bytes to hold):
   planning and simulating need only their shapes. */
typedef struct bench_builder {
    opara_builder* b;
    char channels_of[64][64]; /* name -> channels of the tensors made so far (C of [N, C, 35, 35]) */
    int64_t channels[64];
    int n;
} bench_builder;

static int64_t bench_channels(const bench_builder* bb, const char* name) {
    int i;
    for (i = 0; i < bb->n; ++i)
        if (strcmp(bb->channels_of[i], name) == 0) return bb->channels[i];
    return 0;
}

static void bench_remember(bench_builder* bb, const char* name, int64_t c) {
    if (bb->n == 64) return;
    snprintf(bb->channels_of[bb->n], sizeof bb->channels_of[bb->n], "%s", name);
    bb->channels[bb->n++] = c;
}

/* conv k x k (stride 1, same padding) + ReLU of `in` into `out` ("<name>.relu"). */
static void bench_conv_relu(bench_builder* bb, const char* name, const char* in, int64_t cout, int64_t k, char* out,
                            size_t cap) {
    char w[64], y[64];
    const char *conv_in[2], *conv_out[1], *relu_in[1], *relu_out[1];
    int64_t wdims[4], pads[4], ks[2], strides[2] = {1, 1};
    opara_attr attrs[3];
    wdims[0] = cout, wdims[1] = bench_channels(bb, in), wdims[2] = wdims[3] = k;
    pads[0] = pads[1] = pads[2] = pads[3] = k / 2;
    ks[0] = ks[1] = k;
    snprintf(w, sizeof w, "%s.w", name);
    snprintf(y, sizeof y, "%s.conv", name);
    snprintf(out, cap, "%s.relu", name);
    opara_builder_add_input(bb->b, w, OPARA_DTYPE_F32, 4, wdims);
    memset(attrs, 0, sizeof attrs);
    attrs[0].name = "kernel_shape", attrs[0].type = OPARA_ATTR_INTS, attrs[0].count = 2, attrs[0].v.ints = ks;
    attrs[1].name = "pads", attrs[1].type = OPARA_ATTR_INTS, attrs[1].count = 4, attrs[1].v.ints = pads;
    attrs[2].name = "strides", attrs[2].type = OPARA_ATTR_INTS, attrs[2].count = 2, attrs[2].v.ints = strides;
    conv_in[0] = in, conv_in[1] = w, conv_out[0] = y;
    opara_builder_add_node(bb->b, "Conv", name, 2, conv_in, 1, conv_out, 3, attrs);
    {
        char relu_name[72];
        snprintf(relu_name, sizeof relu_name, "%s_relu", name);
        relu_in[0] = y, relu_out[0] = out;
        opara_builder_add_node(bb->b, "Relu", relu_name, 1, relu_in, 1, relu_out, 0, NULL);
    }
    bench_remember(bb, out, cout);
}

/* One Inception-v3 35x35 block (Mixed_5b shape): 1x1 | 1x1-5x5 | 1x1-3x3-3x3 | pool-1x1, concat. */
static void bench_inception_block(bench_builder* bb, const char* p, const char* in, int64_t pool_proj, char* out,
                                  size_t cap) {
    char n[64], b[4][64], t[64], t2[64];
    const char *pool_in[1], *pool_out[1], *cat_in[4], *cat_out[1];
    int64_t pk[2] = {3, 3}, pp[4] = {1, 1, 1, 1}, ps[2] = {1, 1};
    opara_attr attrs[3];
    snprintf(n, sizeof n, "%s.b1", p);
    bench_conv_relu(bb, n, in, 64, 1, b[0], sizeof b[0]);
    snprintf(n, sizeof n, "%s.b2a", p);
    bench_conv_relu(bb, n, in, 48, 1, t, sizeof t);
    snprintf(n, sizeof n, "%s.b2b", p);
    bench_conv_relu(bb, n, t, 64, 5, b[1], sizeof b[1]);
    snprintf(n, sizeof n, "%s.b3a", p);
    bench_conv_relu(bb, n, in, 64, 1, t, sizeof t);
    snprintf(n, sizeof n, "%s.b3b", p);
    bench_conv_relu(bb, n, t, 96, 3, t2, sizeof t2);
    snprintf(n, sizeof n, "%s.b3c", p);
    bench_conv_relu(bb, n, t2, 96, 3, b[2], sizeof b[2]);
    snprintf(n, sizeof n, "%s.pool", p);
    memset(attrs, 0, sizeof attrs);
    attrs[0].name = "kernel_shape", attrs[0].type = OPARA_ATTR_INTS, attrs[0].count = 2, attrs[0].v.ints = pk;
    attrs[1].name = "pads", attrs[1].type = OPARA_ATTR_INTS, attrs[1].count = 4, attrs[1].v.ints = pp;
    attrs[2].name = "strides", attrs[2].type = OPARA_ATTR_INTS, attrs[2].count = 2, attrs[2].v.ints = ps;
    pool_in[0] = in, pool_out[0] = n;
    opara_builder_add_node(bb->b, "AveragePool", n, 1, pool_in, 1, pool_out, 3, attrs);
    bench_remember(bb, n, bench_channels(bb, in));
    snprintf(t, sizeof t, "%s.b4", p);
    bench_conv_relu(bb, t, n, pool_proj, 1, b[3], sizeof b[3]);
    snprintf(out, cap, "%s.concat", p);
    memset(attrs, 0, sizeof attrs);
    attrs[0].name = "axis", attrs[0].type = OPARA_ATTR_INT, attrs[0].v.i = 1;
    cat_in[0] = b[0], cat_in[1] = b[1], cat_in[2] = b[2], cat_in[3] = b[3], cat_out[0] = out;
    opara_builder_add_node(bb->b, "Concat", out, 4, cat_in, 1, cat_out, 1, attrs);
    bench_remember(bb, out, 64 + 64 + 96 + pool_proj);
}

static opara_result bench_synthetic_inception(opara_runtime* rt, opara_model** out) {
    static const int64_t xdims[4] = {OPARA_DIM_BATCH, 192, 35, 35};
    bench_builder bb;
    char y1[64], y2[64];
    opara_result r;
    memset(&bb, 0, sizeof bb);
    r = opara_builder_create(rt, &bb.b);
    if (r != OPARA_OK) return r;
    opara_builder_add_input(bb.b, "x", OPARA_DTYPE_F32, 4, xdims);
    bench_remember(&bb, "x", 192);
    bench_inception_block(&bb, "mixed_5b", "x", 32, y1, sizeof y1);
    bench_inception_block(&bb, "mixed_5c", y1, 64, y2, sizeof y2);
    opara_builder_add_output(bb.b, y2);
    r = opara_builder_finish(bb.b, out); /* errors are sticky: the first failing call's code */
    opara_builder_destroy(bb.b);
    return r;
}

static opara_result bench_load(opara_runtime* rt, const char* path, const cli_onnx_args* onnx, bench_model* m) {
    const char* slash = strrchr(path, '/');
    opara_onnx_options options = cli_onnx_options(onnx);
    snprintf(m->name, sizeof m->name, "%s", slash ? slash + 1 : path);
    if (strcmp(path, "synthetic:inception") == 0) return bench_synthetic_inception(rt, &m->model);
    return cli_load_model(rt, path, &options, &m->model);
}

/* ---- one simulation -------------------------------------------------------------------------- */

typedef struct bench_ctx {
    opara_runtime* rt;
    bench_model* model;
    opara_plan_metric metric;
    uint32_t stream_cap;
    const char** kept_names; /* op names of the kept result, in launch order */
} bench_ctx;

static const char** bench_names_in_launch_order(const opara_plan* plan) {
    uint32_t p, n, count = opara_plan_node_count(plan);
    opara_plan_node nd;
    const char** names = (const char**)calloc(count + 1, sizeof(char*));
    for (p = 0; names && p < count; ++p)
        if (opara_plan_node_at(plan, p, &n) == OPARA_OK && opara_plan_get_node(plan, n, &nd) == OPARA_OK) names[p] = nd.name;
    return names;
}

static opara_result bench_simulate(bench_ctx* c, const opara_sim_device* dev, int64_t batch, const bench_variant* v,
                                   bench_row* row, opara_sim_result* keep, opara_plan** kept_plan) {
    int is_opara = v->strategy == OPARA_STRATEGY_OPARA || v->strategy == OPARA_STRATEGY_OPARA_TOPO;
    opara_plan_desc pd;
    opara_plan* plan = NULL;
    opara_plan_stats st;
    opara_sim_result res;
    opara_result r;
    memset(&pd, 0, sizeof pd);
    pd.strategy = v->strategy;
    pd.batch_size = batch;
    pd.device = dev;
    /* Concat inputs copied, as this bench has always planned: its figures (docs/SIMULATOR.md, the
       README) stay comparable across versions */
    pd.no_concat_in_place = 1;
    if (is_opara) {
        pd.metric = c->metric;
        pd.stream_cap = c->stream_cap;
    }
    r = opara_plan_create(c->model->model, &pd, &plan);
    if (r != OPARA_OK) return r;
    opara_plan_get_stats(plan, &st);
    row->plan_ms = (double)st.plan_ns * 1e-6;
    r = opara_plan_simulate(plan, dev, v->mode, &res);
    if (r == OPARA_OK) {
        row->variant = v;
        row->latency_us = res.makespan_us;
        row->sm_busy = res.sm_busy;
        row->streams = st.n_streams;
        row->events = st.n_events;
        row->peak_bytes = st.arena_bytes;
        if (keep && (c->kept_names = bench_names_in_launch_order(plan)) != NULL) {
            *keep = res;
            *kept_plan = plan; /* the names live in the plan */
            return r;
        }
        opara_sim_result_free(c->rt, &res);
    }
    opara_plan_destroy(plan);
    return r;
}

/* ---- outputs --------------------------------------------------------------------------------- */

static void bench_file_write(const char* text, size_t len, void* user) { fwrite(text, 1, len, (FILE*)user); }

static const char* const bench_colors[2] = {"#4477aa", "#ee6677"}; /* compute, memory */

/* Timeline picture: one lane per stream (ops coloured compute/memory), then busy SMs over time. */
static void bench_write_svg(FILE* f, const opara_sim_result* r, const char* title) {
    const double width = 960, left = 70, lane = 14, chart = 80;
    double scale = r->makespan_us > 0 ? width / r->makespan_us : 1, top = 40, y0;
    double height = top + lane * r->n_streams + chart + 60;
    uint32_t i;
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" font-family=\"sans-serif\" "
               "font-size=\"11\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
            left + width + 20, height);
    fprintf(f, "<text x=\"%.0f\" y=\"20\" font-size=\"14\">SIMULATED: %s (makespan %.1f us, SM busy %.1f%%)</text>\n",
            left, title, r->makespan_us, 100 * r->sm_busy);
    for (i = 0; i < r->n_streams; ++i)
        fprintf(f, "<text x=\"4\" y=\"%.1f\">stream %u</text>\n", top + lane * i + lane - 3, i);
    for (i = 0; i < r->n_ops; ++i) {
        const opara_sim_op_time* o = &r->ops[i];
        if (o->blocks == 0) continue;
        fprintf(f, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" fill=\"%s\" stroke=\"white\" "
                   "stroke-width=\"0.3\"/>\n",
                left + o->start_us * scale, top + lane * o->stream + 1, (o->end_us - o->start_us) * scale > 0.5 ? (o->end_us - o->start_us) * scale : 0.5,
                lane - 2, bench_colors[o->memory_bound ? 1 : 0]);
    }
    y0 = top + lane * r->n_streams + 20 + chart;
    fprintf(f, "<text x=\"4\" y=\"%.1f\">busy SMs</text>\n<path fill=\"#88aa55\" d=\"M%.2f %.1f", y0 - chart / 2, left, y0);
    for (i = 0; i < r->n_samples; ++i) {
        double x = left + r->sample_us[i] * scale;
        double y = y0 - chart * r->busy_sms[i] / (double)r->device.sm_count;
        double prev = i ? y0 - chart * r->busy_sms[i - 1] / (double)r->device.sm_count : y0;
        fprintf(f, " L%.2f %.1f L%.2f %.1f", x, prev, x, y);
    }
    fprintf(f, " L%.2f %.1f Z\"/>\n", left + r->makespan_us * scale, y0);
    fprintf(f, "<text x=\"%.0f\" y=\"%.1f\">0</text><text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">%.0f us</text>\n", left,
            y0 + 14, left + width, y0 + 14, r->makespan_us);
    fprintf(f, "<rect x=\"%.0f\" y=\"%.1f\" width=\"10\" height=\"10\" fill=\"%s\"/><text x=\"%.0f\" y=\"%.1f\">compute-bound</text>\n",
            left + 120, y0 + 22, bench_colors[0], left + 134, y0 + 31);
    fprintf(f, "<rect x=\"%.0f\" y=\"%.1f\" width=\"10\" height=\"10\" fill=\"%s\"/><text x=\"%.0f\" y=\"%.1f\">memory-bound</text>\n",
            left + 240, y0 + 22, bench_colors[1], left + 254, y0 + 31);
    fprintf(f, "</svg>\n");
}

static void bench_print_rows(const char* model, const opara_sim_device* dev, int64_t batch, const bench_row* rows,
                             size_t n) {
    size_t i;
    printf("\n%s on %s (SIMULATED), batch %lld\n", model, dev->name, (long long)batch);
    printf("  %-18s %12s %8s %8s %8s %7s %12s %9s\n", "strategy", "latency_us", "speedup", "sm_busy", "streams", "events",
           "peak_bytes", "plan_ms");
    for (i = 0; i < n; ++i)
        printf("  %-18s %12.1f %7.2fx %7.1f%% %8u %7u %12llu %9.3f\n", rows[i].variant->label, rows[i].latency_us,
               rows[i].speedup, 100 * rows[i].sm_busy, rows[i].streams, rows[i].events,
               (unsigned long long)rows[i].peak_bytes, rows[i].plan_ms);
}

static void bench_json_rows(FILE* f, int* first, const char* model, const opara_sim_device* dev, int64_t batch,
                            const bench_row* rows, size_t n) {
    size_t i;
    for (i = 0; i < n; ++i) {
        fprintf(f, "%s\n  {\"simulated\":true,\"model\":\"%s\",\"device\":\"%s\",\"batch\":%lld,\"strategy\":\"%s\","
                   "\"mode\":\"%s\",\"latency_us\":%.3f,\"speedup_vs_sequential_graph\":%.4f,\"sm_busy\":%.4f,"
                   "\"streams\":%u,\"events\":%u,\"peak_bytes\":%llu,\"plan_ms\":%.4f}",
                *first ? "" : ",", model, dev->name, (long long)batch, opara_strategy_name(rows[i].variant->strategy),
                rows[i].variant->mode == OPARA_SIM_EAGER ? "eager" : "graph", rows[i].latency_us, rows[i].speedup,
                rows[i].sm_busy, rows[i].streams, rows[i].events, (unsigned long long)rows[i].peak_bytes, rows[i].plan_ms);
        *first = 0;
    }
}

/* ---- driver ---------------------------------------------------------------------------------- */

#define BENCH_MAX_FILES 64

typedef struct bench_args {
    const char* files[BENCH_MAX_FILES];
    int n_files;
    char devices[256];
    char batches[256];
    const char* json;
    const char* trace;
    const char* svg;
    opara_plan_metric metric; /* Alg. 2's metric for the Opara variants (0: the scheduler's default) */
    uint32_t stream_cap;   /* Alg. 1's stream cap for the Opara variants (0: unlimited) */
    cli_onnx_args onnx;    /* --shape, --default-dim: sizes of symbolic input dims */
} bench_args;

static int bench_parse_args(int argc, char** argv, bench_args* a) {
    int i;
    long long number;
    memset(a, 0, sizeof *a);
    snprintf(a->devices, sizeof a->devices, "rtx2080s");
    snprintf(a->batches, sizeof a->batches, "1");
    for (i = 1; i < argc; ++i) {
        const char* v = i + 1 < argc ? argv[i + 1] : NULL;
        int taken = cli_onnx_arg("bench", argc, argv, &i, &a->onnx);
        if (taken < 0) return 0;
        if (taken) continue;
        if (strcmp(argv[i], "--sim") == 0 && v) snprintf(a->devices, sizeof a->devices, "%s", argv[++i]);
        else if (strcmp(argv[i], "--batch") == 0 && v) snprintf(a->batches, sizeof a->batches, "%s", argv[++i]);
        else if (strcmp(argv[i], "--json") == 0 && v) a->json = argv[++i];
        else if (strcmp(argv[i], "--trace") == 0 && v) a->trace = argv[++i];
        else if (strcmp(argv[i], "--svg") == 0 && v) a->svg = argv[++i];
        else if (strcmp(argv[i], "--stream-cap") == 0 && v) {
            if (!cli_int_arg("bench", argv[i], argv[i + 1], 0, UINT32_MAX, &number)) return 0;
            a->stream_cap = (uint32_t)number;
            ++i;
        }
        else if (strcmp(argv[i], "--metric") == 0 && v && strcmp(v, "smem") == 0) a->metric = OPARA_PLAN_METRIC_SMEM, ++i;
        else if (strcmp(argv[i], "--metric") == 0 && v && strcmp(v, "dominant") == 0) a->metric = OPARA_PLAN_METRIC_DOMINANT, ++i;
        else if (argv[i][0] != '-' && a->n_files < BENCH_MAX_FILES) a->files[a->n_files++] = argv[i];
        else {
            fprintf(stderr, "opara bench: unexpected argument '%s'\n", argv[i]);
            return 0;
        }
    }
    if (!a->n_files) fprintf(stderr, "usage: opara bench FILE... --sim DEVICE[,DEVICE] [--batch 1,2,4] [--json OUT] "
                                  "[--trace OUT] [--svg OUT]\n"
                                  "       [--metric smem|dominant] [--stream-cap N] [--shape NAME=d0,...] [--default-dim N]\n");
    for (i = 0; i < a->n_files; ++i)
        if (!cli_onnx_args_fit("bench", a->files[i], &a->onnx)) return 0;
    return a->n_files > 0;
}

/* Next comma-separated item of *list into buf; 0 at the end. */
static int bench_next_item(const char** list, char* buf, size_t cap) {
    const char* p = *list;
    size_t n = 0;
    if (!*p) return 0;
    while (p[n] && p[n] != ',') ++n;
    snprintf(buf, cap, "%.*s", (int)n, p);
    *list = p[n] ? p + n + 1 : p + n;
    return 1;
}

static void bench_save_views(const bench_args* a, const opara_sim_result* res, const char* const* names,
                             const bench_model* m, const opara_sim_device* dev, int64_t batch) {
    char title[256];
    FILE* f;
    snprintf(title, sizeof title, "%s, opara graph, %s, batch %lld", m->name, dev->name, (long long)batch);
    if (a->trace && (f = tool_fopen(a->trace, "wb")) != NULL) {
        opara_sim_trace_write(res, names, bench_file_write, f);
        fclose(f);
    }
    if (a->svg && (f = tool_fopen(a->svg, "wb")) != NULL) {
        bench_write_svg(f, res, title);
        fclose(f);
    }
}

static int bench_one(bench_ctx* c, const bench_args* a, const opara_sim_device* dev, int64_t batch, FILE* json,
                     int* first, int want_views) {
    bench_row rows[sizeof bench_variants / sizeof bench_variants[0]];
    size_t i, n = sizeof bench_variants / sizeof bench_variants[0];
    opara_sim_result keep;
    opara_plan* kept_plan = NULL;
    opara_result r;
    memset(&keep, 0, sizeof keep);
    for (i = 0; i < n; ++i) {
        int views = want_views && bench_variants[i].strategy == OPARA_STRATEGY_OPARA && bench_variants[i].mode == OPARA_SIM_GRAPH;
        r = bench_simulate(c, dev, batch, &bench_variants[i], &rows[i], views ? &keep : NULL, &kept_plan);
        if (r != OPARA_OK) {
            opara_sim_result_free(c->rt, &keep);
            opara_plan_destroy(kept_plan);
            fprintf(stderr, "opara bench: %s %s: %s\n", c->model->name, bench_variants[i].label,
                    opara_runtime_last_error(c->rt));
            return 0;
        }
        rows[i].speedup = rows[i].latency_us > 0 ? rows[0].latency_us / rows[i].latency_us : 0;
    }
    bench_print_rows(c->model->name, dev, batch, rows, n);
    if (json) bench_json_rows(json, first, c->model->name, dev, batch, rows, n);
    if (want_views && keep.ops) {
        bench_save_views(a, &keep, c->kept_names, c->model, dev, batch);
        opara_sim_result_free(c->rt, &keep);
        free((void*)c->kept_names);
        c->kept_names = NULL;
    }
    opara_plan_destroy(kept_plan);
    return 1;
}

/* Every device and batch for one model file. */
static int bench_model_file(opara_runtime* rt, const bench_args* a, const char* file, FILE* json, int* first,
                            int* views) {
    bench_model model;
    bench_ctx c;
    const char* dev_list;
    char item[200];
    int ok = 1;
    memset(&model, 0, sizeof model);
    memset(&c, 0, sizeof c);
    if (bench_load(rt, file, &a->onnx, &model) != OPARA_OK) {
        fprintf(stderr, "opara bench: %s\n", opara_runtime_last_error(rt));
        opara_model_destroy(model.model);
        return 0;
    }
    c.rt = rt;
    c.model = &model;
    c.metric = a->metric;
    c.stream_cap = a->stream_cap;
    for (dev_list = a->devices; ok && bench_next_item(&dev_list, item, sizeof item);) {
        opara_sim_device dev;
        const char* batch_list = a->batches;
        char b[32];
        if (opara_sim_device_load(rt, item, &dev) != OPARA_OK) {
            fprintf(stderr, "opara bench: %s\n", opara_runtime_last_error(rt));
            ok = 0;
            break;
        }
        while (ok && bench_next_item(&batch_list, b, sizeof b)) {
            long long batch;
            if (!cli_int_arg("bench", "--batch", b, 1, INT32_MAX, &batch)) {
                ok = 0;
                break;
            }
            ok = bench_one(&c, a, &dev, batch, json, first, *views);
            *views = 0;
        }
    }
    opara_model_destroy(model.model);
    return ok;
}

static int cli_bench(int argc, char** argv) {
    bench_args a;
    opara_runtime* rt = NULL;
    FILE* json = NULL;
    int ok = 1, first = 1, views = 1, i;
    if (!bench_parse_args(argc, argv, &a)) return 2;
    if (opara_runtime_create(NULL, &rt) != OPARA_OK) return 1;
    if (a.json && !(json = tool_fopen(a.json, "wb"))) fprintf(stderr, "opara bench: cannot write %s\n", a.json);
    if (json) fprintf(json, "[");
    printf("opara bench: all timings are SIMULATED (docs/SIMULATOR.md), not measured\n");
    fflush(stdout);
    for (i = 0; i < a.n_files; ++i) ok = bench_model_file(rt, &a, a.files[i], json, &first, &views) && ok;
    if (json) {
        fprintf(json, "\n]\n");
        fclose(json);
    }
    opara_runtime_destroy(rt);
    return ok ? 0 : 1;
}
