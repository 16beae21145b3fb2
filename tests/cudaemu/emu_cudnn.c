/* emu_cudnn.c - the cuDNN fake's main library (build/cudaemu/libcudnn.so, soname libcudnn.so.9): every function of
 * opara_cuda.h's cuDNN table with cuDNN 9's legacy-API semantics for what opara uses. Like cuDNN 9's shim it
 * holds the handle, tensor, filter and activation functions and cudnnAddTensor itself and loads the
 * convolution functions from a sub-library, libcudnn_cnn.so.9 (emu_cudnn_cnn.c), at the first call of one of
 * them (see cnn() below). Descriptor calls follow the real library's checks (tests/cudaemu/test_emu_dnn.c runs
 * the same calls against NVIDIA's libcudnn.so.9 and compares). Execution is fp32 NCHW (any tensor strides,
 * NCHW filters), queued on the handle's stream as emulator kernels (captured like kernel launches,
 * cuda-semantics.md A17).
 * [EMU] choices: the per-algorithm support rules and workspace sizes are plausible, not NVIDIA's (DIRECT is
 * never supported, as in cuDNN; FFT needs unit stride and dilation; WINOGRAD a 3x3 filter ...); a workspace
 * smaller than the algorithm's size gives CUDNN_STATUS_BAD_PARAM.
 * Execution calls check what a GPU would only show as corrupted memory: every tensor, the filter, the bias
 * and the workspace must lie inside live device allocations over the whole extent their descriptors
 * describe (first and last byte), else CUDNN_STATUS_BAD_PARAM with a report.
 * opara_emu_cudnn_calls(name) counts the successful execution calls per function (tests prove a
 * convolution really went through cuDNN). */
#include <dlfcn.h>

#include "emu_cudnn.h"

static emu_lib_registry handles = {PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0};
static int loaded; /* the first execution call in the process "loads the kernels" (emu_lib_first_use) */
static emu_lib_registry tensors = {PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0};
static emu_lib_registry filters = {PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0};
static emu_lib_registry acts = {PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0};

/* Every listed function exists (link-time check); opara's loader looks them up by name. */
static void (*const exports[])(void) __attribute__((used)) = {OPARA_CUDA_CUDNN_FUNCS(EMU_LIB_ADDRESS)};

/* ---------------------------------------------------------------- call counters */

static const char* const count_names[COUNT_N] = {"cudnnConvolutionForward", "cudnnConvolutionBiasActivationForward",
                                                 "cudnnAddTensor"};
static long long counts[COUNT_N];

static void count(int which) { __atomic_fetch_add(&counts[which], 1, __ATOMIC_RELAXED); }

/* Successful calls of the named execution function since the library was loaded; -1 for other names. */
EMU_LIB_API long long opara_emu_cudnn_calls(const char* name) {
    int i;
    for (i = 0; i < COUNT_N; i++)
        if (name && strcmp(name, count_names[i]) == 0) return __atomic_load_n(&counts[i], __ATOMIC_RELAXED);
    return -1;
}

/* ---------------------------------------------------------------- library, handles */

size_t cudnnGetVersion(void) { return CUDNN_EMU_VERSION; }

const char* cudnnGetErrorString(opara_cudnnStatus_t status) {
    switch (status) {
#define NAME_CASE(name, value) \
    case OPARA_##name: return #name;
        OPARA_CUDNN_STATUS_LIST(NAME_CASE)
#undef NAME_CASE
    }
    return "CUDNN_UNKNOWN_STATUS";
}

opara_cudnnStatus_t cudnnCreate(opara_cudnnHandle_t* handle) {
    opara_cudnnHandle_t h;
    opara_CUcontext ctx = NULL;
    if (!handle) return BAD;
    if (cuCtxGetCurrent(&ctx) != OPARA_CUDA_SUCCESS || !ctx) return OPARA_CUDNN_STATUS_NOT_INITIALIZED;
    h = (opara_cudnnHandle_t)calloc(1, sizeof(*h));
    if (!h) return OPARA_CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
    h->cc = emu_lib_compute_capability();
    h->ctx = ctx;
    /* device memory, as the real handle owns: an unsafe call during capture, like cudnnCreate is */
    if (cuMemAlloc_v2(&h->state, 256) != OPARA_CUDA_SUCCESS || !emu_lib_registry_add(&handles, h)) {
        if (h->state) cuMemFree_v2(h->state);
        free(h);
        return OPARA_CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED;
    }
    *handle = h;
    return OK;
}

