/* bench_cpu: issue 5's CPU benchmark. Per model (.onnx or .opara) and batch size, with the same
   thread count for every contender: latency of our sequential plan, our Opara plan and ONNX
   Runtime (through tests/ort/ort_api.h; the column is skipped with the reason when the library is
   missing), runs interleaved round-robin so load changes hit all three alike; medians and mins,
   ratios against ORT, and memory (our arena peak with and without reuse; ORT's resident-set growth
   over session creation and its first runs, an approximation). Writes JSON.
   usage: bench_cpu [--out FILE.json] [--threads N] [--batches 1,8] [--budget SECONDS]
                    [--max-iters N] [--skip-batch8 a,b] [--default-dim N] [--profile] MODEL...
   --budget: measuring time per model and batch (split over the contenders; iterations follow
   from the warm-up latency plus the settling pauses, at least 3); --skip-batch8: models (file
   stem) measured at batch 1 only; --default-dim: value of symbolic non-batch dims (ppocr_det's
   image size); --profile: print where our time goes (per operator kind, min over the runs)
   instead of the ORT comparison. */
#define OPARA_IMPLEMENTATION
#include "../opara.h"
#include "../tests/ort/ort_api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

/* Deterministic input: floats in [-0.5, 0.5), integers 0 (valid ids and masks for every model). */
static void* bench_fill(opara_dtype dt, size_t count) {
    void* p = calloc(count ? count : 1, opara_dtype_size(dt));
    size_t i;
    if (p && dt == OPARA_DTYPE_F32)
        for (i = 0; i < count; ++i) ((float*)p)[i] = (float)((i * 7919u) % 1000u) / 1000.0f - 0.5f;
    return p;
}

static int bench_open_ours(bench_side* b, opara_runtime* rt, const opara_model* m, opara_strategy st, int64_t batch,
                           uint32_t threads) {
    opara_session_desc d;
    uint32_t k;
    memset(&d, 0, sizeof d);
    d.backend = OPARA_BACKEND_CPU;
    d.strategy = st;
    d.batch_size = batch;
    d.threads = threads;
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
    uint64_t t0 = opara__now_ns();
    if (!bench_run(b)) b->ok = 0;
    return opara__now_ns() - t0;
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
    if (b->s) opara_session_destroy(b->s);
}

static double bench_ms(uint64_t ns) { return (double)ns / 1e6; }
static uint64_t bench_median(bench_side* b) { return b->n_lat ? b->lat[b->n_lat / 2] : 0; }
static uint64_t bench_min(bench_side* b) { return b->n_lat ? b->lat[0] : 0; }

