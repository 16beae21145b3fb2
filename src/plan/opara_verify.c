/* The plan verifier. Independent of how the plan was made: it rebuilds the happens-before
   relation from the plan alone (stream order + waits, exact vector clocks of size n_streams per
   node) and checks every claim against the graph. O(V * streams + accesses * overlaps). */
#include "opara_sched.h"

#include <stdlib.h>

#define OPARA__VERIFY_MAX_CLOCK_ENTRIES ((size_t)1 << 27)

typedef struct opara__access {
    uint64_t start, end; /* arena bytes [start, end) */
    uint32_t node;
} opara__access;

typedef struct opara__verify {
    const opara__graph* g;
    const opara__plan* p;
    uint32_t* vc;          /* [n_nodes * n_streams] */
    opara__access* writes; /* sorted by start */
    size_t n_writes;
    uint64_t max_len;
} opara__verify;

static const char* opara__vname(const opara__graph* g, uint32_t node) {
    return g->nodes[node].name && g->nodes[node].name[0] ? g->nodes[node].name : "(unnamed)";
}

#define OPARA__BAD(v, ...) opara__fail((v)->g->rt, OPARA_ERR_PLAN_INVALID, __VA_ARGS__)

/* a happens-before b (a != b). */
static int opara__hb(const opara__verify* v, uint32_t a, uint32_t b) {
    const opara__plan* p = v->p;
    return a != b && v->vc[(size_t)b * p->n_streams + p->stream[a]] >= p->stream_seq[a];
}

/* ---- structure ------------------------------------------------------------------------------- */

static opara_result opara__verify_order(opara__verify* v, uint32_t* seen) {
    const opara__graph* g = v->g;
    const opara__plan* p = v->p;
    uint32_t i, k;
    if (p->n_nodes != g->n_nodes || p->n_values != g->n_values)
        return OPARA__BAD(v, "plan is for %u nodes/%u values, graph has %u/%u", p->n_nodes, p->n_values, g->n_nodes,
                          g->n_values);
    for (i = 0; i < g->n_nodes; ++i) {
        uint32_t n = p->order[i];
        if (n >= g->n_nodes || seen[n]) return OPARA__BAD(v, "launch order: entry %u (node %u) is invalid or repeated", i, n);
        seen[n] = 1;
        if (p->position[n] != i) return OPARA__BAD(v, "position of node %u is %u, launch order has it at %u", n, p->position[n], i);
    }
    for (i = 0; i < g->n_nodes; ++i)
        for (k = g->pred_start[i]; k < g->pred_start[i + 1]; ++k)
            if (p->position[g->preds[k]] >= p->position[i])
                return OPARA__BAD(v, "launch order is not topological: node %u '%s' is launched before its input's producer %u '%s'",
                                  i, opara__vname(g, i), g->preds[k], opara__vname(g, g->preds[k]));
    return OPARA_OK;
}

static opara_result opara__verify_streams(opara__verify* v, uint32_t* count) {
    const opara__graph* g = v->g;
    const opara__plan* p = v->p;
    uint32_t i, s;
    for (s = 0; s < p->n_streams; ++s) count[s] = 0;
    for (i = 0; i < g->n_nodes; ++i) {
        uint32_t n = p->order[i], st = p->stream[n];
        if (st >= p->n_streams) return OPARA__BAD(v, "node %u '%s' is on stream %u of %u", n, opara__vname(g, n), st, p->n_streams);
        if (!count[st] && p->stream_first[st] != n) return OPARA__BAD(v, "stream %u: first node is %u, plan says %u", st, n, p->stream_first[st]);
        if (p->stream_seq[n] != ++count[st]) return OPARA__BAD(v, "node %u '%s' has rank %u on stream %u, expected %u", n, opara__vname(g, n), p->stream_seq[n], st, count[st]);
    }
    for (s = 0; s < p->n_streams; ++s) {
        if (!count[s]) return OPARA__BAD(v, "stream %u has no node", s);
        if (p->stream_seq[p->stream_last[s]] != count[s] || p->stream[p->stream_last[s]] != s)
            return OPARA__BAD(v, "stream %u: last node %u is not its last", s, p->stream_last[s]);
    }
    if (g->n_nodes && p->stream[p->order[0]] != 0) return OPARA__BAD(v, "the first launched node is not on the origin stream 0");
    return OPARA_OK;
}

