/* Convolutions through cuDNN at run time, on the CUDA emulator (tests/cudaemu; or a real GPU with
   OPARA_CUDA_DRIVER / OPARA_CUBLAS / OPARA_CUDNN): a model with every kind of Conv the backend
   sends to cuDNN (bias + fused Relu, bias alone, plain, depthwise with fused Relu and no bias,
   grouped rectangular, 1-D) and one it keeps on its own kernel (asymmetric padding), built with the
   public builder and run in the three modes under five emulator seeds against the CPU backend;
   the emulator's cuDNN call counters prove cuDNN ran (eager: per run; graph: captured once, then
   its kernels replayed); a missing cuDNN (OPARA_CUDNN pointing nowhere) is an INFO log naming the
   path and the same outputs from our kernel; and the cuDNN fake's documented rules (RELU and IDENTITY
   only, the algorithm's workspace, described extents inside device
   allocations, beta = 0 never reads y). */
#define _GNU_SOURCE
#define OPARA_IMPLEMENTATION
#include "opara.h"
#include "opara_test.h"

#include <dlfcn.h>
#include <math.h>

#include "cuda_test_env.h"
#include "test_sched_util.h"

#define NMSE_MAX 1e-8
#define N_IN 2
#define N_OUT 5
#define N_CONV 7
#define N_CUDNN 6 /* all but the asymmetric padding */

/* ---- the emulator's hooks (absent on real libraries: those checks are skipped) ---------------- */

typedef int (*emu_config_fn)(const char* key, long long value);
typedef long long (*emu_calls_fn)(const char* name);
typedef int (*emu_function_fn)(const char* name, opara_CUfunction* f);

typedef struct emu_hooks {
    void *driver, *dnn; /* held open: the cuDNN fake's counters live as long as the library */
    emu_config_fn config;
    emu_calls_fn calls;
    emu_function_fn function;
} emu_hooks;

static void hooks_open(emu_hooks* h) {
    memset(h, 0, sizeof *h);
    h->driver = dlopen(driver_path(), RTLD_NOW);
    h->dnn = dlopen(cudnn_path(), RTLD_NOW);
    if (h->driver) *(void**)(&h->config) = dlsym(h->driver, "opara_emu_config");
    if (h->driver) *(void**)(&h->function) = dlsym(h->driver, "opara_emu_function");
    if (h->dnn) *(void**)(&h->calls) = dlsym(h->dnn, "opara_emu_cudnn_calls");
}
static void hooks_close(emu_hooks* h) {
    if (h->dnn) dlclose(h->dnn);
    if (h->driver) dlclose(h->driver);
}
static long long fwd_calls(const emu_hooks* h) { return h->calls ? h->calls("cudnnConvolutionForward") : 0; }
static long long fused_calls(const emu_hooks* h) { return h->calls ? h->calls("cudnnConvolutionBiasActivationForward") : 0; }

/* ---- the model ----------------------------------------------------------------------------------- */

static unsigned rng = 12345u;
static float frand(void) {
    rng = rng * 1664525u + 1013904223u;
    return (float)((rng >> 8) & 0xffff) / 32768.0f - 1.0f;
}

static void add_weight(opara_builder* b, const char* name, int32_t rank, int64_t d0, int64_t d1, int64_t d2, int64_t d3) {
    int64_t dims[4];
    float* data;
    size_t n = 1, i;
    int32_t k;
    dims[0] = d0, dims[1] = d1, dims[2] = d2, dims[3] = d3;
    for (k = 0; k < rank; ++k) n *= (size_t)dims[k];
    data = (float*)malloc(n * sizeof(float));
    if (!data) return; /* the builder's finish then fails on the missing tensor */
    for (i = 0; i < n; ++i) data[i] = 0.5f * frand();
    opara_builder_add_constant(b, name, OPARA_DTYPE_F32, rank, dims, data, n * sizeof(float));
    free(data);
}

static opara_attr ints_attr(const char* name, uint32_t count, const int64_t* v) {
    opara_attr a;
    memset(&a, 0, sizeof a);
    a.name = name, a.type = OPARA_ATTR_INTS, a.count = count, a.v.ints = v;
    return a;
}
static opara_attr int_attr(const char* name, int64_t v) {
    opara_attr a;
    memset(&a, 0, sizeof a);
    a.name = name, a.type = OPARA_ATTR_INT, a.v.i = v;
    return a;
}
static opara_attr relu_attr(void) { /* what the ONNX importer sets when it fuses a Relu into a Conv */
    opara_attr a;
    memset(&a, 0, sizeof a);
    a.name = "activation", a.type = OPARA_ATTR_STRING, a.v.s = "Relu";
    return a;
}

