/* opara_cuda.h - standalone declarations and run-time loader for the subset of the CUDA driver API,
   NVRTC, cuBLAS and cuDNN that opara.h uses. No CUDA SDK is needed to compile it, nothing is
   linked: the libraries are found with dlopen (LoadLibraryA on Windows) when a program asks.

   USE: in exactly one C or C++ file define OPARA_CUDA_IMPLEMENTATION before including this header.
   It includes opara_dl.h (the dynamic-library layer), which must stay beside it.

       opara_cuda_driver cu;
       char err[1024];
       if (opara_cuda_driver_load(&cu, NULL, err, sizeof err) != OPARA_CUDA_LOAD_OK) puts(err);
       else if (cu.cuInit(0) == OPARA_CUDA_SUCCESS) ...
       opara_cuda_driver_unload(&cu);

   Link with -ldl. Configuration macros (define before including):
       OPARA_CUDA_IMPLEMENTATION  emit the loader in this translation unit
       OPARA_CUDA_STATIC          make the loader functions static
       OPARA_CUDA_DEF             storage class of the loader functions (overrides OPARA_CUDA_STATIC)
   Inside the amalgamated opara.h the loader is emitted with the implementation and is static.

   NAMING: every name is NVIDIA's name with an opara prefix, so this header and NVIDIA's headers
   can be included in the same translation unit.
       types, struct tags      opara_ + NVIDIA's name        opara_CUresult, opara_CUstream,
                                                              struct opara_CUstream_st, opara_cudnnHandle_t
       enum values, macros     OPARA_ + NVIDIA's name        OPARA_CUDA_SUCCESS, OPARA_CUBLAS_OP_N,
                                                              OPARA_CU_DEVICE_ATTRIBUTE_WARP_SIZE
       function pointer types  opara_PFN_ + exported symbol  opara_PFN_cuMemAlloc_v2
       table members           the exported symbol           cu.cuMemAlloc_v2(&ptr, bytes)
   Table members carry the ABI version suffix of the symbol they bind to (cuMemAlloc_v2,
   cuStreamDestroy_v2, cublasCreate_v2, ...), which is what NVIDIA's headers map the plain names to.
   Each library's functions are one X-macro list, OPARA_CUDA_<LIB>_FUNCS(X), that generates the
   typedefs, the table members and the loader's symbol table; enum values are X-macro lists too.
   tests/cuda_headers_check.c checks every value, struct layout and function type against NVIDIA's
   headers (CUDA 13.0, cuDNN 9).

   LOADING
   opara_cuda_<lib>_load(table, path, err, err_size) opens one library and fills its table.
   - path (else the environment variable below) names one library to load. When it is given only
     that library is tried: an explicit choice that fails is an error, never silently replaced.
   - otherwise the search list is tried in order, versioned names first, by name (the system
     loader path: LD_LIBRARY_PATH, ldconfig's cache, the default directories):
       lib      env variable        Linux                                     Windows
       driver   OPARA_CUDA_DRIVER   libcuda.so.1 libcuda.so                   nvcuda.dll
       NVRTC    OPARA_NVRTC         libnvrtc.so.13 .12 .11.2 libnvrtc.so      nvrtc64_130_0.dll nvrtc64_120_0.dll nvrtc64_112_0.dll
       cuBLAS   OPARA_CUBLAS        libcublas.so.13 .12 .11 libcublas.so      cublas64_13.dll cublas64_12.dll cublas64_11.dll
       cuDNN    OPARA_CUDNN         libcudnn.so.9 .8 libcudnn.so              cudnn64_9.dll cudnn64_8.dll
     then (all but the driver) the same names in directories, each searched once, in this order:
     OPARA_CUDA_LIB_PATH (':'-separated, ';' on Windows); the directories of CUDA libraries already
     in the process (ours, libcudart, libtorch_cuda, ...) and the pip wheels of the site-packages
     above them; the pip wheels of $VIRTUAL_ENV; $CONDA_PREFIX/lib and its wheels; $CUDA_HOME and
     $CUDA_PATH lib64, lib; the wheels of every python3* on PATH (prefix = the directory above
     bin), of ~/.local, /usr/local and /usr; /usr/local/cuda/lib64, lib. Wheels: site-packages/
     nvidia/cu13/lib (CUDA 13) and nvidia/cublas|cuda_nvrtc|cuda_cupti|cudnn/lib (CUDA 12, cuDNN).
     Windows: OPARA_CUDA_LIB_PATH, %CUDA_PATH%\bin\x64, %CUDA_PATH%\bin, %CONDA_PREFIX%\Library\bin.
     aarch64 Linux: also /usr/local/cuda/targets/aarch64-linux/lib (Jetson) and .../sbsa-linux/lib
     (Arm servers); the driver, after its names, in /usr/lib/aarch64-linux-gnu/tegra and .../nvidia
     (Jetson's L4T driver directories, which a container's loader path may lack).
   - the table's path is the file the system mapped (a bare name resolved to the full path) and
     origin says how it was found. NVRTC's builtins library is preloaded from NVRTC's directory
     (NVRTC opens it by soname); cuDNN is asked for a convolution descriptor, so a missing
     sub-library (libcudnn_cnn) is OPARA_CUDA_LOAD_INCOMPLETE at load rather than a failure later.
   - driver entry points are resolved with cuGetProcAddress_v2, asking for each symbol the CUDA
     version that introduced the ABI of our prototype, with CU_GET_PROC_ADDRESS_LEGACY_STREAM, when the
     driver exports it and cuDriverGetVersion answers; otherwise (and for any symbol it does not
     return) with dlsym of the versioned name. Other libraries use dlsym.
   - a library that cannot be opened gives OPARA_CUDA_LOAD_NOT_FOUND and a message that names
     every path tried with the system's reason; a required entry point that is missing gives
     OPARA_CUDA_LOAD_SYMBOL_MISSING and names it. Optional entry points are left NULL.
   - the minimum driver is CUDA 12.0 (cuGraphExecUpdate_v2, cuGetProcAddress_v2); the entry points
     introduced in 12.3 (cuStreamGetCaptureInfo_v3, cuGraphGetEdges_v2) are optional.
   No function here keeps global state: each table owns its library handle. */
#ifndef OPARA_CUDA_H_INCLUDED
#define OPARA_CUDA_H_INCLUDED
#define OPARA_CUDA_H_VERSION 1

#include <stddef.h>
#include <stdint.h>

/* The dynamic-library layer (opara_dl_open / opara_dl_sym / opara_dl_close) every loader below goes
   through; its own header, so that opara.h keeps it without CUDA. */
#include "opara_dl.h"

#if defined(__GNUC__) || defined(__clang__)
#  define OPARA__CUDA_UNUSED __attribute__((unused))
#else
#  define OPARA__CUDA_UNUSED
#endif

#ifndef OPARA_CUDA_DEF
#  if defined(OPARA_CUDA_STATIC) || defined(OPARA__AMALGAMATED)
#    define OPARA_CUDA_DEF static OPARA__CUDA_UNUSED
#  else
#    define OPARA_CUDA_DEF extern
#  endif
#endif

/* Calling conventions of NVIDIA's exports (they matter only on 32-bit Windows). */
#ifdef _WIN32
#  define OPARA__CUDA_STDCALL __stdcall
#else
#  define OPARA__CUDA_STDCALL
#endif
#ifndef OPARA_CUDAAPI
#  define OPARA_CUDAAPI OPARA__CUDA_STDCALL
#endif
#ifndef OPARA_CUBLASAPI
#  define OPARA_CUBLASAPI OPARA__CUDA_STDCALL
#endif
#ifndef OPARA_CUDNNAPI
#  define OPARA_CUDNNAPI OPARA__CUDA_STDCALL
#endif
#ifndef OPARA_NVRTCAPI
#  define OPARA_NVRTCAPI
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ============================================================================================== */
/* CUDA driver API types                                                                          */
/* ============================================================================================== */

typedef uint64_t opara_cuuint64_t;
#if defined(_WIN64) || defined(__LP64__)
typedef unsigned long long opara_CUdeviceptr;
#else
typedef unsigned int opara_CUdeviceptr;
#endif
typedef int opara_CUdevice;
typedef struct opara_CUctx_st* opara_CUcontext;
typedef struct opara_CUmod_st* opara_CUmodule;
typedef struct opara_CUfunc_st* opara_CUfunction;
typedef struct opara_CUkern_st* opara_CUkernel;
typedef struct opara_CUevent_st* opara_CUevent;
typedef struct opara_CUstream_st* opara_CUstream;
typedef struct opara_CUgraph_st* opara_CUgraph;
typedef struct opara_CUgraphNode_st* opara_CUgraphNode;
typedef struct opara_CUgraphExec_st* opara_CUgraphExec;

/* The special stream handles (cuda.h CU_STREAM_LEGACY, CU_STREAM_PER_THREAD). */
#define OPARA_CU_STREAM_LEGACY ((opara_CUstream)0x1)
#define OPARA_CU_STREAM_PER_THREAD ((opara_CUstream)0x2)

/* X(NVIDIA_NAME, value) lists; each becomes enum constants OPARA_<NVIDIA_NAME>. */
#define OPARA__CUDA_ENUM_ITEM(name, value) OPARA_##name = value,

#define OPARA_CUDA_RESULT_LIST(X) \
    X(CUDA_SUCCESS, 0) \
    X(CUDA_ERROR_INVALID_VALUE, 1) \
    X(CUDA_ERROR_OUT_OF_MEMORY, 2) \
    X(CUDA_ERROR_NOT_INITIALIZED, 3) \
    X(CUDA_ERROR_DEINITIALIZED, 4) \
    X(CUDA_ERROR_PROFILER_DISABLED, 5) \
    X(CUDA_ERROR_PROFILER_NOT_INITIALIZED, 6) \
    X(CUDA_ERROR_PROFILER_ALREADY_STARTED, 7) \
    X(CUDA_ERROR_PROFILER_ALREADY_STOPPED, 8) \
    X(CUDA_ERROR_STUB_LIBRARY, 34) \
    X(CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER, 36) \
    X(CUDA_ERROR_DEVICE_UNAVAILABLE, 46) \
    X(CUDA_ERROR_NO_DEVICE, 100) \
    X(CUDA_ERROR_INVALID_DEVICE, 101) \
    X(CUDA_ERROR_DEVICE_NOT_LICENSED, 102) \
    X(CUDA_ERROR_INVALID_IMAGE, 200) \
    X(CUDA_ERROR_INVALID_CONTEXT, 201) \
    X(CUDA_ERROR_CONTEXT_ALREADY_CURRENT, 202) \
    X(CUDA_ERROR_MAP_FAILED, 205) \
    X(CUDA_ERROR_UNMAP_FAILED, 206) \
    X(CUDA_ERROR_ARRAY_IS_MAPPED, 207) \
    X(CUDA_ERROR_ALREADY_MAPPED, 208) \
    X(CUDA_ERROR_NO_BINARY_FOR_GPU, 209) \
    X(CUDA_ERROR_ALREADY_ACQUIRED, 210) \
    X(CUDA_ERROR_NOT_MAPPED, 211) \
    X(CUDA_ERROR_NOT_MAPPED_AS_ARRAY, 212) \
    X(CUDA_ERROR_NOT_MAPPED_AS_POINTER, 213) \
    X(CUDA_ERROR_ECC_UNCORRECTABLE, 214) \
    X(CUDA_ERROR_UNSUPPORTED_LIMIT, 215) \
    X(CUDA_ERROR_CONTEXT_ALREADY_IN_USE, 216) \
    X(CUDA_ERROR_PEER_ACCESS_UNSUPPORTED, 217) \
    X(CUDA_ERROR_INVALID_PTX, 218) \
    X(CUDA_ERROR_INVALID_GRAPHICS_CONTEXT, 219) \
    X(CUDA_ERROR_NVLINK_UNCORRECTABLE, 220) \
    X(CUDA_ERROR_JIT_COMPILER_NOT_FOUND, 221) \
    X(CUDA_ERROR_UNSUPPORTED_PTX_VERSION, 222) \
    X(CUDA_ERROR_JIT_COMPILATION_DISABLED, 223) \
    X(CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY, 224) \
    X(CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC, 225) \
    X(CUDA_ERROR_CONTAINED, 226) \
    X(CUDA_ERROR_INVALID_SOURCE, 300) \
    X(CUDA_ERROR_FILE_NOT_FOUND, 301) \
    X(CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND, 302) \
    X(CUDA_ERROR_SHARED_OBJECT_INIT_FAILED, 303) \
    X(CUDA_ERROR_OPERATING_SYSTEM, 304) \
    X(CUDA_ERROR_INVALID_HANDLE, 400) \
    X(CUDA_ERROR_ILLEGAL_STATE, 401) \
    X(CUDA_ERROR_LOSSY_QUERY, 402) \
    X(CUDA_ERROR_NOT_FOUND, 500) \
    X(CUDA_ERROR_NOT_READY, 600) \
    X(CUDA_ERROR_ILLEGAL_ADDRESS, 700) \
    X(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, 701) \
    X(CUDA_ERROR_LAUNCH_TIMEOUT, 702) \
    X(CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING, 703) \
    X(CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED, 704) \
    X(CUDA_ERROR_PEER_ACCESS_NOT_ENABLED, 705) \
    X(CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE, 708) \
    X(CUDA_ERROR_CONTEXT_IS_DESTROYED, 709) \
    X(CUDA_ERROR_ASSERT, 710) \
    X(CUDA_ERROR_TOO_MANY_PEERS, 711) \
    X(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, 712) \
    X(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, 713) \
    X(CUDA_ERROR_HARDWARE_STACK_ERROR, 714) \
    X(CUDA_ERROR_ILLEGAL_INSTRUCTION, 715) \
    X(CUDA_ERROR_MISALIGNED_ADDRESS, 716) \
    X(CUDA_ERROR_INVALID_ADDRESS_SPACE, 717) \
    X(CUDA_ERROR_INVALID_PC, 718) \
    X(CUDA_ERROR_LAUNCH_FAILED, 719) \
    X(CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE, 720) \
    X(CUDA_ERROR_TENSOR_MEMORY_LEAK, 721) \
    X(CUDA_ERROR_NOT_PERMITTED, 800) \
    X(CUDA_ERROR_NOT_SUPPORTED, 801) \
    X(CUDA_ERROR_SYSTEM_NOT_READY, 802) \
    X(CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, 803) \
    X(CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE, 804) \
    X(CUDA_ERROR_MPS_CONNECTION_FAILED, 805) \
    X(CUDA_ERROR_MPS_RPC_FAILURE, 806) \
    X(CUDA_ERROR_MPS_SERVER_NOT_READY, 807) \
    X(CUDA_ERROR_MPS_MAX_CLIENTS_REACHED, 808) \
    X(CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED, 809) \
    X(CUDA_ERROR_MPS_CLIENT_TERMINATED, 810) \
    X(CUDA_ERROR_CDP_NOT_SUPPORTED, 811) \
    X(CUDA_ERROR_CDP_VERSION_MISMATCH, 812) \
    X(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, 900) \
    X(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, 901) \
    X(CUDA_ERROR_STREAM_CAPTURE_MERGE, 902) \
    X(CUDA_ERROR_STREAM_CAPTURE_UNMATCHED, 903) \
    X(CUDA_ERROR_STREAM_CAPTURE_UNJOINED, 904) \
    X(CUDA_ERROR_STREAM_CAPTURE_ISOLATION, 905) \
    X(CUDA_ERROR_STREAM_CAPTURE_IMPLICIT, 906) \
    X(CUDA_ERROR_CAPTURED_EVENT, 907) \
    X(CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD, 908) \
    X(CUDA_ERROR_TIMEOUT, 909) \
    X(CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE, 910) \
    X(CUDA_ERROR_EXTERNAL_DEVICE, 911) \
    X(CUDA_ERROR_INVALID_CLUSTER_SIZE, 912) \
    X(CUDA_ERROR_FUNCTION_NOT_LOADED, 913) \
    X(CUDA_ERROR_INVALID_RESOURCE_TYPE, 914) \
    X(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION, 915) \
    X(CUDA_ERROR_KEY_ROTATION, 916) \
    X(CUDA_ERROR_UNKNOWN, 999)
typedef enum opara_cudaError_enum { OPARA_CUDA_RESULT_LIST(OPARA__CUDA_ENUM_ITEM) } opara_CUresult;

#define OPARA_CU_DEVICE_ATTRIBUTE_LIST(X) \
    X(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 1) \
    X(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, 2) \
    X(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, 3) \
    X(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, 4) \
    X(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, 5) \
    X(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, 6) \
    X(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, 7) \
    X(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, 8) \
    X(CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY, 9) \
    X(CU_DEVICE_ATTRIBUTE_WARP_SIZE, 10) \
    X(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK, 12) \
    X(CU_DEVICE_ATTRIBUTE_CLOCK_RATE, 13) \
    X(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 16) \
    X(CU_DEVICE_ATTRIBUTE_INTEGRATED, 18) \
    X(CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS, 31) \
    X(CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, 33) \
    X(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, 36) \
    X(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, 37) \
    X(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, 38) \
    X(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, 39) \
    X(CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT, 40) \
    X(CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, 41) \
    X(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 75) \
    X(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 76) \
    X(CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED, 78) \
    X(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, 81) \
    X(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR, 82) \
    X(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, 97) \
    X(CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR, 106)
typedef enum opara_CUdevice_attribute_enum { OPARA_CU_DEVICE_ATTRIBUTE_LIST(OPARA__CUDA_ENUM_ITEM) } opara_CUdevice_attribute;