static opara_result opara__verify_waits(opara__verify* v) {
    const opara__graph* g = v->g;
    const opara__plan* p = v->p;
    uint32_t n, k;
    if (p->wait_start[0] != 0) return OPARA__BAD(v, "wait lists do not start at 0");
    for (n = 0; n < g->n_nodes; ++n) {
        if (p->wait_start[n + 1] < p->wait_start[n] || p->wait_start[n + 1] > p->stats.n_waits)
            return OPARA__BAD(v, "wait list of node %u is out of range", n);
        for (k = p->wait_start[n]; k < p->wait_start[n + 1]; ++k) {
            uint32_t u = p->wait_nodes[k];
            if (u >= g->n_nodes) return OPARA__BAD(v, "node %u waits on node %u, which does not exist", n, u);
            if (p->position[u] >= p->position[n])
                return OPARA__BAD(v, "node %u '%s' waits on node %u '%s', which is launched later", n, opara__vname(g, n), u, opara__vname(g, u));
            if (p->stream[u] == p->stream[n]) return OPARA__BAD(v, "node %u '%s' waits on node %u on its own stream %u", n, opara__vname(g, n), u, p->stream[n]);
            if (!p->records_event[u]) return OPARA__BAD(v, "node %u '%s' waits on node %u '%s', which records no event", n, opara__vname(g, n), u, opara__vname(g, u));
        }
    }
    return OPARA_OK;
}

static void opara__vc_max(uint32_t* dst, const uint32_t* src, uint32_t n) {
    uint32_t i;
    for (i = 0; i < n; ++i)
        if (src[i] > dst[i]) dst[i] = src[i];
}

static void opara__verify_clocks(opara__verify* v, uint32_t* last) {
    const opara__plan* p = v->p;
    uint32_t i, k, S = p->n_streams;
    for (i = 0; i < S; ++i) last[i] = UINT32_MAX;
    for (i = 0; i < p->n_nodes; ++i) {
        uint32_t n = p->order[i], s = p->stream[n];
        uint32_t* c = v->vc + (size_t)n * S;
        if (last[s] != UINT32_MAX) memcpy(c, v->vc + (size_t)last[s] * S, S * sizeof(uint32_t));
        for (k = p->wait_start[n]; k < p->wait_start[n + 1]; ++k) opara__vc_max(c, v->vc + (size_t)p->wait_nodes[k] * S, S);
        c[s] = p->stream_seq[n];
        last[s] = n;
    }
}

/* Every stream starts after the fork (its first op waits on the fork event or on another stream's
   event) and the origin's end covers every stream's last op through the join waits. */
static opara_result opara__verify_fork_join(opara__verify* v, uint32_t* end) {
    const opara__graph* g = v->g;
    const opara__plan* p = v->p;
    uint32_t s, S = p->n_streams;
    if (!g->n_nodes) return OPARA_OK;
    memcpy(end, v->vc + (size_t)p->stream_last[0] * S, S * sizeof(uint32_t));
    for (s = 1; s < S; ++s) {
        uint32_t first = p->stream_first[s];
        if (!p->stream_fork[s] && p->wait_start[first] == p->wait_start[first + 1])
            return OPARA__BAD(v, "stream %u neither waits on the fork event nor starts with a wait", s);
        if (p->stream_join[s]) opara__vc_max(end, v->vc + (size_t)p->stream_last[s] * S, S);
    }
    for (s = 0; s < S; ++s)
        if (end[s] < p->stream_seq[p->stream_last[s]])
            return OPARA__BAD(v, "stream %u is not joined back into the origin stream", s);
    return OPARA_OK;
}

