/* Scheduler golden fixtures from the papers (research notes papers.md §1.3, §1.5, §6). Expected
   values are written from the notes, not from this code's output. */
#define OPARA_IMPLEMENTATION
#include "opara.h"
#include "opara_test.h"
#include "test_sched_util.h"

/* Opara TC Appendix A, Fig. 10 (13 operators), edges as read in the notes. */
static const int appendix_edges[][2] = {{1, 2},  {1, 3},  {1, 4},  {2, 5},   {5, 7},   {3, 6},   {4, 8},   {6, 8},
                                        {7, 9},  {7, 10}, {8, 11}, {8, 12},  {9, 13},  {10, 13}, {11, 13}, {12, 13}};
#define APPENDIX_N 13
#define APPENDIX_M ((uint32_t)(sizeof appendix_edges / sizeof appendix_edges[0]))

/* groups: node ids (1-based) separated by 0, ending with -1. Checks that the plan's streams are
   exactly these groups. */
static void check_partition(opara_test* T, const opara__plan* p, const int* groups, uint32_t n_groups) {
    uint32_t stream_of_group[32];
    uint32_t g = 0;
    int first = 1;
    const int* x;
    CHECK_EQ(p->n_streams, n_groups);
    for (x = groups; *x != -1; ++x) {
        if (*x == 0) {
            ++g;
            first = 1;
            continue;
        }
        if (first) {
            uint32_t h;
            stream_of_group[g] = p->stream[*x - 1];
            for (h = 0; h < g; ++h)
                if (stream_of_group[h] == stream_of_group[g]) OT_LOG("groups %u and %u share stream %u", h, g, stream_of_group[g]);
            for (h = 0; h < g; ++h) CHECK(stream_of_group[h] != stream_of_group[g]);
            first = 0;
        } else if (p->stream[*x - 1] != stream_of_group[g]) {
            OT_LOG("node %d is on stream %u, group %u is on %u", *x, p->stream[*x - 1], g, stream_of_group[g]);
            CHECK(p->stream[*x - 1] == stream_of_group[g]);
        }
    }
}

static void appendix_case(opara_test* T, opara__pred_order order, const int* groups) {
    tgraph t;
    opara__plan_desc d;
    opara__plan* p = NULL;
    REQUIRE(tg_edges(&t, APPENDIX_N, appendix_edges, APPENDIX_M, OPARA__OP_RELU, 16));
    memset(&d, 0, sizeof d);
    d.strategy = OPARA_STRATEGY_OPARA_TOPO;
    d.pred_order = order;
    REQUIRE(tg_plan(&t, NULL, &d, &p) == OPARA_OK);
    check_partition(T, p, groups, 5);
    CHECK_EQ(p->stats.n_cross_edges, 8); /* "All of these give 5 streams and 8 cross-stream edges" */
    opara__plan_free(t.rt, p);
    tg_free(&t);
}

OT_TEST(appendix_a_ascending_id) {
    static const int groups[] = {1, 2, 5, 7, 9, 13, 0, 3, 6, 0, 4, 8, 11, 0, 10, 0, 12, -1};
    appendix_case(T, OPARA__PRED_ASC_ID, groups);
}

/* Lanes (the CUDA streams): stream {3, 6} ends at 6 -> 8, and stream {12} starts at 12, whose
   input 8 comes after 6, so {12} continues {3, 6}'s lane; {10} cannot ({3, 6} is not before 10) and
   starts a lane of its own. 5 streams on 4 lanes, the graph's width. */
OT_TEST(appendix_a_five_streams_on_four_lanes) {
    tgraph t;
    opara__plan_desc d;
    opara__plan* p = NULL;
    uint32_t lane[APPENDIX_N + 1], i;
    REQUIRE(tg_edges(&t, APPENDIX_N, appendix_edges, APPENDIX_M, OPARA__OP_RELU, 16));
    memset(&d, 0, sizeof d);
    d.strategy = OPARA_STRATEGY_OPARA_TOPO;
    d.pred_order = OPARA__PRED_ASC_ID;
    REQUIRE(tg_plan(&t, NULL, &d, &p) == OPARA_OK);
    CHECK_EQ(5, p->n_streams);
    CHECK_EQ(4, p->n_lanes);
    for (i = 1; i <= APPENDIX_N; ++i) lane[i] = p->stream_lane[p->stream[i - 1]];
    CHECK_EQ(lane[3], lane[12]);
    CHECK(lane[1] != lane[3] && lane[1] != lane[4] && lane[1] != lane[10]);
    CHECK(lane[3] != lane[4] && lane[3] != lane[10] && lane[4] != lane[10]);
    CHECK_EQ(0, lane[1]); /* the origin's */
    opara__plan_free(t.rt, p);
    tg_free(&t);
}

OT_TEST(appendix_a_input_order_equals_ascending_here) {
    /* the edges list 4->8 before 6->8 and 9..12 -> 13 in order, so argument order = ascending id */
    static const int groups[] = {1, 2, 5, 7, 9, 13, 0, 3, 6, 0, 4, 8, 11, 0, 10, 0, 12, -1};
    appendix_case(T, OPARA__PRED_INPUT, groups);
}

OT_TEST(appendix_a_descending_id) {
    static const int groups[] = {1, 2, 5, 7, 9, 0, 3, 6, 8, 11, 0, 4, 0, 10, 0, 12, 13, -1};
    appendix_case(T, OPARA__PRED_DESC_ID, groups);
}

OT_TEST(appendix_a_ascending_stream_reproduces_ccfsys_listing) {
    static const int groups[] = {1, 2, 5, 7, 9, 13, 0, 3, 6, 8, 11, 0, 4, 0, 10, 0, 12, -1};
    appendix_case(T, OPARA__PRED_ASC_STREAM, groups);
}

