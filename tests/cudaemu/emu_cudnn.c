/* emu_cudnn.c - the cuDNN fake (build/cudaemu/libcudnn.so): every function of opara_cuda.h's cuDNN table with
 * cuDNN 9's legacy-API semantics for what opara uses. Descriptor calls follow the real library's checks
 * (tests/cudaemu/test_emu_dnn.c runs the same calls against NVIDIA's libcudnn.so.9 and compares). Execution is
 * fp32 NCHW (any tensor strides, NCHW filters): one convolution kernel for every algorithm, queued on the
 * handle's stream as emulator kernels (captured like kernel launches, cuda-semantics.md A17).
 * [EMU] choices: the per-algorithm support rules and workspace sizes are plausible, not NVIDIA's (DIRECT is
 * never supported, as in cuDNN; FFT needs unit stride and dilation; WINOGRAD a 3x3 filter ...); a workspace
 * smaller than the algorithm's size gives CUDNN_STATUS_BAD_PARAM.
 * Execution calls check what a GPU would only show as corrupted memory: every tensor, the filter, the bias
 * and the workspace must lie inside live device allocations over the whole extent their descriptors
 * describe (first and last byte), else CUDNN_STATUS_BAD_PARAM with a report.
 * opara_emu_cudnn_calls(name) counts the successful execution calls per function (tests prove a
 * convolution really went through cuDNN). */
#include <limits.h>

#include "emu_lib.h"

OPARA_CUDA_CUDNN_FUNCS(EMU_LIB_DECLARE)

enum { DIM_MAX = 8, CUDNN_EMU_VERSION = 91900, THREADS = 256 };

struct opara_cudnnContext {
    opara_CUcontext ctx; /* current when the handle was created */
    opara_CUstream stream;
    opara_CUdeviceptr state;
    opara_CUdeviceptr setup; /* lazily set up at the first execution call (emu_lib_first_use) */
    int cc; /* compute capability of the device (10 * major + minor) */
};
struct opara_cudnnTensorStruct {
    int set, nb;
    opara_cudnnDataType_t type;
    int dims[DIM_MAX], strides[DIM_MAX];
};
struct opara_cudnnFilterStruct {
    int set;
    opara_cudnnDataType_t type;
    opara_cudnnTensorFormat_t format;
    int k, c, r, s;
};
struct opara_cudnnConvolutionStruct {
    int set;
    int pad[2], stride[2], dil[2], groups;
    opara_cudnnConvolutionMode_t mode;
    opara_cudnnDataType_t type;
    opara_cudnnMathType_t math;
};
struct opara_cudnnActivationStruct {
    int set;
    opara_cudnnActivationMode_t mode;
    opara_cudnnNanPropagation_t nan;
    double coef;
};

static emu_lib_registry handles = {PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0};
static int loaded; /* the first execution call in the process "loads the kernels" (emu_lib_first_use) */
static emu_lib_registry tensors = {PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0};
static emu_lib_registry filters = {PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0};
static emu_lib_registry convs = {PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0};
static emu_lib_registry acts = {PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0};

/* Every listed function exists (link-time check); opara's loader looks them up by name. */
static void (*const exports[])(void) __attribute__((used)) = {OPARA_CUDA_CUDNN_FUNCS(EMU_LIB_ADDRESS)};

#define BAD OPARA_CUDNN_STATUS_BAD_PARAM
#define OK OPARA_CUDNN_STATUS_SUCCESS

static void report(const char* msg) { emu_lib_report("cuDNN", msg); }

/* ---------------------------------------------------------------- call counters */

int opara_emu_is_device_pointer(const void* p); /* the emulated driver's allocation lookup */

enum { COUNT_FORWARD, COUNT_BIAS_ACT, COUNT_ADD_TENSOR, COUNT_N };
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

static opara_cudnnStatus_t create(emu_lib_registry* r, void** out, size_t size) {
    void* p;
    if (!out) return BAD;
    if (!(p = calloc(1, size))) return OPARA_CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
    if (!emu_lib_registry_add(r, p)) {
        free(p);
        return OPARA_CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
    }
    *out = p;
    return OK;
}

static opara_cudnnStatus_t destroy(emu_lib_registry* r, void* p) {
    if (!p) return OK;
    if (!emu_lib_registry_remove(r, p)) return BAD;
    free(p);
    return OK;
}

static int valid_type(opara_cudnnDataType_t t) {
    switch (t) {
#define TYPE_CASE(name, value) case OPARA_##name:
        OPARA_CUDNN_DATA_TYPE_LIST(TYPE_CASE)
#undef TYPE_CASE
        return 1;
    }
    return 0;
}

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

