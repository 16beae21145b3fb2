/* The public inspection API (opara_api.h, "Inspection"): plans made from a model and borrowed from
   a session, every getter's bounds and NULL checks, and values checked against facts worked out by
   hand for small graphs built with the public builder (a diamond whose two branches Opara puts on
   two streams, tensor sizes, the GEMM cost formula, non-overlapping arena blocks), plus the
   simulator fed from a plan against the private path it replaces. */
#define OPARA_IMPLEMENTATION
#include "opara.h"
#include "opara_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static opara_runtime* g_rt;

#define D 256 /* feature width of the diamond */

/* x[N, D] -> a = Relu(x) -> b = MatMul(a, W) and c = Sigmoid(a) -> d = Add(b, c), the output. Node
   indices follow the order of the calls: a 0, b 1, c 2, d 3. */
static opara_model* diamond(void) {
    static float w[D * D];
    const int64_t xdims[] = {OPARA_DIM_BATCH, D}, wdims[] = {D, D};
    const char *x[] = {"x"}, *a[] = {"a"}, *aw[] = {"a", "W"}, *b[] = {"b"}, *c[] = {"c"}, *bc[] = {"b", "c"}, *d[] = {"d"};
    opara_builder* bl = NULL;
    opara_model* m = NULL;
    if (opara_builder_create(g_rt, &bl) != OPARA_OK) return NULL;
    opara_builder_add_input(bl, "x", OPARA_DTYPE_F32, 2, xdims);
    opara_builder_add_constant(bl, "W", OPARA_DTYPE_F32, 2, wdims, w, sizeof w);
    opara_builder_add_node(bl, "Relu", "relu", 1, x, 1, a, 0, NULL);
    opara_builder_add_node(bl, "MatMul", "matmul", 2, aw, 1, b, 0, NULL);
    opara_builder_add_node(bl, "Sigmoid", "sigmoid", 1, a, 1, c, 0, NULL);
    opara_builder_add_node(bl, "Add", "add", 2, bc, 1, d, 0, NULL);
    opara_builder_add_output(bl, "d");
    if (opara_builder_finish(bl, &m) != OPARA_OK) m = NULL;
    opara_builder_destroy(bl);
    return m;
}

static opara_plan* plan_of(const opara_model* m, opara_strategy strategy, int64_t batch) {
    opara_plan_desc d;
    opara_plan* p = NULL;
    memset(&d, 0, sizeof d);
    d.strategy = strategy;
    d.batch_size = batch;
    return opara_plan_create(m, &d, &p) == OPARA_OK ? p : NULL;
}

/* Index of the tensor named `name`, -1 when absent. */
static int32_t tensor_named(const opara_plan* p, const char* name) {
    uint32_t i;
    opara_plan_tensor t;
    for (i = 0; i < opara_plan_tensor_count(p); ++i)
        if (opara_plan_get_tensor(p, i, &t) == OPARA_OK && strcmp(t.name, name) == 0) return (int32_t)i;
    return -1;
}

OT_TEST(nodes_of_the_diamond) {
    opara_model* m = diamond();
    opara_plan* p;
    opara_plan_node n;
    const char* ops[] = {"Relu", "MatMul", "Sigmoid", "Add"};
    const char* names[] = {"relu", "matmul", "sigmoid", "add"};
    uint32_t i;
    REQUIRE(m != NULL);
    p = plan_of(m, OPARA_STRATEGY_OPARA, 1);
    REQUIRE(p != NULL);
    CHECK_EQ(opara_plan_node_count(p), 4u);
    for (i = 0; i < 4; ++i) {
        REQUIRE(opara_plan_get_node(p, i, &n) == OPARA_OK);
        CHECK(strcmp(n.op, ops[i]) == 0);
        CHECK(strcmp(n.name, names[i]) == 0);
        CHECK_EQ(n.n_outputs, 1u);
        CHECK_EQ(n.n_inputs, i == 0 || i == 2 ? 1u : 2u);
    }
    /* the relu comes first and the add last in any topological order */
    REQUIRE(opara_plan_get_node(p, 0, &n) == OPARA_OK);
    CHECK_EQ(n.order, 0u);
    CHECK_EQ(n.level, 0u);
    REQUIRE(opara_plan_get_node(p, 3, &n) == OPARA_OK);
    CHECK_EQ(n.order, 3u);
    CHECK_EQ(n.level, 2u);
    opara_plan_destroy(p);
    opara_model_destroy(m);
}

OT_TEST(launch_positions_invert_node_at) {
    opara_model* m = diamond();
    opara_plan* p = m ? plan_of(m, OPARA_STRATEGY_OPARA, 1) : NULL;
    uint32_t pos, node, seen = 0;
    opara_plan_node n;
    REQUIRE(p != NULL);
    for (pos = 0; pos < opara_plan_node_count(p); ++pos) {
        REQUIRE(opara_plan_node_at(p, pos, &node) == OPARA_OK);
        REQUIRE(opara_plan_get_node(p, node, &n) == OPARA_OK);
        CHECK_EQ(n.order, pos);
        seen |= 1u << node;
    }
    CHECK_EQ(seen, 15u); /* a permutation of the four nodes */
    opara_plan_destroy(p);
    opara_model_destroy(m);
}

