/* CPU kernels of the gather/scatter and index-pattern operators: GatherElements, ScatterElements and
   Scatter, GatherND and ScatterND, Size, Trilu, Tile, EyeLike, OneHot and ReverseSequence
   (DepthToSpace and SpaceToDepth are strided copies: opara_cpu_movement.c). An index out of range is
   a data error: the kernel returns OPARA_ERR_BAD_INDEX and opara__cpu_index_explain says which. */
#include "opara_cpu.h"

/* Element i of an index tensor (i32 or i64; prepare checked). */
static int64_t opara__index_at(const opara__cpu_tensor* t, size_t i) {
    return t->dtype == OPARA_DTYPE_I64 ? ((const int64_t*)t->data)[i] : ((const int32_t*)t->data)[i];
}

static int opara__is_index_dtype(opara_dtype t) {
    return t == OPARA_DTYPE_I64 || t == OPARA_DTYPE_I32;
}

/* v normalized against a dim of size n (negative counts from the end); -1 when out of range. */
static int64_t opara__norm_index(int64_t v, int64_t n) {
    if (v < 0) v += n;
    return v < 0 || v >= n ? -1 : v;
}

static void opara__copy_elem(uint8_t* dst, const uint8_t* src, size_t e) {
    switch (e) {
    case 1: *dst = *src; break;
    case 2: memcpy(dst, src, 2); break;
    case 4: memcpy(dst, src, 4); break;
    case 8: memcpy(dst, src, 8); break;
    default: memcpy(dst, src, e); break;
    }
}

/* Copies the data input into the output (the scatters start from it). */
static void opara__copy_data(const opara__cpu_op* op) {
    size_t bytes = opara__cpu_numel(&op->out[0]) * op->p.elem;
    if (op->out[0].data != op->in[0].data && bytes) memcpy(op->out[0].data, op->in[0].data, bytes);
}

/* ---- reductions of the scatters -------------------------------------------------------------- */

/* d = s, or d combined with s (max/min keep a NaN of either side; integer add/mul wrap). */
#define OPARA__SCATTER_APPLY(T, U)                                                                      \
    static void opara__scatter_apply_##T(T* d, const T* s, size_t n, opara__scatter_reduction red) {   \
        size_t i;                                                                                     \
        switch (red) {                                                                                \
        case OPARA__SCATTER_NONE: for (i = 0; i < n; ++i) d[i] = s[i]; break;                        \
        case OPARA__SCATTER_ADD: for (i = 0; i < n; ++i) d[i] = (T)((U)d[i] + (U)s[i]); break;        \
        case OPARA__SCATTER_MUL: for (i = 0; i < n; ++i) d[i] = (T)((U)d[i] * (U)s[i]); break;        \
        case OPARA__SCATTER_MAX: for (i = 0; i < n; ++i) d[i] = s[i] > d[i] || s[i] != s[i] ? s[i] : d[i]; break; \
        case OPARA__SCATTER_MIN: for (i = 0; i < n; ++i) d[i] = s[i] < d[i] || s[i] != s[i] ? s[i] : d[i]; break; \
        }                                                                                             \
    }
OPARA__SCATTER_APPLY(float, float)
OPARA__SCATTER_APPLY(double, double)
OPARA__SCATTER_APPLY(int32_t, uint32_t)
OPARA__SCATTER_APPLY(int64_t, uint64_t)
OPARA__SCATTER_APPLY(int8_t, uint8_t)
OPARA__SCATTER_APPLY(uint8_t, uint8_t)
#undef OPARA__SCATTER_APPLY

/* n elements of s into d under the reduction (none: any dtype, a byte copy). */
static void opara__scatter_apply(opara_dtype t, size_t e, void* d, const void* s, size_t n, opara__scatter_reduction red) {
    if (red == OPARA__SCATTER_NONE) {
        memcpy(d, s, n * e);
        return;
    }
    switch (t) {
    case OPARA_DTYPE_F32: opara__scatter_apply_float((float*)d, (const float*)s, n, red); break;
    case OPARA_DTYPE_F64: opara__scatter_apply_double((double*)d, (const double*)s, n, red); break;
    case OPARA_DTYPE_I32: opara__scatter_apply_int32_t((int32_t*)d, (const int32_t*)s, n, red); break;
    case OPARA_DTYPE_I64: opara__scatter_apply_int64_t((int64_t*)d, (const int64_t*)s, n, red); break;
    case OPARA_DTYPE_I8: opara__scatter_apply_int8_t((int8_t*)d, (const int8_t*)s, n, red); break;
    case OPARA_DTYPE_U8: opara__scatter_apply_uint8_t((uint8_t*)d, (const uint8_t*)s, n, red); break;
    case OPARA_DTYPE_BOOL: case OPARA_DTYPE_F16: case OPARA_DTYPE_UNDEFINED: case OPARA_DTYPE_FORCE_U32: break;
    }
}

