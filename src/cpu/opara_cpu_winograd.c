/* 3x3 stride-1 convolutions by Winograd F(2x2, 3x3) on AVX-512 (Lavin and Gray's minimal
   filtering): each 2x2 block of outputs (a tile) comes from the 4x4 input block around it as
   Y = A^T [sum over input channels of (G g G^T) . (B^T d B)] A, 16 products per tile and channel
   pair instead of 36. The weight transforms U = G g G^T are made once at session creation
   (opara__winograd_pack: U[xi][cout][cin], xi = 4 i + j); a run transforms the input tiles V =
   B^T d B (adds only) into 16 matrices [cin x tiles], written straight in the GEMM's packed B
   layout (strips of 32 tiles, so nothing is copied again), multiplies each by U[xi] with the
   built-in GEMM (into M, kept by output channel), and transforms the 16 products back with adds,
   adding the bias and applying the ReLU as it stores.

   Work item = (image, block of up to 128 consecutive tiles in row-major tile order): a block may
   span tile rows, and the transforms run up to 16 tiles of one tile row and one strip at a time
   on a zero-padded copy of the input rows the block needs. The transforms only add and subtract
   (the 1/2 of G is in U), so the rounding is that of the sums; the zoo against ONNX Runtime keeps
   its 1e-8 NMSE bound. */
#include "opara_cpu.h"

#include <string.h>

#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
#  define OPARA__WINOGRAD 1
#  include <immintrin.h>
#else
#  define OPARA__WINOGRAD 0
#endif

#define OPARA__WG_STRIP 32 /* tiles per GEMM strip (the AVX-512 micro-kernel's width) */

OPARA__PRIVATE void opara__winograd_pack(opara__cpu_op* op) {
    const opara__cpu_params* p = &op->p;
    const float* w = (const float*)op->in[1].data;
    int64_t co, ci, i, j;
    for (co = 0; co < p->cout; ++co)
        for (ci = 0; ci < p->cin; ++ci) {
            const float* g = w + (co * p->cin + ci) * 9;
            double t[4][3], u;
            for (j = 0; j < 3; ++j) { /* G g: rows g0, (g0+g1+g2)/2, (g0-g1+g2)/2, g2 */
                t[0][j] = g[j];
                t[1][j] = 0.5 * ((double)g[j] + g[3 + j] + g[6 + j]);
                t[2][j] = 0.5 * ((double)g[j] - g[3 + j] + g[6 + j]);
                t[3][j] = g[6 + j];
            }
            for (i = 0; i < 4; ++i)
                for (j = 0; j < 4; ++j) { /* (G g) G^T */
                    u = j == 0 ? t[i][0] : j == 3 ? t[i][2] : 0.5 * (t[i][0] + (j == 1 ? t[i][1] : -t[i][1]) + t[i][2]);
                    op->packed[((i * 4 + j) * p->cout + co) * p->cin + ci] = (float)u;
                }
        }
}

#if OPARA__WINOGRAD
/* Tile geometry of the op: th x tw tiles of 2x2 outputs, work items of tb tiles (p->col_block, a
   multiple of the strip); the padded input rows start at row 2 ty - pad_top and are pw = 2 tw + 2
   wide (column 2 tx - pad_left first). */
typedef struct opara__wg_geom {
    int64_t th, tw, tiles, tb, pw, rows_max;
} opara__wg_geom;

static opara__wg_geom opara__wg_geometry(const opara__cpu_params* p) {
    opara__wg_geom g;
    g.th = (p->out_sp[1] + 1) / 2;
    g.tw = (p->out_sp[2] + 1) / 2;
    g.tiles = g.th * g.tw;
    g.tb = p->col_block;
    g.pw = 2 * g.tw + 2;
    g.rows_max = 2 * ((g.tb + g.tw - 1) / g.tw + 1) + 2; /* padded rows one block touches */
    return g;
}

/* M is stored by output channel: row co holds its 16 products of tb tiles (so the output transform
   reads one block per channel), rows 16 tb + 16 floats apart (a multiple of 4 KB would put the
   GEMM's 12 stored rows in one cache set). */
static int64_t opara__wg_mrow(int64_t tb) { return 16 * tb + 16; }

/* Floats of one worker's scratch: the padded rows, V (16 matrices) and M. */
static size_t opara__wg_scratch(const opara__cpu_params* p) {
    opara__wg_geom g = opara__wg_geometry(p);
    return (size_t)(g.rows_max * g.pw + 16 * p->cin * g.tb + p->cout * opara__wg_mrow(g.tb));
}

