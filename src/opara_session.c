/* The public session API: shapes for the batch size, the plan, the backend (CPU, or CUDA when a
   driver and a device exist), runs with caller tensors, plan queries and run statistics. */
#include "opara_cpu.h"
#include "opara_model.h"
#include "opara_backend_cuda.h"
#include "opara_export.h"

struct opara_session {
    opara_runtime* rt;
    const opara_model* model;   /* retained: the model outlives the session (opara_model_destroy only drops the caller's reference) */
    const opara__graph* g;
    opara_logger logger;
    opara__errbuf error;
    opara_strategy strategy;
    opara__shape* shapes;
    opara__node_params* params; /* [n_nodes] what the shape engine resolved per node */
    opara_dtype* dtypes;
    uint64_t* value_bytes;
    opara__op_desc* descs;
    opara__plan* plan;
    opara__cpu_exec* exec;
    opara__cuda_session* cuda;  /* the CUDA backend (then exec is NULL and the plan is cuda's) */
    const opara__plan* active;  /* the plan in use */
    void** cuda_out;            /* [n_outputs] host copies of the outputs (CUDA: the backend's pinned staging) */
    const void** cuda_in;       /* [n_inputs] caller's input data of the current run (CUDA) */
    opara_CUdeviceptr* cuda_dev; /* [n_inputs + n_outputs] device pointers of the current device run */
    uint8_t* given; /* [n_inputs] scratch of run: which inputs were supplied */
    char conv_name[192];        /* plan info on CPU: the convolution path, */
    uint32_t n_conv, n_conv_library; /* the Conv count and how many use a BLAS library */
    volatile int32_t busy;
    opara_run_stats stats;
    int has_outputs; /* the last opara_session_run succeeded: opara_session_output_data has data */
};

static opara_result opara__session_fail(opara_session* s, opara_result code, const char* fmt, ...) OPARA__PRINTF(3, 4);
static opara_result opara__session_fail(opara_session* s, opara_result code, const char* fmt, ...) {
    va_list args;
    opara_result r;
    va_start(args, fmt);
    r = opara__fail_into(&s->error, &s->logger, code, fmt, args);
    va_end(args);
    return r;
}

OPARADEF const char* opara_precision_name(opara_precision precision) {
    switch (precision) {
    case OPARA_PRECISION_FP32: return "fp32";
    case OPARA_PRECISION_TF32: return "tf32";
    case OPARA_PRECISION_COUNT:
    case OPARA_PRECISION_FORCE_U32: break;
    }
    return "?";
}

/* 1 when the session should use CUDA; AUTO falls back to CPU with an INFO log saying why. */
static opara_result opara__session_pick_backend(opara_runtime* rt, const opara_session_desc* d, int* use_cuda) {
    char reason[2048];
    opara_result r;
    *use_cuda = 0;
    if (d->backend == OPARA_BACKEND_CPU) return OPARA_OK;
    r = opara__cuda_runtime_check(rt, reason, sizeof reason); /* loads the driver once per runtime */
    if (r == OPARA_OK) {
        *use_cuda = 1;
        return OPARA_OK;
    }
    /* out of host memory is the caller's to see (also under AUTO: the CPU would not choose itself
       for a lasting reason), every other failure is an unusable backend */
    if (r == OPARA_ERR_OUT_OF_MEMORY) return opara__fail(rt, r, "CUDA backend: %s", reason);
    if (d->backend == OPARA_BACKEND_CUDA)
        return opara__fail(rt, OPARA_ERR_NO_BACKEND, "CUDA backend unavailable: %s", reason);
    opara__log(&d->logger, OPARA_LOG_INFO, OPARA_LOGITEM_BACKEND_FALLBACK,
               "CUDA backend unavailable: %s; using the CPU backend", reason);
    return OPARA_OK;
}

/* The one shape and dtype inference of a session (with each node's resolved parameters); every
   backend reads what it found. */
static opara_result opara__session_infer(opara_runtime* rt, const opara__graph* g, int64_t batch, opara__shape* shapes,
                                         opara__node_params* params, opara_dtype* dtypes, uint64_t* value_bytes) {
    opara_result r = opara__infer_shapes_params(rt, g, batch, shapes, params);
    if (r == OPARA_OK) r = opara__refuse_zero_sized(rt, g, shapes);
    if (r == OPARA_OK) r = opara__infer_dtypes(rt, g, dtypes);
    if (r == OPARA_OK) r = opara__value_bytes_from_shapes(g, shapes, value_bytes);
    return r;
}

/* What opara__session_infer fills, zeroed: per value shapes, dtypes and sizes, per node the
   record. 1 when every array was allocated (the caller frees what was, either way). */
