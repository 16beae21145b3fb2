/* The graph IR: construction, names, attributes, and the derived DAG checked against brute force. */
#define OPARA_IMPLEMENTATION
#include "opara.h"
#include "opara_test.h"

static opara_runtime* new_runtime(void) {
    opara_runtime* rt = NULL;
    opara_runtime_create(NULL, &rt);
    return rt;
}

static uint32_t lcg(uint32_t* state) {
    *state = *state * 1664525u + 1013904223u;
    return *state >> 8;
}

/* A random DAG: node i reads up to 3 values produced by earlier nodes (or the input), listed in a
   shuffled insertion order so that insertion order is not topological. */
static int build_random_dag(opara__graph* g, uint32_t seed, int n_nodes, int* perm) {
    int i, k;
    char name[32];
    int32_t input = opara__graph_add_value(g, "x", OPARA_DTYPE_F32, NULL);
    int32_t* out_of = (int32_t*)calloc((size_t)n_nodes, sizeof(int32_t));
    if (input < 0 || opara__graph_add_input(g, input) != OPARA_OK) return 0;
    for (i = 0; i < n_nodes; ++i) perm[i] = i;
    for (i = n_nodes - 1; i > 0; --i) {
        int j = (int)(lcg(&seed) % (uint32_t)(i + 1)), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    for (i = 0; i < n_nodes; ++i) {
        sprintf(name, "v%d", i);
        out_of[i] = opara__graph_add_value(g, name, OPARA_DTYPE_F32, NULL);
    }
    /* logical node L = perm[k] is inserted k-th; it reads outputs of logical nodes < L */
    for (k = 0; k < n_nodes; ++k) {
        int L = perm[k], n_in = 0;
        int32_t ins[3];
        int32_t out = out_of[L];
        for (i = 0; i < 3; ++i) {
            int32_t src = L == 0 ? input : (lcg(&seed) % 4 == 0 ? input : out_of[lcg(&seed) % (uint32_t)L]);
            ins[n_in++] = src;
        }
        sprintf(name, "n%d", L);
        if (opara__graph_add_node(g, OPARA__OP_ADD, name, (uint32_t)n_in, ins, 1, &out) < 0) return 0;
    }
    free(out_of);
    return 1;
}

OT_TEST(topological_order_respects_every_edge) {
    opara_runtime* rt = new_runtime();
    uint32_t seed;
    for (seed = 1; seed <= 200; ++seed) {
        opara__graph g;
        int n = 1 + (int)(seed % 60), perm[64], pos[64];
        uint32_t i, k;
        opara__graph_init(&g, rt);
        REQUIRE(build_random_dag(&g, seed, n, perm));
        REQUIRE(opara__graph_finalize(&g) == OPARA_OK);
        for (i = 0; i < g.n_nodes; ++i) pos[g.topo[i]] = (int)i;
        for (i = 0; i < g.n_nodes; ++i) {
            /* brute force: every input's producer comes earlier */
            for (k = 0; k < g.nodes[i].n_inputs; ++k) {
                int32_t p = g.values[g.nodes[i].inputs[k]].producer;
                if (p >= 0) CHECK(pos[p] < pos[i]);
            }
        }
        /* preds are exactly the distinct producers; succs mirror preds */
        for (i = 0; i < g.n_nodes; ++i) {
            int seen[64] = {0}, distinct = 0;
            for (k = 0; k < g.nodes[i].n_inputs; ++k) {
                int32_t p = g.values[g.nodes[i].inputs[k]].producer;
                if (p >= 0 && !seen[p]) seen[p] = 1, distinct++;
            }
            CHECK_EQ(g.pred_start[i + 1] - g.pred_start[i], distinct);
            for (k = g.pred_start[i]; k < g.pred_start[i + 1]; ++k) {
                uint32_t p = g.preds[k], s;
                int found = 0;
                CHECK(seen[p]);
                for (s = g.succ_start[p]; s < g.succ_start[p + 1]; ++s) found |= g.succs[s] == i;
                CHECK(found);
            }
        }
        opara__graph_free(&g);
    }
    opara_runtime_destroy(rt);
}

OT_TEST(topological_order_is_insertion_order_when_already_sorted) {
    opara_runtime* rt = new_runtime();
    opara__graph g;
    int32_t a, b, c, d;
    opara__graph_init(&g, rt);
    a = opara__graph_add_value(&g, "a", OPARA_DTYPE_F32, NULL);
    b = opara__graph_add_value(&g, "b", OPARA_DTYPE_F32, NULL);
    c = opara__graph_add_value(&g, "c", OPARA_DTYPE_F32, NULL);
    d = opara__graph_add_value(&g, "d", OPARA_DTYPE_F32, NULL);
    opara__graph_add_input(&g, a);
    REQUIRE(opara__graph_add_node(&g, OPARA__OP_RELU, "r", 1, &a, 1, &b) == 0);
    REQUIRE(opara__graph_add_node(&g, OPARA__OP_SIGMOID, "s", 1, &a, 1, &c) == 1);
    {
        int32_t ins[2];
        ins[0] = b;
        ins[1] = c;
        REQUIRE(opara__graph_add_node(&g, OPARA__OP_ADD, "add", 2, ins, 1, &d) == 2);
    }
    REQUIRE(opara__graph_finalize(&g) == OPARA_OK);
    CHECK_EQ(g.topo[0], 0);
    CHECK_EQ(g.topo[1], 1);
    CHECK_EQ(g.topo[2], 2);
    CHECK_EQ(g.consumer_start[a + 1] - g.consumer_start[a], 2);
    opara__graph_free(&g);
    opara_runtime_destroy(rt);
}

OT_TEST(cycles_are_reported_with_a_node_name) {
    opara_runtime* rt = new_runtime();
    opara__graph g;
    int32_t a, b;
    opara__graph_init(&g, rt);
    a = opara__graph_add_value(&g, "a", OPARA_DTYPE_F32, NULL);
    b = opara__graph_add_value(&g, "b", OPARA_DTYPE_F32, NULL);
    REQUIRE(opara__graph_add_node(&g, OPARA__OP_RELU, "first", 1, &a, 1, &b) >= 0);
    REQUIRE(opara__graph_add_node(&g, OPARA__OP_RELU, "second", 1, &b, 1, &a) >= 0);
    CHECK_EQ(opara__graph_finalize(&g), OPARA_ERR_CYCLE);
    CHECK(strstr(opara_runtime_last_error(rt), "cycle") != NULL);
    CHECK(strstr(opara_runtime_last_error(rt), "first") != NULL);
    CHECK(g.topo == NULL);
    opara__graph_free(&g);
    opara_runtime_destroy(rt);
}

OT_TEST(bad_construction_is_rejected) {
    opara_runtime* rt = new_runtime();
    opara__graph g;
    int32_t a, b, bogus = 99;
    opara__graph_init(&g, rt);
    a = opara__graph_add_value(&g, "a", OPARA_DTYPE_F32, NULL);
    b = opara__graph_add_value(&g, "b", OPARA_DTYPE_F32, NULL);
    CHECK_EQ(opara__graph_add_value(&g, "a", OPARA_DTYPE_F32, NULL), -1);
    CHECK(strstr(opara_runtime_last_error(rt), "'a' is used twice") != NULL);
    CHECK_EQ(opara__graph_add_value(&g, "", OPARA_DTYPE_F32, NULL), -1);
    CHECK_EQ(opara__graph_add_node(&g, OPARA__OP_RELU, "r", 1, &bogus, 1, &b), -1);
    CHECK(strstr(opara_runtime_last_error(rt), "does not exist") != NULL);
    CHECK_EQ(opara__graph_add_node(&g, OPARA__OP_COUNT, "r", 1, &a, 1, &b), -1);
    REQUIRE(opara__graph_add_node(&g, OPARA__OP_RELU, "r1", 1, &a, 1, &b) == 0);
    CHECK_EQ(opara__graph_add_node(&g, OPARA__OP_RELU, "r2", 1, &a, 1, &b), -1); /* b has a producer */
    {
        opara__shape big;
        memset(&big, 0, sizeof big);
        big.ndim = OPARA_MAX_DIMS + 1;
        CHECK_EQ(opara__graph_add_value(&g, "big", OPARA_DTYPE_F32, &big), -1);
    }
    opara__graph_free(&g);
    opara_runtime_destroy(rt);
}

OT_TEST(names_are_found_among_many) {
    opara_runtime* rt = new_runtime();
    opara__graph g;
    char name[32];
    int i;
    opara__graph_init(&g, rt);
    for (i = 0; i < 5000; ++i) {
        sprintf(name, "t%d", i);
        REQUIRE(opara__graph_add_value(&g, name, OPARA_DTYPE_F32, NULL) == i);
    }
    for (i = 0; i < 5000; i += 7) {
        sprintf(name, "t%d", i);
        CHECK_EQ(opara__graph_find_value(&g, name), i);
    }
    CHECK_EQ(opara__graph_find_value(&g, "t5000"), -1);
    CHECK_STR(g.values[4321].name, "t4321");
    opara__graph_free(&g);
    opara_runtime_destroy(rt);
}

OT_TEST(attributes_round_trip_and_replace) {
    opara_runtime* rt = new_runtime();
    opara__graph g;
    int32_t a, b, n;
    static const int64_t pads[4] = {1, 2, 3, 4};
    static const float scales[2] = {0.5f, 2.0f};
    uint32_t count;
    const int64_t* got;
    opara__graph_init(&g, rt);
    a = opara__graph_add_value(&g, "a", OPARA_DTYPE_F32, NULL);
    b = opara__graph_add_value(&g, "b", OPARA_DTYPE_F32, NULL);
    n = opara__graph_add_node(&g, OPARA__OP_CONV, "conv", 1, &a, 1, &b);
    REQUIRE(n == 0);
    REQUIRE(opara__node_set_int(&g, n, "group", 2) == OPARA_OK);
    REQUIRE(opara__node_set_int(&g, n, "group", 3) == OPARA_OK);
    REQUIRE(opara__node_set_ints(&g, n, "pads", pads, 4) == OPARA_OK);
    REQUIRE(opara__node_set_floats(&g, n, "scales", scales, 2) == OPARA_OK);
    REQUIRE(opara__node_set_float(&g, n, "alpha", 0.25f) == OPARA_OK);
    REQUIRE(opara__node_set_string(&g, n, "auto_pad", "SAME_UPPER") == OPARA_OK);
    CHECK_EQ(g.nodes[n].n_attrs, 5);
    CHECK_EQ(opara__attr_int(&g.nodes[n], "group", 1), 3);
    CHECK_EQ(opara__attr_int(&g.nodes[n], "missing", 7), 7);
    CHECK_EQ(opara__attr_int(&g.nodes[n], "alpha", 7), 7); /* wrong type falls back */
    CHECK_NEAR(opara__attr_float(&g.nodes[n], "alpha", 0), 0.25, 0);
    got = opara__attr_ints(&g.nodes[n], "pads", &count);
    REQUIRE(got != NULL);
    CHECK_EQ(count, 4);
    CHECK_EQ(got[3], 4);
    CHECK_STR(opara__attr_string(&g.nodes[n], "auto_pad", "NOTSET"), "SAME_UPPER");
    CHECK_STR(opara__op_name(g.nodes[n].op), "Conv");
    CHECK_EQ(opara__op_from_name("LayerNormalization"), OPARA__OP_LAYER_NORM);
    CHECK_EQ(opara__op_from_name("Conv2D"), OPARA__OP_COUNT);
    opara__graph_free(&g);
    opara_runtime_destroy(rt);
}

OT_TEST(constants_are_copied_into_the_pool_or_kept_in_place) {
    opara_runtime* rt = new_runtime();
    opara__graph g;
    float w[4] = {1, 2, 3, 4};
    int32_t copied, borrowed;
    opara__graph_init(&g, rt);
    copied = opara__graph_add_value(&g, "w1", OPARA_DTYPE_F32, NULL);
    borrowed = opara__graph_add_value(&g, "w2", OPARA_DTYPE_F32, NULL);
    REQUIRE(opara__graph_set_const(&g, copied, w, sizeof w, 1) == OPARA_OK);
    REQUIRE(opara__graph_set_const(&g, borrowed, w, sizeof w, 0) == OPARA_OK);
    w[0] = 9;
    CHECK(g.values[borrowed].data == (const void*)w);
    CHECK(g.values[copied].data != (const void*)w);
    CHECK_EQ(((const float*)g.values[copied].data)[0], 1);
    CHECK_EQ((uintptr_t)g.values[copied].data % 64, 0);
    CHECK_EQ(g.values[copied].kind, OPARA__VALUE_CONST);
    opara__graph_free(&g);
    opara_runtime_destroy(rt);
}

static const opara_test_case tests[] = {
    OT_CASE(topological_order_respects_every_edge),
    OT_CASE(topological_order_is_insertion_order_when_already_sorted),
    OT_CASE(cycles_are_reported_with_a_node_name),
    OT_CASE(bad_construction_is_rejected),
    OT_CASE(names_are_found_among_many),
    OT_CASE(attributes_round_trip_and_replace),
    OT_CASE(constants_are_copied_into_the_pool_or_kept_in_place),
};

int main(int argc, char** argv) { return opara_test_main(argc, argv, tests, OT_COUNT(tests)); }
