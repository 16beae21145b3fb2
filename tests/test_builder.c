/* The public builder (errors name what is wrong, sticky errors, order independence, save/load)
   and the DAG queries (reachability, maximum antichain) against brute force on random DAGs. */
#define OPARA_IMPLEMENTATION
#include "opara.h"
#include "opara_test.h"
#include "opara_model_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static opara_runtime* g_rt;

static const int64_t dims_n4[] = {OPARA_DIM_BATCH, 4};

OT_TEST(fixture_finishes_and_shapes_infer) {
    opara_builder* b = NULL;
    opara_model* m = NULL;
    const opara__graph* g;
    opara__shape* shapes;
    int32_t y;
    REQUIRE(opara_builder_create(g_rt, &b) == OPARA_OK);
    REQUIRE(fixture_build(b) == OPARA_OK);
    REQUIRE(opara_builder_finish(b, &m) == OPARA_OK);
    g = opara__model_graph(m);
    shapes = (opara__shape*)calloc(g->n_values, sizeof *shapes);
    REQUIRE(opara__infer_shapes(g_rt, g, 7, shapes) == OPARA_OK);
    y = opara__graph_find_value(g, "y");
    REQUIRE(y >= 0);
    CHECK_EQ(shapes[y].ndim, 2);
    CHECK_EQ(shapes[y].dims[0], 7);
    CHECK_EQ(shapes[y].dims[1], 5);
    CHECK_EQ(shapes[opara__graph_find_value(g, "cat")].dims[1], 6);
    free(shapes);
    opara_model_destroy(m);
    opara_builder_destroy(b);
}

OT_TEST(unknown_op_is_named) {
    opara_builder* b = NULL;
    opara_model* m = NULL;
    const char* in[] = {"x"};
    const char* out[] = {"y"};
    REQUIRE(opara_builder_create(g_rt, &b) == OPARA_OK);
    opara_builder_add_input(b, "x", OPARA_DTYPE_F32, 2, dims_n4);
    CHECK_EQ(opara_builder_add_node(b, "Frobnicate", "f1", 1, in, 1, out, 0, NULL), OPARA_ERR_UNSUPPORTED_OP);
    opara_builder_add_output(b, "x");
    CHECK_EQ(opara_builder_finish(b, &m), OPARA_ERR_UNSUPPORTED_OP); /* sticky */
    CHECK(strstr(opara_builder_last_error(b), "'Frobnicate'") != NULL);
    CHECK(m == NULL);
    opara_builder_destroy(b);
}

OT_TEST(unknown_input_is_named) {
    opara_builder* b = NULL;
    opara_model* m = NULL;
    void* data = NULL;
    size_t size = 0;
    const char* in[] = {"x", "nope"};
    const char* out[] = {"y"};
    REQUIRE(opara_builder_create(g_rt, &b) == OPARA_OK);
    opara_builder_add_input(b, "x", OPARA_DTYPE_F32, 2, dims_n4);
    CHECK_EQ(opara_builder_add_node(b, "Add", "add1", 2, in, 1, out, 0, NULL), OPARA_OK);
    opara_builder_add_output(b, "y");
    CHECK_EQ(opara_builder_finish(b, &m), OPARA_ERR_NOT_FOUND);
    CHECK(strstr(opara_builder_last_error(b), "'nope'") != NULL);
    CHECK(strstr(opara_builder_last_error(b), "'add1'") != NULL);
    CHECK_EQ(opara_builder_save_memory(b, &data, &size), OPARA_ERR_NOT_FOUND);
    CHECK(data == NULL);
    opara_builder_destroy(b);
}

OT_TEST(unknown_output_is_named) {
    opara_builder* b = NULL;
    opara_model* m = NULL;
    REQUIRE(opara_builder_create(g_rt, &b) == OPARA_OK);
    opara_builder_add_input(b, "x", OPARA_DTYPE_F32, 2, dims_n4);
    opara_builder_add_output(b, "ghost");
    CHECK_EQ(opara_builder_finish(b, &m), OPARA_ERR_NOT_FOUND);
    CHECK(strstr(opara_builder_last_error(b), "'ghost'") != NULL);
    opara_builder_destroy(b);
}

/* A builder keeps its own detail; the runtime's stays what the runtime's last call (here a model
   load that failed) left. finish repeats the first failure's code and detail (sticky). */