static int opara__session_infer_alloc(opara_runtime* rt, const opara__graph* g, opara__shape** shapes,
                                      opara__node_params** params, opara_dtype** dtypes, uint64_t** value_bytes) {
    size_t nv = g->n_values ? g->n_values : 1;
    *shapes = (opara__shape*)opara__calloc(rt, nv, sizeof **shapes);
    *params = (opara__node_params*)opara__calloc(rt, g->n_nodes ? g->n_nodes : 1, sizeof **params);
    *dtypes = (opara_dtype*)opara__calloc(rt, nv, sizeof **dtypes);
    *value_bytes = (uint64_t*)opara__calloc(rt, nv, sizeof **value_bytes);
    return *shapes && *params && *dtypes && *value_bytes;
}

static opara_result opara__session_shapes(opara_session* s, const opara_session_desc* d) {
    const opara__graph* g = s->g;
    int inferred = opara__session_infer_alloc(s->rt, g, &s->shapes, &s->params, &s->dtypes, &s->value_bytes);
    s->descs = (opara__op_desc*)opara__calloc(s->rt, g->n_nodes ? g->n_nodes : 1, sizeof *s->descs);
    s->given = (uint8_t*)opara__calloc(s->rt, g->n_inputs ? g->n_inputs : 1, 1);
    if (!inferred || !s->descs || !s->given) return opara__fail(s->rt, OPARA_ERR_OUT_OF_MEMORY, "session: out of memory");
    return opara__session_infer(s->rt, g, d->batch_size, s->shapes, s->params, s->dtypes, s->value_bytes);
}

/* The CPU plan is made for the CPU's model: descriptors from its rates, and Alg. 2 takes the ready
   op with the shortest estimated time first (a CPU has no per-block GPU resources to fit). */
static opara_result opara__session_plan(opara_session* s, const opara_session_desc* d) {
    const opara__graph* g = s->g;
    opara__plan_desc pd;
    opara__device cpu;
    opara_result r;
    opara__cpu_device(d->threads, &cpu);
    r = opara__describe_ops_resolved(g, s->shapes, s->params, &cpu, s->descs);
    if (r != OPARA_OK) return r;
    memset(&pd, 0, sizeof pd);
    pd.metric = OPARA__METRIC_TIME;
    pd.strategy = d->strategy;
    pd.launch_order = d->launch_order;
    pd.memory_budget = d->memory_budget;
    pd.shapes = s->shapes;
    s->strategy = d->strategy;
    /* Worker threads run the streams truly concurrently: the plan is proven safe before use. */
    r = opara__plan_create_verified(g, s->value_bytes, s->descs, &cpu, &pd, &s->plan);
    s->active = s->plan;
    return r;
}

/* ---- the CUDA backend, driven through its steps (opara_backend_cuda.h) ------------------------- */
#ifndef OPARA_NO_CUDA

/* Describe, plan (verified: the streams run truly concurrently, and a captured graph in any order
   its edges allow), prepare. */
static opara_result opara__cuda_plan_prepare(opara_runtime* rt, const opara__graph* g, opara__cuda_session* cs,
                                             const opara__cuda_shapes* sh, const opara__cuda_options* opt,
                                             opara__op_desc* keep) {
    opara__plan_desc pd;
    const opara__device* dev = NULL;
    opara__plan* plan = NULL;
    opara__op_desc* descs = keep ? keep : (opara__op_desc*)opara__calloc(rt, g->n_nodes ? g->n_nodes : 1, sizeof *descs);
    opara_result r;
    if (!descs)
        return opara__fail_to(&rt->error, opara__cuda_logger(rt, opt), OPARA_ERR_OUT_OF_MEMORY, "CUDA backend: out of host memory");
    if (opt->plan) pd = *opt->plan;
    else memset(&pd, 0, sizeof pd);
    if (opt->mode == OPARA__CUDA_SEQ_GRAPH) pd.strategy = OPARA_STRATEGY_SEQUENTIAL; /* the graph of the sequential plan */
    r = opara__cuda_session_describe(cs, descs, &pd, &dev);
    if (r == OPARA_OK) r = opara__plan_create_verified(g, sh->value_bytes, descs, dev, &pd, &plan);
    if (descs != keep) opara__free(rt, descs);
    return r == OPARA_OK ? opara__cuda_session_prepare(cs, plan) : r;
}

/* keep: [n_nodes] receives the descriptors the plan was made with (NULL: not kept). */
static opara_result opara__cuda_session_make(opara_runtime* rt, const opara__graph* g, const opara__cuda_options* opt,
                                             const opara__cuda_shapes* sh, opara__op_desc* keep, opara__cuda_session** out) {
    opara__cuda_session* cs = NULL;
    opara_result r = opara__cuda_session_open(rt, g, opt, sh, &cs);
    if (r == OPARA_OK) r = opara__cuda_plan_prepare(rt, g, cs, sh, opt, keep);
    if (r != OPARA_OK) {
        opara__cuda_session_destroy(cs); /* makes no opara__fail: the first failure's text stays */
        return r;
    }
    *out = cs;
    return OPARA_OK;
}

/* opt->profile: a session of the sequential plan in eager mode (every node alone on the device) is
   measured, then the real one is planned with the measured rows; nothing of the first stays. */
