# mk/cuda_backend.mk - the CUDA backend's kernels and tools.
#   make kernel-report   registers / shared memory / local memory per kernel and architecture
#                        (nvcc + ptxas from OPARA_CUDA_HOME, default /usr/local/cuda)
# The kernel tests are tests/test_cuda_kernels.c (host build of src/cuda/kernels/*.cu against naive
# references) and tests/test_cuda_nvrtc.c (NVRTC + ptxas for sm_75..sm_90, no spills); the main
# Makefile builds and runs them. They include the kernel files, so rebuild them when those change.

$(BUILD)/tests/test_cuda_kernels $(BUILD)/tests/test_cuda_nvrtc: $(wildcard src/cuda/kernels/*.cu src/cuda/kernels/*.h) tests/math_ref.h
$(BUILD)/tests/test_cuda_nvrtc: opara_nvrtc.h # (built with OPARA_NVRTC_SOURCE: opara.h includes it)

.PHONY: kernel-report
kernel-report:
	@BUILD=$(BUILD) sh tools/kernel_report.sh

# The backend test loads the emulator's libraries (or a real driver from OPARA_CUDA_DRIVER).
# (mk/cudaemu.mk is included after this file: name its libraries directly)
CUDA_BACKEND_EMU := $(BUILD)/cudaemu
$(BUILD)/tests/test_cuda_backend: private CFLAGS += -DOPARA_EMU_LIB_DIR='"$(abspath $(CUDA_BACKEND_EMU))"'
$(BUILD)/tests/test_cuda_backend: | $(CUDA_BACKEND_EMU)/libcuda.so.1 $(CUDA_BACKEND_EMU)/libcublas.so $(CUDA_BACKEND_EMU)/libcudnn.so
$(BUILD)/tests/test_cuda_zoo $(BUILD)/tests/test_cuda_nvrtc: private CFLAGS += -DOPARA_EMU_LIB_DIR='"$(abspath $(CUDA_BACKEND_EMU))"'
$(BUILD)/tests/test_cuda_zoo $(BUILD)/tests/test_cuda_nvrtc: tests/cuda_zoo_util.h
$(BUILD)/tests/test_cuda_zoo $(BUILD)/tests/test_cuda_nvrtc: | $(CUDA_BACKEND_EMU)/libcuda.so.1 $(CUDA_BACKEND_EMU)/libcublas.so \
    $(CUDA_BACKEND_EMU)/libcudnn.so

# `opara run --backend cuda` on the emulator against `--backend cpu` (tests/cuda_cli_test.sh)
TEST_SCRIPTS += tests/cuda_cli_test.sh
test-build: $(BUILD)/opara $(CUDA_BACKEND_EMU)/libcuda.so.1 $(CUDA_BACKEND_EMU)/libcublas.so $(CUDA_BACKEND_EMU)/libcudnn.so
$(BUILD)/tests/test_cuda_backend $(BUILD)/tests/test_cuda_dnn_run $(BUILD)/tests/test_cuda_profile: tests/cuda_test_env.h
# precision and what ran where through the public API (tests/test_cuda_precision.c): the emulator's libraries
$(BUILD)/tests/test_cuda_precision: private CFLAGS += -DOPARA_EMU_LIB_DIR='"$(abspath $(CUDA_BACKEND_EMU))"'
$(BUILD)/tests/test_cuda_precision: tests/cuda_test_env.h | $(CUDA_BACKEND_EMU)/libcuda.so.1 $(CUDA_BACKEND_EMU)/libcublas.so \
    $(CUDA_BACKEND_EMU)/libcudnn.so
# zero-sized tensors, NaN/Inf and index errors on the CPU and (emulated) CUDA backends (tests/test_edge_values.c)
$(BUILD)/tests/test_edge_values: private CFLAGS += -DOPARA_EMU_LIB_DIR='"$(abspath $(CUDA_BACKEND_EMU))"'
$(BUILD)/tests/test_edge_values: tests/cuda_test_env.h tests/builder_attrs.h | $(CUDA_BACKEND_EMU)/libcuda.so.1 $(CUDA_BACKEND_EMU)/libcublas.so \
    $(CUDA_BACKEND_EMU)/libcudnn.so
# every operator of the op table on the (emulated) CUDA backend against the CPU (tests/test_ops.c)
$(BUILD)/tests/test_ops: private CFLAGS += -DOPARA_EMU_LIB_DIR='"$(abspath $(CUDA_BACKEND_EMU))"'
$(BUILD)/tests/test_ops: tests/cuda_test_env.h tests/builder_attrs.h | $(CUDA_BACKEND_EMU)/libcuda.so.1 $(CUDA_BACKEND_EMU)/libcublas.so \
    $(CUDA_BACKEND_EMU)/libcudnn.so
