/* ONNX backend test data (libonnx-testdata) run through opara's CPU backend (or its CUDA backend).

   build/conformance/conformance [--data DIR] [--folder NAME]... [--filter SUBSTR] [--verbose]
                                 [--backend cpu|cuda] [--seeds N]

   For every test_* directory of the folders (default: node, pytorch-converted, pytorch-operator):
   model.onnx is imported (graph inputs that must be constants, such as Reshape's shape, are
   frozen to their test values, one at a time as the importer names them), written as an .opara
   image and loaded back, then run on the CPU backend with the sequential plan and with the Opara
   plan on test_data_set_0/input_*.pb. Every output is compared with output_*.pb using the ONNX
   backend tests' tolerance (|got - exp| <= atol + rtol * |exp|, rtol 1e-3, atol 1e-7, NaN equal
   to NaN; integer and bool outputs exactly). A test whose operators, types or features the
   importer or the backend rejects as unsupported is skipped with the reason; any other error or
   mismatch is a failure. Ends with "N passed, N failed, N skipped"; exit status 1 on a failure.

   --backend cuda runs the same tests through the CUDA backend instead, in its three modes (eager
   multi-stream with the Opara plan, graph replay of the Opara plan, graph replay of the sequential
   plan), each run --seeds times (default 5) under a different emulator execution-order seed; the
   driver, cuBLAS and cuDNN are OPARA_CUDA_DRIVER / OPARA_CUBLAS / OPARA_CUDNN, by default the
   emulator's in OPARA_EMU_LIB_DIR. A test whose operator or data type the CUDA lowering does not
   support is a skip ("cuda: Op (reason)"); a graph mode that falls back to eager is a failure. */
#define _GNU_SOURCE
#define OPARA_IMPLEMENTATION
#include "opara.h"
#include "conf_util.h"

#include <dirent.h>
#ifndef _WIN32
#  include <dlfcn.h>
#endif
#include <stdlib.h>
#include <unistd.h>

#ifndef OPARA_EMU_LIB_DIR
#define OPARA_EMU_LIB_DIR "build/cudaemu"
#endif

#define CONF_MAX_IO 16
#define CONF_MAX_KEYS 256

static double conf_rtol = 1e-3, conf_atol = 1e-7;

/* One way of running a model: backend, plan and (CUDA) mode. */
typedef struct conf_plan {
    const char* name;
    opara_backend backend;
    opara_strategy strategy;
    int cuda_eager;
    const char* cuda_mode; /* what opara_plan_info must report (no silent fallback) */
} conf_plan;

static const conf_plan conf_cpu_plans[] = {
    {"sequential", OPARA_BACKEND_CPU, OPARA_STRATEGY_SEQUENTIAL, 0, NULL},
    {"opara", OPARA_BACKEND_CPU, OPARA_STRATEGY_OPARA, 0, NULL},
};
static const conf_plan conf_cuda_plans[] = {
    {"cuda eager", OPARA_BACKEND_CUDA, OPARA_STRATEGY_OPARA, 1, "eager"},
    {"cuda graph", OPARA_BACKEND_CUDA, OPARA_STRATEGY_OPARA, 0, "graph"},
    {"cuda sequential graph", OPARA_BACKEND_CUDA, OPARA_STRATEGY_SEQUENTIAL, 0, "sequential-graph"},
};

/* The run's settings (set once in main). */
static const conf_plan* conf_plans = conf_cpu_plans;
static size_t conf_n_plans = sizeof conf_cpu_plans / sizeof conf_cpu_plans[0];
static int conf_runs = 1; /* runs per session (CUDA: one per emulator seed) */

typedef int (*conf_emu_config_fn)(const char* key, long long value);

/* The emulator's control entry point, once a session has loaded the driver (NULL on a real GPU). */
static conf_emu_config_fn conf_emu_config(void) {
#ifdef _WIN32
    return NULL; /* the emulator's libraries are Linux's */
#else
    const char* path = getenv("OPARA_CUDA_DRIVER");
    void* h = path ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : NULL;
    conf_emu_config_fn f = NULL;
    if (h) {
        *(void**)(&f) = dlsym(h, "opara_emu_config");
        dlclose(h);
    }
    return f;
#endif
}

typedef struct conf_key_count {
    char key[160];
    int count;
    char example[96];
} conf_key_count;

typedef struct conf_stats {
    int passed, failed, skipped;
    int frozen; /* passed tests that needed graph inputs frozen to their test values */
    conf_key_count keys[CONF_MAX_KEYS];
    int n_keys;
} conf_stats;