/* Lanes: lane 0 holds the origin, and the streams sharing a lane are ordered (each starts after
   the previous one's last op), so running them on one CUDA stream loses no parallelism; the lane
   fork and join flags are those of the lane's first and last stream. */
static opara_result opara__verify_lanes(opara__verify* v, uint32_t* last_stream) {
    const opara__plan* p = v->p;
    uint32_t s, l;
    if (p->n_lanes > p->n_streams || (p->n_streams && p->stream_lane[0] != 0))
        return OPARA__BAD(v, "%u lanes for %u streams, the origin on lane %u", p->n_lanes, p->n_streams,
                          p->n_streams ? p->stream_lane[0] : 0);
    for (l = 0; l < p->n_lanes; ++l) last_stream[l] = UINT32_MAX;
    for (s = 0; s < p->n_streams; ++s) {
        uint32_t prev, first = p->stream_first[s];
        l = p->stream_lane[s];
        if (l >= p->n_lanes) return OPARA__BAD(v, "stream %u is on lane %u of %u", s, l, p->n_lanes);
        prev = last_stream[l];
        if (prev == UINT32_MAX && l > 0 && p->lane_fork[l] != p->stream_fork[s])
            return OPARA__BAD(v, "lane %u: fork flag %u, its first stream %u has %u", l, p->lane_fork[l], s, p->stream_fork[s]);
        if (prev != UINT32_MAX && (p->position[p->stream_last[prev]] > p->position[first] || !opara__hb(v, p->stream_last[prev], first)))
            return OPARA__BAD(v, "streams %u and %u share lane %u but may overlap: node %u '%s' does not happen-before node %u '%s'",
                              prev, s, l, p->stream_last[prev], opara__vname(v->g, p->stream_last[prev]), first,
                              opara__vname(v->g, first));
        last_stream[l] = s;
    }
    for (l = 1; l < p->n_lanes; ++l)
        if (last_stream[l] == UINT32_MAX || p->lane_join[l] != p->stream_join[last_stream[l]])
            return OPARA__BAD(v, "lane %u: no stream, or its join flag differs from its last stream's", l);
    return OPARA_OK;
}

static opara_result opara__verify_deps(opara__verify* v) {
    const opara__graph* g = v->g;
    uint32_t n, k;
    for (n = 0; n < g->n_nodes; ++n)
        for (k = g->pred_start[n]; k < g->pred_start[n + 1]; ++k)
            if (!opara__hb(v, g->preds[k], n))
                return OPARA__BAD(v, "dependency %u '%s' -> %u '%s' is not enforced (streams %u -> %u, no event path)",
                                  g->preds[k], opara__vname(g, g->preds[k]), n, opara__vname(g, n),
                                  v->p->stream[g->preds[k]], v->p->stream[n]);
    return OPARA_OK;
}

/* ---- storage --------------------------------------------------------------------------------- */

