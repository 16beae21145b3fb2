/* Helpers for the scheduler tests: graphs from edge lists and random DAGs, with known sizes. */
#ifndef TEST_SCHED_UTIL_H
#define TEST_SCHED_UTIL_H

typedef struct tgraph {
    opara_runtime* rt;
    opara__graph g;
    uint64_t* bytes;       /* per value */
    opara__shape* shapes;  /* per value: [1, bytes/4] for activations */
    int32_t* out_of;       /* node -> its (first) output value */
} tgraph;

OT__UNUSED static void tg_free(tgraph* t) {
    if (!t->rt) return;
    free(t->bytes);
    free(t->shapes);
    free(t->out_of);
    opara__graph_free(&t->g);
    opara_runtime_destroy(t->rt);
    memset(t, 0, sizeof *t);
}

OT__UNUSED static int tg_begin(tgraph* t, uint32_t n_nodes) {
    memset(t, 0, sizeof *t);
    if (opara_runtime_create(NULL, &t->rt) != OPARA_OK) return 0;
    opara__graph_init(&t->g, t->rt);
    t->out_of = (int32_t*)calloc(n_nodes + 1, sizeof(int32_t));
    return t->out_of != NULL;
}

OT__UNUSED static int32_t tg_value(tgraph* t, const char* name, int64_t elems) {
    opara__shape s;
    memset(&s, 0, sizeof s);
    s.ndim = 2;
    s.dims[0] = 1;
    s.dims[1] = elems;
    return opara__graph_add_value(&t->g, name, OPARA_DTYPE_F32, &s);
}

/* Sizes and shapes of every value from the declared shapes; finalizes the graph. */
OT__UNUSED static int tg_finish(tgraph* t) {
    uint32_t v;
    if (opara__graph_finalize(&t->g) != OPARA_OK) return 0;
    t->bytes = (uint64_t*)calloc(t->g.n_values + 1, sizeof(uint64_t));
    t->shapes = (opara__shape*)calloc(t->g.n_values + 1, sizeof(opara__shape));
    if (!t->bytes || !t->shapes) return 0;
    for (v = 0; v < t->g.n_values; ++v) {
        t->shapes[v] = t->g.values[v].shape;
        t->bytes[v] = (uint64_t)(t->shapes[v].ndim == 2 ? t->shapes[v].dims[1] : 0) * 4;
    }
    return 1;
}

/* n nodes (ids 1..n), edges as 1-based (from, to) pairs: node `to` reads the outputs of its
   predecessors in the order the edges are listed; sources read the graph input. Every node
   outputs `elems` floats; sinks are graph outputs. */
OT__UNUSED static int tg_edges(tgraph* t, uint32_t n, const int (*edges)[2], uint32_t m, opara__op op, int64_t elems) {
    uint32_t i, j;
    int32_t x;
    char name[32];
    int32_t ins[64];
    if (!tg_begin(t, n)) return 0;
    x = tg_value(t, "x", elems);
    if (opara__graph_add_input(&t->g, x) != OPARA_OK) return 0;
    for (i = 1; i <= n; ++i) {
        snprintf(name, sizeof name, "v%u", i);
        t->out_of[i - 1] = tg_value(t, name, elems);
    }
    for (i = 1; i <= n; ++i) {
        uint32_t k = 0;
        int has_succ = 0;
        for (j = 0; j < m; ++j) {
            if ((uint32_t)edges[j][1] == i && k < 64) ins[k++] = t->out_of[edges[j][0] - 1];
            if ((uint32_t)edges[j][0] == i) has_succ = 1;
        }
        if (!k) ins[k++] = x;
        snprintf(name, sizeof name, "n%u", i);
        if (opara__graph_add_node(&t->g, op, name, k, ins, 1, &t->out_of[i - 1]) < 0) return 0;
        if (!has_succ && opara__graph_add_output(&t->g, t->out_of[i - 1]) != OPARA_OK) return 0;
    }
    return tg_finish(t);
}

