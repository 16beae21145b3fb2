/* opara run FILE [--backend auto|cpu|cuda] [--strategy S] [--batch N] [--iters N] [--threads N]
                  [--builtin-gemm] [--memory-budget R] [--precision fp32|tf32] [--input NAME=FILE.npy]
                  [--output-dir DIR] [--trace OUT.json] [--profile] [--profile-json OUT.json]
   Runs a model (.onnx or .opara), prints the plan and latency statistics, writes the outputs as
   .npy and a Chrome-trace/Perfetto timeline of one run (one track per worker). Inputs not given
   with --input get deterministic pseudo-random values. CUDA: --profile makes the session profile the
   model at creation (a warm-up pass, then the median of several timed passes per op feeds Alg. 2)
   and prints the per-op table (kernel, grid, block, registers, shared memory, where the numbers
   came from, median time and its spread);
   --profile-json also writes it as JSON. --memory-budget R keeps the plan's arena within R times
   the sequential plan's (docs/SCHEDULING.md). --precision tf32 lets cuBLAS/cuDNN use TF32 tensor
   cores on compute capability 8.0+ (default fp32: exact). The plan lines say what ran where: GEMM
   and Conv paths, how many Conv ran on a library, the precision, the library workspaces and the packed weights. */

#define CLI_RUN_MAX_INPUTS 16

#include <errno.h>
#ifdef _WIN32
#include <direct.h>
static int cli_mkdir(const char* utf8) {
    wchar_t wide[4096];
    return tool_widen(utf8, wide, 4096) ? _wmkdir(wide) : -1;
}
#define CLI_MKDIR(p) cli_mkdir(p)
#else
#include <sys/stat.h>
#define CLI_MKDIR(p) mkdir((p), 0777)
#endif

/* mkdir -p: the output directory and its parents, when missing. */
static int cli_make_dirs(const char* dir) {
    char path[4096];
    size_t i, n = strlen(dir);
    if (n == 0 || n >= sizeof path) return 0;
    memcpy(path, dir, n + 1);
    for (i = 1; i <= n; ++i) {
        if (path[i] != '/' && path[i] != '\0') continue;
        path[i] = '\0';
        if (CLI_MKDIR(path) != 0 && errno != EEXIST) return 0;
        if (i < n) path[i] = '/';
    }
    return 1;
}


typedef struct cli_npy {
    opara_dtype dtype;
    int32_t rank;
    int64_t dims[OPARA_MAX_DIMS];
    void* data;
    size_t bytes;
} cli_npy;

static const char* cli_npy_descr(opara_dtype t) {
    switch (t) {
    case OPARA_DTYPE_F32: return "<f4";
    case OPARA_DTYPE_F64: return "<f8";
    case OPARA_DTYPE_F16: return "<f2";
    case OPARA_DTYPE_I64: return "<i8";
    case OPARA_DTYPE_I32: return "<i4";
    case OPARA_DTYPE_I8: return "|i1";
    case OPARA_DTYPE_U8: return "|u1";
    case OPARA_DTYPE_BOOL: return "|b1";
    default: return NULL;
    }
}

static int cli_npy_read(const char* path, cli_npy* out) {
    FILE* f = tool_fopen(path, "rb");
    unsigned char pre[10];
    char header[4096], *p;
    size_t hlen, count = 1;
    static const opara_dtype types[] = {OPARA_DTYPE_F32, OPARA_DTYPE_F64, OPARA_DTYPE_F16, OPARA_DTYPE_I64,
                                        OPARA_DTYPE_I32, OPARA_DTYPE_I8, OPARA_DTYPE_U8, OPARA_DTYPE_BOOL};
    size_t i;
    memset(out, 0, sizeof *out);
    if (!f) return 0;
    if (fread(pre, 1, 10, f) != 10 || memcmp(pre, "\x93NUMPY", 6) != 0 || pre[6] != 1) {
        fclose(f);
        return 0;
    }
    hlen = (size_t)pre[8] | (size_t)pre[9] << 8;
    if (hlen >= sizeof header || fread(header, 1, hlen, f) != hlen) {
        fclose(f);
        return 0;
    }
    header[hlen] = 0;
    if (strstr(header, "'fortran_order': True")) {
        fclose(f);
        return 0;
    }
    for (i = 0; i < sizeof types / sizeof types[0]; ++i) {
        char want[32];
        snprintf(want, sizeof want, "'descr': '%s'", cli_npy_descr(types[i]));
        if (strstr(header, want)) out->dtype = types[i];
    }
    p = strstr(header, "'shape': (");
    if (!out->dtype || !p) {
        fclose(f);
        return 0;
    }
    p += 10;
    while (*p && *p != ')') {
        char* end;
        long long d = strtoll(p, &end, 10);
        if (end == p) break;
        if (out->rank >= OPARA_MAX_DIMS || d < 0) {
            fclose(f);
            return 0;
        }
        out->dims[out->rank++] = d;
        count *= (size_t)d;
        p = end;
        while (*p == ',' || *p == ' ') ++p;
    }
    out->bytes = count * opara_dtype_size(out->dtype);
    out->data = malloc(out->bytes ? out->bytes : 1);
    if (!out->data || fread(out->data, 1, out->bytes, f) != out->bytes) {
        free(out->data);
        out->data = NULL;
        fclose(f);
        return 0;
    }
    fclose(f);
    return 1;
}

