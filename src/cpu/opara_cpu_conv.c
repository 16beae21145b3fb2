/* Conv (depthwise direct, 1x1 as a direct GEMM, else im2col + SGEMM), ConvTranspose (GEMM +
   col2im) and MaxPool/AveragePool. Spatial dims (1 to 3) are normalized to 3 with leading dims
   of size 1, so one code path serves 1-D, 2-D and 3-D. */
#include "opara_cpu.h"

#include <math.h>

#define OPARA__IM2COL_BUDGET ((size_t)1 << 19) /* floats of col2im scratch per worker (2 MB) */
/* Conv lowers to GEMMs over K slices of the im2col matrix: up to 2048 rows (one slice for every
   3x3 convolution of up to 227 input channels, so its im2col can serve several channel blocks) by
   512 KB worth of columns, at least 256. */
#define OPARA__CONV_K_SLICE 2048
#define OPARA__CONV_SLICE_FLOATS ((int64_t)1 << 17)
#define OPARA__CONV_MIN_ITEMS 4 /* work items per image when the worker count is not known */

/* ---- geometry ---------------------------------------------------------------------------------- */

typedef enum opara__geom_kind { OPARA__GEOM_CONV, OPARA__GEOM_POOL, OPARA__GEOM_CONV_T } opara__geom_kind;

/* The window the shape engine resolved (kernel, strides, dilations, pads after auto_pad), normalized
   to 3 dims into p, for an input with spatial dims x->dims[2..]; `kernel` (the weights') must agree. */
OPARA__PRIVATE opara_result opara__conv_geometry(opara__cpu_op* op, const opara__cpu_tensor* x, const int64_t* kernel,
                                                char* err, size_t cap) {
    opara__cpu_params* p = &op->p;
    const opara__window_params* w = op->params && op->params->resolved ? &op->params->u.window : NULL;
    int32_t nsp = x->ndim - 2, off, i;
    const char* name = opara__op_name(op->node->op);
    if (nsp < 1 || nsp > 3) return opara__cpu_reject(err, cap, OPARA_ERR_UNSUPPORTED, "%s: %d spatial dims", name, (int)nsp);
    if (!w || w->n_spatial != nsp)
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "%s: no resolved window for %d spatial dims", name, (int)nsp);
    off = 3 - nsp;
    for (i = 0; i < 3; ++i) {
        int32_t j = i - off;
        p->in_sp[i] = j >= 0 ? x->dims[2 + j] : 1;
        p->kernel[i] = j >= 0 ? w->kernel[j] : 1;
        p->stride[i] = j >= 0 ? w->strides[j] : 1;
        p->dil[i] = j >= 0 ? w->dilations[j] : 1;
        p->pad_b[i] = j >= 0 ? w->pads[j] : 0;
        p->pad_e[i] = j >= 0 ? w->pads[j + nsp] : 0;
        if (kernel && j >= 0 && w->kernel[j] != kernel[j])
            return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "%s: the kernel disagrees with the weights", name);
        if (p->kernel[i] < 1 || p->stride[i] < 1 || p->dil[i] < 1 || p->pad_b[i] < 0 || p->pad_e[i] < 0)
            return opara__cpu_reject(err, cap, OPARA_ERR_INVALID_ARGS, "%s: kernel, strides, dilations must be >= 1, pads >= 0",
                                     name);
    }
    return OPARA_OK;
}

/* Output size of one dim for Conv/pools from the resolved pads. */
static int64_t opara__conv_out_dim(const opara__cpu_params* p, int i, int ceil_mode) {
    int64_t eff = p->dil[i] * (p->kernel[i] - 1) + 1, span = p->in_sp[i] + p->pad_b[i] + p->pad_e[i] - eff;
    if (span < 0) return 0;
    return (ceil_mode ? (span + p->stride[i] - 1) / p->stride[i] : span / p->stride[i]) + 1;
}

/* Checks y's spatial dims; pools in ceil mode also accept one less (the window that would start
   in the end padding is dropped, as PyTorch and ONNX's reference do). */
OPARA__PRIVATE opara_result opara__conv_check_out(opara__cpu_op* op, const opara__cpu_tensor* y, int ceil_mode, char* err,
                                                 size_t cap) {
    opara__cpu_params* p = &op->p;
    int32_t nsp = y->ndim - 2, off = 3 - nsp, i;
    for (i = 0; i < 3; ++i) {
        int64_t want = opara__conv_out_dim(p, i, ceil_mode);
        int64_t got = i >= off ? y->dims[2 + i - off] : 1;
        if (got != want && !(ceil_mode && got == want - 1 && got >= 1))
            return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "%s: output spatial dim %d is %lld, expected %lld",
                                     opara__op_name(op->node->op), (int)(i - off), (long long)got, (long long)want);
        p->out_sp[i] = got;
    }
    return OPARA_OK;
}

static int64_t opara__prod3(const int64_t* v) { return v[0] * v[1] * v[2]; }

/* ---- Conv ------------------------------------------------------------------------------------- */

/* First t in [0, len) with 0 <= base + t*s, and one past the last with base + t*s < limit. */
static void opara__valid_range(int64_t base, int64_t s, int64_t len, int64_t limit, int64_t* lo, int64_t* hi) {
    int64_t a = base >= 0 ? 0 : (-base + s - 1) / s;
    int64_t b = base >= limit ? 0 : (limit - 1 - base) / s + 1;
    if (b > len) b = len;
    if (a > b) a = b;
    *lo = a;
    *hi = b;
}

/* First and one-past-last output index o in [0, out) whose window [o*s - pad, o*s - pad + span)
   lies inside [0, in): the interior, where no tap needs clipping. */
static void opara__pool_interior(int64_t out, int64_t s, int64_t pad, int64_t span, int64_t in, int64_t* lo,
                                 int64_t* hi) {
    int64_t a = (pad + s - 1) / s, b = in - span + pad >= 0 ? (in - span + pad) / s + 1 : 0;
    if (b > out) b = out;
    if (a > b) a = b;
    *lo = a;
    *hi = b;
}

/* Copies len input elements starting at row[base] with stride s into dst, zero where the index
   falls outside [0, limit). */