static opara_result opara__cuda_session_profiled(opara_runtime* rt, const opara__graph* g, const opara__cuda_options* opt,
                                                 const opara__cuda_shapes* sh, opara__op_desc* keep,
                                                 opara__cuda_session** out) {
    opara__cuda_options po = *opt, fo = *opt;
    opara__plan_desc pd;
    opara__cuda_session* ps = NULL;
    opara__cuda_op_profile* rows;
    opara_result r;
    if (opt->plan) pd = *opt->plan;
    else memset(&pd, 0, sizeof pd);
    pd.strategy = OPARA_STRATEGY_SEQUENTIAL;
    pd.launch_order = OPARA_LAUNCH_DEFAULT;
    pd.stream_cap = 0;
    po.profile = 0;
    po.measured = NULL;
    po.mode = OPARA__CUDA_EAGER;
    po.plan = &pd;
    rows = (opara__cuda_op_profile*)opara__calloc(rt, g->n_nodes ? g->n_nodes : 1, sizeof *rows);
    if (!rows)
        return opara__fail_to(&rt->error, opara__cuda_logger(rt, opt), OPARA_ERR_OUT_OF_MEMORY,
                              "CUDA profiler: out of host memory");
    r = opara__cuda_session_make(rt, g, &po, sh, NULL, &ps);
    if (r == OPARA_OK && (r = opara__cuda_session_enter(ps)) != OPARA_OK) /* the failure went to the session */
        opara__fail_to(&rt->error, opara__cuda_logger(rt, opt), r, "CUDA profiler: %s", opara__cuda_session_last_error(ps));
    else if (r == OPARA_OK) { /* its events and the timing run need its context */
        r = opara__cuda_profile_measure(rt, ps, opt, g, rows);
        opara__cuda_session_leave(ps);
    }
    opara__cuda_session_destroy(ps);
    fo.profile = 0;
    fo.measured = rows;
    if (r == OPARA_OK) r = opara__cuda_session_make(rt, g, &fo, sh, keep, out);
    opara__free(rt, rows);
    return r;
}

static opara_result opara__cuda_session_from(opara_runtime* rt, const opara__graph* g, const opara__cuda_options* opt,
                                             const opara__cuda_shapes* sh, opara__op_desc* keep, opara__cuda_session** out) {
    *out = NULL;
    return opt->profile ? opara__cuda_session_profiled(rt, g, opt, sh, keep, out)
                        : opara__cuda_session_make(rt, g, opt, sh, keep, out);
}

OPARA__PRIVATE_TOOL opara_result opara__cuda_session_create(opara_runtime* rt, const opara__graph* g,
                                                           const opara__cuda_options* opt, opara__cuda_session** out) {
    opara__cuda_options o;
    opara__cuda_shapes sh;
    opara__shape* shapes;
    opara__node_params* params;
    opara_dtype* dtypes;
    uint64_t* value_bytes;
    opara_result r;
    const opara_logger* log = opara__cuda_logger(rt, opt);
    if (!out) return opara__fail_to(&rt->error, log, OPARA_ERR_INVALID_ARGS, "CUDA backend: out is NULL");
    *out = NULL;
    if (!g || !g->finalized)
        return opara__fail_to(&rt->error, log, OPARA_ERR_INVALID_ARGS, "CUDA backend: the graph is not finalized");
    if (opt) o = *opt;
    else memset(&o, 0, sizeof o);
    r = opara__session_infer_alloc(rt, g, &shapes, &params, &dtypes, &value_bytes)
            ? OPARA_OK
            : opara__fail_to(&rt->error, log, OPARA_ERR_OUT_OF_MEMORY, "CUDA backend: out of host memory");
    if (r == OPARA_OK) r = opara__session_infer(rt, g, o.batch > 0 ? o.batch : 1, shapes, params, dtypes, value_bytes);
    sh.shapes = shapes, sh.params = params, sh.dtypes = dtypes, sh.value_bytes = value_bytes;
    if (r == OPARA_OK) r = opara__cuda_session_from(rt, g, &o, &sh, NULL, out);
    opara__free(rt, shapes);
    opara__free(rt, params);
    opara__free(rt, dtypes);
    opara__free(rt, value_bytes);
    return r;
}

#else
/* compiled out: opara__cuda_session_create (opara_features.c) says so */
static opara_result opara__cuda_session_from(opara_runtime* rt, const opara__graph* g, const opara__cuda_options* opt,
                                             const opara__cuda_shapes* sh, opara__op_desc* keep, opara__cuda_session** out) {
    (void)sh, (void)keep;
    return opara__cuda_session_create(rt, g, opt, out);
}
#endif

