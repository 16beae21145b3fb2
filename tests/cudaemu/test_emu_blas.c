/* The cuBLAS fake (build/cudaemu/libcublas.so, loaded with opara_cuda.h's loader) against a naive column-major
 * GEMM written here, NVIDIA's documented argument checks, and stream capture: a captured SGEMM is kernel work
 * of the graph and its replay computes the same product. Runs unchanged on NVIDIA's libcublas
 * (`make test-gpu`); the emulator-only workspace rule skips there. */
#define OPARA_CUDA_IMPLEMENTATION
#define OPARA_CUDA_STATIC
#include "opara_cuda.h"

#include <math.h>
#include <pthread.h>
#include <time.h>

#include "emu_test.h"

typedef struct blas {
    tcu_driver* d;
    opara_cuda_cublas lib;
    opara_cublasHandle_t h;
    char err[1024];
} blas;

static int blas_open(blas* b, tcu_driver* d) {
    char buf[OPARA_CUDA_PATH_MAX];
    const char* path = tcu_lib_path("OPARA_CUBLAS", "libcublas.so", buf, sizeof buf);
    memset(b, 0, sizeof(*b));
    b->d = d;
    if (opara_cuda_cublas_load(&b->lib, path, b->err, sizeof b->err) != OPARA_CUDA_LOAD_OK) return -1;
    return b->lib.cublasCreate_v2(&b->h) == OPARA_CUBLAS_STATUS_SUCCESS ? 0 : -1;
}

static void blas_close(blas* b) {
    if (b->h) b->lib.cublasDestroy_v2(b->h);
    opara_cuda_cublas_unload(&b->lib);
}

#define BLAS(b, d)                                                                                             \
    blas b;                                                                                                   \
    TCU_REQUIRE_DRIVER(d);                                                                                     \
    BLAS_OPEN(b, d)
#define BLAS_EMU(b, d)                                                                                         \
    blas b;                                                                                                   \
    TCU_REQUIRE_EMULATOR(d);                                                                                   \
    BLAS_OPEN(b, d)
#define BLAS_OPEN(b, d)                                                                                        \
    if (blas_open(&b, d) != 0) {                                                                               \
        OT_LOG("%s", b.err);                                                                                   \
        blas_close(&b);                                                                                        \
        REQUIRE(!"cuBLAS (fake) loads and creates a handle");                                                 \
    }

/* Column-major reference: C = alpha * op(A) op(B) + beta * C, in double. */
static void ref_gemm(int ta, int tb, int m, int n, int k, float alpha, const float* A, int lda, const float* B, int ldb,
                     float beta, const float* C, int ldc, double* out) {
    int i, j, l;
    for (j = 0; j < n; j++)
        for (i = 0; i < m; i++) {
            double acc = 0;
            for (l = 0; l < k; l++) {
                double a = ta ? A[l + i * lda] : A[i + l * lda];
                double bv = tb ? B[j + l * ldb] : B[l + j * ldb];
                acc += a * bv;
            }
            out[i + j * ldc] = alpha * acc + (beta != 0.0f ? beta * (double)C[i + j * ldc] : 0.0);
        }
}

/* Device copies of host arrays. */
static tcu_devptr upload(tcu_driver* d, const float* host, size_t n) {
    tcu_devptr p = 0;
    if (d->MemAlloc(&p, (n ? n : 1) * sizeof(float)) != 0) return 0; /* cuMemAlloc refuses 0 bytes */
    if (host && n && d->MemcpyHtoD(p, host, n * sizeof(float)) != 0) return 0;
    return p;
}

OT_TEST(loader_finds_every_cublas_entry_point) {
    BLAS(b, d);
    CHECK(b.lib.cublasGemmEx != NULL && b.lib.cublasSgemmStridedBatched != NULL);
    CHECK(b.lib.cublasGetStatusName != NULL); /* optional in opara's table, present in cuBLAS 11.4+ and the fake */
    CHECK_STR(b.lib.cublasGetStatusName(OPARA_CUBLAS_STATUS_INVALID_VALUE), "CUBLAS_STATUS_INVALID_VALUE");
    {
        int v = 0, major = 0;
        CHECK_EQ(b.lib.cublasGetVersion_v2(b.h, &v), OPARA_CUBLAS_STATUS_SUCCESS);
        CHECK_EQ(b.lib.cublasGetProperty(OPARA_MAJOR_VERSION, &major), OPARA_CUBLAS_STATUS_SUCCESS);
        CHECK(major >= 11 && v / 10000 == major);
    }
    blas_close(&b);
}

/* One sgemm case on the device vs the reference, with padded leading dimensions. */
static void sgemm_case(opara_test* T, blas* b, opara_cublasOperation_t opa, opara_cublasOperation_t opb, int m, int n,
                       int k, float alpha, float beta, int nan_c) {
    tcu_driver* d = b->d;
    int ta = opa != OPARA_CUBLAS_OP_N, tb = opb != OPARA_CUBLAS_OP_N;
    int lda = (ta ? k : m) + 3, ldb = (tb ? n : k) + 1, ldc = m + 2;
    size_t na = (size_t)lda * (ta ? m : k), nb = (size_t)ldb * (tb ? k : n), nc = (size_t)ldc * n, bad;
    float *A = (float*)malloc(na * 4), *B = (float*)malloc(nb * 4), *C = (float*)malloc(nc * 4), *got = (float*)malloc(nc * 4);
    double* want = (double*)malloc(nc * sizeof(double));
    tcu_devptr dA, dB, dC;
    size_t i;
    REQUIRE(A && B && C && got && want);
    tcu_fill(A, na, 1);
    tcu_fill(B, nb, 2);
    tcu_fill(C, nc, 3);
    if (nan_c)
        for (i = 0; i < nc; i++) C[i] = NAN; /* beta == 0: C must not be read */
    ref_gemm(ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, want);
    dA = upload(d, A, na);
    dB = upload(d, B, nb);
    dC = upload(d, C, nc);
    REQUIRE(dA && dB && dC);
    CHECK_EQ(b->lib.cublasSgemm_v2(b->h, opa, opb, m, n, k, &alpha, (const float*)(size_t)dA, lda,
                                   (const float*)(size_t)dB, ldb, &beta, (float*)(size_t)dC, ldc),
             OPARA_CUBLAS_STATUS_SUCCESS);
    CHECK_EQ(d->MemcpyDtoH(got, dC, nc * 4), 0);
    for (bad = 0, i = 0; i < nc; i++) /* compare rows < m (padding rows are C's own business) */
        if (i % (size_t)ldc < (size_t)m) {
            want[bad] = want[i];
            got[bad++] = got[i];
        }
    nc = bad;
    bad = tcu_first_mismatch(want, got, nc, 1e-5);
    if (bad != nc) OT_LOG("op %d/%d m=%d n=%d k=%d: C[%zu] = %g, want %g", opa, opb, m, n, k, bad, got[bad], want[bad]);
    CHECK(bad == nc);
    d->MemFree(dA);
    d->MemFree(dB);
    d->MemFree(dC);
    free(A);
    free(B);
    free(C);
    free(got);
    free(want);
}

