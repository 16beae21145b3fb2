/* emu_graph.c - emulated driver: stream capture (cuda-semantics.md §1-§3), graphs and executable graphs
 * (§4). A graph launch runs ready nodes in a seeded random order that honours only the graph's edges,
 * optionally on several threads (OPARA_EMU_GRAPH_THREADS), so a missing dependency shows up as a wrong
 * result under some seed. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdlib.h>
#include <string.h>

#include "emu_internal.h"

static __thread int emu_tls_capture_mode; /* CAPTURE_GLOBAL by default (rule 1.4) */

/* ---------------------------------------------------------------- graphs */

static emu_graph* emu_graph_new(void) {
    emu_graph* g = (emu_graph*)emu_xcalloc(1, sizeof(*g));
    if (g && emu_handle_add(g, K_GRAPH) != 0) {
        free(g);
        return NULL;
    }
    return g;
}

static void emu_graph_free(emu_graph* g) {
    size_t i;
    for (i = 0; i < g->n; i++) {
        emu_handle_del(g->nodes[i]);
        emu_work_free(&g->nodes[i]->work);
        free(g->nodes[i]->deps);
        free(g->nodes[i]);
    }
    free(g->nodes);
    emu_handle_del(g);
    free(g);
}

/* Adds a node that owns *w (moved) and depends on deps[0..n). */
static emu_node* emu_graph_add(emu_graph* g, int type, emu_work* w, emu_node* const* deps, size_t n) {
    emu_node* node = (emu_node*)emu_xcalloc(1, sizeof(*node));
    if (!node || emu_grow((void**)&g->nodes, &g->cap, g->n + 1, sizeof(emu_node*)) != 0 ||
        !(node->deps = (emu_node**)emu_xcalloc(n, sizeof(emu_node*)))) {
        free(node);
        emu_work_free(w);
        return NULL;
    }
    node->graph = g;
    node->type = type;
    node->work = *w;
    memset(w, 0, sizeof(*w));
    if (n) memcpy(node->deps, deps, n * sizeof(emu_node*));
    node->ndeps = n;
    node->cap_deps = n;
    node->index = g->n;
    g->nodes[g->n++] = node;
    emu_handle_add(node, K_NODE);
    return node;
}

static int emu_node_type_of(const emu_work* w) {
    switch (w->type) {
    case W_KERNEL: return NODE_KERNEL;
    case W_MEMCPY: return NODE_MEMCPY;
    case W_MEMSET: return NODE_MEMSET;
    case W_HOST: return NODE_HOST;
    case W_EVENT_RECORD: return NODE_EVENT_RECORD;
    case W_EVENT_WAIT: return NODE_WAIT_EVENT;
    default: return NODE_EMPTY;
    }
}

/* ---------------------------------------------------------------- capture sequences */

emu_capture* emu_capture_by_id(unsigned long long id) {
    emu_capture* c;
    for (c = G.captures; c; c = c->next)
        if (c->id == id) return c;
    return NULL;
}

void emu_capture_invalidate(emu_capture* c) { c->invalidated = 1; }

/* A failed call on a stream that belongs to an active capture invalidates that capture (rules 1.8, A5).
 * Observed on driver 580 (CUDA 13.0), H100: after cuStreamEndCapture on a forked stream (903) the origin
 * reports INVALIDATED and its end returns 901. [EMU] Generalised to every call that fails once its stream is
 * known (a launch with a bad configuration, a copy out of bounds...). Left alone: the checks made before the
 * stream is looked up (NULL outputs, unknown flags, bad handles), the capture-status queries
 * (cuStreamIsCapturing, cuStreamGetCaptureInfo) and a second cuStreamBeginCapture (see there). Returns r. */
emu_result emu_capture_fail(emu_stream* s, emu_result r) {
    if (r != E_OK && s && s->cap) emu_capture_invalidate(s->cap);
    return r;
}

/* Rule 1.5: is a "potentially unsafe" call from this thread prohibited? Invalidates the captures that
 * prohibit it and returns 900 [EMU A3]. */
emu_result emu_unsafe_call(void) {
    emu_capture* c;
    pthread_t self = pthread_self();
    int hit = 0;
    if (emu_tls_capture_mode == CAPTURE_RELAXED) return E_OK;
    for (c = G.captures; c; c = c->next) {
        int mine = pthread_equal(c->owner, self);
        if ((mine && c->mode != CAPTURE_RELAXED) ||
            (!mine && emu_tls_capture_mode == CAPTURE_GLOBAL && c->mode == CAPTURE_GLOBAL)) {
            emu_capture_invalidate(c);
            hit = 1;
        }
    }
    return hit ? E_CAPTURE_UNSUPPORTED : E_OK;
}

static int emu_set_deps(emu_stream* s, emu_node* const* deps, size_t n) {
    if (emu_grow((void**)&s->cap_deps, &s->cap_cap_deps, n, sizeof(emu_node*)) != 0) return -1;
    if (n) memmove(s->cap_deps, deps, n * sizeof(emu_node*));
    s->n_cap_deps = n;
    return 0;
}

