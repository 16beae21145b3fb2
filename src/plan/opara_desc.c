/* Device presets and the default analytic operator descriptors.

   The descriptors are ESTIMATES for planning when no backend has measured anything: FLOPs and
   bytes follow from the shapes (exact arithmetic), the launch shapes are plausible values for
   each kernel family, chosen to resemble what cuDNN/cuBLAS and simple elementwise kernels use:
     family          block  regs  smem/block  grid
     conv (GEMM)      256    96   16 KiB      ceil(N*P*Q/128) * ceil(K/64) tiles
     depthwise conv   256    32   0           ceil(outputs/256)
     GEMM/MatMul      256   128   24 KiB      batch * ceil(M/128) * ceil(N/128) tiles
     reductions       256    32   2 KiB       one block per reduced row (Softmax, LayerNorm, ReduceMean,
                                              GlobalAveragePool)
     transpose        256    24   4224 B      ceil(outputs/256) (a 32x33 float tile)
     pooling          256    32   0           ceil(outputs/256)
     elementwise/copy 256    16   0           ceil(outputs/256)
     views            no kernel (kernel_less)
   The class is compute when FLOPs/bytes reaches the device's balance point (peak FLOP/s over
   bandwidth), memory otherwise; ops without FLOPs (copies) are memory; without shapes, the op
   type's default (convolutions and matrix products compute, everything else memory). */
#include "opara_sched.h"
#include "../model/opara_model.h"

/* Public specifications: SM count, per-block/per-SM limits (compute capability tables), FP32 peak
   at boost clock, DRAM bandwidth. max_smem_per_block is the default 48 KiB (cudaDeviceProp
   sharedMemPerBlock), not the opt-in maximum. */
static const opara__device opara__devices[] = {
    /* GeForce RTX 2080 SUPER: TU104, 48 SMs, sm_75, 3072 cores at 1815 MHz, 496 GB/s */
    {"rtx2080s", 48, 1024, 1024, 65536, 65536, 49152, 65536, 16, 11.15e12, 496e9, OPARA__DEVICE_GPU, 0},
    /* Tesla V100 SXM2: 80 SMs, sm_70, 15.7 TFLOP/s, 900 GB/s */
    {"v100", 80, 1024, 2048, 65536, 65536, 49152, 98304, 32, 15.7e12, 900e9, OPARA__DEVICE_GPU, 0},
    /* A100 PCIe 40 GB: 108 SMs, sm_80, 19.5 TFLOP/s, 1555 GB/s */
    {"a100", 108, 1024, 2048, 65536, 65536, 49152, 167936, 32, 19.5e12, 1555e9, OPARA__DEVICE_GPU, 0},
    /* H100 SXM5: 132 SMs, sm_90, 67 TFLOP/s, 3.35 TB/s */
    {"h100", 132, 1024, 2048, 65536, 65536, 49152, 233472, 32, 67e12, 3.35e12, OPARA__DEVICE_GPU, 0},
    /* Jetson AGX Orin 64 GB: 16 SMs, sm_87, 5.3 TFLOP/s, 204.8 GB/s */
    {"orin", 16, 1024, 1536, 65536, 65536, 49152, 167936, 16, 5.3e12, 204.8e9, OPARA__DEVICE_GPU, 0},
};

OPARA__PRIVATE const opara__device* opara__device_preset(const char* name) {
    size_t i;
    if (!name) return NULL;
    for (i = 0; i < OPARA__ARRAY_COUNT(opara__devices); ++i)
        if (strcmp(opara__devices[i].name, name) == 0) return &opara__devices[i];
    return NULL;
}

OPARA__PRIVATE const opara__device* opara__device_default(void) { return &opara__devices[0]; }

OPARA__PRIVATE double opara__device_balance(const opara__device* dev) {
    if (!dev) dev = opara__device_default();
    return dev->bandwidth > 0 ? dev->peak_flops / dev->bandwidth : 0.0;
}

OPARA__PRIVATE int opara__op_is_view(opara__op op) { return opara__op_info_of(op)->work == OPARA__WORK_VIEW; }

OPARA__PRIVATE opara__op_class opara__op_default_class(opara__op op) {
    return opara__op_info_of(op)->flags & OPARA__OPF_COMPUTE ? OPARA__CLASS_COMPUTE : OPARA__CLASS_MEMORY;
}

/* ---- sizes ----------------------------------------------------------------------------------- */

static double opara__elems(const opara__shape* s) {
    double n = 1;
    int32_t i;
    if (!s || s->ndim < 0) return 0;
    for (i = 0; i < s->ndim; ++i) n *= (double)(s->dims[i] > 0 ? s->dims[i] : 0);
    return n;
}

