/* ONNX import: TensorProto files against numbers the ONNX spec fixes and against
   onnx.numpy_helper, import structure (folding, fusion, opset variants, symbolic batch) on
   hand-built models, the ONNX node test models, conversion coverage of the ONNX test data and
   the model zoo. Numerical before/after checks of the rewrites need the CPU backend: TODO. */
#define OPARA_IMPLEMENTATION
#include "opara.h"
#include "opara_test.h"
#include "onnx_pbw.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <unistd.h>

#define DATA "/usr/share/libonnx-testdata/data"

static opara_runtime* new_rt(void) {
    opara_runtime* rt = NULL;
    opara_runtime_create(NULL, &rt);
    return rt;
}

static int have_data(void) { return access(DATA "/node/test_relu/model.onnx", R_OK) == 0; }

static int count_op(const opara__graph* g, opara__op op) {
    uint32_t i;
    int n = 0;
    for (i = 0; i < g->n_nodes; ++i) n += g->nodes[i].op == op;
    return n;
}

/* Imports a model built with onnx_pbw.h (consumes it). */
static opara_result import_pbw(opara_runtime* rt, pbw* m, const opara_onnx_options* o, int flags, opara__graph* g) {
    opara__onnx_extra extra;
    opara_result r;
    memset(&extra, 0, sizeof extra);
    extra.flags = flags;
    r = opara__onnx_import(rt, m->d, m->n, o, NULL, &extra, g);
    free(m->d);
    memset(m, 0, sizeof *m);
    return r;
}

/* ---- TensorProto files ------------------------------------------------------------------------ */

OT_TEST(conv_test_data_matches_spec) {
    /* onnx/backend/test/case/node/conv.py: x = arange(35) as 1x1x7x5, W = ones 1x1x3x3; the
       strides+padding output starts 12, 27, 24, 63, 108, 81 (shape 1x1x4x3). */
    opara_runtime* rt = new_rt();
    opara__tensor_data x, w, y;
    const char* dir = DATA "/node/test_conv_with_strides_padding/test_data_set_0/";
    char path[512];
    int i;
    if (!have_data()) SKIP("%s not installed (make onnx-testdata)", DATA);
    REQUIRE(rt);
    snprintf(path, sizeof path, "%sinput_0.pb", dir);
    REQUIRE(opara__onnx_read_tensor_file(rt, path, &x) == OPARA_OK);
    snprintf(path, sizeof path, "%sinput_1.pb", dir);
    REQUIRE(opara__onnx_read_tensor_file(rt, path, &w) == OPARA_OK);
    snprintf(path, sizeof path, "%soutput_0.pb", dir);
    REQUIRE(opara__onnx_read_tensor_file(rt, path, &y) == OPARA_OK);
    CHECK_EQ(x.shape.ndim, 4);
    CHECK_EQ(x.shape.dims[2], 7);
    CHECK_EQ(x.shape.dims[3], 5);
    for (i = 0; i < 35; ++i) CHECK_NEAR(((float*)x.data)[i], i, 0);
    CHECK_STR(w.name, "W");
    for (i = 0; i < 9; ++i) CHECK_NEAR(((float*)w.data)[i], 1, 0);
    CHECK_EQ(y.count, 12);
    CHECK_NEAR(((float*)y.data)[0], 12, 0);
    CHECK_NEAR(((float*)y.data)[1], 27, 0);
    CHECK_NEAR(((float*)y.data)[4], 108, 0);
    opara__tensor_data_free(rt, &x);
    opara__tensor_data_free(rt, &w);
    opara__tensor_data_free(rt, &y);
    opara_runtime_destroy(rt);
}

static double tensor_sum(const opara__tensor_data* t, double* first) {
    double s = 0;
    uint64_t i;
    for (i = 0; i < t->count; ++i) {
        double v;
        if (t->dtype == OPARA_DTYPE_F16) {
            uint16_t h = ((const uint16_t*)t->data)[i];
            int e = (h >> 10) & 31, m = h & 1023;
            v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
            if (h & 0x8000) v = -v;
        } else
            v = opara__get_f64(t->dtype, (const uint8_t*)t->data, i);
        if (i == 0) *first = v;
        s += v;
    }
    return s;
}

OT_TEST(tensor_files_match_numpy_helper) {
    FILE* f = fopen("build/onnx/tensors_expected.txt", "r");
    opara_runtime* rt = new_rt();
    char line[1024];
    int checked = 0;
    if (!f) SKIP("build/onnx/tensors_expected.txt missing (needs /usr/bin/python3 with onnx, and the test data)");
    REQUIRE(rt);
    while (fgets(line, sizeof line, f)) {
        char path[600], dims[200];
        int dtype, ndim;
        unsigned long long count;
        double sum, first, got_first = 0, got_sum;
        opara__tensor_data t;
        if (sscanf(line, "%599s %d %d %199s %llu %lf %lf", path, &dtype, &ndim, dims, &count, &sum, &first) != 7) continue;
        OT_LOG("%s", path);
        if (opara__onnx_read_tensor_file(rt, path, &t) != OPARA_OK) {
            CHECK_STR(opara_runtime_last_error(rt), "(no error)");
            continue;
        }
        CHECK_EQ(t.dtype, dtype);
        CHECK_EQ(t.shape.ndim, ndim);
        CHECK_EQ(t.count, count);
        got_sum = tensor_sum(&t, &got_first);
        if (!(sum != sum) && !isinf(sum)) CHECK_NEAR(got_sum, sum, 1e-6 * (fabs(sum) + 1) + 1e-3 * (dtype == 10));
        if (count && !(first != first)) CHECK_NEAR(got_first, first, 1e-6 * (fabs(first) + 1));
        opara__tensor_data_free(rt, &t);
        if (T->failures) break;
        T->log_len = 0;
        T->log[0] = 0;
        checked++;
    }
    fclose(f);
    CHECK(checked > 2000);
    OT_LOG("checked %d files", checked);
    opara_runtime_destroy(rt);
}

/* ---- structure of hand-built models ----------------------------------------------------------- */

static const char* const* L(const char* a, const char* b, const char* c) {
    static const char* lists[8][4];
    static int next;
    const char** l = lists[next++ & 7];
    l[0] = a, l[1] = b, l[2] = c, l[3] = NULL;
    return l;
}

/* x[N,2,3,3] -> Conv(W 3x2x1x1, B) -> BatchNormalization -> Relu -> y */
static pbw conv_bn_relu_model(void) {
    static const float w[6] = {1, 2, 3, 4, 5, 6}, b[3] = {0.5f, -1, 2};
    static const float scale[3] = {2, 1, 0.5f}, bias[3] = {1, 0, -1}, mean[3] = {0.5f, 1, -2}, var[3] = {3, 0.25f, 1};
    static const int64_t xd[4] = {-1, 2, 3, 3}, wd[4] = {3, 2, 1, 1}, cd[1] = {3}, yd[4] = {-1, 3, 3, 3};
    pbw g = {0, 0, 0}, a = {0, 0, 0};
    pbw_tensor_f32(&g, 5, "W", wd, 4, w);
    pbw_tensor_f32(&g, 5, "B", cd, 1, b);
    pbw_tensor_f32(&g, 5, "scale", cd, 1, scale);
    pbw_tensor_f32(&g, 5, "bias", cd, 1, bias);
    pbw_tensor_f32(&g, 5, "mean", cd, 1, mean);
    pbw_tensor_f32(&g, 5, "var", cd, 1, var);
    pbw_attr_ints(&a, "kernel_shape", wd + 2, 2);
    pbw_node(&g, "Conv", "conv", L("x", "W", "B"), L("c", NULL, NULL), &a);
    pbw_attr_float(&a, "epsilon", 1e-3f);
    {
        static const char* const ins[] = {"c", "scale", "bias", "mean", "var", NULL};
        pbw_node(&g, "BatchNormalization", "bn", ins, L("n", NULL, NULL), &a);
    }
    pbw_node(&g, "Relu", "relu", L("n", NULL, NULL), L("y", NULL, NULL), NULL);
    pbw_value_info(&g, 11, "x", 1, xd, 4);
    pbw_value_info(&g, 12, "y", 1, yd, 4);
    return pbw_model(7, 13, &g);
}

OT_TEST(conv_bn_relu_before_and_after_fusion) {
    static const float w[6] = {1, 2, 3, 4, 5, 6}, b[3] = {0.5f, -1, 2};
    static const float scale[3] = {2, 1, 0.5f}, bias[3] = {1, 0, -1}, mean[3] = {0.5f, 1, -2}, var[3] = {3, 0.25f, 1};
    opara_runtime* rt = new_rt();
    opara__graph g;
    pbw m = conv_bn_relu_model();
    const opara__node* conv;
    const opara__value *wv, *bv;
    int o, i;
    REQUIRE(rt);
    REQUIRE(import_pbw(rt, &m, NULL, OPARA__ONNX_NO_FUSION, &g) == OPARA_OK);
    CHECK_EQ(g.n_nodes, 3);
    CHECK_EQ(count_op(&g, OPARA__OP_BATCH_NORM), 1);
    opara__graph_free(&g);
    m = conv_bn_relu_model();
    REQUIRE(import_pbw(rt, &m, NULL, 0, &g) == OPARA_OK);
    REQUIRE(g.n_nodes == 1);
    conv = &g.nodes[0];
    CHECK_EQ(conv->op, OPARA__OP_CONV);
    CHECK_STR(opara__attr_string(conv, "activation", ""), "Relu");
    CHECK_STR(g.values[conv->outputs[0]].name, "y");
    CHECK_EQ(g.values[g.inputs[0]].shape.dims[0], OPARA__DIM_BATCH);
    REQUIRE(conv->n_inputs == 3);
    wv = &g.values[conv->inputs[1]];
    bv = &g.values[conv->inputs[2]];
    REQUIRE(wv->kind == OPARA__VALUE_CONST && bv->kind == OPARA__VALUE_CONST);
    for (o = 0; o < 3; ++o) { /* BN folding formula, computed here in double from the inputs */
        double s = scale[o] / sqrt((double)var[o] + 1e-3);
        for (i = 0; i < 2; ++i) CHECK_NEAR(((const float*)wv->data)[o * 2 + i], w[o * 2 + i] * s, 1e-5);
        CHECK_NEAR(((const float*)bv->data)[o], (b[o] - mean[o]) * s + bias[o], 1e-5);
    }
    opara__graph_free(&g);
    opara_runtime_destroy(rt);
}

OT_TEST(relu_not_fused_when_conv_output_is_shared) {
    static const float w[4] = {1, 2, 3, 4};
    static const int64_t xd[4] = {1, 2, 2, 2}, wd[4] = {2, 2, 1, 1};
    opara_runtime* rt = new_rt();
    opara__graph g;
    pbw gr = {0, 0, 0}, m;
    REQUIRE(rt);
    pbw_tensor_f32(&gr, 5, "W", wd, 4, w);
    pbw_node(&gr, "Conv", "conv", L("x", "W", NULL), L("c", NULL, NULL), NULL);
    pbw_node(&gr, "Relu", "relu", L("c", NULL, NULL), L("y", NULL, NULL), NULL);
    pbw_value_info(&gr, 11, "x", 1, xd, 4);
    pbw_value_info(&gr, 12, "y", 1, xd, 4);
    pbw_value_info(&gr, 12, "c", 1, xd, 4); /* the Conv output is also a graph output */
    m = pbw_model(7, 13, &gr);
    REQUIRE(import_pbw(rt, &m, NULL, 0, &g) == OPARA_OK);
    CHECK_EQ(g.n_nodes, 2);
    CHECK_EQ(count_op(&g, OPARA__OP_RELU), 1);
    opara__graph_free(&g);
    opara_runtime_destroy(rt);
}

OT_TEST(identity_and_dropout_disappear_output_keeps_name) {
    static const int64_t xd[2] = {2, 3};
    opara_runtime* rt = new_rt();
    opara__graph g;
    pbw gr = {0, 0, 0}, m;
    REQUIRE(rt);
    pbw_node(&gr, "Relu", "r", L("x", NULL, NULL), L("a", NULL, NULL), NULL);
    pbw_node(&gr, "Dropout", "d", L("a", NULL, NULL), L("b", NULL, NULL), NULL);
    pbw_node(&gr, "Identity", "i", L("b", NULL, NULL), L("y", NULL, NULL), NULL);
    pbw_value_info(&gr, 11, "x", 1, xd, 2);
    pbw_value_info(&gr, 12, "y", 1, xd, 2);
    m = pbw_model(7, 13, &gr);
    REQUIRE(import_pbw(rt, &m, NULL, 0, &g) == OPARA_OK);
    REQUIRE(g.n_nodes == 1 && g.n_outputs == 1);
    CHECK_EQ(g.nodes[0].op, OPARA__OP_RELU);
    CHECK_STR(g.values[g.outputs[0]].name, "y");
    opara__graph_free(&g);
    opara_runtime_destroy(rt);
}

/* x[N,3,4,4] -> Shape -> Gather(0) -> Unsqueeze -> Concat([-1]) -> Reshape(x) ; also Gather(1)*16 */
static pbw batch_reshape_model(int64_t opset, int use_mul) {
    static const int64_t xd[4] = {-1, 3, 4, 4}, one[1] = {1}, minus1[1] = {-1}, zero = 0, axes0[1] = {0};
    static const int64_t sixteen = 16, idx1 = 1;
    pbw g = {0, 0, 0}, a = {0, 0, 0};
    pbw_tensor_i64(&g, 5, "zero", NULL, 0, &zero);
    pbw_tensor_i64(&g, 5, "minus1", one, 1, minus1);
    pbw_tensor_i64(&g, 5, "one_idx", NULL, 0, &idx1);
    pbw_tensor_i64(&g, 5, "sixteen", NULL, 0, &sixteen);
    if (opset >= 13) pbw_tensor_i64(&g, 5, "axes", one, 1, axes0);
    pbw_node(&g, "Shape", "shape", L("x", NULL, NULL), L("s", NULL, NULL), NULL);
    pbw_attr_int(&a, "axis", 0);
    pbw_node(&g, "Gather", "g0", L("s", "zero", NULL), L("n", NULL, NULL), &a);
    if (opset < 13) pbw_attr_ints(&a, "axes", axes0, 1);
    pbw_node(&g, "Unsqueeze", "u0", opset >= 13 ? L("n", "axes", NULL) : L("n", NULL, NULL), L("nu", NULL, NULL), &a);
    if (use_mul) {
        pbw_attr_int(&a, "axis", 0);
        pbw_node(&g, "Gather", "g1", L("s", "one_idx", NULL), L("c", NULL, NULL), &a);
        pbw_node(&g, "Mul", "mul", L("c", "sixteen", NULL), L("c16", NULL, NULL), NULL);
        if (opset < 13) pbw_attr_ints(&a, "axes", axes0, 1);
        pbw_node(&g, "Unsqueeze", "u1", opset >= 13 ? L("c16", "axes", NULL) : L("c16", NULL, NULL),
                 L("cu", NULL, NULL), &a);
    }
    pbw_attr_int(&a, "axis", 0);
    pbw_node(&g, "Concat", "cat", L("nu", use_mul ? "cu" : "minus1", NULL), L("target", NULL, NULL), &a);
    pbw_node(&g, "Reshape", "reshape", L("x", "target", NULL), L("y", NULL, NULL), NULL);
    pbw_value_info(&g, 11, "x", 1, xd, 4);
    pbw_value_info(&g, 12, "y", 1, NULL, -1);
    return pbw_model(7, opset, &g);
}

/* Pow of two constants is folded by the CPU kernel (powf in float), so the folded constant has the
   bits a session computes; in double, (float)pow(x, e) differs from powf(x, e) for some x. */
OT_TEST(folded_float_pow_matches_the_kernel_bit_for_bit) {
    enum { N = 8 };
    static const int64_t ad[1] = {N}, bd[1] = {1};
    const float e = 1.0f / 3.0f;
    float a[N], b[1];
    opara_runtime* rt = new_rt();
    pbw g = {0, 0, 0}, m;
    opara__graph gr;
    const opara__node* add = NULL;
    const float* folded;
    int n = 0, i;
    uint32_t k;
    float x;
    for (x = 1.0f; n < N / 2 && x < 2.0f; x = nextafterf(x, 2.0f)) /* inputs where double pow rounds elsewhere */
        if (powf(x, e) != (float)pow((double)x, (double)e)) a[n++] = x;
    if (n == 0) {
        opara_runtime_destroy(rt);
        SKIP("this libm's powf is correctly rounded on [1, 2): nothing tells the two apart");
    }
    for (i = n; i < N; ++i) a[i] = 0.5f + (float)i;
    b[0] = e;
    pbw_tensor_f32(&g, 5, "A", ad, 1, a);
    pbw_tensor_f32(&g, 5, "E", bd, 1, b);
    pbw_node(&g, "Pow", "pow", L("A", "E", NULL), L("P", NULL, NULL), NULL);
    pbw_node(&g, "Add", "add", L("x", "P", NULL), L("y", NULL, NULL), NULL);
    pbw_value_info(&g, 11, "x", 1, ad, 1);
    pbw_value_info(&g, 12, "y", 1, ad, 1);
    m = pbw_model(7, 13, &g);
    REQUIRE(rt);
    REQUIRE(import_pbw(rt, &m, NULL, 0, &gr) == OPARA_OK);
    for (k = 0; k < gr.n_nodes; ++k)
        if (gr.nodes[k].op == OPARA__OP_ADD) add = &gr.nodes[k];
    REQUIRE(add && add->n_inputs == 2 && gr.values[add->inputs[1]].kind == OPARA__VALUE_CONST);
    CHECK_EQ(count_op(&gr, OPARA__OP_POW), 0);
    folded = (const float*)gr.values[add->inputs[1]].data;
    for (i = 0; i < N; ++i) {
        float want = powf(a[i], e);
        if (memcmp(&folded[i], &want, sizeof want) != 0) {
            CHECK(!"the folded constant differs from the kernel's powf");
            OT_LOG("Pow(%.9g, 1/3): folded %.9g, powf %.9g", (double)a[i], (double)folded[i], (double)want);
        }
    }
    OT_LOG("%d of the inputs round differently in double", n);
    opara__graph_free(&gr);
    opara_runtime_destroy(rt);
}

