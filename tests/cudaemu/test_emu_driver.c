/* Tests of the emulated CUDA driver (tests/cudaemu): devices, cuGetProcAddress, modules and launch checks,
 * kernel execution, memory, asynchronous streams, events. Expected values come from the CUDA 13.0 driver API
 * documentation and shared/research/cuda-semantics.md (rule numbers in comments), and results of kernels
 * from plain loops here. Run against a real driver with OPARA_CUDA_DRIVER=/path/libcuda.so.1. */
#include <math.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "emu_test.h"

/* Hand-written PTX headers for the emulator's test kernels (emu_test_kernels.cu, host build only). */
static const char* const test_ptx =
    ".version 9.0\n.target sm_75\n.address_size 64\n"
    ".visible .entry opara_emutest_oob_write(.param .u64 p0, .param .u32 p1) { ret; }\n"
    ".visible .entry opara_emutest_reverse(.param .u64 p0, .param .u64 p1) { ret; }\n"
    ".visible .entry opara_emutest_reverse_racy(.param .u64 p0, .param .u64 p1)\n"
    "{ .shared .align 4 .b8 unused[4]; ret; }\n"
    ".visible .entry opara_emutest_divergent_barrier(.param .u64 p0) { ret; }\n";

static tcu_func get_func(tcu_driver* d, tcu_module m, const char* name) {
    tcu_func f = NULL;
    if (!m || d->ModuleGetFunction(&f, m, name) != 0) return NULL;
    return f;
}

static tcu_module test_module(tcu_driver* d) {
    static tcu_module m;
    if (!m && d->ModuleLoadData(&m, test_ptx) != 0) m = NULL;
    return m;
}

/* Launches opara_sample_add_f32 on n elements. */
static tcu_result launch_add(tcu_driver* d, tcu_stream s, tcu_devptr a, tcu_devptr b, tcu_devptr y, int n) {
    tcu_func f = get_func(d, tcu_sample_module(d), "opara_sample_add_f32");
    void* args[4];
    args[0] = &a;
    args[1] = &b;
    args[2] = &y;
    args[3] = &n;
    if (!f) return -1;
    return d->LaunchKernel(f, (unsigned int)(n + 127) / 128, 1, 1, 128, 1, 1, 0, s, args, NULL);
}

/* NULL_ARGS_NOTE: NVIDIA documents no result for a NULL image, NULL kernel parameters of a kernel that has
 * some, or a NULL host pointer, and this binary died of SIGSEGV on the first real-GPU run (H100, driver 580)
 * with its output lost to buffering; these calls are the suspects, so they are the emulator's refusals
 * only (checked on the emulator, not on a real driver). */
OT_TEST(device_profile_matches_public_specs) {
    TCU_REQUIRE_EMULATOR(d);
    int n = 0, v = 0;
    char name[128];
    CHECK_EQ(d->DeviceGetCount(&n), 0);
    CHECK_EQ(n, 1);
    CHECK_EQ(d->DeviceGetName(name, sizeof name, 0), 0);
    if (strstr(name, "2080")) { /* default profile: TU104, compute capability 7.5, 48 SMs */
        CHECK_EQ(d->DeviceGetAttribute(&v, 75, 0), 0); CHECK_EQ(v, 7);
        CHECK_EQ(d->DeviceGetAttribute(&v, 76, 0), 0); CHECK_EQ(v, 5);
        CHECK_EQ(d->DeviceGetAttribute(&v, 16, 0), 0); CHECK_EQ(v, 48);
        CHECK_EQ(d->DeviceGetAttribute(&v, 39, 0), 0); CHECK_EQ(v, 1024);
        CHECK_EQ(d->DeviceGetAttribute(&v, 97, 0), 0); CHECK_EQ(v, 65536);
    }
    CHECK_EQ(d->DeviceGetAttribute(&v, 10, 0), 0); /* warp size */
    CHECK_EQ(v, 32);
    CHECK_EQ(d->DeviceGetAttribute(&v, 1, 0), 0); /* max threads per block */
    CHECK_EQ(v, 1024);
    CHECK_EQ(d->DeviceGetAttribute(&v, 8, 0), 0); /* 48 KiB default shared memory per block */
    CHECK_EQ(v, 49152);
    CHECK_EQ(d->DeviceGetAttribute(&v, 0, 0), TCU_INVALID_VALUE);
    CHECK_EQ(d->DeviceGetAttribute(&v, 10, 1), 101); /* CUDA_ERROR_INVALID_DEVICE */
}

OT_TEST(get_proc_address_follows_driver_13_rules) { /* §8.1 */
    TCU_REQUIRE_DRIVER(d);
    void* p = NULL;
    int status = -1, version = 0;
    CHECK_EQ(d->DriverGetVersion(&version), 0);
    CHECK_EQ(d->GetProcAddress("cuMemAlloc", &p, 3020, 0, &status), 0);
    CHECK_EQ(status, 0);
    CHECK(p == dlsym(d->lib, "cuMemAlloc_v2"));
    CHECK_EQ(d->GetProcAddress("cuStreamBeginCapture", &p, 12000, 0, &status), 0);
    CHECK(p == dlsym(d->lib, "cuStreamBeginCapture_v2"));
    CHECK_EQ(d->GetProcAddress("cuGraphInstantiateWithFlags", &p, 11000, 0, &status), 0);
    CHECK(p == NULL);
    CHECK_EQ(status, 2); /* CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT */
    CHECK_EQ(d->GetProcAddress("cuNoSuchFunction", &p, 12000, 0, &status), 0);
    CHECK(p == NULL);
    CHECK_EQ(status, 1); /* CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND */
    CHECK_EQ(d->GetProcAddress("cuMemAlloc", &p, version + 10, 0, &status), TCU_INVALID_VALUE);
    if (d->emu_config) CHECK_EQ(d->GetProcAddress("cuMemAlloc", NULL, 3020, 0, &status), TCU_INVALID_VALUE); /* NULL_ARGS_NOTE */
    CHECK_EQ(d->GetProcAddress("cuMemAlloc", &p, 3020, 4, &status), TCU_INVALID_VALUE);
    if (version >= 13000) { /* cuCtxSynchronize changed its signature in 13.0 */
        CHECK_EQ(d->GetProcAddress("cuCtxSynchronize", &p, 13000, 0, &status), 0);
        CHECK(p == dlsym(d->lib, "cuCtxSynchronize_v2"));
        CHECK_EQ(d->GetProcAddress("cuCtxSynchronize", &p, 12000, 0, &status), 0);
        CHECK(p == dlsym(d->lib, "cuCtxSynchronize"));
    }
}

