/* CPU kernels of the logic operators: the comparisons (a bool output), And/Or/Xor, Mod and BitShift with
   broadcasting; Not, IsNaN and IsInf; the variadic Max, Min, Mean and Sum (any number of inputs,
   multidirectional broadcasting); Neg, Abs and Sign of f64 and the integer types. Every dtype ONNX defines
   them for that opara has: f32, f64, i8, u8, i32, i64 and bool as each operator allows. */
#include "opara_cpu.h"

#include <math.h>

/* The functions of the broadcast binary kernel (op->p.fn). */
typedef enum opara__logic_kind {
    OPARA__LG_EQUAL, OPARA__LG_GREATER, OPARA__LG_LESS, OPARA__LG_GREATER_EQUAL, OPARA__LG_LESS_EQUAL,
    OPARA__LG_AND, OPARA__LG_OR, OPARA__LG_XOR,
    OPARA__LG_MOD,  /* integers: the divisor's sign (Python's %) */
    OPARA__LG_FMOD, /* C's fmod / %: the dividend's sign */
    OPARA__LG_SHIFT_LEFT, OPARA__LG_SHIFT_RIGHT
} opara__logic_kind;

/* The variadic kernel's functions. */
typedef enum opara__variadic_kind { OPARA__VAR_MAX, OPARA__VAR_MIN, OPARA__VAR_MEAN, OPARA__VAR_SUM } opara__variadic_kind;

static int opara__logic_numeric(opara_dtype t) {
    return t == OPARA_DTYPE_F32 || t == OPARA_DTYPE_F64 || t == OPARA_DTYPE_I8 || t == OPARA_DTYPE_U8 ||
           t == OPARA_DTYPE_I32 || t == OPARA_DTYPE_I64;
}

/* ---- broadcast binary: comparisons, And/Or/Xor, Mod, BitShift --------------------------------- */

/* Integer Mod with the divisor's sign, and with the dividend's (fmod=1). A zero divisor gives 0 (ONNX
   leaves it undefined; it must not trap), and so does -1 (where INT_MIN % -1 would trap). */
static int64_t opara__mod_floor(int64_t x, int64_t z) {
    int64_t r;
    if (z == 0 || z == -1) return 0;
    r = x % z;
    return r != 0 && ((r < 0) != (z < 0)) ? r + z : r;
}

static int64_t opara__mod_trunc(int64_t x, int64_t z) { return z == 0 || z == -1 ? 0 : x % z; }

/* A shift by the type's width or more gives 0 (C leaves it undefined). */
static uint64_t opara__shift(uint64_t x, uint64_t z, int left, unsigned bits) {
    if (z >= bits) return 0;
    return left ? x << z : x >> z;
}

#define OPARA__LG_LOOP(T, OUT_T, EXPR)                                                                           \
    do {                                                                                                         \
        const T* A = (const T*)a;                                                                                \
        const T* B = (const T*)b;                                                                                \
        OUT_T* Y = (OUT_T*)y;                                                                                    \
        for (i = 0; i < n; ++i) {                                                                                \
            T x = A[(int64_t)i * sa], z = B[(int64_t)i * sb];                                                    \
            Y[i] = (OUT_T)(EXPR);                                                                                \
        }                                                                                                        \
    } while (0)

/* One comparison kind over a row of T, a bool row out. */
#define OPARA__CMP_ROW(T)                                                                                        \
    do {                                                                                                         \
        if (kind == OPARA__LG_EQUAL) OPARA__LG_LOOP(T, uint8_t, x == z);                                         \
        else if (kind == OPARA__LG_GREATER) OPARA__LG_LOOP(T, uint8_t, x > z);                                   \
        else if (kind == OPARA__LG_LESS) OPARA__LG_LOOP(T, uint8_t, x < z);                                      \
        else if (kind == OPARA__LG_GREATER_EQUAL) OPARA__LG_LOOP(T, uint8_t, x >= z);                            \
        else OPARA__LG_LOOP(T, uint8_t, x <= z);                                                                 \
    } while (0)

/* Integer Mod over a row of T (the arithmetic in int64, where every T's values fit). */
#define OPARA__IMOD_ROW(T)                                                                                       \
    do {                                                                                                         \
        if (kind == OPARA__LG_MOD) OPARA__LG_LOOP(T, T, opara__mod_floor((int64_t)x, (int64_t)z));              \
        else OPARA__LG_LOOP(T, T, opara__mod_trunc((int64_t)x, (int64_t)z));                                    \
    } while (0)

