/* The CUDA profiler's runs (Opara's Model Profiler, seeds 000/001 §Profiler): per node, its time
   and, for library kernels, their real launch configuration, for Alg. 2. The resources of our own
   kernels need no run (opara_cuda_resources.c).

   - Library kernels (cuBLAS, cuDNN): their launch configuration is private to the library. In a
     profiling run, CUPTI kernel activity records give it when libcupti loads and works; otherwise
     the documented estimates of opara__cuda_library_estimate stand (logged once per run).
   - Times: profiling runs of the SEQUENTIAL plan in eager mode, an event pair around every node on
     its stream, so each node runs alone on the device (no interference from concurrent ops in the
     number): one untimed warm-up pass, then timed passes; a node's time is the median of its
     cuEventElapsedTime(begin, end) over them, its spread the interquartile range / median (more
     passes while a node's spread is large; see "the timing protocol" below).
   The profiling run uses its own short-lived session (eager, one stream), then the real session is
   planned with the measured rows (the CUDA table, opara_cuda_table.c): its memory plan and streams follow the final
   plan and nothing of the profiling run stays allocated. */
#include "opara_backend_cuda.h"

#include <stdlib.h>
#include <string.h>

/* ---- CUPTI ------------------------------------------------------------------------------------- */

/* CUPTI hands out activity buffers through callbacks that take no user data, so a profiling run
   delivers them to one process-wide sink (the library's only global state), claimed by at most
   one run at a time; a second concurrent run keeps the estimates. */
#define OPARA__CUPTI_BUFFER ((size_t)1 << 20)

typedef struct opara__cupti_kernel {
    uint32_t correlation;
    opara__cuda_op_profile row;
} opara__cupti_kernel;

typedef struct opara__cupti_sink {
    opara_runtime* rt;
    opara_cuda_cupti api;
    opara__cupti_kernel* kernels;
    uint64_t* external; /* pairs: correlation id, node */
    uint32_t n_kernels, n_external, cap;
} opara__cupti_sink;

static volatile int32_t opara__cupti_claimed;
static opara__cupti_sink* volatile opara__cupti_current;

static void OPARA_CUPTIAPI opara__cupti_request(uint8_t** buffer, size_t* size, size_t* max_records) {
    opara__cupti_sink* sink = opara__cupti_current;
    *buffer = sink ? (uint8_t*)opara__alloc(sink->rt, OPARA__CUPTI_BUFFER) : NULL;
    *size = *buffer ? OPARA__CUPTI_BUFFER : 0;
    *max_records = 0;
}

static void opara__cupti_take(opara__cupti_sink* sink, const opara_CUpti_Activity* rec) {
    if (rec->kind == OPARA_CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL && sink->n_kernels < sink->cap) {
        const opara_CUpti_ActivityKernel10* k = (const opara_CUpti_ActivityKernel10*)(const void*)rec;
        opara__cupti_kernel* out = &sink->kernels[sink->n_kernels++];
        memset(out, 0, sizeof *out);
        out->correlation = k->correlationId;
        opara__format(out->row.kernel, sizeof out->row.kernel, "%s", k->name ? k->name : "?");
        out->row.grid[0] = (uint32_t)k->gridX;
        out->row.grid[1] = (uint32_t)k->gridY;
        out->row.grid[2] = (uint32_t)k->gridZ;
        out->row.block[0] = (uint32_t)k->blockX;
        out->row.block[1] = (uint32_t)k->blockY;
        out->row.block[2] = (uint32_t)k->blockZ;
        out->row.regs = k->registersPerThread;
        out->row.smem_static = (uint32_t)k->staticSharedMemory;
        out->row.smem_dynamic = (uint32_t)k->dynamicSharedMemory;
        out->row.source = OPARA__CURES_CUPTI;
    } else if (rec->kind == OPARA_CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION && sink->n_external < sink->cap) {
        const opara_CUpti_ActivityExternalCorrelation* e = (const opara_CUpti_ActivityExternalCorrelation*)(const void*)rec;
        if (e->externalKind != OPARA_CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0) return;
        sink->external[2 * sink->n_external] = e->correlationId;
        sink->external[2 * sink->n_external + 1] = e->externalId;
        ++sink->n_external;
    }
}

