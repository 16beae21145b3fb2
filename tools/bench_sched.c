/* bench_sched: plan time, streams, events, waits and peak memory of every strategy, on the zoo
   models and on synthetic DAGs of 1k, 10k and 100k operators at a fixed width.

   usage: bench_sched [--zoo DIR] [--out FILE.json] [--quick]

   Plan time is the planner's own time (opara_plan_stats.plan_ns: launch order + streams + sync +
   memory, verifier off; shapes, sizes and descriptors not counted): the median of repeated runs. Each plan is
   verified once, outside the timing. Anchors: Opara's Table I (Python, stream allocation only):
   Opara 0.27 ms GoogLeNet, 0.58 ms BERT, 1.75 ms NASNet; Nimble 5.80, 20.8, 257.83 ms. */
#if !defined(_POSIX_C_SOURCE) && !defined(_GNU_SOURCE)
#  define _POSIX_C_SOURCE 200809L /* strdup, dirent: also when the library is linked from elsewhere */
#endif
#define OPARA_IMPLEMENTATION
#include "../opara.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>

/* A zoo model, or a synthetic DAG planned as declared (opara_plan_create_declared): its tensors
   keep the sizes the generator gave them, its operators need not be runnable. */
typedef struct bench_input {
    const char* name;
    const opara_model* model;
    opara_builder* builder;
    uint32_t n_nodes, n_values;
} bench_input;

static opara_result bench_plan(const bench_input* in, const opara_plan_desc* d, opara_plan** out) {
    return in->model ? opara_plan_create(in->model, d, out) : opara_plan_create_declared(in->builder, d, out);
}

typedef struct bench_result {
    int ok;
    double median_us, min_us;
    opara_plan_stats stats;
    int verified;
    uint64_t peak_align64; /* arena of the same plan with 64-byte alignment */
    double sim_us;         /* simulated latency (graph mode, rtx2080s), 0 when not simulated */
    char error[256];
} bench_result;

/* The extra rows: what the timeline-guided memory sync gives (plan, simulate, plan again with the
   simulated start/end of every op so blocks move to ops that start after the old readers end). */
typedef struct bench_extra {
    int ok;
    uint64_t peak, peak_align64;
    uint64_t live; /* most bytes live at once on the simulated timeline (the plan's blocks, aligned) */
    double sim_us;
    uint32_t waits, memory_waits;
} bench_extra;

static opara_sim_device g_sim_dev;
static int g_have_sim;

static opara_runtime* g_rt;

/* Simulated latency of plan p; when start/end are given, they receive each node's times. */
static double bench_simulate(const opara_plan* p, double* start, double* end) {
    opara_sim_result r;
    uint32_t i, node;
    double us;
    if (!g_have_sim || opara_plan_simulate(p, &g_sim_dev, OPARA_SIM_GRAPH, &r) != OPARA_OK) return 0;
    us = r.makespan_us;
    for (i = 0; start && i < r.n_ops; ++i) {
        if (opara_plan_node_at(p, i, &node) != OPARA_OK) continue;
        start[node] = r.ops[i].start_us;
        end[node] = r.ops[i].end_us;
    }
    opara_sim_result_free(g_rt, &r);
    return us;
}

static opara_plan_stats bench_stats(const opara_plan* p) {
    opara_plan_stats st;
    memset(&st, 0, sizeof st);
    opara_plan_get_stats(p, &st);
    return st;
}

static uint64_t bench_peak(const bench_input* in, const opara_plan_desc* base, uint32_t alignment) {
    opara_plan_desc d = *base;
    opara_plan* p = NULL;
    uint64_t peak = 0;
    d.alignment = alignment;
    d.verify = 0;
    if (bench_plan(in, &d, &p) == OPARA_OK) peak = bench_stats(p).arena_bytes;
    opara_plan_destroy(p);
    return peak;
}

typedef struct live_event {
    double t;
    int64_t delta;
} live_event;

static int live_cmp(const void* a, const void* b) {
    const live_event* x = (const live_event*)a;
    const live_event* y = (const live_event*)b;
    if (x->t != y->t) return x->t < y->t ? -1 : 1;
    return (x->delta > 0) - (y->delta > 0); /* an end before a start at the same time */
}