/* The CUDA backend describes the nodes for its device; the session plans (opara__cuda_plan_prepare). */
static opara_result opara__session_cuda(opara_session* s, const opara_session_desc* d) {
    opara__cuda_options o;
    opara__cuda_shapes sh;
    opara__plan_desc pd;
    opara__cuda_info info;
    opara_result r;
    uint32_t i;
    memset(&o, 0, sizeof o);
    memset(&pd, 0, sizeof pd);
    pd.strategy = d->strategy;
    pd.launch_order = d->launch_order;
    pd.memory_budget = d->memory_budget;
    o.device = d->cuda_device;
    o.batch = d->batch_size;
    o.profile = d->cuda_profile;
    o.precision = d->precision;
    o.logger = s->logger;
    /* Eager streams beyond the hardware queues (CUDA_DEVICE_MAX_CONNECTIONS, 8) falsely serialise;
       the simulator shows a soft cap of 8 never slower there (docs/SIMULATOR.md). In a graph
       streams are only edges, so graphs keep the uncapped plan. */
    if (d->cuda_eager) pd.stream_cap = 8;
    o.plan = &pd;
    o.mode = d->cuda_eager ? OPARA__CUDA_EAGER
                           : d->strategy == OPARA_STRATEGY_SEQUENTIAL ? OPARA__CUDA_SEQ_GRAPH : OPARA__CUDA_GRAPH;
    s->strategy = d->strategy;
    s->cuda_out = (void**)opara__calloc(s->rt, s->g->n_outputs ? s->g->n_outputs : 1, sizeof(void*));
    s->cuda_in = (const void**)opara__calloc(s->rt, s->g->n_inputs ? s->g->n_inputs : 1, sizeof(void*));
    s->cuda_dev = (opara_CUdeviceptr*)opara__calloc(s->rt, (size_t)s->g->n_inputs + s->g->n_outputs + 1, sizeof(opara_CUdeviceptr));
    if (!s->cuda_out || !s->cuda_in || !s->cuda_dev) return opara__fail(s->rt, OPARA_ERR_OUT_OF_MEMORY, "session: out of memory");
    sh.shapes = s->shapes, sh.params = s->params, sh.dtypes = s->dtypes, sh.value_bytes = s->value_bytes;
    r = opara__cuda_session_from(s->rt, s->g, &o, &sh, s->descs, &s->cuda);
    if (r != OPARA_OK) return r;
    for (i = 0; i < s->g->n_outputs; ++i) s->cuda_out[i] = (void*)opara__cuda_session_output(s->cuda, i);
    opara__cuda_session_info(s->cuda, &info);
    s->active = info.plan;
    return OPARA_OK;
}

/* AUTO: the CUDA backend failed to initialise after the driver loaded (a bad device ordinal, a
   library clash, a handle or device allocation that failed, a model it cannot lower...): any such
   failure falls back to the CPU, with a WARN log (OPARA_LOGITEM_BACKEND_FALLBACK) that says why
   (the layer that failed has logged it as an ERROR detail too). Undoes the CUDA parts. */
static void opara__session_cuda_fallback(opara_session* s, opara_result failure) {
    opara__log(&s->logger, OPARA_LOG_WARN, OPARA_LOGITEM_BACKEND_FALLBACK,
               "CUDA backend failed to initialise: %s (%s); using the CPU backend", opara_runtime_last_error(s->rt),
               opara_result_string(failure));
    opara__cuda_session_destroy(s->cuda);
    opara__free(s->rt, s->cuda_out);
    opara__free(s->rt, (void*)s->cuda_in);
    opara__free(s->rt, s->cuda_dev);
    s->cuda = NULL;
    s->cuda_out = NULL;
    s->cuda_in = NULL;
    s->cuda_dev = NULL;
    s->active = NULL;
}

/* Host buffer that holds value v after a run (graph outputs and, on CPU, every value). */
static void* opara__session_value_data(const opara_session* s, int32_t v) {
    uint32_t i;
    if (!s->cuda) return opara__cpu_exec_value_data(s->exec, v);
    for (i = 0; i < s->g->n_outputs; ++i)
        if (s->g->outputs[i] == v) return s->cuda_out[i];
    return NULL;
}

/* Every default of opara_session_desc resolved in one place (zero means default), after checking
   what no default can mend. Nothing below re-derives a default. */
static opara_result opara__session_desc_defaults(opara_runtime* rt, const opara_session_desc* desc, opara_session_desc* d) {
    memset(d, 0, sizeof *d);
    if (desc) *d = *desc;
    if (d->backend != OPARA_BACKEND_AUTO && d->backend != OPARA_BACKEND_CPU && d->backend != OPARA_BACKEND_CUDA)
        return opara__fail(rt, OPARA_ERR_BAD_ENUM, "session: unknown backend %d", (int)d->backend);
    if ((unsigned)d->strategy >= (unsigned)OPARA_STRATEGY_COUNT || (unsigned)d->launch_order >= (unsigned)OPARA_LAUNCH_COUNT)
        return opara__fail(rt, OPARA_ERR_BAD_ENUM, "session: unknown strategy or launch order");
    if ((unsigned)d->precision >= (unsigned)OPARA_PRECISION_COUNT)
        return opara__fail(rt, OPARA_ERR_BAD_ENUM, "session: unknown precision %d", (int)d->precision);
    if (!(d->memory_budget >= 0))
        return opara__fail(rt, OPARA_ERR_INVALID_ARGS, "session: memory_budget must be a ratio >= 0 (0: unbounded)");
    if (d->batch_size < 0) return opara__fail(rt, OPARA_ERR_INVALID_ARGS, "session: negative batch size");
    if (d->batch_size == 0) d->batch_size = 1;
    if (d->threads == 0) d->threads = (uint32_t)opara__cpu_count();
    if (!d->logger.func) d->logger = rt->logger;
    return OPARA_OK;
}

