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
   instead one of the fake drivers; mk/cuda.mk builds them into build/.../cuda/. */
#if defined(OPARA_TEST_FAKE_PROC_DRIVER)
/* A driver that exports only cuDriverGetVersion and cuGetProcAddress_v2 (the version is
   OPARA_TEST_FAKE_PROC_DRIVER), so a complete table proves every entry point came through
   cuGetProcAddress. It logs each request as "name@version;" for the test to read. */
#include <string.h>

static char request_log[8192];

const char* opara_fake_requests(void);
int cuDriverGetVersion(int* version);
int cuGetProcAddress_v2(const char* symbol, void** pfn, int version, unsigned long long flags, int* status);

static int fake_init(unsigned int flags) { return flags == 0 ? 0 : 1; }
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

#define _POSIX_C_SOURCE 200809L
#define OPARA_CUDA_IMPLEMENTATION
#include "opara_cuda.h"
#include "opara_test.h"

#include <dlfcn.h>

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
    CHECK(contains(err, "\"libcuda.so.1\""));
    CHECK(contains(err, "\"libcuda.so\""));
    CHECK_EQ(count_of(err, "cannot open shared object file"), 2); /* dlerror()'s reason for each */
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
    OT_LOG("%s: NVRTC %d.%d", nv.path, major, minor);
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

OT_TEST(cublas_loads_and_needs_a_gpu) {
    opara_cuda_cublas blas;
    opara_cublasHandle_t handle = NULL;
    char err[2048];
    int major = 0;
    if (opara_cuda_cublas_load(&blas, NULL, err, sizeof err) != OPARA_CUDA_LOAD_OK) SKIP("%s", err);
    CHECK_EQ(cublas_missing(T, &blas), 0);
    CHECK_EQ(blas.cublasGetProperty(OPARA_MAJOR_VERSION, &major), OPARA_CUBLAS_STATUS_SUCCESS);
    OT_LOG("%s: cuBLAS major %d", blas.path, major);
    if (soname_major(blas.path)) CHECK_EQ(major, soname_major(blas.path));
    /* No GPU on this machine: cuBLAS itself says so. */
    CHECK_EQ(blas.cublasCreate_v2(&handle), OPARA_CUBLAS_STATUS_NOT_INITIALIZED);
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
    OT_LOG("%s: cuDNN %lu", dnn.path, (unsigned long)version);
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
    OT_CASE(names_of_unknown_codes),
    OT_CASE(driver_stub_library),
};

int main(int argc, char** argv) {
    const char* slash = argc > 0 ? strrchr(argv[0], '/') : NULL;
    int dir_len = slash ? (int)(slash - argv[0] + 1) : 0;
    const char* dir = slash ? argv[0] : "";
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
