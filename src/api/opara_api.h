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
   | OPARA_NO_MMAP          | off              | copy .opara files into memory instead of mapping them       |
   | OPARA_NO_CUDA          | off              | compile the CUDA backend out: AUTO runs on the CPU, a CUDA  |
   |                        |                  | session fails with OPARA_ERR_NO_BACKEND                     |
   | OPARA_NO_ONNX          | off              | compile ONNX import out: opara_model_load_onnx_* fail with  |
   |                        |                  | OPARA_ERR_UNSUPPORTED                                       |
   | OPARA_NO_SIM           | off              | compile the simulator out: opara_sim_* fail with            |
   |                        |                  | OPARA_ERR_UNSUPPORTED (no presets)                          |
   | OPARA_NVRTC_SOURCE     | off              | compile in the kernel sources for NVRTC (use_nvrtc), from   |
   |                        |                  | the companion opara_nvrtc.h kept beside opara.h             |
   | OPARA_NO_COLD_O1       | off              | under GCC -O2/-O3 the code that runs once per model or      |
   |                        |                  | session (import, planning, set-up) is compiled at -O1, for  |
   |                        |                  | a compile twice as fast; define to compile it like the rest |
   | OPARA_CUDA_SYSTEM_PREFIX | ""             | prefix (a sysroot) of the fixed system places the CUDA      |
   |                        |                  | library search looks in (opara_cuda.h)                      |
   | OPARA_MAX_DIMS         | 8                | maximum tensor rank (the .opara format stores at most 8)    |
   | OPARA_MAX_TENSORS      | 1048576          | limits a model file may not exceed (hostile-input guards);  |
   | OPARA_MAX_NODES        | 1048576          | exceeding one gives OPARA_ERR_LIMIT_EXCEEDED                |
   | OPARA_MAX_ATTRS        | 64               |   attributes per node                                       |
   | OPARA_MAX_NODE_IO      | 4096             |   inputs (and outputs) per node                             |
   | OPARA_MAX_ATTR_ELEMS   | 65536            |   elements of one INTS/FLOATS attribute                     |
   | OPARA_MAX_NAME         | 4096             |   bytes of one name or string attribute                     |
   | OPARA_MAX_STRINGS      | 4194304          |   entries of the string table                               |
   | OPARA_MAX_MODEL_BYTES  | 2^40 (64-bit)    |   bytes of one model file                                   |
   A part compiled out (OPARA_NO_CUDA, _ONNX, _SIM) keeps its declarations, so a program builds the
   same either way; its calls fail cleanly, with a detail (opara_runtime_last_error) that names the
   macro. `make header` also writes build/opara_cpu.h: this header with OPARA_NO_CUDA defined and the
   CUDA backend left out.

   ENVIRONMENT VARIABLES (read at session creation; override the desc's library paths)
   OPARA_CUDA_DRIVER, OPARA_CUBLAS, OPARA_CUDNN, OPARA_NVRTC: path of the library to dlopen
   instead of the default search list.

   ERRORS
   Every fallible call returns an opara_result: OPARA_OK (0) or a negative code grouped by area
   (-1.. general, -100.. model format, -200.. ONNX import, -300.. planning, -400.. backends).
   opara_result_string() names any code. The object the call worked on keeps a detail string
   that says what was wrong and where: the runtime (opara_runtime_last_error) for loading models
   and creating builders and sessions (the object does not exist then), the builder
   (opara_builder_last_error) and the session (opara_session_last_error) for calls on them. A
   session's failures never touch the runtime's detail, so sessions may fail on other threads.
   Models are immutable and keep none. Malformed input never aborts: it returns an error.

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
   through it, and what the CUDA backend loads once for all its sessions (the driver, cuBLAS,
   cuDNN, the device's retained primary context: from its first CUDA session or AUTO choice until
   opara_runtime_destroy). A process normally has one runtime. Use one runtime from one thread at
   a time for loading models and creating sessions (make one per thread if several threads do
   that); its sessions may meanwhile be run and destroyed on any other threads (the allocator
   hook must then be thread-safe). Models are immutable once loaded and may be shared by sessions
   on any thread. Destroy models and sessions before the runtime they came from (models and
   sessions in any order: a session keeps its model alive, see opara_model_destroy). */
typedef struct opara_runtime opara_runtime;

typedef struct opara_runtime_desc {
    opara_allocator allocator; /* zero: OPARA_MALLOC/OPARA_FREE */
    opara_logger logger;       /* zero: silent */
    int verify_content_hash;   /* 1: every .opara load (file or memory) recomputes the header's content hash over
                                  the whole image and refuses a mismatch with OPARA_ERR_CORRUPT (flipped weight
                                  bytes); this reads every weight byte once at load. 0 (default): structure,
                                  offsets, sizes and types are checked, weight values are not (docs/FORMAT.md) */
} opara_runtime_desc;

/* desc may be NULL for defaults. On failure *out is NULL. */
OPARADEF opara_result opara_runtime_create(const opara_runtime_desc* desc, opara_runtime** out);
OPARADEF void opara_runtime_destroy(opara_runtime* runtime);
/* Detail of the last failing call made on this runtime ("" if none): a model load (.opara or ONNX), a
   builder creation, a session creation (the AUTO backend's fallback included). Calls on a builder or
   a session report to that object and leave this one as it was. Valid until the runtime's next call. */
OPARADEF const char* opara_runtime_last_error(const opara_runtime* runtime);

/* ---- models ------------------------------------------------------------------------------------
   A model is the immutable graph of a .opara file (docs/FORMAT.md): tensors, operator nodes,
   graph inputs and outputs, and the constant weights. Loading validates everything (offsets,
   sizes, indices, enums, data types against shapes, alignment, names, acyclicity, attribute
   types, data types and shapes through the graph) and fails with a specific code and a
   detail string (opara_runtime_last_error: the model does not exist then) naming what is wrong
   and where. A loaded model is immutable and shared across threads, so it keeps no detail of its
   own: its queries fail with a code only (NULL or an index out of range). */
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
    uint64_t content_hash;   /* FNV-1a 64 over the words of the image after the header (docs/FORMAT.md); 0 if not from a file */
    int zero_copy;           /* 1: constants point into the caller's buffer or the file mapping */
    int64_t source_opset;    /* ONNX opset the model was converted from, 0 if unknown */
    const char* producer;    /* "" if unknown */
} opara_model_stats;

