/* The sync plan: an event is recorded only after a node some other stream has to wait for, a
   wait is dropped when the waiting stream's vector clock already covers it (implied by earlier
   waits), and fork/join through the origin stream is added only where no event already orders a
   stream's first op after the fork or its last op before the join. */
#include "opara_sched.h"

/* ---- bounded vector clocks ------------------------------------------------------------------- */

OPARA__PRIVATE uint32_t opara__vc_slots(uint32_t n_streams) {
    uint32_t k = 1;
    while (k < n_streams && k < OPARA__VC_MAX_SLOTS) k *= 2;
    return k;
}

OPARA__PRIVATE void opara__vc_merge(opara__vc_slot* dst, const opara__vc_slot* src, uint32_t k) {
    uint32_t i;
    for (i = 0; i < k; ++i) dst[i] = src[i] > dst[i] ? src[i] : dst[i];
}

OPARA__PRIVATE int opara__vc_knows(const opara__vc_slot* c, uint32_t k, uint32_t stream, uint32_t seq) {
    opara__vc_slot e = c[stream & (k - 1)];
    return (uint32_t)(e >> 32) == stream && (uint32_t)e >= seq && (uint32_t)e;
}

OPARA__PRIVATE void opara__vc_set(opara__vc_slot* c, uint32_t k, uint32_t stream, uint32_t seq) {
    c[stream & (k - 1)] = OPARA__VC_FACT(stream, seq);
}

/* ---- the walk -------------------------------------------------------------------------------- */

OPARA__PRIVATE opara_result opara__vc_walk_init(opara__vc_walk* w, opara_runtime* rt, uint32_t n_nodes,
                                               uint32_t n_streams) {
    uint32_t i;
    memset(w, 0, sizeof *w);
    w->rt = rt;
    w->k = opara__vc_slots(n_streams);
    w->stream_clock = (uint32_t*)opara__calloc(rt, (size_t)n_streams + 1, sizeof(uint32_t));
    w->node_clock = (uint32_t*)opara__calloc(rt, (size_t)n_nodes + 1, sizeof(uint32_t));
    w->refs = (uint32_t*)opara__calloc(rt, (size_t)n_nodes + 1, sizeof(uint32_t));
    if (!w->stream_clock || !w->node_clock || !w->refs) {
        opara__vc_walk_free(w);
        return OPARA_ERR_OUT_OF_MEMORY;
    }
    for (i = 0; i < n_streams; ++i) w->stream_clock[i] = UINT32_MAX;
    for (i = 0; i < n_nodes; ++i) w->node_clock[i] = UINT32_MAX;
    return OPARA_OK;
}

OPARA__PRIVATE void opara__vc_walk_free(opara__vc_walk* w) {
    opara__free(w->rt, w->pool);
    opara__free(w->rt, w->free_list);
    opara__free(w->rt, w->stream_clock);
    opara__free(w->rt, w->node_clock);
    opara__free(w->rt, w->refs);
    memset(w, 0, sizeof *w);
}

static uint32_t opara__vc_walk_new(opara__vc_walk* w) {
    uint32_t id;
    if (w->n_free) {
        id = w->free_list[--w->n_free];
    } else {
        size_t cap_slots = w->pool_cap * w->k;
        if (w->pool_used == w->pool_cap) {
            if (opara__grow(w->rt, (void**)&w->pool, &cap_slots, ((size_t)w->pool_used + 1) * w->k,
                            sizeof(opara__vc_slot)) != OPARA_OK)
                return UINT32_MAX;
            w->pool_cap = cap_slots / w->k;
        }
        id = w->pool_used++;
    }
    memset(w->pool + (size_t)id * w->k, 0, w->k * sizeof(opara__vc_slot));
    return id;
}

static void opara__vc_walk_release(opara__vc_walk* w, uint32_t id) {
    if (w->n_free == w->free_cap &&
        opara__grow(w->rt, (void**)&w->free_list, &w->free_cap, (size_t)w->n_free + 1, sizeof(uint32_t)) != OPARA_OK)
        return; /* the slot leaks into the pool until the walk ends: harmless */
    w->free_list[w->n_free++] = id;
}

