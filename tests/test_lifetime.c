/* Lifetimes, host state and backend choice through the public API (issue 16, defects 5, 8, 9):
   - a session outlives its model's handle (CPU and CUDA on the emulator): it runs, answers and is
     destroyed after opara_model_destroy, and the model is freed with the last of them (counted
     through the allocator hook; ASan in `make SAN=1` sees any use after free);
   - OpenBLAS's process-wide thread count (a fake OpenBLAS that records, tests/fake_openblas.c) is
     the host's whenever no opara run is in progress, and sgemm runs one thread per call during runs;
   - AUTO falls back to the CPU on any CUDA initialisation failure (bad ordinal, a cuBLAS clash) with
     a BACKEND_FALLBACK log saying why, and explicit CUDA returns the error;
   - a CUDA session created on one thread runs on another and is destroyed on a third (the emulator
     enforces the current-context rule); `make test-tsan` runs the thread cases under ThreadSanitizer;
   - errors and logs per object: a CUDA session's messages go to its logger, and a failing CUDA run on
     one thread reports to its session while the runtime creates sessions on another.
   The CUDA cases use the emulator's libraries (OPARA_EMU_LIB_DIR; OPARA_CUDA_DRIVER, OPARA_CUBLAS,
   OPARA_CUDNN override them) and skip when they are not built. */
#define _GNU_SOURCE
#define OPARA_IMPLEMENTATION
#include "opara.h"
#include "opara_test.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef OPARA_EMU_LIB_DIR
#define OPARA_EMU_LIB_DIR "build/cudaemu"
#endif

/* ---- helpers ---------------------------------------------------------------------------------- */

#define GEMM_K 16
#define GEMM_N 8
#define GEMM_BATCH 3

static float gemm_w[GEMM_N * GEMM_K], gemm_b[GEMM_N];

/* x[B,16] -> Gemm(x, w[8,16]^T, b[8]) -> y[B,8] -> Relu -> r[B,8]; y and r are outputs. */
static opara_model* build_gemm(opara_runtime* rt) {
    opara_builder* b;
    opara_model* m = NULL;
    int64_t xd[2] = {OPARA_DIM_BATCH, GEMM_K}, wd[2] = {GEMM_N, GEMM_K}, bd[1] = {GEMM_N};
    const char *g_in[3] = {"x", "w", "b"}, *g_out[1] = {"y"}, *r_in[1] = {"y"}, *r_out[1] = {"r"};
    opara_attr trans;
    int i;
    for (i = 0; i < GEMM_N * GEMM_K; ++i) gemm_w[i] = (float)(i % 7 - 3) * 0.125f;
    for (i = 0; i < GEMM_N; ++i) gemm_b[i] = (float)i * 0.5f - 1.0f;
    memset(&trans, 0, sizeof trans);
    trans.name = "transB";
    trans.type = OPARA_ATTR_INT;
    trans.v.i = 1;
    if (opara_builder_create(rt, &b) != OPARA_OK) return NULL;
    opara_builder_add_input(b, "x", OPARA_DTYPE_F32, 2, xd);
    opara_builder_add_constant(b, "w", OPARA_DTYPE_F32, 2, wd, gemm_w, sizeof gemm_w);
    opara_builder_add_constant(b, "b", OPARA_DTYPE_F32, 1, bd, gemm_b, sizeof gemm_b);
    opara_builder_add_node(b, "Gemm", "fc", 3, g_in, 1, g_out, 1, &trans);
    opara_builder_add_node(b, "Relu", "relu", 1, r_in, 1, r_out, 0, NULL);
    opara_builder_add_output(b, "y");
    opara_builder_add_output(b, "r");
    opara_builder_finish(b, &m);
    opara_builder_destroy(b);
    return m;
}

static void gemm_input(float* x) {
    int i;
    for (i = 0; i < GEMM_BATCH * GEMM_K; ++i) x[i] = (float)(i % 11 - 5) * 0.25f;
}

