/* Sessions on the CPU backend: results against hand-computed values, every strategy and thread
   count against the sequential single-thread run, input/output checking, backend selection,
   OPARA_ERR_BUSY on concurrent calls, and one model shared by sessions on several threads. */
#if defined(__linux__)
#  define _GNU_SOURCE /* sched_getaffinity and CPU_COUNT for the worker-binding test */
#endif
#define OPARA_IMPLEMENTATION
#include "opara.h"
#include "opara_test.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__linux__)
#  include <dirent.h>
#  include <sched.h>
#endif

static opara_attr attr_int(const char* name, int64_t v) {
    opara_attr a;
    memset(&a, 0, sizeof a);
    a.name = name;
    a.type = OPARA_ATTR_INT;
    a.v.i = v;
    return a;
}

static opara_attr attr_ints(const char* name, const int64_t* v, uint32_t n) {
    opara_attr a;
    memset(&a, 0, sizeof a);
    a.name = name;
    a.type = OPARA_ATTR_INTS;
    a.count = n;
    a.v.ints = v;
    return a;
}

static const float small_c[4] = {0.5f, -1.0f, 2.0f, 0.25f};

/* x[B,4] -> relu(x) + c, x * c -> concat(axis 1) -> y[B,8]; also outputs s = relu(x) + c. */
static opara_model* build_small(opara_runtime* rt) {
    opara_builder* b;
    opara_model* m = NULL;
    int64_t xd[2] = {OPARA_DIM_BATCH, 4}, cd[1] = {4};
    const char *relu_in[1] = {"x"}, *relu_out[1] = {"r"}, *add_in[2] = {"r", "c"}, *add_out[1] = {"s"};
    const char *mul_in[2] = {"x", "c"}, *mul_out[1] = {"p"}, *cat_in[2] = {"s", "p"}, *cat_out[1] = {"y"};
    opara_attr axis = attr_int("axis", 1);
    if (opara_builder_create(rt, &b) != OPARA_OK) return NULL;
    opara_builder_add_input(b, "x", OPARA_DTYPE_F32, 2, xd);
    opara_builder_add_constant(b, "c", OPARA_DTYPE_F32, 1, cd, small_c, sizeof small_c);
    opara_builder_add_node(b, "Relu", "relu", 1, relu_in, 1, relu_out, 0, NULL);
    opara_builder_add_node(b, "Add", "add", 2, add_in, 1, add_out, 0, NULL);
    opara_builder_add_node(b, "Mul", "mul", 2, mul_in, 1, mul_out, 0, NULL);
    opara_builder_add_node(b, "Concat", "cat", 2, cat_in, 1, cat_out, 1, &axis);
    opara_builder_add_output(b, "y");
    opara_builder_add_output(b, "s");
    opara_builder_finish(b, &m);
    opara_builder_destroy(b);
    return m;
}

