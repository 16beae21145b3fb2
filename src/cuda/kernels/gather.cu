/* The gather/scatter and index-pattern kernels: GatherElements, ScatterElements (and Scatter),
 * GatherND, ScatterND, Tile, Trilu, EyeLike, Size, OneHot and ReverseSequence (DepthToSpace and
 * SpaceToDepth are strided copies). An index out of range never reads or writes outside a tensor: a
 * gather writes zeros for it, a scatter skips it (the CPU backend reports it as an error). */
#include "opara_kernel.h"

OPARA_DEVICE void opara__k_put_elem(unsigned char* dst, const unsigned char* src, int elem_size)
{
    int b;
    if (elem_size == 4) {
        *(unsigned int*)(void*)dst = *(const unsigned int*)(const void*)src;
        return;
    }
    for (b = 0; b < elem_size; ++b) dst[b] = src[b];
}

OPARA_DEVICE void opara__k_zero_elem(unsigned char* dst, int elem_size)
{
    int b;
    for (b = 0; b < elem_size; ++b) dst[b] = 0;
}

OPARA_DEVICE long long opara__k_index(const void* indices, int idx64, long long i)
{
    return idx64 ? ((const long long*)indices)[i] : (long long)((const int*)indices)[i];
}

/* v against a dim of size n (negative counts from the end); -1 when out of range. */
OPARA_DEVICE long long opara__k_norm_index(long long v, long long n)
{
    if (v < 0) v += n;
    return v < 0 || v >= n ? -1 : v;
}

/* *dst combined with *src by the reduction (0 none, 1 add, 2 mul, 3 max, 4 min; max and min keep a NaN
 * of either side) for ONNX data types 1 f32, 11 f64, 6 i32, 7 i64, 3 i8, 2 u8; none copies bytes. */
OPARA_DEVICE void opara__k_scatter_apply(unsigned char* dst, const unsigned char* src, int elem_size, int dtype,
                                         int reduction)
{
    if (reduction == 0) {
        opara__k_put_elem(dst, src, elem_size);
    } else if (dtype == 1) {
        float* d = (float*)(void*)dst;
        float s = *(const float*)(const void*)src;
        *d = reduction == 1 ? *d + s : reduction == 2 ? *d * s
           : reduction == 3 ? (s > *d || s != s ? s : *d) : (s < *d || s != s ? s : *d);
    } else if (dtype == 11) {
        double* d = (double*)(void*)dst;
        double s = *(const double*)(const void*)src;
        *d = reduction == 1 ? *d + s : reduction == 2 ? *d * s
           : reduction == 3 ? (s > *d || s != s ? s : *d) : (s < *d || s != s ? s : *d);
    } else if (dtype == 6) {
        int* d = (int*)(void*)dst;
        int s = *(const int*)(const void*)src;
        *d = reduction == 1 ? (int)((unsigned)*d + (unsigned)s) : reduction == 2 ? (int)((unsigned)*d * (unsigned)s)
           : reduction == 3 ? (s > *d ? s : *d) : (s < *d ? s : *d);
    } else if (dtype == 7) {
        long long* d = (long long*)(void*)dst;
        long long s = *(const long long*)(const void*)src;
        *d = reduction == 1 ? (long long)((unsigned long long)*d + (unsigned long long)s)
           : reduction == 2 ? (long long)((unsigned long long)*d * (unsigned long long)s)
           : reduction == 3 ? (s > *d ? s : *d) : (s < *d ? s : *d);
    } else if (dtype == 3) {
        signed char* d = (signed char*)(void*)dst;
        signed char s = *(const signed char*)(const void*)src;
        *d = reduction == 1 ? (signed char)(unsigned char)((unsigned)*d + (unsigned)s)
           : reduction == 2 ? (signed char)(unsigned char)((unsigned)*d * (unsigned)s)
           : reduction == 3 ? (s > *d ? s : *d) : (s < *d ? s : *d);
    } else if (dtype == 2) {
        unsigned char s = *src;
        *dst = reduction == 1 ? (unsigned char)(*dst + s) : reduction == 2 ? (unsigned char)(*dst * s)
             : reduction == 3 ? (s > *dst ? s : *dst) : (s < *dst ? s : *dst);
    }
}

/* GatherElements: y (the indices' shape) from x; meta = [ndim, index dims, x strides]. */
OPARA_KERNEL(opara_gather_elements, (const unsigned char*, x), (const void*, indices), (unsigned char*, y), (int, n),
             (int, elem_size), (int, idx64), (int, axis), (int, axis_len), (const int*, meta))
{
    int ndim = meta[0];
    int i;
    for (i = (int)(blockIdx.x * blockDim.x + threadIdx.x); i < n; i += (int)(blockDim.x * gridDim.x)) {
        long long rest = i, off = 0, v = opara__k_norm_index(opara__k_index(indices, idx64, i), axis_len);
        int d;
        for (d = ndim - 1; d >= 0; --d) {
            long long c = rest % meta[1 + d];
            rest /= meta[1 + d];
            if (d != axis) off += c * meta[1 + ndim + d];
        }
        if (v < 0) opara__k_zero_elem(y + (long long)i * elem_size, elem_size);
        else opara__k_put_elem(y + (long long)i * elem_size, x + (off + v * meta[1 + ndim + axis]) * elem_size, elem_size);
    }
}

