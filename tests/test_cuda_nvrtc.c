/* Every kernel file of src/kernels compiles with the real NVRTC (loaded with dlopen through
   opara_cuda.h, no GPU needed) for compute_75, 80, 86, 87, 89 and 90, and the PTX assembles with
   the toolkit's ptxas for the same sm_XX with no local-memory spills and no stack frame.
   End to end: a CUDA session with use_nvrtc (the backend compiles every kernel file with the real
   NVRTC for the device's exact compute capability and loads that PTX instead of the embedded one)
   runs zoo models on the emulator (or a real GPU with OPARA_CUDA_DRIVER) in graph and eager mode
   and matches the CPU backend.
   Skips with the reason when NVRTC or ptxas is not installed (OPARA_CUDA_HOME, default
   /usr/local/cuda), or the zoo or a driver is missing. Run from the repository root (make test does). */
#define _GNU_SOURCE
#define OPARA_IMPLEMENTATION
#include "opara.h"
#include "opara_test.h"

#include <dirent.h>
#include <dlfcn.h>
#include <unistd.h>

#include "cuda_zoo_util.h"

static const int archs[] = {75, 80, 86, 87, 89, 90};

static const char* cuda_home(void) {
    const char* h = getenv("OPARA_CUDA_HOME");
    return h && *h ? h : "/usr/local/cuda";
}

static char* slurp(const char* path) {
    FILE* f = fopen(path, "rb");
    char* buf;
    long n;
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = (char*)malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    if (buf) buf[n] = 0;
    fclose(f);
    return buf;
}

/* Kernel file names in src/kernels, sorted; returns the count (at most cap). */
static int list_kernel_files(char names[][64], int cap) {
    DIR* d = opendir("src/kernels");
    struct dirent* e;
    int n = 0, i, j;
    if (!d) return 0;
    while ((e = readdir(d)) != NULL && n < cap) {
        size_t len = strlen(e->d_name);
        if (len > 3 && len < 60 && strcmp(e->d_name + len - 3, ".cu") == 0) strcpy(names[n++], e->d_name);
    }
    closedir(d);
    for (i = 1; i < n; ++i)
        for (j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; --j) {
            char t[64];
            strcpy(t, names[j]);
            strcpy(names[j], names[j - 1]);
            strcpy(names[j - 1], t);
        }
    return n;
}

static int load_nvrtc(opara_cuda_nvrtc* nv, char* err, size_t cap) {
    char path[600];
    if (opara_cuda_nvrtc_load(nv, NULL, err, cap) == OPARA_CUDA_LOAD_OK) return 1;
    snprintf(path, sizeof path, "%s/lib64/libnvrtc.so.13", cuda_home());
    return opara_cuda_nvrtc_load(nv, path, err, cap) == OPARA_CUDA_LOAD_OK;
}

/* Compiles src for compute_<arch>; returns malloc'ed PTX or NULL with the log in log. */
static char* nvrtc_ptx(opara_cuda_nvrtc* nv, const char* src, const char* name, const char* header, int arch,
                       char* log, size_t log_cap) {
    opara_nvrtcProgram prog = NULL;
    const char* headers[1];
    const char* include_names[1] = {"opara_kernel.h"};
    char opt_arch[64];
    const char* opts[2];
    size_t n = 0;
    char* ptx = NULL;
    opara_nvrtcResult r;
    headers[0] = header;
    snprintf(opt_arch, sizeof opt_arch, "--gpu-architecture=compute_%d", arch);
    opts[0] = opt_arch;
    opts[1] = "--std=c++11";
    log[0] = 0;
    if (nv->nvrtcCreateProgram(&prog, src, name, 1, headers, include_names) != OPARA_NVRTC_SUCCESS) {
        snprintf(log, log_cap, "nvrtcCreateProgram failed");
        return NULL;
    }
    r = nv->nvrtcCompileProgram(prog, 2, opts);
    if (r != OPARA_NVRTC_SUCCESS) {
        size_t ls = 0;
        nv->nvrtcGetProgramLogSize(prog, &ls);
        if (ls > 0 && ls < log_cap) nv->nvrtcGetProgramLog(prog, log);
        else snprintf(log, log_cap, "%s", nv->nvrtcGetErrorString(r));
    } else if (nv->nvrtcGetPTXSize(prog, &n) == OPARA_NVRTC_SUCCESS && (ptx = (char*)malloc(n + 1)) != NULL) {
        if (nv->nvrtcGetPTX(prog, ptx) != OPARA_NVRTC_SUCCESS) {
            free(ptx);
            ptx = NULL;
        }
    }
    nv->nvrtcDestroyProgram(&prog);
    return ptx;
}

