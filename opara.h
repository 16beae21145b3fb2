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
   | OPARA_MAX_DIMS         | 8                | maximum tensor rank                                         |

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
/* opara_cuda.h - standalone declarations and run-time loader for the CUDA driver, NVRTC, cuBLAS
   and cuDNN subset used by opara.h. No CUDA SDK is needed to compile it. */
#ifndef OPARA_CUDA_H_INCLUDED
#define OPARA_CUDA_H_INCLUDED
#define OPARA_CUDA_H_VERSION 1
#endif /* OPARA_CUDA_H_INCLUDED */
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
    if (!opara__is_arena_value(g, (uint32_t)x) || m->parent[x] >= 0) return 0;
    if (opara__op_is_view(g->nodes[g->values[x].producer].op)) return 0;
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
    for (v = 0; v < g->n_outputs; ++v) m->pinned[opara__value_root(m, (uint32_t)g->outputs[v])] = 1;
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
    uint32_t i;
    if (s->state != OPARA__SEG_RETIRED || m->p->desc.no_memory_reuse) return 0;
    for (i = 0; i < s->n_facts; ++i) {
        const opara__vc_slot* f = &m->facts[s->facts + i];
        if (!opara__vc_knows(c, m->walk.k, f->stream, f->seq)) return 0;
    }
    return 1;
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

static uint32_t opara__seg_alloc(opara__mem* m, uint64_t size, const opara__vc_slot* c) {
    uint32_t run = opara__seg_find(m, size, c), id;
    if (run != UINT32_MAX) return opara__seg_take(m, run, size);
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

static void opara__mem_fact(opara__mem* m, uint32_t node) {
    uint32_t s = m->p->stream[node], q = m->p->stream_seq[node];
    if (m->stream_stamp[s] != m->stamp) {
        m->stream_stamp[s] = m->stamp;
        m->stream_fact[s] = (uint32_t)m->n_facts;
        m->facts[m->n_facts].stream = s;
        m->facts[m->n_facts++].seq = q;
    } else if (m->facts[m->stream_fact[s]].seq < q) {
        m->facts[m->stream_fact[s]].seq = q;
    }
}

/* Retires root r: its block keeps one fact per stream that touched any member. */
static opara_result opara__mem_retire(opara__mem* m, uint32_t r) {
    const opara__graph* g = m->g;
    uint32_t v, k, start;
    opara__seg* s;
    size_t need = m->n_facts + 1;
    for (v = m->member_head[r]; v != UINT32_MAX; v = m->member_next[v]) need += opara__consumer_count(g, v) + 1;
    if (need > m->facts_cap &&
        opara__grow(g->rt, (void**)&m->facts, &m->facts_cap, need, sizeof(opara__vc_slot)) != OPARA_OK)
        return OPARA_ERR_OUT_OF_MEMORY;
    m->stamp++;
    start = (uint32_t)m->n_facts;
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

/* The input whose block output y of node v can take, or -1. */
static int32_t opara__mem_inplace_source(const opara__mem* m, uint32_t v, uint32_t y, const opara__vc_slot* c) {
    const opara__graph* g = m->g;
    const opara__node* n = &g->nodes[v];
    uint32_t i, j;
    if (m->p->desc.no_inplace || m->p->desc.no_memory_reuse || !opara__inplace_op(n->op) || n->n_outputs != 1) return -1;
    if (m->parent[y] >= 0 || m->pinned[y] || m->member_head[y] != y || m->member_next[y] != UINT32_MAX) return -1;
    for (i = 0; i < n->n_inputs; ++i) {
        int32_t x = n->inputs[i];
        uint32_t reads = 0;
        if (x < 0 || !opara__is_arena_value(g, (uint32_t)x) || m->parent[x] >= 0) continue;
        if (m->pinned[x] || m->seg_of[x] == UINT32_MAX || m->retired[x]) continue;
        if (m->p->value_bytes[x] != m->p->value_bytes[y]) continue;
        for (j = 0; j < n->n_inputs; ++j) reads += n->inputs[j] >= 0 && opara__value_root(m, (uint32_t)n->inputs[j]) == (uint32_t)x;
        if (m->pending[x] != reads || !opara__mem_all_before(m, (uint32_t)x, v, c)) continue;
        return x;
    }
    return -1;
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
            /* move y from its own root into x's */
            m->member_head[y] = UINT32_MAX;
            m->pending[y] = 0;
            m->parent[y] = src;
            m->parent_off[y] = 0;
            m->p->alias_kind[y] = OPARA__ALIAS_INPLACE;
            m->p->stats.n_inplace++;
            opara__mem_add_member(m, y);
            continue;
        }
        r = opara__value_root(m, y);
        if (m->seg_of[r] != UINT32_MAX) continue; /* a Concat output allocated by an earlier part */
        m->seg_of[r] = opara__seg_alloc(m, opara__mem_align(m, m->p->value_bytes[r]), c);
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
    m.pinned = (uint8_t*)opara__calloc(rt, nv, 1);
    m.retired = (uint8_t*)opara__calloc(rt, nv, 1);
    m.stream_stamp = (uint32_t*)opara__calloc(rt, (size_t)plan->n_streams + 1, sizeof(uint32_t));
    m.stream_fact = (uint32_t*)opara__calloc(rt, (size_t)plan->n_streams + 1, sizeof(uint32_t));
    if (r == OPARA_OK && (!m.parent || !m.parent_off || !m.pending || !m.member_next || !m.member_head || !m.seg_of || !m.root_offset ||
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
