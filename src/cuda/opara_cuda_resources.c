/* The CUDA backend's static profile (Opara's Model Profiler, seeds 000/001 §Profiler, without a
   run): per node, the resources of one thread block of its main kernel, for Alg. 2's descriptors.

   - Our kernels: cuFuncGetAttribute NUM_REGS, SHARED_SIZE_BYTES (static) and MAX_THREADS_PER_BLOCK,
     grid/block/dynamic shared memory from the launch.
   - Library kernels (cuBLAS, cuDNN): their launch configuration is private to the library; the
     documented estimates of opara__cuda_library_estimate stand until a profiling run's CUPTI
     records replace them (opara_cuda_profile.c), which also measures the times. */
#include "opara_backend_cuda.h"

#include <string.h>

/* ---- library estimates --------------------------------------------------------------------------- */

/* Launch estimate of a library kernel when nothing better is known. Facts behind the numbers:
   - cuBLAS's FP32 GEMM kernels are named after their output tile, e.g. maxwell_sgemm_128x128_nn,
     volta_sgemm_128x64_nn, ampere_sgemm_128x128_nn (as listed by nvprof/Nsight Systems), and the
     128x128 ones run 256 threads per block (an 8x8 output sub-tile per thread).
   - cuDNN's implicit-GEMM forward convolutions (implicit_convolve_sgemm, *_fprop_implicit_gemm_*
     tilesize128x128x8 ...) are the same GEMM over M = N*P*Q output pixels and N = K channels.
   Derived from the tile, not measured: shared memory = two stages of a 128x8 A slice and an 8x128
   B slice of floats = 2 * (128*8 + 8*128) * 4 B = 16 KiB; registers 128 per thread (64
   accumulators plus operands and addresses; the 256-thread block then fits the 64 Ki register
   file of one SM twice). Grid: one block per 128x128 output tile per batch item / group. */
static double opara__resources_tiles(double extent) { return extent > 128 ? (double)(uint64_t)((extent + 127) / 128) : 1; }

OPARA__PRIVATE void opara__cuda_library_estimate(opara__cuda_lib_kind kind, double m, double n, double batch,
                                                opara__cuda_op_profile* out) {
    double blocks = opara__resources_tiles(m) * opara__resources_tiles(n) * (batch >= 1 ? batch : 1);
    memset(out, 0, sizeof *out);
    opara__format(out->kernel, sizeof out->kernel, "%s",
                  kind == OPARA__CULIB_CONV ? "cuDNN conv est. 128x128 tile" : "cuBLAS sgemm est. 128x128 tile");
    out->grid[0] = blocks > 2147483647.0 ? 2147483647u : (uint32_t)blocks;
    out->grid[1] = out->grid[2] = 1;
    out->block[0] = 256;
    out->block[1] = out->block[2] = 1;
    out->regs = 128;
    out->smem_static = 16384;
    out->source = OPARA__CURES_ESTIMATE;
}

/* ---- static profile ----------------------------------------------------------------------------- */

static opara_result opara__resources_driver_row(opara_runtime* rt, const opara__cuda_lowering* low,
                                                const opara_cuda_driver* cu, opara_CUfunction f,
                                                const opara__cuda_launch* L, opara__cuda_op_profile* row) {
    int regs = 0, smem = 0, max_threads = 0;
    opara_CUresult r = cu->cuFuncGetAttribute(&regs, OPARA_CU_FUNC_ATTRIBUTE_NUM_REGS, f);
    if (r == OPARA_CUDA_SUCCESS) r = cu->cuFuncGetAttribute(&smem, OPARA_CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f);
    if (r == OPARA_CUDA_SUCCESS) r = cu->cuFuncGetAttribute(&max_threads, OPARA_CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f);
    if (r != OPARA_CUDA_SUCCESS)
        return opara__fail_to(&rt->error, low->logger ? low->logger : &rt->logger, OPARA_ERR_CUDA,
                              "CUDA profiler: cuFuncGetAttribute of %s failed: %s (%d)",
                              opara__cuda_kernel_name((opara__cuda_kernel)L->kernel), opara_cuda_driver_result_name(cu, r),
                              (int)r);
    opara__format(row->kernel, sizeof row->kernel, "%s", opara__cuda_kernel_name((opara__cuda_kernel)L->kernel));
    memcpy(row->grid, L->grid, sizeof row->grid);
    memcpy(row->block, L->block, sizeof row->block);
    row->regs = (uint32_t)(regs > 0 ? regs : 0);
    row->smem_static = (uint32_t)(smem > 0 ? smem : 0);
    row->smem_dynamic = 0; /* every launch of ours passes sharedMemBytes = 0 (opara__backend_launch_one) */
    row->max_threads = (uint32_t)(max_threads > 0 ? max_threads : 0);
    row->source = OPARA__CURES_DRIVER;
    return OPARA_OK;
}

/* cuBLAS launches carry M, N, K as int arguments 4..6 and the batch in grid[2] (opara_cuda_lower.c). */
static void opara__resources_cublas_row(const opara__cuda_launch* L, opara__cuda_op_profile* row) {
    double m = L->n_args > 6 ? (double)(int32_t)L->args[4].raw : 0, n = L->n_args > 6 ? (double)(int32_t)L->args[5].raw : 0;
    opara__cuda_library_estimate(OPARA__CULIB_GEMM, m, n, (double)L->grid[2], row);
}

