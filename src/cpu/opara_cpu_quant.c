/* The quantization operators (QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear) and the
   integer convolution and matrix product (ConvInteger, MatMulInteger, QLinearConv, QLinearMatMul).

   Rounding is ONNX's: to nearest, ties to even (nearbyintf in the default rounding mode), then the
   zero point, then saturation to the output type. A NaN quantizes to the zero point (ONNX leaves it
   undefined; a float-to-integer conversion of NaN would be undefined behaviour in C).

   The integer products run as one int16 x int16 -> int32 GEMM: operands widened with their zero
   point subtracted (u8 and i8 minus a zero point fit in int16), a panel of B (MatMul's B, the
   convolution's im2col columns, stored in pairs of rows) per work item and four rows of A at a time:
   an AVX2 kernel (vpmaddwd, two k per instruction) chosen at run time (opara__cpu_isa_level), a
   portable C one elsewhere. Work items are (batch or image and group, block of output columns), so
   the items split across workers and write disjoint outputs. */
#include "opara_cpu.h"

#include <math.h>
#include <string.h>

#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
#  define OPARA__QUANT_X86 1
#  include <immintrin.h>
#else
#  define OPARA__QUANT_X86 0
#endif

#define OPARA__QNB 128 /* output columns per work item of the integer GEMM */
#define OPARA__QMR 4   /* rows of A per step */
/* Products per output at most: each |(a - za)(b - zb)| <= 255 * 255, so 33025 of them cannot
   overflow the int32 accumulator. */
#define OPARA__QK_MAX 33025

/* ---- scalars ---------------------------------------------------------------------------------- */

/* Element k of a u8/i8/i32 tensor as an int32 (zero points; a missing one is 0). */
static int32_t opara__q_int_at(const opara__cpu_tensor* t, size_t k) {
    if (!t || !t->data) return 0;
    switch (t->dtype) {
    case OPARA_DTYPE_U8: return ((const uint8_t*)t->data)[k];
    case OPARA_DTYPE_I8: return ((const int8_t*)t->data)[k];
    case OPARA_DTYPE_I32: return ((const int32_t*)t->data)[k];
    case OPARA_DTYPE_UNDEFINED: case OPARA_DTYPE_F32: case OPARA_DTYPE_I64: case OPARA_DTYPE_BOOL: case OPARA_DTYPE_F16:
    case OPARA_DTYPE_F64: case OPARA_DTYPE_FORCE_U32: break;
    }
    return 0;
}

/* Input k when present (else NULL). */
static const opara__cpu_tensor* opara__q_input(const opara__cpu_op* op, uint32_t k) {
    return k < op->n_in && op->in[k].data ? &op->in[k] : NULL;
}

/* Index of a per-tensor (one value) or per-channel operand for channel c. */
static size_t opara__q_pick(const opara__cpu_tensor* t, size_t c) {
    return t && opara__cpu_numel(t) > 1 ? c : 0;
}

/* The range of a u8 or i8 output. */
static void opara__q_range(opara_dtype t, float* lo, float* hi) {
    *lo = t == OPARA_DTYPE_I8 ? -128.0f : 0.0f;
    *hi = t == OPARA_DTYPE_I8 ? 127.0f : 255.0f;
}

/* round-half-even(v) + zp saturated to [lo, hi], NaN to zp: in float, so that no conversion is out of range. */
static float opara__q_round(float v, float zp, float lo, float hi) {
    float r = v != v ? zp : nearbyintf(v) + zp;
    return r < lo ? lo : r > hi ? hi : r;
}

/* ---- QuantizeLinear, DequantizeLinear ------------------------------------------------------------ */

/* p->outer x p->mid (the axis; 1 per tensor) x p->inner elements; work items are chunks of
   OPARA__CHUNK elements, cut into runs of one channel. */
static void opara__q_layout(const opara__cpu_op* op) {
    opara__cpu_params* p = (opara__cpu_params*)&op->p;
    const opara__cpu_tensor* x = &op->in[0];
    int64_t axis = 0;
    p->outer = 1, p->mid = 1, p->inner = (int64_t)opara__cpu_numel(x);
    if (op->params->u.quant.per_axis && opara__cpu_record_axis(op, x->ndim, &axis)) {
        p->outer = opara__cpu_dims_prod(x->dims, 0, (int32_t)axis);
        p->mid = x->dims[axis];
        p->inner = opara__cpu_dims_prod(x->dims, (int32_t)axis + 1, x->ndim);
    }
}

