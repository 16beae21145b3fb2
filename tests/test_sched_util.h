/* Helpers for the scheduler tests: graphs from edge lists and random DAGs, with known sizes. */
#ifndef TEST_SCHED_UTIL_H
#define TEST_SCHED_UTIL_H

typedef struct tgraph {
    opara_runtime* rt;
    opara__graph g;
    uint64_t* bytes;       /* per value */
    opara__shape* shapes;  /* per value: [1, bytes/4] for activations */
    opara__node_params* params; /* per node: the shape engine's record from those shapes */
    int32_t* out_of;       /* node -> its (first) output value */
} tgraph;

OT__UNUSED static void tg_free(tgraph* t) {
    if (!t->rt) return;
    free(t->bytes);
    free(t->shapes);
    free(t->params);
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

/* Sizes and shapes of every value from the declared shapes, the nodes' records from them;
   finalizes the graph. */
OT__UNUSED static int tg_finish(tgraph* t) {
    uint32_t v;
    if (opara__graph_finalize(&t->g) != OPARA_OK) return 0;
    t->bytes = (uint64_t*)calloc(t->g.n_values + 1, sizeof(uint64_t));
    t->shapes = (opara__shape*)calloc(t->g.n_values + 1, sizeof(opara__shape));
    t->params = (opara__node_params*)calloc(t->g.n_nodes + 1, sizeof(opara__node_params));
    if (!t->bytes || !t->shapes || !t->params) return 0;
    for (v = 0; v < t->g.n_values; ++v) {
        t->shapes[v] = t->g.values[v].shape;
        t->bytes[v] = (uint64_t)(t->shapes[v].ndim == 2 ? t->shapes[v].dims[1] : 0) * 4;
    }
    return opara__resolve_node_params(&t->g, t->shapes, t->params) == OPARA_OK;
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
    if (!d->params) d->params = t->params;
    return opara__plan_create(&t->g, t->bytes, descs, NULL, d, out);
}

/* ---- a brute-force re-check of a plan, independent of opara__plan_verify -----------------------
   The exact happens-before relation as bitsets (stream order + waits, in launch order), the bytes
   each operator reads and writes from the plan's offsets, then every pair compared: no two
   unordered operators touch overlapping bytes with at least one write; every byte an operator
   reads was not overwritten between its writer and the read (any other writer of it happens
   before the writer or after the reader; for graph outputs, before the writer); every data edge
   is ordered. Returns 1 when safe, else 0 with the first problem in why. */

typedef struct tg_access {
    uint64_t lo, hi;
    uint32_t node;
    int write;
} tg_access;

typedef struct tg_check {
    const opara__graph* g;
    const opara__plan* p;
    uint64_t* hb; /* row b: the nodes that happen-before b */
    size_t words;
    tg_access* acc;
    size_t n_acc;
    char* why;
    size_t why_len;
} tg_check;

OT__UNUSED static int tg_hb(const tg_check* c, uint32_t a, uint32_t b) {
    return (int)((c->hb[(size_t)b * c->words + a / 64] >> (a % 64)) & 1u);
}

/* Input k of Concat node n sits in its slice of the output (the Concat does not copy it). */
OT__UNUSED static int tg_concat_in_place(const tg_check* c, uint32_t n, uint32_t k) {
    const opara__node* nd = &c->g->nodes[n];
    const opara__plan* p = c->p;
    int32_t x = nd->inputs[k], y = nd->outputs[0];
    uint64_t off = 0;
    uint32_t i;
    if (nd->op != OPARA__OP_CONCAT || x < 0 || y < 0) return 0;
    if (p->storage[x] != OPARA__STORAGE_ARENA || p->storage[y] != OPARA__STORAGE_ARENA) return 0;
    for (i = 0; i < k; ++i) off += nd->inputs[i] >= 0 ? p->value_bytes[nd->inputs[i]] : 0;
    return p->alias_root[x] == p->alias_root[y] && p->offset[x] == p->offset[y] + off;
}

OT__UNUSED static int tg_is_view(const tg_check* c, uint32_t n) {
    const opara__node* nd = &c->g->nodes[n];
    return opara__op_is_view(nd->op) && nd->n_outputs >= 1 && nd->outputs[0] >= 0 &&
           c->p->alias_kind[nd->outputs[0]] == OPARA__ALIAS_VIEW;
}

OT__UNUSED static void tg_add_access(tg_check* c, uint32_t node, uint64_t lo, uint64_t len, int write) {
    if (!len) return;
    c->acc[c->n_acc].lo = lo;
    c->acc[c->n_acc].hi = lo + len;
    c->acc[c->n_acc].node = node;
    c->acc[c->n_acc++].write = write;
}

OT__UNUSED static void tg_collect(tg_check* c) {
    const opara__graph* g = c->g;
    const opara__plan* p = c->p;
    uint32_t n, k;
    for (n = 0; n < g->n_nodes; ++n) {
        const opara__node* nd = &g->nodes[n];
        uint64_t off = 0;
        if (tg_is_view(c, n)) continue; /* no kernel: reads and writes nothing */
        for (k = 0; k < nd->n_inputs; ++k) {
            int32_t x = nd->inputs[k];
            if (x < 0) continue;
            if (nd->op == OPARA__OP_CONCAT && nd->outputs[0] >= 0 && p->storage[nd->outputs[0]] == OPARA__STORAGE_ARENA &&
                !tg_concat_in_place(c, n, k))
                tg_add_access(c, n, p->offset[nd->outputs[0]] + off, p->value_bytes[x], 1);
            off += p->value_bytes[x];
            if (p->storage[x] == OPARA__STORAGE_ARENA && !tg_concat_in_place(c, n, k))
                tg_add_access(c, n, p->offset[x], p->value_bytes[x], 0);
        }
        for (k = 0; k < nd->n_outputs; ++k) {
            int32_t y = nd->outputs[k];
            if (y < 0 || p->storage[y] != OPARA__STORAGE_ARENA || (nd->op == OPARA__OP_CONCAT && k == 0)) continue;
            tg_add_access(c, n, p->offset[y], p->value_bytes[y], 1);
        }
    }
}

OT__UNUSED static int tg_bad(tg_check* c, const char* what, uint32_t a, uint32_t b) {
    snprintf(c->why, c->why_len, "%s: nodes %u '%s' and %u '%s'", what, a, c->g->nodes[a].name, b,
             b < c->g->n_nodes ? c->g->nodes[b].name : "(end)");
    return 0;
}

/* Reader r (UINT32_MAX: the end of the run) reads bytes [lo, hi) that node w wrote: every other
   writer of them happens before w or after r. r itself may write over them only when its output
   is declared in place over what it reads (self_ok). */
OT__UNUSED static int tg_check_piece(tg_check* c, uint32_t r, uint64_t lo, uint64_t hi, uint32_t w, int self_ok) {
    size_t i;
    for (i = 0; i < c->n_acc; ++i) {
        const tg_access* z = &c->acc[i];
        if (!z->write || z->hi <= lo || z->lo >= hi || z->node == w || (z->node == r && self_ok)) continue;
        if (z->node == r) return tg_bad(c, "an operator overwrites bytes it reads without being in place", r, r);
        if (tg_hb(c, z->node, w) || (r != UINT32_MAX && tg_hb(c, r, z->node))) continue;
        return tg_bad(c, r == UINT32_MAX ? "an output may be overwritten before the end" : "read bytes may be overwritten in between",
                      z->node, r);
    }
    return 1;
}

/* Reader r reads value x: the pieces of x and who wrote them (through views and in-place Concat
   inputs). */
OT__UNUSED static int tg_check_read(tg_check* c, uint32_t r, uint32_t x, uint32_t depth, int self_ok) {
    const opara__graph* g = c->g;
    const opara__plan* p = c->p;
    int32_t w = g->values[x].producer;
    uint32_t k;
    if (p->storage[x] != OPARA__STORAGE_ARENA || w < 0 || depth > g->n_values) return 1;
    if (tg_is_view(c, (uint32_t)w)) {
        int32_t in = g->nodes[w].inputs[0];
        if (p->storage[in] == OPARA__STORAGE_ARENA && p->offset[in] != p->offset[x])
            return tg_bad(c, "a view does not share its input's bytes", (uint32_t)w, (uint32_t)w);
        return tg_check_read(c, r, (uint32_t)in, depth + 1, self_ok);
    }
    if (g->nodes[w].op == OPARA__OP_CONCAT) {
        uint64_t off = p->offset[x];
        for (k = 0; k < g->nodes[w].n_inputs; ++k) {
            int32_t in = g->nodes[w].inputs[k];
            int ok;
            if (in < 0) continue;
            ok = tg_concat_in_place(c, (uint32_t)w, k) ? tg_check_read(c, r, (uint32_t)in, depth + 1, self_ok)
                                                       : tg_check_piece(c, r, off, off + p->value_bytes[in], (uint32_t)w, self_ok);
            if (!ok) return 0;
            off += p->value_bytes[in];
        }
        return 1;
    }
    return tg_check_piece(c, r, p->offset[x], p->offset[x] + p->value_bytes[x], (uint32_t)w, self_ok);
}

/* Node r declares an output in place over exactly the bytes of its input x. */
OT__UNUSED static int tg_in_place_over(const tg_check* c, uint32_t r, uint32_t x) {
    const opara__node* nd = &c->g->nodes[r];
    const opara__plan* p = c->p;
    uint32_t k;
    for (k = 0; k < nd->n_outputs; ++k) {
        int32_t y = nd->outputs[k];
        if (y >= 0 && p->alias_kind[y] == OPARA__ALIAS_INPLACE && p->storage[y] == OPARA__STORAGE_ARENA &&
            p->offset[y] == p->offset[x] && p->value_bytes[y] == p->value_bytes[x])
            return 1;
    }
    return 0;
}

/* The exact happens-before relation of a plan as bitsets (stream order + waits, in launch order):
   row b of hb (words 64-bit words per row) holds the nodes that happen-before b. NULL when out of
   memory; the caller frees it. */
OT__UNUSED static uint64_t* tg_hb_build(const opara__plan* p, size_t* words) {
    uint32_t n = p->n_nodes, i, k;
    uint64_t* hb;
    uint32_t* last = (uint32_t*)calloc(p->n_streams + 1, sizeof(uint32_t));
    *words = (n + 63) / 64;
    hb = (uint64_t*)calloc((size_t)n * *words + 1, sizeof(uint64_t));
    if (!hb || !last) {
        free(hb);
        free(last);
        return NULL;
    }
    for (i = 0; i < p->n_streams; ++i) last[i] = UINT32_MAX;
    for (i = 0; i < n; ++i) {
        uint32_t v = p->order[i], s = p->stream[v], w;
        uint64_t* row = hb + (size_t)v * *words;
        size_t j;
        if (last[s] != UINT32_MAX) {
            const uint64_t* src = hb + (size_t)last[s] * *words;
            for (j = 0; j < *words; ++j) row[j] |= src[j];
            row[last[s] / 64] |= (uint64_t)1 << (last[s] % 64);
        }
        for (k = p->wait_start[v]; k < p->wait_start[v + 1]; ++k) {
            const uint64_t* src;
            w = p->wait_nodes[k];
            src = hb + (size_t)w * *words;
            for (j = 0; j < *words; ++j) row[j] |= src[j];
            row[w / 64] |= (uint64_t)1 << (w % 64);
        }
        last[s] = v;
    }
    free(last);
    return hb;
}

OT__UNUSED static int tg_brute_check(const opara__graph* g, const opara__plan* p, char* why, size_t why_len) {
    tg_check c;
    uint32_t i, k, n = g->n_nodes;
    size_t a, b;
    int ok = 1;
    memset(&c, 0, sizeof c);
    c.g = g;
    c.p = p;
    c.why = why;
    c.why_len = why_len;
    why[0] = 0;
    c.hb = tg_hb_build(p, &c.words);
    for (i = 0, a = 0; i < n; ++i) a += (size_t)g->nodes[i].n_inputs + g->nodes[i].n_outputs + 1;
    c.acc = (tg_access*)calloc(a + 1, sizeof(tg_access));
    if (!c.hb || !c.acc) {
        snprintf(why, why_len, "out of memory");
        ok = 0;
    }
    for (i = 0; ok && i < n; ++i)
        for (k = g->pred_start[i]; ok && k < g->pred_start[i + 1]; ++k)
            if (!tg_hb(&c, g->preds[k], i)) ok = tg_bad(&c, "a data dependency is not ordered", g->preds[k], i);
    if (ok) tg_collect(&c);
    for (a = 0; ok && a < c.n_acc; ++a)
        for (b = a + 1; ok && b < c.n_acc; ++b) {
            const tg_access* x = &c.acc[a];
            const tg_access* y = &c.acc[b];
            if (x->node == y->node || (!x->write && !y->write) || x->hi <= y->lo || y->hi <= x->lo) continue;
            if (!tg_hb(&c, x->node, y->node) && !tg_hb(&c, y->node, x->node))
                ok = tg_bad(&c, "unordered operators touch the same bytes", x->node, y->node);
        }
    for (i = 0; ok && i < n; ++i) {
        if (tg_is_view(&c, i)) continue;
        for (k = 0; ok && k < g->nodes[i].n_inputs; ++k)
            if (g->nodes[i].inputs[k] >= 0 && !tg_concat_in_place(&c, i, k))
                ok = tg_check_read(&c, i, (uint32_t)g->nodes[i].inputs[k], 0, tg_in_place_over(&c, i, (uint32_t)g->nodes[i].inputs[k]));
    }
    for (i = 0; ok && i < g->n_outputs; ++i) ok = tg_check_read(&c, UINT32_MAX, (uint32_t)g->outputs[i], 0, 0);
    free(c.hb);
    free(c.acc);
    return ok;
}

#endif /* TEST_SCHED_UTIL_H */