OPARA__PRIVATE opara_result opara__value_bytes_from_shapes(const opara__graph* g, const opara__shape* shapes,
                                                          uint64_t* out) {
    uint32_t v;
    for (v = 0; v < g->n_values; ++v) {
        const opara__shape* s = &shapes[v];
        int64_t n = (int64_t)opara_dtype_size(g->values[v].dtype);
        int32_t d;
        out[v] = 0;
        if (s->ndim < 0) continue;
        if (s->ndim > OPARA_MAX_DIMS)
            return opara__fail(g->rt, OPARA_ERR_SHAPE, "value '%s' has rank %d", g->values[v].name, (int)s->ndim);
        for (d = 0; d < s->ndim; ++d) {
            if (s->dims[d] < 0)
                return opara__fail(g->rt, OPARA_ERR_SHAPE, "value '%s' has an unresolved dimension %d",
                                   g->values[v].name, (int)d);
            if (!opara__mul_i64(n, s->dims[d], &n))
                return opara__fail(g->rt, OPARA_ERR_LIMIT_EXCEEDED, "value '%s' is too large", g->values[v].name);
        }
        out[v] = (uint64_t)n;
    }
    return OPARA_OK;
}

/* ---- descriptors ----------------------------------------------------------------------------- */

typedef struct opara__desc_ctx {
    const opara__graph* g;
    const opara__shape* shapes;
    const opara__node_params* params; /* [n_nodes] the shape engine's records */
    const opara__node* n;
    uint32_t node;
} opara__desc_ctx;

/* The node's record; NULL when the engine could not resolve it (unknown shapes). */
static const opara__node_params* opara__desc_params(const opara__desc_ctx* c) {
    return c->params[c->node].resolved ? &c->params[c->node] : NULL;
}

static const opara__shape* opara__in_shape(const opara__desc_ctx* c, uint32_t i) {
    return i < c->n->n_inputs && c->n->inputs[i] >= 0 ? &c->shapes[c->n->inputs[i]] : NULL;
}

static const opara__shape* opara__out_shape(const opara__desc_ctx* c, uint32_t i) {
    return i < c->n->n_outputs && c->n->outputs[i] >= 0 ? &c->shapes[c->n->outputs[i]] : NULL;
}

static double opara__value_nbytes(const opara__desc_ctx* c, int32_t v) {
    return v < 0 ? 0 : opara__elems(&c->shapes[v]) * (double)opara_dtype_size(c->g->values[v].dtype);
}

static double opara__node_bytes(const opara__desc_ctx* c) {
    double b = 0;
    uint32_t i;
    for (i = 0; i < c->n->n_inputs; ++i) b += opara__value_nbytes(c, c->n->inputs[i]);
    for (i = 0; i < c->n->n_outputs; ++i) b += opara__value_nbytes(c, c->n->outputs[i]);
    return b;
}

static uint32_t opara__blocks(double work, double per_block) {
    double b = work / per_block;
    if (b < 1) return 1;
    if (b > 2147483647.0) return 2147483647u;
    return (uint32_t)(b + 0.999999);
}

static void opara__set_launch(opara__op_desc* d, uint32_t grid, uint32_t threads, uint32_t regs, uint32_t smem) {
    d->grid = grid;
    d->block_threads = threads;
    d->regs_per_thread = regs;
    d->smem_per_block = smem;
    d->has_info = 1;
}

static void opara__describe_conv(const opara__desc_ctx* c, opara__op_desc* d) {
    const opara__shape* x = opara__in_shape(c, 0);
    const opara__shape* w = opara__in_shape(c, c->n->op == OPARA__OP_QLINEAR_CONV ? 3 : 1);
    const opara__shape* y = opara__out_shape(c, 0);
    const opara__node_params* p = opara__desc_params(c);
    double out = opara__elems(y), taps = 1, group = p ? (double)p->u.window.group : 1;
    int32_t i;
    if (!x || !w || !y || w->ndim < 3 || y->ndim < 3 || x->ndim < 2) {
        opara__set_launch(d, opara__blocks(out, 256), 256, 96, 16384);
        return;
    }
    for (i = 1; i < w->ndim; ++i) taps *= (double)w->dims[i]; /* C/g * R * S */
    /* Conv: 2*N*K*(C/g)*R*S*P*Q = 2*outputs*taps; ConvTranspose (W is [C, K/g, R, S]): 2*inputs*taps */
    d->flops = 2.0 * (c->n->op == OPARA__OP_CONV_TRANSPOSE ? opara__elems(x) : out) * taps;
    if (group > 1 && (double)x->dims[1] == group) {
        opara__set_launch(d, opara__blocks(out, 256), 256, 32, 0);
        return;
    }
    {
        double npq = out / (double)(y->dims[1] > 0 ? y->dims[1] : 1);
        double tiles = (double)opara__blocks(npq, 128) * (double)opara__blocks((double)y->dims[1], 64);
        opara__set_launch(d, opara__blocks(tiles, 1), 256, 96, 16384);
    }
}

