/* test_cuda_nodevice.c - what a program gets from the CUDA path on a machine without a GPU, on Linux
   (make test) and on Windows (make test-windows, under Wine): the no-device fake of
   tests/test_cuda_loader.c is a driver library whose cuInit answers CUDA_ERROR_NO_DEVICE. It loads
   with every entry point and its code is named from our table (the fake's cuGetErrorName fails); OPARA_BACKEND_CUDA is refused with that
   reason as OPARA_ERR_NO_BACKEND, OPARA_BACKEND_AUTO runs on the CPU with the right result and says
   why in an INFO log (not a warning: nothing is wrong with such a machine); with no driver at
   all the search list is named; a library path that does not exist is refused naming the path and
   the system's reason (Windows: LoadLibrary's error and its sentence), never replaced by a search;
   the fake given as cuBLAS is refused naming the first entry point it lacks; on aarch64 Linux (make
   test-aarch64, under qemu-user) the Jetson driver directory is searched. The fake is found beside
   this program (Windows) or in ../cuda/ (Linux: mk/cuda.mk, mk/aarch64.mk). */
#if defined(__linux__) && defined(__aarch64__)
#  define _POSIX_C_SOURCE 200809L /* mkdtemp, mkdir: the Jetson fixture */
#  include <sys/stat.h>
#  include <unistd.h>
#endif
/* The loader's fixed system places (Linux) go under this prefix ("": the real ones; the Jetson case
   below points it at a fixture). */
#if defined(__linux__)
static char g_system_prefix[512];
#  define OPARA_CUDA_SYSTEM_PREFIX g_system_prefix
#endif
#define OPARA_IMPLEMENTATION
#include "opara.h"
#include "opara_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _WIN32
#  define FAKE_DRIVER "opara_fake_nodevice_cuda.dll"
#  define DRIVER_NAME "nvcuda.dll"
#else
#  define FAKE_DRIVER "../cuda/libopara_fake_nodevice_cuda.so"
#  define DRIVER_NAME "libcuda.so.1"
#endif

static char g_fake[1024], g_absent[1024];

/* dir(argv0) + "/" + name */
static void beside_program(char* out, size_t cap, const char* argv0, const char* name) {
    const char* slash = strrchr(argv0, '/');
    const char* bslash = strrchr(argv0, '\\');
    size_t dir;
    if (bslash && (!slash || bslash > slash)) slash = bslash;
    dir = slash ? (size_t)(slash - argv0) : 1;
    snprintf(out, cap, "%.*s/%s", (int)dir, slash ? argv0 : ".", name);
}

static int have_fake(void) {
    FILE* f = fopen(g_fake, "rb");
    if (f) fclose(f);
    return f != NULL;
}

static opara_model* one_relu(opara_runtime* rt) {
    opara_builder* b;
    opara_model* m = NULL;
    int64_t xd[2] = {2, 3};
    const char *in[1] = {"x"}, *out[1] = {"y"};
    if (opara_builder_create(rt, &b) != OPARA_OK) return NULL;
    opara_builder_add_input(b, "x", OPARA_DTYPE_F32, 2, xd);
    opara_builder_add_node(b, "Relu", "relu", 1, in, 1, out, 0, NULL);
    opara_builder_add_output(b, "y");
    opara_builder_finish(b, &m);
    opara_builder_destroy(b);
    return m;
}

OT_TEST(fake_driver_loads_and_its_cuinit_is_named_no_device) {
    opara_cuda_driver cu;
    char err[2048];
    if (!have_fake()) SKIP("the fake driver was not built: %s", g_fake);
    REQUIRE(opara_cuda_driver_load(&cu, g_fake, err, sizeof err) == OPARA_CUDA_LOAD_OK);
    CHECK_EQ(cu.cuInit(0), 100);
    CHECK_STR(opara_cuda_driver_result_name(&cu, 100), "CUDA_ERROR_NO_DEVICE");
    opara_cuda_driver_unload(&cu);
}

