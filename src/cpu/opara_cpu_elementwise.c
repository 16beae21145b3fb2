/* CPU kernels of the element-wise operators: the unary activations and math operators (f32), the binary arithmetic
   with broadcasting (f32, i64, i32), Where and Cast. */
#include "opara_cpu.h"

#include <math.h>

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

/* GELU over n elements (y may be x), the tanh approximation when approx: the Gelu kernel's and the
   fused one's. */
static void opara__gelu_rows(int level, int approx, float* y, const float* x, size_t n) {
    size_t i;
    if (approx) {
        for (i = 0; i < n; ++i) y[i] = opara__gelu(x[i], 1);
    } else if (n) {
        opara__gelu_erf_rows(level, y, x, n);
    }
}

/* ONNX's Softplus, log(1 + e^x), without overflow for large x. */
static float opara__softplus(float x) { return x > 0.0f ? x + log1pf(expf(-x)) : log1pf(expf(x)); }

/* -1, 0 or 1; a NaN stays NaN. */
static float opara__sign(float x) { return x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : x); }

#define OPARA__MAP(expr)                                                                                          \
    for (i = 0; i < n; ++i) {                                                                                     \
        float v = x[i];                                                                                           \
        y[i] = (expr);                                                                                            \
    }                                                                                                             \
    break

/* The math operators but Exp (the vector exp) over n elements (y may be x), as the C library computes
   them in f32; Round is half to even (the default rounding mode). */
static void opara__unary_math(const opara__cpu_params* p, float* y, const float* x, size_t n) {
    float a = p->alpha, g = p->beta;
    size_t i;
    switch ((opara__cpu_unary)p->fn) {
    case OPARA__UN_NEG: OPARA__MAP(-v);
    case OPARA__UN_ABS: OPARA__MAP(fabsf(v));
    case OPARA__UN_LOG: OPARA__MAP(logf(v));
    case OPARA__UN_RECIPROCAL: OPARA__MAP(1.0f / v);
    case OPARA__UN_FLOOR: OPARA__MAP(floorf(v));
    case OPARA__UN_CEIL: OPARA__MAP(ceilf(v));
    case OPARA__UN_ROUND: OPARA__MAP(nearbyintf(v));
    case OPARA__UN_SIGN: OPARA__MAP(opara__sign(v));
    case OPARA__UN_SIN: OPARA__MAP(sinf(v));
    case OPARA__UN_COS: OPARA__MAP(cosf(v));
    case OPARA__UN_TAN: OPARA__MAP(tanf(v));
    case OPARA__UN_SOFTPLUS: OPARA__MAP(opara__softplus(v));
    case OPARA__UN_SOFTSIGN: OPARA__MAP(v / (1.0f + fabsf(v)));
    case OPARA__UN_ELU: OPARA__MAP(v < 0.0f ? a * expm1f(v) : v);
    case OPARA__UN_SELU: OPARA__MAP(v > 0.0f ? g * v : g * (a * expf(v) - a));
    case OPARA__UN_CELU: OPARA__MAP(v > 0.0f ? v : a * expm1f(v / a));
    case OPARA__UN_THRESHOLDED_RELU: OPARA__MAP(v > a ? v : 0.0f);
    case OPARA__UN_ASIN: OPARA__MAP(asinf(v));
    case OPARA__UN_ACOS: OPARA__MAP(acosf(v));
    case OPARA__UN_ATAN: OPARA__MAP(atanf(v));
    case OPARA__UN_SINH: OPARA__MAP(sinhf(v));
    case OPARA__UN_COSH: OPARA__MAP(coshf(v));
    case OPARA__UN_ASINH: OPARA__MAP(asinhf(v));
    case OPARA__UN_ACOSH: OPARA__MAP(acoshf(v));
    case OPARA__UN_ATANH: OPARA__MAP(atanhf(v));
    case OPARA__UN_SHRINK: OPARA__MAP(v < -a ? v + g : (v > a ? v - g : 0.0f)); /* NaN: 0, as ONNX Runtime */
    case OPARA__UN_RELU: case OPARA__UN_LEAKY_RELU: case OPARA__UN_SIGMOID: case OPARA__UN_TANH:
    case OPARA__UN_HARD_SIGMOID: case OPARA__UN_HARD_SWISH: case OPARA__UN_CLIP: case OPARA__UN_SQRT:
    case OPARA__UN_ERF: case OPARA__UN_GELU: case OPARA__UN_EXP:
        break; /* opara__unary_kernel's own */
    }
}

