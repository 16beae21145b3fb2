/* The logic operators' kernels: comparisons, And/Or/Xor, Mod and BitShift with broadcasting (opara_logic_binary);
 * Not, IsNaN and IsInf (opara_logic_unary); one step of the variadic Max, Min, Mean and Sum (opara_variadic_step).
 *
 * dtype codes are ONNX's: 1 float, 2 uint8, 3 int8, 6 int32, 7 int64, 9 bool, 11 double.
 * Shapes come as in elementwise.cu: meta[0] = ndim, the output's dims, then each operand's element strides.
 * Binary op codes (mirrored in src/cuda/opara_backend_cuda.h, opara__cuda_logic_op):
 *   0 Equal  1 Greater  2 Less  3 GreaterOrEqual  4 LessOrEqual  5 And  6 Or  7 Xor
 *   8 Mod (integers: the divisor's sign)  9 Mod fmod=1 (the dividend's sign)  10 BitShift left  11 right
 * Unary op codes: 0 Not, 1 IsNaN, 2 IsInf (flags: 1 negative, 2 positive).
 * Variadic op codes: 0 Max, 1 Min, 2 Mean, 3 Sum. */
#include "opara_kernel.h"

OPARA_DEVICE int opara__k_is_float(int dtype) { return dtype == 1 || dtype == 11; }

OPARA_DEVICE double opara__k_logic_load_f(const unsigned char* base, int dtype, long long i)
{
    return dtype == 1 ? (double)((const float*)(const void*)base)[i] : ((const double*)(const void*)base)[i];
}

OPARA_DEVICE long long opara__k_logic_load_i(const unsigned char* base, int dtype, long long i)
{
    switch (dtype) {
    case 3: return (long long)((const signed char*)(const void*)base)[i];
    case 6: return (long long)((const int*)(const void*)base)[i];
    case 7: return ((const long long*)(const void*)base)[i];
    default: return (long long)base[i]; /* uint8, bool */
    }
}

OPARA_DEVICE void opara__k_logic_store_i(unsigned char* base, int dtype, long long i, long long v)
{
    switch (dtype) {
    case 3: ((signed char*)(void*)base)[i] = (signed char)v; break;
    case 6: ((int*)(void*)base)[i] = (int)v; break;
    case 7: ((long long*)(void*)base)[i] = v; break;
    default: base[i] = (unsigned char)v; break;
    }
}

OPARA_DEVICE void opara__k_logic_store_f(unsigned char* base, int dtype, long long i, double v)
{
    if (dtype == 1) ((float*)(void*)base)[i] = (float)v;
    else ((double*)(void*)base)[i] = v;
}

/* Integer Mod; a zero divisor (undefined in ONNX) and -1 (INT_MIN % -1 traps) give 0, as on the CPU. */
OPARA_DEVICE long long opara__k_mod(long long x, long long z, int floor_mod)
{
    long long r;
    if (z == 0 || z == -1) return 0;
    r = x % z;
    if (floor_mod && r != 0 && ((r < 0) != (z < 0))) r += z;
    return r;
}

/* Comparison op (0 ==, 1 >, 2 <, 3 >=, 4 <=) of x and z, of whichever type they are (double, long long). */
#define OPARA__K_COMPARE(op, x, z) \
    ((op) == 0 ? (x) == (z) : (op) == 1 ? (x) > (z) : (op) == 2 ? (x) < (z) : (op) == 3 ? (x) >= (z) : (x) <= (z))