static int emu_join_stream(emu_capture* c, emu_stream* s) {
    if (emu_grow((void**)&c->members, &c->cap_members, c->n_members + 1, sizeof(emu_stream*)) != 0) return -1;
    c->members[c->n_members++] = s;
    s->cap = c;
    s->n_cap_deps = 0;
    return 0;
}

void emu_capture_leave_stream(emu_stream* s) {
    emu_capture* c = s->cap;
    size_t i;
    for (i = 0; c && i < c->n_members; i++)
        if (c->members[i] == s) {
            c->members[i] = c->members[--c->n_members];
            break;
        }
    s->cap = NULL;
    s->n_cap_deps = 0;
}

emu_result emu_capture_add(emu_stream* s, emu_work* w, int node_type) {
    emu_node* node;
    if (s->cap->invalidated) { /* rule 1.8 */
        emu_work_free(w);
        return E_CAPTURE_INVALIDATED;
    }
    node = emu_graph_add(s->cap->graph, node_type >= 0 ? node_type : emu_node_type_of(w), w, s->cap_deps,
                         s->n_cap_deps);
    if (!node || emu_set_deps(s, &node, 1) != 0) return E_OUT_OF_MEMORY;
    return E_OK; /* the stream's next work depends on this node only */
}

/* Every member stream leaves capture; with failed set the graph is discarded (rules 1.2, 1.8, 2.4). */
static void emu_capture_end(emu_capture* c, int failed) {
    emu_capture** p;
    while (c->n_members) emu_capture_leave_stream(c->members[0]);
    for (p = &G.captures; *p; p = &(*p)->next)
        if (*p == c) {
            *p = c->next;
            break;
        }
    c->graph->capturing = NULL;
    if (failed) emu_graph_free(c->graph);
    free(c->members);
    free(c);
}

/* Rule 2.4: every captured node must be an ancestor of (or in) the origin stream's dependency set. */
static int emu_capture_unjoined(const emu_capture* c) {
    const emu_graph* g = c->graph;
    unsigned char* seen = (unsigned char*)emu_xcalloc(g->n, 1);
    emu_node** stack = (emu_node**)emu_xcalloc(g->n + c->origin->n_cap_deps, sizeof(emu_node*));
    size_t top = 0, i, count = 0;
    int unjoined;
    if (!seen || !stack) {
        free(seen);
        free(stack);
        return 0;
    }
    for (i = 0; i < c->origin->n_cap_deps; i++) stack[top++] = c->origin->cap_deps[i];
    while (top) {
        emu_node* n = stack[--top];
        if (seen[n->index]) continue;
        seen[n->index] = 1;
        count++;
        for (i = 0; i < n->ndeps; i++)
            if (!seen[n->deps[i]->index]) stack[top++] = n->deps[i];
    }
    unjoined = count != g->n;
    free(seen);
    free(stack);
    return unjoined;
}

EMU_API emu_result cuStreamBeginCapture_v2(emu_stream* h, int mode) {
    emu_result r = emu_enter();
    emu_stream* s;
    emu_capture* c;
    emu_ctx* ctx = emu_current_ctx();
    if (r) return r;
    if (mode < CAPTURE_GLOBAL || mode > CAPTURE_RELAXED) return emu_leave(E_INVALID_VALUE);
    if ((r = emu_resolve_stream(h, (h && h != EMU_STREAM_LEGACY && h != EMU_STREAM_PER_THREAD) ? NULL : ctx, &s)))
        return emu_leave(r);
    /* Rule 1.1, codes observed on driver 580 (CUDA 13.0), H100 (cuda-semantics.md A1 guessed INVALID_VALUE):
     * 900 for NULL or CU_STREAM_LEGACY, 401 for a stream already capturing. The 401 leaves the capture valid:
     * on that driver a cuEventRecord on the stream and a fork from that event succeeded right after it, and
     * PG-G says the streams and captured events of an invalidated capture return errors. */
    if (s->special == 1) return emu_leave(E_CAPTURE_UNSUPPORTED);
    if (s->cap) return emu_leave(E_ILLEGAL_STATE);
    c = (emu_capture*)emu_xcalloc(1, sizeof(*c));
    if (!c || !(c->graph = emu_graph_new())) {
        free(c);
        return emu_leave(E_OUT_OF_MEMORY);
    }
    c->id = G.next_capture_id++;
    c->origin = s;
    c->mode = mode;
    c->owner = pthread_self();
    c->graph->capturing = c;
    if (emu_join_stream(c, s) != 0) return emu_leave(E_OUT_OF_MEMORY);
    c->next = G.captures;
    G.captures = c;
    return emu_leave(E_OK);
}