OT_TEST(sgemm_matches_reference_for_every_transpose) {
    static const opara_cublasOperation_t ops[3] = {OPARA_CUBLAS_OP_N, OPARA_CUBLAS_OP_T, OPARA_CUBLAS_OP_C};
    int i, j;
    BLAS(b, d);
    for (i = 0; i < 3; i++)
        for (j = 0; j < 3; j++) sgemm_case(T, &b, ops[i], ops[j], 37, 19, 23, 1.5f, -0.5f, 0);
    sgemm_case(T, &b, OPARA_CUBLAS_OP_T, OPARA_CUBLAS_OP_N, 1, 1, 1, 2.0f, 0.0f, 1);
    sgemm_case(T, &b, OPARA_CUBLAS_OP_N, OPARA_CUBLAS_OP_T, 17, 33, 5, 1.0f, 0.0f, 1); /* NaN C, beta 0 */
    sgemm_case(T, &b, OPARA_CUBLAS_OP_N, OPARA_CUBLAS_OP_N, 9, 7, 0, 1.0f, 2.0f, 0);  /* k = 0: C = beta C */
    sgemm_case(T, &b, OPARA_CUBLAS_OP_N, OPARA_CUBLAS_OP_N, 9, 7, 3, 0.0f, 0.25f, 0); /* alpha = 0 */
    blas_close(&b);
}

OT_TEST(strided_batched_sgemm_and_gemm_ex) {
    enum { M = 13, N = 11, K = 7, BATCH = 3, LDA = M, LDB = K + 2, LDC = M + 1 };
    const long long sa = LDA * K + 5, sb = LDB * N, sc = LDC * N + 3;
    float A[(LDA * K + 5) * BATCH], B[LDB * N * BATCH], C[(LDC * N + 3) * BATCH], got[(LDC * N + 3) * BATCH];
    double want[(LDC * N + 3) * BATCH];
    float alpha = 0.75f, beta = 0.5f;
    int i;
    size_t bad, n = sizeof C / sizeof C[0];
    tcu_devptr dA, dB, dC;
    BLAS(b, d);
    tcu_fill(A, sizeof A / 4, 11);
    tcu_fill(B, sizeof B / 4, 12);
    tcu_fill(C, n, 13);
    for (i = 0; i < (int)n; i++) want[i] = C[i];
    for (i = 0; i < BATCH; i++)
        ref_gemm(0, 0, M, N, K, alpha, A + i * sa, LDA, B + i * sb, LDB, beta, C + i * sc, LDC, want + i * sc);
    dA = upload(d, A, sizeof A / 4);
    dB = upload(d, B, sizeof B / 4);
    dC = upload(d, C, n);
    REQUIRE(dA && dB && dC);
    CHECK_EQ(b.lib.cublasSgemmStridedBatched(b.h, OPARA_CUBLAS_OP_N, OPARA_CUBLAS_OP_N, M, N, K, &alpha,
                                             (const float*)(size_t)dA, LDA, sa, (const float*)(size_t)dB, LDB, sb, &beta,
                                             (float*)(size_t)dC, LDC, sc, BATCH),
             OPARA_CUBLAS_STATUS_SUCCESS);
    CHECK_EQ(d->MemcpyDtoH(got, dC, sizeof got), 0);
    for (i = 0; i < (int)n; i++) /* rows m..ldc-1 and the gaps between batches are left alone */
        if ((i % sc) >= LDC * N || (i % sc) % LDC >= M) want[i] = C[i];
    bad = tcu_first_mismatch(want, got, n, 1e-5);
    if (bad != n) OT_LOG("C[%zu] = %g, want %g", bad, got[bad], want[bad]);
    CHECK(bad == n);
    /* GemmEx with fp32 operands = the first batch again, from the original C */
    CHECK_EQ(d->MemcpyHtoD(dC, C, sizeof C), 0);
    CHECK_EQ(b.lib.cublasGemmEx(b.h, OPARA_CUBLAS_OP_N, OPARA_CUBLAS_OP_N, M, N, K, &alpha, (const void*)(size_t)dA,
                                OPARA_CUDA_R_32F, LDA, (const void*)(size_t)dB, OPARA_CUDA_R_32F, LDB, &beta,
                                (void*)(size_t)dC, OPARA_CUDA_R_32F, LDC, OPARA_CUBLAS_COMPUTE_32F, OPARA_CUBLAS_GEMM_DEFAULT),
             OPARA_CUBLAS_STATUS_SUCCESS);
    CHECK_EQ(d->MemcpyDtoH(got, dC, sizeof got), 0);
    bad = tcu_first_mismatch(want, got, (size_t)(LDC * N), 1e-5);
    CHECK(bad == (size_t)(LDC * N));
    CHECK_EQ(b.lib.cublasGemmEx(b.h, OPARA_CUBLAS_OP_N, OPARA_CUBLAS_OP_N, M, N, K, &alpha, (const void*)(size_t)dA,
                                OPARA_CUDA_R_32F, LDA, (const void*)(size_t)dB, OPARA_CUDA_R_32F, LDB, &beta,
                                (void*)(size_t)dC, OPARA_CUDA_R_32F, LDC, OPARA_CUBLAS_COMPUTE_32F_FAST_TF32,
                                OPARA_CUBLAS_GEMM_DEFAULT_TENSOR_OP),
             OPARA_CUBLAS_STATUS_SUCCESS);
    d->CtxSynchronize();
    d->MemFree(dA);
    d->MemFree(dB);
    d->MemFree(dC);
    blas_close(&b);
}

