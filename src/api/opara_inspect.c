/* The public inspection API (opara_api.h, "Inspection"): a plan made from a model or borrowed from a
   session, read through bounds-checked getters that copy plain structs out; the simulator fed
   from a plan. Nothing here plans or simulates by itself: it calls the planner (opara_sched.c) and
   the simulator (opara_sim.c) and translates their private records into the public ones. */
#include "../model/opara_model.h"
#include "opara_export.h"
#include "../sim/opara_sim.h"

#ifndef OPARA_NO_SIM
/* opara_sim.c (declared there, beside the engine) */
OPARA__PRIVATE opara_result opara__sim_plan(opara_runtime* rt, const opara_sim_device* dev, opara_sim_mode mode,
                                           const opara__plan* plan, const opara__op_desc* descs,
                                           opara_sim_result* out);
OPARA__PRIVATE void opara__sim_device_limits(const opara_sim_device* dev, opara__device* out);
OPARA__PRIVATE opara_result opara__sim_check_device(opara_runtime* rt, const opara_sim_device* d);
#define OPARA__INSPECT_NO_SIM(rt) OPARA_OK
#else
#define OPARA__INSPECT_NO_SIM(rt) \
    opara__fail(rt, OPARA_ERR_UNSUPPORTED, "plan: simulator devices and simulation are compiled out (OPARA_NO_SIM)")
#endif

struct opara_plan {
    const opara_model* model; /* retained; NULL for a declared graph (own_graph) */
    const opara__graph* g;
    const opara__plan* plan;
    const opara__shape* shapes;
    const opara_dtype* dtypes;
    const opara__op_desc* descs;                  /* what the plan was made with */
    char device[32];
    /* what a plan made by opara_plan_create owns (NULL in a session's view) */
    opara__plan* own_plan;
    opara__shape* own_shapes;
    opara_dtype* own_dtypes;
    opara__op_desc* own_descs;
    opara__graph* own_graph; /* opara_plan_create_declared */
};

static opara_runtime* opara__inspect_rt(const opara_plan* p) { return p->g->rt; }

static opara_result opara__inspect_alloc(const opara_model* model, opara_plan** out) {
    opara_runtime* rt = opara__model_graph(model)->rt;
    opara_plan* p = (opara_plan*)opara__calloc(rt, 1, sizeof *p);
    if (!p) return opara__fail(rt, OPARA_ERR_OUT_OF_MEMORY, "plan: out of memory");
    p->model = model;
    p->g = opara__model_graph(model);
    opara__model_retain(model);
    *out = p;
    return OPARA_OK;
}

OPARADEF void opara_plan_destroy(opara_plan* p) {
    opara_runtime* rt;
    if (!p) return;
    rt = opara__inspect_rt(p);
    if (p->own_plan) opara__plan_free(rt, p->own_plan);
    opara__free(rt, p->own_shapes);
    opara__free(rt, p->own_dtypes);
    opara__free(rt, p->own_descs);
    if (p->model) opara__model_release(p->model); /* after the frees above: they use the model's runtime */
    if (p->own_graph) opara__graph_free(p->own_graph);
    opara__free(rt, p->own_graph);
    opara__free(rt, p);
}

/* ---- making a plan ------------------------------------------------------------------------------ */

static opara_result opara__inspect_check_desc(opara_runtime* rt, const opara_plan_desc* d) {
    if ((unsigned)d->strategy >= (unsigned)OPARA_STRATEGY_COUNT || (unsigned)d->launch_order >= (unsigned)OPARA_LAUNCH_COUNT ||
        (unsigned)d->metric >= (unsigned)OPARA_PLAN_METRIC_COUNT)
        return opara__fail(rt, OPARA_ERR_BAD_ENUM, "plan: unknown strategy, launch order or metric");
    if (d->batch_size < 0) return opara__fail(rt, OPARA_ERR_INVALID_ARGS, "plan: negative batch size");
    if (!(d->memory_budget >= 0))
        return opara__fail(rt, OPARA_ERR_INVALID_ARGS, "plan: memory_budget must be a ratio >= 0 (0: unbounded)");
    if (d->alignment & (d->alignment - 1)) return opara__fail(rt, OPARA_ERR_INVALID_ARGS, "plan: alignment %u is not a power of two", d->alignment);
    if (!d->est_start_us != !d->est_end_us)
        return opara__fail(rt, OPARA_ERR_INVALID_ARGS, "plan: est_start_us and est_end_us go together");
    return OPARA_OK;
}