/* The graph's width is 4 (the antichain {9, 10, 11, 12}; every node is an ancestor or descendant
   of it), so a minimum chain cover has 4 chains. Nimble's first matching (on the transitive
   reduction) gives 5 paths, e.g. {1,2,5,7,9,13} {3,6,8,11} {4} {10} {12}; its second matching on
   the chains' reachability merges {4} and {12} (4 -> 8 -> 12). The research notes quote 5, the
   path count before that second step. */
OT_TEST(appendix_a_nimble_finds_a_minimum_chain_cover) {
    tgraph t;
    opara__plan_desc d;
    opara__plan* p = NULL;
    REQUIRE(tg_edges(&t, APPENDIX_N, appendix_edges, APPENDIX_M, OPARA__OP_RELU, 16));
    memset(&d, 0, sizeof d);
    d.strategy = OPARA_STRATEGY_NIMBLE;
    REQUIRE(tg_plan(&t, NULL, &d, &p) == OPARA_OK);
    CHECK_EQ(p->n_streams, 4);
    opara__plan_free(t.rt, p);
    tg_free(&t);
}

/* p1 -> a, p2 -> a, p2 -> b, in order p1, p2, a, b (ids 1..4). */
static const int divergence_edges[][2] = {{1, 3}, {2, 3}, {2, 4}};

OT_TEST(p1p2ab_flag_gives_two_streams) {
    static const int groups[] = {1, 3, 0, 2, 4, -1};
    tgraph t;
    opara__plan_desc d;
    opara__plan* p = NULL;
    REQUIRE(tg_edges(&t, 4, divergence_edges, 3, OPARA__OP_ADD, 16));
    memset(&d, 0, sizeof d);
    d.strategy = OPARA_STRATEGY_OPARA_TOPO;
    REQUIRE(tg_plan(&t, NULL, &d, &p) == OPARA_OK);
    check_partition(T, p, groups, 2);
    opara__plan_free(t.rt, p);
    tg_free(&t);
}

OT_TEST(p1p2ab_first_successor_gives_three_streams) {
    static const int groups[] = {1, 3, 0, 2, 0, 4, -1};
    tgraph t;
    opara__plan_desc d;
    opara__plan* p = NULL;
    REQUIRE(tg_edges(&t, 4, divergence_edges, 3, OPARA__OP_ADD, 16));
    memset(&d, 0, sizeof d);
    d.strategy = OPARA_STRATEGY_OPARA_TOPO;
    d.inherit = OPARA__INHERIT_FIRST_SUCCESSOR;
    REQUIRE(tg_plan(&t, NULL, &d, &p) == OPARA_OK);
    check_partition(T, p, groups, 3);
    opara__plan_free(t.rt, p);
    tg_free(&t);
}

static opara__op_desc kernel(double smem_fraction, opara__op_class cls) {
    opara__op_desc d;
    memset(&d, 0, sizeof d);
    d.grid = 100;
    d.block_threads = 128;
    d.regs_per_thread = 32;
    d.smem_per_block = (uint32_t)(smem_fraction * 49152.0 + 0.5);
    d.op_class = (uint8_t)cls;
    d.has_info = 1;
    return d;
}

static void order_of(opara_test* T, tgraph* t, const opara__op_desc* descs, opara__alternation alt, uint32_t* order) {
    opara__plan_desc d;
    memset(&d, 0, sizeof d);
    d.alternation = alt;
    d.metric = OPARA__METRIC_SMEM_FRAC;
    CHECK(opara__sched_order(&t->g, descs, opara__device_preset("rtx2080s"), &d, order) == OPARA_OK);
}

OT_TEST(ccfsys_abc_least_shared_memory_first) {
    /* A, B, C need 50%, 60%, 40% of a block's shared memory: Alg. 2 launches C -> A -> B */
    tgraph t;
    opara__op_desc descs[3];
    uint32_t order[3];
    REQUIRE(tg_edges(&t, 3, NULL, 0, OPARA__OP_CONV, 16));
    descs[0] = kernel(0.50, OPARA__CLASS_COMPUTE);
    descs[1] = kernel(0.60, OPARA__CLASS_COMPUTE);
    descs[2] = kernel(0.40, OPARA__CLASS_COMPUTE);
    order_of(T, &t, descs, OPARA__ALT_PARITY, order);
    CHECK_EQ(order[0], 2);
    CHECK_EQ(order[1], 0);
    CHECK_EQ(order[2], 1);
    tg_free(&t);
}

/* C1, C2, C3 compute sources (10/20/30% shared memory), M1 a memory op after C2. PARITY (the
   reference) gives C1 C2 C3 M1: the parity toggles even when only the compute list is non-empty;
   LAST_PICK gives C1 C2 M1 C3. */
static const int alternation_edges[][2] = {{2, 4}};

OT_TEST(alternation_parity_versus_last_pick) {
    tgraph t;
    opara__op_desc descs[4];
    uint32_t order[4];
    REQUIRE(tg_edges(&t, 4, alternation_edges, 1, OPARA__OP_CONV, 16));
    descs[0] = kernel(0.10, OPARA__CLASS_COMPUTE);
    descs[1] = kernel(0.20, OPARA__CLASS_COMPUTE);
    descs[2] = kernel(0.30, OPARA__CLASS_COMPUTE);
    descs[3] = kernel(0.00, OPARA__CLASS_MEMORY);
    order_of(T, &t, descs, OPARA__ALT_PARITY, order);
    CHECK_EQ(order[0], 0);
    CHECK_EQ(order[1], 1);
    CHECK_EQ(order[2], 2);
    CHECK_EQ(order[3], 3);
    order_of(T, &t, descs, OPARA__ALT_LAST_PICK, order);
    CHECK_EQ(order[0], 0);
    CHECK_EQ(order[1], 1);
    CHECK_EQ(order[2], 3);
    CHECK_EQ(order[3], 2);
    tg_free(&t);
}

