/* The CPU executor: the plan's streams become worker threads, its events per-node completion
   marks, its arena one allocation; large operators are split across idle workers. */
#include "opara_cpu.h"
#include "../plan/opara_backend.h"

#if defined(__SSE__) || defined(_M_X64) || (defined(_M_IX86_FP) && _M_IX86_FP >= 1)
#  include <xmmintrin.h>
/* Denormal floats make SSE/AVX arithmetic many times slower (a BERT MatMul ran 6x slower on
   them); during a run every worker flushes them to zero (FTZ) and reads them as zero (DAZ).
   Returns the caller's MXCSR to restore. */
static unsigned opara__exec_fp_enter(void) {
    unsigned old = _mm_getcsr();
    _mm_setcsr(old | 0x8040u);
    return old;
}
static void opara__exec_fp_leave(unsigned old) { _mm_setcsr(old); }
#else
static unsigned opara__exec_fp_enter(void) { return 0; }
static void opara__exec_fp_leave(unsigned old) { (void)old; }
#endif

#if defined(__SSE2__) || defined(_M_X64)
#  include <emmintrin.h>
static void opara__exec_relax(void) { _mm_pause(); }
#else
static void opara__exec_relax(void) {}
#endif

/* How long an idle worker spins during a run (watching for ready nodes and open chunks) before it
   sleeps on the condition variable: a futex wake-up costs tens of microseconds, on a loaded
   machine a sleeping thread may wait a whole time slice for a core, and in a virtual machine whose
   vCPU halted a wake-up took milliseconds (GoogLeNet on 2 threads, runs 50 ms apart: median 13.8 ms
   with 0.1 ms of spinning, 9.1 ms with 5 ms; 7.9 ms back to back either way). With more workers
   than CPUs a spinning worker takes time from a busy one, so they spin only the short while.
   Between runs workers sleep at once. */
#define OPARA__SPIN_NS 5000000u
#define OPARA__SPIN_SHORT_NS 100000u
/* Multiply-adds above which an operator is worth all workers: an idle worker joins it before
   starting another ready operator (intra-op for big operators, inter-op for small ones). */
#define OPARA__BIG_WORK 33554432.0
/* Chunks per worker a split operator is cut into (dynamic load balancing), and the most chunks
   one operator may have (they are counted in the low 16 bits of its claim word). */
#define OPARA__CHUNKS_PER_WORKER 4
#define OPARA__MAX_CHUNKS 0xffff

typedef struct opara__cpu_worker_arg {
    opara__cpu_exec* ex;
    uint32_t index;
} opara__cpu_worker_arg;

struct opara__cpu_exec {
    opara_runtime* rt;
    const opara__graph* g;
    const opara__plan* plan;
    opara__blas blas;
    opara__cpu_op* ops;          /* [n_nodes] */
    opara__cpu_tensor* tensors;  /* every node's inputs then outputs */
    uint8_t* arena;
    uint8_t* inputs_block;       /* static buffers of the graph inputs */
    void** value_ptr;            /* [n_values] */
    uint8_t* skip;               /* [n_nodes] kernel-less views */
    float* scratch;              /* n_workers slices of scratch_floats */
    size_t scratch_floats;
    int pack_weights;            /* repack constant GEMM weights at creation */
    int pin_workers;             /* worker threads bind themselves to one CPU each */
    uint64_t spin_ns;            /* how long an idle worker spins in a run (OPARA__SPIN_NS) */
    uint64_t packed_bytes;       /* constant weights repacked for the GEMM (opara__exec_pack_weights) */
    uint32_t n_workers;
    opara__thread* threads;      /* [n_workers - 1] */
    opara__cpu_worker_arg* args; /* [n_workers - 1] */
    int threads_started;
    /* the plan's happens-before as dependency counts: a node's prerequisites are its stream
       predecessor and the nodes whose events it waits on */
    uint32_t* pending_init;      /* [n_nodes] number of prerequisites */
    uint32_t* dep_start;         /* [n_nodes + 1] CSR: the nodes that have n as a prerequisite */
    uint32_t* deps;
    const double* rank;          /* [n_nodes] the plan's priority (its critical path from the node to the end) */
    uint8_t* big;                /* [n_nodes] at least OPARA__BIG_WORK */
    int32_t* n_chunks;           /* [n_nodes] 0: nothing to run; 1: run whole */
    size_t* chunk_items;         /* [n_nodes] work items per chunk */
    /* run state guarded by mu */
    opara__mutex mu;
    opara__cond cv;
    uint32_t* pending;           /* [n_nodes] unfinished prerequisites */
    uint32_t* heap;              /* [n_nodes] ready nodes not yet started, best first */
    uint32_t heap_n;
    uint32_t completed;          /* nodes finished in this run */
    /* lock-free run state */
    volatile int32_t generation; /* number of the current run */
    volatile int32_t shutdown;
    volatile int32_t error;      /* first kernel error of the run */
    volatile int32_t error_node; /* its node + 1 (0: none yet) */
    volatile int32_t sleepers;   /* threads inside cond_wait (or about to be) */
    volatile int32_t version;    /* bumped whenever work may have appeared or the run ended */
    volatile int32_t* claim;     /* [n_nodes] run stamp << 16 | next unclaimed chunk (split nodes) */
    volatile int32_t* left;      /* [n_nodes] chunks not finished yet (split nodes) */
    volatile int32_t* open;      /* [n_workers] 1 + the split node the worker started, or 0 */
    uint64_t run_start;
    uint64_t *t_start, *t_end;
    uint32_t* t_worker;
};

/* ---- synchronisation -----------------------------------------------------------------------
   Streams are the unit of ordering, not workers: a node becomes ready once its stream
   predecessor and every node it waits on (the plan's events) have finished, so every
   happens-before edge the plan (and its memory reuse) relies on holds, whatever the number of
   streams or workers. Any worker takes the ready node with the most estimated work between it
   and the end of the graph (list scheduling by critical path; ties: launch order). A node with
   enough work items is cut into chunks that any idle worker may claim; whoever finishes the last
   chunk completes the node, so no worker ever waits for another one's chunk (which stalls when
   that worker is preempted on a loaded machine). */