/* ScatterElements into y (already a copy of the data): one thread per line of the indices along the
 * axis (n_lines of them), which applies that line's updates in order, so duplicates reduce as the CPU
 * does. meta = [ndim, index dims, y strides]. */
OPARA_KERNEL(opara_scatter_elements, (const void*, indices), (const unsigned char*, updates), (unsigned char*, y),
             (int, n_lines), (int, elem_size), (int, dtype), (int, reduction), (int, idx64), (int, axis),
             (int, axis_len), (const int*, meta))
{
    int ndim = meta[0], line;
    for (line = (int)(blockIdx.x * blockDim.x + threadIdx.x); line < n_lines; line += (int)(blockDim.x * gridDim.x)) {
        long long rest = line, off = 0, lin = 0, mul = 1, along = 1, j;
        int d;
        for (d = ndim - 1; d >= 0; --d) {
            long long c;
            if (d == axis) {
                along = mul;
                mul *= meta[1 + d];
                continue;
            }
            c = rest % meta[1 + d];
            rest /= meta[1 + d];
            off += c * meta[1 + ndim + d];
            lin += c * mul;
            mul *= meta[1 + d];
        }
        for (j = 0; j < meta[1 + axis]; ++j) {
            long long at = lin + j * along, v = opara__k_norm_index(opara__k_index(indices, idx64, at), axis_len);
            if (v < 0) continue;
            opara__k_scatter_apply(y + (off + v * meta[1 + ndim + axis]) * elem_size, updates + at * elem_size, elem_size,
                                   dtype, reduction);
        }
    }
}

/* The element offset of index tuple t of GatherND/ScatterND, -1 when an index is out of range:
 * tuples of k indices, m tuples per batch of `base` elements; meta = [k dims, k strides] of the
 * indexed data dims. */
OPARA_DEVICE long long opara__k_nd_offset(const void* indices, int idx64, long long t, int k, int m, long long base,
                                          const int* meta)
{
    long long off = (t / m) * base;
    int j;
    for (j = 0; j < k; ++j) {
        long long v = opara__k_norm_index(opara__k_index(indices, idx64, t * k + j), meta[j]);
        if (v < 0) return -1;
        off += v * meta[k + j];
    }
    return off;
}

/* GatherND: y is [tuples, inner]; inner elements from x at each tuple's offset. */
OPARA_KERNEL(opara_gather_nd, (const unsigned char*, x), (const void*, indices), (unsigned char*, y), (int, n),
             (int, elem_size), (int, idx64), (int, k), (int, m), (int, inner), (long long, base), (const int*, meta))
{
    int i;
    for (i = (int)(blockIdx.x * blockDim.x + threadIdx.x); i < n; i += (int)(blockDim.x * gridDim.x)) {
        long long off = opara__k_nd_offset(indices, idx64, i / inner, k, m, base, meta);
        if (off < 0) opara__k_zero_elem(y + (long long)i * elem_size, elem_size);
        else opara__k_put_elem(y + (long long)i * elem_size, x + (off + i % inner) * elem_size, elem_size);
    }
}

/* ScatterND into y (already a copy of the data): one thread per element of a slice, which applies
 * every tuple's update of it in order. */
OPARA_KERNEL(opara_scatter_nd, (const void*, indices), (const unsigned char*, updates), (unsigned char*, y),
             (int, inner), (int, elem_size), (int, dtype), (int, reduction), (int, idx64), (int, k), (int, tuples),
             (const int*, meta))
{
    int e;
    for (e = (int)(blockIdx.x * blockDim.x + threadIdx.x); e < inner; e += (int)(blockDim.x * gridDim.x)) {
        long long t;
        for (t = 0; t < tuples; ++t) {
            long long off = opara__k_nd_offset(indices, idx64, t, k, tuples, 0, meta);
            if (off < 0) continue;
            opara__k_scatter_apply(y + (off + e) * elem_size, updates + (t * inner + e) * elem_size, elem_size, dtype,
                                   reduction);
        }
    }
}

/* Tile: meta = [ndim, y dims, x dims]; y's coordinates modulo x's dims. */
OPARA_KERNEL(opara_tile, (const unsigned char*, x), (unsigned char*, y), (int, n), (int, elem_size), (const int*, meta))
{
    int ndim = meta[0], i;
    for (i = (int)(blockIdx.x * blockDim.x + threadIdx.x); i < n; i += (int)(blockDim.x * gridDim.x)) {
        long long rest = i, src = 0, mul = 1;
        int d;
        for (d = ndim - 1; d >= 0; --d) {
            long long c = rest % meta[1 + d];
            rest /= meta[1 + d];
            src += (c % meta[1 + ndim + d]) * mul;
            mul *= meta[1 + ndim + d];
        }
        opara__k_put_elem(y + (long long)i * elem_size, x + src * elem_size, elem_size);
    }
}

