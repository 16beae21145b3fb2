/* Shared fixture of the CPU kernel tests: one graph node with attributes, tensors allocated by
   the test, prepare + run in randomly split work ranges (as several workers would). */
#ifndef TEST_CPU_COMMON_H
#define TEST_CPU_COMMON_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct kt {
    opara_runtime* rt;
    opara__graph g;
    int32_t node;
    opara__cpu_tensor in[10], out[4];
    uint32_t n_in, n_out;
    opara__cpu_op op;
    opara__node_params params;
    char err[256];
} kt;

static uint64_t kt_rng = 88172645463325252ull;

static uint32_t kt_rand(void) {
    kt_rng ^= kt_rng << 13;
    kt_rng ^= kt_rng >> 7;
    kt_rng ^= kt_rng << 17;
    return (uint32_t)(kt_rng >> 11);
}
static int kt_randint(int lo, int hi) { return lo + (int)(kt_rand() % (uint32_t)(hi - lo + 1)); }
static float kt_randf(void) { return (float)((double)(kt_rand() % 2000001) / 1000000.0 - 1.0); }

static size_t kt_numel(int ndim, const int64_t* dims) {
    size_t n = 1;
    int i;
    for (i = 0; i < ndim; ++i) n *= (size_t)dims[i];
    return n;
}

static void kt_init(kt* k, opara__op op, uint32_t n_in, uint32_t n_out) {
    int32_t ins[10], outs[4];
    uint32_t i;
    char name[16];
    memset(k, 0, sizeof *k);
    opara_runtime_create(NULL, &k->rt);
    opara__graph_init(&k->g, k->rt);
    for (i = 0; i < n_in; ++i) {
        sprintf(name, "i%u", i);
        ins[i] = opara__graph_add_value(&k->g, name, OPARA_DTYPE_F32, NULL);
    }
    for (i = 0; i < n_out; ++i) {
        sprintf(name, "o%u", i);
        outs[i] = opara__graph_add_value(&k->g, name, OPARA_DTYPE_F32, NULL);
    }
    k->node = opara__graph_add_node(&k->g, op, "n", n_in, ins, n_out, outs);
    k->n_in = n_in;
    k->n_out = n_out;
}

static void kt_set_tensor(opara__cpu_tensor* t, opara_dtype dt, int ndim, const int64_t* dims) {
    int i;
    free(t->data);
    t->dtype = dt;
    t->ndim = ndim;
    for (i = 0; i < ndim; ++i) t->dims[i] = dims[i];
    t->data = calloc(kt_numel(ndim, dims) + 1, opara_dtype_size(dt));
}

/* Input i with random f32 values in [-1, 1]. */
static float* kt_in_f32(kt* k, int i, int ndim, const int64_t* dims) {
    size_t n = kt_numel(ndim, dims), j;
    float* d;
    kt_set_tensor(&k->in[i], OPARA_DTYPE_F32, ndim, dims);
    d = (float*)k->in[i].data;
    for (j = 0; j < n; ++j) d[j] = kt_randf();
    return d;
}

static void* kt_in(kt* k, int i, opara_dtype dt, int ndim, const int64_t* dims) {
    kt_set_tensor(&k->in[i], dt, ndim, dims);
    return k->in[i].data;
}

/* Output i, pre-filled with NaN (f32) so unwritten elements show up. */
static void* kt_out(kt* k, int i, opara_dtype dt, int ndim, const int64_t* dims) {
    size_t n = kt_numel(ndim, dims), j;
    kt_set_tensor(&k->out[i], dt, ndim, dims);
    if (dt == OPARA_DTYPE_F32)
        for (j = 0; j < n; ++j) ((float*)k->out[i].data)[j] = NAN;
    return k->out[i].data;
}

static void kt_int(kt* k, const char* name, int64_t v) { opara__node_set_int(&k->g, k->node, name, v); }
static void kt_float(kt* k, const char* name, float v) { opara__node_set_float(&k->g, k->node, name, v); }
static void kt_ints(kt* k, const char* name, const int64_t* v, uint32_t n) { opara__node_set_ints(&k->g, k->node, name, v, n); }
static void kt_floats(kt* k, const char* name, const float* v, uint32_t n) { opara__node_set_floats(&k->g, k->node, name, v, n); }
static void kt_str(kt* k, const char* name, const char* v) { opara__node_set_string(&k->g, k->node, name, v); }