OT_TEST(alg2_first_pick_is_compute_and_no_info_is_deferred) {
    tgraph t;
    opara__op_desc descs[3];
    uint32_t order[3];
    REQUIRE(tg_edges(&t, 3, NULL, 0, OPARA__OP_CONV, 16));
    descs[0] = kernel(0.0, OPARA__CLASS_MEMORY);  /* memory op, ready first */
    memset(&descs[1], 0, sizeof descs[1]);        /* compute op without kernel info */
    descs[2] = kernel(0.9, OPARA__CLASS_COMPUTE); /* compute op with info */
    order_of(T, &t, descs, OPARA__ALT_PARITY, order);
    CHECK_EQ(order[0], 2); /* compute list first; the op with info beats the one without */
    CHECK_EQ(order[1], 0); /* then the memory list */
    CHECK_EQ(order[2], 1);
    tg_free(&t);
}

OT_TEST(launch_orders_dfs_and_bfs) {
    /* 1 -> 2 -> 4, 1 -> 3 -> 5: DFS follows a branch to its end (1 2 4 3 5), BFS goes by levels (1 2 3 4 5) */
    static const int edges[][2] = {{1, 2}, {1, 3}, {2, 4}, {3, 5}};
    static const uint32_t dfs[] = {0, 1, 3, 2, 4}, bfs[] = {0, 1, 2, 3, 4};
    tgraph t;
    opara__plan_desc d;
    uint32_t order[5], i;
    REQUIRE(tg_edges(&t, 5, edges, 4, OPARA__OP_RELU, 16));
    memset(&d, 0, sizeof d);
    d.launch_order = OPARA_LAUNCH_DFS;
    REQUIRE(opara__sched_order(&t.g, NULL, NULL, &d, order) == OPARA_OK);
    for (i = 0; i < 5; ++i) CHECK_EQ(order[i], dfs[i]);
    d.launch_order = OPARA_LAUNCH_BFS;
    REQUIRE(opara__sched_order(&t.g, NULL, NULL, &d, order) == OPARA_OK);
    for (i = 0; i < 5; ++i) CHECK_EQ(order[i], bfs[i]);
    tg_free(&t);
}

/* IOS README network: input -> conv1, conv2, conv3; conv1 -> conv4; concat(conv4, conv2, conv3).
   Ids: conv1=1 conv2=2 conv3=3 conv4=4 concat=5. Width 3. */
static int ios_network(tgraph* t) {
    static const char* names[] = {"conv1", "conv2", "conv3", "conv4", "concat"};
    int32_t x, v[5], ins[3];
    uint32_t i;
    if (!tg_begin(t, 5)) return 0;
    x = tg_value(t, "input", 128);
    opara__graph_add_input(&t->g, x);
    for (i = 0; i < 5; ++i) v[i] = tg_value(t, names[i], i == 4 ? 384 : 128);
    for (i = 0; i < 3; ++i) opara__graph_add_node(&t->g, OPARA__OP_CONV, names[i], 1, &x, 1, &v[i]);
    opara__graph_add_node(&t->g, OPARA__OP_CONV, names[3], 1, &v[0], 1, &v[3]);
    ins[0] = v[3];
    ins[1] = v[1];
    ins[2] = v[2];
    opara__graph_add_node(&t->g, OPARA__OP_CONCAT, names[4], 3, ins, 1, &v[4]);
    opara__node_set_int(&t->g, 4, "axis", 1);
    opara__graph_add_output(&t->g, v[4]);
    for (i = 0; i < 5; ++i) t->out_of[i] = v[i];
    return tg_finish(t);
}

OT_TEST(ios_network_streams_per_strategy) {
    static const opara_strategy strategies[] = {OPARA_STRATEGY_SEQUENTIAL, OPARA_STRATEGY_OPARA_TOPO, OPARA_STRATEGY_NIMBLE,
                                                OPARA_STRATEGY_WAVEFRONT};
    static const uint32_t streams[] = {1, 3, 3, 3};
    tgraph t;
    uint32_t i;
    REQUIRE(ios_network(&t));
    for (i = 0; i < 4; ++i) {
        opara__plan_desc d;
        opara__plan* p = NULL;
        memset(&d, 0, sizeof d);
        d.strategy = strategies[i];
        REQUIRE(tg_plan(&t, NULL, &d, &p) == OPARA_OK);
        OT_LOG("strategy %s", opara_strategy_name(strategies[i]));
        CHECK_EQ(p->n_streams, streams[i]);
        if (strategies[i] == OPARA_STRATEGY_OPARA_TOPO) {
            /* conv1, conv4, concat share the origin; concat waits for conv2 and conv3 */
            CHECK_EQ(p->stream[0], 0);
            CHECK_EQ(p->stream[3], 0);
            CHECK_EQ(p->stream[4], 0);
            CHECK_EQ(p->stats.n_waits, 2);
            CHECK_EQ(p->stats.n_events, 2);
            CHECK_EQ(p->stats.n_cross_edges, 2);
            CHECK_EQ(p->stats.n_forks, 2);
            CHECK_EQ(p->stats.n_joins, 0);
        }
        if (strategies[i] == OPARA_STRATEGY_WAVEFRONT) {
            /* levels {conv1, conv2, conv3} {conv4} {concat}: conv4 waits for conv2 and conv3 (the
               barrier); the concat's waits for them are implied and dropped */
            CHECK_EQ(p->level[3], 1);
            CHECK_EQ(p->level[4], 2);
            CHECK_EQ(p->stats.n_waits, 2);
            CHECK_EQ(p->wait_start[4] - p->wait_start[3], 2);
            CHECK_EQ(p->stats.n_pruned_waits, 2);
        }
        opara__plan_free(t.rt, p);
    }
    tg_free(&t);
}

