/* Every operator of the op table (src/ir/opara_ir.h, OPARA__OPS) on every backend other than the CPU
   (today CUDA: the emulator tests/cudaemu, or a real GPU with OPARA_CUDA_DRIVER / OPARA_CUBLAS /
   OPARA_CUDNN) against the CPU backend, in three shape variants each: 0 plain (batch 1), 1 odd sizes,
   2 batch > 1 (with broadcasting where the operator has it). Each case is a one-node model made with
   the public builder, run with the same random inputs on both backends; outputs must agree within
   the case's tolerance (exactly for copies and integers). The CPU itself is proven against ONNX's
   test data elsewhere (make conformance); this test proves the backends agree.

   How to add an operator: after its table row and kernels (docs/ADDING-AN-OPERATOR.md), write a
   case builder below (`static void case_xxx(op_case* c)`: inputs with input(), constants with
   weights()/ints(), the node with node()) and add {"OnnxName", case_xxx} to `cases`. The test walks
   the table's X-macro, so an operator without a case fails here, naming it. */
#define _GNU_SOURCE
#define OPARA_IMPLEMENTATION
#include "opara.h"
#include "opara_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_test_env.h"
#include "builder_attrs.h"

#define MAX_INPUTS 4
#define N_VARIANTS 3

typedef struct case_input {
    const char* name;
    opara_dtype dtype;
    int32_t rank;
    int64_t dims[5]; /* up to 5 dims (the CUDA walk cases) */
    double lo, hi; /* uniform random values in [lo, hi] (integers: rounded; bool: 0/1) */
    int specials;  /* f32: every 7th value one of SPECIALS instead */
} case_input;

/* The values an element-wise operator must agree on at the edges: NaN, the infinities, signed zeros,
   halves (ties of Round) and the ends of the inverse trigonometric functions' domains. */
static const float SPECIALS[] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 0.5f, -1.5f, 2.5f, 1.0f, -1.0f};

typedef struct op_case {
    const char* op;
    int v; /* the shape variant, 0 .. N_VARIANTS - 1 */
    opara_builder* b;
    unsigned rng;
    uint32_t n_inputs;
    case_input in[MAX_INPUTS];
    double atol, rtol; /* |cuda - cpu| <= atol + rtol * |cpu| */
    const char* cuda_refuses; /* a documented CUDA limitation: its session must fail saying this */
} op_case;

typedef void (*case_fn)(op_case* c);

static double rnd(op_case* c, double lo, double hi) {
    c->rng = c->rng * 1664525u + 1013904223u;
    return lo + (hi - lo) * (double)(c->rng >> 8) / (double)(1u << 24);
}

static int64_t numel(int32_t rank, const int64_t* dims) {
    int64_t n = 1;
    int32_t i;
    for (i = 0; i < rank; ++i) n *= dims[i];
    return n;
}

/* ---- what case builders use ------------------------------------------------------------------- */

static void input(op_case* c, const char* name, opara_dtype dtype, int32_t rank, const int64_t* dims, double lo,
                  double hi) {
    case_input* x = &c->in[c->n_inputs++];
    x->name = name;
    x->dtype = dtype;
    x->rank = rank;
    memcpy(x->dims, dims, (size_t)rank * sizeof *dims);
    x->lo = lo;
    x->hi = hi;
    opara_builder_add_input(c->b, name, dtype, rank, dims);
}

static void input_f32(op_case* c, const char* name, int32_t rank, const int64_t* dims) {
    input(c, name, OPARA_DTYPE_F32, rank, dims, -2.0, 2.0);
}

/* A random f32 constant in [lo, hi]. */
static void weights(op_case* c, const char* name, int32_t rank, const int64_t* dims, double lo, double hi) {
    int64_t n = numel(rank, dims), i;
    float* w = (float*)malloc((size_t)n * sizeof *w + 1);
    for (i = 0; i < n; ++i) w[i] = (float)rnd(c, lo, hi);
    opara_builder_add_constant(c->b, name, OPARA_DTYPE_F32, rank, dims, w, (size_t)n * sizeof *w);
    free(w);
}

static void ints(op_case* c, const char* name, int32_t rank, const int64_t* dims, const int64_t* values) {
    opara_builder_add_constant(c->b, name, OPARA_DTYPE_I64, rank, dims, values, (size_t)numel(rank, dims) * 8);
}

/* A random constant of an integer type (u8, i8, i32) with values in [lo, hi], or f32 (weights()). */
static void int_weights(op_case* c, const char* name, opara_dtype dt, int32_t rank, const int64_t* dims, double lo, double hi) {
    int64_t n = numel(rank, dims), i;
    size_t size = opara_dtype_size(dt);
    uint8_t* w = (uint8_t*)malloc((size_t)n * size + 1);
    for (i = 0; i < n; ++i) {
        int32_t v = (int32_t)floor(rnd(c, lo, hi) + 0.5);
        if (dt == OPARA_DTYPE_I32) memcpy(w + i * 4, &v, 4);
        else w[i] = (uint8_t)(dt == OPARA_DTYPE_I8 ? (uint8_t)(int8_t)v : (uint8_t)v);
    }
    opara_builder_add_constant(c->b, name, dt, rank, dims, w, (size_t)n * size);
    free(w);
}

/* The case's node: inputs by name (NULL-terminated list), outputs y (and y2, y3 when n_out is 2, 3). */
static void node(op_case* c, const char* const* ins, uint32_t n_out, uint32_t n_attrs, const opara_attr* attrs) {
    static const char* const outs[3] = {"y", "y2", "y3"};
    uint32_t n_in = 0, i;
    while (ins[n_in]) ++n_in;
    opara_builder_add_node(c->b, c->op, "the_op", n_in, ins, n_out, outs, n_attrs, attrs);
    for (i = 0; i < n_out; ++i) opara_builder_add_output(c->b, outs[i]);
}

static const char* const IN_X[] = {"x", NULL};
static const char* const IN_XW[] = {"x", "w", NULL};
static const char* const IN_XY[] = {"x", "x2", NULL};

/* The 4-D activation of each variant: plain, odd sizes, batch 3. */
static const int64_t X4[N_VARIANTS][4] = {{1, 4, 6, 6}, {1, 3, 7, 5}, {3, 4, 5, 5}};

static void x4(op_case* c) { input_f32(c, "x", 4, X4[c->v]); }

/* ---- the cases ---------------------------------------------------------------------------------- */

static void case_conv(op_case* c) {
    static const int64_t strides[N_VARIANTS][2] = {{1, 1}, {2, 1}, {1, 1}}, pads[4] = {1, 0, 1, 2};
    static const int64_t dil[2] = {1, 2};
    int64_t cin = X4[c->v][1], group = c->v == 2 ? cin : 1, w[4], b[1];
    opara_attr a[4];
    const char* ins[4] = {"x", "w", "b", NULL};
    w[0] = c->v == 2 ? cin * 2 : 5, w[1] = cin / group, w[2] = 3, w[3] = 3;
    b[0] = w[0];
    x4(c);
    weights(c, "w", 4, w, -1, 1);
    weights(c, "b", 1, b, -1, 1);
    a[0] = attr_ints("strides", strides[c->v], 2);
    a[1] = attr_ints("pads", pads, 4);
    a[2] = attr_int("group", group);
    a[3] = attr_ints("dilations", dil, 2);
    c->atol = c->rtol = 1e-4;
    node(c, ins, 1, c->v == 1 ? 4 : 3, a);
}

static void case_conv_transpose(op_case* c) {
    static const int64_t strides[2] = {2, 2}, pads[4] = {1, 0, 1, 0}, out_pad[2] = {1, 0};
    int64_t w[4];
    opara_attr a[3];
    const char* ins[4] = {"x", "w", "b", NULL};
    int64_t b[1] = {3};
    w[0] = X4[c->v][1], w[1] = 3, w[2] = 3, w[3] = 3;
    x4(c);
    weights(c, "w", 4, w, -1, 1);
    weights(c, "b", 1, b, -1, 1);
    a[0] = attr_ints("strides", strides, 2);
    a[1] = attr_ints("pads", pads, 4);
    a[2] = attr_ints("output_padding", out_pad, 2);
    c->atol = c->rtol = 1e-4;
    node(c, c->v == 0 ? IN_XW : ins, 1, c->v == 0 ? 1 : 3, a);
}

/* The quantized operators (the integer convolution and product are CPU only: the CUDA session refuses
   them, docs/CUDA-BACKEND.md). Variant 0
   u8 per tensor, 1 i8 per axis / channel / row, 2 batch > 1 with the optional inputs left out or the
   other dtypes. */
#define QUANT_CPU_ONLY "operator not supported by the CUDA backend"

static void case_quantize(op_case* c) {
    static const char* const ins[N_VARIANTS][4] = {{"x", "s", "z", NULL}, {"x", "s", "z", NULL}, {"x", "s", NULL}};
    static const int64_t one[1] = {1}, per[1] = {7};
    opara_attr a[1];
    input(c, "x", OPARA_DTYPE_F32, 4, X4[c->v], -300.0, 300.0);
    c->in[0].specials = 1; /* NaN gives the zero point, the infinities saturate */
    weights(c, "s", 1, c->v == 1 ? per : one, 0.5, 2.0);
    if (c->v < 2) int_weights(c, "z", c->v == 1 ? OPARA_DTYPE_I8 : OPARA_DTYPE_U8, 1, c->v == 1 ? per : one, -20, 40);
    a[0] = attr_int("axis", -2); /* variant 1: the 7 of [1, 3, 7, 5] */
    node(c, ins[c->v], 1, c->v == 1 ? 1 : 0, a);
}

static void case_dequantize(op_case* c) {
    static const opara_dtype dt[N_VARIANTS] = {OPARA_DTYPE_U8, OPARA_DTYPE_I8, OPARA_DTYPE_I32};
    static const char* const ins[4] = {"x", "s", "z", NULL};
    static const int64_t one[1] = {1}, per[1] = {3};
    input(c, "x", dt[c->v], 4, X4[c->v], c->v == 0 ? 0 : -128, c->v == 2 ? 100000 : c->v == 0 ? 255 : 127);
    weights(c, "s", 1, c->v == 1 ? per : one, 0.01, 2.0);
    int_weights(c, "z", dt[c->v], 1, c->v == 1 ? per : one, c->v == 0 ? 0 : -20, c->v == 2 ? 0 : 40);
    node(c, ins, 1, 0, NULL); /* axis 1 by default: the 3 of [1, 3, 7, 5] */
}

static void case_dynamic_quantize(op_case* c) {
    input(c, "x", OPARA_DTYPE_F32, 4, X4[c->v], c->v == 2 ? 0.5 : -3.0, 3.0); /* variant 2: min above 0 */
    node(c, IN_X, 3, 0, NULL);
}

/* ConvInteger (x, w, x_zero_point, w_zero_point) or QLinearConv (x, x_scale, x_zero_point, w, w_scale,
   w_zero_point, y_scale, y_zero_point, B). */
