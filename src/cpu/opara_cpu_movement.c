/* CPU kernels of the data-movement operators: strided copies (Expand, Transpose, Slice), the
   Reshape family, Concat and Split, Gather, Pad and Resize. */
#include "opara_cpu.h"

#include <math.h>

/* ---- Expand, Slice, Transpose: strided copies ------------------------------------------------ */

static void opara__copy_elems(uint8_t* dst, const uint8_t* src, int64_t src_stride, size_t n, size_t elem) {
    size_t i;
    if (src_stride == 1) {
        memcpy(dst, src, n * elem);
    } else if (elem == 4) {
        for (i = 0; i < n; ++i) memcpy(dst + 4 * i, src + (int64_t)i * src_stride * 4, 4);
    } else if (elem == 8) {
        for (i = 0; i < n; ++i) memcpy(dst + 8 * i, src + (int64_t)i * src_stride * 8, 8);
    } else {
        for (i = 0; i < n; ++i) memcpy(dst + elem * i, src + (int64_t)i * src_stride * (int64_t)elem, elem);
    }
}

/* out[i] = in[base + sum_d idx_d * stride_d] over the collapsed dims (stride table of input 0). */
static opara_result opara__strided_copy_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    const opara__cpu_params* p = &op->p;
    const uint8_t* x = (const uint8_t*)op->in[0].data;
    uint8_t* y = (uint8_t*)op->out[0].data;
    int64_t s = p->bc_strides[0][p->bc_ndim - 1];
    size_t e = p->elem, item;
    (void)scratch;
    for (item = begin; item < end; ++item) {
        size_t row, j0, n;
        int64_t off;
        opara__cpu_bc_item(p, item, &row, &j0, &n);
        opara__cpu_bc_offsets(p, 1, row, &off);
        off += p->base + (int64_t)j0 * s;
        opara__copy_elems(y + (row * (size_t)p->inner + j0) * e, x + off * (int64_t)e, s, n, e);
    }
    return OPARA_OK;
}

static opara_result opara__finish_strided_copy(opara__cpu_op* op, int64_t strides[][OPARA_MAX_DIMS]) {
    const opara__cpu_tensor* y = &op->out[0];
    op->p.elem = opara_dtype_size(y->dtype);
    opara__cpu_bc_collapse(&op->p, 1, y->ndim, y->dims, strides);
    op->work_items = (size_t)(op->p.outer * op->p.tail);
    op->min_items_per_task = 1;
    op->fn = opara__strided_copy_kernel;
    return OPARA_OK;
}

OPARA__PRIVATE opara_result opara__cpu_prepare_expand(opara__cpu_op* op, char* err, size_t cap) {
    if (op->in[0].dtype != op->out[0].dtype || !opara_dtype_size(op->out[0].dtype))
        return opara__cpu_reject(err, cap, OPARA_ERR_BAD_DTYPE, "Expand: input and output types differ");
    op->p.elem = opara_dtype_size(op->out[0].dtype);
    op->fn = opara__strided_copy_kernel;
    /* the output of Expand is the broadcast of the input and the shape: ok when input broadcasts */
    {
        int64_t strides[1][OPARA_MAX_DIMS];
        if (!opara__cpu_bcast_strides(op->out[0].ndim, op->out[0].dims, op->in[0].ndim, op->in[0].dims, strides[0]))
            return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "Expand: input does not broadcast to the output");
        op->p.base = 0;
        return opara__finish_strided_copy(op, strides);
    }
}

OPARA__PRIVATE opara_result opara__cpu_prepare_transpose(opara__cpu_op* op, char* err, size_t cap) {
    const opara__cpu_tensor *x = &op->in[0], *y = &op->out[0];
    const opara__node_params* rec = op->params;
    const int64_t* perm;
    int64_t in_str[OPARA_MAX_DIMS], strides[1][OPARA_MAX_DIMS];
    int32_t i;
    if (x->ndim != y->ndim || x->dtype != y->dtype)
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "Transpose: input and output ranks or types differ");
    if (!rec || !rec->resolved) /* the shape engine refused perm */
        return opara__cpu_reject(err, cap, OPARA_ERR_BAD_INDEX, "Transpose: perm is not a permutation");
    perm = rec->u.transpose.perm;
    opara__cpu_natural_strides(x, in_str);
    for (i = 0; i < y->ndim; ++i) {
        if (y->dims[i] != x->dims[perm[i]])
            return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "Transpose: output dim %d is wrong", (int)i);
        strides[0][i] = in_str[perm[i]];
    }
    op->p.base = 0;
    return opara__finish_strided_copy(op, strides);
}

