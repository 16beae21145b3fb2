/* The CUDA backend (see opara_backend_cuda.h): attaching to the runtime's CUDA state
   (opara_cuda_runtime.c), device and modules, memory from the plan, binding
   of the lowered launches to device addresses, the launch sequence of the plan (eager), its
   capture into a CUDA graph, and the run. Every driver call goes through OPARA__CU so the
   session can count them (a graph-mode run makes a constant number of calls), and every entry
   point makes the session's context current with push/pop, so it works from any thread and
   leaves the caller's current context as it was. */
/* Built as a separate file, this one emits the opara_cuda.h loader (the amalgamation emits it once
   where the header is inlined). */
#if !defined(OPARA__AMALGAMATED) && !defined(OPARA_CUDA_IMPLEMENTATION)
#  define OPARA_CUDA_IMPLEMENTATION
#endif
#include "opara_backend_cuda.h"
#include "kernels/opara_ptx.h"
/* The kernel sources for NVRTC live in the companion opara_nvrtc.h (beside opara.h), compiled in only on
   request: most programs run the embedded PTX, and the sources would double the kernels' share of opara.h. */
#ifdef OPARA_NVRTC_SOURCE
#  include "../../opara_nvrtc.h"
#endif

#include <stdlib.h>
#include <string.h>

#define OPARA__CU(s, call) ((s)->calls++, (s)->cu.call)
#define OPARA__CUDA_ALIGN 256u
/* Alignment of every pointer handed to cuBLAS/cuDNN (and of Concat slices, for vectorised kernels):
   16 bytes, what their vectorised kernels load. */
#define OPARA__CUDA_LIB_ALIGN 16u
#define OPARA__CUDA_FILES 10
/* Host runs copy inputs and outputs through the pinned staging in pieces of this many bytes, so the
   DMA of one piece runs while the host copies the next (the runs' copies are pipelined). 512 KiB: a
   piece costs one driver call (a few us) and the last piece's DMA is not hidden (~20 us at PCIe 4/5
   rates), so for a few MB the sum is lowest around 0.5 MiB (sqrt(bytes x call time x bandwidth)),
   and a piece stays in the host's L2 between memcpy and DMA. Defined before including opara.h, it
   changes the default. */
#ifndef OPARA_CUDA_IO_CHUNK
#  define OPARA_CUDA_IO_CHUNK (512u * 1024u)
#endif

/* Host inputs of at least this many bytes go to the device straight from the caller's memory instead
   of through the staging: cuMemcpyHtoDAsync from pageable memory, which the driver stages through its
   own pinned buffers (it may return before or after the DMA: "API synchronization behavior"; the run
   synchronizes before returning, so the caller's buffer is never read after it). PyTorch copies this
   way. On an H100 (docs/GPU-CHECK.md) the two paths timed the same within run-to-run noise
   (SqueezeNet batch 8, 4.8 MB in: 1.06 and 0.99 ms direct, 1.03 and 1.05 ms staged, interleaved); the
   direct one is kept for large inputs because it spends no host time copying into our staging and
   one driver call per input. 0: never. Defined before including opara.h, it changes the default. */
#ifndef OPARA_CUDA_IO_DIRECT
#  define OPARA_CUDA_IO_DIRECT (1024u * 1024u)
#endif

static const char* const opara__cuda_files[OPARA__CUDA_FILES] = {"cast", "elementwise", "epilogue", "gather", "layout", "logic",
                                                                  "norm", "pool", "quant", "reduce"};

struct opara__cuda_session {
    opara_runtime* rt;
    const opara__graph* g;
    opara__cuda_options opt;
    /* copies of the runtime's tables (they never change while the runtime has them loaded) */
    opara_cuda_driver cu;
    opara_cuda_cublas cublas;
    opara_cuda_cudnn dnn;
    opara__cuda_shared* shared; /* the runtime's CUDA state; NULL until attached */
    opara__errbuf* err;         /* where failures go: the runtime's buffer during creation, then error */
    opara__errbuf error;        /* failures of runs (which may happen on any thread) */
    int have_cublas, have_cudnn, nvrtc_used;
    int tf32; /* TF32 requested and the device has it (compute capability 8.0+) */
    char kernels[160]; /* where our kernels came from (opara__cuda_info.kernels) */
    char nvrtc_lib[OPARA_CUDA_PATH_MAX + 32]; /* "NVRTC 13.0 /path" when NVRTC compiled kernels, else "" */
    char libraries[4 * OPARA_CUDA_PATH_MAX + 160]; /* each library in use with version and path (info.libraries) */
    opara_CUdevice dev;
    opara_CUcontext ctx;        /* the device's primary context, retained by the runtime */
    opara__device device;
    char device_name[128];
    int cc_major, cc_minor;
    opara_CUmodule modules[OPARA__CUDA_FILES];
    opara_CUfunction funcs[OPARA__CUK_COUNT];

    opara__shape* shapes;
    opara__node_params* node_params; /* [n_nodes] what the shape engine resolved per node */
    opara_dtype* dtypes;
    uint64_t* value_bytes;
    opara__cuda_lowering low;
    uint8_t* skip; /* [n_launches] launches that bind found unnecessary (aliased copies) */
    opara__plan* plan;

    opara_CUdeviceptr arena, consts, inputs, params;
    uint64_t* const_off; /* [n_values] offset in consts, UINT64_MAX when not uploaded */
    uint64_t* input_off; /* [n_values] offset in inputs, UINT64_MAX when not a graph input */
    size_t params_meta_bytes;
    size_t input_bytes;  /* the input buffers, laid out alike on the device and in host_io */
    /* Pinned (page-locked) host staging: [0, input_bytes) mirrors the device input buffers, the
       outputs follow at output_off. Copies from pageable memory are synchronous and slow; from
       here they are asynchronous DMA. */
    uint8_t* host_io;
    uint64_t* output_off; /* [n_outputs] offset of graph output i in host_io */
    size_t io_chunk;      /* bytes per piece of the pipelined host copies (opara__backend_inputs_in) */
    size_t io_direct;     /* host inputs of at least this many bytes are copied from the caller's memory */
    uint64_t output_bytes; /* every graph output's bytes together */
    uint32_t n_out_events;
    opara_CUevent* out_events; /* [n_out_events] one per group of output pieces but the last (opara__cuda_piece) */

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
    opara__cuda_op_profile* measured; /* [n_nodes] a profiling run's rows (opt.measured), until describe took them */
    opara__cuda_node_hook hook;   /* profiling runs only */
    void* hook_user;
};

/* ---- errors ------------------------------------------------------------------------------------ */

/* Every message of the session goes to its logger (the session's; the runtime's when none is given). */
static const opara_logger* opara__backend_log(const opara__cuda_session* s) { return opara__cuda_logger(s->rt, &s->opt); }

/* A failure of session s: into the runtime's error during creation (the runtime's thread), into the
   session's own afterwards, so runs on other threads never write the runtime. */
static opara_result opara__backend_fail(opara__cuda_session* s, opara_result code, const char* fmt, ...) OPARA__PRINTF(3, 4);
static opara_result opara__backend_fail(opara__cuda_session* s, opara_result code, const char* fmt, ...) {
    va_list args;
    va_start(args, fmt);
    code = opara__fail_into(s->err, opara__backend_log(s), code, fmt, args);
    va_end(args);
    return code;
}

static opara_result opara__backend_cu_fail(opara__cuda_session* s, opara_CUresult r, const char* what) {
    opara_result code = r == OPARA_CUDA_ERROR_OUT_OF_MEMORY ? OPARA_ERR_DEVICE_MEMORY : OPARA_ERR_CUDA;
    return opara__backend_fail(s, code, "CUDA backend: %s failed: %s (%d)", what, opara_cuda_driver_result_name(&s->cu, r),
                           (int)r);
}
#define OPARA__CU_TRY(s, call, what)                                           \
    do {                                                                       \
        opara_CUresult opara__r_ = OPARA__CU(s, call);                         \
        if (opara__r_ != OPARA_CUDA_SUCCESS) return opara__backend_cu_fail(s, opara__r_, what); \
    } while (0)

static opara_result opara__backend_oom(opara__cuda_session* s) {
    return opara__backend_fail(s, OPARA_ERR_OUT_OF_MEMORY, "CUDA backend: out of host memory");
}

/* Makes the session's context current on the calling thread on top of whatever the caller has
   (cuCtxPushCurrent); opara__backend_leave pops it, so the caller's current context is restored.
   Every entry point that calls the driver or a library runs between the two. */
static opara_CUresult opara__backend_enter(opara__cuda_session* s) { return OPARA__CU(s, cuCtxPushCurrent_v2(s->ctx)); }

static void opara__backend_leave(opara__cuda_session* s) {
    opara_CUcontext popped = NULL;
    opara_CUresult r = OPARA__CU(s, cuCtxPopCurrent_v2(&popped));
    if (r != OPARA_CUDA_SUCCESS || popped != s->ctx) /* something between enter and leave unbalanced the stack */
        opara__log(opara__backend_log(s), OPARA_LOG_WARN, OPARA_LOGITEM_ERROR_DETAIL,
                   "CUDA backend: cuCtxPopCurrent returned %s (%d) and %s context", opara_cuda_driver_result_name(&s->cu, r),
                   (int)r, popped == s->ctx ? "the session's" : "another");
}

/* Attaches session s to its runtime's CUDA state (opara_cuda_runtime.c) and logs what it got. */
static opara_result opara__backend_attach(opara__cuda_session* s) {
    opara_runtime* rt = s->rt;
    opara__cuda_attachment att;
    char why[2400];
    opara_result r = opara__cuda_runtime_attach(rt, &s->opt, &s->cu, &s->cublas, &s->dnn, &att, why, sizeof why);
    if (r != OPARA_OK) return opara__backend_fail(s, r, "CUDA backend: %s", why);
    s->shared = att.shared;
    s->dev = att.dev;
    s->ctx = att.ctx;
    s->have_cublas = att.cublas == OPARA_OK; /* cuDNN counts once a handle is made (opara__backend_cudnn_probe) */
    opara__log(opara__backend_log(s), OPARA_LOG_DEBUG, OPARA_LOGITEM_LIBRARY_LOADED, "CUDA driver %s (version %d)", s->cu.path,
               s->cu.driver_version);
    if (s->have_cublas)
        opara__log(opara__backend_log(s), OPARA_LOG_DEBUG, OPARA_LOGITEM_LIBRARY_LOADED, "cuBLAS %s", s->cublas.path);
    else if (!s->opt.no_cublas)
        opara__log(opara__backend_log(s), OPARA_LOG_INFO, OPARA_LOGITEM_BACKEND_FALLBACK,
                   "cuBLAS not loaded (%s); Gemm/MatMul use opara_sgemm_f32", att.why_cublas);
    if (!s->opt.no_cudnn && att.cudnn != OPARA_OK)
        opara__log(opara__backend_log(s), OPARA_LOG_INFO, OPARA_LOGITEM_BACKEND_FALLBACK,
                   "cuDNN not loaded (%s); Conv uses opara_conv2d_f32", att.why_cudnn);
    return OPARA_OK;
}

/* ---- device, modules -------------------------------------------------------------------------- */

/* The attribute, or fallback when the query fails or answers below least (a count of 0 is no answer; a minor
   compute capability of 0, as on an H100, is). */
static int opara__backend_dev_attr(opara__cuda_session* s, opara_CUdevice_attribute a, int least, int fallback) {
    int v = 0;
    if (OPARA__CU(s, cuDeviceGetAttribute(&v, a, s->dev)) != OPARA_CUDA_SUCCESS || v < least) return fallback;
    return v;
}

