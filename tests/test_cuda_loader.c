/* test_cuda_loader.c - opara_cuda.h's loader against the real libraries of this machine.

   On a machine without a GPU driver: loading libcuda.so.1 fails and names every path tried; an
   explicit path (argument or environment variable) that does not exist is reported and not
   replaced by the search list; a fake "old driver" that exports only cuInit and cuGetErrorName is
   refused with the first missing entry point named; the toolkit's stub libcuda.so loads and its
   cuInit returns CUDA_ERROR_STUB_LIBRARY (34), which our name helper names. The real NVRTC,
   cuBLAS and cuDNN (SKIP when absent) load by name with every required entry point, report
   versions that agree with their sonames, and do GPU-free work whose results come from NVIDIA's
   code: NVRTC compiles a kernel to PTX, cuDNN computes a convolution's output shape, cuBLAS
   refuses a handle with NOT_INITIALIZED; their own status-name functions agree with our tables.
   Two more fake drivers export only cuDriverGetVersion and cuGetProcAddress_v2: with version 13.0
   every entry point must come through cuGetProcAddress with the base name and ABI version of
   NVIDIA's cudaTypedefs.h; with version 11.8 the load is refused as too old.

   With -DOPARA_TEST_FAKE_OLD_DRIVER or -DOPARA_TEST_FAKE_PROC_DRIVER=<version> this file is
   instead one of the fake drivers; mk/cuda.mk builds them into build/.../cuda/. With
   -DOPARA_TEST_FAKE_NO_DEVICE too, the proc driver's cuInit answers CUDA_ERROR_NO_DEVICE (100), what
   NVIDIA's driver says with no usable GPU: tests/test_cuda_nodevice.c's driver (Linux, Windows as a
   DLL, aarch64). */
#if defined(OPARA_TEST_FAKE_PROC_DRIVER)
/* A driver that exports only cuDriverGetVersion and cuGetProcAddress_v2 (the version is
   OPARA_TEST_FAKE_PROC_DRIVER), so a complete table proves every entry point came through
   cuGetProcAddress. It logs each request as "name@version;" for the test to read. */
#include <string.h>

static char request_log[8192];

const char* opara_fake_requests(void);
int cuDriverGetVersion(int* version);
int cuGetProcAddress_v2(const char* symbol, void** pfn, int version, unsigned long long flags, int* status);

#ifdef OPARA_TEST_FAKE_NO_DEVICE
static int fake_init(unsigned int flags) { return flags == 0 ? 100 : 1; }
#else
static int fake_init(unsigned int flags) { return flags == 0 ? 0 : 1; }
#endif
static int fake_other(void) { return 999; }

const char* opara_fake_requests(void) { return request_log; }

int cuDriverGetVersion(int* version) {
    if (!version) return 1;
    *version = OPARA_TEST_FAKE_PROC_DRIVER;
    return 0;
}

int cuGetProcAddress_v2(const char* symbol, void** pfn, int version, unsigned long long flags, int* status) {
    size_t used, n;
    int (*init)(unsigned int) = fake_init;
    int (*other)(void) = fake_other;
    if (!symbol || !pfn || flags != 1 /* CU_GET_PROC_ADDRESS_LEGACY_STREAM */) return 1;
    used = strlen(request_log);
    n = strlen(symbol) + 16;
    if (version > OPARA_TEST_FAKE_PROC_DRIVER) return 1; /* CUDA_ERROR_INVALID_VALUE, as documented */
    if (used + n < sizeof request_log) {
        strcat(request_log, symbol);
        strcat(request_log, "@");
        used = strlen(request_log);
        request_log[used] = (char)('0' + version / 10000 % 10);
        request_log[used + 1] = (char)('0' + version / 1000 % 10);
        request_log[used + 2] = (char)('0' + version / 100 % 10);
        request_log[used + 3] = (char)('0' + version / 10 % 10);
        request_log[used + 4] = (char)('0' + version % 10);
        request_log[used + 5] = ';';
        request_log[used + 6] = 0;
    }
    if (strcmp(symbol, "cuInit") == 0)
        memcpy(pfn, &init, sizeof *pfn);
    else
        memcpy(pfn, &other, sizeof *pfn);
    if (status) *status = 0;
    return 0;
}

#elif defined(OPARA_TEST_FAKE_OLD_DRIVER)

int cuInit(unsigned int flags);
int cuGetErrorName(int error, const char** name);
int cuInit(unsigned int flags) { return flags == 0 ? 0 : 1; }
int cuGetErrorName(int error, const char** name) {
    if (!name) return 1;
    *name = error == 0 ? "CUDA_SUCCESS" : "CUDA_ERROR_UNKNOWN";
    return 0;
}

#else

#define _GNU_SOURCE /* dl_iterate_phdr, nftw, mkdtemp: the test's own fixture */
/* The fixed system places of the search go under the fixture's fake root in the child processes
   ("" in the parent: the real ones). */
static char fx_sys[700];
#define OPARA_CUDA_SYSTEM_PREFIX fx_sys
#define OPARA_CUDA_IMPLEMENTATION
#include "opara_cuda.h"
#include "opara_test.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <link.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* Fake drivers built by mk/cuda.mk next to the test binary, in ../cuda/ (set by main). */
static char fake_driver_path[1024];  /* exports cuInit and cuGetErrorName only */
static char fake_cuda13_path[1024];  /* cuGetProcAddress_v2 only, driver version 13.0 */
static char fake_cuda11_path[1024];  /* cuGetProcAddress_v2 only, driver version 11.8 */

/* Under AddressSanitizer: NVIDIA's libraries keep allocations from their static initialisers
   (libstdc++'s 72 KB exception pool, for one) that LeakSanitizer reports at exit. They are not
   ours (opara_cuda.h never allocates), so leaks inside those libraries are suppressed, and the
   libraries are kept mapped after dlclose so the reports can be matched by library name. */
#if defined(__SANITIZE_ADDRESS__)
#  define TEST_ASAN 1
#elif defined(__has_feature)
#  if __has_feature(address_sanitizer)
#    define TEST_ASAN 1
#  endif
#endif
#ifdef TEST_ASAN
const char* __lsan_default_suppressions(void);
const char* __lsan_default_suppressions(void) { return "leak:libnvrtc\nleak:libcublas\nleak:libcudnn\n"; }
static void keep_resident(const char* path) {
    if (path && path[0]) dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
}
static void keep_nvidia_libraries_resident(void) {
    opara_cuda_nvrtc nv;
    opara_cuda_cublas blas;
    opara_cuda_cudnn dnn;
    if (opara_cuda_nvrtc_load(&nv, NULL, NULL, 0) == OPARA_CUDA_LOAD_OK) keep_resident(nv.path);
    if (opara_cuda_cublas_load(&blas, NULL, NULL, 0) == OPARA_CUDA_LOAD_OK) keep_resident(blas.path);
    if (opara_cuda_cudnn_load(&dnn, NULL, NULL, 0) == OPARA_CUDA_LOAD_OK) keep_resident(dnn.path);
    opara_cuda_nvrtc_unload(&nv);
    opara_cuda_cublas_unload(&blas);
    opara_cuda_cudnn_unload(&dnn);
}
#else
static void keep_resident(const char* path) { (void)path; }
static void keep_nvidia_libraries_resident(void) {}
#endif

static int contains(const char* haystack, const char* needle) { return haystack && strstr(haystack, needle) != NULL; }

static int count_of(const char* haystack, const char* needle) {
    int n = 0;
    const char* p = haystack;
    while ((p = strstr(p, needle)) != NULL) {
        ++n;
        p += strlen(needle);
    }
    return n;
}

static int file_exists(const char* path) {
    FILE* f = fopen(path, "rb");
    if (f) fclose(f);
    return f != NULL;
}

/* The major version in a soname such as "libcublas.so.13" or "libnvrtc.so.11.2"; 0 if none. */
static int soname_major(const char* path) {
    const char* p = strstr(path, ".so.");
    return p ? atoi(p + 4) : 0;
}