/* The planner's knobs for a public desc. The metric enums match value for value. */
static void opara__inspect_plan_desc(const opara_plan_desc* d, const opara__shape* shapes,
                                     const opara__node_params* params, opara__plan_desc* out) {
    memset(out, 0, sizeof *out);
    out->strategy = d->strategy;
    out->launch_order = d->launch_order;
    out->metric = (opara__metric)d->metric;
    out->stream_cap = d->stream_cap;
    out->stream_cap_hard = d->stream_cap_hard;
    out->memory_budget = d->memory_budget;
    out->alignment = d->alignment;
    out->no_memory_sync = d->no_memory_sync;
    out->no_concat_in_place = d->no_concat_in_place;
    out->est_start_us = d->est_start_us;
    out->est_end_us = d->est_end_us;
    out->verify = d->verify;
    out->shapes = shapes;
    out->params = params;
}

static opara_result opara__inspect_device(opara_runtime* rt, const opara_plan_desc* d, opara__device* dev) {
    const opara__device* preset;
    if (d->device) {
#ifndef OPARA_NO_SIM
        opara_result r = opara__sim_check_device(rt, d->device); /* the rates and limits the cost model divides by */
        if (r == OPARA_OK) opara__sim_device_limits(d->device, dev);
        return r;
#else
        (void)dev;
        return OPARA__INSPECT_NO_SIM(rt);
#endif
    }
    preset = opara__device_default();
    if (!preset) return opara__fail(rt, OPARA_ERR_INTERNAL, "plan: no default device");
    *dev = *preset;
    return OPARA_OK;
}

/* Shapes and dtypes of every value, and each node's record: inferred for a model, as a session
   does; as declared for a declared graph (the symbolic batch replaced by the batch size), its
   records resolved from those shapes. */
static opara_result opara__inspect_shapes(opara_plan* p, int64_t batch, opara__node_params* params) {
    const opara__graph* g = p->g;
    uint32_t v;
    int32_t k;
    if (p->model) {
        opara_result r = opara__infer_shapes_params(g->rt, g, batch, p->own_shapes, params);
        return r == OPARA_OK ? opara__infer_dtypes(g->rt, g, p->own_dtypes) : r;
    }
    for (v = 0; v < g->n_values; ++v) {
        p->own_shapes[v] = g->values[v].shape;
        p->own_dtypes[v] = g->values[v].dtype;
        for (k = 0; k < p->own_shapes[v].ndim; ++k)
            if (p->own_shapes[v].dims[k] == OPARA__DIM_BATCH) p->own_shapes[v].dims[k] = batch;
    }
    return opara__resolve_node_params(g, p->own_shapes, params);
}

static opara_result opara__inspect_plan(opara_plan* p, const opara_plan_desc* d) {
    const opara__graph* g = p->g;
    opara_runtime* rt = g->rt;
    size_t nv = g->n_values ? g->n_values : 1, nn = g->n_nodes ? g->n_nodes : 1;
    uint64_t* bytes = (uint64_t*)opara__calloc(rt, nv, sizeof *bytes);
    opara__node_params* params = (opara__node_params*)opara__calloc(rt, nn, sizeof *params);
    opara__device dev;
    opara__plan_desc pd;
    opara_result r;
    memset(&dev, 0, sizeof dev); /* a refused device leaves it unset, and the plan's device name reads it */
    r = opara__inspect_device(rt, d, &dev);
    p->own_shapes = (opara__shape*)opara__calloc(rt, nv, sizeof *p->own_shapes);
    p->own_dtypes = (opara_dtype*)opara__calloc(rt, nv, sizeof *p->own_dtypes);
    p->own_descs = (opara__op_desc*)opara__calloc(rt, nn, sizeof *p->own_descs);
    if (r == OPARA_OK && (!bytes || !params || !p->own_shapes || !p->own_dtypes || !p->own_descs))
        r = opara__fail(rt, OPARA_ERR_OUT_OF_MEMORY, "plan: out of memory");
    if (r == OPARA_OK) r = opara__inspect_shapes(p, d->batch_size > 0 ? d->batch_size : 1, params);
    if (r == OPARA_OK) r = opara__value_bytes_from_shapes(g, p->own_shapes, bytes);
    if (r == OPARA_OK) r = opara__describe_ops_resolved(g, p->own_shapes, params, &dev, p->own_descs);
    opara__inspect_plan_desc(d, p->own_shapes, params, &pd);
    if (r == OPARA_OK) r = opara__plan_create(g, bytes, p->own_descs, &dev, &pd, &p->own_plan);
    if (p->own_plan) { /* the plan outlives nothing it points to */
        p->own_plan->desc.shapes = NULL;
        p->own_plan->desc.params = NULL;
    }
    opara__free(rt, bytes);
    opara__free(rt, params);
    opara__format(p->device, sizeof p->device, "%s", dev.name ? dev.name : "");
    p->plan = p->own_plan;
    p->shapes = p->own_shapes;
    p->dtypes = p->own_dtypes;
    p->descs = p->own_descs;
    return r;
}

