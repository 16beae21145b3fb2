/* opara.h - GENERATED FILE, DO NOT EDIT.
   Built from src/ by tools/gen_header.c; edit the sources and run `make header`. */
/* ==== BEGIN src/opara_api.h ==== */
/* opara.h - embeddable DNN inference runtime with inter-operator parallelism.

   Do this:
       #define OPARA_IMPLEMENTATION
   before you include this file in *one* C or C++ file to create the implementation.
   Every other file includes it without the define. Link with -lm -ldl -lpthread.

   CONFIGURATION MACROS (define before including)
   | macro                  | default          | effect                                                      |
   |------------------------|------------------|-------------------------------------------------------------|
   | OPARA_IMPLEMENTATION   | -                | emit the implementation in this translation unit            |
   | OPARA_STATIC           | off              | make every public function static (one TU, or several each  |
   |                        |                  | with their own private copy)                                |
   | OPARADEF               | extern           | storage class of public functions (overrides OPARA_STATIC)  |
   | OPARA_MALLOC(sz,al)    | aligned malloc   | default allocator, aligned (define OPARA_MALLOC and         |
   | OPARA_FREE(p)          | free             | OPARA_FREE together, or neither)                            |
   | OPARA_NO_STDIO         | off              | drop the functions that read or write files                 |
   | OPARA_MAX_DIMS         | 8                | maximum tensor rank (the .opara format stores at most 8)    |
   | OPARA_MAX_TENSORS      | 1048576          | limits a model file may not exceed (hostile-input guards);  |
   | OPARA_MAX_NODES        | 1048576          | exceeding one gives OPARA_ERR_LIMIT_EXCEEDED                |
   | OPARA_MAX_ATTRS        | 64               |   attributes per node                                       |
   | OPARA_MAX_NODE_IO      | 4096             |   inputs (and outputs) per node                             |
   | OPARA_MAX_ATTR_ELEMS   | 65536            |   elements of one INTS/FLOATS attribute                     |
   | OPARA_MAX_NAME         | 4096             |   bytes of one name or string attribute                     |
   | OPARA_MAX_STRINGS      | 4194304          |   entries of the string table                               |
   | OPARA_MAX_MODEL_BYTES  | 2^40 (64-bit)    |   bytes of one model file                                   |

   ENVIRONMENT VARIABLES (read at session creation; override the desc's library paths)
   OPARA_CUDA_DRIVER, OPARA_CUBLAS, OPARA_CUDNN, OPARA_NVRTC: path of the library to dlopen
   instead of the default search list.

   ERRORS
   Every fallible call returns an opara_result: OPARA_OK (0) or a negative code grouped by area
   (-1.. general, -100.. model format, -200.. ONNX import, -300.. planning, -400.. backends).
   opara_result_string() names any code. The object the call worked on keeps a detail string
   (opara_runtime_last_error) that says what was wrong and where. Malformed input never
   aborts: it returns an error.

   MEMORY AND LOGGING
   All allocations go through the opara_allocator of the runtime desc (zero = OPARA_MALLOC).
   The library is silent unless a logger is set; opara_log_stderr is a ready-made one.

   See README.md and docs/ARCHITECTURE.md for the data flow, docs/FORMAT.md for the model format.
*/
/* POSIX declarations (clock_gettime, mmap, dlopen) even under strict -std=c99: effective when
   opara.h is the first header of the implementation file. */
#if defined(OPARA_IMPLEMENTATION) && !defined(_WIN32) && !defined(_POSIX_C_SOURCE) && !defined(_GNU_SOURCE) && \
    !defined(_XOPEN_SOURCE)
#  define _POSIX_C_SOURCE 200809L
#endif

#ifndef OPARA_H_INCLUDED
#define OPARA_H_INCLUDED

#define OPARA_VERSION_MAJOR 0
#define OPARA_VERSION_MINOR 1
#define OPARA_VERSION_PATCH 0
#define OPARA_VERSION_STRING "0.1.0"

#include <stddef.h>
#include <stdint.h>

#ifndef OPARADEF
#  if defined(OPARA_STATIC) && (defined(__GNUC__) || defined(__clang__))
#    define OPARADEF static __attribute__((unused))
#  elif defined(OPARA_STATIC)
#    define OPARADEF static
#  else
#    define OPARADEF extern
#  endif
#endif

#ifndef OPARA_MAX_DIMS
#  define OPARA_MAX_DIMS 8
#endif
#ifndef OPARA_MAX_TENSORS
#  define OPARA_MAX_TENSORS 1048576u
#endif
#ifndef OPARA_MAX_NODES
#  define OPARA_MAX_NODES 1048576u
#endif
#ifndef OPARA_MAX_ATTRS
#  define OPARA_MAX_ATTRS 64u
#endif
#ifndef OPARA_MAX_NODE_IO
#  define OPARA_MAX_NODE_IO 4096u
#endif
#ifndef OPARA_MAX_ATTR_ELEMS
#  define OPARA_MAX_ATTR_ELEMS 65536u
#endif
#ifndef OPARA_MAX_NAME
#  define OPARA_MAX_NAME 4096u
#endif
#ifndef OPARA_MAX_STRINGS
#  define OPARA_MAX_STRINGS 4194304u
#endif
#ifndef OPARA_MAX_MODEL_BYTES
#  define OPARA_MAX_MODEL_BYTES ((uint64_t)(sizeof(size_t) >= 8 ? (uint64_t)1 << 40 : (uint64_t)0x7fffffff))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* X(name, value, description): the one list behind the enum and opara_result_string(). */
#define OPARA_RESULTS(X) \
    X(OPARA_OK,                     0, "success") \
    X(OPARA_ERR_INVALID_ARGS,      -1, "invalid argument") \
    X(OPARA_ERR_OUT_OF_MEMORY,     -2, "out of memory") \
    X(OPARA_ERR_INVALID_STATE,     -3, "call not valid in the object's current state") \
    X(OPARA_ERR_BUSY,              -4, "object is in use by another call") \
    X(OPARA_ERR_IO,                -5, "file could not be read or written") \
    X(OPARA_ERR_LIMIT_EXCEEDED,    -6, "a size or count exceeds a limit") \
    X(OPARA_ERR_NOT_FOUND,         -7, "no such name or index") \
    X(OPARA_ERR_UNSUPPORTED,       -8, "feature not supported") \
    X(OPARA_ERR_SHAPE,             -9, "tensor shapes are inconsistent") \
    X(OPARA_ERR_INTERNAL,         -10, "internal error") \
    X(OPARA_ERR_TRUNCATED,       -100, "model data is truncated") \
    X(OPARA_ERR_BAD_MAGIC,       -101, "not an opara model (bad magic)") \
    X(OPARA_ERR_VERSION_TOO_NEW, -102, "model format version is newer than this library") \
    X(OPARA_ERR_VERSION_TOO_OLD, -103, "model format version is older than this library supports") \
    X(OPARA_ERR_UNKNOWN_FLAGS,   -104, "model uses must-understand flags this library does not know") \
    X(OPARA_ERR_BAD_ALIGNMENT,   -105, "model data is misaligned") \
    X(OPARA_ERR_OUT_OF_BOUNDS,   -106, "an offset or size points outside the model data") \
    X(OPARA_ERR_BAD_INDEX,       -107, "an index is out of range") \
    X(OPARA_ERR_BAD_ENUM,        -108, "an enumerated value is out of range") \
    X(OPARA_ERR_BAD_DTYPE,       -109, "a data type is invalid or inconsistent") \
    X(OPARA_ERR_CYCLE,           -110, "the graph has a cycle") \
    X(OPARA_ERR_CORRUPT,         -111, "model data is inconsistent") \
    X(OPARA_ERR_ONNX_DECODE,     -200, "ONNX protobuf could not be decoded") \
    X(OPARA_ERR_ONNX_INVALID,    -201, "ONNX model is invalid") \
    X(OPARA_ERR_UNSUPPORTED_OP,  -202, "model uses unsupported operators") \
    X(OPARA_ERR_EXTERNAL_DATA,   -203, "external tensor data could not be read") \
    X(OPARA_ERR_PLAN_INVALID,    -300, "execution plan failed verification") \
    X(OPARA_ERR_NO_BACKEND,      -400, "no usable backend") \
    X(OPARA_ERR_LIB_NOT_FOUND,   -401, "a shared library could not be loaded") \
    X(OPARA_ERR_SYMBOL_NOT_FOUND,-402, "a library lacks a required entry point (too old?)") \
    X(OPARA_ERR_CUDA,            -403, "CUDA driver call failed") \
    X(OPARA_ERR_CUBLAS,          -404, "cuBLAS call failed") \
    X(OPARA_ERR_CUDNN,           -405, "cuDNN call failed") \
    X(OPARA_ERR_NVRTC,           -406, "NVRTC compilation failed") \
    X(OPARA_ERR_GRAPH_CAPTURE,   -407, "CUDA graph capture or instantiation failed") \
    X(OPARA_ERR_DEVICE_MEMORY,   -408, "out of device memory")

#define OPARA__RESULT_ENUM(name, value, text) name = value,
typedef enum opara_result { OPARA_RESULTS(OPARA__RESULT_ENUM) OPARA_RESULT_FORCE_I32 = -0x7fffffff } opara_result;
#undef OPARA__RESULT_ENUM

/* Name and meaning of a result code, e.g. "OPARA_ERR_TRUNCATED: model data is truncated".
   Never NULL; unknown codes give "unknown opara_result". */
OPARADEF const char* opara_result_string(opara_result result);
OPARADEF const char* opara_version_string(void);

/* Element types. The values are ONNX's TensorProto.DataType numbers. */
typedef enum opara_dtype {
    OPARA_DTYPE_UNDEFINED = 0,
    OPARA_DTYPE_F32 = 1,
    OPARA_DTYPE_U8 = 2,
    OPARA_DTYPE_I8 = 3,
    OPARA_DTYPE_I32 = 6,
    OPARA_DTYPE_I64 = 7,
    OPARA_DTYPE_BOOL = 9,
    OPARA_DTYPE_F16 = 10,
    OPARA_DTYPE_F64 = 11,
    OPARA_DTYPE_FORCE_U32 = 0x7fffffff
} opara_dtype;

/* Size in bytes of one element, 0 for an unknown type. */
OPARADEF size_t opara_dtype_size(opara_dtype dtype);
/* "f32", "i64", ...; "?" for an unknown type. */
OPARADEF const char* opara_dtype_name(opara_dtype dtype);

/* Allocator hook. alloc_fn gets a power-of-two alignment >= 16; set both functions or neither. */
typedef struct opara_allocator {
    void* (*alloc_fn)(size_t size, size_t alignment, void* user_data);
    void (*free_fn)(void* ptr, void* user_data);
    void* user_data;
} opara_allocator;

typedef enum opara_log_level {
    OPARA_LOG_ERROR = 1,
    OPARA_LOG_WARN = 2,
    OPARA_LOG_INFO = 3,
    OPARA_LOG_DEBUG = 4
} opara_log_level;

/* X(id, description): stable message ids, so a program can react to a message without parsing text. */
#define OPARA_LOG_ITEMS(X) \
    X(OPARA_LOGITEM_ERROR_DETAIL,     "a call failed; the text says why") \
    X(OPARA_LOGITEM_BACKEND_FALLBACK, "the requested backend is unusable; another is used") \
    X(OPARA_LOGITEM_LIBRARY_LOADED,   "a shared library was loaded") \
    X(OPARA_LOGITEM_GRAPH_FALLBACK,   "CUDA graph capture failed; eager launch is used") \
    X(OPARA_LOGITEM_PLAN_SUMMARY,     "summary of an execution plan") \
    X(OPARA_LOGITEM_MODEL_LOADED,     "a model was loaded")

#define OPARA__LOGITEM_ENUM(id, text) id,
typedef enum opara_log_item { OPARA_LOG_ITEMS(OPARA__LOGITEM_ENUM) OPARA_LOGITEM_COUNT } opara_log_item;
#undef OPARA__LOGITEM_ENUM

/* Logger hook. `message` is always a complete line without the newline. */
typedef struct opara_logger {
    void (*func)(opara_log_level level, opara_log_item item, const char* message, void* user_data);
    void* user_data;
    opara_log_level max_level; /* 0 means OPARA_LOG_INFO */
} opara_logger;

/* A logger function that prints "opara: <level>: <message>" to stderr (absent with OPARA_NO_STDIO). */
OPARADEF void opara_log_stderr(opara_log_level level, opara_log_item item, const char* message, void* user_data);

/* The runtime holds the allocator, the logger and the detail of the last failing call made
   through it. Use one runtime from one thread at a time (make one per thread if several threads
   load models or create sessions). Models are immutable once loaded and may be shared by sessions
   on any thread. Destroy models and sessions before the runtime they came from. */
typedef struct opara_runtime opara_runtime;

typedef struct opara_runtime_desc {
    opara_allocator allocator; /* zero: OPARA_MALLOC/OPARA_FREE */
    opara_logger logger;       /* zero: silent */
} opara_runtime_desc;

/* desc may be NULL for defaults. On failure *out is NULL. */
OPARADEF opara_result opara_runtime_create(const opara_runtime_desc* desc, opara_runtime** out);
OPARADEF void opara_runtime_destroy(opara_runtime* runtime);
/* Detail of the last failing call made through this runtime ("" if none). Valid until the next call. */
OPARADEF const char* opara_runtime_last_error(const opara_runtime* runtime);

/* ---- models ------------------------------------------------------------------------------------
   A model is the immutable graph of a .opara file (docs/FORMAT.md): tensors, operator nodes,
   graph inputs and outputs, and the constant weights. Loading validates everything (offsets,
   sizes, indices, enums, data types against shapes, alignment, names, acyclicity, attribute
   types, data types and shapes through the graph) and fails with a specific code and a
   detail string (opara_runtime_last_error) naming what is wrong and where. */
typedef struct opara_model opara_model;

/* In opara_tensor_info.dims (and builder dims): the symbolic batch dimension. */
#define OPARA_DIM_BATCH (-1)

typedef struct opara_tensor_info {
    const char* name;                /* valid while the model lives */
    opara_dtype dtype;
    int32_t rank;                    /* -1 when the shape is not declared */
    int64_t dims[OPARA_MAX_DIMS];    /* OPARA_DIM_BATCH marks the symbolic batch */
} opara_tensor_info;

/* Summary numbers of a model (what `opara info` prints). */
typedef struct opara_model_stats {
    uint32_t n_tensors, n_nodes, n_inputs, n_outputs;
    uint32_t n_constants;
    uint64_t n_params;       /* elements of all constants */
    uint64_t param_bytes;    /* bytes of all constants */
    uint64_t file_bytes;     /* size of the .opara image (0 for a model built in memory) */
    uint64_t content_hash;   /* FNV-1a 64 of the image after the header (0 for a model not from a file) */
    int zero_copy;           /* 1: constants point into the caller's buffer or the file mapping */
    int64_t source_opset;    /* ONNX opset the model was converted from, 0 if unknown */
    const char* producer;    /* "" if unknown */
} opara_model_stats;

#ifndef OPARA_NO_STDIO
/* Loads a .opara file. The file is memory-mapped where the OS allows (POSIX mmap, Win32
   MapViewOfFile) and the weights are used in place; otherwise it is read into an aligned buffer. */
OPARADEF opara_result opara_model_load_file(opara_runtime* runtime, const char* path, opara_model** out);
#endif
/* Loads a .opara image from memory without copying: constants point into `data`, which must
   stay alive and unchanged until opara_model_destroy. If `data` is not aligned to the file's
   alignment (64 by default), the image is copied into an aligned buffer owned by the model. */
OPARADEF opara_result opara_model_load_memory(opara_runtime* runtime, const void* data, size_t size,
                                              opara_model** out);
OPARADEF void opara_model_destroy(opara_model* model);

OPARADEF uint32_t opara_model_input_count(const opara_model* model);
OPARADEF uint32_t opara_model_output_count(const opara_model* model);
/* OPARA_ERR_NOT_FOUND when index is out of range. */
OPARADEF opara_result opara_model_input_info(const opara_model* model, uint32_t index, opara_tensor_info* out);
OPARADEF opara_result opara_model_output_info(const opara_model* model, uint32_t index, opara_tensor_info* out);
OPARADEF uint32_t opara_model_node_count(const opara_model* model);
/* ONNX operator type of node `index` ("Conv"), NULL when out of range. */
OPARADEF const char* opara_model_node_op(const opara_model* model, uint32_t index);
/* Name of node `index` (may be ""), NULL when out of range. */
OPARADEF const char* opara_model_node_name(const opara_model* model, uint32_t index);
OPARADEF opara_result opara_model_get_stats(const opara_model* model, opara_model_stats* out);

/* ---- building models in C --------------------------------------------------------------------
   Add inputs, constants, nodes and outputs by name in any order, then finish (which validates
   like the loader) or save. Errors are sticky: the first failing call's code is returned again
   by finish/save, so checking only those is enough. Node inputs may name tensors defined later. */
typedef struct opara_builder opara_builder;

typedef enum opara_attr_type {
    OPARA_ATTR_INT = 1,
    OPARA_ATTR_FLOAT = 2,
    OPARA_ATTR_INTS = 3,
    OPARA_ATTR_FLOATS = 4,
    OPARA_ATTR_STRING = 5
} opara_attr_type;

/* A node attribute. count: elements of INTS/FLOATS (ignored for INT, FLOAT and STRING, which
   is NUL-terminated). The builder copies everything. */
typedef struct opara_attr {
    const char* name;
    opara_attr_type type;
    uint32_t count;
    union {
        int64_t i;
        float f;
        const int64_t* ints;
        const float* floats;
        const char* s;
    } v;
} opara_attr;

OPARADEF opara_result opara_builder_create(opara_runtime* runtime, opara_builder** out);
OPARADEF void opara_builder_destroy(opara_builder* builder);
/* dims may hold OPARA_DIM_BATCH; rank 0 is a scalar. */
OPARADEF opara_result opara_builder_add_input(opara_builder* builder, const char* name, opara_dtype dtype,
                                              int32_t rank, const int64_t* dims);
/* Copies `size` bytes, which must equal product(dims) * opara_dtype_size(dtype). */
OPARADEF opara_result opara_builder_add_constant(opara_builder* builder, const char* name, opara_dtype dtype,
                                                 int32_t rank, const int64_t* dims, const void* data, size_t size);
/* op_type is the ONNX operator name ("Conv"); an input name NULL or "" is an omitted optional
   input. Output tensors are created by the node. */
OPARADEF opara_result opara_builder_add_node(opara_builder* builder, const char* op_type, const char* name,
                                             uint32_t n_inputs, const char* const* inputs, uint32_t n_outputs,
                                             const char* const* outputs, uint32_t n_attrs, const opara_attr* attrs);
OPARADEF opara_result opara_builder_add_output(opara_builder* builder, const char* name);
/* Validates and creates the model (weights are copied into it). The builder stays usable. */
OPARADEF opara_result opara_builder_finish(opara_builder* builder, opara_model** out);
/* The .opara image in a buffer allocated with the runtime's allocator; free it with opara_free. */
OPARADEF opara_result opara_builder_save_memory(opara_builder* builder, void** data, size_t* size);
#ifndef OPARA_NO_STDIO
OPARADEF opara_result opara_builder_save_file(opara_builder* builder, const char* path);
#endif
/* Frees a buffer the library returned (opara_builder_save_memory). NULL is ignored. */
OPARADEF void opara_free(opara_runtime* runtime, void* ptr);
/* ---- scheduling strategies (the plan: launch order, streams, events, memory) ----------------- */

/* Which scheduler builds the execution plan. Every strategy yields the same kind of plan, so the
   backends and the simulator treat them alike. */
typedef enum opara_strategy {
    OPARA_STRATEGY_OPARA = 0,      /* Opara: Alg. 2 launch order, Alg. 1 streams (the default) */
    OPARA_STRATEGY_SEQUENTIAL = 1, /* one stream, topological order ("sequential CUDA Graph") */
    OPARA_STRATEGY_WAVEFRONT = 2,  /* Rammer-style: BFS levels separated by barriers */
    OPARA_STRATEGY_NIMBLE = 3,     /* Nimble: transitive reduction + matchings (minimum chain cover) */
    OPARA_STRATEGY_OPARA_TOPO = 4, /* Alg. 1 streams over a plain topological order (no Alg. 2) */
    OPARA_STRATEGY_COUNT,
    OPARA_STRATEGY_FORCE_U32 = 0x7fffffff
} opara_strategy;

/* The order in which operators are launched. DEFAULT is the strategy's own: Alg. 2 for OPARA,
   the graph's topological order (Kahn, lowest node index first) for the others. */
typedef enum opara_launch_order {
    OPARA_LAUNCH_DEFAULT = 0,
    OPARA_LAUNCH_ALG2 = 1, /* Opara Alg. 2: two ready lists, alternate, least resource demand first */
    OPARA_LAUNCH_TOPO = 2, /* Kahn, lowest node index first */
    OPARA_LAUNCH_DFS = 3,  /* depth-first topological order (what PyTorch's eager execution produces) */
    OPARA_LAUNCH_BFS = 4,  /* breadth-first: Kahn with a FIFO ready queue */
    OPARA_LAUNCH_COUNT,
    OPARA_LAUNCH_FORCE_U32 = 0x7fffffff
} opara_launch_order;

/* "opara", "sequential", "wavefront", "nimble", "opara-topo"; "?" when out of range. */
OPARADEF const char* opara_strategy_name(opara_strategy strategy);

/* ---- sessions: running a model ----------------------------------------------------------------
   A session runs one model on one backend with one execution plan. The model stays immutable and
   may be shared by any number of sessions on any threads. A session runs one inference at a time:
   a call that arrives while another call on the same session is running returns OPARA_ERR_BUSY
   (it never waits and never races). Use one session per thread for concurrent inferences. */
typedef struct opara_session opara_session;

typedef enum opara_backend {
    OPARA_BACKEND_AUTO = 0, /* CUDA when usable, else CPU (with an INFO log saying why) */
    OPARA_BACKEND_CPU = 1,
    OPARA_BACKEND_CUDA = 2,
    OPARA_BACKEND_FORCE_U32 = 0x7fffffff
} opara_backend;

/* Zero means default everywhere. */
typedef struct opara_session_desc {
    opara_backend backend;           /* AUTO */
    opara_strategy strategy;         /* OPARA */
    opara_launch_order launch_order; /* the strategy's own */
    int64_t batch_size;              /* value of the symbolic batch dimension; 0: 1 */
    uint32_t threads;                /* CPU worker threads (the calling thread is one); 0: CPU cores */
    int builtin_gemm;                /* 1: do not load a BLAS, use the built-in SGEMM */
    int verify_plan;                 /* 1: prove the plan safe at creation (slower) */
    opara_logger logger;             /* zero: the runtime's logger */
} opara_session_desc;

/* A tensor handed to or returned by opara_session_run. Inputs and outputs are matched by name,
   or by position when name is NULL. rank/dims must equal the session's shape for the tensor
   (see opara_session_input_info / opara_session_output_info); data holds dims' product elements
   of dtype, row-major. */
typedef struct opara_tensor {
    const char* name;
    opara_dtype dtype;
    int32_t rank;
    int64_t dims[OPARA_MAX_DIMS];
    void* data;
} opara_tensor;

typedef struct opara_plan_info {
    const char* backend;        /* "cpu" */
    const char* strategy;       /* "opara", "sequential", ... */
    const char* gemm;           /* which SGEMM the CPU backend uses, e.g. "OpenBLAS (libopenblas.so.0)" */
    uint32_t n_nodes, n_streams, n_events, n_waits, n_workers;
    uint64_t peak_memory_bytes; /* the arena: all intermediate tensors at their peak */
    uint64_t no_reuse_bytes;    /* what the arena would need without reuse */
} opara_plan_info;

typedef struct opara_run_stats {
    uint64_t runs;              /* completed runs */
    uint64_t last_ns, min_ns, total_ns;
} opara_run_stats;

/* Per-node timing of the last run: start/end in ns since the run began, and the worker. */
typedef struct opara_node_time {
    uint64_t start_ns, end_ns;
    uint32_t worker;
    uint32_t node;
} opara_node_time;

/* desc may be NULL. On failure *out is NULL and opara_runtime_last_error says why. */
OPARADEF opara_result opara_session_create(opara_runtime* runtime, const opara_model* model,
                                           const opara_session_desc* desc, opara_session** out);
OPARADEF void opara_session_destroy(opara_session* session);
OPARADEF uint32_t opara_session_input_count(const opara_session* session);
OPARADEF uint32_t opara_session_output_count(const opara_session* session);
/* Name, dtype and concrete shape (batch resolved) of input/output `index`. */
OPARADEF opara_result opara_session_input_info(const opara_session* session, uint32_t index, opara_tensor_info* out);
OPARADEF opara_result opara_session_output_info(const opara_session* session, uint32_t index, opara_tensor_info* out);
/* Runs one inference: copies the inputs in, runs, copies the requested outputs out (outputs may
   be NULL/0 and read with opara_session_output_data instead). Every model input must be given. */
OPARADEF opara_result opara_session_run(opara_session* session, const opara_tensor* inputs, uint32_t n_inputs,
                                        opara_tensor* outputs, uint32_t n_outputs);
/* Output `index` of the last run, inside the session (valid until the next run or destroy). */
OPARADEF const void* opara_session_output_data(const opara_session* session, uint32_t index);
OPARADEF opara_result opara_session_get_plan_info(const opara_session* session, opara_plan_info* out);
OPARADEF opara_result opara_session_get_run_stats(const opara_session* session, opara_run_stats* out);
/* Fills up to cap entries (one per node, in launch order); returns the node count. */
OPARADEF uint32_t opara_session_get_node_times(const opara_session* session, opara_node_time* out, uint32_t cap);
/* Detail of the session's last failing call ("" if none). */
OPARADEF const char* opara_session_last_error(const opara_session* session);

/* ---- ONNX import ----------------------------------------------------------------------------------
   A .onnx file converts into the same immutable model a .opara file loads into. Supported: the
   operators of docs/FORMAT.md (Conv, Gemm, MatMul, pooling, elementwise, shape ops, Resize, ...),
   opsets 7-17, IR versions 3-8, weights in initializers or Constant nodes, external data files
   beside the model. Import folds constant subgraphs (shape arithmetic included), drops
   Identity/Dropout, folds BatchNormalization into the preceding Conv and fuses a Relu into its
   Conv/Gemm. A symbolic first dim of a graph input becomes the batch size chosen per session;
   other symbolic dims need a value from the options. A model with unsupported operators fails
   with OPARA_ERR_UNSUPPORTED_OP and a detail that lists every one (type, count, first node). */
typedef struct opara_onnx_options {
    /* Input shape overrides, each "NAME=d0,d1,..."; a dim written N (or ?) is the symbolic batch.
       An override replaces the input's declared shape entirely. */
    const char* const* input_shapes;
    uint32_t n_input_shapes;
    /* Size for symbolic dims other than the leading one that no override fixes; 0: such a dim is
       an error (OPARA_ERR_SHAPE naming the input and dim). */
    int64_t default_dim;
    /* Directory that external tensor data paths are relative to. Default: the model file's
       directory (_file), none (_memory: external data is then an error). Paths in the model must
       stay inside it (no "..", not absolute): OPARA_ERR_EXTERNAL_DATA otherwise. */
    const char* external_data_dir;
} opara_onnx_options;

/* options may be NULL for defaults. On failure *out is NULL and the runtime's detail names the
   problem (field path for malformed files, e.g. "graph.node[12].attribute[2]: truncated varint"). */
OPARADEF opara_result opara_model_load_onnx_memory(opara_runtime* runtime, const void* data, size_t size,
                                                   const opara_onnx_options* options, opara_model** out);
#ifndef OPARA_NO_STDIO
OPARADEF opara_result opara_model_load_onnx_file(opara_runtime* runtime, const char* path,
                                                 const opara_onnx_options* options, opara_model** out);
#endif

#ifdef __cplusplus
}
#endif
#endif /* OPARA_H_INCLUDED */
/* ==== END src/opara_api.h ==== */
/* ==== BEGIN src/opara_sim.h ==== */
/* GPU timing simulator (public part): a deterministic discrete-event model of kernels running on
   a GPU, fed by an execution plan. Every number it gives is a MODEL, not a measurement; label it
   "simulated" wherever it is shown. The model is described in docs/SIMULATOR.md. */
#ifndef OPARA_SIM_H
#define OPARA_SIM_H

/* #include "opara_api.h" (inlined above) */

#ifdef __cplusplus
extern "C" {
#endif

/* A device as the simulator sees it. Built-in presets come from public specifications
   (opara_sim_device_preset); a text file of `key = value` lines describes any other card
   (opara_sim_device_parse). The overhead fields are calibration, not specification. */
typedef struct opara_sim_device {
    char name[32];
    /* streaming multiprocessors and their per-SM limits */
    int32_t sm_count;
    int32_t max_threads_per_sm;
    int32_t max_regs_per_sm;
    int32_t max_smem_per_sm;      /* bytes */
    int32_t max_blocks_per_sm;
    int32_t max_threads_per_block;
    int32_t max_smem_per_block;   /* bytes */
    /* throughput: an SM reaches peak_gflops/sm_count with sm_saturation_threads resident threads
       (fewer: proportionally less); DRAM saturates at mem_gbps once mem_saturation of the device's
       thread slots issue loads */
    int32_t sm_saturation_threads;
    double peak_gflops;           /* FP32, GFLOP/s */
    double mem_gbps;              /* DRAM bandwidth, GB/s */
    double mem_saturation;        /* (0, 1] */
    /* overheads in microseconds */
    double launch_us;             /* eager: host time per kernel launch */
    double event_us;              /* eager: host time per event record or wait */
    double graph_launch_us;       /* graph: one replay call */
    double graph_node_us;         /* graph: front-end time per node, in launch order */
    double kernel_gap_us;         /* from a kernel's last dependency finishing to its first block */
    int32_t hw_queues;            /* eager: hardware queues (CUDA_DEVICE_MAX_CONNECTIONS, 8) */
} opara_sim_device;

typedef enum opara_sim_mode {
    OPARA_SIM_GRAPH = 0, /* one captured graph replay: only the plan's edges constrain */
    OPARA_SIM_EAGER = 1  /* host launches kernel by kernel; streams share hw_queues queues */
} opara_sim_mode;

/* Timing of one operator (times in microseconds from the start of the inference). */
typedef struct opara_sim_op_time {
    double ready_us;  /* dependencies done (and launched): its blocks may be dispatched */
    double start_us;  /* first block dispatched */
    double end_us;    /* last block finished */
    uint32_t stream;
    uint32_t blocks;   /* thread blocks (0: kernel-less) */
    int memory_bound;  /* the roofline says memory time dominates */
} opara_sim_op_time;

/* Result of one simulation. Free with opara_sim_result_free. */
typedef struct opara_sim_result {
    double makespan_us;    /* simulated latency of one inference */
    double sm_busy;        /* time-average fraction of SMs with at least one resident block */
    double host_us;        /* host time spent launching */
    uint32_t n_ops;
    opara_sim_op_time* ops; /* in launch order */
    uint32_t n_samples;     /* busy-SM count over time: busy_sms[i] from sample_us[i] on */
    double* sample_us;
    uint32_t* busy_sms;
    uint32_t n_streams;
    opara_sim_device device;
    opara_sim_mode mode;
} opara_sim_result;

/* Built-in presets: "rtx2080s", "v100", "a100", "h100", "orin". OPARA_ERR_NOT_FOUND otherwise. */
OPARADEF opara_result opara_sim_device_preset(const char* name, opara_sim_device* out);
/* Name of the i-th preset, NULL past the end. */
OPARADEF const char* opara_sim_device_preset_name(uint32_t index);
/* Parses `key = value` lines ('#' starts a comment). `base = NAME` first copies a preset; every
   other key is a field of opara_sim_device. Unknown keys and bad numbers are errors. */
OPARADEF opara_result opara_sim_device_parse(opara_runtime* rt, const char* text, size_t len, opara_sim_device* out);
/* Writes the device as text that opara_sim_device_parse reads back to the same values. Returns the
   length it needs (excluding the NUL); writes at most cap bytes, always terminated when cap > 0. */
OPARADEF size_t opara_sim_device_format(const opara_sim_device* dev, char* dst, size_t cap);
#ifndef OPARA_NO_STDIO
/* A preset name, or else the path of a device text file. */
OPARADEF opara_result opara_sim_device_load(opara_runtime* rt, const char* name_or_path, opara_sim_device* out);
#endif

OPARADEF void opara_sim_result_free(opara_runtime* rt, opara_sim_result* result);

/* Chrome-trace / Perfetto JSON of a result: one track per stream (one slice per op, named by
   op_names[i] when given) and a counter track of busy SMs. Streams the text through write. */
OPARADEF void opara_sim_trace_write(const opara_sim_result* result, const char* const* op_names,
                                    void (*write)(const char* text, size_t len, void* user), void* user);

#ifdef __cplusplus
}
#endif
#endif /* OPARA_SIM_H */
/* ==== END src/opara_sim.h ==== */

#if defined(OPARA_IMPLEMENTATION) && !defined(OPARA_IMPLEMENTATION_INCLUDED)
#define OPARA_IMPLEMENTATION_INCLUDED
#define OPARA__AMALGAMATED 1

/* ==== BEGIN src/opara_internal.h ==== */
/* Private declarations shared by the modules of src/. Nothing here is part of the API. */
#ifndef OPARA_INTERNAL_H
#define OPARA_INTERNAL_H

/* POSIX declarations (clock_gettime, mmap, dlopen) under strict -std=c99; effective when this is
   the first header of the translation unit, as it is for every file of src/ and for a
   program that includes opara.h first. */
#if !defined(_WIN32) && !defined(_POSIX_C_SOURCE) && !defined(_GNU_SOURCE) && !defined(_XOPEN_SOURCE)
#  define _POSIX_C_SOURCE 200809L
#endif

/* #include "opara_api.h" (inlined above) */

#include <stdarg.h>
#include <string.h>
#include <limits.h>

/* In the amalgamated opara.h every private function is static; when src/ is built as separate
   files they are ordinary functions with hidden visibility. */
#ifndef OPARA__PRIVATE
#  if defined(__GNUC__) || defined(__clang__)
#    define OPARA__UNUSED __attribute__((unused))
#  else
#    define OPARA__UNUSED
#  endif
#  if defined(OPARA__AMALGAMATED)
#    define OPARA__PRIVATE static OPARA__UNUSED
#  elif defined(__GNUC__) && !defined(_WIN32)
#    define OPARA__PRIVATE __attribute__((visibility("hidden")))
#  else
#    define OPARA__PRIVATE
#  endif
#endif

#if defined(OPARA_MALLOC) != defined(OPARA_FREE)
#  error "define OPARA_MALLOC and OPARA_FREE together, or neither"
#endif

#define OPARA__ARRAY_COUNT(a) (sizeof(a) / sizeof((a)[0]))
#define OPARA__MIN(a, b) ((a) < (b) ? (a) : (b))
#define OPARA__MAX(a, b) ((a) > (b) ? (a) : (b))
#define OPARA__DEFAULT_ALIGN 64

#if defined(__GNUC__) || defined(__clang__)
#  define OPARA__PRINTF(fmt_index, first_arg) __attribute__((format(printf, fmt_index, first_arg)))
#else
#  define OPARA__PRINTF(fmt_index, first_arg)
#endif

/* ---- errors ---------------------------------------------------------------------------------- */

#define OPARA__DETAIL_MAX 1024

typedef struct opara__errbuf {
    char text[OPARA__DETAIL_MAX];
} opara__errbuf;

struct opara_runtime {
    opara_allocator allocator;
    opara_logger logger;
    opara__errbuf error;
};

/* Formats the detail of a failure into rt's error buffer, logs it at ERROR and returns code. */
OPARA__PRIVATE opara_result opara__fail(opara_runtime* rt, opara_result code, const char* fmt, ...) OPARA__PRINTF(3, 4);
OPARA__PRIVATE opara_result opara__failv(opara_runtime* rt, opara_result code, const char* fmt, va_list args);
/* Same, for objects that keep their own error buffer (sessions). */
OPARA__PRIVATE opara_result opara__fail_into(opara__errbuf* buf, const opara_logger* logger, opara_result code,
                                             const char* fmt, va_list args);
OPARA__PRIVATE void opara__log(const opara_logger* logger, opara_log_level level, opara_log_item item,
                               const char* fmt, ...) OPARA__PRINTF(4, 5);

/* ---- memory ---------------------------------------------------------------------------------- */

/* Aligned allocation through the runtime's allocator; NULL on failure (the caller reports it). */
OPARA__PRIVATE void* opara__alloc_aligned(const opara_allocator* a, size_t size, size_t alignment);
OPARA__PRIVATE void opara__free_aligned(const opara_allocator* a, void* ptr);
OPARA__PRIVATE void* opara__alloc(opara_runtime* rt, size_t size);   /* 16-byte aligned, not zeroed */
OPARA__PRIVATE void* opara__calloc(opara_runtime* rt, size_t count, size_t size); /* zeroed, overflow-checked */
OPARA__PRIVATE void opara__free(opara_runtime* rt, void* ptr);
/* Grows *items (element size elem) to hold at least need elements; doubles capacity. */
OPARA__PRIVATE opara_result opara__grow(opara_runtime* rt, void** items, size_t* capacity, size_t need, size_t elem);
OPARA__PRIVATE char* opara__strdup(opara_runtime* rt, const char* s);

/* ---- checked arithmetic ---------------------------------------------------------------------- */

/* Return 1 and store the result when it fits, 0 on overflow. */
OPARA__PRIVATE int opara__add_size(size_t a, size_t b, size_t* out);
OPARA__PRIVATE int opara__mul_size(size_t a, size_t b, size_t* out);
OPARA__PRIVATE int opara__mul_i64(int64_t a, int64_t b, int64_t* out);
/* 1 when [offset, offset+size) lies inside [0, total), in subtraction form (never overflows). */
OPARA__PRIVATE int opara__range_ok(uint64_t offset, uint64_t size, uint64_t total);
OPARA__PRIVATE int opara__is_pow2(size_t x);
OPARA__PRIVATE size_t opara__align_up(size_t x, size_t alignment);

/* ---- little-endian access (byte-wise: no alignment or aliasing assumptions) ------------------ */

OPARA__PRIVATE uint16_t opara__rd_u16(const uint8_t* p);
OPARA__PRIVATE uint32_t opara__rd_u32(const uint8_t* p);
OPARA__PRIVATE uint64_t opara__rd_u64(const uint8_t* p);
OPARA__PRIVATE void opara__wr_u16(uint8_t* p, uint16_t v);
OPARA__PRIVATE void opara__wr_u32(uint8_t* p, uint32_t v);
OPARA__PRIVATE void opara__wr_u64(uint8_t* p, uint64_t v);

/* ---- text ------------------------------------------------------------------------------------ */

/* snprintf that never overflows and always terminates; returns the length written. */
OPARA__PRIVATE size_t opara__format(char* dst, size_t cap, const char* fmt, ...) OPARA__PRINTF(3, 4);
/* FNV-1a 64-bit, for content hashes and name lookups. */
OPARA__PRIVATE uint64_t opara__hash64(const void* data, size_t size, uint64_t seed);

/* ---- threads and atomics (pthreads or Win32) ------------------------------------------------- */

#if defined(_WIN32)
typedef struct opara__mutex { void* srw; } opara__mutex;        /* SRWLOCK */
typedef struct opara__cond { void* cv; } opara__cond;           /* CONDITION_VARIABLE */
typedef struct opara__thread { void* handle; } opara__thread;
#else
#  include <pthread.h>
typedef struct opara__mutex { pthread_mutex_t m; } opara__mutex;
typedef struct opara__cond { pthread_cond_t c; } opara__cond;
typedef struct opara__thread { pthread_t t; } opara__thread;
#endif

typedef void (*opara__thread_fn)(void* arg);

OPARA__PRIVATE int opara__mutex_init(opara__mutex* m);
OPARA__PRIVATE void opara__mutex_destroy(opara__mutex* m);
OPARA__PRIVATE void opara__mutex_lock(opara__mutex* m);
OPARA__PRIVATE void opara__mutex_unlock(opara__mutex* m);
OPARA__PRIVATE int opara__cond_init(opara__cond* c);
OPARA__PRIVATE void opara__cond_destroy(opara__cond* c);
OPARA__PRIVATE void opara__cond_wait(opara__cond* c, opara__mutex* m);
OPARA__PRIVATE void opara__cond_broadcast(opara__cond* c);
/* Starts fn(arg) on a new thread; returns 1 on success. */
OPARA__PRIVATE int opara__thread_start(opara__thread* t, opara__thread_fn fn, void* arg);
OPARA__PRIVATE void opara__thread_join(opara__thread* t);
OPARA__PRIVATE int opara__cpu_count(void);
/* Monotonic time in nanoseconds. */
OPARA__PRIVATE uint64_t opara__now_ns(void);

/* Sequentially consistent atomics on 32-bit ints. */
OPARA__PRIVATE int32_t opara__atomic_load(const volatile int32_t* p);
OPARA__PRIVATE void opara__atomic_store(volatile int32_t* p, int32_t v);
OPARA__PRIVATE int32_t opara__atomic_add(volatile int32_t* p, int32_t delta); /* returns the new value */
OPARA__PRIVATE int opara__atomic_cas(volatile int32_t* p, int32_t expected, int32_t desired); /* 1 if swapped */

#endif /* OPARA_INTERNAL_H */
/* ==== END src/opara_internal.h ==== */
/* ==== BEGIN opara_cuda.h ==== */
/* opara_cuda.h - standalone declarations and run-time loader for the subset of the CUDA driver API,
   NVRTC, cuBLAS and cuDNN that opara.h uses. No CUDA SDK is needed to compile it, nothing is
   linked: the libraries are found with dlopen (LoadLibraryA on Windows) when a program asks.

   USE: in exactly one C or C++ file define OPARA_CUDA_IMPLEMENTATION before including this header.

       opara_cuda_driver cu;
       char err[1024];
       if (opara_cuda_driver_load(&cu, NULL, err, sizeof err) != OPARA_CUDA_LOAD_OK) puts(err);
       else if (cu.cuInit(0) == OPARA_CUDA_SUCCESS) ...
       opara_cuda_driver_unload(&cu);

   Link with -ldl. Configuration macros (define before including):
       OPARA_CUDA_IMPLEMENTATION  emit the loader in this translation unit
       OPARA_CUDA_STATIC          make the loader functions static
       OPARA_CUDA_DEF             storage class of the loader functions (overrides OPARA_CUDA_STATIC)
   Inside the amalgamated opara.h the loader is emitted with the implementation and is static.

   NAMING: every name is NVIDIA's name with an opara prefix, so this header and NVIDIA's headers
   can be included in the same translation unit.
       types, struct tags      opara_ + NVIDIA's name        opara_CUresult, opara_CUstream,
                                                              struct opara_CUstream_st, opara_cudnnHandle_t
       enum values, macros     OPARA_ + NVIDIA's name        OPARA_CUDA_SUCCESS, OPARA_CUBLAS_OP_N,
                                                              OPARA_CU_DEVICE_ATTRIBUTE_WARP_SIZE
       function pointer types  opara_PFN_ + exported symbol  opara_PFN_cuMemAlloc_v2
       table members           the exported symbol           cu.cuMemAlloc_v2(&ptr, bytes)
   Table members carry the ABI version suffix of the symbol they bind to (cuMemAlloc_v2,
   cuStreamDestroy_v2, cublasCreate_v2, ...), which is what NVIDIA's headers map the plain names to.
   Each library's functions are one X-macro list, OPARA_CUDA_<LIB>_FUNCS(X), that generates the
   typedefs, the table members and the loader's symbol table; enum values are X-macro lists too.
   tests/cuda_headers_check.c checks every value, struct layout and function type against NVIDIA's
   headers (CUDA 13.0, cuDNN 9).

   LOADING
   opara_cuda_<lib>_load(table, path, err, err_size) opens one library and fills its table.
   - path (else the environment variable below) names one library to load. When it is given only
     that library is tried: an explicit choice that fails is an error, never silently replaced.
   - otherwise the search list is tried in order, versioned names first:
       lib      env variable        Linux                                     Windows
       driver   OPARA_CUDA_DRIVER   libcuda.so.1 libcuda.so                   nvcuda.dll
       NVRTC    OPARA_NVRTC         libnvrtc.so.13 .12 .11.2 libnvrtc.so      nvrtc64_130_0.dll nvrtc64_120_0.dll nvrtc64_112_0.dll
       cuBLAS   OPARA_CUBLAS        libcublas.so.13 .12 .11 libcublas.so      cublas64_13.dll cublas64_12.dll cublas64_11.dll
       cuDNN    OPARA_CUDNN         libcudnn.so.9 .8 libcudnn.so              cudnn64_9.dll cudnn64_8.dll
   - driver entry points are resolved with cuGetProcAddress_v2, asking for each symbol the CUDA
     version that introduced the ABI of our prototype, with CU_GET_PROC_ADDRESS_LEGACY_STREAM, when the
     driver exports it and cuDriverGetVersion answers; otherwise (and for any symbol it does not
     return) with dlsym of the versioned name. Other libraries use dlsym.
   - a library that cannot be opened gives OPARA_CUDA_LOAD_NOT_FOUND and a message that names
     every path tried with the system's reason; a required entry point that is missing gives
     OPARA_CUDA_LOAD_SYMBOL_MISSING and names it. Optional entry points are left NULL.
   - the minimum driver is CUDA 12.0 (cuGraphExecUpdate_v2, cuGetProcAddress_v2); the entry points
     introduced in 12.3 (cuStreamGetCaptureInfo_v3, cuGraphGetEdges_v2) are optional.
   No function here keeps global state: each table owns its library handle. */
#ifndef OPARA_CUDA_H_INCLUDED
#define OPARA_CUDA_H_INCLUDED
#define OPARA_CUDA_H_VERSION 1

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__) || defined(__clang__)
#  define OPARA__CUDA_UNUSED __attribute__((unused))
#else
#  define OPARA__CUDA_UNUSED
#endif

#ifndef OPARA_CUDA_DEF
#  if defined(OPARA_CUDA_STATIC) || defined(OPARA__AMALGAMATED)
#    define OPARA_CUDA_DEF static OPARA__CUDA_UNUSED
#  else
#    define OPARA_CUDA_DEF extern
#  endif
#endif

/* Calling conventions of NVIDIA's exports (they matter only on 32-bit Windows). */
#ifdef _WIN32
#  define OPARA__CUDA_STDCALL __stdcall
#else
#  define OPARA__CUDA_STDCALL
#endif
#ifndef OPARA_CUDAAPI
#  define OPARA_CUDAAPI OPARA__CUDA_STDCALL
#endif
#ifndef OPARA_CUBLASAPI
#  define OPARA_CUBLASAPI OPARA__CUDA_STDCALL
#endif
#ifndef OPARA_CUDNNAPI
#  define OPARA_CUDNNAPI OPARA__CUDA_STDCALL
#endif
#ifndef OPARA_NVRTCAPI
#  define OPARA_NVRTCAPI
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ============================================================================================== */
/* CUDA driver API types                                                                          */
/* ============================================================================================== */

typedef uint64_t opara_cuuint64_t;
#if defined(_WIN64) || defined(__LP64__)
typedef unsigned long long opara_CUdeviceptr;
#else
typedef unsigned int opara_CUdeviceptr;
#endif
typedef int opara_CUdevice;
typedef struct opara_CUctx_st* opara_CUcontext;
typedef struct opara_CUmod_st* opara_CUmodule;
typedef struct opara_CUfunc_st* opara_CUfunction;
typedef struct opara_CUkern_st* opara_CUkernel;
typedef struct opara_CUevent_st* opara_CUevent;
typedef struct opara_CUstream_st* opara_CUstream;
typedef struct opara_CUgraph_st* opara_CUgraph;
typedef struct opara_CUgraphNode_st* opara_CUgraphNode;
typedef struct opara_CUgraphExec_st* opara_CUgraphExec;

/* The special stream handles (cuda.h CU_STREAM_LEGACY, CU_STREAM_PER_THREAD). */
#define OPARA_CU_STREAM_LEGACY ((opara_CUstream)0x1)
#define OPARA_CU_STREAM_PER_THREAD ((opara_CUstream)0x2)

/* X(NVIDIA_NAME, value) lists; each becomes enum constants OPARA_<NVIDIA_NAME>. */
#define OPARA__CUDA_ENUM_ITEM(name, value) OPARA_##name = value,

#define OPARA_CUDA_RESULT_LIST(X) \
    X(CUDA_SUCCESS, 0) \
    X(CUDA_ERROR_INVALID_VALUE, 1) \
    X(CUDA_ERROR_OUT_OF_MEMORY, 2) \
    X(CUDA_ERROR_NOT_INITIALIZED, 3) \
    X(CUDA_ERROR_DEINITIALIZED, 4) \
    X(CUDA_ERROR_PROFILER_DISABLED, 5) \
    X(CUDA_ERROR_PROFILER_NOT_INITIALIZED, 6) \
    X(CUDA_ERROR_PROFILER_ALREADY_STARTED, 7) \
    X(CUDA_ERROR_PROFILER_ALREADY_STOPPED, 8) \
    X(CUDA_ERROR_STUB_LIBRARY, 34) \
    X(CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER, 36) \
    X(CUDA_ERROR_DEVICE_UNAVAILABLE, 46) \
    X(CUDA_ERROR_NO_DEVICE, 100) \
    X(CUDA_ERROR_INVALID_DEVICE, 101) \
    X(CUDA_ERROR_DEVICE_NOT_LICENSED, 102) \
    X(CUDA_ERROR_INVALID_IMAGE, 200) \
    X(CUDA_ERROR_INVALID_CONTEXT, 201) \
    X(CUDA_ERROR_CONTEXT_ALREADY_CURRENT, 202) \
    X(CUDA_ERROR_MAP_FAILED, 205) \
    X(CUDA_ERROR_UNMAP_FAILED, 206) \
    X(CUDA_ERROR_ARRAY_IS_MAPPED, 207) \
    X(CUDA_ERROR_ALREADY_MAPPED, 208) \
    X(CUDA_ERROR_NO_BINARY_FOR_GPU, 209) \
    X(CUDA_ERROR_ALREADY_ACQUIRED, 210) \
    X(CUDA_ERROR_NOT_MAPPED, 211) \
    X(CUDA_ERROR_NOT_MAPPED_AS_ARRAY, 212) \
    X(CUDA_ERROR_NOT_MAPPED_AS_POINTER, 213) \
    X(CUDA_ERROR_ECC_UNCORRECTABLE, 214) \
    X(CUDA_ERROR_UNSUPPORTED_LIMIT, 215) \
    X(CUDA_ERROR_CONTEXT_ALREADY_IN_USE, 216) \
    X(CUDA_ERROR_PEER_ACCESS_UNSUPPORTED, 217) \
    X(CUDA_ERROR_INVALID_PTX, 218) \
    X(CUDA_ERROR_INVALID_GRAPHICS_CONTEXT, 219) \
    X(CUDA_ERROR_NVLINK_UNCORRECTABLE, 220) \
    X(CUDA_ERROR_JIT_COMPILER_NOT_FOUND, 221) \
    X(CUDA_ERROR_UNSUPPORTED_PTX_VERSION, 222) \
    X(CUDA_ERROR_JIT_COMPILATION_DISABLED, 223) \
    X(CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY, 224) \
    X(CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC, 225) \
    X(CUDA_ERROR_CONTAINED, 226) \
    X(CUDA_ERROR_INVALID_SOURCE, 300) \
    X(CUDA_ERROR_FILE_NOT_FOUND, 301) \
    X(CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND, 302) \
    X(CUDA_ERROR_SHARED_OBJECT_INIT_FAILED, 303) \
    X(CUDA_ERROR_OPERATING_SYSTEM, 304) \
    X(CUDA_ERROR_INVALID_HANDLE, 400) \
    X(CUDA_ERROR_ILLEGAL_STATE, 401) \
    X(CUDA_ERROR_LOSSY_QUERY, 402) \
    X(CUDA_ERROR_NOT_FOUND, 500) \
    X(CUDA_ERROR_NOT_READY, 600) \
    X(CUDA_ERROR_ILLEGAL_ADDRESS, 700) \
    X(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, 701) \
    X(CUDA_ERROR_LAUNCH_TIMEOUT, 702) \
    X(CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING, 703) \
    X(CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED, 704) \
    X(CUDA_ERROR_PEER_ACCESS_NOT_ENABLED, 705) \
    X(CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE, 708) \
    X(CUDA_ERROR_CONTEXT_IS_DESTROYED, 709) \
    X(CUDA_ERROR_ASSERT, 710) \
    X(CUDA_ERROR_TOO_MANY_PEERS, 711) \
    X(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, 712) \
    X(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, 713) \
    X(CUDA_ERROR_HARDWARE_STACK_ERROR, 714) \
    X(CUDA_ERROR_ILLEGAL_INSTRUCTION, 715) \
    X(CUDA_ERROR_MISALIGNED_ADDRESS, 716) \
    X(CUDA_ERROR_INVALID_ADDRESS_SPACE, 717) \
    X(CUDA_ERROR_INVALID_PC, 718) \
    X(CUDA_ERROR_LAUNCH_FAILED, 719) \
    X(CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE, 720) \
    X(CUDA_ERROR_TENSOR_MEMORY_LEAK, 721) \
    X(CUDA_ERROR_NOT_PERMITTED, 800) \
    X(CUDA_ERROR_NOT_SUPPORTED, 801) \
    X(CUDA_ERROR_SYSTEM_NOT_READY, 802) \
    X(CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, 803) \
    X(CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE, 804) \
    X(CUDA_ERROR_MPS_CONNECTION_FAILED, 805) \
    X(CUDA_ERROR_MPS_RPC_FAILURE, 806) \
    X(CUDA_ERROR_MPS_SERVER_NOT_READY, 807) \
    X(CUDA_ERROR_MPS_MAX_CLIENTS_REACHED, 808) \
    X(CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED, 809) \
    X(CUDA_ERROR_MPS_CLIENT_TERMINATED, 810) \
    X(CUDA_ERROR_CDP_NOT_SUPPORTED, 811) \
    X(CUDA_ERROR_CDP_VERSION_MISMATCH, 812) \
    X(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, 900) \
    X(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, 901) \
    X(CUDA_ERROR_STREAM_CAPTURE_MERGE, 902) \
    X(CUDA_ERROR_STREAM_CAPTURE_UNMATCHED, 903) \
    X(CUDA_ERROR_STREAM_CAPTURE_UNJOINED, 904) \
    X(CUDA_ERROR_STREAM_CAPTURE_ISOLATION, 905) \
    X(CUDA_ERROR_STREAM_CAPTURE_IMPLICIT, 906) \
    X(CUDA_ERROR_CAPTURED_EVENT, 907) \
    X(CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD, 908) \
    X(CUDA_ERROR_TIMEOUT, 909) \
    X(CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE, 910) \
    X(CUDA_ERROR_EXTERNAL_DEVICE, 911) \
    X(CUDA_ERROR_INVALID_CLUSTER_SIZE, 912) \
    X(CUDA_ERROR_FUNCTION_NOT_LOADED, 913) \
    X(CUDA_ERROR_INVALID_RESOURCE_TYPE, 914) \
    X(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION, 915) \
    X(CUDA_ERROR_KEY_ROTATION, 916) \
    X(CUDA_ERROR_UNKNOWN, 999)
typedef enum opara_cudaError_enum { OPARA_CUDA_RESULT_LIST(OPARA__CUDA_ENUM_ITEM) } opara_CUresult;

#define OPARA_CU_DEVICE_ATTRIBUTE_LIST(X) \
    X(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 1) \
    X(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, 2) \
    X(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, 3) \
    X(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, 4) \
    X(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, 5) \
    X(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, 6) \
    X(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, 7) \
    X(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, 8) \
    X(CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY, 9) \
    X(CU_DEVICE_ATTRIBUTE_WARP_SIZE, 10) \
    X(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK, 12) \
    X(CU_DEVICE_ATTRIBUTE_CLOCK_RATE, 13) \
    X(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 16) \
    X(CU_DEVICE_ATTRIBUTE_INTEGRATED, 18) \
    X(CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS, 31) \
    X(CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, 33) \
    X(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, 36) \
    X(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, 37) \
    X(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, 38) \
    X(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, 39) \
    X(CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT, 40) \
    X(CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, 41) \
    X(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 75) \
    X(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 76) \
    X(CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED, 78) \
    X(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, 81) \
    X(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR, 82) \
    X(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, 97) \
    X(CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR, 106)
typedef enum opara_CUdevice_attribute_enum { OPARA_CU_DEVICE_ATTRIBUTE_LIST(OPARA__CUDA_ENUM_ITEM) } opara_CUdevice_attribute;

#define OPARA_CU_FUNCTION_ATTRIBUTE_LIST(X) \
    X(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 0) \
    X(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, 1) \
    X(CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES, 2) \
    X(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, 3) \
    X(CU_FUNC_ATTRIBUTE_NUM_REGS, 4) \
    X(CU_FUNC_ATTRIBUTE_PTX_VERSION, 5) \
    X(CU_FUNC_ATTRIBUTE_BINARY_VERSION, 6) \
    X(CU_FUNC_ATTRIBUTE_CACHE_MODE_CA, 7) \
    X(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 8) \
    X(CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 9)
typedef enum opara_CUfunction_attribute_enum { OPARA_CU_FUNCTION_ATTRIBUTE_LIST(OPARA__CUDA_ENUM_ITEM) } opara_CUfunction_attribute;

#define OPARA_CU_JIT_OPTION_LIST(X) \
    X(CU_JIT_MAX_REGISTERS, 0) \
    X(CU_JIT_THREADS_PER_BLOCK, 1) \
    X(CU_JIT_WALL_TIME, 2) \
    X(CU_JIT_INFO_LOG_BUFFER, 3) \
    X(CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, 4) \
    X(CU_JIT_ERROR_LOG_BUFFER, 5) \
    X(CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, 6) \
    X(CU_JIT_OPTIMIZATION_LEVEL, 7) \
    X(CU_JIT_TARGET_FROM_CUCONTEXT, 8) \
    X(CU_JIT_TARGET, 9) \
    X(CU_JIT_FALLBACK_STRATEGY, 10) \
    X(CU_JIT_GENERATE_DEBUG_INFO, 11) \
    X(CU_JIT_LOG_VERBOSE, 12) \
    X(CU_JIT_GENERATE_LINE_INFO, 13) \
    X(CU_JIT_CACHE_MODE, 14)
typedef enum opara_CUjit_option_enum { OPARA_CU_JIT_OPTION_LIST(OPARA__CUDA_ENUM_ITEM) } opara_CUjit_option;

#define OPARA_CU_STREAM_CAPTURE_MODE_LIST(X) \
    X(CU_STREAM_CAPTURE_MODE_GLOBAL, 0) \
    X(CU_STREAM_CAPTURE_MODE_THREAD_LOCAL, 1) \
    X(CU_STREAM_CAPTURE_MODE_RELAXED, 2)
typedef enum opara_CUstreamCaptureMode_enum { OPARA_CU_STREAM_CAPTURE_MODE_LIST(OPARA__CUDA_ENUM_ITEM) } opara_CUstreamCaptureMode;

#define OPARA_CU_STREAM_CAPTURE_STATUS_LIST(X) \
    X(CU_STREAM_CAPTURE_STATUS_NONE, 0) \
    X(CU_STREAM_CAPTURE_STATUS_ACTIVE, 1) \
    X(CU_STREAM_CAPTURE_STATUS_INVALIDATED, 2)
typedef enum opara_CUstreamCaptureStatus_enum { OPARA_CU_STREAM_CAPTURE_STATUS_LIST(OPARA__CUDA_ENUM_ITEM) } opara_CUstreamCaptureStatus;

#define OPARA_CU_GRAPH_NODE_TYPE_LIST(X) \
    X(CU_GRAPH_NODE_TYPE_KERNEL, 0) \
    X(CU_GRAPH_NODE_TYPE_MEMCPY, 1) \
    X(CU_GRAPH_NODE_TYPE_MEMSET, 2) \
    X(CU_GRAPH_NODE_TYPE_HOST, 3) \
    X(CU_GRAPH_NODE_TYPE_GRAPH, 4) \
    X(CU_GRAPH_NODE_TYPE_EMPTY, 5) \
    X(CU_GRAPH_NODE_TYPE_WAIT_EVENT, 6) \
    X(CU_GRAPH_NODE_TYPE_EVENT_RECORD, 7) \
    X(CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL, 8) \
    X(CU_GRAPH_NODE_TYPE_EXT_SEMAS_WAIT, 9) \
    X(CU_GRAPH_NODE_TYPE_MEM_ALLOC, 10) \
    X(CU_GRAPH_NODE_TYPE_MEM_FREE, 11) \
    X(CU_GRAPH_NODE_TYPE_BATCH_MEM_OP, 12) \
    X(CU_GRAPH_NODE_TYPE_CONDITIONAL, 13)
typedef enum opara_CUgraphNodeType_enum { OPARA_CU_GRAPH_NODE_TYPE_LIST(OPARA__CUDA_ENUM_ITEM) } opara_CUgraphNodeType;

#define OPARA_CU_GRAPH_EXEC_UPDATE_RESULT_LIST(X) \
    X(CU_GRAPH_EXEC_UPDATE_SUCCESS, 0) \
    X(CU_GRAPH_EXEC_UPDATE_ERROR, 1) \
    X(CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED, 2) \
    X(CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED, 3) \
    X(CU_GRAPH_EXEC_UPDATE_ERROR_FUNCTION_CHANGED, 4) \
    X(CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED, 5) \
    X(CU_GRAPH_EXEC_UPDATE_ERROR_NOT_SUPPORTED, 6) \
    X(CU_GRAPH_EXEC_UPDATE_ERROR_UNSUPPORTED_FUNCTION_CHANGE, 7) \
    X(CU_GRAPH_EXEC_UPDATE_ERROR_ATTRIBUTES_CHANGED, 8)
typedef enum opara_CUgraphExecUpdateResult_enum { OPARA_CU_GRAPH_EXEC_UPDATE_RESULT_LIST(OPARA__CUDA_ENUM_ITEM) } opara_CUgraphExecUpdateResult;

#define OPARA_CU_GRAPH_DEPENDENCY_TYPE_LIST(X) \
    X(CU_GRAPH_DEPENDENCY_TYPE_DEFAULT, 0) \
    X(CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC, 1)
typedef enum opara_CUgraphDependencyType_enum { OPARA_CU_GRAPH_DEPENDENCY_TYPE_LIST(OPARA__CUDA_ENUM_ITEM) } opara_CUgraphDependencyType;

#define OPARA_CU_GRAPH_INSTANTIATE_FLAGS_LIST(X) \
    X(CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH, 1) \
    X(CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD, 2) \
    X(CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH, 4) \
    X(CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY, 8)
typedef enum opara_CUgraphInstantiate_flags_enum { OPARA_CU_GRAPH_INSTANTIATE_FLAGS_LIST(OPARA__CUDA_ENUM_ITEM) } opara_CUgraphInstantiate_flags;

#define OPARA_CU_PROC_ADDRESS_FLAGS_LIST(X) \
    X(CU_GET_PROC_ADDRESS_DEFAULT, 0) \
    X(CU_GET_PROC_ADDRESS_LEGACY_STREAM, 1) \
    X(CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, 2)
typedef enum opara_CUdriverProcAddress_flags_enum { OPARA_CU_PROC_ADDRESS_FLAGS_LIST(OPARA__CUDA_ENUM_ITEM) } opara_CUdriverProcAddress_flags;

#define OPARA_CU_PROC_ADDRESS_RESULT_LIST(X) \
    X(CU_GET_PROC_ADDRESS_SUCCESS, 0) \
    X(CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND, 1) \
    X(CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT, 2)
typedef enum opara_CUdriverProcAddressQueryResult_enum { OPARA_CU_PROC_ADDRESS_RESULT_LIST(OPARA__CUDA_ENUM_ITEM) } opara_CUdriverProcAddressQueryResult;

#define OPARA_CU_EVENT_FLAGS_LIST(X) \
    X(CU_EVENT_DEFAULT, 0) \
    X(CU_EVENT_BLOCKING_SYNC, 1) \
    X(CU_EVENT_DISABLE_TIMING, 2) \
    X(CU_EVENT_INTERPROCESS, 4)
typedef enum opara_CUevent_flags_enum { OPARA_CU_EVENT_FLAGS_LIST(OPARA__CUDA_ENUM_ITEM) } opara_CUevent_flags;

#define OPARA_CU_EVENT_WAIT_FLAGS_LIST(X) \
    X(CU_EVENT_WAIT_DEFAULT, 0) \
    X(CU_EVENT_WAIT_EXTERNAL, 1)
typedef enum opara_CUevent_wait_flags_enum { OPARA_CU_EVENT_WAIT_FLAGS_LIST(OPARA__CUDA_ENUM_ITEM) } opara_CUevent_wait_flags;

#define OPARA_CU_STREAM_FLAGS_LIST(X) \
    X(CU_STREAM_DEFAULT, 0) \
    X(CU_STREAM_NON_BLOCKING, 1)
typedef enum opara_CUstream_flags_enum { OPARA_CU_STREAM_FLAGS_LIST(OPARA__CUDA_ENUM_ITEM) } opara_CUstream_flags;

/* cuda.h CUgraphEdgeData (8 bytes): from_port 0 = full completion of the upstream node. */
typedef struct opara_CUgraphEdgeData_st {
    unsigned char from_port;
    unsigned char to_port;
    unsigned char type; /* opara_CUgraphDependencyType */
    unsigned char reserved[5];
} opara_CUgraphEdgeData;

typedef struct opara_CUgraphExecUpdateResultInfo_st {
    opara_CUgraphExecUpdateResult result;
    opara_CUgraphNode errorNode;
    opara_CUgraphNode errorFromNode;
} opara_CUgraphExecUpdateResultInfo;

/* CUDA_KERNEL_NODE_PARAMS, which cuda.h 12.0+ defines as the _v2 layout. */
typedef struct opara_CUDA_KERNEL_NODE_PARAMS_v2_st {
    opara_CUfunction func;
    unsigned int gridDimX, gridDimY, gridDimZ;
    unsigned int blockDimX, blockDimY, blockDimZ;
    unsigned int sharedMemBytes;
    void** kernelParams;
    void** extra;
    opara_CUkernel kern; /* used only when func is NULL */
    opara_CUcontext ctx; /* NULL = current context; ignored when func is set */
} opara_CUDA_KERNEL_NODE_PARAMS_v2;
typedef opara_CUDA_KERNEL_NODE_PARAMS_v2 opara_CUDA_KERNEL_NODE_PARAMS;

/* ============================================================================================== */
/* NVRTC types                                                                                    */
/* ============================================================================================== */

#define OPARA_NVRTC_RESULT_LIST(X) \
    X(NVRTC_SUCCESS, 0) \
    X(NVRTC_ERROR_OUT_OF_MEMORY, 1) \
    X(NVRTC_ERROR_PROGRAM_CREATION_FAILURE, 2) \
    X(NVRTC_ERROR_INVALID_INPUT, 3) \
    X(NVRTC_ERROR_INVALID_PROGRAM, 4) \
    X(NVRTC_ERROR_INVALID_OPTION, 5) \
    X(NVRTC_ERROR_COMPILATION, 6) \
    X(NVRTC_ERROR_BUILTIN_OPERATION_FAILURE, 7) \
    X(NVRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION, 8) \
    X(NVRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION, 9) \
    X(NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID, 10) \
    X(NVRTC_ERROR_INTERNAL_ERROR, 11) \
    X(NVRTC_ERROR_TIME_FILE_WRITE_FAILED, 12) \
    X(NVRTC_ERROR_NO_PCH_CREATE_ATTEMPTED, 13) \
    X(NVRTC_ERROR_PCH_CREATE_HEAP_EXHAUSTED, 14) \
    X(NVRTC_ERROR_PCH_CREATE, 15) \
    X(NVRTC_ERROR_CANCELLED, 16) \
    X(NVRTC_ERROR_TIME_TRACE_FILE_WRITE_FAILED, 17)
typedef enum opara_nvrtcResult_enum { OPARA_NVRTC_RESULT_LIST(OPARA__CUDA_ENUM_ITEM) } opara_nvrtcResult;
typedef struct opara__nvrtcProgram* opara_nvrtcProgram;

/* ============================================================================================== */
/* cuBLAS types (v2 API)                                                                          */
/* ============================================================================================== */

typedef struct opara_cublasContext* opara_cublasHandle_t;

#define OPARA_CUBLAS_STATUS_LIST(X) \
    X(CUBLAS_STATUS_SUCCESS, 0) \
    X(CUBLAS_STATUS_NOT_INITIALIZED, 1) \
    X(CUBLAS_STATUS_ALLOC_FAILED, 3) \
    X(CUBLAS_STATUS_INVALID_VALUE, 7) \
    X(CUBLAS_STATUS_ARCH_MISMATCH, 8) \
    X(CUBLAS_STATUS_MAPPING_ERROR, 11) \
    X(CUBLAS_STATUS_EXECUTION_FAILED, 13) \
    X(CUBLAS_STATUS_INTERNAL_ERROR, 14) \
    X(CUBLAS_STATUS_NOT_SUPPORTED, 15) \
    X(CUBLAS_STATUS_LICENSE_ERROR, 16)
typedef enum opara_cublasStatus_enum { OPARA_CUBLAS_STATUS_LIST(OPARA__CUDA_ENUM_ITEM) } opara_cublasStatus_t;

#define OPARA_CUBLAS_OPERATION_LIST(X) \
    X(CUBLAS_OP_N, 0) \
    X(CUBLAS_OP_T, 1) \
    X(CUBLAS_OP_C, 2)
typedef enum opara_cublasOperation_enum { OPARA_CUBLAS_OPERATION_LIST(OPARA__CUDA_ENUM_ITEM) } opara_cublasOperation_t;

#define OPARA_CUBLAS_MATH_LIST(X) \
    X(CUBLAS_DEFAULT_MATH, 0) \
    X(CUBLAS_TENSOR_OP_MATH, 1) \
    X(CUBLAS_PEDANTIC_MATH, 2) \
    X(CUBLAS_TF32_TENSOR_OP_MATH, 3) \
    X(CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION, 16)
typedef enum opara_cublasMath_enum { OPARA_CUBLAS_MATH_LIST(OPARA__CUDA_ENUM_ITEM) } opara_cublasMath_t;

#define OPARA_CUBLAS_COMPUTE_TYPE_LIST(X) \
    X(CUBLAS_COMPUTE_16F, 64) \
    X(CUBLAS_COMPUTE_16F_PEDANTIC, 65) \
    X(CUBLAS_COMPUTE_32F, 68) \
    X(CUBLAS_COMPUTE_32F_PEDANTIC, 69) \
    X(CUBLAS_COMPUTE_64F, 70) \
    X(CUBLAS_COMPUTE_64F_PEDANTIC, 71) \
    X(CUBLAS_COMPUTE_32I, 72) \
    X(CUBLAS_COMPUTE_32I_PEDANTIC, 73) \
    X(CUBLAS_COMPUTE_32F_FAST_16F, 74) \
    X(CUBLAS_COMPUTE_32F_FAST_16BF, 75) \
    X(CUBLAS_COMPUTE_32F_FAST_TF32, 77)
typedef enum opara_cublasComputeType_enum { OPARA_CUBLAS_COMPUTE_TYPE_LIST(OPARA__CUDA_ENUM_ITEM) } opara_cublasComputeType_t;

#define OPARA_CUBLAS_GEMM_ALGO_LIST(X) \
    X(CUBLAS_GEMM_DEFAULT, -1) \
    X(CUBLAS_GEMM_DEFAULT_TENSOR_OP, 99)
typedef enum opara_cublasGemmAlgo_enum { OPARA_CUBLAS_GEMM_ALGO_LIST(OPARA__CUDA_ENUM_ITEM) } opara_cublasGemmAlgo_t;

/* library_types.h cudaDataType (cublasGemmEx operand types). */
#define OPARA_CUDA_DATA_TYPE_LIST(X) \
    X(CUDA_R_32F, 0) \
    X(CUDA_R_64F, 1) \
    X(CUDA_R_16F, 2) \
    X(CUDA_R_8I, 3) \
    X(CUDA_C_32F, 4) \
    X(CUDA_C_64F, 5) \
    X(CUDA_C_16F, 6) \
    X(CUDA_C_8I, 7) \
    X(CUDA_R_8U, 8) \
    X(CUDA_C_8U, 9) \
    X(CUDA_R_32I, 10) \
    X(CUDA_C_32I, 11) \
    X(CUDA_R_16BF, 14) \
    X(CUDA_C_16BF, 15) \
    X(CUDA_R_8F_E4M3, 28) \
    X(CUDA_R_8F_E5M2, 29)
typedef enum opara_cudaDataType_t { OPARA_CUDA_DATA_TYPE_LIST(OPARA__CUDA_ENUM_ITEM) } opara_cudaDataType;

/* library_types.h libraryPropertyType (cublasGetProperty). */
#define OPARA_LIBRARY_PROPERTY_TYPE_LIST(X) \
    X(MAJOR_VERSION, 0) \
    X(MINOR_VERSION, 1) \
    X(PATCH_LEVEL, 2)
typedef enum opara_libraryPropertyType_t { OPARA_LIBRARY_PROPERTY_TYPE_LIST(OPARA__CUDA_ENUM_ITEM) } opara_libraryPropertyType;

/* ============================================================================================== */
/* cuDNN types (the legacy imperative API, same prototypes in cuDNN 8 and 9)                      */
/* ============================================================================================== */

typedef struct opara_cudnnContext* opara_cudnnHandle_t;
typedef struct opara_cudnnTensorStruct* opara_cudnnTensorDescriptor_t;
typedef struct opara_cudnnFilterStruct* opara_cudnnFilterDescriptor_t;
typedef struct opara_cudnnConvolutionStruct* opara_cudnnConvolutionDescriptor_t;
typedef struct opara_cudnnActivationStruct* opara_cudnnActivationDescriptor_t;

/* cuDNN 9 status codes (category * 1000 + detail). cuDNN 8 used 0..14 instead;
   opara_cudnn_status_name() names both, their ranges do not overlap. */
#define OPARA_CUDNN_STATUS_LIST(X) \
    X(CUDNN_STATUS_SUCCESS, 0) \
    X(CUDNN_STATUS_NOT_INITIALIZED, 1001) \
    X(CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH, 1002) \
    X(CUDNN_STATUS_SERIALIZATION_VERSION_MISMATCH, 1003) \
    X(CUDNN_STATUS_DEPRECATED, 1004) \
    X(CUDNN_STATUS_LICENSE_ERROR, 1005) \
    X(CUDNN_STATUS_RUNTIME_IN_PROGRESS, 1006) \
    X(CUDNN_STATUS_RUNTIME_FP_OVERFLOW, 1007) \
    X(CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED, 1008) \
    X(CUDNN_STATUS_BAD_PARAM, 2000) \
    X(CUDNN_STATUS_INVALID_VALUE, 2001) \
    X(CUDNN_STATUS_BAD_PARAM_NULL_POINTER, 2002) \
    X(CUDNN_STATUS_BAD_PARAM_MISALIGNED_POINTER, 2003) \
    X(CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED, 2004) \
    X(CUDNN_STATUS_BAD_PARAM_OUT_OF_BOUND, 2005) \
    X(CUDNN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT, 2006) \
    X(CUDNN_STATUS_BAD_PARAM_STREAM_MISMATCH, 2007) \
    X(CUDNN_STATUS_BAD_PARAM_SHAPE_MISMATCH, 2008) \
    X(CUDNN_STATUS_BAD_PARAM_DUPLICATED_ENTRIES, 2009) \
    X(CUDNN_STATUS_BAD_PARAM_ATTRIBUTE_TYPE, 2010) \
    X(CUDNN_STATUS_BAD_PARAM_CUDA_GRAPH_MISMATCH, 2011) \
    X(CUDNN_STATUS_BAD_PARAM_DESCRIPTOR_TYPE, 2012) \
    X(CUDNN_STATUS_NOT_SUPPORTED, 3000) \
    X(CUDNN_STATUS_NOT_SUPPORTED_GRAPH_PATTERN, 3001) \
    X(CUDNN_STATUS_NOT_SUPPORTED_SHAPE, 3002) \
    X(CUDNN_STATUS_NOT_SUPPORTED_DATA_TYPE, 3003) \
    X(CUDNN_STATUS_NOT_SUPPORTED_LAYOUT, 3004) \
    X(CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDA_DRIVER, 3005) \
    X(CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDART, 3006) \
    X(CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH, 3007) \
    X(CUDNN_STATUS_NOT_SUPPORTED_RUNTIME_PREREQUISITE_MISSING, 3008) \
    X(CUDNN_STATUS_NOT_SUPPORTED_SUBLIBRARY_UNAVAILABLE, 3009) \
    X(CUDNN_STATUS_NOT_SUPPORTED_SHARED_MEMORY_INSUFFICIENT, 3010) \
    X(CUDNN_STATUS_NOT_SUPPORTED_PADDING, 3011) \
    X(CUDNN_STATUS_NOT_SUPPORTED_BAD_LAUNCH_PARAM, 3012) \
    X(CUDNN_STATUS_NOT_SUPPORTED_CUDA_GRAPH_NATIVE_API, 3013) \
    X(CUDNN_STATUS_INTERNAL_ERROR, 4000) \
    X(CUDNN_STATUS_INTERNAL_ERROR_COMPILATION_FAILED, 4001) \
    X(CUDNN_STATUS_INTERNAL_ERROR_UNEXPECTED_VALUE, 4002) \
    X(CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED, 4003) \
    X(CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED, 4004) \
    X(CUDNN_STATUS_INTERNAL_ERROR_BAD_LAUNCH_PARAM, 4005) \
    X(CUDNN_STATUS_INTERNAL_ERROR_TEXTURE_CREATION_FAILED, 4006) \
    X(CUDNN_STATUS_EXECUTION_FAILED, 5000) \
    X(CUDNN_STATUS_EXECUTION_FAILED_CUDA_DRIVER, 5001) \
    X(CUDNN_STATUS_EXECUTION_FAILED_CUBLAS, 5002) \
    X(CUDNN_STATUS_EXECUTION_FAILED_CUDART, 5003) \
    X(CUDNN_STATUS_EXECUTION_FAILED_CURAND, 5004)
typedef enum opara_cudnnStatus_enum { OPARA_CUDNN_STATUS_LIST(OPARA__CUDA_ENUM_ITEM) } opara_cudnnStatus_t;

#define OPARA_CUDNN_DATA_TYPE_LIST(X) \
    X(CUDNN_DATA_FLOAT, 0) \
    X(CUDNN_DATA_DOUBLE, 1) \
    X(CUDNN_DATA_HALF, 2) \
    X(CUDNN_DATA_INT8, 3) \
    X(CUDNN_DATA_INT32, 4) \
    X(CUDNN_DATA_UINT8, 6) \
    X(CUDNN_DATA_BFLOAT16, 9) \
    X(CUDNN_DATA_INT64, 10)
typedef enum opara_cudnnDataType_enum { OPARA_CUDNN_DATA_TYPE_LIST(OPARA__CUDA_ENUM_ITEM) } opara_cudnnDataType_t;

#define OPARA_CUDNN_MATH_TYPE_LIST(X) \
    X(CUDNN_DEFAULT_MATH, 0) \
    X(CUDNN_TENSOR_OP_MATH, 1) \
    X(CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION, 2) \
    X(CUDNN_FMA_MATH, 3)
typedef enum opara_cudnnMathType_enum { OPARA_CUDNN_MATH_TYPE_LIST(OPARA__CUDA_ENUM_ITEM) } opara_cudnnMathType_t;

#define OPARA_CUDNN_NAN_PROPAGATION_LIST(X) \
    X(CUDNN_NOT_PROPAGATE_NAN, 0) \
    X(CUDNN_PROPAGATE_NAN, 1)
typedef enum opara_cudnnNanPropagation_enum { OPARA_CUDNN_NAN_PROPAGATION_LIST(OPARA__CUDA_ENUM_ITEM) } opara_cudnnNanPropagation_t;

#define OPARA_CUDNN_TENSOR_FORMAT_LIST(X) \
    X(CUDNN_TENSOR_NCHW, 0) \
    X(CUDNN_TENSOR_NHWC, 1) \
    X(CUDNN_TENSOR_NCHW_VECT_C, 2)
typedef enum opara_cudnnTensorFormat_enum { OPARA_CUDNN_TENSOR_FORMAT_LIST(OPARA__CUDA_ENUM_ITEM) } opara_cudnnTensorFormat_t;

#define OPARA_CUDNN_ACTIVATION_MODE_LIST(X) \
    X(CUDNN_ACTIVATION_SIGMOID, 0) \
    X(CUDNN_ACTIVATION_RELU, 1) \
    X(CUDNN_ACTIVATION_TANH, 2) \
    X(CUDNN_ACTIVATION_CLIPPED_RELU, 3) \
    X(CUDNN_ACTIVATION_ELU, 4) \
    X(CUDNN_ACTIVATION_IDENTITY, 5) \
    X(CUDNN_ACTIVATION_SWISH, 6)
typedef enum opara_cudnnActivationMode_enum { OPARA_CUDNN_ACTIVATION_MODE_LIST(OPARA__CUDA_ENUM_ITEM) } opara_cudnnActivationMode_t;

#define OPARA_CUDNN_CONVOLUTION_MODE_LIST(X) \
    X(CUDNN_CONVOLUTION, 0) \
    X(CUDNN_CROSS_CORRELATION, 1)
typedef enum opara_cudnnConvolutionMode_enum { OPARA_CUDNN_CONVOLUTION_MODE_LIST(OPARA__CUDA_ENUM_ITEM) } opara_cudnnConvolutionMode_t;

#define OPARA_CUDNN_CONVOLUTION_FWD_ALGO_LIST(X) \
    X(CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, 0) \
    X(CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, 1) \
    X(CUDNN_CONVOLUTION_FWD_ALGO_GEMM, 2) \
    X(CUDNN_CONVOLUTION_FWD_ALGO_DIRECT, 3) \
    X(CUDNN_CONVOLUTION_FWD_ALGO_FFT, 4) \
    X(CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING, 5) \
    X(CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD, 6) \
    X(CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED, 7) \
    X(CUDNN_CONVOLUTION_FWD_ALGO_COUNT, 8)
typedef enum opara_cudnnConvolutionFwdAlgo_enum { OPARA_CUDNN_CONVOLUTION_FWD_ALGO_LIST(OPARA__CUDA_ENUM_ITEM) } opara_cudnnConvolutionFwdAlgo_t;

#define OPARA_CUDNN_DETERMINISM_LIST(X) \
    X(CUDNN_NON_DETERMINISTIC, 0) \
    X(CUDNN_DETERMINISTIC, 1)
typedef enum opara_cudnnDeterminism_enum { OPARA_CUDNN_DETERMINISM_LIST(OPARA__CUDA_ENUM_ITEM) } opara_cudnnDeterminism_t;

typedef struct opara_cudnnConvolutionFwdAlgoPerfStruct {
    opara_cudnnConvolutionFwdAlgo_t algo;
    opara_cudnnStatus_t status;
    float time;    /* milliseconds */
    size_t memory; /* workspace bytes */
    opara_cudnnDeterminism_t determinism;
    opara_cudnnMathType_t mathType;
    int reserved[3];
} opara_cudnnConvolutionFwdAlgoPerf_t;

/* ============================================================================================== */
/* Function lists                                                                                 */
/* ============================================================================================== */

#define OPARA_CUDA_REQUIRED 1
#define OPARA_CUDA_OPTIONAL 0

/* X(return type, exported symbol = table member, (parameters), required, cuGetProcAddress name,
     CUDA version of the ABI to ask for, older symbol with the same prototype (none: no fallback),
     its version). The name and version pair is NVIDIA's cudaTypedefs.h PFN_<name>_v<version> of the
     same prototype (tests/cuda_headers_check.c verifies it). */
#define OPARA_CUDA_DRIVER_FUNCS(X) \
    X(opara_CUresult, cuGetErrorName, (opara_CUresult error, const char** pStr), OPARA_CUDA_REQUIRED, cuGetErrorName, 6000, none, 0) \
    X(opara_CUresult, cuGetErrorString, (opara_CUresult error, const char** pStr), OPARA_CUDA_REQUIRED, cuGetErrorString, 6000, none, 0) \
    X(opara_CUresult, cuInit, (unsigned int Flags), OPARA_CUDA_REQUIRED, cuInit, 2000, none, 0) \
    X(opara_CUresult, cuDriverGetVersion, (int* driverVersion), OPARA_CUDA_REQUIRED, cuDriverGetVersion, 2020, none, 0) \
    X(opara_CUresult, cuDeviceGet, (opara_CUdevice* device, int ordinal), OPARA_CUDA_REQUIRED, cuDeviceGet, 2000, none, 0) \
    X(opara_CUresult, cuDeviceGetCount, (int* count), OPARA_CUDA_REQUIRED, cuDeviceGetCount, 2000, none, 0) \
    X(opara_CUresult, cuDeviceGetName, (char* name, int len, opara_CUdevice dev), OPARA_CUDA_REQUIRED, cuDeviceGetName, 2000, none, 0) \
    X(opara_CUresult, cuDeviceGetAttribute, (int* pi, opara_CUdevice_attribute attrib, opara_CUdevice dev), OPARA_CUDA_REQUIRED, cuDeviceGetAttribute, 2000, none, 0) \
    X(opara_CUresult, cuDeviceTotalMem_v2, (size_t* bytes, opara_CUdevice dev), OPARA_CUDA_REQUIRED, cuDeviceTotalMem, 3020, none, 0) \
    X(opara_CUresult, cuDevicePrimaryCtxRetain, (opara_CUcontext* pctx, opara_CUdevice dev), OPARA_CUDA_REQUIRED, cuDevicePrimaryCtxRetain, 7000, none, 0) \
    X(opara_CUresult, cuDevicePrimaryCtxRelease_v2, (opara_CUdevice dev), OPARA_CUDA_REQUIRED, cuDevicePrimaryCtxRelease, 11000, none, 0) \
    X(opara_CUresult, cuCtxSetCurrent, (opara_CUcontext ctx), OPARA_CUDA_REQUIRED, cuCtxSetCurrent, 4000, none, 0) \
    X(opara_CUresult, cuCtxGetCurrent, (opara_CUcontext* pctx), OPARA_CUDA_REQUIRED, cuCtxGetCurrent, 4000, none, 0) \
    X(opara_CUresult, cuCtxSynchronize, (void), OPARA_CUDA_REQUIRED, cuCtxSynchronize, 2000, none, 0) \
    X(opara_CUresult, cuMemAlloc_v2, (opara_CUdeviceptr* dptr, size_t bytesize), OPARA_CUDA_REQUIRED, cuMemAlloc, 3020, none, 0) \
    X(opara_CUresult, cuMemFree_v2, (opara_CUdeviceptr dptr), OPARA_CUDA_REQUIRED, cuMemFree, 3020, none, 0) \
    X(opara_CUresult, cuMemAllocHost_v2, (void** pp, size_t bytesize), OPARA_CUDA_REQUIRED, cuMemAllocHost, 3020, none, 0) \
    X(opara_CUresult, cuMemFreeHost, (void* p), OPARA_CUDA_REQUIRED, cuMemFreeHost, 2000, none, 0) \
    X(opara_CUresult, cuMemcpyHtoD_v2, (opara_CUdeviceptr dstDevice, const void* srcHost, size_t ByteCount), OPARA_CUDA_REQUIRED, cuMemcpyHtoD, 3020, none, 0) \
    X(opara_CUresult, cuMemcpyDtoH_v2, (void* dstHost, opara_CUdeviceptr srcDevice, size_t ByteCount), OPARA_CUDA_REQUIRED, cuMemcpyDtoH, 3020, none, 0) \
    X(opara_CUresult, cuMemcpyDtoD_v2, (opara_CUdeviceptr dstDevice, opara_CUdeviceptr srcDevice, size_t ByteCount), OPARA_CUDA_REQUIRED, cuMemcpyDtoD, 3020, none, 0) \
    X(opara_CUresult, cuMemcpyHtoDAsync_v2, (opara_CUdeviceptr dstDevice, const void* srcHost, size_t ByteCount, opara_CUstream hStream), OPARA_CUDA_REQUIRED, cuMemcpyHtoDAsync, 3020, none, 0) \
    X(opara_CUresult, cuMemcpyDtoHAsync_v2, (void* dstHost, opara_CUdeviceptr srcDevice, size_t ByteCount, opara_CUstream hStream), OPARA_CUDA_REQUIRED, cuMemcpyDtoHAsync, 3020, none, 0) \
    X(opara_CUresult, cuMemcpyDtoDAsync_v2, (opara_CUdeviceptr dstDevice, opara_CUdeviceptr srcDevice, size_t ByteCount, opara_CUstream hStream), OPARA_CUDA_REQUIRED, cuMemcpyDtoDAsync, 3020, none, 0) \
    X(opara_CUresult, cuMemsetD8_v2, (opara_CUdeviceptr dstDevice, unsigned char uc, size_t N), OPARA_CUDA_REQUIRED, cuMemsetD8, 3020, none, 0) \
    X(opara_CUresult, cuMemsetD32Async, (opara_CUdeviceptr dstDevice, unsigned int ui, size_t N, opara_CUstream hStream), OPARA_CUDA_REQUIRED, cuMemsetD32Async, 3020, none, 0) \
    X(opara_CUresult, cuMemGetInfo_v2, (size_t* freeBytes, size_t* totalBytes), OPARA_CUDA_REQUIRED, cuMemGetInfo, 3020, none, 0) \
    X(opara_CUresult, cuModuleLoadData, (opara_CUmodule* module, const void* image), OPARA_CUDA_REQUIRED, cuModuleLoadData, 2000, none, 0) \
    X(opara_CUresult, cuModuleLoadDataEx, (opara_CUmodule* module, const void* image, unsigned int numOptions, opara_CUjit_option* options, void** optionValues), OPARA_CUDA_REQUIRED, cuModuleLoadDataEx, 2010, none, 0) \
    X(opara_CUresult, cuModuleUnload, (opara_CUmodule hmod), OPARA_CUDA_REQUIRED, cuModuleUnload, 2000, none, 0) \
    X(opara_CUresult, cuModuleGetFunction, (opara_CUfunction* hfunc, opara_CUmodule hmod, const char* name), OPARA_CUDA_REQUIRED, cuModuleGetFunction, 2000, none, 0) \
    X(opara_CUresult, cuFuncGetAttribute, (int* pi, opara_CUfunction_attribute attrib, opara_CUfunction hfunc), OPARA_CUDA_REQUIRED, cuFuncGetAttribute, 2020, none, 0) \
    X(opara_CUresult, cuLaunchKernel, (opara_CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ, unsigned int sharedMemBytes, opara_CUstream hStream, void** kernelParams, void** extra), OPARA_CUDA_REQUIRED, cuLaunchKernel, 4000, none, 0) \
    X(opara_CUresult, cuStreamCreate, (opara_CUstream* phStream, unsigned int Flags), OPARA_CUDA_REQUIRED, cuStreamCreate, 2000, none, 0) \
    X(opara_CUresult, cuStreamCreateWithPriority, (opara_CUstream* phStream, unsigned int flags, int priority), OPARA_CUDA_REQUIRED, cuStreamCreateWithPriority, 5050, none, 0) \
    X(opara_CUresult, cuStreamDestroy_v2, (opara_CUstream hStream), OPARA_CUDA_REQUIRED, cuStreamDestroy, 4000, none, 0) \
    X(opara_CUresult, cuStreamSynchronize, (opara_CUstream hStream), OPARA_CUDA_REQUIRED, cuStreamSynchronize, 2000, none, 0) \
    X(opara_CUresult, cuStreamQuery, (opara_CUstream hStream), OPARA_CUDA_REQUIRED, cuStreamQuery, 2000, none, 0) \
    X(opara_CUresult, cuStreamWaitEvent, (opara_CUstream hStream, opara_CUevent hEvent, unsigned int Flags), OPARA_CUDA_REQUIRED, cuStreamWaitEvent, 3020, none, 0) \
    X(opara_CUresult, cuEventCreate, (opara_CUevent* phEvent, unsigned int Flags), OPARA_CUDA_REQUIRED, cuEventCreate, 2000, none, 0) \
    X(opara_CUresult, cuEventDestroy_v2, (opara_CUevent hEvent), OPARA_CUDA_REQUIRED, cuEventDestroy, 4000, none, 0) \
    X(opara_CUresult, cuEventRecord, (opara_CUevent hEvent, opara_CUstream hStream), OPARA_CUDA_REQUIRED, cuEventRecord, 2000, none, 0) \
    X(opara_CUresult, cuEventSynchronize, (opara_CUevent hEvent), OPARA_CUDA_REQUIRED, cuEventSynchronize, 2000, none, 0) \
    X(opara_CUresult, cuEventQuery, (opara_CUevent hEvent), OPARA_CUDA_REQUIRED, cuEventQuery, 2000, none, 0) \
    X(opara_CUresult, cuEventElapsedTime_v2, (float* pMilliseconds, opara_CUevent hStart, opara_CUevent hEnd), OPARA_CUDA_REQUIRED, cuEventElapsedTime, 12080, cuEventElapsedTime, 2000) \
    X(opara_CUresult, cuStreamBeginCapture_v2, (opara_CUstream hStream, opara_CUstreamCaptureMode mode), OPARA_CUDA_REQUIRED, cuStreamBeginCapture, 10010, none, 0) \
    X(opara_CUresult, cuStreamEndCapture, (opara_CUstream hStream, opara_CUgraph* phGraph), OPARA_CUDA_REQUIRED, cuStreamEndCapture, 10000, none, 0) \
    X(opara_CUresult, cuStreamIsCapturing, (opara_CUstream hStream, opara_CUstreamCaptureStatus* captureStatus), OPARA_CUDA_REQUIRED, cuStreamIsCapturing, 10000, none, 0) \
    X(opara_CUresult, cuStreamGetCaptureInfo_v3, (opara_CUstream hStream, opara_CUstreamCaptureStatus* captureStatus_out, opara_cuuint64_t* id_out, opara_CUgraph* graph_out, const opara_CUgraphNode** dependencies_out, const opara_CUgraphEdgeData** edgeData_out, size_t* numDependencies_out), OPARA_CUDA_OPTIONAL, cuStreamGetCaptureInfo, 12030, none, 0) \
    X(opara_CUresult, cuGraphInstantiateWithFlags, (opara_CUgraphExec* phGraphExec, opara_CUgraph hGraph, unsigned long long flags), OPARA_CUDA_REQUIRED, cuGraphInstantiateWithFlags, 11040, none, 0) \
    X(opara_CUresult, cuGraphLaunch, (opara_CUgraphExec hGraphExec, opara_CUstream hStream), OPARA_CUDA_REQUIRED, cuGraphLaunch, 10000, none, 0) \
    X(opara_CUresult, cuGraphExecUpdate_v2, (opara_CUgraphExec hGraphExec, opara_CUgraph hGraph, opara_CUgraphExecUpdateResultInfo* resultInfo), OPARA_CUDA_REQUIRED, cuGraphExecUpdate, 12000, none, 0) \
    X(opara_CUresult, cuGraphExecDestroy, (opara_CUgraphExec hGraphExec), OPARA_CUDA_REQUIRED, cuGraphExecDestroy, 10000, none, 0) \
    X(opara_CUresult, cuGraphDestroy, (opara_CUgraph hGraph), OPARA_CUDA_REQUIRED, cuGraphDestroy, 10000, none, 0) \
    X(opara_CUresult, cuGraphGetNodes, (opara_CUgraph hGraph, opara_CUgraphNode* nodes, size_t* numNodes), OPARA_CUDA_REQUIRED, cuGraphGetNodes, 10000, none, 0) \
    X(opara_CUresult, cuGraphGetEdges_v2, (opara_CUgraph hGraph, opara_CUgraphNode* from, opara_CUgraphNode* to, opara_CUgraphEdgeData* edgeData, size_t* numEdges), OPARA_CUDA_OPTIONAL, cuGraphGetEdges, 12030, none, 0) \
    X(opara_CUresult, cuGraphNodeGetType, (opara_CUgraphNode hNode, opara_CUgraphNodeType* type), OPARA_CUDA_REQUIRED, cuGraphNodeGetType, 10000, none, 0) \
    X(opara_CUresult, cuGraphKernelNodeGetParams_v2, (opara_CUgraphNode hNode, opara_CUDA_KERNEL_NODE_PARAMS* nodeParams), OPARA_CUDA_REQUIRED, cuGraphKernelNodeGetParams, 12000, none, 0) \
    X(opara_CUresult, cuGetProcAddress_v2, (const char* symbol, void** pfn, int cudaVersion, opara_cuuint64_t flags, opara_CUdriverProcAddressQueryResult* symbolStatus), OPARA_CUDA_OPTIONAL, cuGetProcAddress, 12000, none, 0)

/* X(return type, exported symbol = table member, (parameters), required) */
#define OPARA_CUDA_NVRTC_FUNCS(X) \
    X(const char*, nvrtcGetErrorString, (opara_nvrtcResult result), OPARA_CUDA_REQUIRED) \
    X(opara_nvrtcResult, nvrtcVersion, (int* major, int* minor), OPARA_CUDA_REQUIRED) \
    X(opara_nvrtcResult, nvrtcGetNumSupportedArchs, (int* numArchs), OPARA_CUDA_REQUIRED) \
    X(opara_nvrtcResult, nvrtcGetSupportedArchs, (int* supportedArchs), OPARA_CUDA_REQUIRED) \
    X(opara_nvrtcResult, nvrtcCreateProgram, (opara_nvrtcProgram* prog, const char* src, const char* name, int numHeaders, const char* const* headers, const char* const* includeNames), OPARA_CUDA_REQUIRED) \
    X(opara_nvrtcResult, nvrtcDestroyProgram, (opara_nvrtcProgram* prog), OPARA_CUDA_REQUIRED) \
    X(opara_nvrtcResult, nvrtcCompileProgram, (opara_nvrtcProgram prog, int numOptions, const char* const* options), OPARA_CUDA_REQUIRED) \
    X(opara_nvrtcResult, nvrtcGetPTXSize, (opara_nvrtcProgram prog, size_t* ptxSizeRet), OPARA_CUDA_REQUIRED) \
    X(opara_nvrtcResult, nvrtcGetPTX, (opara_nvrtcProgram prog, char* ptx), OPARA_CUDA_REQUIRED) \
    X(opara_nvrtcResult, nvrtcGetCUBINSize, (opara_nvrtcProgram prog, size_t* cubinSizeRet), OPARA_CUDA_REQUIRED) \
    X(opara_nvrtcResult, nvrtcGetCUBIN, (opara_nvrtcProgram prog, char* cubin), OPARA_CUDA_REQUIRED) \
    X(opara_nvrtcResult, nvrtcGetProgramLogSize, (opara_nvrtcProgram prog, size_t* logSizeRet), OPARA_CUDA_REQUIRED) \
    X(opara_nvrtcResult, nvrtcGetProgramLog, (opara_nvrtcProgram prog, char* log), OPARA_CUDA_REQUIRED)

#define OPARA_CUDA_CUBLAS_FUNCS(X) \
    X(opara_cublasStatus_t, cublasCreate_v2, (opara_cublasHandle_t* handle), OPARA_CUDA_REQUIRED) \
    X(opara_cublasStatus_t, cublasDestroy_v2, (opara_cublasHandle_t handle), OPARA_CUDA_REQUIRED) \
    X(opara_cublasStatus_t, cublasGetVersion_v2, (opara_cublasHandle_t handle, int* version), OPARA_CUDA_REQUIRED) \
    X(opara_cublasStatus_t, cublasGetProperty, (opara_libraryPropertyType type, int* value), OPARA_CUDA_REQUIRED) \
    X(opara_cublasStatus_t, cublasSetStream_v2, (opara_cublasHandle_t handle, opara_CUstream streamId), OPARA_CUDA_REQUIRED) \
    X(opara_cublasStatus_t, cublasSetWorkspace_v2, (opara_cublasHandle_t handle, void* workspace, size_t workspaceSizeInBytes), OPARA_CUDA_REQUIRED) \
    X(opara_cublasStatus_t, cublasSetMathMode, (opara_cublasHandle_t handle, opara_cublasMath_t mode), OPARA_CUDA_REQUIRED) \
    X(opara_cublasStatus_t, cublasSgemm_v2, (opara_cublasHandle_t handle, opara_cublasOperation_t transa, opara_cublasOperation_t transb, int m, int n, int k, const float* alpha, const float* A, int lda, const float* B, int ldb, const float* beta, float* C, int ldc), OPARA_CUDA_REQUIRED) \
    X(opara_cublasStatus_t, cublasSgemmStridedBatched, (opara_cublasHandle_t handle, opara_cublasOperation_t transa, opara_cublasOperation_t transb, int m, int n, int k, const float* alpha, const float* A, int lda, long long int strideA, const float* B, int ldb, long long int strideB, const float* beta, float* C, int ldc, long long int strideC, int batchCount), OPARA_CUDA_REQUIRED) \
    X(opara_cublasStatus_t, cublasGemmEx, (opara_cublasHandle_t handle, opara_cublasOperation_t transa, opara_cublasOperation_t transb, int m, int n, int k, const void* alpha, const void* A, opara_cudaDataType Atype, int lda, const void* B, opara_cudaDataType Btype, int ldb, const void* beta, void* C, opara_cudaDataType Ctype, int ldc, opara_cublasComputeType_t computeType, opara_cublasGemmAlgo_t algo), OPARA_CUDA_REQUIRED) \
    X(const char*, cublasGetStatusName, (opara_cublasStatus_t status), OPARA_CUDA_OPTIONAL) \
    X(const char*, cublasGetStatusString, (opara_cublasStatus_t status), OPARA_CUDA_OPTIONAL)

#define OPARA_CUDA_CUDNN_FUNCS(X) \
    X(size_t, cudnnGetVersion, (void), OPARA_CUDA_REQUIRED) \
    X(const char*, cudnnGetErrorString, (opara_cudnnStatus_t status), OPARA_CUDA_REQUIRED) \
    X(opara_cudnnStatus_t, cudnnCreate, (opara_cudnnHandle_t* handle), OPARA_CUDA_REQUIRED) \
    X(opara_cudnnStatus_t, cudnnDestroy, (opara_cudnnHandle_t handle), OPARA_CUDA_REQUIRED) \
    X(opara_cudnnStatus_t, cudnnSetStream, (opara_cudnnHandle_t handle, opara_CUstream streamId), OPARA_CUDA_REQUIRED) \
    X(opara_cudnnStatus_t, cudnnCreateTensorDescriptor, (opara_cudnnTensorDescriptor_t* tensorDesc), OPARA_CUDA_REQUIRED) \
    X(opara_cudnnStatus_t, cudnnDestroyTensorDescriptor, (opara_cudnnTensorDescriptor_t tensorDesc), OPARA_CUDA_REQUIRED) \
    X(opara_cudnnStatus_t, cudnnSetTensor4dDescriptor, (opara_cudnnTensorDescriptor_t tensorDesc, opara_cudnnTensorFormat_t format, opara_cudnnDataType_t dataType, int n, int c, int h, int w), OPARA_CUDA_REQUIRED) \
    X(opara_cudnnStatus_t, cudnnSetTensorNdDescriptor, (opara_cudnnTensorDescriptor_t tensorDesc, opara_cudnnDataType_t dataType, int nbDims, const int* dimA, const int* strideA), OPARA_CUDA_REQUIRED) \
    X(opara_cudnnStatus_t, cudnnCreateFilterDescriptor, (opara_cudnnFilterDescriptor_t* filterDesc), OPARA_CUDA_REQUIRED) \
    X(opara_cudnnStatus_t, cudnnDestroyFilterDescriptor, (opara_cudnnFilterDescriptor_t filterDesc), OPARA_CUDA_REQUIRED) \
    X(opara_cudnnStatus_t, cudnnSetFilter4dDescriptor, (opara_cudnnFilterDescriptor_t filterDesc, opara_cudnnDataType_t dataType, opara_cudnnTensorFormat_t format, int k, int c, int h, int w), OPARA_CUDA_REQUIRED) \
    X(opara_cudnnStatus_t, cudnnCreateConvolutionDescriptor, (opara_cudnnConvolutionDescriptor_t* convDesc), OPARA_CUDA_REQUIRED) \
    X(opara_cudnnStatus_t, cudnnDestroyConvolutionDescriptor, (opara_cudnnConvolutionDescriptor_t convDesc), OPARA_CUDA_REQUIRED) \
    X(opara_cudnnStatus_t, cudnnSetConvolution2dDescriptor, (opara_cudnnConvolutionDescriptor_t convDesc, int pad_h, int pad_w, int u, int v, int dilation_h, int dilation_w, opara_cudnnConvolutionMode_t mode, opara_cudnnDataType_t computeType), OPARA_CUDA_REQUIRED) \
    X(opara_cudnnStatus_t, cudnnSetConvolutionGroupCount, (opara_cudnnConvolutionDescriptor_t convDesc, int groupCount), OPARA_CUDA_REQUIRED) \
    X(opara_cudnnStatus_t, cudnnSetConvolutionMathType, (opara_cudnnConvolutionDescriptor_t convDesc, opara_cudnnMathType_t mathType), OPARA_CUDA_REQUIRED) \
    X(opara_cudnnStatus_t, cudnnGetConvolution2dForwardOutputDim, (opara_cudnnConvolutionDescriptor_t convDesc, opara_cudnnTensorDescriptor_t inputTensorDesc, opara_cudnnFilterDescriptor_t filterDesc, int* n, int* c, int* h, int* w), OPARA_CUDA_REQUIRED) \
    X(opara_cudnnStatus_t, cudnnGetConvolutionForwardAlgorithm_v7, (opara_cudnnHandle_t handle, opara_cudnnTensorDescriptor_t srcDesc, opara_cudnnFilterDescriptor_t filterDesc, opara_cudnnConvolutionDescriptor_t convDesc, opara_cudnnTensorDescriptor_t destDesc, int requestedAlgoCount, int* returnedAlgoCount, opara_cudnnConvolutionFwdAlgoPerf_t* perfResults), OPARA_CUDA_REQUIRED) \
    X(opara_cudnnStatus_t, cudnnGetConvolutionForwardWorkspaceSize, (opara_cudnnHandle_t handle, opara_cudnnTensorDescriptor_t xDesc, opara_cudnnFilterDescriptor_t wDesc, opara_cudnnConvolutionDescriptor_t convDesc, opara_cudnnTensorDescriptor_t yDesc, opara_cudnnConvolutionFwdAlgo_t algo, size_t* sizeInBytes), OPARA_CUDA_REQUIRED) \
    X(opara_cudnnStatus_t, cudnnConvolutionForward, (opara_cudnnHandle_t handle, const void* alpha, opara_cudnnTensorDescriptor_t xDesc, const void* x, opara_cudnnFilterDescriptor_t wDesc, const void* w, opara_cudnnConvolutionDescriptor_t convDesc, opara_cudnnConvolutionFwdAlgo_t algo, void* workSpace, size_t workSpaceSizeInBytes, const void* beta, opara_cudnnTensorDescriptor_t yDesc, void* y), OPARA_CUDA_REQUIRED) \
    X(opara_cudnnStatus_t, cudnnConvolutionBiasActivationForward, (opara_cudnnHandle_t handle, const void* alpha1, opara_cudnnTensorDescriptor_t xDesc, const void* x, opara_cudnnFilterDescriptor_t wDesc, const void* w, opara_cudnnConvolutionDescriptor_t convDesc, opara_cudnnConvolutionFwdAlgo_t algo, void* workSpace, size_t workSpaceSizeInBytes, const void* alpha2, opara_cudnnTensorDescriptor_t zDesc, const void* z, opara_cudnnTensorDescriptor_t biasDesc, const void* bias, opara_cudnnActivationDescriptor_t activationDesc, opara_cudnnTensorDescriptor_t yDesc, void* y), OPARA_CUDA_REQUIRED) \
    X(opara_cudnnStatus_t, cudnnCreateActivationDescriptor, (opara_cudnnActivationDescriptor_t* activationDesc), OPARA_CUDA_REQUIRED) \
    X(opara_cudnnStatus_t, cudnnDestroyActivationDescriptor, (opara_cudnnActivationDescriptor_t activationDesc), OPARA_CUDA_REQUIRED) \
    X(opara_cudnnStatus_t, cudnnSetActivationDescriptor, (opara_cudnnActivationDescriptor_t activationDesc, opara_cudnnActivationMode_t mode, opara_cudnnNanPropagation_t reluNanOpt, double coef), OPARA_CUDA_REQUIRED) \
    X(opara_cudnnStatus_t, cudnnAddTensor, (opara_cudnnHandle_t handle, const void* alpha, opara_cudnnTensorDescriptor_t aDesc, const void* A, const void* beta, opara_cudnnTensorDescriptor_t cDesc, void* C), OPARA_CUDA_REQUIRED)

/* Function pointer types: opara_PFN_<exported symbol>. */
#define OPARA__CUDA_DRIVER_PFN(ret, name, params, req, proc, ver, alt, alt_ver) typedef ret(OPARA_CUDAAPI* opara_PFN_##name) params;
#define OPARA__CUDA_NVRTC_PFN(ret, name, params, req) typedef ret(OPARA_NVRTCAPI* opara_PFN_##name) params;
#define OPARA__CUDA_CUBLAS_PFN(ret, name, params, req) typedef ret(OPARA_CUBLASAPI* opara_PFN_##name) params;
#define OPARA__CUDA_CUDNN_PFN(ret, name, params, req) typedef ret(OPARA_CUDNNAPI* opara_PFN_##name) params;
OPARA_CUDA_DRIVER_FUNCS(OPARA__CUDA_DRIVER_PFN)
OPARA_CUDA_NVRTC_FUNCS(OPARA__CUDA_NVRTC_PFN)
OPARA_CUDA_CUBLAS_FUNCS(OPARA__CUDA_CUBLAS_PFN)
OPARA_CUDA_CUDNN_FUNCS(OPARA__CUDA_CUDNN_PFN)

/* ============================================================================================== */
/* Tables and loader                                                                              */
/* ============================================================================================== */

#define OPARA_CUDA_PATH_MAX 512
#define OPARA_CUDA_MIN_DRIVER_VERSION 12000 /* CUDA 12.0 */

#define OPARA__CUDA_DRIVER_MEMBER(ret, name, params, req, proc, ver, alt, alt_ver) opara_PFN_##name name;
#define OPARA__CUDA_LIB_MEMBER(ret, name, params, req) opara_PFN_##name name;

/* Every table starts with the library handle (NULL when not loaded) and the name or path that
   was loaded; the function members follow. A table that failed to load is all zero. */
typedef struct opara_cuda_driver {
    void* library;
    char path[OPARA_CUDA_PATH_MAX];
    int driver_version;    /* cuDriverGetVersion (13000 = 13.0), 0 when it did not answer */
    int used_proc_address; /* 1 when entry points came from cuGetProcAddress_v2 */
    OPARA_CUDA_DRIVER_FUNCS(OPARA__CUDA_DRIVER_MEMBER)
} opara_cuda_driver;

typedef struct opara_cuda_nvrtc {
    void* library;
    char path[OPARA_CUDA_PATH_MAX];
    OPARA_CUDA_NVRTC_FUNCS(OPARA__CUDA_LIB_MEMBER)
} opara_cuda_nvrtc;

typedef struct opara_cuda_cublas {
    void* library;
    char path[OPARA_CUDA_PATH_MAX];
    OPARA_CUDA_CUBLAS_FUNCS(OPARA__CUDA_LIB_MEMBER)
} opara_cuda_cublas;

typedef struct opara_cuda_cudnn {
    void* library;
    char path[OPARA_CUDA_PATH_MAX];
    OPARA_CUDA_CUDNN_FUNCS(OPARA__CUDA_LIB_MEMBER)
} opara_cuda_cudnn;

typedef enum opara_cuda_load_status {
    OPARA_CUDA_LOAD_OK = 0,
    OPARA_CUDA_LOAD_INVALID_ARGUMENT = -1, /* the table pointer is NULL */
    OPARA_CUDA_LOAD_NOT_FOUND = -2,        /* no library could be opened */
    OPARA_CUDA_LOAD_SYMBOL_MISSING = -3,   /* a required entry point is missing: library too old */
    OPARA_CUDA_LOAD_DRIVER_TOO_OLD = -4    /* cuDriverGetVersion < OPARA_CUDA_MIN_DRIVER_VERSION */
} opara_cuda_load_status;

/* path: one library to load instead of the search list (NULL: the environment variable, else the
   list). err (may be NULL) receives a NUL-terminated message on failure and "" on success. */
OPARA_CUDA_DEF opara_cuda_load_status opara_cuda_driver_load(opara_cuda_driver* cu, const char* path, char* err, size_t err_size);
OPARA_CUDA_DEF opara_cuda_load_status opara_cuda_nvrtc_load(opara_cuda_nvrtc* nvrtc, const char* path, char* err, size_t err_size);
OPARA_CUDA_DEF opara_cuda_load_status opara_cuda_cublas_load(opara_cuda_cublas* cublas, const char* path, char* err, size_t err_size);
OPARA_CUDA_DEF opara_cuda_load_status opara_cuda_cudnn_load(opara_cuda_cudnn* cudnn, const char* path, char* err, size_t err_size);

/* Close the library and zero the table; safe on a zeroed or already unloaded table. */
OPARA_CUDA_DEF void opara_cuda_driver_unload(opara_cuda_driver* cu);
OPARA_CUDA_DEF void opara_cuda_nvrtc_unload(opara_cuda_nvrtc* nvrtc);
OPARA_CUDA_DEF void opara_cuda_cublas_unload(opara_cuda_cublas* cublas);
OPARA_CUDA_DEF void opara_cuda_cudnn_unload(opara_cuda_cudnn* cudnn);

/* Status code names from our own tables, usable without any library ("CUDA_ERROR_INVALID_VALUE").
   An unknown code gives "(unknown CUresult)" and the like, never NULL. */
OPARA_CUDA_DEF const char* opara_cuda_result_name(opara_CUresult result);
OPARA_CUDA_DEF const char* opara_nvrtc_result_name(opara_nvrtcResult result);
OPARA_CUDA_DEF const char* opara_cublas_status_name(opara_cublasStatus_t status);
OPARA_CUDA_DEF const char* opara_cudnn_status_name(opara_cudnnStatus_t status); /* cuDNN 9 and 8 codes */
/* The driver's own cuGetErrorName when the table is loaded and it answers, else opara_cuda_result_name. */
OPARA_CUDA_DEF const char* opara_cuda_driver_result_name(const opara_cuda_driver* cu, opara_CUresult result);

#ifdef __cplusplus
}
#endif

#endif /* OPARA_CUDA_H_INCLUDED */

/* ============================================================================================== */
/* Implementation                                                                                 */
/* ============================================================================================== */

#if defined(OPARA__AMALGAMATED) && defined(OPARA_IMPLEMENTATION) && !defined(OPARA_CUDA_IMPLEMENTATION)
#  define OPARA_CUDA_IMPLEMENTATION
#endif

#if defined(OPARA_CUDA_IMPLEMENTATION) && !defined(OPARA_CUDA_IMPLEMENTATION_INCLUDED)
#define OPARA_CUDA_IMPLEMENTATION_INCLUDED

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _WIN32
#  include <windows.h>
#else
#  include <dlfcn.h>
#endif

/* Entry points are stored by copying the void* the system returns into the typed member. */
typedef char opara__cuda_fnptr_size_check[sizeof(void*) == sizeof(opara_PFN_cuInit) ? 1 : -1];

/* ---- platform ---------------------------------------------------------------------------------- */

#ifdef _WIN32
static void* opara__cuda_dlopen(const char* path) { return (void*)LoadLibraryA(path); }
static void* opara__cuda_dlsym(void* library, const char* name) {
    FARPROC proc = GetProcAddress((HMODULE)library, name);
    void* p;
    memcpy(&p, &proc, sizeof p);
    return p;
}
static void opara__cuda_dlclose(void* library) { FreeLibrary((HMODULE)library); }
static void opara__cuda_dlerror(char* buf, size_t size) {
    snprintf(buf, size, "LoadLibrary error %lu", (unsigned long)GetLastError());
}
#else
static void* opara__cuda_dlopen(const char* path) { return dlopen(path, RTLD_NOW | RTLD_LOCAL); }
static void* opara__cuda_dlsym(void* library, const char* name) { return dlsym(library, name); }
static void opara__cuda_dlclose(void* library) { dlclose(library); }
static void opara__cuda_dlerror(char* buf, size_t size) {
    const char* why = dlerror();
    snprintf(buf, size, "%s", why ? why : "unknown dlopen error");
}
#endif

/* ---- messages ---------------------------------------------------------------------------------- */

#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 3, 4)))
#endif
static void opara__cuda_appendf(char* buf, size_t size, const char* fmt, ...) {
    size_t used;
    va_list args;
    if (!buf || size == 0) return;
    used = strlen(buf);
    if (used + 1 >= size) return;
    va_start(args, fmt);
    vsnprintf(buf + used, size - used, fmt, args);
    va_end(args);
}

static void opara__cuda_clear(char* buf, size_t size) {
    if (buf && size > 0) buf[0] = 0;
}

/* ---- library specs ----------------------------------------------------------------------------- */

typedef struct opara__cuda_entry {
    const char* symbol;    /* dlsym name, also the table member */
    const char* proc_name; /* cuGetProcAddress name */
    int proc_version;      /* 0: dlsym only */
    const char* alt_symbol; /* same prototype, older ABI */
    int alt_version;        /* 0: no alternative */
    size_t offset; /* of the member in the table */
    int required;
} opara__cuda_entry;

typedef struct opara__cuda_spec {
    const char* what;    /* "CUDA driver", for messages */
    const char* env_var; /* override variable */
    const char* const* names;
    size_t name_count;
    const opara__cuda_entry* entries;
    size_t entry_count;
} opara__cuda_spec;

#define OPARA__CUDA_COUNT(a) (sizeof(a) / sizeof((a)[0]))

#define OPARA__CUDA_DRIVER_ENTRY(ret, name, params, req, proc, ver, alt, alt_ver) \
    {#name, #proc, ver, #alt, alt_ver, offsetof(opara_cuda_driver, name), req},
#define OPARA__CUDA_NVRTC_ENTRY(ret, name, params, req) {#name, 0, 0, 0, 0, offsetof(opara_cuda_nvrtc, name), req},
#define OPARA__CUDA_CUBLAS_ENTRY(ret, name, params, req) {#name, 0, 0, 0, 0, offsetof(opara_cuda_cublas, name), req},
#define OPARA__CUDA_CUDNN_ENTRY(ret, name, params, req) {#name, 0, 0, 0, 0, offsetof(opara_cuda_cudnn, name), req},

static const opara__cuda_entry opara__cuda_driver_entries[] = {OPARA_CUDA_DRIVER_FUNCS(OPARA__CUDA_DRIVER_ENTRY)};
static const opara__cuda_entry opara__cuda_nvrtc_entries[] = {OPARA_CUDA_NVRTC_FUNCS(OPARA__CUDA_NVRTC_ENTRY)};
static const opara__cuda_entry opara__cuda_cublas_entries[] = {OPARA_CUDA_CUBLAS_FUNCS(OPARA__CUDA_CUBLAS_ENTRY)};
static const opara__cuda_entry opara__cuda_cudnn_entries[] = {OPARA_CUDA_CUDNN_FUNCS(OPARA__CUDA_CUDNN_ENTRY)};

#ifdef _WIN32
static const char* const opara__cuda_driver_names[] = {"nvcuda.dll"};
static const char* const opara__cuda_nvrtc_names[] = {"nvrtc64_130_0.dll", "nvrtc64_120_0.dll", "nvrtc64_112_0.dll"};
static const char* const opara__cuda_cublas_names[] = {"cublas64_13.dll", "cublas64_12.dll", "cublas64_11.dll"};
static const char* const opara__cuda_cudnn_names[] = {"cudnn64_9.dll", "cudnn64_8.dll"};
#else
static const char* const opara__cuda_driver_names[] = {"libcuda.so.1", "libcuda.so"};
static const char* const opara__cuda_nvrtc_names[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2", "libnvrtc.so"};
static const char* const opara__cuda_cublas_names[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so.11", "libcublas.so"};
static const char* const opara__cuda_cudnn_names[] = {"libcudnn.so.9", "libcudnn.so.8", "libcudnn.so"};
#endif

#define OPARA__CUDA_SPEC(what, env, lib) \
    {what, env, opara__cuda_##lib##_names, OPARA__CUDA_COUNT(opara__cuda_##lib##_names), opara__cuda_##lib##_entries, \
     OPARA__CUDA_COUNT(opara__cuda_##lib##_entries)}
static const opara__cuda_spec opara__cuda_driver_spec = OPARA__CUDA_SPEC("CUDA driver", "OPARA_CUDA_DRIVER", driver);
static const opara__cuda_spec opara__cuda_nvrtc_spec = OPARA__CUDA_SPEC("NVRTC", "OPARA_NVRTC", nvrtc);
static const opara__cuda_spec opara__cuda_cublas_spec = OPARA__CUDA_SPEC("cuBLAS", "OPARA_CUBLAS", cublas);
static const opara__cuda_spec opara__cuda_cudnn_spec = OPARA__CUDA_SPEC("cuDNN", "OPARA_CUDNN", cudnn);

/* ---- opening ----------------------------------------------------------------------------------- */

static void opara__cuda_copy_path(char* dst, const char* src) {
    snprintf(dst, OPARA_CUDA_PATH_MAX, "%s", src);
}

/* Opens the explicit path (argument, else environment variable) or the first name of the search
   list that opens. On failure the message names every path tried with the system's reason. */
static opara_cuda_load_status opara__cuda_open(const opara__cuda_spec* spec, const char* path, void** library,
                                               char* loaded_path, char* err, size_t err_size) {
    char why[512];
    const char* env = path ? NULL : getenv(spec->env_var);
    const char* chosen = path ? path : (env && env[0] ? env : NULL);
    size_t i;
    if (chosen) {
        *library = opara__cuda_dlopen(chosen);
        if (*library) {
            opara__cuda_copy_path(loaded_path, chosen);
            return OPARA_CUDA_LOAD_OK;
        }
        opara__cuda_dlerror(why, sizeof why);
        opara__cuda_appendf(err, err_size, "cannot load the %s library: tried \"%s\" (%s%s) (%s)", spec->what, chosen,
                            path ? "given by the caller" : "from ", path ? "" : spec->env_var, why);
        return OPARA_CUDA_LOAD_NOT_FOUND;
    }
    opara__cuda_appendf(err, err_size, "cannot load the %s library: tried", spec->what);
    for (i = 0; i < spec->name_count; ++i) {
        *library = opara__cuda_dlopen(spec->names[i]);
        if (*library) {
            opara__cuda_clear(err, err_size);
            opara__cuda_copy_path(loaded_path, spec->names[i]);
            return OPARA_CUDA_LOAD_OK;
        }
        opara__cuda_dlerror(why, sizeof why);
        opara__cuda_appendf(err, err_size, "%s \"%s\" (%s)", i ? "," : "", spec->names[i], why);
    }
    opara__cuda_appendf(err, err_size, "; set %s to the library's path to choose one", spec->env_var);
    return OPARA_CUDA_LOAD_NOT_FOUND;
}

/* ---- resolving --------------------------------------------------------------------------------- */

typedef struct opara__cuda_resolver {
    void* library;
    opara_PFN_cuGetProcAddress_v2 get_proc; /* NULL: dlsym only */
    int driver_version;
} opara__cuda_resolver;

static void* opara__cuda_find(const opara__cuda_resolver* r, const char* symbol, const char* proc_name, int version) {
    void* p = NULL;
    if (r->get_proc && version > 0 && version <= r->driver_version) {
        opara_CUdriverProcAddressQueryResult status = OPARA_CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
        if (r->get_proc(proc_name, &p, version, (opara_cuuint64_t)OPARA_CU_GET_PROC_ADDRESS_LEGACY_STREAM, &status) !=
                OPARA_CUDA_SUCCESS ||
            status != OPARA_CU_GET_PROC_ADDRESS_SUCCESS)
            p = NULL;
    }
    if (!p) p = opara__cuda_dlsym(r->library, symbol);
    return p;
}

/* Fills every member it finds; returns the first required entry that is missing, or NULL. */
static const opara__cuda_entry* opara__cuda_resolve(const opara__cuda_resolver* r, const opara__cuda_spec* spec,
                                                    void* table, size_t* missing_count) {
    const opara__cuda_entry* first_missing = NULL;
    size_t i;
    *missing_count = 0;
    for (i = 0; i < spec->entry_count; ++i) {
        const opara__cuda_entry* e = &spec->entries[i];
        void* p = opara__cuda_find(r, e->symbol, e->proc_name, e->proc_version);
        if (!p && e->alt_version > 0) p = opara__cuda_find(r, e->alt_symbol, e->proc_name, e->alt_version);
        if (p) {
            memcpy((char*)table + e->offset, &p, sizeof p);
        } else if (e->required) {
            if (!first_missing) first_missing = e;
            ++*missing_count;
        }
    }
    return first_missing;
}

static void opara__cuda_report_missing(const opara__cuda_spec* spec, const char* path, const opara__cuda_entry* e,
                                       size_t missing_count, const opara__cuda_resolver* r, char* err, size_t err_size) {
    opara__cuda_appendf(err, err_size, "the %s library \"%s\" is too old or incomplete: required entry point %s not found",
                        spec->what, path, e->symbol);
    if (r->get_proc && e->proc_version > 0)
        opara__cuda_appendf(err, err_size, " (cuGetProcAddress \"%s\" for CUDA %d.%d, driver %d.%d)", e->proc_name,
                            e->proc_version / 1000, e->proc_version % 1000 / 10, r->driver_version / 1000,
                            r->driver_version % 1000 / 10);
    if (missing_count > 1)
        opara__cuda_appendf(err, err_size, "; %lu required entry points are missing", (unsigned long)missing_count);
}

/* Resolves the opened library into the zeroed table; when a required entry point is missing the
   library is closed, the table zeroed again and the message names the entry point. */
static opara_cuda_load_status opara__cuda_finish(const opara__cuda_spec* spec, void* table, size_t table_size,
                                                 const opara__cuda_resolver* r, const char* loaded_path, char* err,
                                                 size_t err_size) {
    size_t missing_count;
    const opara__cuda_entry* missing = opara__cuda_resolve(r, spec, table, &missing_count);
    if (!missing) return OPARA_CUDA_LOAD_OK;
    opara__cuda_report_missing(spec, loaded_path, missing, missing_count, r, err, err_size);
    opara__cuda_dlclose(r->library);
    memset(table, 0, table_size);
    return OPARA_CUDA_LOAD_SYMBOL_MISSING;
}

static opara_cuda_load_status opara__cuda_invalid(const char* what, char* err, size_t err_size) {
    opara__cuda_clear(err, err_size);
    opara__cuda_appendf(err, err_size, "cannot load the %s library: the table pointer is NULL", what);
    return OPARA_CUDA_LOAD_INVALID_ARGUMENT;
}

/* ---- public: loading --------------------------------------------------------------------------- */

/* cuGetProcAddress_v2 and cuDriverGetVersion come from dlsym; the version decides which ABI
   versions may be asked for (asking above the driver's version is an error). */
static void opara__cuda_driver_bootstrap(void* library, opara__cuda_resolver* r) {
    void* get_proc = opara__cuda_dlsym(library, "cuGetProcAddress_v2");
    void* get_version = opara__cuda_dlsym(library, "cuDriverGetVersion");
    r->library = library;
    r->get_proc = NULL;
    r->driver_version = 0;
    if (get_version) {
        opara_PFN_cuDriverGetVersion fn;
        int version = 0;
        memcpy(&fn, &get_version, sizeof fn);
        if (fn(&version) == OPARA_CUDA_SUCCESS && version > 0) r->driver_version = version;
    }
    if (get_proc && r->driver_version >= 12000) memcpy(&r->get_proc, &get_proc, sizeof get_proc);
}

OPARA_CUDA_DEF opara_cuda_load_status opara_cuda_driver_load(opara_cuda_driver* cu, const char* path, char* err, size_t err_size) {
    opara__cuda_resolver r;
    opara_cuda_load_status status;
    void* library = NULL;
    char loaded[OPARA_CUDA_PATH_MAX];
    if (!cu) return opara__cuda_invalid(opara__cuda_driver_spec.what, err, err_size);
    memset(cu, 0, sizeof *cu);
    opara__cuda_clear(err, err_size);
    status = opara__cuda_open(&opara__cuda_driver_spec, path, &library, loaded, err, err_size);
    if (status != OPARA_CUDA_LOAD_OK) return status;
    opara__cuda_driver_bootstrap(library, &r);
    if (r.driver_version != 0 && r.driver_version < OPARA_CUDA_MIN_DRIVER_VERSION) {
        opara__cuda_appendf(err, err_size, "the CUDA driver \"%s\" is version %d.%d; opara needs %d.%d or newer", loaded,
                            r.driver_version / 1000, r.driver_version % 1000 / 10, OPARA_CUDA_MIN_DRIVER_VERSION / 1000,
                            OPARA_CUDA_MIN_DRIVER_VERSION % 1000 / 10);
        opara__cuda_dlclose(library);
        return OPARA_CUDA_LOAD_DRIVER_TOO_OLD;
    }
    status = opara__cuda_finish(&opara__cuda_driver_spec, cu, sizeof *cu, &r, loaded, err, err_size);
    if (status != OPARA_CUDA_LOAD_OK) return status;
    cu->library = library;
    opara__cuda_copy_path(cu->path, loaded);
    cu->driver_version = r.driver_version;
    cu->used_proc_address = r.get_proc != NULL;
    return OPARA_CUDA_LOAD_OK;
}

/* NVRTC, cuBLAS and cuDNN: open, then dlsym every entry point. */
static opara_cuda_load_status opara__cuda_lib_load(const opara__cuda_spec* spec, void* table, size_t table_size,
                                                   void** library, char* loaded_path, const char* path, char* err,
                                                   size_t err_size) {
    opara__cuda_resolver r;
    opara_cuda_load_status status;
    char loaded[OPARA_CUDA_PATH_MAX];
    memset(table, 0, table_size);
    memset(&r, 0, sizeof r);
    opara__cuda_clear(err, err_size);
    status = opara__cuda_open(spec, path, &r.library, loaded, err, err_size);
    if (status == OPARA_CUDA_LOAD_OK) status = opara__cuda_finish(spec, table, table_size, &r, loaded, err, err_size);
    if (status != OPARA_CUDA_LOAD_OK) return status;
    *library = r.library;
    opara__cuda_copy_path(loaded_path, loaded);
    return OPARA_CUDA_LOAD_OK;
}

OPARA_CUDA_DEF opara_cuda_load_status opara_cuda_nvrtc_load(opara_cuda_nvrtc* nvrtc, const char* path, char* err, size_t err_size) {
    if (!nvrtc) return opara__cuda_invalid(opara__cuda_nvrtc_spec.what, err, err_size);
    return opara__cuda_lib_load(&opara__cuda_nvrtc_spec, nvrtc, sizeof *nvrtc, &nvrtc->library, nvrtc->path, path, err,
                                err_size);
}

OPARA_CUDA_DEF opara_cuda_load_status opara_cuda_cublas_load(opara_cuda_cublas* cublas, const char* path, char* err, size_t err_size) {
    if (!cublas) return opara__cuda_invalid(opara__cuda_cublas_spec.what, err, err_size);
    return opara__cuda_lib_load(&opara__cuda_cublas_spec, cublas, sizeof *cublas, &cublas->library, cublas->path, path,
                                err, err_size);
}

OPARA_CUDA_DEF opara_cuda_load_status opara_cuda_cudnn_load(opara_cuda_cudnn* cudnn, const char* path, char* err, size_t err_size) {
    if (!cudnn) return opara__cuda_invalid(opara__cuda_cudnn_spec.what, err, err_size);
    return opara__cuda_lib_load(&opara__cuda_cudnn_spec, cudnn, sizeof *cudnn, &cudnn->library, cudnn->path, path, err,
                                err_size);
}

/* ---- public: unloading ------------------------------------------------------------------------- */

static void opara__cuda_unload(void* table, size_t table_size, void* library) {
    if (library) opara__cuda_dlclose(library);
    memset(table, 0, table_size);
}

OPARA_CUDA_DEF void opara_cuda_driver_unload(opara_cuda_driver* cu) {
    if (cu) opara__cuda_unload(cu, sizeof *cu, cu->library);
}
OPARA_CUDA_DEF void opara_cuda_nvrtc_unload(opara_cuda_nvrtc* nvrtc) {
    if (nvrtc) opara__cuda_unload(nvrtc, sizeof *nvrtc, nvrtc->library);
}
OPARA_CUDA_DEF void opara_cuda_cublas_unload(opara_cuda_cublas* cublas) {
    if (cublas) opara__cuda_unload(cublas, sizeof *cublas, cublas->library);
}
OPARA_CUDA_DEF void opara_cuda_cudnn_unload(opara_cuda_cudnn* cudnn) {
    if (cudnn) opara__cuda_unload(cudnn, sizeof *cudnn, cudnn->library);
}

/* ---- public: status names ---------------------------------------------------------------------- */

typedef struct opara__cuda_name {
    int value;
    const char* name;
} opara__cuda_name;

#define OPARA__CUDA_NAME_ITEM(name, value) {value, #name},

/* cuDNN 8 numbering (cudnn.h 8.x), named alongside the cuDNN 9 codes. */
#define OPARA__CUDNN8_STATUS_LIST(X) \
    X(CUDNN_STATUS_NOT_INITIALIZED, 1) \
    X(CUDNN_STATUS_ALLOC_FAILED, 2) \
    X(CUDNN_STATUS_BAD_PARAM, 3) \
    X(CUDNN_STATUS_INTERNAL_ERROR, 4) \
    X(CUDNN_STATUS_INVALID_VALUE, 5) \
    X(CUDNN_STATUS_ARCH_MISMATCH, 6) \
    X(CUDNN_STATUS_MAPPING_ERROR, 7) \
    X(CUDNN_STATUS_EXECUTION_FAILED, 8) \
    X(CUDNN_STATUS_NOT_SUPPORTED, 9) \
    X(CUDNN_STATUS_LICENSE_ERROR, 10) \
    X(CUDNN_STATUS_RUNTIME_PREREQUISITE_MISSING, 11) \
    X(CUDNN_STATUS_RUNTIME_IN_PROGRESS, 12) \
    X(CUDNN_STATUS_RUNTIME_FP_OVERFLOW, 13) \
    X(CUDNN_STATUS_VERSION_MISMATCH, 14)

static const opara__cuda_name opara__cuda_result_names[] = {OPARA_CUDA_RESULT_LIST(OPARA__CUDA_NAME_ITEM)};
static const opara__cuda_name opara__cuda_nvrtc_names_of_results[] = {OPARA_NVRTC_RESULT_LIST(OPARA__CUDA_NAME_ITEM)};
static const opara__cuda_name opara__cuda_cublas_status_names[] = {OPARA_CUBLAS_STATUS_LIST(OPARA__CUDA_NAME_ITEM)};
static const opara__cuda_name opara__cuda_cudnn_status_names[] = {
    OPARA_CUDNN_STATUS_LIST(OPARA__CUDA_NAME_ITEM) OPARA__CUDNN8_STATUS_LIST(OPARA__CUDA_NAME_ITEM)};

static const char* opara__cuda_lookup(const opara__cuda_name* names, size_t count, int value, const char* unknown) {
    size_t i;
    for (i = 0; i < count; ++i)
        if (names[i].value == value) return names[i].name;
    return unknown;
}

OPARA_CUDA_DEF const char* opara_cuda_result_name(opara_CUresult result) {
    return opara__cuda_lookup(opara__cuda_result_names, OPARA__CUDA_COUNT(opara__cuda_result_names), (int)result,
                              "(unknown CUresult)");
}

OPARA_CUDA_DEF const char* opara_nvrtc_result_name(opara_nvrtcResult result) {
    return opara__cuda_lookup(opara__cuda_nvrtc_names_of_results, OPARA__CUDA_COUNT(opara__cuda_nvrtc_names_of_results),
                              (int)result, "(unknown nvrtcResult)");
}

OPARA_CUDA_DEF const char* opara_cublas_status_name(opara_cublasStatus_t status) {
    return opara__cuda_lookup(opara__cuda_cublas_status_names, OPARA__CUDA_COUNT(opara__cuda_cublas_status_names),
                              (int)status, "(unknown cublasStatus_t)");
}

OPARA_CUDA_DEF const char* opara_cudnn_status_name(opara_cudnnStatus_t status) {
    return opara__cuda_lookup(opara__cuda_cudnn_status_names, OPARA__CUDA_COUNT(opara__cuda_cudnn_status_names),
                              (int)status, "(unknown cudnnStatus_t)");
}

OPARA_CUDA_DEF const char* opara_cuda_driver_result_name(const opara_cuda_driver* cu, opara_CUresult result) {
    const char* name = NULL;
    if (cu && cu->cuGetErrorName && cu->cuGetErrorName(result, &name) == OPARA_CUDA_SUCCESS && name) return name;
    return opara_cuda_result_name(result);
}

#endif /* OPARA_CUDA_IMPLEMENTATION */
/* ==== END opara_cuda.h ==== */
/* ==== BEGIN src/opara_util.c ==== */
/* Memory through the allocator hook, checked arithmetic, little-endian access, text helpers. */
/* #include "opara_internal.h" (inlined above) */

#include <stdio.h>
#include <stdlib.h>

#if !defined(OPARA_MALLOC)
/* Over-allocates and keeps the malloc'd pointer just below the aligned block, so the default
   needs nothing beyond C99 (no posix_memalign or _aligned_malloc). */
static void* opara__default_aligned_alloc(size_t size, size_t alignment) {
    size_t total;
    uint8_t *raw, *aligned;
    if (!opara__add_size(size, alignment + sizeof(void*), &total)) return NULL;
    raw = (uint8_t*)malloc(total);
    if (!raw) return NULL;
    aligned = raw + sizeof(void*);
    aligned += (alignment - (size_t)((uintptr_t)aligned & (alignment - 1))) & (alignment - 1);
    memcpy(aligned - sizeof(void*), &raw, sizeof raw);
    return aligned;
}

static void opara__default_aligned_free(void* ptr) {
    void* raw;
    memcpy(&raw, (uint8_t*)ptr - sizeof(void*), sizeof raw);
    free(raw);
}
#  define OPARA_MALLOC(size, alignment) opara__default_aligned_alloc((size), (alignment))
#  define OPARA_FREE(ptr) opara__default_aligned_free(ptr)
#endif

OPARA__PRIVATE void* opara__alloc_aligned(const opara_allocator* a, size_t size, size_t alignment) {
    if (alignment < 16) alignment = 16;
    if (!opara__is_pow2(alignment)) return NULL;
    if (a && a->alloc_fn) return a->alloc_fn(size, alignment, a->user_data);
    return OPARA_MALLOC(size, alignment);
}

OPARA__PRIVATE void opara__free_aligned(const opara_allocator* a, void* ptr) {
    if (!ptr) return;
    if (a && a->free_fn) {
        a->free_fn(ptr, a->user_data);
        return;
    }
    OPARA_FREE(ptr);
}

OPARA__PRIVATE void* opara__alloc(opara_runtime* rt, size_t size) {
    return opara__alloc_aligned(rt ? &rt->allocator : NULL, size, 16);
}

OPARA__PRIVATE void* opara__calloc(opara_runtime* rt, size_t count, size_t size) {
    size_t total;
    void* p;
    if (!opara__mul_size(count, size, &total)) return NULL;
    p = opara__alloc(rt, total);
    if (p) memset(p, 0, total);
    return p;
}

OPARA__PRIVATE void opara__free(opara_runtime* rt, void* ptr) {
    opara__free_aligned(rt ? &rt->allocator : NULL, ptr);
}

OPARA__PRIVATE opara_result opara__grow(opara_runtime* rt, void** items, size_t* capacity, size_t need, size_t elem) {
    size_t cap = *capacity ? *capacity : 8;
    size_t bytes, old_bytes;
    void* bigger;
    if (need <= *capacity) return OPARA_OK;
    while (cap < need) {
        if (!opara__mul_size(cap, 2, &cap)) return OPARA_ERR_OUT_OF_MEMORY;
    }
    if (!opara__mul_size(cap, elem, &bytes)) return OPARA_ERR_OUT_OF_MEMORY;
    bigger = opara__alloc(rt, bytes);
    if (!bigger) return OPARA_ERR_OUT_OF_MEMORY;
    old_bytes = *capacity * elem;
    if (*items && old_bytes) memcpy(bigger, *items, old_bytes);
    memset((char*)bigger + old_bytes, 0, bytes - old_bytes);
    opara__free(rt, *items);
    *items = bigger;
    *capacity = cap;
    return OPARA_OK;
}

OPARA__PRIVATE char* opara__strdup(opara_runtime* rt, const char* s) {
    size_t n = strlen(s) + 1;
    char* copy = (char*)opara__alloc(rt, n);
    if (copy) memcpy(copy, s, n);
    return copy;
}

OPARA__PRIVATE int opara__add_size(size_t a, size_t b, size_t* out) {
    if (a > (size_t)-1 - b) return 0;
    *out = a + b;
    return 1;
}

OPARA__PRIVATE int opara__mul_size(size_t a, size_t b, size_t* out) {
    if (a != 0 && b > (size_t)-1 / a) return 0;
    *out = a * b;
    return 1;
}

OPARA__PRIVATE int opara__mul_i64(int64_t a, int64_t b, int64_t* out) {
    if (a < 0 || b < 0) return 0; /* only used for sizes; negative means invalid */
    if (a != 0 && b > INT64_MAX / a) return 0;
    *out = a * b;
    return 1;
}

OPARA__PRIVATE int opara__range_ok(uint64_t offset, uint64_t size, uint64_t total) {
    return offset <= total && size <= total - offset;
}

OPARA__PRIVATE int opara__is_pow2(size_t x) {
    return x != 0 && (x & (x - 1)) == 0;
}

OPARA__PRIVATE size_t opara__align_up(size_t x, size_t alignment) {
    return (x + alignment - 1) & ~(alignment - 1);
}

OPARA__PRIVATE uint16_t opara__rd_u16(const uint8_t* p) {
    return (uint16_t)(p[0] | (p[1] << 8));
}

OPARA__PRIVATE uint32_t opara__rd_u32(const uint8_t* p) {
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

OPARA__PRIVATE uint64_t opara__rd_u64(const uint8_t* p) {
    return (uint64_t)opara__rd_u32(p) | ((uint64_t)opara__rd_u32(p + 4) << 32);
}

OPARA__PRIVATE void opara__wr_u16(uint8_t* p, uint16_t v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

OPARA__PRIVATE void opara__wr_u32(uint8_t* p, uint32_t v) {
    opara__wr_u16(p, (uint16_t)v);
    opara__wr_u16(p + 2, (uint16_t)(v >> 16));
}

OPARA__PRIVATE void opara__wr_u64(uint8_t* p, uint64_t v) {
    opara__wr_u32(p, (uint32_t)v);
    opara__wr_u32(p + 4, (uint32_t)(v >> 32));
}

OPARA__PRIVATE size_t opara__format(char* dst, size_t cap, const char* fmt, ...) {
    va_list args;
    int n;
    if (cap == 0) return 0;
    va_start(args, fmt);
    n = vsnprintf(dst, cap, fmt, args);
    va_end(args);
    if (n < 0) {
        dst[0] = 0;
        return 0;
    }
    return (size_t)n < cap ? (size_t)n : cap - 1;
}

OPARA__PRIVATE uint64_t opara__hash64(const void* data, size_t size, uint64_t seed) {
    const uint8_t* p = (const uint8_t*)data;
    uint64_t h = 0xcbf29ce484222325ull ^ seed;
    size_t i;
    for (i = 0; i < size; ++i) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

OPARADEF size_t opara_dtype_size(opara_dtype dtype) {
    switch (dtype) {
    case OPARA_DTYPE_F32: case OPARA_DTYPE_I32: return 4;
    case OPARA_DTYPE_I64: case OPARA_DTYPE_F64: return 8;
    case OPARA_DTYPE_F16: return 2;
    case OPARA_DTYPE_U8: case OPARA_DTYPE_I8: case OPARA_DTYPE_BOOL: return 1;
    default: return 0;
    }
}

OPARADEF const char* opara_dtype_name(opara_dtype dtype) {
    switch (dtype) {
    case OPARA_DTYPE_F32: return "f32";
    case OPARA_DTYPE_U8: return "u8";
    case OPARA_DTYPE_I8: return "i8";
    case OPARA_DTYPE_I32: return "i32";
    case OPARA_DTYPE_I64: return "i64";
    case OPARA_DTYPE_BOOL: return "bool";
    case OPARA_DTYPE_F16: return "f16";
    case OPARA_DTYPE_F64: return "f64";
    default: return "?";
    }
}
/* ==== END src/opara_util.c ==== */
/* ==== BEGIN src/opara_log.c ==== */
/* Result strings, the logger hook, and failure details. */
/* #include "opara_internal.h" (inlined above) */

#include <stdio.h>

OPARADEF const char* opara_result_string(opara_result result) {
    switch (result) {
#define OPARA__RESULT_CASE(name, value, text) case name: return #name ": " text;
        OPARA_RESULTS(OPARA__RESULT_CASE)
#undef OPARA__RESULT_CASE
    default: return "unknown opara_result";
    }
}

OPARADEF const char* opara_version_string(void) {
    return OPARA_VERSION_STRING;
}

#ifndef OPARA_NO_STDIO
static const char* opara__level_name(opara_log_level level) {
    switch (level) {
    case OPARA_LOG_ERROR: return "error";
    case OPARA_LOG_WARN: return "warning";
    case OPARA_LOG_INFO: return "info";
    default: return "debug";
    }
}

OPARADEF void opara_log_stderr(opara_log_level level, opara_log_item item, const char* message, void* user_data) {
    (void)item;
    (void)user_data;
    fprintf(stderr, "opara: %s: %s\n", opara__level_name(level), message);
}
#endif

static int opara__log_enabled(const opara_logger* logger, opara_log_level level) {
    opara_log_level max = logger && logger->max_level ? logger->max_level : OPARA_LOG_INFO;
    return logger && logger->func && level <= max;
}

static void opara__logv(const opara_logger* logger, opara_log_level level, opara_log_item item, const char* fmt,
                        va_list args) {
    char line[OPARA__DETAIL_MAX];
    if (!opara__log_enabled(logger, level)) return;
    if (vsnprintf(line, sizeof line, fmt, args) < 0) line[0] = 0;
    logger->func(level, item, line, logger->user_data);
}

OPARA__PRIVATE void opara__log(const opara_logger* logger, opara_log_level level, opara_log_item item, const char* fmt,
                               ...) {
    va_list args;
    va_start(args, fmt);
    opara__logv(logger, level, item, fmt, args);
    va_end(args);
}

OPARA__PRIVATE opara_result opara__fail_into(opara__errbuf* buf, const opara_logger* logger, opara_result code,
                                             const char* fmt, va_list args) {
    if (vsnprintf(buf->text, sizeof buf->text, fmt, args) < 0) buf->text[0] = 0;
    opara__log(logger, OPARA_LOG_ERROR, OPARA_LOGITEM_ERROR_DETAIL, "%s (%s)", buf->text, opara_result_string(code));
    return code;
}

OPARA__PRIVATE opara_result opara__failv(opara_runtime* rt, opara_result code, const char* fmt, va_list args) {
    if (!rt) return code;
    return opara__fail_into(&rt->error, &rt->logger, code, fmt, args);
}

OPARA__PRIVATE opara_result opara__fail(opara_runtime* rt, opara_result code, const char* fmt, ...) {
    va_list args;
    va_start(args, fmt);
    code = opara__failv(rt, code, fmt, args);
    va_end(args);
    return code;
}
/* ==== END src/opara_log.c ==== */
/* ==== BEGIN src/opara_thread.c ==== */
/* Threads, locks, atomics and a monotonic clock over pthreads or Win32. */
/* #include "opara_internal.h" (inlined above) */

#if defined(_WIN32)
#  define WIN32_LEAN_AND_MEAN
#  include <windows.h>
#else
#  include <stdlib.h>
#  include <time.h>
#  include <unistd.h>
#  if !defined(CLOCK_MONOTONIC)
#    include <sys/time.h>
#  endif
#endif

typedef struct opara__thread_start_args {
    opara__thread_fn fn;
    void* arg;
} opara__thread_start_args;

#if defined(_WIN32)

OPARA__PRIVATE int opara__mutex_init(opara__mutex* m) { InitializeSRWLock((PSRWLOCK)&m->srw); return 1; }
OPARA__PRIVATE void opara__mutex_destroy(opara__mutex* m) { (void)m; }
OPARA__PRIVATE void opara__mutex_lock(opara__mutex* m) { AcquireSRWLockExclusive((PSRWLOCK)&m->srw); }
OPARA__PRIVATE void opara__mutex_unlock(opara__mutex* m) { ReleaseSRWLockExclusive((PSRWLOCK)&m->srw); }
OPARA__PRIVATE int opara__cond_init(opara__cond* c) { InitializeConditionVariable((PCONDITION_VARIABLE)&c->cv); return 1; }
OPARA__PRIVATE void opara__cond_destroy(opara__cond* c) { (void)c; }
OPARA__PRIVATE void opara__cond_wait(opara__cond* c, opara__mutex* m) {
    SleepConditionVariableSRW((PCONDITION_VARIABLE)&c->cv, (PSRWLOCK)&m->srw, INFINITE, 0);
}
OPARA__PRIVATE void opara__cond_broadcast(opara__cond* c) { WakeAllConditionVariable((PCONDITION_VARIABLE)&c->cv); }

static DWORD WINAPI opara__thread_main(LPVOID p) {
    opara__thread_start_args args = *(opara__thread_start_args*)p;
    HeapFree(GetProcessHeap(), 0, p);
    args.fn(args.arg);
    return 0;
}

OPARA__PRIVATE int opara__thread_start(opara__thread* t, opara__thread_fn fn, void* arg) {
    opara__thread_start_args* args =
        (opara__thread_start_args*)HeapAlloc(GetProcessHeap(), 0, sizeof(opara__thread_start_args));
    if (!args) return 0;
    args->fn = fn;
    args->arg = arg;
    t->handle = CreateThread(NULL, 0, opara__thread_main, args, 0, NULL);
    if (!t->handle) HeapFree(GetProcessHeap(), 0, args);
    return t->handle != NULL;
}

OPARA__PRIVATE void opara__thread_join(opara__thread* t) {
    WaitForSingleObject((HANDLE)t->handle, INFINITE);
    CloseHandle((HANDLE)t->handle);
}

OPARA__PRIVATE int opara__cpu_count(void) {
    SYSTEM_INFO info;
    GetSystemInfo(&info);
    return info.dwNumberOfProcessors > 0 ? (int)info.dwNumberOfProcessors : 1;
}

OPARA__PRIVATE uint64_t opara__now_ns(void) {
    LARGE_INTEGER freq, now;
    QueryPerformanceFrequency(&freq);
    QueryPerformanceCounter(&now);
    return (uint64_t)((double)now.QuadPart * 1e9 / (double)freq.QuadPart);
}

OPARA__PRIVATE int32_t opara__atomic_load(const volatile int32_t* p) { return InterlockedCompareExchange((volatile LONG*)p, 0, 0); }
OPARA__PRIVATE void opara__atomic_store(volatile int32_t* p, int32_t v) { InterlockedExchange((volatile LONG*)p, v); }
OPARA__PRIVATE int32_t opara__atomic_add(volatile int32_t* p, int32_t d) { return InterlockedAdd((volatile LONG*)p, d); }
OPARA__PRIVATE int opara__atomic_cas(volatile int32_t* p, int32_t expected, int32_t desired) {
    return InterlockedCompareExchange((volatile LONG*)p, desired, expected) == expected;
}

#else

OPARA__PRIVATE int opara__mutex_init(opara__mutex* m) { return pthread_mutex_init(&m->m, NULL) == 0; }
OPARA__PRIVATE void opara__mutex_destroy(opara__mutex* m) { pthread_mutex_destroy(&m->m); }
OPARA__PRIVATE void opara__mutex_lock(opara__mutex* m) { pthread_mutex_lock(&m->m); }
OPARA__PRIVATE void opara__mutex_unlock(opara__mutex* m) { pthread_mutex_unlock(&m->m); }
OPARA__PRIVATE int opara__cond_init(opara__cond* c) { return pthread_cond_init(&c->c, NULL) == 0; }
OPARA__PRIVATE void opara__cond_destroy(opara__cond* c) { pthread_cond_destroy(&c->c); }
OPARA__PRIVATE void opara__cond_wait(opara__cond* c, opara__mutex* m) { pthread_cond_wait(&c->c, &m->m); }
OPARA__PRIVATE void opara__cond_broadcast(opara__cond* c) { pthread_cond_broadcast(&c->c); }

static void* opara__thread_main(void* p) {
    opara__thread_start_args args = *(opara__thread_start_args*)p;
    free(p);
    args.fn(args.arg);
    return NULL;
}

OPARA__PRIVATE int opara__thread_start(opara__thread* t, opara__thread_fn fn, void* arg) {
    opara__thread_start_args* args = (opara__thread_start_args*)malloc(sizeof(opara__thread_start_args));
    if (!args) return 0;
    args->fn = fn;
    args->arg = arg;
    if (pthread_create(&t->t, NULL, opara__thread_main, args) != 0) {
        free(args);
        return 0;
    }
    return 1;
}

OPARA__PRIVATE void opara__thread_join(opara__thread* t) { pthread_join(t->t, NULL); }

OPARA__PRIVATE int opara__cpu_count(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

OPARA__PRIVATE uint64_t opara__now_ns(void) {
#  if defined(CLOCK_MONOTONIC)
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
#  else /* a strict-C TU that included <time.h> before opara.h: wall clock is the best left */
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (uint64_t)tv.tv_sec * 1000000000ull + (uint64_t)tv.tv_usec * 1000ull;
#  endif
}

OPARA__PRIVATE int32_t opara__atomic_load(const volatile int32_t* p) { return __atomic_load_n(p, __ATOMIC_SEQ_CST); }
OPARA__PRIVATE void opara__atomic_store(volatile int32_t* p, int32_t v) { __atomic_store_n(p, v, __ATOMIC_SEQ_CST); }
OPARA__PRIVATE int32_t opara__atomic_add(volatile int32_t* p, int32_t d) { return __atomic_add_fetch(p, d, __ATOMIC_SEQ_CST); }
OPARA__PRIVATE int opara__atomic_cas(volatile int32_t* p, int32_t expected, int32_t desired) {
    return __atomic_compare_exchange_n(p, &expected, desired, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}

#endif
/* ==== END src/opara_thread.c ==== */
/* ==== BEGIN src/opara_runtime.c ==== */
/* The runtime object: allocator, logger, last error. */
/* #include "opara_internal.h" (inlined above) */

OPARADEF opara_result opara_runtime_create(const opara_runtime_desc* desc, opara_runtime** out) {
    opara_runtime_desc defaults;
    opara_runtime* rt;
    if (!out) return OPARA_ERR_INVALID_ARGS;
    *out = NULL;
    memset(&defaults, 0, sizeof defaults);
    if (!desc) desc = &defaults;
    if (!desc->allocator.alloc_fn != !desc->allocator.free_fn) return OPARA_ERR_INVALID_ARGS;
    rt = (opara_runtime*)opara__alloc_aligned(&desc->allocator, sizeof *rt, 16);
    if (!rt) return OPARA_ERR_OUT_OF_MEMORY;
    memset(rt, 0, sizeof *rt);
    rt->allocator = desc->allocator;
    rt->logger = desc->logger;
    *out = rt;
    return OPARA_OK;
}

OPARADEF void opara_runtime_destroy(opara_runtime* runtime) {
    opara_allocator allocator;
    if (!runtime) return;
    allocator = runtime->allocator;
    opara__free_aligned(&allocator, runtime);
}

OPARADEF const char* opara_runtime_last_error(const opara_runtime* runtime) {
    return runtime ? runtime->error.text : "no runtime";
}
/* ==== END src/opara_runtime.c ==== */
/* ==== BEGIN src/opara_ir.h ==== */
/* The graph IR: values (tensors), nodes (operators) with typed attributes, graph inputs and
   outputs, and the derived DAG (consumers, predecessors, successors, topological order).
   Everything a graph owns lives in its pool and is freed with it. */
#ifndef OPARA_IR_H
#define OPARA_IR_H

/* #include "opara_internal.h" (inlined above) */

/* X(ENUM_SUFFIX, "OnnxName"): the operators of the IR. Their attributes are in canonical form:
   whatever ONNX allows as either an attribute or a constant input (axes, split sizes, pads,
   Clip bounds, Slice starts/ends/axes/steps, Reshape/Expand shape, Resize scales/sizes) is an
   attribute here; the importer moves it. Names follow ONNX; see docs/FORMAT.md for the table. */
#define OPARA__OPS(X) \
    X(CONV, "Conv") X(CONV_TRANSPOSE, "ConvTranspose") X(MAX_POOL, "MaxPool") X(AVERAGE_POOL, "AveragePool") \
    X(GLOBAL_AVERAGE_POOL, "GlobalAveragePool") X(BATCH_NORM, "BatchNormalization") X(RELU, "Relu") \
    X(LEAKY_RELU, "LeakyRelu") X(SIGMOID, "Sigmoid") X(TANH, "Tanh") X(HARD_SIGMOID, "HardSigmoid") \
    X(HARD_SWISH, "HardSwish") X(CLIP, "Clip") X(ADD, "Add") X(SUB, "Sub") X(MUL, "Mul") X(DIV, "Div") \
    X(POW, "Pow") X(SQRT, "Sqrt") X(ERF, "Erf") X(GELU, "Gelu") X(CONCAT, "Concat") X(SPLIT, "Split") \
    X(SLICE, "Slice") X(GATHER, "Gather") X(RESHAPE, "Reshape") X(FLATTEN, "Flatten") X(TRANSPOSE, "Transpose") \
    X(SQUEEZE, "Squeeze") X(UNSQUEEZE, "Unsqueeze") X(EXPAND, "Expand") X(GEMM, "Gemm") X(MATMUL, "MatMul") \
    X(SOFTMAX, "Softmax") X(LAYER_NORM, "LayerNormalization") X(REDUCE_MEAN, "ReduceMean") X(WHERE, "Where") \
    X(CAST, "Cast") X(PAD, "Pad") X(RESIZE, "Resize")

#define OPARA__OP_ENUM(id, name) OPARA__OP_##id,
typedef enum opara__op { OPARA__OPS(OPARA__OP_ENUM) OPARA__OP_COUNT } opara__op;
#undef OPARA__OP_ENUM

/* The symbolic batch dimension in declared shapes and in shape-valued attributes (Reshape,
   Expand): replaced by the session's batch size. */
#define OPARA__DIM_BATCH (-(INT64_C(1) << 62))

typedef enum opara__attr_type {
    OPARA__ATTR_INT = 1,
    OPARA__ATTR_FLOAT = 2,
    OPARA__ATTR_INTS = 3,
    OPARA__ATTR_FLOATS = 4,
    OPARA__ATTR_STRING = 5
} opara__attr_type;

typedef struct opara__attr {
    const char* name;
    opara__attr_type type;
    uint32_t count; /* elements of INTS/FLOATS, bytes of STRING (without the NUL) */
    union {
        int64_t i;
        float f;
        const int64_t* ints;
        const float* floats;
        const char* s;
    } v;
} opara__attr;

typedef enum opara__value_kind {
    OPARA__VALUE_ACTIVATION = 0, /* produced by a node */
    OPARA__VALUE_INPUT = 1,      /* a graph input the caller provides */
    OPARA__VALUE_CONST = 2       /* weights and other constants */
} opara__value_kind;

typedef struct opara__shape {
    int32_t ndim;
    int64_t dims[OPARA_MAX_DIMS];
} opara__shape;

typedef struct opara__value {
    const char* name;
    opara_dtype dtype;
    opara__value_kind kind;
    int is_output;
    opara__shape shape;      /* declared for inputs and constants (may hold OPARA__DIM_BATCH); ndim -1 when unknown */
    const void* data;        /* constants: the bytes (in the pool, or in the caller's model buffer) */
    uint64_t nbytes;
    int32_t producer;        /* node index, or -1 */
} opara__value;

typedef struct opara__node {
    opara__op op;
    const char* name;
    uint32_t n_inputs, n_outputs, n_attrs;
    int32_t* inputs;   /* value indices; -1 marks an omitted optional input */
    int32_t* outputs;  /* value indices */
    opara__attr* attrs;
    uint32_t attr_cap;
} opara__node;

typedef struct opara__pool_block opara__pool_block;

typedef struct opara__pool {
    opara__pool_block* head;
    size_t used, cap;
} opara__pool;

typedef struct opara__graph {
    opara_runtime* rt;
    opara__pool pool;
    opara__value* values;
    uint32_t n_values;
    size_t cap_values;
    opara__node* nodes;
    uint32_t n_nodes;
    size_t cap_nodes;
    int32_t* inputs;   /* graph inputs, in order */
    uint32_t n_inputs;
    size_t cap_inputs;
    int32_t* outputs;  /* graph outputs, in order */
    uint32_t n_outputs;
    size_t cap_outputs;
    uint32_t* name_index; /* open addressing over value names: value index + 1, 0 = empty */
    uint32_t name_index_cap;
    const char* producer_name; /* metadata */
    int64_t source_opset;

    /* Derived by opara__graph_finalize(); NULL before. CSR arrays: the consumers of value v are
       consumer_nodes[consumer_start[v] .. consumer_start[v+1]), likewise preds/succs per node
       (distinct nodes, in first-use order of the inputs/outputs). */
    int finalized;
    uint32_t* topo; /* node indices in a deterministic topological order (Kahn, lowest index first) */
    uint32_t* consumer_start;
    uint32_t* consumer_nodes;
    uint32_t* pred_start;
    uint32_t* preds;
    uint32_t* succ_start;
    uint32_t* succs;
} opara__graph;

OPARA__PRIVATE const char* opara__op_name(opara__op op);
/* OPARA__OP_COUNT when the name is not an IR operator. */
OPARA__PRIVATE opara__op opara__op_from_name(const char* name);

/* Pool allocation: lives until the graph is freed; NULL on failure. */
OPARA__PRIVATE void* opara__pool_alloc(opara_runtime* rt, opara__pool* pool, size_t size, size_t alignment);
OPARA__PRIVATE const char* opara__pool_strdup(opara_runtime* rt, opara__pool* pool, const char* s);
OPARA__PRIVATE void opara__pool_free(opara_runtime* rt, opara__pool* pool);

OPARA__PRIVATE void opara__graph_init(opara__graph* g, opara_runtime* rt);
OPARA__PRIVATE void opara__graph_free(opara__graph* g);

/* Adds a value; the name must be unique and non-empty. Returns its index, or -1 with the
   runtime's error set. shape may be NULL (unknown). */
OPARA__PRIVATE int32_t opara__graph_add_value(opara__graph* g, const char* name, opara_dtype dtype,
                                             const opara__shape* shape);
OPARA__PRIVATE int32_t opara__graph_find_value(const opara__graph* g, const char* name);
/* Makes v a constant holding data; copies it into the pool when copy is set, else keeps the pointer. */
OPARA__PRIVATE opara_result opara__graph_set_const(opara__graph* g, int32_t v, const void* data, uint64_t nbytes,
                                                  int copy);
OPARA__PRIVATE opara_result opara__graph_add_input(opara__graph* g, int32_t v);
OPARA__PRIVATE opara_result opara__graph_add_output(opara__graph* g, int32_t v);
/* Adds a node; inputs may contain -1 for omitted optional inputs. Returns the index or -1. */
OPARA__PRIVATE int32_t opara__graph_add_node(opara__graph* g, opara__op op, const char* name, uint32_t n_inputs,
                                            const int32_t* inputs, uint32_t n_outputs, const int32_t* outputs);
OPARA__PRIVATE opara_result opara__node_set_int(opara__graph* g, int32_t node, const char* name, int64_t value);
OPARA__PRIVATE opara_result opara__node_set_float(opara__graph* g, int32_t node, const char* name, float value);
OPARA__PRIVATE opara_result opara__node_set_ints(opara__graph* g, int32_t node, const char* name,
                                                const int64_t* values, uint32_t count);
OPARA__PRIVATE opara_result opara__node_set_floats(opara__graph* g, int32_t node, const char* name,
                                                  const float* values, uint32_t count);
OPARA__PRIVATE opara_result opara__node_set_string(opara__graph* g, int32_t node, const char* name, const char* value);

OPARA__PRIVATE const opara__attr* opara__node_attr(const opara__node* n, const char* name);
OPARA__PRIVATE int64_t opara__attr_int(const opara__node* n, const char* name, int64_t fallback);
OPARA__PRIVATE float opara__attr_float(const opara__node* n, const char* name, float fallback);
/* Pointer to the INTS values (and their count) or NULL when absent or of another type. */
OPARA__PRIVATE const int64_t* opara__attr_ints(const opara__node* n, const char* name, uint32_t* count);
OPARA__PRIVATE const char* opara__attr_string(const opara__node* n, const char* name, const char* fallback);

/* Checks indices and single producers, computes consumers, predecessors, successors and the
   topological order. Fails with OPARA_ERR_CYCLE naming a node on a cycle. Idempotent. */
OPARA__PRIVATE opara_result opara__graph_finalize(opara__graph* g);

#endif /* OPARA_IR_H */
/* ==== END src/opara_ir.h ==== */
/* ==== BEGIN src/opara_graph.c ==== */
/* Graph construction, attribute access, and the derived DAG (consumers, preds, succs, topo order). */
/* #include "opara_ir.h" (inlined above) */

static const char* const opara__op_names[] = {
#define OPARA__OP_NAME(id, name) name,
    OPARA__OPS(OPARA__OP_NAME)
#undef OPARA__OP_NAME
};

OPARA__PRIVATE const char* opara__op_name(opara__op op) {
    return (unsigned)op < OPARA__OP_COUNT ? opara__op_names[op] : "?";
}

OPARA__PRIVATE opara__op opara__op_from_name(const char* name) {
    int i;
    for (i = 0; i < OPARA__OP_COUNT; ++i)
        if (strcmp(opara__op_names[i], name) == 0) return (opara__op)i;
    return OPARA__OP_COUNT;
}

/* ---- pool ------------------------------------------------------------------------------------ */

struct opara__pool_block {
    opara__pool_block* next;
    size_t size;
};

#define OPARA__POOL_BLOCK (64 * 1024)
#define OPARA__POOL_HEADER 64 /* keeps the block's payload 64-byte aligned */

OPARA__PRIVATE void* opara__pool_alloc(opara_runtime* rt, opara__pool* pool, size_t size, size_t alignment) {
    size_t offset = opara__align_up(pool->used, alignment), block_size, need;
    opara__pool_block* block;
    if (alignment > OPARA__POOL_HEADER || !opara__is_pow2(alignment)) return NULL;
    if (pool->head && offset <= pool->cap && size <= pool->cap - offset) {
        pool->used = offset + size;
        return (uint8_t*)pool->head + OPARA__POOL_HEADER + offset;
    }
    if (!opara__add_size(size, OPARA__POOL_HEADER, &need)) return NULL;
    block_size = OPARA__MAX(need, (size_t)OPARA__POOL_BLOCK);
    block = (opara__pool_block*)opara__alloc_aligned(&rt->allocator, block_size, OPARA__POOL_HEADER);
    if (!block) return NULL;
    block->next = pool->head;
    block->size = block_size;
    pool->head = block;
    pool->cap = block_size - OPARA__POOL_HEADER;
    pool->used = size;
    return (uint8_t*)block + OPARA__POOL_HEADER;
}

OPARA__PRIVATE const char* opara__pool_strdup(opara_runtime* rt, opara__pool* pool, const char* s) {
    size_t n = strlen(s) + 1;
    char* copy = (char*)opara__pool_alloc(rt, pool, n, 1);
    if (copy) memcpy(copy, s, n);
    return copy;
}

OPARA__PRIVATE void opara__pool_free(opara_runtime* rt, opara__pool* pool) {
    opara__pool_block* b = pool->head;
    while (b) {
        opara__pool_block* next = b->next;
        opara__free_aligned(&rt->allocator, b);
        b = next;
    }
    memset(pool, 0, sizeof *pool);
}

/* ---- graph ----------------------------------------------------------------------------------- */

OPARA__PRIVATE void opara__graph_init(opara__graph* g, opara_runtime* rt) {
    memset(g, 0, sizeof *g);
    g->rt = rt;
    g->source_opset = 0;
}

static void opara__graph_free_derived(opara__graph* g) {
    opara__free(g->rt, g->topo);
    opara__free(g->rt, g->consumer_start);
    opara__free(g->rt, g->consumer_nodes);
    opara__free(g->rt, g->pred_start);
    opara__free(g->rt, g->preds);
    opara__free(g->rt, g->succ_start);
    opara__free(g->rt, g->succs);
    g->topo = g->consumer_start = g->consumer_nodes = NULL;
    g->pred_start = g->preds = g->succ_start = g->succs = NULL;
    g->finalized = 0;
}

OPARA__PRIVATE void opara__graph_free(opara__graph* g) {
    uint32_t i;
    if (!g->rt) return;
    opara__graph_free_derived(g);
    for (i = 0; i < g->n_nodes; ++i) opara__free(g->rt, g->nodes[i].attrs);
    opara__free(g->rt, g->values);
    opara__free(g->rt, g->nodes);
    opara__free(g->rt, g->inputs);
    opara__free(g->rt, g->outputs);
    opara__free(g->rt, g->name_index);
    opara__pool_free(g->rt, &g->pool);
    memset(g, 0, sizeof *g);
}

static uint32_t opara__name_slot(const opara__graph* g, const char* name) {
    return (uint32_t)opara__hash64(name, strlen(name), 0) & (g->name_index_cap - 1);
}

OPARA__PRIVATE int32_t opara__graph_find_value(const opara__graph* g, const char* name) {
    uint32_t slot;
    if (!g->name_index_cap) return -1;
    for (slot = opara__name_slot(g, name);; slot = (slot + 1) & (g->name_index_cap - 1)) {
        uint32_t entry = g->name_index[slot];
        if (!entry) return -1;
        if (strcmp(g->values[entry - 1].name, name) == 0) return (int32_t)(entry - 1);
    }
}

static void opara__name_insert(opara__graph* g, uint32_t value) {
    uint32_t slot = opara__name_slot(g, g->values[value].name);
    while (g->name_index[slot]) slot = (slot + 1) & (g->name_index_cap - 1);
    g->name_index[slot] = value + 1;
}

/* Keeps the name table at most half full. */
static opara_result opara__name_reserve(opara__graph* g, uint32_t n_values) {
    uint32_t cap = g->name_index_cap ? g->name_index_cap : 64, i;
    uint32_t* table;
    if ((uint64_t)n_values * 2 <= g->name_index_cap) return OPARA_OK;
    while ((uint64_t)n_values * 2 > cap) {
        if (cap > 0x40000000u) return OPARA_ERR_LIMIT_EXCEEDED;
        cap *= 2;
    }
    table = (uint32_t*)opara__calloc(g->rt, cap, sizeof *table);
    if (!table) return OPARA_ERR_OUT_OF_MEMORY;
    opara__free(g->rt, g->name_index);
    g->name_index = table;
    g->name_index_cap = cap;
    for (i = 0; i < g->n_values; ++i) opara__name_insert(g, i);
    return OPARA_OK;
}

OPARA__PRIVATE int32_t opara__graph_add_value(opara__graph* g, const char* name, opara_dtype dtype,
                                             const opara__shape* shape) {
    opara__value* v;
    if (!name || !name[0]) return opara__fail(g->rt, OPARA_ERR_INVALID_ARGS, "a tensor needs a non-empty name"), -1;
    if (opara__graph_find_value(g, name) >= 0)
        return opara__fail(g->rt, OPARA_ERR_INVALID_ARGS, "tensor name '%s' is used twice", name), -1;
    if (shape && (shape->ndim < -1 || shape->ndim > OPARA_MAX_DIMS))
        return opara__fail(g->rt, OPARA_ERR_LIMIT_EXCEEDED, "tensor '%s' has rank %d (max %d)", name,
                           (int)shape->ndim, OPARA_MAX_DIMS), -1;
    if (g->n_values >= 0x7fffffffu) return opara__fail(g->rt, OPARA_ERR_LIMIT_EXCEEDED, "too many tensors"), -1;
    if (opara__grow(g->rt, (void**)&g->values, &g->cap_values, g->n_values + 1, sizeof *g->values) != OPARA_OK ||
        opara__name_reserve(g, g->n_values + 1) != OPARA_OK)
        return opara__fail(g->rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory adding tensor '%s'", name), -1;
    v = &g->values[g->n_values];
    memset(v, 0, sizeof *v);
    v->name = opara__pool_strdup(g->rt, &g->pool, name);
    if (!v->name) return opara__fail(g->rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory adding tensor '%s'", name), -1;
    v->dtype = dtype;
    v->producer = -1;
    if (shape) v->shape = *shape;
    else v->shape.ndim = -1;
    opara__name_insert(g, g->n_values);
    return (int32_t)g->n_values++;
}

static int opara__value_ok(const opara__graph* g, int32_t v) {
    return v >= 0 && (uint32_t)v < g->n_values;
}

OPARA__PRIVATE opara_result opara__graph_set_const(opara__graph* g, int32_t v, const void* data, uint64_t nbytes,
                                                  int copy) {
    opara__value* val;
    if (!opara__value_ok(g, v)) return opara__fail(g->rt, OPARA_ERR_BAD_INDEX, "constant: tensor %d does not exist", v);
    val = &g->values[v];
    if (copy && nbytes) {
        void* owned;
        if (nbytes > (uint64_t)(size_t)-1 || !(owned = opara__pool_alloc(g->rt, &g->pool, (size_t)nbytes, 64)))
            return opara__fail(g->rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory for constant '%s' (%llu bytes)",
                               val->name, (unsigned long long)nbytes);
        memcpy(owned, data, (size_t)nbytes);
        data = owned;
    }
    val->kind = OPARA__VALUE_CONST;
    val->data = data;
    val->nbytes = nbytes;
    return OPARA_OK;
}

static opara_result opara__append_index(opara__graph* g, int32_t** list, uint32_t* n, size_t* cap, int32_t v) {
    if (opara__grow(g->rt, (void**)list, cap, *n + 1, sizeof **list) != OPARA_OK)
        return opara__fail(g->rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory");
    (*list)[(*n)++] = v;
    return OPARA_OK;
}

OPARA__PRIVATE opara_result opara__graph_add_input(opara__graph* g, int32_t v) {
    if (!opara__value_ok(g, v)) return opara__fail(g->rt, OPARA_ERR_BAD_INDEX, "input: tensor %d does not exist", v);
    g->values[v].kind = OPARA__VALUE_INPUT;
    return opara__append_index(g, &g->inputs, &g->n_inputs, &g->cap_inputs, v);
}

OPARA__PRIVATE opara_result opara__graph_add_output(opara__graph* g, int32_t v) {
    if (!opara__value_ok(g, v)) return opara__fail(g->rt, OPARA_ERR_BAD_INDEX, "output: tensor %d does not exist", v);
    g->values[v].is_output = 1;
    return opara__append_index(g, &g->outputs, &g->n_outputs, &g->cap_outputs, v);
}

static int32_t* opara__pool_indices(opara__graph* g, const int32_t* src, uint32_t n) {
    int32_t* copy = (int32_t*)opara__pool_alloc(g->rt, &g->pool, (size_t)n * sizeof(int32_t) + 1, 4);
    if (copy && n) memcpy(copy, src, (size_t)n * sizeof(int32_t));
    return copy;
}

OPARA__PRIVATE int32_t opara__graph_add_node(opara__graph* g, opara__op op, const char* name, uint32_t n_inputs,
                                            const int32_t* inputs, uint32_t n_outputs, const int32_t* outputs) {
    opara__node* node;
    uint32_t i;
    if ((unsigned)op >= OPARA__OP_COUNT)
        return opara__fail(g->rt, OPARA_ERR_BAD_ENUM, "node '%s': unknown operator %d", name ? name : "", (int)op), -1;
    for (i = 0; i < n_inputs; ++i)
        if (inputs[i] != -1 && !opara__value_ok(g, inputs[i]))
            return opara__fail(g->rt, OPARA_ERR_BAD_INDEX, "node '%s' input %u: tensor %d does not exist",
                               name ? name : "", i, inputs[i]), -1;
    for (i = 0; i < n_outputs; ++i) {
        if (!opara__value_ok(g, outputs[i]))
            return opara__fail(g->rt, OPARA_ERR_BAD_INDEX, "node '%s' output %u: tensor %d does not exist",
                               name ? name : "", i, outputs[i]), -1;
        if (g->values[outputs[i]].producer >= 0 || g->values[outputs[i]].kind != OPARA__VALUE_ACTIVATION)
            return opara__fail(g->rt, OPARA_ERR_CORRUPT, "node '%s': tensor '%s' already has a producer",
                               name ? name : "", g->values[outputs[i]].name), -1;
    }
    if (g->n_nodes >= 0x7fffffffu) return opara__fail(g->rt, OPARA_ERR_LIMIT_EXCEEDED, "too many nodes"), -1;
    if (opara__grow(g->rt, (void**)&g->nodes, &g->cap_nodes, g->n_nodes + 1, sizeof *g->nodes) != OPARA_OK)
        return opara__fail(g->rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory adding a node"), -1;
    node = &g->nodes[g->n_nodes];
    memset(node, 0, sizeof *node);
    node->op = op;
    node->name = opara__pool_strdup(g->rt, &g->pool, name ? name : "");
    node->inputs = opara__pool_indices(g, inputs, n_inputs);
    node->outputs = opara__pool_indices(g, outputs, n_outputs);
    if (!node->name || !node->inputs || !node->outputs)
        return opara__fail(g->rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory adding a node"), -1;
    node->n_inputs = n_inputs;
    node->n_outputs = n_outputs;
    for (i = 0; i < n_outputs; ++i) g->values[outputs[i]].producer = (int32_t)g->n_nodes;
    if (g->finalized) opara__graph_free_derived(g);
    return (int32_t)g->n_nodes++;
}

/* Returns the attribute slot for name on node (replacing an existing one), or NULL. */
static opara__attr* opara__attr_slot(opara__graph* g, int32_t node, const char* name) {
    opara__node* n;
    uint32_t i;
    size_t cap;
    if (node < 0 || (uint32_t)node >= g->n_nodes) return NULL;
    n = &g->nodes[node];
    for (i = 0; i < n->n_attrs; ++i)
        if (strcmp(n->attrs[i].name, name) == 0) return &n->attrs[i];
    cap = n->attr_cap;
    if (opara__grow(g->rt, (void**)&n->attrs, &cap, n->n_attrs + 1, sizeof *n->attrs) != OPARA_OK) return NULL;
    n->attr_cap = (uint32_t)cap;
    n->attrs[n->n_attrs].name = opara__pool_strdup(g->rt, &g->pool, name);
    if (!n->attrs[n->n_attrs].name) return NULL;
    return &n->attrs[n->n_attrs++];
}

static opara_result opara__attr_oom(opara__graph* g, int32_t node, const char* name) {
    return opara__fail(g->rt, OPARA_ERR_OUT_OF_MEMORY, "node %d: cannot store attribute '%s'", node, name);
}

OPARA__PRIVATE opara_result opara__node_set_int(opara__graph* g, int32_t node, const char* name, int64_t value) {
    opara__attr* a = opara__attr_slot(g, node, name);
    if (!a) return opara__attr_oom(g, node, name);
    a->type = OPARA__ATTR_INT;
    a->count = 1;
    a->v.i = value;
    return OPARA_OK;
}

OPARA__PRIVATE opara_result opara__node_set_float(opara__graph* g, int32_t node, const char* name, float value) {
    opara__attr* a = opara__attr_slot(g, node, name);
    if (!a) return opara__attr_oom(g, node, name);
    a->type = OPARA__ATTR_FLOAT;
    a->count = 1;
    a->v.f = value;
    return OPARA_OK;
}

static opara__attr* opara__attr_array(opara__graph* g, int32_t node, const char* name, const void* values,
                                      uint32_t count, size_t elem) {
    opara__attr* a = opara__attr_slot(g, node, name);
    void* copy;
    if (!a) return NULL;
    copy = opara__pool_alloc(g->rt, &g->pool, (size_t)count * elem + 1, 8);
    if (!copy) return NULL;
    if (count) memcpy(copy, values, (size_t)count * elem);
    a->count = count;
    a->v.ints = (const int64_t*)copy;
    return a;
}

OPARA__PRIVATE opara_result opara__node_set_ints(opara__graph* g, int32_t node, const char* name,
                                                const int64_t* values, uint32_t count) {
    opara__attr* a = opara__attr_array(g, node, name, values, count, sizeof(int64_t));
    if (!a) return opara__attr_oom(g, node, name);
    a->type = OPARA__ATTR_INTS;
    return OPARA_OK;
}

OPARA__PRIVATE opara_result opara__node_set_floats(opara__graph* g, int32_t node, const char* name,
                                                  const float* values, uint32_t count) {
    opara__attr* a = opara__attr_array(g, node, name, values, count, sizeof(float));
    if (!a) return opara__attr_oom(g, node, name);
    a->type = OPARA__ATTR_FLOATS;
    a->v.floats = (const float*)a->v.ints;
    return OPARA_OK;
}

OPARA__PRIVATE opara_result opara__node_set_string(opara__graph* g, int32_t node, const char* name, const char* value) {
    uint32_t len = (uint32_t)strlen(value);
    opara__attr* a = opara__attr_array(g, node, name, value, len + 1, 1);
    if (!a) return opara__attr_oom(g, node, name);
    a->type = OPARA__ATTR_STRING;
    a->count = len;
    a->v.s = (const char*)a->v.ints;
    return OPARA_OK;
}

OPARA__PRIVATE const opara__attr* opara__node_attr(const opara__node* n, const char* name) {
    uint32_t i;
    for (i = 0; i < n->n_attrs; ++i)
        if (strcmp(n->attrs[i].name, name) == 0) return &n->attrs[i];
    return NULL;
}

OPARA__PRIVATE int64_t opara__attr_int(const opara__node* n, const char* name, int64_t fallback) {
    const opara__attr* a = opara__node_attr(n, name);
    return a && a->type == OPARA__ATTR_INT ? a->v.i : fallback;
}

OPARA__PRIVATE float opara__attr_float(const opara__node* n, const char* name, float fallback) {
    const opara__attr* a = opara__node_attr(n, name);
    return a && a->type == OPARA__ATTR_FLOAT ? a->v.f : fallback;
}

OPARA__PRIVATE const int64_t* opara__attr_ints(const opara__node* n, const char* name, uint32_t* count) {
    const opara__attr* a = opara__node_attr(n, name);
    if (!a || a->type != OPARA__ATTR_INTS) {
        *count = 0;
        return NULL;
    }
    *count = a->count;
    return a->v.ints;
}

OPARA__PRIVATE const char* opara__attr_string(const opara__node* n, const char* name, const char* fallback) {
    const opara__attr* a = opara__node_attr(n, name);
    return a && a->type == OPARA__ATTR_STRING ? a->v.s : fallback;
}

/* ---- derived DAG ----------------------------------------------------------------------------- */

static uint32_t* opara__u32_array(opara__graph* g, size_t n) {
    return (uint32_t*)opara__calloc(g->rt, n + 1, sizeof(uint32_t));
}

static opara_result opara__build_consumers(opara__graph* g) {
    uint32_t n, i, total = 0;
    g->consumer_start = opara__u32_array(g, (size_t)g->n_values + 1);
    if (!g->consumer_start) return OPARA_ERR_OUT_OF_MEMORY;
    for (n = 0; n < g->n_nodes; ++n)
        for (i = 0; i < g->nodes[n].n_inputs; ++i)
            if (g->nodes[n].inputs[i] >= 0) g->consumer_start[g->nodes[n].inputs[i] + 1]++, total++;
    for (i = 0; i < g->n_values; ++i) g->consumer_start[i + 1] += g->consumer_start[i];
    g->consumer_nodes = opara__u32_array(g, total);
    if (!g->consumer_nodes) return OPARA_ERR_OUT_OF_MEMORY;
    {
        uint32_t* fill = opara__u32_array(g, g->n_values);
        if (!fill) return OPARA_ERR_OUT_OF_MEMORY;
        for (n = 0; n < g->n_nodes; ++n)
            for (i = 0; i < g->nodes[n].n_inputs; ++i) {
                int32_t v = g->nodes[n].inputs[i];
                if (v >= 0) g->consumer_nodes[g->consumer_start[v] + fill[v]++] = n;
            }
        opara__free(g->rt, fill);
    }
    return OPARA_OK;
}

/* Distinct producer nodes of each node's inputs, in input order; stamp[] dedups. */
static opara_result opara__build_preds(opara__graph* g, uint32_t* stamp) {
    uint32_t n, i, total = 0;
    g->pred_start = opara__u32_array(g, (size_t)g->n_nodes + 1);
    for (n = 0; n < g->n_nodes; ++n) total += g->nodes[n].n_inputs;
    g->preds = opara__u32_array(g, total);
    if (!g->pred_start || !g->preds) return OPARA_ERR_OUT_OF_MEMORY;
    total = 0;
    for (n = 0; n < g->n_nodes; ++n) {
        g->pred_start[n] = total;
        for (i = 0; i < g->nodes[n].n_inputs; ++i) {
            int32_t v = g->nodes[n].inputs[i];
            int32_t p = v >= 0 ? g->values[v].producer : -1;
            if (p < 0 || stamp[p] == n + 1) continue;
            stamp[p] = n + 1;
            g->preds[total++] = (uint32_t)p;
        }
    }
    g->pred_start[g->n_nodes] = total;
    return OPARA_OK;
}

/* Successors in the order their consumer nodes were added, derived from preds. */
static opara_result opara__build_succs(opara__graph* g) {
    uint32_t n, k, total = g->pred_start[g->n_nodes];
    uint32_t* fill;
    g->succ_start = opara__u32_array(g, (size_t)g->n_nodes + 1);
    g->succs = opara__u32_array(g, total);
    fill = opara__u32_array(g, g->n_nodes);
    if (!g->succ_start || !g->succs || !fill) {
        opara__free(g->rt, fill);
        return OPARA_ERR_OUT_OF_MEMORY;
    }
    for (k = 0; k < total; ++k) g->succ_start[g->preds[k] + 1]++;
    for (n = 0; n < g->n_nodes; ++n) g->succ_start[n + 1] += g->succ_start[n];
    for (n = 0; n < g->n_nodes; ++n)
        for (k = g->pred_start[n]; k < g->pred_start[n + 1]; ++k) {
            uint32_t p = g->preds[k];
            g->succs[g->succ_start[p] + fill[p]++] = n;
        }
    opara__free(g->rt, fill);
    return OPARA_OK;
}

/* Kahn's algorithm taking the lowest ready index first (a binary heap), so the order is
   deterministic and equals insertion order whenever that order is already topological. */
static void opara__heap_push(uint32_t* heap, uint32_t* size, uint32_t x) {
    uint32_t i = (*size)++;
    while (i > 0 && heap[(i - 1) / 2] > x) {
        heap[i] = heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    heap[i] = x;
}

static uint32_t opara__heap_pop(uint32_t* heap, uint32_t* size) {
    uint32_t top = heap[0], x = heap[--(*size)], i = 0;
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= *size) break;
        if (c + 1 < *size && heap[c + 1] < heap[c]) ++c;
        if (heap[c] >= x) break;
        heap[i] = heap[c];
        i = c;
    }
    if (*size) heap[i] = x;
    return top;
}

static opara_result opara__build_topo(opara__graph* g, uint32_t* indegree, uint32_t* heap) {
    uint32_t n, k, heap_size = 0, emitted = 0;
    g->topo = opara__u32_array(g, g->n_nodes);
    if (!g->topo) return OPARA_ERR_OUT_OF_MEMORY;
    for (n = 0; n < g->n_nodes; ++n) {
        indegree[n] = g->pred_start[n + 1] - g->pred_start[n];
        if (!indegree[n]) opara__heap_push(heap, &heap_size, n);
    }
    while (heap_size) {
        uint32_t u = opara__heap_pop(heap, &heap_size);
        g->topo[emitted++] = u;
        for (k = g->succ_start[u]; k < g->succ_start[u + 1]; ++k)
            if (--indegree[g->succs[k]] == 0) opara__heap_push(heap, &heap_size, g->succs[k]);
    }
    if (emitted == g->n_nodes) return OPARA_OK;
    for (n = 0; n < g->n_nodes; ++n)
        if (indegree[n])
            return opara__fail(g->rt, OPARA_ERR_CYCLE, "node %u '%s' (%s) lies on a cycle", n, g->nodes[n].name,
                               opara__op_name(g->nodes[n].op));
    return OPARA_ERR_INTERNAL;
}

OPARA__PRIVATE opara_result opara__graph_finalize(opara__graph* g) {
    uint32_t* scratch;
    opara_result r;
    if (g->finalized) return OPARA_OK;
    opara__graph_free_derived(g);
    scratch = opara__u32_array(g, (size_t)g->n_nodes * 2);
    if (!scratch) return opara__fail(g->rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory analysing the graph");
    r = opara__build_consumers(g);
    if (r == OPARA_OK) r = opara__build_preds(g, scratch);
    if (r == OPARA_OK) r = opara__build_succs(g);
    if (r == OPARA_OK) r = opara__build_topo(g, scratch, scratch + g->n_nodes);
    opara__free(g->rt, scratch);
    if (r == OPARA_ERR_OUT_OF_MEMORY) r = opara__fail(g->rt, r, "out of memory analysing the graph");
    if (r != OPARA_OK) {
        opara__graph_free_derived(g);
        return r;
    }
    g->finalized = 1;
    return OPARA_OK;
}
/* ==== END src/opara_graph.c ==== */
/* ==== BEGIN src/opara_model.h ==== */
/* The model object, the .opara reader and writer, shape and dtype inference, and reachability
   queries on the DAG. Private; the public side is the model/builder section of opara_api.h. */
#ifndef OPARA_MODEL_H
#define OPARA_MODEL_H

/* #include "opara_ir.h" (inlined above) */

/* ---- the .opara format (docs/FORMAT.md is the specification) --------------------------------- */

#define OPARA__FORMAT_MAGIC "\x89OPR\r\n\x1a\n"
#define OPARA__FORMAT_MAGIC_SIZE 8
#define OPARA__FORMAT_MAJOR 1
#define OPARA__FORMAT_MINOR 0
#define OPARA__FORMAT_MIN_MAJOR 1
#define OPARA__FORMAT_HEADER_SIZE 192
#define OPARA__FORMAT_TENSOR_SIZE 96
#define OPARA__FORMAT_NODE_SIZE 32
#define OPARA__FORMAT_ATTR_SIZE 24
#define OPARA__FORMAT_STRING_SIZE 8
#define OPARA__FORMAT_MAX_RANK 8
#define OPARA__FORMAT_RANK_UNKNOWN 0xFFu
#define OPARA__FORMAT_NONE 0xFFFFFFFFu       /* "no string" / omitted input */
#define OPARA__FORMAT_DIM_BATCH (-1)         /* the symbolic batch dimension in the file */
#define OPARA__FORMAT_MIN_ALIGN 16u
#define OPARA__FORMAT_MAX_ALIGN 65536u
/* Must-understand flags (bits 0..15) this reader knows; none are defined in 1.0. */
#define OPARA__FORMAT_KNOWN_REQUIRED_FLAGS 0x0000u
#define OPARA__FORMAT_REQUIRED_MASK 0xFFFFu

/* Header byte offsets. */
#define OPARA__HDR_VER_MAJOR 8
#define OPARA__HDR_VER_MINOR 10
#define OPARA__HDR_HEADER_SIZE 12
#define OPARA__HDR_FLAGS 16
#define OPARA__HDR_ALIGNMENT 20
#define OPARA__HDR_N_STRINGS 24
#define OPARA__HDR_N_TENSORS 28
#define OPARA__HDR_N_NODES 32
#define OPARA__HDR_N_ATTRS 36
#define OPARA__HDR_N_REFS 40
#define OPARA__HDR_N_INPUTS 44
#define OPARA__HDR_N_OUTPUTS 48
#define OPARA__HDR_IO_REF 52
#define OPARA__HDR_PRODUCER 56
#define OPARA__HDR_RESERVED 60
#define OPARA__HDR_OPSET 64
#define OPARA__HDR_HASH 72
#define OPARA__HDR_STRINGS_OFF 80
#define OPARA__HDR_STRBYTES_OFF 88
#define OPARA__HDR_STRBYTES_SIZE 96
#define OPARA__HDR_TENSORS_OFF 104
#define OPARA__HDR_NODES_OFF 112
#define OPARA__HDR_ATTRS_OFF 120
#define OPARA__HDR_REFS_OFF 128
#define OPARA__HDR_PAYLOAD_OFF 136
#define OPARA__HDR_PAYLOAD_SIZE 144
#define OPARA__HDR_DATA_OFF 152
#define OPARA__HDR_DATA_SIZE 160
#define OPARA__HDR_TOTAL_SIZE 168

/* A byte buffer owned by the runtime's allocator (aligned to `alignment`). */
typedef struct opara__bytes {
    uint8_t* data;
    size_t size;
} opara__bytes;

/* Serializes g (which must pass opara__graph_validate; dtypes of activations must be known)
   into a new buffer: deterministic, the same graph gives the same bytes. alignment 0 means 64. */
OPARA__PRIVATE opara_result opara__format_write(opara_runtime* rt, const opara__graph* g, uint32_t alignment,
                                               opara__bytes* out);
/* Parses and validates an image into g (initialised by the caller). Names and constants point
   into `data`, which must outlive g and be aligned to the file's alignment (else BAD_ALIGNMENT).
   Fills *alignment and *hash from the header. */
OPARA__PRIVATE opara_result opara__format_read(opara_runtime* rt, const uint8_t* data, size_t size, opara__graph* g,
                                              uint32_t* alignment, uint64_t* hash);
/* Reads only the header's alignment field (0 when the header is unusable). */
OPARA__PRIVATE uint32_t opara__format_peek_alignment(const uint8_t* data, size_t size);

/* Semantic checks shared by the loader, the builder and the converter: names, kinds, constant
   sizes against dtype and shape, producers, graph inputs/outputs, per-op attribute types,
   acyclicity (finalizes g), data types (activations with OPARA_DTYPE_UNDEFINED are filled in;
   a declared dtype that disagrees is OPARA_ERR_BAD_DTYPE) and shapes at batch 1. */
OPARA__PRIVATE opara_result opara__graph_validate(opara__graph* g);

/* ---- the model object ------------------------------------------------------------------------ */

struct opara_model {
    opara_runtime* rt;
    opara__graph graph;      /* finalized and validated */
    uint8_t* owned;          /* aligned copy of the image (or NULL) */
    void* map_base;          /* file mapping (or NULL) */
    size_t map_size;
    void* map_handle;        /* Win32 mapping handle */
    const uint8_t* image;    /* the .opara bytes the graph points into (NULL when built in memory) */
    size_t image_size;
    uint32_t alignment;
    uint64_t content_hash;
    int zero_copy;
};

/* Makes a model from g, which is moved into it (g is left empty, also on failure, when it is
   freed). Validates with opara__graph_validate. */
OPARA__PRIVATE opara_result opara__model_from_graph(opara_runtime* rt, opara__graph* g, opara_model** out);
OPARA__PRIVATE const opara__graph* opara__model_graph(const opara_model* model);

/* ---- shapes and data types ------------------------------------------------------------------- */

/* Output dtype of every value (inputs and constants as declared) following each op's ONNX
   rule (Cast: attr "to"; Where: input 1; Gather: input 0; comparison-free IR, so most ops keep
   input 0's type). g must be finalized. dtypes has g->n_values entries. */
OPARA__PRIVATE opara_result opara__infer_dtypes(opara_runtime* rt, const opara__graph* g, opara_dtype* dtypes);
/* Shape of every value for the given batch size (OPARA__DIM_BATCH in declared shapes and in
   Reshape/Expand shape attributes becomes `batch`), with ONNX semantics. g must be finalized.
   Errors (OPARA_ERR_SHAPE, ...) name the node, its op and the offending shapes. */
OPARA__PRIVATE opara_result opara__infer_shapes(opara_runtime* rt, const opara__graph* g, int64_t batch,
                                               opara__shape* shapes);
/* Number of elements (1 for a scalar); -1 on overflow or a negative dim. */
OPARA__PRIVATE int64_t opara__shape_numel(const opara__shape* s);
/* "[1, 3, 224, 224]" (or "[?]" for an unknown shape) into buf. */
OPARA__PRIVATE const char* opara__shape_str(const opara__shape* s, char* buf, size_t cap);

/* ---- reachability on the DAG of a finalized graph -------------------------------------------- */

/* Transitive closure as one bitset row per node: bit b of row a is set when a path of one or
   more edges leads from node a to node b. */
typedef struct opara__closure {
    uint32_t n;
    uint32_t words;   /* 64-bit words per row */
    uint64_t* bits;
} opara__closure;

#define OPARA__CLOSURE_MAX_NODES 65536u

OPARA__PRIVATE opara_result opara__closure_build(opara_runtime* rt, const opara__graph* g, opara__closure* out);
OPARA__PRIVATE void opara__closure_free(opara_runtime* rt, opara__closure* c);
OPARA__PRIVATE int opara__closure_reaches(const opara__closure* c, uint32_t a, uint32_t b);
/* One query by depth-first search (no closure needed): 1 if a path leads from node a to node b
   (a != b), 0 if not, negative opara_result on failure. */
OPARA__PRIVATE int opara__graph_reaches(const opara__graph* g, uint32_t a, uint32_t b);
/* Maximum antichain of the DAG (largest set of nodes no two of which are ordered): the
   parallelism available. Exact, by Dilworth's theorem (= minimum chain cover of the closure =
   n - maximum bipartite matching, Hopcroft-Karp). If antichain is not NULL it receives the
   nodes of one maximum antichain (g->n_nodes entries of room), *width their count. */
OPARA__PRIVATE opara_result opara__graph_max_width(opara_runtime* rt, const opara__graph* g, uint32_t* width,
                                                  uint32_t* antichain);

#endif /* OPARA_MODEL_H */
/* ==== END src/opara_model.h ==== */
/* ==== BEGIN src/opara_shape.c ==== */
/* Shape and data-type inference for every IR operator, following the ONNX operator specs.
   Every attribute and shape is hostile until checked: arithmetic is overflow-checked and dims
   are bounded by OPARA__SHAPE_DIM_MAX, so no input can crash it. */
/* #include "opara_model.h" (inlined above) */

#include <stdio.h>

#define OPARA__SHAPE_DIM_MAX (INT64_C(1) << 40)
#define OPARA__SHAPE_NUMEL_MAX (INT64_C(1) << 56)

OPARA__PRIVATE int64_t opara__shape_numel(const opara__shape* s) {
    int64_t n = 1;
    int32_t i;
    if (s->ndim < 0) return -1;
    for (i = 0; i < s->ndim; ++i)
        if (!opara__mul_i64(n, s->dims[i], &n)) return -1;
    return n;
}

OPARA__PRIVATE const char* opara__shape_str(const opara__shape* s, char* buf, size_t cap) {
    size_t len;
    int32_t i;
    if (s->ndim < 0) {
        opara__format(buf, cap, "[?]");
        return buf;
    }
    len = opara__format(buf, cap, "[");
    for (i = 0; i < s->ndim && len < cap; ++i) {
        if (s->dims[i] == OPARA__DIM_BATCH) len += opara__format(buf + len, cap - len, "%sN", i ? ", " : "");
        else len += opara__format(buf + len, cap - len, "%s%lld", i ? ", " : "", (long long)s->dims[i]);
    }
    if (len < cap) opara__format(buf + len, cap - len, "]");
    return buf;
}

/* ---- context and failures -------------------------------------------------------------------- */

typedef struct opara__shape_ctx {
    opara_runtime* rt;
    const opara__graph* g;
    uint32_t node_index;
    const opara__node* n;
    int64_t batch;
    const opara__shape* in[OPARA_MAX_NODE_IO]; /* NULL for an omitted input */
    opara__shape* out[OPARA_MAX_NODE_IO];
} opara__shape_ctx;

static opara_result opara__shape_fail(opara__shape_ctx* c, opara_result code, const char* fmt, ...) OPARA__PRINTF(3, 4);
static opara_result opara__shape_fail(opara__shape_ctx* c, opara_result code, const char* fmt, ...) {
    char detail[OPARA__DETAIL_MAX];
    va_list args;
    va_start(args, fmt);
    if (vsnprintf(detail, sizeof detail, fmt, args) < 0) detail[0] = 0;
    va_end(args);
    return opara__fail(c->rt, code, "node %u '%s' (%s): %s", c->node_index, c->n->name ? c->n->name : "",
                       opara__op_name(c->n->op), detail);
}

/* "input 0 [1, 3, 224, 224]" style fragments need a buffer per shape. */
typedef struct opara__sbuf {
    char s[4][160];
} opara__sbuf;

static const char* opara__sh(opara__sbuf* b, int slot, const opara__shape* s) {
    return opara__shape_str(s, b->s[slot], sizeof b->s[slot]);
}

static int opara__norm_axis(int64_t axis, int64_t rank, int64_t* out) {
    if (axis < -rank || axis >= rank) return 0;
    *out = axis < 0 ? axis + rank : axis;
    return 1;
}

static opara_result opara__axis_arg(opara__shape_ctx* c, const char* attr, int64_t fallback, int64_t rank,
                                    int64_t* axis) {
    int64_t a = opara__attr_int(c->n, attr, fallback);
    if (!opara__norm_axis(a, rank, axis))
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "%s %lld is out of range for rank %lld", attr, (long long)a,
                                 (long long)rank);
    return OPARA_OK;
}

/* Checks an output shape's dims and element count and stores it. */
static opara_result opara__set_out(opara__shape_ctx* c, uint32_t k, const opara__shape* s) {
    int32_t i;
    int64_t numel;
    char buf[160];
    if (s->ndim > OPARA_MAX_DIMS)
        return opara__shape_fail(c, OPARA_ERR_LIMIT_EXCEEDED, "output %u would have rank %d (max %d)", k, (int)s->ndim,
                                 OPARA_MAX_DIMS);
    for (i = 0; i < s->ndim; ++i)
        if (s->dims[i] < 0 || s->dims[i] > OPARA__SHAPE_DIM_MAX)
            return opara__shape_fail(c, s->dims[i] < 0 ? OPARA_ERR_SHAPE : OPARA_ERR_LIMIT_EXCEEDED,
                                     "output %u would have shape %s", k, opara__shape_str(s, buf, sizeof buf));
    numel = opara__shape_numel(s);
    if (numel < 0 || numel > OPARA__SHAPE_NUMEL_MAX)
        return opara__shape_fail(c, OPARA_ERR_LIMIT_EXCEEDED, "output %u shape %s has too many elements", k,
                                 opara__shape_str(s, buf, sizeof buf));
    *c->out[k] = *s;
    return OPARA_OK;
}

/* ---- broadcasting ---------------------------------------------------------------------------- */

/* Multidirectional (numpy) broadcasting of a and b into out; 0 when incompatible. */
static int opara__broadcast(const opara__shape* a, const opara__shape* b, opara__shape* out) {
    int32_t r = OPARA__MAX(a->ndim, b->ndim), i;
    out->ndim = r;
    for (i = 0; i < r; ++i) {
        int32_t ia = i - (r - a->ndim), ib = i - (r - b->ndim);
        int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
        if (da == db || db == 1) out->dims[i] = da;
        else if (da == 1) out->dims[i] = db;
        else return 0;
    }
    return 1;
}

static opara_result opara__shape_broadcast(opara__shape_ctx* c) {
    opara__shape acc = *c->in[0], next;
    opara__sbuf b;
    uint32_t k;
    for (k = 1; k < c->n->n_inputs; ++k) {
        if (!opara__broadcast(&acc, c->in[k], &next))
            return opara__shape_fail(c, OPARA_ERR_SHAPE, "shapes %s and %s (input %u) do not broadcast", opara__sh(&b, 0, &acc),
                                     opara__sh(&b, 1, c->in[k]), k);
        acc = next;
    }
    return opara__set_out(c, 0, &acc);
}

/* ---- convolution and pooling ----------------------------------------------------------------- */

typedef struct opara__window {
    int64_t kernel[OPARA_MAX_DIMS], strides[OPARA_MAX_DIMS], dilations[OPARA_MAX_DIMS];
    int64_t pads[2 * OPARA_MAX_DIMS], out_pad[OPARA_MAX_DIMS];
    int auto_pad; /* 0 NOTSET, 1 SAME_UPPER, 2 SAME_LOWER, 3 VALID */
} opara__window;

/* Reads an INTS attribute of exactly `count` values in [lo, hi], or fills `fallback`. */
static opara_result opara__ints_arg(opara__shape_ctx* c, const char* name, uint32_t count, int64_t lo, int64_t hi,
                                    int64_t fallback, int required, int64_t* dst) {
    uint32_t n, i;
    const int64_t* v = opara__attr_ints(c->n, name, &n);
    if (!v) {
        if (required) return opara__shape_fail(c, OPARA_ERR_SHAPE, "attribute '%s' is required", name);
        for (i = 0; i < count; ++i) dst[i] = fallback;
        return OPARA_OK;
    }
    if (n != count)
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "attribute '%s' has %u values, expected %u", name, n, count);
    for (i = 0; i < n; ++i) {
        if (v[i] < lo || v[i] > hi)
            return opara__shape_fail(c, OPARA_ERR_SHAPE, "attribute '%s'[%u] = %lld is outside [%lld, %lld]", name, i,
                                     (long long)v[i], (long long)lo, (long long)hi);
        dst[i] = v[i];
    }
    return OPARA_OK;
}

static opara_result opara__read_window(opara__shape_ctx* c, uint32_t k, int kernel_required, opara__window* w) {
    const char* ap = opara__attr_string(c->n, "auto_pad", "NOTSET");
    opara_result r;
    if (strcmp(ap, "NOTSET") == 0) w->auto_pad = 0;
    else if (strcmp(ap, "SAME_UPPER") == 0) w->auto_pad = 1;
    else if (strcmp(ap, "SAME_LOWER") == 0) w->auto_pad = 2;
    else if (strcmp(ap, "VALID") == 0) w->auto_pad = 3;
    else return opara__shape_fail(c, OPARA_ERR_SHAPE, "auto_pad '%s' is not NOTSET, SAME_UPPER, SAME_LOWER or VALID", ap);
    r = opara__ints_arg(c, "kernel_shape", k, 1, OPARA__SHAPE_DIM_MAX, 1, kernel_required, w->kernel);
    if (r == OPARA_OK) r = opara__ints_arg(c, "strides", k, 1, OPARA__SHAPE_DIM_MAX, 1, 0, w->strides);
    if (r == OPARA_OK) r = opara__ints_arg(c, "dilations", k, 1, OPARA__SHAPE_DIM_MAX, 1, 0, w->dilations);
    if (r == OPARA_OK) r = opara__ints_arg(c, "pads", 2 * k, 0, OPARA__SHAPE_DIM_MAX, 0, 0, w->pads);
    if (r == OPARA_OK) r = opara__ints_arg(c, "output_padding", k, 0, OPARA__SHAPE_DIM_MAX, 0, 0, w->out_pad);
    return r;
}

/* Spatial output size of a convolution/pool window (ONNX Conv/MaxPool/AveragePool). k is the
   number of spatial dims (pads holds k begins then k ends). With ceil_mode a last window that
   would start inside the end padding is dropped (ONNX >= 1.16, PyTorch, ONNX Runtime). */
static opara_result opara__window_out(opara__shape_ctx* c, const opara__window* w, uint32_t k, uint32_t i, int64_t in,
                                      int ceil_mode, int64_t* out) {
    int64_t eff, pb = w->pads[i], pe = w->pads[k + i], s = w->strides[i], padded;
    if (!opara__mul_i64(w->kernel[i] - 1, w->dilations[i], &eff) || eff >= OPARA__SHAPE_DIM_MAX)
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "kernel %lld with dilation %lld is too large", (long long)w->kernel[i],
                                 (long long)w->dilations[i]);
    eff += 1;
    if (w->auto_pad == 1 || w->auto_pad == 2) {
        *out = (in + s - 1) / s;
        return OPARA_OK;
    }
    if (w->auto_pad == 3) pb = 0, pe = 0;
    padded = in + pb + pe;
    if (padded < eff)
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "spatial dim %u: input %lld (padded %lld) is smaller than the kernel extent %lld",
                                 i, (long long)in, (long long)padded, (long long)eff);
    if (ceil_mode) {
        *out = (padded - eff + s - 1) / s + 1;
        if (*out > 1 && *out - 1 >= (in + pb + s - 1) / s) --*out;
    } else {
        *out = (padded - eff) / s + 1;
    }
    return OPARA_OK;
}

static opara_result opara__spatial_rank(opara__shape_ctx* c, const opara__shape* x, uint32_t* k) {
    opara__sbuf b;
    if (x->ndim < 3)
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "input %s needs rank >= 3 (N, C, spatial...)", opara__sh(&b, 0, x));
    *k = (uint32_t)x->ndim - 2;
    return OPARA_OK;
}

static opara_result opara__shape_pool(opara__shape_ctx* c) {
    const opara__shape* x = c->in[0];
    opara__window w;
    opara__shape y;
    uint32_t k = 0, i;
    opara_result r = opara__spatial_rank(c, x, &k);
    int64_t ceil_mode = opara__attr_int(c->n, "ceil_mode", 0);
    if (r == OPARA_OK) r = opara__read_window(c, k, 1, &w);
    if (r != OPARA_OK) return r;
    y = *x;
    for (i = 0; i < k && r == OPARA_OK; ++i) r = opara__window_out(c, &w, k, i, x->dims[2 + i], ceil_mode != 0, &y.dims[2 + i]);
    if (r != OPARA_OK) return r;
    for (i = 0; i < c->n->n_outputs && r == OPARA_OK; ++i) r = opara__set_out(c, i, &y); /* MaxPool Indices: same shape */
    return r;
}

static opara_result opara__shape_conv(opara__shape_ctx* c) {
    const opara__shape *x = c->in[0], *wt = c->in[1], *bias = c->n->n_inputs > 2 ? c->in[2] : NULL;
    int64_t group = opara__attr_int(c->n, "group", 1);
    opara__window w;
    opara__shape y;
    opara__sbuf b;
    uint32_t k = 0, i;
    opara_result r = opara__spatial_rank(c, x, &k);
    if (r != OPARA_OK) return r;
    if (wt->ndim != x->ndim)
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "weight %s and input %s differ in rank", opara__sh(&b, 0, wt),
                                 opara__sh(&b, 1, x));
    if (group < 1 || group > x->dims[1] || x->dims[1] % group || wt->dims[0] % group || x->dims[1] / group != wt->dims[1])
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "input %s, weight %s and group %lld do not agree on channels",
                                 opara__sh(&b, 0, x), opara__sh(&b, 1, wt), (long long)group);
    if (bias && (bias->ndim != 1 || bias->dims[0] != wt->dims[0]))
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "bias %s is not [%lld]", opara__sh(&b, 0, bias), (long long)wt->dims[0]);
    r = opara__read_window(c, k, 0, &w);
    if (r != OPARA_OK) return r;
    for (i = 0; i < k; ++i) {
        if (opara__node_attr(c->n, "kernel_shape") && w.kernel[i] != wt->dims[2 + i])
            return opara__shape_fail(c, OPARA_ERR_SHAPE, "kernel_shape[%u] = %lld but the weight is %s", i,
                                     (long long)w.kernel[i], opara__sh(&b, 0, wt));
        w.kernel[i] = wt->dims[2 + i];
        if (w.kernel[i] < 1) return opara__shape_fail(c, OPARA_ERR_SHAPE, "weight %s has an empty kernel", opara__sh(&b, 0, wt));
    }
    y.ndim = x->ndim;
    y.dims[0] = x->dims[0];
    y.dims[1] = wt->dims[0];
    for (i = 0; i < k && r == OPARA_OK; ++i) r = opara__window_out(c, &w, k, i, x->dims[2 + i], 0, &y.dims[2 + i]);
    return r == OPARA_OK ? opara__set_out(c, 0, &y) : r;
}

/* ConvTranspose: out = stride*(in-1) + output_padding + (kernel-1)*dilation + 1 - pad_begin - pad_end,
   or output_shape when given, or in*stride with SAME_* auto_pad. */
static opara_result opara__shape_conv_transpose(opara__shape_ctx* c) {
    const opara__shape *x = c->in[0], *wt = c->in[1], *bias = c->n->n_inputs > 2 ? c->in[2] : NULL;
    int64_t group = opara__attr_int(c->n, "group", 1), t;
    uint32_t k = 0, i, n_os;
    const int64_t* os = opara__attr_ints(c->n, "output_shape", &n_os);
    opara__window w;
    opara__shape y;
    opara__sbuf b;
    opara_result r = opara__spatial_rank(c, x, &k);
    if (r != OPARA_OK) return r;
    if (wt->ndim != x->ndim || group < 1 || wt->dims[0] != x->dims[1] || x->dims[1] % group)
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "input %s, weight %s and group %lld do not agree", opara__sh(&b, 0, x),
                                 opara__sh(&b, 1, wt), (long long)group);
    r = opara__read_window(c, k, 0, &w);
    if (r != OPARA_OK) return r;
    y.ndim = x->ndim;
    y.dims[0] = x->dims[0];
    if (!opara__mul_i64(wt->dims[1], group, &y.dims[1]) || y.dims[1] > OPARA__SHAPE_DIM_MAX)
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "weight %s with group %lld", opara__sh(&b, 0, wt), (long long)group);
    if (bias && (bias->ndim != 1 || bias->dims[0] != y.dims[1]))
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "bias %s is not [%lld]", opara__sh(&b, 0, bias), (long long)y.dims[1]);
    if (os && n_os != k && n_os != k + 2)
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "output_shape has %u values for %u spatial dims", n_os, k);
    for (i = 0; i < k; ++i) {
        int64_t eff;
        w.kernel[i] = wt->dims[2 + i];
        if (os) {
            y.dims[2 + i] = os[n_os - k + i];
            continue;
        }
        if (w.auto_pad == 1 || w.auto_pad == 2) {
            if (!opara__mul_i64(x->dims[2 + i], w.strides[i], &y.dims[2 + i])) y.dims[2 + i] = -1;
            continue;
        }
        if (w.auto_pad == 3) w.pads[i] = w.pads[k + i] = 0;
        if (x->dims[2 + i] < 1 || w.kernel[i] < 1 || !opara__mul_i64(w.strides[i], x->dims[2 + i] - 1, &t) ||
            !opara__mul_i64(w.kernel[i] - 1, w.dilations[i], &eff) || t > OPARA__SHAPE_DIM_MAX || eff > OPARA__SHAPE_DIM_MAX)
            return opara__shape_fail(c, OPARA_ERR_SHAPE, "spatial dim %u: input %s and weight %s", i, opara__sh(&b, 0, x),
                                     opara__sh(&b, 1, wt));
        y.dims[2 + i] = t + w.out_pad[i] + eff + 1 - w.pads[i] - w.pads[k + i];
    }
    return opara__set_out(c, 0, &y);
}

static opara_result opara__shape_global_pool(opara__shape_ctx* c) {
    opara__shape y = *c->in[0];
    uint32_t k = 0, i;
    opara_result r = opara__spatial_rank(c, c->in[0], &k);
    if (r != OPARA_OK) return r;
    for (i = 0; i < k; ++i) y.dims[2 + i] = 1;
    return opara__set_out(c, 0, &y);
}

static opara_result opara__shape_batch_norm(opara__shape_ctx* c) {
    const opara__shape* x = c->in[0];
    opara__sbuf b;
    uint32_t k;
    if (x->ndim < 2) return opara__shape_fail(c, OPARA_ERR_SHAPE, "input %s needs rank >= 2", opara__sh(&b, 0, x));
    for (k = 1; k < 5; ++k)
        if (c->in[k]->ndim != 1 || c->in[k]->dims[0] != x->dims[1])
            return opara__shape_fail(c, OPARA_ERR_SHAPE, "input %u is %s, expected [%lld] for input %s", k,
                                     opara__sh(&b, 0, c->in[k]), (long long)x->dims[1], opara__sh(&b, 1, x));
    for (k = 0; k < c->n->n_outputs; ++k) {
        opara_result r = opara__set_out(c, k, k == 0 ? x : c->in[1]);
        if (r != OPARA_OK) return r;
    }
    return OPARA_OK;
}

/* ---- data movement --------------------------------------------------------------------------- */

static opara_result opara__shape_concat(opara__shape_ctx* c) {
    const opara__shape* x = c->in[0];
    opara__shape y = *x;
    int64_t axis;
    uint32_t k;
    int32_t d;
    opara__sbuf b;
    opara_result r;
    if (!opara__node_attr(c->n, "axis")) return opara__shape_fail(c, OPARA_ERR_SHAPE, "attribute 'axis' is required");
    r = opara__axis_arg(c, "axis", 0, x->ndim, &axis);
    if (r != OPARA_OK) return r;
    for (k = 1; k < c->n->n_inputs; ++k) {
        const opara__shape* s = c->in[k];
        int ok = s->ndim == x->ndim;
        for (d = 0; ok && d < x->ndim; ++d) ok = d == axis || s->dims[d] == x->dims[d];
        if (!ok)
            return opara__shape_fail(c, OPARA_ERR_SHAPE, "input %u %s does not match input 0 %s outside axis %lld", k,
                                     opara__sh(&b, 0, s), opara__sh(&b, 1, x), (long long)axis);
        y.dims[axis] += s->dims[axis];
        if (y.dims[axis] > OPARA__SHAPE_DIM_MAX) return opara__shape_fail(c, OPARA_ERR_LIMIT_EXCEEDED, "concatenation too long");
    }
    return opara__set_out(c, 0, &y);
}

static opara_result opara__shape_split(opara__shape_ctx* c) {
    const opara__shape* x = c->in[0];
    uint32_t n_split, k, n_out = c->n->n_outputs;
    const int64_t* split = opara__attr_ints(c->n, "split", &n_split);
    int64_t axis, total = 0;
    opara__sbuf b;
    opara_result r = opara__axis_arg(c, "axis", 0, x->ndim, &axis);
    if (r != OPARA_OK) return r;
    if (split) {
        if (n_split != n_out)
            return opara__shape_fail(c, OPARA_ERR_SHAPE, "'split' has %u values for %u outputs", n_split, n_out);
        for (k = 0; k < n_split; ++k) {
            if (split[k] < 0 || split[k] > OPARA__SHAPE_DIM_MAX)
                return opara__shape_fail(c, OPARA_ERR_SHAPE, "split[%u] = %lld", k, (long long)split[k]);
            total += split[k];
        }
        if (total != x->dims[axis])
            return opara__shape_fail(c, OPARA_ERR_SHAPE, "'split' sums to %lld but input %s has %lld along axis %lld",
                                     (long long)total, opara__sh(&b, 0, x), (long long)x->dims[axis], (long long)axis);
    } else if (x->dims[axis] % n_out) {
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "input %s: axis %lld (%lld) does not split into %u equal parts",
                                 opara__sh(&b, 0, x), (long long)axis, (long long)x->dims[axis], n_out);
    }
    for (k = 0; k < n_out && r == OPARA_OK; ++k) {
        opara__shape y = *x;
        y.dims[axis] = split ? split[k] : x->dims[axis] / n_out;
        r = opara__set_out(c, k, &y);
    }
    return r;
}

/* Number of elements a slice start:end:step selects in a dim of size d (ONNX Slice clamping). */
static int64_t opara__slice_count(int64_t start, int64_t end, int64_t step, int64_t d) {
    int64_t diff, mag;
    if (start < 0) start += d;
    if (end < 0) end += d;
    if (step > 0) {
        start = start < 0 ? 0 : start > d ? d : start;
        end = end < 0 ? 0 : end > d ? d : end;
        diff = end - start;
        mag = step;
    } else {
        start = start < 0 ? 0 : start > d - 1 ? d - 1 : start;
        end = end < -1 ? -1 : end > d - 1 ? d - 1 : end;
        diff = start - end;
        mag = step == INT64_MIN ? INT64_MAX : -step;
    }
    return diff <= 0 ? 0 : 1 + (diff - 1) / mag;
}

static opara_result opara__shape_slice(opara__shape_ctx* c) {
    const opara__shape* x = c->in[0];
    uint32_t ns, ne, na, nst, k;
    const int64_t* starts = opara__attr_ints(c->n, "starts", &ns);
    const int64_t* ends = opara__attr_ints(c->n, "ends", &ne);
    const int64_t* axes = opara__attr_ints(c->n, "axes", &na);
    const int64_t* steps = opara__attr_ints(c->n, "steps", &nst);
    opara__shape y = *x;
    int seen[OPARA_MAX_DIMS];
    opara__sbuf b;
    if (!starts || !ends || ns != ne || (axes && na != ns) || (steps && nst != ns) || ns > (uint32_t)x->ndim)
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "needs 'starts' and 'ends' (and optional 'axes', 'steps') of one length <= rank %d",
                                 (int)x->ndim);
    memset(seen, 0, sizeof seen);
    for (k = 0; k < ns; ++k) {
        int64_t axis, step = steps ? steps[k] : 1;
        if (!opara__norm_axis(axes ? axes[k] : (int64_t)k, x->ndim, &axis) || seen[axis])
            return opara__shape_fail(c, OPARA_ERR_SHAPE, "axes[%u] = %lld is out of range or repeated for input %s", k,
                                     (long long)(axes ? axes[k] : (int64_t)k), opara__sh(&b, 0, x));
        if (step == 0) return opara__shape_fail(c, OPARA_ERR_SHAPE, "steps[%u] is 0", k);
        seen[axis] = 1;
        y.dims[axis] = opara__slice_count(starts[k], ends[k], step, x->dims[axis]);
    }
    return opara__set_out(c, 0, &y);
}

static opara_result opara__shape_gather(opara__shape_ctx* c) {
    const opara__shape *x = c->in[0], *idx = c->in[1];
    opara__shape y;
    int64_t axis;
    int32_t i;
    opara_result r = opara__axis_arg(c, "axis", 0, x->ndim, &axis);
    if (r != OPARA_OK) return r;
    if (x->ndim + idx->ndim - 1 > OPARA_MAX_DIMS)
        return opara__shape_fail(c, OPARA_ERR_LIMIT_EXCEEDED, "output rank %d exceeds %d", (int)(x->ndim + idx->ndim - 1),
                                 OPARA_MAX_DIMS);
    if (x->dims[axis] == 0 && opara__shape_numel(idx) > 0)
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "gathers from an empty axis");
    y.ndim = 0;
    for (i = 0; i < axis; ++i) y.dims[y.ndim++] = x->dims[i];
    for (i = 0; i < idx->ndim; ++i) y.dims[y.ndim++] = idx->dims[i];
    for (i = (int32_t)axis + 1; i < x->ndim; ++i) y.dims[y.ndim++] = x->dims[i];
    return opara__set_out(c, 0, &y);
}

static opara_result opara__shape_reshape(opara__shape_ctx* c) {
    const opara__shape* x = c->in[0];
    uint32_t n, k;
    const int64_t* shape = opara__attr_ints(c->n, "shape", &n);
    int64_t allowzero = opara__attr_int(c->n, "allowzero", 0), known = 1, numel = opara__shape_numel(x);
    int infer = -1;
    opara__shape y;
    opara__sbuf b;
    if (!shape) return opara__shape_fail(c, OPARA_ERR_SHAPE, "attribute 'shape' is required");
    if (n > OPARA_MAX_DIMS) return opara__shape_fail(c, OPARA_ERR_LIMIT_EXCEEDED, "'shape' has %u dims", n);
    y.ndim = (int32_t)n;
    for (k = 0; k < n; ++k) {
        int64_t d = shape[k];
        if (d == OPARA__DIM_BATCH) d = c->batch;
        else if (d == 0 && !allowzero) {
            if ((int32_t)k >= x->ndim)
                return opara__shape_fail(c, OPARA_ERR_SHAPE, "shape[%u] = 0 copies a dim input %s does not have", k,
                                         opara__sh(&b, 0, x));
            d = x->dims[k];
        } else if (d == -1) {
            if (infer >= 0) return opara__shape_fail(c, OPARA_ERR_SHAPE, "'shape' has more than one -1");
            infer = (int)k;
            continue;
        } else if (d < 0 || d > OPARA__SHAPE_DIM_MAX) {
            return opara__shape_fail(c, OPARA_ERR_SHAPE, "shape[%u] = %lld", k, (long long)shape[k]);
        }
        y.dims[k] = d;
        if (!opara__mul_i64(known, d, &known) || known > OPARA__SHAPE_NUMEL_MAX)
            return opara__shape_fail(c, OPARA_ERR_SHAPE, "'shape' has too many elements");
    }
    if (infer >= 0) {
        if (known == 0 || numel % known)
            return opara__shape_fail(c, OPARA_ERR_SHAPE, "cannot infer the -1 of 'shape' for input %s (%lld elements)",
                                     opara__sh(&b, 0, x), (long long)numel);
        y.dims[infer] = numel / known;
    } else if (known != numel) {
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "input %s has %lld elements, the target %s has %lld", opara__sh(&b, 0, x),
                                 (long long)numel, opara__sh(&b, 1, &y), (long long)known);
    }
    return opara__set_out(c, 0, &y);
}

static opara_result opara__shape_flatten(opara__shape_ctx* c) {
    const opara__shape* x = c->in[0];
    int64_t axis = opara__attr_int(c->n, "axis", 1), outer = 1, inner = 1;
    int32_t i;
    opara__shape y;
    if (axis < -(int64_t)x->ndim || axis > x->ndim)
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "axis %lld is out of range for rank %d", (long long)axis, (int)x->ndim);
    if (axis < 0) axis += x->ndim;
    for (i = 0; i < x->ndim; ++i) {
        if (i < axis) (void)opara__mul_i64(outer, x->dims[i], &outer);
        else (void)opara__mul_i64(inner, x->dims[i], &inner);
    }
    y.ndim = 2;
    y.dims[0] = outer;
    y.dims[1] = inner;
    return opara__set_out(c, 0, &y);
}

static opara_result opara__shape_transpose(opara__shape_ctx* c) {
    const opara__shape* x = c->in[0];
    uint32_t n, k;
    const int64_t* perm = opara__attr_ints(c->n, "perm", &n);
    int seen[OPARA_MAX_DIMS];
    opara__shape y;
    opara__sbuf b;
    memset(seen, 0, sizeof seen);
    if (perm && n != (uint32_t)x->ndim)
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "'perm' has %u values for input %s", n, opara__sh(&b, 0, x));
    y.ndim = x->ndim;
    for (k = 0; k < (uint32_t)x->ndim; ++k) {
        int64_t p = perm ? perm[k] : x->ndim - 1 - (int64_t)k;
        if (p < 0 || p >= x->ndim || seen[p])
            return opara__shape_fail(c, OPARA_ERR_SHAPE, "'perm' is not a permutation of 0..%d", (int)x->ndim - 1);
        seen[p] = 1;
        y.dims[k] = x->dims[p];
    }
    return opara__set_out(c, 0, &y);
}

/* Marks normalized axes (against rank) in flags; 0 when out of range or repeated. */
static int opara__axes_flags(const int64_t* axes, uint32_t n, int64_t rank, int* flags) {
    uint32_t k;
    memset(flags, 0, sizeof(int) * OPARA_MAX_DIMS);
    for (k = 0; k < n; ++k) {
        int64_t a;
        if (!opara__norm_axis(axes[k], rank, &a) || flags[a]) return 0;
        flags[a] = 1;
    }
    return 1;
}

static opara_result opara__shape_squeeze(opara__shape_ctx* c) {
    const opara__shape* x = c->in[0];
    uint32_t n;
    const int64_t* axes = opara__attr_ints(c->n, "axes", &n);
    int flags[OPARA_MAX_DIMS];
    int32_t i;
    opara__shape y;
    opara__sbuf b;
    if (axes && !opara__axes_flags(axes, n, x->ndim, flags))
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "'axes' out of range or repeated for input %s", opara__sh(&b, 0, x));
    y.ndim = 0;
    for (i = 0; i < x->ndim; ++i) {
        int drop = axes ? flags[i] : x->dims[i] == 1;
        if (drop && x->dims[i] != 1)
            return opara__shape_fail(c, OPARA_ERR_SHAPE, "axis %d of input %s is not 1", (int)i, opara__sh(&b, 0, x));
        if (!drop) y.dims[y.ndim++] = x->dims[i];
    }
    return opara__set_out(c, 0, &y);
}

static opara_result opara__shape_unsqueeze(opara__shape_ctx* c) {
    const opara__shape* x = c->in[0];
    uint32_t n;
    const int64_t* axes = opara__attr_ints(c->n, "axes", &n);
    int flags[OPARA_MAX_DIMS];
    int32_t i, src = 0;
    opara__shape y;
    opara__sbuf b;
    if (!axes) return opara__shape_fail(c, OPARA_ERR_SHAPE, "attribute 'axes' is required");
    if ((int64_t)x->ndim + n > OPARA_MAX_DIMS)
        return opara__shape_fail(c, OPARA_ERR_LIMIT_EXCEEDED, "output rank %d exceeds %d", (int)(x->ndim + (int32_t)n),
                                 OPARA_MAX_DIMS);
    y.ndim = x->ndim + (int32_t)n;
    if (!opara__axes_flags(axes, n, y.ndim, flags))
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "'axes' out of range or repeated for input %s", opara__sh(&b, 0, x));
    for (i = 0; i < y.ndim; ++i) y.dims[i] = flags[i] ? 1 : x->dims[src++];
    return opara__set_out(c, 0, &y);
}

static opara_result opara__shape_expand(opara__shape_ctx* c) {
    uint32_t n, k;
    const int64_t* shape = opara__attr_ints(c->n, "shape", &n);
    opara__shape target, y;
    opara__sbuf b;
    if (!shape) return opara__shape_fail(c, OPARA_ERR_SHAPE, "attribute 'shape' is required");
    if (n > OPARA_MAX_DIMS) return opara__shape_fail(c, OPARA_ERR_LIMIT_EXCEEDED, "'shape' has %u dims", n);
    target.ndim = (int32_t)n;
    for (k = 0; k < n; ++k) {
        target.dims[k] = shape[k] == OPARA__DIM_BATCH ? c->batch : shape[k];
        if (target.dims[k] < 0 || target.dims[k] > OPARA__SHAPE_DIM_MAX)
            return opara__shape_fail(c, OPARA_ERR_SHAPE, "shape[%u] = %lld", k, (long long)shape[k]);
    }
    if (!opara__broadcast(c->in[0], &target, &y))
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "input %s does not broadcast with %s", opara__sh(&b, 0, c->in[0]),
                                 opara__sh(&b, 1, &target));
    return opara__set_out(c, 0, &y);
}

static opara_result opara__shape_pad(opara__shape_ctx* c) {
    const opara__shape* x = c->in[0];
    uint32_t n, na = 0, k;
    const int64_t* pads = opara__attr_ints(c->n, "pads", &n);
    const int64_t* axes = opara__attr_ints(c->n, "axes", &na);
    const char* mode = opara__attr_string(c->n, "mode", "constant");
    int flags[OPARA_MAX_DIMS];
    opara__shape y = *x;
    opara__sbuf b;
    if (strcmp(mode, "constant") && strcmp(mode, "reflect") && strcmp(mode, "edge") && strcmp(mode, "wrap"))
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "mode '%s' is not constant, reflect, edge or wrap", mode);
    if (!axes) na = (uint32_t)x->ndim;
    else if (!opara__axes_flags(axes, na, x->ndim, flags))
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "'axes' out of range or repeated for input %s", opara__sh(&b, 0, x));
    if (!pads || n != 2 * na)
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "'pads' needs %u values for input %s", 2 * na, opara__sh(&b, 0, x));
    for (k = 0; k < na; ++k) {
        int64_t axis = axes ? (axes[k] < 0 ? axes[k] + x->ndim : axes[k]) : (int64_t)k;
        int64_t pb = pads[k], pe = pads[na + k];
        if (pb < -OPARA__SHAPE_DIM_MAX || pb > OPARA__SHAPE_DIM_MAX || pe < -OPARA__SHAPE_DIM_MAX || pe > OPARA__SHAPE_DIM_MAX)
            return opara__shape_fail(c, OPARA_ERR_SHAPE, "pads for axis %lld are out of range", (long long)axis);
        y.dims[axis] = x->dims[axis] + pb + pe;
        if (strcmp(mode, "reflect") == 0 && (pb >= x->dims[axis] || pe >= x->dims[axis]) && (pb > 0 || pe > 0))
            return opara__shape_fail(c, OPARA_ERR_SHAPE, "reflect pads %lld/%lld need a dim larger than %lld", (long long)pb,
                                     (long long)pe, (long long)x->dims[axis]);
    }
    return opara__set_out(c, 0, &y);
}

static opara_result opara__shape_resize(opara__shape_ctx* c) {
    const opara__shape* x = c->in[0];
    const opara__attr* scales = opara__node_attr(c->n, "scales");
    uint32_t ns = 0, k;
    const int64_t* sizes = opara__attr_ints(c->n, "sizes", &ns);
    const char* mode = opara__attr_string(c->n, "mode", "nearest");
    opara__shape y = *x;
    opara__sbuf b;
    if (strcmp(mode, "nearest") && strcmp(mode, "linear") && strcmp(mode, "cubic"))
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "mode '%s' is not nearest, linear or cubic", mode);
    if (scales && scales->type != OPARA__ATTR_FLOATS) scales = NULL;
    if (!scales == !sizes)
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "exactly one of 'scales' and 'sizes' is needed");
    if ((scales ? scales->count : ns) != (uint32_t)x->ndim)
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "'%s' has %u values for input %s", scales ? "scales" : "sizes",
                                 scales ? scales->count : ns, opara__sh(&b, 0, x));
    for (k = 0; k < (uint32_t)x->ndim; ++k) {
        if (sizes) {
            y.dims[k] = sizes[k];
            continue;
        }
        {
            double s = (double)scales->v.floats[k], d;
            if (!(s > 0.0) || s > 1e9) return opara__shape_fail(c, OPARA_ERR_SHAPE, "scales[%u] = %g", k, s);
            d = (double)x->dims[k] * s;
            if (d > (double)OPARA__SHAPE_DIM_MAX) return opara__shape_fail(c, OPARA_ERR_LIMIT_EXCEEDED, "scales[%u] = %g", k, s);
            y.dims[k] = (int64_t)d; /* floor: d >= 0 */
        }
    }
    return opara__set_out(c, 0, &y);
}

/* ---- linear algebra and normalization -------------------------------------------------------- */

static opara_result opara__shape_gemm(opara__shape_ctx* c) {
    const opara__shape *a = c->in[0], *bm = c->in[1], *cc = c->n->n_inputs > 2 ? c->in[2] : NULL;
    int ta = opara__attr_int(c->n, "transA", 0) != 0, tb = opara__attr_int(c->n, "transB", 0) != 0;
    opara__shape y, tmp;
    opara__sbuf b;
    int64_t k1, k2;
    if (a->ndim != 2 || bm->ndim != 2)
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "A %s and B %s must be matrices", opara__sh(&b, 0, a), opara__sh(&b, 1, bm));
    y.ndim = 2;
    y.dims[0] = ta ? a->dims[1] : a->dims[0];
    k1 = ta ? a->dims[0] : a->dims[1];
    k2 = tb ? bm->dims[1] : bm->dims[0];
    y.dims[1] = tb ? bm->dims[0] : bm->dims[1];
    if (k1 != k2)
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "A %s (transA %d) and B %s (transB %d) disagree on K", opara__sh(&b, 0, a),
                                 ta, opara__sh(&b, 1, bm), tb);
    if (cc && (!opara__broadcast(&y, cc, &tmp) || tmp.ndim != 2 || tmp.dims[0] != y.dims[0] || tmp.dims[1] != y.dims[1]))
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "C %s does not broadcast to %s", opara__sh(&b, 0, cc), opara__sh(&b, 1, &y));
    return opara__set_out(c, 0, &y);
}

/* numpy matmul: 1-D operands get a dim prepended (A) / appended (B) that is removed again. */
static opara_result opara__shape_matmul(opara__shape_ctx* c) {
    opara__shape a = *c->in[0], bm = *c->in[1], ba, bb, batch, y;
    opara__sbuf b;
    int a1 = a.ndim == 1, b1 = bm.ndim == 1;
    if (a.ndim < 1 || bm.ndim < 1)
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "operands %s and %s must not be scalars", opara__sh(&b, 0, c->in[0]),
                                 opara__sh(&b, 1, c->in[1]));
    if (a1) a.ndim = 2, a.dims[1] = a.dims[0], a.dims[0] = 1;
    if (b1) bm.ndim = 2, bm.dims[1] = 1;
    if (a.dims[a.ndim - 1] != bm.dims[bm.ndim - 2])
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "%s x %s: inner dims differ", opara__sh(&b, 0, c->in[0]),
                                 opara__sh(&b, 1, c->in[1]));
    ba = a, bb = bm;
    ba.ndim -= 2, bb.ndim -= 2;
    if (!opara__broadcast(&ba, &bb, &batch))
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "%s x %s: batch dims do not broadcast", opara__sh(&b, 0, c->in[0]),
                                 opara__sh(&b, 1, c->in[1]));
    y = batch;
    if (!a1) y.dims[y.ndim++] = a.dims[a.ndim - 2];
    if (!b1) y.dims[y.ndim++] = bm.dims[bm.ndim - 1];
    return opara__set_out(c, 0, &y);
}

static opara_result opara__shape_softmax(opara__shape_ctx* c) {
    int64_t axis;
    opara_result r = opara__axis_arg(c, "axis", -1, c->in[0]->ndim, &axis);
    return r == OPARA_OK ? opara__set_out(c, 0, c->in[0]) : r;
}

static opara_result opara__shape_layer_norm(opara__shape_ctx* c) {
    const opara__shape* x = c->in[0];
    int64_t axis;
    uint32_t k;
    int32_t i;
    opara__shape stat = *x;
    opara__sbuf b;
    opara_result r = opara__axis_arg(c, "axis", -1, x->ndim, &axis);
    if (r != OPARA_OK) return r;
    for (k = 1; k < c->n->n_inputs; ++k) {
        opara__shape tmp, tail;
        if (!c->in[k]) continue;
        tail.ndim = x->ndim - (int32_t)axis;
        for (i = 0; i < tail.ndim; ++i) tail.dims[i] = x->dims[axis + i];
        if (!opara__broadcast(&tail, c->in[k], &tmp) || tmp.ndim != tail.ndim || opara__shape_numel(&tmp) != opara__shape_numel(&tail))
            return opara__shape_fail(c, OPARA_ERR_SHAPE, "input %u %s does not broadcast to the normalized dims %s", k,
                                     opara__sh(&b, 0, c->in[k]), opara__sh(&b, 1, &tail));
    }
    for (i = (int32_t)axis; i < stat.ndim; ++i) stat.dims[i] = 1;
    r = opara__set_out(c, 0, x);
    for (k = 1; k < c->n->n_outputs && r == OPARA_OK; ++k) r = opara__set_out(c, k, &stat);
    return r;
}

static opara_result opara__shape_reduce_mean(opara__shape_ctx* c) {
    const opara__shape* x = c->in[0];
    uint32_t n;
    const int64_t* axes = opara__attr_ints(c->n, "axes", &n);
    int keep = opara__attr_int(c->n, "keepdims", 1) != 0, flags[OPARA_MAX_DIMS];
    int32_t i;
    opara__shape y;
    opara__sbuf b;
    if (!axes || n == 0) {
        if (opara__attr_int(c->n, "noop_with_empty_axes", 0)) return opara__set_out(c, 0, x);
        for (i = 0; i < OPARA_MAX_DIMS; ++i) flags[i] = 1;
    } else if (!opara__axes_flags(axes, n, x->ndim, flags)) {
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "'axes' out of range or repeated for input %s", opara__sh(&b, 0, x));
    }
    y.ndim = 0;
    for (i = 0; i < x->ndim; ++i) {
        if (!flags[i]) y.dims[y.ndim++] = x->dims[i];
        else if (keep) y.dims[y.ndim++] = 1;
    }
    return opara__set_out(c, 0, &y);
}

/* ---- dispatch -------------------------------------------------------------------------------- */

typedef struct opara__arity {
    uint16_t min_in, max_in, min_out, max_out;
} opara__arity;

#define OPARA__ANY 0xFFFFu

static opara__arity opara__op_arity(opara__op op) {
    opara__arity a;
    a.min_in = a.max_in = a.min_out = a.max_out = 1;
    switch (op) {
    case OPARA__OP_CONV: case OPARA__OP_CONV_TRANSPOSE: case OPARA__OP_GEMM: a.min_in = 2, a.max_in = 3; break;
    case OPARA__OP_MAX_POOL: a.max_out = 2; break;
    case OPARA__OP_BATCH_NORM: a.min_in = a.max_in = 5; break;
    case OPARA__OP_ADD: case OPARA__OP_SUB: case OPARA__OP_MUL: case OPARA__OP_DIV: case OPARA__OP_POW:
    case OPARA__OP_GATHER: case OPARA__OP_MATMUL: a.min_in = a.max_in = 2; break;
    case OPARA__OP_CONCAT: a.max_in = OPARA__ANY; break;
    case OPARA__OP_SPLIT: a.max_out = OPARA__ANY; break;
    case OPARA__OP_LAYER_NORM: a.min_in = 2, a.max_in = 3, a.max_out = 3; break;
    case OPARA__OP_WHERE: a.min_in = a.max_in = 3; break;
    default: break;
    }
    return a;
}

/* Arity: the first min_in inputs are present, inputs past max_in are omitted (-1). */
static opara_result opara__check_arity(opara__shape_ctx* c) {
    opara__arity a = opara__op_arity(c->n->op);
    uint32_t k;
    if (c->n->n_inputs < a.min_in || c->n->n_outputs < a.min_out || c->n->n_outputs > a.max_out)
        return opara__shape_fail(c, OPARA_ERR_SHAPE, "%u inputs and %u outputs (needs at least %u inputs and %u to %u outputs)",
                                 c->n->n_inputs, c->n->n_outputs, a.min_in, a.min_out, a.max_out);
    for (k = 0; k < c->n->n_inputs; ++k) {
        if (k < a.min_in && !c->in[k]) return opara__shape_fail(c, OPARA_ERR_SHAPE, "required input %u is omitted", k);
        if (k >= a.max_in && c->in[k])
            return opara__shape_fail(c, OPARA_ERR_SHAPE, "input %u is not supported (the IR takes at most %u; constant "
                                     "inputs belong in attributes)", k, a.max_in);
        if (c->in[k] && c->in[k]->ndim < 0) return opara__shape_fail(c, OPARA_ERR_SHAPE, "input %u has no shape", k);
    }
    return OPARA_OK;
}

static opara_result opara__shape_node(opara__shape_ctx* c) {
    opara_result r = opara__check_arity(c);
    if (r != OPARA_OK) return r;
    switch (c->n->op) {
    case OPARA__OP_CONV: return opara__shape_conv(c);
    case OPARA__OP_CONV_TRANSPOSE: return opara__shape_conv_transpose(c);
    case OPARA__OP_MAX_POOL: case OPARA__OP_AVERAGE_POOL: return opara__shape_pool(c);
    case OPARA__OP_GLOBAL_AVERAGE_POOL: return opara__shape_global_pool(c);
    case OPARA__OP_BATCH_NORM: return opara__shape_batch_norm(c);
    case OPARA__OP_ADD: case OPARA__OP_SUB: case OPARA__OP_MUL: case OPARA__OP_DIV: case OPARA__OP_POW:
    case OPARA__OP_WHERE: return opara__shape_broadcast(c);
    case OPARA__OP_CONCAT: return opara__shape_concat(c);
    case OPARA__OP_SPLIT: return opara__shape_split(c);
    case OPARA__OP_SLICE: return opara__shape_slice(c);
    case OPARA__OP_GATHER: return opara__shape_gather(c);
    case OPARA__OP_RESHAPE: return opara__shape_reshape(c);
    case OPARA__OP_FLATTEN: return opara__shape_flatten(c);
    case OPARA__OP_TRANSPOSE: return opara__shape_transpose(c);
    case OPARA__OP_SQUEEZE: return opara__shape_squeeze(c);
    case OPARA__OP_UNSQUEEZE: return opara__shape_unsqueeze(c);
    case OPARA__OP_EXPAND: return opara__shape_expand(c);
    case OPARA__OP_GEMM: return opara__shape_gemm(c);
    case OPARA__OP_MATMUL: return opara__shape_matmul(c);
    case OPARA__OP_SOFTMAX: return opara__shape_softmax(c);
    case OPARA__OP_LAYER_NORM: return opara__shape_layer_norm(c);
    case OPARA__OP_REDUCE_MEAN: return opara__shape_reduce_mean(c);
    case OPARA__OP_PAD: return opara__shape_pad(c);
    case OPARA__OP_RESIZE: return opara__shape_resize(c);
    default: return opara__set_out(c, 0, c->in[0]); /* elementwise unary ops, Clip, Cast */
    }
}

static opara_result opara__declared_shape(opara_runtime* rt, const opara__value* v, int64_t batch, opara__shape* s) {
    int32_t i;
    char buf[160];
    *s = v->shape;
    for (i = 0; i < s->ndim; ++i) {
        if (s->dims[i] == OPARA__DIM_BATCH) s->dims[i] = batch;
        if (s->dims[i] < 0 || s->dims[i] > OPARA__SHAPE_DIM_MAX)
            return opara__fail(rt, OPARA_ERR_SHAPE, "tensor '%s' has shape %s", v->name, opara__shape_str(&v->shape, buf, sizeof buf));
    }
    return OPARA_OK;
}

OPARA__PRIVATE opara_result opara__infer_shapes(opara_runtime* rt, const opara__graph* g, int64_t batch,
                                               opara__shape* shapes) {
    opara__shape_ctx* c;
    uint32_t i, k;
    opara_result r = OPARA_OK;
    if (!g->finalized) return opara__fail(rt, OPARA_ERR_INVALID_STATE, "shape inference needs a finalized graph");
    if (batch < 1 || batch > OPARA__SHAPE_DIM_MAX)
        return opara__fail(rt, OPARA_ERR_INVALID_ARGS, "batch size %lld", (long long)batch);
    for (i = 0; i < g->n_values && r == OPARA_OK; ++i) {
        if (g->values[i].kind == OPARA__VALUE_ACTIVATION) shapes[i].ndim = -1;
        else r = opara__declared_shape(rt, &g->values[i], batch, &shapes[i]);
    }
    if (r != OPARA_OK) return r;
    c = (opara__shape_ctx*)opara__calloc(rt, 1, sizeof *c);
    if (!c) return opara__fail(rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory inferring shapes");
    c->rt = rt;
    c->g = g;
    c->batch = batch;
    for (i = 0; i < g->n_nodes && r == OPARA_OK; ++i) {
        const opara__node* n = &g->nodes[g->topo[i]];
        c->node_index = g->topo[i];
        c->n = n;
        if (n->n_inputs > OPARA_MAX_NODE_IO || n->n_outputs > OPARA_MAX_NODE_IO) {
            r = opara__shape_fail(c, OPARA_ERR_LIMIT_EXCEEDED, "too many inputs or outputs");
            break;
        }
        for (k = 0; k < n->n_inputs; ++k) c->in[k] = n->inputs[k] >= 0 ? &shapes[n->inputs[k]] : NULL;
        for (k = 0; k < n->n_outputs; ++k) c->out[k] = &shapes[n->outputs[k]];
        r = opara__shape_node(c);
    }
    opara__free(rt, c);
    return r;
}

/* ---- data types ------------------------------------------------------------------------------ */

static opara_result opara__dtype_fail(opara_runtime* rt, const opara__graph* g, uint32_t node, const char* what) {
    const opara__node* n = &g->nodes[node];
    return opara__fail(rt, OPARA_ERR_BAD_DTYPE, "node %u '%s' (%s): %s", node, n->name ? n->name : "", opara__op_name(n->op),
                       what);
}

static int opara__is_index_type(opara_dtype t) {
    return t == OPARA_DTYPE_I32 || t == OPARA_DTYPE_I64;
}

/* Output dtypes of one node from its input dtypes (0 = omitted input). */
static opara_result opara__dtype_node(opara_runtime* rt, const opara__graph* g, uint32_t node, opara_dtype* dt) {
    const opara__node* n = &g->nodes[node];
    opara_dtype in0 = n->n_inputs && n->inputs[0] >= 0 ? dt[n->inputs[0]] : OPARA_DTYPE_UNDEFINED, out = in0;
    uint32_t k;
    if (n->n_inputs == 0 || n->inputs[0] < 0) return opara__dtype_fail(rt, g, node, "input 0 is missing");
    switch (n->op) {
    case OPARA__OP_CAST:
    {
        int64_t to = opara__attr_int(n, "to", 0);
        if (to < 1 || to > 64 || opara_dtype_size((opara_dtype)to) == 0)
            return opara__dtype_fail(rt, g, node, "attribute 'to' is not a supported data type");
        out = (opara_dtype)to;
    }
        break;
    case OPARA__OP_WHERE:
        if (n->n_inputs < 3 || n->inputs[1] < 0 || n->inputs[2] < 0) return opara__dtype_fail(rt, g, node, "needs 3 inputs");
        if (in0 != OPARA_DTYPE_BOOL) return opara__dtype_fail(rt, g, node, "the condition is not bool");
        out = dt[n->inputs[1]];
        if (dt[n->inputs[2]] != out) return opara__dtype_fail(rt, g, node, "inputs 1 and 2 have different types");
        break;
    case OPARA__OP_GATHER:
        if (n->n_inputs < 2 || n->inputs[1] < 0 || !opara__is_index_type(dt[n->inputs[1]]))
            return opara__dtype_fail(rt, g, node, "indices must be i32 or i64");
        break;
    case OPARA__OP_ADD: case OPARA__OP_SUB: case OPARA__OP_MUL: case OPARA__OP_DIV: case OPARA__OP_CONCAT:
        for (k = 1; k < n->n_inputs; ++k)
            if (n->inputs[k] >= 0 && dt[n->inputs[k]] != in0)
                return opara__dtype_fail(rt, g, node, "inputs have different data types");
        break;
    default: break;
    }
    for (k = 0; k < n->n_outputs; ++k) {
        opara_dtype t = out;
        if (n->op == OPARA__OP_MAX_POOL && k == 1) t = OPARA_DTYPE_I64;
        if (n->op == OPARA__OP_LAYER_NORM && k > 0) t = OPARA_DTYPE_F32;
        dt[n->outputs[k]] = t;
    }
    return OPARA_OK;
}

OPARA__PRIVATE opara_result opara__infer_dtypes(opara_runtime* rt, const opara__graph* g, opara_dtype* dtypes) {
    uint32_t i;
    if (!g->finalized) return opara__fail(rt, OPARA_ERR_INVALID_STATE, "dtype inference needs a finalized graph");
    for (i = 0; i < g->n_values; ++i)
        dtypes[i] = g->values[i].kind == OPARA__VALUE_ACTIVATION ? OPARA_DTYPE_UNDEFINED : g->values[i].dtype;
    for (i = 0; i < g->n_nodes; ++i) {
        opara_result r = opara__dtype_node(rt, g, g->topo[i], dtypes);
        if (r != OPARA_OK) return r;
    }
    return OPARA_OK;
}
/* ==== END src/opara_shape.c ==== */
/* ==== BEGIN src/opara_reach.c ==== */
/* Reachability on the DAG of a finalized graph: the transitive closure as bitsets, single
   queries, and the exact maximum antichain (the parallelism a schedule can exploit). */
/* #include "opara_model.h" (inlined above) */

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

OPARA__PRIVATE int opara__graph_reaches(const opara__graph* g, uint32_t a, uint32_t b) {
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

OPARA__PRIVATE opara_result opara__graph_max_width(opara_runtime* rt, const opara__graph* g, uint32_t* width,
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
/* ==== END src/opara_reach.c ==== */
/* ==== BEGIN src/opara_format.c ==== */
/* The .opara reader (hardened: every offset, size, index and enum is checked before use) and
   the deterministic writer. docs/FORMAT.md is the specification; both sides share the
   constants of opara_model.h. */
/* #include "opara_model.h" (inlined above) */

/* ---- reader ---------------------------------------------------------------------------------- */

typedef struct opara__reader {
    opara_runtime* rt;
    const uint8_t* data;
    uint64_t total;
    uint32_t alignment;
    uint32_t n_strings, n_tensors, n_nodes, n_attrs, n_refs;
    uint64_t strings_off, strbytes_off, strbytes_size, tensors_off, nodes_off, attrs_off, refs_off;
    uint64_t payload_off, payload_size, data_off, data_size;
} opara__reader;

static const char* opara__hdr_magic_prefix_ok(const uint8_t* data, size_t size) {
    size_t n = OPARA__MIN(size, (size_t)OPARA__FORMAT_MAGIC_SIZE);
    return memcmp(data, OPARA__FORMAT_MAGIC, n) == 0 ? "" : NULL;
}

OPARA__PRIVATE uint32_t opara__format_peek_alignment(const uint8_t* data, size_t size) {
    if (size < OPARA__FORMAT_HEADER_SIZE || memcmp(data, OPARA__FORMAT_MAGIC, OPARA__FORMAT_MAGIC_SIZE) != 0) return 0;
    return opara__rd_u32(data + OPARA__HDR_ALIGNMENT);
}

static opara_result opara__read_preamble(opara__reader* r, size_t size, uint64_t* hash) {
    const uint8_t* d = r->data;
    uint32_t major, minor, header_size, flags, unknown;
    if (!opara__hdr_magic_prefix_ok(d, size))
        return opara__fail(r->rt, OPARA_ERR_BAD_MAGIC, "not a .opara model: the first bytes are not the magic");
    if (size < OPARA__FORMAT_MAGIC_SIZE)
        return opara__fail(r->rt, OPARA_ERR_TRUNCATED, "model is %zu bytes, shorter than the magic", size);
    if (size < OPARA__HDR_HEADER_SIZE + 4)
        return opara__fail(r->rt, OPARA_ERR_TRUNCATED, "model is %zu bytes: the header is cut off", size);
    major = opara__rd_u16(d + OPARA__HDR_VER_MAJOR);
    minor = opara__rd_u16(d + OPARA__HDR_VER_MINOR);
    if (major > OPARA__FORMAT_MAJOR)
        return opara__fail(r->rt, OPARA_ERR_VERSION_TOO_NEW, "format version %u.%u is newer than this library's %d.%d",
                           major, minor, OPARA__FORMAT_MAJOR, OPARA__FORMAT_MINOR);
    if (major < OPARA__FORMAT_MIN_MAJOR)
        return opara__fail(r->rt, OPARA_ERR_VERSION_TOO_OLD, "format version %u.%u is older than the oldest supported %d.0",
                           major, minor, OPARA__FORMAT_MIN_MAJOR);
    header_size = opara__rd_u32(d + OPARA__HDR_HEADER_SIZE);
    if (size < OPARA__FORMAT_HEADER_SIZE || size < header_size)
        return opara__fail(r->rt, OPARA_ERR_TRUNCATED, "model is %zu bytes: the %u-byte header is cut off", size,
                           OPARA__MAX(header_size, (uint32_t)OPARA__FORMAT_HEADER_SIZE));
    if (header_size < OPARA__FORMAT_HEADER_SIZE || header_size % 8)
        return opara__fail(r->rt, OPARA_ERR_CORRUPT, "header size %u (must be a multiple of 8, at least %d)",
                           header_size, OPARA__FORMAT_HEADER_SIZE);
    r->total = opara__rd_u64(d + OPARA__HDR_TOTAL_SIZE);
    if (r->total > (uint64_t)OPARA_MAX_MODEL_BYTES)
        return opara__fail(r->rt, OPARA_ERR_LIMIT_EXCEEDED, "model is %llu bytes (limit OPARA_MAX_MODEL_BYTES %llu)",
                           (unsigned long long)r->total, (unsigned long long)OPARA_MAX_MODEL_BYTES);
    if (r->total > size)
        return opara__fail(r->rt, OPARA_ERR_TRUNCATED, "model header says %llu bytes, only %zu are present",
                           (unsigned long long)r->total, size);
    if (r->total < header_size)
        return opara__fail(r->rt, OPARA_ERR_CORRUPT, "total size %llu is smaller than the header",
                           (unsigned long long)r->total);
    flags = opara__rd_u32(d + OPARA__HDR_FLAGS);
    unknown = flags & OPARA__FORMAT_REQUIRED_MASK & ~(uint32_t)OPARA__FORMAT_KNOWN_REQUIRED_FLAGS;
    if (unknown)
        return opara__fail(r->rt, OPARA_ERR_UNKNOWN_FLAGS, "must-understand flags 0x%04x are not known to this library",
                           unknown);
    r->alignment = opara__rd_u32(d + OPARA__HDR_ALIGNMENT);
    if (!opara__is_pow2(r->alignment) || r->alignment < OPARA__FORMAT_MIN_ALIGN || r->alignment > OPARA__FORMAT_MAX_ALIGN)
        return opara__fail(r->rt, OPARA_ERR_BAD_ALIGNMENT, "alignment %u is not a power of two in [%u, %u]",
                           r->alignment, OPARA__FORMAT_MIN_ALIGN, OPARA__FORMAT_MAX_ALIGN);
    if ((uintptr_t)d % r->alignment)
        return opara__fail(r->rt, OPARA_ERR_BAD_ALIGNMENT, "model buffer %p is not aligned to %u bytes", (const void*)d,
                           r->alignment);
    *hash = opara__rd_u64(d + OPARA__HDR_HASH);
    r->strings_off = header_size; /* the first section may not start inside the header */
    return OPARA_OK;
}

static opara_result opara__read_counts(opara__reader* r) {
    const uint8_t* d = r->data;
    r->n_strings = opara__rd_u32(d + OPARA__HDR_N_STRINGS);
    r->n_tensors = opara__rd_u32(d + OPARA__HDR_N_TENSORS);
    r->n_nodes = opara__rd_u32(d + OPARA__HDR_N_NODES);
    r->n_attrs = opara__rd_u32(d + OPARA__HDR_N_ATTRS);
    r->n_refs = opara__rd_u32(d + OPARA__HDR_N_REFS);
    if (r->n_strings > OPARA_MAX_STRINGS)
        return opara__fail(r->rt, OPARA_ERR_LIMIT_EXCEEDED, "%u strings (limit OPARA_MAX_STRINGS %u)", r->n_strings,
                           (unsigned)OPARA_MAX_STRINGS);
    if (r->n_tensors > OPARA_MAX_TENSORS)
        return opara__fail(r->rt, OPARA_ERR_LIMIT_EXCEEDED, "%u tensors (limit OPARA_MAX_TENSORS %u)", r->n_tensors,
                           (unsigned)OPARA_MAX_TENSORS);
    if (r->n_nodes > OPARA_MAX_NODES)
        return opara__fail(r->rt, OPARA_ERR_LIMIT_EXCEEDED, "%u nodes (limit OPARA_MAX_NODES %u)", r->n_nodes,
                           (unsigned)OPARA_MAX_NODES);
    if ((uint64_t)r->n_attrs > (uint64_t)r->n_nodes * OPARA_MAX_ATTRS + 0)
        return opara__fail(r->rt, OPARA_ERR_LIMIT_EXCEEDED, "%u attributes for %u nodes (limit OPARA_MAX_ATTRS %u each)",
                           r->n_attrs, r->n_nodes, (unsigned)OPARA_MAX_ATTRS);
    return OPARA_OK;
}

typedef struct opara__section {
    const char* name;
    uint64_t off, size;
} opara__section;

/* Sections must lie inside the file, after the header, in the order of the spec, without overlap. */
static opara_result opara__read_sections(opara__reader* r) {
    const uint8_t* d = r->data;
    opara__section s[8];
    uint64_t prev_end = r->strings_off;
    int i;
    r->strings_off = opara__rd_u64(d + OPARA__HDR_STRINGS_OFF);
    r->strbytes_off = opara__rd_u64(d + OPARA__HDR_STRBYTES_OFF);
    r->strbytes_size = opara__rd_u64(d + OPARA__HDR_STRBYTES_SIZE);
    r->tensors_off = opara__rd_u64(d + OPARA__HDR_TENSORS_OFF);
    r->nodes_off = opara__rd_u64(d + OPARA__HDR_NODES_OFF);
    r->attrs_off = opara__rd_u64(d + OPARA__HDR_ATTRS_OFF);
    r->refs_off = opara__rd_u64(d + OPARA__HDR_REFS_OFF);
    r->payload_off = opara__rd_u64(d + OPARA__HDR_PAYLOAD_OFF);
    r->payload_size = opara__rd_u64(d + OPARA__HDR_PAYLOAD_SIZE);
    r->data_off = opara__rd_u64(d + OPARA__HDR_DATA_OFF);
    r->data_size = opara__rd_u64(d + OPARA__HDR_DATA_SIZE);
    s[0].name = "string index", s[0].off = r->strings_off, s[0].size = (uint64_t)r->n_strings * OPARA__FORMAT_STRING_SIZE;
    s[1].name = "string bytes", s[1].off = r->strbytes_off, s[1].size = r->strbytes_size;
    s[2].name = "tensor table", s[2].off = r->tensors_off, s[2].size = (uint64_t)r->n_tensors * OPARA__FORMAT_TENSOR_SIZE;
    s[3].name = "node table", s[3].off = r->nodes_off, s[3].size = (uint64_t)r->n_nodes * OPARA__FORMAT_NODE_SIZE;
    s[4].name = "attribute table", s[4].off = r->attrs_off, s[4].size = (uint64_t)r->n_attrs * OPARA__FORMAT_ATTR_SIZE;
    s[5].name = "reference table", s[5].off = r->refs_off, s[5].size = (uint64_t)r->n_refs * 4;
    s[6].name = "attribute payload", s[6].off = r->payload_off, s[6].size = r->payload_size;
    s[7].name = "data section", s[7].off = r->data_off, s[7].size = r->data_size;
    for (i = 0; i < 8; ++i) {
        if (!opara__range_ok(s[i].off, s[i].size, r->total))
            return opara__fail(r->rt, OPARA_ERR_OUT_OF_BOUNDS, "%s at offset %llu, %llu bytes, ends outside the %llu-byte model",
                               s[i].name, (unsigned long long)s[i].off, (unsigned long long)s[i].size,
                               (unsigned long long)r->total);
        if (s[i].off < prev_end)
            return opara__fail(r->rt, OPARA_ERR_CORRUPT, "%s at offset %llu overlaps what precedes it (ends at %llu)",
                               s[i].name, (unsigned long long)s[i].off, (unsigned long long)prev_end);
        prev_end = s[i].off + s[i].size;
    }
    if (r->data_off % r->alignment)
        return opara__fail(r->rt, OPARA_ERR_BAD_ALIGNMENT, "data section offset %llu is not a multiple of the alignment %u",
                           (unsigned long long)r->data_off, r->alignment);
    return OPARA_OK;
}

/* ---- strings: index entries {u32 offset, u32 length} into the string bytes, each NUL-terminated */

static opara_result opara__check_strings(opara__reader* r) {
    uint32_t i;
    const uint8_t* bytes = r->data + r->strbytes_off;
    for (i = 0; i < r->n_strings; ++i) {
        const uint8_t* e = r->data + r->strings_off + (size_t)i * OPARA__FORMAT_STRING_SIZE;
        uint32_t off = opara__rd_u32(e), len = opara__rd_u32(e + 4);
        if (len > OPARA_MAX_NAME)
            return opara__fail(r->rt, OPARA_ERR_LIMIT_EXCEEDED, "string %u is %u bytes (limit OPARA_MAX_NAME %u)", i, len,
                               (unsigned)OPARA_MAX_NAME);
        if (!opara__range_ok(off, (uint64_t)len + 1, r->strbytes_size))
            return opara__fail(r->rt, OPARA_ERR_OUT_OF_BOUNDS, "string %u: bytes [%u, %llu) outside the string bytes [0, %llu)",
                               i, off, (unsigned long long)off + len + 1, (unsigned long long)r->strbytes_size);
        if (bytes[(size_t)off + len] != 0 || memchr(bytes + off, 0, len) != NULL)
            return opara__fail(r->rt, OPARA_ERR_CORRUPT, "string %u is not a %u-byte NUL-terminated string", i, len);
    }
    return OPARA_OK;
}

/* The string with index idx (checked by opara__check_strings), or NULL with BAD_INDEX reported. */
static const char* opara__string(opara__reader* r, uint32_t idx, const char* what, uint32_t owner) {
    if (idx >= r->n_strings) {
        opara__fail(r->rt, OPARA_ERR_BAD_INDEX, "%s %u: string index %u out of range (%u strings)", what, owner, idx,
                    r->n_strings);
        return NULL;
    }
    return (const char*)r->data + r->strbytes_off +
           opara__rd_u32(r->data + r->strings_off + (size_t)idx * OPARA__FORMAT_STRING_SIZE);
}

/* ---- tensors --------------------------------------------------------------------------------- */

static opara_result opara__read_shape(opara__reader* r, uint32_t t, const char* name, const uint8_t* rec,
                                      opara__shape* shape) {
    uint32_t rank = rec[6], k;
    if (rank == OPARA__FORMAT_RANK_UNKNOWN) {
        shape->ndim = -1;
        return OPARA_OK;
    }
    if (rank > OPARA__FORMAT_MAX_RANK)
        return opara__fail(r->rt, OPARA_ERR_CORRUPT, "tensor %u '%s': rank %u (the format allows %d)", t, name, rank,
                           OPARA__FORMAT_MAX_RANK);
    if (rank > OPARA_MAX_DIMS)
        return opara__fail(r->rt, OPARA_ERR_LIMIT_EXCEEDED, "tensor %u '%s': rank %u (limit OPARA_MAX_DIMS %d)", t, name,
                           rank, OPARA_MAX_DIMS);
    shape->ndim = (int32_t)rank;
    for (k = 0; k < OPARA__FORMAT_MAX_RANK; ++k) {
        int64_t dim = (int64_t)opara__rd_u64(rec + 16 + 8 * k);
        if (k >= rank) {
            if (dim != 0)
                return opara__fail(r->rt, OPARA_ERR_CORRUPT, "tensor %u '%s': unused dimension %u is %lld, not 0", t, name,
                                   k, (long long)dim);
            continue;
        }
        if (dim < OPARA__FORMAT_DIM_BATCH)
            return opara__fail(r->rt, OPARA_ERR_CORRUPT, "tensor %u '%s': dimension %u is %lld", t, name, k, (long long)dim);
        shape->dims[k] = dim == OPARA__FORMAT_DIM_BATCH ? OPARA__DIM_BATCH : dim;
    }
    return OPARA_OK;
}

typedef struct opara__extent {
    uint64_t off, size;
    uint32_t tensor;
} opara__extent;

static opara_result opara__read_tensor(opara__reader* r, opara__graph* g, uint32_t t, opara__extent* ext, uint32_t* n_ext) {
    const uint8_t* rec = r->data + r->tensors_off + (size_t)t * OPARA__FORMAT_TENSOR_SIZE;
    const char* name = opara__string(r, opara__rd_u32(rec), "tensor", t);
    uint32_t dtype = opara__rd_u16(rec + 4), kind = rec[7];
    uint64_t off = opara__rd_u64(rec + 80), size = opara__rd_u64(rec + 88);
    opara__shape shape;
    opara_result res;
    if (!name) return OPARA_ERR_BAD_INDEX;
    if (!name[0]) return opara__fail(r->rt, OPARA_ERR_CORRUPT, "tensor %u has an empty name", t);
    if (opara__graph_find_value(g, name) >= 0)
        return opara__fail(r->rt, OPARA_ERR_CORRUPT, "tensor %u: duplicate name '%s' (also tensor %d)", t, name,
                           opara__graph_find_value(g, name));
    if (opara_dtype_size((opara_dtype)dtype) == 0)
        return opara__fail(r->rt, OPARA_ERR_BAD_DTYPE, "tensor %u '%s': unknown data type %u", t, name, dtype);
    if (kind > OPARA__VALUE_CONST)
        return opara__fail(r->rt, OPARA_ERR_BAD_ENUM, "tensor %u '%s': unknown kind %u", t, name, kind);
    if (opara__rd_u32(rec + 8) != 0 || opara__rd_u32(rec + 12) != 0)
        return opara__fail(r->rt, OPARA_ERR_CORRUPT, "tensor %u '%s': reserved fields are not zero", t, name);
    memset(&shape, 0, sizeof shape);
    res = opara__read_shape(r, t, name, rec, &shape);
    if (res != OPARA_OK) return res;
    if (opara__graph_add_value(g, name, (opara_dtype)dtype, &shape) < 0) return OPARA_ERR_OUT_OF_MEMORY;
    if (kind != OPARA__VALUE_CONST) {
        if (off || size)
            return opara__fail(r->rt, OPARA_ERR_CORRUPT, "tensor %u '%s' is not a constant but has data [%llu, +%llu)", t,
                               name, (unsigned long long)off, (unsigned long long)size);
        if (kind == OPARA__VALUE_INPUT) g->values[t].kind = OPARA__VALUE_INPUT; /* checked against the input list */
        return OPARA_OK;
    }
    if (off % r->alignment)
        return opara__fail(r->rt, OPARA_ERR_BAD_ALIGNMENT, "tensor %u '%s': data offset %llu is not a multiple of %u", t,
                           name, (unsigned long long)off, r->alignment);
    if (!opara__range_ok(off, size, r->data_size))
        return opara__fail(r->rt, OPARA_ERR_OUT_OF_BOUNDS,
                           "tensor %u '%s': data [%llu, %llu) outside the data section [%llu, %llu)", t, name,
                           (unsigned long long)(r->data_off + off), (unsigned long long)(r->data_off + off + size),
                           (unsigned long long)r->data_off, (unsigned long long)(r->data_off + r->data_size));
    if (size > (uint64_t)(size_t)-1)
        return opara__fail(r->rt, OPARA_ERR_LIMIT_EXCEEDED, "tensor %u '%s': %llu bytes", t, name, (unsigned long long)size);
    if (size) {
        ext[*n_ext].off = off;
        ext[*n_ext].size = size;
        ext[*n_ext].tensor = t;
        ++*n_ext;
    }
    return opara__graph_set_const(g, (int32_t)t, r->data + r->data_off + off, size, 0);
}

static int opara__extent_cmp(const opara__extent* a, const opara__extent* b) {
    if (a->off != b->off) return a->off < b->off ? -1 : 1;
    return a->tensor < b->tensor ? -1 : a->tensor > b->tensor;
}

/* Heap sort (no recursion, no qsort callback casts). */
static void opara__extent_sift(opara__extent* e, size_t start, size_t n) {
    size_t root = start;
    while (2 * root + 1 < n) {
        size_t child = 2 * root + 1;
        opara__extent tmp;
        if (child + 1 < n && opara__extent_cmp(&e[child], &e[child + 1]) < 0) ++child;
        if (opara__extent_cmp(&e[root], &e[child]) >= 0) return;
        tmp = e[root], e[root] = e[child], e[child] = tmp;
        root = child;
    }
}

static void opara__extent_sort(opara__extent* e, size_t n) {
    size_t i;
    for (i = n / 2; i-- > 0;) opara__extent_sift(e, i, n);
    for (i = n; i-- > 1;) {
        opara__extent tmp = e[0];
        e[0] = e[i], e[i] = tmp;
        opara__extent_sift(e, 0, i);
    }
}

static opara_result opara__check_overlap(opara__reader* r, const opara__graph* g, opara__extent* ext, uint32_t n) {
    uint32_t i;
    opara__extent_sort(ext, n);
    for (i = 1; i < n; ++i)
        if (ext[i].off - ext[i - 1].off < ext[i - 1].size)
            return opara__fail(r->rt, OPARA_ERR_CORRUPT, "tensor %u '%s' data [%llu, %llu) overlaps tensor %u '%s' [%llu, %llu)",
                               ext[i].tensor, g->values[ext[i].tensor].name, (unsigned long long)ext[i].off,
                               (unsigned long long)(ext[i].off + ext[i].size), ext[i - 1].tensor,
                               g->values[ext[i - 1].tensor].name, (unsigned long long)ext[i - 1].off,
                               (unsigned long long)(ext[i - 1].off + ext[i - 1].size));
    return OPARA_OK;
}

static opara_result opara__read_tensors(opara__reader* r, opara__graph* g) {
    opara__extent* ext = (opara__extent*)opara__calloc(r->rt, (size_t)r->n_tensors + 1, sizeof(opara__extent));
    uint32_t t, n_ext = 0;
    opara_result res = OPARA_OK;
    if (!ext) return opara__fail(r->rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory reading %u tensors", r->n_tensors);
    for (t = 0; t < r->n_tensors && res == OPARA_OK; ++t) res = opara__read_tensor(r, g, t, ext, &n_ext);
    if (res == OPARA_OK) res = opara__check_overlap(r, g, ext, n_ext);
    opara__free(r->rt, ext);
    return res;
}

/* ---- nodes and attributes -------------------------------------------------------------------- */

static int32_t opara__ref(opara__reader* r, uint32_t k) {
    return (int32_t)opara__rd_u32(r->data + r->refs_off + (size_t)k * 4);
}

static opara_result opara__read_attr(opara__reader* r, opara__graph* g, uint32_t node, const char* node_name,
                                     uint32_t a) {
    const uint8_t* rec = r->data + r->attrs_off + (size_t)a * OPARA__FORMAT_ATTR_SIZE;
    const char* name = opara__string(r, opara__rd_u32(rec), "attribute", a);
    uint32_t type = rec[4], count = opara__rd_u32(rec + 8);
    uint64_t value = opara__rd_u64(rec + 16);
    const opara__node* n = &g->nodes[node];
    if (!name) return OPARA_ERR_BAD_INDEX;
    if (!name[0]) return opara__fail(r->rt, OPARA_ERR_CORRUPT, "node %u '%s': attribute %u has an empty name", node, node_name, a);
    if (opara__node_attr(n, name))
        return opara__fail(r->rt, OPARA_ERR_CORRUPT, "node %u '%s': attribute '%s' appears twice", node, node_name, name);
    if (rec[5] || rec[6] || rec[7] || opara__rd_u32(rec + 12))
        return opara__fail(r->rt, OPARA_ERR_CORRUPT, "node %u '%s' attribute '%s': reserved fields are not zero", node,
                           node_name, name);
    switch (type) {
    case OPARA__ATTR_INT: return opara__node_set_int(g, (int32_t)node, name, (int64_t)value);
    case OPARA__ATTR_FLOAT: {
        uint32_t bits = (uint32_t)value;
        float f;
        memcpy(&f, &bits, sizeof f);
        return opara__node_set_float(g, (int32_t)node, name, f);
    }
    case OPARA__ATTR_STRING: {
        const char* s;
        if (value > 0xFFFFFFFFu) return opara__fail(r->rt, OPARA_ERR_BAD_INDEX, "node %u '%s' attribute '%s': string index %llu",
                                                    node, node_name, name, (unsigned long long)value);
        s = opara__string(r, (uint32_t)value, "attribute", a);
        return s ? opara__node_set_string(g, (int32_t)node, name, s) : OPARA_ERR_BAD_INDEX;
    }
    case OPARA__ATTR_INTS:
    case OPARA__ATTR_FLOATS: {
        size_t elem = type == OPARA__ATTR_INTS ? 8 : 4, i;
        const uint8_t* p;
        opara_result res;
        void* tmp;
        if (count > OPARA_MAX_ATTR_ELEMS)
            return opara__fail(r->rt, OPARA_ERR_LIMIT_EXCEEDED, "node %u '%s' attribute '%s': %u elements (limit %u)", node,
                               node_name, name, count, (unsigned)OPARA_MAX_ATTR_ELEMS);
        if (!opara__range_ok(value, (uint64_t)count * elem, r->payload_size))
            return opara__fail(r->rt, OPARA_ERR_OUT_OF_BOUNDS,
                               "node %u '%s' attribute '%s': values [%llu, %llu) outside the payload [0, %llu)", node,
                               node_name, name, (unsigned long long)value, (unsigned long long)(value + count * elem),
                               (unsigned long long)r->payload_size);
        if (value % elem)
            return opara__fail(r->rt, OPARA_ERR_BAD_ALIGNMENT, "node %u '%s' attribute '%s': payload offset %llu is not a multiple of %u",
                               node, node_name, name, (unsigned long long)value, (unsigned)elem);
        p = r->data + r->payload_off + value;
        tmp = opara__calloc(r->rt, (size_t)count + 1, elem);
        if (!tmp) return opara__fail(r->rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory reading attribute '%s'", name);
        for (i = 0; i < count; ++i) {
            if (elem == 8) ((int64_t*)tmp)[i] = (int64_t)opara__rd_u64(p + 8 * i);
            else {
                uint32_t bits = opara__rd_u32(p + 4 * i);
                memcpy((float*)tmp + i, &bits, 4);
            }
        }
        res = elem == 8 ? opara__node_set_ints(g, (int32_t)node, name, (const int64_t*)tmp, count)
                        : opara__node_set_floats(g, (int32_t)node, name, (const float*)tmp, count);
        opara__free(r->rt, tmp);
        return res;
    }
    default:
        return opara__fail(r->rt, OPARA_ERR_BAD_ENUM, "node %u '%s' attribute '%s': unknown type %u", node, node_name, name,
                           type);
    }
}

static opara_result opara__check_refs(opara__reader* r, uint32_t node, const char* node_name, uint32_t first,
                                      uint32_t n_in, uint32_t n_out, int32_t* idx) {
    uint32_t k;
    if (!opara__range_ok(first, (uint64_t)n_in + n_out, r->n_refs))
        return opara__fail(r->rt, OPARA_ERR_BAD_INDEX, "node %u '%s': references [%u, %llu) outside the %u references", node,
                           node_name, first, (unsigned long long)first + n_in + n_out, r->n_refs);
    for (k = 0; k < n_in + n_out; ++k) {
        int32_t v = opara__ref(r, first + k);
        int omitted = (uint32_t)v == OPARA__FORMAT_NONE && k < n_in;
        if (!omitted && (v < 0 || (uint32_t)v >= r->n_tensors))
            return opara__fail(r->rt, OPARA_ERR_BAD_INDEX, "node %u '%s' %s %u: tensor index %u out of range (%u tensors)",
                               node, node_name, k < n_in ? "input" : "output", k < n_in ? k : k - n_in, (uint32_t)v,
                               r->n_tensors);
        idx[k] = omitted ? -1 : v;
    }
    return OPARA_OK;
}

static opara_result opara__read_node(opara__reader* r, opara__graph* g, uint32_t node, int32_t* idx) {
    const uint8_t* rec = r->data + r->nodes_off + (size_t)node * OPARA__FORMAT_NODE_SIZE;
    const char* op_name = opara__string(r, opara__rd_u32(rec), "node", node);
    const char* name = opara__string(r, opara__rd_u32(rec + 4), "node", node);
    uint32_t first = opara__rd_u32(rec + 8), n_in = opara__rd_u32(rec + 12), n_out = opara__rd_u32(rec + 16);
    uint32_t first_attr = opara__rd_u32(rec + 20), n_attrs = opara__rd_u32(rec + 24), a;
    opara__op op;
    opara_result res;
    if (!op_name || !name) return OPARA_ERR_BAD_INDEX;
    op = opara__op_from_name(op_name);
    if (op == OPARA__OP_COUNT)
        return opara__fail(r->rt, OPARA_ERR_UNSUPPORTED_OP, "node %u '%s': operator '%s' is not supported", node, name,
                           op_name);
    if (opara__rd_u32(rec + 28))
        return opara__fail(r->rt, OPARA_ERR_CORRUPT, "node %u '%s': reserved field is not zero", node, name);
    if (n_in > OPARA_MAX_NODE_IO || n_out > OPARA_MAX_NODE_IO || n_attrs > OPARA_MAX_ATTRS)
        return opara__fail(r->rt, OPARA_ERR_LIMIT_EXCEEDED, "node %u '%s': %u inputs, %u outputs, %u attributes (limits %u, %u)",
                           node, name, n_in, n_out, n_attrs, (unsigned)OPARA_MAX_NODE_IO, (unsigned)OPARA_MAX_ATTRS);
    if (n_out == 0) return opara__fail(r->rt, OPARA_ERR_CORRUPT, "node %u '%s' has no outputs", node, name);
    if (!opara__range_ok(first_attr, n_attrs, r->n_attrs))
        return opara__fail(r->rt, OPARA_ERR_BAD_INDEX, "node %u '%s': attributes [%u, %llu) outside the %u attributes", node,
                           name, first_attr, (unsigned long long)first_attr + n_attrs, r->n_attrs);
    res = opara__check_refs(r, node, name, first, n_in, n_out, idx);
    if (res != OPARA_OK) return res;
    if (opara__graph_add_node(g, op, name, n_in, idx, n_out, idx + n_in) < 0) return OPARA_ERR_CORRUPT;
    for (a = 0; a < n_attrs; ++a) {
        res = opara__read_attr(r, g, node, name, first_attr + a);
        if (res != OPARA_OK) return res;
    }
    return OPARA_OK;
}

static opara_result opara__read_nodes(opara__reader* r, opara__graph* g) {
    int32_t* idx = (int32_t*)opara__calloc(r->rt, 2 * (size_t)OPARA_MAX_NODE_IO + 1, sizeof(int32_t));
    uint32_t node;
    opara_result res = OPARA_OK;
    if (!idx) return opara__fail(r->rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory reading nodes");
    for (node = 0; node < r->n_nodes && res == OPARA_OK; ++node) res = opara__read_node(r, g, node, idx);
    opara__free(r->rt, idx);
    return res;
}

static opara_result opara__read_io(opara__reader* r, opara__graph* g) {
    uint32_t n_in = opara__rd_u32(r->data + OPARA__HDR_N_INPUTS), n_out = opara__rd_u32(r->data + OPARA__HDR_N_OUTPUTS);
    uint32_t first = opara__rd_u32(r->data + OPARA__HDR_IO_REF), k;
    if (!opara__range_ok(first, (uint64_t)n_in + n_out, r->n_refs))
        return opara__fail(r->rt, OPARA_ERR_BAD_INDEX, "graph inputs/outputs: references [%u, %llu) outside the %u references",
                           first, (unsigned long long)first + n_in + n_out, r->n_refs);
    for (k = 0; k < n_in + n_out; ++k) {
        int32_t v = opara__ref(r, first + k);
        opara_result res;
        if (v < 0 || (uint32_t)v >= r->n_tensors)
            return opara__fail(r->rt, OPARA_ERR_BAD_INDEX, "graph %s %u: tensor index %u out of range (%u tensors)",
                               k < n_in ? "input" : "output", k < n_in ? k : k - n_in, (uint32_t)v, r->n_tensors);
        if (k < n_in && g->values[v].kind != OPARA__VALUE_INPUT)
            return opara__fail(r->rt, OPARA_ERR_CORRUPT, "graph input %u: tensor %d '%s' is not of kind input", k, v,
                               g->values[v].name);
        res = k < n_in ? opara__graph_add_input(g, v) : opara__graph_add_output(g, v);
        if (res != OPARA_OK) return res;
    }
    return OPARA_OK;
}

static opara_result opara__read_metadata(opara__reader* r, opara__graph* g) {
    uint32_t producer = opara__rd_u32(r->data + OPARA__HDR_PRODUCER);
    g->source_opset = (int64_t)opara__rd_u64(r->data + OPARA__HDR_OPSET);
    if (opara__rd_u32(r->data + OPARA__HDR_RESERVED) != 0)
        return opara__fail(r->rt, OPARA_ERR_CORRUPT, "header: reserved field is not zero");
    if (producer != OPARA__FORMAT_NONE) {
        const char* s = opara__string(r, producer, "producer", 0);
        if (!s) return OPARA_ERR_BAD_INDEX;
        g->producer_name = opara__pool_strdup(r->rt, &g->pool, s);
        if (!g->producer_name) return opara__fail(r->rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory");
    }
    return OPARA_OK;
}

OPARA__PRIVATE opara_result opara__format_read(opara_runtime* rt, const uint8_t* data, size_t size, opara__graph* g,
                                              uint32_t* alignment, uint64_t* hash) {
    opara__reader r;
    opara_result res;
    memset(&r, 0, sizeof r);
    r.rt = rt;
    r.data = data;
    *alignment = 0;
    *hash = 0;
    if (!data && size) return opara__fail(rt, OPARA_ERR_INVALID_ARGS, "model data is NULL");
    if (size == 0) return opara__fail(rt, OPARA_ERR_TRUNCATED, "model is empty (0 bytes)");
    res = opara__read_preamble(&r, size, hash);
    if (res == OPARA_OK) res = opara__read_counts(&r);
    if (res == OPARA_OK) res = opara__read_sections(&r);
    if (res == OPARA_OK) res = opara__check_strings(&r);
    if (res == OPARA_OK) res = opara__read_metadata(&r, g);
    if (res == OPARA_OK) res = opara__read_tensors(&r, g);
    if (res == OPARA_OK) res = opara__read_nodes(&r, g);
    if (res == OPARA_OK) res = opara__read_io(&r, g);
    if (res == OPARA_OK) res = opara__graph_validate(g);
    *alignment = r.alignment;
    return res;
}

/* ---- writer ---------------------------------------------------------------------------------- */

typedef struct opara__strtab {
    opara_runtime* rt;
    const char** items;
    size_t n, cap;
    uint32_t* slots; /* open addressing: index + 1 */
    uint32_t n_slots;
    uint64_t bytes;
} opara__strtab;

static opara_result opara__strtab_rehash(opara__strtab* t) {
    uint32_t cap = t->n_slots ? t->n_slots * 2 : 256, i;
    uint32_t* slots = (uint32_t*)opara__calloc(t->rt, cap, sizeof(uint32_t));
    if (!slots) return OPARA_ERR_OUT_OF_MEMORY;
    for (i = 0; i < t->n; ++i) {
        uint32_t s = (uint32_t)opara__hash64(t->items[i], strlen(t->items[i]), 0) & (cap - 1);
        while (slots[s]) s = (s + 1) & (cap - 1);
        slots[s] = i + 1;
    }
    opara__free(t->rt, t->slots);
    t->slots = slots;
    t->n_slots = cap;
    return OPARA_OK;
}

/* Index of s, added at the end on first use (so the order is deterministic). */
static opara_result opara__strtab_intern(opara__strtab* t, const char* s, uint32_t* index) {
    uint32_t slot;
    size_t len = strlen(s);
    if (len > OPARA_MAX_NAME) return opara__fail(t->rt, OPARA_ERR_LIMIT_EXCEEDED, "string '%.40s...' is %zu bytes (limit %u)",
                                                 s, len, (unsigned)OPARA_MAX_NAME);
    if ((t->n + 1) * 2 > t->n_slots && opara__strtab_rehash(t) != OPARA_OK)
        return opara__fail(t->rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory writing the string table");
    for (slot = (uint32_t)opara__hash64(s, len, 0) & (t->n_slots - 1); t->slots[slot]; slot = (slot + 1) & (t->n_slots - 1))
        if (strcmp(t->items[t->slots[slot] - 1], s) == 0) {
            *index = t->slots[slot] - 1;
            return OPARA_OK;
        }
    if (opara__grow(t->rt, (void**)&t->items, &t->cap, t->n + 1, sizeof(const char*)) != OPARA_OK)
        return opara__fail(t->rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory writing the string table");
    t->items[t->n] = s;
    t->slots[slot] = (uint32_t)t->n + 1;
    *index = (uint32_t)t->n++;
    t->bytes += len + 1;
    return OPARA_OK;
}

typedef struct opara__layout {
    uint32_t n_attrs, n_refs, io_ref;
    uint64_t payload_size, strings_off, strbytes_off, strbytes_size, tensors_off, nodes_off, attrs_off, refs_off;
    uint64_t payload_off, data_off, data_size, total;
    uint64_t* tensor_data_off; /* per value */
} opara__layout;

static opara_result opara__intern_all(opara__strtab* t, const opara__graph* g) {
    uint32_t i, a;
    opara_result res = OPARA_OK;
    uint32_t dummy;
    for (i = 0; i < g->n_values && res == OPARA_OK; ++i) res = opara__strtab_intern(t, g->values[i].name, &dummy);
    for (i = 0; i < g->n_nodes && res == OPARA_OK; ++i) {
        const opara__node* n = &g->nodes[i];
        res = opara__strtab_intern(t, opara__op_name(n->op), &dummy);
        if (res == OPARA_OK) res = opara__strtab_intern(t, n->name ? n->name : "", &dummy);
        for (a = 0; a < n->n_attrs && res == OPARA_OK; ++a) {
            res = opara__strtab_intern(t, n->attrs[a].name, &dummy);
            if (res == OPARA_OK && n->attrs[a].type == OPARA__ATTR_STRING) res = opara__strtab_intern(t, n->attrs[a].v.s, &dummy);
        }
    }
    if (res == OPARA_OK && g->producer_name) res = opara__strtab_intern(t, g->producer_name, &dummy);
    return res;
}

static uint64_t opara__align64(uint64_t x, uint64_t a) {
    return (x + a - 1) & ~(a - 1);
}

static opara_result opara__plan_layout(opara_runtime* rt, const opara__graph* g, const opara__strtab* t,
                                       uint32_t alignment, opara__layout* L) {
    uint32_t i, a;
    uint64_t refs = 0, attrs = 0, payload = 0, data = 0;
    for (i = 0; i < g->n_nodes; ++i) {
        const opara__node* n = &g->nodes[i];
        refs += (uint64_t)n->n_inputs + n->n_outputs;
        attrs += n->n_attrs;
        for (a = 0; a < n->n_attrs; ++a) {
            if (n->attrs[a].type == OPARA__ATTR_INTS) payload = opara__align64(payload, 8) + 8 * (uint64_t)n->attrs[a].count;
            if (n->attrs[a].type == OPARA__ATTR_FLOATS) payload = opara__align64(payload, 4) + 4 * (uint64_t)n->attrs[a].count;
        }
    }
    L->io_ref = (uint32_t)refs;
    refs += (uint64_t)g->n_inputs + g->n_outputs;
    if (refs > 0xFFFFFFF0u || attrs > 0xFFFFFFF0u) return opara__fail(rt, OPARA_ERR_LIMIT_EXCEEDED, "graph too big to write");
    L->n_refs = (uint32_t)refs;
    L->n_attrs = (uint32_t)attrs;
    L->payload_size = payload;
    L->tensor_data_off = (uint64_t*)opara__calloc(rt, (size_t)g->n_values + 1, sizeof(uint64_t));
    if (!L->tensor_data_off) return opara__fail(rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory writing the model");
    for (i = 0; i < g->n_values; ++i)
        if (g->values[i].kind == OPARA__VALUE_CONST) {
            data = opara__align64(data, alignment);
            L->tensor_data_off[i] = data;
            data += g->values[i].nbytes;
        }
    L->data_size = data;
    L->strings_off = OPARA__FORMAT_HEADER_SIZE;
    L->strbytes_off = L->strings_off + (uint64_t)t->n * OPARA__FORMAT_STRING_SIZE;
    L->strbytes_size = t->bytes;
    L->tensors_off = opara__align64(L->strbytes_off + L->strbytes_size, 8);
    L->nodes_off = L->tensors_off + (uint64_t)g->n_values * OPARA__FORMAT_TENSOR_SIZE;
    L->attrs_off = L->nodes_off + (uint64_t)g->n_nodes * OPARA__FORMAT_NODE_SIZE;
    L->refs_off = L->attrs_off + attrs * OPARA__FORMAT_ATTR_SIZE;
    L->payload_off = opara__align64(L->refs_off + refs * 4, 8);
    L->data_off = opara__align64(L->payload_off + payload, alignment);
    L->total = L->data_off + L->data_size;
    if (L->total > (uint64_t)OPARA_MAX_MODEL_BYTES || L->total > (uint64_t)(size_t)-1)
        return opara__fail(rt, OPARA_ERR_LIMIT_EXCEEDED, "model would be %llu bytes", (unsigned long long)L->total);
    return OPARA_OK;
}

static void opara__write_header(uint8_t* o, const opara__graph* g, const opara__strtab* t, const opara__layout* L,
                                uint32_t alignment, uint32_t producer) {
    memcpy(o, OPARA__FORMAT_MAGIC, OPARA__FORMAT_MAGIC_SIZE);
    opara__wr_u16(o + OPARA__HDR_VER_MAJOR, OPARA__FORMAT_MAJOR);
    opara__wr_u16(o + OPARA__HDR_VER_MINOR, OPARA__FORMAT_MINOR);
    opara__wr_u32(o + OPARA__HDR_HEADER_SIZE, OPARA__FORMAT_HEADER_SIZE);
    opara__wr_u32(o + OPARA__HDR_FLAGS, 0);
    opara__wr_u32(o + OPARA__HDR_ALIGNMENT, alignment);
    opara__wr_u32(o + OPARA__HDR_N_STRINGS, (uint32_t)t->n);
    opara__wr_u32(o + OPARA__HDR_N_TENSORS, g->n_values);
    opara__wr_u32(o + OPARA__HDR_N_NODES, g->n_nodes);
    opara__wr_u32(o + OPARA__HDR_N_ATTRS, L->n_attrs);
    opara__wr_u32(o + OPARA__HDR_N_REFS, L->n_refs);
    opara__wr_u32(o + OPARA__HDR_N_INPUTS, g->n_inputs);
    opara__wr_u32(o + OPARA__HDR_N_OUTPUTS, g->n_outputs);
    opara__wr_u32(o + OPARA__HDR_IO_REF, L->io_ref);
    opara__wr_u32(o + OPARA__HDR_PRODUCER, producer);
    opara__wr_u64(o + OPARA__HDR_OPSET, (uint64_t)g->source_opset);
    opara__wr_u64(o + OPARA__HDR_STRINGS_OFF, L->strings_off);
    opara__wr_u64(o + OPARA__HDR_STRBYTES_OFF, L->strbytes_off);
    opara__wr_u64(o + OPARA__HDR_STRBYTES_SIZE, L->strbytes_size);
    opara__wr_u64(o + OPARA__HDR_TENSORS_OFF, L->tensors_off);
    opara__wr_u64(o + OPARA__HDR_NODES_OFF, L->nodes_off);
    opara__wr_u64(o + OPARA__HDR_ATTRS_OFF, L->attrs_off);
    opara__wr_u64(o + OPARA__HDR_REFS_OFF, L->refs_off);
    opara__wr_u64(o + OPARA__HDR_PAYLOAD_OFF, L->payload_off);
    opara__wr_u64(o + OPARA__HDR_PAYLOAD_SIZE, L->payload_size);
    opara__wr_u64(o + OPARA__HDR_DATA_OFF, L->data_off);
    opara__wr_u64(o + OPARA__HDR_DATA_SIZE, L->data_size);
    opara__wr_u64(o + OPARA__HDR_TOTAL_SIZE, L->total);
}

static void opara__write_strings(uint8_t* o, const opara__strtab* t, const opara__layout* L) {
    uint64_t pos = 0;
    size_t i;
    for (i = 0; i < t->n; ++i) {
        size_t len = strlen(t->items[i]);
        uint8_t* e = o + L->strings_off + i * OPARA__FORMAT_STRING_SIZE;
        opara__wr_u32(e, (uint32_t)pos);
        opara__wr_u32(e + 4, (uint32_t)len);
        memcpy(o + L->strbytes_off + pos, t->items[i], len + 1);
        pos += len + 1;
    }
}

static uint32_t opara__str_index(opara__strtab* t, const char* s) {
    uint32_t index = 0;
    opara__strtab_intern(t, s, &index); /* already present: cannot fail */
    return index;
}

static void opara__write_tensors(uint8_t* o, const opara__graph* g, opara__strtab* t, const opara__layout* L) {
    uint32_t i;
    int k;
    for (i = 0; i < g->n_values; ++i) {
        const opara__value* v = &g->values[i];
        uint8_t* rec = o + L->tensors_off + (size_t)i * OPARA__FORMAT_TENSOR_SIZE;
        opara__wr_u32(rec, opara__str_index(t, v->name));
        opara__wr_u16(rec + 4, (uint16_t)v->dtype);
        rec[6] = (uint8_t)(v->shape.ndim < 0 ? OPARA__FORMAT_RANK_UNKNOWN : (uint32_t)v->shape.ndim);
        rec[7] = (uint8_t)v->kind;
        for (k = 0; k < v->shape.ndim; ++k)
            opara__wr_u64(rec + 16 + 8 * k,
                          (uint64_t)(v->shape.dims[k] == OPARA__DIM_BATCH ? OPARA__FORMAT_DIM_BATCH : v->shape.dims[k]));
        if (v->kind == OPARA__VALUE_CONST) {
            opara__wr_u64(rec + 80, L->tensor_data_off[i]);
            opara__wr_u64(rec + 88, v->nbytes);
            if (v->nbytes) memcpy(o + L->data_off + L->tensor_data_off[i], v->data, (size_t)v->nbytes);
        }
    }
}

static void opara__write_nodes(uint8_t* o, const opara__graph* g, opara__strtab* t, const opara__layout* L) {
    uint32_t i, k, ref = 0, attr = 0;
    uint64_t payload = 0;
    for (i = 0; i < g->n_nodes; ++i) {
        const opara__node* n = &g->nodes[i];
        uint8_t* rec = o + L->nodes_off + (size_t)i * OPARA__FORMAT_NODE_SIZE;
        opara__wr_u32(rec, opara__str_index(t, opara__op_name(n->op)));
        opara__wr_u32(rec + 4, opara__str_index(t, n->name ? n->name : ""));
        opara__wr_u32(rec + 8, ref);
        opara__wr_u32(rec + 12, n->n_inputs);
        opara__wr_u32(rec + 16, n->n_outputs);
        opara__wr_u32(rec + 20, attr);
        opara__wr_u32(rec + 24, n->n_attrs);
        for (k = 0; k < n->n_inputs; ++k) opara__wr_u32(o + L->refs_off + 4 * (size_t)ref++, (uint32_t)n->inputs[k]);
        for (k = 0; k < n->n_outputs; ++k) opara__wr_u32(o + L->refs_off + 4 * (size_t)ref++, (uint32_t)n->outputs[k]);
        for (k = 0; k < n->n_attrs; ++k) {
            const opara__attr* a = &n->attrs[k];
            uint8_t* ar = o + L->attrs_off + (size_t)attr++ * OPARA__FORMAT_ATTR_SIZE;
            uint32_t e;
            opara__wr_u32(ar, opara__str_index(t, a->name));
            ar[4] = (uint8_t)a->type;
            switch (a->type) {
            case OPARA__ATTR_INT: opara__wr_u32(ar + 8, 1), opara__wr_u64(ar + 16, (uint64_t)a->v.i); break;
            case OPARA__ATTR_FLOAT: {
                uint32_t bits;
                memcpy(&bits, &a->v.f, 4);
                opara__wr_u32(ar + 8, 1);
                opara__wr_u64(ar + 16, bits);
                break;
            }
            case OPARA__ATTR_STRING: opara__wr_u64(ar + 16, opara__str_index(t, a->v.s)); break;
            case OPARA__ATTR_INTS:
                payload = opara__align64(payload, 8);
                opara__wr_u32(ar + 8, a->count);
                opara__wr_u64(ar + 16, payload);
                for (e = 0; e < a->count; ++e, payload += 8) opara__wr_u64(o + L->payload_off + payload, (uint64_t)a->v.ints[e]);
                break;
            case OPARA__ATTR_FLOATS:
                payload = opara__align64(payload, 4);
                opara__wr_u32(ar + 8, a->count);
                opara__wr_u64(ar + 16, payload);
                for (e = 0; e < a->count; ++e, payload += 4) {
                    uint32_t bits;
                    memcpy(&bits, &a->v.floats[e], 4);
                    opara__wr_u32(o + L->payload_off + payload, bits);
                }
                break;
            }
        }
    }
    for (i = 0; i < g->n_inputs; ++i) opara__wr_u32(o + L->refs_off + 4 * (size_t)ref++, (uint32_t)g->inputs[i]);
    for (i = 0; i < g->n_outputs; ++i) opara__wr_u32(o + L->refs_off + 4 * (size_t)ref++, (uint32_t)g->outputs[i]);
}

static opara_result opara__check_writable(opara_runtime* rt, const opara__graph* g) {
    uint32_t i;
    for (i = 0; i < g->n_values; ++i) {
        const opara__value* v = &g->values[i];
        if (opara_dtype_size(v->dtype) == 0)
            return opara__fail(rt, OPARA_ERR_BAD_DTYPE, "tensor %u '%s': data type %d cannot be written", i, v->name,
                               (int)v->dtype);
        if (v->shape.ndim > OPARA__FORMAT_MAX_RANK)
            return opara__fail(rt, OPARA_ERR_LIMIT_EXCEEDED, "tensor %u '%s': rank %d (the format allows %d)", i, v->name,
                               (int)v->shape.ndim, OPARA__FORMAT_MAX_RANK);
    }
    return OPARA_OK;
}

OPARA__PRIVATE opara_result opara__format_write(opara_runtime* rt, const opara__graph* g, uint32_t alignment,
                                               opara__bytes* out) {
    opara__strtab t;
    opara__layout L;
    opara_result res;
    uint8_t* o = NULL;
    out->data = NULL;
    out->size = 0;
    if (!alignment) alignment = OPARA__DEFAULT_ALIGN;
    if (!opara__is_pow2(alignment) || alignment < OPARA__FORMAT_MIN_ALIGN || alignment > OPARA__FORMAT_MAX_ALIGN)
        return opara__fail(rt, OPARA_ERR_BAD_ALIGNMENT, "alignment %u is not a power of two in [%u, %u]", alignment,
                           OPARA__FORMAT_MIN_ALIGN, OPARA__FORMAT_MAX_ALIGN);
    memset(&t, 0, sizeof t);
    memset(&L, 0, sizeof L);
    t.rt = rt;
    res = opara__check_writable(rt, g);
    if (res == OPARA_OK) res = opara__intern_all(&t, g);
    if (res == OPARA_OK) res = opara__plan_layout(rt, g, &t, alignment, &L);
    if (res == OPARA_OK) {
        o = (uint8_t*)opara__alloc_aligned(&rt->allocator, (size_t)L.total, alignment);
        if (!o) res = opara__fail(rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory for a %llu-byte model", (unsigned long long)L.total);
    }
    if (res == OPARA_OK) {
        memset(o, 0, (size_t)L.total);
        opara__write_header(o, g, &t, &L, alignment,
                            g->producer_name ? opara__str_index(&t, g->producer_name) : OPARA__FORMAT_NONE);
        opara__write_strings(o, &t, &L);
        opara__write_tensors(o, g, &t, &L);
        opara__write_nodes(o, g, &t, &L);
        opara__wr_u64(o + OPARA__HDR_HASH, opara__hash64(o + OPARA__FORMAT_HEADER_SIZE,
                                                         (size_t)L.total - OPARA__FORMAT_HEADER_SIZE, 0));
        out->data = o;
        out->size = (size_t)L.total;
    }
    opara__free(rt, L.tensor_data_off);
    opara__free(rt, (void*)t.items);
    opara__free(rt, t.slots);
    return res;
}
/* ==== END src/opara_format.c ==== */
/* ==== BEGIN src/opara_model.c ==== */
/* The model object: semantic validation shared by every way a model is made, loading from
   memory and from files (mmap / MapViewOfFile / read), the public queries, and the builder. */
/* #include "opara_model.h" (inlined above) */

#if !defined(OPARA_NO_STDIO)
#  include <stdio.h>
#  if defined(_WIN32)
#    define WIN32_LEAN_AND_MEAN
#    include <windows.h>
#  elif defined(__unix__) || defined(__APPLE__)
#    include <fcntl.h>
#    include <sys/mman.h>
#    include <sys/stat.h>
#    include <unistd.h>
#    define OPARA__HAVE_MMAP 1
#  endif
#endif

/* ---- semantic validation --------------------------------------------------------------------- */

/* Types of the attributes the IR knows (ONNX names mean the same thing on every operator that
   has them). An attribute with a known name and another type is rejected: kernels and shape
   inference read them by type. Unknown names are kept and ignored. */
typedef struct opara__attr_rule {
    const char* name;
    opara__attr_type type;
} opara__attr_rule;

static const opara__attr_rule opara__attr_rules[] = {
    {"kernel_shape", OPARA__ATTR_INTS}, {"strides", OPARA__ATTR_INTS}, {"pads", OPARA__ATTR_INTS},
    {"dilations", OPARA__ATTR_INTS}, {"group", OPARA__ATTR_INT}, {"auto_pad", OPARA__ATTR_STRING},
    {"ceil_mode", OPARA__ATTR_INT}, {"count_include_pad", OPARA__ATTR_INT}, {"storage_order", OPARA__ATTR_INT},
    {"output_padding", OPARA__ATTR_INTS}, {"output_shape", OPARA__ATTR_INTS}, {"epsilon", OPARA__ATTR_FLOAT},
    {"momentum", OPARA__ATTR_FLOAT}, {"alpha", OPARA__ATTR_FLOAT}, {"beta", OPARA__ATTR_FLOAT},
    {"axis", OPARA__ATTR_INT}, {"axes", OPARA__ATTR_INTS}, {"split", OPARA__ATTR_INTS}, {"starts", OPARA__ATTR_INTS},
    {"ends", OPARA__ATTR_INTS}, {"steps", OPARA__ATTR_INTS}, {"shape", OPARA__ATTR_INTS}, {"allowzero", OPARA__ATTR_INT},
    {"perm", OPARA__ATTR_INTS}, {"transA", OPARA__ATTR_INT}, {"transB", OPARA__ATTR_INT}, {"keepdims", OPARA__ATTR_INT},
    {"noop_with_empty_axes", OPARA__ATTR_INT}, {"to", OPARA__ATTR_INT}, {"mode", OPARA__ATTR_STRING},
    {"min", OPARA__ATTR_FLOAT}, {"max", OPARA__ATTR_FLOAT}, {"value", OPARA__ATTR_FLOAT},
    {"constant_value", OPARA__ATTR_FLOAT}, {"scales", OPARA__ATTR_FLOATS}, {"sizes", OPARA__ATTR_INTS},
    {"approximate", OPARA__ATTR_STRING}, {"coordinate_transformation_mode", OPARA__ATTR_STRING},
    {"nearest_mode", OPARA__ATTR_STRING}, {"cubic_coeff_a", OPARA__ATTR_FLOAT}, {"exclude_outside", OPARA__ATTR_INT},
    {"extrapolation_value", OPARA__ATTR_FLOAT}, {"stash_type", OPARA__ATTR_INT}, {"training_mode", OPARA__ATTR_INT},
};

static const char* opara__attr_type_name(opara__attr_type t) {
    switch (t) {
    case OPARA__ATTR_INT: return "INT";
    case OPARA__ATTR_FLOAT: return "FLOAT";
    case OPARA__ATTR_INTS: return "INTS";
    case OPARA__ATTR_FLOATS: return "FLOATS";
    case OPARA__ATTR_STRING: return "STRING";
    default: return "?";
    }
}

static opara_result opara__validate_attrs(opara__graph* g, uint32_t i) {
    const opara__node* n = &g->nodes[i];
    uint32_t a, k;
    if (n->n_attrs > OPARA_MAX_ATTRS)
        return opara__fail(g->rt, OPARA_ERR_LIMIT_EXCEEDED, "node %u '%s': %u attributes (limit %u)", i, n->name, n->n_attrs,
                           (unsigned)OPARA_MAX_ATTRS);
    for (a = 0; a < n->n_attrs; ++a) {
        const opara__attr* at = &n->attrs[a];
        if ((at->type == OPARA__ATTR_INTS || at->type == OPARA__ATTR_FLOATS) && at->count > OPARA_MAX_ATTR_ELEMS)
            return opara__fail(g->rt, OPARA_ERR_LIMIT_EXCEEDED, "node %u '%s' attribute '%s': %u elements (limit %u)", i,
                               n->name, at->name, at->count, (unsigned)OPARA_MAX_ATTR_ELEMS);
        for (k = 0; k < OPARA__ARRAY_COUNT(opara__attr_rules); ++k)
            if (strcmp(opara__attr_rules[k].name, at->name) == 0 && opara__attr_rules[k].type != at->type)
                return opara__fail(g->rt, OPARA_ERR_CORRUPT, "node %u '%s' (%s): attribute '%s' is %s, expected %s", i,
                                   n->name, opara__op_name(n->op), at->name, opara__attr_type_name(at->type),
                                   opara__attr_type_name(opara__attr_rules[k].type));
    }
    return OPARA_OK;
}

static opara_result opara__validate_value(opara__graph* g, uint32_t i) {
    const opara__value* v = &g->values[i];
    int32_t k;
    size_t esize = opara_dtype_size(v->dtype);
    if (v->kind != OPARA__VALUE_ACTIVATION && esize == 0)
        return opara__fail(g->rt, OPARA_ERR_BAD_DTYPE, "tensor %u '%s': data type %d is not supported", i, v->name,
                           (int)v->dtype);
    if (v->kind == OPARA__VALUE_ACTIVATION && v->dtype != OPARA_DTYPE_UNDEFINED && esize == 0)
        return opara__fail(g->rt, OPARA_ERR_BAD_DTYPE, "tensor %u '%s': data type %d is not supported", i, v->name,
                           (int)v->dtype);
    if (v->kind == OPARA__VALUE_ACTIVATION && v->producer < 0)
        return opara__fail(g->rt, OPARA_ERR_CORRUPT, "tensor %u '%s' is neither an input, a constant nor produced by a node", i,
                           v->name);
    if (v->kind != OPARA__VALUE_ACTIVATION && v->shape.ndim < 0)
        return opara__fail(g->rt, OPARA_ERR_CORRUPT, "tensor %u '%s' (%s) has no declared shape", i, v->name,
                           v->kind == OPARA__VALUE_INPUT ? "input" : "constant");
    for (k = 0; k < v->shape.ndim; ++k) {
        int64_t d = v->shape.dims[k];
        if (d < 0 && !(d == OPARA__DIM_BATCH && v->kind != OPARA__VALUE_CONST))
            return opara__fail(g->rt, OPARA_ERR_CORRUPT, "tensor %u '%s': dimension %d is %lld", i, v->name, (int)k,
                               (long long)d);
    }
    if (v->kind == OPARA__VALUE_CONST) {
        int64_t numel = opara__shape_numel(&v->shape);
        uint64_t expect;
        if (numel < 0 || (uint64_t)numel > UINT64_MAX / 8)
            return opara__fail(g->rt, OPARA_ERR_LIMIT_EXCEEDED, "constant %u '%s': too many elements", i, v->name);
        expect = (uint64_t)numel * esize;
        if (v->nbytes != expect)
            return opara__fail(g->rt, OPARA_ERR_BAD_DTYPE, "constant %u '%s': %llu bytes of data, but %lld %s elements need %llu",
                               i, v->name, (unsigned long long)v->nbytes, (long long)numel, opara_dtype_name(v->dtype),
                               (unsigned long long)expect);
        if (v->nbytes && !v->data)
            return opara__fail(g->rt, OPARA_ERR_CORRUPT, "constant %u '%s' has no data", i, v->name);
    }
    return OPARA_OK;
}

static opara_result opara__validate_io(opara__graph* g) {
    uint8_t* seen = (uint8_t*)opara__calloc(g->rt, (size_t)g->n_values + 1, 1);
    uint32_t i, n_input_values = 0;
    opara_result r = OPARA_OK;
    if (!seen) return opara__fail(g->rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory");
    for (i = 0; i < g->n_inputs && r == OPARA_OK; ++i) {
        int32_t v = g->inputs[i];
        if (g->values[v].kind != OPARA__VALUE_INPUT || (seen[v] & 1))
            r = opara__fail(g->rt, OPARA_ERR_CORRUPT, "graph input %u: tensor '%s' is %s", i, g->values[v].name,
                            (seen[v] & 1) ? "listed twice" : "not an input");
        seen[v] |= 1;
    }
    for (i = 0; i < g->n_outputs && r == OPARA_OK; ++i) {
        int32_t v = g->outputs[i];
        if (seen[v] & 2) r = opara__fail(g->rt, OPARA_ERR_CORRUPT, "graph output %u: tensor '%s' is listed twice", i, g->values[v].name);
        seen[v] |= 2;
    }
    for (i = 0; i < g->n_values && r == OPARA_OK; ++i)
        if (g->values[i].kind == OPARA__VALUE_INPUT) ++n_input_values;
    if (r == OPARA_OK && n_input_values != g->n_inputs)
        r = opara__fail(g->rt, OPARA_ERR_CORRUPT, "%u tensors are inputs but the graph lists %u", n_input_values, g->n_inputs);
    if (r == OPARA_OK && g->n_outputs == 0) r = opara__fail(g->rt, OPARA_ERR_CORRUPT, "the graph has no outputs");
    opara__free(g->rt, seen);
    return r;
}

/* Infers dtypes, checks declared activation dtypes against them, fills in unknown ones, and
   checks that shapes infer at batch 1. */
static opara_result opara__validate_flow(opara__graph* g) {
    opara_dtype* dt = (opara_dtype*)opara__calloc(g->rt, (size_t)g->n_values + 1, sizeof(opara_dtype));
    opara__shape* shapes = (opara__shape*)opara__calloc(g->rt, (size_t)g->n_values + 1, sizeof(opara__shape));
    opara_result r = OPARA_OK;
    uint32_t i;
    if (!dt || !shapes) r = opara__fail(g->rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory validating the graph");
    if (r == OPARA_OK) r = opara__infer_dtypes(g->rt, g, dt);
    for (i = 0; i < g->n_values && r == OPARA_OK; ++i) {
        opara__value* v = &g->values[i];
        if (v->kind != OPARA__VALUE_ACTIVATION) continue;
        if (v->dtype != OPARA_DTYPE_UNDEFINED && v->dtype != dt[i])
            r = opara__fail(g->rt, OPARA_ERR_BAD_DTYPE, "tensor %u '%s' is declared %s but node %d '%s' (%s) produces %s", i,
                            v->name, opara_dtype_name(v->dtype), v->producer, g->nodes[v->producer].name,
                            opara__op_name(g->nodes[v->producer].op), opara_dtype_name(dt[i]));
        v->dtype = dt[i];
    }
    if (r == OPARA_OK) r = opara__infer_shapes(g->rt, g, 1, shapes);
    opara__free(g->rt, dt);
    opara__free(g->rt, shapes);
    return r;
}

OPARA__PRIVATE opara_result opara__graph_validate(opara__graph* g) {
    uint32_t i;
    opara_result r = OPARA_OK;
    if (g->n_values > OPARA_MAX_TENSORS || g->n_nodes > OPARA_MAX_NODES)
        return opara__fail(g->rt, OPARA_ERR_LIMIT_EXCEEDED, "%u tensors, %u nodes (limits %u, %u)", g->n_values, g->n_nodes,
                           (unsigned)OPARA_MAX_TENSORS, (unsigned)OPARA_MAX_NODES);
    for (i = 0; i < g->n_values && r == OPARA_OK; ++i) r = opara__validate_value(g, i);
    for (i = 0; i < g->n_nodes && r == OPARA_OK; ++i) {
        if (g->nodes[i].n_outputs == 0) r = opara__fail(g->rt, OPARA_ERR_CORRUPT, "node %u '%s' has no outputs", i, g->nodes[i].name);
        else if (g->nodes[i].n_inputs > OPARA_MAX_NODE_IO || g->nodes[i].n_outputs > OPARA_MAX_NODE_IO)
            r = opara__fail(g->rt, OPARA_ERR_LIMIT_EXCEEDED, "node %u '%s': too many inputs or outputs", i, g->nodes[i].name);
        else r = opara__validate_attrs(g, i);
    }
    if (r == OPARA_OK) r = opara__validate_io(g);
    if (r == OPARA_OK) r = opara__graph_finalize(g);
    if (r == OPARA_OK) r = opara__validate_flow(g);
    return r;
}

/* ---- the model object ------------------------------------------------------------------------ */

static opara_model* opara__model_new(opara_runtime* rt) {
    opara_model* m = (opara_model*)opara__calloc(rt, 1, sizeof *m);
    if (!m) return NULL;
    m->rt = rt;
    opara__graph_init(&m->graph, rt);
    return m;
}

static void opara__unmap(opara_model* m) {
#if defined(OPARA__HAVE_MMAP)
    if (m->map_base) munmap(m->map_base, m->map_size);
#elif defined(_WIN32) && !defined(OPARA_NO_STDIO)
    if (m->map_base) UnmapViewOfFile(m->map_base);
    if (m->map_handle) CloseHandle((HANDLE)m->map_handle);
#endif
    m->map_base = NULL;
    m->map_handle = NULL;
}

OPARADEF void opara_model_destroy(opara_model* model) {
    opara_runtime* rt;
    if (!model) return;
    rt = model->rt;
    opara__graph_free(&model->graph);
    opara__free(rt, model->owned);
    opara__unmap(model);
    opara__free(rt, model);
}

OPARA__PRIVATE opara_result opara__model_from_graph(opara_runtime* rt, opara__graph* g, opara_model** out) {
    opara_model* m;
    opara_result r;
    *out = NULL;
    r = opara__graph_validate(g);
    if (r != OPARA_OK) {
        opara__graph_free(g);
        return r;
    }
    m = opara__model_new(rt);
    if (!m) {
        opara__graph_free(g);
        return opara__fail(rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory creating a model");
    }
    m->graph = *g;
    memset(g, 0, sizeof *g);
    *out = m;
    return OPARA_OK;
}

OPARA__PRIVATE const opara__graph* opara__model_graph(const opara_model* model) {
    return &model->graph;
}

/* Parses m->image into m->graph; destroys m on failure. */
static opara_result opara__model_parse(opara_model* m, opara_model** out) {
    opara_result r = opara__format_read(m->rt, m->image, m->image_size, &m->graph, &m->alignment, &m->content_hash);
    if (r != OPARA_OK) {
        opara_model_destroy(m);
        return r;
    }
    opara__log(&m->rt->logger, OPARA_LOG_DEBUG, OPARA_LOGITEM_MODEL_LOADED, "model loaded: %u tensors, %u nodes, %s",
               m->graph.n_values, m->graph.n_nodes, m->zero_copy ? "weights used in place" : "weights copied");
    *out = m;
    return OPARA_OK;
}

static int opara__host_is_little_endian(void) {
    const uint16_t probe = 1;
    uint8_t first;
    memcpy(&first, &probe, 1);
    return first == 1;
}

static opara_result opara__load_checks(opara_runtime* rt, opara_model** out) {
    if (!out) return rt ? opara__fail(rt, OPARA_ERR_INVALID_ARGS, "out is NULL") : OPARA_ERR_INVALID_ARGS;
    *out = NULL;
    if (!rt) return OPARA_ERR_INVALID_ARGS;
    if (!opara__host_is_little_endian())
        return opara__fail(rt, OPARA_ERR_UNSUPPORTED, "big-endian hosts cannot use .opara weights in place");
    return OPARA_OK;
}

OPARADEF opara_result opara_model_load_memory(opara_runtime* runtime, const void* data, size_t size, opara_model** out) {
    const uint8_t* bytes = (const uint8_t*)data;
    uint32_t alignment;
    opara_model* m;
    opara_result r = opara__load_checks(runtime, out);
    if (r != OPARA_OK) return r;
    if (!data && size) return opara__fail(runtime, OPARA_ERR_INVALID_ARGS, "data is NULL");
    m = opara__model_new(runtime);
    if (!m) return opara__fail(runtime, OPARA_ERR_OUT_OF_MEMORY, "out of memory creating a model");
    alignment = opara__format_peek_alignment(bytes, size);
    m->image = bytes;
    m->image_size = size;
    m->zero_copy = 1;
    if (alignment && opara__is_pow2(alignment) && alignment <= OPARA__FORMAT_MAX_ALIGN && (uintptr_t)bytes % alignment) {
        m->owned = (uint8_t*)opara__alloc_aligned(&runtime->allocator, size, alignment);
        if (!m->owned) {
            opara_model_destroy(m);
            return opara__fail(runtime, OPARA_ERR_OUT_OF_MEMORY, "out of memory copying a misaligned %zu-byte model", size);
        }
        memcpy(m->owned, bytes, size);
        m->image = m->owned;
        m->zero_copy = 0;
    }
    return opara__model_parse(m, out);
}

#if !defined(OPARA_NO_STDIO)
/* Reads the whole file into an aligned buffer (the portable path). */
static opara_result opara__read_whole_file(opara_model* m, const char* path) {
    FILE* f = fopen(path, "rb");
    uint8_t head[OPARA__FORMAT_HEADER_SIZE];
    size_t got, alignment;
    long n;
    if (!f) return opara__fail(m->rt, OPARA_ERR_IO, "cannot open '%s'", path);
    if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return opara__fail(m->rt, OPARA_ERR_IO, "cannot determine the size of '%s'", path);
    }
    got = fread(head, 1, sizeof head, f);
    alignment = opara__format_peek_alignment(head, got);
    if (!opara__is_pow2(alignment) || alignment > OPARA__FORMAT_MAX_ALIGN) alignment = OPARA__DEFAULT_ALIGN;
    m->owned = (uint8_t*)opara__alloc_aligned(&m->rt->allocator, (size_t)n + 1, alignment);
    if (!m->owned) {
        fclose(f);
        return opara__fail(m->rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory reading '%s' (%ld bytes)", path, n);
    }
    memcpy(m->owned, head, got);
    if (got < (size_t)n && fread(m->owned + got, 1, (size_t)n - got, f) != (size_t)n - got) {
        fclose(f);
        return opara__fail(m->rt, OPARA_ERR_IO, "cannot read '%s'", path);
    }
    fclose(f);
    m->image = m->owned;
    m->image_size = (size_t)n;
    return OPARA_OK;
}

/* Maps the file read-only; returns OPARA_ERR_UNSUPPORTED when mapping is not possible here. */
static opara_result opara__map_file(opara_model* m, const char* path) {
#if defined(OPARA__HAVE_MMAP)
    struct stat st;
    void* base;
    int fd = open(path, O_RDONLY);
    if (fd < 0) return opara__fail(m->rt, OPARA_ERR_IO, "cannot open '%s'", path);
    if (fstat(fd, &st) != 0 || st.st_size <= 0 || (uint64_t)st.st_size > (uint64_t)(size_t)-1) {
        close(fd);
        return OPARA_ERR_UNSUPPORTED; /* empty or odd files take the read path and its messages */
    }
    base = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (base == MAP_FAILED) return OPARA_ERR_UNSUPPORTED;
    m->map_base = base;
    m->map_size = (size_t)st.st_size;
#elif defined(_WIN32)
    HANDLE file = CreateFileA(path, GENERIC_READ, FILE_SHARE_READ, NULL, OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL, NULL);
    LARGE_INTEGER size;
    HANDLE mapping;
    void* base;
    if (file == INVALID_HANDLE_VALUE) return opara__fail(m->rt, OPARA_ERR_IO, "cannot open '%s'", path);
    if (!GetFileSizeEx(file, &size) || size.QuadPart <= 0 || (uint64_t)size.QuadPart > (uint64_t)(size_t)-1) {
        CloseHandle(file);
        return OPARA_ERR_UNSUPPORTED;
    }
    mapping = CreateFileMappingA(file, NULL, PAGE_READONLY, 0, 0, NULL);
    CloseHandle(file);
    if (!mapping) return OPARA_ERR_UNSUPPORTED;
    base = MapViewOfFile(mapping, FILE_MAP_READ, 0, 0, 0);
    if (!base) {
        CloseHandle(mapping);
        return OPARA_ERR_UNSUPPORTED;
    }
    m->map_base = base;
    m->map_handle = mapping;
    m->map_size = (size_t)size.QuadPart;
#else
    (void)m;
    (void)path;
    return OPARA_ERR_UNSUPPORTED;
#endif
    m->image = (const uint8_t*)m->map_base;
    m->image_size = m->map_size;
    return OPARA_OK;
}

OPARADEF opara_result opara_model_load_file(opara_runtime* runtime, const char* path, opara_model** out) {
    opara_model* m;
    opara_result r = opara__load_checks(runtime, out);
    if (r != OPARA_OK) return r;
    if (!path) return opara__fail(runtime, OPARA_ERR_INVALID_ARGS, "path is NULL");
    m = opara__model_new(runtime);
    if (!m) return opara__fail(runtime, OPARA_ERR_OUT_OF_MEMORY, "out of memory creating a model");
    r = opara__map_file(m, path);
    if (r == OPARA_OK) {
        uint32_t alignment = opara__format_peek_alignment(m->image, m->image_size);
        m->zero_copy = 1;
        if (alignment && (uintptr_t)m->image % alignment) { /* alignment above the page size */
            opara__unmap(m);
            r = OPARA_ERR_UNSUPPORTED;
        }
    }
    if (r == OPARA_ERR_UNSUPPORTED) {
        m->zero_copy = 0;
        r = opara__read_whole_file(m, path);
    }
    if (r != OPARA_OK) {
        opara_model_destroy(m);
        return r;
    }
    return opara__model_parse(m, out);
}
#endif

/* ---- queries --------------------------------------------------------------------------------- */

static void opara__tensor_info(const opara__value* v, opara_tensor_info* out) {
    int32_t k;
    memset(out, 0, sizeof *out);
    out->name = v->name;
    out->dtype = v->dtype;
    out->rank = v->shape.ndim;
    for (k = 0; k < v->shape.ndim && k < OPARA_MAX_DIMS; ++k)
        out->dims[k] = v->shape.dims[k] == OPARA__DIM_BATCH ? OPARA_DIM_BATCH : v->shape.dims[k];
}

OPARADEF uint32_t opara_model_input_count(const opara_model* model) {
    return model ? model->graph.n_inputs : 0;
}

OPARADEF uint32_t opara_model_output_count(const opara_model* model) {
    return model ? model->graph.n_outputs : 0;
}

OPARADEF opara_result opara_model_input_info(const opara_model* model, uint32_t index, opara_tensor_info* out) {
    if (!model || !out) return OPARA_ERR_INVALID_ARGS;
    if (index >= model->graph.n_inputs) return OPARA_ERR_NOT_FOUND;
    opara__tensor_info(&model->graph.values[model->graph.inputs[index]], out);
    return OPARA_OK;
}

OPARADEF opara_result opara_model_output_info(const opara_model* model, uint32_t index, opara_tensor_info* out) {
    if (!model || !out) return OPARA_ERR_INVALID_ARGS;
    if (index >= model->graph.n_outputs) return OPARA_ERR_NOT_FOUND;
    opara__tensor_info(&model->graph.values[model->graph.outputs[index]], out);
    return OPARA_OK;
}

OPARADEF uint32_t opara_model_node_count(const opara_model* model) {
    return model ? model->graph.n_nodes : 0;
}

OPARADEF const char* opara_model_node_op(const opara_model* model, uint32_t index) {
    if (!model || index >= model->graph.n_nodes) return NULL;
    return opara__op_name(model->graph.nodes[index].op);
}

OPARADEF const char* opara_model_node_name(const opara_model* model, uint32_t index) {
    if (!model || index >= model->graph.n_nodes) return NULL;
    return model->graph.nodes[index].name ? model->graph.nodes[index].name : "";
}

OPARADEF opara_result opara_model_get_stats(const opara_model* model, opara_model_stats* out) {
    const opara__graph* g;
    uint32_t i;
    if (!model || !out) return OPARA_ERR_INVALID_ARGS;
    g = &model->graph;
    memset(out, 0, sizeof *out);
    out->n_tensors = g->n_values;
    out->n_nodes = g->n_nodes;
    out->n_inputs = g->n_inputs;
    out->n_outputs = g->n_outputs;
    for (i = 0; i < g->n_values; ++i)
        if (g->values[i].kind == OPARA__VALUE_CONST) {
            out->n_constants++;
            out->n_params += (uint64_t)opara__shape_numel(&g->values[i].shape);
            out->param_bytes += g->values[i].nbytes;
        }
    out->file_bytes = model->image ? model->image_size : 0;
    out->content_hash = model->content_hash;
    out->zero_copy = model->zero_copy;
    out->source_opset = g->source_opset;
    out->producer = g->producer_name ? g->producer_name : "";
    return OPARA_OK;
}

OPARADEF void opara_free(opara_runtime* runtime, void* ptr) {
    if (runtime) opara__free(runtime, ptr);
}
/* ==== END src/opara_model.c ==== */
/* ==== BEGIN src/opara_builder.c ==== */
/* The public graph builder: records tensors, nodes and outputs by name (any order), and turns
   them into a fresh graph on finish/save, which validates like the loader. */
/* #include "opara_model.h" (inlined above) */

#if !defined(OPARA_NO_STDIO)
#  include <stdio.h>
#endif

typedef struct opara__btensor {
    const char* name;
    opara_dtype dtype;
    opara__value_kind kind;
    opara__shape shape;
    const void* data; /* in the builder's pool */
    uint64_t nbytes;
} opara__btensor;

typedef struct opara__bnode {
    const char* op_type;
    const char* name;
    uint32_t n_inputs, n_outputs, n_attrs;
    const char** inputs; /* NULL entries: omitted */
    const char** outputs;
    opara_attr* attrs;   /* deep copies in the pool */
} opara__bnode;

struct opara_builder {
    opara_runtime* rt;
    opara__pool pool;
    opara__btensor* tensors;
    size_t n_tensors, cap_tensors;
    opara__bnode* nodes;
    size_t n_nodes, cap_nodes;
    const char** outputs;
    size_t n_outputs, cap_outputs;
    opara_result error;             /* first failure, returned again by finish/save */
    char error_text[OPARA__DETAIL_MAX];
};

/* Records the first failure of the builder (its detail is in the runtime's error buffer). */
static opara_result opara__bfail(opara_builder* b, opara_result code) {
    if (b->error == OPARA_OK) {
        b->error = code;
        opara__format(b->error_text, sizeof b->error_text, "%s", b->rt->error.text);
    }
    return code;
}

static const char* opara__bstrdup(opara_builder* b, const char* s) {
    return opara__pool_strdup(b->rt, &b->pool, s ? s : "");
}

OPARADEF opara_result opara_builder_create(opara_runtime* runtime, opara_builder** out) {
    opara_builder* b;
    if (!out) return OPARA_ERR_INVALID_ARGS;
    *out = NULL;
    if (!runtime) return OPARA_ERR_INVALID_ARGS;
    b = (opara_builder*)opara__calloc(runtime, 1, sizeof *b);
    if (!b) return opara__fail(runtime, OPARA_ERR_OUT_OF_MEMORY, "out of memory creating a builder");
    b->rt = runtime;
    *out = b;
    return OPARA_OK;
}

OPARADEF void opara_builder_destroy(opara_builder* builder) {
    opara_runtime* rt;
    if (!builder) return;
    rt = builder->rt;
    opara__free(rt, builder->tensors);
    opara__free(rt, builder->nodes);
    opara__free(rt, (void*)builder->outputs);
    opara__pool_free(rt, &builder->pool);
    opara__free(rt, builder);
}

static opara_result opara__bshape(opara_builder* b, const char* name, int32_t rank, const int64_t* dims, int is_const,
                                  opara__shape* shape) {
    int32_t k;
    if (rank < 0 || rank > OPARA_MAX_DIMS || (rank > 0 && !dims))
        return opara__bfail(b, opara__fail(b->rt, rank > OPARA_MAX_DIMS ? OPARA_ERR_LIMIT_EXCEEDED : OPARA_ERR_INVALID_ARGS,
                                           "tensor '%s': rank %d (0..%d with dims)", name, (int)rank, OPARA_MAX_DIMS));
    memset(shape, 0, sizeof *shape);
    shape->ndim = rank;
    for (k = 0; k < rank; ++k) {
        if (dims[k] == OPARA_DIM_BATCH && !is_const) shape->dims[k] = OPARA__DIM_BATCH;
        else if (dims[k] >= 0) shape->dims[k] = dims[k];
        else
            return opara__bfail(b, opara__fail(b->rt, OPARA_ERR_INVALID_ARGS, "tensor '%s': dimension %d is %lld", name,
                                               (int)k, (long long)dims[k]));
    }
    return OPARA_OK;
}

static opara_result opara__badd_tensor(opara_builder* b, const char* name, opara_dtype dtype, int32_t rank,
                                       const int64_t* dims, opara__value_kind kind, const void* data, size_t size) {
    opara__btensor* t;
    opara__shape shape;
    opara_result r;
    if (!name || !name[0]) return opara__bfail(b, opara__fail(b->rt, OPARA_ERR_INVALID_ARGS, "a tensor needs a non-empty name"));
    r = opara__bshape(b, name, rank, dims, kind == OPARA__VALUE_CONST, &shape);
    if (r != OPARA_OK) return r;
    if (opara__grow(b->rt, (void**)&b->tensors, &b->cap_tensors, b->n_tensors + 1, sizeof *b->tensors) != OPARA_OK)
        return opara__bfail(b, opara__fail(b->rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory adding '%s'", name));
    t = &b->tensors[b->n_tensors];
    memset(t, 0, sizeof *t);
    t->name = opara__bstrdup(b, name);
    t->dtype = dtype;
    t->kind = kind;
    t->shape = shape;
    t->nbytes = size;
    if (size) {
        void* copy = opara__pool_alloc(b->rt, &b->pool, size, 64);
        if (copy) memcpy(copy, data, size);
        t->data = copy;
    }
    if (!t->name || (size && !t->data))
        return opara__bfail(b, opara__fail(b->rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory adding '%s'", name));
    b->n_tensors++;
    return OPARA_OK;
}

OPARADEF opara_result opara_builder_add_input(opara_builder* builder, const char* name, opara_dtype dtype, int32_t rank,
                                              const int64_t* dims) {
    if (!builder) return OPARA_ERR_INVALID_ARGS;
    return opara__badd_tensor(builder, name, dtype, rank, dims, OPARA__VALUE_INPUT, NULL, 0);
}

OPARADEF opara_result opara_builder_add_constant(opara_builder* builder, const char* name, opara_dtype dtype,
                                                 int32_t rank, const int64_t* dims, const void* data, size_t size) {
    if (!builder) return OPARA_ERR_INVALID_ARGS;
    if (size && !data)
        return opara__bfail(builder, opara__fail(builder->rt, OPARA_ERR_INVALID_ARGS, "constant '%s': data is NULL",
                                                 name ? name : ""));
    return opara__badd_tensor(builder, name, dtype, rank, dims, OPARA__VALUE_CONST, data, size);
}

static const char** opara__bnames(opara_builder* b, uint32_t n, const char* const* names) {
    const char** copy = (const char**)opara__pool_alloc(b->rt, &b->pool, sizeof(char*) * ((size_t)n + 1), 8);
    uint32_t i;
    if (!copy) return NULL;
    for (i = 0; i < n; ++i) {
        copy[i] = names[i] && names[i][0] ? opara__bstrdup(b, names[i]) : NULL;
        if (names[i] && names[i][0] && !copy[i]) return NULL;
    }
    return copy;
}

static int opara__bcopy_attr(opara_builder* b, const opara_attr* src, opara_attr* dst) {
    size_t elem = src->type == OPARA_ATTR_INTS ? 8 : 4;
    *dst = *src;
    dst->name = opara__bstrdup(b, src->name);
    if (!dst->name) return 0;
    if (src->type == OPARA_ATTR_STRING) {
        dst->v.s = opara__bstrdup(b, src->v.s);
        return dst->v.s != NULL;
    }
    if (src->type == OPARA_ATTR_INTS || src->type == OPARA_ATTR_FLOATS) {
        void* copy = opara__pool_alloc(b->rt, &b->pool, elem * src->count + 1, 8);
        if (!copy) return 0;
        if (src->count) memcpy(copy, src->v.ints, elem * src->count);
        dst->v.ints = (const int64_t*)copy;
    }
    return 1;
}

static opara_result opara__bcheck_node_args(opara_builder* b, const char* op_type, const char* name, uint32_t n_inputs,
                                            const char* const* inputs, uint32_t n_outputs, const char* const* outputs,
                                            uint32_t n_attrs, const opara_attr* attrs) {
    uint32_t i;
    const char* label = name ? name : "";
    if (!op_type || (n_inputs && !inputs) || !n_outputs || !outputs || (n_attrs && !attrs))
        return opara__fail(b->rt, OPARA_ERR_INVALID_ARGS, "node '%s': needs an op type, outputs, and arrays for the counts",
                           label);
    if (n_inputs > OPARA_MAX_NODE_IO || n_outputs > OPARA_MAX_NODE_IO || n_attrs > OPARA_MAX_ATTRS)
        return opara__fail(b->rt, OPARA_ERR_LIMIT_EXCEEDED, "node '%s': too many inputs, outputs or attributes", label);
    for (i = 0; i < n_outputs; ++i)
        if (!outputs[i] || !outputs[i][0])
            return opara__fail(b->rt, OPARA_ERR_INVALID_ARGS, "node '%s': output %u has no name", label, i);
    for (i = 0; i < n_attrs; ++i) {
        const opara_attr* a = &attrs[i];
        int array = a->type == OPARA_ATTR_INTS || a->type == OPARA_ATTR_FLOATS;
        if (!a->name || !a->name[0] || a->type < OPARA_ATTR_INT || a->type > OPARA_ATTR_STRING ||
            (array && a->count && !a->v.ints) || (a->type == OPARA_ATTR_STRING && !a->v.s))
            return opara__fail(b->rt, OPARA_ERR_INVALID_ARGS, "node '%s': attribute %u is malformed", label, i);
    }
    return OPARA_OK;
}

OPARADEF opara_result opara_builder_add_node(opara_builder* builder, const char* op_type, const char* name,
                                             uint32_t n_inputs, const char* const* inputs, uint32_t n_outputs,
                                             const char* const* outputs, uint32_t n_attrs, const opara_attr* attrs) {
    opara__bnode* n;
    uint32_t i;
    opara_result r;
    if (!builder) return OPARA_ERR_INVALID_ARGS;
    r = opara__bcheck_node_args(builder, op_type, name, n_inputs, inputs, n_outputs, outputs, n_attrs, attrs);
    if (r != OPARA_OK) return opara__bfail(builder, r);
    if (opara__op_from_name(op_type) == OPARA__OP_COUNT)
        return opara__bfail(builder, opara__fail(builder->rt, OPARA_ERR_UNSUPPORTED_OP,
                                                 "node '%s': operator '%s' is not supported", name ? name : "", op_type));
    if (opara__grow(builder->rt, (void**)&builder->nodes, &builder->cap_nodes, builder->n_nodes + 1, sizeof *builder->nodes) !=
        OPARA_OK)
        return opara__bfail(builder, opara__fail(builder->rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory adding a node"));
    n = &builder->nodes[builder->n_nodes];
    memset(n, 0, sizeof *n);
    n->op_type = opara__bstrdup(builder, op_type);
    n->name = opara__bstrdup(builder, name);
    n->inputs = opara__bnames(builder, n_inputs, inputs);
    n->outputs = opara__bnames(builder, n_outputs, outputs);
    n->attrs = (opara_attr*)opara__pool_alloc(builder->rt, &builder->pool, sizeof(opara_attr) * ((size_t)n_attrs + 1), 8);
    r = n->op_type && n->name && n->inputs && n->outputs && n->attrs ? OPARA_OK : OPARA_ERR_OUT_OF_MEMORY;
    for (i = 0; i < n_attrs && r == OPARA_OK; ++i)
        if (!opara__bcopy_attr(builder, &attrs[i], &n->attrs[i])) r = OPARA_ERR_OUT_OF_MEMORY;
    if (r != OPARA_OK) return opara__bfail(builder, opara__fail(builder->rt, r, "out of memory adding a node"));
    n->n_inputs = n_inputs;
    n->n_outputs = n_outputs;
    n->n_attrs = n_attrs;
    builder->n_nodes++;
    return OPARA_OK;
}

OPARADEF opara_result opara_builder_add_output(opara_builder* builder, const char* name) {
    const char* copy;
    if (!builder) return OPARA_ERR_INVALID_ARGS;
    if (!name || !name[0]) return opara__bfail(builder, opara__fail(builder->rt, OPARA_ERR_INVALID_ARGS, "output needs a name"));
    copy = opara__bstrdup(builder, name);
    if (!copy || opara__grow(builder->rt, (void**)&builder->outputs, &builder->cap_outputs, builder->n_outputs + 1,
                             sizeof(char*)) != OPARA_OK)
        return opara__bfail(builder, opara__fail(builder->rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory adding an output"));
    builder->outputs[builder->n_outputs++] = copy;
    return OPARA_OK;
}

/* ---- builder -> graph ------------------------------------------------------------------------ */

static opara_result opara__bgraph_tensors(opara_builder* b, opara__graph* g) {
    size_t i;
    for (i = 0; i < b->n_tensors; ++i) {
        const opara__btensor* t = &b->tensors[i];
        int32_t v = opara__graph_add_value(g, t->name, t->dtype, &t->shape);
        opara_result r;
        if (v < 0) return OPARA_ERR_INVALID_ARGS;
        r = t->kind == OPARA__VALUE_INPUT ? opara__graph_add_input(g, v) : opara__graph_set_const(g, v, t->data, t->nbytes, 1);
        if (r != OPARA_OK) return r;
    }
    return OPARA_OK;
}

static opara_result opara__bgraph_attr(opara__graph* g, int32_t node, const opara_attr* a) {
    switch (a->type) {
    case OPARA_ATTR_INT: return opara__node_set_int(g, node, a->name, a->v.i);
    case OPARA_ATTR_FLOAT: return opara__node_set_float(g, node, a->name, a->v.f);
    case OPARA_ATTR_INTS: return opara__node_set_ints(g, node, a->name, a->v.ints, a->count);
    case OPARA_ATTR_FLOATS: return opara__node_set_floats(g, node, a->name, a->v.floats, a->count);
    default: return opara__node_set_string(g, node, a->name, a->v.s);
    }
}

static opara_result opara__bgraph_node(opara_builder* b, opara__graph* g, const opara__bnode* n, int32_t* idx) {
    uint32_t k;
    int32_t node;
    for (k = 0; k < n->n_inputs; ++k) {
        idx[k] = n->inputs[k] ? opara__graph_find_value(g, n->inputs[k]) : -1;
        if (n->inputs[k] && idx[k] < 0)
            return opara__fail(b->rt, OPARA_ERR_NOT_FOUND, "node '%s' (%s) input %u: no tensor is named '%s'", n->name,
                               n->op_type, k, n->inputs[k]);
    }
    for (k = 0; k < n->n_outputs; ++k) idx[n->n_inputs + k] = opara__graph_find_value(g, n->outputs[k]);
    node = opara__graph_add_node(g, opara__op_from_name(n->op_type), n->name, n->n_inputs, idx, n->n_outputs,
                                 idx + n->n_inputs);
    if (node < 0) return OPARA_ERR_CORRUPT;
    for (k = 0; k < n->n_attrs; ++k) {
        opara_result r = opara__bgraph_attr(g, node, &n->attrs[k]);
        if (r != OPARA_OK) return r;
    }
    return OPARA_OK;
}

static opara_result opara__bgraph_nodes(opara_builder* b, opara__graph* g) {
    size_t i, k;
    int32_t* idx = (int32_t*)opara__calloc(b->rt, 2 * (size_t)OPARA_MAX_NODE_IO + 1, sizeof(int32_t));
    opara_result r = idx ? OPARA_OK : opara__fail(b->rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory");
    for (i = 0; i < b->n_nodes && r == OPARA_OK; ++i) /* outputs first, so inputs may name later nodes' outputs */
        for (k = 0; k < b->nodes[i].n_outputs && r == OPARA_OK; ++k)
            if (opara__graph_add_value(g, b->nodes[i].outputs[k], OPARA_DTYPE_UNDEFINED, NULL) < 0) r = OPARA_ERR_INVALID_ARGS;
    for (i = 0; i < b->n_nodes && r == OPARA_OK; ++i) r = opara__bgraph_node(b, g, &b->nodes[i], idx);
    opara__free(b->rt, idx);
    return r;
}

static opara_result opara__bgraph_outputs(opara_builder* b, opara__graph* g) {
    size_t i;
    for (i = 0; i < b->n_outputs; ++i) {
        int32_t v = opara__graph_find_value(g, b->outputs[i]);
        opara_result r;
        if (v < 0) return opara__fail(b->rt, OPARA_ERR_NOT_FOUND, "graph output %u: no tensor is named '%s'", (unsigned)i,
                                      b->outputs[i]);
        r = opara__graph_add_output(g, v);
        if (r != OPARA_OK) return r;
    }
    return OPARA_OK;
}

/* Builds a fresh, validated graph from the records. */
static opara_result opara__builder_graph(opara_builder* b, opara__graph* g) {
    opara_result r;
    opara__graph_init(g, b->rt);
    if (b->error != OPARA_OK) {
        opara__fail(b->rt, b->error, "%s", b->error_text);
        return b->error;
    }
    g->producer_name = opara__pool_strdup(b->rt, &g->pool, "opara.h builder " OPARA_VERSION_STRING);
    r = g->producer_name ? OPARA_OK : opara__fail(b->rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory");
    if (r == OPARA_OK) r = opara__bgraph_tensors(b, g);
    if (r == OPARA_OK) r = opara__bgraph_nodes(b, g);
    if (r == OPARA_OK) r = opara__bgraph_outputs(b, g);
    return r;
}

OPARADEF opara_result opara_builder_finish(opara_builder* builder, opara_model** out) {
    opara__graph g;
    opara_result r;
    if (!builder || !out) return OPARA_ERR_INVALID_ARGS;
    *out = NULL;
    r = opara__builder_graph(builder, &g);
    if (r != OPARA_OK) {
        opara__graph_free(&g);
        return r;
    }
    return opara__model_from_graph(builder->rt, &g, out);
}

OPARADEF opara_result opara_builder_save_memory(opara_builder* builder, void** data, size_t* size) {
    opara__graph g;
    opara__bytes bytes;
    opara_result r;
    if (!builder || !data || !size) return OPARA_ERR_INVALID_ARGS;
    *data = NULL;
    *size = 0;
    r = opara__builder_graph(builder, &g);
    if (r == OPARA_OK) r = opara__graph_validate(&g);
    if (r == OPARA_OK) r = opara__format_write(builder->rt, &g, 0, &bytes);
    opara__graph_free(&g);
    if (r != OPARA_OK) return r;
    *data = bytes.data;
    *size = bytes.size;
    return OPARA_OK;
}

#if !defined(OPARA_NO_STDIO)
OPARADEF opara_result opara_builder_save_file(opara_builder* builder, const char* path) {
    void* data;
    size_t size;
    FILE* f;
    opara_result r;
    if (!builder || !path) return OPARA_ERR_INVALID_ARGS;
    r = opara_builder_save_memory(builder, &data, &size);
    if (r != OPARA_OK) return r;
    f = fopen(path, "wb");
    if (!f || fwrite(data, 1, size, f) != size) r = opara__fail(builder->rt, OPARA_ERR_IO, "cannot write '%s'", path);
    if (f && fclose(f) != 0 && r == OPARA_OK) r = opara__fail(builder->rt, OPARA_ERR_IO, "cannot write '%s'", path);
    opara_free(builder->rt, data);
    return r;
}
#endif
/* ==== END src/opara_builder.c ==== */
/* ==== BEGIN src/opara_cpu.h ==== */
/* The CPU backend's kernels: one prepared operator (opara__cpu_op) per graph node, a kernel
   function that runs a range of the operator's work items, and the SGEMM used by Conv, Gemm
   and MatMul (BLAS loaded at run time, or the built-in one).

   Life of an operator: the executor fills node, in/out tensors (shapes from shape inference,
   data pointers into the arena, constants or caller buffers) and blas, then calls
   opara__cpu_prepare once; prepare validates shapes and attributes, fills the parameters, the
   kernel, the number of independent work items and the per-worker scratch the kernel needs.
   At run time any worker may call op->fn(op, begin, end, scratch) on any sub-range of
   [0, work_items); disjoint ranges write disjoint output elements, so several workers can
   share one operator. Kernels never allocate. */
#ifndef OPARA_CPU_H
#define OPARA_CPU_H

/* #include "opara_ir.h" (inlined above) */
/* ==== BEGIN src/opara_sched.h ==== */
/* The execution plan: which operators run at the same time (streams), in which order they are
   launched, where the synchronisations go (events, fork/join), and where every tensor lives
   (arena offsets, aliases). Pure, deterministic, backend-independent; every backend and the
   simulator consume the same opara__plan.

   Inputs of planning: a finalized graph, the byte size of every value, one descriptor per node
   (grid, block, registers, shared memory, FLOPs, bytes, class; src/opara_desc.c gives an analytic
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

/* #include "opara_ir.h" (inlined above) */

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
    uint8_t reserved;
} opara__op_desc;

typedef struct opara__device {
    const char* name;
    uint32_t sms;
    uint32_t max_threads_per_block, max_threads_per_sm;
    uint32_t max_regs_per_block, max_regs_per_sm;
    uint32_t max_smem_per_block, max_smem_per_sm; /* bytes */
    uint32_t max_blocks_per_sm;
    double peak_flops; /* FP32 FLOP/s */
    double bandwidth;  /* DRAM bytes/s */
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
    OPARA__METRIC_DOMINANT = 2   /* max of the block's share of an SM's threads, registers, shared memory */
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
    int no_memory_reuse;             /* never reuse a block (what the Opara and Nimble prototypes do) */
    int no_inplace;                  /* disable in-place outputs */
    int no_concat_in_place;          /* disable writing Concat inputs straight into the output */
    int no_view_alias;               /* views get their own block (they still launch no kernel) */
    uint32_t alignment;              /* arena alignment of every block; 0: 256 */
    const opara__shape* shapes;      /* optional value shapes: a Concat's inputs are written in place only
                                        when the shapes prove each input is one contiguous slice */
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
    uint32_t n_events;       /* nodes that record an event (fork/join events not included) */
    uint32_t n_waits;        /* cross-stream waits of nodes (fork/join waits not included) */
    uint32_t n_cross_edges;  /* data edges between nodes on different streams */
    uint32_t n_pruned_waits; /* waits dropped because earlier waits imply them */
    uint32_t n_forks, n_joins;
    uint32_t n_inplace, n_concat_in_place, n_views;
    uint64_t arena_bytes;      /* peak memory of the plan = arena size */
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

    /* synchronisation: before launching node n on its stream, wait on the events recorded after
       nodes wait_nodes[wait_start[n] .. wait_start[n+1]) (all on other streams, in ascending launch
       position); a node with records_event[n] records its event right after its launch. */
    uint8_t* records_event; /* [n_nodes] */
    uint32_t* wait_start;   /* [n_nodes + 1] */
    uint32_t* wait_nodes;   /* [stats.n_waits] */

    /* fork/join through the origin stream 0 (the stream of order[0]): the origin records a fork
       event before its first op; a stream with stream_fork[s] waits on it before its first op (the
       streams without it start by waiting on another stream's event, which already orders them
       after the fork). After all ops, the origin waits on an event recorded after the last op of
       each stream with stream_join[s] (the others end with an op another stream waited on). */
    uint8_t* stream_fork;   /* [n_streams] */
    uint8_t* stream_join;   /* [n_streams] */
    uint32_t* stream_first; /* [n_streams] first node of each stream */
    uint32_t* stream_last;  /* [n_streams] last node of each stream */

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

/* ---- the pieces, for tests and the simulator ------------------------------------------------- */

/* Resource demand of one kernel under a metric, in [0, +inf); nodes without info get +inf. */
OPARA__PRIVATE double opara__op_demand(const opara__op_desc* d, const opara__device* dev, opara__metric metric);

/* Launch order of the strategy's default or an explicit one into order[n_nodes]. */
OPARA__PRIVATE opara_result opara__sched_order(const opara__graph* g, const opara__op_desc* descs,
                                              const opara__device* dev, const opara__plan_desc* desc,
                                              uint32_t* order);

/* Opara Alg. 1 over `order`: stream[n_nodes], returns the stream count in *n_streams. Streams are
   numbered in creation order. */
OPARA__PRIVATE opara_result opara__sched_alg1(const opara__graph* g, const uint32_t* order,
                                             const opara__plan_desc* desc, uint32_t* stream, uint32_t* n_streams);

/* ---- between the planning modules ------------------------------------------------------------ */

/* Bounded vector clocks: k slots (a power of two), stream s lives in slot s & (k-1). A slot holds
   one (stream, seq) fact "every op of `stream` up to rank `seq` happens-before me". When two
   streams compete for a slot, the merge keeps one fact and forgets the other: a clock only ever
   under-approximates the happens-before relation, so a wait it cannot prove redundant is kept and
   a block it cannot prove free is not reused. Exact whenever the stream count is at most k. */
typedef struct opara__vc_slot {
    uint32_t stream, seq; /* seq 0: empty */
} opara__vc_slot;

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
/* Memory plan (opara_memplan.c): fills storage, offset, alias_*, arena_bytes from the sync plan. */
OPARA__PRIVATE opara_result opara__memory_plan(const opara__graph* g, opara__plan* plan);

#endif /* OPARA_SCHED_H */
/* ==== END src/opara_sched.h ==== */

typedef struct opara__cpu_tensor {
    opara_dtype dtype;
    int32_t ndim;
    int64_t dims[OPARA_MAX_DIMS];
    void* data; /* NULL for an omitted optional input or output */
} opara__cpu_tensor;

/* ---- SGEMM ----------------------------------------------------------------------------------- */

typedef void (*opara__cblas_sgemm_fn)(int order, int trans_a, int trans_b, int m, int n, int k, float alpha,
                                      const float* a, int lda, const float* b, int ldb, float beta, float* c,
                                      int ldc);

typedef struct opara__blas {
    void* lib;                    /* dlopen handle; NULL: the built-in GEMM */
    opara__cblas_sgemm_fn sgemm;  /* cblas_sgemm, or NULL */
    char name[96];                /* "OpenBLAS (libopenblas.so.0)", "built-in", ... */
} opara__blas;

/* Scratch floats the built-in GEMM needs per call (packing buffers). */
#define OPARA__GEMM_MC 120
#define OPARA__GEMM_KC 256
#define OPARA__GEMM_NC 1024
#define OPARA__GEMM_SCRATCH ((size_t)OPARA__GEMM_MC * OPARA__GEMM_KC + (size_t)OPARA__GEMM_KC * OPARA__GEMM_NC + 64)

/* Loads a BLAS (OpenBLAS first, then any libblas with cblas_sgemm) unless use_builtin is set;
   without one the built-in GEMM is used. Never fails: the name says what was chosen, and
   `tried` (may be NULL) receives the paths tried. OpenBLAS is set to one thread, because the
   executor owns the parallelism. */
OPARA__PRIVATE void opara__blas_load(opara__blas* blas, int use_builtin, char* tried, size_t tried_cap);
OPARA__PRIVATE void opara__blas_unload(opara__blas* blas);

/* Row-major C[m,n] = alpha * op(A)[m,k] * op(B)[k,n] + beta * C (beta 0: C is not read).
   op(A) = A when trans_a is 0 (A is m x k, row stride lda), else A^T (A is k x m). Uses the
   BLAS when loaded (and sizes fit an int), else opara__sgemm_builtin with `scratch`
   (OPARA__GEMM_SCRATCH floats). */
OPARA__PRIVATE void opara__sgemm(const opara__blas* blas, int trans_a, int trans_b, size_t m, size_t n, size_t k,
                                 float alpha, const float* a, size_t lda, const float* b, size_t ldb, float beta,
                                 float* c, size_t ldc, float* scratch);
OPARA__PRIVATE void opara__sgemm_builtin(int trans_a, int trans_b, size_t m, size_t n, size_t k, float alpha,
                                         const float* a, size_t lda, const float* b, size_t ldb, float beta, float* c,
                                         size_t ldc, float* scratch);
/* Which micro-kernel the built-in GEMM uses on this CPU ("avx2+fma" or "portable"). */
OPARA__PRIVATE const char* opara__sgemm_builtin_kind(void);

/* Row helpers of the kernels (SSE2 where available): fill with v; y = ReLU(x) (NaN -> 0, y may
   be x); d = max(d, s), d += s and d += w * s over n elements of s taken every `stride`. */
OPARA__PRIVATE void opara__vec_fill(float* d, size_t n, float v);
OPARA__PRIVATE void opara__vec_relu(float* y, const float* x, size_t n);
OPARA__PRIVATE void opara__vec_axpy(float* d, const float* s, size_t stride, size_t n, float w);
OPARA__PRIVATE void opara__vec_taps(float* d, const float* s, size_t stride, size_t n, const float* w, size_t taps,
                                    size_t dil);
OPARA__PRIVATE void opara__vec_max_into(float* d, const float* s, size_t stride, size_t n);
OPARA__PRIVATE void opara__vec_add_into(float* d, const float* s, size_t stride, size_t n);

/* ---- prepared operators ---------------------------------------------------------------------- */

typedef struct opara__cpu_op opara__cpu_op;

/* Runs work items [begin, end). Returns OPARA_OK or an error (e.g. an index out of range). */
typedef opara_result (*opara__cpu_kernel_fn)(const opara__cpu_op* op, size_t begin, size_t end, float* scratch);

#define OPARA__BCAST_MAX_IN 3

/* Parameters derived at prepare time; each kernel uses the fields it needs. */
typedef struct opara__cpu_params {
    /* Conv, ConvTranspose, pools: spatial dims normalized to 3 (leading dims of size 1). */
    int64_t batch, cin, cout, group;
    int64_t in_sp[3], out_sp[3], kernel[3], stride[3], dil[3], pad_b[3], pad_e[3];
    int64_t col_block, n_col_blocks;
    int relu, depthwise, pointwise, count_include_pad, storage_order;
    /* scalars */
    float alpha, beta, lo, hi, eps, value;
    int64_t axis, outer, mid, inner, tail;
    int trans_a, trans_b, approx;
    /* broadcasting (collapsed): out dims and per-input element strides (0 = broadcast) */
    int32_t bc_ndim;
    int64_t bc_dims[OPARA_MAX_DIMS];
    int64_t bc_strides[OPARA__BCAST_MAX_IN][OPARA_MAX_DIMS];
    /* generic per-dimension tables (Slice, Transpose, Pad, Resize, Gemm/MatMul blocking) */
    int64_t start[OPARA_MAX_DIMS], step[OPARA_MAX_DIMS], src_stride[OPARA_MAX_DIMS];
    float scale[OPARA_MAX_DIMS], roi_lo[OPARA_MAX_DIMS], roi_hi[OPARA_MAX_DIMS];
    int mode, coord_mode, nearest_mode;
    int64_t m, n, k, m_blocks, n_blocks, a_batch_stride[OPARA_MAX_DIMS], b_batch_stride[OPARA_MAX_DIMS];
    int64_t base;          /* element offset of the first source element (Slice) */
    uint8_t fill[8];       /* Pad's constant in the output dtype */
    int32_t kept_n, red_n; /* ReduceMean: kept and reduced input dims with their input strides */
    int64_t kept_dims[OPARA_MAX_DIMS], kept_strides[OPARA_MAX_DIMS];
    int64_t red_dims[OPARA_MAX_DIMS], red_strides[OPARA_MAX_DIMS];
    size_t elem;           /* element size in bytes for dtype-generic kernels */
} opara__cpu_params;

struct opara__cpu_op {
    const opara__node* node;
    uint32_t n_in, n_out;
    opara__cpu_tensor* in;
    opara__cpu_tensor* out;
    const opara__blas* blas;
    /* filled by opara__cpu_prepare */
    opara__cpu_kernel_fn fn;
    size_t work_items;
    size_t scratch_floats; /* per worker */
    size_t min_items_per_task; /* how many items make a task worth handing to another worker */
    opara__cpu_params p;
};

OPARA__PRIVATE opara_result opara__cpu_prepare(opara__cpu_op* op, char* err, size_t err_cap);
/* Runs the whole operator on the calling thread. */
OPARA__PRIVATE opara_result opara__cpu_run_all(const opara__cpu_op* op, float* scratch);

/* Shared helpers of the kernel files. */
OPARA__PRIVATE opara_result opara__cpu_reject(char* err, size_t cap, opara_result code, const char* fmt, ...)
    OPARA__PRINTF(4, 5);
OPARA__PRIVATE size_t opara__cpu_numel(const opara__cpu_tensor* t);
OPARA__PRIVATE int opara__cpu_norm_axis(int64_t axis, int32_t rank, int64_t* out);
OPARA__PRIVATE int opara__cpu_same_dims(const opara__cpu_tensor* a, const opara__cpu_tensor* b);
/* Element strides of an input (in_ndim dims) broadcast numpy-style to out dims; 0 where it is
   broadcast. Returns 0 when the shapes are not broadcast-compatible. */
OPARA__PRIVATE int opara__cpu_bcast_strides(int32_t out_ndim, const int64_t* out_dims, int32_t in_ndim,
                                            const int64_t* in_dims, int64_t* strides);
OPARA__PRIVATE opara_result opara__cpu_prepare_conv(opara__cpu_op* op, char* err, size_t cap);
OPARA__PRIVATE opara_result opara__cpu_prepare_conv_transpose(opara__cpu_op* op, char* err, size_t cap);
OPARA__PRIVATE opara_result opara__cpu_prepare_pool(opara__cpu_op* op, char* err, size_t cap);
OPARA__PRIVATE opara_result opara__cpu_prepare_gemm(opara__cpu_op* op, char* err, size_t cap);
OPARA__PRIVATE opara_result opara__cpu_prepare_matmul(opara__cpu_op* op, char* err, size_t cap);

/* ---- the executor (opara_backend_cpu.c) ------------------------------------------------------- */

/* A session's CPU side: one prepared operator per node, the arena (one 64-byte aligned block),
   static input buffers, per-worker scratch and the worker threads. A node may start when its
   stream predecessor and the nodes whose events it waits on have finished; any free worker takes
   the ready node that comes first in launch order (streams are the unit of ordering, not
   workers). A worker with nothing ready helps the operator another worker has published for
   splitting (intra-op parallelism over its work items), then spins briefly and sleeps. */
typedef struct opara__cpu_exec opara__cpu_exec;

/* Creates the executor for graph g with plan and per-value shapes/dtypes (all borrowed: they must
   outlive the executor). threads: worker count (>= 1, the caller is worker 0). On failure the
   detail is written to err. */
OPARA__PRIVATE opara_result opara__cpu_exec_create(opara_runtime* rt, const opara__graph* g, const opara__plan* plan,
                                                   const opara__shape* shapes, const opara_dtype* dtypes,
                                                   uint32_t threads, int builtin_gemm, char* err, size_t err_cap,
                                                   opara__cpu_exec** out);
OPARA__PRIVATE void opara__cpu_exec_destroy(opara__cpu_exec* ex);
/* Where value v lives during a run (graph inputs: their static buffer; outputs: in the arena). */
OPARA__PRIVATE void* opara__cpu_exec_value_data(const opara__cpu_exec* ex, int32_t v);
/* One inference; kernel errors (e.g. a Gather index out of range) are reported after the run. */
OPARA__PRIVATE opara_result opara__cpu_exec_run(opara__cpu_exec* ex, char* err, size_t err_cap);
/* Name of the GEMM in use, worker count, and the last run's per-node times (ns since run start)
   and the worker that ran each node; arrays have one entry per node. */
OPARA__PRIVATE const char* opara__cpu_exec_gemm_name(const opara__cpu_exec* ex);
OPARA__PRIVATE uint32_t opara__cpu_exec_workers(const opara__cpu_exec* ex);
OPARA__PRIVATE void opara__cpu_exec_node_times(const opara__cpu_exec* ex, const uint64_t** start, const uint64_t** end,
                                               const uint32_t** worker);

#endif /* OPARA_CPU_H */
/* ==== END src/opara_cpu.h ==== */
/* ==== BEGIN src/opara_blas.c ==== */
/* Run-time BLAS: OpenBLAS (set to one thread) or any libblas that exports cblas_sgemm, by dlopen. */
/* #include "opara_cpu.h" (inlined above) */

#if !defined(_WIN32)
#  include <dlfcn.h>
#endif

typedef void (*opara__blas_set_threads_fn)(int n);

#if defined(_WIN32)
static void* opara__blas_open(const char* path) { (void)path; return NULL; }
static void* opara__blas_sym(void* lib, const char* name) { (void)lib; (void)name; return NULL; }
static void opara__blas_close(void* lib) { (void)lib; }
#else
static void* opara__blas_open(const char* path) { return dlopen(path, RTLD_NOW | RTLD_LOCAL); }
static void* opara__blas_sym(void* lib, const char* name) { return dlsym(lib, name); }
static void opara__blas_close(void* lib) { dlclose(lib); }
#endif

/* Function pointers from dlsym come as void*; memcpy keeps ISO C quiet about the conversion. */
static void opara__blas_fnptr(void* sym, void* dst, size_t size) { memcpy(dst, &sym, size); }

OPARA__PRIVATE void opara__blas_load(opara__blas* blas, int use_builtin, char* tried, size_t tried_cap) {
    static const char* const paths[] = {"libopenblas.so.0", "libopenblasp.so.0", "libopenblas.so",
                                        "libblas.so.3",     "libcblas.so.3",     "libblas.so"};
    size_t i, used = 0;
    memset(blas, 0, sizeof *blas);
    if (tried && tried_cap) tried[0] = 0;
    if (!use_builtin) {
        for (i = 0; i < OPARA__ARRAY_COUNT(paths); ++i) {
            void* lib = opara__blas_open(paths[i]);
            void *sgemm, *threads;
            if (tried && used < tried_cap)
                used += opara__format(tried + used, tried_cap - used, "%s%s", used ? ", " : "", paths[i]);
            if (!lib) continue;
            sgemm = opara__blas_sym(lib, "cblas_sgemm");
            if (!sgemm) {
                opara__blas_close(lib);
                continue;
            }
            blas->lib = lib;
            opara__blas_fnptr(sgemm, &blas->sgemm, sizeof blas->sgemm);
            threads = opara__blas_sym(lib, "openblas_set_num_threads");
            if (threads) {
                opara__blas_set_threads_fn set_threads;
                opara__blas_fnptr(threads, &set_threads, sizeof set_threads);
                set_threads(1);
                opara__format(blas->name, sizeof blas->name, "OpenBLAS (%s)", paths[i]);
            } else {
                opara__format(blas->name, sizeof blas->name, "BLAS (%s)", paths[i]);
            }
            return;
        }
    }
    opara__format(blas->name, sizeof blas->name, "built-in (%s)", opara__sgemm_builtin_kind());
}

OPARA__PRIVATE void opara__blas_unload(opara__blas* blas) {
    if (blas->lib) opara__blas_close(blas->lib);
    memset(blas, 0, sizeof *blas);
}
/* ==== END src/opara_blas.c ==== */
/* ==== BEGIN src/opara_cpu_gemm.c ==== */
/* SGEMM: the built-in cache-blocked, register-tiled GEMM (AVX2+FMA micro-kernel chosen at run
   time on x86 with GCC/Clang, portable C elsewhere), dispatch to a loaded BLAS, and the Gemm and
   MatMul operators. */
/* #include "opara_cpu.h" (inlined above) */

#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
#  define OPARA__GEMM_AVX2 1
#  include <immintrin.h>
#else
#  define OPARA__GEMM_AVX2 0
#endif

#if defined(__SSE2__) || defined(_M_X64) || (defined(_M_IX86_FP) && _M_IX86_FP >= 2)
#  define OPARA__VEC_SSE 1
#  include <emmintrin.h>
#else
#  define OPARA__VEC_SSE 0
#endif

#define OPARA__MR 6
#define OPARA__NR 16

/* ---- row helpers (SSE2 on x86, where -O2 builds would otherwise get scalar, branchy loops) ---- */

OPARA__PRIVATE void opara__vec_fill(float* d, size_t n, float v) {
    size_t i = 0;
#if OPARA__VEC_SSE
    __m128 x = _mm_set1_ps(v);
    for (; i + 4 <= n; i += 4) _mm_storeu_ps(d + i, x);
#endif
    for (; i < n; ++i) d[i] = v;
}

/* y = max(x, 0) (y may be x); NaN becomes 0. */
OPARA__PRIVATE void opara__vec_relu(float* y, const float* x, size_t n) {
    size_t i = 0;
#if OPARA__VEC_SSE
    __m128 z = _mm_setzero_ps();
    for (; i + 4 <= n; i += 4) _mm_storeu_ps(y + i, _mm_max_ps(_mm_loadu_ps(x + i), z));
#endif
    for (; i < n; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

/* d[i] += sum over k < taps of w[k] * s[i * stride + k * dil]: one row of a direct convolution,
   each output loaded and stored once. */
OPARA__PRIVATE void opara__vec_taps(float* d, const float* s, size_t stride, size_t n, const float* w, size_t taps,
                                    size_t dil) {
    size_t i = 0, k;
#if OPARA__VEC_SSE
    for (; i + 4 <= n; i += 4) {
        __m128 acc = _mm_loadu_ps(d + i);
        for (k = 0; k < taps; ++k) {
            const float* sk = s + i * stride + k * dil;
            __m128 a = stride == 1 ? _mm_loadu_ps(sk) : _mm_set_ps(sk[3 * stride], sk[2 * stride], sk[stride], sk[0]);
            acc = _mm_add_ps(acc, _mm_mul_ps(_mm_set1_ps(w[k]), a));
        }
        _mm_storeu_ps(d + i, acc);
    }
#endif
    for (; i < n; ++i) {
        float acc = d[i];
        for (k = 0; k < taps; ++k) acc += w[k] * s[i * stride + k * dil];
        d[i] = acc;
    }
}

/* d[i] += w * s[i * stride]. */
OPARA__PRIVATE void opara__vec_axpy(float* d, const float* s, size_t stride, size_t n, float w) {
    size_t i = 0;
#if OPARA__VEC_SSE
    __m128 wv = _mm_set1_ps(w);
    for (; i + 4 <= n; i += 4) {
        __m128 a = stride == 1 ? _mm_loadu_ps(s + i)
                               : _mm_set_ps(s[(i + 3) * stride], s[(i + 2) * stride], s[(i + 1) * stride], s[i * stride]);
        _mm_storeu_ps(d + i, _mm_add_ps(_mm_loadu_ps(d + i), _mm_mul_ps(wv, a)));
    }
#endif
    for (; i < n; ++i) d[i] += w * s[i * stride];
}

/* d[i] = s[i * stride] > d[i] ? s[i * stride] : d[i] (a NaN in s is skipped). */
OPARA__PRIVATE void opara__vec_max_into(float* d, const float* s, size_t stride, size_t n) {
    size_t i = 0;
#if OPARA__VEC_SSE
    for (; i + 4 <= n; i += 4) {
        __m128 a = stride == 1 ? _mm_loadu_ps(s + i)
                               : _mm_set_ps(s[(i + 3) * stride], s[(i + 2) * stride], s[(i + 1) * stride], s[i * stride]);
        _mm_storeu_ps(d + i, _mm_max_ps(a, _mm_loadu_ps(d + i))); /* maxps(a, b) is exactly a > b ? a : b */
    }
#endif
    for (; i < n; ++i) d[i] = s[i * stride] > d[i] ? s[i * stride] : d[i];
}

/* d[i] += s[i * stride]. */
OPARA__PRIVATE void opara__vec_add_into(float* d, const float* s, size_t stride, size_t n) {
    size_t i = 0;
#if OPARA__VEC_SSE
    for (; i + 4 <= n; i += 4) {
        __m128 a = stride == 1 ? _mm_loadu_ps(s + i)
                               : _mm_set_ps(s[(i + 3) * stride], s[(i + 2) * stride], s[(i + 1) * stride], s[i * stride]);
        _mm_storeu_ps(d + i, _mm_add_ps(_mm_loadu_ps(d + i), a));
    }
#endif
    for (; i < n; ++i) d[i] += s[i * stride];
}

/* ---- packing --------------------------------------------------------------------------------- */

/* Packs op(A)[i0:i0+mc, p0:p0+kc] into strips of MR rows: strip s holds, for each p, MR values.
   Rows past mc are zero. */
static void opara__gemm_pack_a(int trans_a, const float* a, size_t lda, size_t i0, size_t mc, size_t p0, size_t kc,
                               float* dst) {
    size_t s, r, p;
    for (s = 0; s < mc; s += OPARA__MR) {
        size_t rows = OPARA__MIN((size_t)OPARA__MR, mc - s);
        for (r = 0; r < OPARA__MR; ++r) {
            float* d = dst + r;
            if (r >= rows) {
                for (p = 0; p < kc; ++p) d[p * OPARA__MR] = 0.0f;
            } else if (!trans_a) {
                const float* src = a + (i0 + s + r) * lda + p0;
                for (p = 0; p < kc; ++p) d[p * OPARA__MR] = src[p];
            } else {
                const float* src = a + p0 * lda + i0 + s + r;
                for (p = 0; p < kc; ++p) d[p * OPARA__MR] = src[p * lda];
            }
        }
        dst += (size_t)OPARA__MR * kc;
    }
}

/* Packs op(B)[p0:p0+kc, j0:j0+nc] into strips of NR columns: strip holds, for each p, NR values. */
static void opara__gemm_pack_b(int trans_b, const float* b, size_t ldb, size_t p0, size_t kc, size_t j0, size_t nc,
                               float* dst) {
    size_t s, c, p;
    for (s = 0; s < nc; s += OPARA__NR) {
        size_t cols = OPARA__MIN((size_t)OPARA__NR, nc - s);
        if (!trans_b) {
            for (p = 0; p < kc; ++p) {
                const float* src = b + (p0 + p) * ldb + j0 + s;
                float* d = dst + p * OPARA__NR;
                if (cols == OPARA__NR) {
                    memcpy(d, src, OPARA__NR * sizeof(float));
                } else {
                    for (c = 0; c < cols; ++c) d[c] = src[c];
                    for (; c < OPARA__NR; ++c) d[c] = 0.0f;
                }
            }
        } else {
            for (c = 0; c < OPARA__NR; ++c) {
                float* d = dst + c;
                if (c >= cols) {
                    for (p = 0; p < kc; ++p) d[p * OPARA__NR] = 0.0f;
                } else {
                    const float* src = b + (j0 + s + c) * ldb + p0;
                    for (p = 0; p < kc; ++p) d[p * OPARA__NR] = src[p];
                }
            }
        }
        dst += (size_t)OPARA__NR * kc;
    }
}

/* ---- micro-kernels: tile[MR][NR] = sum over kc of a-strip x b-strip ---------------------------- */

static void opara__gemm_micro_c(size_t kc, const float* ap, const float* bp, float* tile) {
    float acc[OPARA__MR * OPARA__NR];
    size_t p;
    int r, c;
    for (c = 0; c < OPARA__MR * OPARA__NR; ++c) acc[c] = 0.0f;
    for (p = 0; p < kc; ++p) {
        const float* bv = bp + p * OPARA__NR;
        const float* av = ap + p * OPARA__MR;
        for (r = 0; r < OPARA__MR; ++r) {
            float x = av[r];
            float* row = acc + r * OPARA__NR;
            for (c = 0; c < OPARA__NR; ++c) row[c] += x * bv[c];
        }
    }
    memcpy(tile, acc, sizeof acc);
}

#if OPARA__GEMM_AVX2
#  define OPARA__FMA_ROW(r, c0, c1)                        \
      do {                                                 \
          __m256 av_ = _mm256_broadcast_ss(ap + (r));      \
          c0 = _mm256_fmadd_ps(av_, b0, c0);               \
          c1 = _mm256_fmadd_ps(av_, b1, c1);               \
      } while (0)

__attribute__((target("avx2,fma"))) static void opara__gemm_micro_avx2(size_t kc, const float* ap, const float* bp,
                                                                       float* tile) {
    __m256 c00 = _mm256_setzero_ps(), c01 = _mm256_setzero_ps(), c10 = _mm256_setzero_ps();
    __m256 c11 = _mm256_setzero_ps(), c20 = _mm256_setzero_ps(), c21 = _mm256_setzero_ps();
    __m256 c30 = _mm256_setzero_ps(), c31 = _mm256_setzero_ps(), c40 = _mm256_setzero_ps();
    __m256 c41 = _mm256_setzero_ps(), c50 = _mm256_setzero_ps(), c51 = _mm256_setzero_ps();
    size_t p;
    for (p = 0; p < kc; ++p) {
        __m256 b0 = _mm256_loadu_ps(bp), b1 = _mm256_loadu_ps(bp + 8);
        OPARA__FMA_ROW(0, c00, c01);
        OPARA__FMA_ROW(1, c10, c11);
        OPARA__FMA_ROW(2, c20, c21);
        OPARA__FMA_ROW(3, c30, c31);
        OPARA__FMA_ROW(4, c40, c41);
        OPARA__FMA_ROW(5, c50, c51);
        ap += OPARA__MR;
        bp += OPARA__NR;
    }
    _mm256_storeu_ps(tile + 0, c00);
    _mm256_storeu_ps(tile + 8, c01);
    _mm256_storeu_ps(tile + 16, c10);
    _mm256_storeu_ps(tile + 24, c11);
    _mm256_storeu_ps(tile + 32, c20);
    _mm256_storeu_ps(tile + 40, c21);
    _mm256_storeu_ps(tile + 48, c30);
    _mm256_storeu_ps(tile + 56, c31);
    _mm256_storeu_ps(tile + 64, c40);
    _mm256_storeu_ps(tile + 72, c41);
    _mm256_storeu_ps(tile + 80, c50);
    _mm256_storeu_ps(tile + 88, c51);
}
#  undef OPARA__FMA_ROW

static int opara__gemm_have_avx2(void) {
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}
#else
static int opara__gemm_have_avx2(void) { return 0; }
#endif

typedef void (*opara__gemm_micro_fn)(size_t kc, const float* ap, const float* bp, float* tile);

static opara__gemm_micro_fn opara__gemm_pick_micro(void) {
#if OPARA__GEMM_AVX2
    if (opara__gemm_have_avx2()) return opara__gemm_micro_avx2;
#endif
    return opara__gemm_micro_c;
}

OPARA__PRIVATE const char* opara__sgemm_builtin_kind(void) {
    return opara__gemm_have_avx2() ? "avx2+fma" : "portable";
}

/* C[rows, cols] = alpha * tile + beta * C (beta 0: C not read). */
static void opara__gemm_store(const float* tile, size_t rows, size_t cols, float alpha, float beta, float* c,
                              size_t ldc) {
    size_t i, j;
    for (i = 0; i < rows; ++i) {
        const float* t = tile + i * OPARA__NR;
        float* ci = c + i * ldc;
        if (beta == 0.0f) {
            for (j = 0; j < cols; ++j) ci[j] = alpha * t[j];
        } else if (beta == 1.0f && alpha == 1.0f) {
            for (j = 0; j < cols; ++j) ci[j] += t[j];
        } else {
            for (j = 0; j < cols; ++j) ci[j] = alpha * t[j] + beta * ci[j];
        }
    }
}

static void opara__gemm_scale(size_t m, size_t n, float beta, float* c, size_t ldc) {
    size_t i, j;
    for (i = 0; i < m; ++i)
        for (j = 0; j < n; ++j) c[i * ldc + j] = beta == 0.0f ? 0.0f : beta * c[i * ldc + j];
}

/* sum of a[i] * b[i] */
static float opara__vec_dot(const float* a, const float* b, size_t n) {
    size_t i = 0;
    float sum = 0.0f;
#if OPARA__VEC_SSE
    __m128 acc0 = _mm_setzero_ps(), acc1 = _mm_setzero_ps();
    float part[4];
    for (; i + 8 <= n; i += 8) {
        acc0 = _mm_add_ps(acc0, _mm_mul_ps(_mm_loadu_ps(a + i), _mm_loadu_ps(b + i)));
        acc1 = _mm_add_ps(acc1, _mm_mul_ps(_mm_loadu_ps(a + i + 4), _mm_loadu_ps(b + i + 4)));
    }
    _mm_storeu_ps(part, _mm_add_ps(acc0, acc1));
    sum = (part[0] + part[1]) + (part[2] + part[3]);
#endif
    for (; i < n; ++i) sum += a[i] * b[i];
    return sum;
}

/* One row of op(A) times op(B) (a fully connected layer at batch 1): dot products with the rows
   of B when it is transposed, else a weighted sum of B's rows. */
static void opara__sgemv_row(int trans_b, size_t n, size_t k, float alpha, const float* a, size_t a_step,
                             const float* b, size_t ldb, float beta, float* c) {
    size_t j, p;
    if (trans_b && a_step == 1) {
        for (j = 0; j < n; ++j) {
            float v = alpha * opara__vec_dot(a, b + j * ldb, k);
            c[j] = beta == 0.0f ? v : v + beta * c[j];
        }
        return;
    }
    for (j = 0; j < n; ++j) c[j] = beta == 0.0f ? 0.0f : beta * c[j];
    for (p = 0; p < k; ++p) {
        float ap = alpha * a[p * a_step];
        if (trans_b)
            for (j = 0; j < n; ++j) c[j] += ap * b[j * ldb + p];
        else
            opara__vec_axpy(c, b + p * ldb, 1, n, ap);
    }
}

OPARA__PRIVATE void opara__sgemm_builtin(int trans_a, int trans_b, size_t m, size_t n, size_t k, float alpha,
                                         const float* a, size_t lda, const float* b, size_t ldb, float beta, float* c,
                                         size_t ldc, float* scratch) {
    opara__gemm_micro_fn micro = opara__gemm_pick_micro();
    float* pack_b = scratch;
    float* pack_a = scratch + (size_t)OPARA__GEMM_KC * OPARA__GEMM_NC;
    float tile[OPARA__MR * OPARA__NR];
    size_t jc, pc, ic, jr, ir;
    if (m == 0 || n == 0) return;
    if (k == 0) {
        opara__gemm_scale(m, n, beta, c, ldc);
        return;
    }
    if (m == 1) { /* packing would copy all of B for one row */
        opara__sgemv_row(trans_b, n, k, alpha, a, trans_a ? lda : 1, b, ldb, beta, c);
        return;
    }
    for (jc = 0; jc < n; jc += OPARA__GEMM_NC) {
        size_t nc = OPARA__MIN((size_t)OPARA__GEMM_NC, n - jc);
        for (pc = 0; pc < k; pc += OPARA__GEMM_KC) {
            size_t kc = OPARA__MIN((size_t)OPARA__GEMM_KC, k - pc);
            float beta_eff = pc == 0 ? beta : 1.0f;
            opara__gemm_pack_b(trans_b, b, ldb, pc, kc, jc, nc, pack_b);
            for (ic = 0; ic < m; ic += OPARA__GEMM_MC) {
                size_t mc = OPARA__MIN((size_t)OPARA__GEMM_MC, m - ic);
                opara__gemm_pack_a(trans_a, a, lda, ic, mc, pc, kc, pack_a);
                for (jr = 0; jr < nc; jr += OPARA__NR) {
                    size_t cols = OPARA__MIN((size_t)OPARA__NR, nc - jr);
                    for (ir = 0; ir < mc; ir += OPARA__MR) {
                        size_t rows = OPARA__MIN((size_t)OPARA__MR, mc - ir);
                        micro(kc, pack_a + ir * kc, pack_b + jr * kc, tile);
                        opara__gemm_store(tile, rows, cols, alpha, beta_eff, c + (ic + ir) * ldc + jc + jr, ldc);
                    }
                }
            }
        }
    }
}

OPARA__PRIVATE void opara__sgemm(const opara__blas* blas, int trans_a, int trans_b, size_t m, size_t n, size_t k,
                                 float alpha, const float* a, size_t lda, const float* b, size_t ldb, float beta,
                                 float* c, size_t ldc, float* scratch) {
    const size_t lim = (size_t)INT_MAX;
    if (m == 0 || n == 0) return;
    if (blas && blas->sgemm && k > 0 && m <= lim && n <= lim && k <= lim && lda <= lim && ldb <= lim && ldc <= lim) {
        /* CblasRowMajor = 101, CblasNoTrans = 111, CblasTrans = 112 */
        blas->sgemm(101, trans_a ? 112 : 111, trans_b ? 112 : 111, (int)m, (int)n, (int)k, alpha, a, (int)lda, b,
                    (int)ldb, beta, c, (int)ldc);
        return;
    }
    opara__sgemm_builtin(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, scratch);
}

/* ---- Gemm and MatMul operators ----------------------------------------------------------------- */

static size_t opara__gemm_scratch(const opara__cpu_op* op) {
    return op->blas && op->blas->sgemm ? 0 : OPARA__GEMM_SCRATCH;
}

/* Splits an m x n output into blocks: rows in blocks of 128, columns in blocks of 512 (128 for
   short matrices, so a matrix-vector product still splits). */
static void opara__gemm_blocking(opara__cpu_params* p, int64_t batch) {
    int64_t bm = 128, bn = p->m <= 32 ? 128 : 512;
    p->m_blocks = p->m > 0 ? (p->m + bm - 1) / bm : 0;
    p->n_blocks = p->n > 0 ? (p->n + bn - 1) / bn : 0;
    p->outer = batch;
    p->tail = bn; /* column block */
}

static opara_result opara__gemm_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    const opara__cpu_params* p = &op->p;
    const float* a = (const float*)op->in[0].data;
    const float* b = (const float*)op->in[1].data;
    const float* cc = op->n_in > 2 ? (const float*)op->in[2].data : NULL;
    float* y = (float*)op->out[0].data;
    size_t lda = (size_t)(p->trans_a ? p->m : p->k), ldb = (size_t)(p->trans_b ? p->k : p->n), ldy = (size_t)p->n;
    size_t item;
    for (item = begin; item < end; ++item) {
        size_t i0 = (size_t)(item / (size_t)p->n_blocks) * 128, j0 = (item % (size_t)p->n_blocks) * (size_t)p->tail;
        size_t mb = OPARA__MIN((size_t)128, (size_t)p->m - i0), nb = OPARA__MIN((size_t)p->tail, (size_t)p->n - j0);
        const float* ab = p->trans_a ? a + i0 : a + i0 * lda;
        const float* bb = p->trans_b ? b + j0 * ldb : b + j0;
        float beta = 0.0f;
        size_t i, j;
        if (cc && p->beta != 0.0f) {
            for (i = 0; i < mb; ++i)
                for (j = 0; j < nb; ++j)
                    y[(i0 + i) * ldy + j0 + j] =
                        p->beta * cc[(int64_t)(i0 + i) * p->bc_strides[0][0] + (int64_t)(j0 + j) * p->bc_strides[0][1]];
            beta = 1.0f;
        }
        opara__sgemm(op->blas, p->trans_a, p->trans_b, mb, nb, (size_t)p->k, p->alpha, ab, lda, bb, ldb, beta,
                     y + i0 * ldy + j0, ldy, scratch);
        if (p->relu)
            for (i = 0; i < mb; ++i) opara__vec_relu(y + (i0 + i) * ldy + j0, y + (i0 + i) * ldy + j0, nb);
    }
    return OPARA_OK;
}

OPARA__PRIVATE opara_result opara__cpu_prepare_gemm(opara__cpu_op* op, char* err, size_t cap) {
    opara__cpu_params* p = &op->p;
    const opara__cpu_tensor *a = &op->in[0], *b = &op->in[1], *y = &op->out[0];
    int64_t ka, kb, cm, cn;
    if (a->ndim != 2 || b->ndim != 2 || y->ndim != 2)
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "Gemm needs 2-D A, B and Y");
    p->trans_a = opara__attr_int(op->node, "transA", 0) != 0;
    p->trans_b = opara__attr_int(op->node, "transB", 0) != 0;
    p->alpha = opara__attr_float(op->node, "alpha", 1.0f);
    p->beta = opara__attr_float(op->node, "beta", 1.0f);
    p->relu = strcmp(opara__attr_string(op->node, "activation", ""), "Relu") == 0;
    p->m = p->trans_a ? a->dims[1] : a->dims[0];
    ka = p->trans_a ? a->dims[0] : a->dims[1];
    kb = p->trans_b ? b->dims[1] : b->dims[0];
    p->n = p->trans_b ? b->dims[0] : b->dims[1];
    p->k = ka;
    if (ka != kb || y->dims[0] != p->m || y->dims[1] != p->n)
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "Gemm: A, B and Y shapes disagree");
    if (op->n_in > 2 && op->in[2].data) {
        const opara__cpu_tensor* c = &op->in[2];
        if (c->ndim > 2) return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "Gemm: C has rank %d", (int)c->ndim);
        cn = c->ndim >= 1 ? c->dims[c->ndim - 1] : 1;
        cm = c->ndim == 2 ? c->dims[0] : 1;
        if ((cn != 1 && cn != p->n) || (cm != 1 && cm != p->m))
            return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "Gemm: C does not broadcast to [M, N]");
        p->bc_strides[0][0] = cm == 1 ? 0 : cn;
        p->bc_strides[0][1] = cn == 1 ? 0 : 1;
    }
    opara__gemm_blocking(p, 1);
    op->work_items = (size_t)(p->m_blocks * p->n_blocks);
    op->scratch_floats = opara__gemm_scratch(op);
    op->min_items_per_task = 1;
    op->fn = opara__gemm_kernel;
    return OPARA_OK;
}

/* Batched, broadcasting MatMul: p->bc_ndim batch dims with A/B element offsets per batch index
   in a_batch_stride/b_batch_stride. */
static opara_result opara__matmul_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    const opara__cpu_params* p = &op->p;
    const float* a = (const float*)op->in[0].data;
    const float* b = (const float*)op->in[1].data;
    float* y = (float*)op->out[0].data;
    size_t per_batch = (size_t)(p->m_blocks * p->n_blocks), item;
    for (item = begin; item < end; ++item) {
        size_t batch = item / per_batch, blk = item % per_batch, rem = batch;
        size_t i0 = (blk / (size_t)p->n_blocks) * 128, j0 = (blk % (size_t)p->n_blocks) * (size_t)p->tail;
        size_t mb = OPARA__MIN((size_t)128, (size_t)p->m - i0), nb = OPARA__MIN((size_t)p->tail, (size_t)p->n - j0);
        int64_t aoff = 0, boff = 0;
        int d;
        for (d = p->bc_ndim - 1; d >= 0; --d) {
            size_t idx = rem % (size_t)p->bc_dims[d];
            rem /= (size_t)p->bc_dims[d];
            aoff += (int64_t)idx * p->a_batch_stride[d];
            boff += (int64_t)idx * p->b_batch_stride[d];
        }
        opara__sgemm(op->blas, 0, 0, mb, nb, (size_t)p->k, 1.0f, a + aoff + (int64_t)i0 * p->k, (size_t)p->k,
                     b + boff + j0, (size_t)p->n, 0.0f, y + batch * (size_t)(p->m * p->n) + i0 * (size_t)p->n + j0,
                     (size_t)p->n, scratch);
    }
    return OPARA_OK;
}

OPARA__PRIVATE opara_result opara__cpu_prepare_matmul(opara__cpu_op* op, char* err, size_t cap) {
    opara__cpu_params* p = &op->p;
    const opara__cpu_tensor *a = &op->in[0], *b = &op->in[1], *y = &op->out[0];
    int64_t adims[OPARA_MAX_DIMS], bdims[OPARA_MAX_DIMS], astr[OPARA_MAX_DIMS], bstr[OPARA_MAX_DIMS];
    int32_t ab = a->ndim >= 2 ? a->ndim - 2 : 0, bb = b->ndim >= 2 ? b->ndim - 2 : 0, nb, i, expect;
    int64_t batch = 1, ka, acc;
    if (a->ndim < 1 || b->ndim < 1) return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "MatMul of a scalar");
    p->m = a->ndim >= 2 ? a->dims[a->ndim - 2] : 1;
    ka = a->dims[a->ndim - 1];
    p->k = b->ndim >= 2 ? b->dims[b->ndim - 2] : b->dims[0];
    p->n = b->ndim >= 2 ? b->dims[b->ndim - 1] : 1;
    if (ka != p->k) return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "MatMul: inner dimensions %lld and %lld differ",
                                             (long long)ka, (long long)p->k);
    nb = OPARA__MAX(ab, bb);
    expect = nb + (a->ndim >= 2) + (b->ndim >= 2);
    if (y->ndim != expect) return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "MatMul: output rank %d, expected %d",
                                                    (int)y->ndim, (int)expect);
    for (i = 0; i < nb; ++i) {
        int64_t da = i - (nb - ab) >= 0 ? a->dims[i - (nb - ab)] : 1;
        int64_t db = i - (nb - bb) >= 0 ? b->dims[i - (nb - bb)] : 1;
        if (da != db && da != 1 && db != 1)
            return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "MatMul: batch dimensions do not broadcast");
        p->bc_dims[i] = da == 1 ? db : da;
        if (y->dims[i] != p->bc_dims[i]) return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "MatMul: output shape");
        batch *= p->bc_dims[i];
    }
    if ((a->ndim >= 2 && y->dims[nb] != p->m) || (b->ndim >= 2 && y->dims[y->ndim - 1] != p->n))
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "MatMul: output shape");
    for (i = 0; i < ab; ++i) adims[i] = a->dims[i];
    for (i = 0; i < bb; ++i) bdims[i] = b->dims[i];
    opara__cpu_bcast_strides(nb, p->bc_dims, ab, adims, astr);
    opara__cpu_bcast_strides(nb, p->bc_dims, bb, bdims, bstr);
    p->bc_ndim = nb;
    /* element strides of one batch step */
    {
        int all_b_bcast = 1, a_full = 1;
        for (i = 0; i < nb; ++i) {
            p->a_batch_stride[i] = astr[i] * p->m * p->k;
            p->b_batch_stride[i] = bstr[i] * p->k * p->n;
            if (bstr[i] != 0 && p->bc_dims[i] != 1) all_b_bcast = 0;
        }
        for (i = 0, acc = 1; i < nb; ++i) acc *= p->bc_dims[i];
        a_full = ab == nb;
        for (i = 0; i < ab; ++i) if (a->dims[i] != p->bc_dims[i]) a_full = 0;
        /* [batch..., M, K] x [K, N]: one GEMM with batch*M rows */
        if (all_b_bcast && a_full && nb > 0) {
            p->m *= acc;
            p->bc_ndim = 0;
            batch = 1;
        }
    }
    opara__gemm_blocking(p, batch);
    op->work_items = (size_t)(batch * p->m_blocks * p->n_blocks);
    op->scratch_floats = opara__gemm_scratch(op);
    op->min_items_per_task = 1;
    op->fn = opara__matmul_kernel;
    return OPARA_OK;
}
/* ==== END src/opara_cpu_gemm.c ==== */
/* ==== BEGIN src/opara_cpu_kernels.c ==== */
/* CPU kernels for the element-wise, data-movement, normalization and reduction operators, the
   shared broadcasting machinery, and opara__cpu_prepare (validation + dispatch). Conv, pools and
   GEMM-based operators are in opara_cpu_conv.c and opara_cpu_gemm.c. */
/* #include "opara_cpu.h" (inlined above) */

#include <math.h>
#include <stdio.h>

#define OPARA__CHUNK 16384 /* elements per work item of element-wise kernels */

/* ---- helpers --------------------------------------------------------------------------------- */

OPARA__PRIVATE opara_result opara__cpu_reject(char* err, size_t cap, opara_result code, const char* fmt, ...) {
    va_list args;
    if (err && cap) {
        va_start(args, fmt);
        vsnprintf(err, cap, fmt, args);
        va_end(args);
    }
    return code;
}

OPARA__PRIVATE size_t opara__cpu_numel(const opara__cpu_tensor* t) {
    size_t n = 1;
    int32_t i;
    for (i = 0; i < t->ndim; ++i) n *= (size_t)t->dims[i];
    return n;
}

OPARA__PRIVATE int opara__cpu_norm_axis(int64_t axis, int32_t rank, int64_t* out) {
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) return 0;
    *out = axis;
    return 1;
}

OPARA__PRIVATE int opara__cpu_same_dims(const opara__cpu_tensor* a, const opara__cpu_tensor* b) {
    int32_t i;
    if (a->ndim != b->ndim) return 0;
    for (i = 0; i < a->ndim; ++i)
        if (a->dims[i] != b->dims[i]) return 0;
    return 1;
}

OPARA__PRIVATE int opara__cpu_bcast_strides(int32_t out_ndim, const int64_t* out_dims, int32_t in_ndim,
                                            const int64_t* in_dims, int64_t* strides) {
    int32_t i;
    int64_t s = 1;
    if (in_ndim > out_ndim) return 0;
    for (i = out_ndim - 1; i >= 0; --i) {
        int32_t j = i - (out_ndim - in_ndim);
        int64_t d = j >= 0 ? in_dims[j] : 1;
        if (d != out_dims[i] && d != 1) return 0;
        strides[i] = d == 1 ? 0 : s;
        s *= d;
    }
    return 1;
}

static int64_t opara__dims_prod(const int64_t* dims, int32_t from, int32_t to) {
    int64_t n = 1;
    int32_t i;
    for (i = from; i < to; ++i) n *= dims[i];
    return n;
}

/* Drops unit dims and merges neighbours that are contiguous for every input; fills
   p->bc_ndim/bc_dims/bc_strides. strides[k] are the uncollapsed element strides of input k. */
static void opara__bc_collapse(opara__cpu_params* p, int n_in, int32_t ndim, const int64_t* dims,
                               int64_t strides[][OPARA_MAX_DIMS]) {
    int32_t i, nd = 0;
    int k;
    for (i = 0; i < ndim; ++i) {
        if (dims[i] == 1) continue;
        if (nd > 0) {
            int merge = 1;
            for (k = 0; k < n_in; ++k)
                if (p->bc_strides[k][nd - 1] != strides[k][i] * dims[i]) merge = 0;
            if (merge) {
                p->bc_dims[nd - 1] *= dims[i];
                for (k = 0; k < n_in; ++k) p->bc_strides[k][nd - 1] = strides[k][i];
                continue;
            }
        }
        p->bc_dims[nd] = dims[i];
        for (k = 0; k < n_in; ++k) p->bc_strides[k][nd] = strides[k][i];
        ++nd;
    }
    if (nd == 0) {
        p->bc_dims[0] = 1;
        for (k = 0; k < n_in; ++k) p->bc_strides[k][0] = 0;
        nd = 1;
    }
    p->bc_ndim = nd;
    /* work items: rows (all but the innermost dim) x chunks of the innermost dim */
    p->inner = p->bc_dims[nd - 1];
    p->tail = p->inner > 0 ? (p->inner + OPARA__CHUNK - 1) / OPARA__CHUNK : 0;
    p->outer = opara__dims_prod(p->bc_dims, 0, nd - 1);
}

/* Sets up broadcasting of n_in inputs to the output; checks the output is their broadcast. */
static opara_result opara__bc_prepare(opara__cpu_op* op, int n_in, const opara__cpu_tensor* const* ins, char* err,
                                      size_t cap) {
    const opara__cpu_tensor* y = &op->out[0];
    int64_t strides[OPARA__BCAST_MAX_IN][OPARA_MAX_DIMS];
    int32_t i;
    int k;
    for (k = 0; k < n_in; ++k)
        if (!opara__cpu_bcast_strides(y->ndim, y->dims, ins[k]->ndim, ins[k]->dims, strides[k]))
            return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "%s: input %d does not broadcast to the output",
                                     opara__op_name(op->node->op), k);
    for (i = 0; i < y->ndim; ++i) {
        int64_t want = 1;
        for (k = 0; k < n_in; ++k) {
            int32_t j = i - (y->ndim - ins[k]->ndim);
            if (j >= 0 && ins[k]->dims[j] != 1) want = ins[k]->dims[j];
        }
        if (want != y->dims[i])
            return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "%s: output dim %d is %lld, broadcast gives %lld",
                                     opara__op_name(op->node->op), (int)i, (long long)y->dims[i], (long long)want);
    }
    opara__bc_collapse(&op->p, n_in, y->ndim, y->dims, strides);
    op->work_items = (size_t)(op->p.outer * op->p.tail);
    op->min_items_per_task = 1;
    return OPARA_OK;
}

/* Element offsets of each input for row `row` of the collapsed iteration space. */
static void opara__bc_offsets(const opara__cpu_params* p, int n_in, size_t row, int64_t* off) {
    int32_t d;
    int k;
    for (k = 0; k < n_in; ++k) off[k] = 0;
    for (d = p->bc_ndim - 2; d >= 0; --d) {
        int64_t idx = (int64_t)(row % (size_t)p->bc_dims[d]);
        row /= (size_t)p->bc_dims[d];
        for (k = 0; k < n_in; ++k) off[k] += idx * p->bc_strides[k][d];
    }
}

/* Decodes item -> (row, first element, count) of the innermost dim. */
static void opara__bc_item(const opara__cpu_params* p, size_t item, size_t* row, size_t* j0, size_t* n) {
    size_t chunk = item % (size_t)p->tail;
    *row = item / (size_t)p->tail;
    *j0 = chunk * OPARA__CHUNK;
    *n = OPARA__MIN((size_t)OPARA__CHUNK, (size_t)p->inner - *j0);
}

static void opara__copy_elems(uint8_t* dst, const uint8_t* src, int64_t src_stride, size_t n, size_t elem) {
    size_t i;
    if (src_stride == 1) {
        memcpy(dst, src, n * elem);
    } else if (elem == 4) {
        for (i = 0; i < n; ++i) memcpy(dst + 4 * i, src + (int64_t)i * src_stride * 4, 4);
    } else if (elem == 8) {
        for (i = 0; i < n; ++i) memcpy(dst + 8 * i, src + (int64_t)i * src_stride * 8, 8);
    } else {
        for (i = 0; i < n; ++i) memcpy(dst + elem * i, src + (int64_t)i * src_stride * (int64_t)elem, elem);
    }
}

/* ---- unary element-wise (f32) ---------------------------------------------------------------- */

static float opara__gelu(float x, int approx) {
    if (approx) {
        float u = 0.7978845608028654f * (x + 0.044715f * x * x * x);
        return 0.5f * x * (1.0f + tanhf(u));
    }
    return 0.5f * x * (1.0f + erff(x * 0.7071067811865476f));
}

static opara_result opara__unary_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    const opara__cpu_params* p = &op->p;
    const float* x = (const float*)op->in[0].data;
    float* y = (float*)op->out[0].data;
    size_t total = opara__cpu_numel(&op->out[0]);
    size_t i0 = begin * OPARA__CHUNK, i1 = OPARA__MIN(total, end * OPARA__CHUNK), i;
    (void)scratch;
    switch (op->node->op) {
    case OPARA__OP_RELU:
        if (i1 > i0) opara__vec_relu(y + i0, x + i0, i1 - i0);
        break;
    case OPARA__OP_LEAKY_RELU:
        for (i = i0; i < i1; ++i) y[i] = x[i] >= 0.0f ? x[i] : p->alpha * x[i];
        break;
    case OPARA__OP_SIGMOID:
        for (i = i0; i < i1; ++i) y[i] = 1.0f / (1.0f + expf(-x[i]));
        break;
    case OPARA__OP_TANH:
        for (i = i0; i < i1; ++i) y[i] = tanhf(x[i]);
        break;
    case OPARA__OP_HARD_SIGMOID:
        for (i = i0; i < i1; ++i) {
            float v = p->alpha * x[i] + p->beta;
            y[i] = v < 0.0f ? 0.0f : (v > 1.0f ? 1.0f : v);
        }
        break;
    case OPARA__OP_HARD_SWISH:
        for (i = i0; i < i1; ++i) {
            float v = x[i] * (1.0f / 6.0f) + 0.5f;
            y[i] = x[i] * (v < 0.0f ? 0.0f : (v > 1.0f ? 1.0f : v));
        }
        break;
    case OPARA__OP_CLIP:
        for (i = i0; i < i1; ++i) {
            float v = x[i] < p->lo ? p->lo : x[i];
            y[i] = v > p->hi ? p->hi : v;
        }
        break;
    case OPARA__OP_SQRT:
        for (i = i0; i < i1; ++i) y[i] = sqrtf(x[i]);
        break;
    case OPARA__OP_ERF:
        for (i = i0; i < i1; ++i) y[i] = erff(x[i]);
        break;
    case OPARA__OP_GELU:
        for (i = i0; i < i1; ++i) y[i] = opara__gelu(x[i], p->approx);
        break;
    default:
        return OPARA_ERR_INTERNAL;
    }
    return OPARA_OK;
}

static opara_result opara__prepare_unary(opara__cpu_op* op, char* err, size_t cap) {
    opara__cpu_params* p = &op->p;
    const opara__node* n = op->node;
    if (!opara__cpu_same_dims(&op->in[0], &op->out[0]))
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "%s: input and output shapes differ", opara__op_name(n->op));
    switch (n->op) {
    case OPARA__OP_LEAKY_RELU: p->alpha = opara__attr_float(n, "alpha", 0.01f); break;
    case OPARA__OP_HARD_SIGMOID:
        p->alpha = opara__attr_float(n, "alpha", 0.2f);
        p->beta = opara__attr_float(n, "beta", 0.5f);
        break;
    case OPARA__OP_CLIP:
        p->lo = opara__attr_float(n, "min", -HUGE_VALF);
        p->hi = opara__attr_float(n, "max", HUGE_VALF);
        break;
    case OPARA__OP_GELU: p->approx = strcmp(opara__attr_string(n, "approximate", "none"), "tanh") == 0; break;
    default: break;
    }
    op->work_items = (opara__cpu_numel(&op->out[0]) + OPARA__CHUNK - 1) / OPARA__CHUNK;
    op->min_items_per_task = 1;
    op->fn = opara__unary_kernel;
    return OPARA_OK;
}

/* ---- binary element-wise with broadcasting ----------------------------------------------------- */

#define OPARA__BIN_ROW(T, EXPR)                                                             \
    do {                                                                                    \
        if (sa == 1 && sb == 1) {                                                           \
            for (i = 0; i < n; ++i) { T x = a[i], z = b[i]; y[i] = (EXPR); }                \
        } else if (sa == 1 && sb == 0) {                                                    \
            T z = b[0];                                                                     \
            for (i = 0; i < n; ++i) { T x = a[i]; y[i] = (EXPR); }                          \
        } else if (sa == 0 && sb == 1) {                                                    \
            T x = a[0];                                                                     \
            for (i = 0; i < n; ++i) { T z = b[i]; y[i] = (EXPR); }                          \
        } else {                                                                            \
            for (i = 0; i < n; ++i) { T x = a[(int64_t)i * sa], z = b[(int64_t)i * sb]; y[i] = (EXPR); } \
        }                                                                                   \
    } while (0)

static void opara__bin_row_f32(opara__op kind, const float* a, int64_t sa, const float* b, int64_t sb, float* y,
                               size_t n) {
    size_t i;
    switch (kind) {
    case OPARA__OP_ADD: OPARA__BIN_ROW(float, x + z); break;
    case OPARA__OP_SUB: OPARA__BIN_ROW(float, x - z); break;
    case OPARA__OP_MUL: OPARA__BIN_ROW(float, x * z); break;
    case OPARA__OP_DIV: OPARA__BIN_ROW(float, x / z); break;
    default: OPARA__BIN_ROW(float, powf(x, z)); break;
    }
}

/* Integer division by zero (and INT_MIN / -1) give 0 instead of trapping. */
static int64_t opara__idiv(int64_t x, int64_t z) {
    if (z == 0 || (z == -1 && x == INT64_MIN)) return 0;
    return x / z;
}

static int64_t opara__ipow(int64_t x, int64_t e) {
    uint64_t r = 1, b = (uint64_t)x;
    if (e < 0) return x == 1 ? 1 : (x == -1 ? ((e & 1) ? -1 : 1) : 0);
    while (e) {
        if (e & 1) r *= b;
        b *= b;
        e >>= 1;
    }
    return (int64_t)r;
}

/* Wrapping arithmetic through uint64 so overflow is defined. */
#define OPARA__IBIN(kind, x, z)                                                                      \
    ((kind) == OPARA__OP_ADD   ? (int64_t)((uint64_t)(x) + (uint64_t)(z))                           \
     : (kind) == OPARA__OP_SUB ? (int64_t)((uint64_t)(x) - (uint64_t)(z))                           \
     : (kind) == OPARA__OP_MUL ? (int64_t)((uint64_t)(x) * (uint64_t)(z))                           \
     : (kind) == OPARA__OP_DIV ? opara__idiv((x), (z))                                              \
                               : opara__ipow((x), (z)))

static void opara__bin_row_i64(opara__op kind, const int64_t* a, int64_t sa, const int64_t* b, int64_t sb, int64_t* y,
                               size_t n) {
    size_t i;
    for (i = 0; i < n; ++i) y[i] = OPARA__IBIN(kind, a[(int64_t)i * sa], b[(int64_t)i * sb]);
}

static void opara__bin_row_i32(opara__op kind, const int32_t* a, int64_t sa, const int32_t* b, int64_t sb, int32_t* y,
                               size_t n) {
    size_t i;
    for (i = 0; i < n; ++i) {
        int64_t x = a[(int64_t)i * sa], z = b[(int64_t)i * sb];
        y[i] = (int32_t)(uint32_t)(uint64_t)OPARA__IBIN(kind, x, z);
    }
}

static opara_result opara__binary_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    const opara__cpu_params* p = &op->p;
    int64_t sa = p->bc_strides[0][p->bc_ndim - 1], sb = p->bc_strides[1][p->bc_ndim - 1];
    opara_dtype dt = op->out[0].dtype;
    size_t item;
    (void)scratch;
    for (item = begin; item < end; ++item) {
        size_t row, j0, n;
        int64_t off[2], ao, bo, yo;
        opara__bc_item(p, item, &row, &j0, &n);
        opara__bc_offsets(p, 2, row, off);
        ao = off[0] + (int64_t)j0 * sa;
        bo = off[1] + (int64_t)j0 * sb;
        yo = (int64_t)(row * (size_t)p->inner + j0);
        if (dt == OPARA_DTYPE_F32)
            opara__bin_row_f32(op->node->op, (const float*)op->in[0].data + ao, sa, (const float*)op->in[1].data + bo,
                               sb, (float*)op->out[0].data + yo, n);
        else if (dt == OPARA_DTYPE_I64)
            opara__bin_row_i64(op->node->op, (const int64_t*)op->in[0].data + ao, sa,
                               (const int64_t*)op->in[1].data + bo, sb, (int64_t*)op->out[0].data + yo, n);
        else
            opara__bin_row_i32(op->node->op, (const int32_t*)op->in[0].data + ao, sa,
                               (const int32_t*)op->in[1].data + bo, sb, (int32_t*)op->out[0].data + yo, n);
    }
    return OPARA_OK;
}

static opara_result opara__prepare_binary(opara__cpu_op* op, char* err, size_t cap) {
    const opara__cpu_tensor* ins[2];
    opara_dtype dt = op->out[0].dtype;
    ins[0] = &op->in[0];
    ins[1] = &op->in[1];
    if (op->in[0].dtype != dt || op->in[1].dtype != dt ||
        (dt != OPARA_DTYPE_F32 && dt != OPARA_DTYPE_I64 && dt != OPARA_DTYPE_I32))
        return opara__cpu_reject(err, cap, OPARA_ERR_BAD_DTYPE, "%s: needs f32, i64 or i32 operands of one type",
                                 opara__op_name(op->node->op));
    op->fn = opara__binary_kernel;
    return opara__bc_prepare(op, 2, ins, err, cap);
}

/* ---- Where, Expand, Slice, Transpose: strided copies ------------------------------------------- */

static opara_result opara__where_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    const opara__cpu_params* p = &op->p;
    const uint8_t* c = (const uint8_t*)op->in[0].data;
    const uint8_t* x = (const uint8_t*)op->in[1].data;
    const uint8_t* z = (const uint8_t*)op->in[2].data;
    uint8_t* y = (uint8_t*)op->out[0].data;
    int64_t sc = p->bc_strides[0][p->bc_ndim - 1], sx = p->bc_strides[1][p->bc_ndim - 1];
    int64_t sz = p->bc_strides[2][p->bc_ndim - 1];
    size_t e = p->elem, item, i;
    (void)scratch;
    for (item = begin; item < end; ++item) {
        size_t row, j0, n;
        int64_t off[3];
        uint8_t* yr;
        opara__bc_item(p, item, &row, &j0, &n);
        opara__bc_offsets(p, 3, row, off);
        yr = y + (row * (size_t)p->inner + j0) * e;
        for (i = 0; i < n; ++i) {
            int64_t j = (int64_t)(j0 + i);
            const uint8_t* src = c[off[0] + j * sc] ? x + (off[1] + j * sx) * (int64_t)e : z + (off[2] + j * sz) * (int64_t)e;
            memcpy(yr + i * e, src, e);
        }
    }
    return OPARA_OK;
}

static opara_result opara__prepare_where(opara__cpu_op* op, char* err, size_t cap) {
    const opara__cpu_tensor* ins[3];
    ins[0] = &op->in[0];
    ins[1] = &op->in[1];
    ins[2] = &op->in[2];
    if (op->in[0].dtype != OPARA_DTYPE_BOOL || op->in[1].dtype != op->out[0].dtype ||
        op->in[2].dtype != op->out[0].dtype || !opara_dtype_size(op->out[0].dtype))
        return opara__cpu_reject(err, cap, OPARA_ERR_BAD_DTYPE, "Where: condition must be bool, X and Y the output type");
    op->p.elem = opara_dtype_size(op->out[0].dtype);
    op->fn = opara__where_kernel;
    return opara__bc_prepare(op, 3, ins, err, cap);
}

/* out[i] = in[base + sum_d idx_d * stride_d] over the collapsed dims (stride table of input 0). */
static opara_result opara__strided_copy_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    const opara__cpu_params* p = &op->p;
    const uint8_t* x = (const uint8_t*)op->in[0].data;
    uint8_t* y = (uint8_t*)op->out[0].data;
    int64_t s = p->bc_strides[0][p->bc_ndim - 1];
    size_t e = p->elem, item;
    (void)scratch;
    for (item = begin; item < end; ++item) {
        size_t row, j0, n;
        int64_t off;
        opara__bc_item(p, item, &row, &j0, &n);
        opara__bc_offsets(p, 1, row, &off);
        off += p->base + (int64_t)j0 * s;
        opara__copy_elems(y + (row * (size_t)p->inner + j0) * e, x + off * (int64_t)e, s, n, e);
    }
    return OPARA_OK;
}

static opara_result opara__finish_strided_copy(opara__cpu_op* op, int64_t strides[][OPARA_MAX_DIMS]) {
    const opara__cpu_tensor* y = &op->out[0];
    op->p.elem = opara_dtype_size(y->dtype);
    opara__bc_collapse(&op->p, 1, y->ndim, y->dims, strides);
    op->work_items = (size_t)(op->p.outer * op->p.tail);
    op->min_items_per_task = 1;
    op->fn = opara__strided_copy_kernel;
    return OPARA_OK;
}

static opara_result opara__prepare_expand(opara__cpu_op* op, char* err, size_t cap) {
    if (op->in[0].dtype != op->out[0].dtype || !opara_dtype_size(op->out[0].dtype))
        return opara__cpu_reject(err, cap, OPARA_ERR_BAD_DTYPE, "Expand: input and output types differ");
    op->p.elem = opara_dtype_size(op->out[0].dtype);
    op->fn = opara__strided_copy_kernel;
    /* the output of Expand is the broadcast of the input and the shape: ok when input broadcasts */
    {
        int64_t strides[1][OPARA_MAX_DIMS];
        if (!opara__cpu_bcast_strides(op->out[0].ndim, op->out[0].dims, op->in[0].ndim, op->in[0].dims, strides[0]))
            return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "Expand: input does not broadcast to the output");
        op->p.base = 0;
        return opara__finish_strided_copy(op, strides);
    }
}

static void opara__natural_strides(const opara__cpu_tensor* t, int64_t* strides) {
    int32_t i;
    int64_t s = 1;
    for (i = t->ndim - 1; i >= 0; --i) {
        strides[i] = s;
        s *= t->dims[i];
    }
}

static opara_result opara__prepare_transpose(opara__cpu_op* op, char* err, size_t cap) {
    const opara__cpu_tensor *x = &op->in[0], *y = &op->out[0];
    int64_t in_str[OPARA_MAX_DIMS], strides[1][OPARA_MAX_DIMS], perm[OPARA_MAX_DIMS];
    uint32_t count = 0;
    const int64_t* attr = opara__attr_ints(op->node, "perm", &count);
    int seen[OPARA_MAX_DIMS];
    int32_t i;
    if (x->ndim != y->ndim || x->dtype != y->dtype)
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "Transpose: input and output ranks or types differ");
    if (attr && count != (uint32_t)x->ndim)
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "Transpose: perm has %u entries for rank %d", count,
                                 (int)x->ndim);
    memset(seen, 0, sizeof seen);
    for (i = 0; i < x->ndim; ++i) {
        int64_t a = attr ? attr[i] : x->ndim - 1 - i;
        if (!opara__cpu_norm_axis(a, x->ndim, &perm[i]) || seen[perm[i]])
            return opara__cpu_reject(err, cap, OPARA_ERR_BAD_INDEX, "Transpose: perm is not a permutation");
        seen[perm[i]] = 1;
    }
    opara__natural_strides(x, in_str);
    for (i = 0; i < y->ndim; ++i) {
        if (y->dims[i] != x->dims[perm[i]])
            return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "Transpose: output dim %d is wrong", (int)i);
        strides[0][i] = in_str[perm[i]];
    }
    op->p.base = 0;
    return opara__finish_strided_copy(op, strides);
}

/* ONNX Slice clamping of one axis; returns the number of elements taken. */
static int64_t opara__slice_axis(int64_t dim, int64_t start, int64_t end, int64_t step, int64_t* first) {
    if (start < 0) start += dim;
    if (end < 0) end += dim;
    if (step > 0) {
        start = start < 0 ? 0 : (start > dim ? dim : start);
        end = end < 0 ? 0 : (end > dim ? dim : end);
        *first = start;
        return end > start ? (end - start + step - 1) / step : 0;
    }
    start = start < 0 ? 0 : (start > dim - 1 ? dim - 1 : start);
    end = end < -1 ? -1 : (end > dim - 1 ? dim - 1 : end);
    *first = start;
    return start > end ? (start - end + (-step) - 1) / (-step) : 0;
}

static opara_result opara__prepare_slice(opara__cpu_op* op, char* err, size_t cap) {
    const opara__cpu_tensor *x = &op->in[0], *y = &op->out[0];
    uint32_t ns = 0, ne = 0, na = 0, nst = 0, i;
    const int64_t* starts = opara__attr_ints(op->node, "starts", &ns);
    const int64_t* ends = opara__attr_ints(op->node, "ends", &ne);
    const int64_t* axes = opara__attr_ints(op->node, "axes", &na);
    const int64_t* steps = opara__attr_ints(op->node, "steps", &nst);
    int64_t in_str[OPARA_MAX_DIMS], strides[1][OPARA_MAX_DIMS], first[OPARA_MAX_DIMS], stp[OPARA_MAX_DIMS];
    int64_t cnt[OPARA_MAX_DIMS];
    int32_t d;
    if (!starts || !ends || ns != ne || (axes && na != ns) || (steps && nst != ns) || x->ndim != y->ndim ||
        x->dtype != y->dtype)
        return opara__cpu_reject(err, cap, OPARA_ERR_INVALID_ARGS, "Slice: starts/ends/axes/steps are inconsistent");
    for (d = 0; d < x->ndim; ++d) {
        first[d] = 0;
        stp[d] = 1;
        cnt[d] = x->dims[d];
    }
    for (i = 0; i < ns; ++i) {
        int64_t ax = axes ? axes[i] : (int64_t)i, step = steps ? steps[i] : 1;
        if (!opara__cpu_norm_axis(ax, x->ndim, &ax) || step == 0)
            return opara__cpu_reject(err, cap, OPARA_ERR_BAD_INDEX, "Slice: bad axis or zero step");
        stp[ax] = step;
        cnt[ax] = opara__slice_axis(x->dims[ax], starts[i], ends[i], step, &first[ax]);
    }
    opara__natural_strides(x, in_str);
    op->p.base = 0;
    for (d = 0; d < x->ndim; ++d) {
        if (cnt[d] != y->dims[d])
            return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "Slice: output dim %d is %lld, slice gives %lld", (int)d,
                                     (long long)y->dims[d], (long long)cnt[d]);
        strides[0][d] = stp[d] * in_str[d];
        if (cnt[d] > 0) op->p.base += first[d] * in_str[d];
    }
    return opara__finish_strided_copy(op, strides);
}

/* ---- Reshape family: plain copies ------------------------------------------------------------- */

static opara_result opara__copy_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    size_t bytes = opara__cpu_numel(&op->out[0]) * op->p.elem, b0 = begin * 65536, b1 = OPARA__MIN(bytes, end * 65536);
    (void)scratch;
    if (op->in[0].data != op->out[0].data && b1 > b0)
        memcpy((uint8_t*)op->out[0].data + b0, (const uint8_t*)op->in[0].data + b0, b1 - b0);
    return OPARA_OK;
}

static opara_result opara__prepare_reshape(opara__cpu_op* op, char* err, size_t cap) {
    if (opara__cpu_numel(&op->in[0]) != opara__cpu_numel(&op->out[0]) || op->in[0].dtype != op->out[0].dtype)
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "%s: element counts or types differ",
                                 opara__op_name(op->node->op));
    op->p.elem = opara_dtype_size(op->out[0].dtype);
    op->work_items = (opara__cpu_numel(&op->out[0]) * op->p.elem + 65535) / 65536;
    op->min_items_per_task = 4;
    op->fn = opara__copy_kernel;
    return OPARA_OK;
}

/* ---- Concat and Split ------------------------------------------------------------------------- */

static opara_result opara__concat_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    size_t e = op->p.elem, inner = (size_t)op->p.inner, row_bytes = (size_t)op->out[0].dims[op->p.axis] * inner * e;
    size_t o;
    uint32_t k;
    (void)scratch;
    for (o = begin; o < end; ++o) {
        uint8_t* dst = (uint8_t*)op->out[0].data + o * row_bytes;
        for (k = 0; k < op->n_in; ++k) {
            size_t chunk = (size_t)op->in[k].dims[op->p.axis] * inner * e;
            const uint8_t* src = (const uint8_t*)op->in[k].data + o * chunk;
            if (src != dst) memcpy(dst, src, chunk); /* else the producer wrote it in place */
            dst += chunk;
        }
    }
    return OPARA_OK;
}

static opara_result opara__split_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    size_t e = op->p.elem, inner = (size_t)op->p.inner, row_bytes = (size_t)op->in[0].dims[op->p.axis] * inner * e;
    size_t o;
    uint32_t k;
    (void)scratch;
    for (o = begin; o < end; ++o) {
        const uint8_t* src = (const uint8_t*)op->in[0].data + o * row_bytes;
        for (k = 0; k < op->n_out; ++k) {
            size_t chunk = (size_t)op->out[k].dims[op->p.axis] * inner * e;
            if (op->out[k].data) memcpy((uint8_t*)op->out[k].data + o * chunk, src, chunk);
            src += chunk;
        }
    }
    return OPARA_OK;
}

/* Checks that `t` equals `ref` except on `axis`. */
static int opara__same_except(const opara__cpu_tensor* t, const opara__cpu_tensor* ref, int64_t axis) {
    int32_t i;
    if (t->ndim != ref->ndim || t->dtype != ref->dtype) return 0;
    for (i = 0; i < t->ndim; ++i)
        if (i != axis && t->dims[i] != ref->dims[i]) return 0;
    return 1;
}

static opara_result opara__prepare_concat_split(opara__cpu_op* op, char* err, size_t cap) {
    int is_concat = op->node->op == OPARA__OP_CONCAT;
    const opara__cpu_tensor* whole = is_concat ? &op->out[0] : &op->in[0];
    const opara__cpu_tensor* parts = is_concat ? op->in : op->out;
    uint32_t n_parts = is_concat ? op->n_in : op->n_out, k, n_split = 0;
    const int64_t* split = is_concat ? NULL : opara__attr_ints(op->node, "split", &n_split);
    int64_t axis, sum = 0;
    if (!opara__cpu_norm_axis(opara__attr_int(op->node, "axis", 0), whole->ndim, &axis))
        return opara__cpu_reject(err, cap, OPARA_ERR_BAD_INDEX, "%s: axis out of range", opara__op_name(op->node->op));
    if (split && n_split != n_parts)
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "Split: %u sizes for %u outputs", n_split, n_parts);
    for (k = 0; k < n_parts; ++k) {
        if (!opara__same_except(&parts[k], whole, axis) || (split && split[k] != parts[k].dims[axis]))
            return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "%s: part %u has the wrong shape or type",
                                     opara__op_name(op->node->op), k);
        sum += parts[k].dims[axis];
    }
    if (sum != whole->dims[axis])
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "%s: parts add up to %lld along the axis, not %lld",
                                 opara__op_name(op->node->op), (long long)sum, (long long)whole->dims[axis]);
    op->p.axis = axis;
    op->p.elem = opara_dtype_size(whole->dtype);
    op->p.inner = opara__dims_prod(whole->dims, (int32_t)axis + 1, whole->ndim);
    op->work_items = (size_t)opara__dims_prod(whole->dims, 0, (int32_t)axis);
    if (opara__cpu_numel(whole) == 0) op->work_items = 0;
    op->min_items_per_task = 16;
    op->fn = is_concat ? opara__concat_kernel : opara__split_kernel;
    return OPARA_OK;
}

/* ---- Gather ----------------------------------------------------------------------------------- */

static opara_result opara__gather_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    const opara__cpu_params* p = &op->p;
    const opara__cpu_tensor* idx = &op->in[1];
    size_t nidx = opara__cpu_numel(idx), block = (size_t)p->inner * p->elem, item;
    int64_t dim = op->in[0].dims[p->axis];
    (void)scratch;
    for (item = begin; item < end; ++item) {
        size_t o = item / nidx, j = item % nidx;
        int64_t v = idx->dtype == OPARA_DTYPE_I64 ? ((const int64_t*)idx->data)[j] : ((const int32_t*)idx->data)[j];
        if (v < 0) v += dim;
        if (v < 0 || v >= dim) return OPARA_ERR_BAD_INDEX;
        memcpy((uint8_t*)op->out[0].data + item * block,
               (const uint8_t*)op->in[0].data + (o * (size_t)dim + (size_t)v) * block, block);
    }
    return OPARA_OK;
}

static opara_result opara__prepare_gather(opara__cpu_op* op, char* err, size_t cap) {
    const opara__cpu_tensor *x = &op->in[0], *idx = &op->in[1], *y = &op->out[0];
    int64_t axis;
    int32_t i, expect = x->ndim - 1 + idx->ndim;
    if (!opara__cpu_norm_axis(opara__attr_int(op->node, "axis", 0), x->ndim, &axis))
        return opara__cpu_reject(err, cap, OPARA_ERR_BAD_INDEX, "Gather: axis out of range");
    if ((idx->dtype != OPARA_DTYPE_I64 && idx->dtype != OPARA_DTYPE_I32) || y->dtype != x->dtype)
        return opara__cpu_reject(err, cap, OPARA_ERR_BAD_DTYPE, "Gather: indices must be i32/i64");
    if (y->ndim != expect) return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "Gather: output rank");
    for (i = 0; i < y->ndim; ++i) {
        int64_t want = i < axis ? x->dims[i] : (i < axis + idx->ndim ? idx->dims[i - axis] : x->dims[i - idx->ndim + 1]);
        if (y->dims[i] != want) return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "Gather: output dim %d", (int)i);
    }
    op->p.axis = axis;
    op->p.elem = opara_dtype_size(x->dtype);
    op->p.inner = opara__dims_prod(x->dims, (int32_t)axis + 1, x->ndim);
    op->work_items = x->dims[axis] == 0 && opara__cpu_numel(idx) ? 0 : opara__cpu_numel(y) / (op->p.inner ? (size_t)op->p.inner : 1);
    if (opara__cpu_numel(y) == 0) op->work_items = 0;
    if (x->dims[axis] == 0 && opara__cpu_numel(idx) > 0 && opara__cpu_numel(y) > 0)
        return opara__cpu_reject(err, cap, OPARA_ERR_BAD_INDEX, "Gather: indexing an empty axis");
    op->min_items_per_task = 256;
    op->fn = opara__gather_kernel;
    return OPARA_OK;
}

/* ---- Cast ------------------------------------------------------------------------------------- */

static int opara__is_float_type(opara_dtype t) { return t == OPARA_DTYPE_F32 || t == OPARA_DTYPE_F64; }

static double opara__load_f(const void* base, opara_dtype t, size_t i) {
    return t == OPARA_DTYPE_F32 ? (double)((const float*)base)[i] : ((const double*)base)[i];
}

static int64_t opara__load_i(const void* base, opara_dtype t, size_t i) {
    switch (t) {
    case OPARA_DTYPE_I64: return ((const int64_t*)base)[i];
    case OPARA_DTYPE_I32: return ((const int32_t*)base)[i];
    case OPARA_DTYPE_I8: return ((const int8_t*)base)[i];
    case OPARA_DTYPE_BOOL: return ((const uint8_t*)base)[i] != 0;
    default: return ((const uint8_t*)base)[i];
    }
}

static void opara__store_i(void* base, opara_dtype t, size_t i, int64_t v) {
    switch (t) {
    case OPARA_DTYPE_I64: ((int64_t*)base)[i] = v; break;
    case OPARA_DTYPE_I32: ((int32_t*)base)[i] = (int32_t)(uint32_t)(uint64_t)v; break;
    case OPARA_DTYPE_I8: ((int8_t*)base)[i] = (int8_t)(uint8_t)(uint64_t)v; break;
    case OPARA_DTYPE_BOOL: ((uint8_t*)base)[i] = v != 0; break;
    default: ((uint8_t*)base)[i] = (uint8_t)(uint64_t)v; break;
    }
}

/* Float to integer: truncation toward zero, saturated to the int64 range, NaN gives 0. */
static int64_t opara__f_to_i(double v) {
    if (v != v) return 0;
    if (v >= 9.2233720368547758e18) return INT64_MAX;
    if (v <= -9.2233720368547758e18) return INT64_MIN;
    return (int64_t)v;
}

static opara_result opara__cast_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    opara_dtype from = op->in[0].dtype, to = op->out[0].dtype;
    const void* x = op->in[0].data;
    void* y = op->out[0].data;
    size_t total = opara__cpu_numel(&op->out[0]), i0 = begin * OPARA__CHUNK, i1 = OPARA__MIN(total, end * OPARA__CHUNK), i;
    (void)scratch;
    for (i = i0; i < i1; ++i) {
        if (opara__is_float_type(to)) {
            double v = opara__is_float_type(from) ? opara__load_f(x, from, i) : (double)opara__load_i(x, from, i);
            if (to == OPARA_DTYPE_F32) ((float*)y)[i] = (float)v;
            else ((double*)y)[i] = v;
        } else if (opara__is_float_type(from)) {
            double v = opara__load_f(x, from, i);
            if (to == OPARA_DTYPE_BOOL) opara__store_i(y, to, i, v != 0.0);
            else opara__store_i(y, to, i, opara__f_to_i(v));
        } else {
            opara__store_i(y, to, i, opara__load_i(x, from, i));
        }
    }
    return OPARA_OK;
}

static int opara__cast_type_ok(opara_dtype t) {
    return t == OPARA_DTYPE_F32 || t == OPARA_DTYPE_F64 || t == OPARA_DTYPE_I64 || t == OPARA_DTYPE_I32 ||
           t == OPARA_DTYPE_I8 || t == OPARA_DTYPE_U8 || t == OPARA_DTYPE_BOOL;
}

static opara_result opara__prepare_cast(opara__cpu_op* op, char* err, size_t cap) {
    int64_t to = opara__attr_int(op->node, "to", (int64_t)op->out[0].dtype);
    if (!opara__cpu_same_dims(&op->in[0], &op->out[0]))
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "Cast: input and output shapes differ");
    if (to != (int64_t)op->out[0].dtype || !opara__cast_type_ok(op->in[0].dtype) || !opara__cast_type_ok(op->out[0].dtype))
        return opara__cpu_reject(err, cap, OPARA_ERR_UNSUPPORTED, "Cast from %s to %s is not supported",
                                 opara_dtype_name(op->in[0].dtype), opara_dtype_name(op->out[0].dtype));
    op->work_items = (opara__cpu_numel(&op->out[0]) + OPARA__CHUNK - 1) / OPARA__CHUNK;
    op->min_items_per_task = 1;
    op->fn = opara__cast_kernel;
    return OPARA_OK;
}

/* ---- Softmax, LayerNormalization, BatchNormalization, GlobalAveragePool ------------------------ */

static opara_result opara__softmax_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    const opara__cpu_params* p = &op->p;
    size_t L = (size_t)p->mid, in = (size_t)p->inner, item, j;
    (void)scratch;
    for (item = begin; item < end; ++item) {
        size_t base = (item / in) * L * in + item % in;
        const float* x = (const float*)op->in[0].data + base;
        float* y = (float*)op->out[0].data + base;
        float mx = -HUGE_VALF, sum = 0.0f;
        for (j = 0; j < L; ++j) mx = x[j * in] > mx ? x[j * in] : mx;
        for (j = 0; j < L; ++j) {
            y[j * in] = expf(x[j * in] - mx);
            sum += y[j * in];
        }
        for (j = 0; j < L; ++j) y[j * in] /= sum;
    }
    return OPARA_OK;
}

static opara_result opara__prepare_softmax(opara__cpu_op* op, char* err, size_t cap) {
    const opara__cpu_tensor* x = &op->in[0];
    int64_t axis;
    if (!opara__cpu_same_dims(x, &op->out[0]) || x->dtype != OPARA_DTYPE_F32)
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "Softmax: needs f32 and equal input/output shapes");
    if (!opara__cpu_norm_axis(opara__attr_int(op->node, "axis", -1), x->ndim, &axis))
        return opara__cpu_reject(err, cap, OPARA_ERR_BAD_INDEX, "Softmax: axis out of range");
    op->p.mid = x->dims[axis];
    op->p.inner = opara__dims_prod(x->dims, (int32_t)axis + 1, x->ndim);
    op->work_items = (size_t)(opara__dims_prod(x->dims, 0, (int32_t)axis) * op->p.inner);
    if (op->p.mid == 0) op->work_items = 0;
    op->min_items_per_task = 16;
    op->fn = opara__softmax_kernel;
    return OPARA_OK;
}

static opara_result opara__layer_norm_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    const opara__cpu_params* p = &op->p;
    size_t L = (size_t)p->mid, item, j;
    const float* sc = (const float*)op->in[1].data;
    const float* bias = op->n_in > 2 ? (const float*)op->in[2].data : NULL;
    float* mean_out = op->n_out > 1 ? (float*)op->out[1].data : NULL;
    float* inv_out = op->n_out > 2 ? (float*)op->out[2].data : NULL;
    size_t ss = (size_t)p->bc_strides[0][0], bs = (size_t)p->bc_strides[1][0];
    (void)scratch;
    for (item = begin; item < end; ++item) {
        const float* x = (const float*)op->in[0].data + item * L;
        float* y = (float*)op->out[0].data + item * L;
        double sum = 0.0, var = 0.0;
        float mean, inv;
        for (j = 0; j < L; ++j) sum += x[j];
        mean = (float)(sum / (double)L);
        for (j = 0; j < L; ++j) var += (double)(x[j] - mean) * (double)(x[j] - mean);
        inv = (float)(1.0 / sqrt(var / (double)L + (double)p->eps));
        for (j = 0; j < L; ++j) y[j] = (x[j] - mean) * inv * sc[j * ss] + (bias ? bias[j * bs] : 0.0f);
        if (mean_out) mean_out[item] = mean;
        if (inv_out) inv_out[item] = inv;
    }
    return OPARA_OK;
}

static opara_result opara__prepare_layer_norm(opara__cpu_op* op, char* err, size_t cap) {
    const opara__cpu_tensor* x = &op->in[0];
    int64_t axis, outer;
    size_t L;
    uint32_t k;
    if (!opara__cpu_same_dims(x, &op->out[0]) || x->dtype != OPARA_DTYPE_F32)
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "LayerNormalization: needs f32, equal X/Y shapes");
    if (!opara__cpu_norm_axis(opara__attr_int(op->node, "axis", -1), x->ndim, &axis))
        return opara__cpu_reject(err, cap, OPARA_ERR_BAD_INDEX, "LayerNormalization: axis out of range");
    op->p.eps = opara__attr_float(op->node, "epsilon", 1e-5f);
    op->p.mid = opara__dims_prod(x->dims, (int32_t)axis, x->ndim);
    outer = opara__dims_prod(x->dims, 0, (int32_t)axis);
    L = (size_t)op->p.mid;
    for (k = 1; k < 3 && k < op->n_in; ++k) {
        size_t n = opara__cpu_numel(&op->in[k]);
        if (!op->in[k].data) continue;
        if (n != L && n != 1)
            return opara__cpu_reject(err, cap, OPARA_ERR_UNSUPPORTED, "LayerNormalization: scale/bias of %zu elements", n);
        op->p.bc_strides[k - 1][0] = n == 1 ? 0 : 1;
    }
    for (k = 1; k < op->n_out; ++k)
        if (op->out[k].data && opara__cpu_numel(&op->out[k]) != (size_t)outer)
            return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "LayerNormalization: Mean/InvStdDev shape");
    if (op->n_in < 2 || !op->in[1].data) return opara__cpu_reject(err, cap, OPARA_ERR_INVALID_ARGS, "LayerNormalization needs Scale");
    op->work_items = L ? (size_t)outer : 0;
    op->min_items_per_task = 4;
    op->fn = opara__layer_norm_kernel;
    return OPARA_OK;
}

static opara_result opara__batch_norm_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    size_t C = (size_t)op->p.cin, HW = (size_t)op->p.inner, item, j;
    (void)scratch;
    for (item = begin; item < end; ++item) {
        size_t c = item % C;
        float s = ((const float*)op->in[1].data)[c], b = ((const float*)op->in[2].data)[c];
        float m = ((const float*)op->in[3].data)[c], v = ((const float*)op->in[4].data)[c];
        float k = s / sqrtf(v + op->p.eps), off = b - m * k;
        const float* x = (const float*)op->in[0].data + item * HW;
        float* y = (float*)op->out[0].data + item * HW;
        for (j = 0; j < HW; ++j) y[j] = x[j] * k + off;
    }
    return OPARA_OK;
}

static opara_result opara__prepare_batch_norm(opara__cpu_op* op, char* err, size_t cap) {
    const opara__cpu_tensor* x = &op->in[0];
    uint32_t k;
    if (op->n_in < 5 || x->ndim < 2 || !opara__cpu_same_dims(x, &op->out[0]))
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "BatchNormalization: needs 5 inputs and X/Y of rank >= 2");
    for (k = 1; k < 5; ++k)
        if (!op->in[k].data || opara__cpu_numel(&op->in[k]) != (size_t)x->dims[1])
            return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "BatchNormalization: input %u must have C elements", k);
    op->p.eps = opara__attr_float(op->node, "epsilon", 1e-5f);
    op->p.cin = x->dims[1];
    op->p.inner = opara__dims_prod(x->dims, 2, x->ndim);
    op->work_items = (size_t)(x->dims[0] * x->dims[1]);
    op->min_items_per_task = 1;
    op->fn = opara__batch_norm_kernel;
    return OPARA_OK;
}

static opara_result opara__global_avg_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    size_t HW = (size_t)op->p.inner, item, j;
    (void)scratch;
    for (item = begin; item < end; ++item) {
        const float* x = (const float*)op->in[0].data + item * HW;
        float sum = 0.0f;
        for (j = 0; j < HW; ++j) sum += x[j];
        ((float*)op->out[0].data)[item] = HW ? sum / (float)HW : 0.0f;
    }
    return OPARA_OK;
}

static opara_result opara__prepare_global_avg(opara__cpu_op* op, char* err, size_t cap) {
    const opara__cpu_tensor *x = &op->in[0], *y = &op->out[0];
    int32_t i;
    if (x->ndim < 2 || y->ndim != x->ndim || y->dims[0] != x->dims[0] || y->dims[1] != x->dims[1])
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "GlobalAveragePool: output must be [N, C, 1, ...]");
    for (i = 2; i < y->ndim; ++i)
        if (y->dims[i] != 1) return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "GlobalAveragePool: output must be [N, C, 1, ...]");
    op->p.inner = opara__dims_prod(x->dims, 2, x->ndim);
    op->work_items = (size_t)(x->dims[0] * x->dims[1]);
    op->min_items_per_task = 4;
    op->fn = opara__global_avg_kernel;
    return OPARA_OK;
}

/* ---- ReduceMean ------------------------------------------------------------------------------- */

static opara_result opara__reduce_mean_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    const opara__cpu_params* p = &op->p;
    const float* x = (const float*)op->in[0].data;
    float* y = (float*)op->out[0].data;
    int64_t count = opara__dims_prod(p->red_dims, 0, p->red_n);
    size_t item;
    (void)scratch;
    for (item = begin; item < end; ++item) {
        int64_t base = 0, idx[OPARA_MAX_DIMS], r, inner = p->red_n ? p->red_dims[p->red_n - 1] : 1;
        int64_t is = p->red_n ? p->red_strides[p->red_n - 1] : 0;
        size_t rem = item;
        double sum = 0.0;
        int32_t d;
        for (d = p->kept_n - 1; d >= 0; --d) {
            base += (int64_t)(rem % (size_t)p->kept_dims[d]) * p->kept_strides[d];
            rem /= (size_t)p->kept_dims[d];
        }
        for (d = 0; d < p->red_n; ++d) idx[d] = 0;
        for (r = 0; r < count; r += inner) {
            int64_t off = base, j;
            float part = 0.0f;
            for (d = 0; d < p->red_n - 1; ++d) off += idx[d] * p->red_strides[d];
            for (j = 0; j < inner; ++j) part += x[off + j * is];
            sum += part;
            for (d = p->red_n - 2; d >= 0; --d) {
                if (++idx[d] < p->red_dims[d]) break;
                idx[d] = 0;
            }
        }
        y[item] = count ? (float)(sum / (double)count) : 0.0f;
    }
    return OPARA_OK;
}

static opara_result opara__prepare_reduce_mean(opara__cpu_op* op, char* err, size_t cap) {
    const opara__cpu_tensor *x = &op->in[0], *y = &op->out[0];
    opara__cpu_params* p = &op->p;
    uint32_t na = 0, i;
    const int64_t* axes = opara__attr_ints(op->node, "axes", &na);
    int keep = opara__attr_int(op->node, "keepdims", 1) != 0, reduce[OPARA_MAX_DIMS];
    int64_t str[OPARA_MAX_DIMS];
    int32_t d, yd = 0;
    if (x->dtype != OPARA_DTYPE_F32) return opara__cpu_reject(err, cap, OPARA_ERR_BAD_DTYPE, "ReduceMean: f32 only");
    for (d = 0; d < x->ndim; ++d) reduce[d] = (!axes || na == 0) && !opara__attr_int(op->node, "noop_with_empty_axes", 0);
    for (i = 0; axes && i < na; ++i) {
        int64_t a;
        if (!opara__cpu_norm_axis(axes[i], x->ndim, &a)) return opara__cpu_reject(err, cap, OPARA_ERR_BAD_INDEX, "ReduceMean: axis");
        reduce[a] = 1;
    }
    opara__natural_strides(x, str);
    p->kept_n = p->red_n = 0;
    for (d = 0; d < x->ndim; ++d) {
        if (reduce[d]) {
            p->red_dims[p->red_n] = x->dims[d];
            p->red_strides[p->red_n++] = str[d];
            if (keep && (yd >= y->ndim || y->dims[yd++] != 1)) break;
        } else {
            p->kept_dims[p->kept_n] = x->dims[d];
            p->kept_strides[p->kept_n++] = str[d];
            if (yd >= y->ndim || y->dims[yd++] != x->dims[d]) break;
        }
    }
    if (d != x->ndim || yd != y->ndim || y->dtype != OPARA_DTYPE_F32)
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "ReduceMean: output shape does not match axes/keepdims");
    op->work_items = opara__cpu_numel(y);
    op->min_items_per_task = 64;
    op->fn = opara__reduce_mean_kernel;
    return OPARA_OK;
}

/* ---- Pad -------------------------------------------------------------------------------------- */

enum { OPARA__PAD_CONSTANT, OPARA__PAD_REFLECT, OPARA__PAD_EDGE };

/* Source index for output index o of a dim of size n padded by `before`; -1 for the constant. */
static int64_t opara__pad_src(int mode, int64_t o, int64_t before, int64_t n) {
    int64_t s = o - before;
    if (s >= 0 && s < n) return s;
    if (mode == OPARA__PAD_CONSTANT || n == 0) return -1;
    if (mode == OPARA__PAD_EDGE) return s < 0 ? 0 : n - 1;
    if (n == 1) return 0;
    {
        int64_t period = 2 * (n - 1);
        s %= period;
        if (s < 0) s += period;
        return s >= n ? period - s : s;
    }
}

static opara_result opara__pad_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    const opara__cpu_params* p = &op->p;
    const opara__cpu_tensor *x = &op->in[0], *y = &op->out[0];
    int32_t nd = y->ndim, d;
    size_t e = p->elem, W = nd ? (size_t)y->dims[nd - 1] : 1, row, j;
    int64_t xw = nd ? x->dims[nd - 1] : 1, before = nd ? p->start[nd - 1] : 0;
    (void)scratch;
    for (row = begin; row < end; ++row) {
        uint8_t* dst = (uint8_t*)y->data + row * W * e;
        size_t rem = row;
        int64_t off = 0;
        int constant_row = 0;
        for (d = nd - 2; d >= 0; --d) {
            int64_t o = (int64_t)(rem % (size_t)y->dims[d]), s;
            rem /= (size_t)y->dims[d];
            s = opara__pad_src(p->mode, o, p->start[d], x->dims[d]);
            if (s < 0) constant_row = 1;
            else off += s * p->src_stride[d];
        }
        for (j = 0; j < W; ++j) {
            int64_t s = constant_row ? -1 : opara__pad_src(p->mode, (int64_t)j, before, xw);
            if (s == 0 && before >= 0 && j == (size_t)before && (int64_t)W - before >= xw) { /* the unpadded run */
                memcpy(dst + j * e, (const uint8_t*)x->data + (size_t)off * e, (size_t)xw * e);
                j += (size_t)xw - 1;
            } else if (s < 0) {
                memcpy(dst + j * e, p->fill, e);
            } else {
                memcpy(dst + j * e, (const uint8_t*)x->data + (size_t)(off + s) * e, e);
            }
        }
    }
    return OPARA_OK;
}

static opara_result opara__prepare_pad(opara__cpu_op* op, char* err, size_t cap) {
    const opara__cpu_tensor *x = &op->in[0], *y = &op->out[0];
    opara__cpu_params* p = &op->p;
    uint32_t np = 0, na = 0, i;
    const int64_t* pads = opara__attr_ints(op->node, "pads", &np);
    const int64_t* axes = opara__attr_ints(op->node, "axes", &na);
    const char* mode = opara__attr_string(op->node, "mode", "constant");
    int64_t before[OPARA_MAX_DIMS], after[OPARA_MAX_DIMS];
    uint32_t n_ax = axes ? na : (uint32_t)x->ndim;
    float value = opara__attr_float(op->node, "value", opara__attr_float(op->node, "constant_value", 0.0f));
    int32_t d;
    if (x->ndim != y->ndim || x->dtype != y->dtype || !opara__cast_type_ok(x->dtype) || !pads || np != 2 * n_ax)
        return opara__cpu_reject(err, cap, OPARA_ERR_INVALID_ARGS, "Pad: pads/axes do not match the input rank or type");
    p->mode = strcmp(mode, "constant") == 0 ? OPARA__PAD_CONSTANT
              : strcmp(mode, "reflect") == 0 ? OPARA__PAD_REFLECT
              : strcmp(mode, "edge") == 0   ? OPARA__PAD_EDGE
                                            : -1;
    if (p->mode < 0) return opara__cpu_reject(err, cap, OPARA_ERR_UNSUPPORTED, "Pad: mode '%s'", mode);
    for (d = 0; d < x->ndim; ++d) before[d] = after[d] = 0;
    for (i = 0; i < n_ax; ++i) {
        int64_t a = (int64_t)i;
        if (axes && !opara__cpu_norm_axis(axes[i], x->ndim, &a))
            return opara__cpu_reject(err, cap, OPARA_ERR_BAD_INDEX, "Pad: axis out of range");
        before[a] = pads[i];
        after[a] = pads[i + n_ax];
    }
    opara__natural_strides(x, p->src_stride);
    for (d = 0; d < x->ndim; ++d) {
        if (x->dims[d] + before[d] + after[d] != y->dims[d])
            return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "Pad: output dim %d is wrong", (int)d);
        if (p->mode != OPARA__PAD_CONSTANT && x->dims[d] == 0 && y->dims[d] > 0)
            return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "Pad: cannot %s-pad an empty dim", mode);
        p->start[d] = before[d];
    }
    p->elem = opara_dtype_size(y->dtype);
    memset(p->fill, 0, sizeof p->fill);
    if (y->dtype == OPARA_DTYPE_F32) memcpy(p->fill, &value, 4);
    else if (y->dtype == OPARA_DTYPE_F64) {
        double v = value;
        memcpy(p->fill, &v, 8);
    } else {
        opara__store_i(p->fill, y->dtype, 0, opara__f_to_i(value));
    }
    op->work_items = y->ndim && y->dims[y->ndim - 1] ? opara__cpu_numel(y) / (size_t)y->dims[y->ndim - 1] : (opara__cpu_numel(y) ? 1 : 0);
    op->min_items_per_task = 16;
    op->fn = opara__pad_kernel;
    return OPARA_OK;
}

/* ---- Resize ----------------------------------------------------------------------------------- */

enum { OPARA__RESIZE_NEAREST, OPARA__RESIZE_LINEAR };
enum {
    OPARA__CT_HALF_PIXEL, OPARA__CT_PYTORCH_HALF_PIXEL, OPARA__CT_ALIGN_CORNERS, OPARA__CT_ASYMMETRIC,
    OPARA__CT_TF_HALF_PIXEL_NN, OPARA__CT_TF_CROP, OPARA__CT_HALF_PIXEL_SYMMETRIC
};
enum { OPARA__NM_ROUND_PREFER_FLOOR, OPARA__NM_ROUND_PREFER_CEIL, OPARA__NM_FLOOR, OPARA__NM_CEIL };

/* Input coordinate of output index x along dim d (ONNX coordinate_transformation_mode). */
static double opara__resize_coord(const opara__cpu_params* p, int32_t d, int64_t x, int64_t in, int64_t out) {
    double s = p->scale[d];
    switch (p->coord_mode) {
    case OPARA__CT_PYTORCH_HALF_PIXEL: return out > 1 ? ((double)x + 0.5) / s - 0.5 : 0.0;
    case OPARA__CT_ALIGN_CORNERS: return out > 1 ? (double)x * (double)(in - 1) / (double)(out - 1) : 0.0;
    case OPARA__CT_ASYMMETRIC: return (double)x / s;
    case OPARA__CT_TF_HALF_PIXEL_NN: return ((double)x + 0.5) / s;
    case OPARA__CT_TF_CROP:
        return out > 1 ? p->roi_lo[d] * (double)(in - 1) + (double)x * (p->roi_hi[d] - p->roi_lo[d]) * (double)(in - 1) / (double)(out - 1)
                       : 0.5 * (p->roi_lo[d] + p->roi_hi[d]) * (double)(in - 1);
    case OPARA__CT_HALF_PIXEL_SYMMETRIC: {
        double adj = (double)out / (s * (double)in), center = (double)in / 2.0;
        return center * (1.0 - adj) + ((double)x + 0.5) / s - 0.5;
    }
    default: return ((double)x + 0.5) / s - 0.5;
    }
}

/* Nearest source index, or -1 when tf_crop_and_resize extrapolates. */
static int64_t opara__resize_nearest(const opara__cpu_params* p, int32_t d, int64_t x, int64_t in, int64_t out) {
    double c, f;
    int64_t i;
    c = opara__resize_coord(p, d, x, in, out);
    f = floor(c);
    if (p->coord_mode == OPARA__CT_TF_CROP && (c < 0.0 || c > (double)(in - 1))) return -1;
    switch (p->nearest_mode) {
    case OPARA__NM_ROUND_PREFER_CEIL: i = (int64_t)(c - f >= 0.5 ? f + 1.0 : f); break;
    case OPARA__NM_FLOOR: i = (int64_t)f; break;
    case OPARA__NM_CEIL: i = (int64_t)ceil(c); break;
    default: i = (int64_t)(c - f > 0.5 ? f + 1.0 : f); break;
    }
    return i < 0 ? 0 : (i > in - 1 ? in - 1 : i);
}

static opara_result opara__resize_nearest_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    const opara__cpu_params* p = &op->p;
    const opara__cpu_tensor *x = &op->in[0], *y = &op->out[0];
    int32_t nd = y->ndim, d;
    size_t e = p->elem, W = (size_t)y->dims[nd - 1], row, j;
    (void)scratch;
    for (row = begin; row < end; ++row) {
        uint8_t* dst = (uint8_t*)y->data + row * W * e;
        size_t rem = row;
        int64_t off = 0;
        int outside = 0;
        for (d = nd - 2; d >= 0; --d) {
            int64_t o = (int64_t)(rem % (size_t)y->dims[d]), s;
            rem /= (size_t)y->dims[d];
            s = opara__resize_nearest(p, d, o, x->dims[d], y->dims[d]);
            if (s < 0) outside = 1;
            else off += s * p->src_stride[d];
        }
        for (j = 0; j < W; ++j) {
            int64_t s = outside ? -1 : opara__resize_nearest(p, nd - 1, (int64_t)j, x->dims[nd - 1], (int64_t)W);
            if (s < 0) memcpy(dst + j * e, p->fill, e);
            else memcpy(dst + j * e, (const uint8_t*)x->data + (size_t)(off + s) * e, e);
        }
    }
    return OPARA_OK;
}

/* Linear taps of one output index: i0, i1 and the weight of i1; 0 if extrapolated. */
static int opara__resize_taps(const opara__cpu_params* p, int32_t d, int64_t x, int64_t in, int64_t out, int64_t* i0,
                              int64_t* i1, float* w) {
    double c = opara__resize_coord(p, d, x, in, out), f;
    if (p->coord_mode == OPARA__CT_TF_CROP && (c < 0.0 || c > (double)(in - 1))) return 0;
    if (c < 0.0) c = 0.0;
    if (c > (double)(in - 1)) c = (double)(in - 1);
    f = floor(c);
    *i0 = (int64_t)f;
    *i1 = *i0 + 1 < in ? *i0 + 1 : in - 1;
    *w = (float)(c - f);
    return 1;
}

/* Bilinear over the last two dims (the others are not resized). */
static opara_result opara__resize_linear_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    const opara__cpu_params* p = &op->p;
    const opara__cpu_tensor *x = &op->in[0], *y = &op->out[0];
    int32_t nd = y->ndim;
    int64_t H = x->dims[nd - 2], Wi = x->dims[nd - 1], OH = y->dims[nd - 2], OW = y->dims[nd - 1];
    size_t row, j;
    float fill;
    memcpy(&fill, p->fill, 4);
    (void)scratch;
    for (row = begin; row < end; ++row) {
        size_t plane = row / (size_t)OH;
        int64_t oh = (int64_t)(row % (size_t)OH), h0 = 0, h1 = 0;
        float wh = 0.0f;
        const float* src = (const float*)x->data + plane * (size_t)(H * Wi);
        float* dst = (float*)y->data + row * (size_t)OW;
        int row_ok = opara__resize_taps(p, nd - 2, oh, H, OH, &h0, &h1, &wh);
        for (j = 0; j < (size_t)OW; ++j) {
            int64_t w0 = 0, w1 = 0;
            float ww = 0.0f, top, bot;
            if (!row_ok || !opara__resize_taps(p, nd - 1, (int64_t)j, Wi, OW, &w0, &w1, &ww)) {
                dst[j] = fill;
                continue;
            }
            top = src[h0 * Wi + w0] * (1.0f - ww) + src[h0 * Wi + w1] * ww;
            bot = src[h1 * Wi + w0] * (1.0f - ww) + src[h1 * Wi + w1] * ww;
            dst[j] = top * (1.0f - wh) + bot * wh;
        }
    }
    return OPARA_OK;
}

static int opara__resize_enum(const char* s, const char* const* names, int count) {
    int i;
    for (i = 0; i < count; ++i)
        if (strcmp(s, names[i]) == 0) return i;
    return -1;
}

static opara_result opara__prepare_resize(opara__cpu_op* op, char* err, size_t cap) {
    static const char* const ct_names[] = {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                                           "tf_half_pixel_for_nearest", "tf_crop_and_resize", "half_pixel_symmetric"};
    static const char* const nm_names[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
    const opara__cpu_tensor *x = &op->in[0], *y = &op->out[0];
    opara__cpu_params* p = &op->p;
    const opara__node* n = op->node;
    const char* mode = opara__attr_string(n, "mode", "nearest");
    uint32_t ns = 0, nz = 0, na = 0, nr = 0, i;
    const float* scales = NULL;
    const int64_t* axes = opara__attr_ints(n, "axes", &na);
    const opara__attr* sa = opara__node_attr(n, "scales");
    const opara__attr* ra = opara__node_attr(n, "roi");
    float extrap = opara__attr_float(n, "extrapolation_value", 0.0f);
    int32_t d;
    (void)opara__attr_ints(n, "sizes", &nz);
    if (sa && sa->type == OPARA__ATTR_FLOATS && sa->count > 0) {
        scales = sa->v.floats;
        ns = sa->count;
    }
    if (x->ndim != y->ndim || x->ndim < 1 || x->dtype != y->dtype)
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "Resize: input and output ranks or types differ");
    if (opara__attr_int(n, "antialias", 0))
        return opara__cpu_reject(err, cap, OPARA_ERR_UNSUPPORTED, "Resize: antialias is not supported");
    p->coord_mode = opara__resize_enum(opara__attr_string(n, "coordinate_transformation_mode", "half_pixel"), ct_names, 7);
    p->nearest_mode = opara__resize_enum(opara__attr_string(n, "nearest_mode", "round_prefer_floor"), nm_names, 4);
    if (p->coord_mode < 0 || p->nearest_mode < 0)
        return opara__cpu_reject(err, cap, OPARA_ERR_UNSUPPORTED, "Resize: unknown coordinate or nearest mode");
    for (d = 0; d < x->ndim; ++d) {
        p->scale[d] = x->dims[d] ? (float)((double)y->dims[d] / (double)x->dims[d]) : 1.0f;
        p->roi_lo[d] = 0.0f;
        p->roi_hi[d] = 1.0f;
    }
    if (scales) {
        if (ns != (axes ? na : (uint32_t)x->ndim))
            return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "Resize: %u scales for rank %d", ns, (int)x->ndim);
        for (i = 0; i < ns; ++i) {
            int64_t a = (int64_t)i;
            if (axes && !opara__cpu_norm_axis(axes[i], x->ndim, &a))
                return opara__cpu_reject(err, cap, OPARA_ERR_BAD_INDEX, "Resize: axis out of range");
            if (!(scales[i] > 0.0f)) return opara__cpu_reject(err, cap, OPARA_ERR_INVALID_ARGS, "Resize: scale <= 0");
            p->scale[a] = scales[i];
        }
    }
    if (ra && ra->type == OPARA__ATTR_FLOATS && ra->count > 0) {
        nr = axes ? na : (uint32_t)x->ndim;
        if (ra->count != 2 * nr) return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "Resize: roi size");
        for (i = 0; i < nr; ++i) {
            int64_t a = (int64_t)i;
            if (axes && !opara__cpu_norm_axis(axes[i], x->ndim, &a))
                return opara__cpu_reject(err, cap, OPARA_ERR_BAD_INDEX, "Resize: axis out of range");
            p->roi_lo[a] = ra->v.floats[i];
            p->roi_hi[a] = ra->v.floats[i + nr];
        }
    }
    for (d = 0; d < x->ndim; ++d)
        if (x->dims[d] == 0 && y->dims[d] > 0) return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "Resize: empty input");
    opara__natural_strides(x, p->src_stride);
    p->elem = opara_dtype_size(y->dtype);
    memset(p->fill, 0, sizeof p->fill);
    if (y->dtype == OPARA_DTYPE_F32) memcpy(p->fill, &extrap, 4);
    op->work_items = y->dims[y->ndim - 1] ? opara__cpu_numel(y) / (size_t)y->dims[y->ndim - 1] : 0;
    op->min_items_per_task = 8;
    if (strcmp(mode, "nearest") == 0) {
        p->mode = OPARA__RESIZE_NEAREST;
        op->fn = opara__resize_nearest_kernel;
        return OPARA_OK;
    }
    if (strcmp(mode, "linear") != 0)
        return opara__cpu_reject(err, cap, OPARA_ERR_UNSUPPORTED, "Resize: mode '%s' is not supported", mode);
    if (y->dtype != OPARA_DTYPE_F32 || x->ndim < 2)
        return opara__cpu_reject(err, cap, OPARA_ERR_UNSUPPORTED, "Resize: linear needs f32 of rank >= 2");
    for (d = 0; d < x->ndim - 2; ++d)
        if (x->dims[d] != y->dims[d])
            return opara__cpu_reject(err, cap, OPARA_ERR_UNSUPPORTED, "Resize: linear only over the last two dims");
    p->mode = OPARA__RESIZE_LINEAR;
    op->fn = opara__resize_linear_kernel;
    return OPARA_OK;
}

/* ---- dispatch --------------------------------------------------------------------------------- */

/* Minimum inputs/outputs per operator (0 = checked by the operator itself). */
static void opara__io_minimum(opara__op kind, uint32_t* n_in, uint32_t* n_out) {
    *n_in = 1;
    *n_out = 1;
    switch (kind) {
    case OPARA__OP_CONV: case OPARA__OP_CONV_TRANSPOSE: case OPARA__OP_ADD: case OPARA__OP_SUB: case OPARA__OP_MUL:
    case OPARA__OP_DIV: case OPARA__OP_POW: case OPARA__OP_GATHER: case OPARA__OP_GEMM: case OPARA__OP_MATMUL:
    case OPARA__OP_LAYER_NORM:
        *n_in = 2;
        break;
    case OPARA__OP_WHERE: *n_in = 3; break;
    case OPARA__OP_BATCH_NORM: *n_in = 5; break;
    default: break;
    }
}

static int opara__needs_f32(opara__op kind) {
    switch (kind) {
    case OPARA__OP_CONV: case OPARA__OP_CONV_TRANSPOSE: case OPARA__OP_MAX_POOL: case OPARA__OP_AVERAGE_POOL:
    case OPARA__OP_GLOBAL_AVERAGE_POOL: case OPARA__OP_BATCH_NORM: case OPARA__OP_RELU: case OPARA__OP_LEAKY_RELU:
    case OPARA__OP_SIGMOID: case OPARA__OP_TANH: case OPARA__OP_HARD_SIGMOID: case OPARA__OP_HARD_SWISH:
    case OPARA__OP_CLIP: case OPARA__OP_SQRT: case OPARA__OP_ERF: case OPARA__OP_GELU: case OPARA__OP_GEMM:
    case OPARA__OP_MATMUL: case OPARA__OP_SOFTMAX: case OPARA__OP_LAYER_NORM: case OPARA__OP_REDUCE_MEAN:
        return 1;
    default: return 0;
    }
}

static opara_result opara__prepare_dispatch(opara__cpu_op* op, char* err, size_t cap) {
    switch (op->node->op) {
    case OPARA__OP_CONV: return opara__cpu_prepare_conv(op, err, cap);
    case OPARA__OP_CONV_TRANSPOSE: return opara__cpu_prepare_conv_transpose(op, err, cap);
    case OPARA__OP_MAX_POOL: case OPARA__OP_AVERAGE_POOL: return opara__cpu_prepare_pool(op, err, cap);
    case OPARA__OP_GLOBAL_AVERAGE_POOL: return opara__prepare_global_avg(op, err, cap);
    case OPARA__OP_BATCH_NORM: return opara__prepare_batch_norm(op, err, cap);
    case OPARA__OP_RELU: case OPARA__OP_LEAKY_RELU: case OPARA__OP_SIGMOID: case OPARA__OP_TANH:
    case OPARA__OP_HARD_SIGMOID: case OPARA__OP_HARD_SWISH: case OPARA__OP_CLIP: case OPARA__OP_SQRT:
    case OPARA__OP_ERF: case OPARA__OP_GELU:
        return opara__prepare_unary(op, err, cap);
    case OPARA__OP_ADD: case OPARA__OP_SUB: case OPARA__OP_MUL: case OPARA__OP_DIV: case OPARA__OP_POW:
        return opara__prepare_binary(op, err, cap);
    case OPARA__OP_CONCAT: case OPARA__OP_SPLIT: return opara__prepare_concat_split(op, err, cap);
    case OPARA__OP_SLICE: return opara__prepare_slice(op, err, cap);
    case OPARA__OP_GATHER: return opara__prepare_gather(op, err, cap);
    case OPARA__OP_RESHAPE: case OPARA__OP_FLATTEN: case OPARA__OP_SQUEEZE: case OPARA__OP_UNSQUEEZE:
        return opara__prepare_reshape(op, err, cap);
    case OPARA__OP_TRANSPOSE: return opara__prepare_transpose(op, err, cap);
    case OPARA__OP_EXPAND: return opara__prepare_expand(op, err, cap);
    case OPARA__OP_GEMM: return opara__cpu_prepare_gemm(op, err, cap);
    case OPARA__OP_MATMUL: return opara__cpu_prepare_matmul(op, err, cap);
    case OPARA__OP_SOFTMAX: return opara__prepare_softmax(op, err, cap);
    case OPARA__OP_LAYER_NORM: return opara__prepare_layer_norm(op, err, cap);
    case OPARA__OP_REDUCE_MEAN: return opara__prepare_reduce_mean(op, err, cap);
    case OPARA__OP_WHERE: return opara__prepare_where(op, err, cap);
    case OPARA__OP_CAST: return opara__prepare_cast(op, err, cap);
    case OPARA__OP_PAD: return opara__prepare_pad(op, err, cap);
    case OPARA__OP_RESIZE: return opara__prepare_resize(op, err, cap);
    default: break;
    }
    return opara__cpu_reject(err, cap, OPARA_ERR_UNSUPPORTED_OP, "operator %s has no CPU kernel",
                             opara__op_name(op->node->op));
}

OPARA__PRIVATE opara_result opara__cpu_prepare(opara__cpu_op* op, char* err, size_t err_cap) {
    uint32_t min_in, min_out, k;
    opara__op kind = op->node->op;
    opara_result r;
    op->fn = NULL;
    op->work_items = 0;
    op->scratch_floats = 0;
    op->min_items_per_task = 1;
    memset(&op->p, 0, sizeof op->p);
    opara__io_minimum(kind, &min_in, &min_out);
    if (op->n_in < min_in || op->n_out < min_out)
        return opara__cpu_reject(err, err_cap, OPARA_ERR_INVALID_ARGS, "%s needs %u inputs and %u outputs",
                                 opara__op_name(kind), min_in, min_out);
    for (k = 0; k < min_in; ++k)
        if (!op->in[k].data)
            return opara__cpu_reject(err, err_cap, OPARA_ERR_INVALID_ARGS, "%s: input %u is missing", opara__op_name(kind), k);
    if (!op->out[0].data && opara__cpu_numel(&op->out[0]) > 0)
        return opara__cpu_reject(err, err_cap, OPARA_ERR_INVALID_ARGS, "%s: output 0 has no buffer", opara__op_name(kind));
    if (opara__needs_f32(kind) && (op->in[0].dtype != OPARA_DTYPE_F32 || op->out[0].dtype != OPARA_DTYPE_F32))
        return opara__cpu_reject(err, err_cap, OPARA_ERR_BAD_DTYPE, "%s: only f32 is supported", opara__op_name(kind));
    r = opara__prepare_dispatch(op, err, err_cap);
    for (k = 0; k < op->n_out; ++k)
        if (opara__cpu_numel(&op->out[k]) > 0) return r;
    op->work_items = 0; /* every output is empty */
    return r;
}

OPARA__PRIVATE opara_result opara__cpu_run_all(const opara__cpu_op* op, float* scratch) {
    if (!op->work_items) return OPARA_OK;
    return op->fn(op, 0, op->work_items, scratch);
}
/* ==== END src/opara_cpu_kernels.c ==== */
/* ==== BEGIN src/opara_cpu_conv.c ==== */
/* Conv (depthwise direct, 1x1 as a direct GEMM, else im2col + SGEMM), ConvTranspose (GEMM +
   col2im) and MaxPool/AveragePool. Spatial dims (1 to 3) are normalized to 3 with leading dims
   of size 1, so one code path serves 1-D, 2-D and 3-D. */
/* #include "opara_cpu.h" (inlined above) */

#include <math.h>

#define OPARA__IM2COL_BUDGET ((size_t)1 << 19) /* floats of col2im scratch per worker (2 MB) */
/* Conv lowers to GEMMs over K slices of the im2col matrix, each slice a few hundred KB so it
   stays in L2 between being written and being read by the GEMM. */
#define OPARA__CONV_K_SLICE 256
#define OPARA__CONV_SLICE_FLOATS ((int64_t)1 << 17)
#define OPARA__CONV_MIN_ITEMS 4 /* work items a single image should give, to share between workers */

/* ---- geometry ---------------------------------------------------------------------------------- */

typedef enum opara__geom_kind { OPARA__GEOM_CONV, OPARA__GEOM_POOL, OPARA__GEOM_CONV_T } opara__geom_kind;

/* Reads kernel/strides/dilations/pads/auto_pad into p (normalized to 3 dims) for an input with
   spatial dims x->dims[2..]; kernel from `kernel` when given (the weights), else the attribute. */
static opara_result opara__conv_geometry(opara__cpu_op* op, const opara__cpu_tensor* x, const int64_t* kernel,
                                         char* err, size_t cap) {
    opara__cpu_params* p = &op->p;
    const opara__node* n = op->node;
    int32_t nsp = x->ndim - 2, off, i;
    uint32_t nk = 0, ns = 0, nd = 0, np = 0;
    const int64_t* ks = opara__attr_ints(n, "kernel_shape", &nk);
    const int64_t* st = opara__attr_ints(n, "strides", &ns);
    const int64_t* dl = opara__attr_ints(n, "dilations", &nd);
    const int64_t* pd = opara__attr_ints(n, "pads", &np);
    const char* name = opara__op_name(n->op);
    if (nsp < 1 || nsp > 3) return opara__cpu_reject(err, cap, OPARA_ERR_UNSUPPORTED, "%s: %d spatial dims", name, (int)nsp);
    if ((ks && nk != (uint32_t)nsp) || (st && ns != (uint32_t)nsp) || (dl && nd != (uint32_t)nsp) ||
        (pd && np != 2 * (uint32_t)nsp))
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "%s: attribute lengths do not match %d spatial dims", name,
                                 (int)nsp);
    if (!kernel && !ks) return opara__cpu_reject(err, cap, OPARA_ERR_INVALID_ARGS, "%s needs kernel_shape", name);
    off = 3 - nsp;
    for (i = 0; i < 3; ++i) {
        int32_t j = i - off;
        p->in_sp[i] = j >= 0 ? x->dims[2 + j] : 1;
        p->kernel[i] = j < 0 ? 1 : (kernel ? kernel[j] : ks[j]);
        p->stride[i] = j >= 0 && st ? st[j] : 1;
        p->dil[i] = j >= 0 && dl ? dl[j] : 1;
        p->pad_b[i] = j >= 0 && pd ? pd[j] : 0;
        p->pad_e[i] = j >= 0 && pd ? pd[j + nsp] : 0;
        if (kernel && ks && j >= 0 && ks[j] != kernel[j])
            return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "%s: kernel_shape disagrees with the weights", name);
        if (p->kernel[i] < 1 || p->stride[i] < 1 || p->dil[i] < 1 || p->pad_b[i] < 0 || p->pad_e[i] < 0)
            return opara__cpu_reject(err, cap, OPARA_ERR_INVALID_ARGS, "%s: kernel, strides, dilations must be >= 1, pads >= 0",
                                     name);
    }
    return OPARA_OK;
}

/* Output size of one dim for Conv/pools, after resolving auto_pad into pads. */
static int64_t opara__conv_out_dim(opara__cpu_params* p, int i, const char* auto_pad, int ceil_mode) {
    int64_t eff = p->dil[i] * (p->kernel[i] - 1) + 1, in = p->in_sp[i], span;
    if (strcmp(auto_pad, "SAME_UPPER") == 0 || strcmp(auto_pad, "SAME_LOWER") == 0) {
        int64_t out = (in + p->stride[i] - 1) / p->stride[i];
        int64_t total = (out - 1) * p->stride[i] + eff - in;
        if (total < 0) total = 0;
        p->pad_b[i] = auto_pad[5] == 'U' ? total / 2 : total - total / 2;
        p->pad_e[i] = total - p->pad_b[i];
        return out;
    }
    if (strcmp(auto_pad, "VALID") == 0) p->pad_b[i] = p->pad_e[i] = 0;
    span = in + p->pad_b[i] + p->pad_e[i] - eff;
    if (span < 0) return 0;
    return (ceil_mode ? (span + p->stride[i] - 1) / p->stride[i] : span / p->stride[i]) + 1;
}

/* Checks y's spatial dims; pools in ceil mode also accept one less (the window that would start
   in the end padding is dropped, as PyTorch and ONNX's reference do). */
static opara_result opara__conv_check_out(opara__cpu_op* op, const opara__cpu_tensor* y, int ceil_mode, char* err,
                                          size_t cap) {
    opara__cpu_params* p = &op->p;
    const char* auto_pad = opara__attr_string(op->node, "auto_pad", "NOTSET");
    int32_t nsp = y->ndim - 2, off = 3 - nsp, i;
    for (i = 0; i < 3; ++i) {
        int64_t want = opara__conv_out_dim(p, i, auto_pad, ceil_mode);
        int64_t got = i >= off ? y->dims[2 + i - off] : 1;
        if (got != want && !(ceil_mode && got == want - 1 && got >= 1))
            return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "%s: output spatial dim %d is %lld, expected %lld",
                                     opara__op_name(op->node->op), (int)(i - off), (long long)got, (long long)want);
        p->out_sp[i] = got;
    }
    return OPARA_OK;
}

static int64_t opara__prod3(const int64_t* v) { return v[0] * v[1] * v[2]; }

/* ---- Conv ------------------------------------------------------------------------------------- */

/* First t in [0, len) with 0 <= base + t*s, and one past the last with base + t*s < limit. */
static void opara__valid_range(int64_t base, int64_t s, int64_t len, int64_t limit, int64_t* lo, int64_t* hi) {
    int64_t a = base >= 0 ? 0 : (-base + s - 1) / s;
    int64_t b = base >= limit ? 0 : (limit - 1 - base) / s + 1;
    if (b > len) b = len;
    if (a > b) a = b;
    *lo = a;
    *hi = b;
}

/* First and one-past-last output index o in [0, out) whose window [o*s - pad, o*s - pad + span)
   lies inside [0, in): the interior, where no tap needs clipping. */
static void opara__pool_interior(int64_t out, int64_t s, int64_t pad, int64_t span, int64_t in, int64_t* lo,
                                 int64_t* hi) {
    int64_t a = (pad + s - 1) / s, b = in - span + pad >= 0 ? (in - span + pad) / s + 1 : 0;
    if (b > out) b = out;
    if (a > b) a = b;
    *lo = a;
    *hi = b;
}

/* Copies len input elements starting at row[base] with stride s into dst, zero where the index
   falls outside [0, limit). */
static void opara__im2col_run(const float* row, int64_t base, int64_t s, int64_t len, int64_t limit, float* dst) {
    int64_t lo, hi, t;
    if (s == 1) {
        lo = base >= 0 ? 0 : -base;
        hi = limit - base;
        if (hi > len) hi = len;
        if (lo > hi) lo = hi < 0 ? 0 : hi;
        if (hi < lo) hi = lo;
    } else {
        opara__valid_range(base, s, len, limit, &lo, &hi);
    }
    for (t = 0; t < lo; ++t) dst[t] = 0.0f;
    if (s == 1)
        memcpy(dst + lo, row + base + lo, (size_t)(hi - lo) * sizeof(float));
    else
        for (t = lo; t < hi; ++t) dst[t] = row[base + t * s];
    for (t = hi; t < len; ++t) dst[t] = 0.0f;
}

/* Writes im2col rows [r0, r1) for output columns [p0, p1) of image x into col (row stride
   p1 - p0). */
static void opara__im2col(const opara__cpu_params* p, const float* x, int64_t r0, int64_t r1, int64_t p0, int64_t p1,
                          float* col) {
    int64_t K3 = opara__prod3(p->kernel), ohw = p->out_sp[1] * p->out_sp[2], ow = p->out_sp[2], oh = p->out_sp[1];
    int64_t ihw = p->in_sp[1] * p->in_sp[2], cb = p1 - p0, r;
    int64_t z0 = p0 / ohw, y0 = (p0 % ohw) / ow, x0 = p0 % ow;
    for (r = r0; r < r1; ++r) {
        int64_t c = r / K3, kk = r % K3, ka = kk / (p->kernel[1] * p->kernel[2]);
        int64_t kb = (kk / p->kernel[2]) % p->kernel[1], kc = kk % p->kernel[2], pp = p0;
        int64_t z = z0, yy = y0, xx = x0;
        const float* xc = x + c * p->in_sp[0] * ihw;
        float* dst = col + (r - r0) * cb;
        while (pp < p1) {
            int64_t len = OPARA__MIN(ow - xx, p1 - pp), t;
            int64_t iz = z * p->stride[0] - p->pad_b[0] + ka * p->dil[0];
            int64_t iy = yy * p->stride[1] - p->pad_b[1] + kb * p->dil[1];
            int64_t base = xx * p->stride[2] - p->pad_b[2] + kc * p->dil[2];
            if (iz >= 0 && iz < p->in_sp[0] && iy >= 0 && iy < p->in_sp[1])
                opara__im2col_run(xc + (iz * p->in_sp[1] + iy) * p->in_sp[2], base, p->stride[2], len, p->in_sp[2], dst);
            else
                for (t = 0; t < len; ++t) dst[t] = 0.0f;
            dst += len;
            pp += len;
            xx = 0;
            if (++yy == oh) {
                yy = 0;
                ++z;
            }
        }
    }
}

static void opara__bias_relu_rows(float* y, size_t rows, size_t cols, size_t ld, const float* bias, int relu, int init) {
    size_t i;
    for (i = 0; i < rows; ++i) {
        if (init) opara__vec_fill(y + i * ld, cols, bias ? bias[i] : 0.0f);
        else if (relu) opara__vec_relu(y + i * ld, y + i * ld, cols);
    }
}

/* Work item = (image and group, block of output channels, block of output columns). The
   output block starts as the bias, then takes one GEMM per K slice (pointwise: one GEMM straight
   from the input), then the ReLU. */
static opara_result opara__conv_gemm_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    const opara__cpu_params* p = &op->p;
    int64_t cin_g = p->cin / p->group, cout_g = p->cout / p->group, K = cin_g * opara__prod3(p->kernel);
    int64_t P = opara__prod3(p->out_sp), Pin = opara__prod3(p->in_sp);
    const float* bias = op->n_in > 2 ? (const float*)op->in[2].data : NULL;
    float* col = scratch;
    float* gemm_scratch = scratch + (p->pointwise ? 0 : (size_t)(p->k * p->col_block));
    size_t item;
    for (item = begin; item < end; ++item) {
        int64_t blk = (int64_t)item % p->n_col_blocks, rest = (int64_t)item / p->n_col_blocks;
        int64_t mblk = rest % p->m_blocks, ng = rest / p->m_blocks, n = ng / p->group, g = ng % p->group;
        int64_t p0 = blk * p->col_block, p1 = OPARA__MIN(P, p0 + p->col_block);
        int64_t m0 = mblk * p->m, mm = OPARA__MIN(p->m, cout_g - m0), pc;
        const float* x = (const float*)op->in[0].data + (n * p->cin + g * cin_g) * Pin;
        const float* w = (const float*)op->in[1].data + (g * cout_g + m0) * K;
        float* y = (float*)op->out[0].data + (n * p->cout + g * cout_g + m0) * P + p0;
        size_t nb = (size_t)(p1 - p0);
        if (mm <= 0) continue;
        if (bias) opara__bias_relu_rows(y, (size_t)mm, nb, (size_t)P, bias + g * cout_g + m0, 0, 1);
        if (p->pointwise) {
            opara__sgemm(op->blas, 0, 0, (size_t)mm, nb, (size_t)K, 1.0f, w, (size_t)K, x + p0, (size_t)P,
                         bias ? 1.0f : 0.0f, y, (size_t)P, gemm_scratch);
        } else {
            for (pc = 0; pc < K; pc += p->k) {
                int64_t kc = OPARA__MIN(p->k, K - pc);
                opara__im2col(p, x, pc, pc + kc, p0, p1, col);
                opara__sgemm(op->blas, 0, 0, (size_t)mm, nb, (size_t)kc, 1.0f, w + pc, (size_t)K, col, nb,
                             bias || pc > 0 ? 1.0f : 0.0f, y, (size_t)P, gemm_scratch);
            }
        }
        if (p->relu) opara__bias_relu_rows(y, (size_t)mm, nb, (size_t)P, NULL, 1, 0);
    }
    return OPARA_OK;
}

/* yr += one kernel row wk applied along input row xr: clipped edges per element, the interior
   with every tap at once. */
static void opara__depthwise_row(const opara__cpu_params* p, const float* xr, const float* wk, float* yr) {
    int64_t ow = p->out_sp[2], sw = p->stride[2], pw = p->pad_b[2], dw = p->dil[2], W = p->in_sp[2], KW = p->kernel[2];
    int64_t lo, hi, t, kc;
    opara__pool_interior(ow, sw, pw, (KW - 1) * dw + 1, W, &lo, &hi);
    for (t = 0; t < ow; ++t) {
        if (t == lo && hi > lo) t = hi;
        if (t >= ow) break;
        for (kc = 0; kc < KW; ++kc) {
            int64_t ix = t * sw - pw + kc * dw;
            if (ix >= 0 && ix < W) yr[t] += wk[kc] * xr[ix];
        }
    }
    if (hi > lo) opara__vec_taps(yr + lo, xr + lo * sw - pw, (size_t)sw, (size_t)(hi - lo), wk, (size_t)KW, (size_t)dw);
}

/* Depthwise 2-D: each channel is copied into a zero-bordered plane in scratch, so every output
   row is one branch-free pass per kernel row. */
static opara_result opara__conv_depthwise2d_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    const opara__cpu_params* p = &op->p;
    int64_t H = p->in_sp[1], W = p->in_sp[2], Hp = H + p->pad_b[1] + p->pad_e[1], Wp = W + p->pad_b[2] + p->pad_e[2];
    int64_t oh = p->out_sp[1], ow = p->out_sp[2], KH = p->kernel[1], KW = p->kernel[2], r, oy, kb;
    const float* bias = op->n_in > 2 ? (const float*)op->in[2].data : NULL;
    size_t item;
    memset(scratch, 0, (size_t)(Hp * Wp) * sizeof(float));
    for (item = begin; item < end; ++item) {
        int64_t c = (int64_t)item % p->cout;
        const float* x = (const float*)op->in[0].data + (int64_t)item * H * W;
        const float* w = (const float*)op->in[1].data + c * KH * KW;
        float* y = (float*)op->out[0].data + (int64_t)item * oh * ow;
        for (r = 0; r < H; ++r) /* the border stays zero from the memset above */
            memcpy(scratch + (r + p->pad_b[1]) * Wp + p->pad_b[2], x + r * W, (size_t)W * sizeof(float));
        for (oy = 0; oy < oh; ++oy) {
            float* yr = y + oy * ow;
            opara__vec_fill(yr, (size_t)ow, bias ? bias[c] : 0.0f);
            for (kb = 0; kb < KH; ++kb)
                opara__vec_taps(yr, scratch + (oy * p->stride[1] + kb * p->dil[1]) * Wp, (size_t)p->stride[2], (size_t)ow,
                                w + kb * KW, (size_t)KW, (size_t)p->dil[2]);
            if (p->relu) opara__vec_relu(yr, yr, (size_t)ow);
        }
    }
    return OPARA_OK;
}

/* Depthwise (one input and one output channel per group): direct accumulation per output row. */
static opara_result opara__conv_depthwise_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    const opara__cpu_params* p = &op->p;
    int64_t K3 = opara__prod3(p->kernel), P = opara__prod3(p->out_sp), Pin = opara__prod3(p->in_sp);
    int64_t ow = p->out_sp[2];
    const float* bias = op->n_in > 2 ? (const float*)op->in[2].data : NULL;
    size_t item;
    (void)scratch;
    for (item = begin; item < end; ++item) {
        int64_t c = (int64_t)item % p->cout, z, yy, ka, kb;
        const float* x = (const float*)op->in[0].data + (int64_t)item * Pin;
        const float* w = (const float*)op->in[1].data + c * K3;
        float* y = (float*)op->out[0].data + (int64_t)item * P;
        for (z = 0; z < p->out_sp[0]; ++z)
            for (yy = 0; yy < p->out_sp[1]; ++yy) {
                float* yr = y + (z * p->out_sp[1] + yy) * ow;
                opara__vec_fill(yr, (size_t)ow, bias ? bias[c] : 0.0f);
                for (ka = 0; ka < p->kernel[0]; ++ka) {
                    int64_t iz = z * p->stride[0] - p->pad_b[0] + ka * p->dil[0];
                    if (iz < 0 || iz >= p->in_sp[0]) continue;
                    for (kb = 0; kb < p->kernel[1]; ++kb) {
                        int64_t iy = yy * p->stride[1] - p->pad_b[1] + kb * p->dil[1];
                        const float* xr;
                        if (iy < 0 || iy >= p->in_sp[1]) continue;
                        xr = x + (iz * p->in_sp[1] + iy) * p->in_sp[2];
                        opara__depthwise_row(p, xr, w + (ka * p->kernel[1] + kb) * p->kernel[2], yr);
                    }
                }
                if (p->relu) opara__vec_relu(yr, yr, (size_t)ow);
            }
    }
    return OPARA_OK;
}

/* K slice (p->k), column block and output-channel block (p->m): slices that fit L2, and at
   least OPARA__CONV_MIN_ITEMS items per image where the output allows (columns first, since
   channel blocks repeat the im2col). */
static void opara__conv_pick_block(opara__cpu_params* p, int64_t K, int64_t P) {
    int64_t images = p->batch * p->group, cout_g = p->cout / p->group, cb, want_m;
    p->k = p->pointwise ? (K > 0 ? K : 1) : OPARA__MIN(K > 0 ? K : 1, (int64_t)OPARA__CONV_K_SLICE);
    cb = p->pointwise ? 1024 : OPARA__CONV_SLICE_FLOATS / p->k / 16 * 16;
    if (cb < 64) cb = 64;
    if (images < OPARA__CONV_MIN_ITEMS && P >= 64 * OPARA__CONV_MIN_ITEMS) {
        int64_t part = ((P + OPARA__CONV_MIN_ITEMS - 1) / OPARA__CONV_MIN_ITEMS + 15) / 16 * 16;
        if (part < cb) cb = part;
    }
    if (cb > P) cb = P;
    p->col_block = cb > 0 ? cb : 1;
    p->n_col_blocks = P > 0 ? (P + p->col_block - 1) / p->col_block : 0;
    want_m = images * p->n_col_blocks >= OPARA__CONV_MIN_ITEMS ? 1
                                                               : OPARA__CONV_MIN_ITEMS / (images * p->n_col_blocks);
    if (want_m > cout_g / 16) want_m = cout_g / 16;
    if (want_m < 1) want_m = 1;
    p->m = ((cout_g + want_m - 1) / want_m + 7) / 8 * 8;
    if (p->m > cout_g) p->m = cout_g;
    if (p->m < 1) p->m = 1;
    p->m_blocks = (cout_g + p->m - 1) / p->m;
}

OPARA__PRIVATE opara_result opara__cpu_prepare_conv(opara__cpu_op* op, char* err, size_t cap) {
    opara__cpu_params* p = &op->p;
    const opara__cpu_tensor *x = &op->in[0], *w = &op->in[1], *y = &op->out[0];
    int64_t K, P;
    opara_result r;
    int32_t i;
    if (x->ndim < 3 || w->ndim != x->ndim || y->ndim != x->ndim || w->dtype != OPARA_DTYPE_F32)
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "Conv: X, W and Y need the same rank >= 3");
    r = opara__conv_geometry(op, x, w->dims + 2, err, cap);
    if (r != OPARA_OK) return r;
    p->group = opara__attr_int(op->node, "group", 1);
    p->batch = x->dims[0];
    p->cin = x->dims[1];
    p->cout = w->dims[0];
    if (p->group < 1 || p->cin % p->group || p->cout % p->group || w->dims[1] != p->cin / p->group ||
        y->dims[0] != p->batch || y->dims[1] != p->cout)
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "Conv: channels/groups of X, W, Y disagree");
    if (op->n_in > 2 && op->in[2].data && opara__cpu_numel(&op->in[2]) != (size_t)p->cout)
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "Conv: bias must have M elements");
    r = opara__conv_check_out(op, y, 0, err, cap);
    if (r != OPARA_OK) return r;
    p->relu = strcmp(opara__attr_string(op->node, "activation", ""), "Relu") == 0;
    K = (p->cin / p->group) * opara__prod3(p->kernel);
    P = opara__prod3(p->out_sp);
    p->depthwise = p->group == p->cin && p->group == p->cout;
    p->pointwise = opara__prod3(p->kernel) == 1;
    for (i = 0; i < 3; ++i)
        if (p->stride[i] != 1 || p->pad_b[i] != 0 || p->pad_e[i] != 0) p->pointwise = 0;
    op->min_items_per_task = 1;
    if (p->depthwise) {
        op->work_items = (size_t)(p->batch * p->cout);
        op->fn = opara__conv_depthwise_kernel;
        if (p->in_sp[0] == 1 && p->kernel[0] == 1 && p->out_sp[0] == 1) { /* 2-D: through a padded copy */
            op->fn = opara__conv_depthwise2d_kernel;
            op->scratch_floats = (size_t)((p->in_sp[1] + p->pad_b[1] + p->pad_e[1]) * (p->in_sp[2] + p->pad_b[2] + p->pad_e[2]));
        }
        return OPARA_OK;
    }
    opara__conv_pick_block(p, K, P);
    op->work_items = (size_t)(p->batch * p->group * p->m_blocks * p->n_col_blocks);
    op->scratch_floats = (p->pointwise ? 0 : (size_t)(p->k * p->col_block)) +
                         (op->blas && op->blas->sgemm ? 0 : OPARA__GEMM_SCRATCH);
    op->fn = opara__conv_gemm_kernel;
    return OPARA_OK;
}

/* ---- ConvTranspose ---------------------------------------------------------------------------- */

/* Adds columns [p0, p1) of col (rows: cout_g x K3, row stride p1 - p0) into y (cout_g planes). */
static void opara__col2im(const opara__cpu_params* p, const float* col, int64_t cout_g, int64_t p0, int64_t p1, float* y) {
    int64_t K3 = opara__prod3(p->kernel), ihw = p->in_sp[1] * p->in_sp[2], P = opara__prod3(p->out_sp);
    int64_t cb = p1 - p0, r, pp;
    for (r = 0; r < cout_g * K3; ++r) {
        int64_t m = r / K3, kk = r % K3, ka = kk / (p->kernel[1] * p->kernel[2]);
        int64_t kb = (kk / p->kernel[2]) % p->kernel[1], kc = kk % p->kernel[2];
        const float* src = col + r * cb;
        float* ym = y + m * P;
        for (pp = p0; pp < p1; ++pp) {
            int64_t z = pp / ihw, rem = pp % ihw, yy = rem / p->in_sp[2], xx = rem % p->in_sp[2];
            int64_t oz = z * p->stride[0] - p->pad_b[0] + ka * p->dil[0];
            int64_t oy = yy * p->stride[1] - p->pad_b[1] + kb * p->dil[1];
            int64_t ox = xx * p->stride[2] - p->pad_b[2] + kc * p->dil[2];
            if (oz < 0 || oz >= p->out_sp[0] || oy < 0 || oy >= p->out_sp[1] || ox < 0 || ox >= p->out_sp[2]) continue;
            ym[(oz * p->out_sp[1] + oy) * p->out_sp[2] + ox] += src[pp - p0];
        }
    }
}

static opara_result opara__conv_transpose_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    const opara__cpu_params* p = &op->p;
    int64_t cin_g = p->cin / p->group, cout_g = p->cout / p->group, K3 = opara__prod3(p->kernel);
    int64_t Pin = opara__prod3(p->in_sp), P = opara__prod3(p->out_sp), rows = cout_g * K3;
    const float* bias = op->n_in > 2 ? (const float*)op->in[2].data : NULL;
    float* gemm_scratch = scratch + (size_t)(rows * p->col_block);
    size_t item;
    for (item = begin; item < end; ++item) {
        int64_t n = (int64_t)item / p->group, g = (int64_t)item % p->group, p0;
        const float* x = (const float*)op->in[0].data + (n * p->cin + g * cin_g) * Pin;
        const float* w = (const float*)op->in[1].data + g * cin_g * rows;
        float* y = (float*)op->out[0].data + (n * p->cout + g * cout_g) * P;
        opara__bias_relu_rows(y, (size_t)cout_g, (size_t)P, (size_t)P, bias ? bias + g * cout_g : NULL, 0, 1);
        for (p0 = 0; p0 < Pin; p0 += p->col_block) {
            int64_t p1 = OPARA__MIN(Pin, p0 + p->col_block);
            opara__sgemm(op->blas, 1, 0, (size_t)rows, (size_t)(p1 - p0), (size_t)cin_g, 1.0f, w, (size_t)rows, x + p0,
                         (size_t)Pin, 0.0f, scratch, (size_t)(p1 - p0), gemm_scratch);
            opara__col2im(p, scratch, cout_g, p0, p1, y);
        }
    }
    return OPARA_OK;
}

OPARA__PRIVATE opara_result opara__cpu_prepare_conv_transpose(opara__cpu_op* op, char* err, size_t cap) {
    opara__cpu_params* p = &op->p;
    const opara__cpu_tensor *x = &op->in[0], *w = &op->in[1], *y = &op->out[0];
    uint32_t nop = 0, nos = 0;
    const int64_t* out_pad = opara__attr_ints(op->node, "output_padding", &nop);
    const int64_t* out_shape = opara__attr_ints(op->node, "output_shape", &nos);
    const char* auto_pad = opara__attr_string(op->node, "auto_pad", "NOTSET");
    int32_t nsp = x->ndim - 2, off, i;
    int64_t rows, cb;
    opara_result r;
    if (!x->data || !w->data || x->ndim < 3 || w->ndim != x->ndim || y->ndim != x->ndim || w->dtype != OPARA_DTYPE_F32)
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "ConvTranspose: X, W and Y need the same rank >= 3");
    r = opara__conv_geometry(op, x, w->dims + 2, err, cap);
    if (r != OPARA_OK) return r;
    if ((out_pad && nop != (uint32_t)nsp) || (out_shape && nos != (uint32_t)nsp && nos != (uint32_t)x->ndim))
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "ConvTranspose: output_padding/output_shape length");
    p->group = opara__attr_int(op->node, "group", 1);
    p->batch = x->dims[0];
    p->cin = x->dims[1];
    if (p->group < 1 || w->dims[0] != p->cin || p->cin % p->group)
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "ConvTranspose: W must be [C, M/group, k...]");
    p->cout = w->dims[1] * p->group;
    if (y->dims[0] != p->batch || y->dims[1] != p->cout)
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "ConvTranspose: output channels");
    if (op->n_in > 2 && op->in[2].data && opara__cpu_numel(&op->in[2]) != (size_t)p->cout)
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "ConvTranspose: bias must have M elements");
    off = 3 - nsp;
    for (i = 0; i < 3; ++i) {
        int32_t j = i - off;
        int64_t op_ = j >= 0 && out_pad ? out_pad[j] : 0;
        int64_t full = p->stride[i] * (p->in_sp[i] - 1) + op_ + (p->kernel[i] - 1) * p->dil[i] + 1, want;
        if (j >= 0 && (out_shape || strcmp(auto_pad, "SAME_UPPER") == 0 || strcmp(auto_pad, "SAME_LOWER") == 0)) {
            int64_t target = out_shape ? out_shape[nos == (uint32_t)nsp ? j : j + 2] : p->in_sp[i] * p->stride[i];
            int64_t total = full - target;
            if (total < 0) total = 0;
            if (strcmp(auto_pad, "SAME_UPPER") == 0) {
                p->pad_b[i] = total / 2;
                p->pad_e[i] = total - total / 2;
            } else {
                p->pad_b[i] = total - total / 2;
                p->pad_e[i] = total / 2;
            }
        } else if (strcmp(auto_pad, "VALID") == 0) {
            p->pad_b[i] = p->pad_e[i] = 0;
        }
        want = full - p->pad_b[i] - p->pad_e[i];
        p->out_sp[i] = j >= 0 ? y->dims[2 + j] : 1;
        if (p->out_sp[i] != want)
            return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "ConvTranspose: output dim %d is %lld, expected %lld",
                                     (int)j, (long long)p->out_sp[i], (long long)want);
    }
    rows = (p->cout / p->group) * opara__prod3(p->kernel);
    cb = (int64_t)(OPARA__IM2COL_BUDGET / (size_t)(rows > 0 ? rows : 1));
    if (cb < 16) cb = 16;
    if (cb > opara__prod3(p->in_sp)) cb = opara__prod3(p->in_sp);
    p->col_block = cb > 0 ? cb : 1;
    op->work_items = (size_t)(p->batch * p->group);
    op->scratch_floats = (size_t)(rows * p->col_block) + (op->blas && op->blas->sgemm ? 0 : OPARA__GEMM_SCRATCH);
    op->min_items_per_task = 1;
    op->fn = opara__conv_transpose_kernel;
    return OPARA_OK;
}

/* ---- MaxPool / AveragePool -------------------------------------------------------------------- */

/* Taps [lo, hi) of a window starting at s (dilation d, k taps) that fall inside [0, in). */
static void opara__pool_taps(int64_t s, int64_t d, int64_t k, int64_t in, int64_t* lo, int64_t* hi) {
    int64_t a = s >= 0 ? 0 : (-s + d - 1) / d;
    int64_t b = s >= in ? 0 : (in - 1 - s) / d + 1;
    *lo = a;
    *hi = b < k ? b : k;
    if (*lo > *hi) *lo = *hi;
}

/* Taps of the window inside the padded input [-pad_b, in + pad_e) (count_include_pad). */
static int64_t opara__pool_padded_taps(const opara__cpu_params* p, int d, int64_t s) {
    int64_t lo, hi;
    opara__pool_taps(s + p->pad_b[d], p->dil[d], p->kernel[d], p->in_sp[d] + p->pad_b[d] + p->pad_e[d], &lo, &hi);
    return hi - lo;
}

/* One output row of a 2-D pool over rows [a1, b1) of the window: the clipped edges one element
   at a time, the interior as vectorizable loops over the output columns. */
static void opara__pool2d_row(const opara__cpu_params* p, int is_max, const float* x, int64_t s1, int64_t a1, int64_t b1,
                              float* yr) {
    int64_t W = p->in_sp[2], OW = p->out_sp[2], sw = p->stride[2], pw = p->pad_b[2], kw = p->kernel[2];
    int64_t dw = p->dil[2], dh = p->dil[1], lo, hi, o, k1, k2;
    float vdiv = (float)(b1 - a1) * (float)kw;
    opara__pool_interior(OW, sw, pw, (kw - 1) * dw + 1, W, &lo, &hi);
    for (o = 0; o < OW; ++o) {
        int64_t s2, a2, b2, cnt;
        float acc = 0.0f;
        int first = 1;
        if (o == lo && hi > lo) o = hi;
        if (o >= OW) break;
        s2 = o * sw - pw;
        opara__pool_taps(s2, dw, kw, W, &a2, &b2);
        for (k1 = a1; k1 < b1; ++k1) {
            const float* xr = x + (s1 + k1 * dh) * W + s2;
            for (k2 = a2; k2 < b2; ++k2) {
                float v = xr[k2 * dw];
                if (is_max) acc = first || v > acc ? v : acc;
                else acc += v;
                first = 0;
            }
        }
        cnt = p->count_include_pad ? opara__pool_padded_taps(p, 1, s1) * opara__pool_padded_taps(p, 2, s2)
                                   : (b1 - a1) * (b2 - a2);
        yr[o] = is_max ? acc : (cnt > 0 ? acc / (float)cnt : 0.0f);
    }
    if (hi <= lo) return;
    if (p->count_include_pad) vdiv = (float)opara__pool_padded_taps(p, 1, s1) * (float)kw;
    for (k1 = a1; k1 < b1; ++k1) {
        const float* xr = x + (s1 + k1 * dh) * W - pw;
        for (k2 = 0; k2 < kw; ++k2) {
            const float* xk = xr + k2 * dw;
            int init = k1 == a1 && k2 == 0;
            if (init && sw == 1) memcpy(yr + lo, xk + lo, (size_t)(hi - lo) * sizeof(float));
            else if (init)
                for (o = lo; o < hi; ++o) yr[o] = xk[o * sw];
            else if (is_max)
                opara__vec_max_into(yr + lo, xk + lo * sw, (size_t)sw, (size_t)(hi - lo));
            else
                opara__vec_add_into(yr + lo, xk + lo * sw, (size_t)sw, (size_t)(hi - lo));
        }
    }
    if (b1 <= a1)
        for (o = lo; o < hi; ++o) yr[o] = 0.0f;
    else if (!is_max)
        for (o = lo; o < hi; ++o) yr[o] /= vdiv;
}

/* 2-D pooling without indices (the common case): planes [begin, end). */
static opara_result opara__pool2d_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    const opara__cpu_params* p = &op->p;
    int is_max = op->node->op == OPARA__OP_MAX_POOL;
    int64_t Pin = p->in_sp[1] * p->in_sp[2], P = p->out_sp[1] * p->out_sp[2], o1;
    size_t item;
    (void)scratch;
    for (item = begin; item < end; ++item) {
        const float* x = (const float*)op->in[0].data + (int64_t)item * Pin;
        float* y = (float*)op->out[0].data + (int64_t)item * P;
        for (o1 = 0; o1 < p->out_sp[1]; ++o1) {
            int64_t s1 = o1 * p->stride[1] - p->pad_b[1], a1, b1;
            opara__pool_taps(s1, p->dil[1], p->kernel[1], p->in_sp[1], &a1, &b1);
            opara__pool2d_row(p, is_max, x, s1, a1, b1, y + o1 * p->out_sp[2]);
        }
    }
    return OPARA_OK;
}

static opara_result opara__pool_kernel(const opara__cpu_op* op, size_t begin, size_t end, float* scratch) {
    const opara__cpu_params* p = &op->p;
    int is_max = op->node->op == OPARA__OP_MAX_POOL;
    int64_t Pin = opara__prod3(p->in_sp), P = opara__prod3(p->out_sp), ihw = p->in_sp[1] * p->in_sp[2];
    int64_t* indices = op->n_out > 1 ? (int64_t*)op->out[1].data : NULL;
    size_t item;
    (void)scratch;
    for (item = begin; item < end; ++item) {
        const float* x = (const float*)op->in[0].data + (int64_t)item * Pin;
        float* y = (float*)op->out[0].data + (int64_t)item * P;
        int64_t o0, o1, o2, at_out = 0;
        for (o0 = 0; o0 < p->out_sp[0]; ++o0) {
            int64_t s0 = o0 * p->stride[0] - p->pad_b[0], a0, b0;
            opara__pool_taps(s0, p->dil[0], p->kernel[0], p->in_sp[0], &a0, &b0);
            for (o1 = 0; o1 < p->out_sp[1]; ++o1) {
                int64_t s1 = o1 * p->stride[1] - p->pad_b[1], a1, b1;
                opara__pool_taps(s1, p->dil[1], p->kernel[1], p->in_sp[1], &a1, &b1);
                for (o2 = 0; o2 < p->out_sp[2]; ++o2, ++at_out) {
                    int64_t s2 = o2 * p->stride[2] - p->pad_b[2], a2, b2, k0, k1, k2, arg = -1;
                    float best = -HUGE_VALF, sum = 0.0f;
                    opara__pool_taps(s2, p->dil[2], p->kernel[2], p->in_sp[2], &a2, &b2);
                    for (k0 = a0; k0 < b0; ++k0)
                        for (k1 = a1; k1 < b1; ++k1) {
                            int64_t row = (s0 + k0 * p->dil[0]) * ihw + (s1 + k1 * p->dil[1]) * p->in_sp[2] + s2;
                            const float* xr = x + row;
                            if (is_max) {
                                for (k2 = a2; k2 < b2; ++k2) {
                                    float v = xr[k2 * p->dil[2]];
                                    if (v > best || arg < 0) {
                                        best = v;
                                        arg = row + k2 * p->dil[2];
                                    }
                                }
                            } else {
                                for (k2 = a2; k2 < b2; ++k2) sum += xr[k2 * p->dil[2]];
                            }
                        }
                    if (is_max) {
                        y[at_out] = arg >= 0 ? best : 0.0f;
                        if (indices) {
                            int64_t at = arg < 0 ? 0 : arg;
                            if (p->storage_order) { /* column-major over the spatial dims */
                                int64_t iz = at / ihw, iy = (at / p->in_sp[2]) % p->in_sp[1], ix = at % p->in_sp[2];
                                at = (ix * p->in_sp[1] + iy) * p->in_sp[0] + iz;
                            }
                            indices[(int64_t)item * P + at_out] = (int64_t)item * Pin + at;
                        }
                    } else {
                        int64_t div = p->count_include_pad ? opara__pool_padded_taps(p, 0, s0) *
                                                                 opara__pool_padded_taps(p, 1, s1) *
                                                                 opara__pool_padded_taps(p, 2, s2)
                                                           : (b0 - a0) * (b1 - a1) * (b2 - a2);
                        y[at_out] = div > 0 ? sum / (float)div : 0.0f;
                    }
                }
            }
        }
    }
    return OPARA_OK;
}

OPARA__PRIVATE opara_result opara__cpu_prepare_pool(opara__cpu_op* op, char* err, size_t cap) {
    opara__cpu_params* p = &op->p;
    const opara__cpu_tensor *x = &op->in[0], *y = &op->out[0];
    opara_result r;
    if (x->ndim < 3 || y->ndim != x->ndim || y->dims[0] != x->dims[0] || y->dims[1] != x->dims[1])
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "%s: X and Y must be [N, C, spatial...] alike",
                                 opara__op_name(op->node->op));
    r = opara__conv_geometry(op, x, NULL, err, cap);
    if (r != OPARA_OK) return r;
    r = opara__conv_check_out(op, y, opara__attr_int(op->node, "ceil_mode", 0) != 0, err, cap);
    if (r != OPARA_OK) return r;
    if (op->n_out > 1 && op->out[1].data &&
        (op->out[1].dtype != OPARA_DTYPE_I64 || !opara__cpu_same_dims(&op->out[1], y)))
        return opara__cpu_reject(err, cap, OPARA_ERR_SHAPE, "MaxPool: Indices must be i64 shaped like Y");
    p->count_include_pad = opara__attr_int(op->node, "count_include_pad", 0) != 0;
    p->storage_order = opara__attr_int(op->node, "storage_order", 0) != 0;
    op->work_items = (size_t)(x->dims[0] * x->dims[1]);
    op->min_items_per_task = 1;
    op->fn = opara__pool_kernel;
    if (p->in_sp[0] == 1 && p->kernel[0] == 1 && p->out_sp[0] == 1 && !(op->n_out > 1 && op->out[1].data))
        op->fn = opara__pool2d_kernel;
    return OPARA_OK;
}
/* ==== END src/opara_cpu_conv.c ==== */
/* ==== BEGIN src/opara_desc.c ==== */
/* Device presets and the default analytic operator descriptors.

   The descriptors are ESTIMATES for planning when no backend has measured anything: FLOPs and
   bytes follow from the shapes (exact arithmetic), the launch shapes are plausible values for
   each kernel family, chosen to resemble what cuDNN/cuBLAS and simple elementwise kernels use:
     family          block  regs  smem/block  grid
     conv (GEMM)      256    96   16 KiB      ceil(N*P*Q/128) * ceil(K/64) tiles
     depthwise conv   256    32   0           ceil(outputs/256)
     GEMM/MatMul      256   128   24 KiB      batch * ceil(M/128) * ceil(N/128) tiles
     reductions       256    32   2 KiB       one block per reduced row (Softmax, LayerNorm, ReduceMean,
                                              GlobalAveragePool)
     transpose        256    24   4224 B      ceil(outputs/256) (a 32x33 float tile)
     pooling          256    32   0           ceil(outputs/256)
     elementwise/copy 256    16   0           ceil(outputs/256)
     views            no kernel (kernel_less)
   The class is compute when FLOPs/bytes reaches the device's balance point (peak FLOP/s over
   bandwidth), memory otherwise; ops without FLOPs (copies) are memory; without shapes, the op
   type's default (convolutions and matrix products compute, everything else memory). */
/* #include "opara_sched.h" (inlined above) */

/* Public specifications: SM count, per-block/per-SM limits (compute capability tables), FP32 peak
   at boost clock, DRAM bandwidth. max_smem_per_block is the default 48 KiB (cudaDeviceProp
   sharedMemPerBlock), not the opt-in maximum. */
static const opara__device opara__devices[] = {
    /* GeForce RTX 2080 SUPER: TU104, 48 SMs, sm_75, 3072 cores at 1815 MHz, 496 GB/s */
    {"rtx2080s", 48, 1024, 1024, 65536, 65536, 49152, 65536, 16, 11.15e12, 496e9},
    /* Tesla V100 SXM2: 80 SMs, sm_70, 15.7 TFLOP/s, 900 GB/s */
    {"v100", 80, 1024, 2048, 65536, 65536, 49152, 98304, 32, 15.7e12, 900e9},
    /* A100 PCIe 40 GB: 108 SMs, sm_80, 19.5 TFLOP/s, 1555 GB/s */
    {"a100", 108, 1024, 2048, 65536, 65536, 49152, 167936, 32, 19.5e12, 1555e9},
    /* H100 SXM5: 132 SMs, sm_90, 67 TFLOP/s, 3.35 TB/s */
    {"h100", 132, 1024, 2048, 65536, 65536, 49152, 233472, 32, 67e12, 3.35e12},
    /* Jetson AGX Orin 64 GB: 16 SMs, sm_87, 5.3 TFLOP/s, 204.8 GB/s */
    {"orin", 16, 1024, 1536, 65536, 65536, 49152, 167936, 16, 5.3e12, 204.8e9},
};

OPARA__PRIVATE const opara__device* opara__device_preset(const char* name) {
    size_t i;
    if (!name) return NULL;
    for (i = 0; i < OPARA__ARRAY_COUNT(opara__devices); ++i)
        if (strcmp(opara__devices[i].name, name) == 0) return &opara__devices[i];
    return NULL;
}

OPARA__PRIVATE const opara__device* opara__device_default(void) { return &opara__devices[0]; }

OPARA__PRIVATE double opara__device_balance(const opara__device* dev) {
    if (!dev) dev = opara__device_default();
    return dev->bandwidth > 0 ? dev->peak_flops / dev->bandwidth : 0.0;
}

OPARA__PRIVATE int opara__op_is_view(opara__op op) {
    return op == OPARA__OP_RESHAPE || op == OPARA__OP_FLATTEN || op == OPARA__OP_SQUEEZE || op == OPARA__OP_UNSQUEEZE;
}

OPARA__PRIVATE opara__op_class opara__op_default_class(opara__op op) {
    switch (op) {
    case OPARA__OP_CONV: case OPARA__OP_CONV_TRANSPOSE: case OPARA__OP_GEMM: case OPARA__OP_MATMUL:
        return OPARA__CLASS_COMPUTE;
    default: return OPARA__CLASS_MEMORY;
    }
}

/* ---- sizes ----------------------------------------------------------------------------------- */

static double opara__elems(const opara__shape* s) {
    double n = 1;
    int32_t i;
    if (!s || s->ndim < 0) return 0;
    for (i = 0; i < s->ndim; ++i) n *= (double)(s->dims[i] > 0 ? s->dims[i] : 0);
    return n;
}

OPARA__PRIVATE opara_result opara__value_bytes_from_shapes(const opara__graph* g, const opara__shape* shapes,
                                                          uint64_t* out) {
    uint32_t v;
    for (v = 0; v < g->n_values; ++v) {
        const opara__shape* s = &shapes[v];
        int64_t n = (int64_t)opara_dtype_size(g->values[v].dtype);
        int32_t d;
        out[v] = 0;
        if (s->ndim < 0) continue;
        if (s->ndim > OPARA_MAX_DIMS)
            return opara__fail(g->rt, OPARA_ERR_SHAPE, "value '%s' has rank %d", g->values[v].name, (int)s->ndim);
        for (d = 0; d < s->ndim; ++d) {
            if (s->dims[d] < 0)
                return opara__fail(g->rt, OPARA_ERR_SHAPE, "value '%s' has an unresolved dimension %d",
                                   g->values[v].name, (int)d);
            if (!opara__mul_i64(n, s->dims[d], &n))
                return opara__fail(g->rt, OPARA_ERR_LIMIT_EXCEEDED, "value '%s' is too large", g->values[v].name);
        }
        out[v] = (uint64_t)n;
    }
    return OPARA_OK;
}

/* ---- descriptors ----------------------------------------------------------------------------- */

typedef struct opara__desc_ctx {
    const opara__graph* g;
    const opara__shape* shapes;
    const opara__node* n;
} opara__desc_ctx;

static const opara__shape* opara__in_shape(const opara__desc_ctx* c, uint32_t i) {
    return i < c->n->n_inputs && c->n->inputs[i] >= 0 ? &c->shapes[c->n->inputs[i]] : NULL;
}

static const opara__shape* opara__out_shape(const opara__desc_ctx* c, uint32_t i) {
    return i < c->n->n_outputs && c->n->outputs[i] >= 0 ? &c->shapes[c->n->outputs[i]] : NULL;
}

static double opara__value_nbytes(const opara__desc_ctx* c, int32_t v) {
    return v < 0 ? 0 : opara__elems(&c->shapes[v]) * (double)opara_dtype_size(c->g->values[v].dtype);
}

static double opara__node_bytes(const opara__desc_ctx* c) {
    double b = 0;
    uint32_t i;
    for (i = 0; i < c->n->n_inputs; ++i) b += opara__value_nbytes(c, c->n->inputs[i]);
    for (i = 0; i < c->n->n_outputs; ++i) b += opara__value_nbytes(c, c->n->outputs[i]);
    return b;
}

static uint32_t opara__blocks(double work, double per_block) {
    double b = work / per_block;
    if (b < 1) return 1;
    if (b > 2147483647.0) return 2147483647u;
    return (uint32_t)(b + 0.999999);
}

static void opara__set_launch(opara__op_desc* d, uint32_t grid, uint32_t threads, uint32_t regs, uint32_t smem) {
    d->grid = grid;
    d->block_threads = threads;
    d->regs_per_thread = regs;
    d->smem_per_block = smem;
    d->has_info = 1;
}

static void opara__describe_conv(const opara__desc_ctx* c, opara__op_desc* d) {
    const opara__shape* x = opara__in_shape(c, 0);
    const opara__shape* w = opara__in_shape(c, 1);
    const opara__shape* y = opara__out_shape(c, 0);
    double out = opara__elems(y), taps = 1, group = (double)opara__attr_int(c->n, "group", 1);
    int32_t i;
    if (!x || !w || !y || w->ndim < 3 || y->ndim < 3 || x->ndim < 2) {
        opara__set_launch(d, opara__blocks(out, 256), 256, 96, 16384);
        return;
    }
    for (i = 1; i < w->ndim; ++i) taps *= (double)w->dims[i]; /* C/g * R * S */
    /* Conv: 2*N*K*(C/g)*R*S*P*Q = 2*outputs*taps; ConvTranspose (W is [C, K/g, R, S]): 2*inputs*taps */
    d->flops = 2.0 * (c->n->op == OPARA__OP_CONV_TRANSPOSE ? opara__elems(x) : out) * taps;
    if (group > 1 && (double)x->dims[1] == group) {
        opara__set_launch(d, opara__blocks(out, 256), 256, 32, 0);
        return;
    }
    {
        double npq = out / (double)(y->dims[1] > 0 ? y->dims[1] : 1);
        double tiles = (double)opara__blocks(npq, 128) * (double)opara__blocks((double)y->dims[1], 64);
        opara__set_launch(d, opara__blocks(tiles, 1), 256, 96, 16384);
    }
}

static void opara__describe_matmul(const opara__desc_ctx* c, opara__op_desc* d) {
    const opara__shape* a = opara__in_shape(c, 0);
    const opara__shape* y = opara__out_shape(c, 0);
    double m, n, k, batch;
    if (!a || !y || a->ndim < 1 || y->ndim < 1) {
        opara__set_launch(d, 1, 256, 128, 24576);
        return;
    }
    n = (double)y->dims[y->ndim - 1];
    m = y->ndim >= 2 ? (double)y->dims[y->ndim - 2] : 1;
    batch = n * m > 0 ? opara__elems(y) / (m * n) : 0;
    if (c->n->op == OPARA__OP_GEMM && opara__attr_int(c->n, "transA", 0)) k = a->ndim >= 2 ? (double)a->dims[0] : 1;
    else k = (double)a->dims[a->ndim - 1];
    d->flops = 2.0 * batch * m * n * k;
    opara__set_launch(d, opara__blocks(batch * (double)opara__blocks(m, 128) * (double)opara__blocks(n, 128), 1), 256,
                      128, 24576);
}

static double opara__flops_per_elem(opara__op op) {
    switch (op) {
    case OPARA__OP_GELU: case OPARA__OP_ERF: case OPARA__OP_TANH: case OPARA__OP_SIGMOID: return 8;
    case OPARA__OP_HARD_SWISH: case OPARA__OP_HARD_SIGMOID: case OPARA__OP_POW: return 4;
    case OPARA__OP_BATCH_NORM: case OPARA__OP_LEAKY_RELU: case OPARA__OP_CLIP: return 2;
    case OPARA__OP_SOFTMAX: case OPARA__OP_LAYER_NORM: return 5;
    case OPARA__OP_RELU: case OPARA__OP_ADD: case OPARA__OP_SUB: case OPARA__OP_MUL: case OPARA__OP_DIV:
    case OPARA__OP_SQRT: case OPARA__OP_REDUCE_MEAN: case OPARA__OP_GLOBAL_AVERAGE_POOL: case OPARA__OP_WHERE:
        return 1;
    default: return 0;
    }
}

static void opara__describe_other(const opara__desc_ctx* c, opara__op_desc* d) {
    opara__op op = c->n->op;
    const opara__shape* y = opara__out_shape(c, 0);
    const opara__shape* x = opara__in_shape(c, 0);
    double out = opara__elems(y);
    switch (op) {
    case OPARA__OP_MAX_POOL:
    case OPARA__OP_AVERAGE_POOL: {
        uint32_t nk = 0, i;
        const int64_t* k = opara__attr_ints(c->n, "kernel_shape", &nk);
        double taps = 1;
        for (i = 0; i < nk; ++i) taps *= (double)k[i];
        d->flops = out * taps;
        opara__set_launch(d, opara__blocks(out, 256), 256, 32, 0);
        return;
    }
    case OPARA__OP_SOFTMAX:
    case OPARA__OP_LAYER_NORM:
    case OPARA__OP_REDUCE_MEAN:
    case OPARA__OP_GLOBAL_AVERAGE_POOL: {
        double in = opara__elems(x), rows = 1;
        if (op == OPARA__OP_GLOBAL_AVERAGE_POOL && x && x->ndim >= 2) rows = (double)x->dims[0] * (double)x->dims[1];
        else if (op == OPARA__OP_REDUCE_MEAN) rows = out;
        else if (x && x->ndim >= 1) rows = in / (double)(x->dims[x->ndim - 1] > 0 ? x->dims[x->ndim - 1] : 1);
        d->flops = in * opara__flops_per_elem(op);
        opara__set_launch(d, opara__blocks(rows, 1), 256, 32, 2048);
        return;
    }
    case OPARA__OP_TRANSPOSE: opara__set_launch(d, opara__blocks(out, 256), 256, 24, 4224); return;
    default:
        d->flops = out * opara__flops_per_elem(op);
        opara__set_launch(d, opara__blocks(out, 256), 256, 16, 0);
        return;
    }
}

static void opara__describe_node(const opara__desc_ctx* c, const opara__device* dev, opara__op_desc* d) {
    opara__op op = c->n->op;
    memset(d, 0, sizeof *d);
    d->bytes = opara__node_bytes(c);
    if (opara__op_is_view(op)) {
        d->kernel_less = 1;
        d->op_class = OPARA__CLASS_MEMORY;
        return;
    }
    if (op == OPARA__OP_CONV || op == OPARA__OP_CONV_TRANSPOSE) opara__describe_conv(c, d);
    else if (op == OPARA__OP_GEMM || op == OPARA__OP_MATMUL) opara__describe_matmul(c, d);
    else opara__describe_other(c, d);
    if (d->flops <= 0 && d->bytes <= 0) d->op_class = (uint8_t)opara__op_default_class(op);
    else if (d->flops <= 0) d->op_class = OPARA__CLASS_MEMORY;
    else d->op_class = (uint8_t)(d->flops >= opara__device_balance(dev) * d->bytes ? OPARA__CLASS_COMPUTE
                                                                                   : OPARA__CLASS_MEMORY);
}

OPARA__PRIVATE opara_result opara__describe_ops(const opara__graph* g, const opara__shape* shapes,
                                               const opara__device* dev, opara__op_desc* out) {
    opara__desc_ctx c;
    uint32_t i;
    if (!g || !shapes || !out) return g ? opara__fail(g->rt, OPARA_ERR_INVALID_ARGS, "describe_ops: NULL argument")
                                        : OPARA_ERR_INVALID_ARGS;
    if (!dev) dev = opara__device_default();
    c.g = g;
    c.shapes = shapes;
    for (i = 0; i < g->n_nodes; ++i) {
        c.n = &g->nodes[i];
        opara__describe_node(&c, dev, &out[i]);
    }
    return OPARA_OK;
}
/* ==== END src/opara_desc.c ==== */
/* ==== BEGIN src/opara_sched.c ==== */
/* Strategies: launch orders (Opara Alg. 2, topological, DFS, BFS), stream allocation (Opara Alg. 1,
   sequential, wavefront, Nimble) and the plan object that ties them to the sync and memory plans.
   Everything is O(V + E) except Nimble (O(V^2/64) bitsets plus matchings, as in the original). */
/* #include "opara_sched.h" (inlined above) */

#include <math.h>

OPARADEF const char* opara_strategy_name(opara_strategy strategy) {
    switch (strategy) {
    case OPARA_STRATEGY_OPARA: return "opara";
    case OPARA_STRATEGY_SEQUENTIAL: return "sequential";
    case OPARA_STRATEGY_WAVEFRONT: return "wavefront";
    case OPARA_STRATEGY_NIMBLE: return "nimble";
    case OPARA_STRATEGY_OPARA_TOPO: return "opara-topo";
    default: return "?";
    }
}

/* ---- resource demand ------------------------------------------------------------------------- */

static double opara__ratio(double part, double whole) { return whole > 0 ? part / whole : 0.0; }

OPARA__PRIVATE double opara__op_demand(const opara__op_desc* d, const opara__device* dev, opara__metric metric) {
    double threads, regs, smem;
    if (!d || !d->has_info || d->kernel_less) return HUGE_VAL;
    if (!dev) dev = opara__device_default();
    if (metric != OPARA__METRIC_DOMINANT) return opara__ratio(d->smem_per_block, dev->max_smem_per_block);
    threads = opara__ratio(d->block_threads, dev->max_threads_per_sm);
    regs = opara__ratio((double)d->block_threads * d->regs_per_thread, dev->max_regs_per_sm);
    smem = opara__ratio(d->smem_per_block, dev->max_smem_per_sm);
    return OPARA__MAX(threads, OPARA__MAX(regs, smem));
}

/* ---- launch orders --------------------------------------------------------------------------- */

static void opara__indegrees(const opara__graph* g, uint32_t* indeg) {
    uint32_t n;
    for (n = 0; n < g->n_nodes; ++n) indeg[n] = g->pred_start[n + 1] - g->pred_start[n];
}

/* Kahn with a FIFO queue: sources in index order, successors in list order. */
static void opara__order_bfs(const opara__graph* g, uint32_t* indeg, uint32_t* order) {
    uint32_t n, k, head = 0, tail = 0;
    opara__indegrees(g, indeg);
    for (n = 0; n < g->n_nodes; ++n)
        if (!indeg[n]) order[tail++] = n;
    while (head < tail) {
        uint32_t u = order[head++];
        for (k = g->succ_start[u]; k < g->succ_start[u + 1]; ++k)
            if (--indeg[g->succs[k]] == 0) order[tail++] = g->succs[k];
    }
}

/* Kahn with a LIFO stack: after an op, its first successor that became ready runs next, so each
   branch is followed to its end before the next one starts (eager PyTorch's program order). */
static void opara__order_dfs(const opara__graph* g, uint32_t* indeg, uint32_t* stack, uint32_t* order) {
    uint32_t n, k, top = 0, emitted = 0;
    opara__indegrees(g, indeg);
    for (n = g->n_nodes; n-- > 0;)
        if (!indeg[n]) stack[top++] = n;
    while (top) {
        uint32_t u = stack[--top];
        order[emitted++] = u;
        for (k = g->succ_start[u + 1]; k-- > g->succ_start[u];)
            if (--indeg[g->succs[k]] == 0) stack[top++] = g->succs[k];
    }
}

/* Alg. 2's ready lists: a binary heap on (demand, ready sequence), which picks exactly what the
   reference's linear scan picks (least demand, earliest ready on ties, no-info ops last). */
typedef struct opara__ready {
    double key;
    uint32_t seq, node;
} opara__ready;

typedef struct opara__ready_heap {
    opara__ready* items;
    uint32_t size;
} opara__ready_heap;

static int opara__ready_less(const opara__ready* a, const opara__ready* b) {
    return a->key < b->key || (a->key == b->key && a->seq < b->seq);
}

static void opara__ready_push(opara__ready_heap* h, opara__ready x) {
    uint32_t i = h->size++;
    while (i > 0 && opara__ready_less(&x, &h->items[(i - 1) / 2])) {
        h->items[i] = h->items[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h->items[i] = x;
}

static uint32_t opara__ready_pop(opara__ready_heap* h) {
    uint32_t top = h->items[0].node, i = 0;
    opara__ready x = h->items[--h->size];
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= h->size) break;
        if (c + 1 < h->size && opara__ready_less(&h->items[c + 1], &h->items[c])) ++c;
        if (!opara__ready_less(&h->items[c], &x)) break;
        h->items[i] = h->items[c];
        i = c;
    }
    if (h->size) h->items[i] = x;
    return top;
}

typedef struct opara__alg2 {
    const opara__graph* g;
    const opara__op_desc* descs;
    const opara__device* dev;
    opara__metric metric;
    opara__ready_heap lists[2]; /* indexed by opara__op_class */
    uint32_t seq;
} opara__alg2;

static void opara__alg2_make_ready(opara__alg2* a, uint32_t node) {
    opara__ready r;
    const opara__op_desc* d = a->descs ? &a->descs[node] : NULL;
    int cls = d && d->op_class == OPARA__CLASS_MEMORY ? 1 : 0;
    r.key = opara__op_demand(d, a->dev, a->metric);
    r.seq = a->seq++;
    r.node = node;
    opara__ready_push(&a->lists[cls], r);
}

/* Which list to take from. PARITY: a flag that starts true and toggles at the start of every
   iteration; false takes the compute list, true the memory list, a lone non-empty list is taken
   regardless (the flag still toggles). LAST_PICK: the list opposite the last one picked. */
static int opara__alg2_choose(const opara__alg2* a, opara__alternation mode, int* state) {
    int mem_ok = a->lists[OPARA__CLASS_MEMORY].size > 0, comp_ok = a->lists[OPARA__CLASS_COMPUTE].size > 0;
    int want;
    if (mode == OPARA__ALT_LAST_PICK) {
        want = *state; /* state: the list to prefer now */
    } else {
        *state = !*state;
        want = *state ? OPARA__CLASS_MEMORY : OPARA__CLASS_COMPUTE;
    }
    if (want == OPARA__CLASS_MEMORY && !mem_ok) want = OPARA__CLASS_COMPUTE;
    if (want == OPARA__CLASS_COMPUTE && !comp_ok) want = OPARA__CLASS_MEMORY;
    if (mode == OPARA__ALT_LAST_PICK) *state = want == OPARA__CLASS_MEMORY ? OPARA__CLASS_COMPUTE : OPARA__CLASS_MEMORY;
    return want;
}

static void opara__order_alg2(opara__alg2* a, opara__alternation mode, uint32_t* indeg, uint32_t* order) {
    const opara__graph* g = a->g;
    uint32_t n, k, emitted = 0;
    int state = mode == OPARA__ALT_LAST_PICK ? OPARA__CLASS_COMPUTE : 1;
    opara__indegrees(g, indeg);
    for (n = 0; n < g->n_nodes; ++n)
        if (!indeg[n]) opara__alg2_make_ready(a, n);
    while (a->lists[0].size || a->lists[1].size) {
        int which = opara__alg2_choose(a, mode, &state);
        uint32_t u = opara__ready_pop(&a->lists[which]);
        order[emitted++] = u;
        for (k = g->succ_start[u]; k < g->succ_start[u + 1]; ++k)
            if (--indeg[g->succs[k]] == 0) opara__alg2_make_ready(a, g->succs[k]);
    }
}

static opara_launch_order opara__resolve_order(const opara__plan_desc* d) {
    if (d->launch_order != OPARA_LAUNCH_DEFAULT) return d->launch_order;
    return d->strategy == OPARA_STRATEGY_OPARA ? OPARA_LAUNCH_ALG2 : OPARA_LAUNCH_TOPO;
}

OPARA__PRIVATE opara_result opara__sched_order(const opara__graph* g, const opara__op_desc* descs,
                                              const opara__device* dev, const opara__plan_desc* desc,
                                              uint32_t* order) {
    opara_launch_order which = opara__resolve_order(desc);
    uint32_t* scratch;
    if (!g->finalized) return opara__fail(g->rt, OPARA_ERR_INVALID_STATE, "the graph is not finalized");
    if (which == OPARA_LAUNCH_TOPO) {
        if (g->n_nodes) memcpy(order, g->topo, (size_t)g->n_nodes * sizeof(uint32_t));
        return OPARA_OK;
    }
    if ((int)which < 0 || which >= OPARA_LAUNCH_COUNT)
        return opara__fail(g->rt, OPARA_ERR_INVALID_ARGS, "unknown launch order %d", (int)which);
    scratch = (uint32_t*)opara__calloc(g->rt, (size_t)g->n_nodes * 2 + 1, sizeof(uint32_t));
    if (!scratch) return opara__fail(g->rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory ordering %u nodes", g->n_nodes);
    if (which == OPARA_LAUNCH_BFS) {
        opara__order_bfs(g, scratch, order);
    } else if (which == OPARA_LAUNCH_DFS) {
        opara__order_dfs(g, scratch, scratch + g->n_nodes, order);
    } else {
        opara__alg2 a;
        memset(&a, 0, sizeof a);
        a.g = g;
        a.descs = descs;
        a.dev = dev ? dev : opara__device_default();
        a.metric = desc->metric;
        a.lists[0].items = (opara__ready*)opara__calloc(g->rt, (size_t)g->n_nodes + 1, sizeof(opara__ready));
        a.lists[1].items = (opara__ready*)opara__calloc(g->rt, (size_t)g->n_nodes + 1, sizeof(opara__ready));
        if (a.lists[0].items && a.lists[1].items) opara__order_alg2(&a, desc->alternation, scratch, order);
        opara__free(g->rt, a.lists[0].items);
        opara__free(g->rt, a.lists[1].items);
        if (!a.lists[0].items || !a.lists[1].items) {
            opara__free(g->rt, scratch);
            return opara__fail(g->rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory ordering %u nodes", g->n_nodes);
        }
    }
    opara__free(g->rt, scratch);
    return OPARA_OK;
}

/* ---- Opara Alg. 1 ---------------------------------------------------------------------------- */

typedef struct opara__alg1 {
    const opara__graph* g;
    const opara__plan_desc* desc;
    uint32_t* stream;    /* output */
    uint32_t* position;  /* node -> launch position */
    uint8_t* flag;       /* SYNC flag per node */
    uint32_t* first_succ;/* FIRST_SUCCESSOR: the successor launched first, per node */
    uint32_t* preds;     /* scratch: one node's predecessors in visiting order */
    uint32_t n_streams;
    /* stream cap: tails and bounded clocks */
    uint32_t* tail;      /* per stream: last node */
    uint32_t* tail_seq;  /* per stream: its rank */
    opara__vc_slot* node_clock;   /* [n_nodes * k] clock right after each node */
    opara__vc_slot* stream_clock; /* [cap_streams * k] */
    opara__vc_slot* pred_clock;   /* [k] */
    uint32_t k, cap_streams;
} opara__alg1;

/* Visiting order of v's predecessors; insertion sort (in-degrees are small). */
static uint32_t opara__alg1_preds(opara__alg1* a, uint32_t v) {
    const opara__graph* g = a->g;
    uint32_t n = g->pred_start[v + 1] - g->pred_start[v], i, j;
    opara__pred_order how = a->desc->pred_order;
    memcpy(a->preds, g->preds + g->pred_start[v], (size_t)n * sizeof(uint32_t));
    if (how == OPARA__PRED_INPUT) return n;
    for (i = 1; i < n; ++i) {
        uint32_t x = a->preds[i];
        for (j = i; j > 0; --j) {
            uint32_t y = a->preds[j - 1];
            int before = how == OPARA__PRED_ASC_ID    ? x < y
                         : how == OPARA__PRED_DESC_ID ? x > y
                                                      : (a->stream[x] < a->stream[y] ||
                                                         (a->stream[x] == a->stream[y] && x < y));
            if (!before) break;
            a->preds[j] = y;
        }
        a->preds[j] = x;
    }
    return n;
}

static int opara__alg1_inherit(opara__alg1* a, uint32_t v) {
    uint32_t n = opara__alg1_preds(a, v), i;
    for (i = 0; i < n; ++i) {
        uint32_t p = a->preds[i];
        int ok = a->desc->inherit == OPARA__INHERIT_FIRST_SUCCESSOR ? a->first_succ[p] == v : !a->flag[p];
        if (ok) {
            a->stream[v] = a->stream[p];
            a->flag[p] = 1;
            return 1;
        }
    }
    return 0;
}

/* Clock of what happens-before v through its data predecessors (stream cap only). */
static void opara__alg1_pred_clock(opara__alg1* a, uint32_t v) {
    const opara__graph* g = a->g;
    uint32_t k;
    memset(a->pred_clock, 0, a->k * sizeof(opara__vc_slot));
    for (k = g->pred_start[v]; k < g->pred_start[v + 1]; ++k)
        opara__vc_merge(a->pred_clock, a->node_clock + (size_t)g->preds[k] * a->k, a->k);
}

/* A new stream, or under the cap an idle one (its last op happens-before v), or with a hard cap
   the stream whose last op was launched earliest. */
static uint32_t opara__alg1_new_stream(opara__alg1* a, uint32_t v) {
    uint32_t cap = a->desc->stream_cap, s, best = UINT32_MAX;
    if (!cap || a->n_streams < cap) return a->n_streams++;
    for (s = 0; s < a->n_streams; ++s)
        if (opara__vc_knows(a->pred_clock, a->k, s, a->tail_seq[s])) return s;
    if (!a->desc->stream_cap_hard) return a->n_streams++;
    for (s = 0; s < a->n_streams; ++s)
        if (best == UINT32_MAX || a->position[a->tail[s]] < a->position[a->tail[best]]) best = s;
    (void)v;
    return best;
}

static void opara__alg1_track(opara__alg1* a, uint32_t v) {
    uint32_t s = a->stream[v];
    opara__vc_slot* sc = a->stream_clock + (size_t)s * a->k;
    a->tail[s] = v;
    a->tail_seq[s]++;
    opara__vc_merge(sc, a->pred_clock, a->k);
    opara__vc_set(sc, a->k, s, a->tail_seq[s]);
    memcpy(a->node_clock + (size_t)v * a->k, sc, a->k * sizeof(opara__vc_slot));
}

static void opara__alg1_run(opara__alg1* a, const uint32_t* order) {
    const opara__graph* g = a->g;
    uint32_t i, k;
    int capped = a->desc->stream_cap != 0;
    for (i = 0; i < g->n_nodes; ++i) a->position[order[i]] = i;
    if (a->desc->inherit == OPARA__INHERIT_FIRST_SUCCESSOR)
        for (i = 0; i < g->n_nodes; ++i) {
            uint32_t best = UINT32_MAX;
            for (k = g->succ_start[i]; k < g->succ_start[i + 1]; ++k)
                if (best == UINT32_MAX || a->position[g->succs[k]] < a->position[best]) best = g->succs[k];
            a->first_succ[i] = best;
        }
    for (i = 0; i < g->n_nodes; ++i) {
        uint32_t v = order[i];
        if (capped) opara__alg1_pred_clock(a, v);
        if (!opara__alg1_inherit(a, v)) a->stream[v] = opara__alg1_new_stream(a, v);
        if (capped) opara__alg1_track(a, v);
    }
}

OPARA__PRIVATE opara_result opara__sched_alg1(const opara__graph* g, const uint32_t* order,
                                             const opara__plan_desc* desc, uint32_t* stream, uint32_t* n_streams) {
    opara__alg1 a;
    opara_runtime* rt = g->rt;
    size_t n = (size_t)g->n_nodes + 1;
    int ok;
    memset(&a, 0, sizeof a);
    a.g = g;
    a.desc = desc;
    a.stream = stream;
    a.position = (uint32_t*)opara__calloc(rt, n, sizeof(uint32_t));
    a.flag = (uint8_t*)opara__calloc(rt, n, 1);
    a.first_succ = (uint32_t*)opara__calloc(rt, n, sizeof(uint32_t));
    a.preds = (uint32_t*)opara__calloc(rt, (size_t)g->pred_start[g->n_nodes] + 1, sizeof(uint32_t));
    ok = a.position && a.flag && a.first_succ && a.preds;
    if (ok && desc->stream_cap) {
        a.cap_streams = desc->stream_cap_hard ? desc->stream_cap : g->n_nodes + 1;
        a.k = opara__vc_slots(desc->stream_cap);
        a.tail = (uint32_t*)opara__calloc(rt, (size_t)a.cap_streams + 1, sizeof(uint32_t));
        a.tail_seq = (uint32_t*)opara__calloc(rt, (size_t)a.cap_streams + 1, sizeof(uint32_t));
        a.node_clock = (opara__vc_slot*)opara__calloc(rt, n * a.k, sizeof(opara__vc_slot));
        a.stream_clock = (opara__vc_slot*)opara__calloc(rt, ((size_t)a.cap_streams + 1) * a.k, sizeof(opara__vc_slot));
        a.pred_clock = (opara__vc_slot*)opara__calloc(rt, a.k, sizeof(opara__vc_slot));
        ok = a.tail && a.tail_seq && a.node_clock && a.stream_clock && a.pred_clock;
    }
    if (ok) opara__alg1_run(&a, order);
    opara__free(rt, a.position);
    opara__free(rt, a.flag);
    opara__free(rt, a.first_succ);
    opara__free(rt, a.preds);
    opara__free(rt, a.tail);
    opara__free(rt, a.tail_seq);
    opara__free(rt, a.node_clock);
    opara__free(rt, a.stream_clock);
    opara__free(rt, a.pred_clock);
    if (!ok) return opara__fail(rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory allocating streams for %u nodes", g->n_nodes);
    *n_streams = a.n_streams;
    return OPARA_OK;
}

/* ---- Nimble: transitive reduction, then two maximum matchings (minimum chain cover) ---------- */

#define OPARA__NIMBLE_MAX_NODES 40000u /* the descendant bitsets take V*V/8 bytes */

typedef struct opara__bits {
    uint64_t* w;
    size_t words; /* per row */
} opara__bits;

static int opara__bit(const opara__bits* b, uint32_t row, uint32_t col) {
    return (int)((b->w[(size_t)row * b->words + col / 64] >> (col % 64)) & 1u);
}

static void opara__bit_set(opara__bits* b, uint32_t row, uint32_t col) {
    b->w[(size_t)row * b->words + col / 64] |= (uint64_t)1 << (col % 64);
}

static void opara__bits_or_row(opara__bits* b, uint32_t dst, uint32_t src) {
    size_t i;
    uint64_t* d = b->w + (size_t)dst * b->words;
    const uint64_t* s = b->w + (size_t)src * b->words;
    for (i = 0; i < b->words; ++i) d[i] |= s[i];
}

/* Kuhn's augmenting paths, iteratively. adj: CSR left -> right. match_r[right] = left or UINT32_MAX.
   Returns the matching size. scratch: visit stamps [n_right], stack [2 * n_left], edge cursors [n_left]. */
typedef struct opara__bipartite {
    uint32_t n_left, n_right;
    const uint32_t* start;
    const uint32_t* adj;
    uint32_t* match_l;
    uint32_t* match_r;
    uint32_t* stamp;  /* [n_right] */
    uint32_t* stack;  /* [n_left] left vertices on the path */
    uint32_t* cursor; /* [n_left] */
} opara__bipartite;

static int opara__augment(opara__bipartite* b, uint32_t root, uint32_t round) {
    uint32_t top = 0;
    b->stack[top++] = root;
    b->cursor[root] = b->start[root];
    while (top) {
        uint32_t u = b->stack[top - 1];
        if (b->cursor[u] == b->start[u + 1]) {
            --top;
            continue;
        }
        {
            uint32_t r = b->adj[b->cursor[u]++];
            if (b->stamp[r] == round) continue;
            b->stamp[r] = round;
            if (b->match_r[r] == UINT32_MAX) {
                /* flip the path: stack[i] takes the right vertex stack[i+1] held */
                while (top) {
                    uint32_t l = b->stack[--top];
                    uint32_t prev = b->match_l[l];
                    b->match_l[l] = r;
                    b->match_r[r] = l;
                    r = prev;
                }
                return 1;
            }
            b->stack[top++] = b->match_r[r];
            b->cursor[b->match_r[r]] = b->start[b->match_r[r]];
        }
    }
    return 0;
}

static void opara__max_matching(opara__bipartite* b) {
    uint32_t u;
    for (u = 0; u < b->n_left; ++u) b->match_l[u] = UINT32_MAX;
    for (u = 0; u < b->n_right; ++u) b->match_r[u] = UINT32_MAX, b->stamp[u] = 0;
    for (u = 0; u < b->n_left; ++u) opara__augment(b, u, u + 1);
}

typedef struct opara__nimble {
    const opara__graph* g;
    opara__bits reach;    /* reach[u]: strict descendants of u */
    uint64_t* row;        /* scratch row */
    uint32_t* start;      /* CSR of the reduced graph / chain graph */
    uint32_t* adj;
    uint32_t* match_l, *match_r, *stamp, *stack, *cursor;
    uint32_t* chain;      /* node -> chain */
    uint32_t* chain_head; /* chain -> first node */
    uint32_t* chain_tail; /* chain -> last node */
} opara__nimble;

static void opara__nimble_reach(opara__nimble* m) {
    const opara__graph* g = m->g;
    uint32_t i, k;
    for (i = g->n_nodes; i-- > 0;) {
        uint32_t u = g->topo[i];
        for (k = g->succ_start[u]; k < g->succ_start[u + 1]; ++k) {
            opara__bit_set(&m->reach, u, g->succs[k]);
            opara__bits_or_row(&m->reach, u, g->succs[k]);
        }
    }
}

/* Edge u->c of the transitive reduction iff no other child of u reaches c. */
static uint32_t opara__nimble_reduce(opara__nimble* m) {
    const opara__graph* g = m->g;
    uint32_t u, k, total = 0;
    size_t w, words = m->reach.words;
    for (u = 0; u < g->n_nodes; ++u) {
        memset(m->row, 0, words * sizeof(uint64_t));
        for (k = g->succ_start[u]; k < g->succ_start[u + 1]; ++k) {
            const uint64_t* s = m->reach.w + (size_t)g->succs[k] * words;
            for (w = 0; w < words; ++w) m->row[w] |= s[w];
        }
        m->start[u] = total;
        for (k = g->succ_start[u]; k < g->succ_start[u + 1]; ++k) {
            uint32_t c = g->succs[k];
            if (!((m->row[c / 64] >> (c % 64)) & 1u)) m->adj[total++] = c;
        }
    }
    m->start[g->n_nodes] = total;
    return total;
}

static opara__bipartite opara__nimble_bipartite(opara__nimble* m, uint32_t n) {
    opara__bipartite b;
    b.n_left = b.n_right = n;
    b.start = m->start;
    b.adj = m->adj;
    b.match_l = m->match_l;
    b.match_r = m->match_r;
    b.stamp = m->stamp;
    b.stack = m->stack;
    b.cursor = m->cursor;
    return b;
}

/* Chains from the first matching: a node without a matched predecessor starts one. */
static uint32_t opara__nimble_chains(opara__nimble* m) {
    const opara__graph* g = m->g;
    uint32_t n, chains = 0;
    for (n = 0; n < g->n_nodes; ++n) {
        uint32_t v = g->topo[n], u;
        if (m->match_r[v] != UINT32_MAX) continue;
        m->chain_head[chains] = v;
        for (u = v;; u = m->match_l[u]) {
            m->chain[u] = chains;
            m->chain_tail[chains] = u;
            if (m->match_l[u] == UINT32_MAX) break;
        }
        chains++;
    }
    return chains;
}

/* Chain i precedes chain j when i's tail reaches j's head; a second matching on that (already
   transitive) relation merges chains into streams. Returns 0 when out of memory. */
static int opara__nimble_streams(opara__nimble* m, uint32_t chains, uint32_t* stream, uint32_t* n_streams) {
    const opara__graph* g = m->g;
    uint32_t i, j, streams = 0;
    size_t total = 0;
    opara__bipartite b;
    for (i = 0; i < chains; ++i)
        for (j = 0; j < chains; ++j)
            if (i != j && opara__bit(&m->reach, m->chain_tail[i], m->chain_head[j])) total++;
    opara__free(g->rt, m->adj);
    m->adj = total > UINT32_MAX ? NULL : (uint32_t*)opara__calloc(g->rt, total + 1, sizeof(uint32_t));
    if (!m->adj) return 0;
    total = 0;
    for (i = 0; i < chains; ++i) {
        m->start[i] = (uint32_t)total;
        for (j = 0; j < chains; ++j)
            if (i != j && opara__bit(&m->reach, m->chain_tail[i], m->chain_head[j])) m->adj[total++] = j;
    }
    m->start[chains] = (uint32_t)total;
    b = opara__nimble_bipartite(m, chains);
    opara__max_matching(&b);
    /* group id per chain: follow matched successors from each chain without a matched predecessor */
    for (i = 0; i < chains; ++i) {
        if (m->match_r[i] != UINT32_MAX) continue;
        for (j = i;; j = m->match_l[j]) {
            m->stamp[j] = streams;
            if (m->match_l[j] == UINT32_MAX) break;
        }
        streams++;
    }
    for (i = 0; i < g->n_nodes; ++i) stream[i] = m->stamp[m->chain[i]];
    *n_streams = streams;
    return 1;
}

static opara_result opara__sched_nimble(const opara__graph* g, uint32_t* stream, uint32_t* n_streams) {
    opara__nimble m;
    opara_runtime* rt = g->rt;
    size_t n = (size_t)g->n_nodes + 1, edges = (size_t)g->pred_start[g->n_nodes] + 1;
    int ok;
    if (g->n_nodes > OPARA__NIMBLE_MAX_NODES)
        return opara__fail(rt, OPARA_ERR_LIMIT_EXCEEDED,
                           "nimble: %u nodes exceed %u (its transitive closure needs V*V/8 bytes)", g->n_nodes,
                           OPARA__NIMBLE_MAX_NODES);
    memset(&m, 0, sizeof m);
    m.g = g;
    m.reach.words = (n + 63) / 64;
    m.reach.w = (uint64_t*)opara__calloc(rt, n * m.reach.words, sizeof(uint64_t));
    m.row = (uint64_t*)opara__calloc(rt, m.reach.words, sizeof(uint64_t));
    m.start = (uint32_t*)opara__calloc(rt, n + 1, sizeof(uint32_t));
    m.adj = (uint32_t*)opara__calloc(rt, edges, sizeof(uint32_t));
    m.match_l = (uint32_t*)opara__calloc(rt, n, sizeof(uint32_t));
    m.match_r = (uint32_t*)opara__calloc(rt, n, sizeof(uint32_t));
    m.stamp = (uint32_t*)opara__calloc(rt, n, sizeof(uint32_t));
    m.stack = (uint32_t*)opara__calloc(rt, n, sizeof(uint32_t));
    m.cursor = (uint32_t*)opara__calloc(rt, n, sizeof(uint32_t));
    m.chain = (uint32_t*)opara__calloc(rt, n, sizeof(uint32_t));
    m.chain_head = (uint32_t*)opara__calloc(rt, n, sizeof(uint32_t));
    m.chain_tail = (uint32_t*)opara__calloc(rt, n, sizeof(uint32_t));
    ok = m.reach.w && m.row && m.start && m.adj && m.match_l && m.match_r && m.stamp && m.stack && m.cursor &&
         m.chain && m.chain_head && m.chain_tail;
    if (ok) {
        opara__bipartite b;
        uint32_t chains;
        opara__nimble_reach(&m);
        opara__nimble_reduce(&m);
        b = opara__nimble_bipartite(&m, g->n_nodes);
        opara__max_matching(&b);
        chains = opara__nimble_chains(&m);
        ok = opara__nimble_streams(&m, chains, stream, n_streams);
    }
    opara__free(rt, m.reach.w);
    opara__free(rt, m.row);
    opara__free(rt, m.start);
    opara__free(rt, m.adj);
    opara__free(rt, m.match_l);
    opara__free(rt, m.match_r);
    opara__free(rt, m.stamp);
    opara__free(rt, m.stack);
    opara__free(rt, m.cursor);
    opara__free(rt, m.chain);
    opara__free(rt, m.chain_head);
    opara__free(rt, m.chain_tail);
    return ok ? OPARA_OK : opara__fail(rt, OPARA_ERR_OUT_OF_MEMORY, "nimble: out of memory for %u nodes", g->n_nodes);
}

/* ---- wavefront: levels with barriers --------------------------------------------------------- */

/* Reorders `order` by level (stable), puts the i-th op of each level on stream i, and makes every
   op of level k+1 depend on every op of level k (the barrier, expressed as ordinary waits so the
   backends need nothing special; the sync plan drops the waits a barrier makes redundant). */
static opara_result opara__sched_wavefront(const opara__graph* g, opara__plan* p, uint32_t** extra_start,
                                           uint32_t** extra) {
    uint32_t n = g->n_nodes, i, v, max_level = 0, streams = 0;
    uint32_t* start = NULL; /* start[l]: first index of level l in `sorted` */
    uint32_t* fill = NULL;
    uint32_t* sorted = NULL;
    size_t total = 0;
    for (i = 0; i < n; ++i) max_level = OPARA__MAX(max_level, p->level[i]);
    start = (uint32_t*)opara__calloc(g->rt, (size_t)max_level + 3, sizeof(uint32_t));
    fill = (uint32_t*)opara__calloc(g->rt, (size_t)max_level + 3, sizeof(uint32_t));
    sorted = (uint32_t*)opara__calloc(g->rt, (size_t)n + 1, sizeof(uint32_t));
    *extra_start = (uint32_t*)opara__calloc(g->rt, (size_t)n + 1, sizeof(uint32_t));
    if (!start || !fill || !sorted || !*extra_start) goto oom;
    for (i = 0; i < n; ++i) start[p->level[i] + 1]++;
    for (i = 0; i < n; ++i)
        if (p->level[i] > 0) total += start[p->level[i]]; /* start[l] still holds the size of level l-1 */
    for (i = 1; i <= max_level + 1; ++i) {
        streams = OPARA__MAX(streams, start[i]);
        start[i] += start[i - 1];
    }
    *extra = (uint32_t*)opara__calloc(g->rt, total + 1, sizeof(uint32_t));
    if (!*extra) goto oom;
    for (i = 0; i < n; ++i) {
        uint32_t u = p->order[i], lv = p->level[u];
        sorted[start[lv] + fill[lv]] = u;
        p->stream[u] = fill[lv]++;
    }
    memcpy(p->order, sorted, (size_t)n * sizeof(uint32_t));
    total = 0;
    for (v = 0; v < n; ++v) {
        uint32_t lv = p->level[v], k;
        (*extra_start)[v] = (uint32_t)total;
        if (lv > 0)
            for (k = start[lv - 1]; k < start[lv]; ++k) (*extra)[total++] = sorted[k];
    }
    (*extra_start)[n] = (uint32_t)total;
    p->n_streams = streams;
    opara__free(g->rt, start);
    opara__free(g->rt, fill);
    opara__free(g->rt, sorted);
    return OPARA_OK;
oom:
    opara__free(g->rt, start);
    opara__free(g->rt, fill);
    opara__free(g->rt, sorted);
    opara__free(g->rt, *extra_start);
    *extra_start = NULL;
    return opara__fail(g->rt, OPARA_ERR_OUT_OF_MEMORY, "wavefront: out of memory for %u nodes", n);
}

/* ---- the plan -------------------------------------------------------------------------------- */

static void opara__resolve_desc(opara__plan_desc* d, const opara__plan_desc* in) {
    if (in) *d = *in;
    else memset(d, 0, sizeof *d);
    if (d->metric == OPARA__METRIC_DEFAULT) d->metric = OPARA__METRIC_SMEM_FRAC;
    if (d->alternation == OPARA__ALT_DEFAULT) d->alternation = OPARA__ALT_PARITY;
    if (d->pred_order == OPARA__PRED_DEFAULT) d->pred_order = OPARA__PRED_INPUT;
    if (d->inherit == OPARA__INHERIT_DEFAULT) d->inherit = OPARA__INHERIT_FLAG;
    if (d->alignment == 0) d->alignment = 256;
    d->launch_order = opara__resolve_order(d);
}

static opara_result opara__check_desc(const opara__graph* g, const opara__plan_desc* d) {
    if ((int)d->strategy < 0 || d->strategy >= OPARA_STRATEGY_COUNT)
        return opara__fail(g->rt, OPARA_ERR_INVALID_ARGS, "unknown strategy %d", (int)d->strategy);
    if ((int)d->launch_order < 0 || d->launch_order >= OPARA_LAUNCH_COUNT)
        return opara__fail(g->rt, OPARA_ERR_INVALID_ARGS, "unknown launch order %d", (int)d->launch_order);
    if (d->metric > OPARA__METRIC_DOMINANT || d->alternation > OPARA__ALT_LAST_PICK ||
        d->pred_order > OPARA__PRED_ASC_STREAM || d->inherit > OPARA__INHERIT_FIRST_SUCCESSOR)
        return opara__fail(g->rt, OPARA_ERR_INVALID_ARGS, "a plan knob is out of range");
    if (!opara__is_pow2(d->alignment) || d->alignment > (1u << 20))
        return opara__fail(g->rt, OPARA_ERR_INVALID_ARGS, "alignment %u is not a power of two <= 1 MiB", d->alignment);
    if (!g->finalized) return opara__fail(g->rt, OPARA_ERR_INVALID_STATE, "the graph is not finalized");
    return OPARA_OK;
}

OPARA__PRIVATE void opara__plan_free(opara_runtime* rt, opara__plan* p) {
    if (!p) return;
    opara__free(rt, p->order);
    opara__free(rt, p->position);
    opara__free(rt, p->stream);
    opara__free(rt, p->stream_seq);
    opara__free(rt, p->level);
    opara__free(rt, p->records_event);
    opara__free(rt, p->wait_start);
    opara__free(rt, p->wait_nodes);
    opara__free(rt, p->stream_fork);
    opara__free(rt, p->stream_join);
    opara__free(rt, p->stream_first);
    opara__free(rt, p->stream_last);
    opara__free(rt, p->storage);
    opara__free(rt, p->offset);
    opara__free(rt, p->alias_root);
    opara__free(rt, p->alias_offset);
    opara__free(rt, p->alias_kind);
    opara__free(rt, p->value_bytes);
    opara__free(rt, p);
}

static opara_result opara__plan_alloc(const opara__graph* g, opara__plan* p) {
    opara_runtime* rt = g->rt;
    size_t n = (size_t)g->n_nodes + 1, v = (size_t)g->n_values + 1;
    p->n_nodes = g->n_nodes;
    p->n_values = g->n_values;
    p->order = (uint32_t*)opara__calloc(rt, n, sizeof(uint32_t));
    p->position = (uint32_t*)opara__calloc(rt, n, sizeof(uint32_t));
    p->stream = (uint32_t*)opara__calloc(rt, n, sizeof(uint32_t));
    p->stream_seq = (uint32_t*)opara__calloc(rt, n, sizeof(uint32_t));
    p->level = (uint32_t*)opara__calloc(rt, n, sizeof(uint32_t));
    p->records_event = (uint8_t*)opara__calloc(rt, n, 1);
    p->wait_start = (uint32_t*)opara__calloc(rt, n + 1, sizeof(uint32_t));
    p->storage = (uint8_t*)opara__calloc(rt, v, 1);
    p->offset = (uint64_t*)opara__calloc(rt, v, sizeof(uint64_t));
    p->alias_root = (int32_t*)opara__calloc(rt, v, sizeof(int32_t));
    p->alias_offset = (uint64_t*)opara__calloc(rt, v, sizeof(uint64_t));
    p->alias_kind = (uint8_t*)opara__calloc(rt, v, 1);
    p->value_bytes = (uint64_t*)opara__calloc(rt, v, sizeof(uint64_t));
    if (p->order && p->position && p->stream && p->stream_seq && p->level && p->records_event && p->wait_start &&
        p->storage && p->offset && p->alias_root && p->alias_offset && p->alias_kind && p->value_bytes)
        return OPARA_OK;
    return opara__fail(rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory for the plan of %u nodes", g->n_nodes);
}

static void opara__compute_levels(const opara__graph* g, uint32_t* level) {
    uint32_t i, k;
    for (i = 0; i < g->n_nodes; ++i) {
        uint32_t v = g->topo[i], lv = 0;
        for (k = g->pred_start[v]; k < g->pred_start[v + 1]; ++k) lv = OPARA__MAX(lv, level[g->preds[k]] + 1);
        level[v] = lv;
    }
}

/* Renumbers streams by first use in launch order (stream 0 = the origin, the stream of order[0])
   and fills position, stream_seq, stream_first/last. */
static opara_result opara__finish_streams(const opara__graph* g, opara__plan* p, uint32_t raw_streams) {
    uint32_t* remap = (uint32_t*)opara__calloc(g->rt, (size_t)raw_streams + 1, sizeof(uint32_t));
    uint32_t* count;
    uint32_t i, used = 0;
    if (!remap) return opara__fail(g->rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory numbering streams");
    for (i = 0; i < raw_streams; ++i) remap[i] = UINT32_MAX;
    for (i = 0; i < p->n_nodes; ++i) {
        uint32_t v = p->order[i];
        p->position[v] = i;
        if (remap[p->stream[v]] == UINT32_MAX) remap[p->stream[v]] = used++;
        p->stream[v] = remap[p->stream[v]];
    }
    opara__free(g->rt, remap);
    p->n_streams = used;
    p->stream_fork = (uint8_t*)opara__calloc(g->rt, (size_t)used + 1, 1);
    p->stream_join = (uint8_t*)opara__calloc(g->rt, (size_t)used + 1, 1);
    p->stream_first = (uint32_t*)opara__calloc(g->rt, (size_t)used + 1, sizeof(uint32_t));
    p->stream_last = (uint32_t*)opara__calloc(g->rt, (size_t)used + 1, sizeof(uint32_t));
    count = (uint32_t*)opara__calloc(g->rt, (size_t)used + 1, sizeof(uint32_t));
    if (!p->stream_fork || !p->stream_join || !p->stream_first || !p->stream_last || !count) {
        opara__free(g->rt, count);
        return opara__fail(g->rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory numbering streams");
    }
    for (i = 0; i < p->n_nodes; ++i) {
        uint32_t v = p->order[i], s = p->stream[v];
        if (!count[s]) p->stream_first[s] = v;
        p->stream_seq[v] = ++count[s];
        p->stream_last[s] = v;
    }
    opara__free(g->rt, count);
    p->stats.n_streams = used;
    return OPARA_OK;
}

static opara_result opara__assign_streams(const opara__graph* g, opara__plan* p, uint32_t** extra_start,
                                          uint32_t** extra) {
    uint32_t raw = 0, i;
    opara_result r = OPARA_OK;
    switch (p->desc.strategy) {
    case OPARA_STRATEGY_OPARA:
    case OPARA_STRATEGY_OPARA_TOPO: r = opara__sched_alg1(g, p->order, &p->desc, p->stream, &raw); break;
    case OPARA_STRATEGY_SEQUENTIAL:
        for (i = 0; i < g->n_nodes; ++i) p->stream[i] = 0;
        raw = g->n_nodes ? 1 : 0;
        break;
    case OPARA_STRATEGY_NIMBLE: r = opara__sched_nimble(g, p->stream, &raw); break;
    case OPARA_STRATEGY_WAVEFRONT:
        r = opara__sched_wavefront(g, p, extra_start, extra);
        raw = p->n_streams;
        break;
    default: r = opara__fail(g->rt, OPARA_ERR_INVALID_ARGS, "unknown strategy"); break;
    }
    if (r != OPARA_OK) return r;
    return opara__finish_streams(g, p, raw);
}

static opara_result opara__plan_build(const opara__graph* g, opara__plan* p, const opara__op_desc* descs,
                                      const opara__device* dev) {
    uint32_t* extra_start = NULL;
    uint32_t* extra = NULL;
    uint64_t t0 = opara__now_ns(), t1, t2, t3, t4;
    opara_result r = opara__sched_order(g, descs, dev, &p->desc, p->order);
    opara__compute_levels(g, p->level);
    t1 = opara__now_ns();
    if (r == OPARA_OK) r = opara__assign_streams(g, p, &extra_start, &extra);
    t2 = opara__now_ns();
    if (r == OPARA_OK) r = opara__sync_plan(g, p, extra_start, extra);
    opara__free(g->rt, extra_start);
    opara__free(g->rt, extra);
    t3 = opara__now_ns();
    if (r == OPARA_OK) r = opara__memory_plan(g, p);
    t4 = opara__now_ns();
    p->stats.order_ns = t1 - t0;
    p->stats.streams_ns = t2 - t1;
    p->stats.sync_ns = t3 - t2;
    p->stats.memory_ns = t4 - t3;
    p->stats.total_ns = t4 - t0;
    if (r == OPARA_OK && p->desc.verify) {
        r = opara__plan_verify(g, p);
        p->stats.verify_ns = opara__now_ns() - t4;
    }
    return r;
}

OPARA__PRIVATE opara_result opara__plan_create(const opara__graph* g, const uint64_t* value_bytes,
                                              const opara__op_desc* descs, const opara__device* dev,
                                              const opara__plan_desc* desc, opara__plan** out) {
    opara__plan* p;
    opara_result r;
    *out = NULL;
    if (!g || !value_bytes) return g ? opara__fail(g->rt, OPARA_ERR_INVALID_ARGS, "value sizes are required")
                                     : OPARA_ERR_INVALID_ARGS;
    p = (opara__plan*)opara__calloc(g->rt, 1, sizeof(opara__plan));
    if (!p) return opara__fail(g->rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory for the plan");
    opara__resolve_desc(&p->desc, desc);
    r = opara__check_desc(g, &p->desc);
    if (r == OPARA_OK) r = opara__plan_alloc(g, p);
    if (r == OPARA_OK) {
        memcpy(p->value_bytes, value_bytes, (size_t)g->n_values * sizeof(uint64_t));
        r = opara__plan_build(g, p, descs, dev);
    }
    if (r != OPARA_OK) {
        opara__plan_free(g->rt, p);
        return r;
    }
    *out = p;
    return OPARA_OK;
}
/* ==== END src/opara_sched.c ==== */
/* ==== BEGIN src/opara_sync.c ==== */
/* The sync plan: an event is recorded only after a node some other stream has to wait for, a
   wait is dropped when the waiting stream's vector clock already covers it (implied by earlier
   waits), and fork/join through the origin stream is added only where no event already orders a
   stream's first op after the fork or its last op before the join. */
/* #include "opara_sched.h" (inlined above) */

/* ---- bounded vector clocks ------------------------------------------------------------------- */

OPARA__PRIVATE uint32_t opara__vc_slots(uint32_t n_streams) {
    uint32_t k = 1;
    while (k < n_streams && k < OPARA__VC_MAX_SLOTS) k *= 2;
    return k;
}

OPARA__PRIVATE void opara__vc_merge(opara__vc_slot* dst, const opara__vc_slot* src, uint32_t k) {
    uint32_t i;
    for (i = 0; i < k; ++i) {
        if (!src[i].seq) continue;
        if (dst[i].stream == src[i].stream || !dst[i].seq) {
            if (!dst[i].seq || src[i].seq > dst[i].seq) dst[i] = src[i];
        } else if (src[i].stream > dst[i].stream) {
            dst[i] = src[i]; /* two streams share the slot: keep the newer stream, forget the other */
        }
    }
}

OPARA__PRIVATE int opara__vc_knows(const opara__vc_slot* c, uint32_t k, uint32_t stream, uint32_t seq) {
    const opara__vc_slot* e = &c[stream & (k - 1)];
    return e->seq && e->stream == stream && e->seq >= seq;
}

OPARA__PRIVATE void opara__vc_set(opara__vc_slot* c, uint32_t k, uint32_t stream, uint32_t seq) {
    opara__vc_slot* e = &c[stream & (k - 1)];
    e->stream = stream;
    e->seq = seq;
}

/* ---- the walk -------------------------------------------------------------------------------- */

OPARA__PRIVATE opara_result opara__vc_walk_init(opara__vc_walk* w, opara_runtime* rt, uint32_t n_nodes,
                                               uint32_t n_streams) {
    uint32_t i;
    memset(w, 0, sizeof *w);
    w->rt = rt;
    w->k = opara__vc_slots(n_streams);
    w->stream_clock = (uint32_t*)opara__calloc(rt, (size_t)n_streams + 1, sizeof(uint32_t));
    w->node_clock = (uint32_t*)opara__calloc(rt, (size_t)n_nodes + 1, sizeof(uint32_t));
    w->refs = (uint32_t*)opara__calloc(rt, (size_t)n_nodes + 1, sizeof(uint32_t));
    if (!w->stream_clock || !w->node_clock || !w->refs) {
        opara__vc_walk_free(w);
        return OPARA_ERR_OUT_OF_MEMORY;
    }
    for (i = 0; i < n_streams; ++i) w->stream_clock[i] = UINT32_MAX;
    for (i = 0; i < n_nodes; ++i) w->node_clock[i] = UINT32_MAX;
    return OPARA_OK;
}

OPARA__PRIVATE void opara__vc_walk_free(opara__vc_walk* w) {
    opara__free(w->rt, w->pool);
    opara__free(w->rt, w->free_list);
    opara__free(w->rt, w->stream_clock);
    opara__free(w->rt, w->node_clock);
    opara__free(w->rt, w->refs);
    memset(w, 0, sizeof *w);
}

static uint32_t opara__vc_walk_new(opara__vc_walk* w) {
    uint32_t id;
    if (w->n_free) {
        id = w->free_list[--w->n_free];
    } else {
        size_t cap_slots = w->pool_cap * w->k;
        if (w->pool_used == w->pool_cap) {
            if (opara__grow(w->rt, (void**)&w->pool, &cap_slots, ((size_t)w->pool_used + 1) * w->k,
                            sizeof(opara__vc_slot)) != OPARA_OK)
                return UINT32_MAX;
            w->pool_cap = cap_slots / w->k;
        }
        id = w->pool_used++;
    }
    memset(w->pool + (size_t)id * w->k, 0, w->k * sizeof(opara__vc_slot));
    return id;
}

static void opara__vc_walk_release(opara__vc_walk* w, uint32_t id) {
    if (w->n_free == w->free_cap &&
        opara__grow(w->rt, (void**)&w->free_list, &w->free_cap, (size_t)w->n_free + 1, sizeof(uint32_t)) != OPARA_OK)
        return; /* the slot leaks into the pool until the walk ends: harmless */
    w->free_list[w->n_free++] = id;
}

OPARA__PRIVATE opara__vc_slot* opara__vc_walk_stream(opara__vc_walk* w, uint32_t s) {
    if (w->stream_clock[s] == UINT32_MAX) {
        uint32_t id = opara__vc_walk_new(w);
        if (id == UINT32_MAX) return NULL;
        w->stream_clock[s] = id;
    }
    return w->pool + (size_t)w->stream_clock[s] * w->k;
}

OPARA__PRIVATE int opara__vc_walk_snapshot(opara__vc_walk* w, uint32_t v, uint32_t s) {
    uint32_t id = opara__vc_walk_new(w);
    if (id == UINT32_MAX || !opara__vc_walk_stream(w, s)) return 0;
    memcpy(w->pool + (size_t)id * w->k, w->pool + (size_t)w->stream_clock[s] * w->k, w->k * sizeof(opara__vc_slot));
    w->node_clock[v] = id;
    return 1;
}

OPARA__PRIVATE void opara__vc_walk_acquire(opara__vc_walk* w, uint32_t s, uint32_t p) {
    uint32_t id = w->node_clock[p];
    if (id == UINT32_MAX || w->stream_clock[s] == UINT32_MAX) return;
    opara__vc_merge(w->pool + (size_t)w->stream_clock[s] * w->k, w->pool + (size_t)id * w->k, w->k);
    if (w->refs[p] && --w->refs[p] == 0) {
        opara__vc_walk_release(w, id);
        w->node_clock[p] = UINT32_MAX;
    }
}

OPARA__PRIVATE void opara__vc_walk_end_stream(opara__vc_walk* w, uint32_t s) {
    if (w->stream_clock[s] == UINT32_MAX) return;
    opara__vc_walk_release(w, w->stream_clock[s]);
    w->stream_clock[s] = UINT32_MAX;
}

/* ---- sync plan ------------------------------------------------------------------------------- */

typedef struct opara__sync {
    const opara__graph* g;
    opara__plan* p;
    const uint32_t* extra_start;
    const uint32_t* extra;
    opara__vc_walk walk;
    uint32_t* deps;   /* scratch: one node's cross-stream dependencies */
    uint32_t* stamp;  /* dedup: stamp[u] == gen when u is already listed */
    uint32_t gen;
    uint32_t* dependents; /* per node: cross-stream dependents (before pruning) */
} opara__sync;

/* Cross-stream dependencies of v (data + extra), deduplicated, latest launched first: the latest
   one's clock usually covers the rest. */
static uint32_t opara__sync_deps(opara__sync* s, uint32_t v) {
    const opara__graph* g = s->g;
    const opara__plan* p = s->p;
    uint32_t n = 0, k, i, j, gen = ++s->gen;
    for (k = g->pred_start[v]; k < g->pred_start[v + 1]; ++k) {
        uint32_t u = g->preds[k];
        if (p->stream[u] != p->stream[v] && s->stamp[u] != gen) s->stamp[u] = gen, s->deps[n++] = u;
    }
    if (s->extra)
        for (k = s->extra_start[v]; k < s->extra_start[v + 1]; ++k) {
            uint32_t u = s->extra[k];
            if (p->stream[u] != p->stream[v] && s->stamp[u] != gen) s->stamp[u] = gen, s->deps[n++] = u;
        }
    for (i = 1; i < n; ++i) {
        uint32_t x = s->deps[i];
        for (j = i; j > 0 && p->position[s->deps[j - 1]] < p->position[x]; --j) s->deps[j] = s->deps[j - 1];
        s->deps[j] = x;
    }
    return n;
}

static uint32_t opara__sync_count(opara__sync* s) {
    uint32_t v, i, total = 0;
    for (v = 0; v < s->g->n_nodes; ++v) {
        uint32_t n = opara__sync_deps(s, v);
        for (i = 0; i < n; ++i) s->dependents[s->deps[i]]++;
        total += n;
    }
    for (v = 0; v < s->g->n_nodes; ++v) s->walk.refs[v] = s->dependents[v];
    return total;
}

/* One node: keep the waits its stream's clock does not cover, in ascending launch position. */
static opara_result opara__sync_node(opara__sync* s, uint32_t v, uint32_t* n_waits) {
    opara__plan* p = s->p;
    uint32_t sv = p->stream[v], n = opara__sync_deps(s, v), i, first = *n_waits;
    opara__vc_slot* c = opara__vc_walk_stream(&s->walk, sv);
    if (!c) return OPARA_ERR_OUT_OF_MEMORY;
    for (i = 0; i < n; ++i) {
        uint32_t u = s->deps[i];
        if (!p->desc.no_wait_pruning && opara__vc_knows(c, s->walk.k, p->stream[u], p->stream_seq[u])) {
            p->stats.n_pruned_waits++;
        } else {
            p->wait_nodes[(*n_waits)++] = u;
            p->records_event[u] = 1;
        }
        opara__vc_walk_acquire(&s->walk, sv, u);
    }
    {
        uint32_t a = first, b = *n_waits;
        while (b > a + 1) {
            uint32_t t = p->wait_nodes[a];
            p->wait_nodes[a++] = p->wait_nodes[--b];
            p->wait_nodes[b] = t;
        }
    }
    opara__vc_set(c, s->walk.k, sv, p->stream_seq[v]);
    if (s->walk.refs[v] && !opara__vc_walk_snapshot(&s->walk, v, sv)) return OPARA_ERR_OUT_OF_MEMORY;
    if (p->stream_last[sv] == v) opara__vc_walk_end_stream(&s->walk, sv);
    return OPARA_OK;
}

static void opara__sync_fork_join(opara__sync* s) {
    opara__plan* p = s->p;
    uint32_t st;
    for (st = 1; st < p->n_streams; ++st) {
        uint32_t first = p->stream_first[st], last = p->stream_last[st];
        p->stream_fork[st] = p->wait_start[first] == p->wait_start[first + 1];
        p->stream_join[st] = s->dependents[last] == 0;
        p->stats.n_forks += p->stream_fork[st];
        p->stats.n_joins += p->stream_join[st];
    }
}

/* The wait lists come out in launch order; the plan indexes them by node. */
static opara_result opara__sync_by_node(opara__sync* s, const uint32_t* begin, uint32_t n_waits) {
    const opara__graph* g = s->g;
    opara__plan* p = s->p;
    uint32_t* data = (uint32_t*)opara__calloc(g->rt, (size_t)n_waits + 1, sizeof(uint32_t));
    uint32_t v, at = 0, k;
    if (!data) return OPARA_ERR_OUT_OF_MEMORY;
    for (v = 0; v < g->n_nodes; ++v) {
        uint32_t i = p->position[v];
        uint32_t end = i + 1 < g->n_nodes ? begin[p->order[i + 1]] : n_waits;
        p->wait_start[v] = at;
        for (k = begin[v]; k < end; ++k) data[at++] = p->wait_nodes[k];
    }
    p->wait_start[g->n_nodes] = at;
    opara__free(g->rt, p->wait_nodes);
    p->wait_nodes = data;
    return OPARA_OK;
}

static opara_result opara__sync_run(opara__sync* s) {
    const opara__graph* g = s->g;
    opara__plan* p = s->p;
    uint32_t total = opara__sync_count(s), i, n_waits = 0, v, k;
    opara_result r = OPARA_OK;
    uint32_t* begin;
    p->wait_nodes = (uint32_t*)opara__calloc(g->rt, (size_t)total + 1, sizeof(uint32_t));
    begin = (uint32_t*)opara__calloc(g->rt, (size_t)g->n_nodes + 1, sizeof(uint32_t));
    if (!p->wait_nodes || !begin) {
        opara__free(g->rt, begin);
        return OPARA_ERR_OUT_OF_MEMORY;
    }
    for (i = 0; i < g->n_nodes && r == OPARA_OK; ++i) {
        begin[p->order[i]] = n_waits;
        r = opara__sync_node(s, p->order[i], &n_waits);
    }
    if (r == OPARA_OK) r = opara__sync_by_node(s, begin, n_waits);
    opara__free(g->rt, begin);
    if (r != OPARA_OK) return r;
    p->stats.n_waits = n_waits;
    for (v = 0; v < g->n_nodes; ++v) {
        p->stats.n_events += p->records_event[v];
        for (k = g->pred_start[v]; k < g->pred_start[v + 1]; ++k)
            p->stats.n_cross_edges += p->stream[g->preds[k]] != p->stream[v];
    }
    opara__sync_fork_join(s);
    return OPARA_OK;
}

OPARA__PRIVATE opara_result opara__sync_plan(const opara__graph* g, opara__plan* plan, const uint32_t* extra_start,
                                            const uint32_t* extra) {
    opara__sync s;
    opara_result r;
    size_t max_deps = (size_t)g->pred_start[g->n_nodes] + 1;
    memset(&s, 0, sizeof s);
    s.g = g;
    s.p = plan;
    s.extra_start = extra_start;
    s.extra = extra;
    if (extra) max_deps += extra_start[g->n_nodes];
    r = opara__vc_walk_init(&s.walk, g->rt, g->n_nodes, plan->n_streams);
    s.deps = (uint32_t*)opara__calloc(g->rt, max_deps, sizeof(uint32_t));
    s.stamp = (uint32_t*)opara__calloc(g->rt, (size_t)g->n_nodes + 1, sizeof(uint32_t));
    s.dependents = (uint32_t*)opara__calloc(g->rt, (size_t)g->n_nodes + 1, sizeof(uint32_t));
    if (r == OPARA_OK && (!s.deps || !s.stamp || !s.dependents)) r = OPARA_ERR_OUT_OF_MEMORY;
    if (r == OPARA_OK) r = opara__sync_run(&s);
    opara__vc_walk_free(&s.walk);
    opara__free(g->rt, s.deps);
    opara__free(g->rt, s.stamp);
    opara__free(g->rt, s.dependents);
    if (r == OPARA_ERR_OUT_OF_MEMORY) return opara__fail(g->rt, r, "out of memory planning events for %u nodes", g->n_nodes);
    return r;
}
/* ==== END src/opara_sync.c ==== */
/* ==== BEGIN src/opara_memplan.c ==== */
/* The memory plan: one arena, a block per storage root, reused only when it is provably free.

   A storage root is a value that owns bytes; views, in-place outputs and in-place Concat inputs
   are members of another value's root. Walking the plan in launch order with the same bounded
   vector clocks as the sync plan, a root retires when its last reader has been launched; it keeps
   the (stream, rank) of every op that touched it (producers and readers of all its members, one
   fact per stream). A retired block is reused by op v only when v's clock covers every fact, i.e.
   every old reader happens-before v along stream order and event edges, whichever streams they
   ran on. Blocks tile the arena; adjacent reusable blocks are combined, best fit first, and the
   last block can grow the arena. Graph outputs are pinned (never reused). */
/* #include "opara_sched.h" (inlined above) */

enum { OPARA__SEG_BUSY = 0, OPARA__SEG_RETIRED = 1 };

typedef struct opara__seg {
    uint64_t offset, size;
    uint32_t prev, next; /* UINT32_MAX at the ends */
    uint32_t facts, n_facts;
    uint8_t state;
} opara__seg;

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
    opara__vc_slot* facts;  /* (stream, seq) facts of retired blocks */
    size_t facts_cap, n_facts;
    uint32_t* stream_stamp; /* [n_streams] dedup while gathering facts */
    uint32_t* stream_fact;  /* [n_streams] index of the stream's fact */
    uint32_t stamp;
    uint64_t top;
} opara__mem;

static uint64_t opara__mem_align(const opara__mem* m, uint64_t size) {
    uint64_t a = m->p->desc.alignment;
    size = size ? size : 1;
    return size + (a - size % a) % a;
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
   (the dimensions before the axis multiply to 1); 0 when not provable. */
static int opara__concat_layout(const opara__mem* m, const opara__node* n) {
    const opara__shape* shapes = m->p->desc.shapes;
    const opara__shape* ys;
    int64_t axis, outer = 1, d;
    uint64_t sum = 0;
    uint32_t i;
    if (!shapes || n->n_outputs != 1 || n->outputs[0] < 0) return 0;
    ys = &shapes[n->outputs[0]];
    if (ys->ndim <= 0) return 0;
    axis = opara__attr_int(n, "axis", 0);
    if (axis < 0) axis += ys->ndim;
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
        if (n->op != OPARA__OP_CONCAT || !opara__concat_layout(m, n)) continue;
        for (k = 0; k < n->n_inputs; ++k) {
            int32_t x = n->inputs[k];
            if (opara__concat_part_ok(m, n, k)) {
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
           opara__grow(m->g->rt, (void**)&m->facts, &m->facts_cap, m->n_facts + more, sizeof(opara__vc_slot)) == OPARA_OK;
}

/* Starts a new fact list at m->n_facts; the caller has reserved room. */
static uint32_t opara__mem_facts_begin(opara__mem* m) {
    m->stamp++;
    return (uint32_t)m->n_facts;
}

static void opara__mem_add_fact(opara__mem* m, uint32_t s, uint32_t q) {
    if (m->stream_stamp[s] != m->stamp) {
        m->stream_stamp[s] = m->stamp;
        m->stream_fact[s] = (uint32_t)m->n_facts;
        m->facts[m->n_facts].stream = s;
        m->facts[m->n_facts++].seq = q;
    } else if (m->facts[m->stream_fact[s]].seq < q) {
        m->facts[m->stream_fact[s]].seq = q;
    }
}

static void opara__mem_fact(opara__mem* m, uint32_t node) {
    opara__mem_add_fact(m, m->p->stream[node], m->p->stream_seq[node]);
}

static int opara__mem_knows_all(const opara__mem* m, uint32_t start, uint32_t count, const opara__vc_slot* c) {
    uint32_t i;
    for (i = 0; i < count; ++i)
        if (!opara__vc_knows(c, m->walk.k, m->facts[start + i].stream, m->facts[start + i].seq)) return 0;
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

static int opara__seg_usable(const opara__mem* m, uint32_t id, const opara__vc_slot* c) {
    const opara__seg* s = &m->segs[id];
    if (s->state != OPARA__SEG_RETIRED || m->p->desc.no_memory_reuse) return 0;
    return opara__mem_knows_all(m, s->facts, s->n_facts, c);
}

/* Best run of adjacent usable segments for `size`: the smallest run prefix that fits, else the
   run that ends at the arena's top (it grows). Returns the run's first segment or UINT32_MAX. */
static uint32_t opara__seg_find(const opara__mem* m, uint64_t size, const opara__vc_slot* c) {
    uint32_t id, best = UINT32_MAX, run = UINT32_MAX, tail_run = UINT32_MAX;
    uint64_t best_size = 0, run_size = 0;
    for (id = m->seg_head; id != UINT32_MAX; id = m->segs[id].next) {
        uint64_t before;
        if (!opara__seg_usable(m, id, c)) {
            run = UINT32_MAX;
            continue;
        }
        if (run == UINT32_MAX) run = id, run_size = 0;
        before = run_size;
        run_size += m->segs[id].size;
        if (before < size && run_size >= size && (best == UINT32_MAX || run_size < best_size))
            best = run, best_size = run_size;
        if (m->segs[id].next == UINT32_MAX) tail_run = run;
    }
    return best != UINT32_MAX ? best : tail_run;
}

/* Turns the run starting at `first` into one busy segment of `size` bytes (splitting the last
   segment it covers, or growing the arena). */
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
            opara__mem_add_fact(m, m->facts[m->segs[id].facts + i].stream, m->facts[m->segs[id].facts + i].seq);
        have += m->segs[id].size;
    }
    *count = (uint32_t)m->n_facts - *start;
    return 1;
}

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

static uint32_t opara__seg_alloc(opara__mem* m, uint64_t size, const opara__vc_slot* c, uint32_t* prior_start,
                                 uint32_t* prior_count) {
    uint32_t run = opara__seg_find(m, size, c), id;
    *prior_start = *prior_count = 0;
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
    m->retired[r] = 1;
    return OPARA_OK;
}

static int opara__inplace_op(opara__op op) {
    switch (op) {
    case OPARA__OP_RELU: case OPARA__OP_LEAKY_RELU: case OPARA__OP_SIGMOID: case OPARA__OP_TANH:
    case OPARA__OP_HARD_SIGMOID: case OPARA__OP_HARD_SWISH: case OPARA__OP_CLIP: case OPARA__OP_ADD:
    case OPARA__OP_SUB: case OPARA__OP_MUL: case OPARA__OP_DIV: case OPARA__OP_POW: case OPARA__OP_SQRT:
    case OPARA__OP_ERF: case OPARA__OP_GELU: case OPARA__OP_BATCH_NORM:
        return 1;
    default: return 0;
    }
}

/* Every earlier reader and writer of root r other than v happens-before v. */
static int opara__mem_all_before(const opara__mem* m, uint32_t r, uint32_t v, const opara__vc_slot* c) {
    const opara__graph* g = m->g;
    const opara__plan* p = m->p;
    uint32_t x, k;
    for (x = m->member_head[r]; x != UINT32_MAX; x = m->member_next[x]) {
        int32_t w = g->values[x].producer;
        if (w >= 0 && (uint32_t)w != v && !opara__vc_knows(c, m->walk.k, p->stream[w], p->stream_seq[w])) return 0;
        for (k = g->consumer_start[x]; k < g->consumer_start[x + 1]; ++k) {
            uint32_t u = g->consumer_nodes[k];
            if (u != v && !opara__vc_knows(c, m->walk.k, p->stream[u], p->stream_seq[u])) return 0;
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
    if (m->p->desc.no_inplace || m->p->desc.no_memory_reuse || !opara__inplace_op(n->op) || n->n_outputs != 1) return -1;
    if (m->parent[y] >= 0 || m->pinned[y] || m->seg_of[y] != UINT32_MAX) return -1;
    for (i = 0; i < n->n_inputs; ++i) {
        int32_t x = n->inputs[i];
        uint32_t reads = 0;
        if (x < 0 || !opara__is_arena_value(g, (uint32_t)x) || m->parent[x] >= 0) continue;
        if (m->pinned[x] || m->seg_of[x] == UINT32_MAX || m->retired[x]) continue;
        if (m->p->value_bytes[x] != m->p->value_bytes[y]) continue;
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

static opara_result opara__mem_outputs(opara__mem* m, uint32_t v, const opara__vc_slot* c) {
    const opara__graph* g = m->g;
    const opara__node* n = &g->nodes[v];
    uint32_t i;
    for (i = 0; i < n->n_outputs; ++i) {
        uint32_t y = (uint32_t)n->outputs[i], r;
        int32_t src;
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
            opara__mem_unfuse(m, y);
            r = y;
        }
        m->seg_of[r] = opara__seg_alloc(m, opara__mem_align(m, m->p->value_bytes[r]), c, &m->prior_start[r],
                                        &m->prior_count[r]);
        if (m->seg_of[r] == UINT32_MAX) return OPARA_ERR_OUT_OF_MEMORY;
        m->root_offset[r] = m->segs[m->seg_of[r]].offset;
        m->p->stats.no_reuse_bytes += opara__mem_align(m, m->p->value_bytes[r]);
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
    opara__vc_set(c, m->walk.k, s, p->stream_seq[v]);
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
    r = opara__vc_walk_init(&m.walk, rt, g->n_nodes, plan->n_streams);
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
    m.stream_stamp = (uint32_t*)opara__calloc(rt, (size_t)plan->n_streams + 1, sizeof(uint32_t));
    m.stream_fact = (uint32_t*)opara__calloc(rt, (size_t)plan->n_streams + 1, sizeof(uint32_t));
    if (r == OPARA_OK && (!m.parent || !m.parent_off || !m.pending || !m.member_next || !m.member_head || !m.seg_of || !m.root_offset || !m.prior_start || !m.prior_count || !m.is_output ||
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
/* ==== END src/opara_memplan.c ==== */
/* ==== BEGIN src/opara_verify.c ==== */
/* The plan verifier. Independent of how the plan was made: it rebuilds the happens-before
   relation from the plan alone (stream order + waits, exact vector clocks of size n_streams per
   node) and checks every claim against the graph. O(V * streams + accesses * overlaps). */
/* #include "opara_sched.h" (inlined above) */

#include <stdlib.h>

#define OPARA__VERIFY_MAX_CLOCK_ENTRIES ((size_t)1 << 27)

typedef struct opara__access {
    uint64_t start, end; /* arena bytes [start, end) */
    uint32_t node;
} opara__access;

typedef struct opara__verify {
    const opara__graph* g;
    const opara__plan* p;
    uint32_t* vc;          /* [n_nodes * n_streams] */
    opara__access* writes; /* sorted by start */
    size_t n_writes;
    uint64_t max_len;
} opara__verify;

static const char* opara__vname(const opara__graph* g, uint32_t node) {
    return g->nodes[node].name && g->nodes[node].name[0] ? g->nodes[node].name : "(unnamed)";
}

#define OPARA__BAD(v, ...) opara__fail((v)->g->rt, OPARA_ERR_PLAN_INVALID, __VA_ARGS__)

/* a happens-before b (a != b). */
static int opara__hb(const opara__verify* v, uint32_t a, uint32_t b) {
    const opara__plan* p = v->p;
    return a != b && v->vc[(size_t)b * p->n_streams + p->stream[a]] >= p->stream_seq[a];
}

/* ---- structure ------------------------------------------------------------------------------- */

static opara_result opara__verify_order(opara__verify* v, uint32_t* seen) {
    const opara__graph* g = v->g;
    const opara__plan* p = v->p;
    uint32_t i, k;
    if (p->n_nodes != g->n_nodes || p->n_values != g->n_values)
        return OPARA__BAD(v, "plan is for %u nodes/%u values, graph has %u/%u", p->n_nodes, p->n_values, g->n_nodes,
                          g->n_values);
    for (i = 0; i < g->n_nodes; ++i) {
        uint32_t n = p->order[i];
        if (n >= g->n_nodes || seen[n]) return OPARA__BAD(v, "launch order: entry %u (node %u) is invalid or repeated", i, n);
        seen[n] = 1;
        if (p->position[n] != i) return OPARA__BAD(v, "position of node %u is %u, launch order has it at %u", n, p->position[n], i);
    }
    for (i = 0; i < g->n_nodes; ++i)
        for (k = g->pred_start[i]; k < g->pred_start[i + 1]; ++k)
            if (p->position[g->preds[k]] >= p->position[i])
                return OPARA__BAD(v, "launch order is not topological: node %u '%s' is launched before its input's producer %u '%s'",
                                  i, opara__vname(g, i), g->preds[k], opara__vname(g, g->preds[k]));
    return OPARA_OK;
}

static opara_result opara__verify_streams(opara__verify* v, uint32_t* count) {
    const opara__graph* g = v->g;
    const opara__plan* p = v->p;
    uint32_t i, s;
    for (s = 0; s < p->n_streams; ++s) count[s] = 0;
    for (i = 0; i < g->n_nodes; ++i) {
        uint32_t n = p->order[i], st = p->stream[n];
        if (st >= p->n_streams) return OPARA__BAD(v, "node %u '%s' is on stream %u of %u", n, opara__vname(g, n), st, p->n_streams);
        if (!count[st] && p->stream_first[st] != n) return OPARA__BAD(v, "stream %u: first node is %u, plan says %u", st, n, p->stream_first[st]);
        if (p->stream_seq[n] != ++count[st]) return OPARA__BAD(v, "node %u '%s' has rank %u on stream %u, expected %u", n, opara__vname(g, n), p->stream_seq[n], st, count[st]);
    }
    for (s = 0; s < p->n_streams; ++s) {
        if (!count[s]) return OPARA__BAD(v, "stream %u has no node", s);
        if (p->stream_seq[p->stream_last[s]] != count[s] || p->stream[p->stream_last[s]] != s)
            return OPARA__BAD(v, "stream %u: last node %u is not its last", s, p->stream_last[s]);
    }
    if (g->n_nodes && p->stream[p->order[0]] != 0) return OPARA__BAD(v, "the first launched node is not on the origin stream 0");
    return OPARA_OK;
}

static opara_result opara__verify_waits(opara__verify* v) {
    const opara__graph* g = v->g;
    const opara__plan* p = v->p;
    uint32_t n, k;
    if (p->wait_start[0] != 0) return OPARA__BAD(v, "wait lists do not start at 0");
    for (n = 0; n < g->n_nodes; ++n) {
        if (p->wait_start[n + 1] < p->wait_start[n] || p->wait_start[n + 1] > p->stats.n_waits)
            return OPARA__BAD(v, "wait list of node %u is out of range", n);
        for (k = p->wait_start[n]; k < p->wait_start[n + 1]; ++k) {
            uint32_t u = p->wait_nodes[k];
            if (u >= g->n_nodes) return OPARA__BAD(v, "node %u waits on node %u, which does not exist", n, u);
            if (p->position[u] >= p->position[n])
                return OPARA__BAD(v, "node %u '%s' waits on node %u '%s', which is launched later", n, opara__vname(g, n), u, opara__vname(g, u));
            if (p->stream[u] == p->stream[n]) return OPARA__BAD(v, "node %u '%s' waits on node %u on its own stream %u", n, opara__vname(g, n), u, p->stream[n]);
            if (!p->records_event[u]) return OPARA__BAD(v, "node %u '%s' waits on node %u '%s', which records no event", n, opara__vname(g, n), u, opara__vname(g, u));
        }
    }
    return OPARA_OK;
}

static void opara__vc_max(uint32_t* dst, const uint32_t* src, uint32_t n) {
    uint32_t i;
    for (i = 0; i < n; ++i)
        if (src[i] > dst[i]) dst[i] = src[i];
}

static void opara__verify_clocks(opara__verify* v, uint32_t* last) {
    const opara__plan* p = v->p;
    uint32_t i, k, S = p->n_streams;
    for (i = 0; i < S; ++i) last[i] = UINT32_MAX;
    for (i = 0; i < p->n_nodes; ++i) {
        uint32_t n = p->order[i], s = p->stream[n];
        uint32_t* c = v->vc + (size_t)n * S;
        if (last[s] != UINT32_MAX) memcpy(c, v->vc + (size_t)last[s] * S, S * sizeof(uint32_t));
        for (k = p->wait_start[n]; k < p->wait_start[n + 1]; ++k) opara__vc_max(c, v->vc + (size_t)p->wait_nodes[k] * S, S);
        c[s] = p->stream_seq[n];
        last[s] = n;
    }
}

/* Every stream starts after the fork (its first op waits on the fork event or on another stream's
   event) and the origin's end covers every stream's last op through the join waits. */
static opara_result opara__verify_fork_join(opara__verify* v, uint32_t* end) {
    const opara__graph* g = v->g;
    const opara__plan* p = v->p;
    uint32_t s, S = p->n_streams;
    if (!g->n_nodes) return OPARA_OK;
    memcpy(end, v->vc + (size_t)p->stream_last[0] * S, S * sizeof(uint32_t));
    for (s = 1; s < S; ++s) {
        uint32_t first = p->stream_first[s];
        if (!p->stream_fork[s] && p->wait_start[first] == p->wait_start[first + 1])
            return OPARA__BAD(v, "stream %u neither waits on the fork event nor starts with a wait", s);
        if (p->stream_join[s]) opara__vc_max(end, v->vc + (size_t)p->stream_last[s] * S, S);
    }
    for (s = 0; s < S; ++s)
        if (end[s] < p->stream_seq[p->stream_last[s]])
            return OPARA__BAD(v, "stream %u is not joined back into the origin stream", s);
    return OPARA_OK;
}

static opara_result opara__verify_deps(opara__verify* v) {
    const opara__graph* g = v->g;
    uint32_t n, k;
    for (n = 0; n < g->n_nodes; ++n)
        for (k = g->pred_start[n]; k < g->pred_start[n + 1]; ++k)
            if (!opara__hb(v, g->preds[k], n))
                return OPARA__BAD(v, "dependency %u '%s' -> %u '%s' is not enforced (streams %u -> %u, no event path)",
                                  g->preds[k], opara__vname(g, g->preds[k]), n, opara__vname(g, n),
                                  v->p->stream[g->preds[k]], v->p->stream[n]);
    return OPARA_OK;
}

/* ---- storage --------------------------------------------------------------------------------- */

static opara_result opara__verify_value(opara__verify* v, uint32_t x) {
    const opara__graph* g = v->g;
    const opara__plan* p = v->p;
    const opara__value* val = &g->values[x];
    int32_t r = p->alias_root[x];
    if (r < 0 || (uint32_t)r >= g->n_values || p->alias_root[r] != r)
        return OPARA__BAD(v, "value %u '%s': alias root %d is not a root", x, val->name, (int)r);
    if (p->storage[x] != p->storage[r]) return OPARA__BAD(v, "value %u '%s': storage differs from its root's", x, val->name);
    if (val->kind != OPARA__VALUE_ACTIVATION && r != (int32_t)x)
        return OPARA__BAD(v, "graph input or constant %u '%s' is aliased into value %d", x, val->name, (int)r);
    if (val->kind == OPARA__VALUE_ACTIVATION && val->producer >= 0 && p->storage[x] != OPARA__STORAGE_ARENA &&
        p->storage[x] != OPARA__STORAGE_EXTERNAL)
        return OPARA__BAD(v, "value %u '%s' has no storage", x, val->name);
    if (p->storage[x] == OPARA__STORAGE_EXTERNAL && g->values[r].kind == OPARA__VALUE_ACTIVATION)
        return OPARA__BAD(v, "value %u '%s' is external but its root %d is an activation", x, val->name, (int)r);
    if (p->value_bytes[x] > 0 && !opara__range_ok(p->alias_offset[x], p->value_bytes[x], p->value_bytes[r]))
        return OPARA__BAD(v, "value %u '%s' (%llu bytes at +%llu) does not fit its root '%s' (%llu bytes)", x, val->name,
                          (unsigned long long)p->value_bytes[x], (unsigned long long)p->alias_offset[x],
                          g->values[r].name, (unsigned long long)p->value_bytes[r]);
    if (p->storage[x] == OPARA__STORAGE_ARENA) {
        if (p->offset[x] != p->offset[r] + p->alias_offset[x])
            return OPARA__BAD(v, "value %u '%s': offset is not its root's plus its alias offset", x, val->name);
        if (p->offset[x] % p->alignment && r == (int32_t)x)
            return OPARA__BAD(v, "value %u '%s' is misaligned", x, val->name);
        if (!opara__range_ok(p->offset[x], p->value_bytes[x], p->arena_bytes))
            return OPARA__BAD(v, "value %u '%s' (%llu bytes at %llu) lies outside the arena of %llu bytes", x, val->name,
                              (unsigned long long)p->value_bytes[x], (unsigned long long)p->offset[x],
                              (unsigned long long)p->arena_bytes);
    }
    return OPARA_OK;
}

static uint64_t opara__concat_slice(const opara__plan* p, const opara__node* n, uint32_t input_index) {
    uint64_t off = 0;
    uint32_t i;
    for (i = 0; i < input_index; ++i) off += n->inputs[i] >= 0 ? p->value_bytes[n->inputs[i]] : 0;
    return off;
}

OPARA__PRIVATE int opara__plan_concat_input_in_place(const opara__graph* g, const opara__plan* plan, uint32_t node,
                                                    uint32_t input_index) {
    const opara__node* n;
    int32_t x, y;
    if (node >= g->n_nodes) return 0;
    n = &g->nodes[node];
    if (n->op != OPARA__OP_CONCAT || input_index >= n->n_inputs || n->n_outputs < 1) return 0;
    x = n->inputs[input_index];
    y = n->outputs[0];
    if (x < 0 || y < 0 || plan->storage[x] != OPARA__STORAGE_ARENA || plan->storage[y] != OPARA__STORAGE_ARENA) return 0;
    return plan->alias_kind[x] == OPARA__ALIAS_CONCAT && plan->alias_root[x] == plan->alias_root[y] &&
           plan->offset[x] == plan->offset[y] + opara__concat_slice(plan, n, input_index);
}

static int opara__concat_any_in_place(const opara__verify* v, uint32_t node) {
    uint32_t i;
    for (i = 0; i < v->g->nodes[node].n_inputs; ++i)
        if (opara__plan_concat_input_in_place(v->g, v->p, node, i)) return 1;
    return 0;
}

static int opara__is_view_alias(const opara__verify* v, uint32_t x) {
    int32_t prod = v->g->values[x].producer;
    return prod >= 0 && v->p->alias_kind[x] == OPARA__ALIAS_VIEW && opara__op_is_view(v->g->nodes[prod].op) &&
           v->g->nodes[prod].n_inputs >= 1 && v->g->nodes[prod].inputs[0] >= 0 &&
           v->p->alias_root[x] == v->p->alias_root[v->g->nodes[prod].inputs[0]] &&
           v->p->alias_offset[x] == v->p->alias_offset[v->g->nodes[prod].inputs[0]];
}

static opara_result opara__add_write(opara__verify* v, uint32_t node, uint64_t start, uint64_t len) {
    if (!len) return OPARA_OK;
    v->writes[v->n_writes].start = start;
    v->writes[v->n_writes].end = start + len;
    v->writes[v->n_writes++].node = node;
    if (len > v->max_len) v->max_len = len;
    return OPARA_OK;
}

/* The bytes each node writes: outputs, except views (none) and a Concat's in-place inputs. */
static void opara__collect_writes(opara__verify* v) {
    const opara__graph* g = v->g;
    const opara__plan* p = v->p;
    uint32_t n, i;
    for (n = 0; n < g->n_nodes; ++n) {
        const opara__node* nd = &g->nodes[n];
        for (i = 0; i < nd->n_outputs; ++i) {
            int32_t y = nd->outputs[i];
            if (y < 0 || p->storage[y] != OPARA__STORAGE_ARENA || opara__is_view_alias(v, (uint32_t)y)) continue;
            if (nd->op == OPARA__OP_CONCAT && i == 0 && opara__concat_any_in_place(v, n)) {
                uint32_t k;
                for (k = 0; k < nd->n_inputs; ++k)
                    if (nd->inputs[k] >= 0 && !opara__plan_concat_input_in_place(g, p, n, k))
                        opara__add_write(v, n, p->offset[y] + opara__concat_slice(p, nd, k), p->value_bytes[nd->inputs[k]]);
                continue;
            }
            opara__add_write(v, n, p->offset[y], p->value_bytes[y]);
        }
    }
}

static int opara__access_cmp(const void* a, const void* b) {
    const opara__access* x = (const opara__access*)a;
    const opara__access* y = (const opara__access*)b;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    return x->node < y->node ? -1 : x->node > y->node;
}

/* First write whose start could overlap [start, ...): writes are sorted, none is longer than max_len. */
static size_t opara__first_write(const opara__verify* v, uint64_t start) {
    uint64_t from = start > v->max_len ? start - v->max_len : 0;
    size_t lo = 0, hi = v->n_writes;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v->writes[mid].start < from) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

static opara_result opara__verify_races(opara__verify* v) {
    const opara__graph* g = v->g;
    size_t i, j;
    for (i = 0; i < v->n_writes; ++i) {
        const opara__access* a = &v->writes[i];
        for (j = i + 1; j < v->n_writes && v->writes[j].start < a->end; ++j) {
            const opara__access* b = &v->writes[j];
            if (b->node == a->node || opara__hb(v, a->node, b->node) || opara__hb(v, b->node, a->node)) continue;
            return OPARA__BAD(v, "nodes %u '%s' and %u '%s' run unordered and both write arena bytes [%llu, %llu)", a->node,
                              opara__vname(g, a->node), b->node, opara__vname(g, b->node),
                              (unsigned long long)OPARA__MAX(a->start, b->start),
                              (unsigned long long)OPARA__MIN(a->end, b->end));
        }
    }
    return OPARA_OK;
}

/* Node r (or the end of the run, r = UINT32_MAX) reads bytes [start, start+len) written by w:
   every other write to them must come before w or after r. */
static opara_result opara__verify_piece(opara__verify* v, uint32_t r, uint32_t w, uint64_t start, uint64_t len,
                                        int r_writes_in_place) {
    const opara__graph* g = v->g;
    size_t i;
    uint64_t end = start + len;
    if (!len) return OPARA_OK;
    for (i = opara__first_write(v, start); i < v->n_writes && v->writes[i].start < end; ++i) {
        const opara__access* a = &v->writes[i];
        if (a->end <= start || a->node == w) continue;
        if (a->node == r && r_writes_in_place) continue;
        if (opara__hb(v, a->node, w)) continue;
        if (r != UINT32_MAX && opara__hb(v, r, a->node)) continue;
        if (r == UINT32_MAX)
            return OPARA__BAD(v, "graph output bytes [%llu, %llu) written by node %u '%s' are overwritten by node %u '%s' before the end",
                              (unsigned long long)OPARA__MAX(start, a->start), (unsigned long long)OPARA__MIN(end, a->end),
                              w, opara__vname(g, w), a->node, opara__vname(g, a->node));
        return OPARA__BAD(v, "node %u '%s' reads arena bytes [%llu, %llu) written by node %u '%s', but node %u '%s' may overwrite them in between",
                          r, opara__vname(g, r), (unsigned long long)OPARA__MAX(start, a->start),
                          (unsigned long long)OPARA__MIN(end, a->end), w, opara__vname(g, w), a->node,
                          opara__vname(g, a->node));
    }
    return OPARA_OK;
}

/* The pieces of value x's bytes and who wrote them; checks the read of each by r. */
static opara_result opara__verify_read(opara__verify* v, uint32_t r, uint32_t x, int in_place, uint32_t depth) {
    const opara__graph* g = v->g;
    const opara__plan* p = v->p;
    int32_t prod = g->values[x].producer;
    const opara__node* pn;
    uint32_t i;
    if (p->storage[x] != OPARA__STORAGE_ARENA || prod < 0) return OPARA_OK;
    if (depth > g->n_values) return OPARA__BAD(v, "value %u '%s': alias chain has a cycle", x, g->values[x].name);
    pn = &g->nodes[prod];
    if (opara__is_view_alias(v, x)) return opara__verify_read(v, r, (uint32_t)pn->inputs[0], in_place, depth + 1);
    if (pn->op == OPARA__OP_CONCAT && opara__concat_any_in_place(v, (uint32_t)prod)) {
        for (i = 0; i < pn->n_inputs; ++i) {
            opara_result res;
            if (pn->inputs[i] < 0) continue;
            if (opara__plan_concat_input_in_place(g, p, (uint32_t)prod, i))
                res = opara__verify_read(v, r, (uint32_t)pn->inputs[i], in_place, depth + 1);
            else
                res = opara__verify_piece(v, r, (uint32_t)prod, p->offset[x] + opara__concat_slice(p, pn, i),
                                          p->value_bytes[pn->inputs[i]], in_place);
            if (res != OPARA_OK) return res;
        }
        return OPARA_OK;
    }
    return opara__verify_piece(v, r, (uint32_t)prod, p->offset[x], p->value_bytes[x], in_place);
}

/* Node n overwrites its input x in place (its output shares x's root). */
static int opara__writes_over_input(const opara__verify* v, uint32_t n, uint32_t x) {
    const opara__node* nd = &v->g->nodes[n];
    uint32_t i;
    for (i = 0; i < nd->n_outputs; ++i) {
        int32_t y = nd->outputs[i];
        if (y >= 0 && v->p->alias_kind[y] == OPARA__ALIAS_INPLACE && v->p->alias_root[y] == v->p->alias_root[x] &&
            v->p->offset[y] == v->p->offset[x])
            return 1;
    }
    return 0;
}

static opara_result opara__verify_reads(opara__verify* v) {
    const opara__graph* g = v->g;
    uint32_t n, i;
    opara_result r;
    for (n = 0; n < g->n_nodes; ++n) {
        const opara__node* nd = &g->nodes[n];
        if (opara__op_is_view(nd->op) && nd->n_outputs >= 1 && nd->outputs[0] >= 0 &&
            opara__is_view_alias(v, (uint32_t)nd->outputs[0]))
            continue; /* a view reads nothing */
        for (i = 0; i < nd->n_inputs; ++i) {
            int32_t x = nd->inputs[i];
            if (x < 0 || (nd->op == OPARA__OP_CONCAT && opara__plan_concat_input_in_place(g, v->p, n, i))) continue;
            r = opara__verify_read(v, n, (uint32_t)x, opara__writes_over_input(v, n, (uint32_t)x), 0);
            if (r != OPARA_OK) return r;
        }
    }
    for (i = 0; i < g->n_outputs; ++i) {
        r = opara__verify_read(v, UINT32_MAX, (uint32_t)g->outputs[i], 0, 0);
        if (r != OPARA_OK) return r;
    }
    return OPARA_OK;
}

static opara_result opara__verify_memory(opara__verify* v) {
    const opara__graph* g = v->g;
    uint32_t x;
    size_t max_writes = 0;
    opara_result r;
    for (x = 0; x < g->n_values; ++x) {
        r = opara__verify_value(v, x);
        if (r != OPARA_OK) return r;
    }
    for (x = 0; x < g->n_nodes; ++x) max_writes += (size_t)g->nodes[x].n_outputs + g->nodes[x].n_inputs;
    v->writes = (opara__access*)opara__calloc(g->rt, max_writes + 1, sizeof(opara__access));
    if (!v->writes) return opara__fail(g->rt, OPARA_ERR_OUT_OF_MEMORY, "verifier: out of memory");
    opara__collect_writes(v);
    if (v->n_writes > 1) qsort(v->writes, v->n_writes, sizeof(opara__access), opara__access_cmp);
    r = opara__verify_races(v);
    if (r == OPARA_OK) r = opara__verify_reads(v);
    return r;
}

OPARA__PRIVATE opara_result opara__plan_verify(const opara__graph* g, const opara__plan* plan) {
    opara__verify v;
    uint32_t* scratch;
    size_t entries;
    opara_result r;
    if (!g || !plan) return g ? opara__fail(g->rt, OPARA_ERR_INVALID_ARGS, "verify: NULL plan") : OPARA_ERR_INVALID_ARGS;
    if (!g->finalized) return opara__fail(g->rt, OPARA_ERR_INVALID_STATE, "verify: the graph is not finalized");
    memset(&v, 0, sizeof v);
    v.g = g;
    v.p = plan;
    if (!opara__mul_size(g->n_nodes, plan->n_streams, &entries) || entries > OPARA__VERIFY_MAX_CLOCK_ENTRIES)
        return opara__fail(g->rt, OPARA_ERR_LIMIT_EXCEEDED, "verify: %u nodes x %u streams is too many clock entries",
                           g->n_nodes, plan->n_streams);
    scratch = (uint32_t*)opara__calloc(g->rt, (size_t)g->n_nodes + plan->n_streams + 1, sizeof(uint32_t));
    v.vc = (uint32_t*)opara__calloc(g->rt, entries + 1, sizeof(uint32_t));
    if (!scratch || !v.vc) {
        opara__free(g->rt, scratch);
        opara__free(g->rt, v.vc);
        return opara__fail(g->rt, OPARA_ERR_OUT_OF_MEMORY, "verify: out of memory");
    }
    r = opara__verify_order(&v, scratch);
    if (r == OPARA_OK) r = opara__verify_streams(&v, scratch);
    if (r == OPARA_OK) r = opara__verify_waits(&v);
    if (r == OPARA_OK) {
        opara__verify_clocks(&v, scratch);
        r = opara__verify_fork_join(&v, scratch);
    }
    if (r == OPARA_OK) r = opara__verify_deps(&v);
    if (r == OPARA_OK) r = opara__verify_memory(&v);
    opara__free(g->rt, scratch);
    opara__free(g->rt, v.vc);
    opara__free(g->rt, v.writes);
    return r;
}
/* ==== END src/opara_verify.c ==== */
/* ==== BEGIN src/opara_backend_cpu.c ==== */
/* The CPU executor: the plan's streams become worker threads, its events per-node completion
   marks, its arena one allocation; large operators are split across idle workers. */
/* #include "opara_cpu.h" (inlined above) */

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
/* ==== END src/opara_backend_cpu.c ==== */
/* ==== BEGIN src/opara_session.c ==== */
/* The public session API: shapes for the batch size, the plan, the backend (CPU for now), runs
   with caller tensors, plan queries and run statistics. */
/* #include "opara_cpu.h" (inlined above) */
/* #include "opara_model.h" (inlined above) */

#if !defined(_WIN32)
#  include <dlfcn.h>
#endif

struct opara_session {
    opara_runtime* rt;
    const opara__graph* g;
    opara_logger logger;
    opara__errbuf error;
    opara_strategy strategy;
    opara__shape* shapes;
    opara_dtype* dtypes;
    uint64_t* value_bytes;
    opara__op_desc* descs;
    opara__plan* plan;
    opara__cpu_exec* exec;
    uint8_t* given; /* [n_inputs] scratch of run: which inputs were supplied */
    volatile int32_t busy;
    opara_run_stats stats;
};

static opara_result opara__session_fail(opara_session* s, opara_result code, const char* fmt, ...) OPARA__PRINTF(3, 4);
static opara_result opara__session_fail(opara_session* s, opara_result code, const char* fmt, ...) {
    va_list args;
    opara_result r;
    va_start(args, fmt);
    r = opara__fail_into(&s->error, &s->logger, code, fmt, args);
    va_end(args);
    return r;
}

/* Why the CUDA backend cannot be used on this machine. */
static void opara__cuda_unavailable_reason(char* buf, size_t cap) {
#if defined(_WIN32)
    opara__format(buf, cap, "the CUDA backend is not part of this build yet");
#else
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        opara__format(buf, cap, "libcuda.so.1 could not be loaded (no NVIDIA driver)");
        return;
    }
    dlclose(lib);
    opara__format(buf, cap, "the CUDA backend is not part of this build yet");
#endif
}

static opara_result opara__session_pick_backend(opara_runtime* rt, const opara_session_desc* d) {
    char reason[256];
    if (d->backend == OPARA_BACKEND_CPU) return OPARA_OK;
    if (d->backend != OPARA_BACKEND_AUTO && d->backend != OPARA_BACKEND_CUDA)
        return opara__fail(rt, OPARA_ERR_BAD_ENUM, "session: unknown backend %d", (int)d->backend);
    opara__cuda_unavailable_reason(reason, sizeof reason);
    if (d->backend == OPARA_BACKEND_CUDA)
        return opara__fail(rt, OPARA_ERR_NO_BACKEND, "CUDA backend unavailable: %s", reason);
    opara__log(d->logger.func ? &d->logger : &rt->logger, OPARA_LOG_INFO, OPARA_LOGITEM_BACKEND_FALLBACK,
               "CUDA backend unavailable: %s; using the CPU backend", reason);
    return OPARA_OK;
}

static opara_result opara__session_plan(opara_session* s, const opara_session_desc* d) {
    const opara__graph* g = s->g;
    opara__plan_desc pd;
    opara_result r;
    int64_t batch = d->batch_size > 0 ? d->batch_size : 1;
    size_t nv = g->n_values ? g->n_values : 1, nn = g->n_nodes ? g->n_nodes : 1;
    s->shapes = (opara__shape*)opara__calloc(s->rt, nv, sizeof *s->shapes);
    s->dtypes = (opara_dtype*)opara__calloc(s->rt, nv, sizeof *s->dtypes);
    s->value_bytes = (uint64_t*)opara__calloc(s->rt, nv, sizeof *s->value_bytes);
    s->descs = (opara__op_desc*)opara__calloc(s->rt, nn, sizeof *s->descs);
    s->given = (uint8_t*)opara__calloc(s->rt, g->n_inputs ? g->n_inputs : 1, 1);
    if (!s->shapes || !s->dtypes || !s->value_bytes || !s->descs || !s->given)
        return opara__fail(s->rt, OPARA_ERR_OUT_OF_MEMORY, "session: out of memory");
    if (d->batch_size < 0) return opara__fail(s->rt, OPARA_ERR_INVALID_ARGS, "session: negative batch size");
    r = opara__infer_shapes(s->rt, g, batch, s->shapes);
    if (r == OPARA_OK) r = opara__infer_dtypes(s->rt, g, s->dtypes);
    if (r == OPARA_OK) r = opara__value_bytes_from_shapes(g, s->shapes, s->value_bytes);
    if (r == OPARA_OK) r = opara__describe_ops(g, s->shapes, NULL, s->descs);
    if (r != OPARA_OK) return r;
    memset(&pd, 0, sizeof pd);
    pd.strategy = d->strategy;
    pd.launch_order = d->launch_order;
    pd.shapes = s->shapes;
    pd.verify = d->verify_plan;
    s->strategy = d->strategy;
    return opara__plan_create(g, s->value_bytes, s->descs, NULL, &pd, &s->plan);
}

OPARADEF opara_result opara_session_create(opara_runtime* runtime, const opara_model* model,
                                           const opara_session_desc* desc, opara_session** out) {
    opara_session_desc d;
    opara_session* s;
    opara_result r;
    char err[OPARA__DETAIL_MAX];
    uint32_t threads;
    if (out) *out = NULL;
    if (!runtime || !model || !out) return runtime ? opara__fail(runtime, OPARA_ERR_INVALID_ARGS, "session: NULL argument")
                                                   : OPARA_ERR_INVALID_ARGS;
    memset(&d, 0, sizeof d);
    if (desc) d = *desc;
    if ((unsigned)d.strategy >= (unsigned)OPARA_STRATEGY_COUNT || (unsigned)d.launch_order >= (unsigned)OPARA_LAUNCH_COUNT)
        return opara__fail(runtime, OPARA_ERR_BAD_ENUM, "session: unknown strategy or launch order");
    r = opara__session_pick_backend(runtime, &d);
    if (r != OPARA_OK) return r;
    s = (opara_session*)opara__calloc(runtime, 1, sizeof *s);
    if (!s) return opara__fail(runtime, OPARA_ERR_OUT_OF_MEMORY, "session: out of memory");
    s->rt = runtime;
    s->g = opara__model_graph(model);
    s->logger = d.logger.func ? d.logger : runtime->logger;
    r = opara__session_plan(s, &d);
    threads = d.threads ? d.threads : (uint32_t)opara__cpu_count();
    if (r == OPARA_OK) {
        r = opara__cpu_exec_create(runtime, s->g, s->plan, s->shapes, s->dtypes, threads, d.builtin_gemm, err,
                                   sizeof err, &s->exec);
        if (r != OPARA_OK) opara__fail(runtime, r, "session: %s", err);
    }
    if (r != OPARA_OK) {
        opara_session_destroy(s);
        return r;
    }
    *out = s;
    return OPARA_OK;
}

OPARADEF void opara_session_destroy(opara_session* s) {
    if (!s) return;
    opara__cpu_exec_destroy(s->exec);
    if (s->plan) opara__plan_free(s->rt, s->plan);
    opara__free(s->rt, s->shapes);
    opara__free(s->rt, s->dtypes);
    opara__free(s->rt, s->value_bytes);
    opara__free(s->rt, s->descs);
    opara__free(s->rt, s->given);
    opara__free(s->rt, s);
}

OPARADEF uint32_t opara_session_input_count(const opara_session* s) { return s ? s->g->n_inputs : 0; }
OPARADEF uint32_t opara_session_output_count(const opara_session* s) { return s ? s->g->n_outputs : 0; }

static void opara__session_info(const opara_session* s, int32_t v, opara_tensor_info* out) {
    int32_t i;
    memset(out, 0, sizeof *out);
    out->name = s->g->values[v].name;
    out->dtype = s->dtypes[v];
    out->rank = s->shapes[v].ndim;
    for (i = 0; i < s->shapes[v].ndim; ++i) out->dims[i] = s->shapes[v].dims[i];
}

OPARADEF opara_result opara_session_input_info(const opara_session* s, uint32_t index, opara_tensor_info* out) {
    if (!s || !out || index >= s->g->n_inputs) return OPARA_ERR_NOT_FOUND;
    opara__session_info(s, s->g->inputs[index], out);
    return OPARA_OK;
}

OPARADEF opara_result opara_session_output_info(const opara_session* s, uint32_t index, opara_tensor_info* out) {
    if (!s || !out || index >= s->g->n_outputs) return OPARA_ERR_NOT_FOUND;
    opara__session_info(s, s->g->outputs[index], out);
    return OPARA_OK;
}

/* Position of the tensor in list (graph inputs or outputs) by name, or by `fallback` index. */
static int32_t opara__session_match(const opara_session* s, const int32_t* list, uint32_t n, const char* name,
                                    uint32_t fallback) {
    uint32_t i;
    if (!name) return fallback < n ? (int32_t)fallback : -1;
    for (i = 0; i < n; ++i)
        if (strcmp(s->g->values[list[i]].name, name) == 0) return (int32_t)i;
    return -1;
}

static opara_result opara__session_check_tensor(opara_session* s, const opara_tensor* t, int32_t v, const char* what) {
    const opara__shape* sh = &s->shapes[v];
    int32_t i;
    if (t->dtype != s->dtypes[v])
        return opara__session_fail(s, OPARA_ERR_BAD_DTYPE, "%s '%s' is %s, the model wants %s", what, s->g->values[v].name,
                                   opara_dtype_name(t->dtype), opara_dtype_name(s->dtypes[v]));
    if (t->rank != sh->ndim) goto bad_shape;
    for (i = 0; i < sh->ndim; ++i)
        if (t->dims[i] != sh->dims[i]) goto bad_shape;
    if (!t->data && s->value_bytes[v])
        return opara__session_fail(s, OPARA_ERR_INVALID_ARGS, "%s '%s' has no data", what, s->g->values[v].name);
    return OPARA_OK;
bad_shape: {
        char want[160];
        return opara__session_fail(s, OPARA_ERR_SHAPE, "%s '%s' has the wrong shape: the session wants %s", what,
                                   s->g->values[v].name, opara__shape_str(sh, want, sizeof want));
    }
}

static opara_result opara__session_inputs(opara_session* s, const opara_tensor* inputs, uint32_t n) {
    const opara__graph* g = s->g;
    uint32_t i;
    opara_result r;
    memset(s->given, 0, g->n_inputs ? g->n_inputs : 1);
    for (i = 0; i < n; ++i) {
        int32_t at = opara__session_match(s, g->inputs, g->n_inputs, inputs[i].name, i), v;
        if (at < 0) return opara__session_fail(s, OPARA_ERR_NOT_FOUND, "the model has no input '%s'",
                                               inputs[i].name ? inputs[i].name : "(by index)");
        v = g->inputs[at];
        r = opara__session_check_tensor(s, &inputs[i], v, "input");
        if (r != OPARA_OK) return r;
        if (s->given[at]) return opara__session_fail(s, OPARA_ERR_INVALID_ARGS, "input '%s' given twice", g->values[v].name);
        s->given[at] = 1;
        if (s->value_bytes[v]) memcpy(opara__cpu_exec_value_data(s->exec, v), inputs[i].data, (size_t)s->value_bytes[v]);
    }
    for (i = 0; i < g->n_inputs; ++i)
        if (!s->given[i]) return opara__session_fail(s, OPARA_ERR_INVALID_ARGS, "input '%s' is missing",
                                                     g->values[g->inputs[i]].name);
    return OPARA_OK;
}

static opara_result opara__session_outputs(opara_session* s, opara_tensor* outputs, uint32_t n) {
    const opara__graph* g = s->g;
    uint32_t i;
    for (i = 0; i < n; ++i) {
        int32_t at = opara__session_match(s, g->outputs, g->n_outputs, outputs[i].name, i), v;
        opara_result r;
        if (at < 0) return opara__session_fail(s, OPARA_ERR_NOT_FOUND, "the model has no output '%s'",
                                               outputs[i].name ? outputs[i].name : "(by index)");
        v = g->outputs[at];
        r = opara__session_check_tensor(s, &outputs[i], v, "output");
        if (r != OPARA_OK) return r;
        if (s->value_bytes[v]) memcpy(outputs[i].data, opara__cpu_exec_value_data(s->exec, v), (size_t)s->value_bytes[v]);
    }
    return OPARA_OK;
}

OPARADEF opara_result opara_session_run(opara_session* s, const opara_tensor* inputs, uint32_t n_inputs,
                                        opara_tensor* outputs, uint32_t n_outputs) {
    opara_result r;
    uint64_t t0;
    char err[OPARA__DETAIL_MAX];
    if (!s) return OPARA_ERR_INVALID_ARGS;
    if (!opara__atomic_cas(&s->busy, 0, 1)) return OPARA_ERR_BUSY; /* the detail belongs to the running call */
    t0 = opara__now_ns();
    if ((n_inputs && !inputs) || (n_outputs && !outputs)) r = opara__session_fail(s, OPARA_ERR_INVALID_ARGS, "run: NULL tensors");
    else r = opara__session_inputs(s, inputs, n_inputs);
    if (r == OPARA_OK) {
        r = opara__cpu_exec_run(s->exec, err, sizeof err);
        if (r != OPARA_OK) opara__session_fail(s, r, "run: %s", err);
    }
    if (r == OPARA_OK) r = opara__session_outputs(s, outputs, n_outputs);
    if (r == OPARA_OK) {
        uint64_t dt = opara__now_ns() - t0;
        s->stats.last_ns = dt;
        s->stats.min_ns = s->stats.runs == 0 || dt < s->stats.min_ns ? dt : s->stats.min_ns;
        s->stats.total_ns += dt;
        s->stats.runs++;
        s->error.text[0] = 0;
    }
    opara__atomic_store(&s->busy, 0);
    return r;
}

OPARADEF const void* opara_session_output_data(const opara_session* s, uint32_t index) {
    if (!s || index >= s->g->n_outputs) return NULL;
    return opara__cpu_exec_value_data(s->exec, s->g->outputs[index]);
}

OPARADEF opara_result opara_session_get_plan_info(const opara_session* s, opara_plan_info* out) {
    if (!s || !out) return OPARA_ERR_INVALID_ARGS;
    memset(out, 0, sizeof *out);
    out->backend = "cpu";
    out->strategy = opara_strategy_name(s->strategy);
    out->gemm = opara__cpu_exec_gemm_name(s->exec);
    out->n_nodes = s->plan->n_nodes;
    out->n_streams = s->plan->n_streams;
    out->n_events = s->plan->stats.n_events;
    out->n_waits = s->plan->stats.n_waits;
    out->n_workers = opara__cpu_exec_workers(s->exec);
    out->peak_memory_bytes = s->plan->arena_bytes;
    out->no_reuse_bytes = s->plan->stats.no_reuse_bytes;
    return OPARA_OK;
}

OPARADEF opara_result opara_session_get_run_stats(const opara_session* s, opara_run_stats* out) {
    if (!s || !out) return OPARA_ERR_INVALID_ARGS;
    *out = s->stats;
    return OPARA_OK;
}

OPARADEF uint32_t opara_session_get_node_times(const opara_session* s, opara_node_time* out, uint32_t cap) {
    const uint64_t *start, *end;
    const uint32_t* worker;
    uint32_t i;
    if (!s) return 0;
    opara__cpu_exec_node_times(s->exec, &start, &end, &worker);
    for (i = 0; out && i < cap && i < s->plan->n_nodes; ++i) {
        uint32_t n = s->plan->order[i];
        out[i].start_ns = start[n];
        out[i].end_ns = end[n];
        out[i].worker = worker[n];
        out[i].node = n;
    }
    return s->plan->n_nodes;
}

OPARADEF const char* opara_session_last_error(const opara_session* s) { return s ? s->error.text : ""; }
/* ==== END src/opara_session.c ==== */
/* ==== BEGIN src/opara_pb.h ==== */
/* Protobuf wire-format reader and the decoder of the ONNX messages the importer needs
   (ModelProto, GraphProto, NodeProto, TensorProto, AttributeProto, ValueInfoProto, TypeProto,
   OperatorSetIdProto). The decoded structs point into the caller's buffer for bulk bytes
   (raw_data) and keep everything else (strings, arrays) in a pool. Every failure names the
   field path, e.g. "graph.node[12].attribute[2]: truncated varint". */
#ifndef OPARA_PB_H
#define OPARA_PB_H

/* #include "opara_ir.h" (inlined above) */

/* ---- wire level ------------------------------------------------------------------------------ */

typedef enum opara__pb_status {
    OPARA__PB_OK = 0,
    OPARA__PB_END,
    OPARA__PB_TRUNCATED_VARINT,
    OPARA__PB_VARINT_OVERFLOW,
    OPARA__PB_TRUNCATED,       /* a fixed-size value or a length-delimited payload runs past its parent */
    OPARA__PB_GROUP,           /* wire types 3/4 (groups) are rejected */
    OPARA__PB_BAD_WIRE_TYPE,   /* wire type 6/7, or a known field with the wrong wire type */
    OPARA__PB_BAD_FIELD_NUMBER,
    OPARA__PB_BAD_PACKED       /* a packed payload whose size is not a multiple of the element size */
} opara__pb_status;

enum { OPARA__PB_WIRE_VARINT = 0, OPARA__PB_WIRE_FIXED64 = 1, OPARA__PB_WIRE_LEN = 2, OPARA__PB_WIRE_FIXED32 = 5 };

typedef struct opara__pb_reader {
    const uint8_t* p;
    const uint8_t* end;
} opara__pb_reader;

typedef struct opara__pb_field {
    uint32_t number;
    uint32_t wire;
    uint64_t u;          /* value of a varint, fixed32 or fixed64 field */
    const uint8_t* data; /* payload of a length-delimited field (inside the parent's bounds) */
    size_t size;
} opara__pb_field;

/* Element encodings of repeated scalar fields. */
typedef enum opara__pb_scalar {
    OPARA__PB_VARINT_I64, /* int64/uint64/int32/enum varints, stored as int64 */
    OPARA__PB_VARINT_I32, /* int32 varints, stored truncated to int32 */
    OPARA__PB_FIXED32_F32,
    OPARA__PB_FIXED64_F64,
    OPARA__PB_VARINT_U64
} opara__pb_scalar;

OPARA__PRIVATE const char* opara__pb_status_text(opara__pb_status status);
OPARA__PRIVATE opara__pb_status opara__pb_read_varint(const uint8_t** p, const uint8_t* end, uint64_t* out);
OPARA__PRIVATE void opara__pb_reader_init(opara__pb_reader* r, const uint8_t* data, size_t size);
/* Reads the next field of r. OPARA__PB_END at the end of the message. Unknown fields are
   returned too; the caller ignores them (their payload was already bounds-checked). */
OPARA__PRIVATE opara__pb_status opara__pb_next(opara__pb_reader* r, opara__pb_field* f);
/* Number of elements one occurrence of a repeated scalar field holds (packed or unpacked). */
OPARA__PRIVATE opara__pb_status opara__pb_scalar_count(const opara__pb_field* f, opara__pb_scalar kind, size_t* count);
/* Appends the elements of one occurrence to out (an array of the kind's C type) at *index. */
OPARA__PRIVATE opara__pb_status opara__pb_scalar_unpack(const opara__pb_field* f, opara__pb_scalar kind, void* out,
                                                      size_t* index);

/* ---- ONNX messages --------------------------------------------------------------------------- */

typedef struct opara__pb_bytes {
    const uint8_t* data;
    size_t size;
} opara__pb_bytes;

typedef struct opara__onnx_kv {
    const char* key;
    const char* value;
} opara__onnx_kv;

typedef struct opara__onnx_tensor {
    const char* name;
    int32_t data_type;
    uint32_t n_dims;
    int64_t* dims;
    int has_raw;
    opara__pb_bytes raw;
    float* float_data;
    size_t n_float;
    int32_t* int32_data;
    size_t n_int32;
    int64_t* int64_data;
    size_t n_int64;
    double* double_data;
    size_t n_double;
    uint64_t* uint64_data;
    size_t n_uint64;
    size_t n_string;
    int32_t data_location; /* 0 DEFAULT, 1 EXTERNAL */
    uint32_t n_external;
    opara__onnx_kv* external;
    int has_segment;
} opara__onnx_tensor;

enum {
    OPARA__ONNX_ATTR_FLOAT = 1, OPARA__ONNX_ATTR_INT = 2, OPARA__ONNX_ATTR_STRING = 3, OPARA__ONNX_ATTR_TENSOR = 4,
    OPARA__ONNX_ATTR_GRAPH = 5, OPARA__ONNX_ATTR_FLOATS = 6, OPARA__ONNX_ATTR_INTS = 7, OPARA__ONNX_ATTR_STRINGS = 8
};

typedef struct opara__onnx_attr {
    const char* name;
    int32_t type; /* the AttributeType enum above; 0 when the file leaves it out (IR < 2) */
    int has_f, has_i, has_s, has_g;
    float f;
    int64_t i;
    opara__pb_bytes s;
    opara__onnx_tensor* t;
    float* floats;
    uint32_t n_floats;
    int64_t* ints;
    uint32_t n_ints;
    opara__pb_bytes* strings;
    uint32_t n_strings;
} opara__onnx_attr;

typedef struct opara__onnx_dim {
    int has_value;
    int64_t value;
    const char* param; /* NULL when absent */
} opara__onnx_dim;

typedef struct opara__onnx_value_info {
    const char* name;
    int is_tensor;  /* type.tensor_type present */
    int32_t elem_type;
    int has_shape;
    uint32_t n_dims;
    opara__onnx_dim* dims;
} opara__onnx_value_info;

typedef struct opara__onnx_node {
    const char* name;
    const char* op_type;
    const char* domain;
    uint32_t n_inputs, n_outputs, n_attrs;
    const char** inputs;
    const char** outputs;
    opara__onnx_attr* attrs;
} opara__onnx_node;

typedef struct opara__onnx_graph {
    const char* name;
    uint32_t n_nodes, n_initializers, n_inputs, n_outputs, n_value_infos, n_sparse_initializers;
    opara__onnx_node* nodes;
    opara__onnx_tensor* initializers;
    opara__onnx_value_info* inputs;
    opara__onnx_value_info* outputs;
    opara__onnx_value_info* value_infos;
} opara__onnx_graph;

typedef struct opara__onnx_opset {
    const char* domain;
    int64_t version;
} opara__onnx_opset;

typedef struct opara__onnx_model {
    int64_t ir_version;
    const char* producer_name;
    uint32_t n_opsets;
    opara__onnx_opset* opsets;
    int has_graph;
    opara__onnx_graph graph;
} opara__onnx_model;

/* Decode into structs allocated from pool (freed by the caller with opara__pool_free). The
   structs keep pointers into data for raw_data, so data must outlive them. Failures set the
   runtime's detail and return OPARA_ERR_ONNX_DECODE (malformed wire data). */
OPARA__PRIVATE opara_result opara__onnx_decode_model(opara_runtime* rt, opara__pool* pool, const uint8_t* data,
                                                    size_t size, opara__onnx_model* out);
OPARA__PRIVATE opara_result opara__onnx_decode_tensor(opara_runtime* rt, opara__pool* pool, const uint8_t* data,
                                                     size_t size, opara__onnx_tensor* out);

#endif /* OPARA_PB_H */
/* ==== END src/opara_pb.h ==== */
/* ==== BEGIN src/opara_pb.c ==== */
/* Protobuf wire reader and ONNX message decoder (see opara_pb.h). Field numbers follow onnx.proto
   (proto2). Each message is read twice: the first pass validates the wire data and counts
   repeated fields, the second allocates exact arrays and fills them. */
/* #include "opara_pb.h" (inlined above) */

#include <stdio.h>

/* ---- wire level ------------------------------------------------------------------------------ */

OPARA__PRIVATE const char* opara__pb_status_text(opara__pb_status status) {
    switch (status) {
    case OPARA__PB_OK: return "ok";
    case OPARA__PB_END: return "end of message";
    case OPARA__PB_TRUNCATED_VARINT: return "truncated varint";
    case OPARA__PB_VARINT_OVERFLOW: return "varint longer than 64 bits";
    case OPARA__PB_TRUNCATED: return "field runs past the end of its parent";
    case OPARA__PB_GROUP: return "groups (wire types 3/4) are not supported";
    case OPARA__PB_BAD_WIRE_TYPE: return "invalid wire type";
    case OPARA__PB_BAD_FIELD_NUMBER: return "invalid field number";
    case OPARA__PB_BAD_PACKED: return "packed field size is not a multiple of the element size";
    }
    return "unknown protobuf error";
}

OPARA__PRIVATE opara__pb_status opara__pb_read_varint(const uint8_t** p, const uint8_t* end, uint64_t* out) {
    const uint8_t* q = *p;
    uint64_t value = 0;
    unsigned shift;
    for (shift = 0; shift < 70; shift += 7) {
        uint8_t byte;
        if (q >= end) return OPARA__PB_TRUNCATED_VARINT;
        byte = *q++;
        if (shift == 63 && (byte & 0x7e)) return OPARA__PB_VARINT_OVERFLOW; /* 10th byte holds one bit */
        value |= (uint64_t)(byte & 0x7f) << shift;
        if (!(byte & 0x80)) {
            *p = q;
            *out = value;
            return OPARA__PB_OK;
        }
    }
    return OPARA__PB_VARINT_OVERFLOW;
}

OPARA__PRIVATE void opara__pb_reader_init(opara__pb_reader* r, const uint8_t* data, size_t size) {
    r->p = data;
    r->end = data ? data + size : data;
}

OPARA__PRIVATE opara__pb_status opara__pb_next(opara__pb_reader* r, opara__pb_field* f) {
    uint64_t key;
    opara__pb_status st;
    if (r->p >= r->end) return OPARA__PB_END;
    st = opara__pb_read_varint(&r->p, r->end, &key);
    if (st != OPARA__PB_OK) return st;
    if ((key >> 3) == 0 || (key >> 3) > 0x1fffffff) return OPARA__PB_BAD_FIELD_NUMBER;
    f->number = (uint32_t)(key >> 3);
    f->wire = (uint32_t)(key & 7);
    f->u = 0;
    f->data = NULL;
    f->size = 0;
    switch (f->wire) {
    case OPARA__PB_WIRE_VARINT: return opara__pb_read_varint(&r->p, r->end, &f->u);
    case OPARA__PB_WIRE_FIXED64:
        if ((size_t)(r->end - r->p) < 8) return OPARA__PB_TRUNCATED;
        f->u = opara__rd_u64(r->p);
        r->p += 8;
        return OPARA__PB_OK;
    case OPARA__PB_WIRE_FIXED32:
        if ((size_t)(r->end - r->p) < 4) return OPARA__PB_TRUNCATED;
        f->u = opara__rd_u32(r->p);
        r->p += 4;
        return OPARA__PB_OK;
    case OPARA__PB_WIRE_LEN: {
        uint64_t len;
        st = opara__pb_read_varint(&r->p, r->end, &len);
        if (st != OPARA__PB_OK) return st;
        if (len > (uint64_t)(r->end - r->p)) return OPARA__PB_TRUNCATED;
        f->data = r->p;
        f->size = (size_t)len;
        r->p += (size_t)len;
        return OPARA__PB_OK;
    }
    case 3: case 4: return OPARA__PB_GROUP;
    default: return OPARA__PB_BAD_WIRE_TYPE;
    }
}

static uint32_t opara__pb_scalar_wire(opara__pb_scalar kind) {
    switch (kind) {
    case OPARA__PB_FIXED32_F32: return OPARA__PB_WIRE_FIXED32;
    case OPARA__PB_FIXED64_F64: return OPARA__PB_WIRE_FIXED64;
    default: return OPARA__PB_WIRE_VARINT;
    }
}

static size_t opara__pb_scalar_fixed_size(opara__pb_scalar kind) {
    return kind == OPARA__PB_FIXED32_F32 ? 4 : kind == OPARA__PB_FIXED64_F64 ? 8 : 0;
}

OPARA__PRIVATE opara__pb_status opara__pb_scalar_count(const opara__pb_field* f, opara__pb_scalar kind, size_t* count) {
    size_t fixed = opara__pb_scalar_fixed_size(kind), n = 0;
    const uint8_t *p, *end;
    if (f->wire == opara__pb_scalar_wire(kind)) {
        *count = 1;
        return OPARA__PB_OK;
    }
    if (f->wire != OPARA__PB_WIRE_LEN) return OPARA__PB_BAD_WIRE_TYPE;
    if (fixed) {
        if (f->size % fixed) return OPARA__PB_BAD_PACKED;
        *count = f->size / fixed;
        return OPARA__PB_OK;
    }
    for (p = f->data, end = f->data + f->size; p < end; ++n) {
        uint64_t ignored;
        opara__pb_status st = opara__pb_read_varint(&p, end, &ignored);
        if (st != OPARA__PB_OK) return st;
    }
    *count = n;
    return OPARA__PB_OK;
}

static void opara__pb_store(opara__pb_scalar kind, void* out, size_t i, uint64_t raw) {
    switch (kind) {
    case OPARA__PB_VARINT_I64: ((int64_t*)out)[i] = (int64_t)raw; break;
    case OPARA__PB_VARINT_I32: ((int32_t*)out)[i] = (int32_t)(uint32_t)raw; break;
    case OPARA__PB_VARINT_U64: ((uint64_t*)out)[i] = raw; break;
    case OPARA__PB_FIXED32_F32: {
        uint32_t bits = (uint32_t)raw;
        memcpy((float*)out + i, &bits, 4);
        break;
    }
    case OPARA__PB_FIXED64_F64: memcpy((double*)out + i, &raw, 8); break;
    }
}

OPARA__PRIVATE opara__pb_status opara__pb_scalar_unpack(const opara__pb_field* f, opara__pb_scalar kind, void* out,
                                                      size_t* index) {
    size_t fixed = opara__pb_scalar_fixed_size(kind);
    const uint8_t *p, *end;
    if (f->wire == opara__pb_scalar_wire(kind)) {
        opara__pb_store(kind, out, (*index)++, f->u);
        return OPARA__PB_OK;
    }
    if (f->wire != OPARA__PB_WIRE_LEN) return OPARA__PB_BAD_WIRE_TYPE;
    for (p = f->data, end = f->data + f->size; p < end;) {
        uint64_t raw;
        if (fixed == 4) {
            if ((size_t)(end - p) < 4) return OPARA__PB_BAD_PACKED;
            raw = opara__rd_u32(p);
            p += 4;
        } else if (fixed == 8) {
            if ((size_t)(end - p) < 8) return OPARA__PB_BAD_PACKED;
            raw = opara__rd_u64(p);
            p += 8;
        } else {
            opara__pb_status st = opara__pb_read_varint(&p, end, &raw);
            if (st != OPARA__PB_OK) return st;
        }
        opara__pb_store(kind, out, (*index)++, raw);
    }
    return OPARA__PB_OK;
}

/* ---- decoding context: pool, runtime and the current field path ------------------------------ */

typedef struct opara__pb_ctx {
    opara_runtime* rt;
    opara__pool* pool;
    char path[384];
    size_t len;
} opara__pb_ctx;

static size_t opara__pb_push(opara__pb_ctx* c, const char* field, long index) {
    size_t mark = c->len;
    int n;
    if (index >= 0)
        n = snprintf(c->path + c->len, sizeof c->path - c->len, "%s%s[%ld]", c->len ? "." : "", field, index);
    else
        n = snprintf(c->path + c->len, sizeof c->path - c->len, "%s%s", c->len ? "." : "", field);
    if (n > 0) c->len = OPARA__MIN(c->len + (size_t)n, sizeof c->path - 1);
    return mark;
}

static void opara__pb_pop(opara__pb_ctx* c, size_t mark) {
    c->len = mark;
    c->path[mark] = 0;
}

static opara_result opara__pb_wire_error(opara__pb_ctx* c, opara__pb_status st) {
    return opara__fail(c->rt, OPARA_ERR_ONNX_DECODE, "%s: %s", c->len ? c->path : "(message)",
                       opara__pb_status_text(st));
}

static opara_result opara__pb_field_error(opara__pb_ctx* c, const char* field, opara__pb_status st) {
    return opara__fail(c->rt, OPARA_ERR_ONNX_DECODE, "%s%s%s: %s", c->path, c->len ? "." : "", field,
                       opara__pb_status_text(st));
}

static opara_result opara__pb_oom(opara__pb_ctx* c) {
    return opara__fail(c->rt, OPARA_ERR_OUT_OF_MEMORY, "%s: out of memory", c->len ? c->path : "(message)");
}

/* Next field: OPARA_OK with *more = 1, or *more = 0 at the end; an error names the path. */
static opara_result opara__pb_step(opara__pb_ctx* c, opara__pb_reader* r, opara__pb_field* f, int* more) {
    opara__pb_status st = opara__pb_next(r, f);
    *more = st == OPARA__PB_OK;
    if (st == OPARA__PB_OK || st == OPARA__PB_END) return OPARA_OK;
    return opara__pb_wire_error(c, st);
}

static opara_result opara__pb_expect(opara__pb_ctx* c, const opara__pb_field* f, uint32_t wire, const char* field) {
    if (f->wire == wire) return OPARA_OK;
    return opara__fail(c->rt, OPARA_ERR_ONNX_DECODE, "%s%s%s: wire type %u, expected %u", c->path, c->len ? "." : "",
                       field, f->wire, wire);
}

static void* opara__pb_array(opara__pb_ctx* c, size_t count, size_t elem) {
    size_t bytes;
    void* p;
    if (!opara__mul_size(count ? count : 1, elem, &bytes)) return NULL;
    p = opara__pool_alloc(c->rt, c->pool, bytes, 8);
    if (p) memset(p, 0, bytes);
    return p;
}

static opara_result opara__pb_string(opara__pb_ctx* c, const opara__pb_field* f, const char* field, const char** out) {
    char* s;
    opara_result r = opara__pb_expect(c, f, OPARA__PB_WIRE_LEN, field);
    if (r != OPARA_OK) return r;
    s = (char*)opara__pool_alloc(c->rt, c->pool, f->size + 1, 1);
    if (!s) return opara__pb_oom(c);
    if (f->size) memcpy(s, f->data, f->size);
    s[f->size] = 0;
    *out = s;
    return OPARA_OK;
}

static opara_result opara__pb_varint_field(opara__pb_ctx* c, const opara__pb_field* f, const char* field,
                                           int64_t* out) {
    opara_result r = opara__pb_expect(c, f, OPARA__PB_WIRE_VARINT, field);
    if (r == OPARA_OK) *out = (int64_t)f->u;
    return r;
}

static opara_result opara__pb_int32_field(opara__pb_ctx* c, const opara__pb_field* f, const char* field,
                                          int32_t* out) {
    int64_t v = 0;
    opara_result r = opara__pb_varint_field(c, f, field, &v);
    if (r == OPARA_OK) *out = (int32_t)(uint32_t)(uint64_t)v;
    return r;
}

/* Repeated scalar field: pass 0 adds to *count, pass 1 stores into *array at *index. */
static opara_result opara__pb_repeated(opara__pb_ctx* c, int pass, const opara__pb_field* f, opara__pb_scalar kind,
                                       const char* field, size_t* count, void* array, size_t* index) {
    opara__pb_status st;
    if (pass == 0) {
        size_t n = 0;
        st = opara__pb_scalar_count(f, kind, &n);
        if (st == OPARA__PB_OK && !opara__add_size(*count, n, count)) st = OPARA__PB_TRUNCATED;
    } else {
        st = opara__pb_scalar_unpack(f, kind, array, index);
    }
    return st == OPARA__PB_OK ? OPARA_OK : opara__pb_field_error(c, field, st);
}

/* ---- messages -------------------------------------------------------------------------------- */

static opara_result opara__pb_kv(opara__pb_ctx* c, const uint8_t* data, size_t size, opara__onnx_kv* kv) {
    opara__pb_reader rd;
    opara__pb_field f;
    opara_result r = OPARA_OK;
    int more = 1;
    opara__pb_reader_init(&rd, data, size);
    while (r == OPARA_OK && (r = opara__pb_step(c, &rd, &f, &more)) == OPARA_OK && more) {
        if (f.number == 1) r = opara__pb_string(c, &f, "key", &kv->key);
        else if (f.number == 2) r = opara__pb_string(c, &f, "value", &kv->value);
    }
    if (r == OPARA_OK && !kv->key) kv->key = "";
    if (r == OPARA_OK && !kv->value) kv->value = "";
    return r;
}

static opara_result opara__pb_tensor(opara__pb_ctx* c, const uint8_t* data, size_t size, opara__onnx_tensor* t) {
    size_t n_dims = 0, n_ext = 0, i_dims = 0, i_ext = 0, i_f = 0, i_i32 = 0, i_i64 = 0, i_d = 0, i_u64 = 0;
    int pass;
    memset(t, 0, sizeof *t);
    t->name = "";
    for (pass = 0; pass < 2; ++pass) {
        opara__pb_reader rd;
        opara__pb_field f;
        opara_result r = OPARA_OK;
        int more = 1;
        if (pass == 1) {
            if (n_dims > 0xffffffffu || n_ext > 0xffffffffu)
                return opara__fail(c->rt, OPARA_ERR_ONNX_DECODE, "%s: too many dims", c->path);
            t->dims = (int64_t*)opara__pb_array(c, n_dims, sizeof(int64_t));
            t->external = (opara__onnx_kv*)opara__pb_array(c, n_ext, sizeof(opara__onnx_kv));
            t->float_data = (float*)opara__pb_array(c, t->n_float, sizeof(float));
            t->int32_data = (int32_t*)opara__pb_array(c, t->n_int32, sizeof(int32_t));
            t->int64_data = (int64_t*)opara__pb_array(c, t->n_int64, sizeof(int64_t));
            t->double_data = (double*)opara__pb_array(c, t->n_double, sizeof(double));
            t->uint64_data = (uint64_t*)opara__pb_array(c, t->n_uint64, sizeof(uint64_t));
            if (!t->dims || !t->external || !t->float_data || !t->int32_data || !t->int64_data || !t->double_data ||
                !t->uint64_data)
                return opara__pb_oom(c);
            t->n_dims = (uint32_t)n_dims;
            t->n_external = (uint32_t)n_ext;
        }
        opara__pb_reader_init(&rd, data, size);
        while (r == OPARA_OK && (r = opara__pb_step(c, &rd, &f, &more)) == OPARA_OK && more) {
            switch (f.number) {
            case 1: r = opara__pb_repeated(c, pass, &f, OPARA__PB_VARINT_I64, "dims", &n_dims, t->dims, &i_dims); break;
            case 2: r = opara__pb_int32_field(c, &f, "data_type", &t->data_type); break;
            case 3: t->has_segment = 1; break;
            case 4:
                r = opara__pb_repeated(c, pass, &f, OPARA__PB_FIXED32_F32, "float_data", &t->n_float, t->float_data, &i_f);
                break;
            case 5:
                r = opara__pb_repeated(c, pass, &f, OPARA__PB_VARINT_I32, "int32_data", &t->n_int32, t->int32_data,
                                       &i_i32);
                break;
            case 6:
                r = opara__pb_expect(c, &f, OPARA__PB_WIRE_LEN, "string_data");
                if (pass == 0) t->n_string++;
                break;
            case 7:
                r = opara__pb_repeated(c, pass, &f, OPARA__PB_VARINT_I64, "int64_data", &t->n_int64, t->int64_data,
                                       &i_i64);
                break;
            case 8: if (pass == 1) r = opara__pb_string(c, &f, "name", &t->name); break;
            case 9:
                r = opara__pb_expect(c, &f, OPARA__PB_WIRE_LEN, "raw_data");
                t->has_raw = 1;
                t->raw.data = f.data;
                t->raw.size = f.size;
                break;
            case 10:
                r = opara__pb_repeated(c, pass, &f, OPARA__PB_FIXED64_F64, "double_data", &t->n_double, t->double_data,
                                       &i_d);
                break;
            case 11:
                r = opara__pb_repeated(c, pass, &f, OPARA__PB_VARINT_U64, "uint64_data", &t->n_uint64, t->uint64_data,
                                       &i_u64);
                break;
            case 13:
                r = opara__pb_expect(c, &f, OPARA__PB_WIRE_LEN, "external_data");
                if (r == OPARA_OK && pass == 0) n_ext++;
                if (r == OPARA_OK && pass == 1) {
                    size_t mark = opara__pb_push(c, "external_data", (long)i_ext);
                    r = opara__pb_kv(c, f.data, f.size, &t->external[i_ext++]);
                    if (r == OPARA_OK) opara__pb_pop(c, mark);
                }
                break;
            case 14: r = opara__pb_int32_field(c, &f, "data_location", &t->data_location); break;
            default: break;
            }
        }
        if (r != OPARA_OK) return r;
    }
    return OPARA_OK;
}

/* Decodes a nested message held by field f into a pool-allocated struct at *out. */
typedef opara_result (*opara__pb_msg_fn)(opara__pb_ctx* c, const uint8_t* data, size_t size, void* out);

static opara_result opara__pb_tensor_msg(opara__pb_ctx* c, const uint8_t* data, size_t size, void* out) {
    return opara__pb_tensor(c, data, size, (opara__onnx_tensor*)out);
}

static opara_result opara__pb_nested(opara__pb_ctx* c, const opara__pb_field* f, const char* field, long index,
                                     opara__pb_msg_fn fn, void* out) {
    size_t mark;
    opara_result r = opara__pb_expect(c, f, OPARA__PB_WIRE_LEN, field);
    if (r != OPARA_OK) return r;
    mark = opara__pb_push(c, field, index);
    r = fn(c, f->data, f->size, out);
    if (r == OPARA_OK) opara__pb_pop(c, mark);
    return r;
}

static opara_result opara__pb_attr(opara__pb_ctx* c, const uint8_t* data, size_t size, void* out) {
    opara__onnx_attr* a = (opara__onnx_attr*)out;
    size_t n_floats = 0, n_ints = 0, n_strings = 0, i_f = 0, i_i = 0, i_s = 0;
    int pass;
    a->name = "";
    for (pass = 0; pass < 2; ++pass) {
        opara__pb_reader rd;
        opara__pb_field f;
        opara_result r = OPARA_OK;
        int more = 1;
        if (pass == 1) {
            if (n_floats > 0xffffffffu || n_ints > 0xffffffffu || n_strings > 0xffffffffu)
                return opara__fail(c->rt, OPARA_ERR_ONNX_DECODE, "%s: too many values", c->path);
            a->floats = (float*)opara__pb_array(c, n_floats, sizeof(float));
            a->ints = (int64_t*)opara__pb_array(c, n_ints, sizeof(int64_t));
            a->strings = (opara__pb_bytes*)opara__pb_array(c, n_strings, sizeof(opara__pb_bytes));
            if (!a->floats || !a->ints || !a->strings) return opara__pb_oom(c);
            a->n_floats = (uint32_t)n_floats;
            a->n_ints = (uint32_t)n_ints;
            a->n_strings = (uint32_t)n_strings;
        }
        opara__pb_reader_init(&rd, data, size);
        while (r == OPARA_OK && (r = opara__pb_step(c, &rd, &f, &more)) == OPARA_OK && more) {
            switch (f.number) {
            case 1: if (pass == 1) r = opara__pb_string(c, &f, "name", &a->name); break;
            case 2:
                r = opara__pb_expect(c, &f, OPARA__PB_WIRE_FIXED32, "f");
                if (r == OPARA_OK) {
                    uint32_t bits = (uint32_t)f.u;
                    memcpy(&a->f, &bits, 4);
                    a->has_f = 1;
                }
                break;
            case 3: r = opara__pb_varint_field(c, &f, "i", &a->i); a->has_i = 1; break;
            case 4:
                r = opara__pb_expect(c, &f, OPARA__PB_WIRE_LEN, "s");
                a->s.data = f.data;
                a->s.size = f.size;
                a->has_s = 1;
                break;
            case 5:
                if (pass == 0) {
                    r = opara__pb_expect(c, &f, OPARA__PB_WIRE_LEN, "t");
                    break;
                }
                a->t = (opara__onnx_tensor*)opara__pb_array(c, 1, sizeof(opara__onnx_tensor));
                r = a->t ? opara__pb_nested(c, &f, "t", -1, opara__pb_tensor_msg, a->t) : opara__pb_oom(c);
                break;
            case 6: r = opara__pb_expect(c, &f, OPARA__PB_WIRE_LEN, "g"); a->has_g = 1; break;
            case 7: r = opara__pb_repeated(c, pass, &f, OPARA__PB_FIXED32_F32, "floats", &n_floats, a->floats, &i_f); break;
            case 8: r = opara__pb_repeated(c, pass, &f, OPARA__PB_VARINT_I64, "ints", &n_ints, a->ints, &i_i); break;
            case 9:
                r = opara__pb_expect(c, &f, OPARA__PB_WIRE_LEN, "strings");
                if (r == OPARA_OK && pass == 0) n_strings++;
                if (r == OPARA_OK && pass == 1) {
                    a->strings[i_s].data = f.data;
                    a->strings[i_s++].size = f.size;
                }
                break;
            case 11: r = opara__pb_expect(c, &f, OPARA__PB_WIRE_LEN, "graphs"); a->has_g = 1; break;
            case 20: r = opara__pb_int32_field(c, &f, "type", &a->type); break;
            default: break;
            }
        }
        if (r != OPARA_OK) return r;
    }
    return OPARA_OK;
}

static opara_result opara__pb_dim(opara__pb_ctx* c, const uint8_t* data, size_t size, void* out) {
    opara__onnx_dim* d = (opara__onnx_dim*)out;
    opara__pb_reader rd;
    opara__pb_field f;
    opara_result r = OPARA_OK;
    int more = 1;
    opara__pb_reader_init(&rd, data, size);
    while (r == OPARA_OK && (r = opara__pb_step(c, &rd, &f, &more)) == OPARA_OK && more) {
        if (f.number == 1) {
            r = opara__pb_varint_field(c, &f, "dim_value", &d->value);
            d->has_value = 1;
            d->param = NULL;
        } else if (f.number == 2) {
            r = opara__pb_string(c, &f, "dim_param", &d->param);
            d->has_value = 0;
        }
    }
    return r;
}

static opara_result opara__pb_shape(opara__pb_ctx* c, const uint8_t* data, size_t size, void* out) {
    opara__onnx_value_info* vi = (opara__onnx_value_info*)out;
    size_t n = 0, i = 0;
    int pass;
    for (pass = 0; pass < 2; ++pass) {
        opara__pb_reader rd;
        opara__pb_field f;
        opara_result r = OPARA_OK;
        int more = 1;
        if (pass == 1) {
            if (n > OPARA_MAX_DIMS * 64) return opara__fail(c->rt, OPARA_ERR_ONNX_DECODE, "%s: too many dims", c->path);
            vi->dims = (opara__onnx_dim*)opara__pb_array(c, n, sizeof(opara__onnx_dim));
            if (!vi->dims) return opara__pb_oom(c);
            vi->n_dims = (uint32_t)n;
        }
        opara__pb_reader_init(&rd, data, size);
        while (r == OPARA_OK && (r = opara__pb_step(c, &rd, &f, &more)) == OPARA_OK && more) {
            if (f.number != 1) continue;
            if (pass == 0) {
                r = opara__pb_expect(c, &f, OPARA__PB_WIRE_LEN, "dim");
                n++;
            } else {
                r = opara__pb_nested(c, &f, "dim", (long)i, opara__pb_dim, &vi->dims[i]);
                i++;
            }
        }
        if (r != OPARA_OK) return r;
    }
    vi->has_shape = 1;
    return OPARA_OK;
}

static opara_result opara__pb_tensor_type(opara__pb_ctx* c, const uint8_t* data, size_t size, void* out) {
    opara__onnx_value_info* vi = (opara__onnx_value_info*)out;
    opara__pb_reader rd;
    opara__pb_field f;
    opara_result r = OPARA_OK;
    int more = 1;
    vi->is_tensor = 1;
    opara__pb_reader_init(&rd, data, size);
    while (r == OPARA_OK && (r = opara__pb_step(c, &rd, &f, &more)) == OPARA_OK && more) {
        if (f.number == 1) r = opara__pb_int32_field(c, &f, "elem_type", &vi->elem_type);
        else if (f.number == 2) r = opara__pb_nested(c, &f, "shape", -1, opara__pb_shape, vi);
    }
    return r;
}

static opara_result opara__pb_type(opara__pb_ctx* c, const uint8_t* data, size_t size, void* out) {
    opara__pb_reader rd;
    opara__pb_field f;
    opara_result r = OPARA_OK;
    int more = 1;
    opara__pb_reader_init(&rd, data, size);
    while (r == OPARA_OK && (r = opara__pb_step(c, &rd, &f, &more)) == OPARA_OK && more)
        if (f.number == 1) r = opara__pb_nested(c, &f, "tensor_type", -1, opara__pb_tensor_type, out);
    return r;
}

static opara_result opara__pb_value_info(opara__pb_ctx* c, const uint8_t* data, size_t size, void* out) {
    opara__onnx_value_info* vi = (opara__onnx_value_info*)out;
    opara__pb_reader rd;
    opara__pb_field f;
    opara_result r = OPARA_OK;
    int more = 1;
    vi->name = "";
    opara__pb_reader_init(&rd, data, size);
    while (r == OPARA_OK && (r = opara__pb_step(c, &rd, &f, &more)) == OPARA_OK && more) {
        if (f.number == 1) r = opara__pb_string(c, &f, "name", &vi->name);
        else if (f.number == 2) r = opara__pb_nested(c, &f, "type", -1, opara__pb_type, vi);
    }
    return r;
}

static opara_result opara__pb_node(opara__pb_ctx* c, const uint8_t* data, size_t size, void* out) {
    opara__onnx_node* n = (opara__onnx_node*)out;
    size_t n_in = 0, n_out = 0, n_attr = 0, i_in = 0, i_out = 0, i_attr = 0;
    int pass;
    n->name = n->op_type = n->domain = "";
    for (pass = 0; pass < 2; ++pass) {
        opara__pb_reader rd;
        opara__pb_field f;
        opara_result r = OPARA_OK;
        int more = 1;
        if (pass == 1) {
            n->inputs = (const char**)opara__pb_array(c, n_in, sizeof(char*));
            n->outputs = (const char**)opara__pb_array(c, n_out, sizeof(char*));
            n->attrs = (opara__onnx_attr*)opara__pb_array(c, n_attr, sizeof(opara__onnx_attr));
            if (!n->inputs || !n->outputs || !n->attrs) return opara__pb_oom(c);
            n->n_inputs = (uint32_t)n_in;
            n->n_outputs = (uint32_t)n_out;
            n->n_attrs = (uint32_t)n_attr;
        }
        opara__pb_reader_init(&rd, data, size);
        while (r == OPARA_OK && (r = opara__pb_step(c, &rd, &f, &more)) == OPARA_OK && more) {
            switch (f.number) {
            case 1:
                if (pass == 0) r = opara__pb_expect(c, &f, OPARA__PB_WIRE_LEN, "input"), n_in++;
                else r = opara__pb_string(c, &f, "input", &n->inputs[i_in++]);
                break;
            case 2:
                if (pass == 0) r = opara__pb_expect(c, &f, OPARA__PB_WIRE_LEN, "output"), n_out++;
                else r = opara__pb_string(c, &f, "output", &n->outputs[i_out++]);
                break;
            case 3: if (pass == 1) r = opara__pb_string(c, &f, "name", &n->name); break;
            case 4: if (pass == 1) r = opara__pb_string(c, &f, "op_type", &n->op_type); break;
            case 5:
                if (pass == 0) r = opara__pb_expect(c, &f, OPARA__PB_WIRE_LEN, "attribute"), n_attr++;
                else r = opara__pb_nested(c, &f, "attribute", (long)i_attr, opara__pb_attr, &n->attrs[i_attr]), i_attr++;
                break;
            case 7: if (pass == 1) r = opara__pb_string(c, &f, "domain", &n->domain); break;
            default: break;
            }
        }
        if (r != OPARA_OK) return r;
    }
    return OPARA_OK;
}

static opara_result opara__pb_graph(opara__pb_ctx* c, const uint8_t* data, size_t size, void* out) {
    opara__onnx_graph* g = (opara__onnx_graph*)out;
    size_t cnt[5] = {0, 0, 0, 0, 0}, idx[5] = {0, 0, 0, 0, 0};
    int pass;
    g->name = "";
    for (pass = 0; pass < 2; ++pass) {
        opara__pb_reader rd;
        opara__pb_field f;
        opara_result r = OPARA_OK;
        int more = 1, k;
        if (pass == 1) {
            for (k = 0; k < 5; ++k)
                if (cnt[k] > 0x7fffffffu) return opara__fail(c->rt, OPARA_ERR_ONNX_DECODE, "%s: too many entries", c->path);
            g->nodes = (opara__onnx_node*)opara__pb_array(c, cnt[0], sizeof(opara__onnx_node));
            g->initializers = (opara__onnx_tensor*)opara__pb_array(c, cnt[1], sizeof(opara__onnx_tensor));
            g->inputs = (opara__onnx_value_info*)opara__pb_array(c, cnt[2], sizeof(opara__onnx_value_info));
            g->outputs = (opara__onnx_value_info*)opara__pb_array(c, cnt[3], sizeof(opara__onnx_value_info));
            g->value_infos = (opara__onnx_value_info*)opara__pb_array(c, cnt[4], sizeof(opara__onnx_value_info));
            if (!g->nodes || !g->initializers || !g->inputs || !g->outputs || !g->value_infos) return opara__pb_oom(c);
            g->n_nodes = (uint32_t)cnt[0];
            g->n_initializers = (uint32_t)cnt[1];
            g->n_inputs = (uint32_t)cnt[2];
            g->n_outputs = (uint32_t)cnt[3];
            g->n_value_infos = (uint32_t)cnt[4];
        }
        opara__pb_reader_init(&rd, data, size);
        while (r == OPARA_OK && (r = opara__pb_step(c, &rd, &f, &more)) == OPARA_OK && more) {
            static const char* const names[5] = {"node", "initializer", "input", "output", "value_info"};
            int slot = f.number == 1 ? 0 : f.number == 5 ? 1 : f.number == 11 ? 2 : f.number == 12 ? 3 :
                       f.number == 13 ? 4 : -1;
            if (f.number == 2 && pass == 1) r = opara__pb_string(c, &f, "name", &g->name);
            if (f.number == 15 && pass == 0) {
                r = opara__pb_expect(c, &f, OPARA__PB_WIRE_LEN, "sparse_initializer");
                g->n_sparse_initializers++;
            }
            if (slot < 0 || r != OPARA_OK) continue;
            if (pass == 0) {
                r = opara__pb_expect(c, &f, OPARA__PB_WIRE_LEN, names[slot]);
                cnt[slot]++;
                continue;
            }
            switch (slot) {
            case 0: r = opara__pb_nested(c, &f, "node", (long)idx[0], opara__pb_node, &g->nodes[idx[0]]); break;
            case 1:
                r = opara__pb_nested(c, &f, "initializer", (long)idx[1], opara__pb_tensor_msg, &g->initializers[idx[1]]);
                break;
            case 2: r = opara__pb_nested(c, &f, "input", (long)idx[2], opara__pb_value_info, &g->inputs[idx[2]]); break;
            case 3: r = opara__pb_nested(c, &f, "output", (long)idx[3], opara__pb_value_info, &g->outputs[idx[3]]); break;
            default:
                r = opara__pb_nested(c, &f, "value_info", (long)idx[4], opara__pb_value_info, &g->value_infos[idx[4]]);
                break;
            }
            idx[slot]++;
        }
        if (r != OPARA_OK) return r;
    }
    return OPARA_OK;
}

static opara_result opara__pb_opset(opara__pb_ctx* c, const uint8_t* data, size_t size, void* out) {
    opara__onnx_opset* o = (opara__onnx_opset*)out;
    opara__pb_reader rd;
    opara__pb_field f;
    opara_result r = OPARA_OK;
    int more = 1;
    o->domain = "";
    opara__pb_reader_init(&rd, data, size);
    while (r == OPARA_OK && (r = opara__pb_step(c, &rd, &f, &more)) == OPARA_OK && more) {
        if (f.number == 1) r = opara__pb_string(c, &f, "domain", &o->domain);
        else if (f.number == 2) r = opara__pb_varint_field(c, &f, "version", &o->version);
    }
    return r;
}

static opara_result opara__pb_model(opara__pb_ctx* c, const uint8_t* data, size_t size, opara__onnx_model* m) {
    size_t n_opsets = 0, i_opset = 0;
    int pass;
    for (pass = 0; pass < 2; ++pass) {
        opara__pb_reader rd;
        opara__pb_field f;
        opara_result r = OPARA_OK;
        int more = 1;
        if (pass == 1) {
            if (n_opsets > 0xffffu) return opara__fail(c->rt, OPARA_ERR_ONNX_DECODE, "too many opset_import entries");
            m->opsets = (opara__onnx_opset*)opara__pb_array(c, n_opsets, sizeof(opara__onnx_opset));
            if (!m->opsets) return opara__pb_oom(c);
            m->n_opsets = (uint32_t)n_opsets;
        }
        opara__pb_reader_init(&rd, data, size);
        while (r == OPARA_OK && (r = opara__pb_step(c, &rd, &f, &more)) == OPARA_OK && more) {
            switch (f.number) {
            case 1: r = opara__pb_varint_field(c, &f, "ir_version", &m->ir_version); break;
            case 2: if (pass == 1) r = opara__pb_string(c, &f, "producer_name", &m->producer_name); break;
            case 7:
                if (pass == 0) {
                    r = opara__pb_expect(c, &f, OPARA__PB_WIRE_LEN, "graph");
                    break;
                }
                memset(&m->graph, 0, sizeof m->graph);
                r = opara__pb_nested(c, &f, "graph", -1, opara__pb_graph, &m->graph);
                m->has_graph = 1;
                break;
            case 8:
                if (pass == 0) r = opara__pb_expect(c, &f, OPARA__PB_WIRE_LEN, "opset_import"), n_opsets++;
                else r = opara__pb_nested(c, &f, "opset_import", (long)i_opset, opara__pb_opset, &m->opsets[i_opset]),
                     i_opset++;
                break;
            default: break;
            }
        }
        if (r != OPARA_OK) return r;
    }
    return OPARA_OK;
}

static void opara__pb_ctx_init(opara__pb_ctx* c, opara_runtime* rt, opara__pool* pool) {
    c->rt = rt;
    c->pool = pool;
    c->len = 0;
    c->path[0] = 0;
}

OPARA__PRIVATE opara_result opara__onnx_decode_model(opara_runtime* rt, opara__pool* pool, const uint8_t* data,
                                                    size_t size, opara__onnx_model* out) {
    opara__pb_ctx c;
    memset(out, 0, sizeof *out);
    out->producer_name = "";
    opara__pb_ctx_init(&c, rt, pool);
    return opara__pb_model(&c, data, size, out);
}

OPARA__PRIVATE opara_result opara__onnx_decode_tensor(opara_runtime* rt, opara__pool* pool, const uint8_t* data,
                                                     size_t size, opara__onnx_tensor* out) {
    opara__pb_ctx c;
    opara__pb_ctx_init(&c, rt, pool);
    return opara__pb_tensor(&c, data, size, out);
}
/* ==== END src/opara_pb.c ==== */
/* ==== BEGIN src/opara_onnx.h ==== */
/* ONNX import: decoded ModelProto -> opara__graph in canonical form, with constant folding
   (including shape arithmetic over the symbolic batch), Identity/Dropout removal,
   BatchNormalization-into-Conv folding and Relu fusion. Also the TensorProto reader used by
   tests and tools for ONNX test data (.pb files). */
#ifndef OPARA_ONNX_H
#define OPARA_ONNX_H

/* #include "opara_pb.h" (inlined above) */

/* A tensor read from a TensorProto: data in the runtime's allocator (free with
   opara__tensor_data_free). */
typedef struct opara__tensor_data {
    char name[128];
    opara_dtype dtype;
    opara__shape shape;
    void* data;
    uint64_t nbytes;
    uint64_t count;
} opara__tensor_data;

/* Converts a decoded TensorProto (raw_data or typed fields) into dtype/shape/bytes. External
   data is read from base_dir (NULL: external data is an error). */
OPARA__PRIVATE opara_result opara__onnx_tensor_load(opara_runtime* rt, const opara__onnx_tensor* t,
                                                   const char* base_dir, const char* where, opara__tensor_data* out);
/* A bare serialized TensorProto, as in ONNX test data. */
OPARA__PRIVATE opara_result opara__onnx_read_tensor(opara_runtime* rt, const void* data, size_t size,
                                                   opara__tensor_data* out);
OPARA__PRIVATE void opara__tensor_data_free(opara_runtime* rt, opara__tensor_data* t);

/* Import flags for tests and tools (the public options cannot turn these off). */
enum { OPARA__ONNX_NO_FUSION = 1 };

/* Private import knobs: flags, and graph inputs frozen to constant values (ONNX node tests pass
   parameters such as Reshape's shape as graph inputs; freezing them makes the model importable). */
typedef struct opara__onnx_extra {
    int flags;
    const opara__tensor_data* frozen;
    uint32_t n_frozen;
} opara__onnx_extra;

/* Imports a serialized ModelProto into out (initialised here; the caller frees it with
   opara__graph_free, also on failure). base_dir: directory for external data, or NULL.
   extra may be NULL. */
OPARA__PRIVATE opara_result opara__onnx_import(opara_runtime* rt, const void* data, size_t size,
                                              const opara_onnx_options* options, const char* base_dir,
                                              const opara__onnx_extra* extra, opara__graph* out);

#ifndef OPARA_NO_STDIO
/* Whole file into a buffer from the runtime's allocator. */
OPARA__PRIVATE opara_result opara__onnx_read_file(opara_runtime* rt, const char* path, uint8_t** data, size_t* size);
OPARA__PRIVATE opara_result opara__onnx_read_tensor_file(opara_runtime* rt, const char* path, opara__tensor_data* out);
OPARA__PRIVATE opara_result opara__onnx_import_file(opara_runtime* rt, const char* path,
                                                   const opara_onnx_options* options, const opara__onnx_extra* extra,
                                                   opara__graph* out);
#endif

#endif /* OPARA_ONNX_H */
/* ==== END src/opara_onnx.h ==== */
/* ==== BEGIN src/opara_onnx.c ==== */
/* ONNX import (see opara_onnx.h).

   Nodes are taken in dependency order (real exports are not always sorted). Each node either
   folds (all inputs constant and the op has a constant evaluator, or it is a Shape whose input
   shape is known), disappears (Constant, Identity, Dropout) or becomes one IR node whose
   constant inputs (axes, pads, shape, ...) move into canonical attributes. Integer constants
   carry a per-element multiple of the symbolic batch ("value + k * batch"), so the
   Shape -> Gather -> Unsqueeze -> Concat -> Reshape chains of batch-dynamic exports fold into
   a Reshape whose "shape" holds OPARA__DIM_BATCH or -1. Afterwards BatchNormalization folds
   into the preceding Conv and a Relu fuses into its Conv/Gemm, and the graph is rebuilt
   in topological order with only what the outputs need. */
/* #include "opara_onnx.h" (inlined above) */
/* #include "opara_model.h" (inlined above) */

#include <math.h>
#include <stdlib.h>
#ifndef OPARA_NO_STDIO
#  include <stdio.h>
#endif

/* ---- tensors ---------------------------------------------------------------------------------- */

static opara_dtype opara__onnx_dtype(int32_t t) {
    switch (t) {
    case 1: case 2: case 3: case 6: case 7: case 9: case 10: case 11: return (opara_dtype)t;
    default: return OPARA_DTYPE_UNDEFINED;
    }
}

/* Copies count little-endian elements of size esize from src to native order in dst. */
static void opara__copy_le(void* dst, const uint8_t* src, uint64_t count, size_t esize) {
    uint64_t i;
    const uint16_t probe = 1;
    uint8_t first;
    memcpy(&first, &probe, 1);
    if (first == 1 || esize == 1) {
        memcpy(dst, src, (size_t)(count * esize));
        return;
    }
    for (i = 0; i < count; ++i) {
        uint8_t* d = (uint8_t*)dst + i * esize;
        if (esize == 2) { uint16_t v = opara__rd_u16(src + i * 2); memcpy(d, &v, 2); }
        else if (esize == 4) { uint32_t v = opara__rd_u32(src + i * 4); memcpy(d, &v, 4); }
        else { uint64_t v = opara__rd_u64(src + i * 8); memcpy(d, &v, 8); }
    }
}

static opara_result opara__typed_fill(opara_runtime* rt, const opara__onnx_tensor* t, const char* where,
                                      opara__tensor_data* out) {
    uint64_t i, n = out->count, have;
    const char* field;
    switch (out->dtype) {
    case OPARA_DTYPE_F32: have = t->n_float; field = "float_data"; break;
    case OPARA_DTYPE_F64: have = t->n_double; field = "double_data"; break;
    case OPARA_DTYPE_I64: have = t->n_int64; field = "int64_data"; break;
    default: have = t->n_int32; field = "int32_data"; break;
    }
    if (have != n)
        return opara__fail(rt, OPARA_ERR_ONNX_INVALID, "%s: %s has %llu values, dims need %llu", where, field,
                           (unsigned long long)have, (unsigned long long)n);
    for (i = 0; i < n; ++i) {
        switch (out->dtype) {
        case OPARA_DTYPE_F32: ((float*)out->data)[i] = t->float_data[i]; break;
        case OPARA_DTYPE_F64: ((double*)out->data)[i] = t->double_data[i]; break;
        case OPARA_DTYPE_I64: ((int64_t*)out->data)[i] = t->int64_data[i]; break;
        case OPARA_DTYPE_I32: ((int32_t*)out->data)[i] = t->int32_data[i]; break;
        case OPARA_DTYPE_F16: ((uint16_t*)out->data)[i] = (uint16_t)t->int32_data[i]; break;
        default: ((uint8_t*)out->data)[i] = (uint8_t)t->int32_data[i]; break;
        }
    }
    return OPARA_OK;
}

static int opara__path_is_safe(const char* p) {
    const char* seg = p;
    if (!p[0] || p[0] == '/' || p[0] == '\\' || (p[0] && p[1] == ':')) return 0;
    for (;;) {
        const char* end = seg;
        while (*end && *end != '/' && *end != '\\') ++end;
        if (end - seg == 2 && seg[0] == '.' && seg[1] == '.') return 0;
        if (!*end) return 1;
        seg = end + 1;
    }
}

static opara_result opara__external_fill(opara_runtime* rt, const opara__onnx_tensor* t, const char* base_dir,
                                         const char* where, opara__tensor_data* out) {
    const char* location = NULL;
    uint64_t offset = 0, length = out->nbytes;
    int has_length = 0;
    uint32_t i;
    for (i = 0; i < t->n_external; ++i) {
        const opara__onnx_kv* kv = &t->external[i];
        char* end = NULL;
        if (strcmp(kv->key, "location") == 0) location = kv->value;
        else if (strcmp(kv->key, "offset") == 0 || strcmp(kv->key, "length") == 0) {
            unsigned long long v = strtoull(kv->value, &end, 10);
            if (!kv->value[0] || !end || *end || kv->value[0] == '-')
                return opara__fail(rt, OPARA_ERR_EXTERNAL_DATA, "%s: external_data %s '%s' is not a number", where,
                                   kv->key, kv->value);
            if (kv->key[0] == 'o') offset = v;
            else length = v, has_length = 1;
        }
    }
    if (!location) return opara__fail(rt, OPARA_ERR_EXTERNAL_DATA, "%s: external data without a location", where);
    if (!opara__path_is_safe(location))
        return opara__fail(rt, OPARA_ERR_EXTERNAL_DATA,
                           "%s: external data location '%s' must be a relative path inside the model's directory",
                           where, location);
    if (has_length && length != out->nbytes)
        return opara__fail(rt, OPARA_ERR_EXTERNAL_DATA, "%s: external data length %llu, dims need %llu bytes", where,
                           (unsigned long long)length, (unsigned long long)out->nbytes);
    if (!base_dir)
        return opara__fail(rt, OPARA_ERR_EXTERNAL_DATA,
                           "%s: external data '%s' needs the model's directory (load from a file, or set "
                           "external_data_dir)", where, location);
#ifdef OPARA_NO_STDIO
    (void)offset;
    return opara__fail(rt, OPARA_ERR_EXTERNAL_DATA, "%s: external data needs stdio (OPARA_NO_STDIO is set)", where);
#else
    {
        char path[4096];
        FILE* f;
        size_t got = 0;
        if (opara__format(path, sizeof path, "%s/%s", base_dir, location) >= sizeof path - 1)
            return opara__fail(rt, OPARA_ERR_EXTERNAL_DATA, "%s: external data path too long", where);
        f = fopen(path, "rb");
        if (!f) return opara__fail(rt, OPARA_ERR_EXTERNAL_DATA, "%s: cannot open external data '%s'", where, path);
        if (offset <= (uint64_t)LONG_MAX && fseek(f, (long)offset, SEEK_SET) == 0)
            got = fread(out->data, 1, (size_t)out->nbytes, f);
        fclose(f);
        if (got != out->nbytes)
            return opara__fail(rt, OPARA_ERR_EXTERNAL_DATA, "%s: '%s' has fewer than %llu bytes at offset %llu", where,
                               path, (unsigned long long)out->nbytes, (unsigned long long)offset);
        return OPARA_OK;
    }
#endif
}

OPARA__PRIVATE void opara__tensor_data_free(opara_runtime* rt, opara__tensor_data* t) {
    opara__free(rt, t->data);
    t->data = NULL;
}

OPARA__PRIVATE opara_result opara__onnx_tensor_load(opara_runtime* rt, const opara__onnx_tensor* t,
                                                   const char* base_dir, const char* where, opara__tensor_data* out) {
    uint32_t i;
    int64_t count = 1;
    size_t esize, bytes;
    opara_result r;
    memset(out, 0, sizeof *out);
    opara__format(out->name, sizeof out->name, "%s", t->name);
    out->dtype = opara__onnx_dtype(t->data_type);
    if (out->dtype == OPARA_DTYPE_UNDEFINED)
        return opara__fail(rt, OPARA_ERR_BAD_DTYPE, "%s: tensor data type %d is not supported", where,
                           (int)t->data_type);
    if (t->has_segment) return opara__fail(rt, OPARA_ERR_UNSUPPORTED, "%s: segmented tensors are not supported", where);
    if (t->n_dims > OPARA_MAX_DIMS)
        return opara__fail(rt, OPARA_ERR_LIMIT_EXCEEDED, "%s: rank %u exceeds OPARA_MAX_DIMS (%d)", where, t->n_dims,
                           OPARA_MAX_DIMS);
    out->shape.ndim = (int32_t)t->n_dims;
    for (i = 0; i < t->n_dims; ++i) {
        if (t->dims[i] < 0 || !opara__mul_i64(count, t->dims[i], &count))
            return opara__fail(rt, OPARA_ERR_ONNX_INVALID, "%s: invalid dims[%u] = %lld", where, i,
                               (long long)t->dims[i]);
        out->shape.dims[i] = t->dims[i];
    }
    esize = opara_dtype_size(out->dtype);
    if ((uint64_t)count > (uint64_t)((size_t)-1) || !opara__mul_size((size_t)count, esize, &bytes))
        return opara__fail(rt, OPARA_ERR_LIMIT_EXCEEDED, "%s: tensor too large", where);
    out->count = (uint64_t)count;
    out->nbytes = bytes;
    if (t->data_location == 0 && t->has_raw && t->raw.size != bytes)
        return opara__fail(rt, OPARA_ERR_ONNX_INVALID, "%s: raw_data has %llu bytes, dims need %llu", where,
                           (unsigned long long)t->raw.size, (unsigned long long)bytes);
    out->data = opara__alloc(rt, bytes ? bytes : 1);
    if (!out->data) return opara__fail(rt, OPARA_ERR_OUT_OF_MEMORY, "%s: out of memory (%zu bytes)", where, bytes);
    if (t->data_location == 1) r = opara__external_fill(rt, t, base_dir, where, out);
    else if (t->has_raw) {
        opara__copy_le(out->data, t->raw.data, out->count, esize);
        r = OPARA_OK;
    } else r = opara__typed_fill(rt, t, where, out);
    if (r != OPARA_OK) opara__tensor_data_free(rt, out);
    return r;
}

OPARA__PRIVATE opara_result opara__onnx_read_tensor(opara_runtime* rt, const void* data, size_t size,
                                                   opara__tensor_data* out) {
    opara__pool pool;
    opara__onnx_tensor t;
    opara_result r;
    memset(&pool, 0, sizeof pool);
    memset(out, 0, sizeof *out);
    r = opara__onnx_decode_tensor(rt, &pool, (const uint8_t*)data, size, &t);
    if (r == OPARA_OK) r = opara__onnx_tensor_load(rt, &t, NULL, t.name[0] ? t.name : "tensor", out);
    opara__pool_free(rt, &pool);
    return r;
}

/* ---- importer state --------------------------------------------------------------------------- */

typedef struct opara__imp_side {
    int32_t alias;        /* Identity/Dropout output: the value it stands for, else -1 */
    const int64_t* coef;  /* I64 constants: per-element multiple of the batch, or NULL (all zero) */
    opara__shape shape;   /* inferred shape of activations; dims may be OPARA__DIM_BATCH or -1 (unknown) */
    const char* rename;   /* the graph-output name this value takes in the rebuilt graph */
} opara__imp_side;

typedef struct opara__imp {
    opara_runtime* rt;
    opara__graph* g;
    const opara__onnx_model* model;
    const opara_onnx_options* opt;
    const char* base_dir;
    int64_t opset;
    opara__imp_side* side;
    size_t side_cap;
    const opara__onnx_node* node; /* node being imported, for messages */
    const char* node_name;
    const opara__onnx_extra* extra;
} opara__imp;

/* A constant tensor seen by the evaluator. */
typedef struct opara__cv {
    opara_dtype dtype;
    opara__shape shape;
    const uint8_t* data;
    const int64_t* coef;
    uint64_t count;
} opara__cv;

/* The evaluator declines (the node is then imported as an operator, or reported). */
#define OPARA__NOFOLD 1

static opara__imp_side* opara__side(opara__imp* im, int32_t v) {
    size_t need = (size_t)v + 1, old = im->side_cap, i;
    if (need > im->side_cap) {
        if (opara__grow(im->rt, (void**)&im->side, &im->side_cap, need, sizeof *im->side) != OPARA_OK) return NULL;
        for (i = old; i < im->side_cap; ++i) {
            im->side[i].alias = -1;
            im->side[i].shape.ndim = -1;
        }
    }
    return &im->side[v];
}

static int32_t opara__imp_find(opara__imp* im, const char* name) {
    int32_t v = opara__graph_find_value(im->g, name);
    int guard = 0;
    while (v >= 0 && (size_t)v < im->side_cap && im->side[v].alias >= 0 && guard++ < 1000000) v = im->side[v].alias;
    return v;
}

static const opara__shape* opara__imp_shape(opara__imp* im, int32_t v) {
    const opara__value* val = &im->g->values[v];
    if (val->kind != OPARA__VALUE_ACTIVATION || (size_t)v >= im->side_cap) return &val->shape;
    return &im->side[v].shape;
}

static int opara__is_const(opara__imp* im, int32_t v) {
    return v >= 0 && im->g->values[v].kind == OPARA__VALUE_CONST;
}

static void opara__cv_of(opara__imp* im, int32_t v, opara__cv* cv) {
    const opara__value* val = &im->g->values[v];
    int32_t i;
    cv->dtype = val->dtype;
    cv->shape = val->shape;
    cv->data = (const uint8_t*)val->data;
    cv->coef = (size_t)v < im->side_cap ? im->side[v].coef : NULL;
    cv->count = 1;
    for (i = 0; i < val->shape.ndim; ++i) cv->count *= (uint64_t)val->shape.dims[i];
}

static void* opara__imp_alloc(opara__imp* im, uint64_t bytes) {
    if (bytes > (uint64_t)((size_t)-1 - 64)) return NULL;
    return opara__pool_alloc(im->rt, &im->g->pool, (size_t)bytes + 1, 64);
}

static opara_result opara__imp_oom(opara__imp* im) {
    return opara__fail(im->rt, OPARA_ERR_OUT_OF_MEMORY, "node '%s': out of memory", im->node_name);
}

static uint64_t opara__shape_count(const opara__shape* s) {
    uint64_t n = 1;
    int32_t i;
    for (i = 0; i < s->ndim; ++i) n *= (uint64_t)s->dims[i];
    return n;
}

/* Creates (or reuses an existing undefined) value name as a constant; data is in the graph pool. */
static opara_result opara__imp_const(opara__imp* im, const char* name, opara_dtype dtype, const opara__shape* shape,
                                     const void* data, const int64_t* coef, int copy) {
    int32_t v = opara__graph_find_value(im->g, name);
    opara__imp_side* side;
    int has_coef = 0;
    uint64_t i, n = opara__shape_count(shape);
    if (v >= 0) return opara__fail(im->rt, OPARA_ERR_ONNX_INVALID, "tensor '%s' is defined twice", name);
    v = opara__graph_add_value(im->g, name, dtype, shape);
    if (v < 0) return im->rt->error.text[0] ? OPARA_ERR_ONNX_INVALID : OPARA_ERR_INTERNAL;
    if (opara__graph_set_const(im->g, v, data, n * opara_dtype_size(dtype), copy) != OPARA_OK) return OPARA_ERR_OUT_OF_MEMORY;
    for (i = 0; coef && i < n; ++i) has_coef |= coef[i] != 0;
    side = opara__side(im, v);
    if (!side) return opara__imp_oom(im);
    side->coef = has_coef ? coef : NULL;
    return OPARA_OK;
}

/* ---- element access --------------------------------------------------------------------------- */

static int opara__dtype_is_float(opara_dtype t) { return t == OPARA_DTYPE_F32 || t == OPARA_DTYPE_F64; }
static int opara__dtype_is_int(opara_dtype t) {
    return t == OPARA_DTYPE_I64 || t == OPARA_DTYPE_I32 || t == OPARA_DTYPE_I8 || t == OPARA_DTYPE_U8 ||
           t == OPARA_DTYPE_BOOL;
}
static int opara__dtype_numeric(opara_dtype t) { return opara__dtype_is_float(t) || opara__dtype_is_int(t); }

static double opara__get_f64(opara_dtype t, const uint8_t* p, uint64_t i) {
    switch (t) {
    case OPARA_DTYPE_F32: { float v; memcpy(&v, p + i * 4, 4); return v; }
    case OPARA_DTYPE_F64: { double v; memcpy(&v, p + i * 8, 8); return v; }
    case OPARA_DTYPE_I64: { int64_t v; memcpy(&v, p + i * 8, 8); return (double)v; }
    case OPARA_DTYPE_I32: { int32_t v; memcpy(&v, p + i * 4, 4); return v; }
    case OPARA_DTYPE_I8: return (double)(int8_t)p[i];
    default: return p[i];
    }
}

static int64_t opara__get_i64(opara_dtype t, const uint8_t* p, uint64_t i) {
    switch (t) {
    case OPARA_DTYPE_I64: { int64_t v; memcpy(&v, p + i * 8, 8); return v; }
    case OPARA_DTYPE_I32: { int32_t v; memcpy(&v, p + i * 4, 4); return v; }
    case OPARA_DTYPE_I8: return (int8_t)p[i];
    case OPARA_DTYPE_U8: case OPARA_DTYPE_BOOL: return p[i];
    default: {
        double d = opara__get_f64(t, p, i);
        if (!(d > -9.2e18 && d < 9.2e18)) return 0;
        return (int64_t)d;
    }
    }
}

static void opara__put_f64(opara_dtype t, uint8_t* p, uint64_t i, double v) {
    switch (t) {
    case OPARA_DTYPE_F32: { float f = (float)v; memcpy(p + i * 4, &f, 4); break; }
    case OPARA_DTYPE_F64: memcpy(p + i * 8, &v, 8); break;
    default: break;
    }
}

static void opara__put_i64(opara_dtype t, uint8_t* p, uint64_t i, int64_t v) {
    switch (t) {
    case OPARA_DTYPE_I64: memcpy(p + i * 8, &v, 8); break;
    case OPARA_DTYPE_I32: { int32_t x = (int32_t)v; memcpy(p + i * 4, &x, 4); break; }
    case OPARA_DTYPE_BOOL: p[i] = (uint8_t)(v != 0); break;
    case OPARA_DTYPE_I8: case OPARA_DTYPE_U8: p[i] = (uint8_t)v; break;
    default: opara__put_f64(t, p, i, (double)v); break;
    }
}

/* Integer values of a 1-D (or scalar) constant with no batch terms; 0 if not so. */
static int opara__cv_ints(const opara__cv* cv, int64_t* out, uint32_t cap, uint32_t* n) {
    uint64_t i;
    if (!opara__dtype_is_int(cv->dtype) || cv->shape.ndim > 1 || cv->count > cap) return 0;
    for (i = 0; i < cv->count; ++i) {
        if (cv->coef && cv->coef[i]) return 0;
        out[i] = opara__get_i64(cv->dtype, cv->data, i);
    }
    *n = (uint32_t)cv->count;
    return 1;
}

static int64_t opara__onnx_axis(int64_t axis, int32_t rank) {
    return axis < 0 ? axis + rank : axis;
}

/* ---- attributes of the ONNX node being imported ------------------------------------------------ */

static const opara__onnx_attr* opara__oattr(const opara__onnx_node* n, const char* name) {
    uint32_t i;
    for (i = 0; i < n->n_attrs; ++i)
        if (strcmp(n->attrs[i].name, name) == 0) return &n->attrs[i];
    return NULL;
}

static int64_t opara__oattr_int(const opara__onnx_node* n, const char* name, int64_t fallback) {
    const opara__onnx_attr* a = opara__oattr(n, name);
    return a && a->has_i ? a->i : fallback;
}

static const int64_t* opara__oattr_ints(const opara__onnx_node* n, const char* name, uint32_t* count) {
    const opara__onnx_attr* a = opara__oattr(n, name);
    *count = a ? a->n_ints : 0;
    return a && (a->n_ints || a->type == OPARA__ONNX_ATTR_INTS) ? a->ints : NULL;
}

/* ---- constant evaluator ----------------------------------------------------------------------- */

static int opara__cv_alloc(opara__imp* im, opara__cv* out, opara_dtype dtype, const opara__shape* shape,
                           int with_coef, uint8_t** data, int64_t** coef) {
    out->dtype = dtype;
    out->shape = *shape;
    out->count = opara__shape_count(shape);
    *data = (uint8_t*)opara__imp_alloc(im, out->count * opara_dtype_size(dtype));
    *coef = with_coef ? (int64_t*)opara__imp_alloc(im, out->count * 8) : NULL;
    if (!*data || (with_coef && !*coef)) return opara__imp_oom(im);
    if (*coef) memset(*coef, 0, (size_t)out->count * 8);
    out->data = *data;
    out->coef = *coef;
    return OPARA_OK;
}

static int opara__bcast_shape(const opara__cv* const* in, uint32_t n, opara__shape* out) {
    uint32_t k;
    int32_t d;
    out->ndim = 0;
    for (k = 0; k < n; ++k) out->ndim = OPARA__MAX(out->ndim, in[k]->shape.ndim);
    for (d = 0; d < out->ndim; ++d) {
        int64_t dim = 1;
        for (k = 0; k < n; ++k) {
            int32_t off = out->ndim - in[k]->shape.ndim;
            int64_t x = d >= off ? in[k]->shape.dims[d - off] : 1;
            if (x == dim || x == 1) continue;
            if (dim != 1) return 0;
            dim = x;
        }
        out->dims[d] = dim;
    }
    return 1;
}

static uint64_t opara__bcast_src(const opara__shape* out, const opara__shape* in, uint64_t idx) {
    uint64_t src = 0, stride = 1;
    int32_t d;
    for (d = out->ndim - 1; d >= 0; --d) {
        int64_t od = out->dims[d], coord = (int64_t)(idx % (uint64_t)od);
        int32_t id = d - (out->ndim - in->ndim);
        idx /= (uint64_t)od;
        if (id < 0) continue;
        if (in->dims[id] != 1) src += (uint64_t)coord * stride;
        stride *= (uint64_t)in->dims[id];
    }
    return src;
}

static int64_t opara__wrap_add(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
static int64_t opara__wrap_mul(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }

/* value + k*batch arithmetic; returns 0 when the result is not of that form. */
static int opara__affine(char op, int64_t xa, int64_t ka, int64_t xb, int64_t kb, int64_t* x, int64_t* k) {
    switch (op) {
    case '+': *x = opara__wrap_add(xa, xb); *k = opara__wrap_add(ka, kb); return 1;
    case '-': *x = opara__wrap_add(xa, -xb); *k = opara__wrap_add(ka, -kb); return 1;
    case '*':
        if (ka && kb) return 0;
        *x = opara__wrap_mul(xa, xb);
        *k = opara__wrap_add(opara__wrap_mul(ka, xb), opara__wrap_mul(kb, xa));
        return 1;
    case '/':
        if (kb || xb == 0 || (xb == -1 && (xa == INT64_MIN || ka == INT64_MIN))) return 0;
        if (ka % xb || (ka && xa % xb)) return 0;
        *x = xa / xb;
        *k = ka / xb;
        return 1;
    default: return 0;
    }
}

static int opara__eval_binary(opara__imp* im, char op, const opara__cv* a, const opara__cv* b, opara__cv* out) {
    const opara__cv* in[2];
    opara__shape shape;
    opara_dtype rt;
    uint8_t* data;
    int64_t* coef;
    uint64_t i;
    int r, is_float = opara__dtype_is_float(a->dtype);
    in[0] = a;
    in[1] = b;
    if (!opara__dtype_numeric(a->dtype) || a->dtype != b->dtype || !opara__bcast_shape(in, 2, &shape)) return OPARA__NOFOLD;
    rt = op == '=' ? OPARA_DTYPE_BOOL : a->dtype;
    r = opara__cv_alloc(im, out, rt, &shape, (a->coef || b->coef) && rt == OPARA_DTYPE_I64, &data, &coef);
    if (r != OPARA_OK) return r;
    for (i = 0; i < out->count; ++i) {
        uint64_t ia = opara__bcast_src(&shape, &a->shape, i), ib = opara__bcast_src(&shape, &b->shape, i);
        if (is_float) {
            double x = opara__get_f64(a->dtype, a->data, ia), y = opara__get_f64(b->dtype, b->data, ib), z;
            switch (op) {
            case '+': z = x + y; break;
            case '-': z = x - y; break;
            case '*': z = x * y; break;
            case '/': z = x / y; break;
            case '^': z = pow(x, y); break;
            default: opara__put_i64(rt, data, i, x == y); continue;
            }
            opara__put_f64(rt, data, i, z);
        } else {
            int64_t xa = opara__get_i64(a->dtype, a->data, ia), xb = opara__get_i64(b->dtype, b->data, ib);
            int64_t ka = a->coef ? a->coef[ia] : 0, kb = b->coef ? b->coef[ib] : 0, x, k;
            if (op == '=') {
                if (ka != kb) return OPARA__NOFOLD;
                opara__put_i64(rt, data, i, xa == xb);
                continue;
            }
            if (!opara__affine(op, xa, ka, xb, kb, &x, &k)) return OPARA__NOFOLD;
            opara__put_i64(rt, data, i, x);
            if (coef) coef[i] = k;
            else if (k) return OPARA__NOFOLD;
        }
    }
    return OPARA_OK;
}

static int opara__eval_where(opara__imp* im, const opara__cv* c, const opara__cv* x, const opara__cv* y,
                             opara__cv* out) {
    const opara__cv* in[3];
    opara__shape shape;
    uint8_t* data;
    int64_t* coef;
    uint64_t i;
    size_t es = opara_dtype_size(x->dtype);
    int r;
    in[0] = c, in[1] = x, in[2] = y;
    if (x->dtype != y->dtype || !opara__dtype_is_int(c->dtype) || !es || !opara__bcast_shape(in, 3, &shape))
        return OPARA__NOFOLD;
    r = opara__cv_alloc(im, out, x->dtype, &shape, x->coef || y->coef, &data, &coef);
    if (r != OPARA_OK) return r;
    for (i = 0; i < out->count; ++i) {
        int pick = opara__get_i64(c->dtype, c->data, opara__bcast_src(&shape, &c->shape, i)) != 0;
        const opara__cv* src = pick ? x : y;
        uint64_t s = opara__bcast_src(&shape, &src->shape, i);
        memcpy(data + i * es, src->data + s * es, es);
        if (coef) coef[i] = src->coef ? src->coef[s] : 0;
    }
    return OPARA_OK;
}

/* dst[n] = src[base + sum(idx_d * strides_d)] over the box dims, in row-major order. */
static void opara__strided_copy(uint8_t* dst, const uint8_t* src, size_t es, int32_t rank, const int64_t* dims,
                                const int64_t* strides, int64_t base) {
    int64_t idx[OPARA_MAX_DIMS], off = base;
    uint64_t n, total = 1;
    int32_t d;
    for (d = 0; d < rank; ++d) total *= (uint64_t)dims[d], idx[d] = 0;
    for (n = 0; n < total; ++n) {
        memcpy(dst + n * es, src + (size_t)off * es, es);
        for (d = rank - 1; d >= 0; --d) {
            off += strides[d];
            if (++idx[d] < dims[d]) break;
            off -= strides[d] * dims[d];
            idx[d] = 0;
        }
    }
}

static void opara__row_strides(const opara__shape* s, int64_t* strides) {
    int64_t st = 1;
    int32_t d;
    for (d = s->ndim - 1; d >= 0; --d) strides[d] = st, st *= s->dims[d];
}

/* Runs a strided copy of the data and, when present, of the batch coefficients. */
static int opara__eval_strided(opara__imp* im, const opara__cv* x, const opara__shape* out_shape,
                               const int64_t* strides, int64_t base, opara__cv* out) {
    uint8_t* data;
    int64_t* coef;
    size_t es = opara_dtype_size(x->dtype);
    int r = opara__cv_alloc(im, out, x->dtype, out_shape, x->coef != NULL, &data, &coef);
    if (r != OPARA_OK) return r;
    if (!out->count) return OPARA_OK;
    opara__strided_copy(data, x->data, es, out_shape->ndim, out_shape->dims, strides, base);
    if (coef) opara__strided_copy((uint8_t*)coef, (const uint8_t*)x->coef, 8, out_shape->ndim, out_shape->dims, strides, base);
    return OPARA_OK;
}

static int opara__eval_transpose(opara__imp* im, const opara__onnx_node* n, const opara__cv* x, opara__cv* out) {
    int64_t in_strides[OPARA_MAX_DIMS], strides[OPARA_MAX_DIMS];
    opara__shape shape;
    uint32_t count;
    const int64_t* perm = opara__oattr_ints(n, "perm", &count);
    int32_t d;
    if (perm && count != (uint32_t)x->shape.ndim) return OPARA__NOFOLD;
    opara__row_strides(&x->shape, in_strides);
    shape.ndim = x->shape.ndim;
    for (d = 0; d < shape.ndim; ++d) {
        int64_t p = perm ? perm[d] : shape.ndim - 1 - d;
        if (p < 0 || p >= shape.ndim) return OPARA__NOFOLD;
        shape.dims[d] = x->shape.dims[p];
        strides[d] = in_strides[p];
    }
    return opara__eval_strided(im, x, &shape, strides, 0, out);
}

/* Per-axis start/step/length of an ONNX Slice on shape in; 0 when the parameters are invalid. */
static int opara__slice_box(const opara__shape* in, const int64_t* starts, const int64_t* ends, const int64_t* axes,
                            const int64_t* steps, uint32_t k, int64_t* start, int64_t* step, opara__shape* out) {
    uint32_t i;
    int32_t d;
    *out = *in;
    for (d = 0; d < in->ndim; ++d) start[d] = 0, step[d] = 1;
    for (i = 0; i < k; ++i) {
        int64_t axis = axes ? opara__onnx_axis(axes[i], in->ndim) : (int64_t)i;
        int64_t dim, s, e, st = steps ? steps[i] : 1, len;
        if (axis < 0 || axis >= in->ndim || st == 0) return 0;
        dim = in->dims[axis];
        if (dim < 0) return 0;
        s = starts[i] < 0 ? starts[i] + dim : starts[i];
        e = ends[i] < 0 ? ends[i] + dim : ends[i];
        if (st > 0) {
            s = OPARA__MAX(0, OPARA__MIN(s, dim));
            e = OPARA__MAX(0, OPARA__MIN(e, dim));
            len = e > s ? (e - s + st - 1) / st : 0;
        } else {
            s = OPARA__MAX(-1, OPARA__MIN(s, dim - 1));
            e = OPARA__MAX(-1, OPARA__MIN(e, dim - 1));
            len = s > e ? (s - e + (-st) - 1) / (-st) : 0;
        }
        start[axis] = s;
        step[axis] = st;
        out->dims[axis] = len;
    }
    return 1;
}

static int opara__eval_slice(opara__imp* im, const opara__cv* x, const int64_t* starts, const int64_t* ends,
                             const int64_t* axes, const int64_t* steps, uint32_t k, opara__cv* out) {
    int64_t start[OPARA_MAX_DIMS], step[OPARA_MAX_DIMS], in_strides[OPARA_MAX_DIMS], strides[OPARA_MAX_DIMS], base = 0;
    opara__shape shape;
    int32_t d;
    if (!opara__slice_box(&x->shape, starts, ends, axes, steps, k, start, step, &shape)) return OPARA__NOFOLD;
    opara__row_strides(&x->shape, in_strides);
    for (d = 0; d < shape.ndim; ++d) {
        strides[d] = step[d] * in_strides[d];
        if (shape.dims[d]) base += start[d] * in_strides[d];
    }
    return opara__eval_strided(im, x, &shape, strides, base, out);
}

static int opara__eval_gather(opara__imp* im, const opara__cv* x, const opara__cv* idx, int64_t axis, opara__cv* out) {
    opara__shape shape;
    uint8_t* data;
    int64_t* coef;
    uint64_t outer = 1, inner = 1, o, j;
    int64_t dim;
    int32_t d;
    size_t es = opara_dtype_size(x->dtype);
    int r;
    axis = opara__onnx_axis(axis, x->shape.ndim);
    if (axis < 0 || axis >= x->shape.ndim || !opara__dtype_is_int(idx->dtype) || idx->coef ||
        x->shape.ndim + idx->shape.ndim - 1 > OPARA_MAX_DIMS)
        return OPARA__NOFOLD;
    dim = x->shape.dims[axis];
    shape.ndim = 0;
    for (d = 0; d < axis; ++d) shape.dims[shape.ndim++] = x->shape.dims[d], outer *= (uint64_t)x->shape.dims[d];
    for (d = 0; d < idx->shape.ndim; ++d) shape.dims[shape.ndim++] = idx->shape.dims[d];
    for (d = (int32_t)axis + 1; d < x->shape.ndim; ++d) shape.dims[shape.ndim++] = x->shape.dims[d], inner *= (uint64_t)x->shape.dims[d];
    r = opara__cv_alloc(im, out, x->dtype, &shape, x->coef != NULL, &data, &coef);
    if (r != OPARA_OK) return r;
    for (o = 0; o < outer; ++o)
        for (j = 0; j < idx->count; ++j) {
            int64_t k = opara__get_i64(idx->dtype, idx->data, j);
            uint64_t src, dst = (o * idx->count + j) * inner;
            if (k < 0) k += dim;
            if (k < 0 || k >= dim)
                return opara__fail(im->rt, OPARA_ERR_ONNX_INVALID, "node '%s' (Gather): index %lld out of range [0, %lld)",
                                   im->node_name, (long long)opara__get_i64(idx->dtype, idx->data, j), (long long)dim);
            src = (o * (uint64_t)dim + (uint64_t)k) * inner;
            memcpy(data + dst * es, x->data + src * es, (size_t)(inner * es));
            if (coef) memcpy(coef + dst, x->coef + src, (size_t)(inner * 8));
        }
    return OPARA_OK;
}

static int opara__eval_concat(opara__imp* im, const opara__cv* in, uint32_t n, int64_t axis, opara__cv* out) {
    opara__shape shape = in[0].shape;
    uint8_t* data;
    int64_t* coef;
    uint64_t outer = 1, o, pos = 0;
    uint32_t k;
    int32_t d;
    int any_coef = 0, r;
    size_t es = opara_dtype_size(in[0].dtype);
    axis = opara__onnx_axis(axis, shape.ndim);
    if (axis < 0 || axis >= shape.ndim) return OPARA__NOFOLD;
    shape.dims[axis] = 0;
    for (k = 0; k < n; ++k) {
        if (in[k].dtype != in[0].dtype || in[k].shape.ndim != shape.ndim) return OPARA__NOFOLD;
        for (d = 0; d < shape.ndim; ++d)
            if (d != axis && in[k].shape.dims[d] != shape.dims[d]) return OPARA__NOFOLD;
        shape.dims[axis] += in[k].shape.dims[axis];
        any_coef |= in[k].coef != NULL;
    }
    for (d = 0; d < axis; ++d) outer *= (uint64_t)shape.dims[d];
    r = opara__cv_alloc(im, out, in[0].dtype, &shape, any_coef, &data, &coef);
    if (r != OPARA_OK) return r;
    for (o = 0; o < outer; ++o)
        for (k = 0; k < n; ++k) {
            uint64_t block = outer ? in[k].count / outer : 0;
            memcpy(data + pos * es, in[k].data + o * block * es, (size_t)(block * es));
            if (coef && in[k].coef) memcpy(coef + pos, in[k].coef + o * block, (size_t)(block * 8));
            pos += block;
        }
    return OPARA_OK;
}

static int opara__eval_cast(opara__imp* im, const opara__cv* x, int64_t to, opara__cv* out) {
    opara_dtype t = opara__onnx_dtype((int32_t)to);
    uint8_t* data;
    int64_t* coef;
    uint64_t i;
    int r;
    if (!opara__dtype_numeric(t) || !opara__dtype_numeric(x->dtype)) return OPARA__NOFOLD;
    if (x->coef && t != OPARA_DTYPE_I64) return OPARA__NOFOLD;
    r = opara__cv_alloc(im, out, t, &x->shape, x->coef != NULL, &data, &coef);
    if (r != OPARA_OK) return r;
    for (i = 0; i < x->count; ++i) {
        if (opara__dtype_is_float(t)) opara__put_f64(t, data, i, opara__get_f64(x->dtype, x->data, i));
        else if (t == OPARA_DTYPE_BOOL) opara__put_i64(t, data, i, opara__get_f64(x->dtype, x->data, i) != 0);
        else opara__put_i64(t, data, i, opara__get_i64(x->dtype, x->data, i));
    }
    if (coef) memcpy(coef, x->coef, (size_t)x->count * 8);
    return OPARA_OK;
}

/* Same data, new shape (Reshape, Flatten, Squeeze, Unsqueeze). */
static int opara__eval_view(const opara__cv* x, const opara__shape* shape, opara__cv* out) {
    if (opara__shape_count(shape) != x->count) return OPARA__NOFOLD;
    *out = *x;
    out->shape = *shape;
    return OPARA_OK;
}

/* Output shape of an ONNX Reshape with fully known dims; 0 when invalid. */
static int opara__reshape_dims(const opara__shape* in, const int64_t* spec, uint32_t n, int allowzero,
                               opara__shape* out) {
    int64_t known = 1, total = (int64_t)opara__shape_count(in);
    int32_t infer = -1;
    uint32_t i;
    if (n > OPARA_MAX_DIMS) return 0;
    out->ndim = (int32_t)n;
    for (i = 0; i < n; ++i) {
        int64_t d = spec[i];
        if (d == 0 && !allowzero) {
            if ((int32_t)i >= in->ndim) return 0;
            d = in->dims[i];
        }
        if (d == -1) {
            if (infer >= 0) return 0;
            infer = (int32_t)i;
            d = 1;
        } else if (d < 0) return 0;
        out->dims[i] = d;
        known *= d;
    }
    if (infer >= 0) {
        if (known == 0 || total % known) return 0;
        out->dims[infer] = total / known;
    }
    return opara__shape_count(out) == (uint64_t)total;
}

static int opara__squeeze_shape(const opara__shape* in, const int64_t* axes, uint32_t n, opara__shape* out) {
    int32_t d;
    uint32_t i;
    out->ndim = 0;
    for (d = 0; d < in->ndim; ++d) {
        int drop = 0;
        if (!axes) drop = in->dims[d] == 1;
        for (i = 0; axes && i < n; ++i) drop |= opara__onnx_axis(axes[i], in->ndim) == d;
        if (drop && in->dims[d] != 1 && in->dims[d] != -1) return 0;
        if (!drop) out->dims[out->ndim++] = in->dims[d];
    }
    return 1;
}

static int opara__unsqueeze_shape(const opara__shape* in, const int64_t* axes, uint32_t n, opara__shape* out) {
    int32_t rank = in->ndim + (int32_t)n, d, src = 0;
    uint32_t i;
    if (rank > OPARA_MAX_DIMS) return 0;
    out->ndim = rank;
    for (d = 0; d < rank; ++d) out->dims[d] = -2;
    for (i = 0; i < n; ++i) {
        int64_t a = opara__onnx_axis(axes[i], rank);
        if (a < 0 || a >= rank || out->dims[a] == 1) return 0;
        out->dims[a] = 1;
    }
    for (d = 0; d < rank; ++d)
        if (out->dims[d] == -2) out->dims[d] = in->dims[src++];
    return 1;
}

static int opara__flatten_shape(const opara__shape* in, int64_t axis, opara__shape* out) {
    int64_t a = opara__onnx_axis(axis, in->ndim), outer = 1, inner = 1;
    int32_t d;
    if (a < 0 || a > in->ndim) return 0;
    for (d = 0; d < in->ndim; ++d) {
        int64_t x = in->dims[d];
        int64_t* acc = d < a ? &outer : &inner;
        if (x == OPARA__DIM_BATCH) {
            if (*acc != 1 && *acc != OPARA__DIM_BATCH) *acc = -1;
            else *acc = OPARA__DIM_BATCH;
        } else if (x < 0 || *acc == -1) *acc = -1;
        else if (*acc == OPARA__DIM_BATCH) { if (x != 1) *acc = -1; }
        else *acc *= x;
    }
    out->ndim = 2;
    out->dims[0] = outer;
    out->dims[1] = inner;
    return 1;
}

static int opara__eval_constant_of_shape(opara__imp* im, const opara__cv* shp, opara__cv* out) {
    const opara__onnx_attr* a = opara__oattr(im->node, "value");
    opara__tensor_data value;
    opara__shape shape;
    uint8_t* data;
    int64_t* coef;
    uint64_t i;
    uint32_t n;
    int r;
    size_t es;
    if (!opara__cv_ints(shp, shape.dims, OPARA_MAX_DIMS, &n)) return OPARA__NOFOLD;
    shape.ndim = (int32_t)n;
    for (i = 0; i < n; ++i)
        if (shape.dims[i] < 0) return OPARA__NOFOLD;
    memset(&value, 0, sizeof value);
    if (a && a->t) {
        r = opara__onnx_tensor_load(im->rt, a->t, NULL, im->node_name, &value);
        if (r != OPARA_OK) return r;
        if (value.count != 1) {
            opara__tensor_data_free(im->rt, &value);
            return opara__fail(im->rt, OPARA_ERR_ONNX_INVALID, "node '%s' (ConstantOfShape): value must have one element",
                               im->node_name);
        }
    }
    r = opara__cv_alloc(im, out, a && a->t ? value.dtype : OPARA_DTYPE_F32, &shape, 0, &data, &coef);
    es = opara_dtype_size(out->dtype);
    for (i = 0; r == OPARA_OK && i < out->count; ++i) {
        if (value.data) memcpy(data + i * es, value.data, es);
        else memset(data + i * es, 0, es);
    }
    opara__tensor_data_free(im->rt, &value);
    return r;
}

static int opara__eval_range(opara__imp* im, const opara__cv* start, const opara__cv* limit, const opara__cv* delta,
                             opara__cv* out) {
    opara__shape shape;
    uint8_t* data;
    int64_t* coef;
    double s, l, d, n;
    uint64_t i;
    int r;
    if (start->count != 1 || limit->count != 1 || delta->count != 1 || start->coef || limit->coef || delta->coef ||
        !opara__dtype_numeric(start->dtype))
        return OPARA__NOFOLD;
    s = opara__get_f64(start->dtype, start->data, 0);
    l = opara__get_f64(limit->dtype, limit->data, 0);
    d = opara__get_f64(delta->dtype, delta->data, 0);
    if (d == 0) return OPARA__NOFOLD;
    n = ceil((l - s) / d);
    if (!(n < 1e9)) return OPARA__NOFOLD;
    shape.ndim = 1;
    shape.dims[0] = n > 0 ? (int64_t)n : 0;
    r = opara__cv_alloc(im, out, start->dtype, &shape, 0, &data, &coef);
    for (i = 0; r == OPARA_OK && i < out->count; ++i) {
        if (opara__dtype_is_float(start->dtype)) opara__put_f64(start->dtype, data, i, s + (double)i * d);
        else
            opara__put_i64(start->dtype, data, i,
                           opara__get_i64(start->dtype, start->data, 0) + (int64_t)i * opara__get_i64(delta->dtype, delta->data, 0));
    }
    return r;
}

static int opara__eval_sqrt(opara__imp* im, const opara__cv* x, opara__cv* out) {
    uint8_t* data;
    int64_t* coef;
    uint64_t i;
    int r;
    if (!opara__dtype_is_float(x->dtype)) return OPARA__NOFOLD;
    r = opara__cv_alloc(im, out, x->dtype, &x->shape, 0, &data, &coef);
    for (i = 0; r == OPARA_OK && i < x->count; ++i) opara__put_f64(x->dtype, data, i, sqrt(opara__get_f64(x->dtype, x->data, i)));
    return r;
}

/* Shape of an input whose dims are all known or the batch. */
static int opara__eval_shape(opara__imp* im, int32_t v, opara__cv* out) {
    const opara__shape* s = opara__imp_shape(im, v);
    opara__shape shape;
    uint8_t* data;
    int64_t* coef;
    int64_t start = opara__oattr_int(im->node, "start", 0), end = opara__oattr_int(im->node, "end", INT64_MAX), i;
    int r;
    if (s->ndim < 0) return OPARA__NOFOLD;
    start = start < 0 ? OPARA__MAX(0, start + s->ndim) : OPARA__MIN(start, s->ndim);
    end = end < 0 ? OPARA__MAX(0, end + s->ndim) : OPARA__MIN(end, s->ndim);
    for (i = start; i < end; ++i)
        if (s->dims[i] < 0 && s->dims[i] != OPARA__DIM_BATCH) return OPARA__NOFOLD;
    shape.ndim = 1;
    shape.dims[0] = end > start ? end - start : 0;
    r = opara__cv_alloc(im, out, OPARA_DTYPE_I64, &shape, 1, &data, &coef);
    for (i = start; r == OPARA_OK && i < end; ++i) {
        int batch = s->dims[i] == OPARA__DIM_BATCH;
        opara__put_i64(OPARA_DTYPE_I64, data, (uint64_t)(i - start), batch ? 0 : s->dims[i]);
        coef[i - start] = batch;
    }
    return r;
}

/* ---- operator parameters: attribute or constant input ------------------------------------------ */

#define OPARA__PARAM_CAP 64

typedef struct opara__param {
    int present;
    uint32_t n;
    int64_t ints[OPARA__PARAM_CAP];
    float floats[OPARA__PARAM_CAP];
} opara__param;

static const char* opara__input_name(opara__imp* im, uint32_t i) {
    return i < im->node->n_inputs ? im->node->inputs[i] : "";
}

static opara_result opara__not_const(opara__imp* im, uint32_t i, const char* what) {
    return opara__fail(im->rt, OPARA_ERR_UNSUPPORTED_OP,
                       "node '%s' (%s): input %u '%s' (%s) must be a constant (it is computed at run time)",
                       im->node_name, im->node->op_type, i, opara__input_name(im, i), what);
}

/* Reads integer parameter `what` from attribute attr (when the node has it) or from constant
   input i. allow_batch: batch terms become OPARA__DIM_BATCH (exactly one batch) or -1. */
static opara_result opara__ints_param(opara__imp* im, const int32_t* in, uint32_t n_in, uint32_t i, const char* attr,
                                      int allow_batch, opara__param* p) {
    const opara__onnx_attr* a = attr ? opara__oattr(im->node, attr) : NULL;
    opara__cv cv;
    uint64_t k;
    int minus_one = 0;
    memset(p, 0, sizeof *p);
    if (a) {
        if (a->n_ints > OPARA__PARAM_CAP) goto too_many;
        p->present = 1;
        p->n = a->n_ints;
        if (a->n_ints) memcpy(p->ints, a->ints, a->n_ints * sizeof(int64_t));
        else if (a->has_i) p->n = 1, p->ints[0] = a->i;
        return OPARA_OK;
    }
    if (i >= n_in || in[i] < 0) return OPARA_OK;
    if (!opara__is_const(im, in[i])) return opara__not_const(im, i, attr ? attr : "parameter");
    opara__cv_of(im, in[i], &cv);
    if (cv.count > OPARA__PARAM_CAP) goto too_many;
    if (!opara__dtype_is_int(cv.dtype) || cv.shape.ndim > 1)
        return opara__fail(im->rt, OPARA_ERR_ONNX_INVALID, "node '%s' (%s): input %u must be a 1-D integer tensor",
                           im->node_name, im->node->op_type, i);
    p->present = 1;
    p->n = (uint32_t)cv.count;
    for (k = 0; k < cv.count; ++k) {
        int64_t x = opara__get_i64(cv.dtype, cv.data, k), c = cv.coef ? cv.coef[k] : 0;
        if (c && !allow_batch) return opara__not_const(im, i, "depends on the batch size");
        if (c == 1 && x == 0) x = OPARA__DIM_BATCH;
        else if (c) x = -1, minus_one++;
        else if (x == -1) minus_one++;
        p->ints[k] = x;
    }
    if (minus_one > 1)
        return opara__fail(im->rt, OPARA_ERR_UNSUPPORTED_OP,
                           "node '%s' (%s): the target shape has %d unknown dims (only one -1 is allowed)",
                           im->node_name, im->node->op_type, minus_one);
    return OPARA_OK;
too_many:
    return opara__fail(im->rt, OPARA_ERR_LIMIT_EXCEEDED, "node '%s' (%s): more than %d values in '%s'", im->node_name,
                       im->node->op_type, OPARA__PARAM_CAP, attr ? attr : "parameter");
}

static opara_result opara__floats_param(opara__imp* im, const int32_t* in, uint32_t n_in, uint32_t i,
                                        opara__param* p) {
    opara__cv cv;
    uint64_t k;
    memset(p, 0, sizeof *p);
    if (i >= n_in || in[i] < 0) return OPARA_OK;
    if (!opara__is_const(im, in[i])) return opara__not_const(im, i, "float parameter");
    opara__cv_of(im, in[i], &cv);
    if (cv.count > OPARA__PARAM_CAP || !opara__dtype_numeric(cv.dtype))
        return opara__fail(im->rt, OPARA_ERR_ONNX_INVALID, "node '%s' (%s): input %u must be a small numeric tensor",
                           im->node_name, im->node->op_type, i);
    p->present = 1;
    p->n = (uint32_t)cv.count;
    for (k = 0; k < cv.count; ++k) p->floats[k] = (float)opara__get_f64(cv.dtype, cv.data, k);
    return OPARA_OK;
}

static int opara__op_is(const opara__onnx_node* n, const char* op) { return strcmp(n->op_type, op) == 0; }

/* Evaluates the node when its inputs allow it. OPARA_OK with *out filled, OPARA__NOFOLD, or an error. */
static int opara__try_fold(opara__imp* im, const int32_t* in, uint32_t n_in, opara__cv* out) {
    const opara__onnx_node* n = im->node;
    opara__cv cv[4];
    uint32_t i;
    int r;
    if (opara__op_is(n, "Shape")) return n_in >= 1 && in[0] >= 0 ? opara__eval_shape(im, in[0], out) : OPARA__NOFOLD;
    if (n_in == 0 || in[0] < 0) return OPARA__NOFOLD;
    for (i = 0; i < n_in; ++i)
        if (in[i] >= 0 && !opara__is_const(im, in[i])) return OPARA__NOFOLD;
    if (opara__op_is(n, "Concat")) {
        opara__cv* all = (opara__cv*)opara__calloc(im->rt, n_in, sizeof(opara__cv));
        if (!all) return opara__imp_oom(im);
        for (i = 0; i < n_in; ++i) {
            if (in[i] < 0) break;
            opara__cv_of(im, in[i], &all[i]);
        }
        r = i == n_in ? opara__eval_concat(im, all, n_in, opara__oattr_int(n, "axis", 0), out) : OPARA__NOFOLD;
        opara__free(im->rt, all);
        return r;
    }
    for (i = 0; i < 4; ++i) {
        if (i < n_in && in[i] >= 0) opara__cv_of(im, in[i], &cv[i]);
        else memset(&cv[i], 0, sizeof cv[i]);
    }
    if (n_in >= 2 && in[1] >= 0) {
        static const char* const ops[] = {"Add", "Sub", "Mul", "Div", "Pow", "Equal"};
        static const char codes[] = "+-*/^=";
        for (i = 0; i < 6; ++i)
            if (opara__op_is(n, ops[i])) return opara__eval_binary(im, codes[i], &cv[0], &cv[1], out);
    }
    if (opara__op_is(n, "Where") && n_in == 3 && in[1] >= 0 && in[2] >= 0)
        return opara__eval_where(im, &cv[0], &cv[1], &cv[2], out);
    if (opara__op_is(n, "Transpose")) return opara__eval_transpose(im, n, &cv[0], out);
    if (opara__op_is(n, "Cast")) return opara__eval_cast(im, &cv[0], opara__oattr_int(n, "to", 0), out);
    if (opara__op_is(n, "Sqrt")) return opara__eval_sqrt(im, &cv[0], out);
    if (opara__op_is(n, "ConstantOfShape")) return opara__eval_constant_of_shape(im, &cv[0], out);
    if (opara__op_is(n, "Range") && n_in == 3 && in[1] >= 0 && in[2] >= 0)
        return opara__eval_range(im, &cv[0], &cv[1], &cv[2], out);
    if (opara__op_is(n, "Gather") && n_in >= 2 && in[1] >= 0)
        return opara__eval_gather(im, &cv[0], &cv[1], opara__oattr_int(n, "axis", 0), out);
    if (opara__op_is(n, "Slice")) {
        opara__param p[4];
        static const char* const names[4] = {"starts", "ends", "axes", "steps"};
        for (i = 0; i < 4; ++i) {
            r = im->opset < 10 ? opara__ints_param(im, in, 0, 0, i < 3 ? names[i] : NULL, 0, &p[i])
                               : opara__ints_param(im, in, n_in, i + 1, NULL, 0, &p[i]);
            if (r != OPARA_OK) return r;
        }
        if (!p[0].present || !p[1].present || p[0].n != p[1].n || (p[2].present && p[2].n != p[0].n) ||
            (p[3].present && p[3].n != p[0].n))
            return OPARA__NOFOLD;
        return opara__eval_slice(im, &cv[0], p[0].ints, p[1].ints, p[2].present ? p[2].ints : NULL,
                                 p[3].present ? p[3].ints : NULL, p[0].n, out);
    }
    {
        opara__shape shape;
        opara__param p;
        if (opara__op_is(n, "Reshape")) {
            r = opara__ints_param(im, in, n_in, 1, NULL, 0, &p);
            if (r != OPARA_OK) return r;
            if (!p.present || !opara__reshape_dims(&cv[0].shape, p.ints, p.n, (int)opara__oattr_int(n, "allowzero", 0), &shape))
                return OPARA__NOFOLD;
            return opara__eval_view(&cv[0], &shape, out);
        }
        if (opara__op_is(n, "Flatten")) {
            if (!opara__flatten_shape(&cv[0].shape, opara__oattr_int(n, "axis", 1), &shape)) return OPARA__NOFOLD;
            return opara__eval_view(&cv[0], &shape, out);
        }
        if (opara__op_is(n, "Squeeze") || opara__op_is(n, "Unsqueeze")) {
            int squeeze = opara__op_is(n, "Squeeze");
            r = opara__ints_param(im, in, n_in, 1, "axes", 0, &p);
            if (r != OPARA_OK) return r;
            if (squeeze ? !opara__squeeze_shape(&cv[0].shape, p.present ? p.ints : NULL, p.n, &shape)
                        : !p.present || !opara__unsqueeze_shape(&cv[0].shape, p.ints, p.n, &shape))
                return OPARA__NOFOLD;
            return opara__eval_view(&cv[0], &shape, out);
        }
    }
    return OPARA__NOFOLD;
}

/* ---- shape inference while importing (only so that Shape nodes can fold) ---------------------- */

static int64_t opara__bcast_dim(int64_t a, int64_t b) {
    if (a == b || b == 1) return a;
    if (a == 1) return b;
    if (a >= 0 && b >= 0) return -1; /* incompatible: left unknown, the checker of the graph reports it */
    return a >= 0 ? a : b >= 0 ? b : -1;
}

static void opara__bcast_shapes(const opara__shape* const* in, uint32_t n, opara__shape* out) {
    uint32_t k;
    int32_t d;
    out->ndim = 0;
    for (k = 0; k < n; ++k) {
        if (in[k]->ndim < 0) {
            out->ndim = -1;
            return;
        }
        out->ndim = OPARA__MAX(out->ndim, in[k]->ndim);
    }
    for (d = 0; d < out->ndim; ++d) {
        int64_t dim = 1;
        for (k = 0; k < n; ++k) {
            int32_t off = out->ndim - in[k]->ndim;
            if (d >= off) dim = opara__bcast_dim(dim, in[k]->dims[d - off]);
        }
        out->dims[d] = dim;
    }
}

/* Spatial output size of a convolution or pooling window. */
static int64_t opara__onnx_window_out(int64_t in, int64_t k, int64_t stride, int64_t dil, int64_t pad, const char* auto_pad,
                                 int ceil_mode) {
    int64_t eff = (k - 1) * dil + 1, span;
    if (in < 0 || stride <= 0) return -1;
    if (strcmp(auto_pad, "SAME_UPPER") == 0 || strcmp(auto_pad, "SAME_LOWER") == 0) return (in + stride - 1) / stride;
    if (strcmp(auto_pad, "VALID") == 0) pad = 0;
    span = in + pad - eff;
    if (span < 0) return -1;
    return (ceil_mode ? (span + stride - 1) / stride : span / stride) + 1;
}

static void opara__infer_window(const opara__node* n, const opara__shape* x, const opara__shape* w, opara__shape* out) {
    uint32_t nk, ns, nd, np, i;
    const int64_t* ks = opara__attr_ints(n, "kernel_shape", &nk);
    const int64_t* st = opara__attr_ints(n, "strides", &ns);
    const int64_t* dl = opara__attr_ints(n, "dilations", &nd);
    const int64_t* pd = opara__attr_ints(n, "pads", &np);
    const char* auto_pad = opara__attr_string(n, "auto_pad", "NOTSET");
    int transpose = n->op == OPARA__OP_CONV_TRANSPOSE, ceil_mode = (int)opara__attr_int(n, "ceil_mode", 0);
    uint32_t spatial;
    *out = *x;
    if (x->ndim < 2) {
        out->ndim = -1;
        return;
    }
    spatial = (uint32_t)x->ndim - 2;
    if (n->op == OPARA__OP_CONV) out->dims[1] = w && w->ndim > 0 ? w->dims[0] : -1;
    if (transpose) out->dims[1] = w && w->ndim > 1 ? w->dims[1] * opara__attr_int(n, "group", 1) : -1;
    for (i = 0; i < spatial; ++i) {
        int64_t k = ks && i < nk ? ks[i] : w && (uint32_t)w->ndim == spatial + 2 ? w->dims[i + 2] : -1;
        int64_t s = st && i < ns ? st[i] : 1, d = dl && i < nd ? dl[i] : 1;
        int64_t pad = pd && np == 2 * spatial ? pd[i] + pd[i + spatial] : 0, in = x->dims[i + 2];
        if (k < 0) {
            out->dims[i + 2] = -1;
            continue;
        }
        if (transpose) {
            uint32_t no, nop;
            const int64_t* os = opara__attr_ints(n, "output_shape", &no);
            const int64_t* op = opara__attr_ints(n, "output_padding", &nop);
            if (os && no == spatial) out->dims[i + 2] = os[i];
            else if (in < 0) out->dims[i + 2] = -1;
            else if (strncmp(auto_pad, "SAME", 4) == 0) out->dims[i + 2] = in * s;
            else out->dims[i + 2] = s * (in - 1) + (op && i < nop ? op[i] : 0) + (k - 1) * d + 1 - pad;
        } else
            out->dims[i + 2] = opara__onnx_window_out(in, k, s, d, pad, auto_pad, ceil_mode);
    }
}

static void opara__infer_matmul(const opara__shape* a, const opara__shape* b, opara__shape* out) {
    opara__shape ba, bb;
    const opara__shape* pair[2];
    if (a->ndim < 1 || b->ndim < 1) {
        out->ndim = -1;
        return;
    }
    ba = *a, bb = *b;
    ba.ndim = OPARA__MAX(0, a->ndim - 2);
    bb.ndim = OPARA__MAX(0, b->ndim - 2);
    pair[0] = &ba, pair[1] = &bb;
    opara__bcast_shapes(pair, 2, out);
    if (a->ndim >= 2) out->dims[out->ndim++] = a->dims[a->ndim - 2];
    if (b->ndim >= 2) out->dims[out->ndim++] = b->dims[b->ndim - 1];
}

/* Reshape target with 0, -1 and batch entries, against an input shape that may hold the batch. */
static void opara__infer_reshape(const opara__shape* x, const int64_t* spec, uint32_t n, int allowzero,
                                 opara__shape* out) {
    int64_t in_known = 1, out_known = 1;
    int in_batch = 0, out_batch = 0, unknown = x->ndim < 0, infer = -1;
    uint32_t i;
    int32_t d;
    out->ndim = (int32_t)n;
    for (d = 0; d < x->ndim; ++d) {
        if (x->dims[d] == OPARA__DIM_BATCH) in_batch++;
        else if (x->dims[d] < 0) unknown = 1;
        else in_known *= x->dims[d];
    }
    for (i = 0; i < n; ++i) {
        int64_t v = spec[i];
        if (v == 0 && !allowzero) v = (int32_t)i < x->ndim ? x->dims[i] : -1;
        out->dims[i] = v;
        if (spec[i] == -1) infer = (int)i;
        else if (v == OPARA__DIM_BATCH) out_batch++;
        else if (v < 0) unknown = 1;
        else out_known *= v;
    }
    if (infer < 0) return;
    if (!unknown && in_batch == out_batch && out_known && in_known % out_known == 0)
        out->dims[infer] = in_known / out_known;
    else if (!unknown && in_batch == 1 && out_batch == 0 && in_known == out_known)
        out->dims[infer] = OPARA__DIM_BATCH;
    else
        out->dims[infer] = -1;
}

static void opara__infer_node(opara__imp* im, int32_t node) {
    const opara__node* n = &im->g->nodes[node];
    const opara__shape* x;
    const opara__shape* w;
    opara_dtype dt;
    opara__shape out;
    uint32_t cnt, o;
    int32_t d;
    const int64_t* ints;
    int64_t axis;
    for (o = 0; o < n->n_outputs; ++o) /* grow the side table first: x and w may point into it */
        if (!opara__side(im, n->outputs[o])) return;
    x = n->n_inputs > 0 && n->inputs[0] >= 0 ? opara__imp_shape(im, n->inputs[0]) : NULL;
    w = n->n_inputs > 1 && n->inputs[1] >= 0 ? opara__imp_shape(im, n->inputs[1]) : NULL;
    dt = n->n_inputs > 0 && n->inputs[0] >= 0 ? im->g->values[n->inputs[0]].dtype : OPARA_DTYPE_F32;
    out.ndim = -1;
    if (!x) return;
    switch (n->op) {
    case OPARA__OP_CONV: case OPARA__OP_CONV_TRANSPOSE: case OPARA__OP_MAX_POOL: case OPARA__OP_AVERAGE_POOL:
        opara__infer_window(n, x, w, &out);
        break;
    case OPARA__OP_GLOBAL_AVERAGE_POOL:
        out = *x;
        for (d = 2; d < out.ndim; ++d) out.dims[d] = 1;
        break;
    case OPARA__OP_ADD: case OPARA__OP_SUB: case OPARA__OP_MUL: case OPARA__OP_DIV: case OPARA__OP_POW:
    case OPARA__OP_WHERE: {
        const opara__shape* in[3];
        uint32_t k, m = OPARA__MIN(n->n_inputs, 3u);
        for (k = 0; k < m; ++k) {
            if (n->inputs[k] < 0) return;
            in[k] = opara__imp_shape(im, n->inputs[k]);
        }
        opara__bcast_shapes(in, m, &out);
        if (n->op == OPARA__OP_WHERE && w) dt = im->g->values[n->inputs[1]].dtype;
        break;
    }
    case OPARA__OP_CONCAT: {
        uint32_t k;
        out = *x;
        axis = opara__onnx_axis(opara__attr_int(n, "axis", 0), x->ndim);
        if (axis < 0 || axis >= out.ndim) return;
        for (k = 1; k < n->n_inputs; ++k) {
            const opara__shape* s = opara__imp_shape(im, n->inputs[k]);
            if (s->ndim != out.ndim || out.dims[axis] < 0 || s->dims[axis] < 0) out.dims[axis] = -1;
            else out.dims[axis] += s->dims[axis];
        }
        break;
    }
    case OPARA__OP_SPLIT: {
        axis = opara__onnx_axis(opara__attr_int(n, "axis", 0), x->ndim);
        ints = opara__attr_ints(n, "split", &cnt);
        for (o = 0; o < n->n_outputs && axis >= 0 && axis < x->ndim; ++o) {
            opara__imp_side* s = opara__side(im, n->outputs[o]);
            if (!s) return;
            s->shape = *x;
            if (ints && cnt == n->n_outputs) s->shape.dims[axis] = ints[o];
            else s->shape.dims[axis] = x->dims[axis] >= 0 && x->dims[axis] % n->n_outputs == 0 ?
                                           x->dims[axis] / n->n_outputs : -1;
            im->g->values[n->outputs[o]].dtype = dt;
        }
        return;
    }
    case OPARA__OP_SLICE: {
        int64_t start[OPARA_MAX_DIMS], step[OPARA_MAX_DIMS];
        uint32_t ne, na, nst;
        const int64_t* starts = opara__attr_ints(n, "starts", &cnt);
        const int64_t* ends = opara__attr_ints(n, "ends", &ne);
        const int64_t* axes = opara__attr_ints(n, "axes", &na);
        const int64_t* steps = opara__attr_ints(n, "steps", &nst);
        if (!starts || !ends || ne != cnt || !opara__slice_box(x, starts, ends, axes, steps, cnt, start, step, &out))
            out.ndim = -1;
        break;
    }
    case OPARA__OP_GATHER:
        axis = opara__onnx_axis(opara__attr_int(n, "axis", 0), x->ndim);
        if (!w || w->ndim < 0 || axis < 0 || axis >= x->ndim || x->ndim + w->ndim - 1 > OPARA_MAX_DIMS) return;
        out.ndim = 0;
        for (d = 0; d < x->ndim; ++d) {
            if (d == axis) {
                int32_t k;
                for (k = 0; k < w->ndim; ++k) out.dims[out.ndim++] = w->dims[k];
            } else
                out.dims[out.ndim++] = x->dims[d];
        }
        break;
    case OPARA__OP_RESHAPE:
        ints = opara__attr_ints(n, "shape", &cnt);
        if (ints) opara__infer_reshape(x, ints, cnt, (int)opara__attr_int(n, "allowzero", 0), &out);
        break;
    case OPARA__OP_FLATTEN:
        if (x->ndim >= 0) opara__flatten_shape(x, opara__attr_int(n, "axis", 1), &out);
        break;
    case OPARA__OP_TRANSPOSE:
        ints = opara__attr_ints(n, "perm", &cnt);
        out = *x;
        for (d = 0; d < x->ndim; ++d) {
            int64_t p = ints ? (d < (int32_t)cnt ? ints[d] : -1) : x->ndim - 1 - d;
            out.dims[d] = p >= 0 && p < x->ndim ? x->dims[p] : -1;
        }
        break;
    case OPARA__OP_SQUEEZE:
        ints = opara__attr_ints(n, "axes", &cnt);
        if (x->ndim < 0 || !opara__squeeze_shape(x, ints, cnt, &out)) out.ndim = -1;
        break;
    case OPARA__OP_UNSQUEEZE:
        ints = opara__attr_ints(n, "axes", &cnt);
        if (x->ndim < 0 || !ints || !opara__unsqueeze_shape(x, ints, cnt, &out)) out.ndim = -1;
        break;
    case OPARA__OP_EXPAND: {
        opara__shape target;
        const opara__shape* pair[2];
        ints = opara__attr_ints(n, "shape", &cnt);
        if (!ints || cnt > OPARA_MAX_DIMS) return;
        target.ndim = (int32_t)cnt;
        for (o = 0; o < cnt; ++o) target.dims[o] = ints[o];
        pair[0] = x, pair[1] = &target;
        opara__bcast_shapes(pair, 2, &out);
        break;
    }
    case OPARA__OP_GEMM:
        if (!w || x->ndim != 2 || w->ndim != 2) return;
        out.ndim = 2;
        out.dims[0] = x->dims[opara__attr_int(n, "transA", 0) ? 1 : 0];
        out.dims[1] = w->dims[opara__attr_int(n, "transB", 0) ? 0 : 1];
        break;
    case OPARA__OP_MATMUL:
        if (w) opara__infer_matmul(x, w, &out);
        break;
    case OPARA__OP_REDUCE_MEAN: {
        int keep = (int)opara__attr_int(n, "keepdims", 1);
        ints = opara__attr_ints(n, "axes", &cnt);
        out.ndim = 0;
        for (d = 0; d < x->ndim; ++d) {
            int reduce = !ints;
            for (o = 0; ints && o < cnt; ++o) reduce |= opara__onnx_axis(ints[o], x->ndim) == d;
            if (!reduce) out.dims[out.ndim++] = x->dims[d];
            else if (keep) out.dims[out.ndim++] = 1;
        }
        if (x->ndim < 0) out.ndim = -1;
        break;
    }
    case OPARA__OP_PAD:
        ints = opara__attr_ints(n, "pads", &cnt);
        out = *x;
        if (!ints || (int32_t)cnt != 2 * x->ndim) return;
        for (d = 0; d < x->ndim; ++d) {
            int64_t add = ints[d] + ints[d + x->ndim];
            if (add != 0) out.dims[d] = x->dims[d] >= 0 ? x->dims[d] + add : -1;
        }
        break;
    case OPARA__OP_RESIZE: {
        const opara__attr* scales = opara__node_attr(n, "scales");
        ints = opara__attr_ints(n, "sizes", &cnt);
        out = *x;
        for (d = 0; d < x->ndim; ++d) {
            if (ints && (int32_t)cnt == x->ndim) out.dims[d] = ints[d];
            else if (scales && scales->type == OPARA__ATTR_FLOATS && (int32_t)scales->count == x->ndim) {
                float s = scales->v.floats[d];
                if (s != 1.0f) out.dims[d] = x->dims[d] >= 0 ? (int64_t)floor((double)x->dims[d] * s) : -1;
            } else
                out.dims[d] = -1;
        }
        break;
    }
    case OPARA__OP_CAST:
        dt = opara__onnx_dtype((int32_t)opara__attr_int(n, "to", 1));
        out = *x;
        break;
    default: /* elementwise and normalizations keep the shape of input 0 */
        out = *x;
        break;
    }
    for (o = 0; o < n->n_outputs; ++o) {
        opara__imp_side* s = opara__side(im, n->outputs[o]);
        if (!s) return;
        s->shape = o == 0 ? out : s->shape;
        im->g->values[n->outputs[o]].dtype = dt;
    }
}

/* ---- importing one node ----------------------------------------------------------------------- */

static opara_result opara__copy_onnx_attrs(opara__imp* im, int32_t node) {
    const opara__onnx_node* n = im->node;
    uint32_t i;
    opara_result r = OPARA_OK;
    for (i = 0; i < n->n_attrs && r == OPARA_OK; ++i) {
        const opara__onnx_attr* a = &n->attrs[i];
        int32_t type = a->type;
        if (!type) /* IR < 2 files leave the type out */
            type = a->has_f ? OPARA__ONNX_ATTR_FLOAT : a->has_i ? OPARA__ONNX_ATTR_INT : a->has_s ? OPARA__ONNX_ATTR_STRING :
                   a->n_floats ? OPARA__ONNX_ATTR_FLOATS : a->n_ints ? OPARA__ONNX_ATTR_INTS : 0;
        switch (type) {
        case OPARA__ONNX_ATTR_FLOAT: r = opara__node_set_float(im->g, node, a->name, a->f); break;
        case OPARA__ONNX_ATTR_INT: r = opara__node_set_int(im->g, node, a->name, a->i); break;
        case OPARA__ONNX_ATTR_FLOATS: r = opara__node_set_floats(im->g, node, a->name, a->floats, a->n_floats); break;
        case OPARA__ONNX_ATTR_INTS: r = opara__node_set_ints(im->g, node, a->name, a->ints, a->n_ints); break;
        case OPARA__ONNX_ATTR_STRING: {
            char buf[256];
            if (a->s.size >= sizeof buf)
                return opara__fail(im->rt, OPARA_ERR_ONNX_INVALID, "node '%s': attribute '%s' is too long",
                                   im->node_name, a->name);
            memcpy(buf, a->s.data, a->s.size);
            buf[a->s.size] = 0;
            r = opara__node_set_string(im->g, node, a->name, buf);
            break;
        }
        default: break; /* tensors, graphs, string lists: no IR operator uses them */
        }
    }
    return r;
}

/* Number of leading inputs an IR operator keeps as tensors; the rest become attributes. */
static uint32_t opara__kept_inputs(opara__op op, uint32_t n_in) {
    switch (op) {
    case OPARA__OP_SPLIT: case OPARA__OP_SQUEEZE: case OPARA__OP_UNSQUEEZE: case OPARA__OP_REDUCE_MEAN:
    case OPARA__OP_CLIP: case OPARA__OP_SLICE: case OPARA__OP_PAD: case OPARA__OP_RESIZE: case OPARA__OP_RESHAPE:
    case OPARA__OP_EXPAND:
        return OPARA__MIN(n_in, 1u);
    default: return n_in;
    }
}

static opara_result opara__set_ints_param(opara__imp* im, int32_t node, const char* name, const opara__param* p) {
    return p->present ? opara__node_set_ints(im->g, node, name, p->ints, p->n) : OPARA_OK;
}

static opara_result opara__canon_slice(opara__imp* im, int32_t node, const int32_t* in, uint32_t n_in) {
    static const char* const names[4] = {"starts", "ends", "axes", "steps"};
    opara__param p[4];
    opara_result r = OPARA_OK;
    uint32_t i;
    for (i = 0; i < 4 && r == OPARA_OK; ++i)
        r = im->opset < 10 ? opara__ints_param(im, in, 0, 0, i < 3 ? names[i] : NULL, 0, &p[i])
                           : opara__ints_param(im, in, n_in, i + 1, NULL, 0, &p[i]);
    if (r != OPARA_OK) return r;
    if (!p[0].present || !p[1].present || p[0].n != p[1].n || (p[2].present && p[2].n != p[0].n) ||
        (p[3].present && p[3].n != p[0].n))
        return opara__fail(im->rt, OPARA_ERR_ONNX_INVALID, "node '%s' (Slice): starts/ends/axes/steps disagree",
                           im->node_name);
    for (i = 0; i < p[0].n; ++i) {
        if (!p[2].present) p[2].ints[i] = (int64_t)i;
        if (!p[3].present) p[3].ints[i] = 1;
    }
    p[2].present = p[3].present = 1;
    p[2].n = p[3].n = p[0].n;
    for (i = 0; i < 4 && r == OPARA_OK; ++i) r = opara__set_ints_param(im, node, names[i], &p[i]);
    return r;
}

static opara_result opara__canon_resize(opara__imp* im, int32_t node, const int32_t* in, uint32_t n_in) {
    opara__param scales, sizes, roi;
    opara_result r;
    uint32_t si = im->opset < 11 ? 1 : 2;
    r = opara__floats_param(im, in, n_in, si, &scales);
    if (r == OPARA_OK && im->opset >= 11) r = opara__ints_param(im, in, n_in, 3, NULL, 0, &sizes);
    else memset(&sizes, 0, sizeof sizes);
    if (r == OPARA_OK && im->opset >= 11 &&
        strcmp(opara__attr_string(&im->g->nodes[node], "coordinate_transformation_mode", ""), "tf_crop_and_resize") == 0)
        r = opara__floats_param(im, in, n_in, 1, &roi);
    else memset(&roi, 0, sizeof roi);
    if (r != OPARA_OK) return r;
    if (scales.present && scales.n) r = opara__node_set_floats(im->g, node, "scales", scales.floats, scales.n);
    if (r == OPARA_OK && sizes.present && sizes.n) r = opara__node_set_ints(im->g, node, "sizes", sizes.ints, sizes.n);
    if (r == OPARA_OK && roi.present && roi.n) r = opara__node_set_floats(im->g, node, "roi", roi.floats, roi.n);
    if (r == OPARA_OK && !(scales.present && scales.n) && !(sizes.present && sizes.n))
        return opara__fail(im->rt, OPARA_ERR_ONNX_INVALID, "node '%s' (Resize): neither scales nor sizes given",
                           im->node_name);
    return r;
}

static opara_result opara__canon_clip(opara__imp* im, int32_t node, const int32_t* in, uint32_t n_in) {
    opara__param lo, hi;
    opara_result r;
    if (im->opset < 11) return OPARA_OK; /* min/max are attributes already */
    r = opara__floats_param(im, in, n_in, 1, &lo);
    if (r == OPARA_OK) r = opara__floats_param(im, in, n_in, 2, &hi);
    if (r == OPARA_OK && lo.present && lo.n == 1) r = opara__node_set_float(im->g, node, "min", lo.floats[0]);
    if (r == OPARA_OK && hi.present && hi.n == 1) r = opara__node_set_float(im->g, node, "max", hi.floats[0]);
    return r;
}

static opara_result opara__canon_pad(opara__imp* im, int32_t node, const int32_t* in, uint32_t n_in) {
    opara__param pads, value;
    opara_result r;
    if (im->opset < 11) {
        uint32_t n;
        if (!opara__oattr_ints(im->node, "pads", &n) && opara__oattr(im->node, "paddings")) {
            const int64_t* p = opara__oattr_ints(im->node, "paddings", &n);
            return opara__node_set_ints(im->g, node, "pads", p, n);
        }
        return OPARA_OK;
    }
    r = opara__ints_param(im, in, n_in, 1, NULL, 0, &pads);
    if (r == OPARA_OK) r = opara__floats_param(im, in, n_in, 2, &value);
    if (r == OPARA_OK) r = opara__set_ints_param(im, node, "pads", &pads);
    if (r == OPARA_OK && value.present && value.n == 1) r = opara__node_set_float(im->g, node, "value", value.floats[0]);
    return r;
}

static opara_result opara__canon_softmax(opara__imp* im, int32_t node, const int32_t* in) {
    const opara__shape* x = opara__imp_shape(im, in[0]);
    int64_t axis = opara__oattr_int(im->node, "axis", im->opset < 13 ? 1 : -1);
    if (im->opset < 13 && x->ndim >= 0 && opara__onnx_axis(axis, x->ndim) != x->ndim - 1)
        return opara__fail(im->rt, OPARA_ERR_UNSUPPORTED_OP,
                           "node '%s' (Softmax, opset %lld): axis %lld of a rank-%d input flattens the trailing dims; "
                           "only the last axis is supported before opset 13",
                           im->node_name, (long long)im->opset, (long long)axis, (int)x->ndim);
    return opara__node_set_int(im->g, node, "axis", axis);
}

/* Moves constant inputs into canonical attributes and fills defaults that depend on the opset. */
static opara_result opara__canonicalize(opara__imp* im, opara__op op, int32_t node, const int32_t* in, uint32_t n_in) {
    opara__param p;
    opara_result r = OPARA_OK;
    switch (op) {
    case OPARA__OP_SPLIT:
        r = opara__ints_param(im, in, n_in, 1, "split", 0, &p);
        if (r == OPARA_OK) r = opara__set_ints_param(im, node, "split", &p);
        break;
    case OPARA__OP_SQUEEZE: case OPARA__OP_UNSQUEEZE: case OPARA__OP_REDUCE_MEAN:
        r = opara__ints_param(im, in, n_in, 1, "axes", 0, &p);
        if (r == OPARA_OK) r = opara__set_ints_param(im, node, "axes", &p);
        if (r == OPARA_OK && op == OPARA__OP_UNSQUEEZE && !p.present)
            r = opara__fail(im->rt, OPARA_ERR_ONNX_INVALID, "node '%s' (Unsqueeze): no axes", im->node_name);
        break;
    case OPARA__OP_RESHAPE: case OPARA__OP_EXPAND:
        r = opara__ints_param(im, in, n_in, 1, "shape", 1, &p);
        if (r == OPARA_OK && !p.present)
            r = opara__fail(im->rt, OPARA_ERR_ONNX_INVALID, "node '%s': no target shape", im->node_name);
        if (r == OPARA_OK) r = opara__set_ints_param(im, node, "shape", &p);
        break;
    case OPARA__OP_SLICE: r = opara__canon_slice(im, node, in, n_in); break;
    case OPARA__OP_RESIZE: r = opara__canon_resize(im, node, in, n_in); break;
    case OPARA__OP_CLIP: r = opara__canon_clip(im, node, in, n_in); break;
    case OPARA__OP_PAD: r = opara__canon_pad(im, node, in, n_in); break;
    case OPARA__OP_SOFTMAX: r = opara__canon_softmax(im, node, in); break;
    default: break;
    }
    return r;
}

static opara_result opara__emit_node(opara__imp* im, opara__op op, const int32_t* in, uint32_t n_in) {
    const opara__onnx_node* n = im->node;
    uint32_t n_out = n->n_outputs, kept = opara__kept_inputs(op, n_in), i;
    int32_t outs[16], node;
    opara_result r;
    while (n_out > 0 && !n->outputs[n_out - 1][0]) --n_out;
    while (kept > 0 && in[kept - 1] < 0) --kept;
    if (n_out == 0 || n_out > 16)
        return opara__fail(im->rt, OPARA_ERR_ONNX_INVALID, "node '%s' (%s): %u outputs", im->node_name, n->op_type, n_out);
    for (i = 0; i < n_out; ++i) {
        if (!n->outputs[i][0])
            return opara__fail(im->rt, OPARA_ERR_UNSUPPORTED_OP, "node '%s' (%s): omitted output %u is not supported",
                               im->node_name, n->op_type, i);
        if (opara__graph_find_value(im->g, n->outputs[i]) >= 0)
            return opara__fail(im->rt, OPARA_ERR_ONNX_INVALID, "node '%s': tensor '%s' is defined twice", im->node_name,
                               n->outputs[i]);
        outs[i] = opara__graph_add_value(im->g, n->outputs[i], OPARA_DTYPE_UNDEFINED, NULL);
        if (outs[i] < 0) return OPARA_ERR_ONNX_INVALID;
    }
    node = opara__graph_add_node(im->g, op, im->node_name, kept, in, n_out, outs);
    if (node < 0) return OPARA_ERR_ONNX_INVALID;
    r = opara__copy_onnx_attrs(im, node);
    if (r == OPARA_OK) r = opara__canonicalize(im, op, node, in, n_in);
    if (r == OPARA_OK) opara__infer_node(im, node);
    return r;
}

static opara_result opara__import_constant(opara__imp* im) {
    const opara__onnx_node* n = im->node;
    const opara__onnx_attr* a;
    opara__shape shape;
    const char* out = n->n_outputs ? n->outputs[0] : "";
    if (!out[0]) return opara__fail(im->rt, OPARA_ERR_ONNX_INVALID, "node '%s' (Constant): no output", im->node_name);
    if ((a = opara__oattr(n, "value")) != NULL && a->t) {
        opara__tensor_data t;
        opara_result r = opara__onnx_tensor_load(im->rt, a->t, im->base_dir, im->node_name, &t);
        if (r != OPARA_OK) return r;
        r = opara__imp_const(im, out, t.dtype, &t.shape, t.data, NULL, 1);
        opara__tensor_data_free(im->rt, &t);
        return r;
    }
    shape.ndim = 0;
    if ((a = opara__oattr(n, "value_float")) != NULL)
        return opara__imp_const(im, out, OPARA_DTYPE_F32, &shape, &a->f, NULL, 1);
    if ((a = opara__oattr(n, "value_int")) != NULL)
        return opara__imp_const(im, out, OPARA_DTYPE_I64, &shape, &a->i, NULL, 1);
    shape.ndim = 1;
    if ((a = opara__oattr(n, "value_floats")) != NULL) {
        shape.dims[0] = a->n_floats;
        return opara__imp_const(im, out, OPARA_DTYPE_F32, &shape, a->floats, NULL, 1);
    }
    if ((a = opara__oattr(n, "value_ints")) != NULL) {
        shape.dims[0] = a->n_ints;
        return opara__imp_const(im, out, OPARA_DTYPE_I64, &shape, a->ints, NULL, 1);
    }
    return opara__fail(im->rt, OPARA_ERR_UNSUPPORTED_OP, "node '%s' (Constant): only value, value_float(s) and "
                       "value_int(s) are supported", im->node_name);
}

static opara_result opara__import_alias(opara__imp* im, int32_t src) {
    const char* out = im->node->n_outputs ? im->node->outputs[0] : "";
    int32_t v;
    opara__imp_side* side;
    if (!out[0] || src < 0) return opara__fail(im->rt, OPARA_ERR_ONNX_INVALID, "node '%s' (%s): missing input or output",
                                               im->node_name, im->node->op_type);
    if (opara__graph_find_value(im->g, out) >= 0)
        return opara__fail(im->rt, OPARA_ERR_ONNX_INVALID, "node '%s': tensor '%s' is defined twice", im->node_name, out);
    v = opara__graph_add_value(im->g, out, im->g->values[src].dtype, NULL);
    if (v < 0 || !(side = opara__side(im, v))) return OPARA_ERR_OUT_OF_MEMORY;
    side->alias = src;
    return OPARA_OK;
}

static opara_result opara__import_node(opara__imp* im, const opara__onnx_node* n, int32_t* in) {
    opara__op op = opara__op_from_name(n->op_type);
    opara__cv folded;
    uint32_t i;
    int r;
    im->node = n;
    im->node_name = n->name[0] ? n->name : n->n_outputs ? n->outputs[0] : n->op_type;
    for (i = 0; i < n->n_inputs; ++i) in[i] = n->inputs[i][0] ? opara__imp_find(im, n->inputs[i]) : -1;
    if (opara__op_is(n, "Constant")) return opara__import_constant(im);
    if (opara__op_is(n, "Dropout") && n->n_inputs >= 3 && in[2] >= 0) {
        opara__cv mode;
        if (opara__is_const(im, in[2])) opara__cv_of(im, in[2], &mode);
        if (!opara__is_const(im, in[2]) || mode.count != 1 || opara__get_i64(mode.dtype, mode.data, 0) != 0)
            return opara__fail(im->rt, OPARA_ERR_UNSUPPORTED_OP, "node '%s' (Dropout): training mode is not supported",
                               im->node_name);
    }
    if (opara__op_is(n, "Identity") || opara__op_is(n, "Dropout"))
        return opara__import_alias(im, n->n_inputs ? in[0] : -1);
    r = opara__try_fold(im, in, n->n_inputs, &folded);
    if (r == OPARA_OK) {
        if (!n->n_outputs || !n->outputs[0][0])
            return opara__fail(im->rt, OPARA_ERR_ONNX_INVALID, "node '%s': no output", im->node_name);
        return opara__imp_const(im, n->outputs[0], folded.dtype, &folded.shape, folded.data, folded.coef, 0);
    }
    if (r != OPARA__NOFOLD) return (opara_result)r;
    if (op == OPARA__OP_COUNT)
        return opara__fail(im->rt, OPARA_ERR_UNSUPPORTED_OP,
                           "node '%s' (%s): only supported when it can be evaluated at import time (constant inputs%s)",
                           im->node_name, n->op_type, opara__op_is(n, "Shape") ? ", or an input of known shape" : "");
    if (n->n_inputs == 0 || in[0] < 0)
        return opara__fail(im->rt, OPARA_ERR_ONNX_INVALID, "node '%s' (%s): missing first input", im->node_name,
                           n->op_type);
    return opara__emit_node(im, op, in, n->n_inputs);
}

/* ---- unsupported operators: one error listing them all ---------------------------------------- */

static int opara__node_supported(const opara__onnx_node* n) {
    static const char* const fold_only[] = {"Constant", "Shape", "Identity", "Dropout", "ConstantOfShape", "Range",
                                            "Equal"};
    opara__op op;
    uint32_t i, extra_outputs = 0;
    if (n->domain[0] && strcmp(n->domain, "ai.onnx") != 0) return 0;
    for (i = 1; i < n->n_outputs; ++i) extra_outputs += n->outputs[i][0] != 0;
    op = opara__op_from_name(n->op_type);
    if ((op == OPARA__OP_MAX_POOL || op == OPARA__OP_BATCH_NORM || strcmp(n->op_type, "Dropout") == 0) && extra_outputs)
        return 0;
    if (op == OPARA__OP_BATCH_NORM && opara__oattr_int(n, "training_mode", 0)) return 0;
    if (op != OPARA__OP_COUNT) return 1;
    for (i = 0; i < OPARA__ARRAY_COUNT(fold_only); ++i)
        if (strcmp(n->op_type, fold_only[i]) == 0) return 1;
    return 0;
}

static void opara__unsupported_label(const opara__onnx_node* n, char* buf, size_t cap) {
    opara__op op = opara__op_from_name(n->op_type);
    const char* what = op == OPARA__OP_BATCH_NORM ? " (training mode)" : op == OPARA__OP_MAX_POOL ? " (with Indices)" :
                       strcmp(n->op_type, "Dropout") == 0 ? " (with mask)" : "";
    if (n->domain[0] && strcmp(n->domain, "ai.onnx") != 0) opara__format(buf, cap, "%s.%s", n->domain, n->op_type);
    else opara__format(buf, cap, "%s%s", n->op_type, what);
}

static opara_result opara__check_ops(opara_runtime* rt, const opara__onnx_graph* g) {
    char msg[OPARA__DETAIL_MAX], label[128], other[128];
    uint32_t i, j, kinds = 0, total = 0;
    size_t len;
    for (i = 0; i < g->n_nodes; ++i)
        if (!opara__node_supported(&g->nodes[i])) total++;
    if (!total) return OPARA_OK;
    len = opara__format(msg, sizeof msg, "%u node%s use%s unsupported operators:", total, total == 1 ? "" : "s",
                        total == 1 ? "s" : "");
    for (i = 0; i < g->n_nodes; ++i) {
        const opara__onnx_node* n = &g->nodes[i];
        uint32_t count = 0, seen = 0;
        if (opara__node_supported(n)) continue;
        opara__unsupported_label(n, label, sizeof label);
        for (j = 0; j < g->n_nodes; ++j) {
            if (opara__node_supported(&g->nodes[j])) continue;
            opara__unsupported_label(&g->nodes[j], other, sizeof other);
            if (strcmp(label, other) != 0) continue;
            if (j < i) seen = 1;
            count++;
        }
        if (seen) continue;
        kinds++;
        len += opara__format(msg + len, sizeof msg - len, "%s %s x%u (first: node '%s')", kinds > 1 ? "," : "", label,
                             count, n->name[0] ? n->name : n->n_outputs ? n->outputs[0] : "");
    }
    return opara__fail(rt, OPARA_ERR_UNSUPPORTED_OP, "%s", msg);
}

/* ---- graph inputs ----------------------------------------------------------------------------- */

/* Finds "name=d0,d1,..." for input name in the options and parses it into shape. 1 found, 0 not, <0 error. */
static int opara__override_shape(opara__imp* im, const char* name, opara__shape* shape) {
    uint32_t i;
    size_t len = strlen(name);
    if (!im->opt) return 0;
    for (i = 0; i < im->opt->n_input_shapes; ++i) {
        const char* spec = im->opt->input_shapes[i];
        const char* p;
        if (!spec || strncmp(spec, name, len) != 0 || spec[len] != '=') continue;
        shape->ndim = 0;
        for (p = spec + len + 1; *p;) {
            char* end = NULL;
            long long v;
            if (shape->ndim == OPARA_MAX_DIMS) goto bad;
            if (*p == 'N' || *p == '?') {
                v = OPARA__DIM_BATCH;
                end = (char*)(p + 1);
            } else {
                v = strtoll(p, &end, 10);
                if (end == p || v < 0) goto bad;
            }
            shape->dims[shape->ndim++] = v;
            p = end;
            if (*p == ',') ++p;
            else if (*p) goto bad;
        }
        return 1;
    bad:
        return opara__fail(im->rt, OPARA_ERR_INVALID_ARGS,
                           "shape override '%s': expected NAME=d0,d1,... with sizes >= 0 (N or ? for the batch)", spec);
    }
    return 0;
}

static opara_result opara__check_overrides(opara__imp* im) {
    uint32_t i;
    if (!im->opt) return OPARA_OK;
    for (i = 0; i < im->opt->n_input_shapes; ++i) {
        const char* spec = im->opt->input_shapes[i];
        const char* eq = spec ? strchr(spec, '=') : NULL;
        uint32_t k;
        int found = 0;
        if (!eq) return opara__fail(im->rt, OPARA_ERR_INVALID_ARGS, "shape override '%s': expected NAME=d0,d1,...",
                                    spec ? spec : "(null)");
        for (k = 0; k < im->model->graph.n_inputs; ++k) {
            const char* nm = im->model->graph.inputs[k].name;
            found |= strlen(nm) == (size_t)(eq - spec) && strncmp(nm, spec, (size_t)(eq - spec)) == 0;
        }
        if (!found)
            return opara__fail(im->rt, OPARA_ERR_NOT_FOUND, "shape override '%s': the model has no input '%.*s'", spec,
                               (int)(eq - spec), spec);
    }
    return OPARA_OK;
}

static opara_result opara__add_graph_input(opara__imp* im, const opara__onnx_value_info* vi) {
    opara__shape shape;
    opara_dtype dtype = opara__onnx_dtype(vi->elem_type);
    uint32_t d;
    int32_t v;
    int r;
    if (!vi->is_tensor || dtype == OPARA_DTYPE_UNDEFINED)
        return opara__fail(im->rt, OPARA_ERR_UNSUPPORTED, "graph input '%s': only tensors of f32/f64/f16/i64/i32/i8/u8/"
                           "bool are supported (elem_type %d)", vi->name, (int)vi->elem_type);
    r = opara__override_shape(im, vi->name, &shape);
    if (r < 0) return (opara_result)r;
    if (!r) {
        if (!vi->has_shape)
            return opara__fail(im->rt, OPARA_ERR_SHAPE, "graph input '%s' has no shape: give one with a shape override "
                               "(\"%s=d0,d1,...\")", vi->name, vi->name);
        if (vi->n_dims > OPARA_MAX_DIMS)
            return opara__fail(im->rt, OPARA_ERR_LIMIT_EXCEEDED, "graph input '%s' has rank %u (max %d)", vi->name,
                               vi->n_dims, OPARA_MAX_DIMS);
        shape.ndim = (int32_t)vi->n_dims;
        for (d = 0; d < vi->n_dims; ++d) {
            const opara__onnx_dim* dim = &vi->dims[d];
            if (dim->has_value && dim->value >= 0) shape.dims[d] = dim->value;
            else if (d == 0) shape.dims[d] = OPARA__DIM_BATCH;
            else if (im->opt && im->opt->default_dim > 0) shape.dims[d] = im->opt->default_dim;
            else
                return opara__fail(im->rt, OPARA_ERR_SHAPE,
                                   "graph input '%s' dim %u ('%s') is symbolic: give its size with a shape override "
                                   "(\"%s=d0,d1,...\") or options.default_dim",
                                   vi->name, d, dim->param ? dim->param : "?", vi->name);
        }
    }
    v = opara__graph_add_value(im->g, vi->name, dtype, &shape);
    if (v < 0) return OPARA_ERR_ONNX_INVALID;
    return opara__graph_add_input(im->g, v);
}

static opara_result opara__add_initializers(opara__imp* im) {
    const opara__onnx_graph* g = &im->model->graph;
    uint32_t i;
    for (i = 0; i < g->n_initializers; ++i) {
        opara__tensor_data t;
        char where[192];
        opara_result r;
        opara__format(where, sizeof where, "graph.initializer[%u] '%s'", i, g->initializers[i].name);
        r = opara__onnx_tensor_load(im->rt, &g->initializers[i], im->base_dir, where, &t);
        if (r == OPARA_OK) {
            r = opara__imp_const(im, g->initializers[i].name, t.dtype, &t.shape, t.data, NULL, 1);
            opara__tensor_data_free(im->rt, &t);
        }
        if (r != OPARA_OK) return r;
    }
    for (i = 0; i < g->n_inputs; ++i) {
        opara_result r;
        uint32_t k;
        const opara__tensor_data* frozen = NULL;
        if (opara__graph_find_value(im->g, g->inputs[i].name) >= 0) continue; /* IR < 4: an initializer */
        for (k = 0; im->extra && k < im->extra->n_frozen; ++k)
            if (strcmp(im->extra->frozen[k].name, g->inputs[i].name) == 0) frozen = &im->extra->frozen[k];
        if (frozen) r = opara__imp_const(im, g->inputs[i].name, frozen->dtype, &frozen->shape, frozen->data, NULL, 1);
        else r = opara__add_graph_input(im, &g->inputs[i]);
        if (r != OPARA_OK) return r;
    }
    return OPARA_OK;
}

/* ---- nodes in dependency order ---------------------------------------------------------------- */

static int opara__node_ready(opara__imp* im, const opara__onnx_node* n, const char** missing) {
    uint32_t i;
    for (i = 0; i < n->n_inputs; ++i)
        if (n->inputs[i][0] && opara__imp_find(im, n->inputs[i]) < 0) {
            *missing = n->inputs[i];
            return 0;
        }
    return 1;
}

static opara_result opara__stuck(opara__imp* im, const uint8_t* done) {
    const opara__onnx_graph* g = &im->model->graph;
    uint32_t i, j, k;
    for (i = 0; i < g->n_nodes; ++i) {
        const char* missing = NULL;
        if (done[i] || opara__node_ready(im, &g->nodes[i], &missing)) continue;
        for (j = 0; j < g->n_nodes; ++j)
            for (k = 0; !done[j] && k < g->nodes[j].n_outputs; ++k)
                if (strcmp(g->nodes[j].outputs[k], missing) == 0)
                    return opara__fail(im->rt, OPARA_ERR_CYCLE, "node '%s' (%s): input '%s' lies on a cycle",
                                       g->nodes[i].name, g->nodes[i].op_type, missing);
        return opara__fail(im->rt, OPARA_ERR_ONNX_INVALID,
                           "node '%s' (%s): input '%s' is not produced by any node, initializer or graph input",
                           g->nodes[i].name, g->nodes[i].op_type, missing);
    }
    return OPARA_ERR_INTERNAL;
}

static opara_result opara__import_nodes(opara__imp* im) {
    const opara__onnx_graph* g = &im->model->graph;
    uint32_t i, max_in = 1, left = g->n_nodes, first = 0;
    uint8_t* done = (uint8_t*)opara__calloc(im->rt, g->n_nodes + 1, 1);
    int32_t* in;
    opara_result r = OPARA_OK;
    for (i = 0; i < g->n_nodes; ++i) max_in = OPARA__MAX(max_in, g->nodes[i].n_inputs);
    in = (int32_t*)opara__calloc(im->rt, max_in, sizeof(int32_t));
    if (!done || !in) r = opara__fail(im->rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory importing nodes");
    while (r == OPARA_OK && left) {
        uint32_t progress = 0;
        for (i = first; i < g->n_nodes && r == OPARA_OK; ++i) {
            const char* missing;
            if (done[i] || !opara__node_ready(im, &g->nodes[i], &missing)) continue;
            r = opara__import_node(im, &g->nodes[i], in);
            done[i] = 1;
            left--;
            progress++;
        }
        while (first < g->n_nodes && done[first]) first++;
        if (r == OPARA_OK && left && !progress) r = opara__stuck(im, done);
    }
    opara__free(im->rt, done);
    opara__free(im->rt, in);
    return r;
}

static opara_result opara__add_outputs(opara__imp* im) {
    const opara__onnx_graph* g = &im->model->graph;
    uint32_t i;
    for (i = 0; i < g->n_outputs; ++i) {
        const char* name = g->outputs[i].name;
        int32_t direct = opara__graph_find_value(im->g, name), v = opara__imp_find(im, name);
        opara_result r;
        if (v < 0)
            return opara__fail(im->rt, OPARA_ERR_ONNX_INVALID, "graph output '%s' is not produced by any node", name);
        if (direct != v && im->g->values[v].kind == OPARA__VALUE_ACTIVATION && !im->g->values[v].is_output) {
            opara__imp_side* side = opara__side(im, v);
            if (!side) return opara__imp_oom(im);
            if (!side->rename) side->rename = im->g->values[direct].name; /* keeps its name through Identity */
        }
        r = opara__graph_add_output(im->g, v);
        if (r != OPARA_OK) return r;
    }
    return OPARA_OK;
}

/* ---- rebuild: live nodes in topological order, only the values they use ------------------------- */

typedef struct opara__rebuild {
    opara__imp* im;
    const opara__graph* src;
    opara__graph* dst;
    int32_t* map; /* src value -> dst value, -1 */
} opara__rebuild;

static int32_t opara__rebuild_value(opara__rebuild* rb, int32_t v) {
    const opara__value* val;
    const char* name;
    int32_t nv;
    if (v < 0) return -1;
    if (rb->map[v] >= 0) return rb->map[v];
    val = &rb->src->values[v];
    name = (size_t)v < rb->im->side_cap && rb->im->side[v].rename ? rb->im->side[v].rename : val->name;
    nv = opara__graph_add_value(rb->dst, name, val->dtype, val->kind == OPARA__VALUE_ACTIVATION ? NULL : &val->shape);
    if (nv < 0) return -2;
    if (val->kind == OPARA__VALUE_CONST && opara__graph_set_const(rb->dst, nv, val->data, val->nbytes, 1) != OPARA_OK)
        return -2;
    rb->map[v] = nv;
    return nv;
}

static opara_result opara__rebuild_attrs(opara__rebuild* rb, const opara__node* n, int32_t node) {
    uint32_t i;
    opara_result r = OPARA_OK;
    for (i = 0; i < n->n_attrs && r == OPARA_OK; ++i) {
        const opara__attr* a = &n->attrs[i];
        switch (a->type) {
        case OPARA__ATTR_INT: r = opara__node_set_int(rb->dst, node, a->name, a->v.i); break;
        case OPARA__ATTR_FLOAT: r = opara__node_set_float(rb->dst, node, a->name, a->v.f); break;
        case OPARA__ATTR_INTS: r = opara__node_set_ints(rb->dst, node, a->name, a->v.ints, a->count); break;
        case OPARA__ATTR_FLOATS: r = opara__node_set_floats(rb->dst, node, a->name, a->v.floats, a->count); break;
        case OPARA__ATTR_STRING: r = opara__node_set_string(rb->dst, node, a->name, a->v.s); break;
        }
    }
    return r;
}

/* Marks the nodes that some graph output needs (walking the topological order backwards). */
static uint8_t* opara__live_nodes(opara__imp* im, const opara__graph* g, const uint8_t* dead) {
    uint8_t* live = (uint8_t*)opara__calloc(im->rt, (size_t)g->n_nodes + 1, 1);
    uint8_t* needed = (uint8_t*)opara__calloc(im->rt, (size_t)g->n_values + 1, 1);
    uint32_t i, k;
    if (live && needed) {
        for (i = 0; i < g->n_outputs; ++i) needed[g->outputs[i]] = 1;
        for (i = g->n_nodes; i-- > 0;) {
            uint32_t n = g->topo[i];
            const opara__node* node = &g->nodes[n];
            if (dead && dead[n]) continue;
            for (k = 0; k < node->n_outputs && !live[n]; ++k) live[n] = needed[node->outputs[k]];
            for (k = 0; live[n] && k < node->n_inputs; ++k)
                if (node->inputs[k] >= 0) needed[node->inputs[k]] = 1;
        }
    }
    opara__free(im->rt, needed);
    if (!needed) {
        opara__free(im->rt, live);
        return NULL;
    }
    return live;
}

static opara_result opara__rebuild_into(opara__imp* im, const uint8_t* dead, opara__graph* dst) {
    opara__rebuild rb;
    const opara__graph* src = im->g;
    uint8_t* live;
    uint32_t i, k;
    opara_result r = opara__graph_finalize(im->g);
    if (r != OPARA_OK) return r;
    rb.im = im;
    rb.src = src;
    rb.dst = dst;
    rb.map = (int32_t*)opara__calloc(im->rt, (size_t)src->n_values + 1, sizeof(int32_t));
    live = opara__live_nodes(im, src, dead);
    if (!rb.map || !live) r = opara__fail(im->rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory rebuilding the graph");
    for (i = 0; rb.map && i < src->n_values; ++i) rb.map[i] = -1;
    dst->producer_name = src->producer_name ? opara__pool_strdup(im->rt, &dst->pool, src->producer_name) : NULL;
    dst->source_opset = src->source_opset;
    for (i = 0; r == OPARA_OK && i < src->n_inputs; ++i) {
        int32_t v = opara__rebuild_value(&rb, src->inputs[i]);
        r = v < 0 ? OPARA_ERR_OUT_OF_MEMORY : opara__graph_add_input(dst, v);
    }
    for (i = 0; r == OPARA_OK && i < src->n_nodes; ++i) {
        const opara__node* n = &src->nodes[src->topo[i]];
        int32_t ins[64], outs[16], node;
        if (!live[src->topo[i]]) continue;
        if (n->n_inputs > 64 || n->n_outputs > 16) {
            r = opara__fail(im->rt, OPARA_ERR_LIMIT_EXCEEDED, "node '%s': more than 64 inputs", n->name);
            break;
        }
        for (k = 0; k < n->n_inputs; ++k)
            if ((ins[k] = opara__rebuild_value(&rb, n->inputs[k])) < -1) r = OPARA_ERR_OUT_OF_MEMORY;
        for (k = 0; k < n->n_outputs; ++k)
            if ((outs[k] = opara__rebuild_value(&rb, n->outputs[k])) < 0) r = OPARA_ERR_OUT_OF_MEMORY;
        if (r != OPARA_OK) break;
        node = opara__graph_add_node(dst, n->op, n->name, n->n_inputs, ins, n->n_outputs, outs);
        r = node < 0 ? OPARA_ERR_INTERNAL : opara__rebuild_attrs(&rb, n, node);
    }
    for (i = 0; r == OPARA_OK && i < src->n_outputs; ++i) {
        int32_t v = opara__rebuild_value(&rb, src->outputs[i]);
        r = v < 0 ? OPARA_ERR_OUT_OF_MEMORY : opara__graph_add_output(dst, v);
    }
    if (r == OPARA_OK) r = opara__graph_finalize(dst);
    else if (!im->rt->error.text[0]) r = opara__fail(im->rt, r, "rebuilding the graph failed");
    opara__free(im->rt, rb.map);
    opara__free(im->rt, live);
    return r;
}

/* ---- fusions ---------------------------------------------------------------------------------- */

/* The single consumer of value v that is not a graph output, or -1. */
static int32_t opara__sole_consumer(const opara__graph* g, int32_t v) {
    if (g->values[v].is_output || g->consumer_start[v + 1] - g->consumer_start[v] != 1) return -1;
    return (int32_t)g->consumer_nodes[g->consumer_start[v]];
}

static int opara__const_f32(const opara__graph* g, int32_t v, uint64_t count) {
    return v >= 0 && g->values[v].kind == OPARA__VALUE_CONST && g->values[v].dtype == OPARA_DTYPE_F32 &&
           g->values[v].nbytes == count * 4;
}

static int32_t opara__add_folded_const(opara__imp* im, const char* base, const char* suffix, const opara__shape* shape,
                                       const float* data) {
    char name[256];
    int32_t v;
    int k;
    for (k = 0; k < 1000; ++k) {
        if (k) opara__format(name, sizeof name, "%s%s_%d", base, suffix, k);
        else opara__format(name, sizeof name, "%s%s", base, suffix);
        if (opara__graph_find_value(im->g, name) < 0) break;
    }
    v = opara__graph_add_value(im->g, name, OPARA_DTYPE_F32, shape);
    if (v < 0 || opara__graph_set_const(im->g, v, data, opara__shape_count(shape) * 4, 1) != OPARA_OK) return -1;
    return v;
}

static float opara__f32_at(const opara__value* v, uint64_t i) {
    float f;
    memcpy(&f, (const uint8_t*)v->data + i * 4, 4);
    return f;
}

/* Conv(X, W, B) -> BatchNormalization(scale, bias, mean, var): W' = W*s, B' = (B - mean)*s + bias,
   s = scale / sqrt(var + eps), per output channel. */
static opara_result opara__fold_bn(opara__imp* im, uint32_t bn, uint8_t* dead) {
    opara__graph* g = im->g;
    opara__node* b = &g->nodes[bn];
    int32_t y = b->inputs[0], conv, wv, bv, nw, nb;
    opara__node* c;
    opara__shape wshape, bshape;
    uint64_t ch, per, o, i;
    float *w, *bias;
    double eps = opara__attr_float(b, "epsilon", 1e-5f);
    int32_t* ins;
    if (b->n_inputs != 5 || y < 0 || (conv = g->values[y].producer) < 0 || dead[conv]) return OPARA_OK;
    c = &g->nodes[conv];
    if (c->op != OPARA__OP_CONV || opara__sole_consumer(g, y) != (int32_t)bn || c->n_inputs < 2) return OPARA_OK;
    wv = c->inputs[1];
    bv = c->n_inputs > 2 ? c->inputs[2] : -1;
    if (wv < 0 || g->values[wv].kind != OPARA__VALUE_CONST || g->values[wv].shape.ndim < 1) return OPARA_OK;
    wshape = g->values[wv].shape;
    ch = (uint64_t)wshape.dims[0];
    if (!ch || !opara__const_f32(g, wv, opara__shape_count(&wshape)) || (bv >= 0 && !opara__const_f32(g, bv, ch)))
        return OPARA_OK;
    for (i = 1; i < 5; ++i)
        if (!opara__const_f32(g, b->inputs[i], ch)) return OPARA_OK;
    per = opara__shape_count(&wshape) / ch;
    w = (float*)opara__alloc(im->rt, (size_t)(ch * per * 4 + 4));
    bias = (float*)opara__alloc(im->rt, (size_t)(ch * 4 + 4));
    if (!w || !bias) {
        opara__free(im->rt, w);
        opara__free(im->rt, bias);
        return opara__fail(im->rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory folding BatchNormalization");
    }
    for (o = 0; o < ch; ++o) {
        double s = opara__f32_at(&g->values[b->inputs[1]], o) / sqrt((double)opara__f32_at(&g->values[b->inputs[4]], o) + eps);
        double b0 = bv >= 0 ? opara__f32_at(&g->values[bv], o) : 0.0;
        for (i = 0; i < per; ++i) w[o * per + i] = (float)(opara__f32_at(&g->values[wv], o * per + i) * s);
        bias[o] = (float)((b0 - opara__f32_at(&g->values[b->inputs[3]], o)) * s + opara__f32_at(&g->values[b->inputs[2]], o));
    }
    bshape.ndim = 1;
    bshape.dims[0] = (int64_t)ch;
    nw = opara__add_folded_const(im, g->values[wv].name, "_bnfold", &wshape, w);
    nb = opara__add_folded_const(im, g->values[wv].name, "_bnfold_bias", &bshape, bias);
    opara__free(im->rt, w);
    opara__free(im->rt, bias);
    if (nw < 0 || nb < 0) return OPARA_ERR_OUT_OF_MEMORY;
    c = &g->nodes[conv];
    b = &g->nodes[bn];
    ins = (int32_t*)opara__pool_alloc(im->rt, &g->pool, 3 * sizeof(int32_t), 4);
    if (!ins) return opara__imp_oom(im);
    ins[0] = c->inputs[0];
    ins[1] = nw;
    ins[2] = nb;
    c->inputs = ins;
    c->n_inputs = 3;
    c->outputs[0] = b->outputs[0];
    g->values[b->outputs[0]].producer = conv;
    dead[bn] = 1;
    return OPARA_OK;
}

static opara_result opara__fuse_relu(opara__imp* im, uint32_t relu, uint8_t* dead) {
    opara__graph* g = im->g;
    opara__node* r = &g->nodes[relu];
    int32_t y = r->n_inputs ? r->inputs[0] : -1, p;
    opara__node* prod;
    if (y < 0 || (p = g->values[y].producer) < 0 || dead[p]) return OPARA_OK;
    prod = &g->nodes[p];
    if ((prod->op != OPARA__OP_CONV && prod->op != OPARA__OP_GEMM) || opara__node_attr(prod, "activation") ||
        prod->n_outputs != 1 || opara__sole_consumer(g, y) != (int32_t)relu)
        return OPARA_OK;
    if (opara__node_set_string(g, p, "activation", "Relu") != OPARA_OK) return OPARA_ERR_OUT_OF_MEMORY;
    prod = &g->nodes[p];
    prod->outputs[0] = r->outputs[0];
    g->values[r->outputs[0]].producer = p;
    dead[relu] = 1;
    return OPARA_OK;
}

static opara_result opara__fuse(opara__imp* im, uint8_t* dead) {
    opara__graph* g = im->g;
    uint32_t i, n = g->n_nodes;
    opara_result r = opara__graph_finalize(g);
    for (i = 0; r == OPARA_OK && i < n; ++i)
        if (g->nodes[g->topo[i]].op == OPARA__OP_BATCH_NORM) r = opara__fold_bn(im, g->topo[i], dead);
    for (i = 0; r == OPARA_OK && i < n; ++i)
        if (g->nodes[g->topo[i]].op == OPARA__OP_RELU) r = opara__fuse_relu(im, g->topo[i], dead);
    return r;
}

/* ---- entry points ----------------------------------------------------------------------------- */

static int64_t opara__default_opset(const opara__onnx_model* m) {
    uint32_t i;
    for (i = 0; i < m->n_opsets; ++i)
        if (!m->opsets[i].domain[0] || strcmp(m->opsets[i].domain, "ai.onnx") == 0) return m->opsets[i].version;
    return m->n_opsets ? 0 : 1; /* no opset_import at all: very old files mean opset 1 */
}

static opara_result opara__import_model(opara__imp* im, opara__graph* out) {
    int flags = im->extra ? im->extra->flags : 0;
    opara__graph work;
    uint8_t* dead;
    opara_result r;
    opara__graph_init(&work, im->rt);
    im->g = &work;
    work.source_opset = im->opset;
    work.producer_name = opara__pool_strdup(im->rt, &work.pool, im->model->producer_name);
    r = opara__check_overrides(im);
    if (r == OPARA_OK) r = opara__add_initializers(im);
    if (r == OPARA_OK) r = opara__import_nodes(im);
    if (r == OPARA_OK) r = opara__add_outputs(im);
    dead = (uint8_t*)opara__calloc(im->rt, (size_t)work.n_nodes + 1, 1);
    if (r == OPARA_OK && !dead) r = opara__fail(im->rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory");
    if (r == OPARA_OK && !(flags & OPARA__ONNX_NO_FUSION)) r = opara__fuse(im, dead);
    if (r == OPARA_OK) r = opara__rebuild_into(im, dead, out);
    opara__free(im->rt, dead);
    opara__graph_free(&work);
    return r;
}

OPARA__PRIVATE opara_result opara__onnx_import(opara_runtime* rt, const void* data, size_t size,
                                              const opara_onnx_options* options, const char* base_dir,
                                              const opara__onnx_extra* extra, opara__graph* out) {
    opara__pool pool;
    opara__onnx_model model;
    opara__imp im;
    opara_result r;
    opara__graph_init(out, rt);
    if (!data && size) return opara__fail(rt, OPARA_ERR_INVALID_ARGS, "ONNX import: no data");
    memset(&pool, 0, sizeof pool);
    memset(&im, 0, sizeof im);
    r = opara__onnx_decode_model(rt, &pool, (const uint8_t*)data, size, &model);
    if (r == OPARA_OK && !model.has_graph) r = opara__fail(rt, OPARA_ERR_ONNX_INVALID, "the model has no graph");
    if (r == OPARA_OK && model.graph.n_sparse_initializers)
        r = opara__fail(rt, OPARA_ERR_UNSUPPORTED, "graph.sparse_initializer is not supported");
    if (r == OPARA_OK) r = opara__check_ops(rt, &model.graph);
    if (r == OPARA_OK) {
        im.rt = rt;
        im.model = &model;
        im.opt = options;
        im.base_dir = base_dir ? base_dir : options ? options->external_data_dir : NULL;
        im.opset = opara__default_opset(&model);
        im.extra = extra;
        r = opara__import_model(&im, out);
    }
    opara__free(rt, im.side);
    opara__pool_free(rt, &pool);
    return r;
}

#ifndef OPARA_NO_STDIO
OPARA__PRIVATE opara_result opara__onnx_read_file(opara_runtime* rt, const char* path, uint8_t** data, size_t* size) {
    FILE* f = fopen(path, "rb");
    long n;
    *data = NULL;
    *size = 0;
    if (!f) return opara__fail(rt, OPARA_ERR_IO, "cannot open '%s'", path);
    if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return opara__fail(rt, OPARA_ERR_IO, "cannot size '%s'", path);
    }
    *data = (uint8_t*)opara__alloc(rt, (size_t)n + 1);
    if (!*data) {
        fclose(f);
        return opara__fail(rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory reading '%s' (%ld bytes)", path, n);
    }
    if (fread(*data, 1, (size_t)n, f) != (size_t)n) {
        fclose(f);
        opara__free(rt, *data);
        *data = NULL;
        return opara__fail(rt, OPARA_ERR_IO, "cannot read '%s'", path);
    }
    fclose(f);
    *size = (size_t)n;
    return OPARA_OK;
}

OPARA__PRIVATE opara_result opara__onnx_read_tensor_file(opara_runtime* rt, const char* path, opara__tensor_data* out) {
    uint8_t* data;
    size_t size;
    opara_result r = opara__onnx_read_file(rt, path, &data, &size);
    memset(out, 0, sizeof *out);
    if (r != OPARA_OK) return r;
    r = opara__onnx_read_tensor(rt, data, size, out);
    opara__free(rt, data);
    return r;
}

OPARA__PRIVATE opara_result opara__onnx_import_file(opara_runtime* rt, const char* path,
                                                   const opara_onnx_options* options, const opara__onnx_extra* extra,
                                                   opara__graph* out) {
    char dir[4096];
    const char* slash = strrchr(path, '/');
    uint8_t* data;
    size_t size;
    opara_result r;
#ifdef _WIN32
    const char* bslash = strrchr(path, '\\');
    if (bslash && (!slash || bslash > slash)) slash = bslash;
#endif
    opara__graph_init(out, rt);
    if (slash) opara__format(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    else opara__format(dir, sizeof dir, ".");
    if (slash == path) opara__format(dir, sizeof dir, "/");
    r = opara__onnx_read_file(rt, path, &data, &size);
    if (r != OPARA_OK) return r;
    r = opara__onnx_import(rt, data, size, options, options && options->external_data_dir ? options->external_data_dir : dir,
                           extra, out);
    opara__free(rt, data);
    return r;
}
#endif

/* ---- public API ------------------------------------------------------------------------------- */

static opara_result opara__model_from_onnx_graph(opara_runtime* rt, opara_result r, opara__graph* g, opara_model** out) {
    if (r == OPARA_OK) return opara__model_from_graph(rt, g, out);
    opara__graph_free(g);
    return r;
}

OPARADEF opara_result opara_model_load_onnx_memory(opara_runtime* runtime, const void* data, size_t size,
                                                   const opara_onnx_options* options, opara_model** out) {
    opara__graph g;
    if (!out) return runtime ? opara__fail(runtime, OPARA_ERR_INVALID_ARGS, "opara_model_load_onnx_memory: out is NULL")
                             : OPARA_ERR_INVALID_ARGS;
    *out = NULL;
    if (!runtime || (!data && size)) return runtime ? opara__fail(runtime, OPARA_ERR_INVALID_ARGS,
                                                                  "opara_model_load_onnx_memory: no data") : OPARA_ERR_INVALID_ARGS;
    return opara__model_from_onnx_graph(runtime, opara__onnx_import(runtime, data, size, options, NULL, NULL, &g), &g, out);
}

#ifndef OPARA_NO_STDIO
OPARADEF opara_result opara_model_load_onnx_file(opara_runtime* runtime, const char* path,
                                                 const opara_onnx_options* options, opara_model** out) {
    opara__graph g;
    if (!out) return runtime ? opara__fail(runtime, OPARA_ERR_INVALID_ARGS, "opara_model_load_onnx_file: out is NULL")
                             : OPARA_ERR_INVALID_ARGS;
    *out = NULL;
    if (!runtime || !path) return runtime ? opara__fail(runtime, OPARA_ERR_INVALID_ARGS,
                                                        "opara_model_load_onnx_file: no path") : OPARA_ERR_INVALID_ARGS;
    return opara__model_from_onnx_graph(runtime, opara__onnx_import_file(runtime, path, options, NULL, &g), &g, out);
}
#endif
/* ==== END src/opara_onnx.c ==== */
/* ==== BEGIN src/opara_sim.c ==== */
/* GPU timing simulator: a deterministic discrete-event model of kernels on SMs (docs/SIMULATOR.md).

   Blocks: a kernel's blocks are dispatched breadth-first over the SMs that have room (threads,
   registers, shared memory, block slots), oldest ready kernel first; a kernel whose next block
   fits nowhere blocks every younger kernel (head-of-line blocking).
   Block time (roofline): an SM reaches peak/sm_count with sm_saturation_threads resident threads,
   so a block of t threads alone computes at that rate times min(1, t/sm_saturation_threads); DRAM
   saturates once mem_saturation of the device's thread slots load, so a block pulls
   bandwidth/(sm_count*max_threads_per_sm*mem_saturation)*t. Its uncontended time is the larger
   of its FLOP time and its byte time. Contention is processor sharing on virtual clocks (a rate
   change costs O(1)): memory-bound blocks share the bandwidth (when their uncontended demand D
   exceeds it, all slow down by bandwidth/D); compute-bound blocks share their SM's peak likewise.
   Launch: eager mode issues kernels from one host thread in launch order (launch_us each, event_us
   per event), streams map onto hw_queues queues (stream % hw_queues) that run in issue order;
   graph mode has one replay call and a front end that reaches node i after (i+1)*graph_node_us.
   A kernel becomes ready kernel_gap_us after its last dependency finished (or when launched). */
/* #include "opara_sim.h" (inlined above) */
/* #include "opara_sched.h" (inlined above) */

#include <math.h>
#include <stdlib.h>

/* ---- private interface (used by tests and the CLI through the amalgamation) ------------------ */

/* One kernel as the engine sees it, in launch order. */
typedef struct opara__sim_kernel {
    opara__op_desc desc;
    uint32_t stream;
    uint32_t host_events;          /* eager: event records and waits the host issues with this launch */
    uint32_t dep_start, dep_count; /* into the deps array: earlier kernels that must finish first */
} opara__sim_kernel;

/* Simulates kernels[0..n) (launch order; every dep index < its kernel's index). */
OPARA__PRIVATE opara_result opara__sim_run(opara_runtime* rt, const opara_sim_device* dev, opara_sim_mode mode,
                                          const opara__sim_kernel* kernels, uint32_t n, const uint32_t* deps,
                                          opara_sim_result* out);
/* Simulates a plan: each op depends on its stream predecessor and on the events it waits for. */
OPARA__PRIVATE opara_result opara__sim_plan(opara_runtime* rt, const opara_sim_device* dev, opara_sim_mode mode,
                                           const opara__plan* plan, const opara__op_desc* descs,
                                           opara_sim_result* out);
/* The scheduler's view of a simulator device (name points into dev). */
OPARA__PRIVATE void opara__sim_device_limits(const opara_sim_device* dev, opara__device* out);

/* ---- engine state ---------------------------------------------------------------------------- */

#define OPARA__SIM_INF 1e300

typedef struct opara__sim_group { /* blocks of one kernel started together on one SM */
    uint32_t kernel, sm, count, seq;
    double finish; /* virtual finish time on its SM's clock (compute-bound) or the memory clock */
} opara__sim_group;

typedef struct opara__sim_heap { /* min-heap of group indices by (finish, seq) */
    uint32_t* items;
    uint32_t size;
} opara__sim_heap;

typedef struct opara__sim_ready { double time; uint32_t kernel; } opara__sim_ready;

typedef struct opara__sim_sm {
    int64_t threads, regs, smem, blocks; /* in use */
    double busy_since;
    /* compute-bound groups share the SM: its virtual clock runs at rate = 1/max(1, share) */
    double vclock, updated, rate, share;
    double next_finish;  /* real time the next compute group ends, or OPARA__SIM_INF */
    uint32_t n_compute;  /* compute groups, in s->sm_groups[sm * max_blocks_per_sm ...] */
} opara__sim_sm;

typedef struct opara__sim_kstate {
    uint32_t unmet, blocks_left, running;
    int64_t threads, regs, smem; /* per block */
    double block_us;             /* uncontended block time */
    double demand;               /* memory-bound: bytes/us one block pulls uncontended; else 0 */
    double share;                /* compute-bound: fraction of its SM's peak one block uses alone */
    double arrival, dep_done;
} opara__sim_kstate;

typedef struct opara__sim {
    opara_runtime* rt;
    const opara_sim_device* dev;
    const opara__sim_kernel* kernels;
    uint32_t n;
    opara__sim_kstate* ks;
    uint32_t* succ_start; /* CSR successors */
    uint32_t* succ;
    opara__sim_sm* sms;
    opara__sim_group* groups;
    size_t n_groups, cap_groups;
    uint32_t* free_groups;
    size_t n_free, cap_free;
    opara__sim_heap memory;
    uint32_t* sm_groups; /* compute groups per SM, max_blocks_per_sm slots each */
    uint32_t n_running;  /* compute groups on all SMs */
    opara__sim_ready* ready; /* min-heap by (time, kernel) */
    uint32_t n_ready;
    uint32_t* fifo; /* ready kernels with blocks left, in the order they became ready */
    uint32_t fifo_head, fifo_tail;
    uint32_t head_scanned; /* the head kernel was tried on every SM (then only freed SMs are retried) */
    uint32_t* dirty;       /* SMs freed since the last dispatch */
    uint8_t* is_dirty;
    uint32_t n_dirty;
    uint32_t* fit;         /* scratch per SM */
    uint32_t* take;
    uint32_t next_sm;
    uint32_t seq;
    double now, vclock, rate, demand, bandwidth; /* bandwidth in bytes/us */
    uint32_t busy_sms;
    double busy_total;
    size_t cap_samples;
    opara_sim_result* res;
} opara__sim;

static int opara__sim_group_less(const opara__sim* s, uint32_t a, uint32_t b) {
    const opara__sim_group* ga = &s->groups[a];
    const opara__sim_group* gb = &s->groups[b];
    return ga->finish < gb->finish || (ga->finish == gb->finish && ga->seq < gb->seq);
}

static void opara__sim_heap_push(opara__sim* s, opara__sim_heap* h, uint32_t g) {
    uint32_t i = h->size++;
    h->items[i] = g;
    while (i > 0) {
        uint32_t parent = (i - 1) / 2;
        if (!opara__sim_group_less(s, h->items[i], h->items[parent])) break;
        h->items[i] = h->items[parent];
        h->items[parent] = g;
        i = parent;
    }
}

static uint32_t opara__sim_heap_pop(opara__sim* s, opara__sim_heap* h) {
    uint32_t top = h->items[0], i = 0;
    h->items[0] = h->items[--h->size];
    for (;;) {
        uint32_t l = 2 * i + 1, r = l + 1, m = i, t;
        if (l < h->size && opara__sim_group_less(s, h->items[l], h->items[m])) m = l;
        if (r < h->size && opara__sim_group_less(s, h->items[r], h->items[m])) m = r;
        if (m == i) break;
        t = h->items[i];
        h->items[i] = h->items[m];
        h->items[m] = t;
        i = m;
    }
    return top;
}

static int opara__sim_ready_less(const opara__sim_ready* a, const opara__sim_ready* b) {
    return a->time < b->time || (a->time == b->time && a->kernel < b->kernel);
}

static void opara__sim_ready_push(opara__sim* s, double time, uint32_t kernel) {
    uint32_t i = s->n_ready++;
    s->ready[i].time = time;
    s->ready[i].kernel = kernel;
    while (i > 0) {
        uint32_t parent = (i - 1) / 2;
        opara__sim_ready t;
        if (!opara__sim_ready_less(&s->ready[i], &s->ready[parent])) break;
        t = s->ready[i];
        s->ready[i] = s->ready[parent];
        s->ready[parent] = t;
        i = parent;
    }
}

static opara__sim_ready opara__sim_ready_pop(opara__sim* s) {
    opara__sim_ready top = s->ready[0];
    uint32_t i = 0;
    s->ready[0] = s->ready[--s->n_ready];
    for (;;) {
        uint32_t l = 2 * i + 1, r = l + 1, m = i;
        opara__sim_ready t;
        if (l < s->n_ready && opara__sim_ready_less(&s->ready[l], &s->ready[m])) m = l;
        if (r < s->n_ready && opara__sim_ready_less(&s->ready[r], &s->ready[m])) m = r;
        if (m == i) break;
        t = s->ready[i];
        s->ready[i] = s->ready[m];
        s->ready[m] = t;
        i = m;
    }
    return top;
}

/* ---- bookkeeping ----------------------------------------------------------------------------- */

static opara_result opara__sim_sample(opara__sim* s) {
    opara_sim_result* r = s->res;
    if (r->n_samples > 0 && r->sample_us[r->n_samples - 1] == s->now) {
        r->busy_sms[r->n_samples - 1] = s->busy_sms;
        return OPARA_OK;
    }
    if (r->n_samples > 0 && r->busy_sms[r->n_samples - 1] == s->busy_sms) return OPARA_OK;
    if (r->n_samples == s->cap_samples) {
        size_t cap = s->cap_samples;
        if (opara__grow(s->rt, (void**)&r->sample_us, &cap, cap + 1, sizeof(double)) != OPARA_OK ||
            opara__grow(s->rt, (void**)&r->busy_sms, &s->cap_samples, cap, sizeof(uint32_t)) != OPARA_OK)
            return OPARA_ERR_OUT_OF_MEMORY;
    }
    r->sample_us[r->n_samples] = s->now;
    r->busy_sms[r->n_samples] = s->busy_sms;
    r->n_samples++;
    return OPARA_OK;
}

static void opara__sim_ready_later(opara__sim* s, uint32_t k) {
    const opara__sim_kernel* kn = &s->kernels[k];
    double t = OPARA__MAX(s->ks[k].arrival, s->ks[k].dep_done);
    if (!kn->desc.kernel_less && kn->desc.grid > 0) t += s->dev->kernel_gap_us;
    opara__sim_ready_push(s, t, k);
}

static void opara__sim_kernel_done(opara__sim* s, uint32_t k) {
    uint32_t i;
    s->res->ops[k].end_us = s->now;
    for (i = s->succ_start[k]; i < s->succ_start[k + 1]; ++i) {
        uint32_t j = s->succ[i];
        s->ks[j].dep_done = OPARA__MAX(s->ks[j].dep_done, s->now);
        if (--s->ks[j].unmet == 0) opara__sim_ready_later(s, j);
    }
}

static void opara__sim_kernel_ready(opara__sim* s, uint32_t k) {
    s->res->ops[k].ready_us = s->now;
    if (s->ks[k].blocks_left == 0) {
        s->res->ops[k].start_us = s->now;
        opara__sim_kernel_done(s, k);
        return;
    }
    s->fifo[s->fifo_tail++] = k;
}

/* Brings SM i's virtual clock to now. */
static void opara__sim_sm_advance(opara__sim* s, uint32_t i) {
    opara__sim_sm* sm = &s->sms[i];
    sm->vclock += sm->rate * (s->now - sm->updated);
    sm->updated = s->now;
}

/* After SM i's compute groups or share changed (clock advanced to now): new rate and next end. */
static void opara__sim_sm_reschedule(opara__sim* s, uint32_t i) {
    opara__sim_sm* sm = &s->sms[i];
    const uint32_t* gs = s->sm_groups + (size_t)i * (size_t)s->dev->max_blocks_per_sm;
    double first = OPARA__SIM_INF;
    uint32_t j;
    if (sm->n_compute == 0) sm->share = 0; /* no drift from repeated sums */
    sm->rate = sm->share > 1.0 ? 1.0 / sm->share : 1.0;
    for (j = 0; j < sm->n_compute; ++j) first = OPARA__MIN(first, s->groups[gs[j]].finish);
    sm->next_finish = sm->n_compute ? s->now + OPARA__MAX(first - sm->vclock, 0.0) / sm->rate : OPARA__SIM_INF;
}

static opara_result opara__sim_group_finish(opara__sim* s, uint32_t g);

/* Ends the compute groups of SM i due at now (the earliest one even if rounding left its clock short). */
static opara_result opara__sim_sm_finish_due(opara__sim* s, uint32_t i) {
    opara__sim_sm* sm = &s->sms[i];
    uint32_t* gs = s->sm_groups + (size_t)i * (size_t)s->dev->max_blocks_per_sm;
    double first = OPARA__SIM_INF;
    uint32_t j;
    opara__sim_sm_advance(s, i);
    for (j = 0; j < sm->n_compute; ++j) first = OPARA__MIN(first, s->groups[gs[j]].finish);
    sm->vclock = OPARA__MAX(sm->vclock, first);
    for (j = 0; j < sm->n_compute;) {
        uint32_t g = gs[j];
        if (s->groups[g].finish <= sm->vclock) {
            opara_result r;
            memmove(gs + j, gs + j + 1, (sm->n_compute - j - 1) * sizeof *gs); /* keep start order */
            sm->n_compute--;
            s->n_running--;
            if ((r = opara__sim_group_finish(s, g)) != OPARA_OK) return r;
        } else {
            ++j;
        }
    }
    opara__sim_sm_reschedule(s, i);
    return OPARA_OK;
}

static opara_result opara__sim_group_finish(opara__sim* s, uint32_t g) {
    opara__sim_group* gr = &s->groups[g];
    opara__sim_kstate* k = &s->ks[gr->kernel];
    opara__sim_sm* sm = &s->sms[gr->sm];
    uint32_t kernel = gr->kernel;
    sm->threads -= k->threads * gr->count;
    sm->regs -= k->regs * gr->count;
    sm->smem -= k->smem * gr->count;
    sm->blocks -= gr->count;
    if (k->demand > 0) s->demand -= k->demand * gr->count;
    else sm->share -= k->share * gr->count;
    if (sm->blocks == 0) {
        s->busy_total += s->now - sm->busy_since;
        s->busy_sms--;
        if (opara__sim_sample(s) != OPARA_OK) return OPARA_ERR_OUT_OF_MEMORY;
    }
    if (!s->is_dirty[gr->sm]) {
        s->is_dirty[gr->sm] = 1;
        s->dirty[s->n_dirty++] = gr->sm;
    }
    s->free_groups[s->n_free++] = g;
    if (--k->running == 0 && k->blocks_left == 0) opara__sim_kernel_done(s, kernel);
    return OPARA_OK;
}

static opara_result opara__sim_group_start(opara__sim* s, uint32_t kernel, uint32_t smi, uint32_t count) {
    opara__sim_kstate* k = &s->ks[kernel];
    opara__sim_sm* sm = &s->sms[smi];
    opara__sim_group* gr;
    uint32_t g;
    if (s->n_free > 0) {
        g = s->free_groups[--s->n_free];
    } else {
        if (opara__grow(s->rt, (void**)&s->groups, &s->cap_groups, s->n_groups + 1, sizeof *s->groups) != OPARA_OK)
            return OPARA_ERR_OUT_OF_MEMORY;
        g = (uint32_t)s->n_groups++;
        if (s->n_groups > s->cap_free) {
            size_t cap_m = s->cap_free;
            if (opara__grow(s->rt, (void**)&s->free_groups, &s->cap_free, s->n_groups, sizeof(uint32_t)) != OPARA_OK ||
                opara__grow(s->rt, (void**)&s->memory.items, &cap_m, s->n_groups, sizeof(uint32_t)) != OPARA_OK)
                return OPARA_ERR_OUT_OF_MEMORY;
        }
    }
    gr = &s->groups[g];
    gr->kernel = kernel;
    gr->sm = smi;
    gr->count = count;
    gr->seq = s->seq++;
    if (sm->blocks == 0) {
        sm->busy_since = s->now;
        s->busy_sms++;
        if (opara__sim_sample(s) != OPARA_OK) return OPARA_ERR_OUT_OF_MEMORY;
    }
    sm->threads += k->threads * count;
    sm->regs += k->regs * count;
    sm->smem += k->smem * count;
    sm->blocks += count;
    k->blocks_left -= count;
    k->running++;
    if (k->demand > 0) {
        gr->finish = s->vclock + k->block_us;
        s->demand += k->demand * count;
        opara__sim_heap_push(s, &s->memory, g);
    } else {
        opara__sim_sm_advance(s, smi);
        gr->finish = sm->vclock + k->block_us;
        sm->share += k->share * count;
        s->sm_groups[(size_t)smi * (size_t)s->dev->max_blocks_per_sm + sm->n_compute++] = g;
        s->n_running++;
        opara__sim_sm_reschedule(s, smi);
    }
    return OPARA_OK;
}

/* How many more blocks of kernel k fit on SM i. */
static uint32_t opara__sim_fit(const opara__sim* s, const opara__sim_kstate* k, uint32_t i) {
    const opara_sim_device* d = s->dev;
    const opara__sim_sm* sm = &s->sms[i];
    int64_t fit = d->max_blocks_per_sm - sm->blocks;
    fit = OPARA__MIN(fit, (d->max_threads_per_sm - sm->threads) / k->threads);
    if (k->regs > 0) fit = OPARA__MIN(fit, (d->max_regs_per_sm - sm->regs) / k->regs);
    if (k->smem > 0) fit = OPARA__MIN(fit, (d->max_smem_per_sm - sm->smem) / k->smem);
    return fit > 0 ? (uint32_t)fit : 0;
}

/* Places blocks of kernel k breadth-first over the candidate SMs (one per SM per round). */
static opara_result opara__sim_place(opara__sim* s, uint32_t kernel, const uint32_t* cand, uint32_t n_cand) {
    opara__sim_kstate* k = &s->ks[kernel];
    uint32_t left = k->blocks_left, i, last = UINT32_MAX;
    int progress = 1;
    for (i = 0; i < n_cand; ++i) {
        s->fit[i] = opara__sim_fit(s, k, cand[i]);
        s->take[i] = 0;
    }
    while (left > 0 && progress) {
        progress = 0;
        for (i = 0; i < n_cand && left > 0; ++i) {
            if (s->take[i] < s->fit[i]) {
                s->take[i]++;
                left--;
                progress = 1;
                last = cand[i];
            }
        }
    }
    if (last == UINT32_MAX) return OPARA_OK;
    if (k->blocks_left == s->kernels[kernel].desc.grid) s->res->ops[kernel].start_us = s->now;
    for (i = 0; i < n_cand; ++i) {
        if (s->take[i] > 0) {
            opara_result r = opara__sim_group_start(s, kernel, cand[i], s->take[i]);
            if (r != OPARA_OK) return r;
        }
    }
    s->next_sm = (last + 1) % (uint32_t)s->dev->sm_count;
    return OPARA_OK;
}

static opara_result opara__sim_dispatch(opara__sim* s) {
    uint32_t n_sm = (uint32_t)s->dev->sm_count, i;
    while (s->fifo_head < s->fifo_tail) {
        uint32_t k = s->fifo[s->fifo_head];
        opara_result r;
        if (s->head_scanned != k) {
            uint32_t* all = s->dirty + n_sm; /* second half of the dirty buffer: rotation order */
            for (i = 0; i < n_sm; ++i) all[i] = (s->next_sm + i) % n_sm;
            r = opara__sim_place(s, k, all, n_sm);
        } else {
            r = opara__sim_place(s, k, s->dirty, s->n_dirty);
        }
        if (r != OPARA_OK) return r;
        if (s->ks[k].blocks_left > 0) {
            s->head_scanned = k;
            break;
        }
        s->fifo_head++;
    }
    for (i = 0; i < s->n_dirty; ++i) s->is_dirty[s->dirty[i]] = 0;
    s->n_dirty = 0;
    return OPARA_OK;
}

/* ---- setup ----------------------------------------------------------------------------------- */

static opara_result opara__sim_check_device(opara_runtime* rt, const opara_sim_device* d) {
    if (d->sm_count <= 0 || d->max_threads_per_sm <= 0 || d->max_regs_per_sm <= 0 || d->max_smem_per_sm < 0 ||
        d->max_blocks_per_sm <= 0 || d->sm_saturation_threads <= 0 || d->hw_queues <= 0)
        return opara__fail(rt, OPARA_ERR_INVALID_ARGS, "sim device '%s': SM counts and limits must be positive",
                           d->name);
    if (!(d->peak_gflops > 0) || !(d->mem_gbps > 0) || !(d->mem_saturation > 0) || d->mem_saturation > 1)
        return opara__fail(rt, OPARA_ERR_INVALID_ARGS,
                           "sim device '%s': peak_gflops and mem_gbps must be > 0, mem_saturation in (0, 1]", d->name);
    if (!(d->launch_us >= 0) || !(d->event_us >= 0) || !(d->graph_launch_us >= 0) || !(d->graph_node_us >= 0) ||
        !(d->kernel_gap_us >= 0))
        return opara__fail(rt, OPARA_ERR_INVALID_ARGS, "sim device '%s': overheads must be >= 0", d->name);
    return OPARA_OK;
}

/* Per-block demand and time of kernel i; fails when one block cannot fit on an empty SM. */
static opara_result opara__sim_kernel_setup(opara__sim* s, uint32_t i) {
    const opara_sim_device* d = s->dev;
    const opara__op_desc* desc = &s->kernels[i].desc;
    opara__sim_kstate* k = &s->ks[i];
    double sm_flops_us = d->peak_gflops * 1e3 / d->sm_count;
    double thread_bytes_us = d->mem_gbps * 1e3 / ((double)d->sm_count * d->max_threads_per_sm * d->mem_saturation);
    double per_block_flops, per_block_bytes, t_compute, t_memory;
    uint32_t grid = desc->kernel_less ? 0 : desc->grid;
    k->blocks_left = grid;
    s->res->ops[i].blocks = grid;
    s->res->ops[i].stream = s->kernels[i].stream;
    if (grid == 0) return OPARA_OK;
    k->threads = desc->block_threads ? desc->block_threads : 1;
    k->regs = (int64_t)desc->regs_per_thread * k->threads;
    k->smem = desc->smem_per_block;
    if (k->threads > d->max_threads_per_sm || k->regs > d->max_regs_per_sm || k->smem > d->max_smem_per_sm)
        return opara__fail(s->rt, OPARA_ERR_INVALID_ARGS,
                           "sim: kernel %u (%u threads, %u regs/thread, %u B smem per block) never fits on an SM of '%s'",
                           i, desc->block_threads, desc->regs_per_thread, desc->smem_per_block, d->name);
    per_block_flops = (desc->flops > 0 ? desc->flops : 0) / grid;
    per_block_bytes = (desc->bytes > 0 ? desc->bytes : 0) / grid;
    k->share = OPARA__MIN(1.0, (double)k->threads / d->sm_saturation_threads);
    t_compute = per_block_flops / (sm_flops_us * k->share);
    t_memory = per_block_bytes / (thread_bytes_us * (double)k->threads);
    k->block_us = OPARA__MAX(t_compute, t_memory);
    k->demand = (t_memory > t_compute) ? per_block_bytes / t_memory : 0.0;
    s->res->ops[i].memory_bound = k->demand > 0;
    return OPARA_OK;
}

/* Arrival of every kernel at the GPU; eager: also the previous kernel issued to the same hardware
   queue (the fifo array serves as scratch: last kernel per queue). */
static void opara__sim_arrivals(opara__sim* s, opara_sim_mode mode, uint32_t* queue_pred) {
    const opara_sim_device* d = s->dev;
    uint32_t q, i, n_q = (uint32_t)d->hw_queues;
    double host = 0;
    for (q = 0; q < n_q; ++q) s->fifo[q] = UINT32_MAX;
    for (i = 0; i < s->n; ++i) {
        const opara__sim_kernel* k = &s->kernels[i];
        queue_pred[i] = UINT32_MAX;
        if (mode == OPARA_SIM_GRAPH) {
            s->ks[i].arrival = d->graph_launch_us + (double)(i + 1) * d->graph_node_us;
            continue;
        }
        host += (double)k->host_events * d->event_us;
        if (s->ks[i].blocks_left > 0) {
            host += d->launch_us;
            q = k->stream % n_q;
            queue_pred[i] = s->fifo[q];
            s->fifo[q] = i;
        }
        s->ks[i].arrival = host;
    }
    s->res->host_us = mode == OPARA_SIM_GRAPH ? d->graph_launch_us : host;
}

static opara_result opara__sim_successors(opara__sim* s, const uint32_t* deps, const uint32_t* queue_pred) {
    uint32_t i, j, total = 0;
    for (i = 0; i < s->n; ++i) {
        const opara__sim_kernel* k = &s->kernels[i];
        for (j = 0; j < k->dep_count; ++j) {
            uint32_t p = deps[k->dep_start + j];
            if (p >= i)
                return opara__fail(s->rt, OPARA_ERR_INVALID_ARGS, "sim: kernel %u depends on kernel %u, not an earlier one",
                                   i, p);
            s->succ_start[p + 1]++;
        }
        if (queue_pred[i] != UINT32_MAX) s->succ_start[queue_pred[i] + 1]++;
    }
    for (i = 0; i < s->n; ++i) s->succ_start[i + 1] += s->succ_start[i];
    total = s->succ_start[s->n];
    s->succ = (uint32_t*)opara__calloc(s->rt, total ? total : 1, sizeof(uint32_t));
    if (!s->succ) return OPARA_ERR_OUT_OF_MEMORY;
    for (i = 0; i < s->n; ++i) s->fifo[i] = s->succ_start[i];
    for (i = 0; i < s->n; ++i) {
        const opara__sim_kernel* k = &s->kernels[i];
        for (j = 0; j < k->dep_count; ++j) s->succ[s->fifo[deps[k->dep_start + j]]++] = i;
        if (queue_pred[i] != UINT32_MAX) s->succ[s->fifo[queue_pred[i]]++] = i;
        s->ks[i].unmet = k->dep_count + (queue_pred[i] != UINT32_MAX);
    }
    return OPARA_OK;
}

static void opara__sim_free_state(opara__sim* s) {
    opara__free(s->rt, s->ks);
    opara__free(s->rt, s->succ_start);
    opara__free(s->rt, s->succ);
    opara__free(s->rt, s->sms);
    opara__free(s->rt, s->groups);
    opara__free(s->rt, s->free_groups);
    opara__free(s->rt, s->sm_groups);
    opara__free(s->rt, s->memory.items);
    opara__free(s->rt, s->ready);
    opara__free(s->rt, s->fifo);
    opara__free(s->rt, s->dirty);
    opara__free(s->rt, s->is_dirty);
    opara__free(s->rt, s->fit);
    opara__free(s->rt, s->take);
}

static opara_result opara__sim_alloc_state(opara__sim* s) {
    size_t n = s->n ? s->n : 1, n_sm = (size_t)s->dev->sm_count, i;
    opara_runtime* rt = s->rt;
    s->ks = (opara__sim_kstate*)opara__calloc(rt, n, sizeof *s->ks);
    s->succ_start = (uint32_t*)opara__calloc(rt, n + 1, sizeof(uint32_t));
    s->sms = (opara__sim_sm*)opara__calloc(rt, n_sm, sizeof *s->sms);
    s->ready = (opara__sim_ready*)opara__calloc(rt, n, sizeof *s->ready);
    s->fifo = (uint32_t*)opara__calloc(rt, OPARA__MAX(n, (size_t)s->dev->hw_queues), sizeof(uint32_t));
    s->dirty = (uint32_t*)opara__calloc(rt, 2 * n_sm, sizeof(uint32_t));
    s->is_dirty = (uint8_t*)opara__calloc(rt, n_sm, 1);
    s->fit = (uint32_t*)opara__calloc(rt, n_sm, sizeof(uint32_t));
    s->take = (uint32_t*)opara__calloc(rt, n_sm, sizeof(uint32_t));
    s->sm_groups = (uint32_t*)opara__calloc(rt, n_sm * (size_t)s->dev->max_blocks_per_sm, sizeof(uint32_t));
    s->res->ops = (opara_sim_op_time*)opara__calloc(rt, n, sizeof *s->res->ops);
    for (i = 0; s->sms && i < n_sm; ++i) {
        s->sms[i].rate = 1.0;
        s->sms[i].next_finish = OPARA__SIM_INF;
    }
    if (!s->ks || !s->succ_start || !s->sms || !s->ready || !s->fifo || !s->dirty || !s->is_dirty || !s->fit ||
        !s->take || !s->sm_groups || !s->res->ops)
        return OPARA_ERR_OUT_OF_MEMORY;
    return OPARA_OK;
}

/* ---- the event loop -------------------------------------------------------------------------- */

static double opara__sim_next_memory_time(const opara__sim* s) {
    if (s->memory.size == 0) return OPARA__SIM_INF;
    return s->now + (s->groups[s->memory.items[0]].finish - s->vclock) / s->rate;
}

static opara_result opara__sim_step(opara__sim* s) {
    double t_ready = s->n_ready ? s->ready[0].time : OPARA__SIM_INF;
    double t_compute = OPARA__SIM_INF;
    double t_memory = opara__sim_next_memory_time(s);
    double t;
    uint32_t i, n_sm = (uint32_t)s->dev->sm_count;
    opara_result r;
    for (i = 0; i < n_sm; ++i) t_compute = OPARA__MIN(t_compute, s->sms[i].next_finish);
    t = OPARA__MIN(t_ready, OPARA__MIN(t_compute, t_memory));
    if (t < s->now) t = s->now;
    s->vclock += s->rate * (t - s->now);
    if (t_memory <= t) s->vclock = OPARA__MAX(s->vclock, s->groups[s->memory.items[0]].finish);
    s->now = t;
    for (i = 0; t_compute <= t && i < n_sm; ++i)
        if (s->sms[i].next_finish <= t && (r = opara__sim_sm_finish_due(s, i)) != OPARA_OK) return r;
    while (s->memory.size && s->groups[s->memory.items[0]].finish <= s->vclock)
        if ((r = opara__sim_group_finish(s, opara__sim_heap_pop(s, &s->memory))) != OPARA_OK) return r;
    if (s->memory.size == 0) s->demand = 0; /* no drift from repeated sums */
    while (s->n_ready && s->ready[0].time <= s->now) opara__sim_kernel_ready(s, opara__sim_ready_pop(s).kernel);
    if ((r = opara__sim_dispatch(s)) != OPARA_OK) return r;
    s->rate = s->demand > s->bandwidth ? s->bandwidth / s->demand : 1.0;
    return OPARA_OK;
}

static opara_result opara__sim_loop(opara__sim* s) {
    uint32_t i;
    opara_result r;
    for (i = 0; i < s->n; ++i)
        if (s->ks[i].unmet == 0) opara__sim_ready_later(s, i);
    while (s->n_ready || s->n_running || s->memory.size) {
        if ((r = opara__sim_step(s)) != OPARA_OK) return r;
    }
    if (s->fifo_head != s->fifo_tail) return opara__fail(s->rt, OPARA_ERR_INTERNAL, "sim: kernels left undispatched");
    return OPARA_OK;
}

static void opara__sim_summarize(opara__sim* s) {
    opara_sim_result* r = s->res;
    uint32_t i;
    double end = 0;
    for (i = 0; i < s->n; ++i) {
        end = OPARA__MAX(end, r->ops[i].end_us);
        if (r->ops[i].stream + 1 > r->n_streams) r->n_streams = r->ops[i].stream + 1;
    }
    r->makespan_us = end;
    r->sm_busy = end > 0 ? s->busy_total / (end * s->dev->sm_count) : 0.0;
}

OPARA__PRIVATE opara_result opara__sim_run(opara_runtime* rt, const opara_sim_device* dev, opara_sim_mode mode,
                                          const opara__sim_kernel* kernels, uint32_t n, const uint32_t* deps,
                                          opara_sim_result* out) {
    opara__sim s;
    uint32_t* queue_pred;
    uint32_t i;
    opara_result r;
    if (!out) return OPARA_ERR_INVALID_ARGS;
    memset(out, 0, sizeof *out);
    if (!dev || (n > 0 && !kernels)) return opara__fail(rt, OPARA_ERR_INVALID_ARGS, "sim: NULL device or kernels");
    if ((r = opara__sim_check_device(rt, dev)) != OPARA_OK) return r;
    memset(&s, 0, sizeof s);
    s.rt = rt;
    s.dev = dev;
    s.kernels = kernels;
    s.n = n;
    s.res = out;
    s.rate = 1.0;
    s.bandwidth = dev->mem_gbps * 1e3;
    s.head_scanned = UINT32_MAX;
    out->device = *dev;
    out->mode = mode;
    out->n_ops = n;
    r = opara__sim_alloc_state(&s);
    queue_pred = (uint32_t*)opara__calloc(rt, n ? n : 1, sizeof(uint32_t));
    if (r == OPARA_OK && !queue_pred) r = OPARA_ERR_OUT_OF_MEMORY;
    for (i = 0; r == OPARA_OK && i < n; ++i) r = opara__sim_kernel_setup(&s, i);
    if (r == OPARA_OK) {
        opara__sim_arrivals(&s, mode, queue_pred);
        r = opara__sim_successors(&s, deps, queue_pred);
    }
    if (r == OPARA_OK) r = opara__sim_sample(&s);
    if (r == OPARA_OK) r = opara__sim_loop(&s);
    if (r == OPARA_OK) opara__sim_summarize(&s);
    opara__free(rt, queue_pred);
    opara__sim_free_state(&s);
    if (r == OPARA_ERR_OUT_OF_MEMORY) opara__fail(rt, r, "sim: out of memory (%u kernels)", n);
    if (r != OPARA_OK) opara_sim_result_free(rt, out);
    return r;
}

OPARADEF void opara_sim_result_free(opara_runtime* rt, opara_sim_result* result) {
    if (!result) return;
    opara__free(rt, result->ops);
    opara__free(rt, result->sample_us);
    opara__free(rt, result->busy_sms);
    memset(result, 0, sizeof *result);
}

/* ---- plans ----------------------------------------------------------------------------------- */

static void opara__sim_plan_kernel(const opara__plan* plan, const opara__op_desc* descs, uint32_t pos,
                                   const uint32_t* last_on_stream, opara__sim_kernel* k, uint32_t* deps,
                                   uint32_t* n_deps) {
    uint32_t node = plan->order[pos], s = plan->stream[node], w;
    memset(k, 0, sizeof *k);
    if (descs) k->desc = descs[node];
    else k->desc.kernel_less = 1;
    k->stream = s;
    k->dep_start = *n_deps;
    if (last_on_stream[s] != UINT32_MAX) deps[(*n_deps)++] = last_on_stream[s];
    for (w = plan->wait_start[node]; w < plan->wait_start[node + 1]; ++w) {
        uint32_t p = plan->position[plan->wait_nodes[w]];
        if (last_on_stream[s] == UINT32_MAX || p != last_on_stream[s]) deps[(*n_deps)++] = p;
    }
    k->dep_count = *n_deps - k->dep_start;
    k->host_events = (plan->wait_start[node + 1] - plan->wait_start[node]) + (plan->records_event[node] ? 1u : 0u);
    if (last_on_stream[s] == UINT32_MAX && plan->stream_fork[s]) k->host_events++; /* wait on the fork event */
    if (pos == 0) k->host_events++;                                                 /* record the fork event */
}

OPARA__PRIVATE opara_result opara__sim_plan(opara_runtime* rt, const opara_sim_device* dev, opara_sim_mode mode,
                                           const opara__plan* plan, const opara__op_desc* descs,
                                           opara_sim_result* out) {
    opara__sim_kernel* kernels;
    uint32_t *deps, *last_on_stream, pos, n_deps = 0, n;
    size_t dep_cap;
    opara_result r;
    if (!out) return OPARA_ERR_INVALID_ARGS;
    memset(out, 0, sizeof *out);
    if (!plan) return opara__fail(rt, OPARA_ERR_INVALID_ARGS, "sim: NULL plan");
    n = plan->n_nodes;
    if (!opara__add_size(n, plan->wait_start[n], &dep_cap)) return opara__fail(rt, OPARA_ERR_OUT_OF_MEMORY, "sim: plan too big");
    kernels = (opara__sim_kernel*)opara__calloc(rt, n ? n : 1, sizeof *kernels);
    deps = (uint32_t*)opara__calloc(rt, dep_cap ? dep_cap : 1, sizeof(uint32_t));
    last_on_stream = (uint32_t*)opara__calloc(rt, plan->n_streams ? plan->n_streams : 1, sizeof(uint32_t));
    if (!kernels || !deps || !last_on_stream) {
        r = opara__fail(rt, OPARA_ERR_OUT_OF_MEMORY, "sim: out of memory for %u ops", n);
    } else {
        memset(last_on_stream, 0xff, (plan->n_streams ? plan->n_streams : 1) * sizeof(uint32_t));
        for (pos = 0; pos < n; ++pos) {
            opara__sim_plan_kernel(plan, descs, pos, last_on_stream, &kernels[pos], deps, &n_deps);
            last_on_stream[kernels[pos].stream] = pos;
        }
        r = opara__sim_run(rt, dev, mode, kernels, n, deps, out);
    }
    opara__free(rt, kernels);
    opara__free(rt, deps);
    opara__free(rt, last_on_stream);
    return r;
}

/* ---- devices --------------------------------------------------------------------------------- */

OPARA__PRIVATE void opara__sim_device_limits(const opara_sim_device* dev, opara__device* out) {
    memset(out, 0, sizeof *out);
    out->name = dev->name;
    out->sms = (uint32_t)dev->sm_count;
    out->max_threads_per_block = (uint32_t)dev->max_threads_per_block;
    out->max_threads_per_sm = (uint32_t)dev->max_threads_per_sm;
    out->max_regs_per_block = (uint32_t)dev->max_regs_per_sm;
    out->max_regs_per_sm = (uint32_t)dev->max_regs_per_sm;
    out->max_smem_per_block = (uint32_t)dev->max_smem_per_block;
    out->max_smem_per_sm = (uint32_t)dev->max_smem_per_sm;
    out->max_blocks_per_sm = (uint32_t)dev->max_blocks_per_sm;
    out->peak_flops = dev->peak_gflops * 1e9;
    out->bandwidth = dev->mem_gbps * 1e9;
}

/* Calibration of the timing model per preset (the SM limits, peak and bandwidth are the
   scheduler's specification presets). See docs/SIMULATOR.md for where each number comes from. */
typedef struct opara__sim_calibration {
    const char* name;
    int32_t sm_saturation_threads;
    double mem_saturation, launch_us, event_us, graph_launch_us, graph_node_us, kernel_gap_us;
} opara__sim_calibration;

static const opara__sim_calibration opara__sim_calibrations[] = {
    /* sm_saturation_threads = 4 x FP32 lanes per SM (Little's law for a 4-cycle FMA pipe):
       64 lanes on Turing, Volta, GA100; 128 on Hopper and GA10B (Orin) */
    {"rtx2080s", 256, 0.25, 4.0, 1.5, 4.0, 0.5, 1.0},
    {"v100", 256, 0.25, 4.0, 1.5, 4.0, 0.5, 1.0},
    {"a100", 256, 0.25, 4.0, 1.5, 4.0, 0.5, 1.0},
    {"h100", 512, 0.25, 3.0, 1.0, 3.0, 0.4, 0.8},
    {"orin", 512, 0.25, 8.0, 3.0, 8.0, 1.0, 2.0},
};

OPARADEF const char* opara_sim_device_preset_name(uint32_t index) {
    return index < OPARA__ARRAY_COUNT(opara__sim_calibrations) ? opara__sim_calibrations[index].name : NULL;
}

OPARADEF opara_result opara_sim_device_preset(const char* name, opara_sim_device* out) {
    size_t i;
    const opara__device* spec;
    if (!name || !out) return OPARA_ERR_INVALID_ARGS;
    for (i = 0; i < OPARA__ARRAY_COUNT(opara__sim_calibrations); ++i) {
        const opara__sim_calibration* c = &opara__sim_calibrations[i];
        if (strcmp(name, c->name) != 0) continue;
        spec = opara__device_preset(name);
        if (!spec) return OPARA_ERR_NOT_FOUND;
        memset(out, 0, sizeof *out);
        opara__format(out->name, sizeof out->name, "%s", c->name);
        out->sm_count = (int32_t)spec->sms;
        out->max_threads_per_sm = (int32_t)spec->max_threads_per_sm;
        out->max_regs_per_sm = (int32_t)spec->max_regs_per_sm;
        out->max_smem_per_sm = (int32_t)spec->max_smem_per_sm;
        out->max_blocks_per_sm = (int32_t)spec->max_blocks_per_sm;
        out->max_threads_per_block = (int32_t)spec->max_threads_per_block;
        out->max_smem_per_block = (int32_t)spec->max_smem_per_block;
        out->peak_gflops = spec->peak_flops / 1e9;
        out->mem_gbps = spec->bandwidth / 1e9;
        out->sm_saturation_threads = c->sm_saturation_threads;
        out->mem_saturation = c->mem_saturation;
        out->launch_us = c->launch_us;
        out->event_us = c->event_us;
        out->graph_launch_us = c->graph_launch_us;
        out->graph_node_us = c->graph_node_us;
        out->kernel_gap_us = c->kernel_gap_us;
        out->hw_queues = 8;
        return OPARA_OK;
    }
    return OPARA_ERR_NOT_FOUND;
}

typedef struct opara__sim_field {
    const char* key;
    int is_int;
    size_t offset;
} opara__sim_field;

#define OPARA__SIM_INT(f) {#f, 1, offsetof(opara_sim_device, f)}
#define OPARA__SIM_DBL(f) {#f, 0, offsetof(opara_sim_device, f)}
static const opara__sim_field opara__sim_fields[] = {
    OPARA__SIM_INT(sm_count), OPARA__SIM_INT(max_threads_per_sm), OPARA__SIM_INT(max_regs_per_sm),
    OPARA__SIM_INT(max_smem_per_sm), OPARA__SIM_INT(max_blocks_per_sm), OPARA__SIM_INT(max_threads_per_block),
    OPARA__SIM_INT(max_smem_per_block), OPARA__SIM_INT(sm_saturation_threads), OPARA__SIM_DBL(peak_gflops), OPARA__SIM_DBL(mem_gbps),
    OPARA__SIM_DBL(mem_saturation), OPARA__SIM_DBL(launch_us), OPARA__SIM_DBL(event_us),
    OPARA__SIM_DBL(graph_launch_us), OPARA__SIM_DBL(graph_node_us), OPARA__SIM_DBL(kernel_gap_us),
    OPARA__SIM_INT(hw_queues),
};
#undef OPARA__SIM_INT
#undef OPARA__SIM_DBL

/* Parses a decimal number (optional sign, digits, fraction, exponent) that fills [p, end). */
static int opara__sim_parse_number(const char* p, const char* end, double* out) {
    char buf[64];
    char* stop = NULL;
    size_t len = (size_t)(end - p);
    if (len == 0 || len >= sizeof buf) return 0;
    memcpy(buf, p, len);
    buf[len] = 0;
    *out = strtod(buf, &stop);
    return stop == buf + len && *out == *out && *out < 1e300 && *out > -1e300;
}

static opara_result opara__sim_set_field(opara_runtime* rt, opara_sim_device* out, const char* key, size_t key_len,
                                         const char* val, const char* val_end, uint32_t line) {
    size_t i;
    double v;
    if (key_len == 4 && memcmp(key, "base", 4) == 0) {
        char name[32];
        if ((size_t)(val_end - val) >= sizeof name) return opara__fail(rt, OPARA_ERR_NOT_FOUND, "sim device line %u: unknown base", line);
        memcpy(name, val, (size_t)(val_end - val));
        name[val_end - val] = 0;
        if (opara_sim_device_preset(name, out) != OPARA_OK)
            return opara__fail(rt, OPARA_ERR_NOT_FOUND, "sim device line %u: unknown base '%s'", line, name);
        return OPARA_OK;
    }
    if (key_len == 4 && memcmp(key, "name", 4) == 0) {
        if ((size_t)(val_end - val) >= sizeof out->name)
            return opara__fail(rt, OPARA_ERR_LIMIT_EXCEEDED, "sim device line %u: name longer than %u bytes", line,
                               (unsigned)sizeof out->name - 1);
        memset(out->name, 0, sizeof out->name);
        memcpy(out->name, val, (size_t)(val_end - val));
        return OPARA_OK;
    }
    for (i = 0; i < OPARA__ARRAY_COUNT(opara__sim_fields); ++i) {
        const opara__sim_field* f = &opara__sim_fields[i];
        if (strlen(f->key) != key_len || memcmp(f->key, key, key_len) != 0) continue;
        if (!opara__sim_parse_number(val, val_end, &v))
            return opara__fail(rt, OPARA_ERR_INVALID_ARGS, "sim device line %u: '%s' needs a number", line, f->key);
        if (f->is_int) {
            if (v != floor(v) || v < 0 || v > 2147483647.0)
                return opara__fail(rt, OPARA_ERR_INVALID_ARGS, "sim device line %u: '%s' needs a non-negative integer",
                                   line, f->key);
            *(int32_t*)(void*)((char*)out + f->offset) = (int32_t)v;
        } else {
            *(double*)(void*)((char*)out + f->offset) = v;
        }
        return OPARA_OK;
    }
    return opara__fail(rt, OPARA_ERR_NOT_FOUND, "sim device line %u: unknown key '%.*s'", line, (int)key_len, key);
}

static const char* opara__sim_trim_start(const char* p, const char* end) {
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\r')) ++p;
    return p;
}

static const char* opara__sim_trim_end(const char* start, const char* p) {
    while (p > start && (p[-1] == ' ' || p[-1] == '\t' || p[-1] == '\r')) --p;
    return p;
}

OPARADEF opara_result opara_sim_device_parse(opara_runtime* rt, const char* text, size_t len, opara_sim_device* out) {
    const char* p = text;
    const char* end = text + len;
    uint32_t line = 0;
    opara_sim_device dev;
    opara_result r;
    if (!out || (!text && len > 0)) return OPARA_ERR_INVALID_ARGS;
    memset(&dev, 0, sizeof dev);
    dev.hw_queues = 8;
    dev.mem_saturation = 0.25;
    while (p < end) {
        const char* eol = (const char*)memchr(p, '\n', (size_t)(end - p));
        const char *hash, *eq, *key, *key_end, *val, *val_end;
        if (!eol) eol = end;
        ++line;
        hash = (const char*)memchr(p, '#', (size_t)(eol - p));
        val_end = hash ? hash : eol;
        key = opara__sim_trim_start(p, val_end);
        p = eol < end ? eol + 1 : end;
        if (key == val_end) continue;
        eq = (const char*)memchr(key, '=', (size_t)(val_end - key));
        if (!eq) return opara__fail(rt, OPARA_ERR_INVALID_ARGS, "sim device line %u: expected 'key = value'", line);
        key_end = opara__sim_trim_end(key, eq);
        val = opara__sim_trim_start(eq + 1, val_end);
        val_end = opara__sim_trim_end(val, val_end);
        r = opara__sim_set_field(rt, &dev, key, (size_t)(key_end - key), val, val_end, line);
        if (r != OPARA_OK) return r;
    }
    if (!dev.name[0]) opara__format(dev.name, sizeof dev.name, "custom");
    if ((r = opara__sim_check_device(rt, &dev)) != OPARA_OK) return r;
    *out = dev;
    return OPARA_OK;
}

OPARADEF size_t opara_sim_device_format(const opara_sim_device* dev, char* dst, size_t cap) {
    size_t i, len = 0;
    char line[128];
    if (!dev) return 0;
    for (i = 0; i <= OPARA__ARRAY_COUNT(opara__sim_fields); ++i) {
        size_t n;
        if (i == 0) {
            n = opara__format(line, sizeof line, "name = %s\n", dev->name);
        } else {
            const opara__sim_field* f = &opara__sim_fields[i - 1];
            const char* field = (const char*)dev + f->offset;
            if (f->is_int) n = opara__format(line, sizeof line, "%s = %d\n", f->key, (int)*(const int32_t*)(const void*)field);
            else n = opara__format(line, sizeof line, "%s = %.17g\n", f->key, *(const double*)(const void*)field);
        }
        if (dst && len + n < cap) memcpy(dst + len, line, n + 1);
        else if (dst && cap > 0 && len < cap) dst[len] = 0;
        len += n;
    }
    return len;
}

#ifndef OPARA_NO_STDIO
#include <stdio.h>
OPARADEF opara_result opara_sim_device_load(opara_runtime* rt, const char* name_or_path, opara_sim_device* out) {
    FILE* f;
    char* text;
    long size;
    opara_result r;
    if (!name_or_path || !out) return OPARA_ERR_INVALID_ARGS;
    if (opara_sim_device_preset(name_or_path, out) == OPARA_OK) return OPARA_OK;
    f = fopen(name_or_path, "rb");
    if (!f) return opara__fail(rt, OPARA_ERR_NOT_FOUND, "sim device '%s': not a preset and not a readable file", name_or_path);
    if (fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 || size > (1 << 20) || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return opara__fail(rt, OPARA_ERR_IO, "sim device '%s': cannot size the file (or it is over 1 MiB)", name_or_path);
    }
    text = (char*)opara__alloc(rt, (size_t)size + 1);
    if (!text) {
        fclose(f);
        return opara__fail(rt, OPARA_ERR_OUT_OF_MEMORY, "sim device '%s': out of memory", name_or_path);
    }
    r = fread(text, 1, (size_t)size, f) == (size_t)size ? OPARA_OK : OPARA_ERR_IO;
    fclose(f);
    if (r != OPARA_OK) opara__fail(rt, r, "sim device '%s': read failed", name_or_path);
    else r = opara_sim_device_parse(rt, text, (size_t)size, out);
    opara__free(rt, text);
    return r;
}
#endif

/* ---- Chrome trace ---------------------------------------------------------------------------- */

static void opara__sim_json_string(const char* s, void (*write)(const char*, size_t, void*), void* user) {
    char buf[8];
    write("\"", 1, user);
    for (; *s; ++s) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            buf[0] = '\\';
            buf[1] = (char)c;
            write(buf, 2, user);
        } else if (c < 0x20) {
            write(buf, opara__format(buf, sizeof buf, "\\u%04x", c), user);
        } else {
            write(s, 1, user);
        }
    }
    write("\"", 1, user);
}

OPARADEF void opara_sim_trace_write(const opara_sim_result* result, const char* const* op_names,
                                    void (*write)(const char* text, size_t len, void* user), void* user) {
    char buf[256];
    uint32_t i;
    if (!result || !write) return;
    write(buf, opara__format(buf, sizeof buf,
                             "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n"
                             "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"args\":{\"name\":\"SIMULATED %s (%s)\"}}",
                             result->device.name, result->mode == OPARA_SIM_EAGER ? "eager" : "graph"), user);
    for (i = 0; i < result->n_streams; ++i)
        write(buf, opara__format(buf, sizeof buf,
                                 ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":%u,\"args\":{\"name\":\"stream %u\"}}",
                                 i, i), user);
    for (i = 0; i < result->n_ops; ++i) {
        const opara_sim_op_time* o = &result->ops[i];
        char fallback[32];
        if (o->blocks == 0) continue;
        opara__format(fallback, sizeof fallback, "op%u", i);
        write(",\n{\"name\":", 10, user);
        opara__sim_json_string(op_names && op_names[i] ? op_names[i] : fallback, write, user);
        write(buf, opara__format(buf, sizeof buf,
                                 ",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":1,\"tid\":%u,\"ts\":%.3f,\"dur\":%.3f,"
                                 "\"args\":{\"ready_us\":%.3f,\"blocks\":%u}}",
                                 o->memory_bound ? "memory" : "compute", o->stream, o->start_us, o->end_us - o->start_us,
                                 o->ready_us, o->blocks), user);
    }
    for (i = 0; i < result->n_samples; ++i)
        write(buf, opara__format(buf, sizeof buf,
                                 ",\n{\"name\":\"busy SMs\",\"ph\":\"C\",\"pid\":1,\"ts\":%.3f,\"args\":{\"busy\":%u}}",
                                 result->sample_us[i], result->busy_sms[i]), user);
    write("\n]}\n", 4, user);
}
/* ==== END src/opara_sim.c ==== */

#endif /* OPARA_IMPLEMENTATION */

/*
MIT License

Copyright (c) 2026 The opara.h authors

Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the "Software"), to deal
in the Software without restriction, including without limitation the rights
to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
*/
