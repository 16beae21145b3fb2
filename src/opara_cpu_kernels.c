/* CPU kernels for the element-wise, data-movement, normalization and reduction operators,
   opara__cpu_prepare (validation + dispatch) and the constant weights' packing: the top of the CPU
   kernel files. Conv and pools are in opara_cpu_conv.c (Winograd in opara_cpu_winograd.c), GEMM in
   opara_cpu_gemm.c, vector math in opara_cpu_math.c, the helpers they all share in
   opara_cpu_base.c. */
#include "opara_cpu.h"

#include <math.h>
#include <stdio.h>

#define OPARA__CHUNK 16384 /* elements per work item of element-wise kernels */

/* ---- helpers --------------------------------------------------------------------------------- */

/* The axis the shape engine resolved for the node (normalized), when it is one of the rank's. */
static int opara__record_axis(const opara__cpu_op* op, int32_t rank, int64_t* axis) {
    if (!op->params || !op->params->resolved || op->params->axis < 0 || op->params->axis >= rank) return 0;
    *axis = op->params->axis;
    return 1;
}

static int64_t opara__dims_prod(const int64_t* dims, int32_t from, int32_t to) {
    int64_t n = 1;
    int32_t i;
    for (i = from; i < to; ++i) n *= dims[i];
    return n;
}

/* Drops unit dims and merges neighbours that are contiguous for every input; fills
   p->bc_ndim/bc_dims/bc_strides. strides[k] are the uncollapsed element strides of input k. */
static void opara__bc_collapse(opara__cpu_params* p, int n_in, int32_t ndim, const int64_t* dims,
                               int64_t strides[][OPARA_MAX_DIMS]) {
    int32_t i, nd = 0;
    int k;
    for (i = 0; i < ndim; ++i) {
        if (dims[i] == 1) continue;
        if (nd > 0) {
            int merge = 1;
            for (k = 0; k < n_in; ++k)
                if (p->bc_strides[k][nd - 1] != strides[k][i] * dims[i]) merge = 0;
            if (merge) {
                p->bc_dims[nd - 1] *= dims[i];
                for (k = 0; k < n_in; ++k) p->bc_strides[k][nd - 1] = strides[k][i];
                continue;
            }
        }
        p->bc_dims[nd] = dims[i];
        for (k = 0; k < n_in; ++k) p->bc_strides[k][nd] = strides[k][i];
        ++nd;
    }
    if (nd == 0) {
        p->bc_dims[0] = 1;
        for (k = 0; k < n_in; ++k) p->bc_strides[k][0] = 0;
        nd = 1;
    }
    p->bc_ndim = nd;
    /* work items: rows (all but the innermost dim) x chunks of the innermost dim */
    p->inner = p->bc_dims[nd - 1];
    p->tail = p->inner > 0 ? (p->inner + OPARA__CHUNK - 1) / OPARA__CHUNK : 0;
    p->outer = opara__dims_prod(p->bc_dims, 0, nd - 1);
}

/* Sets up broadcasting of n_in inputs to the output with the strides of the node's record; checks
   the output is their broadcast (leading dims of 1 allowed). */
static opara_result opara__bc_prepare(opara__cpu_op* op, int n_in, const opara__cpu_tensor* const* ins, char* err,
                                      size_t cap) {
    const opara__cpu_tensor* y = &op->out[0];
    const opara__node_params* rec = op->params;
    int64_t strides[OPARA__BCAST_MAX_IN][OPARA_MAX_DIMS];
    opara__shape shapes[OPARA__BCAST_MAX_IN], want;
    const opara__shape* pointers[OPARA__BCAST_MAX_IN];
    int32_t i, lead;
    int k;
    for (k = 0; k < n_in; ++k) {
        shapes[k].ndim = ins[k]->ndim;
        memcpy(shapes[k].dims, ins[k]->dims, (size_t)ins[k]->ndim * sizeof ins[k]->dims[0]);
        pointers[k] = &shapes[k];
    }
    if (!rec || !rec->resolved || !opara__broadcast_shapes(pointers, (uint32_t)n_in, OPARA__SHAPE_STRICT, &want, NULL) ||
        want.ndim > y->ndim)
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "%s: the inputs do not broadcast to the output",
                                 opara__op_name(op->node->op));
    lead = y->ndim - want.ndim;
    for (i = 0; i < y->ndim; ++i) {
        int64_t dim = i >= lead ? want.dims[i - lead] : 1;
        if (dim != y->dims[i])
            return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "%s: output dim %d is %lld, broadcast gives %lld",
                                     opara__op_name(op->node->op), (int)i, (long long)y->dims[i], (long long)dim);
        for (k = 0; k < n_in; ++k) strides[k][i] = i >= lead ? rec->u.broadcast.strides[k][i - lead] : 0;
    }
    opara__bc_collapse(&op->p, n_in, y->ndim, y->dims, strides);
    op->work_items = (size_t)(op->p.outer * op->p.tail);
    op->min_items_per_task = 1;
    return OPARA_OK;
}

/* Element offsets of each input for row `row` of the collapsed iteration space. */
static void opara__bc_offsets(const opara__cpu_params* p, int n_in, size_t row, int64_t* off) {
    int32_t d;
    int k;
    for (k = 0; k < n_in; ++k) off[k] = 0;
    for (d = p->bc_ndim - 2; d >= 0; --d) {
        int64_t idx = (int64_t)(row % (size_t)p->bc_dims[d]);
        row /= (size_t)p->bc_dims[d];
        for (k = 0; k < n_in; ++k) off[k] += idx * p->bc_strides[k][d];
    }
}

/* Decodes item -> (row, first element, count) of the innermost dim. */
static void opara__bc_item(const opara__cpu_params* p, size_t item, size_t* row, size_t* j0, size_t* n) {
    size_t chunk = item % (size_t)p->tail;
    *row = item / (size_t)p->tail;
    *j0 = chunk * OPARA__CHUNK;
    *n = OPARA__MIN((size_t)OPARA__CHUNK, (size_t)p->inner - *j0);
}

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

/* ---- unary element-wise (f32) ---------------------------------------------------------------- */