/* x[B,8,H,H] -> 4 branches (Conv3x3+Relu, Conv1x1) -> Concat -> GlobalAveragePool -> Flatten -> Gemm. */
static opara_model* build_branchy(opara_runtime* rt, int64_t hw) {
    opara_builder* b;
    opara_model* m = NULL;
    int64_t xd[4] = {OPARA_DIM_BATCH, 8, hw, hw}, w3d[4] = {8, 8, 3, 3}, w1d[4] = {8, 8, 1, 1}, bd[1] = {8};
    int64_t fcw[2] = {10, 32}, fcb[1] = {10}, pads[4] = {1, 1, 1, 1};
    float w3[8 * 8 * 9], w1[64], bias[8], fw[320], fb[10];
    const char* cat_in[4];
    char names[4][4][16];
    int i, j;
    uint32_t seed = 12345;
    opara_attr conv_attrs[1], cat_axis = attr_int("axis", 1), trans = attr_int("transB", 1);
    conv_attrs[0] = attr_ints("pads", pads, 4);
    if (opara_builder_create(rt, &b) != OPARA_OK) return NULL;
    opara_builder_add_input(b, "x", OPARA_DTYPE_F32, 4, xd);
    for (i = 0; i < 4; ++i) {
        const char *c1_in[3], *c1_out[1], *r_in[1], *r_out[1], *c2_in[3], *c2_out[1];
        char wn[16], w1n[16], bn[16];
        for (j = 0; j < 8 * 8 * 9; ++j) w3[j] = (float)((seed = seed * 1103515245u + 12345u) >> 16 & 0xff) / 1024.0f - 0.12f;
        for (j = 0; j < 64; ++j) w1[j] = (float)((seed = seed * 1103515245u + 12345u) >> 16 & 0xff) / 512.0f - 0.25f;
        for (j = 0; j < 8; ++j) bias[j] = 0.01f * (float)(j - 3 + i);
        sprintf(wn, "w3_%d", i);
        sprintf(w1n, "w1_%d", i);
        sprintf(bn, "b_%d", i);
        for (j = 0; j < 4; ++j) sprintf(names[i][j], "t%d_%d", i, j);
        opara_builder_add_constant(b, wn, OPARA_DTYPE_F32, 4, w3d, w3, sizeof w3);
        opara_builder_add_constant(b, w1n, OPARA_DTYPE_F32, 4, w1d, w1, sizeof w1);
        opara_builder_add_constant(b, bn, OPARA_DTYPE_F32, 1, bd, bias, sizeof bias);
        c1_in[0] = "x"; c1_in[1] = wn; c1_in[2] = bn; c1_out[0] = names[i][0];
        r_in[0] = names[i][0]; r_out[0] = names[i][1];
        c2_in[0] = names[i][1]; c2_in[1] = w1n; c2_in[2] = bn; c2_out[0] = names[i][2];
        opara_builder_add_node(b, "Conv", NULL, 3, c1_in, 1, c1_out, 1, conv_attrs);
        opara_builder_add_node(b, "Relu", NULL, 1, r_in, 1, r_out, 0, NULL);
        opara_builder_add_node(b, "Conv", NULL, 3, c2_in, 1, c2_out, 0, NULL);
        cat_in[i] = names[i][2];
    }
    for (j = 0; j < 320; ++j) fw[j] = (float)((seed = seed * 1103515245u + 12345u) >> 16 & 0xff) / 256.0f - 0.5f;
    for (j = 0; j < 10; ++j) fb[j] = 0.1f * (float)j;
    opara_builder_add_constant(b, "fw", OPARA_DTYPE_F32, 2, fcw, fw, sizeof fw);
    opara_builder_add_constant(b, "fb", OPARA_DTYPE_F32, 1, fcb, fb, sizeof fb);
    {
        const char *cat_out[1] = {"cat"}, *gap_in[1] = {"cat"}, *gap_out[1] = {"gap"}, *fl_in[1] = {"gap"};
        const char *fl_out[1] = {"flat"}, *fc_in[3] = {"flat", "fw", "fb"}, *fc_out[1] = {"logits"};
        opara_attr fl_axis = attr_int("axis", 1);
        opara_builder_add_node(b, "Concat", NULL, 4, cat_in, 1, cat_out, 1, &cat_axis);
        opara_builder_add_node(b, "GlobalAveragePool", NULL, 1, gap_in, 1, gap_out, 0, NULL);
        opara_builder_add_node(b, "Flatten", NULL, 1, fl_in, 1, fl_out, 1, &fl_axis);
        opara_builder_add_node(b, "Gemm", NULL, 3, fc_in, 1, fc_out, 1, &trans);
    }
    opara_builder_add_output(b, "logits");
    opara_builder_finish(b, &m);
    opara_builder_destroy(b);
    return m;
}

static opara_session* make_session(opara_runtime* rt, const opara_model* m, opara_strategy st, uint32_t threads,
                                   int64_t batch) {
    opara_session_desc d;
    opara_session* s = NULL;
    memset(&d, 0, sizeof d);
    d.backend = OPARA_BACKEND_CPU;
    d.strategy = st;
    d.threads = threads;
    d.batch_size = batch;
    if (opara_session_create(rt, m, &d, &s) != OPARA_OK) printf("session_create: %s\n", opara_runtime_last_error(rt));
    return s;
}

static void fill_tensor(opara_tensor* t, const char* name, int32_t rank, const int64_t* dims, void* data) {
    int i;
    memset(t, 0, sizeof *t);
    t->name = name;
    t->dtype = OPARA_DTYPE_F32;
    t->rank = rank;
    for (i = 0; i < rank; ++i) t->dims[i] = dims[i];
    t->data = data;
}

