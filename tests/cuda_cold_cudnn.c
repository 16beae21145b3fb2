/* A cuDNN with a first-call cost, for tests/test_cuda_profile.c: every function of opara_cuda.h's
   cuDNN table forwards to a real cuDNN (OPARA_COLD_CUDNN_REAL: a path, default the emulator's of this
   build), except that the first convolution on a handle made by cudnnCreate sleeps (50 ms unless
   opara_cold_configure says otherwise) before forwarding. That is where NVIDIA's libraries pay their
   first-use costs (loading and JIT-compiling the kernels of an algorithm, heuristics caches): on the
   host, inside the first call of a handle, while the stream waits; an event pair around the call
   measures it. The profiler must keep such costs out of the per-op times it plans with.
   Built as build/cuda/libopara_cold_cudnn.so (mk/cuda_profile.mk). */
#define _GNU_SOURCE
#include "opara_cuda.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#ifndef OPARA_EMU_LIB_DIR
#define OPARA_EMU_LIB_DIR "build/cudaemu"
#endif

#define COLD_EXPORT __attribute__((visibility("default")))
#define COLD_MAX_HANDLES 256

static pthread_mutex_t cold_mu = PTHREAD_MUTEX_INITIALIZER;
static void* cold_lib;
static opara_cudnnHandle_t cold_handles[COLD_MAX_HANDLES]; /* made by cudnnCreate, no convolution yet */
static int cold_ms = 50, cold_sleeps;

/* The real library's `name` (NULL when it does not load or lacks it). */
static void* cold_sym(const char* name) {
    void* lib;
    pthread_mutex_lock(&cold_mu);
    if (!cold_lib) {
        const char* path = getenv("OPARA_COLD_CUDNN_REAL");
        cold_lib = dlopen(path && *path ? path : OPARA_EMU_LIB_DIR "/libcudnn.so", RTLD_NOW | RTLD_LOCAL);
    }
    lib = cold_lib;
    pthread_mutex_unlock(&cold_mu);
    return lib ? dlsym(lib, name) : NULL;
}

/* Test control: the first-call delay in ms, and how many first calls slept so far. */
COLD_EXPORT void opara_cold_configure(int ms) {
    pthread_mutex_lock(&cold_mu);
    cold_ms = ms;
    pthread_mutex_unlock(&cold_mu);
}

COLD_EXPORT int opara_cold_sleeps(void) {
    int n;
    pthread_mutex_lock(&cold_mu);
    n = cold_sleeps;
    pthread_mutex_unlock(&cold_mu);
    return n;
}

/* Handle bookkeeping: takes h off the cold list (1 when it was on it), then adds it when `add`. */
static int cold_take(opara_cudnnHandle_t h, int add) {
    int i, found = 0;
    pthread_mutex_lock(&cold_mu);
    for (i = 0; i < COLD_MAX_HANDLES; ++i)
        if (cold_handles[i] == h) cold_handles[i] = NULL, found = 1;
    for (i = 0; add && i < COLD_MAX_HANDLES; ++i)
        if (!cold_handles[i]) {
            cold_handles[i] = h;
            break;
        }
    pthread_mutex_unlock(&cold_mu);
    return found;
}

static void cold_first_call(opara_cudnnHandle_t h) {
    struct timespec ts;
    int ms;
    if (!cold_take(h, 0)) return;
    pthread_mutex_lock(&cold_mu);
    ms = cold_ms;
    ++cold_sleeps;
    pthread_mutex_unlock(&cold_mu);
    ts.tv_sec = ms / 1000;
    ts.tv_nsec = (long)(ms % 1000) * 1000000L;
    while (nanosleep(&ts, &ts) != 0) {
    }
}