/* Where V[xi] holds (input channel ci, tile t of the block): the GEMM's packed B layout, K
   blocks of OPARA__GEMM_KC channels, each tb tiles in strips of 32 (opara__gemm_packed). */
static int64_t opara__wg_v_at(int64_t cin, int64_t tb, int64_t ci, int64_t t) {
    int64_t pc = ci / OPARA__GEMM_KC * OPARA__GEMM_KC, kc = OPARA__MIN((int64_t)OPARA__GEMM_KC, cin - pc);
    return pc * tb + t / OPARA__WG_STRIP * OPARA__WG_STRIP * kc + (ci - pc) * OPARA__WG_STRIP + t % OPARA__WG_STRIP;
}

/* The even and odd elements of s[0..31] (two vectors of 16). */
__attribute__((target("avx512f"))) static void opara__wg_deinterleave(const float* s, __mmask16 m0, __mmask16 m1,
                                                                      __m512* even, __m512* odd) {
    const __m512i ie = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
    const __m512i io = _mm512_set_epi32(31, 29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1);
    __m512 a = _mm512_maskz_loadu_ps(m0, s), b = _mm512_maskz_loadu_ps(m1, s + 16);
    *even = _mm512_permutex2var_ps(a, ie, b);
    *odd = _mm512_permutex2var_ps(a, io, b);
}

/* B^T d B for `n` (<= 16, within one strip) tiles of one tile row, tile k's 4x4 input block at
   rows r[0..3] and columns 2k..2k+3 of each; writes them at v + xi * vstride for each xi. */
__attribute__((target("avx512f"))) static void opara__wg_input16(const float* const r[4], int64_t n, float* v,
                                                                 int64_t vstride) {
    __mmask16 mt = (__mmask16)opara__lanes16(n); /* the tiles */
    /* tile k reads columns 2k .. 2k + 3: 2n + 2 floats from each row start, 2n from the third */
    int64_t need = 2 * n + 2;
    __mmask16 m0 = (__mmask16)opara__lanes16(need), m1 = (__mmask16)opara__lanes16(need - 16);
    __mmask16 m2 = (__mmask16)opara__lanes16(need - 2), m3 = (__mmask16)opara__lanes16(need - 18);
    __m512 h[4][4];
    int i, j;
    for (i = 0; i < 4; ++i) { /* d B along each row: c0 - c2, c1 + c2, c2 - c1, c1 - c3 */
        __m512 c0, c1, c2, c3;
        opara__wg_deinterleave(r[i], m0, m1, &c0, &c1);
        opara__wg_deinterleave(r[i] + 2, m2, m3, &c2, &c3);
        h[i][0] = _mm512_sub_ps(c0, c2);
        h[i][1] = _mm512_add_ps(c1, c2);
        h[i][2] = _mm512_sub_ps(c2, c1);
        h[i][3] = _mm512_sub_ps(c1, c3);
    }
    for (j = 0; j < 4; ++j) { /* B^T (d B) down the columns, the same combinations */
        _mm512_mask_storeu_ps(v + (0 * 4 + j) * vstride, mt, _mm512_sub_ps(h[0][j], h[2][j]));
        _mm512_mask_storeu_ps(v + (1 * 4 + j) * vstride, mt, _mm512_add_ps(h[1][j], h[2][j]));
        _mm512_mask_storeu_ps(v + (2 * 4 + j) * vstride, mt, _mm512_sub_ps(h[2][j], h[1][j]));
        _mm512_mask_storeu_ps(v + (3 * 4 + j) * vstride, mt, _mm512_sub_ps(h[1][j], h[3][j]));
    }
}

/* A^T M A for n (<= 16) tiles of one channel (product xi at mm + xi * mstride), plus the bias and
   the ReLU, stored as the 2x2 blocks of output rows y0 and y1 (y1 NULL: past the last row), clipped to
   `cols` columns. */