typedef struct conf_case {
    const char* dir;  /* the test directory */
    const char* name; /* test_... */
    opara_runtime* rt;
    opara__tensor_data in[CONF_MAX_IO], out[CONF_MAX_IO];
    uint32_t n_in, n_out;
    int frozen[CONF_MAX_IO]; /* in[i] is bound into the model as a constant */
    char why[4096];          /* skip or failure reason */
} conf_case;

enum { CONF_PASS = 0, CONF_FAIL = 1, CONF_SKIP = 2 };

/* Tests whose expected numbers disagree with the ONNX operator text and with ONNX Runtime, where
   opara follows the text. Each still runs: a mismatch is reported as a skip with the reason, a
   pass is a failure (the entry is stale). */
static const char* const conf_deviations[][2] = {
    {"test_resize_downsample_scales_linear_align_corners",
     "ONNX's reference computes align_corners with the unrounded length in*scale (onnx/onnx#2462); the operator "
     "text, ONNX Runtime and PyTorch use the output length (ORT gives [1, 4], the data [1, 3.142857])"},
    {"test_resize_downsample_scales_cubic_align_corners",
     "the same unrounded length (onnx/onnx#2462): ONNX Runtime 1.x gives [1, 2.5, 4, 7, 8.5, 10, 13, 14.5, 16] from the "
     "output length 3, the data [1, 2.395, 3.790, ...] from 3.2"},
};

static const char* conf_deviation(const char* test) {
    size_t i;
    for (i = 0; i < sizeof conf_deviations / sizeof conf_deviations[0]; ++i)
        if (strcmp(conf_deviations[i][0], test) == 0) return conf_deviations[i][1];
    return NULL;
}

static void conf_count_key(conf_stats* st, const char* key, const char* example) {
    int k;
    for (k = 0; k < st->n_keys && strcmp(st->keys[k].key, key) != 0; ++k) {}
    if (k == st->n_keys) {
        if (st->n_keys == CONF_MAX_KEYS) return;
        snprintf(st->keys[k].key, sizeof st->keys[k].key, "%s", key);
        snprintf(st->keys[k].example, sizeof st->keys[k].example, "%s", example);
        st->n_keys++;
    }
    st->keys[k].count++;
}

/* A short grouping key for a skip reason: "Op: reason" from details such as
   "... node 'y' (Clip): Clip: only f32 is supported", else the detail after its last ": ". */
static void conf_skip_key(const char* prefix, const char* detail, char* key, size_t cap) {
    const char* p = strstr(detail, "' (");
    const char* close = p ? strstr(p, "): ") : NULL;
    if (close) {
        const char* op = p + 3;
        const char* reason = close + 3;
        size_t len = (size_t)(close - op);
        if (strncmp(reason, op, len) == 0 && reason[len] == ':') reason += len + 2;
        snprintf(key, cap, "%s%.*s (%.70s)", prefix, (int)len, op, reason);
    } else {
        p = strrchr(detail, ':');
        snprintf(key, cap, "%s%.90s", prefix, p ? p + 2 : detail);
    }
}

static void conf_count_skip(conf_stats* st, const char* prefix, const conf_case* c) {
    char key[160];
    conf_skip_key(prefix, c->why, key, sizeof key);
    conf_count_key(st, key, c->name);
}

/* ---- reading a test ---------------------------------------------------------------------------- */

static int conf_read_pbs(conf_case* c, const char* stem, opara__tensor_data* out, uint32_t* n) {
    char path[1200];
    *n = 0;
    for (;;) {
        opara_result r;
        snprintf(path, sizeof path, "%s/test_data_set_0/%s_%u.pb", c->dir, stem, *n);
        if (access(path, R_OK) != 0) return 1;
        if (*n == CONF_MAX_IO) {
            snprintf(c->why, sizeof c->why, "test data: more than %d %ss", CONF_MAX_IO, stem);
            return 0;
        }
        r = opara__onnx_read_tensor_file(c->rt, path, &out[*n]);
        if (r != OPARA_OK) {
            snprintf(c->why, sizeof c->why, "test data %s_%u.pb: %s", stem, *n, opara_runtime_last_error(c->rt));
            return 0;
        }
        (*n)++;
    }
}

/* Sequence, optional and map graph inputs/outputs (their .pb files are not TensorProtos). */
static int conf_all_tensors(conf_case* c, const opara__onnx_graph* g) {
    uint32_t i;
    for (i = 0; i < g->n_inputs + g->n_outputs; ++i) {
        const opara__onnx_value_info* vi = i < g->n_inputs ? &g->inputs[i] : &g->outputs[i - g->n_inputs];
        if (!vi->is_tensor) {
            snprintf(c->why, sizeof c->why, "graph %s '%s' is not a tensor (sequence, optional or map)",
                     i < g->n_inputs ? "input" : "output", vi->name);
            return 0;
        }
    }
    return 1;
}

