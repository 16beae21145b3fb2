/* emu_test.h - what the emulator's tests share: the driver subset they call, loaded with dlopen from
 * OPARA_CUDA_DRIVER (a real libcuda.so.1 for `make test-gpu`) or from the emulator build directory, and
 * the sample kernels' PTX from emu_test_ptx.h (tests/cudaemu/sample.cu, unpacked with opara_ptx_pack.h).
 * Stop-gap: the types are declared here until opara_cuda.h provides them; values follow CUDA 13.0. */
#ifndef EMU_TEST_H
#define EMU_TEST_H
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu_test_ptx.h"
#include "opara_test.h"

#ifndef OPARA_EMU_LIB_DIR
#define OPARA_EMU_LIB_DIR "build/cudaemu"
#endif

typedef int tcu_result;
typedef unsigned long long tcu_devptr;
typedef struct tcu_ctx_st* tcu_ctx;
typedef struct tcu_stream_st* tcu_stream;
typedef struct tcu_event_st* tcu_event;
typedef struct tcu_module_st* tcu_module;
typedef struct tcu_func_st* tcu_func;
typedef struct tcu_graph_st* tcu_graph;
typedef struct tcu_node_st* tcu_node;
typedef struct tcu_exec_st* tcu_exec;
typedef struct tcu_edge_data { unsigned char from_port, to_port, type, reserved[5]; } tcu_edge_data;
typedef struct tcu_kernel_node_params {
    tcu_func func;
    unsigned int grid_x, grid_y, grid_z, block_x, block_y, block_z, shared;
    void** kernel_params;
    void** extra;
    void* kern;
    tcu_ctx ctx;
} tcu_kernel_node_params;
typedef struct tcu_update_info { int result; tcu_node error_node, error_from_node; } tcu_update_info;

#define TCU_LEGACY ((tcu_stream)0x1)
enum { TCU_INVALID_VALUE = 1, TCU_OUT_OF_MEMORY = 2, TCU_INVALID_IMAGE = 200, TCU_INVALID_CONTEXT = 201, TCU_INVALID_PTX = 218,
       TCU_UNSUPPORTED_PTX = 222, TCU_INVALID_HANDLE = 400, TCU_ILLEGAL_STATE = 401, TCU_NOT_FOUND = 500,
       TCU_NOT_READY = 600, TCU_ILLEGAL_ADDRESS = 700, TCU_OUT_OF_RESOURCES = 701, TCU_CONTEXT_IS_DESTROYED = 709,
       TCU_LAUNCH_FAILED = 719, TCU_NOT_PERMITTED = 800,
       TCU_CAPTURE_UNSUPPORTED = 900, TCU_CAPTURE_INVALIDATED = 901, TCU_CAPTURE_MERGE = 902,
       TCU_CAPTURE_UNMATCHED = 903, TCU_CAPTURE_UNJOINED = 904, TCU_CAPTURE_ISOLATION = 905,
       TCU_CAPTURE_IMPLICIT = 906, TCU_CAPTURED_EVENT = 907, TCU_CAPTURE_WRONG_THREAD = 908,
       TCU_EXEC_UPDATE_FAILURE = 910 };

