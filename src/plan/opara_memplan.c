/* The memory plan: one arena, a block per storage root, reused only when it is provably free.

   A storage root is a value that owns bytes; views, in-place outputs and in-place Concat inputs
   are members of another value's root. Walking the plan in launch order with the same bounded
   vector clocks as the sync plan, a root retires when its last reader has been launched; it keeps
   the (stream, rank) of every op that touched it (producers and readers of all its members, one
   fact per stream). A retired block is reused by op v only when v's clock covers every fact, i.e.
   every old reader happens-before v along stream order and event edges, whichever streams they
   ran on. Blocks tile the arena; adjacent reusable blocks are combined, best fit first, and the
   last block can grow the arena. Graph outputs are pinned (never reused). */
#include "opara_sched.h"

enum { OPARA__SEG_BUSY = 0, OPARA__SEG_RETIRED = 1 };

typedef struct opara__seg {
    uint64_t offset, size;
    uint32_t prev, next; /* UINT32_MAX at the ends */
    uint32_t facts, n_facts;
    /* summary of the facts, so most scans decide without reading them: the latest-launched fact
       and the highest launch position and wavefront level among them */
    uint32_t late_lane, late_seq, late_stream, max_pos, max_level;
    double max_end; /* with expected times: the latest expected end among them */
    uint8_t state;
    uint32_t owner; /* busy: the root it holds */
} opara__seg;

typedef struct opara__fact_rec {
    uint32_t lane, seq, node, stream; /* node: the op at (lane, seq); stream: its stream */
} opara__fact_rec;

typedef struct opara__mem {
    const opara__graph* g;
    opara__plan* p;
    opara__vc_walk walk;
    int32_t* parent;        /* [V] alias parent, -1 for a root */
    uint64_t* parent_off;   /* [V] byte offset inside the parent */
    uint32_t* pending;      /* [V] by root: reads still to come */
    uint32_t* member_next;  /* [V] singly linked members of a root, UINT32_MAX ends */
    uint32_t* member_head;  /* [V] by root */
    uint32_t* seg_of;       /* [V] by root: its segment while busy, UINT32_MAX when never allocated */
    uint64_t* root_offset;  /* [V] by root: arena offset, fixed at allocation */
    uint32_t* prior_start;  /* [V] by root: facts of the block's previous occupants (in `facts`) */
    uint32_t* prior_count;
    uint8_t* is_output;     /* [V] graph output */
    uint8_t* pinned;        /* [V] by root */
    uint8_t* retired;       /* [V] by root */
    opara__seg* segs;
    size_t seg_cap;
    uint32_t n_segs, seg_head, seg_tail, seg_free;
    opara__fact_rec* facts; /* (lane, seq) facts of retired blocks */
    size_t facts_cap, n_facts;
    size_t compact_at;      /* n_facts at which the live facts move to the front */
    uint32_t* stream_stamp; /* [n_streams] dedup while gathering facts */
    uint32_t* stream_fact;  /* [n_streams] index of the stream's fact */
    uint32_t stamp;
    uint64_t top;
    uint32_t node;          /* the node being planned */
    uint32_t node_stream, node_pos, node_level; /* its stream, launch position, level */
    uint32_t window;        /* memory sync window (0: off) */
    int level_sync;         /* also wait on readers at a lower level (needs window != 0) */
    uint64_t budget;        /* memory budget: rather than grow the arena past it, wait on any retired block */
    const double* est_start; /* expected times per node (desc), or NULL */
    const double* est_end;
    uint32_t* extra;        /* (node, waited node) pairs added for memory reuse */
    size_t n_extra, extra_cap;
    uint32_t* extra_stamp;  /* [n_nodes] dedup of a node's added waits */
} opara__mem;

OPARA__PRIVATE uint64_t opara__block_bytes(uint64_t bytes, uint32_t alignment) {
    bytes = bytes ? bytes : 1;
    return bytes + (alignment - bytes % alignment) % alignment;
}

static uint32_t opara__value_root(const opara__mem* m, uint32_t v) {
    while (m->parent[v] >= 0) v = (uint32_t)m->parent[v];
    return v;
}

static int opara__is_arena_value(const opara__graph* g, uint32_t v) {
    return g->values[v].kind == OPARA__VALUE_ACTIVATION && g->values[v].producer >= 0;
}

static uint32_t opara__consumer_count(const opara__graph* g, uint32_t v) {
    return g->consumer_start[v + 1] - g->consumer_start[v];
}

/* ---- static aliases: views and Concat inputs ------------------------------------------------- */

static void opara__mem_views(opara__mem* m) {
    const opara__graph* g = m->g;
    uint32_t i;
    if (m->p->desc.no_view_alias) return;
    for (i = 0; i < g->n_nodes; ++i) {
        const opara__node* n = &g->nodes[m->p->order[i]];
        int32_t x, y;
        if (!opara__op_is_view(n->op) || n->n_inputs < 1 || n->n_outputs != 1) continue;
        x = n->inputs[0];
        y = n->outputs[0];
        if (x < 0 || y < 0 || m->p->value_bytes[y] != m->p->value_bytes[x]) continue;
        if (g->values[x].kind == OPARA__VALUE_ACTIVATION && g->values[x].producer < 0) continue;
        m->parent[y] = x;
        m->parent_off[y] = 0;
        m->p->alias_kind[y] = OPARA__ALIAS_VIEW;
        m->p->stats.n_views++;
    }
}

/* Byte offsets of a Concat's inputs inside its output when every input is one contiguous slice
   (the dimensions before the axis multiply to 1); 0 when not provable (no shapes or record). */
