/* SGEMM: the built-in cache-blocked, register-tiled GEMM (AVX-512 or AVX2+FMA micro-kernel chosen
   at run time on x86 with GCC/Clang, NEON on aarch64 with GCC/Clang, portable C elsewhere) with a fused
   epilogue, dispatch to a loaded BLAS, and the Gemm and MatMul operators. */
#include "opara_cpu.h"

#include <stdlib.h> /* getenv (on x86 <immintrin.h> brought it in, elsewhere nothing did) */

#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
#  define OPARA__GEMM_AVX2 1
#  include <immintrin.h>
#else
#  define OPARA__GEMM_AVX2 0
#endif

/* Advanced SIMD is part of every aarch64 CPU: no run-time detection, only OPARA_CPU_ISA's cap. */
#if (defined(__GNUC__) || defined(__clang__)) && defined(__aarch64__)
#  define OPARA__GEMM_NEON 1
#  include <arm_neon.h>
#else
#  define OPARA__GEMM_NEON 0
#endif

#if defined(__SSE2__) || defined(_M_X64) || (defined(_M_IX86_FP) && _M_IX86_FP >= 2)
#  define OPARA__VEC_SSE 1
#  include <emmintrin.h>
#else
#  define OPARA__VEC_SSE 0
#endif

#if OPARA__GEMM_AVX2
static int opara__gemm_have_avx2(void) {
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

/* The stride-1 body of opara__vec_taps, 8-wide with FMA and 32 outputs in flight (the taps'
   multiply-adds are independent across outputs, so four accumulators hide the FMA latency).
   Returns how many leading outputs it did. */
__attribute__((target("avx2,fma"))) static size_t opara__vec_taps_avx2(float* d, const float* s, size_t n,
                                                                       const float* w, size_t taps, size_t dil) {
    size_t i = 0, k;
    for (; i + 32 <= n; i += 32) {
        __m256 a0 = _mm256_loadu_ps(d + i), a1 = _mm256_loadu_ps(d + i + 8);
        __m256 a2 = _mm256_loadu_ps(d + i + 16), a3 = _mm256_loadu_ps(d + i + 24);
        for (k = 0; k < taps; ++k) {
            const float* sk = s + i + k * dil;
            __m256 wk = _mm256_broadcast_ss(w + k);
            a0 = _mm256_fmadd_ps(wk, _mm256_loadu_ps(sk), a0);
            a1 = _mm256_fmadd_ps(wk, _mm256_loadu_ps(sk + 8), a1);
            a2 = _mm256_fmadd_ps(wk, _mm256_loadu_ps(sk + 16), a2);
            a3 = _mm256_fmadd_ps(wk, _mm256_loadu_ps(sk + 24), a3);
        }
        _mm256_storeu_ps(d + i, a0);
        _mm256_storeu_ps(d + i + 8, a1);
        _mm256_storeu_ps(d + i + 16, a2);
        _mm256_storeu_ps(d + i + 24, a3);
    }
    for (; i + 8 <= n; i += 8) {
        __m256 a0 = _mm256_loadu_ps(d + i);
        for (k = 0; k < taps; ++k) a0 = _mm256_fmadd_ps(_mm256_broadcast_ss(w + k), _mm256_loadu_ps(s + i + k * dil), a0);
        _mm256_storeu_ps(d + i, a0);
    }
    return i;
}

/* Eight outputs of a stride-2 row: the even elements of s[0..15] in order. */
__attribute__((target("avx2,fma"))) static __m256 opara__vec_even8_avx2(const float* s) {
    __m256 ev = _mm256_shuffle_ps(_mm256_loadu_ps(s), _mm256_loadu_ps(s + 8), _MM_SHUFFLE(2, 0, 2, 0));
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(ev), 0xD8));
}

/* The stride-2 body of opara__vec_taps. Each block of eight loads s up to 2 * i + 15 + the tap
   offset, one past what its outputs need, so a block runs only while a later output exists. */
__attribute__((target("avx2,fma"))) static size_t opara__vec_taps2_avx2(float* d, const float* s, size_t n,
                                                                        const float* w, size_t taps, size_t dil) {
    size_t i = 0, k;
    for (; i + 16 < n; i += 16) {
        __m256 a0 = _mm256_loadu_ps(d + i), a1 = _mm256_loadu_ps(d + i + 8);
        for (k = 0; k < taps; ++k) {
            __m256 wk = _mm256_broadcast_ss(w + k);
            a0 = _mm256_fmadd_ps(wk, opara__vec_even8_avx2(s + 2 * i + k * dil), a0);
            a1 = _mm256_fmadd_ps(wk, opara__vec_even8_avx2(s + 2 * i + 16 + k * dil), a1);
        }
        _mm256_storeu_ps(d + i, a0);
        _mm256_storeu_ps(d + i + 8, a1);
    }
    for (; i + 8 < n; i += 8) {
        __m256 a0 = _mm256_loadu_ps(d + i);
        for (k = 0; k < taps; ++k)
            a0 = _mm256_fmadd_ps(_mm256_broadcast_ss(w + k), opara__vec_even8_avx2(s + 2 * i + k * dil), a0);
        _mm256_storeu_ps(d + i, a0);
    }
    return i;
}

/* The 8-wide body of opara__vec_window; returns how many leading outputs it did. */
__attribute__((target("avx2,fma"))) static size_t opara__vec_window_avx2(float* d, const float* s, size_t n, size_t taps,
                                                                         size_t pitch, int is_max) {
    size_t i = 0, k;
    for (; i + 8 <= n; i += 8) {
        __m256 acc = _mm256_loadu_ps(s + i);
        for (k = 1; k < taps; ++k) {
            __m256 v = _mm256_loadu_ps(s + i + k * pitch);
            /* maxps(v, acc) keeps a NaN acc; OR-ing the unordered mask makes a NaN v win too */
            acc = is_max ? _mm256_or_ps(_mm256_max_ps(v, acc), _mm256_cmp_ps(v, v, _CMP_UNORD_Q)) : _mm256_add_ps(acc, v);
        }
        _mm256_storeu_ps(d + i, acc);
    }
    return i;
}

/* The 16-wide opara__vec_window over all n outputs, the tail masked (masked-off lanes are neither
   read nor written). */
__attribute__((target("avx512f"))) static void opara__vec_window_avx512(float* d, const float* s, size_t n, size_t taps,
                                                                        size_t pitch, int is_max) {
    size_t i, k;
    for (i = 0; i < n; i += 16) {
        __mmask16 m = (__mmask16)opara__lanes16((int64_t)(n - i));
        __m512 acc = _mm512_maskz_loadu_ps(m, s + i);
        for (k = 1; k < taps; ++k) {
            __m512 v = _mm512_maskz_loadu_ps(m, s + i + k * pitch);
            if (is_max) /* maxps(v, acc) keeps a NaN acc; a NaN v is moved in by its unordered mask */
                acc = _mm512_mask_mov_ps(_mm512_max_ps(v, acc), _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), v);
            else
                acc = _mm512_add_ps(acc, v);
        }
        _mm512_mask_storeu_ps(d + i, m, acc);
    }
}

/* d[0..n) = s[0..n), 16 floats a step and one masked step for the tail (rows of 7 to 56 floats
   are too short for memcpy's call to pay off). */
__attribute__((target("avx512f"))) static void opara__vec_copy_avx512(float* d, const float* s, size_t n) {
    size_t i;
    for (i = 0; i < n; i += 16) {
        __mmask16 m = (__mmask16)opara__lanes16((int64_t)(n - i));
        _mm512_mask_storeu_ps(d + i, m, _mm512_maskz_loadu_ps(m, s + i));
    }
}

#else
static int opara__gemm_have_avx2(void) { return 0; }
#endif

#if OPARA__GEMM_NEON
/* The NEON element-wise loops (4 floats a step); each returns how many leading elements it did. They
   compute exactly what the scalar loops do: one IEEE operation per element (no fused multiply-add),
   and Clip and the max window by compare-and-select in the scalar code's own order, so NaN and
   signed zeros come out the same. */
#  define OPARA__NEON_BIN_LOOP(OPF)                                                             \
      do {                                                                                      \
          for (; i + 4 <= n; i += 4) {                                                          \
              float32x4_t x = a_step ? vld1q_f32(a + i) : vdupq_n_f32(a[0]);                    \
              float32x4_t z = b_step ? vld1q_f32(b + i) : vdupq_n_f32(b[0]);                    \
              vst1q_f32(y + i, OPF(x, z));                                                      \
          }                                                                                     \
      } while (0)

static size_t opara__vec_binary_neon(int kind, const float* a, int a_step, const float* b, int b_step, float* y,
                                     size_t n) {
    size_t i = 0;
    switch (kind) {
    case 0: OPARA__NEON_BIN_LOOP(vaddq_f32); break;
    case 1: OPARA__NEON_BIN_LOOP(vsubq_f32); break;
    case 2: OPARA__NEON_BIN_LOOP(vmulq_f32); break;
    default: OPARA__NEON_BIN_LOOP(vdivq_f32); break;
    }
    return i;
}
#  undef OPARA__NEON_BIN_LOOP

/* v = x < lo ? lo : x; y = v > hi ? hi : v (a NaN x fails both compares and is kept). */
static size_t opara__vec_clip_neon(float* y, const float* x, size_t n, float lo, float hi) {
    float32x4_t l = vdupq_n_f32(lo), h = vdupq_n_f32(hi);
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        float32x4_t v = vld1q_f32(x + i);
        v = vbslq_f32(vcltq_f32(v, l), l, v);
        vst1q_f32(y + i, vbslq_f32(vcgtq_f32(v, h), h, v));
    }
    return i;
}

