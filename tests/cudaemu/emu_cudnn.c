/* emu_cudnn.c - placeholder for the cuDNN fake (build/cudaemu/libcudnn.so). Not written yet: the library
 * exports no cuDNN entry point, so opara_cuda_cudnn_load reports the first missing symbol. Plan
 * (docs/TESTING-GPU.md): handle, stream, tensor/filter/convolution/activation descriptors, the v7
 * algorithm query, workspace size, convolution forward, bias+activation forward and add tensor for fp32,
 * as kernels in the dialect launched with cuLaunchKernel on the handle's stream so they are captured. */
typedef int emu_cudnn_placeholder;
