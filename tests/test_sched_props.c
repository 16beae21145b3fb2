/* Property tests over seeded random DAGs (widths 1-64, up to 2,000 ops): every strategy's plan
   passes the verifier, and deliberately broken plans (a wait removed, a buffer aliased, a bad
   order) are caught. */
#define OPARA_IMPLEMENTATION
#include "opara.h"
#include "opara_test.h"
#include "test_sched_util.h"

typedef struct variant {
    const char* name;
    opara_strategy strategy;
    opara_launch_order order;
    opara__pred_order pred;
    opara__inherit inherit;
    opara__alternation alt;
    opara__metric metric;
    uint32_t cap;
    int cap_hard;
    uint32_t memory_sync_window;
    double memory_budget;
} variant;

static const variant variants[] = {
    {"opara", OPARA_STRATEGY_OPARA, OPARA_LAUNCH_DEFAULT, OPARA__PRED_DEFAULT, OPARA__INHERIT_DEFAULT, OPARA__ALT_DEFAULT, OPARA__METRIC_DEFAULT, 0, 0, 0, 0.0},
    {"opara-dominant-lastpick", OPARA_STRATEGY_OPARA, OPARA_LAUNCH_DEFAULT, OPARA__PRED_ASC_STREAM, OPARA__INHERIT_DEFAULT, OPARA__ALT_LAST_PICK, OPARA__METRIC_DOMINANT, 0, 0, 0, 0.0},
    {"opara-topo-first-successor", OPARA_STRATEGY_OPARA_TOPO, OPARA_LAUNCH_TOPO, OPARA__PRED_DESC_ID, OPARA__INHERIT_FIRST_SUCCESSOR, OPARA__ALT_DEFAULT, OPARA__METRIC_DEFAULT, 0, 0, 0, 0.0},
    {"opara-dfs-cap4", OPARA_STRATEGY_OPARA_TOPO, OPARA_LAUNCH_DFS, OPARA__PRED_ASC_ID, OPARA__INHERIT_DEFAULT, OPARA__ALT_DEFAULT, OPARA__METRIC_DEFAULT, 4, 0, 0, 0.0},
    {"opara-bfs-hardcap3", OPARA_STRATEGY_OPARA_TOPO, OPARA_LAUNCH_BFS, OPARA__PRED_INPUT, OPARA__INHERIT_DEFAULT, OPARA__ALT_DEFAULT, OPARA__METRIC_DEFAULT, 3, 1, 0, 0.0},
    {"sequential", OPARA_STRATEGY_SEQUENTIAL, OPARA_LAUNCH_DEFAULT, OPARA__PRED_DEFAULT, OPARA__INHERIT_DEFAULT, OPARA__ALT_DEFAULT, OPARA__METRIC_DEFAULT, 0, 0, 0, 0.0},
    {"sequential-dfs", OPARA_STRATEGY_SEQUENTIAL, OPARA_LAUNCH_DFS, OPARA__PRED_DEFAULT, OPARA__INHERIT_DEFAULT, OPARA__ALT_DEFAULT, OPARA__METRIC_DEFAULT, 0, 0, 0, 0.0},
    {"wavefront", OPARA_STRATEGY_WAVEFRONT, OPARA_LAUNCH_DEFAULT, OPARA__PRED_DEFAULT, OPARA__INHERIT_DEFAULT, OPARA__ALT_DEFAULT, OPARA__METRIC_DEFAULT, 0, 0, 0, 0.0},
    {"nimble", OPARA_STRATEGY_NIMBLE, OPARA_LAUNCH_DEFAULT, OPARA__PRED_DEFAULT, OPARA__INHERIT_DEFAULT, OPARA__ALT_DEFAULT, OPARA__METRIC_DEFAULT, 0, 0, 0, 0.0},
    {"opara-memsync2", OPARA_STRATEGY_OPARA, OPARA_LAUNCH_DEFAULT, OPARA__PRED_DEFAULT, OPARA__INHERIT_DEFAULT, OPARA__ALT_DEFAULT, OPARA__METRIC_DEFAULT, 0, 0, 2, 0.0},
    {"wavefront-memsync2", OPARA_STRATEGY_WAVEFRONT, OPARA_LAUNCH_DEFAULT, OPARA__PRED_DEFAULT, OPARA__INHERIT_DEFAULT, OPARA__ALT_DEFAULT, OPARA__METRIC_DEFAULT, 0, 0, 2, 0.0},
    {"opara-budget1.15", OPARA_STRATEGY_OPARA, OPARA_LAUNCH_DEFAULT, OPARA__PRED_DEFAULT, OPARA__INHERIT_DEFAULT, OPARA__ALT_DEFAULT, OPARA__METRIC_DEFAULT, 0, 0, 0, 1.15},
    {"opara-budget1.0-lastpick-cap4", OPARA_STRATEGY_OPARA, OPARA_LAUNCH_DEFAULT, OPARA__PRED_ASC_STREAM, OPARA__INHERIT_DEFAULT, OPARA__ALT_LAST_PICK, OPARA__METRIC_DOMINANT, 4, 0, 0, 1.0},
    {"opara-budget0.5-unreachable", OPARA_STRATEGY_OPARA, OPARA_LAUNCH_DEFAULT, OPARA__PRED_DEFAULT, OPARA__INHERIT_DEFAULT, OPARA__ALT_DEFAULT, OPARA__METRIC_DEFAULT, 0, 0, 0, 0.5},
    {"wavefront-budget1.0", OPARA_STRATEGY_WAVEFRONT, OPARA_LAUNCH_DEFAULT, OPARA__PRED_DEFAULT, OPARA__INHERIT_DEFAULT, OPARA__ALT_DEFAULT, OPARA__METRIC_DEFAULT, 0, 0, 0, 1.0},
};
#define N_VARIANTS (sizeof variants / sizeof variants[0])

