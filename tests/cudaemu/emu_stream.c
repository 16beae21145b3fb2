/* emu_stream.c - emulated driver: streams and their worker threads, events, copies and memsets, modules,
 * functions and kernel launches. Stream work is queued and executed by one emulator thread per stream,
 * never at enqueue; dependencies between streams are (stream, position) pairs. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/cuda/kernels/opara_ptx.h"
#include "emu_test_ptx.h"
#include "emu_internal.h"

static __thread emu_stream* emu_tls_per_thread;

/* ---------------------------------------------------------------- work items */

void emu_work_free(emu_work* w) {
    free(w->params);
    free(w->param_ptrs);
    if (w->xgraph) emu_xgraph_release(w->xgraph);
    memset(w, 0, sizeof(*w));
}

int emu_work_copy(emu_work* dst, const emu_work* src) {
    *dst = *src;
    dst->params = NULL;
    dst->param_ptrs = NULL;
    if (src->type == W_KERNEL) {
        int i, n = src->func->ptx.param_count;
        size_t bytes = src->func->ptx.param_bytes;
        dst->params = (unsigned char*)emu_xcalloc(bytes, 1);
        dst->param_ptrs = (void**)emu_xcalloc((size_t)n, sizeof(void*));
        if (!dst->params || !dst->param_ptrs) return -1;
        memcpy(dst->params, src->params, bytes);
        for (i = 0; i < n; i++) dst->param_ptrs[i] = dst->params + src->func->ptx.param_offset[i];
    }
    if (dst->xgraph) dst->xgraph->refs++;
    return 0;
}

/* ---------------------------------------------------------------- kernel execution */

static int emu_pointer_ok(const void* p) {
    const unsigned char* q = (const unsigned char*)p;
    return emu_alloc_find(q, 0) != NULL || (q && emu_alloc_find(q - 1, 1) != NULL); /* one past the end is fine */
}

static int emu_is_pointer_param(const emu_func* f, int i) {
    return f->host && i < f->host->param_count && strchr(f->host->param_types[i], '*') != NULL;
}

static void emu_kernel_execute(emu_ctx* ctx, const emu_work* w, unsigned long long seed) {
    emu_func* f = w->func;
    const void* bases[EMU_PTX_MAX_PARAMS];
    emu_exec_launch l;
    char err[512];
    int i, n = f->ptx.param_count;
    pthread_mutex_lock(&emu_mu);
    for (i = 0; i < n; i++) {
        const void* v;
        emu_alloc* a;
        bases[i] = NULL;
        if (!emu_is_pointer_param(f, i)) continue;
        memcpy(&v, w->param_ptrs[i], sizeof v);
        if (!v) continue;
        if (!emu_pointer_ok(v)) {
            emu_report("kernel %s: parameter %d (%s) = %p is not inside a live device allocation", f->host->name, i,
                       f->host->param_types[i], v);
            ctx->sticky = E_ILLEGAL_ADDRESS;
            pthread_mutex_unlock(&emu_mu);
            return;
        }
        a = emu_alloc_find(v, 0);
        if (!a) a = emu_alloc_find((const unsigned char*)v - 1, 1);
        bases[i] = a->base;
    }
    pthread_mutex_unlock(&emu_mu);
    l.entry = f->host;
    l.grid = w->grid;
    l.block = w->block;
    l.dynamic_shared = w->shared;
    l.static_shared_limit = f->ptx.static_shared;
    l.params = w->param_ptrs;
    l.seed = seed;
    if (emu_exec_run(&l, err, sizeof err) != 0) {
        pthread_mutex_lock(&emu_mu);
        emu_report("%s", err);
        ctx->sticky = E_LAUNCH_FAILED;
        pthread_mutex_unlock(&emu_mu);
        return;
    }
    pthread_mutex_lock(&emu_mu);
    for (i = 0; i < n; i++) {
        emu_alloc* a = bases[i] ? emu_alloc_find(bases[i], 0) : NULL;
        size_t off;
        int side;
        if (!a || a->base != bases[i]) continue;
        side = emu_alloc_guard_ok(a, &off);
        if (side == 0) continue;
        emu_report("kernel %s wrote out of bounds of parameter %d's allocation %p (%zu bytes): guard zone "
                   "%zu bytes %s",
                   f->host->name, i, (void*)a->base, a->size, off, side < 0 ? "before its start" : "from its start");
        emu_alloc_guard_restore(a);
        ctx->sticky = E_ILLEGAL_ADDRESS;
    }
    pthread_mutex_unlock(&emu_mu);
}

static void emu_memset_execute(const emu_work* w) {
    size_t i;
    if (w->elem == 1) {
        memset(w->dst, (int)(w->value & 0xff), w->bytes);
    } else if (w->elem == 2) {
        unsigned short v = (unsigned short)w->value;
        for (i = 0; i < w->bytes / 2; i++) memcpy((unsigned char*)w->dst + 2 * i, &v, 2);
    } else {
        for (i = 0; i < w->bytes / 4; i++) memcpy((unsigned char*)w->dst + 4 * i, &w->value, 4);
    }
}

void emu_work_execute(emu_ctx* ctx, const emu_work* w, unsigned long long seed) {
    if (w->type == W_EVENT_RECORD) {
        pthread_mutex_lock(&emu_mu);
        if (w->event->gen == w->event_gen) {
            w->event->time_ns = emu_now_ns();
            w->event->time_valid = 1;
        }
        pthread_mutex_unlock(&emu_mu);
        return;
    }
    if (ctx->sticky) return; /* a faulted context executes nothing more */
    switch (w->type) {
    case W_KERNEL: emu_kernel_execute(ctx, w, seed); break;
    case W_MEMCPY: memmove(w->dst, w->src, w->bytes); break;
    case W_MEMSET: emu_memset_execute(w); break;
    case W_HOST:
        emu_tls_in_callback = 1;
        w->fn(w->user);
        emu_tls_in_callback = 0;
        break;
    case W_GRAPH: emu_xgraph_run(ctx, w->xgraph, seed); break;
    default: break;
    }
}

/* ---------------------------------------------------------------- streams and workers */

static int emu_deps_ready(const emu_op* op) {
    size_t i;
    for (i = 0; i < op->ndeps; i++)
        if (op->deps[i].stream->done_seq < op->deps[i].seq) return 0;
    return 1;
}