static void opara__quantize_run(const float* x, size_t n, float scale, float zp, float lo, float hi, void* y, size_t at,
                                int to_i8) {
    size_t i;
    if (to_i8) {
        int8_t* d = (int8_t*)y + at;
        for (i = 0; i < n; ++i) d[i] = (int8_t)opara__q_round(x[i] / scale, zp, lo, hi);
    } else {
        uint8_t* d = (uint8_t*)y + at;
        for (i = 0; i < n; ++i) d[i] = (uint8_t)opara__q_round(x[i] / scale, zp, lo, hi);
    }
}

static void opara__dequantize_run(const void* x, opara_dtype t, size_t at, size_t n, float scale, int32_t zp, float* y) {
    size_t i;
    if (t == OPARA_DTYPE_U8)
        for (i = 0; i < n; ++i) y[i] = (float)((int32_t)((const uint8_t*)x)[at + i] - zp) * scale;
    else if (t == OPARA_DTYPE_I8)
        for (i = 0; i < n; ++i) y[i] = (float)((int32_t)((const int8_t*)x)[at + i] - zp) * scale;
    else
        for (i = 0; i < n; ++i) y[i] = (float)((int64_t)((const int32_t*)x)[at + i] - zp) * scale;
}

static opara_result opara__quant_linear_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    const opara__cpu_params* p = &op->p;
    const opara__cpu_tensor *scale = &op->in[1], *zp = opara__q_input(op, 2);
    size_t total = opara__cpu_numel(&op->out[0]), e = begin * OPARA__CHUNK, stop = OPARA__MIN(end * OPARA__CHUNK, total);
    int quantize = op->node->op == OPARA__OP_QUANTIZE_LINEAR;
    float lo, hi;
    (void)scratch;
    opara__q_range(op->out[0].dtype, &lo, &hi);
    while (e < stop) {
        size_t row = e / (size_t)p->inner, c = row % (size_t)p->mid;
        size_t n = OPARA__MIN((row + 1) * (size_t)p->inner, stop) - e;
        float s = ((const float*)scale->data)[opara__q_pick(scale, c)];
        int32_t z = opara__q_int_at(zp, opara__q_pick(zp, c));
        if (quantize)
            opara__quantize_run((const float*)op->in[0].data + e, n, s, (float)z, lo, hi, op->out[0].data, e,
                                op->out[0].dtype == OPARA_DTYPE_I8);
        else opara__dequantize_run(op->in[0].data, op->in[0].dtype, e, n, s, z, (float*)op->out[0].data + e);
        e += n;
    }
    return OPARA_OK;
}

static opara_result opara__prepare_quant_linear(opara__cpu_op* op, char* err, size_t cap) {
    const char* name = opara__op_name(op->node->op);
    opara_dtype want = op->node->op == OPARA__OP_QUANTIZE_LINEAR ? op->out[0].dtype : op->in[0].dtype;
    const opara__cpu_tensor* zp = opara__q_input(op, 2);
    if (!op->params || !op->params->resolved)
        return opara__cpu_reject(err, cap, OPARA_ERR_INVALID_ARGS, "%s: the node's record is not resolved", name);
    if (op->in[1].dtype != OPARA_DTYPE_F32 || (zp && zp->dtype != want) || !opara__cpu_same_dims(&op->in[0], &op->out[0]))
        return opara__cpu_reject(err, cap, OPARA_ERR_BAD_DTYPE, "%s: scale f32, zero point of the integer type", name);
    opara__q_layout(op);
    if (opara__cpu_numel(&op->in[1]) != (size_t)(op->params->u.quant.per_axis ? op->p.mid : 1) ||
        (zp && opara__cpu_numel(zp) != opara__cpu_numel(&op->in[1])))
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "%s: scale and zero point sizes", name);
    op->work_items = (opara__cpu_numel(&op->out[0]) + OPARA__CHUNK - 1) / OPARA__CHUNK;
    op->fn = opara__quant_linear_kernel;
    return OPARA_OK;
}

OPARA__PRIVATE opara_result opara__cpu_prepare_quantize(opara__cpu_op* op, char* err, size_t cap) {
    if (op->in[0].dtype != OPARA_DTYPE_F32 || (op->out[0].dtype != OPARA_DTYPE_U8 && op->out[0].dtype != OPARA_DTYPE_I8))
        return opara__cpu_reject(err, cap, OPARA_ERR_BAD_DTYPE, "QuantizeLinear: f32 to u8 or i8 only");
    return opara__prepare_quant_linear(op, err, cap);
}