static int cli_npy_write(const char* path, opara_dtype dtype, int32_t rank, const int64_t* dims, const void* data,
                         size_t bytes) {
    char header[512], shape[256] = "";
    size_t n = 0, len, total;
    int32_t i;
    FILE* f;
    const char* descr = cli_npy_descr(dtype);
    if (!descr) return 0;
    for (i = 0; i < rank; ++i) n += (size_t)snprintf(shape + n, sizeof shape - n, "%lld,%s", (long long)dims[i], i + 1 < rank ? " " : "");
    if (rank > 1) shape[n - 1] = 0; /* numpy writes (2, 3) but (4,) */
    len = (size_t)snprintf(header, sizeof header, "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }", descr, shape);
    total = (10 + len + 1 + 63) / 64 * 64;
    while (10 + len + 1 < total) header[len++] = ' ';
    header[len++] = '\n';
    f = tool_fopen(path, "wb");
    if (!f) return 0;
    fwrite("\x93NUMPY\x01\x00", 1, 8, f);
    fputc((int)(len & 0xff), f);
    fputc((int)(len >> 8), f);
    fwrite(header, 1, len, f);
    fwrite(data, 1, bytes, f);
    return fclose(f) == 0;
}

static int cli_parse_strategy(const char* s, opara_strategy* out) {
    int i;
    for (i = 0; i < (int)OPARA_STRATEGY_COUNT; ++i)
        if (strcmp(s, opara_strategy_name((opara_strategy)i)) == 0) {
            *out = (opara_strategy)i;
            return 1;
        }
    return 0;
}

static int cli_cmp_u64(const void* a, const void* b) {
    uint64_t x = *(const uint64_t*)a, y = *(const uint64_t*)b;
    return x < y ? -1 : x > y;
}

static void cli_fill_random(opara_tensor* t, size_t count, uint32_t seed) {
    size_t i;
    for (i = 0; i < count; ++i) {
        seed = seed * 1664525u + 1013904223u;
        if (t->dtype == OPARA_DTYPE_F32) ((float*)t->data)[i] = (float)(seed >> 8) / 16777216.0f * 2.0f - 1.0f;
        else if (t->dtype == OPARA_DTYPE_F16) /* f16 bits: random sign, exponent 2^-5..2^-1, mantissa */
            ((uint16_t*)t->data)[i] = (uint16_t)(((seed >> 31) << 15) | ((10u + (seed >> 8) % 5u) << 10) | ((seed >> 12) & 0x3FFu));
        else if (t->dtype == OPARA_DTYPE_I64) ((int64_t*)t->data)[i] = 0;
        else if (t->dtype == OPARA_DTYPE_I32) ((int32_t*)t->data)[i] = 0;
    }
}

static int cli_write_trace(const char* path, const opara_model* m, opara_session* s) {
    uint32_t n = opara_session_get_node_times(s, NULL, 0), i;
    opara_node_time* t = (opara_node_time*)malloc((n ? n : 1) * sizeof *t);
    FILE* f = tool_fopen(path, "w");
    if (!t || !f) {
        free(t);
        if (f) fclose(f);
        return 0;
    }
    opara_session_get_node_times(s, t, n);
    fprintf(f, "{\"displayTimeUnit\": \"ns\", \"traceEvents\": [\n");
    for (i = 0; i < n; ++i) {
        const char* name = opara_model_node_name(m, t[i].node);
        fprintf(f, "  {\"name\": \"%s\", \"cat\": \"op\", \"ph\": \"X\", \"pid\": 1, \"tid\": %u, \"ts\": %.3f, \"dur\": %.3f, "
                   "\"args\": {\"node\": %u, \"name\": \"%s\"}},\n",
                opara_model_node_op(m, t[i].node), t[i].worker, (double)t[i].start_ns / 1000.0,
                (double)(t[i].end_ns - t[i].start_ns) / 1000.0, t[i].node, name ? name : "");
    }
    fprintf(f, "  {\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": 0, \"args\": {\"name\": \"worker 0 (caller)\"}}\n]}\n");
    free(t);
    return fclose(f) == 0;
}

