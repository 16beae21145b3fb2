/* The backend interface: one small table of functions that each backend (CPU, CUDA) implements and
   the session drives (sokol's per-backend function set, ggml-backend's interface). The session
   resolves the desc's defaults and infers shapes once (opara_session.c), then per backend:

     open      the backend's object for this session (CUDA: attach, kernels, lowering, and the
               profiling run when asked for)
     describe  cost descriptors for its device, the device model, and what the plan must respect
     (plan)    the session plans once through the planner and verifies (opara__backend_make)
     create    takes over the verified plan (CPU: the executor; CUDA: device memory, streams, capture)
     run       inputs from host buffers (CUDA also from device pointers), outputs read back after
     info      plan info, per-node times, per-node kernels; last error; destroy

   A backend neither infers shapes nor plans. The session reaches a backend only through its table
   (opara__backend_cpu(), opara__backend_cuda()); OPARA_BACKEND_AUTO tries the compiled-in tables in
   order (opara_session.c). */
#ifndef OPARA_BACKEND_H
#define OPARA_BACKEND_H

#include "opara_sched.h"
#include "../model/opara_model.h"

/* What the session resolved and inferred once, borrowed by open for the backend's life. */
typedef struct opara__backend_given {
    opara_runtime* rt;
    const opara__graph* g;
    const opara_session_desc* desc;   /* every default resolved; NULL when options stand for it */
    const opara__plan_desc* plan;     /* what the session asks of the plan (NULL: defaults); describe adds the backend's needs */
    const opara__shape* shapes;
    const opara__node_params* params; /* [n_nodes] what the shape engine resolved per node */
    const opara_dtype* dtypes;
    const uint64_t* value_bytes;
    opara_logger logger;              /* the session's: where the backend's messages go, its creation's failures included */
    const void* options;              /* a backend's own options instead of desc (the CUDA tests' opara__cuda_options) */
} opara__backend_given;

typedef struct opara__backend {
    const char* name;  /* as opara_plan_info.backend says it: "cpu", "cuda" */
    const char* title; /* in messages: "CPU", "CUDA" */
    opara_backend kind;
    /* OPARA_OK when the backend can run here (CUDA: the runtime's driver loads and has a device;
       it stays loaded); otherwise reason says why. OPARA_ERR_OUT_OF_MEMORY: host memory ran out. */
    opara_result (*available)(opara_runtime* rt, char* reason, size_t cap);
    /* On failure *out is NULL, nothing is left and the runtime's error says why. */
    opara_result (*open)(const opara__backend_given* setup, void** out);
    /* descs[n_nodes] for the planner, the device model (*dev, valid while the object lives), and
       what the plan must respect, set in pd. Once. */
    opara_result (*describe)(void* be, opara__op_desc* descs, opara__plan_desc* pd, const opara__device** dev);
    /* Takes over plan (verified; freed with the object, also on failure). */
    opara_result (*create)(void* be, opara__plan* plan);
    /* inputs[i]: host data of graph input i (sizes from the shapes); the outputs stay in the
       backend (output), and graph output i is also copied to outputs[i] where that is not NULL (the
       CUDA backend as each piece comes back from the device). Failures go to last_error (runs may
       happen on any thread); the outputs' contents are then unspecified. */
    opara_result (*run)(void* be, const void* const* inputs, void* const* outputs);
    /* The same with device pointers (outputs[i] NULL: not copied); NULL when the backend has none. */
    opara_result (*run_device)(void* be, const void* const* inputs, void* const* outputs);
    /* Graph output `index` of the last host run. */
    const void* (*output)(const void* be, uint32_t index);
    /* The backend's part of opara_session_get_plan_info (the session fills the plan's counts). */
    void (*plan_info)(const void* be, opara_plan_info* out);
    /* As opara_session_get_node_times. */
    uint32_t (*node_times)(const void* be, opara_node_time* out, uint32_t cap);
    /* As opara_session_get_node_kernel, after the caller checked node; NULL: no per-node kernels. */
    opara_result (*node_kernel)(const void* be, uint32_t node, opara_node_kernel* out);
    const char* (*last_error)(const void* be);
    void (*destroy)(void* be); /* NULL is ignored */
} opara__backend;

/* open, describe, plan (verified: the streams run truly concurrently, and a captured graph in any
   order its edges allow), create. keep: [n_nodes] receives the descriptors the plan was made with
   (NULL: not kept); plan (may be NULL) the plan, which the object owns and never replaces. On
   failure *out is NULL and the runtime's error says why (opara_backend.c). */
OPARA__PRIVATE opara_result opara__backend_make(const opara__backend* b, const opara__backend_given* setup,
                                               opara__op_desc* keep, void** out, const opara__plan** plan);

/* Each backend's one table (functions, not variables: a static variable cannot be declared ahead
   in C++, and the amalgamation makes private names static). */
OPARA__PRIVATE const opara__backend* opara__backend_cpu(void); /* opara_backend_cpu.c */
#ifndef OPARA_NO_CUDA
OPARA__PRIVATE const opara__backend* opara__backend_cuda(void); /* opara_cuda_table.c */
#endif

#endif /* OPARA_BACKEND_H */