/* Slice as the shape engine resolved it (first index, step and count per dim): a strided copy. */
OPARA__PRIVATE opara_result opara__cpu_prepare_slice(opara__cpu_op* op, char* err, size_t cap) {
    const opara__cpu_tensor *x = &op->in[0], *y = &op->out[0];
    const opara__node_params* rec = op->params;
    int64_t in_str[OPARA_MAX_DIMS], strides[1][OPARA_MAX_DIMS];
    int32_t d;
    if (!rec || !rec->resolved || x->ndim != y->ndim || x->dtype != y->dtype)
        return opara__cpu_reject(err, cap, OPARA_ERR_INVALID_ARGS, "Slice: starts/ends/axes/steps are inconsistent");
    opara__cpu_natural_strides(x, in_str);
    op->p.base = 0;
    for (d = 0; d < x->ndim; ++d) {
        if (rec->u.slice.count[d] != y->dims[d])
            return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "Slice: output dim %d is %lld, slice gives %lld", (int)d,
                                     (long long)y->dims[d], (long long)rec->u.slice.count[d]);
        strides[0][d] = rec->u.slice.step[d] * in_str[d];
        if (rec->u.slice.count[d] > 0) op->p.base += rec->u.slice.start[d] * in_str[d];
    }
    return opara__finish_strided_copy(op, strides);
}

/* ---- Reshape family: plain copies ------------------------------------------------------------ */

static opara_result opara__copy_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    size_t bytes = opara__cpu_numel(&op->out[0]) * op->p.elem, b0 = begin * 65536, b1 = OPARA__MIN(bytes, end * 65536);
    (void)scratch;
    if (op->in[0].data != op->out[0].data && b1 > b0)
        memcpy((uint8_t*)op->out[0].data + b0, (const uint8_t*)op->in[0].data + b0, b1 - b0);
    return OPARA_OK;
}

OPARA__PRIVATE opara_result opara__cpu_prepare_reshape(opara__cpu_op* op, char* err, size_t cap) {
    if (opara__cpu_numel(&op->in[0]) != opara__cpu_numel(&op->out[0]) || op->in[0].dtype != op->out[0].dtype)
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "%s: element counts or types differ",
                                 opara__op_name(op->node->op));
    op->p.elem = opara_dtype_size(op->out[0].dtype);
    op->work_items = (opara__cpu_numel(&op->out[0]) * op->p.elem + 65535) / 65536;
    op->min_items_per_task = 4;
    op->fn = opara__copy_kernel;
    return OPARA_OK;
}

/* ---- Dropout (inference): Y = X, the mask all true -------------------------------------------- */

static opara_result opara__dropout_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    size_t n = opara__cpu_numel(&op->out[0]), b0 = begin * 65536, b1 = OPARA__MIN(n, end * 65536);
    opara_result r = opara__copy_kernel(op, begin, end, scratch);
    if (op->n_out > 1 && op->out[1].data && b1 > b0) memset((uint8_t*)op->out[1].data + b0, 1, b1 - b0);
    return r;
}

OPARA__PRIVATE opara_result opara__cpu_prepare_dropout(opara__cpu_op* op, char* err, size_t cap) {
    opara_result r = opara__cpu_prepare_reshape(op, err, cap);
    if (r != OPARA_OK) return r;
    if (op->n_out > 1 && op->out[1].data &&
        (op->out[1].dtype != OPARA_DTYPE_BOOL || !opara__cpu_same_dims(&op->out[1], &op->out[0])))
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "Dropout: the mask must be bool shaped like Y");
    /* items of 65536 bytes of Y (the copy's) cover at least as many mask bytes as Y has elements */
    op->fn = opara__dropout_kernel;
    return OPARA_OK;
}

/* ---- Concat and Split ------------------------------------------------------------------------ */