static void opara__im2col_run(int level, const float* row, int64_t base, int64_t s, int64_t len, int64_t limit,
                              float* dst) {
    int64_t lo, hi, t;
    if (s == 1) {
        lo = base >= 0 ? 0 : -base;
        hi = limit - base;
        if (hi > len) hi = len;
        if (lo > hi) lo = hi < 0 ? 0 : hi;
        if (hi < lo) hi = lo;
    } else {
        opara__valid_range(base, s, len, limit, &lo, &hi);
    }
    for (t = 0; t < lo; ++t) dst[t] = 0.0f;
    if (s == 1)
        opara__vec_copy(level, dst + lo, row + base + lo, (size_t)(hi - lo));
    else if (s == 2 && hi > lo)
        opara__vec_copy_even(dst + lo, row + base + 2 * lo, (size_t)(hi - lo));
    else
        for (t = lo; t < hi; ++t) dst[t] = row[base + t * s];
    for (t = hi; t < len; ++t) dst[t] = 0.0f;
}

/* Writes im2col rows [r0, r1) for output columns [p0, p1) of image x into col (row stride
   p1 - p0). */
static void opara__im2col(int level, const opara__cpu_params* p, const float* x, int64_t r0, int64_t r1, int64_t p0,
                          int64_t p1, float* col) {
    int64_t K3 = opara__prod3(p->kernel), ohw = p->out_sp[1] * p->out_sp[2], ow = p->out_sp[2], oh = p->out_sp[1];
    int64_t ihw = p->in_sp[1] * p->in_sp[2], cb = p1 - p0, r;
    int64_t z0 = p0 / ohw, y0 = (p0 % ohw) / ow, x0 = p0 % ow;
    for (r = r0; r < r1; ++r) {
        int64_t c = r / K3, kk = r % K3, ka = kk / (p->kernel[1] * p->kernel[2]);
        int64_t kb = (kk / p->kernel[2]) % p->kernel[1], kc = kk % p->kernel[2], pp = p0;
        int64_t z = z0, yy = y0, xx = x0;
        const float* xc = x + c * p->in_sp[0] * ihw;
        float* dst = col + (r - r0) * cb;
        while (pp < p1) {
            int64_t len = OPARA__MIN(ow - xx, p1 - pp), t;
            int64_t iz = z * p->stride[0] - p->pad_b[0] + ka * p->dil[0];
            int64_t iy = yy * p->stride[1] - p->pad_b[1] + kb * p->dil[1];
            int64_t base = xx * p->stride[2] - p->pad_b[2] + kc * p->dil[2];
            if (iz >= 0 && iz < p->in_sp[0] && iy >= 0 && iy < p->in_sp[1])
                opara__im2col_run(level, xc + (iz * p->in_sp[1] + iy) * p->in_sp[2], base, p->stride[2], len,
                                  p->in_sp[2], dst);
            else
                for (t = 0; t < len; ++t) dst[t] = 0.0f;
            dst += len;
            pp += len;
            xx = 0;
            if (++yy == oh) {
                yy = 0;
                ++z;
            }
        }
    }
}

/* Each row i of y starts as bias[i] (0 without a bias). */
static void opara__bias_rows(float* y, size_t rows, size_t cols, size_t ld, const float* bias) {
    size_t i;
    for (i = 0; i < rows; ++i) opara__vec_fill(y + i * ld, cols, bias ? bias[i] : 0.0f);
}

/* Work item = (image and group, block of output columns, block of output channels), channel
   blocks innermost: consecutive items of one call share the im2col of their columns when K is one
   slice. The output block takes one GEMM per K slice (pointwise: one GEMM straight from the
   input), the last one adding the bias and applying the ReLU as it stores. */
static opara_result opara__conv_gemm_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    const opara__cpu_params* p = &op->p;
    int64_t cin_g = p->cin / p->group, cout_g = p->cout / p->group, K = cin_g * opara__prod3(p->kernel);
    int64_t P = opara__prod3(p->out_sp), Pin = opara__prod3(p->in_sp), col_of = -1;
    const float* bias = op->n_in > 2 ? (const float*)op->in[2].data : NULL;
    float* col = scratch;
    float* gemm_scratch = scratch + (p->pointwise ? 0 : (size_t)(p->k * p->col_block));
    opara__gemm_epilogue epi; /* bias and ReLU as the last K slice's outputs are stored */
    int level = opara__cpu_isa_level();
    size_t item;
    epi.col_bias = NULL;
    epi.relu = p->relu;
    for (item = begin; item < end; ++item) {
        int64_t mblk = (int64_t)item % p->m_blocks, rest = (int64_t)item / p->m_blocks;
        int64_t blk = rest % p->n_col_blocks, ng = rest / p->n_col_blocks, n = ng / p->group, g = ng % p->group;
        int64_t p0 = blk * p->col_block, p1 = OPARA__MIN(P, p0 + p->col_block);
        int64_t m0 = mblk * p->m, mm = OPARA__MIN(p->m, cout_g - m0), pc;
        const float* x = (const float*)op->in[0].data + (n * p->cin + g * cin_g) * Pin;
        const float* w = (const float*)op->in[1].data + (g * cout_g + m0) * K;
        float* y = (float*)op->out[0].data + (n * p->cout + g * cout_g + m0) * P + p0;
        size_t nb = (size_t)(p1 - p0);
        if (mm <= 0) continue;
        epi.row_bias = bias ? bias + g * cout_g + m0 : NULL;
        if (p->pointwise) {
            opara__sgemm_ex(op->blas, 0, 0, (size_t)mm, nb, (size_t)K, 1.0f, w, (size_t)K, x + p0, (size_t)P, 0.0f, y,
                            (size_t)P, gemm_scratch, &epi, NULL);
        } else {
            for (pc = 0; pc < K; pc += p->k) {
                int64_t kc = OPARA__MIN(p->k, K - pc);
                if (kc < K || col_of != rest) opara__im2col(level, p, x, pc, pc + kc, p0, p1, col);
                col_of = kc < K ? -1 : rest;
                opara__sgemm_ex(op->blas, 0, 0, (size_t)mm, nb, (size_t)kc, 1.0f, w + pc, (size_t)K, col, nb,
                                pc > 0 ? 1.0f : 0.0f, y, (size_t)P, gemm_scratch, pc + kc == K ? &epi : NULL, NULL);
            }
        }
    }
    return OPARA_OK;
}

/* yr += one kernel row wk applied along input row xr: clipped edges per element, the interior
   with every tap at once. */