static void conv(opara_builder* b, const char* name, const char* x, const char* w, const char* bias, const char* y,
                 uint32_t n_attrs, const opara_attr* attrs) {
    const char* ins[3];
    ins[0] = x, ins[1] = w, ins[2] = bias;
    opara_builder_add_node(b, "Conv", name, bias ? 3 : 2, ins, 1, &y, n_attrs, attrs);
}

/* x [2,4,9,9], s [2,3,24]:
     a  = Relu(Conv3x3(x) + b1)            bias + fused Relu
     bb = Conv3x3(a) + b2                  bias, identity (a 3x3 for which the heuristics prefer an
                                           algorithm IDENTITY does not allow)
     c  = Conv3x3 dil 2 stride 2 (x)       plain
     d  = Relu(depthwise 3x3 (a))          fused Relu without a bias
     e  = grouped 5x3 (x) + b5             grouped, rectangular
     f  = Conv2x2 pads 0,0,1,1 (x)         asymmetric padding: our kernel
     g  = Conv1d k5 stride 2 (s) + b7      1-D as H = 1
   outputs bd = bb + d, c, e, f, g */
static opara_model* build_model(opara_runtime* rt) {
    opara_builder* b = NULL;
    opara_model* m = NULL;
    int64_t xd[4] = {2, 4, 9, 9}, sd[3] = {2, 3, 24}, p1[4] = {1, 1, 1, 1}, p2[4] = {2, 2, 2, 2}, s2[2] = {2, 2};
    int64_t d2[2] = {2, 2}, pg[4] = {2, 1, 2, 1}, pa[4] = {0, 0, 1, 1}, p1d[2] = {2, 2}, s1d[1] = {2};
    const char *add_in[2], *add_out = "bd";
    opara_attr at[4];
    if (opara_builder_create(rt, &b) != OPARA_OK) return NULL;
    opara_builder_add_input(b, "x", OPARA_DTYPE_F32, 4, xd);
    opara_builder_add_input(b, "s", OPARA_DTYPE_F32, 3, sd);
    add_weight(b, "w1", 4, 8, 4, 3, 3), add_weight(b, "b1", 1, 8, 0, 0, 0);
    add_weight(b, "w2", 4, 8, 8, 3, 3), add_weight(b, "b2", 1, 8, 0, 0, 0);
    add_weight(b, "w3", 4, 8, 4, 3, 3), add_weight(b, "w4", 4, 8, 1, 3, 3);
    add_weight(b, "w5", 4, 6, 2, 5, 3), add_weight(b, "b5", 1, 6, 0, 0, 0);
    add_weight(b, "w6", 4, 4, 4, 2, 2), add_weight(b, "w7", 3, 5, 3, 5, 0), add_weight(b, "b7", 1, 5, 0, 0, 0);
    at[0] = ints_attr("pads", 4, p1), at[1] = relu_attr();
    conv(b, "conv_bias_relu", "x", "w1", "b1", "a", 2, at);
    conv(b, "conv_bias", "a", "w2", "b2", "bb", 1, at);
    at[0] = ints_attr("pads", 4, p2), at[1] = ints_attr("strides", 2, s2), at[2] = ints_attr("dilations", 2, d2);
    conv(b, "conv_plain", "x", "w3", NULL, "c", 3, at);
    at[0] = ints_attr("pads", 4, p1), at[1] = int_attr("group", 8), at[2] = relu_attr();
    conv(b, "conv_depthwise_relu", "a", "w4", NULL, "d", 3, at);
    at[0] = ints_attr("pads", 4, pg), at[1] = int_attr("group", 2);
    conv(b, "conv_grouped", "x", "w5", "b5", "e", 2, at);
    at[0] = ints_attr("pads", 4, pa);
    conv(b, "conv_asymmetric", "x", "w6", NULL, "f", 1, at);
    at[0] = ints_attr("pads", 2, p1d), at[1] = ints_attr("strides", 1, s1d);
    conv(b, "conv_1d", "s", "w7", "b7", "g", 2, at);
    add_in[0] = "bb", add_in[1] = "d";
    opara_builder_add_node(b, "Add", "add", 2, add_in, 1, &add_out, 0, NULL);
    opara_builder_add_output(b, "bd"), opara_builder_add_output(b, "c"), opara_builder_add_output(b, "e");
    opara_builder_add_output(b, "f"), opara_builder_add_output(b, "g");
    if (opara_builder_finish(b, &m) != OPARA_OK) m = NULL;
    opara_builder_destroy(b);
    return m;
}

/* ---- data: inputs and the CPU backend's outputs --------------------------------------------------- */

typedef struct io {
    opara_tensor in[N_IN], ref[N_OUT];
    size_t in_n[N_IN], out_n[N_OUT];
} io;

