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

/* The element of a short row a lane keeps in a register: row[j] inside the row, -inf past its end
 * (no effect on the maximum; its exponential is never summed). */
OPARA_DEVICE float opara__k_row_elem(const float* row, int j, int len)
{
    return j < len ? row[j] : -OPARA_INF_F32;
}

OPARA_DEVICE float opara__k_row_combine(float a, float b, int op)
{
    return op ? opara__k_max_nan(a, b) : a + b;
}

/* Each of the `lanes` threads of a row publishes its v in buf and every lane of the row combines
 * the row's partials in the same order (op 0: sum, 1: max with NaN), in four independent chains
 * (lanes is a power of two) to shorten the dependent latency. One barrier: call it from every
 * thread of the block; buf is not reused afterwards, so no second barrier. */
OPARA_DEVICE float opara__k_row_reduce(float* buf, float v, int lanes, int op)
{
    int first = (int)threadIdx.x - (int)threadIdx.x % lanes, k;
    float r0, r1, r2, r3;
    buf[threadIdx.x] = v;
    __syncthreads();
    if (lanes < 4) return lanes == 1 ? buf[first] : opara__k_row_combine(buf[first], buf[first + 1], op);
    r0 = buf[first], r1 = buf[first + 1], r2 = buf[first + 2], r3 = buf[first + 3];
    for (k = 4; k < lanes; k += 4) {
        r0 = opara__k_row_combine(r0, buf[first + k], op);
        r1 = opara__k_row_combine(r1, buf[first + k + 1], op);
        r2 = opara__k_row_combine(r2, buf[first + k + 2], op);
        r3 = opara__k_row_combine(r3, buf[first + k + 3], op);
    }
    return opara__k_row_combine(opara__k_row_combine(r0, r1, op), opara__k_row_combine(r2, r3, op), op);
}

/* Softmax (log_form 0) or LogSoftmax (1) over contiguous rows of len elements (the last axis), for
 * short rows: `lanes` threads per row (a power of two dividing blockDim.x), blockDim.x / lanes rows
 * per block, two barriers per block instead of a block-wide tree per row. Lane l holds elements l,
 * l + lanes, l + 2 lanes, l + 3 lanes in registers (len <= 4 lanes: x is read once) and re-reads
 * the rest. NaN anywhere in a row makes the row NaN, as opara_softmax_f32 does. Launch: grid
 * ceil(rows / (blockDim.x / lanes)), blockDim.x <= 256. */