static void opara__depthwise_row(const opara__cpu_params* p, const float* xr, const float* wk, float* yr) {
    int64_t ow = p->out_sp[2], sw = p->stride[2], pw = p->pad_b[2], dw = p->dil[2], W = p->in_sp[2], KW = p->kernel[2];
    int64_t lo, hi, t, kc;
    opara__pool_interior(ow, sw, pw, (KW - 1) * dw + 1, W, &lo, &hi);
    for (t = 0; t < ow; ++t) {
        if (t == lo && hi > lo) t = hi;
        if (t >= ow) break;
        for (kc = 0; kc < KW; ++kc) {
            int64_t ix = t * sw - pw + kc * dw;
            if (ix >= 0 && ix < W) yr[t] += wk[kc] * xr[ix];
        }
    }
    if (hi > lo) opara__vec_taps(yr + lo, xr + lo * sw - pw, (size_t)sw, (size_t)(hi - lo), wk, (size_t)KW, (size_t)dw);
}

/* Stride 1 on both axes: output (oy, ox) reads plane[(oy + kb * dh) * Wp + ox + kc * dw], so over
   the whole plane flattened every kernel row is one long pass (rows of 7 to 28 outputs are too
   short for the vector units); acc holds (oh - 1) * Wp + ow outputs at row pitch Wp, whose
   columns from ow on are discarded. The last read is plane[Hp * Wp - 1]. */
static int opara__depthwise_flat(const opara__cpu_params* p) { return p->stride[1] == 1 && p->stride[2] == 1; }

static void opara__depthwise_plane_flat(const opara__cpu_params* p, const float* plane, const float* w, float b,
                                        float* acc, float* y) {
    int64_t Wp = p->in_sp[2] + p->pad_b[2] + p->pad_e[2], oh = p->out_sp[1], ow = p->out_sp[2], kb, oy;
    size_t n;
    if (oh <= 0 || ow <= 0) return;
    n = (size_t)((oh - 1) * Wp + ow);
    opara__vec_fill(acc, n, b);
    for (kb = 0; kb < p->kernel[1]; ++kb)
        opara__vec_taps(acc, plane + kb * p->dil[1] * Wp, 1, n, w + kb * p->kernel[2], (size_t)p->kernel[2],
                        (size_t)p->dil[2]);
    for (oy = 0; oy < oh; ++oy) {
        if (p->relu) opara__vec_relu(y + oy * ow, acc + oy * Wp, (size_t)ow);
        else memcpy(y + oy * ow, acc + oy * Wp, (size_t)ow * sizeof(float));
    }
}

/* Depthwise 2-D: each channel is copied into a zero-bordered plane in scratch, so every output
   row is one branch-free pass per kernel row. */
static opara_result opara__conv_depthwise2d_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    const opara__cpu_params* p = &op->p;
    int64_t H = p->in_sp[1], W = p->in_sp[2], Hp = H + p->pad_b[1] + p->pad_e[1], Wp = W + p->pad_b[2] + p->pad_e[2];
    int64_t oh = p->out_sp[1], ow = p->out_sp[2], KH = p->kernel[1], KW = p->kernel[2], r, oy, kb;
    const float* bias = op->n_in > 2 ? (const float*)op->in[2].data : NULL;
    size_t item;
    memset(scratch, 0, (size_t)(Hp * Wp) * sizeof(float));
    for (item = begin; item < end; ++item) {
        int64_t c = (int64_t)item % p->cout;
        const float* x = (const float*)op->in[0].data + (int64_t)item * H * W;
        const float* w = (const float*)op->in[1].data + c * KH * KW;
        float* y = (float*)op->out[0].data + (int64_t)item * oh * ow;
        for (r = 0; r < H; ++r) /* the border stays zero from the memset above */
            memcpy(scratch + (r + p->pad_b[1]) * Wp + p->pad_b[2], x + r * W, (size_t)W * sizeof(float));
        if (opara__depthwise_flat(p)) {
            opara__depthwise_plane_flat(p, scratch, w, bias ? bias[c] : 0.0f, scratch + Hp * Wp, y);
            continue;
        }
        for (oy = 0; oy < oh; ++oy) {
            float* yr = y + oy * ow;
            opara__vec_fill(yr, (size_t)ow, bias ? bias[c] : 0.0f);
            for (kb = 0; kb < KH; ++kb)
                opara__vec_taps(yr, scratch + (oy * p->stride[1] + kb * p->dil[1]) * Wp, (size_t)p->stride[2], (size_t)ow,
                                w + kb * KW, (size_t)KW, (size_t)p->dil[2]);
            if (p->relu) opara__vec_relu(yr, yr, (size_t)ow);
        }
    }
    return OPARA_OK;
}

/* Depthwise (one input and one output channel per group): direct accumulation per output row. */
static opara_result opara__conv_depthwise_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    const opara__cpu_params* p = &op->p;
    int64_t K3 = opara__prod3(p->kernel), P = opara__prod3(p->out_sp), Pin = opara__prod3(p->in_sp);
    int64_t ow = p->out_sp[2];
    const float* bias = op->n_in > 2 ? (const float*)op->in[2].data : NULL;
    size_t item;
    (void)scratch;
    for (item = begin; item < end; ++item) {
        int64_t c = (int64_t)item % p->cout, z, yy, ka, kb;
        const float* x = (const float*)op->in[0].data + (int64_t)item * Pin;
        const float* w = (const float*)op->in[1].data + c * K3;
        float* y = (float*)op->out[0].data + (int64_t)item * P;
        for (z = 0; z < p->out_sp[0]; ++z)
            for (yy = 0; yy < p->out_sp[1]; ++yy) {
                float* yr = y + (z * p->out_sp[1] + yy) * ow;
                opara__vec_fill(yr, (size_t)ow, bias ? bias[c] : 0.0f);
                for (ka = 0; ka < p->kernel[0]; ++ka) {
                    int64_t iz = z * p->stride[0] - p->pad_b[0] + ka * p->dil[0];
                    if (iz < 0 || iz >= p->in_sp[0]) continue;
                    for (kb = 0; kb < p->kernel[1]; ++kb) {
                        int64_t iy = yy * p->stride[1] - p->pad_b[1] + kb * p->dil[1];
                        const float* xr;
                        if (iy < 0 || iy >= p->in_sp[1]) continue;
                        xr = x + (iz * p->in_sp[1] + iy) * p->in_sp[2];
                        opara__depthwise_row(p, xr, w + (ka * p->kernel[1] + kb) * p->kernel[2], yr);
                    }
                }
                if (p->relu) opara__vec_relu(yr, yr, (size_t)ow);
            }
    }
    return OPARA_OK;
}

/* K slice (p->k), column block and output-channel block (p->m): slices that fit L2, and one work
   item per worker for each image where the output allows (columns first, since channel blocks
   repeat the im2col; one worker gets one item: a split would only repeat it). */