typedef struct trng {
    uint64_t s;
} trng;

OT__UNUSED static uint32_t trng_next(trng* r) {
    r->s = r->s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)(r->s >> 33);
}

OT__UNUSED static uint32_t trng_below(trng* r, uint32_t n) { return n ? trng_next(r) % n : 0; }

/* A random DAG: node i reads 0..3 of the outputs of the previous `width` nodes (sources read the
   graph input). Ops: one input -> Relu / Sigmoid / Conv / Reshape (a view); several inputs ->
   Add (sizes equal to its first input) or Concat (sizes add up). Sinks and a few random values
   are graph outputs. */
OT__UNUSED static int tg_random(tgraph* t, uint32_t n, uint32_t width, uint64_t seed) {
    trng r;
    uint32_t i, k;
    int32_t x, ins[4];
    int64_t* elems;
    uint8_t* has_succ;
    char name[32];
    r.s = seed * 2654435761ULL + 1;
    if (!tg_begin(t, n)) return 0;
    elems = (int64_t*)calloc(n + 1, sizeof(int64_t));
    has_succ = (uint8_t*)calloc(n + 1, 1);
    if (!elems || !has_succ) return 0;
    x = tg_value(t, "x", 64);
    if (opara__graph_add_input(&t->g, x) != OPARA_OK) return 0;
    for (i = 0; i < n; ++i) {
        uint32_t want = i == 0 ? 0 : trng_below(&r, 4), got = 0;
        int64_t e;
        opara__op op;
        uint32_t pick;
        for (k = 0; k < want; ++k) {
            uint32_t lo = i > width ? i - width : 0;
            int32_t p = (int32_t)(lo + trng_below(&r, i - lo));
            uint32_t d;
            int dup = 0;
            for (d = 0; d < got; ++d) dup |= ins[d] == t->out_of[p];
            if (dup) continue;
            ins[got++] = t->out_of[p];
            has_succ[p] = 1;
        }
        if (!got) {
            ins[got++] = x;
            e = 16 + 16 * (int64_t)trng_below(&r, 8);
            op = OPARA__OP_CONV;
        } else if (got == 1) {
            pick = trng_below(&r, 4);
            op = pick == 0 ? OPARA__OP_RELU : pick == 1 ? OPARA__OP_SIGMOID : pick == 2 ? OPARA__OP_CONV : OPARA__OP_RESHAPE;
            e = op == OPARA__OP_CONV ? 16 + 16 * (int64_t)trng_below(&r, 8) : t->g.values[ins[0]].shape.dims[1];
        } else if (trng_below(&r, 2)) {
            op = OPARA__OP_ADD;
            e = t->g.values[ins[0]].shape.dims[1];
        } else {
            op = OPARA__OP_CONCAT;
            for (e = 0, k = 0; k < got; ++k) e += t->g.values[ins[k]].shape.dims[1];
        }
        snprintf(name, sizeof name, "v%u", i);
        t->out_of[i] = tg_value(t, name, e);
        elems[i] = e;
        snprintf(name, sizeof name, "n%u", i);
        if (opara__graph_add_node(&t->g, op, name, got, ins, 1, &t->out_of[i]) < 0) return 0;
        if (op == OPARA__OP_CONCAT) opara__node_set_int(&t->g, (int32_t)i, "axis", 1);
    }
    for (i = 0; i < n; ++i)
        if (!has_succ[i] || trng_below(&r, 16) == 0) opara__graph_add_output(&t->g, t->out_of[i]);
    free(elems);
    free(has_succ);
    return tg_finish(t);
}

/* Plan with the verifier on. */
OT__UNUSED static opara_result tg_plan(tgraph* t, const opara__op_desc* descs, opara__plan_desc* d, opara__plan** out) {
    d->verify = 1;
    if (!d->shapes) d->shapes = t->shapes;
    return opara__plan_create(&t->g, t->bytes, descs, NULL, d, out);
}

#endif /* TEST_SCHED_UTIL_H */
