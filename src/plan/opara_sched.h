/* The execution plan: which operators run at the same time (streams), in which order they are
   launched, where the synchronisations go (events, fork/join), and where every tensor lives
   (arena offsets, aliases). Pure, deterministic, backend-independent; every backend and the
   simulator consume the same opara__plan.

   Inputs of planning: a finalized graph, the byte size of every value, one descriptor per node
   (grid, block, registers, shared memory, FLOPs, bytes, class; src/plan/opara_desc.c gives an analytic
   default) and the device limits.

   Memory conventions:
   - Graph inputs and constants are not in the arena (storage EXTERNAL): the backend keeps a static
     buffer per input (CUDA: copied into before the graph launch) and the model's weights.
   - Every other value produced by a node lives in the arena, including graph outputs. Outputs are
     pinned: their bytes are never reused, so after the run the backend copies them out (or hands
     out pointers into the arena) from alias_root/offset.
   - Aliases: a view (Reshape, Flatten, Squeeze, Unsqueeze) is kernel-less and its output shares its
     input's bytes (ALIAS_VIEW, also when the input is EXTERNAL); an in-place operator's output takes
     its input's block (ALIAS_INPLACE); a Concat's input can be written straight into its slice of the
     Concat's output (ALIAS_CONCAT, the input's alias_root is the Concat output's root). A Concat
     copies only the inputs that are not already in place (opara__plan_concat_input_in_place). */
#ifndef OPARA_SCHED_H
#define OPARA_SCHED_H

#include "../ir/opara_ir.h"

/* ---- per-operator descriptors and device limits ---------------------------------------------- */

typedef enum opara__op_class {
    OPARA__CLASS_COMPUTE = 0, /* compute-intensive (Alg. 2's L_comp) */
    OPARA__CLASS_MEMORY = 1   /* memory-intensive (Alg. 2's L_mem) */
} opara__op_class;

/* What a backend knows about the (main) kernel of one node. Estimates are fine; the scheduler
   only compares them. */
typedef struct opara__op_desc {
    uint32_t grid;            /* thread blocks of the kernel */
    uint32_t block_threads;   /* threads per block */
    uint32_t regs_per_thread;
    uint32_t smem_per_block;  /* bytes of shared memory per block */
    double flops;
    double bytes;             /* bytes moved: inputs + outputs + weights */
    uint8_t op_class;         /* opara__op_class */
    uint8_t kernel_less;      /* no kernel at all (views): never delays anything */
    uint8_t has_info;         /* 0: no kernel data; Alg. 2 defers it like the reference code */
    uint8_t time_measured;    /* 1: time_ms was measured (CUDA profiling run), 0: estimated */
    double time_ms;           /* kernel time: the roofline estimate max(flops/peak, bytes/bandwidth) of
                                 the default model, or measured; 0 for kernel-less ops */
} opara__op_desc;

/* What a plan is made for: the GPU presets below, or a CPU's model made by its backend
   (opara__cpu_device). */
typedef enum opara__device_kind { OPARA__DEVICE_GPU = 0, OPARA__DEVICE_CPU = 1 } opara__device_kind;

typedef struct opara__device {
    const char* name;
    uint32_t sms;
    uint32_t max_threads_per_block, max_threads_per_sm;
    uint32_t max_regs_per_block, max_regs_per_sm;
    uint32_t max_smem_per_block, max_smem_per_sm; /* bytes */
    uint32_t max_blocks_per_sm;
    double peak_flops; /* FP32 FLOP/s */
    double bandwidth;  /* DRAM bytes/s (a CPU's: what its cores stream from their caches) */
    opara__device_kind kind;
    uint32_t cores;    /* CPU: the cores the session's workers run on (the GPU limits above are 0) */
} opara__device;

/* Presets from public specifications: "rtx2080s", "v100", "a100", "h100", "orin". NULL if unknown. */
OPARA__PRIVATE const opara__device* opara__device_preset(const char* name);
/* The device used when none is given (rtx2080s, the paper's RTX 2080 SUPER). */
OPARA__PRIVATE const opara__device* opara__device_default(void);
/* FLOPs per byte at which the device turns from memory- to compute-bound (peak_flops/bandwidth). */
OPARA__PRIVATE double opara__device_balance(const opara__device* dev);