static opara_result opara__verify_value(opara__verify* v, uint32_t x) {
    const opara__graph* g = v->g;
    const opara__plan* p = v->p;
    const opara__value* val = &g->values[x];
    int32_t r = p->alias_root[x];
    if (r < 0 || (uint32_t)r >= g->n_values || p->alias_root[r] != r)
        return OPARA__BAD(v, "value %u '%s': alias root %d is not a root", x, val->name, (int)r);
    if (p->storage[x] != p->storage[r]) return OPARA__BAD(v, "value %u '%s': storage differs from its root's", x, val->name);
    if (val->kind != OPARA__VALUE_ACTIVATION && r != (int32_t)x)
        return OPARA__BAD(v, "graph input or constant %u '%s' is aliased into value %d", x, val->name, (int)r);
    if (val->kind == OPARA__VALUE_ACTIVATION && val->producer >= 0 && p->storage[x] != OPARA__STORAGE_ARENA &&
        p->storage[x] != OPARA__STORAGE_EXTERNAL)
        return OPARA__BAD(v, "value %u '%s' has no storage", x, val->name);
    if (p->storage[x] == OPARA__STORAGE_EXTERNAL && g->values[r].kind == OPARA__VALUE_ACTIVATION)
        return OPARA__BAD(v, "value %u '%s' is external but its root %d is an activation", x, val->name, (int)r);
    if (p->value_bytes[x] > 0 && !opara__range_ok(p->alias_offset[x], p->value_bytes[x], p->value_bytes[r]))
        return OPARA__BAD(v, "value %u '%s' (%llu bytes at +%llu) does not fit its root '%s' (%llu bytes)", x, val->name,
                          (unsigned long long)p->value_bytes[x], (unsigned long long)p->alias_offset[x],
                          g->values[r].name, (unsigned long long)p->value_bytes[r]);
    if (p->storage[x] == OPARA__STORAGE_ARENA) {
        if (p->offset[x] != p->offset[r] + p->alias_offset[x])
            return OPARA__BAD(v, "value %u '%s': offset is not its root's plus its alias offset", x, val->name);
        if (p->offset[x] % p->alignment && r == (int32_t)x)
            return OPARA__BAD(v, "value %u '%s' is misaligned", x, val->name);
        if (p->desc.concat_align && p->alias_kind[x] == OPARA__ALIAS_CONCAT && p->offset[x] % p->desc.concat_align)
            return OPARA__BAD(v, "Concat input %u '%s' sits at offset %llu, not a multiple of %u bytes", x, val->name,
                              (unsigned long long)p->offset[x], p->desc.concat_align);
        if (!opara__range_ok(p->offset[x], p->value_bytes[x], p->arena_bytes))
            return OPARA__BAD(v, "value %u '%s' (%llu bytes at %llu) lies outside the arena of %llu bytes", x, val->name,
                              (unsigned long long)p->value_bytes[x], (unsigned long long)p->offset[x],
                              (unsigned long long)p->arena_bytes);
    }
    return OPARA_OK;
}

static uint64_t opara__concat_slice(const opara__plan* p, const opara__node* n, uint32_t input_index) {
    uint64_t off = 0;
    uint32_t i;
    for (i = 0; i < input_index; ++i) off += n->inputs[i] >= 0 ? p->value_bytes[n->inputs[i]] : 0;
    return off;
}

OPARA__PRIVATE int opara__plan_concat_input_in_place(const opara__graph* g, const opara__plan* plan, uint32_t node,
                                                    uint32_t input_index) {
    const opara__node* n;
    int32_t x, y;
    if (node >= g->n_nodes) return 0;
    n = &g->nodes[node];
    if (n->op != OPARA__OP_CONCAT || input_index >= n->n_inputs || n->n_outputs < 1) return 0;
    x = n->inputs[input_index];
    y = n->outputs[0];
    if (x < 0 || y < 0 || plan->storage[x] != OPARA__STORAGE_ARENA || plan->storage[y] != OPARA__STORAGE_ARENA) return 0;
    return plan->alias_kind[x] == OPARA__ALIAS_CONCAT && plan->alias_root[x] == plan->alias_root[y] &&
           plan->offset[x] == plan->offset[y] + opara__concat_slice(plan, n, input_index);
}

static int opara__concat_any_in_place(const opara__verify* v, uint32_t node) {
    uint32_t i;
    for (i = 0; i < v->g->nodes[node].n_inputs; ++i)
        if (opara__plan_concat_input_in_place(v->g, v->p, node, i)) return 1;
    return 0;
}