OT_TEST(opara_puts_the_branches_on_two_streams) {
    opara_model* m = diamond();
    opara_plan* p = m ? plan_of(m, OPARA_STRATEGY_OPARA, 1) : NULL;
    opara_plan_node b, c, add;
    opara_plan_stats st;
    uint32_t other, waited;
    REQUIRE(p != NULL);
    REQUIRE(opara_plan_get_node(p, 1, &b) == OPARA_OK);
    REQUIRE(opara_plan_get_node(p, 2, &c) == OPARA_OK);
    REQUIRE(opara_plan_get_node(p, 3, &add) == OPARA_OK);
    CHECK(b.stream != c.stream);
    CHECK_EQ(opara_plan_stream_count(p), 2u);
    /* the add runs on one branch's stream and waits on the other branch's event */
    CHECK(add.stream == b.stream || add.stream == c.stream);
    other = add.stream == b.stream ? 2u : 1u;
    REQUIRE(add.n_waits == 1u);
    REQUIRE(opara_plan_node_wait(p, 3, 0, &waited) == OPARA_OK);
    CHECK_EQ(waited, other);
    REQUIRE(opara_plan_get_node(p, other, &c) == OPARA_OK);
    CHECK(c.records_event);
    REQUIRE(opara_plan_get_stats(p, &st) == OPARA_OK);
    CHECK_EQ(st.strategy, OPARA_STRATEGY_OPARA);
    CHECK_EQ(st.launch_order, OPARA_LAUNCH_ALG2); /* the strategy's own order, resolved */
    CHECK_EQ(st.n_nodes, 4u);
    CHECK_EQ(st.n_streams, 2u);
    /* two cross-stream edges, each a wait: relu -> the branch on the new stream, that branch -> add */
    CHECK_EQ(st.n_waits, 2u);
    CHECK_EQ(st.n_cross_edges, 2u);
    CHECK(strcmp(st.device, "rtx2080s") == 0);
    opara_plan_destroy(p);
    opara_model_destroy(m);
}

OT_TEST(sequential_is_one_stream_without_waits) {
    opara_model* m = diamond();
    opara_plan* p = m ? plan_of(m, OPARA_STRATEGY_SEQUENTIAL, 1) : NULL;
    opara_plan_stats st;
    opara_plan_stream s;
    uint32_t i;
    opara_plan_node n;
    REQUIRE(p != NULL);
    REQUIRE(opara_plan_get_stats(p, &st) == OPARA_OK);
    CHECK_EQ(st.n_streams, 1u);
    CHECK_EQ(st.n_waits, 0u);
    CHECK_EQ(st.n_events, 0u);
    CHECK_EQ(st.launch_order, OPARA_LAUNCH_TOPO);
    REQUIRE(opara_plan_get_stream(p, 0, &s) == OPARA_OK);
    CHECK_EQ(s.n_nodes, 4u);
    CHECK_EQ(s.first_node, 0u);
    CHECK_EQ(s.last_node, 3u);
    for (i = 0; i < 4; ++i) {
        REQUIRE(opara_plan_get_node(p, i, &n) == OPARA_OK);
        CHECK_EQ(n.stream, 0u);
        CHECK_EQ(n.n_waits, 0u);
    }
    opara_plan_destroy(p);
    opara_model_destroy(m);
}

OT_TEST(streams_partition_the_nodes) {
    opara_model* m = diamond();
    opara_plan* p = m ? plan_of(m, OPARA_STRATEGY_OPARA, 1) : NULL;
    opara_plan_stream s;
    opara_plan_node first, last;
    uint32_t k, total = 0;
    REQUIRE(p != NULL);
    for (k = 0; k < opara_plan_stream_count(p); ++k) {
        REQUIRE(opara_plan_get_stream(p, k, &s) == OPARA_OK);
        REQUIRE(opara_plan_get_node(p, s.first_node, &first) == OPARA_OK);
        REQUIRE(opara_plan_get_node(p, s.last_node, &last) == OPARA_OK);
        CHECK_EQ(first.stream, k);
        CHECK_EQ(last.stream, k);
        CHECK_EQ(first.stream_rank, 1u);
        CHECK_EQ(last.stream_rank, s.n_nodes);
        total += s.n_nodes;
    }
    CHECK_EQ(total, 4u);
    opara_plan_destroy(p);
    opara_model_destroy(m);
}

OT_TEST(node_inputs_and_outputs_name_the_tensors) {
    opara_model* m = diamond();
    opara_plan* p = m ? plan_of(m, OPARA_STRATEGY_OPARA, 1) : NULL;
    int32_t t;
    opara_plan_tensor info;
    REQUIRE(p != NULL);
    REQUIRE(opara_plan_node_input(p, 3, 0, &t) == OPARA_OK);
    CHECK_EQ(t, tensor_named(p, "b"));
    REQUIRE(opara_plan_node_input(p, 3, 1, &t) == OPARA_OK);
    CHECK_EQ(t, tensor_named(p, "c"));
    REQUIRE(opara_plan_node_input(p, 1, 1, &t) == OPARA_OK);
    CHECK_EQ(t, tensor_named(p, "W"));
    REQUIRE(opara_plan_node_output(p, 3, 0, &t) == OPARA_OK);
    CHECK_EQ(t, tensor_named(p, "d"));
    REQUIRE(opara_plan_get_tensor(p, (uint32_t)t, &info) == OPARA_OK);
    CHECK_EQ(info.producer, 3);
    CHECK(info.is_output);
    opara_plan_destroy(p);
    opara_model_destroy(m);
}

OT_TEST(tensors_have_the_batch_shape_and_bytes) {
    opara_model* m = diamond();
    opara_plan* p = m ? plan_of(m, OPARA_STRATEGY_OPARA, 3) : NULL;
    opara_plan_tensor t;
    REQUIRE(p != NULL);
    CHECK_EQ(opara_plan_tensor_count(p), 6u); /* x, W, a, b, c, d */
    REQUIRE(opara_plan_get_tensor(p, (uint32_t)tensor_named(p, "c"), &t) == OPARA_OK);
    CHECK_EQ(t.dtype, OPARA_DTYPE_F32);
    CHECK_EQ(t.rank, 2);
    CHECK_EQ(t.dims[0], 3);
    CHECK_EQ(t.dims[1], D);
    CHECK_EQ(t.bytes, (uint64_t)3 * D * 4);
    CHECK_EQ(t.storage, OPARA_STORAGE_ARENA);
    CHECK_EQ(t.producer, 2);
    REQUIRE(opara_plan_get_tensor(p, (uint32_t)tensor_named(p, "x"), &t) == OPARA_OK);
    CHECK_EQ(t.storage, OPARA_STORAGE_EXTERNAL);
    CHECK(t.is_input);
    CHECK_EQ(t.producer, -1);
    REQUIRE(opara_plan_get_tensor(p, (uint32_t)tensor_named(p, "W"), &t) == OPARA_OK);
    CHECK(t.is_constant);
    CHECK_EQ(t.bytes, (uint64_t)D * D * 4);
    CHECK_EQ(t.storage, OPARA_STORAGE_EXTERNAL);
    opara_plan_destroy(p);
    opara_model_destroy(m);
}