#ifndef OPARA_NO_STDIO
/* Loads a .opara file. The file is memory-mapped where the OS allows (POSIX mmap, Win32
   MapViewOfFile) and the weights are used in place; otherwise (or with OPARA_NO_MMAP) it is read
   into an aligned buffer. Only regular files load: a directory, device or FIFO is OPARA_ERR_IO, and
   so is a file whose length changes while it is read. A mapped file must not be truncated in
   place while the model lives (replace it by rename instead); see docs/FORMAT.md. */
OPARADEF opara_result opara_model_load_file(opara_runtime* runtime, const char* path, opara_model** out);
#endif
/* Loads a .opara image from memory without copying: constants point into `data`, which must
   stay alive and unchanged until the model is freed: opara_model_destroy and the destroy of every
   session made from it, whichever comes last. If `data` is not aligned to the file's alignment
   (64 by default), the image is copied into an aligned buffer owned by the model. */
OPARADEF opara_result opara_model_load_memory(opara_runtime* runtime, const void* data, size_t size,
                                              opara_model** out);
/* Drops the caller's handle (call it once per model; NULL is ignored). Models are reference-counted:
   each session made from the model holds a reference, so a session may outlive the model's handle
   (run it, query it and destroy it after opara_model_destroy); the model's memory (and a
   file mapping) is freed when the handle and the last such session are gone. The count is atomic:
   the handle and the sessions may be destroyed on different threads in any order. The handle is
   invalid after this call (no opara_model_* call and no new session through it). */
OPARADEF void opara_model_destroy(opara_model* model);

