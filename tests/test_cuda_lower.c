/* The CUDA lowering on its own (host code: no driver, no device memory, nothing runs):
   - index limits: tensors at the size our 32-bit grid-stride kernels can index (2^31 - 1 - 256 *
     65535 + 1 elements) lower, one element more is OPARA_ERR_LIMIT_EXCEEDED naming the node, the
     op and the size; grids beyond the launch limits (y, z <= 65535: a 65536-group convolution, a
     GEMM of more than 1048560 rows on our kernel) likewise; what cuBLAS computes alone keeps its
     own limits. Shapes only: no 8 GB tensor is ever allocated.
   - cuDNN's math types, against a recording fake of the cuDNN table (cudnnMathType_t as NVIDIA
     documents it): exact FP32 sets CUDNN_FMA_MATH and takes only FMA algorithms from the
     heuristics; with TF32 allowed the descriptor starts at DEFAULT_MATH and takes the chosen
     algorithm's math type, never TENSOR_OP_MATH_ALLOW_CONVERSION.
   - cuDNN refusing one convolution at lowering (a sub-library that fails to load, NOT_SUPPORTED):
     that convolution runs on our kernel, counted, with a WARN log naming cuDNN's status; running
     out of memory stays an error.
   - the element-wise walks of the shapes measured on an H100 (BERT's bias and attention mask, a
     per-channel operand, ResNet's residual, BERT's head transpose, SqueezeNet's channel Concat):
     collapsed to the dims and strides opara_binary_f32 and opara_strided_copy take in arguments,
     copies in 8-byte units. */
#define OPARA_IMPLEMENTATION
#include "opara.h"
#include "opara_test.h"

#define MAX_ELEMS ((int64_t)INT32_MAX - 256 * 65535 + 1)

/* ---- graphs ---------------------------------------------------------------------------------- */

typedef struct lgraph {
    opara_runtime* rt;
    opara__graph g;
    opara__shape* shapes;
    opara__node_params* params;
    opara_dtype* dtypes;
} lgraph;

static void lg_begin(lgraph* l) {
    memset(l, 0, sizeof *l);
    opara_runtime_create(NULL, &l->rt);
    opara__graph_init(&l->g, l->rt);
}

static int32_t lg_value(lgraph* l, const char* name, int32_t ndim, int64_t d0, int64_t d1, int64_t d2, int64_t d3) {
    opara__shape s;
    memset(&s, 0, sizeof s);
    s.ndim = ndim;
    s.dims[0] = d0, s.dims[1] = d1, s.dims[2] = d2, s.dims[3] = d3;
    return opara__graph_add_value(&l->g, name, OPARA_DTYPE_F32, ndim > 0 ? &s : NULL);
}

static int32_t lg_input(lgraph* l, const char* name, int32_t ndim, int64_t d0, int64_t d1, int64_t d2, int64_t d3) {
    int32_t v = lg_value(l, name, ndim, d0, d1, d2, d3);
    opara__graph_add_input(&l->g, v);
    return v;
}

/* Finalizes the graph and infers shapes and dtypes. */
static int lg_finish(lgraph* l) {
    size_t n;
    if (opara__graph_finalize(&l->g) != OPARA_OK) return 0;
    n = l->g.n_values ? l->g.n_values : 1;
    l->shapes = (opara__shape*)calloc(n, sizeof *l->shapes);
    l->dtypes = (opara_dtype*)calloc(n, sizeof *l->dtypes);
    l->params = (opara__node_params*)calloc(l->g.n_nodes ? l->g.n_nodes : 1, sizeof *l->params);
    return l->shapes && l->dtypes && l->params && opara__infer_shapes_params(l->rt, &l->g, 1, l->shapes, l->params) == OPARA_OK &&
           opara__infer_dtypes(l->rt, &l->g, l->dtypes) == OPARA_OK;
}

static void lg_free(lgraph* l) {
    free(l->shapes);
    free(l->params);
    free(l->dtypes);
    opara__graph_free(&l->g);
    opara_runtime_destroy(l->rt);
}

/* Lowers the graph (cuBLAS as asked, no cuDNN unless dnn); the lowering is freed again. */
static opara_result lg_lower(lgraph* l, int use_cublas, const opara_cuda_cudnn* dnn, int tf32, opara__cuda_lowering* keep) {
    opara__cuda_lowering low;
    opara_result r;
    memset(&low, 0, sizeof low);
    low.use_cublas = use_cublas;
    low.dnn = dnn;
    low.dnn_handle = dnn ? (opara_cudnnHandle_t)(void*)l : NULL;
    low.tf32 = tf32;
    r = opara__cuda_lower(l->rt, &l->g, l->shapes, l->params, l->dtypes, &low);
    if (keep) *keep = low;
    else if (r == OPARA_OK) opara__cuda_lowering_free(l->rt, &low);
    return r;
}

/* One unary node over [1, n] floats. */
static opara_result lower_relu(int64_t n, char* err, size_t cap) {
    lgraph l;
    int32_t x, y;
    opara_result r = OPARA_ERR_INTERNAL;
    lg_begin(&l);
    x = lg_input(&l, "x", 2, 1, n, 0, 0);
    y = lg_value(&l, "y", -1, 0, 0, 0, 0);
    opara__graph_add_node(&l.g, OPARA__OP_RELU, "big_relu", 1, &x, 1, &y);
    opara__graph_add_output(&l.g, y);
    if (lg_finish(&l)) r = lg_lower(&l, 0, NULL, 0, NULL);
    opara__format(err, cap, "%s", opara_runtime_last_error(l.rt));
    lg_free(&l);
    return r;
}