OPARADEF opara_result opara_session_create(opara_runtime* runtime, const opara_model* model,
                                           const opara_session_desc* desc, opara_session** out) {
    opara_session_desc d;
    opara_session* s;
    opara_result r;
    char err[OPARA__DETAIL_MAX];
    int use_cuda = 0;
    if (out) *out = NULL;
    if (!runtime || !model || !out) return runtime ? opara__fail(runtime, OPARA_ERR_INVALID_ARGS, "session: NULL argument")
                                                   : OPARA_ERR_INVALID_ARGS;
    r = opara__session_desc_defaults(runtime, desc, &d);
    if (r != OPARA_OK) return r;
    r = opara__session_pick_backend(runtime, &d, &use_cuda);
    if (r != OPARA_OK) return r;
    s = (opara_session*)opara__calloc(runtime, 1, sizeof *s);
    if (!s) return opara__fail(runtime, OPARA_ERR_OUT_OF_MEMORY, "session: out of memory");
    s->rt = runtime;
    s->model = model;
    opara__model_retain(model);
    s->g = opara__model_graph(model);
    s->logger = d.logger;
    r = opara__session_shapes(s, &d);
    if (r == OPARA_OK && use_cuda) {
        r = opara__session_cuda(s, &d);
        /* as in opara__session_pick_backend: running out of host memory is reported, not fallen back
           from (the CPU needs host memory too); a full device (OPARA_ERR_DEVICE_MEMORY) falls back */
        if (r != OPARA_OK && r != OPARA_ERR_OUT_OF_MEMORY && d.backend == OPARA_BACKEND_AUTO) {
            opara__session_cuda_fallback(s, r);
            use_cuda = 0;
            r = OPARA_OK;
        }
    }
    if (r == OPARA_OK && !use_cuda) r = opara__session_plan(s, &d);
    if (r == OPARA_OK && !use_cuda) {
        r = opara__cpu_exec_create(runtime, s->g, s->plan, s->shapes, s->params, s->dtypes, d.threads, d.builtin_gemm,
                                   !d.cpu_keep_weights, d.cpu_pin_workers == 1, err, sizeof err, &s->exec);
        if (r != OPARA_OK) opara__fail(runtime, r, "session: %s", err);
        else opara__cpu_exec_conv_info(s->exec, &s->n_conv, &s->n_conv_library, s->conv_name, sizeof s->conv_name);
    }
    if (r != OPARA_OK) {
        opara_session_destroy(s);
        return r;
    }
    *out = s;
    return OPARA_OK;
}

OPARADEF void opara_session_destroy(opara_session* s) {
    if (!s) return;
    opara__cpu_exec_destroy(s->exec);
    opara__cuda_session_destroy(s->cuda);
    opara__free(s->rt, s->cuda_out);
    opara__free(s->rt, (void*)s->cuda_in);
    opara__free(s->rt, s->cuda_dev);
    if (s->plan) opara__plan_free(s->g->rt, s->plan); /* the planner allocates with the model's runtime */
    opara__free(s->rt, s->shapes);
    opara__free(s->rt, s->dtypes);
    opara__free(s->rt, s->value_bytes);
    opara__free(s->rt, s->descs);
    opara__free(s->rt, s->params);
    opara__free(s->rt, s->given);
    opara__model_release(s->model); /* last: everything above may read the graph */
    opara__free(s->rt, s);
}

OPARADEF uint32_t opara_session_input_count(const opara_session* s) { return s ? s->g->n_inputs : 0; }
OPARADEF uint32_t opara_session_output_count(const opara_session* s) { return s ? s->g->n_outputs : 0; }

static void opara__session_info(const opara_session* s, int32_t v, opara_tensor_info* out) {
    int32_t i;
    memset(out, 0, sizeof *out);
    out->name = s->g->values[v].name;
    out->dtype = s->dtypes[v];
    out->rank = s->shapes[v].ndim;
    for (i = 0; i < s->shapes[v].ndim; ++i) out->dims[i] = s->shapes[v].dims[i];
}

OPARADEF opara_result opara_session_input_info(const opara_session* s, uint32_t index, opara_tensor_info* out) {
    if (!s || !out) return OPARA_ERR_INVALID_ARGS; /* as opara_model_input_info */
    if (index >= s->g->n_inputs) return OPARA_ERR_NOT_FOUND;
    opara__session_info(s, s->g->inputs[index], out);
    return OPARA_OK;
}

