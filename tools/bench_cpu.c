/* bench_cpu: issue 5's CPU benchmark. Per model (.onnx or .opara) and batch size, with the same
   thread count for every contender: latency of our sequential plan, our Opara plan and ONNX
   Runtime (through tests/ort/ort_api.h; the column is skipped with the reason when the library is
   missing), runs interleaved round-robin so load changes hit all three alike; medians and mins,
   ratios against ORT, and memory (our arena peak with and without reuse; ORT's resident-set growth
   over session creation and its first runs, an approximation), and the machine's peak (an FMA loop
   per ISA on 1 thread and on the benchmark's threads) with every model's GFLOP/s as a percentage of
   it. Writes JSON, with the sequential plan's time per operator kind ("op_kind_ms": each node's
   shortest time over the timed runs, summed per kind).
   usage: bench_cpu [--out FILE.json] [--threads N] [--batches 1,8] [--budget SECONDS]
                    [--max-iters N] [--skip-batch8 a,b] [--default-dim N] [--profile] [--pin] MODEL...
   --budget: measuring time per model and batch (split over the contenders; iterations follow
   from the warm-up latency plus the settling pauses, at least 3); --skip-batch8: models (file
   stem) measured at batch 1 only; --default-dim: value of symbolic non-batch dims (ppocr_det's
   image size); --profile: print where our time goes (per operator kind, min over the runs)
   instead of the ORT comparison; --pin: bind our worker threads to one CPU each (see bench_pin). */
#if !defined(_GNU_SOURCE) && defined(__linux__)
#  define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#endif
#define OPARA_IMPLEMENTATION
#include "../opara.h"
#include "../tests/ort/ort_api.h"
#include "tool_util.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#if defined(__linux__)
#  include <sched.h>
#endif

/* The probe threads' shared counters (GCC and Clang builtins, sequentially consistent). */
static int32_t bench_atomic_load(const volatile int32_t* p) { return __atomic_load_n(p, __ATOMIC_SEQ_CST); }
static void bench_atomic_store(volatile int32_t* p, int32_t v) { __atomic_store_n(p, v, __ATOMIC_SEQ_CST); }
static void bench_atomic_add(volatile int32_t* p, int32_t d) { (void)__atomic_add_fetch(p, d, __ATOMIC_SEQ_CST); }

/* CPUs this process may run on (the affinity mask), as sessions count them for their default threads. */
static uint32_t bench_cpu_count(void) {
#if defined(__linux__)
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return (uint32_t)CPU_COUNT(&set);
#endif
    {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        return n > 0 ? (uint32_t)n : 1u;
    }
}

#define BENCH_MAX_ITERS 200

typedef struct bench_opts {
    const char* out_path;
    uint32_t threads;
    int64_t batches[4];
    int n_batches;
    double budget_s;
    int max_iters;
    const char* skip_batch8;
    int64_t default_dim;
    int profile;
} bench_opts;

/* One contender: ours (a session) or ORT, with its inputs and latencies. */
typedef struct bench_side {
    const char* label;
    opara_session* s;
    opara_tensor* ins;
    uint32_t n_in;
    ort_session ort;
    ort_tensor* ort_in;
    int is_ort, ok;
    uint64_t lat[BENCH_MAX_ITERS];
    int n_lat;
    opara_plan_info info;
    double rss_mb;
    double* node_min; /* per node: the shortest time over the timed runs (ns; opara sides) */
    uint32_t n_nodes;
} bench_side;

static int bench_cmp(const void* a, const void* b) {
    uint64_t x = *(const uint64_t*)a, y = *(const uint64_t*)b;
    return x < y ? -1 : x > y;
}

static double bench_rss_mb(void) {
    FILE* f = fopen("/proc/self/statm", "r");
    long pages = 0, rss = 0;
    if (!f) return 0.0;
    if (fscanf(f, "%ld %ld", &pages, &rss) != 2) rss = 0;
    fclose(f);
    return (double)rss * 4096.0 / (1024.0 * 1024.0);
}

/* Pause before each timed run so the previous contender's spinning threads are idle again: ONNX
   Runtime's intra-op worker keeps spinning for about 30 ms of CPU time after every run (measured
   here from /proc/self/task with the googlenet model), and with a shorter pause the run after an
   ORT run found one of the two cores taken and ran nearly single-threaded. */
#define BENCH_SETTLE_MS 50

static void bench_pause_ms(int ms) {
    struct timespec ts;
    ts.tv_sec = 0;
    ts.tv_nsec = (long)ms * 1000000L;
    nanosleep(&ts, NULL);
}

/* ---- machine peak: FMA throughput per ISA ----------------------------------------------------------
   Each probe runs independent multiply-add chains (acc = acc * m + a, converging to 1: no overflow, no
   denormals) on enough accumulators to hide the FMA latency (Zen 4/5 and recent Xeons: 4 cycles, two
   pipes, so 8 in flight; 16 zmm and 12 ymm/xmm here, the constants in registers too). The ISA paths are
   compiled with target attributes and chosen at run time, so the file builds without -mavx512f. One
   thread, then the benchmark's thread count started as our executor starts its workers (the calling
   thread is worker 0); the peak is the best of several short tries (the whole probe takes about 0.4 s). */
#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
#  include <immintrin.h>
#  define BENCH_PEAK_X86 1
#endif