OT_TEST(elementwise_limit_is_what_a_grid_stride_loop_can_index) {
    char err[512], want[64];
    CHECK_EQ(OPARA_OK, lower_relu(MAX_ELEMS, err, sizeof err));
    CHECK_EQ(OPARA_ERR_LIMIT_EXCEEDED, lower_relu(MAX_ELEMS + 1, err, sizeof err));
    opara__format(want, sizeof want, "%lld elements", (long long)(MAX_ELEMS + 1));
    CHECK(strstr(err, "big_relu") != NULL);
    CHECK(strstr(err, "Relu") != NULL);
    CHECK(strstr(err, want) != NULL);
    OT_LOG("%s", err);
    CHECK_EQ(OPARA_ERR_LIMIT_EXCEEDED, lower_relu((int64_t)1 << 33, err, sizeof err));
    /* the limit really is the last safe step of the loop: i < n, i += 256 * 65535 stays below 2^31 */
    CHECK((MAX_ELEMS - 1) + (int64_t)256 * 65535 <= INT32_MAX);
    CHECK(MAX_ELEMS + (int64_t)256 * 65535 > INT32_MAX);
}

/* Slice of 10 elements out of a tensor our strided copy cannot index. */
OT_TEST(a_kernel_input_beyond_the_limit_is_refused_by_name) {
    lgraph l;
    int32_t x, y, n;
    int64_t starts = 0, ends = 10, axes = 1;
    lg_begin(&l);
    x = lg_input(&l, "huge_table", 2, 1, (int64_t)3000000000, 0, 0);
    y = lg_value(&l, "y", -1, 0, 0, 0, 0);
    n = opara__graph_add_node(&l.g, OPARA__OP_SLICE, "head", 1, &x, 1, &y);
    opara__node_set_ints(&l.g, n, "starts", &starts, 1);
    opara__node_set_ints(&l.g, n, "ends", &ends, 1);
    opara__node_set_ints(&l.g, n, "axes", &axes, 1);
    opara__graph_add_output(&l.g, y);
    REQUIRE(lg_finish(&l));
    CHECK_EQ(10, l.shapes[y].dims[1]);
    CHECK_EQ(OPARA_ERR_LIMIT_EXCEEDED, lg_lower(&l, 0, NULL, 0, NULL));
    CHECK(strstr(opara_runtime_last_error(l.rt), "huge_table") != NULL);
    CHECK(strstr(opara_runtime_last_error(l.rt), "3000000000 elements") != NULL);
    OT_LOG("%s", opara_runtime_last_error(l.rt));
    lg_free(&l);
}

/* A depthwise convolution of `groups` channels on our kernel: one grid z slice per group. */
static opara_result lower_depthwise(int64_t groups, char* err, size_t cap) {
    lgraph l;
    int32_t ins[2], y, n;
    float* w = (float*)calloc((size_t)groups, sizeof(float));
    opara__shape ws;
    opara_result r = OPARA_ERR_INTERNAL;
    lg_begin(&l);
    ins[0] = lg_input(&l, "x", 4, 1, groups, 1, 1);
    memset(&ws, 0, sizeof ws);
    ws.ndim = 4, ws.dims[0] = groups, ws.dims[1] = ws.dims[2] = ws.dims[3] = 1;
    ins[1] = opara__graph_add_value(&l.g, "w", OPARA_DTYPE_F32, &ws);
    opara__graph_set_const(&l.g, ins[1], w, (uint64_t)groups * sizeof(float), 1);
    y = lg_value(&l, "y", -1, 0, 0, 0, 0);
    n = opara__graph_add_node(&l.g, OPARA__OP_CONV, "dw", 2, ins, 1, &y);
    opara__node_set_int(&l.g, n, "group", groups);
    opara__graph_add_output(&l.g, y);
    if (lg_finish(&l)) r = lg_lower(&l, 0, NULL, 0, NULL);
    opara__format(err, cap, "%s", opara_runtime_last_error(l.rt));
    lg_free(&l);
    free(w);
    return r;
}

/* Row-major [M, 4] x [4, 4] MatMul (our SGEMM: grid y = ceil(M / 16); cuBLAS: no grid of ours). */
static opara_result lower_matmul(int64_t M, int use_cublas, char* err, size_t cap) {
    lgraph l;
    int32_t ins[2], y;
    opara_result r = OPARA_ERR_INTERNAL;
    lg_begin(&l);
    ins[0] = lg_input(&l, "a", 2, M, 4, 0, 0);
    ins[1] = lg_input(&l, "b", 2, 4, 4, 0, 0);
    y = lg_value(&l, "y", -1, 0, 0, 0, 0);
    opara__graph_add_node(&l.g, OPARA__OP_MATMUL, "tall", 2, ins, 1, &y);
    opara__graph_add_output(&l.g, y);
    if (lg_finish(&l)) r = lg_lower(&l, use_cublas, NULL, 0, NULL);
    opara__format(err, cap, "%s", opara_runtime_last_error(l.rt));
    lg_free(&l);
    return r;
}

