/* The cuDNN fake (build/cudaemu/libcudnn.so, loaded with opara_cuda.h's loader): convolution forward against a
 * naive 7-loop convolution written here (pads, strides, dilations, groups, depthwise, flipped filters,
 * strided output), bias + activation, add tensor with broadcasting, the algorithm and workspace queries,
 * capture; and its descriptor logic against NVIDIA's libcudnn.so.9 (descriptor calls need no GPU): the same
 * calls must give the same status codes and output dimensions, and the same error strings. */
#define OPARA_CUDA_IMPLEMENTATION
#define OPARA_CUDA_STATIC
#include "opara_cuda.h"

#include <math.h>
#include <pthread.h>
#include <unistd.h>

#include "emu_test.h"

#ifndef OPARA_REAL_CUDNN
#define OPARA_REAL_CUDNN "/usr/local/cuda/lib64/libcudnn.so.9"
#endif

typedef struct dnn {
    tcu_driver* d;
    opara_cuda_cudnn lib;
    opara_cudnnHandle_t h;
    char err[1024];
} dnn;

static int dnn_open(dnn* n, tcu_driver* d) {
    char buf[OPARA_CUDA_PATH_MAX];
    const char* path = tcu_lib_path("OPARA_CUDNN", "libcudnn.so", buf, sizeof buf);
    memset(n, 0, sizeof(*n));
    n->d = d;
    if (opara_cuda_cudnn_load(&n->lib, path, n->err, sizeof n->err) != OPARA_CUDA_LOAD_OK) return -1;
    return n->lib.cudnnCreate(&n->h) == OPARA_CUDNN_STATUS_SUCCESS ? 0 : -1;
}

static void dnn_close(dnn* n) {
    if (n->h) n->lib.cudnnDestroy(n->h);
    opara_cuda_cudnn_unload(&n->lib);
}

#define DNN_OPEN(n, d)                                                                                         \
    if (dnn_open(&n, d) != 0) {                                                                                \
        OT_LOG("%s", n.err);                                                                                   \
        dnn_close(&n);                                                                                         \
        REQUIRE(!"cuDNN (fake) loads and creates a handle");                                                  \
    }
#define DNN(n, d)                                                                                              \
    dnn n;                                                                                                    \
    TCU_REQUIRE_DRIVER(d);                                                                                     \
    DNN_OPEN(n, d)

static tcu_devptr upload(tcu_driver* d, const float* host, size_t n) {
    tcu_devptr p = 0;
    if (d->MemAlloc(&p, (n ? n : 1) * sizeof(float)) != 0) return 0;
    if (host && n && d->MemcpyHtoD(p, host, n * sizeof(float)) != 0) return 0;
    return p;
}

/* ---------------------------------------------------------------- the independent reference */

typedef struct conv_case {
    const char* name;
    int n, c, h, w, k, r, s, pad_h, pad_w, str_h, str_w, dil_h, dil_w, groups;
    opara_cudnnConvolutionMode_t mode;
} conv_case;

static int out_dim(int in, int pad, int f, int dil, int str) { return (in + 2 * pad - (f - 1) * dil - 1) / str + 1; }

/* y[n][k][oh][ow] = sum over the group's channels and the filter window; CONVOLUTION flips the window. */
static void ref_conv(const conv_case* p, const float* x, const float* w, double* y) {
    int oh_n = out_dim(p->h, p->pad_h, p->r, p->dil_h, p->str_h), ow_n = out_dim(p->w, p->pad_w, p->s, p->dil_w, p->str_w);
    int cpg = p->c / p->groups, kpg = p->k / p->groups;
    int n, k, oh, ow, c, i, j;
    for (n = 0; n < p->n; n++)
        for (k = 0; k < p->k; k++)
            for (oh = 0; oh < oh_n; oh++)
                for (ow = 0; ow < ow_n; ow++) {
                    double acc = 0;
                    for (c = 0; c < cpg; c++)
                        for (i = 0; i < p->r; i++)
                            for (j = 0; j < p->s; j++) {
                                int ih = oh * p->str_h - p->pad_h + i * p->dil_h, iw = ow * p->str_w - p->pad_w + j * p->dil_w;
                                int fi = p->mode == OPARA_CUDNN_CONVOLUTION ? p->r - 1 - i : i;
                                int fj = p->mode == OPARA_CUDNN_CONVOLUTION ? p->s - 1 - j : j;
                                int cin = (k / kpg) * cpg + c;
                                if (ih < 0 || ih >= p->h || iw < 0 || iw >= p->w) continue;
                                acc += (double)x[((n * p->c + cin) * p->h + ih) * p->w + iw] *
                                       w[((k * cpg + c) * p->r + fi) * p->s + fj];
                            }
                    y[((n * p->k + k) * oh_n + oh) * ow_n + ow] = acc;
                }
}

/* ---------------------------------------------------------------- descriptors for one case */

typedef struct conv_descs {
    opara_cudnnTensorDescriptor_t x, y;
    opara_cudnnFilterDescriptor_t w;
    opara_cudnnConvolutionDescriptor_t conv;
    int on, oc, oh, ow;
} conv_descs;

static int descs_make(const opara_cuda_cudnn* L, const conv_case* p, conv_descs* D) {
    memset(D, 0, sizeof(*D));
    if (L->cudnnCreateTensorDescriptor(&D->x) || L->cudnnCreateTensorDescriptor(&D->y) ||
        L->cudnnCreateFilterDescriptor(&D->w) || L->cudnnCreateConvolutionDescriptor(&D->conv))
        return -1;
    if (L->cudnnSetTensor4dDescriptor(D->x, OPARA_CUDNN_TENSOR_NCHW, OPARA_CUDNN_DATA_FLOAT, p->n, p->c, p->h, p->w) ||
        L->cudnnSetFilter4dDescriptor(D->w, OPARA_CUDNN_DATA_FLOAT, OPARA_CUDNN_TENSOR_NCHW, p->k, p->c / p->groups, p->r,
                                      p->s) ||
        L->cudnnSetConvolution2dDescriptor(D->conv, p->pad_h, p->pad_w, p->str_h, p->str_w, p->dil_h, p->dil_w, p->mode,
                                           OPARA_CUDNN_DATA_FLOAT) ||
        L->cudnnSetConvolutionGroupCount(D->conv, p->groups) ||
        L->cudnnGetConvolution2dForwardOutputDim(D->conv, D->x, D->w, &D->on, &D->oc, &D->oh, &D->ow))
        return -1;
    return L->cudnnSetTensor4dDescriptor(D->y, OPARA_CUDNN_TENSOR_NCHW, OPARA_CUDNN_DATA_FLOAT, D->on, D->oc, D->oh, D->ow)
               ? -1
               : 0;
}

static void descs_free(const opara_cuda_cudnn* L, conv_descs* D) {
    L->cudnnDestroyTensorDescriptor(D->x);
    L->cudnnDestroyTensorDescriptor(D->y);
    L->cudnnDestroyFilterDescriptor(D->w);
    L->cudnnDestroyConvolutionDescriptor(D->conv);
}

static const conv_case cases[] = {
    {"3x3 pad 1", 2, 3, 7, 9, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, OPARA_CUDNN_CROSS_CORRELATION},
    {"1x3 stride 2x1 pad 0x1", 1, 2, 9, 6, 3, 1, 3, 0, 1, 2, 1, 1, 1, 1, OPARA_CUDNN_CROSS_CORRELATION},
    {"5x3 stride 3x2 pad 2x0", 1, 3, 11, 8, 2, 5, 3, 2, 0, 3, 2, 1, 1, 1, OPARA_CUDNN_CROSS_CORRELATION},
    {"dilation 2x3", 1, 2, 10, 11, 3, 3, 2, 2, 1, 1, 1, 2, 3, 1, OPARA_CUDNN_CROSS_CORRELATION},
    {"groups 2", 2, 4, 6, 5, 6, 3, 3, 1, 1, 1, 1, 1, 1, 2, OPARA_CUDNN_CROSS_CORRELATION},
    {"depthwise stride 2", 1, 5, 8, 8, 5, 3, 3, 1, 1, 2, 2, 1, 1, 5, OPARA_CUDNN_CROSS_CORRELATION},
    {"depthwise multiplier 2", 1, 3, 5, 6, 6, 3, 3, 1, 1, 1, 1, 1, 1, 3, OPARA_CUDNN_CROSS_CORRELATION},
    {"flipped filter", 1, 2, 5, 5, 2, 3, 2, 0, 1, 1, 1, 1, 1, 1, OPARA_CUDNN_CONVOLUTION},
    {"1x1", 3, 8, 4, 4, 5, 1, 1, 0, 0, 1, 1, 1, 1, 1, OPARA_CUDNN_CROSS_CORRELATION},
};

