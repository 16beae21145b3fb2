/* opara info FILE [--json]: what a model holds and how much parallelism its DAG offers.

   The width is the size of a maximum antichain of the operator DAG (the most operators that can
   run at the same time), computed exactly: by Dilworth's theorem it equals the minimum number of
   chains covering the DAG's transitive closure, which is n minus a maximum bipartite matching
   (Hopcroft-Karp) on the closure (opara_model_max_width). */

#define CLI_INFO_MAX_WIDTH_NODES 20000u

typedef struct cli_op_count {
    const char* op;
    uint32_t count;
} cli_op_count;

/* Counts per operator type, sorted by count (descending) then name. */
static uint32_t cli_info_op_counts(const opara_model* m, cli_op_count* counts) {
    uint32_t n = 0, i, j;
    for (i = 0; i < opara_model_node_count(m); ++i) {
        const char* op = opara_model_node_op(m, i);
        for (j = 0; j < n && strcmp(counts[j].op, op) != 0; ++j) {}
        if (j == n) counts[n].op = op, counts[n++].count = 0;
        counts[j].count++;
    }
    for (i = 1; i < n; ++i)
        for (j = i; j > 0 && (counts[j].count > counts[j - 1].count ||
                              (counts[j].count == counts[j - 1].count && strcmp(counts[j].op, counts[j - 1].op) < 0));
             --j) {
            cli_op_count t = counts[j];
            counts[j] = counts[j - 1];
            counts[j - 1] = t;
        }
    return n;
}

static void cli_info_dims(FILE* out, const opara_tensor_info* t, int json) {
    int32_t k;
    fputc('[', out);
    for (k = 0; k < t->rank; ++k) {
        if (k) fputs(", ", out);
        if (t->dims[k] == OPARA_DIM_BATCH) fputs(json ? "\"N\"" : "N", out);
        else fprintf(out, "%lld", (long long)t->dims[k]);
    }
    fputc(']', out);
}

/* Output shapes are not declared in the file: show them inferred at batch 1 (the plan's shapes) with
   N marking nothing (the batch dim is only known per session). */
static void cli_info_output(const opara_model* m, const opara_plan* plan, uint32_t i, opara_tensor_info* t) {
    opara_plan_tensor pt;
    uint32_t v;
    int32_t k;
    opara_model_output_info(m, i, t);
    for (v = 0; t->rank < 0 && plan && v < opara_plan_tensor_count(plan); ++v) {
        if (opara_plan_get_tensor(plan, v, &pt) != OPARA_OK || strcmp(pt.name, t->name) != 0) continue;
        t->rank = pt.rank;
        for (k = 0; k < t->rank; ++k) t->dims[k] = pt.dims[k];
    }
}

static void cli_info_tensors(FILE* out, const opara_model* m, const opara_plan* plan, int outputs, int json) {
    uint32_t i, n = outputs ? opara_model_output_count(m) : opara_model_input_count(m);
    for (i = 0; i < n; ++i) {
        opara_tensor_info t;
        if (outputs) cli_info_output(m, plan, i, &t);
        else opara_model_input_info(m, i, &t);
        if (json) {
            fprintf(out, "%s{\"name\": ", i ? ", " : "");
            tool_json_string(out, t.name);
            fprintf(out, ", \"dtype\": \"%s\", \"shape\": ", opara_dtype_name(t.dtype));
            cli_info_dims(out, &t, 1);
            fputc('}', out);
        } else {
            fprintf(out, "  %-24s %-5s ", t.name, opara_dtype_name(t.dtype));
            cli_info_dims(out, &t, 0);
            fputs(outputs ? "  (at batch 1)\n" : "\n", out);
        }
    }
}

/* Elements of the constants (weights) per dtype, from the plan's tensors: "f32 1234, i64 4" (text) or
   {"f32": 1234, "i64": 4} (JSON). An ONNX model's f16 weights show as f32: the import widens them
   (docs/ARCHITECTURE.md, "f16 models"). */
static void cli_info_weights(FILE* out, const opara_plan* plan, int json) {
    static const opara_dtype types[] = {OPARA_DTYPE_F32, OPARA_DTYPE_F16, OPARA_DTYPE_F64, OPARA_DTYPE_I64,
                                        OPARA_DTYPE_I32, OPARA_DTYPE_I8, OPARA_DTYPE_U8, OPARA_DTYPE_BOOL};
    unsigned long long elems[sizeof types / sizeof types[0]] = {0};
    size_t k, shown = 0;
    uint32_t v;
    for (v = 0; plan && v < opara_plan_tensor_count(plan); ++v) {
        opara_plan_tensor pt;
        unsigned long long n = 1;
        int32_t d;
        if (opara_plan_get_tensor(plan, v, &pt) != OPARA_OK || !pt.is_constant || pt.rank < 0) continue;
        for (d = 0; d < pt.rank; ++d) n *= (unsigned long long)pt.dims[d];
        for (k = 0; k < sizeof types / sizeof types[0]; ++k)
            if (types[k] == pt.dtype) elems[k] += n;
    }
    fputs(json ? "{" : "", out);
    for (k = 0; k < sizeof types / sizeof types[0]; ++k) {
        if (!elems[k]) continue;
        if (json) fprintf(out, "%s\"%s\": %llu", shown++ ? ", " : "", opara_dtype_name(types[k]), elems[k]);
        else fprintf(out, "%s%s %llu", shown++ ? ", " : "", opara_dtype_name(types[k]), elems[k]);
    }
    fputs(json ? "}" : shown ? "\n" : "none\n", out);
}

