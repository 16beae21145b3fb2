/* opara's CPU backend against ONNX Runtime on the model zoo.

   build/conformance/ort_compare [--zoo DIR] [--model NAME]... [--ort LIB] [--nmse-max X] [--threads N] [--work DIR]

   For every DIR/<name>.onnx with inputs DIR/<name>/input_<i>.pb (TensorProto files, batch 1):
   ONNX Runtime (dlopen'd C API, default graph optimizations, tests/ort/ort_api.h) and opara
   (the ONNX file imported directly, CPU backend, the sequential plan and the Opara plan) run on the
   same inputs. Per output and plan: max abs error and NMSE = sum((opara - ort)^2) / sum(ort^2).
   A (model, plan) passes when shapes and types agree and every output has NMSE <= --nmse-max
   (default 1e-8, what two correct fp32 implementations that differ only in summation order reach)
   and no NaN/Inf mismatch; an f16 output (an fp16 model) at NMSE <= 1e-6 (OC_F16_NMSE_MAX). Inputs whose symbolic dims are not the batch (ppocr_det's H and W) get
   their size from the input file. Ends with "N passed, N failed, N skipped".

   Known deviations of ONNX Runtime itself are listed in oc_deviations: such an output is checked
   against an exact reference computed here from ORT's own pre-activation tensor (exposed as an
   extra graph output in a rewritten copy of the model), and that tensor is checked against ORT. */
#define OPARA_IMPLEMENTATION
#include "opara.h"
#include "conf_util.h"
#include "ort/ort_api.h"

#include <dirent.h>
#include <stdlib.h>
#include <unistd.h>

#define OC_MAX_IO 16
#define OC_MAX_OUT 1024 /* outputs: debugging copies of a model may expose every intermediate tensor */

typedef struct oc_inputs {
    opara__tensor_data t[OC_MAX_IO];
    uint32_t n;
} oc_inputs;

/* ORT outputs that are not accurate enough to be a reference at 1e-8 (checked, not assumed: the
   tool prints ORT's own error against the exact reference). */
typedef struct oc_deviation {
    const char* model;
    const char* output; /* = Sigmoid(pre) */
    const char* pre;
    const char* why;
} oc_deviation;

static const oc_deviation oc_deviations[] = {
    {"ppocr_det", "sigmoid_0.tmp_0", "p2o.Add.281",
     "ORT's Sigmoid (MLAS) is approximate for inputs below about -7: the logits here are in [-53, -7.6]"},
};

static const oc_deviation* oc_find_deviation(const char* model, const char* output) {
    size_t i;
    for (i = 0; i < sizeof oc_deviations / sizeof oc_deviations[0]; ++i)
        if (strcmp(oc_deviations[i].model, model) == 0 && (!output || strcmp(oc_deviations[i].output, output) == 0))
            return &oc_deviations[i];
    return NULL;
}

typedef struct oc_totals {
    int passed, failed, skipped;
} oc_totals;

static int oc_read_inputs(opara_runtime* rt, const char* zoo, const char* name, oc_inputs* in, char* why, size_t cap) {
    char path[1200];
    memset(in, 0, sizeof *in);
    for (;;) {
        snprintf(path, sizeof path, "%s/%s/input_%u.pb", zoo, name, in->n);
        if (access(path, R_OK) != 0) break;
        if (in->n == OC_MAX_IO || opara__onnx_read_tensor_file(rt, path, &in->t[in->n]) != OPARA_OK) {
            snprintf(why, cap, "%s: %s", path, opara_runtime_last_error(rt));
            return 0;
        }
        in->n++;
    }
    if (!in->n) snprintf(why, cap, "no %s/%s/input_0.pb", zoo, name);
    return in->n > 0;
}

static void oc_free_inputs(opara_runtime* rt, oc_inputs* in) {
    uint32_t i;
    for (i = 0; i < in->n; ++i) opara__tensor_data_free(rt, &in->t[i]);
    in->n = 0;
}

/* A growable byte buffer for rewriting a ModelProto. */
typedef struct oc_buf {
    uint8_t* d;
    size_t n, cap;
    int oom;
} oc_buf;