/* Runs s on gemm_input and compares y with the sum computed here; 1 when every value matches. */
static int run_gemm_matches(opara_session* s, char* why, size_t cap) {
    float x[GEMM_BATCH * GEMM_K], y[GEMM_BATCH * GEMM_N];
    opara_tensor in, out;
    opara_result r;
    int i, j, p;
    gemm_input(x);
    memset(&in, 0, sizeof in);
    memset(&out, 0, sizeof out);
    in.name = "x";
    in.dtype = out.dtype = OPARA_DTYPE_F32;
    in.rank = out.rank = 2;
    in.dims[0] = out.dims[0] = GEMM_BATCH;
    in.dims[1] = GEMM_K;
    out.dims[1] = GEMM_N;
    in.data = x;
    out.name = "y";
    out.data = y;
    r = opara_session_run(s, &in, 1, &out, 1);
    if (r != OPARA_OK) {
        snprintf(why, cap, "run: %s: %.180s", opara_result_string(r), opara_session_last_error(s));
        return 0;
    }
    for (i = 0; i < GEMM_BATCH; ++i)
        for (j = 0; j < GEMM_N; ++j) {
            double want = gemm_b[j];
            for (p = 0; p < GEMM_K; ++p) want += (double)x[i * GEMM_K + p] * gemm_w[j * GEMM_K + p];
            if (y[i * GEMM_N + j] < want - 1e-4 || y[i * GEMM_N + j] > want + 1e-4) {
                snprintf(why, cap, "y[%d,%d] = %.7g, want %.7g", i, j, y[i * GEMM_N + j], want);
                return 0;
            }
        }
    return 1;
}

/* The allocator hook counts live blocks (thread-safe: sessions are destroyed on other threads). */
static int32_t live_blocks;

static void* counting_alloc(size_t size, size_t alignment, void* user) {
    void* p = NULL;
    (void)user;
    if (alignment < sizeof(void*)) alignment = sizeof(void*);
    if (posix_memalign(&p, alignment, size ? size : 1) != 0) return NULL;
    __atomic_add_fetch(&live_blocks, 1, __ATOMIC_SEQ_CST);
    return p;
}

static void counting_free(void* p, void* user) {
    (void)user;
    if (!p) return;
    __atomic_sub_fetch(&live_blocks, 1, __ATOMIC_SEQ_CST);
    free(p);
}

static int32_t live(void) { return __atomic_load_n(&live_blocks, __ATOMIC_SEQ_CST); }

/* The log: the items and text of the messages of one test (creation happens on the test's thread). */
static char log_text[8192];
static int log_fallbacks, log_fallback_level;

static void capture_log(opara_log_level level, opara_log_item item, const char* message, void* user) {
    size_t used = strlen(log_text);
    (void)user;
    if (item == OPARA_LOGITEM_BACKEND_FALLBACK) {
        ++log_fallbacks;
        log_fallback_level = (int)level;
    }
    if (used < sizeof log_text - 1) snprintf(log_text + used, sizeof log_text - used, "[%d] %s\n", (int)item, message);
}

static opara_runtime* make_runtime(int counting) {
    opara_runtime_desc rd;
    opara_runtime* rt = NULL;
    memset(&rd, 0, sizeof rd);
    if (counting) {
        rd.allocator.alloc_fn = counting_alloc;
        rd.allocator.free_fn = counting_free;
    }
    rd.logger.func = capture_log;
    rd.logger.max_level = OPARA_LOG_DEBUG;
    log_text[0] = 0;
    log_fallbacks = 0;
    log_fallback_level = 0;
    return opara_runtime_create(&rd, &rt) == OPARA_OK ? rt : NULL;
}

static opara_session* make_session(opara_runtime* rt, const opara_model* m, opara_backend backend, int device,
                                   opara_result* result) {
    opara_session_desc d;
    opara_session* s = NULL;
    memset(&d, 0, sizeof d);
    d.backend = backend;
    d.threads = 2;
    d.batch_size = GEMM_BATCH;
    d.cuda_device = device;
    *result = opara_session_create(rt, m, &d, &s);
    return s;
}

/* The emulator's libraries for the CUDA cases (unless the environment names others); 0 when absent. */
static int use_emulator(void) {
    if (access(OPARA_EMU_LIB_DIR "/libcuda.so.1", R_OK) != 0 && !getenv("OPARA_CUDA_DRIVER")) return 0;
    setenv("OPARA_CUDA_DRIVER", OPARA_EMU_LIB_DIR "/libcuda.so.1", 0);
    setenv("OPARA_CUBLAS", OPARA_EMU_LIB_DIR "/libcublas.so", 0);
    setenv("OPARA_CUDNN", OPARA_EMU_LIB_DIR "/libcudnn.so", 0);
    return 1;
}