OT_TEST(grids_beyond_the_launch_limits_are_refused) {
    char err[512];
    CHECK_EQ(OPARA_OK, lower_depthwise(65535, err, sizeof err));
    CHECK_EQ(OPARA_ERR_LIMIT_EXCEEDED, lower_depthwise(65536, err, sizeof err));
    CHECK(strstr(err, "'dw' (Conv)") != NULL);
    CHECK(strstr(err, "opara_conv2d_f32 grid (1, 1, 65536)") != NULL);
    OT_LOG("%s", err);
    CHECK_EQ(OPARA_OK, lower_matmul(65535 * 16, 0, err, sizeof err));
    CHECK_EQ(OPARA_ERR_LIMIT_EXCEEDED, lower_matmul(65535 * 16 + 1, 0, err, sizeof err));
    CHECK(strstr(err, "'tall' (MatMul)") != NULL);
    CHECK(strstr(err, "opara_sgemm_f32 grid (1, 65536, 1)") != NULL);
    OT_LOG("%s", err);
    CHECK_EQ(OPARA_OK, lower_matmul(65535 * 16 + 1, 1, err, sizeof err)); /* cuBLAS has no such grid */
}

/* Gemm [65536, 1] x [1, 32768] = 2^31 outputs: cuBLAS alone computes it; with a bias our epilogue
   kernel would have to index all of them. */
OT_TEST(cublas_gemm_keeps_its_own_limits_our_epilogue_does_not) {
    int with_bias;
    for (with_bias = 0; with_bias < 2; ++with_bias) {
        lgraph l;
        int32_t ins[3], y;
        lg_begin(&l);
        ins[0] = lg_input(&l, "a", 2, 65536, 1, 0, 0);
        ins[1] = lg_input(&l, "b", 2, 1, 32768, 0, 0);
        ins[2] = lg_input(&l, "c", 1, 32768, 0, 0, 0);
        y = lg_value(&l, "y", -1, 0, 0, 0, 0);
        opara__graph_add_node(&l.g, OPARA__OP_GEMM, "fc", with_bias ? 3 : 2, ins, 1, &y);
        opara__graph_add_output(&l.g, y);
        REQUIRE(lg_finish(&l));
        CHECK_EQ(with_bias ? OPARA_ERR_LIMIT_EXCEEDED : OPARA_OK, lg_lower(&l, 1, NULL, 0, NULL));
        if (with_bias) CHECK(strstr(opara_runtime_last_error(l.rt), "2147483648 elements") != NULL);
        CHECK_EQ(OPARA_ERR_LIMIT_EXCEEDED, lg_lower(&l, 0, NULL, 0, NULL)); /* our SGEMM: 2^31 outputs */
        lg_free(&l);
    }
}

/* ---- a recording fake of the cuDNN table ------------------------------------------------------- */

typedef struct fake_dnn {
    int x[4], w[4], pad[2], stride[2], dil[2];
    opara_cudnnMathType_t set_math[8]; /* every cudnnSetConvolutionMathType, in order */
    int n_set_math;
    opara_cudnnConvolutionFwdAlgoPerf_t perf[4];
    int n_perf;
    opara_cudnnStatus_t heuristics_status; /* what cudnnGetConvolutionForwardAlgorithm_v7 returns */
    opara_cudnnConvolutionFwdAlgo_t workspace_algo;
    opara_cudnnMathType_t workspace_math; /* the descriptor's math type when the workspace is asked */
} fake_dnn;

static fake_dnn F;
static char fake_objects[8];

