# CPU backend: ThreadSanitizer run of the session tests (CPU, and CUDA on the emulator), and the CPU benchmark.
.PHONY: test-tsan bench-cpu

TSAN_FLAGS := -std=c99 $(WARN) -O1 -g -fsanitize=thread -fno-omit-frame-pointer

$(BUILD)/tsan/test_cpu_session: tests/test_cpu_session.c opara.h tests/opara_test.h
	@mkdir -p $(dir $@)
	$(CC) $(TSAN_FLAGS) -I. -Itests $< -o $@ $(LDLIBS)

# test_lifetime: CUDA sessions created, run and destroyed on different threads (the emulator's libraries,
# uninstrumented, enforce the current-context rule), sessions and models destroyed concurrently, the
# OpenBLAS thread-count guard with runs on two threads (the fake OpenBLAS, mk/lifetime.mk).
$(BUILD)/tsan/test_lifetime: tests/test_lifetime.c opara.h tests/opara_test.h | $(BUILD)/cudaemu/libcuda.so.1 \
    $(BUILD)/cudaemu/libcublas.so $(BUILD)/cudaemu/libcudnn.so $(BUILD)/tests/libfake_openblas.so
	@mkdir -p $(dir $@)
	$(CC) $(TSAN_FLAGS) -I. -Itests -DOPARA_EMU_LIB_DIR='"$(abspath $(BUILD)/cudaemu)"' \
	    -DFAKE_OPENBLAS_PATH='"$(abspath $(BUILD)/tests/libfake_openblas.so)"' $< -o $@ $(LDLIBS)

test-tsan: check-header $(BUILD)/tsan/test_cpu_session $(BUILD)/tsan/test_lifetime
	@BUILD=$(BUILD) sh tools/run_tests.sh $(BUILD)/tsan/test_cpu_session $(BUILD)/tsan/test_lifetime

# The BLAS loader's tests load fakes by path (tests/fake_blas.c built three ways, and the fake OpenBLAS).
$(BUILD)/tests/libfake_refblas.so: FAKE_BLAS_KIND := -DFAKE_REFERENCE
$(BUILD)/tests/libfake_blis.so: FAKE_BLAS_KIND := -DFAKE_BLIS
$(BUILD)/tests/libfake_mkl.so: FAKE_BLAS_KIND := -DFAKE_MKL
$(BUILD)/tests/libfake_refblas.so $(BUILD)/tests/libfake_blis.so $(BUILD)/tests/libfake_mkl.so: tests/fake_blas.c tests/fake_blas_sgemm.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(FAKE_BLAS_KIND) -fPIC -shared $< -o $@ $(LDFLAGS)

$(BUILD)/tests/test_cpu_kernels: private CFLAGS += -DFAKE_BLAS_DIR='"$(abspath $(BUILD)/tests)"'
$(BUILD)/tests/test_cpu_kernels: tests/test_cpu_common.h tests/math_ref.h | $(BUILD)/tests/libfake_refblas.so \
    $(BUILD)/tests/libfake_blis.so $(BUILD)/tests/libfake_mkl.so $(BUILD)/tests/libfake_openblas.so

$(BUILD)/bench/bench_cpu: tools/bench_cpu.c opara.h tests/ort/ort_api.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -I. $< -o $@ $(LDFLAGS) $(LDLIBS)

# Models from the zoo branch's `make zoo` (override: make bench-cpu BENCH_MODELS="a.onnx b.onnx").
# bert_base and t5_small_encoder run at batch 1 only, to keep the whole benchmark near 10 minutes.
BENCH_MODELS ?= $(wildcard build/zoo/*.onnx)
BENCH_ARGS ?= --budget 10 --skip-batch8 bert_base,t5_small_encoder

bench-cpu: check-header $(BUILD)/bench/bench_cpu
	@sh tools/setup.sh npm $(BUILD)/npm onnxruntime-node || echo "bench-cpu: ONNX Runtime not installed; its column is skipped"
	ORT_LIB=$${ORT_LIB:-$(BUILD)/npm/node_modules/onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime.so.1} \
	    $(BUILD)/bench/bench_cpu --out $(BUILD)/bench/cpu.json $(BENCH_ARGS) $(BENCH_MODELS)
