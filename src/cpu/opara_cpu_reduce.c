/* CPU kernels of the operators that reduce rows or dims: Softmax, LogSoftmax, Hardmax, GlobalAveragePool,
   GlobalMaxPool, ReduceMean .. ReduceSumSquare (one kernel parameterised by the reduction kind), ArgMax,
   ArgMin, CumSum, MeanVarianceNormalization and Einsum. */
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

/* ---- LogSoftmax, Hardmax ---------------------------------------------------------------------- */

/* The index of the largest (is_min: smallest) of n values at stride `stride`, as ONNX Runtime picks it:
   a strict comparison against the best so far, starting from the first value (>=/<= with
   select_last_index), so a NaN wins only in first place and is skipped elsewhere. */
static size_t opara__arg_best(const float* x, size_t n, size_t stride, int is_min, int select_last) {
    float best = x[0];
    size_t j, at = 0;
    for (j = 1; j < n; ++j) {
        float v = x[j * stride];
        int better = is_min ? (select_last ? v <= best : v < best) : (select_last ? v >= best : v > best);
        if (better) best = v, at = j;
    }
    return at;
}

/* y = x - max - log(sum(exp(x - max))) along the axis (the max skips NaN as Softmax's does; a NaN
   still makes the row NaN through the sum). */
static opara_result opara__log_softmax_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    size_t L = (size_t)op->p.mid, in = (size_t)op->p.inner, item, j;
    int level = opara__cpu_isa_level();
    (void)scratch;
    for (item = begin; item < end; ++item) {
        size_t base = (item / in) * L * in + item % in;
        const float* x = (const float*)op->in[0].data + base;
        float* y = (float*)op->out[0].data + base;
        float mx = -HUGE_VALF, sum = 0.0f, shift;
        for (j = 0; j < L; ++j) mx = x[j * in] > mx ? x[j * in] : mx;
        if (in == 1) {
            for (j = 0; j < L; ++j) y[j] = x[j] - mx;
            opara__vec_exp(level, y, y, L);
            sum = opara__vec_sum(level, y, L);
        } else {
            for (j = 0; j < L; ++j) sum += expf(x[j * in] - mx);
        }
        shift = mx + logf(sum);
        for (j = 0; j < L; ++j) y[j * in] = x[j * in] - shift;
    }
    return OPARA_OK;
}

/* 1 at the first largest value along the axis (ArgMax's choice), 0 elsewhere. */
static opara_result opara__hardmax_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    size_t L = (size_t)op->p.mid, in = (size_t)op->p.inner, item, j;
    (void)scratch;
    for (item = begin; item < end; ++item) {
        size_t base = (item / in) * L * in + item % in, at;
        float* y = (float*)op->out[0].data + base;
        at = opara__arg_best((const float*)op->in[0].data + base, L, in, 0, 0);
        for (j = 0; j < L; ++j) y[j * in] = j == at ? 1.0f : 0.0f;
    }
    return OPARA_OK;
}

/* Softmax's iteration space (rows along the record's axis) with the LogSoftmax or Hardmax kernel. */
OPARA__PRIVATE opara_result opara__cpu_prepare_log_softmax(opara__cpu_op* op, char* err, size_t cap) {
    opara_result r = opara__cpu_prepare_softmax(op, err, cap);
    if (r != OPARA_OK) return r;
    op->fn = op->node->op == OPARA__OP_HARDMAX ? opara__hardmax_kernel : opara__log_softmax_kernel;
    return OPARA_OK;
}

/* ---- ArgMax, ArgMin ---------------------------------------------------------------------------- */

static opara_result opara__arg_reduce_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    size_t L = (size_t)op->p.mid, in = (size_t)op->p.inner, item;
    (void)scratch;
    for (item = begin; item < end; ++item) {
        const float* x = (const float*)op->in[0].data + (item / in) * L * in + item % in;
        ((int64_t*)op->out[0].data)[item] = (int64_t)opara__arg_best(x, L, in, op->p.mode, op->p.select_last);
    }
    return OPARA_OK;
}

