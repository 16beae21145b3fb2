/* The CUDA backend on the CUDA emulator (tests/cudaemu; or a real driver with OPARA_CUDA_DRIVER):
   a branchy graph run in the three modes (eager multi-stream, graph, sequential graph) under
   several emulator seeds (the emulator runs graph nodes in a seeded random order that honours
   only the graph's edges) against a naive reference computed here; the captured graph's
   dependencies against the plan; the number of driver calls per run; fault injection (capture,
   instantiation and allocation failures, an old driver, missing libraries). */
#define _GNU_SOURCE
#define OPARA_IMPLEMENTATION
#include "opara.h"
#include "opara_test.h"

#include <dlfcn.h>
#include <math.h>

#include "cuda_test_env.h"

/* The emulator's control API (absent on a real driver: those tests skip). */
typedef int (*emu_config_fn)(const char* key, long long value);
typedef long long (*emu_stat_fn)(const char* key);
static emu_config_fn emu_config(void) {
    void* h = dlopen(driver_path(), RTLD_NOW | RTLD_NOLOAD);
    emu_config_fn f = NULL;
    if (!h) h = dlopen(driver_path(), RTLD_NOW);
    if (h) {
        *(void**)(&f) = dlsym(h, "opara_emu_config");
        dlclose(h);
    }
    return f;
}

static emu_stat_fn emu_stat(void) {
    void* h = dlopen(driver_path(), RTLD_NOW | RTLD_NOLOAD);
    emu_stat_fn f = NULL;
    if (h) {
        *(void**)(&f) = dlsym(h, "opara_emu_stat");
        dlclose(h);
    }
    return f;
}

static int driver_loads(char* why, size_t cap) { return opara__cuda_available(driver_path(), why, cap); }

/* ---- the test graph ---------------------------------------------------------------------------- */

#define NB 2
#define CI 3
#define HW 9
#define CO 4
#define NCLS 10

typedef struct test_model {
    opara_runtime* rt;
    opara__graph g;
    float x[NB * CI * HW * HW];
    float w1[CO * CI], b1[CO], w2[CO * CI * 9], w3[CO * CI], w4[CO * CI * 9];
    float bn_s[CO], bn_b[CO], bn_m[CO], bn_v[CO];
    float fc_w[NCLS * 4 * CO], fc_b[NCLS];
} test_model;

static unsigned rng_state = 7u;
static float frand(void) {
    rng_state = rng_state * 1664525u + 1013904223u;
    return (float)((rng_state >> 8) & 0xffff) / 32768.0f - 1.0f;
}
static void fill(float* p, int n, float scale, float offset) {
    int i;
    for (i = 0; i < n; ++i) p[i] = frand() * scale + offset;
}

static int32_t val(test_model* m, const char* name) {
    return opara__graph_add_value(&m->g, name, OPARA_DTYPE_F32, NULL);
}
static int32_t cval(test_model* m, const char* name, const float* data, int32_t ndim, const int64_t* dims) {
    opara__shape s;
    int64_t n = 1;
    int32_t v, d;
    s.ndim = ndim;
    for (d = 0; d < ndim; ++d) s.dims[d] = dims[d], n *= dims[d];
    v = opara__graph_add_value(&m->g, name, OPARA_DTYPE_F32, &s);
    opara__graph_set_const(&m->g, v, data, (uint64_t)n * sizeof(float), 1);
    return v;
}
static int32_t node(test_model* m, opara__op op, const char* name, uint32_t n_in, const int32_t* ins, int32_t out) {
    return opara__graph_add_node(&m->g, op, name, n_in, ins, 1, &out);
}
static void set_ints(test_model* m, int32_t n, const char* name, int64_t a, int64_t b, int64_t c, int64_t d, uint32_t cnt) {
    int64_t v[4];
    v[0] = a, v[1] = b, v[2] = c, v[3] = d;
    opara__node_set_ints(&m->g, n, name, v, cnt);
}

/* X -> b1 = Relu(Conv1x1(X))          b2 = Relu(BN(Conv3x3(X)))
        b3 = Conv1x1(MaxPool3x3(X))     b4 = Conv3x3(X) + b1
   cat = Concat(b1, b2, b3, b4) -> GAP -> Flatten -> Gemm -> Softmax = Y;  S = Sigmoid(b2)
   (chain_len > 0 appends that many Relu to Y's input: a longer model for call counts; chain_len < 0
   puts Add(Relu(F), Relu(F)) there: a second Relu on a new stream that starts after the branches'
   streams ended, so two streams share a lane) */
