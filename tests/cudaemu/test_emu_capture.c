/* Tests of stream capture and graphs in the emulated driver: legal and illegal capture sequences with the
 * error codes NVIDIA documents (shared/research/cuda-semantics.md rule numbers in comments) or its driver was
 * observed to return (driver 580 (CUDA 13.0), H100: `make test-gpu` runs these tests there), graph topology
 * after fork/join, instantiate/launch/update, and the randomized execution order exposing a missing edge. */
#include <pthread.h>

#include "emu_test.h"

enum { CAP_GLOBAL = 0, CAP_THREAD_LOCAL = 1, CAP_RELAXED = 2 };
enum { ST_NONE = 0, ST_ACTIVE = 1, ST_INVALIDATED = 2 };
enum { N = 64 };

typedef struct fixture {
    tcu_driver* d;
    tcu_func add;
    tcu_devptr a, b, c, x, y;
    tcu_stream s0, s1, s2;
    tcu_event fork, join;
} fixture;

static int fixture_open(fixture* f, tcu_driver* d, unsigned int stream_flags) {
    float host[N];
    int i;
    memset(f, 0, sizeof(*f));
    f->d = d;
    if (!tcu_sample_module(d) || d->ModuleGetFunction(&f->add, tcu_sample_module(d), "opara_sample_add_f32") != 0)
        return -1;
    for (i = 0; i < N; i++) host[i] = (float)i;
    if (d->MemAlloc(&f->a, sizeof host) || d->MemAlloc(&f->b, sizeof host) || d->MemAlloc(&f->c, sizeof host) ||
        d->MemAlloc(&f->x, sizeof host) || d->MemAlloc(&f->y, sizeof host))
        return -1;
    if (d->MemcpyHtoD(f->a, host, sizeof host) || d->MemcpyHtoD(f->b, host, sizeof host) ||
        d->MemcpyHtoD(f->c, host, sizeof host))
        return -1;
    if (d->StreamCreate(&f->s0, stream_flags) || d->StreamCreate(&f->s1, stream_flags) ||
        d->StreamCreate(&f->s2, stream_flags) || d->EventCreate(&f->fork, 2) || d->EventCreate(&f->join, 2))
        return -1;
    return 0;
}

static void fixture_close(fixture* f) {
    tcu_driver* d = f->d;
    d->CtxSynchronize();
    d->MemFree(f->a);
    d->MemFree(f->b);
    d->MemFree(f->c);
    d->MemFree(f->x);
    d->MemFree(f->y);
    d->StreamDestroy(f->s0);
    d->StreamDestroy(f->s1);
    d->StreamDestroy(f->s2);
    d->EventDestroy(f->fork);
    d->EventDestroy(f->join);
}

/* out = p + q with opara_sample_add_f32 */
static tcu_result add(fixture* f, tcu_stream s, tcu_devptr p, tcu_devptr q, tcu_devptr out) {
    int n = N;
    void* args[4];
    args[0] = &p;
    args[1] = &q;
    args[2] = &out;
    args[3] = &n;
    return f->d->LaunchKernel(f->add, 1, 1, 1, N, 1, 1, 0, s, args, NULL);
}

/* The capture status of s, or minus the error of cuStreamIsCapturing: one CHECK_EQ line names the step. */
static int status_of(fixture* f, tcu_stream s) {
    int status = -1;
    tcu_result r = f->d->StreamIsCapturing(s, &status);
    return r != 0 ? -r : status;
}

/* cuStreamEndCapture on s; the graph of a successful end is destroyed. *null_graph (when not NULL): the call
 * set the graph to NULL. */
static tcu_result end_capture(fixture* f, tcu_stream s, int* null_graph) {
    tcu_graph g = (tcu_graph)1;
    tcu_result r = f->d->StreamEndCapture(s, &g);
    if (null_graph) *null_graph = g == NULL;
    if (r == 0 && g) f->d->GraphDestroy(g);
    return r;
}

#define FIXTURE(f, d, flags)                                                                                   \
    fixture f;                                                                                                \
    TCU_REQUIRE_DRIVER(d);                                                                                     \
    REQUIRE(fixture_open(&f, d, flags) == 0)

/* x = a + b (s0); fork: y = c + c (s1) and x = x + a (s0); join; y = x + y (s0).
 * Expected: x = 2a + b = 3i, y = 3i + 2i = 5i. Nodes: A, B, C, D; edges A->B, A->C, B->D, C->D. */
static tcu_result capture_fork_join(fixture* f, tcu_graph* g) {
    tcu_driver* d = f->d;
    tcu_result r;
    if ((r = d->StreamBeginCapture(f->s0, CAP_GLOBAL)) != 0) return r;
    if ((r = add(f, f->s0, f->a, f->b, f->x)) != 0) return r;                  /* A */
    if ((r = d->EventRecord(f->fork, f->s0)) != 0) return r;
    if ((r = d->StreamWaitEvent(f->s1, f->fork, 0)) != 0) return r;
    if ((r = add(f, f->s1, f->c, f->c, f->y)) != 0) return r;                  /* B */
    if ((r = add(f, f->s0, f->x, f->a, f->x)) != 0) return r;                  /* C */
    if ((r = d->EventRecord(f->join, f->s1)) != 0) return r;
    if ((r = d->StreamWaitEvent(f->s0, f->join, 0)) != 0) return r;
    if ((r = add(f, f->s0, f->x, f->y, f->y)) != 0) return r;                  /* D */
    return d->StreamEndCapture(f->s0, g);
}