OPARA__PRIVATE opara_result opara__cpu_prepare_arg_reduce(opara__cpu_op* op, char* err, size_t cap) {
    const opara__cpu_tensor *x = &op->in[0], *y = &op->out[0];
    int64_t axis;
    const char* name = opara__op_name(op->node->op);
    if (x->dtype != OPARA_DTYPE_F32 || y->dtype != OPARA_DTYPE_I64)
        return opara__cpu_reject(err, cap, OPARA_ERR_BAD_DTYPE, "%s: f32 input and i64 output only", name);
    if (!opara__cpu_record_axis(op, x->ndim, &axis))
        return opara__cpu_reject(err, cap, OPARA_ERR_BAD_INDEX, "%s: axis out of range", name);
    op->p.mid = x->dims[axis];
    op->p.inner = opara__cpu_dims_prod(x->dims, (int32_t)axis + 1, x->ndim);
    if ((int64_t)opara__cpu_numel(y) != opara__cpu_dims_prod(x->dims, 0, (int32_t)axis) * op->p.inner)
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "%s: output shape does not match axis/keepdims", name);
    op->p.mode = op->node->op == OPARA__OP_ARG_MIN;
    op->p.select_last = op->params->u.reduce.select_last_index;
    op->work_items = op->p.mid ? opara__cpu_numel(y) : 0;
    op->min_items_per_task = 16;
    op->fn = opara__arg_reduce_kernel;
    return OPARA_OK;
}

/* ---- CumSum ------------------------------------------------------------------------------------ */

/* Running sums along the axis of x viewed as [outer, L, stride], over columns [0, n) of one outer
   index: each row is the previous row of y plus this (exclusive: the previous) row of x, so the
   inner loop runs along contiguous columns. A is the type the sum is formed in (unsigned for the
   integers: they wrap instead of overflowing). */
#define OPARA__DEFINE_CUM_SUM(NAME, T, A)                                                                       \
    static void NAME(const T* x, T* y, size_t L, size_t stride, size_t n, int exclusive, int reverse) {       \
        size_t k, j;                                                                                           \
        for (k = 0; k < L; ++k) {                                                                              \
            size_t r = reverse ? L - 1 - k : k, prev = reverse ? r + 1 : r - 1;                                \
            T* yr = y + r * stride;                                                                            \
            const T *xr = x + r * stride, *yp, *xp;                                                            \
            if (k == 0) {                                                                                      \
                for (j = 0; j < n; ++j) yr[j] = exclusive ? (T)0 : xr[j];                                      \
                continue;                                                                                      \
            }                                                                                                  \
            yp = y + prev * stride, xp = exclusive ? x + prev * stride : xr;                                   \
            for (j = 0; j < n; ++j) yr[j] = (T)((A)yp[j] + (A)xp[j]);                                          \
        }                                                                                                      \
    }
OPARA__DEFINE_CUM_SUM(opara__cum_sum_f32, float, float)
OPARA__DEFINE_CUM_SUM(opara__cum_sum_f64, double, double)
OPARA__DEFINE_CUM_SUM(opara__cum_sum_i32, int32_t, uint32_t)
OPARA__DEFINE_CUM_SUM(opara__cum_sum_i64, int64_t, uint64_t)
#undef OPARA__DEFINE_CUM_SUM

#define OPARA__CUM_SUM_COLS 4096 /* columns per work item */

