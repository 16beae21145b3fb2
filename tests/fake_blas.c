/* Fake BLAS libraries for the loader tests in tests/test_cpu_kernels.c, one source built three ways
   (mk/cpu.mk): FAKE_REFERENCE exports cblas_sgemm only, as the netlib reference BLAS (Debian's libblas3)
   does; FAKE_BLIS adds BLIS's identifying bli_info_get_version_str and its thread queries; FAKE_MKL adds
   MKL's mkl_get_version_string and mkl_get_max_threads. fake_blas_set_threads sets the thread count the
   BLIS/MKL queries report (the library's own setting, 1 at load). */
#include <stddef.h>

static int fake_threads = 1;

void fake_blas_set_threads(int n) { fake_threads = n; }

/* Row-major only (opara passes 101); 111 no transpose, 112 transpose. */
void cblas_sgemm(int order, int trans_a, int trans_b, int m, int n, int k, float alpha, const float* a, int lda,
                 const float* b, int ldb, float beta, float* c, int ldc) {
    int i, j, p;
    (void)order;
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
