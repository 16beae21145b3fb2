/* Kernels that end with an activation: unary activations, the BatchNormalization affine, the
 * bias/activation epilogue after cuBLAS or cuDNN, the tiled SGEMM used when cuBLAS is absent,
 * the implicit-GEMM convolution used when cuDNN is absent, and the transposed convolution.
 * They share one activation helper, opara__k_act (opara_kernel.h, with the activation codes), which
 * opara_binary_f32 (elementwise.cu) shares too.
 */
#include "opara_kernel.h"

/* y[i] = act(x[i]) for i < n. One thread per element, grid-stride. */
OPARA_KERNEL(opara_unary_f32, (const float*, x), (float*, y), (int, n), (int, act), (float, a), (float, b))
{
    int i;
    for (i = (int)(blockIdx.x * blockDim.x + threadIdx.x); i < n; i += (int)(blockDim.x * gridDim.x))
        y[i] = opara__k_act(x[i], act, a, b);
}

/* BatchNormalization (inference) folded into y = act(x * scale[c] + shift[c]), x of shape
 * [N, C, inner] with n = N * C * inner elements. */
OPARA_KERNEL(opara_channel_affine_f32, (const float*, x), (const float*, scale), (const float*, shift),
             (float*, y), (int, n), (int, channels), (int, inner), (int, act), (float, a), (float, b))
{
    int i;
    for (i = (int)(blockIdx.x * blockDim.x + threadIdx.x); i < n; i += (int)(blockDim.x * gridDim.x)) {
        int c = (i / inner) % channels;
        y[i] = opara__k_act(x[i] * scale[c] + shift[c], act, a, b);
    }
}

/* In place on y (rows x cols, row-major, n = rows * cols):
 *   y[r][c] = act(y[r][c] + beta * bias[r * bias_rs + c * bias_cs])
 * bias may be NULL (then beta is ignored). Strides 0 broadcast: (0,0) scalar, (0,1) a row
 * vector of cols, (1,0) a column of rows, (cols,1) a full matrix. */
OPARA_KERNEL(opara_bias_act_f32, (float*, y), (const float*, bias), (int, n), (int, cols), (int, bias_rs),
             (int, bias_cs), (float, beta), (int, act), (float, a), (float, b))
{
    int i;
    for (i = (int)(blockIdx.x * blockDim.x + threadIdx.x); i < n; i += (int)(blockDim.x * gridDim.x)) {
        float v = y[i];
        if (bias) v += beta * bias[(i / cols) * bias_rs + (i % cols) * bias_cs];
        y[i] = opara__k_act(v, act, a, b);
    }
}

#define OPARA__TILE 16

/* Batched row-major SGEMM with epilogue:
 *   Y[m][n] = act(alpha * sum_k op(A)[m][k] * op(B)[k][n] + beta * C[m * c_rs + n * c_cs])
 * op(A) is M x K (A stored M x K, or K x M when trans_a), op(B) is K x N (B stored K x N, or N x K
 * when trans_b). Batch z uses A + z * stride_a, B + z * stride_b, Y + z * stride_y (stride 0
 * broadcasts). C may be NULL. Launch: block (16, 16), grid (ceil(N/16), ceil(M/16), batch). */
OPARA_KERNEL(opara_sgemm_f32, (const float*, A), (const float*, B), (const float*, C), (float*, Y), (int, M),
             (int, N), (int, K), (int, trans_a), (int, trans_b), (float, alpha), (float, beta), (int, c_rs),
             (int, c_cs), (int, act), (float, act_a), (float, act_b), (long long, stride_a),
             (long long, stride_b), (long long, stride_y))
{
    OPARA_SHARED_2D(float, as, OPARA__TILE, OPARA__TILE + 1);
    OPARA_SHARED_2D(float, bs, OPARA__TILE, OPARA__TILE + 1);
    int tx = (int)threadIdx.x, ty = (int)threadIdx.y;
    int row = (int)blockIdx.y * OPARA__TILE + ty, col = (int)blockIdx.x * OPARA__TILE + tx;
    const float* a = A + (long long)blockIdx.z * stride_a;
    const float* bm = B + (long long)blockIdx.z * stride_b;
    float acc = 0.0f;
    int k0, k;
    for (k0 = 0; k0 < K; k0 += OPARA__TILE) {
        int ka = k0 + tx, kb = k0 + ty;
        int arow = (int)blockIdx.y * OPARA__TILE + ty, bcol = (int)blockIdx.x * OPARA__TILE + tx;
        as[ty][tx] = (arow < M && ka < K) ? (trans_a ? a[(long long)ka * M + arow] : a[(long long)arow * K + ka]) : 0.0f;
        bs[ty][tx] = (kb < K && bcol < N) ? (trans_b ? bm[(long long)bcol * K + kb] : bm[(long long)kb * N + bcol]) : 0.0f;
        __syncthreads();
        for (k = 0; k < OPARA__TILE; ++k) acc += as[ty][k] * bs[k][tx];
        __syncthreads();
    }
    if (row < M && col < N) {
        float v = alpha * acc;
        if (C) v += beta * C[(long long)row * c_rs + (long long)col * c_cs];
        Y[(long long)blockIdx.z * stride_y + (long long)row * N + col] = opara__k_act(v, act, act_a, act_b);
    }
}

