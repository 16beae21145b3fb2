/* Vector row functions of the CPU kernels: exp, erf and sigmoid over rows of floats, with AVX-512
   and AVX2+FMA bodies (libm on the portable path), the row pieces of Softmax and LayerNormalization
   built on them, and row sums (GlobalAveragePool).

   The polynomials were fitted for this library (least squares on Chebyshev nodes, float32
   coefficients, error measured in float32 against double-precision references):
   - exp(r) on [-ln2/2, ln2/2], degree 6: 1.6 ulp; exp(x) = 2^n exp(r) with n = round(x / ln2) and
     r = x - n ln2 in two FMA steps (ln2 split into a float and its remainder);
   - erf(x) / x on |x| < 0.921875 as a polynomial of degree 5 in x^2 (3 ulp, float rounding);
   - above, erf(x) = 1 - exp(-x^2 + h(x)) with h(x) = log(erfc(x)) + x^2 of degree 8 in x on
     [0.921875, 3.93] (1.1 ulp of 1); from 3.93 on erf rounds to 1 in float.
   Every element of a row goes through the same formula (tails through a masked or padded vector
   step), so a result does not depend on its position. NaN stays NaN, erf(+-inf) is +-1, exp(-inf)
   0 and exp(+inf) +inf. */
#include "opara_cpu.h"

#include <math.h>
#include <string.h>

#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
#  define OPARA__MATH_X86 1
#  include <immintrin.h>
#else
#  define OPARA__MATH_X86 0
#endif

#define OPARA__LOG2E 1.442695041e+00f
#define OPARA__LN2_HI 6.931471825e-01f
#define OPARA__LN2_LO -1.904654323e-09f
#define OPARA__ERF_SPLIT 0.921875f
#define OPARA__ERF_ONE 3.93f

#if OPARA__MATH_X86
/* One vector width's exp, erf and sigmoid bodies; P is the intrinsics' prefix (_mm512, _mm256),
   VT the vector type and SCALE2N(p, n) returns p * 2^n for the integral-valued float n. */
#  define OPARA__POLY_EXP(P, VT, r)                                                                    \
      P##_fmadd_ps(P##_fmadd_ps(P##_fmadd_ps(P##_fmadd_ps(P##_fmadd_ps(P##_fmadd_ps(                    \
          P##_set1_ps(1.382942079e-03f), r, P##_set1_ps(8.374771103e-03f)), r, P##_set1_ps(4.166835919e-02f)), \
          r, P##_set1_ps(1.666642129e-01f)), r, P##_set1_ps(4.999999106e-01f)), r, P##_set1_ps(1.0f)), r,     \
          P##_set1_ps(1.0f))

/* Bit operations on float vectors (AVX-512F has them only for integers). */
#  define OPARA__AND__mm256(a, b) _mm256_and_ps((a), (b))
#  define OPARA__ANDNOT__mm256(a, b) _mm256_andnot_ps((a), (b))
#  define OPARA__OR__mm256(a, b) _mm256_or_ps((a), (b))
#  define OPARA__I512(op, a, b) _mm512_castsi512_ps(op(_mm512_castps_si512(a), _mm512_castps_si512(b)))
#  define OPARA__AND__mm512(a, b) OPARA__I512(_mm512_and_si512, (a), (b))
#  define OPARA__ANDNOT__mm512(a, b) OPARA__I512(_mm512_andnot_si512, (a), (b))
#  define OPARA__OR__mm512(a, b) OPARA__I512(_mm512_or_si512, (a), (b))

