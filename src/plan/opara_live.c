/* Bytes live in launch order, for the memory budget of Alg. 2 (docs/SCHEDULING.md, "Memory
   budget"). A storage root is live from its first writer's launch to its last reader's launch:
   the memory a plan needs if every op ran in launch order, and what any plan that follows its
   launch order closely (the memory plan's waits make it) needs at least. */
#include "opara_sched.h"

enum { OPARA__LIVE_WRITTEN = 1, OPARA__LIVE_DEAD = 2, OPARA__LIVE_PINNED = 4 };

OPARA__PRIVATE void opara__live_free(opara_runtime* rt, opara__live* t) {
    opara__free(rt, t->root);
    opara__free(rt, t->size);
    opara__free(rt, t->reads);
    opara__free(rt, t->state);
    opara__free(rt, t->seen);
    memset(t, 0, sizeof *t);
}

/* Roots from the memory plan's static aliases; only activations with a producer live in the arena
   (a view of a graph input gets its own block there, so it is a root here too). */
static void opara__live_roots(opara__live* t, const opara__plan* p, const int32_t* parent) {
    const opara__graph* g = t->g;
    uint32_t v, k;
    for (v = 0; v < g->n_values; ++v) {
        uint32_t r = v;
        while (parent[r] >= 0) r = (uint32_t)parent[r];
        t->root[v] = g->values[r].kind == OPARA__VALUE_ACTIVATION && g->values[r].producer >= 0 ? r : UINT32_MAX;
    }
    for (v = 0; v < g->n_values; ++v) {
        uint32_t r = t->root[v];
        if (r == UINT32_MAX) continue;
        if (r == v) t->size[r] = opara__block_bytes(p->value_bytes[r], p->desc.alignment);
        for (k = g->consumer_start[v]; k < g->consumer_start[v + 1]; ++k) t->reads[r]++;
    }
    for (v = 0; v < g->n_outputs; ++v)
        if (g->outputs[v] >= 0 && t->root[g->outputs[v]] != UINT32_MAX) t->state[t->root[g->outputs[v]]] |= OPARA__LIVE_PINNED;
}

OPARA__PRIVATE opara_result opara__live_init(opara__live* t, const opara__graph* g, const opara__plan* p) {
    size_t n = (size_t)g->n_values + 1;
    int32_t* parent;
    opara_result r;
    memset(t, 0, sizeof *t);
    t->g = g;
    t->root = (uint32_t*)opara__calloc(g->rt, n, sizeof(uint32_t));
    t->size = (uint64_t*)opara__calloc(g->rt, n, sizeof(uint64_t));
    t->reads = (uint32_t*)opara__calloc(g->rt, n, sizeof(uint32_t));
    t->state = (uint8_t*)opara__calloc(g->rt, n, 1);
    t->seen = (uint32_t*)opara__calloc(g->rt, n, sizeof(uint32_t));
    parent = (int32_t*)opara__calloc(g->rt, n, sizeof(int32_t));
    if (!t->root || !t->size || !t->reads || !t->state || !t->seen || !parent) {
        opara__free(g->rt, parent);
        opara__live_free(g->rt, t);
        return opara__fail(g->rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory tracking live bytes of %u values", g->n_values);
    }
    r = opara__memory_aliases(g, p, parent);
    if (r == OPARA_OK) opara__live_roots(t, p, parent);
    opara__free(g->rt, parent);
    if (r != OPARA_OK) opara__live_free(g->rt, t);
    return r;
}

/* Bytes the node's outputs make live (roots not yet written, each once). */
static uint64_t opara__live_alloc(opara__live* t, const opara__node* n) {
    uint64_t sum = 0;
    uint32_t i;
    t->stamp++;
    for (i = 0; i < n->n_outputs; ++i) {
        uint32_t r = n->outputs[i] >= 0 ? t->root[n->outputs[i]] : UINT32_MAX;
        if (r == UINT32_MAX || t->seen[r] == t->stamp || (t->state[r] & OPARA__LIVE_WRITTEN)) continue;
        t->seen[r] = t->stamp;
        sum += t->size[r];
    }
    return sum;
}

/* Reads of root r by node n. */
static uint32_t opara__live_reads_by(const opara__live* t, const opara__node* n, uint32_t r) {
    uint32_t i, c = 0;
    for (i = 0; i < n->n_inputs; ++i) c += n->inputs[i] >= 0 && t->root[n->inputs[i]] == r;
    return c;
}

/* Bytes that die once the node has run: input roots it reads last, and outputs nobody reads. */
static uint64_t opara__live_dying(opara__live* t, const opara__node* n) {
    uint64_t sum = 0;
    uint32_t i;
    t->stamp++;
    for (i = 0; i < n->n_inputs + n->n_outputs; ++i) {
        int32_t v = i < n->n_inputs ? n->inputs[i] : n->outputs[i - n->n_inputs];
        uint32_t r = v >= 0 ? t->root[v] : UINT32_MAX;
        if (r == UINT32_MAX || t->seen[r] == t->stamp || (t->state[r] & (OPARA__LIVE_PINNED | OPARA__LIVE_DEAD))) continue;
        t->seen[r] = t->stamp;
        if (t->reads[r] == opara__live_reads_by(t, n, r)) sum += t->size[r];
    }
    return sum;
}

OPARA__PRIVATE void opara__live_cost(opara__live* t, uint32_t node, uint64_t* alloc, uint64_t* freed) {
    const opara__node* n = &t->g->nodes[node];
    *alloc = opara__live_alloc(t, n);
    *freed = opara__live_dying(t, n);
}

OPARA__PRIVATE void opara__live_launch(opara__live* t, uint32_t node) {
    const opara__node* n = &t->g->nodes[node];
    uint64_t alloc, freed;
    uint32_t i;
    opara__live_cost(t, node, &alloc, &freed);
    t->live += alloc;
    if (t->live > t->peak) t->peak = t->live;
    t->live -= freed;
    for (i = 0; i < n->n_outputs; ++i)
        if (n->outputs[i] >= 0 && t->root[n->outputs[i]] != UINT32_MAX) t->state[t->root[n->outputs[i]]] |= OPARA__LIVE_WRITTEN;
    for (i = 0; i < n->n_inputs; ++i)
        if (n->inputs[i] >= 0 && t->root[n->inputs[i]] != UINT32_MAX) t->reads[t->root[n->inputs[i]]]--;
    for (i = 0; i < n->n_inputs + n->n_outputs; ++i) {
        int32_t v = i < n->n_inputs ? n->inputs[i] : n->outputs[i - n->n_inputs];
        uint32_t r = v >= 0 ? t->root[v] : UINT32_MAX;
        if (r != UINT32_MAX && !t->reads[r] && !(t->state[r] & OPARA__LIVE_PINNED)) t->state[r] |= OPARA__LIVE_DEAD;
    }
}

OPARA__PRIVATE opara_result opara__live_peak(const opara__graph* g, const opara__plan* p, const uint32_t* order,
                                            uint64_t* peak) {
    opara__live t;
    uint32_t i;
    opara_result r = opara__live_init(&t, g, p);
    *peak = 0;
    if (r != OPARA_OK) return r;
    for (i = 0; i < g->n_nodes; ++i) opara__live_launch(&t, order[i]);
    *peak = t.peak;
    opara__live_free(g->rt, &t);
    return OPARA_OK;
}
