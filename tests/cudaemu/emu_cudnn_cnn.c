/* emu_cudnn_cnn.c - the convolution sub-library of the cuDNN fake (build/cudaemu/libcudnn_cnn.so.9), loaded
 * by the main library (emu_cudnn.c) at its first convolution call, as cuDNN 9's libcudnn.so.9 loads
 * libcudnn_cnn.so.9: convolution descriptors, output dimensions, algorithm and workspace queries, forward
 * convolution with and without the bias/activation epilogue. It exports one symbol (EMU_CUDNN_CNN_OPEN) and
 * reaches the main library's handles and descriptors through the core table it is given. */
#include "emu_cudnn.h"

static const emu_cudnn_core* core;
static emu_lib_registry convs = {PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0};

struct opara_cudnnConvolutionStruct {
    int set;
    int pad[2], stride[2], dil[2], groups;
    opara_cudnnConvolutionMode_t mode;
    opara_cudnnDataType_t type;
    opara_cudnnMathType_t math;
};
static opara_cudnnStatus_t cnn_cudnnCreateConvolutionDescriptor(opara_cudnnConvolutionDescriptor_t* convDesc) {
    void* p = NULL;
    opara_cudnnStatus_t st = create(&convs, &p, sizeof(struct opara_cudnnConvolutionStruct));
    if (st == OK) {
        *convDesc = (opara_cudnnConvolutionDescriptor_t)p;
        (*convDesc)->groups = 1;
    }
    return st;
}

static opara_cudnnStatus_t cnn_cudnnDestroyConvolutionDescriptor(opara_cudnnConvolutionDescriptor_t convDesc) {
    return destroy(&convs, convDesc);
}

