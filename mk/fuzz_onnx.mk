# libFuzzer target for the ONNX importer (clang). `make fuzz-onnx [FUZZ_SECONDS=60]` runs it on a
# copy of the committed seed corpus (tests/fuzz/corpus_onnx); findings land in build/fuzz/onnx/.
# FUZZ_TARGETS lets a common `make fuzz` (mk/fuzz.mk) pick it up.
FUZZ_TARGETS += onnx
FUZZ_SECONDS ?= 60
FUZZ_CC ?= clang
FUZZ_FLAGS ?= -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined

build/fuzz/fuzz_onnx: tests/fuzz/fuzz_onnx.c opara.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) -std=c99 $(WARN) $(FUZZ_FLAGS) -I. $< -o $@ -lm -ldl -lpthread

.PHONY: fuzz-onnx
fuzz-onnx: build/fuzz/fuzz_onnx
	@mkdir -p build/fuzz/onnx/corpus build/fuzz/onnx/findings
	@cp -n tests/fuzz/corpus_onnx/* build/fuzz/onnx/corpus/ 2>/dev/null || true
	build/fuzz/fuzz_onnx -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -rss_limit_mb=2048 \
	  -artifact_prefix=build/fuzz/onnx/findings/ build/fuzz/onnx/corpus
