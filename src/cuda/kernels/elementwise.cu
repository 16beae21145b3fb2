/* Strided element-wise kernels: broadcast binary operators, Where, Cast and the strided copy
 * behind Transpose, Slice, Concat, Split and Expand.
 *
 * Shapes come in a small int array in device memory (meta), written once at session creation:
 *   meta[0] = ndim (1..8), then ndim output dims, then ndim element strides per operand (stride 0
 *   broadcasts). Element i of the output has the row-major multi-index of i over the dims.
 * Binary op codes: 0 Add, 1 Sub, 2 Mul, 3 Div, 4 Pow (mirrored in src/cuda/opara_backend_cuda.h).
 * Cast dtype codes are ONNX's: 1 float, 2 uint8, 3 int8, 6 int32, 7 int64, 9 bool, 11 double. */
#include "opara_kernel.h"

/* Offset of element i in operand `which` (0-based, after the dims) of a meta block. */
OPARA_DEVICE long long opara__k_strided_offset(long long i, const int* meta, int which)
{
    int ndim = meta[0], d;
    const int* dims = meta + 1;
    const int* strides = meta + 1 + ndim * (1 + which);
    long long off = 0;
    for (d = ndim - 1; d >= 0; --d) {
        long long idx = i % dims[d];
        i /= dims[d];
        off += idx * strides[d];
    }
    return off;
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

/* y[i] = a[.] op b[.] with meta = [ndim, dims, a strides, b strides]; n = product of dims. */
OPARA_KERNEL(opara_binary_f32, (const float*, a), (const float*, b), (float*, y), (int, n), (int, op),
             (const int*, meta))
{
    int i;
    for (i = (int)(blockIdx.x * blockDim.x + threadIdx.x); i < n; i += (int)(blockDim.x * gridDim.x))
        y[i] = opara__k_binary_f32(op, a[opara__k_strided_offset(i, meta, 0)], b[opara__k_strided_offset(i, meta, 1)]);
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
 * of meta = [ndim, dims, src strides, dst strides] (offsets in elements of elem_size bytes). */
OPARA_KERNEL(opara_strided_copy, (const unsigned char*, src), (unsigned char*, dst), (int, n), (int, elem_size),
             (long long, src_off), (long long, dst_off), (const int*, meta))
{
    int i;
    for (i = (int)(blockIdx.x * blockDim.x + threadIdx.x); i < n; i += (int)(blockDim.x * gridDim.x)) {
        long long s = src_off + opara__k_strided_offset(i, meta, 0);
        long long d = dst_off + opara__k_strided_offset(i, meta, 1);
        opara__k_copy_elem(dst + d * elem_size, src + s * elem_size, elem_size);
    }
}

OPARA_DEVICE double opara__k_load_as_double(const unsigned char* p, int dtype)
{
    switch (dtype) {
    case 1: return (double)*(const float*)(const void*)p;
    case 2: return (double)*p;
    case 3: return (double)*(const signed char*)(const void*)p;
    case 6: return (double)*(const int*)(const void*)p;
    case 7: return (double)*(const long long*)(const void*)p;
    case 9: return *p ? 1.0 : 0.0;
    default: return *(const double*)(const void*)p;
    }
}

OPARA_DEVICE long long opara__k_load_as_int(const unsigned char* p, int dtype)
{
    switch (dtype) {
    case 2: return (long long)*p;
    case 3: return (long long)*(const signed char*)(const void*)p;
    case 6: return (long long)*(const int*)(const void*)p;
    case 7: return *(const long long*)(const void*)p;
    case 9: return *p ? 1 : 0;
    default: return (long long)opara__k_load_as_double(p, dtype); /* float to int truncates */
    }
}

OPARA_DEVICE int opara__k_dtype_size(int dtype)
{
    switch (dtype) {
    case 2: case 3: case 9: return 1;
    case 1: case 6: return 4;
    default: return 8;
    }
}

/* y[i] = (to) x[i]; integer to integer goes through int64 (wraps like C), float targets through
 * double, bool is x != 0. */
OPARA_KERNEL(opara_cast, (const unsigned char*, x), (unsigned char*, y), (int, n), (int, from), (int, to))
{
    int i, si = opara__k_dtype_size(from), so = opara__k_dtype_size(to);
    for (i = (int)(blockIdx.x * blockDim.x + threadIdx.x); i < n; i += (int)(blockDim.x * gridDim.x)) {
        const unsigned char* p = x + (long long)i * si;
        unsigned char* q = y + (long long)i * so;
        switch (to) {
        case 1: *(float*)(void*)q = (float)opara__k_load_as_double(p, from); break;
        case 11: *(double*)(void*)q = opara__k_load_as_double(p, from); break;
        case 9: *q = (unsigned char)(opara__k_load_as_double(p, from) != 0.0); break;
        case 2: *q = (unsigned char)opara__k_load_as_int(p, from); break;
        case 3: *(signed char*)(void*)q = (signed char)opara__k_load_as_int(p, from); break;
        case 6: *(int*)(void*)q = (int)opara__k_load_as_int(p, from); break;
        default: *(long long*)(void*)q = opara__k_load_as_int(p, from); break;
        }
    }
}