static uint32_t opara__exec_node_count(const opara__cpu_exec* ex) { return ex->g->n_nodes; }

static int32_t opara__exec_stamp(int32_t gen) { return (int32_t)(((uint32_t)gen & 0x7fffu) << 16); }

/* Caller holds mu. Work may have appeared: spinners see the version change, sleepers are woken. */
static void opara__exec_signal(opara__cpu_exec* ex) {
    opara__atomic_add(&ex->version, 1);
    if (opara__atomic_load(&ex->sleepers) != 0) opara__cond_broadcast(&ex->cv);
}

static void opara__exec_note_error(opara__cpu_exec* ex, uint32_t n, opara_result r) {
    if (r != OPARA_OK && opara__atomic_cas(&ex->error, 0, (int32_t)r)) opara__atomic_store(&ex->error_node, (int32_t)n + 1);
}

/* Ready heap (caller holds mu): higher rank first, then earlier launch position. */
static int opara__exec_before(const opara__cpu_exec* ex, uint32_t a, uint32_t b) {
    if (ex->rank[a] != ex->rank[b]) return ex->rank[a] > ex->rank[b];
    return ex->plan->position[a] < ex->plan->position[b];
}

static void opara__exec_heap_push(opara__cpu_exec* ex, uint32_t n) {
    uint32_t i = ex->heap_n++;
    while (i > 0 && opara__exec_before(ex, n, ex->heap[(i - 1) / 2])) {
        ex->heap[i] = ex->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    ex->heap[i] = n;
}

static int64_t opara__exec_heap_pop(opara__cpu_exec* ex) {
    uint32_t top, last, i = 0;
    if (ex->heap_n == 0) return -1;
    top = ex->heap[0];
    last = ex->heap[--ex->heap_n];
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= ex->heap_n) break;
        if (c + 1 < ex->heap_n && opara__exec_before(ex, ex->heap[c + 1], ex->heap[c])) ++c;
        if (!opara__exec_before(ex, ex->heap[c], last)) break;
        ex->heap[i] = ex->heap[c];
        i = c;
    }
    ex->heap[i] = last;
    return (int64_t)top;
}

/* Node n has finished: release the nodes that wait for it. Wakes sleepers only when there is
   more ready work than the calling worker is about to take itself. */
static void opara__exec_complete(opara__cpu_exec* ex, uint32_t n) {
    uint32_t k;
    ex->t_end[n] = opara__now_ns() - ex->run_start;
    opara__mutex_lock(&ex->mu);
    for (k = ex->dep_start[n]; k < ex->dep_start[n + 1]; ++k)
        if (--ex->pending[ex->deps[k]] == 0) opara__exec_heap_push(ex, ex->deps[k]);
    ex->completed++;
    if (ex->heap_n > 1 || ex->completed == opara__exec_node_count(ex)) opara__exec_signal(ex);
    else opara__atomic_add(&ex->version, 1);
    opara__mutex_unlock(&ex->mu);
}

/* Claims the next chunk of split node n in the run stamped `stamp`; -1 when none is left (or
   the node has not been started in this run). */
static int32_t opara__exec_claim(opara__cpu_exec* ex, uint32_t n, int32_t stamp) {
    for (;;) {
        int32_t v = opara__atomic_load(&ex->claim[n]);
        if ((v & ~0xffff) != stamp || (v & 0xffff) >= ex->n_chunks[n]) return -1;
        if (opara__atomic_cas(&ex->claim[n], v, v + 1)) return v & 0xffff;
    }
}

/* Runs chunks of split node n until none is left to claim; returns 1 if it ran any. */
static int opara__exec_chunks(opara__cpu_exec* ex, uint32_t w, uint32_t n, int32_t stamp) {
    const opara__cpu_op* op = &ex->ops[n];
    float* scratch = ex->scratch + (size_t)w * ex->scratch_floats;
    int worked = 0;
    for (;;) {
        int32_t c = opara__exec_claim(ex, n, stamp);
        size_t b, e;
        if (c < 0) return worked;
        b = (size_t)c * ex->chunk_items[n];
        e = OPARA__MIN(op->work_items, b + ex->chunk_items[n]);
        opara__exec_note_error(ex, n, op->fn(op, b, e, scratch));
        worked = 1;
        if (opara__atomic_add(&ex->left[n], -1) == 0) opara__exec_complete(ex, n);
    }
}

/* The split node with unclaimed chunks and the highest rank (only big ones when big_only), or -1. */
static int64_t opara__exec_find_open(opara__cpu_exec* ex, int32_t stamp, int big_only) {
    int64_t best = -1;
    uint32_t k;
    for (k = 0; k < ex->n_workers; ++k) {
        int32_t v = opara__atomic_load(&ex->open[k]), c;
        uint32_t n;
        if (v <= 0) continue;
        n = (uint32_t)(v - 1);
        if (big_only && !ex->big[n]) continue;
        c = opara__atomic_load(&ex->claim[n]);
        if ((c & ~0xffff) != stamp || (c & 0xffff) >= ex->n_chunks[n]) continue;
        if (best < 0 || ex->rank[n] > ex->rank[best]) best = (int64_t)n;
    }
    return best;
}

static int opara__exec_help(opara__cpu_exec* ex, uint32_t w, int32_t stamp, int big_only) {
    int64_t n = opara__exec_find_open(ex, stamp, big_only);
    return n >= 0 && opara__exec_chunks(ex, w, (uint32_t)n, stamp);
}

/* Worker w starts ready node n: whole, or published for splitting and worked on until every
   chunk is claimed (the last chunk to finish, on whichever worker, completes the node). */
static void opara__exec_start(opara__cpu_exec* ex, uint32_t w, uint32_t n, int32_t stamp) {
    int32_t chunks = ex->n_chunks[n];
    ex->t_start[n] = opara__now_ns() - ex->run_start;
    ex->t_worker[n] = w;
    if (chunks <= 1) {
        if (chunks == 1)
            opara__exec_note_error(ex, n, ex->ops[n].fn(&ex->ops[n], 0, ex->ops[n].work_items,
                                                        ex->scratch + (size_t)w * ex->scratch_floats));
        opara__exec_complete(ex, n);
        return;
    }
    opara__atomic_store(&ex->left[n], chunks);
    opara__atomic_store(&ex->claim[n], stamp);
    opara__atomic_store(&ex->open[w], (int32_t)n + 1);
    if (opara__atomic_load(&ex->sleepers) != 0) {
        opara__mutex_lock(&ex->mu);
        opara__exec_signal(ex);
        opara__mutex_unlock(&ex->mu);
    }
    opara__exec_chunks(ex, w, n, stamp);
    opara__atomic_store(&ex->open[w], 0);
}

