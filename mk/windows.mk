# Windows: the unit tests, the CLI, the demo and a CPU run of every zoo model, cross-compiled with
# MinGW-w64 (x86-64, C99, warnings as errors, static: no MinGW DLL beside the programs) and run under
# Wine (tools/test_windows.sh; its own Wine prefix under build/windows, the user's ~/.wine untouched),
# and the ONNX node tests (mk/conformance.mk's program) on the CPU backend there.
# `make test-windows` installs MinGW-w64 and Wine when it can (tools/setup.sh windows) and SKIPs,
# exit 0, without them. The CUDA path is tested there against a fake nvcuda.dll whose cuInit says
# CUDA_ERROR_NO_DEVICE (tests/test_cuda_nodevice.c); the CUDA emulator's suites are Linux-only (the
# emulator is a set of ELF libraries), and so are the suites that need POSIX fixtures (fork, RTLD_GLOBAL
# fakes, ONNX Runtime through Node) - the list below is what runs.
.PHONY: test-windows

WIN_CC   ?= x86_64-w64-mingw32-gcc
WINE     ?= wine
WIN      := build/windows
# __USE_MINGW_ANSI_STDIO: the tests' own printf calls use C99 formats (the library needs no such flag)
WIN_CFLAGS := -std=c99 $(WARN) -O2 -D__USE_MINGW_ANSI_STDIO=1
# the library needs nothing beyond the C runtime and kernel32 (no winpthreads: the CLI, the demo and the
# compile matrix's programs link without it); a few tests start their own threads with pthreads
WIN_LDLIBS := -static
WIN_TEST_LDLIBS := -static -lpthread
WIN_TEST_NAMES := test_api_misuse test_builder test_cpu_kernels test_cpu_session test_cuda_cudnn test_cuda_lower \
                  test_cuda_nodevice test_edge_values test_file_load test_format test_foundation test_graph test_inspect \
                  test_onnx test_oom test_ops test_pb test_ptx_pack test_sched test_sched_props test_sched_zoo test_shape test_sim
WIN_TESTS := $(patsubst %,$(WIN)/tests/%.exe,$(WIN_TEST_NAMES))
WIN_PROGS := $(WIN)/opara.exe $(WIN)/demo.exe $(WIN)/conformance.exe

$(WIN)/tests/%.exe: tests/%.c opara.h tests/opara_test.h
	@mkdir -p $(dir $@)
	$(WIN_CC) $(WIN_CFLAGS) -I. -Itests $< -o $@ $(WIN_TEST_LDLIBS)

$(WIN)/tests/opara_fake_nodevice_cuda.dll: tests/test_cuda_loader.c
	@mkdir -p $(dir $@)
	$(WIN_CC) -std=c99 $(WARN) -O2 -DOPARA_TEST_FAKE_PROC_DRIVER=13000 -DOPARA_TEST_FAKE_NO_DEVICE -shared $< -o $@ -static

$(WIN)/tests/test_cuda_nodevice.exe: | $(WIN)/tests/opara_fake_nodevice_cuda.dll

# -municode: the CLI's entry point is wmain (its arguments as UTF-8 whatever the code page)
$(WIN)/opara.exe: tools/opara.c $(wildcard tools/cli_*.c) tools/tool_util.h opara.h
	@mkdir -p $(dir $@)
	$(WIN_CC) $(WIN_CFLAGS) -municode -I. $< -o $@ $(WIN_LDLIBS)

# the ONNX node tests on the CPU backend (mk/conformance.mk's program; CONF_DATA as there)
$(WIN)/conformance.exe: tests/conformance/conformance.c tests/conformance/conf_util.h opara.h
	@mkdir -p $(dir $@)
	$(WIN_CC) $(WIN_CFLAGS) -I. -Itests $< -o $@ $(WIN_LDLIBS)

$(WIN)/demo.exe: examples/demo.c examples/googlenet.h opara.h
	@mkdir -p $(dir $@)
	$(WIN_CC) $(WIN_CFLAGS) -I. $< -o $@ $(WIN_LDLIBS)

test-windows: check-header
	@sh tools/setup.sh windows || echo "test-windows: could not install MinGW-w64 and Wine"
	@if command -v $(WIN_CC) >/dev/null 2>&1 && command -v $(WINE) >/dev/null 2>&1; then \
	    $(MAKE) --no-print-directory -j$(NPROC) $(WIN_TESTS) $(WIN_PROGS) $(BUILD)/opara && \
	    WINE='$(WINE)' WIN='$(WIN)' BUILD='$(BUILD)' CONF_DATA='$(CONF_DATA)' sh tools/test_windows.sh $(WIN_TESTS); \
	else \
	    echo "SKIP test-windows: $(WIN_CC) or $(WINE) is not installed (tools/setup.sh windows installs them)"; \
	fi
