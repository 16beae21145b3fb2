/* CPU kernels of the operators that reduce rows or dims: Softmax, GlobalAveragePool and ReduceMean. */
#include "opara_cpu.h"

#include <math.h>

/* ---- Softmax --------------------------------------------------------------------------------- */

static opara_result opara__softmax_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    const opara__cpu_params* p = &op->p;
    size_t L = (size_t)p->mid, in = (size_t)p->inner, item, j;
    (void)scratch;
    int level = opara__cpu_isa_level();
    for (item = begin; item < end; ++item) {
        size_t base = (item / in) * L * in + item % in;
        const float* x = (const float*)op->in[0].data + base;
        float* y = (float*)op->out[0].data + base;
        float mx = -HUGE_VALF, sum = 0.0f;
        if (in == 1) {
            opara__softmax_row(level, y, x, L);
            continue;
        }
        for (j = 0; j < L; ++j) mx = x[j * in] > mx ? x[j * in] : mx;
        for (j = 0; j < L; ++j) {
            y[j * in] = expf(x[j * in] - mx);
            sum += y[j * in];
        }
        for (j = 0; j < L; ++j) y[j * in] /= sum;
    }
    return OPARA_OK;
}

OPARA__PRIVATE opara_result opara__cpu_prepare_softmax(opara__cpu_op* op, char* err, size_t cap) {
    const opara__cpu_tensor* x = &op->in[0];
    int64_t axis;
    if (!opara__cpu_same_dims(x, &op->out[0]) || x->dtype != OPARA_DTYPE_F32)
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "Softmax: needs f32 and equal input/output shapes");
    if (!opara__cpu_record_axis(op, x->ndim, &axis))
        return opara__cpu_reject(err, cap, OPARA_ERR_BAD_INDEX, "Softmax: axis out of range");
    op->p.mid = x->dims[axis];
    op->p.inner = opara__cpu_dims_prod(x->dims, (int32_t)axis + 1, x->ndim);
    op->work_items = (size_t)(opara__cpu_dims_prod(x->dims, 0, (int32_t)axis) * op->p.inner);
    if (op->p.mid == 0) op->work_items = 0;
    op->min_items_per_task = 16;
    op->fn = opara__softmax_kernel;
    return OPARA_OK;
}

/* ---- GlobalAveragePool ----------------------------------------------------------------------- */

static opara_result opara__global_max_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    size_t HW = (size_t)op->p.inner, item, j;
    (void)scratch;
    for (item = begin; item < end; ++item) {
        const float* x = (const float*)op->in[0].data + item * HW;
        float best = HW ? x[0] : 0.0f;
        for (j = 1; j < HW; ++j) best = opara__max_nan(best, x[j]);
        ((float*)op->out[0].data)[item] = best;
    }
    return OPARA_OK;
}

static opara_result opara__global_avg_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    size_t HW = (size_t)op->p.inner, item;
    int level = opara__cpu_isa_level();
    (void)scratch;
    for (item = begin; item < end; ++item) {
        float sum = opara__vec_sum(level, (const float*)op->in[0].data + item * HW, HW);
        ((float*)op->out[0].data)[item] = HW ? sum / (float)HW : 0.0f;
    }
    return OPARA_OK;
}

OPARA__PRIVATE opara_result opara__cpu_prepare_global_avg(opara__cpu_op* op, char* err, size_t cap) {
    const opara__cpu_tensor *x = &op->in[0], *y = &op->out[0];
    int32_t i;
    const char* name = opara__op_name(op->node->op);
    if (x->ndim < 2 || y->ndim != x->ndim || y->dims[0] != x->dims[0] || y->dims[1] != x->dims[1])
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "%s: output must be [N, C, 1, ...]", name);
    for (i = 2; i < y->ndim; ++i)
        if (y->dims[i] != 1) return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "%s: output must be [N, C, 1, ...]", name);
    op->p.inner = opara__cpu_dims_prod(x->dims, 2, x->ndim);
    op->work_items = (size_t)(x->dims[0] * x->dims[1]);
    op->min_items_per_task = 4;
    op->fn = op->node->op == OPARA__OP_GLOBAL_MAX_POOL ? opara__global_max_kernel : opara__global_avg_kernel;
    return OPARA_OK;
}

/* ---- ReduceMean ------------------------------------------------------------------------------ */