/* The default analytic descriptor model: formulas per operator (conv FLOPs = 2*N*K*C/g*R*S*P*Q,
   GEMM 2*M*N*K, ...; bytes = inputs + outputs + weights) and plausible per-kernel-family launch
   shapes (documented as estimates in opara_desc.c). shapes[v] for every value (ndim < 0 = unknown).
   dev may be NULL (default device). */
OPARA__PRIVATE opara_result opara__describe_ops(const opara__graph* g, const opara__shape* shapes,
                                               const opara__device* dev, opara__op_desc* out);
/* The same with each node's parameters as the shape engine resolved them (opara__infer_shapes_params;
   NULL: opara__describe_ops, which resolves them from shapes with opara__resolve_node_params). */
OPARA__PRIVATE opara_result opara__describe_ops_resolved(const opara__graph* g, const opara__shape* shapes,
                                                        const opara__node_params* params, const opara__device* dev,
                                                        opara__op_desc* out);
/* Each node's record (params[n_nodes]) from shapes the caller already has, e.g. a declared graph's
   (opara_plan_create_declared) that were never inferred: the shape engine node by node, tolerant, its
   outputs thrown away; a node it cannot infer gets resolved = 0. */
OPARA__PRIVATE opara_result opara__resolve_node_params(const opara__graph* g, const opara__shape* shapes,
                                                      opara__node_params* params);
/* Byte size of every value from its shape and dtype (0 when unknown). Fails on overflow. */
OPARA__PRIVATE opara_result opara__value_bytes_from_shapes(const opara__graph* g, const opara__shape* shapes,
                                                          uint64_t* out);
/* 1 for the kernel-less views whose output may alias the input (Reshape, Flatten, Squeeze, Unsqueeze). */
OPARA__PRIVATE int opara__op_is_view(opara__op op);
/* Per-op-type class default (the paper's table, corrected); used when a node has no FLOPs/bytes. */
OPARA__PRIVATE opara__op_class opara__op_default_class(opara__op op);

/* ---- knobs ----------------------------------------------------------------------------------- */

/* How Alg. 2 measures "least amount of GPU resources". */
typedef enum opara__metric {
    OPARA__METRIC_DEFAULT = 0,
    OPARA__METRIC_SMEM_FRAC = 1, /* shared memory per block / per-block limit (the reference code) */
    OPARA__METRIC_DOMINANT = 2,  /* max of the block's share of an SM's threads, registers, shared memory */
    OPARA__METRIC_TIME = 3       /* the op's kernel time (time_ms: measured by a profiling run, else the
                                    roofline estimate); shortest first. Not in the paper */
} opara__metric;

/* Alg. 2's "alternately choose a non-empty list". */
typedef enum opara__alternation {
    OPARA__ALT_DEFAULT = 0,
    OPARA__ALT_PARITY = 1,   /* reference code: iteration parity, compute list first, toggles even when one list is empty */
    OPARA__ALT_LAST_PICK = 2 /* the list opposite to the one picked last */
} opara__alternation;

/* Order in which Alg. 1 visits a node's predecessors. */
typedef enum opara__pred_order {
    OPARA__PRED_DEFAULT = 0,
    OPARA__PRED_INPUT = 1,     /* argument order (the reference code) */
    OPARA__PRED_ASC_ID = 2,    /* ascending node index (the TC appendix wording) */
    OPARA__PRED_DESC_ID = 3,   /* descending node index */
    OPARA__PRED_ASC_STREAM = 4 /* ascending stream index, oldest stream first (reproduces the CCFSys listing) */
} opara__pred_order;

/* Alg. 1's condition for inheriting a predecessor's stream. */
typedef enum opara__inherit {
    OPARA__INHERIT_DEFAULT = 0,
    OPARA__INHERIT_FLAG = 1,           /* TC version: the first successor to claim an unflagged predecessor */
    OPARA__INHERIT_FIRST_SUCCESSOR = 2 /* arXiv/CCFSys wording: only the predecessor's first successor */
} opara__inherit;