/* NVIDIA's argument rules (cuBLAS §2.7.1 and the reference BLAS): nothing is launched, C is unchanged. */
OT_TEST(invalid_arguments_give_invalid_value) {
    float A[64], alpha = 1.0f, beta = 0.0f, got[64];
    tcu_devptr dA;
    int i;
    BLAS(b, d);
    tcu_fill(A, 64, 5);
    dA = upload(d, A, 64);
    REQUIRE(dA);
#define SG(ta, tb, m, n, k, lda, ldb, ldc)                                                                         \
    b.lib.cublasSgemm_v2(b.h, ta, tb, m, n, k, &alpha, (const float*)(size_t)dA, lda, (const float*)(size_t)dA, ldb, \
                         &beta, (float*)(size_t)dA, ldc)
    CHECK_EQ(SG(OPARA_CUBLAS_OP_N, OPARA_CUBLAS_OP_N, 4, 4, 4, 3, 4, 4), OPARA_CUBLAS_STATUS_INVALID_VALUE); /* lda < m */
    CHECK_EQ(SG(OPARA_CUBLAS_OP_T, OPARA_CUBLAS_OP_N, 4, 4, 5, 4, 5, 4), OPARA_CUBLAS_STATUS_INVALID_VALUE); /* lda < k */
    CHECK_EQ(SG(OPARA_CUBLAS_OP_N, OPARA_CUBLAS_OP_N, 4, 4, 5, 4, 4, 4), OPARA_CUBLAS_STATUS_INVALID_VALUE); /* ldb < k */
    CHECK_EQ(SG(OPARA_CUBLAS_OP_N, OPARA_CUBLAS_OP_T, 4, 6, 2, 4, 5, 4), OPARA_CUBLAS_STATUS_INVALID_VALUE); /* ldb < n */
    CHECK_EQ(SG(OPARA_CUBLAS_OP_N, OPARA_CUBLAS_OP_N, 4, 2, 2, 4, 2, 3), OPARA_CUBLAS_STATUS_INVALID_VALUE); /* ldc < m */
    CHECK_EQ(SG(OPARA_CUBLAS_OP_N, OPARA_CUBLAS_OP_N, -1, 2, 2, 4, 2, 4), OPARA_CUBLAS_STATUS_INVALID_VALUE);
    CHECK_EQ(SG(OPARA_CUBLAS_OP_N, OPARA_CUBLAS_OP_N, 2, 2, -2, 4, 2, 4), OPARA_CUBLAS_STATUS_INVALID_VALUE);
    CHECK_EQ(SG((opara_cublasOperation_t)7, OPARA_CUBLAS_OP_N, 2, 2, 2, 4, 2, 4), OPARA_CUBLAS_STATUS_INVALID_VALUE);
    CHECK_EQ(SG(OPARA_CUBLAS_OP_N, OPARA_CUBLAS_OP_N, 0, 4, 4, 1, 4, 1), OPARA_CUBLAS_STATUS_SUCCESS); /* quick return */
#undef SG
    CHECK_EQ(b.lib.cublasSgemmStridedBatched(b.h, OPARA_CUBLAS_OP_N, OPARA_CUBLAS_OP_N, 2, 2, 2, &alpha,
                                             (const float*)(size_t)dA, 2, 4, (const float*)(size_t)dA, 2, 4, &beta,
                                             (float*)(size_t)dA, 2, 4, -1),
             OPARA_CUBLAS_STATUS_INVALID_VALUE);
    CHECK_EQ(b.lib.cublasSgemm_v2(NULL, OPARA_CUBLAS_OP_N, OPARA_CUBLAS_OP_N, 2, 2, 2, &alpha, (const float*)(size_t)dA,
                                  2, (const float*)(size_t)dA, 2, &beta, (float*)(size_t)dA, 2),
             OPARA_CUBLAS_STATUS_NOT_INITIALIZED);
    /* cuBLAS 13's cublasMath_t: a base mode OR'ed with flag bits (4 FP32_EMULATED_BF16X9, 8 FP64_EMULATED_FIXEDPOINT,
     * 16 DISALLOW_REDUCED_PRECISION_REDUCTION); 9 = TENSOR_OP | FP64_EMULATED_FIXEDPOINT (SUCCESS on cuBLAS 13.1) */
    CHECK_EQ(b.lib.cublasSetMathMode(b.h, (opara_cublasMath_t)9), OPARA_CUBLAS_STATUS_SUCCESS);
    CHECK_EQ(b.lib.cublasSetMathMode(b.h, (opara_cublasMath_t)(OPARA_CUBLAS_TF32_TENSOR_OP_MATH |
                                                               OPARA_CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION)),
             OPARA_CUBLAS_STATUS_SUCCESS);
    CHECK_EQ(b.lib.cublasSetMathMode(b.h, OPARA_CUBLAS_DEFAULT_MATH), OPARA_CUBLAS_STATUS_SUCCESS);
    /* the docs ask for a 256-byte aligned workspace, but cublasSetWorkspace does not check it (cuBLAS 13.1) */
    CHECK_EQ(b.lib.cublasSetWorkspace_v2(b.h, (void*)(size_t)(dA + 4), 64), OPARA_CUBLAS_STATUS_SUCCESS);
    CHECK_EQ(b.lib.cublasSetStream_v2(b.h, NULL), OPARA_CUBLAS_STATUS_SUCCESS); /* back to the default pool */
    /* A and B of different types: no row of the cublasGemmEx table (the docs' code is NOT_SUPPORTED; only the
     * refusal is asserted, the real library's code for it is unverified) */
    CHECK_EQ(b.lib.cublasGemmEx(b.h, OPARA_CUBLAS_OP_N, OPARA_CUBLAS_OP_N, 2, 2, 2, &alpha, (const void*)(size_t)dA,
                                OPARA_CUDA_R_16F, 2, (const void*)(size_t)dA, OPARA_CUDA_R_32F, 2, &beta, (void*)(size_t)dA,
                                OPARA_CUDA_R_32F, 2, OPARA_CUBLAS_COMPUTE_32F, OPARA_CUBLAS_GEMM_DEFAULT) == OPARA_CUBLAS_STATUS_SUCCESS,
             0);
    CHECK_EQ(d->CtxSynchronize(), 0);
    CHECK_EQ(d->MemcpyDtoH(got, dA, sizeof got), 0);
    for (i = 0; i < 64; i++) CHECK(got[i] == A[i]);
    d->MemFree(dA);
    blas_close(&b);
}

/* [EMU] what the emulator decides where the real library's answer is unverified: a math mode with bits that
 * no cublasMath_t value uses is refused. */
OT_TEST(unknown_math_mode_bits_are_refused) {
    BLAS_EMU(b, d);
    CHECK_EQ(b.lib.cublasSetMathMode(b.h, (opara_cublasMath_t)32), OPARA_CUBLAS_STATUS_INVALID_VALUE);
    CHECK_EQ(b.lib.cublasSetMathMode(b.h, (opara_cublasMath_t)-1), OPARA_CUBLAS_STATUS_INVALID_VALUE);
    CHECK_EQ(b.lib.cublasSetMathMode(b.h, (opara_cublasMath_t)31), OPARA_CUBLAS_STATUS_SUCCESS);
    blas_close(&b);
}

/* IEEE binary16 bits of v, a normal half value or zero (the callers' data is exact in half). */
static unsigned short half_bits(float v) {
    int e;
    float f;
    unsigned short sign = v < 0 ? 0x8000u : 0;
    if (v == 0.0f) return sign;
    f = frexpf(fabsf(v), &e); /* |v| = f 2^e, f in [0.5, 1) */
    return (unsigned short)(sign | (unsigned short)((e + 14) << 10) | (unsigned short)((f * 2.0f - 1.0f) * 1024.0f));
}

/* One GemmEx with fp16 A and B into fp32 C (a row of the docs' cublasGemmEx table, CUBLAS_COMPUTE_32F):
 * op(A) = A^T (k x m stored, lda padded), values exact in half, plus (short sums) the smallest subnormal and
 * the largest finite half; compared with the product of the same values in double. */
