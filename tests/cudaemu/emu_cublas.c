/* emu_cublas.c - the cuBLAS fake (build/cudaemu/libcublas.so): every function of opara_cuda.h's cuBLAS table
 * with NVIDIA's semantics for what opara uses (cuBLAS docs §2.4, shared/research/cuda-semantics.md §6):
 *   - handles need a current context; creating or destroying one allocates/frees device memory, so it is an
 *     unsafe call during stream capture, as with the real library;
 *   - the handle's stream (NULL = legacy default stream); cublasSetStream resets the workspace to the default
 *     pool (§6.2); cublasSetWorkspace takes any pointer: the docs ask for 256-byte alignment but cuBLAS 13.1
 *     does not check it there (SUCCESS on an H100 for a pointer 4 bytes off); [EMU] the emulator reports a
 *     misaligned workspace and never uses it (split-K below), so the GEMMs' return codes do not change;
 *   - [EMU] the default pool is a plain device allocation: a GEMM captured on a handle without a user
 *     workspace allocates with cuMemAlloc, which the capture rules refuse (900, capture invalidated) unless
 *     the capture is RELAXED; the call returns CUBLAS_STATUS_ALLOC_FAILED. opara sets explicit workspaces
 *     (BRIEF §4), so this catches a workspace lost to a later cublasSetStream;
 *   - column-major SGEMM, strided batched SGEMM and GemmEx with fp32 operands, or fp16 A and B with fp32 C
 *     (gemm_ex_types: the rows of the docs' cublasGemmEx table that the emulator runs), the reference BLAS
 *     argument checks (CUBLAS_STATUS_INVALID_VALUE) and quick returns, alpha/beta read on the host at call time
 *     (CUBLAS_POINTER_MODE_HOST, the default), queued as kernels on the handle's stream;
 *   - the math mode and compute type decide the operands' precision as on the emulated device (operand_rounding
 *     below): TF32 only where cuBLAS documents it (CUBLAS_TF32_TENSOR_OP_MATH or CUBLAS_COMPUTE_32F_FAST_TF32 on
 *     compute capability 8.0+, never under NVIDIA_TF32_OVERRIDE=0), FP32 for CUBLAS_DEFAULT_MATH;
 *   - the math mode is a base mode (DEFAULT 0, TENSOR_OP 1, PEDANTIC 2, TF32_TENSOR_OP 3) OR'ed with the flag
 *     bits of cuBLAS 13's cublasMath_t (FP32_EMULATED_BF16X9 4, FP64_EMULATED_FIXEDPOINT 8,
 *     DISALLOW_REDUCED_PRECISION_REDUCTION 16): cublasSetMathMode(9) = TENSOR_OP | FP64_EMULATED_FIXEDPOINT
 *     succeeds on cuBLAS 13.1. The emulation flags leave an FP32 GEMM's precision alone (BF16x9 keeps FP32
 *     accuracy, FP64 emulation is for DGEMM). */
#include "emu_lib.h"

OPARA_CUDA_CUBLAS_FUNCS(EMU_LIB_DECLARE)

enum { CUBLAS_EMU_VERSION_MAJOR = 13, CUBLAS_EMU_VERSION_MINOR = 1, CUBLAS_EMU_VERSION_PATCH = 0 };
enum { GEMM_TILE = 16, GEMM_THREAD_TILE = 4, GRID_Z_MAX = 65535 }; /* 16x16 threads, 4x4 outputs each */
#define DEFAULT_POOL_BYTES ((size_t)4 << 20) /* cuBLAS's default workspace below sm_90 (§6.2) */
/* cuBLAS 13's cublasMath_t beyond opara_cuda.h's list: CUBLAS_FP32_EMULATED_BF16X9_MATH = 4 and
 * CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH = 8 (flag bits, like DISALLOW_REDUCED_PRECISION_REDUCTION = 16). */
enum { MATH_BASE_MASK = 3, MATH_KNOWN_BITS = 3 | 4 | 8 | 16 };

