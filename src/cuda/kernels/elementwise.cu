/* Element-wise kernels: the unary math operators, and the strided ones: broadcast binary operators,
 * Where and the strided copy behind Transpose, Slice, Concat, Split and Expand.
 *
 * Math op codes (mirrored in src/cuda/opara_backend_cuda.h), parameters a, b:
 *   0 Neg   1 Abs   2 Exp   3 Log   4 Reciprocal   5 Floor   6 Ceil   7 Round (half to even)   8 Sign
 *   9 Sin   10 Cos   11 Tan   12 Softplus   13 Softsign   14 Elu(a = alpha)   15 Selu(a = alpha, b = gamma)
 *   16 Celu(a = alpha)   17 ThresholdedRelu(a = alpha)   18 Asin   19 Acos   20 Atan   21 Sinh   22 Cosh
 *   23 Asinh   24 Acosh   25 Atanh
 *
 * Shapes come in a small int array in device memory (meta), written once at session creation:
 *   meta[0] = ndim (1..8), then ndim output dims, then ndim element strides per operand (stride 0
 *   broadcasts). Element i of the output has the row-major multi-index of i over the dims.
 *   The lowering collapses the shape first (size-1 dims dropped, dims every operand steps through as one
 *   merged). Where it has at most 4 dims, binary_f32 and strided_copy also get it in arguments
 *   (fast_ndim = 1..4; 0: read meta): the dims right-aligned in 4 slots, the first implicit (n / the
 *   rest), and each operand's 4 strides, so that an element costs fast_ndim - 1 32-bit divisions shared
 *   by all operands (none for dense, scalar or same-shape operands, which collapse to one dim).
 * Binary op codes: 0 Add, 1 Sub, 2 Mul, 3 Div, 4 Pow (mirrored in src/cuda/opara_backend_cuda.h).
 * (Cast is in cast.cu.) */
#include "opara_kernel.h"

/* Sin, Cos and Tan are computed here rather than with sinf/cosf/tanf: CUDA's argument reduction for
 * large arguments keeps an array in local memory inside a grid-stride loop, which the kernels may not
 * use (tests/test_cuda_nvrtc.c). The reduction is exact enough for every float (Cody-Waite below 2^25,
 * Payne-Hanek with 2/pi's bits above), the polynomials those of fdlibm's __kernel_sin/__kernel_cos. */

/* Word j of the bits of 2/pi after the binary point, 32 at a time. */
OPARA_DEVICE unsigned long long opara__k_two_over_pi(int j)
{
    switch (j) {
    case 0: return 0xa2f9836eu;
    case 1: return 0x4e441529u;
    case 2: return 0xfc2757d1u;
    case 3: return 0xf534ddc0u;
    case 4: return 0xdb629599u;
    case 5: return 0x3c439041u;
    default: return 0xfe5163abu;
    }
}

/* 32 bits of 2/pi starting at bit offset o (0: just after the binary point), o < 192. */
OPARA_DEVICE unsigned long long opara__k_two_over_pi_at(int o)
{
    unsigned long long pair = opara__k_two_over_pi(o / 32) << 32 | opara__k_two_over_pi(o / 32 + 1);
    return (pair >> (32 - o % 32)) & 0xffffffffu;
}

/* |x| = (k + r / (pi/2)) * pi/2 with k mod 4 in *k, r in [-pi/4, pi/4], for |x| >= 2^25: x = m * 2^q
 * (m of 24 bits, q >= 2), so the bits of 2/pi worth 4 or more times m are dropped and the next 96
 * multiply m; the product's bits 94 and 95 are k mod 4, those below the fraction. */