static void* emu_worker(void* arg) {
    emu_stream* s = (emu_stream*)arg;
    pthread_mutex_lock(&emu_mu);
    for (;;) {
        emu_op* op;
        unsigned long long seed;
        while (!G.quit && (!s->head || G.paused || !emu_deps_ready(s->head))) {
            if (!s->head && s->retired) break;
            pthread_cond_wait(&emu_cv, &emu_mu);
        }
        if (G.quit || !s->head) break;
        op = s->head;
        seed = emu_mix(G.seed ^ op->seq ^ ((unsigned long long)(size_t)s << 20));
        pthread_mutex_unlock(&emu_mu);
        emu_work_execute(s->ctx, &op->work, seed);
        pthread_mutex_lock(&emu_mu);
        s->head = op->next;
        if (!s->head) s->tail = NULL;
        s->done_seq = op->seq;
        emu_work_free(&op->work);
        free(op->deps);
        free(op);
        pthread_cond_broadcast(&emu_cv);
    }
    pthread_mutex_unlock(&emu_mu);
    emu_exec_release();
    return NULL;
}

emu_stream* emu_stream_new_locked(emu_ctx* ctx, unsigned int flags, int priority, int special) {
    emu_stream* s = (emu_stream*)emu_xcalloc(1, sizeof(*s));
    if (!s) return NULL;
    s->ctx = ctx;
    s->flags = flags;
    s->priority = priority;
    s->special = special;
    if (emu_grow((void**)&G.all_streams, &G.cap_all_streams, G.n_all_streams + 1, sizeof(void*)) != 0 ||
        pthread_create(&s->thread, NULL, emu_worker, s) != 0) {
        free(s);
        return NULL;
    }
    G.all_streams[G.n_all_streams++] = s;
    s->next_in_ctx = ctx->streams;
    ctx->streams = s;
    if (special == 0) emu_handle_add(s, K_STREAM);
    return s;
}

emu_result emu_resolve_stream(emu_stream* h, emu_ctx* ctx, emu_stream** out) {
    if (h && h != EMU_STREAM_LEGACY && h != EMU_STREAM_PER_THREAD) {
        if (emu_handle_kind(h) != K_STREAM || h->retired) return E_INVALID_HANDLE;
        if (ctx && h->ctx != ctx) return E_INVALID_HANDLE; /* rule 5.4 [EMU] */
        *out = h;
        return E_OK;
    }
    if (!ctx) return E_INVALID_CONTEXT;
    if (h == EMU_STREAM_PER_THREAD) {
        if (!emu_tls_per_thread || emu_tls_per_thread->ctx != ctx) {
            emu_stream* s = emu_stream_new_locked(ctx, 0, 0, 2);
            if (!s) return E_OUT_OF_MEMORY;
            emu_tls_per_thread = s;
        }
        *out = emu_tls_per_thread;
        return E_OK;
    }
    *out = ctx->legacy; /* NULL: the legacy default stream (per-thread entry points are not emulated) */
    return E_OK;
}

/* Does capture c hold a blocking stream of ctx (one the legacy stream synchronizes with)? */
static int emu_capture_blocks_legacy(const emu_capture* c, const emu_ctx* ctx) {
    size_t i;
    for (i = 0; i < c->n_members; i++)
        if (c->members[i]->ctx == ctx && !(c->members[i]->flags & STREAM_NON_BLOCKING)) return 1;
    return 0;
}

/* Rule 2.13: with a blocking stream of ctx capturing (invalidated or not), the legacy stream cannot be used:
 * 906. With invalidate set the use also invalidates those captures: observed on driver 580 (CUDA 13.0), H100,
 * for a synchronous cuMemcpyDtoH during a RELAXED capture (cuda-semantics.md A6 guessed it would not). The
 * capture-status queries pass 0: DRV cuStreamIsCapturing says "The blocking stream capture is not invalidated". */
emu_result emu_legacy_conflict(emu_ctx* ctx, int invalidate) {
    emu_capture* c;
    emu_result r = E_OK;
    for (c = G.captures; c; c = c->next)
        if (emu_capture_blocks_legacy(c, ctx)) {
            if (invalidate) emu_capture_invalidate(c);
            r = E_CAPTURE_IMPLICIT;
        }
    return r;
}

static int emu_add_dep(emu_op* op, emu_stream* s, unsigned long long seq, size_t* cap) {
    if (seq == 0 || s->done_seq >= seq) return 0;
    if (emu_grow((void**)&op->deps, cap, op->ndeps + 1, sizeof(emu_dep)) != 0) return -1;
    op->deps[op->ndeps].stream = s;
    op->deps[op->ndeps].seq = seq;
    op->ndeps++;
    return 0;
}

/* Queues w on s (or captures it); takes ownership of w's buffers in every case. */
emu_result emu_submit(emu_stream* s, emu_work* w, const emu_dep* extra) {
    emu_op* op;
    emu_stream* o;
    size_t cap = 0;
    emu_result r;
    if (s->special == 1 && (r = emu_legacy_conflict(s->ctx, 1)) != E_OK) {
        emu_work_free(w);
        return r;
    }
    if (s->cap) return emu_capture_add(s, w, -1);
    op = (emu_op*)emu_xcalloc(1, sizeof(*op));
    if (!op) {
        emu_work_free(w);
        return E_OUT_OF_MEMORY;
    }
    op->work = *w;
    memset(w, 0, sizeof(*w));
    /* legacy default stream semantics (SSB): it waits for every blocking stream, and they wait for it */
    for (o = s->ctx->streams; o; o = o->next_in_ctx) {
        if (o == s || (o->flags & STREAM_NON_BLOCKING) || (s->flags & STREAM_NON_BLOCKING)) continue;
        if (s->special == 1 || o->special == 1) emu_add_dep(op, o, o->enq_seq, &cap);
    }
    if (extra) emu_add_dep(op, extra->stream, extra->seq, &cap);
    op->seq = ++s->enq_seq;
    if (s->tail) s->tail->next = op;
    else s->head = op;
    s->tail = op;
    pthread_cond_broadcast(&emu_cv);
    return E_OK;
}

static void emu_wait_until(emu_stream* s, unsigned long long seq) {
    while (s->done_seq < seq) pthread_cond_wait(&emu_cv, &emu_mu);
}

emu_result emu_wait_stream(emu_stream* s) {
    emu_wait_until(s, s->enq_seq);
    return s->ctx->sticky;
}

/* The stream of a call that needs a current context (every stream call: DRV lists INVALID_CONTEXT for them):
 * 201/709 without one, and [EMU] INVALID_HANDLE for a stream of another context than the current one. */