static int cli_info_load(opara_runtime* rt, const char* path, const cli_onnx_args* a, opara_model** m) {
    opara_onnx_options o = cli_onnx_options(a);
    opara_result r = cli_load_model(rt, path, &o, m);
    if (r == OPARA_OK) return 0;
    fprintf(stderr, "opara info: %s: %s\n  %s\n", path, opara_result_string(r), opara_runtime_last_error(rt));
    return 1;
}

static int cli_info_usage(void) {
    fprintf(stderr, "usage: opara info FILE [--json] [--shape NAME=d0,d1,...]... [--default-dim N]\n");
    return 2;
}

static int cli_info(int argc, char** argv) {
    const char* path = NULL;
    int json = 0, i;
    opara_runtime* rt = NULL;
    opara_model* m = NULL;
    opara_model_stats st;
    cli_op_count* counts;
    opara_plan* plan = NULL;
    uint32_t n_ops, width = 0;
    int have_width = 0, rc, onnx;
    cli_onnx_args onnx_args;
    memset(&onnx_args, 0, sizeof onnx_args);
    for (i = 1; i < argc; ++i) {
        int taken = cli_onnx_arg("info", argc, argv, &i, &onnx_args);
        if (taken < 0) return 2;
        if (taken) continue;
        if (strcmp(argv[i], "--json") == 0) json = 1;
        else if (!path && argv[i][0] != '-') path = argv[i];
        else return cli_info_usage();
    }
    if (!path) return cli_info_usage();
    if (!cli_onnx_args_fit("info", path, &onnx_args)) return 2;
    if (opara_runtime_create(NULL, &rt) != OPARA_OK) return 1;
    rc = cli_info_load(rt, path, &onnx_args, &m);
    if (rc) {
        opara_runtime_destroy(rt);
        return rc;
    }
    opara_model_get_stats(m, &st);
    onnx = !cli_is_opara(path);
    counts = (cli_op_count*)calloc(st.n_nodes + 1, sizeof *counts);
    n_ops = counts ? cli_info_op_counts(m, counts) : 0;
    if (opara_plan_create(m, NULL, &plan) != OPARA_OK) plan = NULL; /* shapes unknown: outputs show what is declared */
    have_width = opara_model_max_width(m, CLI_INFO_MAX_WIDTH_NODES, &width) == OPARA_OK;
    if (json) {
        printf("{\"file\": ");
        tool_json_string(stdout, path);
        if (onnx) printf(", \"format\": \"onnx\", \"bytes\": %lld, \"content_hash\": null, \"producer\": ", cli_file_size(path));
        else
            printf(", \"format\": \"opara\", \"bytes\": %llu, \"content_hash\": \"%016llx\", \"producer\": ",
                   (unsigned long long)st.file_bytes, (unsigned long long)st.content_hash);
        tool_json_string(stdout, st.producer);
        printf(", \"source_opset\": %lld,\n", (long long)st.source_opset);
        printf(" \"nodes\": %u, \"tensors\": %u, \"constants\": %u, \"parameters\": %llu, \"parameter_bytes\": %llu,\n",
               st.n_nodes, st.n_tensors, st.n_constants, (unsigned long long)st.n_params, (unsigned long long)st.param_bytes);
        if (have_width) printf(" \"max_width\": %u,\n", width);
        else printf(" \"max_width\": null,\n");
        printf(" \"weights\": ");
        if (plan) cli_info_weights(stdout, plan, 1);
        else printf("null");
        printf(",\n");
        printf(" \"inputs\": [");
        cli_info_tensors(stdout, m, plan, 0, 1);
        printf("],\n \"outputs\": [");
        cli_info_tensors(stdout, m, plan, 1, 1);
        printf("],\n \"ops\": {");
        for (i = 0; i < (int)n_ops; ++i) printf("%s\"%s\": %u", i ? ", " : "", counts[i].op, counts[i].count);
        printf("}}\n");
    } else {
        /* An .onnx file is converted in memory: there is no .opara image, so no image hash to show. */
        if (onnx) printf("%s: ONNX, %lld bytes (converted in memory; `opara convert` makes a .opara with a hash)\n", path,
                         cli_file_size(path));
        else
            printf("%s: %llu bytes, hash %016llx%s\n", path, (unsigned long long)st.file_bytes,
                   (unsigned long long)st.content_hash, st.zero_copy ? ", weights mapped in place" : "");
        if (st.producer[0] || st.source_opset) printf("producer: %s, source opset %lld\n", st.producer, (long long)st.source_opset);
        printf("nodes: %u, tensors: %u\nparameters: %llu in %u constants (%llu bytes)\n", st.n_nodes, st.n_tensors,
               (unsigned long long)st.n_params, st.n_constants, (unsigned long long)st.param_bytes);
        if (plan) {
            printf("weights by dtype (elements): ");
            cli_info_weights(stdout, plan, 0);
        }
        if (have_width) printf("max width: %u (largest set of mutually independent operators, exact)\n", width);
        else printf("max width: not computed (%u nodes)\n", st.n_nodes);
        printf("inputs:\n");
        cli_info_tensors(stdout, m, plan, 0, 0);
        printf("outputs:\n");
        cli_info_tensors(stdout, m, plan, 1, 0);
        printf("operators:\n");
        for (i = 0; i < (int)n_ops; ++i) printf("  %-22s %u\n", counts[i].op, counts[i].count);
    }
    free(counts);
    opara_plan_destroy(plan);
    opara_model_destroy(m);
    opara_runtime_destroy(rt);
    return 0;
}