OT_TEST(small_model_matches_hand_computation) {
    opara_runtime* rt;
    opara_model* m;
    opara_session* s;
    float x[12], y[24], sv[12];
    int64_t xd[2] = {3, 4}, yd[2] = {3, 8};
    opara_tensor in, out[2];
    const float* direct;
    int i, j;
    REQUIRE(opara_runtime_create(NULL, &rt) == OPARA_OK);
    m = build_small(rt);
    REQUIRE(m != NULL);
    s = make_session(rt, m, OPARA_STRATEGY_OPARA, 2, 3);
    REQUIRE(s != NULL);
    for (i = 0; i < 12; ++i) x[i] = (float)(i - 5) * 0.75f;
    fill_tensor(&in, "x", 2, xd, x);
    fill_tensor(&out[0], "y", 2, yd, y);
    fill_tensor(&out[1], NULL, 2, xd, sv); /* by position: output 1 is "s" */
    out[1].name = NULL;
    {
        opara_tensor outs[2];
        outs[0] = out[0];
        outs[1] = out[1];
        outs[1].name = "s";
        CHECK_EQ(opara_session_run(s, &in, 1, outs, 2), OPARA_OK);
    }
    for (i = 0; i < 3; ++i)
        for (j = 0; j < 4; ++j) {
            float v = x[i * 4 + j];
            CHECK_NEAR(y[i * 8 + j], (v > 0 ? v : 0) + small_c[j], 1e-6);
            CHECK_NEAR(y[i * 8 + 4 + j], v * small_c[j], 1e-6);
            CHECK_NEAR(sv[i * 4 + j], (v > 0 ? v : 0) + small_c[j], 1e-6);
        }
    direct = (const float*)opara_session_output_data(s, 0);
    REQUIRE(direct != NULL);
    CHECK(memcmp(direct, y, sizeof y) == 0);
    opara_session_destroy(s);
    opara_model_destroy(m);
    opara_runtime_destroy(rt);
}

/* Runs the branchy model with a strategy/thread count and returns the logits. */
static int run_branchy(const opara_model* m, opara_runtime* rt, opara_strategy st, uint32_t threads, const float* x,
                       int64_t batch, int64_t hw, float* logits) {
    opara_session* s = make_session(rt, m, st, threads, batch);
    opara_tensor in, out;
    int64_t xd[4] = {batch, 8, hw, hw}, yd[2] = {batch, 10};
    int ok, r;
    if (!s) return 0;
    fill_tensor(&in, "x", 4, xd, (void*)(uintptr_t)x);
    fill_tensor(&out, "logits", 2, yd, logits);
    ok = 1;
    for (r = 0; r < 3 && ok; ++r) ok = opara_session_run(s, &in, 1, &out, 1) == OPARA_OK;
    opara_session_destroy(s);
    return ok;
}

OT_TEST(strategies_and_threads_agree_with_sequential) {
    static const opara_strategy strategies[] = {OPARA_STRATEGY_OPARA, OPARA_STRATEGY_WAVEFRONT, OPARA_STRATEGY_NIMBLE,
                                                OPARA_STRATEGY_OPARA_TOPO, OPARA_STRATEGY_SEQUENTIAL};
    static const uint32_t threads[] = {1, 2, 3, 5};
    opara_runtime* rt;
    opara_model* m;
    int64_t batch = 2, hw = 20;
    size_t nx = (size_t)(batch * 8 * hw * hw), i, si, ti;
    float* x = (float*)malloc(nx * sizeof(float));
    float ref[20], got[20];
    REQUIRE(opara_runtime_create(NULL, &rt) == OPARA_OK);
    m = build_branchy(rt, hw);
    REQUIRE(m != NULL);
    for (i = 0; i < nx; ++i) x[i] = (float)((i * 7919) % 1000) / 500.0f - 1.0f;
    REQUIRE(run_branchy(m, rt, OPARA_STRATEGY_SEQUENTIAL, 1, x, batch, hw, ref));
    for (si = 0; si < sizeof strategies / sizeof strategies[0]; ++si)
        for (ti = 0; ti < sizeof threads / sizeof threads[0]; ++ti) {
            memset(got, 0, sizeof got);
            CHECK(run_branchy(m, rt, strategies[si], threads[ti], x, batch, hw, got));
            OT_LOG("strategy %s threads %u", opara_strategy_name(strategies[si]), threads[ti]);
            CHECK(memcmp(ref, got, sizeof ref) == 0);
        }
    free(x);
    opara_model_destroy(m);
    opara_runtime_destroy(rt);
}