static emu_result emu_stream_for_call(emu_stream* h, emu_stream** out) {
    emu_ctx* ctx;
    emu_result r = emu_require_ctx(&ctx);
    return r != E_OK ? r : emu_resolve_stream(h, ctx, out);
}

EMU_API emu_result cuStreamCreateWithPriority(emu_stream** ps, unsigned int flags, int priority) {
    emu_result r = emu_enter();
    emu_ctx* ctx;
    if (r) return r;
    if (!ps || (flags & ~1u)) return emu_leave(E_INVALID_VALUE);
    if ((r = emu_require_ctx(&ctx)) != E_OK) return emu_leave(r);
    if (priority > 0) priority = 0; /* clamped to [greatest=-5, least=0] like the driver */
    if (priority < -5) priority = -5;
    *ps = emu_stream_new_locked(ctx, flags, priority, 0);
    return emu_leave(*ps ? E_OK : E_OUT_OF_MEMORY);
}

EMU_API emu_result cuStreamCreate(emu_stream** ps, unsigned int flags) { return cuStreamCreateWithPriority(ps, flags, 0); }

EMU_API emu_result cuStreamGetFlags(emu_stream* h, unsigned int* flags) {
    emu_result r = emu_enter();
    emu_stream* s;
    if (r) return r;
    if (!flags) return emu_leave(E_INVALID_VALUE);
    if ((r = emu_stream_for_call(h, &s)) != E_OK) return emu_leave(r);
    *flags = s->flags;
    return emu_leave(E_OK);
}

EMU_API emu_result cuStreamDestroy_v2(emu_stream* s) {
    emu_result r = emu_enter();
    emu_ctx* ctx;
    if (r) return r;
    if (emu_handle_kind(s) != K_STREAM || s->retired) return emu_leave(E_INVALID_HANDLE);
    if ((r = emu_require_owner(s->ctx, &ctx)) != E_OK) return emu_leave(r);
    if (s->cap) {
        emu_capture_invalidate(s->cap);
        emu_capture_leave_stream(s);
    }
    s->retired = 1; /* queued work still runs (DRV cuStreamDestroy) */
    emu_handle_del(s);
    pthread_cond_broadcast(&emu_cv);
    return emu_leave(E_OK);
}

/* Query/synchronize checks shared by cuStreamQuery and cuStreamSynchronize (rules 1.6, 1.7, 2.13). */
static emu_result emu_stream_observe(emu_stream* h, emu_stream** out) {
    emu_result r;
    emu_stream* s;
    if ((r = emu_stream_for_call(h, &s)) != E_OK) return r;
    if (s->special == 1 && (r = emu_legacy_conflict(s->ctx, 1)) != E_OK) return r;
    if (s->cap) { /* conflicts with capture whatever the mode; invalidates it [EMU A13] */
        emu_capture_invalidate(s->cap);
        return E_CAPTURE_UNSUPPORTED;
    }
    if ((r = emu_unsafe_call()) != E_OK) return r;
    *out = s;
    return E_OK;
}

EMU_API emu_result cuStreamQuery(emu_stream* h) {
    emu_result r = emu_enter();
    emu_stream* s;
    if (r) return r;
    if ((r = emu_stream_observe(h, &s)) != E_OK) return emu_leave(r);
    if (s->ctx->sticky) return emu_leave(s->ctx->sticky);
    return emu_leave(s->done_seq < s->enq_seq ? E_NOT_READY : E_OK);
}

EMU_API emu_result cuStreamSynchronize(emu_stream* h) {
    emu_result r = emu_enter();
    emu_stream* s;
    if (r) return r;
    if ((r = emu_stream_observe(h, &s)) != E_OK) return emu_leave(r);
    return emu_leave(emu_wait_stream(s));
}

static emu_result emu_ctx_sync(emu_ctx* ctx) {
    emu_capture* c;
    emu_stream* s;
    int conflict = 0;
    size_t i;
    for (c = G.captures; c; c = c->next) /* rule 1.7: a broader handle with an active capture */
        for (i = 0; i < c->n_members; i++)
            if (c->members[i]->ctx == ctx && !c->invalidated) {
                emu_capture_invalidate(c);
                conflict = 1;
            }
    if (conflict) return E_CAPTURE_UNSUPPORTED;
    for (s = ctx->streams; s; s = s->next_in_ctx) emu_wait_until(s, s->enq_seq);
    return ctx->sticky;
}

EMU_API emu_result cuCtxSynchronize(void) {
    emu_result r = emu_enter();
    emu_ctx* ctx;
    if (r) return r;
    if ((r = emu_require_ctx(&ctx)) != E_OK) return emu_leave(r);
    return emu_leave(emu_ctx_sync(ctx));
}

EMU_API emu_result cuCtxSynchronize_v2(emu_ctx* ctx) {
    emu_result r = emu_enter();
    if (r) return r;
    if (!ctx && (r = emu_require_ctx(&ctx)) != E_OK) return emu_leave(r);
    if (emu_handle_kind(ctx) != K_CTX) return emu_leave(E_INVALID_CONTEXT);
    return emu_leave(emu_ctx_sync(ctx));
}

/* ---------------------------------------------------------------- events */

EMU_API emu_result cuEventCreate(emu_event** pe, unsigned int flags) {
    emu_result r = emu_enter();
    emu_ctx* ctx;
    emu_event* e;
    if (r) return r;
    if (!pe || (flags & ~7u)) return emu_leave(E_INVALID_VALUE);
    if ((flags & EVENT_INTERPROCESS) && !(flags & EVENT_DISABLE_TIMING)) return emu_leave(E_INVALID_VALUE);
    if ((r = emu_require_ctx(&ctx)) != E_OK) return emu_leave(r);
    e = (emu_event*)emu_xcalloc(1, sizeof(*e));
    if (!e) return emu_leave(E_OUT_OF_MEMORY);
    e->ctx = ctx;
    e->flags = flags;
    emu_handle_add(e, K_EVENT);
    *pe = e;
    return emu_leave(E_OK);
}

EMU_API emu_result cuEventDestroy_v2(emu_event* e) {
    emu_result r = emu_enter();
    emu_ctx* ctx;
    if (r) return r;
    if (emu_handle_kind(e) != K_EVENT) return emu_leave(E_INVALID_HANDLE);
    if ((r = emu_require_owner(e->ctx, &ctx)) != E_OK) return emu_leave(r);
    emu_handle_del(e);
    emu_bury(e); /* a queued record may still stamp it */
    return emu_leave(E_OK);
}