OT_TEST(hidden_symbol_looks_like_an_old_driver) {
    TCU_REQUIRE_EMULATOR(d);
    void* p = (void*)1;
    int status = -1;
    d->emu_config_str("hide", "cuGraphExecUpdate,cuStreamGetCaptureInfo");
    CHECK_EQ(d->GetProcAddress("cuGraphExecUpdate", &p, 12000, 0, &status), 0);
    CHECK(p == NULL);
    CHECK_EQ(status, 1);
    CHECK_EQ(d->GetProcAddress("cuGraphLaunch", &p, 12000, 0, &status), 0);
    CHECK(p != NULL);
    d->emu_config_str("hide", "");
    CHECK_EQ(d->GetProcAddress("cuGraphExecUpdate", &p, 12000, 0, &status), 0);
    CHECK(p != NULL);
}

OT_TEST(sample_add_matches_loop) {
    TCU_REQUIRE_DRIVER(d);
    enum { N = 1000 };
    static float a[N], b[N], y[N];
    tcu_devptr da, db, dy;
    tcu_stream s;
    int i, bad = 0;
    for (i = 0; i < N; i++) {
        a[i] = (float)i * 0.5f;
        b[i] = (float)(N - i);
    }
    REQUIRE(tcu_sample_module(d) != NULL);
    REQUIRE(d->MemAlloc(&da, sizeof a) == 0 && d->MemAlloc(&db, sizeof b) == 0 && d->MemAlloc(&dy, sizeof y) == 0);
    REQUIRE(d->StreamCreate(&s, 0) == 0);
    CHECK_EQ(d->MemcpyHtoD(da, a, sizeof a), 0);
    CHECK_EQ(d->MemcpyHtoD(db, b, sizeof b), 0);
    CHECK_EQ(launch_add(d, s, da, db, dy, N), 0);
    CHECK_EQ(d->StreamSynchronize(s), 0);
    CHECK_EQ(d->MemcpyDtoH(y, dy, sizeof y), 0);
    for (i = 0; i < N; i++) bad += y[i] != a[i] + b[i];
    CHECK_EQ(bad, 0);
    d->MemFree(da);
    d->MemFree(db);
    d->MemFree(dy);
    d->StreamDestroy(s);
}

OT_TEST(block_sum_with_barriers_matches_loop) {
    TCU_REQUIRE_DRIVER(d);
    enum { N = 5000, B = 256 };
    static float x[N], sums[(N + B - 1) / B];
    tcu_func f = get_func(d, tcu_sample_module(d), "opara_sample_block_sum_f32");
    tcu_devptr dx, ds;
    int n = N, i, k, smem = -1;
    void* args[3];
    REQUIRE(f != NULL);
    CHECK_EQ(d->FuncGetAttribute(&smem, 1, f), 0); /* CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES from the PTX */
    CHECK_EQ(smem, 4096);
    for (i = 0; i < N; i++) x[i] = (float)(i % 7) - 3.0f;
    REQUIRE(d->MemAlloc(&dx, sizeof x) == 0 && d->MemAlloc(&ds, sizeof sums) == 0);
    CHECK_EQ(d->MemcpyHtoD(dx, x, sizeof x), 0);
    args[0] = &dx;
    args[1] = &ds;
    args[2] = &n;
    CHECK_EQ(d->LaunchKernel(f, (N + B - 1) / B, 1, 1, B, 1, 1, 0, NULL, args, NULL), 0);
    CHECK_EQ(d->MemcpyDtoH(sums, ds, sizeof sums), 0);
    for (k = 0; k < (N + B - 1) / B; k++) {
        double ref = 0;
        for (i = k * B; i < (k + 1) * B && i < N; i++) ref += x[i];
        CHECK_NEAR(sums[k], ref, 1e-3);
    }
    d->MemFree(dx);
    d->MemFree(ds);
}

OT_TEST(launch_configuration_errors) { /* rules 5.1-5.3 */
    TCU_REQUIRE_DRIVER(d);
    tcu_func f = get_func(d, tcu_sample_module(d), "opara_sample_add_f32");
    tcu_devptr p;
    int n = 4;
    size_t size = 28, wrong = 24;
    unsigned char buf[32];
    void* args[4];
    void* extra[5];
    void* extra_wrong[5];
    REQUIRE(f != NULL);
    REQUIRE(d->MemAlloc(&p, 64) == 0);
    args[0] = &p;
    args[1] = &p;
    args[2] = &p;
    args[3] = &n;
    CHECK_EQ(d->LaunchKernel(f, 0, 1, 1, 32, 1, 1, 0, NULL, args, NULL), TCU_INVALID_VALUE);
    CHECK_EQ(d->LaunchKernel(f, 1, 1, 1, 1025, 1, 1, 0, NULL, args, NULL), TCU_INVALID_VALUE);
    CHECK_EQ(d->LaunchKernel(f, 1, 1, 1, 1, 1, 65, 0, NULL, args, NULL), TCU_INVALID_VALUE);
    CHECK_EQ(d->LaunchKernel(f, 1, 65536, 1, 32, 1, 1, 0, NULL, args, NULL), TCU_INVALID_VALUE);
    CHECK_EQ(d->LaunchKernel(f, 1, 1, 1, 32, 1, 1, 49153, NULL, args, NULL), TCU_INVALID_VALUE);
    if (d->emu_config) CHECK_EQ(d->LaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL), TCU_INVALID_VALUE); /* NULL_ARGS_NOTE */
    memset(buf, 0, sizeof buf);
    memcpy(buf, &p, 8);
    memcpy(buf + 8, &p, 8);
    memcpy(buf + 16, &p, 8);
    memcpy(buf + 24, &n, 4);
    extra[0] = (void*)1;
    extra[1] = buf;
    extra[2] = (void*)2;
    extra[3] = &size;
    extra[4] = NULL;
    memcpy(extra_wrong, extra, sizeof extra);
    extra_wrong[3] = &wrong;
    CHECK_EQ(d->LaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, args, extra), TCU_INVALID_VALUE);
    CHECK_EQ(d->LaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, extra), 0);
    /* [EMU] a parameter buffer of the wrong size: driver 580 (H100) launched it (undefined: the kernel reads
       past the buffer) */
    if (d->emu_config) CHECK_EQ(d->LaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, extra_wrong), TCU_OUT_OF_RESOURCES);
    CHECK_EQ(d->CtxSynchronize(), 0);
    d->MemFree(p);
}

