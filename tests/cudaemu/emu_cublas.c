/* emu_cublas.c - placeholder for the cuBLAS fake (build/cudaemu/libcublas.so). Not written yet: the library
 * exports no cuBLAS entry point, so opara_cuda_cublas_load reports the first missing symbol. Plan
 * (docs/TESTING-GPU.md): handles, stream, workspace, sgemm, strided batched sgemm and gemmEx for fp32 as
 * kernels in the dialect, launched with cuLaunchKernel on the handle's stream so they are captured. */
typedef int emu_cublas_placeholder;