EMU_API emu_result cuStreamEndCapture(emu_stream* h, emu_graph** pg) {
    emu_result r = emu_enter();
    emu_stream* s;
    emu_capture* c;
    emu_graph* g;
    if (r) return r;
    if (!pg) return emu_leave(E_INVALID_VALUE);
    if ((r = emu_resolve_stream(h, (h && h != EMU_STREAM_LEGACY && h != EMU_STREAM_PER_THREAD) ? NULL
                                                                                            : emu_current_ctx(), &s)))
        return emu_leave(r);
    c = s->cap;
    /* Observed on driver 580 (CUDA 13.0), H100: 401 on a stream that is not capturing (A2 guessed
     * INVALID_VALUE); 903 on a forked stream, which invalidates the capture (rule 1.3). */
    if (!c) return emu_leave(E_ILLEGAL_STATE);
    if (c->origin != s) return emu_leave(emu_capture_fail(s, E_CAPTURE_UNMATCHED));
    if (c->mode != CAPTURE_RELAXED && !pthread_equal(c->owner, pthread_self())) {
        emu_capture_end(c, 1); /* rule 1.2; observed on driver 580 (CUDA 13.0), H100: the capture is over */
        return emu_leave(E_CAPTURE_WRONG_THREAD);
    }
    g = c->graph;
    if (G.fail_capture > 0) { /* fault injection: as if the capture had been invalidated */
        G.fail_capture--;
        c->invalidated = 1;
    }
    r = c->invalidated ? E_CAPTURE_INVALIDATED : emu_capture_unjoined(c) ? E_CAPTURE_UNJOINED : E_OK;
    emu_capture_end(c, r != E_OK); /* every member stream leaves capture, also on failure (rules 1.2, 2.4) */
    *pg = r == E_OK ? g : NULL;
    return emu_leave(r);
}

EMU_API emu_result cuStreamIsCapturing(emu_stream* h, int* status) {
    emu_result r = emu_enter();
    emu_stream* s;
    if (r) return r;
    if (!status) return emu_leave(E_INVALID_VALUE);
    if ((r = emu_resolve_stream(h, (h && h != EMU_STREAM_LEGACY && h != EMU_STREAM_PER_THREAD) ? NULL
                                                                                            : emu_current_ctx(), &s)))
        return emu_leave(r);
    if (s->special == 1 && (r = emu_legacy_conflict(s->ctx, 0)) != E_OK) return emu_leave(r); /* rule 2.9 */
    *status = !s->cap ? STATUS_NONE : s->cap->invalidated ? STATUS_INVALIDATED : STATUS_ACTIVE;
    return emu_leave(E_OK);
}

EMU_API emu_result cuStreamGetCaptureInfo_v3(emu_stream* h, int* status, unsigned long long* id, emu_graph** graph,
                                             emu_node* const** deps, const emu_edge_data** edges, size_t* n) {
    static emu_edge_data* zeros;
    static size_t n_zeros;
    emu_result r = emu_enter();
    emu_stream* s;
    if (r) return r;
    if (!status || (edges && !deps)) return emu_leave(E_INVALID_VALUE); /* rule 2.10 */
    if ((r = emu_resolve_stream(h, (h && h != EMU_STREAM_LEGACY && h != EMU_STREAM_PER_THREAD) ? NULL
                                                                                            : emu_current_ctx(), &s)))
        return emu_leave(r);
    if (s->special == 1 && (r = emu_legacy_conflict(s->ctx, 0)) != E_OK) return emu_leave(r); /* rule 2.10 */
    *status = !s->cap ? STATUS_NONE : s->cap->invalidated ? STATUS_INVALIDATED : STATUS_ACTIVE;
    if (*status != STATUS_ACTIVE) return emu_leave(E_OK);
    if (id) *id = s->cap->id;
    if (graph) *graph = s->cap->graph;
    if (deps) *deps = s->cap_deps;
    if (n) *n = s->n_cap_deps;
    if (edges) {
        if (emu_grow((void**)&zeros, &n_zeros, s->n_cap_deps + 1, sizeof(emu_edge_data)) != 0)
            return emu_leave(E_OUT_OF_MEMORY);
        memset(zeros, 0, n_zeros * sizeof(emu_edge_data));
        *edges = zeros;
    }
    return emu_leave(E_OK);
}

EMU_API emu_result cuThreadExchangeStreamCaptureMode(int* mode) {
    int old;
    if (emu_tls_in_callback) return E_NOT_PERMITTED;
    if (!mode || *mode < CAPTURE_GLOBAL || *mode > CAPTURE_RELAXED) return E_INVALID_VALUE;
    old = emu_tls_capture_mode;
    emu_tls_capture_mode = *mode;
    *mode = old;
    return E_OK;
}

/* cuEventRecord on a capturing stream (rule 2.1): a captured event, or an event-record node (EXTERNAL). */
emu_result emu_capture_record(emu_stream* s, emu_event* e, unsigned int flags) {
    if (s->cap->invalidated) return E_CAPTURE_INVALIDATED;
    if (flags & EVENT_RECORD_EXTERNAL) {
        emu_work w;
        memset(&w, 0, sizeof w);
        w.type = W_EVENT_RECORD;
        w.event = e; /* event_gen 0: replay does not re-arm the event (A11) */
        return emu_capture_add(s, &w, NODE_EVENT_RECORD);
    }
    if (emu_grow((void**)&e->cap_nodes, &e->n_cap_nodes, s->n_cap_deps + 1, sizeof(emu_node*)) != 0)
        return E_OUT_OF_MEMORY;
    if (s->n_cap_deps) memcpy(e->cap_nodes, s->cap_deps, s->n_cap_deps * sizeof(emu_node*));
    e->n_cap_nodes = s->n_cap_deps;
    e->captured = 1;
    e->cap_id = s->cap->id;
    return E_OK;
}

