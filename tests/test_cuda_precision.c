/* Precision and "what ran where" of the CUDA backend, through the public session API, against the
   CPU backend (docs/CUDA-BACKEND.md), on the CUDA emulator (or a real GPU with OPARA_CUDA_DRIVER /
   OPARA_CUBLAS / OPARA_CUDNN):
   - on the emulated H100 (compute capability 9.0, whose cuBLAS/cuDNN fakes round the operands to TF32
     whenever NVIDIA's documentation lets the library use TF32 tensor cores), an FP32 session matches
     the CPU backend exactly (NMSE <= 1e-10 on a convolution and on an independent GEMM) and a TF32
     session differs measurably on both (above 1e-10, below the TF32 bound 1e-5): a math mode left at
     the library's default on either cuDNN descriptors or cuBLAS handles fails one of them;
   - TF32 asked of a Turing device (7.5) is FP32 (plan info says so, results exact);
   - plan info names the precision, the GEMM and Conv paths with their counts and the workspaces;
   - a cuDNN whose convolution sub-library is missing (a copy of the fake's main library alone): every
     convolution runs on our kernel and the log names cuDNN's status, results exact;
   - a library failing at run time reports its own status (not a driver code).
   On a real GPU the emulator-only parts skip and the bounds are FP32 1e-8, TF32 1e-5 (a library
   may choose FP32 kernels for tiny problems even when TF32 is allowed). */
#define _GNU_SOURCE
#define OPARA_IMPLEMENTATION
#include "opara.h"
#include "opara_test.h"

#include <dlfcn.h>
#include <math.h>
#include <unistd.h>

#include "cuda_test_env.h"

#define NMSE_EXACT 1e-10 /* exact FP32 on the emulator: only summation order differs from the CPU */
#define NMSE_TF32 1e-5   /* two layers of TF32 products: about 2 x 1.6e-7, with a safety factor of 30 */

/* ---- the emulator's control API (absent on a real driver) ---------------------------------------- */

typedef int (*emu_config_fn)(const char* key, long long value);
typedef int (*emu_config_str_fn)(const char* key, const char* value);

static void* driver_handle(void) {
    void* h = dlopen(driver_path(), RTLD_NOW | RTLD_NOLOAD);
    return h ? h : dlopen(driver_path(), RTLD_NOW);
}
static emu_config_fn emu_config(void) {
    void* h = driver_handle();
    emu_config_fn f = NULL;
    if (h) *(void**)(&f) = dlsym(h, "opara_emu_config"), dlclose(h);
    return f;
}
static emu_config_str_fn emu_config_str(void) {
    void* h = driver_handle();
    emu_config_str_fn f = NULL;
    if (h) *(void**)(&f) = dlsym(h, "opara_emu_config_str"), dlclose(h);
    return f;
}

/* The public API reads the libraries from OPARA_CUDA_DRIVER / OPARA_CUBLAS / OPARA_CUDNN: default them
   to the emulator's. */
static void default_library_env(void) {
    setenv("OPARA_CUDA_DRIVER", driver_path(), 0);
    setenv("OPARA_CUBLAS", cublas_path(), 0);
    setenv("OPARA_CUDNN", cudnn_path(), 0);
}

/* ---- the model: a convolution chain and an independent GEMM ------------------------------------- */

static unsigned rng = 2024u;
static float frand(void) {
    rng = rng * 1664525u + 1013904223u;
    return (float)((rng >> 8) & 0xffff) / 32768.0f - 1.0f;
}

static void weight(opara_builder* b, const char* name, int32_t rank, int64_t d0, int64_t d1, int64_t d2, int64_t d3) {
    int64_t dims[4];
    size_t n = 1, i;
    float* data;
    int32_t k;
    dims[0] = d0, dims[1] = d1, dims[2] = d2, dims[3] = d3;
    for (k = 0; k < rank; ++k) n *= (size_t)dims[k];
    data = (float*)malloc(n * sizeof(float));
    if (!data) return;
    for (i = 0; i < n; ++i) data[i] = 0.3f * frand();
    opara_builder_add_constant(b, name, OPARA_DTYPE_F32, rank, dims, data, n * sizeof(float));
    free(data);
}

/* x [2,8,10,10] -> Relu(Conv3x3 pad 1 (8 -> 16) + b1) -> Conv1x1 (16 -> 8) + b2 = c;  u [4,64] -> Gemm(W [64,32]) + bg = g.
   The first convolution takes its algorithm from cuDNN's heuristics (bias + Relu), the second is the
   bias-only fused call whose algorithm is fixed (IMPLICIT_PRECOMP_GEMM): its precision rests on the
   descriptor's math type alone. */
