/* emu_core.c - emulated driver: global state, handles, initialisation, devices, contexts, memory, errors,
 * cuGetProcAddress and the emulator's control API (opara_emu_*). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "emu_internal.h"

emu_global G;
pthread_mutex_t emu_mu = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t emu_cv = PTHREAD_COND_INITIALIZER;
__thread int emu_tls_in_callback;

enum { GUARD = 256, ALIGN = 256, QUARANTINE_BYTES = 64 << 20 };
enum { POISON_NEW = 0xff, POISON_GUARD = 0xa5, POISON_FREED = 0xdb };

/* Public specifications (NVIDIA product pages and the compute-capability tables of the programming guide). */
static const emu_profile emu_profiles[] = {
    /* key, name, cc, SMs, threads/SM, blocks/SM, regs/SM, regs/block, smem/SM, smem/block, opt-in, reserved,
       clock kHz, mem clock kHz, bus bits, L2, integrated, memory */
    {"rtx2080super", "NVIDIA GeForce RTX 2080 SUPER", 7, 5, 48, 1024, 16, 65536, 65536, 65536, 49152, 65536, 0,
     1815000, 7751000, 256, 4194304, 0, 8ULL << 30},
    {"a100", "NVIDIA A100-PCIE-40GB", 8, 0, 108, 2048, 32, 65536, 65536, 167936, 49152, 166912, 1024, 1410000,
     1215000, 5120, 41943040, 0, 40ULL << 30},
    {"h100", "NVIDIA H100 80GB HBM3", 9, 0, 132, 2048, 32, 65536, 65536, 233472, 49152, 232448, 1024, 1980000,
     2619000, 5120, 52428800, 0, 80ULL << 30},
    {"orin", "Orin (nvgpu)", 8, 7, 16, 1536, 16, 65536, 65536, 167936, 49152, 166912, 1024, 1300000, 3200000,
     256, 4194304, 1, 32ULL << 30},
};

