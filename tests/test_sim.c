/* The GPU timing simulator. Every expected time below is worked out by hand from the model's
   definition (docs/SIMULATOR.md) on devices chosen so the arithmetic is exact:
   - an SM computes 1024 FLOP/us with all 1024 thread slots resident, so a block of t threads
     computes t FLOP/us;
   - a thread pulls 1 B/us of DRAM bandwidth uncontended, and the device has 256 B/us per SM;
   - overheads are zero unless a test sets them. */
#define OPARA_IMPLEMENTATION
#include "opara.h"
#include "opara_test.h"

#include <stdio.h>
#include <stdlib.h>

static opara_runtime* new_runtime(void) {
    opara_runtime* rt = NULL;
    opara_runtime_create(NULL, &rt);
    return rt;
}

static opara_sim_device test_device(int sms) {
    opara_sim_device d;
    memset(&d, 0, sizeof d);
    strcpy(d.name, "test");
    d.sm_count = sms;
    d.max_threads_per_sm = 1024;
    d.max_regs_per_sm = 65536;
    d.max_smem_per_sm = 100000;
    d.max_blocks_per_sm = 16;
    d.max_threads_per_block = 1024;
    d.max_smem_per_block = 100000;
    d.sm_saturation_threads = 1024; /* a block's compute rate is proportional to its threads */
    d.peak_gflops = sms * 1.024;     /* 1024 FLOP/us per SM */
    d.mem_saturation = 0.25;
    d.mem_gbps = sms * 1024 * 0.25 / 1e3; /* 1 B/us per thread, 256 B/us per SM */
    d.hw_queues = 8;
    return d;
}

/* A compute-bound kernel: `blocks` blocks of `threads` threads, each running `us` microseconds. */
static opara__sim_kernel compute_kernel(uint32_t blocks, uint32_t threads, double us, uint32_t stream) {
    opara__sim_kernel k;
    memset(&k, 0, sizeof k);
    k.desc.grid = blocks;
    k.desc.block_threads = threads;
    k.desc.flops = (double)blocks * threads * us;
    k.desc.has_info = 1;
    k.stream = stream;
    return k;
}

static double run_makespan(opara_runtime* rt, const opara_sim_device* d, opara_sim_mode mode,
                           const opara__sim_kernel* k, uint32_t n, const uint32_t* deps) {
    opara_sim_result r;
    double t;
    if (opara__sim_run(rt, d, mode, k, n, deps, &r) != OPARA_OK) return -1.0;
    t = r.makespan_us;
    opara_sim_result_free(rt, &r);
    return t;
}

/* 1 SM reaching its 1024 FLOP/us peak with 256 threads. X: one 256-thread block of 10240 FLOPs,
   10 us alone. Two X at once want 2x the SM: both at half speed, both end at 20 us. Y: one
   128-thread block of 5120 FLOPs, alone at half the peak: 10 us. X beside Y want 1.5x the SM:
   each runs at 2/3 of its own speed and both end at 15 us. */
OT_TEST(sm_compute_sharing) {
    opara_runtime* rt = new_runtime();
    opara_sim_device d = test_device(1);
    opara__sim_kernel k[2];
    opara_sim_result r;
    d.sm_saturation_threads = 256;
    memset(k, 0, sizeof k);
    k[0].desc.grid = 1;
    k[0].desc.block_threads = 256;
    k[0].desc.flops = 10240;
    k[1] = k[0];
    k[1].stream = 1;
    CHECK_NEAR(run_makespan(rt, &d, OPARA_SIM_GRAPH, k, 1, NULL), 10.0, 1e-9);
    CHECK_NEAR(run_makespan(rt, &d, OPARA_SIM_GRAPH, k, 2, NULL), 20.0, 1e-9);
    k[1].desc.block_threads = 128;
    k[1].desc.flops = 5120;
    CHECK_NEAR(run_makespan(rt, &d, OPARA_SIM_GRAPH, k + 1, 1, NULL), 10.0, 1e-9);
    REQUIRE(opara__sim_run(rt, &d, OPARA_SIM_GRAPH, k, 2, NULL, &r) == OPARA_OK);
    CHECK_NEAR(r.ops[0].end_us, 15.0, 1e-9);
    CHECK_NEAR(r.ops[1].end_us, 15.0, 1e-9);
    opara_sim_result_free(rt, &r);
    opara_runtime_destroy(rt);
}

