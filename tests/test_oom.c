/* Allocation-failure sweep (sqlite's approach): for every N up to the number of allocations of a
   whole path, the allocator hook refuses allocation N (once, then allocations succeed again; and
   every allocation from N on). Paths: runtime create -> load (ONNX file, ONNX memory, .opara file,
   .opara memory; the first model also from the builder) -> CPU session create (2 threads) -> run
   -> destroy, on two small models. Every call must
   return OPARA_OK or OPARA_ERR_OUT_OF_MEMORY (with a detail), a call that failed once must succeed
   when repeated, nothing may leak (live allocations counted through the hook, also under
   ASan/LSan with SAN=1), and no allocation may bypass the hook (malloc/calloc/realloc/free are
   redirected to counters for the library's code below).

   The default run sweeps every N with a stride (OPARA_OOM_STRIDE, default 1: every N); the
   counts of failure points tried per path are printed. */
#if !defined(_WIN32)
#  define _GNU_SOURCE /* setenv */
#endif
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <unistd.h>

#include "opara_test.h"
#include "onnx_pbw.h"

/* ---- allocations the library makes outside the hook (must stay 0) ------------------------------ */

static long bypass_calls;

OT__UNUSED static void* bypass_malloc(size_t n) { bypass_calls++; return malloc(n); }
OT__UNUSED static void* bypass_calloc(size_t n, size_t s) { bypass_calls++; return calloc(n, s); }
OT__UNUSED static void* bypass_realloc(void* p, size_t n) { bypass_calls++; return realloc(p, n); }
OT__UNUSED static void bypass_free(void* p) { if (p) bypass_calls++; free(p); }

#define malloc(n) bypass_malloc(n)
#define calloc(n, s) bypass_calloc(n, s)
#define realloc(p, n) bypass_realloc(p, n)
#define free(p) bypass_free(p)
#define OPARA_IMPLEMENTATION
#include "opara.h"
#undef malloc
#undef calloc
#undef realloc
#undef free
#include "opara_model_fixture.h"
#include "cuda_test_env.h"

/* ---- the failing allocator ---------------------------------------------------------------------- */

typedef struct oom_alloc {
    long count;     /* allocations asked for */
    long fail_at;   /* 1-based allocation to refuse; 0: none */
    int persistent; /* 1: every allocation from fail_at on is refused */
    long refused;
    long live;      /* allocations not yet freed */
} oom_alloc;

static void* oom_alloc_fn(size_t size, size_t alignment, void* user) {
    oom_alloc* a = (oom_alloc*)user;
    void* p;
    long n = ++a->count;
    if (a->fail_at && (n == a->fail_at || (a->persistent && n > a->fail_at))) {
        a->refused++;
        return NULL;
    }
    if ((p = ot_aligned_alloc(size, alignment)) == NULL) return NULL;
    a->live++;
    return p;
}

static void oom_free_fn(void* p, void* user) {
    if (!p) return;
    ((oom_alloc*)user)->live--;
    ot_aligned_free(p);
}

/* ---- two small models, as ONNX bytes ---------------------------------------------------------- */

static const char* const* L(const char* a, const char* b, const char* c) {
    static const char* lists[8][4];
    static int next;
    const char** l = lists[next++ & 7];
    l[0] = a, l[1] = b, l[2] = c, l[3] = NULL;
    return l;
}

static void fill(float* p, size_t n, float scale) {
    size_t i;
    for (i = 0; i < n; ++i) p[i] = scale * (float)((int)(i % 17) - 8);
}

/* The branchy model of tests/opara_model_fixture.h in ONNX form:
   x[N,3,8,8] -> Conv 3x3 pads 1 -> Relu -> r1; r1 -> Conv 1x1 -> a (output); r1 -> MaxPool 3x3 -> b;
   Concat(a, b) -> GlobalAveragePool -> Flatten -> Gemm(transB) -> y[N,5] (output). */