#define OPARA_CU_FUNCTION_ATTRIBUTE_LIST(X) \
    X(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 0) \
    X(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, 1) \
    X(CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES, 2) \
    X(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, 3) \
    X(CU_FUNC_ATTRIBUTE_NUM_REGS, 4) \
    X(CU_FUNC_ATTRIBUTE_PTX_VERSION, 5) \
    X(CU_FUNC_ATTRIBUTE_BINARY_VERSION, 6) \
    X(CU_FUNC_ATTRIBUTE_CACHE_MODE_CA, 7) \
    X(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 8) \
    X(CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 9)
typedef enum opara_CUfunction_attribute_enum { OPARA_CU_FUNCTION_ATTRIBUTE_LIST(OPARA__CUDA_ENUM_ITEM) } opara_CUfunction_attribute;

#define OPARA_CU_JIT_OPTION_LIST(X) \
    X(CU_JIT_MAX_REGISTERS, 0) \
    X(CU_JIT_THREADS_PER_BLOCK, 1) \
    X(CU_JIT_WALL_TIME, 2) \
    X(CU_JIT_INFO_LOG_BUFFER, 3) \
    X(CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, 4) \
    X(CU_JIT_ERROR_LOG_BUFFER, 5) \
    X(CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, 6) \
    X(CU_JIT_OPTIMIZATION_LEVEL, 7) \
    X(CU_JIT_TARGET_FROM_CUCONTEXT, 8) \
    X(CU_JIT_TARGET, 9) \
    X(CU_JIT_FALLBACK_STRATEGY, 10) \
    X(CU_JIT_GENERATE_DEBUG_INFO, 11) \
    X(CU_JIT_LOG_VERBOSE, 12) \
    X(CU_JIT_GENERATE_LINE_INFO, 13) \
    X(CU_JIT_CACHE_MODE, 14)
typedef enum opara_CUjit_option_enum { OPARA_CU_JIT_OPTION_LIST(OPARA__CUDA_ENUM_ITEM) } opara_CUjit_option;

#define OPARA_CU_STREAM_CAPTURE_MODE_LIST(X) \
    X(CU_STREAM_CAPTURE_MODE_GLOBAL, 0) \
    X(CU_STREAM_CAPTURE_MODE_THREAD_LOCAL, 1) \
    X(CU_STREAM_CAPTURE_MODE_RELAXED, 2)
typedef enum opara_CUstreamCaptureMode_enum { OPARA_CU_STREAM_CAPTURE_MODE_LIST(OPARA__CUDA_ENUM_ITEM) } opara_CUstreamCaptureMode;

#define OPARA_CU_STREAM_CAPTURE_STATUS_LIST(X) \
    X(CU_STREAM_CAPTURE_STATUS_NONE, 0) \
    X(CU_STREAM_CAPTURE_STATUS_ACTIVE, 1) \
    X(CU_STREAM_CAPTURE_STATUS_INVALIDATED, 2)
typedef enum opara_CUstreamCaptureStatus_enum { OPARA_CU_STREAM_CAPTURE_STATUS_LIST(OPARA__CUDA_ENUM_ITEM) } opara_CUstreamCaptureStatus;

#define OPARA_CU_GRAPH_NODE_TYPE_LIST(X) \
    X(CU_GRAPH_NODE_TYPE_KERNEL, 0) \
    X(CU_GRAPH_NODE_TYPE_MEMCPY, 1) \
    X(CU_GRAPH_NODE_TYPE_MEMSET, 2) \
    X(CU_GRAPH_NODE_TYPE_HOST, 3) \
    X(CU_GRAPH_NODE_TYPE_GRAPH, 4) \
    X(CU_GRAPH_NODE_TYPE_EMPTY, 5) \
    X(CU_GRAPH_NODE_TYPE_WAIT_EVENT, 6) \
    X(CU_GRAPH_NODE_TYPE_EVENT_RECORD, 7) \
    X(CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL, 8) \
    X(CU_GRAPH_NODE_TYPE_EXT_SEMAS_WAIT, 9) \
    X(CU_GRAPH_NODE_TYPE_MEM_ALLOC, 10) \
    X(CU_GRAPH_NODE_TYPE_MEM_FREE, 11) \
    X(CU_GRAPH_NODE_TYPE_BATCH_MEM_OP, 12) \
    X(CU_GRAPH_NODE_TYPE_CONDITIONAL, 13)
typedef enum opara_CUgraphNodeType_enum { OPARA_CU_GRAPH_NODE_TYPE_LIST(OPARA__CUDA_ENUM_ITEM) } opara_CUgraphNodeType;

#define OPARA_CU_GRAPH_EXEC_UPDATE_RESULT_LIST(X) \
    X(CU_GRAPH_EXEC_UPDATE_SUCCESS, 0) \
    X(CU_GRAPH_EXEC_UPDATE_ERROR, 1) \
    X(CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED, 2) \
    X(CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED, 3) \
    X(CU_GRAPH_EXEC_UPDATE_ERROR_FUNCTION_CHANGED, 4) \
    X(CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED, 5) \
    X(CU_GRAPH_EXEC_UPDATE_ERROR_NOT_SUPPORTED, 6) \
    X(CU_GRAPH_EXEC_UPDATE_ERROR_UNSUPPORTED_FUNCTION_CHANGE, 7) \
    X(CU_GRAPH_EXEC_UPDATE_ERROR_ATTRIBUTES_CHANGED, 8)
typedef enum opara_CUgraphExecUpdateResult_enum { OPARA_CU_GRAPH_EXEC_UPDATE_RESULT_LIST(OPARA__CUDA_ENUM_ITEM) } opara_CUgraphExecUpdateResult;

#define OPARA_CU_GRAPH_DEPENDENCY_TYPE_LIST(X) \
    X(CU_GRAPH_DEPENDENCY_TYPE_DEFAULT, 0) \
    X(CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC, 1)
typedef enum opara_CUgraphDependencyType_enum { OPARA_CU_GRAPH_DEPENDENCY_TYPE_LIST(OPARA__CUDA_ENUM_ITEM) } opara_CUgraphDependencyType;

#define OPARA_CU_GRAPH_INSTANTIATE_FLAGS_LIST(X) \
    X(CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH, 1) \
    X(CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD, 2) \
    X(CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH, 4) \
    X(CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY, 8)
typedef enum opara_CUgraphInstantiate_flags_enum { OPARA_CU_GRAPH_INSTANTIATE_FLAGS_LIST(OPARA__CUDA_ENUM_ITEM) } opara_CUgraphInstantiate_flags;

#define OPARA_CU_PROC_ADDRESS_FLAGS_LIST(X) \
    X(CU_GET_PROC_ADDRESS_DEFAULT, 0) \
    X(CU_GET_PROC_ADDRESS_LEGACY_STREAM, 1) \
    X(CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, 2)
typedef enum opara_CUdriverProcAddress_flags_enum { OPARA_CU_PROC_ADDRESS_FLAGS_LIST(OPARA__CUDA_ENUM_ITEM) } opara_CUdriverProcAddress_flags;

#define OPARA_CU_PROC_ADDRESS_RESULT_LIST(X) \
    X(CU_GET_PROC_ADDRESS_SUCCESS, 0) \
    X(CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND, 1) \
    X(CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT, 2)
typedef enum opara_CUdriverProcAddressQueryResult_enum { OPARA_CU_PROC_ADDRESS_RESULT_LIST(OPARA__CUDA_ENUM_ITEM) } opara_CUdriverProcAddressQueryResult;

#define OPARA_CU_EVENT_FLAGS_LIST(X) \
    X(CU_EVENT_DEFAULT, 0) \
    X(CU_EVENT_BLOCKING_SYNC, 1) \
    X(CU_EVENT_DISABLE_TIMING, 2) \
    X(CU_EVENT_INTERPROCESS, 4)
typedef enum opara_CUevent_flags_enum { OPARA_CU_EVENT_FLAGS_LIST(OPARA__CUDA_ENUM_ITEM) } opara_CUevent_flags;

#define OPARA_CU_EVENT_WAIT_FLAGS_LIST(X) \
    X(CU_EVENT_WAIT_DEFAULT, 0) \
    X(CU_EVENT_WAIT_EXTERNAL, 1)
typedef enum opara_CUevent_wait_flags_enum { OPARA_CU_EVENT_WAIT_FLAGS_LIST(OPARA__CUDA_ENUM_ITEM) } opara_CUevent_wait_flags;

#define OPARA_CU_STREAM_FLAGS_LIST(X) \
    X(CU_STREAM_DEFAULT, 0) \
    X(CU_STREAM_NON_BLOCKING, 1)
typedef enum opara_CUstream_flags_enum { OPARA_CU_STREAM_FLAGS_LIST(OPARA__CUDA_ENUM_ITEM) } opara_CUstream_flags;

/* cuda.h CUgraphEdgeData (8 bytes): from_port 0 = full completion of the upstream node. */
typedef struct opara_CUgraphEdgeData_st {
    unsigned char from_port;
    unsigned char to_port;
    unsigned char type; /* opara_CUgraphDependencyType */
    unsigned char reserved[5];
} opara_CUgraphEdgeData;

typedef struct opara_CUgraphExecUpdateResultInfo_st {
    opara_CUgraphExecUpdateResult result;
    opara_CUgraphNode errorNode;
    opara_CUgraphNode errorFromNode;
} opara_CUgraphExecUpdateResultInfo;

/* CUDA_KERNEL_NODE_PARAMS, which cuda.h 12.0+ defines as the _v2 layout. */
typedef struct opara_CUDA_KERNEL_NODE_PARAMS_v2_st {
    opara_CUfunction func;
    unsigned int gridDimX, gridDimY, gridDimZ;
    unsigned int blockDimX, blockDimY, blockDimZ;
    unsigned int sharedMemBytes;
    void** kernelParams;
    void** extra;
    opara_CUkernel kern; /* used only when func is NULL */
    opara_CUcontext ctx; /* NULL = current context; ignored when func is set */
} opara_CUDA_KERNEL_NODE_PARAMS_v2;
typedef opara_CUDA_KERNEL_NODE_PARAMS_v2 opara_CUDA_KERNEL_NODE_PARAMS;

/* ============================================================================================== */
/* NVRTC types                                                                                    */
/* ============================================================================================== */

#define OPARA_NVRTC_RESULT_LIST(X) \
    X(NVRTC_SUCCESS, 0) \
    X(NVRTC_ERROR_OUT_OF_MEMORY, 1) \
    X(NVRTC_ERROR_PROGRAM_CREATION_FAILURE, 2) \
    X(NVRTC_ERROR_INVALID_INPUT, 3) \
    X(NVRTC_ERROR_INVALID_PROGRAM, 4) \
    X(NVRTC_ERROR_INVALID_OPTION, 5) \
    X(NVRTC_ERROR_COMPILATION, 6) \
    X(NVRTC_ERROR_BUILTIN_OPERATION_FAILURE, 7) \
    X(NVRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION, 8) \
    X(NVRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION, 9) \
    X(NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID, 10) \
    X(NVRTC_ERROR_INTERNAL_ERROR, 11) \
    X(NVRTC_ERROR_TIME_FILE_WRITE_FAILED, 12) \
    X(NVRTC_ERROR_NO_PCH_CREATE_ATTEMPTED, 13) \
    X(NVRTC_ERROR_PCH_CREATE_HEAP_EXHAUSTED, 14) \
    X(NVRTC_ERROR_PCH_CREATE, 15) \
    X(NVRTC_ERROR_CANCELLED, 16) \
    X(NVRTC_ERROR_TIME_TRACE_FILE_WRITE_FAILED, 17)
typedef enum opara_nvrtcResult_enum { OPARA_NVRTC_RESULT_LIST(OPARA__CUDA_ENUM_ITEM) } opara_nvrtcResult;
typedef struct opara__nvrtcProgram* opara_nvrtcProgram;

/* ============================================================================================== */
/* cuBLAS types (v2 API)                                                                          */
/* ============================================================================================== */

typedef struct opara_cublasContext* opara_cublasHandle_t;

#define OPARA_CUBLAS_STATUS_LIST(X) \
    X(CUBLAS_STATUS_SUCCESS, 0) \
    X(CUBLAS_STATUS_NOT_INITIALIZED, 1) \
    X(CUBLAS_STATUS_ALLOC_FAILED, 3) \
    X(CUBLAS_STATUS_INVALID_VALUE, 7) \
    X(CUBLAS_STATUS_ARCH_MISMATCH, 8) \
    X(CUBLAS_STATUS_MAPPING_ERROR, 11) \
    X(CUBLAS_STATUS_EXECUTION_FAILED, 13) \
    X(CUBLAS_STATUS_INTERNAL_ERROR, 14) \
    X(CUBLAS_STATUS_NOT_SUPPORTED, 15) \
    X(CUBLAS_STATUS_LICENSE_ERROR, 16)
typedef enum opara_cublasStatus_enum { OPARA_CUBLAS_STATUS_LIST(OPARA__CUDA_ENUM_ITEM) } opara_cublasStatus_t;

#define OPARA_CUBLAS_OPERATION_LIST(X) \
    X(CUBLAS_OP_N, 0) \
    X(CUBLAS_OP_T, 1) \
    X(CUBLAS_OP_C, 2)
typedef enum opara_cublasOperation_enum { OPARA_CUBLAS_OPERATION_LIST(OPARA__CUDA_ENUM_ITEM) } opara_cublasOperation_t;

#define OPARA_CUBLAS_MATH_LIST(X) \
    X(CUBLAS_DEFAULT_MATH, 0) \
    X(CUBLAS_TENSOR_OP_MATH, 1) \
    X(CUBLAS_PEDANTIC_MATH, 2) \
    X(CUBLAS_TF32_TENSOR_OP_MATH, 3) \
    X(CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION, 16)
typedef enum opara_cublasMath_enum { OPARA_CUBLAS_MATH_LIST(OPARA__CUDA_ENUM_ITEM) } opara_cublasMath_t;

#define OPARA_CUBLAS_COMPUTE_TYPE_LIST(X) \
    X(CUBLAS_COMPUTE_16F, 64) \
    X(CUBLAS_COMPUTE_16F_PEDANTIC, 65) \
    X(CUBLAS_COMPUTE_32F, 68) \
    X(CUBLAS_COMPUTE_32F_PEDANTIC, 69) \
    X(CUBLAS_COMPUTE_64F, 70) \
    X(CUBLAS_COMPUTE_64F_PEDANTIC, 71) \
    X(CUBLAS_COMPUTE_32I, 72) \
    X(CUBLAS_COMPUTE_32I_PEDANTIC, 73) \
    X(CUBLAS_COMPUTE_32F_FAST_16F, 74) \
    X(CUBLAS_COMPUTE_32F_FAST_16BF, 75) \
    X(CUBLAS_COMPUTE_32F_FAST_TF32, 77)
typedef enum opara_cublasComputeType_enum { OPARA_CUBLAS_COMPUTE_TYPE_LIST(OPARA__CUDA_ENUM_ITEM) } opara_cublasComputeType_t;

#define OPARA_CUBLAS_GEMM_ALGO_LIST(X) \
    X(CUBLAS_GEMM_DEFAULT, -1) \
    X(CUBLAS_GEMM_DEFAULT_TENSOR_OP, 99)
typedef enum opara_cublasGemmAlgo_enum { OPARA_CUBLAS_GEMM_ALGO_LIST(OPARA__CUDA_ENUM_ITEM) } opara_cublasGemmAlgo_t;

/* library_types.h cudaDataType (cublasGemmEx operand types). */
#define OPARA_CUDA_DATA_TYPE_LIST(X) \
    X(CUDA_R_32F, 0) \
    X(CUDA_R_64F, 1) \
    X(CUDA_R_16F, 2) \
    X(CUDA_R_8I, 3) \
    X(CUDA_C_32F, 4) \
    X(CUDA_C_64F, 5) \
    X(CUDA_C_16F, 6) \
    X(CUDA_C_8I, 7) \
    X(CUDA_R_8U, 8) \
    X(CUDA_C_8U, 9) \
    X(CUDA_R_32I, 10) \
    X(CUDA_C_32I, 11) \
    X(CUDA_R_16BF, 14) \
    X(CUDA_C_16BF, 15) \
    X(CUDA_R_8F_E4M3, 28) \
    X(CUDA_R_8F_E5M2, 29)
typedef enum opara_cudaDataType_t { OPARA_CUDA_DATA_TYPE_LIST(OPARA__CUDA_ENUM_ITEM) } opara_cudaDataType;

/* library_types.h libraryPropertyType (cublasGetProperty). */
#define OPARA_LIBRARY_PROPERTY_TYPE_LIST(X) \
    X(MAJOR_VERSION, 0) \
    X(MINOR_VERSION, 1) \
    X(PATCH_LEVEL, 2)
typedef enum opara_libraryPropertyType_t { OPARA_LIBRARY_PROPERTY_TYPE_LIST(OPARA__CUDA_ENUM_ITEM) } opara_libraryPropertyType;

/* ============================================================================================== */
/* cuDNN types (the legacy imperative API, same prototypes in cuDNN 8 and 9)                      */
/* ============================================================================================== */

typedef struct opara_cudnnContext* opara_cudnnHandle_t;
typedef struct opara_cudnnTensorStruct* opara_cudnnTensorDescriptor_t;
typedef struct opara_cudnnFilterStruct* opara_cudnnFilterDescriptor_t;
typedef struct opara_cudnnConvolutionStruct* opara_cudnnConvolutionDescriptor_t;
typedef struct opara_cudnnActivationStruct* opara_cudnnActivationDescriptor_t;

/* cuDNN 9 status codes (category * 1000 + detail). cuDNN 8 used 0..14 instead;
   opara_cudnn_status_name() names both, their ranges do not overlap. */