OT_TEST(kernel_params_holding_device_pointers_are_rejected) {
    TCU_REQUIRE_EMULATOR(d);
    tcu_func f = get_func(d, tcu_sample_module(d), "opara_sample_add_f32");
    tcu_devptr p;
    int n = 4;
    void* args[4];
    REQUIRE(f != NULL);
    REQUIRE(d->MemAlloc(&p, 64) == 0);
    args[0] = (void*)(size_t)p; /* the value instead of its address: a real GPU reads garbage */
    args[1] = &p;
    args[2] = &p;
    args[3] = &n;
    CHECK_EQ(d->LaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, args, NULL), TCU_INVALID_VALUE);
    d->MemFree(p);
}

OT_TEST(ptx_errors_have_the_driver_codes) { /* §7.1, 7.4, 7.5 */
    TCU_REQUIRE_DRIVER(d);
    tcu_module m = NULL;
    tcu_func f = NULL;
    CHECK_EQ(d->ModuleLoadData(&m, "this is not PTX"), TCU_INVALID_IMAGE); /* 200 on driver 580 (H100) */
    CHECK_EQ(d->ModuleLoadData(&m, ".version 99.0\n.target sm_75\n.address_size 64\n"), TCU_UNSUPPORTED_PTX);
    CHECK_EQ(d->ModuleLoadData(&m, ".version 9.0\n.target sm_120\n.address_size 64\n"), TCU_INVALID_PTX);
    if (d->emu_config) CHECK_EQ(d->ModuleLoadData(&m, NULL), TCU_INVALID_VALUE); /* NULL_ARGS_NOTE */
    REQUIRE(tcu_sample_module(d) != NULL);
    CHECK_EQ(d->ModuleGetFunction(&f, tcu_sample_module(d), "no_such_kernel"), TCU_NOT_FOUND);
}

OT_TEST(ptx_param_list_must_match_host_build) {
    TCU_REQUIRE_EMULATOR(d);
    tcu_module m = NULL;
    CHECK_EQ(d->ModuleLoadData(&m, ".version 9.0\n.target sm_75\n.address_size 64\n"
                                   ".visible .entry opara_sample_add_f32(.param .u64 a, .param .u64 b) { ret; }\n"),
             TCU_INVALID_PTX);
    CHECK_EQ(d->ModuleLoadData(&m, ".version 9.0\n.target sm_75\n.address_size 64\n"
                                   ".visible .entry opara_unknown_kernel(.param .u64 a) { ret; }\n"),
             TCU_INVALID_PTX);
}

OT_TEST(stream_work_runs_asynchronously) {
    TCU_REQUIRE_EMULATOR(d);
    enum { N = 256 };
    static float a[N], y[N];
    tcu_devptr da, dy;
    tcu_stream s;
    tcu_event e;
    int i, bad = 0;
    float* pinned = NULL;
    for (i = 0; i < N; i++) a[i] = (float)i;
    REQUIRE(d->MemAlloc(&da, sizeof a) == 0 && d->MemAlloc(&dy, sizeof y) == 0);
    REQUIRE(d->MemAllocHost((void**)&pinned, sizeof y) == 0);
    REQUIRE(d->StreamCreate(&s, 1) == 0);
    REQUIRE(d->EventCreate(&e, 0) == 0);
    for (i = 0; i < N; i++) pinned[i] = -1.0f;
    d->emu_config("paused", 1); /* hold the emulator's workers: nothing queued may run */
    CHECK_EQ(d->MemcpyHtoDAsync(da, a, sizeof a, s), 0);
    CHECK_EQ(launch_add(d, s, da, da, dy, N), 0);
    CHECK_EQ(d->MemcpyDtoHAsync(pinned, dy, sizeof y, s), 0);
    CHECK_EQ(d->EventRecord(e, s), 0);
    CHECK_EQ(d->StreamQuery(s), TCU_NOT_READY);
    CHECK_EQ(d->EventQuery(e), TCU_NOT_READY);
    CHECK(pinned[5] == -1.0f); /* not executed at enqueue */
    d->emu_config("paused", 0);
    CHECK_EQ(d->StreamSynchronize(s), 0);
    CHECK_EQ(d->EventQuery(e), 0);
    for (i = 0; i < N; i++) bad += pinned[i] != 2.0f * a[i];
    CHECK_EQ(bad, 0);
    d->EventDestroy(e);
    d->StreamDestroy(s);
    d->MemFreeHost(pinned);
    d->MemFree(da);
    d->MemFree(dy);
}

static void slow_host_fn(void* user) {
    struct timespec ts;
    ts.tv_sec = 0;
    ts.tv_nsec = 20 * 1000000L;
    nanosleep(&ts, NULL);
    *(int*)user = 1;
}