static size_t numel(const opara_tensor_info* ti) {
    size_t n = 1;
    int32_t d;
    for (d = 0; d < ti->rank; ++d) n *= (size_t)ti->dims[d];
    return n;
}

static void tensor_from_info(opara_tensor* t, const opara_tensor_info* ti, size_t n) {
    int32_t d;
    memset(t, 0, sizeof *t);
    t->name = ti->name, t->dtype = ti->dtype, t->rank = ti->rank;
    for (d = 0; d < ti->rank; ++d) t->dims[d] = ti->dims[d];
    t->data = calloc(n ? n : 1, sizeof(float));
}

static void io_free(io* d) {
    int i;
    for (i = 0; i < N_IN; ++i) free(d->in[i].data);
    for (i = 0; i < N_OUT; ++i) free(d->ref[i].data);
}

static int cpu_reference(opara_runtime* rt, opara_model* m, io* d) {
    opara_session* s = NULL;
    opara_session_desc sd;
    uint32_t i;
    size_t e;
    int ok;
    memset(d, 0, sizeof *d);
    memset(&sd, 0, sizeof sd);
    sd.backend = OPARA_BACKEND_CPU;
    sd.builtin_gemm = 1;
    if (opara_session_create(rt, m, &sd, &s) != OPARA_OK) return 0;
    ok = opara_session_input_count(s) == N_IN && opara_session_output_count(s) == N_OUT;
    for (i = 0; ok && i < N_IN; ++i) {
        opara_tensor_info ti;
        opara_session_input_info(s, i, &ti);
        d->in_n[i] = numel(&ti);
        tensor_from_info(&d->in[i], &ti, d->in_n[i]);
        ok = d->in[i].data != NULL;
        for (e = 0; ok && e < d->in_n[i]; ++e) ((float*)d->in[i].data)[e] = (float)sin(0.31 * (double)e + i);
    }
    for (i = 0; ok && i < N_OUT; ++i) {
        opara_tensor_info ti;
        opara_session_output_info(s, i, &ti);
        d->out_n[i] = numel(&ti);
        tensor_from_info(&d->ref[i], &ti, d->out_n[i]);
        ok = d->ref[i].data != NULL;
    }
    ok = ok && opara_session_run(s, d->in, N_IN, d->ref, N_OUT) == OPARA_OK;
    opara_session_destroy(s);
    return ok;
}

static double nmse(const float* ref, const float* got, size_t n) {
    double num = 0, den = 0;
    size_t i;
    for (i = 0; i < n; ++i) {
        num += ((double)ref[i] - got[i]) * ((double)ref[i] - got[i]);
        den += (double)ref[i] * ref[i];
    }
    if (num != num) return 1.0;
    return den > 0 ? num / den : num;
}

/* One run of a CUDA session; the worst NMSE over the outputs against the CPU's (2 on failure). */
static double cuda_run(opara__cuda_session* s, const io* d) {
    const void* ins[N_IN];
    void* outs[N_OUT];
    double worst = 0;
    int i, ok = 1;
    for (i = 0; i < N_IN; ++i) ins[i] = d->in[i].data;
    for (i = 0; i < N_OUT; ++i) ok = ok && (outs[i] = calloc(d->out_n[i], sizeof(float))) != NULL;
    if (ok && opara__cuda_session_run(s, ins, outs) == OPARA_OK) {
        for (i = 0; i < N_OUT; ++i) {
            double e = nmse((const float*)d->ref[i].data, (const float*)outs[i], d->out_n[i]);
            if (e > worst) worst = e;
        }
    } else {
        worst = 2.0;
    }
    for (i = 0; i < N_OUT; ++i) free(outs[i]);
    return worst;
}

/* ---- helpers --------------------------------------------------------------------------------------- */

typedef struct log_capture {
    char text[4096];
    int fallback_items;
} log_capture;

static void capture_log(opara_log_level level, opara_log_item item, const char* message, void* user) {
    log_capture* c = (log_capture*)user;
    size_t at = strlen(c->text);
    if (level == OPARA_LOG_INFO && item == OPARA_LOGITEM_BACKEND_FALLBACK) c->fallback_items++;
    if (at + strlen(message) + 2 < sizeof c->text) opara__format(c->text + at, sizeof c->text - at, "%s\n", message);
}

static opara_runtime* make_runtime(log_capture* logs) {
    opara_runtime* rt = NULL;
    opara_runtime_desc d;
    memset(&d, 0, sizeof d);
    if (logs) {
        memset(logs, 0, sizeof *logs);
        d.logger.func = capture_log;
        d.logger.user_data = logs;
        d.logger.max_level = OPARA_LOG_INFO;
    }
    opara_runtime_create(&d, &rt);
    return rt;
}

static opara__cuda_options options(opara__cuda_mode mode) { return cuda_test_options(mode); }