OPARA_DEVICE double opara__k_reduce_large(float ax, int* k)
{
    int e, o;
    unsigned long long m, lo, mid, hi, frac;
    float f = frexpf(ax, &e);
    m = (unsigned long long)ldexpf(f, 24);
    o = e - 24 - 2;
    lo = m * opara__k_two_over_pi_at(o + 64);
    mid = m * opara__k_two_over_pi_at(o + 32) + (lo >> 32);
    hi = m * opara__k_two_over_pi_at(o) + (mid >> 32);
    frac = (hi & 0x3fffffffu) << 32 | (mid & 0xffffffffu); /* 62 bits */
    *k = (int)((hi >> 30) & 3u);
    if (frac >> 61) { /* past a half: round k up */
        *k = (*k + 1) & 3;
        return -(double)((1ull << 62) - frac) * 3.4061215800865545e-19; /* (pi/2) 2^-62 */
    }
    return (double)frac * 3.4061215800865545e-19;
}

/* x = k * pi/2 + r (k mod 4 in *k), r in [-pi/4, pi/4]; pi/2 in three parts, the first two of 26 bits
 * so that their products with k (|k| < 2^25) are exact. */
OPARA_DEVICE double opara__k_reduce(float x, int* k)
{
    double xd = x, kd, r;
    if (fabsf(x) < 33554432.0f) {
        kd = rint(xd * 0.63661977236758138);
        *k = (int)kd & 3;
        return ((xd - kd * 1.5707963407039642) - kd * -1.3909067675399456e-08) - kd * 6.123233995736766e-17;
    }
    r = opara__k_reduce_large(fabsf(x), k);
    if (x < 0.0f) *k = (4 - *k) & 3;
    return x < 0.0f ? -r : r;
}

/* Sin (op 9), Cos (10) or Tan (11); NaN for an infinite or NaN x, x itself where sin x rounds to x. */
OPARA_DEVICE float opara__k_trig(float x, int op)
{
    double r, z, s, c, sn, cs;
    int k;
    if (x != x || fabsf(x) == OPARA_INF_F32) return x - x;
    if (fabsf(x) < 1e-4f && op != 10) return x + x * x * x * (op == 9 ? -1.0f / 6.0f : 1.0f / 3.0f);
    r = opara__k_reduce(x, &k);
    z = r * r;
    s = -2.50507602534068634195e-08 + z * 1.58969099521155010221e-10;
    s = -1.98412698298579493134e-04 + z * (2.75573137070700676789e-06 + z * s);
    s = r + r * z * (-1.66666666666666324348e-01 + z * (8.33333333332248946124e-03 + z * s));
    c = 2.08757232129817482790e-09 + z * -1.13596475577881948265e-11;
    c = 2.48015872894767294178e-05 + z * (-2.75573143513906633035e-07 + z * c);
    c = 1.0 - 0.5 * z + z * z * (4.16666666666666019037e-02 + z * (-1.38888888888741095749e-03 + z * c));
    sn = k == 0 ? s : (k == 1 ? c : (k == 2 ? -s : -c));
    cs = k == 0 ? c : (k == 1 ? -s : (k == 2 ? -c : s));
    return (float)(op == 9 ? sn : (op == 10 ? cs : sn / cs));
}

/* A NaN x gives NaN (the C library's behaviour), except in ThresholdedRelu, which gives 0 as ONNX does. */
OPARA_DEVICE float opara__k_math(float x, int op, float a, float b)
{
    switch (op) {
    case 0: return -x;
    case 1: return fabsf(x);
    case 2: return expf(x);
    case 3: return logf(x);
    case 4: return 1.0f / x;
    case 5: return floorf(x);
    case 6: return ceilf(x);
    case 7: return rintf(x);
    case 8: return x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : x);
    case 9: case 10: case 11: return opara__k_trig(x, op);
    case 12: return x > 0.0f ? x + log1pf(expf(-x)) : log1pf(expf(x));
    case 13: return x / (1.0f + fabsf(x));
    case 14: return x < 0.0f ? a * expm1f(x) : x;
    case 15: return x > 0.0f ? b * x : b * (a * expf(x) - a);
    case 16: return x > 0.0f ? x : a * expm1f(x / a);
    case 17: return x > a ? x : 0.0f;
    case 18: return asinf(x);
    case 19: return acosf(x);
    case 20: return atanf(x);
    case 21: return sinhf(x);
    case 22: return coshf(x);
    case 23: return asinhf(x);
    case 24: return acoshf(x);
    default: return atanhf(x);
    }
}