OT_TEST(plan_info_reports_streams_memory_and_gemm) {
    opara_runtime* rt;
    opara_model* m;
    opara_session* s;
    opara_plan_info info;
    opara_run_stats st;
    opara_node_time times[64];
    float x[8 * 12 * 12], y[10];
    int64_t xd[4] = {1, 8, 12, 12}, yd[2] = {1, 10};
    opara_tensor in, out;
    uint32_t n, i;
    REQUIRE(opara_runtime_create(NULL, &rt) == OPARA_OK);
    m = build_branchy(rt, 12);
    s = make_session(rt, m, OPARA_STRATEGY_OPARA, 2, 1);
    REQUIRE(s != NULL);
    REQUIRE(opara_session_get_plan_info(s, &info) == OPARA_OK);
    CHECK(info.n_streams >= 4); /* the four branches are independent */
    CHECK(info.peak_memory_bytes > 0 && info.peak_memory_bytes <= info.no_reuse_bytes);
    CHECK(info.gemm && info.gemm[0]);
    CHECK_EQ(info.n_workers, 2);
    CHECK_STR(info.strategy, "opara");
    /* what ran where: 8 Conv (3x3 through im2col, 1x1 as one GEMM) on the session's SGEMM, exact FP32 */
    CHECK_STR(info.backend, "cpu");
    CHECK_STR(info.precision, "fp32");
    CHECK_EQ(info.n_conv, 8);
    { /* the conv line names the GEMM path: info.gemm up to the refusals ("built-in (avx512); refused ...") */
        char path[96];
        size_t len = strcspn(info.gemm, ";");
        snprintf(path, sizeof path, "%.*s", (int)len, info.gemm);
        CHECK(strstr(info.conv, "im2col/1x1 GEMM on ") != NULL && strstr(info.conv, path) != NULL);
    }
    CHECK(strstr(info.conv, "depthwise") == NULL);
    CHECK_EQ(info.n_conv_library, strncmp(info.gemm, "built-in", 8) == 0 ? 0u : 8u);
    CHECK_EQ(info.workspace_bytes, 0);
    CHECK(info.cuda_mode == NULL);
    { /* the built-in SGEMM is no library */
        opara_session_desc d;
        opara_session* b = NULL;
        opara_plan_info bi;
        memset(&d, 0, sizeof d);
        d.backend = OPARA_BACKEND_CPU, d.builtin_gemm = 1, d.threads = 1;
        REQUIRE(opara_session_create(rt, m, &d, &b) == OPARA_OK);
        REQUIRE(opara_session_get_plan_info(b, &bi) == OPARA_OK);
        CHECK_EQ(bi.n_conv, 8);
        CHECK_EQ(bi.n_conv_library, 0);
        CHECK(strstr(bi.conv, "GEMM on built-in") != NULL);
        opara_session_destroy(b);
    }
    memset(x, 0, sizeof x);
    fill_tensor(&in, "x", 4, xd, x);
    fill_tensor(&out, "logits", 2, yd, y);
    CHECK_EQ(opara_session_run(s, &in, 1, &out, 1), OPARA_OK);
    CHECK_EQ(opara_session_run(s, &in, 1, &out, 1), OPARA_OK);
    REQUIRE(opara_session_get_run_stats(s, &st) == OPARA_OK);
    CHECK_EQ((long long)st.runs, 2);
    CHECK(st.min_ns > 0 && st.min_ns <= st.last_ns + st.total_ns);
    n = opara_session_get_node_times(s, times, 64);
    CHECK_EQ(n, info.n_nodes);
    for (i = 0; i < n && i < 64; ++i) {
        CHECK(times[i].end_ns >= times[i].start_ns);
        CHECK(times[i].worker < 2);
    }
    opara_session_destroy(s);
    opara_model_destroy(m);
    opara_runtime_destroy(rt);
}

/* Constant Gemm weights are repacked once at creation (plan info counts the copy: 32 x 10 weights
   padded to a strip of 16 or 32 columns) and give bit for bit the results of a session that keeps
   them as they are (cpu_keep_weights, no copy). */