OPARA__PRIVATE opara_result opara__cpu_prepare_dequantize(opara__cpu_op* op, char* err, size_t cap) {
    opara_dtype t = op->in[0].dtype;
    if ((t != OPARA_DTYPE_U8 && t != OPARA_DTYPE_I8 && t != OPARA_DTYPE_I32) || op->out[0].dtype != OPARA_DTYPE_F32)
        return opara__cpu_reject(err, cap, OPARA_ERR_BAD_DTYPE, "DequantizeLinear: u8, i8 or i32 to f32 only");
    return opara__prepare_quant_linear(op, err, cap);
}

/* ---- DynamicQuantizeLinear ------------------------------------------------------------------------ */

/* ONNX's (and ONNX Runtime's) u8 parameters: the range of x widened to hold 0, scale = range / 255
   (1 for an all-zero range, as ONNX Runtime does), zero point = round(clamp(-min / scale)). NaNs take
   no part in the range. One work item: the range is global. */
static opara_result opara__dynamic_quantize_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    const float* x = (const float*)op->in[0].data;
    size_t n = opara__cpu_numel(&op->in[0]), i;
    float lo = 0.0f, hi = 0.0f, scale, zp;
    (void)scratch;
    if (begin >= end) return OPARA_OK;
    for (i = 0; i < n; ++i) {
        lo = x[i] < lo ? x[i] : lo;
        hi = x[i] > hi ? x[i] : hi;
    }
    scale = hi == lo ? 1.0f : (hi - lo) / 255.0f;
    zp = opara__q_round(0.0f - lo / scale, 0.0f, 0.0f, 255.0f);
    opara__quantize_run(x, n, scale, zp, 0.0f, 255.0f, op->out[0].data, 0, 0);
    if (op->n_out > 1 && op->out[1].data) *(float*)op->out[1].data = scale;
    if (op->n_out > 2 && op->out[2].data) *(uint8_t*)op->out[2].data = (uint8_t)zp;
    return OPARA_OK;
}

OPARA__PRIVATE opara_result opara__cpu_prepare_dynamic_quantize(opara__cpu_op* op, char* err, size_t cap) {
    if (op->in[0].dtype != OPARA_DTYPE_F32 || op->out[0].dtype != OPARA_DTYPE_U8 || op->n_out < 3 ||
        op->out[1].dtype != OPARA_DTYPE_F32 || op->out[2].dtype != OPARA_DTYPE_U8)
        return opara__cpu_reject(err, cap, OPARA_ERR_BAD_DTYPE, "DynamicQuantizeLinear: f32 to u8, f32 scale, u8 zero point");
    op->work_items = 1;
    op->fn = opara__dynamic_quantize_kernel;
    return OPARA_OK;
}

/* ---- the integer GEMM ------------------------------------------------------------------------------ */

/* The panel of B holds k rows in pairs: element (k, j) at ((k / 2) * nbp + j) * 2 + k % 2 (nbp: the
   columns rounded up to 16, the padding and an odd k's last pair zero), so that one 32-bit load of a
   row of A's pair (a[k], a[k + 1]) multiplies a pair of B rows at once (pmaddwd). */
static size_t opara__q_at(size_t k, size_t j, size_t nbp) { return ((k >> 1) * nbp + j) * 2 + (k & 1); }

/* c[r][j] (rows OPARA__QNB apart) = sum_k a[r][k] * b[k][j] for the OPARA__QMR rows of a (ka values
   each, k rounded up to even; zero rows where a block has fewer) and the nbp columns of the panel
   (kp pairs of rows). */
static void opara__igemm4_portable(const int16_t* a, size_t ka, const int16_t* b, size_t kp, size_t nbp, int32_t* c) {
    size_t r, p, j;
    for (r = 0; r < OPARA__QMR; ++r)
        for (j = 0; j < nbp; ++j) c[r * OPARA__QNB + j] = 0;
    for (p = 0; p < kp; ++p) {
        const int16_t* bp = b + p * nbp * 2;
        for (r = 0; r < OPARA__QMR; ++r) {
            int32_t a0 = a[r * ka + 2 * p], a1 = a[r * ka + 2 * p + 1];
            int32_t* cr = c + r * OPARA__QNB;
            for (j = 0; j < nbp; ++j) cr[j] += a0 * bp[2 * j] + a1 * bp[2 * j + 1];
        }
    }
}