/* The folder takes a constant Slice's shape and offsets from the shape engine, as the kernels do for
   a Slice of an activation: ONNX Slice-13 clamps a start to [0, dim - 1] when stepping backwards, so
   starts -10 (-5 after adding the dim 5) with ends -100 and step -1 select element 0; starts -1,
   ends -6, step -2 select elements 4, 2, 0. */
OT_TEST(folded_slices_follow_the_shape_engine) {
    static const int64_t cd[1] = {5}, one[1] = {1}, three[1] = {3};
    static const float c[5] = {1, 2, 3, 4, 5};
    static const int64_t s1[1] = {-10}, e1[1] = {-100}, st1[1] = {-1}, s2[1] = {-1}, e2[1] = {-6}, st2[1] = {-2},
                         axes[1] = {0};
    static const char* const ins1[] = {"C", "s1", "e1", "axes", "st1", NULL};
    static const char* const ins2[] = {"C", "s2", "e2", "axes", "st2", NULL};
    static const float want1[1] = {1}, want2[3] = {5, 3, 1};
    opara_runtime* rt = new_rt();
    pbw g = {0, 0, 0}, m;
    opara__graph gr;
    uint32_t k, found = 0;
    REQUIRE(rt);
    pbw_tensor_f32(&g, 5, "C", cd, 1, c);
    pbw_tensor_i64(&g, 5, "s1", one, 1, s1);
    pbw_tensor_i64(&g, 5, "e1", one, 1, e1);
    pbw_tensor_i64(&g, 5, "st1", one, 1, st1);
    pbw_tensor_i64(&g, 5, "s2", one, 1, s2);
    pbw_tensor_i64(&g, 5, "e2", one, 1, e2);
    pbw_tensor_i64(&g, 5, "st2", one, 1, st2);
    pbw_tensor_i64(&g, 5, "axes", one, 1, axes);
    pbw_node(&g, "Slice", "slice1", ins1, L("S1", NULL, NULL), NULL);
    pbw_node(&g, "Slice", "slice2", ins2, L("S2", NULL, NULL), NULL);
    pbw_node(&g, "Add", "add1", L("x1", "S1", NULL), L("y1", NULL, NULL), NULL);
    pbw_node(&g, "Add", "add3", L("x3", "S2", NULL), L("y3", NULL, NULL), NULL);
    pbw_value_info(&g, 11, "x1", 1, one, 1);
    pbw_value_info(&g, 11, "x3", 1, three, 1);
    pbw_value_info(&g, 12, "y1", 1, one, 1);
    pbw_value_info(&g, 12, "y3", 1, three, 1);
    m = pbw_model(7, 13, &g);
    REQUIRE(import_pbw(rt, &m, NULL, 0, &gr) == OPARA_OK);
    CHECK_EQ(count_op(&gr, OPARA__OP_SLICE), 0);
    for (k = 0; k < gr.n_nodes; ++k) {
        const opara__value* v;
        int wide;
        if (gr.nodes[k].op != OPARA__OP_ADD || gr.nodes[k].n_inputs != 2) continue;
        v = &gr.values[gr.nodes[k].inputs[1]];
        wide = v->shape.ndim == 1 && v->shape.dims[0] == 3;
        CHECK_EQ(v->kind, OPARA__VALUE_CONST);
        CHECK(v->shape.ndim == 1 && v->shape.dims[0] == (wide ? 3 : 1));
        CHECK(v->data && memcmp(v->data, wide ? want2 : want1, wide ? sizeof want2 : sizeof want1) == 0);
        found++;
    }
    CHECK_EQ(found, 2);
    opara__graph_free(&gr);
    opara_runtime_destroy(rt);
}

OT_TEST(shape_chain_folds_to_batch_reshape) {
    opara_runtime* rt = new_rt();
    int64_t opsets[2] = {11, 13};
    int k, mul;
    REQUIRE(rt);
    for (k = 0; k < 2; ++k)
        for (mul = 0; mul < 2; ++mul) {
            opara__graph g;
            pbw m = batch_reshape_model(opsets[k], mul);
            uint32_t n;
            const int64_t* shape;
            OT_LOG("opset %lld, mul %d", (long long)opsets[k], mul);
            REQUIRE(import_pbw(rt, &m, NULL, 0, &g) == OPARA_OK);
            REQUIRE(g.n_nodes == 1);
            CHECK_EQ(g.nodes[0].op, OPARA__OP_RESHAPE);
            CHECK_EQ(g.nodes[0].n_inputs, 1);
            shape = opara__attr_ints(&g.nodes[0], "shape", &n);
            REQUIRE(shape && n == 2);
            CHECK_EQ(shape[0], OPARA__DIM_BATCH);
            CHECK_EQ(shape[1], mul ? 48 : -1);
            opara__graph_free(&g);
        }
    opara_runtime_destroy(rt);
}

OT_TEST(unsorted_nodes_and_ir3_initializer_inputs) {
    static const float w[2] = {1, 2};
    static const int64_t xd[2] = {2, 2}, wd[1] = {2};
    opara_runtime* rt = new_rt();
    opara__graph g;
    pbw gr = {0, 0, 0}, m;
    REQUIRE(rt);
    pbw_node(&gr, "Relu", "last", L("b", NULL, NULL), L("y", NULL, NULL), NULL);
    pbw_node(&gr, "Mul", "first", L("x", "W", NULL), L("b", NULL, NULL), NULL);
    pbw_tensor_f32(&gr, 5, "W", wd, 1, w);
    pbw_value_info(&gr, 11, "x", 1, xd, 2);
    pbw_value_info(&gr, 11, "W", 1, wd, 1); /* IR 3: initializers are listed as inputs too */
    pbw_value_info(&gr, 12, "y", 1, xd, 2);
    m = pbw_model(3, 6, &gr);
    REQUIRE(import_pbw(rt, &m, NULL, OPARA__ONNX_NO_FUSION, &g) == OPARA_OK); /* Mul -> Relu would fuse */
    CHECK_EQ(g.n_inputs, 1);
    REQUIRE(g.n_nodes == 2);
    CHECK_EQ(g.nodes[0].op, OPARA__OP_MUL);
    CHECK_EQ(g.nodes[1].op, OPARA__OP_RELU);
    opara__graph_free(&g);
    opara_runtime_destroy(rt);
}

/* Clip bounds: attributes before opset 11, inputs from 11. Both give attrs min/max. */
/* TopK-1 has k as an attribute, TopK-10 and later as the input K: both import as the attribute k (the
   node then has one input); TopK-10 with K computed at run time is refused, naming the input. */
OT_TEST(topk_opset_variants) {
    static const int64_t xd[2] = {4, 6}, one[1] = {1}, three[1] = {3};
    opara_runtime* rt = new_rt();
    int variant;
    REQUIRE(rt);
    for (variant = 0; variant < 3; ++variant) {
        opara__graph g;
        pbw gr = {0, 0, 0}, a = {0, 0, 0}, m;
        opara_result r;
        int64_t opset = variant == 0 ? 9 : 11;
        if (variant == 0) {
            pbw_attr_int(&a, "k", 3);
            pbw_node(&gr, "TopK", "topk", L("x", NULL, NULL), L("v", "i", NULL), &a);
        } else {
            if (variant == 1) pbw_tensor_i64(&gr, 5, "K", one, 1, three);
            else pbw_value_info(&gr, 11, "K", 7, one, 1);
            pbw_node(&gr, "TopK", "topk", L("x", "K", NULL), L("v", "i", NULL), NULL);
        }
        pbw_value_info(&gr, 11, "x", 1, xd, 2);
        pbw_value_info(&gr, 12, "v", 1, NULL, -1);
        pbw_value_info(&gr, 12, "i", 7, NULL, -1);
        m = pbw_model(7, opset, &gr);
        r = import_pbw(rt, &m, NULL, 0, &g);
        OT_LOG("variant %d (opset %lld): %s", variant, (long long)opset, r == OPARA_OK ? "imported" : opara_runtime_last_error(rt));
        if (variant < 2) {
            REQUIRE(r == OPARA_OK && g.n_nodes == 1);
            CHECK_EQ(g.nodes[0].n_inputs, 1);
            CHECK_EQ(opara__attr_int(&g.nodes[0], "k", -1), 3);
            CHECK_EQ(g.values[g.nodes[0].outputs[1]].dtype, OPARA_DTYPE_I64);
        } else {
            CHECK_EQ(r, OPARA_ERR_UNSUPPORTED_OP);
            CHECK(strstr(opara_runtime_last_error(rt), "'K'") != NULL);
        }
        opara__graph_free(&g);
    }
    opara_runtime_destroy(rt);
}

OT_TEST(clip_and_slice_opset_variants) {
    static const int64_t xd[2] = {4, 6}, one[1] = {1};
    static const int64_t starts[1] = {1}, ends[1] = {5}, axes[1] = {1}, steps[1] = {2};
    static const float lo = -1, hi = 6;
    opara_runtime* rt = new_rt();
    int variant;
    REQUIRE(rt);
    for (variant = 0; variant < 2; ++variant) {
        opara__graph g;
        pbw gr = {0, 0, 0}, a = {0, 0, 0}, m;
        uint32_t n;
        const int64_t* v;
        int64_t opset = variant ? 13 : 9;
        if (variant) {
            static const int64_t none[1] = {0};
            pbw_tensor_f32(&gr, 5, "lo", NULL, 0, &lo);
            pbw_tensor_f32(&gr, 5, "hi", NULL, 0, &hi);
            pbw_tensor_i64(&gr, 5, "starts", one, 1, starts);
            pbw_tensor_i64(&gr, 5, "ends", one, 1, ends);
            pbw_tensor_i64(&gr, 5, "axes", one, 1, axes);
            pbw_tensor_i64(&gr, 5, "steps", one, 1, steps);
            (void)none;
            pbw_node(&gr, "Clip", "clip", L("x", "lo", "hi"), L("c", NULL, NULL), NULL);
            {
                static const char* const ins[] = {"c", "starts", "ends", "axes", "steps", NULL};
                pbw_node(&gr, "Slice", "slice", ins, L("y", NULL, NULL), NULL);
            }
        } else {
            pbw_attr_float(&a, "min", lo);
            pbw_attr_float(&a, "max", hi);
            pbw_node(&gr, "Clip", "clip", L("x", NULL, NULL), L("c", NULL, NULL), &a);
            pbw_attr_ints(&a, "starts", starts, 1);
            pbw_attr_ints(&a, "ends", ends, 1);
            pbw_attr_ints(&a, "axes", axes, 1);
            pbw_node(&gr, "Slice", "slice", L("c", NULL, NULL), L("y", NULL, NULL), &a);
        }
        pbw_value_info(&gr, 11, "x", 1, xd, 2);
        pbw_value_info(&gr, 12, "y", 1, NULL, -1);
        m = pbw_model(7, opset, &gr);
        OT_LOG("opset %lld", (long long)opset);
        REQUIRE(import_pbw(rt, &m, NULL, 0, &g) == OPARA_OK);
        REQUIRE(g.n_nodes == 2);
        CHECK_EQ(g.nodes[0].n_inputs, 1);
        CHECK_NEAR(opara__attr_float(&g.nodes[0], "min", 0), -1, 0);
        CHECK_NEAR(opara__attr_float(&g.nodes[0], "max", 0), 6, 0);
        CHECK_EQ(g.nodes[1].n_inputs, 1);
        v = opara__attr_ints(&g.nodes[1], "starts", &n);
        CHECK(v && n == 1 && v[0] == 1);
        v = opara__attr_ints(&g.nodes[1], "axes", &n);
        CHECK(v && n == 1 && v[0] == 1);
        v = opara__attr_ints(&g.nodes[1], "steps", &n);
        CHECK(v && n == 1 && v[0] == (variant ? 2 : 1));
        opara__graph_free(&g);
    }
    opara_runtime_destroy(rt);
}

OT_TEST(unsupported_ops_are_listed_in_one_error) {
    static const int64_t xd[1] = {4};
    opara_runtime* rt = new_rt();
    opara__graph g;
    pbw gr = {0, 0, 0}, m;
    const char* e;
    REQUIRE(rt);
    pbw_node(&gr, "Foo", "f1", L("x", NULL, NULL), L("a", NULL, NULL), NULL);
    pbw_node(&gr, "Relu", "r", L("a", NULL, NULL), L("b", NULL, NULL), NULL);
    pbw_node(&gr, "Foo", "f2", L("b", NULL, NULL), L("c", NULL, NULL), NULL);
    {
        pbw n = {0, 0, 0};
        pbw_str(&n, 1, "c");
        pbw_str(&n, 2, "y");
        pbw_str(&n, 3, "ms");
        pbw_str(&n, 4, "Bar");
        pbw_str(&n, 7, "com.example");
        pbw_msg(&gr, 1, &n);
    }
    pbw_value_info(&gr, 11, "x", 1, xd, 1);
    pbw_value_info(&gr, 12, "y", 1, xd, 1);
    m = pbw_model(7, 13, &gr);
    CHECK_EQ(import_pbw(rt, &m, NULL, 0, &g), OPARA_ERR_UNSUPPORTED_OP);
    e = opara_runtime_last_error(rt);
    OT_LOG("%s", e);
    CHECK(strstr(e, "Foo x2 (first: node 'f1')") != NULL);
    CHECK(strstr(e, "com.example.Bar x1 (first: node 'ms')") != NULL);
    CHECK(strstr(e, "Relu") == NULL);
    CHECK_EQ(g.n_nodes, 0);
    opara__graph_free(&g);
    opara_runtime_destroy(rt);
}

/* A subgraph of one node `op` (input from the outer scope "x", output `out`), for If branches. */
static void branch_of_one(pbw* branch, const char* op, const char* name, const char* out, pbw* attrs) {
    static const int64_t xd[1] = {4};
    pbw_node(branch, op, name, L("x", NULL, NULL), L(out, NULL, NULL), attrs);
    pbw_value_info(branch, 12, out, 1, xd, 1);
}

/* The report walks If branches (and branches of branches): every blocker at once, each with where it
   was first found, and the model's opsets. */
OT_TEST(unsupported_ops_in_subgraphs_are_listed_too) {
    static const int64_t xd[1] = {4};
    opara_runtime* rt = new_rt();
    opara__graph g;
    pbw gr = {0, 0, 0}, m, attrs = {0, 0, 0}, inner_attrs = {0, 0, 0}, then_b = {0, 0, 0}, else_b = {0, 0, 0};
    pbw inner_then = {0, 0, 0}, inner_else = {0, 0, 0};
    const char* e;
    REQUIRE(rt);
    branch_of_one(&then_b, "NonZero", "nz", "t", NULL);
    branch_of_one(&inner_then, "Foo", "foo", "it", NULL);
    branch_of_one(&inner_else, "Relu", "relu", "ie", NULL);
    pbw_attr_graph(&inner_attrs, "then_branch", &inner_then);
    pbw_attr_graph(&inner_attrs, "else_branch", &inner_else);
    pbw_node(&else_b, "If", "if_inner", L("c", NULL, NULL), L("e", NULL, NULL), &inner_attrs);
    pbw_value_info(&else_b, 12, "e", 1, xd, 1);
    pbw_attr_graph(&attrs, "then_branch", &then_b);
    pbw_attr_graph(&attrs, "else_branch", &else_b);
    pbw_node(&gr, "If", "if_outer", L("c", NULL, NULL), L("y", NULL, NULL), &attrs);
    pbw_value_info(&gr, 11, "c", 9, NULL, 0);
    pbw_value_info(&gr, 11, "x", 1, xd, 1);
    pbw_value_info(&gr, 12, "y", 1, xd, 1);
    m = pbw_model(7, 13, &gr);
    CHECK_EQ(import_pbw(rt, &m, NULL, 0, &g), OPARA_ERR_UNSUPPORTED_OP);
    e = opara_runtime_last_error(rt);
    OT_LOG("%s", e);
    CHECK(strstr(e, "2 nodes use unsupported operators (opsets ai.onnx 13)") != NULL);
    CHECK(strstr(e, "If x") == NULL); /* If itself is not a blocker (its condition may fold at import) */
    CHECK(strstr(e, "NonZero x1 (first: node 'nz' in If 'if_outer'.then_branch)") != NULL);
    CHECK(strstr(e, "Foo x1 (first: node 'foo' in If 'if_outer'.else_branch > If 'if_inner'.then_branch)") != NULL);
    CHECK(strstr(e, "Relu") == NULL);
    CHECK_EQ(g.n_nodes, 0);
    opara__graph_free(&g);
    opara_runtime_destroy(rt);
}

