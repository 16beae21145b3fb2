# opara.h build. The README's two commands: `make demo` and `make test`.
# SAN=1 builds everything with AddressSanitizer + UndefinedBehaviorSanitizer.

CC      ?= cc
CXX     ?= c++
BUILD   := build
WARN    := -Wall -Wextra -Wpedantic -Werror
OPT     ?= -O2 -g
CFLAGS  := -std=c99 $(WARN) $(OPT)
CXXFLAGS:= -std=c++11 $(WARN) $(OPT)
LDLIBS  := -lm -ldl -lpthread
ifeq ($(SAN),1)
  SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
  CFLAGS   += $(SANFLAGS)
  CXXFLAGS += $(SANFLAGS)
  LDFLAGS  += $(SANFLAGS)
  BUILD    := build/san
endif

SRC_FILES := $(wildcard src/*/*.h src/*/*.c src/cuda/kernels/*) opara_dl.h opara_cuda.h opara_nvrtc.h tools/gen_header.c LICENSE
TEST_SRCS := $(sort $(wildcard tests/test_*.c))
TEST_BINS := $(patsubst tests/%.c,$(BUILD)/tests/%,$(TEST_SRCS))
GEN_HEADER := build/tools/gen_header

.PHONY: all header check-header test test-setup test-build test-run demo clean tools compile-matrix
all: opara.h $(BUILD)/opara

# ---- the single header ---------------------------------------------------------------------------
$(GEN_HEADER): tools/gen_header.c
	@mkdir -p $(dir $@)
	$(CC) -std=c99 $(WARN) -O2 $< -o $@

# opara.h, and build/opara_cpu.h: opara.h for CPU-only programs (OPARA_NO_CUDA, the CUDA files left out;
# generated, not committed; tests/compile_matrix.sh builds and runs a program with it)
header: $(GEN_HEADER)
	$(GEN_HEADER) --out opara.h
	$(GEN_HEADER) --cpu-only --out build/opara_cpu.h

check-header: $(GEN_HEADER)
	$(GEN_HEADER) --check --out opara.h
	$(GEN_HEADER) --cpu-only --out build/opara_cpu.h

# ---- tests ---------------------------------------------------------------------------------------
$(BUILD)/tests/%: tests/%.c opara.h tests/opara_test.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -I. -Itests $< -o $@ $(LDFLAGS) $(LDLIBS)

# Fragments of other areas append to TEST_BINS and TEST_SCRIPTS and add their own rules.
TEST_SCRIPTS := tests/compile_matrix.sh tests/gen_header_test.sh tests/layers_test.sh tests/cli_load_test.sh tests/cli_args_test.sh \
                tests/cli_errors_test.sh tests/portable_c_test.sh
include $(sort $(wildcard mk/*.mk))

# What the suites read: the ONNX backend test data, python3-onnx (an independent reader of
# expected values), ONNX Runtime (npm onnxruntime-node in build/npm, the reference for the rewrite
# tests) and the model zoo (PyTorch exports). Installed when this machine lets us (root with
# apt-get, npm); otherwise those tests SKIP and say why.
test-setup:
	@sh tools/setup.sh apt libonnx-testdata python3-onnx python3-numpy || echo "test-setup: ONNX data suites will SKIP"
	@sh tools/setup.sh npm build/npm onnxruntime-node || echo "test-setup: ONNX Runtime comparisons will SKIP"
	@$(MAKE) --no-print-directory zoo

NPROC := $(shell nproc 2>/dev/null || echo 2)

test: test-setup
	@$(MAKE) --no-print-directory -j$(NPROC) test-build
	@$(MAKE) --no-print-directory test-run

test-build: check-header $(GEN_HEADER) $(TEST_BINS)

test-run: test-build
	@BUILD=$(BUILD) SAN=$(SAN) sh tools/run_tests.sh $(TEST_BINS) $(TEST_SCRIPTS)

compile-matrix:
	@BUILD=$(BUILD) sh tests/compile_matrix.sh

# ---- programs ------------------------------------------------------------------------------------
$(BUILD)/opara: tools/opara.c $(wildcard tools/cli_*.c) opara.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -I. $< -o $@ $(LDFLAGS) $(LDLIBS)

$(BUILD)/examples/%: examples/%.c opara.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -I. $< -o $@ $(LDFLAGS) $(LDLIBS)

demo: check-header $(BUILD)/examples/demo
	$(BUILD)/examples/demo

clean:
	rm -rf build