static int opara__is_view_alias(const opara__verify* v, uint32_t x) {
    int32_t prod = v->g->values[x].producer;
    return prod >= 0 && v->p->alias_kind[x] == OPARA__ALIAS_VIEW && opara__op_is_view(v->g->nodes[prod].op) &&
           v->g->nodes[prod].n_inputs >= 1 && v->g->nodes[prod].inputs[0] >= 0 &&
           v->p->alias_root[x] == v->p->alias_root[v->g->nodes[prod].inputs[0]] &&
           v->p->alias_offset[x] == v->p->alias_offset[v->g->nodes[prod].inputs[0]];
}

static opara_result opara__add_write(opara__verify* v, uint32_t node, uint64_t start, uint64_t len) {
    if (!len) return OPARA_OK;
    v->writes[v->n_writes].start = start;
    v->writes[v->n_writes].end = start + len;
    v->writes[v->n_writes++].node = node;
    if (len > v->max_len) v->max_len = len;
    return OPARA_OK;
}

/* The bytes each node writes: outputs, except views (none) and a Concat's in-place inputs. */
static void opara__collect_writes(opara__verify* v) {
    const opara__graph* g = v->g;
    const opara__plan* p = v->p;
    uint32_t n, i;
    for (n = 0; n < g->n_nodes; ++n) {
        const opara__node* nd = &g->nodes[n];
        for (i = 0; i < nd->n_outputs; ++i) {
            int32_t y = nd->outputs[i];
            if (y < 0 || p->storage[y] != OPARA__STORAGE_ARENA || opara__is_view_alias(v, (uint32_t)y)) continue;
            if (nd->op == OPARA__OP_CONCAT && i == 0 && opara__concat_any_in_place(v, n)) {
                uint32_t k;
                for (k = 0; k < nd->n_inputs; ++k)
                    if (nd->inputs[k] >= 0 && !opara__plan_concat_input_in_place(g, p, n, k))
                        opara__add_write(v, n, p->offset[y] + opara__concat_slice(p, nd, k), p->value_bytes[nd->inputs[k]]);
                continue;
            }
            opara__add_write(v, n, p->offset[y], p->value_bytes[y]);
        }
    }
}

static int opara__access_cmp(const void* a, const void* b) {
    const opara__access* x = (const opara__access*)a;
    const opara__access* y = (const opara__access*)b;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    return x->node < y->node ? -1 : x->node > y->node;
}

/* First write whose start could overlap [start, ...): writes are sorted, none is longer than max_len. */
static size_t opara__first_write(const opara__verify* v, uint64_t start) {
    uint64_t from = start > v->max_len ? start - v->max_len : 0;
    size_t lo = 0, hi = v->n_writes;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v->writes[mid].start < from) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

static opara_result opara__verify_races(opara__verify* v) {
    const opara__graph* g = v->g;
    size_t i, j;
    for (i = 0; i < v->n_writes; ++i) {
        const opara__access* a = &v->writes[i];
        for (j = i + 1; j < v->n_writes && v->writes[j].start < a->end; ++j) {
            const opara__access* b = &v->writes[j];
            if (b->node == a->node || opara__hb(v, a->node, b->node) || opara__hb(v, b->node, a->node)) continue;
            return OPARA__BAD(v, "nodes %u '%s' and %u '%s' run unordered and both write arena bytes [%llu, %llu)", a->node,
                              opara__vname(g, a->node), b->node, opara__vname(g, b->node),
                              (unsigned long long)OPARA__MAX(a->start, b->start),
                              (unsigned long long)OPARA__MIN(a->end, b->end));
        }
    }
    return OPARA_OK;
}

/* Node r (or the end of the run, r = UINT32_MAX) reads bytes [start, start+len) written by w:
   every other write to them must come before w or after r. */