static float opara__gelu(float x, int approx) {
    if (approx) {
        float u = 0.7978845608028654f * (x + 0.044715f * x * x * x);
        return 0.5f * x * (1.0f + tanhf(u));
    }
    return 0.5f * x * (1.0f + erff(x * 0.7071067811865476f));
}

/* Exact GELU, 0.5 x (1 + erf(x / sqrt 2)), with the vector erf over blocks of a stack buffer (y
   may be x: each x is read before its y is written). */
static void opara__gelu_erf_rows(int level, float* y, const float* x, size_t n) {
    float t[256];
    size_t i0, i, m;
    for (i0 = 0; i0 < n; i0 += m) {
        m = OPARA__MIN((size_t)256, n - i0);
        for (i = 0; i < m; ++i) t[i] = x[i0 + i] * 0.7071067811865476f;
        opara__vec_erf(level, t, t, m);
        for (i = 0; i < m; ++i) y[i0 + i] = 0.5f * x[i0 + i] * (1.0f + t[i]);
    }
}

/* The functions of the unary kernel (the dispatch maps each operator to one). */
typedef enum opara__cpu_unary {
    OPARA__UN_RELU, OPARA__UN_LEAKY_RELU, OPARA__UN_SIGMOID, OPARA__UN_TANH, OPARA__UN_HARD_SIGMOID,
    OPARA__UN_HARD_SWISH, OPARA__UN_CLIP, OPARA__UN_SQRT, OPARA__UN_ERF, OPARA__UN_GELU
} opara__cpu_unary;

static opara_result opara__unary_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    const opara__cpu_params* p = &op->p;
    const float* x = (const float*)op->in[0].data;
    float* y = (float*)op->out[0].data;
    size_t total = opara__cpu_numel(&op->out[0]);
    size_t i0 = begin * OPARA__CHUNK, i1 = OPARA__MIN(total, end * OPARA__CHUNK), i;
    (void)scratch;
    switch ((opara__cpu_unary)p->fn) {
    case OPARA__UN_RELU:
        if (i1 > i0) opara__vec_relu(y + i0, x + i0, i1 - i0);
        break;
    case OPARA__UN_LEAKY_RELU:
        for (i = i0; i < i1; ++i) y[i] = x[i] >= 0.0f ? x[i] : p->alpha * x[i];
        break;
    case OPARA__UN_SIGMOID:
        if (i1 > i0) opara__vec_sigmoid(opara__cpu_isa_level(), y + i0, x + i0, i1 - i0);
        break;
    case OPARA__UN_TANH:
        for (i = i0; i < i1; ++i) y[i] = tanhf(x[i]);
        break;
    case OPARA__UN_HARD_SIGMOID:
        for (i = i0; i < i1; ++i) {
            float v = p->alpha * x[i] + p->beta;
            y[i] = v < 0.0f ? 0.0f : (v > 1.0f ? 1.0f : v);
        }
        break;
    case OPARA__UN_HARD_SWISH:
        for (i = i0; i < i1; ++i) {
            float v = x[i] * (1.0f / 6.0f) + 0.5f;
            y[i] = x[i] * (v < 0.0f ? 0.0f : (v > 1.0f ? 1.0f : v));
        }
        break;
    case OPARA__UN_CLIP:
        if (i1 > i0) opara__vec_clip(opara__cpu_isa_level(), y + i0, x + i0, i1 - i0, p->lo, p->hi);
        break;
    case OPARA__UN_SQRT:
        for (i = i0; i < i1; ++i) y[i] = sqrtf(x[i]);
        break;
    case OPARA__UN_ERF:
        if (i1 > i0) opara__vec_erf(opara__cpu_isa_level(), y + i0, x + i0, i1 - i0);
        break;
    case OPARA__UN_GELU:
        if (p->approx) {
            for (i = i0; i < i1; ++i) y[i] = opara__gelu(x[i], 1);
        } else if (i1 > i0) {
            opara__gelu_erf_rows(opara__cpu_isa_level(), y + i0, x + i0, i1 - i0);
        }
        break;
    }
    return OPARA_OK;
}

static opara_result opara__prepare_unary(opara__cpu_op* op, opara__cpu_unary fn, char* err, size_t cap) {
    opara__cpu_params* p = &op->p;
    const opara__node* n = op->node;
    if (!opara__cpu_same_dims(&op->in[0], &op->out[0]))
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "%s: input and output shapes differ", opara__op_name(n->op));
    p->fn = (int)fn;
    switch (fn) {
    case OPARA__UN_LEAKY_RELU: p->alpha = opara__attr_float(n, "alpha", 0.01f); break;
    case OPARA__UN_HARD_SIGMOID:
        p->alpha = opara__attr_float(n, "alpha", 0.2f);
        p->beta = opara__attr_float(n, "beta", 0.5f);
        break;
    case OPARA__UN_CLIP:
        p->lo = opara__attr_float(n, "min", -HUGE_VALF);
        p->hi = opara__attr_float(n, "max", HUGE_VALF);
        break;
    case OPARA__UN_GELU: p->approx = strcmp(opara__attr_string(n, "approximate", "none"), "tanh") == 0; break;
    case OPARA__UN_RELU: case OPARA__UN_SIGMOID: case OPARA__UN_TANH: case OPARA__UN_HARD_SWISH: case OPARA__UN_SQRT:
    case OPARA__UN_ERF:
        break;
    }
    op->work_items = (opara__cpu_numel(&op->out[0]) + OPARA__CHUNK - 1) / OPARA__CHUNK;
    op->min_items_per_task = 1;
    op->fn = opara__unary_kernel;
    return OPARA_OK;
}

/* ---- binary element-wise with broadcasting ----------------------------------------------------- */

#define OPARA__BIN_ROW(T, EXPR)                                                             \
    do {                                                                                    \
        if (sa == 1 && sb == 1) {                                                           \
            for (i = 0; i < n; ++i) { T x = a[i], z = b[i]; y[i] = (EXPR); }                \
        } else if (sa == 1 && sb == 0) {                                                    \
            T z = b[0];                                                                     \
            for (i = 0; i < n; ++i) { T x = a[i]; y[i] = (EXPR); }                          \
        } else if (sa == 0 && sb == 1) {                                                    \
            T x = a[0];                                                                     \
            for (i = 0; i < n; ++i) { T z = b[i]; y[i] = (EXPR); }                          \
        } else {                                                                            \
            for (i = 0; i < n; ++i) { T x = a[(int64_t)i * sa], z = b[(int64_t)i * sb]; y[i] = (EXPR); } \
        }                                                                                   \
    } while (0)