/* Nothing to do: spin a while watching for new work, then sleep until a node is released, a
   split node is published, or the run ends. `seen` is the version read before looking. */
static void opara__exec_idle(opara__cpu_exec* ex, int32_t gen, int32_t seen) {
    int32_t stamp = opara__exec_stamp(gen);
    uint64_t t0 = opara__now_ns();
    uint32_t spins = 0;
    for (;;) {
        if (opara__atomic_load(&ex->version) != seen || opara__exec_find_open(ex, stamp, 0) >= 0) return;
        opara__exec_relax();
        if ((++spins & 63u) == 0 && opara__now_ns() - t0 > ex->spin_ns) break;
    }
    opara__mutex_lock(&ex->mu);
    opara__atomic_add(&ex->sleepers, 1);
    while (opara__atomic_load(&ex->version) == seen && opara__atomic_load(&ex->generation) == gen &&
           opara__exec_find_open(ex, stamp, 0) < 0)
        opara__cond_wait(&ex->cv, &ex->mu);
    opara__atomic_add(&ex->sleepers, -1);
    opara__mutex_unlock(&ex->mu);
}

/* Worker w's part of run gen: take ready nodes (or help split ones) until every node of the run
   has finished. */
static void opara__exec_loop(opara__cpu_exec* ex, uint32_t w, int32_t gen) {
    int32_t stamp = opara__exec_stamp(gen);
    for (;;) {
        int32_t seen;
        int64_t n;
        if (opara__exec_help(ex, w, stamp, 1)) continue;
        seen = opara__atomic_load(&ex->version);
        opara__mutex_lock(&ex->mu);
        if (opara__atomic_load(&ex->generation) != gen || ex->completed >= opara__exec_node_count(ex)) {
            opara__mutex_unlock(&ex->mu);
            return;
        }
        n = opara__exec_heap_pop(ex);
        opara__mutex_unlock(&ex->mu);
        if (n >= 0) opara__exec_start(ex, w, (uint32_t)n, stamp);
        else if (!opara__exec_help(ex, w, stamp, 0)) opara__exec_idle(ex, gen, seen);
    }
}

/* The next CPU slot a bound worker takes, process-wide: slot 0 is left to the calling threads. */
static volatile int32_t opara__pin_next;

static void opara__exec_worker_main(void* p) {
    opara__cpu_worker_arg* arg = (opara__cpu_worker_arg*)p;
    opara__cpu_exec* ex = arg->ex;
    int32_t last = 0;
    /* Bound, a woken worker runs on its own CPU: in a virtual machine a worker woken after an idle
       spell was otherwise queued behind the caller on the caller's CPU for milliseconds (SqueezeNet
       on 2 threads, runs 50 ms apart: 4.7 ms unbound, 2.9 ms bound, 2.3 ms back to back). */
    if (ex->pin_workers) opara__thread_pin_self((uint32_t)opara__atomic_add(&opara__pin_next, 1));
    for (;;) {
        int32_t gen;
        unsigned fp;
        opara__mutex_lock(&ex->mu);
        opara__atomic_add(&ex->sleepers, 1);
        while (opara__atomic_load(&ex->generation) == last && !opara__atomic_load(&ex->shutdown))
            opara__cond_wait(&ex->cv, &ex->mu);
        opara__atomic_add(&ex->sleepers, -1);
        gen = opara__atomic_load(&ex->generation);
        opara__mutex_unlock(&ex->mu);
        if (opara__atomic_load(&ex->shutdown)) return;
        last = gen;
        fp = opara__exec_fp_enter();
        opara__exec_loop(ex, arg->index, gen);
        opara__exec_fp_leave(fp);
    }
}

/* After a run (workers idle): names the failing node and lets its kernel say what went wrong. */
static opara_result opara__exec_report_error(const opara__cpu_exec* ex, opara_result e, char* err, size_t err_cap) {
    int32_t at = opara__atomic_load((volatile int32_t*)&ex->error_node);
    char detail[192];
    const opara__cpu_op* op;
    if (at <= 0 || (uint32_t)at > opara__exec_node_count(ex))
        return opara__cpu_reject(err, err_cap, e, "a kernel failed during the run: %s", opara_result_string(e));
    op = &ex->ops[at - 1];
    detail[0] = 0;
    opara__cpu_explain_error(op, detail, sizeof detail);
    return opara__cpu_reject(err, err_cap, e, "node %d '%s' (%s) failed during the run: %s", at - 1,
                             op->node->name ? op->node->name : "", opara__op_name(op->node->op),
                             detail[0] ? detail : opara_result_string(e));
}

OPARA__PRIVATE opara_result opara__cpu_exec_run(opara__cpu_exec* ex, char* err, size_t err_cap) {
    uint32_t n, n_nodes = opara__exec_node_count(ex);
    int32_t gen, e;
    unsigned fp;
    ex->run_start = opara__now_ns();
    opara__atomic_store(&ex->error, 0);
    opara__atomic_store(&ex->error_node, 0);
    opara__blas_run_enter(&ex->blas); /* before any worker can call sgemm */
    opara__mutex_lock(&ex->mu);
    memcpy(ex->pending, ex->pending_init, n_nodes * sizeof *ex->pending);
    ex->heap_n = 0;
    for (n = 0; n < n_nodes; ++n)
        if (ex->pending[n] == 0) opara__exec_heap_push(ex, n);
    ex->completed = 0;
    gen = opara__atomic_add(&ex->generation, 1);
    opara__exec_signal(ex);
    opara__mutex_unlock(&ex->mu);
    fp = opara__exec_fp_enter();
    opara__exec_loop(ex, 0, gen);
    opara__exec_fp_leave(fp);
    opara__blas_run_leave(&ex->blas); /* the loop returns once every node has completed */
    e = opara__atomic_load(&ex->error);
    if (e != 0) return opara__exec_report_error(ex, (opara_result)e, err, err_cap);
    return OPARA_OK;
}