static opara_cudnnStatus_t f_create_tensor(opara_cudnnTensorDescriptor_t* d) {
    *d = (opara_cudnnTensorDescriptor_t)(void*)&fake_objects[0];
    return OPARA_CUDNN_STATUS_SUCCESS;
}
static opara_cudnnStatus_t f_destroy_tensor(opara_cudnnTensorDescriptor_t d) {
    (void)d;
    return OPARA_CUDNN_STATUS_SUCCESS;
}
static opara_cudnnStatus_t f_set_tensor(opara_cudnnTensorDescriptor_t d, opara_cudnnTensorFormat_t f, opara_cudnnDataType_t t, int n,
                                        int c, int h, int w) {
    (void)d, (void)f, (void)t;
    if (F.x[0] == 0) F.x[0] = n, F.x[1] = c, F.x[2] = h, F.x[3] = w; /* the first one is the input */
    return OPARA_CUDNN_STATUS_SUCCESS;
}
static opara_cudnnStatus_t f_create_filter(opara_cudnnFilterDescriptor_t* d) {
    *d = (opara_cudnnFilterDescriptor_t)(void*)&fake_objects[1];
    return OPARA_CUDNN_STATUS_SUCCESS;
}
static opara_cudnnStatus_t f_destroy_filter(opara_cudnnFilterDescriptor_t d) {
    (void)d;
    return OPARA_CUDNN_STATUS_SUCCESS;
}
static opara_cudnnStatus_t f_set_filter(opara_cudnnFilterDescriptor_t d, opara_cudnnDataType_t t, opara_cudnnTensorFormat_t f, int k,
                                        int c, int h, int w) {
    (void)d, (void)t, (void)f;
    F.w[0] = k, F.w[1] = c, F.w[2] = h, F.w[3] = w;
    return OPARA_CUDNN_STATUS_SUCCESS;
}
static opara_cudnnStatus_t f_create_conv(opara_cudnnConvolutionDescriptor_t* d) {
    *d = (opara_cudnnConvolutionDescriptor_t)(void*)&fake_objects[2];
    return OPARA_CUDNN_STATUS_SUCCESS;
}
static opara_cudnnStatus_t f_destroy_conv(opara_cudnnConvolutionDescriptor_t d) {
    (void)d;
    return OPARA_CUDNN_STATUS_SUCCESS;
}
static opara_cudnnStatus_t f_set_conv(opara_cudnnConvolutionDescriptor_t d, int ph, int pw, int sh, int sw, int dh, int dw,
                                      opara_cudnnConvolutionMode_t mode, opara_cudnnDataType_t t) {
    (void)d, (void)mode, (void)t;
    F.pad[0] = ph, F.pad[1] = pw, F.stride[0] = sh, F.stride[1] = sw, F.dil[0] = dh, F.dil[1] = dw;
    return OPARA_CUDNN_STATUS_SUCCESS;
}
static opara_cudnnStatus_t f_set_groups(opara_cudnnConvolutionDescriptor_t d, int g) {
    (void)d, (void)g;
    return OPARA_CUDNN_STATUS_SUCCESS;
}
static opara_cudnnStatus_t f_set_math(opara_cudnnConvolutionDescriptor_t d, opara_cudnnMathType_t m) {
    (void)d;
    if (F.n_set_math < 8) F.set_math[F.n_set_math++] = m;
    return OPARA_CUDNN_STATUS_SUCCESS;
}
static opara_cudnnStatus_t f_output_dim(opara_cudnnConvolutionDescriptor_t d, opara_cudnnTensorDescriptor_t x,
                                        opara_cudnnFilterDescriptor_t w, int* n, int* c, int* h, int* wo) {
    (void)d, (void)x, (void)w;
    *n = F.x[0], *c = F.w[0];
    *h = (F.x[2] + 2 * F.pad[0] - F.dil[0] * (F.w[2] - 1) - 1) / F.stride[0] + 1;
    *wo = (F.x[3] + 2 * F.pad[1] - F.dil[1] * (F.w[3] - 1) - 1) / F.stride[1] + 1;
    return OPARA_CUDNN_STATUS_SUCCESS;
}
static opara_cudnnStatus_t f_heuristics(opara_cudnnHandle_t h, opara_cudnnTensorDescriptor_t x, opara_cudnnFilterDescriptor_t w,
                                        opara_cudnnConvolutionDescriptor_t c, opara_cudnnTensorDescriptor_t y, int requested,
                                        int* returned, opara_cudnnConvolutionFwdAlgoPerf_t* perf) {
    int i;
    (void)h, (void)x, (void)w, (void)c, (void)y;
    if (F.heuristics_status != OPARA_CUDNN_STATUS_SUCCESS) return F.heuristics_status;
    for (i = 0; i < F.n_perf && i < requested; ++i) perf[i] = F.perf[i];
    *returned = i;
    return OPARA_CUDNN_STATUS_SUCCESS;
}
static opara_cudnnStatus_t f_workspace(opara_cudnnHandle_t h, opara_cudnnTensorDescriptor_t x, opara_cudnnFilterDescriptor_t w,
                                       opara_cudnnConvolutionDescriptor_t c, opara_cudnnTensorDescriptor_t y,
                                       opara_cudnnConvolutionFwdAlgo_t algo, size_t* bytes) {
    (void)h, (void)x, (void)w, (void)c, (void)y;
    F.workspace_algo = algo;
    F.workspace_math = F.n_set_math ? F.set_math[F.n_set_math - 1] : (opara_cudnnMathType_t)-1;
    *bytes = 1024;
    return OPARA_CUDNN_STATUS_SUCCESS;
}
static opara_cudnnStatus_t f_create_act(opara_cudnnActivationDescriptor_t* d) {
    *d = (opara_cudnnActivationDescriptor_t)(void*)&fake_objects[3];
    return OPARA_CUDNN_STATUS_SUCCESS;
}
static opara_cudnnStatus_t f_destroy_act(opara_cudnnActivationDescriptor_t d) {
    (void)d;
    return OPARA_CUDNN_STATUS_SUCCESS;
}
static opara_cudnnStatus_t f_set_act(opara_cudnnActivationDescriptor_t d, opara_cudnnActivationMode_t m, opara_cudnnNanPropagation_t n,
                                     double coef) {
    (void)d, (void)m, (void)n, (void)coef;
    return OPARA_CUDNN_STATUS_SUCCESS;
}

