/* The CUDA backend's table (opara_backend.h): the session's steps of opara_backend_cuda.c behind the
   interface, the options a session desc asks for, and the profiling run before planning
   (opara_cuda_profile.c). It sits above the backend and the profiler, so neither calls up. */
#include "../plan/opara_backend.h"
#include "opara_backend_cuda.h"

/* What a session desc asks of the CUDA backend. */
static void opara__cuda_table_options(const opara__backend_given* setup, opara__cuda_options* o) {
    const opara_session_desc* d = setup->desc;
    memset(o, 0, sizeof *o);
    o->device = d->cuda_device;
    o->batch = d->batch_size;
    o->profile = d->cuda_profile;
    o->precision = d->precision;
    o->logger = setup->logger;
    o->mode = d->cuda_eager ? OPARA__CUDA_EAGER
                            : d->strategy == OPARA_STRATEGY_SEQUENTIAL ? OPARA__CUDA_SEQ_GRAPH : OPARA__CUDA_GRAPH;
    /* Eager streams beyond the hardware queues (CUDA_DEVICE_MAX_CONNECTIONS, 8) falsely serialise;
       the simulator shows a soft cap of 8 never slower there (docs/SIMULATOR.md). In a graph
       streams are only edges, so graphs keep the uncapped plan. */
    if (d->cuda_eager) o->eager_stream_cap = 8;
}

/* opt->profile: a session of the sequential plan in eager mode (every node alone on the device) is
   measured; its rows (*rows, the caller frees them) then describe the real session. Nothing of the
   first stays. */
static opara_result opara__cuda_table_profile(const opara__backend_given* setup, const opara__cuda_options* opt,
                                              opara__cuda_op_profile** rows) {
    opara_runtime* rt = setup->rt;
    const opara__graph* g = setup->g;
    opara__cuda_options po = *opt;
    opara__backend_given ps = *setup;
    opara__plan_desc pd;
    void* be = NULL;
    opara_result r;
    *rows = (opara__cuda_op_profile*)opara__calloc(rt, g->n_nodes ? g->n_nodes : 1, sizeof **rows);
    if (!*rows)
        return opara__fail_to(&rt->error, opara__cuda_logger(rt, opt), OPARA_ERR_OUT_OF_MEMORY, "CUDA profiler: out of host memory");
    if (setup->plan) pd = *setup->plan;
    else memset(&pd, 0, sizeof pd);
    pd.strategy = OPARA_STRATEGY_SEQUENTIAL;
    pd.launch_order = OPARA_LAUNCH_DEFAULT;
    pd.stream_cap = 0;
    po.profile = 0;
    po.measured = NULL;
    po.mode = OPARA__CUDA_EAGER;
    po.eager_stream_cap = 0;
    po.plan = &pd;
    ps.plan = &pd;
    ps.options = &po;
    r = opara__backend_make(opara__backend_cuda(), &ps, NULL, &be, NULL);
    if (r == OPARA_OK && (r = opara__cuda_session_enter((opara__cuda_session*)be)) != OPARA_OK) /* the failure went to the session */
        opara__fail_to(&rt->error, opara__cuda_logger(rt, opt), r, "CUDA profiler: %s",
                       opara__cuda_session_last_error((opara__cuda_session*)be));
    else if (r == OPARA_OK) { /* its events and the timing run need its context */
        r = opara__cuda_profile_measure(rt, (opara__cuda_session*)be, opt, g, *rows);
        opara__cuda_session_leave((opara__cuda_session*)be);
    }
    opara__cuda_session_destroy((opara__cuda_session*)be);
    if (r != OPARA_OK) {
        opara__free(rt, *rows);
        *rows = NULL;
    }
    return r;
}

/* The object is the backend's session (opara__cuda_session_create hands it to the tests as such). */
static opara_result opara__cuda_table_open(const opara__backend_given* setup, void** out) {
    opara__cuda_options o;
    opara__cuda_shapes sh;
    opara__cuda_op_profile* rows = NULL;
    opara__cuda_session* cs = NULL;
    opara_result r = OPARA_OK;
    *out = NULL;
    if (setup->options) o = *(const opara__cuda_options*)setup->options;
    else opara__cuda_table_options(setup, &o);
    if (o.profile) {
        r = opara__cuda_table_profile(setup, &o, &rows);
        o.profile = 0;
        o.measured = rows; /* open keeps a copy until describe */
    }
    sh.shapes = setup->shapes, sh.params = setup->params, sh.dtypes = setup->dtypes, sh.value_bytes = setup->value_bytes;
    if (r == OPARA_OK) r = opara__cuda_session_open(setup->rt, setup->g, &o, &sh, &cs);
    opara__free(setup->rt, rows);
    *out = cs;
    return r;
}

static opara_result opara__cuda_table_describe(void* be, opara__op_desc* descs, opara__plan_desc* pd, const opara__device** dev) {
    return opara__cuda_session_describe((opara__cuda_session*)be, descs, pd, dev);
}

static opara_result opara__cuda_table_create(void* be, opara__plan* plan) {
    return opara__cuda_session_prepare((opara__cuda_session*)be, plan);
}