static void OPARA_CUPTIAPI opara__cupti_complete(opara_CUcontext ctx, uint32_t stream, uint8_t* buffer, size_t size,
                                                 size_t valid) {
    opara__cupti_sink* sink = opara__cupti_current;
    opara_CUpti_Activity* rec = NULL;
    (void)ctx;
    (void)stream;
    (void)size;
    if (!sink || !buffer) return;
    while (valid && sink->api.cuptiActivityGetNextRecord(buffer, valid, &rec) == OPARA_CUPTI_SUCCESS) opara__cupti_take(sink, rec);
    opara__free(sink->rt, buffer);
}

static const char* opara__cupti_error(opara__cupti_sink* sink, opara_CUptiResult r) {
    const char* text = NULL;
    if (sink->api.cuptiGetResultString(r, &text) != OPARA_CUPTI_SUCCESS || !text) text = "unknown CUPTI error";
    return text;
}

/* Loads CUPTI, claims the sink and enables kernel and external-correlation records. 0 with the
   reason in why when CUPTI cannot be used. */
static int opara__cupti_start(opara__cupti_sink* sink, const char* path, uint32_t n_launches, char* why, size_t cap) {
    char err[1024];
    opara_CUptiResult r;
    if (path && strcmp(path, "none") == 0) {
        opara__format(why, cap, "disabled (cupti_path \"none\")");
        return 0;
    }
    if (opara_cuda_cupti_load(&sink->api, path, err, sizeof err) != OPARA_CUDA_LOAD_OK) {
        opara__format(why, cap, "%s", err);
        return 0;
    }
    sink->cap = n_launches * 4 + 64;
    sink->kernels = (opara__cupti_kernel*)opara__calloc(sink->rt, sink->cap, sizeof *sink->kernels);
    sink->external = (uint64_t*)opara__calloc(sink->rt, (size_t)sink->cap * 2, sizeof(uint64_t));
    if (!sink->kernels || !sink->external) {
        opara__format(why, cap, "out of host memory");
        return 0;
    }
    if (!opara__atomic_cas(&opara__cupti_claimed, 0, 1)) {
        opara__format(why, cap, "another profiling run is using CUPTI");
        return 0;
    }
    opara__cupti_current = sink;
    r = sink->api.cuptiActivityRegisterCallbacks(opara__cupti_request, opara__cupti_complete);
    if (r == OPARA_CUPTI_SUCCESS) r = sink->api.cuptiActivityEnable(OPARA_CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    if (r == OPARA_CUPTI_SUCCESS) r = sink->api.cuptiActivityEnable(OPARA_CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
    if (r != OPARA_CUPTI_SUCCESS) {
        opara__format(why, cap, "%s: activity records unavailable: %s (%d)", sink->api.path, opara__cupti_error(sink, r), (int)r);
        sink->api.cuptiActivityDisable(OPARA_CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
        opara__cupti_current = NULL;
        opara__atomic_store(&opara__cupti_claimed, 0);
        return 0;
    }
    return 1;
}

/* Flushes the records into the sink and releases it. */
static void opara__cupti_stop(opara__cupti_sink* sink) {
    sink->api.cuptiActivityFlushAll(OPARA_CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    sink->api.cuptiActivityDisable(OPARA_CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    sink->api.cuptiActivityDisable(OPARA_CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
    opara__cupti_current = NULL;
    opara__atomic_store(&opara__cupti_claimed, 0);
}

/* Library nodes take the record of their first kernel (the reference profiler also reads info[0]). */
static uint32_t opara__cupti_apply(const opara__cupti_sink* sink, const uint8_t* library_node, uint32_t n_nodes,
                                   opara__cuda_op_profile* rows) {
    uint32_t e, k, applied = 0;
    for (e = 0; e < sink->n_external; ++e) {
        uint64_t node = sink->external[2 * e + 1];
        if (node >= n_nodes || !library_node[node] || rows[node].source == OPARA__CURES_CUPTI) continue;
        for (k = 0; k < sink->n_kernels; ++k)
            if (sink->kernels[k].correlation == (uint32_t)sink->external[2 * e]) {
                opara__cuda_op_profile timed = rows[node];
                rows[node] = sink->kernels[k].row;
                opara__cuda_profile_copy_times(&timed, &rows[node]);
                ++applied;
                break;
            }
    }
    return applied;
}

static void opara__cupti_free(opara__cupti_sink* sink) {
    opara__free(sink->rt, sink->kernels);
    opara__free(sink->rt, sink->external);
    /* the library stays loaded: CUPTI keeps threads and the registered callbacks for the process */
    sink->kernels = NULL;
    sink->external = NULL;
}

/* ---- the profiling runs ------------------------------------------------------------------------- */

/* The timing protocol. The first pass of a fresh session pays first-use costs that later runs never
   see: lazy module loading and PTX JIT by the driver (CUDA_MODULE_LOADING=LAZY is the default since
   CUDA 12.2), and cuBLAS/cuDNN set-up on the first call of a handle or algorithm. So one untimed
   warm-up pass goes first; then OPARA__PROFILE_RUNS timed passes, and as many again while a node's
   spread (interquartile range / median) exceeds OPARA__PROFILE_SPREAD, up to OPARA__PROFILE_MAX_RUNS
   passes or OPARA__PROFILE_BUDGET_NS of timed passes. A node's time is its median. Nodes shorter than
   OPARA__PROFILE_FLOOR_MS or 1% of the total do not count as unstable: event timing jitter of a few
   microseconds says nothing about the order Alg. 2 picks. */
#define OPARA__PROFILE_WARMUP 1
#define OPARA__PROFILE_RUNS 5
#define OPARA__PROFILE_MAX_RUNS 25
#define OPARA__PROFILE_SPREAD 0.25
#define OPARA__PROFILE_FLOOR_MS 0.01
#define OPARA__PROFILE_BUDGET_NS ((uint64_t)2000000000)

typedef struct opara__profile_run {
    const opara_cuda_driver* cu;
    opara__cupti_sink* cupti; /* NULL without CUPTI, or after the pass it observes */
    opara_CUevent* begin;     /* [n_nodes] */
    opara_CUevent* end;
    uint8_t* launched;        /* [n_nodes] */
    float* samples;           /* [n_nodes][OPARA__PROFILE_MAX_RUNS] ms per timed pass */
    opara_runtime* rt;
    const opara_logger* logger; /* the session's */
} opara__profile_run;

static opara_result opara__profile_hook(void* user, uint32_t node, int after, opara_CUstream stream) {
    opara__profile_run* run = (opara__profile_run*)user;
    opara_CUresult r = run->cu->cuEventRecord(after ? run->end[node] : run->begin[node], stream);
    if (r != OPARA_CUDA_SUCCESS)
        return opara__fail_to(&run->rt->error, run->logger, OPARA_ERR_CUDA, "CUDA profiler: cuEventRecord failed: %s (%d)",
                           opara_cuda_driver_result_name(run->cu, r), (int)r);
    run->launched[node] = 1;
    if (run->cupti) {
        uint64_t last = 0;
        if (!after) run->cupti->api.cuptiActivityPushExternalCorrelationId(OPARA_CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, node);
        else run->cupti->api.cuptiActivityPopExternalCorrelationId(OPARA_CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &last);
    }
    return OPARA_OK;
}

static opara_result opara__profile_events(opara__profile_run* run, uint32_t n_nodes, int create) {
    uint32_t n;
    for (n = 0; n < n_nodes; ++n) {
        if (!create) {
            if (run->begin[n]) run->cu->cuEventDestroy_v2(run->begin[n]);
            if (run->end[n]) run->cu->cuEventDestroy_v2(run->end[n]);
            continue;
        }
        /* flags 0: timing enabled (the plan's own events disable timing) */
        if (run->cu->cuEventCreate(&run->begin[n], 0) != OPARA_CUDA_SUCCESS ||
            run->cu->cuEventCreate(&run->end[n], 0) != OPARA_CUDA_SUCCESS)
            return opara__fail_to(&run->rt->error, run->logger, OPARA_ERR_CUDA, "CUDA profiler: cuEventCreate failed");
    }
    return OPARA_OK;
}

/* The event times of timed pass `pass` (the pass has synchronised). */
static opara_result opara__profile_times(opara__profile_run* run, uint32_t n_nodes, uint32_t pass) {
    uint32_t n;
    for (n = 0; n < n_nodes; ++n) {
        float ms = 0;
        opara_CUresult r;
        if (!run->launched[n]) continue;
        r = run->cu->cuEventElapsedTime_v2(&ms, run->begin[n], run->end[n]);
        if (r != OPARA_CUDA_SUCCESS)
            return opara__fail_to(&run->rt->error, run->logger, OPARA_ERR_CUDA,
                                  "CUDA profiler: cuEventElapsedTime for node %u failed: %s (%d)", n,
                                  opara_cuda_driver_result_name(run->cu, r), (int)r);
        run->samples[(size_t)n * OPARA__PROFILE_MAX_RUNS + pass] = ms;
    }
    return OPARA_OK;
}

/* The q-quantile of sorted[0..n) by linear interpolation between the closest ranks. */
static double opara__profile_quantile(const float* sorted, uint32_t n, double q) {
    double pos = q * (double)(n - 1);
    uint32_t lo = (uint32_t)pos;
    double frac = pos - (double)lo;
    return lo + 1 < n ? sorted[lo] + frac * (sorted[lo + 1] - sorted[lo]) : sorted[n - 1];
}

typedef struct opara__profile_summary {
    uint32_t n_unstable;
    uint32_t worst;      /* the node with the largest counted spread (n_nodes: none) */
    double worst_spread;
} opara__profile_summary;

/* Median and spread of every launched node over `runs` timed passes into rows; which nodes are
   still unstable (counted as the protocol above says). */
static void opara__profile_summarise(const opara__profile_run* run, uint32_t n_nodes, uint32_t runs, opara__cuda_op_profile* rows,
                                 opara__profile_summary* out) {
    float sorted[OPARA__PROFILE_MAX_RUNS];
    double total = 0;
    uint32_t n, i, j;
    for (n = 0; n < n_nodes; ++n) {
        const float* x = &run->samples[(size_t)n * OPARA__PROFILE_MAX_RUNS];
        double median;
        if (!run->launched[n]) continue;
        for (i = 0; i < runs; ++i) { /* insertion sort: at most OPARA__PROFILE_MAX_RUNS values */
            float v = x[i];
            for (j = i; j > 0 && sorted[j - 1] > v; --j) sorted[j] = sorted[j - 1];
            sorted[j] = v;
        }
        median = opara__profile_quantile(sorted, runs, 0.5);
        rows[n].time_ms = median;
        rows[n].time_spread = median > 0 ? (opara__profile_quantile(sorted, runs, 0.75) - opara__profile_quantile(sorted, runs, 0.25)) / median : 0;
        rows[n].n_runs = (uint16_t)runs;
        rows[n].measured = 1;
        total += median;
    }
    memset(out, 0, sizeof *out);
    out->worst = n_nodes;
    for (n = 0; n < n_nodes; ++n) {
        if (!run->launched[n] || rows[n].time_ms < OPARA__PROFILE_FLOOR_MS || rows[n].time_ms < 0.01 * total) continue;
        if (rows[n].time_spread > OPARA__PROFILE_SPREAD) ++out->n_unstable;
        if (out->worst == n_nodes || rows[n].time_spread > out->worst_spread) out->worst = n, out->worst_spread = rows[n].time_spread;
    }
}

/* The passes: warm-up (observed by CUPTI when it works), then timed passes until the spreads settle. */
static opara_result opara__profile_passes(opara__profile_run* run, opara__cuda_session* ps, const opara__graph* g,
                                      opara__cuda_op_profile* rows) {
    opara__profile_summary sum;
    uint64_t timed_ns = 0;
    uint32_t pass, runs = 0, n_nodes = g->n_nodes;
    opara_result r = OPARA_OK;
    memset(&sum, 0, sizeof sum);
    sum.worst = n_nodes;
    for (pass = 0; r == OPARA_OK; ++pass) {
        uint64_t t0 = opara__now_ns();
        r = opara__cuda_session_enqueue_hooked(ps, opara__profile_hook, run);
        if (pass < OPARA__PROFILE_WARMUP) {
            if (run->cupti) opara__cupti_stop(run->cupti);
            run->cupti = NULL;
            continue;
        }
        if (r == OPARA_OK) r = opara__profile_times(run, n_nodes, runs++);
        timed_ns += opara__now_ns() - t0;
        if (r != OPARA_OK || runs % OPARA__PROFILE_RUNS != 0) continue;
        opara__profile_summarise(run, n_nodes, runs, rows, &sum);
        if (sum.n_unstable == 0 || runs + OPARA__PROFILE_RUNS > OPARA__PROFILE_MAX_RUNS || timed_ns >= OPARA__PROFILE_BUDGET_NS) break;
    }
    if (run->cupti) opara__cupti_stop(run->cupti); /* the warm-up failed */
    run->cupti = NULL;
    if (r != OPARA_OK) return r;
    if (sum.worst < n_nodes)
        opara__log(run->logger, OPARA_LOG_INFO, OPARA_LOGITEM_PLAN_SUMMARY,
                   "CUDA profiler: %d warm-up + %u timed runs (%.1f ms), per-node median; largest spread %.0f%% at node %u (%s)",
                   OPARA__PROFILE_WARMUP, runs, (double)timed_ns * 1e-6, sum.worst_spread * 100, sum.worst, g->nodes[sum.worst].name);
    if (sum.n_unstable)
        opara__log(run->logger, OPARA_LOG_WARN, OPARA_LOGITEM_PLAN_SUMMARY,
                   "CUDA profiler: %u node(s) still vary by more than %.0f%% (interquartile range / median) after %u timed "
                   "runs, most node %u (%s) by %.0f%%; the plan uses their medians",
                   sum.n_unstable, OPARA__PROFILE_SPREAD * 100, runs, sum.worst, g->nodes[sum.worst].name, sum.worst_spread * 100);
    return OPARA_OK;
}

OPARA__PRIVATE opara_result opara__cuda_profile_measure(opara_runtime* rt, opara__cuda_session* ps,
                                                       const opara__cuda_options* opt, const opara__graph* g,
                                                       opara__cuda_op_profile* rows) {
    opara__cuda_info info;
    opara__profile_run run;
    opara__cupti_sink sink;
    uint8_t* library_node;
    char why[1200];
    uint32_t n, n_nodes = g->n_nodes;
    int cupti = 0;
    opara_result r;
    opara__cuda_session_info(ps, &info);
    memcpy(rows, info.profile, (size_t)n_nodes * sizeof *rows);
    memset(&run, 0, sizeof run);
    memset(&sink, 0, sizeof sink);
    run.rt = sink.rt = rt;
    run.logger = opara__cuda_logger(rt, opt);
    run.cu = opara__cuda_session_driver(ps);
    run.begin = (opara_CUevent*)opara__calloc(rt, (size_t)n_nodes + 1, sizeof(opara_CUevent));
    run.end = (opara_CUevent*)opara__calloc(rt, (size_t)n_nodes + 1, sizeof(opara_CUevent));
    run.launched = (uint8_t*)opara__calloc(rt, (size_t)n_nodes + 1, 1);
    run.samples = (float*)opara__calloc(rt, ((size_t)n_nodes + 1) * OPARA__PROFILE_MAX_RUNS, sizeof(float));
    library_node = (uint8_t*)opara__calloc(rt, (size_t)n_nodes + 1, 1);
    r = run.begin && run.end && run.launched && run.samples && library_node
            ? OPARA_OK
            : opara__fail_to(&rt->error, run.logger, OPARA_ERR_OUT_OF_MEMORY, "CUDA profiler: out of host memory");
    for (n = 0; r == OPARA_OK && n < n_nodes; ++n) library_node[n] = rows[n].source == OPARA__CURES_ESTIMATE;
    if (r == OPARA_OK) r = opara__profile_events(&run, n_nodes, 1);
    if (r == OPARA_OK) {
        if ((cupti = opara__cupti_start(&sink, opt->cupti_path, info.n_launches, why, sizeof why)) != 0) run.cupti = &sink;
        else opara__log(run.logger, OPARA_LOG_INFO, OPARA_LOGITEM_BACKEND_FALLBACK,
                        "CUPTI not used (%s); library kernels keep the documented launch estimates", why);
        r = opara__profile_passes(&run, ps, g, rows);
    }
    if (r == OPARA_OK && cupti)
        opara__log(run.logger, OPARA_LOG_DEBUG, OPARA_LOGITEM_PLAN_SUMMARY,
                   "CUPTI: %u kernel records, %u library nodes described",
                   sink.n_kernels, opara__cupti_apply(&sink, library_node, n_nodes, rows));
    opara__cupti_free(&sink);
    if (run.begin && run.end) opara__profile_events(&run, n_nodes, 0);
    opara__free(rt, run.begin);
    opara__free(rt, run.end);
    opara__free(rt, run.launched);
    opara__free(rt, run.samples);
    opara__free(rt, library_node);
    return r;
}
