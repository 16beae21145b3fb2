/* Sample kernels: they prove the pipeline (nvcc -ptx, NVRTC, host build for tests/cudaemu). */
#include "opara_kernel.h"

/* y[i] = a[i] + b[i] for i < n (one thread per element, any grid/block shape along x). */
OPARA_KERNEL(opara_sample_add_f32, (const float*, a), (const float*, b), (float*, y), (int, n))
{
    int i = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (i < n) y[i] = a[i] + b[i];
}

/* sums[blockIdx.x] = sum of the block's tile of x (tile = blockDim.x elements, zero past n).
 * blockDim.x must be a power of two <= 1024 (a tree reduction in shared memory). */
OPARA_KERNEL(opara_sample_block_sum_f32, (const float*, x), (float*, sums), (int, n))
{
    OPARA_SHARED(float, partial, 1024);
    unsigned int t = threadIdx.x;
    int i = (int)(blockIdx.x * blockDim.x + t);
    unsigned int s;
    partial[t] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s) partial[t] += partial[t + s];
        __syncthreads();
    }
    if (t == 0) sums[blockIdx.x] = partial[0];
}