OT_TEST(ios_network_concat_inputs_written_in_place) {
    tgraph t;
    opara__plan_desc d;
    opara__plan* p = NULL;
    REQUIRE(ios_network(&t));
    memset(&d, 0, sizeof d);
    d.strategy = OPARA_STRATEGY_OPARA_TOPO;
    REQUIRE(tg_plan(&t, NULL, &d, &p) == OPARA_OK);
    /* concat(conv4, conv2, conv3) along axis 1 of [1, 128] x3 -> [1, 384]: slices at 0, 512, 1024 bytes */
    CHECK_EQ(p->alias_kind[t.out_of[3]], OPARA__ALIAS_CONCAT);
    CHECK_EQ(p->alias_kind[t.out_of[1]], OPARA__ALIAS_CONCAT);
    CHECK_EQ(p->alias_kind[t.out_of[2]], OPARA__ALIAS_CONCAT);
    CHECK_EQ(p->alias_kind[t.out_of[0]], OPARA__ALIAS_NONE);
    CHECK_EQ(p->offset[t.out_of[3]], p->offset[t.out_of[4]]);
    CHECK_EQ(p->offset[t.out_of[1]], p->offset[t.out_of[4]] + 512);
    CHECK_EQ(p->offset[t.out_of[2]], p->offset[t.out_of[4]] + 1024);
    CHECK(opara__plan_concat_input_in_place(&t.g, p, 4, 0));
    CHECK(opara__plan_concat_input_in_place(&t.g, p, 4, 2));
    CHECK_EQ(p->stats.n_concat_in_place, 3);
    opara__plan_free(t.rt, p);
    tg_free(&t);
}

/* Concat of slices of 3, 4 and 5 floats (offsets 0, 12, 28 bytes): with concat_align 16 (what the
   CUDA backend asks) only the first slice is written in place, with 0 (the CPU's rule) all three;
   the verifier refuses a plan whose Concat slice breaks its own concat_align. */
OT_TEST(concat_in_place_respects_concat_align) {
    static const int64_t elems[3] = {3, 4, 5};
    tgraph t;
    int32_t x, v[4];
    uint32_t i, align;
    REQUIRE(tg_begin(&t, 4));
    x = tg_value(&t, "x", 8);
    opara__graph_add_input(&t.g, x);
    for (i = 0; i < 3; ++i) {
        char name[8];
        snprintf(name, sizeof name, "r%u", i);
        v[i] = tg_value(&t, name, elems[i]);
        opara__graph_add_node(&t.g, OPARA__OP_CONV, name, 1, &x, 1, &v[i]);
    }
    v[3] = tg_value(&t, "cat", 12);
    opara__graph_add_node(&t.g, OPARA__OP_CONCAT, "cat", 3, v, 1, &v[3]);
    opara__node_set_int(&t.g, 3, "axis", 1);
    opara__graph_add_output(&t.g, v[3]);
    REQUIRE(tg_finish(&t));
    for (align = 0; align <= 16; align += 16) {
        opara__plan_desc d;
        opara__plan* p = NULL;
        memset(&d, 0, sizeof d);
        d.concat_align = align;
        REQUIRE(tg_plan(&t, NULL, &d, &p) == OPARA_OK);
        CHECK(opara__plan_concat_input_in_place(&t.g, p, 3, 0));
        CHECK_EQ(align == 0, opara__plan_concat_input_in_place(&t.g, p, 3, 1));
        CHECK_EQ(align == 0, opara__plan_concat_input_in_place(&t.g, p, 3, 2));
        CHECK_EQ(p->stats.n_concat_in_place, align ? 1u : 3u);
        if (align == 0) { /* the same plan claimed for a 16-byte rule: its slice at 12 bytes is refused */
            p->desc.concat_align = 16;
            CHECK_EQ(OPARA_ERR_PLAN_INVALID, opara__plan_verify(&t.g, p));
            CHECK(strstr(opara_runtime_last_error(t.rt), "not a multiple of 16 bytes") != NULL);
        }
        opara__plan_free(t.rt, p);
    }
    { /* concat_align must be a power of two no larger than the arena alignment */
        opara__plan_desc d;
        opara__plan* p = NULL;
        memset(&d, 0, sizeof d);
        d.concat_align = 24;
        CHECK_EQ(OPARA_ERR_INVALID_ARGS, tg_plan(&t, NULL, &d, &p));
        d.concat_align = 512;
        CHECK_EQ(OPARA_ERR_INVALID_ARGS, tg_plan(&t, NULL, &d, &p));
    }
    tg_free(&t);
}

OT_TEST(ios_network_wait_pruning_can_be_disabled) {
    tgraph t;
    opara__plan_desc d;
    opara__plan* p = NULL;
    REQUIRE(ios_network(&t));
    memset(&d, 0, sizeof d);
    d.strategy = OPARA_STRATEGY_WAVEFRONT;
    d.no_wait_pruning = 1;
    REQUIRE(tg_plan(&t, NULL, &d, &p) == OPARA_OK);
    CHECK_EQ(p->stats.n_waits, 4); /* conv4: conv2, conv3 (barrier); concat: conv2, conv3 (data) */
    CHECK_EQ(p->stats.n_pruned_waits, 0);
    opara__plan_free(t.rt, p);
    tg_free(&t);
}

/* Two branches: a1 -> a2 and b1 -> b2 (ids 1 2 3 4), launched a1 a2 b1 b2. A block allocator that
   only looks at launch order would give b2 the block of a1 (dead once a2 is launched), but b2 runs
   on another stream and may run before a2 reads a1. */
static const int branches_edges[][2] = {{1, 2}, {3, 4}};