OPARA__PRIVATE opara__vc_slot* opara__vc_walk_stream(opara__vc_walk* w, uint32_t s) {
    if (w->stream_clock[s] == UINT32_MAX) {
        uint32_t id = opara__vc_walk_new(w);
        if (id == UINT32_MAX) return NULL;
        w->stream_clock[s] = id;
    }
    return w->pool + (size_t)w->stream_clock[s] * w->k;
}

OPARA__PRIVATE int opara__vc_walk_snapshot(opara__vc_walk* w, uint32_t v, uint32_t s) {
    uint32_t id = opara__vc_walk_new(w);
    if (id == UINT32_MAX || !opara__vc_walk_stream(w, s)) return 0;
    memcpy(w->pool + (size_t)id * w->k, w->pool + (size_t)w->stream_clock[s] * w->k, w->k * sizeof(opara__vc_slot));
    w->node_clock[v] = id;
    return 1;
}

OPARA__PRIVATE void opara__vc_walk_acquire(opara__vc_walk* w, uint32_t s, uint32_t p) {
    uint32_t id = w->node_clock[p];
    if (id == UINT32_MAX || w->stream_clock[s] == UINT32_MAX) return;
    opara__vc_merge(w->pool + (size_t)w->stream_clock[s] * w->k, w->pool + (size_t)id * w->k, w->k);
    if (w->refs[p] && --w->refs[p] == 0) {
        opara__vc_walk_release(w, id);
        w->node_clock[p] = UINT32_MAX;
    }
}

OPARA__PRIVATE void opara__vc_walk_end_stream(opara__vc_walk* w, uint32_t s) {
    if (w->stream_clock[s] == UINT32_MAX) return;
    opara__vc_walk_release(w, w->stream_clock[s]);
    w->stream_clock[s] = UINT32_MAX;
}

/* ---- sync plan ------------------------------------------------------------------------------- */

typedef struct opara__sync {
    const opara__graph* g;
    opara__plan* p;
    const uint32_t* extra_start;
    const uint32_t* extra;
    opara__vc_walk walk;
    uint32_t* deps;   /* scratch: one node's cross-stream dependencies */
    uint32_t* stamp;  /* dedup: stamp[u] == gen when u is already listed */
    uint32_t gen;
    uint32_t* dependents; /* per node: cross-stream dependents (before pruning) */
    uint32_t* lane_len;    /* per lane: ops so far */
    uint32_t* lane_free;   /* per lane: 1 when its stream has ended (the lane can be taken over) */
} opara__sync;

/* Cross-stream dependencies of v (data + extra), deduplicated, latest launched first: the latest
   one's clock usually covers the rest. */
static uint32_t opara__sync_deps(opara__sync* s, uint32_t v) {
    const opara__graph* g = s->g;
    const opara__plan* p = s->p;
    uint32_t n = 0, k, i, j, gen = ++s->gen;
    for (k = g->pred_start[v]; k < g->pred_start[v + 1]; ++k) {
        uint32_t u = g->preds[k];
        if (p->stream[u] != p->stream[v] && s->stamp[u] != gen) s->stamp[u] = gen, s->deps[n++] = u;
    }
    if (s->extra)
        for (k = s->extra_start[v]; k < s->extra_start[v + 1]; ++k) {
            uint32_t u = s->extra[k];
            if (p->stream[u] != p->stream[v] && s->stamp[u] != gen) s->stamp[u] = gen, s->deps[n++] = u;
        }
    for (i = 1; i < n; ++i) {
        uint32_t x = s->deps[i];
        for (j = i; j > 0 && p->position[s->deps[j - 1]] < p->position[x]; --j) s->deps[j] = s->deps[j - 1];
        s->deps[j] = x;
    }
    return n;
}

static uint32_t opara__sync_count(opara__sync* s) {
    uint32_t v, i, total = 0;
    for (v = 0; v < s->g->n_nodes; ++v) {
        uint32_t n = opara__sync_deps(s, v);
        for (i = 0; i < n; ++i) s->dependents[s->deps[i]]++;
        total += n;
    }
    for (v = 0; v < s->g->n_nodes; ++v) s->walk.refs[v] = s->dependents[v];
    return total;
}