/* The functions of the binary kernel; ADD..DIV are opara__vec_binary_f32's kinds 0..3. */
typedef enum opara__cpu_binary {
    OPARA__BIN_ADD, OPARA__BIN_SUB, OPARA__BIN_MUL, OPARA__BIN_DIV, OPARA__BIN_POW
} opara__cpu_binary;

static void opara__bin_row_f32(int level, opara__cpu_binary kind, const float* a, int64_t sa, const float* b,
                               int64_t sb, float* y, size_t n) {
    size_t i;
    if (kind != OPARA__BIN_POW && (sa == 0 || sa == 1) && (sb == 0 || sb == 1) && (sa || sb)) {
        opara__vec_binary_f32(level, (int)kind, a, (int)sa, b, (int)sb, y, n);
        return;
    }
    if (kind == OPARA__BIN_POW && sa == 1 && sb == 0 && b[0] == 2.0f) { /* x^2 = x * x exactly (T5's RMS norm) */
        opara__vec_binary_f32(level, OPARA__BIN_MUL, a, 1, a, 1, y, n);
        return;
    }
    switch (kind) {
    case OPARA__BIN_ADD: OPARA__BIN_ROW(float, x + z); break;
    case OPARA__BIN_SUB: OPARA__BIN_ROW(float, x - z); break;
    case OPARA__BIN_MUL: OPARA__BIN_ROW(float, x * z); break;
    case OPARA__BIN_DIV: OPARA__BIN_ROW(float, x / z); break;
    case OPARA__BIN_POW: OPARA__BIN_ROW(float, powf(x, z)); break;
    }
}

/* Integer division by zero (and INT_MIN / -1) give 0 instead of trapping. */
static int64_t opara__idiv(int64_t x, int64_t z) {
    if (z == 0 || (z == -1 && x == INT64_MIN)) return 0;
    return x / z;
}

static int64_t opara__ipow(int64_t x, int64_t e) {
    uint64_t r = 1, b = (uint64_t)x;
    if (e < 0) return x == 1 ? 1 : (x == -1 ? ((e & 1) ? -1 : 1) : 0);
    while (e) {
        if (e & 1) r *= b;
        b *= b;
        e >>= 1;
    }
    return (int64_t)r;
}

/* Wrapping arithmetic through uint64 so overflow is defined. */
#define OPARA__IBIN(kind, x, z)                                                                      \
    ((kind) == OPARA__BIN_ADD   ? (int64_t)((uint64_t)(x) + (uint64_t)(z))                          \
     : (kind) == OPARA__BIN_SUB ? (int64_t)((uint64_t)(x) - (uint64_t)(z))                          \
     : (kind) == OPARA__BIN_MUL ? (int64_t)((uint64_t)(x) * (uint64_t)(z))                          \
     : (kind) == OPARA__BIN_DIV ? opara__idiv((x), (z))                                             \
                                : opara__ipow((x), (z)))

static void opara__bin_row_i64(opara__cpu_binary kind, const int64_t* a, int64_t sa, const int64_t* b, int64_t sb,
                               int64_t* y, size_t n) {
    size_t i;
    for (i = 0; i < n; ++i) y[i] = OPARA__IBIN(kind, a[(int64_t)i * sa], b[(int64_t)i * sb]);
}

static void opara__bin_row_i32(opara__cpu_binary kind, const int32_t* a, int64_t sa, const int32_t* b, int64_t sb,
                               int32_t* y, size_t n) {
    size_t i;
    for (i = 0; i < n; ++i) {
        int64_t x = a[(int64_t)i * sa], z = b[(int64_t)i * sb];
        y[i] = (int32_t)(uint32_t)(uint64_t)OPARA__IBIN(kind, x, z);
    }
}

static opara_result opara__binary_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    const opara__cpu_params* p = &op->p;
    int64_t sa = p->bc_strides[0][p->bc_ndim - 1], sb = p->bc_strides[1][p->bc_ndim - 1];
    opara_dtype dt = op->out[0].dtype;
    opara__cpu_binary kind = (opara__cpu_binary)p->fn;
    int level = opara__cpu_isa_level();
    size_t item;
    (void)scratch;
    for (item = begin; item < end; ++item) {
        size_t row, j0, n;
        int64_t off[2], ao, bo, yo;
        opara__bc_item(p, item, &row, &j0, &n);
        opara__bc_offsets(p, 2, row, off);
        ao = off[0] + (int64_t)j0 * sa;
        bo = off[1] + (int64_t)j0 * sb;
        yo = (int64_t)(row * (size_t)p->inner + j0);
        if (dt == OPARA_DTYPE_F32)
            opara__bin_row_f32(level, kind, (const float*)op->in[0].data + ao, sa,
                               (const float*)op->in[1].data + bo, sb, (float*)op->out[0].data + yo, n);
        else if (dt == OPARA_DTYPE_I64)
            opara__bin_row_i64(kind, (const int64_t*)op->in[0].data + ao, sa,
                               (const int64_t*)op->in[1].data + bo, sb, (int64_t*)op->out[0].data + yo, n);
        else
            opara__bin_row_i32(kind, (const int32_t*)op->in[0].data + ao, sa,
                               (const int32_t*)op->in[1].data + bo, sb, (int32_t*)op->out[0].data + yo, n);
    }
    return OPARA_OK;
}

static opara_result opara__prepare_binary(opara__cpu_op* op, opara__cpu_binary fn, char* err, size_t cap) {
    const opara__cpu_tensor* ins[2];
    opara_dtype dt = op->out[0].dtype;
    ins[0] = &op->in[0];
    ins[1] = &op->in[1];
    if (op->in[0].dtype != dt || op->in[1].dtype != dt ||
        (dt != OPARA_DTYPE_F32 && dt != OPARA_DTYPE_I64 && dt != OPARA_DTYPE_I32))
        return opara__cpu_reject(err, cap, OPARA_ERR_BAD_DTYPE, "%s: needs f32, i64 or i32 operands of one type",
                                 opara__op_name(op->node->op));
    op->p.fn = (int)fn;
    op->fn = opara__binary_kernel;
    return opara__bc_prepare(op, 2, ins, err, cap);
}

