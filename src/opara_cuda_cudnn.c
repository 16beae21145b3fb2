/* cuDNN convolutions: the tensor, filter, convolution and activation descriptors of one 2-D
   convolution (NCHW, float32, groups, fused bias + Relu/identity), checked against our shape
   inference; the algorithm/workspace choice from cuDNN's heuristics (never the cudnnFind*
   autotuners, which allocate and synchronise and cannot run under capture); the call that
   enqueues it on the handle's stream.
   The descriptor calls need no GPU, so tests/test_cuda_cudnn.c runs them on the real libcudnn. */
#include "opara_backend_cuda.h"

#include <string.h>

static opara_result opara__dnn_fail(opara_runtime* rt, opara_cudnnStatus_t st, const char* what) {
    return opara__fail(rt, OPARA_ERR_CUDNN, "cuDNN: %s failed: %s (%d)", what, opara_cudnn_status_name(st), (int)st);
}

#define OPARA__DNN_TRY(rt, call, what)                                                        \
    do {                                                                                      \
        opara_cudnnStatus_t opara__st_ = (call);                                              \
        if (opara__st_ != OPARA_CUDNN_STATUS_SUCCESS) return opara__dnn_fail(rt, opara__st_, what); \
    } while (0)

OPARA__PRIVATE int opara__cudnn_conv_supported(const opara__cuda_conv_geom* c) {
    return c->ph == c->ph_end && c->pw == c->pw_end && c->group >= 1 && c->C % c->group == 0 && c->K % c->group == 0;
}

OPARA__PRIVATE opara_result opara__cudnn_conv_describe(opara_runtime* rt, const opara_cuda_cudnn* dnn,
                                                      const opara__cuda_conv_geom* c, opara__cudnn_conv* out) {
    int n = 0, k = 0, h = 0, w = 0;
    memset(out, 0, sizeof *out);
    if (!opara__cudnn_conv_supported(c))
        return opara__fail(rt, OPARA_ERR_UNSUPPORTED, "cuDNN: asymmetric padding or bad groups");
    OPARA__DNN_TRY(rt, dnn->cudnnCreateTensorDescriptor(&out->x), "cudnnCreateTensorDescriptor");
    OPARA__DNN_TRY(rt, dnn->cudnnCreateTensorDescriptor(&out->y), "cudnnCreateTensorDescriptor");
    OPARA__DNN_TRY(rt, dnn->cudnnCreateTensorDescriptor(&out->bias), "cudnnCreateTensorDescriptor");
    OPARA__DNN_TRY(rt, dnn->cudnnCreateFilterDescriptor(&out->w), "cudnnCreateFilterDescriptor");
    OPARA__DNN_TRY(rt, dnn->cudnnCreateConvolutionDescriptor(&out->conv), "cudnnCreateConvolutionDescriptor");
    OPARA__DNN_TRY(rt, dnn->cudnnCreateActivationDescriptor(&out->act), "cudnnCreateActivationDescriptor");
    OPARA__DNN_TRY(rt, dnn->cudnnSetTensor4dDescriptor(out->x, OPARA_CUDNN_TENSOR_NCHW, OPARA_CUDNN_DATA_FLOAT, c->N, c->C, c->H, c->W),
                   "cudnnSetTensor4dDescriptor (input)");
    OPARA__DNN_TRY(rt, dnn->cudnnSetFilter4dDescriptor(out->w, OPARA_CUDNN_DATA_FLOAT, OPARA_CUDNN_TENSOR_NCHW, c->K,
                                                       c->C / c->group, c->R, c->S),
                   "cudnnSetFilter4dDescriptor");
    OPARA__DNN_TRY(rt, dnn->cudnnSetConvolution2dDescriptor(out->conv, c->ph, c->pw, c->sh, c->sw, c->dh, c->dw,
                                                            OPARA_CUDNN_CROSS_CORRELATION, OPARA_CUDNN_DATA_FLOAT),
                   "cudnnSetConvolution2dDescriptor");
    OPARA__DNN_TRY(rt, dnn->cudnnSetConvolutionGroupCount(out->conv, c->group), "cudnnSetConvolutionGroupCount");
    OPARA__DNN_TRY(rt, dnn->cudnnGetConvolution2dForwardOutputDim(out->conv, out->x, out->w, &n, &k, &h, &w),
                   "cudnnGetConvolution2dForwardOutputDim");
    if (n != c->N || k != c->K || h != c->OH || w != c->OW)
        return opara__fail(rt, OPARA_ERR_SHAPE, "cuDNN computes output [%d, %d, %d, %d] but shape inference [%d, %d, %d, %d]",
                           n, k, h, w, c->N, c->K, c->OH, c->OW);
    OPARA__DNN_TRY(rt, dnn->cudnnSetTensor4dDescriptor(out->y, OPARA_CUDNN_TENSOR_NCHW, OPARA_CUDNN_DATA_FLOAT, n, k, h, w),
                   "cudnnSetTensor4dDescriptor (output)");
    OPARA__DNN_TRY(rt, dnn->cudnnSetTensor4dDescriptor(out->bias, OPARA_CUDNN_TENSOR_NCHW, OPARA_CUDNN_DATA_FLOAT, 1, k, 1, 1),
                   "cudnnSetTensor4dDescriptor (bias)");
    /* the fused epilogue: Relu, or identity (which cuDNN supports only with IMPLICIT_PRECOMP_GEMM) */
    OPARA__DNN_TRY(rt, dnn->cudnnSetActivationDescriptor(out->act, c->relu ? OPARA_CUDNN_ACTIVATION_RELU : OPARA_CUDNN_ACTIVATION_IDENTITY,
                                                         OPARA_CUDNN_NOT_PROPAGATE_NAN, 0.0),
                   "cudnnSetActivationDescriptor");
    out->call = c->relu ? OPARA__CUDNN_BIAS_RELU : c->has_bias ? OPARA__CUDNN_BIAS : OPARA__CUDNN_FORWARD;
    out->algo = OPARA_CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
    return OPARA_OK;
}