/* Zero means defaults everywhere. */
typedef struct opara__plan_desc {
    opara_strategy strategy;         /* OPARA */
    opara_launch_order launch_order; /* DEFAULT: the strategy's own */
    opara__metric metric;            /* SMEM_FRAC (the reference), until the simulator's evidence says otherwise */
    opara__alternation alternation;  /* PARITY */
    opara__pred_order pred_order;    /* INPUT */
    opara__inherit inherit;          /* FLAG */
    uint32_t stream_cap;             /* 0: unlimited. Else a new stream is opened only when no stream is
                                        provably idle (its last op happens-before the new op) */
    int stream_cap_hard;             /* with stream_cap: never exceed it; when no stream is idle, reuse the
                                        one whose last op was launched earliest (adds false dependencies) */
    int no_wait_pruning;             /* keep waits implied by earlier ones (the reference code's behaviour) */
    int no_inplace;                  /* disable in-place outputs */
    int no_concat_in_place;          /* disable writing Concat inputs straight into the output */
    int no_view_alias;               /* views get their own block (they still launch no kernel) */
    int no_memory_sync;              /* never add a wait just to reuse a block (see memory_sync_window) */
    uint32_t memory_sync_window;     /* when no free block fits, a block whose last readers were launched at
                                        least this many positions earlier is reused by adding waits on them
                                        (they have most likely finished); 0: 64 */
    int no_level_sync;               /* the memory sync also reuses a block whose readers all sit at a lower
                                        wavefront level than the new writer (such waits keep every level, so
                                        no parallelism is lost); this turns that off */
    const double* est_start_us;      /* optional, with est_end_us: per node, when a run is expected to start */
    const double* est_end_us;        /* and to end (the simulator's or a profile's timeline of this plan's
                                        streams and waits). The memory sync then also reuses a block when
                                        every previous occupant is expected to have finished before the new
                                        writer starts (such waits cost nothing on that timeline), besides the
                                        window and level rules. Read only during opara__plan_create. */
    double memory_budget;            /* peak memory budget as a ratio of the sequential plan's arena (same
                                        knobs and alignment), e.g. 1.15; 0: unbounded. Alg. 2 then keeps
                                        the bytes live in launch order under the ratio times the sequential
                                        order's (preferring ready ops that fit, else the ones that free
                                        most), and the memory plan reuses any retired block with waits
                                        rather than grow the arena past the ratio times the sequential
                                        arena (docs/SCHEDULING.md, "Memory budget"). The plan without a
                                        budget is kept when it fits; else this costs a few plans more. */
    uint32_t alignment;              /* arena alignment of every block; 0: 256 */
    uint32_t concat_align;           /* a Concat input is written in place only when its slice starts a multiple
                                        of this many bytes into the output (a power of two <= alignment; the
                                        CUDA backend asks 16 for vectorised kernels and cuBLAS/cuDNN
                                        pointers); 0: any offset (slices of whole elements) */
    const opara__shape* shapes;      /* optional value shapes, with params: a Concat's inputs are written in
                                        place only when they prove each input is one contiguous slice */
    const opara__node_params* params; /* optional, [n_nodes] the shape engine's records (the Concat's axis) */
    int verify;                      /* run opara__plan_verify after planning (debug builds and tests) */
} opara__plan_desc;

/* ---- the plan -------------------------------------------------------------------------------- */

#define OPARA__NO_ARENA UINT64_MAX

typedef enum opara__storage {
    OPARA__STORAGE_NONE = 0,     /* no bytes (value without producer or size) */
    OPARA__STORAGE_ARENA = 1,    /* lives in the session arena at offset[v] */
    OPARA__STORAGE_EXTERNAL = 2  /* root is a graph input or a constant: storage owned by the backend/model */
} opara__storage;

typedef enum opara__alias_kind {
    OPARA__ALIAS_NONE = 0,    /* owns its bytes */
    OPARA__ALIAS_INPLACE = 1, /* written by its producer over the bytes of the producer's input */
    OPARA__ALIAS_CONCAT = 2,  /* a Concat input placed inside the Concat's output */
    OPARA__ALIAS_VIEW = 3     /* kernel-less view of its input */
} opara__alias_kind;