static void plan_desc_of(const variant* v, opara__plan_desc* d) {
    memset(d, 0, sizeof *d);
    d->strategy = v->strategy;
    d->launch_order = v->order;
    d->pred_order = v->pred;
    d->inherit = v->inherit;
    d->alternation = v->alt;
    d->metric = v->metric;
    d->stream_cap = v->cap;
    d->stream_cap_hard = v->cap_hard;
    d->memory_sync_window = v->memory_sync_window;
    d->memory_budget = v->memory_budget;
}

/* Random descriptors: shared memory 0..48 KiB, 64..1024 threads, class by coin. */
static void random_descs(opara__op_desc* d, uint32_t n, uint64_t seed) {
    trng r;
    uint32_t i;
    r.s = seed ^ 0x9e3779b97f4a7c15ULL;
    for (i = 0; i < n; ++i) {
        memset(&d[i], 0, sizeof d[i]);
        d[i].grid = 1 + trng_below(&r, 512);
        d[i].block_threads = 64u << trng_below(&r, 5);
        d[i].regs_per_thread = 16 + trng_below(&r, 112);
        d[i].smem_per_block = trng_below(&r, 4) ? 1024 * trng_below(&r, 49) : 0;
        d[i].op_class = (uint8_t)trng_below(&r, 2);
        d[i].has_info = trng_below(&r, 8) != 0;
    }
}

/* Live bytes at any point of a sequential run are a lower bound for any valid arena. */
static uint64_t max_live_lower_bound(const tgraph* t, const opara__plan* p) {
    uint64_t best = 0;
    uint32_t i;
    /* the largest single arena value */
    for (i = 0; i < t->g.n_values; ++i)
        if (p->storage[i] == OPARA__STORAGE_ARENA && p->alias_root[i] == (int32_t)i && t->bytes[i] > best)
            best = t->bytes[i];
    return best;
}

static int check_graph(opara_test* T, uint32_t n, uint32_t width, uint64_t seed) {
    tgraph t;
    opara__op_desc* descs;
    uint32_t k;
    int ok = 1;
    if (!tg_random(&t, n, width, seed)) {
        CHECK(!"random graph");
        return 0;
    }
    descs = (opara__op_desc*)calloc(n + 1, sizeof(opara__op_desc));
    random_descs(descs, n, seed);
    for (k = 0; k < N_VARIANTS; ++k) {
        opara__plan_desc d;
        opara__plan* p = NULL;
        opara_result r;
        plan_desc_of(&variants[k], &d);
        r = tg_plan(&t, descs, &d, &p);
        if (r != OPARA_OK) {
            OT_LOG("graph n=%u width=%u seed=%llu, %s: %s", n, width, (unsigned long long)seed, variants[k].name,
                   opara_runtime_last_error(t.rt));
            CHECK(r == OPARA_OK);
            ok = 0;
            break;
        }
        if (variants[k].cap_hard) CHECK(p->n_streams <= variants[k].cap);
        if (variants[k].strategy == OPARA_STRATEGY_SEQUENTIAL) CHECK_EQ(p->n_streams, 1);
        CHECK(p->arena_bytes >= max_live_lower_bound(&t, p));
        CHECK(p->arena_bytes <= p->stats.no_reuse_bytes);
        if (n <= 400) {
            char why[256];
            int safe = tg_brute_check(&t.g, p, why, sizeof why);
            if (!safe) OT_LOG("graph n=%u width=%u seed=%llu, %s: brute force: %s", n, width, (unsigned long long)seed, variants[k].name, why);
            CHECK(safe);
        }
        opara__plan_free(t.rt, p);
    }
    free(descs);
    tg_free(&t);
    return ok;
}

OT_TEST(random_dags_every_strategy_verifies) {
    uint64_t seed;
    uint32_t graphs = 0;
    for (seed = 1; seed <= 1500; ++seed) {
        trng r;
        uint32_t n, width;
        r.s = seed;
        n = 2 + trng_below(&r, seed % 10 == 0 ? 400 : 60);
        width = 1 + trng_below(&r, 64);
        if (!check_graph(T, n, width, seed)) return;
        graphs++;
    }
    CHECK_EQ(graphs, 1500);
}

OT_TEST(large_random_dags_verify) {
    static const uint32_t widths[] = {1, 2, 8, 16, 32, 64};
    uint32_t i;
    for (i = 0; i < 6; ++i)
        if (!check_graph(T, 2000, widths[i], 7000 + i)) return;
}

/* Removes the first wait of node n from the plan; every stream gets fork and join waits so that
   only the missing event differs from a valid plan. */
static void drop_wait(opara__plan* p, uint32_t n) {
    uint32_t at = p->wait_start[n], m;
    memmove(p->wait_nodes + at, p->wait_nodes + at + 1, (p->stats.n_waits - at - 1) * sizeof(uint32_t));
    for (m = n + 1; m <= p->n_nodes; ++m) p->wait_start[m]--;
    p->stats.n_waits--;
    for (m = 1; m < p->n_streams; ++m) p->stream_fork[m] = p->stream_join[m] = 1;
}