static int build_model(test_model* m, int chain_len) {
    int64_t d4[4] = {NB, CI, HW, HW}, dw1[4] = {CO, CI, 1, 1}, dw3[4] = {CO, CI, 3, 3}, dc[1] = {CO};
    int64_t dfw[2] = {NCLS, 4 * CO}, dfb[1] = {NCLS};
    int32_t x, w1, b1, w2, w3, w4, s, bb, mm, vv, fw, fb, c1, r1, c2, bn, r2, mp, c3, c4, a4, cat, gap, fl, gm, y, sg;
    int32_t ins[5], n;
    opara__shape xs;
    memset(&m->g, 0, sizeof m->g);
    opara__graph_init(&m->g, m->rt);
    fill(m->x, NB * CI * HW * HW, 1.0f, 0.0f);
    fill(m->w1, CO * CI, 0.5f, 0.0f), fill(m->b1, CO, 0.1f, 0.0f), fill(m->w2, CO * CI * 9, 0.3f, 0.0f);
    fill(m->w3, CO * CI, 0.5f, 0.0f), fill(m->w4, CO * CI * 9, 0.3f, 0.0f);
    fill(m->bn_s, CO, 0.5f, 1.0f), fill(m->bn_b, CO, 0.2f, 0.0f), fill(m->bn_m, CO, 0.1f, 0.0f), fill(m->bn_v, CO, 0.2f, 1.0f);
    fill(m->fc_w, NCLS * 4 * CO, 1.0f, 0.0f), fill(m->fc_b, NCLS, 0.1f, 0.0f);
    xs.ndim = 4;
    memcpy(xs.dims, d4, sizeof d4);
    x = opara__graph_add_value(&m->g, "x", OPARA_DTYPE_F32, &xs);
    opara__graph_add_input(&m->g, x);
    w1 = cval(m, "w1", m->w1, 4, dw1), b1 = cval(m, "b1", m->b1, 1, dc), w2 = cval(m, "w2", m->w2, 4, dw3);
    w3 = cval(m, "w3", m->w3, 4, dw1), w4 = cval(m, "w4", m->w4, 4, dw3);
    s = cval(m, "bn_s", m->bn_s, 1, dc), bb = cval(m, "bn_b", m->bn_b, 1, dc), mm = cval(m, "bn_m", m->bn_m, 1, dc);
    vv = cval(m, "bn_v", m->bn_v, 1, dc), fw = cval(m, "fc_w", m->fc_w, 2, dfw), fb = cval(m, "fc_b", m->fc_b, 1, dfb);
    c1 = val(m, "c1"), r1 = val(m, "r1"), c2 = val(m, "c2"), bn = val(m, "bn"), r2 = val(m, "r2"), mp = val(m, "mp");
    c3 = val(m, "c3"), c4 = val(m, "c4"), a4 = val(m, "a4"), cat = val(m, "cat"), gap = val(m, "gap"), fl = val(m, "fl");
    gm = val(m, "gm"), y = val(m, "y"), sg = val(m, "sg");
    ins[0] = x, ins[1] = w1, ins[2] = b1;
    node(m, OPARA__OP_CONV, "conv1", 3, ins, c1);
    ins[0] = c1;
    node(m, OPARA__OP_RELU, "relu1", 1, ins, r1);
    ins[0] = x, ins[1] = w2;
    n = node(m, OPARA__OP_CONV, "conv2", 2, ins, c2);
    set_ints(m, n, "pads", 1, 1, 1, 1, 4);
    ins[0] = c2, ins[1] = s, ins[2] = bb, ins[3] = mm, ins[4] = vv;
    node(m, OPARA__OP_BATCH_NORM, "bn2", 5, ins, bn);
    ins[0] = bn;
    node(m, OPARA__OP_RELU, "relu2", 1, ins, r2);
    ins[0] = x;
    n = node(m, OPARA__OP_MAX_POOL, "pool3", 1, ins, mp);
    set_ints(m, n, "kernel_shape", 3, 3, 0, 0, 2);
    set_ints(m, n, "pads", 1, 1, 1, 1, 4);
    ins[0] = mp, ins[1] = w3;
    node(m, OPARA__OP_CONV, "conv3", 2, ins, c3);
    ins[0] = x, ins[1] = w4;
    n = node(m, OPARA__OP_CONV, "conv4", 2, ins, c4);
    set_ints(m, n, "pads", 1, 1, 1, 1, 4);
    ins[0] = c4, ins[1] = r1;
    node(m, OPARA__OP_ADD, "add4", 2, ins, a4);
    ins[0] = r1, ins[1] = r2, ins[2] = c3, ins[3] = a4;
    n = node(m, OPARA__OP_CONCAT, "cat", 4, ins, cat);
    opara__node_set_int(&m->g, n, "axis", 1);
    ins[0] = cat;
    node(m, OPARA__OP_GLOBAL_AVERAGE_POOL, "gap", 1, ins, gap);
    ins[0] = gap;
    node(m, OPARA__OP_FLATTEN, "flat", 1, ins, fl);
    if (chain_len < 0) {
        int32_t ra = val(m, "dia_a"), rb = val(m, "dia_b"), sum = val(m, "dia_sum");
        ins[0] = fl;
        node(m, OPARA__OP_RELU, "dia_relu_a", 1, ins, ra);
        node(m, OPARA__OP_RELU, "dia_relu_b", 1, ins, rb);
        ins[0] = ra, ins[1] = rb;
        node(m, OPARA__OP_ADD, "dia_add", 2, ins, sum);
        fl = sum;
    }
    if (chain_len > 0) {
        int k;
        for (k = 0; k < chain_len; ++k) {
            char name[32];
            int32_t nx;
            snprintf(name, sizeof name, "chain%d", k);
            nx = val(m, name);
            ins[0] = fl;
            snprintf(name, sizeof name, "chain_relu%d", k);
            node(m, OPARA__OP_RELU, name, 1, ins, nx);
            fl = nx;
        }
    }
    ins[0] = fl, ins[1] = fw, ins[2] = fb;
    n = node(m, OPARA__OP_GEMM, "fc", 3, ins, gm);
    opara__node_set_int(&m->g, n, "transB", 1);
    ins[0] = gm;
    n = node(m, OPARA__OP_SOFTMAX, "softmax", 1, ins, y);
    opara__node_set_int(&m->g, n, "axis", -1);
    ins[0] = r2;
    node(m, OPARA__OP_SIGMOID, "sig", 1, ins, sg);
    opara__graph_add_output(&m->g, y);
    opara__graph_add_output(&m->g, sg);
    return opara__graph_finalize(&m->g) == OPARA_OK;
}