#define PEAK_CHAIN(op, n) acc##n = op(acc##n)
#define PEAK_12(op)                                                                                            \
    PEAK_CHAIN(op, 0); PEAK_CHAIN(op, 1); PEAK_CHAIN(op, 2); PEAK_CHAIN(op, 3); PEAK_CHAIN(op, 4);              \
    PEAK_CHAIN(op, 5); PEAK_CHAIN(op, 6); PEAK_CHAIN(op, 7); PEAK_CHAIN(op, 8); PEAK_CHAIN(op, 9);              \
    PEAK_CHAIN(op, 10); PEAK_CHAIN(op, 11)
#define PEAK_16(op) PEAK_12(op); PEAK_CHAIN(op, 12); PEAK_CHAIN(op, 13); PEAK_CHAIN(op, 14); PEAK_CHAIN(op, 15)

typedef struct peak_isa {
    const char* name;    /* as the JSON and text name it */
    double flops_per_iter; /* multiply-adds per loop iteration x lanes x 2 */
    int (*supported)(void);
    float (*kernel)(uint64_t iters); /* returns a sum of the accumulators, so the work stays live */
} peak_isa;

#ifdef BENCH_PEAK_X86
static int peak_has_avx512(void) { return __builtin_cpu_supports("avx512f"); }
static int peak_has_avx2(void) { return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"); }
static int peak_has_sse2(void) { return 1; }

#  define PEAK_FMA512(x) _mm512_fmadd_ps(x, m, a)
__attribute__((target("avx512f"))) static float peak_avx512(uint64_t iters) {
    const __m512 m = _mm512_set1_ps(0.999999f), a = _mm512_set1_ps(1e-6f);
    __m512 acc0 = _mm512_set1_ps(0.f), acc1 = _mm512_set1_ps(1.f), acc2 = _mm512_set1_ps(2.f), acc3 = _mm512_set1_ps(3.f);
    __m512 acc4 = _mm512_set1_ps(4.f), acc5 = _mm512_set1_ps(5.f), acc6 = _mm512_set1_ps(6.f), acc7 = _mm512_set1_ps(7.f);
    __m512 acc8 = _mm512_set1_ps(8.f), acc9 = _mm512_set1_ps(9.f), acc10 = _mm512_set1_ps(10.f), acc11 = _mm512_set1_ps(11.f);
    __m512 acc12 = _mm512_set1_ps(12.f), acc13 = _mm512_set1_ps(13.f), acc14 = _mm512_set1_ps(14.f);
    __m512 acc15 = _mm512_set1_ps(15.f);
    float out[16];
    uint64_t i;
    for (i = 0; i < iters; ++i) {
        PEAK_16(PEAK_FMA512);
    }
    acc0 = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(acc0, acc1), _mm512_add_ps(acc2, acc3)),
                         _mm512_add_ps(_mm512_add_ps(acc4, acc5), _mm512_add_ps(acc6, acc7)));
    acc8 = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(acc8, acc9), _mm512_add_ps(acc10, acc11)),
                         _mm512_add_ps(_mm512_add_ps(acc12, acc13), _mm512_add_ps(acc14, acc15)));
    _mm512_storeu_ps(out, _mm512_add_ps(acc0, acc8));
    return out[0] + out[15];
}

#  define PEAK_FMA256(x) _mm256_fmadd_ps(x, m, a)
__attribute__((target("avx2,fma"))) static float peak_avx2(uint64_t iters) {
    const __m256 m = _mm256_set1_ps(0.999999f), a = _mm256_set1_ps(1e-6f);
    __m256 acc0 = _mm256_set1_ps(0.f), acc1 = _mm256_set1_ps(1.f), acc2 = _mm256_set1_ps(2.f), acc3 = _mm256_set1_ps(3.f);
    __m256 acc4 = _mm256_set1_ps(4.f), acc5 = _mm256_set1_ps(5.f), acc6 = _mm256_set1_ps(6.f), acc7 = _mm256_set1_ps(7.f);
    __m256 acc8 = _mm256_set1_ps(8.f), acc9 = _mm256_set1_ps(9.f), acc10 = _mm256_set1_ps(10.f);
    __m256 acc11 = _mm256_set1_ps(11.f);
    float out[8];
    uint64_t i;
    for (i = 0; i < iters; ++i) {
        PEAK_12(PEAK_FMA256);
    }
    acc0 = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(acc0, acc1), _mm256_add_ps(acc2, acc3)),
                         _mm256_add_ps(_mm256_add_ps(acc4, acc5), _mm256_add_ps(acc6, acc7)));
    acc8 = _mm256_add_ps(_mm256_add_ps(acc8, acc9), _mm256_add_ps(acc10, acc11));
    _mm256_storeu_ps(out, _mm256_add_ps(acc0, acc8));
    return out[0] + out[7];
}

