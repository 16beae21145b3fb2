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

#ifdef __cplusplus
}
#endif
#endif /* OPARA_H_INCLUDED */
/* ==== END src/opara_api.h ==== */

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