static int conf_is_initializer(const opara__onnx_graph* g, const char* name) {
    uint32_t i;
    for (i = 0; i < g->n_initializers; ++i)
        if (strcmp(g->initializers[i].name, name) == 0) return 1;
    return 0;
}

/* Names every test tensor after the graph input/output it feeds or checks: its own name when the
   graph has one of that name, else by position (inputs skip IR<4 initializer inputs, as ONNX's
   runner does). */
static int conf_bind_names(conf_case* c, const opara__onnx_graph* g) {
    uint32_t i, k, pos;
    for (i = 0; i < c->n_in; ++i) {
        int found = 0;
        for (k = 0; k < g->n_inputs && !found; ++k) found = strcmp(g->inputs[k].name, c->in[i].name) == 0;
        if (found) continue;
        for (k = 0, pos = 0; pos < g->n_inputs; ++pos)
            if (!conf_is_initializer(g, g->inputs[pos].name) && k++ == i) break;
        if (pos >= g->n_inputs) {
            snprintf(c->why, sizeof c->why, "input_%u.pb has no graph input to bind to", i);
            return 0;
        }
        snprintf(c->in[i].name, sizeof c->in[i].name, "%s", g->inputs[pos].name);
    }
    for (i = 0; i < c->n_out; ++i) {
        int found = 0;
        for (k = 0; k < g->n_outputs && !found; ++k) found = strcmp(g->outputs[k].name, c->out[i].name) == 0;
        if (found) continue;
        if (i >= g->n_outputs) {
            snprintf(c->why, sizeof c->why, "output_%u.pb has no graph output to bind to", i);
            return 0;
        }
        snprintf(c->out[i].name, sizeof c->out[i].name, "%s", g->outputs[i].name);
    }
    return 1;
}

/* ---- import ------------------------------------------------------------------------------------ */

/* The graph input a "must be a constant" detail names: "...: input 1 'shape' (...) must be a constant". */
static int conf_named_input(const conf_case* c, const char* detail) {
    const char* p = strstr(detail, "): input ");
    uint32_t i;
    if (!p || !strstr(detail, "must be a constant")) return -1;
    p += 9;
    while (*p >= '0' && *p <= '9') ++p;
    if (p[0] != ' ' || p[1] != '\'') return -1;
    p += 2;
    for (i = 0; i < c->n_in; ++i) {
        size_t len = strlen(c->in[i].name);
        if (!c->frozen[i] && strncmp(p, c->in[i].name, len) == 0 && p[len] == '\'') return (int)i;
    }
    return -1;
}

/* Lists the unsupported operator labels of the model into the stats; 1 if there were any. */
static int conf_note_unsupported_ops(conf_stats* st, const opara__onnx_model* om, const char* test) {
    const opara__onnx_graph* g = &om->graph;
    int64_t opset = opara__default_opset(om); /* an op newer than the model's opset is refused too */
    uint32_t i, k;
    int any = 0;
    for (i = 0; i < g->n_nodes; ++i) {
        char label[128];
        int seen = 0;
        if (opara__node_supported(&g->nodes[i], opset)) continue;
        opara__unsupported_label(&g->nodes[i], opset, label, sizeof label);
        for (k = 0; k < i && !seen; ++k) {
            char other[128];
            if (opara__node_supported(&g->nodes[k], opset)) continue;
            opara__unsupported_label(&g->nodes[k], opset, other, sizeof other);
            seen = strcmp(label, other) == 0;
        }
        if (!seen) conf_count_key(st, label, test);
        any = 1;
    }
    return any;
}

/* Shape overrides for inputs whose declared shape has symbolic or missing dims. */
static uint32_t conf_overrides(conf_case* c, const opara__onnx_graph* g, char specs[][256], const char** list) {
    uint32_t i, k, n = 0;
    for (i = 0; i < c->n_in; ++i) {
        const opara__onnx_value_info* vi = NULL;
        int concrete;
        size_t len;
        int32_t d;
        if (c->frozen[i]) continue;
        for (k = 0; k < g->n_inputs; ++k)
            if (strcmp(g->inputs[k].name, c->in[i].name) == 0) vi = &g->inputs[k];
        concrete = vi && vi->has_shape;
        for (k = 0; concrete && k < vi->n_dims; ++k) concrete = vi->dims[k].has_value && vi->dims[k].value >= 0;
        if (concrete) continue;
        len = (size_t)snprintf(specs[n], 256, "%s=", c->in[i].name);
        for (d = 0; d < c->in[i].shape.ndim && len < 256; ++d)
            len += (size_t)snprintf(specs[n] + len, 256 - len, "%s%lld", d ? "," : "", (long long)c->in[i].shape.dims[d]);
        list[n] = specs[n];
        n++;
    }
    return n;
}