static opara_result opara__verify_piece(opara__verify* v, uint32_t r, uint32_t w, uint64_t start, uint64_t len,
                                        int r_writes_in_place) {
    const opara__graph* g = v->g;
    size_t i;
    uint64_t end = start + len;
    if (!len) return OPARA_OK;
    for (i = opara__first_write(v, start); i < v->n_writes && v->writes[i].start < end; ++i) {
        const opara__access* a = &v->writes[i];
        if (a->end <= start || a->node == w) continue;
        if (a->node == r && r_writes_in_place) continue;
        if (opara__hb(v, a->node, w)) continue;
        if (r != UINT32_MAX && opara__hb(v, r, a->node)) continue;
        if (r == UINT32_MAX)
            return OPARA__BAD(v, "graph output bytes [%llu, %llu) written by node %u '%s' are overwritten by node %u '%s' before the end",
                              (unsigned long long)OPARA__MAX(start, a->start), (unsigned long long)OPARA__MIN(end, a->end),
                              w, opara__vname(g, w), a->node, opara__vname(g, a->node));
        return OPARA__BAD(v, "node %u '%s' reads arena bytes [%llu, %llu) written by node %u '%s', but node %u '%s' may overwrite them in between",
                          r, opara__vname(g, r), (unsigned long long)OPARA__MAX(start, a->start),
                          (unsigned long long)OPARA__MIN(end, a->end), w, opara__vname(g, w), a->node,
                          opara__vname(g, a->node));
    }
    return OPARA_OK;
}

/* The pieces of value x's bytes and who wrote them; checks the read of each by r. */
static opara_result opara__verify_read(opara__verify* v, uint32_t r, uint32_t x, int in_place, uint32_t depth) {
    const opara__graph* g = v->g;
    const opara__plan* p = v->p;
    int32_t prod = g->values[x].producer;
    const opara__node* pn;
    uint32_t i;
    if (p->storage[x] != OPARA__STORAGE_ARENA || prod < 0) return OPARA_OK;
    if (depth > g->n_values) return OPARA__BAD(v, "value %u '%s': alias chain has a cycle", x, g->values[x].name);
    pn = &g->nodes[prod];
    if (opara__is_view_alias(v, x)) return opara__verify_read(v, r, (uint32_t)pn->inputs[0], in_place, depth + 1);
    if (pn->op == OPARA__OP_CONCAT && opara__concat_any_in_place(v, (uint32_t)prod)) {
        for (i = 0; i < pn->n_inputs; ++i) {
            opara_result res;
            if (pn->inputs[i] < 0) continue;
            if (opara__plan_concat_input_in_place(g, p, (uint32_t)prod, i))
                res = opara__verify_read(v, r, (uint32_t)pn->inputs[i], in_place, depth + 1);
            else
                res = opara__verify_piece(v, r, (uint32_t)prod, p->offset[x] + opara__concat_slice(p, pn, i),
                                          p->value_bytes[pn->inputs[i]], in_place);
            if (res != OPARA_OK) return res;
        }
        return OPARA_OK;
    }
    return opara__verify_piece(v, r, (uint32_t)prod, p->offset[x], p->value_bytes[x], in_place);
}

/* Node n overwrites its input x in place (its output shares x's root). */
static int opara__writes_over_input(const opara__verify* v, uint32_t n, uint32_t x) {
    const opara__node* nd = &v->g->nodes[n];
    uint32_t i;
    for (i = 0; i < nd->n_outputs; ++i) {
        int32_t y = nd->outputs[i];
        if (y >= 0 && v->p->alias_kind[y] == OPARA__ALIAS_INPLACE && v->p->alias_root[y] == v->p->alias_root[x] &&
            v->p->offset[y] == v->p->offset[x])
            return 1;
    }
    return 0;
}