static const char* backend_of(const opara_session* s) {
    opara_plan_info info;
    return opara_session_get_plan_info(s, &info) == OPARA_OK ? info.backend : "?";
}

/* ---- defect 5: a session outlives its model ---------------------------------------------------- */

static void session_outlives_model(opara_test* T, opara_backend backend) {
    opara_runtime* rt = make_runtime(1);
    opara_model* m;
    opara_session* s;
    opara_tensor_info info;
    opara_result r;
    int32_t before_model, with_session;
    char why[256] = "";
    REQUIRE(rt != NULL);
    m = build_gemm(rt); /* a first session loads what the runtime keeps for all (the CUDA state) */
    REQUIRE(m != NULL);
    s = make_session(rt, m, backend, 0, &r);
    opara_session_destroy(s);
    opara_model_destroy(m);
    before_model = live();
    m = build_gemm(rt);
    REQUIRE(m != NULL);
    s = make_session(rt, m, backend, 0, &r);
    if (!s) OT_LOG("session_create: %s", opara_runtime_last_error(rt));
    REQUIRE(r == OPARA_OK && s != NULL);
    CHECK_STR(backend_of(s), backend == OPARA_BACKEND_CUDA ? "cuda" : "cpu");
    with_session = live();
    opara_model_destroy(m); /* the caller's handle only: the session keeps the model */
    CHECK_EQ(live(), with_session); /* nothing freed yet */
    CHECK(run_gemm_matches(s, why, sizeof why));
    if (why[0]) OT_LOG("%s", why);
    why[0] = 0;
    CHECK(run_gemm_matches(s, why, sizeof why)); /* twice: nothing was freed by the first run either */
    CHECK_EQ(opara_session_input_info(s, 0, &info), OPARA_OK);
    CHECK_STR(info.name, "x");
    CHECK_EQ(opara_session_output_count(s), 2u);
    opara_session_destroy(s); /* frees the model: back to what the runtime holds alone */
    CHECK_EQ(live(), before_model);
    opara_runtime_destroy(rt);
    CHECK_EQ(live(), 0);
}

OT_TEST(cpu_session_outlives_its_model) { session_outlives_model(T, OPARA_BACKEND_CPU); }

OT_TEST(cuda_session_outlives_its_model) {
    if (!use_emulator()) SKIP("the CUDA emulator is not built (make cudaemu)");
    session_outlives_model(T, OPARA_BACKEND_CUDA);
}

typedef struct destroyer {
    opara_session* s;
    opara_model* m; /* or the model handle to drop */
    volatile int* go;
} destroyer;

static void* destroyer_main(void* p) {
    destroyer* d = (destroyer*)p;
    while (!__atomic_load_n(d->go, __ATOMIC_SEQ_CST)) {
    }
    if (d->s) opara_session_destroy(d->s);
    if (d->m) opara_model_destroy(d->m);
    return NULL;
}

/* The model's handle and three sessions dropped at once on four threads, 20 times: the model is
   freed exactly once, by whichever comes last (the count is atomic). */
OT_TEST(model_and_sessions_destroyed_concurrently_free_once) {
    opara_runtime* rt = make_runtime(1);
    int32_t before;
    int round, t;
    REQUIRE(rt != NULL);
    before = live();
    for (round = 0; round < 20; ++round) {
        opara_runtime* rts[3];
        destroyer d[4];
        pthread_t th[4];
        volatile int go = 0;
        opara_model* m = build_gemm(rt);
        opara_result r;
        REQUIRE(m != NULL);
        memset(d, 0, sizeof d);
        for (t = 0; t < 3; ++t) {
            rts[t] = make_runtime(1);
            REQUIRE(rts[t] != NULL);
            d[t].s = make_session(rts[t], m, OPARA_BACKEND_CPU, 0, &r);
            REQUIRE(r == OPARA_OK);
        }
        d[3].m = m;
        for (t = 0; t < 4; ++t) {
            d[t].go = &go;
            pthread_create(&th[t], NULL, destroyer_main, &d[t]);
        }
        __atomic_store_n(&go, 1, __ATOMIC_SEQ_CST);
        for (t = 0; t < 4; ++t) pthread_join(th[t], NULL);
        for (t = 0; t < 3; ++t) opara_runtime_destroy(rts[t]);
        CHECK_EQ(live(), before);
    }
    opara_runtime_destroy(rt);
}