static pbw branchy_onnx(void) {
    static float w1[4 * 3 * 3 * 3], b1[4], w2[2 * 4], wf[5 * 6], bf[5];
    static const int64_t xd[4] = {-1, 3, 8, 8}, w1d[4] = {4, 3, 3, 3}, b1d[1] = {4}, w2d[4] = {2, 4, 1, 1};
    static const int64_t wfd[2] = {5, 6}, bfd[1] = {5}, yd[2] = {-1, 5}, ad[4] = {-1, 2, 8, 8};
    static const int64_t pads[4] = {1, 1, 1, 1}, k3[2] = {3, 3}, s1[2] = {1, 1};
    pbw g = {0, 0, 0}, a = {0, 0, 0};
    fill(w1, 108, 0.01f), fill(b1, 4, 0.1f), fill(w2, 8, 0.02f), fill(wf, 30, 0.03f), fill(bf, 5, 0.5f);
    pbw_tensor_f32(&g, 5, "w1", w1d, 4, w1);
    pbw_tensor_f32(&g, 5, "b1", b1d, 1, b1);
    pbw_tensor_f32(&g, 5, "w2", w2d, 4, w2);
    pbw_tensor_f32(&g, 5, "wf", wfd, 2, wf);
    pbw_tensor_f32(&g, 5, "bf", bfd, 1, bf);
    pbw_attr_ints(&a, "pads", pads, 4);
    pbw_node(&g, "Conv", "conv1", L("x", "w1", "b1"), L("c1", NULL, NULL), &a);
    pbw_node(&g, "Relu", "relu1", L("c1", NULL, NULL), L("r1", NULL, NULL), NULL);
    pbw_node(&g, "Conv", "conv2", L("r1", "w2", NULL), L("a", NULL, NULL), NULL);
    pbw_attr_ints(&a, "kernel_shape", k3, 2);
    pbw_attr_ints(&a, "strides", s1, 2);
    pbw_attr_ints(&a, "pads", pads, 4);
    pbw_node(&g, "MaxPool", "pool", L("r1", NULL, NULL), L("b", NULL, NULL), &a);
    pbw_attr_int(&a, "axis", 1);
    pbw_node(&g, "Concat", "cat", L("a", "b", NULL), L("cat", NULL, NULL), &a);
    pbw_node(&g, "GlobalAveragePool", "gap", L("cat", NULL, NULL), L("gap", NULL, NULL), NULL);
    pbw_node(&g, "Flatten", "flatten", L("gap", NULL, NULL), L("f", NULL, NULL), NULL);
    pbw_attr_int(&a, "transB", 1);
    pbw_node(&g, "Gemm", "fc", L("f", "wf", "bf"), L("y", NULL, NULL), &a);
    pbw_value_info(&g, 11, "x", 1, xd, 4);
    pbw_value_info(&g, 12, "y", 1, yd, 2);
    pbw_value_info(&g, 12, "a", 1, ad, 4);
    return pbw_model(7, 13, &g);
}

/* What import rewrites: x[N,2,3,3] -> Conv -> BatchNormalization (folded) -> Relu (fused) -> n;
   Shape(n) -> Gather(0) -> Unsqueeze -> Concat([-1]) -> Reshape(n) (folded to a batch reshape)
   -> Identity (dropped) -> y[N,27]. */
