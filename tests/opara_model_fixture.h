/* A small branchy model built with the public builder API, shared by the model tests and
   the fuzz seed generator. Include after opara.h.

   x [N,3,8,8] -> Conv(w1 [4,3,3,3], b1, pads 1) -> c1 -> Relu -> r1
   r1 -> Conv 1x1 (w2 [2,4,1,1]) -> a [N,2,8,8]          (branch a, also a graph output)
   r1 -> MaxPool(3x3, stride 1, pads 1) -> b [N,4,8,8]     (branch b)
   Concat(a, b, axis 1) -> cat [N,6,8,8] -> GlobalAveragePool -> gap [N,6,1,1]
   -> Flatten -> f [N,6] -> Gemm(wf [5,6], bf [5], transB) -> y [N,5]          (output)
   Tensor order: x, w1, b1, w2, wf, bf, then node outputs c1, r1, a, b, cat, gap, f, y. */
#ifndef OPARA_MODEL_FIXTURE_H
#define OPARA_MODEL_FIXTURE_H

#include <string.h>

#if defined(__GNUC__) || defined(__clang__)
#  define FIXTURE_UNUSED __attribute__((unused))
#else
#  define FIXTURE_UNUSED
#endif

static void fixture_fill(float* p, size_t n, float scale) {
    size_t i;
    for (i = 0; i < n; ++i) p[i] = scale * (float)((int)(i % 17) - 8);
}

static opara_attr fixture_ints(const char* name, const int64_t* v, uint32_t n) {
    opara_attr a;
    memset(&a, 0, sizeof a);
    a.name = name;
    a.type = OPARA_ATTR_INTS;
    a.count = n;
    a.v.ints = v;
    return a;
}

static opara_attr fixture_int(const char* name, int64_t v) {
    opara_attr a;
    memset(&a, 0, sizeof a);
    a.name = name;
    a.type = OPARA_ATTR_INT;
    a.count = 1;
    a.v.i = v;
    return a;
}

/* Adds the fixture's tensors and nodes to b; returns the first failure. */
static opara_result fixture_build(opara_builder* b) {
    static float w1[4 * 3 * 3 * 3], b1[4], w2[2 * 4], wf[5 * 6], bf[5];
    static const int64_t x_dims[] = {OPARA_DIM_BATCH, 3, 8, 8}, w1_dims[] = {4, 3, 3, 3}, b1_dims[] = {4};
    static const int64_t w2_dims[] = {2, 4, 1, 1}, wf_dims[] = {5, 6}, bf_dims[] = {5};
    static const int64_t pads1[] = {1, 1, 1, 1}, k3[] = {3, 3}, s1[] = {1, 1};
    const char* conv1_in[] = {"x", "w1", "b1"};
    const char* conv1_out[] = {"c1"};
    const char* relu_in[] = {"c1"};
    const char* relu_out[] = {"r1"};
    const char* conv2_in[] = {"r1", "w2", ""};
    const char* conv2_out[] = {"a"};
    const char* pool_in[] = {"r1"};
    const char* pool_out[] = {"b"};
    const char* cat_in[] = {"a", "b"};
    const char* cat_out[] = {"cat"};
    const char* gap_in[] = {"cat"};
    const char* gap_out[] = {"gap"};
    const char* flat_in[] = {"gap"};
    const char* flat_out[] = {"f"};
    const char* gemm_in[] = {"f", "wf", "bf"};
    const char* gemm_out[] = {"y"};
    opara_attr conv1_attrs[1], pool_attrs[3], cat_attrs[1], gemm_attrs[1];
    opara_result r;
    fixture_fill(w1, 4 * 3 * 3 * 3, 0.01f);
    fixture_fill(b1, 4, 0.1f);
    fixture_fill(w2, 8, 0.02f);
    fixture_fill(wf, 30, 0.03f);
    fixture_fill(bf, 5, 0.5f);
    conv1_attrs[0] = fixture_ints("pads", pads1, 4);
    pool_attrs[0] = fixture_ints("kernel_shape", k3, 2);
    pool_attrs[1] = fixture_ints("strides", s1, 2);
    pool_attrs[2] = fixture_ints("pads", pads1, 4);
    cat_attrs[0] = fixture_int("axis", 1);
    gemm_attrs[0] = fixture_int("transB", 1);
    opara_builder_add_input(b, "x", OPARA_DTYPE_F32, 4, x_dims);
    opara_builder_add_constant(b, "w1", OPARA_DTYPE_F32, 4, w1_dims, w1, sizeof w1);
    opara_builder_add_constant(b, "b1", OPARA_DTYPE_F32, 1, b1_dims, b1, sizeof b1);
    opara_builder_add_constant(b, "w2", OPARA_DTYPE_F32, 4, w2_dims, w2, sizeof w2);
    opara_builder_add_constant(b, "wf", OPARA_DTYPE_F32, 2, wf_dims, wf, sizeof wf);
    opara_builder_add_constant(b, "bf", OPARA_DTYPE_F32, 1, bf_dims, bf, sizeof bf);
    opara_builder_add_node(b, "Conv", "conv1", 3, conv1_in, 1, conv1_out, 1, conv1_attrs);
    opara_builder_add_node(b, "Relu", "relu1", 1, relu_in, 1, relu_out, 0, NULL);
    opara_builder_add_node(b, "Conv", "conv2", 3, conv2_in, 1, conv2_out, 0, NULL);
    opara_builder_add_node(b, "MaxPool", "pool", 1, pool_in, 1, pool_out, 3, pool_attrs);
    opara_builder_add_node(b, "Concat", "cat", 2, cat_in, 1, cat_out, 1, cat_attrs);
    opara_builder_add_node(b, "GlobalAveragePool", "gap", 1, gap_in, 1, gap_out, 0, NULL);
    opara_builder_add_node(b, "Flatten", "flatten", 1, flat_in, 1, flat_out, 0, NULL);
    opara_builder_add_node(b, "Gemm", "fc", 3, gemm_in, 1, gemm_out, 1, gemm_attrs);
    opara_builder_add_output(b, "y");
    r = opara_builder_add_output(b, "a");
    return r;
}

/* The fixture's .opara image in a buffer from opara_builder_save_memory (free with opara_free). */
FIXTURE_UNUSED static opara_result fixture_image(opara_runtime* rt, void** data, size_t* size) {
    opara_builder* b = NULL;
    opara_result r = opara_builder_create(rt, &b);
    if (r != OPARA_OK) return r;
    fixture_build(b);
    r = opara_builder_save_memory(b, data, size);
    opara_builder_destroy(b);
    return r;
}

#endif