/* Work item = (outer index, block of OPARA__CUM_SUM_COLS columns). */
static opara_result opara__cum_sum_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    const opara__cpu_params* p = &op->p;
    size_t L = (size_t)p->mid, in = (size_t)p->inner, blocks = (size_t)p->n_col_blocks, item;
    (void)scratch;
    for (item = begin; item < end; ++item) {
        size_t c0 = (item % blocks) * OPARA__CUM_SUM_COLS, off = (item / blocks) * L * in + c0;
        size_t n = in - c0 < OPARA__CUM_SUM_COLS ? in - c0 : OPARA__CUM_SUM_COLS;
        const char* x = (const char*)op->in[0].data;
        char* y = (char*)op->out[0].data;
        opara_dtype t = op->in[0].dtype; /* prepare admits only these four */
        if (t == OPARA_DTYPE_F32) opara__cum_sum_f32((const float*)x + off, (float*)y + off, L, in, n, p->exclusive, p->reverse);
        else if (t == OPARA_DTYPE_F64) opara__cum_sum_f64((const double*)x + off, (double*)y + off, L, in, n, p->exclusive, p->reverse);
        else if (t == OPARA_DTYPE_I32) opara__cum_sum_i32((const int32_t*)x + off, (int32_t*)y + off, L, in, n, p->exclusive, p->reverse);
        else opara__cum_sum_i64((const int64_t*)x + off, (int64_t*)y + off, L, in, n, p->exclusive, p->reverse);
    }
    return OPARA_OK;
}

OPARA__PRIVATE opara_result opara__cpu_prepare_cum_sum(opara__cpu_op* op, char* err, size_t cap) {
    const opara__cpu_tensor *x = &op->in[0], *y = &op->out[0];
    opara_dtype t = x->dtype;
    int64_t axis;
    if (t != OPARA_DTYPE_F32 && t != OPARA_DTYPE_F64 && t != OPARA_DTYPE_I32 && t != OPARA_DTYPE_I64)
        return opara__cpu_reject(err, cap, OPARA_ERR_BAD_DTYPE, "CumSum: f32, f64, i32 or i64 only");
    if (y->dtype != t || !opara__cpu_same_dims(x, y))
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "CumSum: the output must have the input's shape and type");
    if (!opara__cpu_record_axis(op, x->ndim, &axis))
        return opara__cpu_reject(err, cap, OPARA_ERR_BAD_INDEX, "CumSum: axis out of range");
    op->p.mid = x->dims[axis];
    op->p.inner = opara__cpu_dims_prod(x->dims, (int32_t)axis + 1, x->ndim);
    op->p.n_col_blocks = (op->p.inner + OPARA__CUM_SUM_COLS - 1) / OPARA__CUM_SUM_COLS;
    op->p.exclusive = op->params->u.reduce.exclusive;
    op->p.reverse = op->params->u.reduce.reverse;
    op->work_items = (size_t)(opara__cpu_dims_prod(x->dims, 0, (int32_t)axis) * op->p.n_col_blocks);
    if (op->p.mid == 0) op->work_items = 0;
    op->fn = opara__cum_sum_kernel;
    return OPARA_OK;
}

#define OPARA__REDUCE_COLS 1024 /* columns per work item of the column-wise reduction */

/* ---- ReduceMean .. ReduceSumSquare ------------------------------------------------------------- */

/* What a kind's accumulator starts from. */
static double opara__reduce_init(opara__reduce_kind kind) {
    return kind == OPARA__RED_MAX ? -HUGE_VAL : kind == OPARA__RED_MIN ? HUGE_VAL : kind == OPARA__RED_PROD ? 1.0 : 0.0;
}

/* One element folded into the accumulator: the kind's transform of v (LogSumExp: exp(v - shift)),
   then its combination. */
static double opara__reduce_fold(opara__reduce_kind kind, double acc, double v, double shift) {
    switch (kind) {
    case OPARA__RED_MEAN: case OPARA__RED_SUM: case OPARA__RED_LOG_SUM: return acc + v;
    case OPARA__RED_L1: return acc + fabs(v);
    case OPARA__RED_L2: case OPARA__RED_SUM_SQUARE: return acc + v * v;
    case OPARA__RED_LOG_SUM_EXP: return acc + exp(v - shift);
    case OPARA__RED_PROD: return acc * v;
    case OPARA__RED_MAX: return opara__max_nan_d(acc, v);
    case OPARA__RED_MIN: return opara__min_nan_d(acc, v);
    }
    return acc;
}

