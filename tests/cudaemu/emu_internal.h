/* emu_internal.h - state shared by the files of the emulated driver (libcuda.so.1). Test infrastructure:
 * the emulator is a process-wide singleton like the real driver, so it keeps global state behind one lock.
 *
 * The CUDA types below are the emulator's own (values from shared/research/cuda-semantics.md §0 and the CUDA
 * 13.0 driver API reference); emu_abi.c checks at compile time that every constant and struct layout agrees
 * with opara_cuda.h, so the two cannot drift. */
#ifndef EMU_INTERNAL_H
#define EMU_INTERNAL_H
#include <pthread.h>
#include <stddef.h>
#include "emu_exec.h"
#include "emu_ptx.h"

#define EMU_API __attribute__((visibility("default")))

typedef int emu_result;            /* CUresult */
typedef unsigned long long emu_devptr;

enum {
    E_OK = 0, E_INVALID_VALUE = 1, E_OUT_OF_MEMORY = 2, E_NOT_INITIALIZED = 3, E_DEINITIALIZED = 4,
    E_NO_DEVICE = 100, E_INVALID_DEVICE = 101, E_INVALID_IMAGE = 200, E_INVALID_CONTEXT = 201,
    E_NO_BINARY_FOR_GPU = 209, E_INVALID_PTX = 218, E_UNSUPPORTED_PTX_VERSION = 222, E_INVALID_HANDLE = 400,
    E_ILLEGAL_STATE = 401, E_LOSSY_QUERY = 402, E_NOT_FOUND = 500, E_NOT_READY = 600, E_ILLEGAL_ADDRESS = 700,
    E_LAUNCH_OUT_OF_RESOURCES = 701, E_CONTEXT_IS_DESTROYED = 709, E_LAUNCH_FAILED = 719, E_NOT_PERMITTED = 800, E_NOT_SUPPORTED = 801,
    E_CAPTURE_UNSUPPORTED = 900, E_CAPTURE_INVALIDATED = 901, E_CAPTURE_MERGE = 902, E_CAPTURE_UNMATCHED = 903,
    E_CAPTURE_UNJOINED = 904, E_CAPTURE_ISOLATION = 905, E_CAPTURE_IMPLICIT = 906, E_CAPTURED_EVENT = 907,
    E_CAPTURE_WRONG_THREAD = 908, E_GRAPH_EXEC_UPDATE_FAILURE = 910, E_UNKNOWN = 999
};

enum { CAPTURE_GLOBAL = 0, CAPTURE_THREAD_LOCAL = 1, CAPTURE_RELAXED = 2 };
enum { STATUS_NONE = 0, STATUS_ACTIVE = 1, STATUS_INVALIDATED = 2 };
enum { STREAM_NON_BLOCKING = 1 };
enum { EVENT_BLOCKING_SYNC = 1, EVENT_DISABLE_TIMING = 2, EVENT_INTERPROCESS = 4 };
enum { EVENT_RECORD_EXTERNAL = 1, EVENT_WAIT_EXTERNAL = 1 };
enum { NODE_KERNEL = 0, NODE_MEMCPY = 1, NODE_MEMSET = 2, NODE_HOST = 3, NODE_EMPTY = 5, NODE_WAIT_EVENT = 6,
       NODE_EVENT_RECORD = 7 };
#define EMU_STREAM_LEGACY ((emu_stream*)0x1)
#define EMU_STREAM_PER_THREAD ((emu_stream*)0x2)

/* ---- objects (handles are pointers to these; validity is checked against a live set, never by deref) */
enum { K_CTX = 1, K_STREAM, K_EVENT, K_MODULE, K_FUNC, K_GRAPH, K_NODE, K_EXEC };

typedef struct emu_profile {
    const char *key, *name;
    int cc_major, cc_minor, sm_count, max_threads_per_sm, max_blocks_per_sm;
    int regs_per_sm, regs_per_block, smem_per_sm, smem_per_block, smem_optin, smem_reserved;
    int clock_khz, mem_clock_khz, bus_width, l2_bytes, integrated;
    unsigned long long total_mem;
} emu_profile;

struct emu_stream;
struct emu_capture;
struct emu_node;

typedef struct emu_ctx {
    int device, primary, retained, destroyed;
    int sticky;                      /* sticky error (a faulting kernel), returned by later calls */
    struct emu_stream* legacy;
    struct emu_stream* streams;      /* every stream of the context, linked by next_in_ctx */
} emu_ctx;

struct emu_func;
typedef struct emu_module {
    emu_ctx* ctx;
    struct emu_func** funcs;
    int n_funcs;
} emu_module;

typedef struct emu_func {
    emu_module* module;              /* NULL for the emulator's library kernels */
    const opara_kernel_entry* host;
    emu_ptx_entry ptx;               /* parameters, static shared memory, launch bounds */
    int regs, max_dynamic_shared, carveout, ptx_version, binary_version;
    int loaded;                      /* looked up once (lazy loading cost paid) */
} emu_func;