OPARADEF opara_result opara_session_output_info(const opara_session* s, uint32_t index, opara_tensor_info* out) {
    if (!s || !out) return OPARA_ERR_INVALID_ARGS; /* as opara_model_output_info */
    if (index >= s->g->n_outputs) return OPARA_ERR_NOT_FOUND;
    opara__session_info(s, s->g->outputs[index], out);
    return OPARA_OK;
}

/* Position of the tensor in list (graph inputs or outputs) by name, or by `fallback` index. */
static int32_t opara__session_match(const opara_session* s, const int32_t* list, uint32_t n, const char* name,
                                    uint32_t fallback) {
    uint32_t i;
    if (!name) return fallback < n ? (int32_t)fallback : -1;
    for (i = 0; i < n; ++i)
        if (strcmp(s->g->values[list[i]].name, name) == 0) return (int32_t)i;
    return -1;
}

static opara_result opara__session_check_tensor(opara_session* s, const opara_tensor* t, int32_t v, const char* what) {
    const opara__shape* sh = &s->shapes[v];
    int32_t i;
    if (t->dtype != s->dtypes[v])
        return opara__session_fail(s, OPARA_ERR_BAD_DTYPE, "%s '%s' is %s, the model wants %s", what, s->g->values[v].name,
                                   opara_dtype_name(t->dtype), opara_dtype_name(s->dtypes[v]));
    if (t->rank != sh->ndim) goto bad_shape;
    for (i = 0; i < sh->ndim; ++i)
        if (t->dims[i] != sh->dims[i]) goto bad_shape;
    if (!t->data && s->value_bytes[v])
        return opara__session_fail(s, OPARA_ERR_INVALID_ARGS, "%s '%s' has no data", what, s->g->values[v].name);
    return OPARA_OK;
bad_shape: {
        char want[160];
        return opara__session_fail(s, OPARA_ERR_SHAPE, "%s '%s' has the wrong shape: the session wants %s", what,
                                   s->g->values[v].name, opara__shape_str(sh, want, sizeof want));
    }
}

static opara_result opara__session_inputs(opara_session* s, const opara_tensor* inputs, uint32_t n) {
    const opara__graph* g = s->g;
    uint32_t i;
    opara_result r;
    memset(s->given, 0, g->n_inputs ? g->n_inputs : 1);
    for (i = 0; i < n; ++i) {
        int32_t at = opara__session_match(s, g->inputs, g->n_inputs, inputs[i].name, i), v;
        if (at < 0) return opara__session_fail(s, OPARA_ERR_NOT_FOUND, "the model has no input '%s'",
                                               inputs[i].name ? inputs[i].name : "(by index)");
        v = g->inputs[at];
        r = opara__session_check_tensor(s, &inputs[i], v, "input");
        if (r != OPARA_OK) return r;
        if (s->given[at]) return opara__session_fail(s, OPARA_ERR_INVALID_ARGS, "input '%s' given twice", g->values[v].name);
        s->given[at] = 1;
        if (s->cuda) s->cuda_in[at] = inputs[i].data;
        else if (s->value_bytes[v]) memcpy(opara__cpu_exec_value_data(s->exec, v), inputs[i].data, (size_t)s->value_bytes[v]);
    }
    for (i = 0; i < g->n_inputs; ++i)
        if (!s->given[i]) return opara__session_fail(s, OPARA_ERR_INVALID_ARGS, "input '%s' is missing",
                                                     g->values[g->inputs[i]].name);
    return OPARA_OK;
}

/* The graph output outputs[i] names (by name, else position), checked; -1 with *r set when not. */
static int32_t opara__session_output_at(opara_session* s, const opara_tensor* outputs, uint32_t i, opara_result* r) {
    const opara__graph* g = s->g;
    int32_t at = opara__session_match(s, g->outputs, g->n_outputs, outputs[i].name, i);
    if (at < 0) {
        *r = opara__session_fail(s, OPARA_ERR_NOT_FOUND, "the model has no output '%s'",
                                 outputs[i].name ? outputs[i].name : "(by index)");
        return -1;
    }
    *r = opara__session_check_tensor(s, &outputs[i], g->outputs[at], "output");
    return *r == OPARA_OK ? at : -1;
}

static opara_result opara__session_outputs(opara_session* s, opara_tensor* outputs, uint32_t n) {
    uint32_t i;
    opara_result r = OPARA_OK;
    for (i = 0; i < n; ++i) {
        int32_t at = opara__session_output_at(s, outputs, i, &r), v;
        if (at < 0) return r;
        v = s->g->outputs[at];
        if (s->value_bytes[v]) memcpy(outputs[i].data, opara__session_value_data(s, v), (size_t)s->value_bytes[v]);
    }
    return OPARA_OK;
}

/* A device run's pointers: inputs (checked by opara__session_inputs) then outputs, checked here
   before anything runs; outputs not asked for stay 0 (not copied). */