/* Two partial results combined. */
static double opara__reduce_merge(opara__reduce_kind kind, double a, double b) {
    if (kind == OPARA__RED_PROD) return a * b;
    if (kind == OPARA__RED_MAX) return opara__max_nan_d(a, b);
    if (kind == OPARA__RED_MIN) return opara__min_nan_d(a, b);
    return a + b;
}

/* The output from the accumulator of `count` elements (LogSumExp: shift is their max; an infinite
   max is the result itself, where exp(x - max) would be NaN). */
static double opara__reduce_finish(opara__reduce_kind kind, double acc, int64_t count, double shift) {
    switch (kind) {
    case OPARA__RED_MEAN: return count ? acc / (double)count : 0.0;
    case OPARA__RED_L2: return sqrt(acc);
    case OPARA__RED_LOG_SUM: return log(acc);
    case OPARA__RED_LOG_SUM_EXP: return isinf(shift) ? shift : log(acc) + shift;
    case OPARA__RED_SUM: case OPARA__RED_L1: case OPARA__RED_SUM_SQUARE: case OPARA__RED_PROD: case OPARA__RED_MAX:
    case OPARA__RED_MIN: break;
    }
    return acc;
}

/* The kind's reduction of n contiguous floats (LogSumExp: of exp(x - shift), through the vector exp
   in blocks of tmp's OPARA__REDUCE_COLS floats), in 8 lanes the compiler keeps in vector registers;
   the sums through the vector sum. */
static double opara__reduce_run_f32(int level, opara__reduce_kind kind, const float* x, size_t n, float shift, float* tmp) {
    float a[8];
    size_t i = 0, l;
    double r = 0.0;
    if (kind == OPARA__RED_MEAN || kind == OPARA__RED_SUM || kind == OPARA__RED_LOG_SUM) return opara__vec_sum(level, x, n);
    if (kind == OPARA__RED_LOG_SUM_EXP) {
        for (; i < n; i += OPARA__REDUCE_COLS) {
            size_t m = n - i < OPARA__REDUCE_COLS ? n - i : OPARA__REDUCE_COLS, j;
            for (j = 0; j < m; ++j) tmp[j] = x[i + j] - shift;
            opara__vec_exp(level, tmp, tmp, m);
            r += opara__vec_sum(level, tmp, m);
        }
        return r;
    }
    for (l = 0; l < 8; ++l) a[l] = (float)opara__reduce_init(kind);
    switch (kind) {
    case OPARA__RED_L1: for (; i + 8 <= n; i += 8) for (l = 0; l < 8; ++l) a[l] += fabsf(x[i + l]); break;
    case OPARA__RED_L2: case OPARA__RED_SUM_SQUARE:
        for (; i + 8 <= n; i += 8) for (l = 0; l < 8; ++l) a[l] += x[i + l] * x[i + l];
        break;
    case OPARA__RED_PROD: for (; i + 8 <= n; i += 8) for (l = 0; l < 8; ++l) a[l] *= x[i + l]; break;
    case OPARA__RED_MAX: for (; i + 8 <= n; i += 8) for (l = 0; l < 8; ++l) a[l] = opara__max_nan(a[l], x[i + l]); break;
    case OPARA__RED_MIN: for (; i + 8 <= n; i += 8) for (l = 0; l < 8; ++l) a[l] = opara__min_nan(a[l], x[i + l]); break;
    case OPARA__RED_MEAN: case OPARA__RED_SUM: case OPARA__RED_LOG_SUM: case OPARA__RED_LOG_SUM_EXP: break; /* above */
    }
    r = a[0];
    for (l = 1; l < 8; ++l) r = opara__reduce_merge(kind, r, a[l]);
    for (; i < n; ++i) r = opara__reduce_fold(kind, r, x[i], shift);
    return r;
}

/* acc[j] combined with the kind's transform of x[j] (LogSumExp: exp(x[j] - shift[j]), through tmp),
   j < n: the columns of one reduced row at a time, with the vector helpers or loops the compiler
   vectorises. */
