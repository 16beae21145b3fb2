/* cuda_headers_check.c - opara_cuda.h against NVIDIA's own headers, in one translation unit that
   includes both (which also shows the two never clash).

   Built by mk/cuda.mk twice: as C (NVIDIA's headers first) and as C++11 (ours first), with
   -isystem $(OPARA_CUDA_INC). Checked at compile time, so a mismatch is a build failure:
   - every enum value we declare equals NVIDIA's constant of the same name;
   - every enum type has the size and signedness of NVIDIA's;
   - every struct has NVIDIA's size, and each member its offset and size (C++: its type too);
   - C++ only: every function pointer type equals the type of NVIDIA's declared function, and
     for driver entry points also NVIDIA's cudaTypedefs.h PFN_<name>_v<version> for the name and
     version the loader asks cuGetProcAddress for. Types are compared after mapping each NVIDIA
     type to ours (opaque handle struct tags, enums, structs); everything else must be the
     identical type, so a wrong pointer level, const, integer width or parameter order fails.
   At run time the same value checks run again so the summary counts them. Without the headers
   (or with headers older than CUDA 13.0 / cuDNN 9) the program prints a SKIP with the reason. */
#ifdef OPARA_CHECK_OURS_FIRST
#  include "opara_cuda.h"
#endif

#if defined(__has_include)
#  if __has_include(<cuda.h>) && __has_include(<cudaTypedefs.h>)
#    include <cuda.h>
#    include <cudaTypedefs.h>
#    if CUDA_VERSION >= 13000
#      define HAVE_CUDA_H 1
#    endif
#  endif
#  if __has_include(<nvrtc.h>)
#    include <nvrtc.h>
#    define HAVE_NVRTC_H 1
#  endif
#  if __has_include(<cublas_v2.h>)
#    include <cublas_v2.h>
#    define HAVE_CUBLAS_H 1
#  endif
#  if __has_include(<cupti.h>)
#    include <cupti.h>
#    define HAVE_CUPTI_H 1
#  endif
#  if __has_include(<cudnn.h>)
#    include <cudnn.h>
#    if CUDNN_MAJOR >= 9
#      define HAVE_CUDNN_H 1
#    endif
#  endif
#endif
/* nvrtc.h and cublas_v2.h carry no version of their own; tie them to cuda.h's. */
#if !defined(HAVE_CUDA_H)
#  undef HAVE_NVRTC_H
#  undef HAVE_CUBLAS_H
#  undef HAVE_CUPTI_H
#endif

#ifndef OPARA_CHECK_OURS_FIRST
#  include "opara_cuda.h"
#endif

#include "opara_test.h"

#ifdef __cplusplus
#  include <type_traits>
#endif

#define CHK_STR_(x) #x
#define CHK_STR(x) CHK_STR_(x)
#define CHK_CONST(tag, cond) typedef char tag[(cond) ? 1 : -1];

