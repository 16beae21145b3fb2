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
    CHECK_EQ(d->GetProcAddress("cuMemAlloc", NULL, 3020, 0, &status), TCU_INVALID_VALUE);
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
    CHECK_EQ(d->LaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL), TCU_INVALID_VALUE);
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
    CHECK_EQ(d->LaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, extra_wrong), TCU_OUT_OF_RESOURCES);
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
    CHECK_EQ(d->ModuleLoadData(&m, "this is not PTX"), TCU_INVALID_PTX);
    CHECK_EQ(d->ModuleLoadData(&m, ".version 99.0\n.target sm_75\n.address_size 64\n"), TCU_UNSUPPORTED_PTX);
    CHECK_EQ(d->ModuleLoadData(&m, ".version 9.0\n.target sm_120\n.address_size 64\n"), TCU_INVALID_PTX);
    CHECK_EQ(d->ModuleLoadData(&m, NULL), TCU_INVALID_VALUE);
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
    tcu_devptr p;
    float host[4];
    REQUIRE(d->MemAlloc(&p, 16) == 0);
    CHECK_EQ(p % 256, 0);
    CHECK_EQ(d->MemcpyDtoH(host, p + 8, 16), TCU_INVALID_VALUE); /* runs past the allocation */
    CHECK_EQ(d->MemcpyHtoD(p, NULL, 16), TCU_INVALID_VALUE);
    CHECK_EQ(d->MemAlloc(&p, 0), TCU_INVALID_VALUE);
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
    int i, k, bad = 0, max_dyn = 0;
    if (!f) SKIP("test kernels are emulator-only");
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
    CHECK_EQ(d->FuncGetAttribute(&max_dyn, 8, f), 0);
    CHECK_EQ(max_dyn, 49152);
    CHECK_EQ(d->FuncSetAttribute(f, 8, 65536 + 1), TCU_INVALID_VALUE); /* above the opt-in limit (5.3) */
    CHECK_EQ(d->FuncSetAttribute(f, 4, 10), TCU_INVALID_VALUE);        /* NUM_REGS is read-only */
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
};

int main(int argc, char** argv) { return opara_test_main(argc, argv, tests, OT_COUNT(tests)); }