/* ---- the naive reference ----------------------------------------------------------------------- */

static void ref_conv(const float* x, const float* w, const float* b, int co, int k, int pad, double* y) {
    int n, o, c, p, q, r, s;
    for (n = 0; n < NB; ++n)
        for (o = 0; o < co; ++o)
            for (p = 0; p < HW; ++p)
                for (q = 0; q < HW; ++q) {
                    double acc = b ? b[o] : 0;
                    for (c = 0; c < CI; ++c)
                        for (r = 0; r < k; ++r)
                            for (s = 0; s < k; ++s) {
                                int ih = p - pad + r, iw = q - pad + s;
                                if (ih < 0 || iw < 0 || ih >= HW || iw >= HW) continue;
                                acc += (double)x[((n * CI + c) * HW + ih) * HW + iw] * w[((o * CI + c) * k + r) * k + s];
                            }
                    y[((n * co + o) * HW + p) * HW + q] = acc;
                }
}

/* y_ref [NB, NCLS] and sig_ref [NB, CO, HW, HW] */
static void reference(const test_model* m, int chain_len, double* y_ref, double* sig_ref) {
    enum { PL = HW * HW, FM = NB * CO * PL };
    static double c1[FM], c2[FM], c3[FM], c4[FM], mp[NB * CI * PL];
    static float mpf[NB * CI * PL];
    double feat[NB][4 * CO];
    int n, c, p, q, r, s, i, k;
    ref_conv(m->x, m->w1, m->b1, CO, 1, 0, c1);
    ref_conv(m->x, m->w2, NULL, CO, 3, 1, c2);
    ref_conv(m->x, m->w4, NULL, CO, 3, 1, c4);
    for (n = 0; n < NB; ++n)
        for (c = 0; c < CI; ++c)
            for (p = 0; p < HW; ++p)
                for (q = 0; q < HW; ++q) {
                    double best = -1e300;
                    for (r = -1; r <= 1; ++r)
                        for (s = -1; s <= 1; ++s)
                            if (p + r >= 0 && p + r < HW && q + s >= 0 && q + s < HW && m->x[((n * CI + c) * HW + p + r) * HW + q + s] > best)
                                best = m->x[((n * CI + c) * HW + p + r) * HW + q + s];
                    mp[((n * CI + c) * HW + p) * HW + q] = best;
                    mpf[((n * CI + c) * HW + p) * HW + q] = (float)best;
                }
    (void)mp;
    ref_conv(mpf, m->w3, NULL, CO, 1, 0, c3);
    for (i = 0; i < FM; ++i) {
        int ch = (i / PL) % CO;
        double bn = (c2[i] - m->bn_m[ch]) / sqrt((double)m->bn_v[ch] + 1e-5) * m->bn_s[ch] + m->bn_b[ch];
        double r1 = c1[i] > 0 ? c1[i] : 0, r2 = bn > 0 ? bn : 0;
        c1[i] = r1;
        c2[i] = r2;
        c4[i] += r1;
        sig_ref[i] = 1 / (1 + exp(-r2));
    }
    for (n = 0; n < NB; ++n)
        for (c = 0; c < 4 * CO; ++c) {
            const double* src = c < CO ? c1 : c < 2 * CO ? c2 : c < 3 * CO ? c3 : c4;
            double sum = 0;
            for (i = 0; i < PL; ++i) sum += src[(n * CO + c % CO) * PL + i];
            feat[n][c] = sum / PL;
            if (chain_len != 0 && feat[n][c] < 0) feat[n][c] = 0;
            if (chain_len < 0) feat[n][c] *= 2;
        }
    for (n = 0; n < NB; ++n) {
        double mx = -1e300, tot = 0, logits[NCLS];
        for (k = 0; k < NCLS; ++k) {
            double acc = m->fc_b[k];
            for (c = 0; c < 4 * CO; ++c) acc += feat[n][c] * m->fc_w[k * 4 * CO + c];
            logits[k] = acc;
            if (acc > mx) mx = acc;
        }
        for (k = 0; k < NCLS; ++k) tot += exp(logits[k] - mx);
        for (k = 0; k < NCLS; ++k) y_ref[n * NCLS + k] = exp(logits[k] - mx) / tot;
    }
}

static double nmse(const double* ref, const float* got, int n) {
    double num = 0, den = 0;
    int i;
    for (i = 0; i < n; ++i) {
        num += (ref[i] - got[i]) * (ref[i] - got[i]);
        den += ref[i] * ref[i];
    }
    return den > 0 ? num / den : num;
}

/* ---- helpers ---------------------------------------------------------------------------------- */

static opara_runtime* make_runtime(void) {
    opara_runtime* rt = NULL;
    opara_runtime_desc d;
    memset(&d, 0, sizeof d);
    opara_runtime_create(&d, &rt);
    return rt;
}