OT_TEST(memory_not_reused_across_unordered_streams) {
    tgraph t;
    opara__plan_desc d;
    opara__plan* p = NULL;
    uint64_t a1, b2, size;
    REQUIRE(tg_edges(&t, 4, branches_edges, 2, OPARA__OP_CONV, 256));
    memset(&d, 0, sizeof d);
    d.strategy = OPARA_STRATEGY_OPARA_TOPO;
    REQUIRE(tg_plan(&t, NULL, &d, &p) == OPARA_OK);
    REQUIRE(p->n_streams == 2);
    a1 = p->offset[t.out_of[0]];
    b2 = p->offset[t.out_of[3]];
    size = t.bytes[t.out_of[0]];
    CHECK(a1 + size <= b2 || b2 + size <= a1);
    opara__plan_free(t.rt, p);
    /* on one stream the same graph reuses a1's block for b1 or b2 */
    memset(&d, 0, sizeof d);
    d.strategy = OPARA_STRATEGY_SEQUENTIAL;
    REQUIRE(tg_plan(&t, NULL, &d, &p) == OPARA_OK);
    CHECK(p->arena_bytes < 4 * size);
    opara__plan_free(t.rt, p);
    tg_free(&t);
}

OT_TEST(memory_reused_after_event_edge) {
    /* 1 -> 2, 1 -> 3, 2 -> 4, 3 -> 4, 4 -> 5: after the join at 4 every earlier block is free to
       node 5 whatever stream it is on; sequentially 3 blocks suffice at any time */
    static const int edges[][2] = {{1, 2}, {1, 3}, {2, 4}, {3, 4}, {4, 5}};
    tgraph t;
    opara__plan_desc d;
    opara__plan* p = NULL;
    REQUIRE(tg_edges(&t, 5, edges, 5, OPARA__OP_CONV, 256));
    memset(&d, 0, sizeof d);
    d.strategy = OPARA_STRATEGY_OPARA_TOPO;
    REQUIRE(tg_plan(&t, NULL, &d, &p) == OPARA_OK);
    CHECK_EQ(p->n_streams, 2);
    CHECK_EQ(p->arena_bytes, 3 * 1024); /* v1 live with v2, v3; then v4 reuses v1's block, v5 v2's */
    CHECK(p->stats.no_reuse_bytes == 5 * 1024);
    opara__plan_free(t.rt, p);
    tg_free(&t);
}

OT_TEST(inplace_and_view_aliases) {
    /* 1 conv -> 2 relu -> 3 reshape -> 4 sigmoid: relu may overwrite conv's output, the reshape is a
       view, the sigmoid output is a graph output (pinned, not in place) */
    static const int edges[][2] = {{1, 2}, {2, 3}, {3, 4}};
    tgraph t;
    opara__plan_desc d;
    opara__plan* p = NULL;
    REQUIRE(tg_edges(&t, 4, edges, 3, OPARA__OP_RELU, 64));
    t.g.nodes[0].op = OPARA__OP_CONV;
    t.g.nodes[2].op = OPARA__OP_RESHAPE;
    t.g.nodes[3].op = OPARA__OP_SIGMOID;
    memset(&d, 0, sizeof d);
    REQUIRE(tg_plan(&t, NULL, &d, &p) == OPARA_OK);
    CHECK_EQ(p->alias_kind[t.out_of[1]], OPARA__ALIAS_INPLACE);
    CHECK_EQ(p->alias_kind[t.out_of[2]], OPARA__ALIAS_VIEW);
    CHECK_EQ(p->alias_root[t.out_of[2]], t.out_of[0]);
    CHECK_EQ(p->alias_kind[t.out_of[3]], OPARA__ALIAS_NONE);
    CHECK(p->offset[t.out_of[3]] != p->offset[t.out_of[0]]);
    CHECK_EQ(p->arena_bytes, 2 * 256);
    opara__plan_free(t.rt, p);
    d.no_inplace = 1;
    d.no_view_alias = 1;
    REQUIRE(tg_plan(&t, NULL, &d, &p) == OPARA_OK);
    CHECK_EQ(p->alias_kind[t.out_of[1]], OPARA__ALIAS_NONE);
    CHECK_EQ(p->alias_kind[t.out_of[2]], OPARA__ALIAS_NONE);
    opara__plan_free(t.rt, p);
    tg_free(&t);
}

OT_TEST(stream_cap_reuses_only_idle_streams) {
    /* 1->2, 1->3, 2->4, 3->4, 4->5, 4->6: uncapped Opara opens a third stream for 6; with a cap of 2
       the stream of 3 is idle (3 -> 4 -> 6) and is reused */
    static const int edges[][2] = {{1, 2}, {1, 3}, {2, 4}, {3, 4}, {4, 5}, {4, 6}};
    tgraph t;
    opara__plan_desc d;
    opara__plan* p = NULL;
    REQUIRE(tg_edges(&t, 6, edges, 6, OPARA__OP_ADD, 16));
    memset(&d, 0, sizeof d);
    d.strategy = OPARA_STRATEGY_OPARA_TOPO;
    REQUIRE(tg_plan(&t, NULL, &d, &p) == OPARA_OK);
    CHECK_EQ(p->n_streams, 3);
    opara__plan_free(t.rt, p);
    d.stream_cap = 2;
    REQUIRE(tg_plan(&t, NULL, &d, &p) == OPARA_OK);
    CHECK_EQ(p->n_streams, 2);
    CHECK_EQ(p->stream[5], p->stream[2]);
    opara__plan_free(t.rt, p);
    tg_free(&t);
}

OT_TEST(stream_cap_hard_and_soft_on_appendix) {
    tgraph t;
    opara__plan_desc d;
    opara__plan* p = NULL;
    REQUIRE(tg_edges(&t, APPENDIX_N, appendix_edges, APPENDIX_M, OPARA__OP_RELU, 16));
    memset(&d, 0, sizeof d);
    d.strategy = OPARA_STRATEGY_OPARA_TOPO;
    d.stream_cap = 2;
    d.stream_cap_hard = 1;
    REQUIRE(tg_plan(&t, NULL, &d, &p) == OPARA_OK);
    CHECK(p->n_streams <= 2);
    opara__plan_free(t.rt, p);
    d.stream_cap_hard = 0;
    REQUIRE(tg_plan(&t, NULL, &d, &p) == OPARA_OK);
    /* 3 and 4 are concurrent with 2: soft cap must open a stream for 4 */
    CHECK(p->n_streams >= 3);
    opara__plan_free(t.rt, p);
    tg_free(&t);
}