struct opara_cublasContext {
    opara_CUcontext ctx;
    opara_CUstream stream;
    void* workspace;
    size_t workspace_bytes;
    int user_workspace; /* 0: the default pool */
    opara_cublasMath_t math;
    int cc;                  /* compute capability of the device (10 * major + minor) */
    opara_CUdeviceptr state; /* device memory every handle owns */
    opara_CUdeviceptr setup; /* lazily set up at the first GEMM (emu_lib_first_use) */
};

static emu_lib_registry handles = {PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0};
static int loaded; /* the first GEMM in the process "loads the kernels" (emu_lib_first_use) */

/* Every listed function exists (link-time check); opara's loader looks them up by name. */
static void (*const exports[])(void) __attribute__((used)) = {OPARA_CUDA_CUBLAS_FUNCS(EMU_LIB_ADDRESS)};

static void report(const char* msg) { emu_lib_report("cuBLAS", msg); }

static int valid(opara_cublasHandle_t h) { return emu_lib_registry_has(&handles, h); }

opara_cublasStatus_t cublasCreate_v2(opara_cublasHandle_t* handle) {
    opara_cublasHandle_t h;
    opara_CUcontext ctx = NULL;
    if (!handle) return OPARA_CUBLAS_STATUS_INVALID_VALUE;
    if (cuCtxGetCurrent(&ctx) != OPARA_CUDA_SUCCESS || !ctx) return OPARA_CUBLAS_STATUS_NOT_INITIALIZED;
    h = (opara_cublasHandle_t)calloc(1, sizeof(*h));
    if (!h) return OPARA_CUBLAS_STATUS_ALLOC_FAILED;
    h->ctx = ctx;
    h->cc = emu_lib_compute_capability();
    if (cuMemAlloc_v2(&h->state, 256) != OPARA_CUDA_SUCCESS || !emu_lib_registry_add(&handles, h)) {
        if (h->state) cuMemFree_v2(h->state);
        free(h);
        return OPARA_CUBLAS_STATUS_ALLOC_FAILED;
    }
    *handle = h;
    return OPARA_CUBLAS_STATUS_SUCCESS;
}

opara_cublasStatus_t cublasDestroy_v2(opara_cublasHandle_t handle) {
    if (!valid(handle)) return OPARA_CUBLAS_STATUS_NOT_INITIALIZED;
    /* [EMU] frees device memory: the handle's context must be current (the handle stays valid otherwise) */
    if (!emu_lib_context_ok("cuBLAS", "cublasDestroy", handle->ctx)) return OPARA_CUBLAS_STATUS_INTERNAL_ERROR;
    if (!emu_lib_registry_remove(&handles, handle)) return OPARA_CUBLAS_STATUS_NOT_INITIALIZED;
    cuMemFree_v2(handle->state);
    if (handle->setup) cuMemFree_v2(handle->setup);
    free(handle);
    return OPARA_CUBLAS_STATUS_SUCCESS;
}

opara_cublasStatus_t cublasGetVersion_v2(opara_cublasHandle_t handle, int* version) {
    (void)handle; /* the real library answers without a valid handle too */
    if (!version) return OPARA_CUBLAS_STATUS_INVALID_VALUE;
    *version = CUBLAS_EMU_VERSION_MAJOR * 10000 + CUBLAS_EMU_VERSION_MINOR * 100 + CUBLAS_EMU_VERSION_PATCH;
    return OPARA_CUBLAS_STATUS_SUCCESS;
}

opara_cublasStatus_t cublasGetProperty(opara_libraryPropertyType type, int* value) {
    if (!value) return OPARA_CUBLAS_STATUS_INVALID_VALUE;
    switch (type) {
    case OPARA_MAJOR_VERSION: *value = CUBLAS_EMU_VERSION_MAJOR; break;
    case OPARA_MINOR_VERSION: *value = CUBLAS_EMU_VERSION_MINOR; break;
    case OPARA_PATCH_LEVEL: *value = CUBLAS_EMU_VERSION_PATCH; break;
    default: return OPARA_CUBLAS_STATUS_INVALID_VALUE;
    }
    return OPARA_CUBLAS_STATUS_SUCCESS;
}

