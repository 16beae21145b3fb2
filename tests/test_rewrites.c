/* The ONNX importer's rewrites, checked by their numbers: BatchNormalization folded into Conv,
   Relu fused into Conv and Gemm, constant folding of Shape->Gather->Unsqueeze->Concat->Reshape
   chains, Identity/Dropout removal. Each small model (built here with onnx_pbw.h) runs on the CPU
   backend with the rewrites on and off (OPARA__ONNX_NO_FUSION) where the importer has that knob,
   and is always compared with a reference computed here in double precision from the model's
   definition (direct convolution, the BatchNormalization formula, ...). When ONNX Runtime is
   installed (tools/setup.sh npm build/npm onnxruntime-node; ORT_LIB overrides the path) the same
   ONNX bytes also run there and must agree. */
#define OPARA_IMPLEMENTATION
#include "opara.h"
#include "opara_test.h"
#include "onnx_pbw.h"
#include "ort/ort_api.h"

#include <math.h>
#include <stdio.h>
#include <unistd.h>

#define L(a, b, c) rw_list(a, b, c)

static const char* const* rw_list(const char* a, const char* b, const char* c) {
    static const char* lists[64][4];
    static int next = 0;
    const char** l = lists[next++ % 64];
    l[0] = a, l[1] = b, l[2] = c, l[3] = NULL;
    return l;
}

static uint32_t rw_seed = 12345u;
static float rw_rand(void) { /* uniform in [-1, 1) */
    rw_seed = rw_seed * 1664525u + 1013904223u;
    return (float)(rw_seed >> 8) / 8388608.0f - 1.0f;
}
static void rw_fill(float* v, size_t n, float lo, float hi) {
    size_t i;
    for (i = 0; i < n; ++i) v[i] = lo + (hi - lo) * (rw_rand() + 1.0f) * 0.5f;
}

/* ---- running a model ---------------------------------------------------------------------------- */

typedef struct rw_result {
    uint32_t n_nodes;          /* after import (and rewrites) */
    uint32_t n_outputs;
    opara_tensor_info info[4]; /* output dtype and shape; name points into names */
    char names[4][64];
    float* out[4];             /* malloc'd copies */
} rw_result;

static void rw_result_free(rw_result* r) {
    uint32_t i;
    for (i = 0; i < 4; ++i) free(r->out[i]);
    memset(r, 0, sizeof *r);
}

static size_t rw_count(const opara_tensor_info* t) {
    size_t n = 1;
    int32_t i;
    for (i = 0; i < t->rank; ++i) n *= (size_t)t->dims[i];
    return n;
}

/* Imports m (not consumed) with import flags, runs it once on x (f32, shape xd[rank]) with the
   symbolic batch = xd[0], and copies the outputs. */