OT_TEST(packed_weights_counted_and_bitwise_equal) {
    enum { B = 5 };
    opara_runtime* rt;
    opara_model* m;
    opara_session* s[2];
    opara_plan_info info[2];
    static float x[B * 8 * 10 * 10], y[2][B * 10];
    int64_t xd[4] = {B, 8, 10, 10}, yd[2] = {B, 10};
    opara_tensor in, out;
    uint32_t seed = 7;
    int k;
    size_t i;
    REQUIRE(opara_runtime_create(NULL, &rt) == OPARA_OK);
    m = build_branchy(rt, 10);
    REQUIRE(m != NULL);
    for (i = 0; i < sizeof x / sizeof x[0]; ++i) x[i] = (float)((seed = seed * 1103515245u + 12345u) >> 16 & 0xff) / 64.0f - 2.0f;
    for (k = 0; k < 2; ++k) {
        opara_session_desc d;
        memset(&d, 0, sizeof d);
        d.backend = OPARA_BACKEND_CPU, d.builtin_gemm = 1, d.threads = 2, d.batch_size = B;
        d.cpu_keep_weights = k;
        REQUIRE(opara_session_create(rt, m, &d, &s[k]) == OPARA_OK);
        REQUIRE(opara_session_get_plan_info(s[k], &info[k]) == OPARA_OK);
        fill_tensor(&in, "x", 4, xd, x);
        fill_tensor(&out, "logits", 2, yd, y[k]);
        CHECK_EQ(opara_session_run(s[k], &in, 1, &out, 1), OPARA_OK);
        opara_session_destroy(s[k]);
    }
    CHECK(info[0].packed_weight_bytes == 32 * 16 * 4 || info[0].packed_weight_bytes == 32 * 32 * 4);
    CHECK_EQ((long long)info[1].packed_weight_bytes, 0);
    CHECK(memcmp(y[0], y[1], sizeof y[0]) == 0);
    opara_model_destroy(m);
    opara_runtime_destroy(rt);
}

/* The CPU plan is made for the CPU's model, not a GPU preset: a 3x3 convolution of 8 channels on
   10x10 does 13 FLOPs a byte, compute-bound on any CPU model (balance <= 2 FLOPs a byte) but
   memory-bound on the default GPU (an RTX 2080 SUPER: 22.5). Alg. 2 orders by estimated time,
   and the executor runs ready nodes by the plan's critical-path priority. */
OT_TEST(cpu_plan_is_made_for_the_cpu) {
    opara_runtime* rt;
    opara_model* m;
    opara_session* s;
    const opara__graph* g;
    opara__op_desc* gpu;
    uint32_t n, convs = 0;
    REQUIRE(opara_runtime_create(NULL, &rt) == OPARA_OK);
    m = build_branchy(rt, 10);
    REQUIRE(m != NULL);
    s = make_session(rt, m, OPARA_STRATEGY_OPARA, 2, 1);
    REQUIRE(s != NULL);
    g = s->g;
    gpu = (opara__op_desc*)calloc(g->n_nodes, sizeof *gpu);
    REQUIRE(gpu != NULL);
    REQUIRE(opara__describe_ops(g, s->shapes, NULL, gpu) == OPARA_OK);
    CHECK_EQ((int)s->plan->desc.metric, (int)OPARA__METRIC_TIME);
    CHECK(((const opara__cpu_backend*)s->be)->exec->rank == s->plan->priority);
    for (n = 0; n < g->n_nodes; ++n) {
        if (g->nodes[n].op != OPARA__OP_CONV || g->values[g->nodes[n].inputs[1]].shape.dims[2] != 3) continue;
        convs++;
        CHECK_EQ((int)s->descs[n].op_class, (int)OPARA__CLASS_COMPUTE);
        CHECK_EQ((int)gpu[n].op_class, (int)OPARA__CLASS_MEMORY);
        CHECK(s->descs[n].time_ms > gpu[n].time_ms);
        /* a node's priority covers its own time and the longest path after it */
        CHECK(s->plan->priority[n] > s->descs[n].time_ms);
    }
    CHECK_EQ(convs, 4);
    free(gpu);
    opara_session_destroy(s);
    opara_model_destroy(m);
    opara_runtime_destroy(rt);
}

#if defined(__linux__)
/* Threads of this process bound to exactly one CPU, and the CPUs the process may use. */
static int single_cpu_threads(int* allowed) {
    DIR* d = opendir("/proc/self/task");
    struct dirent* e;
    cpu_set_t set;
    int n = 0;
    *allowed = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 0;
    while (d && (e = readdir(d)) != NULL) {
        int tid = atoi(e->d_name);
        if (tid > 0 && sched_getaffinity(tid, sizeof set, &set) == 0 && CPU_COUNT(&set) == 1) ++n;
    }
    if (d) closedir(d);
    return n;
}

static void sleep_10ms(void) {
    struct timespec ts = {0, 10000000L};
    nanosleep(&ts, NULL);
}
#elif defined(_WIN32)
#  include <tlhelp32.h>
static int bits(DWORD_PTR mask) {
    int n = 0;
    for (; mask; mask &= mask - 1) ++n;
    return n;
}