static opara__cuda_options options(opara__cuda_mode mode) { return cuda_test_options(mode); }

static const char* mode_name(int mode) { return mode == 0 ? "eager" : mode == 1 ? "graph" : "seq-graph"; }

/* Runs the model once; returns max NMSE of both outputs against the reference. */
static double run_and_compare(opara__cuda_session* s, const test_model* m, int chain_len, int* ok) {
    static double yr[NB * NCLS], sr[NB * CO * HW * HW];
    static float y[NB * NCLS], sg[NB * CO * HW * HW];
    const void* ins[1];
    void* outs[2];
    double e1, e2;
    ins[0] = m->x;
    outs[0] = y, outs[1] = sg;
    memset(y, 0, sizeof y), memset(sg, 0, sizeof sg);
    *ok = opara__cuda_session_run(s, ins, outs) == OPARA_OK;
    reference(m, chain_len, yr, sr);
    e1 = nmse(yr, y, NB * NCLS);
    e2 = nmse(sr, sg, NB * CO * HW * HW);
    return e1 > e2 ? e1 : e2;
}

/* ---- tests ------------------------------------------------------------------------------------ */

/* Every mode against the reference, under five execution orders of the emulator, on the test model
   and on its variant where two plan streams share a lane: the session makes one CUDA stream per
   lane (as the emulator counts them) and destroys them with it. */
OT_TEST(all_modes_match_the_reference_under_five_seeds) {
    static const int variants[] = {0, -1}; /* build_model's chain_len */
    test_model m;
    char why[512];
    emu_config_fn cfg = emu_config();
    emu_stat_fn stat;
    int mode, seed, variant;
    if (!driver_loads(why, sizeof why)) SKIP("no CUDA driver: %s", why);
    stat = emu_stat();
    m.rt = make_runtime();
    for (variant = 0; variant < 2; ++variant) {
        int chain = variants[variant];
        REQUIRE(build_model(&m, chain));
        for (mode = 0; mode < 3; ++mode)
            for (seed = 1; seed <= 5; ++seed) {
                opara__cuda_options o = options((opara__cuda_mode)mode);
                opara__cuda_session* s = NULL;
                opara__cuda_info info;
                long long streams_before = stat ? stat("streams") : 0;
                double e;
                int ok, run;
                if (cfg) cfg("seed", seed * 7919);
                if (opara__cuda_session_create(m.rt, &m.g, &o, &s) != OPARA_OK) {
                    OT_LOG("%s seed %d: %s", mode_name(mode), seed, opara_runtime_last_error(m.rt));
                    CHECK(0);
                    continue;
                }
                opara__cuda_session_info(s, &info);
                CHECK_EQ(mode, info.mode);
                if (mode == 0) CHECK(info.plan->n_streams > 1); /* the branches run on several streams */
                if (mode == 2) CHECK_EQ(1, info.plan->n_streams);
                if (mode < 2 && chain < 0) CHECK(info.plan->n_lanes < info.plan->n_streams);
                if (stat) CHECK_EQ(streams_before + (long long)info.plan->n_lanes, stat("streams"));
                for (run = 0; run < 2; ++run) { /* the second run replays the same graph */
                    e = run_and_compare(s, &m, chain, &ok);
                    CHECK(ok);
                    if (e > 1e-10) {
                        OT_LOG("%s seed %d run %d: NMSE %g", mode_name(mode), seed, run, e);
                        CHECK(0);
                    }
                }
                if (seed == 1)
                    printf("%-9s NMSE vs reference %.2e (streams %u on %u CUDA streams, launches %u, GEMM %s, %u of 4 Conv on cuDNN)\n",
                           mode_name(mode), e, info.plan->n_streams, info.plan->n_lanes, info.n_launches,
                           info.cublas ? "cuBLAS" : "opara_sgemm_f32", info.n_cudnn_convs);
                opara__cuda_session_destroy(s);
                if (stat) CHECK_EQ(streams_before, stat("streams"));
            }
        opara__graph_free(&m.g);
    }
    opara_runtime_destroy(m.rt);
}

/* Happens-before of the plan over nodes: same stream in rank order, plus event waits. */
static void plan_closure(const opara__plan* p, unsigned char* hb) {
    uint32_t n = p->n_nodes, a, b, k, i;
    memset(hb, 0, (size_t)n * n);
    for (a = 0; a < n; ++a) {
        for (b = 0; b < n; ++b)
            if (a != b && p->stream[a] == p->stream[b] && p->stream_seq[a] < p->stream_seq[b]) hb[a * n + b] = 1;
        for (i = p->wait_start[a]; i < p->wait_start[a + 1]; ++i) hb[p->wait_nodes[i] * n + a] = 1;
    }
    for (k = 0; k < n; ++k)
        for (a = 0; a < n; ++a)
            if (hb[a * n + k])
                for (b = 0; b < n; ++b)
                    if (hb[k * n + b]) hb[a * n + b] = 1;
}