opara_cudnnStatus_t cudnnCreateConvolutionDescriptor(opara_cudnnConvolutionDescriptor_t* convDesc) {
    void* p = NULL;
    opara_cudnnStatus_t st = create(&convs, &p, sizeof(struct opara_cudnnConvolutionStruct));
    if (st == OK) {
        *convDesc = (opara_cudnnConvolutionDescriptor_t)p;
        (*convDesc)->groups = 1;
    }
    return st;
}

opara_cudnnStatus_t cudnnDestroyConvolutionDescriptor(opara_cudnnConvolutionDescriptor_t convDesc) {
    return destroy(&convs, convDesc);
}

opara_cudnnStatus_t cudnnSetConvolution2dDescriptor(opara_cudnnConvolutionDescriptor_t convDesc, int pad_h, int pad_w,
                                                    int u, int v, int dilation_h, int dilation_w,
                                                    opara_cudnnConvolutionMode_t mode, opara_cudnnDataType_t computeType) {
    if (!emu_lib_registry_has(&convs, convDesc)) return BAD;
    if (pad_h < 0 || pad_w < 0 || u <= 0 || v <= 0 || dilation_h <= 0 || dilation_w <= 0) return BAD;
    if ((mode != OPARA_CUDNN_CONVOLUTION && mode != OPARA_CUDNN_CROSS_CORRELATION) || !valid_type(computeType))
        return BAD;
    convDesc->set = 1;
    convDesc->pad[0] = pad_h;
    convDesc->pad[1] = pad_w;
    convDesc->stride[0] = u;
    convDesc->stride[1] = v;
    convDesc->dil[0] = dilation_h;
    convDesc->dil[1] = dilation_w;
    convDesc->mode = mode;
    convDesc->type = computeType;
    return OK;
}

opara_cudnnStatus_t cudnnSetConvolutionGroupCount(opara_cudnnConvolutionDescriptor_t convDesc, int groupCount) {
    if (!emu_lib_registry_has(&convs, convDesc) || groupCount <= 0) return BAD;
    convDesc->groups = groupCount;
    return OK;
}