/* The same on Windows, where a thread's affinity is read by setting another one: each thread of this
   process gets the process's mask for a moment and its own back. */
static int single_cpu_threads(int* allowed) {
    DWORD_PTR process = 0, system = 0, before;
    DWORD pid = GetCurrentProcessId();
    HANDLE snap = CreateToolhelp32Snapshot(TH32CS_SNAPTHREAD, 0), h;
    THREADENTRY32 te;
    BOOL more;
    int n = 0;
    *allowed = GetProcessAffinityMask(GetCurrentProcess(), &process, &system) ? bits(process) : 0;
    if (snap == INVALID_HANDLE_VALUE || *allowed == 0) return 0;
    te.dwSize = sizeof te;
    for (more = Thread32First(snap, &te); more; more = Thread32Next(snap, &te)) {
        if (te.th32OwnerProcessID != pid) continue;
        h = OpenThread(THREAD_SET_INFORMATION | THREAD_QUERY_INFORMATION, FALSE, te.th32ThreadID);
        if (!h) continue;
        before = SetThreadAffinityMask(h, process);
        if (before) {
            SetThreadAffinityMask(h, before);
            n += bits(before) == 1;
        }
        CloseHandle(h);
    }
    CloseHandle(snap);
    return n;
}

static void sleep_10ms(void) { Sleep(10); }
#endif

/* cpu_pin_workers = 1 binds each worker thread (not the caller) to one CPU; 0 (the default) and
   other values bind none, with the thread count given or left to the library. Results are the
   same. */
OT_TEST(worker_threads_bound_only_when_asked) {
#if defined(__linux__) || defined(_WIN32)
    opara_runtime* rt;
    opara_model* m;
    float x[8 * 10 * 10], y[3][10];
    int64_t xd[4] = {1, 8, 10, 10}, yd[2] = {1, 10};
    opara_tensor in, out;
    int k, allowed, before, bound[3];
    static const int modes[3] = {1, 2, 0};
    REQUIRE(opara_runtime_create(NULL, &rt) == OPARA_OK);
    m = build_branchy(rt, 10);
    REQUIRE(m != NULL);
    for (k = 0; k < 8 * 100; ++k) x[k] = (float)(k % 17) * 0.1f - 0.8f;
    before = single_cpu_threads(&allowed);
    if (allowed < 2) {
        opara_model_destroy(m);
        opara_runtime_destroy(rt);
        SKIP("the process may use one CPU only");
    }
    for (k = 0; k < 3; ++k) {
        opara_session_desc d;
        opara_session* s = NULL;
        memset(&d, 0, sizeof d);
        d.backend = OPARA_BACKEND_CPU, d.threads = k == 2 ? 0 : 3, d.cpu_pin_workers = modes[k];
        REQUIRE(opara_session_create(rt, m, &d, &s) == OPARA_OK);
        fill_tensor(&in, "x", 4, xd, x);
        fill_tensor(&out, "logits", 2, yd, y[k]);
        CHECK_EQ(opara_session_run(s, &in, 1, &out, 1), OPARA_OK);
        { /* a worker binds itself when it first runs: allow it up to a second to start */
            int tries;
            for (tries = 0; tries < 100; ++tries) {
                bound[k] = single_cpu_threads(&allowed) - before;
                if (bound[k] >= 2 || (modes[k] != 1 && tries >= 10)) break;
                sleep_10ms();
            }
        }
        opara_session_destroy(s);
    }
    CHECK_EQ(bound[0], 2); /* both workers, the caller left alone */
    CHECK_EQ(bound[1], 0);
    CHECK_EQ(bound[2], 0); /* the default, with the thread count left to the library */
    CHECK(memcmp(y[0], y[1], sizeof y[0]) == 0 && memcmp(y[0], y[2], sizeof y[0]) == 0);
    opara_model_destroy(m);
    opara_runtime_destroy(rt);
#else
    SKIP("binding threads is implemented on Linux and Windows only");
#endif
}