#  define OPARA__MATH_BODIES(SUFFIX, TARGET, VT, P, SCALE2N, LO, HI)                                  \
      __attribute__((target(TARGET))) static VT opara__exp_##SUFFIX(VT x) {                           \
          VT n, r;                                                                                    \
          x = P##_min_ps(P##_set1_ps(HI), P##_max_ps(P##_set1_ps(LO), x)); /* NaN (2nd operand) kept */ \
          n = P##_round_ps_near(P##_mul_ps(x, P##_set1_ps(OPARA__LOG2E)));                            \
          r = P##_fnmadd_ps(n, P##_set1_ps(OPARA__LN2_HI), x);                                        \
          r = P##_fnmadd_ps(n, P##_set1_ps(OPARA__LN2_LO), r);                                        \
          return SCALE2N(OPARA__POLY_EXP(P, VT, r), n);                                               \
      }                                                                                               \
      __attribute__((target(TARGET))) static VT opara__erf_##SUFFIX(VT x) {                           \
          VT sign = OPARA__AND_##P(x, P##_set1_ps(-0.0f)), a = OPARA__ANDNOT_##P(P##_set1_ps(-0.0f), x); \
          VT z = P##_mul_ps(a, a), small, c, h, big;                                                  \
          small = P##_fmadd_ps(P##_fmadd_ps(P##_fmadd_ps(P##_fmadd_ps(P##_fmadd_ps(                    \
              P##_set1_ps(-6.047158386e-04f), z, P##_set1_ps(5.005626008e-03f)), z,                   \
              P##_set1_ps(-2.677640319e-02f)), z, P##_set1_ps(1.128214002e-01f)), z,                  \
              P##_set1_ps(-3.761253357e-01f)), z, P##_set1_ps(1.128379107e+00f));                     \
          small = P##_mul_ps(a, small);                                                               \
          c = P##_min_ps(P##_set1_ps(OPARA__ERF_ONE), a); /* NaN kept */                              \
          h = P##_fmadd_ps(P##_fmadd_ps(P##_fmadd_ps(P##_fmadd_ps(P##_fmadd_ps(P##_fmadd_ps(           \
              P##_fmadd_ps(P##_fmadd_ps(P##_set1_ps(1.634174623e-06f), c, P##_set1_ps(-4.596714280e-05f)), \
              c, P##_set1_ps(5.957660032e-04f)), c, P##_set1_ps(-4.753434565e-03f)), c,               \
              P##_set1_ps(2.639994211e-02f)), c, P##_set1_ps(-1.100362837e-01f)), c,                  \
              P##_set1_ps(3.681205213e-01f)), c, P##_set1_ps(-1.130198121e+00f)), c,                  \
              P##_set1_ps(3.104510251e-04f));                                                         \
          big = P##_sub_ps(P##_set1_ps(1.0f), opara__exp_##SUFFIX(P##_fnmadd_ps(c, c, h)));           \
          return OPARA__OR_##P(sign, OPARA__BLEND_LT(P, a, OPARA__ERF_SPLIT, small, big));            \
      }                                                                                               \
      __attribute__((target(TARGET))) static VT opara__sigmoid_##SUFFIX(VT x) {                       \
          VT e = opara__exp_##SUFFIX(P##_sub_ps(P##_setzero_ps(), x));                                \
          return P##_div_ps(P##_set1_ps(1.0f), P##_add_ps(P##_set1_ps(1.0f), e));                     \
      }

/* AVX-512: scalef gives 2^n exactly down to the subnormals and +inf past the top. */
#  define _mm512_round_ps_near(v) _mm512_roundscale_ps((v), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
#  define OPARA__SCALE_AVX512(p, n) _mm512_scalef_ps((p), (n))
#  define OPARA__BLEND_LT(P, a, k, lt, ge) OPARA__BLEND_LT_##P(a, k, lt, ge)
#  define OPARA__BLEND_LT__mm512(a, k, lt, ge) \
      _mm512_mask_blend_ps(_mm512_cmp_ps_mask((a), _mm512_set1_ps(k), _CMP_LT_OQ), (ge), (lt))
#  define OPARA__BLEND_LT__mm256(a, k, lt, ge) \
      _mm256_blendv_ps((ge), (lt), _mm256_cmp_ps((a), _mm256_set1_ps(k), _CMP_LT_OQ))