OT_TEST(cross_stream_event_wait_orders_work) { /* rule 2.7 */
    TCU_REQUIRE_DRIVER(d);
    tcu_stream s1, s2;
    tcu_event e;
    tcu_devptr p;
    int flag = 0;
    unsigned int out = 0;
    REQUIRE(d->StreamCreate(&s1, 1) == 0 && d->StreamCreate(&s2, 1) == 0 && d->EventCreate(&e, 2) == 0);
    REQUIRE(d->MemAlloc(&p, 4) == 0);
    CHECK_EQ(d->LaunchHostFunc(s1, slow_host_fn, &flag), 0);
    CHECK_EQ(d->MemsetD32Async(p, 7u, 1, s1), 0);
    CHECK_EQ(d->EventRecord(e, s1), 0);
    CHECK_EQ(d->StreamWaitEvent(s2, e, 0), 0);
    CHECK_EQ(d->MemcpyDtoHAsync(&out, p, 4, s2), 0);
    CHECK_EQ(d->StreamSynchronize(s2), 0);
    CHECK_EQ(flag, 1);
    CHECK_EQ(out, 7);
    CHECK_EQ(d->StreamSynchronize(s1), 0);
    d->MemFree(p);
    d->EventDestroy(e);
    d->StreamDestroy(s1);
    d->StreamDestroy(s2);
}

OT_TEST(legacy_stream_waits_for_blocking_streams) { /* SSB, rule 2.14 */
    TCU_REQUIRE_DRIVER(d);
    tcu_stream s;
    tcu_devptr p;
    int flag = 0;
    unsigned int out = 0;
    REQUIRE(d->StreamCreate(&s, 0) == 0 && d->MemAlloc(&p, 4) == 0);
    CHECK_EQ(d->LaunchHostFunc(s, slow_host_fn, &flag), 0);
    CHECK_EQ(d->MemsetD32Async(p, 42u, 1, s), 0);
    CHECK_EQ(d->MemcpyDtoH(&out, p, 4), 0); /* legacy stream: waits for the blocking stream's work */
    CHECK_EQ(out, 42);
    d->MemFree(p);
    d->StreamDestroy(s);
}

OT_TEST(event_times_are_monotonic) {
    TCU_REQUIRE_DRIVER(d);
    tcu_stream s;
    tcu_event e0, e1, e2, untimed, never;
    int flag = 0;
    float t01 = -1, t02 = -1, t12 = -1, t;
    REQUIRE(d->StreamCreate(&s, 0) == 0);
    REQUIRE(d->EventCreate(&e0, 0) == 0 && d->EventCreate(&e1, 0) == 0 && d->EventCreate(&e2, 0) == 0);
    REQUIRE(d->EventCreate(&untimed, 2) == 0 && d->EventCreate(&never, 0) == 0);
    CHECK_EQ(d->EventRecord(e0, s), 0);
    CHECK_EQ(d->LaunchHostFunc(s, slow_host_fn, &flag), 0);
    CHECK_EQ(d->EventRecord(e1, s), 0);
    CHECK_EQ(d->EventRecord(untimed, s), 0);
    CHECK_EQ(d->LaunchHostFunc(s, slow_host_fn, &flag), 0);
    CHECK_EQ(d->EventRecord(e2, s), 0);
    CHECK_EQ(d->EventSynchronize(e2), 0);
    CHECK_EQ(d->EventElapsedTime(&t01, e0, e1), 0);
    CHECK_EQ(d->EventElapsedTime(&t02, e0, e2), 0);
    CHECK_EQ(d->EventElapsedTime(&t12, e1, e2), 0);
    CHECK(t01 >= 15.0f); /* the host function sleeps 20 ms */
    CHECK(t02 >= t01 && t02 >= t12);
    CHECK_EQ(d->EventElapsedTime(&t, e0, untimed), TCU_INVALID_HANDLE); /* CU_EVENT_DISABLE_TIMING */
    CHECK_EQ(d->EventElapsedTime(&t, e0, never), TCU_INVALID_HANDLE);   /* never recorded */
    CHECK_EQ(d->EventQuery(never), 0);                                   /* empty set of work (2.7) */
    d->EventDestroy(e0);
    d->EventDestroy(e1);
    d->EventDestroy(e2);
    d->EventDestroy(untimed);
    d->EventDestroy(never);
    d->StreamDestroy(s);
}

typedef struct callback_probe {
    tcu_driver* d;
    tcu_result result;
} callback_probe;

static void calls_the_driver(void* user) {
    callback_probe* probe = (callback_probe*)user;
    tcu_devptr p;
    probe->result = probe->d->MemAlloc(&p, 16);
}

OT_TEST(host_function_may_not_call_the_driver) { /* rule 3.6 [EMU 800] */
    TCU_REQUIRE_EMULATOR(d);
    callback_probe probe;
    probe.d = d;
    probe.result = -1;
    CHECK_EQ(d->LaunchHostFunc(NULL, calls_the_driver, &probe), 0);
    CHECK_EQ(d->CtxSynchronize(), 0);
    CHECK_EQ(probe.result, TCU_NOT_PERMITTED);
}

OT_TEST(memory_checks) {
    TCU_REQUIRE_DRIVER(d);
    tcu_devptr p, q = 0;
    float host[4];
    REQUIRE(d->MemAlloc(&p, 16) == 0);
    CHECK_EQ(p % 256, 0);
    CHECK_EQ(d->MemcpyDtoH(host, p + 8, 16), TCU_INVALID_VALUE); /* runs past the allocation */
    if (d->emu_config) CHECK_EQ(d->MemcpyHtoD(p, NULL, 16), TCU_INVALID_VALUE); /* NULL_ARGS_NOTE */
    CHECK_EQ(d->MemAlloc(&q, 0), TCU_INVALID_VALUE); /* into q: driver 580 zeroes the pointer of a failed call */
    CHECK_EQ(d->MemFree(p + 4), TCU_INVALID_VALUE);
    CHECK_EQ(d->MemFree(p), 0);
    CHECK_EQ(d->MemFree(p), TCU_INVALID_VALUE); /* double free */
}

