/* The runtime's CUDA state (see opara_backend_cuda.h): the driver, cuBLAS and cuDNN loaded once per
   runtime and the primary contexts it retains, shared by the runtime's CUDA sessions. */
/* Built as a separate file, the loader (opara_cuda.h) is emitted by opara_backend_cuda.c. */
#include "opara_backend_cuda.h"

#include <stdlib.h>
#include <string.h>

/* The first session (or AUTO check) of a runtime loads the driver (with cuInit and at least one
   device), cuBLAS and cuDNN, and retains the primary context of each device a session uses; the
   runtime's later sessions share them and opara_runtime_destroy releases them. Per runtime, not
   per process: the project keeps no global mutable state (a process normally has one runtime).
   A failed load is remembered with its reason and not retried for the same request; another
   request (a session's path option or the environment variable) is tried. One library of each
   kind per runtime: a session that asks for another file than the one loaded gets an error that
   names both (two cuBLAS or cuDNN builds in one process may clash in their own dependencies, and
   the driver is process-wide anyway). Everything here runs under the runtime's lock; sessions
   copy the tables, which never change while loaded, so runs and destroys need no lock. */

enum { OPARA__CUSH_DRIVER = 0, OPARA__CUSH_CUBLAS = 1, OPARA__CUSH_CUDNN = 2, OPARA__CUSH_COUNT = 3 };

typedef struct opara__cuda_slot {
    int state;                         /* 0 not tried, 1 loaded, -1 failed */
    opara_result code;                 /* the failure's code */
    char request[OPARA_CUDA_PATH_MAX]; /* what was asked for: a path or name, "" for the search list */
    char reason[2048];                 /* why it failed */
} opara__cuda_slot;

struct opara__cuda_shared {
    opara_cuda_driver cu;
    opara_cuda_cublas cublas;
    opara_cuda_cudnn dnn;
    opara__cuda_slot slot[OPARA__CUSH_COUNT];
    int n_devices;
    opara_CUdevice* devs;      /* [n_devices] */
    opara_CUcontext* ctxs;     /* [n_devices] retained primary contexts, NULL until a session uses the device */
    volatile int32_t sessions; /* attached sessions (atomic: they are destroyed on any thread) */
};

static const char* const opara__cush_name[OPARA__CUSH_COUNT] = {"CUDA driver", "cuBLAS", "cuDNN"};
static const char* const opara__cush_env[OPARA__CUSH_COUNT] = {"OPARA_CUDA_DRIVER", "OPARA_CUBLAS", "OPARA_CUDNN"};

static const char* opara__cush_path(const opara__cuda_shared* sh, int kind) {
    return kind == OPARA__CUSH_DRIVER ? sh->cu.path : kind == OPARA__CUSH_CUBLAS ? sh->cublas.path : sh->dnn.path;
}

static void opara__cush_unload(opara__cuda_shared* sh, int kind) {
    if (kind == OPARA__CUSH_DRIVER) opara_cuda_driver_unload(&sh->cu);
    else if (kind == OPARA__CUSH_CUBLAS) opara_cuda_cublas_unload(&sh->cublas);
    else opara_cuda_cudnn_unload(&sh->dnn);
}

/* opara_runtime_destroy: releases the primary contexts, then unloads cuDNN, cuBLAS and the driver. */
static void opara__cush_release(opara_runtime* rt, void* state) {
    opara__cuda_shared* sh = (opara__cuda_shared*)state;
    int32_t live = opara__atomic_load(&sh->sessions);
    int d, k;
    if (live > 0) { /* their streams and memory live in the contexts: releasing would pull them away */
        opara__log(&rt->logger, OPARA_LOG_ERROR, OPARA_LOGITEM_ERROR_DETAIL,
                   "opara_runtime_destroy: %d CUDA sessions are still alive, so the CUDA driver and libraries stay "
                   "loaded (destroy sessions before their runtime)", (int)live);
        return;
    }
    for (d = 0; sh->ctxs && d < sh->n_devices; ++d)
        if (sh->ctxs[d]) sh->cu.cuDevicePrimaryCtxRelease_v2(sh->devs[d]);
    for (k = OPARA__CUSH_COUNT - 1; k >= 0; --k) opara__cush_unload(sh, k);
    opara__free(rt, sh->devs);
    opara__free(rt, sh->ctxs);
    opara__free(rt, sh);
}

/* The runtime's CUDA state, made on first use (NULL when out of host memory). */
static opara__cuda_shared* opara__cush_get(opara_runtime* rt) {
    opara__cuda_shared* sh = (opara__cuda_shared*)rt->cuda.state;
    if (sh) return sh;
    sh = (opara__cuda_shared*)opara__calloc(rt, 1, sizeof *sh);
    if (!sh) return NULL;
    rt->cuda.state = sh;
    rt->cuda.release = opara__cush_release;
    return sh;
}

/* What is asked for: the explicit path, else the environment variable, else "" (the search list),
   as the loader resolves it. */
static const char* opara__cush_request(int kind, const char* path) {
    const char* env = path ? NULL : getenv(opara__cush_env[kind]);
    return path ? path : env ? env : "";
}