/* ---- Where, Expand, Slice, Transpose: strided copies ------------------------------------------- */

static opara_result opara__where_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    const opara__cpu_params* p = &op->p;
    const uint8_t* c = (const uint8_t*)op->in[0].data;
    const uint8_t* x = (const uint8_t*)op->in[1].data;
    const uint8_t* z = (const uint8_t*)op->in[2].data;
    uint8_t* y = (uint8_t*)op->out[0].data;
    int64_t sc = p->bc_strides[0][p->bc_ndim - 1], sx = p->bc_strides[1][p->bc_ndim - 1];
    int64_t sz = p->bc_strides[2][p->bc_ndim - 1];
    size_t e = p->elem, item, i;
    (void)scratch;
    for (item = begin; item < end; ++item) {
        size_t row, j0, n;
        int64_t off[3];
        uint8_t* yr;
        opara__bc_item(p, item, &row, &j0, &n);
        opara__bc_offsets(p, 3, row, off);
        yr = y + (row * (size_t)p->inner + j0) * e;
        for (i = 0; i < n; ++i) {
            int64_t j = (int64_t)(j0 + i);
            const uint8_t* src = c[off[0] + j * sc] ? x + (off[1] + j * sx) * (int64_t)e : z + (off[2] + j * sz) * (int64_t)e;
            memcpy(yr + i * e, src, e);
        }
    }
    return OPARA_OK;
}

static opara_result opara__prepare_where(opara__cpu_op* op, char* err, size_t cap) {
    const opara__cpu_tensor* ins[3];
    ins[0] = &op->in[0];
    ins[1] = &op->in[1];
    ins[2] = &op->in[2];
    if (op->in[0].dtype != OPARA_DTYPE_BOOL || op->in[1].dtype != op->out[0].dtype ||
        op->in[2].dtype != op->out[0].dtype || !opara_dtype_size(op->out[0].dtype))
        return opara__cpu_reject(err, cap, OPARA_ERR_BAD_DTYPE, "Where: condition must be bool, X and Y the output type");
    op->p.elem = opara_dtype_size(op->out[0].dtype);
    op->fn = opara__where_kernel;
    return opara__bc_prepare(op, 3, ins, err, cap);
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
        opara__bc_item(p, item, &row, &j0, &n);
        opara__bc_offsets(p, 1, row, &off);
        off += p->base + (int64_t)j0 * s;
        opara__copy_elems(y + (row * (size_t)p->inner + j0) * e, x + off * (int64_t)e, s, n, e);
    }
    return OPARA_OK;
}

static opara_result opara__finish_strided_copy(opara__cpu_op* op, int64_t strides[][OPARA_MAX_DIMS]) {
    const opara__cpu_tensor* y = &op->out[0];
    op->p.elem = opara_dtype_size(y->dtype);
    opara__bc_collapse(&op->p, 1, y->ndim, y->dims, strides);
    op->work_items = (size_t)(op->p.outer * op->p.tail);
    op->min_items_per_task = 1;
    op->fn = opara__strided_copy_kernel;
    return OPARA_OK;
}

static opara_result opara__prepare_expand(opara__cpu_op* op, char* err, size_t cap) {
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

static void opara__natural_strides(const opara__cpu_tensor* t, int64_t* strides) {
    int32_t i;
    int64_t s = 1;
    for (i = t->ndim - 1; i >= 0; --i) {
        strides[i] = s;
        s *= t->dims[i];
    }
}

static opara_result opara__prepare_transpose(opara__cpu_op* op, char* err, size_t cap) {
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
    opara__natural_strides(x, in_str);
    for (i = 0; i < y->ndim; ++i) {
        if (y->dims[i] != x->dims[perm[i]])
            return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "Transpose: output dim %d is wrong", (int)i);
        strides[0][i] = in_str[perm[i]];
    }
    op->p.base = 0;
    return opara__finish_strided_copy(op, strides);
}

/* Slice as the shape engine resolved it (first index, step and count per dim): a strided copy. */
static opara_result opara__prepare_slice(opara__cpu_op* op, char* err, size_t cap) {
    const opara__cpu_tensor *x = &op->in[0], *y = &op->out[0];
    const opara__node_params* rec = op->params;
    int64_t in_str[OPARA_MAX_DIMS], strides[1][OPARA_MAX_DIMS];
    int32_t d;
    if (!rec || !rec->resolved || x->ndim != y->ndim || x->dtype != y->dtype)
        return opara__cpu_reject(err, cap, OPARA_ERR_INVALID_ARGS, "Slice: starts/ends/axes/steps are inconsistent");
    opara__natural_strides(x, in_str);
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

/* ---- Reshape family: plain copies ------------------------------------------------------------- */

static opara_result opara__copy_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    size_t bytes = opara__cpu_numel(&op->out[0]) * op->p.elem, b0 = begin * 65536, b1 = OPARA__MIN(bytes, end * 65536);
    (void)scratch;
    if (op->in[0].data != op->out[0].data && b1 > b0)
        memcpy((uint8_t*)op->out[0].data + b0, (const uint8_t*)op->in[0].data + b0, b1 - b0);
    return OPARA_OK;
}

static opara_result opara__prepare_reshape(opara__cpu_op* op, char* err, size_t cap) {
    if (opara__cpu_numel(&op->in[0]) != opara__cpu_numel(&op->out[0]) || op->in[0].dtype != op->out[0].dtype)
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "%s: element counts or types differ",
                                 opara__op_name(op->node->op));
    op->p.elem = opara_dtype_size(op->out[0].dtype);
    op->work_items = (opara__cpu_numel(&op->out[0]) * op->p.elem + 65535) / 65536;
    op->min_items_per_task = 4;
    op->fn = opara__copy_kernel;
    return OPARA_OK;
}

