/* Every kernel file of src/cuda/kernels compiles with the real NVRTC (loaded with dlopen through
   opara_cuda.h, no GPU needed) for compute_75, 80, 86, 87, 89 and 90, and the PTX assembles with
   the toolkit's ptxas for the same sm_XX with no local-memory spills and no stack frame.
   End to end: a CUDA session with use_nvrtc (the backend compiles every kernel file with the real
   NVRTC for the device's architecture, sm_XY, and loads the cubin, else NVRTC's PTX, else the
   embedded PTX) runs zoo models on the emulator (or a real GPU with OPARA_CUDA_DRIVER) in graph and
   eager mode and matches the CPU backend; the session says which image its kernels came from. The
   emulator refuses cubins (CUDA_ERROR_NO_BINARY_FOR_GPU, as a driver does for a cubin of another
   architecture), so there the chain stops at NVRTC's PTX; on a GPU it is the cubin.
   The rest of the chain with a fake NVRTC (this file built with -DOPARA_TEST_FAKE_NVRTC, by
   mk/cuda.mk into ../cuda/ beside the test binary): its PTX claims PTX ISA 9.9, newer than the
   driver, which refuses it (CUDA_ERROR_UNSUPPORTED_PTX_VERSION, the real failure of NVRTC output
   newer than the driver), so the embedded PTX runs; and with OPARA_FAKE_NVRTC=builtins it fails
   every compilation the way NVRTC does without its builtins library.
   Skips with the reason when NVRTC or ptxas is not installed (OPARA_CUDA_HOME, default
   /usr/local/cuda), or the zoo or a driver is missing. Run from the repository root (make test does). */
#if defined(OPARA_TEST_FAKE_NVRTC)
/* A fake NVRTC: compiles "successfully" for sm_75..sm_90; its cubin is an ELF header (the
   emulator refuses any cubin), its PTX the build-time PTX of the same kernel file with the PTX
   ISA version raised to 9.9. OPARA_FAKE_NVRTC=builtins: every compilation fails with
   NVRTC_ERROR_BUILTIN_OPERATION_FAILURE and NVRTC's own message. */
#include <stdlib.h>
#include <string.h>

#include "src/cuda/kernels/opara_ptx.h"

typedef struct fake_program {
    const opara__kernel_image* img;
    int real, failed;
    char* ptx; /* img unpacked */
} fake_program;

const char* nvrtcGetErrorString(int result);
int nvrtcVersion(int* major, int* minor);
int nvrtcGetNumSupportedArchs(int* n);
int nvrtcGetSupportedArchs(int* archs);
int nvrtcCreateProgram(fake_program** prog, const char* src, const char* name, int n, const char* const* headers,
                       const char* const* names);
int nvrtcDestroyProgram(fake_program** prog);
int nvrtcCompileProgram(fake_program* prog, int n, const char* const* options);
int nvrtcGetPTXSize(fake_program* prog, size_t* size);
int nvrtcGetPTX(fake_program* prog, char* ptx);
int nvrtcGetCUBINSize(fake_program* prog, size_t* size);
int nvrtcGetCUBIN(fake_program* prog, char* cubin);
int nvrtcGetProgramLogSize(fake_program* prog, size_t* size);
int nvrtcGetProgramLog(fake_program* prog, char* log);

static const int fake_archs[] = {75, 80, 86, 87, 89, 90};
static const char fake_builtins_log[] = "nvrtc: error: failed to open libnvrtc-builtins.so.13.0.\n";