/* y[i] = math op(x[i]) for i < n (y may be x). One thread per element, grid-stride. */
OPARA_KERNEL(opara_math_f32, (const float*, x), (float*, y), (int, n), (int, op), (float, a), (float, b))
{
    int i;
    for (i = (int)(blockIdx.x * blockDim.x + threadIdx.x); i < n; i += (int)(blockDim.x * gridDim.x))
        y[i] = opara__k_math(x[i], op, a, b);
}

OPARA_DEVICE float opara__k_binary_f32(int op, float x, float z)
{
    switch (op) {
    case 0: return x + z;
    case 1: return x - z;
    case 2: return x * z;
    case 3: return x / z;
    default: return powf(x, z);
    }
}

OPARA_DEVICE long long opara__k_ipow(long long x, long long e)
{
    long long r = 1;
    if (e < 0) return x == 1 ? 1 : (x == -1 ? ((e & 1) ? -1 : 1) : 0);
    while (e > 0) {
        if (e & 1) r *= x;
        x *= x;
        e >>= 1;
    }
    return r;
}

OPARA_DEVICE long long opara__k_binary_i64(int op, long long x, long long z)
{
    switch (op) {
    case 0: return x + z;
    case 1: return x - z;
    case 2: return x * z;
    case 3: {
        /* ONNX integer Div truncates like C; division by zero gives 0 instead of a trap */
        return z == 0 ? 0 : x / z;
    }
    default: return opara__k_ipow(x, z);
    }
}

/* The multi-index (c0, c1, c2, c3) of element i over dims [., d1, d2, d3] of which the last fast_ndim
 * count (the others are 1): fast_ndim - 1 divisions. */
OPARA_DEVICE void opara__k_split4(int i, int fast_ndim, int d1, int d2, int d3, int* c)
{
    int t = i, q;
    c[0] = c[1] = c[2] = 0;
    c[3] = i;
    if (fast_ndim >= 2) q = t / d3, c[3] = t - q * d3, t = q, c[2] = t;
    if (fast_ndim >= 3) q = t / d2, c[2] = t - q * d2, t = q, c[1] = t;
    if (fast_ndim >= 4) q = t / d1, c[1] = t - q * d1, c[0] = q;
}

OPARA_DEVICE int opara__k_dot4(const int* c, int s0, int s1, int s2, int s3)
{
    return c[0] * s0 + c[1] * s1 + c[2] * s2 + c[3] * s3;
}

/* y[i] = act(a[.] op b[.]) with meta = [ndim, dims, a strides, b strides]; n = product of dims;
 * act: opara__k_act's code without parameters (0 none, Relu, Gelu: a fused activation); fast_ndim,
 * d1..d3, as0..as3, bs0..bs3: the same shape in arguments (see the top of the file). */
OPARA_KERNEL(opara_binary_f32, (const float*, a), (const float*, b), (float*, y), (int, n), (int, op), (int, act),
             (const int*, meta), (int, fast_ndim), (int, d1), (int, d2), (int, d3), (int, as0), (int, as1),
             (int, as2), (int, as3), (int, bs0), (int, bs1), (int, bs2), (int, bs3))
{
    int i, c[4];
    for (i = (int)(blockIdx.x * blockDim.x + threadIdx.x); i < n; i += (int)(blockDim.x * gridDim.x)) {
        if (fast_ndim == 0) {
            y[i] = opara__k_act(opara__k_binary_f32(op, a[opara__k_strided_offset(i, meta, 0)], b[opara__k_strided_offset(i, meta, 1)]),
                                act, 0.0f, 0.0f);
        } else {
            opara__k_split4(i, fast_ndim, d1, d2, d3, c);
            y[i] = opara__k_act(opara__k_binary_f32(op, a[opara__k_dot4(c, as0, as1, as2, as3)], b[opara__k_dot4(c, bs0, bs1, bs2, bs3)]),
                                act, 0.0f, 0.0f);
        }
    }
}

