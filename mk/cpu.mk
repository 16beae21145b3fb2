# CPU backend: ThreadSanitizer run of the session tests, and the CPU benchmark.
.PHONY: test-tsan bench-cpu

TSAN_FLAGS := -std=c99 $(WARN) -O1 -g -fsanitize=thread -fno-omit-frame-pointer

$(BUILD)/tsan/test_cpu_session: tests/test_cpu_session.c opara.h tests/opara_test.h
	@mkdir -p $(dir $@)
	$(CC) $(TSAN_FLAGS) -I. -Itests $< -o $@ $(LDLIBS)

test-tsan: check-header $(BUILD)/tsan/test_cpu_session
	@BUILD=$(BUILD) sh tools/run_tests.sh $(BUILD)/tsan/test_cpu_session

$(BUILD)/tests/test_cpu_kernels: tests/test_cpu_common.h

$(BUILD)/bench/bench_cpu: tools/bench_cpu.c opara.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -I. $< -o $@ $(LDFLAGS) $(LDLIBS)

# Models from the zoo branch's `make zoo` (override: make bench-cpu BENCH_MODELS="a.onnx b.onnx").
BENCH_MODELS ?= $(wildcard build/zoo/*.onnx)

bench-cpu: check-header $(BUILD)/bench/bench_cpu
	$(BUILD)/bench/bench_cpu --out $(BUILD)/bench/cpu.json $(BENCH_MODELS)