static opara_result opara__concat_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    size_t e = op->p.elem, inner = (size_t)op->p.inner, row_bytes = (size_t)op->out[0].dims[op->p.axis] * inner * e;
    size_t o;
    uint32_t k;
    (void)scratch;
    for (o = begin; o < end; ++o) {
        uint8_t* dst = (uint8_t*)op->out[0].data + o * row_bytes;
        for (k = 0; k < op->n_in; ++k) {
            size_t chunk = (size_t)op->in[k].dims[op->p.axis] * inner * e;
            const uint8_t* src;
            if (chunk == 0) continue; /* an empty part may have no data pointer at all */
            src = (const uint8_t*)op->in[k].data + o * chunk;
            if (src != dst) memcpy(dst, src, chunk); /* else the producer wrote it in place */
            dst += chunk;
        }
    }
    return OPARA_OK;
}

static opara_result opara__split_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    size_t e = op->p.elem, inner = (size_t)op->p.inner, row_bytes = (size_t)op->in[0].dims[op->p.axis] * inner * e;
    size_t o;
    uint32_t k;
    (void)scratch;
    for (o = begin; o < end; ++o) {
        const uint8_t* src = (const uint8_t*)op->in[0].data + o * row_bytes;
        for (k = 0; k < op->n_out; ++k) {
            size_t chunk = (size_t)op->out[k].dims[op->p.axis] * inner * e;
            if (op->out[k].data) memcpy((uint8_t*)op->out[k].data + o * chunk, src, chunk);
            src += chunk;
        }
    }
    return OPARA_OK;
}

/* Checks that `t` equals `ref` except on `axis`. */
static int opara__same_except(const opara__cpu_tensor* t, const opara__cpu_tensor* ref, int64_t axis) {
    int32_t i;
    if (t->ndim != ref->ndim || t->dtype != ref->dtype) return 0;
    for (i = 0; i < t->ndim; ++i)
        if (i != axis && t->dims[i] != ref->dims[i]) return 0;
    return 1;
}

OPARA__PRIVATE opara_result opara__cpu_prepare_concat_split(opara__cpu_op* op, char* err, size_t cap) {
    int is_concat = op->node->op == OPARA__OP_CONCAT;
    const opara__cpu_tensor* whole = is_concat ? &op->out[0] : &op->in[0];
    const opara__cpu_tensor* parts = is_concat ? op->in : op->out;
    uint32_t n_parts = is_concat ? op->n_in : op->n_out, k;
    int64_t axis, sum = 0;
    if (!opara__cpu_record_axis(op, whole->ndim, &axis))
        return opara__cpu_reject(err, cap, OPARA_ERR_BAD_INDEX, "%s: axis out of range", opara__op_name(op->node->op));
    /* Split's sizes are its outputs' dims along the axis (the shape engine made them from 'split') */
    for (k = 0; k < n_parts; ++k) {
        if (!opara__same_except(&parts[k], whole, axis))
            return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "%s: part %u has the wrong shape or type",
                                     opara__op_name(op->node->op), k);
        sum += parts[k].dims[axis];
    }
    if (sum != whole->dims[axis])
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "%s: parts add up to %lld along the axis, not %lld",
                                 opara__op_name(op->node->op), (long long)sum, (long long)whole->dims[axis]);
    op->p.axis = axis;
    op->p.elem = opara_dtype_size(whole->dtype);
    op->p.inner = opara__cpu_dims_prod(whole->dims, (int32_t)axis + 1, whole->ndim);
    op->work_items = (size_t)opara__cpu_dims_prod(whole->dims, 0, (int32_t)axis);
    if (opara__cpu_numel(whole) == 0) op->work_items = 0;
    op->min_items_per_task = 16;
    op->fn = is_concat ? opara__concat_kernel : opara__split_kernel;
    return OPARA_OK;
}

/* ---- Gather ---------------------------------------------------------------------------------- */

static opara_result opara__gather_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    const opara__cpu_params* p = &op->p;
    const opara__cpu_tensor* idx = &op->in[1];
    size_t nidx = opara__cpu_numel(idx), block = (size_t)p->inner * p->elem, item;
    int64_t dim = op->in[0].dims[p->axis];
    (void)scratch;
    for (item = begin; item < end; ++item) {
        size_t o = item / nidx, j = item % nidx;
        int64_t v = idx->dtype == OPARA_DTYPE_I64 ? ((const int64_t*)idx->data)[j] : ((const int32_t*)idx->data)[j];
        if (v < 0) v += dim;
        if (v < 0 || v >= dim) return OPARA_ERR_BAD_INDEX;
        memcpy((uint8_t*)op->out[0].data + item * block,
               (const uint8_t*)op->in[0].data + (o * (size_t)dim + (size_t)v) * block, block);
    }
    return OPARA_OK;
}

