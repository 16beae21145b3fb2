/* The CUDA backend (see opara_backend_cuda.h): device and modules, memory from the plan, binding
   of the lowered launches to device addresses, the launch sequence of the plan (eager), its
   capture into a CUDA graph, and the run. Every driver call goes through OPARA__CU so the
   session can count them (a graph-mode run makes a constant number of calls). */
/* Built as a separate file, this one emits the opara_cuda.h loader (the amalgamation emits it once
   where the header is inlined). */
#if !defined(OPARA__AMALGAMATED) && !defined(OPARA_CUDA_IMPLEMENTATION)
#  define OPARA_CUDA_IMPLEMENTATION
#endif
#include "opara_backend_cuda.h"
#include "kernels/opara_ptx.h"

#include <stdlib.h>
#include <string.h>

#define OPARA__CU(s, call) ((s)->calls++, (s)->cu.call)
#define OPARA__CUDA_ALIGN 256u
/* Alignment of every pointer handed to cuBLAS/cuDNN (and of Concat slices, for vectorised kernels):
   16 bytes, what their vectorised kernels load. */
#define OPARA__CUDA_LIB_ALIGN 16u
#define OPARA__CUDA_FILES 5

static const char* const opara__cuda_files[OPARA__CUDA_FILES] = {"elementwise", "epilogue", "layout", "norm", "pool"};

struct opara__cuda_session {
    opara_runtime* rt;
    const opara__graph* g;
    opara__cuda_options opt;
    opara_cuda_driver cu;
    opara_cuda_cublas cublas;
    opara_cuda_cudnn dnn;
    int have_cublas, have_cudnn, nvrtc_used;
    int tf32; /* TF32 requested and the device has it (compute capability 8.0+) */
    opara_CUdevice dev;
    opara_CUcontext ctx;
    int ctx_retained;
    opara__device device;
    char device_name[128];
    int cc_major, cc_minor;
    opara_CUmodule modules[OPARA__CUDA_FILES];
    opara_CUfunction funcs[OPARA__CUK_COUNT];

    opara__shape* shapes;
    opara_dtype* dtypes;
    uint64_t* value_bytes;
    opara__cuda_lowering low;
    uint8_t* skip; /* [n_launches] launches that bind found unnecessary (aliased copies) */
    opara__plan* plan;

    opara_CUdeviceptr arena, consts, inputs, params;
    uint64_t* const_off; /* [n_values] offset in consts, UINT64_MAX when not uploaded */
    uint64_t* input_off; /* [n_values] offset in inputs, UINT64_MAX when not a graph input */
    size_t params_meta_bytes;

    /* One CUDA stream per lane of the plan (streams that never overlap share one, in launch order);
       "stream" below means a CUDA stream, indexed by lane. */
    uint32_t n_streams;
    opara_CUstream* streams;
    opara_CUevent* node_events; /* [n_nodes], NULL where the plan records none */
    opara_CUevent fork_event;
    opara_CUevent* join_events; /* [n_streams] */
    opara_cublasHandle_t* blas;        /* [n_streams], NULL where the stream runs no cuBLAS call */
    opara_cudnnHandle_t* dnn_handles;  /* [n_streams], NULL where the stream runs no cuDNN call */
    opara_cudnnHandle_t dnn_probe;     /* the heuristics' handle until a stream takes it */
    /* Library workspaces: a node's library calls use the block of its slot; the nodes of one slot
       never run at the same time (opara__plan_share_scratch). */
    uint32_t* ws_slot;                 /* [n_nodes] slot of the node's calls, UINT32_MAX when none */
    uint64_t* ws_off;                  /* [n_nodes] (room for one per slot) a slot's offset in the arena allocation */
    uint64_t* ws_bytes;                /* [n_nodes] (as ws_off) its size */
    uint32_t n_workspaces;             /* slots */
    uint64_t workspace_bytes;          /* all slots */
    uint32_t* blas_slot;               /* [n_streams] the workspace slot a cuBLAS handle holds now */

    opara__cuda_mode mode;
    char fallback[256];
    opara_CUgraph graph;
    opara_CUgraphExec exec;
    uint64_t calls, calls_last_run;
    opara__cuda_op_profile* prof; /* [n_nodes] what the plan's descriptors came from */
    opara__cuda_node_hook hook;   /* profiling runs only */
    void* hook_user;
};

/* ---- errors ------------------------------------------------------------------------------------ */

static opara_result opara__cub_cu_fail(opara__cuda_session* s, opara_CUresult r, const char* what) {
    opara_result code = r == OPARA_CUDA_ERROR_OUT_OF_MEMORY ? OPARA_ERR_DEVICE_MEMORY : OPARA_ERR_CUDA;
    return opara__fail(s->rt, code, "CUDA backend: %s failed: %s (%d)", what, opara_cuda_driver_result_name(&s->cu, r),
                       (int)r);
}
#define OPARA__CU_TRY(s, call, what)                                           \
    do {                                                                       \
        opara_CUresult opara__r_ = OPARA__CU(s, call);                         \
        if (opara__r_ != OPARA_CUDA_SUCCESS) return opara__cub_cu_fail(s, opara__r_, what); \
    } while (0)

static opara_result opara__cub_oom(opara__cuda_session* s) {
    return opara__fail(s->rt, OPARA_ERR_OUT_OF_MEMORY, "CUDA backend: out of host memory");
}

/* ---- driver, device, modules ------------------------------------------------------------------- */

static opara_result opara__cub_cuda_load_driver(opara_runtime* rt, opara_cuda_driver* cu, const char* path) {
    char err[2048];
    opara_cuda_load_status st = opara_cuda_driver_load(cu, path, err, sizeof err);
    switch (st) {
    case OPARA_CUDA_LOAD_OK: return OPARA_OK;
    case OPARA_CUDA_LOAD_NOT_FOUND: return opara__fail(rt, OPARA_ERR_LIB_NOT_FOUND, "CUDA backend: %s", err);
    case OPARA_CUDA_LOAD_SYMBOL_MISSING: return opara__fail(rt, OPARA_ERR_SYMBOL_NOT_FOUND, "CUDA backend: %s", err);
    default: return opara__fail(rt, OPARA_ERR_NO_BACKEND, "CUDA backend: %s", err);
    }
}