static void case_quant_conv(op_case* c) {
    static const int64_t strides[2] = {2, 1}, pads[4] = {1, 0, 1, 2}, one[1] = {1};
    static const char* const conv_ins[N_VARIANTS][5] = {{"x", "w", "xz", "wz", NULL}, {"x", "w", "xz", "wz", NULL},
                                                        {"x", "w", NULL}};
    static const char* const q_ins[10] = {"x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b", NULL};
    int q = strcmp(c->op, "QLinearConv") == 0;
    int64_t cin = X4[c->v][1], group = c->v == 2 ? 2 : 1, w[4], m[1];
    opara_dtype xt = c->v == 1 ? OPARA_DTYPE_I8 : OPARA_DTYPE_U8, wt = c->v == 0 ? OPARA_DTYPE_U8 : OPARA_DTYPE_I8;
    opara_attr a[3];
    w[0] = c->v == 2 ? 6 : 5, w[1] = cin / group, w[2] = 3, w[3] = 3;
    m[0] = w[0];
    input(c, "x", xt, 4, X4[c->v], xt == OPARA_DTYPE_I8 ? -128 : 0, xt == OPARA_DTYPE_I8 ? 127 : 255);
    int_weights(c, "w", wt, 4, w, wt == OPARA_DTYPE_I8 ? -128 : 0, wt == OPARA_DTYPE_I8 ? 127 : 255);
    int_weights(c, "xz", xt, 1, one, -10, 20);
    int_weights(c, "wz", wt, 1, c->v == 1 ? m : one, -10, 20); /* variant 1: per output channel */
    if (q) {
        weights(c, "xs", 1, one, 0.01, 0.05);
        weights(c, "ws", 1, c->v == 1 ? m : one, 0.01, 0.05);
        weights(c, "ys", 1, one, 0.5, 1.0);
        int_weights(c, "yz", c->v == 2 ? OPARA_DTYPE_I8 : OPARA_DTYPE_U8, 1, one, 0, 20);
        int_weights(c, "b", OPARA_DTYPE_I32, 1, m, -5000, 5000);
    }
    a[0] = attr_ints("strides", strides, 2);
    a[1] = attr_ints("pads", pads, 4);
    a[2] = attr_int("group", group);
    c->cuda_refuses = QUANT_CPU_ONLY;
    node(c, q ? q_ins : conv_ins[c->v], 1, c->v == 0 ? 1 : 3, a);
}

/* MatMulInteger (A, B, a_zero_point, b_zero_point) or QLinearMatMul (a, a_scale, a_zero_point, b,
   b_scale, b_zero_point, y_scale, y_zero_point); variant 1: per-row / per-column quantization. */
static void case_quant_matmul(op_case* c) {
    static const int64_t ad[N_VARIANTS][3] = {{1, 5, 9}, {1, 7, 13}, {3, 4, 6}}, one[1] = {1};
    static const char* const mm_ins[N_VARIANTS][5] = {{"a", "b", "az", "bz", NULL}, {"a", "b", "az", "bz", NULL},
                                                      {"a", "b", NULL}};
    static const char* const q_ins[9] = {"a", "as", "az", "b", "bs", "bz", "ys", "yz", NULL};
    int q = strcmp(c->op, "QLinearMatMul") == 0;
    int64_t bd[2], rows[1], cols[1];
    opara_dtype at = c->v == 1 ? OPARA_DTYPE_I8 : OPARA_DTYPE_U8, bt = c->v == 0 ? OPARA_DTYPE_U8 : OPARA_DTYPE_I8;
    bd[0] = ad[c->v][2], bd[1] = c->v == 1 ? 130 : 11; /* variant 1: more than one block of columns */
    rows[0] = ad[c->v][1], cols[0] = bd[1];
    input(c, "a", at, c->v == 2 ? 3 : 2, c->v == 2 ? ad[2] : ad[c->v] + 1, at == OPARA_DTYPE_I8 ? -128 : 0,
          at == OPARA_DTYPE_I8 ? 127 : 255);
    int_weights(c, "b", bt, 2, bd, bt == OPARA_DTYPE_I8 ? -128 : 0, bt == OPARA_DTYPE_I8 ? 127 : 255);
    int_weights(c, "az", at, 1, c->v == 1 ? rows : one, -10, 20);
    int_weights(c, "bz", bt, 1, c->v == 1 ? cols : one, -10, 20);
    if (q) {
        weights(c, "as", 1, c->v == 1 ? rows : one, 0.01, 0.05);
        weights(c, "bs", 1, c->v == 1 ? cols : one, 0.01, 0.05);
        weights(c, "ys", 1, one, 0.5, 1.0);
        int_weights(c, "yz", c->v == 2 ? OPARA_DTYPE_I8 : OPARA_DTYPE_U8, 1, one, 0, 20);
    }
    c->cuda_refuses = QUANT_CPU_ONLY;
    node(c, q ? q_ins : mm_ins[c->v], 1, 0, NULL);
}

static void case_pool(op_case* c) {
    static const int64_t k[2] = {3, 3}, s[2] = {2, 2}, p[4] = {1, 1, 1, 1};
    opara_attr a[4];
    x4(c);
    a[0] = attr_ints("kernel_shape", k, 2);
    a[1] = attr_ints("strides", s, 2);
    a[2] = attr_ints("pads", p, 4);
    a[3] = c->v == 1 ? attr_int("ceil_mode", 1) : attr_int("count_include_pad", 1); /* AveragePool's */
    node(c, IN_X, 1, c->v == 0 ? 2 : c->v == 2 && !strcmp(c->op, "MaxPool") ? 3 : 4, a);
}

static void case_batch_norm(op_case* c) {
    static const char* const ins[] = {"x", "s", "b", "m", "var", NULL};
    int64_t ch[1];
    opara_attr a[1];
    ch[0] = X4[c->v][1];
    x4(c);
    weights(c, "s", 1, ch, 0.5, 1.5);
    weights(c, "b", 1, ch, -1, 1);
    weights(c, "m", 1, ch, -1, 1);
    weights(c, "var", 1, ch, 0.2, 2);
    a[0] = attr_float("epsilon", 1e-3f);
    node(c, ins, 1, 1, a);
}

/* PRelu: slope per channel [C, 1, 1], a single value, and along the last dim; NaN/Inf in x. */
static void case_prelu(op_case* c) {
    int64_t ch[3] = {X4[c->v][1], 1, 1}, one[1] = {1}, last[1] = {X4[c->v][3]};
    input(c, "x", OPARA_DTYPE_F32, 4, X4[c->v], -3, 3);
    c->in[0].specials = 1;
    if (c->v == 0) weights(c, "w", 3, ch, -0.5, 0.5);
    else if (c->v == 1) weights(c, "w", 1, one, 0.1, 0.3);
    else input(c, "w", OPARA_DTYPE_F32, 1, last, -1, 1);
    node(c, IN_XW, 1, 0, NULL);
}

static void case_instance_norm(op_case* c) {
    static const char* const ins[] = {"x", "s", "b", NULL};
    int64_t ch[1];
    opara_attr a[1];
    ch[0] = X4[c->v][1];
    input(c, "x", OPARA_DTYPE_F32, 4, X4[c->v], -3, 3);
    weights(c, "s", 1, ch, 0.5, 1.5);
    weights(c, "b", 1, ch, -1, 1);
    a[0] = attr_float("epsilon", 1e-3f);
    c->atol = c->rtol = 1e-4;
    node(c, ins, 1, c->v == 1 ? 1 : 0, a);
}

/* LRN: windows of 3 (default alpha, beta, bias), 5 and 2 (even: one more channel after than before). */
static void case_lrn(op_case* c) {
    static const int64_t sizes[N_VARIANTS] = {3, 5, 2};
    opara_attr a[4];
    a[0] = attr_int("size", sizes[c->v]);
    a[1] = attr_float("alpha", 0.02f);
    a[2] = attr_float("beta", 0.6f);
    a[3] = attr_float("bias", 2.0f);
    input(c, "x", OPARA_DTYPE_F32, 4, X4[c->v], -3, 3);
    c->atol = c->rtol = 1e-5;
    node(c, IN_X, 1, c->v == 0 ? 1 : 4, a);
}

/* MeanVarianceNormalization: the default axes (0, 2, 3), [2, 3] and [1, 2, 3]. */
static void case_mvn(op_case* c) {
    static const int64_t ax23[2] = {2, 3}, ax123[3] = {1, 2, 3};
    opara_attr a[1];
    a[0] = c->v == 1 ? attr_ints("axes", ax23, 2) : attr_ints("axes", ax123, 3);
    input(c, "x", OPARA_DTYPE_F32, 4, X4[c->v], -3, 3);
    c->atol = c->rtol = 1e-4;
    node(c, IN_X, 1, c->v == 0 ? 0 : 1, a);
}

/* Shrink: ONNX's defaults, then lambd and bias; NaN/Inf in x. */
static void case_shrink(op_case* c) {
    opara_attr a[2];
    a[0] = attr_float("lambd", c->v == 1 ? 1.0f : 1.5f);
    a[1] = attr_float("bias", c->v == 1 ? 0.25f : -0.5f);
    input(c, "x", OPARA_DTYPE_F32, 4, X4[c->v], -3, 3);
    c->in[0].specials = 1;
    node(c, IN_X, 1, c->v == 0 ? 0 : 2, a);
}

static void case_global_max_pool(op_case* c) {
    input(c, "x", OPARA_DTYPE_F32, 4, X4[c->v], -3, 3);
    c->in[0].specials = c->v == 1; /* a NaN in a window gives NaN */
    node(c, IN_X, 1, 0, NULL);
}

/* MaxUnpool of X4 with a 2x2 window, stride 2, indices one element of each window (as MaxPool's),
   into the unpooled shape, and in variant 1 a larger output_shape. */
static void case_max_unpool(op_case* c) {
    static const int64_t k[2] = {2, 2};
    const int64_t* d = X4[c->v];
    int64_t n = numel(4, d), i, os[4] = {d[0], d[1], 2 * d[2] + 1, 2 * d[3] + 2};
    int64_t* idx = (int64_t*)malloc((size_t)n * sizeof *idx);
    opara_attr a[3];
    for (i = 0; i < n; ++i) { /* element (i / (h w), y, x) of X from window row 2y + dy, column 2x + dx */
        int64_t plane = i / (d[2] * d[3]), y = i / d[3] % d[2], x = i % d[3];
        int64_t dy = (int64_t)rnd(c, 0, 1.999), dx = (int64_t)rnd(c, 0, 1.999);
        idx[i] = plane * 4 * d[2] * d[3] + (2 * y + dy) * 2 * d[3] + 2 * x + dx;
    }
    input(c, "x", OPARA_DTYPE_F32, 4, d, -3, 3);
    ints(c, "w", 4, d, idx);
    free(idx);
    a[0] = attr_ints("kernel_shape", k, 2);
    a[1] = attr_ints("strides", k, 2);
    a[2] = attr_ints("output_shape", os, 4);
    node(c, IN_XW, 1, c->v == 1 ? 3 : 2, a);
}

/* Dropout (inference) with its mask; NaN/Inf pass through. */
static void case_dropout(op_case* c) {
    input(c, "x", OPARA_DTYPE_F32, 4, X4[c->v], -3, 3);
    c->in[0].specials = 1;
    node(c, IN_X, 2, 0, NULL);
}

/* Einsum (CPU only): a batch matmul, a transpose with a sum, and a per-batch diagonal over an ellipsis. */
static void case_einsum(op_case* c) {
    static const char* const eq[N_VARIANTS] = {"bij,bjk->bik", "nchw->nwc", "...ii->...i"};
    static const int64_t a[3] = {3, 4, 5}, b[3] = {3, 5, 2}, sq[4] = {2, 3, 4, 4};
    opara_attr at[1];
    at[0] = attr_str("equation", eq[c->v]);
    if (c->v == 0) {
        input(c, "x", OPARA_DTYPE_F32, 3, a, -2, 2);
        input(c, "w", OPARA_DTYPE_F32, 3, b, -2, 2);
    } else {
        input(c, "x", OPARA_DTYPE_F32, 4, c->v == 1 ? X4[1] : sq, -2, 2);
    }
    c->cuda_refuses = "operator not supported by the CUDA backend"; /* docs/CUDA-BACKEND.md */
    node(c, c->v == 0 ? IN_XW : IN_X, 1, 1, at);
}

/* The element-wise activations with their default attributes, and the few that take more. */
static void case_unary(op_case* c) {
    x4(c);
    node(c, IN_X, 1, 0, NULL);
}

static void case_sqrt(op_case* c) {
    input(c, "x", OPARA_DTYPE_F32, 4, X4[c->v], 0.0, 4.0);
    node(c, IN_X, 1, 0, NULL);
}

/* The math operators (Neg .. Atanh): x over [lo, hi] with the special values; alpha (and Selu's
   gamma) given in variants 1 and 2, ONNX's defaults in variant 0. */
