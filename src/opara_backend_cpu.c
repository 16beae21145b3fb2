/* The CPU executor: the plan's streams become worker threads, its events per-node completion
   marks, its arena one allocation; large operators are split across idle workers. */
#include "opara_cpu.h"

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

#define OPARA__SPIN_ROUNDS 4096
/* Multiply-adds above which an operator is worth all workers: an idle worker joins it before
   starting another ready operator (intra-op for big operators, inter-op for small ones). */
#define OPARA__BIG_WORK 33554432.0

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
    uint32_t n_workers, n_streams;
    uint32_t* list;              /* nodes of each stream in launch order (CSR by stream) */
    uint32_t* list_start;        /* [n_streams + 1] */
    opara__thread* threads;      /* [n_workers - 1] */
    opara__cpu_worker_arg* args; /* [n_workers - 1] */
    int threads_started;
    /* run state, guarded by mu */
    opara__mutex mu;
    opara__cond cv;
    double* rank;                /* [n_nodes] estimated work on the longest path from the node to the end */
    uint32_t* cursor;            /* [n_streams] next position in the stream's list */
    uint8_t* stream_busy;        /* [n_streams] a worker is running the stream's head */
    uint32_t completed;          /* nodes finished in this run */
    volatile int32_t generation; /* number of the current run */
    volatile int32_t* done;      /* [n_nodes] generation in which the node finished */
    volatile int32_t shutdown;
    volatile int32_t error;      /* first kernel error of the run */
    volatile int32_t sleepers;   /* threads inside cond_wait (or about to be) */
    volatile int32_t version;    /* bumped whenever work may have appeared (spinners watch it) */
    /* the one operator published for splitting */
    volatile int32_t job_busy, job_posted, job_helpers, job_next, job_done;
    const opara__cpu_op* job_op;
    size_t job_chunk, job_items;
    volatile int32_t job_chunks; /* atomic: also read by waiters outside the helper count */
    volatile int32_t job_big;    /* the published operator has at least OPARA__BIG_WORK */
    uint64_t run_start;
    uint64_t *t_start, *t_end;
    uint32_t* t_worker;
};

/* ---- synchronisation -----------------------------------------------------------------------
   Streams, not workers, are the unit of ordering: a node may start once its stream predecessor
   and every node it waits on (the plan's events) have finished, so every happens-before edge
   the plan (and its memory reuse) relies on holds. Any idle worker takes the ready stream head
   with the most estimated work between it and the end of the graph (list scheduling by
   critical path; ties go to launch order); with nothing ready it helps the operator another
   worker has published for splitting, so an operator is split only when no other one is ready. */

/* Caller holds mu. */
static void opara__exec_signal(opara__cpu_exec* ex) {
    opara__atomic_add(&ex->version, 1);
    if (opara__atomic_load(&ex->sleepers) != 0) opara__cond_broadcast(&ex->cv);
}

static void opara__exec_note_error(opara__cpu_exec* ex, opara_result r) {
    if (r != OPARA_OK) opara__atomic_cas(&ex->error, 0, (int32_t)r);
}

static int opara__exec_job_ready(opara__cpu_exec* ex) {
    return opara__atomic_load(&ex->job_posted) && opara__atomic_load(&ex->job_next) < opara__atomic_load(&ex->job_chunks);
}

/* Runs chunks of the published job, if any; returns 1 when it did some work. */
static int opara__exec_help(opara__cpu_exec* ex, uint32_t w) {
    int worked = 0;
    if (!opara__exec_job_ready(ex)) return 0;
    opara__atomic_add(&ex->job_helpers, 1);
    if (opara__atomic_load(&ex->job_posted)) {
        const opara__cpu_op* op = ex->job_op;
        float* scratch = ex->scratch + (size_t)w * ex->scratch_floats;
        for (;;) {
            int32_t c = opara__atomic_add(&ex->job_next, 1) - 1;
            size_t b, e;
            if (c >= opara__atomic_load(&ex->job_chunks)) break;
            b = (size_t)c * ex->job_chunk;
            e = OPARA__MIN(ex->job_items, b + ex->job_chunk);
            opara__exec_note_error(ex, op->fn(op, b, e, scratch));
            opara__atomic_add(&ex->job_done, 1);
            worked = 1;
        }
    }
    opara__atomic_add(&ex->job_helpers, -1);
    return worked;
}