OPARADEF opara_result opara_plan_create(const opara_model* model, const opara_plan_desc* desc, opara_plan** out) {
    opara_plan_desc d;
    opara_plan* p = NULL;
    opara_result r;
    if (out) *out = NULL;
    if (!model || !out) return model ? opara__fail(opara__model_graph(model)->rt, OPARA_ERR_INVALID_ARGS, "plan: NULL argument")
                                     : OPARA_ERR_INVALID_ARGS;
    memset(&d, 0, sizeof d);
    if (desc) d = *desc;
    r = opara__inspect_check_desc(opara__model_graph(model)->rt, &d);
    if (r == OPARA_OK) r = opara__inspect_alloc(model, &p);
    if (r == OPARA_OK) r = opara__inspect_plan(p, &d);
    if (r != OPARA_OK) {
        opara_plan_destroy(p);
        return r;
    }
    *out = p;
    return OPARA_OK;
}

OPARADEF opara_result opara_plan_create_declared(opara_builder* builder, const opara_plan_desc* desc, opara_plan** out) {
    opara_plan_desc d;
    opara_plan* p = NULL;
    opara__graph* g;
    opara_runtime* rt;
    opara_result r;
    if (out) *out = NULL;
    if (!builder || !out) return OPARA_ERR_INVALID_ARGS;
    rt = opara__builder_runtime(builder);
    memset(&d, 0, sizeof d);
    if (desc) d = *desc;
    r = opara__inspect_check_desc(rt, &d);
    if (r != OPARA_OK) return r;
    p = (opara_plan*)opara__calloc(rt, 1, sizeof *p);
    g = (opara__graph*)opara__calloc(rt, 1, sizeof *g);
    if (!p || !g) {
        opara__free(rt, p);
        opara__free(rt, g);
        return opara__fail(rt, OPARA_ERR_OUT_OF_MEMORY, "plan: out of memory");
    }
    p->own_graph = g;
    p->g = g;
    r = opara__builder_declared_graph(builder, g);
    if (r == OPARA_OK) r = opara__inspect_plan(p, &d);
    if (r != OPARA_OK) {
        opara_plan_destroy(p);
        return r;
    }
    *out = p;
    return OPARA_OK;
}

OPARADEF opara_result opara_session_get_plan(const opara_session* session, opara_plan** out) {
    opara__session_parts parts;
    opara_plan* p = NULL;
    opara_result r;
    if (out) *out = NULL;
    if (!session || !out) return OPARA_ERR_INVALID_ARGS;
    opara__session_get_parts(session, &parts);
    if (!parts.plan) return OPARA_ERR_INVALID_STATE;
    r = opara__inspect_alloc(parts.model, &p);
    if (r != OPARA_OK) return r;
    p->plan = parts.plan;
    p->shapes = parts.shapes;
    p->dtypes = parts.dtypes;
    p->descs = parts.descs;
    opara__format(p->device, sizeof p->device, "%s", parts.device);
    *out = p;
    return OPARA_OK;
}

/* ---- reading it --------------------------------------------------------------------------------- */

static uint64_t opara__inspect_live_bytes(const opara_plan* p) {
    uint64_t live = p->plan->stats.live_bytes; /* kept by budgeted plans only */
    if (!live && opara__live_peak(p->g, p->plan, p->plan->order, &live) != OPARA_OK) live = 0;
    return live;
}