/* opara__vec_window 4 outputs a step; the max is opara__max_nan's select (v > acc or v is NaN: v),
   so a NaN on either side gives NaN. */
static size_t opara__vec_window_neon(float* d, const float* s, size_t n, size_t taps, size_t pitch, int is_max) {
    size_t i = 0, k;
    for (; i + 4 <= n; i += 4) {
        float32x4_t acc = vld1q_f32(s + i);
        for (k = 1; k < taps; ++k) {
            float32x4_t v = vld1q_f32(s + i + k * pitch);
            if (is_max) acc = vbslq_f32(vorrq_u32(vcgtq_f32(v, acc), vmvnq_u32(vceqq_f32(v, v))), v, acc);
            else acc = vaddq_f32(acc, v);
        }
        vst1q_f32(d + i, acc);
    }
    return i;
}

/* The stride-1 and stride-2 bodies of opara__vec_taps, 16 (8) outputs in flight so the taps' FMAs
   are independent; stride 2 takes the even elements with vld2q_f32, which reads s up to 2 * i + 7
   + the tap offset, one past what its outputs need, so a block runs only while a later output exists.
   Returns how many leading outputs it did. */
static size_t opara__vec_taps_neon(float* d, const float* s, size_t stride, size_t n, const float* w, size_t taps,
                                   size_t dil) {
    size_t i = 0, k;
    if (stride == 1) {
        for (; i + 16 <= n; i += 16) {
            float32x4_t a0 = vld1q_f32(d + i), a1 = vld1q_f32(d + i + 4);
            float32x4_t a2 = vld1q_f32(d + i + 8), a3 = vld1q_f32(d + i + 12);
            for (k = 0; k < taps; ++k) {
                const float* sk = s + i + k * dil;
                float32x4_t wk = vdupq_n_f32(w[k]);
                a0 = vfmaq_f32(a0, wk, vld1q_f32(sk));
                a1 = vfmaq_f32(a1, wk, vld1q_f32(sk + 4));
                a2 = vfmaq_f32(a2, wk, vld1q_f32(sk + 8));
                a3 = vfmaq_f32(a3, wk, vld1q_f32(sk + 12));
            }
            vst1q_f32(d + i, a0);
            vst1q_f32(d + i + 4, a1);
            vst1q_f32(d + i + 8, a2);
            vst1q_f32(d + i + 12, a3);
        }
        for (; i + 4 <= n; i += 4) {
            float32x4_t a0 = vld1q_f32(d + i);
            for (k = 0; k < taps; ++k) a0 = vfmaq_f32(a0, vdupq_n_f32(w[k]), vld1q_f32(s + i + k * dil));
            vst1q_f32(d + i, a0);
        }
    } else if (stride == 2) {
        for (; i + 8 < n; i += 8) {
            float32x4_t a0 = vld1q_f32(d + i), a1 = vld1q_f32(d + i + 4);
            for (k = 0; k < taps; ++k) {
                const float* sk = s + 2 * i + k * dil;
                float32x4_t wk = vdupq_n_f32(w[k]);
                a0 = vfmaq_f32(a0, wk, vld2q_f32(sk).val[0]);
                a1 = vfmaq_f32(a1, wk, vld2q_f32(sk + 8).val[0]);
            }
            vst1q_f32(d + i, a0);
            vst1q_f32(d + i + 4, a1);
        }
        for (; i + 4 < n; i += 4) {
            float32x4_t a0 = vld1q_f32(d + i);
            for (k = 0; k < taps; ++k) a0 = vfmaq_f32(a0, vdupq_n_f32(w[k]), vld2q_f32(s + 2 * i + k * dil).val[0]);
            vst1q_f32(d + i, a0);
        }
    }
    return i;
}
#endif

/* ---- row helpers (SSE2 on x86, NEON on aarch64, where -O2 builds would otherwise get scalar,
   branchy loops) ---- */

OPARA__PRIVATE void opara__vec_fill(float* d, size_t n, float v) {
    size_t i = 0;
#if OPARA__VEC_SSE
    __m128 x = _mm_set1_ps(v);
    for (; i + 4 <= n; i += 4) _mm_storeu_ps(d + i, x);
#elif OPARA__GEMM_NEON
    float32x4_t x = vdupq_n_f32(v);
    for (; i + 4 <= n; i += 4) vst1q_f32(d + i, x);
#endif
    for (; i < n; ++i) d[i] = v;
}

/* y = max(x, 0) (y may be x); NaN stays NaN, as in ONNX Runtime and PyTorch. */
OPARA__PRIVATE void opara__vec_relu(float* y, const float* x, size_t n) {
    size_t i = 0;
#if OPARA__VEC_SSE
    __m128 z = _mm_setzero_ps();
    /* maxps(a, b) is a > b ? a : b, so with x second a NaN x is returned as is */
    for (; i + 4 <= n; i += 4) _mm_storeu_ps(y + i, _mm_max_ps(z, _mm_loadu_ps(x + i)));
#elif OPARA__GEMM_NEON
    float32x4_t z = vdupq_n_f32(0.0f);
    for (; i + 4 <= n; i += 4) { /* the scalar select: a NaN (and -0) x is kept */
        float32x4_t v = vld1q_f32(x + i);
        vst1q_f32(y + i, vbslq_f32(vcltq_f32(v, z), z, v));
    }
#endif
    for (; i < n; ++i) y[i] = x[i] < 0.0f ? 0.0f : x[i];
}

/* d[i] += sum over k < taps of w[k] * s[i * stride + k * dil]: one row of a direct convolution,
   each output loaded and stored once. */
OPARA__PRIVATE void opara__vec_taps(float* d, const float* s, size_t stride, size_t n, const float* w, size_t taps,
                                    size_t dil) {
    size_t i = 0, k;
#if OPARA__GEMM_AVX2
    if ((stride == 1 || stride == 2) && n >= 8 && opara__gemm_have_avx2())
        i = stride == 1 ? opara__vec_taps_avx2(d, s, n, w, taps, dil) : opara__vec_taps2_avx2(d, s, n, w, taps, dil);
#elif OPARA__GEMM_NEON
    i = opara__vec_taps_neon(d, s, stride, n, w, taps, dil);
#endif
#if OPARA__VEC_SSE
    for (; i + 4 <= n; i += 4) {
        __m128 acc = _mm_loadu_ps(d + i);
        for (k = 0; k < taps; ++k) {
            const float* sk = s + i * stride + k * dil;
            __m128 a = stride == 1 ? _mm_loadu_ps(sk) : _mm_set_ps(sk[3 * stride], sk[2 * stride], sk[stride], sk[0]);
            acc = _mm_add_ps(acc, _mm_mul_ps(_mm_set1_ps(w[k]), a));
        }
        _mm_storeu_ps(d + i, acc);
    }
#endif
    for (; i < n; ++i) {
        float acc = d[i];
        for (k = 0; k < taps; ++k) acc += w[k] * s[i * stride + k * dil];
        d[i] = acc;
    }
}

/* d[0..n) = s[0..n) (not overlapping), vectors of `level`. */
OPARA__PRIVATE void opara__vec_copy(int level, float* d, const float* s, size_t n) {
#if OPARA__GEMM_AVX2
    if (level == 2) {
        opara__vec_copy_avx512(d, s, n);
        return;
    }
#else
    (void)level;
#endif
    memcpy(d, s, n * sizeof(float));
}

/* d[i] = s[2 * i] for i < n; reads nothing past s[2 * (n - 1)]. */
OPARA__PRIVATE void opara__vec_copy_even(float* d, const float* s, size_t n) {
    size_t i = 0;
#if OPARA__VEC_SSE
    for (; i + 4 < n; i += 4) /* reads s[2i .. 2i + 7]; 2i + 7 < 2(n - 1) while i + 4 < n */
        _mm_storeu_ps(d + i, _mm_shuffle_ps(_mm_loadu_ps(s + 2 * i), _mm_loadu_ps(s + 2 * i + 4), _MM_SHUFFLE(2, 0, 2, 0)));
#elif OPARA__GEMM_NEON
    for (; i + 4 < n; i += 4) vst1q_f32(d + i, vld2q_f32(s + 2 * i).val[0]); /* the same reads */
#endif
    for (; i < n; ++i) d[i] = s[2 * i];
}

/* d[i] = the max (or sum) over k < taps of s[i + k * pitch]: the windows of a pool,
   each output stored once. */
OPARA__PRIVATE void opara__vec_window(int level, float* d, const float* s, size_t n, size_t taps, size_t pitch,
                                      int is_max) {
    size_t i = 0, k;
#if OPARA__GEMM_AVX2
    if (level == 2) {
        opara__vec_window_avx512(d, s, n, taps, pitch, is_max);
        return;
    }
    if (level == 1 && n >= 8) i = opara__vec_window_avx2(d, s, n, taps, pitch, is_max);
#elif OPARA__GEMM_NEON
    if (level == 1) i = opara__vec_window_neon(d, s, n, taps, pitch, is_max);
#else
    (void)level;
#endif
#if OPARA__VEC_SSE
    for (; i + 4 <= n; i += 4) {
        __m128 acc = _mm_loadu_ps(s + i);
        for (k = 1; k < taps; ++k) {
            __m128 v = _mm_loadu_ps(s + i + k * pitch);
            acc = is_max ? _mm_or_ps(_mm_max_ps(v, acc), _mm_cmpunord_ps(v, v)) : _mm_add_ps(acc, v);
        }
        _mm_storeu_ps(d + i, acc);
    }
#endif
    for (; i < n; ++i) {
        float acc = s[i];
        for (k = 1; k < taps; ++k) {
            float v = s[i + k * pitch];
            acc = is_max ? opara__max_nan(acc, v) : acc + v;
        }
        d[i] = acc;
    }
}