/* The blocks' lifetimes on the timeline: from[r]..to[r] per storage root r (to < 0: not in the arena). */
static void timeline_spans(const opara_plan* p, const opara_plan_tensor* t, const double* start, const double* end,
                           double* from, double* to) {
    uint32_t v, n, k, n_values = opara_plan_tensor_count(p);
    opara_plan_node nd;
    int32_t x;
    for (v = 0; v < n_values; ++v) from[v] = 1e300, to[v] = -1;
    for (v = 0; v < n_values; ++v) {
        int32_t r = t[v].alias_root, w = t[v].producer;
        if (t[v].storage != OPARA_STORAGE_ARENA || w < 0) continue;
        if (start[w] < from[r]) from[r] = start[w];
        if (end[w] > to[r]) to[r] = end[w];
    }
    for (n = 0; n < opara_plan_node_count(p); ++n) /* readers keep their inputs' blocks to their end */
        for (k = 0; opara_plan_get_node(p, n, &nd) == OPARA_OK && k < nd.n_inputs; ++k)
            if (opara_plan_node_input(p, n, k, &x) == OPARA_OK && x >= 0 && t[x].storage == OPARA_STORAGE_ARENA &&
                end[n] > to[t[x].alias_root])
                to[t[x].alias_root] = end[n];
    for (v = 0; v < n_values; ++v)
        if (t[v].is_output && t[v].storage == OPARA_STORAGE_ARENA) to[t[v].alias_root] = 1e300;
}

/* Most bytes live at once on a timeline: each block from its first writer's start to its last
   reader's end (graph outputs to the end), sizes aligned like the plan's. No arena for this
   timeline and these aliases can be smaller. */
static uint64_t timeline_live(const opara_plan* p, const double* start, const double* end) {
    uint32_t v, k, n = 0, n_values = opara_plan_tensor_count(p);
    opara_plan_tensor* t = (opara_plan_tensor*)calloc(n_values + 1, sizeof(opara_plan_tensor));
    double* from = (double*)calloc(n_values + 1, sizeof(double));
    double* to = (double*)calloc(n_values + 1, sizeof(double));
    live_event* ev = (live_event*)calloc(2 * (size_t)n_values + 1, sizeof(live_event));
    uint64_t a = bench_stats(p).alignment;
    int64_t cur = 0, best = 0;
    if (!t || !from || !to || !ev) goto done;
    for (v = 0; v < n_values; ++v) opara_plan_get_tensor(p, v, &t[v]);
    timeline_spans(p, t, start, end, from, to);
    for (v = 0; v < n_values; ++v) {
        uint64_t size = t[v].bytes ? t[v].bytes : 1;
        if (to[v] < 0 || t[v].alias_root != (int32_t)v) continue;
        size = (size + a - 1) / a * a;
        ev[n].t = from[v], ev[n++].delta = (int64_t)size;
        ev[n].t = to[v], ev[n++].delta = -(int64_t)size;
    }
    qsort(ev, n, sizeof(live_event), live_cmp);
    for (k = 0; k < n; ++k) {
        cur += ev[k].delta;
        if (cur > best) best = cur;
    }
done:
    free(t);
    free(from);
    free(to);
    free(ev);
    return (uint64_t)best;
}