/* Runs ptxas -v on the PTX; returns 0 and the verbose output in out, or -1. */
static int run_ptxas(const char* ptx, int arch, char* out, size_t cap) {
    char ptx_path[] = "/tmp/opara_nvrtc_XXXXXX";
    char cmd[1024];
    int fd = mkstemp(ptx_path);
    FILE* p;
    size_t used = 0, len = strlen(ptx);
    int rc;
    if (fd < 0) return -1;
    if (write(fd, ptx, len) != (ssize_t)len) {
        close(fd);
        unlink(ptx_path);
        return -1;
    }
    close(fd);
    snprintf(cmd, sizeof cmd, "%s/bin/ptxas -v -arch=sm_%d %s -o /dev/null 2>&1", cuda_home(), arch, ptx_path);
    p = popen(cmd, "r");
    if (!p) {
        unlink(ptx_path);
        return -1;
    }
    while (used + 1 < cap) {
        size_t got = fread(out + used, 1, cap - 1 - used, p);
        if (got == 0) break;
        used += got;
    }
    out[used] = 0;
    rc = pclose(p);
    unlink(ptx_path);
    return rc == 0 ? 0 : -1;
}

/* Counts "N bytes spill stores"/"spill loads"/"stack frame" lines with N > 0. */
static int count_local_memory(const char* v, char* first, size_t cap) {
    const char* keys[] = {" bytes stack frame", " bytes spill stores", " bytes spill loads"};
    int bad = 0, k;
    first[0] = 0;
    for (k = 0; k < 3; ++k) {
        const char* s = v;
        while ((s = strstr(s, keys[k])) != NULL) {
            const char* d = s;
            while (d > v && d[-1] >= '0' && d[-1] <= '9') --d;
            if (atoi(d) > 0) {
                if (!bad) snprintf(first, cap, "%.*s", (int)(s - d) + (int)strlen(keys[k]), d);
                ++bad;
            }
            s += strlen(keys[k]);
        }
    }
    return bad;
}