/* CCFSys example: one SM, blocks of A, B, C need 50%, 60%, 40% of its shared memory; A and B
   run 1 us, C 2 us, all independent. B->A->C: A does not fit beside B, C waits behind A (HOL):
   B [0,1], then A [1,2] and C [1,3]: 3 us. C->A->B (Alg. 2, least shared memory first):
   C and A [0,..], B fits when A ends at 1: B [1,2], C ends at 2: 2 us. B->C->A (the paper's
   better order): B and C at 0, A fits when B ends at 1: 2 us. */
OT_TEST(ccfsys_launch_order_effect) {
    opara_runtime* rt = new_runtime();
    opara_sim_device d = test_device(1);
    opara__sim_kernel a = compute_kernel(1, 32, 1.0, 0), b = compute_kernel(1, 32, 1.0, 1), c = compute_kernel(1, 32, 2.0, 2);
    opara__sim_kernel k[3];
    a.desc.smem_per_block = 50000;
    b.desc.smem_per_block = 60000;
    c.desc.smem_per_block = 40000;
    k[0] = b; k[1] = a; k[2] = c;
    CHECK_NEAR(run_makespan(rt, &d, OPARA_SIM_GRAPH, k, 3, NULL), 3.0, 1e-9);
    k[0] = c; k[1] = a; k[2] = b;
    CHECK_NEAR(run_makespan(rt, &d, OPARA_SIM_GRAPH, k, 3, NULL), 2.0, 1e-9);
    k[0] = b; k[1] = c; k[2] = a;
    CHECK_NEAR(run_makespan(rt, &d, OPARA_SIM_GRAPH, k, 3, NULL), 2.0, 1e-9);
    opara_runtime_destroy(rt);
}

/* Four independent branch kernels (an Inception block's convs), grid 2*batch blocks of 256
   threads, 10 us per block, on 8 SMs that hold 4 such blocks each (32 slots).
   Sequential (one stream): 4 * ceil(2b/32) * 10 us. Parallel (4 streams): ceil(8b/32) * 10 us.
   b = 1, 2, 4: 40 vs 10 (4x); b = 8: 40 vs 20 (2x); b = 16: 40 vs 40 (1x); b = 32: 80 vs 80. */
OT_TEST(parallel_gain_shrinks_with_batch) {
    static const uint32_t batches[] = {1, 2, 4, 8, 16, 32};
    static const double seq_us[] = {40, 40, 40, 40, 40, 80};
    static const double par_us[] = {10, 10, 10, 20, 40, 80};
    opara_runtime* rt = new_runtime();
    opara_sim_device d = test_device(8);
    size_t i;
    for (i = 0; i < OT_COUNT(batches); ++i) {
        opara__sim_kernel seq[4], par[4];
        uint32_t deps[3] = {0, 1, 2}, j;
        for (j = 0; j < 4; ++j) {
            seq[j] = compute_kernel(2 * batches[i], 256, 10.0, 0);
            par[j] = compute_kernel(2 * batches[i], 256, 10.0, j);
            if (j > 0) {
                seq[j].dep_start = j - 1;
                seq[j].dep_count = 1;
            }
        }
        OT_LOG("batch %u", batches[i]);
        CHECK_NEAR(run_makespan(rt, &d, OPARA_SIM_GRAPH, seq, 4, deps), seq_us[i], 1e-9);
        CHECK_NEAR(run_makespan(rt, &d, OPARA_SIM_GRAPH, par, 4, NULL), par_us[i], 1e-9);
    }
    opara_runtime_destroy(rt);
}

/* Two SMs, bandwidth 512 B/us. A memory kernel: one block of 1024 threads moving 102400 B; it
   asks 1024 B/us, gets 512: 200 us alone. Two at once ask 2048 B/us and get 256 each: both end
   at 400 us, the same as one after the other. Two compute kernels (1024 threads, 100 us each) on
   the two SMs overlap fully: 100 us at once, 200 us in sequence. */