static pbw rewritten_onnx(void) {
    static const float w[6] = {1, 2, 3, 4, 5, 6}, b[3] = {0.5f, -1, 2};
    static const float scale[3] = {2, 1, 0.5f}, bias[3] = {1, 0, -1}, mean[3] = {0.5f, 1, -2}, var[3] = {3, 0.25f, 1};
    static const int64_t xd[4] = {-1, 2, 3, 3}, wd[4] = {3, 2, 1, 1}, cd[1] = {3}, one[1] = {1};
    static const int64_t minus1[1] = {-1}, zero = 0, axes0[1] = {0};
    static const char* const bn_in[] = {"c", "scale", "bias", "mean", "var", NULL};
    pbw g = {0, 0, 0}, a = {0, 0, 0};
    pbw_tensor_f32(&g, 5, "W", wd, 4, w);
    pbw_tensor_f32(&g, 5, "B", cd, 1, b);
    pbw_tensor_f32(&g, 5, "scale", cd, 1, scale);
    pbw_tensor_f32(&g, 5, "bias", cd, 1, bias);
    pbw_tensor_f32(&g, 5, "mean", cd, 1, mean);
    pbw_tensor_f32(&g, 5, "var", cd, 1, var);
    pbw_tensor_i64(&g, 5, "zero", NULL, 0, &zero);
    pbw_tensor_i64(&g, 5, "minus1", one, 1, minus1);
    pbw_tensor_i64(&g, 5, "axes", one, 1, axes0);
    pbw_attr_ints(&a, "kernel_shape", wd + 2, 2);
    pbw_node(&g, "Conv", "conv", L("x", "W", "B"), L("c", NULL, NULL), &a);
    pbw_attr_float(&a, "epsilon", 1e-3f);
    pbw_node(&g, "BatchNormalization", "bn", bn_in, L("bn", NULL, NULL), &a);
    pbw_node(&g, "Relu", "relu", L("bn", NULL, NULL), L("n", NULL, NULL), NULL);
    pbw_node(&g, "Shape", "shape", L("n", NULL, NULL), L("s", NULL, NULL), NULL);
    pbw_attr_int(&a, "axis", 0);
    pbw_node(&g, "Gather", "g0", L("s", "zero", NULL), L("b0", NULL, NULL), &a);
    pbw_node(&g, "Unsqueeze", "u0", L("b0", "axes", NULL), L("bu", NULL, NULL), NULL);
    pbw_attr_int(&a, "axis", 0);
    pbw_node(&g, "Concat", "target", L("bu", "minus1", NULL), L("target", NULL, NULL), &a);
    pbw_node(&g, "Reshape", "reshape", L("n", "target", NULL), L("flat", NULL, NULL), NULL);
    pbw_node(&g, "Identity", "id", L("flat", NULL, NULL), L("y", NULL, NULL), NULL);
    pbw_value_info(&g, 11, "x", 1, xd, 4);
    pbw_value_info(&g, 12, "y", 1, NULL, -1);
    return pbw_model(7, 13, &g);
}

/* ---- one model in the four forms it can be loaded from ---------------------------------------- */

enum { FROM_ONNX_FILE, FROM_ONNX_MEMORY, FROM_OPARA_FILE, FROM_OPARA_MEMORY, FROM_BUILDER, FROM_COUNT };
static const char* const from_names[FROM_COUNT] = {"onnx file", "onnx memory", ".opara file", ".opara memory",
                                                   "builder"};

typedef struct sweep_model {
    const char* name;
    pbw onnx;
    uint8_t* image; /* the .opara image (malloc'ed) */
    size_t image_size;
    char onnx_path[64], opara_path[64];
    int64_t batch;
    int has_builder; /* the same model is fixture_build's (tests/opara_model_fixture.h) */
    uint32_t n_inputs, n_outputs;
    float* inputs[4];
    opara_tensor in_tensors[4];
    float* expected[4]; /* outputs of a run without refused allocations */
    size_t out_numel[4];
} sweep_model;

static int write_file(const char* path, const void* data, size_t size) {
    FILE* f = fopen(path, "wb");
    int ok = f && fwrite(data, 1, size, f) == size;
    if (f && fclose(f) != 0) ok = 0;
    return ok;
}

static size_t info_numel(const opara_tensor_info* info) {
    size_t n = 1;
    int32_t d;
    for (d = 0; d < info->rank; ++d) n *= (size_t)info->dims[d];
    return n;
}

/* Loads the ONNX form with the plain allocator, writes the .opara image and both files, makes the
   inputs and runs once for the expected outputs. Returns 0 (with a logged reason) on failure. */