/* Limits of the real device for the scheduler; throughput numbers from the closest preset. */
static void opara__backend_describe_device(opara__cuda_session* s) {
    const opara__device* base = opara__device_default();
    s->device = *base;
    OPARA__CU(s, cuDeviceGetName(s->device_name, (int)sizeof s->device_name - 1, s->dev));
    s->device.name = s->device_name;
    s->cc_major = opara__backend_dev_attr(s, OPARA_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 1, 7);
    s->cc_minor = opara__backend_dev_attr(s, OPARA_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 0, 5);
    s->device.sms = (uint32_t)opara__backend_dev_attr(s, OPARA_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 1, (int)base->sms);
    s->device.max_threads_per_block =
        (uint32_t)opara__backend_dev_attr(s, OPARA_CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 1, (int)base->max_threads_per_block);
    s->device.max_threads_per_sm =
        (uint32_t)opara__backend_dev_attr(s, OPARA_CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, 1, (int)base->max_threads_per_sm);
    s->device.max_regs_per_block =
        (uint32_t)opara__backend_dev_attr(s, OPARA_CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK, 1, (int)base->max_regs_per_block);
    s->device.max_regs_per_sm =
        (uint32_t)opara__backend_dev_attr(s, OPARA_CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR, 1, (int)base->max_regs_per_sm);
    s->device.max_smem_per_block =
        (uint32_t)opara__backend_dev_attr(s, OPARA_CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, 1, (int)base->max_smem_per_block);
    s->device.max_smem_per_sm = (uint32_t)opara__backend_dev_attr(s, OPARA_CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR,
                                                          1, (int)base->max_smem_per_sm);
}

static const opara__kernel_image* opara__backend_find_image(const char* file) {
    size_t i;
    for (i = 0; i < OPARA__ARRAY_COUNT(opara__kernel_images); ++i)
        if (strcmp(opara__kernel_images[i].file, file) == 0) return &opara__kernel_images[i];
    return NULL;
}

/* The NVRTC source of a kernel file, and the kernel dialect header it includes; NULL when the
   sources are not compiled in (OPARA_NVRTC_SOURCE). */
static const char* opara__backend_find_source(const char* file, const char** dialect) {
#ifdef OPARA_NVRTC_SOURCE
    size_t i;
    *dialect = opara__kernel_dialect;
    for (i = 0; i < OPARA__ARRAY_COUNT(opara__kernel_sources); ++i)
        if (strcmp(opara__kernel_sources[i].file, file) == 0) return opara__kernel_sources[i].source;
#else
    (void)file;
    *dialect = NULL;
#endif
    return NULL;
}

/* Where a kernel module's image came from, in the order they are tried. */
typedef enum opara__backend_image_kind {
    OPARA__IMAGE_CUBIN = 0,     /* NVRTC's cubin for the device's sm_XY: no JIT, no PTX version check */
    OPARA__IMAGE_NVRTC_PTX = 1, /* NVRTC's PTX: JIT by the driver, refused (222) when newer than it */
    OPARA__IMAGE_EMBEDDED = 2,  /* the PTX generated at build time (make ptx), JIT by the driver */
    OPARA__IMAGE_IMAGE_KINDS = 3
} opara__backend_image_kind;

/* What NVRTC made of one kernel file (from the runtime's allocator; NULL where absent). */
typedef struct opara__backend_nvrtc_out {
    char* cubin;
    char* ptx;
} opara__backend_nvrtc_out;

/* The architecture NVRTC compiles for: the device's own (sm_XY: a cubin and its PTX) when NVRTC
   supports it, else the newest NVRTC knows below the device (compute_XY: PTX only, the driver
   compiles it forward). 0 when NVRTC supports nothing at or below the device. */
static int opara__backend_nvrtc_arch(opara__cuda_session* s, const opara_cuda_nvrtc* nv, int* real) {
    int device = s->cc_major * 10 + s->cc_minor, count = 0, archs[64], i, best = 0;
    *real = 0;
    if (nv->nvrtcGetNumSupportedArchs(&count) != OPARA_NVRTC_SUCCESS || count < 1 || count > 64 ||
        nv->nvrtcGetSupportedArchs(archs) != OPARA_NVRTC_SUCCESS)
        return 0;
    for (i = 0; i < count; ++i)
        if (archs[i] <= device && archs[i] > best) best = archs[i];
    *real = best == device;
    if (!*real) {
        char list[256] = "";
        size_t at = 0;
        for (i = 0; i < count && at + 8 < sizeof list; ++i)
            at += (size_t)snprintf(list + at, sizeof list - at, "%s%d", i ? " " : "", archs[i]);
        opara__log(opara__backend_log(s), OPARA_LOG_INFO, OPARA_LOGITEM_BACKEND_FALLBACK,
                   "NVRTC supports no sm_%d (its architectures: %s): compiling PTX for compute_%d", device, list, best);
    }
    return best;
}

/* The first line of NVRTC's compile log, for the warning. */
static void opara__backend_nvrtc_log(opara__cuda_session* s, opara_cuda_nvrtc* nv, opara_nvrtcProgram prog, char* out,
                                 size_t cap) {
    size_t size = 0;
    char* log;
    out[0] = 0;
    if (nv->nvrtcGetProgramLogSize(prog, &size) != OPARA_NVRTC_SUCCESS || size < 2) return;
    if ((log = (char*)opara__alloc(s->rt, size)) == NULL) return;
    if (nv->nvrtcGetProgramLog(prog, log) == OPARA_NVRTC_SUCCESS) {
        char* nl = strchr(log, '\n');
        if (nl) *nl = 0;
        opara__format(out, cap, ": %s", log);
    }
    opara__free(s->rt, log);
}

/* NVRTC's output of a compiled program: the cubin (sm_XY only; nvrtcGetCUBINSize gives 0 for a
   virtual architecture) and the PTX. */
static void opara__backend_nvrtc_take(opara__cuda_session* s, opara_cuda_nvrtc* nv, opara_nvrtcProgram prog, int real,
                                  opara__backend_nvrtc_out* out) {
    size_t size = 0;
    opara_nvrtcResult r = OPARA_NVRTC_SUCCESS;
    if (real && nv->nvrtcGetCUBINSize && nv->nvrtcGetCUBIN && (r = nv->nvrtcGetCUBINSize(prog, &size)) == OPARA_NVRTC_SUCCESS &&
        size > 0 && (out->cubin = (char*)opara__alloc(s->rt, size)) != NULL &&
        (r = nv->nvrtcGetCUBIN(prog, out->cubin)) != OPARA_NVRTC_SUCCESS) {
        opara__free(s->rt, out->cubin);
        out->cubin = NULL;
    }
    if (real && !out->cubin)
        opara__log(opara__backend_log(s), OPARA_LOG_INFO, OPARA_LOGITEM_BACKEND_FALLBACK,
                   "NVRTC gave no cubin (%s, %s, %zu bytes); using its PTX",
                   nv->nvrtcGetCUBIN && nv->nvrtcGetCUBINSize ? "nvrtcGetCUBIN present" : "no nvrtcGetCUBIN in this NVRTC",
                   opara_nvrtc_result_name(r), size);
    if (nv->nvrtcGetPTXSize(prog, &size) == OPARA_NVRTC_SUCCESS && size > 0 &&
        (out->ptx = (char*)opara__alloc(s->rt, size + 1)) != NULL) {
        out->ptx[size] = 0;
        if (nv->nvrtcGetPTX(prog, out->ptx) != OPARA_NVRTC_SUCCESS) {
            opara__free(s->rt, out->ptx);
            out->ptx = NULL;
        }
    }
}

/* NVRTC: the kernel source compiled for the device, with the kernel dialect given as the header
   opara_kernel.h that every source includes. Options: the architecture and the language standard of
   the dialect (src/cuda/kernels/opara_kernel.h), nothing else: no -default-device, no fast-math (the
   kernels must match the CPU backend). On failure out stays empty, with the reason logged: the
   embedded PTX is then used. */
static void opara__backend_nvrtc_compile(opara__cuda_session* s, opara_cuda_nvrtc* nv, const opara__kernel_image* img,
                                     int arch, int real, opara__backend_nvrtc_out* out) {
    opara_nvrtcProgram prog = NULL;
    char option[64], log[256] = "";
    const char* opts[2];
    const char* header_name = "opara_kernel.h";
    const char* dialect;
    const char* src = opara__backend_find_source(img->file, &dialect);
    opara_nvrtcResult r;
    memset(out, 0, sizeof *out);
    if (!src) return;
    opara__format(option, sizeof option, "--gpu-architecture=%s_%d", real ? "sm" : "compute", arch);
    opts[0] = option;
    opts[1] = "--std=c++11";
    r = nv->nvrtcCreateProgram(&prog, src, img->file, 1, &dialect, &header_name);
    if (r == OPARA_NVRTC_SUCCESS) {
        r = nv->nvrtcCompileProgram(prog, 2, opts);
        if (r == OPARA_NVRTC_SUCCESS) opara__backend_nvrtc_take(s, nv, prog, real, out);
        else opara__backend_nvrtc_log(s, nv, prog, log, sizeof log);
        nv->nvrtcDestroyProgram(&prog);
    }
    if (r != OPARA_NVRTC_SUCCESS)
        opara__log(opara__backend_log(s), OPARA_LOG_WARN, OPARA_LOGITEM_BACKEND_FALLBACK,
                   "NVRTC could not compile %s.cu with %s: %s%s; using the embedded PTX", img->file, option,
                   opara_nvrtc_result_name(r), log);
}

