# mk/cuda_profile.mk - the CUDA profiler's test (tests/test_cuda_profile.c) loads the emulator of this
# build (the sanitized one under SAN=1), like the backend tests in mk/cuda_backend.mk.
CUDA_PROFILE_EMU := $(BUILD)/cudaemu
$(BUILD)/tests/test_cuda_profile: private CFLAGS += -DOPARA_EMU_LIB_DIR='"$(abspath $(CUDA_PROFILE_EMU))"'
$(BUILD)/tests/test_cuda_profile: | $(CUDA_PROFILE_EMU)/libcuda.so.1 $(CUDA_PROFILE_EMU)/libcublas.so $(CUDA_PROFILE_EMU)/libcudnn.so

# A cuDNN whose first convolution on each handle costs a sleep (tests/cuda_cold_cudnn.c, forwarding to
# the emulator's or OPARA_COLD_CUDNN_REAL): the profiler's test shows that first-use costs stay out of
# the plan.
CUDA_COLD_CUDNN := $(BUILD)/cuda/libopara_cold_cudnn.so
$(CUDA_COLD_CUDNN): tests/cuda_cold_cudnn.c opara_cuda.h opara_dl.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -fPIC -shared -fvisibility=hidden -DOPARA_EMU_LIB_DIR='"$(abspath $(CUDA_PROFILE_EMU))"' -I. $< \
	    -o $@ $(LDFLAGS) -ldl -lpthread
$(BUILD)/tests/test_cuda_profile: private CFLAGS += -DOPARA_COLD_CUDNN='"$(abspath $(CUDA_COLD_CUDNN))"'
$(BUILD)/tests/test_cuda_profile: | $(CUDA_COLD_CUDNN)