EMU_API emu_result cuEventRecordWithFlags(emu_event* e, emu_stream* h, unsigned int flags) {
    emu_result r = emu_enter();
    emu_stream* s;
    emu_work w;
    if (r) return r;
    if (flags & ~1u) return emu_leave(E_INVALID_VALUE);
    if (emu_handle_kind(e) != K_EVENT) return emu_leave(E_INVALID_HANDLE);
    if ((r = emu_stream_for_call(h, &s)) != E_OK) return emu_leave(r);
    if (s->ctx != e->ctx) return emu_leave(emu_capture_fail(s, E_INVALID_HANDLE)); /* rule 2.1 */
    if (s->special == 1 && (r = emu_legacy_conflict(s->ctx, 1)) != E_OK) return emu_leave(r);
    if (s->cap) return emu_leave(emu_capture_fail(s, emu_capture_record(s, e, flags)));
    /* EXTERNAL outside capture: 401, observed on driver 580 (CUDA 13.0), H100 (A19 guessed INVALID_VALUE) */
    if (flags & EVENT_RECORD_EXTERNAL) return emu_leave(E_ILLEGAL_STATE);
    memset(&w, 0, sizeof w);
    w.type = W_EVENT_RECORD;
    w.event = e;
    w.event_gen = ++e->gen;
    e->time_valid = 0;
    if ((r = emu_submit(s, &w, NULL)) != E_OK) return emu_leave(r);
    e->recorded = 1;
    e->captured = 0;
    e->dep.stream = s;
    e->dep.seq = s->enq_seq;
    return emu_leave(E_OK);
}

EMU_API emu_result cuEventRecord(emu_event* e, emu_stream* s) { return cuEventRecordWithFlags(e, s, 0); }

EMU_API emu_result cuStreamWaitEvent(emu_stream* h, emu_event* e, unsigned int flags) {
    emu_result r = emu_enter();
    emu_stream* s;
    emu_work w;
    if (r) return r;
    if (flags & ~1u) return emu_leave(E_INVALID_VALUE);
    if (emu_handle_kind(e) != K_EVENT) return emu_leave(E_INVALID_HANDLE);
    if ((r = emu_stream_for_call(h, &s)) != E_OK) return emu_leave(r);
    if (s->special == 1 && (r = emu_legacy_conflict(s->ctx, 1)) != E_OK) return emu_leave(r);
    if (s->cap || e->captured) return emu_leave(emu_capture_fail(s, emu_capture_wait(s, e, flags)));
    /* EXTERNAL outside capture: 401, observed on driver 580 (CUDA 13.0), H100 (A19 guessed INVALID_VALUE) */
    if (flags & EVENT_WAIT_EXTERNAL) return emu_leave(E_ILLEGAL_STATE);
    if (!e->recorded) return emu_leave(E_OK); /* empty set of work (2.7) */
    memset(&w, 0, sizeof w);
    w.type = W_EMPTY;
    return emu_leave(emu_submit(s, &w, &e->dep));
}

/* Query and synchronize need the event's context current ([EMU] for cuEventQuery, whose DRV return list has
 * no INVALID_CONTEXT; another context's event: [EMU] INVALID_HANDLE). An event last recorded in a capture
 * conflicts with it in any mode (rule 2.8; emu_captured_event_use for the codes). */
static emu_result emu_event_observe(emu_event* e) {
    emu_ctx* ctx;
    emu_result r;
    if (emu_handle_kind(e) != K_EVENT) return E_INVALID_HANDLE;
    if ((r = emu_require_owner(e->ctx, &ctx)) != E_OK) return r;
    if (e->captured) return emu_captured_event_use(e);
    return emu_unsafe_call(); /* rule 1.6 */
}

static int emu_event_done(const emu_event* e) { return !e->recorded || e->dep.stream->done_seq >= e->dep.seq; }

EMU_API emu_result cuEventQuery(emu_event* e) {
    emu_result r = emu_enter();
    if (r) return r;
    if ((r = emu_event_observe(e)) != E_OK) return emu_leave(r);
    return emu_leave(emu_event_done(e) ? e->ctx->sticky : E_NOT_READY);
}

EMU_API emu_result cuEventSynchronize(emu_event* e) {
    emu_result r = emu_enter();
    if (r) return r;
    if ((r = emu_event_observe(e)) != E_OK) return emu_leave(r);
    if (e->recorded) emu_wait_until(e->dep.stream, e->dep.seq);
    return emu_leave(e->ctx->sticky);
}

EMU_API emu_result cuEventElapsedTime(float* ms, emu_event* start, emu_event* end) {
    emu_result r = emu_enter();
    emu_ctx* ctx;
    if (r) return r;
    if (!ms) return emu_leave(E_INVALID_VALUE);
    if (emu_handle_kind(start) != K_EVENT || emu_handle_kind(end) != K_EVENT) return emu_leave(E_INVALID_HANDLE);
    if ((r = emu_require_owner(start->ctx, &ctx)) != E_OK || (r = emu_require_owner(end->ctx, &ctx)) != E_OK)
        return emu_leave(r);
    if (start->captured || end->captured) return emu_leave(E_CAPTURED_EVENT);
    if ((start->flags | end->flags) & EVENT_DISABLE_TIMING) return emu_leave(E_INVALID_HANDLE);
    if (!start->recorded || !end->recorded) return emu_leave(E_INVALID_HANDLE);
    if (!emu_event_done(start) || !emu_event_done(end) || !start->time_valid || !end->time_valid)
        return emu_leave(E_NOT_READY);
    *ms = (float)((double)(end->time_ns - start->time_ns) / 1e6);
    return emu_leave(E_OK);
}

EMU_API emu_result cuEventElapsedTime_v2(float* ms, emu_event* start, emu_event* end) {
    return cuEventElapsedTime(ms, start, end);
}

/* ---------------------------------------------------------------- copies and memsets */

/* Device side of a copy: inside one live allocation (device or page-locked host). */
static int emu_range_ok(const void* p, size_t n) { return n == 0 || emu_alloc_find(p, n) != NULL; }