OT_TEST(removed_wait_is_caught) {
    uint64_t seed;
    uint32_t caught = 0;
    for (seed = 1; seed <= 300; ++seed) {
        tgraph t;
        opara__plan_desc d;
        opara__plan* p = NULL;
        uint32_t n;
        REQUIRE(tg_random(&t, 20 + (uint32_t)(seed % 80), 1 + (uint32_t)(seed % 16), seed));
        memset(&d, 0, sizeof d);
        d.strategy = seed % 2 ? OPARA_STRATEGY_OPARA : OPARA_STRATEGY_NIMBLE;
        /* level-sync memory waits are not pruned against each other, so a node's first wait can be
           implied by its later ones and dropping it leaves a valid plan */
        d.no_level_sync = 1;
        REQUIRE(tg_plan(&t, NULL, &d, &p) == OPARA_OK);
        for (n = 0; n < p->n_nodes; ++n)
            if (p->wait_start[n + 1] > p->wait_start[n]) break;
        if (n < p->n_nodes) {
            opara_result r;
            char why[256];
            drop_wait(p, n);
            r = opara__plan_verify(&t.g, p);
            CHECK(r == OPARA_ERR_PLAN_INVALID);
            CHECK(!tg_brute_check(&t.g, p, why, sizeof why));
            if (r == OPARA_ERR_PLAN_INVALID) {
                caught++;
                /* a data dependency, or a block reused behind that event */
                const char* why = opara_runtime_last_error(t.rt);
                if (!strstr(why, "is not enforced") && !strstr(why, "arena bytes")) OT_LOG("%s", why);
                CHECK(strstr(why, "is not enforced") != NULL || strstr(why, "arena bytes") != NULL);
            }
        }
        opara__plan_free(t.rt, p);
        tg_free(&t);
    }
    CHECK(caught > 200);
}

/* Puts output y of node v on the bytes of v's input x (v is not in place): v writes what it reads. */
static int alias_output_onto_input(const tgraph* t, opara__plan* p) {
    uint32_t v, i;
    for (v = 0; v < t->g.n_nodes; ++v) {
        const opara__node* nd = &t->g.nodes[v];
        int32_t y = nd->outputs[0];
        if (nd->op != OPARA__OP_CONV || p->alias_root[y] != y || p->storage[y] != OPARA__STORAGE_ARENA) continue;
        for (i = 0; i < nd->n_inputs; ++i) {
            int32_t x = nd->inputs[i], w;
            uint64_t base;
            if (x < 0 || p->storage[x] != OPARA__STORAGE_ARENA || p->alias_root[x] != x) continue;
            base = p->offset[x];
            for (w = 0; w < (int32_t)p->n_values; ++w)
                if (p->alias_root[w] == y) p->offset[w] = base + p->alias_offset[w];
            if (base + t->bytes[y] > p->arena_bytes) p->arena_bytes = base + t->bytes[y];
            return 1;
        }
    }
    return 0;
}

OT_TEST(aliased_buffer_is_caught) {
    uint64_t seed;
    uint32_t caught = 0;
    for (seed = 1; seed <= 300; ++seed) {
        tgraph t;
        opara__plan_desc d;
        opara__plan* p = NULL;
        REQUIRE(tg_random(&t, 10 + (uint32_t)(seed % 60), 1 + (uint32_t)(seed % 8), seed));
        memset(&d, 0, sizeof d);
        d.strategy = (opara_strategy)(seed % 4);
        REQUIRE(tg_plan(&t, NULL, &d, &p) == OPARA_OK);
        if (alias_output_onto_input(&t, p)) {
            char why[256];
            opara_result r = opara__plan_verify(&t.g, p);
            CHECK(r == OPARA_ERR_PLAN_INVALID);
            if (tg_brute_check(&t.g, p, why, sizeof why)) OT_LOG("seed %llu: brute force missed: %s", (unsigned long long)seed, opara_runtime_last_error(t.rt));
            CHECK(!tg_brute_check(&t.g, p, why, sizeof why));
            caught += r == OPARA_ERR_PLAN_INVALID;
            if (r == OPARA_ERR_PLAN_INVALID && !strstr(opara_runtime_last_error(t.rt), "arena bytes"))
                OT_LOG("%s", opara_runtime_last_error(t.rt));
            if (r == OPARA_ERR_PLAN_INVALID) CHECK(strstr(opara_runtime_last_error(t.rt), "arena bytes") != NULL);
        }
        opara__plan_free(t.rt, p);
        tg_free(&t);
    }
    CHECK(caught > 100);
}

/* Two concurrent branches: the block of one given to the other is a race the verifier reports. */
OT_TEST(cross_stream_reuse_is_caught) {
    static const int edges[][2] = {{1, 2}, {3, 4}};
    tgraph t;
    opara__plan_desc d;
    opara__plan* p = NULL;
    REQUIRE(tg_edges(&t, 4, edges, 2, OPARA__OP_CONV, 256));
    memset(&d, 0, sizeof d);
    d.strategy = OPARA_STRATEGY_OPARA_TOPO;
    REQUIRE(tg_plan(&t, NULL, &d, &p) == OPARA_OK);
    REQUIRE(p->n_streams == 2);
    /* what a launch-order-only allocator would do: b2 (value of node 4) takes a1's block */
    {
        char why[256];
        CHECK(tg_brute_check(&t.g, p, why, sizeof why));
        p->offset[t.out_of[3]] = p->offset[t.out_of[0]];
        CHECK(!tg_brute_check(&t.g, p, why, sizeof why));
    }
    CHECK(opara__plan_verify(&t.g, p) == OPARA_ERR_PLAN_INVALID);
    OT_LOG("%s", opara_runtime_last_error(t.rt));
    opara__plan_free(t.rt, p);
    tg_free(&t);
}

