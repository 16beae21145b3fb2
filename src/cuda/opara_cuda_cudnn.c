/* cuDNN convolutions: the tensor, filter, convolution and activation descriptors of one 2-D
   convolution (NCHW, float32, groups, fused bias + Relu/identity), checked against our shape
   inference; the algorithm/workspace choice from cuDNN's heuristics (never the cudnnFind*
   autotuners, which allocate and synchronise and cannot run under capture); the call that
   enqueues it on the handle's stream.
   The descriptor calls need no GPU, so tests/test_cuda_cudnn.c runs them on the real libcudnn.

   Precision. cuDNN's cudnnMathType_t (API reference, cudnn_graph library): DEFAULT_MATH permits TF32
   tensor-core operations on compute capability 8.0 and newer (none before); TENSOR_OP_MATH permits
   tensor cores without down-converting the data; TENSOR_OP_MATH_ALLOW_CONVERSION also down-converts
   (FP32 data to FP16 included); FMA_MATH restricts cuDNN to kernels that use FMA instructions. The
   math type lives on the convolution descriptor, so every descriptor gets one explicitly: FMA_MATH
   for exact FP32, DEFAULT_MATH when TF32 is allowed. cudnnGetConvolutionForwardAlgorithm_v7 reports
   each algorithm with the math type it needs (perf.mathType), which must be set on the descriptor
   for that algorithm to run as ranked; an algorithm whose math type the precision forbids is
   passed over. */
#include "opara_backend_cuda.h"

#include <string.h>

OPARA__PRIVATE int opara__cudnn_out_of_memory(opara_cudnnStatus_t st) {
    return st == OPARA_CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED ||
           st == OPARA_CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED || (int)st == 2 /* cuDNN 8 ALLOC_FAILED */;
}

/* A failed cuDNN call on conv: out of memory is an error reported here; anything else is cuDNN
   refusing the convolution, kept in conv for the caller (no log, no runtime error). */
static opara_result opara__dnn_refused(opara_runtime* rt, const opara_logger* logger, opara__cudnn_conv* conv,
                                       opara_cudnnStatus_t st, const char* what) {
    conv->failed_call = what;
    conv->status = st;
    if (st == OPARA_CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED)
        return opara__fail_to(&rt->error, logger, OPARA_ERR_OUT_OF_MEMORY, "cuDNN: %s ran out of host memory: %s (%d)",
                              what, opara_cudnn_status_name(st), (int)st);
    if (opara__cudnn_out_of_memory(st))
        return opara__fail_to(&rt->error, logger, OPARA_ERR_DEVICE_MEMORY, "cuDNN: %s ran out of device memory: %s (%d)",
                              what, opara_cudnn_status_name(st), (int)st);
    return OPARA_ERR_CUDNN;
}

/* rt and logger are the enclosing function's */
#define OPARA__DNN_TRY(rt, conv, call, what)                                                        \
    do {                                                                                            \
        opara_cudnnStatus_t opara__st_ = (call);                                                    \
        if (opara__st_ != OPARA_CUDNN_STATUS_SUCCESS) return opara__dnn_refused(rt, logger, conv, opara__st_, what); \
    } while (0)

OPARA__PRIVATE int opara__cudnn_conv_supported(const opara__cuda_conv_geom* c) {
    return c->ph == c->ph_end && c->pw == c->pw_end && c->group >= 1 && c->C % c->group == 0 && c->K % c->group == 0;
}