static void half_gemm_case(opara_test* T, blas* b, int m, int n, int k) {
    tcu_driver* d = b->d;
    int lda = k + 3, ldb = k, ldc = m + 1, i;
    size_t na = (size_t)lda * m, nb = (size_t)ldb * n, nc = (size_t)ldc * n, bad;
    float *A = (float*)malloc(na * 4), *B = (float*)malloc(nb * 4), *C = (float*)malloc(nc * 4), *got = (float*)malloc(nc * 4);
    unsigned short *hA = (unsigned short*)malloc(na * 2), *hB = (unsigned short*)malloc(nb * 2);
    double* want = (double*)malloc(nc * sizeof(double));
    float alpha = 0.75f, beta = -0.5f;
    tcu_devptr dA = 0, dB = 0, dC;
    REQUIRE(A && B && C && got && hA && hB && want);
    tcu_fill(A, na, 91);
    tcu_fill(B, nb, 92);
    tcu_fill(C, nc, 93);
    for (i = 0; i < (int)na; i++) A[i] = floorf(A[i] * 1024.0f) / 1024.0f; /* multiples of 2^-10 in [-1, 1) */
    for (i = 0; i < (int)nb; i++) B[i] = floorf(B[i] * 1024.0f) / 1024.0f;
    for (i = 0; i < (int)na; i++) hA[i] = half_bits(A[i]);
    for (i = 0; i < (int)nb; i++) hB[i] = half_bits(B[i]);
    if (k < 64) { /* short sums only: next to -65504 longer ones lose the small products' bits */
        A[1] = ldexpf(1.0f, -24), hA[1] = 0x0001u; /* the smallest subnormal */
        A[lda] = -65504.0f, hA[lda] = 0xfbffu;      /* the largest finite half */
    }
    ref_gemm(1, 0, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, want);
    REQUIRE(d->MemAlloc(&dA, na * 2) == 0 && d->MemAlloc(&dB, nb * 2) == 0 && (dC = upload(d, C, nc)) != 0);
    CHECK_EQ(d->MemcpyHtoD(dA, hA, na * 2), 0);
    CHECK_EQ(d->MemcpyHtoD(dB, hB, nb * 2), 0);
    CHECK_EQ(b->lib.cublasGemmEx(b->h, OPARA_CUBLAS_OP_T, OPARA_CUBLAS_OP_N, m, n, k, &alpha, (const void*)(size_t)dA,
                                 OPARA_CUDA_R_16F, lda, (const void*)(size_t)dB, OPARA_CUDA_R_16F, ldb, &beta,
                                 (void*)(size_t)dC, OPARA_CUDA_R_32F, ldc, OPARA_CUBLAS_COMPUTE_32F, OPARA_CUBLAS_GEMM_DEFAULT),
             OPARA_CUBLAS_STATUS_SUCCESS);
    CHECK_EQ(d->CtxSynchronize(), 0);
    CHECK_EQ(d->MemcpyDtoH(got, dC, nc * 4), 0);
    for (i = 0; i < (int)nc; i++) /* the padding row is C's own */
        if (i % ldc >= m) want[i] = C[i];
    bad = tcu_first_mismatch(want, got, nc, 1e-5);
    if (bad != nc) OT_LOG("m=%d n=%d k=%d: C[%zu] = %g, want %g", m, n, k, bad, got[bad], want[bad]);
    CHECK(bad == nc);
    d->MemFree(dA);
    d->MemFree(dB);
    d->MemFree(dC);
    free(A);
    free(B);
    free(C);
    free(got);
    free(hA);
    free(hB);
    free(want);
}

OT_TEST(gemm_ex_half_inputs_into_float_output) {
    tcu_devptr ws;
    BLAS(b, d);
    half_gemm_case(T, &b, 13, 11, 7);
    REQUIRE(d->MemAlloc(&ws, 1 << 16) == 0);
    CHECK_EQ(b.lib.cublasSetWorkspace_v2(b.h, (void*)(size_t)ws, 1 << 16), OPARA_CUBLAS_STATUS_SUCCESS);
    half_gemm_case(T, &b, 4, 3, 1024); /* a long reduction (split-K in the emulator) */
    CHECK_EQ(d->CtxSynchronize(), 0);
    blas_close(&b);
    d->MemFree(ws);
}

/* C = A B captured on s (with a user workspace), replayed after A changes: the graph holds kernel nodes. */
OT_TEST(captured_sgemm_is_kernel_work_and_replays) {
    enum { M = 8, N = 6, K = 5 };
    float A[M * K], B[K * N], got[M * N], alpha = 1.0f, beta = 0.0f;
    double want[M * N];
    tcu_devptr dA, dB, dC, ws;
    tcu_stream s;
    tcu_graph g = NULL;
    tcu_exec e = NULL;
    tcu_node nodes[16];
    size_t n = 16, i, kernels = 0;
    int type;
    BLAS(b, d);
    tcu_fill(A, M * K, 21);
    tcu_fill(B, K * N, 22);
    dA = upload(d, A, M * K);
    dB = upload(d, B, K * N);
    dC = upload(d, NULL, M * N);
    REQUIRE(dA && dB && dC && d->MemAlloc(&ws, 1 << 16) == 0 && d->StreamCreate(&s, 1) == 0);
    CHECK_EQ(b.lib.cublasSetStream_v2(b.h, (opara_CUstream)s), OPARA_CUBLAS_STATUS_SUCCESS);
    CHECK_EQ(b.lib.cublasSetWorkspace_v2(b.h, (void*)(size_t)ws, 1 << 16), OPARA_CUBLAS_STATUS_SUCCESS);
    CHECK_EQ(b.lib.cublasSgemm_v2(b.h, OPARA_CUBLAS_OP_N, OPARA_CUBLAS_OP_N, M, N, K, &alpha, (const float*)(size_t)dA, M,
                                  (const float*)(size_t)dB, K, &beta, (float*)(size_t)dC, M),
             OPARA_CUBLAS_STATUS_SUCCESS); /* warm-up: the handle's first call is not capturable */
    CHECK_EQ(d->StreamSynchronize(s), 0);
    CHECK_EQ(d->StreamBeginCapture(s, 0), 0);
    CHECK_EQ(b.lib.cublasSgemm_v2(b.h, OPARA_CUBLAS_OP_N, OPARA_CUBLAS_OP_N, M, N, K, &alpha, (const float*)(size_t)dA, M,
                                  (const float*)(size_t)dB, K, &beta, (float*)(size_t)dC, M),
             OPARA_CUBLAS_STATUS_SUCCESS);
    REQUIRE(d->StreamEndCapture(s, &g) == 0);
    CHECK_EQ(d->GraphGetNodes(g, nodes, &n), 0);
    for (i = 0; i < n && i < 16; i++)
        if (d->GraphNodeGetType(nodes[i], &type) == 0 && type == 0) kernels++;
    CHECK(kernels >= 1);
    CHECK_EQ(d->GraphInstantiate(&e, g, 0), 0);
    for (i = 0; i < M * K; i++) A[i] = -A[i] * 2.0f; /* the graph reads the buffers at replay */
    CHECK_EQ(d->MemcpyHtoD(dA, A, sizeof A), 0);
    ref_gemm(0, 0, M, N, K, alpha, A, M, B, K, beta, got, M, want);
    CHECK_EQ(d->GraphLaunch(e, s), 0);
    CHECK_EQ(d->StreamSynchronize(s), 0);
    CHECK_EQ(d->MemcpyDtoH(got, dC, sizeof got), 0);
    CHECK(tcu_first_mismatch(want, got, M * N, 1e-5) == M * N);
    d->GraphExecDestroy(e);
    d->GraphDestroy(g);
    blas_close(&b);
    d->StreamDestroy(s);
    d->MemFree(dA);
    d->MemFree(dB);
    d->MemFree(dC);
    d->MemFree(ws);
}