void emu_report(const char* fmt, ...) {
    va_list ap;
    fprintf(stderr, "opara-emu: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, " (OPARA_EMU_SEED=%llu)\n", G.seed);
}

long long emu_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Exported for the library fakes' first-use costs (emu_lib.h). */
EMU_API void opara_emu_sleep_us(long long us) { emu_sleep_us(us); }

void emu_sleep_us(long long us) {
    struct timespec ts;
    if (us <= 0) return;
    ts.tv_sec = (time_t)(us / 1000000);
    ts.tv_nsec = (long)(us % 1000000) * 1000L;
    while (nanosleep(&ts, &ts) != 0) {
    }
}

unsigned long long emu_mix(unsigned long long z) {
    z += 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

void* emu_xcalloc(size_t n, size_t size) { return calloc(n ? n : 1, size ? size : 1); }

int emu_grow(void** arr, size_t* cap, size_t need, size_t elem) {
    size_t c = *cap ? *cap : 8;
    void* p;
    if (need <= *cap) return 0;
    while (c < need) c *= 2;
    p = realloc(*arr, c * elem);
    if (!p) return -1;
    *arr = p;
    *cap = c;
    return 0;
}

emu_result emu_enter(void) {
    if (emu_tls_in_callback) return E_NOT_PERMITTED; /* rule 3.6: no CUDA calls from host functions */
    pthread_mutex_lock(&emu_mu);
    if (!G.initialized) {
        pthread_mutex_unlock(&emu_mu);
        return E_NOT_INITIALIZED;
    }
    return E_OK;
}

emu_result emu_leave(emu_result r) {
    pthread_mutex_unlock(&emu_mu);
    return r;
}

/* ---------------------------------------------------------------- handles */

static size_t emu_hash(const void* p) { return (size_t)emu_mix((unsigned long long)(size_t)p); }

int emu_handle_kind(const void* h) {
    size_t i;
    if (!h || !G.handle_cap) return 0;
    for (i = emu_hash(h) & (G.handle_cap - 1);; i = (i + 1) & (G.handle_cap - 1)) {
        if (G.handle_keys[i] == h) return G.handle_kinds[i];
        if (!G.handle_keys[i]) return 0;
    }
}

static void emu_handle_insert(const void* h, int kind) {
    size_t i;
    for (i = emu_hash(h) & (G.handle_cap - 1);; i = (i + 1) & (G.handle_cap - 1)) {
        if (!G.handle_keys[i] || G.handle_keys[i] == h) {
            if (!G.handle_keys[i]) G.handle_count++;
            G.handle_keys[i] = h;
            G.handle_kinds[i] = kind;
            return;
        }
    }
}

int emu_handle_add(const void* h, int kind) {
    if ((G.handle_count + 1) * 2 > G.handle_cap) { /* rehash live entries (kind -1 = deleted is dropped) */
        size_t old_cap = G.handle_cap, i, cap = old_cap ? old_cap * 2 : 1024;
        const void** old_keys = G.handle_keys;
        int* old_kinds = G.handle_kinds;
        G.handle_keys = (const void**)emu_xcalloc(cap, sizeof(void*));
        G.handle_kinds = (int*)emu_xcalloc(cap, sizeof(int));
        if (!G.handle_keys || !G.handle_kinds) return -1;
        G.handle_cap = cap;
        G.handle_count = 0;
        for (i = 0; i < old_cap; i++)
            if (old_keys[i] && old_kinds[i] > 0) emu_handle_insert(old_keys[i], old_kinds[i]);
        free(old_keys);
        free(old_kinds);
    }
    emu_handle_insert(h, kind);
    return 0;
}

void emu_handle_del(const void* h) {
    size_t i;
    if (!h || !G.handle_cap) return;
    for (i = emu_hash(h) & (G.handle_cap - 1);; i = (i + 1) & (G.handle_cap - 1)) {
        if (G.handle_keys[i] == h) {
            G.handle_kinds[i] = -1; /* tombstone: keeps probe chains intact */
            return;
        }
        if (!G.handle_keys[i]) return;
    }
}

/* Objects that in-flight work may still point to are never freed; they stay reachable from here. */
void emu_bury(void* p) {
    if (emu_grow((void**)&G.graveyard, &G.cap_graveyard, G.n_graveyard + 1, sizeof(void*)) == 0)
        G.graveyard[G.n_graveyard++] = p;
}

/* ---------------------------------------------------------------- init, errors, version */

static const char* emu_env(const char* name) {
    const char* v = getenv(name);
    return v && *v ? v : NULL;
}

/* Threads sharing out a launch's blocks: the machine's cores, at most 4 (each stream already has a worker). */
static int emu_default_block_threads(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 4 ? 4 : (int)n;
}

/* The profile named key (NULL or unknown: the default profile). */
static const emu_profile* emu_profile_find(const char* key) {
    size_t i;
    for (i = 0; key && i < sizeof emu_profiles / sizeof emu_profiles[0]; i++)
        if (strcmp(key, emu_profiles[i].key) == 0) return &emu_profiles[i];
    return &emu_profiles[0];
}

static void emu_read_config(void) {
    const char* v;
    G.profile = emu_profile_find(emu_env("OPARA_EMU_DEVICE"));
    if ((v = emu_env("OPARA_EMU_SEED")) != NULL) G.seed = strtoull(v, NULL, 0);
    else G.seed = emu_mix((unsigned long long)emu_now_ns() ^ ((unsigned long long)getpid() << 32));
    if ((v = emu_env("OPARA_EMU_FAIL_ALLOC")) != NULL) G.fail_alloc_after = atoll(v);
    if ((v = emu_env("OPARA_EMU_FAIL_CAPTURE")) != NULL) G.fail_capture = atoi(v);
    if ((v = emu_env("OPARA_EMU_FAIL_INSTANTIATE")) != NULL) G.fail_instantiate = atoi(v);
    if ((v = emu_env("OPARA_EMU_STRICT_PAGEABLE")) != NULL) G.strict_pageable = atoi(v);
    G.lib_align = (v = emu_env("OPARA_EMU_LIB_ALIGN")) != NULL ? atoll(v) : 16;
    G.lib_first_use_us = (v = emu_env("OPARA_EMU_LIB_FIRST_USE_US")) != NULL ? atoll(v) : 10000;
    G.handle_first_use_us = (v = emu_env("OPARA_EMU_HANDLE_FIRST_USE_US")) != NULL ? atoll(v) : 1000;
    G.func_first_use_us = (v = emu_env("OPARA_EMU_FUNC_FIRST_USE_US")) != NULL ? atoll(v) : 100;
    if ((v = emu_env("OPARA_EMU_GRAPH_THREADS")) != NULL) G.graph_threads = atoi(v);
    emu_exec_set_threads((v = emu_env("OPARA_EMU_BLOCK_THREADS")) != NULL ? atoi(v) : emu_default_block_threads());
    if ((v = emu_env("OPARA_EMU_HIDE")) != NULL) snprintf(G.hidden, sizeof G.hidden, "%s", v);
    if ((v = emu_env("OPARA_EMU_VERBOSE")) != NULL) G.verbose = atoi(v);
}

static int emu_driver_version_value(void) {
    const char* v = emu_env("OPARA_EMU_DRIVER_VERSION");
    return v ? atoi(v) : 13000;
}

EMU_API emu_result cuDriverGetVersion(int* version) {
    if (!version) return E_INVALID_VALUE;
    *version = G.driver_version ? G.driver_version : emu_driver_version_value();
    return E_OK;
}

static emu_ctx* emu_ctx_new(int primary) {
    emu_ctx* c = (emu_ctx*)emu_xcalloc(1, sizeof(*c));
    if (!c) return NULL;
    c->primary = primary;
    c->legacy = emu_stream_new_locked(c, 0, 0, 1);
    if (!c->legacy || emu_handle_add(c, K_CTX) != 0) return NULL;
    return c;
}

EMU_API emu_result cuInit(unsigned int flags) {
    if (emu_tls_in_callback) return E_NOT_PERMITTED;
    if (flags != 0) return E_INVALID_VALUE;
    pthread_mutex_lock(&emu_mu);
    if (!G.initialized) {
        emu_read_config();
        G.driver_version = emu_driver_version_value();
        G.next_capture_id = 1;
        G.initialized = 1;
        G.primary = emu_ctx_new(1);
        if (!G.primary) {
            G.initialized = 0;
            return emu_leave(E_OUT_OF_MEMORY);
        }
        atexit(emu_join_workers);
        if (G.verbose)
            fprintf(stderr, "opara-emu: %s (cc %d.%d), seed %llu\n", G.profile->name, G.profile->cc_major,
                    G.profile->cc_minor, G.seed);
    }
    return emu_leave(E_OK);
}

typedef struct emu_error_text {
    int code;
    const char *name, *text;
} emu_error_text;

static const emu_error_text emu_errors[] = {
    {0, "CUDA_SUCCESS", "no error"},
    {1, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {2, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {3, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {4, "CUDA_ERROR_DEINITIALIZED", "driver shutting down"},
    {100, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {101, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {200, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
    {201, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {209, "CUDA_ERROR_NO_BINARY_FOR_GPU", "no kernel image is available for execution on the device"},
    {218, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"},
    {222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION", "the provided PTX was compiled with an unsupported toolchain."},
    {400, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {401, "CUDA_ERROR_ILLEGAL_STATE", "the operation cannot be performed in the present state"},
    {402, "CUDA_ERROR_LOSSY_QUERY", "attempted introspection would be semantically lossy"},
    {500, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {600, "CUDA_ERROR_NOT_READY", "device not ready"},
    {700, "CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered"},
    {701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", "too many resources requested for launch"},
    {709, "CUDA_ERROR_CONTEXT_IS_DESTROYED", "context is destroyed"},
    {719, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"},
    {800, "CUDA_ERROR_NOT_PERMITTED", "operation not permitted"},
    {801, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported"},
    {900, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED", "operation not permitted when stream is capturing"},
    {901, "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED", "operation failed due to a previous error during capture"},
    {902, "CUDA_ERROR_STREAM_CAPTURE_MERGE", "operation would result in a merge of separate capture sequences"},
    {903, "CUDA_ERROR_STREAM_CAPTURE_UNMATCHED", "capture was not ended in the same stream as it began"},
    {904, "CUDA_ERROR_STREAM_CAPTURE_UNJOINED", "capturing stream has unjoined work"},
    {905, "CUDA_ERROR_STREAM_CAPTURE_ISOLATION",
     "dependency created on uncaptured work in another stream"},
    {906, "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT",
     "operation would make the legacy stream depend on a capturing blocking stream"},
    {907, "CUDA_ERROR_CAPTURED_EVENT", "operation not permitted on an event last recorded in a capturing stream"},
    {908, "CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD",
     "attempt to terminate a thread-local capture sequence from another thread"},
    {910, "CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE", "the graph update was not performed because it included "
                                                  "changes which violated constraints specific to instantiated graph update"},
    {999, "CUDA_ERROR_UNKNOWN", "unknown error"},
};

static const emu_error_text* emu_error_find(int code) {
    size_t i;
    for (i = 0; i < sizeof emu_errors / sizeof emu_errors[0]; i++)
        if (emu_errors[i].code == code) return &emu_errors[i];
    return NULL;
}

EMU_API emu_result cuGetErrorName(emu_result error, const char** str) {
    const emu_error_text* e = emu_error_find(error);
    if (!str) return E_INVALID_VALUE;
    *str = e ? e->name : NULL;
    return e ? E_OK : E_INVALID_VALUE;
}

/* The driver's private tables (looked up by UUID): NVRTC 13 probes them through an already loaded libcuda.so.1
 * and crashes when the symbol is missing. The emulator has none. */
EMU_API emu_result cuGetExportTable(const void** table, const void* uuid) {
    (void)uuid;
    if (table) *table = NULL;
    return E_NOT_FOUND;
}

EMU_API emu_result cuGetErrorString(emu_result error, const char** str) {
    const emu_error_text* e = emu_error_find(error);
    if (!str) return E_INVALID_VALUE;
    *str = e ? e->text : NULL;
    return e ? E_OK : E_INVALID_VALUE;
}

/* ---------------------------------------------------------------- devices */

EMU_API emu_result cuDeviceGetCount(int* count) {
    emu_result r = emu_enter();
    if (r) return r;
    if (!count) return emu_leave(E_INVALID_VALUE);
    *count = 1;
    return emu_leave(E_OK);
}

EMU_API emu_result cuDeviceGet(int* device, int ordinal) {
    emu_result r = emu_enter();
    if (r) return r;
    if (!device) return emu_leave(E_INVALID_VALUE);
    if (ordinal != 0) return emu_leave(E_INVALID_DEVICE);
    *device = 0;
    return emu_leave(E_OK);
}

EMU_API emu_result cuDeviceGetName(char* name, int len, int device) {
    emu_result r = emu_enter();
    if (r) return r;
    if (!name || len <= 0) return emu_leave(E_INVALID_VALUE);
    if (device != 0) return emu_leave(E_INVALID_DEVICE);
    snprintf(name, (size_t)len, "%s", G.profile->name);
    return emu_leave(E_OK);
}

EMU_API emu_result cuDeviceTotalMem_v2(size_t* bytes, int device) {
    emu_result r = emu_enter();
    if (r) return r;
    if (!bytes) return emu_leave(E_INVALID_VALUE);
    if (device != 0) return emu_leave(E_INVALID_DEVICE);
    *bytes = (size_t)G.profile->total_mem;
    return emu_leave(E_OK);
}

static int emu_attribute(const emu_profile* p, int attr, int* value) {
    switch (attr) {
    case 1: *value = 1024; break;                          /* MAX_THREADS_PER_BLOCK */
    case 2: case 3: *value = 1024; break;                  /* MAX_BLOCK_DIM_X/Y */
    case 4: *value = 64; break;                            /* MAX_BLOCK_DIM_Z */
    case 5: *value = 2147483647; break;                    /* MAX_GRID_DIM_X */
    case 6: case 7: *value = 65535; break;                 /* MAX_GRID_DIM_Y/Z */
    case 8: *value = p->smem_per_block; break;             /* MAX_SHARED_MEMORY_PER_BLOCK */
    case 9: *value = 65536; break;                         /* TOTAL_CONSTANT_MEMORY */
    case 10: *value = 32; break;                           /* WARP_SIZE */
    case 12: *value = p->regs_per_block; break;            /* MAX_REGISTERS_PER_BLOCK */
    case 13: *value = p->clock_khz; break;                 /* CLOCK_RATE */
    case 15: *value = 1; break;                            /* GPU_OVERLAP */
    case 16: *value = p->sm_count; break;                  /* MULTIPROCESSOR_COUNT */
    case 17: *value = 0; break;                            /* KERNEL_EXEC_TIMEOUT */
    case 18: *value = p->integrated; break;                /* INTEGRATED */
    case 19: *value = 1; break;                            /* CAN_MAP_HOST_MEMORY */
    case 20: *value = 0; break;                            /* COMPUTE_MODE default */
    case 31: *value = 1; break;                            /* CONCURRENT_KERNELS */
    case 36: *value = p->mem_clock_khz; break;             /* MEMORY_CLOCK_RATE */
    case 37: *value = p->bus_width; break;                 /* GLOBAL_MEMORY_BUS_WIDTH */
    case 38: *value = p->l2_bytes; break;                  /* L2_CACHE_SIZE */
    case 39: *value = p->max_threads_per_sm; break;        /* MAX_THREADS_PER_MULTIPROCESSOR */
    case 40: *value = p->integrated ? 1 : 2; break;        /* ASYNC_ENGINE_COUNT */
    case 41: *value = 1; break;                            /* UNIFIED_ADDRESSING */
    case 75: *value = p->cc_major; break;                  /* COMPUTE_CAPABILITY_MAJOR */
    case 76: *value = p->cc_minor; break;                  /* COMPUTE_CAPABILITY_MINOR */
    case 78: *value = 1; break;                            /* STREAM_PRIORITIES_SUPPORTED */
    case 81: *value = p->smem_per_sm; break;               /* MAX_SHARED_MEMORY_PER_MULTIPROCESSOR */
    case 82: *value = p->regs_per_sm; break;               /* MAX_REGISTERS_PER_MULTIPROCESSOR */
    case 83: *value = 1; break;                            /* MANAGED_MEMORY */
    case 95: *value = 1; break;                            /* COOPERATIVE_LAUNCH */
    case 97: *value = p->smem_optin; break;                /* MAX_SHARED_MEMORY_PER_BLOCK_OPTIN */
    case 106: *value = p->max_blocks_per_sm; break;        /* MAX_BLOCKS_PER_MULTIPROCESSOR */
    case 111: *value = p->smem_reserved; break;            /* RESERVED_SHARED_MEMORY_PER_BLOCK */
    case 115: *value = 1; break;                           /* MEMORY_POOLS_SUPPORTED */
    default:
        if (attr <= 0 || attr > 140) return -1;
        *value = 0; /* an attribute the emulator does not model: reported as unsupported (0) */
    }
    return 0;
}

EMU_API emu_result cuDeviceGetAttribute(int* value, int attr, int device) {
    emu_result r = emu_enter();
    if (r) return r;
    if (!value) return emu_leave(E_INVALID_VALUE);
    if (device != 0) return emu_leave(E_INVALID_DEVICE);
    return emu_leave(emu_attribute(G.profile, attr, value) == 0 ? E_OK : E_INVALID_VALUE);
}

/* ---------------------------------------------------------------- contexts */

/* The calling thread's context stack (DRV cuCtxPushCurrent/PopCurrent/SetCurrent): the top is the current
 * context. Entries are contexts that were valid when pushed; context objects are never freed, so a destroyed
 * one stays readable (its `destroyed` flag) until it is popped. */
enum { CTX_STACK_MAX = 64 };
static __thread emu_ctx* emu_tls_stack[CTX_STACK_MAX];
static __thread int emu_tls_depth;

static emu_ctx* emu_ctx_top(void) { return emu_tls_depth ? emu_tls_stack[emu_tls_depth - 1] : NULL; }

/* The current context, or why there is none usable: CUDA_ERROR_INVALID_CONTEXT (201) when the thread has no
 * current context (or the primary context was released to zero: it is reset, [EMU] 201), and
 * CUDA_ERROR_CONTEXT_IS_DESTROYED (709) when another thread destroyed it while it was current here (DRV
 * cuCtxDestroy). */
emu_result emu_require_ctx(emu_ctx** out) {
    emu_ctx* c = emu_ctx_top();
    *out = NULL;
    if (!c) return E_INVALID_CONTEXT;
    if (c->destroyed) return E_CONTEXT_IS_DESTROYED;
    if (c->primary && !c->retained) return E_INVALID_CONTEXT;
    *out = c;
    return E_OK;
}

emu_ctx* emu_current_ctx(void) {
    emu_ctx* c;
    return emu_require_ctx(&c) == E_OK ? c : NULL;
}

/* The current context must own a handle (stream, event, module, graph exec) of ctx `owner`: with none
 * current 201; with another one current [EMU] CUDA_ERROR_INVALID_HANDLE (400), the code DRV gives for an
 * event and a stream of different contexts (cuEventRecord) and the one drivers report for a stream of
 * another device's context. */
emu_result emu_require_owner(const emu_ctx* owner, emu_ctx** out) {
    emu_result r = emu_require_ctx(out);
    if (r != E_OK) return r;
    return owner == *out ? E_OK : E_INVALID_HANDLE;
}

EMU_API emu_result cuDevicePrimaryCtxRetain(emu_ctx** pctx, int device) {
    emu_result r = emu_enter();
    if (r) return r;
    if (!pctx) return emu_leave(E_INVALID_VALUE);
    if (device != 0) return emu_leave(E_INVALID_DEVICE);
    G.primary->retained++;
    *pctx = G.primary;
    return emu_leave(E_OK);
}

/* Does not pop the context from any stack (DRV); a thread that still has it current gets 201. */
EMU_API emu_result cuDevicePrimaryCtxRelease_v2(int device) {
    emu_result r = emu_enter();
    if (r) return r;
    if (device != 0) return emu_leave(E_INVALID_DEVICE);
    if (G.primary->retained <= 0) return emu_leave(E_INVALID_CONTEXT);
    G.primary->retained--;
    return emu_leave(E_OK);
}

static emu_result emu_ctx_push(emu_ctx* c) {
    if (emu_tls_depth == CTX_STACK_MAX) return E_OUT_OF_MEMORY; /* [EMU] a bounded stack */
    emu_tls_stack[emu_tls_depth++] = c;
    return E_OK;
}

/* Creates a context and pushes it: "If a context is already current to the thread, it is supplanted by the
 * newly created context and may be restored by a subsequent call to cuCtxPopCurrent()" (DRV). */
EMU_API emu_result cuCtxCreate_v2(emu_ctx** pctx, unsigned int flags, int device) {
    emu_result r = emu_enter();
    emu_ctx* c;
    if (r) return r;
    if (!pctx || flags > 0x3f) return emu_leave(E_INVALID_VALUE);
    if (device != 0) return emu_leave(E_INVALID_DEVICE);
    if (emu_tls_depth == CTX_STACK_MAX) return emu_leave(E_OUT_OF_MEMORY);
    c = emu_ctx_new(0);
    if (!c) return emu_leave(E_OUT_OF_MEMORY);
    emu_ctx_push(c);
    G.live_contexts++;
    *pctx = c;
    return emu_leave(E_OK);
}

/* Destroys ctx whatever threads have it current; popped from this thread's stack if it is the top (DRV). */
EMU_API emu_result cuCtxDestroy_v2(emu_ctx* ctx) {
    emu_result r = emu_enter();
    if (r) return r;
    if (emu_handle_kind(ctx) != K_CTX || ctx->primary) return emu_leave(E_INVALID_CONTEXT);
    ctx->destroyed = 1; /* streams keep running to completion; the object stays for their workers */
    emu_handle_del(ctx);
    G.live_contexts--;
    if (emu_ctx_top() == ctx) emu_tls_depth--;
    return emu_leave(E_OK);
}

/* Replaces the top of the stack (pushes onto an empty one); NULL pops the top, a no-op on an empty stack. */
EMU_API emu_result cuCtxSetCurrent(emu_ctx* ctx) {
    emu_result r = emu_enter();
    if (r) return r;
    if (ctx && emu_handle_kind(ctx) != K_CTX) return emu_leave(E_INVALID_CONTEXT);
    if (!ctx) {
        if (emu_tls_depth) emu_tls_depth--;
    } else if (emu_tls_depth) {
        emu_tls_stack[emu_tls_depth - 1] = ctx;
    } else {
        emu_ctx_push(ctx);
    }
    return emu_leave(E_OK);
}

EMU_API emu_result cuCtxGetCurrent(emu_ctx** pctx) {
    emu_result r = emu_enter();
    if (r) return r;
    if (!pctx) return emu_leave(E_INVALID_VALUE);
    *pctx = emu_ctx_top();
    return emu_leave(E_OK);
}

EMU_API emu_result cuCtxGetDevice(int* device) {
    emu_result r = emu_enter();
    emu_ctx* ctx;
    if (r) return r;
    if (!device) return emu_leave(E_INVALID_VALUE);
    if ((r = emu_require_ctx(&ctx)) != E_OK) return emu_leave(r);
    *device = 0;
    return emu_leave(E_OK);
}

/* [EMU] pushing NULL is CUDA_ERROR_INVALID_VALUE (in DRV's return list), a stale handle INVALID_CONTEXT. */
EMU_API emu_result cuCtxPushCurrent_v2(emu_ctx* ctx) {
    emu_result r = emu_enter();
    if (r) return r;
    if (!ctx) return emu_leave(E_INVALID_VALUE);
    if (emu_handle_kind(ctx) != K_CTX) return emu_leave(E_INVALID_CONTEXT);
    return emu_leave(emu_ctx_push(ctx));
}

/* Pops the top and returns it; the context below becomes current again. Empty stack: INVALID_CONTEXT. */
EMU_API emu_result cuCtxPopCurrent_v2(emu_ctx** pctx) {
    emu_result r = emu_enter();
    emu_ctx* top;
    if (r) return r;
    if (!(top = emu_ctx_top())) return emu_leave(E_INVALID_CONTEXT);
    emu_tls_depth--;
    if (pctx) *pctx = top;
    return emu_leave(E_OK);
}

/* ---------------------------------------------------------------- memory */

static size_t emu_round(size_t v, size_t a) { return (v + a - 1) / a * a; }

emu_alloc* emu_alloc_find(const void* p, size_t len) {
    const unsigned char* q = (const unsigned char*)p;
    size_t lo = 0, hi = G.n_allocs;
    while (lo < hi) { /* last allocation with base <= p */
        size_t mid = (lo + hi) / 2;
        if (G.allocs[mid].base <= q) lo = mid + 1;
        else hi = mid;
    }
    if (lo == 0) return NULL;
    {
        emu_alloc* a = &G.allocs[lo - 1];
        if (q >= a->base && (size_t)(q - a->base) <= a->size && len <= a->size - (size_t)(q - a->base))
            return (len == 0 && q == a->base + a->size) ? NULL : a;
    }
    return NULL;
}

int emu_alloc_guard_ok(const emu_alloc* a, size_t* bad_offset) {
    const unsigned char* end = a->raw + a->raw_size;
    const unsigned char* p;
    for (p = a->raw; p < a->base; p++)
        if (*p != POISON_GUARD) {
            *bad_offset = (size_t)(a->base - p);
            return -1;
        }
    for (p = a->base + a->size; p < end; p++)
        if (*p != POISON_GUARD) {
            *bad_offset = (size_t)(p - a->base);
            return 1;
        }
    return 0;
}

void emu_alloc_guard_restore(emu_alloc* a) {
    memset(a->raw, POISON_GUARD, (size_t)(a->base - a->raw));
    memset(a->base + a->size, POISON_GUARD, (size_t)(a->raw + a->raw_size - (a->base + a->size)));
}

static emu_result emu_alloc_new(size_t size, int host, void** out) {
    emu_alloc a;
    size_t i;
    if (size == 0) return E_INVALID_VALUE;
    if (G.fail_alloc_after > 0 && --G.fail_alloc_after == 0) return E_OUT_OF_MEMORY; /* fault injection */
    if (size > G.profile->total_mem - G.allocated_bytes || size > ((size_t)1 << 40)) return E_OUT_OF_MEMORY;
    a.size = size;
    a.host = host;
    a.raw_size = GUARD + emu_round(size, ALIGN) + GUARD;
    if (posix_memalign((void**)&a.raw, ALIGN, a.raw_size) != 0) return E_OUT_OF_MEMORY;
    a.base = a.raw + GUARD;
    memset(a.base, POISON_NEW, size); /* cuMemAlloc does not clear: uninitialised floats read as NaN */
    emu_alloc_guard_restore(&a);
    if (emu_grow((void**)&G.allocs, &G.cap_allocs, G.n_allocs + 1, sizeof(emu_alloc)) != 0) {
        free(a.raw);
        return E_OUT_OF_MEMORY;
    }
    for (i = G.n_allocs; i > 0 && G.allocs[i - 1].base > a.base; i--) G.allocs[i] = G.allocs[i - 1];
    G.allocs[i] = a;
    G.n_allocs++;
    G.allocated_bytes += size;
    *out = a.base;
    return E_OK;
}

static void emu_quarantine_evict(void) {
    emu_alloc* a = &G.quarantine[0];
    size_t i;
    for (i = 0; i < a->size; i++)
        if (a->base[i] != POISON_FREED) {
            emu_report("memory at %p (%zu bytes, freed earlier) was written after it was freed (offset %zu)",
                       (void*)a->base, a->size, i);
            if (G.primary) G.primary->sticky = E_ILLEGAL_ADDRESS;
            break;
        }
    G.quarantine_bytes -= a->raw_size;
    free(a->raw);
    memmove(G.quarantine, G.quarantine + 1, (G.n_quarantine - 1) * sizeof(emu_alloc));
    G.n_quarantine--;
}

static emu_result emu_alloc_free(void* p, int host) {
    emu_alloc* a = emu_alloc_find(p, 0);
    emu_alloc copy;
    size_t off, idx;
    int side;
    if (!a || a->base != (unsigned char*)p || a->host != host) return E_INVALID_VALUE;
    copy = *a;
    idx = (size_t)(a - G.allocs);
    memmove(a, a + 1, (G.n_allocs - idx - 1) * sizeof(emu_alloc));
    G.n_allocs--;
    G.allocated_bytes -= copy.size;
    side = emu_alloc_guard_ok(&copy, &off);
    memset(copy.base, POISON_FREED, copy.size);
    if (emu_grow((void**)&G.quarantine, &G.cap_quarantine, G.n_quarantine + 1, sizeof(emu_alloc)) == 0) {
        G.quarantine[G.n_quarantine++] = copy;
        G.quarantine_bytes += copy.raw_size;
        while (G.quarantine_bytes > QUARANTINE_BYTES && G.n_quarantine > 1) emu_quarantine_evict();
    } else {
        free(copy.raw);
    }
    if (side != 0) {
        emu_report("guard zone %s allocation %p (%zu bytes) overwritten, %zu bytes %s it; detected at free",
                   side < 0 ? "before" : "after", p, copy.size, off, side < 0 ? "before" : "from the start of");
        return E_ILLEGAL_ADDRESS;
    }
    return E_OK;
}

EMU_API emu_result cuMemAlloc_v2(emu_devptr* dptr, size_t bytes) {
    emu_result r = emu_enter();
    void* p = NULL;
    emu_ctx* ctx;
    if (r) return r;
    if ((r = emu_require_ctx(&ctx)) != E_OK) return emu_leave(r);
    if (!dptr) return emu_leave(E_INVALID_VALUE);
    if ((r = emu_unsafe_call()) != E_OK) return emu_leave(r); /* rule 1.5/1.6 */
    r = emu_alloc_new(bytes, 0, &p);
    if (r == E_OK) *dptr = (emu_devptr)(size_t)p;
    return emu_leave(r);
}

EMU_API emu_result cuMemFree_v2(emu_devptr dptr) {
    emu_result r = emu_enter();
    emu_ctx* ctx;
    if (r) return r;
    if ((r = emu_require_ctx(&ctx)) != E_OK) return emu_leave(r);
    if ((r = emu_unsafe_call()) != E_OK) return emu_leave(r);
    if (dptr == 0) return emu_leave(E_OK);
    return emu_leave(emu_alloc_free((void*)(size_t)dptr, 0));
}

EMU_API emu_result cuMemAllocHost_v2(void** pp, size_t bytes) {
    emu_result r = emu_enter();
    emu_ctx* ctx;
    if (r) return r;
    if ((r = emu_require_ctx(&ctx)) != E_OK) return emu_leave(r);
    if (!pp) return emu_leave(E_INVALID_VALUE);
    if ((r = emu_unsafe_call()) != E_OK) return emu_leave(r);
    return emu_leave(emu_alloc_new(bytes, 1, pp));
}

EMU_API emu_result cuMemHostAlloc(void** pp, size_t bytes, unsigned int flags) {
    if (flags & ~7u) return E_INVALID_VALUE;
    return cuMemAllocHost_v2(pp, bytes);
}

EMU_API emu_result cuMemFreeHost(void* p) {
    emu_result r = emu_enter();
    emu_ctx* ctx;
    if (r) return r;
    if ((r = emu_require_ctx(&ctx)) != E_OK) return emu_leave(r);
    if ((r = emu_unsafe_call()) != E_OK) return emu_leave(r);
    return emu_leave(emu_alloc_free(p, 1));
}

EMU_API emu_result cuMemGetInfo_v2(size_t* free_bytes, size_t* total) {
    emu_result r = emu_enter();
    emu_ctx* ctx;
    if (r) return r;
    if ((r = emu_require_ctx(&ctx)) != E_OK) return emu_leave(r);
    if (!free_bytes || !total) return emu_leave(E_INVALID_VALUE);
    *total = (size_t)G.profile->total_mem;
    *free_bytes = *total - G.allocated_bytes;
    return emu_leave(E_OK);
}

/* ---------------------------------------------------------------- cuGetProcAddress (cuda-semantics.md §8) */

typedef struct emu_proc {
    const char* base;
    int version;            /* CUDA version that introduced this ABI (cudaTypedefs.h PFN suffix) */
    const char* symbol;     /* exported name */
} emu_proc;

static const emu_proc emu_procs[] = {
    {"cuInit", 2000, "cuInit"},
    {"cuDriverGetVersion", 2020, "cuDriverGetVersion"},
    {"cuGetErrorName", 6000, "cuGetErrorName"},
    {"cuGetErrorString", 6000, "cuGetErrorString"},
    {"cuDeviceGetCount", 2000, "cuDeviceGetCount"},
    {"cuDeviceGet", 2000, "cuDeviceGet"},
    {"cuDeviceGetName", 2000, "cuDeviceGetName"},
    {"cuDeviceGetAttribute", 2000, "cuDeviceGetAttribute"},
    {"cuDeviceTotalMem", 3020, "cuDeviceTotalMem_v2"},
    {"cuDevicePrimaryCtxRetain", 7000, "cuDevicePrimaryCtxRetain"},
    {"cuDevicePrimaryCtxRelease", 11000, "cuDevicePrimaryCtxRelease_v2"},
    {"cuCtxCreate", 3020, "cuCtxCreate_v2"},
    {"cuCtxDestroy", 4000, "cuCtxDestroy_v2"},
    {"cuCtxSetCurrent", 4000, "cuCtxSetCurrent"},
    {"cuCtxGetCurrent", 4000, "cuCtxGetCurrent"},
    {"cuCtxGetDevice", 2000, "cuCtxGetDevice"},
    {"cuCtxPushCurrent", 4000, "cuCtxPushCurrent_v2"},
    {"cuCtxPopCurrent", 4000, "cuCtxPopCurrent_v2"},
    {"cuCtxSynchronize", 2000, "cuCtxSynchronize"},
    {"cuCtxSynchronize", 13000, "cuCtxSynchronize_v2"},
    {"cuMemAlloc", 3020, "cuMemAlloc_v2"},
    {"cuMemFree", 3020, "cuMemFree_v2"},
    {"cuMemAllocHost", 3020, "cuMemAllocHost_v2"},
    {"cuMemHostAlloc", 2020, "cuMemHostAlloc"},
    {"cuMemFreeHost", 2000, "cuMemFreeHost"},
    {"cuMemGetInfo", 3020, "cuMemGetInfo_v2"},
    {"cuMemcpy", 4000, "cuMemcpy"},
    {"cuMemcpyAsync", 4000, "cuMemcpyAsync"},
    {"cuMemcpyHtoD", 3020, "cuMemcpyHtoD_v2"},
    {"cuMemcpyDtoH", 3020, "cuMemcpyDtoH_v2"},
    {"cuMemcpyDtoD", 3020, "cuMemcpyDtoD_v2"},
    {"cuMemcpyHtoDAsync", 3020, "cuMemcpyHtoDAsync_v2"},
    {"cuMemcpyDtoHAsync", 3020, "cuMemcpyDtoHAsync_v2"},
    {"cuMemcpyDtoDAsync", 3020, "cuMemcpyDtoDAsync_v2"},
    {"cuMemsetD8", 3020, "cuMemsetD8_v2"},
    {"cuMemsetD32", 3020, "cuMemsetD32_v2"},
    {"cuMemsetD8Async", 3020, "cuMemsetD8Async"},
    {"cuMemsetD32Async", 3020, "cuMemsetD32Async"},
    {"cuModuleLoadData", 2000, "cuModuleLoadData"},
    {"cuModuleLoadDataEx", 2010, "cuModuleLoadDataEx"},
    {"cuModuleUnload", 2000, "cuModuleUnload"},
    {"cuModuleGetFunction", 2000, "cuModuleGetFunction"},
    {"cuFuncGetAttribute", 2020, "cuFuncGetAttribute"},
    {"cuFuncSetAttribute", 9000, "cuFuncSetAttribute"},
    {"cuLaunchKernel", 4000, "cuLaunchKernel"},
    {"cuLaunchHostFunc", 10000, "cuLaunchHostFunc"},
    {"cuStreamCreate", 2000, "cuStreamCreate"},
    {"cuStreamCreateWithPriority", 5050, "cuStreamCreateWithPriority"},
    {"cuStreamDestroy", 4000, "cuStreamDestroy_v2"},
    {"cuStreamSynchronize", 2000, "cuStreamSynchronize"},
    {"cuStreamQuery", 2000, "cuStreamQuery"},
    {"cuStreamWaitEvent", 3020, "cuStreamWaitEvent"},
    {"cuStreamGetFlags", 5050, "cuStreamGetFlags"},
    {"cuEventCreate", 2000, "cuEventCreate"},
    {"cuEventDestroy", 4000, "cuEventDestroy_v2"},
    {"cuEventRecord", 2000, "cuEventRecord"},
    {"cuEventRecordWithFlags", 11010, "cuEventRecordWithFlags"},
    {"cuEventQuery", 2000, "cuEventQuery"},
    {"cuEventSynchronize", 2000, "cuEventSynchronize"},
    {"cuEventElapsedTime", 2000, "cuEventElapsedTime"},
    {"cuEventElapsedTime", 12080, "cuEventElapsedTime_v2"},
    {"cuStreamBeginCapture", 10010, "cuStreamBeginCapture_v2"},
    {"cuStreamEndCapture", 10000, "cuStreamEndCapture"},
    {"cuStreamIsCapturing", 10000, "cuStreamIsCapturing"},
    {"cuStreamGetCaptureInfo", 12030, "cuStreamGetCaptureInfo_v3"},
    {"cuThreadExchangeStreamCaptureMode", 10010, "cuThreadExchangeStreamCaptureMode"},
    {"cuGraphCreate", 10000, "cuGraphCreate"},
    {"cuGraphDestroy", 10000, "cuGraphDestroy"},
    {"cuGraphAddKernelNode", 12000, "cuGraphAddKernelNode_v2"},
    {"cuGraphAddEmptyNode", 10000, "cuGraphAddEmptyNode"},
    {"cuGraphGetNodes", 10000, "cuGraphGetNodes"},
    {"cuGraphGetRootNodes", 10000, "cuGraphGetRootNodes"},
    {"cuGraphGetEdges", 10000, "cuGraphGetEdges"},
    {"cuGraphGetEdges", 12030, "cuGraphGetEdges_v2"},
    {"cuGraphNodeGetType", 10000, "cuGraphNodeGetType"},
    {"cuGraphNodeGetDependencies", 12030, "cuGraphNodeGetDependencies_v2"},
    {"cuGraphKernelNodeGetParams", 12000, "cuGraphKernelNodeGetParams_v2"},
    {"cuGraphInstantiateWithFlags", 11040, "cuGraphInstantiateWithFlags"},
    {"cuGraphInstantiateWithParams", 12000, "cuGraphInstantiateWithParams"},
    {"cuGraphLaunch", 10000, "cuGraphLaunch"},
    {"cuGraphUpload", 11010, "cuGraphUpload"},
    {"cuGraphExecUpdate", 12000, "cuGraphExecUpdate_v2"},
    {"cuGraphExecDestroy", 10000, "cuGraphExecDestroy"},
    {"cuGetProcAddress", 12000, "cuGetProcAddress_v2"},
};

static int emu_hidden(const char* base) {
    const char* p = G.hidden;
    size_t n = strlen(base);
    while ((p = strstr(p, base)) != NULL) {
        if ((p == G.hidden || p[-1] == ',') && (p[n] == 0 || p[n] == ',')) return 1;
        p += n;
    }
    return 0;
}

EMU_API emu_result cuGetProcAddress_v2(const char* symbol, void** pfn, int cuda_version, unsigned long long flags,
                                       int* status) {
    const emu_proc* best = NULL;
    int known = 0;
    size_t i;
    Dl_info self;
    void* lib;
    emu_result r = emu_enter();
    if (r) return r;
    if (!symbol || !pfn || (flags & ~3ULL)) return emu_leave(E_INVALID_VALUE);
    if (cuda_version > G.driver_version) return emu_leave(E_INVALID_VALUE);
    for (i = 0; i < sizeof emu_procs / sizeof emu_procs[0]; i++) {
        const emu_proc* p = &emu_procs[i];
        if (strcmp(p->base, symbol) != 0 || p->version > G.driver_version || emu_hidden(symbol)) continue;
        known = 1;
        if (p->version <= cuda_version && (!best || p->version > best->version)) best = p;
    }
    *pfn = NULL;
    if (status) *status = best ? 0 : known ? 2 : 1; /* SUCCESS, VERSION_NOT_SUFFICIENT, SYMBOL_NOT_FOUND */
    if (best && dladdr((void*)&emu_procs, &self) && (lib = dlopen(self.dli_fname, RTLD_NOW | RTLD_NOLOAD))) {
        *pfn = dlsym(lib, best->symbol);
        dlclose(lib);
    }
    if (best && !*pfn && status) *status = 1;
    return emu_leave(E_OK);
}

/* ---------------------------------------------------------------- control API for tests and fakes */

EMU_API int opara_emu_config(const char* key, long long value) {
    int rc = 0;
    pthread_mutex_lock(&emu_mu);
    if (strcmp(key, "fail_alloc") == 0) G.fail_alloc_after = value;
    else if (strcmp(key, "fail_capture") == 0) G.fail_capture = (int)value;
    else if (strcmp(key, "fail_instantiate") == 0) G.fail_instantiate = (int)value;
    else if (strcmp(key, "strict_pageable") == 0) G.strict_pageable = (int)value;
    else if (strcmp(key, "lib_align") == 0) G.lib_align = value;
    else if (strcmp(key, "lib_first_use_us") == 0) G.lib_first_use_us = value;
    else if (strcmp(key, "handle_first_use_us") == 0) G.handle_first_use_us = value;
    else if (strcmp(key, "func_first_use_us") == 0) G.func_first_use_us = value;
    else if (strcmp(key, "graph_threads") == 0) G.graph_threads = (int)value;
    else if (strcmp(key, "block_threads") == 0) emu_exec_set_threads((int)value);
    else if (strcmp(key, "seed") == 0) G.seed = (unsigned long long)value;
    else if (strcmp(key, "driver_version") == 0) G.driver_version = value ? (int)value : emu_driver_version_value(); /* 0: back to the default */
    else if (strcmp(key, "paused") == 0) {
        G.paused = (int)value;
        pthread_cond_broadcast(&emu_cv);
    } else if (strcmp(key, "clear_sticky") == 0) {
        emu_ctx* c = emu_current_ctx();
        if (c) c->sticky = 0;
    } else rc = -1;
    pthread_mutex_unlock(&emu_mu);
    return rc;
}

EMU_API int opara_emu_config_str(const char* key, const char* value) {
    int rc = 0;
    pthread_mutex_lock(&emu_mu);
    if (strcmp(key, "hide") == 0) snprintf(G.hidden, sizeof G.hidden, "%s", value ? value : "");
    else if (strcmp(key, "device") == 0) /* tests: objects made afterwards see this profile; "" = the default */
        G.profile = emu_profile_find(value && *value ? value : emu_env("OPARA_EMU_DEVICE"));
    else rc = -1;
    pthread_mutex_unlock(&emu_mu);
    return rc;
}

EMU_API unsigned long long opara_emu_seed(void) { return G.seed; }

/* Contexts a process must still give back: created and not destroyed, plus the primary context while it is
 * retained (it counts once however often). */
static long long emu_live_contexts(void) {
    return (long long)G.live_contexts + (G.primary && G.primary->retained > 0 ? 1 : 0);
}

/* libcuda.so.1 is built with -z nodelete, so it is unloaded only when the process exits: a program that
 * leaves a context alive or the primary context retained gets a warning then (a session must give back
 * everything it took; a real driver says nothing and keeps the device's memory until exit). Reads G without
 * the lock: the workers are joined by then, and another thread may be stuck holding it. */
__attribute__((destructor)) static void emu_check_at_unload(void) {
    if (!G.initialized || (G.live_contexts <= 0 && (!G.primary || G.primary->retained <= 0))) return;
    emu_report("warning: libcuda.so.1 unloaded at process exit with %d context(s) made by cuCtxCreate and not "
               "destroyed and the primary context retained %d time(s) (cuDevicePrimaryCtxRelease missing); "
               "opara_emu_stat(\"live_contexts\") = %lld",
               G.live_contexts, G.primary ? G.primary->retained : 0, emu_live_contexts());
}

/* Live allocations (device and pinned host) and their bytes, so tests can check that nothing leaked. */
EMU_API long long opara_emu_stat(const char* key) {
    long long v = -1;
    pthread_mutex_lock(&emu_mu);
    if (strcmp(key, "allocations") == 0) v = (long long)G.n_allocs;
    else if (strcmp(key, "allocated_bytes") == 0) v = (long long)G.allocated_bytes;
    else if (strcmp(key, "live_contexts") == 0) v = emu_live_contexts();
    else if (strcmp(key, "lib_align") == 0) v = G.lib_align; /* the fakes' pointer alignment rule (emu_lib.h) */
    else if (strcmp(key, "lib_first_use_us") == 0) v = G.lib_first_use_us; /* first-use costs (emu_lib.h) */
    else if (strcmp(key, "handle_first_use_us") == 0) v = G.handle_first_use_us;
    else if (strcmp(key, "func_first_use_us") == 0) v = G.func_first_use_us;
    else if (strcmp(key, "primary_retained") == 0) v = G.primary ? G.primary->retained : 0;
    else if (strcmp(key, "streams") == 0) { /* created with cuStreamCreate* and not destroyed */
        size_t i;
        for (v = 0, i = 0; i < G.n_all_streams; ++i) v += G.all_streams[i]->special == 0 && !G.all_streams[i]->retired;
    }
    pthread_mutex_unlock(&emu_mu);
    return v;
}

/* Is p inside a live device allocation? (lets the tests check kernels' pointer use independently) */
EMU_API int opara_emu_is_device_pointer(const void* p) {
    int yes;
    pthread_mutex_lock(&emu_mu);
    yes = emu_alloc_find(p, 1) != NULL;
    pthread_mutex_unlock(&emu_mu);
    return yes;
}