/* ---- every required member of a loaded table is set --------------------------------------------- */
#define CHECK_DRIVER_MEMBER(ret, name, params, req, proc, ver, alt, alt_ver) \
    if (req && !t->name) { \
        OT_LOG("required %s is NULL", #name); \
        ++missing; \
    }
#define CHECK_LIB_MEMBER(ret, name, params, req) \
    if (req && !t->name) { \
        OT_LOG("required %s is NULL", #name); \
        ++missing; \
    }
static int driver_missing(opara_test* T, const opara_cuda_driver* t) {
    int missing = 0;
    OPARA_CUDA_DRIVER_FUNCS(CHECK_DRIVER_MEMBER)
    return missing;
}
static int nvrtc_missing(opara_test* T, const opara_cuda_nvrtc* t) {
    int missing = 0;
    OPARA_CUDA_NVRTC_FUNCS(CHECK_LIB_MEMBER)
    return missing;
}
static int cublas_missing(opara_test* T, const opara_cuda_cublas* t) {
    int missing = 0;
    OPARA_CUDA_CUBLAS_FUNCS(CHECK_LIB_MEMBER)
    return missing;
}
static int cudnn_missing(opara_test* T, const opara_cuda_cudnn* t) {
    int missing = 0;
    OPARA_CUDA_CUDNN_FUNCS(CHECK_LIB_MEMBER)
    return missing;
}

#define COUNT_REQUIRED(ret, name, params, req, proc, ver, alt, alt_ver) +(req)

/* ---- driver ------------------------------------------------------------------------------------ */

/* Must run before driver_stub_library: the stub's soname is libcuda.so.1, so once it is loaded
   the name "libcuda.so.1" resolves to it for the rest of the process. */
OT_TEST(driver_absent_names_every_path) {
    opara_cuda_driver cu;
    char err[2048];
    opara_cuda_load_status s = opara_cuda_driver_load(&cu, NULL, err, sizeof err);
    if (s == OPARA_CUDA_LOAD_OK) {
        /* A machine with a real driver: it must be complete and found through cuGetProcAddress. */
        CHECK_EQ(driver_missing(T, &cu), 0);
        CHECK(cu.driver_version >= OPARA_CUDA_MIN_DRIVER_VERSION);
        CHECK_EQ(cu.used_proc_address, 1);
        int version = cu.driver_version;
        CHECK_STR(err, "");
        opara_cuda_driver_unload(&cu);
        SKIP("a CUDA driver is installed (version %d): checked that it loads completely instead", version);
    }
    OT_LOG("message: %s", err);
    CHECK_EQ(s, OPARA_CUDA_LOAD_NOT_FOUND);
    /* both names, dlerror()'s reason once (the same for both), no directory: the driver is never
       searched in directories */
    CHECK(contains(err, "tried \"libcuda.so.1\", \"libcuda.so\" on the system loader path (cannot open shared "
                        "object file: No such file or directory)"));
    CHECK_EQ(count_of(err, "cannot open shared object file"), 1);
    CHECK(!contains(err, "directories"));
    CHECK(contains(err, "OPARA_CUDA_DRIVER"));
    CHECK(cu.library == NULL);
    CHECK(cu.cuInit == NULL);
}

OT_TEST(driver_override_path_is_reported_not_replaced) {
    opara_cuda_driver cu;
    char err[2048];
    const char* bad = "/nonexistent/opara-test/libcuda.so.1";
    CHECK_EQ(opara_cuda_driver_load(&cu, bad, err, sizeof err), OPARA_CUDA_LOAD_NOT_FOUND);
    OT_LOG("message: %s", err);
    CHECK(contains(err, bad));
    CHECK(contains(err, "given by the caller"));
    CHECK(contains(err, "No such file or directory"));
    CHECK(!contains(err, "\"libcuda.so\"")); /* the search list was not tried */
    CHECK(cu.library == NULL);
}

OT_TEST(override_from_environment_and_argument_wins) {
    opara_cuda_driver cu;
    opara_cuda_nvrtc nvrtc;
    char err[2048];
    const char* env_path = "/nonexistent/opara-env/libcuda.so.1";
    const char* arg_path = "/nonexistent/opara-arg/libcuda.so.1";
    REQUIRE(setenv("OPARA_CUDA_DRIVER", env_path, 1) == 0);
    CHECK_EQ(opara_cuda_driver_load(&cu, NULL, err, sizeof err), OPARA_CUDA_LOAD_NOT_FOUND);
    OT_LOG("env message: %s", err);
    CHECK(contains(err, env_path));
    CHECK(contains(err, "from OPARA_CUDA_DRIVER"));
    CHECK_EQ(opara_cuda_driver_load(&cu, arg_path, err, sizeof err), OPARA_CUDA_LOAD_NOT_FOUND);
    CHECK(contains(err, arg_path));
    CHECK(!contains(err, env_path));
    unsetenv("OPARA_CUDA_DRIVER");
    /* An explicit NVRTC path that is wrong fails even where the real NVRTC would load by name. */
    REQUIRE(setenv("OPARA_NVRTC", "/nonexistent/opara-env/libnvrtc.so.13", 1) == 0);
    CHECK_EQ(opara_cuda_nvrtc_load(&nvrtc, NULL, err, sizeof err), OPARA_CUDA_LOAD_NOT_FOUND);
    CHECK(contains(err, "/nonexistent/opara-env/libnvrtc.so.13"));
    CHECK(contains(err, "from OPARA_NVRTC"));
    unsetenv("OPARA_NVRTC");
}

OT_TEST(bad_arguments_and_small_buffers) {
    opara_cuda_driver cu;
    char err[256];
    char tiny[8];
    CHECK_EQ(opara_cuda_driver_load(NULL, NULL, err, sizeof err), OPARA_CUDA_LOAD_INVALID_ARGUMENT);
    CHECK(contains(err, "NULL"));
    CHECK_EQ(opara_cuda_cudnn_load(NULL, NULL, NULL, 0), OPARA_CUDA_LOAD_INVALID_ARGUMENT);
    CHECK_EQ(opara_cuda_driver_load(&cu, "/nonexistent/x.so", NULL, 0), OPARA_CUDA_LOAD_NOT_FOUND);
    memset(tiny, 'x', sizeof tiny);
    CHECK_EQ(opara_cuda_driver_load(&cu, "/nonexistent/x.so", tiny, sizeof tiny), OPARA_CUDA_LOAD_NOT_FOUND);
    CHECK(memchr(tiny, 0, sizeof tiny) != NULL);
    tiny[0] = 'x';
    CHECK_EQ(opara_cuda_driver_load(&cu, "/nonexistent/x.so", tiny, 1), OPARA_CUDA_LOAD_NOT_FOUND);
    CHECK_EQ(tiny[0], 0);
    opara_cuda_driver_unload(NULL);
    opara_cuda_driver_unload(&cu); /* a failed load left a zeroed table */
    CHECK(cu.library == NULL);
}

OT_TEST(driver_too_old_names_missing_entry_point) {
    opara_cuda_driver cu;
    char err[2048], expect_count[64];
    void* fake;
    int required = 0 OPARA_CUDA_DRIVER_FUNCS(COUNT_REQUIRED);
    if (!file_exists(fake_driver_path)) SKIP("fake old driver not built: %s (mk/cuda.mk builds it)", fake_driver_path);
    CHECK_EQ(opara_cuda_driver_load(&cu, fake_driver_path, err, sizeof err), OPARA_CUDA_LOAD_SYMBOL_MISSING);
    OT_LOG("message: %s", err);
    CHECK(contains(err, fake_driver_path));
    CHECK(contains(err, "required entry point cuGetErrorString not found"));
    snprintf(expect_count, sizeof expect_count, "%d required entry points are missing", required - 2);
    CHECK(contains(err, expect_count));
    CHECK(cu.library == NULL && cu.cuInit == NULL);
    /* The named entry point really is absent from the library, and the ones it has are present. */
    fake = dlopen(fake_driver_path, RTLD_NOW | RTLD_LOCAL);
    REQUIRE(fake != NULL);
    CHECK(dlsym(fake, "cuGetErrorString") == NULL);
    CHECK(dlsym(fake, "cuInit") != NULL);
    CHECK(dlsym(fake, "cuGetErrorName") != NULL);
    dlclose(fake);
}

OT_TEST(driver_entry_points_through_get_proc_address) {
    opara_cuda_driver cu;
    char err[2048];
    void* fake;
    const char* (*requests)(void) = NULL;
    const char* log;
    if (!file_exists(fake_cuda13_path)) SKIP("fake driver not built: %s (mk/cuda.mk builds it)", fake_cuda13_path);
    CHECK_EQ(opara_cuda_driver_load(&cu, fake_cuda13_path, err, sizeof err), OPARA_CUDA_LOAD_OK);
    OT_LOG("message: %s", err);
    CHECK_EQ(cu.driver_version, 13000);
    CHECK_EQ(cu.used_proc_address, 1);
    CHECK_EQ(driver_missing(T, &cu), 0); /* the library exports none of them itself */
    REQUIRE(cu.cuInit != NULL);
    CHECK_EQ(cu.cuInit(0), OPARA_CUDA_SUCCESS);
    CHECK_EQ(cu.cuInit(1), OPARA_CUDA_ERROR_INVALID_VALUE);
    fake = dlopen(fake_cuda13_path, RTLD_NOW | RTLD_LOCAL);
    REQUIRE(fake != NULL);
    {
        void* sym = dlsym(fake, "opara_fake_requests");
        REQUIRE(sym != NULL);
        memcpy(&requests, &sym, sizeof sym);
    }
    log = requests();
    OT_LOG("requests: %.600s", log);
    /* Base names with the versions of cudaTypedefs.h's PFN_<name>_v<version> for our prototypes. */
    CHECK(contains(log, "cuMemAlloc@03020;"));
    CHECK(contains(log, "cuCtxSynchronize@02000;")); /* 13000 would be the cuCtxSynchronize_v2(ctx) ABI */
    CHECK(contains(log, "cuStreamBeginCapture@10010;"));
    CHECK(contains(log, "cuStreamGetCaptureInfo@12030;"));
    CHECK(contains(log, "cuGraphExecUpdate@12000;"));
    CHECK(contains(log, "cuGraphGetEdges@12030;"));
    CHECK(contains(log, "cuEventElapsedTime@12080;"));
    CHECK(contains(log, "cuGraphInstantiateWithFlags@11040;"));
    CHECK(!contains(log, "_v2@")); /* never a versioned name */
    dlclose(fake);
    opara_cuda_driver_unload(&cu);
}

OT_TEST(driver_version_below_minimum_is_refused) {
    opara_cuda_driver cu;
    char err[2048];
    if (!file_exists(fake_cuda11_path)) SKIP("fake driver not built: %s (mk/cuda.mk builds it)", fake_cuda11_path);
    CHECK_EQ(opara_cuda_driver_load(&cu, fake_cuda11_path, err, sizeof err), OPARA_CUDA_LOAD_DRIVER_TOO_OLD);
    OT_LOG("message: %s", err);
    CHECK(contains(err, "version 11.8"));
    CHECK(contains(err, "12.0 or newer"));
    CHECK(cu.library == NULL && cu.cuInit == NULL);
}

/* ---- NVRTC ------------------------------------------------------------------------------------- */

OT_TEST(nvrtc_loads_and_compiles) {
    opara_cuda_nvrtc nv;
    opara_nvrtcProgram prog = NULL;
    char err[2048], option[64], target[32], *ptx;
    const char* options[1];
    const char* src = "extern \"C\" __global__ void opara_scale(float* x) { x[threadIdx.x] *= 2.0f; }\n";
    int major = 0, minor = 0, count = 0, archs[64], i;
    size_t size = 0;
    if (opara_cuda_nvrtc_load(&nv, NULL, err, sizeof err) != OPARA_CUDA_LOAD_OK) SKIP("%s", err);
    CHECK_STR(err, "");
    CHECK_EQ(nvrtc_missing(T, &nv), 0);
    CHECK_EQ(nv.nvrtcVersion(&major, &minor), OPARA_NVRTC_SUCCESS);
    OT_LOG("%s (%s): NVRTC %d.%d, builtins %s", nv.path, nv.origin, major, minor, nv.builtins_path);
    /* the full path of the file mapped, whatever name found it; the builtins beside it */
    CHECK(nv.path[0] == '/');
    CHECK(nv.origin[0] != 0);
    if (nv.builtins) {
        char dir[OPARA_CUDA_PATH_MAX];
        snprintf(dir, sizeof dir, "%.*s/libnvrtc-builtins.so.%d.%d", (int)(strrchr(nv.path, '/') - nv.path), nv.path,
                 major, minor);
        CHECK_STR(nv.builtins_path, dir);
    }
    CHECK_EQ(major, soname_major(nv.path) == 0 ? major : soname_major(nv.path));
    if (soname_major(nv.path) == 13) CHECK_EQ(major, 13);
    CHECK_EQ(nv.nvrtcGetNumSupportedArchs(&count), OPARA_NVRTC_SUCCESS);
    REQUIRE(count > 0 && count <= 64);
    CHECK_EQ(nv.nvrtcGetSupportedArchs(archs), OPARA_NVRTC_SUCCESS);
    for (i = 1; i < count; ++i) CHECK(archs[i] > archs[i - 1]);
    /* The lowest supported architecture; NVRTC itself writes the PTX we look into. */
    snprintf(option, sizeof option, "--gpu-architecture=compute_%d", archs[0]);
    snprintf(target, sizeof target, ".target sm_%d", archs[0]);
    options[0] = option;
    REQUIRE(nv.nvrtcCreateProgram(&prog, src, "opara_scale.cu", 0, NULL, NULL) == OPARA_NVRTC_SUCCESS);
    CHECK_EQ(nv.nvrtcCompileProgram(prog, 1, options), OPARA_NVRTC_SUCCESS);
    CHECK_EQ(nv.nvrtcGetPTXSize(prog, &size), OPARA_NVRTC_SUCCESS);
    REQUIRE(size > 1);
    ptx = (char*)malloc(size);
    REQUIRE(ptx != NULL);
    CHECK_EQ(nv.nvrtcGetPTX(prog, ptx), OPARA_NVRTC_SUCCESS);
    CHECK(contains(ptx, ".entry opara_scale"));
    CHECK(contains(ptx, target));
    free(ptx);
    CHECK_EQ(nv.nvrtcDestroyProgram(&prog), OPARA_NVRTC_SUCCESS);
    opara_cuda_nvrtc_unload(&nv);
    CHECK(nv.library == NULL && nv.nvrtcVersion == NULL);
}

OT_TEST(nvrtc_compile_error_and_names) {
    opara_cuda_nvrtc nv;
    opara_nvrtcProgram prog = NULL;
    char err[2048], *log;
    size_t size = 0;
    opara_nvrtcResult r;
    if (opara_cuda_nvrtc_load(&nv, NULL, err, sizeof err) != OPARA_CUDA_LOAD_OK) SKIP("%s", err);
    REQUIRE(nv.nvrtcCreateProgram(&prog, "__global__ void broken( { }\n", "broken.cu", 0, NULL, NULL) == OPARA_NVRTC_SUCCESS);
    r = nv.nvrtcCompileProgram(prog, 0, NULL);
    CHECK_EQ(r, OPARA_NVRTC_ERROR_COMPILATION);
    CHECK_STR(opara_nvrtc_result_name(r), "NVRTC_ERROR_COMPILATION");
    CHECK_EQ(nv.nvrtcGetProgramLogSize(prog, &size), OPARA_NVRTC_SUCCESS);
    REQUIRE(size > 1);
    log = (char*)malloc(size);
    REQUIRE(log != NULL);
    CHECK_EQ(nv.nvrtcGetProgramLog(prog, log), OPARA_NVRTC_SUCCESS);
    CHECK(contains(log, "error"));
    free(log);
    nv.nvrtcDestroyProgram(&prog);
#define CHECK_NVRTC_NAME(name, value) CHECK_STR(opara_nvrtc_result_name(OPARA_##name), nv.nvrtcGetErrorString(OPARA_##name));
    OPARA_NVRTC_RESULT_LIST(CHECK_NVRTC_NAME)
    opara_cuda_nvrtc_unload(&nv);
}

/* ---- cuBLAS ------------------------------------------------------------------------------------ */

/* GPUs the driver our loader finds reports (0 without a driver or without a GPU). */
static int gpu_count(void) {
    opara_cuda_driver cu;
    int n = 0;
    memset(&cu, 0, sizeof cu);
    if (opara_cuda_driver_load(&cu, NULL, NULL, 0) != OPARA_CUDA_LOAD_OK) return 0;
    if (cu.cuInit(0) != OPARA_CUDA_SUCCESS || cu.cuDeviceGetCount(&n) != OPARA_CUDA_SUCCESS) n = 0;
    opara_cuda_driver_unload(&cu);
    return n;
}

OT_TEST(cublas_loads_and_needs_a_gpu) {
    opara_cuda_cublas blas;
    opara_cublasHandle_t handle = NULL;
    char err[2048];
    int major = 0;
    if (opara_cuda_cublas_load(&blas, NULL, err, sizeof err) != OPARA_CUDA_LOAD_OK) SKIP("%s", err);
    CHECK_EQ(cublas_missing(T, &blas), 0);
    CHECK_EQ(blas.cublasGetProperty(OPARA_MAJOR_VERSION, &major), OPARA_CUBLAS_STATUS_SUCCESS);
    OT_LOG("%s (%s): cuBLAS major %d", blas.path, blas.origin, major);
    CHECK(blas.path[0] == '/');
    if (soname_major(blas.path)) CHECK_EQ(major, soname_major(blas.path));
    /* cuBLAS itself says whether there is a GPU: a handle where the driver sees one, else NOT_INITIALIZED */
    if (gpu_count() > 0) {
        CHECK_EQ(blas.cublasCreate_v2(&handle), OPARA_CUBLAS_STATUS_SUCCESS);
        if (handle) CHECK_EQ(blas.cublasDestroy_v2(handle), OPARA_CUBLAS_STATUS_SUCCESS);
    } else {
        CHECK_EQ(blas.cublasCreate_v2(&handle), OPARA_CUBLAS_STATUS_NOT_INITIALIZED);
    }
    if (blas.cublasGetStatusName) {
#define CHECK_CUBLAS_NAME(name, value) CHECK_STR(opara_cublas_status_name(OPARA_##name), blas.cublasGetStatusName(OPARA_##name));
        OPARA_CUBLAS_STATUS_LIST(CHECK_CUBLAS_NAME)
    }
    opara_cuda_cublas_unload(&blas);
    CHECK(blas.library == NULL);
}

/* ---- cuDNN ------------------------------------------------------------------------------------- */

OT_TEST(cudnn_loads_and_computes_conv_shape) {
    opara_cuda_cudnn dnn;
    opara_cudnnTensorDescriptor_t x = NULL, xnd = NULL;
    opara_cudnnFilterDescriptor_t w = NULL;
    opara_cudnnConvolutionDescriptor_t conv = NULL;
    opara_cudnnActivationDescriptor_t act = NULL;
    char err[2048];
    int n = 0, c = 0, h = 0, wd = 0;
    const int dims[4] = {1, 64, 28, 28}, strides[4] = {64 * 28 * 28, 28 * 28, 28, 1};
    size_t version;
    if (opara_cuda_cudnn_load(&dnn, NULL, err, sizeof err) != OPARA_CUDA_LOAD_OK) SKIP("%s", err);
    CHECK_EQ(cudnn_missing(T, &dnn), 0);
    version = dnn.cudnnGetVersion();
    OT_LOG("%s (%s): cuDNN %lu", dnn.path, dnn.origin, (unsigned long)version);
    CHECK(dnn.path[0] == '/');
    if (soname_major(dnn.path) == 9) CHECK(version >= 90000 && version < 100000);
    if (soname_major(dnn.path) == 8) CHECK(version >= 8000 && version < 90000);
    /* x 1x64x28x28, w 96x64x3x3, pad 1, stride 2, dilation 1: cuDNN computes 1x96x14x14. */
    REQUIRE(dnn.cudnnCreateTensorDescriptor(&x) == OPARA_CUDNN_STATUS_SUCCESS);
    CHECK_EQ(dnn.cudnnSetTensor4dDescriptor(x, OPARA_CUDNN_TENSOR_NCHW, OPARA_CUDNN_DATA_FLOAT, 1, 64, 28, 28), 0);
    REQUIRE(dnn.cudnnCreateFilterDescriptor(&w) == OPARA_CUDNN_STATUS_SUCCESS);
    CHECK_EQ(dnn.cudnnSetFilter4dDescriptor(w, OPARA_CUDNN_DATA_FLOAT, OPARA_CUDNN_TENSOR_NCHW, 96, 64, 3, 3), 0);
    REQUIRE(dnn.cudnnCreateConvolutionDescriptor(&conv) == OPARA_CUDNN_STATUS_SUCCESS);
    CHECK_EQ(dnn.cudnnSetConvolution2dDescriptor(conv, 1, 1, 2, 2, 1, 1, OPARA_CUDNN_CROSS_CORRELATION, OPARA_CUDNN_DATA_FLOAT), 0);
    CHECK_EQ(dnn.cudnnSetConvolutionGroupCount(conv, 1), 0);
    CHECK_EQ(dnn.cudnnSetConvolutionMathType(conv, OPARA_CUDNN_DEFAULT_MATH), 0);
    CHECK_EQ(dnn.cudnnGetConvolution2dForwardOutputDim(conv, x, w, &n, &c, &h, &wd), OPARA_CUDNN_STATUS_SUCCESS);
    CHECK_EQ(n, 1);
    CHECK_EQ(c, 96);
    CHECK_EQ(h, 14);
    CHECK_EQ(wd, 14);
    /* The same input through the N-d descriptor. */
    REQUIRE(dnn.cudnnCreateTensorDescriptor(&xnd) == OPARA_CUDNN_STATUS_SUCCESS);
    CHECK_EQ(dnn.cudnnSetTensorNdDescriptor(xnd, OPARA_CUDNN_DATA_FLOAT, 4, dims, strides), 0);
    n = c = h = wd = 0;
    CHECK_EQ(dnn.cudnnGetConvolution2dForwardOutputDim(conv, xnd, w, &n, &c, &h, &wd), OPARA_CUDNN_STATUS_SUCCESS);
    CHECK(n == 1 && c == 96 && h == 14 && wd == 14);
    /* A channel mismatch between x and w is cuDNN's BAD_PARAM, which our table names. */
    CHECK_EQ(dnn.cudnnSetFilter4dDescriptor(w, OPARA_CUDNN_DATA_FLOAT, OPARA_CUDNN_TENSOR_NCHW, 96, 32, 3, 3), 0);
    {
        opara_cudnnStatus_t s = dnn.cudnnGetConvolution2dForwardOutputDim(conv, x, w, &n, &c, &h, &wd);
        CHECK(s != OPARA_CUDNN_STATUS_SUCCESS);
        CHECK_STR(opara_cudnn_status_name(s), dnn.cudnnGetErrorString(s));
    }
    REQUIRE(dnn.cudnnCreateActivationDescriptor(&act) == OPARA_CUDNN_STATUS_SUCCESS);
    CHECK_EQ(dnn.cudnnSetActivationDescriptor(act, OPARA_CUDNN_ACTIVATION_RELU, OPARA_CUDNN_NOT_PROPAGATE_NAN, 0.0), 0);
    CHECK_EQ(dnn.cudnnDestroyActivationDescriptor(act), 0);
    CHECK_EQ(dnn.cudnnDestroyConvolutionDescriptor(conv), 0);
    CHECK_EQ(dnn.cudnnDestroyFilterDescriptor(w), 0);
    CHECK_EQ(dnn.cudnnDestroyTensorDescriptor(xnd), 0);
    CHECK_EQ(dnn.cudnnDestroyTensorDescriptor(x), 0);
    if (version >= 90000) {
#define CHECK_CUDNN_NAME(name, value) CHECK_STR(opara_cudnn_status_name(OPARA_##name), dnn.cudnnGetErrorString(OPARA_##name));
        OPARA_CUDNN_STATUS_LIST(CHECK_CUDNN_NAME)
    }
    opara_cuda_cudnn_unload(&dnn);
    CHECK(dnn.library == NULL);
}

/* ---- names without any library ----------------------------------------------------------------- */

OT_TEST(names_of_unknown_codes) {
    CHECK_STR(opara_cuda_result_name((opara_CUresult)12345), "(unknown CUresult)");
    CHECK_STR(opara_nvrtc_result_name((opara_nvrtcResult)999), "(unknown nvrtcResult)");
    CHECK_STR(opara_cublas_status_name((opara_cublasStatus_t)99), "(unknown cublasStatus_t)");
    CHECK_STR(opara_cudnn_status_name((opara_cudnnStatus_t)777), "(unknown cudnnStatus_t)");
    CHECK_STR(opara_cuda_driver_result_name(NULL, OPARA_CUDA_ERROR_NOT_READY), "CUDA_ERROR_NOT_READY");
}

/* ---- the dynamic-library layer (opara.h's BLAS and CPU-affinity calls use it too) ---------------- */

OT_TEST(dl_layer_opens_looks_up_and_explains) {
    char err[512] = "unchanged";
    void* lib = opara_dl_open("/nonexistent/libopara_none.so", err, sizeof err);
    void* self;
    CHECK(lib == NULL);
    /* the system's reason without the path, which the caller's message names itself */
    CHECK(contains(err, "No such file or directory"));
    CHECK(!contains(err, "/nonexistent/libopara_none.so"));
    lib = opara_dl_open("libm.so.6", err, sizeof err);
    REQUIRE(lib != NULL);
    CHECK(opara_dl_sym(lib, "cos") != NULL);
    CHECK(opara_dl_sym(lib, "opara_no_such_symbol") == NULL);
    opara_dl_close(lib);
    self = opara_dl_open(NULL, NULL, 0); /* the program and what it loaded: libc's malloc */
    REQUIRE(self != NULL);
    CHECK(opara_dl_sym(self, "malloc") != NULL);
    opara_dl_close(self);
    opara_dl_close(NULL); /* ignored */
}

/* ---- the toolkit's stub driver (last: it takes the soname libcuda.so.1) ------------------------- */

OT_TEST(driver_stub_library) {
    static const char* const stubs[] = {"/usr/local/cuda/lib64/stubs/libcuda.so", "/usr/local/cuda/lib/stubs/libcuda.so"};
    const char* stub = getenv("OPARA_TEST_CUDA_STUB");
    opara_cuda_driver cu;
    opara_CUresult r;
    const char* name = NULL;
    char err[2048];
    size_t i;
    for (i = 0; !stub && i < sizeof stubs / sizeof stubs[0]; ++i)
        if (file_exists(stubs[i])) stub = stubs[i];
    if (!stub) SKIP("no CUDA toolkit stub libcuda.so (set OPARA_TEST_CUDA_STUB)");
    CHECK_EQ(opara_cuda_driver_load(&cu, stub, err, sizeof err), OPARA_CUDA_LOAD_OK);
    OT_LOG("%s: %s", stub, err);
    REQUIRE(cu.library != NULL);
    CHECK_EQ(driver_missing(T, &cu), 0);
    CHECK_STR(cu.path, stub);
    r = cu.cuInit(0);
    CHECK_EQ(r, 34);
    CHECK_STR(opara_cuda_driver_result_name(&cu, r), "CUDA_ERROR_STUB_LIBRARY");
    CHECK_STR(opara_cuda_result_name(r), "CUDA_ERROR_STUB_LIBRARY");
    /* The stub's own cuGetErrorName fails too, which is why the helper has its own table. */
    if (cu.cuGetErrorName(r, &name) == OPARA_CUDA_SUCCESS) CHECK_STR(name, "CUDA_ERROR_STUB_LIBRARY");
    opara_cuda_driver_unload(&cu);
    CHECK(cu.library == NULL && cu.cuInit == NULL);
}

/* ==== directory search: child processes under a loader that ignores the system's cache ========== */
/* NVIDIA's libraries are on this machine's ldconfig path, so a bare name would always find them
   before any directory is searched. Each directory check therefore runs in a child process that
   re-executes this binary through the dynamic loader with --inhibit-cache (glibc's ld.so option:
   /etc/ld.so.cache is not read, only the default directories /lib, /usr/lib and their multiarch
   ones are) and a controlled environment (no LD_LIBRARY_PATH; only the variables under test). The
   child first checks that a bare name does not load, and skips otherwise. The library itself
   never sets environment variables; the tests set them for their children only. The fixture is a
   temporary tree shaped like pip wheels, conda, a toolkit, ~/.local, a venv on PATH and a system
   root (OPARA_CUDA_SYSTEM_PREFIX points the fixed places there), holding symbolic links to the
   emulator's cuBLAS and cuDNN (build/cudaemu) and to NVIDIA's NVRTC, cuBLAS and cuDNN
   ($OPARA_CUDA_HOME/lib64, default /usr/local/cuda/lib64; those checks skip without them). */

static char fx_root[600];    /* the fixture's root (parent and child) */
static char fx_emu[600];     /* the emulator's libraries */
static char fx_nvidia[600];  /* NVIDIA's libraries */
static char self_exe[1024];  /* this binary */
static char fx_other_lib[1024]; /* a loadable library of ours with no soname (the fake old driver) */
static char interpreter[512]; /* its dynamic loader (PT_INTERP) */

static const char* fx(const char* rel) { /* root + "/" + rel, in one of 8 rotating buffers */
    static char bufs[8][900];
    static int next;
    char* b = bufs[next++ & 7];
    snprintf(b, sizeof bufs[0], "%s/%s", fx_root, rel);
    return b;
}

/* ---- child side --------------------------------------------------------------------------------- */

#define CHILD_SKIP 77

/* A library status and path/origin check shared by the scenarios. */
#define CHECK_FOUND(status, table, want_rel, want_origin) \
    do { \
        CHECK_EQ(status, OPARA_CUDA_LOAD_OK); \
        CHECK_STR((table).path, fx(want_rel)); \
        if (!contains((table).origin, want_origin)) { \
            OT_LOG("origin \"%s\" lacks \"%s\"", (table).origin, want_origin); \
            CHECK(0); \
        } \
    } while (0)

/* Whether the system loader path (without the cache) already has soname: then a search never reaches the
   fixture's directories for it (Ubuntu puts NVIDIA's cuDNN in /lib/x86_64-linux-gnu). */
static int on_default_path(const char* soname) {
    void* h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (h) dlclose(h);
    return h != NULL;
}

/* CHECK_FOUND for cuDNN where the directories can be reached; logged and passed over where not. */
#define CHECK_CUDNN_FOUND(call, lib, rel, origin_part)                                                            \
    do {                                                                                                       \
        if (on_default_path("libcudnn.so.9")) {                                                                \
            memset(&(lib), 0, sizeof(lib)); /* unloading it below does nothing */                              \
            OT_LOG("libcudnn.so.9 is on the default loader path: the %s case is not reachable here", rel);     \
        } else                                                                                                   \
            CHECK_FOUND(call, lib, rel, origin_part);                                                          \
    } while (0)

static void child_needs_emulator(opara_test* T) {
    char path[700];
    snprintf(path, sizeof path, "%s/libcuda.so.1", fx_emu);
    /* the fakes need libcuda.so.1 (DT_NEEDED); loaded first, it is matched by its soname */
    if (!dlopen(path, RTLD_NOW | RTLD_LOCAL)) REQUIRE(!"the emulator's libcuda.so.1 does not load");
}

/* A venv's pip wheels (CUDA 13 layout): cuBLAS from nvidia/cu13/lib, cuDNN from nvidia/cudnn/lib,
   newest Python first (an older python3.9 holds a broken file that must not be reached). */
static void child_pip13(opara_test* T) {
    opara_cuda_cublas blas;
    opara_cuda_cudnn dnn;
    char err[4096];
    child_needs_emulator(T);
    CHECK_FOUND(opara_cuda_cublas_load(&blas, NULL, err, sizeof err), blas,
                "venv/lib/python3.12/site-packages/nvidia/cu13/lib/libcublas.so.13", "VIRTUAL_ENV");
    /* the second one is found through the first: the site-packages beside the loaded cuBLAS */
    CHECK_CUDNN_FOUND(opara_cuda_cudnn_load(&dnn, NULL, err, sizeof err), dnn,
                "venv/lib/python3.12/site-packages/nvidia/cudnn/lib/libcudnn.so.9", "the loaded libcublas.so.13");
    OT_LOG("%s", err);
    opara_cuda_cublas_unload(&blas);
    opara_cuda_cudnn_unload(&dnn);
}

/* CUDA 12 wheel layout (nvidia/cublas/lib) of the Python found on PATH (prefix = dir above bin). */
static void child_pip12_path(opara_test* T) {
    opara_cuda_cublas blas;
    opara_cuda_cudnn dnn;
    child_needs_emulator(T);
    CHECK_FOUND(opara_cuda_cublas_load(&blas, NULL, NULL, 0), blas,
                "py/lib/python3.11/site-packages/nvidia/cublas/lib/libcublas.so.12", "python3 on PATH");
    CHECK_CUDNN_FOUND(opara_cuda_cudnn_load(&dnn, NULL, NULL, 0), dnn,
                "py/lib/python3.11/site-packages/nvidia/cudnn/lib/libcudnn.so.9", "the loaded libcublas.so.12");
    opara_cuda_cublas_unload(&blas);
    opara_cuda_cudnn_unload(&dnn);
}

static void child_conda(opara_test* T) {
    opara_cuda_cublas blas;
    opara_cuda_cudnn dnn;
    child_needs_emulator(T);
    CHECK_FOUND(opara_cuda_cublas_load(&blas, NULL, NULL, 0), blas, "conda/lib/libcublas.so.13", "CONDA_PREFIX");
    CHECK_CUDNN_FOUND(opara_cuda_cudnn_load(&dnn, NULL, NULL, 0), dnn, "conda/lib/libcudnn.so.9", "the loaded libcublas.so.13");
    opara_cuda_cublas_unload(&blas);
    opara_cuda_cudnn_unload(&dnn);
}

static void child_toolkit(opara_test* T) {
    opara_cuda_cublas blas;
    child_needs_emulator(T);
    CHECK_FOUND(opara_cuda_cublas_load(&blas, NULL, NULL, 0), blas, "cuda/lib64/libcublas.so.13", "CUDA_HOME");
    opara_cuda_cublas_unload(&blas);
}

/* OPARA_CUDA_LIB_PATH comes before VIRTUAL_ENV (which also holds one); the unversioned name too. */
static void child_lib_path(opara_test* T) {
    opara_cuda_cublas blas;
    child_needs_emulator(T);
    CHECK_FOUND(opara_cuda_cublas_load(&blas, NULL, NULL, 0), blas, "extra/libcublas.so", "OPARA_CUDA_LIB_PATH");
    opara_cuda_cublas_unload(&blas);
}

static void child_home_local(opara_test* T) {
    opara_cuda_cublas blas;
    child_needs_emulator(T);
    CHECK_FOUND(opara_cuda_cublas_load(&blas, NULL, NULL, 0), blas,
                "home/.local/lib/python3.10/site-packages/nvidia/cu13/lib/libcublas.so.13", "~/.local");
    opara_cuda_cublas_unload(&blas);
}

/* The fixed places, under the fake system root: /usr/local/cuda/lib64 and /usr's dist-packages. */
static void child_system(opara_test* T) {
    opara_cuda_cublas blas;
    opara_cuda_cudnn dnn;
    child_needs_emulator(T);
    CHECK_FOUND(opara_cuda_cublas_load(&blas, NULL, NULL, 0), blas, "sys/usr/local/cuda/lib64/libcublas.so.13",
                "the default toolkit");
    CHECK_CUDNN_FOUND(opara_cuda_cudnn_load(&dnn, NULL, NULL, 0), dnn,
                "sys/usr/lib/python3/dist-packages/nvidia/cudnn/lib/libcudnn.so.9", "the system's Python");
    opara_cuda_cublas_unload(&blas);
    opara_cuda_cudnn_unload(&dnn);
}

/* A process that already has PyTorch's CUDA library mapped: its site-packages' wheels are found
   with no variable set. */
static void child_loaded_torch(opara_test* T) {
    opara_cuda_cublas blas;
    opara_cuda_cudnn dnn;
    child_needs_emulator(T);
    REQUIRE(dlopen(fx("site/torch/lib/libtorch_cuda.so"), RTLD_NOW | RTLD_LOCAL) != NULL);
    CHECK_FOUND(opara_cuda_cublas_load(&blas, NULL, NULL, 0), blas, "site/nvidia/cu13/lib/libcublas.so.13",
                "the loaded libtorch_cuda.so");
    CHECK_CUDNN_FOUND(opara_cuda_cudnn_load(&dnn, NULL, NULL, 0), dnn, "site/nvidia/cudnn/lib/libcudnn.so.9", "the loaded lib");
    opara_cuda_cublas_unload(&blas);
    opara_cuda_cudnn_unload(&dnn);
}

/* Once one of our libraries is loaded from a directory (here cuBLAS, by OPARA_CUBLAS), the next
   is looked for beside it. */
static void child_beside(opara_test* T) {
    opara_cuda_cublas blas;
    opara_cuda_cudnn dnn;
    child_needs_emulator(T);
    CHECK_FOUND(opara_cuda_cublas_load(&blas, NULL, NULL, 0), blas, "beside/libcublas.so.13", "from OPARA_CUBLAS");
    CHECK_CUDNN_FOUND(opara_cuda_cudnn_load(&dnn, NULL, NULL, 0), dnn, "beside/libcudnn.so.9", "the loaded libcublas.so.13");
    opara_cuda_cudnn_unload(&dnn);
    opara_cuda_cublas_unload(&blas);
}

/* An explicit choice that fails is not replaced by what the search would find. */
static void child_explicit(opara_test* T) {
    opara_cuda_cublas blas;
    char err[4096];
    child_needs_emulator(T);
    CHECK_EQ(opara_cuda_cublas_load(&blas, NULL, err, sizeof err), OPARA_CUDA_LOAD_NOT_FOUND);
    OT_LOG("%s", err);
    CHECK(contains(err, "from OPARA_CUBLAS"));
    CHECK(!contains(err, "venv"));
    CHECK(blas.library == NULL);
}

/* NOT_FOUND: the names once, each directory once with where it came from, the file that is there
   but does not load with the system's reason, what to set. */
static void child_not_found(opara_test* T) {
    opara_cuda_cublas blas;
    char err[4096];
    CHECK_EQ(opara_cuda_cublas_load(&blas, NULL, err, sizeof err), OPARA_CUDA_LOAD_NOT_FOUND);
    OT_LOG("%s", err);
    CHECK(contains(err, "tried \"libcublas.so.13\", \"libcublas.so.12\", \"libcublas.so.11\", \"libcublas.so\" on the "
                        "system loader path (cannot open shared object file: No such file or directory)"));
    CHECK_EQ(count_of(err, "libcublas.so.12"), 1);
    CHECK(contains(err, fx("emptyvenv/lib/python3.12/site-packages/nvidia/cu13/lib (VIRTUAL_ENV)")));
    CHECK(contains(err, fx("broken/lib (CONDA_PREFIX)")));
    CHECK(contains(err, "1 present but not loadable: "));
    CHECK(contains(err, fx("broken/lib/libcublas.so.13 (file too short)")));
    CHECK(contains(err, "set OPARA_CUBLAS to the library's path, or OPARA_CUDA_LIB_PATH"));
    CHECK(blas.library == NULL && blas.cublasCreate_v2 == NULL);
}

/* Many directories: ten are named, the rest counted; the message stays short. */
static void child_not_found_many(opara_test* T) {
    opara_cuda_cublas blas;
    char err[4096];
    CHECK_EQ(opara_cuda_cublas_load(&blas, NULL, err, sizeof err), OPARA_CUDA_LOAD_NOT_FOUND);
    OT_LOG("%s", err);
    CHECK_EQ(count_of(err, fx("many/d")), 10);
    CHECK(contains(err, " and 20 more; none holds one"));
    CHECK(strlen(err) < 1500);
}

static void child_not_found_nowhere(opara_test* T) {
    opara_cuda_cudnn dnn;
    char err[4096];
    if (on_default_path("libcudnn.so.9")) SKIP("libcudnn.so.9 is on the default loader path: it is found by name");
    CHECK_EQ(opara_cuda_cudnn_load(&dnn, NULL, err, sizeof err), OPARA_CUDA_LOAD_NOT_FOUND);
    OT_LOG("%s", err);
    CHECK(contains(err, "no search directory exists (OPARA_CUDA_LIB_PATH"));
    CHECK(contains(err, "set OPARA_CUDNN"));
}

/* ---- child side: NVIDIA's libraries from directories ----------------------------------------- */

/* NVIDIA's file linked into the fixture (absent where the toolkit's libraries are not installed). */
static void child_needs_file(opara_test* T, const char* rel) {
    if (!file_exists(fx(rel))) SKIP("%s is not installed here (OPARA_CUDA_HOME)", fx(rel));
}

static void child_needs_hidden(opara_test* T, const char* soname) {
    void* h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (h) {
        dlclose(h);
        SKIP("%s is on the default loader path even without the cache: no directory to test", soname);
    }
}

static opara_nvrtcResult compile_scale(opara_test* T, const opara_cuda_nvrtc* nv) {
    opara_nvrtcProgram prog = NULL;
    const char* src = "extern \"C\" __global__ void opara_scale(float* x) { x[threadIdx.x] *= 2.0f; }\n";
    opara_nvrtcResult r;
    if (nv->nvrtcCreateProgram(&prog, src, "opara_scale.cu", 0, NULL, NULL) != OPARA_NVRTC_SUCCESS) return OPARA_NVRTC_ERROR_INVALID_PROGRAM;
    r = nv->nvrtcCompileProgram(prog, 0, NULL);
    if (r != OPARA_NVRTC_SUCCESS) {
        char log[512] = "";
        size_t size = 0;
        if (nv->nvrtcGetProgramLogSize(prog, &size) == OPARA_NVRTC_SUCCESS && size > 1 && size < sizeof log)
            nv->nvrtcGetProgramLog(prog, log);
        OT_LOG("compile: %s %s", opara_nvrtc_result_name(r), log);
    }
    nv->nvrtcDestroyProgram(&prog);
    return r;
}

/* The claim the builtins preload rests on, with NVRTC opened by path and no loader of ours:
   compiling fails while libnvrtc-builtins is not on the loader path, and works once the builtins
   were loaded by their full path (NVRTC's own dlopen by soname then returns that object). */
static void child_nvrtc_raw(opara_test* T) {
    opara_cuda_nvrtc nv;
    void* builtins;
    char builtins_path[700];
    int major = 0, minor = 0;
    child_needs_file(T, "nv/lib/python3.12/site-packages/nvidia/cu13/lib/libnvrtc.so.13");
    if (T->skipped) return;
    child_needs_hidden(T, "libnvrtc.so.13");
    if (T->skipped) return;
    /* the table through our loader, but from the path, and its builtins closed again: a raw NVRTC */
    REQUIRE(opara_cuda_nvrtc_load(&nv, fx("nv/lib/python3.12/site-packages/nvidia/cu13/lib/libnvrtc.so.13"), NULL, 0) ==
            OPARA_CUDA_LOAD_OK);
    REQUIRE(nv.builtins != NULL);
    snprintf(builtins_path, sizeof builtins_path, "%s", nv.builtins_path);
    dlclose(nv.builtins);
    nv.builtins = NULL;
    CHECK(dlopen(builtins_path, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD) == NULL); /* really gone */
    CHECK_EQ(nv.nvrtcVersion(&major, &minor), OPARA_NVRTC_SUCCESS);
    CHECK_EQ(compile_scale(T, &nv), OPARA_NVRTC_ERROR_BUILTIN_OPERATION_FAILURE);
    builtins = dlopen(builtins_path, RTLD_NOW | RTLD_LOCAL);
    REQUIRE(builtins != NULL);
    CHECK_EQ(compile_scale(T, &nv), OPARA_NVRTC_SUCCESS);
    keep_resident(nv.path);
    keep_resident(builtins_path);
    opara_cuda_nvrtc_unload(&nv);
    dlclose(builtins);
}

/* The loader: NVRTC found in a venv's CUDA 13 wheel, its builtins preloaded from there, a kernel
   compiles; the unload closes both. */
static void child_nvrtc_wheel(opara_test* T) {
    opara_cuda_nvrtc nv;
    char err[4096], builtins_path[700];
    child_needs_file(T, "nv/lib/python3.12/site-packages/nvidia/cu13/lib/libnvrtc.so.13");
    if (T->skipped) return;
    child_needs_hidden(T, "libnvrtc.so.13");
    if (T->skipped) return;
    CHECK_FOUND(opara_cuda_nvrtc_load(&nv, NULL, err, sizeof err), nv,
                "nv/lib/python3.12/site-packages/nvidia/cu13/lib/libnvrtc.so.13", "VIRTUAL_ENV");
    REQUIRE(nv.library != NULL);
    CHECK(nv.builtins != NULL);
    CHECK(strncmp(nv.builtins_path, fx("nv/lib/python3.12/site-packages/nvidia/cu13/lib/libnvrtc-builtins.so."),
                  strlen(fx("nv/lib/python3.12/site-packages/nvidia/cu13/lib/libnvrtc-builtins.so."))) == 0);
    CHECK_EQ(compile_scale(T, &nv), OPARA_NVRTC_SUCCESS);
    snprintf(builtins_path, sizeof builtins_path, "%s", nv.builtins_path);
    keep_resident(nv.path);
    keep_resident(builtins_path);
    opara_cuda_nvrtc_unload(&nv);
    CHECK(nv.library == NULL && nv.builtins == NULL);
#ifndef TEST_ASAN
    CHECK(dlopen(builtins_path, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD) == NULL); /* closed with NVRTC */
#endif
}

/* cuBLAS needs libcublasLt (DT_NEEDED), found through its RUNPATH $ORIGIN: in the same directory.
   Without it the file is there but does not load, and the message says why. */
static void child_cublas_wheel(opara_test* T) {
    opara_cuda_cublas blas;
    char err[4096];
    int major = 0;
    child_needs_file(T, "blas/ok/lib/python3.12/site-packages/nvidia/cu13/lib/libcublas.so.13");
    if (T->skipped) return;
    child_needs_hidden(T, "libcublas.so.13");
    if (T->skipped) return;
    CHECK_FOUND(opara_cuda_cublas_load(&blas, NULL, err, sizeof err), blas,
                "blas/ok/lib/python3.12/site-packages/nvidia/cu13/lib/libcublas.so.13", "VIRTUAL_ENV");
    if (blas.library) {
        CHECK_EQ(blas.cublasGetProperty(OPARA_MAJOR_VERSION, &major), OPARA_CUBLAS_STATUS_SUCCESS);
        CHECK_EQ(major, 13);
        keep_resident(blas.path);
    }
    opara_cuda_cublas_unload(&blas);
}

static void child_cublas_without_lt(opara_test* T) {
    opara_cuda_cublas blas;
    char err[4096];
    child_needs_file(T, "blas/nolt/lib/python3.12/site-packages/nvidia/cu13/lib/libcublas.so.13");
    if (T->skipped) return;
    child_needs_hidden(T, "libcublas.so.13");
    if (T->skipped) return;
    CHECK_EQ(opara_cuda_cublas_load(&blas, NULL, err, sizeof err), OPARA_CUDA_LOAD_NOT_FOUND);
    OT_LOG("%s", err);
    CHECK(contains(err, "1 present but not loadable: "));
    CHECK(contains(err, "libcublasLt.so.13: cannot open shared object file"));
}

/* cuDNN 9 loads its sub-libraries itself, through its RUNPATH $ORIGIN: from a directory it works
   as a whole; without libcudnn_cnn the load says so (the probe's convolution descriptor).
   Not under AddressSanitizer: its dlopen interceptor makes libasan the caller of cuDNN's dlopen,
   so cuDNN's RUNPATH is not used and the sub-libraries are not found off the loader path
   (LD_DEBUG shows only the system directories searched). */
static void child_skip_under_asan(opara_test* T) {
#ifdef TEST_ASAN
    SKIP("AddressSanitizer's dlopen interceptor hides cuDNN's RUNPATH from cuDNN's own dlopen");
#else
    (void)T;
#endif
}

static void child_cudnn_wheel(opara_test* T) {
    opara_cuda_cudnn dnn;
    char err[4096];
    child_skip_under_asan(T);
    if (T->skipped) return;
    child_needs_file(T, "dnn/ok/lib/python3.12/site-packages/nvidia/cudnn/lib/libcudnn.so.9");
    if (T->skipped) return;
    child_needs_hidden(T, "libcudnn.so.9");
    if (T->skipped) return;
    CHECK_FOUND(opara_cuda_cudnn_load(&dnn, NULL, err, sizeof err), dnn,
                "dnn/ok/lib/python3.12/site-packages/nvidia/cudnn/lib/libcudnn.so.9", "VIRTUAL_ENV");
    OT_LOG("%s", err);
    if (dnn.library) {
        CHECK(dnn.cudnnGetVersion() >= 90000);
        keep_resident(dnn.path);
    }
    opara_cuda_cudnn_unload(&dnn);
}

static void child_cudnn_without_cnn(opara_test* T) {
    opara_cuda_cudnn dnn;
    char err[4096];
    child_skip_under_asan(T);
    if (T->skipped) return;
    child_needs_file(T, "dnn/nocnn/lib/python3.12/site-packages/nvidia/cudnn/lib/libcudnn.so.9");
    if (T->skipped) return;
    child_needs_hidden(T, "libcudnn.so.9");
    if (T->skipped) return;
    CHECK_EQ(opara_cuda_cudnn_load(&dnn, NULL, err, sizeof err), OPARA_CUDA_LOAD_INCOMPLETE);
    OT_LOG("%s", err);
    CHECK(contains(err, "CUDNN_STATUS_NOT_SUPPORTED_SUBLIBRARY_UNAVAILABLE (3009)"));
    CHECK(contains(err, fx("dnn/nocnn/lib/python3.12/site-packages/nvidia/cudnn/lib")));
    CHECK(dnn.library == NULL && dnn.cudnnCreate == NULL);
}

typedef struct child_scenario {
    const char* name;
    void (*fn)(opara_test* T);
} child_scenario;

static const child_scenario child_scenarios[] = {
    {"pip13", child_pip13}, {"pip12_path", child_pip12_path}, {"conda", child_conda}, {"toolkit", child_toolkit},
    {"lib_path", child_lib_path}, {"home_local", child_home_local}, {"system", child_system},
    {"loaded_torch", child_loaded_torch}, {"beside", child_beside}, {"explicit", child_explicit},
    {"not_found", child_not_found}, {"not_found_many", child_not_found_many},
    {"not_found_nowhere", child_not_found_nowhere}, {"nvrtc_raw", child_nvrtc_raw},
    {"nvrtc_wheel", child_nvrtc_wheel}, {"cublas_wheel", child_cublas_wheel},
    {"cublas_without_lt", child_cublas_without_lt}, {"cudnn_wheel", child_cudnn_wheel},
    {"cudnn_without_cnn", child_cudnn_without_cnn},
};

/* argv: --child NAME ROOT EMU NVIDIA SYSROOT. Exit 0 passed, 1 failed, CHILD_SKIP skipped. */
static int child_main(int argc, char** argv) {
    opara_test t;
    size_t i;
    if (argc < 7) return 2;
    snprintf(fx_root, sizeof fx_root, "%s", argv[3]);
    snprintf(fx_emu, sizeof fx_emu, "%s", argv[4]);
    snprintf(fx_nvidia, sizeof fx_nvidia, "%s", argv[5]);
    snprintf(fx_sys, sizeof fx_sys, "%s", argv[6]);
    memset(&t, 0, sizeof t);
    t.name = argv[2];
    for (i = 0; i < sizeof child_scenarios / sizeof child_scenarios[0]; ++i)
        if (strcmp(child_scenarios[i].name, argv[2]) == 0) break;
    if (i == sizeof child_scenarios / sizeof child_scenarios[0]) return 2;
    child_scenarios[i].fn(&t);
    if (t.failures && t.log_len) printf("  child log:\n%s", t.log);
    if (t.skipped) printf("  child skipped: %s\n", t.skip_reason);
    fflush(stdout);
    return t.failures ? 1 : t.skipped ? CHILD_SKIP : 0;
}

/* ---- parent side: the fixture ------------------------------------------------------------------- */

static int fx_ok;       /* the fixture exists */
static int fx_have_emu; /* the emulator's libraries are there */

static int make_dirs(const char* path) {
    char buf[900];
    size_t i;
    snprintf(buf, sizeof buf, "%s", path);
    for (i = 1; buf[i]; ++i)
        if (buf[i] == '/') {
            buf[i] = 0;
            if (mkdir(buf, 0755) != 0 && errno != EEXIST) return -1;
            buf[i] = '/';
        }
    return mkdir(buf, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

/* rel (under the root) becomes a link to target; its directories are made. */
static int fx_link(const char* rel, const char* target) {
    char dir[900];
    const char* path = fx(rel);
    snprintf(dir, sizeof dir, "%s", path);
    *strrchr(dir, '/') = 0;
    return make_dirs(dir) == 0 && symlink(target, path) == 0 ? 0 : -1;
}

static int fx_file(const char* rel, int mode) { /* an empty file */
    char dir[900];
    const char* path = fx(rel);
    int fd;
    snprintf(dir, sizeof dir, "%s", path);
    *strrchr(dir, '/') = 0;
    if (make_dirs(dir) != 0 || (fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, mode)) < 0) return -1;
    close(fd);
    return 0;
}

static int fx_emu_link(const char* rel, const char* lib) {
    char target[900];
    snprintf(target, sizeof target, "%s/%s", fx_emu, lib);
    return fx_link(rel, target);
}

/* The emulator's cuDNN at rel (".../libcudnn.so.9") with its convolution sub-library beside it, as cuDNN 9
   is installed (the fake loads libcudnn_cnn.so.9 from its own directory at the first convolution call). */
static int fx_emu_cudnn(const char* rel) {
    char cnn[700];
    const char* slash = strrchr(rel, '/');
    int dir_len = slash ? (int)(slash - rel) : 0;
    snprintf(cnn, sizeof cnn, "%.*s%slibcudnn_cnn.so.9", dir_len, rel, slash ? "/" : "");
    return fx_emu_link(rel, "libcudnn.so") | fx_emu_link(cnn, "libcudnn_cnn.so.9");
}

/* Links every file of NVIDIA's directory whose name starts with one of prefixes (and is a
   versioned soname: has ".so."), except those starting with skip, into dir. */
static int fx_nvidia_links(const char* dir, const char* const* prefixes, const char* skip) {
    DIR* d = opendir(fx_nvidia);
    struct dirent* e;
    int n = 0;
    if (!d) return 0;
    while ((e = readdir(d)) != NULL) {
        const char* const* p;
        char rel[700], target[900];
        if (!strstr(e->d_name, ".so.") || strstr(e->d_name, ".alt.") || (skip && strncmp(e->d_name, skip, strlen(skip)) == 0))
            continue;
        for (p = prefixes; *p && strncmp(e->d_name, *p, strlen(*p)) != 0; ++p) {
        }
        if (!*p) continue;
        snprintf(rel, sizeof rel, "%s/%s", dir, e->d_name);
        snprintf(target, sizeof target, "%s/%s", fx_nvidia, e->d_name);
        if (fx_link(rel, target) == 0) ++n;
    }
    closedir(d);
    return n;
}

static int fx_build_emulator_layouts(void) {
    const char* site = "venv/lib/python3.12/site-packages/nvidia";
    char rel[300];
    int i, bad = 0;
    snprintf(rel, sizeof rel, "%s/cu13/lib/libcublas.so.13", site);
    bad |= fx_emu_link(rel, "libcublas.so");
    snprintf(rel, sizeof rel, "%s/cudnn/lib/libcudnn.so.9", site);
    bad |= fx_emu_cudnn(rel);
    bad |= fx_file("venv/lib/python3.9/site-packages/nvidia/cu13/lib/libcublas.so.13", 0644);
    bad |= fx_file("py/bin/python3.11", 0755);
    bad |= fx_emu_link("py/lib/python3.11/site-packages/nvidia/cublas/lib/libcublas.so.12", "libcublas.so");
    bad |= fx_emu_cudnn("py/lib/python3.11/site-packages/nvidia/cudnn/lib/libcudnn.so.9");
    bad |= fx_emu_link("conda/lib/libcublas.so.13", "libcublas.so");
    bad |= fx_emu_cudnn("conda/lib/libcudnn.so.9");
    bad |= fx_emu_link("cuda/lib64/libcublas.so.13", "libcublas.so");
    bad |= fx_emu_link("extra/libcublas.so", "libcublas.so");
    bad |= make_dirs(fx("nothing"));
    bad |= fx_emu_link("home/.local/lib/python3.10/site-packages/nvidia/cu13/lib/libcublas.so.13", "libcublas.so");
    bad |= fx_emu_link("sys/usr/local/cuda/lib64/libcublas.so.13", "libcublas.so");
    bad |= fx_emu_cudnn("sys/usr/lib/python3/dist-packages/nvidia/cudnn/lib/libcudnn.so.9");
    bad |= fx_link("site/torch/lib/libtorch_cuda.so", fx_other_lib); /* a library without a CUDA soname */
    bad |= fx_emu_link("site/nvidia/cu13/lib/libcublas.so.13", "libcublas.so");
    bad |= fx_emu_cudnn("site/nvidia/cudnn/lib/libcudnn.so.9");
    bad |= fx_emu_link("beside/libcublas.so.13", "libcublas.so");
    bad |= fx_emu_cudnn("beside/libcudnn.so.9");
    bad |= fx_file("broken/lib/libcublas.so.13", 0644);
    bad |= make_dirs(fx("emptyvenv/lib/python3.12/site-packages/nvidia/cu13/lib"));
    bad |= make_dirs(fx("empty-root"));
    for (i = 0; i < 30; ++i) {
        snprintf(rel, sizeof rel, "many/d%02d", i);
        bad |= make_dirs(fx(rel));
    }
    return bad;
}

static void fx_build_nvidia_layouts(void) {
    static const char* const nvrtc[] = {"libnvrtc.so.", "libnvrtc-builtins.so.", NULL};
    static const char* const blas[] = {"libcublas.so.", "libcublasLt.so.", NULL};
    static const char* const blas_only[] = {"libcublas.so.", NULL};
    static const char* const dnn[] = {"libcudnn", NULL};
    fx_nvidia_links("nv/lib/python3.12/site-packages/nvidia/cu13/lib", nvrtc, NULL);
    fx_nvidia_links("blas/ok/lib/python3.12/site-packages/nvidia/cu13/lib", blas, NULL);
    fx_nvidia_links("blas/nolt/lib/python3.12/site-packages/nvidia/cu13/lib", blas_only, NULL);
    fx_nvidia_links("dnn/ok/lib/python3.12/site-packages/nvidia/cudnn/lib", dnn, NULL);
    fx_nvidia_links("dnn/nocnn/lib/python3.12/site-packages/nvidia/cudnn/lib", dnn, "libcudnn_cnn");
}

static int find_interpreter(struct dl_phdr_info* info, size_t size, void* data) {
    int i;
    (void)size, (void)data;
    for (i = 0; i < (int)info->dlpi_phnum; ++i)
        if (info->dlpi_phdr[i].p_type == PT_INTERP)
            snprintf(interpreter, sizeof interpreter, "%s", (const char*)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr));
    return 1; /* the first object is the program */
}

static int rm_entry(const char* path, const struct stat* st, int flag, struct FTW* ftw) {
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}
static void fx_remove(void) {
    if (fx_ok) nftw(fx_root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* Builds the fixture once; 0 (with why) when the children cannot run here. */
static int fixture(char* why, size_t cap) {
    static int tried;
    static char reason[256];
    char tmpl[] = "/tmp/opara_loader_XXXXXX", emu[700];
    ssize_t n;
    if (tried) return snprintf(why, cap, "%s", reason), fx_ok;
    tried = 1;
    dl_iterate_phdr(find_interpreter, NULL);
    n = readlink("/proc/self/exe", self_exe, sizeof self_exe - 1);
    if (n <= 0 || !interpreter[0] || !file_exists(interpreter)) {
        snprintf(reason, sizeof reason, "no /proc/self/exe or program interpreter");
        return snprintf(why, cap, "%s", reason), 0;
    }
    self_exe[n] = 0;
    if (!mkdtemp(tmpl)) return snprintf(why, cap, "mkdtemp failed"), 0;
    snprintf(fx_root, sizeof fx_root, "%s", tmpl);
    fx_ok = 1;
    atexit(fx_remove);
    snprintf(emu, sizeof emu, "%s/libcublas.so", fx_emu);
    fx_have_emu = file_exists(emu);
    if (fx_have_emu && fx_build_emulator_layouts() != 0) {
        snprintf(reason, sizeof reason, "could not build the fixture in %.200s", fx_root);
        return snprintf(why, cap, "%s", reason), 0;
    }
    fx_build_nvidia_layouts();
    snprintf(reason, sizeof reason, "%s", "");
    return 1;
}

/* Runs scenario in a child through the loader with --inhibit-cache and exactly env (plus the
   sanitizers' options); the system root is sysroot (under the fixture). Returns its exit status. */
static int run_child(const char* scenario, const char* sysroot, const char* const* env) {
    static const char* const keep[] = {"ASAN_OPTIONS", "LSAN_OPTIONS", "UBSAN_OPTIONS"};
    const char* argv[12];
    char* envp[24];
    char kept[3][600];
    int n = 0, i, status = 0;
    pid_t pid;
    for (i = 0; env[i] && n < 16; ++i) envp[n++] = (char*)env[i];
    for (i = 0; i < 3; ++i)
        if (getenv(keep[i])) {
            snprintf(kept[i], sizeof kept[i], "%s=%s", keep[i], getenv(keep[i]));
            envp[n++] = kept[i];
        }
    envp[n] = NULL;
    argv[0] = interpreter;
    argv[1] = "--inhibit-cache";
    argv[2] = self_exe;
    argv[3] = "--child";
    argv[4] = scenario;
    argv[5] = fx_root;
    argv[6] = fx_emu;
    argv[7] = fx_nvidia;
    argv[8] = fx(sysroot);
    argv[9] = NULL;
    fflush(stdout);
    pid = fork();
    if (pid == 0) {
        execve(interpreter, (char* const*)argv, envp);
        _exit(3);
    }
    if (pid < 0 || waitpid(pid, &status, 0) != pid) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

/* One scenario as a test: env entries may use "%R", replaced by the fixture's root. */
static void child_test(opara_test* T, const char* scenario, int needs_emu, const char* const* env_tmpl) {
    char why[256], env_buf[16][900];
    const char* env[17];
    int i, rc;
    if (!fixture(why, sizeof why)) SKIP("%s", why);
    if (needs_emu && !fx_have_emu) SKIP("the emulator's libraries are not built in %s (make cudaemu)", fx_emu);
    for (i = 0; env_tmpl[i] && i < 16; ++i) {
        const char* in = env_tmpl[i];
        size_t at = 0;
        while (*in && at + 1 < sizeof env_buf[i]) {
            if (in[0] == '%' && in[1] == 'R') {
                at += (size_t)snprintf(env_buf[i] + at, sizeof env_buf[i] - at, "%s", fx_root);
                in += 2;
            } else {
                env_buf[i][at++] = *in++;
            }
        }
        env_buf[i][at < sizeof env_buf[i] ? at : sizeof env_buf[i] - 1] = 0;
        env[i] = env_buf[i];
    }
    env[i] = NULL;
    rc = run_child(scenario, strcmp(scenario, "system") == 0 ? "sys" : "empty-root", env);
    if (rc == CHILD_SKIP) SKIP("child %s skipped (its output says why)", scenario);
    if (rc != 0) OT_LOG("child %s exited with %d", scenario, rc);
    CHECK_EQ(rc, 0);
}

#define CHILD_ENV(...) static const char* const env[] = {"PATH=/nonexistent", "HOME=/nonexistent", __VA_ARGS__, NULL}

OT_TEST(dir_search_pip_cuda13_wheels_of_virtual_env) {
    CHILD_ENV("VIRTUAL_ENV=%R/venv");
    child_test(T, "pip13", 1, env);
}
OT_TEST(dir_search_pip_cuda12_wheels_of_python_on_path) {
    static const char* const env[] = {"PATH=/nonexistent:relative/bin:%R/py/bin", "HOME=/nonexistent", NULL};
    child_test(T, "pip12_path", 1, env);
}
OT_TEST(dir_search_conda_prefix) {
    CHILD_ENV("CONDA_PREFIX=%R/conda");
    child_test(T, "conda", 1, env);
}
OT_TEST(dir_search_cuda_home) {
    CHILD_ENV("CUDA_HOME=%R/cuda");
    child_test(T, "toolkit", 1, env);
}
OT_TEST(dir_search_opara_cuda_lib_path_comes_first) {
    CHILD_ENV("OPARA_CUDA_LIB_PATH=%R/nothing:%R/extra", "VIRTUAL_ENV=%R/venv");
    child_test(T, "lib_path", 1, env);
}
OT_TEST(dir_search_home_local) {
    static const char* const env[] = {"PATH=/nonexistent", "HOME=%R/home", NULL};
    child_test(T, "home_local", 1, env);
}
OT_TEST(dir_search_system_places) {
    CHILD_ENV("LANG=C");
    child_test(T, "system", 1, env);
}
OT_TEST(dir_search_beside_a_loaded_pytorch) {
    CHILD_ENV("LANG=C");
    child_test(T, "loaded_torch", 1, env);
}
OT_TEST(dir_search_beside_our_loaded_library) {
    CHILD_ENV("OPARA_CUBLAS=%R/beside/libcublas.so.13");
    child_test(T, "beside", 1, env);
}
OT_TEST(dir_search_never_replaces_an_explicit_choice) {
    CHILD_ENV("OPARA_CUBLAS=%R/nonexistent/libcublas.so.13", "VIRTUAL_ENV=%R/venv");
    child_test(T, "explicit", 1, env);
}
OT_TEST(dir_search_not_found_message) {
    CHILD_ENV("VIRTUAL_ENV=%R/emptyvenv", "CONDA_PREFIX=%R/broken");
    child_test(T, "not_found", 0, env);
}
/* 30 directories in OPARA_CUDA_LIB_PATH, none holding cuBLAS. */
OT_TEST(dir_search_not_found_message_is_bounded) {
    static char list[4096];
    const char* env[4];
    char why[256];
    size_t at;
    int i;
    if (!fixture(why, sizeof why)) SKIP("%s", why);
    at = (size_t)snprintf(list, sizeof list, "OPARA_CUDA_LIB_PATH=");
    for (i = 0; i < 30 && at < sizeof list; ++i)
        at += (size_t)snprintf(list + at, sizeof list - at, "%s%s/many/d%02d", i ? ":" : "", fx_root, i);
    env[0] = "PATH=/nonexistent";
    env[1] = "HOME=/nonexistent";
    env[2] = list;
    env[3] = NULL;
    CHECK_EQ(run_child("not_found_many", "empty-root", env), 0);
}
OT_TEST(dir_search_not_found_without_any_directory) {
    CHILD_ENV("LANG=C");
    child_test(T, "not_found_nowhere", 0, env);
}
OT_TEST(nvrtc_builtins_must_be_loaded_for_nvrtc_from_a_directory) {
    CHILD_ENV("LANG=C");
    child_test(T, "nvrtc_raw", 0, env);
}
OT_TEST(nvrtc_from_a_wheel_compiles_with_its_builtins_preloaded) {
    CHILD_ENV("VIRTUAL_ENV=%R/nv");
    child_test(T, "nvrtc_wheel", 0, env);
}
OT_TEST(cublas_from_a_wheel_finds_cublaslt_beside_it) {
    CHILD_ENV("VIRTUAL_ENV=%R/blas/ok");
    child_test(T, "cublas_wheel", 0, env);
}
OT_TEST(cublas_without_cublaslt_is_reported) {
    CHILD_ENV("VIRTUAL_ENV=%R/blas/nolt");
    child_test(T, "cublas_without_lt", 0, env);
}
OT_TEST(cudnn_from_a_wheel_loads_its_sublibraries) {
    CHILD_ENV("VIRTUAL_ENV=%R/dnn/ok");
    child_test(T, "cudnn_wheel", 0, env);
}
OT_TEST(cudnn_without_libcudnn_cnn_is_reported_at_load) {
    CHILD_ENV("VIRTUAL_ENV=%R/dnn/nocnn");
    child_test(T, "cudnn_without_cnn", 0, env);
}

static const opara_test_case tests[] = {
    OT_CASE(driver_absent_names_every_path),
    OT_CASE(driver_override_path_is_reported_not_replaced),
    OT_CASE(override_from_environment_and_argument_wins),
    OT_CASE(bad_arguments_and_small_buffers),
    OT_CASE(driver_too_old_names_missing_entry_point),
    OT_CASE(driver_entry_points_through_get_proc_address),
    OT_CASE(driver_version_below_minimum_is_refused),
    OT_CASE(nvrtc_loads_and_compiles),
    OT_CASE(nvrtc_compile_error_and_names),
    OT_CASE(cublas_loads_and_needs_a_gpu),
    OT_CASE(cudnn_loads_and_computes_conv_shape),
    OT_CASE(names_of_unknown_codes), OT_CASE(dl_layer_opens_looks_up_and_explains),
    OT_CASE(dir_search_pip_cuda13_wheels_of_virtual_env),
    OT_CASE(dir_search_pip_cuda12_wheels_of_python_on_path),
    OT_CASE(dir_search_conda_prefix),
    OT_CASE(dir_search_cuda_home),
    OT_CASE(dir_search_opara_cuda_lib_path_comes_first),
    OT_CASE(dir_search_home_local),
    OT_CASE(dir_search_system_places),
    OT_CASE(dir_search_beside_a_loaded_pytorch),
    OT_CASE(dir_search_beside_our_loaded_library),
    OT_CASE(dir_search_never_replaces_an_explicit_choice),
    OT_CASE(dir_search_not_found_message),
    OT_CASE(dir_search_not_found_message_is_bounded),
    OT_CASE(dir_search_not_found_without_any_directory),
    OT_CASE(nvrtc_builtins_must_be_loaded_for_nvrtc_from_a_directory),
    OT_CASE(nvrtc_from_a_wheel_compiles_with_its_builtins_preloaded),
    OT_CASE(cublas_from_a_wheel_finds_cublaslt_beside_it),
    OT_CASE(cublas_without_cublaslt_is_reported),
    OT_CASE(cudnn_from_a_wheel_loads_its_sublibraries),
    OT_CASE(cudnn_without_libcudnn_cnn_is_reported_at_load),
    OT_CASE(driver_stub_library),
};

/* --print-libs: what this process finds, as shell assignments of the full paths
   (`eval "$(build/tests/test_cuda_loader --print-libs)"` pins the libraries the search finds for
   tools that take explicit paths, such as make test-gpu), with how each was found; a library that
   is not found is a comment with the reason. Run it with the OPARA_<LIB> variables unset to see
   the search itself. */
static int print_libs(void) {
    static char err[4096];
    opara_cuda_driver cu;
    opara_cuda_nvrtc nv;
    opara_cuda_cublas blas;
    opara_cuda_cudnn dnn;
    opara_cuda_cupti cupti;
#define PRINT_LIB(var, load, table, unload) \
    if (load(&table, NULL, err, sizeof err) == OPARA_CUDA_LOAD_OK) { \
        printf("export %s='%s' # %s\n", var, table.path, table.origin); \
        unload(&table); \
    } else { \
        printf("# %s: %s\n", var, err); \
    }
    PRINT_LIB("OPARA_CUDA_DRIVER", opara_cuda_driver_load, cu, opara_cuda_driver_unload)
    PRINT_LIB("OPARA_NVRTC", opara_cuda_nvrtc_load, nv, opara_cuda_nvrtc_unload)
    PRINT_LIB("OPARA_CUBLAS", opara_cuda_cublas_load, blas, opara_cuda_cublas_unload)
    PRINT_LIB("OPARA_CUDNN", opara_cuda_cudnn_load, dnn, opara_cuda_cudnn_unload)
    PRINT_LIB("OPARA_CUPTI", opara_cuda_cupti_load, cupti, opara_cuda_cupti_unload)
#undef PRINT_LIB
    return 0;
}

int main(int argc, char** argv) {
    const char* slash = argc > 0 ? strrchr(argv[0], '/') : NULL;
    int dir_len = slash ? (int)(slash - argv[0] + 1) : 0;
    const char* dir = slash ? argv[0] : "";
    const char* cuda_home = getenv("OPARA_CUDA_HOME");
    char emu[1200];
    if (argc > 1 && strcmp(argv[1], "--print-libs") == 0) return print_libs();
    if (argc > 2 && strcmp(argv[1], "--child") == 0) {
        snprintf(fx_sys, sizeof fx_sys, "%s", argc > 6 ? argv[6] : "/nonexistent");
        return child_main(argc, argv);
    }
    snprintf(emu, sizeof emu, "%.*s../cudaemu", dir_len, dir);
    {
        static char resolved[4096]; /* realpath writes up to PATH_MAX */
        snprintf(fx_emu, sizeof fx_emu, "%.*s", (int)sizeof fx_emu - 1, realpath(emu, resolved) ? resolved : emu);
        snprintf(emu, sizeof emu, "%.*s../cuda/libopara_fake_old_cuda.so", dir_len, dir);
        snprintf(fx_other_lib, sizeof fx_other_lib, "%.*s", (int)sizeof fx_other_lib - 1,
                 realpath(emu, resolved) ? resolved : emu);
    }
    snprintf(fx_nvidia, sizeof fx_nvidia, "%s/lib64", cuda_home && *cuda_home ? cuda_home : "/usr/local/cuda");
    snprintf(fake_driver_path, sizeof fake_driver_path, "%.*s../cuda/libopara_fake_old_cuda.so", dir_len, dir);
    snprintf(fake_cuda13_path, sizeof fake_cuda13_path, "%.*s../cuda/libopara_fake_cuda13.so", dir_len, dir);
    snprintf(fake_cuda11_path, sizeof fake_cuda11_path, "%.*s../cuda/libopara_fake_cuda11.so", dir_len, dir);
    /* The loader reads these; the tests choose their own values. */
    unsetenv("OPARA_CUDA_DRIVER");
    unsetenv("OPARA_NVRTC");
    unsetenv("OPARA_CUBLAS");
    unsetenv("OPARA_CUDNN");
    keep_nvidia_libraries_resident();
    return opara_test_main(argc, argv, tests, OT_COUNT(tests));
}

#endif /* fakes */
