/* Fake BLAS libraries for the loader tests in tests/test_cpu_kernels.c, one source built three ways
   (mk/cpu.mk): FAKE_REFERENCE exports cblas_sgemm only, as the netlib reference BLAS (Debian's libblas3)
   does; FAKE_BLIS adds BLIS's identifying bli_info_get_version_str and its thread queries; FAKE_MKL adds
   MKL's mkl_get_version_string and mkl_get_max_threads. fake_blas_set_threads sets the thread count the
   BLIS/MKL queries report (the library's own setting, 1 at load). */
#include "fake_blas_sgemm.h"

static int fake_threads = 1;

void fake_blas_set_threads(int n) { fake_threads = n; }

void cblas_sgemm(int order, int trans_a, int trans_b, int m, int n, int k, float alpha, const float* a, int lda,
                 const float* b, int ldb, float beta, float* c, int ldc) {
    (void)order;
    fake_sgemm_naive(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

#if defined(FAKE_BLIS)
/* BLIS returns dim_t (64-bit in its default build) */
const char* bli_info_get_version_str(void) { return "0.9.0-fake"; }
long long bli_thread_get_num_threads(void) { return fake_threads; }
long long bli_thread_get_jc_nt(void) { return 1; }
long long bli_thread_get_pc_nt(void) { return 1; }
long long bli_thread_get_ic_nt(void) { return 1; }
long long bli_thread_get_jr_nt(void) { return 1; }
long long bli_thread_get_ir_nt(void) { return 1; }
#elif defined(FAKE_MKL)
void mkl_get_version_string(char* buf, int len) {
    if (len > 0) buf[0] = 0;
}
int mkl_get_max_threads(void) { return fake_threads; }
#endif