static int opara__concat_layout(const opara__mem* m, uint32_t node) {
    const opara__node* n = &m->g->nodes[node];
    const opara__shape* shapes = m->p->desc.shapes;
    const opara__node_params* rec = m->p->desc.params ? &m->p->desc.params[node] : NULL;
    const opara__shape* ys;
    int64_t axis, outer = 1, d;
    uint64_t sum = 0;
    uint32_t i;
    if (!shapes || !rec || !rec->resolved || n->n_outputs != 1 || n->outputs[0] < 0) return 0;
    ys = &shapes[n->outputs[0]];
    axis = rec->axis; /* normalised by the shape engine */
    if (axis < 0 || axis >= ys->ndim) return 0;
    for (d = 0; d < axis; ++d) outer *= ys->dims[d];
    if (outer != 1) return 0;
    for (i = 0; i < n->n_inputs; ++i) {
        if (n->inputs[i] < 0) return 0;
        sum += m->p->value_bytes[n->inputs[i]];
    }
    return sum == m->p->value_bytes[n->outputs[0]];
}

static int opara__concat_part_ok(const opara__mem* m, const opara__node* n, uint32_t i) {
    const opara__graph* g = m->g;
    int32_t x = n->inputs[i];
    uint32_t j;
    const opara__node* prod;
    if (!opara__is_arena_value(g, (uint32_t)x) || m->parent[x] >= 0) return 0;
    prod = &g->nodes[g->values[x].producer];
    if (opara__op_is_view(prod->op)) return 0;
    /* a Concat output that already holds in-place inputs stays a root: if its Concat later found the
       outer block unsafe, those inputs would already have been written there */
    if (prod->op == OPARA__OP_CONCAT)
        for (j = 0; j < prod->n_inputs; ++j)
            if (prod->inputs[j] >= 0 && m->parent[prod->inputs[j]] == x) return 0;
    for (j = 0; j < n->n_inputs; ++j)
        if (j != i && n->inputs[j] == x) return 0;
    return 1;
}

static void opara__mem_concats(opara__mem* m) {
    const opara__graph* g = m->g;
    uint32_t i, k;
    if (m->p->desc.no_concat_in_place) return;
    for (i = 0; i < g->n_nodes; ++i) {
        const opara__node* n = &g->nodes[m->p->order[i]];
        uint64_t off = 0;
        if (n->op != OPARA__OP_CONCAT || !opara__concat_layout(m, m->p->order[i])) continue;
        for (k = 0; k < n->n_inputs; ++k) {
            int32_t x = n->inputs[k];
            /* the slice's offset is also its alignment (the output's block is aligned to
               desc.alignment >= concat_align); with the dimensions before the axis all 1 there is
               no per-image stride to keep aligned */
            int aligned = !m->p->desc.concat_align || off % m->p->desc.concat_align == 0;
            if (aligned && opara__concat_part_ok(m, n, k)) {
                m->parent[x] = n->outputs[0];
                m->parent_off[x] = off;
                m->p->alias_kind[x] = OPARA__ALIAS_CONCAT;
                m->p->stats.n_concat_in_place++;
            }
            off += m->p->value_bytes[x];
        }
    }
}

static void opara__mem_add_member(opara__mem* m, uint32_t v) {
    uint32_t r = opara__value_root(m, v);
    m->member_next[v] = m->member_head[r];
    m->member_head[r] = v;
    m->pending[r] += opara__consumer_count(m->g, v);
}

static void opara__mem_roots(opara__mem* m) {
    const opara__graph* g = m->g;
    uint32_t v;
    for (v = 0; v < g->n_values; ++v) {
        m->member_head[v] = m->member_next[v] = m->seg_of[v] = UINT32_MAX;
        m->pending[v] = 0;
    }
    for (v = 0; v < g->n_values; ++v) opara__mem_add_member(m, v);
    for (v = 0; v < g->n_outputs; ++v) {
        m->pinned[opara__value_root(m, (uint32_t)g->outputs[v])] = 1;
        m->is_output[g->outputs[v]] = 1;
    }
}

/* ---- facts: (stream, rank) pairs, one per stream, appended to m->facts ------------------------- */

static int opara__mem_reserve_facts(opara__mem* m, size_t more) {
    return m->n_facts + more <= m->facts_cap ||
           opara__grow(m->g->rt, (void**)&m->facts, &m->facts_cap, m->n_facts + more, sizeof(opara__fact_rec)) == OPARA_OK;
}

/* Starts a new fact list at m->n_facts; the caller has reserved room. */
static uint32_t opara__mem_facts_begin(opara__mem* m) {
    m->stamp++;
    return (uint32_t)m->n_facts;
}

static void opara__mem_add_fact(opara__mem* m, uint32_t s, uint32_t q, uint32_t node) {
    if (m->stream_stamp[s] != m->stamp) {
        m->stream_stamp[s] = m->stamp;
        m->stream_fact[s] = (uint32_t)m->n_facts;
        m->facts[m->n_facts].lane = s;
        m->facts[m->n_facts].seq = q;
        m->facts[m->n_facts].stream = m->p->stream[node];
        m->facts[m->n_facts++].node = node;
    } else if (m->facts[m->stream_fact[s]].seq < q) {
        m->facts[m->stream_fact[s]].seq = q;
        m->facts[m->stream_fact[s]].stream = m->p->stream[node];
        m->facts[m->stream_fact[s]].node = node;
    }
}

static void opara__mem_fact(opara__mem* m, uint32_t node) {
    opara__mem_add_fact(m, m->p->lane[node], m->p->lane_seq[node], node);
}

/* Fact f happens-before the node being planned: an earlier op of its stream, or known to the clock. */
static int opara__mem_knows(const opara__mem* m, const opara__fact_rec* f, const opara__vc_slot* c) {
    return f->stream == m->node_stream || opara__vc_knows(c, m->walk.k, f->lane, f->seq);
}

static int opara__mem_knows_all(const opara__mem* m, uint32_t start, uint32_t count, const opara__vc_slot* c) {
    uint32_t i;
    for (i = 0; i < count; ++i)
        if (!opara__mem_knows(m, &m->facts[start + i], c)) return 0;
    return 1;
}