static void opara__describe_matmul(const opara__desc_ctx* c, opara__op_desc* d) {
    const opara__shape* a = opara__in_shape(c, 0);
    const opara__shape* y = opara__out_shape(c, 0);
    const opara__node_params* p = opara__desc_params(c);
    double m, n, k, batch;
    if (!a || !y || a->ndim < 1 || y->ndim < 1) {
        opara__set_launch(d, 1, 256, 128, 24576);
        return;
    }
    n = (double)y->dims[y->ndim - 1];
    m = y->ndim >= 2 ? (double)y->dims[y->ndim - 2] : 1;
    batch = n * m > 0 ? opara__elems(y) / (m * n) : 0;
    if (c->n->op == OPARA__OP_GEMM && p && p->u.gemm.trans_a) k = a->ndim >= 2 ? (double)a->dims[0] : 1;
    else k = (double)a->dims[a->ndim - 1];
    d->flops = 2.0 * batch * m * n * k;
    opara__set_launch(d, opara__blocks(batch * (double)opara__blocks(m, 128) * (double)opara__blocks(n, 128), 1), 256,
                      128, 24576);
}

static void opara__describe_pool(const opara__desc_ctx* c, opara__op_desc* d) {
    const opara__node_params* p = opara__desc_params(c);
    double taps = 1, out = opara__elems(opara__out_shape(c, 0));
    int32_t i;
    for (i = 0; p && i < p->u.window.n_spatial; ++i) taps *= (double)p->u.window.kernel[i];
    d->flops = out * taps;
    opara__set_launch(d, opara__blocks(out, 256), 256, 32, 0);
}

static void opara__describe_rows(const opara__desc_ctx* c, opara__op_desc* d) {
    opara__op op = c->n->op;
    const opara__shape* x = opara__in_shape(c, 0);
    double in = opara__elems(x), rows = 1;
    if (op == OPARA__OP_GLOBAL_AVERAGE_POOL && x && x->ndim >= 2) rows = (double)x->dims[0] * (double)x->dims[1];
    else if (op == OPARA__OP_REDUCE_MEAN) rows = opara__elems(opara__out_shape(c, 0));
    else if (x && x->ndim >= 1) rows = in / (double)(x->dims[x->ndim - 1] > 0 ? x->dims[x->ndim - 1] : 1);
    d->flops = in * opara__op_info_of(op)->flops_per_elem;
    opara__set_launch(d, opara__blocks(rows, 1), 256, 32, 2048);
}

/* FLOPs per element of the activation fused into an Add, Sub, Mul or Div (those of its own operator). */
static double opara__fused_act_flops(const opara__desc_ctx* c) {
    const opara__node_params* p = opara__desc_params(c);
    opara__op op = c->n->op;
    if (!p || (op != OPARA__OP_ADD && op != OPARA__OP_SUB && op != OPARA__OP_MUL && op != OPARA__OP_DIV)) return 0;
    switch (p->u.broadcast.activation) {
    case OPARA__FUSED_NONE: case OPARA__FUSED_UNKNOWN: return 0;
    case OPARA__FUSED_RELU: return opara__op_info_of(OPARA__OP_RELU)->flops_per_elem;
    case OPARA__FUSED_GELU: case OPARA__FUSED_GELU_TANH: return opara__op_info_of(OPARA__OP_GELU)->flops_per_elem;
    }
    return 0;
}

static void opara__describe_elementwise(const opara__desc_ctx* c, opara__op_desc* d) {
    double out = opara__elems(opara__out_shape(c, 0));
    d->flops = out * (opara__op_info_of(c->n->op)->flops_per_elem + opara__fused_act_flops(c));
    opara__set_launch(d, opara__blocks(out, 256), 256, 16, 0);
}

/* The roofline lower bound of a kernel's time: max(FLOPs / peak, bytes / bandwidth). */
static double opara__roofline_ms(const opara__op_desc* d, const opara__device* dev) {
    double compute = dev->peak_flops > 0 ? d->flops / dev->peak_flops : 0;
    double memory = dev->bandwidth > 0 ? d->bytes / dev->bandwidth : 0;
    return 1e3 * OPARA__MAX(compute, memory);
}

