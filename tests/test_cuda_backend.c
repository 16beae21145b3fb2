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
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <unistd.h>

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
    char why[160];            /* the first failure */
} capture_log;

static void capture_failed(capture_log* c, const char* call, int rc, int op) {
    if (!c->failed) snprintf(c->why, sizeof c->why, "%s gave %d at op %d", call, rc, op);
    c->failed = 1;
}

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
    opara_CUresult rc = c->cu->cuGraphGetNodes(g, NULL, &count);
    if (rc != OPARA_CUDA_SUCCESS) {
        capture_failed(c, "cuGraphGetNodes (count)", (int)rc, owner);
        return;
    }
    if (count == 0) return; /* a fill call with room for 0 nodes is INVALID_VALUE on driver 580 */
    all = (opara_CUgraphNode*)calloc(count, sizeof *all);
    if (!all || (rc = c->cu->cuGraphGetNodes(g, all, &count)) != OPARA_CUDA_SUCCESS)
        capture_failed(c, "cuGraphGetNodes", (int)rc, owner);
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
    opara_CUresult rc = c->cu->cuStreamGetCaptureInfo_v3(stream, &status, NULL, &g, NULL, NULL, NULL);
    if (rc != OPARA_CUDA_SUCCESS || status != OPARA_CU_STREAM_CAPTURE_STATUS_ACTIVE || !g) {
        capture_failed(c, rc != OPARA_CUDA_SUCCESS ? "cuStreamGetCaptureInfo_v3" : "the capture status (1: active)",
                       rc != OPARA_CUDA_SUCCESS ? (int)rc : (int)status, (int)op);
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
    if (c.failed) OT_LOG("capture hook: %s", c.why);
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
    /* graph mode: context push + 1 input copy + 1 launch + 2 output copies + 1 synchronize + pop,
       whatever the size */
    for (i = 0; i < 3; ++i) CHECK_EQ(7, (long long)calls[1][i]);
    CHECK(calls[0][2] >= calls[0][0] + 40); /* eager grows with the model: one launch per added node */
    printf("driver calls per run: eager %llu/%llu/%llu, graph %llu/%llu/%llu (models of +0/+5/+40 nodes)\n",
           (unsigned long long)calls[0][0], (unsigned long long)calls[0][1], (unsigned long long)calls[0][2],
           (unsigned long long)calls[1][0], (unsigned long long)calls[1][1], (unsigned long long)calls[1][2]);
}

/* ---- host I/O through the pinned staging, in pieces ------------------------------------------ */

/* Inputs a [na] (large), b and c [IO_NB] (smaller than any piece); outputs Relu(a) [na], Add(b, b)
   and Mul(b, c) [IO_NB]: each exact in FP32, so compared for equality. (Zero-sized tensors are
   refused at session creation.) */
#define IO_NB 7
typedef struct io_model {
    opara_runtime* rt;
    opara__graph g;
    int na;
    float *a, *ya, *ya_ref;
    float b[IO_NB], yb[IO_NB], yb_ref[IO_NB], c[IO_NB], yc[IO_NB], yc_ref[IO_NB];
} io_model;

static int io_model_make(io_model* m, int na) {
    int32_t a, b, c, ya, yb, yc, ins[2];
    opara__shape sh;
    int i;
    memset(m, 0, sizeof *m);
    m->rt = make_runtime();
    m->na = na;
    m->a = (float*)malloc((size_t)na * sizeof(float));
    m->ya = (float*)malloc((size_t)na * sizeof(float));
    m->ya_ref = (float*)malloc((size_t)na * sizeof(float));
    if (!m->rt || !m->a || !m->ya || !m->ya_ref) return 0;
    fill(m->a, na, 1.0f, 0.0f), fill(m->b, IO_NB, 3.0f, 0.5f), fill(m->c, IO_NB, 2.0f, -0.25f);
    for (i = 0; i < na; ++i) m->ya_ref[i] = m->a[i] > 0.0f ? m->a[i] : 0.0f;
    for (i = 0; i < IO_NB; ++i) m->yb_ref[i] = m->b[i] * 2.0f, m->yc_ref[i] = m->b[i] * m->c[i];
    memset(&m->g, 0, sizeof m->g);
    opara__graph_init(&m->g, m->rt);
    sh.ndim = 1;
    sh.dims[0] = na;
    a = opara__graph_add_value(&m->g, "a", OPARA_DTYPE_F32, &sh);
    sh.dims[0] = IO_NB;
    b = opara__graph_add_value(&m->g, "b", OPARA_DTYPE_F32, &sh);
    c = opara__graph_add_value(&m->g, "c", OPARA_DTYPE_F32, &sh);
    opara__graph_add_input(&m->g, a), opara__graph_add_input(&m->g, b), opara__graph_add_input(&m->g, c);
    ya = opara__graph_add_value(&m->g, "ya", OPARA_DTYPE_F32, NULL);
    yb = opara__graph_add_value(&m->g, "yb", OPARA_DTYPE_F32, NULL);
    yc = opara__graph_add_value(&m->g, "yc", OPARA_DTYPE_F32, NULL);
    ins[0] = a;
    opara__graph_add_node(&m->g, OPARA__OP_RELU, "relu_a", 1, ins, 1, &ya);
    ins[0] = b, ins[1] = b;
    opara__graph_add_node(&m->g, OPARA__OP_ADD, "add_b", 2, ins, 1, &yb);
    ins[1] = c;
    opara__graph_add_node(&m->g, OPARA__OP_MUL, "mul_bc", 2, ins, 1, &yc);
    opara__graph_add_output(&m->g, ya), opara__graph_add_output(&m->g, yb), opara__graph_add_output(&m->g, yc);
    return opara__graph_finalize(&m->g) == OPARA_OK;
}

static void io_model_free(io_model* m) {
    free(m->a), free(m->ya), free(m->ya_ref);
    if (m->g.rt) opara__graph_free(&m->g);
    if (m->rt) opara_runtime_destroy(m->rt);
}

/* Elements of got that differ from want (FP32 equality). */
static int io_mismatches(const float* want, const float* got, int n) {
    int i, bad = 0;
    for (i = 0; i < n; ++i) bad += !(want[i] == got[i]);
    return bad;
}

/* One host run of m with the caller's output pointers (outs NULL: none given); 1 when every output
   given, or else left in the staging, equals the reference. */
static int io_run_matches(opara__cuda_session* s, io_model* m, int give_outputs, opara_result* r) {
    const void* ins[3];
    void* outs[3];
    const float *ya, *yb, *yc;
    ins[0] = m->a, ins[1] = m->b, ins[2] = m->c;
    outs[0] = m->ya, outs[1] = m->yb, outs[2] = m->yc;
    memset(m->ya, 0, (size_t)m->na * sizeof(float)), memset(m->yb, 0, sizeof m->yb), memset(m->yc, 0, sizeof m->yc);
    if (give_outputs == 2) outs[0] = (void*)opara__cuda_session_output(s, 0), outs[1] = NULL; /* staging; left */
    *r = opara__cuda_session_run(s, ins, give_outputs ? outs : NULL);
    if (*r != OPARA_OK) return 0;
    ya = give_outputs == 1 ? m->ya : (const float*)opara__cuda_session_output(s, 0);
    yb = give_outputs == 1 ? m->yb : (const float*)opara__cuda_session_output(s, 1);
    yc = give_outputs ? m->yc : (const float*)opara__cuda_session_output(s, 2);
    return io_mismatches(m->ya_ref, ya, m->na) == 0 && io_mismatches(m->yb_ref, yb, IO_NB) == 0 &&
           io_mismatches(m->yc_ref, yc, IO_NB) == 0;
}

typedef struct io_thread_job {
    opara__cuda_session* s;
    io_model* m;
    int ok;
    opara_result r;
} io_thread_job;

static void* io_thread_main(void* arg) {
    io_thread_job* j = (io_thread_job*)arg;
    j->ok = io_run_matches(j->s, j->m, 1, &j->r);
    return NULL;
}

/* Driver calls of a host graph run of m with pieces of `chunk` bytes, counted from the layout here:
   push + one copy per piece of the input region (the 256-byte aligned buffers of a, b and c; when a
   goes direct, one copy of it and one per piece that b and c touch) +
   cuGraphLaunch + one copy per output piece (ya in pieces, yb and yc in one each) + a record and a
   synchronize per event (after each group of >= chunk bytes but the last) + the closing
   cuStreamSynchronize + pop. */