static void oc_put(oc_buf* b, const void* p, size_t n) {
    if (b->oom) return;
    if (b->n + n > b->cap) {
        uint8_t* grown = (uint8_t*)realloc(b->d, (b->n + n) * 2 + 64);
        if (!grown) {
            b->oom = 1;
            return;
        }
        b->d = grown;
        b->cap = (b->n + n) * 2 + 64;
    }
    memcpy(b->d + b->n, p, n);
    b->n += n;
}

static void oc_varint(oc_buf* b, uint64_t v) {
    do {
        uint8_t c = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        oc_put(b, &c, 1);
        v >>= 7;
    } while (v);
}

/* Key and length of a length-delimited field (the payload follows). */
static void oc_len_field(oc_buf* b, uint32_t field, size_t size) {
    oc_varint(b, ((uint64_t)field << 3) | OPARA__PB_WIRE_LEN);
    oc_varint(b, size);
}

/* A copy of the serialized ModelProto with graph output `extra` appended (GraphProto field 12, a
   ValueInfoProto holding only its name, field 1). Returns 0 on malformed input or out of memory. */
static int oc_add_output(const uint8_t* data, size_t size, const char* extra, oc_buf* out) {
    opara__pb_reader r;
    opara__pb_field f;
    opara__pb_status st;
    size_t name_len = strlen(extra), vi_len;
    oc_buf lens;
    memset(out, 0, sizeof *out);
    memset(&lens, 0, sizeof lens);
    oc_varint(&lens, name_len);
    vi_len = 1 + lens.n + name_len;
    free(lens.d);
    opara__pb_reader_init(&r, data, size);
    for (;;) {
        const uint8_t* start = r.p;
        st = opara__pb_next(&r, &f);
        if (st != OPARA__PB_OK) break;
        if (f.number == 7 && f.wire == OPARA__PB_WIRE_LEN) {
            memset(&lens, 0, sizeof lens);
            oc_varint(&lens, vi_len);
            oc_len_field(out, 7, f.size + 1 + lens.n + vi_len);
            free(lens.d);
            oc_put(out, f.data, f.size);
            oc_len_field(out, 12, vi_len);
            oc_len_field(out, 1, name_len);
            oc_put(out, extra, name_len);
        } else {
            oc_put(out, start, (size_t)(r.p - start));
        }
    }
    return st == OPARA__PB_END && !out->oom;
}

static int oc_write_file(const char* path, const oc_buf* b) {
    FILE* f = fopen(path, "wb");
    int ok = f && fwrite(b->d, 1, b->n, f) == b->n;
    if (f && fclose(f) != 0) ok = 0;
    return ok;
}

/* ---- ONNX Runtime ---------------------------------------------------------------------------- */

/* Runs ORT once; outputs[i] pairs with s->output_names[i]. */
static int oc_run_ort(ort_api* api, const char* model, const oc_inputs* in, int threads, ort_session* s,
                      ort_tensor* outputs, char* why, size_t cap) {
    ort_tensor feeds[OC_MAX_IO];
    size_t i;
    uint32_t k;
    if (!ort_session_open(api, s, model, threads)) {
        snprintf(why, cap, "ORT session: %s", api->error);
        return 0;
    }
    if (s->n_inputs > OC_MAX_IO || s->n_outputs > OC_MAX_OUT) {
        snprintf(why, cap, "ORT: more than %d inputs or %d outputs", OC_MAX_IO, OC_MAX_OUT);
        return 0;
    }
    for (i = 0; i < s->n_inputs; ++i) {
        const opara__tensor_data* t = NULL;
        int32_t d;
        for (k = 0; k < in->n; ++k)
            if (strcmp(in->t[k].name, s->input_names[i]) == 0) t = &in->t[k];
        if (!t && i < in->n) t = &in->t[i];
        if (!t) {
            snprintf(why, cap, "no input file for ORT input '%s'", s->input_names[i]);
            return 0;
        }
        memset(&feeds[i], 0, sizeof feeds[i]);
        feeds[i].elem_type = (int)t->dtype;
        feeds[i].rank = (size_t)t->shape.ndim;
        for (d = 0; d < t->shape.ndim; ++d) feeds[i].dims[d] = t->shape.dims[d];
        feeds[i].data = t->data;
        feeds[i].nbytes = (size_t)t->nbytes;
    }
    if (!ort_session_run(s, feeds, outputs)) {
        snprintf(why, cap, "ORT run: %s", api->error);
        return 0;
    }
    return 1;
}