static void opara__reduce_cols_f32(int level, opara__reduce_kind kind, float* acc, const float* x, size_t n,
                                   const float* shift, float* tmp) {
    size_t j;
    switch (kind) {
    case OPARA__RED_MEAN: case OPARA__RED_SUM: case OPARA__RED_LOG_SUM: opara__vec_add_into(acc, x, 1, n); break;
    case OPARA__RED_L1: for (j = 0; j < n; ++j) acc[j] += fabsf(x[j]); break;
    case OPARA__RED_L2: case OPARA__RED_SUM_SQUARE: for (j = 0; j < n; ++j) acc[j] += x[j] * x[j]; break;
    case OPARA__RED_LOG_SUM_EXP:
        for (j = 0; j < n; ++j) tmp[j] = x[j] - shift[j];
        opara__vec_exp(level, tmp, tmp, n);
        opara__vec_add_into(acc, tmp, 1, n);
        break;
    case OPARA__RED_PROD: for (j = 0; j < n; ++j) acc[j] *= x[j]; break;
    case OPARA__RED_MAX: opara__vec_max_into(acc, x, 1, n); break;
    case OPARA__RED_MIN: opara__vec_min_into(acc, x, n); break;
    }
}

/* The input offset of combination r of n (dim, stride) groups, row-major. */
static int64_t opara__group_offset(const int64_t* dims, const int64_t* strides, int32_t n, int64_t r) {
    int64_t off = 0;
    int32_t d;
    for (d = n - 1; d >= 0; --d) {
        off += (r % dims[d]) * strides[d];
        r /= dims[d];
    }
    return off;
}

/* f32, innermost group reduced: work item = one output; the reduction runs along contiguous runs of
   p->inner elements, one per combination of the other reduced groups. LogSumExp takes two passes
   (the max first). */
static opara_result opara__reduce_rows_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    const opara__cpu_params* p = &op->p;
    opara__reduce_kind kind = (opara__reduce_kind)p->mode;
    int64_t runs = opara__cpu_dims_prod(p->red_dims, 0, p->red_n - 1), count = runs * p->inner, r;
    int level = opara__cpu_isa_level(), pass;
    size_t item;
    for (item = begin; item < end; ++item) {
        const float* x = (const float*)op->in[0].data + opara__group_offset(p->kept_dims, p->kept_strides, p->kept_n, (int64_t)item);
        double shift = 0.0, acc = 0.0;
        for (pass = kind == OPARA__RED_LOG_SUM_EXP ? 0 : 1; pass < 2; ++pass) {
            opara__reduce_kind k = pass == 0 ? OPARA__RED_MAX : kind;
            acc = opara__reduce_init(k);
            for (r = 0; r < runs; ++r) {
                const float* run = x + opara__group_offset(p->red_dims, p->red_strides, p->red_n - 1, r);
                acc = opara__reduce_merge(k, acc, opara__reduce_run_f32(level, k, run, (size_t)p->inner, (float)shift, scratch));
            }
            if (pass == 0) shift = acc;
        }
        ((float*)op->out[0].data)[item] = (float)opara__reduce_finish(kind, acc, count, shift);
    }
    return OPARA_OK;
}

/* f32, innermost group kept (p->inner columns): work item = (combination of the outer kept groups,
   block of OPARA__REDUCE_COLS columns); every reduced row of the block is combined into an
   accumulator in scratch, column-wise (scratch: the accumulator, then LogSumExp's max and exp terms). */