static void opara__compare_row(opara__logic_kind kind, opara_dtype dt, const void* a, int64_t sa, const void* b,
                               int64_t sb, void* y, size_t n) {
    size_t i;
    switch (dt) {
    case OPARA_DTYPE_F32: OPARA__CMP_ROW(float); break;
    case OPARA_DTYPE_F64: OPARA__CMP_ROW(double); break;
    case OPARA_DTYPE_I8: OPARA__CMP_ROW(int8_t); break;
    case OPARA_DTYPE_U8: case OPARA_DTYPE_BOOL: OPARA__CMP_ROW(uint8_t); break;
    case OPARA_DTYPE_I32: OPARA__CMP_ROW(int32_t); break;
    case OPARA_DTYPE_I64: OPARA__CMP_ROW(int64_t); break;
    case OPARA_DTYPE_UNDEFINED: case OPARA_DTYPE_F16: case OPARA_DTYPE_FORCE_U32: break; /* refused by prepare */
    }
}

static void opara__mod_row(opara__logic_kind kind, opara_dtype dt, const void* a, int64_t sa, const void* b, int64_t sb,
                           void* y, size_t n) {
    size_t i;
    switch (dt) {
    case OPARA_DTYPE_F32: OPARA__LG_LOOP(float, float, fmodf(x, z)); break;
    case OPARA_DTYPE_F64: OPARA__LG_LOOP(double, double, fmod(x, z)); break;
    case OPARA_DTYPE_I8: OPARA__IMOD_ROW(int8_t); break;
    case OPARA_DTYPE_U8: OPARA__IMOD_ROW(uint8_t); break;
    case OPARA_DTYPE_I32: OPARA__IMOD_ROW(int32_t); break;
    case OPARA_DTYPE_I64: OPARA__IMOD_ROW(int64_t); break;
    case OPARA_DTYPE_UNDEFINED: case OPARA_DTYPE_BOOL: case OPARA_DTYPE_F16: case OPARA_DTYPE_FORCE_U32: break;
    }
}

static void opara__logic_row(opara__logic_kind kind, opara_dtype dt, const void* a, int64_t sa, const void* b, int64_t sb,
                             void* y, size_t n) {
    size_t i;
    if (kind <= OPARA__LG_LESS_EQUAL) opara__compare_row(kind, dt, a, sa, b, sb, y, n);
    else if (kind == OPARA__LG_AND) OPARA__LG_LOOP(uint8_t, uint8_t, (x != 0) & (z != 0));
    else if (kind == OPARA__LG_OR) OPARA__LG_LOOP(uint8_t, uint8_t, (x != 0) | (z != 0));
    else if (kind == OPARA__LG_XOR) OPARA__LG_LOOP(uint8_t, uint8_t, (x != 0) ^ (z != 0));
    else if (kind == OPARA__LG_MOD || kind == OPARA__LG_FMOD) opara__mod_row(kind, dt, a, sa, b, sb, y, n);
    else OPARA__LG_LOOP(uint8_t, uint8_t, opara__shift(x, z, kind == OPARA__LG_SHIFT_LEFT, 8));
}

static opara_result opara__logic_binary_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    const opara__cpu_params* p = &op->p;
    int64_t sa = p->bc_strides[0][p->bc_ndim - 1], sb = p->bc_strides[1][p->bc_ndim - 1];
    opara_dtype dt = op->in[0].dtype;
    size_t ea = opara_dtype_size(dt), ey = opara_dtype_size(op->out[0].dtype), item;
    (void)scratch;
    for (item = begin; item < end; ++item) {
        size_t row, j0, n;
        int64_t off[2];
        opara__cpu_bc_item(p, item, &row, &j0, &n);
        opara__cpu_bc_offsets(p, 2, row, off);
        opara__logic_row((opara__logic_kind)p->fn, dt, (const uint8_t*)op->in[0].data + (off[0] + (int64_t)j0 * sa) * (int64_t)ea, sa,
                         (const uint8_t*)op->in[1].data + (off[1] + (int64_t)j0 * sb) * (int64_t)ea, sb,
                         (uint8_t*)op->out[0].data + (row * (size_t)p->inner + j0) * ey, n);
    }
    return OPARA_OK;
}