OT_TEST(memory_bandwidth_interference) {
    opara_runtime* rt = new_runtime();
    opara_sim_device d = test_device(2);
    opara__sim_kernel m[2], c[2];
    uint32_t dep0 = 0;
    opara_sim_result r;
    int i;
    for (i = 0; i < 2; ++i) {
        memset(&m[i], 0, sizeof m[i]);
        m[i].desc.grid = 1;
        m[i].desc.block_threads = 1024;
        m[i].desc.bytes = 102400;
        m[i].desc.flops = 1024; /* 1 us of compute: memory dominates */
        m[i].stream = (uint32_t)i;
        c[i] = compute_kernel(1, 1024, 100.0, (uint32_t)i);
    }
    CHECK_NEAR(run_makespan(rt, &d, OPARA_SIM_GRAPH, m, 1, NULL), 200.0, 1e-6);
    CHECK_NEAR(run_makespan(rt, &d, OPARA_SIM_GRAPH, m, 2, NULL), 400.0, 1e-6);
    m[1].dep_count = 1;
    CHECK_NEAR(run_makespan(rt, &d, OPARA_SIM_GRAPH, m, 2, &dep0), 400.0, 1e-6);
    CHECK_NEAR(run_makespan(rt, &d, OPARA_SIM_GRAPH, c, 2, NULL), 100.0, 1e-9);
    c[1].dep_count = 1;
    CHECK_NEAR(run_makespan(rt, &d, OPARA_SIM_GRAPH, c, 2, &dep0), 200.0, 1e-9);
    /* a memory kernel beside a compute kernel is not slowed: 200 us, and the result says which is which */
    m[0].stream = 0;
    c[1].stream = 1;
    c[1].dep_count = 0;
    {
        opara__sim_kernel mix[2];
        mix[0] = m[0];
        mix[1] = c[1];
        mix[1].desc.flops = 1024.0 * 100;
        REQUIRE(opara__sim_run(rt, &d, OPARA_SIM_GRAPH, mix, 2, NULL, &r) == OPARA_OK);
        CHECK_NEAR(r.makespan_us, 200.0, 1e-6);
        CHECK_NEAR(r.ops[1].end_us, 100.0, 1e-9);
        CHECK(r.ops[0].memory_bound);
        CHECK(!r.ops[1].memory_bound);
        opara_sim_result_free(rt, &r);
    }
    opara_runtime_destroy(rt);
}

/* 100 dependent 1-us kernels on one stream; launch_us 5, graph_launch_us 10, graph_node_us 0.5,
   kernel_gap_us 1. Eager: kernel i is issued at 5(i+1), which is later than its predecessor's
   end, so it ends at 5(i+1) + 1 + 1: the last at 502. Graph: node i arrives at 10 + 0.5(i+1);
   kernel 0 ends at 10.5 + 1 + 1 = 12.5, every later one 2 us after its predecessor (its arrival is
   earlier): 12.5 + 2*99 = 210.5. */
OT_TEST(graph_mode_removes_launch_overhead) {
    opara_runtime* rt = new_runtime();
    opara_sim_device d = test_device(4);
    opara__sim_kernel k[100];
    uint32_t deps[100], i;
    d.launch_us = 5;
    d.graph_launch_us = 10;
    d.graph_node_us = 0.5;
    d.kernel_gap_us = 1;
    for (i = 0; i < 100; ++i) {
        k[i] = compute_kernel(1, 32, 1.0, 0);
        deps[i] = i - 1;
        k[i].dep_start = i;
        k[i].dep_count = i > 0;
    }
    CHECK_NEAR(run_makespan(rt, &d, OPARA_SIM_EAGER, k, 100, deps), 502.0, 1e-9);
    CHECK_NEAR(run_makespan(rt, &d, OPARA_SIM_GRAPH, k, 100, deps), 210.5, 1e-9);
    opara_runtime_destroy(rt);
}

/* Nine independent 10-us kernels on streams 0..8 with room for all of them. With 8 hardware
   queues stream 8 shares queue 0 with stream 0 and runs after it: 20 us. With 9 queues, or in
   graph mode, all run at once: 10 us. */