OT_TEST(bad_order_and_streams_are_caught) {
    static const int edges[][2] = {{1, 2}, {2, 3}, {1, 3}};
    tgraph t;
    opara__plan_desc d;
    opara__plan* p = NULL;
    uint32_t tmp;
    REQUIRE(tg_edges(&t, 3, edges, 3, OPARA__OP_ADD, 16));
    memset(&d, 0, sizeof d);
    REQUIRE(tg_plan(&t, NULL, &d, &p) == OPARA_OK);
    tmp = p->order[0];
    p->order[0] = p->order[1];
    p->order[1] = tmp;
    p->position[p->order[0]] = 0;
    p->position[p->order[1]] = 1;
    CHECK(opara__plan_verify(&t.g, p) == OPARA_ERR_PLAN_INVALID);
    CHECK(strstr(opara_runtime_last_error(t.rt), "not topological") != NULL);
    p->order[1] = p->order[0];
    CHECK(opara__plan_verify(&t.g, p) == OPARA_ERR_PLAN_INVALID);
    opara__plan_free(t.rt, p);
    REQUIRE(tg_plan(&t, NULL, &d, &p) == OPARA_OK);
    p->stream[2] = 7;
    CHECK(opara__plan_verify(&t.g, p) == OPARA_ERR_PLAN_INVALID);
    opara__plan_free(t.rt, p);
    REQUIRE(tg_plan(&t, NULL, &d, &p) == OPARA_OK);
    p->offset[t.out_of[2]] = p->arena_bytes; /* the output lies past the arena */
    CHECK(opara__plan_verify(&t.g, p) == OPARA_ERR_PLAN_INVALID);
    opara__plan_free(t.rt, p);
    tg_free(&t);
}

/* Streams a < b on different lanes whose lifetimes overlap in launch order; 0 when none. */
static int overlapping_streams(const opara__plan* p, uint32_t* a, uint32_t* b) {
    for (*a = 0; *a < p->n_streams; ++*a)
        for (*b = *a + 1; *b < p->n_streams; ++*b)
            if (p->position[p->stream_last[*a]] > p->position[p->stream_first[*b]] && p->stream_lane[*a] != p->stream_lane[*b])
                return 1;
    return 0;
}

/* Over random plans: every plan's lanes pass the verifier (the property tests above verify every
   plan), and putting a stream on the lane of a stream it overlaps (the earlier one's last op is
   launched after the later one's first) is reported as such. */
OT_TEST(overlapping_streams_on_one_lane_are_caught) {
    uint64_t seed;
    uint32_t caught = 0, shared = 0;
    for (seed = 1; seed <= 200; ++seed) {
        tgraph t;
        opara__plan_desc d;
        opara__plan* p = NULL;
        uint32_t a, b;
        REQUIRE(tg_random(&t, 30 + (uint32_t)(seed % 90), 2 + (uint32_t)(seed % 12), seed));
        memset(&d, 0, sizeof d);
        d.strategy = seed % 3 == 0 ? OPARA_STRATEGY_WAVEFRONT : OPARA_STRATEGY_OPARA;
        REQUIRE(tg_plan(&t, NULL, &d, &p) == OPARA_OK);
        shared += p->n_lanes < p->n_streams;
        if (overlapping_streams(p, &a, &b)) {
            p->stream_lane[b] = p->stream_lane[a];
            CHECK_EQ(OPARA_ERR_PLAN_INVALID, opara__plan_verify(&t.g, p));
            CHECK(strstr(opara_runtime_last_error(t.rt), "may overlap") != NULL);
            caught++;
        }
        opara__plan_free(t.rt, p);
        tg_free(&t);
    }
    CHECK(caught > 150);
    CHECK(shared > 50); /* many plans run fewer CUDA streams than they have streams */
    printf("%u of 200 random plans share lanes; %u overlapping lanes caught\n", shared, caught);
}

/* The memory-plan defect once seen on the CUDA path (NASNet cells): a Concat's output block was
   taken when its first in-place input's producer ran (n2 on stream 0, reusing n0's block), then
   another in-place input's producer on another stream (n3) wrote its slice of the same block
   while n0, the block's previous occupant, was not ordered before it: two unordered writes to the
   same bytes. The fix checks every later writer into the block against the block's previous
   occupants and copies that input instead. The graph is the smallest random DAG the old planner
   got wrong (seed 53063, Nimble streams, 64-byte alignment). */
/* x -> n0 -> n1 -> n2 -> v2 and x -> (a chain of `chain` ops) -> n3 -> v3, Concat(v2, v3) -> v4 (the
   output); node n3 has index 3 + chain. */