/* Rough work of a prepared operator: multiply-adds for Conv/Gemm/MatMul, else output elements. */
static double opara__exec_node_work(const opara__cpu_exec* ex, uint32_t n) {
    const opara__cpu_op* op = &ex->ops[n];
    const opara__cpu_params* p = &op->p;
    double out = op->n_out ? (double)opara__cpu_numel(&op->out[0]) : 0.0;
    if (ex->skip[n]) return 0.0;
    switch (op->node->op) {
    case OPARA__OP_CONV:
        return out * (double)(p->group > 0 ? p->cin / p->group : 1) * (double)(p->kernel[0] * p->kernel[1] * p->kernel[2]);
    case OPARA__OP_GEMM:
    case OPARA__OP_MATMUL:
        return out * (double)p->k;
    default:
        return out;
    }
}

/* Runs one operator. When it has several chunks of work and the job slot is free it is
   published, so workers that become idle while it runs join in. */
static void opara__exec_op(opara__cpu_exec* ex, uint32_t w, const opara__cpu_op* op) {
    float* scratch = ex->scratch + (size_t)w * ex->scratch_floats;
    size_t items = op->work_items, min = op->min_items_per_task ? op->min_items_per_task : 1, chunk;
    int32_t chunks;
    if (!items) return;
    if (ex->n_workers < 2 || items < 2 * min || !opara__atomic_cas(&ex->job_busy, 0, 1)) {
        opara__exec_note_error(ex, op->fn(op, 0, items, scratch));
        return;
    }
    chunk = OPARA__MAX(min, items / ((size_t)ex->n_workers * 4));
    chunks = (int32_t)((items + chunk - 1) / chunk);
    ex->job_op = op;
    ex->job_items = items;
    ex->job_chunk = chunk;
    opara__atomic_store(&ex->job_big, opara__exec_node_work(ex, (uint32_t)(op - ex->ops)) >= OPARA__BIG_WORK);
    opara__atomic_store(&ex->job_chunks, chunks);
    opara__atomic_store(&ex->job_next, 0);
    opara__atomic_store(&ex->job_done, 0);
    opara__atomic_store(&ex->job_posted, 1);
    if (opara__atomic_load(&ex->sleepers) != 0) {
        opara__mutex_lock(&ex->mu);
        opara__exec_signal(ex);
        opara__mutex_unlock(&ex->mu);
    } else {
        opara__atomic_add(&ex->version, 1);
    }
    opara__exec_help(ex, w);
    while (opara__atomic_load(&ex->job_done) < chunks) { /* the last chunks are running elsewhere */
    }
    opara__atomic_store(&ex->job_posted, 0);
    while (opara__atomic_load(&ex->job_helpers) != 0) {
    }
    opara__atomic_store(&ex->job_busy, 0);
}

/* Caller holds mu. The ready stream head with the most work on its path to the end (the
   critical path first; ties: launch order), or -1. */
static int64_t opara__exec_pick(opara__cpu_exec* ex, int32_t gen) {
    const opara__plan* plan = ex->plan;
    uint32_t s, k, best_pos = UINT32_MAX;
    double best_rank = -1.0;
    int64_t best = -1;
    for (s = 0; s < ex->n_streams; ++s) {
        uint32_t at = ex->list_start[s] + ex->cursor[s], n;
        int ready = 1;
        if (ex->stream_busy[s] || at >= ex->list_start[s + 1]) continue;
        n = ex->list[at];
        if (ex->rank[n] < best_rank || (ex->rank[n] == best_rank && plan->position[n] >= best_pos)) continue;
        for (k = plan->wait_start[n]; k < plan->wait_start[n + 1] && ready; ++k)
            ready = opara__atomic_load(&ex->done[plan->wait_nodes[k]]) == gen;
        if (!ready) continue;
        best_rank = ex->rank[n];
        best_pos = plan->position[n];
        best = (int64_t)s;
    }
    return best;
}

