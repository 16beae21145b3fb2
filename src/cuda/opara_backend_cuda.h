/* The CUDA backend: runs a plan (opara_sched.h) on an NVIDIA GPU through the driver API loaded at
   run time (opara_cuda.h), with our kernels (src/cuda/kernels, embedded PTX or NVRTC) and, when they
   load, cuBLAS for Gemm/MatMul and cuDNN for convolutions (our implicit-GEMM kernel otherwise).

   The runtime owns what every session shares (opara_backend_cuda.c, "the runtime's CUDA state"):
   its first CUDA session or AUTO check loads the driver, cuBLAS and cuDNN and retains the device's
   primary context; later sessions share them; opara_runtime_destroy releases them.

   Threads: a session may be created, run and destroyed on any thread (one call at a time per
   session). Every entry point that calls the driver or a library pushes the session's context
   (cuCtxPushCurrent) and pops it before returning, on every path, so the calling thread's own
   current context is what it was.

   Session creation does all the work that can fail: attach to the runtime's driver and device,
   load the kernel modules, infer shapes, lower every node to launch descriptors (kernel, grid, block,
   parameters), build the plan with the descriptors' resource demand, allocate the arena, the
   constants, the static input buffers, the pinned host staging of the inputs and outputs and the
   library workspaces (one region per stream that calls a library, carved from the arena's
   allocation), create streams, events and one library handle per stream, and (graph modes) run
   once, capture and instantiate. A run then only copies the inputs in (through the pinned
   staging, or device to device), launches (one cuGraphLaunch in the graph modes) and copies the
   outputs out; it never allocates.

   Modes, one plan:
     EAGER      ops launched in the plan's order on the plan's streams, events per the plan
     GRAPH      the same sequence captured from the origin stream (fork/join), replayed
     SEQ_GRAPH  the sequential plan (one stream, topological order) captured: the papers' baseline
   When capture or instantiation fails, GRAPH and SEQ_GRAPH fall back to EAGER (same plan) and log
   the reason (OPARA_LOGITEM_GRAPH_FALLBACK). */
#ifndef OPARA_BACKEND_CUDA_H
#define OPARA_BACKEND_CUDA_H

#include "../plan/opara_sched.h"
#include "../model/opara_model.h"
#include "../../opara_cuda.h"

/* Activation codes of the kernels' shared epilogue (src/cuda/kernels/epilogue.cu). */
typedef enum opara__cuda_act {
    OPARA__CUDA_ACT_NONE = 0,
    OPARA__CUDA_ACT_RELU = 1,
    OPARA__CUDA_ACT_LEAKY_RELU = 2,
    OPARA__CUDA_ACT_SIGMOID = 3,
    OPARA__CUDA_ACT_TANH = 4,
    OPARA__CUDA_ACT_HARD_SIGMOID = 5,
    OPARA__CUDA_ACT_HARD_SWISH = 6,
    OPARA__CUDA_ACT_CLIP = 7,
    OPARA__CUDA_ACT_SQRT = 8,
    OPARA__CUDA_ACT_ERF = 9,
    OPARA__CUDA_ACT_GELU = 10,
    OPARA__CUDA_ACT_GELU_TANH = 11
} opara__cuda_act;

/* Math operator codes of src/cuda/kernels/elementwise.cu (opara_math_f32). */
typedef enum opara__cuda_math {
    OPARA__CUDA_MATH_NEG = 0,
    OPARA__CUDA_MATH_ABS = 1,
    OPARA__CUDA_MATH_EXP = 2,
    OPARA__CUDA_MATH_LOG = 3,
    OPARA__CUDA_MATH_RECIPROCAL = 4,
    OPARA__CUDA_MATH_FLOOR = 5,
    OPARA__CUDA_MATH_CEIL = 6,
    OPARA__CUDA_MATH_ROUND = 7,
    OPARA__CUDA_MATH_SIGN = 8,
    OPARA__CUDA_MATH_SIN = 9,
    OPARA__CUDA_MATH_COS = 10,
    OPARA__CUDA_MATH_TAN = 11,
    OPARA__CUDA_MATH_SOFTPLUS = 12,
    OPARA__CUDA_MATH_SOFTSIGN = 13,
    OPARA__CUDA_MATH_ELU = 14,
    OPARA__CUDA_MATH_SELU = 15,
    OPARA__CUDA_MATH_CELU = 16,
    OPARA__CUDA_MATH_THRESHOLDED_RELU = 17,
    OPARA__CUDA_MATH_ASIN = 18,
    OPARA__CUDA_MATH_ACOS = 19,
    OPARA__CUDA_MATH_ATAN = 20,
    OPARA__CUDA_MATH_SINH = 21,
    OPARA__CUDA_MATH_COSH = 22,
    OPARA__CUDA_MATH_ASINH = 23,
    OPARA__CUDA_MATH_ACOSH = 24,
    OPARA__CUDA_MATH_ATANH = 25
} opara__cuda_math;