/* [offset, offset + bytes) of two tensors live at the same time must not meet. */
static int disjoint(const opara_plan_tensor* a, const opara_plan_tensor* b) {
    return a->offset + a->bytes <= b->offset || b->offset + b->bytes <= a->offset;
}

OT_TEST(live_together_tensors_do_not_overlap) {
    opara_model* m = diamond();
    opara_plan* p = m ? plan_of(m, OPARA_STRATEGY_OPARA, 2) : NULL;
    opara_plan_tensor a, b, c;
    opara_plan_stats st;
    REQUIRE(p != NULL);
    REQUIRE(opara_plan_get_tensor(p, (uint32_t)tensor_named(p, "a"), &a) == OPARA_OK);
    REQUIRE(opara_plan_get_tensor(p, (uint32_t)tensor_named(p, "b"), &b) == OPARA_OK);
    REQUIRE(opara_plan_get_tensor(p, (uint32_t)tensor_named(p, "c"), &c) == OPARA_OK);
    REQUIRE(a.storage == OPARA_STORAGE_ARENA && b.storage == OPARA_STORAGE_ARENA && c.storage == OPARA_STORAGE_ARENA);
    /* b and c run at the same time on two streams; both read a */
    CHECK(disjoint(&b, &c));
    CHECK(disjoint(&a, &b));
    CHECK(disjoint(&a, &c));
    REQUIRE(opara_plan_get_stats(p, &st) == OPARA_OK);
    CHECK(st.arena_bytes >= 3u * 2 * D * 4);
    CHECK(b.offset + b.bytes <= st.arena_bytes);
    CHECK(c.offset + c.bytes <= st.arena_bytes);
    CHECK_EQ(st.alignment, 256u);
    CHECK_EQ(a.offset % 256, 0u);
    CHECK(st.live_bytes >= 3u * 2 * D * 4); /* a, b and c are live when the last branch starts */
    CHECK(st.no_reuse_bytes >= st.arena_bytes);
    opara_plan_destroy(p);
    opara_model_destroy(m);
}

OT_TEST(alignment_and_verify_are_honoured) {
    opara_model* m = diamond();
    opara_plan_desc d;
    opara_plan* p = NULL;
    opara_plan_stats st;
    uint32_t v;
    opara_plan_tensor t;
    REQUIRE(m != NULL);
    memset(&d, 0, sizeof d);
    d.alignment = 64;
    d.verify = 1;
    d.batch_size = 1;
    REQUIRE(opara_plan_create(m, &d, &p) == OPARA_OK);
    REQUIRE(opara_plan_get_stats(p, &st) == OPARA_OK);
    CHECK_EQ(st.alignment, 64u);
    for (v = 0; v < opara_plan_tensor_count(p); ++v) {
        REQUIRE(opara_plan_get_tensor(p, v, &t) == OPARA_OK);
        if (t.storage == OPARA_STORAGE_ARENA) CHECK_EQ(t.offset % 64, 0u);
    }
    CHECK_EQ(opara_plan_verify(p), OPARA_OK);
    opara_plan_destroy(p);
    opara_model_destroy(m);
}

OT_TEST(costs_follow_the_documented_formulas) {
    opara_model* m = diamond();
    opara_plan* p = m ? plan_of(m, OPARA_STRATEGY_OPARA, 256) : NULL;
    opara_node_cost c;
    const double act = 256.0 * D * 4; /* bytes of one [256, D] tensor */
    REQUIRE(p != NULL);
    /* MatMul [256, D] x [D, D]: 2*M*N*K FLOPs; bytes = inputs (weights included) + output; 42 FLOP/B
       is past the RTX 2080 SUPER's balance (11.15 TFLOP/s / 496 GB/s = 22.5): compute-bound */
    REQUIRE(opara_plan_get_node_cost(p, 1, &c) == OPARA_OK);
    CHECK(c.flops == 2.0 * 256 * D * D);
    CHECK(c.bytes == act + (double)D * D * 4 + act);
    CHECK_EQ(c.resource_class, OPARA_RESOURCE_COMPUTE);
    CHECK(c.grid >= 1 && c.block_threads >= 1);
    CHECK(!c.kernel_less);
    CHECK(!c.time_measured);
    CHECK(c.time_ms > 0);
    /* Relu: one FLOP per element against 8 bytes moved: memory-bound */
    REQUIRE(opara_plan_get_node_cost(p, 0, &c) == OPARA_OK);
    CHECK(c.flops == 256.0 * D);
    CHECK(c.bytes == 2 * act);
    CHECK_EQ(c.resource_class, OPARA_RESOURCE_MEMORY);
    opara_plan_destroy(p);
    opara_model_destroy(m);
}

OT_TEST(device_and_knobs_reach_the_planner) {
    opara_model* m = diamond();
    opara_sim_device h100;
    opara_plan_desc d;
    opara_plan* p = NULL;
    opara_plan_stats st;
    REQUIRE(m != NULL);
    REQUIRE(opara_sim_device_preset("h100", &h100) == OPARA_OK);
    memset(&d, 0, sizeof d);
    d.device = &h100;
    d.strategy = OPARA_STRATEGY_WAVEFRONT;
    d.launch_order = OPARA_LAUNCH_BFS;
    REQUIRE(opara_plan_create(m, &d, &p) == OPARA_OK);
    REQUIRE(opara_plan_get_stats(p, &st) == OPARA_OK);
    CHECK(strcmp(st.device, "h100") == 0);
    CHECK_EQ(st.strategy, OPARA_STRATEGY_WAVEFRONT);
    CHECK_EQ(st.launch_order, OPARA_LAUNCH_BFS);
    opara_plan_destroy(p);
    opara_model_destroy(m);
}