OT_TEST(device_presets_follow_public_specs) {
    const opara__device* d = opara__device_preset("rtx2080s");
    REQUIRE(d != NULL);
    CHECK_EQ(d->sms, 48);
    CHECK_EQ(d->max_smem_per_block, 49152);
    REQUIRE(opara__device_preset("v100") != NULL);
    CHECK_EQ(opara__device_preset("v100")->sms, 80);
    REQUIRE(opara__device_preset("a100") != NULL);
    CHECK_EQ(opara__device_preset("a100")->sms, 108);
    REQUIRE(opara__device_preset("h100") != NULL);
    CHECK_EQ(opara__device_preset("h100")->sms, 132);
    REQUIRE(opara__device_preset("orin") != NULL);
    CHECK_EQ(opara__device_preset("orin")->sms, 16);
    CHECK(opara__device_preset("gtx480") == NULL);
    CHECK_NEAR(opara__device_balance(d), 11.15e12 / 496e9, 1e-9);
}

OT_TEST(analytic_descriptors_conv_gemm_relu) {
    /* GoogLeNet's first conv: x [1,3,224,224], w [64,3,7,7], y [1,64,112,112]:
       FLOPs = 2*N*K*C*R*S*P*Q = 2*1*64*3*7*7*112*112 = 236027904;
       bytes = 602112 (x) + 37632 (w) + 3211264 (y) = 3851008. Gemm [1,1024] x [1000,1024]^T:
       2*1*1000*1024 = 2048000 FLOPs. */
    opara_runtime* rt = NULL;
    opara__graph g;
    opara__shape s[7];
    opara__op_desc d[3];
    int32_t v[7], ins[3];
    uint32_t i;
    static const int64_t dims[7][4] = {{1, 3, 224, 224}, {64, 3, 7, 7}, {1, 64, 112, 112}, {1, 1024, 0, 0},
                                       {1000, 1024, 0, 0}, {1, 1000, 0, 0}, {1, 1000, 0, 0}};
    static const int32_t ranks[7] = {4, 4, 4, 2, 2, 2, 2};
    static const char* names[7] = {"x", "w", "y", "a", "b", "c", "r"};
    REQUIRE(opara_runtime_create(NULL, &rt) == OPARA_OK);
    opara__graph_init(&g, rt);
    for (i = 0; i < 7; ++i) {
        memset(&s[i], 0, sizeof s[i]);
        s[i].ndim = ranks[i];
        memcpy(s[i].dims, dims[i], sizeof dims[i]);
        v[i] = opara__graph_add_value(&g, names[i], OPARA_DTYPE_F32, &s[i]);
    }
    opara__graph_add_input(&g, v[0]);
    opara__graph_add_input(&g, v[3]);
    opara__graph_set_const(&g, v[1], NULL, 0, 0);
    opara__graph_set_const(&g, v[4], NULL, 0, 0);
    ins[0] = v[0];
    ins[1] = v[1];
    opara__graph_add_node(&g, OPARA__OP_CONV, "conv", 2, ins, 1, &v[2]);
    opara__node_set_int(&g, 0, "group", 1);
    ins[0] = v[3];
    ins[1] = v[4];
    opara__graph_add_node(&g, OPARA__OP_GEMM, "gemm", 2, ins, 1, &v[5]);
    opara__node_set_int(&g, 1, "transB", 1);
    opara__graph_add_node(&g, OPARA__OP_RELU, "relu", 1, &v[5], 1, &v[6]);
    REQUIRE(opara__graph_finalize(&g) == OPARA_OK);
    REQUIRE(opara__describe_ops(&g, s, opara__device_preset("rtx2080s"), d) == OPARA_OK);
    CHECK_NEAR(d[0].flops, 236027904.0, 0.5);
    CHECK_NEAR(d[0].bytes, 3851008.0, 0.5);
    CHECK_EQ(d[0].op_class, OPARA__CLASS_COMPUTE); /* 61 FLOP/B > 22.5 */
    CHECK_NEAR(d[1].flops, 2048000.0, 0.5);
    CHECK_EQ(d[1].op_class, OPARA__CLASS_MEMORY); /* batch-1 GEMM streams its weights: 0.5 FLOP/B */
    CHECK_EQ(d[2].op_class, OPARA__CLASS_MEMORY);
    CHECK(d[0].has_info && d[0].grid > 0 && d[0].block_threads > 0);
    opara__graph_free(&g);
    opara_runtime_destroy(rt);
}

/* An Add with a fused activation counts the activation's FLOPs too: Add 1 per element, + Relu 1,
   + Gelu 8 (the op table's), over [4, 1000]. */
OT_TEST(analytic_descriptors_count_a_fused_activation) {
    static const char* const acts[3] = {"", "Relu", "GeluTanh"};
    static const double per_elem[3] = {1, 2, 9};
    opara_runtime* rt = NULL;
    opara__shape s[3];
    opara__op_desc d[1];
    int k;
    REQUIRE(opara_runtime_create(NULL, &rt) == OPARA_OK);
    for (k = 0; k < 3; ++k) {
        opara__graph g;
        int32_t v[3], i;
        opara__graph_init(&g, rt);
        for (i = 0; i < 3; ++i) {
            memset(&s[i], 0, sizeof s[i]);
            s[i].ndim = 2, s[i].dims[0] = 4, s[i].dims[1] = 1000;
            v[i] = opara__graph_add_value(&g, i == 0 ? "a" : i == 1 ? "b" : "y", OPARA_DTYPE_F32, &s[i]);
        }
        opara__graph_add_input(&g, v[0]);
        opara__graph_add_input(&g, v[1]);
        opara__graph_add_node(&g, OPARA__OP_ADD, "add", 2, v, 1, &v[2]);
        if (acts[k][0]) opara__node_set_string(&g, 0, "activation", acts[k]);
        REQUIRE(opara__graph_finalize(&g) == OPARA_OK);
        REQUIRE(opara__describe_ops(&g, s, opara__device_preset("h100"), d) == OPARA_OK);
        CHECK_NEAR(d[0].flops, 4000.0 * per_elem[k], 0.5);
        opara__graph_free(&g);
    }
    opara_runtime_destroy(rt);
}