static emu_result emu_copy(emu_stream* h, void* dst, const void* src, size_t n, int dst_dev, int src_dev, int sync) {
    emu_ctx* ctx;
    emu_stream* s;
    emu_work w;
    emu_result r;
    if ((r = emu_require_ctx(&ctx)) != E_OK) return r; /* async copies too (DRV INVALID_CONTEXT) */
    if (!dst || !src) return E_INVALID_VALUE;
    if ((r = emu_stream_for_call(sync ? NULL : h, &s)) != E_OK) return r;
    if ((dst_dev && !emu_range_ok(dst, n)) || (src_dev && !emu_range_ok(src, n)))
        return emu_capture_fail(s, E_INVALID_VALUE);
    if (s->cap && G.strict_pageable && ((!dst_dev && !emu_alloc_find(dst, n)) || (!src_dev && !emu_alloc_find(src, n)))) {
        emu_capture_invalidate(s->cap); /* §3.3 strict option: pageable host memory in a captured copy */
        return E_CAPTURE_UNSUPPORTED;
    }
    if (n == 0) return E_OK;
    memset(&w, 0, sizeof w);
    w.type = W_MEMCPY;
    w.dst = dst;
    w.src = src;
    w.bytes = n;
    if ((r = emu_submit(s, &w, NULL)) != E_OK) return r;
    return sync ? emu_wait_stream(s) : E_OK; /* synchronous copies run on the legacy stream (rule 2.13) */
}

#define EMU_PTR(d) ((void*)(size_t)(d))

EMU_API emu_result cuMemcpyHtoD_v2(emu_devptr dst, const void* src, size_t n) {
    emu_result r = emu_enter();
    return r ? r : emu_leave(emu_copy(NULL, EMU_PTR(dst), src, n, 1, 0, 1));
}
EMU_API emu_result cuMemcpyDtoH_v2(void* dst, emu_devptr src, size_t n) {
    emu_result r = emu_enter();
    return r ? r : emu_leave(emu_copy(NULL, dst, EMU_PTR(src), n, 0, 1, 1));
}
EMU_API emu_result cuMemcpyDtoD_v2(emu_devptr dst, emu_devptr src, size_t n) {
    emu_result r = emu_enter();
    return r ? r : emu_leave(emu_copy(NULL, EMU_PTR(dst), EMU_PTR(src), n, 1, 1, 1));
}
EMU_API emu_result cuMemcpy(emu_devptr dst, emu_devptr src, size_t n) {
    emu_result r = emu_enter();
    return r ? r : emu_leave(emu_copy(NULL, EMU_PTR(dst), EMU_PTR(src), n, 0, 0, 1));
}
EMU_API emu_result cuMemcpyHtoDAsync_v2(emu_devptr dst, const void* src, size_t n, emu_stream* s) {
    emu_result r = emu_enter();
    return r ? r : emu_leave(emu_copy(s, EMU_PTR(dst), src, n, 1, 0, 0));
}
EMU_API emu_result cuMemcpyDtoHAsync_v2(void* dst, emu_devptr src, size_t n, emu_stream* s) {
    emu_result r = emu_enter();
    return r ? r : emu_leave(emu_copy(s, dst, EMU_PTR(src), n, 0, 1, 0));
}
EMU_API emu_result cuMemcpyDtoDAsync_v2(emu_devptr dst, emu_devptr src, size_t n, emu_stream* s) {
    emu_result r = emu_enter();
    return r ? r : emu_leave(emu_copy(s, EMU_PTR(dst), EMU_PTR(src), n, 1, 1, 0));
}
EMU_API emu_result cuMemcpyAsync(emu_devptr dst, emu_devptr src, size_t n, emu_stream* s) {
    emu_result r = emu_enter();
    return r ? r : emu_leave(emu_copy(s, EMU_PTR(dst), EMU_PTR(src), n, 0, 0, 0));
}

static emu_result emu_memset(emu_stream* h, emu_devptr d, unsigned int value, unsigned int elem, size_t count, int sync) {
    emu_ctx* ctx;
    emu_stream* s;
    emu_work w;
    emu_result r;
    void* p = EMU_PTR(d);
    if ((r = emu_require_ctx(&ctx)) != E_OK) return r;
    if ((r = emu_stream_for_call(sync ? NULL : h, &s)) != E_OK) return r;
    if (d % elem != 0 || !emu_range_ok(p, count * elem)) return emu_capture_fail(s, E_INVALID_VALUE);
    if (count == 0) return E_OK;
    memset(&w, 0, sizeof w);
    w.type = W_MEMSET;
    w.dst = p;
    w.bytes = count * elem;
    w.value = value;
    w.elem = elem;
    if ((r = emu_submit(s, &w, NULL)) != E_OK) return r;
    return sync ? emu_wait_stream(s) : E_OK;
}

EMU_API emu_result cuMemsetD8_v2(emu_devptr d, unsigned char v, size_t n) {
    emu_result r = emu_enter();
    return r ? r : emu_leave(emu_memset(NULL, d, v, 1, n, 1));
}
EMU_API emu_result cuMemsetD32_v2(emu_devptr d, unsigned int v, size_t n) {
    emu_result r = emu_enter();
    return r ? r : emu_leave(emu_memset(NULL, d, v, 4, n, 1));
}
EMU_API emu_result cuMemsetD8Async(emu_devptr d, unsigned char v, size_t n, emu_stream* s) {
    emu_result r = emu_enter();
    return r ? r : emu_leave(emu_memset(s, d, v, 1, n, 0));
}
EMU_API emu_result cuMemsetD32Async(emu_devptr d, unsigned int v, size_t n, emu_stream* s) {
    emu_result r = emu_enter();
    return r ? r : emu_leave(emu_memset(s, d, v, 4, n, 0));
}

EMU_API emu_result cuLaunchHostFunc(emu_stream* h, void (*fn)(void*), void* user) {
    emu_result r = emu_enter();
    emu_stream* s;
    emu_work w;
    if (r) return r;
    if ((r = emu_stream_for_call(h, &s)) != E_OK) return emu_leave(r);
    if (!fn) return emu_leave(emu_capture_fail(s, E_INVALID_VALUE));
    memset(&w, 0, sizeof w);
    w.type = W_HOST;
    w.fn = fn;
    w.user = user;
    return emu_leave(emu_submit(s, &w, NULL));
}

/* ---------------------------------------------------------------- modules and functions */