opara_cudnnStatus_t cudnnDestroy(opara_cudnnHandle_t handle) {
    if (!handle) return OK;
    if (!emu_lib_registry_has(&handles, handle)) return BAD;
    /* [EMU] frees device memory: the handle's context must be current (the handle stays valid otherwise) */
    if (!emu_lib_context_ok("cuDNN", "cudnnDestroy", handle->ctx)) return OPARA_CUDNN_STATUS_INTERNAL_ERROR;
    if (!emu_lib_registry_remove(&handles, handle)) return BAD;
    cuMemFree_v2(handle->state);
    if (handle->setup) cuMemFree_v2(handle->setup);
    free(handle);
    return OK;
}

opara_cudnnStatus_t cudnnSetStream(opara_cudnnHandle_t handle, opara_CUstream streamId) {
    if (!emu_lib_registry_has(&handles, handle)) return BAD;
    handle->stream = streamId;
    return OK;
}

/* ---------------------------------------------------------------- descriptors */

opara_cudnnStatus_t cudnnCreateTensorDescriptor(opara_cudnnTensorDescriptor_t* tensorDesc) {
    void* p = NULL;
    opara_cudnnStatus_t st = create(&tensors, &p, sizeof(struct opara_cudnnTensorStruct));
    if (st == OK) *tensorDesc = (opara_cudnnTensorDescriptor_t)p;
    return st;
}

opara_cudnnStatus_t cudnnDestroyTensorDescriptor(opara_cudnnTensorDescriptor_t tensorDesc) {
    return destroy(&tensors, tensorDesc);
}

/* Common checks of a dimension list: positive sizes, and an element count that fits in an int. */
static opara_cudnnStatus_t check_dims(int nb, const int* dims) {
    long long count = 1;
    int i;
    for (i = 0; i < nb; i++) {
        if (dims[i] <= 0) return BAD;
        count *= dims[i];
        if (count > INT_MAX) return OPARA_CUDNN_STATUS_NOT_SUPPORTED;
    }
    return OK;
}

opara_cudnnStatus_t cudnnSetTensor4dDescriptor(opara_cudnnTensorDescriptor_t tensorDesc,
                                               opara_cudnnTensorFormat_t format, opara_cudnnDataType_t dataType, int n,
                                               int c, int h, int w) {
    int dims[4], st;
    if (!emu_lib_registry_has(&tensors, tensorDesc)) return BAD;
    if (!valid_type(dataType)) return BAD;
    if (format != OPARA_CUDNN_TENSOR_NCHW && format != OPARA_CUDNN_TENSOR_NHWC) return BAD; /* VECT_C: int8 only */
    dims[0] = n;
    dims[1] = c;
    dims[2] = h;
    dims[3] = w;
    if ((st = check_dims(4, dims)) != OK) return (opara_cudnnStatus_t)st;
    tensorDesc->set = 1;
    tensorDesc->nb = 4;
    tensorDesc->type = dataType;
    memcpy(tensorDesc->dims, dims, sizeof dims);
    if (format == OPARA_CUDNN_TENSOR_NCHW) {
        tensorDesc->strides[3] = 1;
        tensorDesc->strides[2] = w;
        tensorDesc->strides[1] = h * w;
        tensorDesc->strides[0] = c * h * w;
    } else {
        tensorDesc->strides[1] = 1;
        tensorDesc->strides[3] = c;
        tensorDesc->strides[2] = w * c;
        tensorDesc->strides[0] = h * w * c;
    }
    return OK;
}

opara_cudnnStatus_t cudnnSetTensorNdDescriptor(opara_cudnnTensorDescriptor_t tensorDesc,
                                               opara_cudnnDataType_t dataType, int nbDims, const int* dimA,
                                               const int* strideA) {
    int i, st;
    if (!emu_lib_registry_has(&tensors, tensorDesc)) return BAD;
    if (!valid_type(dataType) || nbDims < 2) return BAD;
    if (nbDims > DIM_MAX) return OPARA_CUDNN_STATUS_NOT_SUPPORTED;
    if (!dimA || !strideA) return OPARA_CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    if ((st = check_dims(nbDims, dimA)) != OK) return (opara_cudnnStatus_t)st;
    for (i = 0; i < nbDims; i++)
        if (strideA[i] == 0) return BAD; /* the real library accepts negative strides, but not zero */
    tensorDesc->set = 1;
    tensorDesc->nb = nbDims;
    tensorDesc->type = dataType;
    memcpy(tensorDesc->dims, dimA, sizeof(int) * (size_t)nbDims);
    memcpy(tensorDesc->strides, strideA, sizeof(int) * (size_t)nbDims);
    return OK;
}