/* ---- defect 9: AUTO falls back on any CUDA initialisation failure ------------------------------ */

OT_TEST(auto_falls_back_to_cpu_on_a_bad_device_ordinal) {
    opara_runtime* rt;
    opara_model* m;
    opara_session* s;
    opara_result r;
    char why[256] = "";
    if (!use_emulator()) SKIP("the CUDA emulator is not built (make cudaemu)");
    rt = make_runtime(0);
    REQUIRE(rt != NULL);
    m = build_gemm(rt);
    REQUIRE(m != NULL);
    s = make_session(rt, m, OPARA_BACKEND_CUDA, 7, &r); /* explicit CUDA: the error */
    CHECK(r != OPARA_OK);
    CHECK(s == NULL);
    CHECK(strstr(opara_runtime_last_error(rt), "device 7") != NULL);
    CHECK_EQ(log_fallbacks, 0);
    log_text[0] = 0;
    s = make_session(rt, m, OPARA_BACKEND_AUTO, 7, &r); /* AUTO: the CPU, saying why */
    if (r != OPARA_OK) OT_LOG("AUTO: %s", opara_runtime_last_error(rt));
    REQUIRE(r == OPARA_OK && s != NULL);
    CHECK_EQ(log_fallbacks, 1);
    CHECK_EQ(log_fallback_level, (int)OPARA_LOG_WARN);
    CHECK(strstr(log_text, "device 7") != NULL);
    CHECK_STR(backend_of(s), "cpu");
    CHECK(run_gemm_matches(s, why, sizeof why));
    if (why[0]) OT_LOG("%s", why);
    opara_session_destroy(s);
    s = make_session(rt, m, OPARA_BACKEND_AUTO, 0, &r); /* the runtime is not spoilt: device 0 is CUDA */
    CHECK(r == OPARA_OK && s && strcmp(backend_of(s), "cuda") == 0);
    opara_session_destroy(s);
    opara_model_destroy(m);
    opara_runtime_destroy(rt);
}

/* A runtime loads one cuBLAS: a later session asking for another file (OPARA_CUBLAS changed) fails
   to initialise the backend. AUTO falls back, explicit CUDA gets the error. */
OT_TEST(auto_falls_back_to_cpu_when_cublas_fails_to_load) {
    opara_runtime* rt;
    opara_model* m;
    opara_session *first, *s;
    opara_result r;
    char saved[1024], why[256] = "";
    if (!use_emulator()) SKIP("the CUDA emulator is not built (make cudaemu)");
    snprintf(saved, sizeof saved, "%s", getenv("OPARA_CUBLAS"));
    rt = make_runtime(0);
    REQUIRE(rt != NULL);
    m = build_gemm(rt);
    REQUIRE(m != NULL);
    first = make_session(rt, m, OPARA_BACKEND_CUDA, 0, &r);
    REQUIRE(r == OPARA_OK);
    setenv("OPARA_CUBLAS", "/nonexistent/libcublas.so.13", 1);
    s = make_session(rt, m, OPARA_BACKEND_CUDA, 0, &r);
    CHECK(r != OPARA_OK);
    CHECK(s == NULL);
    CHECK(strstr(opara_runtime_last_error(rt), "cuBLAS") != NULL);
    log_text[0] = 0;
    s = make_session(rt, m, OPARA_BACKEND_AUTO, 0, &r);
    setenv("OPARA_CUBLAS", saved, 1);
    if (r != OPARA_OK) OT_LOG("AUTO: %s", opara_runtime_last_error(rt));
    REQUIRE(r == OPARA_OK && s != NULL);
    CHECK_EQ(log_fallbacks, 1);
    CHECK(strstr(log_text, "cuBLAS") != NULL);
    CHECK_STR(backend_of(s), "cpu");
    CHECK(run_gemm_matches(s, why, sizeof why));
    if (why[0]) OT_LOG("%s", why);
    opara_session_destroy(s);
    opara_session_destroy(first);
    opara_model_destroy(m);
    opara_runtime_destroy(rt);
}

/* ---- threads: a CUDA session made on one thread, run on another, destroyed on a third ----------- */