static uint64_t io_graph_calls(const io_model* m, size_t chunk, int a_direct) {
    size_t al = 256, a_bytes = (size_t)m->na * 4, b_off = (a_bytes + al - 1) / al * al;
    size_t in_bytes = b_off + 2 * al, out_pieces = (a_bytes + chunk - 1) / chunk + 2;
    size_t in_copies = a_direct ? 1 + (b_off + al + IO_NB * 4 - 1) / chunk - b_off / chunk + 1 : (in_bytes + chunk - 1) / chunk;
    size_t left = a_bytes, filled = 0, events = 0, total = a_bytes + 2 * IO_NB * 4, done = 0;
    while (left) { /* ya's pieces (yb's and yc's follow: no event after ya's last piece can be the last) */
        size_t piece = left < chunk ? left : chunk;
        left -= piece, filled += piece, done += piece;
        if (filled >= chunk && done < total) ++events, filled = 0;
    }
    return 2 + in_copies + 1 + out_pieces + 2 * events + 1;
}

/* Host runs go through the pinned staging in pieces: an input split over several pieces, not a
   multiple of the piece, a piece holding the end of one input and two whole small ones, outputs in
   several pieces with the events between groups. Both modes, pieces of
   4000 bytes and the default (512 KiB, with an input of 3 pieces and some), outputs given, not given
   (left in the staging), given as the staging itself, and a run from another thread; the driver calls
   counted from the layout (small I/O: as many as one copy each). An input of at least io_direct bytes
   goes from the caller's memory (the default threshold, 1 MiB, takes a of 300001 floats; SIZE_MAX
   stages everything; 8000 bytes sends a of 2500 floats direct while b and c share a piece of 4000). */
OT_TEST(host_io_goes_through_the_staging_in_pieces) {
    static const struct { int na; size_t chunk, direct; int a_direct; } cases[] = {
        {2500, 4000, SIZE_MAX, 0}, {2500, 0, 0, 0}, {300001, 0, SIZE_MAX, 0}, {300001, 0, 0, 1}, {2500, 4000, 8000, 1}};
    char why[512];
    unsigned c;
    int mode;
    if (!driver_loads(why, sizeof why)) SKIP("no CUDA driver: %s", why);
    for (c = 0; c < sizeof cases / sizeof cases[0]; ++c)
        for (mode = 0; mode < 2; ++mode) {
            io_model m;
            opara__cuda_options o = options(mode ? OPARA__CUDA_GRAPH : OPARA__CUDA_EAGER);
            opara__cuda_session* s = NULL;
            opara__cuda_info info;
            io_thread_job job;
            pthread_t th;
            opara_result r;
            int give;
            REQUIRE(io_model_make(&m, cases[c].na));
            o.io_chunk = cases[c].chunk;
            o.io_direct = cases[c].direct;
            r = opara__cuda_session_create(m.rt, &m.g, &o, &s);
            if (r != OPARA_OK) OT_LOG("session: %s", opara_runtime_last_error(m.rt));
            REQUIRE(r == OPARA_OK);
            for (give = 1; give >= 0; --give) { /* given; then NULL: left in the staging */
                int ok = io_run_matches(s, &m, give, &r);
                CHECK_EQ(OPARA_OK, r);
                if (!ok) OT_LOG("a=%d chunk=%zu %s outputs %s: outputs differ", cases[c].na, cases[c].chunk,
                                mode_name(mode), give ? "given" : "not given");
                CHECK(ok);
            }
            CHECK(io_run_matches(s, &m, 2, &r));
            CHECK_EQ(OPARA_OK, r);
            opara__cuda_session_info(s, &info);
            if (mode) CHECK_EQ((long long)io_graph_calls(&m, cases[c].chunk ? cases[c].chunk : 512 * 1024, cases[c].a_direct),
                               (long long)info.driver_calls_last_run);
            /* inputs and outputs within one piece: what a single copy of the input region and one copy per
               output made (push, copy in, launch, 3 copies out, synchronize, pop) */
            if (mode && cases[c].na == 2500 && !cases[c].chunk) CHECK_EQ(8, (long long)info.driver_calls_last_run);
            printf("host I/O: a of %7d floats%s, pieces of %6zu bytes, %s: %llu driver calls per run\n", cases[c].na,
                   cases[c].a_direct ? " (direct)" : "", cases[c].chunk ? cases[c].chunk : (size_t)512 * 1024, mode_name(mode),
                   (unsigned long long)info.driver_calls_last_run);
            job.s = s, job.m = &m, job.ok = 0, job.r = OPARA_ERR_INVALID_STATE;
            REQUIRE(pthread_create(&th, NULL, io_thread_main, &job) == 0);
            pthread_join(th, NULL);
            CHECK_EQ(OPARA_OK, job.r);
            CHECK(job.ok);
            opara__cuda_session_destroy(s);
            io_model_free(&m);
        }
}

/* Fault injection into the session's copy of the driver table: the nth call of one function fails
   with INVALID_VALUE; every cuStreamSynchronize after that failure is counted (the run must wait
   for what it queued before returning). */
static struct {
    opara_cuda_driver real;
    int fail_at, calls, syncs_after;
    opara_CUresult code;
} io_fault;

static opara_CUresult io_fault_hit(void) {
    if (++io_fault.calls == io_fault.fail_at) return io_fault.code;
    return OPARA_CUDA_SUCCESS;
}
static opara_CUresult io_fail_htod(opara_CUdeviceptr d, const void* h, size_t n, opara_CUstream st) {
    opara_CUresult r = io_fault_hit();
    return r ? r : io_fault.real.cuMemcpyHtoDAsync_v2(d, h, n, st);
}
static opara_CUresult io_fail_dtoh(void* h, opara_CUdeviceptr d, size_t n, opara_CUstream st) {
    opara_CUresult r = io_fault_hit();
    return r ? r : io_fault.real.cuMemcpyDtoHAsync_v2(h, d, n, st);
}
static opara_CUresult io_fail_event_sync(opara_CUevent e) {
    opara_CUresult r = io_fault_hit();
    return r ? r : io_fault.real.cuEventSynchronize(e);
}
static opara_CUresult io_count_sync(opara_CUstream st) {
    if (io_fault.calls >= io_fault.fail_at) io_fault.syncs_after++;
    return io_fault.real.cuStreamSynchronize(st);
}

/* A copy failing in the middle of the pipeline (the second input piece, the second output piece)
   and a failing wait for an output group: a clear error naming the step, the run waited for what it
   had queued, and the session's next run is correct. */