static int check_result(fixture* f, int scale) {
    float y[N];
    int i, bad = 0;
    if (f->d->MemcpyDtoH(y, f->y, sizeof y) != 0) return -1;
    for (i = 0; i < N; i++) bad += y[i] != (float)(scale * i);
    return bad;
}

OT_TEST(fork_join_capture_builds_the_documented_graph) { /* rules 2.1-2.3 */
    FIXTURE(f, d, 0);
    tcu_graph g = NULL;
    tcu_node nodes[6], from[6], to[6];
    tcu_edge_data data[6];
    tcu_kernel_node_params p;
    size_t n = 6, e = 6, i;
    int type = -1, edges_ok = 0;
    CHECK_EQ(capture_fork_join(&f, &g), 0);
    REQUIRE(g != NULL);
    CHECK_EQ(d->GraphGetNodes(g, nodes, &n), 0);
    REQUIRE(n == 4);
    CHECK(nodes[4] == NULL && nodes[5] == NULL); /* padding (rule 4.4) */
    for (i = 0; i < n; i++) {
        CHECK_EQ(d->GraphNodeGetType(nodes[i], &type), 0);
        CHECK_EQ(type, 0); /* CU_GRAPH_NODE_TYPE_KERNEL */
    }
    CHECK_EQ(d->GraphGetEdges(g, from, to, data, &e), 0);
    CHECK_EQ(e, 4);
    for (i = 0; i < e; i++) { /* the four expected edges, in any order */
        edges_ok += (from[i] == nodes[0] && to[i] == nodes[1]) || (from[i] == nodes[0] && to[i] == nodes[2]) ||
                    (from[i] == nodes[1] && to[i] == nodes[3]) || (from[i] == nodes[2] && to[i] == nodes[3]);
        CHECK(data[i].type == 0 && data[i].from_port == 0);
    }
    CHECK_EQ(edges_ok, 4);
    n = 0;
    CHECK_EQ(d->GraphGetRootNodes(g, NULL, &n), 0);
    CHECK_EQ(n, 1);
    CHECK_EQ(d->GraphKernelNodeGetParams(nodes[1], &p), 0);
    CHECK(p.func == f.add);
    CHECK_EQ(p.block_x, N);
    CHECK_EQ(p.grid_x, 1);
    REQUIRE(p.kernel_params != NULL);
    CHECK(*(tcu_devptr*)p.kernel_params[0] == f.c); /* argument values copied at capture (3.2) */
    CHECK(*(tcu_devptr*)p.kernel_params[2] == f.y);
    CHECK_EQ(*(int*)p.kernel_params[3], N);
    d->GraphDestroy(g);
    fixture_close(&f);
}

OT_TEST(captured_graph_runs_correctly_many_times) {
    FIXTURE(f, d, 0);
    tcu_graph g = NULL;
    tcu_exec x = NULL;
    int launch;
    CHECK_EQ(capture_fork_join(&f, &g), 0);
    REQUIRE(g != NULL);
    CHECK_EQ(d->GraphInstantiate(&x, g, 0), 0);
    REQUIRE(x != NULL);
    for (launch = 0; launch < 20; launch++) {
        CHECK_EQ(d->GraphLaunch(x, f.s2), 0);
        CHECK_EQ(d->StreamSynchronize(f.s2), 0);
        CHECK_EQ(check_result(&f, 5), 0);
    }
    d->GraphExecDestroy(x);
    d->GraphDestroy(g);
    fixture_close(&f);
}

OT_TEST(graph_runs_on_several_threads) {
    FIXTURE(f, d, 0);
    tcu_graph g = NULL;
    tcu_exec x = NULL;
    int launch;
    if (!d->emu_config) {
        fixture_close(&f);
        SKIP("emulator option");
    }
    d->emu_config("graph_threads", 2);
    CHECK_EQ(capture_fork_join(&f, &g), 0);
    REQUIRE(g != NULL);
    CHECK_EQ(d->GraphInstantiate(&x, g, 0), 0);
    for (launch = 0; launch < 10; launch++) {
        CHECK_EQ(d->GraphLaunch(x, f.s2), 0);
        CHECK_EQ(d->StreamSynchronize(f.s2), 0);
        CHECK_EQ(check_result(&f, 5), 0);
    }
    d->emu_config("graph_threads", 1);
    d->GraphExecDestroy(x);
    d->GraphDestroy(g);
    fixture_close(&f);
}