OT_TEST(hardware_queue_aliasing) {
    opara_runtime* rt = new_runtime();
    opara_sim_device d = test_device(16);
    opara__sim_kernel k[9];
    opara_sim_result r;
    uint32_t i;
    for (i = 0; i < 9; ++i) k[i] = compute_kernel(1, 32, 10.0, i);
    REQUIRE(opara__sim_run(rt, &d, OPARA_SIM_EAGER, k, 9, NULL, &r) == OPARA_OK);
    CHECK_NEAR(r.makespan_us, 20.0, 1e-9);
    CHECK_NEAR(r.ops[8].start_us, 10.0, 1e-9);
    for (i = 0; i < 8; ++i) CHECK_NEAR(r.ops[i].end_us, 10.0, 1e-9);
    opara_sim_result_free(rt, &r);
    CHECK_NEAR(run_makespan(rt, &d, OPARA_SIM_GRAPH, k, 9, NULL), 10.0, 1e-9);
    d.hw_queues = 9;
    CHECK_NEAR(run_makespan(rt, &d, OPARA_SIM_EAGER, k, 9, NULL), 10.0, 1e-9);
    opara_runtime_destroy(rt);
}

/* SM-busy fraction: 4 SMs, one 10-us block on SM 0 then (dependent) two 10-us blocks on two SMs:
   busy SM-time 10 + 20 = 30 of 4 * 20 = 80 -> 0.375. */
OT_TEST(sm_busy_fraction) {
    opara_runtime* rt = new_runtime();
    opara_sim_device d = test_device(4);
    opara__sim_kernel k[2];
    uint32_t dep0 = 0;
    opara_sim_result r;
    k[0] = compute_kernel(1, 32, 10.0, 0);
    k[1] = compute_kernel(2, 32, 10.0, 0);
    k[1].dep_count = 1;
    REQUIRE(opara__sim_run(rt, &d, OPARA_SIM_GRAPH, k, 2, &dep0, &r) == OPARA_OK);
    CHECK_NEAR(r.makespan_us, 20.0, 1e-9);
    CHECK_NEAR(r.sm_busy, 0.375, 1e-12);
    opara_sim_result_free(rt, &r);
    opara_runtime_destroy(rt);
}

static uint32_t lcg(uint32_t* state) {
    *state = *state * 1664525u + 1013904223u;
    return *state >> 8;
}

/* A random plan of n kernels: up to 3 deps each on earlier kernels, mixed shapes. */
static void random_kernels(opara__sim_kernel* k, uint32_t* deps, uint32_t n, uint32_t seed) {
    uint32_t i, nd = 0;
    for (i = 0; i < n; ++i) {
        uint32_t j, want = i ? lcg(&seed) % 4 : 0;
        memset(&k[i], 0, sizeof k[i]);
        k[i].desc.grid = 1 + lcg(&seed) % 300;
        k[i].desc.block_threads = 32u << (lcg(&seed) % 5);
        k[i].desc.regs_per_thread = 16 + lcg(&seed) % 48;
        k[i].desc.smem_per_block = (lcg(&seed) % 4) * 8192;
        k[i].desc.flops = (double)(lcg(&seed) % 100000) * k[i].desc.grid;
        k[i].desc.bytes = (double)(lcg(&seed) % 100000) * k[i].desc.grid;
        k[i].desc.kernel_less = lcg(&seed) % 17 == 0;
        k[i].stream = lcg(&seed) % 12;
        k[i].host_events = lcg(&seed) % 3;
        k[i].dep_start = nd;
        for (j = 0; j < want; ++j) deps[nd++] = lcg(&seed) % i;
        k[i].dep_count = nd - k[i].dep_start;
    }
}

/* Same input, same bytes out; and the schedule respects what the model promises: every kernel
   starts no earlier than kernel_gap_us after each dependency ended and after its stream... (deps
   given explicitly here), ends after it starts; 10k kernels simulate in well under a second. */