OT_TEST(builder_reports_to_itself_not_the_runtime) {
    static const char junk[8] = "notopara";
    static const int64_t d9[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1}, da[2] = {2, 3}, db[1] = {4};
    const char* in[] = {"x"};
    const char* add_in[] = {"a", "b"};
    const char* out[] = {"y"};
    char load_detail[1024];
    opara_builder* b = NULL;
    opara_model* m = NULL;
    CHECK(opara_model_load_memory(g_rt, junk, sizeof junk, &m) != OPARA_OK); /* a load reports to the runtime */
    snprintf(load_detail, sizeof load_detail, "%s", opara_runtime_last_error(g_rt));
    CHECK(load_detail[0] != 0);
    CHECK_STR(opara_builder_last_error(NULL), "");
    REQUIRE(opara_builder_create(g_rt, &b) == OPARA_OK);
    CHECK_STR(opara_builder_last_error(b), "");
    CHECK_EQ(opara_builder_add_input(b, "x", OPARA_DTYPE_F32, 9, d9), OPARA_ERR_LIMIT_EXCEEDED);
    CHECK(strstr(opara_builder_last_error(b), "rank 9") != NULL);
    CHECK_EQ(opara_builder_add_node(b, "Frobnicate", "f1", 1, in, 1, out, 0, NULL), OPARA_ERR_UNSUPPORTED_OP);
    CHECK(strstr(opara_builder_last_error(b), "'Frobnicate'") != NULL); /* the last failing call's */
    CHECK_EQ(opara_builder_finish(b, &m), OPARA_ERR_LIMIT_EXCEEDED);   /* the first failure, again */
    CHECK(strstr(opara_builder_last_error(b), "rank 9") != NULL);
    CHECK_STR(opara_runtime_last_error(g_rt), load_detail);
    opara_builder_destroy(b);
    /* a failure of finish's validation (which runs the loader's checks) */
    REQUIRE(opara_builder_create(g_rt, &b) == OPARA_OK);
    opara_builder_add_input(b, "a", OPARA_DTYPE_F32, 2, da);
    opara_builder_add_input(b, "b", OPARA_DTYPE_F32, 1, db);
    opara_builder_add_node(b, "Add", "sum", 2, add_in, 1, out, 0, NULL);
    opara_builder_add_output(b, "y");
    CHECK_EQ(opara_builder_finish(b, &m), OPARA_ERR_SHAPE);
    CHECK(strstr(opara_builder_last_error(b), "'sum' (Add)") != NULL);
    CHECK_STR(opara_runtime_last_error(g_rt), load_detail);
    opara_builder_destroy(b);
}

OT_TEST(nodes_may_come_in_any_order) {
    opara_builder* b = NULL;
    opara_model* m = NULL;
    const char* in2[] = {"h"};
    const char* out2[] = {"y"};
    const char* in1[] = {"x"};
    const char* out1[] = {"h"};
    REQUIRE(opara_builder_create(g_rt, &b) == OPARA_OK);
    opara_builder_add_node(b, "Sigmoid", "second", 1, in2, 1, out2, 0, NULL); /* consumes h before it exists */
    opara_builder_add_node(b, "Relu", "first", 1, in1, 1, out1, 0, NULL);
    opara_builder_add_input(b, "x", OPARA_DTYPE_F32, 2, dims_n4);
    opara_builder_add_output(b, "y");
    REQUIRE(opara_builder_finish(b, &m) == OPARA_OK);
    CHECK_EQ(opara__model_graph(m)->topo[0], 1); /* "first" runs first */
    opara_model_destroy(m);
    opara_builder_destroy(b);
}