OT_TEST(capture_status_and_info_follow_the_sequence) { /* rules 2.2, 2.9, 2.10 */
    FIXTURE(f, d, 0);
    int status = -1;
    unsigned long long id0 = 0, id1 = 1;
    tcu_graph g0 = NULL, g1 = NULL, g = NULL;
    const tcu_node* deps = NULL;
    size_t ndeps = 0, n_nodes = 5;
    tcu_node nodes[2];
    CHECK_EQ(d->StreamBeginCapture(f.s0, CAP_GLOBAL), 0);
    CHECK_EQ(d->StreamIsCapturing(f.s1, &status), 0);
    CHECK_EQ(status, ST_NONE);
    /* the graph being captured can be read (cuStreamGetCaptureInfo); with no node yet, a fill call with room
       for 0 nodes is INVALID_VALUE (observed on driver 580 (CUDA 13.0), H100) */
    CHECK_EQ(d->StreamGetCaptureInfo(f.s0, &status, NULL, &g0, NULL, NULL, NULL), 0);
    REQUIRE(g0 != NULL);
    CHECK_EQ(d->GraphGetNodes(g0, NULL, &n_nodes), 0);
    CHECK_EQ(n_nodes, 0);
    CHECK_EQ(d->GraphGetNodes(g0, nodes, &n_nodes), TCU_INVALID_VALUE);
    CHECK_EQ(add(&f, f.s0, f.a, f.b, f.x), 0);
    n_nodes = 2;
    CHECK_EQ(d->GraphGetNodes(g0, nodes, &n_nodes), 0);
    CHECK_EQ(n_nodes, 1);
    g0 = NULL;
    CHECK_EQ(d->EventRecord(f.fork, f.s0), 0);
    CHECK_EQ(d->StreamWaitEvent(f.s1, f.fork, 0), 0);
    CHECK_EQ(d->StreamIsCapturing(f.s1, &status), 0);
    CHECK_EQ(status, ST_ACTIVE);
    CHECK_EQ(d->StreamGetCaptureInfo(f.s0, &status, &id0, &g0, &deps, NULL, &ndeps), 0);
    CHECK_EQ(ndeps, 1);
    CHECK_EQ(d->StreamGetCaptureInfo(f.s1, &status, &id1, &g1, NULL, NULL, NULL), 0);
    CHECK(id0 == id1 && g0 == g1); /* same capture sequence and graph */
    CHECK_EQ(d->StreamGetCaptureInfo(f.s0, NULL, NULL, NULL, NULL, NULL, NULL), TCU_INVALID_VALUE);
    CHECK_EQ(d->EventRecord(f.join, f.s1), 0);
    CHECK_EQ(d->StreamWaitEvent(f.s0, f.join, 0), 0);
    CHECK_EQ(d->StreamEndCapture(f.s0, &g), 0);
    CHECK_EQ(d->StreamIsCapturing(f.s1, &status), 0);
    CHECK_EQ(status, ST_NONE); /* every member leaves capture at the end (1.2) */
    if (g) d->GraphDestroy(g);
    fixture_close(&f);
}

/* The codes of the first three calls and of the misuse sequences were observed on driver 580 (CUDA 13.0), H100
 * (cuda-semantics.md A1 and A2 guessed INVALID_VALUE). That run did the two misuses in one capture: begin twice
 * (401), record and fork (both succeeded), end on the forked stream (903); then the origin was INVALIDATED and
 * its end returned 901. Here each misuse has its own capture, its status checked right after it. */
OT_TEST(begin_and_end_misuse) { /* rules 1.1-1.3, 1.8, A1, A2 */
    FIXTURE(f, d, 0);
    int null_graph = 0;
    CHECK_EQ(d->StreamBeginCapture(NULL, CAP_GLOBAL), TCU_CAPTURE_UNSUPPORTED);
    CHECK_EQ(d->StreamBeginCapture(TCU_LEGACY, CAP_GLOBAL), TCU_CAPTURE_UNSUPPORTED);
    CHECK_EQ(end_capture(&f, f.s0, NULL), TCU_ILLEGAL_STATE); /* not capturing */
    /* (a) a second begin: 401, and the capture stays valid (the status check verifies it): in the run above
     * the record and the fork right after it succeeded, and PG-G says an invalidated capture's streams and
     * captured events return errors. */
    CHECK_EQ(d->StreamBeginCapture(f.s0, CAP_GLOBAL), 0);
    CHECK_EQ(d->StreamBeginCapture(f.s0, CAP_GLOBAL), TCU_ILLEGAL_STATE);
    CHECK_EQ(status_of(&f, f.s0), ST_ACTIVE);
    CHECK_EQ(d->EventRecord(f.fork, f.s0), 0);
    CHECK_EQ(end_capture(&f, f.s0, &null_graph), 0);
    CHECK(!null_graph);
    /* (b) end on a forked stream: 903, and the capture is invalidated (1.3, 1.8) */
    CHECK_EQ(d->StreamBeginCapture(f.s0, CAP_GLOBAL), 0);
    CHECK_EQ(d->EventRecord(f.fork, f.s0), 0);
    CHECK_EQ(d->StreamWaitEvent(f.s1, f.fork, 0), 0);
    CHECK_EQ(end_capture(&f, f.s1, NULL), TCU_CAPTURE_UNMATCHED);
    CHECK_EQ(status_of(&f, f.s0), ST_INVALIDATED);
    CHECK_EQ(end_capture(&f, f.s0, &null_graph), TCU_CAPTURE_INVALIDATED);
    CHECK(null_graph);
    fixture_close(&f);
}