opara_cublasStatus_t cublasSetStream_v2(opara_cublasHandle_t handle, opara_CUstream streamId) {
    if (!valid(handle)) return OPARA_CUBLAS_STATUS_NOT_INITIALIZED;
    handle->stream = streamId;
    handle->workspace = NULL; /* cuBLAS §2.4.7: unconditionally back to the default pool */
    handle->workspace_bytes = 0;
    handle->user_workspace = 0;
    return OPARA_CUBLAS_STATUS_SUCCESS;
}

opara_cublasStatus_t cublasSetWorkspace_v2(opara_cublasHandle_t handle, void* workspace, size_t workspaceSizeInBytes) {
    if (!valid(handle)) return OPARA_CUBLAS_STATUS_NOT_INITIALIZED;
    if (!workspace && workspaceSizeInBytes) return OPARA_CUBLAS_STATUS_INVALID_VALUE;
    if ((size_t)workspace % 256 != 0) { /* accepted, as cuBLAS 13.1 does; see the top */
        char msg[200];
        snprintf(msg, sizeof msg,
                 "cublasSetWorkspace: workspace %p is not 256-byte aligned (offset %zu), as the docs require; "
                 "the emulator will not use it",
                 workspace, (size_t)workspace % 256);
        report(msg);
    }
    handle->workspace = workspace;
    handle->workspace_bytes = workspaceSizeInBytes;
    handle->user_workspace = 1;
    return OPARA_CUBLAS_STATUS_SUCCESS;
}

/* Any base mode with any of the flag bits (see the top). [EMU] A value with other bits set (negative, or 32 and
 * above) is refused: what cuBLAS does with one is unverified. */
opara_cublasStatus_t cublasSetMathMode(opara_cublasHandle_t handle, opara_cublasMath_t mode) {
    if (!valid(handle)) return OPARA_CUBLAS_STATUS_NOT_INITIALIZED;
    if (((unsigned int)mode & ~(unsigned int)MATH_KNOWN_BITS) != 0) return OPARA_CUBLAS_STATUS_INVALID_VALUE;
    handle->math = mode; /* used by operand_rounding at every GEMM */
    return OPARA_CUBLAS_STATUS_SUCCESS;
}

/* One GEMM request (column-major, batch >= 1 after the quick returns). */
typedef struct gemm_call {
    int ta, tb, m, n, k;
    float alpha, beta;
    const void *a, *b; /* fp32, or fp16 with f16_in */
    float* c;
    int lda, ldb, ldc;
    long long sa, sb, sc;
    int batch;
    int rmode;  /* EMU_ROUND_*: the operands' precision (operand_rounding) */
    int f16_in; /* A and B hold IEEE binary16 (GemmEx CUDA_R_16F), converted exactly to float */
} gemm_call;

static int max1(int v) { return v > 1 ? v : 1; }

/* The precision of an FP32 GEMM's operands (cublas_api.h cublasMath_t / cublasComputeType_t):
 *   CUBLAS_COMPUTE_32F (every cublasSgemm*): the handle's math mode decides: DEFAULT and PEDANTIC keep FP32
 *     ("at least the same number of mantissa bits as requested"), TF32_TENSOR_OP allows TF32, the deprecated
 *     TENSOR_OP is "the same as CUBLAS_COMPUTE_32F_FAST_16F";
 *   CUBLAS_COMPUTE_32F_PEDANTIC: FP32 always; _FAST_TF32: TF32; _FAST_16BF: BF16 (bf16 tensor cores: 8.0+);
 *   _FAST_16F: "half or TF32": [EMU] half (FP16 tensor cores exist from 7.0; half also narrows the range).
 * TF32 needs compute capability 8.0+ and is off under NVIDIA_TF32_OVERRIDE=0 (emu_lib_tf32). */
static int operand_rounding(opara_cublasHandle_t h, opara_cublasComputeType_t t) {
    int math = (int)h->math & MATH_BASE_MASK; /* the flag bits do not change an FP32 GEMM's operands */
    if (t == OPARA_CUBLAS_COMPUTE_32F) {
        if (math == OPARA_CUBLAS_TF32_TENSOR_OP_MATH) t = OPARA_CUBLAS_COMPUTE_32F_FAST_TF32;
        else if (math == OPARA_CUBLAS_TENSOR_OP_MATH) t = OPARA_CUBLAS_COMPUTE_32F_FAST_16F;
    }
    switch (t) {
    case OPARA_CUBLAS_COMPUTE_32F_FAST_TF32: return emu_lib_tf32(h->cc);
    case OPARA_CUBLAS_COMPUTE_32F_FAST_16F: return h->cc >= 70 ? EMU_ROUND_FP16 : EMU_ROUND_NONE;
    case OPARA_CUBLAS_COMPUTE_32F_FAST_16BF: return h->cc >= 80 ? EMU_ROUND_BF16 : EMU_ROUND_NONE;
    default: return EMU_ROUND_NONE;
    }
}

