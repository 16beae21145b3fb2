/* CPU kernels that order elements: TopK. */
#include "opara_cpu.h"

#include <math.h>

/* ---- TopK ------------------------------------------------------------------------------------ */

/* Whether element a comes before element b of a row (values at row[i * stride]): the larger (or,
   for smallest, the smaller) first, NaN counted as larger than every number, equal values in index
   order as ONNX specifies. */
static int opara__topk_before(const float* row, size_t stride, int32_t a, int32_t b, int largest) {
    float x = row[(size_t)a * stride], y = row[(size_t)b * stride];
    int xn = x != x, yn = y != y;
    if (xn || yn) {
        if (xn && yn) return a < b;
        return largest ? xn : yn;
    }
    if (x != y) return largest ? x > y : x < y;
    return a < b;
}

/* Stable bottom-up merge sort of idx[0, n) by opara__topk_before; tmp holds n entries. */
static void opara__topk_sort(const float* row, size_t stride, int32_t* idx, int32_t* tmp, size_t n, int largest) {
    size_t width, i;
    for (width = 1; width < n; width *= 2) {
        for (i = 0; i < n; i += 2 * width) {
            size_t mid = i + width < n ? i + width : n, end = i + 2 * width < n ? i + 2 * width : n, a = i, b = mid, o = i;
            while (a < mid && b < end) tmp[o++] = opara__topk_before(row, stride, idx[b], idx[a], largest) ? idx[b++] : idx[a++];
            while (a < mid) tmp[o++] = idx[a++];
            while (b < end) tmp[o++] = idx[b++];
        }
        memcpy(idx, tmp, n * sizeof *idx);
    }
}

/* One work item: the row of one (outer, inner) position along the axis. */
static opara_result opara__topk_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    const opara__cpu_params* p = &op->p;
    size_t L = (size_t)p->mid, in = (size_t)p->inner, k = (size_t)p->k, item, j;
    int32_t* idx = (int32_t*)scratch;
    int32_t* tmp = idx + L;
    for (item = begin; item < end; ++item) {
        size_t outer = item / in, inner = item % in;
        const float* row = (const float*)op->in[0].data + outer * L * in + inner;
        float* values = (float*)op->out[0].data + outer * k * in + inner;
        int64_t* indices = op->n_out > 1 && op->out[1].data ? (int64_t*)op->out[1].data + outer * k * in + inner : NULL;
        for (j = 0; j < L; ++j) idx[j] = (int32_t)j;
        opara__topk_sort(row, in, idx, tmp, L, p->mode);
        for (j = 0; j < k; ++j) {
            values[j * in] = row[(size_t)idx[j] * in];
            if (indices) indices[j * in] = idx[j];
        }
    }
    return OPARA_OK;
}

OPARA__PRIVATE opara_result opara__cpu_prepare_topk(opara__cpu_op* op, char* err, size_t cap) {
    const opara__cpu_tensor* x = &op->in[0];
    int64_t axis;
    if (x->dtype != OPARA_DTYPE_F32 || op->out[0].dtype != OPARA_DTYPE_F32 ||
        (op->n_out > 1 && op->out[1].dtype != OPARA_DTYPE_I64))
        return opara__cpu_reject(err, cap, OPARA_ERR_BAD_DTYPE, "TopK: needs f32 values and i64 indices");
    if (!opara__cpu_record_axis(op, x->ndim, &axis))
        return opara__cpu_reject(err, cap, OPARA_ERR_BAD_INDEX, "TopK: axis out of range");
    if (x->dims[axis] > INT32_MAX)
        return opara__cpu_reject(err, cap, OPARA_ERR_LIMIT_EXCEEDED, "TopK: the axis has %lld elements (max %d)",
                                 (long long)x->dims[axis], INT32_MAX);
    op->p.mid = x->dims[axis];
    op->p.k = op->params->u.topk.k;
    op->p.mode = op->params->u.topk.largest;
    if (op->p.k > op->p.mid || op->out[0].dims[axis] != op->p.k)
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "TopK: k %lld does not fit the axis (%lld)",
                                 (long long)op->p.k, (long long)op->p.mid);
    op->p.inner = opara__cpu_dims_prod(x->dims, (int32_t)axis + 1, x->ndim);
    op->work_items = (size_t)(opara__cpu_dims_prod(x->dims, 0, (int32_t)axis) * op->p.inner);
    if (op->p.mid == 0 || op->p.k == 0) op->work_items = 0;
    op->scratch_floats = 2 * (size_t)op->p.mid; /* the row's indices and the merge buffer (int32 each) */
    op->min_items_per_task = 4;
    op->fn = opara__topk_kernel;
    return OPARA_OK;
}