/* ---- Concat and Split ------------------------------------------------------------------------- */

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

static opara_result opara__prepare_concat_split(opara__cpu_op* op, char* err, size_t cap) {
    int is_concat = op->node->op == OPARA__OP_CONCAT;
    const opara__cpu_tensor* whole = is_concat ? &op->out[0] : &op->in[0];
    const opara__cpu_tensor* parts = is_concat ? op->in : op->out;
    uint32_t n_parts = is_concat ? op->n_in : op->n_out, k;
    int64_t axis, sum = 0;
    if (!opara__record_axis(op, whole->ndim, &axis))
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
    op->p.inner = opara__dims_prod(whole->dims, (int32_t)axis + 1, whole->ndim);
    op->work_items = (size_t)opara__dims_prod(whole->dims, 0, (int32_t)axis);
    if (opara__cpu_numel(whole) == 0) op->work_items = 0;
    op->min_items_per_task = 16;
    op->fn = is_concat ? opara__concat_kernel : opara__split_kernel;
    return OPARA_OK;
}

/* ---- Gather ----------------------------------------------------------------------------------- */

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
}

static opara_result opara__prepare_gather(opara__cpu_op* op, char* err, size_t cap) {
    const opara__cpu_tensor *x = &op->in[0], *idx = &op->in[1], *y = &op->out[0];
    int64_t axis;
    int32_t i, expect = x->ndim - 1 + idx->ndim;
    if (!opara__record_axis(op, x->ndim, &axis))
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
    op->p.inner = opara__dims_prod(x->dims, (int32_t)axis + 1, x->ndim);
    op->work_items = x->dims[axis] == 0 && opara__cpu_numel(idx) ? 0 : opara__cpu_numel(y) / (op->p.inner ? (size_t)op->p.inner : 1);
    if (opara__cpu_numel(y) == 0) op->work_items = 0;
    if (x->dims[axis] == 0 && opara__cpu_numel(idx) > 0 && opara__cpu_numel(y) > 0)
        return opara__cpu_reject(err, cap, OPARA_ERR_BAD_INDEX, "Gather: indexing an empty axis");
    op->min_items_per_task = 256;
    op->fn = opara__gather_kernel;
    return OPARA_OK;
}

/* ---- Cast ------------------------------------------------------------------------------------- */

static int opara__is_float_type(opara_dtype t) { return t == OPARA_DTYPE_F32 || t == OPARA_DTYPE_F64; }

static double opara__load_f(const void* base, opara_dtype t, size_t i) {
    return t == OPARA_DTYPE_F32 ? (double)((const float*)base)[i] : ((const double*)base)[i];
}

static int64_t opara__load_i(const void* base, opara_dtype t, size_t i) {
    switch (t) {
    case OPARA_DTYPE_I64: return ((const int64_t*)base)[i];
    case OPARA_DTYPE_I32: return ((const int32_t*)base)[i];
    case OPARA_DTYPE_I8: return ((const int8_t*)base)[i];
    case OPARA_DTYPE_BOOL: return ((const uint8_t*)base)[i] != 0;
    default: return ((const uint8_t*)base)[i];
    }
}

static void opara__store_i(void* base, opara_dtype t, size_t i, int64_t v) {
    switch (t) {
    case OPARA_DTYPE_I64: ((int64_t*)base)[i] = v; break;
    case OPARA_DTYPE_I32: ((int32_t*)base)[i] = (int32_t)(uint32_t)(uint64_t)v; break;
    case OPARA_DTYPE_I8: ((int8_t*)base)[i] = (int8_t)(uint8_t)(uint64_t)v; break;
    case OPARA_DTYPE_BOOL: ((uint8_t*)base)[i] = v != 0; break;
    default: ((uint8_t*)base)[i] = (uint8_t)(uint64_t)v; break;
    }
}

/* Float to integer: truncation toward zero, saturated to the int64 range, NaN gives 0. */
static int64_t opara__f_to_i(double v) {
    if (v != v) return 0;
    if (v >= 9.2233720368547758e18) return INT64_MAX;
    if (v <= -9.2233720368547758e18) return INT64_MIN;
    return (int64_t)v;
}

static opara_result opara__cast_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    opara_dtype from = op->in[0].dtype, to = op->out[0].dtype;
    const void* x = op->in[0].data;
    void* y = op->out[0].data;
    size_t total = opara__cpu_numel(&op->out[0]), i0 = begin * OPARA__CHUNK, i1 = OPARA__MIN(total, end * OPARA__CHUNK), i;
    (void)scratch;
    for (i = i0; i < i1; ++i) {
        if (opara__is_float_type(to)) {
            double v = opara__is_float_type(from) ? opara__load_f(x, from, i) : (double)opara__load_i(x, from, i);
            if (to == OPARA_DTYPE_F32) ((float*)y)[i] = (float)v;
            else ((double*)y)[i] = v;
        } else if (opara__is_float_type(from)) {
            double v = opara__load_f(x, from, i);
            if (to == OPARA_DTYPE_BOOL) opara__store_i(y, to, i, v != 0.0);
            else opara__store_i(y, to, i, opara__f_to_i(v));
        } else {
            opara__store_i(y, to, i, opara__load_i(x, from, i));
        }
    }
    return OPARA_OK;
}

static int opara__cast_type_ok(opara_dtype t) {
    return t == OPARA_DTYPE_F32 || t == OPARA_DTYPE_F64 || t == OPARA_DTYPE_I64 || t == OPARA_DTYPE_I32 ||
           t == OPARA_DTYPE_I8 || t == OPARA_DTYPE_U8 || t == OPARA_DTYPE_BOOL;
}

static opara_result opara__prepare_cast(opara__cpu_op* op, char* err, size_t cap) {
    int64_t to = opara__attr_int(op->node, "to", (int64_t)op->out[0].dtype);
    if (!opara__cpu_same_dims(&op->in[0], &op->out[0]))
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "Cast: input and output shapes differ");
    if (to != (int64_t)op->out[0].dtype || !opara__cast_type_ok(op->in[0].dtype) || !opara__cast_type_ok(op->out[0].dtype))
        return opara__cpu_reject(err, cap, OPARA_ERR_UNSUPPORTED, "Cast from %s to %s is not supported",
                                 opara_dtype_name(op->in[0].dtype), opara_dtype_name(op->out[0].dtype));
    op->work_items = (opara__cpu_numel(&op->out[0]) + OPARA__CHUNK - 1) / OPARA__CHUNK;
    op->min_items_per_task = 1;
    op->fn = opara__cast_kernel;
    return OPARA_OK;
}