static void fake_table(opara_cuda_cudnn* t) {
    memset(t, 0, sizeof *t);
    t->cudnnCreateTensorDescriptor = f_create_tensor, t->cudnnDestroyTensorDescriptor = f_destroy_tensor;
    t->cudnnSetTensor4dDescriptor = f_set_tensor;
    t->cudnnCreateFilterDescriptor = f_create_filter, t->cudnnDestroyFilterDescriptor = f_destroy_filter;
    t->cudnnSetFilter4dDescriptor = f_set_filter;
    t->cudnnCreateConvolutionDescriptor = f_create_conv, t->cudnnDestroyConvolutionDescriptor = f_destroy_conv;
    t->cudnnSetConvolution2dDescriptor = f_set_conv, t->cudnnSetConvolutionGroupCount = f_set_groups;
    t->cudnnSetConvolutionMathType = f_set_math, t->cudnnGetConvolution2dForwardOutputDim = f_output_dim;
    t->cudnnGetConvolutionForwardAlgorithm_v7 = f_heuristics, t->cudnnGetConvolutionForwardWorkspaceSize = f_workspace;
    t->cudnnCreateActivationDescriptor = f_create_act, t->cudnnDestroyActivationDescriptor = f_destroy_act;
    t->cudnnSetActivationDescriptor = f_set_act;
}

static void fake_reset(void) {
    memset(&F, 0, sizeof F);
    F.heuristics_status = OPARA_CUDNN_STATUS_SUCCESS;
}

static void fake_perf(opara_cudnnConvolutionFwdAlgo_t algo, opara_cudnnMathType_t math, opara_cudnnStatus_t status, size_t memory) {
    opara_cudnnConvolutionFwdAlgoPerf_t* p = &F.perf[F.n_perf++];
    memset(p, 0, sizeof *p);
    p->algo = algo, p->mathType = math, p->status = status, p->memory = memory, p->time = 1.0f;
}

/* x [1,4,8,8] -> Conv3x3 pad 1 (no bias, no activation: cudnnConvolutionForward with the heuristics). */
static int conv_graph(lgraph* l) {
    static float w[4 * 4 * 9];
    int32_t ins[2], y, n;
    opara__shape ws;
    int64_t pads[4] = {1, 1, 1, 1};
    lg_begin(l);
    ins[0] = lg_input(l, "x", 4, 1, 4, 8, 8);
    memset(&ws, 0, sizeof ws);
    ws.ndim = 4, ws.dims[0] = 4, ws.dims[1] = 4, ws.dims[2] = 3, ws.dims[3] = 3;
    ins[1] = opara__graph_add_value(&l->g, "w", OPARA_DTYPE_F32, &ws);
    opara__graph_set_const(&l->g, ins[1], w, sizeof w, 1);
    y = lg_value(l, "y", -1, 0, 0, 0, 0);
    n = opara__graph_add_node(&l->g, OPARA__OP_CONV, "conv3x3", 2, ins, 1, &y);
    opara__node_set_ints(&l->g, n, "pads", pads, 4);
    opara__graph_add_output(&l->g, y);
    return lg_finish(l);
}

/* The heuristics rank a TF32 algorithm, a tensor-op one and a down-converting one above FMA ones. */
static void rank_reduced_precision_first(void) {
    fake_perf(OPARA_CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, OPARA_CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION,
              OPARA_CUDNN_STATUS_SUCCESS, 0);
    fake_perf(OPARA_CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED, OPARA_CUDNN_DEFAULT_MATH, OPARA_CUDNN_STATUS_SUCCESS, 4096);
    fake_perf(OPARA_CUDNN_CONVOLUTION_FWD_ALGO_FFT, OPARA_CUDNN_FMA_MATH, OPARA_CUDNN_STATUS_NOT_SUPPORTED, 0);
    fake_perf(OPARA_CUDNN_CONVOLUTION_FWD_ALGO_GEMM, OPARA_CUDNN_FMA_MATH, OPARA_CUDNN_STATUS_SUCCESS, 2048);
}