/* A loaded driver must initialise and have a device; otherwise it is unloaded and the slot failed. */
static void opara__cush_init_driver(opara__cuda_shared* sh) {
    opara__cuda_slot* slot = &sh->slot[OPARA__CUSH_DRIVER];
    int count = 0;
    opara_CUresult r = sh->cu.cuInit(0);
    if (r == OPARA_CUDA_SUCCESS) r = sh->cu.cuDeviceGetCount(&count);
    if (r == OPARA_CUDA_SUCCESS && count > 0) {
        sh->n_devices = count;
        return;
    }
    if (r != OPARA_CUDA_SUCCESS) {
        opara__format(slot->reason, sizeof slot->reason, "%s: cuInit failed: %s (%d)", sh->cu.path,
                      opara_cuda_driver_result_name(&sh->cu, r), (int)r);
        /* what the driver of a machine without a usable GPU answers: no backend, not a failure */
        slot->code = r == OPARA_CUDA_ERROR_NO_DEVICE ? OPARA_ERR_NO_BACKEND : OPARA_ERR_CUDA;
    } else {
        opara__format(slot->reason, sizeof slot->reason, "%s: no CUDA device", sh->cu.path);
        slot->code = OPARA_ERR_NO_BACKEND;
    }
    slot->state = -1;
    opara_cuda_driver_unload(&sh->cu);
}

/* Library `kind` for `path` (NULL: the environment variable, else the search list): loaded now
   unless the runtime has it, or failed on the same request before. OPARA_OK when loaded; else
   the failure's code with the reason in why. */
static opara_result opara__cush_load(opara__cuda_shared* sh, int kind, const char* path, char* why, size_t cap) {
    opara__cuda_slot* slot = &sh->slot[kind];
    const char* request = opara__cush_request(kind, path);
    opara_cuda_load_status st;
    if (slot->state == 1) {
        if (!*request || strcmp(request, slot->request) == 0 || strcmp(request, opara__cush_path(sh, kind)) == 0)
            return OPARA_OK;
        opara__format(why, cap,
                      "this runtime has loaded the %s %s (asked for as \"%s\") and the session asks for \"%s\": a runtime "
                      "loads one %s (use another runtime for another one)",
                      opara__cush_name[kind], opara__cush_path(sh, kind), slot->request, request, opara__cush_name[kind]);
        return OPARA_ERR_INVALID_ARGS;
    }
    if (slot->state == 0 || strcmp(request, slot->request) != 0) {
        st = kind == OPARA__CUSH_DRIVER   ? opara_cuda_driver_load(&sh->cu, path, slot->reason, sizeof slot->reason)
             : kind == OPARA__CUSH_CUBLAS ? opara_cuda_cublas_load(&sh->cublas, path, slot->reason, sizeof slot->reason)
                                          : opara_cuda_cudnn_load(&sh->dnn, path, slot->reason, sizeof slot->reason);
        opara__format(slot->request, sizeof slot->request, "%s", request);
        slot->state = st == OPARA_CUDA_LOAD_OK ? 1 : -1;
        slot->code = st == OPARA_CUDA_LOAD_NOT_FOUND        ? OPARA_ERR_LIB_NOT_FOUND
                     : st == OPARA_CUDA_LOAD_SYMBOL_MISSING ? OPARA_ERR_SYMBOL_NOT_FOUND
                                                            : OPARA_ERR_NO_BACKEND;
        if (slot->state == 1 && kind == OPARA__CUSH_DRIVER) opara__cush_init_driver(sh);
        if (slot->state == 1) return OPARA_OK;
    }
    opara__format(why, cap, "%s", slot->reason);
    return slot->code;
}

/* The primary context of device ordinal `device`, retained by the runtime on first use. */
static opara_result opara__cush_context(opara_runtime* rt, opara__cuda_shared* sh, int device, char* why, size_t cap) {
    opara_CUresult r;
    if (device < 0 || device >= sh->n_devices) {
        opara__format(why, cap, "device %d does not exist (%d devices)", device, sh->n_devices);
        return OPARA_ERR_INVALID_ARGS;
    }
    if (!sh->ctxs) {
        sh->devs = (opara_CUdevice*)opara__calloc(rt, (size_t)sh->n_devices, sizeof *sh->devs);
        sh->ctxs = (opara_CUcontext*)opara__calloc(rt, (size_t)sh->n_devices, sizeof *sh->ctxs);
        if (!sh->devs || !sh->ctxs) {
            opara__free(rt, sh->devs);
            opara__free(rt, sh->ctxs);
            sh->devs = NULL;
            sh->ctxs = NULL;
            opara__format(why, cap, "out of host memory");
            return OPARA_ERR_OUT_OF_MEMORY;
        }
    }
    if (sh->ctxs[device]) return OPARA_OK;
    r = sh->cu.cuDeviceGet(&sh->devs[device], device);
    if (r == OPARA_CUDA_SUCCESS) r = sh->cu.cuDevicePrimaryCtxRetain(&sh->ctxs[device], sh->devs[device]);
    if (r == OPARA_CUDA_SUCCESS) return OPARA_OK;
    sh->ctxs[device] = NULL;
    opara__format(why, cap, "cuDevicePrimaryCtxRetain of device %d failed: %s (%d)", device,
                  opara_cuda_driver_result_name(&sh->cu, r), (int)r);
    return r == OPARA_CUDA_ERROR_OUT_OF_MEMORY ? OPARA_ERR_DEVICE_MEMORY : OPARA_ERR_CUDA;
}

