/* The main job (`make demo`): GoogLeNet built with the graph-builder API, saved and reloaded as
   .opara, planned twice (the sequential baseline and Opara's multi-stream plan), run on the best
   backend available (AUTO: CUDA when usable, else the CPU backend), with the plan summary and the
   latency of both plans side by side. It leaves the plan as Graphviz DOT and one run as a
   Chrome-trace timeline, and says where. */
#if !defined(_POSIX_C_SOURCE) && !defined(_GNU_SOURCE)
#  define _POSIX_C_SOURCE 200809L /* clock_gettime, stat, setenv: also when the library is linked from elsewhere */
#endif
#define OPARA_IMPLEMENTATION
#include "../opara.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "googlenet.h"

#define DEMO_DIR "build/demo"
#define DEMO_RUNS 15

typedef struct demo_result {
    opara_plan_info plan;
    char backend[32], strategy[32], gemm[256]; /* the plan's strings live only as long as its session */
    double median_ms, min_ms;
    float* logits;
} demo_result;

static int fail(opara_runtime* rt, const char* what, opara_result r) {
    fprintf(stderr, "demo: %s failed: %s\n  %s\n", what, opara_result_string(r), opara_runtime_last_error(rt));
    return 1;
}

static int cmp_double(const void* a, const void* b) {
    double x = *(const double*)a, y = *(const double*)b;
    return x < y ? -1 : x > y;
}

static opara_result build_and_save(opara_runtime* rt, const char* path) {
    opara_builder* b = NULL;
    opara_result r = opara_builder_create(rt, &b);
    if (r != OPARA_OK) return r;
    googlenet_build(b, 2026);
    r = opara_builder_save_file(b, path);
    if (r != OPARA_OK) fprintf(stderr, "demo: saving the model: %s\n", opara_builder_last_error(b));
    opara_builder_destroy(b);
    return r;
}

/* Runs the model under one strategy: a warm-up, then DEMO_RUNS timed runs on the same input. */
static opara_result run_strategy(opara_runtime* rt, const opara_model* m, opara_strategy strategy, const float* image,
                                 demo_result* out, const char* trace_path, const char* dot_path) {
    opara_session_desc desc;
    opara_session* s = NULL;
    opara_tensor in, logits;
    double times[DEMO_RUNS];
    opara_result r;
    int i;
    memset(&desc, 0, sizeof desc);
    desc.backend = OPARA_BACKEND_AUTO;
    desc.strategy = strategy;
    desc.batch_size = 1;
    r = opara_session_create(rt, m, &desc, &s);
    if (r != OPARA_OK) return r;
    memset(&in, 0, sizeof in);
    in.name = "input", in.dtype = OPARA_DTYPE_F32, in.rank = 4;
    in.dims[0] = 1, in.dims[1] = 3, in.dims[2] = 224, in.dims[3] = 224;
    in.data = (void*)image;
    memset(&logits, 0, sizeof logits);
    logits.name = "logits", logits.dtype = OPARA_DTYPE_F32, logits.rank = 2;
    logits.dims[0] = 1, logits.dims[1] = 1000;
    logits.data = out->logits;
    r = opara_session_run(s, &in, 1, &logits, 1); /* warm-up: first touch of the arena and caches */
    for (i = 0; r == OPARA_OK && i < DEMO_RUNS; ++i) {
        opara_run_stats st;
        r = opara_session_run(s, &in, 1, &logits, 1);
        if (r == OPARA_OK) r = opara_session_get_run_stats(s, &st);
        times[i] = r == OPARA_OK ? (double)st.last_ns / 1e6 : 0;
    }
    if (r == OPARA_OK) r = opara_session_get_plan_info(s, &out->plan);
    if (r == OPARA_OK) {
        snprintf(out->backend, sizeof out->backend, "%s", out->plan.backend);
        snprintf(out->strategy, sizeof out->strategy, "%s", out->plan.strategy);
        snprintf(out->gemm, sizeof out->gemm, "%s", out->plan.gemm ? out->plan.gemm : "-");
    }
    if (r == OPARA_OK && trace_path) r = opara_session_write_trace(s, trace_path);
    if (r == OPARA_OK && dot_path) r = opara_session_write_plan_dot(s, dot_path);
    if (r != OPARA_OK) fprintf(stderr, "demo: %s\n", opara_session_last_error(s));
    qsort(times, DEMO_RUNS, sizeof times[0], cmp_double);
    out->median_ms = times[DEMO_RUNS / 2];
    out->min_ms = times[0];
    opara_session_destroy(s);
    return r;
}