/* ---- Softmax, LayerNormalization, BatchNormalization, GlobalAveragePool ------------------------ */

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

static opara_result opara__prepare_softmax(opara__cpu_op* op, char* err, size_t cap) {
    const opara__cpu_tensor* x = &op->in[0];
    int64_t axis;
    if (!opara__cpu_same_dims(x, &op->out[0]) || x->dtype != OPARA_DTYPE_F32)
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "Softmax: needs f32 and equal input/output shapes");
    if (!opara__record_axis(op, x->ndim, &axis))
        return opara__cpu_reject(err, cap, OPARA_ERR_BAD_INDEX, "Softmax: axis out of range");
    op->p.mid = x->dims[axis];
    op->p.inner = opara__dims_prod(x->dims, (int32_t)axis + 1, x->ndim);
    op->work_items = (size_t)(opara__dims_prod(x->dims, 0, (int32_t)axis) * op->p.inner);
    if (op->p.mid == 0) op->work_items = 0;
    op->min_items_per_task = 16;
    op->fn = opara__softmax_kernel;
    return OPARA_OK;
}

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

static opara_result opara__prepare_layer_norm(opara__cpu_op* op, char* err, size_t cap) {
    const opara__cpu_tensor* x = &op->in[0];
    int64_t axis, outer;
    size_t L;
    uint32_t k;
    if (!opara__cpu_same_dims(x, &op->out[0]) || x->dtype != OPARA_DTYPE_F32)
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "LayerNormalization: needs f32, equal X/Y shapes");
    if (!opara__record_axis(op, x->ndim, &axis))
        return opara__cpu_reject(err, cap, OPARA_ERR_BAD_INDEX, "LayerNormalization: axis out of range");
    op->p.eps = opara__attr_float(op->node, "epsilon", 1e-5f);
    op->p.mid = opara__dims_prod(x->dims, (int32_t)axis, x->ndim);
    outer = opara__dims_prod(x->dims, 0, (int32_t)axis);
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

static opara_result opara__prepare_batch_norm(opara__cpu_op* op, char* err, size_t cap) {
    const opara__cpu_tensor* x = &op->in[0];
    uint32_t k;
    if (op->n_in < 5 || x->ndim < 2 || !opara__cpu_same_dims(x, &op->out[0]))
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "BatchNormalization: needs 5 inputs and X/Y of rank >= 2");
    for (k = 1; k < 5; ++k)
        if (!op->in[k].data || opara__cpu_numel(&op->in[k]) != (size_t)x->dims[1])
            return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "BatchNormalization: input %u must have C elements", k);
    op->p.eps = opara__attr_float(op->node, "epsilon", 1e-5f);
    op->p.cin = x->dims[1];
    op->p.inner = opara__dims_prod(x->dims, 2, x->ndim);
    op->work_items = (size_t)(x->dims[0] * x->dims[1]);
    op->min_items_per_task = 1;
    op->fn = opara__batch_norm_kernel;
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

static opara_result opara__prepare_global_avg(opara__cpu_op* op, char* err, size_t cap) {
    const opara__cpu_tensor *x = &op->in[0], *y = &op->out[0];
    int32_t i;
    if (x->ndim < 2 || y->ndim != x->ndim || y->dims[0] != x->dims[0] || y->dims[1] != x->dims[1])
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "GlobalAveragePool: output must be [N, C, 1, ...]");
    for (i = 2; i < y->ndim; ++i)
        if (y->dims[i] != 1) return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "GlobalAveragePool: output must be [N, C, 1, ...]");
    op->p.inner = opara__dims_prod(x->dims, 2, x->ndim);
    op->work_items = (size_t)(x->dims[0] * x->dims[1]);
    op->min_items_per_task = 4;
    op->fn = opara__global_avg_kernel;
    return OPARA_OK;
}

/* ---- ReduceMean ------------------------------------------------------------------------------- */

static opara_result opara__reduce_mean_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    const opara__cpu_params* p = &op->p;
    const float* x = (const float*)op->in[0].data;
    float* y = (float*)op->out[0].data;
    int64_t count = opara__dims_prod(p->red_dims, 0, p->red_n);
    size_t item;
    (void)scratch;
    for (item = begin; item < end; ++item) {
        int64_t base = 0, idx[OPARA_MAX_DIMS], r, inner = p->red_n ? p->red_dims[p->red_n - 1] : 1;
        int64_t is = p->red_n ? p->red_strides[p->red_n - 1] : 0;
        size_t rem = item;
        double sum = 0.0;
        int32_t d;
        for (d = p->kept_n - 1; d >= 0; --d) {
            base += (int64_t)(rem % (size_t)p->kept_dims[d]) * p->kept_strides[d];
            rem /= (size_t)p->kept_dims[d];
        }
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

static opara_result opara__prepare_reduce_mean(opara__cpu_op* op, char* err, size_t cap) {
    const opara__cpu_tensor *x = &op->in[0], *y = &op->out[0];
    opara__cpu_params* p = &op->p;
    int keep = opara__attr_int(op->node, "keepdims", 1) != 0, reduce[OPARA_MAX_DIMS];
    int64_t str[OPARA_MAX_DIMS];
    int32_t d, yd = 0;
    if (x->dtype != OPARA_DTYPE_F32) return opara__cpu_reject(err, cap, OPARA_ERR_BAD_DTYPE, "ReduceMean: f32 only");
    if (!op->params || !op->params->resolved) return opara__cpu_reject(err, cap, OPARA_ERR_BAD_INDEX, "ReduceMean: axis");
    for (d = 0; d < x->ndim; ++d) reduce[d] = op->params->u.reduce[d]; /* axes as the shape engine resolved them */
    opara__natural_strides(x, str);
    p->kept_n = p->red_n = 0;
    for (d = 0; d < x->ndim; ++d) {
        if (reduce[d]) {
            p->red_dims[p->red_n] = x->dims[d];
            p->red_strides[p->red_n++] = str[d];
            if (keep && (yd >= y->ndim || y->dims[yd++] != 1)) break;
        } else {
            p->kept_dims[p->kept_n] = x->dims[d];
            p->kept_strides[p->kept_n++] = str[d];
            if (yd >= y->ndim || y->dims[yd++] != x->dims[d]) break;
        }
    }
    if (d != x->ndim || yd != y->ndim || y->dtype != OPARA_DTYPE_F32)
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "ReduceMean: output shape does not match axes/keepdims");
    op->work_items = opara__cpu_numel(y);
    op->min_items_per_task = 64;
    op->fn = opara__reduce_mean_kernel;
    return OPARA_OK;
}