OPARA__PRIVATE opara_result opara__cuda_runtime_check(opara_runtime* rt, char* reason, size_t cap) {
    char why[2400];
    opara__cuda_shared* sh;
    opara_result r = OPARA_ERR_OUT_OF_MEMORY;
    opara__format(why, sizeof why, "out of host memory");
    opara__mutex_lock(&rt->lock);
    if ((sh = opara__cush_get(rt)) != NULL) r = opara__cush_load(sh, OPARA__CUSH_DRIVER, NULL, why, sizeof why);
    opara__mutex_unlock(&rt->lock);
    if (reason && cap) opara__format(reason, cap, "%s", r == OPARA_OK ? "" : why);
    return r;
}

OPARA__PRIVATE const opara_logger* opara__cuda_logger(opara_runtime* rt, const opara__cuda_options* opt) {
    return opt && opt->logger.func ? &opt->logger : &rt->logger;
}

OPARA__PRIVATE_TOOL int opara__cuda_available(const char* driver_path, char* reason, size_t cap) {
    opara_cuda_driver cu;
    char err[2048];
    int count = 0, ok = 0;
    if (reason && cap) reason[0] = 0;
    if (opara_cuda_driver_load(&cu, driver_path, err, sizeof err) != OPARA_CUDA_LOAD_OK) {
        if (reason) opara__format(reason, cap, "%s", err);
        return 0;
    }
    if (cu.cuInit(0) != OPARA_CUDA_SUCCESS) {
        if (reason) opara__format(reason, cap, "cuInit failed");
    } else if (cu.cuDeviceGetCount(&count) != OPARA_CUDA_SUCCESS || count < 1) {
        if (reason) opara__format(reason, cap, "no CUDA device");
    } else {
        ok = 1;
    }
    opara_cuda_driver_unload(&cu);
    return ok;
}

/* Attaches a session to its runtime's CUDA state, loading what is missing: the driver, the device's
   primary context, and cuBLAS / cuDNN unless opt leaves them out. Fills the session's copies of the
   tables (they never change while loaded). A library that does not load is not an error (att says
   why; the session uses its own kernels); a different file than the runtime's is. */
OPARA__PRIVATE opara_result opara__cuda_runtime_attach(opara_runtime* rt, const opara__cuda_options* opt, opara_cuda_driver* cu,
                                                      opara_cuda_cublas* cublas, opara_cuda_cudnn* dnn,
                                                      opara__cuda_attachment* att, char* why, size_t cap) {
    opara__cuda_shared* sh;
    opara_result r = OPARA_ERR_OUT_OF_MEMORY;
    opara__format(why, cap, "out of host memory");
    memset(att, 0, sizeof *att);
    att->cublas = att->cudnn = OPARA_ERR_UNSUPPORTED; /* not asked for */
    opara__mutex_lock(&rt->lock);
    if ((sh = opara__cush_get(rt)) != NULL) r = opara__cush_load(sh, OPARA__CUSH_DRIVER, opt->driver_path, why, cap);
    if (r == OPARA_OK) r = opara__cush_context(rt, sh, opt->device, why, cap);
    if (r == OPARA_OK && !opt->no_cublas)
        att->cublas = opara__cush_load(sh, OPARA__CUSH_CUBLAS, opt->cublas_path, att->why_cublas, sizeof att->why_cublas);
    if (r == OPARA_OK && !opt->no_cudnn)
        att->cudnn = opara__cush_load(sh, OPARA__CUSH_CUDNN, opt->cudnn_path, att->why_cudnn, sizeof att->why_cudnn);
    if (r == OPARA_OK && att->cublas == OPARA_ERR_INVALID_ARGS) r = att->cublas, opara__format(why, cap, "%s", att->why_cublas);
    if (r == OPARA_OK && att->cudnn == OPARA_ERR_INVALID_ARGS) r = att->cudnn, opara__format(why, cap, "%s", att->why_cudnn);
    if (r == OPARA_OK) {
        att->shared = sh;
        att->dev = sh->devs[opt->device];
        att->ctx = sh->ctxs[opt->device];
        *cu = sh->cu;
        if (att->cublas == OPARA_OK) *cublas = sh->cublas;
        if (att->cudnn == OPARA_OK) *dnn = sh->dnn;
        opara__atomic_add(&sh->sessions, 1);
    }
    opara__mutex_unlock(&rt->lock);
    return r;
}

OPARA__PRIVATE void opara__cuda_runtime_detach(opara__cuda_shared* sh) {
    if (sh) opara__atomic_add(&sh->sessions, -1);
}