OPARADEF opara_result opara_plan_get_stats(const opara_plan* p, opara_plan_stats* out) {
    const opara__plan_stats* st;
    if (!p || !out) return OPARA_ERR_INVALID_ARGS;
    st = &p->plan->stats;
    memset(out, 0, sizeof *out);
    out->strategy = p->plan->desc.strategy;
    out->launch_order = p->plan->desc.launch_order;
    out->device = p->device;
    out->n_nodes = p->plan->n_nodes;
    out->n_values = p->plan->n_values;
    out->n_streams = p->plan->n_streams;
    out->n_lanes = st->n_lanes;
    out->n_events = st->n_events;
    out->n_waits = st->n_waits;
    out->n_cross_edges = st->n_cross_edges;
    out->n_pruned_waits = st->n_pruned_waits;
    out->n_forks = st->n_forks;
    out->n_joins = st->n_joins;
    out->n_inplace = st->n_inplace;
    out->n_concat_in_place = st->n_concat_in_place;
    out->n_views = st->n_views;
    out->n_memory_waits = st->n_memory_waits;
    out->alignment = p->plan->alignment;
    out->arena_bytes = p->plan->arena_bytes;
    out->no_reuse_bytes = st->no_reuse_bytes;
    out->budget_bytes = st->budget_bytes;
    out->live_bytes = opara__inspect_live_bytes(p);
    out->memory_budget = p->plan->desc.memory_budget;
    out->plan_ns = st->total_ns;
    out->order_ns = st->order_ns;
    out->streams_ns = st->streams_ns;
    out->sync_ns = st->sync_ns;
    out->memory_ns = st->memory_ns;
    return OPARA_OK;
}

OPARADEF uint32_t opara_plan_node_count(const opara_plan* p) { return p ? p->plan->n_nodes : 0; }
OPARADEF uint32_t opara_plan_stream_count(const opara_plan* p) { return p ? p->plan->n_streams : 0; }
OPARADEF uint32_t opara_plan_tensor_count(const opara_plan* p) { return p ? p->plan->n_values : 0; }

/* OPARA_OK when p and out are given and index < count. */
static opara_result opara__inspect_index(const opara_plan* p, const void* out, uint32_t index, uint32_t count) {
    if (!p || !out) return OPARA_ERR_INVALID_ARGS;
    return index < count ? OPARA_OK : OPARA_ERR_NOT_FOUND;
}

OPARADEF opara_result opara_plan_get_node(const opara_plan* p, uint32_t node, opara_plan_node* out) {
    const opara__plan* pl;
    const opara__node* nd;
    opara_result r = opara__inspect_index(p, out, node, p ? p->plan->n_nodes : 0);
    if (r != OPARA_OK) return r;
    pl = p->plan;
    nd = &p->g->nodes[node];
    memset(out, 0, sizeof *out);
    out->op = opara__op_name(nd->op);
    out->name = nd->name ? nd->name : "";
    out->order = pl->position[node];
    out->stream = pl->stream[node];
    out->stream_rank = pl->stream_seq[node];
    out->lane = pl->lane[node];
    out->level = pl->level[node];
    out->records_event = pl->records_event[node] != 0;
    out->n_waits = pl->wait_start[node + 1] - pl->wait_start[node];
    out->n_inputs = nd->n_inputs;
    out->n_outputs = nd->n_outputs;
    return OPARA_OK;
}

OPARADEF opara_result opara_plan_node_at(const opara_plan* p, uint32_t order, uint32_t* node) {
    opara_result r = opara__inspect_index(p, node, order, p ? p->plan->n_nodes : 0);
    if (r == OPARA_OK) *node = p->plan->order[order];
    return r;
}

OPARADEF opara_result opara_plan_node_wait(const opara_plan* p, uint32_t node, uint32_t k, uint32_t* waits_on) {
    opara_result r = opara__inspect_index(p, waits_on, node, p ? p->plan->n_nodes : 0);
    if (r != OPARA_OK) return r;
    if (k >= p->plan->wait_start[node + 1] - p->plan->wait_start[node]) return OPARA_ERR_NOT_FOUND;
    *waits_on = p->plan->wait_nodes[p->plan->wait_start[node] + k];
    return OPARA_OK;
}