/* ---- the captured graph against the plan ------------------------------------------------------------
   What holds on any driver: a library call may add any number of kernel, memset or memcpy nodes (real
   cuBLAS adds split-K reductions and memsets, cuDNN several kernels), so graph nodes are attributed to
   ops by when they appear. The session calls test_capture_hook before each op's first launch and after
   its last one, on the capturing thread; the graph being captured may be read meanwhile
   (cuStreamGetCaptureInfo_v3 returns it; "all operations other than destroy and node removal are
   permitted on the graph while the capture sequence is in progress"). The nodes that appear between
   the two calls for op X are X's. Then: an op the plan orders after another has every one of its
   nodes reachable from every node of the other; ops the plan leaves unordered have no path between
   any of their nodes; our own kernels are identified by function and parameter values and must sit
   in their op; a node outside every op (fork/join bookkeeping) is no kernel, copy or memset. */

typedef struct capture_log {
    const opara_cuda_driver* cu;
    opara_CUgraphNode* node;  /* every node seen, in the order seen */
    int* owner;               /* its op, -1 outside every op */
    size_t n, cap;
    int* hooked;              /* [n_ops] 1 when the op's hooks ran */
    int failed;
} capture_log;

static int log_has(const capture_log* c, opara_CUgraphNode x) {
    size_t i;
    for (i = 0; i < c->n; ++i)
        if (c->node[i] == x) return 1;
    return 0;
}

/* Records the nodes of graph g not seen yet as owned by `owner`. */
static void log_new_nodes(capture_log* c, opara_CUgraph g, int owner) {
    size_t count = 0, i;
    opara_CUgraphNode* all;
    if (c->cu->cuGraphGetNodes(g, NULL, &count) != OPARA_CUDA_SUCCESS) {
        c->failed = 1;
        return;
    }
    all = (opara_CUgraphNode*)calloc(count + 1, sizeof *all);
    if (!all || c->cu->cuGraphGetNodes(g, all, &count) != OPARA_CUDA_SUCCESS) c->failed = 1;
    for (i = 0; all && !c->failed && i < count; ++i) {
        if (log_has(c, all[i])) continue;
        if (c->n == c->cap) {
            size_t cap = c->cap ? 2 * c->cap : 64;
            opara_CUgraphNode* nn = (opara_CUgraphNode*)realloc(c->node, cap * sizeof *nn);
            int* no = nn ? (int*)realloc(c->owner, cap * sizeof *no) : NULL;
            if (nn) c->node = nn;
            if (!nn || !no) {
                c->failed = 1;
                break;
            }
            c->owner = no, c->cap = cap;
        }
        c->node[c->n] = all[i];
        c->owner[c->n++] = owner;
    }
    free(all);
}

static opara_result capture_hook(void* user, uint32_t op, int after, opara_CUstream stream) {
    capture_log* c = (capture_log*)user;
    opara_CUstreamCaptureStatus status = OPARA_CU_STREAM_CAPTURE_STATUS_NONE;
    opara_CUgraph g = NULL;
    if (c->cu->cuStreamGetCaptureInfo_v3(stream, &status, NULL, &g, NULL, NULL, NULL) != OPARA_CUDA_SUCCESS ||
        status != OPARA_CU_STREAM_CAPTURE_STATUS_ACTIVE || !g) {
        c->failed = 1;
        return OPARA_OK;
    }
    log_new_nodes(c, g, after ? (int)op : -1); /* before: whatever came since the last op is no op's */
    c->hooked[op] = 1;
    return OPARA_OK;
}

/* The launch of op `op` whose kernel and parameter values the kernel node has, or -1. */
static int our_launch(const opara__cuda_info* info, const opara_CUDA_KERNEL_NODE_PARAMS* kp) {
    uint32_t k, t;
    for (k = 0; k < info->n_launches; ++k) {
        const opara__cuda_launch* L = &info->launches[k];
        int same = L->type == OPARA__CULAUNCH_KERNEL && kp->func == info->funcs[L->kernel] && L->grid[0] == kp->gridDimX &&
                   L->grid[1] == kp->gridDimY && L->grid[2] == kp->gridDimZ && L->block[0] == kp->blockDimX;
        for (t = 0; same && t < L->n_args; ++t) {
            uint64_t v = 0;
            memcpy(&v, kp->kernelParams[t], L->args[t].kind == OPARA__CUARG_I32 || L->args[t].kind == OPARA__CUARG_F32 ? 4 : 8);
            same = v == L->values[t];
        }
        if (same) return (int)k;
    }
    return -1;
}

/* Violations of the rules above for the graph with these edges (reach: scratch of n*n bytes). Every
   violation is logged when `say`. */
static int capture_violations(opara_test* T, const capture_log* c, const unsigned char* hb, uint32_t n_ops,
                              const opara_CUgraphNode* from, const opara_CUgraphNode* to, size_t n_edges,
                              unsigned char* reach, int say) {
    size_t n = c->n, i, j, k;
    int bad = 0;
    memset(reach, 0, n * n);
    for (k = 0; k < n_edges; ++k) {
        size_t f = n, t = n;
        for (i = 0; i < n; ++i) {
            if (c->node[i] == from[k]) f = i;
            if (c->node[i] == to[k]) t = i;
        }
        if (f == n || t == n) return 1; /* an edge to a node the log does not know */
        reach[f * n + t] = 1;
    }
    for (k = 0; k < n; ++k)
        for (i = 0; i < n; ++i)
            if (reach[i * n + k])
                for (j = 0; j < n; ++j)
                    if (reach[k * n + j]) reach[i * n + j] = 1;
    for (i = 0; i < n; ++i)
        for (j = 0; j < n; ++j) {
            int a = c->owner[i], b = c->owner[j], want;
            if (a < 0 || b < 0 || a == b || (uint32_t)a >= n_ops || (uint32_t)b >= n_ops) continue;
            want = hb[a * n_ops + b];
            if (want == reach[i * n + j]) continue;
            if (say) OT_LOG("graph node %zu of op %d -> graph node %zu of op %d: plan %s, graph %s", i, a, j, b,
                            want ? "ordered" : "unordered", reach[i * n + j] ? "path" : "no path");
            ++bad;
        }
    return bad;
}