/* ---- creation ------------------------------------------------------------------------------ */

static void opara__exec_fill_tensor(const opara__cpu_exec* ex, const opara__shape* shapes, const opara_dtype* dtypes,
                                    int32_t v, opara__cpu_tensor* t) {
    memset(t, 0, sizeof *t);
    if (v < 0) return;
    t->dtype = dtypes[v];
    t->ndim = shapes[v].ndim < 0 ? 0 : shapes[v].ndim;
    memcpy(t->dims, shapes[v].dims, sizeof t->dims);
    t->data = ex->value_ptr[v];
    t->is_const = ex->g->values[v].kind == OPARA__VALUE_CONST ||
                  (ex->plan->storage[v] == OPARA__STORAGE_EXTERNAL && ex->plan->alias_root[v] >= 0 &&
                   ex->g->values[ex->plan->alias_root[v]].kind == OPARA__VALUE_CONST);
}

static opara_result opara__exec_memory(opara__cpu_exec* ex, char* err, size_t cap) {
    const opara__graph* g = ex->g;
    const opara__plan* plan = ex->plan;
    size_t in_bytes = 0, off = 0;
    uint32_t i, v;
    ex->value_ptr = (void**)opara__calloc(ex->rt, g->n_values ? g->n_values : 1, sizeof(void*));
    if (!ex->value_ptr) return opara__cpu_reject(err, cap, OPARA_ERR_OUT_OF_MEMORY, "out of memory");
    if (plan->arena_bytes > (uint64_t)(size_t)-1) return opara__cpu_reject(err, cap, OPARA_ERR_OUT_OF_MEMORY, "arena too large");
    if (plan->arena_bytes) {
        ex->arena = (uint8_t*)opara__alloc_aligned(&ex->rt->allocator, (size_t)plan->arena_bytes, OPARA__DEFAULT_ALIGN);
        if (!ex->arena)
            return opara__cpu_reject(err, cap, OPARA_ERR_OUT_OF_MEMORY, "cannot allocate the %llu-byte arena",
                                     (unsigned long long)plan->arena_bytes);
    }
    for (i = 0; i < g->n_inputs; ++i) in_bytes += opara__align_up((size_t)plan->value_bytes[g->inputs[i]], 64);
    ex->inputs_block = (uint8_t*)opara__alloc_aligned(&ex->rt->allocator, in_bytes ? in_bytes : 64, OPARA__DEFAULT_ALIGN);
    if (!ex->inputs_block) return opara__cpu_reject(err, cap, OPARA_ERR_OUT_OF_MEMORY, "out of memory for inputs");
    for (i = 0; i < g->n_inputs; ++i) {
        ex->value_ptr[g->inputs[i]] = ex->inputs_block + off;
        off += opara__align_up((size_t)plan->value_bytes[g->inputs[i]], 64);
    }
    for (v = 0; v < g->n_values; ++v) {
        const opara__value* val = &g->values[v];
        int32_t root = plan->alias_root[v];
        if (val->kind == OPARA__VALUE_INPUT) continue;
        if (val->kind == OPARA__VALUE_CONST) {
            ex->value_ptr[v] = (void*)(uintptr_t)val->data;
        } else if (plan->storage[v] == OPARA__STORAGE_ARENA && plan->offset[v] != OPARA__NO_ARENA) {
            ex->value_ptr[v] = ex->arena + plan->offset[v];
        } else if (plan->storage[v] == OPARA__STORAGE_EXTERNAL && root >= 0) {
            uint8_t* base = g->values[root].kind == OPARA__VALUE_CONST ? (uint8_t*)(uintptr_t)g->values[root].data
                                                                       : (uint8_t*)ex->value_ptr[root];
            ex->value_ptr[v] = base ? base + plan->alias_offset[v] : NULL;
        }
    }
    return OPARA_OK;
}

/* The op's constant weights transformed once for the session; without the memory the op is
   prepared again to keep its weights as they are (it then packs per call or takes another path). */
static opara_result opara__exec_pack_weights(opara__cpu_exec* ex, opara__cpu_op* op, char* err, size_t cap) {
    size_t bytes = op->packed_floats * sizeof(float);
    if (!op->packed_floats) return OPARA_OK;
    if (bytes / sizeof(float) == op->packed_floats)
        op->packed = (float*)opara__alloc_aligned(&ex->rt->allocator, bytes, OPARA__DEFAULT_ALIGN);
    if (!op->packed) {
        op->keep_weights = 1;
        return opara__cpu_prepare(op, err, cap);
    }
    opara__cpu_pack_weights(op);
    ex->packed_bytes += bytes;
    return OPARA_OK;
}

static opara_result opara__exec_prepare_ops(opara__cpu_exec* ex, const opara__shape* shapes,
                                            const opara__node_params* params, const opara_dtype* dtypes, char* err, size_t cap) {
    const opara__graph* g = ex->g;
    size_t n_tensors = 0, at = 0;
    uint32_t n, i;
    for (n = 0; n < g->n_nodes; ++n) n_tensors += g->nodes[n].n_inputs + g->nodes[n].n_outputs;
    ex->ops = (opara__cpu_op*)opara__calloc(ex->rt, g->n_nodes ? g->n_nodes : 1, sizeof *ex->ops);
    ex->tensors = (opara__cpu_tensor*)opara__calloc(ex->rt, n_tensors ? n_tensors : 1, sizeof *ex->tensors);
    ex->skip = (uint8_t*)opara__calloc(ex->rt, g->n_nodes ? g->n_nodes : 1, 1);
    if (!ex->ops || !ex->tensors || !ex->skip) return opara__cpu_reject(err, cap, OPARA_ERR_OUT_OF_MEMORY, "out of memory");
    for (n = 0; n < g->n_nodes; ++n) {
        const opara__node* node = &g->nodes[n];
        opara__cpu_op* op = &ex->ops[n];
        opara_result r;
        char detail[256];
        op->node = node;
        op->params = &params[n];
        op->n_in = node->n_inputs;
        op->n_out = node->n_outputs;
        op->in = ex->tensors + at;
        at += node->n_inputs;
        op->out = ex->tensors + at;
        at += node->n_outputs;
        op->blas = &ex->blas;
        op->workers = ex->n_workers;
        for (i = 0; i < node->n_inputs; ++i) opara__exec_fill_tensor(ex, shapes, dtypes, node->inputs[i], &op->in[i]);
        for (i = 0; i < node->n_outputs; ++i) opara__exec_fill_tensor(ex, shapes, dtypes, node->outputs[i], &op->out[i]);
        ex->skip[n] = node->n_outputs == 1 && ex->plan->alias_kind[node->outputs[0]] == OPARA__ALIAS_VIEW;
        op->keep_weights = !ex->pack_weights;
        r = opara__cpu_prepare(op, detail, sizeof detail);
        if (r == OPARA_OK) r = opara__exec_pack_weights(ex, op, detail, sizeof detail);
        if (r != OPARA_OK)
            return opara__cpu_reject(err, cap, r, "node %u '%s' (%s): %s", n, node->name ? node->name : "",
                                     opara__op_name(node->op), detail);
        ex->scratch_floats = OPARA__MAX(ex->scratch_floats, op->scratch_floats);
    }
    ex->scratch_floats = opara__align_up(ex->scratch_floats, 16);
    return OPARA_OK;
}

