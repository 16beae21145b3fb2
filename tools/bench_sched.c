/* bench_sched: plan time, streams, events, waits and peak memory of every strategy, on the zoo
   models and on synthetic DAGs of 1k, 10k and 100k operators at a fixed width.

   usage: bench_sched [--zoo DIR] [--out FILE.json] [--quick]

   Plan time is opara__plan_create (launch order + streams + sync + memory, verifier off) with the
   shapes, sizes and descriptors computed beforehand: the median of repeated runs. Each plan is
   verified once, outside the timing. Anchors: Opara's Table I (Python, stream allocation only):
   Opara 0.27 ms GoogLeNet, 0.58 ms BERT, 1.75 ms NASNet; Nimble 5.80, 20.8, 257.83 ms. */
#define OPARA_IMPLEMENTATION
#include "../opara.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>

typedef struct bench_input {
    const char* name;
    opara__graph* g;
    uint64_t* bytes;
    opara__op_desc* descs;
    opara__shape* shapes;
} bench_input;

typedef struct bench_result {
    int ok;
    double median_us, min_us;
    opara__plan_stats stats;
    int verified;
    char error[256];
} bench_result;

static int cmp_double(const void* a, const void* b) {
    double x = *(const double*)a, y = *(const double*)b;
    return x < y ? -1 : x > y;
}

static bench_result bench_strategy(const bench_input* in, opara_strategy s, int verify) {
    enum { MAX_REPS = 41 };
    double times[MAX_REPS];
    bench_result r;
    opara__plan_desc d;
    opara__plan* p = NULL;
    int reps = 0;
    uint64_t spent = 0;
    memset(&r, 0, sizeof r);
    memset(&d, 0, sizeof d);
    d.strategy = s;
    d.shapes = in->shapes;
    while (reps < MAX_REPS && (reps < 5 || spent < 200000000ull)) {
        uint64_t t0 = opara__now_ns(), t1;
        if (opara__plan_create(in->g, in->bytes, in->descs, NULL, &d, &p) != OPARA_OK) {
            snprintf(r.error, sizeof r.error, "%.200s", opara_runtime_last_error(in->g->rt));
            return r;
        }
        t1 = opara__now_ns();
        times[reps++] = (double)(t1 - t0) / 1000.0;
        spent += t1 - t0;
        r.stats = p->stats;
        if (reps == 1 && verify) {
            opara_result v = opara__plan_verify(in->g, p);
            r.verified = v == OPARA_OK ? 1 : -1;
            if (v != OPARA_OK) snprintf(r.error, sizeof r.error, "verify: %.200s", opara_runtime_last_error(in->g->rt));
        }
        opara__plan_free(in->g->rt, p);
        if (spent > 2000000000ull) break; /* a slow strategy on a big graph: a few runs are enough */
    }
    qsort(times, (size_t)reps, sizeof(double), cmp_double);
    r.median_us = times[reps / 2];
    r.min_us = times[0];
    r.ok = 1;
    return r;
}

/* Synthetic DAG: node 0 reads the graph input, node i > 0 reads 1..3 of the previous `width`
   nodes' outputs, every output 1..64 KiB; the last node's output is the graph output (other
   sinks are dead values, written and never read). */