/* SSE2 (every x86-64): a multiply and an add per lane, as the portable GEMM's compiled loops */
#  define PEAK_MULADD128(x) _mm_add_ps(_mm_mul_ps(x, m), a)
static float peak_sse2(uint64_t iters) {
    const __m128 m = _mm_set1_ps(0.999999f), a = _mm_set1_ps(1e-6f);
    __m128 acc0 = _mm_set1_ps(0.f), acc1 = _mm_set1_ps(1.f), acc2 = _mm_set1_ps(2.f), acc3 = _mm_set1_ps(3.f);
    __m128 acc4 = _mm_set1_ps(4.f), acc5 = _mm_set1_ps(5.f), acc6 = _mm_set1_ps(6.f), acc7 = _mm_set1_ps(7.f);
    __m128 acc8 = _mm_set1_ps(8.f), acc9 = _mm_set1_ps(9.f), acc10 = _mm_set1_ps(10.f), acc11 = _mm_set1_ps(11.f);
    float out[4];
    uint64_t i;
    for (i = 0; i < iters; ++i) {
        PEAK_12(PEAK_MULADD128);
    }
    acc0 = _mm_add_ps(_mm_add_ps(_mm_add_ps(acc0, acc1), _mm_add_ps(acc2, acc3)),
                      _mm_add_ps(_mm_add_ps(acc4, acc5), _mm_add_ps(acc6, acc7)));
    acc8 = _mm_add_ps(_mm_add_ps(acc8, acc9), _mm_add_ps(acc10, acc11));
    _mm_storeu_ps(out, _mm_add_ps(acc0, acc8));
    return out[0] + out[3];
}

static const peak_isa peak_isas[] = {{"avx512f", 16 * 16 * 2, peak_has_avx512, peak_avx512},
                                     {"avx2+fma", 12 * 8 * 2, peak_has_avx2, peak_avx2},
                                     {"sse2", 12 * 4 * 2, peak_has_sse2, peak_sse2}};
#else
static int peak_has_scalar(void) { return 1; }

/* Elsewhere: scalar multiply-adds (what a compiler makes of them depends on its contraction setting). */
#  define PEAK_MULADD1(x) (x) * m + a
static float peak_scalar(uint64_t iters) {
    const float m = 0.999999f, a = 1e-6f;
    float acc0 = 0.f, acc1 = 1.f, acc2 = 2.f, acc3 = 3.f, acc4 = 4.f, acc5 = 5.f, acc6 = 6.f, acc7 = 7.f;
    float acc8 = 8.f, acc9 = 9.f, acc10 = 10.f, acc11 = 11.f;
    uint64_t i;
    for (i = 0; i < iters; ++i) {
        PEAK_12(PEAK_MULADD1);
    }
    return acc0 + acc1 + acc2 + acc3 + acc4 + acc5 + acc6 + acc7 + acc8 + acc9 + acc10 + acc11;
}

static const peak_isa peak_isas[] = {{"scalar", 12 * 2, peak_has_scalar, peak_scalar}};
#endif

/* Short tries, many with several threads: another process on one core spoils a whole try, and a few
   milliseconds fit between the scheduler's time slices. */
#define PEAK_TRIES_1 5
#define PEAK_TRIES_N 15
#define PEAK_MAX_ISAS 3
#define PEAK_MAX_THREADS 256

typedef struct peak_result {
    const char* isa[PEAK_MAX_ISAS];
    double one_thread[PEAK_MAX_ISAS], threaded[PEAK_MAX_ISAS]; /* GFLOP/s */
    int n;
    uint32_t threads;
    double best;          /* the best threaded peak: what a model's GFLOP/s is a fraction of */
    const char* best_isa;
} peak_result;

/* The probe's threads live for the whole threaded probe, as the executor's workers live for a session
   (a thread started for each try would often still share its creator's core during a try of a few ms).
   Between tries they wait on `go`, spinning: the threaded tries follow each other with no gap. */
typedef struct peak_pool {
    pthread_t th[PEAK_MAX_THREADS];
    uint64_t t0[PEAK_MAX_THREADS], t1[PEAK_MAX_THREADS];
    const peak_isa* isa;
    uint64_t iters;
    uint32_t n, started; /* threads wanted and started (the caller is thread 0) */
    volatile int32_t go, ready, done, quit;
    volatile float sink[PEAK_MAX_THREADS]; /* the kernels' results, so the work stays live */
} peak_pool;

typedef struct peak_thread_arg {
    peak_pool* pool;
    uint32_t index;
} peak_thread_arg;

/* One try on thread `i`: all start together, each notes when it started and ended. */
static void peak_pool_try(peak_pool* p, uint32_t i) {
    bench_atomic_add(&p->ready, 1);
    while (bench_atomic_load(&p->ready) < (int32_t)p->n) {
    }
    p->t0[i] = tool_now_ns();
    p->sink[i] = p->isa->kernel(p->iters);
    p->t1[i] = tool_now_ns();
}

static void* peak_pool_main(void* arg) {
    peak_thread_arg* a = (peak_thread_arg*)arg;
    peak_pool* p = a->pool;
    int32_t last = 0;
    for (;;) {
        while (bench_atomic_load(&p->go) == last && !bench_atomic_load(&p->quit)) {
        }
        if (bench_atomic_load(&p->quit)) return NULL;
        last = bench_atomic_load(&p->go);
        peak_pool_try(p, a->index);
        bench_atomic_add(&p->done, 1);
    }
}

static peak_thread_arg peak_args[PEAK_MAX_THREADS];

static void peak_pool_start(peak_pool* p, uint32_t n) {
    memset(p, 0, sizeof *p);
    p->n = n;
    for (p->started = 1; p->started < n; ++p->started) {
        peak_args[p->started].pool = p;
        peak_args[p->started].index = p->started;
        if (pthread_create(&p->th[p->started], NULL, peak_pool_main, &peak_args[p->started]) != 0) break;
    }
}

