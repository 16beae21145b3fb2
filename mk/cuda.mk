# opara_cuda.h checks.
# - cuda_headers_check_{c,cxx}: opara_cuda.h against NVIDIA's headers in $(OPARA_CUDA_INC), as C
#   (NVIDIA's headers first) and as C++11 (ours first; also compares every function type). The
#   headers go in with -isystem so their own warnings do not count. Without them the programs
#   still build and print a SKIP with the reason.
# - fake drivers for tests/test_cuda_loader.c, built from that file (it finds them next to its
#   binary, in ../cuda/): libopara_fake_old_cuda.so exports only cuInit and cuGetErrorName;
#   libopara_fake_cuda13.so / _cuda11.so export only cuDriverGetVersion (13.0 / 11.8) and
#   cuGetProcAddress_v2.

OPARA_CUDA_INC ?= /usr/local/cuda/include
CUDA_CHECK_INC := $(if $(wildcard $(OPARA_CUDA_INC)/cuda.h),-isystem $(OPARA_CUDA_INC))
CUDA_CHECK_DEPS := tests/cuda_headers_check.c opara_dl.h opara_cuda.h tests/opara_test.h

$(BUILD)/cuda/cuda_headers_check_c: $(CUDA_CHECK_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -I. -Itests $(CUDA_CHECK_INC) $< -o $@ $(LDFLAGS) $(LDLIBS)

$(BUILD)/cuda/cuda_headers_check_cxx: $(CUDA_CHECK_DEPS)
	@mkdir -p $(dir $@)
	$(CXX) -x c++ $(CXXFLAGS) -DOPARA_CHECK_OURS_FIRST -I. -Itests $(CUDA_CHECK_INC) $< -o $@ $(LDFLAGS) $(LDLIBS)

FAKE_CUDA_LIBS := $(BUILD)/cuda/libopara_fake_old_cuda.so $(BUILD)/cuda/libopara_fake_cuda13.so \
                  $(BUILD)/cuda/libopara_fake_cuda11.so
FAKE_CUDA_CC = mkdir -p $(dir $@); $(CC) -std=c99 $(WARN) -O2 -fPIC -shared $< -o $@

$(BUILD)/cuda/libopara_fake_old_cuda.so: tests/test_cuda_loader.c
	$(FAKE_CUDA_CC) -DOPARA_TEST_FAKE_OLD_DRIVER
$(BUILD)/cuda/libopara_fake_cuda13.so: tests/test_cuda_loader.c
	$(FAKE_CUDA_CC) -DOPARA_TEST_FAKE_PROC_DRIVER=13000
$(BUILD)/cuda/libopara_fake_cuda11.so: tests/test_cuda_loader.c
	$(FAKE_CUDA_CC) -DOPARA_TEST_FAKE_PROC_DRIVER=11080

# The no-device driver of tests/test_cuda_nodevice.c (Windows: mk/windows.mk builds it as a DLL).
$(BUILD)/cuda/libopara_fake_nodevice_cuda.so: tests/test_cuda_loader.c
	$(FAKE_CUDA_CC) -DOPARA_TEST_FAKE_PROC_DRIVER=13000 -DOPARA_TEST_FAKE_NO_DEVICE
$(BUILD)/tests/test_cuda_nodevice: | $(BUILD)/cuda/libopara_fake_nodevice_cuda.so

# A fake NVRTC for tests/test_cuda_nvrtc.c (built from that file; found in ../cuda/ beside the
# test binary): its cubin and PTX are refused by the driver, so the embedded PTX runs.
$(BUILD)/cuda/libopara_fake_nvrtc.so: tests/test_cuda_nvrtc.c src/cuda/kernels/opara_ptx.h src/cuda/kernels/opara_ptx_pack.h
	$(FAKE_CUDA_CC) -I. -DOPARA_TEST_FAKE_NVRTC

# Order-only, so the automatic test rule's $< and $^ stay the test source alone.
$(BUILD)/tests/test_cuda_loader: opara_cuda.h opara_dl.h | $(FAKE_CUDA_LIBS) $(BUILD)/cudaemu/libcublas.so $(BUILD)/cudaemu/libcudnn.so
$(BUILD)/tests/test_cuda_nvrtc: | $(BUILD)/cuda/libopara_fake_nvrtc.so

TEST_BINS += $(BUILD)/cuda/cuda_headers_check_c $(BUILD)/cuda/cuda_headers_check_cxx