static opara_result rw_run(opara_test* T, const pbw* m, int flags, const float* x, const int64_t* xd, int32_t rank,
                           rw_result* res) {
    opara_runtime* rt = NULL;
    opara__onnx_extra extra;
    opara__graph g;
    opara_model* model = NULL;
    opara_session* s = NULL;
    opara_session_desc d;
    opara_tensor in;
    opara_result r;
    uint32_t i;
    memset(res, 0, sizeof *res);
    if (opara_runtime_create(NULL, &rt) != OPARA_OK) return OPARA_ERR_OUT_OF_MEMORY;
    memset(&extra, 0, sizeof extra);
    extra.flags = flags;
    r = opara__onnx_import(rt, m->d, m->n, NULL, NULL, &extra, &g);
    res->n_nodes = g.n_nodes;
    if (r == OPARA_OK) r = opara__model_from_graph(rt, &g, &model);
    else opara__graph_free(&g);
    memset(&d, 0, sizeof d);
    d.backend = OPARA_BACKEND_CPU;
    d.strategy = OPARA_STRATEGY_SEQUENTIAL;
    d.batch_size = xd[0];
    d.threads = 2;
    if (r == OPARA_OK) r = opara_session_create(rt, model, &d, &s);
    memset(&in, 0, sizeof in);
    in.dtype = OPARA_DTYPE_F32;
    in.rank = rank;
    memcpy(in.dims, xd, (size_t)rank * sizeof xd[0]);
    in.data = (void*)(size_t)x;
    if (r == OPARA_OK) r = opara_session_run(s, &in, 1, NULL, 0);
    if (r != OPARA_OK) ot__fail_at(T, __FILE__, __LINE__, "flags %d: %s: %s", flags, opara_result_string(r),
                                   s ? opara_session_last_error(s) : opara_runtime_last_error(rt));
    for (i = 0; r == OPARA_OK && i < opara_session_output_count(s) && i < 4; ++i) {
        size_t bytes;
        opara_session_output_info(s, i, &res->info[i]);
        snprintf(res->names[i], sizeof res->names[i], "%s", res->info[i].name); /* outlives the model */
        res->info[i].name = res->names[i];
        bytes = rw_count(&res->info[i]) * sizeof(float);
        res->out[i] = (float*)malloc(bytes + 1);
        if (res->out[i]) memcpy(res->out[i], opara_session_output_data(s, i), bytes);
        res->n_outputs = i + 1;
    }
    opara_session_destroy(s);
    opara_model_destroy(model);
    opara_runtime_destroy(rt);
    return r;
}

/* Max |got - want| over n elements (want in double). */
static double rw_max_err(const float* got, const double* want, size_t n) {
    double m = 0;
    size_t i;
    for (i = 0; i < n; ++i) {
        double e = fabs((double)got[i] - want[i]);
        if (e > m || e != e) m = e != e ? INFINITY : e;
    }
    return m;
}

/* ---- ONNX Runtime (optional) ---------------------------------------------------------------------- */

#if defined(__SANITIZE_ADDRESS__)
#  define RW_ASAN 1
#elif defined(__has_feature)
#  if __has_feature(address_sanitizer)
#    define RW_ASAN 1
#  endif
#endif
#ifndef RW_ASAN
#  define RW_ASAN 0
#endif

/* Runs m in ORT on x; out gets output 0 (caller frees). 0 when ORT is not available (why says). */
static int rw_run_ort(const pbw* m, const float* x, const int64_t* xd, size_t rank, ort_tensor* out, char* why,
                      size_t cap) {
    ort_api api;
    ort_session s;
    ort_tensor in;
    char path[64];
    int fd, ok;
    FILE* f;
    if (!ort_open(&api, ort_default_library())) {
        snprintf(why, cap, "%s", api.error);
        return 0;
    }
    snprintf(path, sizeof path, "/tmp/opara_rewrites_XXXXXX");
    fd = mkstemp(path);
    f = fd >= 0 ? fdopen(fd, "wb") : NULL;
    ok = f && fwrite(m->d, 1, m->n, f) == m->n;
    if (f) fclose(f);
    memset(&in, 0, sizeof in);
    in.elem_type = 1;
    in.rank = rank;
    memcpy(in.dims, xd, rank * sizeof xd[0]);
    in.data = (void*)(size_t)x;
    in.nbytes = sizeof(float);
    while (rank) in.nbytes *= (size_t)xd[--rank];
    ok = ok && ort_session_open(&api, &s, path, 1) && s.n_inputs == 1 && ort_session_run(&s, &in, out);
    if (!ok) snprintf(why, cap, "ORT could not run the model: %s", api.error);
    if (fd >= 0) unlink(path);
    ort_session_close(&s);
    ort_close(&api);
    return ok ? 1 : -1;
}

/* ---- models ----------------------------------------------------------------------------------- */

enum { CI = 3, CO = 4, HW = 6, KS = 3 };

typedef struct conv_bn_params {
    float w[CO * CI * KS * KS], b[CO], scale[CO], bias[CO], mean[CO], var[CO];
} conv_bn_params;

