/* The runtime object: allocator, logger, last error, and the backend state it keeps loaded. */
#include "opara_internal.h"

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
    if (!opara__mutex_init(&rt->lock)) {
        opara__free_aligned(&desc->allocator, rt);
        return OPARA_ERR_OUT_OF_MEMORY;
    }
    rt->allocator = desc->allocator;
    rt->logger = desc->logger;
    rt->verify_content_hash = desc->verify_content_hash != 0;
    *out = rt;
    return OPARA_OK;
}

OPARADEF void opara_runtime_destroy(opara_runtime* runtime) {
    opara_allocator allocator;
    if (!runtime) return;
    if (runtime->cuda.release) runtime->cuda.release(runtime, runtime->cuda.state);
    opara__mutex_destroy(&runtime->lock);
    allocator = runtime->allocator;
    opara__free_aligned(&allocator, runtime);
}

OPARADEF const char* opara_runtime_last_error(const opara_runtime* runtime) {
    return runtime ? runtime->error.text : "no runtime";
}