/* [EMU] The observed 903 rule generalised (emu_capture_fail): any call that fails on a capturing stream
 * invalidates its capture, here a launch with too many threads per block. Unverified on a GPU. */
OT_TEST(a_failed_launch_invalidates_the_capture) { /* rule 1.8 */
    FIXTURE(f, d, 0);
    int n = N, null_graph = 0;
    void* args[4];
    args[0] = &f.a;
    args[1] = &f.b;
    args[2] = &f.x;
    args[3] = &n;
    CHECK_EQ(d->StreamBeginCapture(f.s0, CAP_GLOBAL), 0);
    CHECK_EQ(d->LaunchKernel(f.add, 1, 1, 1, 2048, 1, 1, 0, f.s0, args, NULL), TCU_INVALID_VALUE);
    CHECK_EQ(status_of(&f, f.s0), ST_INVALIDATED);
    CHECK_EQ(end_capture(&f, f.s0, &null_graph), TCU_CAPTURE_INVALIDATED);
    CHECK(null_graph);
    fixture_close(&f);
}

OT_TEST(unjoined_fork_fails_end_capture) { /* rule 2.4 */
    FIXTURE(f, d, 0);
    tcu_graph g = (tcu_graph)1;
    int status = -1;
    CHECK_EQ(d->StreamBeginCapture(f.s0, CAP_GLOBAL), 0);
    CHECK_EQ(add(&f, f.s0, f.a, f.b, f.x), 0);
    CHECK_EQ(d->EventRecord(f.fork, f.s0), 0);
    CHECK_EQ(d->StreamWaitEvent(f.s1, f.fork, 0), 0);
    CHECK_EQ(add(&f, f.s1, f.c, f.c, f.y), 0);
    CHECK_EQ(d->StreamEndCapture(f.s0, &g), TCU_CAPTURE_UNJOINED);
    CHECK(g == NULL);
    CHECK_EQ(d->StreamIsCapturing(f.s1, &status), 0);
    CHECK_EQ(status, ST_NONE);
    CHECK_EQ(d->StreamBeginCapture(f.s0, CAP_GLOBAL), 0); /* usable again */
    CHECK_EQ(d->StreamEndCapture(f.s0, &g), 0);
    if (g) d->GraphDestroy(g);
    fixture_close(&f);
}

OT_TEST(sync_or_query_of_a_capturing_stream_invalidates) { /* rules 1.7, 1.8 */
    FIXTURE(f, d, 0);
    tcu_graph g = (tcu_graph)1;
    int status = -1;
    CHECK_EQ(d->StreamBeginCapture(f.s0, CAP_RELAXED), 0);
    CHECK_EQ(add(&f, f.s0, f.a, f.b, f.x), 0);
    CHECK_EQ(d->StreamSynchronize(f.s0), TCU_CAPTURE_UNSUPPORTED);
    CHECK_EQ(d->StreamIsCapturing(f.s0, &status), 0);
    CHECK_EQ(status, ST_INVALIDATED);
    CHECK_EQ(add(&f, f.s0, f.a, f.b, f.x), TCU_CAPTURE_INVALIDATED);
    CHECK_EQ(d->StreamEndCapture(f.s0, &g), TCU_CAPTURE_INVALIDATED);
    CHECK(g == NULL);
    CHECK_EQ(d->StreamIsCapturing(f.s0, &status), 0);
    CHECK_EQ(status, ST_NONE);
    CHECK_EQ(d->StreamBeginCapture(f.s0, CAP_GLOBAL), 0);
    CHECK_EQ(d->StreamQuery(f.s0), TCU_CAPTURE_UNSUPPORTED);
    CHECK_EQ(d->StreamEndCapture(f.s0, &g), TCU_CAPTURE_INVALIDATED);
    CHECK_EQ(d->StreamBeginCapture(f.s0, CAP_GLOBAL), 0);
    CHECK_EQ(d->CtxSynchronize(), TCU_CAPTURE_UNSUPPORTED); /* a broader handle (1.7) */
    CHECK_EQ(d->StreamEndCapture(f.s0, &g), TCU_CAPTURE_INVALIDATED);
    fixture_close(&f);
}