/* Adds edge: node `to` has `from` as a prerequisite. count_only: only count it (CSR pass 1). */
static void opara__exec_add_dep(opara__cpu_exec* ex, uint32_t* fill, uint32_t from, uint32_t to, int count_only) {
    if (count_only) {
        ex->dep_start[from + 1]++;
        ex->pending_init[to]++;
    } else {
        ex->deps[ex->dep_start[from] + fill[from]++] = to;
    }
}

/* Prerequisites of every node from the plan: its stream predecessor (the previous node of its
   stream in launch order) and the nodes it waits on; plus the reverse lists (CSR, two passes). */
static opara_result opara__exec_deps(opara__cpu_exec* ex, char* err, size_t cap) {
    const opara__plan* plan = ex->plan;
    uint32_t n_nodes = ex->g->n_nodes, n_streams = plan->n_streams ? plan->n_streams : 1, i, k, n;
    uint32_t* last = (uint32_t*)opara__calloc(ex->rt, n_streams, sizeof(uint32_t)); /* 1 + last node seen */
    uint32_t* fill = (uint32_t*)opara__calloc(ex->rt, n_nodes ? n_nodes : 1, sizeof(uint32_t));
    opara_result r = OPARA_OK;
    int pass;
    ex->pending_init = (uint32_t*)opara__calloc(ex->rt, n_nodes ? n_nodes : 1, sizeof(uint32_t));
    ex->dep_start = (uint32_t*)opara__calloc(ex->rt, n_nodes + 1, sizeof(uint32_t));
    ex->deps = (uint32_t*)opara__calloc(ex->rt, n_nodes + plan->wait_start[n_nodes] + 1, sizeof(uint32_t));
    if (!last || !fill || !ex->pending_init || !ex->dep_start || !ex->deps)
        r = opara__cpu_reject(err, cap, OPARA_ERR_OUT_OF_MEMORY, "out of memory");
    for (i = 0; i < n_nodes && r == OPARA_OK; ++i) {
        n = plan->order[i];
        if (plan->stream[n] >= n_streams)
            r = opara__cpu_reject(err, cap, OPARA_ERR_INTERNAL, "node %u is on stream %u of %u", n, plan->stream[n],
                                  n_streams);
        for (k = plan->wait_start[n]; k < plan->wait_start[n + 1] && r == OPARA_OK; ++k)
            if (plan->wait_nodes[k] >= n_nodes || plan->position[plan->wait_nodes[k]] >= i)
                r = opara__cpu_reject(err, cap, OPARA_ERR_INTERNAL, "node %u waits on node %u, not launched before it", n,
                                      plan->wait_nodes[k]);
    }
    for (pass = 1; pass >= 0 && r == OPARA_OK; --pass) {
        memset(last, 0, n_streams * sizeof(uint32_t));
        for (i = 0; i < n_nodes; ++i) {
            n = plan->order[i];
            if (last[plan->stream[n]]) opara__exec_add_dep(ex, fill, last[plan->stream[n]] - 1, n, pass);
            last[plan->stream[n]] = n + 1;
            for (k = plan->wait_start[n]; k < plan->wait_start[n + 1]; ++k)
                opara__exec_add_dep(ex, fill, plan->wait_nodes[k], n, pass);
        }
        if (pass)
            for (n = 0; n < n_nodes; ++n) ex->dep_start[n + 1] += ex->dep_start[n];
    }
    opara__free(ex->rt, last);
    opara__free(ex->rt, fill);
    return r;
}

/* Rough work of a prepared operator: multiply-adds for Conv/Gemm/MatMul, else output elements. */
static double opara__exec_node_work(const opara__cpu_exec* ex, uint32_t n) {
    const opara__cpu_op* op = &ex->ops[n];
    const opara__cpu_params* p = &op->p;
    double out = op->n_out ? (double)opara__cpu_numel(&op->out[0]) : 0.0;
    if (ex->skip[n]) return 0.0;
    switch (opara__op_info_of(op->node->op)->work) {
    case OPARA__WORK_CONV:
        if (op->node->op == OPARA__OP_CONV_TRANSPOSE) return out; /* counted by its outputs */
        return out * (double)(p->group > 0 ? p->cin / p->group : 1) * (double)(p->kernel[0] * p->kernel[1] * p->kernel[2]);
    case OPARA__WORK_MATMUL: return out * (double)p->k;
    case OPARA__WORK_POOL: case OPARA__WORK_ROWS: case OPARA__WORK_TRANSPOSE: case OPARA__WORK_ELEMENTWISE:
    case OPARA__WORK_VIEW:
        return out;
    }
    return out;
}

/* Per node: whether it is big and how it is cut into chunks. Which ready node runs first is the
   plan's priority. */