static int opara__scatter_dtype_ok(opara_dtype t, opara__scatter_reduction red) {
    return red == OPARA__SCATTER_NONE || t == OPARA_DTYPE_F32 || t == OPARA_DTYPE_F64 || t == OPARA_DTYPE_I32 ||
           t == OPARA_DTYPE_I64 || t == OPARA_DTYPE_I8 || t == OPARA_DTYPE_U8;
}

/* ---- GatherElements, ScatterElements, Scatter ------------------------------------------------ */

/* The data offset of element (row, j) of the indices, the axis coordinate left out: rows are the
   indices' innermost lines (p->inner elements each); p->src_stride holds the data's strides. */
static int64_t opara__elements_base(const opara__cpu_op* op, size_t row, size_t j) {
    const opara__cpu_tensor* idx = &op->in[1];
    const int64_t* xs = op->p.src_stride;
    int32_t last = idx->ndim - 1, d;
    int64_t off = last != op->p.axis ? (int64_t)j * xs[last] : 0;
    for (d = last - 1; d >= 0; --d) {
        int64_t c = (int64_t)(row % (size_t)idx->dims[d]);
        row /= (size_t)idx->dims[d];
        if (d != op->p.axis) off += c * xs[d];
    }
    return off;
}

static opara_result opara__gather_elements_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    const opara__cpu_tensor* idx = &op->in[1];
    const uint8_t* x = (const uint8_t*)op->in[0].data;
    uint8_t* y = (uint8_t*)op->out[0].data;
    size_t e = op->p.elem, w = (size_t)op->p.inner, row, j;
    int64_t dim = op->in[0].dims[op->p.axis], axis_stride = op->p.src_stride[op->p.axis];
    (void)scratch;
    for (row = begin; row < end; ++row) {
        for (j = 0; j < w; ++j) {
            int64_t v = opara__norm_index(opara__index_at(idx, row * w + j), dim);
            if (v < 0) return OPARA_ERR_BAD_INDEX;
            opara__copy_elem(y + (row * w + j) * e, x + (opara__elements_base(op, row, j) + v * axis_stride) * (int64_t)e, e);
        }
    }
    return OPARA_OK;
}

/* One work item: the updates are applied in order (duplicates reduce deterministically). */
static opara_result opara__scatter_elements_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    const opara__cpu_tensor *idx = &op->in[1], *upd = &op->in[2];
    uint8_t* y = (uint8_t*)op->out[0].data;
    size_t e = op->p.elem, w = (size_t)op->p.inner, rows = w ? opara__cpu_numel(idx) / w : 0, row, j;
    int64_t dim = op->in[0].dims[op->p.axis], axis_stride = op->p.src_stride[op->p.axis];
    opara__scatter_reduction red = (opara__scatter_reduction)op->p.mode;
    (void)scratch;
    if (begin >= end) return OPARA_OK;
    opara__copy_data(op);
    for (row = 0; row < rows; ++row) {
        for (j = 0; j < w; ++j) {
            int64_t v = opara__norm_index(opara__index_at(idx, row * w + j), dim);
            if (v < 0) return OPARA_ERR_BAD_INDEX;
            opara__scatter_apply(op->out[0].dtype, e, y + (opara__elements_base(op, row, j) + v * axis_stride) * (int64_t)e,
                                 (const uint8_t*)upd->data + (row * w + j) * e, 1, red);
        }
    }
    return OPARA_OK;
}