/* The reference BLAS argument checks (xerbla order), as cuBLAS reports them: CUBLAS_STATUS_INVALID_VALUE. */
static opara_cublasStatus_t gemm_check(opara_cublasOperation_t ta, opara_cublasOperation_t tb, const gemm_call* g) {
    if ((int)ta < 0 || (int)ta > 2 || (int)tb < 0 || (int)tb > 2) return OPARA_CUBLAS_STATUS_INVALID_VALUE;
    if (g->m < 0 || g->n < 0 || g->k < 0 || g->batch < 0) return OPARA_CUBLAS_STATUS_INVALID_VALUE;
    if (g->lda < max1(g->ta ? g->k : g->m)) return OPARA_CUBLAS_STATUS_INVALID_VALUE;
    if (g->ldb < max1(g->tb ? g->n : g->k)) return OPARA_CUBLAS_STATUS_INVALID_VALUE;
    if (g->ldc < max1(g->m)) return OPARA_CUBLAS_STATUS_INVALID_VALUE;
    return OPARA_CUBLAS_STATUS_SUCCESS;
}

/* [EMU] the default pool under capture: an ordinary allocation, refused by the capture rules (see top). */
static opara_cublasStatus_t default_pool_during_capture(opara_cublasHandle_t h) {
    opara_CUdeviceptr p = 0;
    if (h->user_workspace || !emu_lib_capturing(h->stream)) return OPARA_CUBLAS_STATUS_SUCCESS;
    if (cuMemAlloc_v2(&p, DEFAULT_POOL_BYTES) == OPARA_CUDA_SUCCESS) { /* a relaxed capture allows it */
        cuMemFree_v2(p);
        return OPARA_CUBLAS_STATUS_SUCCESS;
    }
    report("GEMM captured without a user workspace: the default pool allocates (cuMemAlloc) during capture; "
           "call cublasSetWorkspace after every cublasSetStream");
    return OPARA_CUBLAS_STATUS_ALLOC_FAILED;
}

/* The GEMM kernel over g's batches. */
static opara_cublasStatus_t gemm_batches(opara_cublasHandle_t h, const gemm_call* g) {
    unsigned int grid[3], block[3];
    int done = 0;
    block[0] = GEMM_TILE;
    block[1] = GEMM_TILE;
    block[2] = 1;
    grid[0] = (unsigned int)((g->m + GEMM_TILE * GEMM_THREAD_TILE - 1) / (GEMM_TILE * GEMM_THREAD_TILE));
    grid[1] = (unsigned int)((g->n + GEMM_TILE * GEMM_THREAD_TILE - 1) / (GEMM_TILE * GEMM_THREAD_TILE));
    while (done < g->batch) { /* the grid's z limit splits very large batches into several launches */
        int chunk = g->batch - done < GRID_Z_MAX ? g->batch - done : GRID_Z_MAX;
        size_t esize = g->f16_in ? 2 : sizeof(float);
        const void* a = (const char*)g->a + (long long)done * g->sa * (long long)esize;
        const void* b = (const char*)g->b + (long long)done * g->sb * (long long)esize;
        float* c = g->c + (long long)done * g->sc;
        void* args[18];
        args[0] = (void*)&g->ta;
        args[1] = (void*)&g->tb;
        args[2] = (void*)&g->m;
        args[3] = (void*)&g->n;
        args[4] = (void*)&g->k;
        args[5] = (void*)&g->alpha;
        args[6] = (void*)&a;
        args[7] = (void*)&g->lda;
        args[8] = (void*)&g->sa;
        args[9] = (void*)&b;
        args[10] = (void*)&g->ldb;
        args[11] = (void*)&g->sb;
        args[12] = (void*)&g->beta;
        args[13] = (void*)&c;
        args[14] = (void*)&g->ldc;
        args[15] = (void*)&g->sc;
        args[16] = (void*)&g->rmode;
        args[17] = (void*)&g->f16_in;
        grid[2] = (unsigned int)chunk;
        if (emu_lib_launch("opara_emulib_sgemm", grid, block, h->stream, args) != OPARA_CUDA_SUCCESS)
            return OPARA_CUBLAS_STATUS_EXECUTION_FAILED;
        done += chunk;
    }
    return OPARA_CUBLAS_STATUS_SUCCESS;
}

