/* The CUDA libraries the CUDA backend tests load: OPARA_CUDA_DRIVER, OPARA_CUBLAS and OPARA_CUDNN
   when set (make test-gpu points them at NVIDIA's), else this build's emulator; and the backend
   options every such test starts from. Include after opara.h and opara_test.h. */
#ifndef CUDA_TEST_ENV_H
#define CUDA_TEST_ENV_H

#include <stdlib.h>
#include <string.h>

#ifndef OPARA_EMU_LIB_DIR
#define OPARA_EMU_LIB_DIR "build/cudaemu"
#endif

static const char* cuda_test_env_or(const char* var, const char* fallback) {
    const char* e = getenv(var);
    return e && *e ? e : fallback;
}
#define driver_path() cuda_test_env_or("OPARA_CUDA_DRIVER", OPARA_EMU_LIB_DIR "/libcuda.so.1")
#define cublas_path() cuda_test_env_or("OPARA_CUBLAS", OPARA_EMU_LIB_DIR "/libcublas.so")
#define cudnn_path() cuda_test_env_or("OPARA_CUDNN", OPARA_EMU_LIB_DIR "/libcudnn.so")

/* Options of a session in `mode` on those libraries. */
OT__UNUSED static opara__cuda_options cuda_test_options(opara__cuda_mode mode) {
    opara__cuda_options o;
    memset(&o, 0, sizeof o);
    o.mode = mode;
    o.driver_path = driver_path();
    o.cublas_path = cublas_path();
    o.cudnn_path = cudnn_path();
    return o;
}

#endif
