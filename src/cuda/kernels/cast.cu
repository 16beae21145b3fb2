/* Cast from a float type (f32, f16, f64) to any, and from any to f16, bit for bit as the CPU's Cast
 * (src/cpu/opara_cpu_elementwise.c, src/core/opara_util.c): f16 -> wider types is exact (subnormals,
 * inf, NaN); to f16 the value rounds once, to nearest even, from the exact double (f64 does not round
 * through f32), overflows to inf and NaN stays NaN; float to integer as ONNX Runtime computes it on
 * x86-64: toward zero, to int64 NaN or out of range gives INT64_MIN, to int32/int8/uint8 through int32
 * (NaN or out of range: INT32_MIN) and then wrapped; to bool x != 0.
 * Written with arithmetic only (no bit casts), so that the host build and the PTX agree.
 * dtype codes are ONNX's: 1 float, 2 uint8, 3 int8, 6 int32, 7 int64, 9 bool, 10 float16, 11 double;
 * opara_cast takes the other sources, the integers and bool: to an integer through int64 (wrapping like
 * C), to f32/f64 rounded once, to bool x != 0. */
#include "opara_kernel.h"

OPARA_DEVICE float opara__k_f16_value(unsigned short h)
{
    int e = (h >> 10) & 0x1F, m = h & 0x3FF;
    float v = e == 0 ? (float)m * 5.9604644775390625e-8f
              : e == 31 ? (m ? OPARA_INF_F32 - OPARA_INF_F32 : OPARA_INF_F32) : ldexpf(1.0f + (float)m / 1024.0f, e - 15);
    return (h & 0x8000) ? -v : v;
}

/* Round-to-nearest-even binary16 bits of d; rint rounds half to even (the default mode). */
OPARA_DEVICE unsigned short opara__k_f16_bits(double d)
{
    unsigned short sign = (unsigned short)(signbit(d) ? 0x8000 : 0);
    double a = fabs(d);
    int e;
    if (d != d) return (unsigned short)(sign | 0x7E00);
    if (a >= 65520.0) return (unsigned short)(sign | 0x7C00); /* 65520 is the tie above 65504: to inf */
    if (a < 6.103515625e-05) /* below 2^-14: units of 2^-24; 1024 of them is the smallest normal's bits */
        return (unsigned short)(sign | (unsigned short)rint(a * 16777216.0));
    e = ilogb(a);
    /* a carry out of the 10 mantissa bits (m = 1024) moves into the exponent, as it should */
    return (unsigned short)(sign | (unsigned short)(((e + 15) << 10) + (int)rint((ldexp(a, -e) - 1.0) * 1024.0)));
}

/* An integer or bool element, exactly (int64 would not fit a double). */
OPARA_DEVICE long long opara__k_cast_load_int(const unsigned char* p, int dtype)
{
    switch (dtype) {
    case 2: return (long long)*p;
    case 3: return (long long)*(const signed char*)(const void*)p;
    case 6: return (long long)*(const int*)(const void*)p;
    case 9: return *p ? 1 : 0;
    default: return *(const long long*)(const void*)p;
    }
}

OPARA_DEVICE double opara__k_cast_load(const unsigned char* p, int dtype)
{
    switch (dtype) {
    case 1: return (double)*(const float*)(const void*)p;
    case 10: return (double)opara__k_f16_value(*(const unsigned short*)(const void*)p);
    case 11: return *(const double*)(const void*)p;
    default: return (double)opara__k_cast_load_int(p, dtype);
    }
}

/* Float to integer (the comparisons are false for NaN): to int64 (7) in range, else INT64_MIN; to the
 * others through int32, out of range INT32_MIN. */
OPARA_DEVICE long long opara__k_cast_to_int(double v, int to)
{
    if (to == 7) return v >= -9223372036854775808.0 && v < 9223372036854775808.0 ? (long long)v : -0x7fffffffffffffffLL - 1;
    return v > -2147483649.0 && v < 2147483648.0 ? (long long)(int)v : -0x7fffffffLL - 1;
}

OPARA_DEVICE int opara__k_cast_size(int dtype)
{
    switch (dtype) {
    case 2: case 3: case 9: return 1;
    case 10: return 2;
    case 1: case 6: return 4;
    default: return 8;
    }
}

/* y[i] = (to) x[i] where from is a float type (1, 10, 11) or to is f16 (10). */
OPARA_KERNEL(opara_cast_float, (const unsigned char*, x), (unsigned char*, y), (int, n), (int, from), (int, to))
{
    int i, si = opara__k_cast_size(from), so = opara__k_cast_size(to);
    for (i = (int)(blockIdx.x * blockDim.x + threadIdx.x); i < n; i += (int)(blockDim.x * gridDim.x)) {
        double v = opara__k_cast_load(x + (long long)i * si, from);
        unsigned char* q = y + (long long)i * so;
        switch (to) {
        case 10: *(unsigned short*)(void*)q = opara__k_f16_bits(v); break;
        case 1: *(float*)(void*)q = (float)v; break;
        case 11: *(double*)(void*)q = v; break;
        case 9: *q = (unsigned char)(v != 0.0); break;
        case 2: *q = (unsigned char)opara__k_cast_to_int(v, to); break;
        case 3: *(signed char*)(void*)q = (signed char)opara__k_cast_to_int(v, to); break;
        case 6: *(int*)(void*)q = (int)opara__k_cast_to_int(v, to); break;
        default: *(long long*)(void*)q = opara__k_cast_to_int(v, to); break;
        }
    }
}

/* y[i] = (to) x[i] where from is an integer type or bool (2, 3, 6, 7, 9) and to is not f16. */
OPARA_KERNEL(opara_cast, (const unsigned char*, x), (unsigned char*, y), (int, n), (int, from), (int, to))
{
    int i, si = opara__k_cast_size(from), so = opara__k_cast_size(to);
    for (i = (int)(blockIdx.x * blockDim.x + threadIdx.x); i < n; i += (int)(blockDim.x * gridDim.x)) {
        long long v = opara__k_cast_load_int(x + (long long)i * si, from);
        unsigned char* q = y + (long long)i * so;
        switch (to) {
        case 1: *(float*)(void*)q = (float)v; break;
        case 11: *(double*)(void*)q = (double)v; break;
        case 9: *q = (unsigned char)(v != 0); break;
        case 2: *q = (unsigned char)v; break;
        case 3: *(signed char*)(void*)q = (signed char)v; break;
        case 6: *(int*)(void*)q = (int)v; break;
        default: *(long long*)(void*)q = v; break;
        }
    }
}