/* ---- opara ----------------------------------------------------------------------------------- */

/* "name=N,d1,d2,...": the leading dim stays the symbolic batch, the others come from the file. */
static uint32_t oc_overrides(const oc_inputs* in, char specs[][256], const char** list) {
    uint32_t i;
    for (i = 0; i < in->n; ++i) {
        size_t len = (size_t)snprintf(specs[i], 256, "%s=", in->t[i].name);
        int32_t d;
        for (d = 0; d < in->t[i].shape.ndim && len < 256; ++d) {
            if (d == 0) len += (size_t)snprintf(specs[i] + len, 256 - len, "N");
            else len += (size_t)snprintf(specs[i] + len, 256 - len, ",%lld", (long long)in->t[i].shape.dims[d]);
        }
        list[i] = specs[i];
    }
    return in->n;
}

/* 1 when NaN/Inf appear in different places (or Infs with different signs). */
/* An f16 output holds 11 significant bits: where ORT rounds a value to f16 at a node that opara keeps
   in f32 (docs/ARCHITECTURE.md, "f16 models"), the output may differ by one f16 rounding, a relative
   2^-11 (NMSE up to 2.4e-7 when every element does): such outputs pass at NMSE <= 1e-6. */
#define OC_F16_NMSE_MAX 1e-6
static double oc_nmse_bound(opara_dtype t, double nmse_max) {
    return t == OPARA_DTYPE_F16 && nmse_max < OC_F16_NMSE_MAX ? OC_F16_NMSE_MAX : nmse_max;
}

static int oc_nonfinite_mismatch(opara_dtype t, const void* got, const void* ref, uint64_t count) {
    uint64_t i;
    for (i = 0; i < count; ++i) {
        double g = conf_get(t, got, i), e = conf_get(t, ref, i);
        if (isnan(g) != isnan(e) || isinf(g) != isinf(e) || (isinf(g) && g != e)) return 1;
    }
    return 0;
}

/* Output i of ORT is Sigmoid(pre) with ORT's approximation: opara's output is compared with the
   exact sigmoid (double) of ORT's own pre-activation tensor; ORT's error against it is shown too. */
static int oc_check_deviation(const oc_deviation* dev, const ort_session* os, const ort_tensor* ref, size_t i,
                              const void* got, uint64_t count, const char* plan, const char* shape, double nmse_max) {
    size_t k, pre = os->n_outputs;
    float* exact;
    conf_cmp ours, theirs;
    uint64_t j;
    int good;
    for (k = 0; k < os->n_outputs; ++k)
        if (strcmp(os->output_names[k], dev->pre) == 0) pre = k;
    if (pre == os->n_outputs || ref[pre].elem_type != OPARA_DTYPE_F32 || ref[i].elem_type != OPARA_DTYPE_F32 ||
        ref[pre].nbytes != count * sizeof(float)) {
        printf("FAIL %-17s %-10s %s: ORT did not return the pre-activation tensor '%s'\n", dev->model, plan, dev->output,
               dev->pre);
        return 0;
    }
    exact = (float*)malloc((size_t)count * sizeof(float) + 1);
    if (!exact) return 0;
    for (j = 0; j < count; ++j) exact[j] = (float)(1.0 / (1.0 + exp(-(double)((const float*)ref[pre].data)[j])));
    conf_compare(OPARA_DTYPE_F32, got, exact, count, 0.0, 0.0, &ours);
    conf_compare(OPARA_DTYPE_F32, ref[i].data, exact, count, 0.0, 0.0, &theirs);
    free(exact);
    good = conf_nmse(&ours) <= nmse_max;
    printf("%s %-17s %-10s %-24.24s %-18s max|ref| %.3e  max_abs_err %.3e  nmse %.3e  (reference: exact sigmoid of ORT's "
           "'%s'; ORT's own output: max_abs_err %.3e, nmse %.3e: %s)\n", good ? "ok  " : "FAIL", dev->model, plan,
           dev->output, shape, ours.max_ref, ours.max_abs, conf_nmse(&ours), dev->pre, theirs.max_abs, conf_nmse(&theirs),
           dev->why);
    return good;
}