/* Runs one case with the given algorithm; y starts as y0 (NaN-free) and ends as alpha conv + beta y0. */
static void conv_run(opara_test* T, dnn* N, const conv_case* p, opara_cudnnConvolutionFwdAlgo_t algo, float alpha, float beta) {
    tcu_driver* d = N->d;
    conv_descs D;
    size_t nx = (size_t)p->n * p->c * p->h * p->w, nw = (size_t)p->k * (p->c / p->groups) * p->r * p->s, ny, ws_bytes = 0, bad;
    float *x, *w, *y0, *got;
    double* want;
    tcu_devptr dx, dw, dy, dws = 0;
    size_t i;
    REQUIRE(descs_make(&N->lib, p, &D) == 0);
    ny = (size_t)D.on * D.oc * D.oh * D.ow;
    x = (float*)malloc(nx * 4);
    w = (float*)malloc(nw * 4);
    y0 = (float*)malloc(ny * 4);
    got = (float*)malloc(ny * 4);
    want = (double*)malloc(ny * sizeof(double));
    REQUIRE(x && w && y0 && got && want);
    CHECK_EQ(D.oh, out_dim(p->h, p->pad_h, p->r, p->dil_h, p->str_h));
    CHECK_EQ(D.ow, out_dim(p->w, p->pad_w, p->s, p->dil_w, p->str_w));
    tcu_fill(x, nx, 31);
    tcu_fill(w, nw, 32);
    tcu_fill(y0, ny, 33);
    ref_conv(p, x, w, want);
    for (i = 0; i < ny; i++) want[i] = alpha * want[i] + (beta != 0.0f ? beta * (double)y0[i] : 0.0);
    CHECK_EQ(N->lib.cudnnGetConvolutionForwardWorkspaceSize(N->h, D.x, D.w, D.conv, D.y, algo, &ws_bytes),
             OPARA_CUDNN_STATUS_SUCCESS);
    dx = upload(d, x, nx);
    dw = upload(d, w, nw);
    dy = upload(d, beta != 0.0f ? y0 : NULL, ny); /* beta 0: y is not read (the emulator's fresh memory is NaN) */
    REQUIRE(dx && dw && dy && (ws_bytes == 0 || (dws = upload(d, NULL, ws_bytes / 4 + 1)) != 0));
    CHECK_EQ(N->lib.cudnnConvolutionForward(N->h, &alpha, D.x, (const void*)(size_t)dx, D.w, (const void*)(size_t)dw, D.conv,
                                            algo, (void*)(size_t)dws, ws_bytes, &beta, D.y, (void*)(size_t)dy),
             OPARA_CUDNN_STATUS_SUCCESS);
    CHECK_EQ(d->MemcpyDtoH(got, dy, ny * 4), 0);
    bad = tcu_first_mismatch(want, got, ny, 1e-5);
    if (bad != ny) OT_LOG("%s, algo %d: y[%zu] = %g, want %g", p->name, algo, bad, got[bad], want[bad]);
    CHECK(bad == ny);
    d->MemFree(dx);
    d->MemFree(dw);
    d->MemFree(dy);
    if (dws) d->MemFree(dws);
    descs_free(&N->lib, &D);
    free(x);
    free(w);
    free(y0);
    free(got);
    free(want);
}

OT_TEST(convolution_matches_reference) {
    size_t i;
    DNN(N, d);
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++)
        conv_run(T, &N, &cases[i], OPARA_CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, 1.0f, 0.0f);
    conv_run(T, &N, &cases[0], OPARA_CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, 0.5f, -2.0f);
    conv_run(T, &N, &cases[0], OPARA_CUDNN_CONVOLUTION_FWD_ALGO_GEMM, 1.0f, 1.0f);
    conv_run(T, &N, &cases[4], OPARA_CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, 2.0f, 0.5f);
    dnn_close(&N);
}

/* The algorithm list: counts, a supported algorithm first, workspace sizes that agree with the size query. */
OT_TEST(algorithm_and_workspace_queries) {
    opara_cudnnConvolutionFwdAlgoPerf_t perf[8];
    conv_descs D;
    int got = 0, i, direct_supported = 0;
    DNN(N, d);
    REQUIRE(descs_make(&N.lib, &cases[0], &D) == 0);
    CHECK_EQ(N.lib.cudnnGetConvolutionForwardAlgorithm_v7(N.h, D.x, D.w, D.conv, D.y, 8, &got, perf), OPARA_CUDNN_STATUS_SUCCESS);
    CHECK(got >= 1 && got <= 8);
    CHECK_EQ(perf[0].status, OPARA_CUDNN_STATUS_SUCCESS);
    for (i = 0; i < got; i++) {
        size_t bytes = 0;
        opara_cudnnStatus_t st = N.lib.cudnnGetConvolutionForwardWorkspaceSize(N.h, D.x, D.w, D.conv, D.y, perf[i].algo, &bytes);
        if (perf[i].status != OPARA_CUDNN_STATUS_SUCCESS) continue;
        CHECK_EQ(st, OPARA_CUDNN_STATUS_SUCCESS);
        CHECK_EQ(bytes, perf[i].memory);
        if (perf[i].algo == OPARA_CUDNN_CONVOLUTION_FWD_ALGO_DIRECT) direct_supported = 1;
    }
    CHECK(!direct_supported); /* not implemented by cuDNN */
    CHECK_EQ(N.lib.cudnnGetConvolutionForwardAlgorithm_v7(N.h, D.x, D.w, D.conv, D.y, 1, &got, perf), OPARA_CUDNN_STATUS_SUCCESS);
    CHECK_EQ(got, 1);
    got = -1; /* 0 requested: SUCCESS with no results (cuDNN 9.19) */
    CHECK_EQ(N.lib.cudnnGetConvolutionForwardAlgorithm_v7(N.h, D.x, D.w, D.conv, D.y, 0, &got, perf), OPARA_CUDNN_STATUS_SUCCESS);
    CHECK_EQ(got, 0);
    descs_free(&N.lib, &D);
    dnn_close(&N);
}

/* The first algorithm of the heuristic list (status SUCCESS) that needs workspace, and its size; -1 when none
 * does. The descriptor takes the algorithm's math type, as opara's backend does before the size query. */