/* The first out-of-range index of a Gather, for the error message. */
static void opara__gather_explain(const opara__cpu_op* op, char* buf, size_t cap) {
    const opara__cpu_tensor* idx = &op->in[1];
    size_t nidx = opara__cpu_numel(idx), j;
    int64_t dim = op->in[0].dims[op->p.axis];
    for (j = 0; j < nidx; ++j) {
        int64_t v = idx->dtype == OPARA_DTYPE_I64 ? ((const int64_t*)idx->data)[j] : ((const int32_t*)idx->data)[j];
        if (v < -dim || v >= dim) {
            opara__format(buf, cap, "index %lld (indices element %zu) is out of range for axis %lld of size %lld", (long long)v,
                          j, (long long)op->p.axis, (long long)dim);
            return;
        }
    }
}

OPARA__PRIVATE void opara__cpu_explain_error(const opara__cpu_op* op, char* buf, size_t cap) {
    if (op->node->op == OPARA__OP_GATHER) opara__gather_explain(op, buf, cap);
    opara__cpu_index_explain(op, buf, cap);
    if (op->node->op == OPARA__OP_LSTM || op->node->op == OPARA__OP_GRU || op->node->op == OPARA__OP_RNN)
        opara__cpu_rnn_explain(op, buf, cap);
    if (op->node->op == OPARA__OP_MAX_UNPOOL) opara__max_unpool_explain(op, buf, cap);
}

OPARA__PRIVATE opara_result opara__cpu_prepare_gather(opara__cpu_op* op, char* err, size_t cap) {
    const opara__cpu_tensor *x = &op->in[0], *idx = &op->in[1], *y = &op->out[0];
    int64_t axis;
    int32_t i, expect = x->ndim - 1 + idx->ndim;
    if (!opara__cpu_record_axis(op, x->ndim, &axis))
        return opara__cpu_reject(err, cap, OPARA_ERR_BAD_INDEX, "Gather: axis out of range");
    if ((idx->dtype != OPARA_DTYPE_I64 && idx->dtype != OPARA_DTYPE_I32) || y->dtype != x->dtype)
        return opara__cpu_reject(err, cap, OPARA_ERR_BAD_DTYPE, "Gather: indices must be i32/i64");
    if (y->ndim != expect) return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "Gather: output rank");
    for (i = 0; i < y->ndim; ++i) {
        int64_t want = i < axis ? x->dims[i] : (i < axis + idx->ndim ? idx->dims[i - axis] : x->dims[i - idx->ndim + 1]);
        if (y->dims[i] != want) return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "Gather: output dim %d", (int)i);
    }
    op->p.axis = axis;
    op->p.elem = opara_dtype_size(x->dtype);
    op->p.inner = opara__cpu_dims_prod(x->dims, (int32_t)axis + 1, x->ndim);
    op->work_items = x->dims[axis] == 0 && opara__cpu_numel(idx) ? 0 : opara__cpu_numel(y) / (op->p.inner ? (size_t)op->p.inner : 1);
    if (opara__cpu_numel(y) == 0) op->work_items = 0;
    if (x->dims[axis] == 0 && opara__cpu_numel(idx) > 0 && opara__cpu_numel(y) > 0)
        return opara__cpu_reject(err, cap, OPARA_ERR_BAD_INDEX, "Gather: indexing an empty axis");
    op->min_items_per_task = 256;
    op->fn = opara__gather_kernel;
    return OPARA_OK;
}

/* ---- DepthToSpace, SpaceToDepth: 6-D transposes ---------------------------------------------- */