#define OPARA_CUDNN_STATUS_LIST(X) \
    X(CUDNN_STATUS_SUCCESS, 0) \
    X(CUDNN_STATUS_NOT_INITIALIZED, 1001) \
    X(CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH, 1002) \
    X(CUDNN_STATUS_SERIALIZATION_VERSION_MISMATCH, 1003) \
    X(CUDNN_STATUS_DEPRECATED, 1004) \
    X(CUDNN_STATUS_LICENSE_ERROR, 1005) \
    X(CUDNN_STATUS_RUNTIME_IN_PROGRESS, 1006) \
    X(CUDNN_STATUS_RUNTIME_FP_OVERFLOW, 1007) \
    X(CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED, 1008) \
    X(CUDNN_STATUS_BAD_PARAM, 2000) \
    X(CUDNN_STATUS_INVALID_VALUE, 2001) \
    X(CUDNN_STATUS_BAD_PARAM_NULL_POINTER, 2002) \
    X(CUDNN_STATUS_BAD_PARAM_MISALIGNED_POINTER, 2003) \
    X(CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED, 2004) \
    X(CUDNN_STATUS_BAD_PARAM_OUT_OF_BOUND, 2005) \
    X(CUDNN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT, 2006) \
    X(CUDNN_STATUS_BAD_PARAM_STREAM_MISMATCH, 2007) \
    X(CUDNN_STATUS_BAD_PARAM_SHAPE_MISMATCH, 2008) \
    X(CUDNN_STATUS_BAD_PARAM_DUPLICATED_ENTRIES, 2009) \
    X(CUDNN_STATUS_BAD_PARAM_ATTRIBUTE_TYPE, 2010) \
    X(CUDNN_STATUS_BAD_PARAM_CUDA_GRAPH_MISMATCH, 2011) \
    X(CUDNN_STATUS_BAD_PARAM_DESCRIPTOR_TYPE, 2012) \
    X(CUDNN_STATUS_NOT_SUPPORTED, 3000) \
    X(CUDNN_STATUS_NOT_SUPPORTED_GRAPH_PATTERN, 3001) \
    X(CUDNN_STATUS_NOT_SUPPORTED_SHAPE, 3002) \
    X(CUDNN_STATUS_NOT_SUPPORTED_DATA_TYPE, 3003) \
    X(CUDNN_STATUS_NOT_SUPPORTED_LAYOUT, 3004) \
    X(CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDA_DRIVER, 3005) \
    X(CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDART, 3006) \
    X(CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH, 3007) \
    X(CUDNN_STATUS_NOT_SUPPORTED_RUNTIME_PREREQUISITE_MISSING, 3008) \
    X(CUDNN_STATUS_NOT_SUPPORTED_SUBLIBRARY_UNAVAILABLE, 3009) \
    X(CUDNN_STATUS_NOT_SUPPORTED_SHARED_MEMORY_INSUFFICIENT, 3010) \
    X(CUDNN_STATUS_NOT_SUPPORTED_PADDING, 3011) \
    X(CUDNN_STATUS_NOT_SUPPORTED_BAD_LAUNCH_PARAM, 3012) \
    X(CUDNN_STATUS_NOT_SUPPORTED_CUDA_GRAPH_NATIVE_API, 3013) \
    X(CUDNN_STATUS_INTERNAL_ERROR, 4000) \
    X(CUDNN_STATUS_INTERNAL_ERROR_COMPILATION_FAILED, 4001) \
    X(CUDNN_STATUS_INTERNAL_ERROR_UNEXPECTED_VALUE, 4002) \
    X(CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED, 4003) \
    X(CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED, 4004) \
    X(CUDNN_STATUS_INTERNAL_ERROR_BAD_LAUNCH_PARAM, 4005) \
    X(CUDNN_STATUS_INTERNAL_ERROR_TEXTURE_CREATION_FAILED, 4006) \
    X(CUDNN_STATUS_EXECUTION_FAILED, 5000) \
    X(CUDNN_STATUS_EXECUTION_FAILED_CUDA_DRIVER, 5001) \
    X(CUDNN_STATUS_EXECUTION_FAILED_CUBLAS, 5002) \
    X(CUDNN_STATUS_EXECUTION_FAILED_CUDART, 5003) \
    X(CUDNN_STATUS_EXECUTION_FAILED_CURAND, 5004)
typedef enum opara_cudnnStatus_enum { OPARA_CUDNN_STATUS_LIST(OPARA__CUDA_ENUM_ITEM) } opara_cudnnStatus_t;

#define OPARA_CUDNN_DATA_TYPE_LIST(X) \
    X(CUDNN_DATA_FLOAT, 0) \
    X(CUDNN_DATA_DOUBLE, 1) \
    X(CUDNN_DATA_HALF, 2) \
    X(CUDNN_DATA_INT8, 3) \
    X(CUDNN_DATA_INT32, 4) \
    X(CUDNN_DATA_UINT8, 6) \
    X(CUDNN_DATA_BFLOAT16, 9) \
    X(CUDNN_DATA_INT64, 10)
typedef enum opara_cudnnDataType_enum { OPARA_CUDNN_DATA_TYPE_LIST(OPARA__CUDA_ENUM_ITEM) } opara_cudnnDataType_t;

#define OPARA_CUDNN_MATH_TYPE_LIST(X) \
    X(CUDNN_DEFAULT_MATH, 0) \
    X(CUDNN_TENSOR_OP_MATH, 1) \
    X(CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION, 2) \
    X(CUDNN_FMA_MATH, 3)
typedef enum opara_cudnnMathType_enum { OPARA_CUDNN_MATH_TYPE_LIST(OPARA__CUDA_ENUM_ITEM) } opara_cudnnMathType_t;

#define OPARA_CUDNN_NAN_PROPAGATION_LIST(X) \
    X(CUDNN_NOT_PROPAGATE_NAN, 0) \
    X(CUDNN_PROPAGATE_NAN, 1)
typedef enum opara_cudnnNanPropagation_enum { OPARA_CUDNN_NAN_PROPAGATION_LIST(OPARA__CUDA_ENUM_ITEM) } opara_cudnnNanPropagation_t;

#define OPARA_CUDNN_TENSOR_FORMAT_LIST(X) \
    X(CUDNN_TENSOR_NCHW, 0) \
    X(CUDNN_TENSOR_NHWC, 1) \
    X(CUDNN_TENSOR_NCHW_VECT_C, 2)
typedef enum opara_cudnnTensorFormat_enum { OPARA_CUDNN_TENSOR_FORMAT_LIST(OPARA__CUDA_ENUM_ITEM) } opara_cudnnTensorFormat_t;

#define OPARA_CUDNN_ACTIVATION_MODE_LIST(X) \
    X(CUDNN_ACTIVATION_SIGMOID, 0) \
    X(CUDNN_ACTIVATION_RELU, 1) \
    X(CUDNN_ACTIVATION_TANH, 2) \
    X(CUDNN_ACTIVATION_CLIPPED_RELU, 3) \
    X(CUDNN_ACTIVATION_ELU, 4) \
    X(CUDNN_ACTIVATION_IDENTITY, 5) \
    X(CUDNN_ACTIVATION_SWISH, 6)
typedef enum opara_cudnnActivationMode_enum { OPARA_CUDNN_ACTIVATION_MODE_LIST(OPARA__CUDA_ENUM_ITEM) } opara_cudnnActivationMode_t;

#define OPARA_CUDNN_CONVOLUTION_MODE_LIST(X) \
    X(CUDNN_CONVOLUTION, 0) \
    X(CUDNN_CROSS_CORRELATION, 1)
typedef enum opara_cudnnConvolutionMode_enum { OPARA_CUDNN_CONVOLUTION_MODE_LIST(OPARA__CUDA_ENUM_ITEM) } opara_cudnnConvolutionMode_t;

#define OPARA_CUDNN_CONVOLUTION_FWD_ALGO_LIST(X) \
    X(CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, 0) \
    X(CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, 1) \
    X(CUDNN_CONVOLUTION_FWD_ALGO_GEMM, 2) \
    X(CUDNN_CONVOLUTION_FWD_ALGO_DIRECT, 3) \
    X(CUDNN_CONVOLUTION_FWD_ALGO_FFT, 4) \
    X(CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING, 5) \
    X(CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD, 6) \
    X(CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED, 7) \
    X(CUDNN_CONVOLUTION_FWD_ALGO_COUNT, 8)
typedef enum opara_cudnnConvolutionFwdAlgo_enum { OPARA_CUDNN_CONVOLUTION_FWD_ALGO_LIST(OPARA__CUDA_ENUM_ITEM) } opara_cudnnConvolutionFwdAlgo_t;

#define OPARA_CUDNN_DETERMINISM_LIST(X) \
    X(CUDNN_NON_DETERMINISTIC, 0) \
    X(CUDNN_DETERMINISTIC, 1)
typedef enum opara_cudnnDeterminism_enum { OPARA_CUDNN_DETERMINISM_LIST(OPARA__CUDA_ENUM_ITEM) } opara_cudnnDeterminism_t;

typedef struct opara_cudnnConvolutionFwdAlgoPerfStruct {
    opara_cudnnConvolutionFwdAlgo_t algo;
    opara_cudnnStatus_t status;
    float time;    /* milliseconds */
    size_t memory; /* workspace bytes */
    opara_cudnnDeterminism_t determinism;
    opara_cudnnMathType_t mathType;
    int reserved[3];
} opara_cudnnConvolutionFwdAlgoPerf_t;

/* ============================================================================================== */
/* Function lists                                                                                 */
/* ============================================================================================== */

#define OPARA_CUDA_REQUIRED 1
#define OPARA_CUDA_OPTIONAL 0

/* X(return type, exported symbol = table member, (parameters), required, cuGetProcAddress name,
     CUDA version of the ABI to ask for, older symbol with the same prototype (none: no fallback),
     its version). The name and version pair is NVIDIA's cudaTypedefs.h PFN_<name>_v<version> of the
     same prototype (tests/cuda_headers_check.c verifies it). */
#define OPARA_CUDA_DRIVER_FUNCS(X) \
    X(opara_CUresult, cuGetErrorName, (opara_CUresult error, const char** pStr), OPARA_CUDA_REQUIRED, cuGetErrorName, 6000, none, 0) \
    X(opara_CUresult, cuGetErrorString, (opara_CUresult error, const char** pStr), OPARA_CUDA_REQUIRED, cuGetErrorString, 6000, none, 0) \
    X(opara_CUresult, cuInit, (unsigned int Flags), OPARA_CUDA_REQUIRED, cuInit, 2000, none, 0) \
    X(opara_CUresult, cuDriverGetVersion, (int* driverVersion), OPARA_CUDA_REQUIRED, cuDriverGetVersion, 2020, none, 0) \
    X(opara_CUresult, cuDeviceGet, (opara_CUdevice* device, int ordinal), OPARA_CUDA_REQUIRED, cuDeviceGet, 2000, none, 0) \
    X(opara_CUresult, cuDeviceGetCount, (int* count), OPARA_CUDA_REQUIRED, cuDeviceGetCount, 2000, none, 0) \
    X(opara_CUresult, cuDeviceGetName, (char* name, int len, opara_CUdevice dev), OPARA_CUDA_REQUIRED, cuDeviceGetName, 2000, none, 0) \
    X(opara_CUresult, cuDeviceGetAttribute, (int* pi, opara_CUdevice_attribute attrib, opara_CUdevice dev), OPARA_CUDA_REQUIRED, cuDeviceGetAttribute, 2000, none, 0) \
    X(opara_CUresult, cuDeviceTotalMem_v2, (size_t* bytes, opara_CUdevice dev), OPARA_CUDA_REQUIRED, cuDeviceTotalMem, 3020, none, 0) \
    X(opara_CUresult, cuDevicePrimaryCtxRetain, (opara_CUcontext* pctx, opara_CUdevice dev), OPARA_CUDA_REQUIRED, cuDevicePrimaryCtxRetain, 7000, none, 0) \
    X(opara_CUresult, cuDevicePrimaryCtxRelease_v2, (opara_CUdevice dev), OPARA_CUDA_REQUIRED, cuDevicePrimaryCtxRelease, 11000, none, 0) \
    X(opara_CUresult, cuCtxSetCurrent, (opara_CUcontext ctx), OPARA_CUDA_REQUIRED, cuCtxSetCurrent, 4000, none, 0) \
    X(opara_CUresult, cuCtxGetCurrent, (opara_CUcontext* pctx), OPARA_CUDA_REQUIRED, cuCtxGetCurrent, 4000, none, 0) \
    X(opara_CUresult, cuCtxPushCurrent_v2, (opara_CUcontext ctx), OPARA_CUDA_REQUIRED, cuCtxPushCurrent, 4000, none, 0) \
    X(opara_CUresult, cuCtxPopCurrent_v2, (opara_CUcontext* pctx), OPARA_CUDA_REQUIRED, cuCtxPopCurrent, 4000, none, 0) \
    X(opara_CUresult, cuCtxSynchronize, (void), OPARA_CUDA_REQUIRED, cuCtxSynchronize, 2000, none, 0) \
    X(opara_CUresult, cuMemAlloc_v2, (opara_CUdeviceptr* dptr, size_t bytesize), OPARA_CUDA_REQUIRED, cuMemAlloc, 3020, none, 0) \
    X(opara_CUresult, cuMemFree_v2, (opara_CUdeviceptr dptr), OPARA_CUDA_REQUIRED, cuMemFree, 3020, none, 0) \
    X(opara_CUresult, cuMemAllocHost_v2, (void** pp, size_t bytesize), OPARA_CUDA_REQUIRED, cuMemAllocHost, 3020, none, 0) \
    X(opara_CUresult, cuMemFreeHost, (void* p), OPARA_CUDA_REQUIRED, cuMemFreeHost, 2000, none, 0) \
    X(opara_CUresult, cuMemcpyHtoD_v2, (opara_CUdeviceptr dstDevice, const void* srcHost, size_t ByteCount), OPARA_CUDA_REQUIRED, cuMemcpyHtoD, 3020, none, 0) \
    X(opara_CUresult, cuMemcpyDtoH_v2, (void* dstHost, opara_CUdeviceptr srcDevice, size_t ByteCount), OPARA_CUDA_REQUIRED, cuMemcpyDtoH, 3020, none, 0) \
    X(opara_CUresult, cuMemcpyDtoD_v2, (opara_CUdeviceptr dstDevice, opara_CUdeviceptr srcDevice, size_t ByteCount), OPARA_CUDA_REQUIRED, cuMemcpyDtoD, 3020, none, 0) \
    X(opara_CUresult, cuMemcpyHtoDAsync_v2, (opara_CUdeviceptr dstDevice, const void* srcHost, size_t ByteCount, opara_CUstream hStream), OPARA_CUDA_REQUIRED, cuMemcpyHtoDAsync, 3020, none, 0) \
    X(opara_CUresult, cuMemcpyDtoHAsync_v2, (void* dstHost, opara_CUdeviceptr srcDevice, size_t ByteCount, opara_CUstream hStream), OPARA_CUDA_REQUIRED, cuMemcpyDtoHAsync, 3020, none, 0) \
    X(opara_CUresult, cuMemcpyDtoDAsync_v2, (opara_CUdeviceptr dstDevice, opara_CUdeviceptr srcDevice, size_t ByteCount, opara_CUstream hStream), OPARA_CUDA_REQUIRED, cuMemcpyDtoDAsync, 3020, none, 0) \
    X(opara_CUresult, cuMemsetD8_v2, (opara_CUdeviceptr dstDevice, unsigned char uc, size_t N), OPARA_CUDA_REQUIRED, cuMemsetD8, 3020, none, 0) \
    X(opara_CUresult, cuMemsetD32Async, (opara_CUdeviceptr dstDevice, unsigned int ui, size_t N, opara_CUstream hStream), OPARA_CUDA_REQUIRED, cuMemsetD32Async, 3020, none, 0) \
    X(opara_CUresult, cuMemGetInfo_v2, (size_t* freeBytes, size_t* totalBytes), OPARA_CUDA_REQUIRED, cuMemGetInfo, 3020, none, 0) \
    X(opara_CUresult, cuModuleLoadData, (opara_CUmodule* module, const void* image), OPARA_CUDA_REQUIRED, cuModuleLoadData, 2000, none, 0) \
    X(opara_CUresult, cuModuleLoadDataEx, (opara_CUmodule* module, const void* image, unsigned int numOptions, opara_CUjit_option* options, void** optionValues), OPARA_CUDA_REQUIRED, cuModuleLoadDataEx, 2010, none, 0) \
    X(opara_CUresult, cuModuleUnload, (opara_CUmodule hmod), OPARA_CUDA_REQUIRED, cuModuleUnload, 2000, none, 0) \
    X(opara_CUresult, cuModuleGetFunction, (opara_CUfunction* hfunc, opara_CUmodule hmod, const char* name), OPARA_CUDA_REQUIRED, cuModuleGetFunction, 2000, none, 0) \
    X(opara_CUresult, cuFuncGetAttribute, (int* pi, opara_CUfunction_attribute attrib, opara_CUfunction hfunc), OPARA_CUDA_REQUIRED, cuFuncGetAttribute, 2020, none, 0) \
    X(opara_CUresult, cuLaunchKernel, (opara_CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ, unsigned int sharedMemBytes, opara_CUstream hStream, void** kernelParams, void** extra), OPARA_CUDA_REQUIRED, cuLaunchKernel, 4000, none, 0) \
    X(opara_CUresult, cuStreamCreate, (opara_CUstream* phStream, unsigned int Flags), OPARA_CUDA_REQUIRED, cuStreamCreate, 2000, none, 0) \
    X(opara_CUresult, cuStreamCreateWithPriority, (opara_CUstream* phStream, unsigned int flags, int priority), OPARA_CUDA_REQUIRED, cuStreamCreateWithPriority, 5050, none, 0) \
    X(opara_CUresult, cuStreamDestroy_v2, (opara_CUstream hStream), OPARA_CUDA_REQUIRED, cuStreamDestroy, 4000, none, 0) \
    X(opara_CUresult, cuStreamSynchronize, (opara_CUstream hStream), OPARA_CUDA_REQUIRED, cuStreamSynchronize, 2000, none, 0) \
    X(opara_CUresult, cuStreamQuery, (opara_CUstream hStream), OPARA_CUDA_REQUIRED, cuStreamQuery, 2000, none, 0) \
    X(opara_CUresult, cuStreamWaitEvent, (opara_CUstream hStream, opara_CUevent hEvent, unsigned int Flags), OPARA_CUDA_REQUIRED, cuStreamWaitEvent, 3020, none, 0) \
    X(opara_CUresult, cuEventCreate, (opara_CUevent* phEvent, unsigned int Flags), OPARA_CUDA_REQUIRED, cuEventCreate, 2000, none, 0) \
    X(opara_CUresult, cuEventDestroy_v2, (opara_CUevent hEvent), OPARA_CUDA_REQUIRED, cuEventDestroy, 4000, none, 0) \
    X(opara_CUresult, cuEventRecord, (opara_CUevent hEvent, opara_CUstream hStream), OPARA_CUDA_REQUIRED, cuEventRecord, 2000, none, 0) \
    X(opara_CUresult, cuEventSynchronize, (opara_CUevent hEvent), OPARA_CUDA_REQUIRED, cuEventSynchronize, 2000, none, 0) \
    X(opara_CUresult, cuEventQuery, (opara_CUevent hEvent), OPARA_CUDA_REQUIRED, cuEventQuery, 2000, none, 0) \
    X(opara_CUresult, cuEventElapsedTime_v2, (float* pMilliseconds, opara_CUevent hStart, opara_CUevent hEnd), OPARA_CUDA_REQUIRED, cuEventElapsedTime, 12080, cuEventElapsedTime, 2000) \
    X(opara_CUresult, cuStreamBeginCapture_v2, (opara_CUstream hStream, opara_CUstreamCaptureMode mode), OPARA_CUDA_REQUIRED, cuStreamBeginCapture, 10010, none, 0) \
    X(opara_CUresult, cuStreamEndCapture, (opara_CUstream hStream, opara_CUgraph* phGraph), OPARA_CUDA_REQUIRED, cuStreamEndCapture, 10000, none, 0) \
    X(opara_CUresult, cuStreamIsCapturing, (opara_CUstream hStream, opara_CUstreamCaptureStatus* captureStatus), OPARA_CUDA_REQUIRED, cuStreamIsCapturing, 10000, none, 0) \
    X(opara_CUresult, cuStreamGetCaptureInfo_v3, (opara_CUstream hStream, opara_CUstreamCaptureStatus* captureStatus_out, opara_cuuint64_t* id_out, opara_CUgraph* graph_out, const opara_CUgraphNode** dependencies_out, const opara_CUgraphEdgeData** edgeData_out, size_t* numDependencies_out), OPARA_CUDA_OPTIONAL, cuStreamGetCaptureInfo, 12030, none, 0) \
    X(opara_CUresult, cuGraphInstantiateWithFlags, (opara_CUgraphExec* phGraphExec, opara_CUgraph hGraph, unsigned long long flags), OPARA_CUDA_REQUIRED, cuGraphInstantiateWithFlags, 11040, none, 0) \
    X(opara_CUresult, cuGraphLaunch, (opara_CUgraphExec hGraphExec, opara_CUstream hStream), OPARA_CUDA_REQUIRED, cuGraphLaunch, 10000, none, 0) \
    X(opara_CUresult, cuGraphExecUpdate_v2, (opara_CUgraphExec hGraphExec, opara_CUgraph hGraph, opara_CUgraphExecUpdateResultInfo* resultInfo), OPARA_CUDA_REQUIRED, cuGraphExecUpdate, 12000, none, 0) \
    X(opara_CUresult, cuGraphExecDestroy, (opara_CUgraphExec hGraphExec), OPARA_CUDA_REQUIRED, cuGraphExecDestroy, 10000, none, 0) \
    X(opara_CUresult, cuGraphDestroy, (opara_CUgraph hGraph), OPARA_CUDA_REQUIRED, cuGraphDestroy, 10000, none, 0) \
    X(opara_CUresult, cuGraphGetNodes, (opara_CUgraph hGraph, opara_CUgraphNode* nodes, size_t* numNodes), OPARA_CUDA_REQUIRED, cuGraphGetNodes, 10000, none, 0) \
    X(opara_CUresult, cuGraphGetEdges_v2, (opara_CUgraph hGraph, opara_CUgraphNode* from, opara_CUgraphNode* to, opara_CUgraphEdgeData* edgeData, size_t* numEdges), OPARA_CUDA_OPTIONAL, cuGraphGetEdges, 12030, none, 0) \
    X(opara_CUresult, cuGraphNodeGetType, (opara_CUgraphNode hNode, opara_CUgraphNodeType* type), OPARA_CUDA_REQUIRED, cuGraphNodeGetType, 10000, none, 0) \
    X(opara_CUresult, cuGraphKernelNodeGetParams_v2, (opara_CUgraphNode hNode, opara_CUDA_KERNEL_NODE_PARAMS* nodeParams), OPARA_CUDA_REQUIRED, cuGraphKernelNodeGetParams, 12000, none, 0) \
    X(opara_CUresult, cuGetProcAddress_v2, (const char* symbol, void** pfn, int cudaVersion, opara_cuuint64_t flags, opara_CUdriverProcAddressQueryResult* symbolStatus), OPARA_CUDA_OPTIONAL, cuGetProcAddress, 12000, none, 0)