OT_TEST(builder_validates_like_the_loader) {
    opara_builder* b = NULL;
    opara_model* m = NULL;
    float w[3] = {1, 2, 3};
    const int64_t d4[] = {4};
    const char* in[] = {"a", "b"};
    const char* out[] = {"c"};
    const char* in_cyc1[] = {"x", "q"};
    const char* out_cyc1[] = {"p"};
    const char* in_cyc2[] = {"p"};
    const char* out_cyc2[] = {"q"};
    /* constant whose data does not match its dtype and shape */
    REQUIRE(opara_builder_create(g_rt, &b) == OPARA_OK);
    opara_builder_add_constant(b, "w", OPARA_DTYPE_F32, 1, d4, w, sizeof w);
    opara_builder_add_output(b, "w");
    CHECK_EQ(opara_builder_finish(b, &m), OPARA_ERR_BAD_DTYPE);
    CHECK(strstr(opara_builder_last_error(b), "'w'") != NULL);
    opara_builder_destroy(b);
    /* shapes that do not broadcast */
    REQUIRE(opara_builder_create(g_rt, &b) == OPARA_OK);
    {
        const int64_t da[] = {2, 3}, db[] = {4};
        opara_builder_add_input(b, "a", OPARA_DTYPE_F32, 2, da);
        opara_builder_add_input(b, "b", OPARA_DTYPE_F32, 1, db);
    }
    opara_builder_add_node(b, "Add", "sum", 2, in, 1, out, 0, NULL);
    opara_builder_add_output(b, "c");
    CHECK_EQ(opara_builder_finish(b, &m), OPARA_ERR_SHAPE);
    CHECK(strstr(opara_builder_last_error(b), "'sum' (Add)") != NULL);
    CHECK(strstr(opara_builder_last_error(b), "[2, 3]") != NULL);
    opara_builder_destroy(b);
    /* a cycle */
    REQUIRE(opara_builder_create(g_rt, &b) == OPARA_OK);
    opara_builder_add_input(b, "x", OPARA_DTYPE_F32, 2, dims_n4);
    opara_builder_add_node(b, "Add", "p", 2, in_cyc1, 1, out_cyc1, 0, NULL);
    opara_builder_add_node(b, "Relu", "q", 1, in_cyc2, 1, out_cyc2, 0, NULL);
    opara_builder_add_output(b, "q");
    CHECK_EQ(opara_builder_finish(b, &m), OPARA_ERR_CYCLE);
    opara_builder_destroy(b);
    /* a duplicate name */
    REQUIRE(opara_builder_create(g_rt, &b) == OPARA_OK);
    opara_builder_add_input(b, "x", OPARA_DTYPE_F32, 2, dims_n4);
    opara_builder_add_input(b, "x", OPARA_DTYPE_F32, 2, dims_n4);
    opara_builder_add_output(b, "x");
    CHECK(opara_builder_finish(b, &m) != OPARA_OK);
    CHECK(strstr(opara_builder_last_error(b), "'x'") != NULL);
    opara_builder_destroy(b);
}

OT_TEST(attribute_types_are_checked) {
    opara_builder* b = NULL;
    opara_model* m = NULL;
    const char* in[] = {"x"};
    const char* out[] = {"y"};
    opara_attr a;
    const int64_t d[] = {1, 2};
    memset(&a, 0, sizeof a);
    a.name = "axis";
    a.type = OPARA_ATTR_FLOAT;
    a.v.f = 1.0f;
    REQUIRE(opara_builder_create(g_rt, &b) == OPARA_OK);
    opara_builder_add_input(b, "x", OPARA_DTYPE_F32, 2, d);
    opara_builder_add_node(b, "Softmax", "sm", 1, in, 1, out, 1, &a);
    opara_builder_add_output(b, "y");
    CHECK_EQ(opara_builder_finish(b, &m), OPARA_ERR_CORRUPT);
    CHECK(strstr(opara_builder_last_error(b), "'axis' is FLOAT, expected INT") != NULL);
    opara_builder_destroy(b);
}

OT_TEST(save_memory_round_trips) {
    opara_builder* b = NULL;
    opara_model* m = NULL;
    void* data = NULL;
    size_t size = 0;
    opara_tensor_info info;
    REQUIRE(opara_builder_create(g_rt, &b) == OPARA_OK);
    fixture_build(b);
    REQUIRE(opara_builder_save_memory(b, &data, &size) == OPARA_OK);
    CHECK(((uintptr_t)data & 63) == 0);
    REQUIRE(opara_model_load_memory(g_rt, data, size, &m) == OPARA_OK);
    REQUIRE(opara_model_input_info(m, 0, &info) == OPARA_OK);
    CHECK_STR(info.name, "x");
    CHECK_EQ(info.dims[0], OPARA_DIM_BATCH);
    opara_model_destroy(m);
    opara_free(g_rt, data);
    opara_builder_destroy(b);
}