static int concat_fixture(tgraph* t, uint32_t chain, int32_t* v) {
    int32_t x, ins[2], prev;
    char name[32];
    uint32_t i;
    int ok;
    if (!tg_begin(t, chain + 5)) return 0;
    x = tg_value(t, "x", 64);
    ok = opara__graph_add_input(&t->g, x) == OPARA_OK;
    v[0] = tg_value(t, "v0", 64);
    v[1] = tg_value(t, "v1", 96);
    v[2] = tg_value(t, "v2", 48);
    v[3] = tg_value(t, "v3", 16);
    v[4] = tg_value(t, "v4", 64);
    ok &= opara__graph_add_node(&t->g, OPARA__OP_CONV, "n0", 1, &x, 1, &v[0]) >= 0;
    ok &= opara__graph_add_node(&t->g, OPARA__OP_CONV, "n1", 1, &v[0], 1, &v[1]) >= 0;
    ok &= opara__graph_add_node(&t->g, OPARA__OP_CONV, "n2", 1, &v[1], 1, &v[2]) >= 0;
    for (prev = x, i = 0; i < chain; ++i) {
        int32_t y;
        snprintf(name, sizeof name, "c%u", i);
        y = tg_value(t, name, 1024 + 64 * (i % 3));
        snprintf(name, sizeof name, "chain%u", i);
        ok &= opara__graph_add_node(&t->g, OPARA__OP_CONV, name, 1, &prev, 1, &y) >= 0;
        prev = y;
    }
    ok &= opara__graph_add_node(&t->g, OPARA__OP_CONV, "n3", 1, &prev, 1, &v[3]) >= 0;
    ins[0] = v[2];
    ins[1] = v[3];
    ok &= opara__graph_add_node(&t->g, OPARA__OP_CONCAT, "n4", 2, ins, 1, &v[4]) >= 0;
    opara__node_set_int(&t->g, chain + 4, "axis", 1);
    ok &= opara__graph_add_output(&t->g, v[4]) == OPARA_OK;
    return ok && tg_finish(t);
}

OT_TEST(concat_block_taken_by_one_producer_is_safe_for_the_others) {
    tgraph t;
    int32_t v[5];
    opara__plan_desc d;
    opara__plan* p = NULL;
    char why[256];
    int s;
    REQUIRE(concat_fixture(&t, 0, v));
    for (s = 0; s < OPARA_STRATEGY_COUNT; ++s) {
        memset(&d, 0, sizeof d);
        d.strategy = (opara_strategy)s;
        d.alignment = 64;
        REQUIRE(tg_plan(&t, NULL, &d, &p) == OPARA_OK);
        if (!tg_brute_check(&t.g, p, why, sizeof why)) OT_LOG("%s: %s", opara_strategy_name(d.strategy), why);
        CHECK(tg_brute_check(&t.g, p, why, sizeof why));
        /* the scenario is exercised: v2 is written in place into the Concat's block */
        CHECK_EQ(p->alias_kind[v[2]], OPARA__ALIAS_CONCAT);
        if (s == OPARA_STRATEGY_NIMBLE) CHECK(p->stream[3] != p->stream[0]); /* n3 runs beside n0..n2 */
        opara__plan_free(t.rt, p);
    }
    tg_free(&t);
}

/* The same scenario after a long walk: the memory plan moves its live facts to the front of its
   fact array once most of them are dead (compaction, every few hundred facts), and the facts of a
   Concat block's previous occupants must move with the block. A chain of 300 ops (each retiring a
   block, so compaction runs many times) lies between the producer that takes the Concat's block
   (n2, reusing n0's block) and the other input's producer (n3, at the end of the chain, beside
   n0..n2): n3 may write its slice only if n0 and n1 happen-before it, which the relocated facts
   must still say. */
OT_TEST(concat_block_previous_occupants_survive_fact_compaction) {
    enum { CHAIN = 300 };
    tgraph t;
    int32_t v[5];
    opara__plan_desc d;
    opara__plan* p = NULL;
    char why[256];
    uint32_t in_place = 0;
    int s;
    REQUIRE(concat_fixture(&t, CHAIN, v));
    for (s = 0; s < OPARA_STRATEGY_COUNT; ++s) {
        memset(&d, 0, sizeof d);
        d.strategy = (opara_strategy)s;
        d.alignment = 64;
        d.launch_order = OPARA_LAUNCH_DFS; /* n0..n2 first, then the chain, then n3 */
        REQUIRE(tg_plan(&t, NULL, &d, &p) == OPARA_OK);
        if (!tg_brute_check(&t.g, p, why, sizeof why)) OT_LOG("%s: %s", opara_strategy_name(d.strategy), why);
        CHECK(tg_brute_check(&t.g, p, why, sizeof why));
        CHECK(p->position[2] < 10 && p->position[CHAIN + 3] > CHAIN); /* the chain runs between n2 and n3 */
        in_place += p->alias_kind[v[2]] == OPARA__ALIAS_CONCAT && p->storage[v[0]] == OPARA__STORAGE_ARENA &&
                    p->offset[v[0]] == p->offset[v[4]];
        opara__plan_free(t.rt, p);
    }
    CHECK(in_place > 0); /* the scenario is exercised: n2 writes in place into the block n0 had */
    tg_free(&t);
}

/* Expected times: two independent branches x -> a1 -> a2 and x -> b1 -> b2 (streams 0 and 1) whose
   timeline runs one after the other. Without times b1 cannot take a1's block (unordered); with
   them it does, by waiting on a2, which the timeline says ended before b1 starts: every added wait
   is satisfied on the timeline, the plan is safe, and the peak drops. */
