/* Reachability on the DAG of a finalized graph: the transitive closure as bitsets, single
   queries, and the exact maximum antichain (the parallelism a schedule can exploit). */
#include "../model/opara_model.h"

OPARA__PRIVATE opara_result opara__closure_build(opara_runtime* rt, const opara__graph* g, opara__closure* out) {
    uint32_t i, k, words;
    size_t cells;
    memset(out, 0, sizeof *out);
    if (!g->finalized) return opara__fail(rt, OPARA_ERR_INVALID_STATE, "closure: the graph is not finalized");
    if (g->n_nodes > OPARA__CLOSURE_MAX_NODES)
        return opara__fail(rt, OPARA_ERR_LIMIT_EXCEEDED, "closure: %u nodes (at most %u)", g->n_nodes,
                           OPARA__CLOSURE_MAX_NODES);
    words = (g->n_nodes + 63) / 64;
    if (!opara__mul_size(g->n_nodes, words, &cells)) return opara__fail(rt, OPARA_ERR_LIMIT_EXCEEDED, "closure too big");
    out->bits = (uint64_t*)opara__calloc(rt, cells ? cells : 1, sizeof(uint64_t));
    if (!out->bits) return opara__fail(rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory for a %u-node closure", g->n_nodes);
    out->n = g->n_nodes;
    out->words = words;
    /* Reverse topological order: every successor's row is complete before it is merged. */
    for (i = g->n_nodes; i-- > 0;) {
        uint32_t u = g->topo[i];
        uint64_t* row = out->bits + (size_t)u * words;
        for (k = g->succ_start[u]; k < g->succ_start[u + 1]; ++k) {
            uint32_t s = g->succs[k], w;
            const uint64_t* srow = out->bits + (size_t)s * words;
            row[s / 64] |= (uint64_t)1 << (s % 64);
            for (w = 0; w < words; ++w) row[w] |= srow[w];
        }
    }
    return OPARA_OK;
}

OPARA__PRIVATE void opara__closure_free(opara_runtime* rt, opara__closure* c) {
    opara__free(rt, c->bits);
    memset(c, 0, sizeof *c);
}

OPARA__PRIVATE int opara__closure_reaches(const opara__closure* c, uint32_t a, uint32_t b) {
    if (a >= c->n || b >= c->n) return 0;
    return (int)((c->bits[(size_t)a * c->words + b / 64] >> (b % 64)) & 1u);
}

OPARA__PRIVATE_TOOL int opara__graph_reaches(const opara__graph* g, uint32_t a, uint32_t b) {
    uint32_t *stack, *seen, top = 0, k;
    int found = 0;
    if (!g->finalized) return OPARA_ERR_INVALID_STATE;
    if (a >= g->n_nodes || b >= g->n_nodes) return OPARA_ERR_BAD_INDEX;
    stack = (uint32_t*)opara__calloc(g->rt, (size_t)g->n_nodes + 1, sizeof(uint32_t));
    seen = (uint32_t*)opara__calloc(g->rt, (size_t)g->n_nodes / 32 + 1, sizeof(uint32_t));
    if (!stack || !seen) {
        opara__free(g->rt, stack);
        opara__free(g->rt, seen);
        return OPARA_ERR_OUT_OF_MEMORY;
    }
    stack[top++] = a;
    while (top && !found) {
        uint32_t u = stack[--top];
        for (k = g->succ_start[u]; k < g->succ_start[u + 1]; ++k) {
            uint32_t s = g->succs[k];
            if (s == b) found = 1;
            if (seen[s / 32] & (1u << (s % 32))) continue;
            seen[s / 32] |= 1u << (s % 32);
            stack[top++] = s;
        }
    }
    opara__free(g->rt, stack);
    opara__free(g->rt, seen);
    return found;
}

/* ---- maximum antichain ----------------------------------------------------------------------
   Dilworth: in a finite poset the largest antichain equals the smallest number of chains
   covering it. With the poset's comparability (the closure) as a bipartite graph L -> R
   (u_L -> v_R when u reaches v), a minimum chain cover has n - |maximum matching| chains.
   The matching is found with Hopcroft-Karp; one antichain of that size is read off the König
   vertex cover: with Z = the vertices reachable from unmatched left vertices by alternating
   paths, the minimum cover is (L \ Z) + (R & Z), and the nodes v with v_L in Z and v_R not in
   Z form a maximum antichain. */

typedef struct opara__matching {
    uint32_t n;
    const uint32_t* adj_start;
    const uint32_t* adj;
    uint32_t* match_l; /* right partner of each left vertex, n when free */
    uint32_t* match_r;
    uint32_t* dist;
    uint32_t* queue;
    uint32_t* iter;    /* next adjacency position per left vertex (iterative DFS) */
    uint32_t* stack;
} opara__matching;

#define OPARA__INF 0xFFFFFFFFu

static int opara__hk_bfs(opara__matching* m) {
    uint32_t head = 0, tail = 0, u, k;
    int found = 0;
    for (u = 0; u < m->n; ++u) {
        if (m->match_l[u] == m->n) {
            m->dist[u] = 0;
            m->queue[tail++] = u;
        } else {
            m->dist[u] = OPARA__INF;
        }
    }
    while (head < tail) {
        u = m->queue[head++];
        for (k = m->adj_start[u]; k < m->adj_start[u + 1]; ++k) {
            uint32_t w = m->match_r[m->adj[k]];
            if (w == m->n) found = 1;
            else if (m->dist[w] == OPARA__INF) {
                m->dist[w] = m->dist[u] + 1;
                m->queue[tail++] = w;
            }
        }
    }
    return found;
}

/* Iterative DFS along the BFS layers from free left vertex root; augments on success. */
static int opara__hk_dfs(opara__matching* m, uint32_t root) {
    uint32_t depth = 0;
    m->stack[depth++] = root;
    while (depth) {
        uint32_t u = m->stack[depth - 1];
        if (m->iter[u] == m->adj_start[u + 1]) {
            m->dist[u] = OPARA__INF;
            --depth;
            continue;
        }
        {
            uint32_t v = m->adj[m->iter[u]];
            uint32_t w = m->match_r[v];
            if (w == m->n) { /* augment along the stack */
                uint32_t i;
                for (i = depth; i-- > 0;) {
                    uint32_t x = m->stack[i];
                    uint32_t vx = m->adj[m->iter[x]];
                    m->match_l[x] = vx;
                    m->match_r[vx] = x;
                }
                return 1;
            }
            if (m->dist[w] == m->dist[u] + 1) {
                m->stack[depth++] = w;
                continue;
            }
            m->iter[u]++;
        }
    }
    return 0;
}

static uint32_t opara__hk_run(opara__matching* m) {
    uint32_t size = 0, u;
    while (opara__hk_bfs(m)) {
        for (u = 0; u < m->n; ++u) m->iter[u] = m->adj_start[u];
        for (u = 0; u < m->n; ++u)
            if (m->match_l[u] == m->n && opara__hk_dfs(m, u)) ++size;
    }
    return size;
}

/* Marks Z (alternating reachability from free left vertices): zl/zr flags. */
static void opara__konig(const opara__matching* m, uint8_t* zl, uint8_t* zr) {
    uint32_t head = 0, tail = 0, u, k;
    for (u = 0; u < m->n; ++u)
        if (m->match_l[u] == m->n) {
            zl[u] = 1;
            m->queue[tail++] = u;
        }
    while (head < tail) {
        u = m->queue[head++];
        for (k = m->adj_start[u]; k < m->adj_start[u + 1]; ++k) {
            uint32_t v = m->adj[k], w = m->match_r[v];
            if (zr[v]) continue;
            zr[v] = 1;
            if (w != m->n && !zl[w]) {
                zl[w] = 1;
                m->queue[tail++] = w;
            }
        }
    }
}

static opara_result opara__adjacency_from_closure(opara_runtime* rt, const opara__closure* c, uint32_t** start,
                                                  uint32_t** adj) {
    uint32_t u, v;
    size_t total = 0;
    *start = (uint32_t*)opara__calloc(rt, (size_t)c->n + 1, sizeof(uint32_t));
    if (!*start) return OPARA_ERR_OUT_OF_MEMORY;
    for (u = 0; u < c->n; ++u)
        for (v = 0; v < c->n; ++v) total += (size_t)opara__closure_reaches(c, u, v);
    if (total > 0xFFFFFFF0u) return OPARA_ERR_LIMIT_EXCEEDED;
    *adj = (uint32_t*)opara__calloc(rt, total + 1, sizeof(uint32_t));
    if (!*adj) return OPARA_ERR_OUT_OF_MEMORY;
    total = 0;
    for (u = 0; u < c->n; ++u) {
        (*start)[u] = (uint32_t)total;
        for (v = 0; v < c->n; ++v)
            if (opara__closure_reaches(c, u, v)) (*adj)[total++] = v;
    }
    (*start)[c->n] = (uint32_t)total;
    return OPARA_OK;
}

OPARA__PRIVATE_TOOL opara_result opara__graph_max_width(opara_runtime* rt, const opara__graph* g, uint32_t* width,
                                                  uint32_t* antichain) {
    opara__closure c;
    opara__matching m;
    uint32_t *start = NULL, *adj = NULL, *scratch = NULL, n = g->n_nodes, u, count = 0;
    uint8_t* z = NULL;
    opara_result r;
    *width = 0;
    r = opara__closure_build(rt, g, &c);
    if (r != OPARA_OK) return r;
    r = opara__adjacency_from_closure(rt, &c, &start, &adj);
    opara__closure_free(rt, &c);
    scratch = (uint32_t*)opara__calloc(rt, (size_t)n * 6 + 1, sizeof(uint32_t));
    z = (uint8_t*)opara__calloc(rt, (size_t)n * 2 + 1, 1);
    if (r == OPARA_OK && (!scratch || !z)) r = OPARA_ERR_OUT_OF_MEMORY;
    if (r == OPARA_OK) {
        memset(&m, 0, sizeof m);
        m.n = n;
        m.adj_start = start;
        m.adj = adj;
        m.match_l = scratch;
        m.match_r = scratch + n;
        m.dist = scratch + 2 * (size_t)n;
        m.queue = scratch + 3 * (size_t)n;
        m.iter = scratch + 4 * (size_t)n;
        m.stack = scratch + 5 * (size_t)n;
        for (u = 0; u < 2 * n; ++u) scratch[u] = n;
        *width = n - opara__hk_run(&m);
        opara__konig(&m, z, z + n);
        for (u = 0; u < n; ++u)
            if (z[u] && !z[n + u]) {
                if (antichain) antichain[count] = u;
                ++count;
            }
        if (count != *width) r = opara__fail(rt, OPARA_ERR_INTERNAL, "antichain size %u != width %u", count, *width);
    } else {
        r = opara__fail(rt, r, "out of memory computing the width of a %u-node graph", n);
    }
    opara__free(rt, start);
    opara__free(rt, adj);
    opara__free(rt, scratch);
    opara__free(rt, z);
    return r;
}