#if !defined(OPARA_NO_STDIO)
OT_TEST(save_file_round_trips) {
    opara_builder* b = NULL;
    opara_model* m = NULL;
    const char* path = "build/test_builder_save.opara";
    REQUIRE(opara_builder_create(g_rt, &b) == OPARA_OK);
    fixture_build(b);
    REQUIRE(opara_builder_save_file(b, path) == OPARA_OK);
    REQUIRE(opara_model_load_file(g_rt, path, &m) == OPARA_OK);
    CHECK_EQ(opara_model_node_count(m), 8);
    opara_model_destroy(m);
    remove(path);
    CHECK_EQ(opara_builder_save_file(b, "build/no/such/dir/x.opara"), OPARA_ERR_IO);
    opara_builder_destroy(b);
}
#endif

/* ---- DAG queries ----------------------------------------------------------------------------- */

/* A random DAG: node i reads the graph input and a random subset of earlier nodes' outputs. */
static void random_dag(opara__graph* g, uint32_t n, uint64_t* seed, uint8_t* adj /* n*n, adj[a*n+b]: edge a->b */) {
    int32_t x, idx[32], outs[1];
    uint32_t i, j;
    opara__shape s;
    memset(&s, 0, sizeof s);
    s.ndim = 1;
    s.dims[0] = 4;
    opara__graph_init(g, g_rt);
    x = opara__graph_add_value(g, "x", OPARA_DTYPE_F32, &s);
    opara__graph_add_input(g, x);
    memset(adj, 0, (size_t)n * n);
    for (i = 0; i < n; ++i) {
        char name[16];
        uint32_t k = 0;
        idx[k++] = x;
        for (j = 0; j < i && k < 32; ++j) {
            *seed = *seed * 6364136223846793005ull + 1442695040888963407ull;
            if ((*seed >> 33) % 100 < 25) {
                idx[k++] = (int32_t)(1 + j); /* value 1 + j is node j's output */
                adj[j * n + i] = 1;
            }
        }
        sprintf(name, "v%u", i);
        outs[0] = opara__graph_add_value(g, name, OPARA_DTYPE_F32, NULL);
        opara__graph_add_node(g, OPARA__OP_CONCAT, name, k, idx, 1, outs);
    }
}

/* Reference reachability by Warshall's algorithm on the adjacency matrix. */
static void warshall(uint8_t* r, uint32_t n) {
    uint32_t k, i, j;
    for (k = 0; k < n; ++k)
        for (i = 0; i < n; ++i)
            if (r[i * n + k])
                for (j = 0; j < n; ++j)
                    if (r[k * n + j]) r[i * n + j] = 1;
}

/* Largest subset with no two comparable members, by enumerating all subsets. */
static uint32_t brute_width(const uint8_t* r, uint32_t n) {
    uint32_t best = 0, mask, i, j;
    for (mask = 1; mask < (1u << n); ++mask) {
        uint32_t count = 0;
        int ok = 1;
        for (i = 0; i < n && ok; ++i) {
            if (!(mask >> i & 1)) continue;
            ++count;
            for (j = 0; j < n && ok; ++j)
                if ((mask >> j & 1) && r[i * n + j]) ok = 0;
        }
        if (ok && count > best) best = count;
    }
    return best;
}

OT_TEST(reachability_matches_warshall) {
    uint64_t seed = 12345;
    int trial;
    for (trial = 0; trial < 20; ++trial) {
        uint32_t n = 5 + (uint32_t)trial * 3, a, b;
        opara__graph g;
        opara__closure c;
        uint8_t* r = (uint8_t*)malloc((size_t)n * n);
        random_dag(&g, n, &seed, r);
        warshall(r, n);
        REQUIRE(opara__graph_finalize(&g) == OPARA_OK);
        REQUIRE(opara__closure_build(g_rt, &g, &c) == OPARA_OK);
        for (a = 0; a < n; ++a)
            for (b = 0; b < n; ++b) {
                if (opara__closure_reaches(&c, a, b) != r[a * n + b]) {
                    CHECK_EQ(opara__closure_reaches(&c, a, b), r[a * n + b]);
                    OT_LOG("trial %d n %u: %u -> %u", trial, n, a, b);
                }
                if ((a * 7 + b) % 5 == 0) CHECK_EQ(opara__graph_reaches(&g, a, b), r[a * n + b]);
            }
        opara__closure_free(g_rt, &c);
        opara__graph_free(&g);
        free(r);
    }
}