static opara_result opara__reduce_cols_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    const opara__cpu_params* p = &op->p;
    opara__reduce_kind kind = (opara__reduce_kind)p->mode;
    size_t blocks = (size_t)p->n_col_blocks, item, j;
    int64_t rows = opara__cpu_dims_prod(p->red_dims, 0, p->red_n), r;
    float *acc = scratch, *shift = scratch + OPARA__REDUCE_COLS, *tmp = scratch + 2 * OPARA__REDUCE_COLS;
    int level = opara__cpu_isa_level(), pass;
    for (item = begin; item < end; ++item) {
        size_t o = item / blocks, c0 = (item % blocks) * OPARA__REDUCE_COLS;
        size_t n = (size_t)p->inner - c0 < OPARA__REDUCE_COLS ? (size_t)p->inner - c0 : OPARA__REDUCE_COLS;
        const float* x = (const float*)op->in[0].data + opara__group_offset(p->kept_dims, p->kept_strides, p->kept_n - 1, (int64_t)o) + c0;
        float* y = (float*)op->out[0].data + o * (size_t)p->inner + c0;
        for (pass = kind == OPARA__RED_LOG_SUM_EXP ? 0 : 1; pass < 2; ++pass) {
            opara__reduce_kind k = pass == 0 ? OPARA__RED_MAX : kind;
            opara__vec_fill(acc, n, (float)opara__reduce_init(k));
            for (r = 0; r < rows; ++r)
                opara__reduce_cols_f32(level, k, acc, x + opara__group_offset(p->red_dims, p->red_strides, p->red_n, r), n, shift, tmp);
            if (pass == 0) opara__vec_copy(0, shift, acc, n);
        }
        for (j = 0; j < n; ++j) y[j] = (float)opara__reduce_finish(kind, acc[j], rows, shift[j]);
    }
    return OPARA_OK;
}

/* The integer kinds on int64 accumulators (unsigned: products and sums wrap as the fixed-width types
   do instead of overflowing). */
static uint64_t opara__reduce_fold_int(opara__reduce_kind kind, uint64_t acc, int64_t v) {
    switch (kind) {
    case OPARA__RED_L1: return acc + (uint64_t)(v < 0 ? -(uint64_t)v : (uint64_t)v);
    case OPARA__RED_SUM_SQUARE: return acc + (uint64_t)v * (uint64_t)v;
    case OPARA__RED_PROD: return acc * (uint64_t)v;
    case OPARA__RED_MAX: return v > (int64_t)acc ? (uint64_t)v : acc;
    case OPARA__RED_MIN: return v < (int64_t)acc ? (uint64_t)v : acc;
    case OPARA__RED_MEAN: case OPARA__RED_SUM: case OPARA__RED_L2: case OPARA__RED_LOG_SUM: case OPARA__RED_LOG_SUM_EXP: break;
    }
    return acc + (uint64_t)v; /* Sum (prepare refuses the others for integers) */
}

static uint64_t opara__reduce_init_int(opara__reduce_kind kind) {
    return kind == OPARA__RED_MAX ? (uint64_t)INT64_MIN : kind == OPARA__RED_MIN ? (uint64_t)INT64_MAX
           : kind == OPARA__RED_PROD ? 1u : 0u;
}

/* f64, i32, i64 (not a hot path): work item = one output, element by element over every reduced
   group, in double (f64) or int64 (integers). */
static opara_result opara__reduce_generic_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    const opara__cpu_params* p = &op->p;
    opara__reduce_kind kind = (opara__reduce_kind)p->mode;
    opara_dtype t = op->in[0].dtype;
    int64_t count = opara__cpu_dims_prod(p->red_dims, 0, p->red_n), r;
    size_t item;
    int pass;
    (void)scratch;
    for (item = begin; item < end; ++item) {
        int64_t base = opara__group_offset(p->kept_dims, p->kept_strides, p->kept_n, (int64_t)item);
        if (t == OPARA_DTYPE_F64) {
            const double* x = (const double*)op->in[0].data + base;
            double acc = 0.0, shift = 0.0;
            for (pass = kind == OPARA__RED_LOG_SUM_EXP ? 0 : 1; pass < 2; ++pass) {
                opara__reduce_kind k = pass == 0 ? OPARA__RED_MAX : kind;
                acc = opara__reduce_init(k);
                for (r = 0; r < count; ++r) acc = opara__reduce_fold(k, acc, x[opara__group_offset(p->red_dims, p->red_strides, p->red_n, r)], shift);
                if (pass == 0) shift = acc;
            }
            ((double*)op->out[0].data)[item] = opara__reduce_finish(kind, acc, count, shift);
        } else {
            uint64_t acc = opara__reduce_init_int(kind);
            for (r = 0; r < count; ++r) {
                int64_t at = base + opara__group_offset(p->red_dims, p->red_strides, p->red_n, r);
                acc = opara__reduce_fold_int(kind, acc, t == OPARA_DTYPE_I32 ? ((const int32_t*)op->in[0].data)[at]
                                                                             : ((const int64_t*)op->in[0].data)[at]);
            }
            opara__cpu_store_i(op->out[0].data, t, item, (int64_t)acc);
        }
    }
    return OPARA_OK;
}