static int synthetic(opara_runtime* rt, opara__graph* g, uint32_t n, uint32_t width, uint64_t seed) {
    uint64_t s = seed;
    uint32_t i, k;
    int32_t x, ins[3];
    char name[32];
    opara__shape sh;
    uint8_t* used = (uint8_t*)calloc(n + 1, 1);
    int32_t* out = (int32_t*)calloc(n + 1, sizeof(int32_t));
    if (!used || !out) return 0;
    opara__graph_init(g, rt);
    memset(&sh, 0, sizeof sh);
    sh.ndim = 2;
    sh.dims[0] = 1;
    sh.dims[1] = 256;
    x = opara__graph_add_value(g, "x", OPARA_DTYPE_F32, &sh);
    opara__graph_add_input(g, x);
    for (i = 0; i < n; ++i) {
        uint32_t want, got = 0;
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        want = i == 0 ? 0 : 1 + (uint32_t)((s >> 33) % 3);
        for (k = 0; k < want; ++k) {
            uint32_t lo = i > width ? i - width : 0, p, d;
            int dup = 0;
            s = s * 6364136223846793005ULL + 1442695040888963407ULL;
            p = lo + (uint32_t)((s >> 33) % (i - lo));
            for (d = 0; d < got; ++d) dup |= ins[d] == out[p];
            if (!dup) ins[got++] = out[p], used[p] = 1;
        }
        if (!got) ins[got++] = x;
        snprintf(name, sizeof name, "v%u", i);
        sh.dims[1] = 256 * (int64_t)(1 + (s >> 20) % 64);
        if (got > 1) sh.dims[1] = g->values[ins[0]].shape.dims[1];
        out[i] = opara__graph_add_value(g, name, OPARA_DTYPE_F32, &sh);
        snprintf(name, sizeof name, "n%u", i);
        opara__graph_add_node(g, got > 1 ? OPARA__OP_ADD : (s >> 40) % 3 ? OPARA__OP_CONV : OPARA__OP_RELU, name, got,
                              ins, 1, &out[i]);
    }
    opara__graph_add_output(g, out[n - 1]);
    free(used);
    free(out);
    return opara__graph_finalize(g) == OPARA_OK;
}

static int prepare(bench_input* in, const opara__device* dev, int declared_shapes) {
    const opara__graph* g = in->g;
    uint32_t v;
    in->shapes = (opara__shape*)calloc(g->n_values + 1, sizeof(opara__shape));
    in->bytes = (uint64_t*)calloc(g->n_values + 1, sizeof(uint64_t));
    in->descs = (opara__op_desc*)calloc(g->n_nodes + 1, sizeof(opara__op_desc));
    if (!in->shapes || !in->bytes || !in->descs) return 0;
    if (declared_shapes) {
        for (v = 0; v < g->n_values; ++v) in->shapes[v] = g->values[v].shape;
    } else if (opara__infer_shapes(g->rt, g, 1, in->shapes) != OPARA_OK) {
        return 0;
    }
    return opara__value_bytes_from_shapes(g, in->shapes, in->bytes) == OPARA_OK &&
           opara__describe_ops(g, in->shapes, dev, in->descs) == OPARA_OK;
}

static void release(bench_input* in) {
    free(in->shapes);
    free(in->bytes);
    free(in->descs);
}

static void emit_results(FILE* f, const bench_input* in, const char* kind, uint32_t width, int first) {
    int s;
    bench_result res[OPARA_STRATEGY_COUNT];
    uint64_t seq_peak = 0;
    fprintf(f, "%s\n    {\"name\": \"%s\", \"kind\": \"%s\", \"ops\": %u, \"values\": %u", first ? "" : ",", in->name, kind,
            in->g->n_nodes, in->g->n_values);
    if (width) fprintf(f, ", \"width\": %u", width);
    fprintf(f, ", \"strategies\": {");
    for (s = 0; s < OPARA_STRATEGY_COUNT; ++s) {
        int skip = s == OPARA_STRATEGY_NIMBLE && in->g->n_nodes > 20000;
        int verify = in->g->n_nodes <= 20000;
        if (skip) {
            memset(&res[s], 0, sizeof res[s]);
            snprintf(res[s].error, sizeof res[s].error, "skipped: O(V^2) transitive closure");
        } else {
            res[s] = bench_strategy(in, (opara_strategy)s, verify);
        }
        if (s == OPARA_STRATEGY_SEQUENTIAL && res[s].ok) seq_peak = res[s].stats.arena_bytes;
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
                "\"plan_us_median\": %.2f, \"plan_us_min\": %.2f, \"streams\": %u, \"events\": %u, \"waits\": %u, "
                "\"pruned_waits\": %u, \"cross_edges\": %u, \"forks\": %u, \"joins\": %u, \"peak_bytes\": %llu, "
                "\"no_reuse_bytes\": %llu, \"peak_vs_sequential\": %.4f, \"inplace\": %u, \"concat_in_place\": %u, "
                "\"views\": %u, \"verified\": %s",
                r->median_us, r->min_us, r->stats.n_streams, r->stats.n_events, r->stats.n_waits, r->stats.n_pruned_waits,
                r->stats.n_cross_edges, r->stats.n_forks, r->stats.n_joins, (unsigned long long)r->stats.arena_bytes,
                (unsigned long long)r->stats.no_reuse_bytes,
                seq_peak ? (double)r->stats.arena_bytes / (double)seq_peak : 0.0, r->stats.n_inplace,
                r->stats.n_concat_in_place, r->stats.n_views,
                r->verified == 1 ? "true" : r->verified == -1 ? "false" : "null");
        if (r->verified == -1) fprintf(f, ", \"error\": \"verification failed\"");
        fprintf(f, "}");
        if (getenv("BENCH_SCHED_PHASES"))
            fprintf(stderr, "    phases (last run): order %.1f us, streams %.1f us, sync %.1f us, memory %.1f us\n",
                    (double)r->stats.order_ns / 1e3, (double)r->stats.streams_ns / 1e3, (double)r->stats.sync_ns / 1e3,
                    (double)r->stats.memory_ns / 1e3);
        fprintf(stderr, "  %-22s %-11s %10.1f us  streams %5u  events %5u  waits %6u  peak %11llu B (%.3fx seq)%s\n",
                in->name, opara_strategy_name((opara_strategy)s), r->median_us, r->stats.n_streams, r->stats.n_events,
                r->stats.n_waits, (unsigned long long)r->stats.arena_bytes,
                seq_peak ? (double)r->stats.arena_bytes / (double)seq_peak : 0.0,
                r->verified == -1 ? "  VERIFY FAILED" : "");
    }
    fprintf(f, "\n    }}");
}

