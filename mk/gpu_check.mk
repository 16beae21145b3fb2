# mk/gpu_check.mk - the one-shot real-GPU check and its emulator variant (docs/GPU-CHECK.md).
#   make gpu-check OUT=DIR       on a machine with an NVIDIA GPU: build, test-gpu (FP32, TF32), the zoo vs the
#                                CPU backend and PyTorch, timings; everything in DIR (<= 8 files, results.json)
#   make gpu-check-emu OUT=DIR   the same script on the CUDA emulator, reduced (CI runs it)
# Neither installs anything (no apt, pip or npm) nor calls test-setup.
GPU_CHECK_BIN := $(BUILD)/gpu_check

$(GPU_CHECK_BIN): tools/gpu_check.c tests/cuda_zoo_util.h opara.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -I. -Itests $< -o $@ $(LDFLAGS) $(LDLIBS)

.PHONY: gpu-check gpu-check-emu
gpu-check gpu-check-emu:
	@test -n "$(OUT)" || { echo "usage: make $@ OUT=DIR"; exit 2; }
	@BUILD=$(BUILD) bash tools/gpu_check.sh $(if $(filter gpu-check-emu,$@),--emu) "$(OUT)"

# What the check runs, built in one make call (the script picks -j).
.PHONY: gpu-check-build gpu-check-build-emu
gpu-check-build: $(BUILD)/opara $(GPU_CHECK_BIN) $(CUDAEMU_LIBS) $(CUDA_GPU_TESTS)
gpu-check-build-emu: $(BUILD)/opara $(GPU_CHECK_BIN) $(CUDAEMU_LIBS) $(BUILD)/tests/test_cuda_loader \
    $(BUILD)/tests/test_cuda_dnn_run $(BUILD)/tests/test_cuda_zoo

# The script's failure paths (a failing, a hanging step, a short budget, a broken merge) on the emulator.
TEST_SCRIPTS += tests/gpu_check_test.sh
test-build: $(GPU_CHECK_BIN)
