# mk/cuda_profile.mk - the CUDA profiler's test (tests/test_cuda_profile.c) loads the emulator of this
# build (the sanitized one under SAN=1), like the backend tests in mk/cuda_backend.mk.
CUDA_PROFILE_EMU := $(BUILD)/cudaemu
$(BUILD)/tests/test_cuda_profile: private CFLAGS += -DOPARA_EMU_LIB_DIR='"$(abspath $(CUDA_PROFILE_EMU))"'
$(BUILD)/tests/test_cuda_profile: | $(CUDA_PROFILE_EMU)/libcuda.so.1 $(CUDA_PROFILE_EMU)/libcublas.so $(CUDA_PROFILE_EMU)/libcudnn.so