OT_TEST(expected_times_let_blocks_move_across_streams_for_free) {
    static const int edges[][2] = {{1, 2}, {3, 4}};
    tgraph t;
    opara__plan_desc d;
    opara__plan *p = NULL, *q = NULL;
    double start[4], end[4];
    uint32_t i, v, k;
    char why[256];
    REQUIRE(tg_edges(&t, 4, edges, 2, OPARA__OP_CONV, 1024));
    memset(&d, 0, sizeof d);
    d.strategy = OPARA_STRATEGY_OPARA_TOPO;
    d.no_level_sync = 1;
    d.memory_sync_window = 1u << 30; /* the window rule never applies */
    REQUIRE(tg_plan(&t, NULL, &d, &p) == OPARA_OK);
    REQUIRE(p->n_streams == 2);
    /* the timeline: a1 [0,1), a2 [1,2), b1 [3,4), b2 [4,5) */
    start[0] = 0, end[0] = 1, start[1] = 1, end[1] = 2, start[2] = 3, end[2] = 4, start[3] = 4, end[3] = 5;
    d.est_start_us = start;
    d.est_end_us = end;
    d.verify = 1;
    REQUIRE(tg_plan(&t, NULL, &d, &q) == OPARA_OK);
    CHECK(tg_brute_check(&t.g, q, why, sizeof why));
    CHECK_EQ(p->stats.n_memory_waits, 0);
    CHECK(q->stats.n_memory_waits >= 1);
    CHECK(q->arena_bytes < p->arena_bytes);
    CHECK_EQ(p->arena_bytes, 4 * 4096);
    CHECK_EQ(q->arena_bytes, 3 * 4096);
    for (i = 0; i < t.g.n_nodes; ++i) {
        v = q->order[i];
        for (k = q->wait_start[v]; k < q->wait_start[v + 1]; ++k) CHECK(end[q->wait_nodes[k]] <= start[v]);
    }
    opara__plan_free(t.rt, p);
    opara__plan_free(t.rt, q);
    tg_free(&t);
}

OT_TEST(plans_are_deterministic) {
    tgraph t;
    opara__plan_desc d;
    opara__plan *a = NULL, *b = NULL;
    opara__op_desc descs[300];
    REQUIRE(tg_random(&t, 300, 24, 4242));
    random_descs(descs, 300, 4242);
    memset(&d, 0, sizeof d);
    REQUIRE(tg_plan(&t, descs, &d, &a) == OPARA_OK);
    REQUIRE(tg_plan(&t, descs, &d, &b) == OPARA_OK);
    CHECK(memcmp(a->order, b->order, 300 * sizeof(uint32_t)) == 0);
    CHECK(memcmp(a->stream, b->stream, 300 * sizeof(uint32_t)) == 0);
    CHECK(memcmp(a->offset, b->offset, t.g.n_values * sizeof(uint64_t)) == 0);
    CHECK_EQ(a->stats.n_waits, b->stats.n_waits);
    opara__plan_free(t.rt, a);
    opara__plan_free(t.rt, b);
    tg_free(&t);
}

/* With a short memory-sync window the planner adds waits to reuse blocks; the plans still verify
   and need less memory than with the sync turned off. */
OT_TEST(memory_sync_waits_reduce_peak_and_verify) {
    uint64_t seed;
    uint32_t added = 0, smaller = 0;
    for (seed = 1; seed <= 60; ++seed) {
        tgraph t;
        opara__plan_desc d;
        opara__plan *a = NULL, *b = NULL;
        REQUIRE(tg_random(&t, 200, 16, seed));
        memset(&d, 0, sizeof d);
        d.no_memory_sync = 1;
        REQUIRE(tg_plan(&t, NULL, &d, &a) == OPARA_OK);
        memset(&d, 0, sizeof d);
        d.memory_sync_window = 2;
        REQUIRE(tg_plan(&t, NULL, &d, &b) == OPARA_OK);
        CHECK_EQ(a->stats.n_memory_waits, 0);
        added += b->stats.n_memory_waits > 0;
        smaller += b->arena_bytes < a->arena_bytes;
        CHECK(b->stats.n_waits >= b->stats.n_memory_waits);
        opara__plan_free(t.rt, a);
        opara__plan_free(t.rt, b);
        tg_free(&t);
    }
    CHECK(added > 30);
    CHECK(smaller > 30);
}

/* Longest path (in ops) from a source to every node, from the graph's edges alone. */
static void dag_levels(const opara__graph* g, uint32_t* level) {
    uint32_t i, k;
    for (i = 0; i < g->n_nodes; ++i) level[i] = 0;
    for (i = 0; i < g->n_nodes; ++i) {
        uint32_t v = g->topo[i];
        for (k = g->succ_start[v]; k < g->succ_start[v + 1]; ++k)
            if (level[g->succs[k]] < level[v] + 1) level[g->succs[k]] = level[v] + 1;
    }
}

/* With the window out of reach only level-sync waits are added: each goes from a lower level to a
   higher one, so the DAG plus every wait keeps the DAG's longest path; and they save memory. */