typedef struct opara__plan_stats {
    uint32_t n_streams;
    uint32_t n_lanes;        /* the CUDA streams the plan runs on (see lanes below) */
    uint32_t n_events;       /* nodes that record an event (fork/join events not included) */
    uint32_t n_waits;        /* cross-stream waits of nodes (fork/join waits not included) */
    uint32_t n_cross_edges;  /* data edges between nodes on different streams */
    uint32_t n_pruned_waits; /* waits dropped because earlier waits imply them */
    uint32_t n_forks, n_joins;
    uint32_t n_inplace, n_concat_in_place, n_views;
    uint32_t n_memory_waits;   /* waits added by the memory plan to reuse a block (part of n_waits) */
    uint64_t arena_bytes;      /* peak memory of the plan = arena size */
    uint64_t budget_bytes;     /* with memory_budget: the arena budget (ratio x the sequential arena), else 0 */
    uint64_t live_bytes;       /* with memory_budget (else 0; opara__live_peak gives it for any plan): most
                                  bytes live at once in launch order (blocks written at their producer's
                                  launch, freed at their last reader's launch; no arena can be smaller
                                  when every op runs in launch order) */
    uint64_t no_reuse_bytes;   /* arena size if no block were ever reused (the prototypes' behaviour) */
    uint64_t order_ns, streams_ns, sync_ns, memory_ns, verify_ns, total_ns;
} opara__plan_stats;

typedef struct opara__plan {
    opara__plan_desc desc; /* the knobs actually used (defaults resolved) */
    uint32_t n_nodes, n_values, n_streams;

    /* launch order and streams */
    uint32_t* order;      /* [n_nodes] node indices in launch order (topological) */
    uint32_t* position;   /* [n_nodes] node -> its index in order */
    uint32_t* stream;     /* [n_nodes] stream of each node; streams are numbered by first use in launch order */
    uint32_t* stream_seq; /* [n_nodes] 1-based rank of the node on its stream */
    uint32_t* level;      /* [n_nodes] longest-path depth from a source (wavefront levels); for every strategy */
    double* priority;     /* [n_nodes] the estimated time (ms, descriptors' time_ms) of the longest path from the
                             node's start to the end of the graph: the critical path, which a backend that
                             picks among ready nodes (the CPU executor) runs first; 1 per node without descriptors */

    /* synchronisation: before launching node n on its stream, wait on the events recorded after
       nodes wait_nodes[wait_start[n] .. wait_start[n+1]) (all on other streams, in ascending launch
       position); a node with records_event[n] records its event right after its launch. */
    uint8_t* records_event; /* [n_nodes] */
    uint32_t* wait_start;   /* [n_nodes + 1] */
    uint32_t* wait_nodes;   /* [stats.n_waits] */

    /* lanes: a chain decomposition of the happens-before order, the key of the planner's vector
       clocks and the CUDA backend's physical streams. A stream takes over the lane of an ended
       stream whose last op happens-before its first op, so a lane is totally ordered: running a
       lane's streams one after another on one CUDA stream adds no ordering the plan lacks, and the
       lane count stays near the number of streams alive at once (Opara opens many short streams:
       GoogLeNet's 28 fit on 4 lanes, a 100k-op graph's 25k on 15k). Lane 0 is the origin's. */
    uint32_t* lane;        /* [n_nodes] */
    uint32_t* lane_seq;    /* [n_nodes] 1-based rank of the node on its lane */
    uint32_t* stream_lane; /* [n_streams] the lane of all of the stream's ops */
    uint32_t n_lanes;

    /* fork/join through the origin stream 0 (the stream of order[0]): the origin records a fork
       event before its first op; a stream with stream_fork[s] waits on it before its first op (the
       streams without it start by waiting on another stream's event, which already orders them
       after the fork). After all ops, the origin waits on an event recorded after the last op of
       each stream with stream_join[s] (the others end with an op another stream waited on). */
    uint8_t* stream_fork;   /* [n_streams] */
    uint8_t* stream_join;   /* [n_streams] */
    uint32_t* stream_first; /* [n_streams] first node of each stream */
    uint32_t* stream_last;  /* [n_streams] last node of each stream */
    /* the same per lane, for backends that run lanes: lane l >= 1 waits on the fork when its first
       stream does, and is joined when its last stream is (earlier ones happen-before it) */
    uint8_t* lane_fork;     /* [n_lanes] */
    uint8_t* lane_join;     /* [n_lanes] */

    /* memory */
    uint64_t arena_bytes;
    uint32_t alignment;
    uint8_t* storage;       /* [n_values] opara__storage of the value's root */
    uint64_t* offset;       /* [n_values] arena offset of the value's first byte, or OPARA__NO_ARENA */
    int32_t* alias_root;    /* [n_values] value that owns the bytes (itself when not an alias), resolved to the end */
    uint64_t* alias_offset; /* [n_values] byte offset of the value inside its root */
    uint8_t* alias_kind;    /* [n_values] opara__alias_kind */
    uint64_t* value_bytes;  /* [n_values] the sizes the plan was made for */

    opara__plan_stats stats;
} opara__plan;