/* The lane of v: its stream's; at a stream's first op, an ended lane whose whole history the
   clock covers (only lanes present in the clock can qualify), else a new lane. */
static void opara__sync_lane(opara__sync* s, uint32_t v, const opara__vc_slot* c) {
    opara__plan* p = s->p;
    uint32_t st = p->stream[v], i, lane = UINT32_MAX;
    if (p->stream_first[st] != v) {
        lane = p->stream_lane[st];
    } else {
        for (i = 0; i < s->walk.k && lane == UINT32_MAX; ++i) {
            uint32_t f_lane = (uint32_t)(c[i] >> 32), f_seq = (uint32_t)c[i];
            if (f_seq && s->lane_free[f_lane] && f_seq == s->lane_len[f_lane]) lane = f_lane;
        }
        if (lane == UINT32_MAX) lane = p->n_lanes++;
        s->lane_free[lane] = 0;
        p->stream_lane[st] = lane;
    }
    p->lane[v] = lane;
    p->lane_seq[v] = ++s->lane_len[lane];
}

/* One node: keep the waits its stream's clock does not cover, in ascending launch position. */
static opara_result opara__sync_node(opara__sync* s, uint32_t v, uint32_t* n_waits) {
    opara__plan* p = s->p;
    uint32_t sv = p->stream[v], n = opara__sync_deps(s, v), i, first = *n_waits;
    opara__vc_slot* c = opara__vc_walk_stream(&s->walk, sv);
    if (!c) return OPARA_ERR_OUT_OF_MEMORY;
    for (i = 0; i < n; ++i) {
        uint32_t u = s->deps[i];
        if (!p->desc.no_wait_pruning && opara__vc_knows(c, s->walk.k, p->lane[u], p->lane_seq[u])) {
            p->stats.n_pruned_waits++;
        } else {
            p->wait_nodes[(*n_waits)++] = u;
            p->records_event[u] = 1;
        }
        opara__vc_walk_acquire(&s->walk, sv, u);
    }
    {
        uint32_t a = first, b = *n_waits;
        while (b > a + 1) {
            uint32_t t = p->wait_nodes[a];
            p->wait_nodes[a++] = p->wait_nodes[--b];
            p->wait_nodes[b] = t;
        }
    }
    opara__sync_lane(s, v, c);
    opara__vc_set(c, s->walk.k, p->lane[v], p->lane_seq[v]);
    if (s->walk.refs[v] && !opara__vc_walk_snapshot(&s->walk, v, sv)) return OPARA_ERR_OUT_OF_MEMORY;
    if (p->stream_last[sv] == v) {
        s->lane_free[p->lane[v]] = 1;
        opara__vc_walk_end_stream(&s->walk, sv);
    }
    return OPARA_OK;
}

/* A lane's streams run one after another and are numbered by first use, so the last one seen is
   its last; its first is the one whose first op opened it. Lane 0 is the origin's: neither. */
static void opara__sync_fork_join(opara__sync* s) {
    opara__plan* p = s->p;
    uint32_t st;
    for (st = 1; st < p->n_streams; ++st) {
        uint32_t first = p->stream_first[st], last = p->stream_last[st], l = p->stream_lane[st];
        p->stream_fork[st] = p->wait_start[first] == p->wait_start[first + 1];
        p->stream_join[st] = s->dependents[last] == 0;
        p->stats.n_forks += p->stream_fork[st];
        p->stats.n_joins += p->stream_join[st];
        if (l == 0) continue;
        if (p->lane_seq[first] == 1) p->lane_fork[l] = p->stream_fork[st];
        p->lane_join[l] = p->stream_join[st];
    }
}

/* The wait lists come out in launch order; the plan indexes them by node. */
static opara_result opara__sync_by_node(opara__sync* s, const uint32_t* begin, uint32_t n_waits) {
    const opara__graph* g = s->g;
    opara__plan* p = s->p;
    uint32_t* data = (uint32_t*)opara__calloc(g->rt, (size_t)n_waits + 1, sizeof(uint32_t));
    uint32_t v, at = 0, k;
    if (!data) return OPARA_ERR_OUT_OF_MEMORY;
    for (v = 0; v < g->n_nodes; ++v) {
        uint32_t i = p->position[v];
        uint32_t end = i + 1 < g->n_nodes ? begin[p->order[i + 1]] : n_waits;
        p->wait_start[v] = at;
        for (k = begin[v]; k < end; ++k) data[at++] = p->wait_nodes[k];
    }
    p->wait_start[g->n_nodes] = at;
    opara__free(g->rt, p->wait_nodes);
    p->wait_nodes = data;
    return OPARA_OK;
}