const char* nvrtcGetErrorString(int result) { return result == 0 ? "NVRTC_SUCCESS" : "NVRTC_ERROR_BUILTIN_OPERATION_FAILURE"; }
int nvrtcVersion(int* major, int* minor) {
    *major = 13;
    *minor = 0;
    return 0;
}
int nvrtcGetNumSupportedArchs(int* n) {
    *n = (int)(sizeof fake_archs / sizeof fake_archs[0]);
    return 0;
}
int nvrtcGetSupportedArchs(int* archs) {
    memcpy(archs, fake_archs, sizeof fake_archs);
    return 0;
}
int nvrtcCreateProgram(fake_program** prog, const char* src, const char* name, int n, const char* const* headers,
                       const char* const* names) {
    size_t i;
    (void)src, (void)n, (void)headers, (void)names;
    *prog = (fake_program*)calloc(1, sizeof **prog);
    if (!*prog) return 1;
    for (i = 0; i < sizeof opara__kernel_images / sizeof opara__kernel_images[0]; ++i)
        if (strcmp(opara__kernel_images[i].file, name) == 0) (*prog)->img = &opara__kernel_images[i];
    if (!(*prog)->img) return 3;
    (*prog)->ptx = (char*)malloc((*prog)->img->ptx_size + 1);
    if (!(*prog)->ptx || opara__ptx_unpack((*prog)->img->packed, (*prog)->img->packed_size, (*prog)->ptx,
                                           (*prog)->img->ptx_size, NULL) != OPARA__PTX_UNPACKED)
        return 1;
    (*prog)->ptx[(*prog)->img->ptx_size] = 0;
    return 0;
}
int nvrtcDestroyProgram(fake_program** prog) {
    if (*prog) free((*prog)->ptx);
    free(*prog);
    *prog = NULL;
    return 0;
}
int nvrtcCompileProgram(fake_program* prog, int n, const char* const* options) {
    const char* mode = getenv("OPARA_FAKE_NVRTC");
    int i;
    for (i = 0; i < n; ++i)
        if (strncmp(options[i], "--gpu-architecture=sm_", 22) == 0) prog->real = 1;
    prog->failed = mode && strcmp(mode, "builtins") == 0;
    return prog->failed ? 7 : 0;
}
/* The build-time PTX with its ".version X.Y" raised to ".version 9.9" (same length). */
static size_t fake_ptx(const fake_program* prog, char* out) {
    size_t len = strlen(prog->ptx);
    if (out) {
        char* version;
        memcpy(out, prog->ptx, len + 1);
        version = strncmp(out, ".version ", 9) == 0 ? out : strstr(out, "\n.version ");
        if (version) memcpy(strchr(version + 1, ' ') + 1, "9.9", 3);
    }
    return len + 1;
}
int nvrtcGetPTXSize(fake_program* prog, size_t* size) {
    *size = fake_ptx(prog, NULL);
    return 0;
}
int nvrtcGetPTX(fake_program* prog, char* ptx) {
    fake_ptx(prog, ptx);
    return 0;
}
int nvrtcGetCUBINSize(fake_program* prog, size_t* size) {
    *size = prog->real ? 64 : 0;
    return 0;
}
int nvrtcGetCUBIN(fake_program* prog, char* cubin) {
    (void)prog;
    memset(cubin, 0, 64);
    memcpy(cubin, "\177ELF", 4);
    return 0;
}
int nvrtcGetProgramLogSize(fake_program* prog, size_t* size) {
    *size = prog->failed ? sizeof fake_builtins_log : 1;
    return 0;
}
int nvrtcGetProgramLog(fake_program* prog, char* log) {
    strcpy(log, prog->failed ? fake_builtins_log : "");
    return 0;
}

#else

#define _GNU_SOURCE
#define OPARA_IMPLEMENTATION
#define OPARA_NVRTC_SOURCE /* the kernel sources for NVRTC (opara_nvrtc.h) */
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

