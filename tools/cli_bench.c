/* opara bench FILE... --sim DEVICE[,DEVICE...] [--batch 1,2,4] [--json OUT] [--trace OUT] [--svg OUT]
               [--metric smem|dominant] [--stream-cap N] [--default-dim N]

   Puts every strategy side by side on the GPU timing simulator: for each device, batch size,
   strategy and launch mode, the simulated latency, the speedup over the sequential graph, the
   SM-busy fraction, streams, events, peak memory and the time planning took. Every timing is a
   MODEL (src/opara_sim.c), labelled "simulated" in every output.
   FILE is a model the library can load, or `synthetic:inception` (two Inception-v3 35x35 blocks
   built in, so the bench runs without the importer). --trace/--svg show the Opara graph-mode
   timeline of the first device and batch. */

typedef struct bench_model {
    opara__graph graph;
    opara__shape* shapes; /* per value, dim 0 may be OPARA__DIM_BATCH */
    size_t cap_shapes;
    int imported; /* shapes come from the library's shape inference */
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

static int32_t bench_value(bench_model* m, const char* name, int64_t c, int64_t h, int64_t w) {
    opara__shape s;
    int32_t v;
    memset(&s, 0, sizeof s);
    s.ndim = 4;
    s.dims[0] = OPARA__DIM_BATCH;
    s.dims[1] = c;
    s.dims[2] = h;
    s.dims[3] = w;
    v = opara__graph_add_value(&m->graph, name, OPARA_DTYPE_F32, &s);
    if (v < 0 || opara__grow(m->graph.rt, (void**)&m->shapes, &m->cap_shapes, (size_t)v + 1, sizeof s) != OPARA_OK)
        return -1;
    m->shapes[v] = s;
    return v;
}

/* conv k x k (stride 1, same padding) + ReLU; returns the ReLU output or -1. */
static int32_t bench_conv_relu(bench_model* m, const char* name, int32_t in, int64_t cout, int64_t k) {
    char vn[160];
    const opara__shape* is = &m->shapes[in];
    int64_t pads[4], ks[2], strides[2] = {1, 1};
    int32_t w, y, r, ins[2];
    int32_t node;
    pads[0] = pads[1] = pads[2] = pads[3] = k / 2;
    ks[0] = ks[1] = k;
    snprintf(vn, sizeof vn, "%s.w", name);
    w = opara__graph_add_value(&m->graph, vn, OPARA_DTYPE_F32, NULL);
    snprintf(vn, sizeof vn, "%s.conv", name);
    y = bench_value(m, vn, cout, is->dims[2], is->dims[3]);
    snprintf(vn, sizeof vn, "%s.relu", name);
    r = bench_value(m, vn, cout, is->dims[2], is->dims[3]);
    if (w < 0 || y < 0 || r < 0) return -1;
    m->graph.values[w].shape.ndim = 4;
    m->graph.values[w].shape.dims[0] = cout;
    m->graph.values[w].shape.dims[1] = m->shapes[in].dims[1];
    m->graph.values[w].shape.dims[2] = k;
    m->graph.values[w].shape.dims[3] = k;
    if (opara__grow(m->graph.rt, (void**)&m->shapes, &m->cap_shapes, (size_t)w + 1, sizeof *m->shapes) != OPARA_OK ||
        opara__graph_add_input(&m->graph, w) != OPARA_OK)
        return -1;
    m->shapes[w] = m->graph.values[w].shape;
    ins[0] = in;
    ins[1] = w;
    node = opara__graph_add_node(&m->graph, OPARA__OP_CONV, name, 2, ins, 1, &y);
    if (node < 0 || opara__node_set_ints(&m->graph, node, "kernel_shape", ks, 2) != OPARA_OK ||
        opara__node_set_ints(&m->graph, node, "pads", pads, 4) != OPARA_OK ||
        opara__node_set_ints(&m->graph, node, "strides", strides, 2) != OPARA_OK)
        return -1;
    snprintf(vn, sizeof vn, "%s_relu", name);
    if (opara__graph_add_node(&m->graph, OPARA__OP_RELU, vn, 1, &y, 1, &r) < 0) return -1;
    return r;
}

/* One Inception-v3 35x35 block (Mixed_5b shape): 1x1 | 1x1-5x5 | 1x1-3x3-3x3 | pool-1x1, concat. */
static int32_t bench_inception_block(bench_model* m, const char* p, int32_t in, int64_t pool_proj) {
    char n[64];
    int32_t b[4], t, out, pooled;
    int64_t pk[2] = {3, 3}, pp[4] = {1, 1, 1, 1}, ps[2] = {1, 1}, axis = 1;
    int32_t node;
    const opara__shape* is = &m->shapes[in];
    snprintf(n, sizeof n, "%s.b1", p);
    b[0] = bench_conv_relu(m, n, in, 64, 1);
    snprintf(n, sizeof n, "%s.b2a", p);
    t = bench_conv_relu(m, n, in, 48, 1);
    snprintf(n, sizeof n, "%s.b2b", p);
    b[1] = t < 0 ? -1 : bench_conv_relu(m, n, t, 64, 5);
    snprintf(n, sizeof n, "%s.b3a", p);
    t = bench_conv_relu(m, n, in, 64, 1);
    snprintf(n, sizeof n, "%s.b3b", p);
    t = t < 0 ? -1 : bench_conv_relu(m, n, t, 96, 3);
    snprintf(n, sizeof n, "%s.b3c", p);
    b[2] = t < 0 ? -1 : bench_conv_relu(m, n, t, 96, 3);
    snprintf(n, sizeof n, "%s.pool", p);
    pooled = bench_value(m, n, is->dims[1], is->dims[2], is->dims[3]);
    if (pooled < 0) return -1;
    node = opara__graph_add_node(&m->graph, OPARA__OP_AVERAGE_POOL, n, 1, &in, 1, &pooled);
    if (node < 0 || opara__node_set_ints(&m->graph, node, "kernel_shape", pk, 2) != OPARA_OK ||
        opara__node_set_ints(&m->graph, node, "pads", pp, 4) != OPARA_OK ||
        opara__node_set_ints(&m->graph, node, "strides", ps, 2) != OPARA_OK)
        return -1;
    snprintf(n, sizeof n, "%s.b4", p);
    b[3] = bench_conv_relu(m, n, pooled, pool_proj, 1);
    if (b[0] < 0 || b[1] < 0 || b[2] < 0 || b[3] < 0) return -1;
    snprintf(n, sizeof n, "%s.concat", p);
    out = bench_value(m, n, 64 + 64 + 96 + pool_proj, is->dims[2], is->dims[3]);
    if (out < 0) return -1;
    node = opara__graph_add_node(&m->graph, OPARA__OP_CONCAT, n, 4, b, 1, &out);
    if (node < 0 || opara__node_set_int(&m->graph, node, "axis", axis) != OPARA_OK) return -1;
    return out;
}

static opara_result bench_synthetic_inception(bench_model* m) {
    int32_t x = bench_value(m, "x", 192, 35, 35), y;
    if (x < 0 || opara__graph_add_input(&m->graph, x) != OPARA_OK) return OPARA_ERR_OUT_OF_MEMORY;
    y = bench_inception_block(m, "mixed_5b", x, 32);
    y = y < 0 ? -1 : bench_inception_block(m, "mixed_5c", y, 64);
    if (y < 0 || opara__graph_add_output(&m->graph, y) != OPARA_OK) return OPARA_ERR_OUT_OF_MEMORY;
    return opara__graph_finalize(&m->graph);
}

/* Model files go through the ONNX importer and shape inference when the build has them (their
   headers' guards say so); otherwise only the built-in synthetic model loads. */
#if defined(OPARA_ONNX_H) && defined(OPARA_MODEL_H) && !defined(OPARA_NO_STDIO)
#  define BENCH_HAVE_IMPORT 1
#else
#  define BENCH_HAVE_IMPORT 0
#endif

static opara_result bench_load(opara_runtime* rt, const char* path, int64_t default_dim, bench_model* m) {
    const char* slash = strrchr(path, '/');
    snprintf(m->name, sizeof m->name, "%s", slash ? slash + 1 : path);
    if (strcmp(path, "synthetic:inception") == 0) {
        opara__graph_init(&m->graph, rt);
        return bench_synthetic_inception(m);
    }
#if BENCH_HAVE_IMPORT
    {
        opara_onnx_options options;
        opara_result r;
        memset(&options, 0, sizeof options);
        options.default_dim = default_dim;
        r = opara__onnx_import_file(rt, path, &options, NULL, &m->graph);
        if (r == OPARA_OK) r = opara__graph_finalize(&m->graph);
        m->imported = 1;
        return r;
    }
#else
    (void)default_dim;
    opara__graph_init(&m->graph, rt);
    return opara__fail(rt, OPARA_ERR_UNSUPPORTED,
                       "%s: this build has no ONNX importer (use synthetic:inception)", path);
#endif
}

static void bench_model_free(opara_runtime* rt, bench_model* m) {
    opara__graph_free(&m->graph);
    opara__free(rt, m->shapes);
}

/* ---- one simulation -------------------------------------------------------------------------- */

typedef struct bench_ctx {
    opara_runtime* rt;
    bench_model* model;
    opara__shape* shapes; /* at the current batch */
    uint64_t* value_bytes;
    opara__op_desc* descs;
    opara__metric metric;
    uint32_t stream_cap;
    const char** kept_names; /* op names of the kept result, in launch order */
} bench_ctx;

static opara_result bench_prepare(bench_ctx* c, const opara_sim_device* dev, int64_t batch) {
    opara__graph* g = &c->model->graph;
    opara__device limits;
    uint32_t v;
    int d;
#if BENCH_HAVE_IMPORT
    if (c->model->imported) {
        opara_result r = opara__infer_shapes(c->rt, g, batch, c->shapes);
        if (r != OPARA_OK) return r;
    }
#endif
    for (v = 0; !c->model->imported && v < g->n_values; ++v) {
        c->shapes[v] = c->model->shapes[v];
        for (d = 0; d < c->shapes[v].ndim; ++d)
            if (c->shapes[v].dims[d] == OPARA__DIM_BATCH) c->shapes[v].dims[d] = batch;
    }
    opara__sim_device_limits(dev, &limits);
    if (opara__value_bytes_from_shapes(g, c->shapes, c->value_bytes) != OPARA_OK) return OPARA_ERR_SHAPE;
    return opara__describe_ops(g, c->shapes, &limits, c->descs);
}

static opara_result bench_simulate(bench_ctx* c, const opara_sim_device* dev, const bench_variant* v, bench_row* row,
                                   opara_sim_result* keep) {
    int is_opara = v->strategy == OPARA_STRATEGY_OPARA || v->strategy == OPARA_STRATEGY_OPARA_TOPO;
    opara__plan_desc pd;
    opara__plan* plan = NULL;
    opara__device limits;
    opara_sim_result res;
    uint64_t t0;
    opara_result r;
    memset(&pd, 0, sizeof pd);
    pd.strategy = v->strategy;
    if (is_opara) {
        pd.metric = c->metric;
        pd.stream_cap = c->stream_cap;
    }
    opara__sim_device_limits(dev, &limits);
    t0 = opara__now_ns();
    r = opara__plan_create(&c->model->graph, c->value_bytes, c->descs, &limits, &pd, &plan);
    if (r != OPARA_OK) return r;
    row->plan_ms = (double)(opara__now_ns() - t0) * 1e-6;
    r = opara__sim_plan(c->rt, dev, v->mode, plan, c->descs, &res);
    if (r == OPARA_OK) {
        row->variant = v;
        row->latency_us = res.makespan_us;
        row->sm_busy = res.sm_busy;
        row->streams = plan->n_streams;
        row->events = plan->stats.n_events;
        row->peak_bytes = plan->arena_bytes;
        if (keep && (c->kept_names = (const char**)calloc(plan->n_nodes + 1, sizeof(char*))) != NULL) {
            uint32_t p;
            for (p = 0; p < plan->n_nodes; ++p) c->kept_names[p] = c->model->graph.nodes[plan->order[p]].name;
            *keep = res;
        } else {
            opara_sim_result_free(c->rt, &res);
        }
    }
    opara__plan_free(c->rt, plan);
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
                left + o->start_us * scale, top + lane * o->stream + 1, OPARA__MAX((o->end_us - o->start_us) * scale, 0.5),
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
    opara__metric metric;  /* Alg. 2's metric for the Opara variants (0: the scheduler's default) */
    uint32_t stream_cap;   /* Alg. 1's stream cap for the Opara variants (0: unlimited) */
    int64_t default_dim;   /* size of symbolic non-batch input dims (0: they are an error) */
} bench_args;

static int bench_parse_args(int argc, char** argv, bench_args* a) {
    int i;
    long long number;
    memset(a, 0, sizeof *a);
    snprintf(a->devices, sizeof a->devices, "rtx2080s");
    snprintf(a->batches, sizeof a->batches, "1");
    for (i = 1; i < argc; ++i) {
        const char* v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(argv[i], "--sim") == 0 && v) snprintf(a->devices, sizeof a->devices, "%s", argv[++i]);
        else if (strcmp(argv[i], "--batch") == 0 && v) snprintf(a->batches, sizeof a->batches, "%s", argv[++i]);
        else if (strcmp(argv[i], "--json") == 0 && v) a->json = argv[++i];
        else if (strcmp(argv[i], "--trace") == 0 && v) a->trace = argv[++i];
        else if (strcmp(argv[i], "--svg") == 0 && v) a->svg = argv[++i];
        else if (strcmp(argv[i], "--default-dim") == 0 && v) {
            if (!cli_int_arg("bench", argv[i], argv[i + 1], 0, INT32_MAX, &number)) return 0;
            a->default_dim = number;
            ++i;
        } else if (strcmp(argv[i], "--stream-cap") == 0 && v) {
            if (!cli_int_arg("bench", argv[i], argv[i + 1], 0, UINT32_MAX, &number)) return 0;
            a->stream_cap = (uint32_t)number;
            ++i;
        }
        else if (strcmp(argv[i], "--metric") == 0 && v && strcmp(v, "smem") == 0) a->metric = OPARA__METRIC_SMEM_FRAC, ++i;
        else if (strcmp(argv[i], "--metric") == 0 && v && strcmp(v, "dominant") == 0) a->metric = OPARA__METRIC_DOMINANT, ++i;
        else if (argv[i][0] != '-' && a->n_files < BENCH_MAX_FILES) a->files[a->n_files++] = argv[i];
        else {
            fprintf(stderr, "opara bench: unexpected argument '%s'\n", argv[i]);
            return 0;
        }
    }
    if (!a->n_files) fprintf(stderr, "usage: opara bench FILE... --sim DEVICE[,DEVICE] [--batch 1,2,4] [--json OUT] "
                                  "[--trace OUT] [--svg OUT]\n"
                                  "       [--metric smem|dominant] [--stream-cap N] [--default-dim N]\n");
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
    if (a->trace && (f = fopen(a->trace, "wb")) != NULL) {
        opara_sim_trace_write(res, names, bench_file_write, f);
        fclose(f);
    }
    if (a->svg && (f = fopen(a->svg, "wb")) != NULL) {
        bench_write_svg(f, res, title);
        fclose(f);
    }
}