/* A bool scalar initializer. */
static void bool_initializer(pbw* g, const char* name, int value) {
    pbw t = {0, 0, 0};
    uint8_t b = (uint8_t)(value != 0);
    pbw_int(&t, 2, 9);
    pbw_str(&t, 8, name);
    pbw_bytes(&t, 9, &b, 1);
    pbw_msg(g, 5, &t);
}

/* Model: y = If(cond, then: Relu(x), else: If(inner_cond, then: Sigmoid(x), else: Tanh(x))), cond and
   inner_cond bool initializers (cond < 0: a graph input). */
static opara_result import_if_model(opara_runtime* rt, int cond, int inner_cond, opara__graph* g) {
    static const int64_t xd[1] = {4};
    pbw gr = {0, 0, 0}, m, attrs = {0, 0, 0}, inner_attrs = {0, 0, 0}, then_b = {0, 0, 0}, else_b = {0, 0, 0};
    pbw inner_then = {0, 0, 0}, inner_else = {0, 0, 0};
    branch_of_one(&then_b, "Relu", "relu", "t", NULL);
    branch_of_one(&inner_then, "Sigmoid", "sigmoid", "it", NULL);
    branch_of_one(&inner_else, "Tanh", "tanh", "ie", NULL);
    pbw_attr_graph(&inner_attrs, "then_branch", &inner_then);
    pbw_attr_graph(&inner_attrs, "else_branch", &inner_else);
    bool_initializer(&else_b, "inner_cond", inner_cond);
    pbw_node(&else_b, "If", "if_inner", L("inner_cond", NULL, NULL), L("e", NULL, NULL), &inner_attrs);
    pbw_value_info(&else_b, 12, "e", 1, xd, 1);
    pbw_attr_graph(&attrs, "then_branch", &then_b);
    pbw_attr_graph(&attrs, "else_branch", &else_b);
    pbw_node(&gr, "If", "if_outer", L("c", NULL, NULL), L("y", NULL, NULL), &attrs);
    if (cond >= 0) bool_initializer(&gr, "c", cond);
    else pbw_value_info(&gr, 11, "c", 9, NULL, 0);
    pbw_value_info(&gr, 11, "x", 1, xd, 1);
    pbw_value_info(&gr, 12, "y", 1, xd, 1);
    m = pbw_model(7, 13, &gr);
    return import_pbw(rt, &m, NULL, 0, g);
}

/* An If whose condition is known at import is replaced by the branch it takes (the branch's own
   initializers and nested Ifs included); one decided at run time is refused, naming the condition. */
OT_TEST(if_with_a_known_condition_is_folded_to_its_branch) {
    static const struct { int cond, inner; opara__op op; } cases[3] = {
        {1, 0, OPARA__OP_RELU}, {0, 1, OPARA__OP_SIGMOID}, {0, 0, OPARA__OP_TANH}};
    opara_runtime* rt = new_rt();
    opara__graph g;
    int i;
    REQUIRE(rt);
    for (i = 0; i < 3; ++i) {
        CHECK_EQ(import_if_model(rt, cases[i].cond, cases[i].inner, &g), OPARA_OK);
        CHECK_EQ(g.n_nodes, 1);
        CHECK_EQ(count_op(&g, cases[i].op), 1);
        CHECK(g.n_outputs == 1 && strcmp(g.values[g.outputs[0]].name, "y") == 0);
        opara__graph_free(&g);
    }
    CHECK_EQ(import_if_model(rt, -1, 0, &g), OPARA_ERR_UNSUPPORTED_OP);
    OT_LOG("%s", opara_runtime_last_error(rt));
    CHECK(strstr(opara_runtime_last_error(rt), "node 'if_outer' (If): its condition 'c' is computed at run time") != NULL);
    opara__graph_free(&g);
    opara_runtime_destroy(rt);
}

/* Subgraphs nested deeper than the decoder's bound are a decode error naming the bound, not a deep
   recursion a hostile file controls. */
OT_TEST(subgraphs_nested_too_deep_are_refused) {
    static const int64_t xd[1] = {4};
    opara_runtime* rt = new_rt();
    opara__graph g;
    pbw body = {0, 0, 0}, m;
    int depth;
    REQUIRE(rt);
    branch_of_one(&body, "Relu", "leaf", "y", NULL);
    for (depth = 0; depth < 17; ++depth) { /* 17 Ifs around the leaf: the 17th graph inside is one too many */
        pbw attrs = {0, 0, 0}, outer = {0, 0, 0};
        pbw_attr_graph(&attrs, "then_branch", &body);
        pbw_node(&outer, "If", "nest", L("c", NULL, NULL), L("y", NULL, NULL), &attrs);
        pbw_value_info(&outer, 12, "y", 1, xd, 1);
        body = outer;
    }
    pbw_value_info(&body, 11, "c", 9, NULL, 0);
    pbw_value_info(&body, 11, "x", 1, xd, 1);
    m = pbw_model(7, 13, &body);
    CHECK_EQ(import_pbw(rt, &m, NULL, 0, &g), OPARA_ERR_ONNX_DECODE);
    OT_LOG("%s", opara_runtime_last_error(rt));
    CHECK(strstr(opara_runtime_last_error(rt), "subgraphs nested more than 16 deep") != NULL);
    opara__graph_free(&g);
    opara_runtime_destroy(rt);
}

/* Imports a model of one node `op` (input x[4], outputs outs) at opset: refusal NULL, it imports
   as that one node; otherwise it is refused as an unsupported operator with that text. */
static void check_opset_verdict(opara_test* T, opara_runtime* rt, const char* op, const char* const* outs, int64_t opset,
                                const char* refusal) {
    static const int64_t xd[1] = {4};
    opara__graph g;
    pbw gr = {0, 0, 0}, m;
    opara_result r;
    const char* const* o;
    pbw_node(&gr, op, "n", L("x", NULL, NULL), outs, NULL);
    pbw_value_info(&gr, 11, "x", 1, xd, 1);
    for (o = outs; *o; ++o) pbw_value_info(&gr, 12, *o, 1, NULL, -1);
    m = pbw_model(7, opset, &gr);
    r = import_pbw(rt, &m, NULL, 0, &g);
    OT_LOG("%s at opset %lld: %s", op, (long long)opset, r == OPARA_OK ? "imported" : opara_runtime_last_error(rt));
    if (refusal) {
        CHECK_EQ(r, OPARA_ERR_UNSUPPORTED_OP);
        CHECK(strstr(opara_runtime_last_error(rt), refusal) != NULL);
        CHECK_EQ(g.n_nodes, 0);
    } else {
        CHECK_EQ(r, OPARA_OK);
        CHECK_EQ(g.n_nodes, 1);
        CHECK_EQ(count_op(&g, opara__op_from_name(op)), 1);
    }
    opara__graph_free(&g);
}

/* The op table's first opset: Gelu is defined from opset 20, LayerNormalization from 17. */
OT_TEST(ops_newer_than_the_model_opset_are_refused) {
    opara_runtime* rt = new_rt();
    REQUIRE(rt);
    check_opset_verdict(T, rt, "Gelu", L("y", NULL, NULL), 17, "Gelu (opset 20+, the model's is 17) x1 (first: node 'n')");
    check_opset_verdict(T, rt, "Gelu", L("y", NULL, NULL), 20, NULL);
    check_opset_verdict(T, rt, "Celu", L("y", NULL, NULL), 11,
                        "Celu (opset 12+, the model's is 11) x1 (first: node 'n')");
    check_opset_verdict(T, rt, "Round", L("y", NULL, NULL), 10, "Round (opset 11+, the model's is 10) x1 (first: node 'n')");
    check_opset_verdict(T, rt, "Sin", L("y", NULL, NULL), 6, "Sin (opset 7+, the model's is 6) x1 (first: node 'n')");
    check_opset_verdict(T, rt, "Sign", L("y", NULL, NULL), 9, NULL);
    check_opset_verdict(T, rt, "QuantizeLinear", L("y", NULL, NULL), 9,
                        "QuantizeLinear (opset 10+, the model's is 9) x1 (first: node 'n')");
    check_opset_verdict(T, rt, "DynamicQuantizeLinear", L("y", "s", "z"), 10,
                        "DynamicQuantizeLinear (opset 11+, the model's is 10) x1 (first: node 'n')");
    check_opset_verdict(T, rt, "DequantizeLinear", L("y", NULL, NULL), 19, NULL); /* saturate: float8 only */
    opara_runtime_destroy(rt);
}

/* The op table's opset range: an op whose ONNX version at the model's opset (the newest one not
   after it) changed its meaning after the version we implement is refused. No row has such a
   version today (Split-18 and Resize-18/19 are ours), so the rule is checked on a row as Split's
   was before num_outputs was implemented (version 13, next 18), and every row with a next version
   is refused at it through the importer. */
OT_TEST(ops_changed_after_our_version_are_refused) {
    static const opara__op_info split13 = {"Split", "", 1, 13, 18, 1, 1, OPARA__OP_ANY, 1, 0, OPARA__WORK_ELEMENTWISE, 0};
    opara_runtime* rt = new_rt();
    char label[128];
    int op;
    REQUIRE(rt);
    CHECK(!opara__version_changed(&split13, 17));
    CHECK(opara__version_changed(&split13, 18));
    CHECK(opara__version_changed(&split13, 21));
    opara__changed_label(&split13, 21, label, sizeof label);
    CHECK_STR(label, "Split (changed in opset 18, the model's is 21; supported up to version 13)");
    for (op = 0; op < OPARA__OP_COUNT; ++op) {
        const opara__op_info* info = opara__op_info_of((opara__op)op);
        if (!info->next || info->domain[0]) continue;
        opara__changed_label(info, info->next, label, sizeof label);
        check_opset_verdict(T, rt, info->name, L("y", NULL, NULL), info->next, label);
    }
    opara_runtime_destroy(rt);
}

/* A newer ONNX version that only adds types keeps the meaning: HardSwish-22, Neg-13 and Softplus-22
   (bfloat16), Celu-28 (float16, bfloat16) and Transpose-21/23/24/25 (4-bit, float4, float8e8m0 and
   2-bit types) still import at those opsets. */
OT_TEST(type_only_version_bumps_still_import) {
    opara_runtime* rt = new_rt();
    REQUIRE(rt);
    check_opset_verdict(T, rt, "HardSwish", L("y", NULL, NULL), 22, NULL);
    check_opset_verdict(T, rt, "HardSwish", L("y", NULL, NULL), 25, NULL);
    check_opset_verdict(T, rt, "Transpose", L("y", NULL, NULL), 21, NULL);
    check_opset_verdict(T, rt, "Transpose", L("y", NULL, NULL), 25, NULL);
    check_opset_verdict(T, rt, "Neg", L("y", NULL, NULL), 13, NULL); /* bfloat16 */
    check_opset_verdict(T, rt, "Softplus", L("y", NULL, NULL), 22, NULL);
    check_opset_verdict(T, rt, "Celu", L("y", NULL, NULL), 28, NULL); /* float16 and bfloat16 */
    check_opset_verdict(T, rt, "QLinearMatMul", L("y", NULL, NULL), 21, NULL); /* float8 types */
    check_opset_verdict(T, rt, "QuantizeLinear", L("y", NULL, NULL), 21, NULL); /* int4, int16, block_size */
    opara_runtime_destroy(rt);
}

/* An f16 model (docs/ARCHITECTURE.md, "f16 models"): x f16 -> Mul(f16 initializer W) -> Relu -> y f16,
   and CastLike(y, f32 initializer) -> z f32. The import keeps f16 at the graph's edges, widens the
   initializer to f32 once and computes in f32; CastLike becomes a Cast. Values exact in f16. */
static pbw f16_model(void) {
    static const uint16_t w[3] = {0x4000, 0x3800, 0xC400};
    static const float like[1] = {0};
    static const int64_t xd[2] = {2, 3}, wd[1] = {3}, one[1] = {1};
    pbw gr = {0, 0, 0};
    pbw_tensor_raw(&gr, 5, "W", wd, 1, 10, w, 2); /* float16 */
    pbw_tensor_f32(&gr, 5, "like", one, 1, like);
    pbw_node(&gr, "Mul", "mul", L("x", "W", NULL), L("m", NULL, NULL), NULL);
    pbw_node(&gr, "Relu", "relu", L("m", NULL, NULL), L("y", NULL, NULL), NULL);
    pbw_node(&gr, "CastLike", "castlike", L("y", "like", NULL), L("z", NULL, NULL), NULL);
    pbw_value_info(&gr, 11, "x", 10, xd, 2);
    pbw_value_info(&gr, 12, "y", 10, xd, 2);
    pbw_value_info(&gr, 12, "z", 1, xd, 2);
    return pbw_model(8, 15, &gr);
}

OT_TEST(f16_model_keeps_f16_io_and_computes_in_f32) {
    /* x = {1, 2, 0.5, 3, -0.25, 8}, W = {2, 0.5, -4}: relu(x * W) = {2, 1, 0, 6, 0, 0} */
    static const uint16_t x[6] = {0x3C00, 0x4000, 0x3800, 0x4200, 0xB400, 0x4800};
    static const uint16_t want_y[6] = {0x4000, 0x3C00, 0x0000, 0x4600, 0x0000, 0x0000};
    static const float want_z[6] = {2, 1, 0, 6, 0, 0};
    opara_runtime* rt = new_rt();
    opara_model* model = NULL;
    opara_session* s = NULL;
    opara_session_desc d;
    opara_tensor in;
    opara__graph g;
    pbw m = f16_model();
    uint32_t i;
    REQUIRE(rt);
    REQUIRE(import_pbw(rt, &m, NULL, 0, &g) == OPARA_OK);
    CHECK_EQ(g.values[g.inputs[0]].dtype, OPARA_DTYPE_F16);
    REQUIRE(g.n_outputs == 2);
    CHECK_STR(g.values[g.outputs[0]].name, "y");
    CHECK_EQ(g.values[g.outputs[0]].dtype, OPARA_DTYPE_F16);
    CHECK_EQ(g.values[g.outputs[1]].dtype, OPARA_DTYPE_F32);
    CHECK_EQ(count_op(&g, OPARA__OP_CAST), 3); /* x to f32, the f32 result to y, CastLike */
    for (i = 0; i < g.n_values; ++i)
        if (g.values[i].kind == OPARA__VALUE_CONST) CHECK_EQ(g.values[i].dtype, OPARA_DTYPE_F32);
    opara__graph_free(&g);

    m = f16_model();
    REQUIRE(opara_model_load_onnx_memory(rt, m.d, m.n, NULL, &model) == OPARA_OK);
    free(m.d);
    memset(&d, 0, sizeof d);
    d.backend = OPARA_BACKEND_CPU;
    d.threads = 1;
    REQUIRE(opara_session_create(rt, model, &d, &s) == OPARA_OK);
    memset(&in, 0, sizeof in);
    in.name = "x";
    in.dtype = OPARA_DTYPE_F16;
    in.rank = 2;
    in.dims[0] = 2;
    in.dims[1] = 3;
    in.data = (void*)(uintptr_t)x;
    REQUIRE(opara_session_run(s, &in, 1, NULL, 0) == OPARA_OK);
    for (i = 0; i < 6; ++i) {
        CHECK_EQ(((const uint16_t*)opara_session_output_data(s, 0))[i], want_y[i]);
        CHECK_EQ(((const float*)opara_session_output_data(s, 1))[i], want_z[i]);
    }
    opara_session_destroy(s);
    opara_model_destroy(model);
    opara_runtime_destroy(rt);
}

/* Pad-18 added an 'axes' input that the pads refer to: it becomes the canonical 'axes' attribute
   (which the shape engine and both backends read), so Pad imports at opset 18 and later. */