#if OPARA__QUANT_X86
/* The same with AVX2: 16 columns by 4 rows in 8 accumulators, each step one pair of k (vpmaddwd:
   a[k] b[k][j] + a[k + 1] b[k + 1][j] in 32 bits, exact: each product is at most 255 * 255). */
__attribute__((target("avx2"))) static void opara__igemm4_avx2(const int16_t* a, size_t ka, const int16_t* b, size_t kp,
                                                               size_t nbp, int32_t* c) {
    size_t j, p;
    for (j = 0; j < nbp; j += 16) {
        __m256i c00 = _mm256_setzero_si256(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00, c30 = c00, c31 = c00;
        for (p = 0; p < kp; ++p) {
            const int16_t* bp = b + (p * nbp + j) * 2;
            __m256i b0 = _mm256_loadu_si256((const __m256i*)(const void*)bp);
            __m256i b1 = _mm256_loadu_si256((const __m256i*)(const void*)(bp + 16));
            int32_t pr[OPARA__QMR];
            __m256i av;
            memcpy(&pr[0], a + 2 * p, 4), memcpy(&pr[1], a + ka + 2 * p, 4);
            memcpy(&pr[2], a + 2 * ka + 2 * p, 4), memcpy(&pr[3], a + 3 * ka + 2 * p, 4);
            av = _mm256_set1_epi32(pr[0]);
            c00 = _mm256_add_epi32(c00, _mm256_madd_epi16(av, b0)), c01 = _mm256_add_epi32(c01, _mm256_madd_epi16(av, b1));
            av = _mm256_set1_epi32(pr[1]);
            c10 = _mm256_add_epi32(c10, _mm256_madd_epi16(av, b0)), c11 = _mm256_add_epi32(c11, _mm256_madd_epi16(av, b1));
            av = _mm256_set1_epi32(pr[2]);
            c20 = _mm256_add_epi32(c20, _mm256_madd_epi16(av, b0)), c21 = _mm256_add_epi32(c21, _mm256_madd_epi16(av, b1));
            av = _mm256_set1_epi32(pr[3]);
            c30 = _mm256_add_epi32(c30, _mm256_madd_epi16(av, b0)), c31 = _mm256_add_epi32(c31, _mm256_madd_epi16(av, b1));
        }
        _mm256_storeu_si256((__m256i*)(void*)(c + j), c00), _mm256_storeu_si256((__m256i*)(void*)(c + j + 8), c01);
        _mm256_storeu_si256((__m256i*)(void*)(c + OPARA__QNB + j), c10);
        _mm256_storeu_si256((__m256i*)(void*)(c + OPARA__QNB + j + 8), c11);
        _mm256_storeu_si256((__m256i*)(void*)(c + 2 * OPARA__QNB + j), c20);
        _mm256_storeu_si256((__m256i*)(void*)(c + 2 * OPARA__QNB + j + 8), c21);
        _mm256_storeu_si256((__m256i*)(void*)(c + 3 * OPARA__QNB + j), c30);
        _mm256_storeu_si256((__m256i*)(void*)(c + 3 * OPARA__QNB + j + 8), c31);
    }
}
#endif

static void opara__igemm4(int level, const int16_t* a, size_t ka, const int16_t* b, size_t kp, size_t nbp, int32_t* c) {
#if OPARA__QUANT_X86
    if (level >= 1) {
        opara__igemm4_avx2(a, ka, b, kp, nbp, c);
        return;
    }
#endif
    (void)level;
    opara__igemm4_portable(a, ka, b, kp, nbp, c);
}

/* dst[i] = src[i] - zp for n u8 or i8 elements. */
static void opara__q_widen(int16_t* dst, const void* src, int is_i8, size_t n, int32_t zp) {
    size_t i;
    if (is_i8)
        for (i = 0; i < n; ++i) dst[i] = (int16_t)(((const int8_t*)src)[i] - zp);
    else
        for (i = 0; i < n; ++i) dst[i] = (int16_t)(((const uint8_t*)src)[i] - zp);
}

/* What follows the product: int32 out (ConvInteger, MatMulInteger), or QLinear's requantization
   y = saturate(round((acc + bias) * a_scale * b_scale / y_scale) + y_zero_point). */
typedef struct opara__q_epilogue {
    int requant;
    const opara__cpu_tensor *a_scale, *b_scale, *y_scale, *y_zp, *bias;
    int a_per_row; /* the A operand's scale is per row (QLinearMatMul's a) or the GEMM's row is the
                      weight's output channel (QLinearConv) */
    float lo, hi;
} opara__q_epilogue;

/* Stores row `row` (its index for per-row operands) of a block: n values c[j] to columns col0.. of
   y (int32 or u8/i8 at element offset `at`). */
static void opara__q_store_row(const opara__q_epilogue* e, const int32_t* c, size_t row, size_t col0, size_t n, void* y,
                               opara_dtype yt, size_t at) {
    size_t j;
    float as, ys, zp;
    int32_t bias;
    if (!e->requant) {
        memcpy((int32_t*)y + at, c, n * sizeof *c);
        return;
    }
    as = ((const float*)e->a_scale->data)[opara__q_pick(e->a_scale, row)];
    ys = *(const float*)e->y_scale->data;
    zp = (float)opara__q_int_at(e->y_zp, 0);
    bias = e->bias ? ((const int32_t*)e->bias->data)[row] : 0;
    for (j = 0; j < n; ++j) {
        float bs = e->a_per_row ? ((const float*)e->b_scale->data)[opara__q_pick(e->b_scale, col0 + j)]
                                : ((const float*)e->b_scale->data)[opara__q_pick(e->b_scale, row)];
        float v = opara__q_round((float)((int64_t)c[j] + bias) * (as * bs / ys), zp, e->lo, e->hi);
        if (yt == OPARA_DTYPE_I8) ((int8_t*)y)[at + j] = (int8_t)v;
        else ((uint8_t*)y)[at + j] = (uint8_t)v;
    }
}

/* The rows [0, m) of A (u8/i8, row stride lda, zero point per row or one) times the packed panel b
   (k x nb), stored by the epilogue into y at y_at + row * ldy + column. */
typedef struct opara__q_rows {
    const void* a;
    int a_i8;
    size_t lda, m, k, ldy, y_at, col0;
    size_t row0; /* the first row's index among all rows (per-row operands) */
    const opara__cpu_tensor* a_zp;
} opara__q_rows;

static void opara__q_gemm_rows(const opara__q_rows* r, const int16_t* b, size_t nb, int16_t* abuf, int32_t* cbuf,
                               const opara__q_epilogue* e, void* y, opara_dtype yt) {
    int level = opara__cpu_isa_level();
    size_t kp = (r->k + 1) / 2, ka = 2 * kp, nbp = (nb + 15) & ~(size_t)15, i0, i;
    for (i0 = 0; i0 < r->m; i0 += OPARA__QMR) {
        size_t mr = OPARA__MIN((size_t)OPARA__QMR, r->m - i0);
        memset(abuf, 0, OPARA__QMR * ka * sizeof *abuf); /* missing rows, an odd k's last pair */
        for (i = 0; i < mr; ++i)
            opara__q_widen(abuf + i * ka, (const char*)r->a + (i0 + i) * r->lda, r->a_i8, r->k,
                           opara__q_int_at(r->a_zp, opara__q_pick(r->a_zp, r->row0 + i0 + i)));
        opara__igemm4(level, abuf, ka, b, kp, nbp, cbuf);
        for (i = 0; i < mr; ++i)
            opara__q_store_row(e, cbuf + i * OPARA__QNB, r->row0 + i0 + i, r->col0, nb, y, yt,
                               r->y_at + (i0 + i) * r->ldy + r->col0);
    }
}

/* A worker's scratch: the panel (k rounded up to even x OPARA__QNB int16), four rows of A (int16, k
   rounded up to even) and the accumulators (four rows of OPARA__QNB int32), each part at a multiple
   of 16 floats. */
typedef struct opara__q_scratch_parts {
    int16_t *panel, *abuf;
    int32_t* cbuf;
} opara__q_scratch_parts;

static size_t opara__q_round16(size_t floats) { return (floats + 15) / 16 * 16; }

/* Floats of scratch for k; with parts, where each part starts in scratch. */
static size_t opara__q_scratch(size_t k, float* scratch, opara__q_scratch_parts* parts) {
    size_t pairs = (k + 1) / 2, panel = opara__q_round16(pairs * OPARA__QNB), abuf = opara__q_round16(OPARA__QMR * pairs);
    size_t cbuf = OPARA__QMR * OPARA__QNB;
    if (parts) {
        parts->panel = (int16_t*)(void*)scratch;
        parts->abuf = (int16_t*)(void*)(scratch + panel);
        parts->cbuf = (int32_t*)(void*)(scratch + panel + abuf);
    }
    return panel + abuf + cbuf;
}

static void opara__q_epilogue_init(const opara__cpu_op* op, opara__q_epilogue* e) {
    int conv = op->node->op == OPARA__OP_QLINEAR_CONV;
    memset(e, 0, sizeof *e);
    e->requant = conv || op->node->op == OPARA__OP_QLINEAR_MATMUL;
    if (!e->requant) return;
    e->a_scale = conv ? &op->in[4] : &op->in[1]; /* QLinearConv: the GEMM's A is the weight */
    e->b_scale = conv ? &op->in[1] : &op->in[4];
    e->y_scale = &op->in[6];
    e->y_zp = &op->in[7];
    e->bias = conv ? opara__q_input(op, 8) : NULL;
    e->a_per_row = !conv;
    opara__q_range(op->out[0].dtype, &e->lo, &e->hi);
}

/* ---- MatMulInteger, QLinearMatMul ------------------------------------------------------------------- */

/* Work item = (batch index, block of OPARA__QNB columns). */
static opara_result opara__quant_matmul_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    const opara__cpu_params* p = &op->p;
    int q = op->node->op == OPARA__OP_QLINEAR_MATMUL;
    const opara__cpu_tensor *a = &op->in[0], *b = &op->in[q ? 3 : 1];
    const opara__cpu_tensor *a_zp = opara__q_input(op, 2), *b_zp = opara__q_input(op, q ? 5 : 3);
    size_t k = (size_t)p->k, n = (size_t)p->n, item;
    opara__q_scratch_parts sp;
    opara__q_epilogue e;
    opara__q_scratch(k, scratch, &sp);
    opara__q_epilogue_init(op, &e);
    for (item = begin; item < end; ++item) {
        size_t batch = item / (size_t)p->n_blocks, j0 = (item % (size_t)p->n_blocks) * OPARA__QNB, kk, j, nbp;
        size_t nb = OPARA__MIN((size_t)OPARA__QNB, n - j0);
        int64_t aoff, boff;
        opara__q_rows r;
        opara__cpu_matmul_batch_offsets(p, batch, &aoff, &boff);
        nbp = (nb + 15) & ~(size_t)15;
        memset(sp.panel, 0, (k + 1) / 2 * 2 * nbp * sizeof *sp.panel);
        for (kk = 0; kk < k; ++kk) { /* B's rows k, columns j0.., each minus its column's zero point */
            const char* src = (const char*)b->data + (size_t)boff + kk * n + j0;
            for (j = 0; j < nb; ++j) {
                int32_t v = b->dtype == OPARA_DTYPE_I8 ? (int32_t)(int8_t)src[j] : (int32_t)(uint8_t)src[j];
                sp.panel[opara__q_at(kk, j, nbp)] = (int16_t)(v - opara__q_int_at(b_zp, opara__q_pick(b_zp, j0 + j)));
            }
        }
        r.a = (const char*)a->data + aoff;
        r.a_i8 = a->dtype == OPARA_DTYPE_I8;
        r.lda = k, r.m = (size_t)p->m, r.k = k, r.ldy = n, r.y_at = batch * (size_t)p->m * n, r.col0 = j0, r.row0 = 0;
        r.a_zp = a_zp;
        opara__q_gemm_rows(&r, sp.panel, nb, sp.abuf, sp.cbuf, &e, op->out[0].data, op->out[0].dtype);
    }
    return OPARA_OK;
}