OPARA_KERNEL(opara_softmax_rows_f32, (const float*, x), (float*, y), (int, rows), (int, len), (int, lanes),
             (int, log_form))
{
    OPARA_SHARED(float, max_buf, OPARA__NORM_THREADS);
    OPARA_SHARED(float, sum_buf, OPARA__NORM_THREADS);
    long long r = (long long)blockIdx.x * (blockDim.x / (unsigned)lanes) + threadIdx.x / (unsigned)lanes;
    int lane = (int)(threadIdx.x % (unsigned)lanes), n = r < rows ? len : 0, j;
    const float* row = x + (r < rows ? r : 0) * len;
    float* out = y + (r < rows ? r : 0) * len;
    float v0 = opara__k_row_elem(row, lane, n), v1 = opara__k_row_elem(row, lane + lanes, n);
    float v2 = opara__k_row_elem(row, lane + 2 * lanes, n), v3 = opara__k_row_elem(row, lane + 3 * lanes, n);
    float m = opara__k_max_nan(opara__k_max_nan(v0, v1), opara__k_max_nan(v2, v3)), sum;
    for (j = lane + 4 * lanes; j < n; j += lanes) m = opara__k_max_nan(m, row[j]);
    m = opara__k_row_reduce(max_buf, m, lanes, 1);
    /* the exponentials of the held elements replace them (softmax divides them below) */
    v0 = lane < n ? expf(v0 - m) : 0.0f;
    v1 = lane + lanes < n ? expf(v1 - m) : 0.0f;
    v2 = lane + 2 * lanes < n ? expf(v2 - m) : 0.0f;
    v3 = lane + 3 * lanes < n ? expf(v3 - m) : 0.0f;
    sum = (v0 + v1) + (v2 + v3);
    for (j = lane + 4 * lanes; j < n; j += lanes) sum += expf(row[j] - m);
    sum = opara__k_row_reduce(sum_buf, sum, lanes, 0);
    if (log_form) {
        float shift = m + logf(sum);
        for (j = lane; j < n; j += lanes) out[j] = row[j] - shift;
        return;
    }
    if (lane < n) out[lane] = v0 / sum;
    if (lane + lanes < n) out[lane + lanes] = v1 / sum;
    if (lane + 2 * lanes < n) out[lane + 2 * lanes] = v2 / sum;
    if (lane + 3 * lanes < n) out[lane + 3 * lanes] = v3 / sum;
    for (j = lane + 4 * lanes; j < n; j += lanes) out[j] = expf(row[j] - m) / sum;
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

/* Groups of a reduction: meta = [kept_n, kept dims, kept input strides, red_n, reduced dims, reduced
 * input strides] (kept_n may be 0, red_n >= 1). The input offset of group g's first element, the
 * group's size and the offset of its j-th element from the first. */
OPARA_DEVICE long long opara__k_group_base(const int* meta, long long g)
{
    int kept_n = meta[0], d;
    long long base = 0;
    for (d = kept_n - 1; d >= 0; --d) {
        base += (g % meta[1 + d]) * meta[1 + kept_n + d];
        g /= meta[1 + d];
    }
    return base;
}

OPARA_DEVICE long long opara__k_group_count(const int* meta)
{
    int kept_n = meta[0], red_n = meta[1 + 2 * kept_n], d;
    long long count = 1;
    for (d = 0; d < red_n; ++d) count *= meta[2 + 2 * kept_n + d];
    return count;
}

OPARA_DEVICE long long opara__k_group_offset(const int* meta, long long j)
{
    int kept_n = meta[0], red_n = meta[1 + 2 * kept_n], d;
    const int* rdims = meta + 2 + 2 * kept_n;
    const int* rstr = meta + 2 + 2 * kept_n + red_n;
    long long off = 0;
    for (d = red_n - 1; d >= 0; --d) {
        off += (j % rdims[d]) * rstr[d];
        j /= rdims[d];
    }
    return off;
}

/* Normalization of each group of a reduction (meta as opara__k_group_base; block b: group b) by its
 * mean and variance (two passes): mode 0 InstanceNormalization, y = (x - mean) / sqrt(var + eps) *
 * scale[c] + bias[c] with c = b % C; mode 1 MeanVarianceNormalization, y = (x - mean) / (sqrt(var) +
 * eps). Launch: grid = number of groups. */
OPARA_KERNEL(opara_group_norm_f32, (const float*, x), (const float*, scale), (const float*, bias), (float*, y),
             (const int*, meta), (int, C), (int, mode), (float, eps))
{
    OPARA_SHARED(float, buf, OPARA__NORM_THREADS);
    long long base = opara__k_group_base(meta, blockIdx.x), count = opara__k_group_count(meta), j;
    float mean = 0.0f, var = 0.0f, k, off;
    for (j = threadIdx.x; j < count; j += blockDim.x) mean += x[base + opara__k_group_offset(meta, j)];
    mean = opara__k_block_reduce(buf, mean, 0) / (float)count;
    for (j = threadIdx.x; j < count; j += blockDim.x) {
        float d = x[base + opara__k_group_offset(meta, j)] - mean;
        var += d * d;
    }
    var = opara__k_block_reduce(buf, var, 0) / (float)count;
    if (mode == 0) {
        k = scale[blockIdx.x % (unsigned)C] / sqrtf(var + eps);
        off = bias[blockIdx.x % (unsigned)C] - mean * k;
    } else {
        k = 1.0f / (sqrtf(var) + eps);
        off = -mean * k;
    }
    for (j = threadIdx.x; j < count; j += blockDim.x) {
        long long at = base + opara__k_group_offset(meta, j);
        y[at] = x[at] * k + off;
    }
}

/* GlobalMaxPool: block b takes the max of plane b (`inner` elements; a NaN gives NaN). */
OPARA_KERNEL(opara_global_max_f32, (const float*, x), (float*, y), (int, inner))
{
    OPARA_SHARED(float, buf, OPARA__NORM_THREADS);
    const float* row = x + (long long)blockIdx.x * inner;
    float m = -OPARA_INF_F32;
    int j;
    for (j = (int)threadIdx.x; j < inner; j += (int)blockDim.x) m = opara__k_max_nan(m, row[j]);
    m = opara__k_block_reduce(buf, m, 1);
    if (threadIdx.x == 0) y[blockIdx.x] = m;
}

/* LRN over the channels of x viewed as [N, C, inner]: y = x / (bias + alpha / size * sum of x^2 over
 * the channels c - (size - 1) / 2 .. c + size - 1 - (size - 1) / 2 that exist) ^ beta. One thread per
 * element. */
OPARA_KERNEL(opara_lrn_f32, (const float*, x), (float*, y), (int, n), (int, C), (int, inner), (int, size),
             (float, alpha), (float, beta), (float, bias))
{
    int i;
    for (i = (int)(blockIdx.x * blockDim.x + threadIdx.x); i < n; i += (int)(blockDim.x * gridDim.x)) {
        int c = (i / inner) % C, lo = c - (size - 1) / 2, hi = c + size - 1 - (size - 1) / 2, cc;
        float sum = 0.0f;
        if (lo < 0) lo = 0;
        if (hi > C - 1) hi = C - 1;
        for (cc = lo; cc <= hi; ++cc) {
            float v = x[i + (cc - c) * inner];
            sum += v * v;
        }
        y[i] = x[i] / powf(bias + alpha / (float)size * sum, beta);
    }
}

/* PRelu: y = x < 0 ? x * slope : x, the slope broadcast by meta ([ndim, dims, x's strides, slope's
 * strides]). */
OPARA_KERNEL(opara_prelu_f32, (const float*, x), (const float*, slope), (float*, y), (int, n), (const int*, meta))
{
    int i;
    for (i = (int)(blockIdx.x * blockDim.x + threadIdx.x); i < n; i += (int)(blockDim.x * gridDim.x)) {
        float v = x[i];
        y[i] = v < 0.0f ? v * slope[opara__k_strided_offset(i, meta, 1)] : v;
    }
}

/* Shrink: x < -lambd ? x + bias : x > lambd ? x - bias : 0 (NaN gives 0, as the CPU). */
OPARA_KERNEL(opara_shrink_f32, (const float*, x), (float*, y), (int, n), (float, lambd), (float, bias))
{
    int i;
    for (i = (int)(blockIdx.x * blockDim.x + threadIdx.x); i < n; i += (int)(blockDim.x * gridDim.x)) {
        float v = x[i];
        y[i] = v < -lambd ? v + bias : (v > lambd ? v - bias : 0.0f);
    }
}

/* Dropout (inference): y = x (nbytes bytes), the mask's n bytes all 1 (true); mask may be NULL. */
OPARA_KERNEL(opara_dropout, (const unsigned char*, x), (unsigned char*, y), (unsigned char*, mask), (int, nbytes),
             (int, n))
{
    int i, total = nbytes > n ? nbytes : n;
    for (i = (int)(blockIdx.x * blockDim.x + threadIdx.x); i < total; i += (int)(blockDim.x * gridDim.x)) {
        if (i < nbytes) y[i] = x[i];
        if (mask && i < n) mask[i] = 1;
    }
}