/* x[N,3,6,6] -> Conv(3x3, pad 1, stride 1) -> BatchNormalization(eps 1e-3) -> Relu -> y */
static pbw conv_bn_relu_model(const conv_bn_params* p, int with_bn, int with_relu) {
    static const int64_t xd[4] = {-1, CI, HW, HW}, wd[4] = {CO, CI, KS, KS}, cd[1] = {CO}, pads[4] = {1, 1, 1, 1};
    pbw g = {0, 0, 0}, a = {0, 0, 0};
    const char* conv_out = with_bn || with_relu ? "c" : "y";
    pbw_tensor_f32(&g, 5, "W", wd, 4, p->w);
    pbw_tensor_f32(&g, 5, "B", cd, 1, p->b);
    pbw_attr_ints(&a, "kernel_shape", wd + 2, 2);
    pbw_attr_ints(&a, "pads", pads, 4);
    pbw_node(&g, "Conv", "conv", L("x", "W", "B"), L(conv_out, NULL, NULL), &a);
    if (with_bn) {
        static const char* const ins[] = {"c", "scale", "bias", "mean", "var", NULL};
        pbw_tensor_f32(&g, 5, "scale", cd, 1, p->scale);
        pbw_tensor_f32(&g, 5, "bias", cd, 1, p->bias);
        pbw_tensor_f32(&g, 5, "mean", cd, 1, p->mean);
        pbw_tensor_f32(&g, 5, "var", cd, 1, p->var);
        pbw_attr_float(&a, "epsilon", 1e-3f);
        pbw_node(&g, "BatchNormalization", "bn", ins, L(with_relu ? "n" : "y", NULL, NULL), &a);
    }
    if (with_relu) pbw_node(&g, "Relu", "relu", L(with_bn ? "n" : "c", NULL, NULL), L("y", NULL, NULL), NULL);
    pbw_value_info(&g, 11, "x", 1, xd, 4);
    pbw_value_info(&g, 12, "y", 1, NULL, -1);
    return pbw_model(7, 13, &g);
}

/* Direct convolution + BatchNormalization formula + Relu, in double. */
static void conv_bn_relu_ref(const conv_bn_params* p, const float* x, int64_t batch, int with_bn, int with_relu,
                             double* y) {
    int64_t n, o, i, r, c, kr, kc;
    for (n = 0; n < batch; ++n)
        for (o = 0; o < CO; ++o)
            for (r = 0; r < HW; ++r)
                for (c = 0; c < HW; ++c) {
                    double acc = p->b[o];
                    for (i = 0; i < CI; ++i)
                        for (kr = 0; kr < KS; ++kr)
                            for (kc = 0; kc < KS; ++kc) {
                                int64_t yy = r + kr - 1, xx = c + kc - 1;
                                if (yy < 0 || yy >= HW || xx < 0 || xx >= HW) continue;
                                acc += (double)p->w[((o * CI + i) * KS + kr) * KS + kc] *
                                       x[((n * CI + i) * HW + yy) * HW + xx];
                            }
                    if (with_bn) acc = (acc - p->mean[o]) / sqrt((double)p->var[o] + 1e-3) * p->scale[o] + p->bias[o];
                    if (with_relu && acc < 0) acc = 0;
                    y[((n * CO + o) * HW + r) * HW + c] = acc;
                }
}

static void conv_bn_params_init(conv_bn_params* p) {
    rw_fill(p->w, sizeof p->w / sizeof p->w[0], -0.5f, 0.5f);
    rw_fill(p->b, CO, -0.5f, 0.5f);
    rw_fill(p->scale, CO, 0.5f, 2.0f);
    rw_fill(p->bias, CO, -0.5f, 0.5f);
    rw_fill(p->mean, CO, -0.3f, 0.3f);
    rw_fill(p->var, CO, 0.1f, 2.0f);
}