OT_TEST(captured_graph_orders_ops_as_the_plan_does) {
    test_model m;
    char why[512];
    opara__cuda_options o = options(OPARA__CUDA_GRAPH);
    opara__cuda_session* s = NULL;
    opara__cuda_info info;
    capture_log c;
    opara_cuda_driver probe; /* the hook runs inside session creation, before the session's table can be read */
    opara_CUgraphNode *from = NULL, *to = NULL;
    size_t n_edges = 0, i, k, n_other = 0, n_ours = 0, detected = 0, cross = 0;
    unsigned char *hb = NULL, *reach = NULL;
    uint32_t a, b, n_ops;
    if (!driver_loads(why, sizeof why)) SKIP("no CUDA driver: %s", why);
    memset(&probe, 0, sizeof probe);
    if (opara_cuda_driver_load(&probe, driver_path(), why, sizeof why) != OPARA_CUDA_LOAD_OK ||
        !probe.cuStreamGetCaptureInfo_v3 || !probe.cuGraphGetEdges_v2) {
        opara_cuda_driver_unload(&probe);
        SKIP("the driver lacks cuStreamGetCaptureInfo_v3 or cuGraphGetEdges_v2 (CUDA 12.3)");
    }
    memset(&c, 0, sizeof c);
    m.rt = make_runtime();
    REQUIRE(build_model(&m, 0));
    c.hooked = (int*)calloc(m.g.n_nodes, sizeof *c.hooked);
    REQUIRE(c.hooked != NULL);
    o.test_capture_hook = capture_hook;
    o.test_capture_hook_user = &c;
    c.cu = &probe;
    if (opara__cuda_session_create(m.rt, &m.g, &o, &s) != OPARA_OK) {
        OT_LOG("%s", opara_runtime_last_error(m.rt));
        CHECK(0);
        goto done;
    }
    opara__cuda_session_info(s, &info);
    c.cu = opara__cuda_session_driver(s);
    REQUIRE(info.graph != NULL);
    CHECK(!c.failed);
    log_new_nodes(&c, info.graph, -1); /* after the last op: the join */
    REQUIRE(c.cu->cuGraphGetEdges_v2(info.graph, NULL, NULL, NULL, &n_edges) == OPARA_CUDA_SUCCESS);
    from = (opara_CUgraphNode*)calloc(n_edges + 1, sizeof *from);
    to = (opara_CUgraphNode*)calloc(n_edges + 1, sizeof *to);
    REQUIRE(from && to);
    REQUIRE(c.cu->cuGraphGetEdges_v2(info.graph, from, to, NULL, &n_edges) == OPARA_CUDA_SUCCESS);
    /* every op that launches owns nodes; our kernels sit in their op; outside ops only bookkeeping */
    for (a = 0; a < m.g.n_nodes; ++a) {
        int owned = 0;
        for (i = 0; i < c.n; ++i) owned += c.owner[i] == (int)a;
        if (c.hooked[a] && !owned) {
            OT_LOG("op %u (%s) launched but owns no graph node", a, m.g.nodes[a].name);
            CHECK(0);
        }
    }
    for (i = 0; i < c.n; ++i) {
        opara_CUgraphNodeType type;
        REQUIRE(c.cu->cuGraphNodeGetType(c.node[i], &type) == OPARA_CUDA_SUCCESS);
        if (c.owner[i] < 0) {
            ++n_other;
            if (type == OPARA_CU_GRAPH_NODE_TYPE_KERNEL || type == OPARA_CU_GRAPH_NODE_TYPE_MEMCPY ||
                type == OPARA_CU_GRAPH_NODE_TYPE_MEMSET) {
                OT_LOG("graph node %zu (type %d) appeared outside every op", i, (int)type);
                CHECK(0);
            }
        }
        if (type == OPARA_CU_GRAPH_NODE_TYPE_KERNEL) {
            opara_CUDA_KERNEL_NODE_PARAMS kp;
            int l;
            REQUIRE(c.cu->cuGraphKernelNodeGetParams_v2(c.node[i], &kp) == OPARA_CUDA_SUCCESS);
            l = our_launch(&info, &kp);
            if (l >= 0) {
                ++n_ours;
                if ((int)info.launches[l].node != c.owner[i]) {
                    OT_LOG("graph node %zu is a launch of op %u but appeared in op %d", i, info.launches[l].node, c.owner[i]);
                    CHECK(0);
                }
            }
        }
    }
    /* the plan's order against the graph's paths; every data edge of the model is in the plan's order */
    n_ops = info.plan->n_nodes;
    hb = (unsigned char*)malloc((size_t)n_ops * n_ops);
    reach = (unsigned char*)malloc(c.n * c.n + 1);
    REQUIRE(hb && reach);
    plan_closure(info.plan, hb);
    for (b = 0; b < m.g.n_nodes; ++b)
        for (k = m.g.pred_start[b]; k < m.g.pred_start[b + 1]; ++k) CHECK(hb[m.g.preds[k] * n_ops + b] == 1);
    CHECK_EQ(0, capture_violations(T, &c, hb, n_ops, from, to, n_edges, reach, 1));
    /* the check fails when an edge is missing: drop each edge between two ops in turn */
    for (k = 0; k < n_edges; ++k) {
        opara_CUgraphNode f = from[k], t = to[k];
        int fo = -1, tw = -1;
        for (i = 0; i < c.n; ++i) {
            if (c.node[i] == f) fo = c.owner[i];
            if (c.node[i] == t) tw = c.owner[i];
        }
        if (fo < 0 || tw < 0 || fo == tw) continue;
        ++cross;
        from[k] = from[n_edges - 1], to[k] = to[n_edges - 1];
        detected += capture_violations(T, &c, hb, n_ops, from, to, n_edges - 1, reach, 0) > 0;
        from[n_edges - 1] = from[k], to[n_edges - 1] = to[k];
        from[k] = f, to[k] = t;
    }
    CHECK(cross > 0);
    CHECK(detected > 0);
    printf("captured graph: %zu nodes (%zu our kernels, %zu outside ops), %zu edges, %u streams; dropping one of the "
           "%zu edges between ops is caught for %zu\n",
           c.n, n_ours, n_other, n_edges, info.plan->n_streams, cross, detected);
done:
    free(hb);
    free(reach);
    free(from);
    free(to);
    free(c.node);
    free(c.owner);
    free(c.hooked);
    opara__cuda_session_destroy(s);
    opara_cuda_driver_unload(&probe);
    opara__graph_free(&m.g);
    opara_runtime_destroy(m.rt);
}

