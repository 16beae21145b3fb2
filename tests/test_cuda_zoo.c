/* Zoo models (build/zoo, from `make zoo`) through the public session API on the CUDA backend
   (the emulator, or a real GPU with OPARA_CUDA_DRIVER) against the CPU backend: every mode
   (eager multi-stream, graph, sequential graph) under several emulator seeds, NMSE per output.

   The emulator executes kernels on the CPU thread by thread, so a large model takes minutes per
   run; `make test` runs the default list below, OPARA_CUDA_ZOO selects others:
     OPARA_CUDA_ZOO="name:batch:seeds,..."   e.g. "googlenet:1:5,resnet50:4:1"
     OPARA_CUDA_ZOO=all                      every model in build/zoo at batch 1 with 5 seeds, and
                                             the batch-4 subset (squeezenet, deepfm, googlenet)
   A model missing from build/zoo is a skip with the reason. */
#define _GNU_SOURCE
#define OPARA_IMPLEMENTATION
#include "opara.h"
#include "opara_test.h"

#include <dlfcn.h>
#include <math.h>

#ifndef OPARA_EMU_LIB_DIR
#define OPARA_EMU_LIB_DIR "build/cudaemu"
#endif

#define ZOO_DIR "build/zoo"
#define ZOO_MAX_IO 8
#define ZOO_NMSE_MAX 1e-8

static const char* const zoo_default = "squeezenet:1:5,deepfm:1:5,deepfm:4:5";
static const char* const zoo_all =
    "squeezenet:1:5,deepfm:1:5,googlenet:1:5,randwire:1:5,nasnet_mobile:1:5,resnet50:1:5,inception_v3:1:5,"
    "ppocr_det:1:5,t5_small_encoder:1:5,bert_base:1:5,squeezenet:4:5,deepfm:4:5,googlenet:4:5";

/* The backend reads OPARA_CUDA_DRIVER / OPARA_CUBLAS; default them to the emulator. */
static void use_emulator_by_default(void) {
    setenv("OPARA_CUDA_DRIVER", OPARA_EMU_LIB_DIR "/libcuda.so.1", 0);
    setenv("OPARA_CUBLAS", OPARA_EMU_LIB_DIR "/libcublas.so", 0);
    setenv("OPARA_CUDNN", OPARA_EMU_LIB_DIR "/libcudnn.so", 0);
}