OT_TEST(bad_descs_are_refused) {
    opara_model* m = diamond();
    opara_plan_desc d;
    opara_plan* p = (opara_plan*)&d;
    opara_sim_device dev;
    double t[4] = {0};
    REQUIRE(m != NULL);
    memset(&d, 0, sizeof d);
    d.strategy = OPARA_STRATEGY_COUNT;
    CHECK_EQ(opara_plan_create(m, &d, &p), OPARA_ERR_BAD_ENUM);
    CHECK(p == NULL);
    memset(&d, 0, sizeof d);
    d.metric = OPARA_PLAN_METRIC_COUNT;
    CHECK_EQ(opara_plan_create(m, &d, &p), OPARA_ERR_BAD_ENUM);
    memset(&d, 0, sizeof d);
    d.alignment = 48;
    CHECK_EQ(opara_plan_create(m, &d, &p), OPARA_ERR_INVALID_ARGS);
    CHECK(strstr(opara_runtime_last_error(g_rt), "48") != NULL);
    memset(&d, 0, sizeof d);
    d.batch_size = -2;
    CHECK_EQ(opara_plan_create(m, &d, &p), OPARA_ERR_INVALID_ARGS);
    memset(&d, 0, sizeof d);
    d.memory_budget = -1;
    CHECK_EQ(opara_plan_create(m, &d, &p), OPARA_ERR_INVALID_ARGS);
    memset(&d, 0, sizeof d);
    d.est_start_us = t;
    CHECK_EQ(opara_plan_create(m, &d, &p), OPARA_ERR_INVALID_ARGS);
    memset(&d, 0, sizeof d);
    REQUIRE(opara_sim_device_preset("a100", &dev) == OPARA_OK);
    dev.mem_gbps = 0;
    d.device = &dev;
    CHECK_EQ(opara_plan_create(m, &d, &p), OPARA_ERR_INVALID_ARGS);
    CHECK(strstr(opara_runtime_last_error(g_rt), "a100") != NULL);
    CHECK_EQ(opara_plan_create(NULL, NULL, &p), OPARA_ERR_INVALID_ARGS);
    CHECK_EQ(opara_plan_create(m, NULL, NULL), OPARA_ERR_INVALID_ARGS);
    opara_model_destroy(m);
}

OT_TEST(getters_check_indices_and_null) {
    opara_model* m = diamond();
    opara_plan* p = m ? plan_of(m, OPARA_STRATEGY_OPARA, 1) : NULL;
    opara_plan_node n;
    opara_plan_stream s;
    opara_plan_tensor t;
    opara_plan_stats st;
    opara_node_cost c;
    uint32_t u;
    int32_t v;
    REQUIRE(p != NULL);
    CHECK_EQ(opara_plan_get_node(p, 4, &n), OPARA_ERR_NOT_FOUND);
    CHECK_EQ(opara_plan_get_node(p, 0, NULL), OPARA_ERR_INVALID_ARGS);
    CHECK_EQ(opara_plan_get_node(NULL, 0, &n), OPARA_ERR_INVALID_ARGS);
    CHECK_EQ(opara_plan_node_at(p, 4, &u), OPARA_ERR_NOT_FOUND);
    CHECK_EQ(opara_plan_node_at(p, 0, NULL), OPARA_ERR_INVALID_ARGS);
    CHECK_EQ(opara_plan_node_wait(p, 0, 0, &u), OPARA_ERR_NOT_FOUND); /* the relu waits on nothing */
    CHECK_EQ(opara_plan_node_wait(p, 3, 1, &u), OPARA_ERR_NOT_FOUND);
    CHECK_EQ(opara_plan_node_wait(p, 9, 0, &u), OPARA_ERR_NOT_FOUND);
    CHECK_EQ(opara_plan_node_wait(p, 3, 0, NULL), OPARA_ERR_INVALID_ARGS);
    CHECK_EQ(opara_plan_node_input(p, 0, 1, &v), OPARA_ERR_NOT_FOUND);
    CHECK_EQ(opara_plan_node_input(p, 4, 0, &v), OPARA_ERR_NOT_FOUND);
    CHECK_EQ(opara_plan_node_output(p, 0, 1, &v), OPARA_ERR_NOT_FOUND);
    CHECK_EQ(opara_plan_node_output(p, 0, 0, NULL), OPARA_ERR_INVALID_ARGS);
    CHECK_EQ(opara_plan_get_stream(p, 2, &s), OPARA_ERR_NOT_FOUND);
    CHECK_EQ(opara_plan_get_stream(p, 0, NULL), OPARA_ERR_INVALID_ARGS);
    CHECK_EQ(opara_plan_get_tensor(p, 6, &t), OPARA_ERR_NOT_FOUND);
    CHECK_EQ(opara_plan_get_tensor(NULL, 0, &t), OPARA_ERR_INVALID_ARGS);
    CHECK_EQ(opara_plan_get_node_cost(p, 4, &c), OPARA_ERR_NOT_FOUND);
    CHECK_EQ(opara_plan_get_node_cost(p, 0, NULL), OPARA_ERR_INVALID_ARGS);
    CHECK_EQ(opara_plan_get_stats(p, NULL), OPARA_ERR_INVALID_ARGS);
    CHECK_EQ(opara_plan_get_stats(NULL, &st), OPARA_ERR_INVALID_ARGS);
    CHECK_EQ(opara_plan_verify(NULL), OPARA_ERR_INVALID_ARGS);
    CHECK_EQ(opara_plan_node_count(NULL), 0u);
    CHECK_EQ(opara_plan_stream_count(NULL), 0u);
    CHECK_EQ(opara_plan_tensor_count(NULL), 0u);
    opara_plan_destroy(NULL);
    opara_plan_destroy(p);
    opara_model_destroy(m);
}

