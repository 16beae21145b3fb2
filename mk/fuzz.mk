# make fuzz: builds every libFuzzer target in FUZZ_TARGETS with clang and runs each for
# FUZZ_SECONDS on a scratch copy of its seed corpus tests/fuzz/corpus_<name>/ (new inputs land
# in build/fuzz/corpus_<name>/; crashes in build/fuzz/). Another area adds a target with
#   FUZZ_TARGETS += name        (source tests/fuzz/fuzz_<name>.c, seeds tests/fuzz/corpus_<name>/)
# make fuzz-seeds regenerates the committed seed corpora that have a generator.
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_FLAGS   := -std=c99 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -I.
FUZZ_TARGETS += model onnx run
FUZZ_CI_SECONDS ?= 20

.PHONY: fuzz fuzz-ci fuzz-seeds
build/fuzz/fuzz_%: tests/fuzz/fuzz_%.c opara.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) $< -o $@ $(LDLIBS)

fuzz: check-header $(patsubst %,build/fuzz/fuzz_%,$(FUZZ_TARGETS))
	@set -e; for t in $(FUZZ_TARGETS); do \
	    mkdir -p build/fuzz/corpus_$$t build/fuzz/artifacts_$$t; \
	    cp tests/fuzz/corpus_$$t/* build/fuzz/corpus_$$t/ 2>/dev/null || true; \
	    echo "fuzz $$t: $(FUZZ_SECONDS) s"; \
	    build/fuzz/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048 \
	        -artifact_prefix=build/fuzz/artifacts_$$t/ -print_final_stats=1 build/fuzz/corpus_$$t 2>&1 | \
	        tee build/fuzz/fuzz_$$t.log | grep -E '^(#[0-9]+ +DONE|stat::number_of_executed_units|==[0-9]+==ERROR|SUMMARY)' ; \
	    test -z "$$(ls build/fuzz/artifacts_$$t)" || { echo "fuzz $$t: findings in build/fuzz/artifacts_$$t"; exit 1; }; \
	done

build/fuzz/seeds_model: tests/fuzz/fuzz_model.c tests/opara_model_fixture.h opara.h
	@mkdir -p $(dir $@)
	$(CC) -std=c99 $(WARN) -O1 -DFUZZ_WRITE_SEEDS -I. $< -o $@ $(LDLIBS)

fuzz-seeds: build/fuzz/seeds_model
	build/fuzz/seeds_model tests/fuzz/corpus_model

# The short pass CI runs on every submission.
fuzz-ci:
	@$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=$(FUZZ_CI_SECONDS)