OT_TEST(new_allocations_are_poisoned) {
    TCU_REQUIRE_EMULATOR(d);
    tcu_devptr p;
    float host[4];
    REQUIRE(d->MemAlloc(&p, sizeof host) == 0);
    CHECK_EQ(d->MemcpyDtoH(host, p, sizeof host), 0);
    CHECK(host[0] != host[0]); /* NaN: reading memory nobody wrote shows up */
    d->MemFree(p);
}

OT_TEST(allocation_failure_injection) {
    TCU_REQUIRE_EMULATOR(d);
    tcu_devptr a = 0, b = 0, c = 0;
    d->emu_config("fail_alloc", 2);
    CHECK_EQ(d->MemAlloc(&a, 64), 0);
    CHECK_EQ(d->MemAlloc(&b, 64), TCU_OUT_OF_MEMORY);
    CHECK_EQ(d->MemAlloc(&c, 64), 0);
    d->MemFree(a);
    d->MemFree(c);
}

OT_TEST(out_of_bounds_kernel_write_hits_the_guard_zone) {
    TCU_REQUIRE_EMULATOR(d);
    tcu_func f = get_func(d, test_module(d), "opara_emutest_oob_write");
    tcu_devptr y;
    int n = 100;
    void* args[2];
    REQUIRE(f != NULL);
    REQUIRE(d->MemAlloc(&y, 100 * sizeof(float)) == 0);
    args[0] = &y;
    args[1] = &n;
    CHECK_EQ(d->LaunchKernel(f, 1, 1, 1, 128, 1, 1, 0, NULL, args, NULL), 0);
    CHECK_EQ(d->CtxSynchronize(), TCU_ILLEGAL_ADDRESS); /* sticky, like a device fault */
    CHECK_EQ(d->CtxSynchronize(), TCU_ILLEGAL_ADDRESS);
    d->emu_config("clear_sticky", 1);
    CHECK_EQ(d->CtxSynchronize(), 0);
    d->MemFree(y);
}

OT_TEST(dynamic_shared_memory_and_barrier) {
    TCU_REQUIRE_DRIVER(d);
    enum { B = 64, BLOCKS = 3 };
    float x[B * BLOCKS], y[B * BLOCKS];
    tcu_func f = get_func(d, test_module(d), "opara_emutest_reverse");
    tcu_devptr dx, dy;
    void* args[2];
    int i, k, bad = 0, max_dyn = 0, optin = 0;
    tcu_func sample = get_func(d, tcu_sample_module(d), "opara_sample_add_f32");
    /* the opt-in limit of dynamic shared memory is the device's (5.3): 64 KiB on Turing, 227 KiB on an H100 */
    REQUIRE(sample != NULL);
    CHECK_EQ(d->DeviceGetAttribute(&optin, 97, 0), 0); /* MAX_SHARED_MEMORY_PER_BLOCK_OPTIN */
    CHECK_EQ(d->FuncGetAttribute(&max_dyn, 8, sample), 0);
    CHECK_EQ(max_dyn, 49152);
    CHECK_EQ(d->FuncSetAttribute(sample, 8, optin + 1), TCU_INVALID_VALUE);
    CHECK_EQ(d->FuncSetAttribute(sample, 4, 10), TCU_INVALID_VALUE); /* NUM_REGS is read-only */
    /* the test kernels' PTX is stubs: their bodies are the emulator's host builds */
    if (!f || !d->emu_config) SKIP("test kernels are emulator-only");
    for (i = 0; i < B * BLOCKS; i++) x[i] = (float)i;
    REQUIRE(d->MemAlloc(&dx, sizeof x) == 0 && d->MemAlloc(&dy, sizeof y) == 0);
    CHECK_EQ(d->MemcpyHtoD(dx, x, sizeof x), 0);
    args[0] = &dx;
    args[1] = &dy;
    CHECK_EQ(d->LaunchKernel(f, BLOCKS, 1, 1, B, 1, 1, B * sizeof(float), NULL, args, NULL), 0);
    CHECK_EQ(d->MemcpyDtoH(y, dy, sizeof y), 0);
    for (k = 0; k < BLOCKS; k++)
        for (i = 0; i < B; i++) bad += y[k * B + i] != x[k * B + B - 1 - i];
    CHECK_EQ(bad, 0);
    d->MemFree(dx);
    d->MemFree(dy);
}

OT_TEST(missing_barrier_gives_wrong_results) {
    TCU_REQUIRE_EMULATOR(d);
    enum { B = 64 };
    float x[B], y[B];
    tcu_func f = get_func(d, test_module(d), "opara_emutest_reverse_racy");
    tcu_devptr dx, dy;
    void* args[2];
    int i, bad = 0;
    REQUIRE(f != NULL);
    for (i = 0; i < B; i++) x[i] = (float)i;
    REQUIRE(d->MemAlloc(&dx, sizeof x) == 0 && d->MemAlloc(&dy, sizeof y) == 0);
    CHECK_EQ(d->MemcpyHtoD(dx, x, sizeof x), 0);
    args[0] = &dx;
    args[1] = &dy;
    CHECK_EQ(d->LaunchKernel(f, 1, 1, 1, B, 1, 1, B * sizeof(float), NULL, args, NULL), 0);
    CHECK_EQ(d->MemcpyDtoH(y, dy, sizeof y), 0);
    for (i = 0; i < B; i++) bad += y[i] != x[B - 1 - i];
    CHECK(bad > 0);
    d->MemFree(dx);
    d->MemFree(dy);
}