/* Rewrite on vs off vs the double reference for Conv[+BN][+Relu]; expects `fused_nodes` nodes. */
static void check_conv_variant(opara_test* T, int with_bn, int with_relu, uint32_t fused_nodes) {
    static const int64_t xd[4] = {2, CI, HW, HW};
    enum { NX = 2 * CI * HW * HW, NY = 2 * CO * HW * HW };
    conv_bn_params p;
    float x[NX];
    double want[NY];
    pbw m;
    rw_result on, off;
    int negatives = 0, k;
    conv_bn_params_init(&p);
    rw_fill(x, NX, -1.0f, 1.0f);
    conv_bn_relu_ref(&p, x, 2, with_bn, 0, want);
    for (k = 0; k < NY; ++k) negatives += want[k] < 0; /* Relu must matter */
    CHECK(negatives > NY / 10);
    conv_bn_relu_ref(&p, x, 2, with_bn, with_relu, want);
    m = conv_bn_relu_model(&p, with_bn, with_relu);
    OT_LOG("bn %d relu %d", with_bn, with_relu);
    if (rw_run(T, &m, 0, x, xd, 4, &on) == OPARA_OK && rw_run(T, &m, OPARA__ONNX_NO_FUSION, x, xd, 4, &off) == OPARA_OK) {
        CHECK_EQ(on.n_nodes, fused_nodes);
        CHECK_EQ(off.n_nodes, 1 + with_bn + with_relu);
        CHECK_STR(on.info[0].name, "y");
        CHECK_EQ(on.info[0].rank, 4);
        CHECK_EQ(rw_count(&on.info[0]), NY);
        CHECK(rw_max_err(on.out[0], want, NY) < 1e-5);
        CHECK(rw_max_err(off.out[0], want, NY) < 1e-5);
    }
    rw_result_free(&on);
    rw_result_free(&off);
    free(m.d);
}

OT_TEST(batchnorm_folds_into_conv) { check_conv_variant(T, 1, 0, 1); }
OT_TEST(relu_fuses_into_conv) { check_conv_variant(T, 0, 1, 1); }
OT_TEST(conv_batchnorm_relu_become_one_node) { check_conv_variant(T, 1, 1, 1); }

/* x[N,5] -> Gemm(W[3,5] transB, C[3], alpha 0.5, beta 2) -> Relu -> y */
enum { GK = 5, GN = 3 };
static pbw gemm_relu_model(const float* w, const float* c) {
    static const int64_t xd[2] = {-1, GK}, wd[2] = {GN, GK}, cd[1] = {GN};
    pbw g = {0, 0, 0}, a = {0, 0, 0};
    pbw_tensor_f32(&g, 5, "W", wd, 2, w);
    pbw_tensor_f32(&g, 5, "C", cd, 1, c);
    pbw_attr_int(&a, "transB", 1);
    pbw_attr_float(&a, "alpha", 0.5f);
    pbw_attr_float(&a, "beta", 2.0f);
    pbw_node(&g, "Gemm", "gemm", L("x", "W", "C"), L("g", NULL, NULL), &a);
    pbw_node(&g, "Relu", "relu", L("g", NULL, NULL), L("y", NULL, NULL), NULL);
    pbw_value_info(&g, 11, "x", 1, xd, 2);
    pbw_value_info(&g, 12, "y", 1, NULL, -1);
    return pbw_model(7, 13, &g);
}

