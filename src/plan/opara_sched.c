/* Strategies: launch orders (Opara Alg. 2, topological, DFS, BFS), stream allocation (Opara Alg. 1,
   sequential, wavefront, Nimble) and the plan object that ties them to the sync and memory plans.
   Everything is O(V + E) except Nimble (O(V^2/64) bitsets plus matchings, as in the original). */
#include "opara_sched.h"
#include "../model/opara_model.h"

#include <math.h>

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

/* ---- resource demand ------------------------------------------------------------------------- */

static double opara__ratio(double part, double whole) { return whole > 0 ? part / whole : 0.0; }

OPARA__PRIVATE double opara__op_demand(const opara__op_desc* d, const opara__device* dev, opara__metric metric) {
    double threads, regs, smem;
    if (!d || !d->has_info || d->kernel_less) return HUGE_VAL;
    if (!dev) dev = opara__device_default();
    if (metric == OPARA__METRIC_TIME) return d->time_ms;
    if (metric != OPARA__METRIC_DOMINANT) return opara__ratio(d->smem_per_block, dev->max_smem_per_block);
    threads = opara__ratio(d->block_threads, dev->max_threads_per_sm);
    regs = opara__ratio((double)d->block_threads * d->regs_per_thread, dev->max_regs_per_sm);
    smem = opara__ratio(d->smem_per_block, dev->max_smem_per_sm);
    return OPARA__MAX(threads, OPARA__MAX(regs, smem));
}

/* ---- launch orders --------------------------------------------------------------------------- */

static void opara__indegrees(const opara__graph* g, uint32_t* indeg) {
    uint32_t n;
    for (n = 0; n < g->n_nodes; ++n) indeg[n] = g->pred_start[n + 1] - g->pred_start[n];
}

/* Kahn with a FIFO queue: sources in index order, successors in list order. */
static void opara__order_bfs(const opara__graph* g, uint32_t* indeg, uint32_t* order) {
    uint32_t n, k, head = 0, tail = 0;
    opara__indegrees(g, indeg);
    for (n = 0; n < g->n_nodes; ++n)
        if (!indeg[n]) order[tail++] = n;
    while (head < tail) {
        uint32_t u = order[head++];
        for (k = g->succ_start[u]; k < g->succ_start[u + 1]; ++k)
            if (--indeg[g->succs[k]] == 0) order[tail++] = g->succs[k];
    }
}

/* Kahn with a LIFO stack: after an op, its first successor that became ready runs next, so each
   branch is followed to its end before the next one starts (eager PyTorch's program order). */
static void opara__order_dfs(const opara__graph* g, uint32_t* indeg, uint32_t* stack, uint32_t* order) {
    uint32_t n, k, top = 0, emitted = 0;
    opara__indegrees(g, indeg);
    for (n = g->n_nodes; n-- > 0;)
        if (!indeg[n]) stack[top++] = n;
    while (top) {
        uint32_t u = stack[--top];
        order[emitted++] = u;
        for (k = g->succ_start[u + 1]; k-- > g->succ_start[u];)
            if (--indeg[g->succs[k]] == 0) stack[top++] = g->succs[k];
    }
}

/* Alg. 2's ready lists: a binary heap on (demand, ready sequence), which picks exactly what the
   reference's linear scan picks (least demand, earliest ready on ties, no-info ops last). */
typedef struct opara__ready {
    double key;
    uint32_t seq, node;
} opara__ready;

typedef struct opara__ready_heap {
    opara__ready* items;
    uint32_t size;
} opara__ready_heap;

static int opara__ready_less(const opara__ready* a, const opara__ready* b) {
    return a->key < b->key || (a->key == b->key && a->seq < b->seq);
}

