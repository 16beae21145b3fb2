/* opara plan FILE [--strategy opara|opara-topo|sequential|wavefront|nimble|all] [--batch N]
                   [--default-dim N] [--device NAME] [--memory-budget R] [--dot OUT.dot] [--json] [--verify]
   FILE is a .opara model or an .onnx file (--default-dim sizes its symbolic non-batch dims).
   Prints the execution plan: per op its launch position, stream, event and waits, then the
   totals; with `all`, one line of totals per strategy. --dot writes Graphviz (ops coloured by
   stream, data edges solid, event waits dashed), --json the whole plan as JSON on stdout.
   --memory-budget R keeps the arena within R times the sequential plan's (docs/SCHEDULING.md). */

typedef struct plan_cli {
    const char* path;
    const char* strategy;
    const char* device;
    const char* dot;
    long long batch, default_dim;
    double memory_budget;
    int json, verify, batch_given;
} plan_cli;

static int plan_parse_args(int argc, char** argv, plan_cli* o) {
    int i;
    memset(o, 0, sizeof *o);
    o->strategy = "opara";
    o->device = "rtx2080s";
    o->batch = 1;
    for (i = 1; i < argc; ++i) {
        const char* a = argv[i];
        int has_value = i + 1 < argc;
        if (strcmp(a, "--strategy") == 0 && has_value) o->strategy = argv[++i];
        else if (strcmp(a, "--device") == 0 && has_value) o->device = argv[++i];
        else if (strcmp(a, "--dot") == 0 && has_value) o->dot = argv[++i];
        else if (strcmp(a, "--batch") == 0 && has_value) {
            if (!cli_int_arg("plan", a, argv[++i], 1, INT32_MAX, &o->batch)) return 0;
            o->batch_given = 1;
        } else if (strcmp(a, "--default-dim") == 0 && has_value) {
            if (!cli_int_arg("plan", a, argv[++i], 0, INT32_MAX, &o->default_dim)) return 0;
        } else if (strcmp(a, "--memory-budget") == 0 && has_value) {
            if (!cli_real_arg("plan", a, argv[++i], 0, 1e6, &o->memory_budget)) return 0;
        }
        else if (strcmp(a, "--json") == 0) o->json = 1;
        else if (strcmp(a, "--verify") == 0) o->verify = 1;
        else if (a[0] != '-' && !o->path) o->path = a;
        else {
            fprintf(stderr, "plan: unknown or incomplete option '%s'\n", a);
            return 0;
        }
    }
    if (!o->path) fprintf(stderr, "usage: opara plan FILE [--strategy opara|opara-topo|sequential|wavefront|nimble|all] "
                                  "[--batch N] [--default-dim N] [--device NAME] [--memory-budget R] [--dot OUT.dot] "
                                  "[--json] [--verify]\n");
    return o->path != NULL;
}

static int plan_strategy_from_name(const char* name, opara_strategy* out) {
    int s;
    for (s = 0; s < OPARA_STRATEGY_COUNT; ++s)
        if (strcmp(name, opara_strategy_name((opara_strategy)s)) == 0) {
            *out = (opara_strategy)s;
            return 1;
        }
    return 0;
}

static const char* plan_node_name(const opara__graph* g, uint32_t n) {
    return g->nodes[n].name && g->nodes[n].name[0] ? g->nodes[n].name : "(unnamed)";
}

static void plan_print_totals(const opara__plan* p, const char* label) {
    printf("%-11s streams %4u  lanes %4u  events %4u  waits %4u  cross-edges %4u  forks %3u  joins %3u  peak %10llu B"
           "  (no reuse %10llu B)  plan %8.1f us\n",
           label, p->stats.n_streams, p->stats.n_lanes, p->stats.n_events, p->stats.n_waits, p->stats.n_cross_edges, p->stats.n_forks,
           p->stats.n_joins, (unsigned long long)p->stats.arena_bytes, (unsigned long long)p->stats.no_reuse_bytes,
           (double)p->stats.total_ns / 1000.0);
    if (p->stats.budget_bytes)
        printf("%-11s memory budget %llu B (%g x sequential): %s, %u memory waits\n", "",
               (unsigned long long)p->stats.budget_bytes, p->desc.memory_budget,
               p->stats.arena_bytes <= p->stats.budget_bytes ? "met" : "exceeded", p->stats.n_memory_waits);
}

