/* Semantic validation of a graph, shared by every way a model is made (the .opara reader, the
   builder, a graph handed over by the importer): attribute types, values, graph inputs and
   outputs, data flow. A separate pass (cgltf's idea): the reader checks the file's bounds and
   encoding, this checks what the graph means, whoever made it. */
#include "opara_model.h"

/* Types of the attributes the IR knows (ONNX names mean the same thing on every operator that
   has them). An attribute with a known name and another type is rejected: kernels and shape
   inference read them by type. Unknown names are kept and ignored. */
typedef struct opara__attr_rule {
    const char* name;
    opara__attr_type type;
} opara__attr_rule;

static const opara__attr_rule opara__attr_rules[] = {
    {"kernel_shape", OPARA__ATTR_INTS}, {"strides", OPARA__ATTR_INTS}, {"pads", OPARA__ATTR_INTS},
    {"dilations", OPARA__ATTR_INTS}, {"group", OPARA__ATTR_INT}, {"auto_pad", OPARA__ATTR_STRING},
    {"ceil_mode", OPARA__ATTR_INT}, {"count_include_pad", OPARA__ATTR_INT}, {"storage_order", OPARA__ATTR_INT},
    {"output_padding", OPARA__ATTR_INTS}, {"output_shape", OPARA__ATTR_INTS}, {"epsilon", OPARA__ATTR_FLOAT},
    {"momentum", OPARA__ATTR_FLOAT}, {"alpha", OPARA__ATTR_FLOAT}, {"beta", OPARA__ATTR_FLOAT},
    {"axis", OPARA__ATTR_INT}, {"axes", OPARA__ATTR_INTS}, {"split", OPARA__ATTR_INTS}, {"starts", OPARA__ATTR_INTS},
    {"ends", OPARA__ATTR_INTS}, {"steps", OPARA__ATTR_INTS}, {"shape", OPARA__ATTR_INTS}, {"allowzero", OPARA__ATTR_INT},
    {"perm", OPARA__ATTR_INTS}, {"transA", OPARA__ATTR_INT}, {"transB", OPARA__ATTR_INT}, {"keepdims", OPARA__ATTR_INT},
    {"noop_with_empty_axes", OPARA__ATTR_INT}, {"to", OPARA__ATTR_INT}, {"mode", OPARA__ATTR_STRING},
    {"min", OPARA__ATTR_FLOAT}, {"max", OPARA__ATTR_FLOAT}, {"value", OPARA__ATTR_FLOAT},
    {"constant_value", OPARA__ATTR_FLOAT}, {"scales", OPARA__ATTR_FLOATS}, {"sizes", OPARA__ATTR_INTS},
    {"approximate", OPARA__ATTR_STRING}, {"coordinate_transformation_mode", OPARA__ATTR_STRING},
    {"nearest_mode", OPARA__ATTR_STRING}, {"cubic_coeff_a", OPARA__ATTR_FLOAT}, {"exclude_outside", OPARA__ATTR_INT},
    {"extrapolation_value", OPARA__ATTR_FLOAT}, {"stash_type", OPARA__ATTR_INT}, {"training_mode", OPARA__ATTR_INT},
};

static const char* opara__attr_type_name(opara__attr_type t) {
    switch (t) {
    case OPARA__ATTR_INT: return "INT";
    case OPARA__ATTR_FLOAT: return "FLOAT";
    case OPARA__ATTR_INTS: return "INTS";
    case OPARA__ATTR_FLOATS: return "FLOATS";
    case OPARA__ATTR_STRING: return "STRING";
    default: return "?";
    }
}