static opara_result conf_import(conf_case* c, const opara__onnx_graph* og, const char* model_path, opara__graph* g) {
    for (;;) {
        opara__tensor_data frozen[CONF_MAX_IO];
        opara__onnx_extra extra;
        opara_onnx_options opt;
        char specs[CONF_MAX_IO][256];
        const char* list[CONF_MAX_IO];
        uint32_t i, n = 0;
        int next;
        opara_result r;
        for (i = 0; i < c->n_in; ++i)
            if (c->frozen[i]) frozen[n++] = c->in[i];
        memset(&extra, 0, sizeof extra);
        extra.frozen = frozen;
        extra.n_frozen = n;
        memset(&opt, 0, sizeof opt);
        opt.input_shapes = list;
        opt.n_input_shapes = conf_overrides(c, og, specs, list);
        r = opara__onnx_import_file(c->rt, model_path, &opt, &extra, g);
        if (r != OPARA_ERR_UNSUPPORTED_OP) return r;
        next = conf_named_input(c, opara_runtime_last_error(c->rt));
        if (next < 0 && strstr(opara_runtime_last_error(c->rt), "only supported when it can be evaluated at import time")) {
            /* a fold-only operator (Range, ConstantOfShape, Equal, ...) fed by graph inputs: freeze them all
               once, so the importer's evaluator is what gets tested */
            int any = 0;
            for (i = 0; i < c->n_in; ++i) any |= !c->frozen[i], c->frozen[i] = 1;
            if (!any) return r;
            opara__graph_free(g);
            continue;
        }
        if (next < 0) return r;
        opara__graph_free(g);
        c->frozen[next] = 1;
    }
}

/* ---- running and comparing --------------------------------------------------------------------- */

static int conf_check_output(conf_case* c, opara_session* s, uint32_t index, const char* plan) {
    opara_tensor_info info;
    const opara__tensor_data* want = NULL;
    char got_shape[128], want_shape[128];
    uint32_t i;
    conf_cmp cmp;
    opara_session_output_info(s, index, &info);
    for (i = 0; i < c->n_out; ++i)
        if (strcmp(c->out[i].name, info.name) == 0) want = &c->out[i];
    if (!want) return 1; /* an output the test data does not check */
    conf_shape_text(info.rank, info.dims, got_shape, sizeof got_shape);
    conf_shape_text(want->shape.ndim, want->shape.dims, want_shape, sizeof want_shape);
    if (info.dtype != want->dtype) {
        snprintf(c->why, sizeof c->why, "%s: output '%s' is %s, expected %s", plan, info.name, opara_dtype_name(info.dtype),
                 opara_dtype_name(want->dtype));
        return 0;
    }
    if (strcmp(got_shape, want_shape) != 0) {
        snprintf(c->why, sizeof c->why, "%s: output '%s' has shape %s, expected %s", plan, info.name, got_shape, want_shape);
        return 0;
    }
    conf_compare(info.dtype, opara_session_output_data(s, index), want->data, want->count, conf_rtol, conf_atol, &cmp);
    if (cmp.mismatches) {
        snprintf(c->why, sizeof c->why,
                 "%s: output '%s' %s: %llu of %llu elements out of tolerance; first at %llu: got %.9g, expected %.9g "
                 "(max abs err %.3g)", plan, info.name, want_shape, (unsigned long long)cmp.mismatches,
                 (unsigned long long)cmp.count, (unsigned long long)cmp.first_bad, cmp.bad_got, cmp.bad_exp, cmp.max_abs);
        return 0;
    }
    return 1;
}

static int conf_is_unsupported(opara_result r) {
    return r == OPARA_ERR_UNSUPPORTED || r == OPARA_ERR_UNSUPPORTED_OP || r == OPARA_ERR_BAD_DTYPE;
}

/* Zero-sized tensors are refused by design (README, "Zero-sized tensors"): a skip with the reason. */
static int conf_is_zero_sized_refusal(opara_result r, const char* message) {
    return r == OPARA_ERR_SHAPE && strstr(message, "zero-sized tensors are not supported") != NULL;
}