OT_TEST(run_rejects_bad_tensors_with_details) {
    opara_runtime* rt;
    opara_model* m;
    opara_session* s;
    float x[12], y[24];
    int64_t xd[2] = {3, 4}, bad[2] = {3, 5}, yd[2] = {3, 8};
    opara_tensor in, out;
    REQUIRE(opara_runtime_create(NULL, &rt) == OPARA_OK);
    m = build_small(rt);
    s = make_session(rt, m, OPARA_STRATEGY_OPARA, 1, 3);
    REQUIRE(s != NULL);
    memset(x, 0, sizeof x);
    fill_tensor(&in, "x", 2, bad, x);
    fill_tensor(&out, "y", 2, yd, y);
    CHECK_EQ(opara_session_run(s, &in, 1, &out, 1), OPARA_ERR_SHAPE);
    CHECK(strstr(opara_session_last_error(s), "[3, 4]") != NULL);
    fill_tensor(&in, "nope", 2, xd, x);
    CHECK_EQ(opara_session_run(s, &in, 1, &out, 1), OPARA_ERR_NOT_FOUND);
    CHECK(strstr(opara_session_last_error(s), "nope") != NULL);
    CHECK_EQ(opara_session_run(s, NULL, 0, &out, 1), OPARA_ERR_INVALID_ARGS);
    CHECK(strstr(opara_session_last_error(s), "missing") != NULL);
    fill_tensor(&in, "x", 2, xd, x);
    in.dtype = OPARA_DTYPE_I64;
    CHECK_EQ(opara_session_run(s, &in, 1, &out, 1), OPARA_ERR_BAD_DTYPE);
    in.dtype = OPARA_DTYPE_F32;
    CHECK_EQ(opara_session_run(s, &in, 1, &out, 1), OPARA_OK);
    CHECK_STR(opara_session_last_error(s), "");
    opara_session_destroy(s);
    opara_model_destroy(m);
    opara_runtime_destroy(rt);
}

static char logged[512];
static void capture_log(opara_log_level level, opara_log_item item, const char* message, void* user) {
    (void)user;
    if (level == OPARA_LOG_INFO && item == OPARA_LOGITEM_BACKEND_FALLBACK) snprintf(logged, sizeof logged, "%s", message);
}

OT_TEST(backend_selection_auto_falls_back_cuda_fails) {
    opara_runtime* rt;
    opara_model* m;
    opara_session* s = NULL;
    opara_session_desc d;
    opara_plan_info info;
    REQUIRE(opara_runtime_create(NULL, &rt) == OPARA_OK);
    m = build_small(rt);
    memset(&d, 0, sizeof d);
    d.backend = OPARA_BACKEND_CUDA;
    CHECK_EQ(opara_session_create(rt, m, &d, &s), OPARA_ERR_NO_BACKEND);
    CHECK(s == NULL);
    CHECK(strstr(opara_runtime_last_error(rt), "CUDA backend unavailable: ") != NULL);
    d.backend = OPARA_BACKEND_AUTO;
    d.logger.func = capture_log;
    logged[0] = 0;
    REQUIRE(opara_session_create(rt, m, &d, &s) == OPARA_OK);
    CHECK(strstr(logged, "CUDA backend unavailable: ") != NULL);
    REQUIRE(opara_session_get_plan_info(s, &info) == OPARA_OK);
    CHECK_STR(info.backend, "cpu");
    opara_session_destroy(s);
    d.backend = (opara_backend)7;
    CHECK_EQ(opara_session_create(rt, m, &d, &s), OPARA_ERR_BAD_ENUM);
    opara_model_destroy(m);
    opara_runtime_destroy(rt);
}

/* ---- concurrency ------------------------------------------------------------------------------ */

typedef struct runner {
    opara_session* s;
    const float* x;
    int64_t batch, hw;
    const float* expect;
    int runs, ok, busy, wrong;
    volatile int* started;
} runner;

static void* runner_main(void* p) {
    runner* r = (runner*)p;
    opara_tensor in, out;
    int64_t xd[4], yd[2];
    float y[20];
    int i;
    xd[0] = r->batch; xd[1] = 8; xd[2] = r->hw; xd[3] = r->hw;
    yd[0] = r->batch; yd[1] = 10;
    fill_tensor(&in, "x", 4, xd, (void*)(uintptr_t)r->x);
    fill_tensor(&out, "logits", 2, yd, y);
    for (i = 0; i < r->runs; ++i) {
        opara_result res = opara_session_run(r->s, &in, 1, &out, 1);
        if (res == OPARA_OK) {
            ++r->ok;
            if (memcmp(y, r->expect, (size_t)r->batch * 10 * sizeof(float)) != 0) ++r->wrong;
        } else if (res == OPARA_ERR_BUSY) {
            ++r->busy;
        }
    }
    return NULL;
}

