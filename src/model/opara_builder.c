/* The public graph builder: records tensors, nodes and outputs by name (any order), and turns
   them into a fresh graph on finish/save, which validates like the loader. */
#include "opara_model.h"

#if !defined(OPARA_NO_STDIO)
#  include <stdio.h>
#endif

typedef struct opara__btensor {
    const char* name;
    opara_dtype dtype;
    opara__value_kind kind;
    opara__shape shape;
    const void* data; /* in the builder's pool */
    uint64_t nbytes;
} opara__btensor;

typedef struct opara__bnode {
    const char* op_type;
    const char* name;
    uint32_t n_inputs, n_outputs, n_attrs;
    const char** inputs; /* NULL entries: omitted */
    const char** outputs;
    opara_attr* attrs;   /* deep copies in the pool */
} opara__bnode;

struct opara_builder {
    opara_runtime* rt;
    opara__pool pool;
    opara__btensor* tensors;
    size_t n_tensors, cap_tensors;
    opara__bnode* nodes;
    size_t n_nodes, cap_nodes;
    const char** outputs;
    size_t n_outputs, cap_outputs;
    opara_result error;             /* first failure, returned again by finish/save */
    char error_text[OPARA__DETAIL_MAX];
    opara__errbuf detail;           /* the last failing call's (opara_builder_last_error) */
};

/* A failure of a builder call: its detail goes to the builder (logged through the runtime's
   logger) and the first one is kept, returned again by finish and save. */
static opara_result opara__bfail(opara_builder* b, opara_result code, const char* fmt, ...) OPARA__PRINTF(3, 4);
static opara_result opara__bfail(opara_builder* b, opara_result code, const char* fmt, ...) {
    va_list args;
    va_start(args, fmt);
    code = opara__fail_into(&b->detail, &b->rt->logger, code, fmt, args);
    va_end(args);
    if (b->error == OPARA_OK) {
        b->error = code;
        opara__format(b->error_text, sizeof b->error_text, "%s", b->detail.text);
    }
    return code;
}

/* finish and save validate with the loader's checks, which report into the runtime: their detail
   moves to the builder and the runtime's is put back (saved at the start of the call), so builder
   calls never change opara_runtime_last_error. */
static opara_result opara__bcall_end(opara_builder* b, const opara__errbuf* saved, opara_result r) {
    if (r == OPARA_OK) return r;
    b->detail = b->rt->error;
    b->rt->error = *saved;
    return r;
}

static const char* opara__bstrdup(opara_builder* b, const char* s) {
    return opara__pool_strdup(b->rt, &b->pool, s ? s : "");
}

OPARADEF opara_result opara_builder_create(opara_runtime* runtime, opara_builder** out) {
    opara_builder* b;
    if (!out) return OPARA_ERR_INVALID_ARGS;
    *out = NULL;
    if (!runtime) return OPARA_ERR_INVALID_ARGS;
    b = (opara_builder*)opara__calloc(runtime, 1, sizeof *b);
    if (!b) return opara__fail(runtime, OPARA_ERR_OUT_OF_MEMORY, "out of memory creating a builder");
    b->rt = runtime;
    *out = b;
    return OPARA_OK;
}

OPARADEF const char* opara_builder_last_error(const opara_builder* builder) {
    return builder ? builder->detail.text : "";
}

OPARADEF void opara_builder_destroy(opara_builder* builder) {
    opara_runtime* rt;
    if (!builder) return;
    rt = builder->rt;
    opara__free(rt, builder->tensors);
    opara__free(rt, builder->nodes);
    opara__free(rt, (void*)builder->outputs);
    opara__pool_free(rt, &builder->pool);
    opara__free(rt, builder);
}

static opara_result opara__bshape(opara_builder* b, const char* name, int32_t rank, const int64_t* dims, int is_const,
                                  opara__shape* shape) {
    int32_t k;
    if (rank < 0 || rank > OPARA_MAX_DIMS || (rank > 0 && !dims))
        return opara__bfail(b, rank > OPARA_MAX_DIMS ? OPARA_ERR_LIMIT_EXCEEDED : OPARA_ERR_INVALID_ARGS,
                            "tensor '%s': rank %d (0..%d with dims)", name, (int)rank, OPARA_MAX_DIMS);
    memset(shape, 0, sizeof *shape);
    shape->ndim = rank;
    for (k = 0; k < rank; ++k) {
        if (dims[k] == OPARA_DIM_BATCH && !is_const) shape->dims[k] = OPARA__DIM_BATCH;
        else if (dims[k] >= 0) shape->dims[k] = dims[k];
        else
            return opara__bfail(b, OPARA_ERR_INVALID_ARGS, "tensor '%s': dimension %d is %lld", name, (int)k,
                                (long long)dims[k]);
    }
    return OPARA_OK;
}