#undef OPARA__MAP

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
    case OPARA__UN_EXP:
        if (i1 > i0) opara__vec_exp(opara__cpu_isa_level(), y + i0, x + i0, i1 - i0);
        break;
    case OPARA__UN_GELU:
        if (i1 > i0) opara__gelu_rows(opara__cpu_isa_level(), p->approx, y + i0, x + i0, i1 - i0);
        break;
    case OPARA__UN_NEG: case OPARA__UN_ABS: case OPARA__UN_LOG: case OPARA__UN_RECIPROCAL: case OPARA__UN_FLOOR:
    case OPARA__UN_CEIL: case OPARA__UN_ROUND: case OPARA__UN_SIGN: case OPARA__UN_SIN: case OPARA__UN_COS:
    case OPARA__UN_TAN: case OPARA__UN_SOFTPLUS: case OPARA__UN_SOFTSIGN: case OPARA__UN_ELU: case OPARA__UN_SELU:
    case OPARA__UN_CELU: case OPARA__UN_THRESHOLDED_RELU: case OPARA__UN_ASIN: case OPARA__UN_ACOS: case OPARA__UN_ATAN:
    case OPARA__UN_SINH: case OPARA__UN_COSH: case OPARA__UN_ASINH: case OPARA__UN_ACOSH: case OPARA__UN_ATANH:
    case OPARA__UN_SHRINK:
        if (i1 > i0) opara__unary_math(p, y + i0, x + i0, i1 - i0);
        break;
    }
    return OPARA_OK;
}

OPARA__PRIVATE opara_result opara__cpu_prepare_unary(opara__cpu_op* op, opara__cpu_unary fn, char* err, size_t cap) {
    opara__cpu_params* p = &op->p;
    const opara__node* n = op->node;
    const opara__activation_params* a;
    if (!op->params || !op->params->resolved || !opara__cpu_same_dims(&op->in[0], &op->out[0]))
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "%s: input and output shapes differ", opara__op_name(n->op));
    a = &op->params->u.activation;
    p->fn = (int)fn;
    switch (fn) {
    case OPARA__UN_LEAKY_RELU: p->alpha = a->alpha; break;
    case OPARA__UN_HARD_SIGMOID:
        p->alpha = a->alpha;
        p->beta = a->beta;
        break;
    case OPARA__UN_CLIP:
        p->lo = a->min;
        p->hi = a->max;
        break;
    case OPARA__UN_GELU: p->approx = a->gelu_tanh; break;
    case OPARA__UN_ELU: case OPARA__UN_CELU: case OPARA__UN_THRESHOLDED_RELU: p->alpha = a->alpha; break;
    case OPARA__UN_SELU:
        p->alpha = a->alpha;
        p->beta = a->gamma;
        break;
    case OPARA__UN_SHRINK:
        p->alpha = a->alpha;
        p->beta = a->beta;
        break;
    case OPARA__UN_RELU: case OPARA__UN_SIGMOID: case OPARA__UN_TANH: case OPARA__UN_HARD_SWISH: case OPARA__UN_SQRT:
    case OPARA__UN_ERF: case OPARA__UN_NEG: case OPARA__UN_ABS: case OPARA__UN_EXP: case OPARA__UN_LOG:
    case OPARA__UN_RECIPROCAL: case OPARA__UN_FLOOR: case OPARA__UN_CEIL: case OPARA__UN_ROUND: case OPARA__UN_SIGN:
    case OPARA__UN_SIN: case OPARA__UN_COS: case OPARA__UN_TAN: case OPARA__UN_SOFTPLUS: case OPARA__UN_SOFTSIGN:
    case OPARA__UN_ASIN: case OPARA__UN_ACOS: case OPARA__UN_ATAN: case OPARA__UN_SINH: case OPARA__UN_COSH:
    case OPARA__UN_ASINH: case OPARA__UN_ACOSH: case OPARA__UN_ATANH:
        break;
    }
    op->work_items = (opara__cpu_numel(&op->out[0]) + OPARA__CHUNK - 1) / OPARA__CHUNK;
    op->min_items_per_task = 1;
    op->fn = opara__unary_kernel;
    return OPARA_OK;
}

