/* The fake BLAS libraries' cblas_sgemm body (tests/fake_blas.c, tests/fake_openblas.c): a plain
   row-major C = alpha * op(A) op(B) + beta * C in double, beta 0 never reading C. Row-major only
   (opara passes 101); 111 no transpose, 112 transpose. */
#include <stddef.h>

static void fake_sgemm_naive(int trans_a, int trans_b, int m, int n, int k, float alpha, const float* a, int lda,
                             const float* b, int ldb, float beta, float* c, int ldc) {
    int i, j, p;
    for (i = 0; i < m; ++i)
        for (j = 0; j < n; ++j) {
            double acc = 0;
            for (p = 0; p < k; ++p) {
                float x = trans_a == 112 ? a[(size_t)p * lda + i] : a[(size_t)i * lda + p];
                float y = trans_b == 112 ? b[(size_t)j * ldb + p] : b[(size_t)p * ldb + j];
                acc += (double)x * y;
            }
            c[(size_t)i * ldc + j] = (float)(alpha * acc + (beta != 0 ? (double)beta * c[(size_t)i * ldc + j] : 0));
        }
}