static int bench_one(bench_ctx* c, const bench_args* a, const opara_sim_device* dev, int64_t batch, FILE* json,
                     int* first, int want_views) {
    bench_row rows[sizeof bench_variants / sizeof bench_variants[0]];
    size_t i, n = sizeof bench_variants / sizeof bench_variants[0];
    opara_sim_result keep;
    opara_result r = bench_prepare(c, dev, batch);
    if (r != OPARA_OK) {
        fprintf(stderr, "opara bench: %s: %s\n", c->model->name, opara_runtime_last_error(c->rt));
        return 0;
    }
    memset(&keep, 0, sizeof keep);
    for (i = 0; i < n; ++i) {
        int views = want_views && bench_variants[i].strategy == OPARA_STRATEGY_OPARA && bench_variants[i].mode == OPARA_SIM_GRAPH;
        r = bench_simulate(c, dev, &bench_variants[i], &rows[i], views ? &keep : NULL);
        if (r != OPARA_OK) {
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
    if (bench_load(rt, file, a->default_dim, &model) != OPARA_OK) {
        fprintf(stderr, "opara bench: %s\n", opara_runtime_last_error(rt));
        bench_model_free(rt, &model);
        return 0;
    }
    c.rt = rt;
    c.model = &model;
    c.metric = a->metric;
    c.stream_cap = a->stream_cap;
    c.shapes = (opara__shape*)calloc(model.graph.n_values + 1, sizeof *c.shapes);
    c.value_bytes = (uint64_t*)calloc(model.graph.n_values + 1, sizeof *c.value_bytes);
    c.descs = (opara__op_desc*)calloc(model.graph.n_nodes + 1, sizeof *c.descs);
    ok = c.shapes && c.value_bytes && c.descs;
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
    free(c.shapes);
    free(c.value_bytes);
    free(c.descs);
    bench_model_free(rt, &model);
    return ok;
}

static int cli_bench(int argc, char** argv) {
    bench_args a;
    opara_runtime* rt = NULL;
    FILE* json = NULL;
    int ok = 1, first = 1, views = 1, i;
    if (!bench_parse_args(argc, argv, &a)) return 2;
    if (opara_runtime_create(NULL, &rt) != OPARA_OK) return 1;
    if (a.json && !(json = fopen(a.json, "wb"))) fprintf(stderr, "opara bench: cannot write %s\n", a.json);
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