static const char* const mode_names[3] = {"eager", "graph", "seq-graph"};

/* Kernel nodes of the captured graph that run the cuDNN fake's convolution kernel. */
static int graph_dnn_kernels(const opara__cuda_session* s, const emu_hooks* h) {
    const opara_cuda_driver* cu = opara__cuda_session_driver(s);
    opara__cuda_info info;
    opara_CUgraphNode nodes[128];
    opara_CUfunction conv_fn = NULL;
    size_t n = 128, i;
    int count = 0;
    opara__cuda_session_info(s, &info);
    if (!h->function || h->function("opara_emulib_conv2d", &conv_fn) != 0 || !info.graph) return -1;
    if (cu->cuGraphGetNodes(info.graph, nodes, &n) != OPARA_CUDA_SUCCESS || n > 128) return -1;
    for (i = 0; i < n; ++i) {
        opara_CUgraphNodeType type;
        opara_CUDA_KERNEL_NODE_PARAMS kp;
        if (cu->cuGraphNodeGetType(nodes[i], &type) != OPARA_CUDA_SUCCESS || type != OPARA_CU_GRAPH_NODE_TYPE_KERNEL) continue;
        if (cu->cuGraphKernelNodeGetParams_v2(nodes[i], &kp) == OPARA_CUDA_SUCCESS && kp.func == conv_fn) ++count;
    }
    return count;
}

/* The library workspaces against the plan: two nodes whose workspace bytes overlap are ordered by
   the plan's happens-before (rebuilt here from stream order and waits, independently of the
   backend), and every node with a library call has a workspace slot. */
static void check_workspaces(opara_test* T, const opara__cuda_info* info) {
    const opara__plan* p = info->plan;
    size_t words = 0;
    uint64_t* hb = tg_hb_build(p, &words);
    uint32_t a, b, i, with = 0;
    REQUIRE(hb != NULL);
    for (i = 0; i < info->n_launches; ++i) {
        const opara__cuda_launch* L = &info->launches[i];
        if (L->type == OPARA__CULAUNCH_CUBLAS || (L->type == OPARA__CULAUNCH_CUDNN && info->workspace_slot[L->node] != UINT32_MAX))
            CHECK(info->workspace_slot[L->node] < info->n_workspaces);
    }
    for (a = 0; a < p->n_nodes; ++a) {
        uint32_t sa = info->workspace_slot[a];
        if (sa == UINT32_MAX) continue;
        with++;
        for (b = 0; b < a; ++b) {
            uint32_t sb = info->workspace_slot[b];
            if (sb == UINT32_MAX || info->workspace_offset[sa] + info->workspace_size[sa] <= info->workspace_offset[sb] ||
                info->workspace_offset[sb] + info->workspace_size[sb] <= info->workspace_offset[sa])
                continue;
            if (!((hb[(size_t)a * words + b / 64] >> (b % 64)) & 1u) && !((hb[(size_t)b * words + a / 64] >> (a % 64)) & 1u)) {
                OT_LOG("nodes %u and %u share workspace bytes but may run at the same time", b, a);
                CHECK(0);
            }
        }
    }
    free(hb);
    CHECK(with > 0);
}

/* ---- tests ----------------------------------------------------------------------------------------- */

/* One mode: create, check the lowering and the library calls, run under five seeds. */
static void check_mode(opara_test* T, opara_runtime* rt, opara_model* m, const io* d, const emu_hooks* h, int mode) {
    opara__cuda_options o = options((opara__cuda_mode)mode);
    opara__cuda_session* s = NULL;
    opara__cuda_info info;
    long long f0 = fwd_calls(h), b0 = fused_calls(h);
    double worst = 0;
    int seed;
    if (opara__cuda_session_create(rt, &m->graph, &o, &s) != OPARA_OK) {
        OT_LOG("%s: %s", mode_names[mode], opara_runtime_last_error(rt));
        CHECK(0);
        return;
    }
    opara__cuda_session_info(s, &info);
    CHECK_EQ(mode, info.mode); /* graph modes capture cuDNN calls: no fallback */
    CHECK(info.cudnn);
    CHECK_EQ(N_CUDNN, info.n_cudnn_convs);
    CHECK(info.workspace_bytes > 0);
    check_workspaces(T, &info);
    if (h->calls && mode != 0) { /* the warm-up run and the capture call cuDNN, replays do not */
        CHECK_EQ(2, fwd_calls(h) - f0);
        CHECK_EQ(2 * (N_CUDNN - 1), fused_calls(h) - b0);
        CHECK_EQ(N_CUDNN, graph_dnn_kernels(s, h));
    }
    for (seed = 1; seed <= 5; ++seed) {
        long long f1 = fwd_calls(h), b1 = fused_calls(h);
        double e;
        if (h->config) h->config("seed", 4099 * seed);
        e = cuda_run(s, d);
        if (e > worst) worst = e;
        if (!(e <= NMSE_MAX)) {
            OT_LOG("%s seed %d: NMSE %g (%s)", mode_names[mode], seed, e, opara_runtime_last_error(rt));
            CHECK(0);
        }
        if (h->calls) { /* eager: one cuDNN call per cuDNN Conv per run */
            CHECK_EQ(mode == 0 ? 1 : 0, fwd_calls(h) - f1);
            CHECK_EQ(mode == 0 ? N_CUDNN - 1 : 0, fused_calls(h) - b1);
        }
    }
    printf("%-9s %u streams, %u of %d Conv on cuDNN, workspaces %llu B in %u slots, 5 seeds: worst NMSE vs CPU %.2e\n",
           mode_names[mode], info.plan->n_streams, info.n_cudnn_convs, N_CONV, (unsigned long long)info.workspace_bytes,
           info.n_workspaces, worst);
    opara__cuda_session_destroy(s);
}

