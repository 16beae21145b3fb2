# `make bench-sim`: every strategy side by side on the GPU timing simulator (SIMULATED timings),
# for every zoo model (build/zoo, from `make zoo`) on every device preset and batch size.
# Output: the tables on stdout, JSON in build/bench/sim.json, and the README's timeline picture
# build/bench/timeline.svg (Opara, graph mode, first model, first device, first batch).

BENCH_SIM_ZOO     ?= build/zoo
BENCH_SIM_MODELS  ?= googlenet inception_v3 squeezenet resnet50 nasnet_mobile randwire deepfm bert_base \
                     t5_small_encoder ppocr_det
BENCH_SIM_DEVICES ?= rtx2080s,v100,a100,h100,orin
BENCH_SIM_BATCH   ?= 1,2,4,8,16,32
BENCH_SIM_OUT     ?= build/bench
# size of symbolic image dimensions (PP-OCR's detector takes any H x W): 640 x 640
BENCH_SIM_DIM     ?= 640

.PHONY: bench-sim
bench-sim: $(BUILD)/opara
	@mkdir -p $(BENCH_SIM_OUT)
	@files=""; for m in $(BENCH_SIM_MODELS); do \
	  if [ -f $(BENCH_SIM_ZOO)/$$m.onnx ]; then files="$$files $(BENCH_SIM_ZOO)/$$m.onnx"; \
	  else echo "bench-sim: SKIP $$m ($(BENCH_SIM_ZOO)/$$m.onnx missing; run make zoo)"; fi; done; \
	if [ -z "$$files" ]; then echo "bench-sim: no zoo model found; benchmarking synthetic:inception"; \
	  files="synthetic:inception"; fi; \
	$(BUILD)/opara bench $$files --sim $(BENCH_SIM_DEVICES) --batch $(BENCH_SIM_BATCH) --default-dim $(BENCH_SIM_DIM) \
	  --json $(BENCH_SIM_OUT)/sim.json --trace $(BENCH_SIM_OUT)/timeline.json --svg $(BENCH_SIM_OUT)/timeline.svg