/* X(return type, exported symbol = table member, (parameters), required). nvrtcGetCUBIN/Size came
   with NVRTC 11.1 and are optional: without them the backend uses NVRTC's PTX. */
#define OPARA_CUDA_NVRTC_FUNCS(X) \
    X(const char*, nvrtcGetErrorString, (opara_nvrtcResult result), OPARA_CUDA_REQUIRED) \
    X(opara_nvrtcResult, nvrtcVersion, (int* major, int* minor), OPARA_CUDA_REQUIRED) \
    X(opara_nvrtcResult, nvrtcGetNumSupportedArchs, (int* numArchs), OPARA_CUDA_REQUIRED) \
    X(opara_nvrtcResult, nvrtcGetSupportedArchs, (int* supportedArchs), OPARA_CUDA_REQUIRED) \
    X(opara_nvrtcResult, nvrtcCreateProgram, (opara_nvrtcProgram* prog, const char* src, const char* name, int numHeaders, const char* const* headers, const char* const* includeNames), OPARA_CUDA_REQUIRED) \
    X(opara_nvrtcResult, nvrtcDestroyProgram, (opara_nvrtcProgram* prog), OPARA_CUDA_REQUIRED) \
    X(opara_nvrtcResult, nvrtcCompileProgram, (opara_nvrtcProgram prog, int numOptions, const char* const* options), OPARA_CUDA_REQUIRED) \
    X(opara_nvrtcResult, nvrtcGetPTXSize, (opara_nvrtcProgram prog, size_t* ptxSizeRet), OPARA_CUDA_REQUIRED) \
    X(opara_nvrtcResult, nvrtcGetPTX, (opara_nvrtcProgram prog, char* ptx), OPARA_CUDA_REQUIRED) \
    X(opara_nvrtcResult, nvrtcGetCUBINSize, (opara_nvrtcProgram prog, size_t* cubinSizeRet), OPARA_CUDA_OPTIONAL) \
    X(opara_nvrtcResult, nvrtcGetCUBIN, (opara_nvrtcProgram prog, char* cubin), OPARA_CUDA_OPTIONAL) \
    X(opara_nvrtcResult, nvrtcGetProgramLogSize, (opara_nvrtcProgram prog, size_t* logSizeRet), OPARA_CUDA_REQUIRED) \
    X(opara_nvrtcResult, nvrtcGetProgramLog, (opara_nvrtcProgram prog, char* log), OPARA_CUDA_REQUIRED)

#define OPARA_CUDA_CUBLAS_FUNCS(X) \
    X(opara_cublasStatus_t, cublasCreate_v2, (opara_cublasHandle_t* handle), OPARA_CUDA_REQUIRED) \
    X(opara_cublasStatus_t, cublasDestroy_v2, (opara_cublasHandle_t handle), OPARA_CUDA_REQUIRED) \
    X(opara_cublasStatus_t, cublasGetVersion_v2, (opara_cublasHandle_t handle, int* version), OPARA_CUDA_REQUIRED) \
    X(opara_cublasStatus_t, cublasGetProperty, (opara_libraryPropertyType type, int* value), OPARA_CUDA_REQUIRED) \
    X(opara_cublasStatus_t, cublasSetStream_v2, (opara_cublasHandle_t handle, opara_CUstream streamId), OPARA_CUDA_REQUIRED) \
    X(opara_cublasStatus_t, cublasSetWorkspace_v2, (opara_cublasHandle_t handle, void* workspace, size_t workspaceSizeInBytes), OPARA_CUDA_REQUIRED) \
    X(opara_cublasStatus_t, cublasSetMathMode, (opara_cublasHandle_t handle, opara_cublasMath_t mode), OPARA_CUDA_REQUIRED) \
    X(opara_cublasStatus_t, cublasSgemm_v2, (opara_cublasHandle_t handle, opara_cublasOperation_t transa, opara_cublasOperation_t transb, int m, int n, int k, const float* alpha, const float* A, int lda, const float* B, int ldb, const float* beta, float* C, int ldc), OPARA_CUDA_REQUIRED) \
    X(opara_cublasStatus_t, cublasSgemmStridedBatched, (opara_cublasHandle_t handle, opara_cublasOperation_t transa, opara_cublasOperation_t transb, int m, int n, int k, const float* alpha, const float* A, int lda, long long int strideA, const float* B, int ldb, long long int strideB, const float* beta, float* C, int ldc, long long int strideC, int batchCount), OPARA_CUDA_REQUIRED) \
    X(opara_cublasStatus_t, cublasGemmEx, (opara_cublasHandle_t handle, opara_cublasOperation_t transa, opara_cublasOperation_t transb, int m, int n, int k, const void* alpha, const void* A, opara_cudaDataType Atype, int lda, const void* B, opara_cudaDataType Btype, int ldb, const void* beta, void* C, opara_cudaDataType Ctype, int ldc, opara_cublasComputeType_t computeType, opara_cublasGemmAlgo_t algo), OPARA_CUDA_REQUIRED) \
    X(const char*, cublasGetStatusName, (opara_cublasStatus_t status), OPARA_CUDA_OPTIONAL) \
    X(const char*, cublasGetStatusString, (opara_cublasStatus_t status), OPARA_CUDA_OPTIONAL)

#define OPARA_CUDA_CUDNN_FUNCS(X) \
    X(size_t, cudnnGetVersion, (void), OPARA_CUDA_REQUIRED) \
    X(const char*, cudnnGetErrorString, (opara_cudnnStatus_t status), OPARA_CUDA_REQUIRED) \
    X(opara_cudnnStatus_t, cudnnCreate, (opara_cudnnHandle_t* handle), OPARA_CUDA_REQUIRED) \
    X(opara_cudnnStatus_t, cudnnDestroy, (opara_cudnnHandle_t handle), OPARA_CUDA_REQUIRED) \
    X(opara_cudnnStatus_t, cudnnSetStream, (opara_cudnnHandle_t handle, opara_CUstream streamId), OPARA_CUDA_REQUIRED) \
    X(opara_cudnnStatus_t, cudnnCreateTensorDescriptor, (opara_cudnnTensorDescriptor_t* tensorDesc), OPARA_CUDA_REQUIRED) \
    X(opara_cudnnStatus_t, cudnnDestroyTensorDescriptor, (opara_cudnnTensorDescriptor_t tensorDesc), OPARA_CUDA_REQUIRED) \
    X(opara_cudnnStatus_t, cudnnSetTensor4dDescriptor, (opara_cudnnTensorDescriptor_t tensorDesc, opara_cudnnTensorFormat_t format, opara_cudnnDataType_t dataType, int n, int c, int h, int w), OPARA_CUDA_REQUIRED) \
    X(opara_cudnnStatus_t, cudnnSetTensorNdDescriptor, (opara_cudnnTensorDescriptor_t tensorDesc, opara_cudnnDataType_t dataType, int nbDims, const int* dimA, const int* strideA), OPARA_CUDA_REQUIRED) \
    X(opara_cudnnStatus_t, cudnnCreateFilterDescriptor, (opara_cudnnFilterDescriptor_t* filterDesc), OPARA_CUDA_REQUIRED) \
    X(opara_cudnnStatus_t, cudnnDestroyFilterDescriptor, (opara_cudnnFilterDescriptor_t filterDesc), OPARA_CUDA_REQUIRED) \
    X(opara_cudnnStatus_t, cudnnSetFilter4dDescriptor, (opara_cudnnFilterDescriptor_t filterDesc, opara_cudnnDataType_t dataType, opara_cudnnTensorFormat_t format, int k, int c, int h, int w), OPARA_CUDA_REQUIRED) \
    X(opara_cudnnStatus_t, cudnnCreateConvolutionDescriptor, (opara_cudnnConvolutionDescriptor_t* convDesc), OPARA_CUDA_REQUIRED) \
    X(opara_cudnnStatus_t, cudnnDestroyConvolutionDescriptor, (opara_cudnnConvolutionDescriptor_t convDesc), OPARA_CUDA_REQUIRED) \
    X(opara_cudnnStatus_t, cudnnSetConvolution2dDescriptor, (opara_cudnnConvolutionDescriptor_t convDesc, int pad_h, int pad_w, int u, int v, int dilation_h, int dilation_w, opara_cudnnConvolutionMode_t mode, opara_cudnnDataType_t computeType), OPARA_CUDA_REQUIRED) \
    X(opara_cudnnStatus_t, cudnnSetConvolutionGroupCount, (opara_cudnnConvolutionDescriptor_t convDesc, int groupCount), OPARA_CUDA_REQUIRED) \
    X(opara_cudnnStatus_t, cudnnSetConvolutionMathType, (opara_cudnnConvolutionDescriptor_t convDesc, opara_cudnnMathType_t mathType), OPARA_CUDA_REQUIRED) \
    X(opara_cudnnStatus_t, cudnnGetConvolution2dForwardOutputDim, (opara_cudnnConvolutionDescriptor_t convDesc, opara_cudnnTensorDescriptor_t inputTensorDesc, opara_cudnnFilterDescriptor_t filterDesc, int* n, int* c, int* h, int* w), OPARA_CUDA_REQUIRED) \
    X(opara_cudnnStatus_t, cudnnGetConvolutionForwardAlgorithm_v7, (opara_cudnnHandle_t handle, opara_cudnnTensorDescriptor_t srcDesc, opara_cudnnFilterDescriptor_t filterDesc, opara_cudnnConvolutionDescriptor_t convDesc, opara_cudnnTensorDescriptor_t destDesc, int requestedAlgoCount, int* returnedAlgoCount, opara_cudnnConvolutionFwdAlgoPerf_t* perfResults), OPARA_CUDA_REQUIRED) \
    X(opara_cudnnStatus_t, cudnnGetConvolutionForwardWorkspaceSize, (opara_cudnnHandle_t handle, opara_cudnnTensorDescriptor_t xDesc, opara_cudnnFilterDescriptor_t wDesc, opara_cudnnConvolutionDescriptor_t convDesc, opara_cudnnTensorDescriptor_t yDesc, opara_cudnnConvolutionFwdAlgo_t algo, size_t* sizeInBytes), OPARA_CUDA_REQUIRED) \
    X(opara_cudnnStatus_t, cudnnConvolutionForward, (opara_cudnnHandle_t handle, const void* alpha, opara_cudnnTensorDescriptor_t xDesc, const void* x, opara_cudnnFilterDescriptor_t wDesc, const void* w, opara_cudnnConvolutionDescriptor_t convDesc, opara_cudnnConvolutionFwdAlgo_t algo, void* workSpace, size_t workSpaceSizeInBytes, const void* beta, opara_cudnnTensorDescriptor_t yDesc, void* y), OPARA_CUDA_REQUIRED) \
    X(opara_cudnnStatus_t, cudnnConvolutionBiasActivationForward, (opara_cudnnHandle_t handle, const void* alpha1, opara_cudnnTensorDescriptor_t xDesc, const void* x, opara_cudnnFilterDescriptor_t wDesc, const void* w, opara_cudnnConvolutionDescriptor_t convDesc, opara_cudnnConvolutionFwdAlgo_t algo, void* workSpace, size_t workSpaceSizeInBytes, const void* alpha2, opara_cudnnTensorDescriptor_t zDesc, const void* z, opara_cudnnTensorDescriptor_t biasDesc, const void* bias, opara_cudnnActivationDescriptor_t activationDesc, opara_cudnnTensorDescriptor_t yDesc, void* y), OPARA_CUDA_REQUIRED) \
    X(opara_cudnnStatus_t, cudnnCreateActivationDescriptor, (opara_cudnnActivationDescriptor_t* activationDesc), OPARA_CUDA_REQUIRED) \
    X(opara_cudnnStatus_t, cudnnDestroyActivationDescriptor, (opara_cudnnActivationDescriptor_t activationDesc), OPARA_CUDA_REQUIRED) \
    X(opara_cudnnStatus_t, cudnnSetActivationDescriptor, (opara_cudnnActivationDescriptor_t activationDesc, opara_cudnnActivationMode_t mode, opara_cudnnNanPropagation_t reluNanOpt, double coef), OPARA_CUDA_REQUIRED) \
    X(opara_cudnnStatus_t, cudnnAddTensor, (opara_cudnnHandle_t handle, const void* alpha, opara_cudnnTensorDescriptor_t aDesc, const void* A, const void* beta, opara_cudnnTensorDescriptor_t cDesc, void* C), OPARA_CUDA_REQUIRED)