static opara__logic_kind opara__logic_kind_of(const opara__cpu_op* op) {
    opara__op o = op->node->op;
    const opara__broadcast_params* bc = &op->params->u.broadcast;
    if (o == OPARA__OP_EQUAL) return OPARA__LG_EQUAL;
    if (o == OPARA__OP_GREATER) return OPARA__LG_GREATER;
    if (o == OPARA__OP_LESS) return OPARA__LG_LESS;
    if (o == OPARA__OP_GREATER_OR_EQUAL) return OPARA__LG_GREATER_EQUAL;
    if (o == OPARA__OP_LESS_OR_EQUAL) return OPARA__LG_LESS_EQUAL;
    if (o == OPARA__OP_AND) return OPARA__LG_AND;
    if (o == OPARA__OP_OR) return OPARA__LG_OR;
    if (o == OPARA__OP_XOR) return OPARA__LG_XOR;
    if (o == OPARA__OP_MOD) return bc->fmod ? OPARA__LG_FMOD : OPARA__LG_MOD;
    return bc->shift_left ? OPARA__LG_SHIFT_LEFT : OPARA__LG_SHIFT_RIGHT;
}

/* What the kernel takes: NULL, or why not. */
static const char* opara__logic_binary_refusal(opara__logic_kind kind, opara_dtype in, opara_dtype out) {
    if (kind <= OPARA__LG_LESS_EQUAL)
        return (opara__logic_numeric(in) || in == OPARA_DTYPE_BOOL) && out == OPARA_DTYPE_BOOL
                   ? NULL : "needs f32, f64, i8, u8, i32, i64 or bool operands of one type and a bool output";
    if (kind <= OPARA__LG_XOR)
        return in == OPARA_DTYPE_BOOL && out == OPARA_DTYPE_BOOL ? NULL : "needs bool operands and output";
    if (kind == OPARA__LG_MOD && (in == OPARA_DTYPE_F32 || in == OPARA_DTYPE_F64))
        return "floating-point operands need fmod=1 (ONNX)";
    if (kind == OPARA__LG_MOD || kind == OPARA__LG_FMOD)
        return opara__logic_numeric(in) && out == in ? NULL : "needs f32, f64, i8, u8, i32 or i64 operands of one type";
    return in == OPARA_DTYPE_U8 && out == in ? NULL : "needs unsigned operands of one type (u8)";
}

OPARA__PRIVATE opara_result opara__cpu_prepare_logic_binary(opara__cpu_op* op, char* err, size_t cap) {
    const opara__cpu_tensor* ins[2];
    opara__logic_kind kind;
    const char* why;
    if (!op->params || !op->params->resolved)
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "%s: the node's shapes are not resolved", opara__op_name(op->node->op));
    kind = opara__logic_kind_of(op);
    why = op->in[1].dtype != op->in[0].dtype ? "needs operands of one type"
                                             : opara__logic_binary_refusal(kind, op->in[0].dtype, op->out[0].dtype);
    if (why) return opara__cpu_reject(err, cap, OPARA_ERR_BAD_DTYPE, "%s: %s", opara__op_name(op->node->op), why);
    ins[0] = &op->in[0];
    ins[1] = &op->in[1];
    op->p.fn = (int)kind;
    op->fn = opara__logic_binary_kernel;
    return opara__bc_prepare(op, 2, ins, err, cap);
}

/* ---- Not, IsNaN, IsInf ------------------------------------------------------------------------ */

#define OPARA__IS_INF_NEG 1
#define OPARA__IS_INF_POS 2

static opara_result opara__logic_unary_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    const opara__cpu_params* p = &op->p;
    size_t total = opara__cpu_numel(&op->out[0]), i0 = begin * OPARA__CHUNK, i1 = OPARA__MIN(total, end * OPARA__CHUNK), i;
    int f64 = op->in[0].dtype == OPARA_DTYPE_F64, neg = (p->mode & OPARA__IS_INF_NEG) != 0, pos = (p->mode & OPARA__IS_INF_POS) != 0;
    const float* xf = (const float*)op->in[0].data;
    const double* xd = (const double*)op->in[0].data;
    const uint8_t* xb = (const uint8_t*)op->in[0].data;
    uint8_t* y = (uint8_t*)op->out[0].data;
    (void)scratch;
    if (op->node->op == OPARA__OP_NOT) {
        for (i = i0; i < i1; ++i) y[i] = xb[i] == 0;
    } else if (op->node->op == OPARA__OP_IS_NAN) {
        for (i = i0; i < i1; ++i) y[i] = f64 ? xd[i] != xd[i] : xf[i] != xf[i];
    } else {
        for (i = i0; i < i1; ++i) {
            double v = f64 ? xd[i] : (double)xf[i];
            y[i] = (uint8_t)((pos && v == HUGE_VAL) || (neg && v == -HUGE_VAL));
        }
    }
    return OPARA_OK;
}

