/* The kernels of src/cuda/kernels/ (every .cu file), built for the host (the dialect's host build), each run with
   a small executor in this file and compared with a naive reference written here: direct loops
   in double precision, or the worked examples of the ONNX operator documentation.

   The executor runs the threads of a block as real threads (one pthread per CUDA thread) and
   __syncthreads() as a pthread barrier, so a missing barrier in a kernel shows up as a race. */
#define _GNU_SOURCE
#define OPARA_IMPLEMENTATION
#include "opara.h"
#include "opara_test.h"

#include <math.h>
#include <pthread.h>

#include "../src/cuda/kernels/opara_kernel.h"
#include "math_ref.h"

/* ---- host executor ---------------------------------------------------------------------------- */

__thread opara_kernel_thread* opara__kernel_current;
static opara_kernel_entry* kx_registry;

void opara_kernel_register(opara_kernel_entry* entry) {
    entry->next = kx_registry;
    kx_registry = entry;
}

#define KX_SHARED_BYTES (64 * 1024)

typedef struct kx_launch {
    opara_kernel_trampoline fn;
    void* const* params;
    unsigned grid[3], block[3];
    pthread_barrier_t barrier;
    unsigned char* shared;
    unsigned char* dynamic_shared;
} kx_launch;

typedef struct kx_thread {
    kx_launch* launch;
    opara_kernel_thread self;
    pthread_t tid;
} kx_thread;

static __thread kx_launch* kx_current_launch;
static __thread size_t kx_shared_cursor;
static __thread int kx_shared_overflow;

void opara__kernel_syncthreads(void) { pthread_barrier_wait(&kx_current_launch->barrier); }

void* opara__kernel_shared(size_t bytes) {
    size_t at = (kx_shared_cursor + 15) & ~(size_t)15;
    if (at + bytes > KX_SHARED_BYTES) {
        kx_shared_overflow = 1;
        return kx_current_launch->shared;
    }
    kx_shared_cursor = at + bytes;
    return kx_current_launch->shared + at;
}

static void* kx_thread_main(void* arg) {
    kx_thread* t = (kx_thread*)arg;
    kx_launch* L = t->launch;
    unsigned bx, by, bz;
    kx_current_launch = L;
    opara__kernel_current = &t->self;
    for (bz = 0; bz < L->grid[2]; ++bz)
        for (by = 0; by < L->grid[1]; ++by)
            for (bx = 0; bx < L->grid[0]; ++bx) {
                t->self.block_idx.x = bx;
                t->self.block_idx.y = by;
                t->self.block_idx.z = bz;
                kx_shared_cursor = 0;
                L->fn(L->params);
                pthread_barrier_wait(&L->barrier); /* the block ends for everyone before the next */
            }
    return NULL;
}

static const opara_kernel_entry* kx_find(const char* name) {
    const opara_kernel_entry* e;
    for (e = kx_registry; e; e = e->next)
        if (strcmp(e->name, name) == 0) return e;
    return NULL;
}

/* Runs kernel `name` like cuLaunchKernel. Returns 0 on success. */
static int kx_run(const char* name, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                  void** params) {
    const opara_kernel_entry* e = kx_find(name);
    kx_launch L;
    kx_thread* threads;
    unsigned n = bx * by * bz, i;
    if (!e || n == 0 || gx * gy * gz == 0) return -1;
    memset(&L, 0, sizeof L);
    L.fn = e->trampoline;
    L.params = params;
    L.grid[0] = gx, L.grid[1] = gy, L.grid[2] = gz;
    L.block[0] = bx, L.block[1] = by, L.block[2] = bz;
    L.shared = (unsigned char*)calloc(1, KX_SHARED_BYTES);
    threads = (kx_thread*)calloc(n, sizeof *threads);
    if (!L.shared || !threads) return -1;
    pthread_barrier_init(&L.barrier, NULL, n);
    for (i = 0; i < n; ++i) {
        kx_thread* t = &threads[i];
        t->launch = &L;
        t->self.thread_idx.x = i % bx;
        t->self.thread_idx.y = (i / bx) % by;
        t->self.thread_idx.z = i / (bx * by);
        t->self.block_dim.x = bx, t->self.block_dim.y = by, t->self.block_dim.z = bz;
        t->self.grid_dim.x = gx, t->self.grid_dim.y = gy, t->self.grid_dim.z = gz;
        t->self.dynamic_shared = L.dynamic_shared;
        pthread_create(&t->tid, NULL, kx_thread_main, t);
    }
    for (i = 0; i < n; ++i) pthread_join(threads[i].tid, NULL);
    pthread_barrier_destroy(&L.barrier);
    free(threads);
    free(L.shared);
    return 0;
}

#define KX_ARGS(...) {__VA_ARGS__}

/* The kernels themselves (host build). */
#include "../src/cuda/kernels/cast.cu"
#include "../src/cuda/kernels/elementwise.cu"
#include "../src/cuda/kernels/epilogue.cu"
#include "../src/cuda/kernels/gather.cu"
#include "../src/cuda/kernels/layout.cu"
#include "../src/cuda/kernels/logic.cu"
#include "../src/cuda/kernels/norm.cu"
#include "../src/cuda/kernels/pool.cu"
#include "../src/cuda/kernels/quant.cu"
#include "../src/cuda/kernels/reduce.cu"

/* ---- helpers ------------------------------------------------------------------------------------ */

static unsigned kx_seed = 12345u;
static float rnd(void) { /* uniform in [-1, 1) */
    kx_seed = kx_seed * 1664525u + 1013904223u;
    return (float)((kx_seed >> 8) & 0xffff) / 32768.0f - 1.0f;
}
static float* rnd_vec(size_t n) {
    float* v = (float*)malloc(n * sizeof *v);
    size_t i;
    for (i = 0; i < n; ++i) v[i] = rnd();
    return v;
}
static float* zeros(size_t n) { return (float*)calloc(n ? n : 1, sizeof(float)); }
static unsigned blocks_for(int n, unsigned threads) { return (unsigned)((n + (int)threads - 1) / (int)threads); }

/* ---- activations ---------------------------------------------------------------------------------- */

/* Switches on the backend's codes (src/cuda/opara_backend_cuda.h), so the kernels' behaviour is checked
   against the numbers the backend passes. */
static double ref_act(double x, int act, double a, double b) {
    switch (act) {
    case OPARA__CUDA_ACT_RELU: return x > 0 ? x : 0;
    case OPARA__CUDA_ACT_LEAKY_RELU: return x >= 0 ? x : a * x;
    case OPARA__CUDA_ACT_SIGMOID: return 1 / (1 + exp(-x));
    case OPARA__CUDA_ACT_TANH: return tanh(x);
    case OPARA__CUDA_ACT_HARD_SIGMOID: { double v = a * x + b; return v < 0 ? 0 : (v > 1 ? 1 : v); }
    case OPARA__CUDA_ACT_HARD_SWISH: { double v = x / 6 + 0.5; return x * (v < 0 ? 0 : (v > 1 ? 1 : v)); }
    case OPARA__CUDA_ACT_CLIP: return x < a ? a : (x > b ? b : x);
    case OPARA__CUDA_ACT_SQRT: return sqrt(x);
    case OPARA__CUDA_ACT_ERF: return erf(x);
    case OPARA__CUDA_ACT_GELU: return 0.5 * x * (1 + erf(x / sqrt(2.0)));
    case OPARA__CUDA_ACT_GELU_TANH: return 0.5 * x * (1 + tanh(sqrt(2 / 3.14159265358979323846) * (x + 0.044715 * x * x * x)));
    default: return x;
    }
}

OT_TEST(unary_activations_match_formulas) {
    int n = 1000, act, i;
    float* x = rnd_vec((size_t)n);
    float* y = zeros((size_t)n);
    for (i = 0; i < n; ++i) x[i] *= 4.0f;
    for (act = OPARA__CUDA_ACT_NONE; act <= OPARA__CUDA_ACT_GELU_TANH; ++act) {
        float a = act == OPARA__CUDA_ACT_CLIP ? -0.5f : 0.2f, b = act == OPARA__CUDA_ACT_CLIP ? 0.7f : 0.5f;
        float* in = x;
        float sq[1000];
        void* p[] = KX_ARGS(&in, &y, &n, &act, &a, &b);
        if (act == OPARA__CUDA_ACT_SQRT) {
            for (i = 0; i < n; ++i) sq[i] = fabsf(x[i]);
            in = sq;
        }
        REQUIRE(kx_run("opara_unary_f32", 3, 1, 1, 128, 1, 1, p) == 0);
        for (i = 0; i < n; ++i) {
            double r = ref_act(in[i], act, a, b);
            if (fabs(r - y[i]) > 1e-5 * (1 + fabs(r))) {
                OT_LOG("act %d x %g ref %g got %g", act, (double)in[i], r, (double)y[i]);
                CHECK(0);
                break;
            }
        }
    }
    free(x);
    free(y);
}

/* opara_math_f32 with the backend's codes (src/cuda/opara_backend_cuda.h) against the double references of
   math_ref.h: random inputs over each operator's domain, then the special values. */
OT_TEST(math_kernel_matches_references) {
    static const struct {
        int code;
        const char* name;
    } ops[] = {
        {OPARA__CUDA_MATH_NEG, "Neg"}, {OPARA__CUDA_MATH_ABS, "Abs"}, {OPARA__CUDA_MATH_EXP, "Exp"},
        {OPARA__CUDA_MATH_LOG, "Log"}, {OPARA__CUDA_MATH_RECIPROCAL, "Reciprocal"},
        {OPARA__CUDA_MATH_FLOOR, "Floor"}, {OPARA__CUDA_MATH_CEIL, "Ceil"}, {OPARA__CUDA_MATH_ROUND, "Round"},
        {OPARA__CUDA_MATH_SIGN, "Sign"}, {OPARA__CUDA_MATH_SIN, "Sin"}, {OPARA__CUDA_MATH_COS, "Cos"},
        {OPARA__CUDA_MATH_TAN, "Tan"}, {OPARA__CUDA_MATH_SOFTPLUS, "Softplus"},
        {OPARA__CUDA_MATH_SOFTSIGN, "Softsign"}, {OPARA__CUDA_MATH_ELU, "Elu"}, {OPARA__CUDA_MATH_SELU, "Selu"},
        {OPARA__CUDA_MATH_CELU, "Celu"}, {OPARA__CUDA_MATH_THRESHOLDED_RELU, "ThresholdedRelu"},
        {OPARA__CUDA_MATH_ASIN, "Asin"}, {OPARA__CUDA_MATH_ACOS, "Acos"}, {OPARA__CUDA_MATH_ATAN, "Atan"},
        {OPARA__CUDA_MATH_SINH, "Sinh"}, {OPARA__CUDA_MATH_COSH, "Cosh"}, {OPARA__CUDA_MATH_ASINH, "Asinh"},
        {OPARA__CUDA_MATH_ACOSH, "Acosh"}, {OPARA__CUDA_MATH_ATANH, "Atanh"}};
    int n = 700, i, bad = 0;
    size_t o;
    float* x = rnd_vec((size_t)n);
    float* y = zeros((size_t)n);
    float* in = zeros((size_t)n);
    for (o = 0; o < sizeof ops / sizeof ops[0]; ++o) {
        int op = ops[o].code;
        int has_alpha =
            op == OPARA__CUDA_MATH_ELU || op == OPARA__CUDA_MATH_CELU || op == OPARA__CUDA_MATH_THRESHOLDED_RELU;
        float a = has_alpha ? 0.7f : 1.67326319217681884765625f, b = 1.05070102214813232421875f;
        double lo, hi;
        void* p[] = KX_ARGS(&in, &y, &n, &op, &a, &b);
        math_ref_domain(ops[o].name, &lo, &hi);
        for (i = 0; i < n; ++i) in[i] = (float)(lo + (hi - lo) * 0.5 * (x[i] + 1.0f));
        for (i = 0; i < (int)N_SPECIALS; ++i) in[n - (int)N_SPECIALS + i] = MATH_SPECIALS[i];
        REQUIRE(kx_run("opara_math_f32", 3, 1, 1, 128, 1, 1, p) == 0);
        for (i = 0; i < n; ++i) {
            double want = math_ref(ops[o].name, in[i], a, b);
            if (math_close(want, y[i]) || bad++) continue;
            OT_LOG("%s(%.9g): want %.9g, got %.9g", ops[o].name, (double)in[i], want, (double)y[i]);
        }
    }
    CHECK_EQ(bad, 0);
    CHECK_EQ(sizeof ops / sizeof ops[0], MATH_OP_COUNT);
    free(x);
    free(y);
    free(in);
}