OPARA__PRIVATE opara_result opara__cudnn_conv_choose(opara_runtime* rt, const opara_cuda_cudnn* dnn,
                                                    opara_cudnnHandle_t handle, opara__cudnn_conv* conv) {
    opara_cudnnConvolutionFwdAlgoPerf_t perf[OPARA_CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int returned = 0, i;
    if (conv->call != OPARA__CUDNN_BIAS) {
        OPARA__DNN_TRY(rt, dnn->cudnnGetConvolutionForwardAlgorithm_v7(handle, conv->x, conv->w, conv->conv, conv->y,
                                                                       OPARA_CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &returned, perf),
                       "cudnnGetConvolutionForwardAlgorithm_v7");
        for (i = 0; i < returned; ++i)
            if (perf[i].status == OPARA_CUDNN_STATUS_SUCCESS && perf[i].memory <= OPARA__CUDNN_WORKSPACE_LIMIT) {
                conv->algo = perf[i].algo;
                break;
            }
    }
    OPARA__DNN_TRY(rt, dnn->cudnnGetConvolutionForwardWorkspaceSize(handle, conv->x, conv->w, conv->conv, conv->y, conv->algo,
                                                                    &conv->workspace),
                   "cudnnGetConvolutionForwardWorkspaceSize");
    return OPARA_OK;
}

/* alpha = 1 and beta (alpha2 for the fused call) = 0: y is overwritten, never read, so the fused
   call passes y as z. */
OPARA__PRIVATE opara_cudnnStatus_t opara__cudnn_conv_run(const opara_cuda_cudnn* dnn, opara_cudnnHandle_t handle,
                                                        const opara__cudnn_conv* conv, const void* x, const void* w,
                                                        const void* bias, void* y, void* workspace, size_t workspace_bytes) {
    const float one = 1.0f, zero = 0.0f;
    if (conv->call == OPARA__CUDNN_FORWARD)
        return dnn->cudnnConvolutionForward(handle, &one, conv->x, x, conv->w, w, conv->conv, conv->algo, workspace,
                                            workspace_bytes, &zero, conv->y, y);
    return dnn->cudnnConvolutionBiasActivationForward(handle, &one, conv->x, x, conv->w, w, conv->conv, conv->algo, workspace,
                                                      workspace_bytes, &zero, conv->y, y, conv->bias, bias, conv->act,
                                                      conv->y, y);
}

OPARA__PRIVATE void opara__cudnn_conv_destroy(const opara_cuda_cudnn* dnn, opara__cudnn_conv* conv) {
    if (conv->x) dnn->cudnnDestroyTensorDescriptor(conv->x);
    if (conv->y) dnn->cudnnDestroyTensorDescriptor(conv->y);
    if (conv->bias) dnn->cudnnDestroyTensorDescriptor(conv->bias);
    if (conv->w) dnn->cudnnDestroyFilterDescriptor(conv->w);
    if (conv->conv) dnn->cudnnDestroyConvolutionDescriptor(conv->conv);
    if (conv->act) dnn->cudnnDestroyActivationDescriptor(conv->act);
    memset(conv, 0, sizeof *conv);
}