/* AVX2: 2^n as 2^(n >> 1) * 2^(n - (n >> 1)), both built in the exponent field and normal for
   every n the clamp to [-104, 89] allows. */
#  define _mm256_round_ps_near(v) _mm256_round_ps((v), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
__attribute__((target("avx2,fma"))) static __m256 opara__scale2n_avx2(__m256 p, __m256 n) {
    __m256i ni = _mm256_cvtps_epi32(n), n1 = _mm256_srai_epi32(ni, 1), n2 = _mm256_sub_epi32(ni, n1);
    __m256i e1 = _mm256_slli_epi32(_mm256_add_epi32(n1, _mm256_set1_epi32(127)), 23);
    __m256i e2 = _mm256_slli_epi32(_mm256_add_epi32(n2, _mm256_set1_epi32(127)), 23);
    return _mm256_mul_ps(_mm256_mul_ps(p, _mm256_castsi256_ps(e1)), _mm256_castsi256_ps(e2));
}
#  define OPARA__SCALE_AVX2(p, n) opara__scale2n_avx2((p), (n))

OPARA__MATH_BODIES(avx512, "avx512f", __m512, _mm512, OPARA__SCALE_AVX512, -104.0f, 89.0f)
OPARA__MATH_BODIES(avx2, "avx2,fma", __m256, _mm256, OPARA__SCALE_AVX2, -104.0f, 89.0f)

/* Row loops: AVX-512 masks its tail; AVX2 runs the tail through a padded copy. */
#  define OPARA__ROW_LOOPS(FN)                                                                      \
      __attribute__((target("avx512f"))) static void opara__row_##FN##_avx512(float* y, const float* x, size_t n) { \
          size_t i;                                                                                 \
          for (i = 0; i < n; i += 16) {                                                             \
              __mmask16 m = (__mmask16)opara__lanes16((int64_t)(n - i));                            \
              _mm512_mask_storeu_ps(y + i, m, opara__##FN##_avx512(_mm512_maskz_loadu_ps(m, x + i))); \
          }                                                                                         \
      }                                                                                             \
      __attribute__((target("avx2,fma"))) static void opara__row_##FN##_avx2(float* y, const float* x, size_t n) { \
          size_t i;                                                                                 \
          float pad[8] = {0};                                                                       \
          for (i = 0; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, opara__##FN##_avx2(_mm256_loadu_ps(x + i))); \
          if (i < n) {                                                                              \
              memcpy(pad, x + i, (n - i) * sizeof(float));                                          \
              _mm256_storeu_ps(pad, opara__##FN##_avx2(_mm256_loadu_ps(pad)));                      \
              memcpy(y + i, pad, (n - i) * sizeof(float));                                          \
          }                                                                                         \
      }
OPARA__ROW_LOOPS(exp)
OPARA__ROW_LOOPS(erf)
OPARA__ROW_LOOPS(sigmoid)
#  undef OPARA__ROW_LOOPS

#  define OPARA__TAIL_MASK(n, i) ((__mmask16)opara__lanes16((int64_t)((n) - (i))))

/* Softmax of a contiguous row in three vector passes (max, exp and sum, scale); the max skips NaN
   (maxps returns its second operand), masked-off lanes are -inf for the max and left out of the
   sum. */
__attribute__((target("avx512f"))) static void opara__softmax_row_avx512(float* y, const float* x, size_t n) {
    __m512 mx = _mm512_set1_ps(-HUGE_VALF), sum = _mm512_setzero_ps(), inv;
    size_t i;
    for (i = 0; i < n; i += 16)
        mx = _mm512_max_ps(_mm512_mask_loadu_ps(_mm512_set1_ps(-HUGE_VALF), OPARA__TAIL_MASK(n, i), x + i), mx);
    mx = _mm512_set1_ps(_mm512_reduce_max_ps(mx));
    for (i = 0; i < n; i += 16) {
        __mmask16 m = OPARA__TAIL_MASK(n, i);
        __m512 e = opara__exp_avx512(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, x + i), mx));
        _mm512_mask_storeu_ps(y + i, m, e);
        sum = _mm512_mask_add_ps(sum, m, sum, e);
    }
    inv = _mm512_set1_ps(1.0f / _mm512_reduce_add_ps(sum));
    for (i = 0; i < n; i += 16) {
        __mmask16 m = OPARA__TAIL_MASK(n, i);
        _mm512_mask_storeu_ps(y + i, m, _mm512_mul_ps(_mm512_maskz_loadu_ps(m, y + i), inv));
    }
}