/* Caller holds mu; returns with mu held. Nothing is ready: help a split operator, or spin a
   little (dropping the lock) and then sleep until a node finishes or a job is published. */
static void opara__exec_idle(opara__cpu_exec* ex, uint32_t w, int32_t gen) {
    int32_t seen = opara__atomic_load(&ex->version), spins;
    opara__mutex_unlock(&ex->mu);
    for (spins = 0; spins < OPARA__SPIN_ROUNDS; ++spins) {
        if (opara__exec_help(ex, w)) spins = 0;
        if (opara__atomic_load(&ex->version) != seen) break;
    }
    opara__mutex_lock(&ex->mu);
    if (opara__atomic_load(&ex->version) != seen || opara__atomic_load(&ex->generation) != gen) return;
    opara__atomic_add(&ex->sleepers, 1);
    while (opara__atomic_load(&ex->version) == seen && !opara__exec_job_ready(ex)) opara__cond_wait(&ex->cv, &ex->mu);
    opara__atomic_add(&ex->sleepers, -1);
}

/* Worker w's part of run gen: take ready nodes until every node of the run has finished. */
static void opara__exec_loop(opara__cpu_exec* ex, uint32_t w, int32_t gen) {
    uint32_t n_nodes = ex->g->n_nodes;
    opara__mutex_lock(&ex->mu);
    while (opara__atomic_load(&ex->generation) == gen && ex->completed < n_nodes) {
        int64_t s;
        uint32_t n;
        if (opara__atomic_load(&ex->job_big) && opara__exec_job_ready(ex)) {
            opara__mutex_unlock(&ex->mu);
            opara__exec_help(ex, w);
            opara__mutex_lock(&ex->mu);
            continue;
        }
        s = opara__exec_pick(ex, gen);
        if (s < 0) {
            if (opara__exec_job_ready(ex)) {
                opara__mutex_unlock(&ex->mu);
                opara__exec_help(ex, w);
                opara__mutex_lock(&ex->mu);
            } else {
                opara__exec_idle(ex, w, gen);
            }
            continue;
        }
        n = ex->list[ex->list_start[s] + ex->cursor[s]];
        ex->stream_busy[s] = 1;
        opara__mutex_unlock(&ex->mu);
        ex->t_start[n] = opara__now_ns() - ex->run_start;
        if (!ex->skip[n]) opara__exec_op(ex, w, &ex->ops[n]);
        ex->t_end[n] = opara__now_ns() - ex->run_start;
        ex->t_worker[n] = w;
        opara__mutex_lock(&ex->mu);
        opara__atomic_store(&ex->done[n], gen);
        ex->cursor[s]++;
        ex->stream_busy[s] = 0;
        ex->completed++;
        opara__exec_signal(ex);
    }
    opara__mutex_unlock(&ex->mu);
}

