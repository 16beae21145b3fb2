/* bench_cpu: per model (.onnx or .opara), batch 1 and 8, the same thread count: median latency
   of the sequential plan vs the Opara plan on the CPU backend. Writes JSON.
   usage: bench_cpu [--out FILE.json] [--iters N] [--threads N] [--batches 1,8] MODEL... */
#define OPARA_IMPLEMENTATION
#include "../opara.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int bench_cmp(const void* a, const void* b) {
    uint64_t x = *(const uint64_t*)a, y = *(const uint64_t*)b;
    return x < y ? -1 : x > y;
}

/* Median latency in ns of `iters` runs after one warm-up; 0 on failure (reason on stderr). */
static uint64_t bench_one(opara_runtime* rt, const opara_model* m, opara_strategy st, int64_t batch, uint32_t threads,
                          int iters, uint32_t* streams) {
    opara_session_desc d;
    opara_session* s = NULL;
    opara_tensor* ins;
    opara_plan_info info;
    uint64_t* lat, med = 0;
    uint32_t n, k;
    int i, ok = 1;
    memset(&d, 0, sizeof d);
    d.backend = OPARA_BACKEND_CPU;
    d.strategy = st;
    d.batch_size = batch;
    d.threads = threads;
    if (opara_session_create(rt, m, &d, &s) != OPARA_OK) {
        fprintf(stderr, "bench_cpu: %s\n", opara_runtime_last_error(rt));
        return 0;
    }
    opara_session_get_plan_info(s, &info);
    *streams = info.n_streams;
    n = opara_session_input_count(s);
    ins = (opara_tensor*)calloc(n ? n : 1, sizeof *ins);
    lat = (uint64_t*)calloc((size_t)iters, sizeof *lat);
    for (k = 0; ins && k < n; ++k) {
        opara_tensor_info ti;
        size_t count = 1;
        int32_t j;
        opara_session_input_info(s, k, &ti);
        ins[k].name = ti.name;
        ins[k].dtype = ti.dtype;
        ins[k].rank = ti.rank;
        for (j = 0; j < ti.rank; ++j) count *= (size_t)(ins[k].dims[j] = ti.dims[j]);
        ins[k].data = calloc(count ? count : 1, opara_dtype_size(ti.dtype)); /* zeros: valid for index inputs too */
        if (!ins[k].data) ok = 0;
    }
    if (!ins || !lat) ok = 0;
    for (i = -1; ok && i < iters; ++i) {
        uint64_t t0 = opara__now_ns();
        if (opara_session_run(s, ins, n, NULL, 0) != OPARA_OK) {
            fprintf(stderr, "bench_cpu: %s\n", opara_session_last_error(s));
            ok = 0;
        }
        if (i >= 0) lat[i] = opara__now_ns() - t0;
    }
    if (ok) {
        qsort(lat, (size_t)iters, sizeof *lat, bench_cmp);
        med = lat[iters / 2];
    }
    for (k = 0; ins && k < n; ++k) free(ins[k].data);
    free(ins);
    free(lat);
    opara_session_destroy(s);
    return med;
}

int main(int argc, char** argv) {
    const char* out_path = "build/bench/cpu.json";
    int iters = 10, i, first = 1;
    uint32_t threads = 0;
    int64_t batches[2] = {1, 8};
    opara_runtime* rt;
    FILE* out;
    for (i = 1; i < argc && argv[i][0] == '-'; i += 2) {
        if (i + 1 >= argc) return 2;
        if (strcmp(argv[i], "--out") == 0) out_path = argv[i + 1];
        else if (strcmp(argv[i], "--iters") == 0) iters = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--threads") == 0) threads = (uint32_t)atoi(argv[i + 1]);
        else return 2;
    }
    if (iters < 1) iters = 1;
    if (!threads) threads = (uint32_t)opara__cpu_count();
    if (opara_runtime_create(NULL, &rt) != OPARA_OK) return 1;
    out = fopen(out_path, "w");
    if (!out) {
        fprintf(stderr, "bench_cpu: cannot write %s\n", out_path);
        return 1;
    }
    fprintf(out, "{\"threads\": %u, \"iters\": %d, \"results\": [\n", threads, iters);
    for (; i < argc; ++i) {
        opara_model* m = NULL;
        size_t len = strlen(argv[i]);
        int b;
        opara_result r = len > 5 && strcmp(argv[i] + len - 5, ".onnx") == 0 ? opara_model_load_onnx_file(rt, argv[i], NULL, &m)
                                                                              : opara_model_load_file(rt, argv[i], &m);
        if (r != OPARA_OK) {
            fprintf(stderr, "bench_cpu: %s: %s\n", argv[i], opara_runtime_last_error(rt));
            continue;
        }
        for (b = 0; b < 2; ++b) {
            uint32_t s_seq = 0, s_op = 0;
            uint64_t seq = bench_one(rt, m, OPARA_STRATEGY_SEQUENTIAL, batches[b], threads, iters, &s_seq);
            uint64_t opa = bench_one(rt, m, OPARA_STRATEGY_OPARA, batches[b], threads, iters, &s_op);
            printf("%-40s batch %2lld  sequential %9.3f ms  opara %9.3f ms (%u streams)  speedup %.2fx\n", argv[i],
                   (long long)batches[b], (double)seq / 1e6, (double)opa / 1e6, s_op, opa ? (double)seq / (double)opa : 0.0);
            fprintf(out, "%s  {\"model\": \"%s\", \"batch\": %lld, \"sequential_ms\": %.4f, \"opara_ms\": %.4f, \"opara_streams\": %u}",
                    first ? "" : ",\n", argv[i], (long long)batches[b], (double)seq / 1e6, (double)opa / 1e6, s_op);
            first = 0;
        }
        opara_model_destroy(m);
    }
    fprintf(out, "\n]}\n");
    fclose(out);
    opara_runtime_destroy(rt);
    return 0;
}