/* field, exported symbol, return type, parameters */
#define TCU_FUNCS(X)                                                                                          \
    X(Init, cuInit, tcu_result, (unsigned int))                                                               \
    X(DriverGetVersion, cuDriverGetVersion, tcu_result, (int*))                                               \
    X(GetErrorName, cuGetErrorName, tcu_result, (tcu_result, const char**))                                   \
    X(DeviceGetCount, cuDeviceGetCount, tcu_result, (int*))                                                   \
    X(DeviceGet, cuDeviceGet, tcu_result, (int*, int))                                                        \
    X(DeviceGetName, cuDeviceGetName, tcu_result, (char*, int, int))                                          \
    X(DeviceGetAttribute, cuDeviceGetAttribute, tcu_result, (int*, int, int))                                 \
    X(PrimaryCtxRetain, cuDevicePrimaryCtxRetain, tcu_result, (tcu_ctx*, int))                                \
    X(PrimaryCtxRelease, cuDevicePrimaryCtxRelease_v2, tcu_result, (int))                                     \
    X(CtxSetCurrent, cuCtxSetCurrent, tcu_result, (tcu_ctx))                                                  \
    X(CtxGetCurrent, cuCtxGetCurrent, tcu_result, (tcu_ctx*))                                                 \
    X(CtxPushCurrent, cuCtxPushCurrent_v2, tcu_result, (tcu_ctx))                                             \
    X(CtxPopCurrent, cuCtxPopCurrent_v2, tcu_result, (tcu_ctx*))                                              \
    X(CtxCreate, cuCtxCreate_v2, tcu_result, (tcu_ctx*, unsigned int, int))                                   \
    X(CtxDestroy, cuCtxDestroy_v2, tcu_result, (tcu_ctx))                                                     \
    X(CtxSynchronize, cuCtxSynchronize, tcu_result, (void))                                                   \
    X(MemAlloc, cuMemAlloc_v2, tcu_result, (tcu_devptr*, size_t))                                             \
    X(MemFree, cuMemFree_v2, tcu_result, (tcu_devptr))                                                        \
    X(MemAllocHost, cuMemAllocHost_v2, tcu_result, (void**, size_t))                                          \
    X(MemFreeHost, cuMemFreeHost, tcu_result, (void*))                                                        \
    X(MemcpyHtoD, cuMemcpyHtoD_v2, tcu_result, (tcu_devptr, const void*, size_t))                             \
    X(MemcpyDtoH, cuMemcpyDtoH_v2, tcu_result, (void*, tcu_devptr, size_t))                                   \
    X(MemcpyHtoDAsync, cuMemcpyHtoDAsync_v2, tcu_result, (tcu_devptr, const void*, size_t, tcu_stream))       \
    X(MemcpyDtoHAsync, cuMemcpyDtoHAsync_v2, tcu_result, (void*, tcu_devptr, size_t, tcu_stream))             \
    X(MemsetD32Async, cuMemsetD32Async, tcu_result, (tcu_devptr, unsigned int, size_t, tcu_stream))           \
    X(ModuleLoadData, cuModuleLoadData, tcu_result, (tcu_module*, const void*))                               \
    X(ModuleGetFunction, cuModuleGetFunction, tcu_result, (tcu_func*, tcu_module, const char*))               \
    X(FuncGetAttribute, cuFuncGetAttribute, tcu_result, (int*, int, tcu_func))                                \
    X(FuncSetAttribute, cuFuncSetAttribute, tcu_result, (tcu_func, int, int))                                 \
    X(LaunchKernel, cuLaunchKernel, tcu_result,                                                               \
      (tcu_func, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int,          \
       unsigned int, tcu_stream, void**, void**))                                                             \
    X(LaunchHostFunc, cuLaunchHostFunc, tcu_result, (tcu_stream, void (*)(void*), void*))                     \
    X(StreamCreate, cuStreamCreate, tcu_result, (tcu_stream*, unsigned int))                                  \
    X(StreamDestroy, cuStreamDestroy_v2, tcu_result, (tcu_stream))                                            \
    X(StreamSynchronize, cuStreamSynchronize, tcu_result, (tcu_stream))                                       \
    X(StreamQuery, cuStreamQuery, tcu_result, (tcu_stream))                                                   \
    X(StreamWaitEvent, cuStreamWaitEvent, tcu_result, (tcu_stream, tcu_event, unsigned int))                  \
    X(EventCreate, cuEventCreate, tcu_result, (tcu_event*, unsigned int))                                     \
    X(EventDestroy, cuEventDestroy_v2, tcu_result, (tcu_event))                                               \
    X(EventRecord, cuEventRecord, tcu_result, (tcu_event, tcu_stream))                                        \
    X(EventRecordWithFlags, cuEventRecordWithFlags, tcu_result, (tcu_event, tcu_stream, unsigned int))        \
    X(EventQuery, cuEventQuery, tcu_result, (tcu_event))                                                      \
    X(EventSynchronize, cuEventSynchronize, tcu_result, (tcu_event))                                          \
    X(EventElapsedTime, cuEventElapsedTime_v2, tcu_result, (float*, tcu_event, tcu_event))                    \
    X(StreamBeginCapture, cuStreamBeginCapture_v2, tcu_result, (tcu_stream, int))                             \
    X(StreamEndCapture, cuStreamEndCapture, tcu_result, (tcu_stream, tcu_graph*))                             \
    X(StreamIsCapturing, cuStreamIsCapturing, tcu_result, (tcu_stream, int*))                                 \
    X(StreamGetCaptureInfo, cuStreamGetCaptureInfo_v3, tcu_result,                                            \
      (tcu_stream, int*, unsigned long long*, tcu_graph*, const tcu_node**, const tcu_edge_data**, size_t*))  \
    X(ThreadExchangeStreamCaptureMode, cuThreadExchangeStreamCaptureMode, tcu_result, (int*))                 \
    X(GraphCreate, cuGraphCreate, tcu_result, (tcu_graph*, unsigned int))                                     \
    X(GraphDestroy, cuGraphDestroy, tcu_result, (tcu_graph))                                                  \
    X(GraphAddKernelNode, cuGraphAddKernelNode_v2, tcu_result,                                                \
      (tcu_node*, tcu_graph, const tcu_node*, size_t, const tcu_kernel_node_params*))                         \
    X(GraphGetNodes, cuGraphGetNodes, tcu_result, (tcu_graph, tcu_node*, size_t*))                            \
    X(GraphGetRootNodes, cuGraphGetRootNodes, tcu_result, (tcu_graph, tcu_node*, size_t*))                    \
    X(GraphGetEdges, cuGraphGetEdges_v2, tcu_result, (tcu_graph, tcu_node*, tcu_node*, tcu_edge_data*, size_t*)) \
    X(GraphNodeGetType, cuGraphNodeGetType, tcu_result, (tcu_node, int*))                                     \
    X(GraphKernelNodeGetParams, cuGraphKernelNodeGetParams_v2, tcu_result, (tcu_node, tcu_kernel_node_params*)) \
    X(GraphInstantiate, cuGraphInstantiateWithFlags, tcu_result, (tcu_exec*, tcu_graph, unsigned long long))  \
    X(GraphLaunch, cuGraphLaunch, tcu_result, (tcu_exec, tcu_stream))                                         \
    X(GraphUpload, cuGraphUpload, tcu_result, (tcu_exec, tcu_stream))                                         \
    X(GraphExecUpdate, cuGraphExecUpdate_v2, tcu_result, (tcu_exec, tcu_graph, tcu_update_info*))             \
    X(GraphExecDestroy, cuGraphExecDestroy, tcu_result, (tcu_exec))                                           \
    X(GetProcAddress, cuGetProcAddress_v2, tcu_result, (const char*, void**, int, unsigned long long, int*))