/* Every fact is known, or a wait on its op is cheap: the op was launched at least `window`
   positions before the current node (it has most likely finished), or (level sync) it sits at a
   lower wavefront level than the current node, or (expected times) it is expected to end before
   the current node starts, so the wait is already satisfied on the expected timeline. An edge u -> v with level(u) < level(v) changes no
   level, so such waits never lengthen the DAG's longest path (in ops) and keep every wavefront's
   parallelism. */
static int opara__mem_syncable(const opara__mem* m, uint32_t start, uint32_t count, const opara__vc_slot* c) {
    uint32_t i, here = m->p->position[m->node];
    for (i = 0; i < count; ++i) {
        const opara__fact_rec* f = &m->facts[start + i];
        if (opara__mem_knows(m, f, c)) continue;
        if (m->est_end && m->est_end[f->node] <= m->est_start[m->node]) continue;
        if (m->p->position[f->node] + m->window <= here) continue;
        if (m->level_sync && m->p->level[f->node] < m->p->level[m->node]) continue;
        return 0;
    }
    return 1;
}

/* ---- segments -------------------------------------------------------------------------------- */

static uint32_t opara__seg_new(opara__mem* m) {
    uint32_t id;
    if (m->seg_free != UINT32_MAX) {
        id = m->seg_free;
        m->seg_free = m->segs[id].next;
    } else {
        if (m->n_segs == m->seg_cap &&
            opara__grow(m->g->rt, (void**)&m->segs, &m->seg_cap, (size_t)m->n_segs + 1, sizeof(opara__seg)) != OPARA_OK)
            return UINT32_MAX;
        id = m->n_segs++;
    }
    memset(&m->segs[id], 0, sizeof(opara__seg));
    m->segs[id].prev = m->segs[id].next = UINT32_MAX;
    return id;
}

static void opara__seg_unlink(opara__mem* m, uint32_t id) {
    opara__seg* s = &m->segs[id];
    if (s->prev != UINT32_MAX) m->segs[s->prev].next = s->next;
    else m->seg_head = s->next;
    if (s->next != UINT32_MAX) m->segs[s->next].prev = s->prev;
    else m->seg_tail = s->prev;
    s->next = m->seg_free;
    m->seg_free = id;
}

/* Inserts `id` after `at` (UINT32_MAX: at the front). */
static void opara__seg_link_after(opara__mem* m, uint32_t at, uint32_t id) {
    opara__seg* s = &m->segs[id];
    s->prev = at;
    s->next = at == UINT32_MAX ? m->seg_head : m->segs[at].next;
    if (s->next != UINT32_MAX) m->segs[s->next].prev = id;
    else m->seg_tail = id;
    if (at == UINT32_MAX) m->seg_head = id;
    else m->segs[at].next = id;
}

/* 2: usable now (every previous occupant happens-before the current node), 1: usable with
   memory-sync waits, 0: not usable (or, with as_is_only, not usable now). */
static int opara__seg_usability(const opara__mem* m, uint32_t id, const opara__vc_slot* c, int as_is_only) {
    const opara__seg* s = &m->segs[id];
    int late_known;
    if (s->state != OPARA__SEG_RETIRED) return 0;
    late_known = !s->n_facts || s->late_stream == m->node_stream || opara__vc_knows(c, m->walk.k, s->late_lane, s->late_seq);
    if (late_known && opara__mem_knows_all(m, s->facts, s->n_facts, c)) return 2;
    if (!m->window || as_is_only) return 0;
    if (s->max_pos + m->window <= m->node_pos || (m->level_sync && s->max_level < m->node_level) ||
        (m->est_end && s->max_end <= m->est_start[m->node]))
        return 1;
    return opara__mem_syncable(m, s->facts, s->n_facts, c) ? 1 : 0;
}

/* One scan for the best run of adjacent segments for `size` under both rules. For each rule
   (0: as is, 1: with memory-sync waits) the smallest run prefix that fits, else the run that ends
   at the arena's top (it grows). found[r]: first segment or UINT32_MAX; fits[r]: 1 when it fits.
   Rule 1 is read only when nothing fits as is, so once something does, the rest of the scan skips
   its test (the costly part for blocks that cannot be reused as is) and found[1] means nothing. */
typedef struct opara__seg_pick {
    uint32_t best, run, tail;
    uint64_t best_size, run_size;
} opara__seg_pick;

static void opara__seg_pick_step(opara__seg_pick* k, uint32_t id, uint64_t seg_size, uint64_t size, int at_end) {
    uint64_t before;
    if (k->run == UINT32_MAX) k->run = id, k->run_size = 0;
    before = k->run_size;
    k->run_size += seg_size;
    if (before < size && k->run_size >= size && (k->best == UINT32_MAX || k->run_size < k->best_size))
        k->best = k->run, k->best_size = k->run_size;
    if (at_end) k->tail = k->run;
}

static void opara__seg_find(const opara__mem* m, uint64_t size, const opara__vc_slot* c, uint32_t* found, int* fits) {
    opara__seg_pick k[2];
    uint32_t id, r;
    for (r = 0; r < 2; ++r) k[r].best = k[r].run = k[r].tail = UINT32_MAX, k[r].best_size = k[r].run_size = 0;
    for (id = m->seg_head; id != UINT32_MAX; id = m->segs[id].next) {
        int rule1 = k[0].best == UINT32_MAX;
        int use = opara__seg_usability(m, id, c, !rule1), at_end = m->segs[id].next == UINT32_MAX;
        if (use == 0) {
            k[0].run = k[1].run = UINT32_MAX;
            continue;
        }
        if (use == 2) opara__seg_pick_step(&k[0], id, m->segs[id].size, size, at_end);
        else k[0].run = UINT32_MAX;
        if (rule1) opara__seg_pick_step(&k[1], id, m->segs[id].size, size, at_end);
        if (k[0].best != UINT32_MAX && k[0].best_size == size) break; /* an exact fit: nothing beats it */
    }
    for (r = 0; r < 2; ++r) {
        fits[r] = k[r].best != UINT32_MAX;
        found[r] = fits[r] ? k[r].best : k[r].tail;
    }
}