static void peak_pool_stop(peak_pool* p) {
    uint32_t i;
    bench_atomic_store(&p->quit, 1);
    for (i = 1; i < p->started; ++i) pthread_join(p->th[i], NULL);
}

/* GFLOP/s of the pool's threads each running `iters` iterations: wall time from the first start to the
   last end. 0 when not every thread started. */
static double peak_measure(peak_pool* p, const peak_isa* isa, uint64_t iters) {
    uint64_t t0 = UINT64_MAX, t1 = 0;
    uint32_t i;
    if (p->started < p->n) return 0.0;
    p->isa = isa;
    p->iters = iters;
    bench_atomic_store(&p->ready, 0);
    bench_atomic_store(&p->done, 0);
    bench_atomic_add(&p->go, 1);
    peak_pool_try(p, 0);
    while (bench_atomic_load(&p->done) < (int32_t)p->n - 1) {
    }
    for (i = 0; i < p->n; ++i) {
        if (p->t0[i] < t0) t0 = p->t0[i];
        if (p->t1[i] > t1) t1 = p->t1[i];
    }
    return t1 > t0 ? (double)p->n * (double)iters * isa->flops_per_iter / (double)(t1 - t0) : 0.0;
}

static uint64_t peak_calibrate(const peak_isa* isa, double ms) {
    uint64_t iters = 4096, t;
    for (;;) {
        t = tool_now_ns();
        isa->kernel(iters);
        t = tool_now_ns() - t;
        if (t >= 2000000u || iters >= ((uint64_t)1 << 40)) break;
        iters *= 4;
    }
    return (uint64_t)((double)iters * ms * 1e6 / (double)(t ? t : 1)) + 1;
}

/* Each supported ISA on one thread, then on `threads`: the best of several tries of about 4 ms, taken
   round-robin over the ISAs so that a busy spell on the machine spoils a few tries of each, not all of
   one. */
static void peak_probe(uint32_t threads, peak_result* p) {
    static peak_pool pool;
    const peak_isa* isa[PEAK_MAX_ISAS];
    uint64_t iters[PEAK_MAX_ISAS];
    size_t k;
    int t, i;
    memset(p, 0, sizeof *p);
    p->threads = threads < PEAK_MAX_THREADS ? threads : PEAK_MAX_THREADS;
    p->best_isa = "";
    for (k = 0; k < sizeof peak_isas / sizeof peak_isas[0] && p->n < PEAK_MAX_ISAS; ++k) {
        if (!peak_isas[k].supported()) continue;
        isa[p->n] = &peak_isas[k];
        iters[p->n] = peak_calibrate(&peak_isas[k], 4.0);
        p->isa[p->n++] = peak_isas[k].name;
    }
    peak_pool_start(&pool, 1);
    for (t = 0; t < PEAK_TRIES_1; ++t)
        for (i = 0; i < p->n; ++i) {
            double g = peak_measure(&pool, isa[i], iters[i]); /* flops per ns: GFLOP/s */
            if (g > p->one_thread[i]) p->one_thread[i] = g;
        }
    if (p->threads > 1) {
        peak_pool_start(&pool, p->threads);
        for (t = 0; t < PEAK_TRIES_N; ++t)
            for (i = 0; i < p->n; ++i) {
                double g = peak_measure(&pool, isa[i], iters[i]);
                if (g > p->threaded[i]) p->threaded[i] = g;
            }
        peak_pool_stop(&pool);
    }
    for (i = 0; i < p->n; ++i) {
        if (p->threads <= 1) p->threaded[i] = p->one_thread[i];
        if (p->threaded[i] > p->best) p->best = p->threaded[i], p->best_isa = p->isa[i];
    }
}

/* Deterministic input: floats in [-0.5, 0.5), integers 0 (valid ids and masks for every model). */
static void* bench_fill(opara_dtype dt, size_t count) {
    void* p = calloc(count ? count : 1, opara_dtype_size(dt));
    size_t i;
    if (p && dt == OPARA_DTYPE_F32)
        for (i = 0; i < count; ++i) ((float*)p)[i] = (float)((i * 7919u) % 1000u) / 1000.0f - 0.5f;
    return p;
}

/* --pin: our worker threads bound to one CPU each (cpu_pin_workers = 1); without it they are not,
   like ONNX Runtime's pool with an explicit thread count. */
static int bench_pin;

static int bench_open_ours(bench_side* b, opara_runtime* rt, const opara_model* m, opara_strategy st, int64_t batch,
                           uint32_t threads) {
    opara_session_desc d;
    uint32_t k;
    memset(&d, 0, sizeof d);
    d.backend = OPARA_BACKEND_CPU;
    d.strategy = st;
    d.batch_size = batch;
    d.threads = threads;
    d.cpu_pin_workers = bench_pin;
    if (opara_session_create(rt, m, &d, &b->s) != OPARA_OK) {
        fprintf(stderr, "bench_cpu: %s\n", opara_runtime_last_error(rt));
        return 0;
    }
    opara_session_get_plan_info(b->s, &b->info);
    b->n_in = opara_session_input_count(b->s);
    b->ins = (opara_tensor*)calloc(b->n_in ? b->n_in : 1, sizeof *b->ins);
    for (k = 0; b->ins && k < b->n_in; ++k) {
        opara_tensor_info ti;
        size_t count = 1;
        int32_t j;
        opara_session_input_info(b->s, k, &ti);
        b->ins[k].name = ti.name;
        b->ins[k].dtype = ti.dtype;
        b->ins[k].rank = ti.rank;
        for (j = 0; j < ti.rank; ++j) count *= (size_t)(b->ins[k].dims[j] = ti.dims[j]);
        b->ins[k].data = bench_fill(ti.dtype, count);
        if (!b->ins[k].data) return 0;
    }
    return b->ins != NULL;
}