OT_TEST(batch_norm_affine_matches_definition) {
    int N = 2, C = 5, HW = 7, n = N * C * HW, i, act = OPARA__CUDA_ACT_RELU;
    float *x = rnd_vec((size_t)n), *y = zeros((size_t)n), s[5], b[5], m[5], v[5], scale[5], shift[5], eps = 1e-5f;
    float a0 = 0, a1 = 0;
    const float *ps = scale, *pb = shift;
    void* p[] = KX_ARGS(&x, &ps, &pb, &y, &n, &C, &HW, &act, &a0, &a1);
    for (i = 0; i < C; ++i) {
        s[i] = rnd(), b[i] = rnd(), m[i] = rnd(), v[i] = rnd() + 1.5f;
        scale[i] = s[i] / sqrtf(v[i] + eps);
        shift[i] = b[i] - m[i] * scale[i];
    }
    REQUIRE(kx_run("opara_channel_affine_f32", 2, 1, 1, 64, 1, 1, p) == 0);
    for (i = 0; i < n; ++i) {
        int c = (i / HW) % C;
        double r = ref_act((x[i] - m[c]) / sqrt((double)v[c] + eps) * s[c] + b[c], OPARA__CUDA_ACT_RELU, 0, 0);
        CHECK_NEAR(r, y[i], 1e-5);
    }
    free(x);
    free(y);
}

OT_TEST(bias_act_broadcasts_like_gemm_c) {
    int rows = 6, cols = 9, n = rows * cols, mode, i, act = OPARA__CUDA_ACT_CLIP;
    int rs[4] = {0, 0, 1, 9}, cs[4] = {0, 1, 0, 1};
    float* c = rnd_vec(64);
    float a = -0.3f, bb = 0.4f, beta = 0.5f;
    for (mode = 0; mode < 4; ++mode) {
        float* y = rnd_vec((size_t)n);
        float* y0 = (float*)malloc((size_t)n * sizeof *y0);
        const float* cp = c;
        void* p[] = KX_ARGS(&y, &cp, &n, &cols, &rs[mode], &cs[mode], &beta, &act, &a, &bb);
        memcpy(y0, y, (size_t)n * sizeof *y);
        REQUIRE(kx_run("opara_bias_act_f32", 1, 1, 1, 32, 1, 1, p) == 0);
        for (i = 0; i < n; ++i) {
            int r = i / cols, k = i % cols;
            double bias = mode == 0 ? c[0] : mode == 1 ? c[k] : mode == 2 ? c[r] : c[r * cols + k];
            CHECK_NEAR(ref_act(y0[i] + 0.5 * bias, OPARA__CUDA_ACT_CLIP, a, bb), y[i], 1e-6);
        }
        free(y);
        free(y0);
    }
    free(c);
}

/* ---- GEMM and convolution ------------------------------------------------------------------------- */

static void ref_gemm(const float* A, const float* B, const float* C, double* Y, int M, int N, int K, int ta, int tb,
                     double alpha, double beta, int crs, int ccs, int act) {
    int m, n, k;
    for (m = 0; m < M; ++m)
        for (n = 0; n < N; ++n) {
            double acc = 0;
            for (k = 0; k < K; ++k) acc += (double)(ta ? A[k * M + m] : A[m * K + k]) * (tb ? B[n * K + k] : B[k * N + n]);
            acc *= alpha;
            if (C) acc += beta * C[m * crs + n * ccs];
            Y[m * N + n] = ref_act(acc, act, 0, 0);
        }
}

OT_TEST(sgemm_all_transposes_batches_and_c_modes) {
    int shapes[][3] = {{1, 1, 1}, {17, 5, 33}, {40, 37, 16}, {3, 70, 19}};
    int si, ta, tb;
    for (si = 0; si < 4; ++si)
        for (ta = 0; ta < 2; ++ta)
            for (tb = 0; tb < 2; ++tb) {
                int M = shapes[si][0], N = shapes[si][1], K = shapes[si][2], batch = 3, z, i;
                int crs = N, ccs = 1, act = (ta + tb) % 2;
                long long sa = (long long)M * K, sb = 0, sy = (long long)M * N; /* B broadcast over the batch */
                float *A = rnd_vec((size_t)(M * K * batch)), *B = rnd_vec((size_t)(K * N)), *C = rnd_vec((size_t)(M * N));
                float *Y = zeros((size_t)(M * N * batch)), alpha = 0.75f, beta = 1.5f, a0 = 0, a1 = 0;
                double* R = (double*)malloc((size_t)(M * N) * sizeof(double));
                const float *pa = A, *pb = B, *pc = C;
                void* p[] = KX_ARGS(&pa, &pb, &pc, &Y, &M, &N, &K, &ta, &tb, &alpha, &beta, &crs, &ccs, &act, &a0, &a1,
                                    &sa, &sb, &sy);
                REQUIRE(kx_run("opara_sgemm_f32", (unsigned)(N + 15) / 16, (unsigned)(M + 15) / 16, (unsigned)batch, 16,
                               16, 1, p) == 0);
                for (z = 0; z < batch; ++z) {
                    ref_gemm(A + z * sa, B, C, R, M, N, K, ta, tb, alpha, beta, crs, ccs, act);
                    for (i = 0; i < M * N; ++i)
                        if (fabs(R[i] - Y[z * sy + i]) > 1e-4 * (1 + fabs(R[i]))) {
                            OT_LOG("M%d N%d K%d ta%d tb%d z%d i%d ref %g got %g", M, N, K, ta, tb, z, i, R[i],
                                   (double)Y[z * sy + i]);
                            CHECK(0);
                            break;
                        }
                }
                free(A), free(B), free(C), free(Y), free(R);
            }
}

typedef struct conv_case { int N, C, H, W, K, R, S, sh, sw, ph, pw, dh, dw, group; } conv_case;

static void ref_conv(const conv_case* c, const float* x, const float* w, const float* bias, double* y, int OH, int OW) {
    int n, k, p, q, ci, r, s, Kg = c->K / c->group, Cg = c->C / c->group;
    for (n = 0; n < c->N; ++n)
        for (k = 0; k < c->K; ++k)
            for (p = 0; p < OH; ++p)
                for (q = 0; q < OW; ++q) {
                    double acc = bias ? bias[k] : 0;
                    int g = k / Kg;
                    for (ci = 0; ci < Cg; ++ci)
                        for (r = 0; r < c->R; ++r)
                            for (s = 0; s < c->S; ++s) {
                                int ih = p * c->sh - c->ph + r * c->dh, iw = q * c->sw - c->pw + s * c->dw;
                                if (ih < 0 || ih >= c->H || iw < 0 || iw >= c->W) continue;
                                acc += (double)x[((n * c->C + g * Cg + ci) * c->H + ih) * c->W + iw] *
                                       w[((k * Cg + ci) * c->R + r) * c->S + s];
                            }
                    y[((n * c->K + k) * OH + p) * OW + q] = acc;
                }
}

OT_TEST(implicit_gemm_conv_matches_direct_convolution) {
    conv_case cases[] = {
        {1, 3, 9, 11, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1},   /* 3x3 same */
        {2, 4, 10, 10, 6, 3, 3, 2, 2, 0, 1, 1, 1, 2},  /* strided, grouped, asymmetric pads in use */
        {1, 6, 8, 8, 6, 3, 3, 1, 1, 2, 2, 2, 2, 6},    /* depthwise dilated */
        {2, 17, 5, 7, 19, 1, 1, 1, 1, 0, 0, 1, 1, 1},  /* pointwise with odd sizes */
        {1, 2, 1, 20, 3, 1, 5, 1, 2, 0, 2, 1, 1, 1},   /* 1-D as H = 1 */
    };
    int ci;
    for (ci = 0; ci < (int)(sizeof cases / sizeof cases[0]); ++ci) {
        conv_case c = cases[ci];
        int OH = (c.H + 2 * c.ph - c.dh * (c.R - 1) - 1) / c.sh + 1, OW = (c.W + 2 * c.pw - c.dw * (c.S - 1) - 1) / c.sw + 1;
        int ny = c.N * c.K * OH * OW, i, act = ci == 0 ? 1 : 0, Kg = c.K / c.group;
        float *x = rnd_vec((size_t)(c.N * c.C * c.H * c.W)), *w = rnd_vec((size_t)(c.K * (c.C / c.group) * c.R * c.S));
        float *bias = rnd_vec((size_t)c.K), *y = zeros((size_t)ny), a0 = 0, a1 = 0;
        double* r = (double*)malloc((size_t)ny * sizeof(double));
        const float *px = x, *pw = w, *pb = bias;
        void* p[] = KX_ARGS(&px, &pw, &pb, &y, &c.N, &c.C, &c.H, &c.W, &c.K, &c.R, &c.S, &OH, &OW, &c.sh, &c.sw, &c.ph,
                            &c.pw, &c.dh, &c.dw, &c.group, &act, &a0, &a1);
        REQUIRE(kx_run("opara_conv2d_f32", blocks_for(c.N * OH * OW, 16), blocks_for(Kg, 16), (unsigned)c.group, 16, 16,
                       1, p) == 0);
        ref_conv(&c, x, w, bias, r, OH, OW);
        for (i = 0; i < ny; ++i) {
            double ref = ref_act(r[i], act, 0, 0);
            if (fabs(ref - y[i]) > 1e-4 * (1 + fabs(ref))) {
                OT_LOG("case %d i %d ref %g got %g", ci, i, ref, (double)y[i]);
                CHECK(0);
                break;
            }
        }
        free(x), free(w), free(bias), free(y), free(r);
    }
}

OT_TEST(conv_transpose_matches_scatter_definition) {
    /* N C H W K R S sh sw ph pw dh dw group, output padding (1, 0) */
    conv_case cases[] = {{1, 3, 4, 5, 2, 3, 3, 2, 2, 1, 1, 1, 1, 1}, {2, 4, 3, 3, 6, 2, 3, 1, 2, 0, 1, 2, 1, 2}};
    int ci;
    for (ci = 0; ci < 2; ++ci) {
        conv_case c = cases[ci];
        int Kg = c.K / c.group, Cg = c.C / c.group;
        int OH = (c.H - 1) * c.sh - 2 * c.ph + c.dh * (c.R - 1) + 1 + 1, OW = (c.W - 1) * c.sw - 2 * c.pw + c.dw * (c.S - 1) + 1;
        int ny = c.N * c.K * OH * OW, n, ch, h, wi, kk, r, s, i;
        float *x = rnd_vec((size_t)(c.N * c.C * c.H * c.W)), *w = rnd_vec((size_t)(c.C * Kg * c.R * c.S));
        float *bias = rnd_vec((size_t)c.K), *y = zeros((size_t)ny);
        double* ref = (double*)calloc((size_t)ny, sizeof(double));
        const float *px = x, *pw = w, *pb = bias;
        void* p[] = KX_ARGS(&px, &pw, &pb, &y, &c.N, &c.C, &c.H, &c.W, &c.K, &c.R, &c.S, &OH, &OW, &c.sh, &c.sw, &c.ph,
                            &c.pw, &c.dh, &c.dw, &c.group);
        /* scatter: every input element adds its weighted kernel footprint to the output */
        for (n = 0; n < c.N; ++n)
            for (i = 0; i < c.K * OH * OW; ++i) ref[n * c.K * OH * OW + i] = bias[i / (OH * OW)];
        for (n = 0; n < c.N; ++n)
            for (ch = 0; ch < c.C; ++ch)
                for (h = 0; h < c.H; ++h)
                    for (wi = 0; wi < c.W; ++wi)
                        for (kk = 0; kk < Kg; ++kk)
                            for (r = 0; r < c.R; ++r)
                                for (s = 0; s < c.S; ++s) {
                                    int oh = h * c.sh - c.ph + r * c.dh, ow = wi * c.sw - c.pw + s * c.dw;
                                    int k = (ch / Cg) * Kg + kk;
                                    if (oh < 0 || oh >= OH || ow < 0 || ow >= OW) continue;
                                    ref[((n * c.K + k) * OH + oh) * OW + ow] +=
                                        (double)x[((n * c.C + ch) * c.H + h) * c.W + wi] * w[((ch * Kg + kk) * c.R + r) * c.S + s];
                                }
        REQUIRE(kx_run("opara_conv_transpose2d_f32", blocks_for(ny, 64), 1, 1, 64, 1, 1, p) == 0);
        for (i = 0; i < ny; ++i) CHECK_NEAR(ref[i], y[i], 1e-4);
        free(x), free(w), free(bias), free(y), free(ref);
    }
}