static opara_result opara__badd_tensor(opara_builder* b, const char* name, opara_dtype dtype, int32_t rank,
                                       const int64_t* dims, opara__value_kind kind, const void* data, size_t size) {
    opara__btensor* t;
    opara__shape shape;
    opara_result r;
    if (!name || !name[0]) return opara__bfail(b, OPARA_ERR_INVALID_ARGS, "a tensor needs a non-empty name");
    r = opara__bshape(b, name, rank, dims, kind == OPARA__VALUE_CONST, &shape);
    if (r != OPARA_OK) return r;
    if (opara__grow(b->rt, (void**)&b->tensors, &b->cap_tensors, b->n_tensors + 1, sizeof *b->tensors) != OPARA_OK)
        return opara__bfail(b, OPARA_ERR_OUT_OF_MEMORY, "out of memory adding '%s'", name);
    t = &b->tensors[b->n_tensors];
    memset(t, 0, sizeof *t);
    t->name = opara__bstrdup(b, name);
    t->dtype = dtype;
    t->kind = kind;
    t->shape = shape;
    t->nbytes = size;
    if (size) {
        void* copy = opara__pool_alloc(b->rt, &b->pool, size, 64);
        if (copy) memcpy(copy, data, size);
        t->data = copy;
    }
    if (!t->name || (size && !t->data))
        return opara__bfail(b, OPARA_ERR_OUT_OF_MEMORY, "out of memory adding '%s'", name);
    b->n_tensors++;
    return OPARA_OK;
}

OPARADEF opara_result opara_builder_add_input(opara_builder* builder, const char* name, opara_dtype dtype, int32_t rank,
                                              const int64_t* dims) {
    if (!builder) return OPARA_ERR_INVALID_ARGS;
    return opara__badd_tensor(builder, name, dtype, rank, dims, OPARA__VALUE_INPUT, NULL, 0);
}

OPARADEF opara_result opara_builder_declare(opara_builder* builder, const char* name, opara_dtype dtype, int32_t rank,
                                            const int64_t* dims) {
    if (!builder) return OPARA_ERR_INVALID_ARGS;
    return opara__badd_tensor(builder, name, dtype, rank, dims, OPARA__VALUE_ACTIVATION, NULL, 0);
}

OPARADEF opara_result opara_builder_add_constant(opara_builder* builder, const char* name, opara_dtype dtype,
                                                 int32_t rank, const int64_t* dims, const void* data, size_t size) {
    if (!builder) return OPARA_ERR_INVALID_ARGS;
    if (size && !data)
        return opara__bfail(builder, OPARA_ERR_INVALID_ARGS, "constant '%s': data is NULL", name ? name : "");
    return opara__badd_tensor(builder, name, dtype, rank, dims, OPARA__VALUE_CONST, data, size);
}

static const char** opara__bnames(opara_builder* b, uint32_t n, const char* const* names) {
    const char** copy = (const char**)opara__pool_alloc(b->rt, &b->pool, sizeof(char*) * ((size_t)n + 1), 8);
    uint32_t i;
    if (!copy) return NULL;
    for (i = 0; i < n; ++i) {
        copy[i] = names[i] && names[i][0] ? opara__bstrdup(b, names[i]) : NULL;
        if (names[i] && names[i][0] && !copy[i]) return NULL;
    }
    return copy;
}

static int opara__bcopy_attr(opara_builder* b, const opara_attr* src, opara_attr* dst) {
    size_t elem = src->type == OPARA_ATTR_INTS ? 8 : 4;
    *dst = *src;
    dst->name = opara__bstrdup(b, src->name);
    if (!dst->name) return 0;
    if (src->type == OPARA_ATTR_STRING) {
        dst->v.s = opara__bstrdup(b, src->v.s);
        return dst->v.s != NULL;
    }
    if (src->type == OPARA_ATTR_INTS || src->type == OPARA_ATTR_FLOATS) {
        void* copy = opara__pool_alloc(b->rt, &b->pool, elem * src->count + 1, 8);
        if (!copy) return 0;
        if (src->count) memcpy(copy, src->v.ints, elem * src->count);
        dst->v.ints = (const int64_t*)copy;
    }
    return 1;
}

