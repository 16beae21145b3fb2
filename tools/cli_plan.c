/* opara plan FILE [--strategy opara|opara-topo|sequential|wavefront|nimble|all] [--batch N]
                   [--shape NAME=d0,...] [--default-dim N] [--device NAME] [--memory-budget R] [--dot OUT.dot]
                   [--json] [--verify]
   FILE is a .opara model or an .onnx file (--shape and --default-dim size its symbolic dims).
   Prints the execution plan: per op its launch position, stream, event and waits, then the
   totals; with `all`, one line of totals per strategy. --dot writes Graphviz (ops coloured by
   stream, data edges solid, event waits dashed), --json the whole plan as JSON on stdout.
   --memory-budget R keeps the arena within R times the sequential plan's (docs/SCHEDULING.md). */

typedef struct plan_cli {
    const char* path;
    const char* strategy;
    const char* device;
    const char* dot;
    long long batch;
    cli_onnx_args onnx;
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
        int taken = cli_onnx_arg("plan", argc, argv, &i, &o->onnx);
        if (taken < 0) return 0;
        if (taken) continue;
        if (strcmp(a, "--strategy") == 0 && has_value) o->strategy = argv[++i];
        else if (strcmp(a, "--device") == 0 && has_value) o->device = argv[++i];
        else if (strcmp(a, "--dot") == 0 && has_value) o->dot = argv[++i];
        else if (strcmp(a, "--batch") == 0 && has_value) {
            if (!cli_int_arg("plan", a, argv[++i], 1, INT32_MAX, &o->batch)) return 0;
            o->batch_given = 1;
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
                                  "[--batch N] [--shape NAME=d0,d1,...] [--default-dim N] [--device NAME] [--memory-budget R] [--dot OUT.dot] "
                                  "[--json] [--verify]\n");
    return o->path != NULL && cli_onnx_args_fit("plan", o->path, &o->onnx);
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

static const char* plan_node_name(const opara_plan* p, uint32_t n) {
    opara_plan_node nd;
    return opara_plan_get_node(p, n, &nd) == OPARA_OK && nd.name[0] ? nd.name : "(unnamed)";
}

static void plan_print_totals(const opara_plan* p, const char* label) {
    opara_plan_stats st;
    opara_plan_get_stats(p, &st);
    printf("%-11s streams %4u  lanes %4u  events %4u  waits %4u  cross-edges %4u  forks %3u  joins %3u  peak %10llu B"
           "  (no reuse %10llu B)  plan %8.1f us\n",
           label, st.n_streams, st.n_lanes, st.n_events, st.n_waits, st.n_cross_edges, st.n_forks, st.n_joins,
           (unsigned long long)st.arena_bytes, (unsigned long long)st.no_reuse_bytes, (double)st.plan_ns / 1000.0);
    if (st.budget_bytes)
        printf("%-11s memory budget %llu B (%g x sequential): %s, %u memory waits\n", "",
               (unsigned long long)st.budget_bytes, st.memory_budget,
               st.arena_bytes <= st.budget_bytes ? "met" : "exceeded", st.n_memory_waits);
}

static void plan_print_table(const opara_plan* p) {
    uint32_t i, k, n, w;
    opara_plan_node nd, wd;
    printf("%5s %-32s %-20s %6s %5s  %s\n", "order", "op", "type", "stream", "event", "waits on");
    for (i = 0; i < opara_plan_node_count(p); ++i) {
        if (opara_plan_node_at(p, i, &n) != OPARA_OK || opara_plan_get_node(p, n, &nd) != OPARA_OK) continue;
        printf("%5u %-32.32s %-20s %6u %5s ", i, plan_node_name(p, n), nd.op, nd.stream, nd.records_event ? "yes" : "");
        for (k = 0; k < nd.n_waits; ++k)
            if (opara_plan_node_wait(p, n, k, &w) == OPARA_OK && opara_plan_get_node(p, w, &wd) == OPARA_OK)
                printf(" %s(s%u)", plan_node_name(p, w), wd.stream);
        putchar('\n');
    }
}

static int plan_write_dot(const char* path, const opara_plan* p) {
    if (opara_plan_write_dot(p, path) == OPARA_OK) return 1;
    fprintf(stderr, "plan: cannot write %s\n", path);
    return 0;
}

static const char* plan_storage_name(opara_storage s) {
    switch (s) {
    case OPARA_STORAGE_NONE: return "none";
    case OPARA_STORAGE_ARENA: return "arena";
    case OPARA_STORAGE_EXTERNAL: return "external";
    }
    return "none";
}

static const char* plan_alias_name(opara_alias a) {
    switch (a) {
    case OPARA_ALIAS_NONE: return "none";
    case OPARA_ALIAS_INPLACE: return "inplace";
    case OPARA_ALIAS_CONCAT: return "concat";
    case OPARA_ALIAS_VIEW: return "view";
    }
    return "none";
}

static void plan_print_json_nodes(const opara_plan* p) {
    uint32_t n, k, w;
    opara_plan_node nd;
    for (n = 0; n < opara_plan_node_count(p); ++n) {
        if (opara_plan_get_node(p, n, &nd) != OPARA_OK) continue;
        printf("%s{\"name\":", n ? "," : "");
        tool_json_string(stdout, plan_node_name(p, n));
        printf(",\"op\":\"%s\",\"order\":%u,\"stream\":%u,\"lane\":%u,\"event\":%s,\"waits\":[", nd.op, nd.order, nd.stream,
               nd.lane, nd.records_event ? "true" : "false");
        for (k = 0; k < nd.n_waits; ++k)
            if (opara_plan_node_wait(p, n, k, &w) == OPARA_OK) printf("%s%u", k ? "," : "", w);
        printf("]}");
    }
}

static void plan_print_json_values(const opara_plan* p) {
    uint32_t v;
    opara_plan_tensor t;
    for (v = 0; v < opara_plan_tensor_count(p); ++v) {
        if (opara_plan_get_tensor(p, v, &t) != OPARA_OK) continue;
        printf("%s{\"name\":", v ? "," : "");
        tool_json_string(stdout, t.name);
        printf(",\"bytes\":%llu,\"storage\":\"%s\"", (unsigned long long)t.bytes, plan_storage_name(t.storage));
        if (t.storage == OPARA_STORAGE_ARENA) printf(",\"offset\":%llu", (unsigned long long)t.offset);
        if (t.alias != OPARA_ALIAS_NONE) printf(",\"alias_of\":%d,\"alias\":\"%s\"", t.alias_root, plan_alias_name(t.alias));
        printf("}");
    }
}

static void plan_print_json(const opara_plan* p, int first) {
    opara_plan_stats st;
    opara_plan_get_stats(p, &st);
    printf("%s{\"strategy\":\"%s\",\"streams\":%u,\"lanes\":%u,\"events\":%u,\"waits\":%u,\"cross_edges\":%u,\"forks\":%u,"
           "\"joins\":%u,\"pruned_waits\":%u,\"arena_bytes\":%llu,\"no_reuse_bytes\":%llu,\"inplace\":%u,"
           "\"concat_in_place\":%u,\"views\":%u,\"memory_waits\":%u,\"budget_bytes\":%llu,\"live_bytes\":%llu,"
           "\"plan_ns\":%llu,\"nodes\":[",
           first ? "" : ",", opara_strategy_name(st.strategy), st.n_streams, st.n_lanes, st.n_events, st.n_waits,
           st.n_cross_edges, st.n_forks, st.n_joins, st.n_pruned_waits, (unsigned long long)st.arena_bytes,
           (unsigned long long)st.no_reuse_bytes, st.n_inplace, st.n_concat_in_place, st.n_views, st.n_memory_waits,
           (unsigned long long)st.budget_bytes, (unsigned long long)st.live_bytes, (unsigned long long)st.plan_ns);
    plan_print_json_nodes(p);
    printf("],\"values\":[");
    plan_print_json_values(p);
    printf("]}");
}

static int plan_load(opara_runtime* rt, const char* path, const cli_onnx_args* a, opara_model** model) {
    opara_onnx_options onnx = cli_onnx_options(a);
    opara_result r = cli_load_model(rt, path, &onnx, model);
    if (r != OPARA_OK) fprintf(stderr, "plan: %s: %s\n", path, opara_runtime_last_error(rt));
    return r == OPARA_OK;
}

static int plan_run(const plan_cli* o, opara_runtime* rt, const opara_model* model, const opara_sim_device* dev) {
    int s, first = 1, all = strcmp(o->strategy, "all") == 0, ok = 1;
    opara_strategy only = OPARA_STRATEGY_OPARA;
    if (!all && !plan_strategy_from_name(o->strategy, &only)) {
        fprintf(stderr, "plan: unknown strategy '%s'\n", o->strategy);
        return 0;
    }
    if (o->json) printf("{\"model\":");
    if (o->json) tool_json_string(stdout, o->path);
    if (o->json) printf(",\"batch\":%lld,\"device\":\"%s\",\"plans\":[", (long long)o->batch, dev->name);
    for (s = 0; s < OPARA_STRATEGY_COUNT; ++s) {
        opara_plan_desc d;
        opara_plan* p = NULL;
        if (!all && s != (int)only) continue;
        memset(&d, 0, sizeof d);
        d.strategy = (opara_strategy)s;
        d.batch_size = o->batch;
        d.device = dev;
        d.verify = o->verify;
        d.memory_budget = o->memory_budget;
        if (opara_plan_create(model, &d, &p) != OPARA_OK) {
            fprintf(stderr, "plan: %s: %s\n", opara_strategy_name((opara_strategy)s), opara_runtime_last_error(rt));
            ok = 0;
            continue;
        }
        if (o->json) plan_print_json(p, first);
        else if (!all) plan_print_table(p);
        if (!o->json) plan_print_totals(p, opara_strategy_name((opara_strategy)s));
        if (o->verify && !o->json) printf("%-11s verified: every dependency enforced, no unordered overlapping access\n", "");
        if (o->dot && (!all || s == OPARA_STRATEGY_OPARA)) ok &= plan_write_dot(o->dot, p);
        first = 0;
        opara_plan_destroy(p);
    }
    if (o->json) printf("]}\n");
    return ok;
}

static int cli_plan(int argc, char** argv) {
    plan_cli o;
    opara_runtime* rt = NULL;
    opara_model* model = NULL;
    opara_sim_device dev;
    int ok;
    if (!plan_parse_args(argc, argv, &o)) return 2;
    if (opara_sim_device_preset(o.device, &dev) != OPARA_OK) {
        fprintf(stderr, "plan: unknown device '%s' (rtx2080s, v100, a100, h100, orin)\n", o.device);
        return 2;
    }
    if (opara_runtime_create(NULL, &rt) != OPARA_OK) return 1;
    ok = plan_load(rt, o.path, &o.onnx, &model) && cli_check_batch("plan", model, o.batch, o.batch_given) &&
         plan_run(&o, rt, model, &dev);
    opara_model_destroy(model);
    opara_runtime_destroy(rt);
    return ok ? 0 : 1;
}