/* cuEventQuery or cuEventSynchronize on an event last recorded in a capture (rule 2.8), in any mode: while
 * that capture is valid, 907 and the capture is invalidated; once it was invalidated or has ended (with a graph
 * or without), INVALID_VALUE until the event is recorded again outside capture (all observed on driver 580
 * (CUDA 13.0), H100, RELAXED captures, each call in a capture of its own). */
emu_result emu_captured_event_use(emu_event* e) {
    emu_capture* c = emu_capture_by_id(e->cap_id);
    if (!c || c->invalidated) return E_INVALID_VALUE;
    emu_capture_invalidate(c);
    return E_CAPTURED_EVENT;
}

/* cuStreamWaitEvent where the stream captures or the event was captured (rules 2.2-2.6). */
emu_result emu_capture_wait(emu_stream* s, emu_event* e, unsigned int flags) {
    size_t i, j, n;
    if (e->captured) {
        emu_capture* ce = emu_capture_by_id(e->cap_id);
        if (!ce) { /* recorded in a capture that has ended */
            if (!s->cap) return emu_captured_event_use(e);
            emu_capture_invalidate(s->cap);
            return E_CAPTURE_ISOLATION;
        }
        if (!s->cap) { /* fork: s joins the capture sequence */
            if (ce->invalidated) return E_INVALID_VALUE;
            if (emu_join_stream(ce, s) != 0 || emu_set_deps(s, e->cap_nodes, e->n_cap_nodes) != 0)
                return E_OUT_OF_MEMORY;
            return E_OK;
        }
        if (s->cap != ce) { /* rule 2.5 */
            emu_capture_invalidate(s->cap);
            emu_capture_invalidate(ce);
            return E_CAPTURE_MERGE;
        }
        if (s->cap->invalidated) return E_CAPTURE_INVALIDATED;
        n = s->n_cap_deps;
        if (emu_grow((void**)&s->cap_deps, &s->cap_cap_deps, n + e->n_cap_nodes, sizeof(emu_node*)) != 0)
            return E_OUT_OF_MEMORY;
        for (i = 0; i < e->n_cap_nodes; i++) { /* join: union of dependency sets */
            for (j = 0; j < n; j++)
                if (s->cap_deps[j] == e->cap_nodes[i]) break;
            if (j == n) s->cap_deps[s->n_cap_deps++] = e->cap_nodes[i];
            n = s->n_cap_deps;
        }
        return E_OK;
    }
    if (s->cap->invalidated) return E_CAPTURE_INVALIDATED;
    if (flags & EVENT_WAIT_EXTERNAL) {
        emu_work w;
        memset(&w, 0, sizeof w);
        w.type = W_EVENT_WAIT;
        w.event = e;
        return emu_capture_add(s, &w, NODE_WAIT_EVENT);
    }
    if (!e->recorded) return E_OK; /* A21: never recorded, no dependency */
    emu_capture_invalidate(s->cap); /* rule 2.6, A12 */
    return E_CAPTURE_ISOLATION;
}

/* ---------------------------------------------------------------- graph API */

EMU_API emu_result cuGraphCreate(emu_graph** pg, unsigned int flags) {
    emu_result r = emu_enter();
    if (r) return r;
    if (!pg || flags) return emu_leave(E_INVALID_VALUE);
    *pg = emu_graph_new();
    return emu_leave(*pg ? E_OK : E_OUT_OF_MEMORY);
}

EMU_API emu_result cuGraphDestroy(emu_graph* g) {
    emu_result r = emu_enter();
    if (r) return r;
    if (emu_handle_kind(g) != K_GRAPH) return emu_leave(E_INVALID_VALUE);
    if (g->capturing) return emu_leave(E_INVALID_VALUE); /* a graph being captured is owned by the driver */
    emu_graph_free(g);
    return emu_leave(E_OK);
}

static emu_result emu_check_deps(emu_graph* g, emu_node* const* deps, size_t n) {
    size_t i, j;
    if (n && !deps) return E_INVALID_VALUE;
    for (i = 0; i < n; i++) {
        if (emu_handle_kind(deps[i]) != K_NODE || deps[i]->graph != g) return E_INVALID_VALUE;
        for (j = 0; j < i; j++)
            if (deps[j] == deps[i]) return E_INVALID_VALUE;
    }
    return E_OK;
}