static void math_case(op_case* c, double lo, double hi) {
    opara_attr a[2];
    uint32_t n = 0;
    input(c, "x", OPARA_DTYPE_F32, 4, X4[c->v], lo, hi);
    c->in[0].specials = 1;
    if (c->v > 0 && (strcmp(c->op, "Elu") == 0 || strcmp(c->op, "Celu") == 0 || strcmp(c->op, "ThresholdedRelu") == 0 ||
                     strcmp(c->op, "Selu") == 0))
        a[n++] = attr_float("alpha", c->v == 1 ? 0.6f : 1.3f);
    if (c->v > 0 && strcmp(c->op, "Selu") == 0) a[n++] = attr_float("gamma", 0.9f);
    node(c, IN_X, 1, n, a);
}

static void case_math(op_case* c) { math_case(c, -3.0, 3.0); }
static void case_math_positive(op_case* c) { math_case(c, 0.0, 4.0); }      /* Log */
static void case_math_unit(op_case* c) { math_case(c, -1.0, 1.0); }         /* Asin, Acos, Atanh */
static void case_math_from_one(op_case* c) { math_case(c, 1.0, 5.0); }      /* Acosh */
static void case_math_half_pi(op_case* c) { math_case(c, -1.5, 1.5); }      /* Tan */

static void case_leaky_relu(op_case* c) {
    opara_attr a[1];
    a[0] = attr_float("alpha", 0.3f);
    x4(c);
    node(c, IN_X, 1, c->v == 0 ? 0 : 1, a);
}

static void case_hard_sigmoid(op_case* c) {
    opara_attr a[2];
    a[0] = attr_float("alpha", 0.25f);
    a[1] = attr_float("beta", 0.4f);
    x4(c);
    node(c, IN_X, 1, c->v == 0 ? 0 : 2, a);
}

static void case_clip(op_case* c) {
    opara_attr a[2];
    a[0] = attr_float("min", -0.5f);
    a[1] = attr_float("max", 0.75f);
    x4(c);
    node(c, IN_X, 1, c->v == 2 ? 1 : 2, c->v == 2 ? a + 1 : a); /* variant 2: an upper bound only */
}

static void case_gelu(op_case* c) {
    opara_attr a[1];
    a[0] = attr_str("approximate", "tanh");
    x4(c);
    node(c, IN_X, 1, c->v == 1 ? 1 : 0, a);
}

/* Binary ops: same shapes, odd sizes against a scalar-like [1], and batch 3 broadcast against [4, 1, 5]. */
static void binary_inputs(op_case* c, double lo, double hi) {
    static const int64_t one[1] = {1}, bc[3] = {4, 1, 5};
    x4(c);
    if (c->v == 0) input(c, "x2", OPARA_DTYPE_F32, 4, X4[0], lo, hi);
    else if (c->v == 1) input(c, "x2", OPARA_DTYPE_F32, 1, one, lo, hi);
    else input(c, "x2", OPARA_DTYPE_F32, 3, bc, lo, hi);
}

static void case_binary(op_case* c) {
    binary_inputs(c, -2, 2);
    node(c, IN_XY, 1, 0, NULL);
}

static void case_div(op_case* c) {
    binary_inputs(c, 0.5, 2);
    node(c, IN_XY, 1, 0, NULL);
}

static void case_pow(op_case* c) {
    static const int64_t one[1] = {1}, bc[3] = {4, 1, 5};
    input(c, "x", OPARA_DTYPE_F32, 4, X4[c->v], 0.25, 2.0);
    if (c->v == 0) input(c, "x2", OPARA_DTYPE_F32, 4, X4[0], -2, 2);
    else if (c->v == 1) input(c, "x2", OPARA_DTYPE_F32, 1, one, 2, 2); /* the x * x path */
    else input(c, "x2", OPARA_DTYPE_F32, 3, bc, -2, 2);
    node(c, IN_XY, 1, 0, NULL);
}

/* Two inputs x, x2 of dtype dt over [lo, hi]: same shapes, against a [1], and batch 3 against [4, 1, 5]. */
static void typed_pair(op_case* c, opara_dtype dt, double lo, double hi) {
    static const int64_t one[1] = {1}, bc[3] = {4, 1, 5};
    input(c, "x", dt, 4, X4[c->v], lo, hi);
    if (c->v == 0) input(c, "x2", dt, 4, X4[0], lo, hi);
    else if (c->v == 1) input(c, "x2", dt, 1, one, lo, hi);
    else input(c, "x2", dt, 3, bc, lo, hi);
}

/* Comparisons: f32 with NaN/Inf/signed zeros; against a scalar-like bool (Equal), i8 (Greater), u8
   (Less) or i32; i64 broadcast. Small integers, so that equal values occur. */
static opara_dtype compare_dtype(const op_case* c) {
    if (c->v == 0) return OPARA_DTYPE_F32;
    if (c->v == 2) return OPARA_DTYPE_I64;
    return strcmp(c->op, "Equal") == 0 ? OPARA_DTYPE_BOOL : strcmp(c->op, "Greater") == 0 ? OPARA_DTYPE_I8
           : strcmp(c->op, "Less") == 0 ? OPARA_DTYPE_U8 : OPARA_DTYPE_I32;
}

static void case_compare(op_case* c) {
    opara_dtype dt = compare_dtype(c);
    typed_pair(c, dt, dt == OPARA_DTYPE_U8 || dt == OPARA_DTYPE_BOOL ? 0 : -3, 3);
    if (dt == OPARA_DTYPE_F32) c->in[0].specials = c->in[1].specials = 1;
    node(c, IN_XY, 1, 0, NULL);
}

static void case_logic_binary(op_case* c) {
    typed_pair(c, OPARA_DTYPE_BOOL, 0, 1);
    node(c, IN_XY, 1, 0, NULL);
}

/* Mod: i32 of mixed signs (the divisor's sign), f32 with fmod=1 against a scalar, i64 with fmod=1
   broadcast; divisors include 0 (0 on every backend). */
static void case_mod(op_case* c) {
    static const opara_dtype dt[N_VARIANTS] = {OPARA_DTYPE_I32, OPARA_DTYPE_F32, OPARA_DTYPE_I64};
    opara_attr a[1];
    a[0] = attr_int("fmod", 1);
    typed_pair(c, dt[c->v], -9, 9);
    node(c, IN_XY, 1, c->v == 0 ? 0 : 1, a);
}

/* BitShift on u8: LEFT, RIGHT against a scalar, LEFT broadcast; shifts up to 9 (past the width: 0). */
static void case_bit_shift(op_case* c) {
    opara_attr a[1];
    static const int64_t one[1] = {1}, bc[3] = {4, 1, 5};
    a[0] = attr_str("direction", c->v == 1 ? "RIGHT" : "LEFT");
    input(c, "x", OPARA_DTYPE_U8, 4, X4[c->v], 0, 255);
    if (c->v == 0) input(c, "x2", OPARA_DTYPE_U8, 4, X4[0], 0, 9);
    else if (c->v == 1) input(c, "x2", OPARA_DTYPE_U8, 1, one, 3, 3);
    else input(c, "x2", OPARA_DTYPE_U8, 3, bc, 0, 9);
    node(c, IN_XY, 1, 1, a);
}

/* Not on bool; IsNaN and IsInf on f32 with the special values (IsInf: variant 1 detects only the
   positive infinity, variant 2 only the negative). */
static void case_logic_unary(op_case* c) {
    opara_attr a[1];
    int is_inf = strcmp(c->op, "IsInf") == 0;
    a[0] = attr_int(c->v == 1 ? "detect_negative" : "detect_positive", 0);
    if (strcmp(c->op, "Not") == 0) {
        input(c, "x", OPARA_DTYPE_BOOL, 4, X4[c->v], 0, 1);
    } else {
        input(c, "x", OPARA_DTYPE_F32, 4, X4[c->v], -2, 2);
        c->in[0].specials = 1;
    }
    node(c, IN_X, 1, is_inf && c->v > 0 ? 1 : 0, a);
}

/* Max, Min, Mean, Sum: one input; three broadcast against each other (f32 with the special values);
   two of i32 (Max, Min) or f32 (Mean, Sum) broadcast. */
static void case_variadic(op_case* c) {
    static const char* const ins[] = {"x", "x2", "x3", NULL};
    static const int64_t five[1] = {5}, col[4] = {1, 1, 7, 1};
    int ints = strcmp(c->op, "Max") == 0 || strcmp(c->op, "Min") == 0;
    if (c->v == 0) {
        x4(c);
        c->in[0].specials = 1;
        node(c, IN_X, 1, 0, NULL);
    } else if (c->v == 1) {
        x4(c);
        input_f32(c, "x2", 1, five);
        input_f32(c, "x3", 4, col);
        c->in[0].specials = c->in[1].specials = c->in[2].specials = 1;
        node(c, ins, 1, 0, NULL);
    } else {
        typed_pair(c, ints ? OPARA_DTYPE_I32 : OPARA_DTYPE_F32, -50, 50);
        node(c, IN_XY, 1, 0, NULL);
    }
}

static void case_concat(op_case* c) {
    int64_t d[4];
    opara_attr a[1];
    int axis = c->v == 1 ? 3 : 1;
    memcpy(d, X4[c->v], sizeof d);
    d[axis] = 2;
    x4(c);
    input_f32(c, "x2", 4, d);
    a[0] = attr_int("axis", axis);
    node(c, IN_XY, 1, 1, a);
}

static void case_split(op_case* c) {
    static const int64_t split[N_VARIANTS][2] = {{1, 3}, {4, 1}, {2, 2}};
    opara_attr a[2];
    a[0] = attr_int("axis", c->v == 1 ? 2 : 1);
    a[1] = attr_ints("split", split[c->v], 2);
    static const int64_t odd[4] = {1, 3, 5, 7};
    if (c->v == 1) input_f32(c, "x", 4, odd);
    else x4(c);
    node(c, IN_X, 2, 2, a);
}

static void case_slice(op_case* c) {
    static const int64_t starts[N_VARIANTS][2] = {{1, 0}, {-4, 6}, {0, 1}}, ends[N_VARIANTS][2] = {{5, 3}, {100, 0}, {2, 5}};
    static const int64_t axes[N_VARIANTS][2] = {{2, 3}, {2, 3}, {0, 1}}, steps[N_VARIANTS][2] = {{2, 1}, {1, -2}, {1, 2}};
    opara_attr a[4];
    a[0] = attr_ints("starts", starts[c->v], 2);
    a[1] = attr_ints("ends", ends[c->v], 2);
    a[2] = attr_ints("axes", axes[c->v], 2);
    a[3] = attr_ints("steps", steps[c->v], 2);
    x4(c);
    node(c, IN_X, 1, 4, a);
}

static void case_gather(op_case* c) {
    static const int64_t idx[5] = {2, 0, -1, 1, 2}, d1[1] = {5}, d2[2] = {2, 2};
    opara_attr a[1];
    x4(c);
    ints(c, "w", c->v == 2 ? 2 : 1, c->v == 2 ? d2 : d1, idx);
    a[0] = attr_int("axis", c->v == 1 ? 2 : c->v == 2 ? 0 : 3);
    node(c, IN_XW, 1, 1, a);
}

/* ---- the gather/scatter and index-pattern operators (GatherElements .. ReverseSequence) ---------- */

static const char* const IN_X_IDX[] = {"x", "idx", NULL};
static const char* const IN_X_IDX_UPD[] = {"x", "idx", "upd", NULL};

/* x (f32, with NaN/Inf) and indices of each variant: along axis 2 (i64), 3 (i32), 0 (i64), negative
   ones included, a shape no larger than x off the axis. */
static void elements_inputs(op_case* c, int64_t* axis) {
    static const int64_t idx[N_VARIANTS][4] = {{1, 4, 3, 6}, {1, 3, 7, 4}, {2, 4, 5, 5}};
    static const int64_t axes[N_VARIANTS] = {2, 3, 0};
    int64_t dim;
    *axis = axes[c->v];
    dim = X4[c->v][*axis];
    x4(c);
    c->in[0].specials = 1;
    input(c, "idx", c->v == 1 ? OPARA_DTYPE_I32 : OPARA_DTYPE_I64, 4, idx[c->v], (double)-dim, (double)dim - 1);
}