typedef struct cuda_job {
    opara_runtime* rt;
    const opara_model* m;
    opara_session* s;
    opara_result r;
    int ok;
    char why[256];
} cuda_job;

static void* cuda_create_main(void* p) {
    cuda_job* j = (cuda_job*)p;
    j->s = make_session(j->rt, j->m, OPARA_BACKEND_CUDA, 0, &j->r);
    if (j->r != OPARA_OK) snprintf(j->why, sizeof j->why, "create: %.200s", opara_runtime_last_error(j->rt));
    return NULL;
}

static void* cuda_run_main(void* p) {
    cuda_job* j = (cuda_job*)p;
    int i;
    j->ok = 1;
    for (i = 0; i < 5 && j->ok; ++i) j->ok = run_gemm_matches(j->s, j->why, sizeof j->why);
    return NULL;
}

static void* cuda_destroy_main(void* p) {
    opara_session_destroy(((cuda_job*)p)->s);
    return NULL;
}

OT_TEST(threads_cuda_session_created_run_and_destroyed_on_different_threads) {
    cuda_job j;
    pthread_t th;
    opara_model* m;
    if (!use_emulator()) SKIP("the CUDA emulator is not built (make cudaemu)");
    memset(&j, 0, sizeof j);
    j.rt = make_runtime(0);
    REQUIRE(j.rt != NULL);
    m = build_gemm(j.rt);
    REQUIRE(m != NULL);
    j.m = m;
    pthread_create(&th, NULL, cuda_create_main, &j);
    pthread_join(th, NULL);
    if (j.why[0]) OT_LOG("%s", j.why);
    REQUIRE(j.r == OPARA_OK && j.s != NULL);
    CHECK_STR(backend_of(j.s), "cuda");
    pthread_create(&th, NULL, cuda_run_main, &j);
    pthread_join(th, NULL);
    if (j.why[0]) OT_LOG("%s", j.why);
    CHECK(j.ok);
    opara_model_destroy(m); /* and the session outlives its model on yet another thread */
    pthread_create(&th, NULL, cuda_destroy_main, &j);
    pthread_join(th, NULL);
    opara_runtime_destroy(j.rt);
}

/* Two CUDA sessions of one model run at the same time on two threads (each its own runtime, as the
   API asks of threads that create sessions). */
OT_TEST(threads_two_cuda_sessions_run_concurrently) {
    cuda_job j[2];
    pthread_t th[2];
    opara_runtime* rt;
    opara_model* m;
    int t;
    if (!use_emulator()) SKIP("the CUDA emulator is not built (make cudaemu)");
    rt = make_runtime(0);
    REQUIRE(rt != NULL);
    m = build_gemm(rt);
    REQUIRE(m != NULL);
    memset(j, 0, sizeof j);
    for (t = 0; t < 2; ++t) {
        j[t].rt = make_runtime(0);
        j[t].m = m;
        REQUIRE(j[t].rt != NULL);
        cuda_create_main(&j[t]);
        REQUIRE(j[t].r == OPARA_OK);
    }
    for (t = 0; t < 2; ++t) pthread_create(&th[t], NULL, cuda_run_main, &j[t]);
    for (t = 0; t < 2; ++t) {
        pthread_join(th[t], NULL);
        if (j[t].why[0]) OT_LOG("thread %d: %s", t, j[t].why);
        CHECK(j[t].ok);
        opara_session_destroy(j[t].s);
        opara_runtime_destroy(j[t].rt);
    }
    opara_model_destroy(m);
    opara_runtime_destroy(rt);
}

/* ---- errors and logs per object ------------------------------------------------------------------ */

/* Counts the messages given to one logger and remembers the items (a plain, unsynchronised record:
   under ThreadSanitizer a call from a thread other than the logger's owner is a reported race). */
typedef struct log_record {
    int n;
    int items[OPARA_LOGITEM_COUNT];
    char last[512];
} log_record;

static void record_log(opara_log_level level, opara_log_item item, const char* message, void* user) {
    log_record* rec = (log_record*)user;
    (void)level;
    rec->n++;
    if ((unsigned)item < (unsigned)OPARA_LOGITEM_COUNT) rec->items[item]++;
    snprintf(rec->last, sizeof rec->last, "%s", message);
}