/* Binary operator codes of src/cuda/kernels/elementwise.cu. */
typedef enum opara__cuda_binop {
    OPARA__CUDA_BIN_ADD = 0,
    OPARA__CUDA_BIN_SUB = 1,
    OPARA__CUDA_BIN_MUL = 2,
    OPARA__CUDA_BIN_DIV = 3,
    OPARA__CUDA_BIN_POW = 4
} opara__cuda_binop;

/* Op codes of src/cuda/kernels/logic.cu: opara_logic_binary's, opara_logic_unary's (IsInf's flags: 1
   negative, 2 positive) and opara_variadic_step's. */
typedef enum opara__cuda_logic_op {
    OPARA__CUDA_LOGIC_EQUAL = 0,
    OPARA__CUDA_LOGIC_GREATER = 1,
    OPARA__CUDA_LOGIC_LESS = 2,
    OPARA__CUDA_LOGIC_GREATER_EQUAL = 3,
    OPARA__CUDA_LOGIC_LESS_EQUAL = 4,
    OPARA__CUDA_LOGIC_AND = 5,
    OPARA__CUDA_LOGIC_OR = 6,
    OPARA__CUDA_LOGIC_XOR = 7,
    OPARA__CUDA_LOGIC_MOD = 8,  /* integers: the divisor's sign */
    OPARA__CUDA_LOGIC_FMOD = 9, /* fmod=1: the dividend's sign */
    OPARA__CUDA_LOGIC_SHIFT_LEFT = 10,
    OPARA__CUDA_LOGIC_SHIFT_RIGHT = 11
} opara__cuda_logic_op;
typedef enum opara__cuda_logic_unary { OPARA__CUDA_NOT = 0, OPARA__CUDA_IS_NAN = 1, OPARA__CUDA_IS_INF = 2 } opara__cuda_logic_unary;
typedef enum opara__cuda_variadic {
    OPARA__CUDA_VAR_MAX = 0,
    OPARA__CUDA_VAR_MIN = 1,
    OPARA__CUDA_VAR_MEAN = 2,
    OPARA__CUDA_VAR_SUM = 3
} opara__cuda_variadic;

/* X(id, entry point name, kernel file): every kernel the backend launches. */
#define OPARA__CUDA_KERNELS(X) \
    X(UNARY, "opara_unary_f32", "epilogue") X(CHANNEL_AFFINE, "opara_channel_affine_f32", "epilogue") \
    X(BIAS_ACT, "opara_bias_act_f32", "epilogue") X(SGEMM, "opara_sgemm_f32", "epilogue") \
    X(CONV2D, "opara_conv2d_f32", "epilogue") X(CONV_TRANSPOSE2D, "opara_conv_transpose2d_f32", "epilogue") \
    X(BINARY_F32, "opara_binary_f32", "elementwise") X(BINARY_INT, "opara_binary_int", "elementwise") \
    X(LOGIC_BINARY, "opara_logic_binary", "logic") X(LOGIC_UNARY, "opara_logic_unary", "logic") \
    X(VARIADIC_STEP, "opara_variadic_step", "logic") \
    X(WHERE, "opara_where", "elementwise") X(STRIDED_COPY, "opara_strided_copy", "elementwise") \
    X(CAST, "opara_cast", "cast") \
    X(CAST_FLOAT, "opara_cast_float", "cast") X(POOL2D, "opara_pool2d_f32", "pool") \
    X(SOFTMAX, "opara_softmax_f32", "norm") X(LAYER_NORM, "opara_layer_norm_f32", "norm") \
    X(SOFTMAX_ROWS, "opara_softmax_rows_f32", "norm") \
    X(GATHER, "opara_gather", "layout") \
    X(REDUCE, "opara_reduce_f32", "reduce") X(ARG_REDUCE, "opara_arg_reduce_f32", "reduce") \
    X(HARDMAX, "opara_hardmax_f32", "reduce") X(LOG_SOFTMAX, "opara_log_softmax_f32", "reduce") \
    X(CUM_SUM, "opara_cum_sum", "reduce") \
    X(GATHER_ELEMENTS, "opara_gather_elements", "gather") X(SCATTER_ELEMENTS, "opara_scatter_elements", "gather") \
    X(GATHER_ND, "opara_gather_nd", "gather") X(SCATTER_ND, "opara_scatter_nd", "gather") X(TILE, "opara_tile", "gather") \
    X(TRILU, "opara_trilu", "gather") X(EYE_LIKE, "opara_eye_like", "gather") X(SIZE, "opara_size", "gather") \
    X(ONE_HOT, "opara_one_hot", "gather") X(REVERSE_SEQUENCE, "opara_reverse_sequence", "gather") \
    X(PAD, "opara_pad", "layout") X(RESIZE, "opara_resize_f32", "layout") X(MATH, "opara_math_f32", "elementwise") \
    X(QUANTIZE, "opara_quantize_linear", "quant") X(DEQUANTIZE, "opara_dequantize_linear", "quant") \
    X(DYNAMIC_QUANTIZE, "opara_dynamic_quantize_linear", "quant") \
    X(GROUP_NORM, "opara_group_norm_f32", "norm") X(GLOBAL_MAX, "opara_global_max_f32", "norm") \
    X(LRN, "opara_lrn_f32", "norm") X(PRELU, "opara_prelu_f32", "norm") X(SHRINK, "opara_shrink_f32", "norm") \
    X(DROPOUT, "opara_dropout", "norm") X(MAXPOOL_IDX, "opara_maxpool2d_idx_f32", "pool") \
    X(MAX_UNPOOL, "opara_max_unpool_f32", "pool") X(RESIZE_TAPS4, "opara_resize_taps4_f32", "pool")