/* ---- strided element-wise ------------------------------------------------------------------------ */

/* Numpy broadcasting of in (rank ir, dims id) to out dims: strides into `in` per output dim. */
static void bcast(int orank, const int* od, int ir, const int* id, int* st) {
    int d, s = 1;
    for (d = orank - 1; d >= 0; --d) {
        int k = d - (orank - ir);
        if (k < 0) { st[d] = 0; continue; }
        st[d] = id[k] == 1 && od[d] != 1 ? 0 : s;
        s *= id[k];
    }
}

static double ref_binary(int op, double x, double z) {
    switch (op) {
    case OPARA__CUDA_BIN_ADD: return x + z;
    case OPARA__CUDA_BIN_SUB: return x - z;
    case OPARA__CUDA_BIN_MUL: return x * z;
    case OPARA__CUDA_BIN_DIV: return x / z;
    default: return pow(x, z);
    }
}

OT_TEST(binary_broadcast_matches_numpy_rules) {
    int od[4] = {2, 3, 4, 5}, ad[4] = {2, 1, 4, 1}, bd[2] = {4, 5};
    int meta[1 + 3 * 4], n = 120, op, i;
    float *a = rnd_vec(8), *b = rnd_vec(20), *y = zeros(120);
    const float *pa = a, *pb = b;
    const int* pm = meta;
    meta[0] = 4;
    memcpy(meta + 1, od, sizeof od);
    bcast(4, od, 4, ad, meta + 5);
    bcast(4, od, 2, bd, meta + 9);
    for (i = 0; i < 8; ++i) a[i] = fabsf(a[i]) + 0.1f; /* Pow of a positive base */
    for (op = OPARA__CUDA_BIN_ADD; op <= OPARA__CUDA_BIN_POW; ++op) {
        int meta_path = 0, one = 1, zero = 0; /* fast_ndim 0: the walk from meta (the 4-dim walk below) */
        void* p[] = KX_ARGS(&pa, &pb, &y, &n, &op, &zero, &pm, &meta_path, &one, &one, &one, &zero, &zero, &zero, &zero,
                            &zero, &zero, &zero, &zero);
        REQUIRE(kx_run("opara_binary_f32", 2, 1, 1, 32, 1, 1, p) == 0);
        for (i = 0; i < n; ++i) {
            int i0 = i / 60, i2 = (i / 5) % 4, i3 = i % 5; /* a is [2,1,4,1], b is [4,5] */
            double r = ref_binary(op, a[i0 * 4 + i2], b[i2 * 5 + i3]);
            if (fabs(r - y[i]) > 1e-5 * (1 + fabs(r))) {
                OT_LOG("op %d i %d ref %g got %g", op, i, r, (double)y[i]);
                CHECK(0);
                break;
            }
        }
    }
    free(a), free(b), free(y);
}

OT_TEST(binary_int64_and_int32) {
    long long a[6] = {7, -7, 3, 0, 2, -3}, b[3] = {2, 3, -2}, y[6];
    int a32[6] = {7, -7, 3, 0, 2, -3}, b32[3] = {2, 3, -2}, y32[6];
    int meta[7] = {2, 2, 3, 3, 1, 0, 1}, n = 6, op, is64, i; /* a [2,3], b [3] */
    const int* pm = meta;
    for (op = 0; op <= 4; ++op)
        for (is64 = 0; is64 < 2; ++is64) {
            const void *pa = is64 ? (const void*)a : (const void*)a32, *pb = is64 ? (const void*)b : (const void*)b32;
            void* py = is64 ? (void*)y : (void*)y32;
            void* p[] = KX_ARGS(&pa, &pb, &py, &n, &op, &is64, &pm);
            REQUIRE(kx_run("opara_binary_int", 1, 1, 1, 8, 1, 1, p) == 0);
            for (i = 0; i < 6; ++i) {
                long long x = a[i], z = b[i % 3], want;
                long long got = is64 ? y[i] : (long long)y32[i];
                if (op == 4) want = z < 0 ? (x == 1 ? 1 : 0) : (long long)llround(pow((double)x, (double)z));
                else if (op == 3) want = x / z;
                else want = op == 0 ? x + z : op == 1 ? x - z : x * z;
                if (op == 4 && z < 0 && x == -1) want = (z & 1) ? -1 : 1;
                CHECK_EQ(want, got);
            }
        }
}

/* opara_logic_binary: a [2,3] against b [3] (broadcast), every op code on the types that take it. */
OT_TEST(logic_binary_kernel_matches_a_reference) {
    int a[6] = {7, -7, 3, 0, 2, -3}, b[3] = {2, 3, -2}, y32[6];
    float fa[6] = {1.0f, NAN, -2.0f, 0.0f, INFINITY, 0.5f}, fb[3] = {1.0f, 0.0f, 0.5f};
    unsigned char ba[6] = {0, 1, 1, 0, 1, 0}, bb[3] = {1, 1, 0}, ua[6] = {1, 128, 255, 3, 7, 9}, ub[3] = {1, 0, 8}, y[6];
    int meta[7] = {2, 2, 3, 3, 1, 0, 1}, n = 6, op, dtype, i;
    const int* pm = meta;
    for (op = 0; op <= 11; ++op) {
        int is_bool = op >= 5 && op <= 7, is_shift = op >= 10, is_mod = op == 8 || op == 9, pass;
        for (pass = 0; pass < (op <= 4 ? 2 : 1); ++pass) { /* comparisons: i32, then f32 */
            int is_f = op <= 4 && pass == 1;
            const unsigned char* pa = is_bool ? ba : is_shift ? ua : is_f ? (const unsigned char*)fa : (const unsigned char*)a;
            const unsigned char* pb = is_bool ? bb : is_shift ? ub : is_f ? (const unsigned char*)fb : (const unsigned char*)b;
            unsigned char* py = is_mod ? (unsigned char*)y32 : y;
            void* p[] = KX_ARGS(&pa, &pb, &py, &n, &op, &dtype, &pm);
            dtype = is_bool ? 9 : is_shift ? 2 : is_f ? 1 : 6;
            REQUIRE(kx_run("opara_logic_binary", 1, 1, 1, 8, 1, 1, p) == 0);
            for (i = 0; i < 6; ++i) {
                double x = is_f ? fa[i] : a[i], z = is_f ? fb[i % 3] : b[i % 3];
                long long want, got = is_mod ? y32[i] : y[i];
                if (op <= 4) want = op == 0 ? x == z : op == 1 ? x > z : op == 2 ? x < z : op == 3 ? x >= z : x <= z;
                else if (is_bool) want = op == 5 ? (ba[i] && bb[i % 3]) : op == 6 ? (ba[i] || bb[i % 3]) : (!ba[i] != !bb[i % 3]);
                else if (is_mod) want = op == 9 ? a[i] % b[i % 3] : (long long)(a[i] - b[i % 3] * floor((double)a[i] / b[i % 3]));
                else want = ub[i % 3] >= 8 ? 0 : op == 10 ? (ua[i] << ub[i % 3]) & 255 : ua[i] >> ub[i % 3];
                if (want != got) OT_LOG("op %d dtype %d i %d: %lld, want %lld", op, dtype, i, got, want);
                CHECK_EQ(want, got);
            }
        }
    }
}

OT_TEST(logic_unary_kernel_matches_a_reference) {
    float x[6] = {NAN, INFINITY, -INFINITY, 0.0f, -1.0f, 3.0f};
    unsigned char b[6] = {0, 1, 1, 0, 2, 0}, y[6];
    int n = 6, op, dtype, flags, i;
    for (op = 0; op <= 2; ++op)
        for (flags = 1; flags <= (op == 2 ? 3 : 1); ++flags) {
            const unsigned char* px = op == 0 ? b : (const unsigned char*)x;
            unsigned char* py = y;
            void* p[] = KX_ARGS(&px, &py, &n, &op, &dtype, &flags);
            dtype = op == 0 ? 9 : 1;
            REQUIRE(kx_run("opara_logic_unary", 1, 1, 1, 4, 1, 1, p) == 0);
            for (i = 0; i < 6; ++i) {
                int want = op == 0 ? b[i] == 0 : op == 1 ? x[i] != x[i]
                                                          : ((flags & 2) && x[i] == INFINITY) || ((flags & 1) && x[i] == -INFINITY);
                CHECK_EQ(want, y[i]);
            }
        }
}

/* opara_variadic_step, one launch per input as the lowering makes them: Max with NaN (propagated), Mean
   (summed in float, divided in the last step) of x [2,3], z [3] and w [2,1]. */
OT_TEST(variadic_step_kernel_matches_a_reference) {
    float x[6] = {1, NAN, -2, 0.5f, 4, -1}, z[3] = {0.25f, 3, -5}, w[2] = {2, -0.5f}, y[6];
    int meta_x[7] = {2, 2, 3, 3, 1}, meta_z[7] = {2, 2, 3, 0, 1}, meta_w[7] = {2, 2, 3, 1, 0};
    const float* ins[3] = {x, z, w};
    const int* metas[3] = {meta_x, meta_z, meta_w};
    int n = 6, op, dtype = 1, k, i;
    for (op = 0; op <= 3; op += 2) { /* Max, Mean */
        for (k = 0; k < 3; ++k) {
            const unsigned char* px = (const unsigned char*)ins[k];
            unsigned char* py = (unsigned char*)y;
            const int* pm = metas[k];
            int first = k == 0, divide_by = op == 2 && k == 2 ? 3 : 0;
            void* p[] = KX_ARGS(&px, &py, &n, &op, &dtype, &first, &divide_by, &pm);
            REQUIRE(kx_run("opara_variadic_step", 1, 1, 1, 4, 1, 1, p) == 0);
        }
        for (i = 0; i < 6; ++i) {
            float a = x[i], b = z[i % 3], c = w[i / 3], want;
            if (op == 0) want = a != a || b != b || c != c ? NAN : fmaxf(fmaxf(a, b), c);
            else want = ((a + b) + c) / 3.0f;
            CHECK(want == y[i] || (want != want && y[i] != y[i]));
        }
    }
}

OT_TEST(where_selects_with_broadcast) {
    unsigned char cond[3] = {1, 0, 1};
    float x[6] = {1, 2, 3, 4, 5, 6}, z = -1, y[6];
    int meta[1 + 2 * 4] = {2, 2, 3, 0, 1, 3, 1, 0, 0}, n = 6, es = 4, i; /* cond [3], x [2,3], z scalar */
    const unsigned char *pc = cond, *px = (const unsigned char*)x, *pz = (const unsigned char*)&z;
    unsigned char* py = (unsigned char*)y;
    const int* pm = meta;
    void* p[] = KX_ARGS(&pc, &px, &pz, &py, &n, &es, &pm);
    REQUIRE(kx_run("opara_where", 1, 1, 1, 4, 1, 1, p) == 0);
    for (i = 0; i < 6; ++i) CHECK_NEAR(cond[i % 3] ? x[i] : -1.0, y[i], 0);
}