/* ---- Pad -------------------------------------------------------------------------------------- */

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

static opara_result opara__prepare_pad(opara__cpu_op* op, char* err, size_t cap) {
    const opara__cpu_tensor *x = &op->in[0], *y = &op->out[0];
    opara__cpu_params* p = &op->p;
    const opara__node_params* rec = op->params;
    const opara__pad_params* pp;
    float value;
    int32_t d;
    if (!rec || !rec->resolved || x->ndim != y->ndim || x->dtype != y->dtype || !opara__cast_type_ok(x->dtype))
        return opara__cpu_reject(err, cap, OPARA_ERR_INVALID_ARGS, "Pad: pads/axes do not match the input rank or type");
    pp = &rec->u.pad;
    switch (pp->mode) {
    case OPARA__PAD_CONSTANT: case OPARA__PAD_REFLECT: case OPARA__PAD_EDGE: break;
    case OPARA__PAD_WRAP: return opara__cpu_reject(err, cap, OPARA_ERR_UNSUPPORTED, "Pad: mode '%s'", opara__pad_mode_name(pp->mode));
    }
    p->mode = (int)pp->mode;
    value = pp->value;
    opara__natural_strides(x, p->src_stride);
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
        opara__store_i(p->fill, y->dtype, 0, opara__f_to_i(value));
    }
    op->work_items = y->ndim && y->dims[y->ndim - 1] ? opara__cpu_numel(y) / (size_t)y->dims[y->ndim - 1] : (opara__cpu_numel(y) ? 1 : 0);
    op->min_items_per_task = 16;
    op->fn = opara__pad_kernel;
    return OPARA_OK;
}

/* ---- Resize ----------------------------------------------------------------------------------- */