static void opara__conv_pick_block(opara__cpu_params* p, int64_t K, int64_t P, uint32_t workers) {
    int64_t images = p->batch * p->group, cout_g = p->cout / p->group, cb, want_m;
    int64_t parts = workers ? (int64_t)workers : OPARA__CONV_MIN_ITEMS;
    p->k = p->pointwise ? (K > 0 ? K : 1) : OPARA__MIN(K > 0 ? K : 1, (int64_t)OPARA__CONV_K_SLICE);
    cb = p->pointwise ? 1024 : OPARA__CONV_SLICE_FLOATS / p->k / 16 * 16;
    if (cb < 256) cb = 256;
    if (images < parts && P >= 64 * parts) { /* a multiple of `parts` blocks of about equal size */
        int64_t blocks = ((P + cb - 1) / cb + parts - 1) / parts * parts;
        cb = ((P + blocks - 1) / blocks + 15) / 16 * 16;
    }
    if (cb > P) cb = P;
    p->col_block = cb > 0 ? cb : 1;
    p->n_col_blocks = P > 0 ? (P + p->col_block - 1) / p->col_block : 0;
    want_m = images * p->n_col_blocks >= parts ? 1 : parts / (images * p->n_col_blocks);
    if (want_m > cout_g / 16) want_m = cout_g / 16;
    if (want_m < 1) want_m = 1;
    p->m = ((cout_g + want_m - 1) / want_m + 7) / 8 * 8;
    if (p->m > cout_g) p->m = cout_g;
    if (p->m < 1) p->m = 1;
    p->m_blocks = (cout_g + p->m - 1) / p->m;
}

OPARA__PRIVATE opara_result opara__cpu_prepare_conv(opara__cpu_op* op, char* err, size_t cap) {
    opara__cpu_params* p = &op->p;
    const opara__cpu_tensor *x = &op->in[0], *w = &op->in[1], *y = &op->out[0];
    int64_t K, P;
    opara_result r;
    int32_t i;
    if (x->ndim < 3 || w->ndim != x->ndim || y->ndim != x->ndim || w->dtype != OPARA_DTYPE_F32)
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "Conv: X, W and Y need the same rank >= 3");
    r = opara__conv_geometry(op, x, w->dims + 2, err, cap);
    if (r != OPARA_OK) return r;
    p->group = op->params->u.window.group;
    p->batch = x->dims[0];
    p->cin = x->dims[1];
    p->cout = w->dims[0];
    if (p->group < 1 || p->cin % p->group || p->cout % p->group || w->dims[1] != p->cin / p->group ||
        y->dims[0] != p->batch || y->dims[1] != p->cout)
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "Conv: channels/groups of X, W, Y disagree");
    if (op->n_in > 2 && op->in[2].data && opara__cpu_numel(&op->in[2]) != (size_t)p->cout)
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "Conv: bias must have M elements");
    r = opara__conv_check_out(op, y, 0, err, cap);
    if (r != OPARA_OK) return r;
    p->relu = op->params->u.window.activation == OPARA__FUSED_RELU; /* another one is ignored, as before */
    K = (p->cin / p->group) * opara__prod3(p->kernel);
    P = opara__prod3(p->out_sp);
    p->depthwise = p->group == p->cin && p->group == p->cout;
    p->pointwise = opara__prod3(p->kernel) == 1;
    for (i = 0; i < 3; ++i)
        if (p->stride[i] != 1 || p->pad_b[i] != 0 || p->pad_e[i] != 0) p->pointwise = 0;
    op->min_items_per_task = 1;
    if (opara__winograd_prepare(op)) return OPARA_OK;
    if (p->depthwise) {
        op->work_items = (size_t)(p->batch * p->cout);
        op->fn = opara__conv_depthwise_kernel;
        if (p->in_sp[0] == 1 && p->kernel[0] == 1 && p->out_sp[0] == 1) { /* 2-D: through a padded copy */
            op->fn = opara__conv_depthwise2d_kernel;
            op->scratch_floats = (size_t)((p->in_sp[1] + p->pad_b[1] + p->pad_e[1]) * (p->in_sp[2] + p->pad_b[2] + p->pad_e[2]));
            if (opara__depthwise_flat(p)) /* plus the flat accumulator */
                op->scratch_floats += (size_t)(p->out_sp[1] * (p->in_sp[2] + p->pad_b[2] + p->pad_e[2]));
        }
        return OPARA_OK;
    }
    opara__conv_pick_block(p, K, P, op->workers);
    op->work_items = (size_t)(p->batch * p->group * p->m_blocks * p->n_col_blocks);
    op->scratch_floats = (p->pointwise ? 0 : (size_t)(p->k * p->col_block)) +
                         (op->blas && op->blas->sgemm ? 0 : OPARA__GEMM_SCRATCH);
    op->fn = opara__conv_gemm_kernel;
    return OPARA_OK;
}

/* ---- ConvTranspose ---------------------------------------------------------------------------- */

/* Adds columns [p0, p1) of col (rows: channels x K3, row stride p1 - p0) into y (`channels`
   planes): input positions in runs along their row, so a run's outputs are `stride` apart with no
   division per element. */
static void opara__col2im(const opara__cpu_params* p, const float* col, int64_t channels, int64_t p0, int64_t p1, float* y) {
    int64_t K3 = opara__prod3(p->kernel), ihw = p->in_sp[1] * p->in_sp[2], P = opara__prod3(p->out_sp);
    int64_t W = p->in_sp[2], sw = p->stride[2], cb = p1 - p0, r;
    for (r = 0; r < channels * K3; ++r) {
        int64_t m = r / K3, kk = r % K3, ka = kk / (p->kernel[1] * p->kernel[2]);
        int64_t kb = (kk / p->kernel[2]) % p->kernel[1], kc = kk % p->kernel[2];
        int64_t z = p0 / ihw, yy = (p0 % ihw) / W, xx = p0 % W, pp = p0;
        const float* src = col + r * cb;
        float* ym = y + m * P;
        while (pp < p1) {
            int64_t len = OPARA__MIN(W - xx, p1 - pp), lo, hi, t;
            int64_t oz = z * p->stride[0] - p->pad_b[0] + ka * p->dil[0];
            int64_t oy = yy * p->stride[1] - p->pad_b[1] + kb * p->dil[1];
            int64_t ox = xx * sw - p->pad_b[2] + kc * p->dil[2];
            if (oz >= 0 && oz < p->out_sp[0] && oy >= 0 && oy < p->out_sp[1]) {
                float* dst = ym + (oz * p->out_sp[1] + oy) * p->out_sp[2] + ox;
                opara__valid_range(ox, sw, len, p->out_sp[2], &lo, &hi);
                if (sw == 1) opara__vec_add_into(dst + lo, src + lo, 1, (size_t)(hi - lo));
                else
                    for (t = lo; t < hi; ++t) dst[t * sw] += src[t];
            }
            src += len;
            pp += len;
            xx = 0;
            if (++yy == p->in_sp[1]) yy = 0, ++z;
        }
    }
}

