/* emu_lib.h - what the cuBLAS and cuDNN fakes (libcublas.so, libcudnn.so) share. They are built on the
 * emulated driver (libcuda.so.1, linked by soname) the way NVIDIA's libraries sit on the CUDA runtime: their
 * work is kernel launches (tests/cudaemu/emu_kernels_lib.cu) on the caller's stream, so ordering and stream
 * capture treat a library call exactly like a kernel launch.
 *
 * Types come from opara_cuda.h, and every exported function is first declared from opara_cuda.h's X-macro
 * lists (EMU_LIB_DECLARE): a definition whose prototype drifts from opara's declaration does not compile,
 * and a listed function that is not defined fails the link (-Wl,--no-undefined, EMU_LIB_EXPORTS). */
#ifndef EMU_LIB_H
#define EMU_LIB_H
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../opara_cuda.h"

#define EMU_LIB_API __attribute__((visibility("default")))

/* The driver entry points the fakes call, with opara_cuda.h's prototypes (the driver defines them). */
#define EMU_LIB_DRIVER_DECL(ret, name, params, req, proc, ver, alt, alt_ver) ret name params;
OPARA_CUDA_DRIVER_FUNCS(EMU_LIB_DRIVER_DECL)
#undef EMU_LIB_DRIVER_DECL

/* The emulator's control API (emu_stream.c, emu_core.c). */
opara_CUresult opara_emu_function(const char* name, opara_CUfunction* pf);
unsigned long long opara_emu_seed(void);
long long opara_emu_stat(const char* key);
void opara_emu_sleep_us(long long us);

/* A diagnostic in the emulator's format (stderr), e.g. why a call fails where a GPU would fail silently. */
static inline void emu_lib_report(const char* lib, const char* msg) {
    fprintf(stderr, "opara-emu: %s: %s (OPARA_EMU_SEED=%llu)\n", lib, msg, opara_emu_seed());
}

/* Declares an exported library function with opara_cuda.h's prototype. */
#define EMU_LIB_DECLARE(ret, name, params, req) EMU_LIB_API ret name params;
/* Takes the address of every listed function (in a table the library keeps), so a missing one fails the link. */
#define EMU_LIB_ADDRESS(ret, name, params, req) (void (*)(void))name,

/* A live-handle registry (the fakes reject stale or foreign handles instead of dereferencing them). */
typedef struct emu_lib_registry {
    pthread_mutex_t mu;
    const void** items;
    size_t n, cap;
} emu_lib_registry;

static inline int emu_lib_registry_add(emu_lib_registry* r, const void* p) {
    int ok = 1;
    pthread_mutex_lock(&r->mu);
    if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 16;
        const void** items = (const void**)realloc((void*)r->items, cap * sizeof(void*));
        if (items) {
            r->items = items;
            r->cap = cap;
        } else {
            ok = 0;
        }
    }
    if (ok) r->items[r->n++] = p;
    pthread_mutex_unlock(&r->mu);
    return ok;
}

static inline int emu_lib_registry_has(emu_lib_registry* r, const void* p) {
    size_t i;
    int found = 0;
    if (!p) return 0;
    pthread_mutex_lock(&r->mu);
    for (i = 0; i < r->n && !found; i++) found = r->items[i] == p;
    pthread_mutex_unlock(&r->mu);
    return found;
}

/* Removes p; returns 0 when it was not registered. */
static inline int emu_lib_registry_remove(emu_lib_registry* r, const void* p) {
    size_t i;
    int found = 0;
    pthread_mutex_lock(&r->mu);
    for (i = 0; i < r->n; i++)
        if (r->items[i] == p) {
            r->items[i] = r->items[--r->n];
            found = 1;
            break;
        }
    if (r->n == 0) { /* the library may be unloaded once its last object is gone: leave nothing behind */
        free((void*)r->items);
        r->items = NULL;
        r->cap = 0;
    }
    pthread_mutex_unlock(&r->mu);
    return found;
}

/* Launches one of the emulator's library kernels on stream s (1-D or 2-D/3-D grid). */
static inline opara_CUresult emu_lib_launch(const char* kernel, const unsigned int grid[3], const unsigned int block[3],
                                            opara_CUstream s, void** args) {
    opara_CUfunction f;
    opara_CUresult r = opara_emu_function(kernel, &f);
    if (r != OPARA_CUDA_SUCCESS) {
        emu_lib_report(kernel, "library kernel not built into the emulator");
        return r;
    }
    return cuLaunchKernel(f, grid[0], grid[1], grid[2], block[0], block[1], block[2], 0, s, args, NULL);
}

/* Launches a library kernel over `total` elements: 1-D blocks of `threads`, as many as cover them. */
static inline opara_CUresult emu_lib_launch_1d(const char* kernel, long long total, unsigned int threads, opara_CUstream s,
                                               void** args) {
    unsigned int grid[3], block[3];
    grid[0] = (unsigned int)((total + threads - 1) / threads);
    grid[1] = grid[2] = 1;
    block[0] = threads;
    block[1] = block[2] = 1;
    return emu_lib_launch(kernel, grid, block, s, args);
}

/* Whether ctx (the handle's context) is current on the calling thread. Every library call that launches
 * work or frees the handle's device memory needs it: "the calling thread's current context must be the one
 * of the handle's stream". [EMU] NVIDIA's libraries sit on the CUDA runtime, which would make the device's
 * primary context current on a thread that has none; the fakes refuse instead (the caller's own driver calls
 * on that thread would fail with CUDA_ERROR_INVALID_CONTEXT anyway), with a report naming the call. */