/* [EMU] Split-K, as cuBLAS does for a long reduction into a small output: a GEMM with batch 1, alpha != 0,
 * k >= 512 and m * n <= 64 * k runs as `splits` partial products over k / splits each (splits = 8, 4 or 2,
 * the first that divides k into chunks of at least 128) in the user workspace, which must hold them (else
 * one kernel, as cuBLAS picks another algorithm; without a user workspace never): a memset of the partials,
 * one GEMM kernel accumulating each chunk into its zeroed partial, and a reduction kernel into C. So a
 * captured call is a memset node and two kernel nodes, and the sum's order differs from one kernel's. */
static int split_k(opara_cublasHandle_t h, const gemm_call* g) {
    static const int choices[3] = {8, 4, 2};
    int i;
    if (g->batch != 1 || g->alpha == 0.0f || g->k < 512 || (long long)g->m * g->n > 64LL * g->k || !h->user_workspace ||
        (size_t)h->workspace % 256 != 0) /* [EMU] a misaligned workspace is never used (cublasSetWorkspace) */
        return 0;
    for (i = 0; i < 3; i++)
        if (g->k % choices[i] == 0 && g->k / choices[i] >= 128 &&
            (size_t)choices[i] * (size_t)g->m * (size_t)g->n * sizeof(float) <= h->workspace_bytes)
            return choices[i];
    return 0;
}

static opara_cublasStatus_t gemm_split_k(opara_cublasHandle_t h, const gemm_call* g, int splits) {
    gemm_call part = *g;
    float* w = (float*)h->workspace;
    void* args[8];
    opara_cublasStatus_t st;
    size_t mn = (size_t)g->m * (size_t)g->n;
    part.k = g->k / splits;
    part.alpha = 1.0f;
    part.beta = 1.0f; /* accumulate into the zeroed partial */
    part.sa = (long long)part.k * (g->ta ? 1 : g->lda);
    part.sb = (long long)part.k * (g->tb ? g->ldb : 1);
    part.c = w;
    part.ldc = g->m;
    part.sc = (long long)mn;
    part.batch = splits;
    if (cuMemsetD32Async((opara_CUdeviceptr)(size_t)w, 0u, (size_t)splits * mn, h->stream) != OPARA_CUDA_SUCCESS)
        return OPARA_CUBLAS_STATUS_EXECUTION_FAILED;
    if ((st = gemm_batches(h, &part)) != OPARA_CUBLAS_STATUS_SUCCESS) return st;
    args[0] = (void*)&part.c;
    args[1] = (void*)&g->c;
    args[2] = (void*)&g->m;
    args[3] = (void*)&g->n;
    args[4] = (void*)&g->ldc;
    args[5] = (void*)&splits;
    args[6] = (void*)&g->alpha;
    args[7] = (void*)&g->beta;
    if (emu_lib_launch_1d("opara_emulib_splitk_reduce", mn, 256, h->stream, args) != OPARA_CUDA_SUCCESS)
        return OPARA_CUBLAS_STATUS_EXECUTION_FAILED;
    return OPARA_CUBLAS_STATUS_SUCCESS;
}

static opara_cublasStatus_t gemm_launch(opara_cublasHandle_t h, const gemm_call* g) {
    int splits = split_k(h, g);
    return splits ? gemm_split_k(h, g, splits) : gemm_batches(h, g);
}

