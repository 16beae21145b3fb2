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