#define OPARA__CUDA_KERNEL_ENUM(id, name, file) OPARA__CUK_##id,
typedef enum opara__cuda_kernel { OPARA__CUDA_KERNELS(OPARA__CUDA_KERNEL_ENUM) OPARA__CUK_COUNT } opara__cuda_kernel;
#undef OPARA__CUDA_KERNEL_ENUM

#define OPARA__CUDA_MAX_ARGS 24

/* One kernel argument as lowered (before device addresses exist). */
typedef enum opara__cuda_arg_kind {
    OPARA__CUARG_I32 = 0,    /* raw holds the value */
    OPARA__CUARG_I64 = 1,
    OPARA__CUARG_F32 = 2,    /* raw holds the float's bits */
    OPARA__CUARG_TENSOR = 3, /* device address of value `ref` plus raw bytes */
    OPARA__CUARG_META = 4,   /* device address of meta int ref */
    OPARA__CUARG_AUX = 5,    /* device address of aux float ref */
    OPARA__CUARG_NULL = 6    /* a NULL pointer */
} opara__cuda_arg_kind;

typedef struct opara__cuda_arg {
    uint8_t kind;
    int32_t ref;
    uint64_t raw;
} opara__cuda_arg;

typedef enum opara__cuda_launch_type {
    OPARA__CULAUNCH_KERNEL = 0,
    OPARA__CULAUNCH_COPY = 1,  /* device-to-device copy of raw bytes: args[0] dst, args[1] src */
    OPARA__CULAUNCH_CUBLAS = 2, /* cublasSgemmStridedBatched; args as for SGEMM, epilogue follows */
    OPARA__CULAUNCH_CUDNN = 3   /* a cuDNN convolution: args x, w, bias (NULL or tensor/aux), y; lib indexes dnn_convs */
} opara__cuda_launch_type;

typedef struct opara__cuda_launch {
    uint32_t node;
    uint8_t type;
    uint8_t kernel; /* opara__cuda_kernel */
    uint32_t lib;   /* OPARA__CULAUNCH_CUDNN: index in opara__cuda_lowering.dnn_convs */
    uint32_t grid[3], block[3];
    uint32_t n_args;
    uint8_t arg_overflow; /* lowering: 1 + the first int argument whose value did not fit 32 bits (0: none) */
    opara__cuda_arg args[OPARA__CUDA_MAX_ARGS];
    /* bound at session creation once addresses exist */
    uint64_t values[OPARA__CUDA_MAX_ARGS];
    void* params[OPARA__CUDA_MAX_ARGS];
} opara__cuda_launch;

typedef enum opara__cuda_mode {
    OPARA__CUDA_EAGER = 0,
    OPARA__CUDA_GRAPH = 1,
    OPARA__CUDA_SEQ_GRAPH = 2
} opara__cuda_mode;

/* Called by the launch sequence around every node that launches something (before its first and
   after its last launch, on the node's stream). */
typedef opara_result (*opara__cuda_node_hook)(void* user, uint32_t node, int after, opara_CUstream stream);