/* [EMU] cublasSetStream resets the workspace to the default pool, which allocates during capture: the call
 * fails and the capture is invalidated (docs/TESTING-GPU.md; a real cuBLAS 12.2+ would add memory nodes). */
OT_TEST(capture_without_user_workspace_fails) {
    float alpha = 1.0f, beta = 0.0f;
    tcu_devptr dA, ws;
    tcu_stream s;
    tcu_graph g = NULL;
    BLAS_EMU(b, d);
    {
        dA = upload(d, NULL, 16);
        REQUIRE(dA && d->MemAlloc(&ws, 1 << 16) == 0 && d->StreamCreate(&s, 1) == 0);
        CHECK_EQ(b.lib.cublasSetWorkspace_v2(b.h, (void*)(size_t)ws, 1 << 16), OPARA_CUBLAS_STATUS_SUCCESS);
        CHECK_EQ(b.lib.cublasSgemm_v2(b.h, OPARA_CUBLAS_OP_N, OPARA_CUBLAS_OP_N, 4, 4, 4, &alpha, (const float*)(size_t)dA,
                                      4, (const float*)(size_t)dA, 4, &beta, (float*)(size_t)dA, 4),
                 OPARA_CUBLAS_STATUS_SUCCESS); /* warm-up */
        CHECK_EQ(b.lib.cublasSetStream_v2(b.h, (opara_CUstream)s), OPARA_CUBLAS_STATUS_SUCCESS); /* drops it */
        CHECK_EQ(d->StreamBeginCapture(s, 0), 0);
        CHECK_EQ(b.lib.cublasSgemm_v2(b.h, OPARA_CUBLAS_OP_N, OPARA_CUBLAS_OP_N, 4, 4, 4, &alpha, (const float*)(size_t)dA,
                                      4, (const float*)(size_t)dA, 4, &beta, (float*)(size_t)dA, 4),
                 OPARA_CUBLAS_STATUS_ALLOC_FAILED);
        CHECK_EQ(d->StreamEndCapture(s, &g), TCU_CAPTURE_INVALIDATED);
        if (g) d->GraphDestroy(g);
        CHECK_EQ(d->CtxSynchronize(), 0); /* the warm-up GEMM still reads dA on the default stream */
        blas_close(&b);
        d->StreamDestroy(s);
        d->MemFree(dA);
        d->MemFree(ws);
    }
}

OT_TEST(handle_calls_during_capture_are_unsafe) { /* cublasCreate allocates device memory (rule 1.5) */
    opara_cublasHandle_t h2 = NULL;
    tcu_stream s;
    tcu_graph g = NULL;
    BLAS_EMU(b, d);
    {
        REQUIRE(d->StreamCreate(&s, 1) == 0);
        CHECK_EQ(d->StreamBeginCapture(s, 0), 0);
        CHECK(b.lib.cublasCreate_v2(&h2) != OPARA_CUBLAS_STATUS_SUCCESS);
        CHECK_EQ(d->StreamEndCapture(s, &g), TCU_CAPTURE_INVALIDATED);
        if (g) d->GraphDestroy(g);
        d->StreamDestroy(s);
        blas_close(&b);
    }
}


/* The operand precision NVIDIA documents per math mode and compute type (cublas_api.h cublasMath_t,
 * cublasComputeType_t), against a reference that rounds the operands itself: TF32 = 10 explicit mantissa
 * bits, nearest, ties away from zero (crt/mma.h __float_to_tf32, PTX cvt.rna.tf32.f32); FP16 and BF16 =
 * round-to-nearest-even. On a real GPU only the documented FP32 cases are checked (a library "allows" TF32
 * but need not use it on a tiny GEMM); the emulator is switched to an H100 and a Turing profile. */
static float round_bits(float v, int keep) { /* nearest, ties away, to `keep` explicit mantissa bits */
    union { float f; unsigned int u; } b;
    unsigned int drop = 23u - (unsigned int)keep;
    b.f = v;
    b.u = (b.u + (1u << (drop - 1))) & ~((1u << drop) - 1u);
    return b.f;
}

static float round_even_bits(float v, int keep) {
    union { float f; unsigned int u; } b;
    unsigned int drop = 23u - (unsigned int)keep;
    b.f = v;
    b.u = (b.u + (1u << (drop - 1)) - 1u + ((b.u >> drop) & 1u)) & ~((1u << drop) - 1u);
    return b.f;
}

enum { PREC_FP32, PREC_TF32, PREC_FP16, PREC_BF16 };

/* C = A B for a 2x2x4 GEMM whose operands tell the precisions apart: 1 + 2^-11 is a TF32 tie (away: 1 + 2^-10;
 * even: 1), 1 + 2^-12 vanishes in TF32, 70000 overflows FP16, 1 + 2^-9 vanishes in BF16. */
static const float tf32_a[8] = {1.00048828125f, 1.000244140625f, -1.00048828125f, 3.0f,
                                1.001953125f,  0.1f,             70000.0f,        -2.5f};
static const float tf32_b[8] = {1.0f, 0.5f, 0.25f, 1.000244140625f, 2.0f, -1.0f, 1.00048828125f, 0.1f};

static void tf32_reference(int prec, double want[4]) {
    int i, j, l;
    for (i = 0; i < 2; i++)
        for (j = 0; j < 2; j++) {
            double acc = 0;
            for (l = 0; l < 4; l++) {
                float a = tf32_a[i + 2 * l], b = tf32_b[l + 4 * j];
                if (prec == PREC_TF32) a = round_bits(a, 10), b = round_bits(b, 10);
                if (prec == PREC_BF16) a = round_even_bits(a, 7), b = round_even_bits(b, 7);
                if (prec == PREC_FP16) {
                    a = fabsf(a) >= 65520.0f ? (a < 0 ? -INFINITY : INFINITY) : round_even_bits(a, 10);
                    b = fabsf(b) >= 65520.0f ? (b < 0 ? -INFINITY : INFINITY) : round_even_bits(b, 10);
                }
                acc += (double)a * b;
            }
            want[i + 2 * j] = acc;
        }
}

