/* Strategies: launch orders (Alg. 2, topological, DFS, BFS), stream allocation (Opara Alg. 1,
   sequential, wavefront, Nimble) and the plan object that ties them to the sync and memory plans. */
#include "opara_sched.h"

OPARADEF const char* opara_strategy_name(opara_strategy strategy) {
    switch (strategy) {
    case OPARA_STRATEGY_OPARA: return "opara";
    case OPARA_STRATEGY_SEQUENTIAL: return "sequential";
    case OPARA_STRATEGY_WAVEFRONT: return "wavefront";
    case OPARA_STRATEGY_NIMBLE: return "nimble";
    case OPARA_STRATEGY_OPARA_TOPO: return "opara-topo";
    default: return "?";
    }
}

OPARA__PRIVATE opara_result opara__plan_create(const opara__graph* g, const uint64_t* value_bytes,
                                              const opara__op_desc* descs, const opara__device* dev,
                                              const opara__plan_desc* desc, opara__plan** out) {
    (void)value_bytes; (void)descs; (void)dev; (void)desc;
    *out = NULL;
    return opara__fail(g->rt, OPARA_ERR_UNSUPPORTED, "planning is not implemented yet");
}

OPARA__PRIVATE void opara__plan_free(opara_runtime* rt, opara__plan* plan) {
    opara__free(rt, plan);
}

/* Placeholders until the strategies land (the interface above is final). */
OPARA__PRIVATE double opara__op_demand(const opara__op_desc* d, const opara__device* dev, opara__metric metric) {
    (void)d; (void)dev; (void)metric;
    return 0.0;
}

OPARA__PRIVATE opara_result opara__sched_order(const opara__graph* g, const opara__op_desc* descs,
                                              const opara__device* dev, const opara__plan_desc* desc,
                                              uint32_t* order) {
    (void)descs; (void)dev; (void)desc; (void)order;
    return opara__fail(g->rt, OPARA_ERR_UNSUPPORTED, "not implemented yet");
}

OPARA__PRIVATE opara_result opara__sched_alg1(const opara__graph* g, const uint32_t* order,
                                             const opara__plan_desc* desc, uint32_t* stream, uint32_t* n_streams) {
    (void)order; (void)desc; (void)stream; (void)n_streams;
    return opara__fail(g->rt, OPARA_ERR_UNSUPPORTED, "not implemented yet");
}

OPARA__PRIVATE opara_result opara__plan_verify(const opara__graph* g, const opara__plan* plan) {
    (void)plan;
    return opara__fail(g->rt, OPARA_ERR_UNSUPPORTED, "not implemented yet");
}

OPARA__PRIVATE int opara__plan_concat_input_in_place(const opara__graph* g, const opara__plan* plan, uint32_t node,
                                                    uint32_t input_index) {
    (void)g; (void)plan; (void)node; (void)input_index;
    return 0;
}

OPARA__PRIVATE const opara__device* opara__device_preset(const char* name) { (void)name; return NULL; }
OPARA__PRIVATE const opara__device* opara__device_default(void) { return NULL; }
OPARA__PRIVATE double opara__device_balance(const opara__device* dev) { (void)dev; return 0.0; }
OPARA__PRIVATE opara_result opara__describe_ops(const opara__graph* g, const opara__shape* shapes,
                                               const opara__device* dev, opara__op_desc* out) {
    (void)shapes; (void)dev; (void)out;
    return opara__fail(g->rt, OPARA_ERR_UNSUPPORTED, "not implemented yet");
}
OPARA__PRIVATE opara_result opara__value_bytes_from_shapes(const opara__graph* g, const opara__shape* shapes,
                                                          uint64_t* out) {
    (void)shapes; (void)out;
    return opara__fail(g->rt, OPARA_ERR_UNSUPPORTED, "not implemented yet");
}
OPARA__PRIVATE int opara__op_is_view(opara__op op) {
    return op == OPARA__OP_RESHAPE || op == OPARA__OP_FLATTEN || op == OPARA__OP_SQUEEZE || op == OPARA__OP_UNSQUEEZE;
}
OPARA__PRIVATE opara__op_class opara__op_default_class(opara__op op) { (void)op; return OPARA__CLASS_COMPUTE; }