typedef struct opara__cuda_options {
    int device;                  /* ordinal; 0 default */
    opara__cuda_mode mode;
    int64_t batch;               /* 0: 1 */
    const opara__plan_desc* plan; /* NULL: defaults (SEQ_GRAPH forces the sequential strategy) */
    const char* driver_path;     /* NULL: OPARA_CUDA_DRIVER, else the search list */
    const char* cublas_path;     /* NULL: OPARA_CUBLAS, else the search list */
    const char* nvrtc_path;      /* NULL: OPARA_NVRTC, else the search list (only with use_nvrtc) */
    const char* cudnn_path;      /* NULL: OPARA_CUDNN, else the search list */
    int no_cublas;               /* use our SGEMM even when cuBLAS loads */
    int no_cudnn;                /* use our convolution kernel even when cuDNN loads */
    opara_precision precision;   /* FP32 (exact: no TF32 in any library call) or TF32 (tensor-core math in
                                    cuBLAS and cuDNN on compute capability 8.0+; FP32 below) */
    int use_nvrtc;               /* compile the kernel sources for the exact device with NVRTC */
    int test_break_capture;      /* tests: make an unsafe call during capture (it must fall back) */
    opara__cuda_node_hook test_capture_hook; /* tests: called around every node while the launch sequence is
                                                captured (the captured-graph test attributes graph nodes to
                                                ops with it) */
    void* test_capture_hook_user;
    /* profiler (opara_cuda_profile.c) */
    int profile;                 /* one profiling run before planning: measured per-op times (and CUPTI
                                    records of library kernels) replace the estimates; the plan's
                                    metric becomes OPARA__METRIC_TIME unless opt.plan sets one */
    const char* cupti_path;      /* NULL: OPARA_CUPTI, else the search list; "none": do not try CUPTI */
    const struct opara__cuda_op_profile* measured; /* [n_nodes] from a profiling run (set by the profiler; open copies them) */
    uint32_t eager_stream_cap;   /* EAGER: the plan gets at most this many streams (0: opt.plan's stream_cap) */
    size_t io_chunk;             /* host runs: bytes per piece of the pipelined input/output copies (0:
                                    OPARA_CUDA_IO_CHUNK); tests make it small to split tiny models */
    size_t io_direct;            /* host runs: inputs of at least this many bytes are copied from the
                                    caller's memory, not staged (0: OPARA_CUDA_IO_DIRECT; SIZE_MAX: never) */
    opara_logger logger;         /* where the session's messages go, its creation's failures included (the
                                    session's logger); zero: the runtime's */
} opara__cuda_options;

typedef struct opara__cuda_session opara__cuda_session;

/* ---- the runtime's CUDA state (opara_cuda_runtime.c) -------------------------------------------
   The first CUDA session (or AUTO check) of a runtime loads the driver, cuBLAS and cuDNN and retains
   the primary context of each device a session uses; the runtime's later sessions share them and
   opara_runtime_destroy releases them. */
typedef struct opara__cuda_shared opara__cuda_shared;

/* What a session gets from its runtime besides the tables: the device, its retained primary context,
   and for each optional library OPARA_OK (loaded), OPARA_ERR_UNSUPPORTED (not asked for) or the
   failure's code with why_* saying why. */
typedef struct opara__cuda_attachment {
    opara__cuda_shared* shared;
    opara_CUdevice dev;
    opara_CUcontext ctx;
    opara_result cublas, cudnn;
    char why_cublas[2400], why_cudnn[2400];
} opara__cuda_attachment;

/* Loads what opt needs into the runtime unless it has it, fills copies of the tables (the driver's
   always, cuBLAS's / cuDNN's when att says OPARA_OK) and counts the session. The driver and the
   context are required (their failure is returned, why says why); a library file other than the
   one the runtime loaded is OPARA_ERR_INVALID_ARGS. */
OPARA__PRIVATE opara_result opara__cuda_runtime_attach(opara_runtime* rt, const opara__cuda_options* opt,
                                                      opara_cuda_driver* cu, opara_cuda_cublas* cublas,
                                                      opara_cuda_cudnn* dnn, opara__cuda_attachment* att, char* why,
                                                      size_t cap);
/* A session let go of the state (any thread). */
OPARA__PRIVATE void opara__cuda_runtime_detach(opara__cuda_shared* sh);
/* OPARA_OK when the runtime's CUDA driver (OPARA_CUDA_DRIVER, else the search list) loads,
   initialises and has a device; it stays loaded for the runtime's sessions, and a failure is
   remembered (no retry for the same request). reason receives why not. OPARA_ERR_OUT_OF_MEMORY
   when the runtime's CUDA state could not be allocated (not remembered: the next call tries again).
   Used by the AUTO and CUDA backend choice. */
OPARA__PRIVATE opara_result opara__cuda_runtime_check(opara_runtime* rt, char* reason, size_t cap);
/* The same check without a runtime: loads driver_path (NULL: the environment, else the search
   list) and unloads it again (tests ask it whether to skip). */