/* Function pointer types: opara_PFN_<exported symbol>. */
#define OPARA__CUDA_DRIVER_PFN(ret, name, params, req, proc, ver, alt, alt_ver) typedef ret(OPARA_CUDAAPI* opara_PFN_##name) params;
#define OPARA__CUDA_NVRTC_PFN(ret, name, params, req) typedef ret(OPARA_NVRTCAPI* opara_PFN_##name) params;
#define OPARA__CUDA_CUBLAS_PFN(ret, name, params, req) typedef ret(OPARA_CUBLASAPI* opara_PFN_##name) params;
#define OPARA__CUDA_CUDNN_PFN(ret, name, params, req) typedef ret(OPARA_CUDNNAPI* opara_PFN_##name) params;
OPARA_CUDA_DRIVER_FUNCS(OPARA__CUDA_DRIVER_PFN)
OPARA_CUDA_NVRTC_FUNCS(OPARA__CUDA_NVRTC_PFN)
OPARA_CUDA_CUBLAS_FUNCS(OPARA__CUDA_CUBLAS_PFN)
OPARA_CUDA_CUDNN_FUNCS(OPARA__CUDA_CUDNN_PFN)

/* ============================================================================================== */
/* Tables and loader                                                                              */
/* ============================================================================================== */

#define OPARA_CUDA_PATH_MAX 512
#define OPARA_CUDA_ORIGIN_MAX 160
#define OPARA_CUDA_MIN_DRIVER_VERSION 12000 /* CUDA 12.0 */

#define OPARA__CUDA_DRIVER_MEMBER(ret, name, params, req, proc, ver, alt, alt_ver) opara_PFN_##name name;
#define OPARA__CUDA_LIB_MEMBER(ret, name, params, req) opara_PFN_##name name;

/* Every table starts with the library handle (NULL when not loaded), the path of the file the
   system mapped (the full path when the platform can tell it, else the name that was opened) and
   how it was found (origin, for logs: "given by the caller", "from OPARA_CUBLAS", "by name from
   the system loader path", "in a directory from VIRTUAL_ENV", ...); the function members follow.
   A table that failed to load is all zero. */
typedef struct opara_cuda_driver {
    void* library;
    char path[OPARA_CUDA_PATH_MAX];
    char origin[OPARA_CUDA_ORIGIN_MAX];
    int driver_version;    /* cuDriverGetVersion (13000 = 13.0), 0 when it did not answer */
    int used_proc_address; /* 1 when entry points came from cuGetProcAddress_v2 */
    OPARA_CUDA_DRIVER_FUNCS(OPARA__CUDA_DRIVER_MEMBER)
} opara_cuda_driver;

typedef struct opara_cuda_nvrtc {
    void* library;
    char path[OPARA_CUDA_PATH_MAX];
    char origin[OPARA_CUDA_ORIGIN_MAX];
    /* libnvrtc-builtins (NVRTC dlopens it by soname), preloaded from NVRTC's own directory so it
       is found when that directory is not on the system loader path; closed by the unload */
    void* builtins;
    char builtins_path[OPARA_CUDA_PATH_MAX];
    OPARA_CUDA_NVRTC_FUNCS(OPARA__CUDA_LIB_MEMBER)
} opara_cuda_nvrtc;

typedef struct opara_cuda_cublas {
    void* library;
    char path[OPARA_CUDA_PATH_MAX];
    char origin[OPARA_CUDA_ORIGIN_MAX];
    OPARA_CUDA_CUBLAS_FUNCS(OPARA__CUDA_LIB_MEMBER)
} opara_cuda_cublas;

typedef struct opara_cuda_cudnn {
    void* library;
    char path[OPARA_CUDA_PATH_MAX];
    char origin[OPARA_CUDA_ORIGIN_MAX];
    OPARA_CUDA_CUDNN_FUNCS(OPARA__CUDA_LIB_MEMBER)
} opara_cuda_cudnn;

typedef enum opara_cuda_load_status {
    OPARA_CUDA_LOAD_OK = 0,
    OPARA_CUDA_LOAD_INVALID_ARGUMENT = -1, /* the table pointer is NULL */
    OPARA_CUDA_LOAD_NOT_FOUND = -2,        /* no library could be opened */
    OPARA_CUDA_LOAD_SYMBOL_MISSING = -3,   /* a required entry point is missing: library too old */
    OPARA_CUDA_LOAD_DRIVER_TOO_OLD = -4,   /* cuDriverGetVersion < OPARA_CUDA_MIN_DRIVER_VERSION */
    OPARA_CUDA_LOAD_INCOMPLETE = -5        /* it loaded but cannot load a part it needs (cuDNN's sub-libraries) */
} opara_cuda_load_status;

/* path: one library to load instead of the search list (NULL: the environment variable, else the
   list). err (may be NULL) receives a NUL-terminated message on failure and "" on success. */
OPARA_CUDA_DEF opara_cuda_load_status opara_cuda_driver_load(opara_cuda_driver* cu, const char* path, char* err, size_t err_size);
OPARA_CUDA_DEF opara_cuda_load_status opara_cuda_nvrtc_load(opara_cuda_nvrtc* nvrtc, const char* path, char* err, size_t err_size);
OPARA_CUDA_DEF opara_cuda_load_status opara_cuda_cublas_load(opara_cuda_cublas* cublas, const char* path, char* err, size_t err_size);
OPARA_CUDA_DEF opara_cuda_load_status opara_cuda_cudnn_load(opara_cuda_cudnn* cudnn, const char* path, char* err, size_t err_size);

/* Close the library and zero the table; safe on a zeroed or already unloaded table. */
OPARA_CUDA_DEF void opara_cuda_driver_unload(opara_cuda_driver* cu);
OPARA_CUDA_DEF void opara_cuda_nvrtc_unload(opara_cuda_nvrtc* nvrtc);
OPARA_CUDA_DEF void opara_cuda_cublas_unload(opara_cuda_cublas* cublas);
OPARA_CUDA_DEF void opara_cuda_cudnn_unload(opara_cuda_cudnn* cudnn);

/* Status code names from our own tables, usable without any library ("CUDA_ERROR_INVALID_VALUE").
   An unknown code gives "(unknown CUresult)" and the like, never NULL. */
OPARA_CUDA_DEF const char* opara_cuda_result_name(opara_CUresult result);
OPARA_CUDA_DEF const char* opara_nvrtc_result_name(opara_nvrtcResult result);
OPARA_CUDA_DEF const char* opara_cublas_status_name(opara_cublasStatus_t status);
OPARA_CUDA_DEF const char* opara_cudnn_status_name(opara_cudnnStatus_t status); /* cuDNN 9 and 8 codes */
/* The driver's own cuGetErrorName when the table is loaded and it answers, else opara_cuda_result_name. */
OPARA_CUDA_DEF const char* opara_cuda_driver_result_name(const opara_cuda_driver* cu, opara_CUresult result);


#ifdef __cplusplus
}
#endif

#endif /* OPARA_CUDA_H_INCLUDED */

/* ============================================================================================== */
/* Implementation                                                                                 */
/* ============================================================================================== */

#if defined(OPARA__AMALGAMATED) && defined(OPARA_IMPLEMENTATION) && !defined(OPARA_CUDA_IMPLEMENTATION)
#  define OPARA_CUDA_IMPLEMENTATION
#endif

#if defined(OPARA_CUDA_IMPLEMENTATION) && !defined(OPARA_CUDA_IMPLEMENTATION_INCLUDED)
#define OPARA_CUDA_IMPLEMENTATION_INCLUDED

#include "opara_dl.h" /* its implementation (an earlier include may have had only the declarations) */

/* Prepended to the fixed system places the search looks in (/usr/local/cuda/lib64, the site-
   packages of /usr/local and /usr): a sysroot, or the tests' fake tree. A string expression. */
#ifndef OPARA_CUDA_SYSTEM_PREFIX
#  define OPARA_CUDA_SYSTEM_PREFIX ""
#endif

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifndef _WIN32 /* Windows: <windows.h> comes with opara_dl.h */
#  include <dirent.h>
#  include <sys/stat.h>
#  include <sys/types.h>
#  include <unistd.h>
#  if defined(__linux__)
#    include <link.h> /* ElfW: the program headers of loaded objects */
#    define OPARA__CUDA_HAVE_PHDR 1
#  endif
#endif

/* Entry points are stored by copying the void* the system returns into the typed member. */
typedef char opara__cuda_fnptr_size_check[sizeof(void*) == sizeof(opara_PFN_cuInit) ? 1 : -1];

/* ---- platform ---------------------------------------------------------------------------------- */

#ifdef _WIN32
#  define OPARA__CUDA_LIST_SEP ';' /* in OPARA_CUDA_LIB_PATH */
#  define OPARA__CUDA_DIR_SEP "\\"
static int opara__cuda_absolute(const char* p) { return opara__dl_absolute(p); }
static int opara__cuda_is_file(const char* p) {
    DWORD a = GetFileAttributesA(p);
    return a != INVALID_FILE_ATTRIBUTES && !(a & FILE_ATTRIBUTE_DIRECTORY);
}
/* Identity of a directory, to search each one once: a hash of its name (case-insensitive). */
typedef unsigned long long opara__cuda_dir_id;
static int opara__cuda_dir_identity(const char* p, opara__cuda_dir_id* id) {
    DWORD a = GetFileAttributesA(p);
    unsigned long long h = 1469598103934665603ull;
    if (a == INVALID_FILE_ATTRIBUTES || !(a & FILE_ATTRIBUTE_DIRECTORY)) return 0;
    for (; *p; ++p) h = (h ^ (unsigned char)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p)) * 1099511628211ull;
    *id = h;
    return 1;
}
static int opara__cuda_same_dir(const opara__cuda_dir_id* a, const opara__cuda_dir_id* b) { return *a == *b; }
/* The file the system mapped for a loaded module. */
static int opara__cuda_mapped_path(void* library, const char* symbol, char* out, size_t size) {
    DWORD n = GetModuleFileNameA((HMODULE)library, out, (DWORD)size);
    (void)symbol;
    return n > 0 && n < size;
}
#else
#  define OPARA__CUDA_LIST_SEP ':'
#  define OPARA__CUDA_DIR_SEP "/"
static int opara__cuda_absolute(const char* p) { return p[0] == '/'; }
static int opara__cuda_is_file(const char* p) {
    struct stat st;
    return stat(p, &st) == 0 && !S_ISDIR(st.st_mode);
}
typedef struct opara__cuda_dir_id {
    dev_t dev;
    ino_t ino;
} opara__cuda_dir_id;
static int opara__cuda_dir_identity(const char* p, opara__cuda_dir_id* id) {
    struct stat st;
    if (stat(p, &st) != 0 || !S_ISDIR(st.st_mode)) return 0;
    id->dev = st.st_dev;
    id->ino = st.st_ino;
    return 1;
}
static int opara__cuda_same_dir(const opara__cuda_dir_id* a, const opara__cuda_dir_id* b) {
    return a->dev == b->dev && a->ino == b->ino;
}
#  ifdef OPARA__CUDA_HAVE_PHDR
/* dl_iterate_phdr(3) walks the loaded objects; glibc declares it and its struct dl_phdr_info only
   under _GNU_SOURCE, which a header cannot set after the fact. So the function comes from dlsym
   and the struct is the documented leading members (the callback's size argument exists so that
   members are only ever added after these). */
typedef struct opara__cuda_phdr_info {
    ElfW(Addr) dlpi_addr;
    const char* dlpi_name;
    const ElfW(Phdr)* dlpi_phdr;
    ElfW(Half) dlpi_phnum;
} opara__cuda_phdr_info;
typedef int (*opara__cuda_phdr_callback)(opara__cuda_phdr_info* info, size_t size, void* data);
typedef int (*opara__cuda_iterate_phdr_fn)(opara__cuda_phdr_callback callback, void* data);
static void opara__cuda_iterate_phdr(opara__cuda_phdr_callback callback, void* data) {
    void* self = opara_dl_open(NULL, NULL, 0);
    void* sym = self ? opara_dl_sym(self, "dl_iterate_phdr") : NULL;
    opara__cuda_iterate_phdr_fn iterate;
    if (sym) {
        memcpy(&iterate, &sym, sizeof iterate);
        iterate(callback, data);
    }
    opara_dl_close(self);
}
typedef struct opara__cuda_phdr_query {
    uintptr_t addr; /* an address inside the library */
    char* out;
    size_t size;
    int found;
} opara__cuda_phdr_query;
static int opara__cuda_phdr_contains(const opara__cuda_phdr_info* info, uintptr_t addr) {
    int i;
    for (i = 0; i < (int)info->dlpi_phnum; ++i) {
        const ElfW(Phdr)* ph = &info->dlpi_phdr[i];
        uintptr_t start = (uintptr_t)info->dlpi_addr + (uintptr_t)ph->p_vaddr;
        if (ph->p_type == PT_LOAD && addr >= start && addr - start < (uintptr_t)ph->p_memsz) return 1;
    }
    return 0;
}
static int opara__cuda_phdr_find(opara__cuda_phdr_info* info, size_t size, void* data) {
    opara__cuda_phdr_query* q = (opara__cuda_phdr_query*)data;
    (void)size;
    if (!info->dlpi_name || !info->dlpi_name[0] || !opara__cuda_phdr_contains(info, q->addr)) return 0;
    q->found = (size_t)snprintf(q->out, q->size, "%s", info->dlpi_name) < q->size;
    return 1;
}
#  endif
/* The file the system mapped for a loaded library (glibc's link map name: the path it opened),
   found through the segment that holds one of its symbols. 0 when the platform cannot tell. */
static int opara__cuda_mapped_path(void* library, const char* symbol, char* out, size_t size) {
#  ifdef OPARA__CUDA_HAVE_PHDR
    opara__cuda_phdr_query q;
    void* sym = symbol ? opara_dl_sym(library, symbol) : NULL;
    if (!sym) return 0;
    q.addr = (uintptr_t)sym;
    q.out = out;
    q.size = size;
    q.found = 0;
    opara__cuda_iterate_phdr(opara__cuda_phdr_find, &q);
    return q.found;
#  else
    (void)library, (void)symbol, (void)out, (void)size;
    return 0;
#  endif
}
#endif

/* ---- messages ---------------------------------------------------------------------------------- */

/* MinGW: its C99 vsnprintf by name (msvcrt's lacks %zu), as opara.h's messages do */
#if defined(__MINGW32__) && !defined(__clang__)
__attribute__((format(gnu_printf, 3, 4)))
#elif defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 3, 4)))
#endif
static void opara__cuda_appendf(char* buf, size_t size, const char* fmt, ...) {
    size_t used;
    va_list args;
    if (!buf || size == 0) return;
    used = strlen(buf);
    if (used + 1 >= size) return;
    va_start(args, fmt);
#if defined(__MINGW32__)
    __mingw_vsnprintf(buf + used, size - used, fmt, args);
#else
    vsnprintf(buf + used, size - used, fmt, args);
#endif
    va_end(args);
}

static void opara__cuda_clear(char* buf, size_t size) {
    if (buf && size > 0) buf[0] = 0;
}

/* ---- library specs ----------------------------------------------------------------------------- */

typedef struct opara__cuda_entry {
    const char* symbol;    /* dlsym name, also the table member */
    const char* proc_name; /* cuGetProcAddress name */
    int proc_version;      /* 0: dlsym only */
    const char* alt_symbol; /* same prototype, older ABI */
    int alt_version;        /* 0: no alternative */
    size_t offset; /* of the member in the table */
    int required;
} opara__cuda_entry;

typedef struct opara__cuda_spec {
    const char* what;    /* "CUDA driver", for messages */
    const char* env_var; /* override variable */
    const char* const* names;
    size_t name_count;
    const opara__cuda_entry* entries;
    size_t entry_count;
    const char* const* wheels; /* pip wheel directories under site-packages/nvidia, NULL-terminated;
                                  NULL: no directory search (the driver) */
} opara__cuda_spec;

#define OPARA__CUDA_COUNT(a) (sizeof(a) / sizeof((a)[0]))