/* The 6-D strided copy opara__depth_space_view describes. */
OPARA__PRIVATE opara_result opara__cpu_prepare_depth_space(opara__cpu_op* op, char* err, size_t cap) {
    const opara__cpu_tensor *x = &op->in[0], *y = &op->out[0];
    int64_t dims[6], strides[1][OPARA_MAX_DIMS];
    if (!op->params || !op->params->resolved || x->ndim != 4 || y->ndim != 4 || x->dtype != y->dtype ||
        opara__cpu_numel(x) != opara__cpu_numel(y))
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "%s: needs 4-D tensors of one type and size",
                                 opara__op_name(op->node->op));
    opara__depth_space_view(x->dims, op->params->u.index.blocksize, op->node->op == OPARA__OP_DEPTH_TO_SPACE,
                            op->params->u.index.crd, dims, strides[0]);
    op->p.base = 0;
    op->p.elem = opara_dtype_size(y->dtype);
    opara__cpu_bc_collapse(&op->p, 1, 6, dims, strides);
    op->work_items = (size_t)(op->p.outer * op->p.tail);
    op->min_items_per_task = 1;
    op->fn = opara__strided_copy_kernel;
    return OPARA_OK;
}

/* ---- Pad ------------------------------------------------------------------------------------- */

/* Source index for output index o of a dim of size n padded by `before`; -1 for the constant. */
static int64_t opara__pad_src(int mode, int64_t o, int64_t before, int64_t n) {
    int64_t s = o - before;
    if (s >= 0 && s < n) return s;
    if (mode == OPARA__PAD_CONSTANT || n == 0) return -1;
    if (mode == OPARA__PAD_EDGE) return s < 0 ? 0 : n - 1;
    if (n == 1) return 0;
    {
        int64_t period = 2 * (n - 1);
        s %= period;
        if (s < 0) s += period;
        return s >= n ? period - s : s;
    }
}

static opara_result opara__pad_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    const opara__cpu_params* p = &op->p;
    const opara__cpu_tensor *x = &op->in[0], *y = &op->out[0];
    int32_t nd = y->ndim, d;
    size_t e = p->elem, W = nd ? (size_t)y->dims[nd - 1] : 1, row, j;
    int64_t xw = nd ? x->dims[nd - 1] : 1, before = nd ? p->start[nd - 1] : 0;
    (void)scratch;
    for (row = begin; row < end; ++row) {
        uint8_t* dst = (uint8_t*)y->data + row * W * e;
        size_t rem = row;
        int64_t off = 0;
        int constant_row = 0;
        for (d = nd - 2; d >= 0; --d) {
            int64_t o = (int64_t)(rem % (size_t)y->dims[d]), s;
            rem /= (size_t)y->dims[d];
            s = opara__pad_src(p->mode, o, p->start[d], x->dims[d]);
            if (s < 0) constant_row = 1;
            else off += s * p->src_stride[d];
        }
        for (j = 0; j < W; ++j) {
            int64_t s = constant_row ? -1 : opara__pad_src(p->mode, (int64_t)j, before, xw);
            if (s == 0 && before >= 0 && j == (size_t)before && (int64_t)W - before >= xw) { /* the unpadded run */
                memcpy(dst + j * e, (const uint8_t*)x->data + (size_t)off * e, (size_t)xw * e);
                j += (size_t)xw - 1;
            } else if (s < 0) {
                memcpy(dst + j * e, p->fill, e);
            } else {
                memcpy(dst + j * e, (const uint8_t*)x->data + (size_t)(off + s) * e, e);
            }
        }
    }
    return OPARA_OK;
}

OPARA__PRIVATE opara_result opara__cpu_prepare_pad(opara__cpu_op* op, char* err, size_t cap) {
    const opara__cpu_tensor *x = &op->in[0], *y = &op->out[0];
    opara__cpu_params* p = &op->p;
    const opara__node_params* rec = op->params;
    const opara__pad_params* pp;
    float value;
    int32_t d;
    if (!rec || !rec->resolved || x->ndim != y->ndim || x->dtype != y->dtype || !opara__cpu_cast_type_ok(x->dtype))
        return opara__cpu_reject(err, cap, OPARA_ERR_INVALID_ARGS, "Pad: pads/axes do not match the input rank or type");
    pp = &rec->u.pad;
    switch (pp->mode) {
    case OPARA__PAD_CONSTANT: case OPARA__PAD_REFLECT: case OPARA__PAD_EDGE: break;
    case OPARA__PAD_WRAP: return opara__cpu_reject(err, cap, OPARA_ERR_UNSUPPORTED, "Pad: mode '%s'", opara__pad_mode_name(pp->mode));
    }
    p->mode = (int)pp->mode;
    value = pp->value;
    opara__cpu_natural_strides(x, p->src_stride);
    for (d = 0; d < x->ndim; ++d) {
        if (x->dims[d] + pp->begin[d] + pp->end[d] != y->dims[d])
            return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "Pad: output dim %d is wrong", (int)d);
        if (pp->mode != OPARA__PAD_CONSTANT && x->dims[d] == 0 && y->dims[d] > 0)
            return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "Pad: cannot %s-pad an empty dim", opara__pad_mode_name(pp->mode));
        p->start[d] = pp->begin[d];
    }
    p->elem = opara_dtype_size(y->dtype);
    memset(p->fill, 0, sizeof p->fill);
    if (y->dtype == OPARA_DTYPE_F32) memcpy(p->fill, &value, 4);
    else if (y->dtype == OPARA_DTYPE_F64) {
        double v = value;
        memcpy(p->fill, &v, 8);
    } else {
        opara__cpu_store_i(p->fill, y->dtype, 0, opara__cpu_f_to_i(value));
    }
    op->work_items = y->ndim && y->dims[y->ndim - 1] ? opara__cpu_numel(y) / (size_t)y->dims[y->ndim - 1] : (opara__cpu_numel(y) ? 1 : 0);
    op->min_items_per_task = 16;
    op->fn = opara__pad_kernel;
    return OPARA_OK;
}