OT_TEST(graph_run_makes_a_constant_number_of_driver_calls) {
    char why[512];
    int chain[3] = {0, 5, 40}, i, mode;
    uint64_t calls[2][3];
    if (!driver_loads(why, sizeof why)) SKIP("no CUDA driver: %s", why);
    for (mode = 0; mode < 2; ++mode)
        for (i = 0; i < 3; ++i) {
            test_model m;
            opara__cuda_options o = options(mode ? OPARA__CUDA_GRAPH : OPARA__CUDA_EAGER);
            opara__cuda_session* s = NULL;
            opara__cuda_info info;
            int ok;
            double e;
            m.rt = make_runtime();
            REQUIRE(build_model(&m, chain[i]));
            REQUIRE(opara__cuda_session_create(m.rt, &m.g, &o, &s) == OPARA_OK);
            e = run_and_compare(s, &m, chain[i], &ok);
            CHECK(ok);
            CHECK(e < 1e-10);
            opara__cuda_session_info(s, &info);
            calls[mode][i] = info.driver_calls_last_run;
            opara__cuda_session_destroy(s);
            opara__graph_free(&m.g);
            opara_runtime_destroy(m.rt);
        }
    /* graph mode: 1 input copy + 1 launch + 2 output copies + 1 synchronize, whatever the size */
    for (i = 0; i < 3; ++i) CHECK_EQ(5, (long long)calls[1][i]);
    CHECK(calls[0][2] >= calls[0][0] + 40); /* eager grows with the model: one launch per added node */
    printf("driver calls per run: eager %llu/%llu/%llu, graph %llu/%llu/%llu (models of +0/+5/+40 nodes)\n",
           (unsigned long long)calls[0][0], (unsigned long long)calls[0][1], (unsigned long long)calls[0][2],
           (unsigned long long)calls[1][0], (unsigned long long)calls[1][1], (unsigned long long)calls[1][2]);
}

/* A session whose graph setup fails one way or another falls back to eager and stays correct. */
static void check_fallback(opara_test* T, const char* key, int use_break, const char* expect) {
    test_model m;
    opara__cuda_options o = options(OPARA__CUDA_GRAPH);
    opara__cuda_session* s = NULL;
    opara__cuda_info info;
    emu_config_fn cfg = emu_config();
    int ok;
    double e;
    m.rt = make_runtime();
    REQUIRE(build_model(&m, 0));
    o.test_break_capture = use_break;
    if (key) cfg(key, 1);
    REQUIRE(opara__cuda_session_create(m.rt, &m.g, &o, &s) == OPARA_OK);
    opara__cuda_session_info(s, &info);
    CHECK_EQ(OPARA__CUDA_EAGER, info.mode);
    CHECK(strstr(info.fallback_reason, expect) != NULL);
    OT_LOG("fallback reason: %s", info.fallback_reason);
    e = run_and_compare(s, &m, 0, &ok);
    CHECK(ok);
    CHECK(e < 1e-10);
    if (key) cfg(key, 0);
    opara__cuda_session_destroy(s);
    opara__graph_free(&m.g);
    opara_runtime_destroy(m.rt);
}

OT_TEST(capture_failures_fall_back_to_eager_with_the_reason) {
    char why[512];
    if (!driver_loads(why, sizeof why)) SKIP("no CUDA driver: %s", why);
    if (!emu_config()) SKIP("fault injection needs the emulator");
    check_fallback(T, "fail_capture", 0, "cuStreamEndCapture");
    check_fallback(T, "fail_instantiate", 0, "cuGraphInstantiateWithFlags");
    check_fallback(T, NULL, 1, "cuStreamEndCapture"); /* an unsafe cuMemAlloc invalidated the capture */
}

