/* Reductions: ReduceMean .. ReduceSumSquare and GlobalAveragePool (one kernel parameterised by the
 * reduction kind), ArgMax/ArgMin, LogSoftmax, Hardmax and CumSum. The block kernels need a power of
 * two blockDim.x <= 256. */
#include "opara_kernel.h"

#define OPARA__RED_THREADS 256

/* The reduction kinds, numbered as opara__reduce_kind (src/ir/opara_ir.h). */
#define OPARA__K_RED_MEAN 0
#define OPARA__K_RED_SUM 1
#define OPARA__K_RED_MAX 2
#define OPARA__K_RED_MIN 3
#define OPARA__K_RED_PROD 4
#define OPARA__K_RED_L1 5
#define OPARA__K_RED_L2 6
#define OPARA__K_RED_LOG_SUM 7
#define OPARA__K_RED_LOG_SUM_EXP 8
#define OPARA__K_RED_SUM_SQUARE 9

/* max/min that keep a NaN on either side (the CPU's rule). */
OPARA_DEVICE float opara__k_red_max(float a, float v)
{
    return v > a || v != v ? v : a;
}

OPARA_DEVICE float opara__k_red_min(float a, float v)
{
    return v < a || v != v ? v : a;
}

OPARA_DEVICE float opara__k_red_init(int kind)
{
    return kind == OPARA__K_RED_MAX ? -OPARA_INF_F32 : kind == OPARA__K_RED_MIN ? OPARA_INF_F32
           : kind == OPARA__K_RED_PROD ? 1.0f : 0.0f;
}

/* Two partial results combined. */
OPARA_DEVICE float opara__k_red_merge(int kind, float a, float b)
{
    if (kind == OPARA__K_RED_PROD) return a * b;
    if (kind == OPARA__K_RED_MAX) return opara__k_red_max(a, b);
    if (kind == OPARA__K_RED_MIN) return opara__k_red_min(a, b);
    return a + b;
}

/* The kind's transform of one element (LogSumExp: exp(v - shift)). */
OPARA_DEVICE float opara__k_red_elem(int kind, float v, float shift)
{
    if (kind == OPARA__K_RED_L1) return fabsf(v);
    if (kind == OPARA__K_RED_L2 || kind == OPARA__K_RED_SUM_SQUARE) return v * v;
    if (kind == OPARA__K_RED_LOG_SUM_EXP) return expf(v - shift);
    return v;
}

/* Tree reduction of v over the block with the kind's combination; every thread gets the result. buf
 * holds OPARA__RED_THREADS floats. Contains barriers: call it from every thread. */
OPARA_DEVICE float opara__k_red_block(float* buf, float v, int kind)
{
    unsigned int t = threadIdx.x, s;
    float r;
    buf[t] = v;
    __syncthreads();
    for (s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s) buf[t] = opara__k_red_merge(kind, buf[t], buf[t + s]);
        __syncthreads();
    }
    r = buf[0];
    __syncthreads();
    return r;
}

/* The kind's reduction of the set of output `out` (meta = [kept_n, kept dims, kept input strides, red_n,
 * reduced dims, reduced input strides], kept_n may be 0, red_n >= 1); LogSumExp's elements are
 * exp(x - shift). */
OPARA_DEVICE float opara__k_red_set(const float* x, const int* meta, long long out, int kind, float shift, float* buf)
{
    int kept_n = meta[0], red_n = meta[1 + 2 * kept_n], d;
    const int* kdims = meta + 1;
    const int* kstr = meta + 1 + kept_n;
    const int* rdims = meta + 2 + 2 * kept_n;
    const int* rstr = meta + 2 + 2 * kept_n + red_n;
    long long base = 0, count = 1, rest = out, j;
    float acc = opara__k_red_init(kind);
    for (d = kept_n - 1; d >= 0; --d) {
        base += (rest % kdims[d]) * kstr[d];
        rest /= kdims[d];
    }
    for (d = 0; d < red_n; ++d) count *= rdims[d];
    for (j = threadIdx.x; j < count; j += blockDim.x) {
        long long r = j, off = base;
        for (d = red_n - 1; d >= 0; --d) {
            off += (r % rdims[d]) * rstr[d];
            r /= rdims[d];
        }
        acc = opara__k_red_merge(kind, acc, opara__k_red_elem(kind, x[off], shift));
    }
    return opara__k_red_block(buf, acc, kind);
}

/* ReduceMean .. ReduceSumSquare with any set of axes: block b computes output element b (meta as
 * above). Launch: grid = number of outputs. */
OPARA_KERNEL(opara_reduce_f32, (const float*, x), (float*, y), (const int*, meta), (int, kind))
{
    OPARA_SHARED(float, buf, OPARA__RED_THREADS);
    int kept_n = meta[0], red_n = meta[1 + 2 * kept_n], d;
    float shift = 0.0f, r, count = 1.0f;
    for (d = 0; d < red_n; ++d) count *= (float)meta[2 + 2 * kept_n + d];
    if (kind == OPARA__K_RED_LOG_SUM_EXP) shift = opara__k_red_set(x, meta, blockIdx.x, OPARA__K_RED_MAX, 0.0f, buf);
    r = opara__k_red_set(x, meta, blockIdx.x, kind, shift, buf);
    if (threadIdx.x != 0) return;
    if (kind == OPARA__K_RED_MEAN) r = r / count;
    if (kind == OPARA__K_RED_L2) r = sqrtf(r);
    if (kind == OPARA__K_RED_LOG_SUM) r = logf(r);
    if (kind == OPARA__K_RED_LOG_SUM_EXP) r = shift - shift != 0.0f ? shift : logf(r) + shift; /* infinite max: itself */
    y[blockIdx.x] = r;
}