OPARA__PRIVATE_TOOL int opara__cuda_available(const char* driver_path, char* reason, size_t cap);

/* The session's steps (open, describe the nodes for the planner, prepare the plan it made), which
   the CUDA table (opara_cuda_table.c, opara_backend.h) wraps. The backend neither infers shapes nor plans.

   Per value, what the session inferred once (copied by open). */
typedef struct opara__cuda_shapes {
    const opara__shape* shapes;
    const opara__node_params* params; /* [n_nodes] what the shape engine resolved per node */
    const opara_dtype* dtypes;
    const uint64_t* value_bytes;
} opara__cuda_shapes;

/* The logger of a CUDA session made with opt (may be NULL): opt's, else the runtime's. */
OPARA__PRIVATE const opara_logger* opara__cuda_logger(opara_runtime* rt, const opara__cuda_options* opt);
/* Opens a session for graph g (finalized; g must outlive the session): attaches to the runtime's
   CUDA state, loads our kernels, lowers every node for the device. On failure everything is
   freed, *out is NULL and the runtime's error says why. What the runtime loaded stays loaded.
   opt->plan is ignored (the caller plans). */
OPARA__PRIVATE opara_result opara__cuda_session_open(opara_runtime* rt, const opara__graph* g, const opara__cuda_options* opt,
                                                    const opara__cuda_shapes* shapes, opara__cuda_session** out);
/* The planner's input for this device: descs[n_nodes] (the analytic model with our kernels'
   launch shapes, registers and shared memory, and measured times after a profiling run), the
   device model (*dev, valid while the session lives), and what the plan must respect, set in pd
   (Concat slice alignment for the libraries, the time metric after profiling). Call once. */
OPARA__PRIVATE opara_result opara__cuda_session_describe(opara__cuda_session* s, opara__op_desc* descs,
                                                        opara__plan_desc* pd, const opara__device** dev);
/* Takes over plan (verified by the caller; freed with the session, also on failure): device
   memory, streams and library handles, then the warm-up run and the capture in graph modes.
   On failure the caller destroys the session; the runtime's error says why
   (OPARA_ERR_DEVICE_MEMORY when device memory runs out). Runs may follow on any thread. */
OPARA__PRIVATE opara_result opara__cuda_session_prepare(opara__cuda_session* s, opara__plan* plan);
/* The steps as opara_session_create takes them through the backend table (opara_backend.h), with
   shapes inferred for opt->batch and planned with opt->plan (profiled first when opt->profile):
   opara_session.c, for the tests. */
OPARA__PRIVATE_TOOL opara_result opara__cuda_session_create(opara_runtime* rt, const opara__graph* g,
                                                           const opara__cuda_options* opt, opara__cuda_session** out);
OPARA__PRIVATE void opara__cuda_session_destroy(opara__cuda_session* s);
/* inputs[i]: host data of graph input i (its size from the shapes). The outputs land in the
   session's pinned staging (opara__cuda_session_output); outputs (may be NULL, or NULL entries)
   receives copies. Failures of runs go to the session's error (opara__cuda_session_last_error),
   not the runtime's, since runs may happen on any thread. */
OPARA__PRIVATE opara_result opara__cuda_session_run(opara__cuda_session* s, const void* const* inputs,
                                                   void* const* outputs);
/* Device-pointer I/O: inputs[i] / outputs[i] are device addresses in the primary context (outputs[i]
   0: not copied); device-to-device copies on the origin stream; returns when they are done. */
OPARA__PRIVATE opara_result opara__cuda_session_run_device(opara__cuda_session* s, const void* const* inputs,
                                                          void* const* outputs);
/* Graph output `index` of the last host run, in the pinned staging (valid until the session is destroyed). */
OPARA__PRIVATE const void* opara__cuda_session_output(const opara__cuda_session* s, uint32_t index);
OPARA__PRIVATE const char* opara__cuda_session_last_error(const opara__cuda_session* s);
/* Push / pop the session's context around driver calls made outside the backend's entry points
   (the profiler's timing run). enter reports a failure into the session's error. */
OPARA__PRIVATE opara_result opara__cuda_session_enter(opara__cuda_session* s);
OPARA__PRIVATE void opara__cuda_session_leave(opara__cuda_session* s);