OT_TEST(pad_axes_input_becomes_the_axes_attribute) {
    static const int64_t xd[2] = {2, 3}, two[1] = {2}, one[1] = {1}, pads[2] = {1, 2}, axes[1] = {-1};
    static const int64_t opsets[3] = {18, 19, 25};
    static const char* const ins[] = {"x", "pads", "", "axes", NULL};
    opara_runtime* rt = new_rt();
    size_t i;
    REQUIRE(rt);
    for (i = 0; i < 3; ++i) {
        opara__graph g;
        pbw gr = {0, 0, 0}, m;
        const int64_t* v;
        uint32_t n;
        pbw_tensor_i64(&gr, 5, "pads", two, 1, pads);
        pbw_tensor_i64(&gr, 5, "axes", one, 1, axes);
        pbw_node(&gr, "Pad", "p", ins, L("y", NULL, NULL), NULL);
        pbw_value_info(&gr, 11, "x", 1, xd, 2);
        pbw_value_info(&gr, 12, "y", 1, NULL, -1);
        m = pbw_model(8, opsets[i], &gr);
        OT_LOG("opset %lld", (long long)opsets[i]);
        REQUIRE(import_pbw(rt, &m, NULL, 0, &g) == OPARA_OK);
        REQUIRE(g.n_nodes == 1);
        CHECK_EQ(g.nodes[0].n_inputs, 1);
        v = opara__attr_ints(&g.nodes[0], "pads", &n);
        CHECK(v && n == 2 && v[0] == 1 && v[1] == 2);
        v = opara__attr_ints(&g.nodes[0], "axes", &n);
        CHECK(v && n == 1 && v[0] == -1);
        opara__graph_free(&g);
    }
    opara_runtime_destroy(rt);
}

/* Trilu's k, Tile's repeats and OneHot's depth (constant inputs) become attributes; OneHot keeps
   indices and values (docs/FORMAT.md). */
OT_TEST(trilu_tile_one_hot_inputs_become_attributes) {
    static const int64_t xd[2] = {3, 4}, one[1] = {1}, two[1] = {2}, reps[2] = {2, 1}, k = -1, depth = 5;
    static const float values[2] = {0, 1};
    static const char* const trilu_in[] = {"x", "k", NULL};
    static const char* const tile_in[] = {"x", "reps", NULL};
    static const char* const hot_in[] = {"x", "depth", "values", NULL};
    opara_runtime* rt = new_rt();
    opara__graph g;
    pbw gr = {0, 0, 0}, m;
    const int64_t* v;
    uint32_t n;
    REQUIRE(rt);
    pbw_tensor_i64(&gr, 5, "k", NULL, 0, &k);
    pbw_tensor_i64(&gr, 5, "reps", two, 1, reps);
    pbw_tensor_i64(&gr, 5, "depth", one, 1, &depth);
    pbw_tensor_f32(&gr, 5, "values", two, 1, values);
    pbw_node(&gr, "Trilu", "tri", trilu_in, L("a", NULL, NULL), NULL);
    pbw_node(&gr, "Tile", "tile", tile_in, L("b", NULL, NULL), NULL);
    pbw_node(&gr, "OneHot", "hot", hot_in, L("c", NULL, NULL), NULL);
    pbw_value_info(&gr, 11, "x", 1, xd, 2);
    pbw_value_info(&gr, 12, "a", 1, NULL, -1);
    pbw_value_info(&gr, 12, "b", 1, NULL, -1);
    pbw_value_info(&gr, 12, "c", 1, NULL, -1);
    m = pbw_model(8, 14, &gr);
    REQUIRE(import_pbw(rt, &m, NULL, 0, &g) == OPARA_OK);
    REQUIRE(g.n_nodes == 3);
    CHECK_EQ(g.nodes[0].n_inputs, 1);
    CHECK_EQ(opara__attr_int(&g.nodes[0], "k", 0), -1);
    CHECK_EQ(g.nodes[1].n_inputs, 1);
    v = opara__attr_ints(&g.nodes[1], "repeats", &n);
    CHECK(v && n == 2 && v[0] == 2 && v[1] == 1);
    CHECK_EQ(g.nodes[2].n_inputs, 2);
    CHECK_EQ(g.nodes[2].inputs[1], opara__graph_find_value(&g, "values"));
    CHECK_EQ(opara__attr_int(&g.nodes[2], "depth", 0), 5);
    CHECK_EQ(g.values[opara__graph_find_value(&g, "c")].dtype, OPARA_DTYPE_F32);
    opara__graph_free(&g);
    opara_runtime_destroy(rt);
}

/* Size: of x [N, 3] (the symbolic batch) and of x x^T [N, N] it stays a node and runs; of a tensor
   of known shape (the constant c [4, 3]) it folds at import. A session of batch 2 gives
   6, 4 and 12. */
static pbw size_model(void) {
    static const int64_t xd[2] = {-1, 3}, cd[2] = {4, 3};
    static const float c[12] = {0};
    pbw gr = {0, 0, 0};
    pbw_tensor_f32(&gr, 5, "c", cd, 2, c);
    pbw_node(&gr, "Transpose", "t", L("x", NULL, NULL), L("xt", NULL, NULL), NULL);
    pbw_node(&gr, "MatMul", "mm", L("x", "xt", NULL), L("p", NULL, NULL), NULL);
    pbw_node(&gr, "Size", "size_x", L("x", NULL, NULL), L("y", NULL, NULL), NULL);
    pbw_node(&gr, "Size", "size_p", L("p", NULL, NULL), L("y2", NULL, NULL), NULL);
    pbw_node(&gr, "Size", "size_c", L("c", NULL, NULL), L("y3", NULL, NULL), NULL);
    pbw_value_info(&gr, 11, "x", 1, xd, 2);
    pbw_value_info(&gr, 12, "y", 7, NULL, -1);
    pbw_value_info(&gr, 12, "y2", 7, NULL, -1);
    pbw_value_info(&gr, 12, "y3", 7, NULL, -1);
    return pbw_model(8, 13, &gr);
}

OT_TEST(size_folds_when_the_shape_is_known_and_runs_otherwise) {
    opara_runtime* rt = new_rt();
    opara__graph g;
    opara_model* model = NULL;
    opara_session* s = NULL;
    opara_session_desc d;
    opara_tensor in;
    float x[6] = {0};
    pbw m = size_model();
    REQUIRE(rt);
    REQUIRE(import_pbw(rt, &m, NULL, 0, &g) == OPARA_OK);
    CHECK_EQ(count_op(&g, OPARA__OP_SIZE), 2);
    opara__graph_free(&g);
    m = size_model();
    REQUIRE(opara_model_load_onnx_memory(rt, m.d, m.n, NULL, &model) == OPARA_OK);
    free(m.d);
    memset(&d, 0, sizeof d);
    d.backend = OPARA_BACKEND_CPU;
    d.batch_size = 2;
    REQUIRE(opara_session_create(rt, model, &d, &s) == OPARA_OK);
    memset(&in, 0, sizeof in);
    in.name = "x", in.dtype = OPARA_DTYPE_F32, in.rank = 2, in.dims[0] = 2, in.dims[1] = 3, in.data = x;
    REQUIRE(opara_session_run(s, &in, 1, NULL, 0) == OPARA_OK);
    CHECK_EQ(*(const int64_t*)opara_session_output_data(s, 0), 6);
    CHECK_EQ(*(const int64_t*)opara_session_output_data(s, 1), 4);
    CHECK_EQ(*(const int64_t*)opara_session_output_data(s, 2), 12);
    opara_session_destroy(s);
    opara_model_destroy(model);
    opara_runtime_destroy(rt);
}

/* Runs the one-node graph gr (consumed; input "x" f32 of shape xd, outputs outs) at opset on a CPU
   session. Output k: its first cap floats into ys + k * cap, its shape into shapes[k]. */
static opara_result run_one_node(opara_runtime* rt, pbw* gr, int64_t opset, int32_t rank, const int64_t* xd,
                                 const float* x, const char* const* outs, float* ys, size_t cap, opara_tensor_info* shapes) {
    opara_model* model = NULL;
    opara_session* s = NULL;
    opara_session_desc d;
    opara_tensor in;
    const char* const* o;
    opara_result r;
    uint32_t k;
    pbw m;
    int i;
    pbw_value_info(gr, 11, "x", 1, xd, rank);
    for (o = outs; *o; ++o) pbw_value_info(gr, 12, *o, 1, NULL, -1);
    m = pbw_model(8, opset, gr);
    r = opara_model_load_onnx_memory(rt, m.d, m.n, NULL, &model);
    free(m.d);
    if (r != OPARA_OK) return r;
    memset(&d, 0, sizeof d);
    d.backend = OPARA_BACKEND_CPU;
    d.threads = 1;
    r = opara_session_create(rt, model, &d, &s);
    memset(&in, 0, sizeof in);
    in.name = "x";
    in.dtype = OPARA_DTYPE_F32;
    in.rank = rank;
    for (i = 0; i < rank; ++i) in.dims[i] = xd[i];
    in.data = (void*)(uintptr_t)x;
    if (r == OPARA_OK) r = opara_session_run(s, &in, 1, NULL, 0);
    for (k = 0; r == OPARA_OK && k < opara_session_output_count(s); ++k) {
        size_t n = 1;
        r = opara_session_output_info(s, k, &shapes[k]);
        for (i = 0; i < shapes[k].rank; ++i) n *= (size_t)shapes[k].dims[i];
        memcpy(ys + k * cap, opara_session_output_data(s, k), (n < cap ? n : cap) * sizeof(float));
    }
    opara_session_destroy(s);
    opara_model_destroy(model);
    return r;
}

/* ---- GELU chains -------------------------------------------------------------------------------- */

enum { GELU_DIV, GELU_MUL_SWAPPED, GELU_HALF_X_FIRST, GELU_TANH_POW, GELU_TANH_MUL_SWAPPED, GELU_N_FORMS };
enum { GELU_EXACT, GELU_WRONG_CONST, GELU_ERF_READ_TWICE, GELU_MIDDLE_OUTPUT, GELU_HALF_TWICE };

/* A scalar constant: rank 0, or shape [1] (rank1: broadcasting it against x changes no shape). */
static void gelu_scalar(pbw* g, const char* name, float v, int rank1) {
    static const int64_t one[1] = {1};
    pbw_tensor_f32(g, 5, name, one, rank1, &v);
}

/* One GELU chain from x to y as an exporter writes it (form), exactly or with a flaw (miss) that
   must keep it unfused; x and y without value_info; GELU_MUL_SWAPPED's constants have shape [1].
   "e" is the Erf/Tanh output, "a" = Add(e, 1); GELU_ERF_READ_TWICE adds the graph output
   z = Neg(e), GELU_MIDDLE_OUTPUT makes "a" one. */
static pbw gelu_graph(int form, int miss) {
    static const int64_t xd[2] = {2, 5};
    pbw g = {0, 0, 0};
    int tanh_form = form >= GELU_TANH_POW, rank1 = form == GELU_MUL_SWAPPED;
    gelu_scalar(&g, "one", 1.0f, rank1);
    gelu_scalar(&g, "half", miss == GELU_WRONG_CONST && !tanh_form ? 0.51f : 0.5f, rank1);
    if (!tanh_form) {
        if (form == GELU_DIV) {
            gelu_scalar(&g, "c", 1.4142135f, rank1);
            pbw_node(&g, "Div", "div", L("x", "c", NULL), L("s", NULL, NULL), NULL);
        } else {
            gelu_scalar(&g, "c", 0.70710677f, rank1);
            pbw_node(&g, "Mul", "scale", L("c", "x", NULL), L("s", NULL, NULL), NULL);
        }
        pbw_node(&g, "Erf", "erf", L("s", NULL, NULL), L("e", NULL, NULL), NULL);
    } else {
        gelu_scalar(&g, "k", miss == GELU_WRONG_CONST ? 0.045f : 0.044715f, rank1);
        gelu_scalar(&g, "c", 0.7978846f, rank1);
        if (form == GELU_TANH_POW) {
            gelu_scalar(&g, "three", 3.0f, rank1);
            pbw_node(&g, "Pow", "pow", L("x", "three", NULL), L("x3", NULL, NULL), NULL);
            pbw_node(&g, "Mul", "kx3", L("x3", "k", NULL), L("v", NULL, NULL), NULL);
            pbw_node(&g, "Add", "inner", L("x", "v", NULL), L("u", NULL, NULL), NULL);
            pbw_node(&g, "Mul", "scale", L("u", "c", NULL), L("s", NULL, NULL), NULL);
        } else {
            pbw_node(&g, "Mul", "sq", L("x", "x", NULL), L("x2", NULL, NULL), NULL);
            pbw_node(&g, "Mul", "cube", L("x2", "x", NULL), L("x3", NULL, NULL), NULL);
            pbw_node(&g, "Mul", "kx3", L("k", "x3", NULL), L("v", NULL, NULL), NULL);
            pbw_node(&g, "Add", "inner", L("v", "x", NULL), L("u", NULL, NULL), NULL);
            pbw_node(&g, "Mul", "scale", L("c", "u", NULL), L("s", NULL, NULL), NULL);
        }
        pbw_node(&g, "Tanh", "erf", L("s", NULL, NULL), L("e", NULL, NULL), NULL);
    }
    if (form == GELU_DIV || form == GELU_TANH_POW) pbw_node(&g, "Add", "add", L("e", "one", NULL), L("a", NULL, NULL), NULL);
    else pbw_node(&g, "Add", "add", L("one", "e", NULL), L("a", NULL, NULL), NULL);
    if (form == GELU_DIV || form == GELU_TANH_POW) {
        pbw_node(&g, "Mul", "mx", L("x", "a", NULL), L("m", NULL, NULL), NULL);
        pbw_node(&g, "Mul", "mh", L("m", miss == GELU_HALF_TWICE ? "x" : "half", NULL), L("y", NULL, NULL), NULL);
    } else if (form == GELU_HALF_X_FIRST) {
        pbw_node(&g, "Mul", "hx", L(miss == GELU_HALF_TWICE ? "x" : "half", "x", NULL), L("h", NULL, NULL), NULL);
        pbw_node(&g, "Mul", "mh", L("a", "h", NULL), L("y", NULL, NULL), NULL);
    } else {
        pbw_node(&g, "Mul", "mh", L("a", "half", NULL), L("m", NULL, NULL), NULL);
        pbw_node(&g, "Mul", "mx", L(miss == GELU_HALF_TWICE ? "half" : "x", "m", NULL), L("y", NULL, NULL), NULL);
    }
    if (miss == GELU_ERF_READ_TWICE) pbw_node(&g, "Neg", "neg", L("e", NULL, NULL), L("z", NULL, NULL), NULL);
    if (miss == GELU_ERF_READ_TWICE) pbw_value_info(&g, 12, "z", 1, xd, 2);
    if (miss == GELU_MIDDLE_OUTPUT) pbw_value_info(&g, 12, "a", 1, xd, 2);
    return g;
}

static pbw gelu_model(int form, int miss) {
    static const int64_t xd[2] = {2, 5};
    pbw g = gelu_graph(form, miss);
    pbw_value_info(&g, 11, "x", 1, xd, 2);
    pbw_value_info(&g, 12, "y", 1, xd, 2);
    return pbw_model(8, 13, &g);
}

/* Runs gelu_graph(form, miss) on a CPU session with x[2,5]; y into y (10 floats). */
static opara_result run_gelu(opara_runtime* rt, int form, int miss, const float* x, float* y) {
    static const int64_t xd[2] = {2, 5};
    opara_tensor_info shape;
    pbw g = gelu_graph(form, miss);
    return run_one_node(rt, &g, 13, 2, xd, x, L("y", NULL, NULL), y, 10, &shape);
}

static int gelu_node_count(int form) { return form == GELU_TANH_POW ? 8 : form == GELU_TANH_MUL_SWAPPED ? 9 : 5; }

/* Each exporter form becomes one Gelu (x in, y out, approximate per form; OPARA__ONNX_NO_FUSION keeps
   the chain) and computes GELU as the double formula does. */
OT_TEST(gelu_chains_fuse_into_one_gelu) {
    static const float x[10] = {-6.0f, -3.0f, -1.5f, -0.7f, -0.01f, 0.0f, 0.3f, 1.0f, 2.5f, 7.0f};
    opara_runtime* rt = new_rt();
    int form, i;
    REQUIRE(rt);
    for (form = 0; form < GELU_N_FORMS; ++form) {
        int tanh_form = form >= GELU_TANH_POW;
        float y[10];
        opara__graph g;
        pbw m = gelu_model(form, GELU_EXACT);
        OT_LOG("form %d", form);
        REQUIRE(import_pbw(rt, &m, NULL, OPARA__ONNX_NO_FUSION, &g) == OPARA_OK);
        CHECK_EQ(g.n_nodes, gelu_node_count(form));
        CHECK_EQ(count_op(&g, OPARA__OP_GELU), 0);
        opara__graph_free(&g);
        m = gelu_model(form, GELU_EXACT);
        REQUIRE(import_pbw(rt, &m, NULL, 0, &g) == OPARA_OK);
        REQUIRE(g.n_nodes == 1);
        CHECK_EQ(g.nodes[0].op, OPARA__OP_GELU);
        CHECK_STR(opara__attr_string(&g.nodes[0], "approximate", ""), tanh_form ? "tanh" : "none");
        REQUIRE(g.nodes[0].n_inputs == 1);
        CHECK_STR(g.values[g.nodes[0].inputs[0]].name, "x");
        CHECK_STR(g.values[g.nodes[0].outputs[0]].name, "y");
        opara__graph_free(&g);
        REQUIRE(run_gelu(rt, form, GELU_EXACT, x, y) == OPARA_OK);
        for (i = 0; i < 10; ++i) {
            double v = x[i], want = tanh_form ? 0.5 * v * (1 + tanh(sqrt(2 / 3.14159265358979323846) * (v + 0.044715 * v * v * v)))
                                              : 0.5 * v * (1 + erf(v / sqrt(2.0)));
            CHECK_NEAR(y[i], want, 2e-6 * fabs(want) + 1e-6);
        }
        T->log_len = 0;
        T->log[0] = 0;
    }
    opara_runtime_destroy(rt);
}