/* Work item = (image and group, block of p->m output channels): the GEMM of those channels' rows
   of W^T by the input, then their col2im; blocks write disjoint planes, so the items of one image
   run on several workers. */
static opara_result opara__conv_transpose_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    const opara__cpu_params* p = &op->p;
    int64_t cin_g = p->cin / p->group, cout_g = p->cout / p->group, K3 = opara__prod3(p->kernel);
    int64_t Pin = opara__prod3(p->in_sp), P = opara__prod3(p->out_sp), rows = cout_g * K3;
    const float* bias = op->n_in > 2 ? (const float*)op->in[2].data : NULL;
    float* gemm_scratch = scratch + (size_t)(p->m * K3 * p->col_block);
    size_t item;
    for (item = begin; item < end; ++item) {
        int64_t mblk = (int64_t)item % p->m_blocks, ng = (int64_t)item / p->m_blocks;
        int64_t n = ng / p->group, g = ng % p->group, m0 = mblk * p->m, mm = OPARA__MIN(p->m, cout_g - m0), p0;
        const float* x = (const float*)op->in[0].data + (n * p->cin + g * cin_g) * Pin;
        const float* w = (const float*)op->in[1].data + g * cin_g * rows + m0 * K3;
        float* y = (float*)op->out[0].data + (n * p->cout + g * cout_g + m0) * P;
        if (mm <= 0) continue;
        opara__bias_rows(y, (size_t)mm, (size_t)P, (size_t)P, bias ? bias + g * cout_g + m0 : NULL);
        for (p0 = 0; p0 < Pin; p0 += p->col_block) {
            int64_t p1 = OPARA__MIN(Pin, p0 + p->col_block);
            opara__sgemm(op->blas, 1, 0, (size_t)(mm * K3), (size_t)(p1 - p0), (size_t)cin_g, 1.0f, w, (size_t)rows,
                         x + p0, (size_t)Pin, 0.0f, scratch, (size_t)(p1 - p0), gemm_scratch);
            opara__col2im(p, scratch, mm, p0, p1, y);
        }
    }
    return OPARA_OK;
}

OPARA__PRIVATE opara_result opara__cpu_prepare_conv_transpose(opara__cpu_op* op, char* err, size_t cap) {
    opara__cpu_params* p = &op->p;
    const opara__cpu_tensor *x = &op->in[0], *w = &op->in[1], *y = &op->out[0];
    const opara__window_params* rp;
    int32_t nsp = x->ndim - 2, off, i;
    int64_t rows, cb;
    opara_result r;
    if (!x->data || !w->data || x->ndim < 3 || w->ndim != x->ndim || y->ndim != x->ndim || w->dtype != OPARA_DTYPE_F32)
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "ConvTranspose: X, W and Y need the same rank >= 3");
    r = opara__conv_geometry(op, x, w->dims + 2, err, cap); /* pads as resolved for output_shape / auto_pad */
    if (r != OPARA_OK) return r;
    rp = &op->params->u.window; /* resolved: opara__conv_geometry checked it */
    p->group = rp->group;
    p->batch = x->dims[0];
    p->cin = x->dims[1];
    if (p->group < 1 || w->dims[0] != p->cin || p->cin % p->group)
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "ConvTranspose: W must be [C, M/group, k...]");
    p->cout = w->dims[1] * p->group;
    if (y->dims[0] != p->batch || y->dims[1] != p->cout)
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "ConvTranspose: output channels");
    if (op->n_in > 2 && op->in[2].data && opara__cpu_numel(&op->in[2]) != (size_t)p->cout)
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "ConvTranspose: bias must have M elements");
    off = 3 - nsp;
    for (i = 0; i < 3; ++i) {
        int32_t j = i - off;
        int64_t op_ = j >= 0 ? rp->output_padding[j] : 0;
        int64_t full = p->stride[i] * (p->in_sp[i] - 1) + op_ + (p->kernel[i] - 1) * p->dil[i] + 1;
        int64_t want = full - p->pad_b[i] - p->pad_e[i];
        if (j >= 0 && rp->has_output_shape) want = rp->output_shape[j]; /* larger: the tail is bias only */
        p->out_sp[i] = j >= 0 ? y->dims[2 + j] : 1;
        if (p->out_sp[i] != want)
            return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "ConvTranspose: output dim %d is %lld, expected %lld",
                                     (int)j, (long long)p->out_sp[i], (long long)want);
    }
    { /* channel blocks: about two items per worker for each image and group */
        int64_t cout_g = p->cout / p->group, images = p->batch * p->group;
        int64_t parts = op->workers ? 2 * (int64_t)op->workers : OPARA__CONV_MIN_ITEMS, want;
        want = images >= parts ? 1 : (parts + images - 1) / images;
        if (want > cout_g) want = cout_g;
        p->m = cout_g > 0 ? (cout_g + want - 1) / want : 1;
        p->m_blocks = cout_g > 0 ? (cout_g + p->m - 1) / p->m : 0;
    }
    rows = p->m * opara__prod3(p->kernel);
    cb = (int64_t)(OPARA__IM2COL_BUDGET / (size_t)(rows > 0 ? rows : 1));
    if (cb < 16) cb = 16;
    if (cb > opara__prod3(p->in_sp)) cb = opara__prod3(p->in_sp);
    p->col_block = cb > 0 ? cb : 1;
    op->work_items = (size_t)(p->batch * p->group * p->m_blocks);
    op->scratch_floats = (size_t)(rows * p->col_block) + (op->blas && op->blas->sgemm ? 0 : OPARA__GEMM_SCRATCH);
    op->min_items_per_task = 1;
    op->fn = opara__conv_transpose_kernel;
    return OPARA_OK;
}

/* ---- MaxPool / AveragePool -------------------------------------------------------------------- */