/* ORT gets the same inputs (matched by name) as our session `ref`. */
static int bench_open_ort(bench_side* b, ort_api* api, const char* path, const bench_side* ref, uint32_t threads) {
    size_t i;
    double rss0 = bench_rss_mb();
    if (!ort_session_open(api, &b->ort, path, (int)threads)) return 0;
    b->ort_in = (ort_tensor*)calloc(b->ort.n_inputs + 1, sizeof *b->ort_in);
    if (!b->ort_in) return 0;
    for (i = 0; i < b->ort.n_inputs; ++i) {
        uint32_t k;
        for (k = 0; k < ref->n_in && strcmp(ref->ins[k].name, b->ort.input_names[i]) != 0; ++k) {
        }
        if (k == ref->n_in) {
            snprintf(api->error, sizeof api->error, "ORT input '%s' unknown to our session", b->ort.input_names[i]);
            return 0;
        }
        b->ort_in[i].elem_type = (int)ref->ins[k].dtype;
        b->ort_in[i].rank = (size_t)ref->ins[k].rank;
        memcpy(b->ort_in[i].dims, ref->ins[k].dims, sizeof(int64_t) * (size_t)ref->ins[k].rank);
        b->ort_in[i].data = ref->ins[k].data;
        b->ort_in[i].nbytes = opara_dtype_size(ref->ins[k].dtype);
        for (k = 0; k < (uint32_t)b->ort_in[i].rank; ++k) b->ort_in[i].nbytes *= (size_t)b->ort_in[i].dims[k];
    }
    b->rss_mb = rss0; /* the growth is taken after the warm-up runs */
    return 1;
}

static int bench_run(bench_side* b) {
    if (b->is_ort) return ort_session_run(&b->ort, b->ort_in, NULL);
    if (opara_session_run(b->s, b->ins, b->n_in, NULL, 0) == OPARA_OK) return 1;
    fprintf(stderr, "bench_cpu: %s: %s\n", b->label, opara_session_last_error(b->s));
    return 0;
}

static uint64_t bench_time_one(bench_side* b) {
    uint64_t t0 = tool_now_ns();
    if (!bench_run(b)) b->ok = 0;
    return tool_now_ns() - t0;
}

static void bench_close(bench_side* b) {
    uint32_t k;
    if (b->is_ort) {
        if (b->ort.session) ort_session_close(&b->ort);
        free(b->ort_in);
        return;
    }
    for (k = 0; b->ins && k < b->n_in; ++k) free(b->ins[k].data);
    free(b->ins);
    free(b->node_min);
    if (b->s) opara_session_destroy(b->s);
}

static double bench_ms(uint64_t ns) { return (double)ns / 1e6; }
static uint64_t bench_median(bench_side* b) { return b->n_lat ? b->lat[b->n_lat / 2] : 0; }
static uint64_t bench_min(bench_side* b) { return b->n_lat ? b->lat[0] : 0; }

/* Per operator kind: sum over nodes of each node's minimum time over the runs. */
/* After a run of an opara side: each node's shortest time so far. */
static void bench_note_nodes(bench_side* b, const opara_model* m) {
    uint32_t nn = opara_model_node_count(m), k, n;
    opara_node_time* nt;
    if (b->is_ort || !nn) return;
    if (!b->node_min) {
        b->node_min = (double*)malloc(nn * sizeof(double));
        if (!b->node_min) return;
        for (k = 0; k < nn; ++k) b->node_min[k] = 1e300;
        b->n_nodes = nn;
    }
    nt = (opara_node_time*)calloc(nn, sizeof *nt);
    if (!nt) return;
    n = opara_session_get_node_times(b->s, nt, nn);
    for (k = 0; k < n && k < nn; ++k) {
        double v = (double)(nt[k].end_ns - nt[k].start_ns);
        if (nt[k].node < nn && v < b->node_min[nt[k].node]) b->node_min[nt[k].node] = v;
    }
    free(nt);
}

/* The per-node minimum times summed per operator kind (first-seen order); returns the kinds. */
static uint32_t bench_kind_sums(const bench_side* b, const opara_model* m, const char** kinds, double* sums,
                                uint32_t cap, double* total) {
    uint32_t k, i, nk = 0;
    *total = 0.0;
    for (k = 0; b->node_min && k < b->n_nodes; ++k) {
        const char* op = opara_model_node_op(m, k);
        double v = b->node_min[k] < 1e300 ? b->node_min[k] : 0.0;
        for (i = 0; i < nk && strcmp(kinds[i], op) != 0; ++i) {
        }
        if (i == nk && nk < cap) {
            kinds[nk] = op;
            sums[nk++] = 0.0;
        }
        if (i < nk) sums[i] += v;
        *total += v;
    }
    return nk;
}