OT_TEST(cudnn_math_type_follows_the_precision) {
    opara_cuda_cudnn t;
    int tf32;
    fake_table(&t);
    for (tf32 = 0; tf32 < 2; ++tf32) {
        lgraph l;
        opara__cuda_lowering low;
        REQUIRE(conv_graph(&l));
        fake_reset();
        rank_reduced_precision_first();
        REQUIRE(lg_lower(&l, 0, &t, tf32, &low) == OPARA_OK);
        CHECK_EQ(1, low.n_dnn_convs);
        CHECK_EQ(1, low.n_conv);
        CHECK(F.n_set_math >= 1);
        /* set explicitly on the descriptor before anything else is asked */
        CHECK_EQ(tf32 ? OPARA_CUDNN_DEFAULT_MATH : OPARA_CUDNN_FMA_MATH, F.set_math[0]);
        if (!tf32) { /* only the FMA algorithm that succeeded; its math type is already set */
            CHECK_EQ(OPARA_CUDNN_CONVOLUTION_FWD_ALGO_GEMM, low.dnn_convs[0].algo);
            CHECK_EQ(1, F.n_set_math);
        } else { /* never ALLOW_CONVERSION (FP16 down-conversion); the DEFAULT_MATH (TF32) one */
            CHECK_EQ(OPARA_CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED, low.dnn_convs[0].algo);
        }
        CHECK_EQ(low.dnn_convs[0].algo, F.workspace_algo);
        CHECK_EQ(low.dnn_convs[0].math, F.workspace_math); /* the workspace is asked for the final math type */
        CHECK_EQ(tf32 ? OPARA_CUDNN_DEFAULT_MATH : OPARA_CUDNN_FMA_MATH, low.dnn_convs[0].math);
        opara__cuda_lowering_free(l.rt, &low);
        lg_free(&l);
    }
    /* TF32 allowed and the best algorithm is a tensor-op one: the descriptor takes its math type */
    {
        lgraph l;
        opara__cuda_lowering low;
        REQUIRE(conv_graph(&l));
        fake_reset();
        fake_perf(OPARA_CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, OPARA_CUDNN_TENSOR_OP_MATH, OPARA_CUDNN_STATUS_SUCCESS, 0);
        REQUIRE(lg_lower(&l, 0, &t, 1, &low) == OPARA_OK);
        CHECK_EQ(2, F.n_set_math);
        CHECK_EQ(OPARA_CUDNN_TENSOR_OP_MATH, F.set_math[1]);
        CHECK_EQ(OPARA_CUDNN_TENSOR_OP_MATH, low.dnn_convs[0].math);
        opara__cuda_lowering_free(l.rt, &low);
        lg_free(&l);
    }
    /* exact FP32 and no FMA algorithm among the results: IMPLICIT_PRECOMP_GEMM under FMA_MATH */
    {
        lgraph l;
        opara__cuda_lowering low;
        REQUIRE(conv_graph(&l));
        fake_reset();
        fake_perf(OPARA_CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, OPARA_CUDNN_DEFAULT_MATH, OPARA_CUDNN_STATUS_SUCCESS, 0);
        REQUIRE(lg_lower(&l, 0, &t, 0, &low) == OPARA_OK);
        CHECK_EQ(OPARA_CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, low.dnn_convs[0].algo);
        CHECK_EQ(OPARA_CUDNN_FMA_MATH, F.workspace_math);
        opara__cuda_lowering_free(l.rt, &low);
        lg_free(&l);
    }
}

typedef struct warn_log {
    char text[1024];
    int warnings;
} warn_log;

static void capture(opara_log_level level, opara_log_item item, const char* message, void* user) {
    warn_log* w = (warn_log*)user;
    if (level == OPARA_LOG_WARN && item == OPARA_LOGITEM_BACKEND_FALLBACK) {
        w->warnings++;
        opara__format(w->text, sizeof w->text, "%s", message);
    }
}

OT_TEST(a_convolution_cudnn_refuses_runs_on_our_kernel) {
    static const opara_cudnnStatus_t refusals[3] = {OPARA_CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED, OPARA_CUDNN_STATUS_NOT_SUPPORTED,
                                                    OPARA_CUDNN_STATUS_BAD_PARAM};
    opara_cuda_cudnn t;
    int i;
    fake_table(&t);
    for (i = 0; i < 3; ++i) {
        lgraph l;
        opara__cuda_lowering low;
        warn_log w;
        REQUIRE(conv_graph(&l));
        memset(&w, 0, sizeof w);
        l.rt->logger.func = capture, l.rt->logger.user_data = &w, l.rt->logger.max_level = OPARA_LOG_DEBUG;
        fake_reset();
        F.heuristics_status = refusals[i];
        REQUIRE(lg_lower(&l, 0, &t, 0, &low) == OPARA_OK);
        CHECK_EQ(0, low.n_dnn_convs);
        CHECK_EQ(1, low.n_dnn_refused);
        CHECK_EQ(1, low.n_conv);
        CHECK_EQ(1, low.n_launches);
        CHECK_EQ(OPARA__CULAUNCH_KERNEL, low.launches[0].type);
        CHECK_EQ(OPARA__CUK_CONV2D, low.launches[0].kernel);
        CHECK_EQ(1, w.warnings);
        CHECK(strstr(w.text, "'conv3x3'") != NULL);
        CHECK(strstr(w.text, "cudnnGetConvolutionForwardAlgorithm_v7") != NULL);
        CHECK(strstr(w.text, opara_cudnn_status_name(refusals[i])) != NULL);
        OT_LOG("%s", w.text);
        opara__cuda_lowering_free(l.rt, &low);
        lg_free(&l);
    }
    { /* running out of device memory is not a refusal: an error */
        lgraph l;
        REQUIRE(conv_graph(&l));
        fake_reset();
        F.heuristics_status = OPARA_CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED;
        CHECK_EQ(OPARA_ERR_DEVICE_MEMORY, lg_lower(&l, 0, &t, 0, NULL));
        CHECK(strstr(opara_runtime_last_error(l.rt), "CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED") != NULL);
        lg_free(&l);
    }
}

/* ReduceMean without axes reduces every dim unless noop_with_empty_axes (ONNX): the lowering reads
   the dims to reduce from the shape engine's record, as the CPU does. meta[0] is the kept dims. */
static int32_t reduce_mean_kept_dims(int64_t noop) {
    lgraph l;
    int32_t x, y, n, kept = -1;
    opara__cuda_lowering low;
    lg_begin(&l);
    x = lg_input(&l, "x", 2, 2, 3, 0, 0);
    y = lg_value(&l, "y", -1, 0, 0, 0, 0);
    n = opara__graph_add_node(&l.g, OPARA__OP_REDUCE_MEAN, "mean", 1, &x, 1, &y);
    opara__node_set_int(&l.g, n, "noop_with_empty_axes", noop);
    opara__graph_add_output(&l.g, y);
    if (lg_finish(&l) && lg_lower(&l, 0, NULL, 0, &low) == OPARA_OK) {
        kept = low.n_meta ? low.meta[0] : -1;
        opara__cuda_lowering_free(l.rt, &low);
    }
    lg_free(&l);
    return kept;
}