/* The input dims into p's kept and reduced lists (flags from the node's record), with their strides. */
static void opara__reduce_split(opara__cpu_params* p, const opara__cpu_tensor* x, const uint8_t* flags) {
    int64_t str[OPARA_MAX_DIMS];
    int32_t d;
    opara__cpu_natural_strides(x, str);
    p->kept_n = p->red_n = 0;
    for (d = 0; d < x->ndim; ++d) {
        if (flags[d]) {
            p->red_dims[p->red_n] = x->dims[d];
            p->red_strides[p->red_n++] = str[d];
        } else {
            p->kept_dims[p->kept_n] = x->dims[d];
            p->kept_strides[p->kept_n++] = str[d];
        }
    }
}

/* The element offset of kept item `item` (the first element of its reduced group). */
static int64_t opara__kept_base(const opara__cpu_params* p, size_t item) {
    int64_t base = 0;
    int32_t d;
    for (d = p->kept_n - 1; d >= 0; --d) {
        base += (int64_t)(item % (size_t)p->kept_dims[d]) * p->kept_strides[d];
        item /= (size_t)p->kept_dims[d];
    }
    return base;
}

/* The offset of the r-th element of a reduced group from its base. */
static int64_t opara__reduced_offset(const opara__cpu_params* p, int64_t r) {
    int64_t off = 0;
    int32_t d;
    for (d = p->red_n - 1; d >= 0; --d) {
        off += (r % p->red_dims[d]) * p->red_strides[d];
        r /= p->red_dims[d];
    }
    return off;
}

static opara_result opara__reduce_mean_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    const opara__cpu_params* p = &op->p;
    const float* x = (const float*)op->in[0].data;
    float* y = (float*)op->out[0].data;
    int64_t count = opara__cpu_dims_prod(p->red_dims, 0, p->red_n);
    size_t item;
    (void)scratch;
    for (item = begin; item < end; ++item) {
        int64_t base = opara__kept_base(p, item), idx[OPARA_MAX_DIMS], r, inner = p->red_n ? p->red_dims[p->red_n - 1] : 1;
        int64_t is = p->red_n ? p->red_strides[p->red_n - 1] : 0;
        double sum = 0.0;
        int32_t d;
        for (d = 0; d < p->red_n; ++d) idx[d] = 0;
        for (r = 0; r < count; r += inner) {
            int64_t off = base, j;
            float part = 0.0f;
            for (d = 0; d < p->red_n - 1; ++d) off += idx[d] * p->red_strides[d];
            for (j = 0; j < inner; ++j) part += x[off + j * is];
            sum += part;
            for (d = p->red_n - 2; d >= 0; --d) {
                if (++idx[d] < p->red_dims[d]) break;
                idx[d] = 0;
            }
        }
        y[item] = count ? (float)(sum / (double)count) : 0.0f;
    }
    return OPARA_OK;
}

/* MeanVarianceNormalization, one kept group per item: y = (x - mean) / (sqrt(E[x^2] - mean^2) + 1e-9),
   ONNX's function body (its epsilon is added to the standard deviation). */
static opara_result opara__mvn_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    const opara__cpu_params* p = &op->p;
    const float* x = (const float*)op->in[0].data;
    float* y = (float*)op->out[0].data;
    int64_t count = opara__cpu_dims_prod(p->red_dims, 0, p->red_n), r;
    size_t item;
    (void)scratch;
    for (item = begin; item < end; ++item) {
        int64_t base = opara__kept_base(p, item);
        double sum = 0.0, sq = 0.0, mean, var;
        float m, inv;
        for (r = 0; r < count; ++r) {
            double v = x[base + opara__reduced_offset(p, r)];
            sum += v;
            sq += v * v;
        }
        mean = sum / (double)count;
        var = sq / (double)count - mean * mean;
        m = (float)mean;
        inv = (float)(1.0 / (sqrt(var > 0.0 ? var : 0.0) + 1e-9));
        for (r = 0; r < count; ++r) {
            int64_t at = base + opara__reduced_offset(p, r);
            y[at] = (x[at] - m) * inv;
        }
    }
    return OPARA_OK;
}

OPARA__PRIVATE opara_result opara__cpu_prepare_mvn(opara__cpu_op* op, char* err, size_t cap) {
    const opara__cpu_tensor* x = &op->in[0];
    if (!op->params || !op->params->resolved || !opara__cpu_same_dims(x, &op->out[0]) || x->dtype != OPARA_DTYPE_F32)
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "MeanVarianceNormalization: needs f32 X/Y alike");
    opara__reduce_split(&op->p, x, op->params->u.reduce.axes);
    op->work_items = opara__cpu_numel(x) ? (size_t)opara__cpu_dims_prod(op->p.kept_dims, 0, op->p.kept_n) : 0;
    op->min_items_per_task = 1;
    op->fn = opara__mvn_kernel;
    return OPARA_OK;
}