OPARA__PRIVATE int opara__cuda_available(const char* driver_path, char* reason, size_t cap) {
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

static int opara__cub_dev_attr(opara__cuda_session* s, opara_CUdevice_attribute a, int fallback) {
    int v = 0;
    if (OPARA__CU(s, cuDeviceGetAttribute(&v, a, s->dev)) != OPARA_CUDA_SUCCESS || v <= 0) return fallback;
    return v;
}

/* Limits of the real device for the scheduler; throughput numbers from the closest preset. */
static void opara__cub_cuda_describe_device(opara__cuda_session* s) {
    const opara__device* base = opara__device_default();
    s->device = *base;
    OPARA__CU(s, cuDeviceGetName(s->device_name, (int)sizeof s->device_name - 1, s->dev));
    s->device.name = s->device_name;
    s->cc_major = opara__cub_dev_attr(s, OPARA_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 7);
    s->cc_minor = opara__cub_dev_attr(s, OPARA_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 5);
    s->device.sms = (uint32_t)opara__cub_dev_attr(s, OPARA_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, (int)base->sms);
    s->device.max_threads_per_block =
        (uint32_t)opara__cub_dev_attr(s, OPARA_CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, (int)base->max_threads_per_block);
    s->device.max_threads_per_sm =
        (uint32_t)opara__cub_dev_attr(s, OPARA_CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, (int)base->max_threads_per_sm);
    s->device.max_regs_per_block =
        (uint32_t)opara__cub_dev_attr(s, OPARA_CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK, (int)base->max_regs_per_block);
    s->device.max_regs_per_sm =
        (uint32_t)opara__cub_dev_attr(s, OPARA_CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR, (int)base->max_regs_per_sm);
    s->device.max_smem_per_block =
        (uint32_t)opara__cub_dev_attr(s, OPARA_CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, (int)base->max_smem_per_block);
    s->device.max_smem_per_sm = (uint32_t)opara__cub_dev_attr(s, OPARA_CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR,
                                                          (int)base->max_smem_per_sm);
}

static opara_result opara__cub_cuda_open_device(opara__cuda_session* s) {
    int count = 0;
    opara_result r = opara__cub_cuda_load_driver(s->rt, &s->cu, s->opt.driver_path);
    if (r != OPARA_OK) return r;
    opara__log(&s->rt->logger, OPARA_LOG_DEBUG, OPARA_LOGITEM_LIBRARY_LOADED, "CUDA driver %s (version %d)", s->cu.path,
               s->cu.driver_version);
    OPARA__CU_TRY(s, cuInit(0), "cuInit");
    OPARA__CU_TRY(s, cuDeviceGetCount(&count), "cuDeviceGetCount");
    if (count < 1) return opara__fail(s->rt, OPARA_ERR_NO_BACKEND, "CUDA backend: no CUDA device");
    if (s->opt.device < 0 || s->opt.device >= count)
        return opara__fail(s->rt, OPARA_ERR_INVALID_ARGS, "CUDA backend: device %d does not exist (%d devices)",
                           s->opt.device, count);
    OPARA__CU_TRY(s, cuDeviceGet(&s->dev, s->opt.device), "cuDeviceGet");
    OPARA__CU_TRY(s, cuDevicePrimaryCtxRetain(&s->ctx, s->dev), "cuDevicePrimaryCtxRetain");
    s->ctx_retained = 1;
    OPARA__CU_TRY(s, cuCtxSetCurrent(s->ctx), "cuCtxSetCurrent");
    opara__cub_cuda_describe_device(s);
    return OPARA_OK;
}

/* The lines of a generated image joined into one malloc'ed string. */
static char* opara__cub_join_lines(opara__cuda_session* s, const char* const* lines) {
    size_t n = 1, i, at = 0;
    char* out;
    for (i = 0; lines[i]; ++i) n += strlen(lines[i]);
    out = (char*)opara__alloc(s->rt, n);
    if (!out) return NULL;
    for (i = 0; lines[i]; ++i) {
        size_t len = strlen(lines[i]);
        memcpy(out + at, lines[i], len);
        at += len;
    }
    out[at] = 0;
    return out;
}

static const opara__kernel_image* opara__cub_find_image(const char* file) {
    size_t i;
    for (i = 0; i < OPARA__ARRAY_COUNT(opara__kernel_images); ++i)
        if (strcmp(opara__kernel_images[i].file, file) == 0) return &opara__kernel_images[i];
    return NULL;
}

/* NVRTC: the kernel source compiled for the exact device. NULL (with the reason logged) on any
   failure: the embedded PTX is then used. */
static char* opara__cub_nvrtc_compile(opara__cuda_session* s, opara_cuda_nvrtc* nv, const opara__kernel_image* img) {
    opara_nvrtcProgram prog = NULL;
    char arch[64];
    const char* opts[2];
    char* src = opara__cub_join_lines(s, img->source);
    char* ptx = NULL;
    size_t size = 0;
    if (!src) return NULL;
    opara__format(arch, sizeof arch, "--gpu-architecture=compute_%d%d", s->cc_major, s->cc_minor);
    opts[0] = arch;
    opts[1] = "--std=c++11";
    if (nv->nvrtcCreateProgram(&prog, src, img->file, 0, NULL, NULL) == OPARA_NVRTC_SUCCESS) {
        opara_nvrtcResult r = nv->nvrtcCompileProgram(prog, 2, opts);
        if (r == OPARA_NVRTC_SUCCESS && nv->nvrtcGetPTXSize(prog, &size) == OPARA_NVRTC_SUCCESS &&
            (ptx = (char*)opara__alloc(s->rt, size + 1)) != NULL) {
            if (nv->nvrtcGetPTX(prog, ptx) != OPARA_NVRTC_SUCCESS) {
                opara__free(s->rt, ptx);
                ptx = NULL;
            }
        } else if (r != OPARA_NVRTC_SUCCESS) {
            opara__log(&s->rt->logger, OPARA_LOG_WARN, OPARA_LOGITEM_BACKEND_FALLBACK,
                       "NVRTC could not compile %s.cu for %s (%s); using the embedded PTX", img->file, arch,
                       nv->nvrtcGetErrorString(r));
        }
        nv->nvrtcDestroyProgram(&prog);
    }
    opara__free(s->rt, src);
    return ptx;
}

static opara_result opara__cub_cuda_load_modules(opara__cuda_session* s) {
    opara_cuda_nvrtc nv;
    char err[2048];
    int have_nvrtc = 0, k;
    size_t f;
    memset(&nv, 0, sizeof nv);
    if (s->opt.use_nvrtc) {
        have_nvrtc = opara_cuda_nvrtc_load(&nv, s->opt.nvrtc_path, err, sizeof err) == OPARA_CUDA_LOAD_OK;
        if (!have_nvrtc)
            opara__log(&s->rt->logger, OPARA_LOG_INFO, OPARA_LOGITEM_BACKEND_FALLBACK,
                       "NVRTC not loaded (%s); using the embedded PTX", err);
    }
    for (f = 0; f < OPARA__CUDA_FILES; ++f) {
        const opara__kernel_image* img = opara__cub_find_image(opara__cuda_files[f]);
        char* ptx = NULL;
        opara_CUresult cr;
        if (!img) return opara__fail(s->rt, OPARA_ERR_INTERNAL, "CUDA backend: kernel file %s is not embedded", opara__cuda_files[f]);
        if (have_nvrtc && (ptx = opara__cub_nvrtc_compile(s, &nv, img)) != NULL) s->nvrtc_used = 1;
        if (!ptx) ptx = opara__cub_join_lines(s, img->ptx);
        if (!ptx) {
            opara_cuda_nvrtc_unload(&nv);
            return opara__cub_oom(s);
        }
        cr = OPARA__CU(s, cuModuleLoadDataEx(&s->modules[f], ptx, 0, NULL, NULL));
        opara__free(s->rt, ptx);
        if (cr != OPARA_CUDA_SUCCESS) {
            opara_cuda_nvrtc_unload(&nv);
            return opara__cub_cu_fail(s, cr, "cuModuleLoadDataEx of the embedded kernels");
        }
    }
    opara_cuda_nvrtc_unload(&nv);
    for (k = 0; k < OPARA__CUK_COUNT; ++k) {
        const char* file = opara__cuda_kernel_file((opara__cuda_kernel)k);
        for (f = 0; f < OPARA__CUDA_FILES && strcmp(file, opara__cuda_files[f]) != 0; ++f) {
        }
        if (f == OPARA__CUDA_FILES) return opara__fail(s->rt, OPARA_ERR_INTERNAL, "CUDA backend: no module for %s", file);
        OPARA__CU_TRY(s, cuModuleGetFunction(&s->funcs[k], s->modules[f], opara__cuda_kernel_name((opara__cuda_kernel)k)),
                      "cuModuleGetFunction");
    }
    return OPARA_OK;
}

static void opara__cub_cuda_load_cublas(opara__cuda_session* s) {
    char err[2048];
    const char* env = getenv("OPARA_CUBLAS");
    const char* path = s->opt.cublas_path ? s->opt.cublas_path : (env && *env ? env : NULL);
    if (s->opt.no_cublas) return;
    if (opara_cuda_cublas_load(&s->cublas, path, err, sizeof err) == OPARA_CUDA_LOAD_OK) {
        s->have_cublas = 1;
        opara__log(&s->rt->logger, OPARA_LOG_DEBUG, OPARA_LOGITEM_LIBRARY_LOADED, "cuBLAS %s", s->cublas.path);
    } else {
        opara__log(&s->rt->logger, OPARA_LOG_INFO, OPARA_LOGITEM_BACKEND_FALLBACK,
                   "cuBLAS not loaded (%s); Gemm/MatMul use opara_sgemm_f32", err);
    }
}

/* cuDNN and the handle its heuristics need. A library that does not load or whose handle cannot be
   created (e.g. no usable device for it) means our convolution kernel, with the reason logged;
   running out of device memory is an error. */
static opara_result opara__cub_cuda_load_cudnn(opara__cuda_session* s) {
    char err[2048];
    opara_cudnnStatus_t st;
    if (s->opt.no_cudnn) return OPARA_OK;
    if (opara_cuda_cudnn_load(&s->dnn, s->opt.cudnn_path, err, sizeof err) != OPARA_CUDA_LOAD_OK) {
        opara__log(&s->rt->logger, OPARA_LOG_INFO, OPARA_LOGITEM_BACKEND_FALLBACK,
                   "cuDNN not loaded (%s); Conv uses opara_conv2d_f32", err);
        return OPARA_OK;
    }
    st = s->dnn.cudnnCreate(&s->dnn_probe);
    if (st == OPARA_CUDNN_STATUS_SUCCESS) {
        s->have_cudnn = 1;
        opara__log(&s->rt->logger, OPARA_LOG_DEBUG, OPARA_LOGITEM_LIBRARY_LOADED, "cuDNN %s (version %zu)", s->dnn.path,
                   s->dnn.cudnnGetVersion());
        return OPARA_OK;
    }
    s->dnn_probe = NULL;
    opara__log(&s->rt->logger, OPARA_LOG_INFO, OPARA_LOGITEM_BACKEND_FALLBACK,
               "cuDNN %s loaded but cudnnCreate failed: %s (%d); Conv uses opara_conv2d_f32", s->dnn.path,
               opara_cudnn_status_name(st), (int)st);
    opara_cuda_cudnn_unload(&s->dnn);
    if (opara__cudnn_out_of_memory(st))
        return opara__fail(s->rt, OPARA_ERR_DEVICE_MEMORY, "CUDA backend: cudnnCreate ran out of device memory");
    return OPARA_OK;
}

/* ---- shapes, lowering, plan -------------------------------------------------------------------- */

static opara_result opara__cub_cuda_shapes(opara__cuda_session* s) {
    const opara__graph* g = s->g;
    opara_result r;
    s->shapes = (opara__shape*)opara__calloc(s->rt, g->n_values ? g->n_values : 1, sizeof(opara__shape));
    s->dtypes = (opara_dtype*)opara__calloc(s->rt, g->n_values ? g->n_values : 1, sizeof(opara_dtype));
    s->value_bytes = (uint64_t*)opara__calloc(s->rt, g->n_values ? g->n_values : 1, sizeof(uint64_t));
    if (!s->shapes || !s->dtypes || !s->value_bytes) return opara__cub_oom(s);
    if ((r = opara__infer_dtypes(s->rt, g, s->dtypes)) != OPARA_OK) return r;
    if ((r = opara__infer_shapes(s->rt, g, s->opt.batch > 0 ? s->opt.batch : 1, s->shapes)) != OPARA_OK) return r;
    return opara__value_bytes_from_shapes(g, s->shapes, s->value_bytes);
}

/* The scheduler's descriptors: the analytic model (FLOPs, bytes, class), with the launch shape,
   registers and shared memory of each node's main kernel from the profiler (opara_cuda_profile.c)
   and, after a profiling run, its measured time. */
static opara_result opara__cub_cuda_descs(opara__cuda_session* s, opara__op_desc* descs) {
    opara_result r = opara__describe_ops(s->g, s->shapes, &s->device, descs);
    if (r != OPARA_OK) return r;
    s->prof = (opara__cuda_op_profile*)opara__calloc(s->rt, s->g->n_nodes ? s->g->n_nodes : 1, sizeof *s->prof);
    if (!s->prof) return opara__cub_oom(s);
    r = opara__cuda_profile_static(s->rt, &s->cu, s->funcs, s->g, s->shapes, &s->low, s->opt.measured, s->prof);
    if (r == OPARA_OK) opara__cuda_profile_to_descs(s->prof, s->g->n_nodes, descs);
    return r;
}

static opara_result opara__cub_cuda_make_plan(opara__cuda_session* s) {
    opara__plan_desc pd;
    opara__op_desc* descs;
    opara_result r;
    if (s->opt.plan) pd = *s->opt.plan;
    else memset(&pd, 0, sizeof pd);
    if (s->opt.mode == OPARA__CUDA_SEQ_GRAPH) pd.strategy = OPARA_STRATEGY_SEQUENTIAL;
    if (s->opt.measured && pd.metric == OPARA__METRIC_DEFAULT) pd.metric = OPARA__METRIC_TIME;
    pd.shapes = s->shapes; /* lets Concat inputs be written in place */
    if (pd.concat_align == 0) pd.concat_align = OPARA__CUDA_LIB_ALIGN; /* tests may ask less to provoke the check in bind */
    descs = (opara__op_desc*)opara__calloc(s->rt, s->g->n_nodes ? s->g->n_nodes : 1, sizeof *descs);
    if (!descs) return opara__cub_oom(s);
    r = opara__cub_cuda_descs(s, descs);
    s->opt.measured = NULL; /* the profiler's rows live during creation only; s->prof keeps them */
    /* Streams run truly concurrently here (and a captured graph in any order its edges allow), so
       the plan is proven safe before use. */
    if (r == OPARA_OK) r = opara__plan_create_verified(s->g, s->value_bytes, descs, &s->device, &pd, &s->plan);
    if (r == OPARA_OK) s->n_streams = s->plan->n_lanes ? s->plan->n_lanes : 1;
    opara__free(s->rt, descs);
    return r;
}

/* The CUDA stream node n runs on: its plan stream's lane. */
static uint32_t opara__cub_stream_of(const opara__cuda_session* s, uint32_t n) {
    return s->plan->stream_lane[s->plan->stream[n]];
}

/* ---- device memory ------------------------------------------------------------------------------ */

static opara_result opara__cub_dalloc(opara__cuda_session* s, opara_CUdeviceptr* p, size_t bytes, const char* what) {
    opara_CUresult r;
    char buf[160];
    *p = 0;
    if (bytes == 0) return OPARA_OK;
    r = OPARA__CU(s, cuMemAlloc_v2(p, bytes));
    if (r == OPARA_CUDA_SUCCESS) return OPARA_OK;
    *p = 0;
    opara__format(buf, sizeof buf, "cuMemAlloc of %llu bytes for the %s", (unsigned long long)bytes, what);
    return opara__cub_cu_fail(s, r, buf);
}

/* Read by a node or returned as a graph output (a constant output, e.g. a folded Shape, is copied from the device). */
static int opara__cub_value_used(const opara__graph* g, uint32_t v) {
    uint32_t i;
    if (g->consumer_start[v + 1] > g->consumer_start[v]) return 1;
    for (i = 0; i < g->n_outputs; ++i)
        if (g->outputs[i] == (int32_t)v) return 1;
    return 0;
}

/* cuBLAS workspace per handle. cuBLAS docs (cublasSetWorkspace): NVIDIA recommends 32 MiB on Hopper
   (compute capability 9.0) and newer architectures, 4 MiB on the others. */
static uint64_t opara__cub_cublas_workspace(const opara__cuda_session* s) {
    return s->cc_major >= 9 ? (uint64_t)32 << 20 : (uint64_t)4 << 20;
}

/* Library workspaces. A node's library calls (a cuBLAS GEMM, or its cuDNN algorithm) need a
   workspace while they run; nodes that the plan orders against each other share one block
   (opara__plan_share_scratch: each slot is a chain of the happens-before order), so the memory
   follows how many library calls can really run at once, not the stream count. Placed after the
   plan's arena in the same allocation, so a run allocates nothing. Returns the allocation's size. */
static opara_result opara__cub_cuda_workspaces(opara__cuda_session* s, size_t* total) {
    const opara__plan* p = s->plan;
    size_t nn = p->n_nodes ? p->n_nodes : 1, base = opara__align_up((size_t)p->arena_bytes, OPARA__CUDA_ALIGN), at = base;
    uint64_t* need = (uint64_t*)opara__calloc(s->rt, nn, sizeof(uint64_t));
    uint32_t i;
    opara_result r = OPARA_OK;
    s->ws_slot = (uint32_t*)opara__calloc(s->rt, nn, sizeof(uint32_t));
    s->ws_off = (uint64_t*)opara__calloc(s->rt, nn, sizeof(uint64_t));
    s->ws_bytes = (uint64_t*)opara__calloc(s->rt, nn, sizeof(uint64_t));
    if (!s->ws_slot || !s->ws_off || !s->ws_bytes || !need) r = opara__cub_oom(s);
    for (i = 0; r == OPARA_OK && i < s->low.n_launches; ++i) {
        const opara__cuda_launch* L = &s->low.launches[i];
        uint64_t n = L->type == OPARA__CULAUNCH_CUBLAS  ? opara__cub_cublas_workspace(s)
                     : L->type == OPARA__CULAUNCH_CUDNN ? s->low.dnn_convs[L->lib].workspace
                                                        : 0;
        if (n > need[L->node]) need[L->node] = n;
    }
    if (r == OPARA_OK) r = opara__plan_share_scratch(s->g, p, need, s->ws_slot, s->ws_bytes, &s->n_workspaces);
    for (i = 0; r == OPARA_OK && i < s->n_workspaces; ++i) {
        size_t end;
        s->ws_off[i] = at;
        if (!opara__add_size(at, (size_t)s->ws_bytes[i], &end) || !opara__add_size(end, OPARA__CUDA_ALIGN - 1, &end))
            r = opara__fail(s->rt, OPARA_ERR_LIMIT_EXCEEDED, "CUDA backend: library workspaces overflow size_t");
        else at = end / OPARA__CUDA_ALIGN * OPARA__CUDA_ALIGN;
    }
    s->workspace_bytes = at - base;
    *total = at;
    opara__free(s->rt, need);
    return r;
}

/* Constants (uploaded once), static input buffers, the arena and the kernels' meta/aux tables. */
static opara_result opara__cub_cuda_memory(opara__cuda_session* s) {
    const opara__graph* g = s->g;
    size_t const_bytes = 0, input_bytes = 0, meta_bytes, params_bytes, arena_bytes = 0;
    uint32_t v, i;
    opara_result r;
    uint8_t* staging;
    s->const_off = (uint64_t*)opara__calloc(s->rt, g->n_values ? g->n_values : 1, sizeof(uint64_t));
    s->input_off = (uint64_t*)opara__calloc(s->rt, g->n_values ? g->n_values : 1, sizeof(uint64_t));
    if (!s->const_off || !s->input_off) return opara__cub_oom(s);
    for (v = 0; v < g->n_values; ++v) {
        const opara__value* val = &g->values[v];
        s->const_off[v] = UINT64_MAX;
        s->input_off[v] = UINT64_MAX;
        if (val->kind == OPARA__VALUE_CONST && val->data && val->nbytes > 0 && opara__cub_value_used(g, v)) {
            s->const_off[v] = const_bytes;
            const_bytes = opara__align_up(const_bytes + (size_t)val->nbytes, OPARA__CUDA_ALIGN);
        }
    }
    for (i = 0; i < g->n_inputs; ++i) {
        s->input_off[g->inputs[i]] = input_bytes;
        input_bytes = opara__align_up(input_bytes + (size_t)s->value_bytes[g->inputs[i]], OPARA__CUDA_ALIGN);
    }
    meta_bytes = opara__align_up(s->low.n_meta * sizeof(int32_t), OPARA__CUDA_ALIGN);
    params_bytes = meta_bytes + s->low.n_aux * sizeof(float);
    s->params_meta_bytes = meta_bytes;
    if ((r = opara__cub_cuda_workspaces(s, &arena_bytes)) != OPARA_OK) return r;
    if ((r = opara__cub_dalloc(s, &s->arena, arena_bytes, "arena and library workspaces")) != OPARA_OK) return r;
    if ((r = opara__cub_dalloc(s, &s->consts, const_bytes, "constants")) != OPARA_OK) return r;
    if ((r = opara__cub_dalloc(s, &s->inputs, input_bytes, "input buffers")) != OPARA_OK) return r;
    if ((r = opara__cub_dalloc(s, &s->params, params_bytes, "kernel tables")) != OPARA_OK) return r;
    for (v = 0; v < g->n_values; ++v)
        if (s->const_off[v] != UINT64_MAX)
            OPARA__CU_TRY(s, cuMemcpyHtoD_v2(s->consts + s->const_off[v], g->values[v].data, (size_t)g->values[v].nbytes),
                          "uploading constants");
    if (input_bytes) OPARA__CU_TRY(s, cuMemsetD8_v2(s->inputs, 0, input_bytes), "clearing the input buffers");
    if (params_bytes) {
        staging = (uint8_t*)opara__calloc(s->rt, params_bytes, 1);
        if (!staging) return opara__cub_oom(s);
        if (s->low.n_meta) memcpy(staging, s->low.meta, s->low.n_meta * sizeof(int32_t));
        if (s->low.n_aux) memcpy(staging + meta_bytes, s->low.aux, s->low.n_aux * sizeof(float));
        r = OPARA__CU(s, cuMemcpyHtoD_v2(s->params, staging, params_bytes)) == OPARA_CUDA_SUCCESS
                ? OPARA_OK : opara__fail(s->rt, OPARA_ERR_CUDA, "CUDA backend: uploading kernel tables failed");
        opara__free(s->rt, staging);
        if (r != OPARA_OK) return r;
    }
    return OPARA_OK;
}

/* Device address of value v per the plan (arena, alias of an input or constant), 0 if none. */
static opara_CUdeviceptr opara__cub_value_addr(const opara__cuda_session* s, int32_t v) {
    const opara__plan* p = s->plan;
    int32_t root;
    if (v < 0) return 0;
    if (p->storage[v] == OPARA__STORAGE_ARENA) return s->arena + p->offset[v];
    root = p->alias_root[v];
    if (root < 0) return 0;
    if (s->input_off[root] != UINT64_MAX) return s->inputs + s->input_off[root] + p->alias_offset[v];
    if (s->const_off[root] != UINT64_MAX) return s->consts + s->const_off[root] + p->alias_offset[v];
    return 0;
}

/* Every pointer a library call gets must be 16-byte aligned: the plan places Concat slices so
   (concat_align), the arena, inputs and constants are 256-aligned and the lowering aligns what
   it puts in the aux table for libraries. A violation is a defect of ours: it fails loudly. */
static int opara__cub_lib_aligned(opara__cuda_session* s, const opara__cuda_launch* L) {
    uint32_t a;
    for (a = 0; a < L->n_args; ++a) {
        uint8_t k = L->args[a].kind;
        if ((k != OPARA__CUARG_TENSOR && k != OPARA__CUARG_AUX) || L->values[a] % OPARA__CUDA_LIB_ALIGN == 0) continue;
        opara__fail(s->rt, OPARA_ERR_INTERNAL, "CUDA backend: node %u '%s': pointer argument %u of its %s call (0x%llx) is "
                                               "not %u-byte aligned", L->node, s->g->nodes[L->node].name ? s->g->nodes[L->node].name : "",
                    a, L->type == OPARA__CULAUNCH_CUBLAS ? "cuBLAS" : "cuDNN", (unsigned long long)L->values[a],
                    OPARA__CUDA_LIB_ALIGN);
        return 0;
    }
    return 1;
}

/* Kernel parameters with device addresses; drops copies the plan made unnecessary. */
static opara_result opara__cub_cuda_bind(opara__cuda_session* s) {
    const opara__graph* g = s->g;
    uint32_t i, a;
    s->skip = (uint8_t*)opara__calloc(s->rt, s->low.n_launches ? s->low.n_launches : 1, 1);
    if (!s->skip) return opara__cub_oom(s);
    for (i = 0; i < s->low.n_launches; ++i) {
        opara__cuda_launch* L = &s->low.launches[i];
        const opara__node* n = &g->nodes[L->node];
        for (a = 0; a < L->n_args; ++a) {
            const opara__cuda_arg* arg = &L->args[a];
            uint64_t v = arg->raw;
            if (arg->kind == OPARA__CUARG_TENSOR) {
                v = opara__cub_value_addr(s, arg->ref);
                if (v == 0 && s->value_bytes[arg->ref] > 0)
                    return opara__fail(s->rt, OPARA_ERR_INTERNAL, "CUDA backend: value %d of node %u has no storage",
                                       arg->ref, L->node);
                if (v) v += arg->raw;
            } else if (arg->kind == OPARA__CUARG_META) {
                v = s->params + (uint64_t)arg->ref * sizeof(int32_t);
            } else if (arg->kind == OPARA__CUARG_AUX) {
                v = s->params + s->params_meta_bytes + (uint64_t)arg->ref * sizeof(float);
            } else if (arg->kind == OPARA__CUARG_NULL) {
                v = 0;
            }
            L->values[a] = v;
            L->params[a] = &L->values[a];
        }
        if ((L->type == OPARA__CULAUNCH_CUBLAS || L->type == OPARA__CULAUNCH_CUDNN) && !opara__cub_lib_aligned(s, L))
            return OPARA_ERR_INTERNAL;
        if (L->type == OPARA__CULAUNCH_COPY)
            s->skip[i] = L->values[0] == L->values[1] || s->value_bytes[L->args[0].ref] == 0;
        if (n->op == OPARA__OP_CONCAT && L->type == OPARA__CULAUNCH_KERNEL) {
            uint32_t k;
            for (k = 0; k < n->n_inputs; ++k)
                if (n->inputs[k] == L->args[0].ref) break;
            if (k < n->n_inputs && opara__plan_concat_input_in_place(g, s->plan, L->node, k)) s->skip[i] = 1;
        }
    }
    return OPARA_OK;
}

/* ---- streams, events, library handles ----------------------------------------------------------- */

/* The workspace of node n's library calls and its size (NULL and 0 when it needs none). */
static void* opara__cub_workspace(const opara__cuda_session* s, uint32_t n, size_t* bytes) {
    uint32_t k = s->ws_slot[n];
    *bytes = k == UINT32_MAX ? 0 : (size_t)s->ws_bytes[k];
    return *bytes ? (void*)(uintptr_t)(s->arena + s->ws_off[k]) : NULL;
}

/* Points the cuBLAS handle of a stream at node n's workspace (a host-side setting: nothing is
   enqueued). Called after cublasSetStream, which resets the workspace to the default pool (that
   pool allocates during capture), and before each GEMM whose slot differs from the handle's. */
static opara_cublasStatus_t opara__cub_cublas_workspace_for(opara__cuda_session* s, uint32_t stream, uint32_t n) {
    size_t bytes;
    void* ws = opara__cub_workspace(s, n, &bytes);
    opara_cublasStatus_t st;
    if (s->blas_slot[stream] == s->ws_slot[n]) return OPARA_CUBLAS_STATUS_SUCCESS;
    st = s->cublas.cublasSetWorkspace_v2(s->blas[stream], ws, bytes);
    if (st == OPARA_CUBLAS_STATUS_SUCCESS) s->blas_slot[stream] = s->ws_slot[n];
    return st;
}

/* The first node on a stream with a launch of this type (UINT32_MAX: none). */
static uint32_t opara__cub_stream_first_call(const opara__cuda_session* s, uint32_t stream, opara__cuda_launch_type type) {
    uint32_t k, i;
    for (k = 0; k < s->plan->n_nodes; ++k) {
        uint32_t n = s->plan->order[k];
        if (opara__cub_stream_of(s, n) != stream) continue;
        for (i = s->low.node_start[n]; i < s->low.node_start[n + 1]; ++i)
            if (s->low.launches[i].type == type) return n;
    }
    return UINT32_MAX;
}

/* A cuBLAS handle bound to stream i, holding the workspace of the stream's first GEMM node (first:
   set after the stream). */
static opara_result opara__cub_cublas_handle(opara__cuda_session* s, uint32_t i, uint32_t first) {
    opara_cublasStatus_t st = s->cublas.cublasCreate_v2(&s->blas[i]);
    if (st != OPARA_CUBLAS_STATUS_SUCCESS) s->blas[i] = NULL;
    if (st == OPARA_CUBLAS_STATUS_SUCCESS) st = s->cublas.cublasSetStream_v2(s->blas[i], s->streams[i]);
    s->blas_slot[i] = UINT32_MAX - 1; /* none yet (UINT32_MAX is "no workspace") */
    if (st == OPARA_CUBLAS_STATUS_SUCCESS) st = opara__cub_cublas_workspace_for(s, i, first);
    /* cublasMath_t (cuBLAS docs; cublas_api.h): DEFAULT_MATH keeps at least the requested precision
       (so never TF32 for SGEMM); TF32_TENSOR_OP_MATH lets single-precision routines use TF32 tensor
       cores. PEDANTIC_MATH (standardised arithmetic in every phase, documented as possibly slower)
       is not needed for exact FP32. */
    if (st == OPARA_CUBLAS_STATUS_SUCCESS)
        st = s->cublas.cublasSetMathMode(s->blas[i], s->tf32 ? OPARA_CUBLAS_TF32_TENSOR_OP_MATH : OPARA_CUBLAS_DEFAULT_MATH);
    if (st == OPARA_CUBLAS_STATUS_SUCCESS) return OPARA_OK;
    return opara__fail(s->rt, st == OPARA_CUBLAS_STATUS_ALLOC_FAILED ? OPARA_ERR_DEVICE_MEMORY : OPARA_ERR_CUBLAS,
                       "CUDA backend: cuBLAS handle for stream %u: %s (%d)", i, opara_cublas_status_name(st), (int)st);
}

/* A cuDNN handle bound to stream i (the heuristics' handle serves the first stream). */
static opara_result opara__cub_cudnn_handle(opara__cuda_session* s, uint32_t i) {
    opara_cudnnStatus_t st = OPARA_CUDNN_STATUS_SUCCESS;
    if (s->dnn_probe) {
        s->dnn_handles[i] = s->dnn_probe;
        s->dnn_probe = NULL;
    } else if ((st = s->dnn.cudnnCreate(&s->dnn_handles[i])) != OPARA_CUDNN_STATUS_SUCCESS) {
        s->dnn_handles[i] = NULL;
    }
    if (st == OPARA_CUDNN_STATUS_SUCCESS) st = s->dnn.cudnnSetStream(s->dnn_handles[i], s->streams[i]);
    if (st == OPARA_CUDNN_STATUS_SUCCESS) return OPARA_OK;
    return opara__fail(s->rt, opara__cudnn_out_of_memory(st) ? OPARA_ERR_DEVICE_MEMORY : OPARA_ERR_CUDNN,
                       "CUDA backend: cuDNN handle for stream %u: %s (%d)", i, opara_cudnn_status_name(st), (int)st);
}

/* One handle per library per stream that calls it, bound to that stream. */
static opara_result opara__cub_cuda_library_handles(opara__cuda_session* s, uint32_t n_streams) {
    uint32_t i;
    opara_result r;
    s->blas = (opara_cublasHandle_t*)opara__calloc(s->rt, n_streams, sizeof(opara_cublasHandle_t));
    s->blas_slot = (uint32_t*)opara__calloc(s->rt, n_streams, sizeof(uint32_t));
    s->dnn_handles = (opara_cudnnHandle_t*)opara__calloc(s->rt, n_streams, sizeof(opara_cudnnHandle_t));
    if (!s->blas || !s->blas_slot || !s->dnn_handles) return opara__cub_oom(s);
    for (i = 0; i < n_streams; ++i) {
        uint32_t first = s->have_cublas ? opara__cub_stream_first_call(s, i, OPARA__CULAUNCH_CUBLAS) : UINT32_MAX;
        if (first != UINT32_MAX && (r = opara__cub_cublas_handle(s, i, first)) != OPARA_OK) return r;
        if (s->have_cudnn && opara__cub_stream_first_call(s, i, OPARA__CULAUNCH_CUDNN) != UINT32_MAX &&
            (r = opara__cub_cudnn_handle(s, i)) != OPARA_OK)
            return r;
    }
    return OPARA_OK;
}

static opara_result opara__cub_cuda_streams(opara__cuda_session* s) {
    const opara__plan* p = s->plan;
    uint32_t i, n_streams = s->n_streams;
    s->streams = (opara_CUstream*)opara__calloc(s->rt, n_streams, sizeof(opara_CUstream));
    s->join_events = (opara_CUevent*)opara__calloc(s->rt, n_streams, sizeof(opara_CUevent));
    s->node_events = (opara_CUevent*)opara__calloc(s->rt, p->n_nodes ? p->n_nodes : 1, sizeof(opara_CUevent));
    if (!s->streams || !s->join_events || !s->node_events) return opara__cub_oom(s);
    for (i = 0; i < n_streams; ++i) {
        OPARA__CU_TRY(s, cuStreamCreate(&s->streams[i], 1 /* CU_STREAM_NON_BLOCKING */), "cuStreamCreate");
        if (i > 0 && p->lane_join[i])
            OPARA__CU_TRY(s, cuEventCreate(&s->join_events[i], 2 /* DISABLE_TIMING */), "cuEventCreate");
    }
    OPARA__CU_TRY(s, cuEventCreate(&s->fork_event, 2), "cuEventCreate");
    for (i = 0; i < p->n_nodes; ++i)
        if (p->records_event[i]) OPARA__CU_TRY(s, cuEventCreate(&s->node_events[i], 2), "cuEventCreate");
    return opara__cub_cuda_library_handles(s, n_streams);
}

/* ---- the launch sequence ----------------------------------------------------------------------- */

/* Row-major Y = alpha op(A) op(B) through column-major cuBLAS: Y^T = op(B)^T op(A)^T. A failure
   names cuBLAS's status (not a driver code). */
static opara_result opara__cub_launch_cublas(opara__cuda_session* s, const opara__cuda_launch* L, uint32_t stream) {
    int M = (int)L->values[4], N = (int)L->values[5], K = (int)L->values[6], ta = (int)L->values[7], tb = (int)L->values[8];
    int batch = (int)L->grid[2];
    float alpha, beta = 0.0f;
    uint32_t bits = (uint32_t)L->values[9];
    opara_cublasStatus_t st = opara__cub_cublas_workspace_for(s, stream, L->node);
    memcpy(&alpha, &bits, sizeof alpha);
    if (st == OPARA_CUBLAS_STATUS_SUCCESS) st = s->cublas.cublasSgemmStridedBatched(
        s->blas[stream], tb ? OPARA_CUBLAS_OP_T : OPARA_CUBLAS_OP_N, ta ? OPARA_CUBLAS_OP_T : OPARA_CUBLAS_OP_N, N, M, K, &alpha,
        (const float*)(uintptr_t)L->values[1], tb ? K : N, (long long)L->values[17], (const float*)(uintptr_t)L->values[0],
        ta ? M : K, (long long)L->values[16], &beta, (float*)(uintptr_t)L->values[3], N, (long long)L->values[18], batch);
    if (st == OPARA_CUBLAS_STATUS_SUCCESS) return OPARA_OK;
    return opara__fail(s->rt, st == OPARA_CUBLAS_STATUS_ALLOC_FAILED ? OPARA_ERR_DEVICE_MEMORY : OPARA_ERR_CUBLAS,
                       "CUDA backend: %s for node %u failed: %s (%d)",
                       s->blas_slot[stream] == s->ws_slot[L->node] ? "cublasSgemmStridedBatched" : "cublasSetWorkspace", L->node,
                       opara_cublas_status_name(st), (int)st);
}

/* A failure names cuDNN's status (not a driver code). */
static opara_result opara__cub_launch_cudnn(opara__cuda_session* s, const opara__cuda_launch* L, uint32_t stream) {
    const opara__cudnn_conv* conv = &s->low.dnn_convs[L->lib];
    size_t bytes;
    void* ws = opara__cub_workspace(s, L->node, &bytes);
    opara_cudnnStatus_t st = opara__cudnn_conv_run(&s->dnn, s->dnn_handles[stream], conv, (const void*)(uintptr_t)L->values[0],
                                                   (const void*)(uintptr_t)L->values[1], (const void*)(uintptr_t)L->values[2],
                                                   (void*)(uintptr_t)L->values[3], ws, bytes);
    if (st == OPARA_CUDNN_STATUS_SUCCESS) return OPARA_OK;
    return opara__fail(s->rt, opara__cudnn_out_of_memory(st) ? OPARA_ERR_DEVICE_MEMORY : OPARA_ERR_CUDNN,
                       "CUDA backend: %s for node %u failed: %s (%d)",
                       conv->call == OPARA__CUDNN_FORWARD ? "cudnnConvolutionForward" : "cudnnConvolutionBiasActivationForward",
                       L->node, opara_cudnn_status_name(st), (int)st);
}

static const char* opara__cub_launch_name(const opara__cuda_launch* L) {
    return L->type == OPARA__CULAUNCH_KERNEL ? opara__cuda_kernel_name((opara__cuda_kernel)L->kernel) : "a copy";
}

/* One launch of node L->node on a stream: a library call (which reports its own status) or a
   driver call. */
static opara_result opara__cub_launch_one(opara__cuda_session* s, opara__cuda_launch* L, uint32_t stream) {
    opara_CUstream st = s->streams[stream];
    opara_CUresult r;
    char what[160];
    switch (L->type) {
    case OPARA__CULAUNCH_CUBLAS: return opara__cub_launch_cublas(s, L, stream);
    case OPARA__CULAUNCH_CUDNN: return opara__cub_launch_cudnn(s, L, stream);
    case OPARA__CULAUNCH_COPY:
        r = OPARA__CU(s, cuMemcpyDtoDAsync_v2(L->values[0], L->values[1], (size_t)s->value_bytes[L->args[0].ref], st));
        break;
    default:
        r = OPARA__CU(s, cuLaunchKernel(s->funcs[L->kernel], L->grid[0], L->grid[1], L->grid[2], L->block[0], L->block[1],
                                        L->block[2], 0, st, L->params, NULL));
        break;
    }
    if (r == OPARA_CUDA_SUCCESS) return OPARA_OK;
    opara__format(what, sizeof what, "launching %s for node %u", opara__cub_launch_name(L), L->node);
    return opara__cub_cu_fail(s, r, what);
}

/* Everything the plan says, in its order, from the origin stream 0: fork, per node its waits,
   launches and event, then the join. Used for eager runs and, unchanged, for capture. */
static opara_result opara__cub_cuda_enqueue(opara__cuda_session* s) {
    const opara__plan* p = s->plan;
    opara_CUstream origin = s->streams[0];
    uint32_t k, i, st;
    OPARA__CU_TRY(s, cuEventRecord(s->fork_event, origin), "cuEventRecord (fork)");
    for (st = 1; st < s->n_streams; ++st)
        if (p->lane_fork[st]) OPARA__CU_TRY(s, cuStreamWaitEvent(s->streams[st], s->fork_event, 0), "cuStreamWaitEvent (fork)");
    for (k = 0; k < p->n_nodes; ++k) {
        uint32_t n = p->order[k], sn = opara__cub_stream_of(s, n);
        opara_result hr;
        int began = 0;
        for (i = p->wait_start[n]; i < p->wait_start[n + 1]; ++i)
            if (opara__cub_stream_of(s, p->wait_nodes[i]) != sn) /* else launched earlier on this very stream */
                OPARA__CU_TRY(s, cuStreamWaitEvent(s->streams[sn], s->node_events[p->wait_nodes[i]], 0), "cuStreamWaitEvent");
        for (i = s->low.node_start[n]; i < s->low.node_start[n + 1]; ++i) {
            if (s->skip[i]) continue;
            if (s->hook && !began++ && (hr = s->hook(s->hook_user, n, 0, s->streams[sn])) != OPARA_OK) return hr;
            if ((hr = opara__cub_launch_one(s, &s->low.launches[i], sn)) != OPARA_OK) return hr;
        }
        if (began && (hr = s->hook(s->hook_user, n, 1, s->streams[sn])) != OPARA_OK) return hr;
        if (p->records_event[n]) OPARA__CU_TRY(s, cuEventRecord(s->node_events[n], s->streams[sn]), "cuEventRecord");
    }
    for (st = 1; st < s->n_streams; ++st) {
        if (!p->lane_join[st]) continue;
        OPARA__CU_TRY(s, cuEventRecord(s->join_events[st], s->streams[st]), "cuEventRecord (join)");
        OPARA__CU_TRY(s, cuStreamWaitEvent(origin, s->join_events[st], 0), "cuStreamWaitEvent (join)");
    }
    return OPARA_OK;
}

OPARA__PRIVATE opara_result opara__cuda_session_enqueue_hooked(opara__cuda_session* s, opara__cuda_node_hook hook,
                                                              void* user) {
    opara_result r;
    s->hook = hook;
    s->hook_user = user;
    r = opara__cub_cuda_enqueue(s);
    s->hook = NULL;
    s->hook_user = NULL;
    if (r != OPARA_OK) return r;
    OPARA__CU_TRY(s, cuStreamSynchronize(s->streams[0]), "the profiling run");
    return OPARA_OK;
}

/* Captures the sequence from the origin stream and instantiates it. On failure returns the
   reason in why (the caller falls back to eager). */
static int opara__cub_cuda_capture(opara__cuda_session* s, char* why, size_t cap) {
    opara_CUstream origin = s->streams[0];
    opara_CUresult r;
    opara_result er;
    opara_CUgraph graph = NULL;
    r = OPARA__CU(s, cuStreamBeginCapture_v2(origin, OPARA_CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    if (r != OPARA_CUDA_SUCCESS) {
        opara__format(why, cap, "cuStreamBeginCapture: %s", opara_cuda_driver_result_name(&s->cu, r));
        return 0;
    }
    er = opara__cub_cuda_enqueue(s);
    if (er == OPARA_OK && s->opt.test_break_capture) {
        opara_CUdeviceptr p = 0; /* an unsafe call during capture: it invalidates the capture */
        if (OPARA__CU(s, cuMemAlloc_v2(&p, 256)) == OPARA_CUDA_SUCCESS) OPARA__CU(s, cuMemFree_v2(p));
    }
    r = OPARA__CU(s, cuStreamEndCapture(origin, &graph));
    if (er != OPARA_OK) {
        opara__format(why, cap, "capturing the launch sequence: %s", opara_runtime_last_error(s->rt));
        if (graph) OPARA__CU(s, cuGraphDestroy(graph));
        return 0;
    }
    if (r != OPARA_CUDA_SUCCESS || !graph) {
        opara__format(why, cap, "cuStreamEndCapture: %s", opara_cuda_driver_result_name(&s->cu, r));
        return 0;
    }
    s->graph = graph;
    r = OPARA__CU(s, cuGraphInstantiateWithFlags(&s->exec, graph, 0));
    if (r != OPARA_CUDA_SUCCESS) {
        s->exec = NULL;
        opara__format(why, cap, "cuGraphInstantiateWithFlags: %s", opara_cuda_driver_result_name(&s->cu, r));
        return 0;
    }
    return 1;
}

/* ---- lifecycle ---------------------------------------------------------------------------------- */

static void opara__cub_cuda_free_device(opara__cuda_session* s) {
    uint32_t i, n_streams = s->n_streams;
    if (s->exec) OPARA__CU(s, cuGraphExecDestroy(s->exec));
    if (s->graph) OPARA__CU(s, cuGraphDestroy(s->graph));
    if (s->streams)
        for (i = 0; i < n_streams; ++i)
            if (s->streams[i]) OPARA__CU(s, cuStreamSynchronize(s->streams[i]));
    if (s->blas)
        for (i = 0; i < n_streams; ++i)
            if (s->blas[i]) s->cublas.cublasDestroy_v2(s->blas[i]);
    if (s->dnn_handles)
        for (i = 0; i < n_streams; ++i)
            if (s->dnn_handles[i]) s->dnn.cudnnDestroy(s->dnn_handles[i]);
    if (s->dnn_probe) s->dnn.cudnnDestroy(s->dnn_probe);
    if (s->node_events && s->plan)
        for (i = 0; i < s->plan->n_nodes; ++i)
            if (s->node_events[i]) OPARA__CU(s, cuEventDestroy_v2(s->node_events[i]));
    if (s->join_events)
        for (i = 0; i < n_streams; ++i)
            if (s->join_events[i]) OPARA__CU(s, cuEventDestroy_v2(s->join_events[i]));
    if (s->fork_event) OPARA__CU(s, cuEventDestroy_v2(s->fork_event));
    if (s->streams)
        for (i = 0; i < n_streams; ++i)
            if (s->streams[i]) OPARA__CU(s, cuStreamDestroy_v2(s->streams[i]));
    if (s->arena) OPARA__CU(s, cuMemFree_v2(s->arena));
    if (s->consts) OPARA__CU(s, cuMemFree_v2(s->consts));
    if (s->inputs) OPARA__CU(s, cuMemFree_v2(s->inputs));
    if (s->params) OPARA__CU(s, cuMemFree_v2(s->params));
    for (i = 0; i < OPARA__CUDA_FILES; ++i)
        if (s->modules[i]) OPARA__CU(s, cuModuleUnload(s->modules[i]));
    if (s->ctx_retained) OPARA__CU(s, cuDevicePrimaryCtxRelease_v2(s->dev));
}

OPARA__PRIVATE void opara__cuda_session_destroy(opara__cuda_session* s) {
    opara_runtime* rt;
    if (!s) return;
    rt = s->rt;
    if (s->cu.library) opara__cub_cuda_free_device(s);
    opara__free(rt, s->streams);
    opara__free(rt, s->join_events);
    opara__free(rt, s->node_events);
    opara__free(rt, s->blas);
    opara__free(rt, s->dnn_handles);
    opara__free(rt, s->ws_slot);
    opara__free(rt, s->ws_off);
    opara__free(rt, s->ws_bytes);
    opara__free(rt, s->blas_slot);
    opara__free(rt, s->const_off);
    opara__free(rt, s->input_off);
    opara__free(rt, s->skip);
    opara__free(rt, s->prof);
    if (s->plan) opara__plan_free(rt, s->plan);
    opara__cuda_lowering_free(rt, &s->low);
    opara__free(rt, s->shapes);
    opara__free(rt, s->dtypes);
    opara__free(rt, s->value_bytes);
    if (s->have_cublas) opara_cuda_cublas_unload(&s->cublas);
    if (s->have_cudnn) opara_cuda_cudnn_unload(&s->dnn); /* after the lowering: it held cuDNN descriptors */
    opara_cuda_driver_unload(&s->cu);
    opara__free(rt, s);
}

/* Which library runs what, and the workspaces' memory (INFO: `opara run` shows it). */
static void opara__cub_cuda_log_libraries(const opara__cuda_session* s) {
    uint32_t n, calls = 0;
    for (n = 0; n < s->plan->n_nodes; ++n) calls += s->ws_slot[n] != UINT32_MAX;
    opara__log(&s->rt->logger, OPARA_LOG_INFO, OPARA_LOGITEM_PLAN_SUMMARY,
               "CUDA backend: the plan's %u streams on %u CUDA streams; %u of %u Conv on cuDNN%s, GEMM on %s, %s; "
               "library workspaces %.2f MiB: %u blocks shared by the %u nodes that need one (arena %.2f MiB, same allocation)",
               s->plan->n_streams, s->n_streams, s->low.n_dnn_convs, s->low.n_conv,
               s->low.n_dnn_refused ? " (cuDNN refused some: see the warnings)" : "",
               s->have_cublas ? "cuBLAS" : "opara_sgemm_f32", s->tf32 ? "TF32 allowed" : "exact FP32",
               (double)s->workspace_bytes / 1048576.0, s->n_workspaces, calls, (double)s->plan->arena_bytes / 1048576.0);
}

static opara_result opara__cub_cuda_setup(opara__cuda_session* s) {
    opara_result r;
    if ((r = opara__cub_cuda_open_device(s)) != OPARA_OK) return r;
    if ((r = opara__cub_cuda_load_modules(s)) != OPARA_OK) return r;
    if ((r = opara__cub_cuda_shapes(s)) != OPARA_OK) return r;
    opara__cub_cuda_load_cublas(s);
    if ((r = opara__cub_cuda_load_cudnn(s)) != OPARA_OK) return r;
    /* TF32 tensor cores exist from compute capability 8.0 (Ampere); below, TF32 means FP32 */
    s->tf32 = s->opt.precision == OPARA_PRECISION_TF32 && s->cc_major >= 8;
    if (s->opt.precision == OPARA_PRECISION_TF32 && !s->tf32)
        opara__log(&s->rt->logger, OPARA_LOG_INFO, OPARA_LOGITEM_BACKEND_FALLBACK,
                   "CUDA backend: TF32 requested, but %s (compute capability %d.%d) has no TF32 tensor cores: exact FP32",
                   s->device_name, s->cc_major, s->cc_minor);
    s->low.use_cublas = s->have_cublas;
    s->low.tf32 = s->tf32;
    if (s->have_cudnn) s->low.dnn = &s->dnn, s->low.dnn_handle = s->dnn_probe;
    if ((r = opara__cuda_lower(s->rt, s->g, s->shapes, s->dtypes, &s->low)) != OPARA_OK) return r;
    if ((r = opara__cub_cuda_make_plan(s)) != OPARA_OK) return r;
    if ((r = opara__cub_cuda_memory(s)) != OPARA_OK) return r;
    if ((r = opara__cub_cuda_bind(s)) != OPARA_OK) return r;
    if ((r = opara__cub_cuda_streams(s)) != OPARA_OK) return r;
    opara__cub_cuda_log_libraries(s);
    return OPARA_OK;
}

/* Graph modes: a warm-up run (so lazy library state exists before capture), then capture and
   instantiate; on failure eager, with the reason logged. */
static opara_result opara__cub_cuda_prepare_mode(opara__cuda_session* s) {
    opara_result r;
    s->mode = s->opt.mode;
    if (s->mode == OPARA__CUDA_EAGER) return OPARA_OK;
    if ((r = opara__cub_cuda_enqueue(s)) != OPARA_OK) return r;
    OPARA__CU_TRY(s, cuStreamSynchronize(s->streams[0]), "warm-up run");
    if (!opara__cub_cuda_capture(s, s->fallback, sizeof s->fallback)) {
        opara__log(&s->rt->logger, OPARA_LOG_WARN, OPARA_LOGITEM_GRAPH_FALLBACK,
                   "CUDA graph %s failed, using eager multi-stream launch: %s",
                   s->opt.mode == OPARA__CUDA_SEQ_GRAPH ? "(sequential)" : "capture", s->fallback);
        if (s->exec) OPARA__CU(s, cuGraphExecDestroy(s->exec));
        s->exec = NULL;
        s->mode = OPARA__CUDA_EAGER;
        /* the streams must be usable again: a failed capture leaves no pending work */
        OPARA__CU_TRY(s, cuStreamSynchronize(s->streams[0]), "after a failed capture");
    }
    return OPARA_OK;
}

OPARA__PRIVATE opara_result opara__cuda_session_create(opara_runtime* rt, const opara__graph* g,
                                                      const opara__cuda_options* opt, opara__cuda_session** out) {
    opara__cuda_session* s;
    opara_result r;
    if (!out) return opara__fail(rt, OPARA_ERR_INVALID_ARGS, "CUDA backend: out is NULL");
    *out = NULL;
    if (!g || !g->finalized) return opara__fail(rt, OPARA_ERR_INVALID_ARGS, "CUDA backend: the graph is not finalized");
    if (opt && opt->profile) return opara__cuda_profile_create(rt, g, opt, out);
    s = (opara__cuda_session*)opara__calloc(rt, 1, sizeof *s);
    if (!s) return opara__fail(rt, OPARA_ERR_OUT_OF_MEMORY, "CUDA backend: out of host memory");
    s->rt = rt;
    s->g = g;
    if (opt) s->opt = *opt;
    if ((unsigned)s->opt.precision >= (unsigned)OPARA_PRECISION_COUNT) {
        opara__free(rt, s);
        return opara__fail(rt, OPARA_ERR_BAD_ENUM, "CUDA backend: unknown precision %d", (int)s->opt.precision);
    }
    r = opara__cub_cuda_setup(s);
    if (r == OPARA_OK) r = opara__cub_cuda_prepare_mode(s);
    if (r != OPARA_OK) {
        opara__cuda_session_destroy(s); /* makes no opara__fail: the first failure's text stays */
        return r;
    }
    *out = s;
    return OPARA_OK;
}

OPARA__PRIVATE opara_result opara__cuda_session_run(opara__cuda_session* s, const void* const* inputs,
                                                   void* const* outputs) {
    const opara__graph* g = s->g;
    opara_CUstream origin = s->streams[0];
    uint64_t before = s->calls;
    uint32_t i;
    opara_result r;
    for (i = 0; i < g->n_inputs; ++i) {
        int32_t v = g->inputs[i];
        if (s->value_bytes[v] == 0) continue;
        if (!inputs || !inputs[i]) return opara__fail(s->rt, OPARA_ERR_INVALID_ARGS, "CUDA backend: input %u is NULL", i);
        OPARA__CU_TRY(s, cuMemcpyHtoDAsync_v2(s->inputs + s->input_off[v], inputs[i], (size_t)s->value_bytes[v], origin),
                      "copying an input to the device");
    }
    if (s->mode == OPARA__CUDA_EAGER) {
        if ((r = opara__cub_cuda_enqueue(s)) != OPARA_OK) return r;
    } else {
        OPARA__CU_TRY(s, cuGraphLaunch(s->exec, origin), "cuGraphLaunch");
    }
    for (i = 0; i < g->n_outputs; ++i) {
        int32_t v = g->outputs[i];
        if (s->value_bytes[v] == 0) continue;
        if (!outputs || !outputs[i]) return opara__fail(s->rt, OPARA_ERR_INVALID_ARGS, "CUDA backend: output %u is NULL", i);
        OPARA__CU_TRY(s, cuMemcpyDtoHAsync_v2(outputs[i], opara__cub_value_addr(s, v), (size_t)s->value_bytes[v], origin),
                      "copying an output to the host");
    }
    OPARA__CU_TRY(s, cuStreamSynchronize(origin), "running the model");
    s->calls_last_run = s->calls - before;
    return OPARA_OK;
}

OPARA__PRIVATE void opara__cuda_session_info(const opara__cuda_session* s, opara__cuda_info* info) {
    memset(info, 0, sizeof *info);
    info->mode = s->mode;
    opara__format(info->fallback_reason, sizeof info->fallback_reason, "%s", s->fallback);
    info->cublas = s->have_cublas;
    info->cudnn = s->have_cudnn;
    info->precision = s->tf32 ? OPARA_PRECISION_TF32 : OPARA_PRECISION_FP32;
    info->n_conv = s->low.n_conv;
    info->n_cudnn_convs = s->low.n_dnn_convs;
    info->n_cudnn_refused = s->low.n_dnn_refused;
    info->workspace_bytes = s->workspace_bytes;
    info->n_workspaces = s->n_workspaces;
    info->workspace_slot = s->ws_slot;
    info->workspace_offset = s->ws_off;
    info->workspace_size = s->ws_bytes;
    info->nvrtc = s->nvrtc_used;
    info->n_launches = s->low.n_launches;
    info->driver_calls_last_run = s->calls_last_run;
    info->arena_bytes = s->plan ? s->plan->arena_bytes : 0;
    info->plan = s->plan;
    info->shapes = s->shapes;
    info->graph = s->graph;
    info->launches = s->low.launches;
    info->node_launch_start = s->low.node_start;
    info->profile = s->prof;
}

OPARA__PRIVATE const opara_cuda_driver* opara__cuda_session_driver(const opara__cuda_session* s) { return &s->cu; }