OT_TEST(cast_between_onnx_types) {
    float f[5] = {1.75f, -2.5f, 0.0f, 300.0f, -0.25f};
    long long i64[5];
    int i32[5], n = 5, from = 1, to = 7, i;
    unsigned char b[5], u8[5];
    const unsigned char* px = (const unsigned char*)f;
    unsigned char* py = (unsigned char*)i64;
    void* p[] = KX_ARGS(&px, &py, &n, &from, &to);
    REQUIRE(kx_run("opara_cast_float", 1, 1, 1, 8, 1, 1, p) == 0); /* float sources: cast.cu's opara_cast_float */
    for (i = 0; i < 5; ++i) CHECK_EQ((long long)f[i], i64[i]);
    to = 9, py = b;
    REQUIRE(kx_run("opara_cast_float", 1, 1, 1, 8, 1, 1, p) == 0);
    for (i = 0; i < 5; ++i) CHECK_EQ(f[i] != 0.0f, b[i]);
    from = 7, to = 6, px = (const unsigned char*)i64, py = (unsigned char*)i32;
    REQUIRE(kx_run("opara_cast", 1, 1, 1, 8, 1, 1, p) == 0);
    for (i = 0; i < 5; ++i) CHECK_EQ(i64[i], i32[i]);
    from = 6, to = 2, px = (const unsigned char*)i32, py = u8;
    REQUIRE(kx_run("opara_cast", 1, 1, 1, 8, 1, 1, p) == 0);
    CHECK_EQ(44, u8[3]); /* 300 wraps modulo 256 */
    from = 6, to = 1, py = (unsigned char*)f;
    REQUIRE(kx_run("opara_cast", 1, 1, 1, 8, 1, 1, p) == 0);
    CHECK_NEAR(-2.0, f[1], 0);
}