/* Near misses stay element-wise chains: a constant off GELU's (0.51 for 0.5, 0.045 for 0.044715),
   the Erf/Tanh output read twice, an intermediate that is a graph output, 0.5 or x where the
   other belongs. The unfused chain still computes its own formula. */
OT_TEST(gelu_near_misses_stay_unfused) {
    static const int misses[4] = {GELU_WRONG_CONST, GELU_ERF_READ_TWICE, GELU_MIDDLE_OUTPUT, GELU_HALF_TWICE};
    static const float x[10] = {-3.0f, -1.0f, -0.5f, 0.0f, 0.25f, 0.5f, 1.0f, 1.5f, 2.0f, 4.0f};
    opara_runtime* rt = new_rt();
    int form, k, i;
    REQUIRE(rt);
    for (form = 0; form < GELU_N_FORMS; ++form)
        for (k = 0; k < 4; ++k) {
            opara__graph g;
            pbw m = gelu_model(form, misses[k]);
            OT_LOG("form %d miss %d", form, misses[k]);
            REQUIRE(import_pbw(rt, &m, NULL, 0, &g) == OPARA_OK);
            CHECK_EQ(count_op(&g, OPARA__OP_GELU), 0);
            CHECK_EQ(g.n_nodes, gelu_node_count(form) + (misses[k] == GELU_ERF_READ_TWICE));
            opara__graph_free(&g);
            if (misses[k] == GELU_WRONG_CONST && form == GELU_DIV) {
                float y[10];
                REQUIRE(run_gelu(rt, form, misses[k], x, y) == OPARA_OK);
                for (i = 0; i < 10; ++i) {
                    double v = x[i], want = 0.51 * v * (1 + erf(v / (double)1.4142135f));
                    CHECK_NEAR(y[i], want, 2e-6 * fabs(want) + 1e-6);
                }
            }
            T->log_len = 0;
            T->log[0] = 0;
        }
    opara_runtime_destroy(rt);
}

/* ---- activations after a binary operator ------------------------------------------------------ */

enum { BINACT_EXACT, BINACT_READ_TWICE, BINACT_OUTPUT };

/* t = op(x, b) (b a constant [5]), y = act(t) with 'approximate' when approx is not NULL, opset 20;
   BINACT_READ_TWICE adds the graph output z = Neg(t), BINACT_OUTPUT makes t one. */
static pbw binact_model(const char* op, const char* act, const char* approx, int miss) {
    static const int64_t xd[2] = {2, 5}, bd[1] = {5};
    static const float b[5] = {0.5f, -1.0f, 2.0f, -0.25f, 1.0f};
    pbw g = {0, 0, 0}, a = {0, 0, 0};
    pbw_tensor_f32(&g, 5, "b", bd, 1, b);
    pbw_node(&g, op, "op", L("x", "b", NULL), L("t", NULL, NULL), NULL);
    if (approx) pbw_attr_str(&a, "approximate", approx);
    pbw_node(&g, act, "act", L("t", NULL, NULL), L("y", NULL, NULL), &a);
    if (miss == BINACT_READ_TWICE) pbw_node(&g, "Neg", "neg", L("t", NULL, NULL), L("z", NULL, NULL), NULL);
    pbw_value_info(&g, 11, "x", 1, xd, 2);
    pbw_value_info(&g, 12, "y", 1, xd, 2);
    if (miss == BINACT_READ_TWICE) pbw_value_info(&g, 12, "z", 1, xd, 2);
    if (miss == BINACT_OUTPUT) pbw_value_info(&g, 12, "t", 1, xd, 2);
    return pbw_model(9, 20, &g);
}

/* Add, Sub, Mul, Div followed by Relu or Gelu become the one binary node with "activation" (Gelu's
   approximation in its name), reading x and b and producing y; OPARA__ONNX_NO_FUSION keeps both. */
OT_TEST(activations_fuse_into_the_binary_operator_before_them) {
    static const struct { const char *op, *act, *approx, *fused; } cases[] = {
        {"Add", "Relu", NULL, "Relu"},         {"Sub", "Relu", NULL, "Relu"},   {"Mul", "Gelu", NULL, "Gelu"},
        {"Div", "Gelu", "tanh", "GeluTanh"},   {"Add", "Gelu", "none", "Gelu"}, {"Mul", "Relu", NULL, "Relu"},
    };
    opara_runtime* rt = new_rt();
    size_t k;
    REQUIRE(rt);
    for (k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
        opara__graph g;
        pbw m = binact_model(cases[k].op, cases[k].act, cases[k].approx, BINACT_EXACT);
        OT_LOG("%s -> %s", cases[k].op, cases[k].act);
        REQUIRE(import_pbw(rt, &m, NULL, OPARA__ONNX_NO_FUSION, &g) == OPARA_OK);
        CHECK_EQ(g.n_nodes, 2);
        opara__graph_free(&g);
        m = binact_model(cases[k].op, cases[k].act, cases[k].approx, BINACT_EXACT);
        REQUIRE(import_pbw(rt, &m, NULL, 0, &g) == OPARA_OK);
        REQUIRE(g.n_nodes == 1 && g.nodes[0].n_inputs == 2 && g.nodes[0].n_outputs == 1);
        CHECK_STR(opara__op_name(g.nodes[0].op), cases[k].op);
        CHECK_STR(opara__attr_string(&g.nodes[0], "activation", ""), cases[k].fused);
        CHECK_STR(g.values[g.nodes[0].inputs[0]].name, "x");
        CHECK_STR(g.values[g.nodes[0].inputs[1]].name, "b");
        CHECK_STR(g.values[g.nodes[0].outputs[0]].name, "y");
        opara__graph_free(&g);
        T->log_len = 0;
        T->log[0] = 0;
    }
    opara_runtime_destroy(rt);
}

/* A GELU chain after a bias Add (BERT's MatMul -> Add -> GELU): the chain becomes a Gelu, which the
   Add then takes (the chain's x, read by two of its nodes before, is read once after). */
OT_TEST(a_gelu_chain_after_a_bias_add_fuses_into_the_add) {
    static const int64_t xd[2] = {2, 5}, bd[1] = {5};
    static const float b[5] = {0.5f, -1.0f, 2.0f, -0.25f, 1.0f};
    opara_runtime* rt = new_rt();
    opara__graph g;
    pbw gr = gelu_graph(GELU_DIV, GELU_EXACT), m;
    REQUIRE(rt);
    pbw_tensor_f32(&gr, 5, "bias", bd, 1, b);
    pbw_node(&gr, "Add", "bias_add", L("in", "bias", NULL), L("x", NULL, NULL), NULL);
    pbw_value_info(&gr, 11, "in", 1, xd, 2);
    pbw_value_info(&gr, 12, "y", 1, xd, 2);
    m = pbw_model(8, 13, &gr);
    REQUIRE(import_pbw(rt, &m, NULL, 0, &g) == OPARA_OK);
    REQUIRE(g.n_nodes == 1);
    CHECK_EQ(g.nodes[0].op, OPARA__OP_ADD);
    CHECK_STR(opara__attr_string(&g.nodes[0], "activation", ""), "Gelu");
    CHECK_STR(g.values[g.nodes[0].outputs[0]].name, "y");
    opara__graph_free(&g);
    opara_runtime_destroy(rt);
}

/* No fusion when the binary output is read twice or is a graph output, when the activation is not
   an exact function of one value we fuse (Sigmoid, LeakyRelu) or the operator not one of the four
   (Pow), or when Gelu's approximation is unknown. */
OT_TEST(activations_stay_separate_when_the_fusion_does_not_apply) {
    static const struct { const char *op, *act, *approx; int miss, nodes; } cases[] = {
        {"Add", "Relu", NULL, BINACT_READ_TWICE, 3}, {"Mul", "Gelu", NULL, BINACT_READ_TWICE, 3},
        {"Add", "Relu", NULL, BINACT_OUTPUT, 2},     {"Div", "Gelu", "tanh", BINACT_OUTPUT, 2},
        {"Add", "Sigmoid", NULL, BINACT_EXACT, 2},   {"Sub", "LeakyRelu", NULL, BINACT_EXACT, 2},
        {"Pow", "Relu", NULL, BINACT_EXACT, 2},      {"Add", "Gelu", "cubic", BINACT_EXACT, 2},
    };
    opara_runtime* rt = new_rt();
    size_t k;
    uint32_t i;
    REQUIRE(rt);
    for (k = 0; k < sizeof cases / sizeof cases[0]; ++k) {
        opara__graph g;
        pbw m = binact_model(cases[k].op, cases[k].act, cases[k].approx, cases[k].miss);
        OT_LOG("%s -> %s, miss %d", cases[k].op, cases[k].act, cases[k].miss);
        REQUIRE(import_pbw(rt, &m, NULL, 0, &g) == OPARA_OK);
        CHECK_EQ(g.n_nodes, (uint32_t)cases[k].nodes);
        for (i = 0; i < g.n_nodes; ++i) CHECK_STR(opara__attr_string(&g.nodes[i], "activation", ""), "");
        opara__graph_free(&g);
        T->log_len = 0;
        T->log[0] = 0;
    }
    opara_runtime_destroy(rt);
}

/* The reductions' axes: an attribute before ReduceSum-13 / the others' opset 18, a constant input
   since (an empty one with noop_with_empty_axes: the input unchanged); CumSum's axis input becomes
   its attribute. x = [[1, -2, 3], [4, 5, -6]]. */
static opara_result run_reduction(opara_runtime* rt, const char* op, int64_t opset, int as_input, const int64_t* axes,
                                  int n_axes, int noop, float* y, opara_tensor_info* shape) {
    static const int64_t xd[2] = {2, 3};
    static const float x[6] = {1, -2, 3, 4, 5, -6};
    static const char* const outs[] = {"y", NULL};
    pbw gr = {0, 0, 0}, a = {0, 0, 0};
    int64_t n = n_axes;
    if (!as_input && axes) pbw_attr_ints(&a, strcmp(op, "CumSum") ? "axes" : "axis", axes, n_axes);
    if (strcmp(op, "CumSum") != 0) pbw_attr_int(&a, "keepdims", 0);
    else pbw_attr_int(&a, "exclusive", 1);
    if (noop) pbw_attr_int(&a, "noop_with_empty_axes", 1);
    if (as_input) pbw_tensor_i64(&gr, 5, "axes", &n, strcmp(op, "CumSum") ? 1 : 0, axes);
    pbw_node(&gr, op, "r", as_input ? L("x", "axes", NULL) : L("x", NULL, NULL), outs, &a);
    return run_one_node(rt, &gr, opset, 2, xd, x, outs, y, 8, shape);
}

OT_TEST(reduction_axes_attribute_or_input_and_cum_sum_axis) {
    static const int64_t ax1[1] = {1}, axneg[1] = {-2};
    opara_runtime* rt = new_rt();
    opara_tensor_info sh[1];
    float y[8];
    REQUIRE(rt);
    REQUIRE(run_reduction(rt, "ReduceSum", 11, 0, ax1, 1, 0, y, sh) == OPARA_OK);
    CHECK(sh[0].rank == 1 && sh[0].dims[0] == 2 && y[0] == 2.0f && y[1] == 3.0f);
    REQUIRE(run_reduction(rt, "ReduceSum", 13, 1, ax1, 1, 0, y, sh) == OPARA_OK);
    CHECK(sh[0].rank == 1 && y[0] == 2.0f && y[1] == 3.0f);
    REQUIRE(run_reduction(rt, "ReduceSum", 13, 1, NULL, 0, 1, y, sh) == OPARA_OK); /* empty axes, noop */
    CHECK(sh[0].rank == 2 && y[1] == -2.0f && y[5] == -6.0f);
    REQUIRE(run_reduction(rt, "ReduceMax", 13, 0, axneg, 1, 0, y, sh) == OPARA_OK);
    CHECK(sh[0].rank == 1 && sh[0].dims[0] == 3 && y[0] == 4.0f && y[1] == 5.0f && y[2] == 3.0f);
    REQUIRE(run_reduction(rt, "ReduceL1", 18, 1, ax1, 1, 0, y, sh) == OPARA_OK);
    CHECK(y[0] == 6.0f && y[1] == 15.0f);
    REQUIRE(run_reduction(rt, "ReduceLogSumExp", 18, 1, NULL, 0, 0, y, sh) == OPARA_OK); /* no axes: all */
    CHECK(sh[0].rank == 0 && fabsf(y[0] - 5.420327f) < 1e-5f);
    REQUIRE(run_reduction(rt, "CumSum", 14, 1, ax1, 1, 0, y, sh) == OPARA_OK); /* exclusive along axis 1 */
    CHECK(sh[0].rank == 2 && y[0] == 0.0f && y[1] == 1.0f && y[2] == -1.0f && y[3] == 0.0f && y[5] == 9.0f);
    opara_runtime_destroy(rt);
}

/* RNN's 'activations' (a string list) becomes one comma-joined string with its alpha kept, and an
   omitted Y before Y_h imports: x = {0.5, -2} through W = 1, R = 0 and LeakyRelu(0.1) gives
   Y_h = -0.2. */
OT_TEST(rnn_activations_and_an_omitted_output_import) {
    static const int64_t xd[3] = {2, 1, 1}, wd[3] = {1, 1, 1};
    static const float x[2] = {0.5f, -2.0f}, one[1] = {1.0f}, zero[1] = {0.0f}, alpha[1] = {0.1f};
    static const char* const acts[] = {"LeakyRelu", NULL}, *outs[] = {"", "yh", NULL}, *yh[] = {"yh", NULL};
    opara_runtime* rt = new_rt();
    opara_tensor_info shapes[2];
    float ys[2 * 8];
    pbw gr = {0, 0, 0}, a = {0, 0, 0};
    REQUIRE(rt);
    pbw_tensor_f32(&gr, 5, "w", wd, 3, one);
    pbw_tensor_f32(&gr, 5, "r", wd, 3, zero);
    pbw_attr_int(&a, "hidden_size", 1);
    pbw_attr_strs(&a, "activations", acts);
    pbw_attr_floats(&a, "activation_alpha", alpha, 1);
    pbw_node(&gr, "RNN", "rnn", L("x", "w", "r"), outs, &a);
    CHECK_EQ(run_one_node(rt, &gr, 14, 3, xd, x, yh, ys, 8, shapes), OPARA_OK);
    CHECK(shapes[0].rank == 3 && shapes[0].dims[0] == 1 && shapes[0].dims[2] == 1);
    CHECK(fabsf(ys[0] - -0.2f) < 1e-6f);
    if (fabsf(ys[0] - -0.2f) >= 1e-6f) OT_LOG("Y_h %g: %s", ys[0], opara_runtime_last_error(rt));
    {
        static const char* const three[] = {"Sigmoid", "Tanh", "Tanh", NULL};
        static const int64_t w4[3] = {1, 4, 1}, r4[3] = {1, 4, 1};
        static const float z4[4] = {0, 0, 0, 0};
        opara__graph g;
        pbw m;
        gr.d = NULL, gr.n = gr.cap = 0;
        pbw_tensor_f32(&gr, 5, "w", w4, 3, z4);
        pbw_tensor_f32(&gr, 5, "r", r4, 3, z4);
        pbw_attr_strs(&a, "activations", three);
        pbw_node(&gr, "LSTM", "lstm", L("x", "w", "r"), L("y", NULL, NULL), &a);
        pbw_value_info(&gr, 11, "x", 1, xd, 3);
        pbw_value_info(&gr, 12, "y", 1, NULL, -1);
        m = pbw_model(8, 14, &gr);
        REQUIRE(import_pbw(rt, &m, NULL, 0, &g) == OPARA_OK);
        CHECK_STR(opara__attr_string(&g.nodes[0], "activations", ""), "Sigmoid,Tanh,Tanh");
        opara__graph_free(&g);
    }
    opara_runtime_destroy(rt);
}

/* torch.onnx.export's zero initial state: ConstantOfShape([batch, 1, 1]) from Shape(x) with a
   symbolic batch (batch-first, layout 1) has no constant to fold to; read (through a Slice) as an RNN's initial_h it is
   that input omitted, read by anything else it is refused naming the ConstantOfShape. */