typedef struct emu_dep {
    struct emu_stream* stream;
    unsigned long long seq;
} emu_dep;

enum { W_KERNEL, W_MEMCPY, W_MEMSET, W_HOST, W_EVENT_RECORD, W_EVENT_WAIT, W_EMPTY, W_GRAPH };

struct emu_xgraph;
struct emu_event;

/* One unit of device work: a stream operation or the payload of a graph node. */
typedef struct emu_work {
    int type;
    emu_func* func;                  /* kernel */
    emu_dim3 grid, block;
    unsigned int shared;
    unsigned char* params;           /* packed argument buffer (owned) */
    void** param_ptrs;               /* pointers into params, one per parameter (owned) */
    void* dst;                       /* memcpy / memset */
    const void* src;
    size_t bytes;
    unsigned int value, elem;        /* memset value and element size */
    void (*fn)(void*);               /* host function */
    void* user;
    struct emu_event* event;         /* record / wait */
    unsigned long long event_gen;
    struct emu_xgraph* xgraph;       /* graph launch (reference held) */
} emu_work;

typedef struct emu_op {
    emu_work work;
    unsigned long long seq;
    emu_dep* deps;
    size_t ndeps;
    struct emu_op* next;
} emu_op;

typedef struct emu_stream {
    emu_ctx* ctx;
    unsigned int flags;
    int priority, special;           /* special: 0 created, 1 legacy, 2 per-thread */
    emu_op *head, *tail;
    unsigned long long enq_seq, done_seq;
    int retired;                     /* destroyed by the user; the worker exits once drained */
    pthread_t thread;                /* its worker, joined at exit */
    struct emu_capture* cap;         /* capture sequence this stream belongs to */
    struct emu_node** cap_deps;      /* its current dependency set */
    size_t n_cap_deps, cap_cap_deps;
    struct emu_stream* next_in_ctx;
} emu_stream;

typedef struct emu_event {
    emu_ctx* ctx;
    unsigned int flags;
    int recorded;                    /* ever recorded outside capture */
    emu_dep dep;                     /* completes when this stream position is done */
    unsigned long long gen;          /* record generation; the worker stamps the time of the latest only */
    long long time_ns;
    int time_valid;
    int captured;                    /* last recorded in a capturing stream (rule 2.1, 2.8) */
    unsigned long long cap_id;
    struct emu_node** cap_nodes;
    size_t n_cap_nodes;
} emu_event;

typedef struct emu_node {
    struct emu_graph* graph;
    size_t index;                    /* creation order in its graph */
    int type;                        /* NODE_* */
    emu_work work;
    struct emu_node** deps;
    size_t ndeps, cap_deps;
} emu_node;

typedef struct emu_graph {
    emu_node** nodes;                /* creation order */
    size_t n, cap;
    struct emu_capture* capturing;   /* non-NULL while a capture builds it */
    int live_execs;
} emu_graph;

typedef struct emu_capture {
    unsigned long long id;
    emu_graph* graph;
    emu_stream* origin;
    int mode, invalidated;
    pthread_t owner;
    emu_stream** members;
    size_t n_members, cap_members;
    struct emu_capture* next;
} emu_capture;

/* Parameter structs of the graph API (layouts checked against opara_cuda.h in emu_abi.c). */
typedef struct emu_edge_data { unsigned char from_port, to_port, type, reserved[5]; } emu_edge_data;

typedef struct emu_kernel_node_params { /* CUDA_KERNEL_NODE_PARAMS_v2 */
    emu_func* func;
    unsigned int grid_x, grid_y, grid_z, block_x, block_y, block_z, shared;
    void** kernel_params;
    void** extra;
    void* kern;
    emu_ctx* ctx;
} emu_kernel_node_params;

typedef struct emu_update_info { /* CUgraphExecUpdateResultInfo */
    int result;
    emu_node* error_node;
    emu_node* error_from_node;
} emu_update_info;

typedef struct emu_instantiate_params { /* CUDA_GRAPH_INSTANTIATE_PARAMS */
    unsigned long long flags;
    emu_stream* upload_stream;
    emu_node* err_node;
    int result;
} emu_instantiate_params;

enum { UPDATE_SUCCESS = 0, UPDATE_TOPOLOGY_CHANGED = 2, UPDATE_NODE_TYPE_CHANGED = 3,
       UPDATE_UNSUPPORTED_FUNCTION_CHANGE = 7 };

/* Immutable snapshot of a graph for execution; shared by an exec and its in-flight launches. */
typedef struct emu_xnode {
    emu_work work;
    int type;
    size_t npred;
    size_t* succ;
    size_t nsucc;
} emu_xnode;

typedef struct emu_xgraph {
    int refs;
    size_t n;
    emu_xnode* nodes;
} emu_xgraph;