/* ---- binary element-wise with broadcasting --------------------------------------------------- */

/* Sets up broadcasting of n_in inputs to the output with the strides of the node's record; checks
   the output is their broadcast (leading dims of 1 allowed). */
OPARA__PRIVATE opara_result opara__bc_prepare(opara__cpu_op* op, int n_in, const opara__cpu_tensor* const* ins, char* err,
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
    opara__cpu_bc_collapse(&op->p, n_in, y->ndim, y->dims, strides);
    op->work_items = (size_t)(op->p.outer * op->p.tail);
    op->min_items_per_task = 1;
    return OPARA_OK;
}

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

static void opara__bin_row_f32(int level, opara__cpu_binary kind, const float* a, int64_t sa, const float* b,
                               int64_t sb, float* y, size_t n) {
    size_t i;
    if (kind <= OPARA__BIN_DIV && (sa == 0 || sa == 1) && (sb == 0 || sb == 1) && (sa || sb)) {
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
    case OPARA__BIN_PRELU: OPARA__BIN_ROW(float, x < 0.0f ? x * z : x); break;
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
     : (kind) == OPARA__BIN_PRELU ? ((x) < 0 ? (int64_t)((uint64_t)(x) * (uint64_t)(z)) : (x))         \
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

/* i8 and u8 (wrapping; division truncates toward zero, as ONNX Runtime's) and f64. */
#define OPARA__BIN_ROW_NARROW(NAME, T)                                                                            \
    static void NAME(opara__cpu_binary kind, const T* a, int64_t sa, const T* b, int64_t sb, T* y, size_t n) {      \
        size_t i;                                                                                                 \
        for (i = 0; i < n; ++i) {                                                                                 \
            int64_t x = a[(int64_t)i * sa], z = b[(int64_t)i * sb];                                               \
            y[i] = (T)(uint64_t)OPARA__IBIN(kind, x, z);                                                          \
        }                                                                                                         \
    }
OPARA__BIN_ROW_NARROW(opara__bin_row_i8, int8_t)
OPARA__BIN_ROW_NARROW(opara__bin_row_u8, uint8_t)
#undef OPARA__BIN_ROW_NARROW

static void opara__bin_row_f64(opara__cpu_binary kind, const double* a, int64_t sa, const double* b, int64_t sb, double* y,
                               size_t n) {
    size_t i;
    switch (kind) {
    case OPARA__BIN_ADD: OPARA__BIN_ROW(double, x + z); break;
    case OPARA__BIN_SUB: OPARA__BIN_ROW(double, x - z); break;
    case OPARA__BIN_MUL: OPARA__BIN_ROW(double, x * z); break;
    case OPARA__BIN_DIV: OPARA__BIN_ROW(double, x / z); break;
    case OPARA__BIN_POW: OPARA__BIN_ROW(double, pow(x, z)); break;
    case OPARA__BIN_PRELU: OPARA__BIN_ROW(double, x < 0.0 ? x * z : x); break;
    }
}

/* The activation fused into a binary operator, in place over its n results (as the Relu and Gelu
   kernels compute it). */
static void opara__fused_act_rows(int level, opara__fused_act act, float* y, size_t n) {
    switch (act) {
    case OPARA__FUSED_NONE: case OPARA__FUSED_UNKNOWN: break; /* UNKNOWN: refused at prepare */
    case OPARA__FUSED_RELU: opara__vec_relu(y, y, n); break;
    case OPARA__FUSED_GELU: opara__gelu_rows(level, 0, y, y, n); break;
    case OPARA__FUSED_GELU_TANH: opara__gelu_rows(level, 1, y, y, n); break;
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
        opara__cpu_bc_item(p, item, &row, &j0, &n);
        opara__cpu_bc_offsets(p, 2, row, off);
        ao = off[0] + (int64_t)j0 * sa;
        bo = off[1] + (int64_t)j0 * sb;
        yo = (int64_t)(row * (size_t)p->inner + j0);
        if (dt == OPARA_DTYPE_F32) {
            opara__bin_row_f32(level, kind, (const float*)op->in[0].data + ao, sa,
                               (const float*)op->in[1].data + bo, sb, (float*)op->out[0].data + yo, n);
            opara__fused_act_rows(level, p->act, (float*)op->out[0].data + yo, n);
        } else if (dt == OPARA_DTYPE_I64)
            opara__bin_row_i64(kind, (const int64_t*)op->in[0].data + ao, sa,
                               (const int64_t*)op->in[1].data + bo, sb, (int64_t*)op->out[0].data + yo, n);
        else if (dt == OPARA_DTYPE_F64)
            opara__bin_row_f64(kind, (const double*)op->in[0].data + ao, sa, (const double*)op->in[1].data + bo, sb,
                               (double*)op->out[0].data + yo, n);
        else if (dt == OPARA_DTYPE_I8)
            opara__bin_row_i8(kind, (const int8_t*)op->in[0].data + ao, sa, (const int8_t*)op->in[1].data + bo, sb,
                              (int8_t*)op->out[0].data + yo, n);
        else if (dt == OPARA_DTYPE_U8)
            opara__bin_row_u8(kind, (const uint8_t*)op->in[0].data + ao, sa, (const uint8_t*)op->in[1].data + bo, sb,
                              (uint8_t*)op->out[0].data + yo, n);
        else
            opara__bin_row_i32(kind, (const int32_t*)op->in[0].data + ao, sa,
                               (const int32_t*)op->in[1].data + bo, sb, (int32_t*)op->out[0].data + yo, n);
    }
    return OPARA_OK;
}

OPARA__PRIVATE opara_result opara__cpu_prepare_binary(opara__cpu_op* op, opara__cpu_binary fn, char* err, size_t cap) {
    const opara__cpu_tensor* ins[2];
    opara_dtype dt = op->out[0].dtype;
    ins[0] = &op->in[0];
    ins[1] = &op->in[1];
    if (op->in[0].dtype != dt || op->in[1].dtype != dt ||
        (dt != OPARA_DTYPE_F32 && dt != OPARA_DTYPE_I64 && dt != OPARA_DTYPE_I32 && dt != OPARA_DTYPE_F64 &&
         dt != OPARA_DTYPE_I8 && dt != OPARA_DTYPE_U8))
        return opara__cpu_reject(err, cap, OPARA_ERR_BAD_DTYPE, "%s: needs f32, f64, i64, i32, i8 or u8 operands of one type",
                                 opara__op_name(op->node->op));
    op->p.fn = (int)fn;
    op->p.act = op->params && fn <= OPARA__BIN_DIV ? op->params->u.broadcast.activation : OPARA__FUSED_NONE;
    if (op->p.act != OPARA__FUSED_NONE && (dt != OPARA_DTYPE_F32 || op->p.act == OPARA__FUSED_UNKNOWN))
        return opara__cpu_reject(err, cap, OPARA_ERR_UNSUPPORTED, "%s: a fused activation needs f32 and Relu, Gelu or GeluTanh",
                                 opara__op_name(op->node->op));
    op->fn = opara__binary_kernel;
    return opara__bc_prepare(op, 2, ins, err, cap);
}

/* ---- Where ----------------------------------------------------------------------------------- */

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
        opara__cpu_bc_item(p, item, &row, &j0, &n);
        opara__cpu_bc_offsets(p, 3, row, off);
        yr = y + (row * (size_t)p->inner + j0) * e;
        for (i = 0; i < n; ++i) {
            int64_t j = (int64_t)(j0 + i);
            const uint8_t* src = c[off[0] + j * sc] ? x + (off[1] + j * sx) * (int64_t)e : z + (off[2] + j * sz) * (int64_t)e;
            memcpy(yr + i * e, src, e);
        }
    }
    return OPARA_OK;
}