OPARA__PRIVATE opara_result opara__cpu_prepare_elements(opara__cpu_op* op, char* err, size_t cap) {
    const opara__cpu_tensor *x = &op->in[0], *idx = &op->in[1], *y = &op->out[0];
    const char* name = opara__op_name(op->node->op);
    int gather = op->node->op == OPARA__OP_GATHER_ELEMENTS;
    int64_t axis;
    int32_t d;
    if (!opara__cpu_record_axis(op, x->ndim, &axis))
        return opara__cpu_reject(err, cap, OPARA_ERR_BAD_INDEX, "%s: axis out of range", name);
    if (!opara__is_index_dtype(idx->dtype) || y->dtype != x->dtype)
        return opara__cpu_reject(err, cap, OPARA_ERR_BAD_DTYPE, "%s: indices must be i32/i64", name);
    if (idx->ndim != x->ndim || (gather ? !opara__cpu_same_dims(y, idx) : !opara__cpu_same_dims(y, x)))
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "%s: indices or output of the wrong shape", name);
    for (d = 0; d < x->ndim; ++d)
        if (d != axis && idx->dims[d] > x->dims[d])
            return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "%s: indices exceed the data on dim %d", name, (int)d);
    if (!gather && (!opara__cpu_same_dims(&op->in[2], idx) || op->in[2].dtype != x->dtype))
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "%s: updates must have the indices' shape and the data's type", name);
    op->p.axis = axis;
    op->p.elem = opara_dtype_size(x->dtype);
    op->p.inner = idx->ndim ? idx->dims[idx->ndim - 1] : 1;
    op->p.mode = op->node->op == OPARA__OP_SCATTER_ELEMENTS ? (int)op->params->u.index.reduction : OPARA__SCATTER_NONE;
    if (!opara__scatter_dtype_ok(x->dtype, (opara__scatter_reduction)op->p.mode))
        return opara__cpu_reject(err, cap, OPARA_ERR_BAD_DTYPE, "%s: a reduction needs f32, f64, i8, u8, i32 or i64 data", name);
    opara__cpu_natural_strides(x, op->p.src_stride);
    if (opara__cpu_numel(idx) > 0 && x->dims[axis] == 0)
        return opara__cpu_reject(err, cap, OPARA_ERR_BAD_INDEX, "%s: indexing an empty axis", name);
    op->work_items = gather ? (op->p.inner ? opara__cpu_numel(idx) / (size_t)op->p.inner : 0) : 1;
    op->min_items_per_task = 64;
    op->fn = gather ? opara__gather_elements_kernel : opara__scatter_elements_kernel;
    return OPARA_OK;
}

/* ---- GatherND, ScatterND ------------------------------------------------------------------------ */

/* The data offset (elements) of index tuple t, or -1 when an index is out of range. p->k: tuple
   length, p->n: batch dims, p->m: tuples per batch, p->base: the data elements of one batch. */
static int64_t opara__nd_offset(const opara__cpu_op* op, size_t t) {
    const opara__cpu_tensor *x = &op->in[0], *idx = &op->in[1];
    const opara__cpu_params* p = &op->p;
    int64_t off = (int64_t)(t / (size_t)p->m) * p->base, j;
    for (j = 0; j < p->k; ++j) {
        int32_t d = (int32_t)(p->n + j);
        int64_t v = opara__norm_index(opara__index_at(idx, t * (size_t)p->k + (size_t)j), x->dims[d]);
        if (v < 0) return -1;
        off += v * p->src_stride[d];
    }
    return off;
}

static opara_result opara__gather_nd_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    size_t block = (size_t)op->p.inner * op->p.elem, t;
    (void)scratch;
    for (t = begin; t < end; ++t) {
        int64_t off = opara__nd_offset(op, t);
        if (off < 0) return OPARA_ERR_BAD_INDEX;
        memcpy((uint8_t*)op->out[0].data + t * block, (const uint8_t*)op->in[0].data + off * (int64_t)op->p.elem, block);
    }
    return OPARA_OK;
}

static opara_result opara__scatter_nd_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    size_t e = op->p.elem, inner = (size_t)op->p.inner, tuples = (size_t)op->p.outer, t;
    (void)scratch;
    if (begin >= end) return OPARA_OK;
    opara__copy_data(op);
    for (t = 0; t < tuples; ++t) {
        int64_t off = opara__nd_offset(op, t);
        if (off < 0) return OPARA_ERR_BAD_INDEX;
        opara__scatter_apply(op->out[0].dtype, e, (uint8_t*)op->out[0].data + off * (int64_t)e,
                             (const uint8_t*)op->in[2].data + t * inner * e, inner, (opara__scatter_reduction)op->p.mode);
    }
    return OPARA_OK;
}

