/* The kernels of the emulator's cuBLAS and cuDNN fakes (tests/cudaemu/emu_cublas.c, emu_cudnn.c), written in
 * the dialect of src/cuda/kernels/opara_kernel.h and executed by the emulator like any kernel, so a library call
 * takes part in stream ordering and capture exactly as a kernel launch does. They belong to the emulator,
 * not to opara (host build only; their "PTX" is never produced). Straightforward one-thread-per-output
 * loops: correctness and NVIDIA's reading rules (alpha == 0 reads no input, beta == 0 reads no output)
 * matter here, speed does not. */
#include "opara_kernel.h"

/* Operand rounding of the tensor-core paths (what the fakes pass as `rmode`; emu_lib.h EMU_ROUND_*):
 *   0 none (FP32 FMA), 1 TF32, 2 FP16, 3 BF16.
 * TF32 keeps 10 explicit mantissa bits and FP32's exponent range, rounding to nearest with ties away from
 * zero: NVIDIA's own conversion (crt/mma.h __float_to_tf32 = PTX cvt.rna.tf32.f32, the only f32->tf32
 * rounding of sm_80). FP16 is IEEE binary16 round-to-nearest-even with its range (overflow to infinity,
 * subnormals below 2^-14); BF16 keeps 7 mantissa bits, round-to-nearest-even. NaN and infinity pass. */
OPARA_DEVICE float opara_emulib_round(float v, int mode) {
    union { float f; unsigned int u; } b;
    unsigned int mag;
    if (mode == 0) return v;
    b.f = v;
    mag = b.u & 0x7fffffffu;
    if (mag >= 0x7f800000u) return v; /* NaN, infinity */
    if (mode == 1) {
        b.u = (b.u + 0x1000u) & ~0x1fffu; /* half an ulp added to the magnitude: ties away from zero */
    } else if (mode == 3) {
        b.u = (b.u + 0x7fffu + ((b.u >> 16) & 1u)) & 0xffff0000u;
    } else {
        float a = fabsf(v);
        if (a >= 65520.0f) return v < 0.0f ? -OPARA_INF_F32 : OPARA_INF_F32; /* rounds above 65504 */
        if (a < 6.103515625e-05f) return rintf(v * 16777216.0f) / 16777216.0f; /* subnormal: steps of 2^-24 */
        b.u = (b.u + 0xfffu + ((b.u >> 13) & 1u)) & ~0x1fffu;
    }
    return b.f;
}

/* IEEE binary16 bits to float, exactly (every half is a float: subnormals are m * 2^-24, infinity and NaN keep
 * their sign and payload). */