static opara_result import_zero_state(opara_runtime* rt, const char* consumer, opara__graph* g) {
    static const int64_t xd[3] = {-1, 2, 1}, wd[3] = {1, 1, 1}, one[1] = {1}, zero[1] = {0};
    static const int64_t axes1[1] = {1}, ends[1] = {1};
    static const float w[1] = {1.0f};
    pbw gr = {0, 0, 0}, a = {0, 0, 0}, m;
    pbw_tensor_f32(&gr, 5, "w", wd, 3, w);
    pbw_tensor_i64(&gr, 5, "idx", one, 1, zero);
    pbw_tensor_i64(&gr, 5, "zero", one, 1, zero);
    pbw_tensor_i64(&gr, 5, "axes1", one, 1, axes1);
    pbw_tensor_i64(&gr, 5, "one", one, 1, one);
    pbw_tensor_i64(&gr, 5, "ends", one, 1, ends);
    pbw_node(&gr, "Shape", "shape", L("x", NULL, NULL), L("s", NULL, NULL), NULL);
    pbw_node(&gr, "Gather", "batch", L("s", "idx", NULL), L("b", NULL, NULL), NULL);
    pbw_node(&gr, "Concat", "dims", L("b", "one", "one"), L("dims", NULL, NULL), (pbw_attr_int(&a, "axis", 0), &a));
    pbw_node(&gr, "ConstantOfShape", "zeros", L("dims", NULL, NULL), L("z", NULL, NULL), NULL);
    {
        static const char* const slice_in[] = {"z", "zero", "ends", "axes1", NULL};
        pbw_node(&gr, "Slice", "layer0", slice_in, L("h0", NULL, NULL), NULL);
    }
    if (strcmp(consumer, "RNN") == 0) {
        static const char* const ins[] = {"x", "w", "w", "", "", "h0", NULL};
        pbw_attr_int(&a, "hidden_size", 1);
        pbw_attr_int(&a, "layout", 1);
        pbw_node(&gr, "RNN", "rnn", ins, L("", "y", NULL), &a);
    } else {
        pbw_node(&gr, consumer, "use", L("x", "h0", NULL), L("y", NULL, NULL), NULL);
    }
    pbw_value_info(&gr, 11, "x", 1, xd, 3);
    pbw_value_info(&gr, 12, "y", 1, NULL, -1);
    m = pbw_model(8, 14, &gr);
    return import_pbw(rt, &m, NULL, 0, g);
}

OT_TEST(rnn_zero_initial_state_of_symbolic_batch_imports) {
    opara_runtime* rt = new_rt();
    opara__graph g;
    REQUIRE(rt);
    CHECK_EQ(import_zero_state(rt, "RNN", &g), OPARA_OK);
    if (g.n_nodes == 1) CHECK(g.nodes[0].op == OPARA__OP_RNN && g.nodes[0].n_inputs == 3); /* initial_h omitted */
    else CHECK_STR(opara_runtime_last_error(rt), "");
    opara__graph_free(&g);
    CHECK_EQ(import_zero_state(rt, "Add", &g), OPARA_ERR_UNSUPPORTED_OP);
    CHECK(strstr(opara_runtime_last_error(rt), "'zeros' (ConstantOfShape)") != NULL);
    CHECK(strstr(opara_runtime_last_error(rt), "initial state of an RNN") != NULL);
    opara__graph_free(&g);
    opara_runtime_destroy(rt);
}

/* The pads of a TF-exported Pad, computed from an initializer: Split (sizes 1, 1, 2), Concat, Max against a
   constant, and negatives replaced through Where(Less(m, 0), 0, m). The folder evaluates the whole chain, so
   the graph is one Pad with constant pads {0, 1, 0, 2}. */
static pbw tf_pad_graph(void) {
    static const int64_t four[1] = {4}, three[1] = {3}, one[1] = {1};
    static const int64_t p[4] = {0, 1, -3, 2}, sizes[3] = {1, 1, 2}, lo[4] = {-5, 0, -9, 1}, zero[1] = {0};
    pbw gr = {0, 0, 0}, a = {0, 0, 0};
    pbw_tensor_i64(&gr, 5, "P", four, 1, p);
    pbw_tensor_i64(&gr, 5, "sizes", three, 1, sizes);
    pbw_tensor_i64(&gr, 5, "lo", four, 1, lo);
    pbw_tensor_i64(&gr, 5, "zero", one, 1, zero);
    pbw_attr_int(&a, "axis", 0);
    pbw_node(&gr, "Split", "split", L("P", "sizes", NULL), L("s0", "s1", "s2"), &a);
    pbw_attr_int(&a, "axis", 0);
    pbw_node(&gr, "Concat", "cat", L("s0", "s1", "s2"), L("cat", NULL, NULL), &a);
    pbw_node(&gr, "Max", "max", L("cat", "lo", NULL), L("m", NULL, NULL), NULL);
    pbw_node(&gr, "Less", "less", L("m", "zero", NULL), L("neg", NULL, NULL), NULL);
    pbw_node(&gr, "Where", "where", L("neg", "zero", "m"), L("pads", NULL, NULL), NULL);
    pbw_node(&gr, "Pad", "pad", L("x", "pads", NULL), L("y", NULL, NULL), NULL);
    return gr;
}

OT_TEST(pad_with_pads_from_split_concat_max_folds) {
    static const int64_t xd[2] = {2, 3};
    static const float x[6] = {1, 2, 3, 4, 5, 6};
    static const float want[12] = {0, 1, 2, 3, 0, 0, 0, 4, 5, 6, 0, 0};
    static const char* const outs[] = {"y", NULL};
    opara_runtime* rt = new_rt();
    opara_tensor_info shape;
    opara__graph g;
    pbw gr, m;
    const int64_t* pads;
    uint32_t n;
    float y[16];
    REQUIRE(rt);
    gr = tf_pad_graph();
    pbw_value_info(&gr, 11, "x", 1, xd, 2);
    pbw_value_info(&gr, 12, "y", 1, NULL, -1);
    m = pbw_model(8, 13, &gr);
    REQUIRE(import_pbw(rt, &m, NULL, 0, &g) == OPARA_OK);
    CHECK_EQ(g.n_nodes, 1);
    CHECK_EQ(count_op(&g, OPARA__OP_PAD), 1);
    pads = g.n_nodes ? opara__attr_ints(&g.nodes[0], "pads", &n) : NULL;
    CHECK(pads && n == 4 && pads[0] == 0 && pads[1] == 1 && pads[2] == 0 && pads[3] == 2);
    opara__graph_free(&g);
    gr = tf_pad_graph();
    REQUIRE(run_one_node(rt, &gr, 13, 2, xd, x, outs, y, 16, &shape) == OPARA_OK);
    CHECK(shape.rank == 2 && shape.dims[0] == 2 && shape.dims[1] == 6);
    CHECK(memcmp(y, want, sizeof want) == 0);
    opara_runtime_destroy(rt);
}

/* Comparisons, logical operators, the variadic ones and the math ones of constants fold into constants with
   the kernels' values: Greater of f32 with NaN, Not of bools, Mod (the divisor's sign), Sum and Mean of f32 in
   float, Neg of i64, Floor of f32. */
OT_TEST(logic_and_variadic_ops_of_constants_fold) {
    static const int64_t four[1] = {4};
    static const float a[4] = {1.0f, NAN, -2.0f, 0.1f}, b[4] = {0.5f, 0.0f, -2.0f, 0.2f}, c[4] = {0.7f, 1, 1, 0.3f};
    static const int64_t xi[4] = {-7, 7, 5, -4}, zi[4] = {3, -3, -2, 2};
    opara_runtime* rt = new_rt();
    pbw gr = {0, 0, 0}, m;
    opara__graph g;
    static const char* const names[8] = {"gt", "not_gt", "mod", "sum", "mean", "neg", "floor", "x_out"};
    const void* data[7];
    uint32_t k, i;
    REQUIRE(rt);
    pbw_tensor_f32(&gr, 5, "a", four, 1, a);
    pbw_tensor_f32(&gr, 5, "b", four, 1, b);
    pbw_tensor_f32(&gr, 5, "c", four, 1, c);
    pbw_tensor_i64(&gr, 5, "xi", four, 1, xi);
    pbw_tensor_i64(&gr, 5, "zi", four, 1, zi);
    pbw_node(&gr, "Greater", "n0", L("a", "b", NULL), L("gt", NULL, NULL), NULL);
    pbw_node(&gr, "Not", "n1", L("gt", NULL, NULL), L("not_gt", NULL, NULL), NULL);
    pbw_node(&gr, "Mod", "n2", L("xi", "zi", NULL), L("mod", NULL, NULL), NULL);
    pbw_node(&gr, "Sum", "n3", L("a", "b", "c"), L("sum", NULL, NULL), NULL);
    pbw_node(&gr, "Mean", "n4", L("a", "b", "c"), L("mean", NULL, NULL), NULL);
    pbw_node(&gr, "Neg", "n5", L("xi", NULL, NULL), L("neg", NULL, NULL), NULL);
    pbw_node(&gr, "Floor", "n6", L("b", NULL, NULL), L("floor", NULL, NULL), NULL);
    pbw_node(&gr, "Relu", "n7", L("x", NULL, NULL), L("x_out", NULL, NULL), NULL);
    pbw_value_info(&gr, 11, "x", 1, four, 1);
    for (k = 0; k < 8; ++k) pbw_value_info(&gr, 12, names[k], 1, NULL, -1);
    m = pbw_model(8, 13, &gr);
    REQUIRE(import_pbw(rt, &m, NULL, 0, &g) == OPARA_OK);
    CHECK_EQ(g.n_nodes, 1); /* all but the Relu folded */
    for (k = 0; k < 7; ++k) {
        int32_t v = opara__graph_find_value(&g, names[k]);
        REQUIRE(v >= 0 && g.values[v].kind == OPARA__VALUE_CONST);
        data[k] = g.values[v].data;
    }
    for (i = 0; i < 4; ++i) {
        float sum = (a[i] + b[i]) + c[i], mean = sum / 3.0f;
        int64_t r = xi[i] % zi[i];
        if (r != 0 && ((r < 0) != (zi[i] < 0))) r += zi[i];
        CHECK_EQ(((const uint8_t*)data[0])[i], (uint8_t)(a[i] > b[i]));
        CHECK_EQ(((const uint8_t*)data[1])[i], (uint8_t)!(a[i] > b[i]));
        CHECK_EQ(((const int64_t*)data[2])[i], r);
        CHECK(i == 1 ? ((const float*)data[3])[i] != ((const float*)data[3])[i] : memcmp(&((const float*)data[3])[i], &sum, 4) == 0);
        CHECK(i == 1 ? ((const float*)data[4])[i] != ((const float*)data[4])[i] : memcmp(&((const float*)data[4])[i], &mean, 4) == 0);
        CHECK_EQ(((const int64_t*)data[5])[i], -xi[i]);
        CHECK(((const float*)data[6])[i] == floorf(b[i]));
    }
    opara__graph_free(&g);
    opara_runtime_destroy(rt);
}

/* A Split node of x (2 x 7, x[i][j] = 10 i + j) along axis -1 into outs, with num_outputs when
   num > 0 and the constant 'split' input when split != NULL. */
static opara_result run_split(opara_runtime* rt, int64_t opset, int64_t cols, int64_t num, const int64_t* split,
                              const char* const* outs, float* ys, opara_tensor_info* shapes) {
    static const float x[14] = {0, 1, 2, 3, 4, 5, 6, 10, 11, 12, 13, 14, 15, 16};
    float xs[14];
    int64_t xd[2], n = 0, i, j;
    pbw gr = {0, 0, 0}, a = {0, 0, 0};
    while (outs[n]) ++n;
    xd[0] = 2, xd[1] = cols;
    for (i = 0; i < 2; ++i)
        for (j = 0; j < cols; ++j) xs[i * cols + j] = x[i * 7 + j];
    pbw_attr_int(&a, "axis", -1);
    if (num > 0 || !split) pbw_attr_int(&a, "num_outputs", num);
    if (split) pbw_tensor_i64(&gr, 5, "split", &n, 1, split);
    pbw_node(&gr, "Split", "s", split ? L("x", "split", NULL) : L("x", NULL, NULL), outs, &a);
    return run_one_node(rt, &gr, opset, 2, xd, xs, outs, ys, 8, shapes);
}

/* Split-18's num_outputs: chunks of ceil(dim / num_outputs), the last smaller. 7 columns into 3:
   3, 3 and 1; 6 columns into 3: 2 each. */
OT_TEST(split_num_outputs_makes_ceil_sized_chunks) {
    static const float uneven[3][8] = {{0, 1, 2, 10, 11, 12}, {3, 4, 5, 13, 14, 15}, {6, 16}};
    static const float even[3][8] = {{0, 1, 10, 11}, {2, 3, 12, 13}, {4, 5, 14, 15}};
    static const int64_t uneven_cols[3] = {3, 3, 1};
    static const int64_t opsets[2] = {18, 21};
    static const char* const abc[] = {"a", "b", "c", NULL};
    opara_runtime* rt = new_rt();
    size_t t, k, i;
    REQUIRE(rt);
    for (t = 0; t < 2; ++t) {
        float ys[3 * 8];
        opara_tensor_info shapes[3];
        OT_LOG("opset %lld", (long long)opsets[t]);
        REQUIRE(run_split(rt, opsets[t], 7, 3, NULL, abc, ys, shapes) == OPARA_OK);
        for (k = 0; k < 3; ++k) {
            CHECK(shapes[k].rank == 2 && shapes[k].dims[0] == 2 && shapes[k].dims[1] == uneven_cols[k]);
            for (i = 0; i < (size_t)(2 * uneven_cols[k]); ++i) CHECK_NEAR(ys[k * 8 + i], uneven[k][i], 0);
        }
        REQUIRE(run_split(rt, opsets[t], 6, 3, NULL, abc, ys, shapes) == OPARA_OK);
        for (k = 0; k < 3; ++k) {
            CHECK(shapes[k].rank == 2 && shapes[k].dims[0] == 2 && shapes[k].dims[1] == 2);
            for (i = 0; i < 4; ++i) CHECK_NEAR(ys[k * 8 + i], even[k][i], 0);
        }
    }
    opara_runtime_destroy(rt);
}

/* num_outputs that disagrees with the node's outputs, is below 1, leaves an empty last chunk or
   exceeds the dim, or comes with a 'split' input: refused at import, naming the values. */
OT_TEST(split_invalid_num_outputs_is_refused) {
    static const int64_t split[2] = {3, 4};
    static const struct {
        int64_t cols, num;
        const int64_t* split;
        int n_out;
        const char* text;
    } cases[] = {
        {7, 2, NULL, 3, "node 's' (Split): num_outputs 2 but the node has 3 outputs"},
        {7, 0, NULL, 1, "node 's' (Split): num_outputs 0 is below 1"},
        {5, 4, NULL, 4, "num_outputs 4 does not split axis 1 of size 5 into chunks"},
        {2, 3, NULL, 3, "num_outputs 3 does not split axis 1 of size 2 into chunks"},
        {7, 2, split, 2, "node 's' (Split): both the 'split' input and 'num_outputs' are given"},
    };
    static const char* const outs[5] = {"a", "b", "c", "d", NULL};
    opara_runtime* rt = new_rt();
    size_t i;
    REQUIRE(rt);
    for (i = 0; i < OT_COUNT(cases); ++i) {
        float ys[4 * 8];
        opara_tensor_info shapes[4];
        opara_result r = run_split(rt, 18, cases[i].cols, cases[i].num, cases[i].split, outs + 4 - cases[i].n_out, ys, shapes);
        OT_LOG("%s", opara_runtime_last_error(rt));
        CHECK_EQ(r, OPARA_ERR_ONNX_INVALID);
        CHECK(strstr(opara_runtime_last_error(rt), cases[i].text) != NULL);
    }
    opara_runtime_destroy(rt);
}

/* A Resize node of x (1 x 1 x 2 x 2 = 1, 2, 3, 4, or 1 x 1 x 1 x 3 = 0, 3, 6 when wide) with the given
   scales or sizes (constant inputs), axes when n_axes > 0, and string attributes (name, value pairs). */
static opara_result run_resize(opara_runtime* rt, int64_t opset, int wide, const float* scales, const int64_t* sizes,
                               int64_t n, const int64_t* axes, int n_axes, int64_t antialias, const char* const* strs,
                               float* ys, opara_tensor_info* shape) {
    static const float x4[4] = {1, 2, 3, 4}, x3[3] = {0, 3, 6};
    static const int64_t sq[4] = {1, 1, 2, 2}, row[4] = {1, 1, 1, 3};
    static const char* const by_scales[] = {"x", "", "scales", NULL};
    static const char* const by_sizes[] = {"x", "", "", "sizes", NULL};
    static const char* const y[] = {"y", NULL};
    pbw gr = {0, 0, 0}, a = {0, 0, 0};
    if (scales) pbw_tensor_f32(&gr, 5, "scales", &n, 1, scales);
    if (sizes) pbw_tensor_i64(&gr, 5, "sizes", &n, 1, sizes);
    pbw_attr_str(&a, "mode", "linear");
    if (n_axes) pbw_attr_ints(&a, "axes", axes, n_axes);
    if (antialias) pbw_attr_int(&a, "antialias", antialias);
    for (; strs && *strs; strs += 2) pbw_attr_str(&a, strs[0], strs[1]);
    pbw_node(&gr, "Resize", "r", scales ? by_scales : by_sizes, y, &a);
    return run_one_node(rt, &gr, opset, 4, wide ? row : sq, wide ? x3 : x4, y, ys, 16, shape);
}