OT_TEST(relu_fuses_into_gemm) {
    static const int64_t xd[2] = {4, GK};
    float w[GN * GK], c[GN], x[4 * GK];
    double want[4 * GN];
    pbw m;
    rw_result on, off;
    int i, j, k, negatives = 0, positives = 0;
    rw_fill(w, GN * GK, -1, 1);
    rw_fill(c, GN, -0.5f, 0.5f);
    rw_fill(x, 4 * GK, -1, 1);
    for (i = 0; i < 4; ++i)
        for (j = 0; j < GN; ++j) {
            double acc = 0;
            for (k = 0; k < GK; ++k) acc += (double)x[i * GK + k] * w[j * GK + k];
            acc = 0.5 * acc + 2.0 * c[j];
            negatives += acc < 0, positives += acc > 0;
            want[i * GN + j] = acc > 0 ? acc : 0;
        }
    CHECK(negatives > 0 && positives > 0);
    m = gemm_relu_model(w, c);
    if (rw_run(T, &m, 0, x, xd, 2, &on) == OPARA_OK && rw_run(T, &m, OPARA__ONNX_NO_FUSION, x, xd, 2, &off) == OPARA_OK) {
        CHECK_EQ(on.n_nodes, 1);
        CHECK_EQ(off.n_nodes, 2);
        CHECK_EQ(rw_count(&on.info[0]), 4 * GN);
        CHECK(rw_max_err(on.out[0], want, 4 * GN) < 1e-5);
        CHECK(rw_max_err(off.out[0], want, 4 * GN) < 1e-5);
    }
    rw_result_free(&on);
    rw_result_free(&off);
    free(m.d);
}

/* x[N,3,4,4] -> Shape -> Gather(0) -> Unsqueeze(0) ; Gather(1) * 16 -> Unsqueeze(0) ; Concat -> Reshape(x)
   (what torch.flatten exports as): y = x viewed as [N, 48], for any batch. */
static pbw shape_chain_model(int64_t opset) {
    static const int64_t xd[4] = {-1, 3, 4, 4}, one[1] = {1}, axes0[1] = {0}, zero = 0, idx1 = 1, sixteen = 16;
    pbw g = {0, 0, 0}, a = {0, 0, 0};
    pbw_tensor_i64(&g, 5, "zero", NULL, 0, &zero);
    pbw_tensor_i64(&g, 5, "one_idx", NULL, 0, &idx1);
    pbw_tensor_i64(&g, 5, "sixteen", NULL, 0, &sixteen);
    if (opset >= 13) pbw_tensor_i64(&g, 5, "axes", one, 1, axes0);
    pbw_node(&g, "Shape", "shape", L("x", NULL, NULL), L("s", NULL, NULL), NULL);
    pbw_attr_int(&a, "axis", 0);
    pbw_node(&g, "Gather", "g0", L("s", "zero", NULL), L("n", NULL, NULL), &a);
    if (opset < 13) pbw_attr_ints(&a, "axes", axes0, 1);
    pbw_node(&g, "Unsqueeze", "u0", opset >= 13 ? L("n", "axes", NULL) : L("n", NULL, NULL), L("nu", NULL, NULL), &a);
    pbw_attr_int(&a, "axis", 0);
    pbw_node(&g, "Gather", "g1", L("s", "one_idx", NULL), L("c", NULL, NULL), &a);
    pbw_node(&g, "Mul", "mul", L("c", "sixteen", NULL), L("c16", NULL, NULL), NULL);
    if (opset < 13) pbw_attr_ints(&a, "axes", axes0, 1);
    pbw_node(&g, "Unsqueeze", "u1", opset >= 13 ? L("c16", "axes", NULL) : L("c16", NULL, NULL), L("cu", NULL, NULL), &a);
    pbw_attr_int(&a, "axis", 0);
    pbw_node(&g, "Concat", "cat", L("nu", "cu", NULL), L("target", NULL, NULL), &a);
    pbw_node(&g, "Reshape", "reshape", L("x", "target", NULL), L("r", NULL, NULL), NULL);
    pbw_node(&g, "Relu", "relu", L("r", NULL, NULL), L("y", NULL, NULL), NULL);
    pbw_value_info(&g, 11, "x", 1, xd, 4);
    pbw_value_info(&g, 12, "y", 1, NULL, -1);
    return pbw_model(7, opset, &g);
}

