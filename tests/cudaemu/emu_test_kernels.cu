/* Kernels used only by the emulator's own tests (host build only; the tests carry their PTX headers).
 * They misbehave on purpose, to show that the emulator catches what a GPU would not report cleanly. */
#include "opara_kernel.h"

/* Writes y[0..n] inclusive: one element past the end. */
OPARA_KERNEL(opara_emutest_oob_write, (float*, y), (int, n))
{
    int i = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (i <= n) y[i] = 1.0f;
}

/* y = x reversed inside each block, through dynamic shared memory and a barrier. */
OPARA_KERNEL(opara_emutest_reverse, (const float*, x), (float*, y))
{
    OPARA_DYNAMIC_SHARED(float, tile);
    unsigned int t = threadIdx.x, base = blockIdx.x * blockDim.x;
    tile[t] = x[base + t];
    __syncthreads();
    y[base + t] = tile[blockDim.x - 1 - t];
}

/* The same without the barrier: wrong whenever a thread reads before its partner wrote. */
OPARA_KERNEL(opara_emutest_reverse_racy, (const float*, x), (float*, y))
{
    OPARA_DYNAMIC_SHARED(float, tile);
    unsigned int t = threadIdx.x, base = blockIdx.x * blockDim.x;
    OPARA_SHARED(int, unused, 1);
    if (t == 0) unused[0] = 0;
    tile[t] = x[base + t];
    y[base + t] = tile[blockDim.x - 1 - t];
}

/* A barrier only some threads reach (undefined in CUDA). */
OPARA_KERNEL(opara_emutest_divergent_barrier, (float*, y))
{
    if (threadIdx.x != 0) __syncthreads();
    y[threadIdx.x] = 1.0f;
}