/* Resize at opsets 18 and 19 with the new attributes at their defaults (or axes naming the resized
   axes) runs as at opset 13: bilinear half_pixel 2x of 1, 2, 3, 4 gives, by hand, rows
   1 1.25 1.75 2 / 1.5 1.75 2.25 2.5 / 2.5 2.75 3.25 3.5 / 3 3.25 3.75 4. */
OT_TEST(resize_18_and_19_run_as_resize_13) {
    static const float expected[16] = {1, 1.25f, 1.75f, 2, 1.5f, 1.75f, 2.25f, 2.5f, 2.5f, 2.75f, 3.25f, 3.5f, 3, 3.25f, 3.75f, 4};
    static const float full[4] = {1, 1, 2, 2}, two[2] = {2, 2};
    static const int64_t sizes[4] = {1, 1, 4, 4}, hw[2] = {4, 4}, axes[2] = {2, -1};
    static const char* const stretch[] = {"keep_aspect_ratio_policy", "stretch", NULL};
    static const int64_t opsets[3] = {13, 18, 19};
    opara_runtime* rt = new_rt();
    size_t t, v, i;
    REQUIRE(rt);
    for (t = 0; t < 3; ++t)
        for (v = 0; v < 4; ++v) {
            float ys[16];
            opara_tensor_info shape;
            opara_result r;
            memset(ys, 0, sizeof ys);
            if (v >= 2 && opsets[t] < 18) continue; /* axes and the policy are Resize-18's */
            OT_LOG("opset %lld variant %u", (long long)opsets[t], (unsigned)v);
            r = v == 0 ? run_resize(rt, opsets[t], 0, full, NULL, 4, NULL, 0, 0, NULL, ys, &shape)
                : v == 1 ? run_resize(rt, opsets[t], 0, NULL, sizes, 4, NULL, 0, 0, NULL, ys, &shape)
                : v == 2 ? run_resize(rt, opsets[t], 0, two, NULL, 2, axes, 2, 0, NULL, ys, &shape)
                         : run_resize(rt, opsets[t], 0, NULL, hw, 2, axes, 2, 0, stretch, ys, &shape);
            if (r != OPARA_OK) OT_LOG("%s", opara_runtime_last_error(rt));
            REQUIRE(r == OPARA_OK);
            CHECK(shape.rank == 4 && shape.dims[0] == 1 && shape.dims[1] == 1 && shape.dims[2] == 4 && shape.dims[3] == 4);
            for (i = 0; i < 16; ++i) CHECK_NEAR(ys[i], expected[i], 1e-6);
        }
    opara_runtime_destroy(rt);
}

/* Resize-19's half_pixel_symmetric, which the CPU kernel implements: 0, 3, 6 scaled by 1.5 gives
   4 columns at input coordinates 0, 2/3, 4/3, 2 (offset 1.5 (1 - 4 / 4.5) = 1/6), by hand 0 2 4 6;
   half_pixel would give 0 1.5 3.5 5.5. */
OT_TEST(resize_19_half_pixel_symmetric_runs) {
    static const float scales[4] = {1, 1, 1, 1.5f};
    static const float expected[4] = {0, 2, 4, 6};
    static const char* const sym[] = {"coordinate_transformation_mode", "half_pixel_symmetric", NULL};
    opara_runtime* rt = new_rt();
    float ys[16];
    opara_tensor_info shape;
    int i;
    REQUIRE(rt);
    REQUIRE(run_resize(rt, 19, 1, scales, NULL, 4, NULL, 0, 0, sym, ys, &shape) == OPARA_OK);
    CHECK(shape.rank == 4 && shape.dims[2] == 1 && shape.dims[3] == 4);
    for (i = 0; i < 4; ++i) CHECK_NEAR(ys[i], expected[i], 1e-5);
    opara_runtime_destroy(rt);
}

/* What Resize-18 added and we do not implement is refused at import, naming the attribute and
   value: antialias=1, and keep_aspect_ratio_policy other than stretch with sizes. Axes that
   repeat or do not match the scales are invalid. */
OT_TEST(resize_18_features_we_lack_are_refused) {
    static const float full[4] = {1, 1, 2, 2}, two[2] = {2, 2};
    static const int64_t hw[2] = {4, 4}, same[2] = {3, -1}, three[3] = {1, 2, 3};
    static const char* const larger[] = {"keep_aspect_ratio_policy", "not_larger", NULL};
    static const char* const smaller[] = {"keep_aspect_ratio_policy", "not_smaller", NULL};
    opara_runtime* rt = new_rt();
    float ys[16];
    opara_tensor_info shape;
    REQUIRE(rt);
    CHECK_EQ(run_resize(rt, 18, 0, full, NULL, 4, NULL, 0, 1, NULL, ys, &shape), OPARA_ERR_UNSUPPORTED_OP);
    CHECK(strstr(opara_runtime_last_error(rt), "node 'r' (Resize): antialias=1 is not supported (only 0)") != NULL);
    CHECK_EQ(run_resize(rt, 19, 0, NULL, hw, 2, three + 1, 2, 0, larger, ys, &shape), OPARA_ERR_UNSUPPORTED_OP);
    CHECK(strstr(opara_runtime_last_error(rt),
                 "node 'r' (Resize): keep_aspect_ratio_policy 'not_larger' is not supported (only 'stretch')") != NULL);
    CHECK_EQ(run_resize(rt, 18, 0, NULL, hw, 2, three + 1, 2, 0, smaller, ys, &shape), OPARA_ERR_UNSUPPORTED_OP);
    CHECK(strstr(opara_runtime_last_error(rt), "keep_aspect_ratio_policy 'not_smaller' is not supported") != NULL);
    CHECK_EQ(run_resize(rt, 18, 0, two, NULL, 2, same, 2, 0, NULL, ys, &shape), OPARA_ERR_ONNX_INVALID);
    CHECK(strstr(opara_runtime_last_error(rt), "node 'r' (Resize): axes[1] = -1 for a rank-4 input") != NULL);
    CHECK_EQ(run_resize(rt, 18, 0, two, NULL, 2, three, 3, 0, NULL, ys, &shape), OPARA_ERR_ONNX_INVALID);
    CHECK(strstr(opara_runtime_last_error(rt), "node 'r' (Resize): 'axes' has 3 values, scales/sizes 2") != NULL);
    opara_runtime_destroy(rt);
}

/* Each row's range is well formed: since <= until, and ONNX's next version (if any) after until. */
OT_TEST(op_table_opset_ranges_are_well_formed) {
    int op;
    for (op = 0; op < OPARA__OP_COUNT; ++op) {
        const opara__op_info* info = opara__op_info_of((opara__op)op);
        if (!(info->since <= info->until && (info->next == 0 || info->next > info->until)))
            OT_LOG("%s: since %d until %d next %d", info->name, info->since, info->until, info->next);
        CHECK(info->since <= info->until);
        CHECK(info->next == 0 || info->next > info->until);
    }
}

static pbw symbolic_model(void) {
    static const int64_t xd[3] = {-1, -1, 4};
    pbw gr = {0, 0, 0};
    pbw_node(&gr, "Relu", "r", L("x", NULL, NULL), L("y", NULL, NULL), NULL);
    pbw_value_info(&gr, 11, "x", 1, xd, 3);
    pbw_value_info(&gr, 12, "y", 1, xd, 3);
    return pbw_model(7, 13, &gr);
}

OT_TEST(symbolic_dims_need_values) {
    opara_runtime* rt = new_rt();
    opara__graph g;
    opara_onnx_options o;
    const char* spec[1];
    pbw m = symbolic_model();
    REQUIRE(rt);
    CHECK_EQ(import_pbw(rt, &m, NULL, 0, &g), OPARA_ERR_SHAPE);
    CHECK(strstr(opara_runtime_last_error(rt), "graph input 'x' dim 1 ('N')") != NULL);
    opara__graph_free(&g);
    memset(&o, 0, sizeof o);
    o.default_dim = 7;
    m = symbolic_model();
    REQUIRE(import_pbw(rt, &m, &o, 0, &g) == OPARA_OK);
    CHECK_EQ(g.values[g.inputs[0]].shape.dims[0], OPARA__DIM_BATCH);
    CHECK_EQ(g.values[g.inputs[0]].shape.dims[1], 7);
    opara__graph_free(&g);
    memset(&o, 0, sizeof o);
    spec[0] = "x=N,5,4";
    o.input_shapes = spec;
    o.n_input_shapes = 1;
    m = symbolic_model();
    REQUIRE(import_pbw(rt, &m, &o, 0, &g) == OPARA_OK);
    CHECK_EQ(g.values[g.inputs[0]].shape.dims[1], 5);
    opara__graph_free(&g);
    spec[0] = "nope=1,2";
    m = symbolic_model();
    CHECK_EQ(import_pbw(rt, &m, &o, 0, &g), OPARA_ERR_NOT_FOUND);
    opara__graph_free(&g);
    opara_runtime_destroy(rt);
}

static pbw external_model_dims(const char* location, int64_t dim) {
    static const int64_t xd[1] = {2};
    pbw gr = {0, 0, 0}, t = {0, 0, 0}, kv = {0, 0, 0};
    pbw_int(&t, 1, dim);
    pbw_int(&t, 2, 1);
    pbw_str(&t, 8, "W");
    pbw_str(&kv, 1, "location");
    pbw_str(&kv, 2, location);
    pbw_msg(&t, 13, &kv);
    pbw_int(&t, 14, 1);
    pbw_msg(&gr, 5, &t);
    pbw_node(&gr, "Add", "add", L("x", "W", NULL), L("y", NULL, NULL), NULL);
    pbw_value_info(&gr, 11, "x", 1, xd, 1);
    pbw_value_info(&gr, 12, "y", 1, xd, 1);
    return pbw_model(7, 13, &gr);
}

static pbw external_model(const char* location) { return external_model_dims(location, 2); }

static size_t largest_alloc;
static void* record_alloc(size_t size, size_t alignment, void* user) {
    (void)user;
    if (size > largest_alloc) largest_alloc = size;
    if (size > ((size_t)1 << 32)) return NULL;
    return ot_aligned_alloc(size, alignment);
}
static void record_free(void* p, void* user) {
    (void)user;
    ot_aligned_free(p);
}

/* An external tensor whose data cannot be read (no directory, a missing file) is refused before its
   bytes are allocated: a 4 TB claim in a 100-byte model is an external-data error, not an attempt to
   allocate 4 TB (a fuzz finding: ASan aborts on such a malloc). */
OT_TEST(unreadable_external_data_is_refused_before_allocating) {
    opara_runtime_desc rd;
    opara_runtime* rt = NULL;
    opara_onnx_options o;
    opara__graph g;
    pbw m;
    memset(&rd, 0, sizeof rd);
    rd.allocator.alloc_fn = record_alloc;
    rd.allocator.free_fn = record_free;
    REQUIRE(opara_runtime_create(&rd, &rt) == OPARA_OK);
    memset(&o, 0, sizeof o);
    largest_alloc = 0;
    m = external_model_dims("w.bin", (int64_t)1 << 40);
    CHECK_EQ(import_pbw(rt, &m, NULL, 0, &g), OPARA_ERR_EXTERNAL_DATA);
    opara__graph_free(&g);
    o.external_data_dir = "/nonexistent-dir";
    m = external_model_dims("w.bin", (int64_t)1 << 40);
    CHECK_EQ(import_pbw(rt, &m, &o, 0, &g), OPARA_ERR_EXTERNAL_DATA);
    CHECK(strstr(opara_runtime_last_error(rt), "cannot open external data") != NULL);
    opara__graph_free(&g);
    CHECK(largest_alloc < ((size_t)1 << 30));
    opara_runtime_destroy(rt);
}