OT_TEST(every_kernel_compiles_with_nvrtc_and_ptxas_without_spills) {
    opara_cuda_nvrtc nv;
    char err[2048], names[32][64], path[4096];
    int n_files, f, a, compiled = 0;
    char* header;
    memset(&nv, 0, sizeof nv);
    snprintf(path, sizeof path, "%s/bin/ptxas", cuda_home());
    if (access(path, X_OK) != 0) SKIP("ptxas not found at %s (set OPARA_CUDA_HOME)", path);
    if (!load_nvrtc(&nv, err, sizeof err)) SKIP("NVRTC not loadable: %s", err);
    header = slurp("src/kernels/opara_kernel.h");
    n_files = list_kernel_files(names, 32);
    if (!header || n_files == 0) {
        free(header);
        opara_cuda_nvrtc_unload(&nv);
        REQUIRE(!"src/kernels not found: run from the repository root");
    }
    for (f = 0; f < n_files; ++f) {
        char* src;
        snprintf(path, sizeof path, "src/kernels/%s", names[f]);
        src = slurp(path);
        if (!src) {
            CHECK(!"cannot read kernel file");
            OT_LOG("%s", path);
            continue;
        }
        for (a = 0; a < (int)(sizeof archs / sizeof archs[0]); ++a) {
            static char log[1 << 16], verbose[1 << 16];
            char bad[128];
            char* ptx = nvrtc_ptx(&nv, src, names[f], header, archs[a], log, sizeof log);
            if (!ptx) {
                OT_LOG("NVRTC compute_%d %s: %.1500s", archs[a], names[f], log);
                CHECK(0);
                continue;
            }
            if (run_ptxas(ptx, archs[a], verbose, sizeof verbose) != 0) {
                OT_LOG("ptxas sm_%d %s: %.1500s", archs[a], names[f], verbose);
                CHECK(0);
            } else if (count_local_memory(verbose, bad, sizeof bad) > 0) {
                OT_LOG("sm_%d %s uses local memory: %s", archs[a], names[f], bad);
                CHECK(0);
            } else {
                ++compiled;
            }
            free(ptx);
        }
        free(src);
    }
    CHECK_EQ((long long)n_files * (long long)(sizeof archs / sizeof archs[0]), compiled);
    printf("compiled %d kernel files x %d architectures with %s\n", n_files, (int)(sizeof archs / sizeof archs[0]),
           nv.path);
    free(header);
    opara_cuda_nvrtc_unload(&nv);
}

/* Counts the backend's fallbacks to the embedded PTX (a kernel file NVRTC did not compile). */
typedef struct fallback_log {
    int count;
    char first[512];
} fallback_log;
static void on_log(opara_log_level level, opara_log_item item, const char* message, void* user) {
    fallback_log* f = (fallback_log*)user;
    (void)level;
    if (item != OPARA_LOGITEM_BACKEND_FALLBACK) return;
    if (f->count++ == 0) snprintf(f->first, sizeof f->first, "%s", message);
}

/* One zoo model: CPU reference, then a CUDA session whose kernels NVRTC compiled, in one mode. */
static void nvrtc_model(opara_test* T, const char* nvrtc_path, const char* name, opara__cuda_mode mode) {
    opara_runtime_desc rd;
    opara_runtime* rt = NULL;
    opara_model* model = NULL;
    opara_session* cpu = NULL;
    opara__cuda_options o;
    opara__cuda_session* gpu = NULL;
    opara__cuda_info info;
    fallback_log log;
    zoo_io in, ref, got;
    const void* inputs[ZOO_MAX_IO];
    void* outputs[ZOO_MAX_IO];
    double worst = 0;
    uint32_t i;
    memset(&rd, 0, sizeof rd);
    memset(&log, 0, sizeof log);
    memset(&in, 0, sizeof in), memset(&ref, 0, sizeof ref), memset(&got, 0, sizeof got);
    rd.logger.func = on_log;
    rd.logger.user_data = &log;
    rd.logger.max_level = OPARA_LOG_DEBUG;
    REQUIRE(opara_runtime_create(&rd, &rt) == OPARA_OK);
    if (zoo_load(rt, name, &model) != OPARA_OK) {
        printf("SKIP %s: %s\n", name, opara_runtime_last_error(rt));
        opara_runtime_destroy(rt);
        return;
    }
    if (!zoo_cpu_reference(rt, model, 1, &cpu, &in, &ref) || !zoo_make_outputs(cpu, &got)) {
        OT_LOG("%s: CPU reference: %s", name, opara_runtime_last_error(rt));
        CHECK(0);
        goto done;
    }
    memset(&o, 0, sizeof o);
    o.mode = mode;
    o.batch = 1;
    o.use_nvrtc = 1;
    o.nvrtc_path = nvrtc_path;
    if (opara__cuda_session_create(rt, opara__model_graph(model), &o, &gpu) != OPARA_OK) {
        OT_LOG("%s: CUDA session with NVRTC: %s", name, opara_runtime_last_error(rt));
        CHECK(0);
        goto done;
    }
    opara__cuda_session_info(gpu, &info);
    CHECK_EQ(1, info.nvrtc);
    CHECK_EQ(0, log.count); /* every kernel file came from NVRTC, none from the embedded PTX */
    if (log.count) OT_LOG("%s: %s", name, log.first);
    CHECK_EQ(mode, info.mode);
    for (i = 0; i < in.n; ++i) inputs[i] = in.t[i].data;
    for (i = 0; i < got.n; ++i) outputs[i] = got.t[i].data;
    if (opara__cuda_session_run(gpu, inputs, outputs) != OPARA_OK) {
        OT_LOG("%s: run: %s", name, opara_runtime_last_error(rt));
        CHECK(0);
        goto done;
    }
    for (i = 0; i < ref.n; ++i) {
        double e = zoo_nmse(&ref.t[i], got.t[i].data);
        if (e > worst) worst = e;
    }
    CHECK(worst <= 1e-8);
    printf("%-12s %-5s kernels from NVRTC (%s): NMSE vs CPU %.2e\n", name, mode == OPARA__CUDA_EAGER ? "eager" : "graph",
           nvrtc_path, worst);
done:
    opara__cuda_session_destroy(gpu);
    zoo_free_io(&in), zoo_free_io(&ref), zoo_free_io(&got);
    opara_session_destroy(cpu);
    opara_model_destroy(model);
    opara_runtime_destroy(rt);
}