/* d[i] += w * s[i * stride]. */
OPARA__PRIVATE void opara__vec_axpy(float* d, const float* s, size_t stride, size_t n, float w) {
    size_t i = 0;
#if OPARA__VEC_SSE
    __m128 wv = _mm_set1_ps(w);
    for (; i + 4 <= n; i += 4) {
        __m128 a = stride == 1 ? _mm_loadu_ps(s + i)
                               : _mm_set_ps(s[(i + 3) * stride], s[(i + 2) * stride], s[(i + 1) * stride], s[i * stride]);
        _mm_storeu_ps(d + i, _mm_add_ps(_mm_loadu_ps(d + i), _mm_mul_ps(wv, a)));
    }
#elif OPARA__GEMM_NEON
    if (stride == 1)
        for (; i + 4 <= n; i += 4) vst1q_f32(d + i, vfmaq_n_f32(vld1q_f32(d + i), vld1q_f32(s + i), w));
#endif
    for (; i < n; ++i) d[i] += w * s[i * stride];
}

/* d[i] = max(d[i], s[i * stride]), a NaN on either side giving NaN. */
OPARA__PRIVATE void opara__vec_max_into(float* d, const float* s, size_t stride, size_t n) {
    size_t i = 0;
#if OPARA__VEC_SSE
    for (; i + 4 <= n; i += 4) {
        __m128 a = stride == 1 ? _mm_loadu_ps(s + i)
                               : _mm_set_ps(s[(i + 3) * stride], s[(i + 2) * stride], s[(i + 1) * stride], s[i * stride]);
        /* maxps(a, d) is a > d ? a : d (keeps a NaN d); the unordered mask of a adds a NaN a */
        _mm_storeu_ps(d + i, _mm_or_ps(_mm_max_ps(a, _mm_loadu_ps(d + i)), _mm_cmpunord_ps(a, a)));
    }
#elif OPARA__GEMM_NEON
    if (stride == 1)
        for (; i + 4 <= n; i += 4) { /* opara__max_nan's select: a > d or a is NaN gives a */
            float32x4_t a = vld1q_f32(s + i), v = vld1q_f32(d + i);
            vst1q_f32(d + i, vbslq_f32(vorrq_u32(vcgtq_f32(a, v), vmvnq_u32(vceqq_f32(a, a))), a, v));
        }
#endif
    for (; i < n; ++i) d[i] = opara__max_nan(d[i], s[i * stride]);
}

/* d[i] = opara__min_nan(d[i], s[i]) (the reductions' column-wise min). */
OPARA__PRIVATE void opara__vec_min_into(float* d, const float* s, size_t n) {
    size_t i = 0;
#if OPARA__VEC_SSE
    for (; i + 4 <= n; i += 4) { /* minps(a, d) is a < d ? a : d (keeps a NaN d); the unordered mask of a adds a NaN a */
        __m128 a = _mm_loadu_ps(s + i);
        _mm_storeu_ps(d + i, _mm_or_ps(_mm_min_ps(a, _mm_loadu_ps(d + i)), _mm_cmpunord_ps(a, a)));
    }
#elif OPARA__GEMM_NEON
    for (; i + 4 <= n; i += 4) {
        float32x4_t a = vld1q_f32(s + i), v = vld1q_f32(d + i);
        vst1q_f32(d + i, vbslq_f32(vorrq_u32(vcltq_f32(a, v), vmvnq_u32(vceqq_f32(a, a))), a, v));
    }
#endif
    for (; i < n; ++i) d[i] = opara__min_nan(d[i], s[i]);
}

/* d[i] += s[i * stride]. */
OPARA__PRIVATE void opara__vec_add_into(float* d, const float* s, size_t stride, size_t n) {
    size_t i = 0;
#if OPARA__VEC_SSE
    for (; i + 4 <= n; i += 4) {
        __m128 a = stride == 1 ? _mm_loadu_ps(s + i)
                               : _mm_set_ps(s[(i + 3) * stride], s[(i + 2) * stride], s[(i + 1) * stride], s[i * stride]);
        _mm_storeu_ps(d + i, _mm_add_ps(_mm_loadu_ps(d + i), a));
    }
#elif OPARA__GEMM_NEON
    if (stride == 1)
        for (; i + 4 <= n; i += 4) vst1q_f32(d + i, vaddq_f32(vld1q_f32(d + i), vld1q_f32(s + i)));
#endif
    for (; i < n; ++i) d[i] += s[i * stride];
}

/* ---- element-wise arithmetic ----------------------------------------------------------------- */

#if OPARA__GEMM_AVX2
/* One vector width's element-wise loops, P the intrinsics' prefix (_mm512, _mm256): each returns how
   many leading elements it did, the caller finishes the tail. */
#  define OPARA__BIN_LOOP(VT, W, P, OPF)                                                              \
      do {                                                                                          \
          for (; i + (W) <= n; i += (W)) {                                                          \
              VT x = a_step ? P##_loadu_ps(a + i) : P##_set1_ps(a[0]);                              \
              VT z = b_step ? P##_loadu_ps(b + i) : P##_set1_ps(b[0]);                              \
              P##_storeu_ps(y + i, OPF(x, z));                                                      \
          }                                                                                         \
      } while (0)
/* maxps/minps return their second operand when either is NaN: with x second a NaN passes, as in
   the scalar loop. */