static bench_extra bench_timeline(const bench_input* in, int verify) {
    bench_extra x;
    opara_plan_desc d;
    opara_plan *p = NULL, *q = NULL;
    double* start = (double*)calloc(in->n_nodes + 1, sizeof(double));
    double* end = (double*)calloc(in->n_nodes + 1, sizeof(double));
    memset(&x, 0, sizeof x);
    memset(&d, 0, sizeof d);
    d.strategy = OPARA_STRATEGY_OPARA;
    d.no_memory_sync = 1; /* the timeline of the plan without memory waits */
    if (start && end && g_have_sim && bench_plan(in, &d, &p) == OPARA_OK && bench_simulate(p, start, end) > 0) {
        x.live = timeline_live(p, start, end);
        d.no_memory_sync = 0;
        d.est_start_us = start;
        d.est_end_us = end;
        d.verify = verify;
        if (bench_plan(in, &d, &q) == OPARA_OK) {
            opara_plan_stats st = bench_stats(q);
            x.ok = 1;
            x.peak = st.arena_bytes;
            x.waits = st.n_waits;
            x.memory_waits = st.n_memory_waits;
            x.sim_us = bench_simulate(q, NULL, NULL);
            x.peak_align64 = bench_peak(in, &d, 64);
        }
    }
    opara_plan_destroy(p);
    opara_plan_destroy(q);
    free(start);
    free(end);
    return x;
}

/* The Opara plan under a memory budget (ratio of the sequential arena; docs/SCHEDULING.md). */
typedef struct bench_budget {
    int ok, verified;
    double ratio;
    uint64_t peak, budget, live;
    double sim_us, plan_us;
    uint32_t waits, memory_waits, streams;
    int topo; /* the budget fell back to the topological launch order */
} bench_budget;

static bench_budget bench_budgeted(const bench_input* in, double ratio, int verify) {
    bench_budget b;
    opara_plan_desc d;
    opara_plan* p = NULL;
    opara_plan_stats st;
    uint64_t spent = 0;
    int reps;
    memset(&b, 0, sizeof b);
    memset(&d, 0, sizeof d);
    b.ratio = ratio;
    d.strategy = OPARA_STRATEGY_OPARA;
    d.memory_budget = ratio;
    for (reps = 0; reps < 5 && spent < 200000000ull; ++reps) { /* plan time: the fastest of up to 5 runs */
        uint64_t t;
        opara_plan_destroy(p);
        p = NULL;
        if (bench_plan(in, &d, &p) != OPARA_OK) return b;
        t = bench_stats(p).plan_ns;
        spent += t;
        if (!reps || (double)t / 1000.0 < b.plan_us) b.plan_us = (double)t / 1000.0;
    }
    st = bench_stats(p);
    b.ok = 1;
    b.peak = st.arena_bytes;
    b.budget = st.budget_bytes;
    b.live = st.live_bytes;
    b.waits = st.n_waits;
    b.memory_waits = st.n_memory_waits;
    b.streams = st.n_streams;
    b.topo = st.launch_order == OPARA_LAUNCH_TOPO;
    if (verify) {
        b.verified = opara_plan_verify(p) == OPARA_OK ? 1 : -1;
        b.sim_us = bench_simulate(p, NULL, NULL);
    }
    opara_plan_destroy(p);
    return b;
}

static int cmp_double(const void* a, const void* b) {
    double x = *(const double*)a, y = *(const double*)b;
    return x < y ? -1 : x > y;
}

static bench_result bench_strategy(const bench_input* in, opara_strategy s, int verify) {
    enum { MAX_REPS = 41 };
    double times[MAX_REPS];
    bench_result r;
    opara_plan_desc d;
    opara_plan* p = NULL;
    int reps = 0;
    uint64_t spent = 0;
    memset(&r, 0, sizeof r);
    memset(&d, 0, sizeof d);
    d.strategy = s;
    while (reps < MAX_REPS && (reps < 5 || spent < 200000000ull)) {
        uint64_t t;
        if (bench_plan(in, &d, &p) != OPARA_OK) {
            snprintf(r.error, sizeof r.error, "%.200s", opara_runtime_last_error(g_rt));
            return r;
        }
        r.stats = bench_stats(p);
        t = r.stats.plan_ns;
        times[reps++] = (double)t / 1000.0;
        spent += t;
        if (reps == 1 && verify) {
            opara_result v = opara_plan_verify(p);
            r.verified = v == OPARA_OK ? 1 : -1;
            if (v != OPARA_OK) snprintf(r.error, sizeof r.error, "verify: %.200s", opara_runtime_last_error(g_rt));
        }
        if (reps == 1) {
            r.peak_align64 = bench_peak(in, &d, 64);
            if (verify) r.sim_us = bench_simulate(p, NULL, NULL);
        }
        opara_plan_destroy(p);
        if (spent > 2000000000ull) break; /* a slow strategy on a big graph: a few runs are enough */
    }
    qsort(times, (size_t)reps, sizeof(double), cmp_double);
    r.median_us = times[reps / 2];
    r.min_us = times[0];
    r.ok = 1;
    return r;
}