opara_cudnnStatus_t cudnnCreateFilterDescriptor(opara_cudnnFilterDescriptor_t* filterDesc) {
    void* p = NULL;
    opara_cudnnStatus_t st = create(&filters, &p, sizeof(struct opara_cudnnFilterStruct));
    if (st == OK) *filterDesc = (opara_cudnnFilterDescriptor_t)p;
    return st;
}

opara_cudnnStatus_t cudnnDestroyFilterDescriptor(opara_cudnnFilterDescriptor_t filterDesc) {
    return destroy(&filters, filterDesc);
}

opara_cudnnStatus_t cudnnSetFilter4dDescriptor(opara_cudnnFilterDescriptor_t filterDesc, opara_cudnnDataType_t dataType,
                                               opara_cudnnTensorFormat_t format, int k, int c, int h, int w) {
    int dims[4], st;
    if (!emu_lib_registry_has(&filters, filterDesc)) return BAD;
    if (!valid_type(dataType)) return BAD;
    if (format != OPARA_CUDNN_TENSOR_NCHW && format != OPARA_CUDNN_TENSOR_NHWC) return BAD;
    dims[0] = k;
    dims[1] = c;
    dims[2] = h;
    dims[3] = w;
    if ((st = check_dims(4, dims)) != OK) return (opara_cudnnStatus_t)st;
    filterDesc->set = 1;
    filterDesc->type = dataType;
    filterDesc->format = format;
    filterDesc->k = k;
    filterDesc->c = c;
    filterDesc->r = h;
    filterDesc->s = w;
    return OK;
}

opara_cudnnStatus_t cudnnCreateActivationDescriptor(opara_cudnnActivationDescriptor_t* activationDesc) {
    void* p = NULL;
    opara_cudnnStatus_t st = create(&acts, &p, sizeof(struct opara_cudnnActivationStruct));
    if (st == OK) *activationDesc = (opara_cudnnActivationDescriptor_t)p;
    return st;
}

opara_cudnnStatus_t cudnnDestroyActivationDescriptor(opara_cudnnActivationDescriptor_t activationDesc) {
    return destroy(&acts, activationDesc);
}

opara_cudnnStatus_t cudnnSetActivationDescriptor(opara_cudnnActivationDescriptor_t activationDesc,
                                                 opara_cudnnActivationMode_t mode, opara_cudnnNanPropagation_t reluNanOpt,
                                                 double coef) {
    if (!emu_lib_registry_has(&acts, activationDesc)) return BAD;
    if ((int)mode < (int)OPARA_CUDNN_ACTIVATION_SIGMOID || (int)mode > (int)OPARA_CUDNN_ACTIVATION_SWISH) return BAD;
    if (reluNanOpt != OPARA_CUDNN_NOT_PROPAGATE_NAN && reluNanOpt != OPARA_CUDNN_PROPAGATE_NAN) return BAD;
    activationDesc->set = 1;
    activationDesc->mode = mode;
    activationDesc->nan = reluNanOpt;
    activationDesc->coef = coef;
    return OK;
}

/* ---------------------------------------------------------------- what the sub-library may use */

static int valid_handle(opara_cudnnHandle_t h) { return emu_lib_registry_has(&handles, h); }
static int valid_tensor(opara_cudnnTensorDescriptor_t t) { return emu_lib_registry_has(&tensors, t) && t->set; }
static int valid_filter(opara_cudnnFilterDescriptor_t f) { return emu_lib_registry_has(&filters, f) && f->set; }
static int valid_activation(opara_cudnnActivationDescriptor_t a) { return emu_lib_registry_has(&acts, a) && a->set; }

/* The handle's context must be current to launch ([EMU] 5001, what cuDNN returns when a driver call fails),
 * and the handle's first call sets it up (device memory: refused inside a capture). */
static opara_cudnnStatus_t launch_context(opara_cudnnHandle_t h, const char* call) {
    if (!emu_lib_context_ok("cuDNN", call, h->ctx)) return OPARA_CUDNN_STATUS_EXECUTION_FAILED_CUDA_DRIVER;
    if (emu_lib_first_use("cuDNN", &loaded, &h->setup) != 0)
        return OPARA_CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED;
    return OK;
}