static void opara__ready_push(opara__ready_heap* h, opara__ready x) {
    uint32_t i = h->size++;
    while (i > 0 && opara__ready_less(&x, &h->items[(i - 1) / 2])) {
        h->items[i] = h->items[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h->items[i] = x;
}

/* Removes the item at index i (0: the least) and returns its node. */
static uint32_t opara__ready_remove(opara__ready_heap* h, uint32_t i) {
    uint32_t top = h->items[i].node;
    opara__ready x = h->items[--h->size];
    if (i == h->size) return top;
    while (i > 0 && opara__ready_less(&x, &h->items[(i - 1) / 2])) {
        h->items[i] = h->items[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= h->size) break;
        if (c + 1 < h->size && opara__ready_less(&h->items[c + 1], &h->items[c])) ++c;
        if (!opara__ready_less(&h->items[c], &x)) break;
        h->items[i] = h->items[c];
        i = c;
    }
    h->items[i] = x;
    return top;
}

typedef struct opara__alg2 {
    const opara__graph* g;
    const opara__op_desc* descs;
    const opara__device* dev;
    opara__metric metric;
    opara__ready_heap lists[2]; /* indexed by opara__op_class */
    uint32_t seq;
    opara__order_budget* budget; /* NULL: unbounded */
} opara__alg2;

static void opara__alg2_make_ready(opara__alg2* a, uint32_t node) {
    opara__ready r;
    const opara__op_desc* d = a->descs ? &a->descs[node] : NULL;
    int cls = d && d->op_class == OPARA__CLASS_MEMORY ? 1 : 0;
    r.key = opara__op_demand(d, a->dev, a->metric);
    r.seq = a->seq++;
    r.node = node;
    opara__ready_push(&a->lists[cls], r);
}

/* Which list to take from. PARITY: a flag that starts true and toggles at the start of every
   iteration; false takes the compute list, true the memory list, a lone non-empty list is taken
   regardless (the flag still toggles). LAST_PICK: the list opposite the last one picked. */
static int opara__alg2_choose(const opara__alg2* a, opara__alternation mode, int* state) {
    int mem_ok = a->lists[OPARA__CLASS_MEMORY].size > 0, comp_ok = a->lists[OPARA__CLASS_COMPUTE].size > 0;
    int want;
    if (mode == OPARA__ALT_LAST_PICK) {
        want = *state; /* state: the list to prefer now */
    } else {
        *state = !*state;
        want = *state ? OPARA__CLASS_MEMORY : OPARA__CLASS_COMPUTE;
    }
    if (want == OPARA__CLASS_MEMORY && !mem_ok) want = OPARA__CLASS_COMPUTE;
    if (want == OPARA__CLASS_COMPUTE && !comp_ok) want = OPARA__CLASS_MEMORY;
    return want;
}

/* A ready op's effect on the launch-order live bytes, for the budgeted pick. */
typedef struct opara__alg2_cost {
    int fits;       /* live + alloc stays within the budget */
    int64_t net;    /* alloc - freed: the change of live bytes once it has run */
    uint64_t alloc;
} opara__alg2_cost;

static opara__alg2_cost opara__alg2_cost_of(opara__alg2* a, uint32_t node) {
    opara__alg2_cost c;
    uint64_t freed;
    opara__live_cost(a->budget->live, node, &c.alloc, &freed);
    c.fits = a->budget->live->live + c.alloc <= a->budget->limit;
    c.net = (int64_t)c.alloc - (int64_t)freed;
    return c;
}

/* Under a memory budget. The ready op Alg. 2 picks (list `which`, index 0) when launching it keeps
   the live bytes within the budget; else, among the ready ops that fit, the least demand of the
   preferred list, then of the other list (the alternation and least-demand-first rules, restricted
   to what fits); when none fits, the op that leaves the fewest bytes live, then the one that
   allocates least, then the one ready last (it continues a branch just advanced instead of
   opening another, depth first): finishing branches frees their inputs, so the schedule narrows
   to about as many branches as the budget holds. Linear in the ready ops, only while the budget
   binds. */
static void opara__alg2_budget_pick(opara__alg2* a, int* which, uint32_t* index) {
    int best_list[2] = {-1, -1}, l, other = -1;
    uint32_t best_at[2] = {0, 0}, i, other_at = 0;
    opara__alg2_cost best_other;
    memset(&best_other, 0, sizeof best_other);
    *index = 0;
    if (opara__alg2_cost_of(a, a->lists[*which].items[0].node).fits) return;
    for (l = 0; l < 2; ++l)
        for (i = 0; i < a->lists[l].size; ++i) {
            const opara__ready* r = &a->lists[l].items[i];
            opara__alg2_cost c = opara__alg2_cost_of(a, r->node);
            if (c.fits) {
                if (best_list[l] < 0 || opara__ready_less(r, &a->lists[l].items[best_at[l]])) best_list[l] = l, best_at[l] = i;
            } else if (other < 0 || c.net < best_other.net || (c.net == best_other.net && (c.alloc < best_other.alloc ||
                       (c.alloc == best_other.alloc && r->seq > a->lists[other].items[other_at].seq)))) {
                other = l, other_at = i, best_other = c;
            }
        }
    if (best_list[*which] >= 0) *index = best_at[*which];
    else if (best_list[!*which] >= 0) *which = !*which, *index = best_at[*which];
    else *which = other, *index = other_at;
}

static void opara__order_alg2(opara__alg2* a, opara__alternation mode, uint32_t* indeg, uint32_t* order) {
    const opara__graph* g = a->g;
    uint32_t n, k, emitted = 0;
    int state = mode == OPARA__ALT_LAST_PICK ? OPARA__CLASS_COMPUTE : 1;
    opara__indegrees(g, indeg);
    for (n = 0; n < g->n_nodes; ++n)
        if (!indeg[n]) opara__alg2_make_ready(a, n);
    while (a->lists[0].size || a->lists[1].size) {
        int which = opara__alg2_choose(a, mode, &state);
        uint32_t at = 0, u;
        if (a->budget) opara__alg2_budget_pick(a, &which, &at);
        if (mode == OPARA__ALT_LAST_PICK) state = which == OPARA__CLASS_MEMORY ? OPARA__CLASS_COMPUTE : OPARA__CLASS_MEMORY;
        u = opara__ready_remove(&a->lists[which], at);
        if (a->budget) opara__live_launch(a->budget->live, u);
        order[emitted++] = u;
        for (k = g->succ_start[u]; k < g->succ_start[u + 1]; ++k)
            if (--indeg[g->succs[k]] == 0) opara__alg2_make_ready(a, g->succs[k]);
    }
}

static opara_launch_order opara__resolve_order(const opara__plan_desc* d) {
    if (d->launch_order != OPARA_LAUNCH_DEFAULT) return d->launch_order;
    return d->strategy == OPARA_STRATEGY_OPARA ? OPARA_LAUNCH_ALG2 : OPARA_LAUNCH_TOPO;
}

OPARA__PRIVATE opara_result opara__sched_order(const opara__graph* g, const opara__op_desc* descs,
                                              const opara__device* dev, const opara__plan_desc* desc,
                                              uint32_t* order) {
    return opara__sched_order_budgeted(g, descs, dev, desc, NULL, order);
}

OPARA__PRIVATE opara_result opara__sched_order_budgeted(const opara__graph* g, const opara__op_desc* descs,
                                                       const opara__device* dev, const opara__plan_desc* desc,
                                                       opara__order_budget* budget, uint32_t* order) {
    opara_launch_order which = opara__resolve_order(desc);
    uint32_t* scratch;
    if (!g->finalized) return opara__fail(g->rt, OPARA_ERR_INVALID_STATE, "the graph is not finalized");
    if (which == OPARA_LAUNCH_TOPO) {
        if (g->n_nodes) memcpy(order, g->topo, (size_t)g->n_nodes * sizeof(uint32_t));
        return OPARA_OK;
    }
    if ((int)which < 0 || which >= OPARA_LAUNCH_COUNT)
        return opara__fail(g->rt, OPARA_ERR_INVALID_ARGS, "unknown launch order %d", (int)which);
    scratch = (uint32_t*)opara__calloc(g->rt, (size_t)g->n_nodes * 2 + 1, sizeof(uint32_t));
    if (!scratch) return opara__fail(g->rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory ordering %u nodes", g->n_nodes);
    if (which == OPARA_LAUNCH_BFS) {
        opara__order_bfs(g, scratch, order);
    } else if (which == OPARA_LAUNCH_DFS) {
        opara__order_dfs(g, scratch, scratch + g->n_nodes, order);
    } else {
        opara__alg2 a;
        memset(&a, 0, sizeof a);
        a.g = g;
        a.descs = descs;
        a.dev = dev ? dev : opara__device_default();
        a.metric = desc->metric;
        a.budget = budget;
        a.lists[0].items = (opara__ready*)opara__calloc(g->rt, (size_t)g->n_nodes + 1, sizeof(opara__ready));
        a.lists[1].items = (opara__ready*)opara__calloc(g->rt, (size_t)g->n_nodes + 1, sizeof(opara__ready));
        if (a.lists[0].items && a.lists[1].items) opara__order_alg2(&a, desc->alternation, scratch, order);
        opara__free(g->rt, a.lists[0].items);
        opara__free(g->rt, a.lists[1].items);
        if (!a.lists[0].items || !a.lists[1].items) {
            opara__free(g->rt, scratch);
            return opara__fail(g->rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory ordering %u nodes", g->n_nodes);
        }
    }
    opara__free(g->rt, scratch);
    return OPARA_OK;
}

/* ---- Opara Alg. 1 ---------------------------------------------------------------------------- */

typedef struct opara__alg1 {
    const opara__graph* g;
    const opara__plan_desc* desc;
    uint32_t* stream;    /* output */
    uint32_t* position;  /* node -> launch position */
    uint8_t* flag;       /* SYNC flag per node */
    uint32_t* first_succ;/* FIRST_SUCCESSOR: the successor launched first, per node */
    uint32_t* preds;     /* scratch: one node's predecessors in visiting order */
    uint32_t n_streams;
    /* stream cap: tails and bounded clocks */
    uint32_t* tail;      /* per stream: last node */
    uint32_t* tail_seq;  /* per stream: its rank */
    opara__vc_slot* node_clock;   /* [n_nodes * k] clock right after each node */
    opara__vc_slot* stream_clock; /* [cap_streams * k] */
    opara__vc_slot* pred_clock;   /* [k] */
    uint32_t k, cap_streams;
} opara__alg1;

/* Visiting order of v's predecessors; insertion sort (in-degrees are small). */
static uint32_t opara__alg1_preds(opara__alg1* a, uint32_t v) {
    const opara__graph* g = a->g;
    uint32_t n = g->pred_start[v + 1] - g->pred_start[v], i, j;
    opara__pred_order how = a->desc->pred_order;
    memcpy(a->preds, g->preds + g->pred_start[v], (size_t)n * sizeof(uint32_t));
    if (how == OPARA__PRED_INPUT) return n;
    for (i = 1; i < n; ++i) {
        uint32_t x = a->preds[i];
        for (j = i; j > 0; --j) {
            uint32_t y = a->preds[j - 1];
            int before = how == OPARA__PRED_ASC_ID    ? x < y
                         : how == OPARA__PRED_DESC_ID ? x > y
                                                      : (a->stream[x] < a->stream[y] ||
                                                         (a->stream[x] == a->stream[y] && x < y));
            if (!before) break;
            a->preds[j] = y;
        }
        a->preds[j] = x;
    }
    return n;
}

static int opara__alg1_inherit(opara__alg1* a, uint32_t v) {
    uint32_t n = opara__alg1_preds(a, v), i;
    for (i = 0; i < n; ++i) {
        uint32_t p = a->preds[i];
        int ok = a->desc->inherit == OPARA__INHERIT_FIRST_SUCCESSOR ? a->first_succ[p] == v : !a->flag[p];
        if (ok) {
            a->stream[v] = a->stream[p];
            a->flag[p] = 1;
            return 1;
        }
    }
    return 0;
}

/* Clock of what happens-before v through its data predecessors (stream cap only). */
static void opara__alg1_pred_clock(opara__alg1* a, uint32_t v) {
    const opara__graph* g = a->g;
    uint32_t k;
    memset(a->pred_clock, 0, a->k * sizeof(opara__vc_slot));
    for (k = g->pred_start[v]; k < g->pred_start[v + 1]; ++k)
        opara__vc_merge(a->pred_clock, a->node_clock + (size_t)g->preds[k] * a->k, a->k);
}

/* A new stream, or under the cap an idle one (its last op happens-before v), or with a hard cap
   the stream whose last op was launched earliest. */
static uint32_t opara__alg1_new_stream(opara__alg1* a, uint32_t v) {
    uint32_t cap = a->desc->stream_cap, s, best = UINT32_MAX;
    if (!cap || a->n_streams < cap) return a->n_streams++;
    for (s = 0; s < a->n_streams; ++s)
        if (opara__vc_knows(a->pred_clock, a->k, s, a->tail_seq[s])) return s;
    if (!a->desc->stream_cap_hard) return a->n_streams++;
    for (s = 0; s < a->n_streams; ++s)
        if (best == UINT32_MAX || a->position[a->tail[s]] < a->position[a->tail[best]]) best = s;
    (void)v;
    return best;
}

static void opara__alg1_track(opara__alg1* a, uint32_t v) {
    uint32_t s = a->stream[v];
    opara__vc_slot* sc = a->stream_clock + (size_t)s * a->k;
    a->tail[s] = v;
    a->tail_seq[s]++;
    opara__vc_merge(sc, a->pred_clock, a->k);
    opara__vc_set(sc, a->k, s, a->tail_seq[s]);
    memcpy(a->node_clock + (size_t)v * a->k, sc, a->k * sizeof(opara__vc_slot));
}

static void opara__alg1_run(opara__alg1* a, const uint32_t* order) {
    const opara__graph* g = a->g;
    uint32_t i, k;
    int capped = a->desc->stream_cap != 0;
    for (i = 0; i < g->n_nodes; ++i) a->position[order[i]] = i;
    if (a->desc->inherit == OPARA__INHERIT_FIRST_SUCCESSOR)
        for (i = 0; i < g->n_nodes; ++i) {
            uint32_t best = UINT32_MAX;
            for (k = g->succ_start[i]; k < g->succ_start[i + 1]; ++k)
                if (best == UINT32_MAX || a->position[g->succs[k]] < a->position[best]) best = g->succs[k];
            a->first_succ[i] = best;
        }
    for (i = 0; i < g->n_nodes; ++i) {
        uint32_t v = order[i];
        if (capped) opara__alg1_pred_clock(a, v);
        if (!opara__alg1_inherit(a, v)) a->stream[v] = opara__alg1_new_stream(a, v);
        if (capped) opara__alg1_track(a, v);
    }
}

OPARA__PRIVATE opara_result opara__sched_alg1(const opara__graph* g, const uint32_t* order,
                                             const opara__plan_desc* desc, uint32_t* stream, uint32_t* n_streams) {
    opara__alg1 a;
    opara_runtime* rt = g->rt;
    size_t n = (size_t)g->n_nodes + 1;
    int ok;
    memset(&a, 0, sizeof a);
    a.g = g;
    a.desc = desc;
    a.stream = stream;
    a.position = (uint32_t*)opara__calloc(rt, n, sizeof(uint32_t));
    a.flag = (uint8_t*)opara__calloc(rt, n, 1);
    a.first_succ = (uint32_t*)opara__calloc(rt, n, sizeof(uint32_t));
    a.preds = (uint32_t*)opara__calloc(rt, (size_t)g->pred_start[g->n_nodes] + 1, sizeof(uint32_t));
    ok = a.position && a.flag && a.first_succ && a.preds;
    if (ok && desc->stream_cap) {
        a.cap_streams = desc->stream_cap_hard ? desc->stream_cap : g->n_nodes + 1;
        a.k = opara__vc_slots(desc->stream_cap);
        a.tail = (uint32_t*)opara__calloc(rt, (size_t)a.cap_streams + 1, sizeof(uint32_t));
        a.tail_seq = (uint32_t*)opara__calloc(rt, (size_t)a.cap_streams + 1, sizeof(uint32_t));
        a.node_clock = (opara__vc_slot*)opara__calloc(rt, n * a.k, sizeof(opara__vc_slot));
        a.stream_clock = (opara__vc_slot*)opara__calloc(rt, ((size_t)a.cap_streams + 1) * a.k, sizeof(opara__vc_slot));
        a.pred_clock = (opara__vc_slot*)opara__calloc(rt, a.k, sizeof(opara__vc_slot));
        ok = a.tail && a.tail_seq && a.node_clock && a.stream_clock && a.pred_clock;
    }
    if (ok) opara__alg1_run(&a, order);
    opara__free(rt, a.position);
    opara__free(rt, a.flag);
    opara__free(rt, a.first_succ);
    opara__free(rt, a.preds);
    opara__free(rt, a.tail);
    opara__free(rt, a.tail_seq);
    opara__free(rt, a.node_clock);
    opara__free(rt, a.stream_clock);
    opara__free(rt, a.pred_clock);
    if (!ok) return opara__fail(rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory allocating streams for %u nodes", g->n_nodes);
    *n_streams = a.n_streams;
    return OPARA_OK;
}

/* ---- Nimble: transitive reduction, then two maximum matchings (minimum chain cover) ---------- */

#define OPARA__NIMBLE_MAX_NODES 40000u /* the descendant bitsets take V*V/8 bytes */

typedef struct opara__bits {
    uint64_t* w;
    size_t words; /* per row */
} opara__bits;

static int opara__bit(const opara__bits* b, uint32_t row, uint32_t col) {
    return (int)((b->w[(size_t)row * b->words + col / 64] >> (col % 64)) & 1u);
}

static void opara__bit_set(opara__bits* b, uint32_t row, uint32_t col) {
    b->w[(size_t)row * b->words + col / 64] |= (uint64_t)1 << (col % 64);
}

static void opara__bits_or_row(opara__bits* b, uint32_t dst, uint32_t src) {
    size_t i;
    uint64_t* d = b->w + (size_t)dst * b->words;
    const uint64_t* s = b->w + (size_t)src * b->words;
    for (i = 0; i < b->words; ++i) d[i] |= s[i];
}

/* Kuhn's augmenting paths, iteratively. adj: CSR left -> right. match_r[right] = left or UINT32_MAX.
   Returns the matching size. scratch: visit stamps [n_right], stack [2 * n_left], edge cursors [n_left]. */
typedef struct opara__bipartite {
    uint32_t n_left, n_right;
    const uint32_t* start;
    const uint32_t* adj;
    uint32_t* match_l;
    uint32_t* match_r;
    uint32_t* stamp;  /* [n_right] */
    uint32_t* stack;  /* [n_left] left vertices on the path */
    uint32_t* cursor; /* [n_left] */
} opara__bipartite;

static int opara__augment(opara__bipartite* b, uint32_t root, uint32_t round) {
    uint32_t top = 0;
    b->stack[top++] = root;
    b->cursor[root] = b->start[root];
    while (top) {
        uint32_t u = b->stack[top - 1];
        if (b->cursor[u] == b->start[u + 1]) {
            --top;
            continue;
        }
        {
            uint32_t r = b->adj[b->cursor[u]++];
            if (b->stamp[r] == round) continue;
            b->stamp[r] = round;
            if (b->match_r[r] == UINT32_MAX) {
                /* flip the path: stack[i] takes the right vertex stack[i+1] held */
                while (top) {
                    uint32_t l = b->stack[--top];
                    uint32_t prev = b->match_l[l];
                    b->match_l[l] = r;
                    b->match_r[r] = l;
                    r = prev;
                }
                return 1;
            }
            b->stack[top++] = b->match_r[r];
            b->cursor[b->match_r[r]] = b->start[b->match_r[r]];
        }
    }
    return 0;
}

static void opara__max_matching(opara__bipartite* b) {
    uint32_t u;
    for (u = 0; u < b->n_left; ++u) b->match_l[u] = UINT32_MAX;
    for (u = 0; u < b->n_right; ++u) b->match_r[u] = UINT32_MAX, b->stamp[u] = 0;
    for (u = 0; u < b->n_left; ++u) opara__augment(b, u, u + 1);
}

typedef struct opara__nimble {
    const opara__graph* g;
    opara__bits reach;    /* reach[u]: strict descendants of u */
    uint64_t* row;        /* scratch row */
    uint32_t* start;      /* CSR of the reduced graph / chain graph */
    uint32_t* adj;
    uint32_t* match_l, *match_r, *stamp, *stack, *cursor;
    uint32_t* chain;      /* node -> chain */
    uint32_t* chain_head; /* chain -> first node */
    uint32_t* chain_tail; /* chain -> last node */
} opara__nimble;

static void opara__nimble_reach(opara__nimble* m) {
    const opara__graph* g = m->g;
    uint32_t i, k;
    for (i = g->n_nodes; i-- > 0;) {
        uint32_t u = g->topo[i];
        for (k = g->succ_start[u]; k < g->succ_start[u + 1]; ++k) {
            opara__bit_set(&m->reach, u, g->succs[k]);
            opara__bits_or_row(&m->reach, u, g->succs[k]);
        }
    }
}

/* Edge u->c of the transitive reduction iff no other child of u reaches c. */
static uint32_t opara__nimble_reduce(opara__nimble* m) {
    const opara__graph* g = m->g;
    uint32_t u, k, total = 0;
    size_t w, words = m->reach.words;
    for (u = 0; u < g->n_nodes; ++u) {
        memset(m->row, 0, words * sizeof(uint64_t));
        for (k = g->succ_start[u]; k < g->succ_start[u + 1]; ++k) {
            const uint64_t* s = m->reach.w + (size_t)g->succs[k] * words;
            for (w = 0; w < words; ++w) m->row[w] |= s[w];
        }
        m->start[u] = total;
        for (k = g->succ_start[u]; k < g->succ_start[u + 1]; ++k) {
            uint32_t c = g->succs[k];
            if (!((m->row[c / 64] >> (c % 64)) & 1u)) m->adj[total++] = c;
        }
    }
    m->start[g->n_nodes] = total;
    return total;
}

static opara__bipartite opara__nimble_bipartite(opara__nimble* m, uint32_t n) {
    opara__bipartite b;
    b.n_left = b.n_right = n;
    b.start = m->start;
    b.adj = m->adj;
    b.match_l = m->match_l;
    b.match_r = m->match_r;
    b.stamp = m->stamp;
    b.stack = m->stack;
    b.cursor = m->cursor;
    return b;
}

/* Chains from the first matching: a node without a matched predecessor starts one. */
static uint32_t opara__nimble_chains(opara__nimble* m) {
    const opara__graph* g = m->g;
    uint32_t n, chains = 0;
    for (n = 0; n < g->n_nodes; ++n) {
        uint32_t v = g->topo[n], u;
        if (m->match_r[v] != UINT32_MAX) continue;
        m->chain_head[chains] = v;
        for (u = v;; u = m->match_l[u]) {
            m->chain[u] = chains;
            m->chain_tail[chains] = u;
            if (m->match_l[u] == UINT32_MAX) break;
        }
        chains++;
    }
    return chains;
}

/* Chain i precedes chain j when i's tail reaches j's head; a second matching on that (already
   transitive) relation merges chains into streams. Returns 0 when out of memory. */
static int opara__nimble_streams(opara__nimble* m, uint32_t chains, uint32_t* stream, uint32_t* n_streams) {
    const opara__graph* g = m->g;
    uint32_t i, j, streams = 0;
    size_t total = 0;
    opara__bipartite b;
    for (i = 0; i < chains; ++i)
        for (j = 0; j < chains; ++j)
            if (i != j && opara__bit(&m->reach, m->chain_tail[i], m->chain_head[j])) total++;
    opara__free(g->rt, m->adj);
    m->adj = total > UINT32_MAX ? NULL : (uint32_t*)opara__calloc(g->rt, total + 1, sizeof(uint32_t));
    if (!m->adj) return 0;
    total = 0;
    for (i = 0; i < chains; ++i) {
        m->start[i] = (uint32_t)total;
        for (j = 0; j < chains; ++j)
            if (i != j && opara__bit(&m->reach, m->chain_tail[i], m->chain_head[j])) m->adj[total++] = j;
    }
    m->start[chains] = (uint32_t)total;
    b = opara__nimble_bipartite(m, chains);
    opara__max_matching(&b);
    /* group id per chain: follow matched successors from each chain without a matched predecessor */
    for (i = 0; i < chains; ++i) {
        if (m->match_r[i] != UINT32_MAX) continue;
        for (j = i;; j = m->match_l[j]) {
            m->stamp[j] = streams;
            if (m->match_l[j] == UINT32_MAX) break;
        }
        streams++;
    }
    for (i = 0; i < g->n_nodes; ++i) stream[i] = m->stamp[m->chain[i]];
    *n_streams = streams;
    return 1;
}

static opara_result opara__sched_nimble(const opara__graph* g, uint32_t* stream, uint32_t* n_streams) {
    opara__nimble m;
    opara_runtime* rt = g->rt;
    size_t n = (size_t)g->n_nodes + 1, edges = (size_t)g->pred_start[g->n_nodes] + 1;
    int ok;
    if (g->n_nodes > OPARA__NIMBLE_MAX_NODES)
        return opara__fail(rt, OPARA_ERR_LIMIT_EXCEEDED,
                           "nimble: %u nodes exceed %u (its transitive closure needs V*V/8 bytes)", g->n_nodes,
                           OPARA__NIMBLE_MAX_NODES);
    memset(&m, 0, sizeof m);
    m.g = g;
    m.reach.words = (n + 63) / 64;
    m.reach.w = (uint64_t*)opara__calloc(rt, n * m.reach.words, sizeof(uint64_t));
    m.row = (uint64_t*)opara__calloc(rt, m.reach.words, sizeof(uint64_t));
    m.start = (uint32_t*)opara__calloc(rt, n + 1, sizeof(uint32_t));
    m.adj = (uint32_t*)opara__calloc(rt, edges, sizeof(uint32_t));
    m.match_l = (uint32_t*)opara__calloc(rt, n, sizeof(uint32_t));
    m.match_r = (uint32_t*)opara__calloc(rt, n, sizeof(uint32_t));
    m.stamp = (uint32_t*)opara__calloc(rt, n, sizeof(uint32_t));
    m.stack = (uint32_t*)opara__calloc(rt, n, sizeof(uint32_t));
    m.cursor = (uint32_t*)opara__calloc(rt, n, sizeof(uint32_t));
    m.chain = (uint32_t*)opara__calloc(rt, n, sizeof(uint32_t));
    m.chain_head = (uint32_t*)opara__calloc(rt, n, sizeof(uint32_t));
    m.chain_tail = (uint32_t*)opara__calloc(rt, n, sizeof(uint32_t));
    ok = m.reach.w && m.row && m.start && m.adj && m.match_l && m.match_r && m.stamp && m.stack && m.cursor &&
         m.chain && m.chain_head && m.chain_tail;
    if (ok) {
        opara__bipartite b;
        uint32_t chains;
        opara__nimble_reach(&m);
        opara__nimble_reduce(&m);
        b = opara__nimble_bipartite(&m, g->n_nodes);
        opara__max_matching(&b);
        chains = opara__nimble_chains(&m);
        ok = opara__nimble_streams(&m, chains, stream, n_streams);
    }
    opara__free(rt, m.reach.w);
    opara__free(rt, m.row);
    opara__free(rt, m.start);
    opara__free(rt, m.adj);
    opara__free(rt, m.match_l);
    opara__free(rt, m.match_r);
    opara__free(rt, m.stamp);
    opara__free(rt, m.stack);
    opara__free(rt, m.cursor);
    opara__free(rt, m.chain);
    opara__free(rt, m.chain_head);
    opara__free(rt, m.chain_tail);
    return ok ? OPARA_OK : opara__fail(rt, OPARA_ERR_OUT_OF_MEMORY, "nimble: out of memory for %u nodes", g->n_nodes);
}

/* ---- wavefront: levels with barriers --------------------------------------------------------- */

/* Reorders `order` by level (stable), puts the i-th op of each level on stream i, and makes every
   op of level k+1 depend on every op of level k (the barrier, expressed as ordinary waits so the
   backends need nothing special; the sync plan drops the waits a barrier makes redundant). */
static opara_result opara__sched_wavefront(const opara__graph* g, opara__plan* p, uint32_t** extra_start,
                                           uint32_t** extra) {
    uint32_t n = g->n_nodes, i, v, max_level = 0, streams = 0;
    uint32_t* start = NULL; /* start[l]: first index of level l in `sorted` */
    uint32_t* fill = NULL;
    uint32_t* sorted = NULL;
    size_t total = 0;
    for (i = 0; i < n; ++i) max_level = OPARA__MAX(max_level, p->level[i]);
    start = (uint32_t*)opara__calloc(g->rt, (size_t)max_level + 3, sizeof(uint32_t));
    fill = (uint32_t*)opara__calloc(g->rt, (size_t)max_level + 3, sizeof(uint32_t));
    sorted = (uint32_t*)opara__calloc(g->rt, (size_t)n + 1, sizeof(uint32_t));
    *extra_start = (uint32_t*)opara__calloc(g->rt, (size_t)n + 1, sizeof(uint32_t));
    if (!start || !fill || !sorted || !*extra_start) goto oom;
    for (i = 0; i < n; ++i) start[p->level[i] + 1]++;
    for (i = 0; i < n; ++i)
        if (p->level[i] > 0) total += start[p->level[i]]; /* start[l] still holds the size of level l-1 */
    for (i = 1; i <= max_level + 1; ++i) {
        streams = OPARA__MAX(streams, start[i]);
        start[i] += start[i - 1];
    }
    *extra = (uint32_t*)opara__calloc(g->rt, total + 1, sizeof(uint32_t));
    if (!*extra) goto oom;
    for (i = 0; i < n; ++i) {
        uint32_t u = p->order[i], lv = p->level[u];
        sorted[start[lv] + fill[lv]] = u;
        p->stream[u] = fill[lv]++;
    }
    memcpy(p->order, sorted, (size_t)n * sizeof(uint32_t));
    total = 0;
    for (v = 0; v < n; ++v) {
        uint32_t lv = p->level[v], k;
        (*extra_start)[v] = (uint32_t)total;
        if (lv > 0)
            for (k = start[lv - 1]; k < start[lv]; ++k) (*extra)[total++] = sorted[k];
    }
    (*extra_start)[n] = (uint32_t)total;
    p->n_streams = streams;
    opara__free(g->rt, start);
    opara__free(g->rt, fill);
    opara__free(g->rt, sorted);
    return OPARA_OK;
oom:
    opara__free(g->rt, start);
    opara__free(g->rt, fill);
    opara__free(g->rt, sorted);
    opara__free(g->rt, *extra_start);
    *extra_start = NULL;
    return opara__fail(g->rt, OPARA_ERR_OUT_OF_MEMORY, "wavefront: out of memory for %u nodes", n);
}

/* ---- the plan -------------------------------------------------------------------------------- */

static void opara__resolve_desc(opara__plan_desc* d, const opara__plan_desc* in) {
    if (in) *d = *in;
    else memset(d, 0, sizeof *d);
    if (d->metric == OPARA__METRIC_DEFAULT) d->metric = OPARA__METRIC_SMEM_FRAC;
    if (d->alternation == OPARA__ALT_DEFAULT) d->alternation = OPARA__ALT_PARITY;
    if (d->pred_order == OPARA__PRED_DEFAULT) d->pred_order = OPARA__PRED_INPUT;
    if (d->inherit == OPARA__INHERIT_DEFAULT) d->inherit = OPARA__INHERIT_FLAG;
    if (d->alignment == 0) d->alignment = 256;
    d->launch_order = opara__resolve_order(d);
}

static opara_result opara__check_desc(const opara__graph* g, const opara__plan_desc* d) {
    if ((int)d->strategy < 0 || d->strategy >= OPARA_STRATEGY_COUNT)
        return opara__fail(g->rt, OPARA_ERR_INVALID_ARGS, "unknown strategy %d", (int)d->strategy);
    if ((int)d->launch_order < 0 || d->launch_order >= OPARA_LAUNCH_COUNT)
        return opara__fail(g->rt, OPARA_ERR_INVALID_ARGS, "unknown launch order %d", (int)d->launch_order);
    if (d->metric > OPARA__METRIC_TIME || d->alternation > OPARA__ALT_LAST_PICK ||
        d->pred_order > OPARA__PRED_ASC_STREAM || d->inherit > OPARA__INHERIT_FIRST_SUCCESSOR)
        return opara__fail(g->rt, OPARA_ERR_INVALID_ARGS, "a plan knob is out of range");
    if (!(d->memory_budget >= 0) || d->memory_budget > 1e6)
        return opara__fail(g->rt, OPARA_ERR_INVALID_ARGS, "memory budget %g is not a ratio in [0, 1e6]", d->memory_budget);
    if (!opara__is_pow2(d->alignment) || d->alignment > (1u << 20))
        return opara__fail(g->rt, OPARA_ERR_INVALID_ARGS, "alignment %u is not a power of two <= 1 MiB", d->alignment);
    if (d->concat_align && (!opara__is_pow2(d->concat_align) || d->concat_align > d->alignment))
        return opara__fail(g->rt, OPARA_ERR_INVALID_ARGS, "concat_align %u is not a power of two <= the alignment %u",
                           d->concat_align, d->alignment);
    if (!g->finalized) return opara__fail(g->rt, OPARA_ERR_INVALID_STATE, "the graph is not finalized");
    return OPARA_OK;
}

OPARA__PRIVATE void opara__plan_free(opara_runtime* rt, opara__plan* p) {
    if (!p) return;
    opara__free(rt, p->order);
    opara__free(rt, p->position);
    opara__free(rt, p->stream);
    opara__free(rt, p->stream_seq);
    opara__free(rt, p->lane);
    opara__free(rt, p->lane_seq);
    opara__free(rt, p->level);
    opara__free(rt, p->priority);
    opara__free(rt, p->records_event);
    opara__free(rt, p->wait_start);
    opara__free(rt, p->wait_nodes);
    opara__free(rt, p->stream_fork);
    opara__free(rt, p->stream_join);
    opara__free(rt, p->stream_first);
    opara__free(rt, p->stream_last);
    opara__free(rt, p->stream_lane);
    opara__free(rt, p->lane_fork);
    opara__free(rt, p->lane_join);
    opara__free(rt, p->storage);
    opara__free(rt, p->offset);
    opara__free(rt, p->alias_root);
    opara__free(rt, p->alias_offset);
    opara__free(rt, p->alias_kind);
    opara__free(rt, p->value_bytes);
    opara__free(rt, p);
}

static opara_result opara__plan_alloc(const opara__graph* g, opara__plan* p) {
    opara_runtime* rt = g->rt;
    size_t n = (size_t)g->n_nodes + 1, v = (size_t)g->n_values + 1;
    p->n_nodes = g->n_nodes;
    p->n_values = g->n_values;
    p->order = (uint32_t*)opara__calloc(rt, n, sizeof(uint32_t));
    p->position = (uint32_t*)opara__calloc(rt, n, sizeof(uint32_t));
    p->stream = (uint32_t*)opara__calloc(rt, n, sizeof(uint32_t));
    p->stream_seq = (uint32_t*)opara__calloc(rt, n, sizeof(uint32_t));
    p->lane = (uint32_t*)opara__calloc(rt, n, sizeof(uint32_t));
    p->lane_seq = (uint32_t*)opara__calloc(rt, n, sizeof(uint32_t));
    p->level = (uint32_t*)opara__calloc(rt, n, sizeof(uint32_t));
    p->priority = (double*)opara__calloc(rt, n, sizeof(double));
    p->records_event = (uint8_t*)opara__calloc(rt, n, 1);
    p->wait_start = (uint32_t*)opara__calloc(rt, n + 1, sizeof(uint32_t));
    p->storage = (uint8_t*)opara__calloc(rt, v, 1);
    p->offset = (uint64_t*)opara__calloc(rt, v, sizeof(uint64_t));
    p->alias_root = (int32_t*)opara__calloc(rt, v, sizeof(int32_t));
    p->alias_offset = (uint64_t*)opara__calloc(rt, v, sizeof(uint64_t));
    p->alias_kind = (uint8_t*)opara__calloc(rt, v, 1);
    p->value_bytes = (uint64_t*)opara__calloc(rt, v, sizeof(uint64_t));
    if (p->order && p->position && p->stream && p->stream_seq && p->lane && p->lane_seq && p->level && p->priority && p->records_event && p->wait_start &&
        p->storage && p->offset && p->alias_root && p->alias_offset && p->alias_kind && p->value_bytes)
        return OPARA_OK;
    return opara__fail(rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory for the plan of %u nodes", g->n_nodes);
}

/* Over the topological order backwards: a node's estimated time plus the largest priority of its
   successors. Kernel-less views cost nothing. */
static void opara__compute_priority(const opara__graph* g, const opara__op_desc* descs, double* priority) {
    uint32_t i, k;
    for (i = g->n_nodes; i-- > 0;) {
        uint32_t v = g->topo[i];
        double tail = 0.0, own = !descs ? 1.0 : descs[v].kernel_less ? 0.0 : descs[v].time_ms;
        for (k = g->succ_start[v]; k < g->succ_start[v + 1]; ++k) tail = OPARA__MAX(tail, priority[g->succs[k]]);
        priority[v] = own + tail;
    }
}

static void opara__compute_levels(const opara__graph* g, uint32_t* level) {
    uint32_t i, k;
    for (i = 0; i < g->n_nodes; ++i) {
        uint32_t v = g->topo[i], lv = 0;
        for (k = g->pred_start[v]; k < g->pred_start[v + 1]; ++k) lv = OPARA__MAX(lv, level[g->preds[k]] + 1);
        level[v] = lv;
    }
}

/* Renumbers streams by first use in launch order (stream 0 = the origin, the stream of order[0])
   and fills position, stream_seq, stream_first/last. */
static opara_result opara__finish_streams(const opara__graph* g, opara__plan* p, uint32_t raw_streams) {
    uint32_t* remap = (uint32_t*)opara__calloc(g->rt, (size_t)raw_streams + 1, sizeof(uint32_t));
    uint32_t* count;
    uint32_t i, used = 0;
    if (!remap) return opara__fail(g->rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory numbering streams");
    for (i = 0; i < raw_streams; ++i) remap[i] = UINT32_MAX;
    for (i = 0; i < p->n_nodes; ++i) {
        uint32_t v = p->order[i];
        p->position[v] = i;
        if (remap[p->stream[v]] == UINT32_MAX) remap[p->stream[v]] = used++;
        p->stream[v] = remap[p->stream[v]];
    }
    opara__free(g->rt, remap);
    p->n_streams = used;
    p->stream_fork = (uint8_t*)opara__calloc(g->rt, (size_t)used + 1, 1);
    p->stream_join = (uint8_t*)opara__calloc(g->rt, (size_t)used + 1, 1);
    p->stream_first = (uint32_t*)opara__calloc(g->rt, (size_t)used + 1, sizeof(uint32_t));
    p->stream_last = (uint32_t*)opara__calloc(g->rt, (size_t)used + 1, sizeof(uint32_t));
    p->stream_lane = (uint32_t*)opara__calloc(g->rt, (size_t)used + 1, sizeof(uint32_t));
    p->lane_fork = (uint8_t*)opara__calloc(g->rt, (size_t)used + 1, 1); /* there are at most as many lanes as streams */
    p->lane_join = (uint8_t*)opara__calloc(g->rt, (size_t)used + 1, 1);
    count = (uint32_t*)opara__calloc(g->rt, (size_t)used + 1, sizeof(uint32_t));
    if (!p->stream_fork || !p->stream_join || !p->stream_first || !p->stream_last || !p->stream_lane || !p->lane_fork ||
        !p->lane_join || !count) {
        opara__free(g->rt, count);
        return opara__fail(g->rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory numbering streams");
    }
    for (i = 0; i < p->n_nodes; ++i) {
        uint32_t v = p->order[i], s = p->stream[v];
        if (!count[s]) p->stream_first[s] = v;
        p->stream_seq[v] = ++count[s];
        p->stream_last[s] = v;
    }
    opara__free(g->rt, count);
    p->stats.n_streams = used;
    return OPARA_OK;
}

static opara_result opara__assign_streams(const opara__graph* g, opara__plan* p, uint32_t** extra_start,
                                          uint32_t** extra) {
    uint32_t raw = 0, i;
    opara_result r = OPARA_OK;
    switch (p->desc.strategy) {
    case OPARA_STRATEGY_OPARA:
    case OPARA_STRATEGY_OPARA_TOPO: r = opara__sched_alg1(g, p->order, &p->desc, p->stream, &raw); break;
    case OPARA_STRATEGY_SEQUENTIAL:
        for (i = 0; i < g->n_nodes; ++i) p->stream[i] = 0;
        raw = g->n_nodes ? 1 : 0;
        break;
    case OPARA_STRATEGY_NIMBLE: r = opara__sched_nimble(g, p->stream, &raw); break;
    case OPARA_STRATEGY_WAVEFRONT:
        r = opara__sched_wavefront(g, p, extra_start, extra);
        raw = p->n_streams;
        break;
    default: r = opara__fail(g->rt, OPARA_ERR_INVALID_ARGS, "unknown strategy"); break;
    }
    if (r != OPARA_OK) return r;
    return opara__finish_streams(g, p, raw);
}

/* The launch order, under a limit on the bytes live in launch order when live_limit != 0. */
static opara_result opara__plan_order(const opara__graph* g, opara__plan* p, const opara__op_desc* descs,
                                      const opara__device* dev, uint64_t live_limit) {
    opara__live live;
    opara__order_budget budget;
    opara_result r;
    if (!live_limit || opara__resolve_order(&p->desc) != OPARA_LAUNCH_ALG2)
        return opara__sched_order(g, descs, dev, &p->desc, p->order);
    r = opara__live_init(&live, g, p);
    if (r != OPARA_OK) return r;
    budget.live = &live;
    budget.limit = live_limit;
    r = opara__sched_order_budgeted(g, descs, dev, &p->desc, &budget, p->order);
    opara__live_free(g->rt, &live);
    return r;
}

static opara_result opara__plan_build(const opara__graph* g, opara__plan* p, const opara__op_desc* descs,
                                      const opara__device* dev, uint64_t live_limit) {
    uint32_t* extra_start = NULL;
    uint32_t* extra = NULL;
    uint64_t t0 = opara__now_ns(), t1, t2, t3, t4;
    opara_result r = opara__plan_order(g, p, descs, dev, live_limit);
    opara__compute_levels(g, p->level);
    opara__compute_priority(g, descs, p->priority);
    t1 = opara__now_ns();
    if (r == OPARA_OK) r = opara__assign_streams(g, p, &extra_start, &extra);
    t2 = opara__now_ns();
    if (r == OPARA_OK) r = opara__sync_plan(g, p, extra_start, extra);
    opara__free(g->rt, extra_start);
    opara__free(g->rt, extra);
    t3 = opara__now_ns();
    if (r == OPARA_OK) r = opara__memory_plan(g, p);
    t4 = opara__now_ns();
    p->stats.order_ns = t1 - t0;
    p->stats.streams_ns = t2 - t1;
    p->stats.sync_ns = t3 - t2;
    p->stats.memory_ns = t4 - t3;
    p->stats.total_ns = t4 - t0;
    if (r == OPARA_OK && p->desc.verify) {
        r = opara__plan_verify(g, p);
        p->stats.verify_ns = opara__now_ns() - t4;
    }
    return r;
}

/* One plan for resolved knobs d; with a budget, the arena budget and the launch-order live limit. */
static opara_result opara__plan_make(const opara__graph* g, const uint64_t* value_bytes, const opara__op_desc* descs,
                                     const opara__device* dev, const opara__plan_desc* d, uint64_t budget_bytes,
                                     uint64_t live_limit, opara__plan** out) {
    opara__plan* p = (opara__plan*)opara__calloc(g->rt, 1, sizeof(opara__plan));
    opara_result r;
    *out = NULL;
    if (!p) return opara__fail(g->rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory for the plan");
    p->desc = *d;
    r = opara__plan_alloc(g, p);
    if (r == OPARA_OK) {
        memcpy(p->value_bytes, value_bytes, (size_t)g->n_values * sizeof(uint64_t));
        p->stats.budget_bytes = budget_bytes;
        r = opara__plan_build(g, p, descs, dev, live_limit);
    }
    if (r != OPARA_OK) {
        opara__plan_free(g->rt, p);
        return r;
    }
    *out = p;
    return OPARA_OK;
}

/* The sequential plan with the same knobs: its arena and its launch-order live bytes. */
static opara_result opara__plan_reference(const opara__graph* g, const uint64_t* value_bytes, const opara__op_desc* descs,
                                          const opara__device* dev, const opara__plan_desc* d, uint64_t* arena,
                                          uint64_t* live) {
    opara__plan_desc sd = *d;
    opara__plan* seq = NULL;
    opara_result r;
    sd.strategy = OPARA_STRATEGY_SEQUENTIAL;
    sd.launch_order = OPARA_LAUNCH_TOPO;
    sd.memory_budget = 0;
    sd.est_start_us = sd.est_end_us = NULL;
    sd.verify = 0;
    r = opara__plan_make(g, value_bytes, descs, dev, &sd, 0, 0, &seq);
    if (r == OPARA_OK) r = opara__live_peak(g, seq, seq->order, live);
    if (r != OPARA_OK) {
        opara__plan_free(g->rt, seq);
        return r;
    }
    *arena = seq->arena_bytes;
    opara__plan_free(g->rt, seq);
    return OPARA_OK;
}

/* Keeps the one of *best and p with the smaller arena (*best on ties); frees the other. */
static void opara__plan_keep_smaller(opara_runtime* rt, opara__plan** best, opara__plan* p) {
    if (!*best || p->arena_bytes < (*best)->arena_bytes) {
        opara__plan_free(rt, *best);
        *best = p;
    } else {
        opara__plan_free(rt, p);
    }
}

/* Under a memory budget (ratio R). The plan without a budget is kept when its arena fits R x the
   sequential arena (the budget never changes such a plan). Else Alg. 2 keeps the launch-order live
   bytes under R x the sequential order's (the two orders then pack with about the same
   fragmentation) and the memory plan waits rather than grow the arena past the budget. The memory
   plan packs online, so an order whose live bytes fit can still overshoot (NASNet's stem: no
   retired run is long enough for the next big tensor): then plan again with the live limit x 0.9,
   0.8, 0.7. The first plan within the budget is kept (the least restricted order that fits). When
   none fits, the graph's topological order (Alg. 1 streams over it, like OPARA_TOPO) is tried last:
   its arena is set by packing, not by concurrency, where Alg. 2's order fragments the arena (T5,
   BERT: their Alg. 2 orders need no more live bytes than the sequential order, but leave no hole
   long enough for the next big tensor). The smallest arena is kept. Its stats.total_ns covers all
   of this; the phase times are the kept plan's. */
static opara_result opara__plan_budgeted(const opara__graph* g, const uint64_t* value_bytes, const opara__op_desc* descs,
                                         const opara__device* dev, const opara__plan_desc* d, opara__plan** out) {
    static const double scales[] = {1.0, 0.9, 0.8, 0.7};
    uint64_t seq_arena = 0, seq_live = 0, budget, t0 = opara__now_ns();
    opara__plan *free_plan = NULL, *best = NULL, *p = NULL;
    opara__plan_desc unbounded = *d;
    opara_result r;
    uint32_t i;
    unbounded.memory_budget = 0;
    r = opara__plan_make(g, value_bytes, descs, dev, &unbounded, 0, 0, &free_plan);
    if (r == OPARA_OK) r = opara__plan_reference(g, value_bytes, descs, dev, d, &seq_arena, &seq_live);
    if (r != OPARA_OK) goto done;
    budget = (uint64_t)((double)seq_arena * d->memory_budget);
    free_plan->desc = *d;
    free_plan->stats.budget_bytes = budget;
    if (free_plan->arena_bytes <= budget) goto done;
    for (i = 0; i < sizeof scales / sizeof scales[0]; ++i) {
        uint64_t live_limit = (uint64_t)((double)seq_live * d->memory_budget * scales[i]);
        r = opara__plan_make(g, value_bytes, descs, dev, d, budget, live_limit, &p);
        if (r != OPARA_OK) goto done;
        opara__plan_keep_smaller(g->rt, &best, p);
        p = NULL;
        if ((best && best->arena_bytes <= budget) || opara__resolve_order(d) != OPARA_LAUNCH_ALG2) break;
    }
    if (best->arena_bytes > budget && opara__resolve_order(d) == OPARA_LAUNCH_ALG2) {
        opara__plan_desc topo = *d;
        topo.launch_order = OPARA_LAUNCH_TOPO;
        r = opara__plan_make(g, value_bytes, descs, dev, &topo, budget, 0, &p);
        if (r != OPARA_OK) goto done;
        opara__plan_keep_smaller(g->rt, &best, p);
        p = NULL;
    }
    if (best && best->arena_bytes < free_plan->arena_bytes) {
        opara__plan_free(g->rt, free_plan);
        free_plan = best;
        best = NULL;
    }
done:
    opara__plan_free(g->rt, p);
    opara__plan_free(g->rt, best);
    if (r == OPARA_OK) r = opara__live_peak(g, free_plan, free_plan->order, &free_plan->stats.live_bytes);
    if (r != OPARA_OK) {
        opara__plan_free(g->rt, free_plan);
        return r;
    }
    free_plan->stats.total_ns = opara__now_ns() - t0;
    *out = free_plan;
    return OPARA_OK;
}

OPARA__PRIVATE opara_result opara__plan_create(const opara__graph* g, const uint64_t* value_bytes,
                                              const opara__op_desc* descs, const opara__device* dev,
                                              const opara__plan_desc* desc, opara__plan** out) {
    opara__plan_desc d;
    opara_result r;
    *out = NULL;
    if (!g || !value_bytes) return g ? opara__fail(g->rt, OPARA_ERR_INVALID_ARGS, "value sizes are required")
                                     : OPARA_ERR_INVALID_ARGS;
    opara__resolve_desc(&d, desc);
    r = opara__check_desc(g, &d);
    if (r != OPARA_OK) return r;
    if (d.memory_budget > 0) return opara__plan_budgeted(g, value_bytes, descs, dev, &d, out);
    return opara__plan_make(g, value_bytes, descs, dev, &d, 0, 0, out);
}

/* The planner owns the retry: the verifier only proves (and says why a plan fails). */
OPARA__PRIVATE opara_result opara__plan_create_verified(const opara__graph* g, const uint64_t* value_bytes,
                                                       const opara__op_desc* descs, const opara__device* dev,
                                                       const opara__plan_desc* desc, opara__plan** out) {
    opara__plan_desc pd = *desc;
    opara_result r;
    pd.verify = 0;
    r = opara__plan_create(g, value_bytes, descs, dev, &pd, out);
    if (r != OPARA_OK || opara__plan_verify(g, *out) == OPARA_OK) return r;
    opara__log(&g->rt->logger, OPARA_LOG_WARN, OPARA_LOGITEM_PLAN_SUMMARY,
               "the plan failed verification (%s); planning again without in-place Concat inputs",
               opara_runtime_last_error(g->rt));
    opara__plan_free(g->rt, *out);
    *out = NULL;
    pd.no_concat_in_place = 1;
    pd.verify = 1;
    return opara__plan_create(g, value_bytes, descs, dev, &pd, out);
}

OPARA__PRIVATE_TOOL opara_result opara__plan_graph(const opara__graph* g, int64_t batch, const opara__device* dev,
                                             const opara__plan_desc* desc, opara__plan** out,
                                             opara__shape** shapes_out, opara__node_params** params_out,
                                             opara__op_desc** descs_out) {
    opara_runtime* rt = g->rt;
    opara__shape* shapes = (opara__shape*)opara__calloc(rt, (size_t)g->n_values + 1, sizeof(opara__shape));
    opara__node_params* params = (opara__node_params*)opara__calloc(rt, (size_t)g->n_nodes + 1, sizeof *params);
    uint64_t* bytes = (uint64_t*)opara__calloc(rt, (size_t)g->n_values + 1, sizeof(uint64_t));
    opara__op_desc* descs = (opara__op_desc*)opara__calloc(rt, (size_t)g->n_nodes + 1, sizeof(opara__op_desc));
    opara__plan_desc d;
    opara_result r = OPARA_OK;
    *out = NULL;
    if (!shapes || !params || !bytes || !descs) r = opara__fail(rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory planning the graph");
    if (r == OPARA_OK) r = opara__infer_shapes_params(rt, g, batch, shapes, params);
    if (r == OPARA_OK) r = opara__value_bytes_from_shapes(g, shapes, bytes);
    if (r == OPARA_OK) r = opara__describe_ops_resolved(g, shapes, params, dev, descs);
    if (r == OPARA_OK) {
        if (desc) d = *desc;
        else memset(&d, 0, sizeof d);
        d.shapes = shapes;
        d.params = params;
        r = opara__plan_create(g, bytes, descs, dev, &d, out);
    }
    if (*out) { /* not kept alive by the plan */
        (*out)->desc.shapes = NULL;
        (*out)->desc.params = NULL;
    }
    opara__free(rt, bytes);
    if (shapes_out && r == OPARA_OK) *shapes_out = shapes;
    else opara__free(rt, shapes);
    if (params_out && r == OPARA_OK) *params_out = params;
    else opara__free(rt, params);
    if (descs_out && r == OPARA_OK) *descs_out = descs;
    else opara__free(rt, descs);
    return r;
}