/* Integer version: is64 selects int64 (else int32) elements. */
OPARA_KERNEL(opara_binary_int, (const void*, a), (const void*, b), (void*, y), (int, n), (int, op), (int, is64),
             (const int*, meta))
{
    int i;
    for (i = (int)(blockIdx.x * blockDim.x + threadIdx.x); i < n; i += (int)(blockDim.x * gridDim.x)) {
        long long ia = opara__k_strided_offset(i, meta, 0), ib = opara__k_strided_offset(i, meta, 1);
        if (is64) {
            ((long long*)y)[i] = opara__k_binary_i64(op, ((const long long*)a)[ia], ((const long long*)b)[ib]);
        } else {
            ((int*)y)[i] = (int)opara__k_binary_i64(op, ((const int*)a)[ia], ((const int*)b)[ib]);
        }
    }
}

OPARA_DEVICE void opara__k_copy_elem(unsigned char* dst, const unsigned char* src, int elem_size)
{
    int k;
    /* the lowering copies runs of 4-byte elements as 8-byte units where offsets allow; a value the
     * plan placed at a less aligned address is then copied byte by byte */
    if ((((unsigned long long)dst | (unsigned long long)src) & (unsigned long long)(elem_size - 1)) != 0) {
        for (k = 0; k < elem_size; ++k) dst[k] = src[k];
        return;
    }
    switch (elem_size) {
    case 1: *dst = *src; break;
    case 2: *(unsigned short*)(void*)dst = *(const unsigned short*)(const void*)src; break;
    case 4: *(unsigned int*)(void*)dst = *(const unsigned int*)(const void*)src; break;
    default: *(unsigned long long*)(void*)dst = *(const unsigned long long*)(const void*)src; break;
    }
}

/* y[i] = cond[.] ? x[.] : z[.]; cond is bool (one byte); meta = [ndim, dims, cond, x, z strides];
 * elem_size is 1, 2, 4 or 8 bytes. */
OPARA_KERNEL(opara_where, (const unsigned char*, cond), (const unsigned char*, x), (const unsigned char*, z),
             (unsigned char*, y), (int, n), (int, elem_size), (const int*, meta))
{
    int i;
    for (i = (int)(blockIdx.x * blockDim.x + threadIdx.x); i < n; i += (int)(blockDim.x * gridDim.x)) {
        const unsigned char* src = cond[opara__k_strided_offset(i, meta, 0)]
                                       ? x + opara__k_strided_offset(i, meta, 1) * elem_size
                                       : z + opara__k_strided_offset(i, meta, 2) * elem_size;
        opara__k_copy_elem(y + (long long)i * elem_size, src, elem_size);
    }
}

/* dst[dst_off + offset(i, dst strides)] = src[src_off + offset(i, src strides)] for every element
 * of meta = [ndim, dims, src strides, dst strides] (offsets in elements of elem_size bytes); fast_ndim,
 * d1..d3, ss0..ss3, ds0..ds3: the same shape in arguments (see the top of the file). */
OPARA_KERNEL(opara_strided_copy, (const unsigned char*, src), (unsigned char*, dst), (int, n), (int, elem_size),
             (long long, src_off), (long long, dst_off), (const int*, meta), (int, fast_ndim), (int, d1), (int, d2),
             (int, d3), (int, ss0), (int, ss1), (int, ss2), (int, ss3), (int, ds0), (int, ds1), (int, ds2), (int, ds3))
{
    int i, c[4];
    for (i = (int)(blockIdx.x * blockDim.x + threadIdx.x); i < n; i += (int)(blockDim.x * gridDim.x)) {
        long long s, d;
        if (fast_ndim == 0) {
            s = src_off + opara__k_strided_offset(i, meta, 0);
            d = dst_off + opara__k_strided_offset(i, meta, 1);
        } else {
            opara__k_split4(i, fast_ndim, d1, d2, d3, c);
            s = src_off + opara__k_dot4(c, ss0, ss1, ss2, ss3);
            d = dst_off + opara__k_dot4(c, ds0, ds1, ds2, ds3);
        }
        opara__k_copy_elem(dst + d * elem_size, src + s * elem_size, elem_size);
    }
}