OT_TEST(nvrtc_compiled_kernels_run_zoo_models_like_the_cpu_backend) {
    opara_cuda_nvrtc nv;
    char err[2048], path[1024];
    FILE* f;
    memset(&nv, 0, sizeof nv);
    if (!load_nvrtc(&nv, err, sizeof err)) SKIP("NVRTC not loadable: %s", err);
    snprintf(path, sizeof path, "%s", nv.path);
    opara_cuda_nvrtc_unload(&nv);
    zoo_use_emulator_by_default();
    if (!opara__cuda_available(NULL, err, sizeof err)) SKIP("no CUDA driver: %s", err);
    f = fopen(ZOO_DIR "/zoo.tsv", "r");
    if (!f) SKIP("no zoo in %s (make zoo)", ZOO_DIR);
    fclose(f);
    nvrtc_model(T, path, "deepfm", OPARA__CUDA_GRAPH);     /* Gather, Slice, Concat, Gemm, reductions */
    nvrtc_model(T, path, "squeezenet", OPARA__CUDA_EAGER); /* Conv, pooling, Concat */
}

static const opara_test_case tests[] = {
    OT_CASE(every_kernel_compiles_with_nvrtc_and_ptxas_without_spills),
    OT_CASE(nvrtc_compiled_kernels_run_zoo_models_like_the_cpu_backend),
};

/* Under AddressSanitizer: libnvrtc keeps allocations from its static initialisers (libstdc++'s
   72 KB exception pool) that LeakSanitizer reports at exit. They are not ours, so leaks inside it
   are suppressed, and it stays mapped after dlclose so the report can be matched by name. */
#if defined(__SANITIZE_ADDRESS__)
#  define TEST_ASAN 1
#elif defined(__has_feature)
#  if __has_feature(address_sanitizer)
#    define TEST_ASAN 1
#  endif
#endif
#ifdef TEST_ASAN
const char* __lsan_default_suppressions(void);
const char* __lsan_default_suppressions(void) { return "leak:libnvrtc\n"; }
static void keep_nvrtc_resident(void) {
    opara_cuda_nvrtc nv;
    if (opara_cuda_nvrtc_load(&nv, NULL, NULL, 0) != OPARA_CUDA_LOAD_OK) return;
    if (nv.path[0]) dlopen(nv.path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    opara_cuda_nvrtc_unload(&nv);
}
#else
static void keep_nvrtc_resident(void) {}
#endif

int main(int argc, char** argv) {
    keep_nvrtc_resident();
    return opara_test_main(argc, argv, tests, OT_COUNT(tests));
}