static opara_result opara__sync_run(opara__sync* s) {
    const opara__graph* g = s->g;
    opara__plan* p = s->p;
    uint32_t total = opara__sync_count(s), i, n_waits = 0, v, k;
    opara_result r = OPARA_OK;
    uint32_t* begin;
    p->wait_nodes = (uint32_t*)opara__calloc(g->rt, (size_t)total + 1, sizeof(uint32_t));
    begin = (uint32_t*)opara__calloc(g->rt, (size_t)g->n_nodes + 1, sizeof(uint32_t));
    if (!p->wait_nodes || !begin) {
        opara__free(g->rt, begin);
        return OPARA_ERR_OUT_OF_MEMORY;
    }
    for (i = 0; i < g->n_nodes && r == OPARA_OK; ++i) {
        begin[p->order[i]] = n_waits;
        r = opara__sync_node(s, p->order[i], &n_waits);
    }
    if (r == OPARA_OK) r = opara__sync_by_node(s, begin, n_waits);
    opara__free(g->rt, begin);
    if (r != OPARA_OK) return r;
    p->stats.n_waits = n_waits;
    for (v = 0; v < g->n_nodes; ++v) {
        p->stats.n_events += p->records_event[v];
        for (k = g->pred_start[v]; k < g->pred_start[v + 1]; ++k)
            p->stats.n_cross_edges += p->stream[g->preds[k]] != p->stream[v];
    }
    opara__sync_fork_join(s);
    p->stats.n_lanes = p->n_lanes;
    return OPARA_OK;
}

OPARA__PRIVATE opara_result opara__sync_plan(const opara__graph* g, opara__plan* plan, const uint32_t* extra_start,
                                            const uint32_t* extra) {
    opara__sync s;
    opara_result r;
    size_t max_deps = (size_t)g->pred_start[g->n_nodes] + 1;
    memset(&s, 0, sizeof s);
    s.g = g;
    s.p = plan;
    s.extra_start = extra_start;
    s.extra = extra;
    if (extra) max_deps += extra_start[g->n_nodes];
    plan->n_lanes = 0;
    r = opara__vc_walk_init(&s.walk, g->rt, g->n_nodes, plan->n_streams);
    s.deps = (uint32_t*)opara__calloc(g->rt, max_deps, sizeof(uint32_t));
    s.stamp = (uint32_t*)opara__calloc(g->rt, (size_t)g->n_nodes + 1, sizeof(uint32_t));
    s.dependents = (uint32_t*)opara__calloc(g->rt, (size_t)g->n_nodes + 1, sizeof(uint32_t));
    s.lane_len = (uint32_t*)opara__calloc(g->rt, (size_t)plan->n_streams + 1, sizeof(uint32_t));
    s.lane_free = (uint32_t*)opara__calloc(g->rt, (size_t)plan->n_streams + 1, sizeof(uint32_t));
    if (r == OPARA_OK && (!s.deps || !s.stamp || !s.dependents || !s.lane_len || !s.lane_free))
        r = OPARA_ERR_OUT_OF_MEMORY;
    if (r == OPARA_OK) r = opara__sync_run(&s);
    opara__vc_walk_free(&s.walk);
    opara__free(g->rt, s.deps);
    opara__free(g->rt, s.stamp);
    opara__free(g->rt, s.dependents);
    opara__free(g->rt, s.lane_len);
    opara__free(g->rt, s.lane_free);
    if (r == OPARA_ERR_OUT_OF_MEMORY) return opara__fail(g->rt, r, "out of memory planning events for %u nodes", g->n_nodes);
    return r;
}

/* ---- sharing scratch memory between nodes that never run at the same time ---------------------- */

