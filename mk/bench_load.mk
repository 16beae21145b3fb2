# make bench-load: load time of a large synthetic .opara model (file mmap and caller's memory),
# proof that weights are used in place; table on stdout, JSON in build/bench/load.json.
.PHONY: bench-load
$(BUILD)/bench/bench_load: tools/bench_load.c opara.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -I. $< -o $@ $(LDFLAGS) $(LDLIBS)

bench-load: check-header $(BUILD)/bench/bench_load
	@mkdir -p build/bench
	$(BUILD)/bench/bench_load --dir build/bench --out build/bench/load.json