/* Builds the plan for a finalized graph. value_bytes[v]: size of every value. descs: one per node
   (NULL: every node has no kernel info, so Alg. 2 keeps ready order). dev: NULL = default device.
   desc: NULL = defaults. On failure *out is NULL and the runtime's error says why. */
OPARA__PRIVATE opara_result opara__plan_create(const opara__graph* g, const uint64_t* value_bytes,
                                              const opara__op_desc* descs, const opara__device* dev,
                                              const opara__plan_desc* desc, opara__plan** out);
OPARA__PRIVATE void opara__plan_free(opara_runtime* rt, opara__plan* plan);
/* opara__plan_create for a backend that will run the plan: the plan is proven safe
   (opara__plan_verify) before it is returned. One with in-place Concat inputs that fails the
   proof (a known memory-plan defect on NASNet-like cells) is rebuilt without them, with a WARN
   log, rather than run. */
OPARA__PRIVATE opara_result opara__plan_create_verified(const opara__graph* g, const uint64_t* value_bytes,
                                                       const opara__op_desc* descs, const opara__device* dev,
                                                       const opara__plan_desc* desc, opara__plan** out);

/* Proves that the plan is safe for the graph: the order is a topological permutation, streams
   and ranks are consistent, every wait names an earlier recorded event on another stream, every
   data dependency is enforced (same-stream order or an event path), every value fits its storage,
   no two unordered operators touch overlapping arena bytes with at least one write, no byte is
   overwritten between its write and a later read, and outputs survive to the end. Returns
   OPARA_ERR_PLAN_INVALID with the first violation in the runtime's error detail. */
OPARA__PRIVATE opara_result opara__plan_verify(const opara__graph* g, const opara__plan* plan);

/* 1 when input `input_index` of Concat node `node` already sits in its slice of the output (the
   Concat does not copy it). */
OPARA__PRIVATE int opara__plan_concat_input_in_place(const opara__graph* g, const opara__plan* plan, uint32_t node,
                                                    uint32_t input_index);

/* The whole pipeline for a graph with the analytic model: shapes and node records for `batch` (a
   graph without a symbolic batch ignores it), value sizes, default descriptors for `dev`, the plan
   (desc->shapes and desc->params are filled in for the call). shapes_out/params_out/descs_out, when
   not NULL, receive arrays the caller frees with opara__free (n_values shapes, n_nodes records,
   n_nodes descriptors). */
OPARA__PRIVATE_TOOL opara_result opara__plan_graph(const opara__graph* g, int64_t batch, const opara__device* dev,
                                             const opara__plan_desc* desc, opara__plan** out,
                                             opara__shape** shapes_out, opara__node_params** params_out,
                                             opara__op_desc** descs_out);

/* ---- the pieces, for tests and the simulator ------------------------------------------------- */

/* Resource demand of one kernel under a metric, in [0, +inf); nodes without info get +inf. */
OPARA__PRIVATE double opara__op_demand(const opara__op_desc* d, const opara__device* dev, opara__metric metric);

/* Launch order of the strategy's default or an explicit one into order[n_nodes]. */
OPARA__PRIVATE opara_result opara__sched_order(const opara__graph* g, const opara__op_desc* descs,
                                              const opara__device* dev, const opara__plan_desc* desc,
                                              uint32_t* order);