OPARA__PRIVATE opara_result opara__cpu_prepare_nd(opara__cpu_op* op, char* err, size_t cap) {
    const opara__cpu_tensor *x = &op->in[0], *idx = &op->in[1];
    const char* name = opara__op_name(op->node->op);
    int gather = op->node->op == OPARA__OP_GATHER_ND;
    int64_t b, k, tuples;
    if (!op->params || !op->params->resolved || idx->ndim < 1)
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "%s: indices and data do not fit", name);
    if (!opara__is_index_dtype(idx->dtype) || op->out[0].dtype != x->dtype)
        return opara__cpu_reject(err, cap, OPARA_ERR_BAD_DTYPE, "%s: indices must be i32/i64", name);
    b = gather ? op->params->u.index.batch_dims : 0;
    k = idx->dims[idx->ndim - 1];
    if (b < 0 || k < 1 || b + k > x->ndim || b >= idx->ndim)
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "%s: index tuples do not fit the data", name);
    tuples = opara__cpu_dims_prod(idx->dims, 0, idx->ndim - 1);
    op->p.k = k;
    op->p.n = b;
    op->p.outer = tuples;
    op->p.m = b ? tuples / OPARA__MAX(1, opara__cpu_dims_prod(idx->dims, 0, (int32_t)b)) : OPARA__MAX(tuples, 1);
    op->p.base = opara__cpu_dims_prod(x->dims, (int32_t)b, x->ndim);
    op->p.inner = opara__cpu_dims_prod(x->dims, (int32_t)(b + k), x->ndim);
    op->p.elem = opara_dtype_size(x->dtype);
    op->p.mode = gather ? OPARA__SCATTER_NONE : (int)op->params->u.index.reduction;
    if (op->p.m == 0) op->p.m = 1;
    if (!gather && (op->in[2].dtype != x->dtype || opara__cpu_numel(&op->in[2]) != (size_t)(tuples * op->p.inner)))
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "%s: updates do not fit the indices", name);
    if (!opara__scatter_dtype_ok(x->dtype, (opara__scatter_reduction)op->p.mode))
        return opara__cpu_reject(err, cap, OPARA_ERR_BAD_DTYPE, "%s: a reduction needs f32, f64, i8, u8, i32 or i64 data", name);
    opara__cpu_natural_strides(x, op->p.src_stride);
    op->work_items = gather ? (size_t)tuples : 1;
    op->min_items_per_task = 64;
    op->fn = gather ? opara__gather_nd_kernel : opara__scatter_nd_kernel;
    return OPARA_OK;
}

/* ---- Size -------------------------------------------------------------------------------------- */

static opara_result opara__size_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    int64_t n = (int64_t)opara__cpu_numel(&op->in[0]);
    (void)scratch;
    if (begin < end) memcpy(op->out[0].data, &n, sizeof n);
    return OPARA_OK;
}

OPARA__PRIVATE opara_result opara__cpu_prepare_size(opara__cpu_op* op, char* err, size_t cap) {
    if (op->out[0].dtype != OPARA_DTYPE_I64 || opara__cpu_numel(&op->out[0]) != 1)
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "Size: the output is not an i64 scalar");
    op->work_items = 1;
    op->fn = opara__size_kernel;
    return OPARA_OK;
}

/* ---- Trilu, EyeLike ----------------------------------------------------------------------------- */

/* One row of a matrix each: Trilu keeps columns j with j - i >= k (upper) or <= k (lower) and
   zeroes the rest; EyeLike writes one at column i + k and zero elsewhere. */
static opara_result opara__trilu_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    const opara__cpu_tensor* y = &op->out[0];
    size_t e = op->p.elem, rows = (size_t)y->dims[y->ndim - 2], cols = (size_t)y->dims[y->ndim - 1], r;
    (void)scratch;
    for (r = begin; r < end; ++r) {
        int64_t i = (int64_t)(r % rows), lo = op->p.trans_a ? i + op->p.k : 0, hi = op->p.trans_a ? (int64_t)cols : i + op->p.k + 1;
        uint8_t* dst = (uint8_t*)y->data + r * cols * e;
        const uint8_t* src = (const uint8_t*)op->in[0].data + r * cols * e;
        lo = OPARA__MAX(0, OPARA__MIN(lo, (int64_t)cols));
        hi = OPARA__MAX(lo, OPARA__MIN(hi, (int64_t)cols));
        memset(dst, 0, (size_t)lo * e);
        if (dst != src) memcpy(dst + (size_t)lo * e, src + (size_t)lo * e, (size_t)(hi - lo) * e);
        memset(dst + (size_t)hi * e, 0, (cols - (size_t)hi) * e);
    }
    return OPARA_OK;
}