/* The operand sizes the shape engine accepted, checked again against the kernel's indexing: k's
   values are one or `per` (a channel, row or column count). */
static int opara__q_sized(const opara__cpu_op* op, uint32_t k, size_t per) {
    const opara__cpu_tensor* t = opara__q_input(op, k);
    return !t || opara__cpu_numel(t) == 1 || opara__cpu_numel(t) == per;
}

OPARA__PRIVATE opara_result opara__cpu_prepare_quant_matmul(opara__cpu_op* op, char* err, size_t cap) {
    opara__cpu_params* p = &op->p;
    int q = op->node->op == OPARA__OP_QLINEAR_MATMUL;
    const char* name = opara__op_name(op->node->op);
    int64_t batch = 1;
    opara_result r = opara__cpu_matmul_geometry(op, &op->in[0], &op->in[q ? 3 : 1], &batch, err, cap);
    if (r != OPARA_OK) return r;
    if (!opara__q_sized(op, 2, (size_t)p->m) || !opara__q_sized(op, q ? 5 : 3, (size_t)p->n) ||
        (q && (!opara__q_sized(op, 1, (size_t)p->m) || !opara__q_sized(op, 4, (size_t)p->n) ||
               opara__cpu_numel(&op->in[6]) != 1 || opara__cpu_numel(&op->in[7]) != 1)))
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "%s: scales and zero points are one value, per row of A or "
                                 "per column of B", name);
    if (p->k > OPARA__QK_MAX)
        return opara__cpu_reject(err, cap, OPARA_ERR_UNSUPPORTED, "%s: inner dimension %lld exceeds %d", name,
                                 (long long)p->k, OPARA__QK_MAX);
    p->n_blocks = (p->n + OPARA__QNB - 1) / OPARA__QNB;
    op->work_items = (size_t)(batch * p->n_blocks);
    op->scratch_floats = opara__q_scratch((size_t)p->k, NULL, NULL);
    op->fn = opara__quant_matmul_kernel;
    return OPARA_OK;
}