static int emu_max_ptx_isa(int driver_version) { /* PTX ISA x.y accepted by a driver, as 10*x+y (§7.5) */
    int major = driver_version / 1000, minor = (driver_version % 1000) / 10;
    if (major >= 13) return 90 + minor;
    if (major == 12) return minor >= 9 ? 88 : minor == 8 ? 87 : minor >= 5 ? 85 : 80 + minor;
    return major == 11 ? 70 + minor : 60;
}

static int emu_table_registers(const char* name) {
    size_t i;
    for (i = 0; i < sizeof opara__kernel_resource_table / sizeof opara__kernel_resource_table[0]; i++)
        if (strcmp(opara__kernel_resource_table[i].entry, name) == 0) return opara__kernel_resource_table[i].registers;
    for (i = 0; i < sizeof emu_test_kernel_resources / sizeof emu_test_kernel_resources[0]; i++)
        if (strcmp(emu_test_kernel_resources[i].entry, name) == 0) return emu_test_kernel_resources[i].registers;
    return 32; /* not in the table (a kernel compiled elsewhere): a typical count */
}

static void emu_func_init(emu_func* f, int ptx_version) {
    f->regs = emu_table_registers(f->ptx.name);
    f->max_dynamic_shared = G.profile->smem_per_block - (int)f->ptx.static_shared;
    if (f->max_dynamic_shared < 0) f->max_dynamic_shared = 0;
    f->carveout = -1;
    f->ptx_version = ptx_version;
    f->binary_version = G.profile->cc_major * 10 + G.profile->cc_minor;
}

static int emu_func_max_threads(const emu_func* f) {
    int per_warp = (f->regs * 32 + 255) / 256 * 256; /* registers are allocated per warp in units of 256 */
    int t = per_warp ? G.profile->regs_per_block / per_warp * 32 : 1024;
    unsigned int bound = f->ptx.maxntid[0] ? f->ptx.maxntid[0] * f->ptx.maxntid[1] * f->ptx.maxntid[2] : 1024;
    if (t > 1024) t = 1024;
    if ((unsigned int)t > bound) t = (int)bound;
    return t;
}

static void emu_jit_log(unsigned int n, const int* options, void** values, const char* msg) {
    unsigned int i, j;
    for (i = 0; i < n; i++) {
        if (options[i] != 5) continue; /* CU_JIT_ERROR_LOG_BUFFER, size in CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES (6) */
        for (j = 0; j < n; j++)
            if (options[j] == 6 && values[i]) {
                size_t cap = (size_t)values[j];
                if (cap) snprintf((char*)values[i], cap, "%s", msg);
            }
    }
}

static void emu_module_free(emu_module* mod) {
    int i;
    for (i = 0; i < mod->n_funcs; i++) {
        emu_handle_del(mod->funcs[i]);
        free(mod->funcs[i]);
    }
    free(mod->funcs);
    free(mod);
}

/* Checks one PTX entry against the host build the emulator will execute. */
static emu_result emu_entry_check(const emu_ptx_entry* e, const opara_kernel_entry* host, char* err, size_t n) {
    int j;
    if (!host) {
        snprintf(err, n, "kernel %s has no host build in the emulator (is its .cu file in src/cuda/kernels?)", e->name);
        return E_INVALID_PTX;
    }
    if (host->param_count != e->param_count) {
        snprintf(err, n, "kernel %s: PTX has %d parameters, the host build %d", e->name, e->param_count,
                 host->param_count);
        return E_INVALID_PTX;
    }
    for (j = 0; j < e->param_count; j++)
        if (host->param_sizes[j] != e->param_size[j]) {
            snprintf(err, n, "kernel %s: parameter %d is %u bytes in PTX, %u in the host build", e->name, j,
                     e->param_size[j], (unsigned int)host->param_sizes[j]);
            return E_INVALID_PTX;
        }
    return E_OK;
}

static emu_result emu_module_build(emu_ctx* ctx, const emu_ptx_module* m, emu_module** out, char* err, size_t n) {
    emu_module* mod = (emu_module*)emu_xcalloc(1, sizeof(*mod));
    emu_result r;
    int i;
    if (!mod || !(mod->funcs = (emu_func**)emu_xcalloc((size_t)m->entry_count, sizeof(emu_func*)))) {
        free(mod);
        return E_OUT_OF_MEMORY;
    }
    mod->ctx = ctx;
    for (i = 0; i < m->entry_count; i++) {
        const emu_ptx_entry* e = &m->entries[i];
        const opara_kernel_entry* host = emu_exec_find(e->name);
        emu_func* f;
        r = emu_entry_check(e, host, err, n);
        if (r == E_OK && !(f = (emu_func*)emu_xcalloc(1, sizeof(*f)))) r = E_OUT_OF_MEMORY;
        if (r != E_OK) {
            emu_module_free(mod);
            return r;
        }
        f->module = mod;
        f->host = host;
        f->ptx = *e;
        emu_func_init(f, m->version_major * 10 + m->version_minor);
        mod->funcs[mod->n_funcs++] = f;
        emu_handle_add(f, K_FUNC);
    }
    emu_handle_add(mod, K_MODULE);
    *out = mod;
    return E_OK;
}

EMU_API emu_result cuModuleLoadDataEx(emu_module** pmod, const void* image, unsigned int n, int* options,
                                      void** values) {
    emu_result r = emu_enter();
    emu_ptx_module m;
    emu_ctx* ctx;
    char err[512];
    const unsigned char* b = (const unsigned char*)image;
    if (r) return r;
    if ((r = emu_require_ctx(&ctx)) != E_OK) return emu_leave(r);
    if (!pmod || !image || (n && (!options || !values))) return emu_leave(E_INVALID_VALUE);
    if ((r = emu_unsafe_call()) != E_OK) return emu_leave(r); /* rule 1.6 */
    if ((b[0] == 0x7f && b[1] == 'E' && b[2] == 'L' && b[3] == 'F') || (b[0] == 0x50 && b[1] == 0xed && b[2] == 0x55)) {
        emu_report("cuModuleLoadData: a cubin/fatbin image; the emulator runs PTX modules only");
        return emu_leave(E_NO_BINARY_FOR_GPU);
    }
    if (!strstr((const char*)image, ".version")) { /* text that is no PTX: 200 (observed on driver 580, H100) */
        emu_report("cuModuleLoadData: neither a cubin, a fatbin nor PTX (no .version directive)");
        return emu_leave(E_INVALID_IMAGE);
    }
    if (emu_ptx_parse((const char*)image, &m, err, sizeof err) != 0) {
        emu_jit_log(n, options, values, err);
        return emu_leave(E_INVALID_PTX);
    }
    r = E_OK;
    if (m.version_major * 10 + m.version_minor > emu_max_ptx_isa(G.driver_version)) {
        snprintf(err, sizeof err, "PTX ISA %d.%d is newer than this driver supports", m.version_major, m.version_minor);
        r = E_UNSUPPORTED_PTX_VERSION; /* §7.5 */
    } else if (m.target_sm > G.profile->cc_major * 10 + G.profile->cc_minor) {
        snprintf(err, sizeof err, "PTX .target sm_%d is above the device (sm_%d%d)", m.target_sm, G.profile->cc_major,
                 G.profile->cc_minor);
        r = E_INVALID_PTX; /* §7.4, A18 */
    } else {
        r = emu_module_build(ctx, &m, pmod, err, sizeof err);
    }
    emu_ptx_free(&m);
    if (r != E_OK) {
        emu_jit_log(n, options, values, err);
        if (G.verbose || r == E_INVALID_PTX) emu_report("cuModuleLoadData: %s", err);
    }
    return emu_leave(r);
}