OT_TEST(unsafe_calls_depend_on_the_capture_mode) { /* rules 1.4-1.6 */
    FIXTURE(f, d, 0);
    tcu_graph g = (tcu_graph)1;
    tcu_devptr p = 0;
    int mode = CAP_RELAXED;
    CHECK_EQ(d->StreamBeginCapture(f.s0, CAP_GLOBAL), 0);
    CHECK_EQ(d->MemAlloc(&p, 16), TCU_CAPTURE_UNSUPPORTED);
    CHECK_EQ(d->StreamEndCapture(f.s0, &g), TCU_CAPTURE_INVALIDATED);
    CHECK_EQ(d->StreamBeginCapture(f.s0, CAP_GLOBAL), 0);
    CHECK_EQ(d->ThreadExchangeStreamCaptureMode(&mode), 0); /* this thread relaxed */
    CHECK_EQ(mode, CAP_GLOBAL);
    CHECK_EQ(d->MemAlloc(&p, 16), 0);
    CHECK_EQ(d->MemFree(p), 0);
    CHECK_EQ(d->ThreadExchangeStreamCaptureMode(&mode), 0); /* restore */
    CHECK_EQ(d->StreamEndCapture(f.s0, &g), 0);
    if (g) d->GraphDestroy(g);
    CHECK_EQ(d->StreamBeginCapture(f.s0, CAP_RELAXED), 0);
    CHECK_EQ(d->MemAlloc(&p, 16), 0); /* a RELAXED capture prohibits nothing */
    CHECK_EQ(d->MemFree(p), 0);
    CHECK_EQ(d->StreamEndCapture(f.s0, &g), 0);
    if (g) d->GraphDestroy(g);
    fixture_close(&f);
}

typedef struct thread_probe {
    tcu_driver* d;
    tcu_ctx ctx;
    int mode;
    tcu_result alloc;
    tcu_stream end_stream;
    tcu_result end;
    tcu_graph graph;
} thread_probe;

static void* other_thread(void* arg) {
    thread_probe* t = (thread_probe*)arg;
    tcu_devptr p = 0;
    int mode = t->mode;
    t->d->CtxSetCurrent(t->ctx); /* a new thread has no current context */
    t->d->ThreadExchangeStreamCaptureMode(&mode);
    if (t->end_stream) {
        t->end = t->d->StreamEndCapture(t->end_stream, &t->graph);
        return NULL;
    }
    t->alloc = t->d->MemAlloc(&p, 16);
    if (t->alloc == 0) t->d->MemFree(p);
    return NULL;
}

static void run_other_thread(thread_probe* t) {
    pthread_t th;
    t->d->PrimaryCtxRetain(&t->ctx, 0);
    if (pthread_create(&th, NULL, other_thread, t) == 0) pthread_join(th, NULL);
    t->d->PrimaryCtxRelease(0);
}

OT_TEST(other_threads_see_global_captures_only) { /* rule 1.5 */
    FIXTURE(f, d, 0);
    tcu_graph g = (tcu_graph)1;
    thread_probe t;
    memset(&t, 0, sizeof t);
    t.d = d;
    CHECK_EQ(d->StreamBeginCapture(f.s0, CAP_THREAD_LOCAL), 0);
    t.mode = CAP_GLOBAL;
    run_other_thread(&t);
    CHECK_EQ(t.alloc, 0); /* a thread-local capture does not concern other threads */
    CHECK_EQ(d->StreamEndCapture(f.s0, &g), 0);
    if (g) d->GraphDestroy(g);
    CHECK_EQ(d->StreamBeginCapture(f.s0, CAP_GLOBAL), 0);
    t.mode = CAP_THREAD_LOCAL;
    run_other_thread(&t);
    CHECK_EQ(t.alloc, 0); /* the other thread only cares about its own captures */
    t.mode = CAP_GLOBAL;
    run_other_thread(&t);
    CHECK_EQ(t.alloc, TCU_CAPTURE_UNSUPPORTED);
    CHECK_EQ(d->StreamEndCapture(f.s0, &g), TCU_CAPTURE_INVALIDATED);
    fixture_close(&f);
}

OT_TEST(end_capture_from_another_thread) { /* rule 1.2 */
    FIXTURE(f, d, 0);
    thread_probe t;
    memset(&t, 0, sizeof t);
    t.d = d;
    t.mode = CAP_GLOBAL;
    t.end_stream = f.s0;
    CHECK_EQ(d->StreamBeginCapture(f.s0, CAP_GLOBAL), 0);
    run_other_thread(&t);
    CHECK_EQ(t.end, TCU_CAPTURE_WRONG_THREAD);
    /* the failed end terminated the capture, graph discarded (observed on driver 580 (CUDA 13.0), H100) */
    CHECK_EQ(status_of(&f, f.s0), ST_NONE);
    CHECK_EQ(end_capture(&f, f.s0, NULL), TCU_ILLEGAL_STATE);
    CHECK_EQ(d->StreamBeginCapture(f.s0, CAP_RELAXED), 0);
    t.graph = NULL;
    run_other_thread(&t);
    CHECK_EQ(t.end, 0);
    if (t.graph) d->GraphDestroy(t.graph);
    fixture_close(&f);
}

/* Using the legacy stream while a blocking stream captures returns 906 and invalidates that capture; the legacy
 * stream stays unusable (906) until the capture ends. Observed on driver 580 (CUDA 13.0), H100, with the
 * synchronous copy first (cuda-semantics.md A6 guessed no invalidation). */