OT_TEST(plan_keeps_its_model_alive) {
    opara_model* m = diamond();
    opara_plan* p = m ? plan_of(m, OPARA_STRATEGY_OPARA, 1) : NULL;
    opara_plan_node n;
    REQUIRE(p != NULL);
    opara_model_destroy(m);
    REQUIRE(opara_plan_get_node(p, 1, &n) == OPARA_OK);
    CHECK(strcmp(n.name, "matmul") == 0);
    opara_plan_destroy(p);
}

OT_TEST(simulating_a_plan_matches_the_private_path) {
    opara_model* m = diamond();
    opara_sim_device dev;
    opara_plan* p = m ? plan_of(m, OPARA_STRATEGY_OPARA, 8) : NULL;
    opara_sim_result pub, priv;
    opara__plan_desc pd;
    opara__plan* plan = NULL;
    opara__op_desc* descs = NULL;
    uint32_t i;
    REQUIRE(p != NULL);
    REQUIRE(opara_sim_device_preset("rtx2080s", &dev) == OPARA_OK);
    REQUIRE(opara_plan_simulate(p, &dev, OPARA_SIM_GRAPH, &pub) == OPARA_OK);
    memset(&pd, 0, sizeof pd);
    REQUIRE(opara__plan_graph(opara__model_graph(m), 8, opara__device_preset("rtx2080s"), &pd, &plan, NULL, NULL, &descs) ==
            OPARA_OK);
    REQUIRE(opara__sim_plan(g_rt, &dev, OPARA_SIM_GRAPH, plan, descs, &priv) == OPARA_OK);
    CHECK_EQ(pub.n_ops, 4u);
    CHECK_EQ(pub.n_ops, priv.n_ops);
    CHECK(pub.makespan_us == priv.makespan_us);
    CHECK(pub.makespan_us > 0);
    for (i = 0; i < pub.n_ops && i < priv.n_ops; ++i) {
        CHECK(pub.ops[i].start_us == priv.ops[i].start_us);
        CHECK(pub.ops[i].end_us == priv.ops[i].end_us);
    }
    opara_sim_result_free(g_rt, &priv);
    CHECK_EQ(opara_plan_simulate(p, &dev, (opara_sim_mode)7, &priv), OPARA_ERR_BAD_ENUM);
    CHECK_EQ(opara_plan_simulate(p, NULL, OPARA_SIM_GRAPH, &priv), OPARA_ERR_INVALID_ARGS);
    CHECK_EQ(opara_plan_simulate(NULL, &dev, OPARA_SIM_GRAPH, &priv), OPARA_ERR_INVALID_ARGS);
    opara_sim_result_free(g_rt, &pub);
    opara__plan_free(g_rt, plan);
    opara__free(g_rt, descs);
    opara_plan_destroy(p);
    opara_model_destroy(m);
}

OT_TEST(a_cpu_session_shows_the_plan_it_runs) {
    opara_model* m = diamond();
    opara_session_desc sd;
    opara_session* s = NULL;
    opara_plan* p = NULL;
    opara_plan_info info;
    opara_plan_stats st;
    opara_node_cost c;
    opara_node_kernel k;
    REQUIRE(m != NULL);
    memset(&sd, 0, sizeof sd);
    sd.backend = OPARA_BACKEND_CPU;
    sd.batch_size = 2;
    sd.threads = 2;
    REQUIRE(opara_session_create(g_rt, m, &sd, &s) == OPARA_OK);
    REQUIRE(opara_session_get_plan(s, &p) == OPARA_OK);
    REQUIRE(opara_session_get_plan_info(s, &info) == OPARA_OK);
    REQUIRE(opara_plan_get_stats(p, &st) == OPARA_OK);
    CHECK_EQ(st.n_nodes, info.n_nodes);
    CHECK_EQ(st.n_streams, info.n_streams);
    CHECK_EQ(st.n_waits, info.n_waits);
    CHECK_EQ(st.arena_bytes, info.peak_memory_bytes);
    CHECK_EQ(st.n_streams, 2u);
    CHECK_EQ(opara_plan_get_node_cost(p, 1, &c), OPARA_OK);
    CHECK(c.flops == 2.0 * 2 * D * D);
    CHECK_EQ(opara_plan_verify(p), OPARA_OK);
    CHECK_EQ(opara_session_get_node_kernel(s, 0, &k), OPARA_ERR_UNSUPPORTED);
    CHECK_EQ(opara_session_get_node_kernel(s, 4, &k), OPARA_ERR_NOT_FOUND);
    CHECK_EQ(opara_session_get_node_kernel(s, 0, NULL), OPARA_ERR_INVALID_ARGS);
    opara_plan_destroy(p);
    CHECK_EQ(opara_session_get_plan(NULL, &p), OPARA_ERR_INVALID_ARGS);
    CHECK(p == NULL);
    CHECK_EQ(opara_session_get_plan(s, NULL), OPARA_ERR_INVALID_ARGS);
    opara_session_destroy(s);
    opara_model_destroy(m);
}

OT_TEST(max_width_of_the_diamond_is_two) {
    opara_model* m = diamond();
    uint32_t w = 0;
    REQUIRE(m != NULL);
    CHECK_EQ(opara_model_max_width(m, 0, &w), OPARA_OK);
    CHECK_EQ(w, 2u);
    CHECK_EQ(opara_model_max_width(m, 3, &w), OPARA_ERR_LIMIT_EXCEEDED);
    CHECK_EQ(opara_model_max_width(m, 0, NULL), OPARA_ERR_INVALID_ARGS);
    CHECK_EQ(opara_model_max_width(NULL, 0, &w), OPARA_ERR_INVALID_ARGS);
    opara_model_destroy(m);
}