/* Taps [lo, hi) of a window starting at s (dilation d, k taps) that fall inside [0, in). */
static void opara__pool_taps(int64_t s, int64_t d, int64_t k, int64_t in, int64_t* lo, int64_t* hi) {
    int64_t a = s >= 0 ? 0 : (-s + d - 1) / d;
    int64_t b = s >= in ? 0 : (in - 1 - s) / d + 1;
    *lo = a;
    *hi = b < k ? b : k;
    if (*lo > *hi) *lo = *hi;
}

/* Taps of the window inside the padded input [-pad_b, in + pad_e) (count_include_pad). */
static int64_t opara__pool_padded_taps(const opara__cpu_params* p, int d, int64_t s) {
    int64_t lo, hi;
    opara__pool_taps(s + p->pad_b[d], p->dil[d], p->kernel[d], p->in_sp[d] + p->pad_b[d] + p->pad_e[d], &lo, &hi);
    return hi - lo;
}

/* One output row of a 2-D pool over rows [a1, b1) of the window: the clipped edges one element
   at a time, the interior as vectorizable loops over the output columns. */
static void opara__pool2d_row(const opara__cpu_params* p, int is_max, const float* x, int64_t s1, int64_t a1, int64_t b1,
                              float* yr) {
    int64_t W = p->in_sp[2], OW = p->out_sp[2], sw = p->stride[2], pw = p->pad_b[2], kw = p->kernel[2];
    int64_t dw = p->dil[2], dh = p->dil[1], lo, hi, o, k1, k2;
    float vdiv = (float)(b1 - a1) * (float)kw;
    opara__pool_interior(OW, sw, pw, (kw - 1) * dw + 1, W, &lo, &hi);
    for (o = 0; o < OW; ++o) {
        int64_t s2, a2, b2, cnt;
        float acc = 0.0f;
        int first = 1;
        if (o == lo && hi > lo) o = hi;
        if (o >= OW) break;
        s2 = o * sw - pw;
        opara__pool_taps(s2, dw, kw, W, &a2, &b2);
        for (k1 = a1; k1 < b1; ++k1) {
            const float* xr = x + (s1 + k1 * dh) * W + s2;
            for (k2 = a2; k2 < b2; ++k2) {
                float v = xr[k2 * dw];
                if (is_max) acc = first ? v : opara__max_nan(acc, v);
                else acc += v;
                first = 0;
            }
        }
        cnt = p->count_include_pad ? opara__pool_padded_taps(p, 1, s1) * opara__pool_padded_taps(p, 2, s2)
                                   : (b1 - a1) * (b2 - a2);
        yr[o] = is_max ? acc : (cnt > 0 ? acc / (float)cnt : 0.0f);
    }
    if (hi <= lo) return;
    if (p->count_include_pad) vdiv = (float)opara__pool_padded_taps(p, 1, s1) * (float)kw;
    for (k1 = a1; k1 < b1; ++k1) {
        const float* xr = x + (s1 + k1 * dh) * W - pw;
        for (k2 = 0; k2 < kw; ++k2) {
            const float* xk = xr + k2 * dw;
            int init = k1 == a1 && k2 == 0;
            if (init && sw == 1) memcpy(yr + lo, xk + lo, (size_t)(hi - lo) * sizeof(float));
            else if (init)
                for (o = lo; o < hi; ++o) yr[o] = xk[o * sw];
            else if (is_max)
                opara__vec_max_into(yr + lo, xk + lo * sw, (size_t)sw, (size_t)(hi - lo));
            else
                opara__vec_add_into(yr + lo, xk + lo * sw, (size_t)sw, (size_t)(hi - lo));
        }
    }
    if (b1 <= a1)
        for (o = lo; o < hi; ++o) yr[o] = 0.0f;
    else if (!is_max)
        for (o = lo; o < hi; ++o) yr[o] /= vdiv;
}

/* Taps of a window starting at s along spatial dim d that the average divides by. */
static float opara__pool_count(const opara__cpu_params* p, int d, int64_t s) {
    int64_t lo, hi;
    if (p->count_include_pad) return (float)opara__pool_padded_taps(p, d, s);
    opara__pool_taps(s, 1, p->kernel[d], p->in_sp[d], &lo, &hi);
    return (float)(hi - lo);
}

/* Flat 2-D pooling (no dilation, every window holding at least one input element): the plane is
   copied into a padded plane whose borders hold the pooling's identity (-inf for max, 0 for the
   sums of an average), so every window is a plain kh x kw block and the two passes run flat over
   whole planes with the vector loops: v[i] = max/sum of the kh rows below i (every padded row at
   stride 1, the output rows' first rows otherwise), then the kw columns from each output's start,
   and averages divided by their window's taps. The borders are written once per call: a plane's
   copy only writes the interior. */
typedef struct opara__pool_flat {
    int64_t hp, wp; /* the padded plane: rows and row length */
} opara__pool_flat;

static opara__pool_flat opara__pool_flat_dims(const opara__cpu_params* p) {
    opara__pool_flat f;
    f.hp = OPARA__MAX(p->in_sp[1] + p->pad_b[1] + p->pad_e[1], (p->out_sp[1] - 1) * p->stride[1] + p->kernel[1]);
    f.wp = OPARA__MAX(p->in_sp[2] + p->pad_b[2] + p->pad_e[2], (p->out_sp[2] - 1) * p->stride[2] + p->kernel[2]);
    return f;
}

/* Whether every window along spatial dim d has a tap inside the input (else the general path
   gives those windows 0). */
static int opara__pool_windows_nonempty(const opara__cpu_params* p, int d) {
    int64_t o, lo, hi;
    for (o = 0; o < p->out_sp[d]; ++o) {
        opara__pool_taps(o * p->stride[d] - p->pad_b[d], 1, p->kernel[d], p->in_sp[d], &lo, &hi);
        if (hi <= lo) return 0;
    }
    return 1;
}

static int opara__pool_flat_ok(const opara__cpu_params* p) {
    return p->dil[1] == 1 && p->dil[2] == 1 && opara__pool_windows_nonempty(p, 1) && opara__pool_windows_nonempty(p, 2);
}

static size_t opara__pool_flat_scratch(const opara__cpu_params* p) {
    opara__pool_flat f = opara__pool_flat_dims(p);
    return (size_t)(f.hp * f.wp + 2 * p->out_sp[1] * f.wp + p->out_sp[1] * p->out_sp[2]);
}