/* Synthetic DAG: node 0 reads the graph input, node i > 0 reads 1..3 of the previous `width`
   nodes' outputs, every output 1..64 KiB; the last node's output is the graph output. Other sinks
   are dead values, written and never read (about 13% of the nodes at width 32: they form an
   antichain, so the happens-before order needs at least that many chains and the planner's
   bounded clocks cannot stay exact). With no_dead, a value about to leave the window unread is
   read by the next node and the last unread ones are graph outputs: no dead values, as in a real
   model after dead-code elimination. */
static int synthetic(opara_builder* b, uint32_t n, uint32_t width, uint64_t seed, int no_dead) {
    uint64_t s = seed;
    uint32_t i, k;
    int32_t ins[3]; /* the producing nodes, -1 for the graph input x */
    int64_t dims[2] = {1, 256};
    char name[32], node[32], in_names[3][32];
    const char* in_ptrs[3] = {in_names[0], in_names[1], in_names[2]};
    const char* out_ptr[1] = {name};
    uint8_t* used = (uint8_t*)calloc(n + 1, 1);
    int64_t* width_of = (int64_t*)calloc(n + 1, sizeof(int64_t)); /* dim 1 of each node's output */
    opara_result r;
    if (!used || !width_of) return 0;
    opara_builder_add_input(b, "x", OPARA_DTYPE_F32, 2, dims);
    for (i = 0; i < n; ++i) {
        uint32_t want, got = 0;
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        want = i == 0 ? 0 : 1 + (uint32_t)((s >> 33) % 3);
        if (no_dead && i >= width && !used[i - width]) {
            ins[got++] = (int32_t)(i - width);
            used[i - width] = 1;
            want--;
        }
        for (k = 0; k < want; ++k) {
            uint32_t lo = i > width ? i - width : 0, p, d;
            int dup = 0;
            s = s * 6364136223846793005ULL + 1442695040888963407ULL;
            p = lo + (uint32_t)((s >> 33) % (i - lo));
            for (d = 0; d < got; ++d) dup |= ins[d] == (int32_t)p;
            if (!dup) ins[got++] = (int32_t)p, used[p] = 1;
        }
        if (!got) ins[got++] = -1;
        for (k = 0; k < got; ++k) {
            if (ins[k] < 0) snprintf(in_names[k], sizeof in_names[k], "x");
            else snprintf(in_names[k], sizeof in_names[k], "v%d", (int)ins[k]);
        }
        dims[1] = 256 * (int64_t)(1 + (s >> 20) % 64);
        if (got > 1) dims[1] = ins[0] < 0 ? 256 : width_of[ins[0]];
        width_of[i] = dims[1];
        snprintf(name, sizeof name, "v%u", i);
        snprintf(node, sizeof node, "n%u", i);
        opara_builder_declare(b, name, OPARA_DTYPE_F32, 2, dims);
        opara_builder_add_node(b, got > 1 ? "Add" : (s >> 40) % 3 ? "Conv" : "Relu", node, got, in_ptrs, 1, out_ptr, 0, NULL);
    }
    snprintf(name, sizeof name, "v%u", n - 1);
    r = opara_builder_add_output(b, name);
    for (i = n > width ? n - width : 0; no_dead && i + 1 < n; ++i)
        if (!used[i]) {
            snprintf(name, sizeof name, "v%u", i);
            r = opara_builder_add_output(b, name);
        }
    free(used);
    free(width_of);
    return r == OPARA_OK; /* the builder's errors are sticky: its last call returns the first */
}

