/* CPU kernels of the normalization operators: LayerNormalization and BatchNormalization
   (inference). */
#include "opara_cpu.h"

#include <math.h>

/* ---- LayerNormalization ---------------------------------------------------------------------- */

static opara_result opara__layer_norm_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    const opara__cpu_params* p = &op->p;
    size_t L = (size_t)p->mid, item, j;
    const float* sc = (const float*)op->in[1].data;
    const float* bias = op->n_in > 2 ? (const float*)op->in[2].data : NULL;
    float* mean_out = op->n_out > 1 ? (float*)op->out[1].data : NULL;
    float* inv_out = op->n_out > 2 ? (float*)op->out[2].data : NULL;
    size_t ss = (size_t)p->bc_strides[0][0], bs = (size_t)p->bc_strides[1][0];
    (void)scratch;
    int level = opara__cpu_isa_level();
    for (item = begin; item < end; ++item) {
        const float* x = (const float*)op->in[0].data + item * L;
        float* y = (float*)op->out[0].data + item * L;
        double mean_d, var;
        float mean, inv;
        opara__row_moments(level, x, L, &mean_d, &var);
        mean = (float)mean_d;
        inv = (float)(1.0 / sqrt(var + (double)p->eps));
        for (j = 0; j < L; ++j) y[j] = (x[j] - mean) * inv * sc[j * ss] + (bias ? bias[j * bs] : 0.0f);
        if (mean_out) mean_out[item] = mean;
        if (inv_out) inv_out[item] = inv;
    }
    return OPARA_OK;
}

OPARA__PRIVATE opara_result opara__cpu_prepare_layer_norm(opara__cpu_op* op, char* err, size_t cap) {
    const opara__cpu_tensor* x = &op->in[0];
    int64_t axis, outer;
    size_t L;
    uint32_t k;
    if (!opara__cpu_same_dims(x, &op->out[0]) || x->dtype != OPARA_DTYPE_F32)
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "LayerNormalization: needs f32, equal X/Y shapes");
    if (!opara__cpu_record_axis(op, x->ndim, &axis))
        return opara__cpu_reject(err, cap, OPARA_ERR_BAD_INDEX, "LayerNormalization: axis out of range");
    op->p.eps = op->params->u.epsilon; /* resolved: opara__cpu_record_axis checked it */
    op->p.mid = opara__cpu_dims_prod(x->dims, (int32_t)axis, x->ndim);
    outer = opara__cpu_dims_prod(x->dims, 0, (int32_t)axis);
    L = (size_t)op->p.mid;
    for (k = 1; k < 3 && k < op->n_in; ++k) {
        size_t n = opara__cpu_numel(&op->in[k]);
        if (!op->in[k].data) continue;
        if (n != L && n != 1)
            return opara__cpu_reject(err, cap, OPARA_ERR_UNSUPPORTED, "LayerNormalization: scale/bias of %zu elements", n);
        op->p.bc_strides[k - 1][0] = n == 1 ? 0 : 1;
    }
    for (k = 1; k < op->n_out; ++k)
        if (op->out[k].data && opara__cpu_numel(&op->out[k]) != (size_t)outer)
            return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "LayerNormalization: Mean/InvStdDev shape");
    if (op->n_in < 2 || !op->in[1].data) return opara__cpu_reject(err, cap, OPARA_ERR_INVALID_ARGS, "LayerNormalization needs Scale");
    op->work_items = L ? (size_t)outer : 0;
    op->min_items_per_task = 4;
    op->fn = opara__layer_norm_kernel;
    return OPARA_OK;
}

/* ---- BatchNormalization (inference) ---------------------------------------------------------- */

static opara_result opara__batch_norm_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    size_t C = (size_t)op->p.cin, HW = (size_t)op->p.inner, item, j;
    (void)scratch;
    for (item = begin; item < end; ++item) {
        size_t c = item % C;
        float s = ((const float*)op->in[1].data)[c], b = ((const float*)op->in[2].data)[c];
        float m = ((const float*)op->in[3].data)[c], v = ((const float*)op->in[4].data)[c];
        float k = s / sqrtf(v + op->p.eps), off = b - m * k;
        const float* x = (const float*)op->in[0].data + item * HW;
        float* y = (float*)op->out[0].data + item * HW;
        for (j = 0; j < HW; ++j) y[j] = x[j] * k + off;
    }
    return OPARA_OK;
}

OPARA__PRIVATE opara_result opara__cpu_prepare_batch_norm(opara__cpu_op* op, char* err, size_t cap) {
    const opara__cpu_tensor* x = &op->in[0];
    uint32_t k;
    if (!op->params || !op->params->resolved || op->n_in < 5 || x->ndim < 2 || !opara__cpu_same_dims(x, &op->out[0]))
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "BatchNormalization: needs 5 inputs and X/Y of rank >= 2");
    for (k = 1; k < 5; ++k)
        if (!op->in[k].data || opara__cpu_numel(&op->in[k]) != (size_t)x->dims[1])
            return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "BatchNormalization: input %u must have C elements", k);
    op->p.eps = op->params->u.epsilon;
    op->p.cin = x->dims[1];
    op->p.inner = opara__cpu_dims_prod(x->dims, 2, x->ndim);
    op->work_items = (size_t)(x->dims[0] * x->dims[1]);
    op->min_items_per_task = 1;
    op->fn = opara__batch_norm_kernel;
    return OPARA_OK;
}