static int sweep_model_prepare(opara_test* T, sweep_model* sm) {
    opara_runtime* rt = NULL;
    opara_model* m = NULL;
    opara_session* s = NULL;
    opara_session_desc sd;
    opara__bytes image = {NULL, 0};
    uint32_t i;
    size_t k;
    int ok = 0;
    snprintf(sm->onnx_path, sizeof sm->onnx_path, "/tmp/opara_oom_%ld_%s.onnx", (long)getpid(), sm->name);
    snprintf(sm->opara_path, sizeof sm->opara_path, "/tmp/opara_oom_%ld_%s.opara", (long)getpid(), sm->name);
    if (opara_runtime_create(NULL, &rt) != OPARA_OK) return 0;
    if (opara_model_load_onnx_memory(rt, sm->onnx.d, sm->onnx.n, NULL, &m) != OPARA_OK) goto done;
    if (opara__format_write(rt, opara__model_graph(m), 0, &image) != OPARA_OK) goto done;
    sm->image = (uint8_t*)malloc(image.size);
    memcpy(sm->image, image.data, image.size);
    sm->image_size = image.size;
    if (!write_file(sm->onnx_path, sm->onnx.d, sm->onnx.n) || !write_file(sm->opara_path, sm->image, sm->image_size))
        goto done;
    memset(&sd, 0, sizeof sd);
    sd.backend = OPARA_BACKEND_CPU;
    sd.threads = 2;
    sd.builtin_gemm = 1;
    sd.batch_size = sm->batch;
    if (opara_session_create(rt, m, &sd, &s) != OPARA_OK) goto done;
    sm->n_inputs = opara_session_input_count(s);
    sm->n_outputs = opara_session_output_count(s);
    if (sm->n_inputs > 4 || sm->n_outputs > 4) goto done;
    for (i = 0; i < sm->n_inputs; ++i) {
        opara_tensor_info info;
        opara_tensor* t = &sm->in_tensors[i];
        if (opara_session_input_info(s, i, &info) != OPARA_OK || info.dtype != OPARA_DTYPE_F32) goto done;
        sm->inputs[i] = (float*)malloc(info_numel(&info) * sizeof(float));
        for (k = 0; k < info_numel(&info); ++k) sm->inputs[i][k] = (float)((int)(k % 13) - 6) * 0.25f;
        memset(t, 0, sizeof *t);
        t->name = NULL;
        t->dtype = info.dtype;
        t->rank = info.rank;
        memcpy(t->dims, info.dims, sizeof t->dims);
        t->data = sm->inputs[i];
    }
    if (opara_session_run(s, sm->in_tensors, sm->n_inputs, NULL, 0) != OPARA_OK) goto done;
    for (i = 0; i < sm->n_outputs; ++i) {
        opara_tensor_info info;
        if (opara_session_output_info(s, i, &info) != OPARA_OK || info.dtype != OPARA_DTYPE_F32) goto done;
        sm->out_numel[i] = info_numel(&info);
        sm->expected[i] = (float*)malloc(sm->out_numel[i] * sizeof(float));
        memcpy(sm->expected[i], opara_session_output_data(s, i), sm->out_numel[i] * sizeof(float));
    }
    ok = 1;
done:
    if (!ok) OT_LOG("%s: preparing failed: %s", sm->name, opara_runtime_last_error(rt));
    opara_session_destroy(s);
    opara_model_destroy(m);
    opara_free(rt, image.data);
    opara_runtime_destroy(rt);
    return ok;
}

static void sweep_model_release(sweep_model* sm) {
    uint32_t i;
    remove(sm->onnx_path);
    remove(sm->opara_path);
    free(sm->onnx.d);
    free(sm->image);
    for (i = 0; i < 4; ++i) free(sm->inputs[i]), free(sm->expected[i]);
}

/* ---- the path, one step at a time ---------------------------------------------------------------- */

enum { STEP_RUNTIME, STEP_LOAD, STEP_SESSION, STEP_RUN, STEP_COUNT };
static const char* const step_names[STEP_COUNT] = {"runtime create", "load", "session create", "run"};

typedef struct chain {
    const sweep_model* sm;
    int from;
    int cuda; /* the session on the CUDA backend (the emulator's libraries) */
    oom_alloc alloc;
    opara_runtime* rt;
    opara_model* m;
    opara_session* s;
    int outputs_ok;
    char build_detail[1024]; /* the builder's detail of a failed build (the builder is gone by then) */
} chain;