static opara_cublasStatus_t gemm_run(opara_cublasHandle_t h, opara_cublasOperation_t ta, opara_cublasOperation_t tb,
                                     gemm_call* g, const float* alpha, const float* beta, opara_cublasComputeType_t ct) {
    opara_cublasStatus_t st;
    if (!valid(h)) return OPARA_CUBLAS_STATUS_NOT_INITIALIZED;
    /* fp16 operands are exact in FP32, TF32 and FP16 alike: no rounding whatever the mode picks */
    g->rmode = g->f16_in ? EMU_ROUND_NONE : operand_rounding(h, ct);
    /* [EMU] EXECUTION_FAILED: what a launch into a stream of another context would give */
    if (!emu_lib_context_ok("cuBLAS", "GEMM", h->ctx)) return OPARA_CUBLAS_STATUS_EXECUTION_FAILED;
    g->ta = ta != OPARA_CUBLAS_OP_N; /* OP_C is OP_T for real data */
    g->tb = tb != OPARA_CUBLAS_OP_N;
    if ((st = gemm_check(ta, tb, g)) != OPARA_CUBLAS_STATUS_SUCCESS) return st;
    if (g->m == 0 || g->n == 0 || g->batch == 0) return OPARA_CUBLAS_STATUS_SUCCESS;
    if (!alpha || !beta) return OPARA_CUBLAS_STATUS_INVALID_VALUE;
    g->alpha = *alpha; /* CUBLAS_POINTER_MODE_HOST: the values at call time are what a capture records */
    g->beta = *beta;
    if ((g->alpha == 0.0f || g->k == 0) && g->beta == 1.0f) return OPARA_CUBLAS_STATUS_SUCCESS;
    /* [EMU] 16-byte aligned operands (emu_lib_aligned); cuBLAS documents no status for this: INVALID_VALUE */
    if (((g->alpha != 0.0f && g->k > 0) && (!emu_lib_aligned("cuBLAS", "GEMM operand A", g->a) ||
                                             !emu_lib_aligned("cuBLAS", "GEMM operand B", g->b))) ||
        !emu_lib_aligned("cuBLAS", "GEMM output C", g->c))
        return OPARA_CUBLAS_STATUS_INVALID_VALUE;
    if (emu_lib_first_use("cuBLAS", &loaded, &h->setup) != 0) return OPARA_CUBLAS_STATUS_ALLOC_FAILED;
    if ((st = default_pool_during_capture(h)) != OPARA_CUBLAS_STATUS_SUCCESS) return st;
    return gemm_launch(h, g);
}

static opara_cublasStatus_t gemm(opara_cublasHandle_t handle, opara_cublasOperation_t transa,
                                 opara_cublasOperation_t transb, int m, int n, int k, const float* alpha, const void* A,
                                 int lda, long long strideA, const void* B, int ldb, long long strideB, const float* beta,
                                 float* C, int ldc, long long strideC, int batchCount, opara_cublasComputeType_t ct,
                                 int f16_in) {
    gemm_call g;
    memset(&g, 0, sizeof g);
    g.f16_in = f16_in;
    g.m = m;
    g.n = n;
    g.k = k;
    g.a = A;
    g.b = B;
    g.c = C;
    g.lda = lda;
    g.ldb = ldb;
    g.ldc = ldc;
    g.sa = strideA;
    g.sb = strideB;
    g.sc = strideC;
    g.batch = batchCount;
    return gemm_run(handle, transa, transb, &g, alpha, beta, ct);
}

static opara_cublasStatus_t sgemm(opara_cublasHandle_t handle, opara_cublasOperation_t transa,
                                  opara_cublasOperation_t transb, int m, int n, int k, const float* alpha, const float* A,
                                  int lda, long long strideA, const float* B, int ldb, long long strideB, const float* beta,
                                  float* C, int ldc, long long strideC, int batchCount, opara_cublasComputeType_t ct) {
    return gemm(handle, transa, transb, m, n, k, alpha, A, lda, strideA, B, ldb, strideB, beta, C, ldc, strideC,
                batchCount, ct, 0);
}