#  define OPARA__VEC_LOOPS(SUFFIX, TARGET, VT, W, P)                                                        \
      __attribute__((target(TARGET))) static size_t opara__vec_binary_##SUFFIX(                             \
          int kind, const float* a, int a_step, const float* b, int b_step, float* y, size_t n) {           \
          size_t i = 0;                                                                                     \
          switch (kind) {                                                                                   \
          case 0: OPARA__BIN_LOOP(VT, W, P, P##_add_ps); break;                                             \
          case 1: OPARA__BIN_LOOP(VT, W, P, P##_sub_ps); break;                                             \
          case 2: OPARA__BIN_LOOP(VT, W, P, P##_mul_ps); break;                                             \
          default: OPARA__BIN_LOOP(VT, W, P, P##_div_ps); break;                                            \
          }                                                                                                 \
          return i;                                                                                         \
      }                                                                                                     \
      __attribute__((target(TARGET))) static size_t opara__vec_clip_##SUFFIX(float* y, const float* x,      \
                                                                             size_t n, float lo, float hi) { \
          VT l = P##_set1_ps(lo), h = P##_set1_ps(hi);                                                      \
          size_t i = 0;                                                                                     \
          for (; i + (W) <= n; i += (W)) P##_storeu_ps(y + i, P##_min_ps(h, P##_max_ps(l, P##_loadu_ps(x + i)))); \
          return i;                                                                                         \
      }

OPARA__VEC_LOOPS(avx512, "avx512f", __m512, 16, _mm512)
OPARA__VEC_LOOPS(avx2, "avx2,fma", __m256, 8, _mm256)
#  undef OPARA__VEC_LOOPS
#  undef OPARA__BIN_LOOP
#endif

/* y = min(max(x, lo), hi) in that order (lo > hi gives hi), NaN kept; vectors of `level`. */
OPARA__PRIVATE void opara__vec_clip(int level, float* y, const float* x, size_t n, float lo, float hi) {
    size_t i = 0;
#if OPARA__GEMM_AVX2
    if (level == 2) i = opara__vec_clip_avx512(y, x, n, lo, hi);
    else if (level == 1) i = opara__vec_clip_avx2(y, x, n, lo, hi);
#elif OPARA__GEMM_NEON
    if (level == 1) i = opara__vec_clip_neon(y, x, n, lo, hi);
#else
    (void)level;
#endif
    for (; i < n; ++i) {
        float v = x[i] < lo ? lo : x[i];
        y[i] = v > hi ? hi : v;
    }
}

/* y[i] = a[i * a_step] op b[i * b_step] for op = kind (0 +, 1 -, 2 *, 3 /) and steps 0 or 1, with
   the vector width of `level` (opara__cpu_isa_level); IEEE results, the same as the scalar loop's. */
OPARA__PRIVATE void opara__vec_binary_f32(int level, int kind, const float* a, int a_step, const float* b, int b_step,
                                          float* y, size_t n) {
    size_t i = 0;
#if OPARA__GEMM_AVX2
    if (level == 2) i = opara__vec_binary_avx512(kind, a, a_step, b, b_step, y, n);
    else if (level == 1) i = opara__vec_binary_avx2(kind, a, a_step, b, b_step, y, n);
#elif OPARA__GEMM_NEON
    if (level == 1) i = opara__vec_binary_neon(kind, a, a_step, b, b_step, y, n);
#else
    (void)level;
#endif
    for (; i < n; ++i) {
        float x = a[a_step ? i : 0], z = b[b_step ? i : 0];
        y[i] = kind == 0 ? x + z : kind == 1 ? x - z : kind == 2 ? x * z : x / z;
    }
}

/* ---- packing --------------------------------------------------------------------------------- */

/* Packs op(A)[i0:i0+mc, p0:p0+kc] into strips of mr rows: strip s holds, for each p, mr values.
   Rows past mc are zero. */
static void opara__gemm_pack_a(int trans_a, const float* a, size_t lda, size_t i0, size_t mc, size_t p0, size_t kc,
                               size_t mr, float* dst) {
    size_t s, r, p;
    for (s = 0; s < mc; s += mr) {
        size_t rows = OPARA__MIN(mr, mc - s);
        for (r = 0; r < mr; ++r) {
            float* d = dst + r;
            if (r >= rows) {
                for (p = 0; p < kc; ++p) d[p * mr] = 0.0f;
            } else if (!trans_a) {
                const float* src = a + (i0 + s + r) * lda + p0;
                for (p = 0; p < kc; ++p) d[p * mr] = src[p];
            } else {
                const float* src = a + p0 * lda + i0 + s + r;
                for (p = 0; p < kc; ++p) d[p * mr] = src[p * lda];
            }
        }
        dst += mr * kc;
    }
}

#if OPARA__GEMM_AVX2
/* One full row of a 32-wide strip (only the AVX-512 micro-kernel packs 32 wide): two vector
   copies instead of a memcpy call per 128 bytes. */
__attribute__((target("avx512f"))) static void opara__gemm_copy32(float* d, const float* s) {
    _mm512_storeu_ps(d, _mm512_loadu_ps(s));
    _mm512_storeu_ps(d + 16, _mm512_loadu_ps(s + 16));
}
#endif

/* Packs op(B)[p0:p0+kc, j0:j0+nc] into strips of nr columns: strip holds, for each p, nr values. */
static void opara__gemm_pack_b(int trans_b, const float* b, size_t ldb, size_t p0, size_t kc, size_t j0, size_t nc,
                               size_t nr, float* dst) {
    size_t s, c, p;
    for (s = 0; s < nc; s += nr) {
        size_t cols = OPARA__MIN(nr, nc - s);
        if (!trans_b) {
            for (p = 0; p < kc; ++p) {
                const float* src = b + (p0 + p) * ldb + j0 + s;
                float* d = dst + p * nr;
                if (cols == nr) {
#if OPARA__GEMM_AVX2
                    if (nr == 32) {
                        opara__gemm_copy32(d, src);
                        continue;
                    }
#endif
                    memcpy(d, src, nr * sizeof(float));
                } else {
                    for (c = 0; c < cols; ++c) d[c] = src[c];
                    for (; c < nr; ++c) d[c] = 0.0f;
                }
            }
        } else {
            for (c = 0; c < nr; ++c) {
                float* d = dst + c;
                if (c >= cols) {
                    for (p = 0; p < kc; ++p) d[p * nr] = 0.0f;
                } else {
                    const float* src = b + (j0 + s + c) * ldb + p0;
                    for (p = 0; p < kc; ++p) d[p * nr] = src[p];
                }
            }
        }
        dst += nr * kc;
    }
}

/* ---- micro-kernels: C[mr][nr] = alpha * (a-strip x b-strip over kc) + beta * C, then the
   epilogue (a bias per row and one per column, ReLU). A tile at the matrix edge goes through a
   plain tile (alpha 1, beta 0, no epilogue) and opara__gemm_store. ---------------------------- */

/* How a micro-kernel writes its tile: row_bias / col_bias already point at the tile's first row
   and column (NULL: none). */
typedef struct opara__gemm_out {
    float alpha, beta;
    const float* row_bias;
    const float* col_bias;
    int relu;
} opara__gemm_out;

static const opara__gemm_out opara__gemm_plain = {1.0f, 0.0f, NULL, NULL, 0};

/* One output: the scalar form of every micro-kernel's store (beta 0: C not read; NaN passes
   the ReLU, as in opara__vec_relu). */
static float opara__gemm_finish(float acc, const float* cp, const opara__gemm_out* o, size_t i, size_t j) {
    float v = o->alpha * acc;
    if (o->beta != 0.0f) v += o->beta * *cp;
    if (o->row_bias) v += o->row_bias[i];
    if (o->col_bias) v += o->col_bias[j];
    return o->relu && v < 0.0f ? 0.0f : v;
}

/* The A operand of a micro-kernel: element (r, p) of the strip is p[r * rs + p * cs]; a packed
   strip has rs 1 and cs mr, A read in place (row-major, no packing) rs lda and cs 1. */
typedef struct opara__gemm_a {
    const float* p;
    size_t rs, cs;
} opara__gemm_a;

/* A full tile; opara__gemm_isa.partial says whether the kernel also takes rows < mr, cols < nr,
   and .in_place whether it takes an A that is not packed (the others read a->p as packed). */
typedef void (*opara__gemm_micro_fn)(size_t kc, const opara__gemm_a* a, const float* bp, float* c, size_t ldc, size_t rows,
                                     size_t cols, const opara__gemm_out* o);

#define OPARA__PORTABLE_MR 6
#define OPARA__PORTABLE_NR 16

static void opara__gemm_micro_c(size_t kc, const opara__gemm_a* a, const float* bp, float* c, size_t ldc, size_t rows,
                                size_t cols, const opara__gemm_out* o) {
    float acc[OPARA__PORTABLE_MR * OPARA__PORTABLE_NR];
    const float* ap = a->p;
    size_t p, r, j;
    (void)rows, (void)cols;
    for (j = 0; j < OPARA__PORTABLE_MR * OPARA__PORTABLE_NR; ++j) acc[j] = 0.0f;
    for (p = 0; p < kc; ++p) {
        const float* bv = bp + p * OPARA__PORTABLE_NR;
        const float* av = ap + p * OPARA__PORTABLE_MR;
        for (r = 0; r < OPARA__PORTABLE_MR; ++r) {
            float x = av[r];
            float* row = acc + r * OPARA__PORTABLE_NR;
            for (j = 0; j < OPARA__PORTABLE_NR; ++j) row[j] += x * bv[j];
        }
    }
    for (r = 0; r < OPARA__PORTABLE_MR; ++r)
        for (j = 0; j < OPARA__PORTABLE_NR; ++j)
            c[r * ldc + j] = opara__gemm_finish(acc[r * OPARA__PORTABLE_NR + j], c + r * ldc + j, o, r, j);
}

#if OPARA__GEMM_AVX2
/* 6 x 16: 12 accumulators, two B vectors and one broadcast of A. */
__attribute__((target("avx2,fma"))) static inline void opara__gemm_fin_avx2(float* cp, __m256 acc, const opara__gemm_out* o,
                                                                            size_t r, size_t j) {
    __m256 v = _mm256_mul_ps(_mm256_set1_ps(o->alpha), acc);
    if (o->beta != 0.0f) v = _mm256_fmadd_ps(_mm256_set1_ps(o->beta), _mm256_loadu_ps(cp), v);
    if (o->row_bias) v = _mm256_add_ps(v, _mm256_set1_ps(o->row_bias[r]));
    if (o->col_bias) v = _mm256_add_ps(v, _mm256_loadu_ps(o->col_bias + j));
    if (o->relu) v = _mm256_max_ps(_mm256_setzero_ps(), v); /* maxps returns its second operand for a NaN */
    _mm256_storeu_ps(cp, v);
}

#  define OPARA__FMA_ROW(r, c0, c1)                        \
      do {                                                 \
          __m256 av_ = _mm256_broadcast_ss(ap + (r));      \
          c0 = _mm256_fmadd_ps(av_, b0, c0);               \
          c1 = _mm256_fmadd_ps(av_, b1, c1);               \
      } while (0)
#  define OPARA__FIN_ROW(r, c0, c1)                                   \
      do {                                                            \
          opara__gemm_fin_avx2(c + (r) * ldc, c0, o, (r), 0);         \
          opara__gemm_fin_avx2(c + (r) * ldc + 8, c1, o, (r), 8);     \
      } while (0)

__attribute__((target("avx2,fma"))) static void opara__gemm_micro_avx2(size_t kc, const opara__gemm_a* a, const float* bp,
                                                                       float* c, size_t ldc, size_t rows, size_t cols,
                                                                       const opara__gemm_out* o) {
    const float* ap = a->p;
    __m256 c00 = _mm256_setzero_ps(), c01 = _mm256_setzero_ps(), c10 = _mm256_setzero_ps();
    __m256 c11 = _mm256_setzero_ps(), c20 = _mm256_setzero_ps(), c21 = _mm256_setzero_ps();
    __m256 c30 = _mm256_setzero_ps(), c31 = _mm256_setzero_ps(), c40 = _mm256_setzero_ps();
    __m256 c41 = _mm256_setzero_ps(), c50 = _mm256_setzero_ps(), c51 = _mm256_setzero_ps();
    size_t p;
    (void)rows, (void)cols;
    for (p = 0; p < kc; ++p) {
        __m256 b0 = _mm256_loadu_ps(bp), b1 = _mm256_loadu_ps(bp + 8);
        OPARA__FMA_ROW(0, c00, c01);
        OPARA__FMA_ROW(1, c10, c11);
        OPARA__FMA_ROW(2, c20, c21);
        OPARA__FMA_ROW(3, c30, c31);
        OPARA__FMA_ROW(4, c40, c41);
        OPARA__FMA_ROW(5, c50, c51);
        ap += 6;
        bp += 16;
    }
    OPARA__FIN_ROW(0, c00, c01);
    OPARA__FIN_ROW(1, c10, c11);
    OPARA__FIN_ROW(2, c20, c21);
    OPARA__FIN_ROW(3, c30, c31);
    OPARA__FIN_ROW(4, c40, c41);
    OPARA__FIN_ROW(5, c50, c51);
}
#  undef OPARA__FMA_ROW
#  undef OPARA__FIN_ROW

/* 12 x 32: 24 accumulators of 16 floats, two B vectors and a broadcast of A (31 of the 32 zmm
   registers), so the two FMA pipes always have independent work. */
__attribute__((target("avx512f"))) static inline void opara__gemm_fin_avx512(float* cp, __m512 acc, const opara__gemm_out* o,
                                                                             size_t r, size_t j, __mmask16 m) {
    __m512 v = _mm512_mul_ps(_mm512_set1_ps(o->alpha), acc);
    if (o->beta != 0.0f) v = _mm512_fmadd_ps(_mm512_set1_ps(o->beta), _mm512_maskz_loadu_ps(m, cp), v);
    if (o->row_bias) v = _mm512_add_ps(v, _mm512_set1_ps(o->row_bias[r]));
    if (o->col_bias) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m, o->col_bias + j));
    if (o->relu) v = _mm512_max_ps(_mm512_setzero_ps(), v);
    _mm512_mask_storeu_ps(cp, m, v);
}

#  define OPARA__FMA_ROW(r)                                         \
      do {                                                          \
          __m512 av_ = _mm512_set1_ps(a##r[k]);                     \
          c##r##a = _mm512_fmadd_ps(av_, b0, c##r##a);              \
          c##r##b = _mm512_fmadd_ps(av_, b1, c##r##b);              \
      } while (0)
#  define OPARA__FIN_ROW(r)                                                        \
      do {                                                                         \
          if ((r) < rows) {                                                        \
              opara__gemm_fin_avx512(c + (r) * ldc, c##r##a, o, (r), 0, m0);       \
              if (m1) opara__gemm_fin_avx512(c + (r) * ldc + 16, c##r##b, o, (r), 16, m1); \
          }                                                                        \
      } while (0)
#  define OPARA__ZERO_ROW(r) __m512 c##r##a = _mm512_setzero_ps(), c##r##b = _mm512_setzero_ps()

#  define OPARA__ROW_PTR(r) const float* a##r = a->p + ((r) < rows ? (r) : rows - 1) * a->rs

/* Any tile of up to 12 x 32 outputs, A packed or in place: rows past `rows` read the last row
   again (never past A's end) and are not stored; masked stores leave the columns past `cols`
   alone. */
__attribute__((target("avx512f"))) static void opara__gemm_micro_avx512(size_t kc, const opara__gemm_a* a, const float* bp,
                                                                        float* c, size_t ldc, size_t rows, size_t cols,
                                                                        const opara__gemm_out* o) {
    __mmask16 m0 = (__mmask16)opara__lanes16((int64_t)cols), m1 = (__mmask16)opara__lanes16((int64_t)cols - 16);
    size_t p, k = 0, cs = a->cs;
    OPARA__ROW_PTR(0); OPARA__ROW_PTR(1); OPARA__ROW_PTR(2); OPARA__ROW_PTR(3);
    OPARA__ROW_PTR(4); OPARA__ROW_PTR(5); OPARA__ROW_PTR(6); OPARA__ROW_PTR(7);
    OPARA__ROW_PTR(8); OPARA__ROW_PTR(9); OPARA__ROW_PTR(10); OPARA__ROW_PTR(11);
    OPARA__ZERO_ROW(0); OPARA__ZERO_ROW(1); OPARA__ZERO_ROW(2); OPARA__ZERO_ROW(3);
    OPARA__ZERO_ROW(4); OPARA__ZERO_ROW(5); OPARA__ZERO_ROW(6); OPARA__ZERO_ROW(7);
    OPARA__ZERO_ROW(8); OPARA__ZERO_ROW(9); OPARA__ZERO_ROW(10); OPARA__ZERO_ROW(11);
    for (p = 0; p < kc; ++p, k += cs) {
        __m512 b0 = _mm512_loadu_ps(bp), b1 = _mm512_loadu_ps(bp + 16);
        OPARA__FMA_ROW(0); OPARA__FMA_ROW(1); OPARA__FMA_ROW(2); OPARA__FMA_ROW(3);
        OPARA__FMA_ROW(4); OPARA__FMA_ROW(5); OPARA__FMA_ROW(6); OPARA__FMA_ROW(7);
        OPARA__FMA_ROW(8); OPARA__FMA_ROW(9); OPARA__FMA_ROW(10); OPARA__FMA_ROW(11);
        bp += 32;
    }
    OPARA__FIN_ROW(0); OPARA__FIN_ROW(1); OPARA__FIN_ROW(2); OPARA__FIN_ROW(3);
    OPARA__FIN_ROW(4); OPARA__FIN_ROW(5); OPARA__FIN_ROW(6); OPARA__FIN_ROW(7);
    OPARA__FIN_ROW(8); OPARA__FIN_ROW(9); OPARA__FIN_ROW(10); OPARA__FIN_ROW(11);
}
#  undef OPARA__FMA_ROW
#  undef OPARA__FIN_ROW
#  undef OPARA__ZERO_ROW
#  undef OPARA__ROW_PTR

static int opara__gemm_have_avx512(void) { return __builtin_cpu_supports("avx512f"); }
#else
static int opara__gemm_have_avx512(void) { return 0; }
#endif

#if OPARA__GEMM_NEON
/* 12 x 8: 24 accumulators of 4 floats, per k two B vectors and three A vectors whose lanes multiply
   them (vfmaq_laneq_f32): 29 of the 32 vector registers, 24 FMAs for 5 loads. B strips of 8 keep
   the session's column blocks (128, 512) whole strips, so constant weights are packed once. Any
   tile: A and B are packed with zero padding, so the whole tile is computed and only rows x cols
   stored. */
#  define OPARA__NEON_MR 12
#  define OPARA__NEON_NR 8

/* Stores n (1..4) outputs of acc at cp through the epilogue; a short store goes through a
   temporary, so the tile's edge gets the same arithmetic as its inside. */
static inline void opara__gemm_fin_neon(float* cp, float32x4_t acc, const opara__gemm_out* o, size_t r, size_t j,
                                        size_t n) {
    float tc[4] = {0.0f, 0.0f, 0.0f, 0.0f}, tb[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    float* io = cp;
    const float* cb = o->col_bias ? o->col_bias + j : NULL;
    float32x4_t v = vmulq_n_f32(acc, o->alpha);
    if (n < 4) {
        if (o->beta != 0.0f) memcpy(tc, cp, n * sizeof(float));
        if (cb) memcpy(tb, cb, n * sizeof(float)), cb = tb;
        io = tc;
    }
    if (o->beta != 0.0f) v = vfmaq_n_f32(v, vld1q_f32(io), o->beta);
    if (o->row_bias) v = vaddq_f32(v, vdupq_n_f32(o->row_bias[r]));
    if (cb) v = vaddq_f32(v, vld1q_f32(cb));
    if (o->relu) v = vmaxq_f32(vdupq_n_f32(0.0f), v); /* FMAX gives NaN when either side is NaN */
    vst1q_f32(io, v);
    if (n < 4) memcpy(cp, tc, n * sizeof(float));
}

#  define OPARA__ZERO_ROW(r) float32x4_t c##r##a = vdupq_n_f32(0.0f), c##r##b = vdupq_n_f32(0.0f)
#  define OPARA__FMA_ROW(r, av, lane)                         \
      do {                                                    \
          c##r##a = vfmaq_laneq_f32(c##r##a, b0, av, lane);   \
          c##r##b = vfmaq_laneq_f32(c##r##b, b1, av, lane);   \
      } while (0)
#  define OPARA__FIN_ROW(r)                                                              \
      do {                                                                               \
          if ((r) < rows) {                                                              \
              opara__gemm_fin_neon(c + (r) * ldc, c##r##a, o, (r), 0, cols < 4 ? cols : 4); \
              if (cols > 4) opara__gemm_fin_neon(c + (r) * ldc + 4, c##r##b, o, (r), 4, cols - 4); \
          }                                                                              \
      } while (0)

static void opara__gemm_micro_neon(size_t kc, const opara__gemm_a* a, const float* bp, float* c, size_t ldc, size_t rows,
                                   size_t cols, const opara__gemm_out* o) {
    const float* ap = a->p;
    size_t p;
    OPARA__ZERO_ROW(0); OPARA__ZERO_ROW(1); OPARA__ZERO_ROW(2); OPARA__ZERO_ROW(3);
    OPARA__ZERO_ROW(4); OPARA__ZERO_ROW(5); OPARA__ZERO_ROW(6); OPARA__ZERO_ROW(7);
    OPARA__ZERO_ROW(8); OPARA__ZERO_ROW(9); OPARA__ZERO_ROW(10); OPARA__ZERO_ROW(11);
    for (p = 0; p < kc; ++p) {
        float32x4_t b0 = vld1q_f32(bp), b1 = vld1q_f32(bp + 4);
        float32x4_t a0 = vld1q_f32(ap), a1 = vld1q_f32(ap + 4), a2 = vld1q_f32(ap + 8);
        OPARA__FMA_ROW(0, a0, 0); OPARA__FMA_ROW(1, a0, 1); OPARA__FMA_ROW(2, a0, 2); OPARA__FMA_ROW(3, a0, 3);
        OPARA__FMA_ROW(4, a1, 0); OPARA__FMA_ROW(5, a1, 1); OPARA__FMA_ROW(6, a1, 2); OPARA__FMA_ROW(7, a1, 3);
        OPARA__FMA_ROW(8, a2, 0); OPARA__FMA_ROW(9, a2, 1); OPARA__FMA_ROW(10, a2, 2); OPARA__FMA_ROW(11, a2, 3);
        ap += OPARA__NEON_MR;
        bp += OPARA__NEON_NR;
    }
    OPARA__FIN_ROW(0); OPARA__FIN_ROW(1); OPARA__FIN_ROW(2); OPARA__FIN_ROW(3);
    OPARA__FIN_ROW(4); OPARA__FIN_ROW(5); OPARA__FIN_ROW(6); OPARA__FIN_ROW(7);
    OPARA__FIN_ROW(8); OPARA__FIN_ROW(9); OPARA__FIN_ROW(10); OPARA__FIN_ROW(11);
}
#  undef OPARA__ZERO_ROW
#  undef OPARA__FMA_ROW
#  undef OPARA__FIN_ROW
#endif

/* The micro-kernel of this CPU: AVX-512 where the CPU has it, else AVX2+FMA, else portable C; NEON
   on aarch64. OPARA_CPU_ISA=avx2 (or =neon) or =portable caps the choice (to test or compare the
   narrower paths on a wider CPU); a request the CPU cannot run falls to the next narrower path. */
typedef struct opara__gemm_isa {
    size_t mr, nr;
    opara__gemm_micro_fn micro;
    int partial;  /* the micro-kernel stores partial tiles itself */
    int in_place; /* it reads A unpacked (row-major A needs no packing) */
    const char* name;
} opara__gemm_isa;

#define OPARA__GEMM_MAX_TILE (12 * 32) /* the widest tile: AVX-512's (NEON's is 12 x 8) */

OPARA__PRIVATE int opara__cpu_isa_level(void) {
    const char* cap = getenv("OPARA_CPU_ISA");
    int limit = !cap || !*cap                                          ? 2
                : strcmp(cap, "avx2") == 0 || strcmp(cap, "neon") == 0 ? 1
                : strcmp(cap, "portable") == 0                         ? 0
                                                                       : 2;
#if OPARA__GEMM_NEON
    if (limit >= 1) return 1; /* every aarch64 CPU has NEON */
#endif
    if (limit >= 2 && opara__gemm_have_avx512()) return 2;
    if (limit >= 1 && opara__gemm_have_avx2()) return 1;
    return 0;
}

static opara__gemm_isa opara__gemm_pick_isa(void) {
    int level = opara__cpu_isa_level();
    opara__gemm_isa isa;
    isa.mr = OPARA__PORTABLE_MR, isa.nr = OPARA__PORTABLE_NR, isa.micro = opara__gemm_micro_c, isa.partial = 0;
    isa.in_place = 0;
    isa.name = "portable";
#if OPARA__GEMM_AVX2
    if (level == 2) {
        isa.mr = 12, isa.nr = 32, isa.micro = opara__gemm_micro_avx512, isa.partial = 1;
        isa.in_place = 1, isa.name = "avx512";
    } else if (level == 1) {
        isa.mr = 6, isa.nr = 16, isa.micro = opara__gemm_micro_avx2, isa.name = "avx2+fma";
    }
#elif OPARA__GEMM_NEON
    if (level == 1) {
        isa.mr = OPARA__NEON_MR, isa.nr = OPARA__NEON_NR, isa.micro = opara__gemm_micro_neon, isa.partial = 1;
        isa.name = "neon";
    }
#else
    (void)level;
#endif
    return isa;
}

OPARA__PRIVATE const char* opara__sgemm_builtin_kind(void) { return opara__gemm_pick_isa().name; }

/* The edge tile's rows x cols outputs from a plain tile of row pitch nr. */
static void opara__gemm_store(const float* tile, size_t nr, size_t rows, size_t cols, float* c, size_t ldc,
                              const opara__gemm_out* o) {
    size_t i, j;
    for (i = 0; i < rows; ++i)
        for (j = 0; j < cols; ++j) c[i * ldc + j] = opara__gemm_finish(tile[i * nr + j], c + i * ldc + j, o, i, j);
}

/* C = beta * C, then the epilogue, as a pass over C (k = 0, the one-row path, an external BLAS). */
static void opara__gemm_epilogue_pass(size_t m, size_t n, float beta, float* c, size_t ldc, const opara__gemm_epilogue* e,
                                      int scale) {
    size_t i, j;
    for (i = 0; i < m; ++i)
        for (j = 0; j < n; ++j) {
            float v = c[i * ldc + j];
            if (scale) v = beta == 0.0f ? 0.0f : beta * v;
            if (e && e->row_bias) v += e->row_bias[i];
            if (e && e->col_bias) v += e->col_bias[j];
            c[i * ldc + j] = e && e->relu && v < 0.0f ? 0.0f : v;
        }
}

/* sum of a[i] * b[i] */
static float opara__vec_dot(const float* a, const float* b, size_t n) {
    size_t i = 0;
    float sum = 0.0f;
#if OPARA__VEC_SSE
    __m128 acc0 = _mm_setzero_ps(), acc1 = _mm_setzero_ps();
    float part[4];
    for (; i + 8 <= n; i += 8) {
        acc0 = _mm_add_ps(acc0, _mm_mul_ps(_mm_loadu_ps(a + i), _mm_loadu_ps(b + i)));
        acc1 = _mm_add_ps(acc1, _mm_mul_ps(_mm_loadu_ps(a + i + 4), _mm_loadu_ps(b + i + 4)));
    }
    _mm_storeu_ps(part, _mm_add_ps(acc0, acc1));
    sum = (part[0] + part[1]) + (part[2] + part[3]);
#elif OPARA__GEMM_NEON
    float32x4_t acc0 = vdupq_n_f32(0.0f), acc1 = vdupq_n_f32(0.0f), t;
    for (; i + 8 <= n; i += 8) {
        acc0 = vfmaq_f32(acc0, vld1q_f32(a + i), vld1q_f32(b + i));
        acc1 = vfmaq_f32(acc1, vld1q_f32(a + i + 4), vld1q_f32(b + i + 4));
    }
    t = vaddq_f32(acc0, acc1);
    sum = (vgetq_lane_f32(t, 0) + vgetq_lane_f32(t, 1)) + (vgetq_lane_f32(t, 2) + vgetq_lane_f32(t, 3));
#endif
    for (; i < n; ++i) sum += a[i] * b[i];
    return sum;
}

/* One row of op(A) times op(B) (a fully connected layer at batch 1): dot products with the rows
   of B when it is transposed, else a weighted sum of B's rows. */
static void opara__sgemv_row(int trans_b, size_t n, size_t k, float alpha, const float* a, size_t a_step,
                             const float* b, size_t ldb, float beta, float* c) {
    size_t j, p;
    if (trans_b && a_step == 1) {
        for (j = 0; j < n; ++j) {
            float v = alpha * opara__vec_dot(a, b + j * ldb, k);
            c[j] = beta == 0.0f ? v : v + beta * c[j];
        }
        return;
    }
    for (j = 0; j < n; ++j) c[j] = beta == 0.0f ? 0.0f : beta * c[j];
    for (p = 0; p < k; ++p) {
        float ap = alpha * a[p * a_step];
        if (trans_b)
            for (j = 0; j < n; ++j) c[j] += ap * b[j * ldb + p];
        else
            opara__vec_axpy(c, b + p * ldb, 1, n, ap);
    }
}

/* The output rule of the tile at (i, j) of C for K block pc: the caller's beta on the first block
   (1 on the later ones, which accumulate), the epilogue on the last. */
static opara__gemm_out opara__gemm_tile_out(float alpha, float beta, int first, int last, const opara__gemm_epilogue* e,
                                            size_t i, size_t j) {
    opara__gemm_out o;
    o.alpha = alpha;
    o.beta = first ? beta : 1.0f;
    o.row_bias = last && e && e->row_bias ? e->row_bias + i : NULL;
    o.col_bias = last && e && e->col_bias ? e->col_bias + j : NULL;
    o.relu = last && e ? e->relu : 0;
    return o;
}

/* The built-in GEMM; `packed` (may be NULL) holds op(B) already in panels, used when it was packed
   for this call's micro-kernel width. */
static void opara__sgemm_run(int trans_a, int trans_b, size_t m, size_t n, size_t k, float alpha, const float* a,
                             size_t lda, const float* b, size_t ldb, float beta, float* c, size_t ldc, float* scratch,
                             const opara__gemm_epilogue* epi, const opara__gemm_packed* packed) {
    opara__gemm_isa isa = opara__gemm_pick_isa();
    float* pack_b = scratch;
    float* pack_a = scratch + (size_t)OPARA__GEMM_KC * OPARA__GEMM_NC;
    float tile[OPARA__GEMM_MAX_TILE];
    size_t jc, pc, ic, jr, ir;
    if (m == 0 || n == 0) return;
    if (k == 0) {
        opara__gemm_epilogue_pass(m, n, beta, c, ldc, epi, 1);
        return;
    }
    if (m == 1) { /* packing would copy all of B for one row */
        opara__sgemv_row(trans_b, n, k, alpha, a, trans_a ? lda : 1, b, ldb, beta, c);
        if (epi) opara__gemm_epilogue_pass(m, n, beta, c, ldc, epi, 0);
        return;
    }
    for (jc = 0; jc < n; jc += OPARA__GEMM_NC) {
        size_t nc = OPARA__MIN((size_t)OPARA__GEMM_NC, n - jc);
        for (pc = 0; pc < k; pc += OPARA__GEMM_KC) {
            size_t kc = OPARA__MIN((size_t)OPARA__GEMM_KC, k - pc);
            int first = pc == 0, last = pc + kc == k;
            const float* panel = pack_b;
            if (packed && packed->nr == isa.nr) panel = packed->data + pc * packed->np + (packed->col0 + jc) * kc;
            else opara__gemm_pack_b(trans_b, b, ldb, pc, kc, jc, nc, isa.nr, pack_b);
            for (ic = 0; ic < m; ic += OPARA__GEMM_MC) {
                size_t mc = OPARA__MIN((size_t)OPARA__GEMM_MC, m - ic);
                int in_place = isa.in_place && !trans_a;
                if (!in_place) opara__gemm_pack_a(trans_a, a, lda, ic, mc, pc, kc, isa.mr, pack_a);
                for (jr = 0; jr < nc; jr += isa.nr) {
                    size_t cols = OPARA__MIN(isa.nr, nc - jr);
                    for (ir = 0; ir < mc; ir += isa.mr) {
                        size_t rows = OPARA__MIN(isa.mr, mc - ir);
                        float* ct = c + (ic + ir) * ldc + jc + jr;
                        opara__gemm_out o = opara__gemm_tile_out(alpha, beta, first, last, epi, ic + ir, jc + jr);
                        opara__gemm_a at;
                        if (in_place) at.p = a + (ic + ir) * lda + pc, at.rs = lda, at.cs = 1;
                        else at.p = pack_a + ir * kc, at.rs = 1, at.cs = isa.mr;
                        if (isa.partial || (rows == isa.mr && cols == isa.nr)) {
                            isa.micro(kc, &at, panel + jr * kc, ct, ldc, rows, cols, &o);
                        } else {
                            isa.micro(kc, &at, panel + jr * kc, tile, isa.nr, isa.mr, isa.nr, &opara__gemm_plain);
                            opara__gemm_store(tile, isa.nr, rows, cols, ct, ldc, &o);
                        }
                    }
                }
            }
        }
    }
}

OPARA__PRIVATE_TOOL void opara__sgemm_builtin_ex(int trans_a, int trans_b, size_t m, size_t n, size_t k, float alpha,
                                            const float* a, size_t lda, const float* b, size_t ldb, float beta, float* c,
                                            size_t ldc, float* scratch, const opara__gemm_epilogue* epi) {
    opara__sgemm_run(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, scratch, epi, NULL);
}

OPARA__PRIVATE size_t opara__gemm_pack_width(void) { return opara__gemm_pick_isa().nr; }

OPARA__PRIVATE size_t opara__gemm_packed_floats(size_t k, size_t n, size_t nr) {
    return k * ((n + nr - 1) / nr * nr);
}

OPARA__PRIVATE void opara__gemm_pack_b_all(int trans_b, const float* b, size_t ldb, size_t k, size_t n, size_t nr,
                                           float* dst) {
    size_t np = (n + nr - 1) / nr * nr, pc;
    for (pc = 0; pc < k; pc += OPARA__GEMM_KC)
        opara__gemm_pack_b(trans_b, b, ldb, pc, OPARA__MIN((size_t)OPARA__GEMM_KC, k - pc), 0, n, nr, dst + pc * np);
}

OPARA__PRIVATE void opara__sgemm_ex(const opara__blas* blas, int trans_a, int trans_b, size_t m, size_t n, size_t k,
                                    float alpha, const float* a, size_t lda, const float* b, size_t ldb, float beta,
                                    float* c, size_t ldc, float* scratch, const opara__gemm_epilogue* epi,
                                    const opara__gemm_packed* packed) {
    const size_t lim = (size_t)INT_MAX;
    if (m == 0 || n == 0) return;
    if (blas && blas->sgemm && k > 0 && m <= lim && n <= lim && k <= lim && lda <= lim && ldb <= lim && ldc <= lim) {
        /* CblasRowMajor = 101, CblasNoTrans = 111, CblasTrans = 112 */
        blas->sgemm(101, trans_a ? 112 : 111, trans_b ? 112 : 111, (int)m, (int)n, (int)k, alpha, a, (int)lda, b,
                    (int)ldb, beta, c, (int)ldc);
        if (epi) opara__gemm_epilogue_pass(m, n, beta, c, ldc, epi, 0);
        return;
    }
    opara__sgemm_run(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, scratch, epi, packed);
}

OPARA__PRIVATE void opara__sgemm(const opara__blas* blas, int trans_a, int trans_b, size_t m, size_t n, size_t k,
                                 float alpha, const float* a, size_t lda, const float* b, size_t ldb, float beta,
                                 float* c, size_t ldc, float* scratch) {
    opara__sgemm_ex(blas, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, scratch, NULL, NULL);
}

/* ---- Gemm and MatMul operators ----------------------------------------------------------------- */

static size_t opara__gemm_scratch(const opara__cpu_op* op) {
    return op->blas && op->blas->sgemm ? 0 : OPARA__GEMM_SCRATCH;
}

/* Splits an m x n output into blocks: rows in blocks of 128, columns in blocks of 512, or of 128
   when that gives fewer than 8 blocks: BERT's [128 x 768] outputs made 2 blocks of 512 and 256
   columns, a 2:1 imbalance on two workers (128-column blocks cost the BLAS about 3%). */
static void opara__gemm_blocking(opara__cpu_params* p, int64_t batch) {
    int64_t bm = 128, bn = 512;
    p->m_blocks = p->m > 0 ? (p->m + bm - 1) / bm : 0;
    if (batch * p->m_blocks * ((p->n + bn - 1) / bn) < 8) bn = 128;
    p->n_blocks = p->n > 0 ? (p->n + bn - 1) / bn : 0;
    p->outer = batch;
    p->tail = bn; /* column block */
}

/* The op's packed B for a call starting at column col0, or NULL when it has none. */
static const opara__gemm_packed* opara__gemm_op_packed(const opara__cpu_op* op, size_t col0, opara__gemm_packed* out) {
    if (!op->packed) return NULL;
    out->data = op->packed;
    out->nr = op->packed_nr;
    out->np = ((size_t)op->p.n + out->nr - 1) / out->nr * out->nr;
    out->col0 = col0;
    return out;
}

/* Asks for B packed at session creation when it is a constant the built-in GEMM reads (an
   external BLAS takes B as it is) and every call's columns start on a strip (the column blocks of
   opara__gemm_blocking are multiples of every micro-kernel width). */
static void opara__gemm_request_packing(opara__cpu_op* op, int b_const) {
    size_t nr = opara__gemm_pack_width();
    op->packed_floats = 0;
    if (!b_const || op->keep_weights || (op->blas && op->blas->sgemm)) return;
    if (op->p.k <= 0 || op->p.n <= 0 || op->p.m <= 1 || (size_t)op->p.tail % nr) return;
    op->packed_nr = nr;
    op->packed_floats = opara__gemm_packed_floats((size_t)op->p.k, (size_t)op->p.n, nr);
}

static opara_result opara__gemm_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    const opara__cpu_params* p = &op->p;
    const float* a = (const float*)op->in[0].data;
    const float* b = (const float*)op->in[1].data;
    const float* cc = op->n_in > 2 ? (const float*)op->in[2].data : NULL;
    float* y = (float*)op->out[0].data;
    size_t lda = (size_t)(p->trans_a ? p->m : p->k), ldb = (size_t)(p->trans_b ? p->k : p->n), ldy = (size_t)p->n;
    size_t item;
    for (item = begin; item < end; ++item) {
        size_t i0 = (size_t)(item / (size_t)p->n_blocks) * 128, j0 = (item % (size_t)p->n_blocks) * (size_t)p->tail;
        size_t mb = OPARA__MIN((size_t)128, (size_t)p->m - i0), nb = OPARA__MIN((size_t)p->tail, (size_t)p->n - j0);
        const float* ab = p->trans_a ? a + i0 : a + i0 * lda;
        const float* bb = p->trans_b ? b + j0 * ldb : b + j0;
        float beta = 0.0f;
        opara__gemm_epilogue epi;
        opara__gemm_packed packed;
        size_t i, j;
        epi.row_bias = epi.col_bias = NULL;
        epi.relu = p->relu;
        if (cc && p->beta == 1.0f && p->bc_strides[0][0] == 0 && p->bc_strides[0][1] == 1) {
            epi.col_bias = cc + j0; /* C of shape [N] or [1, N]: a bias per column, added as Y is stored */
        } else if (cc && p->beta == 1.0f && p->bc_strides[0][0] == 1 && p->bc_strides[0][1] == 0) {
            epi.row_bias = cc + i0; /* [M, 1] */
        } else if (cc && p->beta != 0.0f) {
            for (i = 0; i < mb; ++i)
                for (j = 0; j < nb; ++j)
                    y[(i0 + i) * ldy + j0 + j] =
                        p->beta * cc[(int64_t)(i0 + i) * p->bc_strides[0][0] + (int64_t)(j0 + j) * p->bc_strides[0][1]];
            beta = 1.0f;
        }
        opara__sgemm_ex(op->blas, p->trans_a, p->trans_b, mb, nb, (size_t)p->k, p->alpha, ab, lda, bb, ldb, beta,
                        y + i0 * ldy + j0, ldy, scratch, &epi, opara__gemm_op_packed(op, j0, &packed));
    }
    return OPARA_OK;
}

OPARA__PRIVATE opara_result opara__cpu_prepare_gemm(opara__cpu_op* op, char* err, size_t cap) {
    opara__cpu_params* p = &op->p;
    const opara__cpu_tensor *a = &op->in[0], *b = &op->in[1], *y = &op->out[0];
    int64_t ka, kb, cm, cn;
    const opara__gemm_params* g;
    if (!op->params || !op->params->resolved || a->ndim != 2 || b->ndim != 2 || y->ndim != 2)
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "Gemm needs 2-D A, B and Y");
    g = &op->params->u.gemm;
    p->trans_a = g->trans_a;
    p->trans_b = g->trans_b;
    p->alpha = g->alpha;
    p->beta = g->beta;
    p->relu = g->activation == OPARA__FUSED_RELU; /* another one is ignored, as before */
    p->m = p->trans_a ? a->dims[1] : a->dims[0];
    ka = p->trans_a ? a->dims[0] : a->dims[1];
    kb = p->trans_b ? b->dims[1] : b->dims[0];
    p->n = p->trans_b ? b->dims[0] : b->dims[1];
    p->k = ka;
    if (ka != kb || y->dims[0] != p->m || y->dims[1] != p->n)
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "Gemm: A, B and Y shapes disagree");
    if (op->n_in > 2 && op->in[2].data) {
        const opara__cpu_tensor* c = &op->in[2];
        if (c->ndim > 2) return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "Gemm: C has rank %d", (int)c->ndim);
        cn = c->ndim >= 1 ? c->dims[c->ndim - 1] : 1;
        cm = c->ndim == 2 ? c->dims[0] : 1;
        if ((cn != 1 && cn != p->n) || (cm != 1 && cm != p->m))
            return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "Gemm: C does not broadcast to [M, N]");
        p->bc_strides[0][0] = cm == 1 ? 0 : cn;
        p->bc_strides[0][1] = cn == 1 ? 0 : 1;
    }
    opara__gemm_blocking(p, 1);
    opara__gemm_request_packing(op, b->is_const);
    op->work_items = (size_t)(p->m_blocks * p->n_blocks);
    op->scratch_floats = opara__gemm_scratch(op);
    op->min_items_per_task = 1;
    op->fn = opara__gemm_kernel;
    return OPARA_OK;
}

OPARA__PRIVATE void opara__cpu_matmul_batch_offsets(const opara__cpu_params* p, size_t batch, int64_t* aoff,
                                                    int64_t* boff) {
    size_t rem = batch;
    int d;
    *aoff = 0, *boff = 0;
    for (d = p->bc_ndim - 1; d >= 0; --d) {
        size_t idx = rem % (size_t)p->bc_dims[d];
        rem /= (size_t)p->bc_dims[d];
        *aoff += (int64_t)idx * p->a_batch_stride[d];
        *boff += (int64_t)idx * p->b_batch_stride[d];
    }
}

/* Batched, broadcasting MatMul: p->bc_ndim batch dims with A/B element offsets per batch index
   in a_batch_stride/b_batch_stride. */
static opara_result opara__matmul_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    const opara__cpu_params* p = &op->p;
    const float* a = (const float*)op->in[0].data;
    const float* b = (const float*)op->in[1].data;
    float* y = (float*)op->out[0].data;
    size_t per_batch = (size_t)(p->m_blocks * p->n_blocks), item;
    for (item = begin; item < end; ++item) {
        size_t batch = item / per_batch, blk = item % per_batch;
        size_t i0 = (blk / (size_t)p->n_blocks) * 128, j0 = (blk % (size_t)p->n_blocks) * (size_t)p->tail;
        size_t mb = OPARA__MIN((size_t)128, (size_t)p->m - i0), nb = OPARA__MIN((size_t)p->tail, (size_t)p->n - j0);
        int64_t aoff, boff;
        opara__gemm_packed packed;
        opara__cpu_matmul_batch_offsets(p, batch, &aoff, &boff);
        opara__sgemm_ex(op->blas, 0, 0, mb, nb, (size_t)p->k, 1.0f, a + aoff + (int64_t)i0 * p->k, (size_t)p->k,
                        b + boff + j0, (size_t)p->n, 0.0f, y + batch * (size_t)(p->m * p->n) + i0 * (size_t)p->n + j0,
                        (size_t)p->n, scratch, NULL, opara__gemm_op_packed(op, j0, &packed));
    }
    return OPARA_OK;
}

/* MatMul's geometry by numpy's rules (MatMulInteger and QLinearMatMul share it): p->m, n, k, the
   broadcast batch dims in bc_dims/bc_ndim with each operand's element step per batch index in
   a_batch_stride/b_batch_stride, and *batch their product. */
OPARA__PRIVATE opara_result opara__cpu_matmul_geometry(opara__cpu_op* op, const opara__cpu_tensor* a,
                                                      const opara__cpu_tensor* b, int64_t* batch, char* err, size_t cap) {
    opara__cpu_params* p = &op->p;
    const opara__cpu_tensor* y = &op->out[0];
    const char* name = opara__op_name(op->node->op);
    /* zeroed: GCC 13 cannot see that only the first ab / bb entries are read */
    int64_t adims[OPARA_MAX_DIMS] = {0}, bdims[OPARA_MAX_DIMS] = {0}, astr[OPARA_MAX_DIMS], bstr[OPARA_MAX_DIMS];
    int32_t ab = a->ndim >= 2 ? a->ndim - 2 : 0, bb = b->ndim >= 2 ? b->ndim - 2 : 0, nb, i, expect;
    int64_t ka;
    *batch = 1;
    if (a->ndim < 1 || b->ndim < 1) return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "%s of a scalar", name);
    p->m = a->ndim >= 2 ? a->dims[a->ndim - 2] : 1;
    ka = a->dims[a->ndim - 1];
    p->k = b->ndim >= 2 ? b->dims[b->ndim - 2] : b->dims[0];
    p->n = b->ndim >= 2 ? b->dims[b->ndim - 1] : 1;
    if (ka != p->k) return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "%s: inner dimensions %lld and %lld differ",
                                             name, (long long)ka, (long long)p->k);
    nb = OPARA__MAX(ab, bb);
    expect = nb + (a->ndim >= 2) + (b->ndim >= 2);
    if (y->ndim != expect) return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "%s: output rank %d, expected %d",
                                                    name, (int)y->ndim, (int)expect);
    for (i = 0; i < nb; ++i) {
        int64_t da = i - (nb - ab) >= 0 ? a->dims[i - (nb - ab)] : 1;
        int64_t db = i - (nb - bb) >= 0 ? b->dims[i - (nb - bb)] : 1;
        if (da != db && da != 1 && db != 1)
            return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "%s: batch dimensions do not broadcast", name);
        p->bc_dims[i] = da == 1 ? db : da;
        if (y->dims[i] != p->bc_dims[i]) return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "%s: output shape", name);
        *batch *= p->bc_dims[i];
    }
    if ((a->ndim >= 2 && y->dims[nb] != p->m) || (b->ndim >= 2 && y->dims[y->ndim - 1] != p->n))
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "%s: output shape", name);
    for (i = 0; i < ab; ++i) adims[i] = a->dims[i];
    for (i = 0; i < bb; ++i) bdims[i] = b->dims[i];
    opara__cpu_bcast_strides(nb, p->bc_dims, ab, adims, astr);
    opara__cpu_bcast_strides(nb, p->bc_dims, bb, bdims, bstr);
    p->bc_ndim = nb;
    for (i = 0; i < nb; ++i) { /* element strides of one batch step */
        p->a_batch_stride[i] = astr[i] * p->m * p->k;
        p->b_batch_stride[i] = bstr[i] * p->k * p->n;
    }
    return OPARA_OK;
}