static opara_result opara__verify_reads(opara__verify* v) {
    const opara__graph* g = v->g;
    uint32_t n, i;
    opara_result r;
    for (n = 0; n < g->n_nodes; ++n) {
        const opara__node* nd = &g->nodes[n];
        if (opara__op_is_view(nd->op) && nd->n_outputs >= 1 && nd->outputs[0] >= 0 &&
            opara__is_view_alias(v, (uint32_t)nd->outputs[0]))
            continue; /* a view reads nothing */
        for (i = 0; i < nd->n_inputs; ++i) {
            int32_t x = nd->inputs[i];
            if (x < 0 || (nd->op == OPARA__OP_CONCAT && opara__plan_concat_input_in_place(g, v->p, n, i))) continue;
            r = opara__verify_read(v, n, (uint32_t)x, opara__writes_over_input(v, n, (uint32_t)x), 0);
            if (r != OPARA_OK) return r;
        }
    }
    for (i = 0; i < g->n_outputs; ++i) {
        r = opara__verify_read(v, UINT32_MAX, (uint32_t)g->outputs[i], 0, 0);
        if (r != OPARA_OK) return r;
    }
    return OPARA_OK;
}

static opara_result opara__verify_memory(opara__verify* v) {
    const opara__graph* g = v->g;
    uint32_t x;
    size_t max_writes = 0;
    opara_result r;
    for (x = 0; x < g->n_values; ++x) {
        r = opara__verify_value(v, x);
        if (r != OPARA_OK) return r;
    }
    for (x = 0; x < g->n_nodes; ++x) max_writes += (size_t)g->nodes[x].n_outputs + g->nodes[x].n_inputs;
    v->writes = (opara__access*)opara__calloc(g->rt, max_writes + 1, sizeof(opara__access));
    if (!v->writes) return opara__fail(g->rt, OPARA_ERR_OUT_OF_MEMORY, "verifier: out of memory");
    opara__collect_writes(v);
    if (v->n_writes > 1) qsort(v->writes, v->n_writes, sizeof(opara__access), opara__access_cmp);
    r = opara__verify_races(v);
    if (r == OPARA_OK) r = opara__verify_reads(v);
    return r;
}

OPARA__PRIVATE opara_result opara__plan_verify(const opara__graph* g, const opara__plan* plan) {
    opara__verify v;
    uint32_t* scratch;
    size_t entries;
    opara_result r;
    if (!g || !plan) return g ? opara__fail(g->rt, OPARA_ERR_INVALID_ARGS, "verify: NULL plan") : OPARA_ERR_INVALID_ARGS;
    if (!g->finalized) return opara__fail(g->rt, OPARA_ERR_INVALID_STATE, "verify: the graph is not finalized");
    memset(&v, 0, sizeof v);
    v.g = g;
    v.p = plan;
    if (!opara__mul_size(g->n_nodes, plan->n_streams, &entries) || entries > OPARA__VERIFY_MAX_CLOCK_ENTRIES)
        return opara__fail(g->rt, OPARA_ERR_LIMIT_EXCEEDED, "verify: %u nodes x %u streams is too many clock entries",
                           g->n_nodes, plan->n_streams);
    scratch = (uint32_t*)opara__calloc(g->rt, (size_t)g->n_nodes + plan->n_streams + 1, sizeof(uint32_t));
    v.vc = (uint32_t*)opara__calloc(g->rt, entries + 1, sizeof(uint32_t));
    if (!scratch || !v.vc) {
        opara__free(g->rt, scratch);
        opara__free(g->rt, v.vc);
        return opara__fail(g->rt, OPARA_ERR_OUT_OF_MEMORY, "verify: out of memory");
    }
    r = opara__verify_order(&v, scratch);
    if (r == OPARA_OK) r = opara__verify_streams(&v, scratch);
    if (r == OPARA_OK) r = opara__verify_waits(&v);
    if (r == OPARA_OK) {
        opara__verify_clocks(&v, scratch);
        r = opara__verify_fork_join(&v, scratch);
    }
    if (r == OPARA_OK) r = opara__verify_deps(&v);
    if (r == OPARA_OK) r = opara__verify_memory(&v);
    if (r == OPARA_OK) r = opara__verify_lanes(&v, scratch);
    opara__free(g->rt, scratch);
    opara__free(g->rt, v.vc);
    opara__free(g->rt, v.writes);
    return r;
}