static opara_result opara__inspect_node_io(const opara_plan* p, uint32_t node, uint32_t k, int32_t* tensor, int outputs) {
    const opara__node* nd;
    opara_result r = opara__inspect_index(p, tensor, node, p ? p->plan->n_nodes : 0);
    if (r != OPARA_OK) return r;
    nd = &p->g->nodes[node];
    if (k >= (outputs ? nd->n_outputs : nd->n_inputs)) return OPARA_ERR_NOT_FOUND;
    *tensor = outputs ? nd->outputs[k] : nd->inputs[k];
    return OPARA_OK;
}

OPARADEF opara_result opara_plan_node_input(const opara_plan* p, uint32_t node, uint32_t k, int32_t* tensor) {
    return opara__inspect_node_io(p, node, k, tensor, 0);
}

OPARADEF opara_result opara_plan_node_output(const opara_plan* p, uint32_t node, uint32_t k, int32_t* tensor) {
    return opara__inspect_node_io(p, node, k, tensor, 1);
}

OPARADEF opara_result opara_plan_get_stream(const opara_plan* p, uint32_t stream, opara_plan_stream* out) {
    const opara__plan* pl;
    opara_result r = opara__inspect_index(p, out, stream, p ? p->plan->n_streams : 0);
    if (r != OPARA_OK) return r;
    pl = p->plan;
    memset(out, 0, sizeof *out);
    out->first_node = pl->stream_first[stream];
    out->last_node = pl->stream_last[stream];
    out->n_nodes = pl->stream_seq[out->last_node]; /* ranks are 1-based and dense on a stream */
    out->lane = pl->stream_lane[stream];
    out->forks = pl->stream_fork[stream] != 0;
    out->joins = pl->stream_join[stream] != 0;
    return OPARA_OK;
}

static opara_storage opara__inspect_storage(uint8_t storage) {
    switch ((opara__storage)storage) {
    case OPARA__STORAGE_NONE: return OPARA_STORAGE_NONE;
    case OPARA__STORAGE_ARENA: return OPARA_STORAGE_ARENA;
    case OPARA__STORAGE_EXTERNAL: return OPARA_STORAGE_EXTERNAL;
    }
    return OPARA_STORAGE_NONE;
}

static opara_alias opara__inspect_alias(uint8_t kind) {
    switch ((opara__alias_kind)kind) {
    case OPARA__ALIAS_NONE: return OPARA_ALIAS_NONE;
    case OPARA__ALIAS_INPLACE: return OPARA_ALIAS_INPLACE;
    case OPARA__ALIAS_CONCAT: return OPARA_ALIAS_CONCAT;
    case OPARA__ALIAS_VIEW: return OPARA_ALIAS_VIEW;
    }
    return OPARA_ALIAS_NONE;
}

OPARADEF opara_result opara_plan_get_tensor(const opara_plan* p, uint32_t tensor, opara_plan_tensor* out) {
    const opara__plan* pl;
    const opara__value* v;
    int32_t d;
    opara_result r = opara__inspect_index(p, out, tensor, p ? p->plan->n_values : 0);
    if (r != OPARA_OK) return r;
    pl = p->plan;
    v = &p->g->values[tensor];
    memset(out, 0, sizeof *out);
    out->name = v->name ? v->name : "";
    out->dtype = p->dtypes ? p->dtypes[tensor] : v->dtype;
    out->rank = p->shapes ? p->shapes[tensor].ndim : -1;
    for (d = 0; d < out->rank && d < OPARA_MAX_DIMS; ++d) out->dims[d] = p->shapes[tensor].dims[d];
    out->bytes = pl->value_bytes[tensor];
    out->storage = opara__inspect_storage(pl->storage[tensor]);
    out->offset = out->storage == OPARA_STORAGE_ARENA ? pl->offset[tensor] : 0;
    out->alias = opara__inspect_alias(pl->alias_kind[tensor]);
    out->alias_root = pl->alias_root[tensor];
    out->alias_offset = pl->alias_offset[tensor];
    out->producer = v->producer;
    out->is_input = v->kind == OPARA__VALUE_INPUT;
    out->is_output = v->is_output != 0;
    out->is_constant = v->kind == OPARA__VALUE_CONST;
    out->data = out->is_constant ? v->data : NULL;
    return OPARA_OK;
}