OT_TEST(deterministic_and_consistent) {
    enum { N = 10000 };
    opara_runtime* rt = new_runtime();
    opara_sim_device d = test_device(80);
    opara__sim_kernel* k = (opara__sim_kernel*)malloc(N * sizeof *k);
    uint32_t* deps = (uint32_t*)malloc(3 * N * sizeof *deps);
    opara_sim_result r1, r2;
    uint32_t i, j, bad = 0;
    uint64_t t0;
    double secs;
    REQUIRE(k && deps);
    d.kernel_gap_us = 1.0;
    d.launch_us = 2.0;
    d.event_us = 0.5;
    random_kernels(k, deps, N, 7);
    t0 = opara__now_ns();
    REQUIRE(opara__sim_run(rt, &d, OPARA_SIM_EAGER, k, N, deps, &r1) == OPARA_OK);
    secs = (double)(opara__now_ns() - t0) * 1e-9;
    OT_LOG("10k kernels simulated in %.3f s", secs);
    CHECK(secs < 1.0 * (getenv("OPARA_SLOW") ? 10 : 1) * 3); /* generous for sanitizer builds */
    REQUIRE(opara__sim_run(rt, &d, OPARA_SIM_EAGER, k, N, deps, &r2) == OPARA_OK);
    CHECK(r1.makespan_us == r2.makespan_us);
    CHECK(r1.n_samples == r2.n_samples);
    CHECK(memcmp(r1.ops, r2.ops, N * sizeof *r1.ops) == 0);
    CHECK(r1.sm_busy > 0 && r1.sm_busy <= 1.0);
    for (i = 0; i < N; ++i) {
        const opara_sim_op_time* o = &r1.ops[i];
        double gap = (k[i].desc.kernel_less) ? 0.0 : d.kernel_gap_us;
        if (o->end_us < o->start_us || o->start_us < o->ready_us) bad++;
        for (j = 0; j < k[i].dep_count; ++j)
            if (o->ready_us + 1e-9 < r1.ops[deps[k[i].dep_start + j]].end_us + gap) bad++;
    }
    CHECK_EQ(bad, 0);
    opara_sim_result_free(rt, &r1);
    opara_sim_result_free(rt, &r2);
    free(k);
    free(deps);
    opara_runtime_destroy(rt);
}

/* The RTX 2080 SUPER written out by hand from NVIDIA's specification (TU104: 48 SMs, 1024
   threads, 64K registers, 64 KB shared memory and 16 blocks per SM, 48 KB per block; NVIDIA lists
   11.15 TFLOP/s FP32 and 496 GB/s) and the calibration in docs/SIMULATOR.md. */
static const char rtx2080s_text[] =
    "# RTX 2080 SUPER, from the public specification\n"
    "name = rtx2080s\n"
    "sm_count = 48\n"
    "max_threads_per_sm = 1024\n"
    "max_regs_per_sm = 65536\n"
    "max_smem_per_sm = 65536   # bytes\n"
    "max_blocks_per_sm = 16\n"
    "max_threads_per_block = 1024\n"
    "max_smem_per_block = 49152\n"
    "sm_saturation_threads = 256   # 4 x 64 FP32 lanes\n"
    "peak_gflops = 11150\n"
    "mem_gbps = 496\n"
    "mem_saturation = 0.25\n"
    "launch_us = 4\n"
    "event_us = 1.5\n"
    "graph_launch_us = 4\n"
    "graph_node_us = 0.5\n"
    "kernel_gap_us = 1\n"
    "hw_queues = 8\n";

static int device_equal(const opara_sim_device* a, const opara_sim_device* b) {
    return strcmp(a->name, b->name) == 0 && a->sm_count == b->sm_count && a->max_threads_per_sm == b->max_threads_per_sm &&
           a->max_regs_per_sm == b->max_regs_per_sm && a->max_smem_per_sm == b->max_smem_per_sm &&
           a->max_blocks_per_sm == b->max_blocks_per_sm && a->max_threads_per_block == b->max_threads_per_block &&
           a->max_smem_per_block == b->max_smem_per_block &&
           a->sm_saturation_threads == b->sm_saturation_threads && fabs(a->peak_gflops - b->peak_gflops) < 1e-6 &&
           fabs(a->mem_gbps - b->mem_gbps) < 1e-9 && a->mem_saturation == b->mem_saturation &&
           a->launch_us == b->launch_us && a->event_us == b->event_us && a->graph_launch_us == b->graph_launch_us &&
           a->graph_node_us == b->graph_node_us && a->kernel_gap_us == b->kernel_gap_us && a->hw_queues == b->hw_queues;
}