/* Runs the GEMM with a math mode and compute type; returns 1 when the result equals the reference of prec. */
static int gemm_precision_is(opara_test* T, blas* b, tcu_devptr dA, tcu_devptr dB, tcu_devptr dC, opara_cublasMath_t math,
                             opara_cublasComputeType_t ct, int prec) {
    float alpha = 1.0f, beta = 0.0f, got[4];
    double want[4];
    int i, same = 1;
    CHECK_EQ(b->lib.cublasSetMathMode(b->h, math), OPARA_CUBLAS_STATUS_SUCCESS);
    CHECK_EQ(b->lib.cublasGemmEx(b->h, OPARA_CUBLAS_OP_N, OPARA_CUBLAS_OP_N, 2, 2, 4, &alpha, (const void*)(size_t)dA,
                                 OPARA_CUDA_R_32F, 2, (const void*)(size_t)dB, OPARA_CUDA_R_32F, 4, &beta, (void*)(size_t)dC,
                                 OPARA_CUDA_R_32F, 2, ct, OPARA_CUBLAS_GEMM_DEFAULT),
             OPARA_CUBLAS_STATUS_SUCCESS);
    CHECK_EQ(b->d->MemcpyDtoH(got, dC, sizeof got), 0);
    tf32_reference(prec, want);
    for (i = 0; i < 4; i++) /* FP32 accumulation of 4 products: a few float ulps */
        same &= (isinf(want[i]) ? got[i] == want[i] : fabs(got[i] - want[i]) <= 1e-6 * (1 + fabs(want[i])));
    if (!same) OT_LOG("math %d compute %d: C = %.9g %.9g %.9g %.9g", (int)math, (int)ct, got[0], got[1], got[2], got[3]);
    return same;
}

OT_TEST(operand_precision_follows_math_mode_and_compute_type) {
    tcu_devptr dA, dB, dC;
    blas b2;
    double exact[4], tf32[4];
    BLAS(b, d);
    tf32_reference(PREC_FP32, exact);
    tf32_reference(PREC_TF32, tf32);
    REQUIRE(exact[0] != tf32[0] && exact[1] != tf32[1]); /* the data tells the precisions apart */
    dA = upload(d, tf32_a, 8);
    dB = upload(d, tf32_b, 8);
    dC = upload(d, NULL, 4);
    REQUIRE(dA && dB && dC);
    /* documented everywhere: FP32 GEMMs keep FP32 with the default and pedantic modes */
    CHECK(gemm_precision_is(T, &b, dA, dB, dC, OPARA_CUBLAS_DEFAULT_MATH, OPARA_CUBLAS_COMPUTE_32F, PREC_FP32));
    CHECK(gemm_precision_is(T, &b, dA, dB, dC, OPARA_CUBLAS_PEDANTIC_MATH, OPARA_CUBLAS_COMPUTE_32F, PREC_FP32));
    CHECK(gemm_precision_is(T, &b, dA, dB, dC, OPARA_CUBLAS_TF32_TENSOR_OP_MATH, OPARA_CUBLAS_COMPUTE_32F_PEDANTIC,
                            PREC_FP32));
    if (d->emu_config_str) { /* the emulated H100: exactly the documented choices */
        d->emu_config_str("device", "h100");
        if (blas_open(&b2, d) == 0) {
            CHECK(gemm_precision_is(T, &b2, dA, dB, dC, OPARA_CUBLAS_DEFAULT_MATH, OPARA_CUBLAS_COMPUTE_32F, PREC_FP32));
            CHECK(gemm_precision_is(T, &b2, dA, dB, dC, OPARA_CUBLAS_TF32_TENSOR_OP_MATH, OPARA_CUBLAS_COMPUTE_32F, PREC_TF32));
            CHECK(gemm_precision_is(T, &b2, dA, dB, dC, OPARA_CUBLAS_DEFAULT_MATH, OPARA_CUBLAS_COMPUTE_32F_FAST_TF32,
                                    PREC_TF32));
            CHECK(gemm_precision_is(T, &b2, dA, dB, dC, OPARA_CUBLAS_DEFAULT_MATH, OPARA_CUBLAS_COMPUTE_32F_FAST_16BF,
                                    PREC_BF16));
            CHECK(gemm_precision_is(T, &b2, dA, dB, dC, OPARA_CUBLAS_DEFAULT_MATH, OPARA_CUBLAS_COMPUTE_32F_FAST_16F,
                                    PREC_FP16));
            CHECK(gemm_precision_is(T, &b2, dA, dB, dC, OPARA_CUBLAS_TENSOR_OP_MATH, OPARA_CUBLAS_COMPUTE_32F, PREC_FP16));
            CHECK(gemm_precision_is(T, &b2, dA, dB, dC, OPARA_CUBLAS_PEDANTIC_MATH, OPARA_CUBLAS_COMPUTE_32F, PREC_FP32));
            setenv("NVIDIA_TF32_OVERRIDE", "0", 1); /* documented kill switch */
            CHECK(gemm_precision_is(T, &b2, dA, dB, dC, OPARA_CUBLAS_TF32_TENSOR_OP_MATH, OPARA_CUBLAS_COMPUTE_32F, PREC_FP32));
            unsetenv("NVIDIA_TF32_OVERRIDE");
        } else {
            CHECK(!"cuBLAS handle on the emulated H100");
        }
        blas_close(&b2);
        d->emu_config_str("device", "rtx2080super"); /* Turing: no TF32, no BF16 tensor cores */
        if (blas_open(&b2, d) == 0) {
            CHECK(gemm_precision_is(T, &b2, dA, dB, dC, OPARA_CUBLAS_TF32_TENSOR_OP_MATH, OPARA_CUBLAS_COMPUTE_32F, PREC_FP32));
            CHECK(gemm_precision_is(T, &b2, dA, dB, dC, OPARA_CUBLAS_DEFAULT_MATH, OPARA_CUBLAS_COMPUTE_32F_FAST_16BF,
                                    PREC_FP32));
            CHECK(gemm_precision_is(T, &b2, dA, dB, dC, OPARA_CUBLAS_DEFAULT_MATH, OPARA_CUBLAS_COMPUTE_32F_FAST_16F,
                                    PREC_FP16));
        }
        blas_close(&b2);
        d->emu_config_str("device", "");
    }
    d->MemFree(dA);
    d->MemFree(dB);
    d->MemFree(dC);
    blas_close(&b);
}


/* A GEMM from a thread that does not have the handle's context current. */
typedef struct blas_thread {
    blas* b;
    tcu_ctx ctx;
    tcu_devptr p;
    opara_cublasStatus_t none, pushed, destroy_none;
} blas_thread;