OT_TEST(external_data_stays_inside_the_model_directory) {
    static const char* const bad[] = {"../w.bin", "/etc/passwd", "a/../../w.bin", "..\\w.bin"};
    opara_runtime* rt = new_rt();
    opara_onnx_options o;
    opara__graph g;
    char dir[] = "/tmp/opara_onnx_XXXXXX", path[256];
    const float w[2] = {1.5f, -2};
    FILE* f;
    pbw m;
    size_t i;
    REQUIRE(rt);
    memset(&o, 0, sizeof o);
    o.external_data_dir = "/tmp";
    for (i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        m = external_model(bad[i]);
        CHECK_EQ(import_pbw(rt, &m, &o, 0, &g), OPARA_ERR_EXTERNAL_DATA);
        opara__graph_free(&g);
    }
    m = external_model("w.bin");
    CHECK_EQ(import_pbw(rt, &m, NULL, 0, &g), OPARA_ERR_EXTERNAL_DATA); /* memory import, no directory */
    opara__graph_free(&g);
    REQUIRE(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/w.bin", dir);
    f = fopen(path, "wb");
    REQUIRE(f);
    fwrite(w, 4, 2, f);
    fclose(f);
    o.external_data_dir = dir;
    m = external_model("w.bin");
    CHECK_EQ(import_pbw(rt, &m, &o, 0, &g), OPARA_OK);
    if (g.n_nodes == 1) {
        const opara__value* wv = &g.values[g.nodes[0].inputs[1]];
        CHECK_NEAR(((const float*)wv->data)[0], 1.5, 0);
        CHECK_NEAR(((const float*)wv->data)[1], -2, 0);
    }
    opara__graph_free(&g);
    remove(path);
    rmdir(dir);
    opara_runtime_destroy(rt);
}

OT_TEST(public_api_builds_a_valid_model) {
    opara_runtime* rt = new_rt();
    opara_model* model = NULL;
    pbw m = conv_bn_relu_model();
    REQUIRE(rt);
    CHECK_EQ(opara_model_load_onnx_memory(rt, m.d, m.n, NULL, &model), OPARA_OK);
    if (model) {
        CHECK_EQ(opara_model_node_count(model), 1);
        CHECK_STR(opara_model_node_op(model, 0), "Conv");
    }
    opara_model_destroy(model);
    free(m.d);
    CHECK_EQ(opara_model_load_onnx_memory(rt, "\x0b", 1, NULL, &model), OPARA_ERR_ONNX_DECODE);
    CHECK(model == NULL);
    opara_runtime_destroy(rt);
}

/* ---- ONNX node test models -------------------------------------------------------------------- */

/* What the importer makes of the operators whose ONNX form differs from the IR's: Upsample as an
   asymmetric/floor Resize with its scales input as the attribute, MaxUnpool's output_shape input as
   the attribute, Dropout's mask and MaxPool's Indices typed bool and i64, PRelu-6's per-channel
   slope as a [C, 1, 1] constant. */
OT_TEST(norm_family_imports_in_canonical_form) {
    opara_runtime* rt = new_rt();
    opara__graph g;
    const opara__value* slope;
    const opara__attr* a;
    uint32_t n;
    const int64_t* v;
    const float* f;
    static const int64_t xd[4] = {1, 1, 2, 2}, four[1] = {4}, scales[4] = {1, 1, 2, 3}, os[4] = {1, 1, 5, 5};
    pbw gr = {0, 0, 0}, gu = {0, 0, 0}, at = {0, 0, 0}, m;
    REQUIRE(rt);
    /* Upsample-9 with an (integer) scales initializer, MaxUnpool-11 with output_shape */
    pbw_tensor_i64(&gr, 5, "scales", four, 1, scales);
    pbw_node(&gr, "Upsample", "up", L("x", "scales", NULL), L("y", NULL, NULL), NULL);
    pbw_value_info(&gr, 11, "x", 1, xd, 4);
    pbw_value_info(&gr, 12, "y", 1, NULL, -1);
    m = pbw_model(7, 9, &gr);
    REQUIRE(import_pbw(rt, &m, NULL, 0, &g) == OPARA_OK);
    CHECK_EQ(g.nodes[0].op, OPARA__OP_RESIZE);
    a = opara__node_attr(&g.nodes[0], "scales");
    f = a && a->type == OPARA__ATTR_FLOATS ? a->v.floats : NULL;
    CHECK(f && a->count == 4 && f[2] == 2.0f && f[3] == 3.0f);
    CHECK_STR(opara__attr_string(&g.nodes[0], "coordinate_transformation_mode", ""), "asymmetric");
    CHECK_STR(opara__attr_string(&g.nodes[0], "nearest_mode", ""), "floor");
    opara__graph_free(&g);
    pbw_tensor_i64(&gu, 5, "os", four, 1, os);
    pbw_tensor_i64(&gu, 5, "idx", xd, 4, scales);
    pbw_attr_ints(&at, "kernel_shape", xd + 2, 2);
    pbw_node(&gu, "MaxUnpool", "un", L("x", "idx", "os"), L("y", NULL, NULL), &at);
    pbw_value_info(&gu, 11, "x", 1, xd, 4);
    pbw_value_info(&gu, 12, "y", 1, NULL, -1);
    m = pbw_model(7, 11, &gu);
    REQUIRE(import_pbw(rt, &m, NULL, 0, &g) == OPARA_OK);
    CHECK(g.nodes[0].op == OPARA__OP_MAX_UNPOOL && g.nodes[0].n_inputs == 2);
    v = opara__attr_ints(&g.nodes[0], "output_shape", &n);
    CHECK(v && n == 4 && v[2] == 5 && v[3] == 5);
    opara__graph_free(&g);
    if (!have_data()) {
        opara_runtime_destroy(rt);
        SKIP("%s not installed (make onnx-testdata)", DATA);
    }
    REQUIRE(opara__onnx_import_file(rt, DATA "/node/test_dropout_default_mask/model.onnx", NULL, NULL, &g) == OPARA_OK);
    CHECK(g.n_nodes == 1 && g.nodes[0].n_outputs == 2 && g.values[g.nodes[0].outputs[1]].dtype == OPARA_DTYPE_BOOL);
    opara__graph_free(&g);
    REQUIRE(opara__onnx_import_file(rt, DATA "/node/test_maxpool_with_argmax_2d_precomputed_strides/model.onnx", NULL, NULL,
                                    &g) == OPARA_OK);
    CHECK(g.n_nodes == 1 && g.nodes[0].n_outputs == 2 && g.values[g.nodes[0].outputs[1]].dtype == OPARA_DTYPE_I64);
    opara__graph_free(&g);
    REQUIRE(opara__onnx_import_file(rt, DATA "/pytorch-converted/test_PReLU_2d_multiparam/model.onnx", NULL, NULL, &g) ==
            OPARA_OK);
    slope = &g.values[g.nodes[0].inputs[1]];
    CHECK(slope->kind == OPARA__VALUE_CONST && slope->shape.ndim == 3 && slope->shape.dims[0] == 3 &&
          slope->shape.dims[1] == 1 && slope->shape.dims[2] == 1);
    opara__graph_free(&g);
    opara_runtime_destroy(rt);
}

OT_TEST(node_test_models_structure) {
    static const struct {
        const char* test;
        opara__op op;
        uint32_t n_inputs;
    } cases[] = {
        {"test_conv_with_strides_padding", OPARA__OP_CONV, 2}, {"test_relu", OPARA__OP_RELU, 1},
        {"test_gemm_default_no_bias", OPARA__OP_GEMM, 2}, {"test_softmax_axis_0", OPARA__OP_SOFTMAX, 1},
        {"test_maxpool_2d_pads", OPARA__OP_MAX_POOL, 1}, {"test_layer_normalization_4d_axis1", OPARA__OP_LAYER_NORM, 3},
        {"test_batchnorm_example", OPARA__OP_BATCH_NORM, 5}, {"test_concat_3d_axis_negative_2", OPARA__OP_CONCAT, 2},
        {"test_matmul_4d", OPARA__OP_MATMUL, 2}, {"test_where_example", OPARA__OP_WHERE, 3},
        {"test_prelu_broadcast", OPARA__OP_PRELU, 2}, {"test_instancenorm_example", OPARA__OP_INSTANCE_NORM, 3},
        {"test_lrn", OPARA__OP_LRN, 1}, {"test_mvn", OPARA__OP_MVN, 1}, {"test_shrink_soft", OPARA__OP_SHRINK, 1},
        {"test_globalmaxpool", OPARA__OP_GLOBAL_MAX_POOL, 1},
        {"test_maxunpool_export_without_output_shape", OPARA__OP_MAX_UNPOOL, 2},
        {"test_maxpool_with_argmax_2d_precomputed_pads", OPARA__OP_MAX_POOL, 1},
        {"test_dropout_default_mask", OPARA__OP_DROPOUT, 1},
    };
    opara_runtime* rt = new_rt();
    size_t i;
    if (!have_data()) SKIP("%s not installed (make onnx-testdata)", DATA);
    REQUIRE(rt);
    for (i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        char path[512];
        opara__graph g;
        snprintf(path, sizeof path, DATA "/node/%s/model.onnx", cases[i].test);
        OT_LOG("%s", cases[i].test);
        if (opara__onnx_import_file(rt, path, NULL, NULL, &g) != OPARA_OK) {
            CHECK_STR(opara_runtime_last_error(rt), "");
        } else {
            CHECK_EQ(g.n_nodes, 1);
            if (g.n_nodes) {
                CHECK_EQ(g.nodes[0].op, cases[i].op);
                CHECK_EQ(g.nodes[0].n_inputs, cases[i].n_inputs);
            }
        }
        opara__graph_free(&g);
    }
    {
        char path[] = DATA "/node/test_conv_with_strides_padding/model.onnx";
        opara__graph g;
        uint32_t n;
        const int64_t* v;
        REQUIRE(opara__onnx_import_file(rt, path, NULL, NULL, &g) == OPARA_OK);
        v = opara__attr_ints(&g.nodes[0], "pads", &n);
        CHECK(v && n == 4 && v[0] == 1 && v[3] == 1);
        v = opara__attr_ints(&g.nodes[0], "strides", &n);
        CHECK(v && n == 2 && v[0] == 2);
        opara__graph_free(&g);
    }
    opara_runtime_destroy(rt);
}

/* ---- coverage of the test data ---------------------------------------------------------------- */

typedef struct coverage {
    int converted, frozen, unsupported, other;
    char ops[128][64];
    int op_count[128];
    int n_ops;
} coverage;

static void note_unsupported(coverage* c, const char* path, opara_runtime* rt) {
    opara__pool pool;
    opara__onnx_model m;
    uint8_t* data;
    size_t size;
    uint32_t i;
    int k;
    memset(&pool, 0, sizeof pool);
    if (opara__onnx_read_file(rt, path, &data, &size) != OPARA_OK) return;
    if (opara__onnx_decode_model(rt, &pool, data, size, &m) == OPARA_OK)
        for (i = 0; i < m.graph.n_nodes; ++i) {
            char label[64];
            if (opara__node_supported(&m.graph.nodes[i], opara__default_opset(&m))) continue;
            opara__unsupported_label(&m.graph.nodes[i], opara__default_opset(&m), label, sizeof label);
            for (k = 0; k < c->n_ops && strcmp(c->ops[k], label) != 0; ++k) {}
            if (k == c->n_ops && c->n_ops < 128) strcpy(c->ops[c->n_ops++], label);
            if (k < 128) c->op_count[k]++;
        }
    opara__pool_free(rt, &pool);
    opara__free(rt, data);
}

/* Imports with graph inputs 1.. frozen to their test values (node tests pass parameters as inputs). */
static opara_result import_frozen(opara_runtime* rt, const char* dir, opara__graph* g) {
    opara__tensor_data frozen[8];
    opara__onnx_extra extra;
    char path[1200];
    uint32_t n = 0, i;
    opara_result r;
    for (i = 1; i < 9; ++i) {
        snprintf(path, sizeof path, "%s/test_data_set_0/input_%u.pb", dir, i);
        if (access(path, R_OK) != 0 || opara__onnx_read_tensor_file(rt, path, &frozen[n]) != OPARA_OK) break;
        n++;
    }
    memset(&extra, 0, sizeof extra);
    extra.frozen = frozen;
    extra.n_frozen = n;
    snprintf(path, sizeof path, "%s/model.onnx", dir);
    r = opara__onnx_import_file(rt, path, NULL, &extra, g);
    for (i = 0; i < n; ++i) opara__tensor_data_free(rt, &frozen[i]);
    return r;
}

static void cover_dir(opara_test* T, opara_runtime* rt, const char* category, coverage* c) {
    char dir[512], path[1200];
    DIR* d;
    struct dirent* e;
    snprintf(dir, sizeof dir, DATA "/%s", category);
    d = opendir(dir);
    if (!d) return;
    while ((e = readdir(d)) != NULL) {
        opara__graph g;
        opara_result r;
        char sub[1000];
        if (strncmp(e->d_name, "test_", 5) != 0) continue;
        snprintf(sub, sizeof sub, "%s/%s", dir, e->d_name);
        snprintf(path, sizeof path, "%s/model.onnx", sub);
        r = opara__onnx_import_file(rt, path, NULL, NULL, &g);
        opara__graph_free(&g);
        if (r == OPARA_OK) {
            c->converted++;
            continue;
        }
        if (r == OPARA_ERR_UNSUPPORTED_OP && strstr(opara_runtime_last_error(rt), "must be a constant")) {
            r = import_frozen(rt, sub, &g);
            opara__graph_free(&g);
            if (r == OPARA_OK) {
                c->frozen++;
                continue;
            }
        }
        if (r == OPARA_ERR_UNSUPPORTED_OP) {
            c->unsupported++;
            note_unsupported(c, path, rt);
        } else if (r == OPARA_ERR_UNSUPPORTED || r == OPARA_ERR_BAD_DTYPE) {
            c->other++;
        } else {
            ot__fail_at(T, __FILE__, __LINE__, "%s/%s: %s: %s", category, e->d_name, opara_result_string(r),
                        opara_runtime_last_error(rt));
        }
    }
    closedir(d);
}

OT_TEST(testdata_conversion_coverage) {
    static const char* const categories[] = {"node", "pytorch-converted", "pytorch-operator"};
    opara_runtime* rt = new_rt();
    size_t i;
    if (!have_data()) SKIP("%s not installed (make onnx-testdata)", DATA);
    REQUIRE(rt);
    for (i = 0; i < 3; ++i) {
        coverage c;
        int k;
        memset(&c, 0, sizeof c);
        cover_dir(T, rt, categories[i], &c);
        printf("coverage %s: %d converted, %d converted with parameter inputs frozen, %d unsupported operators, "
               "%d unsupported types or features\n", categories[i], c.converted, c.frozen, c.unsupported, c.other);
        printf("coverage %s unsupported operator types:", categories[i]);
        for (k = 0; k < c.n_ops; ++k) printf(" %s(%d)", c.ops[k], c.op_count[k]);
        printf("\n");
    }
    opara_runtime_destroy(rt);
}

/* The converted model written, loaded back and written again gives the same bytes. */
static void check_save_load_save_identical(opara_test* T, opara_runtime* rt, const opara_model* model) {
    opara__bytes first, second;
    opara_model* reloaded = NULL;
    memset(&first, 0, sizeof first);
    memset(&second, 0, sizeof second);
    REQUIRE(opara__format_write(rt, opara__model_graph(model), 0, &first) == OPARA_OK);
    if (opara_model_load_memory(rt, first.data, first.size, &reloaded) == OPARA_OK &&
        opara__format_write(rt, opara__model_graph(reloaded), 0, &second) == OPARA_OK) {
        CHECK_EQ(second.size, first.size);
        CHECK(second.size == first.size && memcmp(first.data, second.data, first.size) == 0);
    } else {
        CHECK_STR(opara_runtime_last_error(rt), "");
    }
    opara_model_destroy(reloaded);
    opara__free(rt, first.data);
    opara__free(rt, second.data);
}

OT_TEST(zoo_models_convert_with_expected_node_counts) {
    FILE* f = fopen("build/onnx/zoo_expected.txt", "r");
    opara_runtime* rt = new_rt();
    char line[256];
    int models = 0;
    if (!f) SKIP("build/onnx/zoo_expected.txt missing (needs python3-onnx)");
    REQUIRE(rt);
    while (fgets(line, sizeof line, f)) {
        char name[128], path[300];
        int onnx_nodes, expected;
        opara_onnx_options o;
        opara_model* model = NULL;
        opara_result r;
        if (sscanf(line, "%127s %d %d", name, &onnx_nodes, &expected) != 3) continue;
        snprintf(path, sizeof path, "build/zoo/%s.onnx", name);
        memset(&o, 0, sizeof o);
        o.default_dim = 640; /* ppocr_det's symbolic image height and width */
        r = opara_model_load_onnx_file(rt, path, &o, &model);
        OT_LOG("%s", name);
        if (r != OPARA_OK) {
            CHECK_STR(opara_runtime_last_error(rt), "");
        } else {
            printf("zoo %s: %d ONNX nodes -> %u (expected %d)\n", name, onnx_nodes, opara_model_node_count(model), expected);
            CHECK_EQ(opara_model_node_count(model), expected);
            check_save_load_save_identical(T, rt, model);
        }
        opara_model_destroy(model);
        models++;
        T->log_len = 0;
        T->log[0] = 0;
    }
    fclose(f);
    opara_runtime_destroy(rt);
    if (!models) SKIP("no zoo models in build/zoo (make zoo)");
}

/* The fuzz seed corpus holds past fuzzer findings (regression_*.bin): each must fail or import cleanly. */
OT_TEST(fuzz_corpus_imports_or_fails_cleanly) {
    DIR* d = opendir("tests/fuzz/corpus_onnx");
    struct dirent* e;
    opara_runtime* rt = new_rt();
    int files = 0;
    if (!d) SKIP("tests/fuzz/corpus_onnx not found (run from the repository root)");
    REQUIRE(rt);
    while ((e = readdir(d)) != NULL) {
        char path[512];
        uint8_t* data;
        size_t size;
        opara_model* model = NULL;
        opara__tensor_data t;
        opara_onnx_options o;
        if (e->d_name[0] == '.') continue;
        snprintf(path, sizeof path, "tests/fuzz/corpus_onnx/%.200s", e->d_name);
        if (opara__onnx_read_file(rt, path, &data, &size) != OPARA_OK) continue;
        memset(&o, 0, sizeof o);
        o.default_dim = 3;
        if (opara_model_load_onnx_memory(rt, data, size, &o, &model) == OPARA_OK) opara_model_destroy(model);
        else CHECK(opara_runtime_last_error(rt)[0] != 0);
        if (opara__onnx_read_tensor(rt, data, size, &t) == OPARA_OK) opara__tensor_data_free(rt, &t);
        opara__free(rt, data);
        files++;
    }
    closedir(d);
    CHECK(files > 10);
    opara_runtime_destroy(rt);
}

static const opara_test_case tests[] = {
    OT_CASE(fuzz_corpus_imports_or_fails_cleanly),
    OT_CASE(conv_test_data_matches_spec), OT_CASE(tensor_files_match_numpy_helper),
    OT_CASE(conv_bn_relu_before_and_after_fusion), OT_CASE(relu_not_fused_when_conv_output_is_shared),
    OT_CASE(gelu_chains_fuse_into_one_gelu), OT_CASE(gelu_near_misses_stay_unfused),
    OT_CASE(activations_fuse_into_the_binary_operator_before_them), OT_CASE(a_gelu_chain_after_a_bias_add_fuses_into_the_add),
    OT_CASE(activations_stay_separate_when_the_fusion_does_not_apply),
    OT_CASE(identity_and_dropout_disappear_output_keeps_name), OT_CASE(shape_chain_folds_to_batch_reshape),
    OT_CASE(folded_float_pow_matches_the_kernel_bit_for_bit), OT_CASE(folded_slices_follow_the_shape_engine),
    OT_CASE(unsorted_nodes_and_ir3_initializer_inputs), OT_CASE(clip_and_slice_opset_variants),
    OT_CASE(unsupported_ops_are_listed_in_one_error), OT_CASE(unsupported_ops_in_subgraphs_are_listed_too),
    OT_CASE(subgraphs_nested_too_deep_are_refused), OT_CASE(if_with_a_known_condition_is_folded_to_its_branch),
    OT_CASE(topk_opset_variants), OT_CASE(ops_newer_than_the_model_opset_are_refused),
    OT_CASE(ops_changed_after_our_version_are_refused), OT_CASE(type_only_version_bumps_still_import),
    OT_CASE(f16_model_keeps_f16_io_and_computes_in_f32),
    OT_CASE(op_table_opset_ranges_are_well_formed), OT_CASE(pad_axes_input_becomes_the_axes_attribute),
    OT_CASE(trilu_tile_one_hot_inputs_become_attributes),
    OT_CASE(size_folds_when_the_shape_is_known_and_runs_otherwise),
    OT_CASE(reduction_axes_attribute_or_input_and_cum_sum_axis), OT_CASE(split_num_outputs_makes_ceil_sized_chunks),
    OT_CASE(rnn_activations_and_an_omitted_output_import), OT_CASE(rnn_zero_initial_state_of_symbolic_batch_imports),
    OT_CASE(split_invalid_num_outputs_is_refused), OT_CASE(pad_with_pads_from_split_concat_max_folds),
    OT_CASE(logic_and_variadic_ops_of_constants_fold),
    OT_CASE(resize_18_and_19_run_as_resize_13), OT_CASE(resize_19_half_pixel_symmetric_runs),
    OT_CASE(resize_18_features_we_lack_are_refused),
    OT_CASE(symbolic_dims_need_values),
    OT_CASE(external_data_stays_inside_the_model_directory), OT_CASE(unreadable_external_data_is_refused_before_allocating), OT_CASE(public_api_builds_a_valid_model),
    OT_CASE(node_test_models_structure),
    OT_CASE(norm_family_imports_in_canonical_form), OT_CASE(testdata_conversion_coverage),
    OT_CASE(zoo_models_convert_with_expected_node_counts),
};

int main(int argc, char** argv) { return opara_test_main(argc, argv, tests, OT_COUNT(tests)); }