#define OPARA__SHARE_MAX_CELLS ((size_t)1 << 24) /* clock entries: (lanes + events + nodes) x lanes */
#define OPARA__SHARE_MAX_NODES 8192u             /* nodes compared pairwise (at most n^2 / 2 tests) */

typedef struct opara__share {
    const opara__plan* p;
    const uint64_t* need;
    uint32_t* nodes;    /* [n] the nodes with a need, in launch order */
    uint32_t n, m;      /* their count; the lanes holding them */
    uint32_t* lane_idx; /* [n_lanes] index among those lanes, UINT32_MAX for the others */
    uint32_t* clock;    /* [n * m] per such node: the highest lane_seq of each such lane that happens-before it */
} opara__share;

/* Happens-before clocks of the nodes with a need, over the lanes that hold such nodes: a lane runs
   in order on one CUDA stream, and a node also follows everything the nodes it waits on follow. */
static opara_result opara__share_clocks(opara__share* sh, opara_runtime* rt, uint32_t n_events) {
    const opara__plan* p = sh->p;
    uint32_t m = sh->m, k, i, c = 0, n_snap = 0;
    uint32_t* lane_clock = (uint32_t*)opara__calloc(rt, (size_t)p->n_lanes * m + 1, sizeof(uint32_t));
    uint32_t* snap_of = (uint32_t*)opara__calloc(rt, p->n_nodes ? p->n_nodes : 1, sizeof(uint32_t));
    uint32_t* snaps = (uint32_t*)opara__calloc(rt, ((size_t)n_events + 1) * m, sizeof(uint32_t));
    opara_result r = lane_clock && snap_of && snaps ? OPARA_OK : OPARA_ERR_OUT_OF_MEMORY;
    for (k = 0; r == OPARA_OK && k < p->n_nodes; ++k) snap_of[k] = UINT32_MAX;
    for (k = 0; r == OPARA_OK && k < p->n_nodes; ++k) {
        uint32_t n = p->order[k], l = p->lane[n];
        uint32_t* cl = lane_clock + (size_t)l * m;
        for (i = p->wait_start[n]; i < p->wait_start[n + 1]; ++i) {
            const uint32_t* w;
            uint32_t j;
            if (snap_of[p->wait_nodes[i]] == UINT32_MAX) continue; /* no event recorded: it orders nothing */
            w = snaps + (size_t)snap_of[p->wait_nodes[i]] * m;
            for (j = 0; j < m; ++j)
                if (w[j] > cl[j]) cl[j] = w[j];
        }
        if (sh->lane_idx[l] != UINT32_MAX) cl[sh->lane_idx[l]] = p->lane_seq[n];
        if (sh->need[n]) memcpy(sh->clock + (size_t)c++ * m, cl, m * sizeof(uint32_t));
        if (p->records_event[n] && n_snap < n_events) {
            snap_of[n] = n_snap;
            memcpy(snaps + (size_t)n_snap++ * m, cl, m * sizeof(uint32_t));
        }
    }
    opara__free(rt, lane_clock);
    opara__free(rt, snap_of);
    opara__free(rt, snaps);
    return r;
}

/* a and b (indices into sh->nodes) are ordered by happens-before (either way). */
static int opara__share_ordered(const opara__share* sh, uint32_t a, uint32_t b) {
    const opara__plan* p = sh->p;
    uint32_t na, nb;
    if (a > b) {
        uint32_t t = a;
        a = b, b = t;
    }
    na = sh->nodes[a], nb = sh->nodes[b]; /* a was launched first: only a -> b can hold */
    return p->lane[na] == p->lane[nb] || sh->clock[(size_t)b * sh->m + sh->lane_idx[p->lane[na]]] >= p->lane_seq[na];
}

/* Slots of pairwise ordered nodes (chains of the happens-before order), largest need first: a node
   joins the first slot all of whose nodes are ordered with it (free: the slot is already at least
   as large), else opens one of its own size. order: scratch [n]; members: scratch [n], the nodes
   of each slot as a linked list through next (scratch [n]). */
