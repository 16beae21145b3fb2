/* gpu_check: the measuring program of `make gpu-check` (tools/gpu_check.sh, docs/GPU-CHECK.md).
   Public API only (opara.h, and opara_cuda.h's loader for the device description). Every result is
   one JSON object per line on stdout, flushed as soon as it is known, so a step killed by its timeout
   still leaves what it finished; the logger's lines (WARN/ERROR included) go to stderr.

     gpu_check env                      the device and what the loader found for a small CUDA session
     gpu_check bench MODEL [options]    build/zoo/MODEL.onnx on the CUDA backend vs the CPU backend:
         --batches 1,8                  batch sizes
         --modes egs                    eager, (Opara) graph, sequential graph
         --precisions fp32,tf32         and for TF32 only --tf32-modes (default gs)
         --runs N --warmup N            timed runs (>= 1) after warm-up runs, per session, interleaved
                                        over the sessions of one batch and precision
         --max-seconds S                start no new batch/precision after S seconds
                                        Each session is also timed with device-resident inputs and
                                        outputs (opara_session_run_device, buffers allocated here with
                                        the driver), interleaved with its host runs: "device_*" fields.
     gpu_check thread MODEL [--batch B] a session created on this thread, run from a second thread (each
                                        mode), outputs vs the CPU backend */
#define _GNU_SOURCE
#if !defined(_POSIX_C_SOURCE) && !defined(_GNU_SOURCE)
#  define _POSIX_C_SOURCE 200809L /* clock_gettime, stat, setenv: also when the library is linked from elsewhere */
#endif
#define OPARA_IMPLEMENTATION
#include "../opara.h"
/* The CUDA loader is a public header of its own (opara_cuda.h): opara.h's implementation above
   emits it; a build that links the library from another translation unit emits a static copy here. */
#ifndef OPARA_CUDA_IMPLEMENTATION_INCLUDED
#  define OPARA_CUDA_IMPLEMENTATION
#  define OPARA_CUDA_STATIC
#endif
#include "../opara_cuda.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda_zoo_util.h"

#define GC_MAX_RUNS 100000
#define GC_MODES 3

static const char* const gc_mode_names[GC_MODES] = {"eager", "graph", "seq-graph"};

static double gc_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* ---- JSON output -------------------------------------------------------------------------------- */

static void gc_str(const char* s) {
    putchar('"');
    for (; s && *s; ++s) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') printf("\\%c", c);
        else if (c == '\n') printf("\\n");
        else if (c < 0x20) printf("\\u%04x", c);
        else putchar(c);
    }
    putchar('"');
}

static void gc_key_str(const char* key, const char* value) {
    printf(", \"%s\": ", key);
    gc_str(value);
}

/* A number, or null when it is not finite (JSON has no NaN). */
static void gc_key_num(const char* key, double v) {
    if (v == v && v < 1e300 && v > -1e300) printf(", \"%s\": %.6g", key, v);
    else printf(", \"%s\": null", key);
}

static void gc_end(void) {
    printf("}\n");
    fflush(stdout);
}

static void gc_logger(opara_log_level level, opara_log_item item, const char* message, void* user) {
    opara_log_stderr(level, item, message, user);
}

static opara_runtime* gc_runtime(void) {
    opara_runtime_desc d;
    opara_runtime* rt = NULL;
    memset(&d, 0, sizeof d);
    d.logger.func = gc_logger;
    d.logger.max_level = OPARA_LOG_INFO;
    return opara_runtime_create(&d, &rt) == OPARA_OK ? rt : NULL;
}

/* The plan info fields every session record carries. */
static void gc_plan_info(const opara_session* s) {
    opara_plan_info pi;
    if (opara_session_get_plan_info(s, &pi) != OPARA_OK) return;
    gc_key_str("cuda_mode", pi.cuda_mode ? pi.cuda_mode : "");
    gc_key_str("strategy", pi.strategy);
    gc_key_str("precision_used", pi.precision ? pi.precision : "");
    gc_key_str("gemm", pi.gemm ? pi.gemm : "");
    gc_key_str("conv", pi.conv ? pi.conv : "");
    printf(", \"n_conv\": %u, \"n_conv_library\": %u, \"streams\": %u, \"cuda_streams\": %u", pi.n_conv, pi.n_conv_library,
           pi.n_streams, pi.n_workers);
    gc_key_str("kernels", pi.kernels ? pi.kernels : "");
    gc_key_str("libraries", pi.libraries ? pi.libraries : "");
    gc_key_num("peak_memory_mib", (double)pi.peak_memory_bytes / 1048576.0);
    gc_key_num("workspace_mib", (double)pi.workspace_bytes / 1048576.0);
}