OPARA__PRIVATE opara_result opara__cudnn_conv_describe(opara_runtime* rt, const opara_logger* session_logger,
                                                      const opara_cuda_cudnn* dnn, const opara__cuda_conv_geom* c,
                                                      opara__cudnn_conv* out) {
    const opara_logger* logger = session_logger ? session_logger : &rt->logger;
    int n = 0, k = 0, h = 0, w = 0;
    memset(out, 0, sizeof *out);
    if (!opara__cudnn_conv_supported(c))
        return opara__fail_to(&rt->error, logger, OPARA_ERR_UNSUPPORTED, "cuDNN: asymmetric padding or bad groups");
    OPARA__DNN_TRY(rt, out, dnn->cudnnCreateTensorDescriptor(&out->x), "cudnnCreateTensorDescriptor");
    OPARA__DNN_TRY(rt, out, dnn->cudnnCreateTensorDescriptor(&out->y), "cudnnCreateTensorDescriptor");
    OPARA__DNN_TRY(rt, out, dnn->cudnnCreateTensorDescriptor(&out->bias), "cudnnCreateTensorDescriptor");
    OPARA__DNN_TRY(rt, out, dnn->cudnnCreateFilterDescriptor(&out->w), "cudnnCreateFilterDescriptor");
    OPARA__DNN_TRY(rt, out, dnn->cudnnCreateConvolutionDescriptor(&out->conv), "cudnnCreateConvolutionDescriptor");
    OPARA__DNN_TRY(rt, out, dnn->cudnnCreateActivationDescriptor(&out->act), "cudnnCreateActivationDescriptor");
    OPARA__DNN_TRY(rt, out, dnn->cudnnSetTensor4dDescriptor(out->x, OPARA_CUDNN_TENSOR_NCHW, OPARA_CUDNN_DATA_FLOAT, c->N, c->C, c->H, c->W),
                   "cudnnSetTensor4dDescriptor (input)");
    OPARA__DNN_TRY(rt, out, dnn->cudnnSetFilter4dDescriptor(out->w, OPARA_CUDNN_DATA_FLOAT, OPARA_CUDNN_TENSOR_NCHW, c->K,
                                                       c->C / c->group, c->R, c->S),
                   "cudnnSetFilter4dDescriptor");
    OPARA__DNN_TRY(rt, out, dnn->cudnnSetConvolution2dDescriptor(out->conv, c->ph, c->pw, c->sh, c->sw, c->dh, c->dw,
                                                            OPARA_CUDNN_CROSS_CORRELATION, OPARA_CUDNN_DATA_FLOAT),
                   "cudnnSetConvolution2dDescriptor");
    OPARA__DNN_TRY(rt, out, dnn->cudnnSetConvolutionGroupCount(out->conv, c->group), "cudnnSetConvolutionGroupCount");
    out->tf32 = c->tf32 != 0;
    out->math = out->tf32 ? OPARA_CUDNN_DEFAULT_MATH : OPARA_CUDNN_FMA_MATH;
    OPARA__DNN_TRY(rt, out, dnn->cudnnSetConvolutionMathType(out->conv, out->math), "cudnnSetConvolutionMathType");
    OPARA__DNN_TRY(rt, out, dnn->cudnnGetConvolution2dForwardOutputDim(out->conv, out->x, out->w, &n, &k, &h, &w),
                   "cudnnGetConvolution2dForwardOutputDim");
    if (n != c->N || k != c->K || h != c->OH || w != c->OW)
        return opara__fail_to(&rt->error, logger, OPARA_ERR_SHAPE,
                              "cuDNN computes output [%d, %d, %d, %d] but shape inference [%d, %d, %d, %d]", n, k, h, w, c->N,
                              c->K, c->OH, c->OW);
    OPARA__DNN_TRY(rt, out, dnn->cudnnSetTensor4dDescriptor(out->y, OPARA_CUDNN_TENSOR_NCHW, OPARA_CUDNN_DATA_FLOAT, n, k, h, w),
                   "cudnnSetTensor4dDescriptor (output)");
    OPARA__DNN_TRY(rt, out, dnn->cudnnSetTensor4dDescriptor(out->bias, OPARA_CUDNN_TENSOR_NCHW, OPARA_CUDNN_DATA_FLOAT, 1, k, 1, 1),
                   "cudnnSetTensor4dDescriptor (bias)");
    /* the fused epilogue: Relu, or identity (which cuDNN supports only with IMPLICIT_PRECOMP_GEMM);
       PROPAGATE_NAN keeps a NaN through the Relu, as ONNX and the CPU backend do */
    OPARA__DNN_TRY(rt, out, dnn->cudnnSetActivationDescriptor(out->act, c->relu ? OPARA_CUDNN_ACTIVATION_RELU : OPARA_CUDNN_ACTIVATION_IDENTITY,
                                                         OPARA_CUDNN_PROPAGATE_NAN, 0.0),
                   "cudnnSetActivationDescriptor");
    out->call = c->relu ? OPARA__CUDNN_BIAS_RELU : c->has_bias ? OPARA__CUDNN_BIAS : OPARA__CUDNN_FORWARD;
    out->algo = OPARA_CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
    return OPARA_OK;
}

/* 1 when the precision allows an algorithm of math type m (see the top of the file). */
static int opara__cudnn_math_allowed(opara_cudnnMathType_t m, int tf32) {
    if (m == OPARA_CUDNN_FMA_MATH) return 1;
    return tf32 && (m == OPARA_CUDNN_DEFAULT_MATH || m == OPARA_CUDNN_TENSOR_OP_MATH);
}

OPARA__PRIVATE opara_result opara__cudnn_conv_choose(opara_runtime* rt, const opara_logger* session_logger,
                                                    const opara_cuda_cudnn* dnn, opara_cudnnHandle_t handle,
                                                    opara__cudnn_conv* conv) {
    const opara_logger* logger = session_logger ? session_logger : &rt->logger;
    opara_cudnnConvolutionFwdAlgoPerf_t perf[OPARA_CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int returned = 0, i;
    if (conv->call != OPARA__CUDNN_BIAS) {
        OPARA__DNN_TRY(rt, conv, dnn->cudnnGetConvolutionForwardAlgorithm_v7(handle, conv->x, conv->w, conv->conv, conv->y,
                                                                             OPARA_CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &returned, perf),
                       "cudnnGetConvolutionForwardAlgorithm_v7");
        for (i = 0; i < returned && i < OPARA_CUDNN_CONVOLUTION_FWD_ALGO_COUNT; ++i)
            if (perf[i].status == OPARA_CUDNN_STATUS_SUCCESS && perf[i].memory <= OPARA__CUDNN_WORKSPACE_LIMIT &&
                opara__cudnn_math_allowed(perf[i].mathType, conv->tf32)) {
                conv->algo = perf[i].algo;
                if (perf[i].mathType != conv->math) {
                    OPARA__DNN_TRY(rt, conv, dnn->cudnnSetConvolutionMathType(conv->conv, perf[i].mathType),
                                   "cudnnSetConvolutionMathType (the algorithm's)");
                    conv->math = perf[i].mathType;
                }
                break;
            }
    }
    /* the workspace depends on the math type: asked after it is final */
    OPARA__DNN_TRY(rt, conv, dnn->cudnnGetConvolutionForwardWorkspaceSize(handle, conv->x, conv->w, conv->conv, conv->y, conv->algo,
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