static opara_result opara__eye_like_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    size_t e = op->p.elem, cols = (size_t)op->out[0].dims[1], r;
    (void)scratch;
    for (r = begin; r < end; ++r) {
        uint8_t* dst = (uint8_t*)op->out[0].data + r * cols * e;
        int64_t j = (int64_t)r + op->p.k;
        memset(dst, 0, cols * e);
        if (j >= 0 && j < (int64_t)cols) memcpy(dst + (size_t)j * e, op->p.fill, e);
    }
    return OPARA_OK;
}

OPARA__PRIVATE opara_result opara__cpu_prepare_trilu_eye(opara__cpu_op* op, char* err, size_t cap) {
    const opara__cpu_tensor *x = &op->in[0], *y = &op->out[0];
    int eye = op->node->op == OPARA__OP_EYE_LIKE;
    const char* name = opara__op_name(op->node->op);
    if (!op->params || !op->params->resolved || y->ndim < 2 || (eye && y->ndim != 2) || !opara__cpu_same_dims(x, y) ||
        (!eye && x->dtype != y->dtype))
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "%s: input and output do not match", name);
    op->p.elem = opara_dtype_size(y->dtype);
    op->p.k = op->params->u.index.k;
    op->p.trans_a = op->params->u.index.upper;
    if (eye) {
        uint64_t one = opara__dtype_one_bits(y->dtype);
        memcpy(op->p.fill, &one, sizeof one); /* little-endian: its first elem bytes are the value */
    }
    if (eye && !opara__dtype_one_bits(y->dtype))
        return opara__cpu_reject(err, cap, OPARA_ERR_BAD_DTYPE, "EyeLike: output type %s", opara_dtype_name(y->dtype));
    op->work_items = opara__cpu_numel(y) / OPARA__MAX(1, (size_t)y->dims[y->ndim - 1]);
    if (y->dims[y->ndim - 1] == 0) op->work_items = 0;
    op->min_items_per_task = 64;
    op->fn = eye ? opara__eye_like_kernel : opara__trilu_kernel;
    return OPARA_OK;
}

/* ---- Tile --------------------------------------------------------------------------------------- */

/* One output line (the innermost dim) each: the input line it repeats, written repeats times. */
static opara_result opara__tile_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    const opara__cpu_tensor *x = &op->in[0], *y = &op->out[0];
    int32_t nd = y->ndim, d;
    size_t e = op->p.elem, xw = nd ? (size_t)x->dims[nd - 1] : 1, yw = nd ? (size_t)y->dims[nd - 1] : 1, r, j;
    (void)scratch;
    for (r = begin; r < end; ++r) {
        size_t rem = r;
        int64_t src = 0;
        uint8_t* dst = (uint8_t*)y->data + r * yw * e;
        for (d = nd - 2; d >= 0; --d) {
            size_t c = rem % (size_t)y->dims[d];
            rem /= (size_t)y->dims[d];
            src += (int64_t)(c % (size_t)x->dims[d]) * op->p.src_stride[d];
        }
        for (j = 0; j < yw; j += xw) memcpy(dst + j * e, (const uint8_t*)x->data + src * (int64_t)e, xw * e);
    }
    return OPARA_OK;
}

OPARA__PRIVATE opara_result opara__cpu_prepare_tile(opara__cpu_op* op, char* err, size_t cap) {
    const opara__cpu_tensor *x = &op->in[0], *y = &op->out[0];
    int32_t d;
    if (x->ndim != y->ndim || x->dtype != y->dtype)
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "Tile: input and output ranks or types differ");
    for (d = 0; d < y->ndim; ++d)
        if (x->dims[d] == 0 ? y->dims[d] != 0 : y->dims[d] % x->dims[d] != 0)
            return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "Tile: output dim %d is not a multiple of the input's", (int)d);
    op->p.elem = opara_dtype_size(y->dtype);
    opara__cpu_natural_strides(x, op->p.src_stride);
    op->work_items = opara__cpu_numel(x) ? opara__cpu_numel(y) / (y->ndim ? (size_t)y->dims[y->ndim - 1] : 1) : 0;
    op->min_items_per_task = 64;
    op->fn = opara__tile_kernel;
    return OPARA_OK;
}

