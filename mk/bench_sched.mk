# mk/bench_sched.mk - `make bench-sched`: plan time, streams, events, waits and peak memory of
# every scheduling strategy on the zoo models ($(ZOO_DIR), from `make zoo`; missing models are
# skipped) and on synthetic DAGs of 1k, 10k and 100k operators -> build/bench/sched.json.

BENCH_SCHED_BIN := $(BUILD)/bench/bench_sched

$(BENCH_SCHED_BIN): tools/bench_sched.c opara.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -I. $< -o $@ $(LDFLAGS) $(LDLIBS)

.PHONY: bench-sched
bench-sched: $(BENCH_SCHED_BIN)
	@mkdir -p build/bench
	$(BENCH_SCHED_BIN) --zoo $(or $(ZOO_DIR),build/zoo) --out build/bench/sched.json