/* ---- Resize ---------------------------------------------------------------------------------- */

/* Input coordinate of output index x along dim d (the IR's opara__resize_source). */
static double opara__resize_coord(const opara__cpu_params* p, int32_t d, int64_t x, int64_t in, int64_t out) {
    return opara__resize_source((opara__resize_coord_mode)p->coord_mode, p->scale[d], p->roi_lo[d], p->roi_hi[d], x, in, out);
}

/* Nearest source index, or -1 when tf_crop_and_resize extrapolates. */
static int64_t opara__resize_nearest(const opara__cpu_params* p, int32_t d, int64_t x, int64_t in, int64_t out) {
    double c, f;
    int64_t i;
    c = opara__resize_coord(p, d, x, in, out);
    f = floor(c);
    if (p->coord_mode == OPARA__RESIZE_TF_CROP_AND_RESIZE && (c < 0.0 || c > (double)(in - 1))) return -1;
    switch (p->nearest_mode) {
    case OPARA__NEAREST_ROUND_PREFER_CEIL: i = (int64_t)(c - f >= 0.5 ? f + 1.0 : f); break;
    case OPARA__NEAREST_FLOOR: i = (int64_t)f; break;
    case OPARA__NEAREST_CEIL: i = (int64_t)ceil(c); break;
    default: i = (int64_t)(c - f > 0.5 ? f + 1.0 : f); break;
    }
    return i < 0 ? 0 : (i > in - 1 ? in - 1 : i);
}

/* Rows [begin, end) of the output's last dimension; the source column of every output column is
   computed once per call into scratch (W int32, -1 outside the input). */
static opara_result opara__resize_nearest_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    const opara__cpu_params* p = &op->p;
    const opara__cpu_tensor *x = &op->in[0], *y = &op->out[0];
    int32_t nd = y->ndim, d;
    size_t e = p->elem, W = (size_t)y->dims[nd - 1], row, j;
    int32_t* col = (int32_t*)(void*)scratch;
    for (j = 0; j < W; ++j) col[j] = (int32_t)opara__resize_nearest(p, nd - 1, (int64_t)j, x->dims[nd - 1], (int64_t)W);
    for (row = begin; row < end; ++row) {
        uint8_t* dst = (uint8_t*)y->data + row * W * e;
        size_t rem = row;
        int64_t off = 0;
        int outside = 0;
        for (d = nd - 2; d >= 0; --d) {
            int64_t o = (int64_t)(rem % (size_t)y->dims[d]), s;
            rem /= (size_t)y->dims[d];
            s = opara__resize_nearest(p, d, o, x->dims[d], y->dims[d]);
            if (s < 0) outside = 1;
            else off += s * p->src_stride[d];
        }
        if (e == 4 && !outside) { /* f32 and int32: one load and store per output */
            const uint32_t* src = (const uint32_t*)x->data + off;
            uint32_t* out = (uint32_t*)(void*)dst, fill;
            memcpy(&fill, p->fill, 4);
            for (j = 0; j < W; ++j) out[j] = col[j] < 0 ? fill : src[col[j]];
            continue;
        }
        for (j = 0; j < W; ++j) {
            int64_t s = outside ? -1 : col[j];
            if (s < 0) memcpy(dst + j * e, p->fill, e);
            else memcpy(dst + j * e, (const uint8_t*)x->data + (size_t)(off + s) * e, e);
        }
    }
    return OPARA_OK;
}