OT_TEST(saved_model_loads_back) {
    opara_model *m = diamond(), *back = NULL;
    void* data = NULL;
    size_t size = 0;
    REQUIRE(m != NULL);
    REQUIRE(opara_model_save_memory(m, &data, &size) == OPARA_OK);
    REQUIRE(size > OPARA_FILE_MAGIC_SIZE);
    CHECK(memcmp(data, OPARA_FILE_MAGIC, OPARA_FILE_MAGIC_SIZE) == 0);
    REQUIRE(opara_model_load_memory(g_rt, data, size, &back) == OPARA_OK);
    CHECK_EQ(opara_model_node_count(back), 4u);
    CHECK(strcmp(opara_model_node_op(back, 1), "MatMul") == 0);
    opara_model_destroy(back);
    opara_free(g_rt, data);
    CHECK_EQ(opara_model_save_memory(NULL, &data, &size), OPARA_ERR_INVALID_ARGS);
    CHECK(data == NULL);
    CHECK_EQ(opara_model_save_memory(m, NULL, &size), OPARA_ERR_INVALID_ARGS);
    opara_model_destroy(m);
}

#if !defined(OPARA_NO_STDIO)
/* The plan's drawing, written to path and read back into text (cap bytes); 0 when that fails. */
static int dot_text(const opara_plan* p, const char* path, char* text, size_t cap) {
    FILE* f;
    size_t n;
    if (opara_plan_write_dot(p, path) != OPARA_OK || !(f = fopen(path, "r"))) return 0;
    n = fread(text, 1, cap - 1, f);
    fclose(f);
    remove(path);
    text[n] = 0;
    return 1;
}

OT_TEST(dot_file_has_every_node) {
    opara_model* m = diamond();
    opara_plan* p = m ? plan_of(m, OPARA_STRATEGY_OPARA, 1) : NULL;
    char path[] = "build/tests/test_inspect_plan.dot", text[8192];
    REQUIRE(p != NULL);
    REQUIRE(dot_text(p, path, text, sizeof text));
    CHECK(strstr(text, "digraph") != NULL);
    CHECK(strstr(text, "matmul") != NULL);
    CHECK(strstr(text, "sigmoid") != NULL);
    CHECK(strstr(text, "dashed") != NULL); /* the add's wait on the other branch */
    CHECK_EQ(opara_plan_write_dot(p, "build/no/such/dir/x.dot"), OPARA_ERR_IO);
    CHECK_EQ(opara_plan_write_dot(p, NULL), OPARA_ERR_INVALID_ARGS);
    opara_plan_destroy(p);
    opara_model_destroy(m);
}

/* A binary operator with a fused activation (the ONNX importer's Add -> Relu) is drawn as "Add+Relu". */
OT_TEST(dot_file_names_a_fused_activation) {
    const int64_t xdims[] = {2, D};
    const char *xx[] = {"x", "x"}, *y[] = {"y"};
    char path[] = "build/tests/test_inspect_fused.dot", text[4096];
    opara_builder* bl = NULL;
    opara_model* m = NULL;
    opara_plan* p;
    opara_attr act;
    memset(&act, 0, sizeof act);
    act.name = "activation", act.type = OPARA_ATTR_STRING, act.v.s = "Relu";
    REQUIRE(opara_builder_create(g_rt, &bl) == OPARA_OK);
    opara_builder_add_input(bl, "x", OPARA_DTYPE_F32, 2, xdims);
    opara_builder_add_node(bl, "Add", "residual", 2, xx, 1, y, 1, &act);
    opara_builder_add_output(bl, "y");
    REQUIRE(opara_builder_finish(bl, &m) == OPARA_OK);
    opara_builder_destroy(bl);
    p = plan_of(m, OPARA_STRATEGY_OPARA, 1);
    REQUIRE(p != NULL);
    REQUIRE(dot_text(p, path, text, sizeof text));
    CHECK(strstr(text, "residual\\nAdd+Relu s0") != NULL);
    opara_plan_destroy(p);
    opara_model_destroy(m);
}
#endif


/* x[1, 8] -> Relu and Sigmoid -> Concat(axis 1) [1, 16]: with the batch 1 the dimensions before the
   axis multiply to 1, so each input is one contiguous slice of the output and is written in place. */
static opara_model* concat_model(void) {
    const int64_t xdims[] = {1, 8};
    const char *x[] = {"x"}, *r[] = {"r"}, *s[] = {"s"}, *rs[] = {"r", "s"}, *y[] = {"y"};
    opara_attr axis;
    opara_builder* b = NULL;
    opara_model* m = NULL;
    memset(&axis, 0, sizeof axis);
    axis.name = "axis", axis.type = OPARA_ATTR_INT, axis.v.i = 1;
    if (opara_builder_create(g_rt, &b) != OPARA_OK) return NULL;
    opara_builder_add_input(b, "x", OPARA_DTYPE_F32, 2, xdims);
    opara_builder_add_node(b, "Relu", "relu", 1, x, 1, r, 0, NULL);
    opara_builder_add_node(b, "Sigmoid", "sigmoid", 1, x, 1, s, 0, NULL);
    opara_builder_add_node(b, "Concat", "concat", 2, rs, 1, y, 1, &axis);
    opara_builder_add_output(b, "y");
    if (opara_builder_finish(b, &m) != OPARA_OK) m = NULL;
    opara_builder_destroy(b);
    return m;
}