/* Every device allocation of session creation fails in turn (the arena with the library
   workspaces, constants, inputs, tables, and the libraries' own handles): each is a clear
   out-of-device-memory error and frees everything (ASan/LSan in `make test SAN=1`). */
OT_TEST(allocation_failure_is_a_clear_error_and_frees_everything) {
    test_model m;
    char why[512];
    emu_config_fn cfg = emu_config();
    opara__cuda_options o = options(OPARA__CUDA_GRAPH);
    opara__cuda_session* s = NULL;
    emu_stat_fn stat;
    int nth, failures = 0, arena_seen = 0;
    opara_result r = OPARA_ERR_DEVICE_MEMORY;
    if (!driver_loads(why, sizeof why)) SKIP("no CUDA driver: %s", why);
    if (!cfg) SKIP("fault injection needs the emulator");
    if (!(stat = emu_stat())) SKIP("the emulator has no opara_emu_stat");
    m.rt = make_runtime();
    REQUIRE(build_model(&m, 0));
    for (nth = 1; nth <= 64 && r != OPARA_OK; ++nth) {
        const char* err;
        long long before = stat("allocations");
        cfg("fail_alloc", nth);
        r = opara__cuda_session_create(m.rt, &m.g, &o, &s);
        cfg("fail_alloc", 0);
        if (r == OPARA_OK) break;
        CHECK_EQ(before, stat("allocations")); /* nothing left allocated on the device */
        err = opara_runtime_last_error(m.rt);
        ++failures;
        CHECK_EQ(OPARA_ERR_DEVICE_MEMORY, r);
        CHECK(s == NULL);
        CHECK(strstr(err, "cuMemAlloc") != NULL || strstr(err, "cudnnCreate") != NULL || strstr(err, "handle for stream") != NULL);
        if (strstr(err, "arena and library workspaces")) arena_seen = 1;
        OT_LOG("allocation %d: %s", nth, err);
    }
    CHECK_EQ(OPARA_OK, r); /* past the last allocation the session is created */
    CHECK(failures >= 5);  /* the four buffers and at least one library handle */
    CHECK(arena_seen);
    printf("session creation: %d device allocations, each failure reported, no device memory leaked\n", failures);
    opara__cuda_session_destroy(s);
    opara__graph_free(&m.g);
    opara_runtime_destroy(m.rt);
}

OT_TEST(old_driver_and_missing_libraries) {
    test_model m;
    char why[512];
    emu_config_fn cfg = emu_config();
    opara__cuda_options o = options(OPARA__CUDA_GRAPH);
    opara__cuda_session* s = NULL;
    opara__cuda_info info;
    opara_result r;
    if (!driver_loads(why, sizeof why)) SKIP("no CUDA driver: %s", why);
    m.rt = make_runtime();
    REQUIRE(build_model(&m, 0));
    /* a driver that does not exist: the message names the path tried */
    o.driver_path = "/nonexistent/libcuda.so.1";
    CHECK_EQ(OPARA_ERR_LIB_NOT_FOUND, opara__cuda_session_create(m.rt, &m.g, &o, &s));
    CHECK(strstr(opara_runtime_last_error(m.rt), "/nonexistent/libcuda.so.1") != NULL);
    CHECK(!opara__cuda_available("/nonexistent/libcuda.so.1", why, sizeof why));
    /* cuBLAS missing: Gemm runs on our kernel, everything else unchanged */
    o = options(OPARA__CUDA_GRAPH);
    o.cublas_path = "/nonexistent/libcublas.so.13";
    r = opara__cuda_session_create(m.rt, &m.g, &o, &s);
    CHECK_EQ(OPARA_OK, r);
    if (r == OPARA_OK) {
        int ok;
        opara__cuda_session_info(s, &info);
        CHECK_EQ(0, info.cublas);
        CHECK(run_and_compare(s, &m, 0, &ok) < 1e-10);
        CHECK(ok);
        opara__cuda_session_destroy(s);
    }
    /* a driver older than CUDA 12.0 */
    if (cfg) {
        o = options(OPARA__CUDA_GRAPH);
        cfg("driver_version", 11080);
        r = opara__cuda_session_create(m.rt, &m.g, &o, &s);
        cfg("driver_version", 0);
        CHECK_EQ(OPARA_ERR_NO_BACKEND, r);
        CHECK(strstr(opara_runtime_last_error(m.rt), "11") != NULL);
        OT_LOG("old driver: %s", opara_runtime_last_error(m.rt));
    }
    opara__graph_free(&m.g);
    opara_runtime_destroy(m.rt);
}

static const opara_test_case tests[] = {
    OT_CASE(all_modes_match_the_reference_under_five_seeds),
    OT_CASE(captured_graph_orders_ops_as_the_plan_does),
    OT_CASE(graph_run_makes_a_constant_number_of_driver_calls),
    OT_CASE(capture_failures_fall_back_to_eager_with_the_reason),
    OT_CASE(allocation_failure_is_a_clear_error_and_frees_everything),
    OT_CASE(old_driver_and_missing_libraries),
};

int main(int argc, char** argv) { return opara_test_main(argc, argv, tests, OT_COUNT(tests)); }