opara_cublasStatus_t cublasSgemm_v2(opara_cublasHandle_t handle, opara_cublasOperation_t transa,
                                    opara_cublasOperation_t transb, int m, int n, int k, const float* alpha,
                                    const float* A, int lda, const float* B, int ldb, const float* beta, float* C,
                                    int ldc) {
    return sgemm(handle, transa, transb, m, n, k, alpha, A, lda, 0, B, ldb, 0, beta, C, ldc, 0, 1, OPARA_CUBLAS_COMPUTE_32F);
}

opara_cublasStatus_t cublasSgemmStridedBatched(opara_cublasHandle_t handle, opara_cublasOperation_t transa,
                                               opara_cublasOperation_t transb, int m, int n, int k, const float* alpha,
                                               const float* A, int lda, long long int strideA, const float* B, int ldb,
                                               long long int strideB, const float* beta, float* C, int ldc,
                                               long long int strideC, int batchCount) {
    return sgemm(handle, transa, transb, m, n, k, alpha, A, lda, strideA, B, ldb, strideB, beta, C, ldc, strideC, batchCount,
                 OPARA_CUBLAS_COMPUTE_32F);
}

static int fp32_compute(opara_cublasComputeType_t t) {
    return t == OPARA_CUBLAS_COMPUTE_32F || t == OPARA_CUBLAS_COMPUTE_32F_PEDANTIC ||
           t == OPARA_CUBLAS_COMPUTE_32F_FAST_16F || t == OPARA_CUBLAS_COMPUTE_32F_FAST_16BF ||
           t == OPARA_CUBLAS_COMPUTE_32F_FAST_TF32;
}

/* The real-typed rows of the cublasGemmEx table (cuBLAS docs, "cublasGemmEx"), A and B always of one type:
 *   COMPUTE_16F(_PEDANTIC):  16F/16F -> 16F
 *   COMPUTE_32I(_PEDANTIC):  8I/8I -> 32I
 *   COMPUTE_32F(_PEDANTIC):  16BF -> 16BF, 16F -> 16F, 8I -> 32F, 16BF -> 32F, 16F -> 32F, 32F -> 32F
 *   COMPUTE_32F_FAST_16F / _FAST_16BF / _FAST_TF32:  32F -> 32F
 *   COMPUTE_64F(_PEDANTIC):  64F -> 64F
 * and the complex rows (C_8I -> C_32F and C_32F -> C_32F for COMPUTE_32F, C_32F for the FAST types, C_64F).
 * Returns 2 for what the emulator runs (fp32 A/B/C with any 32F compute type; fp16 A/B into fp32 C with
 * COMPUTE_32F(_PEDANTIC)), 1 for a listed combination it does not run, 0 for one the table does not list. */
static int gemm_ex_types(opara_cudaDataType a, opara_cudaDataType b, opara_cudaDataType c, opara_cublasComputeType_t t) {
    int pedantic_32f = t == OPARA_CUBLAS_COMPUTE_32F || t == OPARA_CUBLAS_COMPUTE_32F_PEDANTIC;
    if (a != b) return 0;
    if (a == OPARA_CUDA_R_32F && c == OPARA_CUDA_R_32F) return fp32_compute(t) ? 2 : 0;
    if (a == OPARA_CUDA_C_32F && c == OPARA_CUDA_C_32F) return fp32_compute(t); /* the complex rows */
    if (a == OPARA_CUDA_C_8I && c == OPARA_CUDA_C_32F) return pedantic_32f;
    if (a == OPARA_CUDA_C_64F && c == OPARA_CUDA_C_64F)
        return t == OPARA_CUBLAS_COMPUTE_64F || t == OPARA_CUBLAS_COMPUTE_64F_PEDANTIC;
    if (a == OPARA_CUDA_R_16F && c == OPARA_CUDA_R_32F) return pedantic_32f ? 2 : 0;
    if (pedantic_32f)
        return (a == OPARA_CUDA_R_16BF && (c == OPARA_CUDA_R_16BF || c == OPARA_CUDA_R_32F)) ||
               (a == OPARA_CUDA_R_16F && c == OPARA_CUDA_R_16F) || (a == OPARA_CUDA_R_8I && c == OPARA_CUDA_R_32F);
    if (t == OPARA_CUBLAS_COMPUTE_16F || t == OPARA_CUBLAS_COMPUTE_16F_PEDANTIC)
        return a == OPARA_CUDA_R_16F && c == OPARA_CUDA_R_16F;
    if (t == OPARA_CUBLAS_COMPUTE_32I || t == OPARA_CUBLAS_COMPUTE_32I_PEDANTIC)
        return a == OPARA_CUDA_R_8I && c == OPARA_CUDA_R_32I;
    if (t == OPARA_CUBLAS_COMPUTE_64F || t == OPARA_CUBLAS_COMPUTE_64F_PEDANTIC)
        return a == OPARA_CUDA_R_64F && c == OPARA_CUDA_R_64F;
    return 0;
}