static opara_runtime* make_recorded_runtime(log_record* rec) {
    opara_runtime_desc rd;
    opara_runtime* rt = NULL;
    memset(&rd, 0, sizeof rd);
    rd.logger.func = record_log;
    rd.logger.user_data = rec;
    rd.logger.max_level = OPARA_LOG_DEBUG;
    return opara_runtime_create(&rd, &rt) == OPARA_OK ? rt : NULL;
}

/* A runtime whose logger records into rt_log (zeroed) and the Gemm model; 0 when either fails. */
static int make_recorded_gemm(log_record* rt_log, opara_runtime** rt, opara_model** m) {
    memset(rt_log, 0, sizeof *rt_log);
    *rt = make_recorded_runtime(rt_log);
    *m = *rt ? build_gemm(*rt) : NULL;
    return *m != NULL;
}

static opara_session* make_recorded_cuda_session(opara_runtime* rt, const opara_model* m, log_record* rec, int profile,
                                                 opara_result* r) {
    opara_session_desc d;
    opara_session* s = NULL;
    memset(&d, 0, sizeof d);
    d.backend = OPARA_BACKEND_CUDA;
    d.batch_size = GEMM_BATCH;
    d.cuda_profile = profile;
    d.logger.func = record_log;
    d.logger.user_data = rec;
    d.logger.max_level = OPARA_LOG_DEBUG;
    *r = opara_session_create(rt, m, &d, &s);
    return s;
}

/* Every message of a CUDA session's creation (the libraries it uses, the lowering, the profiler, the
   plan) goes to the session's logger; the runtime's hears nothing of it. */
OT_TEST(cuda_logs_go_to_the_sessions_logger) {
    log_record rt_log, s_log, p_log;
    opara_runtime* rt;
    opara_model* m;
    opara_session* s;
    opara_session* ps;
    opara_result r;
    if (!use_emulator()) SKIP("the CUDA emulator is not built (make cudaemu)");
    memset(&s_log, 0, sizeof s_log);
    memset(&p_log, 0, sizeof p_log);
    REQUIRE(make_recorded_gemm(&rt_log, &rt, &m));
    rt_log.n = 0; /* the model's build logged (the runtime's) */
    s = make_recorded_cuda_session(rt, m, &s_log, 0, &r);
    REQUIRE(r == OPARA_OK);
    CHECK(s_log.items[OPARA_LOGITEM_LIBRARY_LOADED] > 0); /* "CUDA driver ...", "CUDA backend: kernels from ..." */
    CHECK(s_log.items[OPARA_LOGITEM_PLAN_SUMMARY] > 0);
    ps = make_recorded_cuda_session(rt, m, &p_log, 1, &r); /* the profiler's messages too */
    REQUIRE(r == OPARA_OK);
    CHECK(p_log.items[OPARA_LOGITEM_PLAN_SUMMARY] > 0);
    CHECK(p_log.items[OPARA_LOGITEM_LIBRARY_LOADED] > 0);
    CHECK_EQ(rt_log.n, 0);
    if (rt_log.n) OT_LOG("the runtime's logger heard: %s", rt_log.last);
    opara_session_destroy(ps);
    opara_session_destroy(s);
    opara_model_destroy(m);
    opara_runtime_destroy(rt);
}

/* A CUDA run that fails in the backend (an input pointer the device does not know) on one thread,
   while the runtime creates sessions (some failing) on another: the run's detail is the session's,
   its messages go to the session's logger, and the runtime's detail and logger are only the creating
   thread's. `make test-tsan` runs this under ThreadSanitizer, which reports any write of the
   runtime's detail or call of its logger from the running thread. */
typedef struct failing_run_job {
    opara_session* s;
    int runs, failed, detail_is_the_backends;
} failing_run_job;

static void* failing_run_main(void* p) {
    failing_run_job* j = (failing_run_job*)p;
    opara_tensor in;
    int i;
    memset(&in, 0, sizeof in);
    in.name = "x";
    in.dtype = OPARA_DTYPE_F32;
    in.rank = 2;
    in.dims[0] = GEMM_BATCH;
    in.dims[1] = GEMM_K;
    in.data = (void*)(uintptr_t)0x10; /* no device allocation is there */
    for (i = 0; i < 20; ++i) {
        opara_result r = opara_session_run_device(j->s, &in, 1, NULL, 0);
        j->runs++;
        if (r != OPARA_OK) j->failed++;
        if (strstr(opara_session_last_error(j->s), "CUDA backend") != NULL) j->detail_is_the_backends++;
    }
    return NULL;
}