static void opara__exec_worker_main(void* p) {
    opara__cpu_worker_arg* arg = (opara__cpu_worker_arg*)p;
    opara__cpu_exec* ex = arg->ex;
    int32_t last = 0;
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

OPARA__PRIVATE opara_result opara__cpu_exec_run(opara__cpu_exec* ex, char* err, size_t err_cap) {
    int32_t gen, e;
    unsigned fp;
    ex->run_start = opara__now_ns();
    opara__atomic_store(&ex->error, 0);
    opara__mutex_lock(&ex->mu);
    memset(ex->cursor, 0, ex->n_streams * sizeof *ex->cursor);
    memset(ex->stream_busy, 0, ex->n_streams);
    ex->completed = 0;
    gen = opara__atomic_add(&ex->generation, 1);
    opara__exec_signal(ex);
    opara__cond_broadcast(&ex->cv);
    opara__mutex_unlock(&ex->mu);
    fp = opara__exec_fp_enter();
    opara__exec_loop(ex, 0, gen);
    opara__exec_fp_leave(fp);
    e = opara__atomic_load(&ex->error);
    if (e != 0)
        return opara__cpu_reject(err, err_cap, (opara_result)e, "a kernel failed during the run: %s",
                                 opara_result_string((opara_result)e));
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

static opara_result opara__exec_prepare_ops(opara__cpu_exec* ex, const opara__shape* shapes, const opara_dtype* dtypes,
                                            char* err, size_t cap) {
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
        op->n_in = node->n_inputs;
        op->n_out = node->n_outputs;
        op->in = ex->tensors + at;
        at += node->n_inputs;
        op->out = ex->tensors + at;
        at += node->n_outputs;
        op->blas = &ex->blas;
        for (i = 0; i < node->n_inputs; ++i) opara__exec_fill_tensor(ex, shapes, dtypes, node->inputs[i], &op->in[i]);
        for (i = 0; i < node->n_outputs; ++i) opara__exec_fill_tensor(ex, shapes, dtypes, node->outputs[i], &op->out[i]);
        ex->skip[n] = node->n_outputs == 1 && ex->plan->alias_kind[node->outputs[0]] == OPARA__ALIAS_VIEW;
        r = opara__cpu_prepare(op, detail, sizeof detail);
        if (r != OPARA_OK)
            return opara__cpu_reject(err, cap, r, "node %u '%s' (%s): %s", n, node->name ? node->name : "",
                                     opara__op_name(node->op), detail);
        ex->scratch_floats = OPARA__MAX(ex->scratch_floats, op->scratch_floats);
    }
    ex->scratch_floats = opara__align_up(ex->scratch_floats, 16);
    return OPARA_OK;
}

static opara_result opara__exec_lists(opara__cpu_exec* ex, char* err, size_t cap) {
    const opara__plan* plan = ex->plan;
    uint32_t n_nodes = ex->g->n_nodes, s, i, at = 0;
    ex->n_streams = plan->n_streams ? plan->n_streams : 1;
    ex->list = (uint32_t*)opara__calloc(ex->rt, n_nodes ? n_nodes : 1, sizeof(uint32_t));
    ex->list_start = (uint32_t*)opara__calloc(ex->rt, ex->n_streams + 1, sizeof(uint32_t));
    ex->cursor = (uint32_t*)opara__calloc(ex->rt, ex->n_streams, sizeof(uint32_t));
    ex->stream_busy = (uint8_t*)opara__calloc(ex->rt, ex->n_streams, 1);
    if (!ex->list || !ex->list_start || !ex->cursor || !ex->stream_busy)
        return opara__cpu_reject(err, cap, OPARA_ERR_OUT_OF_MEMORY, "out of memory");
    for (i = 0; i < n_nodes; ++i)
        if (plan->stream[i] >= ex->n_streams)
            return opara__cpu_reject(err, cap, OPARA_ERR_INTERNAL, "node %u is on stream %u of %u", i, plan->stream[i],
                                     ex->n_streams);
    for (s = 0; s < ex->n_streams; ++s) {
        ex->list_start[s] = at;
        for (i = 0; i < n_nodes; ++i)
            if (plan->stream[plan->order[i]] == s) ex->list[at++] = plan->order[i];
    }
    ex->list_start[ex->n_streams] = at;
    return OPARA_OK;
}

/* rank[n] = work(n) + max rank of its successors, over the launch order backwards. */
static opara_result opara__exec_ranks(opara__cpu_exec* ex, char* err, size_t cap) {
    const opara__graph* g = ex->g;
    uint32_t i, k;
    ex->rank = (double*)opara__calloc(ex->rt, g->n_nodes ? g->n_nodes : 1, sizeof(double));
    if (!ex->rank) return opara__cpu_reject(err, cap, OPARA_ERR_OUT_OF_MEMORY, "out of memory");
    for (i = g->n_nodes; i-- > 0;) {
        uint32_t n = ex->plan->order[i];
        double tail = 0.0;
        for (k = g->succ_start[n]; k < g->succ_start[n + 1]; ++k)
            if (ex->rank[g->succs[k]] > tail) tail = ex->rank[g->succs[k]];
        ex->rank[n] = opara__exec_node_work(ex, n) + tail;
    }
    return OPARA_OK;
}

static opara_result opara__exec_threads(opara__cpu_exec* ex, char* err, size_t cap) {
    uint32_t w, n_nodes = ex->g->n_nodes ? ex->g->n_nodes : 1;
    ex->done = (volatile int32_t*)opara__calloc(ex->rt, n_nodes, sizeof(int32_t));
    ex->t_start = (uint64_t*)opara__calloc(ex->rt, n_nodes, sizeof(uint64_t));
    ex->t_end = (uint64_t*)opara__calloc(ex->rt, n_nodes, sizeof(uint64_t));
    ex->t_worker = (uint32_t*)opara__calloc(ex->rt, n_nodes, sizeof(uint32_t));
    ex->scratch = (float*)opara__alloc_aligned(&ex->rt->allocator,
                                               (ex->scratch_floats ? ex->scratch_floats : 16) * ex->n_workers * sizeof(float),
                                               OPARA__DEFAULT_ALIGN);
    ex->threads = (opara__thread*)opara__calloc(ex->rt, ex->n_workers, sizeof(opara__thread));
    ex->args = (opara__cpu_worker_arg*)opara__calloc(ex->rt, ex->n_workers, sizeof(opara__cpu_worker_arg));
    if (!ex->done || !ex->t_start || !ex->t_end || !ex->t_worker || !ex->scratch || !ex->threads || !ex->args)
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
                                                   const opara__shape* shapes, const opara_dtype* dtypes,
                                                   uint32_t threads, int builtin_gemm, char* err, size_t err_cap,
                                                   opara__cpu_exec** out) {
    opara__cpu_exec* ex = (opara__cpu_exec*)opara__calloc(rt, 1, sizeof *ex);
    opara_result r;
    *out = NULL;
    if (!ex) return opara__cpu_reject(err, err_cap, OPARA_ERR_OUT_OF_MEMORY, "out of memory");
    ex->rt = rt;
    ex->g = g;
    ex->plan = plan;
    ex->n_workers = threads ? threads : 1;
    ex->threads_started = -1;
    opara__blas_load(&ex->blas, builtin_gemm, NULL, 0);
    r = opara__exec_memory(ex, err, err_cap);
    if (r == OPARA_OK) r = opara__exec_prepare_ops(ex, shapes, dtypes, err, err_cap);
    if (r == OPARA_OK) r = opara__exec_lists(ex, err, err_cap);
    if (r == OPARA_OK) r = opara__exec_ranks(ex, err, err_cap);
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
    opara__free_aligned(&rt->allocator, ex->arena);
    opara__free_aligned(&rt->allocator, ex->inputs_block);
    opara__free_aligned(&rt->allocator, ex->scratch);
    opara__free(rt, ex->value_ptr);
    opara__free(rt, ex->ops);
    opara__free(rt, ex->tensors);
    opara__free(rt, ex->skip);
    opara__free(rt, ex->list);
    opara__free(rt, ex->list_start);
    opara__free(rt, ex->rank);
    opara__free(rt, ex->cursor);
    opara__free(rt, ex->stream_busy);
    opara__free(rt, (void*)(uintptr_t)ex->done);
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

OPARA__PRIVATE const char* opara__cpu_exec_gemm_name(const opara__cpu_exec* ex) { return ex->blas.name; }
OPARA__PRIVATE uint32_t opara__cpu_exec_workers(const opara__cpu_exec* ex) { return ex->n_workers; }

OPARA__PRIVATE void opara__cpu_exec_node_times(const opara__cpu_exec* ex, const uint64_t** start, const uint64_t** end,
                                               const uint32_t** worker) {
    *start = ex->t_start;
    *end = ex->t_end;
    *worker = ex->t_worker;
}
