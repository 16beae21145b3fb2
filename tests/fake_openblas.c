/* A fake OpenBLAS for tests/test_lifetime.c (soname libopenblas.so.0, preloaded by the test so that
   opara's dlopen("libopenblas.so.0") finds it): a plain cblas_sgemm, and openblas_set/get_num_threads
   over one process-wide count, as OpenBLAS's, that record what opara does with it. */
#include "fake_blas_sgemm.h"

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

void cblas_sgemm(int order, int trans_a, int trans_b, int m, int n, int k, float alpha, const float* a, int lda,
                 const float* b, int ldb, float beta, float* c, int ldc) {
    int t = fake_load(&fake_threads), seen = fake_load(&fake_sgemm_max_threads);
    (void)order;
    while (t > seen && !__atomic_compare_exchange_n(&fake_sgemm_max_threads, &seen, t, 0, __ATOMIC_SEQ_CST,
                                                    __ATOMIC_SEQ_CST)) {
    }
    __atomic_add_fetch(&fake_sgemm_calls, 1, __ATOMIC_SEQ_CST);
    fake_sgemm_naive(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

/* The test's view: set calls, sgemm calls, the largest count sgemm ran under (then reset to 0). */
void fake_openblas_stats(int* set_calls, int* sgemm_calls, int* sgemm_max_threads) {
    *set_calls = fake_load(&fake_set_calls);
    *sgemm_calls = fake_load(&fake_sgemm_calls);
    *sgemm_max_threads = __atomic_exchange_n(&fake_sgemm_max_threads, 0, __ATOMIC_SEQ_CST);
}