static const emu_cudnn_core core = {EMU_CUDNN_ABI, valid_handle, valid_tensor, valid_filter, valid_activation,
                                    launch_context, count};

/* ---------------------------------------------------------------- the convolution sub-library */

/* cuDNN 9's libcudnn.so.9 is a shim: at the first call of a function that lives in a sub-library it dlopens
 * that sub-library by bare name, trying libcudnn_cnn.so.9.19.0, .9.19, .9 and .so in turn, found through the
 * shim's RUNPATH $ORIGIN (its own directory), LD_LIBRARY_PATH, the loader cache and the system directories.
 * When none loads, it prints "Invalid handle. Cannot load symbol <function>" and the function returns
 * CUDNN_STATUS_NOT_SUPPORTED_SUBLIBRARY_UNAVAILABLE (3009), at every later call too without retrying
 * (observed with cuDNN 9.19 and `ld.so --inhibit-cache`, docs/TESTING-GPU.md). The fake does the same over
 * LD_LIBRARY_PATH and its own directory, opening full paths; [EMU] it skips the loader cache and the system
 * directories (they may hold NVIDIA's libcudnn_cnn.so.9) and refuses a file without its entry point. */
static pthread_mutex_t cnn_mu = PTHREAD_MUTEX_INITIALIZER;
static int cnn_state; /* 0 not tried, 1 loaded, -1 unavailable */
static void* cnn_lib;
static const emu_cudnn_cnn* cnn_table;

/* dlopens dir/name when it is the emulator's sub-library and hands it the core table. */
static int cnn_try(const char* dir, size_t dir_len, const char* name) {
    char path[4096];
    void* lib;
    union { void* p; emu_cudnn_cnn_open_fn f; } open_fn;
    if (dir_len == 0 || dir_len + strlen(name) + 2 > sizeof path) return 0;
    snprintf(path, sizeof path, "%.*s/%s", (int)dir_len, dir, name);
    if (!(lib = dlopen(path, RTLD_NOW | RTLD_LOCAL))) return 0;
    open_fn.p = dlsym(lib, EMU_CUDNN_CNN_OPEN);
    if (!open_fn.p || !(cnn_table = open_fn.f(&core))) {
        char msg[4200];
        snprintf(msg, sizeof msg, "%s is not the emulator's convolution sub-library; ignored", path);
        report(msg);
        dlclose(lib);
        return 0;
    }
    cnn_lib = lib;
    return 1;
}

static int cnn_load(void) {
    static const char* const names[4] = {"libcudnn_cnn.so.9.19.0", "libcudnn_cnn.so.9.19", "libcudnn_cnn.so.9",
                                         "libcudnn_cnn.so"};
    const char* llp = getenv("LD_LIBRARY_PATH");
    Dl_info self;
    const char* slash = NULL;
    int i;
    if (dladdr((void*)&core, &self) && self.dli_fname) slash = strrchr(self.dli_fname, '/');
    for (i = 0; i < 4; i++) {
        const char* p = llp;
        while (p && *p) {
            size_t len = strcspn(p, ":");
            if (cnn_try(p, len, names[i])) return 1;
            p += len + (p[len] == ':');
        }
        if (slash && cnn_try(self.dli_fname, (size_t)(slash - self.dli_fname), names[i])) return 1;
    }
    return 0;
}

/* The sub-library's table, loaded at the first call (NULL when it is unavailable). */
static const emu_cudnn_cnn* cnn(const char* call) {
    int state;
    pthread_mutex_lock(&cnn_mu);
    if (cnn_state == 0) {
        cnn_state = cnn_load() ? 1 : -1;
        if (cnn_state < 0) {
            char msg[300];
            snprintf(msg, sizeof msg, "cannot load the sub-library libcudnn_cnn.so.9 (searched LD_LIBRARY_PATH and this "
                                      "library's directory) for %s; convolution calls return "
                                      "CUDNN_STATUS_NOT_SUPPORTED_SUBLIBRARY_UNAVAILABLE", call);
            report(msg);
        }
    }
    state = cnn_state;
    pthread_mutex_unlock(&cnn_mu);
    return state > 0 ? cnn_table : NULL;
}

/* The sub-library goes when the main library is unloaded (its objects point into this one's state). */
__attribute__((destructor)) static void cnn_unload(void) {
    if (cnn_lib) dlclose(cnn_lib);
}