OT_TEST(concat_inputs_in_place_unless_asked_not_to) {
    opara_model* m = concat_model();
    opara_plan_desc d;
    opara_plan* p = NULL;
    opara_plan_tensor r, s, y;
    opara_plan_stats st;
    REQUIRE(m != NULL);
    memset(&d, 0, sizeof d);
    REQUIRE(opara_plan_create(m, &d, &p) == OPARA_OK);
    REQUIRE(opara_plan_get_tensor(p, (uint32_t)tensor_named(p, "r"), &r) == OPARA_OK);
    REQUIRE(opara_plan_get_tensor(p, (uint32_t)tensor_named(p, "s"), &s) == OPARA_OK);
    REQUIRE(opara_plan_get_tensor(p, (uint32_t)tensor_named(p, "y"), &y) == OPARA_OK);
    CHECK_EQ(r.alias, OPARA_ALIAS_CONCAT);
    CHECK_EQ(r.alias_root, tensor_named(p, "y"));
    CHECK_EQ(r.alias_offset, 0u);
    CHECK_EQ(s.alias, OPARA_ALIAS_CONCAT);
    CHECK_EQ(s.alias_offset, 8u * 4); /* after r's 8 floats */
    CHECK_EQ(s.offset, y.offset + 8u * 4);
    REQUIRE(opara_plan_get_stats(p, &st) == OPARA_OK);
    CHECK_EQ(st.n_concat_in_place, 2u);
    opara_plan_destroy(p);
    d.no_concat_in_place = 1;
    REQUIRE(opara_plan_create(m, &d, &p) == OPARA_OK);
    REQUIRE(opara_plan_get_tensor(p, (uint32_t)tensor_named(p, "r"), &r) == OPARA_OK);
    CHECK_EQ(r.alias, OPARA_ALIAS_NONE);
    CHECK_EQ(r.alias_root, tensor_named(p, "r"));
    REQUIRE(opara_plan_get_stats(p, &st) == OPARA_OK);
    CHECK_EQ(st.n_concat_in_place, 0u);
    opara_plan_destroy(p);
    opara_model_destroy(m);
}

OT_TEST(constants_show_their_bytes) {
    opara_model* m;
    opara_plan* p;
    opara_plan_tensor t;
    void* image = NULL;
    size_t size = 0;
    const float* w;
    m = diamond();
    REQUIRE(m != NULL);
    REQUIRE(opara_model_save_memory(m, &image, &size) == OPARA_OK);
    opara_model_destroy(m);
    m = NULL;
    REQUIRE(opara_model_load_memory(g_rt, image, size, &m) == OPARA_OK); /* zero-copy: the weights stay in image */
    p = plan_of(m, OPARA_STRATEGY_OPARA, 1);
    REQUIRE(p != NULL);
    REQUIRE(opara_plan_get_tensor(p, (uint32_t)tensor_named(p, "W"), &t) == OPARA_OK);
    w = (const float*)t.data;
    REQUIRE(w != NULL);
    CHECK((const char*)w >= (const char*)image && (const char*)w + t.bytes <= (const char*)image + size);
    CHECK(w[0] == 0.0f && w[D * D - 1] == 0.0f); /* the diamond's weights are zeros */
    REQUIRE(opara_plan_get_tensor(p, (uint32_t)tensor_named(p, "a"), &t) == OPARA_OK);
    CHECK(t.data == NULL);
    opara_plan_destroy(p);
    opara_model_destroy(m);
    opara_free(g_rt, image);
}


#ifndef OPARA_EMU_LIB_DIR
#define OPARA_EMU_LIB_DIR "build/cudaemu"
#endif

/* A CUDA session of the diamond on the emulator (or the driver OPARA_CUDA_DRIVER names); NULL when
   no driver loads, with the reason in why. */
static opara_session* cuda_session(opara_model* m, char* why, size_t cap) {
    opara_session_desc sd;
    opara_session* s = NULL;
    setenv("OPARA_CUDA_DRIVER", OPARA_EMU_LIB_DIR "/libcuda.so.1", 0);
    setenv("OPARA_CUBLAS", OPARA_EMU_LIB_DIR "/libcublas.so", 0);
    setenv("OPARA_CUDNN", OPARA_EMU_LIB_DIR "/libcudnn.so", 0);
    memset(&sd, 0, sizeof sd);
    sd.backend = OPARA_BACKEND_CUDA;
    sd.batch_size = 2;
    if (opara_session_create(g_rt, m, &sd, &s) != OPARA_OK) snprintf(why, cap, "%.300s", opara_runtime_last_error(g_rt));
    return s;
}

OT_TEST(a_cuda_session_shows_its_plan_and_kernels) {
    opara_model* m = diamond();
    opara_session* s;
    opara_plan* p = NULL;
    opara_plan_info info;
    opara_plan_stats st;
    opara_node_cost c;
    opara_node_kernel k;
    opara_sim_device dev;
    opara_sim_result res;
    char why[512] = "";
    REQUIRE(m != NULL);
    s = cuda_session(m, why, sizeof why);
    if (!s) {
        opara_model_destroy(m);
        SKIP("no CUDA driver (make cudaemu): %s", why);
    }
    REQUIRE(opara_session_get_plan(s, &p) == OPARA_OK);
    REQUIRE(opara_session_get_plan_info(s, &info) == OPARA_OK);
    REQUIRE(opara_plan_get_stats(p, &st) == OPARA_OK);
    CHECK_EQ(st.n_nodes, 4u);
    CHECK_EQ(st.n_streams, info.n_streams);
    CHECK_EQ(st.n_events, info.n_events);
    CHECK_EQ(st.n_streams, 2u); /* the branches, as on the CPU */
    CHECK_EQ(opara_plan_verify(p), OPARA_OK);
    /* the Relu is our kernel, described by the driver's function attributes, and the plan was made
       with that launch (the descriptors the session keeps) */
    REQUIRE(opara_session_get_node_kernel(s, 0, &k) == OPARA_OK);
    CHECK_EQ(k.source, OPARA_KERNEL_DRIVER);
    REQUIRE(opara_plan_get_node_cost(p, 0, &c) == OPARA_OK);
    CHECK(c.has_info);
    CHECK_EQ(c.grid, k.grid[0] * k.grid[1] * k.grid[2]);
    CHECK_EQ(c.block_threads, k.block[0] * k.block[1] * k.block[2]);
    CHECK_EQ(c.regs_per_thread, k.regs);
    REQUIRE(opara_sim_device_preset("rtx2080s", &dev) == OPARA_OK);
    REQUIRE(opara_plan_simulate(p, &dev, OPARA_SIM_GRAPH, &res) == OPARA_OK);
    CHECK_EQ(res.n_ops, 4u);
    CHECK(res.makespan_us > 0);
    opara_sim_result_free(g_rt, &res);
    CHECK(k.kernel[0] != 0);
    CHECK(k.grid[0] >= 1 && k.block[0] >= 1);
    CHECK(k.max_threads >= k.block[0] * k.block[1] * k.block[2]);
    CHECK(!k.measured); /* no cuda_profile: no times */
    /* the MatMul is a cuBLAS call (a library kernel: the documented estimate without CUPTI) */
    REQUIRE(opara_session_get_node_kernel(s, 1, &k) == OPARA_OK);
    CHECK(k.source == OPARA_KERNEL_ESTIMATE || k.source == OPARA_KERNEL_CUPTI);
    CHECK_EQ(opara_session_get_node_kernel(s, 4, &k), OPARA_ERR_NOT_FOUND);
    opara_plan_destroy(p);
    opara_session_destroy(s);
    opara_model_destroy(m);
}


