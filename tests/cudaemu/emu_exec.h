/* emu_exec.h - runs one kernel launch on the host: every block, every thread (tests/cudaemu). */
#ifndef EMU_EXEC_H
#define EMU_EXEC_H
#include <stddef.h>
#include "../../src/cuda/kernels/opara_kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct emu_dim3 { unsigned int x, y, z; } emu_dim3;

/* One launch as the executor sees it; params point to the copied argument values. */
typedef struct emu_exec_launch {
    const opara_kernel_entry* entry;
    emu_dim3 grid, block;
    size_t dynamic_shared;
    size_t static_shared_limit;   /* bytes the kernel may declare with OPARA_SHARED (from the PTX) */
    void* const* params;
    unsigned long long seed;      /* thread order inside cooperative blocks */
} emu_exec_launch;

/* Returns 0 on success; otherwise writes a message to err and returns non-zero (a dialect violation:
 * divergent __syncthreads, shared-memory declarations that differ between threads, overflow). */
int emu_exec_run(const emu_exec_launch* launch, char* err, size_t err_size);

/* Threads that share out the blocks of one launch, the caller included (1: the caller alone). */
void emu_exec_set_threads(int threads);

/* Stops and joins the helper threads (at exit, after the stream workers). */
void emu_exec_shutdown(void);

/* Frees the calling thread's executor (fibers, shared memory); call before a worker thread exits. */
void emu_exec_release(void);

/* Looks a host-built kernel up by its entry name (NULL when absent). */
const opara_kernel_entry* emu_exec_find(const char* name);

#ifdef __cplusplus
}
#endif
#endif