EMU_API emu_result cuModuleLoadData(emu_module** pmod, const void* image) {
    return cuModuleLoadDataEx(pmod, image, 0, NULL, NULL);
}

/* A module belongs to its context: unloading or looking it up needs that context current (DRV "unloads a
 * module from the current context"); [EMU] INVALID_CONTEXT when another one is current. */
static emu_result emu_module_ctx(const emu_module* mod) {
    emu_ctx* ctx;
    emu_result r = emu_require_ctx(&ctx);
    return r != E_OK ? r : mod->ctx == ctx ? E_OK : E_INVALID_CONTEXT;
}

EMU_API emu_result cuModuleUnload(emu_module* mod) {
    emu_result r = emu_enter();
    int i;
    if (r) return r;
    if (emu_handle_kind(mod) != K_MODULE) return emu_leave(E_INVALID_HANDLE);
    if ((r = emu_module_ctx(mod)) != E_OK) return emu_leave(r);
    if ((r = emu_unsafe_call()) != E_OK) return emu_leave(r);
    for (i = 0; i < mod->n_funcs; i++) emu_handle_del(mod->funcs[i]);
    emu_handle_del(mod);
    emu_bury(mod); /* queued launches and graph nodes may still reference its functions */
    return emu_leave(E_OK);
}

EMU_API emu_result cuModuleGetFunction(emu_func** pf, emu_module* mod, const char* name) {
    emu_result r = emu_enter();
    int i;
    if (r) return r;
    if (!pf || !name) return emu_leave(E_INVALID_VALUE);
    if (emu_handle_kind(mod) != K_MODULE) return emu_leave(E_INVALID_HANDLE);
    if ((r = emu_module_ctx(mod)) != E_OK) return emu_leave(r);
    for (i = 0; i < mod->n_funcs; i++)
        if (strcmp(mod->funcs[i]->ptx.name, name) == 0) {
            long long cold = mod->funcs[i]->loaded ? 0 : G.func_first_use_us;
            mod->funcs[i]->loaded = 1;
            *pf = mod->funcs[i];
            emu_leave(E_OK);
            emu_sleep_us(cold); /* lazy loading: the kernel is loaded at its first lookup (outside the lock) */
            return E_OK;
        }
    return emu_leave(E_NOT_FOUND);
}

/* A function of a module needs its context current ([EMU] INVALID_HANDLE for another context's function);
 * the emulator's library kernels (no module) run in any context. */
static emu_result emu_func_ctx(const emu_func* f, emu_ctx** ctx) {
    emu_result r = emu_require_ctx(ctx);
    return r != E_OK ? r : (f->module && f->module->ctx != *ctx) ? E_INVALID_HANDLE : E_OK;
}

EMU_API emu_result cuFuncGetAttribute(int* value, int attr, emu_func* f) {
    emu_result r = emu_enter();
    emu_ctx* ctx;
    if (r) return r;
    if (!value) return emu_leave(E_INVALID_VALUE);
    if (emu_handle_kind(f) != K_FUNC) return emu_leave(E_INVALID_HANDLE);
    if ((r = emu_func_ctx(f, &ctx)) != E_OK) return emu_leave(r);
    switch (attr) {
    case 0: *value = emu_func_max_threads(f); break;
    case 1: *value = (int)f->ptx.static_shared; break;
    case 2: case 3: case 7: *value = 0; break;
    case 4: *value = f->regs; break;
    case 5: *value = f->ptx_version; break;
    case 6: *value = f->binary_version; break;
    case 8: *value = f->max_dynamic_shared; break;
    case 9: *value = f->carveout; break;
    case 10: case 11: case 12: case 13: case 14: case 15: *value = 0; break;
    default: return emu_leave(E_INVALID_VALUE);
    }
    return emu_leave(E_OK);
}

EMU_API emu_result cuFuncSetAttribute(emu_func* f, int attr, int value) {
    emu_result r = emu_enter();
    emu_ctx* ctx;
    if (r) return r;
    if (emu_handle_kind(f) != K_FUNC) return emu_leave(E_INVALID_HANDLE);
    if ((r = emu_func_ctx(f, &ctx)) != E_OK) return emu_leave(r);
    if (attr == 8) { /* MAX_DYNAMIC_SHARED_SIZE_BYTES: static + dynamic <= opt-in limit (rule 5.3) */
        if (value < 0 || value + (int)f->ptx.static_shared > G.profile->smem_optin) return emu_leave(E_INVALID_VALUE);
        f->max_dynamic_shared = value;
    } else if (attr == 9) {
        if (value < -1 || value > 100) return emu_leave(E_INVALID_VALUE);
        f->carveout = value;
    } else if (attr < 11 || attr > 15) {
        return emu_leave(E_INVALID_VALUE); /* read-only attribute */
    }
    return emu_leave(E_OK);
}