int main(void) {
    opara_runtime_desc rd;
    opara_runtime* rt = NULL;
    opara_model* m = NULL;
    opara_model_stats stats;
    demo_result seq, par;
    static float image[3 * 224 * 224];
    static float logits_seq[1000], logits_par[1000];
    const char* model_path = DEMO_DIR "/googlenet.opara";
    double max_diff = 0;
    opara_result r;
    clock_t t0;
    int i;

    memset(&rd, 0, sizeof rd);
    rd.logger.func = opara_log_stderr; /* shows which backend AUTO picked, and why */
    if ((r = opara_runtime_create(&rd, &rt)) != OPARA_OK) return fail(rt, "opara_runtime_create", r);
#if defined(_WIN32)
    system("mkdir build\\demo 2> NUL");
#else
    if (system("mkdir -p " DEMO_DIR) != 0) fprintf(stderr, "demo: cannot create %s\n", DEMO_DIR);
#endif

    t0 = clock();
    if ((r = build_and_save(rt, model_path)) != OPARA_OK) return fail(rt, "building GoogLeNet", r);
    printf("built GoogLeNet with the graph-builder API and saved it as %s (%.0f ms)\n", model_path,
           1000.0 * (double)(clock() - t0) / CLOCKS_PER_SEC);
    t0 = clock();
    if ((r = opara_model_load_file(rt, model_path, &m)) != OPARA_OK) return fail(rt, "loading the model", r);
    opara_model_get_stats(m, &stats);
    printf("reloaded it in %.3f ms: %u operators, %.1f M parameters, %.1f MB, weights used in place: %s\n\n",
           1000.0 * (double)(clock() - t0) / CLOCKS_PER_SEC, stats.n_nodes, (double)stats.n_params / 1e6,
           (double)stats.file_bytes / 1e6, stats.zero_copy ? "yes" : "no");

    for (i = 0; i < 3 * 224 * 224; ++i) image[i] = (float)((i * 7919) % 255) / 255.0f - 0.5f;
    seq.logits = logits_seq;
    par.logits = logits_par;
    if ((r = run_strategy(rt, m, OPARA_STRATEGY_SEQUENTIAL, image, &seq, NULL, NULL)) != OPARA_OK)
        return fail(rt, "the sequential plan", r);
    if ((r = run_strategy(rt, m, OPARA_STRATEGY_OPARA, image, &par, DEMO_DIR "/googlenet_trace.json",
                          DEMO_DIR "/googlenet_plan.dot")) != OPARA_OK)
        return fail(rt, "the Opara plan", r);
    for (i = 0; i < 1000; ++i) {
        double d = logits_seq[i] > logits_par[i] ? logits_seq[i] - logits_par[i] : logits_par[i] - logits_seq[i];
        if (d > max_diff) max_diff = d;
    }

    printf("backend %s, %u worker threads, GEMM: %s, batch 1, %d timed runs each\n", par.backend, par.plan.n_workers,
           par.gemm, DEMO_RUNS);
    printf("%-12s %8s %7s %6s %12s %12s %11s %9s\n", "plan", "streams", "events", "waits", "peak memory",
           "median (ms)", "min (ms)", "speedup");
    printf("%-12s %8u %7u %6u %9.2f MiB %12.2f %11.2f %9s\n", seq.strategy, seq.plan.n_streams, seq.plan.n_events,
           seq.plan.n_waits, (double)seq.plan.peak_memory_bytes / 1048576.0, seq.median_ms, seq.min_ms, "1.00x");
    printf("%-12s %8u %7u %6u %9.2f MiB %12.2f %11.2f %8.2fx\n", par.strategy, par.plan.n_streams,
           par.plan.n_events, par.plan.n_waits, (double)par.plan.peak_memory_bytes / 1048576.0, par.median_ms,
           par.min_ms, seq.median_ms / par.median_ms);
    printf("\nboth plans give the same logits (max abs difference %.3g)\n", max_diff);
    printf("plan as Graphviz DOT (ops coloured by stream, event waits dashed): %s\n", DEMO_DIR "/googlenet_plan.dot");
    printf("timeline of one run of the Opara plan (chrome://tracing or ui.perfetto.dev): %s\n",
           DEMO_DIR "/googlenet_trace.json");
    opara_model_destroy(m);
    opara_runtime_destroy(rt);
    return max_diff <= 1e-3 ? 0 : 1;
}
