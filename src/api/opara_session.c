/* The public session API: shapes for the batch size, the plan, the backend (CPU, or CUDA when a
   driver and a device exist) reached only through its table (opara_backend.h), runs with caller
   tensors, plan queries and run statistics. */
#include "../plan/opara_backend.h"
#include "../cuda/opara_backend_cuda.h" /* opara__cuda_session_create, the tests' composition */
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
    opara__op_desc* descs;      /* what the plan was made with */
    const opara__backend* backend; /* the backend's table */
    void* be;                   /* its object for this session */
    const opara__plan* plan;    /* the plan in use (the backend owns it) */
    const void** in;            /* [n_inputs] the caller's input data of the current run */
    void** out_ptrs;            /* [n_outputs] a run's output pointers (NULL: not copied; host runs keep every
                                   output in the backend too) */
    uint8_t* given; /* [n_inputs] scratch of run: which inputs were supplied */
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

/* The compiled-in backends, in OPARA_BACKEND_AUTO's order of preference (NULL past the end). */
static const opara__backend* opara__session_backend_at(uint32_t i) {
    const opara__backend* list[] = {
#ifndef OPARA_NO_CUDA
        opara__backend_cuda(),
#endif
        opara__backend_cpu()};
    return i < sizeof list / sizeof list[0] ? list[i] : NULL;
}

static const char* opara__session_backend_title(opara_backend kind) {
    switch (kind) {
    case OPARA_BACKEND_CPU: return "CPU";
    case OPARA_BACKEND_CUDA: return "CUDA";
    case OPARA_BACKEND_AUTO:
    case OPARA_BACKEND_FORCE_U32: break;
    }
    return "AUTO";
}

/* The first backend from list position `from` on that the desc allows and that can run here (its
   position in *at). AUTO passes over an unusable one with an INFO log saying why. */
static opara_result opara__session_pick_backend(opara_runtime* rt, const opara_session_desc* d, uint32_t from, uint32_t* at) {
    char reason[2048];
    const opara__backend* b;
    for (*at = from; (b = opara__session_backend_at(*at)) != NULL; ++*at) {
        const opara__backend* next = opara__session_backend_at(*at + 1);
        opara_result r;
        if (d->backend != OPARA_BACKEND_AUTO && b->kind != d->backend) continue;
        r = b->available(rt, reason, sizeof reason); /* CUDA: loads the driver once per runtime */
        if (r == OPARA_OK) return OPARA_OK;
        /* out of host memory is the caller's to see (also under AUTO: the CPU would not choose itself
           for a lasting reason), every other failure is an unusable backend */
        if (r == OPARA_ERR_OUT_OF_MEMORY) return opara__fail(rt, r, "%s backend: %s", b->title, reason);
        if (d->backend != OPARA_BACKEND_AUTO || !next)
            return opara__fail(rt, OPARA_ERR_NO_BACKEND, "%s backend unavailable: %s", b->title, reason);
        opara__log(&d->logger, OPARA_LOG_INFO, OPARA_LOGITEM_BACKEND_FALLBACK, "%s backend unavailable: %s; using the %s backend",
                   b->title, reason, next->title);
    }
    return opara__fail(rt, OPARA_ERR_NO_BACKEND, "%s backend unavailable: it is compiled out (OPARA_NO_%s)",
                       opara__session_backend_title(d->backend), opara__session_backend_title(d->backend));
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
    s->in = (const void**)opara__calloc(s->rt, g->n_inputs ? g->n_inputs : 1, sizeof *s->in);
    s->out_ptrs = (void**)opara__calloc(s->rt, g->n_outputs ? g->n_outputs : 1, sizeof *s->out_ptrs);
    if (!inferred || !s->descs || !s->given || !s->in || !s->out_ptrs) return opara__fail(s->rt, OPARA_ERR_OUT_OF_MEMORY, "session: out of memory");
    return opara__session_infer(s->rt, g, d->batch_size, s->shapes, s->params, s->dtypes, s->value_bytes);
}

/* What the backend's open borrows: the resolved desc, what the plan must be (the backend adds its
   needs in describe) and the one inference's results. */
static void opara__session_setup(const opara_session* s, const opara_session_desc* d, const opara__plan_desc* pd,
                                 opara__backend_given* out) {
    memset(out, 0, sizeof *out);
    out->rt = s->rt;
    out->g = s->g;
    out->desc = d;
    out->plan = pd;
    out->shapes = s->shapes, out->params = s->params, out->dtypes = s->dtypes, out->value_bytes = s->value_bytes;
    out->logger = s->logger;
}

/* The backend at list position `at` describes the nodes for its device, the session plans once,
   the backend takes the plan. AUTO: a backend that fails to initialise (after its check passed: a
   bad device ordinal, a library clash, a handle or device allocation that failed, a model it cannot
   lower...) falls back to the next usable one, with a WARN log (OPARA_LOGITEM_BACKEND_FALLBACK) that
   says why (the layer that failed has logged it as an ERROR detail too); nothing of it stays. */