/* y[i] = a[.] op b[.]; dtype is the operands' type (the output's: bool for comparisons and And/Or/Xor). */
OPARA_KERNEL(opara_logic_binary, (const unsigned char*, a), (const unsigned char*, b), (unsigned char*, y), (int, n),
             (int, op), (int, dtype), (const int*, meta))
{
    int i;
    for (i = (int)(blockIdx.x * blockDim.x + threadIdx.x); i < n; i += (int)(blockDim.x * gridDim.x)) {
        long long ia = opara__k_strided_offset(i, meta, 0), ib = opara__k_strided_offset(i, meta, 1);
        if (op <= 4 && opara__k_is_float(dtype)) {
            double x = opara__k_logic_load_f(a, dtype, ia), z = opara__k_logic_load_f(b, dtype, ib);
            y[i] = (unsigned char)OPARA__K_COMPARE(op, x, z);
        } else if (op <= 4) {
            long long x = opara__k_logic_load_i(a, dtype, ia), z = opara__k_logic_load_i(b, dtype, ib);
            y[i] = (unsigned char)OPARA__K_COMPARE(op, x, z);
        } else if (op <= 7) {
            int x = a[ia] != 0, z = b[ib] != 0;
            y[i] = (unsigned char)(op == 5 ? (x & z) : op == 6 ? (x | z) : (x ^ z));
        } else if (op <= 9 && opara__k_is_float(dtype)) { /* fmod=1: C's fmod, exact in double for floats too */
            opara__k_logic_store_f(y, dtype, i, fmod(opara__k_logic_load_f(a, dtype, ia), opara__k_logic_load_f(b, dtype, ib)));
        } else if (op <= 9) {
            opara__k_logic_store_i(y, dtype, i,
                                   opara__k_mod(opara__k_logic_load_i(a, dtype, ia), opara__k_logic_load_i(b, dtype, ib), op == 8));
        } else { /* BitShift (uint8): a shift by the width or more gives 0 */
            unsigned int x = a[ia], z = b[ib];
            y[i] = (unsigned char)(z >= 8u ? 0u : op == 10 ? x << z : x >> z);
        }
    }
}

/* Not (bool), IsNaN and IsInf (float or double in, bool out). */
OPARA_KERNEL(opara_logic_unary, (const unsigned char*, x), (unsigned char*, y), (int, n), (int, op), (int, dtype),
             (int, flags))
{
    int i;
    for (i = (int)(blockIdx.x * blockDim.x + threadIdx.x); i < n; i += (int)(blockDim.x * gridDim.x)) {
        if (op == 0) {
            y[i] = (unsigned char)(x[i] == 0);
        } else {
            double v = opara__k_logic_load_f(x, dtype, i), inf = (double)OPARA_INF_F32;
            y[i] = (unsigned char)(op == 1 ? v != v : (((flags & 2) && v == inf) || ((flags & 1) && v == -inf)));
        }
    }
}

/* One input of Max, Min, Mean or Sum folded into y (the output, dense): y = x when first, else y op x; then y /=
 * divide_by when it is not 0 (Mean's last input). meta: the output's dims and x's strides. Max and Min propagate
 * NaN (ONNX's reference, numpy's maximum/minimum). */
OPARA_KERNEL(opara_variadic_step, (const unsigned char*, x), (unsigned char*, y), (int, n), (int, op), (int, dtype),
             (int, first), (int, divide_by), (const int*, meta))
{
    int i;
    for (i = (int)(blockIdx.x * blockDim.x + threadIdx.x); i < n; i += (int)(blockDim.x * gridDim.x)) {
        long long ix = opara__k_strided_offset(i, meta, 0);
        if (opara__k_is_float(dtype)) {
            double v = opara__k_logic_load_f(x, dtype, ix), acc = first ? v : opara__k_logic_load_f(y, dtype, i);
            if (!first && op == 0) acc = v > acc || v != v ? v : acc;
            else if (!first && op == 1) acc = v < acc || v != v ? v : acc;
            else if (!first && dtype == 1) acc = (double)((float)acc + (float)v); /* f32 arithmetic, as the CPU's */
            else if (!first) acc = acc + v;
            if (divide_by && dtype == 1) acc = (double)((float)acc / (float)divide_by);
            else if (divide_by) acc = acc / (double)divide_by;
            opara__k_logic_store_f(y, dtype, i, acc);
        } else {
            long long v = opara__k_logic_load_i(x, dtype, ix), acc = first ? v : opara__k_logic_load_i(y, dtype, i);
            if (!first) acc = op == 0 ? (v > acc ? v : acc) : (v < acc ? v : acc);
            opara__k_logic_store_i(y, dtype, i, acc);
        }
    }
}

#undef OPARA__K_COMPARE