OT_TEST(threads_failing_cuda_run_reports_to_its_session_not_the_runtime) {
    log_record rt_log, s_log, ok_log;
    failing_run_job j;
    opara_runtime* rt;
    opara_model* m;
    opara_result r;
    pthread_t th;
    int i, created = 0, refused = 0;
    if (!use_emulator()) SKIP("the CUDA emulator is not built (make cudaemu)");
    memset(&s_log, 0, sizeof s_log);
    memset(&ok_log, 0, sizeof ok_log);
    memset(&j, 0, sizeof j);
    REQUIRE(make_recorded_gemm(&rt_log, &rt, &m));
    j.s = make_recorded_cuda_session(rt, m, &s_log, 0, &r);
    REQUIRE(r == OPARA_OK);
    s_log.n = 0;
    memset(s_log.items, 0, sizeof s_log.items);
    pthread_create(&th, NULL, failing_run_main, &j);
    for (i = 0; i < 6; ++i) {
        opara_session_desc bad;
        opara_session* s = make_recorded_cuda_session(rt, m, &ok_log, 0, &r);
        if (r == OPARA_OK) ++created;
        opara_session_destroy(s);
        memset(&bad, 0, sizeof bad);
        bad.strategy = (opara_strategy)99;
        s = NULL;
        if (opara_session_create(rt, m, &bad, &s) == OPARA_ERR_BAD_ENUM &&
            strstr(opara_runtime_last_error(rt), "unknown strategy") != NULL)
            ++refused;
    }
    pthread_join(th, NULL);
    CHECK_EQ(created, 6);
    CHECK_EQ(refused, 6);
    CHECK_EQ(j.failed, j.runs);
    CHECK_EQ(j.detail_is_the_backends, j.runs);
    OT_LOG("the failing run's detail: %s", opara_session_last_error(j.s));
    CHECK(s_log.items[OPARA_LOGITEM_ERROR_DETAIL] >= j.runs); /* each failure logged through the session's logger */
    CHECK(strstr(opara_runtime_last_error(rt), "unknown strategy") != NULL); /* still the creating thread's */
    CHECK(rt_log.items[OPARA_LOGITEM_ERROR_DETAIL] == refused); /* only the refused creations */
    opara_session_destroy(j.s);
    opara_model_destroy(m);
    opara_runtime_destroy(rt);
}

/* ---- defect 8: the host's OpenBLAS thread count ------------------------------------------------- */

typedef void (*set_threads_fn)(int);
typedef int (*get_threads_fn)(void);
typedef void (*stats_fn)(int*, int*, int*);

/* The fake OpenBLAS, loaded before any session so that opara's dlopen("libopenblas.so.0") finds it. */
static int load_fake_openblas(set_threads_fn* set, get_threads_fn* get, stats_fn* stats) {
#ifdef FAKE_OPENBLAS_PATH
    static void* fake_blas;
    void* sym;
    if (!fake_blas) fake_blas = dlopen(FAKE_OPENBLAS_PATH, RTLD_NOW | RTLD_GLOBAL);
    if (!fake_blas) return 0;
    sym = dlsym(fake_blas, "openblas_set_num_threads");
    memcpy(set, &sym, sizeof sym);
    sym = dlsym(fake_blas, "openblas_get_num_threads");
    memcpy(get, &sym, sizeof sym);
    sym = dlsym(fake_blas, "fake_openblas_stats");
    memcpy(stats, &sym, sizeof sym);
    return *set && *get && *stats;
#else
    (void)set, (void)get, (void)stats;
    return 0;
#endif
}

typedef struct blas_runner {
    opara_session* s;
    int runs, ok;
    char why[256];
} blas_runner;

static void* blas_runner_main(void* p) {
    blas_runner* b = (blas_runner*)p;
    int i;
    b->ok = 1;
    for (i = 0; i < b->runs && b->ok; ++i) b->ok = run_gemm_matches(b->s, b->why, sizeof b->why);
    return NULL;
}