static opara_result opara__session_backend(opara_session* s, const opara_session_desc* d, uint32_t at) {
    opara__plan_desc pd;
    opara__backend_given setup;
    memset(&pd, 0, sizeof pd);
    pd.strategy = d->strategy;
    pd.launch_order = d->launch_order;
    pd.memory_budget = d->memory_budget;
    opara__session_setup(s, d, &pd, &setup);
    for (;;) {
        const opara__backend* b = opara__session_backend_at(at);
        opara_result r = opara__backend_make(b, &setup, s->descs, &s->be, &s->plan);
        if (r == OPARA_OK) {
            s->backend = b;
            return OPARA_OK;
        }
        /* as in opara__session_pick_backend: running out of host memory is reported, not fallen back
           from (the CPU needs host memory too); a full device (OPARA_ERR_DEVICE_MEMORY) falls back */
        if (r == OPARA_ERR_OUT_OF_MEMORY || d->backend != OPARA_BACKEND_AUTO || !opara__session_backend_at(at + 1)) return r;
        opara__log(&s->logger, OPARA_LOG_WARN, OPARA_LOGITEM_BACKEND_FALLBACK, "%s backend failed to initialise: %s (%s); using the %s backend",
                   b->title, opara_runtime_last_error(s->rt), opara_result_string(r), opara__session_backend_at(at + 1)->title);
        r = opara__session_pick_backend(s->rt, d, at + 1, &at);
        if (r != OPARA_OK) return r;
    }
}

#ifndef OPARA_NO_CUDA
OPARA__PRIVATE_TOOL opara_result opara__cuda_session_create(opara_runtime* rt, const opara__graph* g,
                                                           const opara__cuda_options* opt, opara__cuda_session** out) {
    opara__cuda_options o;
    opara__backend_given setup;
    opara__shape* shapes;
    opara__node_params* params;
    opara_dtype* dtypes;
    uint64_t* value_bytes;
    void* be = NULL;
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
    memset(&setup, 0, sizeof setup);
    setup.rt = rt, setup.g = g, setup.plan = o.plan, setup.logger = *log, setup.options = &o;
    setup.shapes = shapes, setup.params = params, setup.dtypes = dtypes, setup.value_bytes = value_bytes;
    if (r == OPARA_OK) r = opara__backend_make(opara__backend_cuda(), &setup, NULL, &be, NULL);
    *out = (opara__cuda_session*)be; /* the CUDA table's object is the backend's session */
    opara__free(rt, shapes);
    opara__free(rt, params);
    opara__free(rt, dtypes);
    opara__free(rt, value_bytes);
    return r;
}
#endif

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
    uint32_t at = 0;
    if (out) *out = NULL;
    if (!runtime || !model || !out) return runtime ? opara__fail(runtime, OPARA_ERR_INVALID_ARGS, "session: NULL argument")
                                                   : OPARA_ERR_INVALID_ARGS;
    r = opara__session_desc_defaults(runtime, desc, &d);
    if (r != OPARA_OK) return r;
    r = opara__session_pick_backend(runtime, &d, 0, &at);
    if (r != OPARA_OK) return r;
    s = (opara_session*)opara__calloc(runtime, 1, sizeof *s);
    if (!s) return opara__fail(runtime, OPARA_ERR_OUT_OF_MEMORY, "session: out of memory");
    s->rt = runtime;
    s->model = model;
    opara__model_retain(model);
    s->g = opara__model_graph(model);
    s->logger = d.logger;
    s->strategy = d.strategy;
    r = opara__session_shapes(s, &d);
    if (r == OPARA_OK) r = opara__session_backend(s, &d, at);
    if (r != OPARA_OK) {
        opara_session_destroy(s);
        return r;
    }
    *out = s;
    return OPARA_OK;
}

