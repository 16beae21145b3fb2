/* A backend's object made through its table (opara_backend.h): the session's, and the CUDA
   profiling run's (opara_cuda_table.c). */
#include "opara_backend.h"

/* describe, plan once through the planner, and hand the verified plan over. */
static opara_result opara__backend_plan(const opara__backend* b, const opara__backend_given* setup, void* be,
                                        opara__op_desc* descs, const opara__plan** made) {
    const opara__graph* g = setup->g;
    const opara__device* dev = NULL;
    opara__plan* plan = NULL;
    opara__plan_desc pd;
    opara_result r;
    if (setup->plan) pd = *setup->plan;
    else memset(&pd, 0, sizeof pd);
    r = b->describe(be, descs, &pd, &dev);
    if (r == OPARA_OK) r = opara__plan_create_verified(g, setup->value_bytes, descs, dev, &pd, &plan);
    if (r != OPARA_OK) return r;
    *made = plan;
    return b->create(be, plan);
}

OPARA__PRIVATE opara_result opara__backend_make(const opara__backend* b, const opara__backend_given* setup,
                                               opara__op_desc* keep, void** out, const opara__plan** plan) {
    opara_runtime* rt = setup->rt;
    const opara__graph* g = setup->g;
    opara__op_desc* descs = keep ? keep : (opara__op_desc*)opara__calloc(rt, g->n_nodes ? g->n_nodes : 1, sizeof *descs);
    const opara__plan* made = NULL;
    void* be = NULL;
    opara_result r;
    *out = NULL;
    if (!descs) return opara__fail_to(&rt->error, &setup->logger, OPARA_ERR_OUT_OF_MEMORY, "%s backend: out of host memory", b->title);
    r = b->open(setup, &be);
    if (r == OPARA_OK) r = opara__backend_plan(b, setup, be, descs, &made);
    if (descs != keep) opara__free(rt, descs);
    if (r != OPARA_OK) {
        b->destroy(be); /* makes no opara__fail: the first failure's text stays */
        return r;
    }
    *out = be;
    if (plan) *plan = made;
    return OPARA_OK;
}