OT_TEST(device_text_file_equals_preset) {
    opara_runtime* rt = new_runtime();
    opara_sim_device preset, parsed, again;
    char path[512], text[2048];
    const char* build = getenv("BUILD");
    FILE* f;
    size_t need;
    if (opara_sim_device_preset("rtx2080s", &preset) != OPARA_OK) {
        opara_runtime_destroy(rt);
        SKIP("the scheduler's device presets are not in this build yet");
    }
    snprintf(path, sizeof path, "%s/test_sim_rtx2080s.txt", build ? build : "build");
    f = fopen(path, "wb");
    REQUIRE(f != NULL);
    fputs(rtx2080s_text, f);
    fclose(f);
    REQUIRE(opara_sim_device_load(rt, path, &parsed) == OPARA_OK);
    remove(path);
    CHECK(device_equal(&parsed, &preset));
    OT_LOG("preset: sms %d peak %.3f bw %.3f", preset.sm_count, preset.peak_gflops, preset.mem_gbps);
    /* format -> parse round trip, and `base =` */
    need = opara_sim_device_format(&preset, text, sizeof text);
    REQUIRE(need < sizeof text);
    REQUIRE(opara_sim_device_parse(rt, text, need, &again) == OPARA_OK);
    CHECK(device_equal(&again, &preset));
    REQUIRE(opara_sim_device_parse(rt, "base = a100\nhw_queues = 32\n", 27, &again) == OPARA_OK);
    CHECK_EQ(again.hw_queues, 32);
    CHECK_STR(again.name, "a100");
    opara_runtime_destroy(rt);
}

OT_TEST(device_text_errors) {
    opara_runtime* rt = new_runtime();
    opara_sim_device d;
    const char* bad_key = "sm_count = 4\nwarp_size = 32\n";
    const char* bad_num = "sm_count = four\n";
    const char* frac = "sm_count = 4.5\n";
    const char* no_eq = "sm_count 4\n";
    const char* missing = "sm_count = 4\n"; /* peak and bandwidth absent */
    CHECK_EQ(opara_sim_device_parse(rt, bad_key, strlen(bad_key), &d), OPARA_ERR_NOT_FOUND);
    CHECK(strstr(opara_runtime_last_error(rt), "line 2") != NULL);
    CHECK_EQ(opara_sim_device_parse(rt, bad_num, strlen(bad_num), &d), OPARA_ERR_INVALID_ARGS);
    CHECK_EQ(opara_sim_device_parse(rt, frac, strlen(frac), &d), OPARA_ERR_INVALID_ARGS);
    CHECK_EQ(opara_sim_device_parse(rt, no_eq, strlen(no_eq), &d), OPARA_ERR_INVALID_ARGS);
    CHECK_EQ(opara_sim_device_parse(rt, missing, strlen(missing), &d), OPARA_ERR_INVALID_ARGS);
    CHECK_EQ(opara_sim_device_preset("gtx480", &d), OPARA_ERR_NOT_FOUND);
    opara_runtime_destroy(rt);
}

/* A block that cannot fit on an empty SM is an error, not a hang; a dependency on a later kernel too. */
OT_TEST(bad_kernels_are_errors) {
    opara_runtime* rt = new_runtime();
    opara_sim_device d = test_device(2);
    opara__sim_kernel k[2];
    uint32_t dep1 = 1;
    opara_sim_result r;
    k[0] = compute_kernel(1, 32, 1.0, 0);
    k[0].desc.smem_per_block = 200000;
    CHECK_EQ(opara__sim_run(rt, &d, OPARA_SIM_GRAPH, k, 1, NULL, &r), OPARA_ERR_INVALID_ARGS);
    CHECK(r.ops == NULL);
    k[0] = compute_kernel(1, 32, 1.0, 0);
    k[1] = compute_kernel(1, 32, 1.0, 0);
    k[0].dep_count = 1;
    CHECK_EQ(opara__sim_run(rt, &d, OPARA_SIM_GRAPH, k, 2, &dep1, &r), OPARA_ERR_INVALID_ARGS);
    opara_runtime_destroy(rt);
}

typedef struct text_sink {
    char* data;
    size_t len, cap;
} text_sink;