static void bench_profile(bench_side* b, const opara_model* m, int iters) {
    const char* kinds[128];
    double sums[128], total;
    uint32_t i, nk;
    int it;
    for (it = 0; it < iters; ++it) {
        if (!bench_run(b)) break;
        bench_note_nodes(b, m);
    }
    nk = bench_kind_sums(b, m, kinds, sums, 128, &total);
    printf("  %s: sum of per-node minimum times %.2f ms\n", b->label, total / 1e6);
    for (i = 0; i < nk; ++i)
        printf("    %-22s %8.2f ms %5.1f%%\n", kinds[i], sums[i] / 1e6, total > 0 ? 100.0 * sums[i] / total : 0.0);
}

static const char* bench_stem(const char* path, char* buf, size_t cap) {
    const char* base = strrchr(path, '/');
    size_t n;
    base = base ? base + 1 : path;
    n = strcspn(base, ".");
    if (n >= cap) n = cap - 1;
    memcpy(buf, base, n);
    buf[n] = 0;
    return buf;
}

static int bench_listed(const char* list, const char* name) {
    size_t n = strlen(name);
    const char* p = list;
    while (p && *p) {
        size_t len = strcspn(p, ",");
        if (len == n && strncmp(p, name, n) == 0) return 1;
        p += len;
        if (*p == ',') ++p;
    }
    return 0;
}

/* The model's GFLOP per run as the planner counts them (src/plan/opara_desc.c: 2 x multiply-adds of every
   Conv, ConvTranspose, Gemm and MatMul at the session's shapes; element-wise work is left out, as in
   the usual GFLOP/s figures). */
static double bench_model_gflop(const opara_session* s) {
    static const char* const kinds[] = {"Conv", "ConvTranspose", "Gemm", "MatMul"};
    double flops = 0.0;
    opara_plan* plan = NULL;
    opara_plan_node nd;
    opara_node_cost cost;
    uint32_t i, k;
    if (opara_session_get_plan(s, &plan) != OPARA_OK) return 0.0;
    for (i = 0; i < opara_plan_node_count(plan); ++i) {
        if (opara_plan_get_node(plan, i, &nd) != OPARA_OK || opara_plan_get_node_cost(plan, i, &cost) != OPARA_OK) continue;
        for (k = 0; k < sizeof kinds / sizeof kinds[0]; ++k)
            if (strcmp(nd.op, kinds[k]) == 0) flops += cost.flops;
    }
    opara_plan_destroy(plan);
    return flops / 1e9;
}

static double bench_gflops(double gflop, uint64_t ns) { return ns ? gflop * 1e9 / (double)ns : 0.0; }
static double bench_pct(double gflops, const peak_result* peak) { return peak->best > 0 ? 100.0 * gflops / peak->best : 0.0; }

static void peak_print(const peak_result* p) {
    int k;
    printf("machine peak, GFLOP/s on 1 / %u threads (FMA loop, best of %d / %d tries):", p->threads, PEAK_TRIES_1,
           PEAK_TRIES_N);
    for (k = 0; k < p->n; ++k)
        printf("  %s %.1f / %.1f", p->isa[k], p->one_thread[k], p->threaded[k]);
    printf("\n");
}

/* "peak": {isa: GFLOP/s on the benchmark's threads}, the same on one thread, and the best. */
static void peak_json(FILE* out, const peak_result* p) {
    int k, one;
    for (one = 0; one < 2; ++one) {
        fprintf(out, "\"%s\": {", one ? "peak_1thread" : "peak");
        for (k = 0; k < p->n; ++k)
            fprintf(out, "%s\"%s\": %.2f", k ? ", " : "", p->isa[k], one ? p->one_thread[k] : p->threaded[k]);
        fprintf(out, "}, ");
    }
    fprintf(out, "\"peak_best_isa\": \"%s\", \"peak_best_gflops\": %.2f,\n", p->best_isa, p->best);
}

/* "op_kind_ms": the sequential side's per-node minimum times summed per operator kind. */
static void bench_json_kinds(FILE* out, const bench_side* b, const opara_model* m) {
    const char* kinds[128];
    double sums[128], total;
    uint32_t i, nk = bench_kind_sums(b, m, kinds, sums, 128, &total);
    fprintf(out, "   \"op_kind_ms\": {");
    for (i = 0; i < nk; ++i) fprintf(out, "%s\"%s\": %.4f", i ? ", " : "", kinds[i], sums[i] / 1e6);
    fprintf(out, "}, \"op_kind_total_ms\": %.4f", total / 1e6);
}