/* ---- env ---------------------------------------------------------------------------------------- */

static void gc_device(void) {
    opara_cuda_driver cu;
    char err[512], name[256] = "";
    int count = 0, major = 0, minor = 0, sms = 0;
    size_t mem = 0;
    opara_CUdevice dev = 0;
    opara_CUresult r;
    memset(&cu, 0, sizeof cu);
    printf("{\"kind\": \"device\"");
    if (opara_cuda_driver_load(&cu, NULL, err, sizeof err) != OPARA_CUDA_LOAD_OK) {
        gc_key_str("status", "failed");
        gc_key_str("reason", err);
        gc_end();
        return;
    }
    gc_key_str("driver_library", cu.path);
    printf(", \"driver_version\": %d", cu.driver_version);
    r = cu.cuInit(0);
    if (r == OPARA_CUDA_SUCCESS) r = cu.cuDeviceGetCount(&count);
    if (r == OPARA_CUDA_SUCCESS && count > 0) r = cu.cuDeviceGet(&dev, 0);
    if (r == OPARA_CUDA_SUCCESS && count > 0) {
        cu.cuDeviceGetName(name, (int)sizeof name, dev);
        cu.cuDeviceGetAttribute(&major, OPARA_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
        cu.cuDeviceGetAttribute(&minor, OPARA_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
        cu.cuDeviceGetAttribute(&sms, OPARA_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
        cu.cuDeviceTotalMem_v2(&mem, dev);
    }
    gc_key_str("status", r == OPARA_CUDA_SUCCESS && count > 0 ? "ok" : "failed");
    if (r != OPARA_CUDA_SUCCESS) gc_key_str("reason", opara_cuda_driver_result_name(&cu, r));
    printf(", \"devices\": %d", count);
    gc_key_str("name", name);
    printf(", \"compute_capability\": \"%d.%d\", \"sms\": %d", major, minor, sms);
    gc_key_num("memory_gib", (double)mem / 1073741824.0);
    gc_end();
    opara_cuda_driver_unload(&cu);
}

/* x [1,8,16,16] -> Conv 3x3 -> Relu -> GAP -> Flatten -> Gemm: a session that needs cuDNN and cuBLAS. */
static opara_model* gc_probe_model(opara_runtime* rt) {
    static float w[8 * 8 * 9], fw[10 * 8], fb[10];
    int64_t xd[4] = {1, 8, 16, 16}, wd[4] = {8, 8, 3, 3}, fwd[2] = {10, 8}, fbd[1] = {10}, pads[4] = {1, 1, 1, 1};
    const char *c1[2] = {"x", "w"}, *o1[1] = {"c"}, *r1[1] = {"c"}, *o2[1] = {"r"}, *g1[1] = {"r"}, *o3[1] = {"g"};
    const char *f1[1] = {"g"}, *o4[1] = {"f"}, *m1[3] = {"f", "fw", "fb"}, *o5[1] = {"y"};
    opara_attr attrs[1];
    opara_builder* b = NULL;
    opara_model* m = NULL;
    size_t i;
    for (i = 0; i < sizeof w / sizeof *w; ++i) w[i] = (float)((i * 5) % 13) / 13.0f - 0.5f;
    for (i = 0; i < sizeof fw / sizeof *fw; ++i) fw[i] = (float)((i * 3) % 7) / 7.0f - 0.5f;
    memset(attrs, 0, sizeof attrs);
    attrs[0].name = "pads", attrs[0].type = OPARA_ATTR_INTS, attrs[0].count = 4, attrs[0].v.ints = pads;
    if (opara_builder_create(rt, &b) != OPARA_OK) return NULL;
    opara_builder_add_input(b, "x", OPARA_DTYPE_F32, 4, xd);
    opara_builder_add_constant(b, "w", OPARA_DTYPE_F32, 4, wd, w, sizeof w);
    opara_builder_add_constant(b, "fw", OPARA_DTYPE_F32, 2, fwd, fw, sizeof fw);
    opara_builder_add_constant(b, "fb", OPARA_DTYPE_F32, 1, fbd, fb, sizeof fb);
    opara_builder_add_node(b, "Conv", "conv", 2, c1, 1, o1, 1, attrs);
    opara_builder_add_node(b, "Relu", "relu", 1, r1, 1, o2, 0, NULL);
    opara_builder_add_node(b, "GlobalAveragePool", "gap", 1, g1, 1, o3, 0, NULL);
    opara_builder_add_node(b, "Flatten", "flat", 1, f1, 1, o4, 0, NULL);
    attrs[0].name = "transB", attrs[0].type = OPARA_ATTR_INT, attrs[0].v.i = 1;
    opara_builder_add_node(b, "Gemm", "fc", 3, m1, 1, o5, 1, attrs);
    opara_builder_add_output(b, "y");
    if (opara_builder_finish(b, &m) != OPARA_OK) m = NULL;
    opara_builder_destroy(b);
    return m;
}

/* What the loader finds with nothing set: a small CUDA session's plan info, and one run vs the CPU. */
static int gc_env(void) {
    opara_runtime* rt = gc_runtime();
    opara_model* m = rt ? gc_probe_model(rt) : NULL;
    opara_session *gpu = NULL, *cpu = NULL;
    opara_session_desc d;
    zoo_io in, ref, got;
    int ok;
    gc_device();
    memset(&in, 0, sizeof in), memset(&ref, 0, sizeof ref), memset(&got, 0, sizeof got);
    printf("{\"kind\": \"loader\"");
    if (!m) {
        gc_key_str("status", "failed");
        gc_key_str("reason", rt ? opara_runtime_last_error(rt) : "runtime");
        gc_end();
        opara_runtime_destroy(rt);
        return 1;
    }
    memset(&d, 0, sizeof d);
    d.backend = OPARA_BACKEND_CUDA;
    ok = opara_session_create(rt, m, &d, &gpu) == OPARA_OK;
    if (!ok) {
        gc_key_str("status", "failed");
        gc_key_str("reason", opara_runtime_last_error(rt));
    } else {
        ok = zoo_cpu_reference(rt, m, 1, &cpu, &in, &ref) && zoo_make_outputs(gpu, &got) &&
             opara_session_run(gpu, in.t, in.n, got.t, got.n) == OPARA_OK;
        gc_key_str("status", ok ? "ok" : "failed");
        if (!ok) gc_key_str("reason", opara_session_last_error(gpu));
        else gc_key_num("nmse", zoo_nmse(&ref.t[0], got.t[0].data));
        gc_plan_info(gpu);
    }
    gc_end();
    zoo_free_io(&in), zoo_free_io(&ref), zoo_free_io(&got);
    opara_session_destroy(gpu);
    opara_session_destroy(cpu);
    opara_model_destroy(m);
    opara_runtime_destroy(rt);
    return ok ? 0 : 1;
}

/* ---- bench -------------------------------------------------------------------------------------- */

typedef struct gc_args {
    const char* model;
    int batches[8], n_batches;
    const char* modes;
    const char* tf32_modes;
    int fp32, tf32;
    int runs, warmup;
    double max_seconds;
} gc_args;

static int gc_cmp(const void* a, const void* b) {
    double x = *(const double*)a, y = *(const double*)b;
    return x < y ? -1 : x > y;
}

static double gc_quantile(const double* sorted, int n, double q) {
    double pos = q * (n - 1);
    int lo = (int)pos;
    return lo + 1 < n ? sorted[lo] + (pos - lo) * (sorted[lo + 1] - sorted[lo]) : sorted[n - 1];
}

/* Device memory for opara_session_run_device: the driver the sessions use (OPARA_CUDA_DRIVER, else the
   search list) and device 0's primary context, which is the one sessions run in. */
typedef struct gc_gpu {
    opara_cuda_driver cu;
    opara_CUdevice dev;
    opara_CUcontext ctx;
    char error[600];
} gc_gpu;

static int gc_gpu_open(gc_gpu* g) {
    opara_CUresult r;
    memset(g, 0, sizeof *g);
    if (opara_cuda_driver_load(&g->cu, NULL, g->error, sizeof g->error) != OPARA_CUDA_LOAD_OK) return 0;
    r = g->cu.cuInit(0);
    if (r == OPARA_CUDA_SUCCESS) r = g->cu.cuDeviceGet(&g->dev, 0);
    if (r == OPARA_CUDA_SUCCESS) r = g->cu.cuDevicePrimaryCtxRetain(&g->ctx, g->dev);
    if (r == OPARA_CUDA_SUCCESS) return 1;
    snprintf(g->error, sizeof g->error, "driver: %s", opara_cuda_driver_result_name(&g->cu, r));
    g->ctx = NULL;
    opara_cuda_driver_unload(&g->cu);
    return 0;
}

static void gc_gpu_close(gc_gpu* g) {
    if (!g->cu.library) return;
    if (g->ctx) g->cu.cuDevicePrimaryCtxRelease_v2(g->dev);
    opara_cuda_driver_unload(&g->cu);
}

static void gc_gpu_free(gc_gpu* g, zoo_io* dev) {
    uint32_t i;
    opara_CUcontext prev;
    if (!g->cu.library || g->cu.cuCtxPushCurrent_v2(g->ctx) != OPARA_CUDA_SUCCESS) return;
    for (i = 0; i < dev->n; ++i)
        if (dev->t[i].data) g->cu.cuMemFree_v2((opara_CUdeviceptr)(uintptr_t)dev->t[i].data);
    g->cu.cuCtxPopCurrent_v2(&prev);
    memset(dev, 0, sizeof *dev);
}

/* dev: the tensors of io (names, dtypes, shapes) with data in device memory, io's contents uploaded when
   upload is set. 0 with g->error on failure (nothing left allocated). */
static int gc_gpu_mirror(gc_gpu* g, const zoo_io* io, int upload, zoo_io* dev) {
    uint32_t i;
    opara_CUresult r = g->cu.cuCtxPushCurrent_v2(g->ctx);
    opara_CUcontext prev;
    memset(dev, 0, sizeof *dev);
    if (r != OPARA_CUDA_SUCCESS) {
        snprintf(g->error, sizeof g->error, "cuCtxPushCurrent: %s", opara_cuda_driver_result_name(&g->cu, r));
        return 0;
    }
    for (i = 0; i < io->n && r == OPARA_CUDA_SUCCESS; ++i) {
        size_t bytes = zoo_tensor_bytes(&io->t[i]);
        opara_CUdeviceptr p = 0;
        dev->t[i] = io->t[i];
        dev->t[i].data = NULL;
        dev->n = i + 1;
        r = g->cu.cuMemAlloc_v2(&p, bytes ? bytes : 1);
        if (r == OPARA_CUDA_SUCCESS) dev->t[i].data = (void*)(uintptr_t)p;
        if (r == OPARA_CUDA_SUCCESS && upload && bytes) r = g->cu.cuMemcpyHtoD_v2(p, io->t[i].data, bytes);
    }
    g->cu.cuCtxPopCurrent_v2(&prev);
    if (r == OPARA_CUDA_SUCCESS) return 1;
    snprintf(g->error, sizeof g->error, "device buffers: %s", opara_cuda_driver_result_name(&g->cu, r));
    gc_gpu_free(g, dev);
    return 0;
}

/* 1 when the device outputs hold exactly the host outputs (a device run and a host run of one input). */
static int gc_gpu_same(gc_gpu* g, const zoo_io* dev, const zoo_io* host) {
    uint32_t i;
    int same = g->cu.cuCtxPushCurrent_v2(g->ctx) == OPARA_CUDA_SUCCESS;
    opara_CUcontext prev;
    if (!same) return 0;
    for (i = 0; i < host->n && same; ++i) {
        size_t bytes = zoo_tensor_bytes(&host->t[i]);
        void* copy = malloc(bytes ? bytes : 1);
        same = copy && g->cu.cuMemcpyDtoH_v2(copy, (opara_CUdeviceptr)(uintptr_t)dev->t[i].data, bytes) == OPARA_CUDA_SUCCESS &&
               memcmp(copy, host->t[i].data, bytes) == 0;
        free(copy);
    }
    g->cu.cuCtxPopCurrent_v2(&prev);
    return same;
}

/* One session of the bench: its mode, creation time, worst NMSE and the timed runs (host I/O in ms,
   device-resident I/O in dms when din/dout exist). */
typedef struct gc_session {
    opara_session* s;
    int mode;
    double create_ms, nmse_worst;
    char nmse[1024]; /* "name": value pairs */
    char error[1100];
    char device_error[1100]; /* why there are no device-resident timings */
    int device_same;        /* the device run's outputs equal the host run's, bit for bit */
    zoo_io out, din, dout;
    double *ms, *dms;
} gc_session;

static void gc_session_open(gc_session* g, opara_runtime* rt, const opara_model* m, int mode, int batch, opara_precision p,
                            const zoo_io* in, const zoo_io* ref) {
    opara_session_desc d;
    double t0 = gc_now_ms();
    uint32_t i;
    memset(&d, 0, sizeof d);
    d.backend = OPARA_BACKEND_CUDA;
    d.batch_size = batch;
    d.precision = p;
    d.cuda_eager = mode == 0;
    d.strategy = mode == 2 ? OPARA_STRATEGY_SEQUENTIAL : OPARA_STRATEGY_OPARA;
    g->mode = mode;
    if (opara_session_create(rt, m, &d, &g->s) != OPARA_OK) {
        snprintf(g->error, sizeof g->error, "session: %s", opara_runtime_last_error(rt));
        return;
    }
    g->create_ms = gc_now_ms() - t0;
    if (!zoo_make_outputs(g->s, &g->out) || opara_session_run(g->s, in->t, in->n, g->out.t, g->out.n) != OPARA_OK) {
        snprintf(g->error, sizeof g->error, "first run: %s", opara_session_last_error(g->s));
        return;
    }
    for (i = 0; i < g->out.n && i < ref->n; ++i) {
        double e = zoo_nmse(&ref->t[i], g->out.t[i].data);
        size_t used = strlen(g->nmse), k;
        char name[128];
        snprintf(name, sizeof name, "%s", ref->t[i].name ? ref->t[i].name : "?");
        for (k = 0; name[k]; ++k) /* a JSON key as it is */
            if (name[k] == '"' || name[k] == '\\' || (unsigned char)name[k] < 0x20) name[k] = '_';
        snprintf(g->nmse + used, sizeof g->nmse - used, "%s\"%s\": %.3e", i ? ", " : "", name,
                 e == e && e < 1e300 ? e : 1e300); /* JSON has no inf or nan */
        if (!(e <= g->nmse_worst)) g->nmse_worst = e; /* NaN stays */
    }
}

static int gc_session_run(gc_session* g, const zoo_io* in, double* ms) {
    double t0 = gc_now_ms();
    if (g->error[0] || !g->s) return 0;
    if (opara_session_run(g->s, in->t, in->n, g->out.t, g->out.n) != OPARA_OK) {
        snprintf(g->error, sizeof g->error, "run: %s", opara_session_last_error(g->s));
        return 0;
    }
    if (ms) *ms = gc_now_ms() - t0;
    return 1;
}

static void gc_session_run_device(gc_session* g, double* ms) {
    double t0 = gc_now_ms();
    if (g->error[0] || g->device_error[0] || !g->s) return;
    if (opara_session_run_device(g->s, g->din.t, g->din.n, g->dout.t, g->dout.n) != OPARA_OK)
        snprintf(g->device_error, sizeof g->device_error, "run_device: %.1000s", opara_session_last_error(g->s));
    else if (ms)
        *ms = gc_now_ms() - t0;
}

/* Device-resident I/O for session g: buffers, one run compared with the host run's outputs. */
static void gc_session_device_io(gc_session* g, gc_gpu* gpu, const zoo_io* in) {
    if (g->error[0] || !g->s) return;
    if (!gpu->cu.library) {
        snprintf(g->device_error, sizeof g->device_error, "%s", gpu->error);
        return;
    }
    if (!gc_gpu_mirror(gpu, in, 1, &g->din) || !gc_gpu_mirror(gpu, &g->out, 0, &g->dout)) {
        snprintf(g->device_error, sizeof g->device_error, "%s", gpu->error);
        return;
    }
    gc_session_run_device(g, NULL);
    if (!g->device_error[0] && gc_session_run(g, in, NULL)) g->device_same = gc_gpu_same(gpu, &g->dout, &g->out);
}

/* median/p10/p90/min/mean of runs timings under `prefix` ("" or "device_"). */
static void gc_report_times(const char* prefix, const double* ms, int runs) {
    double* sorted = (double*)malloc((size_t)runs * sizeof *sorted);
    double sum = 0;
    char key[64];
    int i;
    if (!sorted) return;
    memcpy(sorted, ms, (size_t)runs * sizeof *sorted);
    qsort(sorted, (size_t)runs, sizeof *sorted, gc_cmp);
    for (i = 0; i < runs; ++i) sum += sorted[i];
#define GC_TIME(name, value) (snprintf(key, sizeof key, "%s%s", prefix, name), gc_key_num(key, value))
    GC_TIME("median_ms", gc_quantile(sorted, runs, 0.5));
    GC_TIME("p10_ms", gc_quantile(sorted, runs, 0.1));
    GC_TIME("p90_ms", gc_quantile(sorted, runs, 0.9));
    GC_TIME("min_ms", sorted[0]);
    GC_TIME("mean_ms", sum / runs);
#undef GC_TIME
    free(sorted);
}

static void gc_session_report(const gc_session* g, const gc_args* a, int batch, opara_precision p, int runs, double cpu_ms) {
    printf("{\"kind\": \"ours\"");
    gc_key_str("model", a->model);
    printf(", \"batch\": %d", batch);
    gc_key_str("precision", opara_precision_name(p));
    gc_key_str("mode", gc_mode_names[g->mode]);
    gc_key_str("status", g->error[0] ? "failed" : "ok");
    if (g->error[0]) gc_key_str("reason", g->error);
    gc_key_num("create_ms", g->create_ms);
    gc_key_num("cpu_reference_ms", cpu_ms);
    if (g->nmse[0]) printf(", \"nmse\": {%s}", g->nmse);
    gc_key_num("nmse_worst", g->nmse[0] ? g->nmse_worst : NAN);
    if (!g->error[0] && runs > 0) {
        printf(", \"runs\": %d, \"warmup\": %d", runs, a->warmup);
        gc_report_times("", g->ms, runs);
        if (g->device_error[0]) {
            gc_key_str("device_io", g->device_error);
        } else {
            printf(", \"device_io_same_outputs\": %s", g->device_same ? "true" : "false");
            gc_report_times("device_", g->dms, runs);
        }
    }
    if (g->s) gc_plan_info(g->s);
    gc_end();
}

/* The sessions of `modes` at one batch and precision: created, checked against ref, warmed up and
   timed with their runs interleaved (so drifting clocks or a neighbour's load hit all alike). */
static void gc_bench_one(opara_runtime* rt, gc_gpu* gpu, const opara_model* m, const gc_args* a, int batch, opara_precision p,
                         const char* modes, const zoo_io* in, const zoo_io* ref, double cpu_ms) {
    gc_session g[GC_MODES];
    int k, r, runs = 0;
    memset(g, 0, sizeof g);
    for (k = 0; k < GC_MODES; ++k) {
        if (!strchr(modes, "egs"[k])) continue;
        g[k].ms = (double*)calloc((size_t)a->runs, sizeof(double));
        g[k].dms = (double*)calloc((size_t)a->runs, sizeof(double));
        if (!g[k].ms || !g[k].dms) snprintf(g[k].error, sizeof g[k].error, "out of host memory");
        else gc_session_open(&g[k], rt, m, k, batch, p, in, ref);
        gc_session_device_io(&g[k], gpu, in);
    }
    for (r = 0; r < a->warmup; ++r)
        for (k = 0; k < GC_MODES; ++k) gc_session_run(&g[k], in, NULL), gc_session_run_device(&g[k], NULL);
    for (r = 0; r < a->runs; ++r, ++runs)
        for (k = 0; k < GC_MODES; ++k)
            if (g[k].ms) gc_session_run(&g[k], in, &g[k].ms[r]), gc_session_run_device(&g[k], &g[k].dms[r]);
    for (k = 0; k < GC_MODES; ++k) {
        if (!strchr(modes, "egs"[k])) continue;
        gc_session_report(&g[k], a, batch, p, runs, cpu_ms);
        zoo_free_io(&g[k].out);
        gc_gpu_free(gpu, &g[k].din);
        gc_gpu_free(gpu, &g[k].dout);
        free(g[k].ms);
        free(g[k].dms);
        opara_session_destroy(g[k].s);
    }
}

static int gc_parse_bench(int argc, char** argv, gc_args* a) {
    int i;
    memset(a, 0, sizeof *a);
    a->batches[0] = 1, a->n_batches = 1;
    a->modes = "egs", a->tf32_modes = "gs";
    a->fp32 = 1, a->runs = 100, a->warmup = 10, a->max_seconds = 1e9;
    if (argc < 1) return 0;
    a->model = argv[0];
    for (i = 1; i + 1 < argc; i += 2) {
        const char *k = argv[i], *v = argv[i + 1];
        if (strcmp(k, "--batches") == 0) {
            char buf[128], *tok, *save = NULL;
            snprintf(buf, sizeof buf, "%s", v);
            a->n_batches = 0;
            for (tok = strtok_r(buf, ",", &save); tok && a->n_batches < 8; tok = strtok_r(NULL, ",", &save))
                a->batches[a->n_batches++] = atoi(tok) > 0 ? atoi(tok) : 1;
        } else if (strcmp(k, "--modes") == 0) a->modes = v;
        else if (strcmp(k, "--tf32-modes") == 0) a->tf32_modes = v;
        else if (strcmp(k, "--precisions") == 0) a->fp32 = strstr(v, "fp32") != NULL, a->tf32 = strstr(v, "tf32") != NULL;
        else if (strcmp(k, "--runs") == 0) a->runs = atoi(v);
        else if (strcmp(k, "--warmup") == 0) a->warmup = atoi(v);
        else if (strcmp(k, "--max-seconds") == 0) a->max_seconds = atof(v);
        else return 0;
    }
    return i == argc && a->runs >= 1 && a->runs <= GC_MAX_RUNS && a->warmup >= 0;
}

static void gc_skipped(const gc_args* a, int batch, const char* precision, const char* reason) {
    printf("{\"kind\": \"ours\"");
    gc_key_str("model", a->model);
    printf(", \"batch\": %d", batch);
    gc_key_str("precision", precision);
    gc_key_str("mode", "*");
    gc_key_str("status", "skipped");
    gc_key_str("reason", reason);
    gc_end();
}

static int gc_bench(int argc, char** argv) {
    gc_args a;
    gc_gpu gpu;
    opara_runtime* rt;
    opara_model* m = NULL;
    double start = gc_now_ms();
    int b, ok = 1;
    if (!gc_parse_bench(argc, argv, &a)) {
        fprintf(stderr, "usage: gpu_check bench MODEL [--batches 1,8] [--modes egs] [--precisions fp32,tf32] "
                        "[--tf32-modes gs] [--runs N] [--warmup N] [--max-seconds S]\n");
        return 2;
    }
    rt = gc_runtime();
    if (!rt || zoo_load(rt, a.model, &m) != OPARA_OK) {
        printf("{\"kind\": \"ours\"");
        gc_key_str("model", a.model);
        gc_key_str("status", "failed");
        gc_key_str("reason", rt ? opara_runtime_last_error(rt) : "runtime");
        gc_end();
        opara_runtime_destroy(rt);
        return 1;
    }
    gc_gpu_open(&gpu); /* without it the device-resident timings say why they are missing */
    for (b = 0; b < a.n_batches; ++b) {
        opara_session* cpu = NULL;
        zoo_io in, ref;
        double t0 = gc_now_ms(), cpu_ms;
        int batch = a.batches[b];
        memset(&in, 0, sizeof in), memset(&ref, 0, sizeof ref);
        if ((gc_now_ms() - start) * 1e-3 > a.max_seconds) {
            gc_skipped(&a, batch, "*", "out of time (--max-seconds)");
            continue;
        }
        if (!zoo_cpu_reference(rt, m, batch, &cpu, &in, &ref)) {
            char why[2200];
            snprintf(why, sizeof why, "CPU reference: %s %s", opara_runtime_last_error(rt), cpu ? opara_session_last_error(cpu) : "");
            gc_skipped(&a, batch, "*", why);
            ok = 0;
        } else {
            cpu_ms = gc_now_ms() - t0;
            if (a.fp32) gc_bench_one(rt, &gpu, m, &a, batch, OPARA_PRECISION_FP32, a.modes, &in, &ref, cpu_ms);
            if (a.tf32 && (gc_now_ms() - start) * 1e-3 > a.max_seconds) gc_skipped(&a, batch, "tf32", "out of time (--max-seconds)");
            else if (a.tf32) gc_bench_one(rt, &gpu, m, &a, batch, OPARA_PRECISION_TF32, a.tf32_modes, &in, &ref, cpu_ms);
        }
        zoo_free_io(&in), zoo_free_io(&ref);
        opara_session_destroy(cpu);
    }
    gc_gpu_close(&gpu);
    opara_model_destroy(m);
    opara_runtime_destroy(rt);
    return ok ? 0 : 1;
}

/* ---- thread ------------------------------------------------------------------------------------- */

typedef struct gc_thread_job {
    opara_session* s;
    const zoo_io* in;
    zoo_io* out;
    opara_result result;
    char error[1100];
} gc_thread_job;

static void* gc_thread_main(void* p) {
    gc_thread_job* j = (gc_thread_job*)p;
    j->result = opara_session_run(j->s, j->in->t, j->in->n, j->out->t, j->out->n);
    if (j->result != OPARA_OK) snprintf(j->error, sizeof j->error, "%s", opara_session_last_error(j->s));
    return NULL;
}

/* Created here, run once on a second thread and once more here, destroyed here. */
static int gc_thread_mode(opara_runtime* rt, const opara_model* m, const char* name, int mode, int batch, const zoo_io* in,
                          const zoo_io* ref) {
    opara_session_desc d;
    gc_thread_job j;
    pthread_t th;
    zoo_io out;
    double worst = 0;
    uint32_t i;
    int ok;
    memset(&d, 0, sizeof d);
    memset(&j, 0, sizeof j);
    memset(&out, 0, sizeof out);
    d.backend = OPARA_BACKEND_CUDA;
    d.batch_size = batch;
    d.cuda_eager = mode == 0;
    d.strategy = mode == 2 ? OPARA_STRATEGY_SEQUENTIAL : OPARA_STRATEGY_OPARA;
    printf("{\"kind\": \"thread\"");
    gc_key_str("model", name);
    gc_key_str("mode", gc_mode_names[mode]);
    printf(", \"batch\": %d", batch);
    if (opara_session_create(rt, m, &d, &j.s) != OPARA_OK) {
        gc_key_str("status", "failed");
        gc_key_str("reason", opara_runtime_last_error(rt));
        gc_end();
        return 0;
    }
    j.in = in, j.out = &out;
    ok = zoo_make_outputs(j.s, &out) && pthread_create(&th, NULL, gc_thread_main, &j) == 0;
    if (ok) pthread_join(th, NULL);
    ok = ok && j.result == OPARA_OK;
    for (i = 0; ok && i < out.n && i < ref->n; ++i) {
        double e = zoo_nmse(&ref->t[i], out.t[i].data);
        if (!(e <= worst)) worst = e;
    }
    gc_key_str("second_thread_run", ok ? "ok" : j.error[0] ? j.error : "failed");
    gc_key_num("nmse_worst", ok ? worst : NAN);
    j.result = opara_session_run(j.s, in->t, in->n, out.t, out.n); /* back on the creating thread */
    gc_key_str("creating_thread_run", j.result == OPARA_OK ? "ok" : opara_session_last_error(j.s));
    ok = ok && j.result == OPARA_OK && worst <= zoo_nmse_max("fp32");
    gc_key_str("status", ok ? "ok" : "failed");
    gc_end();
    zoo_free_io(&out);
    opara_session_destroy(j.s);
    return ok;
}

static int gc_thread(int argc, char** argv) {
    opara_runtime* rt;
    opara_model* m = NULL;
    opara_session* cpu = NULL;
    zoo_io in, ref;
    int batch = argc >= 3 && strcmp(argv[1], "--batch") == 0 ? atoi(argv[2]) : 1, ok = 1, mode;
    if (argc < 1) {
        fprintf(stderr, "usage: gpu_check thread MODEL [--batch B]\n");
        return 2;
    }
    memset(&in, 0, sizeof in), memset(&ref, 0, sizeof ref);
    rt = gc_runtime();
    if (!rt || zoo_load(rt, argv[0], &m) != OPARA_OK || !zoo_cpu_reference(rt, m, batch, &cpu, &in, &ref)) {
        printf("{\"kind\": \"thread\"");
        gc_key_str("model", argv[0]);
        gc_key_str("status", "failed");
        gc_key_str("reason", rt ? opara_runtime_last_error(rt) : "runtime");
        gc_end();
        ok = 0;
    } else {
        for (mode = 0; mode < GC_MODES; ++mode) ok &= gc_thread_mode(rt, m, argv[0], mode, batch, &in, &ref);
    }
    zoo_free_io(&in), zoo_free_io(&ref);
    opara_session_destroy(cpu);
    opara_model_destroy(m);
    opara_runtime_destroy(rt);
    return ok ? 0 : 1;
}

int main(int argc, char** argv) {
    if (argc >= 2 && strcmp(argv[1], "env") == 0) return gc_env();
    if (argc >= 2 && strcmp(argv[1], "bench") == 0) return gc_bench(argc - 2, argv + 2);
    if (argc >= 2 && strcmp(argv[1], "thread") == 0) return gc_thread(argc - 2, argv + 2);
    fprintf(stderr, "usage: gpu_check env | bench MODEL [options] | thread MODEL [--batch B]\n");
    return 2;
}