/* One plan: session, run(s), compare. Returns CONF_PASS/FAIL/SKIP. */
static int conf_run_plan(conf_case* c, const opara_model* model, const conf_plan* p) {
    opara_session_desc d;
    opara_session* s = NULL;
    opara_tensor inputs[CONF_MAX_IO];
    uint32_t i, n = 0;
    opara_result r;
    int status = CONF_PASS, run;
    const char* plan = p->name;
    memset(&d, 0, sizeof d);
    d.backend = p->backend;
    d.strategy = p->strategy;
    d.cuda_eager = p->cuda_eager;
    d.threads = 2;
    r = opara_session_create(c->rt, model, &d, &s);
    if (r != OPARA_OK) {
        snprintf(c->why, sizeof c->why, "%s session: %s: %s", plan, opara_result_string(r), opara_runtime_last_error(c->rt));
        return conf_is_unsupported(r) ? CONF_SKIP : CONF_FAIL;
    }
    if (p->cuda_mode) {
        opara_plan_info info;
        opara_session_get_plan_info(s, &info);
        if (!info.cuda_mode || strcmp(info.cuda_mode, p->cuda_mode) != 0) {
            snprintf(c->why, sizeof c->why, "%s: the session runs in mode %s", plan, info.cuda_mode ? info.cuda_mode : "(none)");
            opara_session_destroy(s);
            return CONF_FAIL;
        }
    }
    for (i = 0; i < c->n_in; ++i) {
        int32_t k;
        if (c->frozen[i]) continue;
        memset(&inputs[n], 0, sizeof inputs[n]);
        inputs[n].name = c->in[i].name;
        inputs[n].dtype = c->in[i].dtype;
        inputs[n].rank = c->in[i].shape.ndim;
        for (k = 0; k < inputs[n].rank; ++k) inputs[n].dims[k] = c->in[i].shape.dims[k];
        inputs[n].data = c->in[i].data;
        n++;
    }
    for (run = 0; run < conf_runs && status == CONF_PASS; ++run) {
        conf_emu_config_fn cfg = p->backend == OPARA_BACKEND_CUDA ? conf_emu_config() : NULL;
        if (cfg) cfg("seed", 7001 + run);
        r = opara_session_run(s, inputs, n, NULL, 0);
        if (r != OPARA_OK) {
            snprintf(c->why, sizeof c->why, "%s run %d: %s: %s", plan, run + 1, opara_result_string(r),
                     opara_session_last_error(s));
            status = conf_is_unsupported(r) ? CONF_SKIP : CONF_FAIL;
        }
        for (i = 0; status == CONF_PASS && i < opara_session_output_count(s); ++i)
            if (!conf_check_output(c, s, i, plan)) status = CONF_FAIL;
    }
    opara_session_destroy(s);
    return status;
}

/* Every expected output must be a model output. */
static int conf_outputs_present(conf_case* c, const opara_model* model) {
    uint32_t i, k;
    for (i = 0; i < c->n_out; ++i) {
        int found = 0;
        for (k = 0; k < opara_model_output_count(model) && !found; ++k) {
            opara_tensor_info info;
            opara_model_output_info(model, k, &info);
            found = strcmp(info.name, c->out[i].name) == 0;
        }
        if (!found) {
            snprintf(c->why, sizeof c->why, "the converted model has no output '%s'", c->out[i].name);
            return 0;
        }
    }
    return 1;
}