static opara_result opara__exec_cut_nodes(opara__cpu_exec* ex, char* err, size_t cap) {
    uint32_t n, n_nodes = ex->g->n_nodes ? ex->g->n_nodes : 1;
    ex->big = (uint8_t*)opara__calloc(ex->rt, n_nodes, 1);
    ex->n_chunks = (int32_t*)opara__calloc(ex->rt, n_nodes, sizeof(int32_t));
    ex->chunk_items = (size_t*)opara__calloc(ex->rt, n_nodes, sizeof(size_t));
    if (!ex->big || !ex->n_chunks || !ex->chunk_items)
        return opara__cpu_reject(err, cap, OPARA_ERR_OUT_OF_MEMORY, "out of memory");
    for (n = 0; n < ex->g->n_nodes; ++n) {
        const opara__cpu_op* op = &ex->ops[n];
        size_t items = ex->skip[n] ? 0 : op->work_items, min = op->min_items_per_task ? op->min_items_per_task : 1;
        size_t chunk = items;
        ex->big[n] = opara__exec_node_work(ex, n) >= OPARA__BIG_WORK;
        if (ex->n_workers > 1 && items >= 2 * min) {
            chunk = OPARA__MAX(min, items / ((size_t)ex->n_workers * OPARA__CHUNKS_PER_WORKER));
            chunk = OPARA__MAX(chunk, (items + OPARA__MAX_CHUNKS - 1) / OPARA__MAX_CHUNKS);
        }
        ex->chunk_items[n] = chunk ? chunk : 1;
        ex->n_chunks[n] = items ? (int32_t)((items + ex->chunk_items[n] - 1) / ex->chunk_items[n]) : 0;
    }
    return OPARA_OK;
}

/* FMA throughput per core and cycle of the SGEMM's instruction set: two FMA pipes of 16 (AVX-512),
   8 (AVX2) or 4 (NEON) lanes, 2 FLOPs each; 4 for the portable C. */
static double opara__cpu_flops_per_cycle(void) {
    int level = opara__cpu_isa_level();
    if (level >= 2) return 64.0;
#if OPARA__GEMM_NEON
    if (level == 1) return 16.0;
#endif
    return level == 1 ? 32.0 : 4.0;
}

OPARA__PRIVATE void opara__cpu_device(uint32_t cores, opara__device* dev) {
    const double hz = 3e9; /* nominal: only the ratio of FLOPs to bytes and the nodes' relative times matter */
    memset(dev, 0, sizeof *dev);
    dev->name = "cpu";
    dev->kind = OPARA__DEVICE_CPU;
    dev->cores = cores ? cores : 1;
    dev->peak_flops = (double)dev->cores * opara__cpu_flops_per_cycle() * hz;
    dev->bandwidth = (double)dev->cores * 32.0 * hz;
}

static opara_result opara__exec_threads(opara__cpu_exec* ex, char* err, size_t cap) {
    uint32_t w, n_nodes = ex->g->n_nodes ? ex->g->n_nodes : 1;
    ex->pending = (uint32_t*)opara__calloc(ex->rt, n_nodes, sizeof(uint32_t));
    ex->heap = (uint32_t*)opara__calloc(ex->rt, n_nodes, sizeof(uint32_t));
    ex->claim = (volatile int32_t*)opara__calloc(ex->rt, n_nodes, sizeof(int32_t));
    ex->left = (volatile int32_t*)opara__calloc(ex->rt, n_nodes, sizeof(int32_t));
    ex->open = (volatile int32_t*)opara__calloc(ex->rt, ex->n_workers, sizeof(int32_t));
    ex->t_start = (uint64_t*)opara__calloc(ex->rt, n_nodes, sizeof(uint64_t));
    ex->t_end = (uint64_t*)opara__calloc(ex->rt, n_nodes, sizeof(uint64_t));
    ex->t_worker = (uint32_t*)opara__calloc(ex->rt, n_nodes, sizeof(uint32_t));
    ex->scratch = (float*)opara__alloc_aligned(&ex->rt->allocator,
                                               (ex->scratch_floats ? ex->scratch_floats : 16) * ex->n_workers * sizeof(float),
                                               OPARA__DEFAULT_ALIGN);
    ex->threads = (opara__thread*)opara__calloc(ex->rt, ex->n_workers, sizeof(opara__thread));
    ex->args = (opara__cpu_worker_arg*)opara__calloc(ex->rt, ex->n_workers, sizeof(opara__cpu_worker_arg));
    if (!ex->pending || !ex->heap || !ex->claim || !ex->left || !ex->open || !ex->t_start || !ex->t_end || !ex->t_worker || !ex->scratch || !ex->threads || !ex->args)
        return opara__cpu_reject(err, cap, OPARA_ERR_OUT_OF_MEMORY, "out of memory (scratch %zu floats per worker)",
                                 ex->scratch_floats);
    if (!opara__mutex_init(&ex->mu) || !opara__cond_init(&ex->cv))
        return opara__cpu_reject(err, cap, OPARA_ERR_INTERNAL, "cannot create a mutex");
    ex->threads_started = 0;
    for (w = 1; w < ex->n_workers; ++w) {
        ex->args[w].ex = ex;
        ex->args[w].index = w;
        if (!opara__thread_start(&ex->threads[w], opara__exec_worker_main, &ex->args[w]))
            return opara__cpu_reject(err, cap, OPARA_ERR_INTERNAL, "cannot start worker thread %u", w);
        ex->threads_started = (int)w;
    }
    return OPARA_OK;
}