/* Convolution as an implicit GEMM (NCHW input, weights [K][C/group][R][S]): per group g,
 *   Y[n][g*Kg + k][p][q] = act(bias[k] + sum_{c,r,s} W[k][c][r][s] * X[n][g*Cg + c][p*sh - ph + r*dh][q*sw - pw + s*dw])
 * The GEMM rows are output channels of the group (Kg = K/group), its columns the N*OH*OW
 * output positions, its depth Cg*R*S; the X tile is gathered on the fly (zero padding).
 * bias may be NULL. Launch: block (16, 16), grid (ceil(N*OH*OW/16), ceil(Kg/16), group). */
OPARA_KERNEL(opara_conv2d_f32, (const float*, x), (const float*, w), (const float*, bias), (float*, y),
             (int, N), (int, C), (int, H), (int, W), (int, K), (int, R), (int, S), (int, OH), (int, OW),
             (int, sh), (int, sw), (int, ph), (int, pw), (int, dh), (int, dw), (int, group), (int, act),
             (float, act_a), (float, act_b))
{
    OPARA_SHARED_2D(float, ws, OPARA__TILE, OPARA__TILE + 1);
    OPARA_SHARED_2D(float, xs, OPARA__TILE, OPARA__TILE + 1);
    int tx = (int)threadIdx.x, ty = (int)threadIdx.y;
    int g = (int)blockIdx.z, Kg = K / group, Cg = C / group;
    int depth = Cg * R * S, npos = N * OH * OW;
    int krow = (int)blockIdx.y * OPARA__TILE + ty;  /* output channel within the group (GEMM row) */
    int pos = (int)blockIdx.x * OPARA__TILE + tx;   /* output position (GEMM column) */
    float acc = 0.0f;
    int d0, d;
    /* the column this thread loads into xs: position blockIdx.x*16 + tx, depth d0 + ty */
    int lpos = pos;
    int ln = lpos / (OH * OW), lp = (lpos / OW) % OH, lq = lpos % OW;
    for (d0 = 0; d0 < depth; d0 += OPARA__TILE) {
        int wd = d0 + tx, xd = d0 + ty;
        ws[ty][tx] = (krow < Kg && wd < depth) ? w[((long long)(g * Kg + krow)) * depth + wd] : 0.0f;
        if (lpos < npos && xd < depth) {
            int c = xd / (R * S), r = (xd / S) % R, s = xd % S;
            int ih = lp * sh - ph + r * dh, iw = lq * sw - pw + s * dw;
            xs[ty][tx] = (ih >= 0 && ih < H && iw >= 0 && iw < W)
                             ? x[(((long long)ln * C + g * Cg + c) * H + ih) * W + iw]
                             : 0.0f;
        } else {
            xs[ty][tx] = 0.0f;
        }
        __syncthreads();
        for (d = 0; d < OPARA__TILE; ++d) acc += ws[ty][d] * xs[d][tx];
        __syncthreads();
    }
    if (krow < Kg && pos < npos) {
        int k = g * Kg + krow;
        int n = pos / (OH * OW), p = (pos / OW) % OH, q = pos % OW;
        float v = acc + (bias ? bias[k] : 0.0f);
        y[(((long long)n * K + k) * OH + p) * OW + q] = opara__k_act(v, act, act_a, act_b);
    }
}

/* ConvTranspose (NCHW input, weights [C][K/group][R][S]); one thread per output element:
 *   Y[n][k][oh][ow] = bias[k] + sum over c in k's group, r, s with oh + ph - r*dh = ih*sh and
 *                     ow + pw - s*dw = iw*sw (0 <= ih < H, 0 <= iw < W) of X[n][c][ih][iw] * W[c][k%Kg][r][s]
 * (output_padding only changes OH/OW). bias may be NULL. */
OPARA_KERNEL(opara_conv_transpose2d_f32, (const float*, x), (const float*, w), (const float*, bias), (float*, y),
             (int, N), (int, C), (int, H), (int, W), (int, K), (int, R), (int, S), (int, OH), (int, OW),
             (int, sh), (int, sw), (int, ph), (int, pw), (int, dh), (int, dw), (int, group))
{
    int total = N * K * OH * OW;
    int i;
    for (i = (int)(blockIdx.x * blockDim.x + threadIdx.x); i < total; i += (int)(blockDim.x * gridDim.x)) {
        int ow = i % OW, oh = (i / OW) % OH, k = (i / (OW * OH)) % K, n = i / (OW * OH * K);
        int Kg = K / group, Cg = C / group, g = k / Kg, kk = k % Kg;
        float acc = bias ? bias[k] : 0.0f;
        int c, r, s;
        for (c = g * Cg; c < (g + 1) * Cg; ++c) {
            for (r = 0; r < R; ++r) {
                int th = oh + ph - r * dh, ih;
                if (th < 0 || th % sh != 0) continue;
                ih = th / sh;
                if (ih >= H) continue;
                for (s = 0; s < S; ++s) {
                    int tw = ow + pw - s * dw, iw;
                    if (tw < 0 || tw % sw != 0) continue;
                    iw = tw / sw;
                    if (iw >= W) continue;
                    acc += x[(((long long)n * C + c) * H + ih) * W + iw] * w[(((long long)c * Kg + kk) * R + r) * S + s];
                }
            }
        }
        y[i] = acc;
    }
}