/* fixture_build, then finish; the builder's errors are sticky, so finish reports the first. */
static opara_result chain_build(chain* c) {
    opara_builder* b = NULL;
    opara_result r;
    c->build_detail[0] = 0;
    r = opara_builder_create(c->rt, &b);
    if (r != OPARA_OK) return r;
    fixture_build(b);
    r = opara_builder_finish(b, &c->m);
    snprintf(c->build_detail, sizeof c->build_detail, "%s", opara_builder_last_error(b));
    opara_builder_destroy(b);
    return r;
}

static opara_result chain_load(chain* c) {
    const sweep_model* sm = c->sm;
    switch (c->from) {
    case FROM_BUILDER: return chain_build(c);
    case FROM_ONNX_FILE: return opara_model_load_onnx_file(c->rt, sm->onnx_path, NULL, &c->m);
    case FROM_ONNX_MEMORY: return opara_model_load_onnx_memory(c->rt, sm->onnx.d, sm->onnx.n, NULL, &c->m);
    case FROM_OPARA_FILE: return opara_model_load_file(c->rt, sm->opara_path, &c->m);
    default: return opara_model_load_memory(c->rt, sm->image, sm->image_size, &c->m);
    }
}

static int outputs_match(const chain* c) {
    float tol = c->cuda ? 1e-4f : 1e-5f; /* CUDA: other summation orders than the CPU reference's */
    uint32_t i;
    size_t k;
    for (i = 0; i < c->sm->n_outputs; ++i) {
        const float* got = (const float*)opara_session_output_data(c->s, i);
        if (!got) return 0;
        for (k = 0; k < c->sm->out_numel[i]; ++k)
            if (fabsf(got[k] - c->sm->expected[i][k]) > tol * (1.0f + fabsf(c->sm->expected[i][k]))) return 0;
    }
    return 1;
}

static opara_result chain_step(chain* c, int step) {
    opara_runtime_desc rd;
    opara_session_desc sd;
    opara_result r;
    switch (step) {
    case STEP_RUNTIME:
        memset(&rd, 0, sizeof rd);
        rd.allocator.alloc_fn = oom_alloc_fn;
        rd.allocator.free_fn = oom_free_fn;
        rd.allocator.user_data = &c->alloc;
        return opara_runtime_create(&rd, &c->rt);
    case STEP_LOAD: return chain_load(c);
    case STEP_SESSION:
        memset(&sd, 0, sizeof sd);
        sd.backend = c->cuda ? OPARA_BACKEND_CUDA : OPARA_BACKEND_CPU;
        sd.threads = 2;
        sd.builtin_gemm = 1;
        sd.batch_size = c->sm->batch;
        return opara_session_create(c->rt, c->m, &sd, &c->s);
    default:
        r = opara_session_run(c->s, c->sm->in_tensors, c->sm->n_inputs, NULL, 0);
        if (r == OPARA_OK) c->outputs_ok = outputs_match(c);
        return r;
    }
}

static const char* chain_detail(const chain* c, int step) {
    if (step == STEP_RUN) return opara_session_last_error(c->s);
    if (step == STEP_LOAD && c->from == FROM_BUILDER && c->build_detail[0]) return c->build_detail;
    return c->rt ? opara_runtime_last_error(c->rt) : "(no runtime)";
}

/* What went wrong in one pass (the first problem only). */
typedef struct pass_result {
    int bad;
    char what[400];
    long bypassed; /* malloc/calloc/realloc/free calls of the library's code (the hook was bypassed) */
    int failed_step; /* the first step that failed, -1: none */
} pass_result;

static void pass_fail(pass_result* pr, const char* fmt, ...) OT__PRINTF(2, 3);
static void pass_fail(pass_result* pr, const char* fmt, ...) {
    va_list args;
    if (pr->bad++) return;
    va_start(args, fmt);
    vsnprintf(pr->what, sizeof pr->what, fmt, args);
    va_end(args);
}

/* Runs the whole path once with allocation fail_at refused; returns the allocations asked for. */
/* The emulator's control API (NULL on a real driver). */
typedef int (*emu_config_fn)(const char* key, long long value);
typedef long long (*emu_stat_fn)(const char* key);
static emu_config_fn emu_config;
static emu_stat_fn emu_stat;