static void opara__share_slots(const opara__share* sh, uint32_t* order, uint32_t* head, uint32_t* next, uint32_t* slot,
                               uint64_t* size, uint32_t* n_slots) {
    uint32_t i, j, k;
    for (i = 0; i < sh->n; ++i) order[i] = i;
    for (i = 1; i < sh->n; ++i) /* insertion sort by need, descending; launch order breaks ties (stable) */
        for (j = i; j > 0 && sh->need[sh->nodes[order[j]]] > sh->need[sh->nodes[order[j - 1]]]; --j) {
            uint32_t t = order[j];
            order[j] = order[j - 1], order[j - 1] = t;
        }
    *n_slots = 0;
    for (i = 0; i < sh->n; ++i) {
        uint32_t b = order[i], a = UINT32_MAX;
        for (k = 0; k < *n_slots; ++k) {
            for (a = head[k]; a != UINT32_MAX && opara__share_ordered(sh, a, b); a = next[a]) {
            }
            if (a == UINT32_MAX) break; /* every node of slot k is ordered with b */
        }
        if (k == *n_slots) head[k] = UINT32_MAX, size[k] = sh->need[sh->nodes[b]], ++*n_slots;
        next[b] = head[k];
        head[k] = b;
        slot[sh->nodes[b]] = k;
    }
}

OPARA__PRIVATE opara_result opara__plan_share_scratch(const opara__graph* g, const opara__plan* p, const uint64_t* need,
                                                     uint32_t* slot, uint64_t* size, uint32_t* n_slots) {
    opara__share sh;
    uint32_t k, i, n_events = 0;
    opara_result r = OPARA_OK;
    memset(&sh, 0, sizeof sh);
    sh.p = p, sh.need = need;
    *n_slots = 0;
    for (k = 0; k < p->n_nodes; ++k) n_events += p->records_event[k] != 0;
    sh.lane_idx = (uint32_t*)opara__calloc(g->rt, p->n_lanes ? p->n_lanes : 1, sizeof(uint32_t));
    sh.nodes = (uint32_t*)opara__calloc(g->rt, p->n_nodes ? p->n_nodes : 1, sizeof(uint32_t));
    if (!sh.lane_idx || !sh.nodes) r = OPARA_ERR_OUT_OF_MEMORY;
    for (k = 0; r == OPARA_OK && k < p->n_lanes; ++k) sh.lane_idx[k] = UINT32_MAX;
    for (k = 0; r == OPARA_OK && k < p->n_nodes; ++k) {
        uint32_t n = p->order[k];
        slot[n] = UINT32_MAX;
        if (!need[n]) continue;
        sh.nodes[sh.n++] = n;
        if (sh.lane_idx[p->lane[n]] == UINT32_MAX) sh.lane_idx[p->lane[n]] = sh.m++;
    }
    if (r == OPARA_OK && (sh.n > OPARA__SHARE_MAX_NODES ||
                          ((size_t)p->n_lanes + n_events + sh.n) * sh.m > OPARA__SHARE_MAX_CELLS)) {
        /* too large to compare: one block per lane (a lane is a chain) */
        for (i = 0; i < sh.n; ++i) {
            uint32_t n = sh.nodes[i], s = sh.lane_idx[p->lane[n]];
            if (s >= *n_slots) size[s] = 0, *n_slots = s + 1;
            slot[n] = s;
            if (need[n] > size[s]) size[s] = need[n];
        }
    } else if (r == OPARA_OK) {
        uint32_t* scratch = (uint32_t*)opara__calloc(g->rt, 3 * (size_t)sh.n + 1, sizeof(uint32_t));
        sh.clock = (uint32_t*)opara__calloc(g->rt, (size_t)sh.n * sh.m + 1, sizeof(uint32_t));
        r = sh.clock && scratch ? opara__share_clocks(&sh, g->rt, n_events) : OPARA_ERR_OUT_OF_MEMORY;
        if (r == OPARA_OK) opara__share_slots(&sh, scratch, scratch + sh.n, scratch + 2 * (size_t)sh.n, slot, size, n_slots);
        opara__free(g->rt, scratch);
    }
    opara__free(g->rt, sh.lane_idx);
    opara__free(g->rt, sh.nodes);
    opara__free(g->rt, sh.clock);
    if (r == OPARA_ERR_OUT_OF_MEMORY) return opara__fail(g->rt, r, "out of memory sharing scratch between %u nodes", sh.n);
    return r;
}