#define UNAVAILABLE OPARA_CUDNN_STATUS_NOT_SUPPORTED_SUBLIBRARY_UNAVAILABLE
#define CNN(call, args)                                                                                           \
    const emu_cudnn_cnn* t = cnn(#call);                                                                          \
    return t ? t->call args : UNAVAILABLE

opara_cudnnStatus_t cudnnCreateConvolutionDescriptor(opara_cudnnConvolutionDescriptor_t* convDesc) {
    CNN(cudnnCreateConvolutionDescriptor, (convDesc));
}

opara_cudnnStatus_t cudnnDestroyConvolutionDescriptor(opara_cudnnConvolutionDescriptor_t convDesc) {
    CNN(cudnnDestroyConvolutionDescriptor, (convDesc));
}

opara_cudnnStatus_t cudnnSetConvolution2dDescriptor(opara_cudnnConvolutionDescriptor_t convDesc, int pad_h, int pad_w,
                                                    int u, int v, int dilation_h, int dilation_w,
                                                    opara_cudnnConvolutionMode_t mode, opara_cudnnDataType_t computeType) {
    CNN(cudnnSetConvolution2dDescriptor, (convDesc, pad_h, pad_w, u, v, dilation_h, dilation_w, mode, computeType));
}

opara_cudnnStatus_t cudnnSetConvolutionGroupCount(opara_cudnnConvolutionDescriptor_t convDesc, int groupCount) {
    CNN(cudnnSetConvolutionGroupCount, (convDesc, groupCount));
}

opara_cudnnStatus_t cudnnSetConvolutionMathType(opara_cudnnConvolutionDescriptor_t convDesc,
                                                opara_cudnnMathType_t mathType) {
    CNN(cudnnSetConvolutionMathType, (convDesc, mathType));
}

opara_cudnnStatus_t cudnnGetConvolution2dForwardOutputDim(opara_cudnnConvolutionDescriptor_t convDesc,
                                                          opara_cudnnTensorDescriptor_t inputTensorDesc,
                                                          opara_cudnnFilterDescriptor_t filterDesc, int* n, int* c,
                                                          int* h, int* w) {
    CNN(cudnnGetConvolution2dForwardOutputDim, (convDesc, inputTensorDesc, filterDesc, n, c, h, w));
}

opara_cudnnStatus_t cudnnGetConvolutionForwardAlgorithm_v7(opara_cudnnHandle_t handle, opara_cudnnTensorDescriptor_t srcDesc,
                                                           opara_cudnnFilterDescriptor_t filterDesc,
                                                           opara_cudnnConvolutionDescriptor_t convDesc,
                                                           opara_cudnnTensorDescriptor_t destDesc, int requestedAlgoCount,
                                                           int* returnedAlgoCount,
                                                           opara_cudnnConvolutionFwdAlgoPerf_t* perfResults) {
    CNN(cudnnGetConvolutionForwardAlgorithm_v7,
        (handle, srcDesc, filterDesc, convDesc, destDesc, requestedAlgoCount, returnedAlgoCount, perfResults));
}

opara_cudnnStatus_t cudnnGetConvolutionForwardWorkspaceSize(opara_cudnnHandle_t handle, opara_cudnnTensorDescriptor_t xDesc,
                                                            opara_cudnnFilterDescriptor_t wDesc,
                                                            opara_cudnnConvolutionDescriptor_t convDesc,
                                                            opara_cudnnTensorDescriptor_t yDesc,
                                                            opara_cudnnConvolutionFwdAlgo_t algo, size_t* sizeInBytes) {
    CNN(cudnnGetConvolutionForwardWorkspaceSize, (handle, xDesc, wDesc, convDesc, yDesc, algo, sizeInBytes));
}

opara_cudnnStatus_t cudnnConvolutionForward(opara_cudnnHandle_t handle, const void* alpha,
                                            opara_cudnnTensorDescriptor_t xDesc, const void* x,
                                            opara_cudnnFilterDescriptor_t wDesc, const void* w,
                                            opara_cudnnConvolutionDescriptor_t convDesc,
                                            opara_cudnnConvolutionFwdAlgo_t algo, void* workSpace,
                                            size_t workSpaceSizeInBytes, const void* beta,
                                            opara_cudnnTensorDescriptor_t yDesc, void* y) {
    CNN(cudnnConvolutionForward,
        (handle, alpha, xDesc, x, wDesc, w, convDesc, algo, workSpace, workSpaceSizeInBytes, beta, yDesc, y));
}

opara_cudnnStatus_t cudnnConvolutionBiasActivationForward(
    opara_cudnnHandle_t handle, const void* alpha1, opara_cudnnTensorDescriptor_t xDesc, const void* x,
    opara_cudnnFilterDescriptor_t wDesc, const void* w, opara_cudnnConvolutionDescriptor_t convDesc,
    opara_cudnnConvolutionFwdAlgo_t algo, void* workSpace, size_t workSpaceSizeInBytes, const void* alpha2,
    opara_cudnnTensorDescriptor_t zDesc, const void* z, opara_cudnnTensorDescriptor_t biasDesc, const void* bias,
    opara_cudnnActivationDescriptor_t activationDesc, opara_cudnnTensorDescriptor_t yDesc, void* y) {
    CNN(cudnnConvolutionBiasActivationForward, (handle, alpha1, xDesc, x, wDesc, w, convDesc, algo, workSpace,
                                                workSpaceSizeInBytes, alpha2, zDesc, z, biasDesc, bias, activationDesc,
                                                yDesc, y));
}
#undef CNN

/* ---------------------------------------------------------------- add tensor */

/* cuDNN: A and C have the same rank (4 or 5); each dimension of A equals C's or is 1 (broadcast). */
static opara_cudnnStatus_t add_shape(opara_cudnnTensorDescriptor_t a, opara_cudnnTensorDescriptor_t c, int dims[5],
                                     int as[5], int cs[5]) {
    int i, off;
    if (!valid_tensor(a) || !valid_tensor(c) || a->nb != c->nb || c->nb < 4 || c->nb > 5) return BAD;
    off = 5 - c->nb;
    for (i = 0; i < 5; i++) {
        dims[i] = 1;
        as[i] = cs[i] = 0;
    }
    for (i = 0; i < c->nb; i++) {
        if (a->dims[i] != c->dims[i] && a->dims[i] != 1) return BAD;
        dims[off + i] = c->dims[i];
        cs[off + i] = c->strides[i];
        as[off + i] = a->dims[i] == 1 ? 0 : a->strides[i];
    }
    if (!all_float(a) || !all_float(c) || !nonneg_strides(a) || !nonneg_strides(c)) {
        report("cudnnAddTensor: only fp32 tensors with non-negative strides are emulated");
        return OPARA_CUDNN_STATUS_NOT_SUPPORTED;
    }
    return OK;
}

opara_cudnnStatus_t cudnnAddTensor(opara_cudnnHandle_t handle, const void* alpha, opara_cudnnTensorDescriptor_t aDesc,
                                   const void* A, const void* beta, opara_cudnnTensorDescriptor_t cDesc, void* C) {
    int dims[5], as[5], cs[5], i;
    float al, be;
    long long total = 1;
    void* args[19];
    opara_cudnnStatus_t st;
    if (!emu_lib_registry_has(&handles, handle) || !alpha || !beta || !A || !C) return BAD;
    if ((st = add_shape(aDesc, cDesc, dims, as, cs)) != OK) return st;
    if (!tensor_in_memory(aDesc, A, "cudnnAddTensor A") || !tensor_in_memory(cDesc, C, "cudnnAddTensor C")) return BAD;
    if (!emu_lib_aligned("cuDNN", "cudnnAddTensor A", A) || !emu_lib_aligned("cuDNN", "cudnnAddTensor C", C))
        return OPARA_CUDNN_STATUS_BAD_PARAM_MISALIGNED_POINTER;
    if ((st = launch_context(handle, "cudnnAddTensor")) != OK) return st;
    al = *(const float*)alpha;
    be = *(const float*)beta;
    args[0] = (void*)&A;
    args[1] = (void*)&C;
    for (i = 0; i < 5; i++) {
        args[2 + i] = &dims[i];
        args[7 + i] = &as[i];
        args[12 + i] = &cs[i];
        total *= dims[i];
    }
    args[17] = &al;
    args[18] = &be;
    if (emu_lib_launch_1d("opara_emulib_add_tensor", total, THREADS, handle->stream, args) != OPARA_CUDA_SUCCESS)
        return OPARA_CUDNN_STATUS_EXECUTION_FAILED_CUDA_DRIVER;
    count(COUNT_ADD_TENSOR);
    return OK;
}