/* Import, convert to .opara and back, run both plans. */
static int conf_run_case(conf_case* c, conf_stats* st) {
    char model_path[1300];
    opara__pool pool;
    opara__onnx_model om;
    opara__graph g;
    opara__bytes image;
    opara_model *direct = NULL, *model = NULL;
    uint8_t* bytes = NULL;
    size_t size = 0, k;
    opara_result r;
    int status = CONF_PASS;
    snprintf(model_path, sizeof model_path, "%s/model.onnx", c->dir);
    memset(&pool, 0, sizeof pool);
    memset(&image, 0, sizeof image);
    r = opara__onnx_read_file(c->rt, model_path, &bytes, &size);
    if (r == OPARA_OK) r = opara__onnx_decode_model(c->rt, &pool, bytes, size, &om);
    if (r != OPARA_OK) {
        snprintf(c->why, sizeof c->why, "model.onnx: %s: %s", opara_result_string(r), opara_runtime_last_error(c->rt));
        status = CONF_FAIL;
    } else if (om.has_graph && !conf_all_tensors(c, &om.graph)) {
        status = CONF_SKIP;
        conf_count_key(st, "test data: sequence/optional/map inputs or outputs", c->name);
    } else if (!conf_read_pbs(c, "input", c->in, &c->n_in) || !conf_read_pbs(c, "output", c->out, &c->n_out)) {
        char key[160];
        status = CONF_SKIP;
        conf_skip_key("test data: ", c->why, key, sizeof key);
        conf_count_key(st, key, c->name);
    } else if (!om.has_graph || !conf_bind_names(c, &om.graph)) {
        status = CONF_FAIL;
    } else {
        r = conf_import(c, &om.graph, model_path, &g);
        if (r != OPARA_OK) {
            snprintf(c->why, sizeof c->why, "import: %s: %s", opara_result_string(r), opara_runtime_last_error(c->rt));
            opara__graph_free(&g);
            status = conf_is_unsupported(r) ? CONF_SKIP : CONF_FAIL;
            if (status == CONF_SKIP && !(r == OPARA_ERR_UNSUPPORTED_OP && conf_note_unsupported_ops(st, &om, c->name)))
                conf_count_skip(st, "import: ", c);
        }
    }
    if (status == CONF_PASS) {
        r = opara__model_from_graph(c->rt, &g, &direct);
        if (r == OPARA_OK) r = opara__format_write(c->rt, opara__model_graph(direct), 0, &image);
        if (r == OPARA_OK) r = opara_model_load_memory(c->rt, image.data, image.size, &model);
        if (r != OPARA_OK) {
            snprintf(c->why, sizeof c->why, "convert: %s: %s", opara_result_string(r), opara_runtime_last_error(c->rt));
            status = conf_is_unsupported(r) || conf_is_zero_sized_refusal(r, opara_runtime_last_error(c->rt)) ? CONF_SKIP
                                                                                                                : CONF_FAIL;
            if (status == CONF_SKIP) conf_count_skip(st, "convert: ", c);
        }
    }
    if (status == CONF_PASS && !conf_outputs_present(c, model)) status = CONF_FAIL;
    for (k = 0; k < conf_n_plans && status == CONF_PASS; ++k) status = conf_run_plan(c, model, &conf_plans[k]);
    if (status == CONF_SKIP && model) conf_count_skip(st, conf_plans[0].backend == OPARA_BACKEND_CUDA ? "cuda: " : "backend: ", c);
    opara_model_destroy(model);
    opara_model_destroy(direct);
    opara__free_aligned(&c->rt->allocator, image.data);
    opara__pool_free(c->rt, &pool);
    opara__free(c->rt, bytes);
    return status;
}

/* ---- folders ----------------------------------------------------------------------------------- */

static int conf_cmp_names(const void* a, const void* b) { return strcmp(*(char* const*)a, *(char* const*)b); }

static int conf_folder(const char* data, const char* folder, const char* filter, int verbose, conf_stats* st) {
    char dir[1024];
    char** names = NULL;
    size_t n = 0, cap = 0, i;
    DIR* d;
    struct dirent* e;
    opara_runtime* rt = NULL;
    snprintf(dir, sizeof dir, "%s/%s", data, folder);
    d = opendir(dir);
    if (!d) {
        printf("conformance: %s: cannot open %s\n", folder, dir);
        return 0;
    }
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, "test_", 5) != 0 || (filter && !strstr(e->d_name, filter))) continue;
        if (n == cap) {
            char** grown = (char**)realloc(names, (cap = cap ? cap * 2 : 256) * sizeof *names);
            if (!grown) break;
            names = grown;
        }
        names[n] = (char*)malloc(strlen(e->d_name) + 1);
        if (names[n]) strcpy(names[n++], e->d_name);
    }
    closedir(d);
    if (n) qsort(names, n, sizeof *names, conf_cmp_names);
    if (opara_runtime_create(NULL, &rt) != OPARA_OK) return 0;
    for (i = 0; i < n; ++i) {
        conf_case c;
        char path[1100];
        uint32_t k;
        int status;
        memset(&c, 0, sizeof c);
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        c.dir = path;
        c.name = names[i];
        c.rt = rt;
        status = conf_run_case(&c, st);
        if (conf_deviation(names[i]) && status != CONF_SKIP) {
            int passed = status == CONF_PASS;
            status = passed ? CONF_FAIL : CONF_SKIP;
            if (passed) snprintf(c.why, sizeof c.why, "passes but is listed as a known deviation: remove the entry");
            else snprintf(c.why, sizeof c.why, "known deviation: %s", conf_deviation(names[i]));
            if (!passed) conf_count_key(st, "known deviation from ONNX's reference numbers: see conformance.c", names[i]);
        }
        if (status == CONF_PASS) {
            st->passed++;
            for (k = 0; k < c.n_in && !c.frozen[k]; ++k) {}
            st->frozen += k < c.n_in;
        }
        else if (status == CONF_FAIL) st->failed++;
        else st->skipped++;
        if (status == CONF_FAIL) printf("FAIL %s/%s: %s\n", folder, names[i], c.why);
        else if (verbose) printf("%s %s/%s%s%s\n", status == CONF_PASS ? "ok  " : "SKIP", folder, names[i],
                                 status == CONF_SKIP ? ": " : "", status == CONF_SKIP ? c.why : "");
        for (k = 0; k < c.n_in; ++k) opara__tensor_data_free(rt, &c.in[k]);
        for (k = 0; k < c.n_out; ++k) opara__tensor_data_free(rt, &c.out[k]);
        free(names[i]);
    }
    free(names);
    opara_runtime_destroy(rt);
    return 1;
}