static opara_cublasStatus_t small_gemm(blas* b, tcu_devptr p) {
    float alpha = 1.0f, beta = 0.0f;
    return b->lib.cublasSgemm_v2(b->h, OPARA_CUBLAS_OP_N, OPARA_CUBLAS_OP_N, 4, 4, 4, &alpha, (const float*)(size_t)p, 4,
                                 (const float*)(size_t)p, 4, &beta, (float*)(size_t)(p + 64), 4);
}

static void* blas_other_thread(void* arg) {
    blas_thread* t = (blas_thread*)arg;
    t->none = small_gemm(t->b, t->p);
    t->destroy_none = t->b->lib.cublasDestroy_v2(t->b->h); /* refused: the handle stays valid */
    if (t->b->d->CtxPushCurrent(t->ctx) == 0) {
        t->pushed = small_gemm(t->b, t->p);
        t->b->d->CtxSynchronize();
        t->b->d->CtxPopCurrent(NULL);
    }
    return NULL;
}

/* [EMU] the library needs the handle's context current on the calling thread (docs/TESTING-GPU.md). */
OT_TEST(gemm_needs_the_handle_context_current) {
    blas_thread t;
    pthread_t th;
    float ones[32];
    int i;
    BLAS_EMU(b, d);
    for (i = 0; i < 32; i++) ones[i] = 1.0f;
    memset(&t, 0, sizeof t);
    t.b = &b;
    t.p = upload(d, ones, 32);
    REQUIRE(t.p && d->CtxGetCurrent(&t.ctx) == 0);
    REQUIRE(pthread_create(&th, NULL, blas_other_thread, &t) == 0);
    pthread_join(th, NULL);
    CHECK_EQ(t.none, OPARA_CUBLAS_STATUS_EXECUTION_FAILED);
    CHECK_EQ(t.destroy_none, OPARA_CUBLAS_STATUS_INTERNAL_ERROR);
    CHECK_EQ(t.pushed, OPARA_CUBLAS_STATUS_SUCCESS);
    CHECK_EQ(d->MemcpyDtoH(ones, t.p + 64, 16 * sizeof(float)), 0);
    CHECK(ones[0] == 4.0f && ones[15] == 4.0f);
    d->MemFree(t.p);
    blas_close(&b);
}

/* [EMU] GEMM operands must be 16-byte aligned (cuBLAS documents no status: INVALID_VALUE); nothing runs. */
OT_TEST(misaligned_gemm_operands_are_refused) {
    float alpha = 1.0f, beta = 0.0f, zero = 0.0f;
    tcu_devptr p;
    BLAS_EMU(b, d);
    p = upload(d, NULL, 128);
    REQUIRE(p);
#define G(a, bb, c, al)                                                                                          \
    b.lib.cublasSgemm_v2(b.h, OPARA_CUBLAS_OP_N, OPARA_CUBLAS_OP_N, 4, 4, 4, al, (const float*)(size_t)(a), 4,    \
                         (const float*)(size_t)(bb), 4, &beta, (float*)(size_t)(c), 4)
    CHECK_EQ(G(p + 4, p, p + 256, &alpha), OPARA_CUBLAS_STATUS_INVALID_VALUE);
    CHECK_EQ(G(p, p + 8, p + 256, &alpha), OPARA_CUBLAS_STATUS_INVALID_VALUE);
    CHECK_EQ(G(p, p, p + 260, &alpha), OPARA_CUBLAS_STATUS_INVALID_VALUE);
    CHECK_EQ(G(p + 4, p + 8, p + 256, &zero), OPARA_CUBLAS_STATUS_SUCCESS); /* alpha 0: A and B are not read */
    CHECK_EQ(G(p + 16, p + 32, p + 256, &alpha), OPARA_CUBLAS_STATUS_SUCCESS);
    d->emu_config("lib_align", 0);
    CHECK_EQ(G(p + 4, p + 8, p + 260, &alpha), OPARA_CUBLAS_STATUS_SUCCESS);
    d->emu_config("lib_align", 16);
#undef G
    CHECK_EQ(d->CtxSynchronize(), 0);
    d->MemFree(p);
    blas_close(&b);
}

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* A handle's first call sets up device memory (and costs time): captured without a warm-up it fails and
 * invalidates a GLOBAL capture; a RELAXED capture allows the allocation; after a warm-up capture works. */
OT_TEST(first_call_of_a_handle_cannot_be_captured) {
    float alpha = 1.0f, beta = 0.0f;
    tcu_devptr p, ws;
    tcu_stream s;
    tcu_graph g = NULL;
    double t0, first;
    opara_cublasHandle_t h2 = NULL;
    BLAS_EMU(b, d);
    p = upload(d, NULL, 64);
    REQUIRE(p && d->MemAlloc(&ws, 1 << 16) == 0 && d->StreamCreate(&s, 1) == 0);
    CHECK_EQ(d->MemsetD32Async(p, 0, 64, s), 0);
    CHECK_EQ(b.lib.cublasSetStream_v2(b.h, (opara_CUstream)s), OPARA_CUBLAS_STATUS_SUCCESS);
    CHECK_EQ(b.lib.cublasSetWorkspace_v2(b.h, (void*)(size_t)ws, 1 << 16), OPARA_CUBLAS_STATUS_SUCCESS);
#define GEMM(h)                                                                                                  \
    b.lib.cublasSgemm_v2(h, OPARA_CUBLAS_OP_N, OPARA_CUBLAS_OP_N, 4, 4, 4, &alpha, (const float*)(size_t)p, 4,      \
                         (const float*)(size_t)p, 4, &beta, (float*)(size_t)(p + 64), 4)
    CHECK_EQ(d->StreamBeginCapture(s, 0), 0);
    CHECK_EQ(GEMM(b.h), OPARA_CUBLAS_STATUS_ALLOC_FAILED);
    CHECK_EQ(d->StreamEndCapture(s, &g), TCU_CAPTURE_INVALIDATED);
    if (g) d->GraphDestroy(g);
    g = NULL;
    CHECK_EQ(d->StreamBeginCapture(s, 2), 0); /* RELAXED: the set-up allocation is allowed */
    CHECK_EQ(GEMM(b.h), OPARA_CUBLAS_STATUS_SUCCESS);
    CHECK_EQ(d->StreamEndCapture(s, &g), 0);
    if (g) d->GraphDestroy(g);
    g = NULL;
    CHECK_EQ(d->StreamBeginCapture(s, 0), 0); /* set up by now: captures */
    CHECK_EQ(GEMM(b.h), OPARA_CUBLAS_STATUS_SUCCESS);
    CHECK_EQ(d->StreamEndCapture(s, &g), 0);
    if (g) d->GraphDestroy(g);
    /* the first call of a new handle costs its set-up time on the calling thread */
    d->emu_config("handle_first_use_us", 30000);
    REQUIRE(b.lib.cublasCreate_v2(&h2) == OPARA_CUBLAS_STATUS_SUCCESS);
    t0 = now_ms();
    CHECK_EQ(GEMM(h2), OPARA_CUBLAS_STATUS_SUCCESS);
    first = now_ms() - t0;
    OT_LOG("first GEMM of a handle: %.1f ms", first);
    CHECK(first >= 30.0);
    d->emu_config("handle_first_use_us", 1000);
#undef GEMM
    CHECK_EQ(d->CtxSynchronize(), 0);
    b.lib.cublasDestroy_v2(h2);
    blas_close(&b);
    d->StreamDestroy(s);
    d->MemFree(p);
    d->MemFree(ws);
}