/* Any other library call (cuDNN): on a convolution node the implicit-GEMM estimate from the output
   shape [N, K, spatial...] and the group count, else no launch shape (the default model's stays). */
static void opara__resources_library_row(const opara__graph* g, const opara__shape* shapes,
                                         const opara__node_params* params, uint32_t node, opara__cuda_op_profile* row) {
    const opara__node* nd = &g->nodes[node];
    const opara__shape* y = nd->n_outputs > 0 && nd->outputs[0] >= 0 ? &shapes[nd->outputs[0]] : NULL;
    double pixels = 1, groups = params[node].resolved ? (double)params[node].u.window.group : 1;
    int32_t d;
    memset(row, 0, sizeof *row);
    if ((nd->op == OPARA__OP_CONV || nd->op == OPARA__OP_CONV_TRANSPOSE) && y && y->ndim >= 3) {
        for (d = 0; d < y->ndim; ++d)
            if (d != 1) pixels *= (double)y->dims[d];
        opara__cuda_library_estimate(OPARA__CULIB_CONV, pixels, (double)y->dims[1] / (groups >= 1 ? groups : 1), groups, row);
        return;
    }
    opara__format(row->kernel, sizeof row->kernel, "library call");
    row->source = OPARA__CURES_ESTIMATE;
}

OPARA__PRIVATE void opara__cuda_profile_copy_times(const opara__cuda_op_profile* from, opara__cuda_op_profile* to) {
    to->measured = from->measured;
    to->n_runs = from->n_runs;
    to->time_ms = from->time_ms;
    to->time_spread = from->time_spread;
}

/* The node's main launch: its first kernel or library call; a copy only when it has nothing else. */
static const opara__cuda_launch* opara__resources_main_launch(const opara__cuda_lowering* low, uint32_t node) {
    const opara__cuda_launch* copy = NULL;
    uint32_t i;
    for (i = low->node_start[node]; i < low->node_start[node + 1]; ++i) {
        if (low->launches[i].type != OPARA__CULAUNCH_COPY) return &low->launches[i];
        if (!copy) copy = &low->launches[i];
    }
    return copy;
}

OPARA__PRIVATE opara_result opara__cuda_profile_static(opara_runtime* rt, const opara_cuda_driver* cu,
                                                      const opara_CUfunction* funcs, const opara__graph* g,
                                                      const opara__shape* shapes, const opara__node_params* params,
                                                      const opara__cuda_lowering* low,
                                                      const opara__cuda_op_profile* measured, opara__cuda_op_profile* rows) {
    uint32_t n, n_nodes = g->n_nodes;
    for (n = 0; n < n_nodes; ++n) {
        const opara__cuda_launch* L = opara__resources_main_launch(low, n);
        opara__cuda_op_profile* row = &rows[n];
        memset(row, 0, sizeof *row);
        if (!L) continue;
        if (L->type == OPARA__CULAUNCH_KERNEL) {
            opara_result r = opara__resources_driver_row(rt, low, cu, funcs[L->kernel], L, row);
            if (r != OPARA_OK) return r;
        } else if (L->type == OPARA__CULAUNCH_CUBLAS) {
            opara__resources_cublas_row(L, row);
        } else if (L->type == OPARA__CULAUNCH_COPY) {
            opara__format(row->kernel, sizeof row->kernel, "memcpy DtoD");
            row->source = OPARA__CURES_COPY;
        } else {
            opara__resources_library_row(g, shapes, params, n, row);
        }
        if (!measured) continue;
        if (measured[n].source == OPARA__CURES_CUPTI) *row = measured[n];
        opara__cuda_profile_copy_times(&measured[n], row);
    }
    return OPARA_OK;
}

OPARA__PRIVATE void opara__cuda_profile_to_descs(opara__cuda_op_profile* rows, uint32_t n_nodes, opara__op_desc* descs) {
    uint32_t n;
    for (n = 0; n < n_nodes; ++n) {
        opara__cuda_op_profile* row = &rows[n];
        opara__op_desc* d = &descs[n];
        if (row->source == OPARA__CURES_ESTIMATE && row->block[0] == 0) {
            /* a library call we have no estimate for: the default model's launch, shown in the row */
            row->grid[0] = d->grid;
            row->block[0] = d->block_threads;
            row->grid[1] = row->grid[2] = row->block[1] = row->block[2] = 1;
            row->regs = d->regs_per_thread;
            row->smem_static = d->smem_per_block;
        } else if (row->source == OPARA__CURES_DRIVER || row->source == OPARA__CURES_ESTIMATE ||
                   row->source == OPARA__CURES_CUPTI) {
            d->grid = row->grid[0] * row->grid[1] * row->grid[2];
            d->block_threads = row->block[0] * row->block[1] * row->block[2];
            if (row->regs) d->regs_per_thread = row->regs;
            d->smem_per_block = row->smem_static + row->smem_dynamic;
            d->has_info = 1;
        }
        if (row->measured) {
            d->time_ms = row->time_ms;
            d->time_measured = 1;
        }
    }
}