static int conf_cmp_keys(const void* a, const void* b) {
    const conf_key_count *x = (const conf_key_count*)a, *y = (const conf_key_count*)b;
    return x->count != y->count ? y->count - x->count : strcmp(x->key, y->key);
}

/* What the runtime does not set out to run (an inference runtime of f32/integer tensors): skips of these
   classes are expected; every other skip is something not supported yet. A key is an operator label
   or a reason ("test data: ..."). */
static const char* const conf_out_of_scope[][2] = {
    {"NegativeLogLikelihoodLoss", "training"}, {"SoftmaxCrossEntropyLoss", "training"},
    {"ai.onnx.preview.training.", "training"}, {"BatchNormalization (training mode)", "training"},
    {"import: Dropout (training mode", "training"},
    {"Bernoulli", "random generators"}, {"RandomUniform", "random generators"}, {"RandomNormal", "random generators"},
    {"Multinomial", "random generators"},
    {"Sequence", "strings, sequences, maps, optionals"}, {"Optional", "strings, sequences, maps, optionals"},
    {"ConcatFromSequence", "strings, sequences, maps, optionals"},
    {"SplitToSequence", "strings, sequences, maps, optionals"}, {"String", "strings, sequences, maps, optionals"},
    {"RegexFullMatch", "strings, sequences, maps, optionals"},
    {"test data: sequence/optional/map", "strings, sequences, maps, optionals"},
    {"test data: tensor data type 8 is", "strings, sequences, maps, optionals"},
    {"TfIdfVectorizer", "TfIdfVectorizer"},
};
#define CONF_N_OUT_OF_SCOPE (sizeof conf_out_of_scope / sizeof conf_out_of_scope[0])

/* The out-of-scope class of a skip key (its prefix is listed), or NULL. */
static const char* conf_scope_class(const char* key) {
    size_t i;
    for (i = 0; i < CONF_N_OUT_OF_SCOPE; ++i)
        if (strncmp(key, conf_out_of_scope[i][0], strlen(conf_out_of_scope[i][0])) == 0) return conf_out_of_scope[i][1];
    return NULL;
}

/* "  skipped, out of scope: N (training 97, ...)"; returns N. */
static int conf_print_out_of_scope(const conf_stats* st) {
    const char* classes[CONF_N_OUT_OF_SCOPE];
    int counts[CONF_N_OUT_OF_SCOPE], n_classes = 0, total = 0, k, c;
    for (k = 0; k < st->n_keys; ++k) {
        const char* cls = conf_scope_class(st->keys[k].key);
        if (!cls) continue;
        for (c = 0; c < n_classes && strcmp(classes[c], cls) != 0; ++c) {}
        if (c == n_classes) classes[n_classes] = cls, counts[n_classes++] = 0;
        counts[c] += st->keys[k].count;
        total += st->keys[k].count;
    }
    if (!total) return 0;
    printf("  skipped, out of scope: %d (", total);
    for (c = 0; c < n_classes; ++c) printf("%s%s %d", c ? ", " : "", classes[c], counts[c]);
    printf(")\n");
    return total;
}

/* Out-of-scope skips first; then, not supported yet: plain operator types on one wrapped list, other
   reasons ("test data: ...", "backend: ...") one a line. Returns the out-of-scope skips. */