__attribute__((target("avx512f"))) static void opara__wg_output16(const float* mm, int64_t mstride, int64_t n,
                                                                  float bias, int relu, float* y0, float* y1,
                                                                  int64_t cols) {
    const __m512i lo = _mm512_set_epi32(23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
    const __m512i hi = _mm512_set_epi32(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8);
    __mmask16 mt = (__mmask16)opara__lanes16(n);
    __mmask16 s0 = (__mmask16)opara__lanes16(cols), s1 = (__mmask16)opara__lanes16(cols - 16);
    __m512 m[16], t[2][4], out[4], b = _mm512_set1_ps(bias);
    int i, j;
    for (i = 0; i < 16; ++i) m[i] = _mm512_maskz_loadu_ps(mt, mm + i * mstride);
    for (j = 0; j < 4; ++j) { /* A^T M: rows m0 + m1 + m2 and m1 - m2 - m3 */
        t[0][j] = _mm512_add_ps(_mm512_add_ps(m[j], m[4 + j]), m[8 + j]);
        t[1][j] = _mm512_sub_ps(_mm512_sub_ps(m[4 + j], m[8 + j]), m[12 + j]);
    }
    for (i = 0; i < 2; ++i) { /* (A^T M) A */
        out[2 * i] = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(t[i][0], t[i][1]), t[i][2]), b);
        out[2 * i + 1] = _mm512_add_ps(_mm512_sub_ps(_mm512_sub_ps(t[i][1], t[i][2]), t[i][3]), b);
        if (relu) { /* maxps returns its second operand for a NaN */
            out[2 * i] = _mm512_max_ps(_mm512_setzero_ps(), out[2 * i]);
            out[2 * i + 1] = _mm512_max_ps(_mm512_setzero_ps(), out[2 * i + 1]);
        }
    }
    for (i = 0; i < 2; ++i) { /* the tiles' columns interleaved: y[2k] from out[2i], y[2k+1] from out[2i+1] */
        float* y = i ? y1 : y0;
        if (!y) continue;
        _mm512_mask_storeu_ps(y, s0, _mm512_permutex2var_ps(out[2 * i], lo, out[2 * i + 1]));
        _mm512_mask_storeu_ps(y + 16, s1, _mm512_permutex2var_ps(out[2 * i], hi, out[2 * i + 1]));
    }
}

/* The padded input rows of channel plane x for tile rows [ty0, ty1]: rows 2 ty0 - pad_top on, each
   pw wide starting at column -pad_left, zero outside the input. */
static void opara__wg_pad_rows(const opara__cpu_params* p, const opara__wg_geom* g, const float* x, int64_t ty0,
                               int64_t ty1, float* rows) {
    int64_t H = p->in_sp[1], W = p->in_sp[2], left = p->pad_b[2], r, n = 2 * (ty1 - ty0) + 4;
    int64_t c0 = left < g->pw ? left : g->pw, len = W < g->pw - c0 ? W : g->pw - c0;
    for (r = 0; r < n; ++r) {
        int64_t iy = 2 * ty0 - p->pad_b[1] + r;
        float* d = rows + r * g->pw;
        if (iy < 0 || iy >= H) {
            memset(d, 0, (size_t)g->pw * sizeof(float));
            continue;
        }
        memset(d, 0, (size_t)c0 * sizeof(float));
        memcpy(d + c0, x + iy * W, (size_t)len * sizeof(float));
        memset(d + c0 + len, 0, (size_t)(g->pw - c0 - len) * sizeof(float));
    }
}

/* The run of tiles from t (block-relative t - t0) that stays in one tile row, one strip and 16. */
static int64_t opara__wg_run(const opara__wg_geom* g, int64_t t, int64_t t0, int64_t t1) {
    int64_t in_strip = OPARA__WG_STRIP - (t - t0) % OPARA__WG_STRIP;
    return OPARA__MIN(OPARA__MIN(OPARA__MIN((int64_t)16, g->tw - t % g->tw), t1 - t), in_strip);
}

