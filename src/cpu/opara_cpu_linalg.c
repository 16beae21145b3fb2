/* CPU kernels of linear algebra beyond GEMM: Det. */
#include "opara_cpu.h"

#include <math.h>

/* ---- Det ------------------------------------------------------------------------------------- */

/* The determinant of the n x n row-major matrix a by Gaussian elimination with partial pivoting, in
   double (lu holds n * n doubles of scratch). */
static double opara__det(const float* a, int64_t n, double* lu) {
    double det = 1.0;
    int64_t i, j, k;
    for (i = 0; i < n * n; ++i) lu[i] = a[i];
    for (k = 0; k < n; ++k) {
        int64_t pivot = k;
        for (i = k + 1; i < n; ++i)
            if (fabs(lu[i * n + k]) > fabs(lu[pivot * n + k])) pivot = i;
        if (lu[pivot * n + k] == 0.0) return 0.0 * lu[pivot * n + k]; /* singular (NaN stays NaN) */
        if (pivot != k) {
            for (j = 0; j < n; ++j) {
                double t = lu[k * n + j];
                lu[k * n + j] = lu[pivot * n + j];
                lu[pivot * n + j] = t;
            }
            det = -det;
        }
        det *= lu[k * n + k];
        for (i = k + 1; i < n; ++i) {
            double f = lu[i * n + k] / lu[k * n + k];
            for (j = k + 1; j < n; ++j) lu[i * n + j] -= f * lu[k * n + j];
        }
    }
    return det;
}

/* One work item: one matrix of the batch. */
static opara_result opara__det_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    int64_t n = op->p.n;
    size_t item;
    for (item = begin; item < end; ++item)
        ((float*)op->out[0].data)[item] = (float)opara__det((const float*)op->in[0].data + (int64_t)item * n * n, n,
                                                           (double*)(void*)scratch);
    return OPARA_OK;
}

OPARA__PRIVATE opara_result opara__cpu_prepare_det(opara__cpu_op* op, char* err, size_t cap) {
    const opara__cpu_tensor* x = &op->in[0];
    if (x->dtype != OPARA_DTYPE_F32 || op->out[0].dtype != OPARA_DTYPE_F32)
        return opara__cpu_reject(err, cap, OPARA_ERR_BAD_DTYPE, "Det: needs f32");
    if (x->ndim < 2 || x->dims[x->ndim - 1] != x->dims[x->ndim - 2])
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "Det: needs [..., M, M]");
    if (x->dims[x->ndim - 1] > 4096)
        return opara__cpu_reject(err, cap, OPARA_ERR_LIMIT_EXCEEDED, "Det: %lld x %lld matrices (max 4096)",
                                 (long long)x->dims[x->ndim - 1], (long long)x->dims[x->ndim - 1]);
    op->p.n = x->dims[x->ndim - 1];
    op->work_items = (size_t)opara__cpu_dims_prod(x->dims, 0, x->ndim - 2);
    op->scratch_floats = (size_t)(op->p.n * op->p.n) * 2 + 2; /* the doubles of the elimination, aligned */
    op->min_items_per_task = 1;
    op->fn = opara__det_kernel;
    return OPARA_OK;
}