/* A graph no backend runs: a Conv without weights whose output is declared 3x its input's size. */
OT_TEST(declared_graphs_plan_with_their_declared_sizes) {
    const int64_t xdims[] = {OPARA_DIM_BATCH, 16}, ydims[] = {OPARA_DIM_BATCH, 48}, zdims[] = {OPARA_DIM_BATCH, 48};
    const char *x[] = {"x"}, *y[] = {"y"}, *z[] = {"z"};
    opara_builder* b = NULL;
    opara_model* m = NULL;
    opara_plan_desc d;
    opara_plan* p = NULL;
    opara_plan_tensor t;
    opara_plan_node n;
    REQUIRE(opara_builder_create(g_rt, &b) == OPARA_OK);
    opara_builder_add_input(b, "x", OPARA_DTYPE_F32, 2, xdims);
    opara_builder_add_node(b, "Conv", "conv", 1, x, 1, y, 0, NULL);
    opara_builder_add_node(b, "Relu", "relu", 1, y, 1, z, 0, NULL);
    opara_builder_add_output(b, "z");
    REQUIRE(opara_builder_declare(b, "y", OPARA_DTYPE_F32, 2, ydims) == OPARA_OK);
    REQUIRE(opara_builder_declare(b, "z", OPARA_DTYPE_F32, 2, zdims) == OPARA_OK);
    CHECK(opara_builder_finish(b, &m) != OPARA_OK); /* not a model: the Conv has no weights */
    memset(&d, 0, sizeof d);
    d.batch_size = 5;
    REQUIRE(opara_plan_create_declared(b, &d, &p) == OPARA_OK);
    CHECK_EQ(opara_plan_node_count(p), 2u);
    CHECK_EQ(opara_plan_tensor_count(p), 3u);
    REQUIRE(opara_plan_get_tensor(p, (uint32_t)tensor_named(p, "y"), &t) == OPARA_OK);
    CHECK_EQ(t.rank, 2);
    CHECK_EQ(t.dims[0], 5);
    CHECK_EQ(t.bytes, (uint64_t)5 * 48 * 4);
    CHECK_EQ(t.producer, 0);
    REQUIRE(opara_plan_get_node(p, 1, &n) == OPARA_OK);
    CHECK(strcmp(n.op, "Relu") == 0);
    CHECK_EQ(opara_plan_verify(p), OPARA_OK);
    opara_plan_destroy(p);
    p = NULL;
    /* a declaration must name a node's output */
    opara_builder_declare(b, "ghost", OPARA_DTYPE_F32, 2, ydims);
    CHECK_EQ(opara_plan_create_declared(b, &d, &p), OPARA_ERR_NOT_FOUND);
    CHECK(strstr(opara_runtime_last_error(g_rt), "'ghost'") != NULL);
    CHECK(p == NULL);
    CHECK_EQ(opara_plan_create_declared(NULL, &d, &p), OPARA_ERR_INVALID_ARGS);
    CHECK_EQ(opara_plan_create_declared(b, &d, NULL), OPARA_ERR_INVALID_ARGS);
    CHECK_EQ(opara_builder_declare(NULL, "y", OPARA_DTYPE_F32, 2, ydims), OPARA_ERR_INVALID_ARGS);
    opara_builder_destroy(b);
}

static const opara_test_case tests[] = {
    OT_CASE(nodes_of_the_diamond),
    OT_CASE(launch_positions_invert_node_at),
    OT_CASE(opara_puts_the_branches_on_two_streams),
    OT_CASE(sequential_is_one_stream_without_waits),
    OT_CASE(streams_partition_the_nodes),
    OT_CASE(node_inputs_and_outputs_name_the_tensors),
    OT_CASE(tensors_have_the_batch_shape_and_bytes),
    OT_CASE(live_together_tensors_do_not_overlap),
    OT_CASE(alignment_and_verify_are_honoured),
    OT_CASE(costs_follow_the_documented_formulas),
    OT_CASE(device_and_knobs_reach_the_planner),
    OT_CASE(bad_descs_are_refused),
    OT_CASE(getters_check_indices_and_null),
    OT_CASE(plan_keeps_its_model_alive),
    OT_CASE(simulating_a_plan_matches_the_private_path),
    OT_CASE(a_cpu_session_shows_the_plan_it_runs),
    OT_CASE(a_cuda_session_shows_its_plan_and_kernels),
    OT_CASE(declared_graphs_plan_with_their_declared_sizes),
    OT_CASE(max_width_of_the_diamond_is_two),
    OT_CASE(saved_model_loads_back),
    OT_CASE(concat_inputs_in_place_unless_asked_not_to),
    OT_CASE(constants_show_their_bytes),
#if !defined(OPARA_NO_STDIO)
    OT_CASE(dot_file_has_every_node),
    OT_CASE(dot_file_names_a_fused_activation),
#endif
};

int main(int argc, char** argv) {
    int rc;
    if (opara_runtime_create(NULL, &g_rt) != OPARA_OK) return 1;
    rc = opara_test_main(argc, argv, tests, OT_COUNT(tests));
    opara_runtime_destroy(g_rt);
    return rc;
}