/* ---- memory budget (opara_live.c) ------------------------------------------------------------ */

/* Bytes live in launch order: a storage root (the memory plan's static aliases: views and in-place
   Concat inputs share their root) becomes live when its first writer is launched and dies when its
   last reader is launched; graph outputs never die. In-place outputs are not modelled (they depend
   on happens-before, known only after streams are assigned), so this slightly over-counts. */
typedef struct opara__live {
    const opara__graph* g;
    uint32_t* root;  /* [n_values] storage root of an arena value, UINT32_MAX for other values */
    uint64_t* size;  /* [n_values] by root: aligned bytes */
    uint32_t* reads; /* [n_values] by root: reads still to come */
    uint8_t* state;  /* [n_values] by root: OPARA__LIVE_* bits */
    uint32_t* seen;  /* [n_values] by root: stamp deduplicating one node's roots */
    uint32_t stamp;
    uint64_t live, peak;
} opara__live;

/* Sets up the tracker for plan p's value sizes, alignment and alias knobs (p->order unused). */
OPARA__PRIVATE opara_result opara__live_init(opara__live* t, const opara__graph* g, const opara__plan* p);
OPARA__PRIVATE void opara__live_free(opara_runtime* rt, opara__live* t);
/* What launching `node` now would do: *alloc bytes become live, then *freed bytes die. */
OPARA__PRIVATE void opara__live_cost(opara__live* t, uint32_t node, uint64_t* alloc, uint64_t* freed);
/* Launches `node`: updates live and peak. */
OPARA__PRIVATE void opara__live_launch(opara__live* t, uint32_t node);
/* Peak live bytes of launch order `order` for plan p's sizes and knobs. */
OPARA__PRIVATE opara_result opara__live_peak(const opara__graph* g, const opara__plan* p, const uint32_t* order,
                                            uint64_t* peak);

/* Alg. 2 under a memory budget: `live` tracks the launch-order live bytes, `limit` caps them. */
typedef struct opara__order_budget {
    opara__live* live;
    uint64_t limit;
} opara__order_budget;

/* opara__sched_order with an optional budget (NULL: none). */
OPARA__PRIVATE opara_result opara__sched_order_budgeted(const opara__graph* g, const opara__op_desc* descs,
                                                       const opara__device* dev, const opara__plan_desc* desc,
                                                       opara__order_budget* budget, uint32_t* order);

/* The arena bytes of a block holding `bytes` (at least 1) at a plan's alignment (opara_memplan.c). */
OPARA__PRIVATE uint64_t opara__block_bytes(uint64_t bytes, uint32_t alignment);

/* The static aliases the memory plan makes for p's knobs and sizes (views, in-place Concat
   inputs): parent[v] is the value v lives in, -1 for a root (opara_memplan.c). */
OPARA__PRIVATE opara_result opara__memory_aliases(const opara__graph* g, const opara__plan* p, int32_t* parent);

/* Opara Alg. 1 over `order`: stream[n_nodes], returns the stream count in *n_streams. Streams are
   numbered in creation order. */
OPARA__PRIVATE opara_result opara__sched_alg1(const opara__graph* g, const uint32_t* order,
                                             const opara__plan_desc* desc, uint32_t* stream, uint32_t* n_streams);

/* ---- between the planning modules ------------------------------------------------------------ */

/* Bounded vector clocks: k slots (a power of two), stream s lives in slot s & (k-1). A slot holds
   one (stream, seq) fact "every op of `stream` up to rank `seq` happens-before me", packed as
   stream << 32 | seq (0: empty; seq starts at 1). When two streams compete for a slot, the merge
   keeps the newer stream and forgets the other, and one stream's facts keep the higher seq: both
   are the larger packed key, so a merge is a slot-wise maximum. A clock only ever
   under-approximates the happens-before relation, so a wait it cannot prove redundant is kept and
   a block it cannot prove free is not reused. Exact whenever the stream count is at most k. */
typedef uint64_t opara__vc_slot;
#define OPARA__VC_FACT(stream, seq) ((uint64_t)(stream) << 32 | (uint32_t)(seq))

