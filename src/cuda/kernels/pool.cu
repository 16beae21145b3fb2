/* 2-D pooling over NCHW (1-D pooling is H = 1). One thread per output element. */
#include "opara_kernel.h"

/* mode 0: MaxPool (padding never wins), mode 1: AveragePool; count_include_pad counts padded
 * positions inside the padded input (ONNX semantics: positions added by ceil_mode beyond the
 * padding never count). nc = N * C planes of H x W into OH x OW. */
OPARA_KERNEL(opara_pool2d_f32, (const float*, x), (float*, y), (int, nc), (int, H), (int, W), (int, OH), (int, OW),
             (int, kh), (int, kw), (int, sh), (int, sw), (int, ph), (int, pw), (int, dh), (int, dw), (int, mode),
             (int, count_include_pad), (int, ph_end), (int, pw_end))
{
    int total = nc * OH * OW;
    int i;
    for (i = (int)(blockIdx.x * blockDim.x + threadIdx.x); i < total; i += (int)(blockDim.x * gridDim.x)) {
        int q = i % OW, p = (i / OW) % OH, plane = i / (OW * OH);
        const float* src = x + (long long)plane * H * W;
        float best = -OPARA_INF_F32, sum = 0.0f, v;
        int count = 0, padded = 0, r, s;
        for (r = 0; r < kh; ++r) {
            int ih = p * sh - ph + r * dh;
            for (s = 0; s < kw; ++s) {
                int iw = q * sw - pw + s * dw;
                if (ih >= -ph && ih < H + ph_end && iw >= -pw && iw < W + pw_end) ++padded;
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                v = src[ih * W + iw];
                best = v > best || v != v ? v : best; /* a NaN wins and stays (fmaxf would skip it) */
                sum += v;
                ++count;
            }
        }
        if (mode == 0) {
            y[i] = best;
        } else {
            int div = count_include_pad ? padded : count;
            y[i] = div > 0 ? sum / (float)div : 0.0f;
        }
    }
}

/* MaxPool with its Indices (2-D over NCHW; 1-D is H = 1): as opara_pool2d_f32's mode 0, the first
 * maximum of the window (the first NaN wins and stays) and its index flattened over the input,
 * plane * H * W + ih * W + iw, or with storage_order 1 plane * H * W + iw * H + ih. */
OPARA_KERNEL(opara_maxpool2d_idx_f32, (const float*, x), (float*, y), (long long*, idx), (int, nc), (int, H), (int, W),
             (int, OH), (int, OW), (int, kh), (int, kw), (int, sh), (int, sw), (int, ph), (int, pw), (int, dh), (int, dw),
             (int, storage_order))
{
    int total = nc * OH * OW;
    int i;
    for (i = (int)(blockIdx.x * blockDim.x + threadIdx.x); i < total; i += (int)(blockDim.x * gridDim.x)) {
        int q = i % OW, p = (i / OW) % OH, plane = i / (OW * OH), r, s, bh = 0, bw = 0, found = 0;
        const float* src = x + (long long)plane * H * W;
        float best = 0.0f, v;
        for (r = 0; r < kh; ++r) {
            int ih = p * sh - ph + r * dh;
            for (s = 0; s < kw; ++s) {
                int iw = q * sw - pw + s * dw;
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                v = src[ih * W + iw];
                if (!found || (best == best && (v > best || v != v))) {
                    best = v;
                    bh = ih, bw = iw, found = 1;
                }
            }
        }
        y[i] = best;
        idx[i] = (long long)plane * H * W + (storage_order ? (long long)bw * H + bh : (long long)bh * W + bw);
    }
}

/* MaxUnpool over planes of x (n_in elements in all, in_plane each): phase 0 zeroes y (n_out elements,
 * out_plane each), phase 1 puts each x where its index points: the index is flattened over the unpooled
 * shape (uh x uw planes), its coordinates kept in the output's oh x ow planes. An index outside its own
 * plane or the output is skipped (the CPU refuses it). */
OPARA_KERNEL(opara_max_unpool_f32, (const float*, x), (const long long*, idx), (float*, y), (int, phase), (int, n_in),
             (int, n_out), (int, in_plane), (int, uh), (int, uw), (int, oh), (int, ow))
{
    int i;
    if (phase == 0) {
        for (i = (int)(blockIdx.x * blockDim.x + threadIdx.x); i < n_out; i += (int)(blockDim.x * gridDim.x)) y[i] = 0.0f;
        return;
    }
    for (i = (int)(blockIdx.x * blockDim.x + threadIdx.x); i < n_in; i += (int)(blockDim.x * gridDim.x)) {
        long long plane = i / in_plane, lo = plane * uh * uw, at = idx[i] - lo;
        int ah, aw;
        if (at < 0 || at >= (long long)uh * uw) continue;
        ah = (int)(at / uw), aw = (int)(at % uw);
        if (ah >= oh || aw >= ow) continue;
        y[plane * oh * ow + (long long)ah * ow + aw] = x[i];
    }
}

/* Resize by four taps per output row and column (cubic), computed on the host: row r of the output
 * reads input rows ri[4r .. 4r+3] with weights rw[4r ..], column q columns ci[4q ..] with weights
 * cw[4q ..]; a row or column whose first index is -1 takes `fill` (tf_crop_and_resize's
 * extrapolation). nc planes of H x W into OH x OW. */
OPARA_KERNEL(opara_resize_taps4_f32, (const float*, x), (float*, y), (const float*, rw), (const float*, cw), (const int*, ri),
             (const int*, ci), (int, nc), (int, H), (int, W), (int, OH), (int, OW), (float, fill))
{
    int total = nc * OH * OW;
    int i;
    for (i = (int)(blockIdx.x * blockDim.x + threadIdx.x); i < total; i += (int)(blockDim.x * gridDim.x)) {
        int q = i % OW, p = (i / OW) % OH, plane = i / (OW * OH), a, b;
        const float* src = x + (long long)plane * H * W;
        float acc = 0.0f;
        if (ri[4 * p] < 0 || ci[4 * q] < 0) {
            y[i] = fill;
            continue;
        }
        for (a = 0; a < 4; ++a) {
            const float* row = src + (long long)ri[4 * p + a] * W;
            float part = 0.0f;
            for (b = 0; b < 4; ++b) part += row[ci[4 * q + b]] * cw[4 * q + b];
            acc += part * rw[4 * p + a];
        }
        y[i] = acc;
    }
}