/* One line of the closing summary table. */
typedef struct bench_row {
    char name[48];
    uint32_t ops;
    uint64_t seq_peak, seq_peak64;
    double ratio[OPARA_STRATEGY_COUNT], ratio64_opara, plan_us[OPARA_STRATEGY_COUNT];
    double sim_seq, sim_opara, sim_timeline;
    int have_timeline;
    double timeline_ratio, timeline_ratio64, live_ratio;
    bench_budget budget;
} bench_row;

static bench_row g_rows[64];
static int g_n_rows;

static double bench_ratio(uint64_t a, uint64_t b) { return b ? (double)a / (double)b : 0.0; }

static void print_summary(void) {
    int i, s;
    fprintf(stderr, "\nsummary: peak memory vs the sequential plan (same alignment), plan time (median us), simulated latency "
                    "(graph mode, rtx2080s, us)\n");
    fprintf(stderr, "%-20s %7s %10s |", "model", "ops", "seq peak");
    for (s = 0; s < OPARA_STRATEGY_COUNT; ++s) fprintf(stderr, " %10.10s", opara_strategy_name((opara_strategy)s));
    fprintf(stderr, " | opara@64 +timeline @64  live | plan us opara  seq | sim seq   opara +timeline | budget  peak   sim     (+%%)  order\n");
    for (i = 0; i < g_n_rows; ++i) {
        const bench_row* r = &g_rows[i];
        fprintf(stderr, "%-20s %7u %10llu |", r->name, r->ops, (unsigned long long)r->seq_peak);
        for (s = 0; s < OPARA_STRATEGY_COUNT; ++s) fprintf(stderr, " %9.3fx", r->ratio[s]);
        fprintf(stderr, " | %7.3fx", r->ratio64_opara);
        if (r->have_timeline) fprintf(stderr, " %7.3fx %6.3fx %5.3fx", r->timeline_ratio, r->timeline_ratio64, r->live_ratio);
        else fprintf(stderr, " %8s %7s %6s", "-", "-", "-");
        fprintf(stderr, " | %13.1f %6.1f |", r->plan_us[OPARA_STRATEGY_OPARA], r->plan_us[OPARA_STRATEGY_SEQUENTIAL]);
        if (r->sim_seq > 0) fprintf(stderr, " %7.1f %7.1f %9.1f", r->sim_seq, r->sim_opara, r->sim_timeline);
        if (r->budget.ok)
            fprintf(stderr, " | %5.2fx %5.3fx %7.1f %+6.1f%% %s%s", r->budget.ratio, bench_ratio(r->budget.peak, r->seq_peak),
                    r->budget.sim_us, r->sim_opara > 0 ? 100.0 * (r->budget.sim_us / r->sim_opara - 1.0) : 0.0,
                    r->budget.topo ? "topo" : "alg2", r->budget.verified == -1 ? " VERIFY FAILED" : "");
        fprintf(stderr, "\n");
    }
}