/* Measures one model at one batch size; prints a line and appends a JSON object. */
static void bench_config(const bench_opts* o, opara_runtime* rt, const opara_model* m, const char* path,
                         const char* name, int64_t batch, ort_api* api, const char* ort_reason, const peak_result* peak,
                         FILE* out, int* first) {
    bench_side side[3];
    int n_sides = 3, i, it, iters;
    uint64_t warm = 0;
    char ort_note[600];
    memset(side, 0, sizeof side);
    side[0].label = "sequential";
    side[1].label = "opara";
    side[2].label = "ort";
    side[2].is_ort = 1;
    ort_note[0] = 0;
    side[0].ok = bench_open_ours(&side[0], rt, m, OPARA_STRATEGY_SEQUENTIAL, batch, o->threads);
    side[1].ok = side[0].ok && bench_open_ours(&side[1], rt, m, OPARA_STRATEGY_OPARA, batch, o->threads);
    if (!side[0].ok || !side[1].ok) {
        for (i = 0; i < 3; ++i) bench_close(&side[i]);
        return;
    }
    if (o->profile || !api) {
        n_sides = 2;
        if (!o->profile) snprintf(ort_note, sizeof ort_note, "%s", ort_reason);
    } else if (!(side[2].ok = bench_open_ort(&side[2], api, path, &side[0], o->threads))) {
        n_sides = 2;
        snprintf(ort_note, sizeof ort_note, "ORT session failed: %s", api->error);
    }
    for (i = 0; i < n_sides; ++i) { /* warm-up, and the latency that sets the iteration count */
        bench_time_one(&side[i]);
        warm += bench_time_one(&side[i]);
    }
    if (n_sides == 3) side[2].rss_mb = bench_rss_mb() - side[2].rss_mb;
    warm += (uint64_t)n_sides * BENCH_SETTLE_MS * 1000000u; /* the pauses count against the budget too */
    iters = (int)(o->budget_s * 1e9 / (double)warm);
    if (iters < 3) iters = 3;
    if (iters > o->max_iters) iters = o->max_iters;
    if (o->profile) {
        printf("%s batch %lld, %u threads, %d runs\n", name, (long long)batch, o->threads, iters);
        bench_profile(&side[0], m, iters);
        bench_profile(&side[1], m, iters);
        for (i = 0; i < 3; ++i) bench_close(&side[i]);
        return;
    }
    for (it = 0; it < iters; ++it)
        for (i = 0; i < n_sides; ++i) { /* rotate who goes first */
            bench_side* b = &side[(i + it) % n_sides];
            bench_pause_ms(BENCH_SETTLE_MS);
            b->lat[b->n_lat++] = bench_time_one(b);
            bench_note_nodes(b, m);
        }
    for (i = 0; i < n_sides; ++i) qsort(side[i].lat, (size_t)side[i].n_lat, sizeof(uint64_t), bench_cmp);
    {
        uint64_t seq = bench_median(&side[0]), opa = bench_median(&side[1]), ort = n_sides == 3 ? bench_median(&side[2]) : 0;
        uint64_t best = seq < opa ? seq : opa;
        double gflop = bench_model_gflop(side[0].s), best_gflops = bench_gflops(gflop, best);
        printf("%-17s b%-2lld seq %8.2f (min %8.2f)  opara %8.2f (min %8.2f) %3u str  ", name, (long long)batch,
               bench_ms(seq), bench_ms(bench_min(&side[0])), bench_ms(opa), bench_ms(bench_min(&side[1])),
               side[1].info.n_streams);
        if (ort)
            printf("ort %8.2f (min %8.2f)  best/ort %.2fx  opara/seq %.2fx  arena %.1f MB  ", bench_ms(ort),
                   bench_ms(bench_min(&side[2])), (double)best / (double)ort, (double)opa / (double)seq,
                   (double)side[1].info.peak_memory_bytes / 1048576.0);
        else
            printf("ort -- (%s)  opara/seq %.2fx  ", ort_note, (double)opa / (double)seq);
        printf("%.1f GFLOP/s (%.0f%% of peak)", best_gflops, bench_pct(best_gflops, peak));
        if (ort) printf(", ort %.1f (%.0f%%)", bench_gflops(gflop, ort), bench_pct(bench_gflops(gflop, ort), peak));
        printf("\n");
        fflush(stdout);
        fprintf(out,
                "%s  {\"model\": \"%s\", \"batch\": %lld, \"threads\": %u, \"runs\": %d, \"gemm\": \"%s\",\n"
                "   \"sequential_ms\": %.4f, \"sequential_min_ms\": %.4f, \"opara_ms\": %.4f, \"opara_min_ms\": %.4f,"
                " \"opara_streams\": %u, \"opara_vs_sequential\": %.4f,\n"
                "   \"gflop\": %.4f, \"sequential_gflops\": %.2f, \"opara_gflops\": %.2f, \"best_gflops\": %.2f,"
                " \"pct_peak\": %.2f,\n",
                *first ? "" : ",\n", name, (long long)batch, o->threads, iters, side[0].info.gemm, bench_ms(seq),
                bench_ms(bench_min(&side[0])), bench_ms(opa), bench_ms(bench_min(&side[1])), side[1].info.n_streams,
                (double)opa / (double)seq, gflop, bench_gflops(gflop, seq), bench_gflops(gflop, opa), best_gflops,
                bench_pct(best_gflops, peak));
        if (ort)
            fprintf(out,
                    "   \"ort_ms\": %.4f, \"ort_min_ms\": %.4f, \"sequential_vs_ort\": %.4f, \"opara_vs_ort\": %.4f,"
                    " \"best_vs_ort\": %.4f, \"ort_gflops\": %.2f, \"ort_pct_peak\": %.2f,\n",
                    bench_ms(ort), bench_ms(bench_min(&side[2])), (double)seq / (double)ort, (double)opa / (double)ort,
                    (double)best / (double)ort, bench_gflops(gflop, ort), bench_pct(bench_gflops(gflop, ort), peak));
        else
            fprintf(out, "   \"ort_ms\": null, \"ort_skipped\": \"%s\",\n", ort_note);
        fprintf(out,
                "   \"sequential_arena_bytes\": %llu, \"opara_arena_bytes\": %llu, \"no_reuse_bytes\": %llu,"
                " \"ort_rss_growth_mb\": %.1f,\n",
                (unsigned long long)side[0].info.peak_memory_bytes, (unsigned long long)side[1].info.peak_memory_bytes,
                (unsigned long long)side[1].info.no_reuse_bytes, n_sides == 3 ? side[2].rss_mb : 0.0);
        bench_json_kinds(out, &side[0], m);
        fprintf(out, "}");
        *first = 0;
    }
    for (i = 0; i < 3; ++i) bench_close(&side[i]);
}