OT_TEST(convolutions_run_on_cudnn_and_match_the_cpu_backend) {
    char why[512];
    emu_hooks h;
    opara_runtime* rt;
    opara_model* m;
    io d;
    int mode;
    if (!opara__cuda_available(driver_path(), why, sizeof why)) SKIP("no CUDA driver: %s", why);
    hooks_open(&h);
    rt = make_runtime(NULL);
    m = build_model(rt);
    if (!m) OT_LOG("%s", opara_runtime_last_error(rt));
    if (m && cpu_reference(rt, m, &d)) {
        for (mode = 0; mode < 3; ++mode) check_mode(T, rt, m, &d, &h, mode);
        io_free(&d);
    } else {
        OT_LOG("model or CPU reference: %s", opara_runtime_last_error(rt));
        CHECK(0);
    }
    opara_model_destroy(m);
    opara_runtime_destroy(rt);
    hooks_close(&h);
}

/* OPARA_CUDNN pointing nowhere: an INFO log naming the path, every Conv on our kernel, same
   outputs; likewise the no_cudnn option (without a log: it is a choice). */
OT_TEST(missing_cudnn_logs_the_path_and_uses_our_kernel) {
    static const char missing[] = "/nonexistent/opara-test/libcudnn.so.9";
    char why[512], *saved;
    const char* old = getenv("OPARA_CUDNN");
    emu_hooks h;
    log_capture logs;
    opara_runtime* rt;
    opara_model* m;
    io d;
    int pass;
    if (!opara__cuda_available(driver_path(), why, sizeof why)) SKIP("no CUDA driver: %s", why);
    saved = old ? (char*)malloc(strlen(old) + 1) : NULL;
    if (saved) memcpy(saved, old, strlen(old) + 1);
    hooks_open(&h);
    rt = make_runtime(&logs);
    m = build_model(rt);
    REQUIRE(m && cpu_reference(rt, m, &d));
    for (pass = 0; pass < 2; ++pass) {
        opara__cuda_options o = options(OPARA__CUDA_GRAPH);
        opara__cuda_session* s = NULL;
        opara__cuda_info info;
        long long calls = fwd_calls(&h) + fused_calls(&h);
        double e;
        if (pass == 0) {
            setenv("OPARA_CUDNN", missing, 1);
            o.cudnn_path = NULL;
        } else {
            o.no_cudnn = 1;
        }
        logs.text[0] = 0, logs.fallback_items = 0;
        if (opara__cuda_session_create(rt, &m->graph, &o, &s) != OPARA_OK) {
            OT_LOG("pass %d: %s", pass, opara_runtime_last_error(rt));
            CHECK(0);
            continue;
        }
        opara__cuda_session_info(s, &info);
        CHECK_EQ(0, info.cudnn);
        CHECK_EQ(0, info.n_cudnn_convs);
        CHECK_EQ(OPARA__CUDA_GRAPH, info.mode);
        if (pass == 0) {
            CHECK(logs.fallback_items >= 1);
            CHECK(strstr(logs.text, missing) != NULL);
            CHECK(strstr(logs.text, "OPARA_CUDNN") != NULL);
        } else {
            CHECK(strstr(logs.text, "cuDNN not loaded") == NULL);
        }
        e = cuda_run(s, &d);
        CHECK(e <= NMSE_MAX);
        CHECK_EQ(calls, fwd_calls(&h) + fused_calls(&h)); /* cuDNN never called */
        OT_LOG("pass %d log:\n%s", pass, logs.text);
        if (pass == 0) printf("missing cuDNN: NMSE vs CPU %.2e with opara_conv2d_f32\n", e);
        opara__cuda_session_destroy(s);
    }
    if (saved) setenv("OPARA_CUDNN", saved, 1);
    else unsetenv("OPARA_CUDNN");
    free(saved);
    io_free(&d);
    opara_model_destroy(m);
    opara_runtime_destroy(rt);
    hooks_close(&h);
}