/* The index of the largest (is_min: smallest) of len values at stride `inner`, as the CPU picks it: a
 * strict comparison from the first value (>=/<= with select_last), so a NaN wins only in first place. */
OPARA_DEVICE int opara__k_arg_best(const float* x, int len, int inner, int is_min, int select_last)
{
    float best = x[0];
    int j, at = 0;
    for (j = 1; j < len; ++j) {
        float v = x[(long long)j * inner];
        int better = is_min ? (select_last ? v <= best : v < best) : (select_last ? v >= best : v > best);
        if (better) best = v, at = j;
    }
    return at;
}

/* ArgMax/ArgMin along the middle axis of x viewed as [outer, len, inner]: output i (of n) is row
 * (i / inner, :, i % inner). Launch: grid-stride over n. */
OPARA_KERNEL(opara_arg_reduce_f32, (const float*, x), (long long*, y), (int, n), (int, len), (int, inner), (int, is_min),
             (int, select_last))
{
    int i;
    for (i = (int)(blockIdx.x * blockDim.x + threadIdx.x); i < n; i += (int)(blockDim.x * gridDim.x)) {
        long long base = (long long)(i / inner) * len * inner + i % inner;
        y[i] = opara__k_arg_best(x + base, len, inner, is_min, select_last);
    }
}

/* Hardmax: 1 at the first largest value of each row (ArgMax's choice), 0 elsewhere; rows as above.
 * Launch: grid-stride over the n rows. */
OPARA_KERNEL(opara_hardmax_f32, (const float*, x), (float*, y), (int, n), (int, len), (int, inner))
{
    int i, j;
    for (i = (int)(blockIdx.x * blockDim.x + threadIdx.x); i < n; i += (int)(blockDim.x * gridDim.x)) {
        long long base = (long long)(i / inner) * len * inner + i % inner;
        int at = opara__k_arg_best(x + base, len, inner, 0, 0);
        for (j = 0; j < len; ++j) y[base + (long long)j * inner] = j == at ? 1.0f : 0.0f;
    }
}

/* LogSoftmax over the middle axis of x viewed as [outer, len, inner]: y = x - max - log(sum(exp(x -
 * max))); block b handles row (b / inner, :, b % inner). Launch: grid outer * inner. */
OPARA_KERNEL(opara_log_softmax_f32, (const float*, x), (float*, y), (int, len), (int, inner))
{
    OPARA_SHARED(float, buf, OPARA__RED_THREADS);
    long long base = (long long)(blockIdx.x / (unsigned)inner) * len * inner + blockIdx.x % (unsigned)inner;
    float m = -OPARA_INF_F32, sum = 0.0f, shift;
    int j;
    for (j = (int)threadIdx.x; j < len; j += (int)blockDim.x) m = opara__k_red_max(m, x[base + (long long)j * inner]);
    m = opara__k_red_block(buf, m, OPARA__K_RED_MAX);
    for (j = (int)threadIdx.x; j < len; j += (int)blockDim.x) sum += expf(x[base + (long long)j * inner] - m);
    sum = opara__k_red_block(buf, sum, OPARA__K_RED_SUM);
    shift = m + logf(sum);
    for (j = (int)threadIdx.x; j < len; j += (int)blockDim.x)
        y[base + (long long)j * inner] = x[base + (long long)j * inner] - shift;
}

/* CumSum along the middle axis of x viewed as [outer, len, inner]: thread i of n runs line
 * (i / inner, :, i % inner) in order (reverse: backwards), exclusive: without the element itself.
 * dtype is ONNX's number: 1 float32, 11 float64, 6 int32, 7 int64 (integers wrap, as on the CPU).
 * Launch: grid-stride over n. */
OPARA_KERNEL(opara_cum_sum, (const unsigned char*, x), (unsigned char*, y), (int, n), (int, len), (int, inner),
             (int, exclusive), (int, reverse), (int, dtype))
{
    int i, k;
    for (i = (int)(blockIdx.x * blockDim.x + threadIdx.x); i < n; i += (int)(blockDim.x * gridDim.x)) {
        long long base = (long long)(i / inner) * len * inner + i % inner;
        float fsum = 0.0f;
        double dsum = 0.0;
        unsigned long long isum = 0;
        for (k = 0; k < len; ++k) {
            long long at = base + (long long)(reverse ? len - 1 - k : k) * inner;
            if (dtype == 1) {
                float v = ((const float*)(const void*)x)[at];
                if (!exclusive) fsum += v;
                ((float*)(void*)y)[at] = fsum;
                if (exclusive) fsum += v;
            } else if (dtype == 11) {
                double v = ((const double*)(const void*)x)[at];
                if (!exclusive) dsum += v;
                ((double*)(void*)y)[at] = dsum;
                if (exclusive) dsum += v;
            } else {
                unsigned long long v = dtype == 6 ? (unsigned long long)(long long)((const int*)(const void*)x)[at]
                                                  : (unsigned long long)((const long long*)(const void*)x)[at];
                if (!exclusive) isum += v;
                if (dtype == 6) ((int*)(void*)y)[at] = (int)(unsigned int)isum;
                else ((long long*)(void*)y)[at] = (long long)isum;
                if (exclusive) isum += v;
            }
        }
    }
}