static opara_model* build_model(opara_runtime* rt) {
    opara_builder* b = NULL;
    opara_model* m = NULL;
    int64_t xd[4] = {2, 8, 10, 10}, ud[2] = {4, 64}, pads[4] = {1, 1, 1, 1};
    const char *c1[3] = {"x", "w1", "b1"}, *c2[3] = {"a", "w2", "b2"}, *gm[3] = {"u", "wg", "bg"}, *a = "a", *c = "c", *g = "g";
    opara_attr at[2];
    if (opara_builder_create(rt, &b) != OPARA_OK) return NULL;
    opara_builder_add_input(b, "x", OPARA_DTYPE_F32, 4, xd);
    opara_builder_add_input(b, "u", OPARA_DTYPE_F32, 2, ud);
    weight(b, "w1", 4, 16, 8, 3, 3), weight(b, "b1", 1, 16, 0, 0, 0), weight(b, "w2", 4, 8, 16, 1, 1), weight(b, "b2", 1, 8, 0, 0, 0);
    weight(b, "wg", 2, 64, 32, 0, 0), weight(b, "bg", 1, 32, 0, 0, 0);
    memset(at, 0, sizeof at);
    at[0].name = "pads", at[0].type = OPARA_ATTR_INTS, at[0].count = 4, at[0].v.ints = pads;
    at[1].name = "activation", at[1].type = OPARA_ATTR_STRING, at[1].v.s = "Relu"; /* as the importer fuses it */
    opara_builder_add_node(b, "Conv", "conv3x3", 3, c1, 1, &a, 2, at);
    opara_builder_add_node(b, "Conv", "conv1x1", 3, c2, 1, &c, 0, NULL);
    opara_builder_add_node(b, "Gemm", "fc", 3, gm, 1, &g, 0, NULL);
    opara_builder_add_output(b, "c");
    opara_builder_add_output(b, "g");
    if (opara_builder_finish(b, &m) != OPARA_OK) m = NULL;
    opara_builder_destroy(b);
    return m;
}

#define N_X (2 * 8 * 10 * 10)
#define N_U (4 * 64)
#define N_C (2 * 8 * 10 * 10)
#define N_G (4 * 32)

typedef struct data {
    float x[N_X], u[N_U];
    float ref_c[N_C], ref_g[N_G];
} data;

static void tensor(opara_tensor* t, const char* name, int32_t rank, int64_t d0, int64_t d1, int64_t d2, int64_t d3, float* p) {
    memset(t, 0, sizeof *t);
    t->name = name, t->dtype = OPARA_DTYPE_F32, t->rank = rank, t->data = p;
    t->dims[0] = d0, t->dims[1] = d1, t->dims[2] = d2, t->dims[3] = d3;
}

/* Runs a session; outputs into c and g. */
static opara_result run(opara_session* s, data* d, float* c, float* g) {
    opara_tensor in[2], out[2];
    tensor(&in[0], "x", 4, 2, 8, 10, 10, d->x), tensor(&in[1], "u", 2, 4, 64, 0, 0, d->u);
    tensor(&out[0], "c", 4, 2, 8, 10, 10, c), tensor(&out[1], "g", 2, 4, 32, 0, 0, g);
    return opara_session_run(s, in, 2, out, 2);
}

static int cpu_reference(opara_runtime* rt, opara_model* m, data* d) {
    opara_session_desc sd;
    opara_session* s = NULL;
    int i, ok;
    for (i = 0; i < N_X; ++i) d->x[i] = (float)sin(0.37 * i);
    for (i = 0; i < N_U; ++i) d->u[i] = (float)cos(0.23 * i);
    memset(&sd, 0, sizeof sd);
    sd.backend = OPARA_BACKEND_CPU, sd.builtin_gemm = 1;
    if (opara_session_create(rt, m, &sd, &s) != OPARA_OK) return 0;
    ok = run(s, d, d->ref_c, d->ref_g) == OPARA_OK;
    opara_session_destroy(s);
    return ok;
}

static double nmse(const float* ref, const float* got, int n) {
    double num = 0, den = 0;
    int i;
    for (i = 0; i < n; ++i) {
        num += ((double)ref[i] - got[i]) * ((double)ref[i] - got[i]);
        den += (double)ref[i] * ref[i];
    }
    return num != num ? 1.0 : den > 0 ? num / den : num;
}