/* ---- ConvInteger, QLinearConv ------------------------------------------------------------------------ */

/* dst[2 t] = src[base + t * step] - zp for the t in [0, len) whose index lies in [0, w) (u8 or i8). */
static void opara__q_gather_run(int16_t* dst, const void* src, int is_i8, int64_t base, int64_t step, int64_t len,
                                int64_t w, int32_t zp) {
    int64_t lo = base >= 0 ? 0 : (-base + step - 1) / step, hi = base < w ? (w - base + step - 1) / step : 0, t;
    if (hi > len) hi = len;
    if (is_i8)
        for (t = lo; t < hi; ++t) dst[2 * t] = (int16_t)(((const int8_t*)src)[base + t * step] - zp);
    else
        for (t = lo; t < hi; ++t) dst[2 * t] = (int16_t)(((const uint8_t*)src)[base + t * step] - zp);
}

/* The im2col panel of columns [p0, p0 + nb) of one image and group: row (channel, kernel tap), the
   input minus its zero point, 0 in the padding (ONNX pads with the zero point); the columns in runs
   along an output row, so that a run reads the input at a fixed step. */
static void opara__q_im2col(const opara__cpu_params* p, const void* x, int is_i8, int32_t zp, size_t p0, size_t nb,
                            int16_t* panel) {
    int64_t k3 = p->kernel[0] * p->kernel[1] * p->kernel[2], cg = p->cin / p->group;
    int64_t plane = p->in_sp[0] * p->in_sp[1] * p->in_sp[2], ow = p->out_sp[2], oh = p->out_sp[1], row;
    size_t nbp = (nb + 15) & ~(size_t)15;
    memset(panel, 0, (size_t)((cg * k3 + 1) / 2 * 2) * nbp * sizeof *panel); /* padding columns, an odd k's pair */
    for (row = 0; row < cg * k3; ++row) {
        int64_t c = row / k3, t = row % k3, ka = t / (p->kernel[1] * p->kernel[2]);
        int64_t kb = (t / p->kernel[2]) % p->kernel[1], kc = t % p->kernel[2], j = 0, q = (int64_t)p0;
        int16_t* dst = panel + opara__q_at((size_t)row, 0, nbp); /* column j at dst[2 * j] */
        while (j < (int64_t)nb) {
            int64_t ox = q % ow, oy = (q / ow) % oh, oz = q / (ow * oh), len = OPARA__MIN(ow - ox, (int64_t)nb - j);
            int64_t iz = oz * p->stride[0] - p->pad_b[0] + ka * p->dil[0];
            int64_t iy = oy * p->stride[1] - p->pad_b[1] + kb * p->dil[1];
            if (iz >= 0 && iz < p->in_sp[0] && iy >= 0 && iy < p->in_sp[1])
                opara__q_gather_run(dst + 2 * j, (const char*)x + (c * plane + (iz * p->in_sp[1] + iy) * p->in_sp[2]),
                                    is_i8, ox * p->stride[2] - p->pad_b[2] + kc * p->dil[2], p->stride[2], len, p->in_sp[2], zp);
            j += len, q += len;
        }
    }
}