static void case_gather_elements(op_case* c) {
    opara_attr a[1];
    int64_t axis;
    elements_inputs(c, &axis);
    a[0] = attr_int("axis", axis);
    node(c, IN_X_IDX, 1, 1, a);
}

/* ScatterElements (reductions none, mul, max over duplicate indices) and Scatter (none). */
static void case_scatter_elements(op_case* c) {
    static const char* const red[N_VARIANTS] = {"none", "mul", "max"};
    opara_attr a[2];
    int64_t axis;
    uint32_t n = 1;
    elements_inputs(c, &axis);
    input(c, "upd", OPARA_DTYPE_F32, 4, c->in[1].dims, -2, 2);
    c->in[2].specials = 1;
    a[0] = attr_int("axis", axis);
    if (strcmp(c->op, "ScatterElements") == 0) a[n++] = attr_str("reduction", red[c->v]);
    node(c, IN_X_IDX_UPD, 1, n, a);
}

/* Index tuples of length k into the dims of x from `first` on, each index in range (every other one
   negative), n tuples. */
static void nd_indices(op_case* c, int64_t first, int64_t k, int32_t rank, const int64_t* dims) {
    int64_t n = numel(rank - 1, dims), t, j, v[64];
    for (t = 0; t < n; ++t)
        for (j = 0; j < k; ++j) {
            int64_t dim = X4[c->v][first + j], i = (t * 7 + j * 3 + c->v) % dim;
            v[t * k + j] = (t + j) % 2 ? i - dim : i;
        }
    ints(c, "idx", rank, dims, v);
}

/* GatherND: tuples of 3 (x [1, 4, 6, 6]), of 4 (x [1, 3, 7, 5]), of 2 after batch_dims 1 (x [3, 4, 5, 5]). */
static void case_gather_nd(op_case* c) {
    static const int64_t idx[N_VARIANTS][3] = {{3, 3}, {2, 2, 4}, {3, 2, 2}};
    static const int32_t rank[N_VARIANTS] = {2, 3, 3};
    opara_attr a[1];
    x4(c);
    c->in[0].specials = 1;
    nd_indices(c, c->v == 2 ? 1 : 0, idx[c->v][rank[c->v] - 1], rank[c->v], idx[c->v]);
    a[0] = attr_int("batch_dims", 1);
    node(c, IN_X_IDX, 1, c->v == 2 ? 1 : 0, a);
}

/* ScatterND: slices of [6, 6] (none), single elements (add, duplicate tuples), whole batches (mul). */
static void case_scatter_nd(op_case* c) {
    static const int64_t idx[N_VARIANTS][2] = {{3, 2}, {9, 4}, {2, 1}};
    static const int64_t upd[N_VARIANTS][4] = {{3, 6, 6}, {9}, {2, 4, 5, 5}};
    static const int32_t upd_rank[N_VARIANTS] = {3, 1, 4};
    static const char* const red[N_VARIANTS] = {"none", "add", "mul"};
    opara_attr a[1];
    x4(c);
    c->in[0].specials = 1;
    nd_indices(c, 0, idx[c->v][1], 2, idx[c->v]);
    input(c, "upd", OPARA_DTYPE_F32, upd_rank[c->v], upd[c->v], -2, 2);
    a[0] = attr_str("reduction", red[c->v]);
    node(c, IN_X_IDX_UPD, 1, 1, a);
}

static void case_size(op_case* c) {
    input(c, "x", c->v == 1 ? OPARA_DTYPE_BOOL : OPARA_DTYPE_F32, 4, X4[c->v], -2, 2);
    node(c, IN_X, 1, 0, NULL);
}

/* Trilu: upper (default k), lower with k -1 on i64, upper with k 2 past the diagonal. */
static void case_trilu(op_case* c) {
    opara_attr a[2];
    input(c, "x", c->v == 1 ? OPARA_DTYPE_I64 : OPARA_DTYPE_F32, 4, X4[c->v], -100, 100);
    c->in[0].specials = c->v != 1;
    a[0] = attr_int("upper", c->v != 1);
    a[1] = attr_int("k", c->v == 1 ? -1 : 2);
    node(c, IN_X, 1, c->v == 0 ? 0 : 2, a);
}

static void case_tile(op_case* c) {
    static const int64_t repeats[N_VARIANTS][4] = {{1, 2, 1, 3}, {2, 1, 3, 1}, {1, 1, 2, 2}};
    static const opara_dtype dt[N_VARIANTS] = {OPARA_DTYPE_F32, OPARA_DTYPE_I32, OPARA_DTYPE_BOOL};
    opara_attr a[1];
    input(c, "x", dt[c->v], 4, X4[c->v], -9, 9);
    c->in[0].specials = c->v == 0;
    a[0] = attr_ints("repeats", repeats[c->v], 4);
    node(c, IN_X, 1, 1, a);
}

/* DepthToSpace (DCR, CRD) and SpaceToDepth: blocksize 2, 3 and 2 on an input it divides. */
static void case_depth_space(op_case* c) {
    static const int64_t d2s[N_VARIANTS][4] = {{1, 8, 3, 4}, {1, 9, 2, 3}, {3, 4, 5, 5}};
    static const int64_t s2d[N_VARIANTS][4] = {{1, 4, 6, 6}, {1, 3, 6, 9}, {3, 2, 4, 6}};
    static const int64_t bs[N_VARIANTS] = {2, 3, 2};
    int to_space = strcmp(c->op, "DepthToSpace") == 0;
    opara_attr a[2];
    input(c, "x", c->v == 2 ? OPARA_DTYPE_I64 : OPARA_DTYPE_F32, 4, to_space ? d2s[c->v] : s2d[c->v], -9, 9);
    c->in[0].specials = c->v != 2;
    a[0] = attr_int("blocksize", bs[c->v]);
    a[1] = attr_str("mode", c->v == 0 ? "DCR" : "CRD");
    node(c, IN_X, 1, to_space && c->v > 0 ? 2 : 1, a);
}

/* EyeLike: square-ish f32, a wide matrix with k -2 into i32, k 3 into bool. */
static void case_eye_like(op_case* c) {
    static const int64_t dims[N_VARIANTS][2] = {{4, 6}, {7, 5}, {5, 5}};
    static const int64_t k[N_VARIANTS] = {0, -2, 3};
    static const opara_dtype to[N_VARIANTS] = {OPARA_DTYPE_F32, OPARA_DTYPE_I32, OPARA_DTYPE_BOOL};
    opara_attr a[2];
    input(c, "x", OPARA_DTYPE_F32, 2, dims[c->v], -2, 2);
    a[0] = attr_int("k", k[c->v]);
    a[1] = attr_int("dtype", to[c->v]);
    node(c, IN_X, 1, c->v == 0 ? 1 : 2, a);
}

/* OneHot (canonical: indices and values, depth an attribute): indices past depth either way (all off),
   negative ones; i64 along the last axis, f32 along axis 0, i32 along axis 1. */
static void case_one_hot(op_case* c) {
    static const char* const ins[] = {"idx", "values", NULL};
    static const int64_t dims[N_VARIANTS][3] = {{2, 3}, {4}, {2, 3, 2}}, two[1] = {2};
    static const int32_t rank[N_VARIANTS] = {2, 1, 3};
    static const opara_dtype dt[N_VARIANTS] = {OPARA_DTYPE_I64, OPARA_DTYPE_F32, OPARA_DTYPE_I32};
    static const int64_t axis[N_VARIANTS] = {-1, 0, 1};
    opara_attr a[2];
    input(c, "idx", dt[c->v], rank[c->v], dims[c->v], -7, 6);
    weights(c, "values", 1, two, -3, 3);
    a[0] = attr_int("depth", 5);
    a[1] = attr_int("axis", axis[c->v]);
    node(c, ins, 1, 2, a);
}

/* ReverseSequence: time-major [4, 3, 5], batch-major [3, 6, 2] with i32 lengths, batch-major 4-D;
   lengths from 0 to the whole time axis. */
static void case_reverse_sequence(op_case* c) {
    static const char* const ins[] = {"x", "lens", NULL};
    static const int64_t dims[N_VARIANTS][4] = {{4, 3, 5}, {3, 6, 2}, {3, 4, 5, 5}};
    static const int32_t rank[N_VARIANTS] = {3, 3, 4};
    int64_t batch_axis = c->v == 0 ? 1 : 0, time_axis = 1 - batch_axis, lens[1];
    opara_attr a[2];
    lens[0] = dims[c->v][batch_axis];
    input(c, "x", OPARA_DTYPE_F32, rank[c->v], dims[c->v], -2, 2);
    c->in[0].specials = 1;
    input(c, "lens", c->v == 1 ? OPARA_DTYPE_I32 : OPARA_DTYPE_I64, 1, lens, 0, (double)dims[c->v][time_axis]);
    a[0] = attr_int("batch_axis", batch_axis);
    a[1] = attr_int("time_axis", time_axis);
    node(c, ins, 1, 2, a);
}

static void case_reshape(op_case* c) {
    static const int64_t shape[N_VARIANTS][3] = {{0, -1, 6}, {105, 1, 0}, {3, 100, 0}};
    static const uint32_t n[N_VARIANTS] = {3, 2, 2};
    opara_attr a[1];
    a[0] = attr_ints("shape", shape[c->v], n[c->v]);
    x4(c);
    node(c, IN_X, 1, 1, a);
}

static void case_flatten(op_case* c) {
    opara_attr a[1];
    a[0] = attr_int("axis", c->v);
    x4(c);
    node(c, IN_X, 1, 1, a);
}

static void case_transpose(op_case* c) {
    static const int64_t perm[N_VARIANTS][4] = {{0, 2, 3, 1}, {3, 1, 2, 0}, {1, 0, 3, 2}};
    opara_attr a[1];
    a[0] = attr_ints("perm", perm[c->v], 4);
    x4(c);
    node(c, IN_X, 1, 1, a);
}

static void case_squeeze(op_case* c) {
    static const int64_t d[N_VARIANTS][4] = {{1, 4, 1, 6}, {1, 7, 1, 1}, {3, 1, 5, 1}};
    static const int64_t axes[N_VARIANTS][2] = {{0, 2}, {-1, 2}, {1, 3}};
    opara_attr a[1];
    a[0] = attr_ints("axes", axes[c->v], 2);
    input_f32(c, "x", 4, d[c->v]);
    node(c, IN_X, 1, 1, a);
}

static void case_unsqueeze(op_case* c) {
    static const int64_t d[2] = {5, 7}, axes[N_VARIANTS][2] = {{0, 3}, {-1, 1}, {0, 2}};
    opara_attr a[1];
    a[0] = attr_ints("axes", axes[c->v], 2);
    if (c->v == 2) x4(c);
    else input_f32(c, "x", 2, d);
    node(c, IN_X, 1, 1, a);
}

static void case_expand(op_case* c) {
    static const int64_t d[N_VARIANTS][3] = {{4, 1, 6}, {1, 7, 1}, {1, 1, 5}};
    static const int64_t shape[N_VARIANTS][4] = {{2, 4, 3, 6}, {3, 7, 5, 0}, {3, 4, 1, 5}};
    opara_attr a[1];
    a[0] = attr_ints("shape", shape[c->v], c->v == 1 ? 3 : 4);
    input_f32(c, "x", 3, d[c->v]);
    node(c, IN_X, 1, 1, a);
}