OT_TEST(level_sync_waits_keep_levels_and_reduce_peak) {
    uint64_t seed;
    uint32_t added = 0, smaller = 0;
    for (seed = 1; seed <= 60; ++seed) {
        tgraph t;
        opara__plan_desc d;
        opara__plan *a = NULL, *b = NULL;
        uint32_t* level;
        uint32_t v, k;
        REQUIRE(tg_random(&t, 200, 16, seed));
        memset(&d, 0, sizeof d);
        d.memory_sync_window = 1u << 30;
        d.no_level_sync = 1;
        REQUIRE(tg_plan(&t, NULL, &d, &a) == OPARA_OK);
        d.no_level_sync = 0;
        REQUIRE(tg_plan(&t, NULL, &d, &b) == OPARA_OK);
        CHECK_EQ(a->stats.n_memory_waits, 0);
        added += b->stats.n_memory_waits > 0;
        smaller += b->arena_bytes < a->arena_bytes;
        level = (uint32_t*)malloc((size_t)t.g.n_nodes * sizeof(uint32_t));
        REQUIRE(level != NULL);
        dag_levels(&t.g, level);
        for (v = 0; v < b->n_nodes; ++v)
            for (k = b->wait_start[v]; k < b->wait_start[v + 1]; ++k) {
                if (level[b->wait_nodes[k]] >= level[v]) OT_LOG("seed %u: node %u waits on %u", (unsigned)seed, v, b->wait_nodes[k]);
                CHECK(level[b->wait_nodes[k]] < level[v]);
            }
        free(level);
        opara__plan_free(t.rt, a);
        opara__plan_free(t.rt, b);
        tg_free(&t);
    }
    CHECK(added > 30);
    CHECK(smaller > 30);
}

/* ---- scratch shared between nodes that never overlap (the CUDA backend's library workspaces) ---- */

typedef struct share_totals {
    uint64_t shared, per_lane, nodes;
} share_totals;

/* Random needs on about a third of the nodes; opara__plan_share_scratch's slots must hold only
   nodes that the brute-force happens-before orders pairwise, each slot's size is its largest
   need, and a sequential plan needs one slot. Returns 0 after a failed CHECK. */
static int check_share(opara_test* T, const tgraph* t, const opara__plan* p, uint64_t seed, const char* name, int every,
                       share_totals* tot) {
    uint32_t n = p->n_nodes, i, j, n_slots = 0, *slot = (uint32_t*)calloc(n + 1, sizeof(uint32_t));
    uint64_t *need = (uint64_t*)calloc(n + 1, sizeof(uint64_t)), *size = (uint64_t*)calloc(n + 1, sizeof(uint64_t));
    uint64_t *biggest = (uint64_t*)calloc(n + 1, sizeof(uint64_t)), *lane_max = (uint64_t*)calloc(p->n_lanes + 1, sizeof(uint64_t));
    size_t words = 0;
    uint64_t* hb = tg_hb_build(p, &words);
    trng r;
    int ok = slot && need && size && biggest && lane_max && hb;
    CHECK(ok);
    r.s = seed * 31 + 7;
    for (i = 0; ok && i < n; ++i)
        if (every || trng_below(&r, 3) == 0) need[i] = 256 + (uint64_t)trng_below(&r, 1u << 20);
    if (ok) CHECK_EQ(OPARA_OK, opara__plan_share_scratch(&t->g, p, need, slot, size, &n_slots));
    for (i = 0; ok && i < n; ++i) {
        if (!need[i]) {
            if (slot[i] != UINT32_MAX) ok = 0, OT_LOG("%s seed %llu: node %u needs nothing but has slot %u", name, (unsigned long long)seed, i, slot[i]);
            continue;
        }
        if (slot[i] >= n_slots) { ok = 0; OT_LOG("%s: node %u slot %u of %u", name, i, slot[i], n_slots); break; }
        if (need[i] > biggest[slot[i]]) biggest[slot[i]] = need[i];
        if (need[i] > lane_max[p->lane[i]]) lane_max[p->lane[i]] = need[i];
        tot->nodes++;
        for (j = 0; j < i; ++j) /* the proof: every two nodes of one slot are ordered */
            if (need[j] && slot[j] == slot[i] && !((hb[(size_t)i * words + j / 64] >> (j % 64)) & 1u) &&
                !((hb[(size_t)j * words + i / 64] >> (i % 64)) & 1u)) {
                ok = 0;
                OT_LOG("%s seed %llu: nodes %u and %u share slot %u but may overlap", name, (unsigned long long)seed, j, i, slot[i]);
                break;
            }
    }
    for (i = 0; ok && i < n_slots; ++i) {
        if (size[i] != biggest[i]) ok = 0, OT_LOG("%s: slot %u has %llu bytes, its largest need is %llu", name, i,
                                                  (unsigned long long)size[i], (unsigned long long)biggest[i]);
        tot->shared += size[i];
    }
    for (i = 0; i < p->n_lanes; ++i) tot->per_lane += lane_max[i];
    if (ok && p->n_streams == 1) CHECK(n_slots <= 1);
    CHECK(ok);
    free(slot), free(need), free(size), free(biggest), free(lane_max), free(hb);
    return ok;
}