EMU_API emu_result cuGraphAddKernelNode_v2(emu_node** pn, emu_graph* g, emu_node* const* deps, size_t n,
                                           const emu_kernel_node_params* p) {
    emu_result r = emu_enter();
    unsigned int grid[3], block[3];
    emu_work w;
    if (r) return r;
    if (!pn || !p || emu_handle_kind(g) != K_GRAPH) return emu_leave(E_INVALID_VALUE);
    if ((r = emu_check_deps(g, deps, n)) != E_OK) return emu_leave(r);
    if (emu_handle_kind(p->func) != K_FUNC) return emu_leave(E_INVALID_VALUE);
    grid[0] = p->grid_x;
    grid[1] = p->grid_y;
    grid[2] = p->grid_z;
    block[0] = p->block_x;
    block[1] = p->block_y;
    block[2] = p->block_z;
    if ((r = emu_kernel_work(p->func, grid, block, p->shared, p->kernel_params, p->extra, &w)) != E_OK) {
        emu_work_free(&w);
        return emu_leave(r);
    }
    *pn = emu_graph_add(g, NODE_KERNEL, &w, deps, n);
    return emu_leave(*pn ? E_OK : E_OUT_OF_MEMORY);
}

EMU_API emu_result cuGraphAddEmptyNode(emu_node** pn, emu_graph* g, emu_node* const* deps, size_t n) {
    emu_result r = emu_enter();
    emu_work w;
    if (r) return r;
    if (!pn || emu_handle_kind(g) != K_GRAPH) return emu_leave(E_INVALID_VALUE);
    if ((r = emu_check_deps(g, deps, n)) != E_OK) return emu_leave(r);
    memset(&w, 0, sizeof w);
    w.type = W_EMPTY;
    *pn = emu_graph_add(g, NODE_EMPTY, &w, deps, n);
    return emu_leave(*pn ? E_OK : E_OUT_OF_MEMORY);
}

/* cuGraphGetNodes/GetRootNodes convention (rule 4.4): NULL array -> count; else fill, pad with NULL. An array
 * with room for 0 nodes is INVALID_VALUE (observed for cuGraphGetNodes on driver 580 (CUDA 13.0), H100, on a
 * graph being captured that had no node yet; [EMU] on any graph, and for the root nodes). */
static emu_result emu_list_nodes(emu_graph* g, emu_node** out, size_t* n, int roots_only) {
    size_t i, k = 0;
    if (!n || emu_handle_kind(g) != K_GRAPH || (out && *n == 0)) return E_INVALID_VALUE;
    for (i = 0; i < g->n; i++) {
        if (roots_only && g->nodes[i]->ndeps) continue;
        if (out && k < *n) out[k] = g->nodes[i];
        k++;
    }
    if (out)
        for (i = k; i < *n; i++) out[i] = NULL;
    *n = k;
    return E_OK;
}

EMU_API emu_result cuGraphGetNodes(emu_graph* g, emu_node** nodes, size_t* n) {
    emu_result r = emu_enter();
    return r ? r : emu_leave(emu_list_nodes(g, nodes, n, 0));
}

EMU_API emu_result cuGraphGetRootNodes(emu_graph* g, emu_node** nodes, size_t* n) {
    emu_result r = emu_enter();
    return r ? r : emu_leave(emu_list_nodes(g, nodes, n, 1));
}

static emu_result emu_list_edges(emu_graph* g, emu_node** from, emu_node** to, emu_edge_data* data, size_t* n) {
    size_t i, j, k = 0;
    if (!n || emu_handle_kind(g) != K_GRAPH || (!from) != (!to) || (data && !from)) return E_INVALID_VALUE;
    for (i = 0; i < g->n; i++)
        for (j = 0; j < g->nodes[i]->ndeps; j++) {
            if (from && k < *n) {
                from[k] = g->nodes[i]->deps[j];
                to[k] = g->nodes[i];
                if (data) memset(&data[k], 0, sizeof(emu_edge_data)); /* all edges are full dependencies */
            }
            k++;
        }
    if (from)
        for (i = k; i < *n; i++) {
            from[i] = NULL;
            to[i] = NULL;
        }
    *n = k;
    return E_OK;
}

EMU_API emu_result cuGraphGetEdges(emu_graph* g, emu_node** from, emu_node** to, size_t* n) {
    emu_result r = emu_enter();
    return r ? r : emu_leave(emu_list_edges(g, from, to, NULL, n));
}

EMU_API emu_result cuGraphGetEdges_v2(emu_graph* g, emu_node** from, emu_node** to, emu_edge_data* data, size_t* n) {
    emu_result r = emu_enter();
    return r ? r : emu_leave(emu_list_edges(g, from, to, data, n));
}

EMU_API emu_result cuGraphNodeGetType(emu_node* node, int* type) {
    emu_result r = emu_enter();
    if (r) return r;
    if (!type || emu_handle_kind(node) != K_NODE) return emu_leave(E_INVALID_VALUE);
    *type = node->type;
    return emu_leave(E_OK);
}