static int bench_parse(int argc, char** argv, bench_opts* o) {
    int i;
    memset(o, 0, sizeof *o);
    o->out_path = "build/bench/cpu.json";
    o->batches[0] = 1;
    o->batches[1] = 8;
    o->n_batches = 2;
    o->budget_s = 6.0;
    o->max_iters = 40;
    o->skip_batch8 = "";
    o->default_dim = 640;
    for (i = 1; i < argc && argv[i][0] == '-'; ++i) {
        const char* a = argv[i];
        const char* v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--profile") == 0) {
            o->profile = 1;
            continue;
        }
        if (strcmp(a, "--pin") == 0) {
            bench_pin = 1;
            continue;
        }
        if (!v) return -1;
        ++i;
        if (strcmp(a, "--out") == 0) o->out_path = v;
        else if (strcmp(a, "--threads") == 0) o->threads = (uint32_t)atoi(v);
        else if (strcmp(a, "--budget") == 0) o->budget_s = atof(v);
        else if (strcmp(a, "--max-iters") == 0) o->max_iters = atoi(v);
        else if (strcmp(a, "--skip-batch8") == 0) o->skip_batch8 = v;
        else if (strcmp(a, "--default-dim") == 0) o->default_dim = atoll(v);
        else if (strcmp(a, "--batches") == 0) {
            char* end = NULL;
            const char* p = v;
            o->n_batches = 0;
            while (*p && o->n_batches < 4) {
                o->batches[o->n_batches++] = strtoll(p, &end, 10);
                p = *end == ',' ? end + 1 : end;
                if (end == p && *p) return -1;
            }
        } else return -1;
    }
    if (o->max_iters < 3) o->max_iters = 3;
    if (o->max_iters > BENCH_MAX_ITERS) o->max_iters = BENCH_MAX_ITERS;
    if (!o->threads) o->threads = bench_cpu_count();
    return i;
}

int main(int argc, char** argv) {
    bench_opts o;
    int first = 1, i = bench_parse(argc, argv, &o), b;
    opara_runtime* rt;
    ort_api api;
    int have_ort;
    char ort_reason[600];
    FILE* out;
    peak_result peak;
    if (i < 0) {
        fprintf(stderr, "usage: bench_cpu [--out F] [--threads N] [--batches 1,8] [--budget S] [--max-iters N]\n"
                        "                 [--skip-batch8 a,b] [--default-dim N] [--profile] [--pin] MODEL...\n");
        return 2;
    }
    (void)ort_tensor_free; /* outputs are not copied out of ORT */
    if (opara_runtime_create(NULL, &rt) != OPARA_OK) return 1;
    peak_probe(o.threads, &peak); /* first: before ORT's threads exist */
    have_ort = ort_open(&api, ort_default_library());
    snprintf(ort_reason, sizeof ort_reason, "ONNX Runtime unavailable: %s", have_ort ? "" : api.error);
    if (!have_ort) printf("bench_cpu: %s (the ORT column is skipped)\n", ort_reason);
    out = fopen(o.out_path, "w");
    if (!out) {
        fprintf(stderr, "bench_cpu: cannot write %s\n", o.out_path);
        return 1;
    }
    printf("bench_cpu: %u threads for every contender, %.0f s per model and batch, latencies in ms (median, min)\n",
           o.threads, o.budget_s);
    peak_print(&peak);
    fprintf(out, "{\"threads\": %u, \"budget_s\": %.1f, \"ort\": %s, \"batch8_skipped\": \"%s\", \"pinned\": %s,\n",
            o.threads, o.budget_s, have_ort ? "true" : "false", o.skip_batch8, bench_pin ? "true" : "false");
    peak_json(out, &peak);
    fprintf(out, "\"results\": [\n");
    for (; i < argc; ++i) {
        opara_model* m = NULL;
        size_t len = strlen(argv[i]);
        char name[128];
        opara_onnx_options oo;
        opara_result r;
        memset(&oo, 0, sizeof oo);
        oo.default_dim = o.default_dim;
        r = len > 5 && strcmp(argv[i] + len - 5, ".onnx") == 0 ? opara_model_load_onnx_file(rt, argv[i], &oo, &m)
                                                                : opara_model_load_file(rt, argv[i], &m);
        bench_stem(argv[i], name, sizeof name);
        if (r != OPARA_OK) {
            fprintf(stderr, "bench_cpu: %s: %s\n", argv[i], opara_runtime_last_error(rt));
            continue;
        }
        for (b = 0; b < o.n_batches; ++b) {
            if (o.batches[b] == 8 && bench_listed(o.skip_batch8, name)) {
                printf("%-17s b8  skipped (--skip-batch8: keeps the whole run under ~10 minutes)\n", name);
                continue;
            }
            bench_config(&o, rt, m, argv[i], name, o.batches[b], have_ort ? &api : NULL, ort_reason, &peak, out,
                         &first);
        }
        opara_model_destroy(m);
    }
    fprintf(out, "\n]}\n");
    fclose(out);
    if (have_ort) ort_close(&api);
    opara_runtime_destroy(rt);
    return 0;
}
