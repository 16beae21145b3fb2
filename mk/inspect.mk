# tests/test_inspect.c also reads a CUDA session's plan and kernels on the emulator (a skip without it).
$(BUILD)/tests/test_inspect: private CFLAGS += -DOPARA_EMU_LIB_DIR='"$(abspath $(BUILD)/cudaemu)"'
$(BUILD)/tests/test_inspect: | $(BUILD)/cudaemu/libcuda.so.1 $(BUILD)/cudaemu/libcublas.so $(BUILD)/cudaemu/libcudnn.so
