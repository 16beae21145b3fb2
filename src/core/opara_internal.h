/* Private declarations shared by the modules of src/. Nothing here is part of the API. */
#ifndef OPARA_INTERNAL_H
#define OPARA_INTERNAL_H

/* POSIX declarations (clock_gettime, mmap, dlopen) under strict -std=c99; effective when this is
   the first header of the translation unit, as it is for every file of src/ and for a
   program that includes opara.h first. */
#if !defined(_WIN32) && !defined(_POSIX_C_SOURCE) && !defined(_GNU_SOURCE) && !defined(_XOPEN_SOURCE)
#  define _POSIX_C_SOURCE 200809L
#endif

#include "../api/opara_api.h"

#include <stdarg.h>
#include <string.h>
#include <limits.h>

/* In the amalgamated opara.h every private function is static; when src/ is built as separate
   files they are ordinary functions with hidden visibility. */
#ifndef OPARA__UNUSED
#  if defined(__GNUC__) || defined(__clang__)
#    define OPARA__UNUSED __attribute__((unused))
#  else
#    define OPARA__UNUSED
#  endif
#endif
#ifndef OPARA__PRIVATE
#  if defined(OPARA__AMALGAMATED)
#    define OPARA__PRIVATE static OPARA__UNUSED
#  elif defined(__GNUC__) && !defined(_WIN32)
#    define OPARA__PRIVATE __attribute__((visibility("hidden")))
#  else
#    define OPARA__PRIVATE
#  endif
#endif
/* A private function the library itself never calls: tests and tools reach it through the
   implementation. It keeps the unused attribute so that the dead-code build of the compile matrix
   (OPARA__PRIVATE defined as plain `static`, -Wunused-function -Werror) fails on every other
   private function that nothing calls. */
#ifndef OPARA__PRIVATE_TOOL
#  if defined(OPARA__AMALGAMATED)
#    define OPARA__PRIVATE_TOOL static OPARA__UNUSED
#  elif defined(__GNUC__) && !defined(_WIN32)
#    define OPARA__PRIVATE_TOOL __attribute__((visibility("hidden")))
#  else
#    define OPARA__PRIVATE_TOOL
#  endif
#endif

#if defined(OPARA_MALLOC) != defined(OPARA_FREE)
#  error "define OPARA_MALLOC and OPARA_FREE together, or neither"
#endif

#define OPARA__ARRAY_COUNT(a) (sizeof(a) / sizeof((a)[0]))
#define OPARA__MIN(a, b) ((a) < (b) ? (a) : (b))
#define OPARA__MAX(a, b) ((a) > (b) ? (a) : (b))
#define OPARA__DEFAULT_ALIGN 64

/* Messages use C99 formats (%zu, %lld). MinGW's vsnprintf is msvcrt's unless the program asks for
   its C99 one (__USE_MINGW_ANSI_STDIO), so there the library calls MinGW's C99 one by name; MSVC's
   (the UCRT's) is C99 already. GCC checks MinGW formats as gnu_printf; clang knows only printf (C99). */
#if defined(__MINGW32__)
#  define opara__vsnprintf __mingw_vsnprintf
#else
#  define opara__vsnprintf vsnprintf
#endif
#if defined(__MINGW32__) && !defined(__clang__)
#  define OPARA__PRINTF(fmt_index, first_arg) __attribute__((format(gnu_printf, fmt_index, first_arg)))
#elif defined(__GNUC__) || defined(__clang__)
#  define OPARA__PRINTF(fmt_index, first_arg) __attribute__((format(printf, fmt_index, first_arg)))
#else
#  define OPARA__PRINTF(fmt_index, first_arg)
#endif

/* ---- errors ---------------------------------------------------------------------------------- */

#define OPARA__DETAIL_MAX 1024

typedef struct opara__errbuf {
    char text[OPARA__DETAIL_MAX];
} opara__errbuf;

/* Formats the detail of a failure into rt's error buffer, logs it at ERROR and returns code. */
OPARA__PRIVATE opara_result opara__fail(opara_runtime* rt, opara_result code, const char* fmt, ...) OPARA__PRINTF(3, 4);
OPARA__PRIVATE opara_result opara__failv(opara_runtime* rt, opara_result code, const char* fmt, va_list args);
/* Same, into buf and logged through logger: for objects that keep their own error buffer (sessions,
   builders) and for failures of a session's creation, which go to the runtime's buffer but to the
   session's logger. */
OPARA__PRIVATE opara_result opara__fail_into(opara__errbuf* buf, const opara_logger* logger, opara_result code,
                                             const char* fmt, va_list args);