OPARA__PRIVATE opara_result opara__cpu_prepare_logic_unary(opara__cpu_op* op, char* err, size_t cap) {
    opara_dtype in = op->in[0].dtype;
    int is_not = op->node->op == OPARA__OP_NOT;
    if (!op->params || !op->params->resolved || !opara__cpu_same_dims(&op->in[0], &op->out[0]))
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "%s: input and output shapes differ", opara__op_name(op->node->op));
    if (op->out[0].dtype != OPARA_DTYPE_BOOL || (is_not && in != OPARA_DTYPE_BOOL) ||
        (!is_not && in != OPARA_DTYPE_F32 && in != OPARA_DTYPE_F64))
        return opara__cpu_reject(err, cap, OPARA_ERR_BAD_DTYPE, "%s: needs a %s input and a bool output",
                                 opara__op_name(op->node->op), is_not ? "bool" : "f32 or f64");
    if (op->node->op == OPARA__OP_IS_INF)
        op->p.mode = (op->params->u.is_inf.detect_negative ? OPARA__IS_INF_NEG : 0) |
                     (op->params->u.is_inf.detect_positive ? OPARA__IS_INF_POS : 0);
    op->work_items = (opara__cpu_numel(&op->out[0]) + OPARA__CHUNK - 1) / OPARA__CHUNK;
    op->min_items_per_task = 1;
    op->fn = opara__logic_unary_kernel;
    return OPARA_OK;
}

/* ---- Max, Min, Mean, Sum ---------------------------------------------------------------------- */

/* Folds n elements of input x (every s-th) into y: the first input is copied, the others combined. */
#define OPARA__VAR_ROW(T, MAXE, MINE)                                                                            \
    do {                                                                                                         \
        const T* X = (const T*)x;                                                                                \
        T* Y = (T*)y;                                                                                            \
        if (first) {                                                                                             \
            for (i = 0; i < n; ++i) Y[i] = X[(int64_t)i * s];                                                    \
        } else if (kind == OPARA__VAR_MAX) {                                                                     \
            for (i = 0; i < n; ++i) { T acc = Y[i], v = X[(int64_t)i * s]; Y[i] = (MAXE); }                      \
        } else if (kind == OPARA__VAR_MIN) {                                                                     \
            for (i = 0; i < n; ++i) { T acc = Y[i], v = X[(int64_t)i * s]; Y[i] = (MINE); }                      \
        } else {                                                                                                 \
            for (i = 0; i < n; ++i) Y[i] = (T)(Y[i] + X[(int64_t)i * s]);                                        \
        }                                                                                                        \
    } while (0)

static void opara__variadic_row(opara__variadic_kind kind, opara_dtype dt, int first, const void* x, int64_t s, void* y,
                                size_t n) {
    size_t i;
    switch (dt) {
    case OPARA_DTYPE_F32: OPARA__VAR_ROW(float, opara__max_nan(acc, v), opara__min_nan(acc, v)); break;
    case OPARA_DTYPE_F64: OPARA__VAR_ROW(double, opara__max_nan_d(acc, v), opara__min_nan_d(acc, v)); break;
    case OPARA_DTYPE_I8: OPARA__VAR_ROW(int8_t, v > acc ? v : acc, v < acc ? v : acc); break;
    case OPARA_DTYPE_U8: OPARA__VAR_ROW(uint8_t, v > acc ? v : acc, v < acc ? v : acc); break;
    case OPARA_DTYPE_I32: OPARA__VAR_ROW(int32_t, v > acc ? v : acc, v < acc ? v : acc); break;
    case OPARA_DTYPE_I64: OPARA__VAR_ROW(int64_t, v > acc ? v : acc, v < acc ? v : acc); break;
    case OPARA_DTYPE_UNDEFINED: case OPARA_DTYPE_BOOL: case OPARA_DTYPE_F16: case OPARA_DTYPE_FORCE_U32: break;
    }
}

/* Element offset of input `in` at the start of output row `row` (the output's dims but the last), and
   its stride along the last. */