/* The error codes a call may return when allocation fails: out of host memory, and on CUDA out of
   device memory when the emulator refuses a device allocation. */
static int oom_code(opara_result r, int device) {
    return r == OPARA_ERR_OUT_OF_MEMORY || (device && r == OPARA_ERR_DEVICE_MEMORY);
}

/* Runs the whole path once with host allocation fail_at refused, or with device_fail_at the
   emulator's device allocation to refuse; returns the host allocations asked for. */
static long chain_pass_on(const sweep_model* sm, int from, int cuda, long fail_at, int persistent, long device_fail_at,
                          pass_result* pr) {
    chain c;
    int step;
    long live_runtime = 0;
    long long device0 = cuda && emu_stat ? emu_stat("allocations") : 0;
    long long contexts0 = cuda && emu_stat ? emu_stat("live_contexts") : 0;
    memset(&c, 0, sizeof c);
    c.sm = sm;
    c.from = from;
    c.cuda = cuda;
    pr->failed_step = -1;
    c.alloc.fail_at = fail_at;
    c.alloc.persistent = persistent;
    bypass_calls = 0;
    for (step = 0; step < STEP_COUNT; ++step) {
        long refused_before = c.alloc.refused;
        opara_result r;
        if (device_fail_at && step == STEP_SESSION) emu_config("fail_alloc", device_fail_at);
        r = chain_step(&c, step);
        if (device_fail_at && step == STEP_SESSION) emu_config("fail_alloc", 0);
        if (r != OPARA_OK) {
            const char* detail = chain_detail(&c, step);
            if (pr->failed_step < 0) pr->failed_step = step;
            if (!oom_code(r, device_fail_at != 0)) {
                pass_fail(pr, "%s returned %s (%s)", step_names[step], opara_result_string(r), detail);
                break;
            }
            if (!device_fail_at && c.alloc.refused == refused_before)
                pass_fail(pr, "%s returned OUT_OF_MEMORY with no allocation refused", step_names[step]);
            if (!detail || !detail[0]) pass_fail(pr, "%s: OUT_OF_MEMORY without a detail", step_names[step]);
            if (persistent) break;
            r = chain_step(&c, step); /* allocations succeed again: the same call must now work */
            if (r != OPARA_OK) {
                pass_fail(pr, "%s failed again after one refused allocation: %s (%s)", step_names[step],
                          opara_result_string(r), chain_detail(&c, step));
                break;
            }
        }
        if (step == STEP_RUNTIME) live_runtime = c.alloc.live;
        if (step == STEP_RUN && !c.outputs_ok) pass_fail(pr, "run succeeded with wrong outputs");
    }
    opara_session_destroy(c.s);
    opara_model_destroy(c.m);
    /* (a CUDA runtime keeps what its first session loaded until it is destroyed) */
    if (c.rt && !cuda && c.alloc.live != live_runtime)
        pass_fail(pr, "%ld allocations leaked by the model or session", c.alloc.live - live_runtime);
    opara_runtime_destroy(c.rt);
    if (c.alloc.live != 0) pass_fail(pr, "%ld allocations live after runtime destroy", c.alloc.live);
    if (cuda && emu_stat && emu_stat("allocations") != device0)
        pass_fail(pr, "%lld device/pinned allocations left", emu_stat("allocations") - device0);
    if (cuda && emu_stat && emu_stat("live_contexts") != contexts0) pass_fail(pr, "a context is left retained");
    pr->bypassed = bypass_calls;
    return c.alloc.count;
}

static long chain_pass(const sweep_model* sm, int from, long fail_at, int persistent, pass_result* pr) {
    return chain_pass_on(sm, from, 0, fail_at, persistent, 0, pr);
}

static long sweep_stride(void) {
    const char* s = getenv("OPARA_OOM_STRIDE");
    long v = s ? atol(s) : 1;
    return v > 0 ? v : 1;
}