OT_TEST(a_copy_failing_mid_pipeline_is_a_clear_error_and_the_session_runs_on) {
    static const char* const what[3] = {"copying the inputs to the device", "copying an output", "running the model"};
    char why[512];
    int k, mode;
    if (!driver_loads(why, sizeof why)) SKIP("no CUDA driver: %s", why);
    for (mode = 0; mode < 2; ++mode)
        for (k = 0; k < 3; ++k) {
            io_model m;
            opara__cuda_options o = options(mode ? OPARA__CUDA_GRAPH : OPARA__CUDA_EAGER);
            opara__cuda_session* s = NULL;
            opara_result r;
            REQUIRE(io_model_make(&m, 2500));
            o.io_chunk = 4000;
            REQUIRE(opara__cuda_session_create(m.rt, &m.g, &o, &s) == OPARA_OK);
            memset(&io_fault, 0, sizeof io_fault);
            io_fault.real = s->cu;
            io_fault.fail_at = 2;
            io_fault.code = OPARA_CUDA_ERROR_INVALID_VALUE;
            if (k == 0) s->cu.cuMemcpyHtoDAsync_v2 = io_fail_htod;
            if (k == 1) s->cu.cuMemcpyDtoHAsync_v2 = io_fail_dtoh;
            if (k == 2) s->cu.cuEventSynchronize = io_fail_event_sync;
            s->cu.cuStreamSynchronize = io_count_sync;
            CHECK(!io_run_matches(s, &m, 1, &r));
            CHECK_EQ(OPARA_ERR_CUDA, r);
            CHECK(strstr(opara__cuda_session_last_error(s), what[k]) != NULL);
            CHECK(strstr(opara__cuda_session_last_error(s), "CUDA_ERROR_INVALID_VALUE") != NULL);
            CHECK_EQ(2, io_fault.calls); /* the failed call stopped the pipeline */
            CHECK_EQ(1, io_fault.syncs_after); /* and what was queued was waited for */
            OT_LOG("%s, fault %d: %s", mode_name(mode), k, opara__cuda_session_last_error(s));
            s->cu = io_fault.real;
            CHECK(io_run_matches(s, &m, 1, &r));
            CHECK_EQ(OPARA_OK, r);
            opara__cuda_session_destroy(s);
            io_model_free(&m);
        }
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
   workspaces, constants, inputs, tables, the pinned host staging, and the libraries' own handles),
   each time in the first session of a fresh runtime so the runtime's CUDA state is set up under
   the failure too: each is a clear out-of-memory error (OPARA_ERR_OUT_OF_MEMORY for the pinned
   host memory, else OPARA_ERR_DEVICE_MEMORY) and, once the runtime is destroyed, nothing is left:
   no device or pinned allocation, no retained context (when the emulator counts them) and, under
   `make test SAN=1`, no host leak. */
OT_TEST(allocation_failure_is_a_clear_error_and_frees_everything) {
    test_model m;
    char why[512];
    emu_config_fn cfg = emu_config();
    opara__cuda_options o = options(OPARA__CUDA_GRAPH);
    opara__cuda_session* s = NULL;
    emu_stat_fn stat;
    int nth, failures = 0, arena_seen = 0, pinned_seen = 0, first_calls = 0;
    opara_result r = OPARA_ERR_DEVICE_MEMORY;
    if (!driver_loads(why, sizeof why)) SKIP("no CUDA driver: %s", why);
    if (!cfg) SKIP("fault injection needs the emulator");
    if (!(stat = emu_stat())) SKIP("the emulator has no opara_emu_stat");
    m.rt = make_runtime();
    REQUIRE(build_model(&m, 0));
    for (nth = 1; nth <= 64 && r != OPARA_OK; ++nth) {
        char err[OPARA__DETAIL_MAX];
        long long before = stat("allocations"), contexts = stat("live_contexts");
        opara_runtime* rt = make_runtime();
        cfg("fail_alloc", nth);
        r = opara__cuda_session_create(rt, &m.g, &o, &s);
        cfg("fail_alloc", 0);
        snprintf(err, sizeof err, "%s", opara_runtime_last_error(rt));
        if (r == OPARA_OK) opara__cuda_session_destroy(s);
        opara_runtime_destroy(rt);
        CHECK_EQ(before, stat("allocations")); /* nothing left allocated on the device or pinned */
        if (contexts >= 0) CHECK_EQ(contexts, stat("live_contexts"));
        if (r == OPARA_OK) break;
        ++failures;
        CHECK(s == NULL);
        if (strstr(err, "pinned")) {
            pinned_seen = 1;
            CHECK_EQ(OPARA_ERR_OUT_OF_MEMORY, r);
            CHECK(strstr(err, "cuMemAllocHost") != NULL);
        } else if (strstr(err, "for node")) {
            /* a library's lazy state, allocated by its first call (the warm-up run; the strict emulator
               does it like cuBLAS/cuDNN): the launch path reports the library's failure, not yet always
               as OPARA_ERR_DEVICE_MEMORY, so only where it failed is checked here */
            ++first_calls;
            CHECK(r == OPARA_ERR_DEVICE_MEMORY || r == OPARA_ERR_CUDA || r == OPARA_ERR_CUBLAS || r == OPARA_ERR_CUDNN);
            CHECK(strstr(err, "cuBLAS") || strstr(err, "cublas") || strstr(err, "cuDNN") || strstr(err, "cudnn"));
        } else {
            CHECK_EQ(OPARA_ERR_DEVICE_MEMORY, r);
            CHECK(strstr(err, "cuMemAlloc") != NULL || strstr(err, "cudnnCreate") != NULL || strstr(err, "handle for stream") != NULL);
        }
        if (strstr(err, "arena and library workspaces")) arena_seen = 1;
        OT_LOG("allocation %d: %s", nth, err);
    }
    CHECK_EQ(OPARA_OK, r); /* past the last allocation the session is created */
    CHECK(failures >= 6);  /* the four buffers, the pinned staging and at least one library handle */
    CHECK(arena_seen);
    CHECK(pinned_seen);
    printf("session creation: %d device and pinned allocations (%d in libraries' first calls), each failure reported, "
           "nothing left after the runtime\n", failures, first_calls);
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
    /* a driver older than CUDA 12.0, in a fresh runtime (m.rt has loaded the driver already) */
    if (cfg) {
        opara_runtime* rt = make_runtime();
        o = options(OPARA__CUDA_GRAPH);
        cfg("driver_version", 11080);
        r = opara__cuda_session_create(rt, &m.g, &o, &s);
        cfg("driver_version", 0);
        CHECK_EQ(OPARA_ERR_NO_BACKEND, r);
        CHECK(strstr(opara_runtime_last_error(rt), "11") != NULL);
        OT_LOG("old driver: %s", opara_runtime_last_error(rt));
        opara_runtime_destroy(rt);
    }
    /* the oldest driver the loader accepts, CUDA 12.0 (PTX ISA 8.0): the embedded PTX declares that
       version (make ptx lowers nvcc 13's 9.0), so the session runs; the emulator refuses newer PTX
       with CUDA_ERROR_UNSUPPORTED_PTX_VERSION as a 12.0 driver does */
    if (cfg) {
        opara_runtime* rt = make_runtime();
        o = options(OPARA__CUDA_GRAPH);
        cfg("driver_version", 12000);
        r = opara__cuda_session_create(rt, &m.g, &o, &s);
        if (r == OPARA_OK) {
            int ok;
            opara__cuda_session_info(s, &info);
            CHECK(strstr(info.kernels, "embedded PTX") != NULL);
            CHECK(run_and_compare(s, &m, 0, &ok) < 1e-10);
            CHECK(ok);
            opara__cuda_session_destroy(s);
        } else {
            OT_LOG("CUDA 12.0 driver: %s", opara_runtime_last_error(rt));
            CHECK_EQ(OPARA_OK, r);
        }
        cfg("driver_version", 0);
        opara_runtime_destroy(rt);
    }
    opara__graph_free(&m.g);
    opara_runtime_destroy(m.rt);
}

/* ---- lifecycle: threads, contexts, the runtime's CUDA state, device-pointer I/O -------------------- */

/* Public sessions take the libraries from the environment: the ones these tests use, unless set. */
static void use_test_libraries(void) {
    setenv("OPARA_CUDA_DRIVER", driver_path(), 0);
    setenv("OPARA_CUBLAS", cublas_path(), 0);
    setenv("OPARA_CUDNN", cudnn_path(), 0);
}

enum { Y_N = NB * NCLS, SG_N = NB * CO * HW * HW };

/* A tensor of session s for input (out = 0) or output (out = 1) `index`, over data. */
static opara_tensor tensor_of(const opara_session* s, int out, uint32_t index, void* data) {
    opara_tensor t;
    opara_tensor_info ti;
    memset(&t, 0, sizeof t);
    if ((out ? opara_session_output_info(s, index, &ti) : opara_session_input_info(s, index, &ti)) != OPARA_OK) return t;
    t.dtype = ti.dtype;
    t.rank = ti.rank;
    memcpy(t.dims, ti.dims, sizeof t.dims);
    t.data = data;
    return t;
}

/* One public run: x in, Y and S out (host memory, or device addresses with device = 1). */
static opara_result run_public(opara_session* s, const void* x, void* y, void* sg, int device) {
    opara_tensor in = tensor_of(s, 0, 0, (void*)x), out[2];
    out[0] = tensor_of(s, 1, 0, y);
    out[1] = tensor_of(s, 1, 1, sg);
    return device ? opara_session_run_device(s, &in, 1, out, 2) : opara_session_run(s, &in, 1, out, 2);
}

static double nmse_f(const float* ref, const float* got, int n) {
    double num = 0, den = 0;
    int i;
    for (i = 0; i < n; ++i) {
        num += ((double)ref[i] - got[i]) * ((double)ref[i] - got[i]);
        den += (double)ref[i] * ref[i];
    }
    return den > 0 ? num / den : num;
}

/* The test model as a public model of m->rt, and the CPU backend's outputs for m->x. */
typedef struct public_model {
    test_model m;
    opara_model* model;
    float y_cpu[Y_N], sg_cpu[SG_N];
} public_model;

static int public_model_make(public_model* p) {
    opara_session* cpu = NULL;
    opara_session_desc d;
    int ok;
    p->model = NULL;
    p->m.rt = make_runtime();
    if (!p->m.rt || !build_model(&p->m, 0) || opara__model_from_graph(p->m.rt, &p->m.g, &p->model) != OPARA_OK) return 0;
    memset(&d, 0, sizeof d);
    d.backend = OPARA_BACKEND_CPU;
    d.builtin_gemm = 1;
    if (opara_session_create(p->m.rt, p->model, &d, &cpu) != OPARA_OK) return 0;
    ok = run_public(cpu, p->m.x, p->y_cpu, p->sg_cpu, 0) == OPARA_OK;
    opara_session_destroy(cpu);
    return ok;
}

static void public_model_free(public_model* p) {
    opara_model_destroy(p->model);
    opara__graph_free(&p->m.g); /* empty: moved into the model */
    opara_runtime_destroy(p->m.rt);
}

/* The public desc of a CUDA session in mode 0 eager, 1 graph, 2 sequential graph. */
static opara_session_desc cuda_desc(int mode) {
    opara_session_desc d;
    memset(&d, 0, sizeof d);
    d.backend = OPARA_BACKEND_CUDA;
    d.cuda_eager = mode == 0;
    d.strategy = mode == 2 ? OPARA_STRATEGY_SEQUENTIAL : OPARA_STRATEGY_OPARA;
    return d;
}
static const char* const cuda_mode_names[3] = {"eager", "graph", "sequential-graph"};

/* Outputs of a run against the CPU backend's. */
static double worst_vs_cpu(const public_model* p, const float* y, const float* sg) {
    double e1 = nmse_f(p->y_cpu, y, Y_N), e2 = nmse_f(p->sg_cpu, sg, SG_N);
    return e1 > e2 ? e1 : e2;
}

/* ---- jobs on other threads ---- */

/* The test's own driver table: contexts of "the host application". */
typedef opara_CUresult (*ctx_create_fn)(opara_CUcontext* ctx, unsigned int flags, opara_CUdevice dev);
typedef opara_CUresult (*ctx_destroy_fn)(opara_CUcontext ctx);
typedef struct host_driver {
    opara_cuda_driver cu;
    ctx_create_fn create;
    ctx_destroy_fn destroy;
    opara_CUdevice dev;
} host_driver;

static int host_driver_open(host_driver* h, char* why, size_t cap) {
    memset(h, 0, sizeof *h);
    if (opara_cuda_driver_load(&h->cu, driver_path(), why, cap) != OPARA_CUDA_LOAD_OK) return 0;
    *(void**)(&h->create) = dlsym(h->cu.library, "cuCtxCreate_v2");
    *(void**)(&h->destroy) = dlsym(h->cu.library, "cuCtxDestroy_v2");
    if (!h->create || !h->destroy || h->cu.cuInit(0) || h->cu.cuDeviceGet(&h->dev, 0)) {
        snprintf(why, cap, "the driver has no cuCtxCreate_v2/cuCtxDestroy_v2 or no device");
        opara_cuda_driver_unload(&h->cu);
        return 0;
    }
    return 1;
}

typedef enum job_kind { JOB_CREATE, JOB_RUN, JOB_RUN_DEVICE, JOB_DESTROY } job_kind;

typedef struct job {
    job_kind kind;
    public_model* p;
    opara_session_desc desc;
    opara_session* s;
    const void* x;
    void *y, *sg;
    opara_result r;
    char error[OPARA__DETAIL_MAX];
    host_driver* own; /* non-NULL: the job runs with its own context current (made with cuCtxCreate) */
    int own_kept;     /* that context was still current after the call */
    int own_ok;       /* it could be made */
} job;

static void job_call(job* j) {
    switch (j->kind) {
    case JOB_CREATE:
        j->r = opara_session_create(j->p->m.rt, j->p->model, &j->desc, &j->s);
        snprintf(j->error, sizeof j->error, "%s", opara_runtime_last_error(j->p->m.rt));
        break;
    case JOB_RUN:
    case JOB_RUN_DEVICE:
        j->r = run_public(j->s, j->x, j->y, j->sg, j->kind == JOB_RUN_DEVICE);
        snprintf(j->error, sizeof j->error, "%s", opara_session_last_error(j->s));
        break;
    case JOB_DESTROY: opara_session_destroy(j->s), j->s = NULL, j->r = OPARA_OK; break;
    }
}

static void* job_main(void* arg) {
    job* j = (job*)arg;
    opara_CUcontext mine = NULL, now = NULL;
    if (j->own) {
        j->own_ok = j->own->create(&mine, 0, j->own->dev) == OPARA_CUDA_SUCCESS; /* and current */
        if (!j->own_ok) return NULL;
    }
    job_call(j);
    if (j->own) {
        j->own_kept = j->own->cu.cuCtxGetCurrent(&now) == OPARA_CUDA_SUCCESS && now == mine;
        j->own->destroy(mine);
    }
    return NULL;
}

/* Runs the job on a new thread and waits for it. */
static void on_thread(job* j) {
    pthread_t t;
    if (pthread_create(&t, NULL, job_main, j) != 0) {
        j->r = OPARA_ERR_INTERNAL;
        snprintf(j->error, sizeof j->error, "pthread_create failed");
        return;
    }
    pthread_join(t, NULL);
}

/* A session created on thread A, run on thread B (twice: the second run replays the graph), and
   destroyed on thread C, in each mode, against the CPU backend. Before contexts were pushed per call,
   runs on another thread failed with CUDA_ERROR_INVALID_CONTEXT (cuDNN: 5001 in eager mode). */
OT_TEST(session_created_run_and_destroyed_on_different_threads) {
    public_model* p;
    char why[512];
    int mode, run;
    if (!driver_loads(why, sizeof why)) SKIP("no CUDA driver: %s", why);
    use_test_libraries();
    p = (public_model*)calloc(1, sizeof *p);
    REQUIRE(p != NULL);
    REQUIRE(public_model_make(p));
    for (mode = 0; mode < 3; ++mode) {
        static float y[Y_N], sg[SG_N];
        job a, b, c;
        opara_plan_info info;
        memset(&a, 0, sizeof a);
        a.kind = JOB_CREATE, a.p = p, a.desc = cuda_desc(mode);
        on_thread(&a);
        if (a.r != OPARA_OK) {
            OT_LOG("%s: create: %s", cuda_mode_names[mode], a.error);
            CHECK(0);
            continue;
        }
        CHECK_EQ(OPARA_OK, opara_session_get_plan_info(a.s, &info));
        CHECK_STR(cuda_mode_names[mode], info.cuda_mode); /* no fallback: the graph was captured on A */
        for (run = 0; run < 2; ++run) {
            double e;
            b = a;
            b.kind = JOB_RUN, b.x = p->m.x, b.y = y, b.sg = sg;
            memset(y, 0, sizeof y), memset(sg, 0, sizeof sg);
            on_thread(&b);
            CHECK_EQ(OPARA_OK, b.r);
            if (b.r != OPARA_OK) OT_LOG("%s: run on another thread: %s", cuda_mode_names[mode], b.error);
            e = worst_vs_cpu(p, y, sg);
            if (!(e <= 1e-10)) {
                OT_LOG("%s run %d: NMSE vs CPU %g", cuda_mode_names[mode], run, e);
                CHECK(0);
            }
        }
        c = a;
        c.kind = JOB_DESTROY;
        on_thread(&c);
        printf("%-16s created, run and destroyed on three threads: NMSE vs CPU %.2e\n", cuda_mode_names[mode],
               worst_vs_cpu(p, y, sg));
    }
    public_model_free(p);
    free(p);
}

/* 1 when cuCtxPushCurrent/cuCtxPopCurrent keep a per-thread stack (NVIDIA's documented behaviour):
   on a thread with its own context current, push + pop leaves it current. */
static int context_stack_works(host_driver* h) {
    opara_CUcontext mine = NULL, primary = NULL, popped = NULL, now = NULL;
    int ok = 0;
    if (h->create(&mine, 0, h->dev) != OPARA_CUDA_SUCCESS) return 0;
    if (h->cu.cuDevicePrimaryCtxRetain(&primary, h->dev) == OPARA_CUDA_SUCCESS) {
        ok = h->cu.cuCtxPushCurrent_v2(primary) == OPARA_CUDA_SUCCESS && h->cu.cuCtxPopCurrent_v2(&popped) == OPARA_CUDA_SUCCESS &&
             popped == primary && h->cu.cuCtxGetCurrent(&now) == OPARA_CUDA_SUCCESS && now == mine;
        h->cu.cuDevicePrimaryCtxRelease_v2(h->dev);
    }
    h->destroy(mine);
    return ok;
}

static void* stack_probe_main(void* arg) {
    host_driver* h = (host_driver*)arg;
    return context_stack_works(h) ? arg : NULL;
}

/* The host application's own current context survives every call: a thread with its own context
   (cuCtxCreate) creates a session, another such thread runs it (host and device-pointer I/O need
   no context of the caller's), a third destroys it; each still has its own context current after
   our call returns, and the results match the CPU backend. */
OT_TEST(callers_own_current_context_is_kept) {
    public_model* p;
    host_driver h;
    char why[512];
    void* probe = NULL;
    pthread_t t;
    int mode;
    if (!driver_loads(why, sizeof why)) SKIP("no CUDA driver: %s", why);
    if (!host_driver_open(&h, why, sizeof why)) SKIP("%s", why);
    if (pthread_create(&t, NULL, stack_probe_main, &h) == 0) pthread_join(t, &probe);
    if (!probe) {
        opara_cuda_driver_unload(&h.cu);
        SKIP("this driver's cuCtxPushCurrent/cuCtxPopCurrent do not keep a per-thread context stack (the emulator "
             "treats push as set until its strict context rules land)");
    }
    use_test_libraries();
    p = (public_model*)calloc(1, sizeof *p);
    REQUIRE(p != NULL);
    REQUIRE(public_model_make(p));
    for (mode = 0; mode < 3; ++mode) {
        static float y[Y_N], sg[SG_N];
        job a, b, c;
        memset(&a, 0, sizeof a);
        a.kind = JOB_CREATE, a.p = p, a.desc = cuda_desc(mode), a.own = &h;
        on_thread(&a);
        CHECK(a.own_ok);
        if (a.r != OPARA_OK) {
            OT_LOG("%s: create: %s", cuda_mode_names[mode], a.error);
            CHECK(0);
            continue;
        }
        CHECK(a.own_kept);
        b = a;
        b.kind = JOB_RUN, b.x = p->m.x, b.y = y, b.sg = sg, b.own_kept = 0;
        memset(y, 0, sizeof y), memset(sg, 0, sizeof sg);
        on_thread(&b);
        CHECK_EQ(OPARA_OK, b.r);
        CHECK(b.own_kept);
        CHECK(worst_vs_cpu(p, y, sg) <= 1e-10);
        c = a;
        c.kind = JOB_DESTROY, c.own_kept = 0;
        on_thread(&c);
        CHECK(c.own_kept);
        OT_LOG("%s: own context kept through create %d, run %d, destroy %d", cuda_mode_names[mode], a.own_kept, b.own_kept,
               c.own_kept);
    }
    public_model_free(p);
    free(p);
    opara_cuda_driver_unload(&h.cu);
}

/* Device-pointer I/O: inputs and outputs in device memory of the primary context (allocated here
   with the driver, as an embedder using the CUDA runtime would) give bit for bit the outputs of a
   host run, in eager and graph mode; outputs not given are not written; the run validates like
   opara_session_run; a CPU session refuses it. */
/* A CUDA session's plan goes through the same exports as a CPU session's: the DOT names every node
   with the stream the plan gave it (the session's plan is the one the CUDA backend took over). */
OT_TEST(a_cuda_session_writes_its_plan_dot) {
    public_model* p;
    char why[512], path[64], line[512];
    int mode;
    if (!driver_loads(why, sizeof why)) SKIP("no CUDA driver: %s", why);
    use_test_libraries();
    p = (public_model*)calloc(1, sizeof *p);
    REQUIRE(p != NULL);
    REQUIRE(public_model_make(p));
    snprintf(path, sizeof path, "/tmp/opara_cuda_plan_%d.dot", (int)getpid());
    for (mode = 0; mode < 3; ++mode) {
        opara_session_desc d = cuda_desc(mode);
        opara_session* s = NULL;
        opara_plan* plan = NULL;
        opara_plan_info info;
        uint32_t nodes = 0, matched = 0;
        FILE* f;
        if (opara_session_create(p->m.rt, p->model, &d, &s) != OPARA_OK) {
            OT_LOG("%s: %s", cuda_mode_names[mode], opara_runtime_last_error(p->m.rt));
            CHECK(0);
            continue;
        }
        REQUIRE(opara_session_get_plan_info(s, &info) == OPARA_OK);
        CHECK_STR(info.backend, "cuda");
        REQUIRE(opara_session_get_plan(s, &plan) == OPARA_OK);
        CHECK_EQ(OPARA_OK, opara_session_write_plan_dot(s, path));
        f = fopen(path, "r");
        REQUIRE(f != NULL);
        while (fgets(line, sizeof line, f)) {
            unsigned n, stream;
            const char* op = strstr(line, "\\n"); /* the label's second line: "<op> s<stream>" */
            const char* at = op ? strstr(op, " s") : NULL;
            opara_plan_node pn;
            if (sscanf(line, "  n%u [label=", &n) != 1 || !at) continue;
            nodes++;
            if (opara_plan_get_node(plan, n, &pn) == OPARA_OK && sscanf(at, " s%u", &stream) == 1 && stream == pn.stream) matched++;
        }
        fclose(f);
        CHECK_EQ(nodes, info.n_nodes);
        CHECK_EQ(matched, info.n_nodes);
        opara_plan_destroy(plan);
        opara_session_destroy(s);
    }
    remove(path);
    public_model_free(p);
    free(p);
}

/* One public host run of the io model: outputs named out of order, yc twice, yb not asked for (read
   back with opara_session_output_data); 1 when each equals the reference. */
static int io_public_run_matches(opara_session* s, io_model* m) {
    float yc2[IO_NB];
    opara_tensor in[3], out[3];
    const float* yb;
    uint32_t i;
    for (i = 0; i < 3; ++i) in[i] = tensor_of(s, 0, i, i == 0 ? m->a : i == 1 ? m->b : m->c);
    out[0] = tensor_of(s, 1, 2, m->yc), out[1] = tensor_of(s, 1, 0, m->ya), out[2] = tensor_of(s, 1, 2, yc2);
    out[0].name = out[2].name = "yc", out[1].name = "ya";
    memset(m->ya, 0, (size_t)m->na * sizeof(float)), memset(m->yc, 0, sizeof m->yc), memset(yc2, 0, sizeof yc2);
    if (opara_session_run(s, in, 3, out, 3) != OPARA_OK) return 0;
    yb = (const float*)opara_session_output_data(s, 1);
    return yb && io_mismatches(m->ya_ref, m->ya, m->na) == 0 && io_mismatches(m->yb_ref, yb, IO_NB) == 0 &&
           io_mismatches(m->yc_ref, m->yc, IO_NB) == 0 && io_mismatches(m->yc_ref, yc2, IO_NB) == 0;
}

/* opara_session_run hands the caller's output pointers to the backend, so a CUDA host run copies
   each output group to them as it comes back (an input of 3 default pieces and some, an output of
   as many with two events): the CPU and CUDA backends give the reference, for outputs named out of
   order, one named twice (the second copy from the backend's output) and one not asked for. */
OT_TEST(public_host_runs_deliver_outputs_from_the_pipeline) {
    io_model m;
    opara_model* model = NULL;
    char why[512];
    int be;
    if (!driver_loads(why, sizeof why)) SKIP("no CUDA driver: %s", why);
    use_test_libraries();
    REQUIRE(io_model_make(&m, 300001));
    REQUIRE(opara__model_from_graph(m.rt, &m.g, &model) == OPARA_OK);
    for (be = 0; be < 3; ++be) {
        opara_session* s = NULL;
        opara_session_desc d = cuda_desc(be - 1);
        if (be == 0) memset(&d, 0, sizeof d), d.backend = OPARA_BACKEND_CPU;
        REQUIRE(opara_session_create(m.rt, model, &d, &s) == OPARA_OK);
        if (!io_public_run_matches(s, &m)) {
            OT_LOG("%s: %s", be ? cuda_mode_names[be - 1] : "cpu", opara_session_last_error(s));
            CHECK(0);
        }
        opara_session_destroy(s);
    }
    opara_model_destroy(model);
    io_model_free(&m); /* its graph is empty: moved into the model */
}

OT_TEST(run_device_matches_a_host_run) {
    public_model* p;
    host_driver h;
    char why[512];
    opara_CUcontext primary = NULL;
    opara_CUdeviceptr dx = 0, dy = 0, dsg = 0;
    static float y_host[Y_N], sg_host[SG_N], y_dev[Y_N], sg_dev[SG_N];
    int mode;
    if (!driver_loads(why, sizeof why)) SKIP("no CUDA driver: %s", why);
    if (!host_driver_open(&h, why, sizeof why)) SKIP("%s", why);
    use_test_libraries();
    p = (public_model*)calloc(1, sizeof *p);
    REQUIRE(p != NULL);
    REQUIRE(public_model_make(p));
    REQUIRE(h.cu.cuDevicePrimaryCtxRetain(&primary, h.dev) == OPARA_CUDA_SUCCESS);
    REQUIRE(h.cu.cuCtxPushCurrent_v2(primary) == OPARA_CUDA_SUCCESS);
    REQUIRE(h.cu.cuMemAlloc_v2(&dx, sizeof p->m.x) == OPARA_CUDA_SUCCESS);
    REQUIRE(h.cu.cuMemAlloc_v2(&dy, sizeof y_dev) == OPARA_CUDA_SUCCESS);
    REQUIRE(h.cu.cuMemAlloc_v2(&dsg, sizeof sg_dev) == OPARA_CUDA_SUCCESS);
    REQUIRE(h.cu.cuMemcpyHtoD_v2(dx, p->m.x, sizeof p->m.x) == OPARA_CUDA_SUCCESS);
    h.cu.cuCtxPopCurrent_v2(NULL); /* the runs below are made with no context current */
    for (mode = 0; mode < 2; ++mode) {
        opara_session_desc d = cuda_desc(mode);
        opara_session* s = NULL;
        opara_tensor in, out[2];
        if (opara_session_create(p->m.rt, p->model, &d, &s) != OPARA_OK) {
            OT_LOG("%s: %s", cuda_mode_names[mode], opara_runtime_last_error(p->m.rt));
            CHECK(0);
            continue;
        }
        CHECK_EQ(OPARA_OK, run_public(s, p->m.x, y_host, sg_host, 0));
        h.cu.cuCtxPushCurrent_v2(primary);
        h.cu.cuMemsetD8_v2(dy, 0xff, sizeof y_dev), h.cu.cuMemsetD8_v2(dsg, 0xff, sizeof sg_dev);
        h.cu.cuCtxPopCurrent_v2(NULL);
        CHECK_EQ(OPARA_OK, run_public(s, (void*)(uintptr_t)dx, (void*)(uintptr_t)dy, (void*)(uintptr_t)dsg, 1));
        OT_LOG("%s: %s", cuda_mode_names[mode], opara_session_last_error(s));
        h.cu.cuCtxPushCurrent_v2(primary);
        CHECK(h.cu.cuMemcpyDtoH_v2(y_dev, dy, sizeof y_dev) == OPARA_CUDA_SUCCESS);
        CHECK(h.cu.cuMemcpyDtoH_v2(sg_dev, dsg, sizeof sg_dev) == OPARA_CUDA_SUCCESS);
        h.cu.cuCtxPopCurrent_v2(NULL);
        CHECK(memcmp(y_host, y_dev, sizeof y_dev) == 0);
        CHECK(memcmp(sg_host, sg_dev, sizeof sg_dev) == 0);
        CHECK(worst_vs_cpu(p, y_dev, sg_dev) <= 1e-10);
        /* only S asked for (by name): Y's device buffer keeps its 0xff bytes */
        h.cu.cuCtxPushCurrent_v2(primary);
        h.cu.cuMemsetD8_v2(dy, 0xff, sizeof y_dev);
        h.cu.cuCtxPopCurrent_v2(NULL);
        in = tensor_of(s, 0, 0, (void*)(uintptr_t)dx);
        out[0] = tensor_of(s, 1, 1, (void*)(uintptr_t)dsg);
        out[0].name = "sg";
        CHECK_EQ(OPARA_OK, opara_session_run_device(s, &in, 1, out, 1));
        h.cu.cuCtxPushCurrent_v2(primary);
        CHECK(h.cu.cuMemcpyDtoH_v2(y_dev, dy, sizeof y_dev) == OPARA_CUDA_SUCCESS);
        h.cu.cuCtxPopCurrent_v2(NULL);
        {
            unsigned char ff[sizeof y_dev];
            memset(ff, 0xff, sizeof ff);
            CHECK(memcmp(ff, y_dev, sizeof y_dev) == 0);
        }
        /* the same validation as opara_session_run */
        out[0].rank = 1;
        CHECK_EQ(OPARA_ERR_SHAPE, opara_session_run_device(s, &in, 1, out, 1));
        CHECK_EQ(OPARA_ERR_INVALID_ARGS, opara_session_run_device(s, NULL, 0, NULL, 0)); /* input missing */
        CHECK(strstr(opara_session_last_error(s), "missing") != NULL);
        in.dtype = OPARA_DTYPE_I32;
        CHECK_EQ(OPARA_ERR_BAD_DTYPE, opara_session_run_device(s, &in, 1, NULL, 0));
        opara_session_destroy(s);
    }
    { /* a CPU session has no device pointers */
        opara_session_desc d;
        opara_session* s = NULL;
        memset(&d, 0, sizeof d);
        d.backend = OPARA_BACKEND_CPU;
        REQUIRE(opara_session_create(p->m.rt, p->model, &d, &s) == OPARA_OK);
        CHECK_EQ(OPARA_ERR_INVALID_ARGS, run_public(s, (void*)(uintptr_t)dx, (void*)(uintptr_t)dy, (void*)(uintptr_t)dsg, 1));
        CHECK(strstr(opara_session_last_error(s), "CUDA") != NULL);
        opara_session_destroy(s);
    }
    h.cu.cuCtxPushCurrent_v2(primary);
    h.cu.cuMemFree_v2(dx), h.cu.cuMemFree_v2(dy), h.cu.cuMemFree_v2(dsg);
    h.cu.cuCtxPopCurrent_v2(NULL);
    h.cu.cuDevicePrimaryCtxRelease_v2(h.dev);
    public_model_free(p);
    free(p);
    opara_cuda_driver_unload(&h.cu);
}

/* Two threads call host and device runs on one CUDA session at once until each has had `runs`
   runs: every call either runs (with the right outputs) or returns OPARA_ERR_BUSY at once, never a
   race. */
typedef struct hammer {
    opara_session* s;
    const public_model* p;
    opara_CUdeviceptr dx, dy, dsg;
    int device, runs, ok, busy, wrong, other;
    float y[Y_N], sg[SG_N];
} hammer;

static void* hammer_main(void* arg) {
    hammer* h = (hammer*)arg;
    long attempts;
    for (attempts = 0; h->ok < h->runs && attempts < 1000000; ++attempts) {
        opara_result r = h->device ? run_public(h->s, (void*)(uintptr_t)h->dx, (void*)(uintptr_t)h->dy, (void*)(uintptr_t)h->dsg, 1)
                                   : run_public(h->s, h->p->m.x, h->y, h->sg, 0);
        if (r == OPARA_OK) {
            ++h->ok;
            if (!h->device && !(worst_vs_cpu(h->p, h->y, h->sg) <= 1e-10)) ++h->wrong;
        } else if (r == OPARA_ERR_BUSY) {
            ++h->busy;
        } else {
            ++h->other;
        }
        usleep(100); /* lets the other thread in */
    }
    return NULL;
}

OT_TEST(concurrent_host_and_device_runs_get_busy_never_race) {
    public_model* p;
    host_driver hd;
    char why[512];
    opara_CUcontext primary = NULL;
    opara_session_desc d = cuda_desc(1);
    opara_session* s = NULL;
    hammer* hm;
    pthread_t t[2];
    int i;
    if (!driver_loads(why, sizeof why)) SKIP("no CUDA driver: %s", why);
    if (!host_driver_open(&hd, why, sizeof why)) SKIP("%s", why);
    use_test_libraries();
    p = (public_model*)calloc(1, sizeof *p);
    hm = (hammer*)calloc(2, sizeof *hm);
    REQUIRE(p != NULL && hm != NULL);
    REQUIRE(public_model_make(p));
    REQUIRE(opara_session_create(p->m.rt, p->model, &d, &s) == OPARA_OK);
    REQUIRE(hd.cu.cuDevicePrimaryCtxRetain(&primary, hd.dev) == OPARA_CUDA_SUCCESS);
    hd.cu.cuCtxPushCurrent_v2(primary);
    REQUIRE(hd.cu.cuMemAlloc_v2(&hm[1].dx, sizeof p->m.x) == OPARA_CUDA_SUCCESS);
    REQUIRE(hd.cu.cuMemAlloc_v2(&hm[1].dy, sizeof hm[1].y) == OPARA_CUDA_SUCCESS);
    REQUIRE(hd.cu.cuMemAlloc_v2(&hm[1].dsg, sizeof hm[1].sg) == OPARA_CUDA_SUCCESS);
    hd.cu.cuMemcpyHtoD_v2(hm[1].dx, p->m.x, sizeof p->m.x);
    hd.cu.cuCtxPopCurrent_v2(NULL);
    for (i = 0; i < 2; ++i) {
        hm[i].s = s, hm[i].p = p, hm[i].device = i, hm[i].runs = 10;
        REQUIRE(pthread_create(&t[i], NULL, hammer_main, &hm[i]) == 0);
    }
    for (i = 0; i < 2; ++i) pthread_join(t[i], NULL);
    OT_LOG("host: ok %d busy %d; device: ok %d busy %d", hm[0].ok, hm[0].busy, hm[1].ok, hm[1].busy);
    CHECK_EQ(10, hm[0].ok);
    CHECK_EQ(10, hm[1].ok);
    CHECK_EQ(0, hm[0].other + hm[1].other);
    CHECK_EQ(0, hm[0].wrong);
    /* the last device run's outputs are right too */
    hd.cu.cuCtxPushCurrent_v2(primary);
    hd.cu.cuMemcpyDtoH_v2(hm[1].y, hm[1].dy, sizeof hm[1].y);
    hd.cu.cuMemcpyDtoH_v2(hm[1].sg, hm[1].dsg, sizeof hm[1].sg);
    CHECK(worst_vs_cpu(p, hm[1].y, hm[1].sg) <= 1e-10);
    hd.cu.cuMemFree_v2(hm[1].dx), hd.cu.cuMemFree_v2(hm[1].dy), hd.cu.cuMemFree_v2(hm[1].dsg);
    hd.cu.cuCtxPopCurrent_v2(NULL);
    hd.cu.cuDevicePrimaryCtxRelease_v2(hd.dev);
    opara_session_destroy(s);
    public_model_free(p);
    free(p);
    free(hm);
    opara_cuda_driver_unload(&hd.cu);
}

/* ---- the runtime's CUDA state ---- */

typedef struct log_buf {
    char text[16384];
    size_t len;
} log_buf;

static void log_to_buf(opara_log_level level, opara_log_item item, const char* msg, void* user) {
    log_buf* b = (log_buf*)user;
    int n;
    (void)level;
    (void)item;
    n = snprintf(b->text + b->len, sizeof b->text - b->len, "%s\n", msg);
    if (n > 0) b->len = b->len + (size_t)n < sizeof b->text ? b->len + (size_t)n : sizeof b->text - 1;
}

static opara_runtime* make_logged_runtime(log_buf* b) {
    opara_runtime* rt = NULL;
    opara_runtime_desc d;
    memset(&d, 0, sizeof d);
    memset(b, 0, sizeof *b);
    d.logger.func = log_to_buf;
    d.logger.user_data = b;
    d.logger.max_level = OPARA_LOG_INFO;
    opara_runtime_create(&d, &rt);
    return rt;
}

/* use_nvrtc in a program built without OPARA_NVRTC_SOURCE (this one; tests/test_cuda_nvrtc.c has the
   sources): the kernel sources are not in the program, so the session warns, naming the macro, and
   runs the embedded PTX without loading NVRTC. */
OT_TEST(use_nvrtc_without_the_sources_runs_the_embedded_ptx) {
    test_model m;
    log_buf b;
    char why[512];
    opara__cuda_options o = options(OPARA__CUDA_GRAPH);
    opara__cuda_session* s = NULL;
    opara__cuda_info info;
    if (!driver_loads(why, sizeof why)) SKIP("no CUDA driver: %s", why);
    m.rt = make_logged_runtime(&b);
    REQUIRE(build_model(&m, 0));
    o.use_nvrtc = 1;
    REQUIRE(opara__cuda_session_create(m.rt, &m.g, &o, &s) == OPARA_OK);
    opara__cuda_session_info(s, &info);
    CHECK(strncmp(info.kernels, "embedded PTX", 12) == 0);
    CHECK_EQ(0, info.nvrtc);
    CHECK(strstr(b.text, "define OPARA_NVRTC_SOURCE") != NULL);
    OT_LOG("%s", info.kernels);
    opara__cuda_session_destroy(s);
    opara__graph_free(&m.g);
    opara_runtime_destroy(m.rt);
}

/* The file a library path or bare name (as make test-gpu sets them) loads, for a symlink to it:
   the path if it exists, else where the loader found `symbol`. */
static void absolute(const char* lib, const char* symbol, char* out, size_t cap) {
    char* real = realpath(lib, NULL);
    void* h;
    Dl_info where;
    snprintf(out, cap, "%s", real ? real : lib);
    free(real);
    if (real || !(h = dlopen(lib, RTLD_NOW))) return;
    memset(&where, 0, sizeof where);
    if (dladdr(dlsym(h, symbol), &where) && where.dli_fname) snprintf(out, cap, "%s", where.dli_fname);
    dlclose(h);
}

/* One runtime loads the driver, cuBLAS and cuDNN once and retains the device's primary context
   once for all its sessions; a session asking for another file than the loaded one is an error
   naming both; a failed load is remembered (a library that appears at the failed path later is
   not picked up by that runtime: no retry storm) while another request is tried; the AUTO check
   shares the state; opara_runtime_destroy leaves no allocation and (when the emulator counts
   them) no live context. */
OT_TEST(runtime_loads_once_remembers_failures_and_releases_everything) {
    test_model m;
    char why[512], dir[] = "/tmp/opara_lifecycle_XXXXXX", link_cu[600], link_blas[600], late_dnn[600], late_cu[600];
    char target[PATH_MAX], saved_env[1024];
    const char* env;
    emu_stat_fn stat;
    long long allocs0, contexts0, retained0;
    opara_runtime *rt, *rt2, *rt3;
    opara__cuda_shared* sh;
    opara__cuda_session *s1 = NULL, *s2 = NULL, *s3 = NULL;
    opara__cuda_options o = options(OPARA__CUDA_GRAPH);
    opara__cuda_info info;
    log_buf logs;
    if (!driver_loads(why, sizeof why)) SKIP("no CUDA driver: %s", why);
    REQUIRE(mkdtemp(dir) != NULL);
    snprintf(link_cu, sizeof link_cu, "%s/libcuda.so.1", dir);
    snprintf(link_blas, sizeof link_blas, "%s/libcublas.so", dir);
    snprintf(late_dnn, sizeof late_dnn, "%s/libcudnn_late.so", dir);
    snprintf(late_cu, sizeof late_cu, "%s/libcuda_late.so.1", dir);
    stat = emu_stat();
    allocs0 = stat ? stat("allocations") : -1;
    contexts0 = stat ? stat("live_contexts") : -1;
    retained0 = stat ? stat("primary_retained") : -1;
    m.rt = make_runtime();
    REQUIRE(build_model(&m, 0));

    /* two sessions, one state */
    rt = make_runtime();
    REQUIRE(opara__cuda_session_create(rt, &m.g, &o, &s1) == OPARA_OK);
    sh = (opara__cuda_shared*)rt->cuda.state;
    REQUIRE(sh != NULL);
    CHECK_EQ(1, sh->slot[OPARA__CUSH_DRIVER].state);
    CHECK_EQ(1, sh->slot[OPARA__CUSH_CUBLAS].state);
    CHECK_EQ(1, sh->slot[OPARA__CUSH_CUDNN].state);
    CHECK_EQ(1, opara__atomic_load(&sh->sessions));
    REQUIRE(opara__cuda_session_create(rt, &m.g, &o, &s2) == OPARA_OK);
    CHECK(rt->cuda.state == (void*)sh);
    CHECK_EQ(2, opara__atomic_load(&sh->sessions));
    CHECK(s1->ctx == s2->ctx && s1->ctx == sh->ctxs[0]);
    CHECK(s1->cu.library == sh->cu.library && s2->cublas.library == sh->cublas.library);
    if (retained0 >= 0) CHECK_EQ(retained0 + 1, stat("primary_retained")); /* once for the runtime */
    opara__cuda_session_destroy(s1);
    opara__cuda_session_destroy(s2);
    CHECK_EQ(0, opara__atomic_load(&sh->sessions));
    CHECK(sh->cu.library != NULL && sh->ctxs[0] != NULL); /* kept for the next session */
    REQUIRE(opara__cuda_session_create(rt, &m.g, &o, &s1) == OPARA_OK);
    CHECK(s1->ctx == sh->ctxs[0]);
    opara__cuda_session_destroy(s1);

    /* another file for a loaded library: an error naming both */
    absolute(driver_path(), "cuInit", target, sizeof target);
    REQUIRE(symlink(target, link_cu) == 0);
    o.driver_path = link_cu;
    CHECK_EQ(OPARA_ERR_INVALID_ARGS, opara__cuda_session_create(rt, &m.g, &o, &s1));
    CHECK(strstr(opara_runtime_last_error(rt), link_cu) != NULL && strstr(opara_runtime_last_error(rt), driver_path()) != NULL);
    OT_LOG("driver: %s", opara_runtime_last_error(rt));
    o = options(OPARA__CUDA_GRAPH);
    absolute(cublas_path(), "cublasCreate_v2", target, sizeof target);
    REQUIRE(symlink(target, link_blas) == 0);
    o.cublas_path = link_blas;
    CHECK_EQ(OPARA_ERR_INVALID_ARGS, opara__cuda_session_create(rt, &m.g, &o, &s1));
    CHECK(strstr(opara_runtime_last_error(rt), link_blas) != NULL && strstr(opara_runtime_last_error(rt), "cuBLAS") != NULL);
    OT_LOG("cuBLAS: %s", opara_runtime_last_error(rt));
    o.cublas_path = NULL; /* the environment or the search list: whatever is loaded serves */
    if (!getenv("OPARA_CUBLAS")) {
        CHECK_EQ(OPARA_OK, opara__cuda_session_create(rt, &m.g, &o, &s1));
        opara__cuda_session_destroy(s1);
    }
    CHECK_EQ(0, opara__atomic_load(&sh->sessions));

    /* a failed load is remembered: the library appearing later is not picked up by this runtime */
    rt2 = make_logged_runtime(&logs);
    o = options(OPARA__CUDA_GRAPH);
    o.cudnn_path = late_dnn;
    REQUIRE(opara__cuda_session_create(rt2, &m.g, &o, &s1) == OPARA_OK);
    opara__cuda_session_info(s1, &info);
    CHECK_EQ(0, info.cudnn);
    CHECK(strstr(logs.text, late_dnn) != NULL);
    absolute(cudnn_path(), "cudnnCreate", target, sizeof target);
    REQUIRE(symlink(target, late_dnn) == 0);
    logs.len = 0, logs.text[0] = 0;
    REQUIRE(opara__cuda_session_create(rt2, &m.g, &o, &s2) == OPARA_OK);
    opara__cuda_session_info(s2, &info);
    CHECK_EQ(0, info.cudnn);                       /* not retried */
    CHECK(strstr(logs.text, late_dnn) != NULL); /* the remembered reason, logged again */
    o.cudnn_path = cudnn_path();                   /* another request is tried */
    REQUIRE(opara__cuda_session_create(rt2, &m.g, &o, &s3) == OPARA_OK);
    opara__cuda_session_info(s3, &info);
    CHECK_EQ(1, info.cudnn);
    opara__cuda_session_destroy(s1);
    opara__cuda_session_destroy(s2);
    opara__cuda_session_destroy(s3);
    rt3 = make_runtime(); /* a new runtime finds the library at the once missing path */
    o.cudnn_path = late_dnn;
    REQUIRE(opara__cuda_session_create(rt3, &m.g, &o, &s1) == OPARA_OK);
    opara__cuda_session_info(s1, &info);
    CHECK_EQ(1, info.cudnn);
    opara__cuda_session_destroy(s1);
    opara_runtime_destroy(rt3);

    /* the AUTO check: loads into the runtime, remembers a failure */
    env = getenv("OPARA_CUDA_DRIVER");
    snprintf(saved_env, sizeof saved_env, "%s", env ? env : "");
    setenv("OPARA_CUDA_DRIVER", late_cu, 1);
    rt3 = make_runtime();
    CHECK(opara__cuda_runtime_check(rt3, why, sizeof why) != OPARA_OK);
    CHECK(strstr(why, late_cu) != NULL);
    absolute(env ? env : OPARA_EMU_LIB_DIR "/libcuda.so.1", "cuInit", target, sizeof target);
    REQUIRE(symlink(target, late_cu) == 0);
    CHECK(opara__cuda_runtime_check(rt3, why, sizeof why) != OPARA_OK); /* remembered */
    opara_runtime_destroy(rt3);
    rt3 = make_runtime();
    CHECK(opara__cuda_runtime_check(rt3, why, sizeof why) == OPARA_OK); /* a new runtime loads it */
    CHECK(((opara__cuda_shared*)rt3->cuda.state)->cu.library != NULL);
    opara_runtime_destroy(rt3);
    if (env) setenv("OPARA_CUDA_DRIVER", saved_env, 1);
    else unsetenv("OPARA_CUDA_DRIVER");

    /* nothing left once the runtimes are gone */
    opara_runtime_destroy(rt);
    opara_runtime_destroy(rt2);
    if (stat) CHECK_EQ(allocs0, stat("allocations"));
    if (contexts0 >= 0) CHECK_EQ(contexts0, stat("live_contexts"));
    else OT_LOG("the emulator does not count live contexts yet: that check is skipped");
    if (retained0 >= 0) CHECK_EQ(retained0, stat("primary_retained"));
    unlink(link_cu), unlink(link_blas), unlink(late_dnn), unlink(late_cu), rmdir(dir);
    opara__graph_free(&m.g);
    opara_runtime_destroy(m.rt);
}

/* Host allocation fails at every point of a runtime's first session creation (the runtime's CUDA
   state included): each is OPARA_ERR_OUT_OF_MEMORY, and once the runtime is destroyed every host
   block, device and pinned allocation (and live context, when counted) is gone. */
typedef struct failing_heap {
    long long live, countdown, calls;
} failing_heap;

static void* heap_alloc(size_t size, size_t alignment, void* user) {
    failing_heap* h = (failing_heap*)user;
    void* p = NULL;
    ++h->calls;
    if (h->countdown > 0 && --h->countdown == 0) return NULL;
    if (posix_memalign(&p, alignment < sizeof(void*) ? sizeof(void*) : alignment, size ? size : 1) != 0) return NULL;
    ++h->live;
    return p;
}

static void heap_free(void* p, void* user) {
    --((failing_heap*)user)->live;
    free(p);
}

OT_TEST(host_allocation_failure_frees_everything) {
    char why[512];
    emu_stat_fn stat = emu_stat();
    opara__cuda_options o = options(OPARA__CUDA_GRAPH);
    long long nth, failures = 0, odd = 0, allocs0, contexts0;
    opara_result r = OPARA_ERR_OUT_OF_MEMORY;
    test_model* m = (test_model*)calloc(1, sizeof *m);
    REQUIRE(m != NULL);
    if (!driver_loads(why, sizeof why)) {
        free(m);
        SKIP("no CUDA driver: %s", why);
    }
    allocs0 = stat ? stat("allocations") : -1;
    contexts0 = stat ? stat("live_contexts") : -1;
    for (nth = 1; nth < 100000 && r != OPARA_OK; ++nth) {
        failing_heap h;
        opara_runtime_desc d;
        opara__cuda_session* s = NULL;
        memset(&h, 0, sizeof h);
        memset(&d, 0, sizeof d);
        d.allocator.alloc_fn = heap_alloc;
        d.allocator.free_fn = heap_free;
        d.allocator.user_data = &h;
        REQUIRE(opara_runtime_create(&d, &m->rt) == OPARA_OK);
        REQUIRE(build_model(m, 0)); /* the graph on the same heap: the planner allocates from it */
        h.countdown = nth;
        r = opara__cuda_session_create(m->rt, &m->g, &o, &s);
        h.countdown = 0;
        if (r != OPARA_OK) {
            ++failures;
            CHECK(s == NULL);
            if (r != OPARA_ERR_OUT_OF_MEMORY && odd++ < 5)
                OT_LOG("allocation %lld: %s (%s)", nth, opara_result_string(r), opara_runtime_last_error(m->rt));
        }
        opara__cuda_session_destroy(s);
        opara__graph_free(&m->g);
        opara_runtime_destroy(m->rt);
        if (h.live != 0) {
            OT_LOG("allocation %lld: %lld host blocks left", nth, h.live);
            CHECK(0);
        }
        if (stat) CHECK_EQ(allocs0, stat("allocations"));
        if (contexts0 >= 0) CHECK_EQ(contexts0, stat("live_contexts"));
    }
    CHECK_EQ(OPARA_OK, r);
    CHECK_EQ(0, odd);
    CHECK(failures > 50);
    printf("session creation: %lld host allocations, each failure OPARA_ERR_OUT_OF_MEMORY, nothing left after the runtime\n",
           failures);
    free(m);
}

static const opara_test_case tests[] = {
    OT_CASE(all_modes_match_the_reference_under_five_seeds),
    OT_CASE(captured_graph_orders_ops_as_the_plan_does),
    OT_CASE(graph_run_makes_a_constant_number_of_driver_calls),
    OT_CASE(host_io_goes_through_the_staging_in_pieces),
    OT_CASE(a_copy_failing_mid_pipeline_is_a_clear_error_and_the_session_runs_on),
    OT_CASE(public_host_runs_deliver_outputs_from_the_pipeline),
    OT_CASE(capture_failures_fall_back_to_eager_with_the_reason),
    OT_CASE(allocation_failure_is_a_clear_error_and_frees_everything),
    OT_CASE(old_driver_and_missing_libraries),
    OT_CASE(session_created_run_and_destroyed_on_different_threads),
    OT_CASE(callers_own_current_context_is_kept),
    OT_CASE(run_device_matches_a_host_run),
    OT_CASE(a_cuda_session_writes_its_plan_dot),
    OT_CASE(concurrent_host_and_device_runs_get_busy_never_race),
    OT_CASE(runtime_loads_once_remembers_failures_and_releases_everything),
    OT_CASE(use_nvrtc_without_the_sources_runs_the_embedded_ptx),
    OT_CASE(host_allocation_failure_frees_everything),
};

int main(int argc, char** argv) { return opara_test_main(argc, argv, tests, OT_COUNT(tests)); }