/* Kernel file names in src/cuda/kernels, sorted; returns the count (at most cap). */
static int list_kernel_files(char names[][64], int cap) {
    DIR* d = opendir("src/cuda/kernels");
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
    header = slurp("src/cuda/kernels/opara_kernel.h");
    n_files = list_kernel_files(names, 32);
    if (!header || n_files == 0) {
        free(header);
        opara_cuda_nvrtc_unload(&nv);
        REQUIRE(!"src/cuda/kernels not found: run from the repository root");
    }
    for (f = 0; f < n_files; ++f) {
        char* src;
        snprintf(path, sizeof path, "src/cuda/kernels/%s", names[f]);
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

/* The backend's fallback messages (BACKEND_FALLBACK) of one session, and how many there were. */
typedef struct fallback_log {
    int count;
    char text[8192];
} fallback_log;
static void on_log(opara_log_level level, opara_log_item item, const char* message, void* user) {
    fallback_log* f = (fallback_log*)user;
    size_t used = strlen(f->text);
    (void)level;
    if (item != OPARA_LOGITEM_BACKEND_FALLBACK) return;
    ++f->count;
    if (used + 2 < sizeof f->text) snprintf(f->text + used, sizeof f->text - used, "%s\n", message);
}

static int count_of(const char* haystack, const char* needle) {
    int n = 0;
    const char* p = haystack;
    while ((p = strstr(p, needle)) != NULL) ++n, p += strlen(needle);
    return n;
}

/* What a session's kernels must have come from, and its fallback messages. */
typedef struct nvrtc_expect {
    const char* kernels_prefix; /* opara__cuda_info.kernels starts with it */
    int cubin_refused;          /* messages "the driver refused NVRTC cubin" */
    int ptx_refused;            /* messages "the driver refused NVRTC PTX" */
    int not_compiled;           /* messages "NVRTC could not compile" */
    const char* also;           /* a text the messages must contain (NULL: none) */
} nvrtc_expect;

/* The kernel files the backend loads (OPARA__CUDA_FILES in src/cuda/opara_backend_cuda.c). */
#define BACKEND_KERNEL_FILES 10

/* One zoo model: CPU reference, then a CUDA session whose kernels NVRTC compiled, in one mode. */
static void nvrtc_model(opara_test* T, const char* nvrtc_path, const char* name, opara__cuda_mode mode,
                        const nvrtc_expect* expect) {
    opara_runtime_desc rd;
    opara_runtime* rt = NULL;
    opara_model* model = NULL;
    opara_session* cpu = NULL;
    opara__cuda_options o;
    opara__cuda_session* gpu = NULL;
    opara__cuda_info info;
    static fallback_log log;
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
    REQUIRE(info.kernels != NULL);
    if (strncmp(info.kernels, expect->kernels_prefix, strlen(expect->kernels_prefix)) != 0 ||
        count_of(log.text, "the driver refused NVRTC cubin") != expect->cubin_refused ||
        count_of(log.text, "the driver refused NVRTC PTX") != expect->ptx_refused ||
        count_of(log.text, "NVRTC could not compile") != expect->not_compiled ||
        (expect->also && !strstr(log.text, expect->also))) {
        OT_LOG("%s: kernels \"%s\", expected \"%s...\"; %d fallback messages:\n%s", name, info.kernels,
               expect->kernels_prefix, log.count, log.text);
        CHECK(0);
    }
    CHECK_EQ(strncmp(info.kernels, "NVRTC", 5) == 0, info.nvrtc);
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
    printf("%-12s %-5s kernels from %s (NVRTC %s): NMSE vs CPU %.2e\n", name, mode == OPARA__CUDA_EAGER ? "eager" : "graph",
           info.kernels, nvrtc_path, worst);
done:
    opara__cuda_session_destroy(gpu);
    zoo_free_io(&in), zoo_free_io(&ref), zoo_free_io(&got);
    opara_session_destroy(cpu);
    opara_model_destroy(model);
    opara_runtime_destroy(rt);
}
/* The fake NVRTC built by mk/cuda.mk beside the test binary (set by main). */
static char fake_nvrtc_path[1024];

/* NULL when the zoo and a driver are there, else why not (the emulator unless OPARA_CUDA_DRIVER). */
static const char* zoo_and_driver_missing(void) {
    static char err[2048];
    FILE* f;
    zoo_use_emulator_by_default();
    if (!opara__cuda_available(NULL, err, sizeof err)) return err;
    f = fopen(ZOO_DIR "/zoo.tsv", "r");
    if (!f) return "no zoo in " ZOO_DIR " (make zoo)";
    fclose(f);
    return NULL;
}

/* The device's architecture as NVRTC names it (75 for the emulator's default RTX 2080 SUPER). */
static int device_arch(void) {
    opara_cuda_driver cu;
    opara_CUdevice dev = 0;
    int major = 0, minor = 0;
    if (opara_cuda_driver_load(&cu, NULL, NULL, 0) != OPARA_CUDA_LOAD_OK) return 0;
    if (cu.cuInit(0) != OPARA_CUDA_SUCCESS || cu.cuDeviceGet(&dev, 0) != OPARA_CUDA_SUCCESS ||
        cu.cuDeviceGetAttribute(&major, OPARA_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev) != OPARA_CUDA_SUCCESS ||
        cu.cuDeviceGetAttribute(&minor, OPARA_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev) != OPARA_CUDA_SUCCESS)
        major = minor = 0;
    opara_cuda_driver_unload(&cu);
    return major * 10 + minor;
}

/* The emulator's configuration call, NULL on a real driver. */
typedef int (*emu_config_str_fn)(const char* key, const char* value);
static emu_config_str_fn emu_config_str(void) {
    void* h = dlopen(getenv("OPARA_CUDA_DRIVER"), RTLD_NOW | RTLD_NOLOAD);
    emu_config_str_fn f = NULL;
    if (h) *(void**)(&f) = dlsym(h, "opara_emu_config_str"), dlclose(h);
    return f;
}

static int driver_is_emulator(void) {
    void* h = dlopen(getenv("OPARA_CUDA_DRIVER"), RTLD_NOW | RTLD_NOLOAD);
    int emu = h && dlsym(h, "opara_emu_stat") != NULL;
    if (h) dlclose(h);
    return emu;
}

/* The real NVRTC: on a GPU the kernels are its cubins for the device; the emulator refuses
   cubins (209, once per kernel file), so there they are NVRTC's PTX for the same architecture. */
OT_TEST(nvrtc_compiled_kernels_run_zoo_models_like_the_cpu_backend) {
    opara_cuda_nvrtc nv;
    char err[2048], path[1024], kernels[64];
    const char* missing;
    nvrtc_expect e;
    int arch;
    memset(&nv, 0, sizeof nv);
    if (!load_nvrtc(&nv, err, sizeof err)) SKIP("NVRTC not loadable: %s", err);
    snprintf(path, sizeof path, "%s", nv.path);
    opara_cuda_nvrtc_unload(&nv);
    if ((missing = zoo_and_driver_missing()) != NULL) SKIP("%s", missing);
    arch = device_arch();
    REQUIRE(arch > 0);
    memset(&e, 0, sizeof e);
    if (driver_is_emulator()) {
        snprintf(kernels, sizeof kernels, "NVRTC PTX compute_%d", arch);
        e.cubin_refused = BACKEND_KERNEL_FILES;
        e.also = "CUDA_ERROR_NO_BINARY_FOR_GPU (209)";
    } else {
        snprintf(kernels, sizeof kernels, "NVRTC cubin sm_%d", arch);
    }
    e.kernels_prefix = kernels;
    nvrtc_model(T, path, "deepfm", OPARA__CUDA_GRAPH, &e);     /* Gather, Slice, Concat, Gemm, reductions */
    nvrtc_model(T, path, "squeezenet", OPARA__CUDA_EAGER, &e); /* Conv, pooling, Concat */
}

/* A device whose minor compute capability is 0 (an H100 is 9.0) compiles for sm_90: the first real-GPU run
   compiled for compute_90 after asking for "sm_95" (a minor of 0 was taken for a failed query). */
OT_TEST(nvrtc_compiles_for_a_device_of_minor_version_0) {
    opara_cuda_nvrtc nv;
    char err[2048], path[1024];
    const char* missing;
    emu_config_str_fn dev;
    nvrtc_expect e;
    memset(&nv, 0, sizeof nv);
    if (!load_nvrtc(&nv, err, sizeof err)) SKIP("NVRTC not loadable: %s", err);
    snprintf(path, sizeof path, "%s", nv.path);
    opara_cuda_nvrtc_unload(&nv);
    if ((missing = zoo_and_driver_missing()) != NULL) SKIP("%s", missing);
    if (!(dev = emu_config_str())) SKIP("needs the emulator's H100 profile (a real H100: the test before)");
    REQUIRE(dev("device", "h100") == 0);
    CHECK_EQ(90, device_arch());
    memset(&e, 0, sizeof e);
    e.kernels_prefix = "NVRTC PTX compute_90";
    e.cubin_refused = BACKEND_KERNEL_FILES;
    nvrtc_model(T, path, "deepfm", OPARA__CUDA_GRAPH, &e);
    CHECK_EQ(0, dev("device", ""));
}

/* NVRTC output newer than the driver: the cubin is refused (on the emulator; on a GPU: an ELF
   that is no cubin, CUDA_ERROR_INVALID_IMAGE or NO_BINARY_FOR_GPU), then the PTX with
   CUDA_ERROR_UNSUPPORTED_PTX_VERSION; the embedded PTX runs and matches the CPU backend. */
OT_TEST(nvrtc_output_newer_than_the_driver_falls_back_to_the_embedded_ptx) {
    nvrtc_expect e;
    const char* missing;
    FILE* f = fopen(fake_nvrtc_path, "rb");
    if (!f) SKIP("fake NVRTC not built: %s (mk/cuda.mk builds it)", fake_nvrtc_path);
    fclose(f);
    if ((missing = zoo_and_driver_missing()) != NULL) SKIP("%s", missing);
    if (!driver_is_emulator()) SKIP("the fake NVRTC's refusals are checked on the emulator");
    memset(&e, 0, sizeof e);
    e.kernels_prefix = "embedded PTX sm_75 (driver JIT)";
    e.cubin_refused = BACKEND_KERNEL_FILES;
    e.ptx_refused = BACKEND_KERNEL_FILES;
    e.also = "CUDA_ERROR_UNSUPPORTED_PTX_VERSION (222): PTX ISA 9.9 is newer than this driver supports; trying the embedded PTX";
    nvrtc_model(T, fake_nvrtc_path, "squeezenet", OPARA__CUDA_GRAPH, &e);
}

/* NVRTC whose builtins are missing fails every compilation (NVRTC_ERROR_BUILTIN_OPERATION_FAILURE,
   with its own message in the log): the embedded PTX runs. */
OT_TEST(nvrtc_that_cannot_compile_falls_back_to_the_embedded_ptx) {
    nvrtc_expect e;
    const char* missing;
    FILE* f = fopen(fake_nvrtc_path, "rb");
    if (!f) SKIP("fake NVRTC not built: %s (mk/cuda.mk builds it)", fake_nvrtc_path);
    fclose(f);
    if ((missing = zoo_and_driver_missing()) != NULL) SKIP("%s", missing);
    memset(&e, 0, sizeof e);
    e.kernels_prefix = "embedded PTX sm_75 (driver JIT)";
    e.not_compiled = BACKEND_KERNEL_FILES;
    e.also = "NVRTC_ERROR_BUILTIN_OPERATION_FAILURE: nvrtc: error: failed to open libnvrtc-builtins.so.13.0.";
    REQUIRE(setenv("OPARA_FAKE_NVRTC", "builtins", 1) == 0);
    nvrtc_model(T, fake_nvrtc_path, "deepfm", OPARA__CUDA_EAGER, &e);
    unsetenv("OPARA_FAKE_NVRTC");
}

/* The public plan info says where the kernels came from (public sessions use the embedded PTX). */
OT_TEST(plan_info_names_the_kernel_images) {
    opara_runtime* rt = NULL;
    opara_model* model = NULL;
    opara_session* cuda = NULL;
    opara_session_desc d;
    opara_plan_info pi;
    const char* missing;
    if ((missing = zoo_and_driver_missing()) != NULL) SKIP("%s", missing);
    REQUIRE(opara_runtime_create(NULL, &rt) == OPARA_OK);
    if (zoo_load(rt, "squeezenet", &model) != OPARA_OK) {
        opara_runtime_destroy(rt);
        SKIP("no squeezenet in the zoo");
    }
    memset(&d, 0, sizeof d);
    d.backend = OPARA_BACKEND_CUDA;
    if (opara_session_create(rt, model, &d, &cuda) != OPARA_OK) {
        OT_LOG("CUDA session: %s", opara_runtime_last_error(rt));
        CHECK(0);
    } else {
        CHECK_EQ(opara_session_get_plan_info(cuda, &pi), OPARA_OK);
        REQUIRE(pi.kernels != NULL);
        OT_LOG("kernels: %s", pi.kernels);
        CHECK_STR(pi.kernels, "embedded PTX sm_75 (driver JIT)");
    }
    opara_session_destroy(cuda);
    opara_model_destroy(model);
    opara_runtime_destroy(rt);
}

static const opara_test_case tests[] = {
    OT_CASE(every_kernel_compiles_with_nvrtc_and_ptxas_without_spills),
    OT_CASE(nvrtc_compiled_kernels_run_zoo_models_like_the_cpu_backend),
    OT_CASE(nvrtc_compiles_for_a_device_of_minor_version_0),
    OT_CASE(nvrtc_output_newer_than_the_driver_falls_back_to_the_embedded_ptx),
    OT_CASE(nvrtc_that_cannot_compile_falls_back_to_the_embedded_ptx),
    OT_CASE(plan_info_names_the_kernel_images),
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
    const char* slash = argc > 0 ? strrchr(argv[0], '/') : NULL;
    int dir_len = slash ? (int)(slash - argv[0] + 1) : 0;
    snprintf(fake_nvrtc_path, sizeof fake_nvrtc_path, "%.*s../cuda/libopara_fake_nvrtc.so", dir_len, slash ? argv[0] : "");
    keep_nvrtc_resident();
    return opara_test_main(argc, argv, tests, OT_COUNT(tests));
}

#endif /* OPARA_TEST_FAKE_NVRTC */
