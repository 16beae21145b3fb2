/* opara_cuda.h - standalone declarations and run-time loader for the CUDA driver, NVRTC, cuBLAS
   and cuDNN subset used by opara.h. No CUDA SDK is needed to compile it. */
#ifndef OPARA_CUDA_H_INCLUDED
#define OPARA_CUDA_H_INCLUDED
#define OPARA_CUDA_H_VERSION 1
#endif /* OPARA_CUDA_H_INCLUDED */