typedef struct log_capture {
    char text[4096];
    int warnings;
} log_capture;

static void capture(opara_log_level level, opara_log_item item, const char* message, void* user) {
    log_capture* c = (log_capture*)user;
    size_t at = strlen(c->text);
    if (level == OPARA_LOG_WARN && item == OPARA_LOGITEM_BACKEND_FALLBACK) c->warnings++;
    if (at + strlen(message) + 2 < sizeof c->text) opara__format(c->text + at, sizeof c->text - at, "%s\n", message);
}

/* One CUDA session with `precision`: its plan info and the NMSE of each output against the CPU. */
typedef struct outcome {
    opara_plan_info info;
    char precision[8], conv[64], gemm[64], libraries[2048];
    double e_conv, e_gemm;
    int ok;
} outcome;

static outcome cuda_outcome(opara_test* T, opara_precision precision, log_capture* logs) {
    outcome o;
    opara_runtime_desc rd;
    opara_runtime* rt = NULL;
    opara_model* m;
    opara_session_desc sd;
    opara_session* s = NULL;
    static data d;
    static float c[N_C], g[N_G];
    memset(&o, 0, sizeof o);
    memset(&rd, 0, sizeof rd);
    if (logs) {
        memset(logs, 0, sizeof *logs);
        rd.logger.func = capture, rd.logger.user_data = logs, rd.logger.max_level = OPARA_LOG_INFO;
    }
    opara_runtime_create(&rd, &rt);
    rng = 2024u;
    m = build_model(rt);
    if (!m || !cpu_reference(rt, m, &d)) {
        OT_LOG("model or CPU reference: %s", opara_runtime_last_error(rt));
        CHECK(0);
    } else {
        memset(&sd, 0, sizeof sd);
        sd.backend = OPARA_BACKEND_CUDA, sd.precision = precision;
        if (opara_session_create(rt, m, &sd, &s) != OPARA_OK) {
            OT_LOG("CUDA session: %s", opara_runtime_last_error(rt));
            CHECK(0);
        } else if (run(s, &d, c, g) != OPARA_OK) {
            OT_LOG("run: %s", opara_session_last_error(s));
            CHECK(0);
        } else {
            opara_session_get_plan_info(s, &o.info);
            opara__format(o.precision, sizeof o.precision, "%s", o.info.precision);
            opara__format(o.conv, sizeof o.conv, "%s", o.info.conv);
            opara__format(o.gemm, sizeof o.gemm, "%s", o.info.gemm);
            opara__format(o.libraries, sizeof o.libraries, "%s", o.info.libraries);
            o.e_conv = nmse(d.ref_c, c, N_C);
            o.e_gemm = nmse(d.ref_g, g, N_G);
            o.ok = 1;
        }
    }
    opara_session_destroy(s);
    opara_model_destroy(m);
    opara_runtime_destroy(rt);
    return o;
}

static const char* const precision_names[2] = {"fp32", "tf32"};

/* ---- tests ------------------------------------------------------------------------------------------ */

OT_TEST(fp32_is_exact_and_tf32_differs_on_the_emulated_h100) {
    char why[512];
    emu_config_str_fn dev;
    outcome o[2];
    int p;
    if (!opara__cuda_available(driver_path(), why, sizeof why)) SKIP("no CUDA driver: %s", why);
    default_library_env();
    dev = emu_config_str();
    if (!dev) SKIP("the TF32 check needs the emulator's H100 profile (a real GPU: see fp32_and_tf32_within_bounds)");
    REQUIRE(dev("device", "h100") == 0);
    for (p = 0; p < 2; ++p) {
        o[p] = cuda_outcome(T, (opara_precision)p, NULL);
        if (!o[p].ok) continue;
        CHECK_STR(precision_names[p], o[p].precision);
        CHECK_STR("cuDNN", o[p].conv);
        CHECK_STR("cuBLAS", o[p].gemm);
        CHECK_EQ(2, o[p].info.n_conv);
        CHECK_EQ(2, o[p].info.n_conv_library);
        CHECK(o[p].info.workspace_bytes >= ((uint64_t)32 << 20)); /* cuBLAS on Hopper: 32 MiB */
        /* the libraries that served it, with versions and the files mapped */
        CHECK(strncmp(o[p].libraries, "CUDA driver ", 12) == 0 && strstr(o[p].libraries, "libcuda.so.1"));
        CHECK(strstr(o[p].libraries, "; cuBLAS 13.") && strstr(o[p].libraries, "/libcublas.so"));
        CHECK(strstr(o[p].libraries, "; cuDNN 9.19.0 ") && strstr(o[p].libraries, "/libcudnn.so"));
        if (p == 0) printf("libraries: %s\n", o[p].libraries);
        printf("emulated H100, %s: NMSE vs CPU: convolutions %.2e, GEMM %.2e\n", precision_names[p], o[p].e_conv, o[p].e_gemm);
    }
    dev("device", "");
    if (!o[0].ok || !o[1].ok) return;
    CHECK(o[0].e_conv <= NMSE_EXACT); /* FMA_MATH on every descriptor: no TF32 */
    CHECK(o[0].e_gemm <= NMSE_EXACT); /* DEFAULT_MATH on every handle: no TF32 */
    CHECK(o[1].e_conv > NMSE_EXACT && o[1].e_conv <= NMSE_TF32);
    CHECK(o[1].e_gemm > NMSE_EXACT && o[1].e_gemm <= NMSE_TF32);
}