/* Sum of a row in four accumulators of 16 (the FMA-free add chain would wait on its latency). */
__attribute__((target("avx512f"))) static float opara__row_sum_avx512(const float* x, size_t n) {
    __m512 a0 = _mm512_setzero_ps(), a1 = _mm512_setzero_ps(), a2 = _mm512_setzero_ps(), a3 = _mm512_setzero_ps();
    size_t i = 0;
    for (; i + 64 <= n; i += 64) {
        a0 = _mm512_add_ps(a0, _mm512_loadu_ps(x + i));
        a1 = _mm512_add_ps(a1, _mm512_loadu_ps(x + i + 16));
        a2 = _mm512_add_ps(a2, _mm512_loadu_ps(x + i + 32));
        a3 = _mm512_add_ps(a3, _mm512_loadu_ps(x + i + 48));
    }
    for (; i < n; i += 16) a0 = _mm512_add_ps(a0, _mm512_maskz_loadu_ps(OPARA__TAIL_MASK(n, i), x + i));
    return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
}

__attribute__((target("avx2,fma"))) static float opara__row_sum_avx2(const float* x, size_t n) {
    __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps(), a2 = _mm256_setzero_ps(), a3 = _mm256_setzero_ps();
    float lanes[8], sum = 0.0f;
    size_t i = 0, j;
    for (; i + 32 <= n; i += 32) {
        a0 = _mm256_add_ps(a0, _mm256_loadu_ps(x + i));
        a1 = _mm256_add_ps(a1, _mm256_loadu_ps(x + i + 8));
        a2 = _mm256_add_ps(a2, _mm256_loadu_ps(x + i + 16));
        a3 = _mm256_add_ps(a3, _mm256_loadu_ps(x + i + 24));
    }
    _mm256_storeu_ps(lanes, _mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)));
    for (j = 0; j < 8; ++j) sum += lanes[j];
    for (; i < n; ++i) sum += x[i];
    return sum;
}

/* Sum of x (sq 0) or of (x - mean)^2 (sq 1) in double: sixteen floats a step, widened in two
   halves; masked-off lanes add 0. */
__attribute__((target("avx512f"))) static __m512d opara__sum_half_avx512(__m512d acc, __m256 h, __mmask8 m,
                                                                          __m512d mean, int sq) {
    __m512d v = _mm512_maskz_sub_pd(m, _mm512_cvtps_pd(h), mean);
    return sq ? _mm512_fmadd_pd(v, v, acc) : _mm512_add_pd(acc, v);
}

__attribute__((target("avx512f"))) static double opara__row_sum_f64_avx512(const float* x, size_t n, double mean,
                                                                           int sq) {
    __m512d acc = _mm512_setzero_pd(), mv = _mm512_set1_pd(mean);
    size_t i;
    for (i = 0; i < n; i += 16) {
        __mmask16 m = OPARA__TAIL_MASK(n, i);
        __m512 v = _mm512_maskz_loadu_ps(m, x + i);
        __m256 hi = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1));
        acc = opara__sum_half_avx512(acc, _mm512_castps512_ps256(v), (__mmask8)(m & 0xFFu), mv, sq);
        acc = opara__sum_half_avx512(acc, hi, (__mmask8)(m >> 8), mv, sq);
    }
    return _mm512_reduce_add_pd(acc);
}
#endif