OT_TEST(max_width_matches_brute_force) {
    uint64_t seed = 777;
    int trial;
    for (trial = 0; trial < 60; ++trial) {
        uint32_t n = 1 + (uint32_t)trial % 15, width = 0, i, j;
        opara__graph g;
        uint8_t* r = (uint8_t*)malloc((size_t)n * n);
        uint32_t antichain[16];
        random_dag(&g, n, &seed, r);
        warshall(r, n);
        REQUIRE(opara__graph_finalize(&g) == OPARA_OK);
        REQUIRE(opara__graph_max_width(g_rt, &g, &width, antichain) == OPARA_OK);
        CHECK_EQ(width, brute_width(r, n));
        for (i = 0; i < width; ++i) /* the returned set is an antichain */
            for (j = 0; j < width; ++j) CHECK_EQ(r[antichain[i] * n + antichain[j]], 0);
        opara__graph_free(&g);
        free(r);
    }
}

OT_TEST(width_of_known_shapes) {
    opara_builder* b = NULL;
    opara_model* m = NULL;
    uint32_t width = 0;
    REQUIRE(opara_builder_create(g_rt, &b) == OPARA_OK);
    fixture_build(b);
    REQUIRE(opara_builder_finish(b, &m) == OPARA_OK);
    /* conv1 -> relu -> {conv2, pool} -> cat -> ...: two branches */
    REQUIRE(opara__graph_max_width(g_rt, opara__model_graph(m), &width, NULL) == OPARA_OK);
    CHECK_EQ(width, 2);
    opara_model_destroy(m);
    opara_builder_destroy(b);
}

OT_TEST(wide_graph_width_is_exact_and_fast) {
    /* 40 independent chains of 50 nodes: width 40 */
    opara__graph g;
    int32_t x, prev, outs[1];
    uint32_t chain, k, width = 0;
    opara__shape s;
    uint64_t t0;
    memset(&s, 0, sizeof s);
    s.ndim = 1, s.dims[0] = 1;
    opara__graph_init(&g, g_rt);
    x = opara__graph_add_value(&g, "x", OPARA_DTYPE_F32, &s);
    opara__graph_add_input(&g, x);
    for (chain = 0; chain < 40; ++chain) {
        prev = x;
        for (k = 0; k < 50; ++k) {
            char name[32];
            sprintf(name, "c%u_%u", chain, k);
            outs[0] = opara__graph_add_value(&g, name, OPARA_DTYPE_F32, NULL);
            opara__graph_add_node(&g, OPARA__OP_RELU, name, 1, &prev, 1, outs);
            prev = outs[0];
        }
    }
    REQUIRE(opara__graph_finalize(&g) == OPARA_OK);
    t0 = opara__now_ns();
    REQUIRE(opara__graph_max_width(g_rt, &g, &width, NULL) == OPARA_OK);
    CHECK_EQ(width, 40);
    OT_LOG("2000 nodes: %.1f ms", (double)(opara__now_ns() - t0) / 1e6);
    opara__graph_free(&g);
}

static const opara_test_case tests[] = {
    OT_CASE(fixture_finishes_and_shapes_infer),
    OT_CASE(unknown_op_is_named),
    OT_CASE(unknown_input_is_named),
    OT_CASE(unknown_output_is_named),
    OT_CASE(builder_reports_to_itself_not_the_runtime),
    OT_CASE(nodes_may_come_in_any_order),
    OT_CASE(builder_validates_like_the_loader),
    OT_CASE(attribute_types_are_checked),
    OT_CASE(save_memory_round_trips),
#if !defined(OPARA_NO_STDIO)
    OT_CASE(save_file_round_trips),
#endif
    OT_CASE(reachability_matches_warshall),
    OT_CASE(max_width_matches_brute_force),
    OT_CASE(width_of_known_shapes),
    OT_CASE(wide_graph_width_is_exact_and_fast),
};

int main(int argc, char** argv) {
    int rc;
    if (opara_runtime_create(NULL, &g_rt) != OPARA_OK) return 1;
    rc = opara_test_main(argc, argv, tests, OT_COUNT(tests));
    opara_runtime_destroy(g_rt);
    return rc;
}
