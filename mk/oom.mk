# mk/oom.mk - the allocation-failure sweep (tests/test_oom.c): its CUDA part runs on the emulator's
# libraries (OPARA_CUDA_DRIVER, OPARA_CUBLAS, OPARA_CUDNN when set). OPARA_OOM_STRIDE=K tries every
# K-th failure point only (default 1: all of them).
$(BUILD)/tests/test_oom: private CFLAGS += -DOPARA_EMU_LIB_DIR='"$(abspath $(BUILD)/cudaemu)"'
$(BUILD)/tests/test_oom: tests/onnx_pbw.h tests/opara_model_fixture.h tests/cuda_test_env.h | \
    $(BUILD)/cudaemu/libcuda.so.1 $(BUILD)/cudaemu/libcublas.so $(BUILD)/cudaemu/libcudnn.so

# make test-oom (CI): the sweep on zoo models (make zoo first), every failure point of squeezenet
# (about a minute) and every 5th of googlenet, once and from N on, in the four load paths.
.PHONY: test-oom
test-oom: $(BUILD)/tests/test_oom
	OPARA_OOM_MODELS=squeezenet $(BUILD)/tests/test_oom --filter oom_sweep_zoo_models
	OPARA_OOM_MODELS=googlenet OPARA_OOM_STRIDE=5 $(BUILD)/tests/test_oom --filter oom_sweep_zoo_models
