# mk/cudaemu.mk - the CUDA emulator (tests/cudaemu) and the kernels' generated PTX.
#
#   make cudaemu     build/cudaemu/{libcuda.so.1, libcublas.so, libcudnn.so, libcudnn_cnn.so.9}
#   make ptx         regenerate the plain PTX and ptxas reports (src/cuda/kernels/ptx/, tests/cudaemu/ptx/) with
#                    nvcc/ptxas, and from them src/cuda/kernels/opara_ptx.h, opara_nvrtc.h and
#                    tests/cudaemu/emu_test_ptx.h (commit the result)
#   make ptx-pack    only the second step: the headers from the committed plain PTX (no nvcc needed)
#   make check-ptx   fail, naming the kernel file, when one of them is stale (without nvcc only the headers
#                    are checked against the committed plain PTX)
#   make test        also runs the emulator's own tests (TEST_BINS below)
#
# Every src/cuda/kernels/*.cu is picked up automatically: its host build is linked into libcuda.so.1 (the
# emulator executes it) and its PTX is embedded by `make ptx`.

CUDAEMU_DIR := $(BUILD)/cudaemu
CUDAEMU_OBJ := $(CUDAEMU_DIR)/obj
KERNEL_CU := $(sort $(wildcard src/cuda/kernels/*.cu))
KERNEL_NAMES := $(basename $(notdir $(KERNEL_CU)))
CUDAEMU_KERNEL_CU := $(sort $(wildcard tests/cudaemu/*.cu))
CUDAEMU_HDR := $(wildcard tests/cudaemu/*.h) src/cuda/kernels/opara_kernel.h src/cuda/kernels/opara_ptx.h src/cuda/kernels/opara_ptx_pack.h \
    opara_cuda.h opara_dl.h
CUDAEMU_CFLAGS = $(CFLAGS) -fPIC -fvisibility=hidden -ftls-model=initial-exec -D_GNU_SOURCE -Isrc/cuda/kernels -Itests/cudaemu
CUDAEMU_DRIVER_SRC := emu_core emu_stream emu_graph emu_exec emu_ptx emu_abi
CUDAEMU_DRIVER_OBJ := $(addprefix $(CUDAEMU_OBJ)/,$(addsuffix .o,$(CUDAEMU_DRIVER_SRC))) \
    $(patsubst src/cuda/kernels/%.cu,$(CUDAEMU_OBJ)/kernel_%.o,$(KERNEL_CU)) \
    $(patsubst tests/cudaemu/%.cu,$(CUDAEMU_OBJ)/emukernel_%.o,$(CUDAEMU_KERNEL_CU))
CUDAEMU_LIBS := $(CUDAEMU_DIR)/libcuda.so.1 $(CUDAEMU_DIR)/libcublas.so $(CUDAEMU_DIR)/libcudnn.so \
    $(CUDAEMU_DIR)/libcudnn_cnn.so.9
CUDAEMU_TESTS := $(patsubst tests/cudaemu/%.c,$(CUDAEMU_DIR)/%,$(sort $(wildcard tests/cudaemu/test_emu*.c)))

TEST_BINS += $(CUDAEMU_TESTS)

.PHONY: cudaemu ptx ptx-pack check-ptx
cudaemu: $(CUDAEMU_LIBS)

$(CUDAEMU_OBJ)/%.o: tests/cudaemu/%.c $(CUDAEMU_HDR)
	@mkdir -p $(@D)
	$(CC) $(CUDAEMU_CFLAGS) -c $< -o $@

$(CUDAEMU_OBJ)/kernel_%.o: src/cuda/kernels/%.cu src/cuda/kernels/opara_kernel.h
	@mkdir -p $(@D)
	$(CC) $(CUDAEMU_CFLAGS) -x c -c $< -o $@

$(CUDAEMU_OBJ)/emukernel_%.o: tests/cudaemu/%.cu src/cuda/kernels/opara_kernel.h
	@mkdir -p $(@D)
	$(CC) $(CUDAEMU_CFLAGS) -x c -c $< -o $@

# --no-undefined: every driver function of opara_cuda.h is exported (emu_abi.c takes their addresses).
# nodelete: its worker threads and state outlive a dlclose (as a driver's do)
$(CUDAEMU_DIR)/libcuda.so.1: $(CUDAEMU_DRIVER_OBJ)
	$(CC) $(CFLAGS) -shared -Wl,--no-undefined -Wl,-soname,libcuda.so.1 -Wl,-z,nodelete -o $@ $^ $(LDLIBS)

# The fakes run on the emulated driver (linked by soname, found next to them). --no-undefined: every function
# of opara_cuda.h's table must be defined (emu_lib.h); -Bsymbolic: NVIDIA's library in the same process (the
# descriptor cross-check) never interposes on the fake's own calls.
CUDAEMU_LIB_LDFLAGS = -shared -Wl,--no-undefined -Wl,-Bsymbolic -Wl,-rpath,'$$ORIGIN'

$(CUDAEMU_DIR)/libcublas.so: $(CUDAEMU_OBJ)/emu_cublas.o $(CUDAEMU_DIR)/libcuda.so.1
	$(CC) $(CFLAGS) $(CUDAEMU_LIB_LDFLAGS) -Wl,-soname,libcublas.so.13 -o $@ $< $(CUDAEMU_DIR)/libcuda.so.1 $(LDLIBS)

# (order-only: whatever needs the main cuDNN fake also gets the sub-library it loads at run time)
$(CUDAEMU_DIR)/libcudnn.so: $(CUDAEMU_OBJ)/emu_cudnn.o $(CUDAEMU_DIR)/libcuda.so.1 | $(CUDAEMU_DIR)/libcudnn_cnn.so.9
	$(CC) $(CFLAGS) $(CUDAEMU_LIB_LDFLAGS) -Wl,-soname,libcudnn.so.9 -o $@ $< $(CUDAEMU_DIR)/libcuda.so.1 $(LDLIBS)

# The convolution sub-library the main cuDNN fake dlopens at its first convolution call, from its own directory
# (as cuDNN 9's shim loads libcudnn_cnn.so.9). Its soname differs from the file name on purpose: NVIDIA's shim,
# when loaded in the same process, dlopens "libcudnn_cnn.so.9" by bare name and must not be handed this one.
$(CUDAEMU_DIR)/libcudnn_cnn.so.9: $(CUDAEMU_OBJ)/emu_cudnn_cnn.o $(CUDAEMU_DIR)/libcuda.so.1
	$(CC) $(CFLAGS) $(CUDAEMU_LIB_LDFLAGS) -Wl,-soname,libcudnn_cnn_emu.so.9 -o $@ $< $(CUDAEMU_DIR)/libcuda.so.1 $(LDLIBS)

# The tests dlopen the libraries (so `make test-gpu` can point them at NVIDIA's instead).
$(CUDAEMU_DIR)/test_emu%: tests/cudaemu/test_emu%.c tests/cudaemu/emu_test.h $(CUDAEMU_LIBS)
	$(CC) $(CFLAGS) -D_GNU_SOURCE -I. -Itests -Itests/cudaemu -Isrc/cuda/kernels \
	    -DOPARA_EMU_LIB_DIR='"$(abspath $(CUDAEMU_DIR))"' $< -o $@ $(LDLIBS)

# ---- PTX generation (nvcc from PATH or /usr/local/cuda; lowest architecture CUDA 13 supports)
NVCC ?= $(firstword $(shell command -v nvcc 2>/dev/null) $(wildcard /usr/local/cuda/bin/nvcc))
PTXAS ?= $(if $(NVCC),$(dir $(NVCC))ptxas)
PTX_ARCH ?= sm_75
PTX_DIR := $(BUILD)/ptx

$(PTX_DIR)/embed_kernels: tools/embed_kernels.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $< -o $@

# The PTX declares the oldest ISA version that holds it, PTX_ISA (8.0, CUDA 12.0: the oldest driver the
# loader accepts), instead of nvcc's own (9.0 from nvcc 13, which a CUDA 12 driver refuses with
# CUDA_ERROR_UNSUPPORTED_PTX_VERSION). ptxas then assembles the lowered text: it refuses an instruction
# or directive newer than the declared version, so a kernel that needs a newer ISA fails here. The text is
# also made compact for embedding (comment lines, blank lines and indentation dropped, runs of blanks made
# one space: PTX is free-form), and ptxas reads that same text, so what is embedded is what was checked.
# Its report (.ptxas) leaves out the compile times, so that it is the same on every run.
PTX_ISA ?= 8.0
define PTX_RECIPE
	@mkdir -p $(@D)
	$(NVCC) -ptx -arch=$(PTX_ARCH) -Isrc/cuda/kernels $< -o $@.nvcc
	sed -e 's/^\.version [0-9][0-9]*\.[0-9][0-9]*$$/.version $(PTX_ISA)/' -e 's/^[[:space:]]*//' \
	    -e 's/[[:space:]][[:space:]]*/ /g' -e 's/ $$//' -e '/^\/\//d' -e '/^$$/d' $@.nvcc > $@
	grep -qx '\.version $(PTX_ISA)' $@
	$(PTXAS) -v -arch=$(PTX_ARCH) $@ -o /dev/null > $(basename $@).log 2>&1
	grep -v 'Compile time = ' $(basename $@).log > $(basename $@).ptxas
endef
$(PTX_DIR)/%.ptx: src/cuda/kernels/%.cu src/cuda/kernels/opara_kernel.h
	$(PTX_RECIPE)
$(PTX_DIR)/test/%.ptx: tests/cudaemu/%.cu src/cuda/kernels/opara_kernel.h
	$(PTX_RECIPE)

# The library's kernels: PTX into src/cuda/kernels/opara_ptx.h (packed, inlined into opara.h), sources into the
# companion opara_nvrtc.h (OPARA_NVRTC_SOURCE). The emulator tests' own kernels (tests/cudaemu/sample.cu):
# PTX into tests/cudaemu/emu_test_ptx.h, so no test-only image ships in opara.h. The headers are made from
# the committed plain text (PTX_REF: the PTX and ptxas's report per kernel file), which `make ptx` copies
# from nvcc's output: the packed strings can be remade and checked without nvcc, and the tests compare
# what the decoder unpacks with that text.
TEST_KERNEL_NAMES := sample
PTX_REF := src/cuda/kernels/ptx
PTX_TEST_REF := tests/cudaemu/ptx
PTX_EMBED_ARGS = --ptx src/cuda/kernels/opara_ptx.h --nvrtc opara_nvrtc.h --header src/cuda/kernels/opara_kernel.h \
    $(foreach k,$(KERNEL_NAMES),$(k) $(PTX_REF)/$(k).ptx $(PTX_REF)/$(k).ptxas src/cuda/kernels/$(k).cu)
PTX_TEST_EMBED_ARGS = --ptx tests/cudaemu/emu_test_ptx.h --tables emu_test_kernel --decoder ../../src/cuda/kernels/opara_ptx_pack.h \
    $(foreach k,$(TEST_KERNEL_NAMES),$(k) $(PTX_TEST_REF)/$(k).ptx $(PTX_TEST_REF)/$(k).ptxas tests/cudaemu/$(k).cu)
PTX_ALL := $(addprefix $(PTX_DIR)/,$(addsuffix .ptx,$(KERNEL_NAMES))) \
    $(addprefix $(PTX_DIR)/test/,$(addsuffix .ptx,$(TEST_KERNEL_NAMES)))
# (nvcc's output, its committed copy) pairs
PTX_REF_PAIRS = $(foreach k,$(KERNEL_NAMES),$(PTX_DIR)/$(k).ptx:$(PTX_REF)/$(k).ptx \
        $(PTX_DIR)/$(k).ptxas:$(PTX_REF)/$(k).ptxas) \
    $(foreach k,$(TEST_KERNEL_NAMES),$(PTX_DIR)/test/$(k).ptx:$(PTX_TEST_REF)/$(k).ptx \
        $(PTX_DIR)/test/$(k).ptxas:$(PTX_TEST_REF)/$(k).ptxas)

ptx: $(PTX_DIR)/embed_kernels $(PTX_ALL)
	@test -n "$(NVCC)" || { echo "make ptx: nvcc not found (install the CUDA toolkit or set NVCC=)"; exit 1; }
	@mkdir -p $(PTX_REF) $(PTX_TEST_REF)
	@for p in $(PTX_REF_PAIRS); do cp "$${p%%:*}" "$${p#*:}" || exit 1; done
	@$(MAKE) --no-print-directory ptx-pack

# The decoder on any bytes (tests/fuzz/fuzz_ptx.c; make fuzz); its test reads the generated headers directly.
FUZZ_TARGETS += ptx
$(BUILD)/tests/test_ptx_pack: src/cuda/kernels/opara_ptx.h src/cuda/kernels/opara_ptx_pack.h tests/cudaemu/emu_test_ptx.h

ptx-pack: $(PTX_DIR)/embed_kernels
	$(PTX_DIR)/embed_kernels $(PTX_EMBED_ARGS)
	$(PTX_DIR)/embed_kernels $(PTX_TEST_EMBED_ARGS)

ifeq ($(NVCC),)
check-ptx: $(PTX_DIR)/embed_kernels
	@echo "check-ptx: nvcc not found (install the CUDA toolkit or set NVCC=): the PTX is not remade, only the headers checked"
else
check-ptx: $(PTX_DIR)/embed_kernels $(PTX_ALL)
	@stale=0; for p in $(PTX_REF_PAIRS); do cmp -s "$${p%%:*}" "$${p#*:}" || \
	    { echo "check-ptx: $${p#*:} is stale (nvcc/ptxas give $${p%%:*}): run make ptx"; stale=1; }; done; exit $$stale
endif
	$(PTX_DIR)/embed_kernels --check $(PTX_EMBED_ARGS) && $(PTX_DIR)/embed_kernels --check $(PTX_TEST_EMBED_ARGS)

# ---- the CUDA backend's zoo sweeps on the emulator (lists and measured times: tests/test_cuda_zoo.c)
#   make test-cuda-ci     every zoo model at batch 1 and the batch-4 subset, graph mode, one seed (2.5 min)
#   make test-cuda-full   every zoo model at batch 1 and the batch-4 subset, eager/graph/sequential graph
#                         x 5 emulator seeds (issue #7's full sweep, CI; 9 min on an idle 2-core machine)
.PHONY: test-cuda-ci test-cuda-full
test-cuda-ci test-cuda-full: check-header $(BUILD)/tests/test_cuda_zoo $(CUDAEMU_LIBS)
	@if [ ! -f build/zoo/zoo.tsv ]; then $(MAKE) --no-print-directory zoo || true; fi
	OPARA_CUDA_ZOO=$(if $(filter test-cuda-full,$@),all,every) $(BUILD)/tests/test_cuda_zoo

# ---- the same tests on a real GPU: NVIDIA's driver, cuBLAS and cuDNN instead of the emulator's (checks that
# need the emulator skip). docs/TESTING-GPU.md. Override the libraries with OPARA_CUDA_DRIVER, OPARA_CUBLAS,
# OPARA_CUDNN (paths or sonames; unset ones are what opara's loader search finds: test_cuda_loader --print-libs,
# so pip wheels, conda and toolkit directories work as in a user's program); OPARA_CUDA_ZOO selects the zoo models (tests/test_cuda_zoo.c). Unless set:
# OPARA_REQUIRE_ZOO=1 (a missing zoo model fails) and OPARA_EXPECT_LIBS=cublas,cudnn (sessions that do not use
# them fail); set either empty to drop it. OPARA_CUDA_PRECISION=tf32 runs the zoo in TF32.
CUDA_GPU_TESTS := $(CUDAEMU_TESTS) $(BUILD)/tests/test_cuda_loader $(BUILD)/tests/test_cuda_backend \
    $(BUILD)/tests/test_cuda_nvrtc $(BUILD)/tests/test_cuda_cudnn $(BUILD)/tests/test_cuda_dnn_run \
    $(BUILD)/tests/test_cuda_profile $(BUILD)/tests/test_cuda_zoo $(BUILD)/tests/test_cuda_precision \
    $(BUILD)/tests/test_ops
.PHONY: test-gpu
test-gpu: $(CUDA_GPU_TESTS)
	@export OPARA_CUDA_DRIVER=$${OPARA_CUDA_DRIVER:-libcuda.so.1}; \
	  eval "$$($(BUILD)/tests/test_cuda_loader --print-libs)"; \
	  OPARA_REQUIRE_ZOO=$${OPARA_REQUIRE_ZOO-1} OPARA_EXPECT_LIBS=$${OPARA_EXPECT_LIBS-cublas,cudnn} \
	  BUILD=$(BUILD) sh tools/run_tests.sh $(CUDA_GPU_TESTS)