OT_TEST(tf32_on_a_device_without_it_is_fp32) {
    char why[512];
    emu_config_str_fn dev;
    log_capture logs;
    outcome o;
    if (!opara__cuda_available(driver_path(), why, sizeof why)) SKIP("no CUDA driver: %s", why);
    default_library_env();
    dev = emu_config_str();
    if (!dev) SKIP("needs the emulator's Turing profile");
    REQUIRE(dev("device", "rtx2080super") == 0);
    o = cuda_outcome(T, OPARA_PRECISION_TF32, &logs);
    dev("device", "");
    if (!o.ok) return;
    CHECK_STR("fp32", o.precision);
    CHECK(o.e_conv <= NMSE_EXACT && o.e_gemm <= NMSE_EXACT);
    CHECK(o.info.workspace_bytes >= ((uint64_t)4 << 20) && o.info.workspace_bytes < ((uint64_t)32 << 20));
    CHECK(strstr(logs.text, "no TF32 tensor cores") != NULL);
}

/* Whatever the device (a real GPU included): FP32 within the models' exactness bound, TF32 within its
   bound, and plan info saying which. */
OT_TEST(fp32_and_tf32_within_bounds) {
    char why[512];
    int p;
    if (!opara__cuda_available(driver_path(), why, sizeof why)) SKIP("no CUDA driver: %s", why);
    default_library_env();
    for (p = 0; p < 2; ++p) {
        outcome o = cuda_outcome(T, (opara_precision)p, NULL);
        double bound;
        if (!o.ok) continue;
        bound = strcmp(o.precision, "tf32") == 0 ? NMSE_TF32 : 1e-8;
        CHECK(p == 1 || strcmp(o.precision, "fp32") == 0);
        CHECK(o.e_conv <= bound && o.e_gemm <= bound);
        printf("%s asked, %s used (Conv %s %u/%u, GEMM %s, workspaces %.1f MiB): NMSE %.2e / %.2e\n", precision_names[p],
               o.precision, o.conv, o.info.n_conv_library, o.info.n_conv, o.gemm,
               (double)o.info.workspace_bytes / 1048576.0, o.e_conv, o.e_gemm);
    }
}

static int copy_file(const char* from, const char* to) {
    char buf[65536];
    size_t n;
    int ok = 1;
    FILE *in = fopen(from, "rb"), *out = in ? fopen(to, "wb") : NULL;
    if (!in || !out) ok = 0;
    while (ok && (n = fread(buf, 1, sizeof buf, in)) > 0) ok = fwrite(buf, 1, n, out) == n;
    if (in) fclose(in);
    if (out && fclose(out) != 0) ok = 0;
    return ok;
}

/* cuDNN 9 loads libcudnn_cnn.so.9 at the first convolution call; without it every convolution
   descriptor fails. The backend then runs each convolution on its own kernel and says why (the
   loader already, when its probe sees it; else the lowering, per convolution). */