OPARA__PRIVATE opara_result opara__cpu_exec_create(opara_runtime* rt, const opara__graph* g, const opara__plan* plan,
                                                   const opara__shape* shapes, const opara__node_params* params,
                                                   const opara_dtype* dtypes,
                                                   uint32_t threads, int builtin_gemm, int pack_weights,
                                                   int pin_workers, char* err, size_t err_cap, opara__cpu_exec** out) {
    opara__cpu_exec* ex = (opara__cpu_exec*)opara__calloc(rt, 1, sizeof *ex);
    opara_result r;
    *out = NULL;
    if (!ex) return opara__cpu_reject(err, err_cap, OPARA_ERR_OUT_OF_MEMORY, "out of memory");
    ex->rt = rt;
    ex->g = g;
    ex->plan = plan;
    ex->rank = plan->priority;
    ex->n_workers = threads ? threads : 1;
    ex->pack_weights = pack_weights;
    ex->pin_workers = pin_workers;
    ex->spin_ns = ex->n_workers <= (uint32_t)opara__cpu_count() ? OPARA__SPIN_NS : OPARA__SPIN_SHORT_NS;
    ex->threads_started = -1;
    opara__blas_load(&ex->blas, builtin_gemm, NULL, 0);
    r = opara__exec_memory(ex, err, err_cap);
    if (r == OPARA_OK) r = opara__exec_prepare_ops(ex, shapes, params, dtypes, err, err_cap);
    if (r == OPARA_OK) r = opara__exec_deps(ex, err, err_cap);
    if (r == OPARA_OK) r = opara__exec_cut_nodes(ex, err, err_cap);
    if (r == OPARA_OK) r = opara__exec_threads(ex, err, err_cap);
    if (r != OPARA_OK) {
        opara__cpu_exec_destroy(ex);
        return r;
    }
    *out = ex;
    return OPARA_OK;
}

OPARA__PRIVATE void opara__cpu_exec_destroy(opara__cpu_exec* ex) {
    opara_runtime* rt;
    int w;
    if (!ex) return;
    rt = ex->rt;
    if (ex->threads_started >= 0) {
        opara__mutex_lock(&ex->mu);
        opara__atomic_store(&ex->shutdown, 1);
        opara__cond_broadcast(&ex->cv);
        opara__mutex_unlock(&ex->mu);
        for (w = 1; w <= ex->threads_started; ++w) opara__thread_join(&ex->threads[w]);
        opara__cond_destroy(&ex->cv);
        opara__mutex_destroy(&ex->mu);
    }
    opara__blas_unload(&ex->blas);
    for (w = 0; ex->ops && w < (int)ex->g->n_nodes; ++w) opara__free_aligned(&rt->allocator, ex->ops[w].packed);
    opara__free_aligned(&rt->allocator, ex->arena);
    opara__free_aligned(&rt->allocator, ex->inputs_block);
    opara__free_aligned(&rt->allocator, ex->scratch);
    opara__free(rt, ex->value_ptr);
    opara__free(rt, ex->ops);
    opara__free(rt, ex->tensors);
    opara__free(rt, ex->skip);
    opara__free(rt, ex->pending_init);
    opara__free(rt, ex->dep_start);
    opara__free(rt, ex->deps);
    opara__free(rt, ex->big);
    opara__free(rt, ex->n_chunks);
    opara__free(rt, ex->chunk_items);
    opara__free(rt, ex->pending);
    opara__free(rt, ex->heap);
    opara__free(rt, (void*)(uintptr_t)ex->claim);
    opara__free(rt, (void*)(uintptr_t)ex->left);
    opara__free(rt, (void*)(uintptr_t)ex->open);
    opara__free(rt, ex->t_start);
    opara__free(rt, ex->t_end);
    opara__free(rt, ex->t_worker);
    opara__free(rt, ex->threads);
    opara__free(rt, ex->args);
    opara__free(rt, ex);
}

OPARA__PRIVATE void* opara__cpu_exec_value_data(const opara__cpu_exec* ex, int32_t v) {
    return v >= 0 && (uint32_t)v < ex->g->n_values ? ex->value_ptr[v] : NULL;
}

OPARA__PRIVATE const char* opara__cpu_exec_gemm_name(const opara__cpu_exec* ex) { return ex->blas.summary; }

OPARA__PRIVATE void opara__cpu_exec_conv_info(const opara__cpu_exec* ex, uint32_t* n_conv, uint32_t* n_library, char* name,
                                              size_t cap) {
    uint32_t i, gemm = 0, direct = 0, winograd = 0;
    char wino[48] = "";
    for (i = 0; i < ex->g->n_nodes; ++i) {
        if (ex->ops[i].node->op != OPARA__OP_CONV) continue;
        if (ex->ops[i].p.depthwise) direct++;
        else if (ex->ops[i].packed_floats) winograd++; /* the only Conv with transformed weights */
        else gemm++;
    }
    *n_conv = gemm + direct + winograd;
    *n_library = ex->blas.sgemm ? gemm : 0; /* Winograd runs only on the built-in GEMM */
    if (winograd) opara__format(wino, sizeof wino, "%u Winograd 3x3%s", winograd, gemm || direct ? " + " : "");
    if (gemm && direct) opara__format(name, cap, "%sim2col/1x1 GEMM on %s + direct depthwise", wino, ex->blas.name);
    else if (gemm) opara__format(name, cap, "%sim2col/1x1 GEMM on %s", wino, ex->blas.name);
    else if (direct) opara__format(name, cap, "%sdirect depthwise", wino);
    else opara__format(name, cap, "%s", winograd ? wino : "");
}
OPARA__PRIVATE uint32_t opara__cpu_exec_workers(const opara__cpu_exec* ex) { return ex->n_workers; }
OPARA__PRIVATE uint64_t opara__cpu_exec_packed_bytes(const opara__cpu_exec* ex) { return ex->packed_bytes; }

OPARA__PRIVATE void opara__cpu_exec_node_times(const opara__cpu_exec* ex, const uint64_t** start, const uint64_t** end,
                                               const uint32_t** worker) {
    *start = ex->t_start;
    *end = ex->t_end;
    *worker = ex->t_worker;
}

/* ---- the CPU backend's table (opara_backend.h) ------------------------------------------------ */

/* A session's CPU side: the executor, made for a plan planned on the CPU's own device model. */
typedef struct opara__cpu_backend {
    opara_runtime* rt;
    const opara__graph* g;
    const opara__shape* shapes; /* the session's (borrowed) */
    const opara__node_params* params;
    const opara_dtype* dtypes;
    const uint64_t* value_bytes;
    uint32_t threads;
    int builtin_gemm, pack_weights, pin_workers;
    opara__device device;
    opara__plan* plan; /* owned once create took it */
    opara__cpu_exec* exec;
    char conv_name[192];             /* plan info: the convolution path, */
    uint32_t n_conv, n_conv_library; /* the Conv count and how many use a BLAS library */
    char error[OPARA__DETAIL_MAX];   /* the last run's failure */
} opara__cpu_backend;