/* The previous occupants' facts of the segments a run's first `size` bytes cover, so later writers
   into the same block (other inputs of an in-place Concat) can be checked too. */
static int opara__seg_prior_facts(opara__mem* m, uint32_t first, uint64_t size, uint32_t* start, uint32_t* count) {
    uint32_t id;
    uint64_t have = 0;
    size_t need = 0;
    for (id = first; id != UINT32_MAX && have < size; id = m->segs[id].next) need += m->segs[id].n_facts, have += m->segs[id].size;
    if (!opara__mem_reserve_facts(m, need)) return 0;
    *start = opara__mem_facts_begin(m);
    for (id = first, have = 0; id != UINT32_MAX && have < size; id = m->segs[id].next) {
        uint32_t i;
        for (i = 0; i < m->segs[id].n_facts; ++i)
            opara__mem_add_fact(m, m->facts[m->segs[id].facts + i].lane, m->facts[m->segs[id].facts + i].seq,
                                m->facts[m->segs[id].facts + i].node);
        have += m->segs[id].size;
    }
    *count = (uint32_t)m->n_facts - *start;
    return 1;
}

/* Turns the run starting at `first` into one busy segment of `size` bytes (splitting the last
   segment it covers, or growing the arena). */
static uint32_t opara__seg_take(opara__mem* m, uint32_t first, uint64_t size) {
    opara__seg* head = &m->segs[first];
    uint64_t have = head->size;
    while (have < size && head->next != UINT32_MAX) {
        uint32_t nx = head->next;
        opara__seg* n = &m->segs[nx];
        if (have + n->size > size) {
            uint64_t used = size - have;
            n->offset += used;
            n->size -= used;
            have = size;
            break;
        }
        have += n->size;
        opara__seg_unlink(m, nx);
        head = &m->segs[first];
    }
    head = &m->segs[first];
    if (have > size) {
        uint32_t rest = opara__seg_new(m);
        head = &m->segs[first];
        if (rest != UINT32_MAX) {
            m->segs[rest] = *head;
            m->segs[rest].offset = head->offset + size;
            m->segs[rest].size = have - size;
            opara__seg_link_after(m, first, rest);
            head = &m->segs[first];
            have = size;
        }
    }
    if (have < size) m->top += size - have; /* the run ended at the top: grow */
    head->size = OPARA__MAX(have, size);
    head->state = OPARA__SEG_BUSY;
    head->n_facts = 0;
    return first;
}

/* Learns fact (lane, seq) (the same slot policy as opara__vc_merge). */
static void opara__vc_learn(opara__vc_slot* c, uint32_t k, uint32_t lane, uint32_t seq) {
    opara__vc_slot* e = &c[lane & (k - 1)];
    if (OPARA__VC_FACT(lane, seq) > *e) *e = OPARA__VC_FACT(lane, seq);
}

/* Facts start..start+count: the current node waits on the op of each unknown one and learns it. */
static int opara__mem_sync_facts(opara__mem* m, uint32_t start, uint32_t count, opara__vc_slot* c) {
    uint32_t i;
    for (i = 0; i < count; ++i) {
        const opara__fact_rec* f = &m->facts[start + i];
        if (opara__mem_knows(m, f, c)) continue;
        if (m->extra_stamp[f->node] != m->node + 1) {
            if (m->n_extra + 2 > m->extra_cap &&
                opara__grow(m->g->rt, (void**)&m->extra, &m->extra_cap, m->n_extra + 2, sizeof(uint32_t)) != OPARA_OK)
                return 0;
            m->extra[m->n_extra++] = m->node;
            m->extra[m->n_extra++] = f->node;
            m->extra_stamp[f->node] = m->node + 1;
        }
        opara__vc_learn(c, m->walk.k, f->lane, f->seq);
    }
    return 1;
}

/* Adds waits of the current node on the unknown facts of the segments covering the run's first
   `size` bytes, and learns them. */
static int opara__seg_sync(opara__mem* m, uint32_t first, uint64_t size, opara__vc_slot* c) {
    uint32_t id;
    uint64_t have = 0;
    for (id = first; id != UINT32_MAX && have < size; id = m->segs[id].next) {
        if (!opara__mem_sync_facts(m, m->segs[id].facts, m->segs[id].n_facts, c)) return 0;
        have += m->segs[id].size;
    }
    return 1;
}

/* Bytes from segment `first` to the arena's top (a run that does not fit ends there). */
static uint64_t opara__seg_bytes_to_top(const opara__mem* m, uint32_t first) {
    uint64_t sum = 0;
    for (; first != UINT32_MAX; first = m->segs[first].next) sum += m->segs[first].size;
    return sum;
}

/* Under a memory budget, when taking `run` (UINT32_MAX: a new segment at the top) would grow the
   arena past the budget: a run of retired blocks reused with waits on their previous occupants
   (all launched earlier, so the waits point backwards), with the sync window halved until one
   fits: the blocks whose occupants were launched longest ago first, since waiting on a recent
   op serialises most. Window 1 accepts every retired block. Else the longest run at the top, if
   it grows the arena less. These waits trade parallelism for memory. */
static uint32_t opara__seg_budget_run(opara__mem* m, uint64_t size, const opara__vc_slot* c, uint32_t run) {
    uint64_t have = run == UINT32_MAX ? 0 : opara__seg_bytes_to_top(m, run);
    uint32_t found[2], window = m->window, pick = UINT32_MAX;
    int fits[2];
    if (!m->budget || !m->window || m->top + size - have <= m->budget) return UINT32_MAX;
    do {
        m->window = m->window > 1 ? m->window / 2 : 1;
        opara__seg_find(m, size, c, found, fits);
        if (fits[1]) pick = found[1];
        else if (m->window == 1 && found[1] != UINT32_MAX && opara__seg_bytes_to_top(m, found[1]) > have) pick = found[1];
    } while (pick == UINT32_MAX && m->window > 1);
    m->window = window;
    return pick;
}

