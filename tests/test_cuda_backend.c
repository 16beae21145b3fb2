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

OT_TEST(captured_graph_has_exactly_the_plan_dependencies) {
    test_model m;
    char why[512];
    opara__cuda_options o = options(OPARA__CUDA_GRAPH);
    opara__cuda_session* s = NULL;
    opara__cuda_info info;
    const opara_cuda_driver* cu;
    opara_CUgraphNode nodes[256], from[1024], to[1024];
    size_t n_nodes = 256, n_edges = 1024, i, j, k;
    int launch_of[256];
    unsigned char *hb, reach[256 * 256];
    uint32_t a, b, n_plan;
    if (!driver_loads(why, sizeof why)) SKIP("no CUDA driver: %s", why);
    m.rt = make_runtime();
    REQUIRE(build_model(&m, 0));
    if (opara__cuda_session_create(m.rt, &m.g, &o, &s) != OPARA_OK) {
        OT_LOG("%s", opara_runtime_last_error(m.rt));
        opara__graph_free(&m.g);
        opara_runtime_destroy(m.rt);
        REQUIRE(0);
    }
    opara__cuda_session_info(s, &info);
    cu = opara__cuda_session_driver(s);
    if (!info.graph || !cu->cuGraphGetEdges_v2) {
        opara__cuda_session_destroy(s);
        opara__graph_free(&m.g);
        opara_runtime_destroy(m.rt);
        SKIP("no captured graph or no cuGraphGetEdges_v2");
    }
    REQUIRE(cu->cuGraphGetNodes(info.graph, nodes, &n_nodes) == OPARA_CUDA_SUCCESS);
    REQUIRE(cu->cuGraphGetEdges_v2(info.graph, from, to, NULL, &n_edges) == OPARA_CUDA_SUCCESS);
    REQUIRE(n_nodes <= 256 && n_edges <= 1024);
    /* match every graph node to the launch with the same function and parameter values */
    for (i = 0; i < n_nodes; ++i) {
        opara_CUgraphNodeType type;
        opara_CUDA_KERNEL_NODE_PARAMS kp;
        int found = -1;
        launch_of[i] = -1;
        REQUIRE(cu->cuGraphNodeGetType(nodes[i], &type) == OPARA_CUDA_SUCCESS);
        if (type != OPARA_CU_GRAPH_NODE_TYPE_KERNEL) {
            OT_LOG("graph node %zu has type %d (only kernels expected)", i, (int)type);
            CHECK(0);
            continue;
        }
        REQUIRE(cu->cuGraphKernelNodeGetParams_v2(nodes[i], &kp) == OPARA_CUDA_SUCCESS);
        for (k = 0; k < info.n_launches; ++k) {
            const opara__cuda_launch* L = &info.launches[k];
            uint32_t t;
            int same = L->type == OPARA__CULAUNCH_KERNEL && L->grid[0] == kp.gridDimX && L->grid[1] == kp.gridDimY;
            for (t = 0; same && t < L->n_args; ++t) {
                uint64_t v = 0;
                memcpy(&v, kp.kernelParams[t], L->args[t].kind == OPARA__CUARG_I32 || L->args[t].kind == OPARA__CUARG_F32 ? 4 : 8);
                same = v == L->values[t];
            }
            if (same) {
                CHECK(found < 0); /* unambiguous */
                found = (int)k;
            }
        }
        launch_of[i] = found; /* -1: a kernel of a library (cuBLAS, cuDNN), matched below */
    }
    /* library kernels: the k-th unmatched graph node (creation order) belongs to the k-th library
       launch in the plan's launch order (one library kernel per call, as the emulator's cuBLAS and
       cuDNN make) */
    {
        size_t u = 0;
        uint32_t p;
        for (p = 0; p < info.plan->n_nodes; ++p) {
            uint32_t nd = info.plan->order[p], l;
            for (l = info.node_launch_start[nd]; l < info.node_launch_start[nd + 1]; ++l) {
                if (info.launches[l].type != OPARA__CULAUNCH_CUBLAS && info.launches[l].type != OPARA__CULAUNCH_CUDNN)
                    continue;
                while (u < n_nodes && launch_of[u] >= 0) ++u;
                CHECK(u < n_nodes);
                if (u < n_nodes) launch_of[u++] = (int)l;
            }
        }
        for (i = 0; i < n_nodes; ++i) CHECK(launch_of[i] >= 0);
    }
    /* reachability in the captured graph */
    memset(reach, 0, sizeof reach);
    for (k = 0; k < n_edges; ++k) {
        size_t f = n_nodes, t = n_nodes;
        for (i = 0; i < n_nodes; ++i) {
            if (nodes[i] == from[k]) f = i;
            if (nodes[i] == to[k]) t = i;
        }
        REQUIRE(f < n_nodes && t < n_nodes);
        reach[f * 256 + t] = 1;
    }
    for (k = 0; k < n_nodes; ++k)
        for (i = 0; i < n_nodes; ++i)
            if (reach[i * 256 + k])
                for (j = 0; j < n_nodes; ++j)
                    if (reach[k * 256 + j]) reach[i * 256 + j] = 1;
    /* the plan's happens-before over the launches' nodes (launches of one node are ordered) */
    n_plan = info.plan->n_nodes;
    hb = (unsigned char*)malloc((size_t)n_plan * n_plan);
    REQUIRE(hb != NULL);
    plan_closure(info.plan, hb);
    for (i = 0; i < n_nodes; ++i)
        for (j = 0; j < n_nodes; ++j) {
            int want;
            if (i == j || launch_of[i] < 0 || launch_of[j] < 0) continue;
            a = info.launches[launch_of[i]].node, b = info.launches[launch_of[j]].node;
            want = a == b ? launch_of[i] < launch_of[j] : hb[a * n_plan + b];
            if (want != reach[i * 256 + j]) {
                OT_LOG("launch %d (node %u %s) -> launch %d (node %u %s): plan %d, graph %d", launch_of[i], a,
                       m.g.nodes[a].name, launch_of[j], b, m.g.nodes[b].name, want, reach[i * 256 + j]);
                CHECK(0);
            }
        }
    /* every data edge of the model is a path in the graph (through the plan) */
    for (b = 0; b < m.g.n_nodes; ++b)
        for (k = m.g.pred_start[b]; k < m.g.pred_start[b + 1]; ++k) CHECK(hb[m.g.preds[k] * n_plan + b] == 1);
    printf("captured graph: %zu kernel nodes, %zu edges, %u streams in the plan\n", n_nodes, n_edges, info.plan->n_streams);
    free(hb);
    opara__cuda_session_destroy(s);
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
    int nth, failures = 0, arena_seen = 0, pinned_seen = 0;
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
    printf("session creation: %d device and pinned allocations, each failure reported, nothing left after the runtime\n",
           failures);
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
    opara__graph_free(&m.g);
    opara_runtime_destroy(m.rt);
}

static const opara_test_case tests[] = {
    OT_CASE(all_modes_match_the_reference_under_five_seeds),
    OT_CASE(captured_graph_has_exactly_the_plan_dependencies),
    OT_CASE(graph_run_makes_a_constant_number_of_driver_calls),
    OT_CASE(capture_failures_fall_back_to_eager_with_the_reason),
    OT_CASE(allocation_failure_is_a_clear_error_and_frees_everything),
    OT_CASE(old_driver_and_missing_libraries),
};

int main(int argc, char** argv) { return opara_test_main(argc, argv, tests, OT_COUNT(tests)); }