static void case_gemm(op_case* c) {
    static const int64_t m[N_VARIANTS] = {8, 7, 16}, k[N_VARIANTS] = {16, 13, 9}, n[N_VARIANTS] = {12, 5, 33};
    const char* ins[4] = {"x", "w", "b", NULL};
    int64_t xd[2], wd[2], bd[2];
    opara_attr a[4];
    int ta = c->v == 1, tb = c->v != 0;
    xd[0] = ta ? k[c->v] : m[c->v], xd[1] = ta ? m[c->v] : k[c->v];
    wd[0] = tb ? n[c->v] : k[c->v], wd[1] = tb ? k[c->v] : n[c->v];
    bd[0] = c->v == 2 ? m[c->v] : 1, bd[1] = c->v == 2 ? 1 : n[c->v]; /* C broadcast over rows, then columns */
    input_f32(c, "x", 2, xd);
    weights(c, "w", 2, wd, -1, 1);
    weights(c, "b", c->v == 1 ? 1 : 2, c->v == 1 ? bd + 1 : bd, -1, 1);
    a[0] = attr_int("transA", ta);
    a[1] = attr_int("transB", tb);
    a[2] = attr_float("alpha", 0.5f);
    a[3] = attr_float("beta", 2.0f);
    c->atol = c->rtol = 1e-4;
    node(c, ins, 1, 4, a);
}

/* LSTM, GRU, RNN (CPU-only, docs/CUDA-BACKEND.md): forward with biases; bidirectional at odd sizes
   with initial_h; reverse over a batch of 3, batch-first (layout 1), with the special values in X
   (a NaN spreads along its row's recurrence on the CPU; the CUDA session is refused at creation). */
static void case_rnn(op_case* c) {
    static const char* const dirs[N_VARIANTS] = {"forward", "bidirectional", "reverse"};
    static const int64_t seq[N_VARIANTS] = {4, 5, 3}, batch[N_VARIANTS] = {1, 2, 3}, in[N_VARIANTS] = {6, 5, 4},
                         hid[N_VARIANTS] = {8, 7, 5};
    const char* ins[7] = {"x", "w", "r", "b", "", NULL, NULL};
    int64_t nd = c->v == 1 ? 2 : 1, g = strcmp(c->op, "LSTM") == 0 ? 4 : strcmp(c->op, "GRU") == 0 ? 3 : 1;
    int64_t xd[3], wd[3], rd[3], bd[2], hd[3];
    opara_attr a[3];
    xd[0] = c->v == 2 ? batch[c->v] : seq[c->v], xd[1] = c->v == 2 ? seq[c->v] : batch[c->v], xd[2] = in[c->v];
    wd[0] = rd[0] = bd[0] = hd[0] = nd, wd[1] = rd[1] = g * hid[c->v], wd[2] = in[c->v], rd[2] = hid[c->v];
    bd[1] = 2 * g * hid[c->v], hd[1] = batch[c->v], hd[2] = hid[c->v];
    input_f32(c, "x", 3, xd);
    if (c->v == 2) c->in[0].specials = 1;
    weights(c, "w", 3, wd, -0.5, 0.5);
    weights(c, "r", 3, rd, -0.5, 0.5);
    weights(c, "b", 2, bd, -0.5, 0.5);
    if (c->v == 1) ins[5] = "h0", input_f32(c, "h0", 3, hd);
    else ins[4] = NULL;
    a[0] = attr_int("hidden_size", hid[c->v]);
    a[1] = attr_str("direction", dirs[c->v]);
    a[2] = attr_int("layout", c->v == 2);
    c->cuda_refuses = "operator not supported by the CUDA backend"; /* docs/CUDA-BACKEND.md */
    c->atol = c->rtol = 1e-4;
    node(c, ins, 2, 3, a);
}

static void case_matmul(op_case* c) {
    static const int64_t a0[2] = {6, 10}, b0[2] = {10, 4}, a1[3] = {3, 7, 13}, b1[2] = {13, 5};
    static const int64_t a2[4] = {3, 2, 5, 9}, b2[3] = {2, 9, 7};
    if (c->v == 0) input_f32(c, "x", 2, a0), weights(c, "w", 2, b0, -1, 1);
    else if (c->v == 1) input_f32(c, "x", 3, a1), weights(c, "w", 2, b1, -1, 1);
    else input_f32(c, "x", 4, a2), input_f32(c, "w", 3, b2); /* batch [3, 2] broadcast against [2] */
    if (c->v == 2) c->cuda_refuses = "MatMul batch broadcast across several dims"; /* docs/CUDA-BACKEND.md */
    c->atol = c->rtol = 1e-4;
    node(c, IN_XW, 1, 0, NULL);
}

static void case_softmax(op_case* c) {
    opara_attr a[1];
    a[0] = attr_int("axis", c->v == 2 ? 1 : -1);
    x4(c);
    node(c, IN_X, 1, 1, a);
}

/* Softmax / LogSoftmax over the last axis around the CUDA row kernel (rows up to 1024 take it):
   1024 and 1025 long rows, short rows with NaN/Inf, rows of 33 and of 1. Variants 0 .. 4, run by
   softmax_rows_agree_with_the_cpu_around_the_row_kernel_limit. */
static void case_softmax_rows(op_case* c) {
    static const int64_t d[5][2] = {{5, 1024}, {3, 1025}, {40, 5}, {9, 33}, {300, 1}};
    opara_attr a[1];
    a[0] = attr_int("axis", -1);
    input_f32(c, "x", 2, d[c->v]);
    c->in[0].specials = c->v == 2;
    node(c, IN_X, 1, 1, a);
}

static void case_layer_norm(op_case* c) {
    const char* ins[4] = {"x", "w", "b", NULL};
    int64_t d[2];
    opara_attr a[2];
    int axis = c->v == 1 ? 2 : -1;
    d[0] = X4[c->v][2], d[1] = X4[c->v][3];
    x4(c);
    weights(c, "w", c->v == 1 ? 2 : 1, c->v == 1 ? d : d + 1, 0.5, 1.5);
    weights(c, "b", c->v == 1 ? 2 : 1, c->v == 1 ? d : d + 1, -1, 1);
    a[0] = attr_int("axis", axis);
    a[1] = attr_float("epsilon", 1e-3f);
    node(c, c->v == 0 ? IN_XW : ins, 1, 2, a);
}

static void case_reduce_mean(op_case* c) {
    static const int64_t axes[N_VARIANTS][2] = {{2, 3}, {1, -1}, {0, 2}};
    opara_attr a[2];
    a[0] = attr_ints("axes", axes[c->v], 2);
    a[1] = attr_int("keepdims", c->v != 1);
    x4(c);
    node(c, IN_X, 1, 2, a);
}

/* TopK: values and indices along an axis; the odd variant takes the smallest, the batch variant the
   whole axis. Ties are ordered by index on both backends (the inputs are random floats). */
static void case_topk(op_case* c) {
    static const int64_t axis[N_VARIANTS] = {-1, 2, 1}, k[N_VARIANTS] = {3, 7, 4};
    opara_attr a[3];
    a[0] = attr_int("axis", axis[c->v]);
    a[1] = attr_int("k", k[c->v]);
    a[2] = attr_int("largest", c->v != 1);
    x4(c);
    node(c, IN_X, 2, 3, a);
    c->cuda_refuses = "operator not supported by the CUDA backend"; /* docs/CUDA-BACKEND.md */
}

/* GridSample: grid points over and past the image (the padding modes read outside), one mode and
   padding per variant. */
static void case_grid_sample(op_case* c) {
    static const char* const ins[] = {"x", "grid", NULL};
    static const char* const modes[N_VARIANTS] = {"bilinear", "nearest", "bicubic"};
    static const char* const pads[N_VARIANTS] = {"zeros", "border", "reflection"};
    int64_t gd[4];
    opara_attr a[3];
    gd[0] = X4[c->v][0], gd[1] = 3 + c->v, gd[2] = 5, gd[3] = 2;
    x4(c);
    input(c, "grid", OPARA_DTYPE_F32, 4, gd, -1.3, 1.3);
    a[0] = attr_str("mode", modes[c->v]);
    a[1] = attr_str("padding_mode", pads[c->v]);
    a[2] = attr_int("align_corners", c->v == 1);
    node(c, ins, 1, 3, a);
    c->cuda_refuses = "operator not supported by the CUDA backend"; /* docs/CUDA-BACKEND.md */
}

/* Det: a batch of square matrices (1x1 in the odd variant, 3x3 batched in the batch one). */
static void case_det(op_case* c) {
    static const int64_t d[N_VARIANTS][3] = {{4, 4, 0}, {1, 1, 0}, {2, 3, 3}};
    input(c, "x", OPARA_DTYPE_F32, c->v == 2 ? 3 : 2, d[c->v], -2, 2);
    node(c, IN_X, 1, 0, NULL);
    c->cuda_refuses = "operator not supported by the CUDA backend"; /* docs/CUDA-BACKEND.md */
}

/* ReduceSum .. ReduceSumSquare: rows reduced innermost (variant 0), two groups around a kept one (1),
   the innermost dim kept (2, the CPU's column-wise path); NaN/Inf among the values in 1 and 2. */
static void case_reduce(op_case* c) {
    static const int64_t axes[N_VARIANTS][2] = {{2, 3}, {1, -1}, {0, 2}};
    int positive = strcmp(c->op, "ReduceLogSum") == 0;
    opara_attr a[2];
    a[0] = attr_ints("axes", axes[c->v], 2);
    a[1] = attr_int("keepdims", c->v != 1);
    input(c, "x", OPARA_DTYPE_F32, 4, X4[c->v], positive ? 0.1 : -2.0, 2.0);
    c->in[0].specials = c->v != 0;
    c->atol = 1e-5, c->rtol = 1e-4; /* the CPU and the block reduction sum in different orders */
    node(c, IN_X, 1, 2, a);
}

/* ArgMax, ArgMin: ties (the special values repeat) and NaN; select_last_index in variant 2. */
static void case_arg_reduce(op_case* c) {
    opara_attr a[3];
    a[0] = attr_int("axis", c->v == 0 ? 1 : c->v == 1 ? -1 : 0);
    a[1] = attr_int("keepdims", c->v != 1);
    a[2] = attr_int("select_last_index", 1);
    x4(c);
    c->in[0].specials = 1;
    node(c, IN_X, 1, c->v == 2 ? 3 : 2, a);
}

/* LogSoftmax, Hardmax: along the last, the channel and the first axis, NaN/Inf in variant 1. */
static void case_softmax_like(op_case* c) {
    opara_attr a[1];
    a[0] = attr_int("axis", c->v == 0 ? -1 : c->v == 1 ? 1 : 0);
    x4(c);
    c->in[0].specials = c->v == 1;
    node(c, IN_X, 1, 1, a);
}

/* CumSum (its canonical axis attribute): inclusive with NaN/Inf, exclusive + reverse, reverse in int64. */
static void case_cum_sum(op_case* c) {
    opara_attr a[3];
    a[0] = attr_int("axis", c->v == 0 ? 3 : c->v == 1 ? 1 : -2);
    a[1] = attr_int("reverse", c->v != 0);
    a[2] = attr_int("exclusive", c->v == 1);
    input(c, "x", c->v == 2 ? OPARA_DTYPE_I64 : OPARA_DTYPE_F32, 4, X4[c->v], -100, 100);
    c->in[0].specials = c->v == 0;
    node(c, IN_X, 1, 3, a);
}

static void case_where(op_case* c) {
    static const char* const ins[] = {"cond", "x", "x2", NULL};
    static const int64_t cd[N_VARIANTS][4] = {{1, 4, 6, 6}, {1, 1, 7, 1}, {1, 4, 1, 5}}, one[1] = {1};
    input(c, "cond", OPARA_DTYPE_BOOL, 4, cd[c->v], 0, 1);
    x4(c);
    input(c, "x2", OPARA_DTYPE_F32, c->v == 0 ? 4 : 1, c->v == 0 ? X4[0] : one, -2, 2);
    node(c, ins, 1, 0, NULL);
}

/* f16 both ways with NaN, inf, -0 and subnormals; f32 to f16 beyond 65504 overflows to inf (the
   other pairs: tests/test_cpu_kernels.c and tests/test_cuda_kernels.c). */