OPARA__PRIVATE opara_result opara__cpu_prepare_where(opara__cpu_op* op, char* err, size_t cap) {
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

/* ---- Cast ------------------------------------------------------------------------------------ */

static int opara__is_float_type(opara_dtype t) {
    return t == OPARA_DTYPE_F32 || t == OPARA_DTYPE_F64 || t == OPARA_DTYPE_F16;
}

static double opara__load_f(const void* base, opara_dtype t, size_t i) {
    if (t == OPARA_DTYPE_F16) return (double)opara__f16_to_f32(((const uint16_t*)base)[i]);
    return t == OPARA_DTYPE_F32 ? (double)((const float*)base)[i] : ((const double*)base)[i];
}

/* f16 rounds once from the exact double (an f64 input rounds straight to f16, as numpy does). */
static void opara__store_f(void* base, opara_dtype t, size_t i, double v) {
    if (t == OPARA_DTYPE_F16) ((uint16_t*)base)[i] = opara__f64_to_f16(v);
    else if (t == OPARA_DTYPE_F32) ((float*)base)[i] = (float)v;
    else ((double*)base)[i] = v;
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

/* Pad's fill takes the integer and f32/f64 types of opara__cpu_cast_type_ok; Cast takes f16 too. */
static int opara__cast_type_ok(opara_dtype t) { return t == OPARA_DTYPE_F16 || opara__cpu_cast_type_ok(t); }

/* Float to integer as ONNX Runtime computes it on x86-64 (its conversion instructions' "integer
   indefinite" for what does not fit): toward zero; to i64, NaN or a value outside int64 gives
   INT64_MIN; to i32, i8 and u8 the value goes through int32 (NaN or outside: INT32_MIN), then wraps
   to the narrower type (300.7 -> u8 44). src/cuda/kernels/cast.cu does the same. */
static int64_t opara__cast_f_to_int(double v, opara_dtype to) {
    if (to == OPARA_DTYPE_I64) return v >= -9223372036854775808.0 && v < 9223372036854775808.0 ? (int64_t)v : INT64_MIN;
    return v > -2147483649.0 && v < 2147483648.0 ? (int64_t)(int32_t)v : (int64_t)INT32_MIN;
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
            opara__store_f(y, to, i, v);
        } else if (opara__is_float_type(from)) {
            double v = opara__load_f(x, from, i);
            if (to == OPARA_DTYPE_BOOL) opara__cpu_store_i(y, to, i, v != 0.0);
            else opara__cpu_store_i(y, to, i, opara__cast_f_to_int(v, to));
        } else {
            opara__cpu_store_i(y, to, i, opara__load_i(x, from, i));
        }
    }
    return OPARA_OK;
}

OPARA__PRIVATE opara_result opara__cpu_prepare_cast(opara__cpu_op* op, char* err, size_t cap) {
    int64_t to;
    if (!op->params || !op->params->resolved || !opara__cpu_same_dims(&op->in[0], &op->out[0]))
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "Cast: input and output shapes differ");
    to = op->params->u.cast_to < 0 ? (int64_t)op->out[0].dtype : op->params->u.cast_to;
    if (to != (int64_t)op->out[0].dtype || !opara__cast_type_ok(op->in[0].dtype) || !opara__cast_type_ok(op->out[0].dtype))
        return opara__cpu_reject(err, cap, OPARA_ERR_UNSUPPORTED, "Cast from %s to %s is not supported",
                                 opara_dtype_name(op->in[0].dtype), opara_dtype_name(op->out[0].dtype));
    op->work_items = (opara__cpu_numel(&op->out[0]) + OPARA__CHUNK - 1) / OPARA__CHUNK;
    op->min_items_per_task = 1;
    op->fn = opara__cast_kernel;
    return OPARA_OK;
}