OT_TEST(shape_chain_folds_and_reshapes_every_batch) {
    static const int64_t opsets[2] = {11, 13}, batches[3] = {1, 2, 5};
    float x[5 * 48];
    double want[5 * 48];
    int o, b, i;
    rw_fill(x, 5 * 48, -1, 1);
    for (i = 0; i < 5 * 48; ++i) want[i] = x[i] > 0 ? x[i] : 0;
    for (o = 0; o < 2; ++o)
        for (b = 0; b < 3; ++b) {
            int64_t xd[4] = {0, 3, 4, 4};
            pbw m = shape_chain_model(opsets[o]);
            rw_result res;
            xd[0] = batches[b];
            OT_LOG("opset %lld batch %lld", (long long)opsets[o], (long long)batches[b]);
            if (rw_run(T, &m, 0, x, xd, 4, &res) == OPARA_OK) {
                CHECK_EQ(res.n_nodes, 2); /* Reshape + Relu: the shape arithmetic is gone */
                CHECK_EQ(res.info[0].rank, 2);
                CHECK_EQ(res.info[0].dims[0], batches[b]);
                CHECK_EQ(res.info[0].dims[1], 48);
                CHECK(rw_max_err(res.out[0], want, (size_t)batches[b] * 48) == 0);
            }
            rw_result_free(&res);
            free(m.d);
        }
}

/* y1 = Identity(Dropout(Relu(x))), y2 = Identity(x) (an output aliasing the graph input), y3 = Identity(y1)
   (an output aliasing another output): every output keeps its name and values. */
static pbw identity_model(void) {
    static const int64_t xd[2] = {-1, 7};
    pbw g = {0, 0, 0};
    pbw_node(&g, "Relu", "r", L("x", NULL, NULL), L("a", NULL, NULL), NULL);
    pbw_node(&g, "Dropout", "d", L("a", NULL, NULL), L("b", NULL, NULL), NULL);
    pbw_node(&g, "Identity", "i1", L("b", NULL, NULL), L("y1", NULL, NULL), NULL);
    pbw_node(&g, "Identity", "i2", L("x", NULL, NULL), L("y2", NULL, NULL), NULL);
    pbw_node(&g, "Identity", "i3", L("y1", NULL, NULL), L("y3", NULL, NULL), NULL);
    pbw_value_info(&g, 11, "x", 1, xd, 2);
    pbw_value_info(&g, 12, "y1", 1, NULL, -1);
    pbw_value_info(&g, 12, "y2", 1, NULL, -1);
    pbw_value_info(&g, 12, "y3", 1, NULL, -1);
    return pbw_model(7, 13, &g);
}

OT_TEST(identity_and_dropout_drop_outputs_keep_names_and_values) {
    static const int64_t xd[2] = {3, 7};
    static const char* const names[3] = {"y1", "y2", "y3"};
    float x[21];
    double relu[21], ident[21];
    pbw m = identity_model();
    rw_result res;
    int i;
    rw_fill(x, 21, -1, 1);
    for (i = 0; i < 21; ++i) relu[i] = x[i] > 0 ? x[i] : 0, ident[i] = x[i];
    if (rw_run(T, &m, 0, x, xd, 2, &res) == OPARA_OK) {
        REQUIRE(res.n_outputs == 3);
        CHECK_EQ(res.n_nodes, 3); /* Relu, and one copy each for y2 and y3: no Dropout, no Identity */
        for (i = 0; i < 3; ++i) {
            OT_LOG("output %d", i);
            CHECK_STR(res.info[i].name, names[i]);
            CHECK_EQ(rw_count(&res.info[i]), 21);
            CHECK(rw_max_err(res.out[i], i == 1 ? ident : relu, 21) == 0);
        }
    }
    rw_result_free(&res);
    free(m.d);
}

/* x[N,PC,PH,PH] -> Pad(pads, value) -> AveragePool(3x3, stride) -> y: what exporters write for
   count_include_pad pooling; fused into one AveragePool only when the pad is a zero spatial pad
   smaller than the window. */
enum { PC = 3, PH = 7, PK = 3 };