/* binary16 by its definition: sign * 2^(e-15) * (1 + m/1024), subnormals m * 2^-24. */
static double half_ref(unsigned short h) {
    int e = (h >> 10) & 0x1F, m = h & 0x3FF;
    double v = e == 0 ? ldexp((double)m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(1.0 + m / 1024.0, e - 15);
    return (h & 0x8000) ? -v : v;
}

/* opara_cast_float: every f16 pattern to f32 and back (bit for bit), f64 rounding once (ties to even,
   overflow to inf, subnormals, a carry into the exponent), f16 to integers and bool. */
OT_TEST(cast_f16_every_pattern_and_rounding) {
    static const double src[] = {1.0, -0.0, 65504.0, 65519.99, 65520.0, 1e6, 0x1p-24, 0x1p-25, 0x3p-25,
                                 1.0 + 0x1p-11, 1.0 + 0x3p-11, 0x1p-14 - 0x1p-25, 1.0 + 0x1p-11 + 0x1p-40, -2.5};
    static const unsigned short want16[] = {0x3C00, 0x8000, 0x7BFF, 0x7BFF, 0x7C00, 0x7C00, 0x0001, 0x0000, 0x0002,
                                            0x3C00, 0x3C02, 0x0400, 0x3C01, 0xC100};
    static unsigned short h[65536], back[65536];
    static float f[65536];
    unsigned short h2[14];
    double d[14];
    long long ints[4];
    int n = 65536, from = 10, to = 1, i, bad = 0;
    const unsigned char* px = (const unsigned char*)h;
    unsigned char* py = (unsigned char*)f;
    void* p[] = KX_ARGS(&px, &py, &n, &from, &to);
    for (i = 0; i < 65536; ++i) h[i] = (unsigned short)i;
    REQUIRE(kx_run("opara_cast_float", 4, 1, 1, 64, 1, 1, p) == 0);
    for (i = 0; i < 65536; ++i) {
        double want = half_ref((unsigned short)i);
        if (!((double)f[i] == want || (want != want && f[i] != f[i]))) bad++;
    }
    CHECK_EQ(bad, 0);
    from = 1, to = 10, px = (const unsigned char*)f, py = (unsigned char*)back;
    REQUIRE(kx_run("opara_cast_float", 4, 1, 1, 64, 1, 1, p) == 0);
    for (i = 0, bad = 0; i < 65536; ++i)
        if (f[i] == f[i] ? back[i] != h[i] : (back[i] & 0x7C00) != 0x7C00 || !(back[i] & 0x3FF)) bad++;
    CHECK_EQ(bad, 0);
    for (i = 0; i < 14; ++i) d[i] = src[i];
    n = 14, from = 11, to = 10, px = (const unsigned char*)d, py = (unsigned char*)h2;
    REQUIRE(kx_run("opara_cast_float", 1, 1, 1, 8, 1, 1, p) == 0);
    for (i = 0; i < 14; ++i) CHECK_EQ(want16[i], h2[i]);
    h2[0] = 0xC500, h2[1] = 0x7C00, h2[2] = 0x7E00, h2[3] = 0x3800; /* -5, inf, NaN, 0.5 */
    n = 4, from = 10, to = 7, px = (const unsigned char*)h2, py = (unsigned char*)ints;
    REQUIRE(kx_run("opara_cast_float", 1, 1, 1, 8, 1, 1, p) == 0);
    CHECK_EQ(-5, ints[0]);
    CHECK(ints[1] == -0x7fffffffffffffffLL - 1 && ints[2] == -0x7fffffffffffffffLL - 1); /* ONNX Runtime's rule */
    CHECK_EQ(0, ints[3]);
    to = 9, py = (unsigned char*)ints;
    REQUIRE(kx_run("opara_cast_float", 1, 1, 1, 8, 1, 1, p) == 0);
    CHECK(((unsigned char*)ints)[0] == 1 && ((unsigned char*)ints)[3] == 1);
}

/* Float to integer as ONNX Runtime gives it on x86-64 (its outputs for these inputs, recorded from the
   CPU provider; tests/test_cpu_kernels.c checks the CPU against the same numbers). */
OT_TEST(cast_float_to_int_as_onnx_runtime) {
    static const float in[8] = {3e9f, -300.7f, 255.9f, NAN, INFINITY, 128.5f, 70000.0f, -1.5f};
    static const long long i32[8] = {-2147483648LL, -300, 255, -2147483648LL, -2147483648LL, 128, 70000, -1};
    static const long long u8[8] = {0, 212, 255, 0, 0, 128, 112, 255};
    static const long long i64[8] = {3000000000LL, -300, 255, -9223372036854775807LL - 1, -9223372036854775807LL - 1,
                                     128, 70000, -1};
    long long y64[8];
    int y32[8], n = 8, from = 1, to = 6, i;
    unsigned char y8[8];
    const unsigned char* px = (const unsigned char*)in;
    unsigned char* py = (unsigned char*)y32;
    void* p[] = KX_ARGS(&px, &py, &n, &from, &to);
    REQUIRE(kx_run("opara_cast_float", 1, 1, 1, 8, 1, 1, p) == 0);
    for (i = 0; i < 8; ++i) CHECK_EQ(i32[i], (long long)y32[i]);
    to = 2, py = y8;
    REQUIRE(kx_run("opara_cast_float", 1, 1, 1, 8, 1, 1, p) == 0);
    for (i = 0; i < 8; ++i) CHECK_EQ(u8[i], (long long)y8[i]);
    to = 7, py = (unsigned char*)y64;
    REQUIRE(kx_run("opara_cast_float", 1, 1, 1, 8, 1, 1, p) == 0);
    for (i = 0; i < 8; ++i) CHECK_EQ(i64[i], y64[i]);
}

OT_TEST(strided_copy_transposes_slices_and_concats) {
    /* transpose [2,3,4] with perm (2,0,1): out [4,2,3], out[i][j][k] = in[j][k][i] */
    float x[24], y[24], big[40];
    int meta[1 + 3 * 3] = {3, 4, 2, 3, 1, 12, 4, 6, 3, 1}, n = 24, es = 4, i, j, k;
    long long so = 0, dof = 0;
    const unsigned char* px = (const unsigned char*)x;
    unsigned char* py = (unsigned char*)y;
    const int* pm = meta;
    int meta_path = 0, one = 1, zero = 0; /* fast_ndim 0: the walk from meta */
    void* p[] = KX_ARGS(&px, &py, &n, &es, &so, &dof, &pm, &meta_path, &one, &one, &one, &zero, &zero, &zero, &zero,
                        &zero, &zero, &zero, &zero);
    for (i = 0; i < 24; ++i) x[i] = (float)i;
    REQUIRE(kx_run("opara_strided_copy", 1, 1, 1, 16, 1, 1, p) == 0);
    for (i = 0; i < 4; ++i)
        for (j = 0; j < 2; ++j)
            for (k = 0; k < 3; ++k) CHECK_NEAR(x[j * 12 + k * 4 + i], y[(i * 2 + j) * 3 + k], 0);
    /* slice [2,3,4][:, 2:0:-1, 1::2] -> [2,2,2]: start offset 0*12 + 2*4 + 1, strides 12, -4, 2 */
    {
        int m2[1 + 3 * 3] = {3, 2, 2, 2, 12, -4, 2, 4, 2, 1};
        memcpy(meta, m2, sizeof m2);
        n = 8, so = 9;
        REQUIRE(kx_run("opara_strided_copy", 1, 1, 1, 16, 1, 1, p) == 0);
        for (i = 0; i < 2; ++i)
            for (j = 0; j < 2; ++j)
                for (k = 0; k < 2; ++k) CHECK_NEAR(x[i * 12 + (2 - j) * 4 + 1 + 2 * k], y[(i * 2 + j) * 2 + k], 0);
    }
    /* concat along axis 1: [2,3,4] into the slice [:, 1:4, :] of a [2,5,4] output (dst offset 4) */
    {
        int m3[1 + 3 * 3] = {3, 2, 3, 4, 12, 4, 1, 20, 4, 1};
        memcpy(meta, m3, sizeof m3);
        n = 24, so = 0, dof = 4;
        py = (unsigned char*)big;
        for (i = 0; i < 40; ++i) big[i] = -1;
        REQUIRE(kx_run("opara_strided_copy", 1, 1, 1, 16, 1, 1, p) == 0);
        for (i = 0; i < 2; ++i)
            for (j = 0; j < 5; ++j)
                for (k = 0; k < 4; ++k)
                    CHECK_NEAR(j >= 1 && j < 4 ? x[i * 12 + (j - 1) * 4 + k] : -1.0, big[(i * 5 + j) * 4 + k], 0);
    }
}

/* opara_binary_f32's walk in arguments: [2,3,4,5] against a [1,3,1,5] operand, as 4, 3 (the outer two
   merged), 2 and 1 dims over the same elements where those describe them. */
OT_TEST(binary_walk_in_arguments_matches_the_reference) {
    float *a = rnd_vec(120), *b = rnd_vec(15), *y = zeros(120);
    const float *pa = a, *pb = b;
    int meta[1] = {0}, n = 120, op = OPARA__CUDA_BIN_MUL, act = OPARA__CUDA_ACT_NONE, i, fast = 4, d1 = 3, d2 = 4, d3 = 5;
    int as0 = 60, as1 = 20, as2 = 5, as3 = 1, bs0 = 0, bs1 = 5, bs2 = 0, bs3 = 1;
    const int* pm = meta;
    void* p[] = KX_ARGS(&pa, &pb, &y, &n, &op, &act, &pm, &fast, &d1, &d2, &d3, &as0, &as1, &as2, &as3, &bs0, &bs1, &bs2, &bs3);
    REQUIRE(kx_run("opara_binary_f32", 2, 1, 1, 32, 1, 1, p) == 0);
    for (i = 0; i < n; ++i) CHECK_EQ(a[i] * b[(i / 20) % 3 * 5 + i % 5], y[i]);
    /* the bias case: [24, 5] against [5] in 2 dims; then a scalar in 1 dim */
    fast = 2, d1 = d2 = 1, d3 = 5, as0 = as1 = bs0 = bs1 = 0, d2 = 24, as2 = 5, as3 = 1, bs2 = 0, bs3 = 1;
    op = OPARA__CUDA_BIN_SUB;
    REQUIRE(kx_run("opara_binary_f32", 1, 1, 1, 64, 1, 1, p) == 0);
    for (i = 0; i < n; ++i) CHECK_EQ(a[i] - b[i % 5], y[i]);
    fast = 1, d2 = 1, d3 = 120, as2 = 0, bs3 = 0, op = OPARA__CUDA_BIN_DIV;
    REQUIRE(kx_run("opara_binary_f32", 1, 1, 1, 64, 1, 1, p) == 0);
    for (i = 0; i < n; ++i) CHECK_EQ(a[i] / b[0], y[i]);
    free(a), free(b), free(y);
}

/* opara_binary_f32's act: the result goes through opara__k_act (Relu exactly, the two GELUs within
   float rounding of the formula), on the meta walk and the walk in arguments. */
OT_TEST(binary_with_a_fused_activation_matches_the_formula) {
    static const int acts[3] = {OPARA__CUDA_ACT_RELU, OPARA__CUDA_ACT_GELU, OPARA__CUDA_ACT_GELU_TANH};
    float *a = rnd_vec(60), *b = rnd_vec(5), *y = zeros(60);
    const float *pa = a, *pb = b;
    int meta[1 + 3 * 2] = {2, 12, 5, 5, 1, 0, 1}, n = 60, op = OPARA__CUDA_BIN_ADD, act, i, k, fast;
    int one = 1, d3 = 5, d2 = 12, as2 = 5, as3 = 1, zero = 0;
    const int* pm = meta;
    for (k = 0; k < 3; ++k)
        for (fast = 0; fast <= 2; fast += 2) { /* 0: meta [12, 5]; 2: the same in arguments */
            void* p[] = KX_ARGS(&pa, &pb, &y, &n, &op, &act, &pm, &fast, &one, &d2, &d3, &zero, &zero, &as2, &as3,
                                &zero, &zero, &zero, &as3);
            act = acts[k];
            REQUIRE(kx_run("opara_binary_f32", 2, 1, 1, 32, 1, 1, p) == 0);
            for (i = 0; i < n; ++i) {
                double want = ref_act((double)(a[i] + b[i % 5]), act, 0, 0);
                if (act == OPARA__CUDA_ACT_RELU) CHECK_EQ((float)want, y[i]);
                else CHECK_NEAR(y[i], want, 2e-6 * fabs(want) + 1e-6);
            }
        }
    free(a), free(b), free(y);
}

/* opara_strided_copy in 8-byte units: a transpose [2,3,4] -> [3,2,4] of floats as [3,2,2] units, from
   aligned and from 4-byte-aligned addresses (the kernel then copies bytes). */
OT_TEST(strided_copy_of_wide_units_matches_the_reference) {
    float x[26], y[26];
    int meta[1] = {0}, n = 12, es = 8, fast = 3, d1 = 3, d2 = 2, d3 = 2, i, j, k, shift;
    int s0 = 0, s1 = 2, s2 = 6, s3 = 1, t0 = 0, t1 = 4, t2 = 2, t3 = 1;
    long long so = 0, dof = 0;
    const int* pm = meta;
    for (shift = 0; shift < 2; ++shift) {
        const unsigned char* px = (const unsigned char*)(x + shift);
        unsigned char* py = (unsigned char*)(y + shift);
        void* p[] = KX_ARGS(&px, &py, &n, &es, &so, &dof, &pm, &fast, &d1, &d2, &d3, &s0, &s1, &s2, &s3, &t0, &t1,
                            &t2, &t3);
        for (i = 0; i < 26; ++i) x[i] = (float)i, y[i] = -1;
        REQUIRE(kx_run("opara_strided_copy", 1, 1, 1, 16, 1, 1, p) == 0);
        for (i = 0; i < 3; ++i)
            for (j = 0; j < 2; ++j)
                for (k = 0; k < 4; ++k) CHECK_EQ(x[shift + j * 12 + i * 4 + k], y[shift + (i * 2 + j) * 4 + k]);
    }
}

/* ---- pooling, normalisation, reductions ----------------------------------------------------------- */

OT_TEST(pooling_max_and_average_with_padding) {
    int nc = 3, H = 7, W = 6, kh = 3, kw = 2, sh = 2, sw = 2, ph = 1, pw = 1, dh = 1, dw = 2;
    int OH = (H + 2 * ph - dh * (kh - 1) - 1 + sh - 1) / sh + 1; /* ceil_mode */
    int OW = (W + 2 * pw - dw * (kw - 1) - 1) / sw + 1;
    int mode, cip, n = nc * OH * OW, i;
    float *x = rnd_vec((size_t)(nc * H * W)), *y = zeros((size_t)n);
    for (mode = 0; mode < 2; ++mode)
        for (cip = 0; cip < 2; ++cip) {
            const float* px = x;
            void* p[] = KX_ARGS(&px, &y, &nc, &H, &W, &OH, &OW, &kh, &kw, &sh, &sw, &ph, &pw, &dh, &dw, &mode, &cip, &ph, &pw);
            REQUIRE(kx_run("opara_pool2d_f32", 2, 1, 1, 32, 1, 1, p) == 0);
            for (i = 0; i < n; ++i) {
                int q = i % OW, pp = (i / OW) % OH, c = i / (OW * OH), r, s, cnt = 0, cntpad = 0;
                double best = -1e30, sum = 0;
                for (r = 0; r < kh; ++r)
                    for (s = 0; s < kw; ++s) {
                        int ih = pp * sh - ph + r * dh, iw = q * sw - pw + s * dw;
                        if (ih < H + ph && iw < W + pw) ++cntpad; /* inside the padded input */
                        if (ih < 0 || iw < 0 || ih >= H || iw >= W) continue;
                        ++cnt;
                        sum += x[(c * H + ih) * W + iw];
                        if (x[(c * H + ih) * W + iw] > best) best = x[(c * H + ih) * W + iw];
                    }
                CHECK_NEAR(mode == 0 ? best : sum / (cip ? cntpad : cnt), y[i], 1e-6);
            }
        }
    free(x), free(y);
}

OT_TEST(softmax_over_any_axis) {
    int dims[3] = {3, 5, 4}, axis, i;
    float* x = rnd_vec(60);
    float* y = zeros(60);
    for (i = 0; i < 60; ++i) x[i] *= 5;
    for (axis = 0; axis < 3; ++axis) {
        int outer = 1, inner = 1, len = dims[axis], d, o, in, j;
        const float* px = x;
        void* p[] = KX_ARGS(&px, &y, &len, &inner);
        for (d = 0; d < axis; ++d) outer *= dims[d];
        for (d = axis + 1; d < 3; ++d) inner *= dims[d];
        REQUIRE(kx_run("opara_softmax_f32", (unsigned)(outer * inner), 1, 1, 4, 1, 1, p) == 0);
        for (o = 0; o < outer; ++o)
            for (in = 0; in < inner; ++in) {
                double s = 0;
                for (j = 0; j < len; ++j) s += exp(x[(o * len + j) * inner + in]);
                for (j = 0; j < len; ++j) CHECK_NEAR(exp(x[(o * len + j) * inner + in]) / s, y[(o * len + j) * inner + in], 1e-6);
            }
    }
    free(x), free(y);
}

/* Softmax / LogSoftmax of one row in double, the same definition as the kernels: a NaN anywhere,
   +inf (inf - inf) or a row of only -inf gives NaN. */
static void softmax_row_ref(const float* x, int len, int log_form, double* want) {
    double m = -INFINITY, s = 0;
    int j;
    for (j = 0; j < len; ++j)
        if (x[j] != x[j] || x[j] > m) m = x[j] != x[j] || m != m ? NAN : x[j];
    for (j = 0; j < len; ++j) s += exp(x[j] - m);
    for (j = 0; j < len; ++j) want[j] = log_form ? x[j] - m - log(s) : exp(x[j] - m) / s;
}

/* opara_softmax_rows_f32 for the row lengths around a warp and the lowering's 1024 limit, 1, 4 and
   32 lanes per row and the lanes the lowering picks, 7 rows (the last block partly idle): random
   rows, a row with a NaN, one with +inf, one with -inf entries, one of only -inf. */
OT_TEST(softmax_rows_short_rows_match_definition) {
    static const int lens[8] = {1, 31, 32, 33, 128, 1000, 1024, 1025};
    const int rows = 7;
    int li, lk, log_form;
    for (li = 0; li < 8; ++li)
        for (lk = 0; lk < 4; ++lk)
            for (log_form = 0; log_form < 2; ++log_form) {
                int len = lens[li], lanes = lk == 0 ? 1 : lk == 1 ? 4 : 32, r, j, bad = 0;
                size_t n = (size_t)rows * (size_t)len;
                float *x = rnd_vec(n), *y = zeros(n);
                double* want = (double*)malloc((size_t)len * sizeof *want);
                const float* px = x;
                unsigned per_block, grid;
                void* p[] = KX_ARGS(&px, &y, (void*)&rows, &len, &lanes, &log_form);
                if (lk == 3)
                    for (lanes = 1; lanes < 32 && lanes * 4 < len; lanes *= 2) {
                    }
                per_block = 256u / (unsigned)lanes;
                grid = ((unsigned)rows + per_block - 1) / per_block;
                for (j = 0; j < (int)n; ++j) x[j] *= 8;
                x[1 * len + len / 2] = NAN;
                x[2 * len + len - 1] = INFINITY;
                x[3 * len] = -INFINITY;
                x[3 * len + len - 1] = -INFINITY;
                for (j = 0; j < len; ++j) x[4 * len + j] = -INFINITY;
                OT_LOG("len %d lanes %d log %d", len, lanes, log_form);
                REQUIRE(kx_run("opara_softmax_rows_f32", grid, 1, 1, 256, 1, 1, p) == 0);
                for (r = 0; r < rows; ++r) {
                    softmax_row_ref(x + (size_t)r * len, len, log_form, want);
                    for (j = 0; j < len; ++j) {
                        double got = y[(size_t)r * len + j], tol = log_form ? 1e-5 * (fabs(want[j]) + 1) : 1e-6;
                        if (want[j] != want[j] ? got == got : isinf(want[j]) ? got != want[j] : !(fabs(got - want[j]) <= tol))
                            bad++;
                    }
                }
                CHECK_EQ(bad, 0);
                free(x), free(y), free(want);
                T->log_len = 0;
                T->log[0] = 0;
            }
}

OT_TEST(layer_norm_matches_definition) {
    int rows = 5, cols = 300, r, c;
    float *x = rnd_vec((size_t)(rows * cols)), *y = zeros((size_t)(rows * cols)), *sc = rnd_vec((size_t)cols);
    float *b = rnd_vec((size_t)cols), eps = 1e-5f;
    const float *px = x, *ps = sc, *pb = b;
    void* p[] = KX_ARGS(&px, &ps, &pb, &y, &cols, &eps);
    REQUIRE(kx_run("opara_layer_norm_f32", (unsigned)rows, 1, 1, 64, 1, 1, p) == 0);
    for (r = 0; r < rows; ++r) {
        double m = 0, v = 0;
        for (c = 0; c < cols; ++c) m += x[r * cols + c];
        m /= cols;
        for (c = 0; c < cols; ++c) v += (x[r * cols + c] - m) * (x[r * cols + c] - m);
        v /= cols;
        for (c = 0; c < cols; ++c) CHECK_NEAR((x[r * cols + c] - m) / sqrt(v + eps) * sc[c] + b[c], y[r * cols + c], 1e-4);
    }
    free(x), free(y), free(sc), free(b);
}

OT_TEST(reduce_mean_any_axes) {
    /* x [2,3,4,5]: axes {1,3} keep [2,4] (strides 60, 5), reduce [3,5] (strides 20, 1) */
    int meta[] = {2, 2, 4, 60, 5, 2, 3, 5, 20, 1}, i, j, k, l;
    float *x = rnd_vec(120), y[8], *py = y;
    const float* px = x;
    const int* pm = meta;
    int mean = 0; /* the kind */
    void* p[] = KX_ARGS(&px, &py, &pm, &mean);
    REQUIRE(kx_run("opara_reduce_f32", 8, 1, 1, 8, 1, 1, p) == 0);
    for (i = 0; i < 2; ++i)
        for (k = 0; k < 4; ++k) {
            double s = 0;
            for (j = 0; j < 3; ++j)
                for (l = 0; l < 5; ++l) s += x[((i * 3 + j) * 4 + k) * 5 + l];
            CHECK_NEAR(s / 15, y[i * 4 + k], 1e-6);
        }
    /* GlobalAveragePool: keep [6] (stride 20), reduce [20] (stride 1) */
    {
        int m2[] = {1, 6, 20, 1, 20, 1};
        pm = m2;
        REQUIRE(kx_run("opara_reduce_f32", 6, 1, 1, 16, 1, 1, p) == 0);
        for (i = 0; i < 6; ++i) {
            double s = 0;
            for (j = 0; j < 20; ++j) s += x[i * 20 + j];
            CHECK_NEAR(s / 20, y[i], 1e-6);
        }
    }
    free(x);
}

/* opara_reduce_f32, every kind but the mean (above), over axes {1, 3} of x [2,3,4,5] (meta as the mean's)
   against double loops; LogSumExp with an infinite and a NaN set. */
OT_TEST(reduce_every_kind_any_axes) {
    int meta[] = {2, 2, 4, 60, 5, 2, 3, 5, 20, 1}, i, j, k, l, kind;
    float *x = rnd_vec(120), y[8], *py = y;
    const float* px = x;
    const int* pm = meta;
    void* p[] = KX_ARGS(&px, &py, &pm, &kind);
    for (kind = 1; kind <= 9; ++kind) {
        REQUIRE(kx_run("opara_reduce_f32", 8, 1, 1, 16, 1, 1, p) == 0);
        for (i = 0; i < 2; ++i)
            for (k = 0; k < 4; ++k) {
                double acc = kind == 4 ? 1 : kind == 2 ? -HUGE_VAL : kind == 3 ? HUGE_VAL : 0, mx = -HUGE_VAL, want;
                for (j = 0; j < 3; ++j)
                    for (l = 0; l < 5; ++l) mx = fmax(mx, x[((i * 3 + j) * 4 + k) * 5 + l]);
                for (j = 0; j < 3; ++j)
                    for (l = 0; l < 5; ++l) {
                        double v = x[((i * 3 + j) * 4 + k) * 5 + l];
                        if (kind == 2) acc = fmax(acc, v);
                        else if (kind == 3) acc = fmin(acc, v);
                        else if (kind == 4) acc *= v;
                        else if (kind == 5) acc += fabs(v);
                        else if (kind == 6 || kind == 9) acc += v * v;
                        else if (kind == 8) acc += exp(v - mx);
                        else acc += v;
                    }
                want = kind == 6 ? sqrt(acc) : kind == 7 ? log(acc) : kind == 8 ? log(acc) + mx : acc;
                if (kind == 7 && acc <= 0) continue; /* log of a negative sum: NaN either way */
                CHECK_NEAR(want, y[i * 4 + k], 1e-5 + 1e-5 * fabs(want));
            }
    }
    x[0] = INFINITY, x[60] = NAN; /* output 0's set has +inf, output 4's a NaN */
    kind = 8;
    REQUIRE(kx_run("opara_reduce_f32", 8, 1, 1, 16, 1, 1, p) == 0);
    CHECK(y[0] == INFINITY && y[4] != y[4]);
    kind = 2;
    REQUIRE(kx_run("opara_reduce_f32", 8, 1, 1, 16, 1, 1, p) == 0);
    CHECK(y[0] == INFINITY && y[4] != y[4]); /* max keeps the NaN */
    free(x);
}

/* ArgMax/ArgMin over the middle axis of [2, 5, 3] with ties and a NaN (first in one row, inside
   another), Hardmax and LogSoftmax of the same rows, CumSum in its four modes. */
OT_TEST(arg_reduce_hardmax_log_softmax_cum_sum) {
    float x[30], y[30], *py = y;
    long long yi[6], *pyi = yi;
    const float* px = x;
    int n = 6, len = 5, inner = 3, is_min, last, r, j, ex, rev;
    for (j = 0; j < 30; ++j) x[j] = (float)((j * 7) % 5) - 2.0f; /* values repeat: ties */
    x[0] = NAN, x[3 * 2 + 1] = NAN;
    for (is_min = 0; is_min < 2; ++is_min)
        for (last = 0; last < 2; ++last) {
            void* p[] = KX_ARGS(&px, &pyi, &n, &len, &inner, &is_min, &last);
            REQUIRE(kx_run("opara_arg_reduce_f32", 1, 1, 1, 32, 1, 1, p) == 0);
            for (r = 0; r < n; ++r) {
                const float* row = x + (r / inner) * len * inner + r % inner;
                int at = 0;
                for (j = 1; j < len; ++j) {
                    float v = row[j * inner], b = row[at * inner];
                    if (is_min ? (last ? v <= b : v < b) : (last ? v >= b : v > b)) at = j;
                }
                CHECK_EQ(yi[r], at);
            }
        }
    {
        void* p[] = KX_ARGS(&px, &py, &n, &len, &inner);
        REQUIRE(kx_run("opara_hardmax_f32", 1, 1, 1, 32, 1, 1, p) == 0);
        for (r = 0; r < n; ++r) {
            const float* row = x + (r / inner) * len * inner + r % inner;
            int at = 0;
            for (j = 1; j < len; ++j)
                if (row[j * inner] > row[at * inner]) at = j;
            for (j = 0; j < len; ++j) CHECK(y[(r / inner) * len * inner + r % inner + j * inner] == (j == at ? 1.0f : 0.0f));
        }
    }
    x[0] = 0.25f, x[7] = -1.5f;
    {
        void* p[] = KX_ARGS(&px, &py, &len, &inner);
        REQUIRE(kx_run("opara_log_softmax_f32", 6, 1, 1, 8, 1, 1, p) == 0);
        for (r = 0; r < n; ++r) {
            int base = (r / inner) * len * inner + r % inner;
            double mx = -HUGE_VAL, sum = 0;
            for (j = 0; j < len; ++j) mx = fmax(mx, x[base + j * inner]);
            for (j = 0; j < len; ++j) sum += exp(x[base + j * inner] - mx);
            for (j = 0; j < len; ++j) CHECK_NEAR(x[base + j * inner] - mx - log(sum), y[base + j * inner], 1e-5);
        }
    }
    for (ex = 0; ex < 2; ++ex)
        for (rev = 0; rev < 2; ++rev) {
            int f32 = 1;
            void* p[] = KX_ARGS(&px, &py, &n, &len, &inner, &ex, &rev, &f32);
            REQUIRE(kx_run("opara_cum_sum", 1, 1, 1, 32, 1, 1, p) == 0);
            for (r = 0; r < n; ++r) {
                int base = (r / inner) * len * inner + r % inner;
                double sum = 0;
                for (j = 0; j < len; ++j) {
                    int at = base + (rev ? len - 1 - j : j) * inner;
                    if (!ex) sum += x[at];
                    CHECK_NEAR(sum, y[at], 1e-6);
                    if (ex) sum += x[at];
                }
            }
        }
}

/* InstanceNormalization (groups: the 6 planes of [2, 3, 20]) and MeanVarianceNormalization (groups
   over dims 0 and 2: per channel) against their definitions. */
OT_TEST(group_norm_instance_and_mvn) {
    int inst[] = {1, 6, 20, 1, 20, 1}, mvn[] = {1, 3, 20, 2, 2, 20, 60, 1}, C = 3, mode, i, j, c;
    float *x = rnd_vec(120), *y = zeros(120), *sc = rnd_vec(3), *b = rnd_vec(3), eps = 1e-3f;
    const float *px = x, *ps = sc, *pb = b;
    const int* pm = inst;
    void* p[] = KX_ARGS(&px, &ps, &pb, &y, &pm, &C, &mode, &eps);
    mode = 0;
    REQUIRE(kx_run("opara_group_norm_f32", 6, 1, 1, 16, 1, 1, p) == 0);
    for (i = 0; i < 6; ++i) {
        double m = 0, v = 0;
        for (j = 0; j < 20; ++j) m += x[i * 20 + j] / 20.0;
        for (j = 0; j < 20; ++j) v += (x[i * 20 + j] - m) * (x[i * 20 + j] - m) / 20.0;
        for (j = 0; j < 20; ++j) CHECK_NEAR((x[i * 20 + j] - m) / sqrt(v + eps) * sc[i % 3] + b[i % 3], y[i * 20 + j], 1e-4);
    }
    mode = 1, pm = mvn, eps = 1e-9f;
    REQUIRE(kx_run("opara_group_norm_f32", 3, 1, 1, 16, 1, 1, p) == 0);
    for (c = 0; c < 3; ++c) {
        double m = 0, v = 0;
        for (i = 0; i < 2; ++i)
            for (j = 0; j < 20; ++j) m += x[(i * 3 + c) * 20 + j] / 40.0;
        for (i = 0; i < 2; ++i)
            for (j = 0; j < 20; ++j) v += (x[(i * 3 + c) * 20 + j] - m) * (x[(i * 3 + c) * 20 + j] - m) / 40.0;
        for (i = 0; i < 2; ++i)
            for (j = 0; j < 20; ++j) CHECK_NEAR((x[(i * 3 + c) * 20 + j] - m) / sqrt(v), y[(i * 3 + c) * 20 + j], 1e-4);
    }
    free(x), free(y), free(sc), free(b);
}

/* LRN over [1, 5, 4] with size 3, PRelu with a per-channel slope, Shrink, GlobalMaxPool with a NaN. */
OT_TEST(lrn_prelu_shrink_global_max_match_definitions) {
    int n = 20, C = 5, inner = 4, size = 3, i, cc, meta[] = {2, 5, 4, 4, 1, 1, 0};
    float *x = rnd_vec(20), *y = zeros(20), alpha = 0.1f, beta = 0.75f, bias = 2.0f, *slope = rnd_vec(5);
    float lambd = 0.3f, sb = 0.1f, m[5], *pm5 = m;
    const float *px = x, *pslope = slope;
    const int* pmeta = meta;
    void* pl[] = KX_ARGS(&px, &y, &n, &C, &inner, &size, &alpha, &beta, &bias);
    void* pp[] = KX_ARGS(&px, &pslope, &y, &n, &pmeta);
    void* ps[] = KX_ARGS(&px, &y, &n, &lambd, &sb);
    void* pg[] = KX_ARGS(&px, &pm5, &inner);
    REQUIRE(kx_run("opara_lrn_f32", 1, 1, 1, 32, 1, 1, pl) == 0);
    for (i = 0; i < n; ++i) {
        int c = i / inner;
        double s = 0;
        for (cc = c - 1; cc <= c + 1; ++cc)
            if (cc >= 0 && cc < C) s += (double)x[cc * inner + i % inner] * x[cc * inner + i % inner];
        CHECK_NEAR(x[i] / pow(bias + alpha / size * s, beta), y[i], 1e-5);
    }
    REQUIRE(kx_run("opara_prelu_f32", 1, 1, 1, 32, 1, 1, pp) == 0);
    for (i = 0; i < n; ++i) CHECK_NEAR(x[i] < 0 ? x[i] * slope[i / inner] : x[i], y[i], 1e-7);
    REQUIRE(kx_run("opara_shrink_f32", 1, 1, 1, 32, 1, 1, ps) == 0);
    for (i = 0; i < n; ++i) CHECK_NEAR(x[i] < -lambd ? x[i] + sb : x[i] > lambd ? x[i] - sb : 0.0, y[i], 1e-7);
    x[6] = NAN;
    REQUIRE(kx_run("opara_global_max_f32", 5, 1, 1, 4, 1, 1, pg) == 0);
    for (i = 0; i < 5; ++i) {
        float want = x[i * 4];
        for (cc = 1; cc < 4; ++cc) want = x[i * 4 + cc] > want ? x[i * 4 + cc] : want;
        if (i == 1) CHECK(m[i] != m[i]);
        else CHECK_NEAR(want, m[i], 0);
    }
    free(x), free(y), free(slope);
}

/* MaxPool's Indices (row- and column-major), then MaxUnpool puts the maxima back where they were. */
OT_TEST(maxpool_indices_and_unpool_round_trip) {
    int nc = 2, H = 4, W = 6, OH = 2, OW = 3, k = 2, s = 2, zero = 0, one = 1, order, i, n_in = 12, n_out = 48, plane = 6;
    float *x = rnd_vec(48), *y = zeros(12), *back = zeros(48);
    long long idx[12], *pi = idx;
    const float* px = x;
    for (order = 0; order < 2; ++order) {
        void* p[] = KX_ARGS(&px, &y, &pi, &nc, &H, &W, &OH, &OW, &k, &k, &s, &s, &zero, &zero, &one, &one, &order);
        REQUIRE(kx_run("opara_maxpool2d_idx_f32", 1, 1, 1, 32, 1, 1, p) == 0);
        for (i = 0; i < 12; ++i) {
            int q = i % OW, r = (i / OW) % OH, c = i / 6, a, b, bh = 0, bw = 0;
            float best = -1e30f;
            for (a = 0; a < 2; ++a)
                for (b = 0; b < 2; ++b)
                    if (x[(c * H + 2 * r + a) * W + 2 * q + b] > best) best = x[(c * H + 2 * r + a) * W + 2 * q + b], bh = 2 * r + a, bw = 2 * q + b;
            CHECK_NEAR(best, y[i], 0);
            CHECK_EQ(idx[i], (long long)c * H * W + (order ? bw * H + bh : bh * W + bw));
        }
    }
    {
        const float* py = y;
        const long long* pidx = idx;
        int phase;
        order = 0;
        {
            void* p[] = KX_ARGS(&px, &y, &pi, &nc, &H, &W, &OH, &OW, &k, &k, &s, &s, &zero, &zero, &one, &one, &order);
            REQUIRE(kx_run("opara_maxpool2d_idx_f32", 1, 1, 1, 32, 1, 1, p) == 0);
        }
        for (phase = 0; phase < 2; ++phase) {
            void* p[] = KX_ARGS(&py, &pidx, &back, &phase, &n_in, &n_out, &plane, &H, &W, &H, &W);
            REQUIRE(kx_run("opara_max_unpool_f32", 1, 1, 1, 32, 1, 1, p) == 0);
        }
        for (i = 0; i < 12; ++i) CHECK_NEAR(y[i], back[idx[i]], 0);
        {
            double nonzero = 0;
            for (i = 0; i < 48; ++i) nonzero += back[i] != 0.0f;
            CHECK_EQ((long long)nonzero, 12);
        }
    }
    free(x), free(y), free(back);
}

/* ---- gather, pad, resize --------------------------------------------------------------------------- */

OT_TEST(gather_with_negative_indices) {
    /* ONNX Gather example: data [[1,1.2],[2.3,3.4],[4.5,5.7]], indices [[0,1],[1,2]] axis 0 */
    float data[6] = {1.0f, 1.2f, 2.3f, 3.4f, 4.5f, 5.7f}, y[8];
    long long idx[4] = {0, 1, 1, -1};
    float want[8] = {1.0f, 1.2f, 2.3f, 3.4f, 2.3f, 3.4f, 4.5f, 5.7f};
    int n = 8, es = 4, is64 = 1, axis_len = 3, inner = 2, nidx = 4, i;
    const unsigned char* px = (const unsigned char*)data;
    const void* pi = idx;
    unsigned char* py = (unsigned char*)y;
    void* p[] = KX_ARGS(&px, &pi, &py, &n, &es, &is64, &axis_len, &inner, &nidx);
    REQUIRE(kx_run("opara_gather", 1, 1, 1, 8, 1, 1, p) == 0);
    for (i = 0; i < 8; ++i) CHECK_NEAR(want[i], y[i], 0);
    /* axis 1 with int32 indices: data [3,3] = 1..9 (as 1.0, 1.2, 1.9 ...), indices [0, 2] */
    {
        float d2[9] = {1.0f, 1.2f, 1.9f, 2.3f, 3.4f, 3.9f, 4.5f, 5.7f, 5.9f}, w2[6] = {1.0f, 1.9f, 2.3f, 3.9f, 4.5f, 5.9f};
        int i32[2] = {0, 2};
        n = 6, is64 = 0, axis_len = 3, inner = 1, nidx = 2, px = (const unsigned char*)d2, pi = i32;
        REQUIRE(kx_run("opara_gather", 1, 1, 1, 8, 1, 1, p) == 0);
        for (i = 0; i < 6; ++i) CHECK_NEAR(w2[i], y[i], 0);
    }
}

/* GatherElements (ONNX's example along axis 1) and an index out of range, which reads nothing and
   gives zero. */
OT_TEST(gather_elements_matches_onnx_example_and_zeroes_out_of_range) {
    float x[4] = {1, 2, 3, 4}, y[4], want[4] = {1, 1, 4, 0};
    long long idx[4] = {0, 0, 1, -3};
    int meta[1 + 2 * 2] = {2, 2, 2, 2, 1}, n = 4, es = 4, is64 = 1, axis = 1, axis_len = 2, i;
    const unsigned char* px = (const unsigned char*)x;
    const void* pi = idx;
    unsigned char* py = (unsigned char*)y;
    const int* pm = meta;
    void* p[] = KX_ARGS(&px, &pi, &py, &n, &es, &is64, &axis, &axis_len, &pm);
    REQUIRE(kx_run("opara_gather_elements", 1, 1, 1, 8, 1, 1, p) == 0);
    for (i = 0; i < 4; ++i) CHECK_NEAR(want[i], y[i], 0);
}

/* ScatterElements: ONNX's example with duplicate indices under add, max keeping a NaN, an index out of
   range skipped (nothing written). The output starts as the data (the lowering copies it first). */
OT_TEST(scatter_elements_reduces_duplicates_in_order) {
    float y[5] = {1, 2, 3, 4, 5}, upd[3] = {1.1f, 2.1f, 7};
    long long idx[3] = {1, 1, 5};
    int meta[1 + 2 * 2] = {2, 1, 3, 5, 1}, lines = 3, es = 4, dtype = 1, red = 1, is64 = 1, axis = 1, axis_len = 5, i;
    const void* pi = idx;
    const unsigned char* pu = (const unsigned char*)upd;
    unsigned char* py = (unsigned char*)y;
    const int* pm = meta;
    void* p[] = KX_ARGS(&pi, &pu, &py, &lines, &es, &dtype, &red, &is64, &axis, &axis_len, &pm);
    lines = 1; /* the one line along axis 1 */
    REQUIRE(kx_run("opara_scatter_elements", 1, 1, 1, 8, 1, 1, p) == 0);
    CHECK_NEAR(1, y[0], 0);
    CHECK_NEAR(2.0f + 1.1f + 2.1f, y[1], 1e-6);
    for (i = 2; i < 5; ++i) CHECK_NEAR(i + 1, y[i], 0);
    upd[0] = NAN, upd[1] = 3, red = 3;
    REQUIRE(kx_run("opara_scatter_elements", 1, 1, 1, 8, 1, 1, p) == 0);
    CHECK(y[1] != y[1]);
}

/* GatherND with batch_dims 1 and ScatterND, ONNX's examples. */
OT_TEST(gather_nd_and_scatter_nd_match_onnx_examples) {
    float x[8] = {0, 1, 2, 3, 4, 5, 6, 7}, y[4], want[4] = {2, 3, 4, 5};
    float data[8] = {1, 2, 3, 4, 5, 6, 7, 8}, upd[4] = {9, 10, 11, 12}, want2[8] = {1, 11, 3, 10, 9, 6, 7, 12};
    long long idx[2] = {1, 0}, idx2[4] = {4, 3, 1, 7}, base = 4;
    int meta[2] = {2, 2}, n = 4, es = 4, is64 = 1, k = 1, m = 1, inner = 2, i;
    const unsigned char* px = (const unsigned char*)x;
    const void* pi = idx;
    unsigned char* py = (unsigned char*)y;
    const int* pm = meta;
    void* p[] = KX_ARGS(&px, &pi, &py, &n, &es, &is64, &k, &m, &inner, &base, &pm);
    REQUIRE(kx_run("opara_gather_nd", 1, 1, 1, 8, 1, 1, p) == 0);
    for (i = 0; i < 4; ++i) CHECK_NEAR(want[i], y[i], 0);
    {
        int meta2[2] = {8, 1}, one = 1, dtype = 1, red = 0, tuples = 4;
        const void* pi2 = idx2;
        const unsigned char* pu = (const unsigned char*)upd;
        unsigned char* pd = (unsigned char*)data;
        const int* pm2 = meta2;
        void* p2[] = KX_ARGS(&pi2, &pu, &pd, &one, &es, &dtype, &red, &is64, &k, &tuples, &pm2);
        REQUIRE(kx_run("opara_scatter_nd", 1, 1, 1, 8, 1, 1, p2) == 0);
        for (i = 0; i < 8; ++i) CHECK_NEAR(want2[i], data[i], 0);
    }
}

OT_TEST(pad_constant_reflect_edge_match_onnx_examples) {
    /* ONNX Pad examples: x [[1,1.2],[2.3,3.4],[4.5,5.7]], pads [0,2,0,0] */
    float x[6] = {1.0f, 1.2f, 2.3f, 3.4f, 4.5f, 5.7f}, y[12];
    float want[3][12] = {{0, 0, 1.0f, 1.2f, 0, 0, 2.3f, 3.4f, 0, 0, 4.5f, 5.7f},
                         {1.0f, 1.2f, 1.0f, 1.2f, 2.3f, 3.4f, 2.3f, 3.4f, 4.5f, 5.7f, 4.5f, 5.7f},
                         {1.0f, 1.0f, 1.0f, 1.2f, 2.3f, 2.3f, 2.3f, 3.4f, 4.5f, 4.5f, 4.5f, 5.7f}};
    int meta[1 + 3 * 2] = {2, 3, 4, 3, 2, 0, 2}, n = 12, es = 4, mode, i;
    long long fill = 0;
    const unsigned char* px = (const unsigned char*)x;
    unsigned char* py = (unsigned char*)y;
    const int* pm = meta;
    void* p[] = KX_ARGS(&px, &py, &n, &es, &mode, &fill, &pm);
    for (mode = 0; mode < 3; ++mode) {
        REQUIRE(kx_run("opara_pad", 1, 1, 1, 8, 1, 1, p) == 0);
        for (i = 0; i < 12; ++i) CHECK_NEAR(want[mode][i], y[i], 0);
    }
    {   /* constant fill value 2.5 and a negative pad (crop one column at the end is not a begin pad:
           crop the first row instead: pads begin [-1, 0]) */
        float f = 2.5f;
        int m2[1 + 3 * 2] = {2, 2, 3, 3, 2, -1, 1};
        memcpy(&fill, &f, sizeof f);
        memcpy(meta, m2, sizeof m2);
        n = 6, mode = 0;
        REQUIRE(kx_run("opara_pad", 1, 1, 1, 8, 1, 1, p) == 0);
        CHECK_NEAR(2.5, y[0], 0);
        CHECK_NEAR(2.3, y[1], 1e-6);
        CHECK_NEAR(3.4, y[2], 1e-6);
        CHECK_NEAR(2.5, y[3], 0);
        CHECK_NEAR(4.5, y[4], 1e-6);
        CHECK_NEAR(5.7, y[5], 1e-6);
    }
}

OT_TEST(resize_matches_onnx_examples) {
    /* resize_upsample_scales_nearest: [[1,2],[3,4]], scales (2, 3), asymmetric? The example uses
       the default half_pixel + round_prefer_floor. */
    float x[4] = {1, 2, 3, 4}, y[24], *py = y;
    float want[24] = {1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4};
    int nc = 1, H = 2, W = 2, OH = 4, OW = 6, mode = 0, coord = 0, nearest = 0, i;
    float sh = 2.0f, sw = 3.0f;
    const float* px = x;
    void* p[] = KX_ARGS(&px, &py, &nc, &H, &W, &OH, &OW, &sh, &sw, &mode, &coord, &nearest);
    REQUIRE(kx_run("opara_resize_f32", 1, 1, 1, 32, 1, 1, p) == 0);
    for (i = 0; i < 24; ++i) CHECK_NEAR(want[i], y[i], 0);
    {   /* resize_downsample_scales_linear: [[1,2,3,4],[5,6,7,8]] scales 0.6 -> [[2.6666665, 4.3333331]] */
        float x2[8] = {1, 2, 3, 4, 5, 6, 7, 8};
        px = x2, H = 2, W = 4, OH = 1, OW = 2, sh = 0.6f, sw = 0.6f, mode = 1;
        REQUIRE(kx_run("opara_resize_f32", 1, 1, 1, 32, 1, 1, p) == 0);
        CHECK_NEAR(2.6666665, y[0], 1e-5);
        CHECK_NEAR(4.3333331, y[1], 1e-5);
        /* resize_upsample_scales_linear_align_corners: [[1,2],[3,4]] x2 ->
           first row 1, 1.333, 1.666, 2 */
        px = x, H = 2, W = 2, OH = 4, OW = 4, sh = 2, sw = 2, coord = 2;
        REQUIRE(kx_run("opara_resize_f32", 1, 1, 1, 32, 1, 1, p) == 0);
        CHECK_NEAR(1.0, y[0], 1e-6);
        CHECK_NEAR(1.3333333, y[1], 1e-6);
        CHECK_NEAR(1.6666667, y[2], 1e-6);
        CHECK_NEAR(2.0, y[3], 1e-6);
        CHECK_NEAR(4.0, y[15], 1e-6);
        CHECK_NEAR(2.0, y[5], 1e-6); /* row 1, column 1 of the ONNX example */
    }
}

/* ---- quantization ------------------------------------------------------------------------------------ */

/* ONNX's quantization of one value without rintf: x / scale in float, ties to even, + zp, saturated; NaN
   to the zero point. */
static int q_ref(float x, float scale, int zp, int lo, int hi) {
    float q = x / scale;
    double f, r;
    if (q != q) return zp;
    if (isinf(q)) return q > 0 ? hi : lo;
    f = floor((double)q);
    r = (double)q - f > 0.5 || ((double)q - f == 0.5 && fmod(f, 2.0) != 0.0) ? f + 1.0 : f;
    r += zp;
    return r < lo ? lo : r > hi ? hi : (int)r;
}

OT_TEST(quantize_dequantize_match_definitions) {
    static const float specials[] = {NAN, INFINITY, -INFINITY, 1e30f, -0.0f};
    int n = 300, inner = 10, mid = 3, to_i8, i, bad = 0;
    float* x = rnd_vec((size_t)n);
    float scale[3] = {0.25f, 0.5f, 0.0625f}, *back = zeros((size_t)n);
    unsigned char zp[3], y[300];
    for (i = 0; i < n; ++i) {
        int c = (i / inner) % mid;
        x[i] = i % 4 == 0 ? scale[c] * ((float)(i % 41) - 20.5f) : x[i] * 200.0f; /* ties, and past the range */
        if (i % 13 == 6) x[i] = specials[(i / 13) % 5];
    }
    for (to_i8 = 0; to_i8 < 2; ++to_i8) {
        const float* px = x;
        const float* ps = scale;
        const unsigned char* pz = zp;
        float* pb = back;
        unsigned char* py = y;
        int type = to_i8 ? 3 : 2, lo = to_i8 ? -128 : 0, hi = to_i8 ? 127 : 255;
        void* p[] = KX_ARGS(&px, &ps, &pz, &py, &n, &inner, &mid, &to_i8);
        void* d[] = KX_ARGS(&py, &ps, &pz, &pb, &n, &inner, &mid, &type);
        zp[0] = (unsigned char)(to_i8 ? -7 : 3), zp[1] = 0, zp[2] = (unsigned char)(to_i8 ? 100 : 250);
        REQUIRE(kx_run("opara_quantize_linear", 2, 1, 1, 64, 1, 1, p) == 0);
        REQUIRE(kx_run("opara_dequantize_linear", 2, 1, 1, 64, 1, 1, d) == 0);
        for (i = 0; i < n; ++i) {
            int c = (i / inner) % mid, z = to_i8 ? (int)(signed char)zp[c] : (int)zp[c];
            int got = to_i8 ? (int)(signed char)y[i] : (int)y[i], want = q_ref(x[i], scale[c], z, lo, hi);
            if (got != want && bad++ < 5) OT_LOG("quantize %s [%d] %g / %g: got %d, want %d", to_i8 ? "i8" : "u8", i,
                                                 (double)x[i], (double)scale[c], got, want);
            if (back[i] != (float)(got - z) * scale[c] && bad++ < 5) OT_LOG("dequantize [%d]: got %g", i, (double)back[i]);
        }
    }
    { /* i32 input, a zero point far away: the difference is taken in 64 bits */
        int v[3] = {-2147483647 - 1, 5, 2147483647}, z = 1000, one = 1, three = 3, type = 6;
        float s = 2.0f, out[3];
        const unsigned char* pv = (const unsigned char*)v;
        const unsigned char* pz = (const unsigned char*)&z;
        const float* ps = &s;
        float* po = out;
        void* d[] = KX_ARGS(&pv, &ps, &pz, &po, &three, &three, &one, &type);
        REQUIRE(kx_run("opara_dequantize_linear", 1, 1, 1, 4, 1, 1, d) == 0);
        for (i = 0; i < 3; ++i) CHECK_EQ(out[i], (float)((double)v[i] - 1000.0) * 2.0f);
    }
    CHECK_EQ(bad, 0);
    free(x), free(back);
}

OT_TEST(dynamic_quantize_matches_onnx_formula) {
    int n = 1000, t, i, bad = 0;
    float* x = rnd_vec((size_t)n);
    unsigned char* y = (unsigned char*)malloc((size_t)n);
    for (t = 0; t < 3; ++t) { /* mixed signs with a NaN, all positive, all zero */
        float lo = 0, hi = 0, scale, got_scale = 0;
        unsigned char got_zp = 0;
        const float* px = x;
        unsigned char* py = y;
        float* ps = &got_scale;
        unsigned char* pz = &got_zp;
        int zp;
        void* p[] = KX_ARGS(&px, &py, &ps, &pz, &n);
        for (i = 0; i < n; ++i) {
            if (t == 1) x[i] = fabsf(x[i]) * 3.0f + 0.25f;
            if (t == 2) x[i] = 0.0f;
            if (t == 0 && i == 17) x[i] = NAN;
            if (x[i] == x[i]) lo = x[i] < lo ? x[i] : lo, hi = x[i] > hi ? x[i] : hi;
        }
        REQUIRE(kx_run("opara_dynamic_quantize_linear", 1, 1, 1, 256, 1, 1, p) == 0);
        scale = hi == lo ? 1.0f : (hi - lo) / 255.0f;
        zp = q_ref(-lo, scale, 0, 0, 255);
        CHECK_EQ(got_scale, scale);
        CHECK_EQ((int)got_zp, zp);
        for (i = 0; i < n; ++i)
            if ((int)y[i] != q_ref(x[i], scale, zp, 0, 255) && bad++ < 5) OT_LOG("[%d] %g: got %d", i, (double)x[i], y[i]);
    }
    CHECK_EQ(bad, 0);
    free(x), free(y);
}

OT_TEST(every_kernel_entry_is_registered_once) {
    const char* names[] = {"opara_unary_f32", "opara_channel_affine_f32", "opara_bias_act_f32", "opara_sgemm_f32",
                           "opara_conv2d_f32", "opara_conv_transpose2d_f32", "opara_binary_f32", "opara_binary_int",
                           "opara_where", "opara_strided_copy", "opara_cast", "opara_cast_float", "opara_pool2d_f32",
                           "opara_softmax_f32", "opara_softmax_rows_f32", "opara_layer_norm_f32", "opara_gather", "opara_pad",
                           "opara_resize_f32", "opara_math_f32", "opara_quantize_linear", "opara_dequantize_linear",
                           "opara_dynamic_quantize_linear", "opara_gather_elements", "opara_scatter_elements",
                           "opara_gather_nd", "opara_scatter_nd", "opara_tile", "opara_trilu", "opara_eye_like",
                           "opara_size", "opara_one_hot", "opara_reverse_sequence", "opara_reduce_f32",
                           "opara_arg_reduce_f32", "opara_hardmax_f32", "opara_log_softmax_f32", "opara_cum_sum",
                           "opara_logic_binary", "opara_logic_unary", "opara_variadic_step", "opara_group_norm_f32",
                           "opara_global_max_f32", "opara_lrn_f32", "opara_prelu_f32", "opara_shrink_f32",
                           "opara_dropout", "opara_maxpool2d_idx_f32", "opara_max_unpool_f32",
                           "opara_resize_taps4_f32"};
    const opara_kernel_entry* e;
    int i, count = 0;
    for (i = 0; i < (int)(sizeof names / sizeof names[0]); ++i) CHECK(kx_find(names[i]) != NULL);
    for (e = kx_registry; e; e = e->next) ++count;
    CHECK_EQ((long long)(sizeof names / sizeof names[0]), count);
}

/* Every kernel the backend launches exists in the host build under that name, in that file. */
OT_TEST(backend_kernel_table_names_registered_entries) {
    int k;
    for (k = 0; k < OPARA__CUK_COUNT; ++k) {
        const char* name = opara__cuda_kernel_name((opara__cuda_kernel)k);
        const char* file = opara__cuda_kernel_file((opara__cuda_kernel)k);
        char path[128];
        FILE* f;
        CHECK(kx_find(name) != NULL);
        snprintf(path, sizeof path, "src/cuda/kernels/%s.cu", file);
        f = fopen(path, "rb");
        if (f) {
            static char text[1 << 16];
            size_t n = fread(text, 1, sizeof text - 1, f);
            text[n] = 0;
            fclose(f);
            CHECK(strstr(text, name) != NULL);
        } else {
            OT_LOG("cannot open %s (run from the repository root)", path);
            CHECK(0);
        }
    }
}

static const opara_test_case tests[] = {
    OT_CASE(unary_activations_match_formulas),
    OT_CASE(math_kernel_matches_references),
    OT_CASE(quantize_dequantize_match_definitions),
    OT_CASE(dynamic_quantize_matches_onnx_formula),
    OT_CASE(batch_norm_affine_matches_definition),
    OT_CASE(group_norm_instance_and_mvn),
    OT_CASE(lrn_prelu_shrink_global_max_match_definitions),
    OT_CASE(maxpool_indices_and_unpool_round_trip),
    OT_CASE(bias_act_broadcasts_like_gemm_c),
    OT_CASE(sgemm_all_transposes_batches_and_c_modes),
    OT_CASE(implicit_gemm_conv_matches_direct_convolution),
    OT_CASE(conv_transpose_matches_scatter_definition),
    OT_CASE(binary_broadcast_matches_numpy_rules),
    OT_CASE(binary_int64_and_int32),
    OT_CASE(where_selects_with_broadcast), OT_CASE(cast_between_onnx_types),
    OT_CASE(cast_f16_every_pattern_and_rounding), OT_CASE(cast_float_to_int_as_onnx_runtime),
    OT_CASE(logic_binary_kernel_matches_a_reference), OT_CASE(logic_unary_kernel_matches_a_reference),
    OT_CASE(variadic_step_kernel_matches_a_reference),
    OT_CASE(strided_copy_transposes_slices_and_concats),
    OT_CASE(binary_walk_in_arguments_matches_the_reference),
    OT_CASE(binary_with_a_fused_activation_matches_the_formula),
    OT_CASE(strided_copy_of_wide_units_matches_the_reference),
    OT_CASE(pooling_max_and_average_with_padding),
    OT_CASE(softmax_over_any_axis), OT_CASE(softmax_rows_short_rows_match_definition),
    OT_CASE(layer_norm_matches_definition),
    OT_CASE(reduce_mean_any_axes),
    OT_CASE(reduce_every_kind_any_axes),
    OT_CASE(arg_reduce_hardmax_log_softmax_cum_sum),
    OT_CASE(gather_with_negative_indices),
    OT_CASE(gather_elements_matches_onnx_example_and_zeroes_out_of_range),
    OT_CASE(scatter_elements_reduces_duplicates_in_order),
    OT_CASE(gather_nd_and_scatter_nd_match_onnx_examples),
    OT_CASE(pad_constant_reflect_edge_match_onnx_examples),
    OT_CASE(resize_matches_onnx_examples),
    OT_CASE(every_kernel_entry_is_registered_once),
    OT_CASE(backend_kernel_table_names_registered_entries),
};

int main(int argc, char** argv) { return opara_test_main(argc, argv, tests, OT_COUNT(tests)); }