OPARADEF opara_result opara_plan_get_node_cost(const opara_plan* p, uint32_t node, opara_node_cost* out) {
    const opara__op_desc* c;
    opara_result r = opara__inspect_index(p, out, node, p ? p->plan->n_nodes : 0);
    if (r != OPARA_OK) return r;
    if (!p->descs) return OPARA_ERR_UNSUPPORTED;
    c = &p->descs[node];
    memset(out, 0, sizeof *out);
    out->grid = c->grid;
    out->block_threads = c->block_threads;
    out->regs_per_thread = c->regs_per_thread;
    out->smem_per_block = c->smem_per_block;
    out->flops = c->flops;
    out->bytes = c->bytes;
    out->resource_class = c->op_class == OPARA__CLASS_MEMORY ? OPARA_RESOURCE_MEMORY : OPARA_RESOURCE_COMPUTE;
    out->kernel_less = c->kernel_less != 0;
    out->has_info = c->has_info != 0;
    out->time_measured = c->time_measured != 0;
    out->time_ms = c->time_ms;
    return OPARA_OK;
}

OPARADEF opara_result opara_plan_verify(const opara_plan* p) {
    if (!p) return OPARA_ERR_INVALID_ARGS;
    return opara__plan_verify(p->g, p->plan);
}

#ifndef OPARA_NO_STDIO
OPARADEF opara_result opara_plan_write_dot(const opara_plan* p, const char* path) {
    FILE* f;
    int ok;
    if (!p || !path) return OPARA_ERR_INVALID_ARGS;
    f = opara__fopen(path, "w");
    if (!f) return opara__fail(opara__inspect_rt(p), OPARA_ERR_IO, "cannot open '%s' for writing", path);
    ok = opara__plan_write_dot(f, p->g, p->plan);
    if (fclose(f) != 0 || !ok) return opara__fail(opara__inspect_rt(p), OPARA_ERR_IO, "cannot write '%s'", path);
    return OPARA_OK;
}
#endif

OPARADEF opara_result opara_plan_simulate(const opara_plan* p, const opara_sim_device* dev, opara_sim_mode mode,
                                          opara_sim_result* out) {
    if (out) memset(out, 0, sizeof *out);
    if (!p || !dev || !out) return OPARA_ERR_INVALID_ARGS;
    if ((unsigned)mode > (unsigned)OPARA_SIM_EAGER) return opara__fail(opara__inspect_rt(p), OPARA_ERR_BAD_ENUM, "sim: unknown mode");
    if (!p->descs) return opara__fail(opara__inspect_rt(p), OPARA_ERR_UNSUPPORTED, "sim: the plan keeps no cost descriptors");
#ifndef OPARA_NO_SIM
    return opara__sim_plan(opara__inspect_rt(p), dev, mode, p->plan, p->descs, out);
#else
    return OPARA__INSPECT_NO_SIM(opara__inspect_rt(p));
#endif
}

/* ---- the model and the CUDA session ------------------------------------------------------------- */

OPARADEF opara_result opara_model_max_width(const opara_model* model, uint32_t max_nodes, uint32_t* out) {
    const opara__graph* g;
    if (!model || !out) return OPARA_ERR_INVALID_ARGS;
    g = opara__model_graph(model);
    if (!max_nodes) max_nodes = 20000;
    if (g->n_nodes > max_nodes)
        return opara__fail(g->rt, OPARA_ERR_LIMIT_EXCEEDED, "max width: %u nodes (more than %u)", g->n_nodes, max_nodes);
    return opara__graph_max_width(g->rt, g, out, NULL);
}

OPARADEF opara_result opara_model_save_memory(const opara_model* model, void** data, size_t* size) {
    opara__bytes bytes;
    opara_result r;
    if (data) *data = NULL;
    if (size) *size = 0;
    if (!model || !data || !size) return OPARA_ERR_INVALID_ARGS;
    memset(&bytes, 0, sizeof bytes);
    r = opara__format_write(opara__model_graph(model)->rt, opara__model_graph(model), 0, &bytes);
    if (r != OPARA_OK) return r;
    *data = bytes.data;
    *size = bytes.size;
    return OPARA_OK;
}

OPARADEF opara_result opara_session_get_node_kernel(const opara_session* session, uint32_t node, opara_node_kernel* out) {
    if (!session || !out) return OPARA_ERR_INVALID_ARGS;
    return opara__session_node_kernel(session, node, out);
}
