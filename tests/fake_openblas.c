/* A fake OpenBLAS for tests/test_lifetime.c (soname libopenblas.so.0, preloaded by the test so that
   opara's dlopen("libopenblas.so.0") finds it): a plain cblas_sgemm, and openblas_set/get_num_threads
   over one process-wide count, as OpenBLAS's, that record what opara does with it. */
#include <stddef.h>

static int fake_threads = 8;     /* the library's process-wide thread count */
static int fake_set_calls;       /* openblas_set_num_threads calls */
static int fake_sgemm_calls;     /* cblas_sgemm calls */
static int fake_sgemm_max_threads; /* the largest thread count any cblas_sgemm call ran under */

static int fake_load(const int* p) { return __atomic_load_n(p, __ATOMIC_SEQ_CST); }

void openblas_set_num_threads(int n) {
    __atomic_store_n(&fake_threads, n, __ATOMIC_SEQ_CST);
    __atomic_add_fetch(&fake_set_calls, 1, __ATOMIC_SEQ_CST);
}

int openblas_get_num_threads(void) { return fake_load(&fake_threads); }

/* Row-major only (opara passes 101); 111 no transpose, 112 transpose. */
void cblas_sgemm(int order, int trans_a, int trans_b, int m, int n, int k, float alpha, const float* a, int lda,
                 const float* b, int ldb, float beta, float* c, int ldc) {
    int i, j, p, t = fake_load(&fake_threads), seen = fake_load(&fake_sgemm_max_threads);
    (void)order;
    while (t > seen && !__atomic_compare_exchange_n(&fake_sgemm_max_threads, &seen, t, 0, __ATOMIC_SEQ_CST,
                                                    __ATOMIC_SEQ_CST)) {
    }
    __atomic_add_fetch(&fake_sgemm_calls, 1, __ATOMIC_SEQ_CST);
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

/* The test's view: set calls, sgemm calls, the largest count sgemm ran under (then reset to 0). */
void fake_openblas_stats(int* set_calls, int* sgemm_calls, int* sgemm_max_threads) {
    *set_calls = fake_load(&fake_set_calls);
    *sgemm_calls = fake_load(&fake_sgemm_calls);
    *sgemm_max_threads = __atomic_exchange_n(&fake_sgemm_max_threads, 0, __ATOMIC_SEQ_CST);
}