/* ---- enum values: X(NAME, value) lists from opara_cuda.h ------------------------------------- */
#define CHK_VALUE(name, value) \
    CHK_CONST(chk_value_##name, (long long)OPARA_##name == (long long)(name) && (long long)(name) == (long long)(value))
#define RUN_VALUE(name, value) \
    CHECK_EQ((long long)OPARA_##name, (long long)(name)); \
    ++*count;

/* ---- enum and scalar types ------------------------------------------------------------------- */
#ifdef __cplusplus
#  define CHK_ENUM(ours, nv) \
    static_assert(sizeof(ours) == sizeof(nv), "size of " #ours); \
    static_assert(std::is_same<std::underlying_type<ours>::type, std::underlying_type<nv>::type>::value, "underlying type of " #ours);
#  define CHK_SCALAR(ours, nv) static_assert(std::is_same<ours, nv>::value, "type " #ours);
#else
#  define CHK_ENUM(ours, nv) \
    CHK_CONST(chk_size_##ours, sizeof(ours) == sizeof(nv)) CHK_CONST(chk_sign_##ours, ((ours)-1 > (ours)0) == ((nv)-1 > (nv)0))
#  define CHK_SCALAR(ours, nv) \
    CHK_CONST(chk_size_##ours, sizeof(ours) == sizeof(nv)) CHK_CONST(chk_sign_##ours, ((ours)-1 > (ours)0) == ((nv)-1 > (nv)0))
#endif

/* ---- structs --------------------------------------------------------------------------------- */
#define CHK_STRUCT(ours, nv) CHK_CONST(chk_struct_##ours, sizeof(ours) == sizeof(nv))
#define CHK_FIELD(ours, nv, field) \
    CHK_CONST(chk_field_##ours##_##field, \
              offsetof(ours, field) == offsetof(nv, field) && sizeof(((ours*)0)->field) == sizeof(((nv*)0)->field))

#ifdef __cplusplus
/* NVIDIA type -> our type. Anything not mapped stays itself, so it must already be identical. */
template <class T> struct opara_map { typedef T type; };
template <class T> struct opara_map<T*> { typedef typename opara_map<T>::type* type; };
template <class T> struct opara_map<const T> { typedef const typename opara_map<T>::type type; };
template <class T, size_t N> struct opara_map<T[N]> { typedef typename opara_map<T>::type type[N]; };
#  define MAP(nv, ours) template <> struct opara_map<nv> { typedef ours type; };

template <class F> struct opara_map_fn;
template <class R, class... A> struct opara_map_fn<R (*)(A...)> {
    typedef typename opara_map<R>::type (*type)(typename opara_map<A>::type...);
};
#  define CHK_FN(ours_pfn, nv_fn_ptr_type) \
    static_assert(std::is_same<opara_map_fn<nv_fn_ptr_type>::type, ours_pfn>::value, #ours_pfn " vs " #nv_fn_ptr_type);
#  define CHK_FIELD_TYPE(ours, nv, field) \
    static_assert(std::is_same<opara_map<decltype(((nv*)0)->field)>::type, decltype(((ours*)0)->field)>::value, #ours "." #field);
#else
#  define CHK_FIELD_TYPE(ours, nv, field)
#endif

#define CHK_MEMBER(ours, nv, field) CHK_FIELD(ours, nv, field) CHK_FIELD_TYPE(ours, nv, field)

/* ============================================================================================== */
#ifdef HAVE_CUDA_H
#  define DRIVER_VALUE_LISTS(X) \
    OPARA_CUDA_RESULT_LIST(X) OPARA_CU_DEVICE_ATTRIBUTE_LIST(X) OPARA_CU_FUNCTION_ATTRIBUTE_LIST(X) \
    OPARA_CU_JIT_OPTION_LIST(X) OPARA_CU_STREAM_CAPTURE_MODE_LIST(X) OPARA_CU_STREAM_CAPTURE_STATUS_LIST(X) \
    OPARA_CU_GRAPH_NODE_TYPE_LIST(X) OPARA_CU_GRAPH_EXEC_UPDATE_RESULT_LIST(X) OPARA_CU_GRAPH_DEPENDENCY_TYPE_LIST(X) \
    OPARA_CU_GRAPH_INSTANTIATE_FLAGS_LIST(X) OPARA_CU_PROC_ADDRESS_FLAGS_LIST(X) OPARA_CU_PROC_ADDRESS_RESULT_LIST(X) \
    OPARA_CU_EVENT_FLAGS_LIST(X) OPARA_CU_EVENT_WAIT_FLAGS_LIST(X) OPARA_CU_STREAM_FLAGS_LIST(X)
DRIVER_VALUE_LISTS(CHK_VALUE)

CHK_ENUM(opara_CUresult, CUresult)
CHK_ENUM(opara_CUdevice_attribute, CUdevice_attribute)
CHK_ENUM(opara_CUfunction_attribute, CUfunction_attribute)
CHK_ENUM(opara_CUjit_option, CUjit_option)
CHK_ENUM(opara_CUstreamCaptureMode, CUstreamCaptureMode)
CHK_ENUM(opara_CUstreamCaptureStatus, CUstreamCaptureStatus)
CHK_ENUM(opara_CUgraphNodeType, CUgraphNodeType)
CHK_ENUM(opara_CUgraphExecUpdateResult, CUgraphExecUpdateResult)
CHK_ENUM(opara_CUgraphDependencyType, CUgraphDependencyType)
CHK_ENUM(opara_CUgraphInstantiate_flags, CUgraphInstantiate_flags)
CHK_ENUM(opara_CUdriverProcAddress_flags, CUdriverProcAddress_flags)
CHK_ENUM(opara_CUdriverProcAddressQueryResult, CUdriverProcAddressQueryResult)
CHK_ENUM(opara_CUevent_flags, CUevent_flags)
CHK_ENUM(opara_CUevent_wait_flags, CUevent_wait_flags)
CHK_ENUM(opara_CUstream_flags, CUstream_flags)
CHK_SCALAR(opara_CUdeviceptr, CUdeviceptr)
CHK_SCALAR(opara_CUdevice, CUdevice)
CHK_SCALAR(opara_cuuint64_t, cuuint64_t)

#  ifdef __cplusplus
MAP(CUctx_st, opara_CUctx_st)
MAP(CUmod_st, opara_CUmod_st)
MAP(CUfunc_st, opara_CUfunc_st)
MAP(CUkern_st, opara_CUkern_st)
MAP(CUevent_st, opara_CUevent_st)
MAP(CUstream_st, opara_CUstream_st)
MAP(CUgraph_st, opara_CUgraph_st)
MAP(CUgraphNode_st, opara_CUgraphNode_st)
MAP(CUgraphExec_st, opara_CUgraphExec_st)
MAP(CUresult, opara_CUresult)
MAP(CUdevice_attribute, opara_CUdevice_attribute)
MAP(CUfunction_attribute, opara_CUfunction_attribute)
MAP(CUjit_option, opara_CUjit_option)
MAP(CUstreamCaptureMode, opara_CUstreamCaptureMode)
MAP(CUstreamCaptureStatus, opara_CUstreamCaptureStatus)
MAP(CUgraphNodeType, opara_CUgraphNodeType)
MAP(CUgraphExecUpdateResult, opara_CUgraphExecUpdateResult)
MAP(CUdriverProcAddressQueryResult, opara_CUdriverProcAddressQueryResult)
MAP(CUgraphEdgeData, opara_CUgraphEdgeData)
MAP(CUgraphExecUpdateResultInfo, opara_CUgraphExecUpdateResultInfo)
MAP(CUDA_KERNEL_NODE_PARAMS_v2, opara_CUDA_KERNEL_NODE_PARAMS_v2)
#  endif

CHK_STRUCT(opara_CUgraphEdgeData, CUgraphEdgeData)
CHK_MEMBER(opara_CUgraphEdgeData, CUgraphEdgeData, from_port)
CHK_MEMBER(opara_CUgraphEdgeData, CUgraphEdgeData, to_port)
CHK_MEMBER(opara_CUgraphEdgeData, CUgraphEdgeData, type)
CHK_MEMBER(opara_CUgraphEdgeData, CUgraphEdgeData, reserved)
CHK_STRUCT(opara_CUgraphExecUpdateResultInfo, CUgraphExecUpdateResultInfo)
CHK_MEMBER(opara_CUgraphExecUpdateResultInfo, CUgraphExecUpdateResultInfo, result)
CHK_MEMBER(opara_CUgraphExecUpdateResultInfo, CUgraphExecUpdateResultInfo, errorNode)
CHK_MEMBER(opara_CUgraphExecUpdateResultInfo, CUgraphExecUpdateResultInfo, errorFromNode)
CHK_STRUCT(opara_CUDA_KERNEL_NODE_PARAMS, CUDA_KERNEL_NODE_PARAMS)
CHK_MEMBER(opara_CUDA_KERNEL_NODE_PARAMS, CUDA_KERNEL_NODE_PARAMS, func)
CHK_MEMBER(opara_CUDA_KERNEL_NODE_PARAMS, CUDA_KERNEL_NODE_PARAMS, gridDimX)
CHK_MEMBER(opara_CUDA_KERNEL_NODE_PARAMS, CUDA_KERNEL_NODE_PARAMS, gridDimY)
CHK_MEMBER(opara_CUDA_KERNEL_NODE_PARAMS, CUDA_KERNEL_NODE_PARAMS, gridDimZ)
CHK_MEMBER(opara_CUDA_KERNEL_NODE_PARAMS, CUDA_KERNEL_NODE_PARAMS, blockDimX)
CHK_MEMBER(opara_CUDA_KERNEL_NODE_PARAMS, CUDA_KERNEL_NODE_PARAMS, blockDimY)
CHK_MEMBER(opara_CUDA_KERNEL_NODE_PARAMS, CUDA_KERNEL_NODE_PARAMS, blockDimZ)
CHK_MEMBER(opara_CUDA_KERNEL_NODE_PARAMS, CUDA_KERNEL_NODE_PARAMS, sharedMemBytes)
CHK_MEMBER(opara_CUDA_KERNEL_NODE_PARAMS, CUDA_KERNEL_NODE_PARAMS, kernelParams)
CHK_MEMBER(opara_CUDA_KERNEL_NODE_PARAMS, CUDA_KERNEL_NODE_PARAMS, extra)
CHK_MEMBER(opara_CUDA_KERNEL_NODE_PARAMS, CUDA_KERNEL_NODE_PARAMS, kern)
CHK_MEMBER(opara_CUDA_KERNEL_NODE_PARAMS, CUDA_KERNEL_NODE_PARAMS, ctx)

#  ifdef __cplusplus
/* The declared function, and the cudaTypedefs.h PFN of the (name, version) the loader asks for. */
#    define CHK_DRIVER_FN(ret, name, params, req, proc, ver, alt, alt_ver) \
        CHK_FN(opara_PFN_##name, decltype(&name)) CHK_FN(opara_PFN_##name, PFN_##proc##_v##ver)
OPARA_CUDA_DRIVER_FUNCS(CHK_DRIVER_FN)
/* The one fallback symbol: cuEventElapsedTime before CUDA 12.8. */
CHK_FN(opara_PFN_cuEventElapsedTime_v2, PFN_cuEventElapsedTime_v2000)
#  endif
#endif /* HAVE_CUDA_H */

/* ============================================================================================== */
#ifdef HAVE_NVRTC_H
OPARA_NVRTC_RESULT_LIST(CHK_VALUE)
CHK_ENUM(opara_nvrtcResult, nvrtcResult)
#  ifdef __cplusplus
MAP(_nvrtcProgram, opara__nvrtcProgram)
MAP(nvrtcResult, opara_nvrtcResult)
#    define CHK_NVRTC_FN(ret, name, params, req) CHK_FN(opara_PFN_##name, decltype(&name))
OPARA_CUDA_NVRTC_FUNCS(CHK_NVRTC_FN)
#  endif
#endif

/* ============================================================================================== */
#ifdef HAVE_CUBLAS_H
#  define CUBLAS_VALUE_LISTS(X) \
    OPARA_CUBLAS_STATUS_LIST(X) OPARA_CUBLAS_OPERATION_LIST(X) OPARA_CUBLAS_MATH_LIST(X) \
    OPARA_CUBLAS_COMPUTE_TYPE_LIST(X) OPARA_CUBLAS_GEMM_ALGO_LIST(X) OPARA_CUDA_DATA_TYPE_LIST(X) \
    OPARA_LIBRARY_PROPERTY_TYPE_LIST(X)
CUBLAS_VALUE_LISTS(CHK_VALUE)
CHK_ENUM(opara_cublasStatus_t, cublasStatus_t)
CHK_ENUM(opara_cublasOperation_t, cublasOperation_t)
CHK_ENUM(opara_cublasMath_t, cublasMath_t)
CHK_ENUM(opara_cublasComputeType_t, cublasComputeType_t)
CHK_ENUM(opara_cublasGemmAlgo_t, cublasGemmAlgo_t)
CHK_ENUM(opara_cudaDataType, cudaDataType)
CHK_ENUM(opara_libraryPropertyType, libraryPropertyType)
#  ifdef __cplusplus
MAP(cublasContext, opara_cublasContext)
MAP(cublasStatus_t, opara_cublasStatus_t)
MAP(cublasOperation_t, opara_cublasOperation_t)
MAP(cublasMath_t, opara_cublasMath_t)
MAP(cublasComputeType_t, opara_cublasComputeType_t)
MAP(cublasGemmAlgo_t, opara_cublasGemmAlgo_t)
MAP(cudaDataType, opara_cudaDataType)
MAP(libraryPropertyType, opara_libraryPropertyType)
#    ifndef HAVE_CUDA_H
MAP(CUstream_st, opara_CUstream_st)
#    endif
/* In C++ cublas_api.h overloads cublasGemmEx with a cudaDataType computeType; take the export
   by its documented prototype (the cast fails to compile if no such overload exists). */
typedef cublasStatus_t(CUBLASWINAPI* nv_cublasGemmEx_t)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                                          int, const void*, const void*, cudaDataType, int, const void*,
                                                          cudaDataType, int, const void*, void*, cudaDataType, int,
                                                          cublasComputeType_t, cublasGemmAlgo_t);
#    define CHK_CUBLAS_FN(ret, name, params, req) CHK_FN(opara_PFN_##name, decltype(&name))
#    define cublasGemmEx (*static_cast<nv_cublasGemmEx_t>(&cublasGemmEx))
OPARA_CUDA_CUBLAS_FUNCS(CHK_CUBLAS_FN)
#    undef cublasGemmEx
#  endif
#endif

/* ============================================================================================== */
#ifdef HAVE_CUDNN_H
#  define CUDNN_VALUE_LISTS(X) \
    OPARA_CUDNN_STATUS_LIST(X) OPARA_CUDNN_DATA_TYPE_LIST(X) OPARA_CUDNN_MATH_TYPE_LIST(X) \
    OPARA_CUDNN_NAN_PROPAGATION_LIST(X) OPARA_CUDNN_TENSOR_FORMAT_LIST(X) OPARA_CUDNN_ACTIVATION_MODE_LIST(X) \
    OPARA_CUDNN_CONVOLUTION_MODE_LIST(X) OPARA_CUDNN_CONVOLUTION_FWD_ALGO_LIST(X) OPARA_CUDNN_DETERMINISM_LIST(X)
CUDNN_VALUE_LISTS(CHK_VALUE)
CHK_ENUM(opara_cudnnStatus_t, cudnnStatus_t)
CHK_ENUM(opara_cudnnDataType_t, cudnnDataType_t)
CHK_ENUM(opara_cudnnMathType_t, cudnnMathType_t)
CHK_ENUM(opara_cudnnNanPropagation_t, cudnnNanPropagation_t)
CHK_ENUM(opara_cudnnTensorFormat_t, cudnnTensorFormat_t)
CHK_ENUM(opara_cudnnActivationMode_t, cudnnActivationMode_t)
CHK_ENUM(opara_cudnnConvolutionMode_t, cudnnConvolutionMode_t)
CHK_ENUM(opara_cudnnConvolutionFwdAlgo_t, cudnnConvolutionFwdAlgo_t)
CHK_ENUM(opara_cudnnDeterminism_t, cudnnDeterminism_t)
#  ifdef __cplusplus
MAP(cudnnContext, opara_cudnnContext)
MAP(cudnnTensorStruct, opara_cudnnTensorStruct)
MAP(cudnnFilterStruct, opara_cudnnFilterStruct)
MAP(cudnnConvolutionStruct, opara_cudnnConvolutionStruct)
MAP(cudnnActivationStruct, opara_cudnnActivationStruct)
MAP(cudnnStatus_t, opara_cudnnStatus_t)
MAP(cudnnDataType_t, opara_cudnnDataType_t)
MAP(cudnnMathType_t, opara_cudnnMathType_t)
MAP(cudnnNanPropagation_t, opara_cudnnNanPropagation_t)
MAP(cudnnTensorFormat_t, opara_cudnnTensorFormat_t)
MAP(cudnnActivationMode_t, opara_cudnnActivationMode_t)
MAP(cudnnConvolutionMode_t, opara_cudnnConvolutionMode_t)
MAP(cudnnConvolutionFwdAlgo_t, opara_cudnnConvolutionFwdAlgo_t)
MAP(cudnnDeterminism_t, opara_cudnnDeterminism_t)
MAP(cudnnConvolutionFwdAlgoPerf_t, opara_cudnnConvolutionFwdAlgoPerf_t)
#    if !defined(HAVE_CUDA_H) && !defined(HAVE_CUBLAS_H)
MAP(CUstream_st, opara_CUstream_st)
#    endif
#    define CHK_CUDNN_FN(ret, name, params, req) CHK_FN(opara_PFN_##name, decltype(&name))
OPARA_CUDA_CUDNN_FUNCS(CHK_CUDNN_FN)
#  endif
CHK_STRUCT(opara_cudnnConvolutionFwdAlgoPerf_t, cudnnConvolutionFwdAlgoPerf_t)
CHK_MEMBER(opara_cudnnConvolutionFwdAlgoPerf_t, cudnnConvolutionFwdAlgoPerf_t, algo)
CHK_MEMBER(opara_cudnnConvolutionFwdAlgoPerf_t, cudnnConvolutionFwdAlgoPerf_t, status)
CHK_MEMBER(opara_cudnnConvolutionFwdAlgoPerf_t, cudnnConvolutionFwdAlgoPerf_t, time)
CHK_MEMBER(opara_cudnnConvolutionFwdAlgoPerf_t, cudnnConvolutionFwdAlgoPerf_t, memory)
CHK_MEMBER(opara_cudnnConvolutionFwdAlgoPerf_t, cudnnConvolutionFwdAlgoPerf_t, determinism)
CHK_MEMBER(opara_cudnnConvolutionFwdAlgoPerf_t, cudnnConvolutionFwdAlgoPerf_t, mathType)
CHK_MEMBER(opara_cudnnConvolutionFwdAlgoPerf_t, cudnnConvolutionFwdAlgoPerf_t, reserved)
#endif

/* ============================================================================================== */
/* CUPTI: the enums, the external-correlation record, the prefix of the kernel record we read
   (opara_CUpti_ActivityKernel10 stops at `name`, so its size is not compared), the functions. */
#ifdef HAVE_CUPTI_H
#  define CUPTI_VALUE_LISTS(X) \
    OPARA_CUPTI_RESULT_LIST(X) OPARA_CUPTI_ACTIVITY_KIND_LIST(X) OPARA_CUPTI_EXTERNAL_CORRELATION_KIND_LIST(X)
CUPTI_VALUE_LISTS(CHK_VALUE)
CHK_CONST(chk_cupti_flush_forced, OPARA_CUPTI_ACTIVITY_FLAG_FLUSH_FORCED == CUPTI_ACTIVITY_FLAG_FLUSH_FORCED)
CHK_ENUM(opara_CUptiResult, CUptiResult)
CHK_ENUM(opara_CUpti_ActivityKind, CUpti_ActivityKind)
CHK_ENUM(opara_CUpti_ExternalCorrelationKind, CUpti_ExternalCorrelationKind)
#  ifdef __cplusplus
MAP(CUptiResult, opara_CUptiResult)
MAP(CUpti_ActivityKind, opara_CUpti_ActivityKind)
MAP(CUpti_ExternalCorrelationKind, opara_CUpti_ExternalCorrelationKind)
MAP(CUpti_Activity, opara_CUpti_Activity)
static_assert(std::is_same<opara_map_fn<CUpti_BuffersCallbackRequestFunc>::type, opara_CUpti_BuffersCallbackRequestFunc>::value,
              "CUpti_BuffersCallbackRequestFunc");
static_assert(std::is_same<opara_map_fn<CUpti_BuffersCallbackCompleteFunc>::type, opara_CUpti_BuffersCallbackCompleteFunc>::value,
              "CUpti_BuffersCallbackCompleteFunc");
MAP(CUpti_BuffersCallbackCompleteFunc, opara_CUpti_BuffersCallbackCompleteFunc)
#    define CHK_CUPTI_FN(ret, name, params, req) CHK_FN(opara_PFN_##name, decltype(&name))
OPARA_CUDA_CUPTI_FUNCS(CHK_CUPTI_FN)
#  endif
CHK_MEMBER(opara_CUpti_Activity, CUpti_Activity, kind) /* only read through a pointer: size not compared */
CHK_STRUCT(opara_CUpti_ActivityExternalCorrelation, CUpti_ActivityExternalCorrelation)
#  define CHK_CUPTI_EXT(field) CHK_MEMBER(opara_CUpti_ActivityExternalCorrelation, CUpti_ActivityExternalCorrelation, field)
CHK_CUPTI_EXT(kind) CHK_CUPTI_EXT(externalKind) CHK_CUPTI_EXT(externalId) CHK_CUPTI_EXT(correlationId) CHK_CUPTI_EXT(reserved)
/* cacheConfig is a one-byte union and the partitioned-cache members an enum there: offset and size only */
#  define CHK_CUPTI_K(field) CHK_FIELD(opara_CUpti_ActivityKernel10, CUpti_ActivityKernel10, field)
#  define CHK_CUPTI_KT(field) CHK_MEMBER(opara_CUpti_ActivityKernel10, CUpti_ActivityKernel10, field)
CHK_CUPTI_KT(kind) CHK_CUPTI_K(cacheConfig) CHK_CUPTI_KT(sharedMemoryConfig) CHK_CUPTI_KT(registersPerThread)
CHK_CUPTI_K(partitionedGlobalCacheRequested) CHK_CUPTI_K(partitionedGlobalCacheExecuted) CHK_CUPTI_KT(start)
CHK_CUPTI_KT(end) CHK_CUPTI_KT(completed) CHK_CUPTI_KT(deviceId) CHK_CUPTI_KT(contextId) CHK_CUPTI_KT(streamId)
CHK_CUPTI_KT(gridX) CHK_CUPTI_KT(gridY) CHK_CUPTI_KT(gridZ) CHK_CUPTI_KT(blockX) CHK_CUPTI_KT(blockY) CHK_CUPTI_KT(blockZ)
CHK_CUPTI_KT(staticSharedMemory) CHK_CUPTI_KT(dynamicSharedMemory) CHK_CUPTI_KT(localMemoryPerThread)
CHK_CUPTI_KT(localMemoryTotal) CHK_CUPTI_KT(correlationId) CHK_CUPTI_KT(gridId) CHK_CUPTI_KT(name)
#endif

/* ============================================================================================== */
/* Run-time part: the same values once more, counted, and a SKIP with the reason per library.     */

#if !defined(__has_include)
#  define NO_HEADERS_WHY "the compiler has no __has_include"
#else
#  define NO_HEADERS_WHY "not found on the include path (mk/cuda.mk adds -isystem $(OPARA_CUDA_INC))"
#endif

OT_TEST(driver_values_match_cuda_h) {
#ifdef HAVE_CUDA_H
    long long n = 0, *count = &n;
    DRIVER_VALUE_LISTS(RUN_VALUE)
    OT_LOG("%lld values checked against cuda.h %d", n, CUDA_VERSION);
    CHECK(n > 150);
    CHECK((void*)OPARA_CU_STREAM_LEGACY == (void*)CU_STREAM_LEGACY);
    CHECK((void*)OPARA_CU_STREAM_PER_THREAD == (void*)CU_STREAM_PER_THREAD);
#elif defined(CUDA_VERSION)
    SKIP("cuda.h is CUDA %d; the checks target CUDA 13.0 or newer", CUDA_VERSION);
#else
    SKIP("cuda.h / cudaTypedefs.h: %s", NO_HEADERS_WHY);
#endif
}

OT_TEST(nvrtc_values_match_nvrtc_h) {
#ifdef HAVE_NVRTC_H
    long long n = 0, *count = &n;
    OPARA_NVRTC_RESULT_LIST(RUN_VALUE)
    CHECK(n >= 18);
#else
    SKIP("nvrtc.h with cuda.h 13.0+: %s", NO_HEADERS_WHY);
#endif
}

OT_TEST(cublas_values_match_cublas_h) {
#ifdef HAVE_CUBLAS_H
    long long n = 0, *count = &n;
    CUBLAS_VALUE_LISTS(RUN_VALUE)
    CHECK(n > 40);
#else
    SKIP("cublas_v2.h with cuda.h 13.0+: %s", NO_HEADERS_WHY);
#endif
}

OT_TEST(cudnn_values_match_cudnn_h) {
#ifdef HAVE_CUDNN_H
    long long n = 0, *count = &n;
    CUDNN_VALUE_LISTS(RUN_VALUE)
    CHECK(n > 80);
    CHECK_EQ(sizeof(opara_cudnnConvolutionFwdAlgoPerf_t), sizeof(cudnnConvolutionFwdAlgoPerf_t));
#elif defined(CUDNN_MAJOR)
    SKIP("cudnn.h is cuDNN %d; the checks target cuDNN 9", CUDNN_MAJOR);
#else
    SKIP("cudnn.h: %s", NO_HEADERS_WHY);
#endif
}

OT_TEST(cupti_values_match_cupti_h) {
#ifdef HAVE_CUPTI_H
    long long n = 0, *count = &n;
    CUPTI_VALUE_LISTS(RUN_VALUE)
    CHECK(n >= 9);
    CHECK_EQ((long long)offsetof(opara_CUpti_ActivityKernel10, name), (long long)offsetof(CUpti_ActivityKernel10, name));
#else
    SKIP("cupti.h with cuda.h 13.0+: %s", NO_HEADERS_WHY);
#endif
}

/* Function types are compile-time checks in the C++ build only; this reports which build ran. */
OT_TEST(function_types_match) {
#if !defined(__cplusplus)
    SKIP("function types are compared in the C++ build of this file (cuda_headers_check_cxx)");
#elif !defined(HAVE_CUDA_H) || !defined(HAVE_NVRTC_H) || !defined(HAVE_CUBLAS_H) || !defined(HAVE_CUDNN_H)
    SKIP("some NVIDIA headers are missing or too old; see the other tests");
#else
    CHECK(sizeof(opara_PFN_cuLaunchKernel) == sizeof(PFN_cuLaunchKernel_v4000));
#endif
}

static const opara_test_case tests[] = {
    OT_CASE(driver_values_match_cuda_h), OT_CASE(nvrtc_values_match_nvrtc_h), OT_CASE(cublas_values_match_cublas_h),
    OT_CASE(cudnn_values_match_cudnn_h), OT_CASE(cupti_values_match_cupti_h), OT_CASE(function_types_match),
};

int main(int argc, char** argv) { return opara_test_main(argc, argv, tests, OT_COUNT(tests)); }