static opara_result opara__winograd_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    const opara__cpu_params* p = &op->p;
    opara__wg_geom g = opara__wg_geometry(p);
    int64_t blocks = (g.tiles + g.tb - 1) / g.tb, Pin = p->in_sp[1] * p->in_sp[2];
    int64_t P = p->out_sp[1] * p->out_sp[2], OW = p->out_sp[2], OH = p->out_sp[1], xi;
    int64_t vstride = p->cin * g.tb, mrow = opara__wg_mrow(g.tb);
    const float* bias = op->n_in > 2 ? (const float*)op->in[2].data : NULL;
    float *rows = scratch, *v = rows + g.rows_max * g.pw, *mm = v + 16 * vstride, *gemm_scratch = mm + p->cout * mrow;
    size_t item;
    for (item = begin; item < end; ++item) {
        int64_t n = (int64_t)item / blocks, t0 = ((int64_t)item % blocks) * g.tb;
        int64_t t1 = OPARA__MIN(g.tiles, t0 + g.tb), ty0 = t0 / g.tw, ty1 = (t1 - 1) / g.tw, ci, co, t, len;
        const float* x = (const float*)op->in[0].data + n * p->cin * Pin;
        float* y = (float*)op->out[0].data + n * p->cout * P;
        if (t1 - t0 < g.tb) memset(v, 0, (size_t)(16 * vstride) * sizeof(float)); /* the last strip's unused tiles */
        for (ci = 0; ci < p->cin; ++ci) {
            opara__wg_pad_rows(p, &g, x + ci * Pin, ty0, ty1, rows);
            for (t = t0; t < t1; t += len) {
                int64_t ty = t / g.tw, tx = t % g.tw, i;
                const float* r[4];
                len = opara__wg_run(&g, t, t0, t1);
                for (i = 0; i < 4; ++i) r[i] = rows + (2 * (ty - ty0) + i) * g.pw + 2 * tx;
                opara__wg_input16(r, len, v + opara__wg_v_at(p->cin, g.tb, ci, t - t0), vstride);
            }
        }
        for (xi = 0; xi < 16; ++xi) {
            opara__gemm_packed pk;
            pk.data = v + xi * vstride, pk.np = (size_t)g.tb, pk.nr = OPARA__WG_STRIP, pk.col0 = 0;
            opara__sgemm_ex(op->blas, 0, 0, (size_t)p->cout, (size_t)(t1 - t0), (size_t)p->cin, 1.0f,
                            op->packed + xi * p->cout * p->cin, (size_t)p->cin, pk.data, (size_t)g.tb, 0.0f,
                            mm + xi * g.tb, (size_t)mrow, gemm_scratch, NULL, &pk);
        }
        for (co = 0; co < p->cout; ++co) {
            float* yc = y + co * P;
            for (t = t0; t < t1; t += len) {
                int64_t ty = t / g.tw, tx = t % g.tw;
                float* y0 = yc + 2 * ty * OW + 2 * tx;
                len = opara__wg_run(&g, t, t0, t1);
                opara__wg_output16(mm + co * mrow + (t - t0), g.tb, len, bias ? bias[co] : 0.0f, p->relu, y0,
                                   2 * ty + 1 < OH ? y0 + OW : NULL, OPARA__MIN(2 * len, OW - 2 * tx));
            }
        }
    }
    return OPARA_OK;
}
/* Tiles per work item: up to 128 (4 strips, so that each pass over U[xi] serves 4 strips: with
   one, the weights' traffic starved the micro-kernel), fewer where that leaves workers without
   an item or a lopsided last round. */
static int64_t opara__wg_block(const opara__cpu_params* p, uint32_t workers) {
    int64_t tiles = ((p->out_sp[1] + 1) / 2) * ((p->out_sp[2] + 1) / 2), w = workers ? (int64_t)workers : 1, tb;
    for (tb = 4 * OPARA__WG_STRIP; tb > OPARA__WG_STRIP; tb -= OPARA__WG_STRIP) {
        int64_t items = p->batch * ((tiles + tb - 1) / tb);
        if (items % w == 0 || items >= 4 * w) break;
    }
    return tb;
}

#endif

/* Winograd serves a 2-D 3x3 convolution with stride and dilation 1 and one group, constant
   weights, on a CPU with AVX-512 (the built-in GEMM's 32-wide strip; not with a BLAS), when the
   transformed weights may be kept and the layer is big enough for the transforms to pay: at least
   16 input and output channels and 32 tiles (a 12 x 12 output; measured on one Zen 5 core against
   im2col + GEMM: 1.5x at 64 channels on 56 x 56, 1.7x at 256 on 14 x 14, even at 512 on 8 x 8). */
OPARA__PRIVATE int opara__winograd_prepare(opara__cpu_op* op) {
#if OPARA__WINOGRAD
    opara__cpu_params* p = &op->p;
    opara__wg_geom g;
    int i;
    if (op->keep_weights || !op->in[1].is_const || opara__cpu_isa_level() != 2 || p->group != 1 || p->depthwise)
        return 0;
    if (op->blas && op->blas->sgemm) return 0; /* V is in the built-in GEMM's packed layout, not a BLAS's */
    if (p->in_sp[0] != 1 || p->kernel[0] != 1 || p->kernel[1] != 3 || p->kernel[2] != 3 || p->cin < 16 || p->cout < 16)
        return 0;
    for (i = 0; i < 3; ++i)
        if (p->stride[i] != 1 || p->dil[i] != 1) return 0;
    p->col_block = opara__wg_block(p, op->workers);
    g = opara__wg_geometry(p);
    if (g.tiles < 32) return 0;
    op->fn = opara__winograd_kernel;
    op->work_items = (size_t)(p->batch * ((g.tiles + g.tb - 1) / g.tb));
    op->scratch_floats = opara__wg_scratch(p) + OPARA__GEMM_SCRATCH;
    op->packed_floats = (size_t)(16 * p->cout * p->cin);
    op->packed_nr = 0;
    return 1;
#else
    (void)op;
    return 0;
#endif
}