static const char* cli_profile_source(opara_kernel_source source) {
    switch (source) {
    case OPARA_KERNEL_NONE: return "-";
    case OPARA_KERNEL_DRIVER: return "driver";
    case OPARA_KERNEL_ESTIMATE: return "estimate";
    case OPARA_KERNEL_CUPTI: return "cupti";
    case OPARA_KERNEL_COPY: return "copy";
    }
    return "-";
}

/* The CUDA profiler's rows of the session (opara_session_get_node_kernel), as a table and optionally JSON. */
static int cli_print_profile(const opara_model* m, const opara_session* s, const char* json_path) {
    opara_node_kernel row;
    uint32_t n, n_nodes = opara_model_node_count(m);
    FILE* f = NULL;
    if (n_nodes && opara_session_get_node_kernel(s, 0, &row) == OPARA_ERR_UNSUPPORTED) {
        fprintf(stderr, "opara run: --profile needs the CUDA backend (this session runs on the CPU)\n");
        return 0;
    }
    if (json_path && !(f = tool_fopen(json_path, "w"))) {
        fprintf(stderr, "opara run: cannot write %s\n", json_path);
        return 0;
    }
    printf("%5s  %-18s %-34s %16s %12s %5s %7s %-8s %10s %6s\n", "node", "op", "kernel", "grid", "block", "regs", "smem",
           "source", "time ms", "spread");
    if (f) fprintf(f, "{\"nodes\": [\n");
    for (n = 0; n < n_nodes; ++n) {
        const opara_node_kernel* r = &row;
        char grid[48], block[32], time[24], spread[24];
        const char* op = opara_model_node_op(m, n);
        int kernel;
        if (!op) op = "?";
        if (opara_session_get_node_kernel(s, n, &row) != OPARA_OK) memset(&row, 0, sizeof row);
        kernel = r->source == OPARA_KERNEL_DRIVER || r->source == OPARA_KERNEL_ESTIMATE || r->source == OPARA_KERNEL_CUPTI;
        snprintf(grid, sizeof grid, "%ux%ux%u", r->grid[0], r->grid[1], r->grid[2]);
        snprintf(block, sizeof block, "%ux%ux%u", r->block[0], r->block[1], r->block[2]);
        if (r->measured) snprintf(time, sizeof time, "%.4f", r->time_ms), snprintf(spread, sizeof spread, "%.0f%%", r->time_spread * 100);
        else snprintf(time, sizeof time, "-"), snprintf(spread, sizeof spread, "-");
        printf("%5u  %-18.18s %-34.34s %16s %12s %5u %7u %-8s %10s %6s\n", n, op,
               r->source ? r->kernel : "(no launch)", kernel ? grid : "-", kernel ? block : "-", r->regs,
               r->smem_static + r->smem_dynamic, cli_profile_source(r->source), time, spread);
        if (!f) continue;
        fprintf(f, "  {\"node\": %u, \"op\": \"%s\", \"name\": ", n, op);
        tool_json_string(f, opara_model_node_name(m, n) ? opara_model_node_name(m, n) : "");
        fprintf(f, ", \"kernel\": ");
        tool_json_string(f, r->kernel);
        fprintf(f, ", \"grid\": [%u, %u, %u], \"block\": [%u, %u, %u], \"regs\": %u, \"smem_static\": %u, "
                   "\"smem_dynamic\": %u, \"max_threads\": %u, \"source\": \"%s\", \"time_ms\": ",
                r->grid[0], r->grid[1], r->grid[2], r->block[0], r->block[1], r->block[2], r->regs, r->smem_static,
                r->smem_dynamic, r->max_threads, cli_profile_source(r->source));
        if (r->measured)
            fprintf(f, "%.6f, \"time_spread\": %.4f, \"runs\": %u}%s\n", r->time_ms, r->time_spread, (unsigned)r->n_runs,
                    n + 1 < n_nodes ? "," : "");
        else fprintf(f, "null, \"time_spread\": null, \"runs\": 0}%s\n", n + 1 < n_nodes ? "," : "");
    }
    if (f) {
        fprintf(f, "]}\n");
        if (fclose(f) != 0) return 0;
        printf("wrote %s\n", json_path);
    }
    return 1;
}