static void sink_write(const char* text, size_t len, void* user) {
    text_sink* s = (text_sink*)user;
    if (s->len + len + 1 > s->cap) {
        s->cap = (s->len + len + 1) * 2;
        s->data = (char*)realloc(s->data, s->cap);
    }
    memcpy(s->data + s->len, text, len);
    s->len += len;
    s->data[s->len] = 0;
}

static size_t count_substr(const char* s, const char* what) {
    size_t n = 0;
    while ((s = strstr(s, what)) != NULL) {
        ++n;
        s += strlen(what);
    }
    return n;
}

OT_TEST(chrome_trace) {
    opara_runtime* rt = new_runtime();
    opara_sim_device d = test_device(4);
    opara__sim_kernel k[3];
    const char* names[3] = {"conv \"a\"", "relu", NULL};
    opara_sim_result r;
    text_sink sink;
    memset(&sink, 0, sizeof sink);
    k[0] = compute_kernel(2, 64, 3.0, 0);
    k[1] = compute_kernel(2, 64, 3.0, 1);
    k[2] = compute_kernel(0, 64, 3.0, 1); /* kernel-less: no slice */
    REQUIRE(opara__sim_run(rt, &d, OPARA_SIM_GRAPH, k, 3, NULL, &r) == OPARA_OK);
    opara_sim_trace_write(&r, names, sink_write, &sink);
    REQUIRE(sink.data != NULL);
    CHECK(strncmp(sink.data, "{\"displayTimeUnit\"", 18) == 0);
    CHECK_EQ(count_substr(sink.data, "\"ph\":\"X\""), 2);
    CHECK_EQ(count_substr(sink.data, "\"thread_name\""), 2);
    CHECK(strstr(sink.data, "\"conv \\\"a\\\"\"") != NULL);
    CHECK(strstr(sink.data, "SIMULATED") != NULL);
    CHECK(strcmp(sink.data + sink.len - 4, "\n]}\n") == 0);
    free(sink.data);
    opara_sim_result_free(rt, &r);
    opara_runtime_destroy(rt);
}


/* ---- through the scheduler's plans (skipped until the strategies are in the build) ----------- */

/* x -> n independent Relu nodes (each a graph output), with the given descriptors. */
static int fan_graph(opara__graph* g, uint32_t n) {
    uint32_t i;
    char name[32];
    int32_t x = opara__graph_add_value(g, "x", OPARA_DTYPE_F32, NULL);
    if (x < 0 || opara__graph_add_input(g, x) != OPARA_OK) return 0;
    for (i = 0; i < n; ++i) {
        int32_t y;
        sprintf(name, "y%u", i);
        y = opara__graph_add_value(g, name, OPARA_DTYPE_F32, NULL);
        sprintf(name, "n%u", i);
        if (y < 0 || opara__graph_add_node(g, OPARA__OP_RELU, name, 1, &x, 1, &y) < 0 ||
            opara__graph_add_output(g, y) != OPARA_OK)
            return 0;
    }
    return opara__graph_finalize(g) == OPARA_OK;
}

static opara__op_desc kernel_desc(uint32_t blocks, uint32_t threads, double us, uint32_t smem) {
    opara__op_desc d;
    memset(&d, 0, sizeof d);
    d.grid = blocks;
    d.block_threads = threads;
    d.flops = (double)blocks * threads * us;
    d.smem_per_block = smem;
    d.has_info = 1;
    d.op_class = OPARA__CLASS_COMPUTE;
    return d;
}

/* Plans g with the strategy and simulates it in graph mode; -1 when planning is not available. */
static double plan_makespan(const opara__graph* g, const opara__op_desc* descs, const opara_sim_device* d,
                            opara_strategy strategy, uint32_t* n_streams) {
    opara__device limits;
    opara__plan_desc pd;
    opara__plan* plan = NULL;
    opara_sim_result r;
    uint64_t bytes[16];
    double t = -2.0;
    memset(bytes, 0, sizeof bytes);
    memset(&pd, 0, sizeof pd);
    pd.strategy = strategy;
    opara__sim_device_limits(d, &limits);
    if (opara__plan_create(g, bytes, descs, &limits, &pd, &plan) != OPARA_OK) return -1.0;
    if (n_streams) *n_streams = plan->n_streams;
    if (opara__sim_plan(g->rt, d, OPARA_SIM_GRAPH, plan, descs, &r) == OPARA_OK) {
        t = r.makespan_us;
        opara_sim_result_free(g->rt, &r);
    }
    opara__plan_free(g->rt, plan);
    return t;
}