#define OPARA__CUDA_DRIVER_ENTRY(ret, name, params, req, proc, ver, alt, alt_ver) \
    {#name, #proc, ver, #alt, alt_ver, offsetof(opara_cuda_driver, name), req},
#define OPARA__CUDA_NVRTC_ENTRY(ret, name, params, req) {#name, 0, 0, 0, 0, offsetof(opara_cuda_nvrtc, name), req},
#define OPARA__CUDA_CUBLAS_ENTRY(ret, name, params, req) {#name, 0, 0, 0, 0, offsetof(opara_cuda_cublas, name), req},
#define OPARA__CUDA_CUDNN_ENTRY(ret, name, params, req) {#name, 0, 0, 0, 0, offsetof(opara_cuda_cudnn, name), req},

static const opara__cuda_entry opara__cuda_driver_entries[] = {OPARA_CUDA_DRIVER_FUNCS(OPARA__CUDA_DRIVER_ENTRY)};
static const opara__cuda_entry opara__cuda_nvrtc_entries[] = {OPARA_CUDA_NVRTC_FUNCS(OPARA__CUDA_NVRTC_ENTRY)};
static const opara__cuda_entry opara__cuda_cublas_entries[] = {OPARA_CUDA_CUBLAS_FUNCS(OPARA__CUDA_CUBLAS_ENTRY)};
static const opara__cuda_entry opara__cuda_cudnn_entries[] = {OPARA_CUDA_CUDNN_FUNCS(OPARA__CUDA_CUDNN_ENTRY)};

#ifdef _WIN32
static const char* const opara__cuda_driver_names[] = {"nvcuda.dll"};
static const char* const opara__cuda_nvrtc_names[] = {"nvrtc64_130_0.dll", "nvrtc64_120_0.dll", "nvrtc64_112_0.dll"};
static const char* const opara__cuda_cublas_names[] = {"cublas64_13.dll", "cublas64_12.dll", "cublas64_11.dll"};
static const char* const opara__cuda_cudnn_names[] = {"cudnn64_9.dll", "cudnn64_8.dll"};
#else
static const char* const opara__cuda_driver_names[] = {"libcuda.so.1", "libcuda.so"};
static const char* const opara__cuda_nvrtc_names[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2", "libnvrtc.so"};
static const char* const opara__cuda_cublas_names[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so.11", "libcublas.so"};
static const char* const opara__cuda_cudnn_names[] = {"libcudnn.so.9", "libcudnn.so.8", "libcudnn.so"};
#endif

/* Where pip wheels put each library (site-packages/nvidia/<dir>): CUDA 13 wheels share cu13/lib,
   CUDA 12 wheels have one directory per component. The driver is never searched in directories:
   it belongs to the installed kernel module, and a libcuda.so.1 found elsewhere (a toolkit's
   stub, a container's compat copy) is the wrong one. */
static const char* const opara__cuda_nvrtc_wheels[] = {"cu13/lib", "cuda_nvrtc/lib", NULL};
static const char* const opara__cuda_cublas_wheels[] = {"cu13/lib", "cublas/lib", NULL};
static const char* const opara__cuda_cudnn_wheels[] = {"cudnn/lib", "cu13/lib", NULL};
static const char* const opara__cuda_cupti_wheels[] = {"cu13/lib", "cuda_cupti/lib", NULL};

#define OPARA__CUDA_SPEC(what, env, lib, wheels) \
    {what, env, opara__cuda_##lib##_names, OPARA__CUDA_COUNT(opara__cuda_##lib##_names), opara__cuda_##lib##_entries, \
     OPARA__CUDA_COUNT(opara__cuda_##lib##_entries), wheels}
static const opara__cuda_spec opara__cuda_driver_spec = OPARA__CUDA_SPEC("CUDA driver", "OPARA_CUDA_DRIVER", driver, NULL);
static const opara__cuda_spec opara__cuda_nvrtc_spec =
    OPARA__CUDA_SPEC("NVRTC", "OPARA_NVRTC", nvrtc, opara__cuda_nvrtc_wheels);
static const opara__cuda_spec opara__cuda_cublas_spec =
    OPARA__CUDA_SPEC("cuBLAS", "OPARA_CUBLAS", cublas, opara__cuda_cublas_wheels);
static const opara__cuda_spec opara__cuda_cudnn_spec =
    OPARA__CUDA_SPEC("cuDNN", "OPARA_CUDNN", cudnn, opara__cuda_cudnn_wheels);

/* ---- opening ----------------------------------------------------------------------------------- */

static void opara__cuda_copy_path(char* dst, const char* src) {
    snprintf(dst, OPARA_CUDA_PATH_MAX, "%.*s", OPARA_CUDA_PATH_MAX - 1, src); /* a longer path is cut */
}

/* One search for a library: where it is, how it was found, and what the failure message says. */
#define OPARA__CUDA_MAX_SEEN 48 /* directories searched at most */
#define OPARA__CUDA_LISTED 10   /* directories the message lists by name */
typedef struct opara__cuda_search {
    const opara__cuda_spec* spec;
    void* library;              /* set when found */
    char* loaded;               /* [OPARA_CUDA_PATH_MAX] what was opened */
    char* origin;               /* [OPARA_CUDA_ORIGIN_MAX] how it was found */
    char* err;
    size_t err_size;
    unsigned dirs;              /* directories searched */
    unsigned broken;            /* files present there that did not load */
    char broken_why[768];       /* the first of them, with the system's reason */
    unsigned n_seen;
    opara__cuda_dir_id seen[OPARA__CUDA_MAX_SEEN];
} opara__cuda_search;

/* dir + separator + name into out (OPARA_CUDA_PATH_MAX); 0 when it does not fit. */
static int opara__cuda_join(char* out, const char* dir, const char* name) {
    size_t n = strlen(dir);
    const char* sep = n > 0 && (dir[n - 1] == '/' || dir[n - 1] == '\\') ? "" : OPARA__CUDA_DIR_SEP;
    return (size_t)snprintf(out, OPARA_CUDA_PATH_MAX, "%s%s%s", dir, sep, name) < OPARA_CUDA_PATH_MAX;
}

/* Opens a file found in a directory; a file that is there but does not load is remembered for
   the message (a broken install is worth reporting even when another directory has one). */
static int opara__cuda_try_file(opara__cuda_search* s, const char* path, const char* why) {
    char reason[512];
    if (!opara__cuda_is_file(path)) return 0;
    s->library = opara_dl_open(path, reason, sizeof reason);
    if (s->library) {
        opara__cuda_copy_path(s->loaded, path);
        snprintf(s->origin, OPARA_CUDA_ORIGIN_MAX, "in a directory from %s", why);
        return 1;
    }
    if (s->broken++ < 2)
        opara__cuda_appendf(s->broken_why, sizeof s->broken_why, "%s%s (%s)", s->broken > 1 ? "; " : "", path, reason);
    return 0;
}

/* Searches one directory (once per search, only if it exists) for the library's names, versioned
   names first. why says where the directory came from. */
static void opara__cuda_try_dir(opara__cuda_search* s, const char* dir, const char* why) {
    opara__cuda_dir_id id;
    char path[OPARA_CUDA_PATH_MAX];
    unsigned i;
    size_t k;
    if (s->library || !dir[0] || !opara__cuda_dir_identity(dir, &id)) return;
    for (i = 0; i < s->n_seen; ++i)
        if (opara__cuda_same_dir(&s->seen[i], &id)) return;
    if (s->n_seen == OPARA__CUDA_MAX_SEEN) return;
    s->seen[s->n_seen++] = id;
    if (s->dirs < OPARA__CUDA_LISTED)
        opara__cuda_appendf(s->err, s->err_size, "%s%s (%s)", s->dirs ? ", " : "; then the same names in ", dir, why);
    ++s->dirs;
    for (k = 0; k < s->spec->name_count; ++k)
        if (opara__cuda_join(path, dir, s->spec->names[k]) && opara__cuda_try_file(s, path, why)) return;
}

static void opara__cuda_try_subdir(opara__cuda_search* s, const char* dir, const char* sub, const char* why) {
    char path[OPARA_CUDA_PATH_MAX];
    if (!s->library && opara__cuda_join(path, dir, sub)) opara__cuda_try_dir(s, path, why);
}

/* The directories listed in an environment variable (OPARA_CUDA_LIB_PATH). */
static void opara__cuda_try_list(opara__cuda_search* s, const char* var) {
    const char* list = getenv(var);
    char dir[OPARA_CUDA_PATH_MAX];
    while (list && *list && !s->library) {
        const char* end = strchr(list, OPARA__CUDA_LIST_SEP);
        size_t n = end ? (size_t)(end - list) : strlen(list);
        if (n > 0 && n < sizeof dir) {
            memcpy(dir, list, n);
            dir[n] = 0;
            opara__cuda_try_dir(s, dir, var);
        }
        list = end ? end + 1 : NULL;
    }
}

/* An environment variable naming a prefix (CUDA_HOME=/usr/local/cuda-13.0): its sub directory. */
static void opara__cuda_try_env(opara__cuda_search* s, const char* var, const char* sub) {
    const char* prefix = getenv(var);
    if (prefix && opara__cuda_absolute(prefix)) opara__cuda_try_subdir(s, prefix, sub, var);
}

#ifndef _WIN32
/* A site-packages directory: the library's pip wheel directories under nvidia/. */
static void opara__cuda_try_site(opara__cuda_search* s, const char* site, const char* why) {
    char path[OPARA_CUDA_PATH_MAX];
    const char* const* w;
    for (w = s->spec->wheels; *w && !s->library; ++w)
        if (snprintf(path, sizeof path, "%s/nvidia/%s", site, *w) < (int)sizeof path) opara__cuda_try_dir(s, path, why);
}

/* The minor version of "python3.12" (12), -1 for "python3", -2 for any other name. */
static int opara__cuda_python_minor(const char* name) {
    const char* p = name + 7;
    int minor = 0;
    if (strncmp(name, "python3", 7) != 0) return -2;
    if (*p == 0) return -1;
    if (*p++ != '.' || *p < '0' || *p > '9') return -2;
    while (*p >= '0' && *p <= '9' && minor < 1000) minor = minor * 10 + (*p++ - '0');
    return *p ? -2 : minor;
}

/* A Python prefix (a venv, conda, /usr/local, ~/.local): the site-packages and dist-packages of
   each lib/python3.N (newest first) and of lib/python3 (Debian's). */
static void opara__cuda_try_python_prefix(opara__cuda_search* s, const char* prefix, const char* why) {
    char lib[OPARA_CUDA_PATH_MAX], site[OPARA_CUDA_PATH_MAX];
    int minors[16], n = 0, i, j;
    DIR* d;
    struct dirent* e;
    if (s->library || !opara__cuda_join(lib, prefix, "lib") || (d = opendir(lib)) == NULL) return;
    while ((e = readdir(d)) != NULL && n < 16) {
        int m = opara__cuda_python_minor(e->d_name);
        if (m < -1) continue;
        for (i = n++; i > 0 && minors[i - 1] < m; --i) minors[i] = minors[i - 1];
        minors[i] = m;
    }
    closedir(d);
    for (i = 0; i < n && !s->library; ++i) {
        static const char* const kinds[] = {"site-packages", "dist-packages"};
        for (j = 0; j < 2; ++j) {
            int len = minors[i] < 0 ? snprintf(site, sizeof site, "%s/python3/%s", lib, kinds[j])
                                    : snprintf(site, sizeof site, "%s/python3.%d/%s", lib, minors[i], kinds[j]);
            if (len < (int)sizeof site) opara__cuda_try_site(s, site, why);
        }
    }
}

static void opara__cuda_try_env_python(opara__cuda_search* s, const char* var) {
    const char* prefix = getenv(var);
    if (prefix && opara__cuda_absolute(prefix)) opara__cuda_try_python_prefix(s, prefix, var);
}

/* 1 when directory dir holds an executable python3 or python3.N. */
static int opara__cuda_has_python(const char* dir) {
    char path[OPARA_CUDA_PATH_MAX];
    DIR* d = opendir(dir);
    struct dirent* e;
    int found = 0;
    if (!d) return 0;
    while (!found && (e = readdir(d)) != NULL)
        found = opara__cuda_python_minor(e->d_name) >= -1 && opara__cuda_join(path, dir, e->d_name) &&
                access(path, X_OK) == 0;
    closedir(d);
    return found;
}

/* Every python3* on PATH: its prefix is the directory above bin/ (a venv, conda, /usr). Relative
   PATH entries are skipped: the current directory is no place to load libraries from. */
static void opara__cuda_try_path_pythons(opara__cuda_search* s) {
    const char* list = getenv("PATH");
    char dir[OPARA_CUDA_PATH_MAX];
    while (list && *list && !s->library) {
        const char* end = strchr(list, ':');
        size_t n = end ? (size_t)(end - list) : strlen(list);
        if (n > 1 && n < sizeof dir && list[0] == '/') {
            char* slash;
            memcpy(dir, list, n);
            dir[n] = 0;
            while (n > 1 && dir[n - 1] == '/') dir[--n] = 0;
            if (opara__cuda_has_python(dir) && (slash = strrchr(dir, '/')) != NULL) {
                if (slash == dir) slash[1] = 0; /* /bin: prefix "/" */
                else *slash = 0;
                opara__cuda_try_python_prefix(s, dir, "python3 on PATH");
            }
        }
        list = end ? end + 1 : NULL;
    }
}
#endif

#ifdef OPARA__CUDA_HAVE_PHDR
/* Libraries whose directory is a good place to look: our own (once one is found, the next is
   probably beside it), the CUDA runtime and math libraries, PyTorch's CUDA library. */
static const char* const opara__cuda_loaded_markers[] = {
    "libcublas", "libcudnn", "libnvrtc", "libcupti", "libcudart.so", "libnvJitLink", "libcufft",
    "libcurand", "libcusparse", "libcusolver", "libtorch_cuda", "libc10_cuda"};

#define OPARA__CUDA_MAX_LOADED 8
typedef struct opara__cuda_loaded {
    unsigned n;
    char dir[OPARA__CUDA_MAX_LOADED][OPARA_CUDA_PATH_MAX];
    char why[OPARA__CUDA_MAX_LOADED][64];
} opara__cuda_loaded;

static int opara__cuda_collect_loaded(opara__cuda_phdr_info* info, size_t size, void* data) {
    opara__cuda_loaded* l = (opara__cuda_loaded*)data;
    const char* name = info->dlpi_name;
    const char* base = name ? strrchr(name, '/') : NULL;
    size_t i;
    (void)size;
    if (!base || l->n == OPARA__CUDA_MAX_LOADED) return 0;
    for (i = 0; i < OPARA__CUDA_COUNT(opara__cuda_loaded_markers); ++i)
        if (strncmp(base + 1, opara__cuda_loaded_markers[i], strlen(opara__cuda_loaded_markers[i])) == 0) break;
    if (i == OPARA__CUDA_COUNT(opara__cuda_loaded_markers) || (size_t)(base - name) >= OPARA_CUDA_PATH_MAX) return 0;
    memcpy(l->dir[l->n], name, (size_t)(base - name));
    l->dir[l->n][base - name] = 0;
    snprintf(l->why[l->n], sizeof l->why[l->n], "the loaded %.40s", base + 1);
    ++l->n;
    return 0;
}

/* The directories of libraries already in the process, and the pip wheel directories beside
   them: the site-packages above (torch/lib -> site-packages, nvidia/cu13/lib -> site-packages). */
static void opara__cuda_try_loaded(opara__cuda_search* s) {
    opara__cuda_loaded l;
    char up[OPARA_CUDA_PATH_MAX], probe[OPARA_CUDA_PATH_MAX];
    opara__cuda_dir_id id;
    unsigned i, level;
    l.n = 0;
    opara__cuda_iterate_phdr(opara__cuda_collect_loaded, &l);
    for (i = 0; i < l.n && !s->library; ++i) {
        opara__cuda_try_dir(s, l.dir[i], l.why[i]);
        opara__cuda_copy_path(up, l.dir[i]);
        for (level = 0; level < 3 && !s->library; ++level) {
            char* slash = strrchr(up, '/');
            if (!slash || slash == up) break;
            *slash = 0;
            if (opara__cuda_join(probe, up, "nvidia") && opara__cuda_dir_identity(probe, &id)) {
                opara__cuda_try_site(s, up, l.why[i]);
                break;
            }
        }
    }
}
#endif

#ifndef _WIN32
/* A fixed place of the system (under OPARA_CUDA_SYSTEM_PREFIX): a Python prefix or a directory. */
static void opara__cuda_try_system(opara__cuda_search* s, const char* place, int python, const char* why) {
    char path[OPARA_CUDA_PATH_MAX];
    if (s->library || (size_t)snprintf(path, sizeof path, "%s%s", OPARA_CUDA_SYSTEM_PREFIX, place) >= sizeof path) return;
    if (python) opara__cuda_try_python_prefix(s, path, why);
    else opara__cuda_try_dir(s, path, why);
}
#endif

/* The directories, after the system loader path: see docs/CUDA-LOADER.md for the order. */
static void opara__cuda_search_dirs(opara__cuda_search* s) {
    opara__cuda_try_list(s, "OPARA_CUDA_LIB_PATH");
#ifdef OPARA__CUDA_HAVE_PHDR
    opara__cuda_try_loaded(s);
#endif
#ifdef _WIN32
    opara__cuda_try_env(s, "CUDA_PATH", "bin\\x64");
    opara__cuda_try_env(s, "CUDA_PATH", "bin");
    opara__cuda_try_env(s, "CONDA_PREFIX", "Library\\bin");
#else
    opara__cuda_try_env_python(s, "VIRTUAL_ENV");
    opara__cuda_try_env(s, "CONDA_PREFIX", "lib");
    opara__cuda_try_env_python(s, "CONDA_PREFIX");
    opara__cuda_try_env(s, "CUDA_HOME", "lib64");
    opara__cuda_try_env(s, "CUDA_HOME", "lib");
    opara__cuda_try_env(s, "CUDA_PATH", "lib64");
    opara__cuda_try_env(s, "CUDA_PATH", "lib");
    opara__cuda_try_path_pythons(s);
    {
        const char* home = getenv("HOME");
        char local[OPARA_CUDA_PATH_MAX];
        if (home && opara__cuda_absolute(home) && opara__cuda_join(local, home, ".local"))
            opara__cuda_try_python_prefix(s, local, "HOME (~/.local)");
    }
    opara__cuda_try_system(s, "/usr/local", 1, "the system's Python");
    opara__cuda_try_system(s, "/usr", 1, "the system's Python");
    opara__cuda_try_system(s, "/usr/local/cuda/lib64", 0, "the default toolkit");
    opara__cuda_try_system(s, "/usr/local/cuda/lib", 0, "the default toolkit");
#  if defined(__aarch64__) /* the toolkit's own directories: Jetson (L4T) and Arm servers (SBSA) */
    opara__cuda_try_system(s, "/usr/local/cuda/targets/aarch64-linux/lib", 0, "the default toolkit (L4T)");
    opara__cuda_try_system(s, "/usr/local/cuda/targets/sbsa-linux/lib", 0, "the default toolkit (SBSA)");
#  endif
#endif
}

/* The end of a NOT_FOUND message: what the directories held, and what to set. */
static void opara__cuda_search_failed(const opara__cuda_search* s) {
    if (s->dirs > OPARA__CUDA_LISTED) opara__cuda_appendf(s->err, s->err_size, " and %u more", s->dirs - OPARA__CUDA_LISTED);
    if (s->dirs == 0)
        opara__cuda_appendf(s->err, s->err_size,
                            "; no search directory exists (OPARA_CUDA_LIB_PATH, the loaded CUDA libraries, VIRTUAL_ENV, "
                            "CONDA_PREFIX, CUDA_HOME, CUDA_PATH, python3 on PATH, ~/.local, /usr/local, /usr, "
                            "/usr/local/cuda)");
    else if (s->broken == 0)
        opara__cuda_appendf(s->err, s->err_size, "; none holds one");
    else
        opara__cuda_appendf(s->err, s->err_size, "; %u present but not loadable: %s%s", s->broken, s->broken_why,
                            s->broken > 2 ? "; ..." : "");
}

/* The library's names on the system loader path, versioned first; returns the one that opened,
   else NULL with "cannot load ...: tried <names> (<reasons>)" in err. dlerror's "name: reason" is
   shortened to the reason, given once when every name failed the same way. */
#define OPARA__CUDA_MAX_NAMES 6
static const char* opara__cuda_try_names(const opara__cuda_spec* spec, void** library, char* err, size_t err_size) {
    char why[OPARA__CUDA_MAX_NAMES][256];
    size_t i, n = spec->name_count < OPARA__CUDA_MAX_NAMES ? spec->name_count : OPARA__CUDA_MAX_NAMES;
    int same = 1;
    for (i = 0; i < n; ++i) {
        if ((*library = opara_dl_open(spec->names[i], why[i], sizeof why[i])) != NULL) return spec->names[i];
        same = same && strcmp(why[i], why[0]) == 0;
    }
    opara__cuda_appendf(err, err_size, "cannot load the %s library: tried", spec->what);
    for (i = 0; i < n; ++i) {
        opara__cuda_appendf(err, err_size, "%s \"%s\"", i ? "," : "", spec->names[i]);
        if (!same) opara__cuda_appendf(err, err_size, " (%s)", why[i]);
    }
    if (same) opara__cuda_appendf(err, err_size, " on the system loader path (%s)", why[0]);
    return NULL;
}

#if defined(__linux__) && defined(__aarch64__)
/* Jetson (L4T): the driver is installed in tegra/ (JetPack 5) or nvidia/ (JetPack 6) under the
   multiarch directory, which a container's loader path may lack. These are the installed driver's
   own places, not a toolkit's stub, so the driver is looked for there (under OPARA_CUDA_SYSTEM_PREFIX)
   after its names. */
static void* opara__cuda_try_l4t_driver(const opara__cuda_spec* spec, char* loaded_path, char* origin, char* err,
                                         size_t err_size) {
    static const char* const dirs[] = {"/usr/lib/aarch64-linux-gnu/tegra", "/usr/lib/aarch64-linux-gnu/nvidia"};
    char path[OPARA_CUDA_PATH_MAX], why[256];
    size_t i;
    void* library;
    if (spec != &opara__cuda_driver_spec) return NULL;
    for (i = 0; i < OPARA__CUDA_COUNT(dirs); ++i) {
        if ((size_t)snprintf(path, sizeof path, "%s%s/libcuda.so.1", OPARA_CUDA_SYSTEM_PREFIX, dirs[i]) >= sizeof path) continue;
        if ((library = opara_dl_open(path, why, sizeof why)) != NULL) {
            opara__cuda_clear(err, err_size);
            opara__cuda_copy_path(loaded_path, path);
            snprintf(origin, OPARA_CUDA_ORIGIN_MAX, "the Jetson (L4T) driver directory");
            return library;
        }
    }
    opara__cuda_appendf(err, err_size, "; not in the Jetson (L4T) driver directories %s, %s either", dirs[0], dirs[1]);
    return NULL;
}
#endif

/* Opens the explicit path (argument, else environment variable) or searches: the names on the
   system loader path, then (except for the driver) the same names in the directories above. On
   failure the message names what was tried with the system's reasons. */
static opara_cuda_load_status opara__cuda_open(const opara__cuda_spec* spec, const char* path, void** library,
                                               char* loaded_path, char* origin, char* err, size_t err_size) {
    char why[512];
    const char* env = path ? NULL : getenv(spec->env_var);
    const char* chosen = path ? path : (env && env[0] ? env : NULL);
    const char* name;
    opara__cuda_search s;
    if (chosen) {
        *library = opara_dl_open(chosen, why, sizeof why);
        if (*library) {
            opara__cuda_copy_path(loaded_path, chosen);
            snprintf(origin, OPARA_CUDA_ORIGIN_MAX, path ? "given by the caller" : "from %s", spec->env_var);
            return OPARA_CUDA_LOAD_OK;
        }
        opara__cuda_appendf(err, err_size, "cannot load the %s library: tried \"%s\" (%s%s) (%s)", spec->what, chosen,
                            path ? "given by the caller" : "from ", path ? "" : spec->env_var, why);
        return OPARA_CUDA_LOAD_NOT_FOUND;
    }
    if ((name = opara__cuda_try_names(spec, library, err, err_size)) != NULL) {
        opara__cuda_clear(err, err_size);
        opara__cuda_copy_path(loaded_path, name);
        snprintf(origin, OPARA_CUDA_ORIGIN_MAX, "by name from the system loader path");
        return OPARA_CUDA_LOAD_OK;
    }
    if (spec->wheels) {
        memset(&s, 0, sizeof s);
        s.spec = spec;
        s.loaded = loaded_path;
        s.origin = origin;
        s.err = err;
        s.err_size = err_size;
        opara__cuda_search_dirs(&s);
        if (s.library) {
            *library = s.library;
            opara__cuda_clear(err, err_size);
            return OPARA_CUDA_LOAD_OK;
        }
        opara__cuda_search_failed(&s);
        opara__cuda_appendf(err, err_size, "; set %s to the library's path, or OPARA_CUDA_LIB_PATH to directories to search",
                            spec->env_var);
    } else {
#if defined(__linux__) && defined(__aarch64__)
        if ((*library = opara__cuda_try_l4t_driver(spec, loaded_path, origin, err, err_size)) != NULL) return OPARA_CUDA_LOAD_OK;
#endif
        opara__cuda_appendf(err, err_size, "; set %s to the library's path to choose one", spec->env_var);
    }
    return OPARA_CUDA_LOAD_NOT_FOUND;
}

/* Replaces the opened name by the file the system mapped (a bare name becomes the full path),
   found through the first entry point the library exports itself. */
static void opara__cuda_resolve_path(const opara__cuda_spec* spec, void* library, char* loaded_path) {
    char mapped[OPARA_CUDA_PATH_MAX];
    size_t i;
    for (i = 0; i < spec->entry_count; ++i)
        if (opara__cuda_mapped_path(library, spec->entries[i].symbol, mapped, sizeof mapped)) {
            opara__cuda_copy_path(loaded_path, mapped);
            return;
        }
}

/* ---- resolving --------------------------------------------------------------------------------- */

typedef struct opara__cuda_resolver {
    void* library;
    opara_PFN_cuGetProcAddress_v2 get_proc; /* NULL: dlsym only */
    int driver_version;
} opara__cuda_resolver;

static void* opara__cuda_find(const opara__cuda_resolver* r, const char* symbol, const char* proc_name, int version) {
    void* p = NULL;
    if (r->get_proc && version > 0 && version <= r->driver_version) {
        opara_CUdriverProcAddressQueryResult status = OPARA_CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
        if (r->get_proc(proc_name, &p, version, (opara_cuuint64_t)OPARA_CU_GET_PROC_ADDRESS_LEGACY_STREAM, &status) !=
                OPARA_CUDA_SUCCESS ||
            status != OPARA_CU_GET_PROC_ADDRESS_SUCCESS)
            p = NULL;
    }
    if (!p) p = opara_dl_sym(r->library, symbol);
    return p;
}

/* Fills every member it finds; returns the first required entry that is missing, or NULL. */
static const opara__cuda_entry* opara__cuda_resolve(const opara__cuda_resolver* r, const opara__cuda_spec* spec,
                                                    void* table, size_t* missing_count) {
    const opara__cuda_entry* first_missing = NULL;
    size_t i;
    *missing_count = 0;
    for (i = 0; i < spec->entry_count; ++i) {
        const opara__cuda_entry* e = &spec->entries[i];
        void* p = opara__cuda_find(r, e->symbol, e->proc_name, e->proc_version);
        if (!p && e->alt_version > 0) p = opara__cuda_find(r, e->alt_symbol, e->proc_name, e->alt_version);
        if (p) {
            memcpy((char*)table + e->offset, &p, sizeof p);
        } else if (e->required) {
            if (!first_missing) first_missing = e;
            ++*missing_count;
        }
    }
    return first_missing;
}

static void opara__cuda_report_missing(const opara__cuda_spec* spec, const char* path, const opara__cuda_entry* e,
                                       size_t missing_count, const opara__cuda_resolver* r, char* err, size_t err_size) {
    opara__cuda_appendf(err, err_size, "the %s library \"%s\" is too old or incomplete: required entry point %s not found",
                        spec->what, path, e->symbol);
    if (r->get_proc && e->proc_version > 0)
        opara__cuda_appendf(err, err_size, " (cuGetProcAddress \"%s\" for CUDA %d.%d, driver %d.%d)", e->proc_name,
                            e->proc_version / 1000, e->proc_version % 1000 / 10, r->driver_version / 1000,
                            r->driver_version % 1000 / 10);
    if (missing_count > 1)
        opara__cuda_appendf(err, err_size, "; %lu required entry points are missing", (unsigned long)missing_count);
}

/* Resolves the opened library into the zeroed table; when a required entry point is missing the
   library is closed, the table zeroed again and the message names the entry point. */
static opara_cuda_load_status opara__cuda_finish(const opara__cuda_spec* spec, void* table, size_t table_size,
                                                 const opara__cuda_resolver* r, const char* loaded_path, char* err,
                                                 size_t err_size) {
    size_t missing_count;
    const opara__cuda_entry* missing = opara__cuda_resolve(r, spec, table, &missing_count);
    if (!missing) return OPARA_CUDA_LOAD_OK;
    opara__cuda_report_missing(spec, loaded_path, missing, missing_count, r, err, err_size);
    opara_dl_close(r->library);
    memset(table, 0, table_size);
    return OPARA_CUDA_LOAD_SYMBOL_MISSING;
}

static opara_cuda_load_status opara__cuda_invalid(const char* what, char* err, size_t err_size) {
    opara__cuda_clear(err, err_size);
    opara__cuda_appendf(err, err_size, "cannot load the %s library: the table pointer is NULL", what);
    return OPARA_CUDA_LOAD_INVALID_ARGUMENT;
}

/* ---- public: loading --------------------------------------------------------------------------- */

/* cuGetProcAddress_v2 and cuDriverGetVersion come from dlsym; the version decides which ABI
   versions may be asked for (asking above the driver's version is an error). */
static void opara__cuda_driver_bootstrap(void* library, opara__cuda_resolver* r) {
    void* get_proc = opara_dl_sym(library, "cuGetProcAddress_v2");
    void* get_version = opara_dl_sym(library, "cuDriverGetVersion");
    r->library = library;
    r->get_proc = NULL;
    r->driver_version = 0;
    if (get_version) {
        opara_PFN_cuDriverGetVersion fn;
        int version = 0;
        memcpy(&fn, &get_version, sizeof fn);
        if (fn(&version) == OPARA_CUDA_SUCCESS && version > 0) r->driver_version = version;
    }
    if (get_proc && r->driver_version >= 12000) memcpy(&r->get_proc, &get_proc, sizeof get_proc);
}

OPARA_CUDA_DEF opara_cuda_load_status opara_cuda_driver_load(opara_cuda_driver* cu, const char* path, char* err, size_t err_size) {
    opara__cuda_resolver r;
    opara_cuda_load_status status;
    void* library = NULL;
    char loaded[OPARA_CUDA_PATH_MAX], origin[OPARA_CUDA_ORIGIN_MAX];
    if (!cu) return opara__cuda_invalid(opara__cuda_driver_spec.what, err, err_size);
    memset(cu, 0, sizeof *cu);
    opara__cuda_clear(err, err_size);
    status = opara__cuda_open(&opara__cuda_driver_spec, path, &library, loaded, origin, err, err_size);
    if (status != OPARA_CUDA_LOAD_OK) return status;
    opara__cuda_resolve_path(&opara__cuda_driver_spec, library, loaded);
    opara__cuda_driver_bootstrap(library, &r);
    if (r.driver_version != 0 && r.driver_version < OPARA_CUDA_MIN_DRIVER_VERSION) {
        opara__cuda_appendf(err, err_size, "the CUDA driver \"%s\" is version %d.%d; opara needs %d.%d or newer", loaded,
                            r.driver_version / 1000, r.driver_version % 1000 / 10, OPARA_CUDA_MIN_DRIVER_VERSION / 1000,
                            OPARA_CUDA_MIN_DRIVER_VERSION % 1000 / 10);
        opara_dl_close(library);
        return OPARA_CUDA_LOAD_DRIVER_TOO_OLD;
    }
    status = opara__cuda_finish(&opara__cuda_driver_spec, cu, sizeof *cu, &r, loaded, err, err_size);
    if (status != OPARA_CUDA_LOAD_OK) return status;
    cu->library = library;
    opara__cuda_copy_path(cu->path, loaded);
    snprintf(cu->origin, sizeof cu->origin, "%s", origin);
    cu->driver_version = r.driver_version;
    cu->used_proc_address = r.get_proc != NULL;
    return OPARA_CUDA_LOAD_OK;
}

/* NVRTC, cuBLAS, cuDNN and CUPTI: open, then dlsym every entry point. Every table starts with
   library, path and origin. */
static opara_cuda_load_status opara__cuda_lib_load(const opara__cuda_spec* spec, void* table, size_t table_size,
                                                   void** library, char* loaded_path, char* origin, const char* path,
                                                   char* err, size_t err_size) {
    opara__cuda_resolver r;
    opara_cuda_load_status status;
    char loaded[OPARA_CUDA_PATH_MAX], found[OPARA_CUDA_ORIGIN_MAX];
    memset(table, 0, table_size);
    memset(&r, 0, sizeof r);
    opara__cuda_clear(err, err_size);
    status = opara__cuda_open(spec, path, &r.library, loaded, found, err, err_size);
    if (status != OPARA_CUDA_LOAD_OK) return status;
    opara__cuda_resolve_path(spec, r.library, loaded);
    status = opara__cuda_finish(spec, table, table_size, &r, loaded, err, err_size);
    if (status != OPARA_CUDA_LOAD_OK) return status;
    *library = r.library;
    opara__cuda_copy_path(loaded_path, loaded);
    snprintf(origin, OPARA_CUDA_ORIGIN_MAX, "%s", found);
    return OPARA_CUDA_LOAD_OK;
}

/* The directory part of path into dir (OPARA_CUDA_PATH_MAX); 0 when path has none. */
static int opara__cuda_dirname(const char* path, char* dir) {
    const char* slash = strrchr(path, '/');
#ifdef _WIN32
    const char* back = strrchr(path, '\\');
    if (back && (!slash || back > slash)) slash = back;
#endif
    if (!slash || (size_t)(slash - path) >= OPARA_CUDA_PATH_MAX) return 0;
    memcpy(dir, path, (size_t)(slash - path));
    dir[slash - path] = 0;
    if (slash == path) dir[0] = '/', dir[1] = 0;
    return 1;
}

/* NVRTC dlopens its builtins library by soname (libnvrtc-builtins.so.MAJOR.MINOR; strings in
   libnvrtc.so.13 name "libnvrtc-builtins.so.13.0"), which the system only finds on the loader
   path: NVRTC found in a pip wheel's directory would fail every compilation with
   NVRTC_ERROR_BUILTIN_OPERATION_FAILURE. Loading the builtins from NVRTC's own directory first
   makes that later dlopen return the object already loaded under the same soname (glibc matches
   loaded objects by soname; Windows by module name). A builtins file that is absent or does not
   load is left to NVRTC, whose compilation then fails and says so. */
static void opara__cuda_nvrtc_builtins(opara_cuda_nvrtc* nv) {
    char dir[OPARA_CUDA_PATH_MAX], name[64], path[OPARA_CUDA_PATH_MAX];
    int major = 0, minor = 0;
    if (nv->nvrtcVersion(&major, &minor) != OPARA_NVRTC_SUCCESS || !opara__cuda_dirname(nv->path, dir)) return;
#ifdef _WIN32
    snprintf(name, sizeof name, "nvrtc-builtins64_%d%d.dll", major, minor);
#else
    snprintf(name, sizeof name, "libnvrtc-builtins.so.%d.%d", major, minor);
#endif
    if (!opara__cuda_join(path, dir, name) || !opara__cuda_is_file(path)) return;
    nv->builtins = opara_dl_open(path, NULL, 0);
    if (nv->builtins) opara__cuda_copy_path(nv->builtins_path, path);
}

OPARA_CUDA_DEF opara_cuda_load_status opara_cuda_nvrtc_load(opara_cuda_nvrtc* nvrtc, const char* path, char* err, size_t err_size) {
    opara_cuda_load_status status;
    if (!nvrtc) return opara__cuda_invalid(opara__cuda_nvrtc_spec.what, err, err_size);
    status = opara__cuda_lib_load(&opara__cuda_nvrtc_spec, nvrtc, sizeof *nvrtc, &nvrtc->library, nvrtc->path,
                                  nvrtc->origin, path, err, err_size);
    if (status == OPARA_CUDA_LOAD_OK) opara__cuda_nvrtc_builtins(nvrtc);
    return status;
}

OPARA_CUDA_DEF opara_cuda_load_status opara_cuda_cublas_load(opara_cuda_cublas* cublas, const char* path, char* err, size_t err_size) {
    if (!cublas) return opara__cuda_invalid(opara__cuda_cublas_spec.what, err, err_size);
    return opara__cuda_lib_load(&opara__cuda_cublas_spec, cublas, sizeof *cublas, &cublas->library, cublas->path,
                                cublas->origin, path, err, err_size);
}

/* cuDNN 8 and 9 are a small libcudnn that loads its sub-libraries on first use, by soname through
   its own RUNPATH ($ORIGIN) and the loader path (cuDNN 9: libcudnn_graph/_ops/_cnn, then the
   engine libraries from libcudnn_graph; NVIDIA documents the split, not the search). A missing
   libcudnn_cnn would only show at the first convolution, as a failure far from its cause, so the
   load asks cuDNN for a convolution descriptor (it needs no GPU) and reports a refusal here. */
static opara_cuda_load_status opara__cuda_cudnn_probe(opara_cuda_cudnn* dnn, char* err, size_t err_size) {
    opara_cudnnConvolutionDescriptor_t conv = NULL;
    opara_cudnnStatus_t st = dnn->cudnnCreateConvolutionDescriptor(&conv);
    char dir[OPARA_CUDA_PATH_MAX];
    if (st == OPARA_CUDNN_STATUS_SUCCESS) {
        dnn->cudnnDestroyConvolutionDescriptor(conv);
        return OPARA_CUDA_LOAD_OK;
    }
    if (!opara__cuda_dirname(dnn->path, dir)) snprintf(dir, sizeof dir, "its directory");
    opara__cuda_appendf(err, err_size,
                        "the cuDNN library \"%s\" cannot load the sub-library of its convolutions: "
                        "cudnnCreateConvolutionDescriptor returned %s (%d); cuDNN 9 needs libcudnn_cnn.so.9, "
                        "libcudnn_ops.so.9 and libcudnn_graph.so.9 in %s or on the system loader path",
                        dnn->path, opara_cudnn_status_name(st), (int)st, dir);
    opara_dl_close(dnn->library);
    memset(dnn, 0, sizeof *dnn);
    return OPARA_CUDA_LOAD_INCOMPLETE;
}

OPARA_CUDA_DEF opara_cuda_load_status opara_cuda_cudnn_load(opara_cuda_cudnn* cudnn, const char* path, char* err, size_t err_size) {
    opara_cuda_load_status status;
    if (!cudnn) return opara__cuda_invalid(opara__cuda_cudnn_spec.what, err, err_size);
    status = opara__cuda_lib_load(&opara__cuda_cudnn_spec, cudnn, sizeof *cudnn, &cudnn->library, cudnn->path,
                                  cudnn->origin, path, err, err_size);
    return status == OPARA_CUDA_LOAD_OK ? opara__cuda_cudnn_probe(cudnn, err, err_size) : status;
}

/* ---- public: unloading ------------------------------------------------------------------------- */

static void opara__cuda_unload(void* table, size_t table_size, void* library) {
    if (library) opara_dl_close(library);
    memset(table, 0, table_size);
}

OPARA_CUDA_DEF void opara_cuda_driver_unload(opara_cuda_driver* cu) {
    if (cu) opara__cuda_unload(cu, sizeof *cu, cu->library);
}
OPARA_CUDA_DEF void opara_cuda_nvrtc_unload(opara_cuda_nvrtc* nvrtc) {
    void* builtins;
    if (!nvrtc) return;
    builtins = nvrtc->builtins; /* after NVRTC, which may hold its own reference to it */
    opara__cuda_unload(nvrtc, sizeof *nvrtc, nvrtc->library);
    if (builtins) opara_dl_close(builtins);
}
OPARA_CUDA_DEF void opara_cuda_cublas_unload(opara_cuda_cublas* cublas) {
    if (cublas) opara__cuda_unload(cublas, sizeof *cublas, cublas->library);
}
OPARA_CUDA_DEF void opara_cuda_cudnn_unload(opara_cuda_cudnn* cudnn) {
    if (cudnn) opara__cuda_unload(cudnn, sizeof *cudnn, cudnn->library);
}

/* ---- public: status names ---------------------------------------------------------------------- */

typedef struct opara__cuda_name {
    int value;
    const char* name;
} opara__cuda_name;

#define OPARA__CUDA_NAME_ITEM(name, value) {value, #name},

/* cuDNN 8 numbering (cudnn.h 8.x), named alongside the cuDNN 9 codes. */
#define OPARA__CUDNN8_STATUS_LIST(X) \
    X(CUDNN_STATUS_NOT_INITIALIZED, 1) \
    X(CUDNN_STATUS_ALLOC_FAILED, 2) \
    X(CUDNN_STATUS_BAD_PARAM, 3) \
    X(CUDNN_STATUS_INTERNAL_ERROR, 4) \
    X(CUDNN_STATUS_INVALID_VALUE, 5) \
    X(CUDNN_STATUS_ARCH_MISMATCH, 6) \
    X(CUDNN_STATUS_MAPPING_ERROR, 7) \
    X(CUDNN_STATUS_EXECUTION_FAILED, 8) \
    X(CUDNN_STATUS_NOT_SUPPORTED, 9) \
    X(CUDNN_STATUS_LICENSE_ERROR, 10) \
    X(CUDNN_STATUS_RUNTIME_PREREQUISITE_MISSING, 11) \
    X(CUDNN_STATUS_RUNTIME_IN_PROGRESS, 12) \
    X(CUDNN_STATUS_RUNTIME_FP_OVERFLOW, 13) \
    X(CUDNN_STATUS_VERSION_MISMATCH, 14)

static const opara__cuda_name opara__cuda_result_names[] = {OPARA_CUDA_RESULT_LIST(OPARA__CUDA_NAME_ITEM)};
static const opara__cuda_name opara__cuda_nvrtc_names_of_results[] = {OPARA_NVRTC_RESULT_LIST(OPARA__CUDA_NAME_ITEM)};
static const opara__cuda_name opara__cuda_cublas_status_names[] = {OPARA_CUBLAS_STATUS_LIST(OPARA__CUDA_NAME_ITEM)};
static const opara__cuda_name opara__cuda_cudnn_status_names[] = {
    OPARA_CUDNN_STATUS_LIST(OPARA__CUDA_NAME_ITEM) OPARA__CUDNN8_STATUS_LIST(OPARA__CUDA_NAME_ITEM)};

static const char* opara__cuda_lookup(const opara__cuda_name* names, size_t count, int value, const char* unknown) {
    size_t i;
    for (i = 0; i < count; ++i)
        if (names[i].value == value) return names[i].name;
    return unknown;
}

OPARA_CUDA_DEF const char* opara_cuda_result_name(opara_CUresult result) {
    return opara__cuda_lookup(opara__cuda_result_names, OPARA__CUDA_COUNT(opara__cuda_result_names), (int)result,
                              "(unknown CUresult)");
}

OPARA_CUDA_DEF const char* opara_nvrtc_result_name(opara_nvrtcResult result) {
    return opara__cuda_lookup(opara__cuda_nvrtc_names_of_results, OPARA__CUDA_COUNT(opara__cuda_nvrtc_names_of_results),
                              (int)result, "(unknown nvrtcResult)");
}

OPARA_CUDA_DEF const char* opara_cublas_status_name(opara_cublasStatus_t status) {
    return opara__cuda_lookup(opara__cuda_cublas_status_names, OPARA__CUDA_COUNT(opara__cuda_cublas_status_names),
                              (int)status, "(unknown cublasStatus_t)");
}

OPARA_CUDA_DEF const char* opara_cudnn_status_name(opara_cudnnStatus_t status) {
    return opara__cuda_lookup(opara__cuda_cudnn_status_names, OPARA__CUDA_COUNT(opara__cuda_cudnn_status_names),
                              (int)status, "(unknown cudnnStatus_t)");
}

OPARA_CUDA_DEF const char* opara_cuda_driver_result_name(const opara_cuda_driver* cu, opara_CUresult result) {
    const char* name = NULL;
    if (cu && cu->cuGetErrorName && cu->cuGetErrorName(result, &name) == OPARA_CUDA_SUCCESS && name) return name;
    return opara_cuda_result_name(result);
}

#endif /* OPARA_CUDA_IMPLEMENTATION */

/* ============================================================================================== */
/* CUPTI subset: the activity API's kernel records (CUPTI 13, cupti_activity.h)                   */
/* ============================================================================================== */
/* Loaded like the other libraries: opara_cuda_cupti_load(table, path, err, err_size), env
   OPARA_CUPTI, search list libcupti.so.13 .12 .11 libcupti.so by name, then in the directories
   (pip wheels: nvidia/cu13/lib, nvidia/cuda_cupti/lib). On Windows the DLL name carries the
   toolkit release, so give its path in OPARA_CUPTI (the list only tries cupti64.dll). CUPTI's
   buffer callbacks take no user data: a caller needs one process-wide place to deliver records to. */
#ifndef OPARA_CUDA_CUPTI_H_INCLUDED
#define OPARA_CUDA_CUPTI_H_INCLUDED

#ifdef __cplusplus
extern "C" {
#endif

#ifndef OPARA_CUPTIAPI
#  define OPARA_CUPTIAPI OPARA__CUDA_STDCALL
#endif

#define OPARA_CUPTI_RESULT_LIST(X) \
    X(CUPTI_SUCCESS, 0) \
    X(CUPTI_ERROR_INVALID_PARAMETER, 1) \
    X(CUPTI_ERROR_MAX_LIMIT_REACHED, 12) \
    X(CUPTI_ERROR_NOT_INITIALIZED, 15) \
    X(CUPTI_ERROR_NOT_COMPATIBLE, 14) \
    X(CUPTI_ERROR_UNKNOWN, 999)
typedef enum opara_CUptiResult_enum { OPARA_CUPTI_RESULT_LIST(OPARA__CUDA_ENUM_ITEM) } opara_CUptiResult;

#define OPARA_CUPTI_ACTIVITY_KIND_LIST(X) \
    X(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, 10) \
    X(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, 39)
typedef enum opara_CUpti_ActivityKind_enum { OPARA_CUPTI_ACTIVITY_KIND_LIST(OPARA__CUDA_ENUM_ITEM) } opara_CUpti_ActivityKind;

#define OPARA_CUPTI_EXTERNAL_CORRELATION_KIND_LIST(X) X(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, 3)
typedef enum opara_CUpti_ExternalCorrelationKind_enum {
    OPARA_CUPTI_EXTERNAL_CORRELATION_KIND_LIST(OPARA__CUDA_ENUM_ITEM)
} opara_CUpti_ExternalCorrelationKind;

#define OPARA_CUPTI_ACTIVITY_FLAG_FLUSH_FORCED 1

/* Every record starts with its kind (only ever read through a pointer; CUPTI's is 8-aligned). */
typedef struct opara_CUpti_Activity {
    opara_CUpti_ActivityKind kind;
} opara_CUpti_Activity;

/* CUpti_ActivityKernel10 up to and including `name`: the members opara reads. The record is
   longer (the full size is CUPTI's business: records are walked with cuptiActivityGetNextRecord). */
typedef struct opara_CUpti_ActivityKernel10 {
    opara_CUpti_ActivityKind kind;
    uint8_t cacheConfig; /* a union of one byte in cupti_activity.h */
    uint8_t sharedMemoryConfig;
    uint16_t registersPerThread;
    int partitionedGlobalCacheRequested;
    int partitionedGlobalCacheExecuted;
    uint64_t start, end, completed;
    uint32_t deviceId, contextId, streamId;
    int32_t gridX, gridY, gridZ, blockX, blockY, blockZ;
    int32_t staticSharedMemory, dynamicSharedMemory;
    uint32_t localMemoryPerThread, localMemoryTotal;
    uint32_t correlationId;
    int64_t gridId;
    const char* name;
} opara_CUpti_ActivityKernel10;

typedef struct opara_CUpti_ActivityExternalCorrelation {
    opara_CUpti_ActivityKind kind;
    opara_CUpti_ExternalCorrelationKind externalKind;
    uint64_t externalId;
    uint32_t correlationId;
    uint32_t reserved;
} opara_CUpti_ActivityExternalCorrelation;

typedef void(OPARA_CUPTIAPI* opara_CUpti_BuffersCallbackRequestFunc)(uint8_t** buffer, size_t* size, size_t* maxNumRecords);
typedef void(OPARA_CUPTIAPI* opara_CUpti_BuffersCallbackCompleteFunc)(opara_CUcontext context, uint32_t streamId,
                                                                      uint8_t* buffer, size_t size, size_t validSize);

#define OPARA_CUDA_CUPTI_FUNCS(X) \
    X(opara_CUptiResult, cuptiGetResultString, (opara_CUptiResult result, const char** str), OPARA_CUDA_REQUIRED) \
    X(opara_CUptiResult, cuptiActivityRegisterCallbacks, (opara_CUpti_BuffersCallbackRequestFunc funcBufferRequested, opara_CUpti_BuffersCallbackCompleteFunc funcBufferCompleted), OPARA_CUDA_REQUIRED) \
    X(opara_CUptiResult, cuptiActivityEnable, (opara_CUpti_ActivityKind kind), OPARA_CUDA_REQUIRED) \
    X(opara_CUptiResult, cuptiActivityDisable, (opara_CUpti_ActivityKind kind), OPARA_CUDA_REQUIRED) \
    X(opara_CUptiResult, cuptiActivityFlushAll, (uint32_t flag), OPARA_CUDA_REQUIRED) \
    X(opara_CUptiResult, cuptiActivityGetNextRecord, (uint8_t* buffer, size_t validBufferSizeBytes, opara_CUpti_Activity** record), OPARA_CUDA_REQUIRED) \
    X(opara_CUptiResult, cuptiActivityPushExternalCorrelationId, (opara_CUpti_ExternalCorrelationKind kind, uint64_t id), OPARA_CUDA_REQUIRED) \
    X(opara_CUptiResult, cuptiActivityPopExternalCorrelationId, (opara_CUpti_ExternalCorrelationKind kind, uint64_t* lastId), OPARA_CUDA_REQUIRED)

#define OPARA__CUDA_CUPTI_PFN(ret, name, params, req) typedef ret(OPARA_CUPTIAPI* opara_PFN_##name) params;
OPARA_CUDA_CUPTI_FUNCS(OPARA__CUDA_CUPTI_PFN)

typedef struct opara_cuda_cupti {
    void* library;
    char path[OPARA_CUDA_PATH_MAX];
    char origin[OPARA_CUDA_ORIGIN_MAX];
    OPARA_CUDA_CUPTI_FUNCS(OPARA__CUDA_LIB_MEMBER)
} opara_cuda_cupti;

OPARA_CUDA_DEF opara_cuda_load_status opara_cuda_cupti_load(opara_cuda_cupti* cupti, const char* path, char* err, size_t err_size);
OPARA_CUDA_DEF void opara_cuda_cupti_unload(opara_cuda_cupti* cupti);

#ifdef __cplusplus
}
#endif

#endif /* OPARA_CUDA_CUPTI_H_INCLUDED */

#if defined(OPARA_CUDA_IMPLEMENTATION) && !defined(OPARA_CUDA_CUPTI_IMPLEMENTATION_INCLUDED)
#define OPARA_CUDA_CUPTI_IMPLEMENTATION_INCLUDED

#define OPARA__CUDA_CUPTI_ENTRY(ret, name, params, req) {#name, 0, 0, 0, 0, offsetof(opara_cuda_cupti, name), req},
static const opara__cuda_entry opara__cuda_cupti_entries[] = {OPARA_CUDA_CUPTI_FUNCS(OPARA__CUDA_CUPTI_ENTRY)};
#ifdef _WIN32
static const char* const opara__cuda_cupti_names[] = {"cupti64.dll"};
#else
static const char* const opara__cuda_cupti_names[] = {"libcupti.so.13", "libcupti.so.12", "libcupti.so.11", "libcupti.so"};
#endif
static const opara__cuda_spec opara__cuda_cupti_spec =
    OPARA__CUDA_SPEC("CUPTI", "OPARA_CUPTI", cupti, opara__cuda_cupti_wheels);

OPARA_CUDA_DEF opara_cuda_load_status opara_cuda_cupti_load(opara_cuda_cupti* cupti, const char* path, char* err, size_t err_size) {
    if (!cupti) return opara__cuda_invalid(opara__cuda_cupti_spec.what, err, err_size);
    return opara__cuda_lib_load(&opara__cuda_cupti_spec, cupti, sizeof *cupti, &cupti->library, cupti->path,
                                cupti->origin, path, err, err_size);
}

OPARA_CUDA_DEF void opara_cuda_cupti_unload(opara_cuda_cupti* cupti) {
    if (cupti) opara__cuda_unload(cupti, sizeof *cupti, cupti->library);
}

#endif /* OPARA_CUDA_CUPTI_IMPLEMENTATION_INCLUDED */
