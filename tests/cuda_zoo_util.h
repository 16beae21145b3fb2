/* cuda_zoo_util.h - what the CUDA tests on zoo models share (tests/test_cuda_zoo.c,
   tests/test_cuda_nvrtc.c): the emulator's libraries as defaults, its control entry point,
   deterministic inputs, output buffers and NMSE. Include after opara.h (with OPARA_IMPLEMENTATION). */
#ifndef CUDA_ZOO_UTIL_H
#define CUDA_ZOO_UTIL_H

#include <dlfcn.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifndef OPARA_EMU_LIB_DIR
#define OPARA_EMU_LIB_DIR "build/cudaemu"
#endif

#define ZOO_DIR "build/zoo"
#define ZOO_MAX_IO 8

/* The backend reads OPARA_CUDA_DRIVER / OPARA_CUBLAS / OPARA_CUDNN; default them to the emulator
   (a real GPU: set them to NVIDIA's libraries, or to their sonames). */
static inline void zoo_use_emulator_by_default(void) {
    setenv("OPARA_CUDA_DRIVER", OPARA_EMU_LIB_DIR "/libcuda.so.1", 0);
    setenv("OPARA_CUBLAS", OPARA_EMU_LIB_DIR "/libcublas.so", 0);
    setenv("OPARA_CUDNN", OPARA_EMU_LIB_DIR "/libcudnn.so", 0);
}

/* What `make test-gpu` asks of the zoo tests (mk/cudaemu.mk sets these unless they are set):
   OPARA_REQUIRE_ZOO=1: a missing zoo or zoo model is a failure, not a skip;
   OPARA_EXPECT_LIBS=cublas,cudnn: sessions must use cuBLAS for GEMMs and cuDNN for convolutions (a
   library that did not load, or that every op fell back from, would otherwise pass unnoticed);
   OPARA_CUDA_PRECISION=tf32: sessions compute with TF32 (opara_session_desc.precision), checked
   against the looser bound below. */
static inline int zoo_env_on(const char* var) {
    const char* e = getenv(var);
    return e && *e && strcmp(e, "0") != 0;
}
static inline int zoo_required(void) { return zoo_env_on("OPARA_REQUIRE_ZOO"); }

/* 1 when `lib` ("cublas", "cudnn") is named in OPARA_EXPECT_LIBS. */
static inline int zoo_expects(const char* lib) {
    const char* e = getenv("OPARA_EXPECT_LIBS");
    size_t n = strlen(lib);
    while (e && *e) {
        if (strncmp(e, lib, n) == 0 && (e[n] == 0 || e[n] == ',')) return 1;
        e = strchr(e, ',');
        if (e) ++e;
    }
    return 0;
}

static inline opara_precision zoo_precision(void) {
    const char* e = getenv("OPARA_CUDA_PRECISION");
    return e && strcmp(e, "tf32") == 0 ? OPARA_PRECISION_TF32 : OPARA_PRECISION_FP32;
}

/* Largest NMSE vs the CPU backend for what the session computes with (plan info's precision, "fp32" or
   "tf32"; OPARA_CUDA_ZOO_NMSE overrides it). FP32: 1e-8, the exact mode, where only the order of float
   sums differs. TF32: operands rounded to 10 mantissa bits add about 1.6e-7 of NMSE per layer of
   products, which deep networks amplify: on the emulated H100, whose fakes round as the hardware does,
   the zoo measured 4e-7 (BERT) to 4.9e-5 (ppocr_det); the bound stays 20x above that, 1e-3
   (docs/CUDA-BACKEND.md). */
static inline double zoo_nmse_max(const char* precision) {
    const char* e = getenv("OPARA_CUDA_ZOO_NMSE");
    if (e && *e) return atof(e);
    return precision && strcmp(precision, "tf32") == 0 ? 1e-3 : 1e-8;
}

/* The emulator's opara_emu_config once the driver is loaded; NULL on a real driver. */
typedef int (*zoo_emu_config_fn)(const char* key, long long value);
static inline zoo_emu_config_fn zoo_emu_config(void) {
    void* h = dlopen(getenv("OPARA_CUDA_DRIVER"), RTLD_NOW | RTLD_NOLOAD);
    zoo_emu_config_fn f = NULL;
    if (h) {
        *(void**)(&f) = dlsym(h, "opara_emu_config");
        dlclose(h);
    }
    return f;
}

typedef struct zoo_io {
    opara_tensor t[ZOO_MAX_IO];
    uint32_t n;
} zoo_io;

static inline size_t zoo_tensor_bytes(const opara_tensor* t) {
    size_t n = opara_dtype_size(t->dtype);
    int32_t d;
    for (d = 0; d < t->rank; ++d) n *= (size_t)t->dims[d];
    return n;
}