OPARADEF uint32_t opara_model_input_count(const opara_model* model);
OPARADEF uint32_t opara_model_output_count(const opara_model* model);
/* OPARA_ERR_INVALID_ARGS when model or out is NULL, OPARA_ERR_NOT_FOUND when index is out of range. */
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
   by finish/save (with its detail), so checking only those is enough. Node inputs may name
   tensors defined later. A builder reports to itself (opara_builder_last_error), never to the
   runtime's detail; it logs through the runtime's logger. Use it on the runtime's thread (finish
   and save validate through the runtime). */
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
/* Detail of the builder's last failing call ("" if none; "" for a NULL builder). */
OPARADEF const char* opara_builder_last_error(const opara_builder* builder);
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
   (it never waits and never races). Use one session per thread for concurrent inferences. A
   session may be created, run and destroyed on different threads; a CUDA session makes its
   context current only for the duration of each call (push/pop), so the calling thread's own
   current CUDA context is unchanged when the call returns. */
typedef struct opara_session opara_session;

typedef enum opara_backend {
    OPARA_BACKEND_AUTO = 0, /* CUDA when usable, else CPU: without a driver or device an INFO log, and on any
                               other failure to initialise the CUDA backend (bad cuda_device, a library that
                               fails or clashes, a model it cannot lower, ...) a WARN log, both
                               OPARA_LOGITEM_BACKEND_FALLBACK and saying why; opara_session_get_plan_info's
                               backend says "cpu". Running out of host memory is returned as
                               OPARA_ERR_OUT_OF_MEMORY, not fallen back from (a full device falls
                               back). OPARA_BACKEND_CUDA returns every failure as an error. */
    OPARA_BACKEND_CPU = 1,
    OPARA_BACKEND_CUDA = 2,
    OPARA_BACKEND_FORCE_U32 = 0x7fffffff
} opara_backend;

/* The arithmetic of convolutions and matrix products where a backend offers a choice. */
typedef enum opara_precision {
    OPARA_PRECISION_FP32 = 0, /* exact FP32 everywhere (the default): no TF32 or other reduced-precision
                                 math in any library call; results match the CPU backend closely */
    OPARA_PRECISION_TF32 = 1, /* CUDA on compute capability 8.0 and newer: FP32 storage, TF32 tensor-core
                                 math (operands rounded to 10 mantissa bits, FP32 accumulation) in cuDNN
                                 convolutions and cuBLAS GEMMs; elsewhere the same as FP32 */
    OPARA_PRECISION_COUNT,
    OPARA_PRECISION_FORCE_U32 = 0x7fffffff
} opara_precision;

/* "fp32", "tf32"; "?" when out of range. */
OPARADEF const char* opara_precision_name(opara_precision precision);