/* Every N from 1 to the allocations of a clean pass, once and from N on. */
static void sweep(opara_test* T, const sweep_model* sm, int from) {
    pass_result clean;
    long total, n, stride = sweep_stride(), tried = 0, bad = 0, bypassed;
    int persistent;
    memset(&clean, 0, sizeof clean);
    total = chain_pass(sm, from, 0, 0, &clean);
    bypassed = clean.bypassed;
    if (clean.bad) {
        ot__fail_at(T, __FILE__, __LINE__, "%s from %s without refused allocations: %s", sm->name, from_names[from],
                    clean.what);
        return;
    }
    for (persistent = 0; persistent < 2; ++persistent)
        for (n = 1; n <= total; n += stride) {
            pass_result pr;
            memset(&pr, 0, sizeof pr);
            chain_pass(sm, from, n, persistent, &pr);
            tried++;
            bypassed += pr.bypassed;
            if (pr.bad && bad++ < 8)
                ot__fail_at(T, __FILE__, __LINE__, "%s from %s, allocation %ld refused %s: %s", sm->name,
                            from_names[from], n, persistent ? "from then on" : "once", pr.what);
        }
    if (bad > 8) ot__fail_at(T, __FILE__, __LINE__, "... %ld failing passes in all", bad);
    if (bypassed)
        ot__fail_at(T, __FILE__, __LINE__, "%s from %s: %ld malloc/free calls bypassed the allocator hook", sm->name,
                    from_names[from], bypassed);
    printf("  %s from %s: %ld allocations, %ld failure points tried (once and from N on), %ld bad\n", sm->name,
           from_names[from], total, tried, bad);
}

static void sweep_all_forms(opara_test* T, sweep_model* sm) {
    int from;
    REQUIRE(sweep_model_prepare(T, sm));
    for (from = 0; from < FROM_COUNT; ++from)
        if (from != FROM_BUILDER || sm->has_builder) sweep(T, sm, from);
    sweep_model_release(sm);
}

OT_TEST(oom_sweep_branchy_model) {
    sweep_model sm;
    memset(&sm, 0, sizeof sm);
    sm.name = "branchy";
    sm.onnx = branchy_onnx();
    sm.batch = 2;
    sm.has_builder = 1;
    sweep_all_forms(T, &sm);
}

OT_TEST(oom_sweep_rewritten_model) {
    sweep_model sm;
    memset(&sm, 0, sizeof sm);
    sm.name = "rewritten";
    sm.onnx = rewritten_onnx();
    sm.batch = 3;
    sweep_all_forms(T, &sm);
}

/* The ONNX file at path into m (malloc'ed); 0 when it cannot be read. */
static int read_onnx(const char* path, pbw* m) {
    FILE* f = fopen(path, "rb");
    long size;
    int ok = 0;
    memset(m, 0, sizeof *m);
    if (!f) return 0;
    if (fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0) {
        m->d = (uint8_t*)malloc((size_t)size);
        m->n = m->cap = (size_t)size;
        ok = m->d && fread(m->d, 1, m->n, f) == m->n;
    }
    fclose(f);
    return ok;
}

/* make test-oom: the sweep on zoo models (build/zoo/NAME.onnx, float inputs), named in
   OPARA_OOM_MODELS ("squeezenet,ppocr_det"); OPARA_OOM_STRIDE thins the failure points. */