static opara_result opara__session_device_io(opara_session* s, const opara_tensor* outputs, uint32_t n) {
    const opara__graph* g = s->g;
    opara_CUdeviceptr* out = s->cuda_dev + g->n_inputs;
    uint32_t i;
    opara_result r = OPARA_OK;
    for (i = 0; i < g->n_inputs; ++i) s->cuda_dev[i] = (opara_CUdeviceptr)(uintptr_t)s->cuda_in[i];
    memset(out, 0, (g->n_outputs ? g->n_outputs : 1) * sizeof *out);
    for (i = 0; i < n; ++i) {
        int32_t at = opara__session_output_at(s, outputs, i, &r);
        if (at < 0) return r;
        out[at] = (opara_CUdeviceptr)(uintptr_t)outputs[i].data;
    }
    return OPARA_OK;
}

/* opara_session_run (device 0) and opara_session_run_device (1). */
static opara_result opara__session_run(opara_session* s, const opara_tensor* inputs, uint32_t n_inputs,
                                       opara_tensor* outputs, uint32_t n_outputs, int device) {
    const char* what = device ? "run_device" : "run";
    opara_result r;
    uint64_t t0;
    char err[OPARA__DETAIL_MAX];
    if (!s) return OPARA_ERR_INVALID_ARGS;
    if (!opara__atomic_cas(&s->busy, 0, 1)) return OPARA_ERR_BUSY; /* the detail belongs to the running call */
    t0 = opara__now_ns();
    if (!device) s->has_outputs = 0; /* a failed run may leave them half-written */
    if (device && !s->cuda)
        r = opara__session_fail(s, OPARA_ERR_INVALID_ARGS, "run_device: device pointers need a CUDA session; this one runs on the CPU");
    else if ((n_inputs && !inputs) || (n_outputs && !outputs)) r = opara__session_fail(s, OPARA_ERR_INVALID_ARGS, "%s: NULL tensors", what);
    else r = opara__session_inputs(s, inputs, n_inputs);
    if (r == OPARA_OK && device) r = opara__session_device_io(s, outputs, n_outputs);
    if (r == OPARA_OK && s->cuda) {
        r = device ? opara__cuda_session_run_device(s->cuda, s->cuda_dev, s->cuda_dev + s->g->n_inputs)
                   : opara__cuda_session_run(s->cuda, s->cuda_in, NULL);
        if (r != OPARA_OK) opara__session_fail(s, r, "%s: %s", what, opara__cuda_session_last_error(s->cuda));
    } else if (r == OPARA_OK) {
        r = opara__cpu_exec_run(s->exec, err, sizeof err);
        if (r != OPARA_OK) opara__session_fail(s, r, "run: %s", err);
    }
    if (r == OPARA_OK && !device) r = opara__session_outputs(s, outputs, n_outputs);
    if (r == OPARA_OK) {
        uint64_t dt = opara__now_ns() - t0;
        if (!device) s->has_outputs = 1;
        s->stats.last_ns = dt;
        s->stats.min_ns = s->stats.runs == 0 || dt < s->stats.min_ns ? dt : s->stats.min_ns;
        s->stats.total_ns += dt;
        s->stats.runs++;
        s->error.text[0] = 0;
    }
    opara__atomic_store(&s->busy, 0);
    return r;
}

OPARADEF opara_result opara_session_run(opara_session* s, const opara_tensor* inputs, uint32_t n_inputs,
                                        opara_tensor* outputs, uint32_t n_outputs) {
    return opara__session_run(s, inputs, n_inputs, outputs, n_outputs, 0);
}

OPARADEF opara_result opara_session_run_device(opara_session* s, const opara_tensor* inputs, uint32_t n_inputs,
                                               opara_tensor* outputs, uint32_t n_outputs) {
    return opara__session_run(s, inputs, n_inputs, outputs, n_outputs, 1);
}

OPARADEF const void* opara_session_output_data(const opara_session* s, uint32_t index) {
    if (!s || index >= s->g->n_outputs || !s->has_outputs) return NULL;
    return opara__session_value_data(s, s->g->outputs[index]);
}

