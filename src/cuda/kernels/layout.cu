/* Data-movement kernels with their own index rules: Gather, Pad and Resize. */
#include "opara_kernel.h"

OPARA_DEVICE void opara__k_move_elem(unsigned char* dst, const unsigned char* src, int elem_size)
{
    int b;
    if (elem_size == 4) {
        *(unsigned int*)(void*)dst = *(const unsigned int*)(const void*)src;
        return;
    }
    for (b = 0; b < elem_size; ++b) dst[b] = src[b];
}

/* Gather along an axis: x viewed as [outer, axis_len, inner], indices (n_idx of them, int64 when
 * idx64 else int32, negative counts from the end) give y as [outer, n_idx, inner]. An index out of
 * range writes zeros (the backend rejects constant out-of-range indices before running). */
OPARA_KERNEL(opara_gather, (const unsigned char*, x), (const void*, indices), (unsigned char*, y), (int, n),
             (int, elem_size), (int, idx64), (int, axis_len), (int, inner), (int, n_idx))
{
    int i;
    for (i = (int)(blockIdx.x * blockDim.x + threadIdx.x); i < n; i += (int)(blockDim.x * gridDim.x)) {
        int in = i % inner, j = (i / inner) % n_idx, o = i / (inner * n_idx), b;
        long long v = idx64 ? ((const long long*)indices)[j] : (long long)((const int*)indices)[j];
        if (v < 0) v += axis_len;
        if (v < 0 || v >= axis_len) {
            for (b = 0; b < elem_size; ++b) y[(long long)i * elem_size + b] = 0;
            continue;
        }
        opara__k_move_elem(y + (long long)i * elem_size, x + (((long long)o * axis_len + v) * inner + in) * elem_size,
                         elem_size);
    }
}

/* Pad: meta = [ndim, out dims, in dims, pads at the beginning (may be negative: cropping)].
 * mode 0 constant (the element `fill`, given as its bit pattern), 1 reflect, 2 edge. */
OPARA_KERNEL(opara_pad, (const unsigned char*, x), (unsigned char*, y), (int, n), (int, elem_size), (int, mode),
             (long long, fill), (const int*, meta))
{
    int ndim = meta[0];
    const int* odims = meta + 1;
    const int* idims = meta + 1 + ndim;
    const int* pads = meta + 1 + 2 * ndim;
    int i;
    for (i = (int)(blockIdx.x * blockDim.x + threadIdx.x); i < n; i += (int)(blockDim.x * gridDim.x)) {
        long long rest = i, src = 0, mul = 1;
        int d, outside = 0;
        for (d = ndim - 1; d >= 0; --d) {
            long long c = rest % odims[d] - pads[d], len = idims[d];
            rest /= odims[d];
            if (c < 0 || c >= len) {
                if (mode == 0) {
                    outside = 1;
                } else if (mode == 2) {
                    c = c < 0 ? 0 : len - 1;
                } else {
                    long long period = 2 * (len - 1);
                    if (period == 0) {
                        c = 0;
                    } else {
                        c = c % period;
                        if (c < 0) c += period;
                        if (c >= len) c = period - c;
                    }
                }
            }
            src += c * mul;
            mul *= len;
        }
        if (outside) {
            int b;
            for (b = 0; b < elem_size; ++b) /* little-endian bytes of the fill pattern */
                y[(long long)i * elem_size + b] = (unsigned char)((unsigned long long)fill >> (8 * b));
        } else {
            opara__k_move_elem(y + (long long)i * elem_size, x + src * elem_size, elem_size);
        }
    }
}

/* Source coordinate of output coordinate o for one axis. coord 0 half_pixel, 1 asymmetric,
 * 2 align_corners, 3 pytorch_half_pixel. */
OPARA_DEVICE float opara__k_resize_src(int o, int in_len, int out_len, float scale, int coord)
{
    switch (coord) {
    case 1: return (float)o / scale;
    case 2: return out_len > 1 ? (float)o * (float)(in_len - 1) / (float)(out_len - 1) : 0.0f;
    case 3: return out_len > 1 ? ((float)o + 0.5f) / scale - 0.5f : 0.0f;
    default: return ((float)o + 0.5f) / scale - 0.5f;
    }
}

/* nearest 0 round_prefer_floor, 1 round_prefer_ceil, 2 floor, 3 ceil. */
OPARA_DEVICE int opara__k_resize_nearest(float v, int nearest, int len)
{
    int r;
    switch (nearest) {
    case 1: r = (int)floorf(v + 0.5f); break;
    case 2: r = (int)floorf(v); break;
    case 3: r = (int)ceilf(v); break;
    default: r = (v - floorf(v) == 0.5f) ? (int)floorf(v) : (int)floorf(v + 0.5f); break;
    }
    return r < 0 ? 0 : (r >= len ? len - 1 : r);
}

/* Resize of the last two axes of NCHW (nc = N*C planes): mode 0 nearest, 1 linear (bilinear);
 * scale_h/scale_w are output/input. */
OPARA_KERNEL(opara_resize_f32, (const float*, x), (float*, y), (int, nc), (int, H), (int, W), (int, OH), (int, OW),
             (float, scale_h), (float, scale_w), (int, mode), (int, coord), (int, nearest))
{
    int total = nc * OH * OW;
    int i;
    for (i = (int)(blockIdx.x * blockDim.x + threadIdx.x); i < total; i += (int)(blockDim.x * gridDim.x)) {
        int q = i % OW, p = (i / OW) % OH, plane = i / (OW * OH);
        const float* src = x + (long long)plane * H * W;
        float fy = opara__k_resize_src(p, H, OH, scale_h, coord), fx = opara__k_resize_src(q, W, OW, scale_w, coord);
        if (mode == 0) {
            y[i] = src[opara__k_resize_nearest(fy, nearest, H) * W + opara__k_resize_nearest(fx, nearest, W)];
        } else {
            float cy = fminf(fmaxf(fy, 0.0f), (float)(H - 1)), cx = fminf(fmaxf(fx, 0.0f), (float)(W - 1));
            int y0 = (int)floorf(cy), x0 = (int)floorf(cx);
            int y1 = y0 + 1 < H ? y0 + 1 : H - 1, x1 = x0 + 1 < W ? x0 + 1 : W - 1;
            float ly = cy - (float)y0, lx = cx - (float)x0;
            y[i] = (1.0f - ly) * ((1.0f - lx) * src[y0 * W + x0] + lx * src[y0 * W + x1]) +
                   ly * ((1.0f - lx) * src[y1 * W + x0] + lx * src[y1 * W + x1]);
        }
    }
}