OT_TEST(oom_sweep_zoo_models) {
    const char* list = getenv("OPARA_OOM_MODELS");
    char names[256], *name, *save = NULL;
    if (!list || !*list) SKIP("set OPARA_OOM_MODELS=squeezenet,... (make test-oom does)");
    snprintf(names, sizeof names, "%s", list);
    for (name = strtok_r(names, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
        sweep_model sm;
        char path[512];
        memset(&sm, 0, sizeof sm);
        snprintf(path, sizeof path, "build/zoo/%s.onnx", name);
        sm.name = name;
        sm.batch = 1;
        if (!read_onnx(path, &sm.onnx)) {
            ot__fail_at(T, __FILE__, __LINE__, "cannot read %s (make zoo)", path);
            continue;
        }
        sweep_all_forms(T, &sm);
    }
}

/* Loads the emulator's control API; 0 (with the reason) when the CUDA libraries are not the emulator's. */
static int emu_open(char* why, size_t cap) {
    char err[256];
    void* h = opara_dl_open(driver_path(), err, sizeof err);
    if (!h) {
        snprintf(why, cap, "cannot load %s: %s", driver_path(), err);
        return 0;
    }
    *(void**)(&emu_config) = opara_dl_sym(h, "opara_emu_config");
    *(void**)(&emu_stat) = opara_dl_sym(h, "opara_emu_stat");
    if (!emu_config || !emu_stat) {
        snprintf(why, cap, "%s is not the emulator (no fault injection)", driver_path());
        return 0;
    }
    return 1; /* h stays open: the functions are used until the process ends */
}

/* The same path with the session on the CUDA backend (graph mode) on the emulator: every host
   allocation refused once and from N on, then every device/pinned allocation of session creation
   refused by the emulator (OPARA_ERR_DEVICE_MEMORY or OUT_OF_MEMORY), with no device memory or
   context left once the runtime is destroyed. The model comes from its .opara image in memory (the
   load paths are swept above). */
OT_TEST(oom_sweep_cuda_session) {
    sweep_model sm;
    pass_result clean;
    char why[512];
    long total, n, tried = 0, bad = 0, device_points = 0, bypassed = 0, stride = sweep_stride();
    int persistent;
    if (!emu_open(why, sizeof why)) SKIP("%s", why);
    setenv("OPARA_CUDA_DRIVER", driver_path(), 0);
    setenv("OPARA_CUBLAS", cublas_path(), 0);
    setenv("OPARA_CUDNN", cudnn_path(), 0);
    memset(&sm, 0, sizeof sm);
    sm.name = "branchy";
    sm.onnx = branchy_onnx();
    sm.batch = 2;
    REQUIRE(sweep_model_prepare(T, &sm));
    memset(&clean, 0, sizeof clean);
    total = chain_pass_on(&sm, FROM_OPARA_MEMORY, 1, 0, 0, 0, &clean);
    if (clean.bad) {
        ot__fail_at(T, __FILE__, __LINE__, "CUDA session without refused allocations: %s", clean.what);
        sweep_model_release(&sm);
        return;
    }
    for (persistent = 0; persistent < 2; ++persistent)
        for (n = 1; n <= total; n += stride) {
            pass_result pr;
            memset(&pr, 0, sizeof pr);
            chain_pass_on(&sm, FROM_OPARA_MEMORY, 1, n, persistent, 0, &pr);
            tried++;
            bypassed += pr.bypassed;
            if (pr.bad && bad++ < 8)
                ot__fail_at(T, __FILE__, __LINE__, "CUDA: host allocation %ld refused %s: %s", n,
                            persistent ? "from then on" : "once", pr.what);
        }
    for (n = 1; n < 1000; ++n) { /* until session creation makes fewer than n device allocations */
        pass_result pr;
        memset(&pr, 0, sizeof pr);
        chain_pass_on(&sm, FROM_OPARA_MEMORY, 1, 0, 0, n, &pr);
        if (pr.bad && bad++ < 8) ot__fail_at(T, __FILE__, __LINE__, "CUDA: device allocation %ld refused: %s", n, pr.what);
        if (pr.failed_step < 0) break; /* session creation made fewer than n device allocations */
        device_points++;
    }
    if (bad > 8) ot__fail_at(T, __FILE__, __LINE__, "... %ld failing passes in all", bad);
    if (bypassed) ot__fail_at(T, __FILE__, __LINE__, "CUDA: %ld malloc/free calls bypassed the allocator hook", bypassed);
    printf("  branchy on CUDA (emulator): %ld host allocations, %ld host failure points tried (once and from N on), "
           "%ld device failure points, %ld bad\n", total, tried, device_points, bad);
    sweep_model_release(&sm);
}

static const opara_test_case tests[] = {
    OT_CASE(oom_sweep_branchy_model),
    OT_CASE(oom_sweep_rewritten_model),
    OT_CASE(oom_sweep_cuda_session),
    OT_CASE(oom_sweep_zoo_models),
};

int main(int argc, char** argv) { return opara_test_main(argc, argv, tests, OT_COUNT(tests)); }