/* What the session ended up doing (for tests, `opara run` and the profiler). */
typedef struct opara__cuda_info {
    opara__cuda_mode mode;        /* the mode in use (EAGER after a fallback) */
    char fallback_reason[256];    /* "" when no fallback happened */
    int cublas;                   /* 1 when Gemm/MatMul use cuBLAS */
    int cudnn;                    /* 1 when cuDNN loaded (convolutions it can express use it) */
    opara_precision precision;    /* what the library calls compute with (TF32 only on compute capability 8.0+) */
    uint32_t n_conv;              /* Conv nodes */
    uint32_t n_cudnn_convs;       /* of them, lowered to cuDNN (the others run opara_conv2d_f32) */
    uint32_t n_cudnn_refused;     /* Conv that cuDNN refused at lowering (logged with its status; our kernel runs them) */
    int nvrtc;                    /* 1 when the kernels came from NVRTC */
    const char* kernels;          /* where they came from, in the session: "NVRTC cubin sm_90",
                                     "NVRTC PTX compute_90", "embedded PTX sm_75 (driver JIT)" */
    const char* libraries;        /* the libraries in use, versions and files: "CUDA driver 13.0 /usr/lib/...;
                                     cuBLAS 13.0.2 /...; cuDNN 9.19.0 /..." (opara_plan_info.libraries) */
    uint32_t n_launches;          /* kernel and copy launches per run */
    uint64_t driver_calls_last_run; /* driver API calls made by the last run */
    uint64_t arena_bytes;         /* the memory plan's arena */
    uint64_t workspace_bytes;     /* library workspaces (all slots), in the arena's allocation */
    uint32_t n_workspaces;        /* workspace slots: nodes of one slot never run at the same time */
    const uint32_t* workspace_slot;   /* [n_nodes] slot of the node's library calls, UINT32_MAX when none */
    const uint64_t* workspace_offset; /* [n_workspaces] a slot's offset in the arena's allocation */
    const uint64_t* workspace_size;   /* [n_workspaces] its bytes */
    const opara__plan* plan;
    const opara__shape* shapes;
    opara_CUgraph graph;          /* the captured graph (graph modes), kept for inspection */
    const opara__cuda_launch* launches;
    const uint32_t* node_launch_start; /* [n_nodes + 1] */
    const struct opara__cuda_op_profile* profile; /* [n_nodes] the resources and times the plan used */
    const opara_CUfunction* funcs; /* [OPARA__CUK_COUNT] the loaded kernels */
} opara__cuda_info;

OPARA__PRIVATE void opara__cuda_session_info(const opara__cuda_session* s, opara__cuda_info* info);
/* The loaded driver table of a session (tests inspect the captured graph with it). */
OPARA__PRIVATE const opara_cuda_driver* opara__cuda_session_driver(const opara__cuda_session* s);

/* ---- cuDNN convolutions (opara_cuda_cudnn.c) ---------------------------------------------------- */

/* Geometry of a 2-D convolution (a 1-D one has H = OH = R = 1). */
typedef struct opara__cuda_conv_geom {
    int N, C, H, W, K, R, S, OH, OW;
    int ph, pw, ph_end, pw_end, sh, sw, dh, dw, group;
    int relu;     /* fused Relu */
    int has_bias; /* a bias vector of K floats is added (cudnnConvolutionBiasActivationForward) */
    int tf32;     /* TF32 tensor-core math allowed (else exact FP32: FMA kernels only) */
} opara__cuda_conv_geom;

/* Which cuDNN call runs a convolution. */
typedef enum opara__cudnn_call {
    OPARA__CUDNN_FORWARD = 0,   /* cudnnConvolutionForward: no bias, no activation; heuristic algorithm */
    OPARA__CUDNN_BIAS = 1,      /* BiasActivationForward with IDENTITY: cuDNN allows it only with
                                   IMPLICIT_PRECOMP_GEMM, so that algorithm is forced */
    OPARA__CUDNN_BIAS_RELU = 2  /* BiasActivationForward with RELU; heuristic algorithm */
} opara__cudnn_call;

typedef struct opara__cudnn_conv {
    opara_cudnnTensorDescriptor_t x, y, bias;
    opara_cudnnFilterDescriptor_t w;
    opara_cudnnConvolutionDescriptor_t conv;
    opara_cudnnActivationDescriptor_t act;
    opara_cudnnConvolutionFwdAlgo_t algo;
    opara__cudnn_call call;
    int tf32;                   /* TF32 tensor-core math allowed (from the geometry) */
    opara_cudnnMathType_t math; /* set on conv: CUDNN_FMA_MATH (exact FP32), or with TF32 allowed the
                                   chosen algorithm's math type (never ALLOW_CONVERSION) */
    size_t workspace;
    /* When describe or choose returns OPARA_ERR_CUDNN (cuDNN refused this convolution; nothing was
       logged): the call that failed and its status. */
    const char* failed_call;
    opara_cudnnStatus_t status;
} opara__cudnn_conv;

/* Workspace above which a heuristic algorithm is passed over for the next one. */
#define OPARA__CUDNN_WORKSPACE_LIMIT ((size_t)256 << 20)