static void case_cast(op_case* c) {
    static const opara_dtype from[N_VARIANTS] = {OPARA_DTYPE_F32, OPARA_DTYPE_F16, OPARA_DTYPE_F32};
    static const opara_dtype to[N_VARIANTS] = {OPARA_DTYPE_I64, OPARA_DTYPE_F32, OPARA_DTYPE_F16};
    opara_attr a[1];
    a[0] = attr_int("to", to[c->v]);
    input(c, "x", from[c->v], 4, X4[c->v], c->v == 2 ? -1e5 : -100, c->v == 2 ? 1e5 : 100);
    c->in[0].specials = c->v > 0;
    node(c, IN_X, 1, 1, a);
}

static void case_pad(op_case* c) {
    static const int64_t pads[8] = {0, 0, 1, 2, 0, 0, 2, 1};
    static const char* const modes[N_VARIANTS] = {"constant", "reflect", "edge"};
    opara_attr a[3];
    a[0] = attr_ints("pads", pads, 8);
    a[1] = attr_str("mode", modes[c->v]);
    a[2] = attr_float("value", 0.5f);
    x4(c);
    node(c, IN_X, 1, c->v == 0 ? 3 : 2, a);
}

static void case_resize(op_case* c) {
    static const float scales[N_VARIANTS][4] = {{1, 1, 2, 2}, {1, 1, 1.5f, 0.6f}, {1, 1, 2, 3}};
    static const char* const modes[N_VARIANTS] = {"nearest", "cubic", "linear"};
    static const char* const coords[N_VARIANTS] = {"asymmetric", "half_pixel", "align_corners"};
    static const float last_two[2] = {3, 2}; /* variant 2's scales again, given through axes (opset 18) */
    static const int64_t axes[2] = {-1, 2};
    opara_attr a[6];
    uint32_t n = 3;
    if (c->v == 1) { /* cubic with ONNX Runtime's other kernel (a = -0.5) and taps outside renormalized */
        a[n++] = attr_float("cubic_coeff_a", -0.5f);
        a[n++] = attr_int("exclude_outside", 1);
        c->atol = c->rtol = 1e-4;
    }
    a[0] = c->v == 2 ? attr_floats("scales", last_two, 2) : attr_floats("scales", scales[c->v], 4);
    a[1] = attr_str("mode", modes[c->v]);
    a[2] = attr_str("coordinate_transformation_mode", coords[c->v]);
    if (c->v == 2) a[n++] = attr_ints("axes", axes, 2);
    x4(c);
    node(c, IN_X, 1, n, a);
}

static const struct {
    const char* op;
    case_fn build;
} cases[] = {
    {"Conv", case_conv},
    {"ConvTranspose", case_conv_transpose},
    {"QuantizeLinear", case_quantize},
    {"DequantizeLinear", case_dequantize},
    {"DynamicQuantizeLinear", case_dynamic_quantize},
    {"ConvInteger", case_quant_conv},
    {"MatMulInteger", case_quant_matmul},
    {"QLinearConv", case_quant_conv},
    {"QLinearMatMul", case_quant_matmul},
    {"MaxPool", case_pool},
    {"AveragePool", case_pool},
    {"GlobalAveragePool", case_unary},
    {"BatchNormalization", case_batch_norm},
    {"PRelu", case_prelu},
    {"InstanceNormalization", case_instance_norm},
    {"LRN", case_lrn},
    {"MeanVarianceNormalization", case_mvn},
    {"Shrink", case_shrink},
    {"GlobalMaxPool", case_global_max_pool},
    {"MaxUnpool", case_max_unpool},
    {"Dropout", case_dropout},
    {"Einsum", case_einsum},
    {"Relu", case_unary},
    {"LeakyRelu", case_leaky_relu},
    {"Sigmoid", case_unary},
    {"Tanh", case_unary},
    {"HardSigmoid", case_hard_sigmoid},
    {"HardSwish", case_unary},
    {"Clip", case_clip},
    {"Add", case_binary},
    {"Sub", case_binary},
    {"Mul", case_binary},
    {"Div", case_div},
    {"Pow", case_pow},
    {"Equal", case_compare},
    {"Greater", case_compare},
    {"Less", case_compare},
    {"GreaterOrEqual", case_compare},
    {"LessOrEqual", case_compare},
    {"And", case_logic_binary},
    {"Or", case_logic_binary},
    {"Xor", case_logic_binary},
    {"Mod", case_mod},
    {"BitShift", case_bit_shift},
    {"Not", case_logic_unary},
    {"IsNaN", case_logic_unary},
    {"IsInf", case_logic_unary},
    {"Max", case_variadic},
    {"Min", case_variadic},
    {"Mean", case_variadic},
    {"Sum", case_variadic},
    {"Sqrt", case_sqrt},
    {"Erf", case_unary},
    {"Gelu", case_gelu},
    {"Concat", case_concat},
    {"Split", case_split},
    {"Slice", case_slice},
    {"Gather", case_gather},
    {"GatherElements", case_gather_elements},
    {"ScatterElements", case_scatter_elements},
    {"Scatter", case_scatter_elements},
    {"GatherND", case_gather_nd},
    {"ScatterND", case_scatter_nd},
    {"Size", case_size},
    {"Trilu", case_trilu},
    {"Tile", case_tile},
    {"DepthToSpace", case_depth_space},
    {"SpaceToDepth", case_depth_space},
    {"EyeLike", case_eye_like},
    {"OneHot", case_one_hot},
    {"ReverseSequence", case_reverse_sequence},
    {"Reshape", case_reshape},
    {"Flatten", case_flatten},
    {"Transpose", case_transpose},
    {"Squeeze", case_squeeze},
    {"Unsqueeze", case_unsqueeze},
    {"Expand", case_expand},
    {"Gemm", case_gemm},
    {"LSTM", case_rnn},
    {"GRU", case_rnn},
    {"RNN", case_rnn},
    {"MatMul", case_matmul},
    {"Softmax", case_softmax},
    {"LayerNormalization", case_layer_norm},
    {"ReduceMean", case_reduce_mean},
    {"ReduceSum", case_reduce},
    {"ReduceMax", case_reduce},
    {"ReduceMin", case_reduce},
    {"ReduceProd", case_reduce},
    {"ReduceL1", case_reduce},
    {"ReduceL2", case_reduce},
    {"ReduceLogSum", case_reduce},
    {"ReduceLogSumExp", case_reduce},
    {"ReduceSumSquare", case_reduce},
    {"ArgMax", case_arg_reduce},
    {"ArgMin", case_arg_reduce},
    {"LogSoftmax", case_softmax_like},
    {"Hardmax", case_softmax_like},
    {"CumSum", case_cum_sum},
    {"Where", case_where},
    {"Cast", case_cast},
    {"Pad", case_pad},
    {"Resize", case_resize},
    {"TopK", case_topk},
    {"GridSample", case_grid_sample},
    {"Det", case_det},
    {"Neg", case_math},
    {"Abs", case_math},
    {"Exp", case_math},
    {"Log", case_math_positive},
    {"Reciprocal", case_math},
    {"Floor", case_math},
    {"Ceil", case_math},
    {"Round", case_math},
    {"Sign", case_math},
    {"Sin", case_math},
    {"Cos", case_math},
    {"Tan", case_math_half_pi},
    {"Softplus", case_math},
    {"Softsign", case_math},
    {"Elu", case_math},
    {"Selu", case_math},
    {"Celu", case_math},
    {"ThresholdedRelu", case_math},
    {"Asin", case_math_unit},
    {"Acos", case_math_unit},
    {"Atan", case_math},
    {"Sinh", case_math},
    {"Cosh", case_math},
    {"Asinh", case_math},
    {"Acosh", case_math_from_one},
    {"Atanh", case_math_unit},
};

/* The table's operators, from its X-macro: a new row without a case above fails every_op_has_a_case. */
static const char* const table_ops[] = {
#define TABLE_OP(id, name, ...) name,
    OPARA__OPS(TABLE_OP)
#undef TABLE_OP
};

static case_fn find_case(const char* op) {
    size_t i;
    for (i = 0; i < sizeof cases / sizeof cases[0]; ++i)
        if (strcmp(cases[i].op, op) == 0) return cases[i].build;
    return NULL;
}

/* ---- the harness -------------------------------------------------------------------------------- */

/* The backends checked against the CPU; usable() says why not when one cannot run here. */
static const struct {
    const char* name;
    opara_backend backend;
    int (*usable)(char* why, size_t cap);
} backends[] = {{"cuda", OPARA_BACKEND_CUDA, cuda_usable}};

static const uint16_t F16_SPECIALS[4] = {0x7E00, 0xFC00, 0x8000, 0x0003};