OT_TEST(divergent_barrier_fails_the_launch) {
    TCU_REQUIRE_EMULATOR(d);
    tcu_func f = get_func(d, test_module(d), "opara_emutest_divergent_barrier");
    tcu_devptr y;
    void* args[1];
    REQUIRE(f != NULL);
    REQUIRE(d->MemAlloc(&y, 64 * sizeof(float)) == 0);
    args[0] = &y;
    CHECK_EQ(d->LaunchKernel(f, 1, 1, 1, 64, 1, 1, 0, NULL, args, NULL), 0);
    CHECK_EQ(d->CtxSynchronize(), TCU_LAUNCH_FAILED);
    d->emu_config("clear_sticky", 1);
    d->MemFree(y);
}


/* ---------------------------------------------------------------- current context (DRV cuCtx*) */

/* A thread's contexts form a stack: push/pop, set replaces the top (NULL pops it), create pushes, destroy pops
 * the calling thread's top. Every step is NVIDIA's documented behaviour, so this also runs on a real driver. */
OT_TEST(context_stack_follows_push_pop_and_set) {
    tcu_ctx primary = NULL, c = NULL, cur = (tcu_ctx)1, popped = NULL;
    TCU_REQUIRE_DRIVER(d);
    CHECK_EQ(d->CtxGetCurrent(&primary), 0);
    REQUIRE(primary != NULL);
    CHECK_EQ(d->CtxCreate(&c, 0, 0), 0); /* pushed: supplants the primary context */
    CHECK_EQ(d->CtxGetCurrent(&cur), 0);
    CHECK(cur == c);
    CHECK_EQ(d->CtxPopCurrent(&popped), 0);
    CHECK(popped == c);
    CHECK_EQ(d->CtxGetCurrent(&cur), 0);
    CHECK(cur == primary); /* the one below is current again */
    CHECK_EQ(d->CtxPushCurrent(c), 0);
    CHECK_EQ(d->CtxSetCurrent(primary), 0); /* replaces the top: [primary, primary] */
    CHECK_EQ(d->CtxPopCurrent(&popped), 0);
    CHECK(popped == primary);
    CHECK_EQ(d->CtxGetCurrent(&cur), 0);
    CHECK(cur == primary);
    CHECK_EQ(d->CtxPopCurrent(&popped), 0); /* now empty */
    CHECK_EQ(d->CtxGetCurrent(&cur), 0);
    CHECK(cur == NULL);
    CHECK_EQ(d->CtxPopCurrent(&popped), TCU_INVALID_CONTEXT);
    CHECK_EQ(d->CtxSetCurrent(NULL), 0); /* a no-op on an empty stack */
    CHECK_EQ(d->CtxSetCurrent(primary), 0); /* pushes onto the empty stack */
    CHECK_EQ(d->CtxPushCurrent(c), 0);
    CHECK_EQ(d->CtxDestroy(c), 0); /* current to this thread: popped */
    CHECK_EQ(d->CtxGetCurrent(&cur), 0);
    CHECK(cur == primary);
    if (d->emu_config) CHECK_EQ(d->CtxPushCurrent(NULL), TCU_INVALID_VALUE); /* [EMU] */
}

/* What thread B gets for A's objects: with nothing current, with its own context, with A's pushed. */
typedef struct ctx_probe {
    tcu_driver* d;
    tcu_ctx a_ctx, b_ctx, after_pop, after_destroy, popped;
    tcu_stream s;
    tcu_event e;
    tcu_func f;
    tcu_module m;
    tcu_exec x;
    tcu_devptr buf;
    float* host;
    tcu_result none[20], other[8], pushed[8];
} ctx_probe;

static void noop_host_fn(void* user) { (void)user; }

/* The calls that need a current context, in a fixed order (none[i] / other[i] / pushed[i]). */
static void ctx_calls(ctx_probe* p, tcu_result* out, int all) {
    tcu_driver* d = p->d;
    tcu_devptr tmp = 0;
    tcu_stream s2 = NULL;
    tcu_event e2 = NULL;
    tcu_func f2 = NULL;
    int n = 64;
    void* args[4];
    args[0] = &p->buf;
    args[1] = &p->buf;
    args[2] = &p->buf;
    args[3] = &n;
    out[0] = d->LaunchKernel(p->f, 1, 1, 1, 64, 1, 1, 0, p->s, args, NULL);
    out[1] = d->MemcpyHtoDAsync(p->buf, p->host, 64 * sizeof(float), p->s);
    out[2] = d->MemsetD32Async(p->buf, 0, 64, p->s);
    out[3] = d->EventRecord(p->e, p->s);
    out[4] = d->StreamSynchronize(p->s);
    out[5] = d->GraphLaunch(p->x, p->s);
    out[6] = d->EventSynchronize(p->e);
    out[7] = d->StreamWaitEvent(p->s, p->e, 0);
    if (!all) return;
    out[8] = d->StreamQuery(p->s);
    out[9] = d->MemcpyHtoD(p->buf, p->host, 16);
    out[10] = d->MemAlloc(&tmp, 16);
    out[11] = d->CtxSynchronize();
    out[12] = d->StreamCreate(&s2, 0);
    out[13] = d->EventCreate(&e2, 0);
    out[14] = d->ModuleGetFunction(&f2, p->m, "opara_sample_add_f32");
    out[15] = d->LaunchHostFunc(p->s, noop_host_fn, NULL);
    out[16] = d->EventQuery(p->e);
    out[17] = d->GraphUpload(p->x, p->s);
    out[18] = d->MemcpyDtoHAsync(p->host, p->buf, 16, p->s);
    /* driver 580 destroys A's stream from a thread with no current context; the emulator refuses */
    out[19] = d->emu_config ? d->StreamDestroy(p->s) : TCU_INVALID_CONTEXT;
}

