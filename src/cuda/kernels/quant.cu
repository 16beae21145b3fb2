/* The quantization operators: QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear, as the CPU
 * computes them (src/cpu/opara_cpu_quant.c): x / scale in float, rounded half to even, plus the zero
 * point, saturated to u8 or i8; a NaN quantizes to the zero point. Scales and zero points are one value
 * or one per index of an axis: x is viewed as [outer, mid, inner] and element i uses index
 * (i / inner) % mid (mid 1: per tensor). Types are ONNX's codes: 2 u8, 3 i8, 6 i32. */
#include "opara_kernel.h"

/* round-half-even(v) + zp saturated to [lo, hi] (NaN: zp), in float. */
OPARA_DEVICE float opara__k_quantize(float v, float zp, float lo, float hi)
{
    float r = v != v ? zp : rintf(v) + zp;
    return r < lo ? lo : r > hi ? hi : r;
}

/* Element i of a u8 (2), i8 (3) or i32 (6) tensor; a NULL tensor (an omitted zero point) is 0. */
OPARA_DEVICE int opara__k_int_at(const unsigned char* p, int type, int i)
{
    if (!p) return 0;
    if (type == 3) return (int)((const signed char*)(const void*)p)[i];
    if (type == 6) return ((const int*)(const void*)p)[i];
    return (int)p[i];
}

/* y (u8, or i8 when to_i8) = quantize(x / scale[c], zp[c]) with c the element's index along the axis. */
OPARA_KERNEL(opara_quantize_linear, (const float*, x), (const float*, scale), (const unsigned char*, zp),
             (unsigned char*, y), (int, n), (int, inner), (int, mid), (int, to_i8))
{
    float lo = to_i8 ? -128.0f : 0.0f, hi = to_i8 ? 127.0f : 255.0f;
    int i;
    for (i = (int)(blockIdx.x * blockDim.x + threadIdx.x); i < n; i += (int)(blockDim.x * gridDim.x)) {
        int c = (i / inner) % mid;
        float q = opara__k_quantize(x[i] / scale[c], (float)opara__k_int_at(zp, to_i8 ? 3 : 2, c), lo, hi);
        y[i] = to_i8 ? (unsigned char)(signed char)(int)q : (unsigned char)(int)q;
    }
}

/* y = (x - zp[c]) * scale[c] for x (and zp) of `type`; the difference in 64 bits (i32 - i32). */
OPARA_KERNEL(opara_dequantize_linear, (const unsigned char*, x), (const float*, scale), (const unsigned char*, zp),
             (float*, y), (int, n), (int, inner), (int, mid), (int, type))
{
    int i;
    for (i = (int)(blockIdx.x * blockDim.x + threadIdx.x); i < n; i += (int)(blockDim.x * gridDim.x)) {
        int c = (i / inner) % mid;
        long long d = (long long)opara__k_int_at(x, type, i) - (long long)opara__k_int_at(zp, type, c);
        y[i] = (float)d * scale[c];
    }
}

#define OPARA__QUANT_THREADS 256

/* DynamicQuantizeLinear in one block of OPARA__QUANT_THREADS threads: the range of x widened to hold
 * 0 (NaNs left out: their comparisons are false), scale = range / 255 (1 for an empty range, as ONNX
 * Runtime), zero point = quantize(0 - min / scale), then y. */
OPARA_KERNEL(opara_dynamic_quantize_linear, (const float*, x), (unsigned char*, y), (float*, y_scale),
             (unsigned char*, y_zp), (int, n))
{
    OPARA_SHARED(float, lo_buf, OPARA__QUANT_THREADS);
    OPARA_SHARED(float, hi_buf, OPARA__QUANT_THREADS);
    unsigned int t = threadIdx.x, s;
    float lo = 0.0f, hi = 0.0f, scale, zp;
    int i;
    for (i = (int)t; i < n; i += (int)blockDim.x) {
        float v = x[i];
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
    }
    lo_buf[t] = lo;
    hi_buf[t] = hi;
    __syncthreads();
    for (s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s) {
            lo_buf[t] = lo_buf[t + s] < lo_buf[t] ? lo_buf[t + s] : lo_buf[t];
            hi_buf[t] = hi_buf[t + s] > hi_buf[t] ? hi_buf[t + s] : hi_buf[t];
        }
        __syncthreads();
    }
    lo = lo_buf[0];
    hi = hi_buf[0];
    scale = hi == lo ? 1.0f : (hi - lo) / 255.0f;
    zp = opara__k_quantize(0.0f - lo / scale, 0.0f, 0.0f, 255.0f);
    if (t == 0) {
        *y_scale = scale;
        *y_zp = (unsigned char)(int)zp;
    }
    for (i = (int)t; i < n; i += (int)blockDim.x) y[i] = (unsigned char)(int)opara__k_quantize(x[i] / scale, zp, 0.0f, 255.0f);
}