/* Input coordinate of output index x along dim d (ONNX coordinate_transformation_mode). */
static double opara__resize_coord(const opara__cpu_params* p, int32_t d, int64_t x, int64_t in, int64_t out) {
    double s = p->scale[d];
    switch (p->coord_mode) {
    case OPARA__RESIZE_PYTORCH_HALF_PIXEL: return out > 1 ? ((double)x + 0.5) / s - 0.5 : 0.0;
    case OPARA__RESIZE_ALIGN_CORNERS: return out > 1 ? (double)x * (double)(in - 1) / (double)(out - 1) : 0.0;
    case OPARA__RESIZE_ASYMMETRIC: return (double)x / s;
    case OPARA__RESIZE_TF_HALF_PIXEL_FOR_NN: return ((double)x + 0.5) / s;
    case OPARA__RESIZE_TF_CROP_AND_RESIZE:
        return out > 1 ? p->roi_lo[d] * (double)(in - 1) + (double)x * (p->roi_hi[d] - p->roi_lo[d]) * (double)(in - 1) / (double)(out - 1)
                       : 0.5 * (p->roi_lo[d] + p->roi_hi[d]) * (double)(in - 1);
    case OPARA__RESIZE_HALF_PIXEL_SYMMETRIC: {
        double adj = (double)out / (s * (double)in), center = (double)in / 2.0;
        return center * (1.0 - adj) + ((double)x + 0.5) / s - 0.5;
    }
    default: return ((double)x + 0.5) / s - 0.5;
    }
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

static opara_result opara__prepare_resize(opara__cpu_op* op, char* err, size_t cap) {
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
    opara__natural_strides(x, p->src_stride);
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
    if (rp->mode != OPARA__RESIZE_LINEAR)
        return opara__cpu_reject(err, cap, OPARA_ERR_UNSUPPORTED, "Resize: mode 'cubic' is not supported");
    if (y->dtype != OPARA_DTYPE_F32 || x->ndim < 2)
        return opara__cpu_reject(err, cap, OPARA_ERR_UNSUPPORTED, "Resize: linear needs f32 of rank >= 2");
    for (d = 0; d < x->ndim - 2; ++d)
        if (x->dims[d] != y->dims[d])
            return opara__cpu_reject(err, cap, OPARA_ERR_UNSUPPORTED, "Resize: linear only over the last two dims");
    p->mode = OPARA__RESIZE_LINEAR;
    op->fn = opara__resize_linear_kernel;
    return OPARA_OK;
}

/* ---- dispatch --------------------------------------------------------------------------------- */

static opara_result opara__prepare_dispatch(opara__cpu_op* op, char* err, size_t cap) {
    switch (op->node->op) {
    case OPARA__OP_CONV: return opara__cpu_prepare_conv(op, err, cap);
    case OPARA__OP_CONV_TRANSPOSE: return opara__cpu_prepare_conv_transpose(op, err, cap);
    case OPARA__OP_MAX_POOL: case OPARA__OP_AVERAGE_POOL: return opara__cpu_prepare_pool(op, err, cap);
    case OPARA__OP_GLOBAL_AVERAGE_POOL: return opara__prepare_global_avg(op, err, cap);
    case OPARA__OP_BATCH_NORM: return opara__prepare_batch_norm(op, err, cap);
    case OPARA__OP_RELU: return opara__prepare_unary(op, OPARA__UN_RELU, err, cap);
    case OPARA__OP_LEAKY_RELU: return opara__prepare_unary(op, OPARA__UN_LEAKY_RELU, err, cap);
    case OPARA__OP_SIGMOID: return opara__prepare_unary(op, OPARA__UN_SIGMOID, err, cap);
    case OPARA__OP_TANH: return opara__prepare_unary(op, OPARA__UN_TANH, err, cap);
    case OPARA__OP_HARD_SIGMOID: return opara__prepare_unary(op, OPARA__UN_HARD_SIGMOID, err, cap);
    case OPARA__OP_HARD_SWISH: return opara__prepare_unary(op, OPARA__UN_HARD_SWISH, err, cap);
    case OPARA__OP_CLIP: return opara__prepare_unary(op, OPARA__UN_CLIP, err, cap);
    case OPARA__OP_SQRT: return opara__prepare_unary(op, OPARA__UN_SQRT, err, cap);
    case OPARA__OP_ERF: return opara__prepare_unary(op, OPARA__UN_ERF, err, cap);
    case OPARA__OP_GELU: return opara__prepare_unary(op, OPARA__UN_GELU, err, cap);
    case OPARA__OP_ADD: return opara__prepare_binary(op, OPARA__BIN_ADD, err, cap);
    case OPARA__OP_SUB: return opara__prepare_binary(op, OPARA__BIN_SUB, err, cap);
    case OPARA__OP_MUL: return opara__prepare_binary(op, OPARA__BIN_MUL, err, cap);
    case OPARA__OP_DIV: return opara__prepare_binary(op, OPARA__BIN_DIV, err, cap);
    case OPARA__OP_POW: return opara__prepare_binary(op, OPARA__BIN_POW, err, cap);
    case OPARA__OP_CONCAT: case OPARA__OP_SPLIT: return opara__prepare_concat_split(op, err, cap);
    case OPARA__OP_SLICE: return opara__prepare_slice(op, err, cap);
    case OPARA__OP_GATHER: return opara__prepare_gather(op, err, cap);
    case OPARA__OP_RESHAPE: case OPARA__OP_FLATTEN: case OPARA__OP_SQUEEZE: case OPARA__OP_UNSQUEEZE:
        return opara__prepare_reshape(op, err, cap);
    case OPARA__OP_TRANSPOSE: return opara__prepare_transpose(op, err, cap);
    case OPARA__OP_EXPAND: return opara__prepare_expand(op, err, cap);
    case OPARA__OP_GEMM: return opara__cpu_prepare_gemm(op, err, cap);
    case OPARA__OP_MATMUL: return opara__cpu_prepare_matmul(op, err, cap);
    case OPARA__OP_SOFTMAX: return opara__prepare_softmax(op, err, cap);
    case OPARA__OP_LAYER_NORM: return opara__prepare_layer_norm(op, err, cap);
    case OPARA__OP_REDUCE_MEAN: return opara__prepare_reduce_mean(op, err, cap);
    case OPARA__OP_WHERE: return opara__prepare_where(op, err, cap);
    case OPARA__OP_CAST: return opara__prepare_cast(op, err, cap);
    case OPARA__OP_PAD: return opara__prepare_pad(op, err, cap);
    case OPARA__OP_RESIZE: return opara__prepare_resize(op, err, cap);
    case OPARA__OP_COUNT: break;
    }
    return opara__cpu_reject(err, cap, OPARA_ERR_UNSUPPORTED_OP, "operator %s has no CPU kernel",
                             opara__op_name(op->node->op));
}

OPARA__PRIVATE opara_result opara__cpu_prepare(opara__cpu_op* op, char* err, size_t err_cap) {
    const opara__op_info* info = opara__op_info_of(op->node->op);
    uint32_t min_in = info->min_inputs, min_out = 1, k;
    opara__op kind = op->node->op;
    opara_result r;
    op->fn = NULL;
    op->work_items = 0;
    op->scratch_floats = 0;
    op->min_items_per_task = 1;
    op->packed_floats = 0;
    memset(&op->p, 0, sizeof op->p);
    if (op->n_in < min_in || op->n_out < min_out)
        return opara__cpu_reject(err, err_cap, OPARA_ERR_INVALID_ARGS, "%s needs %u inputs and %u outputs",
                                 opara__op_name(kind), min_in, min_out);
    for (k = 0; k < min_in; ++k) {
        if (op->in[k].data) continue;
        if (opara__cpu_numel(&op->in[k]) == 0) /* an empty tensor has no buffer, but it is there */
            return opara__cpu_reject(err, err_cap, OPARA_ERR_SHAPE, "%s: input %u has 0 elements, which this kernel "
                                     "cannot take", opara__op_name(kind), k);
        return opara__cpu_reject(err, err_cap, OPARA_ERR_INVALID_ARGS, "%s: input %u is missing", opara__op_name(kind), k);
    }
    if (!op->out[0].data && opara__cpu_numel(&op->out[0]) > 0)
        return opara__cpu_reject(err, err_cap, OPARA_ERR_INVALID_ARGS, "%s: output 0 has no buffer", opara__op_name(kind));
    if ((info->flags & OPARA__OPF_F32) && (op->in[0].dtype != OPARA_DTYPE_F32 || op->out[0].dtype != OPARA_DTYPE_F32))
        return opara__cpu_reject(err, err_cap, OPARA_ERR_BAD_DTYPE, "%s: only f32 is supported", opara__op_name(kind));
    r = opara__prepare_dispatch(op, err, err_cap);
    for (k = 0; k < op->n_out; ++k)
        if (opara__cpu_numel(&op->out[k]) > 0) return r;
    op->work_items = 0; /* every output is empty */
    return r;
}

/* Constant weights repacked once at creation: a Winograd convolution's transformed filters, else a
   Gemm/MatMul B in the micro-kernel's panels (the layer above both, so neither calls the other). */
OPARA__PRIVATE void opara__cpu_pack_weights(opara__cpu_op* op) {
    const opara__cpu_params* p = &op->p;
    if (!op->packed) return;
    if (op->node->op == OPARA__OP_CONV) {
        opara__winograd_pack(op);
        return;
    }
    opara__gemm_pack_b_all(p->trans_b, (const float*)op->in[1].data, (size_t)(p->trans_b ? p->k : p->n), (size_t)p->k,
                           (size_t)p->n, op->packed_nr, op->packed);
}