static int64_t opara__variadic_offset(const opara__cpu_tensor* out, const opara__cpu_tensor* in, size_t row,
                                      int64_t* last_stride) {
    int64_t strides[OPARA_MAX_DIMS], off = 0;
    int32_t d;
    (void)opara__cpu_bcast_strides(out->ndim, out->dims, in->ndim, in->dims, strides); /* checked by prepare */
    *last_stride = out->ndim > 0 ? strides[out->ndim - 1] : 0;
    for (d = out->ndim - 2; d >= 0; --d) {
        off += (int64_t)(row % (size_t)out->dims[d]) * strides[d];
        row /= (size_t)out->dims[d];
    }
    return off;
}

static opara_result opara__variadic_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    const opara__cpu_params* p = &op->p;
    opara__variadic_kind kind = (opara__variadic_kind)p->fn;
    opara_dtype dt = op->out[0].dtype;
    size_t e = opara_dtype_size(dt), item, i;
    uint32_t k;
    (void)scratch;
    for (item = begin; item < end; ++item) {
        size_t row, j0, n;
        uint8_t* y;
        opara__cpu_bc_item(p, item, &row, &j0, &n);
        y = (uint8_t*)op->out[0].data + (row * (size_t)p->inner + j0) * e;
        for (k = 0; k < op->n_in; ++k) {
            int64_t s, off = opara__variadic_offset(&op->out[0], &op->in[k], row, &s);
            opara__variadic_row(kind, dt, k == 0, (const uint8_t*)op->in[k].data + (off + (int64_t)j0 * s) * (int64_t)e, s, y, n);
        }
        if (kind != OPARA__VAR_MEAN) continue;
        if (dt == OPARA_DTYPE_F32)
            for (i = 0; i < n; ++i) ((float*)y)[i] /= (float)op->n_in; /* ONNX's reference: the sum, then / N */
        else
            for (i = 0; i < n; ++i) ((double*)y)[i] /= (double)op->n_in;
    }
    return OPARA_OK;
}

OPARA__PRIVATE opara_result opara__cpu_prepare_variadic(opara__cpu_op* op, char* err, size_t cap) {
    const opara__cpu_tensor* y = &op->out[0];
    opara__op o = op->node->op;
    opara__variadic_kind kind = o == OPARA__OP_MAX ? OPARA__VAR_MAX : o == OPARA__OP_MIN ? OPARA__VAR_MIN
                                : o == OPARA__OP_MEAN ? OPARA__VAR_MEAN : OPARA__VAR_SUM;
    int any_type = kind == OPARA__VAR_MAX || kind == OPARA__VAR_MIN;
    int64_t strides[OPARA_MAX_DIMS];
    uint32_t k;
    if (!op->params || !op->params->resolved)
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "%s: the node's shapes are not resolved", opara__op_name(o));
    if (any_type ? !opara__logic_numeric(y->dtype) : (y->dtype != OPARA_DTYPE_F32 && y->dtype != OPARA_DTYPE_F64))
        return opara__cpu_reject(err, cap, OPARA_ERR_BAD_DTYPE, "%s: needs %s inputs of one type", opara__op_name(o),
                                 any_type ? "f32, f64, i8, u8, i32 or i64" : "f32 or f64");
    for (k = 0; k < op->n_in; ++k) {
        if (op->in[k].dtype != y->dtype)
            return opara__cpu_reject(err, cap, OPARA_ERR_BAD_DTYPE, "%s: input %u is %s, the output %s", opara__op_name(o), k,
                                     opara_dtype_name(op->in[k].dtype), opara_dtype_name(y->dtype));
        if (!op->in[k].data || !opara__cpu_bcast_strides(y->ndim, y->dims, op->in[k].ndim, op->in[k].dims, strides))
            return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "%s: input %u does not broadcast to the output", opara__op_name(o), k);
    }
    op->p.fn = (int)kind;
    op->p.inner = y->ndim > 0 ? y->dims[y->ndim - 1] : 1;
    op->p.tail = op->p.inner > 0 ? (op->p.inner + OPARA__CHUNK - 1) / OPARA__CHUNK : 0;
    op->p.outer = y->ndim > 0 ? opara__cpu_dims_prod(y->dims, 0, y->ndim - 1) : 1;
    op->work_items = (size_t)(op->p.outer * op->p.tail);
    op->min_items_per_task = 1;
    op->fn = opara__variadic_kernel;
    return OPARA_OK;
}