#define TCU_FIELD(field, sym, ret, params) ret(*field) params;
typedef struct tcu_driver {
    TCU_FUNCS(TCU_FIELD)
    void* lib;
    /* emulator control API; NULL on a real driver (emulator-only tests skip) */
    int (*emu_config)(const char* key, long long value);
    int (*emu_config_str)(const char* key, const char* value);
    long long (*emu_stat)(const char* key);
    unsigned long long (*emu_seed)(void);
    char path[1024];
    char error[1200];
} tcu_driver;

static tcu_driver tcu_the_driver;

/* Gives the primary context back at exit (the emulator warns about contexts still held when it unloads). */
static inline void tcu_release_at_exit(void) {
    if (tcu_the_driver.PrimaryCtxRelease) tcu_the_driver.PrimaryCtxRelease(0);
}

/* One driver for the whole test binary, with the primary context current. */
#define d tcu_the_driver
static inline tcu_driver* tcu_get(void) {
    static int state; /* 0 untried, 1 ready, -1 failed */
    const char* env = getenv("OPARA_CUDA_DRIVER");
    union { void* p; int (*f)(const char*, long long); } cfg;
    union { void* p; int (*f)(const char*, const char*); } cfg_str;
    union { void* p; unsigned long long (*f)(void); } seed;
    union { void* p; long long (*f)(const char*); } stat;
    tcu_ctx ctx;
    if (state) return state > 0 ? &d : NULL;
    state = -1;
    snprintf(d.path, sizeof d.path, "%s", env && *env ? env : OPARA_EMU_LIB_DIR "/libcuda.so.1");
    d.lib = dlopen(d.path, RTLD_NOW | RTLD_GLOBAL);
    if (!d.lib) {
        snprintf(d.error, sizeof d.error, "cannot load %s: %s", d.path, dlerror());
        return NULL;
    }
#define TCU_LOAD(field, sym, ret, params)                                                                      \
    {                                                                                                         \
        union { void* p; ret(*f) params; } u;                                                                 \
        u.p = dlsym(d.lib, #sym);                                                                             \
        d.field = u.f;                                                                                        \
        if (!u.p) {                                                                                           \
            snprintf(d.error, sizeof d.error, "%s lacks %s", d.path, #sym);                                   \
            return NULL;                                                                                      \
        }                                                                                                     \
    }
    TCU_FUNCS(TCU_LOAD)
#undef TCU_LOAD
    cfg.p = dlsym(d.lib, "opara_emu_config");
    cfg_str.p = dlsym(d.lib, "opara_emu_config_str");
    seed.p = dlsym(d.lib, "opara_emu_seed");
    stat.p = dlsym(d.lib, "opara_emu_stat");
    d.emu_config = cfg.f;
    d.emu_config_str = cfg_str.f;
    d.emu_seed = seed.f;
    d.emu_stat = stat.f;
    if (d.Init(0) != 0 || d.PrimaryCtxRetain(&ctx, 0) != 0 || d.CtxSetCurrent(ctx) != 0) {
        snprintf(d.error, sizeof d.error, "%s: cuInit or the primary context failed", d.path);
        return NULL;
    }
    atexit(tcu_release_at_exit);
    state = 1;
    return &d;
}
#undef d

#define TCU_REQUIRE_DRIVER(d)                                                                                  \
    tcu_driver* d = tcu_get();                                                                                \
    if (!d) SKIP("no CUDA driver: %s", tcu_the_driver.error);                                               \
    if (d->emu_seed) OT_LOG("OPARA_EMU_SEED=%llu", d->emu_seed())

#define TCU_REQUIRE_EMULATOR(d)                                                                                \
    TCU_REQUIRE_DRIVER(d);                                                                                    \
    if (!d->emu_config) SKIP("emulator-only check (fault injection or emulator diagnostics)")

/* The module of the tests' own sample kernels (tests/cudaemu/sample.cu, PTX packed in emu_test_ptx.h). */
static inline tcu_module tcu_sample_module(tcu_driver* d) {
    static tcu_module m;
    size_t i;
    if (m) return m;
    for (i = 0; i < sizeof emu_test_kernel_images / sizeof emu_test_kernel_images[0]; i++) {
        const opara__kernel_image* img = &emu_test_kernel_images[i];
        char* ptx;
        if (strcmp(img->file, "sample") != 0) continue;
        ptx = (char*)malloc(img->ptx_size + 1);
        if (ptx && opara__ptx_unpack(img->packed, img->packed_size, ptx, img->ptx_size, NULL) == OPARA__PTX_UNPACKED) {
            ptx[img->ptx_size] = 0;
            if (d->ModuleLoadData(&m, ptx) != 0) m = NULL;
        }
        free(ptx);
    }
    return m;
}

/* Path of a library for the tests: its environment variable, else the emulator's fake; on a real GPU
 * (OPARA_CUDA_DRIVER set) NULL, i.e. opara_cuda.h's search list finds NVIDIA's. */
static inline const char* tcu_lib_path(const char* env_var, const char* fake_name, char* buf, size_t size) {
    const char* env = getenv(env_var);
    const char* drv = getenv("OPARA_CUDA_DRIVER");
    if (env && *env) return env;
    if (drv && *drv) return NULL;
    snprintf(buf, size, "%s/%s", OPARA_EMU_LIB_DIR, fake_name);
    return buf;
}

/* Index of the first element of got further than tol * (1 + |ref|) from ref (NaN counts), or n. */
static inline size_t tcu_first_mismatch(const double* ref, const float* got, size_t n, double tol) {
    size_t i;
    for (i = 0; i < n; i++) {
        double diff = ref[i] - (double)got[i], lim = tol * (1.0 + (ref[i] < 0 ? -ref[i] : ref[i]));
        if (!(diff <= lim && -diff <= lim)) return i;
    }
    return n;
}

/* Deterministic test data in [-1, 1). */
static inline void tcu_fill(float* p, size_t n, unsigned int seed) {
    size_t i;
    for (i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        p[i] = (float)((seed >> 8) & 0xffff) / 32768.0f - 1.0f;
    }
}

#endif