/* 1 when a cuDNN status means it ran out of host or device memory (cuDNN 9 and 8 codes). */
OPARA__PRIVATE int opara__cudnn_out_of_memory(opara_cudnnStatus_t st);
/* 1 when cuDNN's legacy convolution API can express c (symmetric padding, whole groups). */
OPARA__PRIVATE int opara__cudnn_conv_supported(const opara__cuda_conv_geom* c);
/* Creates and sets the descriptors of c (the math type from c->tf32) and checks cuDNN's output size
   against c's (OPARA_ERR_SHAPE when they disagree). A cuDNN call that fails gives OPARA_ERR_CUDNN
   with out->failed_call and out->status set and nothing logged (the caller decides: the lowering
   falls back to our kernel), except running out of memory (OPARA_ERR_DEVICE_MEMORY or
   OPARA_ERR_OUT_OF_MEMORY, reported: into the runtime's detail, logged through logger, NULL: the
   runtime's). On failure the caller still calls opara__cudnn_conv_destroy. */
OPARA__PRIVATE opara_result opara__cudnn_conv_describe(opara_runtime* rt, const opara_logger* logger,
                                                      const opara_cuda_cudnn* dnn, const opara__cuda_conv_geom* c,
                                                      opara__cudnn_conv* out);
/* The algorithm (cudnnGetConvolutionForwardAlgorithm_v7's first successful one within
   OPARA__CUDNN_WORKSPACE_LIMIT whose math type the precision allows, that math type then set on
   the descriptor; IMPLICIT_PRECOMP_GEMM for OPARA__CUDNN_BIAS) and its workspace size. Never
   cudnnFind*: it allocates and synchronises. Failures as for describe. */
OPARA__PRIVATE opara_result opara__cudnn_conv_choose(opara_runtime* rt, const opara_logger* logger,
                                                    const opara_cuda_cudnn* dnn, opara_cudnnHandle_t handle,
                                                    opara__cudnn_conv* conv);
/* Enqueues the convolution on the handle's stream: y = act(conv(x, w) + bias). */
OPARA__PRIVATE opara_cudnnStatus_t opara__cudnn_conv_run(const opara_cuda_cudnn* dnn, opara_cudnnHandle_t handle,
                                                        const opara__cudnn_conv* conv, const void* x, const void* w,
                                                        const void* bias, void* y, void* workspace, size_t workspace_bytes);
OPARA__PRIVATE void opara__cudnn_conv_destroy(const opara_cuda_cudnn* dnn, opara__cudnn_conv* conv);

/* ---- lowering (opara_cuda_lower.c) ------------------------------------------------------------ */

/* Launch descriptors of every node: the launches of node n are launches[start[n] .. start[n+1]).
   Meta ints and aux floats the launches refer to are appended to the given arrays. */
typedef struct opara__cuda_lowering {
    opara__cuda_launch* launches;
    uint32_t n_launches;
    size_t cap_launches;
    uint32_t* node_start;   /* [n_nodes + 1] */
    int32_t* meta;
    size_t n_meta, cap_meta;
    float* aux;
    size_t n_aux, cap_aux;
    int use_cublas;
    const opara_logger* logger; /* the session's (set by the caller; NULL: the runtime's) */
    int tf32;               /* TF32 allowed in cuDNN convolutions (the caller's precision on cc >= 8.0) */
    /* cuDNN (NULL: every Conv on our kernel): the table and a handle for the heuristics, set by the
       caller; the descriptors of the convolutions lowered to it */
    const opara_cuda_cudnn* dnn;
    opara_cudnnHandle_t dnn_handle;
    opara__cudnn_conv* dnn_convs;
    uint32_t n_dnn_convs;
    size_t cap_dnn_convs;
    uint32_t n_conv;         /* Conv nodes lowered (cuDNN or our kernel) */
    uint32_t n_dnn_refused;  /* Conv cuDNN refused at describe/choose (each logged with its status) */
} opara__cuda_lowering;

OPARA__PRIVATE opara_result opara__cuda_lower(opara_runtime* rt, const opara__graph* g, const opara__shape* shapes,
                                             const opara__node_params* params, const opara_dtype* dtypes,
                                             opara__cuda_lowering* low);
OPARA__PRIVATE void opara__cuda_lowering_free(opara_runtime* rt, opara__cuda_lowering* low);
OPARA__PRIVATE const char* opara__cuda_kernel_name(opara__cuda_kernel k);
OPARA__PRIVATE const char* opara__cuda_kernel_file(opara__cuda_kernel k);

/* ---- profiler: static resources (opara_cuda_resources.c), runs (opara_cuda_profile.c) ---------- */