/* Work item = (image, group, block of OPARA__QNB output positions): the group's output channels
   (the weight's rows) times the block's im2col panel. */
static opara_result opara__quant_conv_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    const opara__cpu_params* p = &op->p;
    int q = op->node->op == OPARA__OP_QLINEAR_CONV;
    const opara__cpu_tensor *x = &op->in[0], *w = &op->in[q ? 3 : 1];
    const opara__cpu_tensor *x_zp = opara__q_input(op, 2), *w_zp = opara__q_input(op, q ? 5 : 3);
    int64_t cg = p->cin / p->group, mg = p->cout / p->group, P = p->out_sp[0] * p->out_sp[1] * p->out_sp[2];
    int64_t plane = p->in_sp[0] * p->in_sp[1] * p->in_sp[2];
    size_t k = (size_t)p->k, item;
    opara__q_scratch_parts sp;
    opara__q_epilogue e;
    opara__q_scratch(k, scratch, &sp);
    opara__q_epilogue_init(op, &e);
    for (item = begin; item < end; ++item) {
        size_t blk = item % (size_t)p->n_col_blocks, ig = item / (size_t)p->n_col_blocks;
        size_t img = ig / (size_t)p->group, g = ig % (size_t)p->group, p0 = blk * OPARA__QNB;
        size_t nb = OPARA__MIN((size_t)OPARA__QNB, (size_t)P - p0);
        opara__q_rows r;
        opara__q_im2col(p, (const char*)x->data + ((int64_t)img * p->cin + (int64_t)g * cg) * plane,
                        x->dtype == OPARA_DTYPE_I8, opara__q_int_at(x_zp, 0), p0, nb, sp.panel);
        r.a = (const char*)w->data + g * (size_t)mg * k;
        r.a_i8 = w->dtype == OPARA_DTYPE_I8;
        r.lda = k, r.m = (size_t)mg, r.k = k, r.ldy = (size_t)P, r.col0 = p0, r.row0 = g * (size_t)mg;
        r.y_at = (img * (size_t)p->cout + g * (size_t)mg) * (size_t)P;
        r.a_zp = w_zp;
        opara__q_gemm_rows(&r, sp.panel, nb, sp.abuf, sp.cbuf, &e, op->out[0].data, op->out[0].dtype);
    }
    return OPARA_OK;
}