static int oc_compare_plan(opara_runtime* rt, const opara_model* model, opara_strategy strategy, const oc_inputs* in,
                           const ort_session* os, const ort_tensor* ref, const char* name, double nmse_max, int threads) {
    opara_session_desc d;
    opara_session* s = NULL;
    opara_tensor feeds[OC_MAX_IO];
    uint32_t i;
    int ok = 1;
    const char* plan = opara_strategy_name(strategy);
    opara_result r;
    memset(&d, 0, sizeof d);
    d.backend = OPARA_BACKEND_CPU;
    d.strategy = strategy;
    d.threads = (uint32_t)threads;
    d.batch_size = in->t[0].shape.ndim > 0 ? in->t[0].shape.dims[0] : 1;
    r = opara_session_create(rt, model, &d, &s);
    if (r != OPARA_OK) {
        printf("FAIL %-17s %-10s session: %s: %s\n", name, plan, opara_result_string(r), opara_runtime_last_error(rt));
        return 0;
    }
    for (i = 0; i < in->n; ++i) {
        int32_t k;
        memset(&feeds[i], 0, sizeof feeds[i]);
        feeds[i].name = in->t[i].name;
        feeds[i].dtype = in->t[i].dtype;
        feeds[i].rank = in->t[i].shape.ndim;
        for (k = 0; k < feeds[i].rank; ++k) feeds[i].dims[k] = in->t[i].shape.dims[k];
        feeds[i].data = in->t[i].data;
    }
    r = opara_session_run(s, feeds, in->n, NULL, 0);
    if (r != OPARA_OK) {
        printf("FAIL %-17s %-10s run: %s: %s\n", name, plan, opara_result_string(r), opara_session_last_error(s));
        opara_session_destroy(s);
        return 0;
    }
    for (i = 0; i < os->n_outputs; ++i) {
        opara_tensor_info info;
        uint32_t k, found = UINT32_MAX;
        uint64_t count = 1;
        char got_shape[128], want_shape[128];
        conf_cmp cmp;
        double nmse;
        int good;
        for (k = 0; k < opara_session_output_count(s); ++k) {
            opara_session_output_info(s, k, &info);
            if (strcmp(info.name, os->output_names[i]) == 0) {
                found = k;
                break;
            }
        }
        if (found == UINT32_MAX) {
            printf("FAIL %-17s %-10s output '%s': opara has no such output\n", name, plan, os->output_names[i]);
            ok = 0;
            continue;
        }
        conf_shape_text(info.rank, info.dims, got_shape, sizeof got_shape);
        conf_shape_text((int32_t)ref[i].rank, ref[i].dims, want_shape, sizeof want_shape);
        if (strcmp(got_shape, want_shape) != 0 || (int)info.dtype != ref[i].elem_type) {
            printf("FAIL %-17s %-10s output '%s': opara %s %s, ORT type %d %s\n", name, plan, info.name,
                   opara_dtype_name(info.dtype), got_shape, ref[i].elem_type, want_shape);
            ok = 0;
            continue;
        }
        for (k = 0; k < ref[i].rank; ++k) count *= (uint64_t)ref[i].dims[k];
        if (oc_find_deviation(name, info.name)) {
            if (!oc_check_deviation(oc_find_deviation(name, info.name), os, ref, i, opara_session_output_data(s, found),
                                    count, plan, got_shape, nmse_max))
                ok = 0;
            continue;
        }
        /* rtol/atol 0: every differing element counts; pass/fail is the NMSE bound (and NaN/Inf agreement) */
        conf_compare(info.dtype, opara_session_output_data(s, found), ref[i].data, count, 0.0, 0.0, &cmp);
        nmse = conf_nmse(&cmp);
        good = conf_dtype_is_float(info.dtype) ? nmse <= oc_nmse_bound(info.dtype, nmse_max) && !oc_nonfinite_mismatch(info.dtype,
                   opara_session_output_data(s, found), ref[i].data, count) : cmp.mismatches == 0;
        printf("%s %-17s %-10s %-24.24s %-18s max|ref| %.3e  max_abs_err %.3e  nmse %.3e\n", good ? "ok  " : "FAIL",
               name, plan, info.name, got_shape, cmp.max_ref, cmp.max_abs, nmse);
        if (!good) ok = 0;
    }
    opara_session_destroy(s);
    return ok;
}

