# ONNX import: expected values from an independent reader (python3-onnx), fuzz target.
ONNX_PYTHON ?= /usr/bin/python3
ONNX_EXPECTED := build/onnx/tensors_expected.txt build/onnx/zoo_expected.txt

build/onnx/tensors_expected.txt: tests/onnx_expected.py
	@mkdir -p $(dir $@)
	-@$(ONNX_PYTHON) tests/onnx_expected.py tensors $@ || true

# Regenerated every time: the zoo may have been built since.
.PHONY: build/onnx/zoo_expected.txt
build/onnx/zoo_expected.txt:
	@mkdir -p $(dir $@)
	-@$(ONNX_PYTHON) tests/onnx_expected.py zoo build/zoo $@ || true

$(BUILD)/tests/test_onnx: | $(ONNX_EXPECTED)
$(BUILD)/tests/test_onnx: tests/onnx_pbw.h

# Installs the ONNX backend test data the tests read (they SKIP without it).
.PHONY: onnx-testdata
onnx-testdata:
	@test -d /usr/share/libonnx-testdata/data || \
	  (apt-get install -y libonnx-testdata >/dev/null 2>&1 || (apt-get update -qq && apt-get install -y libonnx-testdata)) || \
	  echo "onnx-testdata: could not install libonnx-testdata; ONNX data tests will SKIP"