typedef struct pad_pool_case {
    int64_t pads[8]; /* ONNX order: begins of N, C, H, W then ends */
    float value;
    int64_t stride;
    uint32_t fused_nodes;
} pad_pool_case;

static pbw pad_pool_model(const pad_pool_case* c) {
    static const int64_t xd[4] = {-1, PC, PH, PH}, pd[1] = {8}, ks[2] = {PK, PK};
    int64_t st[2];
    pbw g = {0, 0, 0}, a = {0, 0, 0};
    st[0] = st[1] = c->stride;
    pbw_tensor_i64(&g, 5, "pads", pd, 1, c->pads);
    pbw_tensor_f32(&g, 5, "value", NULL, 0, &c->value);
    pbw_node(&g, "Pad", "pad", L("x", "pads", "value"), L("p", NULL, NULL), NULL);
    pbw_attr_ints(&a, "kernel_shape", ks, 2);
    pbw_attr_ints(&a, "strides", st, 2);
    pbw_node(&g, "AveragePool", "pool", L("p", NULL, NULL), L("y", NULL, NULL), &a);
    pbw_value_info(&g, 11, "x", 1, xd, 4);
    pbw_value_info(&g, 12, "y", 1, NULL, -1);
    return pbw_model(7, 13, &g);
}

/* The padded tensor's value at (n, c, h, w) of padded coordinates. */
static double pad_pool_at(const pad_pool_case* c, const float* x, int64_t n, int64_t ch, int64_t h, int64_t w) {
    int64_t xc = ch - c->pads[1], xh = h - c->pads[2], xw = w - c->pads[3];
    if (xc < 0 || xc >= PC || xh < 0 || xh >= PH || xw < 0 || xw >= PH) return c->value;
    return x[((n * PC + xc) * PH + xh) * PH + xw];
}

/* Pads explicitly, then averages every whole 3x3 window of the padded tensor; returns the count. */
static size_t pad_pool_ref(const pad_pool_case* c, const float* x, int64_t batch, double* y, int64_t* yd) {
    int64_t C = PC + c->pads[1] + c->pads[5], H = PH + c->pads[2] + c->pads[6], W = PH + c->pads[3] + c->pads[7];
    int64_t OH = (H - PK) / c->stride + 1, OW = (W - PK) / c->stride + 1, n, ch, i, j, a, b;
    size_t at = 0;
    for (n = 0; n < batch; ++n)
        for (ch = 0; ch < C; ++ch)
            for (i = 0; i < OH; ++i)
                for (j = 0; j < OW; ++j) {
                    double sum = 0;
                    for (a = 0; a < PK; ++a)
                        for (b = 0; b < PK; ++b) sum += pad_pool_at(c, x, n, ch, i * c->stride + a, j * c->stride + b);
                    y[at++] = sum / (PK * PK);
                }
    yd[0] = batch, yd[1] = C, yd[2] = OH, yd[3] = OW;
    return at;
}

OT_TEST(zero_pad_fuses_into_average_pool) {
    static const pad_pool_case cases[] = {
        {{0, 0, 1, 1, 0, 0, 1, 1}, 0.0f, 1, 1},  /* count_include_pad pooling */
        {{0, 0, 2, 1, 0, 0, 0, 2}, 0.0f, 2, 1},  /* asymmetric, strided */
        {{0, 0, 1, 1, 0, 0, 1, 1}, 0.5f, 1, 2},  /* not zero: stays a Pad */
        {{0, 1, 1, 1, 0, 0, 1, 1}, 0.0f, 1, 2},  /* pads a channel: stays a Pad */
        {{0, 0, 3, 0, 0, 0, 0, 0}, 0.0f, 1, 2}}; /* a pad as wide as the window: stays a Pad */
    static const int64_t xd[4] = {2, PC, PH, PH};
    float x[2 * PC * PH * PH];
    double want[2 * (PC + 1) * (PH + 3) * (PH + 3)];
    size_t k;
    rw_fill(x, sizeof x / sizeof x[0], -1, 1);
    for (k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
        pbw m = pad_pool_model(&cases[k]);
        rw_result on, off;
        int64_t yd[4];
        size_t ny = pad_pool_ref(&cases[k], x, 2, want, yd);
        OT_LOG("case %zu", k);
        if (rw_run(T, &m, 0, x, xd, 4, &on) == OPARA_OK &&
            rw_run(T, &m, OPARA__ONNX_NO_FUSION, x, xd, 4, &off) == OPARA_OK) {
            CHECK_EQ(on.n_nodes, cases[k].fused_nodes);
            CHECK_EQ(off.n_nodes, 2);
            CHECK_EQ(rw_count(&on.info[0]), ny);
            CHECK_EQ(on.info[0].dims[1], yd[1]);
            CHECK_EQ(on.info[0].dims[3], yd[3]);
            CHECK(rw_max_err(on.out[0], want, ny) < 1e-5);
            CHECK(rw_max_err(off.out[0], want, ny) < 1e-5);
        }
        rw_result_free(&on);
        rw_result_free(&off);
        free(m.d);
    }
}