/* FWD(return type, name, parameters, arguments, value when the real library lacks the function) */
#define FWD(ret, name, params, args, fail) \
    COLD_EXPORT ret name params { \
        opara_PFN_##name real_; \
        *(void**)(&real_) = cold_sym(#name); \
        return real_ ? real_ args : fail; \
    }
#define NOINIT OPARA_CUDNN_STATUS_NOT_INITIALIZED

FWD(size_t, cudnnGetVersion, (void), (), 0)
FWD(const char*, cudnnGetErrorString, (opara_cudnnStatus_t s), (s), "real cuDNN not loaded")
FWD(opara_cudnnStatus_t, cudnnSetStream, (opara_cudnnHandle_t h, opara_CUstream s), (h, s), NOINIT)
FWD(opara_cudnnStatus_t, cudnnCreateTensorDescriptor, (opara_cudnnTensorDescriptor_t* d), (d), NOINIT)
FWD(opara_cudnnStatus_t, cudnnDestroyTensorDescriptor, (opara_cudnnTensorDescriptor_t d), (d), NOINIT)
FWD(opara_cudnnStatus_t, cudnnSetTensor4dDescriptor,
    (opara_cudnnTensorDescriptor_t d, opara_cudnnTensorFormat_t f, opara_cudnnDataType_t t, int n, int c, int h, int w),
    (d, f, t, n, c, h, w), NOINIT)
FWD(opara_cudnnStatus_t, cudnnSetTensorNdDescriptor,
    (opara_cudnnTensorDescriptor_t d, opara_cudnnDataType_t t, int nb, const int* dims, const int* strides),
    (d, t, nb, dims, strides), NOINIT)
FWD(opara_cudnnStatus_t, cudnnCreateFilterDescriptor, (opara_cudnnFilterDescriptor_t* d), (d), NOINIT)
FWD(opara_cudnnStatus_t, cudnnDestroyFilterDescriptor, (opara_cudnnFilterDescriptor_t d), (d), NOINIT)
FWD(opara_cudnnStatus_t, cudnnSetFilter4dDescriptor,
    (opara_cudnnFilterDescriptor_t d, opara_cudnnDataType_t t, opara_cudnnTensorFormat_t f, int k, int c, int h, int w),
    (d, t, f, k, c, h, w), NOINIT)
FWD(opara_cudnnStatus_t, cudnnCreateConvolutionDescriptor, (opara_cudnnConvolutionDescriptor_t* d), (d), NOINIT)
FWD(opara_cudnnStatus_t, cudnnDestroyConvolutionDescriptor, (opara_cudnnConvolutionDescriptor_t d), (d), NOINIT)
FWD(opara_cudnnStatus_t, cudnnSetConvolution2dDescriptor,
    (opara_cudnnConvolutionDescriptor_t d, int ph, int pw, int u, int v, int dh, int dw, opara_cudnnConvolutionMode_t m,
     opara_cudnnDataType_t t),
    (d, ph, pw, u, v, dh, dw, m, t), NOINIT)
FWD(opara_cudnnStatus_t, cudnnSetConvolutionGroupCount, (opara_cudnnConvolutionDescriptor_t d, int g), (d, g), NOINIT)
FWD(opara_cudnnStatus_t, cudnnSetConvolutionMathType, (opara_cudnnConvolutionDescriptor_t d, opara_cudnnMathType_t m),
    (d, m), NOINIT)
FWD(opara_cudnnStatus_t, cudnnGetConvolution2dForwardOutputDim,
    (opara_cudnnConvolutionDescriptor_t d, opara_cudnnTensorDescriptor_t x, opara_cudnnFilterDescriptor_t w, int* n, int* c,
     int* h, int* wd),
    (d, x, w, n, c, h, wd), NOINIT)
FWD(opara_cudnnStatus_t, cudnnGetConvolutionForwardAlgorithm_v7,
    (opara_cudnnHandle_t h, opara_cudnnTensorDescriptor_t x, opara_cudnnFilterDescriptor_t w,
     opara_cudnnConvolutionDescriptor_t c, opara_cudnnTensorDescriptor_t y, int req, int* ret,
     opara_cudnnConvolutionFwdAlgoPerf_t* perf),
    (h, x, w, c, y, req, ret, perf), NOINIT)
FWD(opara_cudnnStatus_t, cudnnGetConvolutionForwardWorkspaceSize,
    (opara_cudnnHandle_t h, opara_cudnnTensorDescriptor_t x, opara_cudnnFilterDescriptor_t w,
     opara_cudnnConvolutionDescriptor_t c, opara_cudnnTensorDescriptor_t y, opara_cudnnConvolutionFwdAlgo_t a, size_t* size),
    (h, x, w, c, y, a, size), NOINIT)
FWD(opara_cudnnStatus_t, cudnnCreateActivationDescriptor, (opara_cudnnActivationDescriptor_t* d), (d), NOINIT)
FWD(opara_cudnnStatus_t, cudnnDestroyActivationDescriptor, (opara_cudnnActivationDescriptor_t d), (d), NOINIT)
FWD(opara_cudnnStatus_t, cudnnSetActivationDescriptor,
    (opara_cudnnActivationDescriptor_t d, opara_cudnnActivationMode_t m, opara_cudnnNanPropagation_t n, double coef),
    (d, m, n, coef), NOINIT)
FWD(opara_cudnnStatus_t, cudnnAddTensor,
    (opara_cudnnHandle_t h, const void* alpha, opara_cudnnTensorDescriptor_t a, const void* A, const void* beta,
     opara_cudnnTensorDescriptor_t c, void* C),
    (h, alpha, a, A, beta, c, C), NOINIT)

/* cudnnCreate marks the new handle cold; the convolutions pay on its first call. */
COLD_EXPORT opara_cudnnStatus_t cudnnCreate(opara_cudnnHandle_t* handle) {
    opara_PFN_cudnnCreate f;
    opara_cudnnStatus_t st;
    *(void**)(&f) = cold_sym("cudnnCreate");
    if (!f) return NOINIT;
    st = f(handle);
    if (st == OPARA_CUDNN_STATUS_SUCCESS) cold_take(*handle, 1);
    return st;
}

COLD_EXPORT opara_cudnnStatus_t cudnnDestroy(opara_cudnnHandle_t handle) {
    opara_PFN_cudnnDestroy f;
    *(void**)(&f) = cold_sym("cudnnDestroy");
    if (!f) return NOINIT;
    cold_take(handle, 0);
    return f(handle);
}

COLD_EXPORT opara_cudnnStatus_t cudnnConvolutionForward(opara_cudnnHandle_t h, const void* alpha, opara_cudnnTensorDescriptor_t xd,
                                                        const void* x, opara_cudnnFilterDescriptor_t wd, const void* w,
                                                        opara_cudnnConvolutionDescriptor_t cd, opara_cudnnConvolutionFwdAlgo_t algo,
                                                        void* ws, size_t ws_bytes, const void* beta,
                                                        opara_cudnnTensorDescriptor_t yd, void* y) {
    opara_PFN_cudnnConvolutionForward f;
    *(void**)(&f) = cold_sym("cudnnConvolutionForward");
    if (!f) return NOINIT;
    cold_first_call(h);
    return f(h, alpha, xd, x, wd, w, cd, algo, ws, ws_bytes, beta, yd, y);
}

COLD_EXPORT opara_cudnnStatus_t cudnnConvolutionBiasActivationForward(
    opara_cudnnHandle_t h, const void* alpha1, opara_cudnnTensorDescriptor_t xd, const void* x, opara_cudnnFilterDescriptor_t wd,
    const void* w, opara_cudnnConvolutionDescriptor_t cd, opara_cudnnConvolutionFwdAlgo_t algo, void* ws, size_t ws_bytes,
    const void* alpha2, opara_cudnnTensorDescriptor_t zd, const void* z, opara_cudnnTensorDescriptor_t bd, const void* bias,
    opara_cudnnActivationDescriptor_t ad, opara_cudnnTensorDescriptor_t yd, void* y) {
    opara_PFN_cudnnConvolutionBiasActivationForward f;
    *(void**)(&f) = cold_sym("cudnnConvolutionBiasActivationForward");
    if (!f) return NOINIT;
    cold_first_call(h);
    return f(h, alpha1, xd, x, wd, w, cd, algo, ws, ws_bytes, alpha2, zd, z, bd, bias, ad, yd, y);
}

/* Every function of the table is defined here with the table's prototype: a function added to
   OPARA_CUDA_CUDNN_FUNCS without a forwarder above is a compile error in this list. */
#define COLD_CHECK(ret, name, params, req) \
    { \
        opara_PFN_##name f = name; \
        (void)f; \
    }
COLD_EXPORT void opara_cold_check_table(void);
COLD_EXPORT void opara_cold_check_table(void) { OPARA_CUDA_CUDNN_FUNCS(COLD_CHECK) }