static void* ctx_thread(void* arg) {
    ctx_probe* p = (ctx_probe*)arg;
    tcu_driver* d = p->d;
    ctx_calls(p, p->none, 1);            /* a new thread has no current context */
    if (d->CtxCreate(&p->b_ctx, 0, 0) == 0) {
        ctx_calls(p, p->other, 0);       /* its own context is current */
        if (d->CtxPushCurrent(p->a_ctx) == 0) {
            ctx_calls(p, p->pushed, 0);  /* A's context pushed: everything works */
            d->StreamSynchronize(p->s);
            d->CtxPopCurrent(&p->popped);
        }
        d->CtxGetCurrent(&p->after_pop); /* B's own context again */
        d->CtxDestroy(p->b_ctx);
        d->CtxGetCurrent(&p->after_destroy);
    }
    return NULL;
}

OT_TEST(objects_of_another_thread_need_their_context_current) {
    static const char* const names[20] = {
        "cuLaunchKernel", "cuMemcpyHtoDAsync", "cuMemsetD32Async", "cuEventRecord", "cuStreamSynchronize",
        "cuGraphLaunch", "cuEventSynchronize", "cuStreamWaitEvent", "cuStreamQuery", "cuMemcpyHtoD", "cuMemAlloc",
        "cuCtxSynchronize", "cuStreamCreate", "cuEventCreate", "cuModuleGetFunction", "cuLaunchHostFunc",
        "cuEventQuery", "cuGraphUpload", "cuMemcpyDtoHAsync", "cuStreamDestroy"};
    /* With no current context, driver 580 (H100) refuses with INVALID_CONTEXT the calls that take no handle
       (cuMemcpyHtoD, cuMemAlloc, cuCtxSynchronize, cuStreamCreate, cuEventCreate) and runs those on a stream,
       event, graph exec or module of context A (the handle names its context). DRV's return lists name
       INVALID_CONTEXT for all of them; the emulator refuses them all ([EMU]: a thread that forgot to make
       its context current is a bug the emulator reports). */
    static const int emu_only[20] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1};
    ctx_probe p;
    pthread_t th;
    tcu_graph g = NULL;
    tcu_node node;
    tcu_kernel_node_params kp;
    float host[64], got[64];
    int n = 64, i, bad = 0;
    void* args[4];
    TCU_REQUIRE_DRIVER(d);
    memset(&p, 0, sizeof p);
    p.d = d;
    p.host = host;
    for (i = 0; i < 64; i++) host[i] = (float)i;
    CHECK_EQ(d->CtxGetCurrent(&p.a_ctx), 0);
    p.m = tcu_sample_module(d);
    p.f = get_func(d, p.m, "opara_sample_add_f32");
    REQUIRE(p.f && d->StreamCreate(&p.s, 1) == 0 && d->EventCreate(&p.e, 2) == 0);
    REQUIRE(d->MemAlloc(&p.buf, 64 * sizeof(float)) == 0);
    args[0] = &p.buf;
    args[1] = &p.buf;
    args[2] = &p.buf;
    args[3] = &n;
    memset(&kp, 0, sizeof kp);
    kp.func = p.f;
    kp.grid_x = kp.grid_y = kp.grid_z = 1;
    kp.block_x = 64, kp.block_y = kp.block_z = 1;
    kp.kernel_params = args;
    REQUIRE(d->GraphCreate(&g, 0) == 0 && d->GraphAddKernelNode(&node, g, NULL, 0, &kp) == 0);
    REQUIRE(d->GraphInstantiate(&p.x, g, 0) == 0);
    REQUIRE(pthread_create(&th, NULL, ctx_thread, &p) == 0);
    pthread_join(th, NULL);
    for (i = 0; i < 20; i++) {
        if (emu_only[i] && !d->emu_config) continue;
        if (p.none[i] != TCU_INVALID_CONTEXT) OT_LOG("no current context: %s gave %d", names[i], p.none[i]);
        CHECK_EQ(p.none[i], TCU_INVALID_CONTEXT);
    }
    for (i = 0; i < 8 && d->emu_config; i++) { /* [EMU] another context's handles: INVALID_HANDLE */
        if (p.other[i] != TCU_INVALID_HANDLE) OT_LOG("another context current: %s gave %d", names[i], p.other[i]);
        CHECK_EQ(p.other[i], i == 7 ? 400 : TCU_INVALID_HANDLE);
    }
    for (i = 0; i < 8; i++) {
        if (p.pushed[i] != 0) OT_LOG("context pushed: %s gave %d", names[i], p.pushed[i]);
        CHECK_EQ(p.pushed[i], 0);
    }
    CHECK(p.popped == p.a_ctx);
    CHECK(p.after_pop == p.b_ctx && p.b_ctx != NULL); /* B's previous context is restored */
    CHECK(p.after_destroy == NULL);
    CHECK_EQ(d->StreamSynchronize(p.s), 0); /* y = x + x ran on B (then the graph, then the memset) */
    CHECK_EQ(d->MemcpyDtoH(got, p.buf, sizeof got), 0);
    for (i = 0; i < 64; i++) bad += got[i] != 0.0f;
    CHECK_EQ(bad, 0);
    d->GraphExecDestroy(p.x);
    d->GraphDestroy(g);
    d->EventDestroy(p.e);
    d->StreamDestroy(p.s);
    d->MemFree(p.buf);
}

typedef struct push_then_wait {
    ctx_probe* p;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int stage;
} push_then_wait;

static void* push_wait_call(void* arg) {
    push_then_wait* w = (push_then_wait*)arg;
    tcu_devptr tmp = 0;
    w->p->d->CtxPushCurrent(w->p->b_ctx);
    pthread_mutex_lock(&w->mu);
    w->stage = 1;
    pthread_cond_broadcast(&w->cv);
    while (w->stage != 2) pthread_cond_wait(&w->cv, &w->mu);
    pthread_mutex_unlock(&w->mu);
    w->p->none[0] = w->p->d->MemAlloc(&tmp, 16); /* destroyed by the other thread meanwhile */
    w->p->d->CtxPopCurrent(NULL);
    return NULL;
}