/* Linear taps of one output index: i0, i1 and the weight of i1; 0 if extrapolated. */
static int opara__resize_taps(const opara__cpu_params* p, int32_t d, int64_t x, int64_t in, int64_t out, int64_t* i0,
                              int64_t* i1, float* w) {
    double c = opara__resize_coord(p, d, x, in, out), f;
    if (p->coord_mode == OPARA__RESIZE_TF_CROP_AND_RESIZE && (c < 0.0 || c > (double)(in - 1))) return 0;
    if (c < 0.0) c = 0.0;
    if (c > (double)(in - 1)) c = (double)(in - 1);
    f = floor(c);
    *i0 = (int64_t)f;
    *i1 = *i0 + 1 < in ? *i0 + 1 : in - 1;
    *w = (float)(c - f);
    return 1;
}

/* Bicubic over the last two dims (the others are not resized): the column taps once per call in
   scratch (4 indices as int32, then 4 weights, per output column; a column of -1 extrapolates). */
static opara_result opara__resize_cubic_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    const opara__cpu_params* p = &op->p;
    const opara__cpu_tensor *x = &op->in[0], *y = &op->out[0];
    int32_t nd = y->ndim;
    int64_t H = x->dims[nd - 2], Wi = x->dims[nd - 1], OH = y->dims[nd - 2], OW = y->dims[nd - 1], j, col[4];
    int32_t* cols = (int32_t*)(void*)scratch;
    float* cw = scratch + 4 * OW;
    size_t row;
    float fill;
    memcpy(&fill, p->fill, 4);
    for (j = 0; j < OW; ++j) {
        int k, ok = opara__resize_cubic_taps(&op->params->u.resize, nd - 1, j, Wi, OW, col, cw + 4 * j);
        for (k = 0; k < 4; ++k) cols[4 * j + k] = ok ? (int32_t)col[k] : -1;
    }
    for (row = begin; row < end; ++row) {
        size_t plane = row / (size_t)OH;
        int64_t oh = (int64_t)(row % (size_t)OH), rows[4];
        float wh[4];
        const float* src = (const float*)x->data + plane * (size_t)(H * Wi);
        float* dst = (float*)y->data + row * (size_t)OW;
        int row_ok = opara__resize_cubic_taps(&op->params->u.resize, nd - 2, oh, H, OH, rows, wh);
        for (j = 0; j < OW; ++j) {
            const int32_t* cj = cols + 4 * j;
            const float* wj = cw + 4 * j;
            float acc = 0.0f;
            int a, b;
            if (!row_ok || cj[0] < 0) {
                dst[j] = fill;
                continue;
            }
            for (a = 0; a < 4; ++a) {
                const float* s = src + rows[a] * Wi;
                float part = 0.0f;
                for (b = 0; b < 4; ++b) part += s[cj[b]] * wj[b];
                acc += part * wh[a];
            }
            dst[j] = acc;
        }
    }
    return OPARA_OK;
}

/* Bilinear over the last two dims (the others are not resized). */
static opara_result opara__resize_linear_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    const opara__cpu_params* p = &op->p;
    const opara__cpu_tensor *x = &op->in[0], *y = &op->out[0];
    int32_t nd = y->ndim;
    int64_t H = x->dims[nd - 2], Wi = x->dims[nd - 1], OH = y->dims[nd - 2], OW = y->dims[nd - 1];
    size_t row, j;
    float fill;
    memcpy(&fill, p->fill, 4);
    (void)scratch;
    for (row = begin; row < end; ++row) {
        size_t plane = row / (size_t)OH;
        int64_t oh = (int64_t)(row % (size_t)OH), h0 = 0, h1 = 0;
        float wh = 0.0f;
        const float* src = (const float*)x->data + plane * (size_t)(H * Wi);
        float* dst = (float*)y->data + row * (size_t)OW;
        int row_ok = opara__resize_taps(p, nd - 2, oh, H, OH, &h0, &h1, &wh);
        for (j = 0; j < (size_t)OW; ++j) {
            int64_t w0 = 0, w1 = 0;
            float ww = 0.0f, top, bot;
            if (!row_ok || !opara__resize_taps(p, nd - 1, (int64_t)j, Wi, OW, &w0, &w1, &ww)) {
                dst[j] = fill;
                continue;
            }
            top = src[h0 * Wi + w0] * (1.0f - ww) + src[h0 * Wi + w1] * ww;
            bot = src[h1 * Wi + w0] * (1.0f - ww) + src[h1 * Wi + w1] * ww;
            dst[j] = top * (1.0f - wh) + bot * wh;
        }
    }
    return OPARA_OK;
}