/* Validates a launch configuration and copies the arguments (rules 5.1-5.3). */
emu_result emu_kernel_work(emu_func* f, const unsigned int grid[3], const unsigned int block[3], unsigned int shared,
                           void** kp, void** extra, emu_work* w) {
    unsigned long long threads = (unsigned long long)block[0] * block[1] * block[2];
    int i, n = f->ptx.param_count;
    memset(w, 0, sizeof(*w));
    if (!grid[0] || !grid[1] || !grid[2] || !block[0] || !block[1] || !block[2]) return E_INVALID_VALUE;
    if (grid[0] > 2147483647u || grid[1] > 65535u || grid[2] > 65535u) return E_INVALID_VALUE;
    if (block[0] > 1024u || block[1] > 1024u || block[2] > 64u || threads > 1024u) return E_INVALID_VALUE;
    if (f->ptx.reqntid[0] && (block[0] != f->ptx.reqntid[0] || block[1] != f->ptx.reqntid[1] ||
                              block[2] != f->ptx.reqntid[2]))
        return E_INVALID_VALUE;
    if (threads > (unsigned long long)emu_func_max_threads(f)) return E_LAUNCH_OUT_OF_RESOURCES;
    if (shared > (unsigned int)f->max_dynamic_shared) return E_INVALID_VALUE; /* A15 */
    if (kp && extra) return E_INVALID_VALUE;
    w->type = W_KERNEL;
    w->func = f;
    w->grid.x = grid[0];
    w->grid.y = grid[1];
    w->grid.z = grid[2];
    w->block.x = block[0];
    w->block.y = block[1];
    w->block.z = block[2];
    w->shared = shared;
    w->params = (unsigned char*)emu_xcalloc(f->ptx.param_bytes, 1);
    w->param_ptrs = (void**)emu_xcalloc((size_t)n, sizeof(void*));
    if (!w->params || !w->param_ptrs) return E_OUT_OF_MEMORY;
    for (i = 0; i < n; i++) w->param_ptrs[i] = w->params + f->ptx.param_offset[i];
    if (extra) { /* {CU_LAUNCH_PARAM_BUFFER_POINTER(1), p, CU_LAUNCH_PARAM_BUFFER_SIZE(2), &size, END(0)} */
        const void* buf = NULL;
        const size_t* size = NULL;
        for (i = 0; extra[i] != NULL; i += 2) {
            if (extra[i] == (void*)1) buf = extra[i + 1];
            else if (extra[i] == (void*)2) size = (const size_t*)extra[i + 1];
            else return E_INVALID_VALUE;
        }
        if (size && *size && !buf) return E_INVALID_VALUE;
        if (n > 0 && (!buf || !size)) return E_INVALID_VALUE;
        if (size && *size != f->ptx.param_bytes) return E_LAUNCH_OUT_OF_RESOURCES; /* wrong-size arguments (5.1) */
        if (n > 0) memcpy(w->params, buf, f->ptx.param_bytes);
        return E_OK;
    }
    if (n > 0 && !kp) return E_INVALID_VALUE;
    for (i = 0; i < n; i++) {
        if (!kp[i]) return E_INVALID_VALUE;
        if (emu_alloc_find(kp[i], 1)) { /* [EMU] the classic bug: the argument's value instead of its address */
            emu_report("kernel %s: kernelParams[%d] points into device memory; it must point to the argument",
                       f->ptx.name, i);
            return E_INVALID_VALUE;
        }
        memcpy(w->params + f->ptx.param_offset[i], kp[i], f->ptx.param_size[i]);
    }
    return E_OK;
}

EMU_API emu_result cuLaunchKernel(emu_func* f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
                                  unsigned int by, unsigned int bz, unsigned int shared, emu_stream* h, void** kp,
                                  void** extra) {
    emu_result r = emu_enter();
    unsigned int grid[3], block[3];
    emu_stream* s;
    emu_work w;
    emu_ctx* ctx;
    if (r) return r;
    if (emu_handle_kind(f) != K_FUNC) return emu_leave(E_INVALID_HANDLE);
    if ((r = emu_func_ctx(f, &ctx)) != E_OK) return emu_leave(r);
    if ((r = emu_resolve_stream(h, ctx, &s)) != E_OK) return emu_leave(r);
    if (ctx->sticky) return emu_leave(ctx->sticky);
    grid[0] = gx;
    grid[1] = gy;
    grid[2] = gz;
    block[0] = bx;
    block[1] = by;
    block[2] = bz;
    if ((r = emu_kernel_work(f, grid, block, shared, kp, extra, &w)) != E_OK) {
        emu_work_free(&w);
        return emu_leave(emu_capture_fail(s, r));
    }
    return emu_leave(emu_submit(s, &w, NULL));
}

/* The emulator's own kernels (cuBLAS/cuDNN fakes): a function handle for a host-built entry, with the
 * parameter layout of the host types (natural alignment). */
EMU_API emu_result opara_emu_function(const char* name, emu_func** pf) {
    static emu_func* made[64];
    static int n_made;
    const opara_kernel_entry* host;
    emu_func* f;
    int i;
    emu_result r = emu_enter();
    if (r) return r;
    for (i = 0; i < n_made; i++)
        if (strcmp(made[i]->ptx.name, name) == 0) {
            *pf = made[i];
            return emu_leave(E_OK);
        }
    host = emu_exec_find(name);
    if (!host || n_made == 64 || host->param_count > EMU_PTX_MAX_PARAMS) return emu_leave(E_NOT_FOUND);
    f = (emu_func*)emu_xcalloc(1, sizeof(*f));
    if (!f) return emu_leave(E_OUT_OF_MEMORY);
    f->host = host;
    snprintf(f->ptx.name, sizeof f->ptx.name, "%s", name);
    f->ptx.param_count = host->param_count;
    for (i = 0; i < host->param_count; i++) {
        unsigned int size = host->param_sizes[i];
        f->ptx.param_offset[i] = (f->ptx.param_bytes + size - 1) / size * size;
        f->ptx.param_size[i] = size;
        f->ptx.param_bytes = f->ptx.param_offset[i] + size;
    }
    f->ptx.static_shared = (unsigned int)G.profile->smem_per_block;
    emu_func_init(f, 0);
    f->max_dynamic_shared = 0;
    emu_handle_add(f, K_FUNC);
    made[n_made++] = f;
    *pf = f;
    return emu_leave(E_OK);
}

/* Registered with atexit by cuInit: stops and joins every worker before the process (and leak checkers)
 * look at memory. Work still queued at exit is dropped, as when a process with a real GPU exits. */
void emu_join_workers(void) {
    size_t i, n;
    pthread_mutex_lock(&emu_mu);
    G.quit = 1;
    G.paused = 0;
    pthread_cond_broadcast(&emu_cv);
    n = G.n_all_streams;
    pthread_mutex_unlock(&emu_mu);
    for (i = 0; i < n; i++) pthread_join(G.all_streams[i]->thread, NULL);
    emu_exec_shutdown();
}