OT_TEST(dominant_share_metric) {
    /* rtx2080s: 1024 threads, 65536 registers, 64 KiB shared memory per SM. A block of 256 threads
       x 128 registers = 32768 registers = 50% of the registers, 25% of the threads, 8 KiB = 12.5% */
    opara__op_desc d;
    memset(&d, 0, sizeof d);
    d.block_threads = 256;
    d.regs_per_thread = 128;
    d.smem_per_block = 8192;
    d.has_info = 1;
    CHECK_NEAR(opara__op_demand(&d, opara__device_preset("rtx2080s"), OPARA__METRIC_DOMINANT), 0.5, 1e-12);
    CHECK_NEAR(opara__op_demand(&d, opara__device_preset("rtx2080s"), OPARA__METRIC_SMEM_FRAC), 8192.0 / 49152.0, 1e-12);
    d.has_info = 0;
    CHECK(opara__op_demand(&d, NULL, OPARA__METRIC_DOMINANT) > 1e300);
}

/* Memory budget. s = Conv(x) 4 KiB; a1 = Conv(s), b1 = Conv(s) 4 KiB each; a2 = Conv(a1),
   b2 = Conv(b1) 256 B each; y = Add(a2, b2). Demands (shared memory): a1 10%, b1 20%, a2 and b2
   90%, so Alg. 2 goes breadth first (s a1 b1 a2 b2 y: s, a1 and b1 live at once, 12 KiB). The
   sequential order is depth first (s a1 a2 b1 b2 y, 8,448 B). Under a budget of 1.0x, a1 leaves
   no room for b1 until a2 has freed a1: s a1 a2 b1 b2 y. The brute force below checks that no
   topological order has a smaller launch-order peak than the one the budget gives. */
#define BUDGET_N 6
static const int budget_preds[BUDGET_N][2] = {{-1, -1}, {0, -1}, {1, -1}, {0, -1}, {3, -1}, {2, 4}};

static int budget_graph(tgraph* t, opara__op_desc* descs) {
    static const int64_t elems[BUDGET_N] = {1024, 1024, 64, 1024, 64, 64};
    static const double smem[BUDGET_N] = {0.1, 0.1, 0.9, 0.2, 0.9, 0.1};
    char name[16];
    int32_t x, ins[2];
    uint32_t i, k;
    if (!tg_begin(t, BUDGET_N)) return 0;
    x = tg_value(t, "x", 64);
    opara__graph_add_input(&t->g, x);
    for (i = 0; i < BUDGET_N; ++i) {
        snprintf(name, sizeof name, "v%u", i);
        t->out_of[i] = tg_value(t, name, elems[i]);
    }
    for (i = 0; i < BUDGET_N; ++i) {
        uint32_t n = 0;
        for (k = 0; k < 2; ++k)
            if (budget_preds[i][k] >= 0) ins[n++] = t->out_of[budget_preds[i][k]];
        if (!n) ins[n++] = x;
        snprintf(name, sizeof name, "n%u", i);
        opara__graph_add_node(&t->g, n == 2 ? OPARA__OP_ADD : OPARA__OP_CONV, name, n, ins, 1, &t->out_of[i]);
        descs[i] = kernel(smem[i], OPARA__CLASS_COMPUTE);
    }
    opara__graph_add_output(&t->g, t->out_of[BUDGET_N - 1]);
    return tg_finish(t);
}

/* Launch-order peak of `order` on the budget graph, by hand: an output is allocated (256-byte
   aligned) at its node's launch and freed after its last reader's launch; y is the graph output. */
static uint64_t budget_order_peak(const tgraph* t, const uint32_t* order) {
    uint64_t live = 0, peak = 0;
    uint32_t i, k, readers_left[BUDGET_N] = {0};
    for (i = 0; i < BUDGET_N; ++i)
        for (k = 0; k < 2; ++k)
            if (budget_preds[i][k] >= 0) readers_left[budget_preds[i][k]]++;
    for (i = 0; i < BUDGET_N; ++i) {
        uint32_t n = order[i];
        live += (t->bytes[t->out_of[n]] + 255) / 256 * 256;
        if (live > peak) peak = live;
        for (k = 0; k < 2; ++k) {
            int p = budget_preds[n][k];
            if (p >= 0 && --readers_left[p] == 0) live -= (t->bytes[t->out_of[p]] + 255) / 256 * 256;
        }
    }
    return peak;
}

/* Smallest launch-order peak over every topological order (all 720 permutations, filtered);
   *n_topo counts the topological orders. */
static uint64_t budget_best_peak(const tgraph* t, uint32_t* n_topo) {
    uint32_t perm[BUDGET_N], pos[BUDGET_N], i, k, c[BUDGET_N] = {0};
    uint64_t best = UINT64_MAX;
    *n_topo = 0;
    for (i = 0; i < BUDGET_N; ++i) perm[i] = i;
    for (i = 0;;) { /* Heap's algorithm */
        int topo = 1;
        for (k = 0; k < BUDGET_N; ++k) pos[perm[k]] = k;
        for (k = 0; k < BUDGET_N; ++k)
            if ((budget_preds[k][0] >= 0 && pos[budget_preds[k][0]] > pos[k]) ||
                (budget_preds[k][1] >= 0 && pos[budget_preds[k][1]] > pos[k]))
                topo = 0;
        *n_topo += (uint32_t)topo;
        if (topo && budget_order_peak(t, perm) < best) best = budget_order_peak(t, perm);
        while (i < BUDGET_N && c[i] >= i) c[i++] = 0;
        if (i >= BUDGET_N) break;
        k = i % 2 ? c[i] : 0;
        { uint32_t tmp = perm[k]; perm[k] = perm[i]; perm[i] = tmp; }
        c[i]++;
        i = 0;
    }
    return best;
}