static void emit_results(FILE* f, const bench_input* in, const char* kind, uint32_t width, int first) {
    int s;
    bench_result res[OPARA_STRATEGY_COUNT];
    bench_extra tl;
    bench_budget bud;
    bench_row* row = g_n_rows < 64 ? &g_rows[g_n_rows++] : NULL;
    uint64_t seq_peak = 0, seq_peak64 = 0;
    fprintf(f, "%s\n    {\"name\": \"%s\", \"kind\": \"%s\", \"ops\": %u, \"values\": %u", first ? "" : ",", in->name, kind,
            in->n_nodes, in->n_values);
    if (width) fprintf(f, ", \"width\": %u", width);
    fprintf(f, ", \"strategies\": {");
    for (s = 0; s < OPARA_STRATEGY_COUNT; ++s) {
        int skip = s == OPARA_STRATEGY_NIMBLE && in->n_nodes > 20000;
        int verify = in->n_nodes <= 20000;
        if (skip) {
            memset(&res[s], 0, sizeof res[s]);
            snprintf(res[s].error, sizeof res[s].error, "skipped: O(V^2) transitive closure");
        } else {
            res[s] = bench_strategy(in, (opara_strategy)s, verify);
        }
        if (s == OPARA_STRATEGY_SEQUENTIAL && res[s].ok) seq_peak = res[s].stats.arena_bytes, seq_peak64 = res[s].peak_align64;
    }
    tl = bench_timeline(in, in->n_nodes <= 20000);
    bud = bench_budgeted(in, 1.15, in->n_nodes <= 20000);
    if (row) {
        memset(row, 0, sizeof *row);
        snprintf(row->name, sizeof row->name, "%s", in->name);
        row->ops = in->n_nodes;
        row->seq_peak = seq_peak;
        row->seq_peak64 = seq_peak64;
        for (s = 0; s < OPARA_STRATEGY_COUNT; ++s) {
            row->ratio[s] = res[s].ok ? bench_ratio(res[s].stats.arena_bytes, seq_peak) : 0.0;
            row->plan_us[s] = res[s].ok ? res[s].median_us : 0.0;
        }
        row->ratio64_opara = bench_ratio(res[OPARA_STRATEGY_OPARA].peak_align64, seq_peak64);
        row->sim_seq = res[OPARA_STRATEGY_SEQUENTIAL].sim_us;
        row->sim_opara = res[OPARA_STRATEGY_OPARA].sim_us;
        row->have_timeline = tl.ok;
        row->timeline_ratio = bench_ratio(tl.peak, seq_peak);
        row->timeline_ratio64 = bench_ratio(tl.peak_align64, seq_peak64);
        row->sim_timeline = tl.sim_us;
        row->live_ratio = bench_ratio(tl.live, seq_peak);
        row->budget = bud;
    }
    for (s = 0; s < OPARA_STRATEGY_COUNT; ++s) {
        const bench_result* r = &res[s];
        fprintf(f, "%s\n      \"%s\": {", s ? "," : "", opara_strategy_name((opara_strategy)s));
        if (!r->ok) {
            fprintf(f, "\"error\": \"%s\"}", r->error);
            fprintf(stderr, "  %-22s %-11s %s\n", in->name, opara_strategy_name((opara_strategy)s), r->error);
            continue;
        }
        fprintf(f,
                "\"plan_us_median\": %.2f, \"plan_us_min\": %.2f, \"streams\": %u, \"lanes\": %u, \"events\": %u, \"waits\": %u, "
                "\"pruned_waits\": %u, \"cross_edges\": %u, \"forks\": %u, \"joins\": %u, \"peak_bytes\": %llu, "
                "\"no_reuse_bytes\": %llu, \"peak_vs_sequential\": %.4f, \"inplace\": %u, \"concat_in_place\": %u, "
                "\"views\": %u, \"peak_bytes_align64\": %llu, \"peak_vs_sequential_align64\": %.4f, "
                "\"sim_latency_us\": %.2f, \"verified\": %s",
                r->median_us, r->min_us, r->stats.n_streams, r->stats.n_lanes, r->stats.n_events, r->stats.n_waits,
                r->stats.n_pruned_waits, r->stats.n_cross_edges, r->stats.n_forks, r->stats.n_joins, (unsigned long long)r->stats.arena_bytes,
                (unsigned long long)r->stats.no_reuse_bytes,
                seq_peak ? (double)r->stats.arena_bytes / (double)seq_peak : 0.0, r->stats.n_inplace,
                r->stats.n_concat_in_place, r->stats.n_views, (unsigned long long)r->peak_align64,
                bench_ratio(r->peak_align64, seq_peak64), r->sim_us,
                r->verified == 1 ? "true" : r->verified == -1 ? "false" : "null");
        if (r->verified == -1) fprintf(f, ", \"error\": \"verification failed\"");
        fprintf(f, "}");
        if (getenv("BENCH_SCHED_PHASES"))
            fprintf(stderr, "    phases (last run): order %.1f us, streams %.1f us, sync %.1f us, memory %.1f us\n",
                    (double)r->stats.order_ns / 1e3, (double)r->stats.streams_ns / 1e3, (double)r->stats.sync_ns / 1e3,
                    (double)r->stats.memory_ns / 1e3);
        fprintf(stderr, "  %-22s %-11s %10.1f us  streams %5u  lanes %5u  events %5u  waits %6u  peak %11llu B (%.3fx seq)%s\n",
                in->name, opara_strategy_name((opara_strategy)s), r->median_us, r->stats.n_streams, r->stats.n_lanes, r->stats.n_events,
                r->stats.n_waits, (unsigned long long)r->stats.arena_bytes,
                seq_peak ? (double)r->stats.arena_bytes / (double)seq_peak : 0.0,
                r->verified == -1 ? "  VERIFY FAILED" : "");
    }
    if (tl.ok)
        fprintf(f,
                ",\n      \"opara+timeline\": {\"peak_bytes\": %llu, \"peak_vs_sequential\": %.4f, \"peak_bytes_align64\": %llu, "
                "\"peak_vs_sequential_align64\": %.4f, \"waits\": %u, \"memory_waits\": %u, \"sim_latency_us\": %.2f, "
                "\"timeline_live_bytes\": %llu, \"timeline_live_vs_sequential\": %.4f}",
                (unsigned long long)tl.peak, bench_ratio(tl.peak, seq_peak), (unsigned long long)tl.peak_align64,
                bench_ratio(tl.peak_align64, seq_peak64), tl.waits, tl.memory_waits, tl.sim_us, (unsigned long long)tl.live,
                bench_ratio(tl.live, seq_peak));
    if (bud.ok)
        fprintf(f,
                ",\n      \"opara+budget\": {\"memory_budget\": %.3f, \"budget_bytes\": %llu, \"peak_bytes\": %llu, "
                "\"peak_vs_sequential\": %.4f, \"launch_order_live_bytes\": %llu, \"streams\": %u, \"waits\": %u, "
                "\"memory_waits\": %u, \"launch_order\": \"%s\", \"plan_us\": %.2f, \"sim_latency_us\": %.2f, "
                "\"sim_vs_opara\": %.4f, \"verified\": %s}",
                bud.ratio, (unsigned long long)bud.budget, (unsigned long long)bud.peak, bench_ratio(bud.peak, seq_peak),
                (unsigned long long)bud.live, bud.streams, bud.waits, bud.memory_waits, bud.topo ? "topo" : "alg2", bud.plan_us,
                bud.sim_us,
                res[OPARA_STRATEGY_OPARA].sim_us > 0 ? bud.sim_us / res[OPARA_STRATEGY_OPARA].sim_us : 0.0,
                bud.verified == 1 ? "true" : bud.verified == -1 ? "false" : "null");
    fprintf(f, "\n    }}");
}