EMU_API emu_result cuGraphNodeGetDependencies_v2(emu_node* node, emu_node** deps, emu_edge_data* data, size_t* n) {
    emu_result r = emu_enter();
    size_t i;
    if (r) return r;
    if (!n || emu_handle_kind(node) != K_NODE || (data && !deps)) return emu_leave(E_INVALID_VALUE);
    if (deps) {
        for (i = 0; i < *n; i++) {
            deps[i] = i < node->ndeps ? node->deps[i] : NULL;
            if (data) memset(&data[i], 0, sizeof(emu_edge_data));
        }
    }
    *n = node->ndeps;
    return emu_leave(E_OK);
}

EMU_API emu_result cuGraphKernelNodeGetParams_v2(emu_node* node, emu_kernel_node_params* p) {
    emu_result r = emu_enter();
    if (r) return r;
    if (!p || emu_handle_kind(node) != K_NODE || node->type != NODE_KERNEL) return emu_leave(E_INVALID_VALUE);
    memset(p, 0, sizeof(*p));
    p->func = node->work.func;
    p->grid_x = node->work.grid.x;
    p->grid_y = node->work.grid.y;
    p->grid_z = node->work.grid.z;
    p->block_x = node->work.block.x;
    p->block_y = node->work.block.y;
    p->block_z = node->work.block.z;
    p->shared = node->work.shared;
    p->kernel_params = node->work.param_ptrs; /* node-owned copies (rule 3.2) */
    return emu_leave(E_OK);
}

/* ---------------------------------------------------------------- executable graphs */

void emu_xgraph_release(emu_xgraph* xg) {
    size_t i;
    if (--xg->refs > 0) return;
    for (i = 0; i < xg->n; i++) {
        emu_work_free(&xg->nodes[i].work);
        free(xg->nodes[i].succ);
    }
    free(xg->nodes);
    free(xg);
}

/* Snapshot of g (rule 4.1); NULL when out of memory or when g has a cycle (*cycle set). */
static emu_xgraph* emu_xgraph_build(const emu_graph* g, int* cycle) {
    emu_xgraph* xg = (emu_xgraph*)emu_xcalloc(1, sizeof(*xg));
    size_t i, j, *remaining, *queue, head = 0, tail = 0;
    *cycle = 0;
    if (!xg || !(xg->nodes = (emu_xnode*)emu_xcalloc(g->n, sizeof(emu_xnode)))) {
        free(xg);
        return NULL;
    }
    xg->refs = 1;
    xg->n = g->n;
    for (i = 0; i < g->n; i++) {
        emu_xnode* x = &xg->nodes[i];
        x->type = g->nodes[i]->type;
        x->npred = g->nodes[i]->ndeps;
        if (emu_work_copy(&x->work, &g->nodes[i]->work) != 0) {
            emu_xgraph_release(xg);
            return NULL;
        }
        for (j = 0; j < g->nodes[i]->ndeps; j++) {
            emu_xnode* p = &xg->nodes[g->nodes[i]->deps[j]->index];
            size_t* grown = (size_t*)realloc(p->succ, (p->nsucc + 1) * sizeof(size_t));
            if (!grown) {
                emu_xgraph_release(xg);
                return NULL;
            }
            p->succ = grown;
            p->succ[p->nsucc++] = i;
        }
    }
    remaining = (size_t*)emu_xcalloc(g->n, sizeof(size_t));
    queue = (size_t*)emu_xcalloc(g->n, sizeof(size_t));
    for (i = 0; remaining && queue && i < g->n; i++)
        if ((remaining[i] = xg->nodes[i].npred) == 0) queue[tail++] = i;
    while (remaining && queue && head < tail) { /* Kahn: every node reachable means no cycle */
        emu_xnode* x = &xg->nodes[queue[head++]];
        for (j = 0; j < x->nsucc; j++)
            if (--remaining[x->succ[j]] == 0) queue[tail++] = x->succ[j];
    }
    if (!remaining || !queue || tail != g->n) {
        *cycle = remaining && queue;
        emu_xgraph_release(xg);
        xg = NULL;
    }
    free(remaining);
    free(queue);
    return xg;
}

static void emu_exec_free(emu_exec* e) {
    size_t i;
    if (e->xg) emu_xgraph_release(e->xg);
    for (i = 0; i < e->n; i++) free(e->dep_index[i]);
    free(e->dep_index);
    free(e->ndeps);
    free(e->types);
    free(e);
}

