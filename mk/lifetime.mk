# mk/lifetime.mk - tests/test_lifetime.c: sessions outliving their model, the host's OpenBLAS thread
# count (a fake OpenBLAS built here, tests/fake_openblas.c, soname libopenblas.so.0), AUTO's fallback
# and CUDA sessions across threads on the emulator. Its ThreadSanitizer build runs in `make test-tsan`
# (mk/cpu.mk).
LIFETIME_EMU := $(BUILD)/cudaemu
LIFETIME_EMU_LIBS := $(LIFETIME_EMU)/libcuda.so.1 $(LIFETIME_EMU)/libcublas.so $(LIFETIME_EMU)/libcudnn.so

$(BUILD)/tests/libfake_openblas.so: tests/fake_openblas.c tests/fake_blas_sgemm.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -fPIC -shared -Wl,-soname,libopenblas.so.0 $< -o $@ $(LDFLAGS)

$(BUILD)/tests/test_lifetime: private CFLAGS += -DOPARA_EMU_LIB_DIR='"$(abspath $(LIFETIME_EMU))"' \
    -DFAKE_OPENBLAS_PATH='"$(abspath $(BUILD)/tests/libfake_openblas.so)"'
$(BUILD)/tests/test_lifetime: | $(BUILD)/tests/libfake_openblas.so $(LIFETIME_EMU_LIBS)