OT_TEST(scratch_slots_share_only_between_ordered_nodes) {
    share_totals tot;
    uint64_t seed;
    memset(&tot, 0, sizeof tot);
    for (seed = 1; seed <= 120; ++seed) {
        trng r;
        tgraph t;
        opara__op_desc* descs;
        uint32_t n, width, k;
        r.s = seed;
        n = 2 + trng_below(&r, seed % 10 == 0 ? 400 : 80);
        width = 1 + trng_below(&r, 32);
        if (!tg_random(&t, n, width, seed)) {
            CHECK(!"random graph");
            return;
        }
        descs = (opara__op_desc*)calloc(n + 1, sizeof(opara__op_desc));
        random_descs(descs, n, seed);
        for (k = 0; k < N_VARIANTS; ++k) {
            opara__plan_desc d;
            opara__plan* p = NULL;
            int ok;
            plan_desc_of(&variants[k], &d);
            if (tg_plan(&t, descs, &d, &p) != OPARA_OK) continue; /* planning is tested above */
            ok = check_share(T, &t, p, seed, variants[k].name, 0, &tot);
            opara__plan_free(t.rt, p);
            if (!ok) break;
        }
        free(descs);
        tg_free(&t);
    }
    printf("scratch sharing: %llu nodes with a need; %.1f MiB in shared slots vs %.1f MiB with one block per lane\n",
           (unsigned long long)tot.nodes, (double)tot.shared / 1048576.0, (double)tot.per_lane / 1048576.0);
    { /* more than 8192 nodes with a need: one slot per lane (still pairwise ordered) */
        tgraph t;
        opara__plan_desc d;
        opara__plan* p = NULL;
        share_totals big;
        memset(&big, 0, sizeof big);
        if (!tg_random(&t, 9000, 16, 99)) {
            CHECK(!"random graph");
            return;
        }
        plan_desc_of(&variants[0], &d);
        CHECK_EQ(OPARA_OK, tg_plan(&t, NULL, &d, &p));
        if (p) check_share(T, &t, p, 99, "9000 nodes", 1, &big);
        if (p) CHECK_EQ(big.shared, big.per_lane);
        opara__plan_free(t.rt, p);
        tg_free(&t);
    }
}

/* Brute force, independent of the planner's DP and of the graph's successor lists: the longest
   path from node a (the sum of its nodes' times) by trying every path, with the edges found from
   the nodes' inputs and outputs. */
static double longest_path_from(const opara__graph* g, const double* time, uint32_t a) {
    double best = 0.0;
    uint32_t b, i, o;
    for (b = 0; b < g->n_nodes; ++b) {
        int edge = 0;
        for (o = 0; o < g->nodes[a].n_outputs; ++o)
            for (i = 0; i < g->nodes[b].n_inputs; ++i)
                if (g->nodes[b].inputs[i] >= 0 && g->nodes[b].inputs[i] == g->nodes[a].outputs[o]) edge = 1;
        if (edge) {
            double rest = longest_path_from(g, time, b);
            if (rest > best) best = rest;
        }
    }
    return time[a] + best;
}

OT_TEST(priority_is_the_longest_path_to_the_end) {
    uint64_t seed;
    for (seed = 1; seed <= 200; ++seed) {
        tgraph t;
        trng r;
        uint32_t n, i;
        opara__op_desc* descs;
        double* time;
        opara__plan_desc d;
        opara__plan* p = NULL;
        r.s = seed * 7919;
        n = 2 + trng_below(&r, 14);
        REQUIRE(tg_random(&t, n, 1 + trng_below(&r, 5), seed));
        descs = (opara__op_desc*)calloc(n + 1, sizeof(opara__op_desc));
        time = (double*)calloc(n + 1, sizeof(double));
        random_descs(descs, n, seed);
        for (i = 0; i < n; ++i) {
            descs[i].kernel_less = trng_below(&r, 6) == 0; /* a view: costs nothing */
            descs[i].time_ms = 0.25 * (double)(1 + trng_below(&r, 40));
            time[i] = descs[i].kernel_less ? 0.0 : descs[i].time_ms;
        }
        memset(&d, 0, sizeof d);
        REQUIRE(tg_plan(&t, descs, &d, &p) == OPARA_OK);
        for (i = 0; i < n; ++i) {
            double want = longest_path_from(&t.g, time, i);
            if (p->priority[i] != want) OT_LOG("seed %llu node %u: %g, brute force %g", (unsigned long long)seed, i, p->priority[i], want);
            CHECK(p->priority[i] == want); /* quarter multiples: the sums are exact */
        }
        opara__plan_free(t.rt, p);
        p = NULL;
        REQUIRE(tg_plan(&t, NULL, &d, &p) == OPARA_OK); /* without descriptors: the longest path in nodes */
        for (i = 0; i < n; ++i) time[i] = 1.0;
        for (i = 0; i < n; ++i) CHECK(p->priority[i] == longest_path_from(&t.g, time, i));
        opara__plan_free(t.rt, p);
        free(descs);
        free(time);
        tg_free(&t);
    }
}

static const opara_test_case tests[] = {
    OT_CASE(scratch_slots_share_only_between_ordered_nodes),
    OT_CASE(random_dags_every_strategy_verifies),
    OT_CASE(large_random_dags_verify),
    OT_CASE(removed_wait_is_caught),
    OT_CASE(aliased_buffer_is_caught),
    OT_CASE(cross_stream_reuse_is_caught),
    OT_CASE(bad_order_and_streams_are_caught),
    OT_CASE(overlapping_streams_on_one_lane_are_caught),
    OT_CASE(concat_block_taken_by_one_producer_is_safe_for_the_others),
    OT_CASE(concat_block_previous_occupants_survive_fact_compaction),
    OT_CASE(expected_times_let_blocks_move_across_streams_for_free),
    OT_CASE(plans_are_deterministic),
    OT_CASE(memory_sync_waits_reduce_peak_and_verify),
    OT_CASE(level_sync_waits_keep_levels_and_reduce_peak),
    OT_CASE(priority_is_the_longest_path_to_the_end),
};

int main(int argc, char** argv) { return opara_test_main(argc, argv, tests, OT_COUNT(tests)); }