static emu_result emu_instantiate(emu_exec** pe, emu_graph* g, unsigned long long flags, emu_node** err_node) {
    emu_exec* e;
    emu_ctx* ctx;
    size_t i, j;
    int cycle;
    emu_result r;
    if (!pe || emu_handle_kind(g) != K_GRAPH) return E_INVALID_VALUE;
    if ((r = emu_require_ctx(&ctx)) != E_OK) return r; /* [EMU] not in DRV's return list; the exec is of ctx */
    if ((flags & ~15ULL) || ((flags & 4) && (flags & 1))) return E_INVALID_VALUE; /* rule 4.1 */
    if (g->capturing) return E_INVALID_VALUE; /* not instantiable until the capture ends (2.12) */
    if (G.fail_instantiate > 0) { /* fault injection */
        G.fail_instantiate--;
        return E_OUT_OF_MEMORY;
    }
    e = (emu_exec*)emu_xcalloc(1, sizeof(*e));
    if (!e) return E_OUT_OF_MEMORY;
    e->ctx = ctx;
    e->source = g;
    e->flags = flags & ~2ULL;
    e->xg = emu_xgraph_build(g, &cycle);
    e->n = g->n;
    e->types = (int*)emu_xcalloc(g->n, sizeof(int));
    e->ndeps = (size_t*)emu_xcalloc(g->n, sizeof(size_t));
    e->dep_index = (size_t**)emu_xcalloc(g->n, sizeof(size_t*));
    if (!e->xg || !e->types || !e->ndeps || !e->dep_index) {
        if (cycle && err_node && g->n) *err_node = g->nodes[0];
        e->n = 0;
        emu_exec_free(e);
        return cycle ? E_INVALID_VALUE : E_OUT_OF_MEMORY;
    }
    for (i = 0; i < g->n; i++) { /* what cuGraphExecUpdate compares against */
        e->types[i] = g->nodes[i]->type;
        e->ndeps[i] = g->nodes[i]->ndeps;
        e->dep_index[i] = (size_t*)emu_xcalloc(g->nodes[i]->ndeps, sizeof(size_t));
        if (!e->dep_index[i]) {
            emu_exec_free(e);
            return E_OUT_OF_MEMORY;
        }
        for (j = 0; j < g->nodes[i]->ndeps; j++) e->dep_index[i][j] = g->nodes[i]->deps[j]->index;
    }
    emu_handle_add(e, K_EXEC);
    *pe = e;
    return E_OK;
}

EMU_API emu_result cuGraphInstantiateWithFlags(emu_exec** pe, emu_graph* g, unsigned long long flags) {
    emu_result r = emu_enter();
    if (r) return r;
    if (flags & 2) return emu_leave(E_INVALID_VALUE); /* UPLOAD is for cuGraphInstantiateWithParams only */
    return emu_leave(emu_instantiate(pe, g, flags, NULL));
}

EMU_API emu_result cuGraphInstantiateWithParams(emu_exec** pe, emu_graph* g, emu_instantiate_params* p) {
    emu_result r = emu_enter();
    emu_node* err = NULL;
    if (r) return r;
    if (!p) return emu_leave(E_INVALID_VALUE);
    r = emu_instantiate(pe, g, p->flags, &err);
    p->err_node = err;
    p->result = r == E_OK ? 0 : err ? 2 : 1; /* SUCCESS, INVALID_STRUCTURE, ERROR */
    return emu_leave(r);
}

EMU_API emu_result cuGraphExecDestroy(emu_exec* e) {
    emu_result r = emu_enter();
    if (r) return r;
    if (emu_handle_kind(e) != K_EXEC) return emu_leave(E_INVALID_VALUE);
    emu_handle_del(e);
    emu_exec_free(e); /* in-flight launches keep their own reference to the snapshot (rule 4.2) */
    return emu_leave(E_OK);
}

/* Launch and upload need the exec's context current [EMU: DRV's return lists have no INVALID_CONTEXT; 201
 * without a context, INVALID_HANDLE for another context's exec or stream, as for the other handles]. */
static emu_result emu_graph_submit(emu_exec* e, emu_stream* h, int upload) {
    emu_stream* s;
    emu_work w;
    emu_result r;
    emu_ctx* ctx;
    if (emu_handle_kind(e) != K_EXEC) return E_INVALID_VALUE;
    if ((r = emu_require_owner(e->ctx, &ctx)) != E_OK) return r;
    if ((r = emu_resolve_stream(h, ctx, &s)) != E_OK) return r;
    if (s->cap) { /* A9: observed 900 */
        emu_capture_invalidate(s->cap);
        return E_CAPTURE_UNSUPPORTED;
    }
    if (e->ctx->sticky) return e->ctx->sticky;
    memset(&w, 0, sizeof w);
    w.type = upload ? W_EMPTY : W_GRAPH;
    if (!upload) {
        w.xgraph = e->xg;
        e->xg->refs++;
    }
    /* each launch is ordered behind the previous launch of the same exec (rule 4.2) */
    if ((r = emu_submit(s, &w, e->last_launch.stream ? &e->last_launch : NULL)) != E_OK) return r;
    e->last_launch.stream = s;
    e->last_launch.seq = s->enq_seq;
    return E_OK;
}

EMU_API emu_result cuGraphLaunch(emu_exec* e, emu_stream* s) {
    emu_result r = emu_enter();
    return r ? r : emu_leave(emu_graph_submit(e, s, 0));
}

EMU_API emu_result cuGraphUpload(emu_exec* e, emu_stream* s) {
    emu_result r = emu_enter();
    return r ? r : emu_leave(emu_graph_submit(e, s, 1));
}