/* Node types of a captured graph: counts of kernel (0) and memset (2) nodes; edges through *n_edges. */
static void graph_shape(tcu_driver* d, tcu_graph g, int* kernels, int* memsets, size_t* n_edges) {
    tcu_node nodes[32];
    size_t n = 32, i;
    int type;
    *kernels = *memsets = 0;
    if (d->GraphGetNodes(g, nodes, &n) != 0) return;
    for (i = 0; i < n && i < 32; i++)
        if (d->GraphNodeGetType(nodes[i], &type) == 0) {
            *kernels += type == 0;
            *memsets += type == 2;
        }
    *n_edges = 0;
    d->GraphGetEdges(g, NULL, NULL, NULL, n_edges);
}

/* One call of a long reduction into a small output is several device operations, as in cuBLAS (split-K:
 * a memset, the partial products, a reduction; docs/TESTING-GPU.md). Each variant is captured, replayed and
 * compared with the reference; without enough workspace the same call is one kernel. */
OT_TEST(long_reductions_become_several_nodes) {
    enum { M = 16, N = 8, K = 1024 };
    static float A[M * K], B[K * N];
    float got[M * N], alpha = 0.5f, beta = 0.0f;
    double want[M * N];
    tcu_devptr dA, dB, dC, ws;
    tcu_stream s;
    int pass, kernels, memsets;
    size_t edges;
    BLAS_EMU(b, d);
    tcu_fill(A, M * K, 81);
    tcu_fill(B, K * N, 82);
    ref_gemm(0, 0, M, N, K, alpha, A, M, B, K, beta, NULL, M, want);
    dA = upload(d, A, M * K);
    dB = upload(d, B, K * N);
    dC = upload(d, NULL, M * N);
    REQUIRE(dA && dB && dC && d->MemAlloc(&ws, 1 << 16) == 0 && d->StreamCreate(&s, 1) == 0);
    CHECK_EQ(b.lib.cublasSetStream_v2(b.h, (opara_CUstream)s), OPARA_CUBLAS_STATUS_SUCCESS);
    for (pass = 0; pass < 2; pass++) { /* 64 KiB holds 8 partials of 16 x 8; 512 bytes not even 2 */
        tcu_graph g = NULL;
        tcu_exec e = NULL;
        CHECK_EQ(b.lib.cublasSetWorkspace_v2(b.h, (void*)(size_t)ws, pass == 0 ? 1 << 16 : 512), 0);
        CHECK_EQ(b.lib.cublasSgemm_v2(b.h, OPARA_CUBLAS_OP_N, OPARA_CUBLAS_OP_N, M, N, K, &alpha, (const float*)(size_t)dA,
                                      M, (const float*)(size_t)dB, K, &beta, (float*)(size_t)dC, M),
                 OPARA_CUBLAS_STATUS_SUCCESS); /* eager (and the handle's warm-up) */
        CHECK_EQ(d->StreamSynchronize(s), 0); /* s is non-blocking: the legacy-stream copy would not wait */
        CHECK_EQ(d->MemcpyDtoH(got, dC, sizeof got), 0);
        CHECK(tcu_first_mismatch(want, got, M * N, 1e-5) == M * N);
        CHECK_EQ(d->MemsetD32Async(dC, 0xffffffffu, M * N, s), 0); /* NaN: the replay must write C */
        CHECK_EQ(d->StreamBeginCapture(s, 0), 0);
        CHECK_EQ(b.lib.cublasSgemm_v2(b.h, OPARA_CUBLAS_OP_N, OPARA_CUBLAS_OP_N, M, N, K, &alpha, (const float*)(size_t)dA,
                                      M, (const float*)(size_t)dB, K, &beta, (float*)(size_t)dC, M),
                 OPARA_CUBLAS_STATUS_SUCCESS);
        REQUIRE(d->StreamEndCapture(s, &g) == 0 && g);
        graph_shape(d, g, &kernels, &memsets, &edges);
        OT_LOG("workspace %d: %d kernel nodes, %d memset nodes, %zu edges", pass == 0 ? 1 << 16 : 512, kernels,
               memsets, edges);
        CHECK_EQ(kernels, pass == 0 ? 2 : 1);
        CHECK_EQ(memsets, pass == 0 ? 1 : 0);
        CHECK_EQ(edges, pass == 0 ? 2 : 0); /* a chain: memset -> partial GEMM -> reduction */
        CHECK_EQ(d->GraphInstantiate(&e, g, 0), 0);
        CHECK_EQ(d->GraphLaunch(e, s), 0);
        CHECK_EQ(d->StreamSynchronize(s), 0);
        CHECK_EQ(d->MemcpyDtoH(got, dC, sizeof got), 0);
        CHECK(tcu_first_mismatch(want, got, M * N, 1e-5) == M * N);
        d->GraphExecDestroy(e);
        d->GraphDestroy(g);
    }
    blas_close(&b);
    d->StreamDestroy(s);
    d->MemFree(dA);
    d->MemFree(dB);
    d->MemFree(dC);
    d->MemFree(ws);
}

static const opara_test_case tests[] = {
    OT_CASE(loader_finds_every_cublas_entry_point),
    OT_CASE(sgemm_matches_reference_for_every_transpose),
    OT_CASE(strided_batched_sgemm_and_gemm_ex),
    OT_CASE(invalid_arguments_give_invalid_value),
    OT_CASE(unknown_math_mode_bits_are_refused),
    OT_CASE(gemm_ex_half_inputs_into_float_output),
    OT_CASE(captured_sgemm_is_kernel_work_and_replays),
    OT_CASE(capture_without_user_workspace_fails),
    OT_CASE(handle_calls_during_capture_are_unsafe),
    OT_CASE(operand_precision_follows_math_mode_and_compute_type),
    OT_CASE(gemm_needs_the_handle_context_current),
    OT_CASE(misaligned_gemm_operands_are_refused),
    OT_CASE(first_call_of_a_handle_cannot_be_captured),
    OT_CASE(long_reductions_become_several_nodes),
};

int main(int argc, char** argv) { return opara_test_main(argc, argv, tests, OT_COUNT(tests)); }