static opara_result opara__validate_attrs(opara__graph* g, uint32_t i) {
    const opara__node* n = &g->nodes[i];
    uint32_t a, k;
    if (n->n_attrs > OPARA_MAX_ATTRS)
        return opara__fail(g->rt, OPARA_ERR_LIMIT_EXCEEDED, "node %u '%s': %u attributes (limit %u)", i, n->name, n->n_attrs,
                           (unsigned)OPARA_MAX_ATTRS);
    for (a = 0; a < n->n_attrs; ++a) {
        const opara__attr* at = &n->attrs[a];
        if ((at->type == OPARA__ATTR_INTS || at->type == OPARA__ATTR_FLOATS) && at->count > OPARA_MAX_ATTR_ELEMS)
            return opara__fail(g->rt, OPARA_ERR_LIMIT_EXCEEDED, "node %u '%s' attribute '%s': %u elements (limit %u)", i,
                               n->name, at->name, at->count, (unsigned)OPARA_MAX_ATTR_ELEMS);
        for (k = 0; k < OPARA__ARRAY_COUNT(opara__attr_rules); ++k)
            if (strcmp(opara__attr_rules[k].name, at->name) == 0 && opara__attr_rules[k].type != at->type)
                return opara__fail(g->rt, OPARA_ERR_CORRUPT, "node %u '%s' (%s): attribute '%s' is %s, expected %s", i,
                                   n->name, opara__op_name(n->op), at->name, opara__attr_type_name(at->type),
                                   opara__attr_type_name(opara__attr_rules[k].type));
    }
    return OPARA_OK;
}

static opara_result opara__validate_value(opara__graph* g, uint32_t i) {
    const opara__value* v = &g->values[i];
    int32_t k;
    size_t esize = opara_dtype_size(v->dtype);
    if (v->kind != OPARA__VALUE_ACTIVATION && esize == 0)
        return opara__fail(g->rt, OPARA_ERR_BAD_DTYPE, "tensor %u '%s': data type %d is not supported", i, v->name,
                           (int)v->dtype);
    if (v->kind == OPARA__VALUE_ACTIVATION && v->dtype != OPARA_DTYPE_UNDEFINED && esize == 0)
        return opara__fail(g->rt, OPARA_ERR_BAD_DTYPE, "tensor %u '%s': data type %d is not supported", i, v->name,
                           (int)v->dtype);
    if (v->kind == OPARA__VALUE_ACTIVATION && v->producer < 0)
        return opara__fail(g->rt, OPARA_ERR_CORRUPT, "tensor %u '%s' is neither an input, a constant nor produced by a node", i,
                           v->name);
    if (v->kind != OPARA__VALUE_ACTIVATION && v->shape.ndim < 0)
        return opara__fail(g->rt, OPARA_ERR_CORRUPT, "tensor %u '%s' (%s) has no declared shape", i, v->name,
                           v->kind == OPARA__VALUE_INPUT ? "input" : "constant");
    for (k = 0; k < v->shape.ndim; ++k) {
        int64_t d = v->shape.dims[k];
        if (d < 0 && !(d == OPARA__DIM_BATCH && v->kind != OPARA__VALUE_CONST))
            return opara__fail(g->rt, OPARA_ERR_CORRUPT, "tensor %u '%s': dimension %d is %lld", i, v->name, (int)k,
                               (long long)d);
    }
    if (v->kind == OPARA__VALUE_CONST) {
        int64_t numel = opara__shape_numel(&v->shape);
        uint64_t expect;
        if (numel < 0 || (uint64_t)numel > UINT64_MAX / 8)
            return opara__fail(g->rt, OPARA_ERR_LIMIT_EXCEEDED, "constant %u '%s': too many elements", i, v->name);
        expect = (uint64_t)numel * esize;
        if (v->nbytes != expect)
            return opara__fail(g->rt, OPARA_ERR_BAD_DTYPE, "constant %u '%s': %llu bytes of data, but %lld %s elements need %llu",
                               i, v->name, (unsigned long long)v->nbytes, (long long)numel, opara_dtype_name(v->dtype),
                               (unsigned long long)expect);
        if (v->nbytes && !v->data)
            return opara__fail(g->rt, OPARA_ERR_CORRUPT, "constant %u '%s' has no data", i, v->name);
    }
    return OPARA_OK;
}