static uint32_t opara__seg_alloc(opara__mem* m, uint64_t size, opara__vc_slot* c, uint32_t* prior_start,
                                 uint32_t* prior_count) {
    int fits[2];
    uint32_t found[2], run, id, forced;
    opara__seg_find(m, size, c, found, fits);
    run = found[0];
    *prior_start = *prior_count = 0;
    if (!fits[0] && m->window && fits[1]) {
        if (!opara__seg_sync(m, found[1], size, c)) return UINT32_MAX;
        run = found[1];
    } else if (!fits[0] && (forced = opara__seg_budget_run(m, size, c, run)) != UINT32_MAX) {
        if (!opara__seg_sync(m, forced, size, c)) return UINT32_MAX;
        run = forced;
    }
    if (run != UINT32_MAX) {
        if (!opara__seg_prior_facts(m, run, size, prior_start, prior_count)) return UINT32_MAX;
        return opara__seg_take(m, run, size);
    }
    id = opara__seg_new(m);
    if (id == UINT32_MAX) return id;
    m->segs[id].offset = m->top;
    m->segs[id].size = size;
    m->segs[id].state = OPARA__SEG_BUSY;
    opara__seg_link_after(m, m->seg_tail, id);
    m->top += size;
    return id;
}

/* ---- the walk -------------------------------------------------------------------------------- */

static void opara__seg_summarize(const opara__mem* m, opara__seg* s) {
    uint32_t i;
    s->late_lane = s->late_seq = s->late_stream = s->max_pos = s->max_level = 0;
    s->max_end = 0;
    for (i = 0; i < s->n_facts; ++i) {
        const opara__fact_rec* f = &m->facts[s->facts + i];
        uint32_t pos = m->p->position[f->node];
        if (!i || pos > s->max_pos) s->late_lane = f->lane, s->late_seq = f->seq, s->late_stream = f->stream, s->max_pos = pos;
        s->max_level = OPARA__MAX(s->max_level, m->p->level[f->node]);
        if (m->est_end) s->max_end = OPARA__MAX(s->max_end, m->est_end[f->node]);
    }
}

/* Facts are appended and never freed. Once most of them are dead (their blocks were taken again),
   the live ones (retired blocks' facts, busy blocks' previous occupants) move to the front, so that
   the block scans read a few cache lines rather than a trail through the whole walk's facts. */
static opara_result opara__mem_compact_facts(opara__mem* m) {
    opara__fact_rec* live;
    size_t n = 0;
    uint32_t id;
    for (id = m->seg_head; id != UINT32_MAX; id = m->segs[id].next)
        n += m->segs[id].state == OPARA__SEG_RETIRED ? m->segs[id].n_facts : m->prior_count[m->segs[id].owner];
    live = (opara__fact_rec*)opara__alloc(m->g->rt, (n + 1) * sizeof(opara__fact_rec));
    if (!live) return OPARA_ERR_OUT_OF_MEMORY;
    for (n = 0, id = m->seg_head; id != UINT32_MAX; id = m->segs[id].next) {
        opara__seg* s = &m->segs[id];
        uint32_t* start = s->state == OPARA__SEG_RETIRED ? &s->facts : &m->prior_start[s->owner];
        uint32_t count = s->state == OPARA__SEG_RETIRED ? s->n_facts : m->prior_count[s->owner];
        memcpy(live + n, m->facts + *start, count * sizeof(opara__fact_rec));
        *start = (uint32_t)n;
        n += count;
    }
    memcpy(m->facts, live, n * sizeof(opara__fact_rec));
    opara__free(m->g->rt, live);
    m->n_facts = n;
    m->compact_at = 2 * n + 256;
    return OPARA_OK;
}

/* Retires root r: its block keeps one fact per stream that touched any member. */
static opara_result opara__mem_retire(opara__mem* m, uint32_t r) {
    const opara__graph* g = m->g;
    uint32_t v, k, start;
    opara__seg* s;
    size_t need = 1;
    for (v = m->member_head[r]; v != UINT32_MAX; v = m->member_next[v]) need += opara__consumer_count(g, v) + 1;
    if (!opara__mem_reserve_facts(m, need)) return OPARA_ERR_OUT_OF_MEMORY;
    start = opara__mem_facts_begin(m);
    for (v = m->member_head[r]; v != UINT32_MAX; v = m->member_next[v]) {
        if (g->values[v].producer >= 0) opara__mem_fact(m, (uint32_t)g->values[v].producer);
        for (k = g->consumer_start[v]; k < g->consumer_start[v + 1]; ++k) opara__mem_fact(m, g->consumer_nodes[k]);
    }
    s = &m->segs[m->seg_of[r]];
    s->state = OPARA__SEG_RETIRED;
    s->facts = start;
    s->n_facts = (uint32_t)m->n_facts - start;
    opara__seg_summarize(m, s);
    m->retired[r] = 1;
    return OPARA_OK;
}

/* Every earlier reader and writer of root r other than v happens-before v. */
static int opara__mem_all_before(const opara__mem* m, uint32_t r, uint32_t v, const opara__vc_slot* c) {
    const opara__graph* g = m->g;
    const opara__plan* p = m->p;
    uint32_t x, k;
    for (x = m->member_head[r]; x != UINT32_MAX; x = m->member_next[x]) {
        int32_t w = g->values[x].producer;
        if (w >= 0 && (uint32_t)w != v && !opara__vc_knows(c, m->walk.k, p->lane[w], p->lane_seq[w])) return 0;
        for (k = g->consumer_start[x]; k < g->consumer_start[x + 1]; ++k) {
            uint32_t u = g->consumer_nodes[k];
            if (u != v && !opara__vc_knows(c, m->walk.k, p->lane[u], p->lane_seq[u])) return 0;
        }
    }
    return 1;
}

/* Every input of n that lives in root x covers exactly x's bytes (an elementwise op may write over
   an input it reads element by element, not over a different slice); counts those reads. */
