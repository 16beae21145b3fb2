# aarch64: the CPU kernel tests cross-compiled (NEON micro-kernel and element-wise loops) and run under
# qemu-user, once as they choose (NEON) and once with OPARA_CPU_ISA=portable; then the ISA-independent
# unit tests once each (the Jetson driver directory among them, tests/test_cuda_nodevice.c). `make test-aarch64` installs
# the cross compiler and qemu-user when it can (tools/setup.sh aarch64) and SKIPs, exit 0, without them.
.PHONY: test-aarch64

AARCH64_CC      ?= aarch64-linux-gnu-gcc
QEMU_AARCH64    ?= qemu-aarch64
AARCH64_SYSROOT ?= /usr/aarch64-linux-gnu
A64             := build/aarch64
# no sanitizers (SAN=1 is for this machine's builds): the cross toolchain need not have their runtimes
A64_CFLAGS      := -std=c99 $(WARN) -O2 -g
A64_FAKE_BLAS   := $(A64)/tests/libfake_refblas.so $(A64)/tests/libfake_blis.so $(A64)/tests/libfake_mkl.so \
                   $(A64)/tests/libfake_openblas.so
A64_TESTS       := $(A64)/tests/test_cpu_kernels $(A64)/tests/test_cpu_session
# the unit tests that do not depend on the ISA, run once (NEON chosen) under qemu-user; the CUDA
# emulator's suites stay x86-64 (its kernels are interpreted PTX, but its libraries are built here)
A64_UNIT_NAMES  := test_builder test_cuda_nodevice test_edge_values test_file_load test_format test_foundation test_graph \
                   test_pb test_sched test_shape test_sim
A64_UNIT_TESTS  := $(patsubst %,$(A64)/tests/%,$(A64_UNIT_NAMES))

$(A64)/cuda/libopara_fake_nodevice_cuda.so: tests/test_cuda_loader.c
	@mkdir -p $(dir $@)
	$(AARCH64_CC) $(A64_CFLAGS) -DOPARA_TEST_FAKE_PROC_DRIVER=13000 -DOPARA_TEST_FAKE_NO_DEVICE -fPIC -shared $< -o $@

$(A64)/tests/%: tests/%.c opara.h tests/opara_test.h
	@mkdir -p $(dir $@)
	$(AARCH64_CC) $(A64_CFLAGS) -I. -Itests $< -o $@ $(LDLIBS)

$(A64)/tests/test_cuda_nodevice: | $(A64)/cuda/libopara_fake_nodevice_cuda.so

$(A64)/tests/libfake_refblas.so: A64_FAKE_KIND := -DFAKE_REFERENCE
$(A64)/tests/libfake_blis.so: A64_FAKE_KIND := -DFAKE_BLIS
$(A64)/tests/libfake_mkl.so: A64_FAKE_KIND := -DFAKE_MKL
$(A64)/tests/libfake_refblas.so $(A64)/tests/libfake_blis.so $(A64)/tests/libfake_mkl.so: tests/fake_blas.c tests/fake_blas_sgemm.h
	@mkdir -p $(dir $@)
	$(AARCH64_CC) $(A64_CFLAGS) $(A64_FAKE_KIND) -fPIC -shared $< -o $@

$(A64)/tests/libfake_openblas.so: tests/fake_openblas.c tests/fake_blas_sgemm.h
	@mkdir -p $(dir $@)
	$(AARCH64_CC) $(A64_CFLAGS) -fPIC -shared -Wl,-soname,libopenblas.so.0 $< -o $@

$(A64)/tests/test_cpu_kernels: tests/test_cpu_kernels.c tests/test_cpu_common.h tests/math_ref.h opara.h tests/opara_test.h | $(A64_FAKE_BLAS)
	@mkdir -p $(dir $@)
	$(AARCH64_CC) $(A64_CFLAGS) -DFAKE_BLAS_DIR='"$(abspath $(A64)/tests)"' -I. -Itests $< -o $@ $(LDLIBS)

$(A64)/tests/test_cpu_session: tests/test_cpu_session.c opara.h tests/opara_test.h
	@mkdir -p $(dir $@)
	$(AARCH64_CC) $(A64_CFLAGS) -I. -Itests $< -o $@ $(LDLIBS)

test-aarch64: check-header
	@sh tools/setup.sh aarch64 || echo "test-aarch64: could not install the aarch64 cross compiler and qemu-user"
	@if command -v $(AARCH64_CC) >/dev/null 2>&1 && command -v $(QEMU_AARCH64) >/dev/null 2>&1; then \
	    $(MAKE) --no-print-directory -j$(NPROC) $(A64_TESTS) $(A64_UNIT_TESTS) && \
	    QEMU_AARCH64='$(QEMU_AARCH64)' AARCH64_SYSROOT='$(AARCH64_SYSROOT)' A64='$(A64)' \
	        sh tools/test_aarch64.sh $(A64_TESTS) --once $(A64_UNIT_TESTS); \
	else \
	    echo "SKIP test-aarch64: $(AARCH64_CC) or $(QEMU_AARCH64) is not installed (tools/setup.sh aarch64 installs them)"; \
	fi