/* Which dtypes a kind takes: f32 and f64 all; the integers those whose result stays an integer. */
static int opara__reduce_dtype_ok(opara__reduce_kind kind, opara_dtype t) {
    if (t == OPARA_DTYPE_F32 || t == OPARA_DTYPE_F64) return 1;
    if (t != OPARA_DTYPE_I32 && t != OPARA_DTYPE_I64) return 0;
    return kind == OPARA__RED_SUM || kind == OPARA__RED_MAX || kind == OPARA__RED_MIN || kind == OPARA__RED_PROD ||
           kind == OPARA__RED_L1 || kind == OPARA__RED_SUM_SQUARE;
}

/* The input's dims as groups: dims of size 1 dropped, neighbours that are both reduced or both kept
   merged (natural strides keep a merged group evenly strided); at least one reduced group (a
   reduction over nothing reduces a group of one element). Returns whether the innermost group is
   reduced. */
static int opara__reduce_groups(opara__cpu_params* p, const opara__cpu_tensor* x, const int* reduce) {
    int64_t str[OPARA_MAX_DIMS];
    int32_t d;
    int last = -1;
    opara__cpu_natural_strides(x, str);
    p->kept_n = p->red_n = 0;
    for (d = 0; d < x->ndim; ++d) {
        int64_t* dims = reduce[d] ? p->red_dims : p->kept_dims;
        int64_t* strides = reduce[d] ? p->red_strides : p->kept_strides;
        int32_t* n = reduce[d] ? &p->red_n : &p->kept_n;
        if (x->dims[d] == 1) continue;
        if (reduce[d] == last) {
            dims[*n - 1] *= x->dims[d];
            strides[*n - 1] = str[d];
            continue;
        }
        dims[*n] = x->dims[d], strides[*n] = str[d], ++*n;
        last = reduce[d];
    }
    if (p->red_n == 0) {
        p->red_dims[0] = 1, p->red_strides[0] = 1, p->red_n = 1;
        last = 1;
    }
    return last != 0;
}