static opara_result opara__cuda_table_run(void* be, const void* const* inputs, void* const* outputs) {
    return opara__cuda_session_run((opara__cuda_session*)be, inputs, outputs);
}

static opara_result opara__cuda_table_run_device(void* be, const void* const* inputs, void* const* outputs) {
    return opara__cuda_session_run_device((opara__cuda_session*)be, inputs, outputs);
}

static const void* opara__cuda_table_output(const void* be, uint32_t index) {
    return opara__cuda_session_output((const opara__cuda_session*)be, index);
}

static const char* opara__cuda_table_conv(const opara__cuda_info* info) {
    if (info->n_conv == 0) return "";
    if (info->n_cudnn_convs == info->n_conv) return "cuDNN";
    return info->n_cudnn_convs == 0 ? "opara_conv2d_f32" : "cuDNN + opara_conv2d_f32";
}

static const char* opara__cuda_table_mode(opara__cuda_mode mode) {
    switch (mode) {
    case OPARA__CUDA_EAGER: return "eager";
    case OPARA__CUDA_SEQ_GRAPH: return "sequential-graph";
    case OPARA__CUDA_GRAPH: break;
    }
    return "graph";
}

static void opara__cuda_table_plan_info(const void* be, opara_plan_info* out) {
    opara__cuda_info info;
    opara__cuda_session_info((const opara__cuda_session*)be, &info);
    out->backend = "cuda";
    out->gemm = info.cublas ? "cuBLAS" : "opara_sgemm_f32";
    out->kernels = info.kernels;
    out->libraries = info.libraries;
    out->cuda_mode = opara__cuda_table_mode(info.mode);
    out->n_workers = info.plan->n_lanes ? info.plan->n_lanes : 1; /* the CUDA streams */
    out->precision = opara_precision_name(info.precision);
    out->n_conv = info.n_conv;
    out->n_conv_library = info.n_cudnn_convs;
    out->conv = opara__cuda_table_conv(&info);
    out->workspace_bytes = info.workspace_bytes;
}

/* No per-node host timing on CUDA: the stream is the worker, times are 0. */
static uint32_t opara__cuda_table_node_times(const void* be, opara_node_time* out, uint32_t cap) {
    opara__cuda_info info;
    uint32_t i;
    opara__cuda_session_info((const opara__cuda_session*)be, &info);
    for (i = 0; out && i < cap && i < info.plan->n_nodes; ++i) {
        uint32_t n = info.plan->order[i];
        memset(&out[i], 0, sizeof out[i]);
        out[i].worker = info.plan->stream[n];
        out[i].node = n;
    }
    return info.plan->n_nodes;
}

static opara_kernel_source opara__cuda_table_kernel_source(uint8_t source) {
    switch ((opara__cuda_res_source)source) {
    case OPARA__CURES_NONE: return OPARA_KERNEL_NONE;
    case OPARA__CURES_DRIVER: return OPARA_KERNEL_DRIVER;
    case OPARA__CURES_ESTIMATE: return OPARA_KERNEL_ESTIMATE;
    case OPARA__CURES_CUPTI: return OPARA_KERNEL_CUPTI;
    case OPARA__CURES_COPY: return OPARA_KERNEL_COPY;
    }
    return OPARA_KERNEL_NONE;
}

/* A node's main launch as the plan's descriptors saw it (the static profile, measured times). */
static opara_result opara__cuda_table_node_kernel(const void* be, uint32_t node, opara_node_kernel* out) {
    opara__cuda_info info;
    const opara__cuda_op_profile* row;
    opara__cuda_session_info((const opara__cuda_session*)be, &info);
    if (!info.profile) return OPARA_ERR_UNSUPPORTED;
    row = &info.profile[node];
    memset(out, 0, sizeof *out);
    memcpy(out->kernel, row->kernel, sizeof out->kernel);
    out->kernel[sizeof out->kernel - 1] = 0;
    memcpy(out->grid, row->grid, sizeof out->grid);
    memcpy(out->block, row->block, sizeof out->block);
    out->regs = row->regs;
    out->smem_static = row->smem_static;
    out->smem_dynamic = row->smem_dynamic;
    out->max_threads = row->max_threads;
    out->source = opara__cuda_table_kernel_source(row->source);
    out->measured = row->measured != 0;
    out->n_runs = row->n_runs;
    out->time_ms = row->time_ms;
    out->time_spread = row->time_spread;
    return OPARA_OK;
}

static const char* opara__cuda_table_last_error(const void* be) {
    return opara__cuda_session_last_error((const opara__cuda_session*)be);
}

static void opara__cuda_table_destroy(void* be) { opara__cuda_session_destroy((opara__cuda_session*)be); }

OPARA__PRIVATE const opara__backend* opara__backend_cuda(void) {
    static const opara__backend table = {
        "cuda", "CUDA", OPARA_BACKEND_CUDA, opara__cuda_runtime_check, opara__cuda_table_open,
        opara__cuda_table_describe, opara__cuda_table_create, opara__cuda_table_run, opara__cuda_table_run_device,
        opara__cuda_table_output, opara__cuda_table_plan_info, opara__cuda_table_node_times, opara__cuda_table_node_kernel,
        opara__cuda_table_last_error, opara__cuda_table_destroy};
    return &table;
}