static void opara__describe_node(const opara__desc_ctx* c, const opara__device* dev, opara__op_desc* d) {
    opara__op op = c->n->op;
    memset(d, 0, sizeof *d);
    d->bytes = opara__node_bytes(c);
    switch (opara__op_info_of(op)->work) {
    case OPARA__WORK_VIEW:
        d->kernel_less = 1;
        d->op_class = OPARA__CLASS_MEMORY;
        return;
    case OPARA__WORK_CONV: opara__describe_conv(c, d); break;
    case OPARA__WORK_MATMUL: opara__describe_matmul(c, d); break;
    case OPARA__WORK_POOL: opara__describe_pool(c, d); break;
    case OPARA__WORK_ROWS: opara__describe_rows(c, d); break;
    case OPARA__WORK_TRANSPOSE:
        opara__set_launch(d, opara__blocks(opara__elems(opara__out_shape(c, 0)), 256), 256, 24, 4224);
        break;
    case OPARA__WORK_ELEMENTWISE: opara__describe_elementwise(c, d); break;
    }
    if (d->flops <= 0 && d->bytes <= 0) d->op_class = (uint8_t)opara__op_default_class(op);
    else if (d->flops <= 0) d->op_class = OPARA__CLASS_MEMORY;
    else d->op_class = (uint8_t)(d->flops >= opara__device_balance(dev) * d->bytes ? OPARA__CLASS_COMPUTE
                                                                                   : OPARA__CLASS_MEMORY);
    d->time_ms = opara__roofline_ms(d, dev);
}

OPARA__PRIVATE opara_result opara__resolve_node_params(const opara__graph* g, const opara__shape* shapes,
                                                      opara__node_params* params) {
    uint32_t i, k, max_in = 1, max_out = 1;
    const opara__shape** in;
    opara__shape** out;
    opara__shape* scratch; /* the outputs, thrown away */
    opara_result r;
    for (i = 0; i < g->n_nodes; ++i) {
        max_in = OPARA__MAX(max_in, g->nodes[i].n_inputs);
        max_out = OPARA__MAX(max_out, g->nodes[i].n_outputs);
    }
    in = (const opara__shape**)opara__calloc(g->rt, max_in, sizeof *in);
    out = (opara__shape**)opara__calloc(g->rt, max_out, sizeof *out);
    scratch = (opara__shape*)opara__calloc(g->rt, max_out, sizeof *scratch);
    r = in && out && scratch ? OPARA_OK : opara__fail(g->rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory resolving node records");
    for (i = 0; i < g->n_nodes && r == OPARA_OK; ++i) {
        const opara__node* n = &g->nodes[i];
        memset(&params[i], 0, sizeof params[i]);
        if (n->n_inputs > OPARA_MAX_NODE_IO || n->n_outputs > OPARA_MAX_NODE_IO) continue; /* unresolved */
        for (k = 0; k < n->n_inputs; ++k) in[k] = n->inputs[k] >= 0 ? &shapes[n->inputs[k]] : NULL;
        for (k = 0; k < n->n_outputs; ++k) out[k] = &scratch[k];
        (void)opara__infer_node_shapes(g->rt, g, i, OPARA__SHAPE_TOLERANT, 1, in, out, &params[i]);
    }
    opara__free(g->rt, (void*)in);
    opara__free(g->rt, out);
    opara__free(g->rt, scratch);
    return r;
}

OPARA__PRIVATE opara_result opara__describe_ops(const opara__graph* g, const opara__shape* shapes,
                                               const opara__device* dev, opara__op_desc* out) {
    opara__node_params* params;
    opara_result r;
    if (!g || !shapes || !out) return g ? opara__fail(g->rt, OPARA_ERR_INVALID_ARGS, "describe_ops: NULL argument")
                                        : OPARA_ERR_INVALID_ARGS;
    params = (opara__node_params*)opara__calloc(g->rt, g->n_nodes ? g->n_nodes : 1, sizeof *params);
    r = params ? opara__resolve_node_params(g, shapes, params)
               : opara__fail(g->rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory describing the graph");
    if (r == OPARA_OK) r = opara__describe_ops_resolved(g, shapes, params, dev, out);
    opara__free(g->rt, params);
    return r;
}

OPARA__PRIVATE opara_result opara__describe_ops_resolved(const opara__graph* g, const opara__shape* shapes,
                                                        const opara__node_params* params, const opara__device* dev,
                                                        opara__op_desc* out) {
    opara__desc_ctx c;
    uint32_t i;
    if (!params) return opara__describe_ops(g, shapes, dev, out);
    if (!g || !shapes || !out) return g ? opara__fail(g->rt, OPARA_ERR_INVALID_ARGS, "describe_ops: NULL argument")
                                        : OPARA_ERR_INVALID_ARGS;
    if (!dev) dev = opara__device_default();
    c.g = g;
    c.shapes = shapes;
    c.params = params;
    for (i = 0; i < g->n_nodes; ++i) {
        c.n = &g->nodes[i];
        c.node = i;
        opara__describe_node(&c, dev, &out[i]);
    }
    return OPARA_OK;
}