static opara_cudnnStatus_t cnn_cudnnSetConvolution2dDescriptor(opara_cudnnConvolutionDescriptor_t convDesc, int pad_h, int pad_w,
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

static opara_cudnnStatus_t cnn_cudnnSetConvolutionGroupCount(opara_cudnnConvolutionDescriptor_t convDesc, int groupCount) {
    if (!emu_lib_registry_has(&convs, convDesc) || groupCount <= 0) return BAD;
    convDesc->groups = groupCount;
    return OK;
}

static opara_cudnnStatus_t cnn_cudnnSetConvolutionMathType(opara_cudnnConvolutionDescriptor_t convDesc,
                                                opara_cudnnMathType_t mathType) {
    if (!emu_lib_registry_has(&convs, convDesc)) return BAD;
    if ((int)mathType < (int)OPARA_CUDNN_DEFAULT_MATH || (int)mathType > (int)OPARA_CUDNN_FMA_MATH) return BAD;
    convDesc->math = mathType;
    return OK;
}

/* ---------------------------------------------------------------- convolution geometry */

typedef struct conv_geom {
    int n, c, h, w, k, r, s, oh, ow, groups;
} conv_geom;

/* What cudnnGetConvolution2dForwardOutputDim checks: set 4-d descriptors, C == filter C * groups, a positive
 * output size. */
static opara_cudnnStatus_t conv_geometry(opara_cudnnConvolutionDescriptor_t cd, opara_cudnnTensorDescriptor_t x,
                                         opara_cudnnFilterDescriptor_t f, conv_geom* g) {
    if (!emu_lib_registry_has(&convs, cd) || !core->valid_tensor(x) || !core->valid_filter(f))
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

static opara_cudnnStatus_t cnn_cudnnGetConvolution2dForwardOutputDim(opara_cudnnConvolutionDescriptor_t convDesc,
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
    if (!core->valid_tensor(y) || y->nb != 4) return BAD;
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

static opara_cudnnStatus_t cnn_cudnnGetConvolutionForwardWorkspaceSize(opara_cudnnHandle_t handle, opara_cudnnTensorDescriptor_t xDesc,
                                                            opara_cudnnFilterDescriptor_t wDesc,
                                                            opara_cudnnConvolutionDescriptor_t convDesc,
                                                            opara_cudnnTensorDescriptor_t yDesc,
                                                            opara_cudnnConvolutionFwdAlgo_t algo, size_t* sizeInBytes) {
    conv_geom g;
    opara_cudnnStatus_t st;
    if (!core->valid_handle(handle) || !sizeInBytes) return BAD;
    if ((st = conv_check(convDesc, xDesc, wDesc, yDesc, &g)) != OK) return st;
    return workspace_for(convDesc, &g, algo, sizeInBytes);
}

/* Heuristic order of the fake (supported algorithms first, then the rest with NOT_SUPPORTED). Winograd
 * leads where it applies (unit-stride ungrouped 3x3/5x5, as cuDNN favours for fp32), so a caller sees a
 * first choice that needs a sizeable workspace and is neither of the two GEMM algorithms (the only ones the
 * IDENTITY epilogue allows). */
static const opara_cudnnConvolutionFwdAlgo_t heuristic_order[] = {
    OPARA_CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED,     OPARA_CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD,
    OPARA_CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, OPARA_CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM,
    OPARA_CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING,           OPARA_CUDNN_CONVOLUTION_FWD_ALGO_GEMM,
    OPARA_CUDNN_CONVOLUTION_FWD_ALGO_FFT,                  OPARA_CUDNN_CONVOLUTION_FWD_ALGO_DIRECT};

static opara_cudnnStatus_t cnn_cudnnGetConvolutionForwardAlgorithm_v7(opara_cudnnHandle_t handle, opara_cudnnTensorDescriptor_t srcDesc,
                                                           opara_cudnnFilterDescriptor_t filterDesc,
                                                           opara_cudnnConvolutionDescriptor_t convDesc,
                                                           opara_cudnnTensorDescriptor_t destDesc, int requestedAlgoCount,
                                                           int* returnedAlgoCount,
                                                           opara_cudnnConvolutionFwdAlgoPerf_t* perfResults) {
    conv_geom g;
    opara_cudnnStatus_t st;
    int pass, i, n = 0;
    /* requestedAlgoCount 0 is accepted (cuDNN 9.19: SUCCESS, no results) */
    if (!core->valid_handle(handle) || !returnedAlgoCount || !perfResults || requestedAlgoCount < 0)
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

/* One launch of opara_emulib_conv2d. */
typedef struct conv_launch {
    const void *x, *w, *z, *bias;
    void *y, *ws; /* ws: the workspace (the transformed filter of transform_algo) */
    opara_cudnnTensorDescriptor_t xd, zd, yd;
    float alpha1, alpha2;
    int relu, relu_keeps_nan, bias_stride;
} conv_launch;

/* The filter transform of transform_algo: the filter copied to the start of the workspace. */
static opara_cudnnStatus_t filter_transform(opara_cudnnHandle_t h, const conv_geom* g, const void* w, void* ws) {
    long long n = (long long)g->k * (g->c / g->groups) * g->r * g->s;
    void* args[3];
    args[0] = (void*)&w;
    args[1] = (void*)&ws;
    args[2] = &n;
    if (emu_lib_launch_1d("opara_emulib_copy_f32", n, THREADS, h->stream, args) != OPARA_CUDA_SUCCESS)
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
    int flags = (cd->mode == OPARA_CUDNN_CONVOLUTION ? 1 : 0) | (l->relu ? 2 : 0) | conv_rounding(h, cd, algo) << 2 |
                (l->relu_keeps_nan ? 16 : 0);
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
    if (emu_lib_launch_1d("opara_emulib_conv2d", total, THREADS, h->stream, args) != OPARA_CUDA_SUCCESS)
        return OPARA_CUDNN_STATUS_EXECUTION_FAILED_CUDA_DRIVER;
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
    if (!core->valid_handle(handle) || !x || !w || !y) return BAD;
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
    return core->launch_context(handle, "convolution");
}

static opara_cudnnStatus_t cnn_cudnnConvolutionForward(opara_cudnnHandle_t handle, const void* alpha,
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
    if ((st = conv_enqueue(handle, convDesc, &g, algo, &l)) == OK) core->count(COUNT_FORWARD);
    return st;
}

/* Whether t's strides are the fully packed NCHW ones (a dimension of size 1 may have any stride). */
static int packed_nchw(opara_cudnnTensorDescriptor_t t) {
    long long expect = 1;
    int i;
    for (i = t->nb - 1; i >= 0; i--) {
        if (t->dims[i] != 1 && t->strides[i] != expect) return 0;
        expect *= t->dims[i];
    }
    return 1;
}

/* The bias is 1 x K x 1 x 1 (any strides); z has y's shape. */
static opara_cudnnStatus_t epilogue_check(opara_cudnnTensorDescriptor_t zDesc, opara_cudnnTensorDescriptor_t biasDesc,
                                          opara_cudnnTensorDescriptor_t yDesc) {
    int i;
    if (!core->valid_tensor(zDesc) || !core->valid_tensor(biasDesc) || zDesc->nb != 4 || biasDesc->nb != 4) return BAD;
    for (i = 0; i < 4; i++)
        if (zDesc->dims[i] != yDesc->dims[i]) return BAD;
    if (biasDesc->dims[0] != 1 || biasDesc->dims[1] != yDesc->dims[1] || biasDesc->dims[2] != 1 || biasDesc->dims[3] != 1)
        return BAD;
    if (!all_float(zDesc) || !all_float(biasDesc) || !nonneg_strides(zDesc) || biasDesc->strides[1] < 0)
        return OPARA_CUDNN_STATUS_NOT_SUPPORTED;
    return OK;
}

static opara_cudnnStatus_t cnn_cudnnConvolutionBiasActivationForward(
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
    if (!core->valid_activation(activationDesc)) return BAD;
    /* cuDNN 9.19 on an H100: IMPLICIT_GEMM and IMPLICIT_PRECOMP_GEMM into a y that is not packed (a channel
     * slice of a bigger tensor) are CUDNN_STATUS_NOT_SUPPORTED_SHAPE, with RELU and IDENTITY alike, so before
     * the activation rule. [EMU] the other algorithms alike; packed means the packed NCHW strides. */
    if (!packed_nchw(yDesc)) {
        report("cudnnConvolutionBiasActivationForward: the output must be packed: CUDNN_STATUS_NOT_SUPPORTED_SHAPE");
        return OPARA_CUDNN_STATUS_NOT_SUPPORTED_SHAPE;
    }
    /* cuDNN documents only RELU and IDENTITY, IDENTITY only with IMPLICIT_PRECOMP_GEMM; cuDNN 9.19 on an H100
     * runs IDENTITY with IMPLICIT_GEMM too (and refuses SIGMOID with IMPLICIT_PRECOMP_GEMM). [EMU] IDENTITY with
     * the other algorithms stays refused (not run on the real library). */
    if (activationDesc->mode != OPARA_CUDNN_ACTIVATION_RELU &&
        !(activationDesc->mode == OPARA_CUDNN_ACTIVATION_IDENTITY &&
          (algo == OPARA_CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM ||
           algo == OPARA_CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM)))
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
    l.relu_keeps_nan = activationDesc->nan == OPARA_CUDNN_PROPAGATE_NAN;
    l.bias_stride = biasDesc->strides[1];
    if ((st = conv_enqueue(handle, convDesc, &g, algo, &l)) == OK) core->count(COUNT_BIAS_ACT);
    return st;
}


/* ---------------------------------------------------------------- the sub-library's entry point */

#define EMU_CUDNN_CNN_ENTRY(name) .name = cnn_##name,
static const emu_cudnn_cnn table = {.abi = EMU_CUDNN_ABI, EMU_CUDNN_CNN_FUNCS(EMU_CUDNN_CNN_ENTRY)};
#undef EMU_CUDNN_CNN_ENTRY

/* Called once by the main library after dlopen: keeps its core table, returns ours. */
EMU_LIB_API const emu_cudnn_cnn* opara_emu_cudnn_cnn_open(const emu_cudnn_core* c) {
    if (!c || c->abi != EMU_CUDNN_ABI) return NULL;
    core = c;
    return &table;
}