static int by_name(const void* a, const void* b) { return strcmp(*(char* const*)a, *(char* const*)b); }

static int bench_zoo(FILE* f, const char* dir, const opara__device* dev, int first) {
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
        memset(&onnx, 0, sizeof onnx);
        onnx.default_dim = 320; /* PP-OCR's symbolic image height and width */
        if (opara_model_load_onnx_file(rt, path, &onnx, &m) != OPARA_OK) {
            fprintf(stderr, "  %-22s load failed: %s\n", names[i], opara_runtime_last_error(rt));
        } else {
            in.g = (opara__graph*)opara__model_graph(m);
            if (prepare(&in, dev, 0)) {
                emit_results(f, &in, "zoo", 0, first);
                first = 0;
            } else {
                fprintf(stderr, "  %-22s shapes failed: %s\n", names[i], opara_runtime_last_error(rt));
            }
            release(&in);
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
    const opara__device* dev = opara__device_default();
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
    fprintf(f, "{\n  \"device\": \"%s\",\n  \"note\": \"plan time = opara__plan_create (order + streams + sync + memory, "
               "verifier off), median of repeats; shapes/descriptors precomputed\",\n",
            dev->name);
    fprintf(f, "  \"anchors_table1_python_ms\": {\"opara\": {\"googlenet\": 0.27, \"bert\": 0.58, \"nasnet\": 1.75, "
               "\"inception_v3\": 0.50, \"t5\": 2.8}, \"nimble\": {\"googlenet\": 5.80, \"bert\": 20.8, \"nasnet\": 257.83, "
               "\"inception_v3\": 14.40, \"t5\": 161.4}},\n");
    fprintf(f, "  \"targets\": {\"opara_googlenet_us\": 50, \"opara_100k_ms\": 100, \"peak_vs_sequential\": 1.15},\n");
    fprintf(f, "  \"results\": [");
    fprintf(stderr, "bench_sched (device %s)\n", dev->name);
    if (strcmp(zoo, "none") != 0) first = bench_zoo(f, zoo, dev, first);
    for (i = 0; i < (quick ? 2u : n_sizes) && i < 3u; ++i) {
        opara_runtime* rt = NULL;
        opara__graph g;
        bench_input in;
        char name[64];
        snprintf(name, sizeof name, "synthetic_%uk_w%u", sizes[i] / 1000, width);
        memset(&in, 0, sizeof in);
        in.name = name;
        opara_runtime_create(NULL, &rt);
        if (synthetic(rt, &g, sizes[i], width, 12345 + i)) {
            in.g = &g;
            if (prepare(&in, dev, 1)) {
                emit_results(f, &in, "synthetic", width, first);
                first = 0;
            }
            release(&in);
        }
        opara__graph_free(&g);
        opara_runtime_destroy(rt);
    }
    fprintf(f, "\n  ]\n}\n");
    fclose(f);
    fprintf(stderr, "wrote %s\n", out_path);
    return 0;
}