/* Trilu over matrices of rows x cols: keeps column c of row r where c - r >= k (upper) or <= k
 * (lower), zero elsewhere. */
OPARA_KERNEL(opara_trilu, (const unsigned char*, x), (unsigned char*, y), (int, n), (int, elem_size), (int, rows),
             (int, cols), (long long, k), (int, upper))
{
    int i;
    for (i = (int)(blockIdx.x * blockDim.x + threadIdx.x); i < n; i += (int)(blockDim.x * gridDim.x)) {
        long long c = i % cols, r = (i / cols) % rows;
        int keep = upper ? c - r >= k : c - r <= k;
        if (keep) opara__k_put_elem(y + (long long)i * elem_size, x + (long long)i * elem_size, elem_size);
        else opara__k_zero_elem(y + (long long)i * elem_size, elem_size);
    }
}

/* EyeLike: one (its bytes, little-endian in `one`) where column - row == k, zero elsewhere. */
OPARA_KERNEL(opara_eye_like, (unsigned char*, y), (int, n), (int, elem_size), (int, cols), (long long, k),
             (long long, one))
{
    int i;
    for (i = (int)(blockIdx.x * blockDim.x + threadIdx.x); i < n; i += (int)(blockDim.x * gridDim.x)) {
        int b, diag = (long long)(i % cols) - (long long)(i / cols) == k;
        for (b = 0; b < elem_size; ++b) y[(long long)i * elem_size + b] = diag ? (unsigned char)(one >> (8 * b)) : 0;
    }
}

/* Size: the element count, known when the plan was made. */
OPARA_KERNEL(opara_size, (long long*, y), (long long, count))
{
    if (blockIdx.x == 0 && threadIdx.x == 0) y[0] = count;
}

/* Index i of OneHot's indices (ONNX data type dtype) as an integer; floats truncate, and those
 * beyond any depth (or NaN) give -1 << 62, which matches nothing. */
OPARA_DEVICE long long opara__k_one_hot_index(const unsigned char* p, int dtype, long long i)
{
    double f;
    switch (dtype) {
    case 6: return ((const int*)(const void*)p)[i];
    case 7: return ((const long long*)(const void*)p)[i];
    case 3: return ((const signed char*)(const void*)p)[i];
    case 2: return p[i];
    case 1: f = ((const float*)(const void*)p)[i]; break;
    default: f = ((const double*)(const void*)p)[i]; break;
    }
    return f > -1e15 && f < 1e15 ? (long long)f : -((long long)1 << 62);
}

/* OneHot: y is [outer, depth, inner]; values[1] where index (o, in) (negative: + depth) is d, else values[0]. */
OPARA_KERNEL(opara_one_hot, (const unsigned char*, indices), (const unsigned char*, values), (unsigned char*, y),
             (int, n), (int, elem_size), (int, idx_dtype), (int, depth), (int, inner))
{
    int i;
    for (i = (int)(blockIdx.x * blockDim.x + threadIdx.x); i < n; i += (int)(blockDim.x * gridDim.x)) {
        long long in = i % inner, d = (i / inner) % depth, o = i / ((long long)inner * depth);
        long long v = opara__k_one_hot_index(indices, idx_dtype, o * inner + in);
        if (v < 0) v += depth;
        opara__k_put_elem(y + (long long)i * elem_size, values + (v == d ? elem_size : 0), elem_size);
    }
}

/* ReverseSequence over [d0, d1, inner] with the time axis 0 (time0) or 1: step t of batch b takes
 * step len - 1 - t where t < len; a length outside [0, steps] gives zeros. */
OPARA_KERNEL(opara_reverse_sequence, (const unsigned char*, x), (const void*, lens), (unsigned char*, y), (int, n),
             (int, elem_size), (int, lens64), (int, d1), (int, inner), (int, time0), (int, steps))
{
    int i;
    for (i = (int)(blockIdx.x * blockDim.x + threadIdx.x); i < n; i += (int)(blockDim.x * gridDim.x)) {
        long long item = i / inner, a0 = item / d1, a1 = item % d1, t = time0 ? a0 : a1, b = time0 ? a1 : a0;
        long long len = opara__k_index(lens, lens64, b), src_t;
        if (len < 0 || len > steps) {
            opara__k_zero_elem(y + (long long)i * elem_size, elem_size);
            continue;
        }
        src_t = t < len ? len - 1 - t : t;
        opara__k_put_elem(y + (long long)i * elem_size,
                          x + ((time0 ? src_t * d1 + b : b * d1 + src_t) * inner + i % inner) * elem_size, elem_size);
    }
}