/* Where a node's resource numbers come from. */
typedef enum opara__cuda_res_source {
    OPARA__CURES_NONE = 0,     /* no launch (views, copies the plan made unnecessary) */
    OPARA__CURES_DRIVER = 1,   /* our kernel: cuFuncGetAttribute and the launch configuration */
    OPARA__CURES_ESTIMATE = 2, /* library kernel: the documented estimate (opara__cuda_library_estimate) */
    OPARA__CURES_CUPTI = 3,    /* library kernel: a CUPTI kernel activity record of the profiling run */
    OPARA__CURES_COPY = 4      /* a device-to-device copy: no kernel resources */
} opara__cuda_res_source;

/* The main launch of one node (its first kernel or library call) as the profiler sees it. */
typedef struct opara__cuda_op_profile {
    char kernel[64];          /* our entry point, the library call, or CUPTI's kernel name */
    uint32_t grid[3], block[3];
    uint32_t regs;            /* per thread */
    uint32_t smem_static;     /* bytes per block */
    uint32_t smem_dynamic;    /* bytes per block, from the launch */
    uint32_t max_threads;     /* CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK (0 for library kernels) */
    uint8_t source;           /* opara__cuda_res_source */
    uint8_t measured;         /* time_ms comes from the profiling runs */
    uint16_t n_runs;          /* measured: the timed runs behind time_ms (after the warm-up) */
    double time_ms;           /* measured: the median over the timed runs of first launch to last launch of
                                 the node, one stream */
    double time_spread;       /* measured: (75th - 25th percentile) / median of those runs */
} opara__cuda_op_profile;

typedef enum opara__cuda_lib_kind {
    OPARA__CULIB_GEMM = 0, /* cuBLAS SGEMM: m x n output per batch item */
    OPARA__CULIB_CONV = 1  /* cuDNN implicit-GEMM convolution: m = N*P*Q output pixels, n = K */
} opara__cuda_lib_kind;

/* Documented launch estimate of a library kernel (see opara_cuda_resources.c and docs/TESTING-GPU.md). */
OPARA__PRIVATE void opara__cuda_library_estimate(opara__cuda_lib_kind kind, double m, double n, double batch,
                                                opara__cuda_op_profile* out);
/* Static profile of every node from its lowered launches: our kernels through cuFuncGetAttribute
   (NUM_REGS, SHARED_SIZE_BYTES, MAX_THREADS_PER_BLOCK), cuBLAS calls and any library call on a
   convolution node from the estimates; then the rows of a profiling run (measured, may be NULL) on
   top. params: [g->n_nodes] the shape engine's records. rows: [g->n_nodes]. */
OPARA__PRIVATE opara_result opara__cuda_profile_static(opara_runtime* rt, const opara_cuda_driver* cu,
                                                      const opara_CUfunction* funcs, const opara__graph* g,
                                                      const opara__shape* shapes, const opara__node_params* params,
                                                      const opara__cuda_lowering* low,
                                                      const opara__cuda_op_profile* measured, opara__cuda_op_profile* rows);
/* The timing fields of a profile row (measured, n_runs, time_ms, time_spread): the rest describes the launch. */
OPARA__PRIVATE void opara__cuda_profile_copy_times(const opara__cuda_op_profile* from, opara__cuda_op_profile* to);
/* The scheduler's descriptors from the rows (launch shape, registers, shared memory, measured time);
   a library row without an estimate takes the default model's launch instead (and shows it). */
OPARA__PRIVATE void opara__cuda_profile_to_descs(opara__cuda_op_profile* rows, uint32_t n_nodes, opara__op_desc* descs);
/* Profiles session ps (eager, the sequential plan of g, its context pushed): an event pair around
   every node: one untimed warm-up pass (lazy module loading, JIT, the libraries' first-call set-up;
   CUPTI records when it works), then timed passes whose per-node median is the node's time (more
   passes while a node's spread stays large). rows receive its static profile, the measured times
   and the CUPTI records of library nodes; the real session is then planned with them
   (opara__cuda_session_create with opt->profile). */
OPARA__PRIVATE opara_result opara__cuda_profile_measure(opara_runtime* rt, opara__cuda_session* ps,
                                                       const opara__cuda_options* opt, const opara__graph* g,
                                                       opara__cuda_op_profile* rows);

/* One eager pass of the plan with the hook, then a synchronisation (profiling runs, during the
   creation of another session: failures go to the runtime's error). Call it between
   opara__cuda_session_enter and opara__cuda_session_leave. */
OPARA__PRIVATE opara_result opara__cuda_session_enqueue_hooked(opara__cuda_session* s, opara__cuda_node_hook hook,
                                                              void* user);


#endif /* OPARA_BACKEND_CUDA_H */