OPARA__PRIVATE opara_result opara__cpu_prepare_resize(opara__cpu_op* op, char* err, size_t cap) {
    const opara__cpu_tensor *x = &op->in[0], *y = &op->out[0];
    opara__cpu_params* p = &op->p;
    const opara__node_params* rec = op->params;
    const opara__resize_params* rp;
    float extrap;
    int32_t d;
    if (x->ndim != y->ndim || x->ndim < 1 || x->dtype != y->dtype)
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "Resize: input and output ranks or types differ");
    if (!rec || !rec->resolved) /* the shape engine refused the scales, sizes, axes or roi */
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "Resize: scales/sizes/axes/roi do not match the input");
    rp = &rec->u.resize;
    if (rp->antialias) return opara__cpu_reject(err, cap, OPARA_ERR_UNSUPPORTED, "Resize: antialias is not supported");
    if (rp->coord == OPARA__RESIZE_COORD_UNKNOWN || rp->nearest == OPARA__NEAREST_UNKNOWN)
        return opara__cpu_reject(err, cap, OPARA_ERR_UNSUPPORTED, "Resize: unknown coordinate or nearest mode");
    p->coord_mode = (int)rp->coord;
    p->nearest_mode = (int)rp->nearest;
    extrap = rp->extrapolation_value;
    for (d = 0; d < x->ndim; ++d) p->scale[d] = rp->scale[d], p->roi_lo[d] = rp->roi_lo[d], p->roi_hi[d] = rp->roi_hi[d];
    for (d = 0; d < x->ndim; ++d)
        if (x->dims[d] == 0 && y->dims[d] > 0) return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "Resize: empty input");
    opara__cpu_natural_strides(x, p->src_stride);
    p->elem = opara_dtype_size(y->dtype);
    memset(p->fill, 0, sizeof p->fill);
    if (y->dtype == OPARA_DTYPE_F32) memcpy(p->fill, &extrap, 4);
    op->work_items = y->dims[y->ndim - 1] ? opara__cpu_numel(y) / (size_t)y->dims[y->ndim - 1] : 0;
    op->min_items_per_task = 8;
    if (rp->mode == OPARA__RESIZE_NEAREST) {
        p->mode = OPARA__RESIZE_NEAREST;
        op->fn = opara__resize_nearest_kernel;
        if (y->dims[y->ndim - 1] > INT32_MAX || x->dims[x->ndim - 1] > INT32_MAX)
            return opara__cpu_reject(err, cap, OPARA_ERR_UNSUPPORTED, "Resize: a last dimension above 2^31");
        op->scratch_floats = (size_t)y->dims[y->ndim - 1]; /* the source columns, int32 */
        return OPARA_OK;
    }
    if (y->dtype != OPARA_DTYPE_F32 || x->ndim < 2)
        return opara__cpu_reject(err, cap, OPARA_ERR_UNSUPPORTED, "Resize: linear and cubic need f32 of rank >= 2");
    for (d = 0; d < x->ndim - 2; ++d)
        if (x->dims[d] != y->dims[d])
            return opara__cpu_reject(err, cap, OPARA_ERR_UNSUPPORTED, "Resize: linear and cubic only over the last two dims");
    p->mode = (int)rp->mode;
    op->fn = opara__resize_linear_kernel;
    if (rp->mode == OPARA__RESIZE_CUBIC) {
        if (y->dims[y->ndim - 1] > INT32_MAX / 4 || x->dims[x->ndim - 1] > INT32_MAX)
            return opara__cpu_reject(err, cap, OPARA_ERR_UNSUPPORTED, "Resize: a last dimension above 2^29");
        op->scratch_floats = 8 * (size_t)y->dims[y->ndim - 1]; /* the column taps */
        op->fn = opara__resize_cubic_kernel;
    }
    return OPARA_OK;
}