OT_TEST(concurrent_runs_on_one_session_get_busy_never_race) {
    opara_runtime* rt;
    opara_model* m;
    opara_session* s;
    int64_t hw = 24;
    size_t nx = 8 * 24 * 24, i;
    float* x = (float*)malloc(nx * sizeof(float));
    float expect[10];
    runner r[3];
    pthread_t th[3];
    int t, total_ok = 0, total_busy = 0, wrong = 0;
    REQUIRE(opara_runtime_create(NULL, &rt) == OPARA_OK);
    m = build_branchy(rt, hw);
    for (i = 0; i < nx; ++i) x[i] = (float)(i % 17) / 8.0f - 1.0f;
    REQUIRE(run_branchy(m, rt, OPARA_STRATEGY_SEQUENTIAL, 1, x, 1, hw, expect));
    s = make_session(rt, m, OPARA_STRATEGY_OPARA, 2, 1);
    REQUIRE(s != NULL);
    for (t = 0; t < 3; ++t) {
        memset(&r[t], 0, sizeof r[t]);
        r[t].s = s;
        r[t].x = x;
        r[t].batch = 1;
        r[t].hw = hw;
        r[t].expect = expect;
        r[t].runs = 40;
        pthread_create(&th[t], NULL, runner_main, &r[t]);
    }
    for (t = 0; t < 3; ++t) {
        pthread_join(th[t], NULL);
        total_ok += r[t].ok;
        total_busy += r[t].busy;
        wrong += r[t].wrong;
    }
    OT_LOG("ok %d busy %d", total_ok, total_busy);
    CHECK_EQ(total_ok + total_busy, 120);
    CHECK(total_ok > 0);
    CHECK_EQ(wrong, 0);
    opara_session_destroy(s);
    free(x);
    opara_model_destroy(m);
    opara_runtime_destroy(rt);
}

OT_TEST(one_model_shared_by_sessions_on_threads) {
    opara_runtime* rts[3];
    opara_runtime* rt;
    opara_model* m;
    int64_t hw = 16;
    size_t nx = 2 * 8 * 16 * 16, i;
    float* x = (float*)malloc(nx * sizeof(float));
    float expect[20];
    runner r[3];
    pthread_t th[3];
    int t;
    REQUIRE(opara_runtime_create(NULL, &rt) == OPARA_OK);
    m = build_branchy(rt, hw);
    for (i = 0; i < nx; ++i) x[i] = (float)(i % 23) / 11.0f - 1.0f;
    REQUIRE(run_branchy(m, rt, OPARA_STRATEGY_SEQUENTIAL, 1, x, 2, hw, expect));
    for (t = 0; t < 3; ++t) { /* one runtime per thread, as the API asks */
        REQUIRE(opara_runtime_create(NULL, &rts[t]) == OPARA_OK);
        memset(&r[t], 0, sizeof r[t]);
        r[t].s = make_session(rts[t], m, t == 0 ? OPARA_STRATEGY_OPARA : (t == 1 ? OPARA_STRATEGY_NIMBLE : OPARA_STRATEGY_SEQUENTIAL), 2, 2);
        REQUIRE(r[t].s != NULL);
        r[t].x = x;
        r[t].batch = 2;
        r[t].hw = hw;
        r[t].expect = expect;
        r[t].runs = 15;
    }
    for (t = 0; t < 3; ++t) pthread_create(&th[t], NULL, runner_main, &r[t]);
    for (t = 0; t < 3; ++t) {
        pthread_join(th[t], NULL);
        CHECK_EQ(r[t].ok, 15);
        CHECK_EQ(r[t].wrong, 0);
        opara_session_destroy(r[t].s);
        opara_runtime_destroy(rts[t]);
    }
    free(x);
    opara_model_destroy(m);
    opara_runtime_destroy(rt);
}

static const opara_test_case tests[] = {
    OT_CASE(small_model_matches_hand_computation),
    OT_CASE(strategies_and_threads_agree_with_sequential),
    OT_CASE(plan_info_reports_streams_memory_and_gemm),
    OT_CASE(packed_weights_counted_and_bitwise_equal),
    OT_CASE(cpu_plan_is_made_for_the_cpu),
    OT_CASE(worker_threads_bound_only_when_asked),
    OT_CASE(run_rejects_bad_tensors_with_details),
    OT_CASE(backend_selection_auto_falls_back_cuda_fails),
    OT_CASE(concurrent_runs_on_one_session_get_busy_never_race),
    OT_CASE(one_model_shared_by_sessions_on_threads),
};

int main(int argc, char** argv) { return opara_test_main(argc, argv, tests, OT_COUNT(tests)); }