OPARADEF void opara_session_destroy(opara_session* s) {
    if (!s) return;
    if (s->backend) s->backend->destroy(s->be); /* the plan with it */
    opara__free(s->rt, (void*)s->in);
    opara__free(s->rt, s->out_ptrs);
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
        s->in[at] = inputs[i].data;
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

/* After a host run: the backend filled one tensor per graph output (opara__session_output_ptrs); a
   tensor naming an output that an earlier one named gets its copy here. */
static void opara__session_outputs(opara_session* s, opara_tensor* outputs, uint32_t n) {
    uint32_t i;
    for (i = 0; i < n; ++i) {
        int32_t at = opara__session_match(s, s->g->outputs, s->g->n_outputs, outputs[i].name, i), v;
        if (at < 0 || outputs[i].data == s->out_ptrs[at]) continue; /* checked before the run */
        v = s->g->outputs[at];
        if (s->value_bytes[v]) memcpy(outputs[i].data, s->backend->output(s->be, (uint32_t)at), (size_t)s->value_bytes[v]);
    }
}

/* A run's output pointers (host or device), checked here before anything runs (the inputs' by
   opara__session_inputs); outputs not asked for stay NULL (not copied). */
static opara_result opara__session_output_ptrs(opara_session* s, const opara_tensor* outputs, uint32_t n) {
    uint32_t i;
    opara_result r = OPARA_OK;
    for (i = 0; i < s->g->n_outputs; ++i) s->out_ptrs[i] = NULL;
    for (i = 0; i < n; ++i) {
        int32_t at = opara__session_output_at(s, outputs, i, &r);
        if (at < 0) return r;
        s->out_ptrs[at] = outputs[i].data;
    }
    return OPARA_OK;
}

/* opara_session_run (device 0) and opara_session_run_device (1). */
static opara_result opara__session_run(opara_session* s, const opara_tensor* inputs, uint32_t n_inputs,
                                       opara_tensor* outputs, uint32_t n_outputs, int device) {
    const char* what = device ? "run_device" : "run";
    opara_result r;
    uint64_t t0;
    if (!s) return OPARA_ERR_INVALID_ARGS;
    if (!opara__atomic_cas(&s->busy, 0, 1)) return OPARA_ERR_BUSY; /* the detail belongs to the running call */
    t0 = opara__now_ns();
    if (!device) s->has_outputs = 0; /* a failed run may leave them half-written */
    if (device && !s->backend->run_device)
        r = opara__session_fail(s, OPARA_ERR_INVALID_ARGS, "run_device: device pointers need a CUDA session; this one runs on the %s",
                                s->backend->title);
    else if ((n_inputs && !inputs) || (n_outputs && !outputs)) r = opara__session_fail(s, OPARA_ERR_INVALID_ARGS, "%s: NULL tensors", what);
    else r = opara__session_inputs(s, inputs, n_inputs);
    if (r == OPARA_OK) r = opara__session_output_ptrs(s, outputs, n_outputs);
    if (r == OPARA_OK) {
        r = device ? s->backend->run_device(s->be, s->in, s->out_ptrs) : s->backend->run(s->be, s->in, s->out_ptrs);
        if (r != OPARA_OK) opara__session_fail(s, r, "%s: %s", what, s->backend->last_error(s->be));
    }
    if (r == OPARA_OK && !device) opara__session_outputs(s, outputs, n_outputs);
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
    return s->backend->output(s->be, index);
}

OPARADEF opara_result opara_session_get_plan_info(const opara_session* s, opara_plan_info* out) {
    if (!s || !out) return OPARA_ERR_INVALID_ARGS;
    memset(out, 0, sizeof *out);
    out->strategy = opara_strategy_name(s->strategy);
    out->n_nodes = s->plan->n_nodes;
    out->n_streams = s->plan->n_streams;
    out->n_events = s->plan->stats.n_events;
    out->n_waits = s->plan->stats.n_waits;
    out->peak_memory_bytes = s->plan->arena_bytes;
    out->no_reuse_bytes = s->plan->stats.no_reuse_bytes;
    out->precision = opara_precision_name(OPARA_PRECISION_FP32);
    out->conv = out->kernels = out->libraries = "";
    s->backend->plan_info(s->be, out);
    return OPARA_OK;
}

OPARADEF opara_result opara_session_get_run_stats(const opara_session* s, opara_run_stats* out) {
    if (!s || !out) return OPARA_ERR_INVALID_ARGS;
    *out = s->stats;
    return OPARA_OK;
}

OPARADEF uint32_t opara_session_get_node_times(const opara_session* s, opara_node_time* out, uint32_t cap) {
    return s ? s->backend->node_times(s->be, out, cap) : 0;
}

OPARADEF const char* opara_session_last_error(const opara_session* s) { return s ? s->error.text : ""; }

#ifndef OPARA_NO_STDIO
typedef int (*opara__session_writer)(FILE* f, const opara_session* s);

static opara_result opara__session_write_file(const opara_session* s, const char* path, opara__session_writer write) {
    FILE* f;
    int ok;
    if (!s || !path) return OPARA_ERR_INVALID_ARGS;
    f = opara__fopen(path, "w");
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
    memset(out, 0, sizeof *out);
    out->model = s->model;
    out->plan = s->plan;
    out->shapes = s->shapes;
    out->dtypes = s->dtypes;
    out->device = s->backend->name;
    out->descs = s->descs; /* what the plan was made with, on either backend */
}

OPARA__PRIVATE opara_result opara__session_node_kernel(const opara_session* s, uint32_t node, opara_node_kernel* out) {
    if (node >= s->g->n_nodes) return OPARA_ERR_NOT_FOUND;
    return s->backend->node_kernel ? s->backend->node_kernel(s->be, node, out) : OPARA_ERR_UNSUPPORTED;
}