static opara_result opara__pool2d_flat_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    const opara__cpu_params* p = &op->p;
    int is_max = op->node->op == OPARA__OP_MAX_POOL, level = opara__cpu_isa_level();
    opara__pool_flat f = opara__pool_flat_dims(p);
    int64_t H = p->in_sp[1], W = p->in_sp[2], OH = p->out_sp[1], OW = p->out_sp[2], sh = p->stride[1], sw = p->stride[2];
    int64_t kh = p->kernel[1], kw = p->kernel[2], top = p->pad_b[1], left = p->pad_b[2], r, o1, o;
    float *plane = scratch, *v = plane + f.hp * f.wp, *h = v + OH * f.wp, *taps = h + OH * f.wp;
    size_t item, n_h = (size_t)(OH * f.wp - kw + 1);
    opara__vec_fill(plane, (size_t)(f.hp * f.wp), is_max ? -HUGE_VALF : 0.0f);
    if (!is_max)
        for (o1 = 0; o1 < OH; ++o1)
            for (o = 0; o < OW; ++o)
                taps[o1 * OW + o] = opara__pool_count(p, 1, o1 * sh - top) * opara__pool_count(p, 2, o * sw - left);
    for (item = begin; item < end; ++item) {
        const float* x = (const float*)op->in[0].data + (int64_t)item * H * W;
        float* y = (float*)op->out[0].data + (int64_t)item * OH * OW;
        for (r = 0; r < H; ++r) opara__vec_copy(level, plane + (top + r) * f.wp + left, x + r * W, (size_t)W);
        if (sh == 1)
            opara__vec_window(level, v, plane, (size_t)(OH * f.wp), (size_t)kh, (size_t)f.wp, is_max);
        else
            for (o1 = 0; o1 < OH; ++o1)
                opara__vec_window(level, v + o1 * f.wp, plane + o1 * sh * f.wp, (size_t)f.wp, (size_t)kh, (size_t)f.wp,
                                  is_max);
        opara__vec_window(level, h, v, n_h, (size_t)kw, 1, is_max);
        for (o1 = 0; o1 < OH; ++o1) {
            const float* hr = h + o1 * f.wp;
            float* yr = y + o1 * OW;
            if (sw == 1) opara__vec_copy(level, yr, hr, (size_t)OW);
            else if (sw == 2) opara__vec_copy_even(yr, hr, (size_t)OW);
            else
                for (o = 0; o < OW; ++o) yr[o] = hr[o * sw];
        }
        if (!is_max) opara__vec_binary_f32(level, 3, y, 1, taps, 1, y, (size_t)(OH * OW));
    }
    return OPARA_OK;
}

/* 2-D pooling without indices (the common case): planes [begin, end). */
static opara_result opara__pool2d_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    const opara__cpu_params* p = &op->p;
    int is_max = op->node->op == OPARA__OP_MAX_POOL;
    int64_t Pin = p->in_sp[1] * p->in_sp[2], P = p->out_sp[1] * p->out_sp[2], o1;
    size_t item;
    (void)scratch;
    for (item = begin; item < end; ++item) {
        const float* x = (const float*)op->in[0].data + (int64_t)item * Pin;
        float* y = (float*)op->out[0].data + (int64_t)item * P;
        for (o1 = 0; o1 < p->out_sp[1]; ++o1) {
            int64_t s1 = o1 * p->stride[1] - p->pad_b[1], a1, b1;
            opara__pool_taps(s1, p->dil[1], p->kernel[1], p->in_sp[1], &a1, &b1);
            opara__pool2d_row(p, is_max, x, s1, a1, b1, y + o1 * p->out_sp[2]);
        }
    }
    return OPARA_OK;
}

static opara_result opara__pool_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    const opara__cpu_params* p = &op->p;
    int is_max = op->node->op == OPARA__OP_MAX_POOL;
    int64_t Pin = opara__prod3(p->in_sp), P = opara__prod3(p->out_sp), ihw = p->in_sp[1] * p->in_sp[2];
    int64_t* indices = op->n_out > 1 ? (int64_t*)op->out[1].data : NULL;
    size_t item;
    (void)scratch;
    for (item = begin; item < end; ++item) {
        const float* x = (const float*)op->in[0].data + (int64_t)item * Pin;
        float* y = (float*)op->out[0].data + (int64_t)item * P;
        int64_t o0, o1, o2, at_out = 0;
        for (o0 = 0; o0 < p->out_sp[0]; ++o0) {
            int64_t s0 = o0 * p->stride[0] - p->pad_b[0], a0, b0;
            opara__pool_taps(s0, p->dil[0], p->kernel[0], p->in_sp[0], &a0, &b0);
            for (o1 = 0; o1 < p->out_sp[1]; ++o1) {
                int64_t s1 = o1 * p->stride[1] - p->pad_b[1], a1, b1;
                opara__pool_taps(s1, p->dil[1], p->kernel[1], p->in_sp[1], &a1, &b1);
                for (o2 = 0; o2 < p->out_sp[2]; ++o2, ++at_out) {
                    int64_t s2 = o2 * p->stride[2] - p->pad_b[2], a2, b2, k0, k1, k2, arg = -1;
                    float best = -HUGE_VALF, sum = 0.0f;
                    opara__pool_taps(s2, p->dil[2], p->kernel[2], p->in_sp[2], &a2, &b2);
                    for (k0 = a0; k0 < b0; ++k0)
                        for (k1 = a1; k1 < b1; ++k1) {
                            int64_t row = (s0 + k0 * p->dil[0]) * ihw + (s1 + k1 * p->dil[1]) * p->in_sp[2] + s2;
                            const float* xr = x + row;
                            if (is_max) {
                                for (k2 = a2; k2 < b2; ++k2) {
                                    float v = xr[k2 * p->dil[2]];
                                    /* the first NaN of the window wins and stays */
                                    if (arg < 0 || (best == best && (v > best || v != v))) {
                                        best = v;
                                        arg = row + k2 * p->dil[2];
                                    }
                                }
                            } else {
                                for (k2 = a2; k2 < b2; ++k2) sum += xr[k2 * p->dil[2]];
                            }
                        }
                    if (is_max) {
                        y[at_out] = arg >= 0 ? best : 0.0f;
                        if (indices) {
                            int64_t at = arg < 0 ? 0 : arg;
                            if (p->storage_order) { /* column-major over the spatial dims */
                                int64_t iz = at / ihw, iy = (at / p->in_sp[2]) % p->in_sp[1], ix = at % p->in_sp[2];
                                at = (ix * p->in_sp[1] + iy) * p->in_sp[0] + iz;
                            }
                            indices[(int64_t)item * P + at_out] = (int64_t)item * Pin + at;
                        }
                    } else {
                        int64_t div = p->count_include_pad ? opara__pool_padded_taps(p, 0, s0) *
                                                                 opara__pool_padded_taps(p, 1, s1) *
                                                                 opara__pool_padded_taps(p, 2, s2)
                                                           : (b0 - a0) * (b1 - a1) * (b2 - a2);
                        y[at_out] = div > 0 ? sum / (float)div : 0.0f;
                    }
                }
            }
        }
    }
    return OPARA_OK;
}