OT_TEST(legacy_stream_during_blocking_capture) { /* rules 2.9, 2.13, A6, A7 */
    FIXTURE(f, d, 0);
    tcu_graph g = (tcu_graph)1;
    float host[N];
    int status = -1, null_graph = 0;
    CHECK_EQ(d->StreamBeginCapture(f.s0, CAP_RELAXED), 0);
    CHECK_EQ(d->MemcpyDtoH(host, f.a, sizeof host), TCU_CAPTURE_IMPLICIT);
    CHECK_EQ(status_of(&f, f.s0), ST_INVALIDATED);
    CHECK_EQ(add(&f, NULL, f.a, f.b, f.x), TCU_CAPTURE_IMPLICIT);
    CHECK_EQ(d->StreamIsCapturing(NULL, &status), TCU_CAPTURE_IMPLICIT);
    CHECK_EQ(end_capture(&f, f.s0, &null_graph), TCU_CAPTURE_INVALIDATED);
    CHECK(null_graph);
    /* a launch on the legacy stream alone invalidates too (unverified: it came second in the run above) */
    CHECK_EQ(d->StreamBeginCapture(f.s0, CAP_RELAXED), 0);
    CHECK_EQ(add(&f, NULL, f.a, f.b, f.x), TCU_CAPTURE_IMPLICIT);
    CHECK_EQ(status_of(&f, f.s0), ST_INVALIDATED);
    CHECK_EQ(end_capture(&f, f.s0, NULL), TCU_CAPTURE_INVALIDATED);
    /* the status query on the legacy stream does not: DRV cuStreamIsCapturing, "The blocking stream capture is
     * not invalidated" (unverified: in the run above the capture was invalidated already) */
    CHECK_EQ(d->StreamBeginCapture(f.s0, CAP_RELAXED), 0);
    CHECK_EQ(d->StreamIsCapturing(NULL, &status), TCU_CAPTURE_IMPLICIT);
    CHECK_EQ(status_of(&f, f.s0), ST_ACTIVE);
    CHECK_EQ(end_capture(&f, f.s0, NULL), 0);
    fixture_close(&f);
    {
        FIXTURE(nb, d2, 1); /* CU_STREAM_NON_BLOCKING: the legacy stream does not conflict */
        CHECK_EQ(d2->StreamBeginCapture(nb.s0, CAP_RELAXED), 0);
        CHECK_EQ(d2->MemcpyDtoH(host, nb.a, sizeof host), 0);
        CHECK_EQ(host[3], 3.0f);
        CHECK_EQ(d2->StreamEndCapture(nb.s0, &g), 0);
        if (g) d2->GraphDestroy(g);
        fixture_close(&nb);
    }
}

/* Driver 580 (CUDA 13.0), H100, RELAXED captures: cuEventQuery and cuEventSynchronize of the captured event
 * both answer 907 and invalidate the capture (the end 901); the event then answers INVALID_VALUE until it is
 * recorded again outside capture, as it does after a capture that ended with a graph. EXTERNAL record and wait outside capture 401 (A19 guessed INVALID_VALUE). */
OT_TEST(waits_on_events_outside_the_capture) { /* rules 2.6, 2.8, A10, A12, A19, A21 */
    FIXTURE(f, d, 0);
    tcu_graph g = (tcu_graph)1;
    tcu_event outside, never;
    int null_graph = 0;
    REQUIRE(d->EventCreate(&outside, 0) == 0 && d->EventCreate(&never, 0) == 0);
    CHECK_EQ(d->EventRecord(outside, f.s1), 0);
    CHECK_EQ(d->StreamSynchronize(f.s1), 0);
    CHECK_EQ(d->StreamBeginCapture(f.s0, CAP_GLOBAL), 0);
    CHECK_EQ(d->StreamWaitEvent(f.s0, never, 0), 0); /* never recorded: no dependency */
    CHECK_EQ(d->StreamWaitEvent(f.s0, outside, 0), TCU_CAPTURE_ISOLATION);
    CHECK_EQ(d->StreamEndCapture(f.s0, &g), TCU_CAPTURE_INVALIDATED);
    /* querying or synchronizing on a captured event: 907, and the capture is invalidated (observed) */
    for (int sync = 0; sync < 2; sync++) {
        CHECK_EQ(d->StreamBeginCapture(f.s0, CAP_RELAXED), 0);
        CHECK_EQ(add(&f, f.s0, f.a, f.b, f.x), 0);
        CHECK_EQ(d->EventRecord(f.fork, f.s0), 0);
        CHECK_EQ(sync ? d->EventSynchronize(f.fork) : d->EventQuery(f.fork), TCU_CAPTURED_EVENT);
        CHECK_EQ(status_of(&f, f.s0), ST_INVALIDATED);
        CHECK_EQ(sync ? d->EventQuery(f.fork) : d->EventSynchronize(f.fork), TCU_INVALID_VALUE);
        CHECK_EQ(end_capture(&f, f.s0, &null_graph), TCU_CAPTURE_INVALIDATED);
        CHECK(null_graph);
        CHECK_EQ(d->EventQuery(f.fork), TCU_INVALID_VALUE);
    }
    /* recorded outside capture it is an ordinary event again; outside capture the EXTERNAL flags are an
     * illegal state (observed) */
    CHECK_EQ(d->EventRecord(f.fork, f.s0), 0);
    CHECK_EQ(d->EventSynchronize(f.fork), 0);
    CHECK_EQ(d->EventRecordWithFlags(f.fork, f.s0, 1), TCU_ILLEGAL_STATE); /* CU_EVENT_RECORD_EXTERNAL */
    CHECK_EQ(d->StreamWaitEvent(f.s0, f.fork, 1), TCU_ILLEGAL_STATE);      /* CU_EVENT_WAIT_EXTERNAL */
    /* after a capture that ended with a graph the event answers INVALID_VALUE too until recorded again
     * outside capture (observed; A10 guessed 907) */
    CHECK_EQ(d->StreamBeginCapture(f.s0, CAP_RELAXED), 0);
    CHECK_EQ(add(&f, f.s0, f.a, f.b, f.x), 0);
    CHECK_EQ(d->EventRecord(f.fork, f.s0), 0);
    CHECK_EQ(end_capture(&f, f.s0, &null_graph), 0);
    CHECK(!null_graph);
    CHECK_EQ(d->EventQuery(f.fork), TCU_INVALID_VALUE);
    d->EventDestroy(outside);
    d->EventDestroy(never);
    fixture_close(&f);
}