static opara_result opara__bcheck_node_args(opara_builder* b, const char* op_type, const char* name, uint32_t n_inputs,
                                            const char* const* inputs, uint32_t n_outputs, const char* const* outputs,
                                            uint32_t n_attrs, const opara_attr* attrs) {
    uint32_t i;
    const char* label = name ? name : "";
    if (!op_type || (n_inputs && !inputs) || !n_outputs || !outputs || (n_attrs && !attrs))
        return opara__bfail(b, OPARA_ERR_INVALID_ARGS, "node '%s': needs an op type, outputs, and arrays for the counts",
                           label);
    if (n_inputs > OPARA_MAX_NODE_IO || n_outputs > OPARA_MAX_NODE_IO || n_attrs > OPARA_MAX_ATTRS)
        return opara__bfail(b, OPARA_ERR_LIMIT_EXCEEDED, "node '%s': too many inputs, outputs or attributes", label);
    for (i = 0; i < n_outputs; ++i)
        if (!outputs[i] || !outputs[i][0])
            return opara__bfail(b, OPARA_ERR_INVALID_ARGS, "node '%s': output %u has no name", label, i);
    for (i = 0; i < n_attrs; ++i) {
        const opara_attr* a = &attrs[i];
        int array = a->type == OPARA_ATTR_INTS || a->type == OPARA_ATTR_FLOATS;
        if (!a->name || !a->name[0] || a->type < OPARA_ATTR_INT || a->type > OPARA_ATTR_STRING ||
            (array && a->count && !a->v.ints) || (a->type == OPARA_ATTR_STRING && !a->v.s))
            return opara__bfail(b, OPARA_ERR_INVALID_ARGS, "node '%s': attribute %u is malformed", label, i);
    }
    return OPARA_OK;
}

OPARADEF opara_result opara_builder_add_node(opara_builder* builder, const char* op_type, const char* name,
                                             uint32_t n_inputs, const char* const* inputs, uint32_t n_outputs,
                                             const char* const* outputs, uint32_t n_attrs, const opara_attr* attrs) {
    opara__bnode* n;
    uint32_t i;
    opara_result r;
    if (!builder) return OPARA_ERR_INVALID_ARGS;
    r = opara__bcheck_node_args(builder, op_type, name, n_inputs, inputs, n_outputs, outputs, n_attrs, attrs);
    if (r != OPARA_OK) return r;
    if (opara__op_from_name(op_type) == OPARA__OP_COUNT)
        return opara__bfail(builder, OPARA_ERR_UNSUPPORTED_OP, "node '%s': operator '%s' is not supported",
                            name ? name : "", op_type);
    if (opara__grow(builder->rt, (void**)&builder->nodes, &builder->cap_nodes, builder->n_nodes + 1, sizeof *builder->nodes) !=
        OPARA_OK)
        return opara__bfail(builder, OPARA_ERR_OUT_OF_MEMORY, "out of memory adding a node");
    n = &builder->nodes[builder->n_nodes];
    memset(n, 0, sizeof *n);
    n->op_type = opara__bstrdup(builder, op_type);
    n->name = opara__bstrdup(builder, name);
    n->inputs = opara__bnames(builder, n_inputs, inputs);
    n->outputs = opara__bnames(builder, n_outputs, outputs);
    n->attrs = (opara_attr*)opara__pool_alloc(builder->rt, &builder->pool, sizeof(opara_attr) * ((size_t)n_attrs + 1), 8);
    r = n->op_type && n->name && n->inputs && n->outputs && n->attrs ? OPARA_OK : OPARA_ERR_OUT_OF_MEMORY;
    for (i = 0; i < n_attrs && r == OPARA_OK; ++i)
        if (!opara__bcopy_attr(builder, &attrs[i], &n->attrs[i])) r = OPARA_ERR_OUT_OF_MEMORY;
    if (r != OPARA_OK) return opara__bfail(builder, r, "out of memory adding a node");
    n->n_inputs = n_inputs;
    n->n_outputs = n_outputs;
    n->n_attrs = n_attrs;
    builder->n_nodes++;
    return OPARA_OK;
}