/* ---- Neg, Abs, Sign of f64 and the integer types ------------------------------------------------ */

/* Integers wrap (Neg and Abs of the type's minimum give it back, as two's complement does); f64 keeps NaN. */
#define OPARA__SIGNED_ROW(T, NEG, ABS, SIGN)                                                                     \
    do {                                                                                                         \
        const T* X = (const T*)op->in[0].data;                                                                   \
        T* Y = (T*)op->out[0].data;                                                                              \
        if (fn == OPARA__UN_NEG) for (i = i0; i < i1; ++i) { T v = X[i]; Y[i] = (NEG); }                         \
        else if (fn == OPARA__UN_ABS) for (i = i0; i < i1; ++i) { T v = X[i]; Y[i] = (ABS); }                    \
        else for (i = i0; i < i1; ++i) { T v = X[i]; Y[i] = (SIGN); }                                            \
    } while (0)

#define OPARA__WRAP_NEG(T, UT, v) ((T)(UT)(0u - (UT)(v)))

static opara_result opara__signed_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    opara__cpu_unary fn = (opara__cpu_unary)op->p.fn;
    size_t total = opara__cpu_numel(&op->out[0]), i0 = begin * OPARA__CHUNK, i1 = OPARA__MIN(total, end * OPARA__CHUNK), i;
    (void)scratch;
    switch (op->out[0].dtype) {
    case OPARA_DTYPE_F64: OPARA__SIGNED_ROW(double, -v, fabs(v), v > 0 ? 1.0 : v < 0 ? -1.0 : v); break;
    case OPARA_DTYPE_I8:
        OPARA__SIGNED_ROW(int8_t, OPARA__WRAP_NEG(int8_t, uint8_t, v), v < 0 ? OPARA__WRAP_NEG(int8_t, uint8_t, v) : v,
                          (int8_t)((v > 0) - (v < 0)));
        break;
    case OPARA_DTYPE_I32:
        OPARA__SIGNED_ROW(int32_t, OPARA__WRAP_NEG(int32_t, uint32_t, v), v < 0 ? OPARA__WRAP_NEG(int32_t, uint32_t, v) : v,
                          (int32_t)((v > 0) - (v < 0)));
        break;
    case OPARA_DTYPE_I64:
        OPARA__SIGNED_ROW(int64_t, OPARA__WRAP_NEG(int64_t, uint64_t, v), v < 0 ? OPARA__WRAP_NEG(int64_t, uint64_t, v) : v,
                          (int64_t)((v > 0) - (v < 0)));
        break;
    case OPARA_DTYPE_U8: OPARA__SIGNED_ROW(uint8_t, (uint8_t)(0u - v), v, (uint8_t)(v > 0)); break;
    case OPARA_DTYPE_UNDEFINED: case OPARA_DTYPE_F32: case OPARA_DTYPE_BOOL: case OPARA_DTYPE_F16: case OPARA_DTYPE_FORCE_U32:
        break; /* f32: the unary kernel; the others refused by prepare */
    }
    return OPARA_OK;
}

#undef OPARA__SIGNED_ROW
#undef OPARA__WRAP_NEG

OPARA__PRIVATE opara_result opara__cpu_prepare_signed(opara__cpu_op* op, opara__cpu_unary fn, char* err, size_t cap) {
    opara_dtype t = op->in[0].dtype;
    if (t == OPARA_DTYPE_F32) return opara__cpu_prepare_unary(op, fn, err, cap);
    if (!op->params || !op->params->resolved || !opara__cpu_same_dims(&op->in[0], &op->out[0]))
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "%s: input and output shapes differ", opara__op_name(op->node->op));
    if (op->out[0].dtype != t || !opara__logic_numeric(t) || (fn == OPARA__UN_NEG && t == OPARA_DTYPE_U8))
        return opara__cpu_reject(err, cap, OPARA_ERR_BAD_DTYPE, "%s: needs f32, f64, i8, i32 or i64%s", opara__op_name(op->node->op),
                                 fn == OPARA__UN_NEG ? "" : " or u8");
    op->p.fn = (int)fn;
    op->work_items = (opara__cpu_numel(&op->out[0]) + OPARA__CHUNK - 1) / OPARA__CHUNK;
    op->min_items_per_task = 1;
    op->fn = opara__signed_kernel;
    return OPARA_OK;
}