/* t shaped as ti with zeroed storage. */
static inline int zoo_tensor_alloc(opara_tensor* t, const opara_tensor_info* ti) {
    int32_t d;
    memset(t, 0, sizeof *t);
    t->name = ti->name, t->dtype = ti->dtype, t->rank = ti->rank;
    for (d = 0; d < ti->rank; ++d) t->dims[d] = ti->dims[d];
    t->data = calloc(zoo_tensor_bytes(t) ? zoo_tensor_bytes(t) : 1, 1);
    return t->data != NULL;
}

/* Deterministic inputs: floats in [-1, 1], integers 0 or 1 (valid indices, ids and attention masks). */
static inline int zoo_make_inputs(opara_session* s, zoo_io* in) {
    uint32_t i;
    in->n = opara_session_input_count(s);
    if (in->n > ZOO_MAX_IO) return 0;
    for (i = 0; i < in->n; ++i) {
        opara_tensor_info ti;
        opara_tensor* t = &in->t[i];
        size_t n, e;
        opara_session_input_info(s, i, &ti);
        if (!zoo_tensor_alloc(t, &ti)) return 0;
        n = zoo_tensor_bytes(t) / opara_dtype_size(t->dtype);
        for (e = 0; e < n; ++e) { /* other dtypes stay zero */
            if (t->dtype == OPARA_DTYPE_F32) ((float*)t->data)[e] = (float)sin((double)e * 0.37 + i);
            else if (t->dtype == OPARA_DTYPE_I64) ((int64_t*)t->data)[e] = (int64_t)((e * 7 + i) % 2);
            else if (t->dtype == OPARA_DTYPE_I32) ((int32_t*)t->data)[e] = (int32_t)((e * 7 + i) % 2);
        }
    }
    return 1;
}

/* Zeroed buffers for every output of s. */
static inline int zoo_make_outputs(opara_session* s, zoo_io* out) {
    uint32_t i;
    out->n = opara_session_output_count(s);
    if (out->n > ZOO_MAX_IO) return 0;
    for (i = 0; i < out->n; ++i) {
        opara_tensor_info ti;
        opara_session_output_info(s, i, &ti);
        if (!zoo_tensor_alloc(&out->t[i], &ti)) return 0;
    }
    return 1;
}

/* The reference every CUDA run is compared with: a CPU session of model at `batch` (0: 1), its
   deterministic inputs in `in` and its outputs in `ref`. 0 on failure (the runtime's or the
   session's last error says why). */
static inline int zoo_cpu_reference(opara_runtime* rt, const opara_model* model, int64_t batch, opara_session** cpu,
                                    zoo_io* in, zoo_io* ref) {
    opara_session_desc d;
    memset(&d, 0, sizeof d);
    d.backend = OPARA_BACKEND_CPU;
    d.batch_size = batch;
    return opara_session_create(rt, model, &d, cpu) == OPARA_OK && zoo_make_inputs(*cpu, in) &&
           zoo_make_outputs(*cpu, ref) && opara_session_run(*cpu, in->t, in->n, ref->t, ref->n) == OPARA_OK;
}

static inline void zoo_free_io(zoo_io* io) {
    uint32_t i;
    for (i = 0; i < io->n; ++i) free(io->t[i].data);
    io->n = 0;
}

/* sum (ref - got)^2 / sum ref^2 for float32; 0 or 1 (equal or not) for other types; NaN counts as 1. */
static inline double zoo_nmse(const opara_tensor* ref, const void* got) {
    size_t n = zoo_tensor_bytes(ref) / opara_dtype_size(ref->dtype), e;
    double num = 0, den = 0;
    if (ref->dtype != OPARA_DTYPE_F32) return memcmp(ref->data, got, zoo_tensor_bytes(ref)) == 0 ? 0.0 : 1.0;
    for (e = 0; e < n; ++e) {
        double a = ((const float*)ref->data)[e], b = ((const float*)got)[e];
        num += (a - b) * (a - b);
        den += a * a;
    }
    if (num != num) return 1.0;
    return den > 0 ? num / den : num;
}

/* Loads build/zoo/NAME.onnx (ppocr_det's symbolic image sides become 64x64). */
static inline opara_result zoo_load(opara_runtime* rt, const char* name, opara_model** model) {
    char path[256];
    const char* shapes[2];
    opara_onnx_options oo;
    snprintf(path, sizeof path, "%s/%s.onnx", ZOO_DIR, name);
    memset(&oo, 0, sizeof oo);
    oo.default_dim = 64;
    shapes[0] = "x=N,3,64,64", shapes[1] = NULL;
    if (strcmp(name, "ppocr_det") == 0) oo.input_shapes = shapes;
    return opara_model_load_onnx_file(rt, path, &oo, model);
}

#endif