/* binary16 by its definition: sign * 2^(e-15) * (1 + m/1024), subnormals m * 2^-24. */
static double f16_value(uint16_t h) {
    int e = (h >> 10) & 0x1F, m = h & 0x3FF;
    double v = e == 0 ? ldexp((double)m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(1.0 + m / 1024.0, e - 15);
    return (h & 0x8000) ? -v : v;
}

static void fill(op_case* c, const case_input* x, void* data) {
    int64_t n = numel(x->rank, x->dims), i;
    for (i = 0; i < n; ++i) {
        double v = rnd(c, x->lo, x->hi);
        switch (x->dtype) {
        case OPARA_DTYPE_F32:
            ((float*)data)[i] = x->specials && i % 7 == 3 ? SPECIALS[(i / 7) % (sizeof SPECIALS / sizeof SPECIALS[0])] : (float)v;
            break;
        case OPARA_DTYPE_I64: ((int64_t*)data)[i] = (int64_t)floor(v + 0.5); break;
        case OPARA_DTYPE_I32: ((int32_t*)data)[i] = (int32_t)floor(v + 0.5); break;
        case OPARA_DTYPE_F16: /* any finite pattern (lo, hi unused); specials: NaN, inf, -0, a subnormal */
            ((uint16_t*)data)[i] = x->specials && i % 7 == 3 ? F16_SPECIALS[(i / 7) % 4]
                                                            : (uint16_t)(rnd(c, 0, 0xF7FF) + (rnd(c, 0, 1) < 0.5 ? 0x8000 : 0));
            break;
        case OPARA_DTYPE_U8: ((uint8_t*)data)[i] = (uint8_t)floor(v + 0.5); break;
        case OPARA_DTYPE_I8: ((int8_t*)data)[i] = (int8_t)floor(v + 0.5); break;
        case OPARA_DTYPE_BOOL: ((uint8_t*)data)[i] = v >= 0.5 * (x->lo + x->hi); break;
        default: memset((uint8_t*)data + i * (int64_t)opara_dtype_size(x->dtype), 0, opara_dtype_size(x->dtype)); break;
        }
    }
}

/* Runs m on one backend with the inputs; NULL (and the reason logged) when it cannot. */
static opara_session* run_on(opara_test* T, opara_runtime* rt, const opara_model* m, opara_backend backend,
                             const opara_tensor* in, uint32_t n_in, const char* what) {
    opara_session_desc d;
    opara_session* s = NULL;
    opara_result r;
    memset(&d, 0, sizeof d);
    d.backend = backend;
    d.threads = 2;
    if ((r = opara_session_create(rt, m, &d, &s)) != OPARA_OK) {
        ot__fail_at(T, __FILE__, __LINE__, "%s: session: %s: %s", what, opara_result_string(r),
                    opara_runtime_last_error(rt));
        return NULL;
    }
    if ((r = opara_session_run(s, in, n_in, NULL, 0)) != OPARA_OK) {
        ot__fail_at(T, __FILE__, __LINE__, "%s: run: %s: %s", what, opara_result_string(r), opara_session_last_error(s));
        opara_session_destroy(s);
        return NULL;
    }
    return s;
}

/* A documented limitation: the backend refuses m as unsupported, saying `why`. */
static int refused(opara_test* T, opara_runtime* rt, const opara_model* m, opara_backend backend, const char* why,
                   const char* what) {
    opara_session_desc d;
    opara_session* s = NULL;
    opara_result r;
    memset(&d, 0, sizeof d);
    d.backend = backend;
    r = opara_session_create(rt, m, &d, &s);
    opara_session_destroy(s);
    OT_LOG("%s: refused as documented: %s", what, opara_runtime_last_error(rt));
    return (r == OPARA_ERR_UNSUPPORTED || r == OPARA_ERR_UNSUPPORTED_OP) && strstr(opara_runtime_last_error(rt), why);
}

static double value_at(opara_dtype dt, const void* p, int64_t i) {
    switch (dt) {
    case OPARA_DTYPE_F32: return ((const float*)p)[i];
    case OPARA_DTYPE_I64: return (double)((const int64_t*)p)[i];
    case OPARA_DTYPE_I32: return ((const int32_t*)p)[i];
    case OPARA_DTYPE_F16: return f16_value(((const uint16_t*)p)[i]);
    case OPARA_DTYPE_BOOL: case OPARA_DTYPE_U8: return ((const uint8_t*)p)[i];
    case OPARA_DTYPE_I8: return ((const int8_t*)p)[i];
    default: return 0;
    }
}

/* Every output of the two sessions: same dtype and shape, values within the case's tolerance. */
static void compare_outputs(opara_test* T, const op_case* c, const opara_session* ref, const opara_session* got,
                            const char* what) {
    uint32_t o, n_out = opara_session_output_count(ref);
    CHECK_EQ(opara_session_output_count(got), n_out);
    for (o = 0; o < n_out; ++o) {
        opara_tensor_info a, b;
        const void *pa = opara_session_output_data(ref, o), *pb = opara_session_output_data(got, o);
        int64_t n, i, bad = 0;
        double worst = 0;
        REQUIRE(opara_session_output_info(ref, o, &a) == OPARA_OK && opara_session_output_info(got, o, &b) == OPARA_OK);
        if (a.dtype != b.dtype || a.rank != b.rank || memcmp(a.dims, b.dims, (size_t)a.rank * sizeof a.dims[0]) != 0) {
            ot__fail_at(T, __FILE__, __LINE__, "%s: output %u differs in dtype or shape", what, o);
            continue;
        }
        REQUIRE(pa && pb);
        n = numel(a.rank, a.dims);
        for (i = 0; i < n; ++i) {
            double x = value_at(a.dtype, pa, i), y = value_at(a.dtype, pb, i), d = fabs(x - y);
            double tol = a.dtype == OPARA_DTYPE_F32 ? c->atol + c->rtol * fabs(x) : 0;
            if (x == y || d <= tol || (x != x && y != y)) continue;
            if (!bad++ || d > worst) OT_LOG("%s: output %u [%lld]: cpu %.9g, backend %.9g", what, o, (long long)i, x, y);
            if (d > worst) worst = d;
        }
        if (bad)
            ot__fail_at(T, __FILE__, __LINE__, "%s: output %u: %lld of %lld elements differ (worst %.3g)", what, o,
                        (long long)bad, (long long)n, worst);
    }
}

/* The case's inputs with their random values (data[i]: malloc'd, the caller frees them). */
static void case_tensors(op_case* c, opara_tensor* in, void** data) {
    uint32_t i;
    for (i = 0; i < c->n_inputs; ++i) {
        const case_input* x = &c->in[i];
        data[i] = calloc((size_t)numel(x->rank, x->dims) + 1, 8);
        fill(c, x, data[i]);
        memset(&in[i], 0, sizeof in[i]);
        in[i].name = x->name, in[i].dtype = x->dtype, in[i].rank = x->rank, in[i].data = data[i];
        memcpy(in[i].dims, x->dims, sizeof x->dims);
    }
}

/* Builds the case's model, runs it on the CPU and on backend `k`, compares. */
static void check_case(opara_test* T, opara_runtime* rt, const char* op, case_fn build, int v, size_t k) {
    op_case c;
    opara_model* m = NULL;
    opara_tensor in[MAX_INPUTS];
    void* data[MAX_INPUTS];
    opara_session *ref, *got;
    char what[96];
    uint32_t i;
    opara_result r;
    memset(&c, 0, sizeof c);
    c.op = op;
    c.v = v;
    c.rng = 12345u + 977u * (unsigned)v + (unsigned)strlen(op) * 31u;
    c.atol = c.rtol = 1e-5;
    snprintf(what, sizeof what, "%s, variant %d, %s", op, v, backends[k].name);
    REQUIRE(opara_builder_create(rt, &c.b) == OPARA_OK);
    build(&c);
    r = opara_builder_finish(c.b, &m);
    opara_builder_destroy(c.b);
    if (r != OPARA_OK) {
        ot__fail_at(T, __FILE__, __LINE__, "%s: the case's model: %s: %s", what, opara_result_string(r),
                    opara_runtime_last_error(rt));
        return;
    }
    case_tensors(&c, in, data);
    ref = run_on(T, rt, m, OPARA_BACKEND_CPU, in, c.n_inputs, what);
    if (c.cuda_refuses && backends[k].backend == OPARA_BACKEND_CUDA) {
        got = NULL;
        CHECK(ref && refused(T, rt, m, backends[k].backend, c.cuda_refuses, what));
    } else {
        got = ref ? run_on(T, rt, m, backends[k].backend, in, c.n_inputs, what) : NULL;
    }
    if (ref && got) compare_outputs(T, &c, ref, got, what);
    opara_session_destroy(got);
    opara_session_destroy(ref);
    for (i = 0; i < c.n_inputs; ++i) free(data[i]);
    opara_model_destroy(m);
}

/* ---- the CUDA element-wise fast paths (src/cuda/opara_cuda_lower.c collapses shapes; binary_f32 and
   strided_copy take up to 4 dims in arguments, copies move 8-byte units where runs allow): shapes that
   take each path and shapes that just miss it, compared bit for bit with the CPU ---------------------- */

typedef struct walk_shape {
    int32_t rank;
    int64_t dims[5];
} walk_shape;

/* Binary operand pairs: x op x2. */
static const struct { walk_shape x, x2; } WALK_BINARY[] = {
    {{3, {3, 5, 7}}, {3, {3, 5, 7}}},            /* dense, odd n: one dim */
    {{3, {2, 4, 8}}, {3, {2, 4, 8}}},            /* dense, n % 4 == 0 */
    {{2, {4, 6}}, {0, {0}}},                     /* a 0-d scalar */
    {{1, {1}}, {2, {5, 7}}},                     /* a scalar-like first operand */
    {{3, {2, 3, 8}}, {1, {8}}},                  /* a bias along the innermost dim */
    {{3, {2, 3, 7}}, {1, {7}}},                  /* the same, odd */
    {{4, {2, 3, 4, 5}}, {4, {1, 3, 1, 1}}},      /* per channel */
    {{4, {2, 3, 4, 5}}, {3, {3, 1, 1}}},         /* per channel, lower rank */
    {{4, {2, 3, 4, 4}}, {4, {2, 1, 1, 4}}},      /* an attention mask */
    {{3, {2, 3, 4}}, {3, {2, 1, 4}}},            /* broadcast along the middle dim */
    {{3, {3, 1, 5}}, {3, {1, 4, 1}}},            /* both operands broadcast */
    {{4, {1, 6, 1, 5}}, {3, {6, 1, 1}}},         /* size-1 dims */
    {{5, {2, 3, 2, 3, 2}}, {5, {2, 1, 2, 1, 2}}}, /* 5 dims after collapsing: the meta path */
    {{5, {2, 1, 3, 1, 2}}, {5, {1, 2, 1, 2, 1}}}, /* alternating broadcasts: 4 dims */
};

static void case_walk_binary(op_case* c) {
    static const char* const ops[4] = {"Add", "Sub", "Mul", "Div"};
    const walk_shape *x = &WALK_BINARY[c->v].x, *x2 = &WALK_BINARY[c->v].x2;
    c->op = ops[c->v % 4];
    input(c, "x", OPARA_DTYPE_F32, x->rank, x->dims, -2, 2);
    input(c, "x2", OPARA_DTYPE_F32, x2->rank, x2->dims, 0.5, 2);
    node(c, IN_XY, 1, 0, NULL);
    c->atol = c->rtol = 0;
}

/* Two binary nodes in a chain, the second's output free to reuse its input's block (in place). */
static void case_walk_chain(op_case* c) {
    static const int64_t xd[3] = {2, 3, 8}, bd[1] = {8};
    static const char* const first[] = {"x", "x2", NULL}, *const second[] = {"t", "x2", NULL};
    static const char* const t[1] = {"t"}, *const y[1] = {"y"};
    input(c, "x", OPARA_DTYPE_F32, 3, xd, -2, 2);
    input(c, "x2", OPARA_DTYPE_F32, 1, bd, -2, 2);
    opara_builder_add_node(c->b, "Add", "first", 2, first, 1, t, 0, NULL);
    opara_builder_add_node(c->b, "Mul", "second", 2, second, 1, y, 0, NULL);
    opara_builder_add_output(c->b, "y");
    c->atol = c->rtol = 0;
}

/* Transposes: x's shape and dtype, the permutation. */
static const struct { walk_shape x; opara_dtype dt; int64_t perm[5]; } WALK_TRANSPOSE[] = {
    {{4, {2, 4, 3, 6}}, OPARA_DTYPE_F32, {0, 2, 1, 3}},    /* attention heads: runs of 6, 8-byte units */
    {{4, {2, 4, 3, 5}}, OPARA_DTYPE_F32, {0, 2, 1, 3}},    /* runs of 5: 4-byte elements */
    {{4, {2, 4, 3, 6}}, OPARA_DTYPE_F32, {0, 2, 3, 1}},    /* the innermost dim not contiguous */
    {{5, {2, 3, 2, 3, 2}}, OPARA_DTYPE_F32, {4, 3, 2, 1, 0}}, /* 5 dims: the meta path */
    {{3, {2, 3, 16}}, OPARA_DTYPE_U8, {1, 0, 2}},          /* bytes in 8-byte units */
    {{3, {2, 3, 6}}, OPARA_DTYPE_U8, {1, 0, 2}},           /* bytes in 2-byte units */
    {{3, {2, 3, 3}}, OPARA_DTYPE_I64, {1, 0, 2}},          /* 8-byte elements */
    {{4, {1, 3, 1, 4}}, OPARA_DTYPE_F32, {2, 1, 0, 3}},    /* only size-1 dims move: one dim */
};

static void case_walk_transpose(op_case* c) {
    opara_attr a[1];
    const walk_shape* x = &WALK_TRANSPOSE[c->v].x;
    c->op = "Transpose";
    input(c, "x", WALK_TRANSPOSE[c->v].dt, x->rank, x->dims, -100, 100);
    a[0] = attr_ints("perm", WALK_TRANSPOSE[c->v].perm, x->rank);
    node(c, IN_X, 1, 1, a);
    c->atol = c->rtol = 0;
}

/* Concats along axis 1 of two parts: channels of even and odd image sizes, 4-byte and 1-byte elements. */
static const struct { walk_shape x, x2; opara_dtype dt; } WALK_CONCAT[] = {
    {{4, {2, 2, 4, 4}}, {4, {2, 4, 4, 4}}, OPARA_DTYPE_F32}, /* outer x contiguous run, 8-byte units */
    {{4, {2, 3, 5, 5}}, {4, {2, 2, 5, 5}}, OPARA_DTYPE_F32}, /* odd runs and offsets */
    {{3, {3, 2, 4}}, {3, {3, 6, 4}}, OPARA_DTYPE_U8},
    {{2, {3, 1}}, {2, {3, 2}}, OPARA_DTYPE_I64},
};

static void case_walk_concat(op_case* c) {
    opara_attr a[1];
    c->op = "Concat";
    input(c, "x", WALK_CONCAT[c->v].dt, WALK_CONCAT[c->v].x.rank, WALK_CONCAT[c->v].x.dims, -100, 100);
    input(c, "x2", WALK_CONCAT[c->v].dt, WALK_CONCAT[c->v].x2.rank, WALK_CONCAT[c->v].x2.dims, -100, 100);
    a[0] = attr_int("axis", 1);
    node(c, IN_XY, 1, 1, a);
    c->atol = c->rtol = 0;
}

/* Slices of [2, 4, 8] (the innermost run and offsets even or odd), Splits and Expands. */
static void case_walk_slice_split_expand(op_case* c) {
    static const int64_t x[3] = {2, 4, 8}, starts[2][2] = {{1, 2}, {1, 3}}, ends[2][2] = {{3, 6}, {3, 6}};
    static const int64_t axes[2] = {1, 2}, split[2] = {2, 6}, small[3] = {1, 4, 1}, shape[3] = {3, 4, 6};
    opara_attr a[3];
    if (c->v < 2) {
        c->op = "Slice";
        a[0] = attr_ints("starts", starts[c->v], 2);
        a[1] = attr_ints("ends", ends[c->v], 2);
        a[2] = attr_ints("axes", axes, 2);
        input_f32(c, "x", 3, x);
        node(c, IN_X, 1, 3, a);
    } else if (c->v == 2) {
        c->op = "Split";
        a[0] = attr_int("axis", 2);
        a[1] = attr_ints("split", split, 2);
        input_f32(c, "x", 3, x);
        node(c, IN_X, 2, 2, a);
    } else {
        c->op = "Expand";
        a[0] = attr_ints("shape", shape, 3);
        input_f32(c, "x", 3, small);
        node(c, IN_X, 1, 1, a);
    }
    c->atol = c->rtol = 0;
}

OT_TEST(cuda_elementwise_fast_paths_agree_with_the_cpu_bit_for_bit) {
    static const struct { case_fn build; int n; } walks[] = {
        {case_walk_binary, (int)(sizeof WALK_BINARY / sizeof WALK_BINARY[0])},
        {case_walk_chain, 1},
        {case_walk_transpose, (int)(sizeof WALK_TRANSPOSE / sizeof WALK_TRANSPOSE[0])},
        {case_walk_concat, (int)(sizeof WALK_CONCAT / sizeof WALK_CONCAT[0])},
        {case_walk_slice_split_expand, 4},
    };
    opara_runtime* rt;
    char why[256];
    size_t i, k;
    int v;
    for (k = 0; k < sizeof backends / sizeof backends[0]; ++k)
        if (backends[k].backend == OPARA_BACKEND_CUDA) break;
    if (k == sizeof backends / sizeof backends[0] || !backends[k].usable(why, sizeof why)) SKIP("the CUDA backend cannot run here");
    REQUIRE(opara_runtime_create(NULL, &rt) == OPARA_OK);
    for (i = 0; i < sizeof walks / sizeof walks[0]; ++i)
        for (v = 0; v < walks[i].n; ++v) check_case(T, rt, "walk", walks[i].build, v, k);
    opara_runtime_destroy(rt);
}

/* ---- an activation the ONNX importer fused into Add, Sub, Mul or Div (attribute "activation") ---- */

static const char* const FUSED_OPS[4] = {"Add", "Sub", "Mul", "Div"};
static const char* const FUSED_ACTS[3] = {"Relu", "Gelu", "GeluTanh"};
#define N_FUSED 12 /* FUSED_OPS x FUSED_ACTS */

/* Operand shapes of variant v: a bias along the innermost dim (the fast walk of 2 dims), dense, and 5
   dims that stay 5 (the meta walk); x holds NaN, infinities and signed zeros every 7th element. */
static void fused_inputs(op_case* c) {
    static const walk_shape shapes[3][2] = {
        {{3, {2, 3, 8}}, {1, {8}}}, {{2, {5, 7}}, {2, {5, 7}}}, {{5, {2, 3, 2, 3, 2}}, {5, {2, 1, 2, 1, 2}}}};
    const walk_shape* s = shapes[(c->v / 4) % 3];
    input(c, "x", OPARA_DTYPE_F32, s[0].rank, s[0].dims, -3, 3);
    c->in[0].specials = 1;
    input(c, "x2", OPARA_DTYPE_F32, s[1].rank, s[1].dims, 0.5, 2);
}

/* Variant v: FUSED_OPS[v % 4] with FUSED_ACTS[v / 4] fused (the model a .opara file holds). */
static void case_fused_act(op_case* c) {
    opara_attr a[1];
    c->op = FUSED_OPS[c->v % 4];
    fused_inputs(c);
    a[0] = attr_str("activation", FUSED_ACTS[c->v / 4]);
    node(c, IN_XY, 1, 1, a);
    c->atol = c->rtol = c->v < 4 ? 0 : 1e-5; /* Relu exactly; Gelu as the Gelu case (the GPU's erff, tanhf) */
}

/* The same as two nodes: the binary operator, then Relu or Gelu (approximate per variant). */
static void case_unfused_act(op_case* c) {
    static const char* const ins[] = {"x", "x2", NULL}, *const act_in[] = {"t", NULL};
    static const char* const t[1] = {"t"}, *const y[1] = {"y"};
    opara_attr a[1];
    fused_inputs(c);
    opara_builder_add_node(c->b, FUSED_OPS[c->v % 4], "op", 2, ins, 1, t, 0, NULL);
    a[0] = attr_str("approximate", c->v >= 8 ? "tanh" : "none");
    opara_builder_add_node(c->b, c->v < 4 ? "Relu" : "Gelu", "act", 1, act_in, 1, y, c->v < 4 ? 0 : 1, a);
    opara_builder_add_output(c->b, "y");
}

/* Runs variant v of build on the CPU with its random inputs; the session (NULL after a failure). */
static opara_session* run_case_on_cpu(opara_test* T, opara_runtime* rt, case_fn build, int v, const char* what) {
    op_case c;
    opara_model* m = NULL;
    opara_tensor in[MAX_INPUTS];
    void* data[MAX_INPUTS];
    opara_session* s = NULL;
    uint32_t i;
    memset(&c, 0, sizeof c);
    c.v = v;
    c.rng = 777u + 31u * (unsigned)v; /* the same inputs for the fused and the unfused model */
    if (opara_builder_create(rt, &c.b) != OPARA_OK) return NULL;
    build(&c);
    if (opara_builder_finish(c.b, &m) != OPARA_OK) {
        ot__fail_at(T, __FILE__, __LINE__, "%s: the model: %s", what, opara_runtime_last_error(rt));
        opara_builder_destroy(c.b);
        return NULL;
    }
    opara_builder_destroy(c.b);
    case_tensors(&c, in, data);
    s = run_on(T, rt, m, OPARA_BACKEND_CPU, in, c.n_inputs, what);
    for (i = 0; i < c.n_inputs; ++i) free(data[i]);
    opara_model_destroy(m);
    return s;
}

/* On the CPU the fused operator computes what the two nodes compute, bit for bit (NaN included). */
OT_TEST(cpu_fused_activation_matches_the_separate_nodes_bit_for_bit) {
    opara_runtime* rt;
    int v;
    REQUIRE(opara_runtime_create(NULL, &rt) == OPARA_OK);
    for (v = 0; v < N_FUSED; ++v) {
        char what[64];
        opara_session *fused, *unfused;
        opara_tensor_info a, b;
        snprintf(what, sizeof what, "%s+%s", FUSED_OPS[v % 4], FUSED_ACTS[v / 4]);
        fused = run_case_on_cpu(T, rt, case_fused_act, v, what);
        unfused = run_case_on_cpu(T, rt, case_unfused_act, v, what);
        if (fused && unfused && opara_session_output_info(fused, 0, &a) == OPARA_OK &&
            opara_session_output_info(unfused, 0, &b) == OPARA_OK) {
            size_t bytes = (size_t)numel(a.rank, a.dims) * 4;
            CHECK_EQ(numel(a.rank, a.dims), numel(b.rank, b.dims));
            if (memcmp(opara_session_output_data(fused, 0), opara_session_output_data(unfused, 0), bytes) != 0)
                ot__fail_at(T, __FILE__, __LINE__, "%s: the fused output differs from the two nodes'", what);
        } else {
            CHECK(0);
        }
        opara_session_destroy(fused);
        opara_session_destroy(unfused);
    }
    opara_runtime_destroy(rt);
}

/* opara_binary_f32 with the activation: the CUDA backend against the CPU (Relu bit for bit). */
OT_TEST(cuda_fused_activation_agrees_with_the_cpu) {
    opara_runtime* rt;
    char why[256];
    size_t k;
    int v;
    for (k = 0; k < sizeof backends / sizeof backends[0]; ++k)
        if (backends[k].backend == OPARA_BACKEND_CUDA) break;
    if (k == sizeof backends / sizeof backends[0] || !backends[k].usable(why, sizeof why)) SKIP("the CUDA backend cannot run here");
    REQUIRE(opara_runtime_create(NULL, &rt) == OPARA_OK);
    for (v = 0; v < N_FUSED; ++v) check_case(T, rt, "fused", case_fused_act, v, k);
    opara_runtime_destroy(rt);
}

/* ---- tests -------------------------------------------------------------------------------------- */

OT_TEST(every_op_has_a_case) {
    size_t i;
    CHECK_EQ(sizeof table_ops / sizeof table_ops[0], OPARA__OP_COUNT);
    for (i = 0; i < sizeof table_ops / sizeof table_ops[0]; ++i)
        if (!find_case(table_ops[i]))
            ot__fail_at(T, __FILE__, __LINE__, "operator %s has no case in tests/test_ops.c (see the note at its top)",
                        table_ops[i]);
    for (i = 0; i < sizeof cases / sizeof cases[0]; ++i) /* and no case for an operator the table lacks */
        if (opara__op_from_name(cases[i].op) == OPARA__OP_COUNT)
            ot__fail_at(T, __FILE__, __LINE__, "case %s names no operator of the table", cases[i].op);
}

OT_TEST(every_op_agrees_with_the_cpu_on_every_backend) {
    opara_runtime* rt;
    size_t i, k;
    int v, ran = 0;
    REQUIRE(opara_runtime_create(NULL, &rt) == OPARA_OK);
    for (k = 0; k < sizeof backends / sizeof backends[0]; ++k) {
        char why[256];
        if (!backends[k].usable(why, sizeof why)) {
            OT_LOG("%s not checked: %s", backends[k].name, why);
            continue;
        }
        for (i = 0; i < sizeof table_ops / sizeof table_ops[0]; ++i) {
            case_fn build = find_case(table_ops[i]);
            if (!build) continue; /* every_op_has_a_case names it */
            for (v = 0; v < N_VARIANTS; ++v) check_case(T, rt, table_ops[i], build, v, k);
        }
        OT_LOG("%s: %u operators x %d variants checked", backends[k].name, (unsigned)OPARA__OP_COUNT, N_VARIANTS);
        ran++;
    }
    opara_runtime_destroy(rt);
    if (!ran) SKIP("no backend other than the CPU can run here");
}

OT_TEST(softmax_rows_agree_with_the_cpu_around_the_row_kernel_limit) {
    static const char* const ops[2] = {"Softmax", "LogSoftmax"};
    opara_runtime* rt;
    size_t k;
    int o, v, ran = 0;
    REQUIRE(opara_runtime_create(NULL, &rt) == OPARA_OK);
    for (k = 0; k < sizeof backends / sizeof backends[0]; ++k) {
        char why[256];
        if (!backends[k].usable(why, sizeof why)) continue;
        for (o = 0; o < 2; ++o)
            for (v = 0; v < 5; ++v) check_case(T, rt, ops[o], case_softmax_rows, v, k);
        ran++;
    }
    opara_runtime_destroy(rt);
    if (!ran) SKIP("no backend other than the CPU can run here");
}

static const opara_test_case tests[] = {
    OT_CASE(every_op_has_a_case),
    OT_CASE(every_op_agrees_with_the_cpu_on_every_backend),
    OT_CASE(cuda_elementwise_fast_paths_agree_with_the_cpu_bit_for_bit),
    OT_CASE(softmax_rows_agree_with_the_cpu_around_the_row_kernel_limit),
    OT_CASE(cpu_fused_activation_matches_the_separate_nodes_bit_for_bit),
    OT_CASE(cuda_fused_activation_agrees_with_the_cpu),
};

int main(int argc, char** argv) { return opara_test_main(argc, argv, tests, OT_COUNT(tests)); }