/* One model: ORT once, then opara with each plan. Adds one result per plan to the totals. */
/* Writes WORK/<model file name>.extra.onnx with graph output `pre` added; path becomes that file. */
static int oc_extra_output_copy(opara_runtime* rt, const char* model, const char* work, const char* pre, char* path,
                                size_t cap) {
    const char* base = strrchr(model, '/');
    uint8_t* data = NULL;
    size_t size = 0;
    oc_buf copy;
    char out[3000];
    int ok;
    snprintf(out, sizeof out, "%.1000s/%.1000s.extra.onnx", work, base ? base + 1 : model);
    if (opara__onnx_read_file(rt, model, &data, &size) != OPARA_OK) return 0;
    ok = oc_add_output(data, size, pre, &copy) && oc_write_file(out, &copy);
    free(copy.d);
    opara__free(rt, data);
    if (ok) snprintf(path, cap, "%s", out);
    return ok;
}

static void oc_model(ort_api* api, const char* zoo, const char* work, const char* name, double nmse_max, int threads,
                     oc_totals* tot) {
    static const opara_strategy plans[] = {OPARA_STRATEGY_SEQUENTIAL, OPARA_STRATEGY_OPARA};
    const size_t n_plans = sizeof plans / sizeof plans[0];
    char path[3000], why[4096], specs[OC_MAX_IO][256];
    const char* list[OC_MAX_IO];
    opara_runtime* rt = NULL;
    opara_model* model = NULL;
    opara_onnx_options opt;
    oc_inputs in;
    ort_session os;
    static ort_tensor ref[OC_MAX_OUT];
    size_t i;
    opara_result r;
    memset(&os, 0, sizeof os);
    memset(ref, 0, sizeof ref);
    snprintf(path, sizeof path, "%s/%s.onnx", zoo, name);
    if (opara_runtime_create(NULL, &rt) != OPARA_OK) return;
    if (!oc_read_inputs(rt, zoo, name, &in, why, sizeof why)) {
        printf("SKIP %-17s %s\n", name, why);
        tot->skipped += (int)n_plans;
        opara_runtime_destroy(rt);
        return;
    }
    if (oc_find_deviation(name, NULL) && !oc_extra_output_copy(rt, path, work, oc_find_deviation(name, NULL)->pre, path,
                                                               sizeof path)) {
        printf("FAIL %-17s cannot write a copy of the model with output '%s' in %s\n", name,
               oc_find_deviation(name, NULL)->pre, work);
        tot->failed += (int)n_plans;
    } else if (!oc_run_ort(api, path, &in, threads, &os, ref, why, sizeof why)) {
        printf("FAIL %-17s %s\n", name, why);
        tot->failed += (int)n_plans;
    } else {
        memset(&opt, 0, sizeof opt);
        opt.input_shapes = list;
        opt.n_input_shapes = oc_overrides(&in, specs, list);
        r = opara_model_load_onnx_file(rt, path, &opt, &model);
        if (r != OPARA_OK) {
            printf("FAIL %-17s import: %s: %s\n", name, opara_result_string(r), opara_runtime_last_error(rt));
            tot->failed += (int)n_plans;
        }
        for (i = 0; model && i < n_plans; ++i) {
            if (oc_compare_plan(rt, model, plans[i], &in, &os, ref, name, nmse_max, threads)) tot->passed++;
            else tot->failed++;
        }
    }
    for (i = 0; i < os.n_outputs && i < OC_MAX_OUT; ++i) ort_tensor_free(&ref[i]);
    ort_session_close(&os);
    opara_model_destroy(model);
    oc_free_inputs(rt, &in);
    opara_runtime_destroy(rt);
}