/* The --input NAME=FILE.npy specs: each must name an input of the session, at most once (a typo
   would otherwise run on random data). spec_of[k]: the spec that feeds input k, -1 for none. */
static int cli_match_inputs(const opara_session* s, const char* const* spec, int n_spec, int* spec_of) {
    uint32_t k, n = opara_session_input_count(s);
    opara_tensor_info ti;
    int j;
    for (k = 0; k < n; ++k) spec_of[k] = -1;
    for (j = 0; j < n_spec; ++j) {
        const char* eq = strchr(spec[j], '=');
        size_t name_len = eq ? (size_t)(eq - spec[j]) : 0;
        int hit = 0;
        if (!name_len || !eq[1]) {
            fprintf(stderr, "opara run: --input takes NAME=FILE.npy, not '%s'\n", spec[j]);
            return 0;
        }
        for (k = 0; k < n; ++k) {
            opara_session_input_info(s, k, &ti);
            if (strlen(ti.name) != name_len || strncmp(ti.name, spec[j], name_len) != 0) continue;
            if (spec_of[k] >= 0) {
                fprintf(stderr, "opara run: input '%s' is given twice\n", ti.name);
                return 0;
            }
            spec_of[k] = j;
            hit = 1;
        }
        if (!hit) {
            fprintf(stderr, "opara run: --input %.*s: the model has no input of that name; its inputs:", (int)name_len, spec[j]);
            for (k = 0; k < n; ++k) opara_session_input_info(s, k, &ti), fprintf(stderr, " %s", ti.name);
            fputc('\n', stderr);
            return 0;
        }
    }
    return 1;
}