/* The CCFSys example planned for real: nodes in index order B, A, C. The topological order keeps
   B->A->C (3 us, see ccfsys_launch_order_effect); Alg. 2 with the reference metric (shared memory
   per block over the per-block limit) launches C, A, B: 2 us. */
OT_TEST(ccfsys_alg2_plan_beats_topological) {
    opara_runtime* rt = new_runtime();
    opara_sim_device d = test_device(1);
    opara__graph g;
    opara__op_desc descs[3];
    double topo, alg2;
    opara__graph_init(&g, rt);
    REQUIRE(fan_graph(&g, 3));
    descs[0] = kernel_desc(1, 32, 1.0, 60000); /* B */
    descs[1] = kernel_desc(1, 32, 1.0, 50000); /* A */
    descs[2] = kernel_desc(1, 32, 2.0, 40000); /* C */
    topo = plan_makespan(&g, descs, &d, OPARA_STRATEGY_OPARA_TOPO, NULL);
    alg2 = plan_makespan(&g, descs, &d, OPARA_STRATEGY_OPARA, NULL);
    opara__graph_free(&g);
    opara_runtime_destroy(rt);
    if (topo == -1.0 || alg2 == -1.0) SKIP("the scheduler's strategies are not in this build yet");
    CHECK_NEAR(topo, 3.0, 1e-9);
    CHECK_NEAR(alg2, 2.0, 1e-9);
}

/* parallel_gain_shrinks_with_batch through real plans: four independent branch kernels, sequential
   strategy versus Opara (one stream per branch): 40/10, 40/20, 40/40, 80/80 us at b = 1, 8, 16, 32. */
OT_TEST(opara_plan_gain_shrinks_with_batch) {
    static const uint32_t batches[] = {1, 8, 16, 32};
    static const double seq_us[] = {40, 40, 40, 80};
    static const double par_us[] = {10, 20, 40, 80};
    opara_runtime* rt = new_runtime();
    opara_sim_device d = test_device(8);
    opara__graph g;
    opara__op_desc descs[4];
    size_t i;
    int skipped = 0;
    opara__graph_init(&g, rt);
    REQUIRE(fan_graph(&g, 4));
    for (i = 0; i < OT_COUNT(batches) && !skipped; ++i) {
        uint32_t j, streams = 0;
        double seq, par;
        for (j = 0; j < 4; ++j) descs[j] = kernel_desc(2 * batches[i], 256, 10.0, 0);
        seq = plan_makespan(&g, descs, &d, OPARA_STRATEGY_SEQUENTIAL, NULL);
        par = plan_makespan(&g, descs, &d, OPARA_STRATEGY_OPARA, &streams);
        if (seq == -1.0 || par == -1.0) {
            skipped = 1;
            break;
        }
        OT_LOG("batch %u", batches[i]);
        CHECK_EQ(streams, 4);
        CHECK_NEAR(seq, seq_us[i], 1e-9);
        CHECK_NEAR(par, par_us[i], 1e-9);
    }
    opara__graph_free(&g);
    opara_runtime_destroy(rt);
    if (skipped) SKIP("the scheduler's strategies are not in this build yet");
}

static const opara_test_case tests[] = {
    OT_CASE(ccfsys_launch_order_effect),
    OT_CASE(parallel_gain_shrinks_with_batch),
    OT_CASE(memory_bandwidth_interference),
    OT_CASE(graph_mode_removes_launch_overhead),
    OT_CASE(hardware_queue_aliasing),
    OT_CASE(sm_busy_fraction),
    OT_CASE(sm_compute_sharing),
    OT_CASE(deterministic_and_consistent),
    OT_CASE(device_text_file_equals_preset),
    OT_CASE(device_text_errors),
    OT_CASE(bad_kernels_are_errors),
    OT_CASE(chrome_trace),
    OT_CASE(ccfsys_alg2_plan_beats_topological),
    OT_CASE(opara_plan_gain_shrinks_with_batch),
};

int main(int argc, char** argv) { return opara_test_main(argc, argv, tests, OT_COUNT(tests)); }