OT_TEST(merging_two_captures_fails) { /* rule 2.5 */
    FIXTURE(f, d, 0);
    tcu_graph g = (tcu_graph)1;
    CHECK_EQ(d->StreamBeginCapture(f.s0, CAP_RELAXED), 0);
    CHECK_EQ(d->StreamBeginCapture(f.s1, CAP_RELAXED), 0);
    CHECK_EQ(add(&f, f.s0, f.a, f.b, f.x), 0);
    CHECK_EQ(d->EventRecord(f.fork, f.s0), 0);
    CHECK_EQ(d->StreamWaitEvent(f.s1, f.fork, 0), TCU_CAPTURE_MERGE);
    CHECK_EQ(d->StreamEndCapture(f.s0, &g), TCU_CAPTURE_INVALIDATED);
    CHECK_EQ(d->StreamEndCapture(f.s1, &g), TCU_CAPTURE_INVALIDATED);
    fixture_close(&f);
}

OT_TEST(graph_launch_into_a_capturing_stream_fails) { /* A9 */
    FIXTURE(f, d, 0);
    tcu_graph g = NULL, g2 = (tcu_graph)1;
    tcu_exec x = NULL;
    CHECK_EQ(capture_fork_join(&f, &g), 0);
    REQUIRE(g != NULL);
    CHECK_EQ(d->GraphInstantiate(&x, g, 0), 0);
    CHECK_EQ(d->StreamBeginCapture(f.s2, CAP_RELAXED), 0);
    CHECK_EQ(d->GraphLaunch(x, f.s2), TCU_CAPTURE_UNSUPPORTED);
    CHECK_EQ(d->StreamEndCapture(f.s2, &g2), TCU_CAPTURE_INVALIDATED);
    d->GraphExecDestroy(x);
    d->GraphDestroy(g);
    fixture_close(&f);
}

OT_TEST(instantiate_flags_and_injected_failures) { /* rule 4.1 */
    FIXTURE(f, d, 0);
    tcu_graph g = NULL, g2 = (tcu_graph)1;
    tcu_exec x = NULL;
    CHECK_EQ(capture_fork_join(&f, &g), 0);
    REQUIRE(g != NULL);
    CHECK_EQ(d->GraphInstantiate(&x, g, 2), TCU_INVALID_VALUE);     /* UPLOAD: WithParams only */
    CHECK_EQ(d->GraphInstantiate(&x, g, 4 | 1), TCU_INVALID_VALUE); /* DEVICE_LAUNCH | AUTO_FREE */
    CHECK_EQ(d->GraphInstantiate(&x, g, 64), TCU_INVALID_VALUE);
    if (d->emu_config) {
        d->emu_config("fail_instantiate", 1);
        CHECK_EQ(d->GraphInstantiate(&x, g, 0), TCU_OUT_OF_MEMORY);
        d->emu_config("fail_capture", 1);
        CHECK_EQ(d->StreamBeginCapture(f.s0, CAP_GLOBAL), 0);
        CHECK_EQ(add(&f, f.s0, f.a, f.b, f.x), 0);
        CHECK_EQ(d->StreamEndCapture(f.s0, &g2), TCU_CAPTURE_INVALIDATED);
        CHECK(g2 == NULL);
    }
    CHECK_EQ(d->GraphInstantiate(&x, g, 0), 0);
    d->GraphExecDestroy(x);
    d->GraphDestroy(g);
    fixture_close(&f);
}