static int opara__mem_same_bytes_only(const opara__mem* m, const opara__node* n, uint32_t x, uint32_t* reads) {
    uint32_t j;
    *reads = 0;
    for (j = 0; j < n->n_inputs; ++j) {
        uint32_t u = (uint32_t)n->inputs[j], w;
        uint64_t off = 0;
        if (n->inputs[j] < 0) continue;
        for (w = u; m->parent[w] >= 0; w = (uint32_t)m->parent[w]) off += m->parent_off[w];
        if (w != x) continue;
        if (off != 0 || m->p->value_bytes[u] != m->p->value_bytes[x]) return 0;
        ++*reads;
    }
    return 1;
}

/* The input whose block output y of node v can take, or -1. */
static int32_t opara__mem_inplace_source(const opara__mem* m, uint32_t v, uint32_t y, const opara__vc_slot* c) {
    const opara__graph* g = m->g;
    const opara__node* n = &g->nodes[v];
    uint32_t i;
    if (m->p->desc.no_inplace || !(opara__op_info_of(n->op)->flags & OPARA__OPF_INPLACE) || n->n_outputs != 1)
        return -1;
    if (m->parent[y] >= 0 || m->pinned[y] || m->seg_of[y] != UINT32_MAX) return -1;
    for (i = 0; i < n->n_inputs; ++i) {
        int32_t x = n->inputs[i];
        uint32_t reads = 0;
        if (x < 0 || m->parent[x] >= 0 || m->pinned[x] || m->seg_of[x] == UINT32_MAX || m->retired[x]) continue;
        if (m->p->value_bytes[x] != m->p->value_bytes[y] || !opara__is_arena_value(g, (uint32_t)x)) continue;
        if (!opara__mem_same_bytes_only(m, n, (uint32_t)x, &reads)) continue;
        if (m->pending[x] != reads || !opara__mem_all_before(m, (uint32_t)x, v, c)) continue;
        return x;
    }
    return -1;
}

/* Concat input y goes back to owning its bytes (the Concat will copy it), with the members that
   reach their root through it (its views). */
static void opara__mem_unfuse(opara__mem* m, uint32_t y) {
    uint32_t r = opara__value_root(m, y), u, prev = UINT32_MAX, next;
    m->parent[y] = -1;
    m->parent_off[y] = 0;
    m->p->alias_kind[y] = OPARA__ALIAS_NONE;
    m->p->stats.n_concat_in_place--;
    m->member_head[y] = UINT32_MAX;
    for (u = m->member_head[r]; u != UINT32_MAX; u = next) {
        next = m->member_next[u];
        if (opara__value_root(m, u) != y) {
            prev = u;
            continue;
        }
        if (prev == UINT32_MAX) m->member_head[r] = next;
        else m->member_next[prev] = next;
        m->member_next[u] = m->member_head[y];
        m->member_head[y] = u;
        m->pending[r] -= opara__consumer_count(m->g, u);
        m->pending[y] += opara__consumer_count(m->g, u);
        if (m->is_output[u]) m->pinned[y] = 1;
    }
}

/* Root y (with its views) becomes a member of root x: y is written in place over x. */
static void opara__mem_move_root(opara__mem* m, uint32_t y, uint32_t x) {
    uint32_t tail = m->member_head[y];
    while (m->member_next[tail] != UINT32_MAX) tail = m->member_next[tail];
    m->member_next[tail] = m->member_head[x];
    m->member_head[x] = m->member_head[y];
    m->member_head[y] = UINT32_MAX;
    m->pending[x] += m->pending[y];
    m->pending[y] = 0;
    m->parent[y] = (int32_t)x;
    m->parent_off[y] = 0;
    m->p->alias_kind[y] = OPARA__ALIAS_INPLACE;
    m->p->stats.n_inplace++;
}

static opara_result opara__mem_outputs(opara__mem* m, uint32_t v, opara__vc_slot* c) {
    const opara__graph* g = m->g;
    const opara__node* n = &g->nodes[v];
    uint32_t i;
    for (i = 0; i < n->n_outputs; ++i) {
        uint32_t y = (uint32_t)n->outputs[i], r;
        int32_t src;
        uint64_t bytes;
        if (n->outputs[i] < 0 || m->p->alias_kind[y] == OPARA__ALIAS_VIEW) continue;
        src = opara__mem_inplace_source(m, v, y, c);
        if (src >= 0) {
            opara__mem_move_root(m, y, (uint32_t)src);
            continue;
        }
        r = opara__value_root(m, y);
        if (m->seg_of[r] != UINT32_MAX) {
            /* a Concat output allocated by an earlier input's producer: writing into it is safe only
               if the block's previous occupants are done for this producer too. (The Concat itself
               comes after all its inputs' producers, so after the one that allocated the block.) */
            if (r == y || opara__mem_knows_all(m, m->prior_start[r], m->prior_count[r], c)) continue;
            /* under a memory budget, wait on those occupants (launched before the block's first
               writer, so earlier) rather than give the input a block of its own */
            if (m->budget && m->window) {
                if (!opara__mem_sync_facts(m, m->prior_start[r], m->prior_count[r], c)) return OPARA_ERR_OUT_OF_MEMORY;
                continue;
            }
            opara__mem_unfuse(m, y);
            r = y;
        }
        bytes = opara__block_bytes(m->p->value_bytes[r], m->p->desc.alignment);
        m->seg_of[r] = opara__seg_alloc(m, bytes, c, &m->prior_start[r], &m->prior_count[r]);
        if (m->seg_of[r] == UINT32_MAX) return OPARA_ERR_OUT_OF_MEMORY;
        m->segs[m->seg_of[r]].owner = r;
        m->root_offset[r] = m->segs[m->seg_of[r]].offset;
        m->p->stats.no_reuse_bytes += bytes;
    }
    return OPARA_OK;
}

static int opara__mem_retirable(const opara__mem* m, uint32_t r) {
    return m->pending[r] == 0 && !m->pinned[r] && !m->retired[r] && m->seg_of[r] != UINT32_MAX;
}