static int cli_run(int argc, char** argv) {
    opara_runtime_desc rd;
    opara_runtime* rt = NULL;
    opara_model* m = NULL;
    opara_session* s = NULL;
    opara_session_desc d;
    opara_plan_info info;
    const char *file = NULL, *out_dir = NULL, *trace = NULL, *profile_json = NULL, *in_spec[CLI_RUN_MAX_INPUTS];
    int n_in_spec = 0, iters = 10, i, rc = 1, profile = 0, *spec_of = NULL, batch_given = 0;
    long long number;
    uint32_t n_inputs, n_outputs, k;
    opara_tensor* ins = NULL;
    uint64_t* lat = NULL;
    cli_npy npy[CLI_RUN_MAX_INPUTS];
    cli_onnx_args onnx;
    opara_onnx_options onnx_options;
    memset(&d, 0, sizeof d);
    memset(&onnx, 0, sizeof onnx);
    memset(npy, 0, sizeof npy);
    for (i = 1; i < argc; ++i) {
        const char* a = argv[i];
        const char* v = i + 1 < argc ? argv[i + 1] : NULL;
        int taken = cli_onnx_arg("run", argc, argv, &i, &onnx);
        if (taken < 0) return 2;
        if (taken) continue;
        if (strcmp(a, "--builtin-gemm") == 0) { d.builtin_gemm = 1; continue; }
        if (strcmp(a, "--profile") == 0) { profile = d.cuda_profile = 1; continue; }
        if (a[0] != '-') { file = a; continue; }
        if (!v) { fprintf(stderr, "opara run: %s needs a value\n", a); return 2; }
        ++i;
        if (strcmp(a, "--backend") == 0) {
            if (strcmp(v, "auto") == 0) d.backend = OPARA_BACKEND_AUTO;
            else if (strcmp(v, "cpu") == 0) d.backend = OPARA_BACKEND_CPU;
            else if (strcmp(v, "cuda") == 0) d.backend = OPARA_BACKEND_CUDA;
            else { fprintf(stderr, "opara run: unknown backend '%s'\n", v); return 2; }
        } else if (strcmp(a, "--strategy") == 0) {
            if (!cli_parse_strategy(v, &d.strategy)) { fprintf(stderr, "opara run: unknown strategy '%s'\n", v); return 2; }
        } else if (strcmp(a, "--batch") == 0) {
            if (!cli_int_arg("run", a, v, 1, INT32_MAX, &number)) return 2;
            d.batch_size = number;
            batch_given = 1;
        } else if (strcmp(a, "--iters") == 0) {
            if (!cli_int_arg("run", a, v, 1, INT32_MAX, &number)) return 2;
            iters = (int)number;
        } else if (strcmp(a, "--threads") == 0) {
            if (!cli_int_arg("run", a, v, 0, 4096, &number)) return 2;
            d.threads = (uint32_t)number;
        } else if (strcmp(a, "--memory-budget") == 0) {
            if (!cli_real_arg("run", a, v, 0, 1e6, &d.memory_budget)) return 2;
        } else if (strcmp(a, "--precision") == 0) {
            if (!cli_precision_arg("run", a, v, &d.precision)) return 2;
        } else if (strcmp(a, "--output-dir") == 0) out_dir = v;
        else if (strcmp(a, "--trace") == 0) trace = v;
        else if (strcmp(a, "--profile-json") == 0) profile_json = v, profile = d.cuda_profile = 1;
        else if (strcmp(a, "--input") == 0) {
            if (n_in_spec == CLI_RUN_MAX_INPUTS) {
                fprintf(stderr, "opara run: at most %d --input options\n", CLI_RUN_MAX_INPUTS);
                return 2;
            }
            in_spec[n_in_spec++] = v;
        }
        else { fprintf(stderr, "opara run: unknown option '%s'\n", a); return 2; }
    }
    if (!file) {
        fprintf(stderr, "usage: opara run FILE [--backend auto|cpu|cuda] [--strategy S] [--batch N] [--iters N] "
                        "[--threads N] [--shape NAME=d0,d1,...] [--default-dim N] [--builtin-gemm] [--memory-budget R] "
                        "[--precision fp32|tf32] [--input NAME=FILE.npy] [--output-dir DIR] "
                        "[--trace OUT.json] [--profile] [--profile-json OUT.json]\n");
        return 2;
    }
    memset(&rd, 0, sizeof rd);
    rd.logger.func = cli_log;
    rd.logger.max_level = OPARA_LOG_INFO;
    if (opara_runtime_create(&rd, &rt) != OPARA_OK) return 1;
    cli_caller_reports_errors = 1;
    if (!cli_onnx_args_fit("run", file, &onnx)) goto fail_quiet;
    onnx_options = cli_onnx_options(&onnx);
    if (cli_load_model(rt, file, &onnx_options, &m) != OPARA_OK) goto done;
    if (!cli_check_batch("run", m, d.batch_size, batch_given)) goto fail_quiet;
    if (opara_session_create(rt, m, &d, &s) != OPARA_OK) goto done;
    opara_session_get_plan_info(s, &info);
    printf("model %s: %u nodes, backend %s, strategy %s, %u streams, %u events, %u workers, GEMM %s\n", file,
           info.n_nodes, info.backend, info.strategy, info.n_streams, info.n_events, info.n_workers, info.gemm);
    printf("precision %s, Conv %s (%u of %u on a library)\n", info.precision, info.n_conv ? info.conv : "none",
           info.n_conv_library, info.n_conv);
    if (info.libraries[0]) printf("libraries: %s\nkernels: %s\n", info.libraries, info.kernels);
    printf("peak memory %.2f MiB (without reuse %.2f MiB), library workspaces %.2f MiB, packed weights %.2f MiB\n",
           (double)info.peak_memory_bytes / 1048576.0, (double)info.no_reuse_bytes / 1048576.0,
           (double)info.workspace_bytes / 1048576.0, (double)info.packed_weight_bytes / 1048576.0);
    if (profile && !cli_print_profile(m, s, profile_json)) goto done;
    n_inputs = opara_session_input_count(s);
    n_outputs = opara_session_output_count(s);
    ins = (opara_tensor*)calloc(n_inputs ? n_inputs : 1, sizeof *ins);
    spec_of = (int*)calloc(n_inputs ? n_inputs : 1, sizeof *spec_of);
    lat = (uint64_t*)calloc((size_t)iters, sizeof *lat);
    if (!ins || !spec_of || !lat || !cli_match_inputs(s, in_spec, n_in_spec, spec_of)) goto done;
    for (k = 0; k < n_inputs; ++k) {
        opara_tensor_info ti;
        size_t count = 1;
        int32_t j;
        opara_session_input_info(s, k, &ti);
        ins[k].name = ti.name;
        ins[k].dtype = ti.dtype;
        ins[k].rank = ti.rank;
        for (j = 0; j < ti.rank; ++j) {
            ins[k].dims[j] = ti.dims[j];
            count *= (size_t)ti.dims[j];
        }
        if (spec_of[k] >= 0) {
            const char* path = strchr(in_spec[spec_of[k]], '=') + 1;
            cli_npy* f = &npy[spec_of[k]];
            FILE* probe = tool_fopen(path, "rb");
            if (!probe) { /* say why: a missing file is not a malformed one */
                fprintf(stderr, "opara run: cannot read %s: %s\n", path, strerror(errno));
                goto done;
            }
            fclose(probe);
            if (!cli_npy_read(path, f)) {
                fprintf(stderr, "opara run: cannot read %s as .npy (C order, one of f4 f8 f2 i8 i4 i1 u1 b1)\n", path);
                goto done;
            }
            ins[k].dtype = f->dtype;
            ins[k].rank = f->rank;
            memcpy(ins[k].dims, f->dims, sizeof ins[k].dims);
            ins[k].data = f->data;
        } else {
            ins[k].data = calloc(count ? count : 1, opara_dtype_size(ti.dtype));
            if (!ins[k].data) goto done;
            cli_fill_random(&ins[k], count, 1234u + k);
        }
    }
    for (i = 0; i < iters; ++i) {
        uint64_t t0 = tool_now_ns();
        if (opara_session_run(s, ins, n_inputs, NULL, 0) != OPARA_OK) {
            fprintf(stderr, "opara run: %s\n", opara_session_last_error(s));
            goto done;
        }
        lat[i] = tool_now_ns() - t0;
    }
    {
        double mean = 0;
        qsort(lat, (size_t)iters, sizeof *lat, cli_cmp_u64);
        for (i = 0; i < iters; ++i) mean += (double)lat[i];
        mean /= iters;
        printf("latency over %d runs (ms): min %.3f  median %.3f  mean %.3f  p90 %.3f\n", iters, (double)lat[0] / 1e6,
               (double)lat[iters / 2] / 1e6, mean / 1e6, (double)lat[(size_t)((iters - 1) * 0.9 + 0.5)] / 1e6);
    }
    if (out_dir && !cli_make_dirs(out_dir)) {
        fprintf(stderr, "opara run: cannot create the output directory %s: %s\n", out_dir, strerror(errno));
        goto done;
    }
    if (out_dir) {
        for (k = 0; k < n_outputs; ++k) {
            opara_tensor_info ti;
            char path[4096], safe[256];
            size_t count = 1, j;
            int32_t q;
            opara_session_output_info(s, k, &ti);
            for (q = 0; q < ti.rank; ++q) count *= (size_t)ti.dims[q];
            snprintf(safe, sizeof safe, "%s", ti.name);
            for (j = 0; safe[j]; ++j)
                if (safe[j] == '/' || safe[j] == '\\' || safe[j] == ':') safe[j] = '_';
            snprintf(path, sizeof path, "%s/%s.npy", out_dir, safe);
            if (!cli_npy_write(path, ti.dtype, ti.rank, ti.dims, opara_session_output_data(s, k), count * opara_dtype_size(ti.dtype))) {
                fprintf(stderr, "opara run: cannot write %s\n", path);
                goto done;
            }
            printf("wrote %s\n", path);
        }
    }
    if (trace) {
        if (!cli_write_trace(trace, m, s)) {
            fprintf(stderr, "opara run: cannot write %s\n", trace);
            goto done;
        }
        printf("wrote %s (chrome://tracing or ui.perfetto.dev)\n", trace);
    }
    rc = 0;
done:
    if (rc && rt && !s) fprintf(stderr, "opara run: %s\n", opara_runtime_last_error(rt));
fail_quiet:
    cli_caller_reports_errors = 0; /* destroy calls log what they cannot return */
    for (k = 0; ins && spec_of && k < opara_session_input_count(s); ++k)
        if (spec_of[k] < 0) free(ins[k].data);
    for (i = 0; i < CLI_RUN_MAX_INPUTS; ++i) free(npy[i].data);
    free(ins);
    free(spec_of);
    free(lat);
    opara_session_destroy(s);
    opara_model_destroy(m);
    opara_runtime_destroy(rt);
    return rc;
}