typedef int (*emu_config_fn)(const char* key, long long value);
static emu_config_fn emu_config(void) {
    void* h = dlopen(getenv("OPARA_CUDA_DRIVER"), RTLD_NOW | RTLD_NOLOAD);
    emu_config_fn f = NULL;
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

static size_t tensor_bytes(const opara_tensor* t) {
    size_t n = opara_dtype_size(t->dtype);
    int32_t d;
    for (d = 0; d < t->rank; ++d) n *= (size_t)t->dims[d];
    return n;
}

/* Deterministic inputs: floats in [-1, 1], integers 0 or 1 (valid indices, ids and attention masks). */
static int make_inputs(opara_session* s, zoo_io* in) {
    uint32_t i;
    in->n = opara_session_input_count(s);
    if (in->n > ZOO_MAX_IO) return 0;
    for (i = 0; i < in->n; ++i) {
        opara_tensor_info ti;
        opara_tensor* t = &in->t[i];
        size_t n, e;
        int32_t d;
        opara_session_input_info(s, i, &ti);
        memset(t, 0, sizeof *t);
        t->name = ti.name, t->dtype = ti.dtype, t->rank = ti.rank;
        for (d = 0; d < ti.rank; ++d) t->dims[d] = ti.dims[d];
        n = tensor_bytes(t);
        t->data = malloc(n ? n : 1);
        if (!t->data) return 0;
        n /= opara_dtype_size(t->dtype);
        for (e = 0; e < n; ++e) {
            if (t->dtype == OPARA_DTYPE_F32) ((float*)t->data)[e] = (float)sin((double)e * 0.37 + i);
            else if (t->dtype == OPARA_DTYPE_I64) ((int64_t*)t->data)[e] = (int64_t)((e * 7 + i) % 2);
            else if (t->dtype == OPARA_DTYPE_I32) ((int32_t*)t->data)[e] = (int32_t)((e * 7 + i) % 2);
            else memset((char*)t->data + e * opara_dtype_size(t->dtype), 0, opara_dtype_size(t->dtype));
        }
    }
    return 1;
}

static int make_outputs(opara_session* s, zoo_io* out) {
    uint32_t i;
    out->n = opara_session_output_count(s);
    if (out->n > ZOO_MAX_IO) return 0;
    for (i = 0; i < out->n; ++i) {
        opara_tensor_info ti;
        opara_tensor* t = &out->t[i];
        int32_t d;
        opara_session_output_info(s, i, &ti);
        memset(t, 0, sizeof *t);
        t->name = ti.name, t->dtype = ti.dtype, t->rank = ti.rank;
        for (d = 0; d < ti.rank; ++d) t->dims[d] = ti.dims[d];
        t->data = calloc(tensor_bytes(t) ? tensor_bytes(t) : 1, 1);
        if (!t->data) return 0;
    }
    return 1;
}

static void free_io(zoo_io* io) {
    uint32_t i;
    for (i = 0; i < io->n; ++i) free(io->t[i].data);
    io->n = 0;
}

static double nmse_of(const opara_tensor* ref, const opara_tensor* got) {
    size_t n = tensor_bytes(ref) / opara_dtype_size(ref->dtype), e;
    double num = 0, den = 0;
    if (ref->dtype != OPARA_DTYPE_F32) return memcmp(ref->data, got->data, tensor_bytes(ref)) == 0 ? 0.0 : 1.0;
    for (e = 0; e < n; ++e) {
        double a = ((const float*)ref->data)[e], b = ((const float*)got->data)[e];
        num += (a - b) * (a - b);
        den += a * a;
    }
    if (num != num) return 1.0; /* NaN */
    return den > 0 ? num / den : num;
}

static const char* const mode_names[3] = {"eager", "graph", "seq-graph"};

/* One model at one batch: the CPU reference, then each CUDA mode with `seeds` emulator seeds. */
static void run_model(opara_test* T, const char* name, int batch, int seeds, const char* modes) {
    char path[256], shape_opt[64];
    const char* shapes[2];
    opara_onnx_options oo;
    opara_runtime* rt = NULL;
    opara_runtime_desc rd;
    opara_model* model = NULL;
    opara_session* cpu = NULL;
    opara_session_desc d;
    zoo_io in, ref;
    emu_config_fn cfg = emu_config();
    int mode;
    snprintf(path, sizeof path, "%s/%s.onnx", ZOO_DIR, name);
    memset(&rd, 0, sizeof rd);
    memset(&oo, 0, sizeof oo);
    memset(&in, 0, sizeof in);
    memset(&ref, 0, sizeof ref);
    oo.default_dim = 64; /* image sides that the model leaves symbolic (ppocr_det) */
    snprintf(shape_opt, sizeof shape_opt, "x=N,3,64,64");
    shapes[0] = shape_opt, shapes[1] = NULL;
    if (strcmp(name, "ppocr_det") == 0) oo.input_shapes = shapes;
    opara_runtime_create(&rd, &rt);
    if (opara_model_load_onnx_file(rt, path, &oo, &model) != OPARA_OK) {
        printf("SKIP %s: %s\n", name, opara_runtime_last_error(rt));
        opara_runtime_destroy(rt);
        return;
    }
    memset(&d, 0, sizeof d);
    d.backend = OPARA_BACKEND_CPU;
    d.batch_size = batch;
    if (opara_session_create(rt, model, &d, &cpu) != OPARA_OK || !make_inputs(cpu, &in) || !make_outputs(cpu, &ref) ||
        opara_session_run(cpu, in.t, in.n, ref.t, ref.n) != OPARA_OK) {
        OT_LOG("%s: CPU reference failed: %s %s", name, opara_runtime_last_error(rt), cpu ? opara_session_last_error(cpu) : "");
        CHECK(0);
        goto done;
    }
    for (mode = 0; mode < 3; ++mode) {
        opara_session* gpu = NULL;
        if (!strchr(modes, "egs"[mode])) continue;
        opara_plan_info info;
        double worst = 0;
        uint64_t t0 = opara__now_ns();
        int seed;
        d.backend = OPARA_BACKEND_CUDA;
        d.cuda_eager = mode == 0;
        d.strategy = mode == 2 ? OPARA_STRATEGY_SEQUENTIAL : OPARA_STRATEGY_OPARA;
        if (opara_session_create(rt, model, &d, &gpu) != OPARA_OK) {
            OT_LOG("%s batch %d %s: %s", name, batch, mode_names[mode], opara_runtime_last_error(rt));
            CHECK(0);
            continue;
        }
        opara_session_get_plan_info(gpu, &info);
        CHECK_STR(mode == 0 ? "eager" : mode == 1 ? "graph" : "sequential-graph", info.cuda_mode);
        for (seed = 1; seed <= seeds; ++seed) {
            zoo_io got;
            uint32_t i;
            memset(&got, 0, sizeof got);
            if (cfg) cfg("seed", 1000 + seed);
            if (!make_outputs(gpu, &got) || opara_session_run(gpu, in.t, in.n, got.t, got.n) != OPARA_OK) {
                OT_LOG("%s %s seed %d: %s", name, mode_names[mode], seed, opara_session_last_error(gpu));
                CHECK(0);
                free_io(&got);
                break;
            }
            for (i = 0; i < got.n; ++i) {
                double e = nmse_of(&ref.t[i], &got.t[i]);
                if (e > worst) worst = e;
                if (!(e <= ZOO_NMSE_MAX)) {
                    OT_LOG("%s batch %d %s seed %d output %s: NMSE %g", name, batch, mode_names[mode], seed,
                           ref.t[i].name, e);
                    CHECK(0);
                }
            }
            free_io(&got);
        }
        printf("%-16s batch %d %-9s %3u streams, %d seeds: worst NMSE vs CPU %.2e (%.1f s)\n", name, batch,
               mode_names[mode], info.n_streams, seeds, worst, (double)(opara__now_ns() - t0) * 1e-9);
        fflush(stdout);
        opara_session_destroy(gpu);
    }
done:
    free_io(&in);
    free_io(&ref);
    opara_session_destroy(cpu);
    opara_model_destroy(model);
    opara_runtime_destroy(rt);
}

OT_TEST(zoo_models_match_the_cpu_backend_in_every_mode) {
    const char* list = getenv("OPARA_CUDA_ZOO");
    char buf[1024], *item, *save = NULL;
    FILE* f;
    char why[512];
    use_emulator_by_default();
    if (!opara__cuda_available(NULL, why, sizeof why)) SKIP("no CUDA driver: %s", why);
    f = fopen(ZOO_DIR "/zoo.tsv", "r");
    if (!f) SKIP("no zoo in %s (make zoo)", ZOO_DIR);
    fclose(f);
    if (!list || !*list) list = zoo_default;
    else if (strcmp(list, "all") == 0) list = zoo_all;
    snprintf(buf, sizeof buf, "%s", list);
    for (item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        char name[64], modes[8] = "egs";
        int batch = 1, seeds = 5;
        if (sscanf(item, "%63[^:]:%d:%d:%7s", name, &batch, &seeds, modes) < 1) continue;
        run_model(T, name, batch, seeds, modes);
    }
}

static const opara_test_case tests[] = {
    OT_CASE(zoo_models_match_the_cpu_backend_in_every_mode),
};

int main(int argc, char** argv) { return opara_test_main(argc, argv, tests, OT_COUNT(tests)); }