OT_TEST(missing_cudnn_sublibrary_falls_back_per_convolution) {
    char why[512], dir[] = "/tmp/opara_precision_XXXXXX", lib[1200];
    char *saved_llp = NULL, *saved_dnn = NULL;
    const char* e;
    log_capture logs;
    outcome o;
    if (!opara__cuda_available(driver_path(), why, sizeof why)) SKIP("no CUDA driver: %s", why);
    default_library_env();
    if (!emu_config_str()) SKIP("needs the emulator's cuDNN fake (a copy of its main library alone)");
    REQUIRE(mkdtemp(dir) != NULL);
    snprintf(lib, sizeof lib, "%s/libcudnn.so.9", dir);
    REQUIRE(copy_file(cudnn_path(), lib));
    if ((e = getenv("LD_LIBRARY_PATH")) != NULL) saved_llp = strdup(e);
    if ((e = getenv("OPARA_CUDNN")) != NULL) saved_dnn = strdup(e);
    unsetenv("LD_LIBRARY_PATH"); /* the fake looks for its sub-library there and next to itself */
    setenv("OPARA_CUDNN", lib, 1);
    o = cuda_outcome(T, OPARA_PRECISION_FP32, &logs);
    if (saved_llp) setenv("LD_LIBRARY_PATH", saved_llp, 1);
    if (saved_dnn) setenv("OPARA_CUDNN", saved_dnn, 1);
    else unsetenv("OPARA_CUDNN");
    free(saved_llp), free(saved_dnn);
    unlink(lib);
    rmdir(dir);
    if (!o.ok) return;
    CHECK_STR("opara_conv2d_f32", o.conv);
    CHECK_EQ(2, o.info.n_conv);
    CHECK_EQ(0, o.info.n_conv_library);
    /* the loader's probe of a convolution call declines such a cuDNN at load (an INFO naming the status);
       past it, each convolution would fall back with a WARN of its own (tests/test_cuda_lower.c) */
    CHECK(strstr(logs.text, "CUDNN_STATUS_NOT_SUPPORTED_SUBLIBRARY_UNAVAILABLE") != NULL);
    CHECK(logs.warnings == 0 || (logs.warnings == 2 && strstr(logs.text, "'conv3x3'") && strstr(logs.text, "'conv1x1'")));
    CHECK(o.e_conv <= NMSE_EXACT && o.e_gemm <= NMSE_EXACT);
    OT_LOG("%s", logs.text);
}

/* The emulator's fakes refuse misaligned pointers with their own status; a run hitting that reports
   the library's status, not a driver code. */
OT_TEST(a_library_failing_at_run_time_reports_its_status) {
    char why[512];
    opara_runtime* rt = NULL;
    opara_model* m;
    opara_session_desc sd;
    opara_session* s = NULL;
    emu_config_fn cfg;
    static data d;
    static float c[N_C], g[N_G];
    const char* err;
    if (!opara__cuda_available(driver_path(), why, sizeof why)) SKIP("no CUDA driver: %s", why);
    default_library_env();
    cfg = emu_config();
    if (!cfg) SKIP("needs the emulator's pointer-alignment rule");
    opara_runtime_create(NULL, &rt);
    m = build_model(rt);
    REQUIRE(m && cpu_reference(rt, m, &d));
    memset(&sd, 0, sizeof sd);
    sd.backend = OPARA_BACKEND_CUDA, sd.cuda_eager = 1, sd.strategy = OPARA_STRATEGY_SEQUENTIAL;
    REQUIRE(opara_session_create(rt, m, &sd, &s) == OPARA_OK);
    CHECK_EQ(OPARA_OK, run(s, &d, c, g));
    cfg("lib_align", (long long)1 << 62); /* no device pointer is aligned to that */
    CHECK(run(s, &d, c, g) != OPARA_OK);
    cfg("lib_align", 16);
    err = opara_session_last_error(s);
    CHECK(strstr(err, "CUDNN_STATUS_") != NULL || strstr(err, "CUBLAS_STATUS_") != NULL);
    CHECK(strstr(err, "CUDA_ERROR_LAUNCH_FAILED") == NULL);
    OT_LOG("%s", err);
    opara_session_destroy(s);
    opara_model_destroy(m);
    opara_runtime_destroy(rt);
}

static const opara_test_case tests[] = {
    OT_CASE(fp32_is_exact_and_tf32_differs_on_the_emulated_h100),
    OT_CASE(tf32_on_a_device_without_it_is_fp32),
    OT_CASE(fp32_and_tf32_within_bounds),
    OT_CASE(missing_cudnn_sublibrary_falls_back_per_convolution),
    OT_CASE(a_library_failing_at_run_time_reports_its_status),
};

int main(int argc, char** argv) { return opara_test_main(argc, argv, tests, OT_COUNT(tests)); }