OT_TEST(reduce_mean_without_axes_follows_noop_with_empty_axes) {
    CHECK_EQ(reduce_mean_kept_dims(0), 0);
    CHECK_EQ(reduce_mean_kept_dims(1), 2);
}

/* ConvTranspose with output_shape: the pads come from the shape engine's record, which splits the
   trimmed total ONNX's way (the odd one at the start unless SAME_UPPER), as the CPU does. Input
   width 3, stride 2, kernel 3: full width 7, output_shape 6: total 1, begin pad 1. */
OT_TEST(conv_transpose_pads_from_output_shape_follow_onnx) {
    lgraph l;
    int32_t ins[2], y, n;
    int64_t strides[2] = {1, 2}, out_shape[2] = {1, 6};
    opara__cuda_lowering low;
    uint32_t i;
    const opara__cuda_launch* L = NULL;
    lg_begin(&l);
    ins[0] = lg_input(&l, "x", 4, 1, 1, 1, 3);
    ins[1] = lg_input(&l, "w", 4, 1, 1, 1, 3);
    y = lg_value(&l, "y", -1, 0, 0, 0, 0);
    n = opara__graph_add_node(&l.g, OPARA__OP_CONV_TRANSPOSE, "up", 2, ins, 1, &y);
    opara__node_set_ints(&l.g, n, "strides", strides, 2);
    opara__node_set_ints(&l.g, n, "output_shape", out_shape, 2);
    opara__graph_add_output(&l.g, y);
    REQUIRE(lg_finish(&l));
    CHECK_EQ(l.shapes[y].dims[3], 6);
    REQUIRE(lg_lower(&l, 0, NULL, 0, &low) == OPARA_OK);
    for (i = 0; i < low.n_launches; ++i)
        if (low.launches[i].kernel == OPARA__CUK_CONV_TRANSPOSE2D) L = &low.launches[i];
    REQUIRE(L && L->n_args > 16);
    /* X, W, B, Y, then N, C, H, W, K, kh, kw, OH, OW, sh, sw, ph, pw, ... */
    CHECK_EQ((int64_t)(int32_t)L->args[15].raw, 0);
    CHECK_EQ((int64_t)(int32_t)L->args[16].raw, 1);
    opara__cuda_lowering_free(l.rt, &low);
    lg_free(&l);
}

/* ---- the element-wise walks of the measured shapes (src/cuda/kernels/elementwise.cu's arguments) ---- */

/* The launch's 32-bit argument a. */
static int32_t arg_i32(const opara__cuda_launch* L, uint32_t a) { return a < L->n_args ? (int32_t)(uint32_t)L->args[a].raw : -999; }

/* One binary node x + x2 (rank 4, a rank 0 for a dim given as 0 is left out); checks opara_binary_f32's
   fast_ndim, d1..d3 and both operands' 4 strides (arguments 7..18) and that meta holds the same walk. */
static void check_binary_walk(opara_test* T, const int64_t* xd, const int64_t* bd, int32_t b_rank, const int32_t* want) {
    lgraph l;
    int32_t ins[2], y, a;
    opara__cuda_launch* L;
    opara__cuda_lowering low;
    lg_begin(&l);
    ins[0] = lg_input(&l, "x", 4, xd[0], xd[1], xd[2], xd[3]);
    ins[1] = lg_input(&l, "b", b_rank, bd[4 - b_rank], b_rank > 2 ? bd[5 - b_rank] : 0, b_rank > 1 ? bd[2] : 0, bd[3]);
    y = lg_value(&l, "y", -1, 0, 0, 0, 0);
    opara__graph_add_node(&l.g, OPARA__OP_ADD, "add", 2, ins, 1, &y);
    opara__graph_add_output(&l.g, y);
    REQUIRE(lg_finish(&l) && lg_lower(&l, 0, NULL, 0, &low) == OPARA_OK);
    REQUIRE(low.n_launches == 1);
    L = &low.launches[0];
    for (a = 0; a < 12; ++a) CHECK_EQ(want[a], arg_i32(L, 7 + (uint32_t)a));
    CHECK_EQ(want[0], low.meta[L->args[6].ref]);
    opara__cuda_lowering_free(l.rt, &low);
    lg_free(&l);
}