OPARA__PRIVATE opara_result opara__cpu_prepare_reduce(opara__cpu_op* op, char* err, size_t cap) {
    const opara__cpu_tensor *x = &op->in[0], *y = &op->out[0];
    opara__cpu_params* p = &op->p;
    const char* name = opara__op_name(op->node->op);
    opara__reduce_kind kind = OPARA__RED_MEAN;
    int keep, reduce[OPARA_MAX_DIMS], rows_layout;
    int32_t d, yd = 0;
    opara__reduce_kind_of(op->node->op, &kind);
    if (!opara__reduce_dtype_ok(kind, x->dtype)) return opara__cpu_reject(err, cap, OPARA_ERR_BAD_DTYPE, "%s: data type not supported", name);
    if (!op->params || !op->params->resolved) return opara__cpu_reject(err, cap, OPARA_ERR_BAD_INDEX, "%s: axis", name);
    for (d = 0; d < x->ndim; ++d) reduce[d] = op->params->u.reduce.axes[d]; /* axes as the shape engine resolved them */
    keep = op->params->u.reduce.keepdims;
    for (d = 0; d < x->ndim; ++d) {
        if (reduce[d] && keep && (yd >= y->ndim || y->dims[yd++] != 1)) break;
        if (!reduce[d] && (yd >= y->ndim || y->dims[yd++] != x->dims[d])) break;
    }
    if (d != x->ndim || yd != y->ndim || y->dtype != x->dtype)
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "%s: output shape does not match axes/keepdims", name);
    p->mode = (int)kind;
    rows_layout = opara__reduce_groups(p, x, reduce);
    op->work_items = opara__cpu_numel(y);
    op->min_items_per_task = 64;
    if (x->dtype != OPARA_DTYPE_F32) {
        op->fn = opara__reduce_generic_kernel;
    } else if (rows_layout) {
        p->inner = p->red_dims[p->red_n - 1];
        op->scratch_floats = OPARA__REDUCE_COLS; /* LogSumExp's exp terms */
        op->fn = opara__reduce_rows_kernel;
    } else {
        p->inner = p->kept_dims[p->kept_n - 1];
        p->n_col_blocks = (p->inner + OPARA__REDUCE_COLS - 1) / OPARA__REDUCE_COLS;
        op->work_items = (size_t)(opara__cpu_dims_prod(p->kept_dims, 0, p->kept_n - 1) * p->n_col_blocks);
        op->min_items_per_task = 1;
        op->scratch_floats = 3 * OPARA__REDUCE_COLS;
        op->fn = opara__reduce_cols_kernel;
    }
    return OPARA_OK;
}

/* ---- MeanVarianceNormalization ----------------------------------------------------------------- */

/* One kept group per item: y = (x - mean) / (sqrt(E[x^2] - mean^2) + 1e-9), ONNX's function body (its
   epsilon is added to the standard deviation). The groups are the reductions' (opara__reduce_groups). */
static opara_result opara__mvn_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    const opara__cpu_params* p = &op->p;
    const float* x = (const float*)op->in[0].data;
    float* y = (float*)op->out[0].data;
    int64_t count = opara__cpu_dims_prod(p->red_dims, 0, p->red_n), r;
    size_t item;
    (void)scratch;
    for (item = begin; item < end; ++item) {
        int64_t base = opara__group_offset(p->kept_dims, p->kept_strides, p->kept_n, (int64_t)item);
        double sum = 0.0, sq = 0.0, mean, var;
        float m, inv;
        for (r = 0; r < count; ++r) {
            double v = x[base + opara__group_offset(p->red_dims, p->red_strides, p->red_n, r)];
            sum += v;
            sq += v * v;
        }
        mean = sum / (double)count;
        var = sq / (double)count - mean * mean;
        m = (float)mean;
        inv = (float)(1.0 / (sqrt(var > 0.0 ? var : 0.0) + 1e-9));
        for (r = 0; r < count; ++r) {
            int64_t at = base + opara__group_offset(p->red_dims, p->red_strides, p->red_n, r);
            y[at] = (x[at] - m) * inv;
        }
    }
    return OPARA_OK;
}

OPARA__PRIVATE opara_result opara__cpu_prepare_mvn(opara__cpu_op* op, char* err, size_t cap) {
    const opara__cpu_tensor* x = &op->in[0];
    int reduce[OPARA_MAX_DIMS], d;
    if (!op->params || !op->params->resolved || !opara__cpu_same_dims(x, &op->out[0]) || x->dtype != OPARA_DTYPE_F32)
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "MeanVarianceNormalization: needs f32 X/Y alike");
    for (d = 0; d < x->ndim; ++d) reduce[d] = op->params->u.reduce.axes[d];
    opara__reduce_groups(&op->p, x, reduce);
    op->work_items = opara__cpu_numel(x) ? (size_t)opara__cpu_dims_prod(op->p.kept_dims, 0, op->p.kept_n) : 0;
    op->min_items_per_task = 1;
    op->fn = opara__mvn_kernel;
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