OPARADEF opara_result opara_session_get_plan_info(const opara_session* s, opara_plan_info* out) {
    if (!s || !out) return OPARA_ERR_INVALID_ARGS;
    memset(out, 0, sizeof *out);
    out->strategy = opara_strategy_name(s->strategy);
    out->n_nodes = s->active->n_nodes;
    out->n_streams = s->active->n_streams;
    out->n_events = s->active->stats.n_events;
    out->n_waits = s->active->stats.n_waits;
    out->peak_memory_bytes = s->active->arena_bytes;
    out->no_reuse_bytes = s->active->stats.no_reuse_bytes;
    out->precision = opara_precision_name(OPARA_PRECISION_FP32);
    out->conv = out->kernels = out->libraries = "";
    if (s->cuda) {
        opara__cuda_info info;
        opara__cuda_session_info(s->cuda, &info);
        out->backend = "cuda";
        out->gemm = info.cublas ? "cuBLAS" : "opara_sgemm_f32";
        out->kernels = info.kernels;
        out->libraries = info.libraries;
        out->cuda_mode = info.mode == OPARA__CUDA_EAGER ? "eager" : info.mode == OPARA__CUDA_SEQ_GRAPH ? "sequential-graph" : "graph";
        out->n_workers = s->active->n_lanes ? s->active->n_lanes : 1; /* the CUDA streams */
        out->precision = opara_precision_name(info.precision);
        out->n_conv = info.n_conv;
        out->n_conv_library = info.n_cudnn_convs;
        out->conv = info.n_conv == 0                         ? ""
                    : info.n_cudnn_convs == info.n_conv      ? "cuDNN"
                    : info.n_cudnn_convs == 0                ? "opara_conv2d_f32"
                                                             : "cuDNN + opara_conv2d_f32";
        out->workspace_bytes = info.workspace_bytes;
    } else {
        out->backend = "cpu";
        out->gemm = opara__cpu_exec_gemm_name(s->exec);
        out->n_workers = opara__cpu_exec_workers(s->exec);
        out->n_conv = s->n_conv;
        out->n_conv_library = s->n_conv_library;
        out->conv = s->conv_name;
        out->packed_weight_bytes = opara__cpu_exec_packed_bytes(s->exec);
    }
    return OPARA_OK;
}

OPARADEF opara_result opara_session_get_run_stats(const opara_session* s, opara_run_stats* out) {
    if (!s || !out) return OPARA_ERR_INVALID_ARGS;
    *out = s->stats;
    return OPARA_OK;
}

OPARADEF uint32_t opara_session_get_node_times(const opara_session* s, opara_node_time* out, uint32_t cap) {
    const uint64_t *start, *end;
    const uint32_t* worker;
    uint32_t i;
    if (!s) return 0;
    if (s->cuda) { /* no per-node host timing on CUDA: the stream is the worker, times are 0 */
        for (i = 0; out && i < cap && i < s->active->n_nodes; ++i) {
            uint32_t n = s->active->order[i];
            memset(&out[i], 0, sizeof out[i]);
            out[i].worker = s->active->stream[n];
            out[i].node = n;
        }
        return s->active->n_nodes;
    }
    opara__cpu_exec_node_times(s->exec, &start, &end, &worker);
    for (i = 0; out && i < cap && i < s->plan->n_nodes; ++i) {
        uint32_t n = s->plan->order[i];
        out[i].start_ns = start[n];
        out[i].end_ns = end[n];
        out[i].worker = worker[n];
        out[i].node = n;
    }
    return s->plan->n_nodes;
}

OPARADEF const char* opara_session_last_error(const opara_session* s) { return s ? s->error.text : ""; }

#ifndef OPARA_NO_STDIO
typedef int (*opara__session_writer)(FILE* f, const opara_session* s);

static opara_result opara__session_write_file(const opara_session* s, const char* path, opara__session_writer write) {
    FILE* f;
    int ok;
    if (!s || !path) return OPARA_ERR_INVALID_ARGS;
    f = fopen(path, "w");
    if (!f) return opara__session_fail((opara_session*)s, OPARA_ERR_IO, "cannot open '%s' for writing", path);
    ok = write(f, s);
    if (fclose(f) != 0 || !ok) return opara__session_fail((opara_session*)s, OPARA_ERR_IO, "cannot write '%s'", path);
    return OPARA_OK;
}

static int opara__session_dot(FILE* f, const opara_session* s) { return opara__plan_write_dot(f, s->g, s->plan); }

static int opara__session_trace(FILE* f, const opara_session* s) {
    uint32_t n = opara_session_get_node_times(s, NULL, 0);
    opara_node_time* times = (opara_node_time*)opara__calloc(s->rt, n ? n : 1, sizeof *times);
    int ok;
    if (!times) return 0;
    opara_session_get_node_times(s, times, n);
    ok = opara__write_trace(f, s->g, times, n, "worker");
    opara__free(s->rt, times);
    return ok;
}

OPARADEF opara_result opara_session_write_plan_dot(const opara_session* s, const char* path) {
    return opara__session_write_file(s, path, opara__session_dot);
}

OPARADEF opara_result opara_session_write_trace(const opara_session* s, const char* path) {
    return opara__session_write_file(s, path, opara__session_trace);
}
#endif

OPARA__PRIVATE void opara__session_get_parts(const opara_session* s, opara__session_parts* out) {
    opara__cuda_info info;
    memset(out, 0, sizeof *out);
    out->model = s->model;
    out->plan = s->active;
    out->shapes = s->shapes;
    out->dtypes = s->dtypes;
    out->device = s->cuda ? "cuda" : "cpu";
    out->descs = s->descs; /* what the plan was made with, on either backend */
    if (!s->cuda) return;
    opara__cuda_session_info(s->cuda, &info);
    out->profile = info.profile;
}