OPARA__PRIVATE opara_result opara__fail_to(opara__errbuf* buf, const opara_logger* logger, opara_result code,
                                           const char* fmt, ...) OPARA__PRINTF(4, 5);
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
#if !defined(OPARA_NO_STDIO)
#  include <stdio.h>
/* fopen of a UTF-8 path on every platform (Windows: through _wfopen; NULL for a path that is not UTF-8). */
OPARA__PRIVATE FILE* opara__fopen(const char* path, const char* mode);
/* Seeks to an absolute offset; 0 on failure, also past what this platform's stdio addresses. */
OPARA__PRIVATE int opara__fseek_to(FILE* f, uint64_t offset);
/* The file's size in bytes (from its end), left positioned at its start; 0 on failure. */
OPARA__PRIVATE int opara__fsize(FILE* f, uint64_t* size);
#endif
/* FNV-1a 64-bit, for content hashes and name lookups. */
OPARA__PRIVATE uint64_t opara__hash64(const void* data, size_t size, uint64_t seed);
/* IEEE binary16 <-> binary32/64, bit-exact: f16 -> f32 is exact (subnormals, inf, NaN with its
   payload); f64 -> f16 rounds to nearest even once (so f32 -> f16 through it rounds once too),
   overflows to inf and keeps NaN a (quiet) NaN. Cast, the ONNX importer and the tools share them. */
OPARA__PRIVATE float opara__f16_to_f32(uint16_t h);
OPARA__PRIVATE uint16_t opara__f64_to_f16(double d);

/* ---- threads and atomics (pthreads or Win32) ------------------------------------------------- */

#if defined(_WIN32)
typedef struct opara__mutex { void* srw; } opara__mutex;        /* SRWLOCK */
typedef struct opara__cond { void* cv; } opara__cond;           /* CONDITION_VARIABLE */
#else
#  include <pthread.h>
typedef struct opara__mutex { pthread_mutex_t m; } opara__mutex;
typedef struct opara__cond { pthread_cond_t c; } opara__cond;
#endif

typedef void (*opara__thread_fn)(void* arg);

/* The thread's function and argument live in the handle itself, so starting a thread allocates
   nothing (every allocation goes through the runtime's hook); the handle must therefore stay at
   its address until opara__thread_join. */
#if defined(_WIN32)
typedef struct opara__thread { void* handle; opara__thread_fn fn; void* arg; } opara__thread;
#else
typedef struct opara__thread { pthread_t t; opara__thread_fn fn; void* arg; } opara__thread;
#endif

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
/* CPUs this process may run on (its affinity mask on Linux, else the online count). */
OPARA__PRIVATE int opara__cpu_count(void);
/* Binds the calling thread to the slot-th CPU (modulo their number) of the process's affinity mask;
   returns 1 when done, 0 where the platform offers no such call or it failed (nothing changed). */
OPARA__PRIVATE int opara__thread_pin_self(uint32_t slot);
/* Monotonic time in nanoseconds. */
OPARA__PRIVATE uint64_t opara__now_ns(void);

/* Sequentially consistent atomics on 32-bit ints. */
OPARA__PRIVATE int32_t opara__atomic_load(const volatile int32_t* p);
OPARA__PRIVATE void opara__atomic_store(volatile int32_t* p, int32_t v);
OPARA__PRIVATE int32_t opara__atomic_add(volatile int32_t* p, int32_t delta); /* returns the new value */
OPARA__PRIVATE int opara__atomic_cas(volatile int32_t* p, int32_t expected, int32_t desired); /* 1 if swapped */

/* ---- the runtime ----------------------------------------------------------------------------- */

/* What a backend keeps loaded for the runtime's lifetime (opara_backend_cuda.c: the CUDA driver,
   cuBLAS, cuDNN and the retained primary contexts, set up by the first CUDA session or AUTO check).
   `release` frees it at opara_runtime_destroy; the runtime never looks inside, so it calls no
   backend code by name (layers call only downward). */
typedef struct opara__runtime_ext {
    void* state;
    void (*release)(opara_runtime* rt, void* state);
} opara__runtime_ext;

struct opara_runtime {
    opara_allocator allocator;
    opara_logger logger;
    opara__errbuf error;
    opara__mutex lock;       /* guards ext: sessions of this runtime may be run and destroyed on other
                                threads while it creates another session */
    opara__runtime_ext cuda;
    int verify_content_hash; /* opara_runtime_desc.verify_content_hash */
};

#endif /* OPARA_INTERNAL_H */