OPARADEF opara_result opara_builder_add_output(opara_builder* builder, const char* name) {
    const char* copy;
    if (!builder) return OPARA_ERR_INVALID_ARGS;
    if (!name || !name[0]) return opara__bfail(builder, OPARA_ERR_INVALID_ARGS, "output needs a name");
    copy = opara__bstrdup(builder, name);
    if (!copy || opara__grow(builder->rt, (void**)&builder->outputs, &builder->cap_outputs, builder->n_outputs + 1,
                             sizeof(char*)) != OPARA_OK)
        return opara__bfail(builder, OPARA_ERR_OUT_OF_MEMORY, "out of memory adding an output");
    builder->outputs[builder->n_outputs++] = copy;
    return OPARA_OK;
}

/* ---- builder -> graph ------------------------------------------------------------------------ */

static opara_result opara__bgraph_tensors(opara_builder* b, opara__graph* g) {
    size_t i;
    for (i = 0; i < b->n_tensors; ++i) {
        const opara__btensor* t = &b->tensors[i];
        int32_t v;
        opara_result r;
        if (t->kind == OPARA__VALUE_ACTIVATION) continue; /* a declared node output (opara__builder_declared_graph) */
        r = opara__graph_insert_value(g, t->name, t->dtype, &t->shape, &v);
        if (r != OPARA_OK) return r;
        r = t->kind == OPARA__VALUE_INPUT ? opara__graph_add_input(g, v) : opara__graph_set_const(g, v, t->data, t->nbytes, 1);
        if (r != OPARA_OK) return r;
    }
    return OPARA_OK;
}

static opara_result opara__bgraph_attr(opara__graph* g, int32_t node, const opara_attr* a) {
    switch (a->type) {
    case OPARA_ATTR_INT: return opara__node_set_int(g, node, a->name, a->v.i);
    case OPARA_ATTR_FLOAT: return opara__node_set_float(g, node, a->name, a->v.f);
    case OPARA_ATTR_INTS: return opara__node_set_ints(g, node, a->name, a->v.ints, a->count);
    case OPARA_ATTR_FLOATS: return opara__node_set_floats(g, node, a->name, a->v.floats, a->count);
    default: return opara__node_set_string(g, node, a->name, a->v.s);
    }
}

static opara_result opara__bgraph_node(opara_builder* b, opara__graph* g, const opara__bnode* n, int32_t* idx) {
    uint32_t k;
    int32_t node;
    opara_result r;
    for (k = 0; k < n->n_inputs; ++k) {
        idx[k] = n->inputs[k] ? opara__graph_find_value(g, n->inputs[k]) : -1;
        if (n->inputs[k] && idx[k] < 0)
            return opara__fail(b->rt, OPARA_ERR_NOT_FOUND, "node '%s' (%s) input %u: no tensor is named '%s'", n->name,
                               n->op_type, k, n->inputs[k]);
    }
    for (k = 0; k < n->n_outputs; ++k) idx[n->n_inputs + k] = opara__graph_find_value(g, n->outputs[k]);
    r = opara__graph_insert_node(g, opara__op_from_name(n->op_type), n->name, n->n_inputs, idx, n->n_outputs,
                                 idx + n->n_inputs, &node);
    for (k = 0; r == OPARA_OK && k < n->n_attrs; ++k) r = opara__bgraph_attr(g, node, &n->attrs[k]);
    return r;
}