static int oc_cmp_names(const void* a, const void* b) { return strcmp(*(char* const*)a, *(char* const*)b); }

/* The zoo's model names (DIR/<name>.onnx), sorted. */
static size_t oc_list_models(const char* zoo, char** names, size_t cap) {
    DIR* d = opendir(zoo);
    struct dirent* e;
    size_t n = 0;
    if (!d) return 0;
    while ((e = readdir(d)) != NULL && n < cap) {
        size_t len = strlen(e->d_name);
        if (len <= 5 || strcmp(e->d_name + len - 5, ".onnx") != 0) continue;
        names[n] = (char*)malloc(len - 4);
        if (!names[n]) break;
        memcpy(names[n], e->d_name, len - 5);
        names[n++][len - 5] = 0;
    }
    closedir(d);
    qsort(names, n, sizeof *names, oc_cmp_names);
    return n;
}

static int oc_usage(void) {
    fprintf(stderr, "usage: ort_compare [--zoo DIR] [--model NAME]... [--ort LIB] [--nmse-max X] [--threads N] [--work DIR]\n");
    return 2;
}

int main(int argc, char** argv) {
    const char* zoo = "build/zoo";
    const char* work = "build/conformance";
    const char* lib = ort_default_library();
    const char* only[64];
    char* names[256];
    size_t n_only = 0, n, i, k;
    double nmse_max = 1e-8;
    int threads = 2, a;
    ort_api api;
    oc_totals tot;
    memset(&tot, 0, sizeof tot);
    for (a = 1; a < argc; ++a) {
        if (strcmp(argv[a], "--zoo") == 0 && a + 1 < argc) zoo = argv[++a];
        else if (strcmp(argv[a], "--model") == 0 && a + 1 < argc && n_only < 64) only[n_only++] = argv[++a];
        else if (strcmp(argv[a], "--ort") == 0 && a + 1 < argc) lib = argv[++a];
        else if (strcmp(argv[a], "--work") == 0 && a + 1 < argc) work = argv[++a];
        else if (strcmp(argv[a], "--nmse-max") == 0 && a + 1 < argc) nmse_max = atof(argv[++a]);
        else if (strcmp(argv[a], "--threads") == 0 && a + 1 < argc) threads = atoi(argv[++a]);
        else return oc_usage();
    }
    n = oc_list_models(zoo, names, 256);
    if (!n) {
        printf("SKIP ort_compare: no models in %s (make zoo)\n0 passed, 0 failed, 1 skipped\n", zoo);
        return 0;
    }
    if (!ort_open(&api, lib)) {
        printf("SKIP ort_compare: ONNX Runtime unavailable: %s\n0 passed, 0 failed, 1 skipped\n", api.error);
        for (i = 0; i < n; ++i) free(names[i]);
        return 0;
    }
    printf("opara CPU backend vs ONNX Runtime (%s), %d threads each; pass: NMSE <= %g per output\n", lib, threads,
           nmse_max);
    for (i = 0; i < n; ++i) {
        int wanted = n_only == 0;
        for (k = 0; k < n_only; ++k) wanted |= strcmp(only[k], names[i]) == 0;
        if (wanted) {
            oc_model(&api, zoo, work, names[i], nmse_max, threads, &tot);
            fflush(stdout);
        }
        free(names[i]);
    }
    ort_close(&api);
    printf("%d passed, %d failed, %d skipped\n", tot.passed, tot.failed, tot.skipped);
    return tot.failed ? 1 : 0;
}