typedef struct emu_exec {
    emu_ctx* ctx;
    emu_graph* source;
    unsigned long long flags;
    emu_xgraph* xg;
    emu_dep last_launch;
    size_t n;                        /* for update pairing: node types and dependency indices of the snapshot */
    int* types;
    size_t** dep_index;
    size_t* ndeps;
} emu_exec;

typedef struct emu_alloc {
    unsigned char* base;
    size_t size;
    unsigned char* raw;
    size_t raw_size;
    int host;                        /* page-locked host memory */
} emu_alloc;

typedef struct emu_global {
    int initialized;
    const emu_profile* profile;
    int driver_version;
    emu_ctx* primary;
    int live_contexts;               /* made with cuCtxCreate and not destroyed */
    unsigned long long seed, launches, next_capture_id;
    /* live handles: open addressing, key = pointer, value = kind */
    const void** handle_keys;
    int* handle_kinds;
    size_t handle_cap, handle_count;
    emu_alloc* allocs;               /* sorted by base */
    size_t n_allocs, cap_allocs;
    size_t allocated_bytes;
    emu_alloc* quarantine;           /* freed, poisoned blocks (FIFO) */
    size_t n_quarantine, cap_quarantine, quarantine_bytes;
    emu_capture* captures;           /* ongoing capture sequences */
    emu_stream** all_streams;        /* for shutdown */
    size_t n_all_streams, cap_all_streams;
    /* configuration and fault injection (env OPARA_EMU_* or opara_emu_config) */
    long long fail_alloc_after;      /* >0: the Nth allocation from now fails */
    int fail_capture, fail_instantiate, strict_pageable, graph_threads, paused, quit, verbose;
    long long lib_align;             /* alignment the library fakes require of data pointers (emu_lib.h) */
    long long lib_first_use_us, handle_first_use_us; /* first-use costs of the fakes (emu_lib.h) */
    long long func_first_use_us;     /* lazy loading: the first cuModuleGetFunction of each function */
    void** graveyard;                /* destroyed objects that queued work may still reference */
    size_t n_graveyard, cap_graveyard;
    char hidden[1024];               /* comma-separated base names cuGetProcAddress does not know */
} emu_global;

extern emu_global G;
extern pthread_mutex_t emu_mu;
extern pthread_cond_t emu_cv;
extern __thread int emu_tls_in_callback;

/* core */
emu_result emu_enter(void);
emu_result emu_leave(emu_result r);
void emu_join_workers(void);
void emu_report(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
int emu_handle_kind(const void* h);
int emu_handle_add(const void* h, int kind);
void emu_handle_del(const void* h);
void emu_bury(void* p);
emu_ctx* emu_current_ctx(void);
emu_result emu_require_ctx(emu_ctx** out);
emu_result emu_require_owner(const emu_ctx* owner, emu_ctx** out);
void* emu_xcalloc(size_t n, size_t size);
int emu_grow(void** arr, size_t* cap, size_t need, size_t elem);
emu_alloc* emu_alloc_find(const void* p, size_t len);
int emu_alloc_guard_ok(const emu_alloc* a, size_t* bad_offset);
void emu_alloc_guard_restore(emu_alloc* a);
long long emu_now_ns(void);
void emu_sleep_us(long long us);
unsigned long long emu_mix(unsigned long long x);

/* streams */
emu_stream* emu_stream_new_locked(emu_ctx* ctx, unsigned int flags, int priority, int special);
emu_result emu_resolve_stream(emu_stream* h, emu_ctx* ctx, emu_stream** out);
emu_result emu_submit(emu_stream* s, emu_work* w, const emu_dep* extra_dep);
emu_result emu_legacy_conflict(emu_ctx* ctx, int invalidate);
emu_result emu_wait_stream(emu_stream* s);
void emu_work_free(emu_work* w);
int emu_work_copy(emu_work* dst, const emu_work* src);
void emu_work_execute(emu_ctx* ctx, const emu_work* w, unsigned long long seed);
emu_result emu_kernel_work(emu_func* f, const unsigned int grid[3], const unsigned int block[3], unsigned int shared,
                           void** kernel_params, void** extra, emu_work* out);

/* capture and graphs */
emu_result emu_unsafe_call(void);
void emu_capture_invalidate(emu_capture* c);
emu_result emu_capture_fail(emu_stream* s, emu_result r);
emu_result emu_capture_record(emu_stream* s, emu_event* e, unsigned int flags);
emu_result emu_capture_wait(emu_stream* s, emu_event* e, unsigned int flags);
emu_result emu_captured_event_use(emu_event* e);
emu_capture* emu_capture_by_id(unsigned long long id);
emu_result emu_capture_add(emu_stream* s, emu_work* w, int node_type);
void emu_capture_leave_stream(emu_stream* s);
void emu_xgraph_release(emu_xgraph* xg);
void emu_xgraph_run(emu_ctx* ctx, const emu_xgraph* xg, unsigned long long seed);

#endif