static opara_result opara__mem_node(opara__mem* m, uint32_t v) {
    const opara__graph* g = m->g;
    const opara__node* n = &g->nodes[v];
    opara__plan* p = m->p;
    uint32_t s = p->stream[v], k;
    opara__vc_slot* c = opara__vc_walk_stream(&m->walk, s);
    opara_result r;
    if (!c) return OPARA_ERR_OUT_OF_MEMORY;
    if (m->n_facts >= m->compact_at && (r = opara__mem_compact_facts(m)) != OPARA_OK) return r;
    m->node = v;
    m->node_stream = s;
    m->node_pos = p->position[v];
    m->node_level = p->level[v];
    for (k = p->wait_start[v]; k < p->wait_start[v + 1]; ++k) opara__vc_walk_acquire(&m->walk, s, p->wait_nodes[k]);
    r = opara__mem_outputs(m, v, c);
    if (r != OPARA_OK) return r;
    for (k = 0; k < n->n_inputs; ++k)
        if (n->inputs[k] >= 0) m->pending[opara__value_root(m, (uint32_t)n->inputs[k])]--;
    for (k = 0; k < n->n_inputs && r == OPARA_OK; ++k)
        if (n->inputs[k] >= 0 && opara__mem_retirable(m, opara__value_root(m, (uint32_t)n->inputs[k])))
            r = opara__mem_retire(m, opara__value_root(m, (uint32_t)n->inputs[k]));
    for (k = 0; k < n->n_outputs && r == OPARA_OK; ++k)
        if (n->outputs[k] >= 0 && opara__mem_retirable(m, opara__value_root(m, (uint32_t)n->outputs[k])))
            r = opara__mem_retire(m, opara__value_root(m, (uint32_t)n->outputs[k]));
    if (r != OPARA_OK) return r;
    c = opara__vc_walk_stream(&m->walk, s);
    opara__vc_set(c, m->walk.k, p->lane[v], p->lane_seq[v]);
    if (m->walk.refs[v] && !opara__vc_walk_snapshot(&m->walk, v, s)) return OPARA_ERR_OUT_OF_MEMORY;
    if (p->stream_last[s] == v) opara__vc_walk_end_stream(&m->walk, s);
    return OPARA_OK;
}

static void opara__mem_publish(opara__mem* m) {
    const opara__graph* g = m->g;
    opara__plan* p = m->p;
    uint32_t v;
    for (v = 0; v < g->n_values; ++v) {
        uint32_t r = v;
        uint64_t off = 0;
        while (m->parent[r] >= 0) off += m->parent_off[r], r = (uint32_t)m->parent[r];
        p->alias_root[v] = (int32_t)r;
        p->alias_offset[v] = off;
        p->offset[v] = OPARA__NO_ARENA;
        if (g->values[r].kind != OPARA__VALUE_ACTIVATION) {
            p->storage[v] = OPARA__STORAGE_EXTERNAL;
        } else if (m->seg_of[r] != UINT32_MAX) {
            p->storage[v] = OPARA__STORAGE_ARENA;
            p->offset[v] = m->root_offset[r] + off;
        } else {
            p->storage[v] = OPARA__STORAGE_NONE;
        }
    }
    p->arena_bytes = m->top;
    p->alignment = p->desc.alignment;
    p->stats.arena_bytes = m->top;
}

/* Adds the memory plan's waits to the plan's wait lists (each list stays in ascending position). */
static opara_result opara__mem_merge_waits(opara__mem* m) {
    const opara__graph* g = m->g;
    opara__plan* p = m->p;
    size_t total = (size_t)p->stats.n_waits + m->n_extra / 2, i;
    uint32_t* start = (uint32_t*)opara__calloc(g->rt, (size_t)g->n_nodes + 2, sizeof(uint32_t));
    uint32_t* data = (uint32_t*)opara__calloc(g->rt, total + 1, sizeof(uint32_t));
    uint32_t* fill = (uint32_t*)opara__calloc(g->rt, (size_t)g->n_nodes + 1, sizeof(uint32_t));
    uint32_t v, k;
    if (!start || !data || !fill) {
        opara__free(g->rt, start);
        opara__free(g->rt, data);
        opara__free(g->rt, fill);
        return OPARA_ERR_OUT_OF_MEMORY;
    }
    for (v = 0; v < g->n_nodes; ++v) start[v + 1] = p->wait_start[v + 1] - p->wait_start[v];
    for (i = 0; i < m->n_extra; i += 2) start[m->extra[i] + 1]++;
    for (v = 0; v < g->n_nodes; ++v) start[v + 1] += start[v];
    for (v = 0; v < g->n_nodes; ++v)
        for (k = p->wait_start[v]; k < p->wait_start[v + 1]; ++k) data[start[v] + fill[v]++] = p->wait_nodes[k];
    for (i = 0; i < m->n_extra; i += 2) {
        uint32_t n = m->extra[i], u = m->extra[i + 1], j;
        uint32_t* list = data + start[n];
        for (j = fill[n]++; j > 0 && p->position[list[j - 1]] > p->position[u]; --j) list[j] = list[j - 1];
        list[j] = u;
        if (!p->records_event[u]) p->records_event[u] = 1, p->stats.n_events++;
    }
    memcpy(p->wait_start, start, ((size_t)g->n_nodes + 1) * sizeof(uint32_t));
    opara__free(g->rt, p->wait_nodes);
    p->wait_nodes = data;
    p->stats.n_waits = (uint32_t)total;
    p->stats.n_memory_waits = (uint32_t)(m->n_extra / 2);
    opara__free(g->rt, start);
    opara__free(g->rt, fill);
    return OPARA_OK;
}