#define OPARA__VC_MAX_SLOTS 64u
/* Slot count for a plan with n_streams streams: the next power of two, at most OPARA__VC_MAX_SLOTS. */
OPARA__PRIVATE uint32_t opara__vc_slots(uint32_t n_streams);
OPARA__PRIVATE void opara__vc_merge(opara__vc_slot* dst, const opara__vc_slot* src, uint32_t k);
OPARA__PRIVATE int opara__vc_knows(const opara__vc_slot* c, uint32_t k, uint32_t stream, uint32_t seq);
OPARA__PRIVATE void opara__vc_set(opara__vc_slot* c, uint32_t k, uint32_t stream, uint32_t seq);

/* Walks a plan in launch order keeping one clock per live stream and one snapshot per node that
   others still have to read (refs[v] of them); clocks live in a pool that recycles freed slots, so
   memory follows the live frontier, not V * streams. */
typedef struct opara__vc_walk {
    opara_runtime* rt;
    uint32_t k;
    opara__vc_slot* pool;
    size_t pool_cap;        /* in clocks */
    uint32_t pool_used;
    uint32_t* free_list;
    uint32_t n_free;
    size_t free_cap;
    uint32_t* stream_clock; /* [n_streams] pool index or UINT32_MAX */
    uint32_t* node_clock;   /* [n_nodes] pool index or UINT32_MAX */
    uint32_t* refs;         /* [n_nodes] readers of the node's snapshot still to come */
} opara__vc_walk;

OPARA__PRIVATE opara_result opara__vc_walk_init(opara__vc_walk* w, opara_runtime* rt, uint32_t n_nodes,
                                               uint32_t n_streams);
OPARA__PRIVATE void opara__vc_walk_free(opara__vc_walk* w);
/* The clock of stream s (created empty on first use); NULL when out of memory. Valid until the next
   call that may allocate (opara__vc_walk_snapshot, opara__vc_walk_stream). */
OPARA__PRIVATE opara__vc_slot* opara__vc_walk_stream(opara__vc_walk* w, uint32_t s);
/* Copies stream s's clock as node v's snapshot; 0 when out of memory. */
OPARA__PRIVATE int opara__vc_walk_snapshot(opara__vc_walk* w, uint32_t v, uint32_t s);
/* Merges node p's snapshot into stream s's clock and drops one reference to the snapshot. */
OPARA__PRIVATE void opara__vc_walk_acquire(opara__vc_walk* w, uint32_t s, uint32_t p);
OPARA__PRIVATE void opara__vc_walk_end_stream(opara__vc_walk* w, uint32_t s);

/* Sync plan (opara_sync.c): fills records_event, wait_start/wait_nodes, stream_fork/join and the
   sync statistics from order/stream/stream_seq. extra_start/extra (CSR by node, may be NULL) are
   dependencies beyond the data edges (the wavefront barriers). */
OPARA__PRIVATE opara_result opara__sync_plan(const opara__graph* g, opara__plan* plan, const uint32_t* extra_start,
                                            const uint32_t* extra);
/* Scratch memory a node uses only while it runs (the CUDA backend's library workspaces), shared
   between nodes that never run at the same time (opara_sync.c). need[n] > 0: node n needs need[n]
   bytes. Each such node gets a slot (slot[n]; UINT32_MAX for the others; [n_nodes]) whose nodes
   are pairwise ordered by the plan's happens-before (lane order and event waits), so one block of
   size[k] bytes (the largest need in slot k; size has room for n_nodes entries) serves slot k.
   *n_slots: the slot count. A plan with more than 8192 such nodes, or too large for the clocks
   (over 2^24 entries), gets one slot per lane. */
OPARA__PRIVATE opara_result opara__plan_share_scratch(const opara__graph* g, const opara__plan* p, const uint64_t* need,
                                                     uint32_t* slot, uint64_t* size, uint32_t* n_slots);
/* Memory plan (opara_memplan.c): fills storage, offset, alias_*, arena_bytes from the sync plan. */
OPARA__PRIVATE opara_result opara__memory_plan(const opara__graph* g, opara__plan* plan);

#endif /* OPARA_SCHED_H */