/* cuModuleLoadDataEx with the JIT's error log, which says why a PTX image was refused. */
static opara_CUresult opara__backend_module_load(opara__cuda_session* s, opara_CUmodule* module, const void* image,
                                             char* log, size_t cap) {
    opara_CUjit_option options[2] = {OPARA_CU_JIT_ERROR_LOG_BUFFER, OPARA_CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void* values[2];
    log[0] = 0;
    values[0] = log;
    values[1] = (void*)(uintptr_t)cap; /* an unsigned int passed by value (cuda.h CUjit_option) */
    return OPARA__CU(s, cuModuleLoadDataEx(module, image, 2, options, values));
}

/* The ".target sm_XX" of a PTX text, e.g. "sm_75". */
static void opara__backend_ptx_target(const char* ptx, char* out, size_t cap) {
    const char* at = strstr(ptx, "\n.target ");
    if (at) opara__format(out, cap, "%.*s", (int)strcspn(at + 9, " ,\n"), at + 9);
    else opara__format(out, cap, "?");
}

/* The session's description of one kind of image: "NVRTC cubin sm_90", "NVRTC PTX compute_90",
   "embedded PTX sm_75 (driver JIT)". */
static void opara__backend_image_name(opara__backend_image_kind kind, int arch, const char* embedded_target, char* out,
                                  size_t cap) {
    if (kind == OPARA__IMAGE_CUBIN) opara__format(out, cap, "NVRTC cubin sm_%d", arch);
    else if (kind == OPARA__IMAGE_NVRTC_PTX) opara__format(out, cap, "NVRTC PTX compute_%d", arch);
    else opara__format(out, cap, "embedded PTX %s (driver JIT)", embedded_target);
}

/* The embedded PTX of a kernel file, unpacked (src/cuda/kernels/opara_ptx_pack.h) into a NUL-terminated buffer
   from the runtime's allocator, which the caller frees. */
static opara_result opara__backend_unpack_ptx(opara__cuda_session* s, const opara__kernel_image* img, char** ptx) {
    size_t at = 0;
    opara__ptx_unpack_result e;
    *ptx = img->ptx_size < (size_t)-1 ? (char*)opara__alloc(s->rt, img->ptx_size + 1) : NULL;
    if (!*ptx)
        return opara__backend_fail(s, OPARA_ERR_OUT_OF_MEMORY, "CUDA backend: no memory to unpack the embedded PTX of %s.cu (%zu bytes)",
                                   img->file, img->ptx_size);
    e = opara__ptx_unpack(img->packed, img->packed_size, *ptx, img->ptx_size, &at);
    if (e == OPARA__PTX_UNPACKED) {
        (*ptx)[img->ptx_size] = 0;
        return OPARA_OK;
    }
    opara__free(s->rt, *ptx);
    *ptx = NULL;
    return opara__backend_fail(s, OPARA_ERR_INTERNAL, "CUDA backend: the embedded PTX of %s.cu is corrupt: %s (byte %zu of %zu)",
                               img->file, opara__ptx_unpack_result_text(e), at, img->packed_size);
}

/* One kernel file's module: NVRTC's cubin, else NVRTC's PTX, else the embedded PTX (its target in
   `target`), logging why each step was passed over. Running out of device memory is an error, not a
   reason to go on. */
static opara_result opara__backend_load_module(opara__cuda_session* s, size_t f, const opara__kernel_image* img,
                                           const opara__backend_nvrtc_out* nv, int arch, opara__backend_image_kind* kind,
                                           char* target, size_t target_cap) {
    char log[512], what[64];
    char* ptx;
    opara_result r;
    const char* images[OPARA__IMAGE_IMAGE_KINDS];
    opara_CUresult cr = OPARA_CUDA_ERROR_INVALID_IMAGE;
    int k;
    images[OPARA__IMAGE_CUBIN] = nv->cubin;
    images[OPARA__IMAGE_NVRTC_PTX] = nv->ptx;
    for (k = OPARA__IMAGE_CUBIN; k < OPARA__IMAGE_EMBEDDED; ++k) {
        if (!images[k]) continue;
        cr = opara__backend_module_load(s, &s->modules[f], images[k], log, sizeof log);
        if (cr == OPARA_CUDA_SUCCESS) {
            *kind = (opara__backend_image_kind)k;
            return OPARA_OK;
        }
        if (cr == OPARA_CUDA_ERROR_OUT_OF_MEMORY) return opara__backend_cu_fail(s, cr, "loading a kernel module");
        opara__backend_image_name((opara__backend_image_kind)k, arch, "", what, sizeof what);
        opara__log(opara__backend_log(s), k == OPARA__IMAGE_CUBIN ? OPARA_LOG_INFO : OPARA_LOG_WARN, OPARA_LOGITEM_BACKEND_FALLBACK,
                   "CUDA backend: the driver refused %s of %s.cu: %s (%d)%s%s; trying %s", what, img->file,
                   opara_cuda_driver_result_name(&s->cu, cr), (int)cr, log[0] ? ": " : "", log,
                   k == OPARA__IMAGE_CUBIN && images[OPARA__IMAGE_NVRTC_PTX] ? "NVRTC's PTX" : "the embedded PTX");
    }
    *kind = OPARA__IMAGE_EMBEDDED;
    if ((r = opara__backend_unpack_ptx(s, img, &ptx)) != OPARA_OK) return r;
    cr = opara__backend_module_load(s, &s->modules[f], ptx, log, sizeof log);
    opara__backend_ptx_target(ptx, target, target_cap);
    opara__free(s->rt, ptx);
    if (cr == OPARA_CUDA_SUCCESS) return OPARA_OK;
    if (cr == OPARA_CUDA_ERROR_OUT_OF_MEMORY) return opara__backend_cu_fail(s, cr, "loading a kernel module");
    return opara__backend_fail(s, OPARA_ERR_CUDA, "CUDA backend: the driver refused the embedded PTX (%s) of %s.cu: %s (%d)%s%s",
                       target, img->file, opara_cuda_driver_result_name(&s->cu, cr), (int)cr, log[0] ? ": " : "", log);
}

/* s->kernels: the kinds of image the modules came from, with counts when they differ. */
static void opara__backend_describe_kernels(opara__cuda_session* s, const unsigned* count, int arch,
                                        const char* embedded_target) {
    size_t at = 0;
    int k;
    char name[64];
    for (k = 0; k < OPARA__IMAGE_IMAGE_KINDS; ++k) {
        if (!count[k]) continue;
        opara__backend_image_name((opara__backend_image_kind)k, arch, embedded_target, name, sizeof name);
        if (count[k] == OPARA__CUDA_FILES)
            at += opara__format(s->kernels + at, sizeof s->kernels - at, "%s", name);
        else
            at += opara__format(s->kernels + at, sizeof s->kernels - at, "%s%s for %u of %d files", at ? "; " : "", name,
                                count[k], OPARA__CUDA_FILES);
    }
}

/* NVRTC when the session asks for it and the kernel sources are compiled in (logged: where it was
   found, its builtins). */
static int opara__backend_nvrtc_open(opara__cuda_session* s, opara_cuda_nvrtc* nv) {
    char err[2048];
    const char* dialect;
    int major = 0, minor = 0;
    memset(nv, 0, sizeof *nv);
    if (!s->opt.use_nvrtc) return 0;
    if (!opara__backend_find_source(opara__cuda_files[0], &dialect)) {
        opara__log(&s->rt->logger, OPARA_LOG_WARN, OPARA_LOGITEM_BACKEND_FALLBACK,
                   "NVRTC asked for, but the kernel sources are not compiled in (define OPARA_NVRTC_SOURCE where the "
                   "implementation is compiled, with opara_nvrtc.h beside opara.h); using the embedded PTX");
        return 0;
    }
    if (opara_cuda_nvrtc_load(nv, s->opt.nvrtc_path, err, sizeof err) != OPARA_CUDA_LOAD_OK) {
        opara__log(opara__backend_log(s), OPARA_LOG_INFO, OPARA_LOGITEM_BACKEND_FALLBACK,
                   "NVRTC not loaded (%s); using the embedded PTX", err);
        return 0;
    }
    nv->nvrtcVersion(&major, &minor);
    opara__format(s->nvrtc_lib, sizeof s->nvrtc_lib, "NVRTC %d.%d %s", major, minor, nv->path);
    opara__log(opara__backend_log(s), OPARA_LOG_DEBUG, OPARA_LOGITEM_LIBRARY_LOADED, "NVRTC %d.%d %s (%s; builtins %s)", major,
               minor, nv->path, nv->origin, nv->builtins_path[0] ? nv->builtins_path : "not preloaded");
    return 1;
}

static opara_result opara__backend_load_modules(opara__cuda_session* s) {
    opara_cuda_nvrtc nv;
    unsigned count[OPARA__IMAGE_IMAGE_KINDS] = {0, 0, 0};
    char target[16] = "?";
    int k, arch = 0, real = 0;
    size_t f;
    opara_result r = OPARA_OK;
    if (opara__backend_nvrtc_open(s, &nv) && (arch = opara__backend_nvrtc_arch(s, &nv, &real)) == 0)
        opara__log(opara__backend_log(s), OPARA_LOG_WARN, OPARA_LOGITEM_BACKEND_FALLBACK,
                   "NVRTC %s supports no architecture at or below the device's sm_%d%d; using the embedded PTX", nv.path,
                   s->cc_major, s->cc_minor);
    for (f = 0; f < OPARA__CUDA_FILES && r == OPARA_OK; ++f) {
        const opara__kernel_image* img = opara__backend_find_image(opara__cuda_files[f]);
        opara__backend_nvrtc_out out;
        opara__backend_image_kind kind = OPARA__IMAGE_EMBEDDED;
        memset(&out, 0, sizeof out);
        if (!img) {
            r = opara__backend_fail(s, OPARA_ERR_INTERNAL, "CUDA backend: kernel file %s is not embedded", opara__cuda_files[f]);
            break;
        }
        if (nv.library && arch) opara__backend_nvrtc_compile(s, &nv, img, arch, real, &out);
        r = opara__backend_load_module(s, f, img, &out, arch, &kind, target, sizeof target);
        if (r == OPARA_OK) ++count[kind];
        opara__free(s->rt, out.cubin);
        opara__free(s->rt, out.ptx);
    }
    opara_cuda_nvrtc_unload(&nv);
    if (r != OPARA_OK) return r;
    s->nvrtc_used = count[OPARA__IMAGE_CUBIN] + count[OPARA__IMAGE_NVRTC_PTX] > 0;
    if (!s->nvrtc_used) s->nvrtc_lib[0] = 0;
    opara__backend_describe_kernels(s, count, arch, target);
    opara__log(opara__backend_log(s), OPARA_LOG_DEBUG, OPARA_LOGITEM_LIBRARY_LOADED, "CUDA backend: kernels from %s", s->kernels);
    for (k = 0; k < OPARA__CUK_COUNT; ++k) {
        const char* file = opara__cuda_kernel_file((opara__cuda_kernel)k);
        for (f = 0; f < OPARA__CUDA_FILES && strcmp(file, opara__cuda_files[f]) != 0; ++f) {
        }
        if (f == OPARA__CUDA_FILES) return opara__backend_fail(s, OPARA_ERR_INTERNAL, "CUDA backend: no module for %s", file);
        OPARA__CU_TRY(s, cuModuleGetFunction(&s->funcs[k], s->modules[f], opara__cuda_kernel_name((opara__cuda_kernel)k)),
                      "cuModuleGetFunction");
    }
    return OPARA_OK;
}

/* The handle cuDNN's heuristics need (then the first stream's). A handle that cannot be made
   (e.g. no usable device for cuDNN) means our convolution kernel, with the reason logged; running
   out of device memory is an error. The library stays loaded: the runtime owns it. */
static opara_result opara__backend_cudnn_probe(opara__cuda_session* s) {
    opara_cudnnStatus_t st;
    if (!s->dnn.library) return OPARA_OK;
    st = s->dnn.cudnnCreate(&s->dnn_probe);
    if (st == OPARA_CUDNN_STATUS_SUCCESS) {
        s->have_cudnn = 1;
        opara__log(opara__backend_log(s), OPARA_LOG_DEBUG, OPARA_LOGITEM_LIBRARY_LOADED, "cuDNN %s (version %zu)", s->dnn.path,
                   s->dnn.cudnnGetVersion());
        return OPARA_OK;
    }
    s->dnn_probe = NULL;
    opara__log(opara__backend_log(s), OPARA_LOG_INFO, OPARA_LOGITEM_BACKEND_FALLBACK,
               "cuDNN %s loaded but cudnnCreate failed: %s (%d); Conv uses opara_conv2d_f32", s->dnn.path,
               opara_cudnn_status_name(st), (int)st);
    memset(&s->dnn, 0, sizeof s->dnn);
    if (opara__cudnn_out_of_memory(st))
        return opara__backend_fail(s, OPARA_ERR_DEVICE_MEMORY, "CUDA backend: cudnnCreate ran out of device memory");
    return OPARA_OK;
}

/* ---- shapes, lowering, plan -------------------------------------------------------------------- */

/* The caller's shapes, resolved node parameters, dtypes and sizes (inferred once, by the session),
   copied: lowering, memory and I/O read them for the session's lifetime. */
static opara_result opara__backend_shapes(opara__cuda_session* s, const opara__cuda_shapes* in) {
    size_t nv = s->g->n_values ? s->g->n_values : 1;
    s->shapes = (opara__shape*)opara__calloc(s->rt, nv, sizeof(opara__shape));
    s->dtypes = (opara_dtype*)opara__calloc(s->rt, nv, sizeof(opara_dtype));
    s->value_bytes = (uint64_t*)opara__calloc(s->rt, nv, sizeof(uint64_t));
    s->node_params = (opara__node_params*)opara__calloc(s->rt, s->g->n_nodes ? s->g->n_nodes : 1, sizeof(opara__node_params));
    if (!s->shapes || !s->dtypes || !s->value_bytes || !s->node_params) return opara__backend_oom(s);
    memcpy(s->shapes, in->shapes, (size_t)s->g->n_values * sizeof(opara__shape));
    memcpy(s->node_params, in->params, (size_t)s->g->n_nodes * sizeof(opara__node_params));
    memcpy(s->dtypes, in->dtypes, (size_t)s->g->n_values * sizeof(opara_dtype));
    memcpy(s->value_bytes, in->value_bytes, (size_t)s->g->n_values * sizeof(uint64_t));
    return OPARA_OK;
}

/* The scheduler's descriptors: the analytic model (FLOPs, bytes, class), with the launch shape,
   registers and shared memory of each node's main kernel from the static profile (opara_cuda_resources.c)
   and, after a profiling run, its measured time. */
static opara_result opara__backend_descs(opara__cuda_session* s, opara__op_desc* descs) {
    opara_result r = opara__describe_ops_resolved(s->g, s->shapes, s->node_params, &s->device, descs);
    if (r != OPARA_OK) return r;
    s->prof = (opara__cuda_op_profile*)opara__calloc(s->rt, s->g->n_nodes ? s->g->n_nodes : 1, sizeof *s->prof);
    if (!s->prof) return opara__backend_oom(s);
    r = opara__cuda_profile_static(s->rt, &s->cu, s->funcs, s->g, s->shapes, s->node_params, &s->low, s->opt.measured, s->prof);
    if (r == OPARA_OK) opara__cuda_profile_to_descs(s->prof, s->g->n_nodes, descs);
    return r;
}

OPARA__PRIVATE opara_result opara__cuda_session_describe(opara__cuda_session* s, opara__op_desc* descs,
                                                        opara__plan_desc* pd, const opara__device** dev) {
    opara_result r;
    if (s->opt.mode == OPARA__CUDA_SEQ_GRAPH) pd->strategy = OPARA_STRATEGY_SEQUENTIAL; /* the graph of the sequential plan */
    if (s->opt.mode == OPARA__CUDA_EAGER && s->opt.eager_stream_cap) pd->stream_cap = s->opt.eager_stream_cap;
    if (s->opt.measured && pd->metric == OPARA__METRIC_DEFAULT) pd->metric = OPARA__METRIC_TIME;
    pd->shapes = s->shapes, pd->params = s->node_params; /* let Concat inputs be written in place */
    if (pd->concat_align == 0) pd->concat_align = OPARA__CUDA_LIB_ALIGN; /* tests may ask less to provoke the check in bind */
    *dev = &s->device;
    r = opara__cuda_session_enter(s); /* the static profile asks the driver about our kernels */
    if (r == OPARA_OK) {
        r = opara__backend_descs(s, descs);
        opara__backend_leave(s);
    }
    s->opt.measured = NULL; /* the profiler's rows live during creation only; s->prof keeps them */
    opara__free(s->rt, s->measured);
    s->measured = NULL;
    return r;
}

/* The CUDA stream node n runs on: its plan stream's lane. */
static uint32_t opara__backend_stream_of(const opara__cuda_session* s, uint32_t n) {
    return s->plan->stream_lane[s->plan->stream[n]];
}

/* ---- device memory ------------------------------------------------------------------------------ */

static opara_result opara__backend_dalloc(opara__cuda_session* s, opara_CUdeviceptr* p, size_t bytes, const char* what) {
    opara_CUresult r;
    char buf[160];
    *p = 0;
    if (bytes == 0) return OPARA_OK;
    r = OPARA__CU(s, cuMemAlloc_v2(p, bytes));
    if (r == OPARA_CUDA_SUCCESS) return OPARA_OK;
    *p = 0;
    opara__format(buf, sizeof buf, "cuMemAlloc of %llu bytes for the %s", (unsigned long long)bytes, what);
    return opara__backend_cu_fail(s, r, buf);
}

/* Read by a node or returned as a graph output (a constant output, e.g. a folded Shape, is copied from the device). */
static int opara__backend_value_used(const opara__graph* g, uint32_t v) {
    uint32_t i;
    if (g->consumer_start[v + 1] > g->consumer_start[v]) return 1;
    for (i = 0; i < g->n_outputs; ++i)
        if (g->outputs[i] == (int32_t)v) return 1;
    return 0;
}

/* cuBLAS workspace per handle. cuBLAS docs (cublasSetWorkspace): NVIDIA recommends 32 MiB on Hopper
   (compute capability 9.0) and newer architectures, 4 MiB on the others. */
static uint64_t opara__backend_cublas_workspace(const opara__cuda_session* s) {
    return s->cc_major >= 9 ? (uint64_t)32 << 20 : (uint64_t)4 << 20;
}

/* Library workspaces. A node's library calls (a cuBLAS GEMM, or its cuDNN algorithm) need a
   workspace while they run; nodes that the plan orders against each other share one block
   (opara__plan_share_scratch: each slot is a chain of the happens-before order), so the memory
   follows how many library calls can really run at once, not the stream count. Placed after the
   plan's arena in the same allocation, so a run allocates nothing. Returns the allocation's size. */
static opara_result opara__backend_workspaces(opara__cuda_session* s, size_t* total) {
    const opara__plan* p = s->plan;
    size_t nn = p->n_nodes ? p->n_nodes : 1, base = opara__align_up((size_t)p->arena_bytes, OPARA__CUDA_ALIGN), at = base;
    uint64_t* need = (uint64_t*)opara__calloc(s->rt, nn, sizeof(uint64_t));
    uint32_t i;
    opara_result r = OPARA_OK;
    s->ws_slot = (uint32_t*)opara__calloc(s->rt, nn, sizeof(uint32_t));
    s->ws_off = (uint64_t*)opara__calloc(s->rt, nn, sizeof(uint64_t));
    s->ws_bytes = (uint64_t*)opara__calloc(s->rt, nn, sizeof(uint64_t));
    if (!s->ws_slot || !s->ws_off || !s->ws_bytes || !need) r = opara__backend_oom(s);
    for (i = 0; r == OPARA_OK && i < s->low.n_launches; ++i) {
        const opara__cuda_launch* L = &s->low.launches[i];
        uint64_t n = L->type == OPARA__CULAUNCH_CUBLAS  ? opara__backend_cublas_workspace(s)
                     : L->type == OPARA__CULAUNCH_CUDNN ? s->low.dnn_convs[L->lib].workspace
                                                        : 0;
        if (n > need[L->node]) need[L->node] = n;
    }
    if (r == OPARA_OK) r = opara__plan_share_scratch(s->g, p, need, s->ws_slot, s->ws_bytes, &s->n_workspaces);
    for (i = 0; r == OPARA_OK && i < s->n_workspaces; ++i) {
        size_t end;
        s->ws_off[i] = at;
        if (!opara__add_size(at, (size_t)s->ws_bytes[i], &end) || !opara__add_size(end, OPARA__CUDA_ALIGN - 1, &end))
            r = opara__backend_fail(s, OPARA_ERR_LIMIT_EXCEEDED, "CUDA backend: library workspaces overflow size_t");
        else at = end / OPARA__CUDA_ALIGN * OPARA__CUDA_ALIGN;
    }
    s->workspace_bytes = at - base;
    *total = at;
    opara__free(s->rt, need);
    return r;
}

/* One piece of a host run's output copies: the outputs go back in pieces of at most io_chunk bytes,
   gathered in groups of at least io_chunk bytes; an event recorded after each group but the last
   lets the host copy a group to the caller while the next one is still in flight (the last group is
   waited for by the run's closing cuStreamSynchronize, so outputs of less than a chunk cost no more
   calls than one copy each). Start from a zeroed piece; opara__backend_next_piece gives them in order. */
typedef struct opara__cuda_piece {
    uint32_t output;   /* graph output index */
    size_t off, bytes; /* the piece within the output */
    uint32_t group;    /* out_events[group] completes it, or the closing synchronize for the last group */
    int ends_group;    /* an event goes after this piece */
    uint64_t filled, done; /* bytes of its group / of all outputs up to and including this piece */
} opara__cuda_piece;

/* A run's caller pointers: host (opara__cuda_session_run) or device (opara__cuda_session_run_device). */
typedef struct opara__cuda_io {
    const void* const* in;
    void* const* out; /* device: NULL entries are not copied; host: NULL (entries) stay in the staging */
    int device;
} opara__cuda_io;

static int opara__backend_next_piece(const opara__cuda_session* s, opara__cuda_piece* p) {
    const opara__graph* g = s->g;
    uint64_t rest;
    if (p->ends_group) p->group++, p->filled = 0;
    p->off += p->bytes;
    while (p->output < g->n_outputs && p->off >= s->value_bytes[g->outputs[p->output]]) p->output++, p->off = 0;
    if (p->output >= g->n_outputs) return 0;
    rest = s->value_bytes[g->outputs[p->output]] - p->off;
    p->bytes = rest < s->io_chunk ? (size_t)rest : s->io_chunk;
    p->filled += p->bytes;
    p->done += p->bytes;
    p->ends_group = p->filled >= s->io_chunk && p->done < s->output_bytes;
    return 1;
}

/* The events that close the groups of output pieces, made once here (a run records them again). */
static opara_result opara__backend_out_events(opara__cuda_session* s) {
    opara__cuda_piece p;
    uint32_t n = 0, i;
    memset(&p, 0, sizeof p);
    while (opara__backend_next_piece(s, &p)) n += p.ends_group;
    s->out_events = (opara_CUevent*)opara__calloc(s->rt, n ? n : 1, sizeof(opara_CUevent));
    if (!s->out_events) return opara__backend_oom(s);
    s->n_out_events = n;
    for (i = 0; i < n; ++i) OPARA__CU_TRY(s, cuEventCreate(&s->out_events[i], 2 /* DISABLE_TIMING */), "cuEventCreate");
    return OPARA_OK;
}

/* OPARA_CUDA_IO_DIRECT as a threshold (0: never, so no input is that large). A variable, so that the
   macro is never tested as a condition (C++ compilers warn on a product in a boolean context). */
static size_t opara__backend_io_direct_default(void) {
    size_t bytes = OPARA_CUDA_IO_DIRECT;
    return bytes ? bytes : SIZE_MAX;
}

/* The pinned staging of host I/O: the input buffers' layout, then every graph output (aligned). */
static opara_result opara__backend_host_io(opara__cuda_session* s) {
    const opara__graph* g = s->g;
    size_t at = opara__align_up(s->input_bytes, OPARA__CUDA_ALIGN), end;
    opara_CUresult cr;
    uint32_t i;
    void* p = NULL;
    s->output_off = (uint64_t*)opara__calloc(s->rt, g->n_outputs ? g->n_outputs : 1, sizeof(uint64_t));
    if (!s->output_off) return opara__backend_oom(s);
    s->io_chunk = s->opt.io_chunk ? s->opt.io_chunk : OPARA_CUDA_IO_CHUNK;
    s->io_direct = s->opt.io_direct ? s->opt.io_direct : opara__backend_io_direct_default();
    for (i = 0; i < g->n_outputs; ++i) {
        s->output_off[i] = at;
        s->output_bytes += s->value_bytes[g->outputs[i]];
        if (!opara__add_size(at, (size_t)s->value_bytes[g->outputs[i]], &end) || !opara__add_size(end, OPARA__CUDA_ALIGN - 1, &end))
            return opara__backend_fail(s, OPARA_ERR_LIMIT_EXCEEDED, "CUDA backend: the host staging buffers overflow size_t");
        at = end / OPARA__CUDA_ALIGN * OPARA__CUDA_ALIGN;
    }
    if (at == 0) at = OPARA__CUDA_ALIGN; /* every output pointer stays valid (no inputs or outputs have bytes) */
    cr = OPARA__CU(s, cuMemAllocHost_v2(&p, at));
    if (cr != OPARA_CUDA_SUCCESS) /* page-locked host memory: out of (host) memory, not device memory */
        return opara__backend_fail(s, cr == OPARA_CUDA_ERROR_OUT_OF_MEMORY ? OPARA_ERR_OUT_OF_MEMORY : OPARA_ERR_CUDA,
                               "CUDA backend: cuMemAllocHost of %llu bytes for the pinned input/output staging failed: "
                               "%s (%d)", (unsigned long long)at, opara_cuda_driver_result_name(&s->cu, cr), (int)cr);
    s->host_io = (uint8_t*)p;
    memset(s->host_io, 0, at);
    return opara__backend_out_events(s);
}

/* Constants (uploaded once), static input buffers, the arena, the kernels' meta/aux tables and
   the pinned host staging. */
static opara_result opara__backend_memory(opara__cuda_session* s) {
    const opara__graph* g = s->g;
    size_t const_bytes = 0, input_bytes = 0, meta_bytes, params_bytes, arena_bytes = 0;
    uint32_t v, i;
    opara_result r;
    uint8_t* staging;
    s->const_off = (uint64_t*)opara__calloc(s->rt, g->n_values ? g->n_values : 1, sizeof(uint64_t));
    s->input_off = (uint64_t*)opara__calloc(s->rt, g->n_values ? g->n_values : 1, sizeof(uint64_t));
    if (!s->const_off || !s->input_off) return opara__backend_oom(s);
    for (v = 0; v < g->n_values; ++v) {
        const opara__value* val = &g->values[v];
        s->const_off[v] = UINT64_MAX;
        s->input_off[v] = UINT64_MAX;
        if (val->kind == OPARA__VALUE_CONST && val->data && val->nbytes > 0 && opara__backend_value_used(g, v)) {
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
    if ((r = opara__backend_workspaces(s, &arena_bytes)) != OPARA_OK) return r;
    if ((r = opara__backend_dalloc(s, &s->arena, arena_bytes, "arena and library workspaces")) != OPARA_OK) return r;
    if ((r = opara__backend_dalloc(s, &s->consts, const_bytes, "constants")) != OPARA_OK) return r;
    if ((r = opara__backend_dalloc(s, &s->inputs, input_bytes, "input buffers")) != OPARA_OK) return r;
    if ((r = opara__backend_dalloc(s, &s->params, params_bytes, "kernel tables")) != OPARA_OK) return r;
    s->input_bytes = input_bytes;
    if ((r = opara__backend_host_io(s)) != OPARA_OK) return r;
    for (v = 0; v < g->n_values; ++v)
        if (s->const_off[v] != UINT64_MAX)
            OPARA__CU_TRY(s, cuMemcpyHtoD_v2(s->consts + s->const_off[v], g->values[v].data, (size_t)g->values[v].nbytes),
                          "uploading constants");
    if (input_bytes) OPARA__CU_TRY(s, cuMemsetD8_v2(s->inputs, 0, input_bytes), "clearing the input buffers");
    if (params_bytes) {
        staging = (uint8_t*)opara__calloc(s->rt, params_bytes, 1);
        if (!staging) return opara__backend_oom(s);
        if (s->low.n_meta) memcpy(staging, s->low.meta, s->low.n_meta * sizeof(int32_t));
        if (s->low.n_aux) memcpy(staging + meta_bytes, s->low.aux, s->low.n_aux * sizeof(float));
        r = OPARA__CU(s, cuMemcpyHtoD_v2(s->params, staging, params_bytes)) == OPARA_CUDA_SUCCESS
                ? OPARA_OK : opara__backend_fail(s, OPARA_ERR_CUDA, "CUDA backend: uploading kernel tables failed");
        opara__free(s->rt, staging);
        if (r != OPARA_OK) return r;
    }
    return OPARA_OK;
}

/* Device address of value v per the plan (arena, alias of an input or constant), 0 if none. */
static opara_CUdeviceptr opara__backend_value_addr(const opara__cuda_session* s, int32_t v) {
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
static int opara__backend_lib_aligned(opara__cuda_session* s, const opara__cuda_launch* L) {
    uint32_t a;
    for (a = 0; a < L->n_args; ++a) {
        uint8_t k = L->args[a].kind;
        if ((k != OPARA__CUARG_TENSOR && k != OPARA__CUARG_AUX) || L->values[a] % OPARA__CUDA_LIB_ALIGN == 0) continue;
        opara__backend_fail(s, OPARA_ERR_INTERNAL, "CUDA backend: node %u '%s': pointer argument %u of its %s call (0x%llx) is "
                                               "not %u-byte aligned", L->node, s->g->nodes[L->node].name ? s->g->nodes[L->node].name : "",
                    a, L->type == OPARA__CULAUNCH_CUBLAS ? "cuBLAS" : "cuDNN", (unsigned long long)L->values[a],
                    OPARA__CUDA_LIB_ALIGN);
        return 0;
    }
    return 1;
}

/* Kernel parameters with device addresses; drops copies the plan made unnecessary. */
static opara_result opara__backend_bind(opara__cuda_session* s) {
    const opara__graph* g = s->g;
    uint32_t i, a;
    s->skip = (uint8_t*)opara__calloc(s->rt, s->low.n_launches ? s->low.n_launches : 1, 1);
    if (!s->skip) return opara__backend_oom(s);
    for (i = 0; i < s->low.n_launches; ++i) {
        opara__cuda_launch* L = &s->low.launches[i];
        const opara__node* n = &g->nodes[L->node];
        for (a = 0; a < L->n_args; ++a) {
            const opara__cuda_arg* arg = &L->args[a];
            uint64_t v = arg->raw;
            if (arg->kind == OPARA__CUARG_TENSOR) {
                v = opara__backend_value_addr(s, arg->ref);
                if (v == 0 && s->value_bytes[arg->ref] > 0)
                    return opara__backend_fail(s, OPARA_ERR_INTERNAL, "CUDA backend: value %d of node %u has no storage",
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
        if ((L->type == OPARA__CULAUNCH_CUBLAS || L->type == OPARA__CULAUNCH_CUDNN) && !opara__backend_lib_aligned(s, L))
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
static void* opara__backend_workspace(const opara__cuda_session* s, uint32_t n, size_t* bytes) {
    uint32_t k = s->ws_slot[n];
    *bytes = k == UINT32_MAX ? 0 : (size_t)s->ws_bytes[k];
    return *bytes ? (void*)(uintptr_t)(s->arena + s->ws_off[k]) : NULL;
}

/* Points the cuBLAS handle of a stream at node n's workspace (a host-side setting: nothing is
   enqueued). Called after cublasSetStream, which resets the workspace to the default pool (that
   pool allocates during capture), and before each GEMM whose slot differs from the handle's. */
static opara_cublasStatus_t opara__backend_cublas_workspace_for(opara__cuda_session* s, uint32_t stream, uint32_t n) {
    size_t bytes;
    void* ws = opara__backend_workspace(s, n, &bytes);
    opara_cublasStatus_t st;
    if (s->blas_slot[stream] == s->ws_slot[n]) return OPARA_CUBLAS_STATUS_SUCCESS;
    st = s->cublas.cublasSetWorkspace_v2(s->blas[stream], ws, bytes);
    if (st == OPARA_CUBLAS_STATUS_SUCCESS) s->blas_slot[stream] = s->ws_slot[n];
    return st;
}

/* The first node on a stream with a launch of this type (UINT32_MAX: none). */
static uint32_t opara__backend_stream_first_call(const opara__cuda_session* s, uint32_t stream, opara__cuda_launch_type type) {
    uint32_t k, i;
    for (k = 0; k < s->plan->n_nodes; ++k) {
        uint32_t n = s->plan->order[k];
        if (opara__backend_stream_of(s, n) != stream) continue;
        for (i = s->low.node_start[n]; i < s->low.node_start[n + 1]; ++i)
            if (s->low.launches[i].type == type) return n;
    }
    return UINT32_MAX;
}

/* A cuBLAS handle bound to stream i, holding the workspace of the stream's first GEMM node (first:
   set after the stream). */
static opara_result opara__backend_cublas_handle(opara__cuda_session* s, uint32_t i, uint32_t first) {
    opara_cublasStatus_t st = s->cublas.cublasCreate_v2(&s->blas[i]);
    if (st != OPARA_CUBLAS_STATUS_SUCCESS) s->blas[i] = NULL;
    if (st == OPARA_CUBLAS_STATUS_SUCCESS) st = s->cublas.cublasSetStream_v2(s->blas[i], s->streams[i]);
    s->blas_slot[i] = UINT32_MAX - 1; /* none yet (UINT32_MAX is "no workspace") */
    if (st == OPARA_CUBLAS_STATUS_SUCCESS) st = opara__backend_cublas_workspace_for(s, i, first);
    /* cublasMath_t (cuBLAS docs; cublas_api.h): DEFAULT_MATH keeps at least the requested precision
       (so never TF32 for SGEMM); TF32_TENSOR_OP_MATH lets single-precision routines use TF32 tensor
       cores. PEDANTIC_MATH (standardised arithmetic in every phase, documented as possibly slower)
       is not needed for exact FP32. */
    if (st == OPARA_CUBLAS_STATUS_SUCCESS)
        st = s->cublas.cublasSetMathMode(s->blas[i], s->tf32 ? OPARA_CUBLAS_TF32_TENSOR_OP_MATH : OPARA_CUBLAS_DEFAULT_MATH);
    if (st == OPARA_CUBLAS_STATUS_SUCCESS) return OPARA_OK;
    return opara__backend_fail(s, st == OPARA_CUBLAS_STATUS_ALLOC_FAILED ? OPARA_ERR_DEVICE_MEMORY : OPARA_ERR_CUBLAS,
                       "CUDA backend: cuBLAS handle for stream %u: %s (%d)", i, opara_cublas_status_name(st), (int)st);
}

/* A cuDNN handle bound to stream i (the heuristics' handle serves the first stream). */
static opara_result opara__backend_cudnn_handle(opara__cuda_session* s, uint32_t i) {
    opara_cudnnStatus_t st = OPARA_CUDNN_STATUS_SUCCESS;
    if (s->dnn_probe) {
        s->dnn_handles[i] = s->dnn_probe;
        s->dnn_probe = NULL;
    } else if ((st = s->dnn.cudnnCreate(&s->dnn_handles[i])) != OPARA_CUDNN_STATUS_SUCCESS) {
        s->dnn_handles[i] = NULL;
    }
    if (st == OPARA_CUDNN_STATUS_SUCCESS) st = s->dnn.cudnnSetStream(s->dnn_handles[i], s->streams[i]);
    if (st == OPARA_CUDNN_STATUS_SUCCESS) return OPARA_OK;
    return opara__backend_fail(s, opara__cudnn_out_of_memory(st) ? OPARA_ERR_DEVICE_MEMORY : OPARA_ERR_CUDNN,
                       "CUDA backend: cuDNN handle for stream %u: %s (%d)", i, opara_cudnn_status_name(st), (int)st);
}

/* One handle per library per stream that calls it, bound to that stream. */
static opara_result opara__backend_library_handles(opara__cuda_session* s, uint32_t n_streams) {
    uint32_t i;
    opara_result r;
    s->blas = (opara_cublasHandle_t*)opara__calloc(s->rt, n_streams, sizeof(opara_cublasHandle_t));
    s->blas_slot = (uint32_t*)opara__calloc(s->rt, n_streams, sizeof(uint32_t));
    s->dnn_handles = (opara_cudnnHandle_t*)opara__calloc(s->rt, n_streams, sizeof(opara_cudnnHandle_t));
    if (!s->blas || !s->blas_slot || !s->dnn_handles) return opara__backend_oom(s);
    for (i = 0; i < n_streams; ++i) {
        uint32_t first = s->have_cublas ? opara__backend_stream_first_call(s, i, OPARA__CULAUNCH_CUBLAS) : UINT32_MAX;
        if (first != UINT32_MAX && (r = opara__backend_cublas_handle(s, i, first)) != OPARA_OK) return r;
        if (s->have_cudnn && opara__backend_stream_first_call(s, i, OPARA__CULAUNCH_CUDNN) != UINT32_MAX &&
            (r = opara__backend_cudnn_handle(s, i)) != OPARA_OK)
            return r;
    }
    return OPARA_OK;
}

static opara_result opara__backend_streams(opara__cuda_session* s) {
    const opara__plan* p = s->plan;
    uint32_t i, n_streams = s->n_streams;
    s->streams = (opara_CUstream*)opara__calloc(s->rt, n_streams, sizeof(opara_CUstream));
    s->join_events = (opara_CUevent*)opara__calloc(s->rt, n_streams, sizeof(opara_CUevent));
    s->node_events = (opara_CUevent*)opara__calloc(s->rt, p->n_nodes ? p->n_nodes : 1, sizeof(opara_CUevent));
    if (!s->streams || !s->join_events || !s->node_events) return opara__backend_oom(s);
    for (i = 0; i < n_streams; ++i) {
        OPARA__CU_TRY(s, cuStreamCreate(&s->streams[i], 1 /* CU_STREAM_NON_BLOCKING */), "cuStreamCreate");
        if (i > 0 && p->lane_join[i])
            OPARA__CU_TRY(s, cuEventCreate(&s->join_events[i], 2 /* DISABLE_TIMING */), "cuEventCreate");
    }
    OPARA__CU_TRY(s, cuEventCreate(&s->fork_event, 2), "cuEventCreate");
    for (i = 0; i < p->n_nodes; ++i)
        if (p->records_event[i]) OPARA__CU_TRY(s, cuEventCreate(&s->node_events[i], 2), "cuEventCreate");
    return opara__backend_library_handles(s, n_streams);
}

/* ---- the launch sequence ----------------------------------------------------------------------- */

/* Row-major Y = alpha op(A) op(B) through column-major cuBLAS: Y^T = op(B)^T op(A)^T. A failure
   names cuBLAS's status (not a driver code). */
static opara_result opara__backend_launch_cublas(opara__cuda_session* s, const opara__cuda_launch* L, uint32_t stream) {
    int M = (int)L->values[4], N = (int)L->values[5], K = (int)L->values[6], ta = (int)L->values[7], tb = (int)L->values[8];
    int batch = (int)L->grid[2];
    float alpha, beta = 0.0f;
    uint32_t bits = (uint32_t)L->values[9];
    opara_cublasStatus_t st = opara__backend_cublas_workspace_for(s, stream, L->node);
    memcpy(&alpha, &bits, sizeof alpha);
    if (st == OPARA_CUBLAS_STATUS_SUCCESS) st = s->cublas.cublasSgemmStridedBatched(
        s->blas[stream], tb ? OPARA_CUBLAS_OP_T : OPARA_CUBLAS_OP_N, ta ? OPARA_CUBLAS_OP_T : OPARA_CUBLAS_OP_N, N, M, K, &alpha,
        (const float*)(uintptr_t)L->values[1], tb ? K : N, (long long)L->values[17], (const float*)(uintptr_t)L->values[0],
        ta ? M : K, (long long)L->values[16], &beta, (float*)(uintptr_t)L->values[3], N, (long long)L->values[18], batch);
    if (st == OPARA_CUBLAS_STATUS_SUCCESS) return OPARA_OK;
    return opara__backend_fail(s, st == OPARA_CUBLAS_STATUS_ALLOC_FAILED ? OPARA_ERR_DEVICE_MEMORY : OPARA_ERR_CUBLAS,
                       "CUDA backend: %s for node %u failed: %s (%d)",
                       s->blas_slot[stream] == s->ws_slot[L->node] ? "cublasSgemmStridedBatched" : "cublasSetWorkspace", L->node,
                       opara_cublas_status_name(st), (int)st);
}

/* A failure names cuDNN's status (not a driver code). */
static opara_result opara__backend_launch_cudnn(opara__cuda_session* s, const opara__cuda_launch* L, uint32_t stream) {
    const opara__cudnn_conv* conv = &s->low.dnn_convs[L->lib];
    size_t bytes;
    void* ws = opara__backend_workspace(s, L->node, &bytes);
    opara_cudnnStatus_t st = opara__cudnn_conv_run(&s->dnn, s->dnn_handles[stream], conv, (const void*)(uintptr_t)L->values[0],
                                                   (const void*)(uintptr_t)L->values[1], (const void*)(uintptr_t)L->values[2],
                                                   (void*)(uintptr_t)L->values[3], ws, bytes);
    if (st == OPARA_CUDNN_STATUS_SUCCESS) return OPARA_OK;
    return opara__backend_fail(s, opara__cudnn_out_of_memory(st) ? OPARA_ERR_DEVICE_MEMORY : OPARA_ERR_CUDNN,
                       "CUDA backend: %s for node %u failed: %s (%d)",
                       conv->call == OPARA__CUDNN_FORWARD ? "cudnnConvolutionForward" : "cudnnConvolutionBiasActivationForward",
                       L->node, opara_cudnn_status_name(st), (int)st);
}

static const char* opara__backend_launch_name(const opara__cuda_launch* L) {
    return L->type == OPARA__CULAUNCH_KERNEL ? opara__cuda_kernel_name((opara__cuda_kernel)L->kernel) : "a copy";
}

/* One launch of node L->node on a stream: a library call (which reports its own status) or a
   driver call. */
static opara_result opara__backend_launch_one(opara__cuda_session* s, opara__cuda_launch* L, uint32_t stream) {
    opara_CUstream st = s->streams[stream];
    opara_CUresult r;
    char what[160];
    switch (L->type) {
    case OPARA__CULAUNCH_CUBLAS: return opara__backend_launch_cublas(s, L, stream);
    case OPARA__CULAUNCH_CUDNN: return opara__backend_launch_cudnn(s, L, stream);
    case OPARA__CULAUNCH_COPY:
        r = OPARA__CU(s, cuMemcpyDtoDAsync_v2(L->values[0], L->values[1], (size_t)s->value_bytes[L->args[0].ref], st));
        break;
    default:
        r = OPARA__CU(s, cuLaunchKernel(s->funcs[L->kernel], L->grid[0], L->grid[1], L->grid[2], L->block[0], L->block[1],
                                        L->block[2], 0, st, L->params, NULL));
        break;
    }
    if (r == OPARA_CUDA_SUCCESS) return OPARA_OK;
    opara__format(what, sizeof what, "launching %s for node %u", opara__backend_launch_name(L), L->node);
    return opara__backend_cu_fail(s, r, what);
}

/* Everything the plan says, in its order, from the origin stream 0: fork, per node its waits,
   launches and event, then the join. Used for eager runs and, unchanged, for capture. */
static opara_result opara__backend_enqueue(opara__cuda_session* s) {
    const opara__plan* p = s->plan;
    opara_CUstream origin = s->streams[0];
    uint32_t k, i, st;
    OPARA__CU_TRY(s, cuEventRecord(s->fork_event, origin), "cuEventRecord (fork)");
    for (st = 1; st < s->n_streams; ++st)
        if (p->lane_fork[st]) OPARA__CU_TRY(s, cuStreamWaitEvent(s->streams[st], s->fork_event, 0), "cuStreamWaitEvent (fork)");
    for (k = 0; k < p->n_nodes; ++k) {
        uint32_t n = p->order[k], sn = opara__backend_stream_of(s, n);
        opara_result hr;
        int began = 0;
        for (i = p->wait_start[n]; i < p->wait_start[n + 1]; ++i)
            if (opara__backend_stream_of(s, p->wait_nodes[i]) != sn) /* else launched earlier on this very stream */
                OPARA__CU_TRY(s, cuStreamWaitEvent(s->streams[sn], s->node_events[p->wait_nodes[i]], 0), "cuStreamWaitEvent");
        for (i = s->low.node_start[n]; i < s->low.node_start[n + 1]; ++i) {
            if (s->skip[i]) continue;
            if (s->hook && !began++ && (hr = s->hook(s->hook_user, n, 0, s->streams[sn])) != OPARA_OK) return hr;
            if ((hr = opara__backend_launch_one(s, &s->low.launches[i], sn)) != OPARA_OK) return hr;
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
    opara__errbuf* err = s->err;
    s->err = &s->rt->error; /* a profiling run belongs to the creation of another session */
    s->hook = hook;
    s->hook_user = user;
    r = opara__backend_enqueue(s);
    s->hook = NULL;
    s->hook_user = NULL;
    if (r == OPARA_OK) {
        opara_CUresult cr = OPARA__CU(s, cuStreamSynchronize(s->streams[0]));
        if (cr != OPARA_CUDA_SUCCESS) r = opara__backend_cu_fail(s, cr, "the profiling run");
    }
    s->err = err;
    return r;
}

OPARA__PRIVATE opara_result opara__cuda_session_enter(opara__cuda_session* s) {
    opara_CUresult r = opara__backend_enter(s);
    return r == OPARA_CUDA_SUCCESS ? OPARA_OK : opara__backend_cu_fail(s, r, "cuCtxPushCurrent");
}

OPARA__PRIVATE void opara__cuda_session_leave(opara__cuda_session* s) { opara__backend_leave(s); }

/* Captures the sequence from the origin stream and instantiates it. On failure returns the
   reason in why (the caller falls back to eager). */
static int opara__backend_capture(opara__cuda_session* s, char* why, size_t cap) {
    opara_CUstream origin = s->streams[0];
    opara_CUresult r;
    opara_result er;
    opara_CUgraph graph = NULL;
    r = OPARA__CU(s, cuStreamBeginCapture_v2(origin, OPARA_CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    if (r != OPARA_CUDA_SUCCESS) {
        opara__format(why, cap, "cuStreamBeginCapture: %s", opara_cuda_driver_result_name(&s->cu, r));
        return 0;
    }
    s->hook = s->opt.test_capture_hook;
    s->hook_user = s->opt.test_capture_hook_user;
    er = opara__backend_enqueue(s);
    s->hook = NULL;
    s->hook_user = NULL;
    if (er == OPARA_OK && s->opt.test_break_capture) {
        opara_CUdeviceptr p = 0; /* an unsafe call during capture: it invalidates the capture */
        if (OPARA__CU(s, cuMemAlloc_v2(&p, 256)) == OPARA_CUDA_SUCCESS) OPARA__CU(s, cuMemFree_v2(p));
    }
    r = OPARA__CU(s, cuStreamEndCapture(origin, &graph));
    if (er != OPARA_OK) {
        opara__format(why, cap, "capturing the launch sequence: %s", s->err->text);
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

/* Device objects of the session, in the session's context (the caller pushed it). */
static void opara__backend_free_device(opara__cuda_session* s) {
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
    if (s->out_events)
        for (i = 0; i < s->n_out_events; ++i)
            if (s->out_events[i]) OPARA__CU(s, cuEventDestroy_v2(s->out_events[i]));
    if (s->streams)
        for (i = 0; i < n_streams; ++i)
            if (s->streams[i]) OPARA__CU(s, cuStreamDestroy_v2(s->streams[i]));
    if (s->arena) OPARA__CU(s, cuMemFree_v2(s->arena));
    if (s->consts) OPARA__CU(s, cuMemFree_v2(s->consts));
    if (s->inputs) OPARA__CU(s, cuMemFree_v2(s->inputs));
    if (s->params) OPARA__CU(s, cuMemFree_v2(s->params));
    if (s->host_io) OPARA__CU(s, cuMemFreeHost(s->host_io));
    for (i = 0; i < OPARA__CUDA_FILES; ++i)
        if (s->modules[i]) OPARA__CU(s, cuModuleUnload(s->modules[i]));
}

/* Any thread: the device objects go in the session's context (pushed over the caller's, then
   popped); the driver, the libraries and the primary context stay with the runtime. */
OPARA__PRIVATE void opara__cuda_session_destroy(opara__cuda_session* s) {
    opara_runtime* rt;
    if (!s) return;
    rt = s->rt;
    if (s->shared) {
        opara_CUresult cr = opara__backend_enter(s);
        if (cr == OPARA_CUDA_SUCCESS) {
            opara__backend_free_device(s);
            opara__backend_leave(s);
        } else {
            opara__log(opara__backend_log(s), OPARA_LOG_ERROR, OPARA_LOGITEM_ERROR_DETAIL,
                       "CUDA backend: destroying a session: cuCtxPushCurrent failed: %s (%d); its device memory, streams "
                       "and modules stay until the primary context is released",
                       opara_cuda_driver_result_name(&s->cu, cr), (int)cr);
        }
        opara__cuda_runtime_detach(s->shared);
    }
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
    opara__free(rt, s->output_off);
    opara__free(rt, s->out_events);
    opara__free(rt, s->skip);
    opara__free(rt, s->prof);
    opara__free(rt, s->measured);
    if (s->plan) opara__plan_free(s->g->rt, s->plan); /* the planner allocates with the graph's (model's) runtime */
    opara__cuda_lowering_free(rt, &s->low); /* its cuDNN descriptors: the runtime keeps cuDNN loaded */
    opara__free(rt, s->shapes);
    opara__free(rt, s->node_params);
    opara__free(rt, s->dtypes);
    opara__free(rt, s->value_bytes);
    opara__free(rt, s);
}

/* cuDNN's version number: 9.x is major*10000 + minor*100 + patch, 8.x major*1000 + minor*100 + patch. */
static void opara__backend_cudnn_version(size_t v, char* out, size_t cap) {
    if (v >= 90000) opara__format(out, cap, "%u.%u.%u", (unsigned)(v / 10000), (unsigned)(v / 100 % 100), (unsigned)(v % 100));
    else opara__format(out, cap, "%u.%u.%u", (unsigned)(v / 1000), (unsigned)(v / 100 % 10), (unsigned)(v % 100));
}

/* The libraries that serve the session, with versions and the files mapped, "; "-separated
   (opara_plan_info.libraries): the driver, cuBLAS and cuDNN when ops run on them, NVRTC when it
   compiled our kernels. */
static void opara__backend_describe_libraries(opara__cuda_session* s) {
    char* out = s->libraries;
    size_t cap = sizeof s->libraries, at;
    uint32_t i, gemms = 0;
    opara__format(out, cap, "CUDA driver %d.%d %s", s->cu.driver_version / 1000, s->cu.driver_version % 1000 / 10, s->cu.path);
    for (i = 0; i < s->low.n_launches; ++i) gemms += s->low.launches[i].type == OPARA__CULAUNCH_CUBLAS;
    if (gemms > 0) {
        int v[3] = {0, 0, 0}, k;
        for (k = 0; k < 3; ++k) s->cublas.cublasGetProperty((opara_libraryPropertyType)k, &v[k]);
        at = strlen(out);
        opara__format(out + at, cap - at, "; cuBLAS %d.%d.%d %s", v[0], v[1], v[2], s->cublas.path);
    }
    if (s->have_cudnn && s->low.n_dnn_convs > 0) {
        char ver[32];
        opara__backend_cudnn_version(s->dnn.cudnnGetVersion(), ver, sizeof ver);
        at = strlen(out);
        opara__format(out + at, cap - at, "; cuDNN %s %s", ver, s->dnn.path);
    }
    if (s->nvrtc_lib[0]) {
        at = strlen(out);
        opara__format(out + at, cap - at, "; %s", s->nvrtc_lib);
    }
}

/* Which library runs what, and the workspaces' memory (INFO: `opara run` shows it). */
static void opara__backend_log_libraries(const opara__cuda_session* s) {
    uint32_t n, calls = 0;
    for (n = 0; n < s->plan->n_nodes; ++n) calls += s->ws_slot[n] != UINT32_MAX;
    opara__log(opara__backend_log(s), OPARA_LOG_INFO, OPARA_LOGITEM_PLAN_SUMMARY,
               "CUDA backend: the plan's %u streams on %u CUDA streams; %u of %u Conv on cuDNN%s, GEMM on %s, %s; "
               "library workspaces %.2f MiB: %u blocks shared by the %u nodes that need one (arena %.2f MiB, same allocation)",
               s->plan->n_streams, s->n_streams, s->low.n_dnn_convs, s->low.n_conv,
               s->low.n_dnn_refused ? " (cuDNN refused some: see the warnings)" : "",
               s->have_cublas ? "cuBLAS" : "opara_sgemm_f32", s->tf32 ? "TF32 allowed" : "exact FP32",
               (double)s->workspace_bytes / 1048576.0, s->n_workspaces, calls, (double)s->plan->arena_bytes / 1048576.0);
}

/* Everything of opening after attaching, with the session's context pushed. */
static opara_result opara__backend_setup(opara__cuda_session* s, const opara__cuda_shapes* shapes) {
    opara_result r;
    opara__backend_describe_device(s);
    if ((r = opara__backend_load_modules(s)) != OPARA_OK) return r;
    if ((r = opara__backend_shapes(s, shapes)) != OPARA_OK) return r;
    if ((r = opara__backend_cudnn_probe(s)) != OPARA_OK) return r;
    /* TF32 tensor cores exist from compute capability 8.0 (Ampere); below, TF32 means FP32 */
    s->tf32 = s->opt.precision == OPARA_PRECISION_TF32 && s->cc_major >= 8;
    if (s->opt.precision == OPARA_PRECISION_TF32 && !s->tf32)
        opara__log(opara__backend_log(s), OPARA_LOG_INFO, OPARA_LOGITEM_BACKEND_FALLBACK,
                   "CUDA backend: TF32 requested, but %s (compute capability %d.%d) has no TF32 tensor cores: exact FP32",
                   s->device_name, s->cc_major, s->cc_minor);
    s->low.use_cublas = s->have_cublas;
    s->low.logger = opara__backend_log(s);
    s->low.tf32 = s->tf32;
    if (s->have_cudnn) s->low.dnn = &s->dnn, s->low.dnn_handle = s->dnn_probe;
    return opara__cuda_lower(s->rt, s->g, s->shapes, s->node_params, s->dtypes, &s->low);
}

/* Everything the plan decides, with the session's context pushed. */
static opara_result opara__backend_take_plan(opara__cuda_session* s) {
    opara_result r;
    s->n_streams = s->plan->n_lanes ? s->plan->n_lanes : 1;
    if ((r = opara__backend_memory(s)) != OPARA_OK) return r;
    if ((r = opara__backend_bind(s)) != OPARA_OK) return r;
    if ((r = opara__backend_streams(s)) != OPARA_OK) return r;
    opara__backend_describe_libraries(s);
    opara__backend_log_libraries(s);
    return OPARA_OK;
}

/* Graph modes: a warm-up run (so lazy library state exists before capture), then capture and
   instantiate; on failure eager, with the reason logged. */
static opara_result opara__backend_prepare_mode(opara__cuda_session* s) {
    opara_result r;
    s->mode = s->opt.mode;
    if (s->mode == OPARA__CUDA_EAGER) return OPARA_OK;
    if ((r = opara__backend_enqueue(s)) != OPARA_OK) return r;
    OPARA__CU_TRY(s, cuStreamSynchronize(s->streams[0]), "warm-up run");
    if (!opara__backend_capture(s, s->fallback, sizeof s->fallback)) {
        opara__log(opara__backend_log(s), OPARA_LOG_WARN, OPARA_LOGITEM_GRAPH_FALLBACK,
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

/* A copy of the profiling run's rows (the caller's live only while it opens the session). */
static opara_result opara__backend_keep_measured(opara__cuda_session* s) {
    size_t n = s->g->n_nodes ? s->g->n_nodes : 1;
    if (!s->opt.measured) return OPARA_OK;
    s->measured = (opara__cuda_op_profile*)opara__calloc(s->rt, n, sizeof *s->measured);
    if (!s->measured) return opara__backend_oom(s);
    memcpy(s->measured, s->opt.measured, s->g->n_nodes * sizeof *s->measured);
    s->opt.measured = s->measured;
    return OPARA_OK;
}

OPARA__PRIVATE opara_result opara__cuda_session_open(opara_runtime* rt, const opara__graph* g, const opara__cuda_options* opt,
                                                    const opara__cuda_shapes* shapes, opara__cuda_session** out) {
    opara__cuda_session* s;
    opara_result r;
    const opara_logger* log = opara__cuda_logger(rt, opt);
    if (!out) return opara__fail_to(&rt->error, log, OPARA_ERR_INVALID_ARGS, "CUDA backend: out is NULL");
    *out = NULL;
    if (!g || !g->finalized || !shapes || !shapes->shapes || !shapes->params || !shapes->dtypes || !shapes->value_bytes)
        return opara__fail_to(&rt->error, log, OPARA_ERR_INVALID_ARGS, "CUDA backend: the graph is not finalized or has no shapes");
    s = (opara__cuda_session*)opara__calloc(rt, 1, sizeof *s);
    if (!s) return opara__fail_to(&rt->error, log, OPARA_ERR_OUT_OF_MEMORY, "CUDA backend: out of host memory");
    s->rt = rt;
    s->g = g;
    s->err = &rt->error;
    if (opt) s->opt = *opt;
    s->opt.plan = NULL; /* the caller plans (opara__cuda_session_describe says what the plan must respect) */
    if ((unsigned)s->opt.precision >= (unsigned)OPARA_PRECISION_COUNT) {
        opara_precision precision = s->opt.precision;
        opara__free(rt, s);
        return opara__fail_to(&rt->error, log, OPARA_ERR_BAD_ENUM, "CUDA backend: unknown precision %d", (int)precision);
    }
    r = opara__backend_keep_measured(s);
    if (r == OPARA_OK) r = opara__backend_attach(s);
    if (r == OPARA_OK) r = opara__cuda_session_enter(s);
    if (r == OPARA_OK) {
        r = opara__backend_setup(s, shapes);
        opara__backend_leave(s);
    }
    if (r != OPARA_OK) {
        opara__cuda_session_destroy(s); /* makes no opara__fail: the first failure's text stays */
        return r;
    }
    *out = s;
    return OPARA_OK;
}

OPARA__PRIVATE opara_result opara__cuda_session_prepare(opara__cuda_session* s, opara__plan* plan) {
    opara_result r;
    if (!plan || s->plan) {
        if (plan) opara__plan_free(s->g->rt, plan);
        return opara__backend_fail(s, OPARA_ERR_INVALID_STATE, "CUDA backend: a session takes one plan");
    }
    s->plan = plan;
    r = opara__cuda_session_enter(s);
    if (r == OPARA_OK) {
        r = opara__backend_take_plan(s);
        if (r == OPARA_OK) r = opara__backend_prepare_mode(s);
        opara__backend_leave(s);
    }
    if (r == OPARA_OK) s->err = &s->error;
    return r;
}

/* The plan once, from the origin stream: the eager launch sequence or one graph launch. */
static opara_result opara__backend_execute(opara__cuda_session* s) {
    if (s->mode == OPARA__CUDA_EAGER) return opara__backend_enqueue(s);
    OPARA__CU_TRY(s, cuGraphLaunch(s->exec, s->streams[0]), "cuGraphLaunch");
    return OPARA_OK;
}

/* A device address given as a pointer (the public API's tensor data). */
static opara_CUdeviceptr opara__backend_devptr(const void* p) { return (opara_CUdeviceptr)(uintptr_t)p; }

/* Whether host input v skips the staging (OPARA_CUDA_IO_DIRECT). */
static int opara__backend_input_direct(const opara__cuda_session* s, int32_t v) {
    return s->value_bytes[v] >= s->io_direct;
}

/* Queues the copy of staging bytes [*lo, *hi) to the device input buffers, if any, and empties the range. */
static opara_result opara__backend_stage_flush(opara__cuda_session* s, size_t* lo, size_t* hi) {
    if (*lo < *hi)
        OPARA__CU_TRY(s, cuMemcpyHtoDAsync_v2(s->inputs + *lo, s->host_io + *lo, *hi - *lo, s->streams[0]),
                      "copying the inputs to the device");
    *lo = SIZE_MAX, *hi = 0;
    return OPARA_OK;
}

/* Host inputs in, pipelined: the input region goes in pieces of io_chunk bytes; each piece's
   cuMemcpyHtoDAsync (from pinned memory, so asynchronous) is queued as soon as the host has copied
   the caller's bytes of it into the staging, and its DMA runs while the host copies the next piece.
   Inputs of less than a chunk make one copy, as a single copy of the region did. Direct inputs
   (OPARA_CUDA_IO_DIRECT) go from the caller's memory in one copy each; a piece's copies stop short
   of them (the inputs lie in the region in input order). */
static opara_result opara__backend_inputs_in(opara__cuda_session* s, const void* const* inputs) {
    const opara__graph* g = s->g;
    size_t at, end, lo = SIZE_MAX, hi = 0;
    uint32_t i;
    opara_result r;
    for (at = 0; at < s->input_bytes; at = end) {
        end = s->input_bytes - at > s->io_chunk ? at + s->io_chunk : s->input_bytes;
        for (i = 0; i < g->n_inputs; ++i) { /* the part of each input that lies in [at, end) */
            int32_t v = g->inputs[i];
            size_t off = (size_t)s->input_off[v], stop = off + (size_t)s->value_bytes[v];
            size_t from = off > at ? off : at, to = stop < end ? stop : end;
            if (from >= to) continue;
            if (opara__backend_input_direct(s, v)) {
                if ((r = opara__backend_stage_flush(s, &lo, &hi)) != OPARA_OK) return r;
                continue;
            }
            memcpy(s->host_io + from, (const uint8_t*)inputs[i] + (from - off), to - from);
            if (lo == SIZE_MAX) lo = from;
            hi = to;
        }
        if ((r = opara__backend_stage_flush(s, &lo, &hi)) != OPARA_OK) return r;
    }
    for (i = 0; i < g->n_inputs; ++i) {
        int32_t v = g->inputs[i];
        if (s->value_bytes[v] && opara__backend_input_direct(s, v))
            OPARA__CU_TRY(s, cuMemcpyHtoDAsync_v2(s->inputs + s->input_off[v], inputs[i], (size_t)s->value_bytes[v], s->streams[0]),
                          "copying the inputs to the device");
    }
    return OPARA_OK;
}

/* Device inputs in: one copy per input from the caller's pointers. */
static opara_result opara__backend_inputs_device(opara__cuda_session* s, const void* const* dev_in) {
    const opara__graph* g = s->g;
    uint32_t i;
    for (i = 0; i < g->n_inputs; ++i) {
        int32_t v = g->inputs[i];
        if (s->value_bytes[v])
            OPARA__CU_TRY(s, cuMemcpyDtoDAsync_v2(s->inputs + s->input_off[v], opara__backend_devptr(dev_in[i]),
                                                  (size_t)s->value_bytes[v], s->streams[0]),
                          "copying the inputs to the device");
    }
    return OPARA_OK;
}

/* Outputs out: device runs copy to the caller's pointers where given; host runs queue every output
   piece into the staging and an event after each group but the last (opara__cuda_piece). */
static opara_result opara__backend_outputs_out(opara__cuda_session* s, void* const* dev_out) {
    const opara__graph* g = s->g;
    opara_CUstream origin = s->streams[0];
    opara__cuda_piece p;
    uint32_t i;
    for (i = 0; dev_out && i < g->n_outputs; ++i) {
        int32_t v = g->outputs[i];
        if (s->value_bytes[v] && dev_out[i])
            OPARA__CU_TRY(s, cuMemcpyDtoDAsync_v2(opara__backend_devptr(dev_out[i]), opara__backend_value_addr(s, v),
                                                  (size_t)s->value_bytes[v], origin), "copying an output");
    }
    memset(&p, 0, sizeof p);
    while (!dev_out && opara__backend_next_piece(s, &p)) {
        size_t off = (size_t)s->output_off[p.output] + p.off;
        OPARA__CU_TRY(s, cuMemcpyDtoHAsync_v2(s->host_io + off, opara__backend_value_addr(s, g->outputs[p.output]) + p.off,
                                              p.bytes, origin), "copying an output");
        if (p.ends_group) OPARA__CU_TRY(s, cuEventRecord(s->out_events[p.group], origin), "cuEventRecord (outputs)");
    }
    return OPARA_OK;
}

/* Copies the output pieces of groups [from, to) from the staging to the caller's pointers (NULL, or
   the staging itself: nothing to copy), waiting for each group's event first: the host copies one
   group while the next is still coming back. to > n_out_events: the last group, which the caller
   has synchronized. */
static opara_result opara__backend_outputs_deliver(opara__cuda_session* s, void* const* outputs, uint32_t from, uint32_t to) {
    opara__cuda_piece p;
    uint32_t waited = from;
    memset(&p, 0, sizeof p);
    while (opara__backend_next_piece(s, &p) && p.group < to) {
        uint8_t* staged = s->host_io + s->output_off[p.output];
        if (p.group < from) continue;
        if (p.group >= waited && p.group < s->n_out_events) {
            OPARA__CU_TRY(s, cuEventSynchronize(s->out_events[p.group]), "running the model");
            waited = p.group + 1;
        }
        if (outputs && outputs[p.output] && outputs[p.output] != (void*)staged)
            memcpy((uint8_t*)outputs[p.output] + p.off, staged + p.off, p.bytes);
    }
    return OPARA_OK;
}

/* One run in the pushed context, all on the origin stream: inputs in (host: pipelined through the
   pinned staging; device: one copy per input from the caller's pointers), the plan, outputs out
   (host: pipelined into the staging and on to the caller's pointers where given; device: to the
   caller's pointers where given), synchronize. A failure still waits for what was queued, so no copy
   is left reading or writing the staging. */
static opara_result opara__backend_run(opara__cuda_session* s, const opara__cuda_io* io) {
    opara_CUresult cr;
    opara_result r = io->device ? opara__backend_inputs_device(s, io->in) : opara__backend_inputs_in(s, io->in);
    if (r == OPARA_OK) r = opara__backend_execute(s);
    if (r == OPARA_OK) r = opara__backend_outputs_out(s, io->device ? io->out : NULL);
    if (r == OPARA_OK && !io->device) r = opara__backend_outputs_deliver(s, io->out, 0, s->n_out_events);
    cr = OPARA__CU(s, cuStreamSynchronize(s->streams[0]));
    if (r == OPARA_OK && cr != OPARA_CUDA_SUCCESS) r = opara__backend_cu_fail(s, cr, "running the model");
    if (r == OPARA_OK && !io->device) r = opara__backend_outputs_deliver(s, io->out, s->n_out_events, UINT32_MAX);
    return r;
}

/* A run from any thread: the session's context is pushed over the caller's and popped. */
static opara_result opara__backend_run_entry(opara__cuda_session* s, const opara__cuda_io* io) {
    uint64_t before = s->calls;
    opara_result r = opara__cuda_session_enter(s);
    if (r != OPARA_OK) return r;
    r = opara__backend_run(s, io);
    opara__backend_leave(s);
    s->calls_last_run = s->calls - before;
    return r;
}

OPARA__PRIVATE opara_result opara__cuda_session_run(opara__cuda_session* s, const void* const* inputs,
                                                   void* const* outputs) {
    const opara__graph* g = s->g;
    opara__cuda_io io;
    uint32_t i;
    for (i = 0; i < g->n_inputs; ++i)
        if (s->value_bytes[g->inputs[i]] && (!inputs || !inputs[i]))
            return opara__backend_fail(s, OPARA_ERR_INVALID_ARGS, "CUDA backend: input %u is NULL", i);
    io.in = inputs;
    io.out = outputs;
    io.device = 0;
    return opara__backend_run_entry(s, &io);
}

OPARA__PRIVATE opara_result opara__cuda_session_run_device(opara__cuda_session* s, const void* const* inputs,
                                                          void* const* outputs) {
    const opara__graph* g = s->g;
    opara__cuda_io io;
    uint32_t i;
    for (i = 0; i < g->n_inputs; ++i)
        if (s->value_bytes[g->inputs[i]] && (!inputs || !inputs[i]))
            return opara__backend_fail(s, OPARA_ERR_INVALID_ARGS, "CUDA backend: input %u has no device pointer", i);
    if (!outputs) return opara__backend_fail(s, OPARA_ERR_INVALID_ARGS, "CUDA backend: no output device pointers");
    io.in = inputs;
    io.out = outputs;
    io.device = 1;
    return opara__backend_run_entry(s, &io);
}

OPARA__PRIVATE const void* opara__cuda_session_output(const opara__cuda_session* s, uint32_t index) {
    return index < s->g->n_outputs ? s->host_io + s->output_off[index] : NULL;
}

OPARA__PRIVATE const char* opara__cuda_session_last_error(const opara__cuda_session* s) { return s->error.text; }

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
    info->kernels = s->kernels;
    info->libraries = s->libraries;
    info->n_launches = s->low.n_launches;
    info->driver_calls_last_run = s->calls_last_run;
    info->arena_bytes = s->plan ? s->plan->arena_bytes : 0;
    info->plan = s->plan;
    info->shapes = s->shapes;
    info->graph = s->graph;
    info->launches = s->low.launches;
    info->node_launch_start = s->low.node_start;
    info->profile = s->prof;
    info->funcs = s->funcs;
}

OPARA__PRIVATE const opara_cuda_driver* opara__cuda_session_driver(const opara__cuda_session* s) { return &s->cu; }