/* ---- InstanceNormalization ------------------------------------------------------------------- */

/* One (n, c) plane per item: its mean and variance (in double), then scale and bias of channel c. */
static opara_result opara__instance_norm_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    size_t C = (size_t)op->p.cin, HW = (size_t)op->p.inner, item, j;
    int level = opara__cpu_isa_level();
    (void)scratch;
    for (item = begin; item < end; ++item) {
        const float* x = (const float*)op->in[0].data + item * HW;
        float* y = (float*)op->out[0].data + item * HW;
        size_t c = item % C;
        double mean, var;
        float k, off;
        opara__row_moments(level, x, HW, &mean, &var);
        k = (float)(1.0 / sqrt(var + (double)op->p.eps)) * ((const float*)op->in[1].data)[c];
        off = ((const float*)op->in[2].data)[c] - (float)mean * k;
        for (j = 0; j < HW; ++j) y[j] = x[j] * k + off;
    }
    return OPARA_OK;
}

OPARA__PRIVATE opara_result opara__cpu_prepare_instance_norm(opara__cpu_op* op, char* err, size_t cap) {
    const opara__cpu_tensor* x = &op->in[0];
    uint32_t k;
    if (!op->params || !op->params->resolved || op->n_in < 3 || x->ndim < 3 || !opara__cpu_same_dims(x, &op->out[0]))
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "InstanceNormalization: needs 3 inputs and X/Y of rank >= 3");
    for (k = 1; k < 3; ++k)
        if (!op->in[k].data || opara__cpu_numel(&op->in[k]) != (size_t)x->dims[1])
            return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "InstanceNormalization: input %u must have C elements", k);
    op->p.eps = op->params->u.epsilon;
    op->p.cin = x->dims[1];
    op->p.inner = opara__cpu_dims_prod(x->dims, 2, x->ndim);
    op->work_items = (size_t)(x->dims[0] * x->dims[1]);
    op->min_items_per_task = 1;
    op->fn = opara__instance_norm_kernel;
    return OPARA_OK;
}

/* ---- LRN ------------------------------------------------------------------------------------- */

/* One (n, c) plane per item: y = x / (bias + alpha / size * sum of x^2 over the channels
   [c - floor((size - 1) / 2), c + ceil((size - 1) / 2)] that exist) ^ beta. */
static opara_result opara__lrn_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    const opara__cpu_params* p = &op->p;
    int64_t C = p->cin, HW = p->inner, size = p->k, lo_off = (size - 1) / 2, hi_off = size - 1 - lo_off;
    float coef = p->alpha / (float)size;
    size_t item;
    for (item = begin; item < end; ++item) {
        int64_t c = (int64_t)(item % (size_t)C), plane0 = (int64_t)item - c, lo = c - lo_off, hi = c + hi_off, cc, j;
        const float* x = (const float*)op->in[0].data;
        float* y = (float*)op->out[0].data + (int64_t)item * HW;
        if (lo < 0) lo = 0;
        if (hi > C - 1) hi = C - 1;
        for (j = 0; j < HW; ++j) scratch[j] = 0.0f;
        for (cc = lo; cc <= hi; ++cc) {
            const float* xc = x + (plane0 + cc) * HW;
            for (j = 0; j < HW; ++j) scratch[j] += xc[j] * xc[j];
        }
        for (j = 0; j < HW; ++j) y[j] = x[(int64_t)item * HW + j] / powf(p->value + coef * scratch[j], p->beta);
    }
    return OPARA_OK;
}

OPARA__PRIVATE opara_result opara__cpu_prepare_lrn(opara__cpu_op* op, char* err, size_t cap) {
    const opara__cpu_tensor* x = &op->in[0];
    if (!op->params || !op->params->resolved || x->ndim < 2 || !opara__cpu_same_dims(x, &op->out[0]))
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "LRN: needs X/Y of rank >= 2 alike");
    op->p.alpha = op->params->u.lrn.alpha;
    op->p.beta = op->params->u.lrn.beta;
    op->p.value = op->params->u.lrn.bias;
    op->p.k = op->params->u.lrn.size;
    op->p.cin = x->dims[1];
    op->p.inner = opara__cpu_dims_prod(x->dims, 2, x->ndim);
    op->work_items = (size_t)(x->dims[0] * x->dims[1]);
    op->min_items_per_task = 1;
    op->scratch_floats = (size_t)op->p.inner;
    op->fn = opara__lrn_kernel;
    return OPARA_OK;
}