/* CUBLAS_GEMM_DEFAULT, CUBLAS_GEMM_ALGO0..23, CUBLAS_GEMM_DEFAULT_TENSOR_OP, CUBLAS_GEMM_ALGO0..15_TENSOR_OP. */
static int known_algo(opara_cublasGemmAlgo_t a) {
    int v = (int)a;
    return (v >= -1 && v <= 23) || (v >= 99 && v <= 115);
}

opara_cublasStatus_t cublasGemmEx(opara_cublasHandle_t handle, opara_cublasOperation_t transa,
                                  opara_cublasOperation_t transb, int m, int n, int k, const void* alpha,
                                  const void* A, opara_cudaDataType Atype, int lda, const void* B,
                                  opara_cudaDataType Btype, int ldb, const void* beta, void* C, opara_cudaDataType Ctype,
                                  int ldc, opara_cublasComputeType_t computeType, opara_cublasGemmAlgo_t algo) {
    if (!valid(handle)) return OPARA_CUBLAS_STATUS_NOT_INITIALIZED;
    int types;
    if (!known_algo(algo)) return OPARA_CUBLAS_STATUS_INVALID_VALUE;
    types = gemm_ex_types(Atype, Btype, Ctype, computeType);
    if (types != 2) { /* the docs: NOT_SUPPORTED for a combination of types it does not support */
        char msg[200];
        snprintf(msg, sizeof msg, "cublasGemmEx: types A %d, B %d, C %d with compute type %d: %s", (int)Atype, (int)Btype,
                 (int)Ctype, (int)computeType,
                 types ? "supported by cuBLAS but not emulated (fp32, or fp16 A/B into fp32 C)"
                       : "not a combination of the cublasGemmEx table");
        report(msg);
        return OPARA_CUBLAS_STATUS_NOT_SUPPORTED;
    }
    return gemm(handle, transa, transb, m, n, k, (const float*)alpha, A, lda, 0, B, ldb, 0, (const float*)beta, (float*)C,
                ldc, 0, 1, computeType, Atype == OPARA_CUDA_R_16F);
}

const char* cublasGetStatusName(opara_cublasStatus_t status) {
    switch (status) {
#define NAME_CASE(name, value) \
    case OPARA_##name: return #name;
        OPARA_CUBLAS_STATUS_LIST(NAME_CASE)
#undef NAME_CASE
    }
    return "unrecognized status";
}

const char* cublasGetStatusString(opara_cublasStatus_t status) {
    switch (status) {
    case OPARA_CUBLAS_STATUS_SUCCESS: return "success";
    case OPARA_CUBLAS_STATUS_NOT_INITIALIZED: return "the handle is not valid or the library is not initialized";
    case OPARA_CUBLAS_STATUS_ALLOC_FAILED: return "a resource could not be allocated";
    case OPARA_CUBLAS_STATUS_INVALID_VALUE: return "a parameter has an unsupported value";
    case OPARA_CUBLAS_STATUS_ARCH_MISMATCH: return "the device lacks a feature the function needs";
    case OPARA_CUBLAS_STATUS_MAPPING_ERROR: return "a GPU memory access failed";
    case OPARA_CUBLAS_STATUS_EXECUTION_FAILED: return "the kernel could not be launched";
    case OPARA_CUBLAS_STATUS_INTERNAL_ERROR: return "an internal operation failed";
    case OPARA_CUBLAS_STATUS_NOT_SUPPORTED: return "the requested functionality is not supported";
    case OPARA_CUBLAS_STATUS_LICENSE_ERROR: return "the license check failed";
    }
    return "unrecognized status";
}