OPARA__PRIVATE opara_result opara__cpu_prepare_matmul(opara__cpu_op* op, char* err, size_t cap) {
    opara__cpu_params* p = &op->p;
    const opara__cpu_tensor *a = &op->in[0], *b = &op->in[1];
    int32_t i;
    int64_t batch = 1, acc;
    opara_result r = opara__cpu_matmul_geometry(op, a, b, &batch, err, cap);
    if (r != OPARA_OK) return r;
    {
        int all_b_bcast = 1, a_full = 1;
        int32_t nb = p->bc_ndim, ab = a->ndim >= 2 ? a->ndim - 2 : 0;
        for (i = 0; i < nb; ++i)
            if (p->b_batch_stride[i] != 0 && p->bc_dims[i] != 1) all_b_bcast = 0;
        for (i = 0, acc = 1; i < nb; ++i) acc *= p->bc_dims[i];
        a_full = ab == nb;
        for (i = 0; i < ab; ++i) if (a->dims[i] != p->bc_dims[i]) a_full = 0;
        /* [batch..., M, K] x [K, N]: one GEMM with batch*M rows */
        if (all_b_bcast && a_full && nb > 0) {
            p->m *= acc;
            p->bc_ndim = 0;
            batch = 1;
        }
    }
    opara__gemm_blocking(p, batch);
    { /* one B for every batch: a constant one is packed once */
        int b_shared = 1;
        for (i = 0; i < p->bc_ndim; ++i)
            if (p->b_batch_stride[i] != 0) b_shared = 0;
        opara__gemm_request_packing(op, b->is_const && b_shared);
    }
    op->work_items = (size_t)(batch * p->m_blocks * p->n_blocks);
    op->scratch_floats = opara__gemm_scratch(op);
    op->min_items_per_task = 1;
    op->fn = opara__matmul_kernel;
    return OPARA_OK;
}