OT_TEST(exec_update_accepts_new_parameters_and_rejects_new_topology) { /* rule 4.3 */
    FIXTURE(f, d, 0);
    tcu_graph g = NULL, g2 = NULL, g3 = NULL;
    tcu_exec x = NULL;
    tcu_update_info info;
    CHECK_EQ(capture_fork_join(&f, &g), 0);
    REQUIRE(g != NULL);
    CHECK_EQ(d->GraphInstantiate(&x, g, 0), 0);
    /* a recapture of the same sequence pairs node by node (creation order) and updates */
    CHECK_EQ(capture_fork_join(&f, &g2), 0);
    CHECK_EQ(d->GraphExecUpdate(x, g2, &info), 0);
    CHECK_EQ(info.result, 0);
    CHECK_EQ(d->GraphLaunch(x, f.s2), 0);
    CHECK_EQ(d->StreamSynchronize(f.s2), 0);
    CHECK_EQ(check_result(&f, 5), 0);
    CHECK_EQ(d->StreamBeginCapture(f.s0, CAP_GLOBAL), 0); /* one node only */
    CHECK_EQ(add(&f, f.s0, f.a, f.b, f.y), 0);
    CHECK_EQ(d->StreamEndCapture(f.s0, &g3), 0);
    CHECK_EQ(d->GraphExecUpdate(x, g3, &info), TCU_EXEC_UPDATE_FAILURE);
    CHECK_EQ(info.result, 2); /* CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED */
    CHECK_EQ(d->GraphLaunch(x, f.s2), 0); /* the exec is unchanged and still launchable */
    CHECK_EQ(d->StreamSynchronize(f.s2), 0);
    CHECK_EQ(check_result(&f, 5), 0);
    d->GraphExecDestroy(x);
    d->GraphDestroy(g);
    d->GraphDestroy(g2);
    d->GraphDestroy(g3);
    fixture_close(&f);
}

/* x = a + b and y = x + c as graph nodes, with or without the edge between them. */
static int run_two_nodes(fixture* f, int with_edge, int launches) {
    tcu_driver* d = f->d;
    tcu_graph g;
    tcu_node first, second;
    tcu_exec x;
    tcu_kernel_node_params p;
    void *args1[4], *args2[4];
    int n = N, wrong = 0, i;
    float zeros[N];
    memset(zeros, 0, sizeof zeros);
    memset(&p, 0, sizeof p);
    p.func = f->add;
    p.grid_x = p.grid_y = p.grid_z = 1;
    p.block_x = N;
    p.block_y = p.block_z = 1;
    args1[0] = &f->a;
    args1[1] = &f->b;
    args1[2] = &f->x;
    args1[3] = &n;
    args2[0] = &f->x;
    args2[1] = &f->c;
    args2[2] = &f->y;
    args2[3] = &n;
    if (d->GraphCreate(&g, 0) != 0) return -1;
    p.kernel_params = args1;
    if (d->GraphAddKernelNode(&first, g, NULL, 0, &p) != 0) return -1;
    p.kernel_params = args2;
    if (d->GraphAddKernelNode(&second, g, with_edge ? &first : NULL, with_edge ? 1 : 0, &p) != 0) return -1;
    if (d->GraphInstantiate(&x, g, 0) != 0) return -1;
    for (i = 0; i < launches; i++) {
        d->MemcpyHtoD(f->x, zeros, sizeof zeros); /* stale x is visible if the reader runs first */
        d->GraphLaunch(x, f->s2);
        d->StreamSynchronize(f->s2);
        wrong += check_result(f, 3) != 0;
    }
    d->GraphExecDestroy(x);
    d->GraphDestroy(g);
    return wrong;
}

OT_TEST(random_order_exposes_a_missing_edge) {
    FIXTURE(f, d, 0);
    int wrong_without, wrong_with;
    if (!d->emu_config) {
        fixture_close(&f);
        SKIP("the order of independent nodes on a GPU is not controllable");
    }
    wrong_with = run_two_nodes(&f, 1, 32);
    wrong_without = run_two_nodes(&f, 0, 32);
    CHECK_EQ(wrong_with, 0);
    CHECK(wrong_without > 0 && wrong_without < 32); /* P(no failure in 32 seeded launches) = 2^-32 */
    OT_LOG("wrong launches without the edge: %d of 32", wrong_without);
    fixture_close(&f);
}

static const opara_test_case tests[] = {
    OT_CASE(fork_join_capture_builds_the_documented_graph),
    OT_CASE(captured_graph_runs_correctly_many_times),
    OT_CASE(graph_runs_on_several_threads),
    OT_CASE(capture_status_and_info_follow_the_sequence),
    OT_CASE(begin_and_end_misuse),
    OT_CASE(a_failed_launch_invalidates_the_capture),
    OT_CASE(unjoined_fork_fails_end_capture),
    OT_CASE(sync_or_query_of_a_capturing_stream_invalidates),
    OT_CASE(unsafe_calls_depend_on_the_capture_mode),
    OT_CASE(other_threads_see_global_captures_only),
    OT_CASE(end_capture_from_another_thread),
    OT_CASE(legacy_stream_during_blocking_capture),
    OT_CASE(waits_on_events_outside_the_capture),
    OT_CASE(merging_two_captures_fails),
    OT_CASE(graph_launch_into_a_capturing_stream_fails),
    OT_CASE(instantiate_flags_and_injected_failures),
    OT_CASE(exec_update_accepts_new_parameters_and_rejects_new_topology),
    OT_CASE(random_order_exposes_a_missing_edge),
};

int main(int argc, char** argv) { return opara_test_main(argc, argv, tests, OT_COUNT(tests)); }