/* ---- 16-byte alignment of library pointers ----------------------------------------------------------- */

/* x [1,2,1,3] -> y_k = Conv1x1(x, w_k) [1,1,1,3] for k = 0, 1 -> cat = Concat(y0, y1) axis 1: y1's slice
   starts 12 bytes into cat. */
static opara_model* build_concat_model(opara_runtime* rt) {
    opara_builder* b = NULL;
    opara_model* m = NULL;
    int64_t xd[4] = {1, 2, 1, 3};
    const char *cat_in[2], *cat = "cat";
    opara_attr axis = int_attr("axis", 1);
    if (opara_builder_create(rt, &b) != OPARA_OK) return NULL;
    opara_builder_add_input(b, "x", OPARA_DTYPE_F32, 4, xd);
    add_weight(b, "w0", 4, 1, 2, 1, 1), add_weight(b, "w1", 4, 1, 2, 1, 1);
    conv(b, "conv0", "x", "w0", NULL, "y0", 0, NULL);
    conv(b, "conv1", "x", "w1", NULL, "y1", 0, NULL);
    cat_in[0] = "y0", cat_in[1] = "y1";
    opara_builder_add_node(b, "Concat", "cat", 2, cat_in, 1, &cat, 1, &axis);
    opara_builder_add_output(b, "cat");
    if (opara_builder_finish(b, &m) != OPARA_OK) m = NULL;
    opara_builder_destroy(b);
    return m;
}

/* The CUDA plan writes a Concat input in place only at a 16-byte multiple (here: y0, not y1, whose
   slice starts at 12 bytes), and the results are right; a plan that allows 4-byte slices hands cuDNN
   a misaligned output pointer, which session creation refuses loudly (OPARA_ERR_INTERNAL). */
OT_TEST(library_pointers_are_16_byte_aligned) {
    char why[512];
    opara_runtime* rt;
    opara_model* m;
    opara__cuda_options o = options(OPARA__CUDA_GRAPH);
    opara__cuda_session* s = NULL;
    opara__cuda_info info;
    opara__plan_desc pd;
    float x[6], out[12], want[12];
    const void* ins[1];
    void* outs[1];
    const float *w0, *w1;
    int32_t cat_node = -1;
    uint32_t n;
    int k, p;
    if (!opara__cuda_available(driver_path(), why, sizeof why)) SKIP("no CUDA driver: %s", why);
    rt = make_runtime(NULL);
    m = build_concat_model(rt);
    REQUIRE(m != NULL);
    for (n = 0; n < m->graph.n_nodes; ++n)
        if (m->graph.nodes[n].op == OPARA__OP_CONCAT) cat_node = (int32_t)n;
    w0 = (const float*)m->graph.values[m->graph.nodes[0].inputs[1]].data;
    w1 = (const float*)m->graph.values[m->graph.nodes[1].inputs[1]].data;
    for (k = 0; k < 6; ++k) x[k] = (float)k - 2.5f;
    for (p = 0; p < 3; ++p) { /* NCHW: cat[0][c][0][p], c = 0 from w0, 1 from w1 */
        want[p] = w0[0] * x[p] + w0[1] * x[3 + p];
        want[3 + p] = w1[0] * x[p] + w1[1] * x[3 + p];
    }
    if (opara__cuda_session_create(rt, &m->graph, &o, &s) != OPARA_OK) {
        OT_LOG("%s", opara_runtime_last_error(rt));
        CHECK(0);
    } else {
        opara__cuda_session_info(s, &info);
        CHECK_EQ(2, info.n_cudnn_convs);
        CHECK(opara__plan_concat_input_in_place(&m->graph, info.plan, (uint32_t)cat_node, 0));
        CHECK(!opara__plan_concat_input_in_place(&m->graph, info.plan, (uint32_t)cat_node, 1));
        ins[0] = x, outs[0] = out;
        CHECK_EQ(OPARA_OK, opara__cuda_session_run(s, ins, outs));
        for (k = 0; k < 6; ++k) CHECK(fabsf(out[k] - want[k]) <= 1e-5f * (1.0f + fabsf(want[k])));
        opara__cuda_session_destroy(s);
    }
    memset(&pd, 0, sizeof pd);
    pd.concat_align = 4; /* the CPU's rule: y1 goes to its 12-byte slice */
    o.plan = &pd;
    s = NULL;
    CHECK_EQ(OPARA_ERR_INTERNAL, opara__cuda_session_create(rt, &m->graph, &o, &s));
    CHECK(s == NULL);
    CHECK(strstr(opara_runtime_last_error(rt), "not 16-byte aligned") != NULL);
    OT_LOG("%s", opara_runtime_last_error(rt));
    opara_model_destroy(m);
    opara_runtime_destroy(rt);
}