OPARA__PRIVATE opara_result opara__cpu_prepare_quant_conv(opara__cpu_op* op, char* err, size_t cap) {
    opara__cpu_params* p = &op->p;
    int q = op->node->op == OPARA__OP_QLINEAR_CONV;
    const opara__cpu_tensor *x = &op->in[0], *w = &op->in[q ? 3 : 1], *y = &op->out[0];
    const char* name = opara__op_name(op->node->op);
    int64_t P;
    opara_result r;
    if (x->ndim < 3 || w->ndim != x->ndim || y->ndim != x->ndim)
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "%s: X, W and Y need the same rank >= 3", name);
    r = opara__conv_geometry(op, x, w->dims + 2, err, cap);
    if (r != OPARA_OK) return r;
    p->group = op->params->u.window.group;
    p->batch = x->dims[0], p->cin = x->dims[1], p->cout = w->dims[0];
    if (p->group < 1 || p->cin % p->group || p->cout % p->group || w->dims[1] != p->cin / p->group ||
        y->dims[0] != p->batch || y->dims[1] != p->cout)
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "%s: channels/groups of X, W, Y disagree", name);
    r = opara__conv_check_out(op, y, 0, err, cap);
    if (r != OPARA_OK) return r;
    if (!opara__q_sized(op, 2, 1) || !opara__q_sized(op, q ? 5 : 3, (size_t)p->cout) ||
        (q && (!opara__q_sized(op, 1, 1) || !opara__q_sized(op, 4, (size_t)p->cout) || opara__cpu_numel(&op->in[6]) != 1 ||
               opara__cpu_numel(&op->in[7]) != 1 || (opara__q_input(op, 8) && opara__cpu_numel(&op->in[8]) != (size_t)p->cout))))
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "%s: the input's scale and zero point are one value, the "
                                 "weight's one or one per output channel, the bias one per output channel", name);
    p->k = (p->cin / p->group) * p->kernel[0] * p->kernel[1] * p->kernel[2];
    if (p->k > OPARA__QK_MAX)
        return opara__cpu_reject(err, cap, OPARA_ERR_UNSUPPORTED, "%s: %lld products per output exceed %d", name,
                                 (long long)p->k, OPARA__QK_MAX);
    P = p->out_sp[0] * p->out_sp[1] * p->out_sp[2];
    p->n_col_blocks = (P + OPARA__QNB - 1) / OPARA__QNB;
    op->work_items = (size_t)(p->batch * p->group * p->n_col_blocks);
    op->scratch_floats = opara__q_scratch((size_t)p->k, NULL, NULL);
    op->fn = opara__quant_conv_kernel;
    return OPARA_OK;
}