static opara_result opara__mem_run(opara__mem* m) {
    const opara__graph* g = m->g;
    opara__plan* p = m->p;
    uint32_t i, v, k;
    opara_result r = OPARA_OK;
    for (v = 0; v < g->n_nodes; ++v)
        for (k = p->wait_start[v]; k < p->wait_start[v + 1]; ++k) m->walk.refs[p->wait_nodes[k]]++;
    opara__mem_views(m);
    opara__mem_concats(m);
    opara__mem_roots(m);
    for (i = 0; i < g->n_nodes && r == OPARA_OK; ++i) r = opara__mem_node(m, p->order[i]);
    if (r == OPARA_OK && m->n_extra) r = opara__mem_merge_waits(m);
    if (r == OPARA_OK) opara__mem_publish(m);
    return r;
}

OPARA__PRIVATE opara_result opara__memory_plan(const opara__graph* g, opara__plan* plan) {
    opara__mem m;
    opara_runtime* rt = g->rt;
    size_t nv = (size_t)g->n_values + 1;
    opara_result r;
    uint32_t v;
    memset(&m, 0, sizeof m);
    m.g = g;
    m.p = plan;
    m.seg_head = m.seg_tail = m.seg_free = UINT32_MAX;
    m.compact_at = 256;
    r = opara__vc_walk_init(&m.walk, rt, g->n_nodes, plan->n_streams);
    m.walk.k = opara__vc_slots(plan->n_lanes);
    m.window = plan->desc.no_memory_sync ? 0 : plan->desc.memory_sync_window ? plan->desc.memory_sync_window : 64;
    m.level_sync = !plan->desc.no_level_sync;
    m.budget = plan->stats.budget_bytes;
    if (plan->desc.est_start_us && plan->desc.est_end_us) {
        m.est_start = plan->desc.est_start_us;
        m.est_end = plan->desc.est_end_us;
    }
    m.extra_stamp = (uint32_t*)opara__calloc(rt, (size_t)g->n_nodes + 1, sizeof(uint32_t));
    m.parent = (int32_t*)opara__calloc(rt, nv, sizeof(int32_t));
    m.parent_off = (uint64_t*)opara__calloc(rt, nv, sizeof(uint64_t));
    m.pending = (uint32_t*)opara__calloc(rt, nv, sizeof(uint32_t));
    m.member_next = (uint32_t*)opara__calloc(rt, nv, sizeof(uint32_t));
    m.member_head = (uint32_t*)opara__calloc(rt, nv, sizeof(uint32_t));
    m.seg_of = (uint32_t*)opara__calloc(rt, nv, sizeof(uint32_t));
    m.root_offset = (uint64_t*)opara__calloc(rt, nv, sizeof(uint64_t));
    m.prior_start = (uint32_t*)opara__calloc(rt, nv, sizeof(uint32_t));
    m.prior_count = (uint32_t*)opara__calloc(rt, nv, sizeof(uint32_t));
    m.is_output = (uint8_t*)opara__calloc(rt, nv, 1);
    m.pinned = (uint8_t*)opara__calloc(rt, nv, 1);
    m.retired = (uint8_t*)opara__calloc(rt, nv, 1);
    m.stream_stamp = (uint32_t*)opara__calloc(rt, (size_t)plan->n_lanes + 1, sizeof(uint32_t));
    m.stream_fact = (uint32_t*)opara__calloc(rt, (size_t)plan->n_lanes + 1, sizeof(uint32_t));
    if (r == OPARA_OK && (!m.parent || !m.parent_off || !m.pending || !m.member_next || !m.member_head || !m.seg_of || !m.root_offset || !m.extra_stamp || !m.prior_start || !m.prior_count || !m.is_output ||
                          !m.pinned || !m.retired || !m.stream_stamp || !m.stream_fact))
        r = OPARA_ERR_OUT_OF_MEMORY;
    if (r == OPARA_OK) {
        for (v = 0; v < g->n_values; ++v) m.parent[v] = -1;
        memset(plan->alias_kind, 0, nv);
        r = opara__mem_run(&m);
    }
    opara__vc_walk_free(&m.walk);
    opara__free(rt, m.parent);
    opara__free(rt, m.parent_off);
    opara__free(rt, m.pending);
    opara__free(rt, m.member_next);
    opara__free(rt, m.member_head);
    opara__free(rt, m.seg_of);
    opara__free(rt, m.root_offset);
    opara__free(rt, m.extra_stamp);
    opara__free(rt, m.extra);
    opara__free(rt, m.prior_start);
    opara__free(rt, m.prior_count);
    opara__free(rt, m.is_output);
    opara__free(rt, m.pinned);
    opara__free(rt, m.retired);
    opara__free(rt, m.segs);
    opara__free(rt, m.facts);
    opara__free(rt, m.stream_stamp);
    opara__free(rt, m.stream_fact);
    if (r == OPARA_ERR_OUT_OF_MEMORY) return opara__fail(rt, r, "out of memory planning memory for %u values", g->n_values);
    return r;
}

/* The static aliases (views, in-place Concat inputs) for p's knobs and sizes, as the memory plan
   makes them before its walk, over the graph's topological order instead of p's launch order (a
   Concat comes after the Concats among its inputs in every topological order; only an input
   shared by two Concats may land in the other one). */
OPARA__PRIVATE opara_result opara__memory_aliases(const opara__graph* g, const opara__plan* p, int32_t* parent) {
    opara__mem m;
    opara__plan q = *p;
    uint32_t v;
    memset(&m, 0, sizeof m);
    q.order = g->topo;
    q.alias_kind = (uint8_t*)opara__calloc(g->rt, (size_t)g->n_values + 1, 1);
    m.parent_off = (uint64_t*)opara__calloc(g->rt, (size_t)g->n_values + 1, sizeof(uint64_t));
    if (!q.alias_kind || !m.parent_off) {
        opara__free(g->rt, q.alias_kind);
        opara__free(g->rt, m.parent_off);
        return opara__fail(g->rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory for the aliases of %u values", g->n_values);
    }
    m.g = g;
    m.p = &q;
    m.parent = parent;
    for (v = 0; v < g->n_values; ++v) parent[v] = -1;
    opara__mem_views(&m);
    opara__mem_concats(&m);
    opara__free(g->rt, q.alias_kind);
    opara__free(g->rt, m.parent_off);
    return OPARA_OK;
}