/* ---- the cuDNN fake's documented rules, called directly ------------------------------------------- */

typedef struct fake {
    opara_cuda_driver cu;
    opara_cuda_cudnn dnn;
    opara_CUdevice dev;
    opara_CUcontext ctx;
    opara_cudnnHandle_t h;
    opara_CUstream stream;
    opara__cuda_conv_geom geom;
    opara__cudnn_conv conv;
    opara_CUdeviceptr x, w, bias, y, small_y, ws;
    size_t ws_bytes;
} fake;

static opara__cuda_conv_geom fake_geom(void) { /* 1x2x6x6 input, 3 filters of 2x3x3, pad 1 */
    opara__cuda_conv_geom c;
    memset(&c, 0, sizeof c);
    c.N = 1, c.C = 2, c.H = 6, c.W = 6, c.K = 3, c.R = 3, c.S = 3, c.OH = 6, c.OW = 6;
    c.ph = c.pw = c.ph_end = c.pw_end = 1, c.sh = c.sw = c.dh = c.dw = 1, c.group = 1, c.has_bias = 1;
    return c;
}

static int fake_alloc(fake* f, opara_CUdeviceptr* p, size_t floats, float fill_value) {
    float* host = (float*)malloc(floats * sizeof(float));
    size_t i;
    int ok;
    if (!host) return 0;
    for (i = 0; i < floats; ++i) host[i] = fill_value != 0 ? fill_value : 0.25f * frand();
    ok = f->cu.cuMemAlloc_v2(p, floats * sizeof(float)) == OPARA_CUDA_SUCCESS &&
         f->cu.cuMemcpyHtoD_v2(*p, host, floats * sizeof(float)) == OPARA_CUDA_SUCCESS;
    free(host);
    return ok;
}

static int fake_open(fake* f, opara_runtime* rt, char* why, size_t cap) {
    memset(f, 0, sizeof *f);
    if (opara_cuda_driver_load(&f->cu, driver_path(), why, cap) != OPARA_CUDA_LOAD_OK) return 0;
    if (opara_cuda_cudnn_load(&f->dnn, cudnn_path(), why, cap) != OPARA_CUDA_LOAD_OK) return 0;
    if (f->cu.cuInit(0) || f->cu.cuDeviceGet(&f->dev, 0) || f->cu.cuDevicePrimaryCtxRetain(&f->ctx, f->dev) ||
        f->cu.cuCtxSetCurrent(f->ctx) || f->cu.cuStreamCreate(&f->stream, 1))
        return 0;
    if (f->dnn.cudnnCreate(&f->h) || f->dnn.cudnnSetStream(f->h, f->stream)) return 0;
    f->geom = fake_geom();
    if (opara__cudnn_conv_describe(rt, NULL, &f->dnn, &f->geom, &f->conv) != OPARA_OK) return 0;
    f->conv.algo = OPARA_CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
    if (f->dnn.cudnnGetConvolutionForwardWorkspaceSize(f->h, f->conv.x, f->conv.w, f->conv.conv, f->conv.y, f->conv.algo,
                                                       &f->ws_bytes))
        return 0;
    return fake_alloc(f, &f->x, 72, 0) && fake_alloc(f, &f->w, 54, 0) && fake_alloc(f, &f->bias, 3, 0) &&
           fake_alloc(f, &f->y, 108, NAN) && fake_alloc(f, &f->small_y, 100, 0) &&
           fake_alloc(f, &f->ws, f->ws_bytes / sizeof(float) + 1, 0);
}

static void fake_close(fake* f) {
    opara_CUdeviceptr* bufs[6];
    int i;
    bufs[0] = &f->x, bufs[1] = &f->w, bufs[2] = &f->bias, bufs[3] = &f->y, bufs[4] = &f->small_y, bufs[5] = &f->ws;
    if (f->dnn.library) opara__cudnn_conv_destroy(&f->dnn, &f->conv);
    if (f->h) f->dnn.cudnnDestroy(f->h);
    for (i = 0; i < 6; ++i)
        if (*bufs[i]) f->cu.cuMemFree_v2(*bufs[i]);
    if (f->stream) f->cu.cuStreamDestroy_v2(f->stream);
    if (f->ctx) f->cu.cuDevicePrimaryCtxRelease_v2(f->dev);
    opara_cuda_cudnn_unload(&f->dnn);
    opara_cuda_driver_unload(&f->cu);
}