static char g_logged[1024];
static opara_log_level g_level;
static void capture(opara_log_level level, opara_log_item item, const char* message, void* user) {
    (void)user;
    if (item != OPARA_LOGITEM_BACKEND_FALLBACK) return;
    g_level = level;
    snprintf(g_logged, sizeof g_logged, "%s", message);
}

OT_TEST(cuda_session_is_refused_and_auto_runs_on_the_cpu) {
    opara_runtime* rt = NULL;
    opara_model* m;
    opara_session* s = NULL;
    opara_session_desc d;
    opara_plan_info info;
    opara_tensor in, out;
    float x[6] = {-1, 2, -3, 4, 0, -0.5f}, y[6];
    int i;
    if (!have_fake()) SKIP("the fake driver was not built: %s", g_fake);
    REQUIRE(setenv("OPARA_CUDA_DRIVER", g_fake, 1) == 0);
    REQUIRE(opara_runtime_create(NULL, &rt) == OPARA_OK);
    m = one_relu(rt);
    REQUIRE(m != NULL);
    memset(&d, 0, sizeof d);
    d.backend = OPARA_BACKEND_CUDA;
    CHECK_EQ(opara_session_create(rt, m, &d, &s), OPARA_ERR_NO_BACKEND); /* no device: not a CUDA failure */
    CHECK(s == NULL);
    OT_LOG("CUDA: %s", opara_runtime_last_error(rt));
    CHECK(strstr(opara_runtime_last_error(rt), "CUDA_ERROR_NO_DEVICE") != NULL);
    CHECK(strstr(opara_runtime_last_error(rt), "opara_fake_nodevice_cuda") != NULL); /* the file mapped */
    d.backend = OPARA_BACKEND_AUTO;
    d.logger.func = capture;
    g_logged[0] = 0;
    REQUIRE(opara_session_create(rt, m, &d, &s) == OPARA_OK);
    OT_LOG("AUTO: %s", g_logged);
    CHECK(strstr(g_logged, "CUDA_ERROR_NO_DEVICE") != NULL);
    CHECK_EQ(g_level, OPARA_LOG_INFO); /* a machine without a GPU is not a warning */
    REQUIRE(opara_session_get_plan_info(s, &info) == OPARA_OK);
    CHECK_STR(info.backend, "cpu");
    memset(&in, 0, sizeof in);
    in.name = "x", in.dtype = OPARA_DTYPE_F32, in.rank = 2, in.dims[0] = 2, in.dims[1] = 3, in.data = x;
    out = in;
    out.name = "y", out.data = y;
    REQUIRE(opara_session_run(s, &in, 1, &out, 1) == OPARA_OK);
    for (i = 0; i < 6; ++i) CHECK(y[i] == (x[i] > 0 ? x[i] : 0.0f));
    opara_session_destroy(s);
    opara_model_destroy(m);
    opara_runtime_destroy(rt);
    unsetenv("OPARA_CUDA_DRIVER");
}

/* With no driver installed the message names what was searched; a machine with one loads it. */
OT_TEST(missing_driver_names_the_search_list) {
    opara_cuda_driver cu;
    char err[2048];
    if (opara_cuda_driver_load(&cu, NULL, err, sizeof err) == OPARA_CUDA_LOAD_OK) {
        opara_cuda_driver_unload(&cu);
        SKIP("this machine has a CUDA driver");
    }
    OT_LOG("%s", err);
    CHECK(strstr(err, DRIVER_NAME) != NULL);
}

OT_TEST(absent_library_path_is_named_with_the_system_reason) {
    opara_cuda_cublas cb;
    char err[2048];
    CHECK_EQ(opara_cuda_cublas_load(&cb, g_absent, err, sizeof err), OPARA_CUDA_LOAD_NOT_FOUND);
    OT_LOG("%s", err);
    CHECK(strstr(err, g_absent) != NULL);
#ifdef _WIN32
    CHECK(strstr(err, "LoadLibrary error 126") != NULL); /* ERROR_MOD_NOT_FOUND */
#endif
}