static opara_result opara__cpu_backend_available(opara_runtime* rt, char* reason, size_t cap) {
    (void)rt;
    opara__format(reason, cap, "%s", "");
    return OPARA_OK;
}

static opara_result opara__cpu_backend_open(const opara__backend_given* setup, void** out) {
    opara__cpu_backend* b;
    const opara_session_desc* d = setup->desc;
    *out = NULL;
    if (!d) return opara__fail(setup->rt, OPARA_ERR_INVALID_ARGS, "CPU backend: no session desc");
    b = (opara__cpu_backend*)opara__calloc(setup->rt, 1, sizeof *b);
    if (!b) return opara__fail(setup->rt, OPARA_ERR_OUT_OF_MEMORY, "session: out of memory");
    b->rt = setup->rt;
    b->g = setup->g;
    b->shapes = setup->shapes, b->params = setup->params, b->dtypes = setup->dtypes, b->value_bytes = setup->value_bytes;
    b->threads = d->threads;
    b->builtin_gemm = d->builtin_gemm;
    b->pack_weights = !d->cpu_keep_weights;
    b->pin_workers = d->cpu_pin_workers == 1;
    opara__cpu_device(d->threads, &b->device);
    *out = b;
    return OPARA_OK;
}

/* The CPU plan is made for the CPU's model: descriptors from its rates, and Alg. 2 takes the ready
   op with the shortest estimated time first (a CPU has no per-block GPU resources to fit). */
static opara_result opara__cpu_backend_describe(void* be, opara__op_desc* descs, opara__plan_desc* pd,
                                                const opara__device** dev) {
    opara__cpu_backend* b = (opara__cpu_backend*)be;
    pd->metric = OPARA__METRIC_TIME;
    pd->shapes = b->shapes, pd->params = b->params;
    *dev = &b->device;
    return opara__describe_ops_resolved(b->g, b->shapes, b->params, &b->device, descs);
}

static opara_result opara__cpu_backend_create(void* be, opara__plan* plan) {
    opara__cpu_backend* b = (opara__cpu_backend*)be;
    char err[OPARA__DETAIL_MAX];
    opara_result r;
    b->plan = plan;
    r = opara__cpu_exec_create(b->rt, b->g, plan, b->shapes, b->params, b->dtypes, b->threads, b->builtin_gemm,
                               b->pack_weights, b->pin_workers, err, sizeof err, &b->exec);
    if (r != OPARA_OK) return opara__fail(b->rt, r, "session: %s", err);
    opara__cpu_exec_conv_info(b->exec, &b->n_conv, &b->n_conv_library, b->conv_name, sizeof b->conv_name);
    return OPARA_OK;
}

static opara_result opara__cpu_backend_run(void* be, const void* const* inputs, void* const* outputs) {
    opara__cpu_backend* b = (opara__cpu_backend*)be;
    uint32_t i;
    opara_result r;
    for (i = 0; i < b->g->n_inputs; ++i) {
        int32_t v = b->g->inputs[i];
        if (b->value_bytes[v]) memcpy(opara__cpu_exec_value_data(b->exec, v), inputs[i], (size_t)b->value_bytes[v]);
    }
    r = opara__cpu_exec_run(b->exec, b->error, sizeof b->error);
    for (i = 0; r == OPARA_OK && i < b->g->n_outputs; ++i) {
        int32_t v = b->g->outputs[i];
        const void* y = opara__cpu_exec_value_data(b->exec, v);
        if (outputs[i] && outputs[i] != y && b->value_bytes[v]) memcpy(outputs[i], y, (size_t)b->value_bytes[v]);
    }
    return r;
}

static const void* opara__cpu_backend_output(const void* be, uint32_t index) {
    const opara__cpu_backend* b = (const opara__cpu_backend*)be;
    return index < b->g->n_outputs ? opara__cpu_exec_value_data(b->exec, b->g->outputs[index]) : NULL;
}

static void opara__cpu_backend_plan_info(const void* be, opara_plan_info* out) {
    const opara__cpu_backend* b = (const opara__cpu_backend*)be;
    out->backend = "cpu";
    out->gemm = opara__cpu_exec_gemm_name(b->exec);
    out->n_workers = opara__cpu_exec_workers(b->exec);
    out->n_conv = b->n_conv;
    out->n_conv_library = b->n_conv_library;
    out->conv = b->conv_name;
    out->packed_weight_bytes = opara__cpu_exec_packed_bytes(b->exec);
}

static uint32_t opara__cpu_backend_node_times(const void* be, opara_node_time* out, uint32_t cap) {
    const opara__cpu_backend* b = (const opara__cpu_backend*)be;
    const uint64_t *start, *end;
    const uint32_t* worker;
    uint32_t i;
    opara__cpu_exec_node_times(b->exec, &start, &end, &worker);
    for (i = 0; out && i < cap && i < b->plan->n_nodes; ++i) {
        uint32_t n = b->plan->order[i];
        out[i].start_ns = start[n];
        out[i].end_ns = end[n];
        out[i].worker = worker[n];
        out[i].node = n;
    }
    return b->plan->n_nodes;
}

static const char* opara__cpu_backend_last_error(const void* be) { return ((const opara__cpu_backend*)be)->error; }

static void opara__cpu_backend_destroy(void* be) {
    opara__cpu_backend* b = (opara__cpu_backend*)be;
    if (!b) return;
    opara__cpu_exec_destroy(b->exec);
    if (b->plan) opara__plan_free(b->g->rt, b->plan); /* the planner allocates with the model's runtime */
    opara__free(b->rt, b);
}

OPARA__PRIVATE const opara__backend* opara__backend_cpu(void) {
    static const opara__backend table = {
        "cpu", "CPU", OPARA_BACKEND_CPU, opara__cpu_backend_available, opara__cpu_backend_open,
        opara__cpu_backend_describe, opara__cpu_backend_create, opara__cpu_backend_run, NULL /* no device memory */,
        opara__cpu_backend_output, opara__cpu_backend_plan_info, opara__cpu_backend_node_times, NULL /* no kernels */,
        opara__cpu_backend_last_error, opara__cpu_backend_destroy};
    return &table;
}