static void* dp(opara_CUdeviceptr p) { return (void*)(uintptr_t)p; }

static opara_cudnnStatus_t fused(fake* f, opara_CUdeviceptr y, void* ws, size_t ws_bytes) {
    const float one = 1.0f, zero = 0.0f;
    return f->dnn.cudnnConvolutionBiasActivationForward(f->h, &one, f->conv.x, dp(f->x), f->conv.w, dp(f->w), f->conv.conv,
                                                        f->conv.algo, ws, ws_bytes, &zero, f->conv.y, dp(y), f->conv.bias,
                                                        dp(f->bias), f->conv.act, f->conv.y, dp(y));
}

OT_TEST(cudnn_fake_enforces_the_documented_rules) {
    char why[2048];
    opara_runtime* rt = make_runtime(NULL);
    fake f;
    float out[108];
    int i, finite = 1;
    if (!strstr(cudnn_path(), "cudaemu")) {
        opara_runtime_destroy(rt);
        SKIP("checks of the emulator's cuDNN fake (OPARA_CUDNN names another library)");
    }
    if (!fake_open(&f, rt, why, sizeof why)) {
        fake_close(&f);
        opara_runtime_destroy(rt);
        SKIP("the cuDNN fake does not load: %s", why);
    }
    /* the fused call takes RELU and IDENTITY only (cuDNN API reference, cudnnActivationMode_t; cuDNN 9.19 on
       an H100 refuses SIGMOID with NOT_SUPPORTED) */
    CHECK_EQ(OPARA_CUDNN_STATUS_SUCCESS, fused(&f, f.y, dp(f.ws), f.ws_bytes));
    REQUIRE(f.dnn.cudnnSetActivationDescriptor(f.conv.act, OPARA_CUDNN_ACTIVATION_SIGMOID, OPARA_CUDNN_NOT_PROPAGATE_NAN,
                                               0.0) == OPARA_CUDNN_STATUS_SUCCESS);
    CHECK_EQ(OPARA_CUDNN_STATUS_NOT_SUPPORTED, fused(&f, f.y, dp(f.ws), f.ws_bytes));
    REQUIRE(f.dnn.cudnnSetActivationDescriptor(f.conv.act, OPARA_CUDNN_ACTIVATION_IDENTITY, OPARA_CUDNN_PROPAGATE_NAN,
                                               0.0) == OPARA_CUDNN_STATUS_SUCCESS);
    /* the workspace must be the algorithm's size (cudnnGetConvolutionForwardWorkspaceSize) */
    if (f.ws_bytes > 0) {
        CHECK(fused(&f, f.y, dp(f.ws), f.ws_bytes - 1) != OPARA_CUDNN_STATUS_SUCCESS);
        CHECK(fused(&f, f.y, NULL, 0) != OPARA_CUDNN_STATUS_SUCCESS);
    }
    /* a described tensor beyond its allocation: y is 1x3x6x6 = 108 floats, small_y holds 100 */
    CHECK_EQ(OPARA_CUDNN_STATUS_BAD_PARAM, fused(&f, f.small_y, dp(f.ws), f.ws_bytes));
    /* a host pointer is not device memory */
    CHECK_EQ(OPARA_CUDNN_STATUS_BAD_PARAM, fused(&f, (opara_CUdeviceptr)(uintptr_t)out, dp(f.ws), f.ws_bytes));
    /* alpha2 = 0: y (filled with NaN before) is never read */
    REQUIRE(f.cu.cuStreamSynchronize(f.stream) == OPARA_CUDA_SUCCESS);
    REQUIRE(f.cu.cuMemcpyDtoH_v2(out, f.y, sizeof out) == OPARA_CUDA_SUCCESS);
    for (i = 0; i < 108; ++i) finite = finite && out[i] == out[i];
    CHECK(finite);
    fake_close(&f);
    opara_runtime_destroy(rt);
}

/* Under `make test SAN=1` LeakSanitizer's tracer crashes reading a stale dynamic-TLS entry at exit
   (signal 11, "DTLS 5 at 0x13-...") after the emulator's TLS-using driver has run worker threads in
   this binary; with TLS roots left unscanned the leak check itself runs and finds nothing. */
const char* __lsan_default_options(void);
const char* __lsan_default_options(void) { return "use_tls=0"; }

static const opara_test_case tests[] = {
    OT_CASE(convolutions_run_on_cudnn_and_match_the_cpu_backend),
    OT_CASE(missing_cudnn_logs_the_path_and_uses_our_kernel),
    OT_CASE(cudnn_fake_enforces_the_documented_rules),
    OT_CASE(library_pointers_are_16_byte_aligned),
};

int main(int argc, char** argv) { return opara_test_main(argc, argv, tests, OT_COUNT(tests)); }