/* Zero means default everywhere. */
typedef struct opara_session_desc {
    opara_backend backend;           /* AUTO */
    opara_strategy strategy;         /* OPARA */
    opara_launch_order launch_order; /* the strategy's own */
    int64_t batch_size;              /* value of the symbolic batch dimension; 0: 1 */
    uint32_t threads;                /* CPU worker threads (the calling thread is one); 0: CPU cores */
    int builtin_gemm;                /* 1: do not load a BLAS, use the built-in SGEMM */
    int cpu_pin_workers;             /* CPU: 1 binds each worker thread (never the calling thread) to one
                                        CPU of the process's affinity mask (Linux, Windows; elsewhere
                                        nothing is bound); 0: not bound (a bound worker cannot leave a
                                        CPU that another busy thread holds) */
    int cpu_keep_weights;            /* CPU: 1 leaves constant Gemm/MatMul weights as the model has them
                                        (no second copy; every call packs what it reads); 0: they are
                                        repacked once at creation (plan info's packed_weight_bytes) */
    opara_logger logger;             /* zero: the runtime's logger */
    int cuda_device;                 /* CUDA device ordinal; 0 default */
    int cuda_eager;                  /* CUDA: 1 launches on the plan's streams every run instead of
                                        replaying a CUDA graph (0: capture once, replay; the
                                        SEQUENTIAL strategy then gives the sequential-graph baseline) */
    int cuda_profile;                /* CUDA: 1 profiles the model at creation (a warm-up pass, then the
                                        median of several timed passes with an event pair around every op)
                                        and plans with the measured per-op times (Alg. 2 then takes the
                                        shortest ready op first); 0: static descriptors */
    double memory_budget;            /* peak memory (the arena) as a ratio of the sequential plan's, e.g. 1.15:
                                        the OPARA strategy launches fewer branches at once and reuses memory
                                        with extra waits to stay within it (docs/SCHEDULING.md, "Memory
                                        budget"); 0: unbounded (the paper's schedule) */
    opara_precision precision;       /* FP32 (exact) */
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

/* The strings point into the session and stay valid until it is destroyed. */
typedef struct opara_plan_info {
    const char* backend;        /* "cpu" or "cuda" */
    const char* strategy;       /* "opara", "sequential", ... */
    const char* gemm;           /* which SGEMM is used, e.g. "OpenBLAS (libopenblas.so.0)", "cuBLAS" */
    const char* cuda_mode;      /* CUDA: "graph", "sequential-graph" or "eager" (after a capture fallback too); NULL on CPU */
    uint32_t n_nodes, n_streams, n_events, n_waits;
    uint32_t n_workers;         /* CPU: worker threads; CUDA: CUDA streams (plan streams that never overlap share one) */
    uint64_t peak_memory_bytes; /* the arena: all intermediate tensors at their peak */
    uint64_t no_reuse_bytes;    /* what the arena would need without reuse */
    const char* precision;      /* "fp32" or "tf32": what the session computes with */
    /* Which code served each kind of op. CUDA: conv is "cuDNN", "opara_conv2d_f32", or "cuDNN +
       opara_conv2d_f32" when some convolutions fell back (n_conv_library of n_conv ran on cuDNN; the
       log says why for the others); kernels says where our kernels came from (e.g. "NVRTC cubin sm_90",
       "embedded PTX sm_75 (driver JIT)"); libraries lists each library that serves the session with its
       version and the file mapped, "; "-separated ("CUDA driver 13.0 /usr/lib/x86_64-linux-gnu/libcuda.so.1;
       cuBLAS 13.0.2 /.../libcublas.so.13; cuDNN 9.19.0 /.../libcudnn.so.9"). CPU: conv names the
       convolution path and n_conv_library counts the convolutions on an external BLAS (gemm names it);
       kernels and libraries are "". */
    const char* conv;
    uint32_t n_conv, n_conv_library;
    const char* kernels;
    const char* libraries;
    uint64_t workspace_bytes;   /* CUDA: library workspaces (cuBLAS, cuDNN) on top of peak_memory_bytes */
    uint64_t packed_weight_bytes; /* CPU: constant weights repacked once into the GEMM's layout, kept on top of
                                     the model's own copy for the session's life; 0 on CUDA */
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

/* desc may be NULL. On failure *out is NULL and opara_runtime_last_error says why. The session holds
   a reference to `model` (see opara_model_destroy): the model may be destroyed before the session,
   which keeps it alive until opara_session_destroy. The runtime must outlive both. */
OPARADEF opara_result opara_session_create(opara_runtime* runtime, const opara_model* model,
                                           const opara_session_desc* desc, opara_session** out);
OPARADEF void opara_session_destroy(opara_session* session);
OPARADEF uint32_t opara_session_input_count(const opara_session* session);
OPARADEF uint32_t opara_session_output_count(const opara_session* session);
/* Name, dtype and concrete shape (batch resolved) of input/output `index`. OPARA_ERR_INVALID_ARGS
   when session or out is NULL, OPARA_ERR_NOT_FOUND when index is out of range (as for models). */
OPARADEF opara_result opara_session_input_info(const opara_session* session, uint32_t index, opara_tensor_info* out);
OPARADEF opara_result opara_session_output_info(const opara_session* session, uint32_t index, opara_tensor_info* out);
/* Runs one inference: copies the inputs in, runs, copies the requested outputs out (outputs may
   be NULL/0 and read with opara_session_output_data instead). Every model input must be given. */
OPARADEF opara_result opara_session_run(opara_session* session, const opara_tensor* inputs, uint32_t n_inputs,
                                        opara_tensor* outputs, uint32_t n_outputs);
/* CUDA sessions: like opara_session_run, but every tensor's data is a device pointer (a CUdeviceptr
   cast to void*) in the device's primary context, which is what the CUDA runtime API uses. Inputs and
   outputs are copied device to device on the session's stream, never through the host; the call
   returns when the outputs are written. OPARA_ERR_INVALID_ARGS on a CPU session. Outputs not given
   are not copied, and opara_session_output_data keeps the outputs of the last opara_session_run. */
OPARADEF opara_result opara_session_run_device(opara_session* session, const opara_tensor* inputs, uint32_t n_inputs,
                                               opara_tensor* outputs, uint32_t n_outputs);
/* Output `index` of the last opara_session_run, inside the session (valid until the next run or
   destroy). NULL before the first successful opara_session_run, after a failed one (its outputs may
   be half-written), for an index out of range and for a NULL session. */
OPARADEF const void* opara_session_output_data(const opara_session* session, uint32_t index);
OPARADEF opara_result opara_session_get_plan_info(const opara_session* session, opara_plan_info* out);
OPARADEF opara_result opara_session_get_run_stats(const opara_session* session, opara_run_stats* out);
/* Fills up to cap entries (one per node, in launch order); returns the node count. */
OPARADEF uint32_t opara_session_get_node_times(const opara_session* session, opara_node_time* out, uint32_t cap);
/* Detail of the session's last failing call ("" if none): runs (the backend's failures included),
   queries and writes. A session never writes the runtime's detail, and every backend logs through
   the session's logger (opara_session_desc.logger, else the runtime's). */
OPARADEF const char* opara_session_last_error(const opara_session* session);
#ifndef OPARA_NO_STDIO
/* The session's plan as Graphviz DOT: ops coloured by stream, data edges solid, event waits dashed. */
OPARADEF opara_result opara_session_write_plan_dot(const opara_session* session, const char* path);
/* The last run as a Chrome-trace/Perfetto JSON timeline, one track per worker (CPU) or stream. */
OPARADEF opara_result opara_session_write_trace(const opara_session* session, const char* path);
#endif

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

/* ==== Inspection ==================================================================================
   What a plan holds, for embedders and tools: the nodes with their launch position, stream, events
   and waits; the streams; every tensor's shape, size, storage and arena offset; the cost descriptor
   each node was planned with; CUDA kernels and their profiled times; the simulator fed from a plan
   (opara_plan_simulate in the simulator's section). A plan comes from a model, without a session or
   a device (opara_plan_create: the analytic cost model of a GPU preset), or from a live session
   (opara_session_get_plan: the plan it runs). Everything is copied out into plain structs; indices
   are the model's node and tensor indices (opara_model_node_op's `index`), and an index out of range
   is OPARA_ERR_NOT_FOUND, a NULL argument OPARA_ERR_INVALID_ARGS. */
typedef struct opara_plan opara_plan;
struct opara_sim_device; /* the simulator's device (below, opara_sim_device) */

/* The .opara file's first bytes (docs/FORMAT.md): a file that starts with them is a .opara model. */
#define OPARA_FILE_MAGIC "\x89OPR\r\n\x1a\n"
#define OPARA_FILE_MAGIC_SIZE 8

/* How Opara's Alg. 2 measures "least amount of GPU resources" (docs/SCHEDULING.md). */
typedef enum opara_plan_metric {
    OPARA_PLAN_METRIC_DEFAULT = 0,  /* SMEM */
    OPARA_PLAN_METRIC_SMEM = 1,     /* shared memory per block / per-block limit (the reference code) */
    OPARA_PLAN_METRIC_DOMINANT = 2, /* the block's largest share of an SM's threads, registers, shared memory */
    OPARA_PLAN_METRIC_TIME = 3,     /* the node's kernel time (measured or the roofline estimate), shortest first */
    OPARA_PLAN_METRIC_COUNT,
    OPARA_PLAN_METRIC_FORCE_U32 = 0x7fffffff
} opara_plan_metric;

/* Zero means default everywhere. */
typedef struct opara_plan_desc {
    opara_strategy strategy;                /* OPARA */
    opara_launch_order launch_order;        /* the strategy's own */
    int64_t batch_size;                     /* value of the symbolic batch dimension; 0: 1 */
    const struct opara_sim_device* device;  /* the GPU whose limits and peak rates the cost model and Alg. 2 use
                                               (opara_sim_device_preset / _load); NULL: the "rtx2080s" preset */
    opara_plan_metric metric;               /* SMEM */
    uint32_t stream_cap;                    /* Alg. 1: open a new stream only when none is provably idle past
                                               this many; 0: unlimited */
    int stream_cap_hard;                    /* with stream_cap: never exceed it (reuse the stream launched earliest) */
    double memory_budget;                   /* as opara_session_desc.memory_budget; 0: unbounded */
    uint32_t alignment;                     /* arena alignment of every block (a power of two); 0: 256 */
    int no_memory_sync;                     /* never add a wait just to reuse an arena block */
    int no_concat_in_place;                 /* Concat inputs get blocks of their own and are copied (by default
                                               an input that is one contiguous slice of the output is written
                                               straight into it) */
    /* Optional, both or neither, [node count] by node index: when each node is expected to start and
       end (e.g. opara_plan_simulate of a plan made with no_memory_sync). The memory plan then also
       reuses a block whose occupants end before the new writer starts. Read only during the call. */
    const double* est_start_us;
    const double* est_end_us;
    int verify;                             /* 1: prove the plan (opara_plan_verify) before returning it */
} opara_plan_desc;

/* Plans `model` without a session: shapes at the batch size, the analytic cost descriptor of every
   node for the device, then the launch order, streams, events and the arena. desc may be NULL. On
   failure *out is NULL and opara_runtime_last_error of the model's runtime says why. The plan holds
   a reference to the model (like a session). */
OPARADEF opara_result opara_plan_create(const opara_model* model, const opara_plan_desc* desc, opara_plan** out);
/* Declares the dtype and shape of a node's output for opara_plan_create_declared (finish and save
   ignore it: a model's shapes are inferred). dims may hold OPARA_DIM_BATCH. */
OPARADEF opara_result opara_builder_declare(opara_builder* builder, const char* name, opara_dtype dtype, int32_t rank,
                                            const int64_t* dims);
/* Plans the builder's graph as declared, without making a model: every tensor has the shape given
   to opara_builder_add_input, _add_constant or _declare (nothing is inferred and nothing checks that
   operators and shapes agree; an undeclared tensor has no bytes), costs come from the analytic model
   at those shapes. For studying the scheduler on graphs no backend runs, such as synthetic DAGs.
   The builder's errors (unknown names, cycles) are returned as by opara_builder_finish. */
OPARADEF opara_result opara_plan_create_declared(opara_builder* builder, const opara_plan_desc* desc, opara_plan** out);
/* A read-only view of the plan a session runs (CPU: the worker threads' streams; CUDA: the captured
   launch sequence). Read it while the session lives; free it with opara_plan_destroy (before or
   after the session). */
OPARADEF opara_result opara_session_get_plan(const opara_session* session, opara_plan** out);
/* NULL is ignored. */
OPARADEF void opara_plan_destroy(opara_plan* plan);

typedef struct opara_plan_stats {
    opara_strategy strategy;
    opara_launch_order launch_order;   /* the order actually used (a memory budget may fall back to TOPO) */
    const char* device;                /* the device model the plan was made for: the desc's device name (NULL
                                          device: "rtx2080s"); a session's plan: the preset it was planned
                                          with on the CPU, "cuda" for the CUDA backend's own device */
    uint32_t n_nodes, n_values;        /* the model's nodes and tensors */
    uint32_t n_streams;
    uint32_t n_lanes;                  /* streams that never overlap share a lane: what a CUDA session runs on */
    uint32_t n_events;                 /* nodes that record an event (fork/join events not included) */
    uint32_t n_waits;                  /* cross-stream waits of nodes (fork/join waits not included) */
    uint32_t n_cross_edges;            /* data edges between nodes on different streams */
    uint32_t n_pruned_waits;           /* waits dropped because earlier waits imply them */
    uint32_t n_forks, n_joins;
    uint32_t n_inplace, n_concat_in_place, n_views; /* tensors sharing another's bytes, by kind */
    uint32_t n_memory_waits;           /* waits added to reuse an arena block (part of n_waits) */
    uint32_t alignment;                /* of every arena block */
    uint64_t arena_bytes;              /* peak memory of the plan */
    uint64_t no_reuse_bytes;           /* the arena if no block were ever reused */
    uint64_t budget_bytes;             /* with a memory budget: the arena budget, else 0 */
    uint64_t live_bytes;               /* most bytes live at once in launch order (no arena can be smaller when
                                          the nodes run in launch order) */
    double memory_budget;              /* the ratio asked for, 0: none */
    uint64_t plan_ns;                  /* time the planner took (order, streams, sync, memory; all tries) */
    uint64_t order_ns, streams_ns, sync_ns, memory_ns; /* its phases (the last try) */
} opara_plan_stats;

OPARADEF opara_result opara_plan_get_stats(const opara_plan* plan, opara_plan_stats* out);

/* One node of the plan. Before launching it on its stream, the backend waits on the events of the
   nodes opara_plan_node_wait lists; with records_event it records its own event right after. */
typedef struct opara_plan_node {
    const char* op;        /* ONNX operator type, "Conv"; valid while the plan lives */
    const char* name;      /* may be "" */
    uint32_t order;        /* launch position, 0 first */
    uint32_t stream;       /* streams are numbered by first use in launch order */
    uint32_t stream_rank;  /* 1-based position on its stream */
    uint32_t lane;
    uint32_t level;        /* longest path from a source (wavefront level) */
    int records_event;
    uint32_t n_waits;
    uint32_t n_inputs, n_outputs;
} opara_plan_node;

OPARADEF uint32_t opara_plan_node_count(const opara_plan* plan);
OPARADEF opara_result opara_plan_get_node(const opara_plan* plan, uint32_t node, opara_plan_node* out);
/* The node launched at position `order`. */
OPARADEF opara_result opara_plan_node_at(const opara_plan* plan, uint32_t order, uint32_t* node);
/* Wait `k` (< n_waits) of `node`: the node whose event it waits on (always on another stream). */
OPARADEF opara_result opara_plan_node_wait(const opara_plan* plan, uint32_t node, uint32_t k, uint32_t* waits_on);
/* Tensor index of input/output `k` of `node`; -1 for an omitted optional input. */
OPARADEF opara_result opara_plan_node_input(const opara_plan* plan, uint32_t node, uint32_t k, int32_t* tensor);
OPARADEF opara_result opara_plan_node_output(const opara_plan* plan, uint32_t node, uint32_t k, int32_t* tensor);

typedef struct opara_plan_stream {
    uint32_t first_node, last_node; /* its first and last node in launch order */
    uint32_t n_nodes;
    uint32_t lane;
    int forks;                      /* waits on the origin stream's fork event before its first node */
    int joins;                      /* the origin stream waits on its last node at the end */
} opara_plan_stream;

OPARADEF uint32_t opara_plan_stream_count(const opara_plan* plan);
OPARADEF opara_result opara_plan_get_stream(const opara_plan* plan, uint32_t stream, opara_plan_stream* out);

typedef enum opara_storage {
    OPARA_STORAGE_NONE = 0,     /* no bytes */
    OPARA_STORAGE_ARENA = 1,    /* in the session's arena at `offset` */
    OPARA_STORAGE_EXTERNAL = 2  /* a graph input or a constant (or a view of one): not in the arena */
} opara_storage;

typedef enum opara_alias {
    OPARA_ALIAS_NONE = 0,    /* owns its bytes */
    OPARA_ALIAS_INPLACE = 1, /* written by its producer over the bytes of the producer's input */
    OPARA_ALIAS_CONCAT = 2,  /* a Concat input written straight into its slice of the Concat's output */
    OPARA_ALIAS_VIEW = 3     /* a kernel-less view (Reshape, Flatten, Squeeze, Unsqueeze) of its input */
} opara_alias;

/* One tensor of the plan: shape and dtype at the plan's batch size, and where its bytes live. */
typedef struct opara_plan_tensor {
    const char* name;             /* valid while the plan lives */
    opara_dtype dtype;
    int32_t rank;                 /* -1: unknown */
    int64_t dims[OPARA_MAX_DIMS];
    uint64_t bytes;
    opara_storage storage;
    uint64_t offset;              /* ARENA: offset of the first byte in the arena */
    opara_alias alias;
    int32_t alias_root;           /* the tensor that owns the bytes (itself when alias is NONE) */
    uint64_t alias_offset;        /* byte offset inside alias_root */
    int32_t producer;             /* node that writes it, -1 for graph inputs and constants */
    int is_input, is_output, is_constant;
    const void* data;             /* constants: their bytes, in the model (the caller's buffer or the file
                                     mapping when the model is zero-copy); NULL for other tensors */
} opara_plan_tensor;

OPARADEF uint32_t opara_plan_tensor_count(const opara_plan* plan);
OPARADEF opara_result opara_plan_get_tensor(const opara_plan* plan, uint32_t tensor, opara_plan_tensor* out);

/* Cost class of a node: which of Alg. 2's two ready lists it joins. */
typedef enum opara_resource_class {
    OPARA_RESOURCE_COMPUTE = 0, /* compute-intensive */
    OPARA_RESOURCE_MEMORY = 1   /* memory-intensive */
} opara_resource_class;

/* What the planner knew about a node's (main) kernel: estimates unless time_measured. */
typedef struct opara_node_cost {
    uint32_t grid;            /* thread blocks */
    uint32_t block_threads;   /* threads per block */
    uint32_t regs_per_thread;
    uint32_t smem_per_block;  /* bytes */
    double flops;
    double bytes;             /* inputs + outputs + weights */
    opara_resource_class resource_class;
    int kernel_less;          /* launches nothing (views) */
    int has_info;             /* 0: no kernel data (Alg. 2 defers the node) */
    int time_measured;        /* 1: time_ms was measured by a profiling run */
    double time_ms;           /* kernel time: measured, or the roofline estimate; 0 when kernel-less */
} opara_node_cost;

/* The descriptor the plan was made with (a CUDA session's: its kernels' launch shapes, registers and
   shared memory, and measured times after profiling; opara_session_get_node_kernel has the rest). */
OPARADEF opara_result opara_plan_get_node_cost(const opara_plan* plan, uint32_t node, opara_node_cost* out);

/* Proves the plan safe: a topological launch order, every data dependency enforced by stream order
   or an event, no two unordered nodes touching overlapping arena bytes with one writing, outputs
   kept to the end. OPARA_ERR_PLAN_INVALID with the first violation in the model runtime's detail. */
OPARADEF opara_result opara_plan_verify(const opara_plan* plan);
#ifndef OPARA_NO_STDIO
/* Graphviz DOT: nodes coloured by stream, data edges solid, event waits dashed. */
OPARADEF opara_result opara_plan_write_dot(const opara_plan* plan, const char* path);
#endif

/* Most nodes of the model that can run at the same time (a maximum antichain of the DAG, exact;
   O(n^2) memory, so refused with OPARA_ERR_LIMIT_EXCEEDED above max_nodes nodes; 0: 20000). */
OPARADEF opara_result opara_model_max_width(const opara_model* model, uint32_t max_nodes, uint32_t* out);
/* The model as a .opara image in a buffer from the runtime's allocator (free it with opara_free). */
OPARADEF opara_result opara_model_save_memory(const opara_model* model, void** data, size_t* size);

/* Where a CUDA node's kernel resources come from. */
typedef enum opara_kernel_source {
    OPARA_KERNEL_NONE = 0,     /* nothing launched (views, copies the plan made unnecessary) */
    OPARA_KERNEL_DRIVER = 1,   /* our kernel: the driver's function attributes and the launch */
    OPARA_KERNEL_ESTIMATE = 2, /* a library kernel: the documented estimate */
    OPARA_KERNEL_CUPTI = 3,    /* a library kernel: CUPTI's record of the profiling run */
    OPARA_KERNEL_COPY = 4      /* a device-to-device copy */
} opara_kernel_source;

/* The main launch of one node of a CUDA session, with its time when the session was created with
   cuda_profile. */
typedef struct opara_node_kernel {
    char kernel[64];          /* our entry point, the library call, or CUPTI's kernel name */
    uint32_t grid[3], block[3];
    uint32_t regs;            /* per thread */
    uint32_t smem_static, smem_dynamic; /* bytes per block */
    uint32_t max_threads;     /* the function's limit (0 for library kernels) */
    opara_kernel_source source;
    int measured;             /* time_ms comes from the profiling runs */
    uint32_t n_runs;          /* the timed runs behind time_ms */
    double time_ms;           /* median time of the node over the runs (first to last launch, one stream) */
    double time_spread;       /* (75th - 25th percentile) / median */
} opara_node_kernel;

/* OPARA_ERR_UNSUPPORTED on a CPU session. */
OPARADEF opara_result opara_session_get_node_kernel(const opara_session* session, uint32_t node, opara_node_kernel* out);

#ifdef __cplusplus
}
#endif
#endif /* OPARA_H_INCLUDED */
