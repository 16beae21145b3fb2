# `make conformance`: opara against references no one here wrote.
#  1. ONNX backend test data (Debian libonnx-testdata, installed here when possible): every test
#     of node, pytorch-converted and pytorch-operator whose ops are supported runs on the CPU
#     backend (sequential and Opara plans) and is compared with its expected outputs using ONNX's
#     tolerances. Unsupported ones are skipped with the reason; any failure fails the target.
#  2. ONNX Runtime (npm onnxruntime-node, installed here when possible) on every zoo model
#     (build/zoo, from `make zoo`): max abs error and NMSE per output and plan; fails above
#     CONF_NMSE_MAX. Without the zoo or ORT this part is a SKIP with the reason.
#  3. `make conformance-cuda` (also run by .ci/run): part 1's tests through the CUDA backend on the
#     emulator (build/cudaemu; OPARA_CUDA_DRIVER/OPARA_CUBLAS/OPARA_CUDNN override it), in the modes
#     eager, graph and sequential graph, CONF_CUDA_SEEDS emulator seeds each; ops the CUDA lowering does
#     not support are skips ("cuda: Op (reason)").
# Knobs: CONF_ARGS (e.g. "--filter conv -v"), ORT_COMPARE_ARGS, CONF_NMSE_MAX, CONF_CUDA_SEEDS.

CONF_DATA      ?= /usr/share/libonnx-testdata/data
CONF_NPM_DIR   ?= build/npm
CONF_ORT_LIB   ?= $(CONF_NPM_DIR)/node_modules/onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime.so.1
CONF_NMSE_MAX  ?= 1e-8
CONF_ARGS      ?=
CONF_CUDA_SEEDS ?= 5
ORT_COMPARE_ARGS ?=
CONF_DEPS := tests/conformance/conf_util.h opara.h

.PHONY: conformance conformance-onnx conformance-ort conformance-cuda

$(BUILD)/conformance/conformance: tests/conformance/conformance.c $(CONF_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -DOPARA_EMU_LIB_DIR='"$(abspath $(BUILD)/cudaemu)"' -I. -Itests/conformance $< -o $@ $(LDFLAGS) $(LDLIBS)

$(BUILD)/conformance/ort_compare: tests/conformance/ort_compare.c tests/ort/ort_api.h $(CONF_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -I. -Itests -Itests/conformance $< -o $@ $(LDFLAGS) $(LDLIBS)

conformance: conformance-onnx conformance-ort

conformance-onnx: check-header $(BUILD)/conformance/conformance
	@sh tools/setup.sh apt libonnx-testdata || true
	@if [ -d $(CONF_DATA)/node ]; then \
	  $(BUILD)/conformance/conformance --data $(CONF_DATA) $(CONF_ARGS); \
	else echo "conformance: ONNX test data SKIP ($(CONF_DATA) missing and libonnx-testdata could not be installed)"; fi

conformance-ort: check-header $(BUILD)/conformance/ort_compare
	@if [ ! -f build/zoo/zoo.tsv ]; then $(MAKE) --no-print-directory zoo || true; fi
	@sh tools/setup.sh npm $(CONF_NPM_DIR) onnxruntime-node || true
	@if ! ls build/zoo/*.onnx >/dev/null 2>&1; then \
	  echo "conformance: ORT comparison SKIP (no zoo models in build/zoo: make zoo could not build them)"; \
	elif [ ! -f $(CONF_ORT_LIB) ]; then \
	  echo "conformance: ORT comparison SKIP ($(CONF_ORT_LIB) missing: npm install onnxruntime-node failed)"; \
	else ORT_LIB=$(CONF_ORT_LIB) $(BUILD)/conformance/ort_compare --zoo build/zoo --nmse-max $(CONF_NMSE_MAX) \
	  $(ORT_COMPARE_ARGS); fi

conformance-cuda: check-header $(BUILD)/conformance/conformance $(BUILD)/cudaemu/libcuda.so.1 $(BUILD)/cudaemu/libcublas.so \
    $(BUILD)/cudaemu/libcudnn.so
	@sh tools/setup.sh apt libonnx-testdata || true
	@if [ -d $(CONF_DATA)/node ]; then \
	  $(BUILD)/conformance/conformance --backend cuda --seeds $(CONF_CUDA_SEEDS) --data $(CONF_DATA) $(CONF_ARGS); \
	else echo "conformance-cuda: ONNX test data SKIP ($(CONF_DATA) missing and libonnx-testdata could not be installed)"; fi