/* cuCtxDestroy: "If ctx is current to other threads, then ctx will remain current to those threads, and
 * attempting to access ctx from those threads will result in the error CUDA_ERROR_CONTEXT_IS_DESTROYED". */
OT_TEST(context_destroyed_by_another_thread_reports_709) {
    ctx_probe p;
    push_then_wait w;
    pthread_t th;
    tcu_ctx c = NULL, popped = NULL;
    TCU_REQUIRE_DRIVER(d);
    memset(&p, 0, sizeof p);
    memset(&w, 0, sizeof w);
    p.d = d;
    w.p = &p;
    pthread_mutex_init(&w.mu, NULL);
    pthread_cond_init(&w.cv, NULL);
    REQUIRE(d->CtxCreate(&c, 0, 0) == 0);
    REQUIRE(d->CtxPopCurrent(&popped) == 0 && popped == c);
    p.b_ctx = c;
    REQUIRE(pthread_create(&th, NULL, push_wait_call, &w) == 0);
    pthread_mutex_lock(&w.mu);
    while (w.stage != 1) pthread_cond_wait(&w.cv, &w.mu);
    CHECK_EQ(d->CtxDestroy(c), 0);
    w.stage = 2;
    pthread_cond_broadcast(&w.cv);
    pthread_mutex_unlock(&w.mu);
    pthread_join(th, NULL);
    CHECK_EQ(p.none[0], TCU_CONTEXT_IS_DESTROYED);
    pthread_mutex_destroy(&w.mu);
    pthread_cond_destroy(&w.cv);
}


/* ---------------------------------------------------------------- contexts left alive at exit */

/* Child modes of this binary (run through popen by the test below): exit with a context made by cuCtxCreate
 * alive, with the primary context retained once more, or after giving everything back. */
static int exit_child(const char* mode) {
    tcu_driver* d = tcu_get();
    tcu_ctx c = NULL;
    if (!d) return 2;
    if (strcmp(mode, "context") == 0) return d->CtxCreate(&c, 0, 0) == 0 ? 0 : 3;
    if (strcmp(mode, "primary") == 0) return d->PrimaryCtxRetain(&c, 0) == 0 ? 0 : 3;
    if (d->CtxCreate(&c, 0, 0) != 0 || d->CtxDestroy(c) != 0) return 3;
    return d->emu_stat && d->emu_stat("live_contexts") == 1 ? 0 : 4; /* the primary, released by atexit */
}

/* Runs this binary in a child mode; returns its stderr+stdout (static buffer) or NULL. */
static const char* run_child(const char* mode) {
    static char out[4096];
    char self[1024], cmd[1200];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    size_t got;
    FILE* f;
    if (n <= 0) return NULL;
    self[n] = 0;
    snprintf(cmd, sizeof cmd, "'%s' --exit-child %s 2>&1", self, mode);
    if (!(f = popen(cmd, "r"))) return NULL;
    got = fread(out, 1, sizeof out - 1, f);
    out[got] = 0;
    return pclose(f) == 0 ? out : NULL;
}

OT_TEST(contexts_alive_at_exit_are_reported) {
    const char* out;
    long long before;
    tcu_ctx c = NULL;
    TCU_REQUIRE_EMULATOR(d);
    REQUIRE(d->emu_stat != NULL);
    before = d->emu_stat("live_contexts");
    CHECK_EQ(before, 1); /* this binary holds the primary context */
    REQUIRE(d->CtxCreate(&c, 0, 0) == 0);
    CHECK_EQ(d->emu_stat("live_contexts"), 2);
    CHECK_EQ(d->CtxDestroy(c), 0);
    CHECK_EQ(d->emu_stat("live_contexts"), 1);
    out = run_child("context");
    REQUIRE(out != NULL);
    CHECK(strstr(out, "opara-emu: warning: libcuda.so.1 unloaded at process exit with 1 context(s)") != NULL);
    out = run_child("primary");
    REQUIRE(out != NULL);
    CHECK(strstr(out, "primary context retained 1 time(s)") != NULL);
    out = run_child("clean");
    REQUIRE(out != NULL);
    if (*out) OT_LOG("clean child said: %s", out);
    CHECK(strstr(out, "warning") == NULL);
}

static const opara_test_case tests[] = {
    OT_CASE(device_profile_matches_public_specs),
    OT_CASE(get_proc_address_follows_driver_13_rules),
    OT_CASE(hidden_symbol_looks_like_an_old_driver),
    OT_CASE(sample_add_matches_loop),
    OT_CASE(block_sum_with_barriers_matches_loop),
    OT_CASE(launch_configuration_errors),
    OT_CASE(kernel_params_holding_device_pointers_are_rejected),
    OT_CASE(ptx_errors_have_the_driver_codes),
    OT_CASE(ptx_param_list_must_match_host_build),
    OT_CASE(stream_work_runs_asynchronously),
    OT_CASE(cross_stream_event_wait_orders_work),
    OT_CASE(legacy_stream_waits_for_blocking_streams),
    OT_CASE(event_times_are_monotonic),
    OT_CASE(host_function_may_not_call_the_driver),
    OT_CASE(memory_checks),
    OT_CASE(new_allocations_are_poisoned),
    OT_CASE(allocation_failure_injection),
    OT_CASE(out_of_bounds_kernel_write_hits_the_guard_zone),
    OT_CASE(dynamic_shared_memory_and_barrier),
    OT_CASE(missing_barrier_gives_wrong_results),
    OT_CASE(divergent_barrier_fails_the_launch),
    OT_CASE(context_stack_follows_push_pop_and_set),
    OT_CASE(objects_of_another_thread_need_their_context_current),
    OT_CASE(context_destroyed_by_another_thread_reports_709),
    OT_CASE(contexts_alive_at_exit_are_reported),
};

int main(int argc, char** argv) {
    if (argc == 3 && strcmp(argv[1], "--exit-child") == 0) return exit_child(argv[2]);
    return opara_test_main(argc, argv, tests, OT_COUNT(tests));
}