static float opara__sigmoid_scalar(float x) { return 1.0f / (1.0f + expf(-x)); }

/* y[i] = f(x[i]) for f = exp (0), erf (1) or sigmoid (2), vectors of `level`. */
static void opara__vec_math(int level, int f, float* y, const float* x, size_t n) {
    size_t i;
#if OPARA__MATH_X86
    if (level == 2) {
        if (f == 0) opara__row_exp_avx512(y, x, n);
        else if (f == 1) opara__row_erf_avx512(y, x, n);
        else opara__row_sigmoid_avx512(y, x, n);
        return;
    }
    if (level == 1) {
        if (f == 0) opara__row_exp_avx2(y, x, n);
        else if (f == 1) opara__row_erf_avx2(y, x, n);
        else opara__row_sigmoid_avx2(y, x, n);
        return;
    }
#else
    (void)level;
#endif
    for (i = 0; i < n; ++i) y[i] = f == 0 ? expf(x[i]) : f == 1 ? erff(x[i]) : opara__sigmoid_scalar(x[i]);
}

OPARA__PRIVATE void opara__vec_exp(int level, float* y, const float* x, size_t n) {
    opara__vec_math(level, 0, y, x, n);
}
OPARA__PRIVATE void opara__vec_erf(int level, float* y, const float* x, size_t n) {
    opara__vec_math(level, 1, y, x, n);
}
OPARA__PRIVATE void opara__vec_sigmoid(int level, float* y, const float* x, size_t n) {
    opara__vec_math(level, 2, y, x, n);
}

/* Softmax of one contiguous row: y = exp(x - max) / sum. The max skips NaN as the scalar loop did
   (a NaN still makes the whole row NaN through the sum). */
OPARA__PRIVATE void opara__softmax_row(int level, float* y, const float* x, size_t n) {
    float mx = -HUGE_VALF, sum = 0.0f, inv;
    size_t j;
#if OPARA__MATH_X86
    if (level == 2) {
        opara__softmax_row_avx512(y, x, n);
        return;
    }
#endif
    for (j = 0; j < n; ++j) mx = x[j] > mx ? x[j] : mx;
    for (j = 0; j < n; ++j) y[j] = x[j] - mx;
    opara__vec_exp(level, y, y, n);
    for (j = 0; j < n; ++j) sum += y[j];
    inv = 1.0f / sum;
    for (j = 0; j < n; ++j) y[j] *= inv;
}

/* The mean of x and the mean of (x - mean)^2, accumulated in double. */
OPARA__PRIVATE void opara__row_moments(int level, const float* x, size_t n, double* mean, double* var) {
    double sum = 0.0, sq = 0.0;
    size_t j;
#if OPARA__MATH_X86
    if (level == 2) {
        *mean = opara__row_sum_f64_avx512(x, n, 0.0, 0) / (double)n;
        *var = opara__row_sum_f64_avx512(x, n, *mean, 1) / (double)n;
        return;
    }
#else
    (void)level;
#endif
    for (j = 0; j < n; ++j) sum += x[j];
    *mean = sum / (double)n;
    for (j = 0; j < n; ++j) sq += ((double)x[j] - *mean) * ((double)x[j] - *mean);
    *var = sq / (double)n;
}

OPARA__PRIVATE float opara__vec_sum(int level, const float* x, size_t n) {
    float sum = 0.0f;
    size_t j;
#if OPARA__MATH_X86
    if (level == 2) return opara__row_sum_avx512(x, n);
    if (level == 1) return opara__row_sum_avx2(x, n);
#else
    (void)level;
#endif
    for (j = 0; j < n; ++j) sum += x[j];
    return sum;
}