/* ---- OneHot ------------------------------------------------------------------------------------- */

/* Index i of any numeric type as an integer (floats truncate toward zero, as a cast does). */
static int64_t opara__one_hot_index(const opara__cpu_tensor* t, size_t i) {
    switch (t->dtype) {
    case OPARA_DTYPE_F32: return opara__cpu_f_to_i(((const float*)t->data)[i]);
    case OPARA_DTYPE_F64: return opara__cpu_f_to_i(((const double*)t->data)[i]);
    case OPARA_DTYPE_I32: return ((const int32_t*)t->data)[i];
    case OPARA_DTYPE_I64: return ((const int64_t*)t->data)[i];
    case OPARA_DTYPE_I8: return ((const int8_t*)t->data)[i];
    case OPARA_DTYPE_U8: return ((const uint8_t*)t->data)[i];
    case OPARA_DTYPE_BOOL: case OPARA_DTYPE_F16: case OPARA_DTYPE_UNDEFINED: case OPARA_DTYPE_FORCE_U32: break;
    }
    return -1;
}

/* Output line (o, d) of [outer, depth, inner]: off everywhere, on where index (o, i) is d. An index
   outside [-depth, depth) matches no d (ONNX: all off), not an error. */
static opara_result opara__one_hot_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    const opara__cpu_tensor* idx = &op->in[0];
    const uint8_t* values = (const uint8_t*)op->in[1].data;
    size_t e = op->p.elem, inner = (size_t)op->p.inner, depth = (size_t)op->p.mid, r, i;
    (void)scratch;
    for (r = begin; r < end; ++r) {
        size_t o = r / depth, d = r % depth;
        uint8_t* dst = (uint8_t*)op->out[0].data + r * inner * e;
        for (i = 0; i < inner; ++i) {
            int64_t v = opara__one_hot_index(idx, o * inner + i);
            if (v < 0) v += (int64_t)depth;
            opara__copy_elem(dst + i * e, values + (v == (int64_t)d ? e : 0), e);
        }
    }
    return OPARA_OK;
}

OPARA__PRIVATE opara_result opara__cpu_prepare_one_hot(opara__cpu_op* op, char* err, size_t cap) {
    const opara__cpu_tensor *idx = &op->in[0], *y = &op->out[0];
    int64_t axis;
    if (!opara__cpu_record_axis(op, y->ndim, &axis) || y->ndim != idx->ndim + 1 || opara__cpu_numel(&op->in[1]) != 2 ||
        op->in[1].dtype != y->dtype || y->dims[axis] != op->params->u.index.depth)
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "OneHot: indices, values and output do not fit");
    if (idx->dtype == OPARA_DTYPE_BOOL || idx->dtype == OPARA_DTYPE_F16)
        return opara__cpu_reject(err, cap, OPARA_ERR_BAD_DTYPE, "OneHot: indices of type %s", opara_dtype_name(idx->dtype));
    op->p.elem = opara_dtype_size(y->dtype);
    op->p.mid = y->dims[axis];
    op->p.inner = opara__cpu_dims_prod(idx->dims, (int32_t)axis, idx->ndim);
    op->p.outer = opara__cpu_dims_prod(idx->dims, 0, (int32_t)axis);
    op->work_items = (size_t)(op->p.outer * op->p.mid);
    op->min_items_per_task = 64;
    op->fn = opara__one_hot_kernel;
    return OPARA_OK;
}

/* ---- ReverseSequence ---------------------------------------------------------------------------- */

/* Item (a0, a1) over the first two dims: the time step t of batch b takes step len - 1 - t of its
   sequence when t < len, else itself. */