OPARA_DEVICE float opara_emulib_half(unsigned int h) {
    union { float f; unsigned int u; } b;
    unsigned int sign = (h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    if (e == 0) {
        float v = (float)m * 5.9604644775390625e-08f; /* 2^-24 */
        return sign ? -v : v;
    }
    b.u = sign | (e == 31 ? 0x7f800000u : (e + 112u) << 23) | (m << 13);
    return b.f;
}

/* Element i of an operand: float, or (f16) binary16 stored where p points. */
OPARA_DEVICE float opara_emulib_load(const float* p, long long i, int f16) {
    if (f16) return opara_emulib_half(((const unsigned short*)(const void*)p)[i]);
    return p[i];
}

/* Column-major C[i + j*ldc] = alpha * sum_l op(A)[i,l] * op(B)[l,j] + beta * C, one batch per grid z.
 * ta/tb: 0 = N, 1 = T (the fake maps CUBLAS_OP_C to T for real types). Each thread computes a 4x4 tile of C
 * (rows 4*(blockIdx.x*blockDim.x + threadIdx.x) + 0..3, columns likewise with y): 16 sums from 8 loads per
 * step of l keeps the emulator's host execution fast; every sum still runs over l in order, as a plain
 * loop would. Edge tiles read clamped rows and columns and write only the valid part. `rmode` rounds the
 * operands before the FP32 accumulation (opara_emulib_round), as tensor cores do. f16_in: A and B hold binary16
 * (cublasGemmEx CUDA_R_16F; the strides and leading dimensions count elements), converted exactly. */
OPARA_KERNEL(opara_emulib_sgemm, (int, ta), (int, tb), (int, m), (int, n), (int, k), (float, alpha),
             (const float*, A), (int, lda), (long long, stride_a), (const float*, B), (int, ldb),
             (long long, stride_b), (float, beta), (float*, C), (int, ldc), (long long, stride_c), (int, rmode),
             (int, f16_in))
{
    int i0 = (int)(blockIdx.x * blockDim.x + threadIdx.x) * 4;
    int j0 = (int)(blockIdx.y * blockDim.y + threadIdx.y) * 4;
    long long batch = (long long)blockIdx.z;
    long long a0 = batch * stride_a, b0 = batch * stride_b; /* element offsets of this batch's A and B */
    float* c = C + batch * stride_c;
    long long a_row = ta ? lda : 1, a_col = ta ? 1 : lda, b_row = tb ? ldb : 1, b_col = tb ? 1 : ldb;
    long long a_off[4], b_off[4];
    float acc[4][4];
    int r, q, l;
    if (i0 >= m || j0 >= n) return;
    for (r = 0; r < 4; r++) {
        a_off[r] = (long long)(i0 + r < m ? i0 + r : m - 1) * a_row;
        b_off[r] = (long long)(j0 + r < n ? j0 + r : n - 1) * b_col;
        for (q = 0; q < 4; q++) acc[r][q] = 0.0f;
    }
    if (alpha != 0.0f)
        for (l = 0; l < k; l++) {
            long long al = a0 + (long long)l * a_col, bl = b0 + (long long)l * b_row;
            float av[4], bv[4];
            for (r = 0; r < 4; r++) {
                av[r] = opara_emulib_round(opara_emulib_load(A, al + a_off[r], f16_in), rmode);
                bv[r] = opara_emulib_round(opara_emulib_load(B, bl + b_off[r], f16_in), rmode);
            }
            for (r = 0; r < 4; r++)
                for (q = 0; q < 4; q++) acc[r][q] += av[r] * bv[q];
        }
    for (r = 0; r < 4 && i0 + r < m; r++)
        for (q = 0; q < 4 && j0 + q < n; q++) {
            float* out = c + (i0 + r) + (long long)(j0 + q) * ldc;
            float v = alpha * acc[r][q];
            if (beta != 0.0f) v += beta * *out;
            *out = v;
        }
}

OPARA_DEVICE int opara_emulib_hi(long long v) { return (int)(v >> 32); }
OPARA_DEVICE int opara_emulib_lo(long long v) { return (int)(v & 0xffffffffLL); }

/* NCHW convolution with cuDNN's bias/activation epilogue, one thread per output element:
 *   y = act(alpha1 * conv(x, w) + alpha2 * z + bias)
 * Plain cudnnConvolutionForward is the same with z = y, alpha2 = beta, no bias, identity.
 * Pairs of ints travel packed in one long long (hi, lo) to stay within the dialect's 24 parameters:
 * xs_nc/xs_hw, zs_*, ys_* are element strides; nc = (N, C), hw = (H, W), kg = (K, groups), rs = (R, S),
 * ohw = (OH, OW), pad/str/dil = (h, w). flags bit 0: CUDNN_CONVOLUTION (flipped filter), bit 1: ReLU,
 * bits 2-3: the rounding of x and w before the FP32 accumulation (opara_emulib_round), bit 4: the ReLU keeps
 * NaN (CUDNN_PROPAGATE_NAN; without it a NaN becomes 0, as cuDNN's NOT_PROPAGATE_NAN does).
 * bias_stride is the channel stride of the 1xKx1x1 bias (bias may be NULL). */
OPARA_KERNEL(opara_emulib_conv2d, (const float*, x), (const float*, w), (const float*, z), (const float*, bias),
             (float*, y), (long long, xs_nc), (long long, xs_hw), (long long, zs_nc), (long long, zs_hw),
             (long long, ys_nc), (long long, ys_hw), (long long, nc), (long long, hw), (long long, kg),
             (long long, rs), (long long, ohw), (long long, pad), (long long, str), (long long, dil), (int, flags),
             (float, alpha1), (float, alpha2), (int, bias_stride))
{
    long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    int N = opara_emulib_hi(nc), C = opara_emulib_lo(nc), H = opara_emulib_hi(hw), W = opara_emulib_lo(hw);
    int K = opara_emulib_hi(kg), G = opara_emulib_lo(kg), R = opara_emulib_hi(rs), S = opara_emulib_lo(rs);
    int OH = opara_emulib_hi(ohw), OW = opara_emulib_lo(ohw);
    int cpg = C / G, kpg = K / G, rmode = (flags >> 2) & 3;
    int ow, oh, kk, nn, g, c, r, s;
    float acc = 0.0f, out;
    if (idx >= (long long)N * K * OH * OW) return;
    ow = (int)(idx % OW);
    oh = (int)(idx / OW % OH);
    kk = (int)(idx / ((long long)OW * OH) % K);
    nn = (int)(idx / ((long long)OW * OH * K));
    g = kk / kpg;
    if (alpha1 != 0.0f)
        for (c = 0; c < cpg; c++)
            for (r = 0; r < R; r++) {
                int ih = oh * opara_emulib_hi(str) - opara_emulib_hi(pad) + r * opara_emulib_hi(dil);
                if (ih < 0 || ih >= H) continue;
                for (s = 0; s < S; s++) {
                    int iw = ow * opara_emulib_lo(str) - opara_emulib_lo(pad) + s * opara_emulib_lo(dil);
                    int fr = (flags & 1) ? R - 1 - r : r, fs = (flags & 1) ? S - 1 - s : s;
                    float xv, wv;
                    if (iw < 0 || iw >= W) continue;
                    xv = x[nn * (long long)opara_emulib_hi(xs_nc) + (g * cpg + c) * (long long)opara_emulib_lo(xs_nc) +
                           ih * (long long)opara_emulib_hi(xs_hw) + iw * (long long)opara_emulib_lo(xs_hw)];
                    wv = w[(((long long)kk * cpg + c) * R + fr) * S + fs];
                    acc += opara_emulib_round(xv, rmode) * opara_emulib_round(wv, rmode);
                }
            }
    out = alpha1 * acc;
    if (alpha2 != 0.0f)
        out += alpha2 * z[nn * (long long)opara_emulib_hi(zs_nc) + kk * (long long)opara_emulib_lo(zs_nc) +
                          oh * (long long)opara_emulib_hi(zs_hw) + ow * (long long)opara_emulib_lo(zs_hw)];
    if (bias) out += bias[kk * (long long)bias_stride];
    if ((flags & 2) && !(out > 0.0f) && !((flags & 16) && out != out)) out = 0.0f;
    y[nn * (long long)opara_emulib_hi(ys_nc) + kk * (long long)opara_emulib_lo(ys_nc) +
      oh * (long long)opara_emulib_hi(ys_hw) + ow * (long long)opara_emulib_lo(ys_hw)] = out;
}

/* cudnnAddTensor: C = alpha * A + beta * C over up to 5 dimensions; a broadcast dimension of A has stride 0. */
OPARA_KERNEL(opara_emulib_add_tensor, (const float*, A), (float*, C), (int, d0), (int, d1), (int, d2), (int, d3),
             (int, d4), (int, as0), (int, as1), (int, as2), (int, as3), (int, as4), (int, cs0), (int, cs1),
             (int, cs2), (int, cs3), (int, cs4), (float, alpha), (float, beta))
{
    long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x, rest;
    long long ai = 0, ci = 0;
    int i4, i3, i2, i1, i0;
    float out = 0.0f;
    if (idx >= (long long)d0 * d1 * d2 * d3 * d4) return;
    rest = idx;
    i4 = (int)(rest % d4);
    rest /= d4;
    i3 = (int)(rest % d3);
    rest /= d3;
    i2 = (int)(rest % d2);
    rest /= d2;
    i1 = (int)(rest % d1);
    i0 = (int)(rest / d1);
    ai = (long long)i0 * as0 + (long long)i1 * as1 + (long long)i2 * as2 + (long long)i3 * as3 + (long long)i4 * as4;
    ci = (long long)i0 * cs0 + (long long)i1 * cs1 + (long long)i2 * cs2 + (long long)i3 * cs3 + (long long)i4 * cs4;
    if (alpha != 0.0f) out = alpha * A[ai];
    if (beta != 0.0f) out += beta * C[ci];
    C[ci] = out;
}

/* The reduction of a split-K GEMM (emu_cublas.c): C = alpha * sum over the splits of the partial products
 * W[s] (m x n, column-major, leading dimension m, one after the other) + beta * C; beta == 0 reads no C. */
OPARA_KERNEL(opara_emulib_splitk_reduce, (const float*, W), (float*, C), (int, m), (int, n), (int, ldc), (int, splits),
             (float, alpha), (float, beta))
{
    long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x, mn = (long long)m * n;
    float acc = 0.0f, v;
    int s, i, j;
    if (idx >= mn) return;
    i = (int)(idx % m);
    j = (int)(idx / m);
    for (s = 0; s < splits; s++) acc += W[s * mn + idx];
    v = alpha * acc;
    if (beta != 0.0f) v += beta * C[i + (long long)j * ldc];
    C[i + (long long)j * ldc] = v;
}

/* dst[i] = src[i]: the filter transform of cuDNN's workspace algorithms (emu_cudnn.c), which then read the
 * filter from the workspace. */
OPARA_KERNEL(opara_emulib_copy_f32, (const float*, src), (float*, dst), (long long, n))
{
    long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < n) dst[idx] = src[idx];
}