OPARA__PRIVATE opara_result opara__cpu_prepare_reduce_mean(opara__cpu_op* op, char* err, size_t cap) {
    const opara__cpu_tensor *x = &op->in[0], *y = &op->out[0];
    opara__cpu_params* p = &op->p;
    const uint8_t* reduce;
    int keep;
    int32_t d, yd = 0;
    if (x->dtype != OPARA_DTYPE_F32) return opara__cpu_reject(err, cap, OPARA_ERR_BAD_DTYPE, "ReduceMean: f32 only");
    if (!op->params || !op->params->resolved) return opara__cpu_reject(err, cap, OPARA_ERR_BAD_INDEX, "ReduceMean: axis");
    reduce = op->params->u.reduce.axes; /* axes as the shape engine resolved them */
    keep = op->params->u.reduce.keepdims;
    opara__reduce_split(p, x, reduce);
    for (d = 0; d < x->ndim; ++d) {
        if (reduce[d] ? keep && (yd >= y->ndim || y->dims[yd++] != 1) : (yd >= y->ndim || y->dims[yd++] != x->dims[d]))
            break;
    }
    if (d != x->ndim || yd != y->ndim || y->dtype != OPARA_DTYPE_F32)
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "ReduceMean: output shape does not match axes/keepdims");
    op->work_items = opara__cpu_numel(y);
    op->min_items_per_task = 64;
    op->fn = opara__reduce_mean_kernel;
    return OPARA_OK;
}

/* ---- Einsum ---------------------------------------------------------------------------------- */

/* Output elements [begin, end): the sum over the summed labels of the operands' product, each
   operand read through the record's strides (the naive contraction), in T (float or double) with the
   sum in ACC. */
#define OPARA__EINSUM_BODY(T, ACC)                                                                                \
    do {                                                                                                          \
        const T *a = (const T*)op->in[0].data, *b = two ? (const T*)op->in[1].data : NULL;                       \
        for (item = begin; item < end; ++item) {                                                                  \
            int64_t oa = 0, ob = 0, idx[OPARA_MAX_DIMS] = {0}, rem = (int64_t)item;                               \
            int32_t d;                                                                                            \
            ACC sum = 0;                                                                                          \
            for (d = y->ndim - 1; d >= 0; --d) {                                                                  \
                int64_t i = rem % y->dims[d];                                                                     \
                rem /= y->dims[d];                                                                                \
                oa += i * e->out_strides[0][d], ob += i * e->out_strides[1][d];                                   \
            }                                                                                                     \
            for (r = 0; r < count; ++r) {                                                                         \
                int64_t sa = oa, sb = ob;                                                                         \
                for (d = 0; d < e->n_sum; ++d) sa += idx[d] * e->sum_strides[0][d], sb += idx[d] * e->sum_strides[1][d]; \
                sum += two ? (ACC)a[sa] * (ACC)b[sb] : (ACC)a[sa];                                                \
                for (d = e->n_sum - 1; d >= 0; --d) { /* the next summed index */                                 \
                    if (++idx[d] < e->sum_dims[d]) break;                                                         \
                    idx[d] = 0;                                                                                   \
                }                                                                                                 \
            }                                                                                                     \
            ((T*)y->data)[item] = (T)sum;                                                                         \
        }                                                                                                         \
    } while (0)

static opara_result opara__einsum_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    const opara__einsum_params* e = &op->params->u.einsum;
    const opara__cpu_tensor* y = &op->out[0];
    int two = op->n_in > 1;
    int64_t count = opara__cpu_dims_prod(e->sum_dims, 0, e->n_sum), r;
    size_t item;
    (void)scratch;
    if (y->dtype == OPARA_DTYPE_F64) OPARA__EINSUM_BODY(double, double);
    else OPARA__EINSUM_BODY(float, float);
    return OPARA_OK;
}

OPARA__PRIVATE opara_result opara__cpu_prepare_einsum(opara__cpu_op* op, char* err, size_t cap) {
    uint32_t k;
    opara_dtype t = op->out[0].dtype;
    if (!op->params || !op->params->resolved || op->n_in < 1 || op->n_in > 2)
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "Einsum: the equation does not fit the operands");
    for (k = 0; k < op->n_in; ++k)
        if (op->in[k].dtype != t || (t != OPARA_DTYPE_F32 && t != OPARA_DTYPE_F64))
            return opara__cpu_reject(err, cap, OPARA_ERR_BAD_DTYPE, "Einsum: f32 or f64 operands of one type");
    op->work_items = opara__cpu_numel(&op->out[0]);
    op->min_items_per_task = 64;
    op->fn = opara__einsum_kernel;
    return OPARA_OK;
}