static opara_result opara__bgraph_nodes(opara_builder* b, opara__graph* g) {
    size_t i, k;
    int32_t v;
    int32_t* idx = (int32_t*)opara__calloc(b->rt, 2 * (size_t)OPARA_MAX_NODE_IO + 1, sizeof(int32_t));
    opara_result r = idx ? OPARA_OK : opara__fail(b->rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory");
    for (i = 0; i < b->n_nodes && r == OPARA_OK; ++i) /* outputs first, so inputs may name later nodes' outputs */
        for (k = 0; k < b->nodes[i].n_outputs && r == OPARA_OK; ++k)
            r = opara__graph_insert_value(g, b->nodes[i].outputs[k], OPARA_DTYPE_UNDEFINED, NULL, &v);
    for (i = 0; i < b->n_nodes && r == OPARA_OK; ++i) r = opara__bgraph_node(b, g, &b->nodes[i], idx);
    opara__free(b->rt, idx);
    return r;
}

static opara_result opara__bgraph_outputs(opara_builder* b, opara__graph* g) {
    size_t i;
    for (i = 0; i < b->n_outputs; ++i) {
        int32_t v = opara__graph_find_value(g, b->outputs[i]);
        opara_result r;
        if (v < 0) return opara__fail(b->rt, OPARA_ERR_NOT_FOUND, "graph output %u: no tensor is named '%s'", (unsigned)i,
                                      b->outputs[i]);
        r = opara__graph_add_output(g, v);
        if (r != OPARA_OK) return r;
    }
    return OPARA_OK;
}

/* Builds a fresh, validated graph from the records. */
static opara_result opara__builder_graph(opara_builder* b, opara__graph* g) {
    opara_result r;
    opara__graph_init(g, b->rt);
    if (b->error != OPARA_OK) {
        opara__fail(b->rt, b->error, "%s", b->error_text);
        return b->error;
    }
    g->producer_name = opara__pool_strdup(b->rt, &g->pool, "opara.h builder " OPARA_VERSION_STRING);
    r = g->producer_name ? OPARA_OK : opara__fail(b->rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory");
    if (r == OPARA_OK) r = opara__bgraph_tensors(b, g);
    if (r == OPARA_OK) r = opara__bgraph_nodes(b, g);
    if (r == OPARA_OK) r = opara__bgraph_outputs(b, g);
    return r;
}

OPARA__PRIVATE opara_runtime* opara__builder_runtime(const opara_builder* b) { return b->rt; }

OPARA__PRIVATE opara_result opara__builder_declared_graph(opara_builder* b, opara__graph* g) {
    size_t i;
    opara_result r = opara__builder_graph(b, g);
    if (r == OPARA_OK) r = opara__graph_finalize(g);
    for (i = 0; r == OPARA_OK && i < b->n_tensors; ++i) {
        const opara__btensor* t = &b->tensors[i];
        int32_t v;
        if (t->kind != OPARA__VALUE_ACTIVATION) continue;
        v = opara__graph_find_value(g, t->name);
        if (v < 0 || g->values[v].producer < 0)
            return opara__fail(b->rt, OPARA_ERR_NOT_FOUND, "declared tensor '%s' is no node's output", t->name);
        g->values[v].dtype = t->dtype;
        g->values[v].shape = t->shape;
    }
    return r;
}

OPARADEF opara_result opara_builder_finish(opara_builder* builder, opara_model** out) {
    opara__graph g;
    opara__errbuf saved;
    opara_result r;
    if (!builder || !out) return OPARA_ERR_INVALID_ARGS;
    *out = NULL;
    saved = builder->rt->error;
    r = opara__builder_graph(builder, &g);
    if (r != OPARA_OK) opara__graph_free(&g);
    else r = opara__model_from_graph(builder->rt, &g, out);
    return opara__bcall_end(builder, &saved, r);
}

OPARADEF opara_result opara_builder_save_memory(opara_builder* builder, void** data, size_t* size) {
    opara__graph g;
    opara__bytes bytes;
    opara__errbuf saved;
    opara_result r;
    if (!builder || !data || !size) return OPARA_ERR_INVALID_ARGS;
    *data = NULL;
    *size = 0;
    saved = builder->rt->error;
    r = opara__builder_graph(builder, &g);
    if (r == OPARA_OK) r = opara__graph_validate(&g);
    if (r == OPARA_OK) r = opara__format_write(builder->rt, &g, 0, &bytes);
    opara__graph_free(&g);
    if (r != OPARA_OK) return opara__bcall_end(builder, &saved, r);
    *data = bytes.data;
    *size = bytes.size;
    return OPARA_OK;
}

#if !defined(OPARA_NO_STDIO)
OPARADEF opara_result opara_builder_save_file(opara_builder* builder, const char* path) {
    void* data;
    size_t size;
    FILE* f;
    opara_result r;
    if (!builder || !path) return OPARA_ERR_INVALID_ARGS;
    r = opara_builder_save_memory(builder, &data, &size);
    if (r != OPARA_OK) return r;
    f = opara__fopen(path, "wb");
    if (!f || fwrite(data, 1, size, f) != size)
        r = opara__fail_to(&builder->detail, &builder->rt->logger, OPARA_ERR_IO, "cannot write '%s'", path);
    if (f && fclose(f) != 0 && r == OPARA_OK)
        r = opara__fail_to(&builder->detail, &builder->rt->logger, OPARA_ERR_IO, "cannot write '%s'", path);
    opara_free(builder->rt, data);
    return r;
}
#endif