OT_TEST(memory_budget_forces_depth_first_order) {
    static const uint32_t breadth[BUDGET_N] = {0, 1, 3, 2, 4, 5}, depth[BUDGET_N] = {0, 1, 2, 3, 4, 5};
    tgraph t;
    opara__op_desc descs[BUDGET_N];
    opara__plan_desc d;
    opara__plan *p = NULL, *seq = NULL;
    uint32_t i, n_topo;
    REQUIRE(budget_graph(&t, descs));
    memset(&d, 0, sizeof d);
    REQUIRE(tg_plan(&t, descs, &d, &p) == OPARA_OK);
    for (i = 0; i < BUDGET_N; ++i) CHECK_EQ(p->order[i], breadth[i]);
    CHECK_EQ(budget_order_peak(&t, p->order), 12288);
    CHECK_EQ(p->stats.budget_bytes, 0);
    opara__plan_free(t.rt, p);
    memset(&d, 0, sizeof d);
    d.strategy = OPARA_STRATEGY_SEQUENTIAL;
    REQUIRE(tg_plan(&t, descs, &d, &seq) == OPARA_OK);
    memset(&d, 0, sizeof d);
    d.memory_budget = 1.0;
    REQUIRE(tg_plan(&t, descs, &d, &p) == OPARA_OK); /* verified */
    for (i = 0; i < BUDGET_N; ++i) CHECK_EQ(p->order[i], depth[i]);
    CHECK_EQ(budget_order_peak(&t, p->order), 8448);
    CHECK_EQ(budget_best_peak(&t, &n_topo), 8448);
    CHECK_EQ(n_topo, 6); /* s, the 6 interleavings of a1 a2 and b1 b2, y */
    CHECK_EQ(p->stats.live_bytes, 8448);
    CHECK_EQ(p->stats.budget_bytes, seq->arena_bytes);
    /* b1 (another stream) takes a1's block by waiting on a2, a1's reader */
    CHECK(p->arena_bytes <= seq->arena_bytes);
    CHECK(p->stream[3] != p->stream[2]);
    CHECK_EQ(p->offset[t.out_of[3]], p->offset[t.out_of[1]]);
    CHECK(p->stats.n_memory_waits >= 1);
    opara__plan_free(t.rt, p);
    opara__plan_free(t.rt, seq);
    d.memory_budget = -1.0;
    CHECK(tg_plan(&t, descs, &d, &p) == OPARA_ERR_INVALID_ARGS);
    tg_free(&t);
}

OT_TEST(bad_arguments_are_errors) {
    tgraph t;
    opara__plan_desc d;
    opara__plan* p = (opara__plan*)&t;
    REQUIRE(tg_edges(&t, 3, divergence_edges, 0, OPARA__OP_RELU, 16));
    memset(&d, 0, sizeof d);
    d.strategy = (opara_strategy)99;
    CHECK(opara__plan_create(&t.g, t.bytes, NULL, NULL, &d, &p) == OPARA_ERR_INVALID_ARGS);
    CHECK(p == NULL);
    d.strategy = OPARA_STRATEGY_OPARA;
    d.alignment = 100;
    CHECK(opara__plan_create(&t.g, t.bytes, NULL, NULL, &d, &p) == OPARA_ERR_INVALID_ARGS);
    CHECK(opara__plan_create(&t.g, NULL, NULL, NULL, NULL, &p) == OPARA_ERR_INVALID_ARGS);
    CHECK_STR(opara_strategy_name(OPARA_STRATEGY_NIMBLE), "nimble");
    CHECK_STR(opara_strategy_name((opara_strategy)77), "?");
    tg_free(&t);
}

static const opara_test_case tests[] = {
    OT_CASE(appendix_a_ascending_id),
    OT_CASE(appendix_a_five_streams_on_four_lanes),
    OT_CASE(appendix_a_input_order_equals_ascending_here),
    OT_CASE(appendix_a_descending_id),
    OT_CASE(appendix_a_ascending_stream_reproduces_ccfsys_listing),
    OT_CASE(appendix_a_nimble_finds_a_minimum_chain_cover),
    OT_CASE(p1p2ab_flag_gives_two_streams),
    OT_CASE(p1p2ab_first_successor_gives_three_streams),
    OT_CASE(ccfsys_abc_least_shared_memory_first),
    OT_CASE(alternation_parity_versus_last_pick),
    OT_CASE(alg2_first_pick_is_compute_and_no_info_is_deferred),
    OT_CASE(launch_orders_dfs_and_bfs),
    OT_CASE(ios_network_streams_per_strategy),
    OT_CASE(ios_network_concat_inputs_written_in_place),
    OT_CASE(concat_in_place_respects_concat_align),
    OT_CASE(ios_network_wait_pruning_can_be_disabled),
    OT_CASE(memory_not_reused_across_unordered_streams),
    OT_CASE(memory_reused_after_event_edge),
    OT_CASE(inplace_and_view_aliases),
    OT_CASE(stream_cap_reuses_only_idle_streams),
    OT_CASE(stream_cap_hard_and_soft_on_appendix),
    OT_CASE(device_presets_follow_public_specs),
    OT_CASE(analytic_descriptors_conv_gemm_relu),
    OT_CASE(analytic_descriptors_count_a_fused_activation),
    OT_CASE(dominant_share_metric),
    OT_CASE(memory_budget_forces_depth_first_order),
    OT_CASE(bad_arguments_are_errors),
};

int main(int argc, char** argv) { return opara_test_main(argc, argv, tests, OT_COUNT(tests)); }