static void plan_print_table(const opara__graph* g, const opara__plan* p) {
    uint32_t i, k;
    printf("%5s %-32s %-20s %6s %5s  %s\n", "order", "op", "type", "stream", "event", "waits on");
    for (i = 0; i < p->n_nodes; ++i) {
        uint32_t n = p->order[i];
        printf("%5u %-32.32s %-20s %6u %5s ", i, plan_node_name(g, n), opara__op_name(g->nodes[n].op), p->stream[n],
               p->records_event[n] ? "yes" : "");
        for (k = p->wait_start[n]; k < p->wait_start[n + 1]; ++k)
            printf(" %s(s%u)", plan_node_name(g, p->wait_nodes[k]), p->stream[p->wait_nodes[k]]);
        putchar('\n');
    }
}

static int plan_write_dot(const char* path, const opara__graph* g, const opara__plan* p) {
    FILE* f = fopen(path, "w");
    int ok;
    if (!f) {
        fprintf(stderr, "plan: cannot write %s\n", path);
        return 0;
    }
    ok = opara__plan_write_dot(f, g, p);
    return (fclose(f) == 0) & ok;
}

static void plan_print_json(const opara__graph* g, const opara__plan* p, int first) {
    uint32_t n, k;
    uint64_t live = p->stats.live_bytes; /* set by budgeted plans only */
    if (!live && opara__live_peak(g, p, p->order, &live) != OPARA_OK) live = 0;
    printf("%s{\"strategy\":\"%s\",\"streams\":%u,\"lanes\":%u,\"events\":%u,\"waits\":%u,\"cross_edges\":%u,\"forks\":%u,"
           "\"joins\":%u,\"pruned_waits\":%u,\"arena_bytes\":%llu,\"no_reuse_bytes\":%llu,\"inplace\":%u,"
           "\"concat_in_place\":%u,\"views\":%u,\"memory_waits\":%u,\"budget_bytes\":%llu,\"live_bytes\":%llu,"
           "\"plan_ns\":%llu,\"nodes\":[",
           first ? "" : ",", opara_strategy_name(p->desc.strategy), p->stats.n_streams, p->stats.n_lanes, p->stats.n_events,
           p->stats.n_waits, p->stats.n_cross_edges, p->stats.n_forks, p->stats.n_joins, p->stats.n_pruned_waits,
           (unsigned long long)p->stats.arena_bytes, (unsigned long long)p->stats.no_reuse_bytes, p->stats.n_inplace,
           p->stats.n_concat_in_place, p->stats.n_views, p->stats.n_memory_waits, (unsigned long long)p->stats.budget_bytes,
           (unsigned long long)live, (unsigned long long)p->stats.total_ns);
    for (n = 0; n < g->n_nodes; ++n) {
        printf("%s{\"name\":", n ? "," : "");
        opara__write_json_string(stdout, plan_node_name(g, n));
        printf(",\"op\":\"%s\",\"order\":%u,\"stream\":%u,\"lane\":%u,\"event\":%s,\"waits\":[",
               opara__op_name(g->nodes[n].op), p->position[n], p->stream[n], p->stream_lane[p->stream[n]],
               p->records_event[n] ? "true" : "false");
        for (k = p->wait_start[n]; k < p->wait_start[n + 1]; ++k) printf("%s%u", k > p->wait_start[n] ? "," : "", p->wait_nodes[k]);
        printf("]}");
    }
    printf("],\"values\":[");
    for (n = 0; n < g->n_values; ++n) {
        printf("%s{\"name\":", n ? "," : "");
        opara__write_json_string(stdout, g->values[n].name);
        printf(",\"bytes\":%llu,\"storage\":\"%s\"", (unsigned long long)p->value_bytes[n],
               p->storage[n] == OPARA__STORAGE_ARENA ? "arena" : p->storage[n] == OPARA__STORAGE_EXTERNAL ? "external" : "none");
        if (p->storage[n] == OPARA__STORAGE_ARENA) printf(",\"offset\":%llu", (unsigned long long)p->offset[n]);
        if (p->alias_kind[n]) printf(",\"alias_of\":%d,\"alias\":\"%s\"", p->alias_root[n],
                                     p->alias_kind[n] == OPARA__ALIAS_INPLACE ? "inplace" : p->alias_kind[n] == OPARA__ALIAS_CONCAT ? "concat" : "view");
        printf("}");
    }
    printf("]}");
}