static inline int emu_lib_context_ok(const char* lib, const char* call, opara_CUcontext ctx) {
    opara_CUcontext cur = NULL;
    char msg[200];
    if (cuCtxGetCurrent(&cur) == OPARA_CUDA_SUCCESS && cur == ctx) return 1;
    snprintf(msg, sizeof msg, "%s: the handle's context is not current on the calling thread (%s)", call,
             cur ? "another context is" : "no context is");
    emu_lib_report(lib, msg);
    return 0;
}

/* [EMU] Data pointers handed to the libraries (operands, outputs, workspaces) must be aligned to
 * opara_emu_stat("lib_align") bytes (16 by default: the 128-bit vector loads of the tensor-core and vectorised
 * kernels; OPARA_EMU_LIB_ALIGN / opara_emu_config("lib_align") change it, 1 or 0 turns the check off).
 * Real cuBLAS and cuDNN accept 4-byte aligned FP32 data and silently pick slower kernels; the emulator refuses
 * so that a buffer placed at an odd offset (e.g. a Concat input written in place) shows up. */
static inline int emu_lib_aligned(const char* lib, const char* what, const void* p) {
    long long a = opara_emu_stat("lib_align");
    char msg[200];
    if (a <= 1 || !p || (size_t)p % (size_t)a == 0) return 1;
    snprintf(msg, sizeof msg, "%s at %p is not %lld-byte aligned (offset %zu)", what, p, a, (size_t)p % (size_t)a);
    emu_lib_report(lib, msg);
    return 0;
}

/* ---- first-use costs (docs/TESTING-GPU.md "First use")
 * A library's first call in the process loads its kernels (lazy module loading) and a handle's first call
 * sets up its device state: the emulator sleeps opara_emu_stat("lib_first_use_us") once per loaded library
 * and ("handle_first_use_us") once per handle, on the calling thread, and the handle's set-up allocates
 * device memory with cuMemAlloc, an unsafe call during a GLOBAL or THREAD_LOCAL capture (rules 1.5/1.6): a
 * capture that contains a handle's very first call fails as on the real libraries, and the call returns
 * the library's allocation status. The allocation is retried at the next call; it is freed at destroy. */
enum { EMU_LIB_SETUP_BYTES = 4096 };

/* Once per loaded library (*loaded: the library's flag) and once per handle (*setup: the handle's lazily
 * allocated state, 0 until the first call). Returns 0, or -1 when the set-up allocation failed. */
static inline int emu_lib_first_use(const char* lib, int* loaded, opara_CUdeviceptr* setup) {
    char msg[240];
    opara_CUresult r;
    if (*setup) return 0;
    if (!__atomic_exchange_n(loaded, 1, __ATOMIC_ACQ_REL)) opara_emu_sleep_us(opara_emu_stat("lib_first_use_us"));
    if ((r = cuMemAlloc_v2(setup, EMU_LIB_SETUP_BYTES)) == OPARA_CUDA_SUCCESS) {
        opara_emu_sleep_us(opara_emu_stat("handle_first_use_us"));
        return 0;
    }
    *setup = 0;
    snprintf(msg, sizeof msg, "the handle's first call sets up device memory and cuMemAlloc failed (%d)%s", (int)r,
             r == OPARA_CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED
                 ? ": it is inside a stream capture; run the handle once before capturing (warm-up)"
                 : "");
    emu_lib_report(lib, msg);
    return -1;
}

/* How a library kernel rounds its multiplication operands before the FP32 accumulation (the `rmode` of
 * emu_kernels_lib.cu): what the tensor cores of the emulated device would read. */
enum { EMU_ROUND_NONE = 0, EMU_ROUND_TF32 = 1, EMU_ROUND_FP16 = 2, EMU_ROUND_BF16 = 3 };

/* Compute capability of the emulated device as 10 * major + minor (75 when the query fails). */
static inline int emu_lib_compute_capability(void) {
    int major = 7, minor = 5;
    opara_CUdevice dev = 0;
    if (cuDeviceGet(&dev, 0) != OPARA_CUDA_SUCCESS ||
        cuDeviceGetAttribute(&major, OPARA_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev) != OPARA_CUDA_SUCCESS ||
        cuDeviceGetAttribute(&minor, OPARA_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev) != OPARA_CUDA_SUCCESS)
        return 75;
    return major * 10 + minor;
}

/* NVIDIA_TF32_OVERRIDE=0 turns TF32 off in every NVIDIA library (cuDNN's cudnnMathType_t and cuBLAS's
 * cublasMath_t documentation); read at each call, as the variable may be set after the library loads. */
static inline int emu_lib_tf32_overridden(void) {
    const char* v = getenv("NVIDIA_TF32_OVERRIDE");
    return v && strcmp(v, "0") == 0;
}

/* TF32 on a device that has it (compute capability 8.0 and newer), unless overridden. */
static inline int emu_lib_tf32(int cc) { return cc >= 80 && !emu_lib_tf32_overridden() ? EMU_ROUND_TF32 : EMU_ROUND_NONE; }

/* Whether stream s is capturing (errors count as not capturing: the launch reports them). */
static inline int emu_lib_capturing(opara_CUstream s) {
    opara_CUstreamCaptureStatus st = OPARA_CU_STREAM_CAPTURE_STATUS_NONE;
    return cuStreamIsCapturing(s, &st) == OPARA_CUDA_SUCCESS && st == OPARA_CU_STREAM_CAPTURE_STATUS_ACTIVE;
}

#endif
