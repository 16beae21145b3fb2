# mk/oom.mk - the allocation-failure sweep (tests/test_oom.c): its CUDA part runs on the emulator's
# libraries (OPARA_CUDA_DRIVER, OPARA_CUBLAS, OPARA_CUDNN when set). OPARA_OOM_STRIDE=K tries every
# K-th failure point only (default 1: all of them).
$(BUILD)/tests/test_oom: private CFLAGS += -DOPARA_EMU_LIB_DIR='"$(abspath $(BUILD)/cudaemu)"'
$(BUILD)/tests/test_oom: tests/onnx_pbw.h tests/opara_model_fixture.h tests/cuda_test_env.h | \
    $(BUILD)/cudaemu/libcuda.so.1 $(BUILD)/cudaemu/libcublas.so $(BUILD)/cudaemu/libcudnn.so