static int conf_print_folder(const char* folder, conf_stats* st) {
    int k, col = 0, out_of_scope;
    printf("%s: %d passed, %d failed, %d skipped\n", folder, st->passed, st->failed, st->skipped);
    if (st->frozen)
        printf("  (%d of the passed tests pass parameters such as shapes or pads as graph inputs: those inputs were "
               "frozen to their test values)\n", st->frozen);
    if (!st->n_keys) return 0;
    qsort(st->keys, (size_t)st->n_keys, sizeof st->keys[0], conf_cmp_keys);
    out_of_scope = conf_print_out_of_scope(st);
    for (k = 0; k < st->n_keys; ++k) {
        int len;
        if (strchr(st->keys[k].key, ':') || conf_scope_class(st->keys[k].key)) continue;
        if (!col) col = printf("  skipped, not supported yet, op types (tests):");
        len = (int)strlen(st->keys[k].key) + 6;
        if (col + len > 110) col = printf("\n   ");
        col += printf(" %s(%d)", st->keys[k].key, st->keys[k].count);
    }
    if (col) printf("\n");
    for (k = 0; k < st->n_keys; ++k)
        if (strchr(st->keys[k].key, ':') && !conf_scope_class(st->keys[k].key))
            printf("  skipped, %s: %d (e.g. %s)\n", st->keys[k].key, st->keys[k].count, st->keys[k].example);
    return out_of_scope;
}

static int conf_usage(void) {
    fprintf(stderr, "usage: conformance [--data DIR] [--folder NAME]... [--filter SUBSTR] [--verbose] [--backend cpu|cuda] "
                    "[--seeds N]\n");
    return 2;
}

int main(int argc, char** argv) {
    const char* data = "/usr/share/libonnx-testdata/data";
    const char* folders[8];
    const char* filter = NULL;
    const char* backend = "cpu";
    int n_folders = 0, verbose = 0, i, passed = 0, failed = 0, skipped = 0, seeds = 5, out_of_scope = 0;
    static conf_stats st;
    for (i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--data") == 0 && i + 1 < argc) data = argv[++i];
        else if (strcmp(argv[i], "--backend") == 0 && i + 1 < argc) backend = argv[++i];
        else if (strcmp(argv[i], "--seeds") == 0 && i + 1 < argc) seeds = atoi(argv[++i]);
        else if (strcmp(argv[i], "--folder") == 0 && i + 1 < argc && n_folders < 8) folders[n_folders++] = argv[++i];
        else if (strcmp(argv[i], "--filter") == 0 && i + 1 < argc) filter = argv[++i];
        else if (strcmp(argv[i], "--verbose") == 0 || strcmp(argv[i], "-v") == 0) verbose = 1;
        else return conf_usage();
    }
    if (strcmp(backend, "cuda") == 0) {
        char why[512];
#ifndef _WIN32
        setenv("OPARA_CUDA_DRIVER", OPARA_EMU_LIB_DIR "/libcuda.so.1", 0); /* the emulator unless told otherwise */
        setenv("OPARA_CUBLAS", OPARA_EMU_LIB_DIR "/libcublas.so", 0);
        setenv("OPARA_CUDNN", OPARA_EMU_LIB_DIR "/libcudnn.so", 0);
#endif
        if (!opara__cuda_available(NULL, why, sizeof why)) {
            printf("conformance --backend cuda: SKIP (no CUDA driver: %s)\n0 passed, 0 failed, 1 skipped\n", why);
            return 0;
        }
        conf_plans = conf_cuda_plans;
        conf_n_plans = sizeof conf_cuda_plans / sizeof conf_cuda_plans[0];
        conf_runs = seeds < 1 ? 1 : seeds;
        printf("CUDA backend (driver %s): modes eager, graph, sequential graph; %d runs each (emulator seeds)\n",
               getenv("OPARA_CUDA_DRIVER"), conf_runs);
    } else if (strcmp(backend, "cpu") != 0) {
        return conf_usage();
    }
    if (!n_folders) {
        folders[n_folders++] = "node";
        folders[n_folders++] = "pytorch-converted";
        folders[n_folders++] = "pytorch-operator";
    }
    for (i = 0; i < n_folders; ++i) {
        memset(&st, 0, sizeof st);
        if (!conf_folder(data, folders[i], filter, verbose, &st)) {
            failed++;
            continue;
        }
        out_of_scope += conf_print_folder(folders[i], &st);
        passed += st.passed;
        failed += st.failed;
        skipped += st.skipped;
    }
    printf("tolerance: |got - expected| <= %g + %g * |expected| (floats), exact (integers, bool)\n", conf_atol, conf_rtol);
    printf("skipped: %d out of scope (training, random generators, strings/sequences/maps/optionals, TfIdfVectorizer), "
           "%d not supported yet\n", out_of_scope, skipped - out_of_scope);
    printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
    return failed ? 1 : 0;
}