OT_TEST(a_library_without_the_entry_points_is_refused_naming_one) {
    opara_cuda_cublas cb;
    char err[2048];
    if (!have_fake()) SKIP("the fake driver was not built: %s", g_fake);
    CHECK_EQ(opara_cuda_cublas_load(&cb, g_fake, err, sizeof err), OPARA_CUDA_LOAD_SYMBOL_MISSING);
    OT_LOG("%s", err);
    CHECK(strstr(err, "cublas") != NULL);
}

/* Jetson (L4T): with nothing by name, the driver is found in tegra/ under the multiarch directory (a
   fixture under OPARA_CUDA_SYSTEM_PREFIX holding the fake as libcuda.so.1). */
OT_TEST(jetson_driver_directory_is_searched) {
#if defined(__linux__) && defined(__aarch64__)
    static const char* const parts[] = {"/usr", "/usr/lib", "/usr/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu/tegra"};
    char root[] = "/tmp/opara_l4t_XXXXXX", path[1024], err[2048], buf[4096];
    opara_cuda_driver cu;
    FILE *from, *to;
    size_t i, n;
    if (!have_fake()) SKIP("the fake driver was not built: %s", g_fake);
    if (opara_cuda_driver_load(&cu, NULL, err, sizeof err) == OPARA_CUDA_LOAD_OK) {
        opara_cuda_driver_unload(&cu);
        SKIP("this machine has a CUDA driver by name");
    }
    REQUIRE(mkdtemp(root) != NULL);
    for (i = 0; i < sizeof parts / sizeof parts[0]; ++i) {
        snprintf(path, sizeof path, "%s%s", root, parts[i]);
        REQUIRE(mkdir(path, 0700) == 0);
    }
    snprintf(path, sizeof path, "%s%s/libcuda.so.1", root, parts[3]);
    from = fopen(g_fake, "rb");
    to = fopen(path, "wb");
    REQUIRE(from && to);
    while ((n = fread(buf, 1, sizeof buf, from)) > 0) CHECK(fwrite(buf, 1, n, to) == n);
    fclose(from);
    fclose(to);
    snprintf(g_system_prefix, sizeof g_system_prefix, "%s", root);
    CHECK_EQ(opara_cuda_driver_load(&cu, NULL, err, sizeof err), OPARA_CUDA_LOAD_OK);
    g_system_prefix[0] = 0;
    if (cu.library) {
        OT_LOG("%s (%s)", cu.path, cu.origin);
        CHECK(strstr(cu.path, "/tegra/libcuda.so.1") != NULL);
        CHECK(strstr(cu.origin, "L4T") != NULL);
        CHECK_EQ(cu.cuInit(0), 100);
        opara_cuda_driver_unload(&cu);
    } else {
        OT_LOG("%s", err);
    }
    remove(path);
    for (i = sizeof parts / sizeof parts[0]; i-- > 0;) {
        snprintf(path, sizeof path, "%s%s", root, parts[i]);
        rmdir(path);
    }
    rmdir(root);
#else
    SKIP("the Jetson (L4T) driver directories are searched on aarch64 Linux only");
#endif
}

static const opara_test_case tests[] = {
    OT_CASE(fake_driver_loads_and_its_cuinit_is_named_no_device),
    OT_CASE(cuda_session_is_refused_and_auto_runs_on_the_cpu),
    OT_CASE(missing_driver_names_the_search_list),
    OT_CASE(absent_library_path_is_named_with_the_system_reason),
    OT_CASE(a_library_without_the_entry_points_is_refused_naming_one),
    OT_CASE(jetson_driver_directory_is_searched),
};

int main(int argc, char** argv) {
    beside_program(g_fake, sizeof g_fake, argc > 0 ? argv[0] : "", FAKE_DRIVER);
    beside_program(g_absent, sizeof g_absent, argc > 0 ? argv[0] : "", "absent/opara_no_such_cublas.dll");
    return opara_test_main(argc, argv, tests, OT_COUNT(tests));
}