/* ---- the same models in ONNX Runtime ------------------------------------------------------------- */

OT_TEST(rewritten_models_match_onnx_runtime) {
    static const int64_t xconv[4] = {2, CI, HW, HW}, xshape[4] = {2, 3, 4, 4}, xpool[4] = {2, PC, PH, PH};
    static const pad_pool_case pad_pool = {{0, 0, 2, 1, 0, 0, 1, 2}, 0.0f, 2, 1};
    conv_bn_params p;
    float x[2 * PC * PH * PH];
    pbw models[3];
    const int64_t* dims[3];
    char why[600];
    int k;
    if (RW_ASAN) SKIP("ONNX Runtime is not loaded under AddressSanitizer (LeakSanitizer reports ORT's own allocations)");
    conv_bn_params_init(&p);
    rw_fill(x, sizeof x / sizeof x[0], -1, 1);
    models[0] = conv_bn_relu_model(&p, 1, 1);
    dims[0] = xconv;
    models[1] = shape_chain_model(13);
    dims[1] = xshape;
    models[2] = pad_pool_model(&pad_pool);
    dims[2] = xpool;
    for (k = 0; k < 3; ++k) {
        ort_tensor ref;
        rw_result res;
        int got = rw_run_ort(&models[k], x, dims[k], 4, &ref, why, sizeof why);
        if (got == 0) {
            free(models[0].d);
            free(models[1].d);
            free(models[2].d);
            SKIP("ONNX Runtime not available (tools/setup.sh npm build/npm onnxruntime-node): %s", why);
        }
        OT_LOG("model %d: %s", k, got < 0 ? why : "");
        CHECK(got == 1);
        if (got == 1 && rw_run(T, &models[k], 0, x, dims[k], 4, &res) == OPARA_OK) {
            size_t n = rw_count(&res.info[0]);
            CHECK_EQ(ref.nbytes, n * sizeof(float));
            if (ref.nbytes == n * sizeof(float)) CHECK_NMSE((const float*)ref.data, res.out[0], n, 1e-10);
        }
        if (got == 1) {
            rw_result_free(&res);
            ort_tensor_free(&ref);
        }
    }
    free(models[0].d);
    free(models[1].d);
    free(models[2].d);
}

static const opara_test_case tests[] = {
    OT_CASE(batchnorm_folds_into_conv), OT_CASE(relu_fuses_into_conv), OT_CASE(conv_batchnorm_relu_become_one_node),
    OT_CASE(relu_fuses_into_gemm), OT_CASE(shape_chain_folds_and_reshapes_every_batch),
    OT_CASE(identity_and_dropout_drop_outputs_keep_names_and_values), OT_CASE(zero_pad_fuses_into_average_pool),
    OT_CASE(rewritten_models_match_onnx_runtime),
};

int main(int argc, char** argv) { return opara_test_main(argc, argv, tests, OT_COUNT(tests)); }