static int by_name(const void* a, const void* b) { return strcmp(*(char* const*)a, *(char* const*)b); }

static int bench_zoo(FILE* f, const char* dir, int first) {
    DIR* d = opendir(dir);
    struct dirent* e;
    char* names[64];
    int n = 0, i;
    if (!d) {
        fprintf(stderr, "bench_sched: no zoo in %s (run `make zoo`)\n", dir);
        return first;
    }
    while ((e = readdir(d)) != NULL && n < 64) {
        size_t len = strlen(e->d_name);
        if (len > 5 && strcmp(e->d_name + len - 5, ".onnx") == 0) names[n++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof(char*), by_name);
    for (i = 0; i < n; ++i) {
        char path[1024];
        opara_runtime* rt = NULL;
        opara_model* m = NULL;
        opara_onnx_options onnx;
        bench_input in;
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        names[i][strlen(names[i]) - 5] = 0;
        memset(&in, 0, sizeof in);
        in.name = names[i];
        opara_runtime_create(NULL, &rt);
        g_rt = rt;
        memset(&onnx, 0, sizeof onnx);
        onnx.default_dim = 320; /* PP-OCR's symbolic image height and width */
        if (opara_model_load_onnx_file(rt, path, &onnx, &m) != OPARA_OK) {
            fprintf(stderr, "  %-22s load failed: %s\n", names[i], opara_runtime_last_error(rt));
        } else {
            opara_model_stats st;
            opara_plan* probe = NULL;
            opara_model_get_stats(m, &st);
            in.model = m;
            in.n_nodes = st.n_nodes;
            in.n_values = st.n_tensors;
            if (opara_plan_create(m, NULL, &probe) == OPARA_OK) {
                emit_results(f, &in, "zoo", 0, first);
                first = 0;
            } else {
                fprintf(stderr, "  %-22s shapes failed: %s\n", names[i], opara_runtime_last_error(rt));
            }
            opara_plan_destroy(probe);
        }
        opara_model_destroy(m);
        opara_runtime_destroy(rt);
        free(names[i]);
    }
    return first;
}

int main(int argc, char** argv) {
    const char* zoo = "build/zoo";
    const char* out_path = "build/bench/sched.json";
    static const uint32_t sizes[] = {1000, 10000, 100000};
    uint32_t width = 32, i, n_sizes = 3;
    int quick = 0, a, first = 1;
    FILE* f;
    for (a = 1; a < argc; ++a) {
        if (strcmp(argv[a], "--zoo") == 0 && a + 1 < argc) zoo = argv[++a];
        else if (strcmp(argv[a], "--out") == 0 && a + 1 < argc) out_path = argv[++a];
        else if (strcmp(argv[a], "--quick") == 0) quick = 1;
        else if (strcmp(argv[a], "--sizes") == 0 && a + 1 < argc) n_sizes = (uint32_t)atoi(argv[++a]);
        else {
            fprintf(stderr, "usage: bench_sched [--zoo DIR] [--out FILE.json] [--quick]\n");
            return 2;
        }
    }
    f = fopen(out_path, "w");
    if (!f) {
        fprintf(stderr, "bench_sched: cannot write %s\n", out_path);
        return 1;
    }
    g_have_sim = opara_sim_device_preset("rtx2080s", &g_sim_dev) == OPARA_OK; /* the planner's default device too */
    fprintf(f, "{\n  \"device\": \"%s\",\n  \"note\": \"plan time = the planner's own time, opara_plan_stats.plan_ns "
               "(order + streams + sync + memory, verifier off), median of repeats; shapes/descriptors not counted\",\n",
            g_sim_dev.name);
    fprintf(f, "  \"anchors_table1_python_ms\": {\"opara\": {\"googlenet\": 0.27, \"bert\": 0.58, \"nasnet\": 1.75, "
               "\"inception_v3\": 0.50, \"t5\": 2.8}, \"nimble\": {\"googlenet\": 5.80, \"bert\": 20.8, \"nasnet\": 257.83, "
               "\"inception_v3\": 14.40, \"t5\": 161.4}},\n");
    fprintf(f, "  \"targets\": {\"opara_googlenet_us\": 50, \"opara_100k_ms\": 100, \"peak_vs_sequential\": 1.15},\n");
    fprintf(f, "  \"results\": [");
    fprintf(stderr, "bench_sched (device %s)\n", g_sim_dev.name);
    if (strcmp(zoo, "none") != 0) first = bench_zoo(f, zoo, first);
    for (i = 0; i < 2u * ((quick ? 2u : n_sizes) < 3u ? (quick ? 2u : n_sizes) : 3u); ++i) {
        opara_runtime* rt = NULL;
        opara_builder* b = NULL;
        bench_input in;
        char name[64];
        uint32_t size = sizes[i / 2];
        int no_dead = (int)(i % 2);
        snprintf(name, sizeof name, "synthetic_%uk_w%u%s", size / 1000, width, no_dead ? "_nodead" : "");
        memset(&in, 0, sizeof in);
        in.name = name;
        opara_runtime_create(NULL, &rt);
        g_rt = rt;
        if (opara_builder_create(rt, &b) == OPARA_OK && synthetic(b, size, width, 12345 + i / 2, no_dead)) {
            in.builder = b;
            in.n_nodes = size;
            in.n_values = size + 1; /* x and every node's output */
            emit_results(f, &in, "synthetic", width, first);
            first = 0;
        }
        opara_builder_destroy(b);
        opara_runtime_destroy(rt);
    }
    fprintf(f, "\n  ]\n}\n");
    fclose(f);
    print_summary();
    fprintf(stderr, "wrote %s\n", out_path);
    return 0;
}
