/* Row-wise kernels with a block reduction: Softmax and LayerNormalization (the reductions over axes,
 * ReduceMean and GlobalAveragePool among them, are reduce.cu's). One block per row; blockDim.x must be
 * a power of two <= 256. */
#include "opara_kernel.h"

#define OPARA__NORM_THREADS 256

/* max(a, b) with a NaN on either side giving NaN (fmaxf returns the other operand). */
OPARA_DEVICE float opara__k_max_nan(float a, float b)
{
    return b > a || b != b ? b : a;
}

/* Tree reduction of v over the block (op 0: sum, 1: max); every thread gets the result. buf holds
 * OPARA__NORM_THREADS floats. Contains barriers: call it from every thread. */
OPARA_DEVICE float opara__k_block_reduce(float* buf, float v, int op)
{
    unsigned int t = threadIdx.x, s;
    float r;
    buf[t] = v;
    __syncthreads();
    for (s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s) buf[t] = op ? opara__k_max_nan(buf[t], buf[t + s]) : buf[t] + buf[t + s];
        __syncthreads();
    }
    r = buf[0];
    __syncthreads();
    return r;
}

/* Softmax over the middle axis of x viewed as [outer, len, inner]; block b handles row
 * (b / inner, :, b % inner). Launch: grid outer * inner. */
OPARA_KERNEL(opara_softmax_f32, (const float*, x), (float*, y), (int, len), (int, inner))
{
    OPARA_SHARED(float, buf, OPARA__NORM_THREADS);
    long long base = (long long)(blockIdx.x / (unsigned)inner) * len * inner + blockIdx.x % (unsigned)inner;
    float m = -OPARA_INF_F32, sum = 0.0f;
    int j;
    for (j = (int)threadIdx.x; j < len; j += (int)blockDim.x) m = opara__k_max_nan(m, x[base + (long long)j * inner]);
    m = opara__k_block_reduce(buf, m, 1);
    for (j = (int)threadIdx.x; j < len; j += (int)blockDim.x) sum += expf(x[base + (long long)j * inner] - m);
    sum = opara__k_block_reduce(buf, sum, 0);
    for (j = (int)threadIdx.x; j < len; j += (int)blockDim.x)
        y[base + (long long)j * inner] = expf(x[base + (long long)j * inner] - m) / sum;
}

/* LayerNormalization over the last `cols` elements of each row:
 * y = (x - mean) / sqrt(var + eps) * scale[c] + bias[c] (bias may be NULL). Launch: grid rows. */
OPARA_KERNEL(opara_layer_norm_f32, (const float*, x), (const float*, scale), (const float*, bias), (float*, y),
             (int, cols), (float, eps))
{
    OPARA_SHARED(float, buf, OPARA__NORM_THREADS);
    const float* row = x + (long long)blockIdx.x * cols;
    float* out = y + (long long)blockIdx.x * cols;
    float mean = 0.0f, var = 0.0f, inv;
    int j;
    for (j = (int)threadIdx.x; j < cols; j += (int)blockDim.x) mean += row[j];
    mean = opara__k_block_reduce(buf, mean, 0) / (float)cols;
    for (j = (int)threadIdx.x; j < cols; j += (int)blockDim.x) var += (row[j] - mean) * (row[j] - mean);
    var = opara__k_block_reduce(buf, var, 0) / (float)cols;
    inv = 1.0f / sqrtf(var + eps);
    for (j = (int)threadIdx.x; j < cols; j += (int)blockDim.x)
        out[j] = (row[j] - mean) * inv * scale[j] + (bias ? bias[j] : 0.0f);
}