OT_TEST(openblas_thread_count_is_the_hosts_outside_runs) {
    set_threads_fn set;
    get_threads_fn get;
    stats_fn stats;
    opara_runtime* rt;
    opara_model* m;
    opara_session* s;
    opara_plan_info info;
    opara_result r;
    int set_calls, sgemm_calls, max_threads, t;
    char why[256] = "";
    if (!load_fake_openblas(&set, &get, &stats)) SKIP("the fake OpenBLAS was not built (FAKE_OPENBLAS_PATH)");
    set(6); /* the host's own setting */
    rt = make_runtime(0);
    REQUIRE(rt != NULL);
    m = build_gemm(rt);
    REQUIRE(m != NULL);
    s = make_session(rt, m, OPARA_BACKEND_CPU, 0, &r);
    REQUIRE(r == OPARA_OK);
    REQUIRE(opara_session_get_plan_info(s, &info) == OPARA_OK);
    OT_LOG("gemm: %s", info.gemm);
    REQUIRE(strstr(info.gemm, "OpenBLAS (libopenblas.so.0)") != NULL); /* the fake is the one in use */
    CHECK_EQ(get(), 6); /* creating a session changes nothing */
    stats(&set_calls, &sgemm_calls, &max_threads);
    CHECK(run_gemm_matches(s, why, sizeof why));
    if (why[0]) OT_LOG("%s", why);
    stats(&set_calls, &sgemm_calls, &max_threads);
    CHECK(sgemm_calls > 0);
    CHECK_EQ(max_threads, 1); /* during the run OpenBLAS runs one thread per call: the executor owns them */
    CHECK_EQ(get(), 6);       /* and after it the host's setting is back */
    opara_session_destroy(s);
    CHECK_EQ(get(), 6);
    /* runs of two sessions (two runtimes) overlapping on two threads: the host's value comes back
       after the last, not the 1 the first one set */
    {
        opara_runtime* rts[2];
        blas_runner b[2];
        pthread_t th[2];
        for (t = 0; t < 2; ++t) {
            rts[t] = make_runtime(0);
            REQUIRE(rts[t] != NULL);
            memset(&b[t], 0, sizeof b[t]);
            b[t].s = make_session(rts[t], m, OPARA_BACKEND_CPU, 0, &r);
            REQUIRE(r == OPARA_OK);
            b[t].runs = 200;
        }
        for (t = 0; t < 2; ++t) pthread_create(&th[t], NULL, blas_runner_main, &b[t]);
        for (t = 0; t < 2; ++t) {
            pthread_join(th[t], NULL);
            if (b[t].why[0]) OT_LOG("thread %d: %s", t, b[t].why);
            CHECK(b[t].ok);
        }
        stats(&set_calls, &sgemm_calls, &max_threads);
        CHECK_EQ(max_threads, 1);
        CHECK_EQ(get(), 6);
        for (t = 0; t < 2; ++t) {
            opara_session_destroy(b[t].s);
            opara_runtime_destroy(rts[t]);
        }
    }
    CHECK_EQ(get(), 6);
    set(3); /* a host that changes its setting between runs keeps the new one */
    s = make_session(rt, m, OPARA_BACKEND_CPU, 0, &r);
    REQUIRE(r == OPARA_OK);
    CHECK(run_gemm_matches(s, why, sizeof why));
    CHECK_EQ(get(), 3);
    opara_session_destroy(s);
    CHECK_EQ(get(), 3);
    opara_model_destroy(m);
    opara_runtime_destroy(rt);
    CHECK_EQ(get(), 3);
}

static const opara_test_case tests[] = {
    OT_CASE(cpu_session_outlives_its_model),
    OT_CASE(cuda_session_outlives_its_model),
    OT_CASE(model_and_sessions_destroyed_concurrently_free_once),
    OT_CASE(auto_falls_back_to_cpu_on_a_bad_device_ordinal),
    OT_CASE(auto_falls_back_to_cpu_when_cublas_fails_to_load),
    OT_CASE(threads_cuda_session_created_run_and_destroyed_on_different_threads),
    OT_CASE(threads_two_cuda_sessions_run_concurrently),
    OT_CASE(cuda_logs_go_to_the_sessions_logger),
    OT_CASE(threads_failing_cuda_run_reports_to_its_session_not_the_runtime),
    OT_CASE(openblas_thread_count_is_the_hosts_outside_runs),
};

int main(int argc, char** argv) { return opara_test_main(argc, argv, tests, OT_COUNT(tests)); }