/* Rule 4.3: nodes pair by creation order; any difference in count, type or dependencies fails. */
EMU_API emu_result cuGraphExecUpdate_v2(emu_exec* e, emu_graph* g, emu_update_info* info) {
    emu_result r = emu_enter();
    emu_xgraph* xg;
    size_t i, j;
    int cycle;
    if (r) return r;
    if (!info || emu_handle_kind(e) != K_EXEC || emu_handle_kind(g) != K_GRAPH) return emu_leave(E_INVALID_VALUE);
    info->result = UPDATE_SUCCESS;
    info->error_node = NULL;
    info->error_from_node = NULL;
    if (g->n != e->n) info->result = UPDATE_TOPOLOGY_CHANGED;
    for (i = 0; i < g->n && info->result == UPDATE_SUCCESS; i++) {
        emu_node* node = g->nodes[i];
        info->error_node = node;
        if (node->type != e->types[i]) info->result = UPDATE_NODE_TYPE_CHANGED;
        else if (node->ndeps != e->ndeps[i]) info->result = UPDATE_TOPOLOGY_CHANGED;
        for (j = 0; j < node->ndeps && info->result == UPDATE_SUCCESS; j++)
            if (node->deps[j]->index != e->dep_index[i][j]) {
                info->result = UPDATE_TOPOLOGY_CHANGED;
                info->error_from_node = node->deps[j];
            }
        if (info->result == UPDATE_SUCCESS && node->type == NODE_KERNEL && node->work.func->module &&
            node->work.func->module->ctx != e->ctx)
            info->result = UPDATE_UNSUPPORTED_FUNCTION_CHANGE;
    }
    if (info->result != UPDATE_SUCCESS) return emu_leave(E_GRAPH_EXEC_UPDATE_FAILURE); /* exec unchanged */
    info->error_node = NULL;
    xg = emu_xgraph_build(g, &cycle);
    if (!xg) return emu_leave(E_OUT_OF_MEMORY);
    emu_xgraph_release(e->xg); /* launches in flight keep the old snapshot (PG-G §4.2.3) */
    e->xg = xg;
    return emu_leave(E_OK);
}

/* ---------------------------------------------------------------- graph execution */

typedef struct emu_graph_run {
    const emu_xgraph* xg;
    emu_ctx* ctx;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    size_t *remaining, *ready, n_ready, done;
    unsigned long long rng;
} emu_graph_run;

static void emu_graph_run_loop(emu_graph_run* run) {
    pthread_mutex_lock(&run->mu);
    while (run->done < run->xg->n) {
        size_t k, i, j;
        unsigned long long seed;
        if (run->n_ready == 0) {
            pthread_cond_wait(&run->cv, &run->mu);
            continue;
        }
        run->rng = emu_mix(run->rng);
        k = (size_t)(run->rng % run->n_ready); /* any ready node may go next */
        i = run->ready[k];
        run->ready[k] = run->ready[--run->n_ready];
        seed = run->rng;
        pthread_mutex_unlock(&run->mu);
        emu_work_execute(run->ctx, &run->xg->nodes[i].work, seed);
        pthread_mutex_lock(&run->mu);
        run->done++;
        for (j = 0; j < run->xg->nodes[i].nsucc; j++) {
            size_t s = run->xg->nodes[i].succ[j];
            if (--run->remaining[s] == 0) run->ready[run->n_ready++] = s;
        }
        pthread_cond_broadcast(&run->cv);
    }
    pthread_mutex_unlock(&run->mu);
}

static void* emu_graph_helper(void* arg) {
    emu_graph_run_loop((emu_graph_run*)arg);
    emu_exec_release();
    return NULL;
}

void emu_xgraph_run(emu_ctx* ctx, const emu_xgraph* xg, unsigned long long seed) {
    emu_graph_run run;
    pthread_t helpers[16];
    int threads, i, started = 0;
    size_t k;
    memset(&run, 0, sizeof run);
    run.xg = xg;
    run.ctx = ctx;
    run.rng = seed;
    run.remaining = (size_t*)emu_xcalloc(xg->n, sizeof(size_t));
    run.ready = (size_t*)emu_xcalloc(xg->n, sizeof(size_t));
    if (!run.remaining || !run.ready) {
        free(run.remaining);
        free(run.ready);
        ctx->sticky = E_OUT_OF_MEMORY;
        return;
    }
    for (k = 0; k < xg->n; k++)
        if ((run.remaining[k] = xg->nodes[k].npred) == 0) run.ready[run.n_ready++] = k;
    pthread_mutex_init(&run.mu, NULL);
    pthread_cond_init(&run.cv, NULL);
    pthread_mutex_lock(&emu_mu);
    threads = G.graph_threads;
    pthread_mutex_unlock(&emu_mu);
    if (threads > 16) threads = 16;
    for (i = 1; i < threads; i++)
        if (pthread_create(&helpers[started], NULL, emu_graph_helper, &run) == 0) started++;
    emu_graph_run_loop(&run);
    for (i = 0; i < started; i++) pthread_join(helpers[i], NULL);
    pthread_mutex_destroy(&run.mu);
    pthread_cond_destroy(&run.cv);
    free(run.remaining);
    free(run.ready);
}
