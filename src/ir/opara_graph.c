/* Graph construction, attribute access, and the derived DAG (consumers, preds, succs, topo order). */
#include "opara_ir.h"

static const opara__op_info opara__op_infos[] = {
#define OPARA__OP_INFO(id, name, domain, since, until, next, min_in, max_in, max_out, kept, work, flops, flags) \
    {name, domain, since, until, next, min_in, max_in, max_out, kept, flops, OPARA__WORK_##work, flags},
    OPARA__OPS(OPARA__OP_INFO)
#undef OPARA__OP_INFO
};

OPARA__PRIVATE const opara__op_info* opara__op_info_of(opara__op op) { return &opara__op_infos[op]; }

typedef char opara__reduce_rows_in_order[OPARA__OP_REDUCE_SUM_SQUARE - OPARA__OP_REDUCE_MEAN == OPARA__RED_SUM_SQUARE ? 1 : -1];

OPARA__PRIVATE int opara__reduce_kind_of(opara__op op, opara__reduce_kind* kind) {
    if (op < OPARA__OP_REDUCE_MEAN || op > OPARA__OP_REDUCE_SUM_SQUARE) return 0;
    if (kind) *kind = (opara__reduce_kind)(op - OPARA__OP_REDUCE_MEAN);
    return 1;
}

OPARA__PRIVATE const char* opara__op_name(opara__op op) {
    return (unsigned)op < OPARA__OP_COUNT ? opara__op_infos[op].name : "?";
}

OPARA__PRIVATE opara__op opara__op_from_name(const char* name) {
    int i;
    for (i = 0; i < OPARA__OP_COUNT; ++i)
        if (strcmp(opara__op_infos[i].name, name) == 0) return (opara__op)i;
    return OPARA__OP_COUNT;
}

/* ---- pool ------------------------------------------------------------------------------------ */

struct opara__pool_block {
    opara__pool_block* next;
    size_t size;
};

#define OPARA__POOL_BLOCK (64 * 1024)
#define OPARA__POOL_HEADER 64 /* keeps the block's payload 64-byte aligned */

OPARA__PRIVATE void* opara__pool_alloc(opara_runtime* rt, opara__pool* pool, size_t size, size_t alignment) {
    size_t offset = opara__align_up(pool->used, alignment), block_size, need;
    opara__pool_block* block;
    if (alignment > OPARA__POOL_HEADER || !opara__is_pow2(alignment)) return NULL;
    if (pool->head && offset <= pool->cap && size <= pool->cap - offset) {
        pool->used = offset + size;
        return (uint8_t*)pool->head + OPARA__POOL_HEADER + offset;
    }
    if (!opara__add_size(size, OPARA__POOL_HEADER, &need)) return NULL;
    block_size = OPARA__MAX(need, (size_t)OPARA__POOL_BLOCK);
    block = (opara__pool_block*)opara__alloc_aligned(&rt->allocator, block_size, OPARA__POOL_HEADER);
    if (!block) return NULL;
    block->next = pool->head;
    block->size = block_size;
    pool->head = block;
    pool->cap = block_size - OPARA__POOL_HEADER;
    pool->used = size;
    return (uint8_t*)block + OPARA__POOL_HEADER;
}

OPARA__PRIVATE const char* opara__pool_strdup(opara_runtime* rt, opara__pool* pool, const char* s) {
    size_t n = strlen(s) + 1;
    char* copy = (char*)opara__pool_alloc(rt, pool, n, 1);
    if (copy) memcpy(copy, s, n);
    return copy;
}

OPARA__PRIVATE void opara__pool_free(opara_runtime* rt, opara__pool* pool) {
    opara__pool_block* b = pool->head;
    while (b) {
        opara__pool_block* next = b->next;
        opara__free_aligned(&rt->allocator, b);
        b = next;
    }
    memset(pool, 0, sizeof *pool);
}

/* ---- graph ----------------------------------------------------------------------------------- */

OPARA__PRIVATE void opara__graph_init(opara__graph* g, opara_runtime* rt) {
    memset(g, 0, sizeof *g);
    g->rt = rt;
    g->source_opset = 0;
}

static void opara__graph_free_derived(opara__graph* g) {
    opara__free(g->rt, g->topo);
    opara__free(g->rt, g->consumer_start);
    opara__free(g->rt, g->consumer_nodes);
    opara__free(g->rt, g->pred_start);
    opara__free(g->rt, g->preds);
    opara__free(g->rt, g->succ_start);
    opara__free(g->rt, g->succs);
    g->topo = g->consumer_start = g->consumer_nodes = NULL;
    g->pred_start = g->preds = g->succ_start = g->succs = NULL;
    g->finalized = 0;
}

OPARA__PRIVATE void opara__graph_free(opara__graph* g) {
    uint32_t i;
    if (!g->rt) return;
    opara__graph_free_derived(g);
    for (i = 0; i < g->n_nodes; ++i) opara__free(g->rt, g->nodes[i].attrs);
    opara__free(g->rt, g->values);
    opara__free(g->rt, g->nodes);
    opara__free(g->rt, g->inputs);
    opara__free(g->rt, g->outputs);
    opara__free(g->rt, g->name_index);
    opara__pool_free(g->rt, &g->pool);
    memset(g, 0, sizeof *g);
}

static uint32_t opara__name_slot(const opara__graph* g, const char* name) {
    return (uint32_t)opara__hash64(name, strlen(name), 0) & (g->name_index_cap - 1);
}

OPARA__PRIVATE int32_t opara__graph_find_value(const opara__graph* g, const char* name) {
    uint32_t slot;
    if (!g->name_index_cap) return -1;
    for (slot = opara__name_slot(g, name);; slot = (slot + 1) & (g->name_index_cap - 1)) {
        uint32_t entry = g->name_index[slot];
        if (!entry) return -1;
        if (strcmp(g->values[entry - 1].name, name) == 0) return (int32_t)(entry - 1);
    }
}

static void opara__name_insert(opara__graph* g, uint32_t value) {
    uint32_t slot = opara__name_slot(g, g->values[value].name);
    while (g->name_index[slot]) slot = (slot + 1) & (g->name_index_cap - 1);
    g->name_index[slot] = value + 1;
}

/* Keeps the name table at most half full. */
static opara_result opara__name_reserve(opara__graph* g, uint32_t n_values) {
    uint32_t cap = g->name_index_cap ? g->name_index_cap : 64, i;
    uint32_t* table;
    if ((uint64_t)n_values * 2 <= g->name_index_cap) return OPARA_OK;
    while ((uint64_t)n_values * 2 > cap) {
        if (cap > 0x40000000u) return OPARA_ERR_LIMIT_EXCEEDED;
        cap *= 2;
    }
    table = (uint32_t*)opara__calloc(g->rt, cap, sizeof *table);
    if (!table) return OPARA_ERR_OUT_OF_MEMORY;
    opara__free(g->rt, g->name_index);
    g->name_index = table;
    g->name_index_cap = cap;
    for (i = 0; i < g->n_values; ++i) opara__name_insert(g, i);
    return OPARA_OK;
}

OPARA__PRIVATE opara_result opara__graph_insert_value(opara__graph* g, const char* name, opara_dtype dtype,
                                                     const opara__shape* shape, int32_t* index) {
    opara__value* v;
    opara_result r;
    *index = -1;
    if (!name || !name[0]) return opara__fail(g->rt, OPARA_ERR_INVALID_ARGS, "a tensor needs a non-empty name");
    if (opara__graph_find_value(g, name) >= 0)
        return opara__fail(g->rt, OPARA_ERR_INVALID_ARGS, "tensor name '%s' is used twice", name);
    if (shape && (shape->ndim < -1 || shape->ndim > OPARA_MAX_DIMS))
        return opara__fail(g->rt, OPARA_ERR_LIMIT_EXCEEDED, "tensor '%s' has rank %d (max %d)", name,
                           (int)shape->ndim, OPARA_MAX_DIMS);
    if (g->n_values >= 0x7fffffffu) return opara__fail(g->rt, OPARA_ERR_LIMIT_EXCEEDED, "too many tensors");
    r = opara__grow(g->rt, (void**)&g->values, &g->cap_values, g->n_values + 1, sizeof *g->values);
    if (r == OPARA_OK) r = opara__name_reserve(g, g->n_values + 1);
    if (r != OPARA_OK)
        return opara__fail(g->rt, r, r == OPARA_ERR_OUT_OF_MEMORY ? "out of memory adding tensor '%s'"
                                                                  : "too many tensors to add '%s'", name);
    v = &g->values[g->n_values];
    memset(v, 0, sizeof *v);
    v->name = opara__pool_strdup(g->rt, &g->pool, name);
    if (!v->name) return opara__fail(g->rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory adding tensor '%s'", name);
    v->dtype = dtype;
    v->producer = -1;
    if (shape) v->shape = *shape;
    else v->shape.ndim = -1;
    opara__name_insert(g, g->n_values);
    *index = (int32_t)g->n_values++;
    return OPARA_OK;
}

OPARA__PRIVATE int32_t opara__graph_add_value(opara__graph* g, const char* name, opara_dtype dtype,
                                             const opara__shape* shape) {
    int32_t index;
    return opara__graph_insert_value(g, name, dtype, shape, &index) == OPARA_OK ? index : -1;
}

static int opara__value_ok(const opara__graph* g, int32_t v) {
    return v >= 0 && (uint32_t)v < g->n_values;
}

OPARA__PRIVATE opara_result opara__graph_set_const(opara__graph* g, int32_t v, const void* data, uint64_t nbytes,
                                                  int copy) {
    opara__value* val;
    if (!opara__value_ok(g, v)) return opara__fail(g->rt, OPARA_ERR_BAD_INDEX, "constant: tensor %d does not exist", v);
    val = &g->values[v];
    if (copy && nbytes) {
        void* owned;
        if (nbytes > (uint64_t)(size_t)-1 || !(owned = opara__pool_alloc(g->rt, &g->pool, (size_t)nbytes, 64)))
            return opara__fail(g->rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory for constant '%s' (%llu bytes)",
                               val->name, (unsigned long long)nbytes);
        memcpy(owned, data, (size_t)nbytes);
        data = owned;
    }
    val->kind = OPARA__VALUE_CONST;
    val->data = data;
    val->nbytes = nbytes;
    return OPARA_OK;
}

static opara_result opara__append_index(opara__graph* g, int32_t** list, uint32_t* n, size_t* cap, int32_t v) {
    if (opara__grow(g->rt, (void**)list, cap, *n + 1, sizeof **list) != OPARA_OK)
        return opara__fail(g->rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory");
    (*list)[(*n)++] = v;
    return OPARA_OK;
}

OPARA__PRIVATE opara_result opara__graph_add_input(opara__graph* g, int32_t v) {
    if (!opara__value_ok(g, v)) return opara__fail(g->rt, OPARA_ERR_BAD_INDEX, "input: tensor %d does not exist", v);
    g->values[v].kind = OPARA__VALUE_INPUT;
    return opara__append_index(g, &g->inputs, &g->n_inputs, &g->cap_inputs, v);
}

OPARA__PRIVATE opara_result opara__graph_add_output(opara__graph* g, int32_t v) {
    if (!opara__value_ok(g, v)) return opara__fail(g->rt, OPARA_ERR_BAD_INDEX, "output: tensor %d does not exist", v);
    g->values[v].is_output = 1;
    return opara__append_index(g, &g->outputs, &g->n_outputs, &g->cap_outputs, v);
}

static int32_t* opara__pool_indices(opara__graph* g, const int32_t* src, uint32_t n) {
    int32_t* copy = (int32_t*)opara__pool_alloc(g->rt, &g->pool, (size_t)n * sizeof(int32_t) + 1, 4);
    if (copy && n) memcpy(copy, src, (size_t)n * sizeof(int32_t));
    return copy;
}

OPARA__PRIVATE opara_result opara__graph_insert_node(opara__graph* g, opara__op op, const char* name,
                                                    uint32_t n_inputs, const int32_t* inputs, uint32_t n_outputs,
                                                    const int32_t* outputs, int32_t* index) {
    opara__node* node;
    uint32_t i;
    *index = -1;
    if (!name) name = "";
    if ((unsigned)op >= OPARA__OP_COUNT)
        return opara__fail(g->rt, OPARA_ERR_BAD_ENUM, "node '%s': unknown operator %d", name, (int)op);
    for (i = 0; i < n_inputs; ++i)
        if (inputs[i] != -1 && !opara__value_ok(g, inputs[i]))
            return opara__fail(g->rt, OPARA_ERR_BAD_INDEX, "node '%s' input %u: tensor %d does not exist", name, i,
                               inputs[i]);
    for (i = 0; i < n_outputs; ++i) {
        if (!opara__value_ok(g, outputs[i]))
            return opara__fail(g->rt, OPARA_ERR_BAD_INDEX, "node '%s' output %u: tensor %d does not exist", name, i,
                               outputs[i]);
        if (g->values[outputs[i]].producer >= 0 || g->values[outputs[i]].kind != OPARA__VALUE_ACTIVATION)
            return opara__fail(g->rt, OPARA_ERR_CORRUPT, "node '%s': tensor '%s' already has a producer", name,
                               g->values[outputs[i]].name);
    }
    if (g->n_nodes >= 0x7fffffffu) return opara__fail(g->rt, OPARA_ERR_LIMIT_EXCEEDED, "too many nodes");
    if (opara__grow(g->rt, (void**)&g->nodes, &g->cap_nodes, g->n_nodes + 1, sizeof *g->nodes) != OPARA_OK)
        return opara__fail(g->rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory adding node '%s'", name);
    node = &g->nodes[g->n_nodes];
    memset(node, 0, sizeof *node);
    node->op = op;
    node->name = opara__pool_strdup(g->rt, &g->pool, name);
    node->inputs = opara__pool_indices(g, inputs, n_inputs);
    node->outputs = opara__pool_indices(g, outputs, n_outputs);
    if (!node->name || !node->inputs || !node->outputs)
        return opara__fail(g->rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory adding node '%s'", name);
    node->n_inputs = n_inputs;
    node->n_outputs = n_outputs;
    for (i = 0; i < n_outputs; ++i) g->values[outputs[i]].producer = (int32_t)g->n_nodes;
    if (g->finalized) opara__graph_free_derived(g);
    *index = (int32_t)g->n_nodes++;
    return OPARA_OK;
}

OPARA__PRIVATE_TOOL int32_t opara__graph_add_node(opara__graph* g, opara__op op, const char* name, uint32_t n_inputs,
                                            const int32_t* inputs, uint32_t n_outputs, const int32_t* outputs) {
    int32_t index;
    return opara__graph_insert_node(g, op, name, n_inputs, inputs, n_outputs, outputs, &index) == OPARA_OK ? index : -1;
}

/* Returns the attribute slot for name on node (replacing an existing one), or NULL. */
static opara__attr* opara__attr_slot(opara__graph* g, int32_t node, const char* name) {
    opara__node* n;
    uint32_t i;
    size_t cap;
    if (node < 0 || (uint32_t)node >= g->n_nodes) return NULL;
    n = &g->nodes[node];
    for (i = 0; i < n->n_attrs; ++i)
        if (strcmp(n->attrs[i].name, name) == 0) return &n->attrs[i];
    cap = n->attr_cap;
    if (opara__grow(g->rt, (void**)&n->attrs, &cap, n->n_attrs + 1, sizeof *n->attrs) != OPARA_OK) return NULL;
    n->attr_cap = (uint32_t)cap;
    n->attrs[n->n_attrs].name = opara__pool_strdup(g->rt, &g->pool, name);
    if (!n->attrs[n->n_attrs].name) return NULL;
    return &n->attrs[n->n_attrs++];
}

static opara_result opara__attr_oom(opara__graph* g, int32_t node, const char* name) {
    return opara__fail(g->rt, OPARA_ERR_OUT_OF_MEMORY, "node %d: cannot store attribute '%s'", node, name);
}

OPARA__PRIVATE opara_result opara__node_set_int(opara__graph* g, int32_t node, const char* name, int64_t value) {
    opara__attr* a = opara__attr_slot(g, node, name);
    if (!a) return opara__attr_oom(g, node, name);
    a->type = OPARA__ATTR_INT;
    a->count = 1;
    a->v.i = value;
    return OPARA_OK;
}

OPARA__PRIVATE opara_result opara__node_set_float(opara__graph* g, int32_t node, const char* name, float value) {
    opara__attr* a = opara__attr_slot(g, node, name);
    if (!a) return opara__attr_oom(g, node, name);
    a->type = OPARA__ATTR_FLOAT;
    a->count = 1;
    a->v.f = value;
    return OPARA_OK;
}

static opara__attr* opara__attr_array(opara__graph* g, int32_t node, const char* name, const void* values,
                                      uint32_t count, size_t elem) {
    opara__attr* a = opara__attr_slot(g, node, name);
    void* copy;
    if (!a) return NULL;
    copy = opara__pool_alloc(g->rt, &g->pool, (size_t)count * elem + 1, 8);
    if (!copy) return NULL;
    if (count) memcpy(copy, values, (size_t)count * elem);
    a->count = count;
    a->v.ints = (const int64_t*)copy;
    return a;
}

OPARA__PRIVATE opara_result opara__node_set_ints(opara__graph* g, int32_t node, const char* name,
                                                const int64_t* values, uint32_t count) {
    opara__attr* a = opara__attr_array(g, node, name, values, count, sizeof(int64_t));
    if (!a) return opara__attr_oom(g, node, name);
    a->type = OPARA__ATTR_INTS;
    return OPARA_OK;
}

OPARA__PRIVATE opara_result opara__node_set_floats(opara__graph* g, int32_t node, const char* name,
                                                  const float* values, uint32_t count) {
    opara__attr* a = opara__attr_array(g, node, name, values, count, sizeof(float));
    if (!a) return opara__attr_oom(g, node, name);
    a->type = OPARA__ATTR_FLOATS;
    a->v.floats = (const float*)a->v.ints;
    return OPARA_OK;
}

OPARA__PRIVATE opara_result opara__node_set_string(opara__graph* g, int32_t node, const char* name, const char* value) {
    uint32_t len = (uint32_t)strlen(value);
    opara__attr* a = opara__attr_array(g, node, name, value, len + 1, 1);
    if (!a) return opara__attr_oom(g, node, name);
    a->type = OPARA__ATTR_STRING;
    a->count = len;
    a->v.s = (const char*)a->v.ints;
    return OPARA_OK;
}

OPARA__PRIVATE const opara__attr* opara__node_attr(const opara__node* n, const char* name) {
    uint32_t i;
    for (i = 0; i < n->n_attrs; ++i)
        if (strcmp(n->attrs[i].name, name) == 0) return &n->attrs[i];
    return NULL;
}

OPARA__PRIVATE int64_t opara__attr_int(const opara__node* n, const char* name, int64_t fallback) {
    const opara__attr* a = opara__node_attr(n, name);
    return a && a->type == OPARA__ATTR_INT ? a->v.i : fallback;
}

OPARA__PRIVATE float opara__attr_float(const opara__node* n, const char* name, float fallback) {
    const opara__attr* a = opara__node_attr(n, name);
    return a && a->type == OPARA__ATTR_FLOAT ? a->v.f : fallback;
}

OPARA__PRIVATE const int64_t* opara__attr_ints(const opara__node* n, const char* name, uint32_t* count) {
    const opara__attr* a = opara__node_attr(n, name);
    if (!a || a->type != OPARA__ATTR_INTS) {
        *count = 0;
        return NULL;
    }
    *count = a->count;
    return a->v.ints;
}

OPARA__PRIVATE const char* opara__attr_string(const opara__node* n, const char* name, const char* fallback) {
    const opara__attr* a = opara__node_attr(n, name);
    return a && a->type == OPARA__ATTR_STRING ? a->v.s : fallback;
}

/* ---- derived DAG ----------------------------------------------------------------------------- */

static uint32_t* opara__u32_array(opara__graph* g, size_t n) {
    return (uint32_t*)opara__calloc(g->rt, n + 1, sizeof(uint32_t));
}

static opara_result opara__build_consumers(opara__graph* g) {
    uint32_t n, i, total = 0;
    g->consumer_start = opara__u32_array(g, (size_t)g->n_values + 1);
    if (!g->consumer_start) return OPARA_ERR_OUT_OF_MEMORY;
    for (n = 0; n < g->n_nodes; ++n)
        for (i = 0; i < g->nodes[n].n_inputs; ++i)
            if (g->nodes[n].inputs[i] >= 0) g->consumer_start[g->nodes[n].inputs[i] + 1]++, total++;
    for (i = 0; i < g->n_values; ++i) g->consumer_start[i + 1] += g->consumer_start[i];
    g->consumer_nodes = opara__u32_array(g, total);
    if (!g->consumer_nodes) return OPARA_ERR_OUT_OF_MEMORY;
    {
        uint32_t* fill = opara__u32_array(g, g->n_values);
        if (!fill) return OPARA_ERR_OUT_OF_MEMORY;
        for (n = 0; n < g->n_nodes; ++n)
            for (i = 0; i < g->nodes[n].n_inputs; ++i) {
                int32_t v = g->nodes[n].inputs[i];
                if (v >= 0) g->consumer_nodes[g->consumer_start[v] + fill[v]++] = n;
            }
        opara__free(g->rt, fill);
    }
    return OPARA_OK;
}

/* Distinct producer nodes of each node's inputs, in input order; stamp[] dedups. */
static opara_result opara__build_preds(opara__graph* g, uint32_t* stamp) {
    uint32_t n, i, total = 0;
    g->pred_start = opara__u32_array(g, (size_t)g->n_nodes + 1);
    for (n = 0; n < g->n_nodes; ++n) total += g->nodes[n].n_inputs;
    g->preds = opara__u32_array(g, total);
    if (!g->pred_start || !g->preds) return OPARA_ERR_OUT_OF_MEMORY;
    total = 0;
    for (n = 0; n < g->n_nodes; ++n) {
        g->pred_start[n] = total;
        for (i = 0; i < g->nodes[n].n_inputs; ++i) {
            int32_t v = g->nodes[n].inputs[i];
            int32_t p = v >= 0 ? g->values[v].producer : -1;
            if (p < 0 || stamp[p] == n + 1) continue;
            stamp[p] = n + 1;
            g->preds[total++] = (uint32_t)p;
        }
    }
    g->pred_start[g->n_nodes] = total;
    return OPARA_OK;
}

/* Successors in the order their consumer nodes were added, derived from preds. */
static opara_result opara__build_succs(opara__graph* g) {
    uint32_t n, k, total = g->pred_start[g->n_nodes];
    uint32_t* fill;
    g->succ_start = opara__u32_array(g, (size_t)g->n_nodes + 1);
    g->succs = opara__u32_array(g, total);
    fill = opara__u32_array(g, g->n_nodes);
    if (!g->succ_start || !g->succs || !fill) {
        opara__free(g->rt, fill);
        return OPARA_ERR_OUT_OF_MEMORY;
    }
    for (k = 0; k < total; ++k) g->succ_start[g->preds[k] + 1]++;
    for (n = 0; n < g->n_nodes; ++n) g->succ_start[n + 1] += g->succ_start[n];
    for (n = 0; n < g->n_nodes; ++n)
        for (k = g->pred_start[n]; k < g->pred_start[n + 1]; ++k) {
            uint32_t p = g->preds[k];
            g->succs[g->succ_start[p] + fill[p]++] = n;
        }
    opara__free(g->rt, fill);
    return OPARA_OK;
}

/* Kahn's algorithm taking the lowest ready index first (a binary heap), so the order is
   deterministic and equals insertion order whenever that order is already topological. */
static void opara__heap_push(uint32_t* heap, uint32_t* size, uint32_t x) {
    uint32_t i = (*size)++;
    while (i > 0 && heap[(i - 1) / 2] > x) {
        heap[i] = heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    heap[i] = x;
}

static uint32_t opara__heap_pop(uint32_t* heap, uint32_t* size) {
    uint32_t top = heap[0], x = heap[--(*size)], i = 0;
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= *size) break;
        if (c + 1 < *size && heap[c + 1] < heap[c]) ++c;
        if (heap[c] >= x) break;
        heap[i] = heap[c];
        i = c;
    }
    if (*size) heap[i] = x;
    return top;
}

static opara_result opara__build_topo(opara__graph* g, uint32_t* indegree, uint32_t* heap) {
    uint32_t n, k, heap_size = 0, emitted = 0;
    g->topo = opara__u32_array(g, g->n_nodes);
    if (!g->topo) return OPARA_ERR_OUT_OF_MEMORY;
    for (n = 0; n < g->n_nodes; ++n) {
        indegree[n] = g->pred_start[n + 1] - g->pred_start[n];
        if (!indegree[n]) opara__heap_push(heap, &heap_size, n);
    }
    while (heap_size) {
        uint32_t u = opara__heap_pop(heap, &heap_size);
        g->topo[emitted++] = u;
        for (k = g->succ_start[u]; k < g->succ_start[u + 1]; ++k)
            if (--indegree[g->succs[k]] == 0) opara__heap_push(heap, &heap_size, g->succs[k]);
    }
    if (emitted == g->n_nodes) return OPARA_OK;
    for (n = 0; n < g->n_nodes; ++n)
        if (indegree[n])
            return opara__fail(g->rt, OPARA_ERR_CYCLE, "node %u '%s' (%s) lies on a cycle", n, g->nodes[n].name,
                               opara__op_name(g->nodes[n].op));
    return OPARA_ERR_INTERNAL;
}

OPARA__PRIVATE opara_result opara__graph_finalize(opara__graph* g) {
    uint32_t* scratch;
    opara_result r;
    if (g->finalized) return OPARA_OK;
    opara__graph_free_derived(g);
    scratch = opara__u32_array(g, (size_t)g->n_nodes * 2);
    if (!scratch) return opara__fail(g->rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory analysing the graph");
    r = opara__build_consumers(g);
    if (r == OPARA_OK) r = opara__build_preds(g, scratch);
    if (r == OPARA_OK) r = opara__build_succs(g);
    if (r == OPARA_OK) r = opara__build_topo(g, scratch, scratch + g->n_nodes);
    opara__free(g->rt, scratch);
    if (r == OPARA_ERR_OUT_OF_MEMORY) r = opara__fail(g->rt, r, "out of memory analysing the graph");
    if (r != OPARA_OK) {
        opara__graph_free_derived(g);
        return r;
    }
    g->finalized = 1;
    return OPARA_OK;
}