static opara_result opara__validate_io(opara__graph* g) {
    uint8_t* seen = (uint8_t*)opara__calloc(g->rt, (size_t)g->n_values + 1, 1);
    uint32_t i, n_input_values = 0;
    opara_result r = OPARA_OK;
    if (!seen) return opara__fail(g->rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory");
    for (i = 0; i < g->n_inputs && r == OPARA_OK; ++i) {
        int32_t v = g->inputs[i];
        if (g->values[v].kind != OPARA__VALUE_INPUT || (seen[v] & 1))
            r = opara__fail(g->rt, OPARA_ERR_CORRUPT, "graph input %u: tensor '%s' is %s", i, g->values[v].name,
                            (seen[v] & 1) ? "listed twice" : "not an input");
        seen[v] |= 1;
    }
    for (i = 0; i < g->n_outputs && r == OPARA_OK; ++i) {
        int32_t v = g->outputs[i];
        if (seen[v] & 2) r = opara__fail(g->rt, OPARA_ERR_CORRUPT, "graph output %u: tensor '%s' is listed twice", i, g->values[v].name);
        seen[v] |= 2;
    }
    for (i = 0; i < g->n_values && r == OPARA_OK; ++i)
        if (g->values[i].kind == OPARA__VALUE_INPUT) ++n_input_values;
    if (r == OPARA_OK && n_input_values != g->n_inputs)
        r = opara__fail(g->rt, OPARA_ERR_CORRUPT, "%u tensors are inputs but the graph lists %u", n_input_values, g->n_inputs);
    if (r == OPARA_OK && g->n_outputs == 0) r = opara__fail(g->rt, OPARA_ERR_CORRUPT, "the graph has no outputs");
    opara__free(g->rt, seen);
    return r;
}

/* Infers dtypes, checks declared activation dtypes against them, fills in unknown ones, and
   checks that shapes infer at batch 1. */
static opara_result opara__validate_flow(opara__graph* g) {
    opara_dtype* dt = (opara_dtype*)opara__calloc(g->rt, (size_t)g->n_values + 1, sizeof(opara_dtype));
    opara__shape* shapes = (opara__shape*)opara__calloc(g->rt, (size_t)g->n_values + 1, sizeof(opara__shape));
    opara_result r = OPARA_OK;
    uint32_t i;
    if (!dt || !shapes) r = opara__fail(g->rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory validating the graph");
    if (r == OPARA_OK) r = opara__refuse_zero_sized(g->rt, g, NULL);
    if (r == OPARA_OK) r = opara__infer_dtypes(g->rt, g, dt);
    for (i = 0; i < g->n_values && r == OPARA_OK; ++i) {
        opara__value* v = &g->values[i];
        if (v->kind != OPARA__VALUE_ACTIVATION) continue;
        if (v->dtype != OPARA_DTYPE_UNDEFINED && v->dtype != dt[i])
            r = opara__fail(g->rt, OPARA_ERR_BAD_DTYPE, "tensor %u '%s' is declared %s but node %d '%s' (%s) produces %s", i,
                            v->name, opara_dtype_name(v->dtype), v->producer, g->nodes[v->producer].name,
                            opara__op_name(g->nodes[v->producer].op), opara_dtype_name(dt[i]));
        v->dtype = dt[i];
    }
    if (r == OPARA_OK) r = opara__infer_shapes(g->rt, g, 1, shapes);
    if (r == OPARA_OK) r = opara__refuse_zero_sized(g->rt, g, shapes);
    opara__free(g->rt, dt);
    opara__free(g->rt, shapes);
    return r;
}

OPARA__PRIVATE opara_result opara__graph_validate(opara__graph* g) {
    uint32_t i;
    opara_result r = OPARA_OK;
    if (g->n_values > OPARA_MAX_TENSORS || g->n_nodes > OPARA_MAX_NODES)
        return opara__fail(g->rt, OPARA_ERR_LIMIT_EXCEEDED, "%u tensors, %u nodes (limits %u, %u)", g->n_values, g->n_nodes,
                           (unsigned)OPARA_MAX_TENSORS, (unsigned)OPARA_MAX_NODES);
    for (i = 0; i < g->n_values && r == OPARA_OK; ++i) r = opara__validate_value(g, i);
    for (i = 0; i < g->n_nodes && r == OPARA_OK; ++i) {
        if (g->nodes[i].n_outputs == 0) r = opara__fail(g->rt, OPARA_ERR_CORRUPT, "node %u '%s' has no outputs", i, g->nodes[i].name);
        else if (g->nodes[i].n_inputs > OPARA_MAX_NODE_IO || g->nodes[i].n_outputs > OPARA_MAX_NODE_IO)
            r = opara__fail(g->rt, OPARA_ERR_LIMIT_EXCEEDED, "node %u '%s': too many inputs or outputs", i, g->nodes[i].name);
        else r = opara__validate_attrs(g, i);
    }
    if (r == OPARA_OK) r = opara__validate_io(g);
    if (r == OPARA_OK) r = opara__graph_finalize(g);
    if (r == OPARA_OK) r = opara__validate_flow(g);
    return r;
}