/* Per operator kind: sum over nodes of each node's minimum time over the runs. */
static void bench_profile(bench_side* b, const opara_model* m, int iters) {
    uint32_t nn = opara_model_node_count(m), k, i, nk = 0;
    opara_node_time* nt = (opara_node_time*)calloc(nn ? nn : 1, sizeof *nt);
    double* best = (double*)calloc(nn ? nn : 1, sizeof(double));
    const char* kinds[128];
    double sums[128], total = 0.0;
    int it;
    if (!nt || !best) return;
    for (k = 0; k < nn; ++k) best[k] = 1e300;
    for (it = 0; it < iters; ++it) {
        if (!bench_run(b)) break;
        opara_session_get_node_times(b->s, nt, nn);
        for (k = 0; k < nn; ++k) {
            double v = (double)(nt[k].end_ns - nt[k].start_ns);
            if (nt[k].node < nn && v < best[nt[k].node]) best[nt[k].node] = v;
        }
    }
    for (k = 0; k < nn; ++k) {
        const char* op = opara_model_node_op(m, k);
        for (i = 0; i < nk && strcmp(kinds[i], op) != 0; ++i) {
        }
        if (i == nk && nk < 128) {
            kinds[nk] = op;
            sums[nk++] = 0.0;
        }
        if (i < nk) sums[i] += best[k];
        total += best[k];
    }
    printf("  %s: sum of per-node minimum times %.2f ms\n", b->label, total / 1e6);
    for (i = 0; i < nk; ++i)
        printf("    %-22s %8.2f ms %5.1f%%\n", kinds[i], sums[i] / 1e6, total > 0 ? 100.0 * sums[i] / total : 0.0);
    free(nt);
    free(best);
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

/* Measures one model at one batch size; prints a line and appends a JSON object. */
static void bench_config(const bench_opts* o, opara_runtime* rt, const opara_model* m, const char* path,
                         const char* name, int64_t batch, ort_api* api, const char* ort_reason, FILE* out, int* first) {
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
        }
    for (i = 0; i < n_sides; ++i) qsort(side[i].lat, (size_t)side[i].n_lat, sizeof(uint64_t), bench_cmp);
    {
        uint64_t seq = bench_median(&side[0]), opa = bench_median(&side[1]), ort = n_sides == 3 ? bench_median(&side[2]) : 0;
        uint64_t best = seq < opa ? seq : opa;
        printf("%-17s b%-2lld seq %8.2f (min %8.2f)  opara %8.2f (min %8.2f) %3u str  ", name, (long long)batch,
               bench_ms(seq), bench_ms(bench_min(&side[0])), bench_ms(opa), bench_ms(bench_min(&side[1])),
               side[1].info.n_streams);
        if (ort)
            printf("ort %8.2f (min %8.2f)  best/ort %.2fx  opara/seq %.2fx  arena %.1f MB\n", bench_ms(ort),
                   bench_ms(bench_min(&side[2])), (double)best / (double)ort, (double)opa / (double)seq,
                   (double)side[1].info.peak_memory_bytes / 1048576.0);
        else
            printf("ort -- (%s)  opara/seq %.2fx\n", ort_note, (double)opa / (double)seq);
        fflush(stdout);
        fprintf(out,
                "%s  {\"model\": \"%s\", \"batch\": %lld, \"threads\": %u, \"runs\": %d, \"gemm\": \"%s\",\n"
                "   \"sequential_ms\": %.4f, \"sequential_min_ms\": %.4f, \"opara_ms\": %.4f, \"opara_min_ms\": %.4f,"
                " \"opara_streams\": %u, \"opara_vs_sequential\": %.4f,\n",
                *first ? "" : ",\n", name, (long long)batch, o->threads, iters, side[0].info.gemm, bench_ms(seq),
                bench_ms(bench_min(&side[0])), bench_ms(opa), bench_ms(bench_min(&side[1])), side[1].info.n_streams,
                (double)opa / (double)seq);
        if (ort)
            fprintf(out,
                    "   \"ort_ms\": %.4f, \"ort_min_ms\": %.4f, \"sequential_vs_ort\": %.4f, \"opara_vs_ort\": %.4f,"
                    " \"best_vs_ort\": %.4f,\n",
                    bench_ms(ort), bench_ms(bench_min(&side[2])), (double)seq / (double)ort, (double)opa / (double)ort,
                    (double)best / (double)ort);
        else
            fprintf(out, "   \"ort_ms\": null, \"ort_skipped\": \"%s\",\n", ort_note);
        fprintf(out,
                "   \"sequential_arena_bytes\": %llu, \"opara_arena_bytes\": %llu, \"no_reuse_bytes\": %llu,"
                " \"ort_rss_growth_mb\": %.1f}",
                (unsigned long long)side[0].info.peak_memory_bytes, (unsigned long long)side[1].info.peak_memory_bytes,
                (unsigned long long)side[1].info.no_reuse_bytes, n_sides == 3 ? side[2].rss_mb : 0.0);
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
    if (!o->threads) o->threads = (uint32_t)opara__cpu_count();
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
    if (i < 0) {
        fprintf(stderr, "usage: bench_cpu [--out F] [--threads N] [--batches 1,8] [--budget S] [--max-iters N]\n"
                        "                 [--skip-batch8 a,b] [--default-dim N] [--profile] MODEL...\n");
        return 2;
    }
    (void)ort_tensor_free; /* outputs are not copied out of ORT */
    if (opara_runtime_create(NULL, &rt) != OPARA_OK) return 1;
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
    fprintf(out, "{\"threads\": %u, \"budget_s\": %.1f, \"ort\": %s, \"batch8_skipped\": \"%s\", \"results\": [\n", o.threads,
            o.budget_s, have_ort ? "true" : "false", o.skip_batch8);
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
            bench_config(&o, rt, m, argv[i], name, o.batches[b], have_ort ? &api : NULL, ort_reason, out, &first);
        }
        opara_model_destroy(m);
    }
    fprintf(out, "\n]}\n");
    fclose(out);
    if (have_ort) ort_close(&api);
    opara_runtime_destroy(rt);
    return 0;
}