static opara_result opara__reverse_sequence_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    const opara__cpu_tensor* x = &op->in[0];
    size_t block = (size_t)op->p.inner * op->p.elem, d1 = (size_t)x->dims[1], item;
    int time0 = op->p.axis == 0;
    (void)scratch;
    for (item = begin; item < end; ++item) {
        size_t a0 = item / d1, a1 = item % d1, t = time0 ? a0 : a1, b = time0 ? a1 : a0, src_t;
        int64_t len = opara__index_at(&op->in[1], b);
        if (len < 0 || len > x->dims[op->p.axis]) return OPARA_ERR_BAD_INDEX;
        src_t = (int64_t)t < len ? (size_t)len - 1 - t : t;
        memcpy((uint8_t*)op->out[0].data + item * block,
               (const uint8_t*)x->data + (time0 ? src_t * d1 + b : b * d1 + src_t) * block, block);
    }
    return OPARA_OK;
}

OPARA__PRIVATE opara_result opara__cpu_prepare_reverse_sequence(opara__cpu_op* op, char* err, size_t cap) {
    const opara__cpu_tensor *x = &op->in[0], *lens = &op->in[1];
    if (!op->params || !op->params->resolved || x->ndim < 2 || !opara__cpu_same_dims(x, &op->out[0]) ||
        x->dtype != op->out[0].dtype || (size_t)x->dims[op->params->u.index.batch_axis] != opara__cpu_numel(lens))
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "ReverseSequence: input, sequence_lens and output do not fit");
    if (!opara__is_index_dtype(lens->dtype))
        return opara__cpu_reject(err, cap, OPARA_ERR_BAD_DTYPE, "ReverseSequence: sequence_lens must be i32/i64");
    op->p.axis = op->params->u.index.time_axis;
    op->p.elem = opara_dtype_size(x->dtype);
    op->p.inner = opara__cpu_dims_prod(x->dims, 2, x->ndim);
    op->work_items = (size_t)(x->dims[0] * x->dims[1]);
    op->min_items_per_task = 64;
    op->fn = opara__reverse_sequence_kernel;
    return OPARA_OK;
}

/* ---- errors ------------------------------------------------------------------------------------ */

/* The first out-of-range index of idx against a dim of size dim. */
static void opara__explain_flat(const opara__cpu_tensor* idx, int64_t dim, int64_t axis, char* buf, size_t cap) {
    size_t n = opara__cpu_numel(idx), j;
    for (j = 0; j < n; ++j) {
        int64_t v = opara__index_at(idx, j);
        if (opara__norm_index(v, dim) < 0) {
            opara__format(buf, cap, "index %lld (indices element %zu) is out of range for axis %lld of size %lld", (long long)v, j,
                          (long long)axis, (long long)dim);
            return;
        }
    }
}

static void opara__explain_nd(const opara__cpu_op* op, char* buf, size_t cap) {
    size_t t;
    int64_t j;
    for (t = 0; t < (size_t)op->p.outer; ++t)
        for (j = 0; j < op->p.k; ++j) {
            int32_t d = (int32_t)(op->p.n + j);
            int64_t v = opara__index_at(&op->in[1], t * (size_t)op->p.k + (size_t)j), dim = op->in[0].dims[d];
            if (opara__norm_index(v, dim) < 0) {
                opara__format(buf, cap, "index tuple %zu: element %lld = %lld is out of range for data dim %d of size %lld",
                              t, (long long)j, (long long)v, (int)d, (long long)dim);
                return;
            }
        }
}

static void opara__explain_lens(const opara__cpu_op* op, char* buf, size_t cap) {
    size_t n = opara__cpu_numel(&op->in[1]), b;
    int64_t steps = op->in[0].dims[op->p.axis];
    for (b = 0; b < n; ++b) {
        int64_t len = opara__index_at(&op->in[1], b);
        if (len < 0 || len > steps) {
            opara__format(buf, cap, "sequence_lens[%zu] = %lld is outside [0, %lld] (the time axis)", b, (long long)len,
                          (long long)steps);
            return;
        }
    }
}

OPARA__PRIVATE void opara__cpu_index_explain(const opara__cpu_op* op, char* buf, size_t cap) {
    opara__op kind = op->node->op;
    if (kind == OPARA__OP_GATHER_ELEMENTS || kind == OPARA__OP_SCATTER_ELEMENTS || kind == OPARA__OP_SCATTER)
        opara__explain_flat(&op->in[1], op->in[0].dims[op->p.axis], op->p.axis, buf, cap);
    if (kind == OPARA__OP_GATHER_ND || kind == OPARA__OP_SCATTER_ND) opara__explain_nd(op, buf, cap);
    if (kind == OPARA__OP_REVERSE_SEQUENCE) opara__explain_lens(op, buf, cap);
}