opara_cudnnStatus_t cudnnSetConvolutionMathType(opara_cudnnConvolutionDescriptor_t convDesc,
                                                opara_cudnnMathType_t mathType) {
    if (!emu_lib_registry_has(&convs, convDesc)) return BAD;
    if ((int)mathType < (int)OPARA_CUDNN_DEFAULT_MATH || (int)mathType > (int)OPARA_CUDNN_FMA_MATH) return BAD;
    convDesc->math = mathType;
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

/* ---------------------------------------------------------------- convolution geometry */

typedef struct conv_geom {
    int n, c, h, w, k, r, s, oh, ow, groups;
} conv_geom;

static int valid_tensor(opara_cudnnTensorDescriptor_t t) { return emu_lib_registry_has(&tensors, t) && t->set; }

/* What cudnnGetConvolution2dForwardOutputDim checks: set 4-d descriptors, C == filter C * groups, a positive
 * output size. */
static opara_cudnnStatus_t conv_geometry(opara_cudnnConvolutionDescriptor_t cd, opara_cudnnTensorDescriptor_t x,
                                         opara_cudnnFilterDescriptor_t f, conv_geom* g) {
    if (!emu_lib_registry_has(&convs, cd) || !valid_tensor(x) || !emu_lib_registry_has(&filters, f) || !f->set)
        return BAD;
    if (x->nb != 4 || (long long)f->c * cd->groups != x->dims[1]) return BAD;
    g->n = x->dims[0];
    g->c = x->dims[1];
    g->h = x->dims[2];
    g->w = x->dims[3];
    g->k = f->k;
    g->r = f->r;
    g->s = f->s;
    g->groups = cd->groups;
    g->oh = (g->h + 2 * cd->pad[0] - ((g->r - 1) * cd->dil[0] + 1)) / cd->stride[0] + 1;
    g->ow = (g->w + 2 * cd->pad[1] - ((g->s - 1) * cd->dil[1] + 1)) / cd->stride[1] + 1;
    if (g->h + 2 * cd->pad[0] < (g->r - 1) * cd->dil[0] + 1 || g->w + 2 * cd->pad[1] < (g->s - 1) * cd->dil[1] + 1)
        return BAD;
    if (g->oh <= 0 || g->ow <= 0) return BAD;
    return OK;
}

opara_cudnnStatus_t cudnnGetConvolution2dForwardOutputDim(opara_cudnnConvolutionDescriptor_t convDesc,
                                                          opara_cudnnTensorDescriptor_t inputTensorDesc,
                                                          opara_cudnnFilterDescriptor_t filterDesc, int* n, int* c,
                                                          int* h, int* w) {
    conv_geom g;
    opara_cudnnStatus_t st = conv_geometry(convDesc, inputTensorDesc, filterDesc, &g);
    if (st != OK) return st;
    if (!n || !c || !h || !w) return OPARA_CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    *n = g.n;
    *c = g.k;
    *h = g.oh;
    *w = g.ow;
    return OK;
}

/* The full check of a forward convolution: geometry, y's shape, K divisible by the groups. */
static opara_cudnnStatus_t conv_check(opara_cudnnConvolutionDescriptor_t cd, opara_cudnnTensorDescriptor_t x,
                                      opara_cudnnFilterDescriptor_t f, opara_cudnnTensorDescriptor_t y, conv_geom* g) {
    opara_cudnnStatus_t st = conv_geometry(cd, x, f, g);
    if (st != OK) return st;
    if (!valid_tensor(y) || y->nb != 4) return BAD;
    if (y->dims[0] != g->n || y->dims[1] != g->k || y->dims[2] != g->oh || y->dims[3] != g->ow) return BAD;
    if (g->k % g->groups != 0) return BAD;
    return OK;
}

static int is_unit(const int v[2]) { return v[0] == 1 && v[1] == 1; }

static int algo_supported(opara_cudnnConvolutionDescriptor_t cd, const conv_geom* g, opara_cudnnConvolutionFwdAlgo_t a) {
    int plain = g->groups == 1 && is_unit(cd->stride) && is_unit(cd->dil);
    switch (a) {
    case OPARA_CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM:
    case OPARA_CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM:
    case OPARA_CUDNN_CONVOLUTION_FWD_ALGO_GEMM: return 1;
    case OPARA_CUDNN_CONVOLUTION_FWD_ALGO_FFT:
    case OPARA_CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING: return plain && cd->pad[0] < g->r && cd->pad[1] < g->s;
    case OPARA_CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD: return plain && g->r == 3 && g->s == 3;
    case OPARA_CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED: return plain && g->r == g->s && (g->r == 3 || g->r == 5);
    default: return 0; /* DIRECT is not implemented in cuDNN either */
    }
}

static unsigned long long next_pow2(unsigned long long v) {
    unsigned long long p = 1;
    while (p < v) p <<= 1;
    return p;
}

/* [EMU] The algorithms that transform the filter into the workspace with a kernel of their own before the
 * convolution kernel (which then reads the transformed filter there): the workspace-based GEMM, FFT and
 * non-fused Winograd methods. A call with one of them is two kernels (two nodes when captured). */
static int transform_algo(opara_cudnnConvolutionFwdAlgo_t a) {
    return a == OPARA_CUDNN_CONVOLUTION_FWD_ALGO_GEMM || a == OPARA_CUDNN_CONVOLUTION_FWD_ALGO_FFT ||
           a == OPARA_CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING || a == OPARA_CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED;
}

/* Bytes of the transformed filter at the start of the workspace (256-byte aligned, so what follows is too). */
static size_t filter_bytes(const conv_geom* g) {
    unsigned long long b = (unsigned long long)g->k * (unsigned long long)(g->c / g->groups) * g->r * g->s * 4;
    return (size_t)((b + 255) / 256 * 256);
}

static size_t algo_method_workspace(opara_cudnnConvolutionDescriptor_t cd, const conv_geom* g,
                                    opara_cudnnConvolutionFwdAlgo_t a);

/* Plausible workspace bytes per algorithm (an [EMU] model of what each method stores): the transformed filter
 * (transform_algo) plus the method's own buffers. */
static size_t algo_workspace(opara_cudnnConvolutionDescriptor_t cd, const conv_geom* g, opara_cudnnConvolutionFwdAlgo_t a) {
    return (transform_algo(a) ? filter_bytes(g) : 0) + algo_method_workspace(cd, g, a);
}

static size_t algo_method_workspace(opara_cudnnConvolutionDescriptor_t cd, const conv_geom* g,
                                    opara_cudnnConvolutionFwdAlgo_t a) {
    unsigned long long cpg = (unsigned long long)(g->c / g->groups), taps = cpg * (unsigned long long)g->r * g->s;
    unsigned long long out = (unsigned long long)g->oh * g->ow, n = (unsigned long long)g->n;
    unsigned long long planes = n * g->c + (unsigned long long)g->k * g->c + n * g->k, tiles = (out + 3) / 4;
    unsigned long long fh = next_pow2((unsigned long long)g->h + 2 * cd->pad[0]);
    unsigned long long fw = next_pow2((unsigned long long)g->w + 2 * cd->pad[1]);
    switch (a) {
    case OPARA_CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM: return (size_t)((taps * 4 + 255) / 256 * 256);
    case OPARA_CUDNN_CONVOLUTION_FWD_ALGO_GEMM: return (size_t)(taps * out * 4);
    case OPARA_CUDNN_CONVOLUTION_FWD_ALGO_FFT: return (size_t)(planes * fh * (fw / 2 + 1) * 8);
    case OPARA_CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING: return (size_t)(planes * 32 * 17 * 8);
    case OPARA_CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD: return (size_t)((unsigned long long)g->k * g->c * 16 * 4);
    case OPARA_CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED:
        return (size_t)(((unsigned long long)g->k * g->c + n * (g->c + g->k) * tiles) * 36 * 4);
    default: return 0;
    }
}

static opara_cudnnStatus_t workspace_for(opara_cudnnConvolutionDescriptor_t cd, const conv_geom* g,
                                         opara_cudnnConvolutionFwdAlgo_t algo, size_t* bytes) {
    if ((int)algo < 0 || (int)algo >= (int)OPARA_CUDNN_CONVOLUTION_FWD_ALGO_COUNT) return BAD;
    if (!algo_supported(cd, g, algo)) return OPARA_CUDNN_STATUS_NOT_SUPPORTED;
    *bytes = algo_workspace(cd, g, algo);
    return OK;
}

/* The precision a forward algorithm gives its x and w operands (cudnnMathType_t, cudnn_graph.h and the cuDNN
 * API reference): "with NVIDIA Ampere architecture, CUDNN_DEFAULT_MATH permits TF32 Tensor Core operation and
 * CUDNN_FMA_MATH does not"; TENSOR_OP_MATH(_ALLOW_CONVERSION) permit tensor cores too; NVIDIA_TF32_OVERRIDE=0
 * turns TF32 off. Before Ampere FP32 data stays FP32, except that ALLOW_CONVERSION lets cuDNN convert FP32 to
 * FP16 for the tensor cores (7.0+; the legacy API's "FP32-to-FP16 conversion").
 * [EMU] Which algorithms have tensor-core kernels: the GEMM-like ones (IMPLICIT_GEMM, IMPLICIT_PRECOMP_GEMM,
 * GEMM) and WINOGRAD_NONFUSED (the legacy API lists IMPLICIT_PRECOMP_GEMM and WINOGRAD_NONFUSED); FFT,
 * FFT_TILING and the fused WINOGRAD compute in FP32. [EMU] ALLOW_CONVERSION on 8.0+ gives TF32, not FP16. */
static int tensor_core_algo(opara_cudnnConvolutionFwdAlgo_t a) {
    return a == OPARA_CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM || a == OPARA_CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM ||
           a == OPARA_CUDNN_CONVOLUTION_FWD_ALGO_GEMM || a == OPARA_CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED;
}

static int conv_rounding(opara_cudnnHandle_t h, opara_cudnnConvolutionDescriptor_t cd, opara_cudnnConvolutionFwdAlgo_t a) {
    if (cd->math == OPARA_CUDNN_FMA_MATH || !tensor_core_algo(a)) return EMU_ROUND_NONE;
    if (h->cc >= 80) return emu_lib_tf32(h->cc);
    return cd->math == OPARA_CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION && h->cc >= 70 ? EMU_ROUND_FP16 : EMU_ROUND_NONE;
}

/* The math type an algorithm's perf result reports: what it would really use [EMU]: TENSOR_OP_MATH for TF32,
 * TENSOR_OP_MATH_ALLOW_CONVERSION for FP16 conversion, FMA_MATH for FP32 arithmetic. */
static opara_cudnnMathType_t conv_math_used(opara_cudnnHandle_t h, opara_cudnnConvolutionDescriptor_t cd,
                                            opara_cudnnConvolutionFwdAlgo_t a) {
    switch (conv_rounding(h, cd, a)) {
    case EMU_ROUND_TF32: return OPARA_CUDNN_TENSOR_OP_MATH;
    case EMU_ROUND_FP16: return OPARA_CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION;
    default: return OPARA_CUDNN_FMA_MATH;
    }
}

opara_cudnnStatus_t cudnnGetConvolutionForwardWorkspaceSize(opara_cudnnHandle_t handle, opara_cudnnTensorDescriptor_t xDesc,
                                                            opara_cudnnFilterDescriptor_t wDesc,
                                                            opara_cudnnConvolutionDescriptor_t convDesc,
                                                            opara_cudnnTensorDescriptor_t yDesc,
                                                            opara_cudnnConvolutionFwdAlgo_t algo, size_t* sizeInBytes) {
    conv_geom g;
    opara_cudnnStatus_t st;
    if (!emu_lib_registry_has(&handles, handle) || !sizeInBytes) return BAD;
    if ((st = conv_check(convDesc, xDesc, wDesc, yDesc, &g)) != OK) return st;
    return workspace_for(convDesc, &g, algo, sizeInBytes);
}

/* Heuristic order of the fake (supported algorithms first, then the rest with NOT_SUPPORTED). Winograd
 * leads where it applies (unit-stride ungrouped 3x3/5x5, as cuDNN favours for fp32), so a caller sees a
 * first choice that needs a sizeable workspace and is not IMPLICIT_PRECOMP_GEMM (the only algorithm the
 * IDENTITY epilogue allows). */
static const opara_cudnnConvolutionFwdAlgo_t heuristic_order[] = {
    OPARA_CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED,     OPARA_CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD,
    OPARA_CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, OPARA_CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM,
    OPARA_CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING,           OPARA_CUDNN_CONVOLUTION_FWD_ALGO_GEMM,
    OPARA_CUDNN_CONVOLUTION_FWD_ALGO_FFT,                  OPARA_CUDNN_CONVOLUTION_FWD_ALGO_DIRECT};

opara_cudnnStatus_t cudnnGetConvolutionForwardAlgorithm_v7(opara_cudnnHandle_t handle, opara_cudnnTensorDescriptor_t srcDesc,
                                                           opara_cudnnFilterDescriptor_t filterDesc,
                                                           opara_cudnnConvolutionDescriptor_t convDesc,
                                                           opara_cudnnTensorDescriptor_t destDesc, int requestedAlgoCount,
                                                           int* returnedAlgoCount,
                                                           opara_cudnnConvolutionFwdAlgoPerf_t* perfResults) {
    conv_geom g;
    opara_cudnnStatus_t st;
    int pass, i, n = 0;
    if (!emu_lib_registry_has(&handles, handle) || !returnedAlgoCount || !perfResults || requestedAlgoCount <= 0)
        return BAD;
    if ((st = conv_check(convDesc, srcDesc, filterDesc, destDesc, &g)) != OK) return st;
    for (pass = 1; pass >= 0; pass--)
        for (i = 0; i < (int)(sizeof heuristic_order / sizeof heuristic_order[0]) && n < requestedAlgoCount; i++) {
            opara_cudnnConvolutionFwdAlgo_t a = heuristic_order[i];
            opara_cudnnConvolutionFwdAlgoPerf_t* p = &perfResults[n];
            if (algo_supported(convDesc, &g, a) != pass) continue;
            memset(p, 0, sizeof(*p));
            p->algo = a;
            p->status = pass ? OK : OPARA_CUDNN_STATUS_NOT_SUPPORTED;
            p->time = -1.0f; /* heuristics do not time */
            p->memory = pass ? algo_workspace(convDesc, &g, a) : 0;
            p->determinism = OPARA_CUDNN_DETERMINISTIC;
            p->mathType = conv_math_used(handle, convDesc, a);
            n++;
        }
    *returnedAlgoCount = n;
    return OK;
}

/* ---------------------------------------------------------------- execution */

static long long pack(int hi, int lo) { return (long long)(((unsigned long long)(unsigned int)hi << 32) | (unsigned int)lo); }

static int all_float(opara_cudnnTensorDescriptor_t t) { return t->type == OPARA_CUDNN_DATA_FLOAT; }

static int nonneg_strides(opara_cudnnTensorDescriptor_t t) {
    int i;
    for (i = 0; i < t->nb; i++)
        if (t->strides[i] < 0) return 0;
    return 1;
}

/* What the fake executes: fp32 data and compute, NCHW filters, non-negative strides. */
static opara_cudnnStatus_t conv_supported(opara_cudnnConvolutionDescriptor_t cd, opara_cudnnTensorDescriptor_t x,
                                          opara_cudnnFilterDescriptor_t f, opara_cudnnTensorDescriptor_t y) {
    if (!all_float(x) || !all_float(y) || f->type != OPARA_CUDNN_DATA_FLOAT || cd->type != OPARA_CUDNN_DATA_FLOAT) {
        report("convolution: only fp32 data with fp32 compute is emulated");
        return OPARA_CUDNN_STATUS_NOT_SUPPORTED;
    }
    if (f->format != OPARA_CUDNN_TENSOR_NCHW || !nonneg_strides(x) || !nonneg_strides(y)) {
        report("convolution: only NCHW filters and non-negative tensor strides are emulated");
        return OPARA_CUDNN_STATUS_NOT_SUPPORTED;
    }
    return OK;
}

/* [p, p + bytes) inside device memory: its first and last byte are in live allocations. */
static int device_range(const void* p, size_t bytes, const char* what) {
    char msg[200];
    if (bytes == 0 || (opara_emu_is_device_pointer(p) && opara_emu_is_device_pointer((const char*)p + bytes - 1))) return 1;
    snprintf(msg, sizeof msg, "%s at %p: its %zu bytes are not inside a live device allocation", what, p, bytes);
    report(msg);
    return 0;
}

static size_t type_size(opara_cudnnDataType_t t) {
    switch (t) {
    case OPARA_CUDNN_DATA_DOUBLE: case OPARA_CUDNN_DATA_INT64: return 8;
    case OPARA_CUDNN_DATA_HALF: case OPARA_CUDNN_DATA_BFLOAT16: return 2;
    case OPARA_CUDNN_DATA_INT8: case OPARA_CUDNN_DATA_UINT8: return 1;
    default: return 4;
    }
}

/* The bytes a tensor descriptor reaches from its base pointer (non-negative strides). */
static size_t tensor_span(opara_cudnnTensorDescriptor_t t) {
    size_t last = 0;
    int i;
    for (i = 0; i < t->nb; i++) last += (size_t)(t->dims[i] - 1) * (size_t)(t->strides[i] > 0 ? t->strides[i] : 0);
    return (last + 1) * type_size(t->type);
}

static int tensor_in_memory(opara_cudnnTensorDescriptor_t t, const void* p, const char* what) {
    return device_range(p, tensor_span(t), what);
}

/* One launch of opara_emulib_conv2d. */
typedef struct conv_launch {
    const void *x, *w, *z, *bias;
    void *y, *ws; /* ws: the workspace (the transformed filter of transform_algo) */
    opara_cudnnTensorDescriptor_t xd, zd, yd;
    float alpha1, alpha2;
    int relu, bias_stride;
} conv_launch;

/* The filter transform of transform_algo: the filter copied to the start of the workspace. */
static opara_cudnnStatus_t filter_transform(opara_cudnnHandle_t h, const conv_geom* g, const void* w, void* ws) {
    long long n = (long long)g->k * (g->c / g->groups) * g->r * g->s;
    unsigned int grid[3], block[3];
    void* args[3];
    args[0] = (void*)&w;
    args[1] = (void*)&ws;
    args[2] = &n;
    grid[0] = (unsigned int)((n + THREADS - 1) / THREADS);
    grid[1] = grid[2] = 1;
    block[0] = THREADS;
    block[1] = block[2] = 1;
    if (emu_lib_launch("opara_emulib_copy_f32", grid, block, h->stream, args) != OPARA_CUDA_SUCCESS)
        return OPARA_CUDNN_STATUS_EXECUTION_FAILED_CUDA_DRIVER;
    return OK;
}

static opara_cudnnStatus_t conv_enqueue(opara_cudnnHandle_t h, opara_cudnnConvolutionDescriptor_t cd, const conv_geom* g,
                                        opara_cudnnConvolutionFwdAlgo_t algo, const conv_launch* l) {
    long long xs_nc = pack(l->xd->strides[0], l->xd->strides[1]), xs_hw = pack(l->xd->strides[2], l->xd->strides[3]);
    long long zs_nc = pack(l->zd->strides[0], l->zd->strides[1]), zs_hw = pack(l->zd->strides[2], l->zd->strides[3]);
    long long ys_nc = pack(l->yd->strides[0], l->yd->strides[1]), ys_hw = pack(l->yd->strides[2], l->yd->strides[3]);
    long long nc = pack(g->n, g->c), hw = pack(g->h, g->w), kg = pack(g->k, g->groups), rs = pack(g->r, g->s);
    long long ohw = pack(g->oh, g->ow), pad = pack(cd->pad[0], cd->pad[1]), str = pack(cd->stride[0], cd->stride[1]);
    long long dil = pack(cd->dil[0], cd->dil[1]);
    long long total = (long long)g->n * g->k * g->oh * g->ow;
    int flags = (cd->mode == OPARA_CUDNN_CONVOLUTION ? 1 : 0) | (l->relu ? 2 : 0) | conv_rounding(h, cd, algo) << 2;
    unsigned int grid[3], block[3];
    void* args[23];
    const void* w = l->w;
    if (transform_algo(algo)) {
        opara_cudnnStatus_t st = filter_transform(h, g, l->w, l->ws);
        if (st != OK) return st;
        w = l->ws;
    }
    args[0] = (void*)&l->x;
    args[1] = (void*)&w;
    args[2] = (void*)&l->z;
    args[3] = (void*)&l->bias;
    args[4] = (void*)&l->y;
    args[5] = &xs_nc;
    args[6] = &xs_hw;
    args[7] = &zs_nc;
    args[8] = &zs_hw;
    args[9] = &ys_nc;
    args[10] = &ys_hw;
    args[11] = &nc;
    args[12] = &hw;
    args[13] = &kg;
    args[14] = &rs;
    args[15] = &ohw;
    args[16] = &pad;
    args[17] = &str;
    args[18] = &dil;
    args[19] = &flags;
    args[20] = (void*)&l->alpha1;
    args[21] = (void*)&l->alpha2;
    args[22] = (void*)&l->bias_stride;
    grid[0] = (unsigned int)((total + THREADS - 1) / THREADS);
    grid[1] = grid[2] = 1;
    block[0] = THREADS;
    block[1] = block[2] = 1;
    if (emu_lib_launch("opara_emulib_conv2d", grid, block, h->stream, args) != OPARA_CUDA_SUCCESS)
        return OPARA_CUDNN_STATUS_EXECUTION_FAILED_CUDA_DRIVER;
    return OK;
}

/* The handle's context must be current to launch ([EMU] 5001, what cuDNN returns when a driver call fails),
 * and the handle's first call sets it up (device memory: refused inside a capture). */
static opara_cudnnStatus_t launch_context(opara_cudnnHandle_t h, const char* call) {
    if (!emu_lib_context_ok("cuDNN", call, h->ctx)) return OPARA_CUDNN_STATUS_EXECUTION_FAILED_CUDA_DRIVER;
    if (emu_lib_first_use("cuDNN", &loaded, &h->setup) != 0) return OPARA_CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED;
    return OK;
}

/* Checks shared by the two forward calls, up to and including the workspace and the context. */
static opara_cudnnStatus_t forward_check(opara_cudnnHandle_t handle, opara_cudnnTensorDescriptor_t xDesc, const void* x,
                                         opara_cudnnFilterDescriptor_t wDesc, const void* w,
                                         opara_cudnnConvolutionDescriptor_t convDesc, opara_cudnnConvolutionFwdAlgo_t algo,
                                         void* workSpace, size_t workSpaceSizeInBytes, opara_cudnnTensorDescriptor_t yDesc,
                                         const void* y, conv_geom* g) {
    opara_cudnnStatus_t st;
    size_t need = 0;
    if (!emu_lib_registry_has(&handles, handle) || !x || !w || !y) return BAD;
    if ((st = conv_check(convDesc, xDesc, wDesc, yDesc, g)) != OK) return st;
    if ((st = workspace_for(convDesc, g, algo, &need)) != OK) return st;
    if ((st = conv_supported(convDesc, xDesc, wDesc, yDesc)) != OK) return st;
    if (workSpaceSizeInBytes < need || (need && !workSpace)) {
        char msg[160];
        snprintf(msg, sizeof msg, "convolution algorithm %d needs %zu bytes of workspace, %zu given", (int)algo, need,
                 workSpaceSizeInBytes);
        report(msg);
        return BAD;
    }
    if (!tensor_in_memory(xDesc, x, "convolution input x") || !tensor_in_memory(yDesc, y, "convolution output y") ||
        !device_range(w, (size_t)wDesc->k * wDesc->c * wDesc->r * wDesc->s * type_size(wDesc->type), "filter w") ||
        (workSpace && !device_range(workSpace, workSpaceSizeInBytes, "workspace")))
        return BAD;
    if (!emu_lib_aligned("cuDNN", "convolution input x", x) || !emu_lib_aligned("cuDNN", "filter w", w) ||
        !emu_lib_aligned("cuDNN", "convolution output y", y) || !emu_lib_aligned("cuDNN", "workspace", workSpace))
        return OPARA_CUDNN_STATUS_BAD_PARAM_MISALIGNED_POINTER;
    return launch_context(handle, "convolution");
}

opara_cudnnStatus_t cudnnConvolutionForward(opara_cudnnHandle_t handle, const void* alpha,
                                            opara_cudnnTensorDescriptor_t xDesc, const void* x,
                                            opara_cudnnFilterDescriptor_t wDesc, const void* w,
                                            opara_cudnnConvolutionDescriptor_t convDesc,
                                            opara_cudnnConvolutionFwdAlgo_t algo, void* workSpace,
                                            size_t workSpaceSizeInBytes, const void* beta,
                                            opara_cudnnTensorDescriptor_t yDesc, void* y) {
    conv_geom g;
    conv_launch l;
    opara_cudnnStatus_t st = forward_check(handle, xDesc, x, wDesc, w, convDesc, algo, workSpace, workSpaceSizeInBytes,
                                           yDesc, y, &g);
    if (st != OK) return st;
    if (!alpha || !beta) return BAD;
    memset(&l, 0, sizeof l);
    l.x = x;
    l.w = w;
    l.ws = workSpace;
    l.z = y; /* y = alpha * conv + beta * y: the epilogue with z = y */
    l.y = y;
    l.xd = xDesc;
    l.zd = yDesc;
    l.yd = yDesc;
    l.alpha1 = *(const float*)alpha;
    l.alpha2 = *(const float*)beta;
    if ((st = conv_enqueue(handle, convDesc, &g, algo, &l)) == OK) count(COUNT_FORWARD);
    return st;
}

/* The bias is 1 x K x 1 x 1 (any strides); z has y's shape. */
static opara_cudnnStatus_t epilogue_check(opara_cudnnTensorDescriptor_t zDesc, opara_cudnnTensorDescriptor_t biasDesc,
                                          opara_cudnnTensorDescriptor_t yDesc) {
    int i;
    if (!valid_tensor(zDesc) || !valid_tensor(biasDesc) || zDesc->nb != 4 || biasDesc->nb != 4) return BAD;
    for (i = 0; i < 4; i++)
        if (zDesc->dims[i] != yDesc->dims[i]) return BAD;
    if (biasDesc->dims[0] != 1 || biasDesc->dims[1] != yDesc->dims[1] || biasDesc->dims[2] != 1 || biasDesc->dims[3] != 1)
        return BAD;
    if (!all_float(zDesc) || !all_float(biasDesc) || !nonneg_strides(zDesc) || biasDesc->strides[1] < 0)
        return OPARA_CUDNN_STATUS_NOT_SUPPORTED;
    return OK;
}

opara_cudnnStatus_t cudnnConvolutionBiasActivationForward(
    opara_cudnnHandle_t handle, const void* alpha1, opara_cudnnTensorDescriptor_t xDesc, const void* x,
    opara_cudnnFilterDescriptor_t wDesc, const void* w, opara_cudnnConvolutionDescriptor_t convDesc,
    opara_cudnnConvolutionFwdAlgo_t algo, void* workSpace, size_t workSpaceSizeInBytes, const void* alpha2,
    opara_cudnnTensorDescriptor_t zDesc, const void* z, opara_cudnnTensorDescriptor_t biasDesc, const void* bias,
    opara_cudnnActivationDescriptor_t activationDesc, opara_cudnnTensorDescriptor_t yDesc, void* y) {
    conv_geom g;
    conv_launch l;
    opara_cudnnStatus_t st = forward_check(handle, xDesc, x, wDesc, w, convDesc, algo, workSpace, workSpaceSizeInBytes,
                                           yDesc, y, &g);
    if (st != OK) return st;
    if (!alpha1 || !alpha2 || !z || !bias) return BAD;
    if ((st = epilogue_check(zDesc, biasDesc, yDesc)) != OK) return st;
    if (!tensor_in_memory(zDesc, z, "residual z") || !tensor_in_memory(biasDesc, bias, "bias")) return BAD;
    if (!emu_lib_aligned("cuDNN", "residual z", z) || !emu_lib_aligned("cuDNN", "bias", bias))
        return OPARA_CUDNN_STATUS_BAD_PARAM_MISALIGNED_POINTER;
    if (!emu_lib_registry_has(&acts, activationDesc) || !activationDesc->set) return BAD;
    /* cuDNN: only RELU and IDENTITY, and IDENTITY only with IMPLICIT_PRECOMP_GEMM */
    if (activationDesc->mode != OPARA_CUDNN_ACTIVATION_RELU &&
        !(activationDesc->mode == OPARA_CUDNN_ACTIVATION_IDENTITY &&
          algo == OPARA_CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM))
        return OPARA_CUDNN_STATUS_NOT_SUPPORTED;
    memset(&l, 0, sizeof l);
    l.x = x;
    l.w = w;
    l.ws = workSpace;
    l.z = z;
    l.bias = bias;
    l.y = y;
    l.xd = xDesc;
    l.zd = zDesc;
    l.yd = yDesc;
    l.alpha1 = *(const float*)alpha1;
    l.alpha2 = *(const float*)alpha2;
    l.relu = activationDesc->mode == OPARA_CUDNN_ACTIVATION_RELU;
    l.bias_stride = biasDesc->strides[1];
    if ((st = conv_enqueue(handle, convDesc, &g, algo, &l)) == OK) count(COUNT_BIAS_ACT);
    return st;
}

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
    unsigned int grid[3], block[3];
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
    grid[0] = (unsigned int)((total + THREADS - 1) / THREADS);
    grid[1] = grid[2] = 1;
    block[0] = THREADS;
    block[1] = block[2] = 1;
    if (emu_lib_launch("opara_emulib_add_tensor", grid, block, handle->stream, args) != OPARA_CUDA_SUCCESS)
        return OPARA_CUDNN_STATUS_EXECUTION_FAILED_CUDA_DRIVER;
    count(COUNT_ADD_TENSOR);
    return OK;
}