OPARA__PRIVATE opara_result opara__cpu_prepare_pool(opara__cpu_op* op, char* err, size_t cap) {
    opara__cpu_params* p = &op->p;
    const opara__cpu_tensor *x = &op->in[0], *y = &op->out[0];
    opara_result r;
    if (x->ndim < 3 || y->ndim != x->ndim || y->dims[0] != x->dims[0] || y->dims[1] != x->dims[1])
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "%s: X and Y must be [N, C, spatial...] alike",
                                 opara__op_name(op->node->op));
    r = opara__conv_geometry(op, x, NULL, err, cap);
    if (r != OPARA_OK) return r;
    r = opara__conv_check_out(op, y, op->params->u.window.ceil_mode, err, cap);
    if (r != OPARA_OK) return r;
    if (op->n_out > 1 && op->out[1].data &&
        (op->out[1].dtype != OPARA_DTYPE_I64 || !opara__cpu_same_dims(&op->out[1], y)))
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "MaxPool: Indices must be i64 shaped like Y");
    p->count_include_pad = op->params->u.window.count_include_pad;
    p->storage_order = op->params->u.window.storage_order;
    op->work_items = (size_t)(x->dims[0] * x->dims[1]);
    op->min_items_per_task = 1;
    op->fn = opara__pool_kernel;
    if (p->in_sp[0] == 1 && p->kernel[0] == 1 && p->out_sp[0] == 1 && !(op->n_out > 1 && op->out[1].data)) {
        op->fn = opara__pool2d_kernel;
        if (opara__pool_flat_ok(p)) {
            op->fn = opara__pool2d_flat_kernel;
            op->scratch_floats = opara__pool_flat_scratch(p);
        }
    }
    return OPARA_OK;
}

/* ---- MaxUnpool ----------------------------------------------------------------------------- */

/* One (n, c) plane per item: zeros, then each X value where its index points. An index is
   flattened (as MaxPool's Indices) over the unpooled shape the window gives, (in - 1) * stride +
   kernel - pads per spatial dim; with output_shape that shape's elements keep their coordinates in
   the (larger) output, as ONNX's reference places them. It must fall in the item's own plane, as
   MaxPool's indices always do; another is refused (OPARA_ERR_BAD_INDEX), so the planes stay
   independent across workers. */
static int opara__unpool_target(const opara__cpu_params* p, size_t item, int64_t idx, int64_t* at) {
    int64_t plane = opara__prod3(p->in_sp), lo = (int64_t)item * plane, r, c0, c1, c2;
    if (idx < lo || idx - lo >= plane) return 0;
    r = idx - lo;
    c2 = r % p->in_sp[2];
    c1 = r / p->in_sp[2] % p->in_sp[1];
    c0 = r / p->in_sp[2] / p->in_sp[1];
    if (c0 >= p->out_sp[0] || c1 >= p->out_sp[1] || c2 >= p->out_sp[2]) return 0;
    *at = (c0 * p->out_sp[1] + c1) * p->out_sp[2] + c2;
    return 1;
}

static opara_result opara__max_unpool_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    const opara__cpu_params* p = &op->p;
    int64_t Pin = p->inner, Pout = opara__prod3(p->out_sp), j, at;
    size_t item;
    (void)scratch;
    for (item = begin; item < end; ++item) {
        const float* x = (const float*)op->in[0].data + (int64_t)item * Pin;
        const int64_t* idx = (const int64_t*)op->in[1].data + (int64_t)item * Pin;
        float* y = (float*)op->out[0].data + (int64_t)item * Pout;
        opara__vec_fill(y, (size_t)Pout, 0.0f);
        for (j = 0; j < Pin; ++j) {
            if (!opara__unpool_target(p, item, idx[j], &at)) return OPARA_ERR_BAD_INDEX;
            y[at] = x[j];
        }
    }
    return OPARA_OK;
}

/* The first index outside its plane, for the error message. */
OPARA__PRIVATE void opara__max_unpool_explain(const opara__cpu_op* op, char* buf, size_t cap) {
    int64_t Pin = op->p.inner, total = (int64_t)opara__cpu_numel(&op->in[1]), j, at;
    const int64_t* idx = (const int64_t*)op->in[1].data;
    for (j = 0; j < total; ++j) {
        if (!opara__unpool_target(&op->p, (size_t)(j / Pin), idx[j], &at)) {
            opara__format(buf, cap, "index %lld (I element %lld) is outside its (N, C) plane of the unpooled output",
                          (long long)idx[j], (long long)j);
            return;
        }
    }
}

OPARA__PRIVATE opara_result opara__cpu_prepare_max_unpool(opara__cpu_op* op, char* err, size_t cap) {
    const opara__cpu_tensor *x = &op->in[0], *y = &op->out[0];
    const opara__window_params* w;
    opara__cpu_params* p = &op->p;
    int32_t k, d;
    if (!op->params || !op->params->resolved || x->ndim < 3 || x->ndim > 5 || y->ndim != x->ndim ||
        y->dims[0] != x->dims[0] || y->dims[1] != x->dims[1] || op->in[1].dtype != OPARA_DTYPE_I64 ||
        !opara__cpu_same_dims(&op->in[1], x))
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "MaxUnpool: X, I (i64) and Y must be [N, C, 1 to 3 spatial dims] alike");
    w = &op->params->u.window;
    k = x->ndim - 2;
    for (d = 0; d < 3; ++d) p->in_sp[d] = p->out_sp[d] = 1;
    for (d = 0; d < k; ++d) {
        p->in_sp[3 - k + d] = (x->dims[2 + d] - 1) * w->strides[d] + w->kernel[d] - w->pads[d] - w->pads[k + d];
        p->out_sp[3 - k + d] = y->dims[2 + d];
    }
    for (d = 0; d < 3; ++d)
        if (p->in_sp[d] < 1) return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "MaxUnpool: the window unpools to an empty shape");
    p->inner = opara__cpu_dims_prod(x->dims, 2, x->ndim);
    op->work_items = (size_t)(x->dims[0] * x->dims[1]);
    op->min_items_per_task = 1;
    op->fn = opara__max_unpool_kernel;
    return OPARA_OK;
}