static int plan_load(opara_runtime* rt, const char* path, int64_t default_dim, opara_model** model) {
    opara_onnx_options onnx;
    opara_result r;
    memset(&onnx, 0, sizeof onnx);
    onnx.default_dim = default_dim;
    r = cli_load_model(rt, path, &onnx, model);
    if (r != OPARA_OK) fprintf(stderr, "plan: %s: %s\n", path, opara_runtime_last_error(rt));
    return r == OPARA_OK;
}

static int plan_run(const plan_cli* o, opara_runtime* rt, const opara__graph* g, const opara__device* dev) {
    int s, first = 1, all = strcmp(o->strategy, "all") == 0, ok = 1;
    opara_strategy only = OPARA_STRATEGY_OPARA;
    if (!all && !plan_strategy_from_name(o->strategy, &only)) {
        fprintf(stderr, "plan: unknown strategy '%s'\n", o->strategy);
        return 0;
    }
    if (o->json) printf("{\"model\":");
    if (o->json) opara__write_json_string(stdout, o->path);
    if (o->json) printf(",\"batch\":%lld,\"device\":\"%s\",\"plans\":[", (long long)o->batch, dev->name);
    for (s = 0; s < OPARA_STRATEGY_COUNT; ++s) {
        opara__plan_desc d;
        opara__plan* p = NULL;
        if (!all && s != (int)only) continue;
        memset(&d, 0, sizeof d);
        d.strategy = (opara_strategy)s;
        d.verify = o->verify;
        d.memory_budget = o->memory_budget;
        if (opara__plan_graph(g, o->batch, dev, &d, &p, NULL, NULL) != OPARA_OK) {
            fprintf(stderr, "plan: %s: %s\n", opara_strategy_name((opara_strategy)s), opara_runtime_last_error(rt));
            ok = 0;
            continue;
        }
        if (o->json) plan_print_json(g, p, first);
        else if (!all) plan_print_table(g, p);
        if (!o->json) plan_print_totals(p, opara_strategy_name((opara_strategy)s));
        if (o->verify && !o->json) printf("%-11s verified: every dependency enforced, no unordered overlapping access\n", "");
        if (o->dot && (!all || s == OPARA_STRATEGY_OPARA)) ok &= plan_write_dot(o->dot, g, p);
        first = 0;
        opara__plan_free(rt, p);
    }
    if (o->json) printf("]}\n");
    return ok;
}

static int cli_plan(int argc, char** argv) {
    plan_cli o;
    opara_runtime* rt = NULL;
    opara_model* model = NULL;
    const opara__device* dev;
    int ok;
    if (!plan_parse_args(argc, argv, &o)) return 2;
    dev = opara__device_preset(o.device);
    if (!dev) {
        fprintf(stderr, "plan: unknown device '%s' (rtx2080s, v100, a100, h100, orin)\n", o.device);
        return 2;
    }
    if (opara_runtime_create(NULL, &rt) != OPARA_OK) return 1;
    ok = plan_load(rt, o.path, o.default_dim, &model) && cli_check_batch("plan", model, o.batch, o.batch_given) &&
         plan_run(&o, rt, opara__model_graph(model), dev);
    opara_model_destroy(model);
    opara_runtime_destroy(rt);
    return ok ? 0 : 1;
}