static int algo_with_workspace(dnn* N, conv_descs* D, size_t* need) {
    opara_cudnnConvolutionFwdAlgoPerf_t perf[OPARA_CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int got = 0, i;
    if (N->lib.cudnnGetConvolutionForwardAlgorithm_v7(N->h, D->x, D->w, D->conv, D->y, OPARA_CUDNN_CONVOLUTION_FWD_ALGO_COUNT,
                                                      &got, perf) != OPARA_CUDNN_STATUS_SUCCESS)
        return -1;
    for (i = 0; i < got && i < OPARA_CUDNN_CONVOLUTION_FWD_ALGO_COUNT; i++)
        if (perf[i].status == OPARA_CUDNN_STATUS_SUCCESS && perf[i].memory > 0 &&
            N->lib.cudnnSetConvolutionMathType(D->conv, perf[i].mathType) == OPARA_CUDNN_STATUS_SUCCESS &&
            N->lib.cudnnGetConvolutionForwardWorkspaceSize(N->h, D->x, D->w, D->conv, D->y, perf[i].algo, need) ==
                OPARA_CUDNN_STATUS_SUCCESS &&
            *need > 0)
            return (int)perf[i].algo;
    return -1;
}

/* A workspace below the algorithm's size ([EMU]) and an algorithm that does not apply are refused before
 * anything runs; y is untouched. The algorithm is the
 * first of the heuristic list that needs workspace (cases[0], else a bigger convolution): on cuDNN 9.19 GEMM
 * needs none for cases[0]; the emulator's heuristics lead with WINOGRAD_NONFUSED there. */
OT_TEST(workspace_too_small_is_refused) {
    static const conv_case bigger = {"3x3 32 channels", 2, 32, 32, 32, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1,
                                     OPARA_CUDNN_CROSS_CORRELATION};
    const conv_case* p = &cases[0];
    conv_descs D;
    size_t need = 0, ny;
    float alpha = 1.0f, beta = 0.0f, probe[4];
    tcu_devptr dx, dw, dy, dws;
    int algo;
    DNN(N, d);
    REQUIRE(descs_make(&N.lib, p, &D) == 0);
    if ((algo = algo_with_workspace(&N, &D, &need)) < 0) {
        descs_free(&N.lib, &D);
        p = &bigger;
        REQUIRE(descs_make(&N.lib, p, &D) == 0);
        algo = algo_with_workspace(&N, &D, &need);
    }
    if (algo < 0) {
        descs_free(&N.lib, &D);
        dnn_close(&N);
        SKIP("no algorithm of the heuristic list needs workspace for \"%s\" or \"%s\"", cases[0].name, bigger.name);
    }
    OT_LOG("%s: algorithm %d needs %zu bytes of workspace", p->name, algo, need);
    ny = (size_t)D.on * D.oc * D.oh * D.ow;
    dx = upload(d, NULL, (size_t)p->n * p->c * p->h * p->w);
    dw = upload(d, NULL, (size_t)p->k * (p->c / p->groups) * p->r * p->s);
    dy = upload(d, NULL, ny);
    dws = upload(d, NULL, (need + 3) / 4);
    REQUIRE(dx && dw && dy && dws);
    CHECK_EQ(d->MemsetD32Async(dy, 0x3f800000u, ny, TCU_LEGACY), 0); /* 1.0f */
    /* [EMU] documented BAD_PARAM: NVIDIA's cuDNN (9.19 and 9.14, H100) ran IMPLICIT_PRECOMP_GEMM with need - 1
       of its 1024 bytes and with no workspace at all, so the refusals are the emulator's (stricter) */
    if (d->emu_config) {
        CHECK_EQ(N.lib.cudnnConvolutionForward(N.h, &alpha, D.x, (const void*)(size_t)dx, D.w, (const void*)(size_t)dw,
                                               D.conv, (opara_cudnnConvolutionFwdAlgo_t)algo, (void*)(size_t)dws, need - 1,
                                               &beta, D.y, (void*)(size_t)dy),
                 OPARA_CUDNN_STATUS_BAD_PARAM);
        CHECK_EQ(N.lib.cudnnConvolutionForward(N.h, &alpha, D.x, (const void*)(size_t)dx, D.w, (const void*)(size_t)dw,
                                               D.conv, (opara_cudnnConvolutionFwdAlgo_t)algo, NULL, 0, &beta, D.y,
                                               (void*)(size_t)dy),
                 OPARA_CUDNN_STATUS_BAD_PARAM);
    }
    CHECK_EQ(N.lib.cudnnConvolutionForward(N.h, &alpha, D.x, (const void*)(size_t)dx, D.w, (const void*)(size_t)dw, D.conv,
                                           OPARA_CUDNN_CONVOLUTION_FWD_ALGO_DIRECT, (void*)(size_t)dws, need, &beta, D.y,
                                           (void*)(size_t)dy),
             OPARA_CUDNN_STATUS_NOT_SUPPORTED);
    CHECK_EQ(d->CtxSynchronize(), 0);
    CHECK_EQ(d->MemcpyDtoH(probe, dy, sizeof probe), 0);
    CHECK(probe[0] == 1.0f && probe[3] == 1.0f);
    d->MemFree(dx);
    d->MemFree(dw);
    d->MemFree(dy);
    d->MemFree(dws);
    descs_free(&N.lib, &D);
    dnn_close(&N);
}

/* Runs the fused call into y (descriptor yd at device address y) with algo and act, giving it the workspace the
 * size query asks for. */
static opara_cudnnStatus_t bias_act(opara_test* T, dnn* N, const conv_descs* D, opara_cudnnConvolutionFwdAlgo_t algo,
                                    const float* alpha1, tcu_devptr x, tcu_devptr w, const float* alpha2,
                                    opara_cudnnTensorDescriptor_t zd, tcu_devptr z, opara_cudnnTensorDescriptor_t bd,
                                    tcu_devptr bias, opara_cudnnActivationDescriptor_t act,
                                    opara_cudnnTensorDescriptor_t yd, tcu_devptr y) {
    size_t bytes = 0;
    tcu_devptr ws = 0;
    opara_cudnnStatus_t st;
    CHECK_EQ(N->lib.cudnnGetConvolutionForwardWorkspaceSize(N->h, D->x, D->w, D->conv, yd, algo, &bytes),
             OPARA_CUDNN_STATUS_SUCCESS);
    if (bytes && !(ws = upload(N->d, NULL, (bytes + 3) / 4))) return OPARA_CUDNN_STATUS_INTERNAL_ERROR;
    st = N->lib.cudnnConvolutionBiasActivationForward(N->h, alpha1, D->x, (const void*)(size_t)x, D->w, (const void*)(size_t)w,
                                                      D->conv, algo, (void*)(size_t)ws, bytes, alpha2, zd,
                                                      (const void*)(size_t)z, bd, (const void*)(size_t)bias, act, yd,
                                                      (void*)(size_t)y);
    CHECK_EQ(N->d->CtxSynchronize(), 0); /* before the workspace goes */
    if (ws) N->d->MemFree(ws);
    return st;
}

/* y = act(alpha1 conv + alpha2 z + bias), after the refusals. Observed on cuDNN 9.19 (H100): into a channel
 * slice of a bigger (concat) buffer IMPLICIT_GEMM and IMPLICIT_PRECOMP_GEMM are NOT_SUPPORTED_SHAPE with
 * IDENTITY and RELU alike (the shape is checked before the activation), SIGMOID is NOT_SUPPORTED, and into a
 * packed y IDENTITY runs with IMPLICIT_GEMM as well as with IMPLICIT_PRECOMP_GEMM (cuDNN documents it for the
 * latter only). Nothing of a refused call reaches memory. */
OT_TEST(bias_activation_needs_a_packed_output) {
    const conv_case* p = &cases[4]; /* groups 2, K = 6 */
    conv_descs D;
    opara_cudnnTensorDescriptor_t bias_d, z_d, slice_d;
    opara_cudnnActivationDescriptor_t relu, ident, sigmoid;
    float x[2 * 4 * 6 * 5], w[6 * 2 * 3 * 3], z[2 * 6 * 6 * 5], bias[6], alpha1 = 1.25f, alpha2 = 0.5f;
    float got[2 * 10 * 6 * 5], packed[2 * 6 * 6 * 5];
    double conv[2 * 6 * 6 * 5], want[2 * 6 * 6 * 5];
    int dims[4], strides[4], i, pass, total_c = 10, c0 = 4, hw = 30; /* slice at 480 bytes: 16-byte aligned */
    size_t bad, cnt;
    tcu_devptr dx, dw, dz, db, dy, dp, slice;
    DNN(N, d);
    REQUIRE(descs_make(&N.lib, p, &D) == 0 && D.oh * D.ow == hw && D.oc == 6);
    tcu_fill(x, sizeof x / 4, 41);
    tcu_fill(w, sizeof w / 4, 42);
    tcu_fill(z, sizeof z / 4, 43);
    tcu_fill(bias, 6, 44);
    ref_conv(p, x, w, conv);
    dx = upload(d, x, sizeof x / 4);
    dw = upload(d, w, sizeof w / 4);
    dz = upload(d, z, sizeof z / 4);
    db = upload(d, bias, 6);
    dy = upload(d, NULL, sizeof got / 4);
    dp = upload(d, NULL, sizeof packed / 4);
    REQUIRE(dx && dw && dz && db && dy && dp);
    slice = dy + (size_t)c0 * hw * 4;
    CHECK_EQ(d->MemsetD32Async(dy, 0x40000000u, sizeof got / 4, TCU_LEGACY), 0);     /* 2.0f outside the slice */
    CHECK_EQ(d->MemsetD32Async(dp, 0x40400000u, sizeof packed / 4, TCU_LEGACY), 0); /* 3.0f: nothing runs there */
    REQUIRE(N.lib.cudnnCreateTensorDescriptor(&bias_d) == 0 && N.lib.cudnnCreateTensorDescriptor(&z_d) == 0 &&
            N.lib.cudnnCreateTensorDescriptor(&slice_d) == 0 && N.lib.cudnnCreateActivationDescriptor(&relu) == 0 &&
            N.lib.cudnnCreateActivationDescriptor(&ident) == 0 && N.lib.cudnnCreateActivationDescriptor(&sigmoid) == 0);
    CHECK_EQ(N.lib.cudnnSetTensor4dDescriptor(bias_d, OPARA_CUDNN_TENSOR_NCHW, OPARA_CUDNN_DATA_FLOAT, 1, 6, 1, 1), 0);
    CHECK_EQ(N.lib.cudnnSetTensor4dDescriptor(z_d, OPARA_CUDNN_TENSOR_NCHW, OPARA_CUDNN_DATA_FLOAT, 2, 6, D.oh, D.ow), 0);
    dims[0] = 2, dims[1] = 6, dims[2] = D.oh, dims[3] = D.ow;
    strides[0] = total_c * hw, strides[1] = hw, strides[2] = D.ow, strides[3] = 1;
    CHECK_EQ(N.lib.cudnnSetTensorNdDescriptor(slice_d, OPARA_CUDNN_DATA_FLOAT, 4, dims, strides), 0);
    CHECK_EQ(N.lib.cudnnSetActivationDescriptor(relu, OPARA_CUDNN_ACTIVATION_RELU, OPARA_CUDNN_NOT_PROPAGATE_NAN, 0.0), 0);
    CHECK_EQ(N.lib.cudnnSetActivationDescriptor(ident, OPARA_CUDNN_ACTIVATION_IDENTITY, OPARA_CUDNN_NOT_PROPAGATE_NAN, 0.0), 0);
    CHECK_EQ(N.lib.cudnnSetActivationDescriptor(sigmoid, OPARA_CUDNN_ACTIVATION_SIGMOID, OPARA_CUDNN_NOT_PROPAGATE_NAN, 0.0), 0);
#define CBA(algo, act, yd, y) bias_act(T, &N, &D, algo, &alpha1, dx, dw, &alpha2, z_d, dz, bias_d, db, act, yd, y)
    /* observed: the GEMM algorithms into the slice, whatever the activation */
    for (pass = 0; pass < 4; pass++)
        CHECK_EQ(CBA(pass < 2 ? OPARA_CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM : OPARA_CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM,
                     pass % 2 ? relu : ident, slice_d, slice),
                 OPARA_CUDNN_STATUS_NOT_SUPPORTED_SHAPE);
    CHECK_EQ(CBA(OPARA_CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, sigmoid, D.y, dp), OPARA_CUDNN_STATUS_NOT_SUPPORTED);
    CHECK_EQ(d->MemcpyDtoH(got, dy, sizeof got), 0);
    for (i = 0, bad = 0; i < (int)(sizeof got / 4); i++) bad += got[i] != 2.0f;
    CHECK_EQ(bad, 0);
    CHECK_EQ(d->MemcpyDtoH(packed, dp, sizeof packed), 0);
    for (i = 0, bad = 0; i < (int)(sizeof packed / 4); i++) bad += packed[i] != 3.0f;
    CHECK_EQ(bad, 0);
    /* into the packed y: IMPLICIT_PRECOMP_GEMM (opara's algorithm for the fused call) with RELU, then
       IDENTITY, then IMPLICIT_GEMM with IDENTITY */
    for (pass = 0; pass < 3; pass++) {
        CHECK_EQ(CBA(pass < 2 ? OPARA_CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM : OPARA_CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM,
                     pass == 0 ? relu : ident, D.y, dp),
                 OPARA_CUDNN_STATUS_SUCCESS);
        CHECK_EQ(d->MemcpyDtoH(packed, dp, sizeof packed), 0);
        for (i = 0; i < (int)(sizeof packed / 4); i++) {
            double v = alpha1 * conv[i] + alpha2 * z[i] + bias[(i / hw) % 6];
            want[i] = pass > 0 || v > 0 ? v : 0;
        }
        cnt = sizeof packed / 4;
        bad = tcu_first_mismatch(want, packed, cnt, 1e-5);
        if (bad != cnt) OT_LOG("pass %d: y[%zu] = %g, want %g", pass, bad, packed[bad], want[bad]);
        CHECK(bad == cnt);
        CHECK_EQ(d->MemsetD32Async(dp, 0xffffffffu, 1, TCU_LEGACY), 0); /* NaN: the next pass must write y */
    }
#undef CBA
    N.lib.cudnnDestroyTensorDescriptor(bias_d);
    N.lib.cudnnDestroyTensorDescriptor(z_d);
    N.lib.cudnnDestroyTensorDescriptor(slice_d);
    N.lib.cudnnDestroyActivationDescriptor(relu);
    N.lib.cudnnDestroyActivationDescriptor(ident);
    N.lib.cudnnDestroyActivationDescriptor(sigmoid);
    descs_free(&N.lib, &D);
    d->MemFree(dx);
    d->MemFree(dw);
    d->MemFree(dz);
    d->MemFree(db);
    d->MemFree(dy);
    d->MemFree(dp);
    dnn_close(&N);
}

/* C = alpha A + beta C with A broadcast along its size-1 dimensions (4-d and 5-d). */
static void add_case(opara_test* T, dnn* N, int nb, const int* cdims, const int* adims, float alpha, float beta,
                     opara_cudnnStatus_t expect) {
    tcu_driver* d = N->d;
    opara_cudnnTensorDescriptor_t a_d, c_d;
    int cs[5], as[5], i, idx[5];
    size_t nc = 1, na = 1, e, bad;
    float *A, *C, *got;
    double* want;
    tcu_devptr dA, dC;
    for (i = nb - 1; i >= 0; i--) {
        cs[i] = (int)nc;
        as[i] = (int)na;
        nc *= (size_t)cdims[i];
        na *= (size_t)adims[i];
    }
    A = (float*)malloc(na * 4);
    C = (float*)malloc(nc * 4);
    got = (float*)malloc(nc * 4);
    want = (double*)malloc(nc * sizeof(double));
    REQUIRE(A && C && got && want);
    tcu_fill(A, na, 51);
    tcu_fill(C, nc, 52);
    REQUIRE(N->lib.cudnnCreateTensorDescriptor(&a_d) == 0 && N->lib.cudnnCreateTensorDescriptor(&c_d) == 0);
    CHECK_EQ(N->lib.cudnnSetTensorNdDescriptor(a_d, OPARA_CUDNN_DATA_FLOAT, nb, adims, as), 0);
    CHECK_EQ(N->lib.cudnnSetTensorNdDescriptor(c_d, OPARA_CUDNN_DATA_FLOAT, nb, cdims, cs), 0);
    for (e = 0; e < nc && expect == OPARA_CUDNN_STATUS_SUCCESS; e++) {
        size_t rest = e, ai = 0;
        for (i = nb - 1; i >= 0; i--) {
            idx[i] = (int)(rest % (size_t)cdims[i]);
            rest /= (size_t)cdims[i];
            ai += (size_t)(adims[i] == 1 ? 0 : idx[i]) * (size_t)as[i];
        }
        want[e] = alpha * (double)A[ai] + beta * (double)C[e];
    }
    dA = upload(d, A, na);
    dC = upload(d, C, nc);
    REQUIRE(dA && dC);
    CHECK_EQ(N->lib.cudnnAddTensor(N->h, &alpha, a_d, (const void*)(size_t)dA, &beta, c_d, (void*)(size_t)dC), expect);
    CHECK_EQ(d->MemcpyDtoH(got, dC, nc * 4), 0);
    if (expect != OPARA_CUDNN_STATUS_SUCCESS)
        for (e = 0; e < nc; e++) want[e] = C[e];
    bad = tcu_first_mismatch(want, got, nc, 1e-5);
    if (bad != nc) OT_LOG("C[%zu] = %g, want %g", bad, got[bad], want[bad]);
    CHECK(bad == nc);
    N->lib.cudnnDestroyTensorDescriptor(a_d);
    N->lib.cudnnDestroyTensorDescriptor(c_d);
    d->MemFree(dA);
    d->MemFree(dC);
    free(A);
    free(C);
    free(got);
    free(want);
}

OT_TEST(add_tensor_broadcasts) {
    static const int c4[4] = {2, 5, 3, 4}, bias4[4] = {1, 5, 1, 1}, same4[4] = {2, 5, 3, 4}, row4[4] = {2, 1, 3, 1};
    static const int c5[5] = {2, 3, 2, 3, 2}, b5[5] = {1, 3, 1, 1, 2}, bad4[4] = {1, 4, 1, 1};
    DNN(N, d);
    add_case(T, &N, 4, c4, bias4, 1.0f, 1.0f, OPARA_CUDNN_STATUS_SUCCESS);
    add_case(T, &N, 4, c4, same4, 0.5f, -1.0f, OPARA_CUDNN_STATUS_SUCCESS);
    add_case(T, &N, 4, c4, row4, 2.0f, 0.0f, OPARA_CUDNN_STATUS_SUCCESS);
    add_case(T, &N, 5, c5, b5, 1.0f, 0.25f, OPARA_CUDNN_STATUS_SUCCESS);
    add_case(T, &N, 4, c4, bad4, 1.0f, 1.0f, OPARA_CUDNN_STATUS_BAD_PARAM); /* 4 neither 5 nor 1 */
    dnn_close(&N);
}

/* conv then add on a capturing stream: kernel nodes, and the replay computes what the eager calls did. */
OT_TEST(captured_convolution_is_kernel_work_and_replays) {
    const conv_case* p = &cases[0];
    conv_descs D;
    opara_cudnnTensorDescriptor_t bias_d;
    float x[2 * 3 * 7 * 9], w[4 * 3 * 3 * 3], bias[4], got[2 * 4 * 7 * 9], alpha = 1.0f, beta = 0.0f;
    double want[2 * 4 * 7 * 9];
    tcu_devptr dx, dw, db, dy;
    tcu_stream s;
    tcu_graph g = NULL;
    tcu_exec e = NULL;
    tcu_node nodes[16];
    size_t n = 16, i, kernels = 0, ny = sizeof got / 4;
    int type;
    DNN(N, d);
    REQUIRE(descs_make(&N.lib, p, &D) == 0 && (size_t)D.on * D.oc * D.oh * D.ow == ny);
    REQUIRE(N.lib.cudnnCreateTensorDescriptor(&bias_d) == 0);
    CHECK_EQ(N.lib.cudnnSetTensor4dDescriptor(bias_d, OPARA_CUDNN_TENSOR_NCHW, OPARA_CUDNN_DATA_FLOAT, 1, 4, 1, 1), 0);
    tcu_fill(x, sizeof x / 4, 61);
    tcu_fill(w, sizeof w / 4, 62);
    tcu_fill(bias, 4, 63);
    dx = upload(d, x, sizeof x / 4);
    dw = upload(d, w, sizeof w / 4);
    db = upload(d, bias, 4);
    dy = upload(d, NULL, ny);
    REQUIRE(dx && dw && db && dy && d->StreamCreate(&s, 1) == 0);
    CHECK_EQ(N.lib.cudnnSetStream(N.h, (opara_CUstream)s), 0);
    CHECK_EQ(N.lib.cudnnConvolutionForward(N.h, &alpha, D.x, (const void*)(size_t)dx, D.w, (const void*)(size_t)dw, D.conv,
                                           OPARA_CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, NULL, 0, &beta, D.y,
                                           (void*)(size_t)dy),
             0); /* warm-up: the handle's first call is not capturable */
    CHECK_EQ(d->StreamSynchronize(s), 0);
    CHECK_EQ(d->StreamBeginCapture(s, 0), 0);
    CHECK_EQ(N.lib.cudnnConvolutionForward(N.h, &alpha, D.x, (const void*)(size_t)dx, D.w, (const void*)(size_t)dw, D.conv,
                                           OPARA_CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, NULL, 0, &beta, D.y,
                                           (void*)(size_t)dy),
             0);
    alpha = 1.0f, beta = 1.0f;
    CHECK_EQ(N.lib.cudnnAddTensor(N.h, &alpha, bias_d, (const void*)(size_t)db, &beta, D.y, (void*)(size_t)dy), 0);
    REQUIRE(d->StreamEndCapture(s, &g) == 0);
    CHECK_EQ(d->GraphGetNodes(g, nodes, &n), 0);
    for (i = 0; i < n && i < 16; i++)
        if (d->GraphNodeGetType(nodes[i], &type) == 0 && type == 0) kernels++;
    CHECK(kernels >= 2);
    CHECK_EQ(d->GraphInstantiate(&e, g, 0), 0);
    for (i = 0; i < sizeof x / 4; i++) x[i] = 1.0f - x[i]; /* new input: the replay reads it */
    CHECK_EQ(d->MemcpyHtoD(dx, x, sizeof x), 0);
    ref_conv(p, x, w, want);
    for (i = 0; i < ny; i++) want[i] += bias[i / (size_t)(D.oh * D.ow) % 4];
    CHECK_EQ(d->GraphLaunch(e, s), 0);
    CHECK_EQ(d->StreamSynchronize(s), 0);
    CHECK_EQ(d->MemcpyDtoH(got, dy, sizeof got), 0);
    CHECK(tcu_first_mismatch(want, got, ny, 1e-5) == ny);
    d->GraphExecDestroy(e);
    d->GraphDestroy(g);
    N.lib.cudnnDestroyTensorDescriptor(bias_d);
    descs_free(&N.lib, &D);
    dnn_close(&N);
    d->StreamDestroy(s);
    d->MemFree(dx);
    d->MemFree(dw);
    d->MemFree(db);
    d->MemFree(dy);
}


/* ---------------------------------------------------------------- math types (TF32) */

/* Operand rounding from its definition: TF32 = 10 explicit mantissa bits, nearest, ties away from zero
 * (crt/mma.h __float_to_tf32 = cvt.rna.tf32.f32); FP16 = round-to-nearest-even (the test data is in range). */
enum { PREC_FP32, PREC_TF32, PREC_FP16 };

static float round_operand(float v, int prec) {
    union { float f; unsigned int u; } b;
    b.f = v;
    if (prec == PREC_TF32) b.u = (b.u + 0x1000u) & ~0x1fffu;
    if (prec == PREC_FP16) b.u = (b.u + 0xfffu + ((b.u >> 13) & 1u)) & ~0x1fffu;
    return b.f;
}

/* Convolution of cases[0] with a math type and algorithm; 1 when y equals the reference in precision prec. */
static int conv_precision_is(opara_test* T, dnn* N, opara_cudnnMathType_t math, opara_cudnnConvolutionFwdAlgo_t algo,
                             int prec) {
    const conv_case* p = &cases[0];
    tcu_driver* d = N->d;
    conv_descs D;
    float x[2 * 3 * 7 * 9], w[4 * 3 * 3 * 3], rx[2 * 3 * 7 * 9], rw[4 * 3 * 3 * 3], got[2 * 4 * 7 * 9];
    float alpha = 1.0f, beta = 0.0f;
    double want[2 * 4 * 7 * 9];
    size_t i, ny = sizeof got / 4, ws_bytes = 0, bad;
    tcu_devptr dx, dw, dy, dws = 0;
    if (descs_make(&N->lib, p, &D) != 0 || (size_t)D.on * D.oc * D.oh * D.ow != ny) {
        CHECK(!"descriptors of cases[0]");
        return 0;
    }
    CHECK_EQ(N->lib.cudnnSetConvolutionMathType(D.conv, math), OPARA_CUDNN_STATUS_SUCCESS);
    tcu_fill(x, sizeof x / 4, 71);
    tcu_fill(w, sizeof w / 4, 72);
    for (i = 0; i < sizeof x / 4; i++) rx[i] = round_operand(x[i], prec);
    for (i = 0; i < sizeof w / 4; i++) rw[i] = round_operand(w[i], prec);
    ref_conv(p, rx, rw, want);
    CHECK_EQ(N->lib.cudnnGetConvolutionForwardWorkspaceSize(N->h, D.x, D.w, D.conv, D.y, algo, &ws_bytes), 0);
    dx = upload(d, x, sizeof x / 4);
    dw = upload(d, w, sizeof w / 4);
    dy = upload(d, NULL, ny);
    CHECK(dx && dw && dy && (ws_bytes == 0 || (dws = upload(d, NULL, ws_bytes / 4 + 1)) != 0));
    CHECK_EQ(N->lib.cudnnConvolutionForward(N->h, &alpha, D.x, (const void*)(size_t)dx, D.w, (const void*)(size_t)dw, D.conv,
                                            algo, (void*)(size_t)dws, ws_bytes, &beta, D.y, (void*)(size_t)dy),
             OPARA_CUDNN_STATUS_SUCCESS);
    CHECK_EQ(d->MemcpyDtoH(got, dy, sizeof got), 0);
    bad = tcu_first_mismatch(want, got, ny, 1e-5);
    if (bad != ny) OT_LOG("math %d algo %d precision %d: y[%zu] = %.9g, want %.9g", (int)math, (int)algo, prec, bad, got[bad], want[bad]);
    d->MemFree(dx);
    d->MemFree(dw);
    d->MemFree(dy);
    if (dws) d->MemFree(dws);
    descs_free(&N->lib, &D);
    return bad == ny;
}

/* The math type the v7 heuristics report for algo on cases[0] with the descriptor's math type m (-1: absent). */
static int reported_math(dnn* N, opara_cudnnMathType_t m, opara_cudnnConvolutionFwdAlgo_t algo) {
    opara_cudnnConvolutionFwdAlgoPerf_t perf[8];
    conv_descs D;
    int got = 0, i, math = -1;
    if (descs_make(&N->lib, &cases[0], &D) != 0 || N->lib.cudnnSetConvolutionMathType(D.conv, m) != 0) return -2;
    if (N->lib.cudnnGetConvolutionForwardAlgorithm_v7(N->h, D.x, D.w, D.conv, D.y, 8, &got, perf) == 0)
        for (i = 0; i < got; i++)
            if (perf[i].algo == algo) math = (int)perf[i].mathType;
    descs_free(&N->lib, &D);
    return math;
}

/* cudnnMathType_t: "with NVIDIA Ampere architecture, CUDNN_DEFAULT_MATH permits TF32 Tensor Core operation and
 * CUDNN_FMA_MATH does not"; so an FP32 convolution with the default math type is TF32-rounded on an H100.
 * FMA_MATH is exact everywhere (also checked on a real GPU); the rest is checked on the emulated H100 and
 * Turing (which algorithms have tensor-core kernels is the emulator's choice, docs/TESTING-GPU.md). */
OT_TEST(convolution_precision_follows_math_type) {
    dnn H;
    DNN(N, d);
    CHECK(conv_precision_is(T, &N, OPARA_CUDNN_FMA_MATH, OPARA_CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, PREC_FP32));
    CHECK(conv_precision_is(T, &N, OPARA_CUDNN_FMA_MATH, OPARA_CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, PREC_FP32));
    if (d->emu_config_str) {
        d->emu_config_str("device", "h100");
        if (dnn_open(&H, d) == 0) {
            CHECK(conv_precision_is(T, &H, OPARA_CUDNN_DEFAULT_MATH, OPARA_CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, PREC_TF32));
            CHECK(conv_precision_is(T, &H, OPARA_CUDNN_TENSOR_OP_MATH, OPARA_CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED,
                                    PREC_TF32));
            CHECK(conv_precision_is(T, &H, OPARA_CUDNN_FMA_MATH, OPARA_CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED, PREC_FP32));
            CHECK(conv_precision_is(T, &H, OPARA_CUDNN_DEFAULT_MATH, OPARA_CUDNN_CONVOLUTION_FWD_ALGO_FFT, PREC_FP32));
            CHECK_EQ(reported_math(&H, OPARA_CUDNN_DEFAULT_MATH, OPARA_CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM),
                     OPARA_CUDNN_TENSOR_OP_MATH);
            CHECK_EQ(reported_math(&H, OPARA_CUDNN_DEFAULT_MATH, OPARA_CUDNN_CONVOLUTION_FWD_ALGO_FFT), OPARA_CUDNN_FMA_MATH);
            CHECK_EQ(reported_math(&H, OPARA_CUDNN_FMA_MATH, OPARA_CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM),
                     OPARA_CUDNN_FMA_MATH);
            setenv("NVIDIA_TF32_OVERRIDE", "0", 1);
            CHECK(conv_precision_is(T, &H, OPARA_CUDNN_DEFAULT_MATH, OPARA_CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, PREC_FP32));
            CHECK_EQ(reported_math(&H, OPARA_CUDNN_DEFAULT_MATH, OPARA_CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM),
                     OPARA_CUDNN_FMA_MATH);
            unsetenv("NVIDIA_TF32_OVERRIDE");
        } else {
            CHECK(!"cuDNN handle on the emulated H100");
        }
        dnn_close(&H);
        d->emu_config_str("device", "rtx2080super");
        if (dnn_open(&H, d) == 0) {
            CHECK(conv_precision_is(T, &H, OPARA_CUDNN_DEFAULT_MATH, OPARA_CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, PREC_FP32));
            CHECK(conv_precision_is(T, &H, OPARA_CUDNN_TENSOR_OP_MATH, OPARA_CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, PREC_FP32));
            CHECK(conv_precision_is(T, &H, OPARA_CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION,
                                    OPARA_CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, PREC_FP16));
            CHECK_EQ(reported_math(&H, OPARA_CUDNN_DEFAULT_MATH, OPARA_CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM),
                     OPARA_CUDNN_FMA_MATH);
        }
        dnn_close(&H);
        d->emu_config_str("device", "");
    }
    dnn_close(&N);
}


/* cudnnAddTensor from a thread that does not have the handle's context current. */
typedef struct dnn_thread {
    dnn* n;
    tcu_ctx ctx;
    opara_cudnnTensorDescriptor_t t;
    tcu_devptr p;
    opara_cudnnStatus_t none, pushed;
} dnn_thread;

static opara_cudnnStatus_t add_ones(dnn_thread* t) {
    float alpha = 1.0f, beta = 1.0f;
    return t->n->lib.cudnnAddTensor(t->n->h, &alpha, t->t, (const void*)(size_t)t->p, &beta, t->t,
                                    (void*)(size_t)(t->p + 256));
}

static void* dnn_other_thread(void* arg) {
    dnn_thread* t = (dnn_thread*)arg;
    t->none = add_ones(t);
    if (t->n->d->CtxPushCurrent(t->ctx) == 0) {
        t->pushed = add_ones(t);
        t->n->d->CtxSynchronize();
        t->n->d->CtxPopCurrent(NULL);
    }
    return NULL;
}

/* [EMU] the library needs the handle's context current on the calling thread: 5001 otherwise. */
OT_TEST(execution_needs_the_handle_context_current) {
    dnn_thread t;
    pthread_t th;
    float v[128];
    int i;
    dnn N;
    TCU_REQUIRE_EMULATOR(d);
    DNN_OPEN(N, d);
    for (i = 0; i < 128; i++) v[i] = 1.0f;
    memset(&t, 0, sizeof t);
    t.n = &N;
    t.p = upload(d, v, 128);
    REQUIRE(t.p && d->CtxGetCurrent(&t.ctx) == 0 && N.lib.cudnnCreateTensorDescriptor(&t.t) == 0);
    CHECK_EQ(N.lib.cudnnSetTensor4dDescriptor(t.t, OPARA_CUDNN_TENSOR_NCHW, OPARA_CUDNN_DATA_FLOAT, 1, 4, 4, 4), 0);
    REQUIRE(pthread_create(&th, NULL, dnn_other_thread, &t) == 0);
    pthread_join(th, NULL);
    CHECK_EQ(t.none, OPARA_CUDNN_STATUS_EXECUTION_FAILED_CUDA_DRIVER);
    CHECK_EQ(t.pushed, OPARA_CUDNN_STATUS_SUCCESS);
    CHECK_EQ(d->MemcpyDtoH(v, t.p + 256, 64 * sizeof(float)), 0);
    CHECK(v[0] == 2.0f && v[63] == 2.0f);
    N.lib.cudnnDestroyTensorDescriptor(t.t);
    d->MemFree(t.p);
    dnn_close(&N);
}


/* [EMU] Library data pointers must be 16-byte aligned (docs/TESTING-GPU.md): cuDNN's documented status for a
 * misaligned pointer is CUDNN_STATUS_BAD_PARAM_MISALIGNED_POINTER. A channel slice at an odd offset, as a
 * Concat input written in place can be, is refused; with the rule off (lib_align 0) it runs. */
OT_TEST(misaligned_pointers_are_refused) {
    conv_descs D;
    opara_cudnnTensorDescriptor_t t;
    float alpha = 1.0f, beta = 0.0f;
    tcu_devptr dx, dw, dy;
    DNN(N, d);
    if (!d->emu_config) {
        dnn_close(&N);
        SKIP("emulator-only rule (NVIDIA's cuDNN accepts 4-byte aligned FP32 data)");
    }
    REQUIRE(descs_make(&N.lib, &cases[0], &D) == 0 && N.lib.cudnnCreateTensorDescriptor(&t) == 0);
    CHECK_EQ(N.lib.cudnnSetTensor4dDescriptor(t, OPARA_CUDNN_TENSOR_NCHW, OPARA_CUDNN_DATA_FLOAT, 1, 2, 2, 2), 0);
    dx = upload(d, NULL, 2 * 3 * 7 * 9 + 4);
    dw = upload(d, NULL, 4 * 3 * 9 + 4);
    dy = upload(d, NULL, 2 * 4 * 7 * 9 + 4);
    REQUIRE(dx && dw && dy);
    CHECK_EQ(d->MemsetD32Async(dx, 0, 2 * 3 * 7 * 9 + 4, TCU_LEGACY), 0);
    CHECK_EQ(d->MemsetD32Async(dw, 0, 4 * 3 * 9 + 4, TCU_LEGACY), 0);
#define FWD(px, py)                                                                                                \
    N.lib.cudnnConvolutionForward(N.h, &alpha, D.x, (const void*)(size_t)(px), D.w, (const void*)(size_t)dw, D.conv, \
                                  OPARA_CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, NULL, 0, &beta, D.y, (void*)(size_t)(py))
    CHECK_EQ(FWD(dx + 4, dy), OPARA_CUDNN_STATUS_BAD_PARAM_MISALIGNED_POINTER);
    CHECK_EQ(FWD(dx, dy + 8), OPARA_CUDNN_STATUS_BAD_PARAM_MISALIGNED_POINTER);
    CHECK_EQ(FWD(dx + 16, dy + 16), OPARA_CUDNN_STATUS_SUCCESS);
    CHECK_EQ(N.lib.cudnnAddTensor(N.h, &alpha, t, (const void*)(size_t)(dx + 4), &alpha, t, (void*)(size_t)dy),
             OPARA_CUDNN_STATUS_BAD_PARAM_MISALIGNED_POINTER);
    d->emu_config("lib_align", 0);
    CHECK_EQ(FWD(dx + 4, dy + 8), OPARA_CUDNN_STATUS_SUCCESS);
    d->emu_config("lib_align", 16);
#undef FWD
    CHECK_EQ(d->CtxSynchronize(), 0);
    N.lib.cudnnDestroyTensorDescriptor(t);
    descs_free(&N.lib, &D);
    d->MemFree(dx);
    d->MemFree(dw);
    d->MemFree(dy);
    dnn_close(&N);
}


/* The handle's first execution call sets up device memory: inside a capture it fails
 * (CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED) and the capture is invalidated; after a warm-up the
 * same call captures. */
OT_TEST(first_call_of_a_handle_cannot_be_captured) {
    opara_cudnnTensorDescriptor_t t;
    float v[16], alpha = 1.0f, beta = 1.0f;
    tcu_devptr p;
    tcu_stream s;
    tcu_graph g = NULL;
    int i;
    dnn N;
    TCU_REQUIRE_EMULATOR(d);
    DNN_OPEN(N, d);
    for (i = 0; i < 16; i++) v[i] = 1.0f;
    p = upload(d, v, 16);
    REQUIRE(p && d->StreamCreate(&s, 1) == 0 && N.lib.cudnnCreateTensorDescriptor(&t) == 0);
    CHECK_EQ(N.lib.cudnnSetTensor4dDescriptor(t, OPARA_CUDNN_TENSOR_NCHW, OPARA_CUDNN_DATA_FLOAT, 1, 1, 2, 2), 0);
    CHECK_EQ(N.lib.cudnnSetStream(N.h, (opara_CUstream)s), 0);
#define ADD() N.lib.cudnnAddTensor(N.h, &alpha, t, (const void*)(size_t)p, &beta, t, (void*)(size_t)(p + 32))
    CHECK_EQ(d->StreamBeginCapture(s, 0), 0);
    CHECK_EQ(ADD(), OPARA_CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED);
    CHECK_EQ(d->StreamEndCapture(s, &g), TCU_CAPTURE_INVALIDATED);
    if (g) d->GraphDestroy(g);
    g = NULL;
    CHECK_EQ(ADD(), OPARA_CUDNN_STATUS_SUCCESS); /* warm-up */
    CHECK_EQ(d->StreamBeginCapture(s, 0), 0);
    CHECK_EQ(ADD(), OPARA_CUDNN_STATUS_SUCCESS);
    CHECK_EQ(d->StreamEndCapture(s, &g), 0);
    if (g) d->GraphDestroy(g);
#undef ADD
    CHECK_EQ(d->StreamSynchronize(s), 0);
    N.lib.cudnnDestroyTensorDescriptor(t);
    d->StreamDestroy(s);
    d->MemFree(p);
    dnn_close(&N);
}


/* A convolution with a workspace algorithm is a filter transform kernel then the convolution kernel (two
 * nodes, one edge, when captured); IMPLICIT_GEMM is one kernel. Each replay matches the reference. */
OT_TEST(workspace_algorithms_are_several_kernels) {
    static const opara_cudnnConvolutionFwdAlgo_t algos[3] = {OPARA_CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED,
                                                             OPARA_CUDNN_CONVOLUTION_FWD_ALGO_GEMM,
                                                             OPARA_CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM};
    const conv_case* p = &cases[0];
    conv_descs D;
    float x[2 * 3 * 7 * 9], w[4 * 3 * 3 * 3], got[2 * 4 * 7 * 9], alpha = 1.0f, beta = 0.0f;
    double want[2 * 4 * 7 * 9];
    tcu_devptr dx, dw, dy, dws;
    tcu_stream s;
    size_t ny = sizeof got / 4;
    int a;
    dnn N;
    TCU_REQUIRE_EMULATOR(d);
    DNN_OPEN(N, d);
    REQUIRE(descs_make(&N.lib, p, &D) == 0);
    tcu_fill(x, sizeof x / 4, 91);
    tcu_fill(w, sizeof w / 4, 92);
    ref_conv(p, x, w, want);
    dx = upload(d, x, sizeof x / 4);
    dw = upload(d, w, sizeof w / 4);
    dy = upload(d, NULL, ny);
    dws = upload(d, NULL, 1 << 16);
    REQUIRE(dx && dw && dy && dws && d->StreamCreate(&s, 1) == 0);
    CHECK_EQ(N.lib.cudnnSetStream(N.h, (opara_CUstream)s), 0);
    for (a = 0; a < 3; a++) {
        tcu_graph g = NULL;
        tcu_exec e = NULL;
        tcu_node nodes[8];
        size_t n = 8, edges = 0, bytes = 0, i;
        int type, kernels = 0;
        CHECK_EQ(N.lib.cudnnGetConvolutionForwardWorkspaceSize(N.h, D.x, D.w, D.conv, D.y, algos[a], &bytes), 0);
        REQUIRE(bytes <= (1 << 18));
#define FWD()                                                                                                      \
    N.lib.cudnnConvolutionForward(N.h, &alpha, D.x, (const void*)(size_t)dx, D.w, (const void*)(size_t)dw, D.conv, \
                                  algos[a], (void*)(size_t)dws, bytes, &beta, D.y, (void*)(size_t)dy)
        CHECK_EQ(FWD(), 0); /* warm-up */
        CHECK_EQ(d->StreamSynchronize(s), 0);
        CHECK_EQ(d->MemsetD32Async(dws, 0xffffffffu, 1 << 16, s), 0); /* NaN: the replay's transform must run first */
        CHECK_EQ(d->MemsetD32Async(dy, 0xffffffffu, ny, s), 0);
        CHECK_EQ(d->StreamBeginCapture(s, 0), 0);
        CHECK_EQ(FWD(), 0);
#undef FWD
        REQUIRE(d->StreamEndCapture(s, &g) == 0 && g);
        CHECK_EQ(d->GraphGetNodes(g, nodes, &n), 0);
        for (i = 0; i < n && i < 8; i++) kernels += d->GraphNodeGetType(nodes[i], &type) == 0 && type == 0;
        CHECK_EQ(d->GraphGetEdges(g, NULL, NULL, NULL, &edges), 0);
        CHECK_EQ(kernels, a < 2 ? 2 : 1);
        CHECK_EQ(edges, a < 2 ? 1u : 0u);
        CHECK_EQ(d->GraphInstantiate(&e, g, 0), 0);
        CHECK_EQ(d->GraphLaunch(e, s), 0);
        CHECK_EQ(d->StreamSynchronize(s), 0);
        CHECK_EQ(d->MemcpyDtoH(got, dy, sizeof got), 0);
        CHECK(tcu_first_mismatch(want, got, ny, 1e-5) == ny);
        d->GraphExecDestroy(e);
        d->GraphDestroy(g);
    }
    descs_free(&N.lib, &D);
    dnn_close(&N);
    d->StreamDestroy(s);
    d->MemFree(dx);
    d->MemFree(dw);
    d->MemFree(dy);
    d->MemFree(dws);
}


/* ---------------------------------------------------------------- the late-loaded sub-library */

static int copy_file(const char* from, const char* to) {
    char buf[65536];
    size_t n;
    int ok = 1;
    FILE *in = fopen(from, "rb"), *out = in ? fopen(to, "wb") : NULL;
    if (!in || !out) ok = 0;
    while (ok && (n = fread(buf, 1, sizeof buf, in)) > 0) ok = fwrite(buf, 1, n, out) == n;
    if (in) fclose(in);
    if (out && fclose(out) != 0) ok = 0;
    return ok;
}

/* The functions probe_main_library calls, taken with dlsym: opara's loader refuses a cuDNN whose
 * convolution sub-library is missing (OPARA_CUDA_LOAD_INCOMPLETE), and this test is about the library. */
#define PROBE_FUNCS(X) X(cudnnGetVersion) X(cudnnCreate) X(cudnnDestroy) X(cudnnCreateTensorDescriptor) \
    X(cudnnDestroyTensorDescriptor) X(cudnnCreateConvolutionDescriptor) X(cudnnDestroyConvolutionDescriptor) \
    X(cudnnGetConvolution2dForwardOutputDim)
#define PROBE_MEMBER(name) opara_PFN_##name name;
typedef struct probe_lib { void* so; PROBE_FUNCS(PROBE_MEMBER) } probe_lib;

static int probe_open(probe_lib* lib, const char* path) {
    memset(lib, 0, sizeof *lib);
    if (!(lib->so = dlopen(path, RTLD_NOW | RTLD_LOCAL))) return 0;
#define PROBE_SYM(name) { void* f = dlsym(lib->so, #name); if (!f) return 0; memcpy(&lib->name, &f, sizeof f); }
    PROBE_FUNCS(PROBE_SYM)
#undef PROBE_SYM
    return 1;
}

/* Loads DIR/libcudnn.so.9 and records what the first calls give: version, handle, tensor descriptor,
 * convolution descriptor (twice: the failure is not retried), output dimensions. opara's loader says the
 * same at load: INCOMPLETE exactly when the convolutions are unavailable. */
static void probe_main_library(opara_test* T, const char* dir, opara_cudnnStatus_t want_conv) {
    char path[1200], err[1024];
    opara_cuda_cudnn loaded;
    probe_lib lib;
    opara_cudnnHandle_t h = NULL;
    opara_cudnnTensorDescriptor_t t = NULL;
    opara_cudnnConvolutionDescriptor_t c = NULL;
    int n, ch, hh, w;
    snprintf(path, sizeof path, "%s/libcudnn.so.9", dir);
    CHECK_EQ(opara_cuda_cudnn_load(&loaded, path, err, sizeof err),
             want_conv == OPARA_CUDNN_STATUS_SUCCESS ? OPARA_CUDA_LOAD_OK : OPARA_CUDA_LOAD_INCOMPLETE);
    opara_cuda_cudnn_unload(&loaded);
    if (!probe_open(&lib, path)) {
        OT_LOG("%s", dlerror());
        CHECK(!"the copied main library loads");
        if (lib.so) dlclose(lib.so);
        return;
    }
    CHECK_EQ(lib.cudnnGetVersion(), 91900u);
    CHECK_EQ(lib.cudnnCreate(&h), OPARA_CUDNN_STATUS_SUCCESS);
    CHECK_EQ(lib.cudnnCreateTensorDescriptor(&t), OPARA_CUDNN_STATUS_SUCCESS);
    CHECK_EQ(lib.cudnnCreateConvolutionDescriptor(&c), want_conv); /* the first call that needs libcudnn_cnn */
    if (want_conv != OPARA_CUDNN_STATUS_SUCCESS) {
        CHECK_EQ(lib.cudnnCreateConvolutionDescriptor(&c), want_conv);
        CHECK_EQ(lib.cudnnGetConvolution2dForwardOutputDim(c, t, NULL, &n, &ch, &hh, &w), want_conv);
    } else {
        CHECK_EQ(lib.cudnnDestroyConvolutionDescriptor(c), OPARA_CUDNN_STATUS_SUCCESS);
    }
    lib.cudnnDestroyTensorDescriptor(t);
    lib.cudnnDestroy(h);
    dlclose(lib.so);
}

/* cuDNN 9 loads libcudnn_cnn.so.9 at the first call of a convolution function, by bare name through its
 * RUNPATH $ORIGIN and LD_LIBRARY_PATH (NVIDIA's 9.19 shim without the sub-library returns
 * CUDNN_STATUS_NOT_SUPPORTED_SUBLIBRARY_UNAVAILABLE from cudnnCreateConvolutionDescriptor and keeps doing so,
 * while handles and tensor descriptors work). A copy of the fake's main library alone in a directory behaves
 * so; with LD_LIBRARY_PATH naming the emulator's directory, or with the sub-library next to it, it works. */
OT_TEST(missing_convolution_sublibrary_shows_at_the_first_descriptor) {
    char dir[] = "/tmp/opara_emu_cudnn_XXXXXX", main_copy[1200], cnn_copy[1200];
    char* saved = NULL;
    const char* llp = getenv("LD_LIBRARY_PATH");
    TCU_REQUIRE_EMULATOR(d);
    if (getenv("OPARA_CUDNN") && *getenv("OPARA_CUDNN")) SKIP("OPARA_CUDNN is set: the fake is not the library under test");
    REQUIRE(mkdtemp(dir) != NULL);
    snprintf(main_copy, sizeof main_copy, "%s/libcudnn.so.9", dir);
    snprintf(cnn_copy, sizeof cnn_copy, "%s/libcudnn_cnn.so.9", dir);
    REQUIRE(copy_file(OPARA_EMU_LIB_DIR "/libcudnn.so", main_copy));
    if (llp) saved = strdup(llp);
    unsetenv("LD_LIBRARY_PATH"); /* read by the fake at its first convolution call, not by the loader here */
    probe_main_library(T, dir, OPARA_CUDNN_STATUS_NOT_SUPPORTED_SUBLIBRARY_UNAVAILABLE);
    setenv("LD_LIBRARY_PATH", "/nonexistent:" OPARA_EMU_LIB_DIR, 1);
    probe_main_library(T, dir, OPARA_CUDNN_STATUS_SUCCESS);
    unsetenv("LD_LIBRARY_PATH");
    CHECK(copy_file(OPARA_EMU_LIB_DIR "/libcudnn_cnn.so.9", cnn_copy));
    probe_main_library(T, dir, OPARA_CUDNN_STATUS_SUCCESS);
    if (saved) setenv("LD_LIBRARY_PATH", saved, 1);
    free(saved);
    unlink(cnn_copy);
    unlink(main_copy);
    rmdir(dir);
}

/* ---------------------------------------------------------------- the fake against NVIDIA's library */

enum { SCRIPT_MAX = 256 }; /* more than descriptor_script records */

/* The same descriptor calls, in the same order, on one library; every status and output dimension is
 * recorded (good and bad parameters both). NULL output pointers are not tried: NVIDIA's library crashes. */
static int descriptor_script(const opara_cuda_cudnn* L, int* out) {
    static const int d2[2] = {2, 3}, s2[2] = {3, 1}, d3[3] = {2, 3, 4}, s3[3] = {12, 4, 1};
    static const int d5[5] = {1, 2, 3, 4, 5}, s5[5] = {120, 60, 20, 5, 1};
    static const int d9[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1}, s9[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    static const int d4[4] = {1, 2, 3, 4}, s4zero[4] = {24, 12, 4, 0}, s4neg[4] = {24, 12, 4, -1};
    static const int s4tr[4] = {24, 1, 8, 2}, d4z[4] = {1, 0, 3, 4}, s4[4] = {24, 12, 4, 1};
    opara_cudnnTensorDescriptor_t t, t5, fresh;
    opara_cudnnFilterDescriptor_t f, ffresh;
    opara_cudnnConvolutionDescriptor_t c;
    opara_cudnnActivationDescriptor_t a;
    int k = 0, on, oc, oh, ow;
#define R(call) out[k++] = (int)(call)
#define DIMS(call)                                                                                              \
    do {                                                                                                       \
        on = oc = oh = ow = -7;                                                                                \
        R(call);                                                                                               \
        out[k++] = on, out[k++] = oc, out[k++] = oh, out[k++] = ow;                                            \
    } while (0)
    R(L->cudnnCreateTensorDescriptor(&t));
    R(L->cudnnCreateTensorDescriptor(&t5));
    R(L->cudnnCreateTensorDescriptor(&fresh));
    R(L->cudnnCreateFilterDescriptor(&f));
    R(L->cudnnCreateFilterDescriptor(&ffresh));
    R(L->cudnnCreateConvolutionDescriptor(&c));
    R(L->cudnnCreateActivationDescriptor(&a));
    R(L->cudnnSetTensor4dDescriptor(t, OPARA_CUDNN_TENSOR_NCHW, OPARA_CUDNN_DATA_FLOAT, 0, 3, 5, 5));
    R(L->cudnnSetTensor4dDescriptor(t, OPARA_CUDNN_TENSOR_NCHW, OPARA_CUDNN_DATA_FLOAT, 1, -1, 5, 5));
    R(L->cudnnSetTensor4dDescriptor(t, OPARA_CUDNN_TENSOR_NCHW_VECT_C, OPARA_CUDNN_DATA_FLOAT, 1, 4, 5, 5));
    R(L->cudnnSetTensor4dDescriptor(t, OPARA_CUDNN_TENSOR_NCHW, (opara_cudnnDataType_t)99, 1, 3, 5, 5));
    R(L->cudnnSetTensor4dDescriptor(t, (opara_cudnnTensorFormat_t)99, OPARA_CUDNN_DATA_FLOAT, 1, 3, 5, 5));
    R(L->cudnnSetTensor4dDescriptor(t, OPARA_CUDNN_TENSOR_NCHW, OPARA_CUDNN_DATA_HALF, 1, 3, 5, 5));
    R(L->cudnnSetTensor4dDescriptor(t, OPARA_CUDNN_TENSOR_NHWC, OPARA_CUDNN_DATA_FLOAT, 1, 3, 5, 5));
    R(L->cudnnSetTensor4dDescriptor(t, OPARA_CUDNN_TENSOR_NCHW, OPARA_CUDNN_DATA_FLOAT, 65536, 65536, 2, 1));
    R(L->cudnnSetTensorNdDescriptor(t, OPARA_CUDNN_DATA_FLOAT, 1, d2, s2));
    R(L->cudnnSetTensorNdDescriptor(t, OPARA_CUDNN_DATA_FLOAT, 2, d2, s2));
    R(L->cudnnSetTensorNdDescriptor(t, OPARA_CUDNN_DATA_FLOAT, 3, d3, s3));
    R(L->cudnnSetTensorNdDescriptor(t, OPARA_CUDNN_DATA_FLOAT, 9, d9, s9));
    R(L->cudnnSetTensorNdDescriptor(t, OPARA_CUDNN_DATA_FLOAT, 4, d4, s4zero));
    R(L->cudnnSetTensorNdDescriptor(t, OPARA_CUDNN_DATA_FLOAT, 4, d4, s4neg));
    R(L->cudnnSetTensorNdDescriptor(t, OPARA_CUDNN_DATA_FLOAT, 4, d4, s4tr));
    R(L->cudnnSetTensorNdDescriptor(t, OPARA_CUDNN_DATA_FLOAT, 4, d4z, s4));
    R(L->cudnnSetTensorNdDescriptor(t5, OPARA_CUDNN_DATA_FLOAT, 5, d5, s5));
    R(L->cudnnSetFilter4dDescriptor(f, OPARA_CUDNN_DATA_FLOAT, OPARA_CUDNN_TENSOR_NCHW, 0, 3, 3, 3));
    R(L->cudnnSetFilter4dDescriptor(f, OPARA_CUDNN_DATA_FLOAT, OPARA_CUDNN_TENSOR_NHWC, 8, 3, 3, 3));
    R(L->cudnnSetFilter4dDescriptor(f, (opara_cudnnDataType_t)99, OPARA_CUDNN_TENSOR_NCHW, 8, 3, 3, 3));
    R(L->cudnnSetFilter4dDescriptor(f, OPARA_CUDNN_DATA_FLOAT, (opara_cudnnTensorFormat_t)99, 8, 3, 3, 3));
    R(L->cudnnSetConvolution2dDescriptor(c, -1, 0, 1, 1, 1, 1, OPARA_CUDNN_CROSS_CORRELATION, OPARA_CUDNN_DATA_FLOAT));
    R(L->cudnnSetConvolution2dDescriptor(c, 0, 0, 0, 1, 1, 1, OPARA_CUDNN_CROSS_CORRELATION, OPARA_CUDNN_DATA_FLOAT));
    R(L->cudnnSetConvolution2dDescriptor(c, 0, 0, 1, 1, 0, 1, OPARA_CUDNN_CROSS_CORRELATION, OPARA_CUDNN_DATA_FLOAT));
    R(L->cudnnSetConvolution2dDescriptor(c, 0, 0, 1, 1, 1, 1, (opara_cudnnConvolutionMode_t)5, OPARA_CUDNN_DATA_FLOAT));
    R(L->cudnnSetConvolution2dDescriptor(c, 0, 0, 1, 1, 1, 1, OPARA_CUDNN_CROSS_CORRELATION, OPARA_CUDNN_DATA_HALF));
    R(L->cudnnSetConvolution2dDescriptor(c, 0, 0, 1, 1, 1, 1, OPARA_CUDNN_CROSS_CORRELATION, (opara_cudnnDataType_t)99));
    R(L->cudnnSetConvolutionGroupCount(c, 0));
    R(L->cudnnSetConvolutionGroupCount(c, -1));
    R(L->cudnnSetConvolutionGroupCount(c, 1));
    R(L->cudnnSetConvolutionMathType(c, (opara_cudnnMathType_t)7));
    R(L->cudnnSetConvolutionMathType(c, OPARA_CUDNN_FMA_MATH));
    R(L->cudnnSetConvolution2dDescriptor(c, 1, 1, 1, 1, 1, 1, OPARA_CUDNN_CROSS_CORRELATION, OPARA_CUDNN_DATA_FLOAT));
    R(L->cudnnGetConvolution2dForwardOutputDim(c, fresh, f, &on, &oc, &oh, &ow));
    R(L->cudnnSetTensor4dDescriptor(t, OPARA_CUDNN_TENSOR_NCHW, OPARA_CUDNN_DATA_FLOAT, 2, 6, 7, 9));
    R(L->cudnnGetConvolution2dForwardOutputDim(c, t, ffresh, &on, &oc, &oh, &ow));
    R(L->cudnnSetFilter4dDescriptor(f, OPARA_CUDNN_DATA_FLOAT, OPARA_CUDNN_TENSOR_NCHW, 8, 6, 3, 3));
    DIMS(L->cudnnGetConvolution2dForwardOutputDim(c, t, f, &on, &oc, &oh, &ow));
    R(L->cudnnSetFilter4dDescriptor(f, OPARA_CUDNN_DATA_FLOAT, OPARA_CUDNN_TENSOR_NCHW, 8, 4, 3, 3));
    R(L->cudnnGetConvolution2dForwardOutputDim(c, t, f, &on, &oc, &oh, &ow)); /* C 6 != 4 */
    R(L->cudnnSetConvolutionGroupCount(c, 2));
    R(L->cudnnSetFilter4dDescriptor(f, OPARA_CUDNN_DATA_FLOAT, OPARA_CUDNN_TENSOR_NCHW, 8, 3, 3, 3));
    DIMS(L->cudnnGetConvolution2dForwardOutputDim(c, t, f, &on, &oc, &oh, &ow));
    R(L->cudnnSetFilter4dDescriptor(f, OPARA_CUDNN_DATA_FLOAT, OPARA_CUDNN_TENSOR_NCHW, 7, 3, 3, 3));
    DIMS(L->cudnnGetConvolution2dForwardOutputDim(c, t, f, &on, &oc, &oh, &ow)); /* K 7 with 2 groups */
    R(L->cudnnSetConvolutionGroupCount(c, 4));
    R(L->cudnnSetFilter4dDescriptor(f, OPARA_CUDNN_DATA_FLOAT, OPARA_CUDNN_TENSOR_NCHW, 8, 2, 3, 3));
    R(L->cudnnGetConvolution2dForwardOutputDim(c, t, f, &on, &oc, &oh, &ow)); /* 4 groups do not divide C = 6 */
    R(L->cudnnSetConvolutionGroupCount(c, 1));
    R(L->cudnnSetFilter4dDescriptor(f, OPARA_CUDNN_DATA_FLOAT, OPARA_CUDNN_TENSOR_NCHW, 8, 6, 11, 3));
    R(L->cudnnGetConvolution2dForwardOutputDim(c, t, f, &on, &oc, &oh, &ow)); /* filter taller than padded input */
    R(L->cudnnSetFilter4dDescriptor(f, OPARA_CUDNN_DATA_FLOAT, OPARA_CUDNN_TENSOR_NCHW, 8, 6, 9, 3));
    DIMS(L->cudnnGetConvolution2dForwardOutputDim(c, t, f, &on, &oc, &oh, &ow)); /* exactly fits */
    R(L->cudnnSetConvolution2dDescriptor(c, 2, 0, 3, 2, 2, 3, OPARA_CUDNN_CONVOLUTION, OPARA_CUDNN_DATA_FLOAT));
    R(L->cudnnSetFilter4dDescriptor(f, OPARA_CUDNN_DATA_FLOAT, OPARA_CUDNN_TENSOR_NCHW, 5, 6, 3, 2));
    DIMS(L->cudnnGetConvolution2dForwardOutputDim(c, t, f, &on, &oc, &oh, &ow)); /* stride, dilation */
    R(L->cudnnGetConvolution2dForwardOutputDim(c, t5, f, &on, &oc, &oh, &ow));
    R(L->cudnnSetTensor4dDescriptor(t, OPARA_CUDNN_TENSOR_NCHW, OPARA_CUDNN_DATA_HALF, 2, 6, 7, 9));
    DIMS(L->cudnnGetConvolution2dForwardOutputDim(c, t, f, &on, &oc, &oh, &ow)); /* types are not compared here */
    R(L->cudnnSetActivationDescriptor(a, (opara_cudnnActivationMode_t)9, OPARA_CUDNN_NOT_PROPAGATE_NAN, 0.0));
    R(L->cudnnSetActivationDescriptor(a, OPARA_CUDNN_ACTIVATION_RELU, (opara_cudnnNanPropagation_t)5, 0.0));
    R(L->cudnnSetActivationDescriptor(a, OPARA_CUDNN_ACTIVATION_IDENTITY, OPARA_CUDNN_PROPAGATE_NAN, 0.0));
    R(L->cudnnDestroyTensorDescriptor(NULL));
    R(L->cudnnDestroyTensorDescriptor(t));
    R(L->cudnnDestroyTensorDescriptor(t5));
    R(L->cudnnDestroyTensorDescriptor(fresh));
    R(L->cudnnDestroyFilterDescriptor(f));
    R(L->cudnnDestroyFilterDescriptor(ffresh));
    R(L->cudnnDestroyConvolutionDescriptor(c));
    R(L->cudnnDestroyActivationDescriptor(a));
#undef R
#undef DIMS
    return k;
}

static int load_real(opara_cuda_cudnn* real, char* err, size_t size) {
    const char* env = getenv("OPARA_REAL_CUDNN");
    return opara_cuda_cudnn_load(real, env && *env ? env : OPARA_REAL_CUDNN, err, size) == OPARA_CUDA_LOAD_OK;
}

OT_TEST(descriptors_agree_with_nvidia_cudnn) {
    opara_cuda_cudnn real;
    char err[1024];
    int fake_out[SCRIPT_MAX], real_out[SCRIPT_MAX], nf, nr, i;
    DNN(N, d);
    if (!load_real(&real, err, sizeof err)) {
        dnn_close(&N);
        SKIP("NVIDIA's cuDNN is not available: %s", err);
    }
    if (strcmp(real.path, N.lib.path) == 0) { /* make test-gpu without OPARA_CUDNN: both are NVIDIA's */
        OT_LOG("comparing %s with itself", real.path);
    }
    nf = descriptor_script(&N.lib, fake_out);
    nr = descriptor_script(&real, real_out);
    REQUIRE(nf == nr && nf <= SCRIPT_MAX);
    for (i = 0; i < nf; i++) {
        if (fake_out[i] != real_out[i]) OT_LOG("step %d: fake %d, NVIDIA %d", i, fake_out[i], real_out[i]);
        CHECK_EQ(fake_out[i], real_out[i]);
    }
    CHECK_EQ(N.lib.cudnnGetVersion() / 10000, real.cudnnGetVersion() / 10000);
#define STR_CHECK(name, value) \
    CHECK_STR(N.lib.cudnnGetErrorString(OPARA_##name), real.cudnnGetErrorString(OPARA_##name));
    OPARA_CUDNN_STATUS_LIST(STR_CHECK)
#undef STR_CHECK
    CHECK_STR(N.lib.cudnnGetErrorString((opara_cudnnStatus_t)12345), real.cudnnGetErrorString((opara_cudnnStatus_t)12345));
    opara_cuda_cudnn_unload(&real);
    dnn_close(&N);
}

OT_TEST(handle_creation_during_capture_is_unsafe) { /* cudnnCreate allocates device memory (rule 1.5) */
    opara_cudnnHandle_t h2 = NULL;
    tcu_stream s;
    tcu_graph g = NULL;
    dnn N;
    TCU_REQUIRE_EMULATOR(d);
    DNN_OPEN(N, d);
    REQUIRE(d->StreamCreate(&s, 1) == 0);
    CHECK_EQ(d->StreamBeginCapture(s, 0), 0);
    CHECK(N.lib.cudnnCreate(&h2) != OPARA_CUDNN_STATUS_SUCCESS);
    CHECK_EQ(d->StreamEndCapture(s, &g), TCU_CAPTURE_INVALIDATED);
    if (g) d->GraphDestroy(g);
    d->StreamDestroy(s);
    dnn_close(&N);
}

static const opara_test_case tests[] = {
    OT_CASE(convolution_matches_reference),
    OT_CASE(algorithm_and_workspace_queries),
    OT_CASE(workspace_too_small_is_refused),
    OT_CASE(bias_activation_needs_a_packed_output),
    OT_CASE(add_tensor_broadcasts),
    OT_CASE(captured_convolution_is_kernel_work_and_replays),
    OT_CASE(descriptors_agree_with_nvidia_cudnn),
    OT_CASE(handle_creation_during_capture_is_unsafe),
    OT_CASE(convolution_precision_follows_math_type),
    OT_CASE(execution_needs_the_handle_context_current),
    OT_CASE(misaligned_pointers_are_refused),
    OT_CASE(first_call_of_a_handle_cannot_be_captured),
    OT_CASE(workspace_algorithms_are_several_kernels),
    OT_CASE(missing_convolution_sublibrary_shows_at_the_first_descriptor),
};

int main(int argc, char** argv) { return opara_test_main(argc, argv, tests, OT_COUNT(tests)); }