OT_TEST(binary_walks_of_the_measured_shapes_take_the_fast_paths) {
    /* BERT's bias [768] on [8,128,768] (as [1,8,128,768]): 2 dims, one division */
    static const int64_t bert[4] = {1, 8, 128, 768}, bias[4] = {0, 0, 0, 768};
    static const int32_t bert_want[12] = {2, 1, 1024, 768, 0, 0, 768, 1, 0, 0, 0, 1};
    /* the attention mask [8,1,1,128] on [8,12,128,128]: [8, 1536, 128] */
    static const int64_t att[4] = {8, 12, 128, 128}, mask[4] = {8, 1, 1, 128};
    static const int32_t att_want[12] = {3, 8, 1536, 128, 0, 196608, 128, 1, 0, 128, 0, 1};
    /* a per-channel [1,64,1,1] on [8,64,55,55]: [8, 64, 3025] */
    static const int64_t img[4] = {8, 64, 55, 55}, chan[4] = {1, 64, 1, 1};
    static const int32_t chan_want[12] = {3, 8, 64, 3025, 0, 193600, 3025, 1, 0, 0, 1, 0};
    /* ResNet's residual: both dense, one dim, no division */
    static const int64_t res[4] = {8, 256, 56, 56};
    static const int32_t res_want[12] = {1, 1, 1, 6422528, 0, 0, 0, 1, 0, 0, 0, 1};
    check_binary_walk(T, bert, bias, 1, bert_want);
    check_binary_walk(T, att, mask, 4, att_want);
    check_binary_walk(T, img, chan, 4, chan_want);
    check_binary_walk(T, res, res, 4, res_want);
}

/* opara_strided_copy's arguments 2..18 of launch k (count, unit bytes, offsets, meta, walk). */
static void check_copy_walk(opara_test* T, const opara__cuda_lowering* low, uint32_t k, int32_t count, int32_t unit,
                            int64_t dst_off, const int32_t* walk) {
    const opara__cuda_launch* L = &low->launches[k];
    int32_t a;
    REQUIRE(k < low->n_launches && L->n_args == 19);
    CHECK_EQ(count, arg_i32(L, 2));
    CHECK_EQ(unit, arg_i32(L, 3));
    CHECK_EQ(dst_off, (int64_t)L->args[5].raw);
    for (a = 0; a < 12; ++a) CHECK_EQ(walk[a], arg_i32(L, 7 + (uint32_t)a));
}

OT_TEST(copy_walks_of_the_measured_shapes_take_the_fast_paths) {
    /* BERT's head split: Transpose [8,128,12,64] -> [8,12,128,64], runs of 64 floats as 32 8-byte units */
    static const int32_t heads[12] = {4, 12, 128, 32, 49152, 32, 384, 1, 49152, 4096, 32, 1};
    /* SqueezeNet's Concat of two [8,64,55,55] along channels: [8, 193600] in 8-byte units of 96800 */
    static const int32_t fire[12] = {2, 1, 8, 96800, 0, 0, 96800, 1, 0, 0, 193600, 1};
    static const int64_t perm[4] = {0, 2, 1, 3};
    lgraph l;
    int32_t x, ins[2], y, n;
    opara__cuda_lowering low;
    lg_begin(&l);
    x = lg_input(&l, "x", 4, 8, 128, 12, 64);
    y = lg_value(&l, "y", -1, 0, 0, 0, 0);
    n = opara__graph_add_node(&l.g, OPARA__OP_TRANSPOSE, "heads", 1, &x, 1, &y);
    opara__node_set_ints(&l.g, n, "perm", perm, 4);
    opara__graph_add_output(&l.g, y);
    REQUIRE(lg_finish(&l) && lg_lower(&l, 0, NULL, 0, &low) == OPARA_OK);
    check_copy_walk(T, &low, 0, 393216, 8, 0, heads);
    opara__cuda_lowering_free(l.rt, &low);
    lg_free(&l);

    lg_begin(&l);
    ins[0] = lg_input(&l, "a", 4, 8, 64, 55, 55);
    ins[1] = lg_input(&l, "b", 4, 8, 64, 55, 55);
    y = lg_value(&l, "y", -1, 0, 0, 0, 0);
    n = opara__graph_add_node(&l.g, OPARA__OP_CONCAT, "fire", 2, ins, 1, &y);
    opara__node_set_int(&l.g, n, "axis", 1);
    opara__graph_add_output(&l.g, y);
    REQUIRE(lg_finish(&l) && lg_lower(&l, 0, NULL, 0, &low) == OPARA_OK);
    REQUIRE(low.n_launches == 2);
    check_copy_walk(T, &low, 0, 774400, 8, 0, fire);
    check_copy_walk(T, &low, 1, 774400, 8, 96800, fire);
    opara__cuda_lowering_free(l.rt, &low);
    lg_free(&l);
}

static const opara_test_case tests[] = {
    OT_CASE(elementwise_limit_is_what_a_grid_stride_loop_can_index),
    OT_CASE(a_kernel_input_beyond_the_limit_is_refused_by_name),
    OT_CASE(grids_beyond_the_launch_limits_are_refused),
    OT_CASE(cublas_gemm_keeps_its_own_limits_our_epilogue_does_not),
    OT_CASE(cudnn_math_type_follows_the_precision),
    OT_CASE(a_convolution_cudnn_refuses_runs_on_our_kernel),
    OT_CASE(reduce_mean_without_axes_follows_noop_with_empty_axes),
    OT_CASE(conv_transpose_pads_from_output_shape_follow_onnx),
    OT_CASE(binary_walks_of_the_measured_shapes_take_the_fast_paths),
    OT_CASE(copy_walks_of_the_measured_shapes_take_the_fast_paths),
};

int main(int argc, char** argv) { return opara_test_main(argc, argv, tests, OT_COUNT(tests)); }