/* The worker count kernels are prepared for (0: unknown), which decides how convolutions split. */
static uint32_t kt_workers = 0;

/* What a session's shape engine resolves for the node (pads after auto_pad, ...), from the input
   shapes; left unresolved when the engine refuses them (the kernel then refuses too). */
static void kt_resolve(kt* k) {
    opara__shape shapes[10], out[4];
    const opara__shape* in[10];
    opara__shape* outp[4];
    uint32_t i;
    for (i = 0; i < k->n_in && i < 10; ++i) {
        shapes[i].ndim = k->in[i].ndim;
        memcpy(shapes[i].dims, k->in[i].dims, sizeof k->in[i].dims);
        in[i] = k->in[i].data ? &shapes[i] : NULL;
    }
    for (i = 0; i < k->n_out && i < 4; ++i) outp[i] = &out[i];
    (void)opara__infer_node_shapes(k->rt, &k->g, (uint32_t)k->node, OPARA__SHAPE_STRICT, 1, in, outp, &k->params);
}

static opara_result kt_prepare(kt* k, const opara__blas* blas) {
    kt_resolve(k);
    memset(&k->op, 0, sizeof k->op);
    k->op.params = &k->params;
    k->op.workers = kt_workers;
    k->op.node = &k->g.nodes[k->node];
    k->op.n_in = k->n_in;
    k->op.n_out = k->n_out;
    k->op.in = k->in;
    k->op.out = k->out;
    k->op.blas = blas;
    return opara__cpu_prepare(&k->op, k->err, sizeof k->err);
}

/* Prepares and runs the work items in up to 3 random chunks, last chunk first. */
static opara_result kt_run(kt* k, const opara__blas* blas) {
    opara_result r = kt_prepare(k, blas);
    float* scratch;
    size_t n, a, b;
    if (r != OPARA_OK) return r;
    if (k->op.packed_floats) { /* what the executor does for a constant B */
        k->op.packed = (float*)malloc(k->op.packed_floats * sizeof(float));
        if (k->op.packed) opara__cpu_pack_weights(&k->op);
    }
    n = k->op.work_items;
    scratch = (float*)malloc((k->op.scratch_floats + 1) * sizeof(float));
    a = n ? (size_t)kt_rand() % (n + 1) : 0;
    b = a + (n > a ? (size_t)kt_rand() % (n - a + 1) : 0);
    r = k->op.fn(&k->op, b, n, scratch);
    if (r == OPARA_OK) r = k->op.fn(&k->op, a, b, scratch);
    if (r == OPARA_OK) r = k->op.fn(&k->op, 0, a, scratch);
    free(scratch);
    free(k->op.packed);
    k->op.packed = NULL;
    return r;
}

static void kt_free(kt* k) {
    uint32_t i;
    for (i = 0; i < 10; ++i) free(k->in[i].data);
    for (i = 0; i < 4; ++i) free(k->out[i].data);
    opara__graph_free(&k->g);
    opara_runtime_destroy(k->rt);
}

/* Max |a-b| / (1 + |a|) over n floats; NaN in b counts as a failure (returns 1e30). */
static double kt_maxerr(const float* ref, const float* got, size_t n) {
    double worst = 0.0;
    size_t i;
    for (i = 0; i < n; ++i) {
        double e;
        if (got[i] != got[i] && ref[i] == ref[i]) return 1e30;
        e = fabs((double)ref[i] - (double)got[i]) / (1.0 + fabs((double)ref[i]));
        if (e > worst) worst = e;
    }
    return worst;
}

static void kt_unravel(size_t idx, int ndim, const int64_t* dims, int64_t* out) {
    int d;
    for (d = ndim - 1; d >= 0; --d) {
        out[d] = (int64_t)(idx % (size_t)dims[d]);
        idx /= (size_t)dims[d];
    }
}

#endif
