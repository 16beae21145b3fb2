/* emu_exec.c - host execution of kernels written in the opara kernel dialect (src/kernels/opara_kernel.h).
 *
 * Blocks run one after the other on the calling thread. In a block, thread 0 starts on a fiber; if it ends
 * without touching shared memory or a barrier, the other threads run as plain calls. Otherwise every thread
 * gets a fiber (ucontext) and each __syncthreads() switches back to the block scheduler, which resumes the
 * threads in a seeded random order per phase, so code that needs a barrier it does not have sees stale data.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "emu_exec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

#if defined(__SANITIZE_ADDRESS__)
#define EMU_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define EMU_ASAN 1
#endif
#endif
#ifdef EMU_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

enum { EMU_MAX_THREADS = 1024, EMU_FIBER_STACK = 128 * 1024, EMU_PAGE = 4096, EMU_SMEM_MAX = 256 * 1024,
       EMU_SMEM_GUARD = 256, EMU_MAX_SHARED_DECLS = 64 };
enum { FIBER_NEW, FIBER_AT_BARRIER, FIBER_DONE };

/* Context switch: a few instructions on x86-64 (glibc's swapcontext makes a system call per switch, which
 * made reductions 20x slower); ucontext elsewhere. */
#if defined(__x86_64__) && defined(__linux__)
#define EMU_FAST_SWITCH 1
typedef struct emu_context { void* sp; } emu_context;
void emu_ctx_switch(void** save_sp, void* load_sp);
__asm__(".pushsection .text\n"
        ".globl emu_ctx_switch\n"
        ".hidden emu_ctx_switch\n"
        ".type emu_ctx_switch,@function\n"
        "emu_ctx_switch:\n"
        "  pushq %rbp\n  pushq %rbx\n  pushq %r12\n  pushq %r13\n  pushq %r14\n  pushq %r15\n"
        "  movq %rsp, (%rdi)\n"
        "  movq %rsi, %rsp\n"
        "  popq %r15\n  popq %r14\n  popq %r13\n  popq %r12\n  popq %rbx\n  popq %rbp\n"
        "  ret\n"
        ".size emu_ctx_switch, .-emu_ctx_switch\n"
        ".popsection\n");
#else
typedef struct emu_context { ucontext_t uc; } emu_context;
#endif

typedef struct emu_fiber {
    emu_context context;
    unsigned char* stack;         /* mapping start (guard page first) */
    int state;
    int arrivals;                 /* barriers this thread has reached */
    int decl_index;               /* next OPARA_SHARED declaration of this thread */
    opara_kernel_thread thread;
} emu_fiber;

/* Per OS thread: fibers, the shared-memory arena and the block being run. */
typedef struct emu_executor {
    emu_context scheduler;
    emu_fiber* fibers[EMU_MAX_THREADS];
    unsigned char* smem;                   /* EMU_SMEM_MAX + guard */
    const emu_exec_launch* launch;
    emu_fiber* running;
    int plain;                              /* threads run as plain calls: no barrier allowed */
    int cooperative;                        /* thread 0 used shared memory or a barrier */
    size_t decl_offset[EMU_MAX_SHARED_DECLS], decl_size[EMU_MAX_SHARED_DECLS];
    int decl_count;
    size_t smem_top;
    char* err;
    size_t err_size;
    int failed;
#ifdef EMU_ASAN
    void* fake_stack;
    const void* sched_bottom;
    size_t sched_size;
#endif
} emu_executor;

__thread opara_kernel_thread* opara__kernel_current;
static __thread emu_executor* emu_tls_executor;
static opara_kernel_entry* emu_registry;   /* filled by constructors before main; read-only afterwards */

void opara_kernel_register(opara_kernel_entry* entry) {
    entry->next = emu_registry;
    emu_registry = entry;
}

const opara_kernel_entry* emu_exec_find(const char* name) {
    const opara_kernel_entry* e;
    for (e = emu_registry; e; e = e->next)
        if (strcmp(e->name, name) == 0) return e;
    return NULL;
}

static void emu_fail(emu_executor* x, const char* msg) {
    if (!x->failed) snprintf(x->err, x->err_size, "kernel %s: %s", x->launch->entry->name, msg);
    x->failed = 1;
}

static unsigned long long emu_next_random(unsigned long long* state) {
    unsigned long long z = (*state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* ---------------------------------------------------------------- fibers */

static void emu_switch_to_fiber(emu_executor* x, emu_fiber* f) {
    x->running = f;
    opara__kernel_current = &f->thread;
#ifdef EMU_ASAN
    __sanitizer_start_switch_fiber(&x->fake_stack, f->stack + EMU_PAGE, EMU_FIBER_STACK);
#endif
#ifdef EMU_FAST_SWITCH
    emu_ctx_switch(&x->scheduler.sp, f->context.sp);
#else
    swapcontext(&x->scheduler.uc, &f->context.uc);
#endif
#ifdef EMU_ASAN
    __sanitizer_finish_switch_fiber(x->fake_stack, NULL, NULL);
#endif
    x->running = NULL;
}

static void emu_switch_to_scheduler(emu_executor* x, int finishing) {
#ifdef EMU_ASAN
    void* fake = NULL;
    __sanitizer_start_switch_fiber(finishing ? NULL : &fake, x->sched_bottom, x->sched_size);
#endif
    (void)finishing;
#ifdef EMU_FAST_SWITCH
    emu_ctx_switch(&x->running->context.sp, x->scheduler.sp);
#else
    swapcontext(&x->running->context.uc, &x->scheduler.uc);
#endif
#ifdef EMU_ASAN
    __sanitizer_finish_switch_fiber(fake, &x->sched_bottom, &x->sched_size);
#endif
}

static void emu_fiber_main(void) {
    emu_executor* x = emu_tls_executor;
    emu_fiber* f = x->running;
#ifdef EMU_ASAN
    __sanitizer_finish_switch_fiber(NULL, &x->sched_bottom, &x->sched_size);
#endif
    x->launch->entry->trampoline(x->launch->params);
    f->state = FIBER_DONE;
    emu_switch_to_scheduler(x, 1);
}

static emu_fiber* emu_fiber_get(emu_executor* x, unsigned int index) {
    emu_fiber* f = x->fibers[index];
    if (!f) {
        f = (emu_fiber*)calloc(1, sizeof(*f));
        if (!f) return NULL;
        f->stack = (unsigned char*)mmap(NULL, EMU_FIBER_STACK + EMU_PAGE, PROT_READ | PROT_WRITE,
                                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (f->stack == MAP_FAILED) {
            free(f);
            return NULL;
        }
        mprotect(f->stack, EMU_PAGE, PROT_NONE); /* stack overflow faults instead of corrupting */
        x->fibers[index] = f;
    }
    return f;
}

static int emu_fiber_start(emu_executor* x, emu_fiber* f) {
#ifdef EMU_FAST_SWITCH
    /* Initial frame popped by emu_ctx_switch: six callee-saved registers, then the entry as return address,
     * then a dummy return address so the entry starts with the stack aligned as after a call. */
    void** top = (void**)(void*)(f->stack + EMU_PAGE + EMU_FIBER_STACK);
    union { void (*fn)(void); void* p; } entry;
    int i;
    entry.fn = emu_fiber_main;
    top[-1] = NULL;
    top[-2] = entry.p;
    for (i = 3; i <= 8; i++) top[-i] = NULL;
    f->context.sp = (void*)(top - 8);
#else
    if (getcontext(&f->context.uc) != 0) return -1;
    f->context.uc.uc_stack.ss_sp = f->stack + EMU_PAGE;
    f->context.uc.uc_stack.ss_size = EMU_FIBER_STACK;
    f->context.uc.uc_link = NULL;
    makecontext(&f->context.uc, emu_fiber_main, 0);
#endif
    f->state = FIBER_NEW;
    f->arrivals = 0;
    f->decl_index = 0;
    (void)x;
    return 0;
}

/* ---------------------------------------------------------------- dialect hooks */

void opara__kernel_syncthreads(void) {
    emu_executor* x = emu_tls_executor;
    if (!x) return;
    if (x->plain || !x->running) {
        emu_fail(x, "__syncthreads() reached by a thread while thread 0 of its block finished without one "
                    "(divergent barrier)");
        return;
    }
    x->cooperative = 1;
    x->running->state = FIBER_AT_BARRIER;
    x->running->arrivals++;
    emu_switch_to_scheduler(x, 0);
}

void* opara__kernel_shared(size_t bytes) {
    emu_executor* x = emu_tls_executor;
    emu_fiber* f;
    int i;
    if (!x) return NULL;
    f = x->running;
    if (x->plain || !f) {
        emu_fail(x, "OPARA_SHARED declared by a thread while thread 0 of its block declared none");
        return x->smem;
    }
    x->cooperative = 1;
    i = f->decl_index++;
    if (i >= EMU_MAX_SHARED_DECLS) {
        emu_fail(x, "too many OPARA_SHARED declarations");
        return x->smem;
    }
    if (i == x->decl_count) { /* first thread to reach this declaration places it */
        size_t off = (x->smem_top + 15) & ~(size_t)15;
        if (off + bytes - x->launch->dynamic_shared > x->launch->static_shared_limit ||
            off + bytes > EMU_SMEM_MAX) {
            emu_fail(x, "static shared memory larger than the PTX declares");
            return x->smem;
        }
        x->decl_offset[i] = off;
        x->decl_size[i] = bytes;
        x->smem_top = off + bytes;
        x->decl_count++;
    } else if (i > x->decl_count || x->decl_size[i] != bytes) {
        emu_fail(x, "threads of a block declare different shared memory");
        return x->smem;
    }
    return x->smem + x->decl_offset[i];
}

/* ---------------------------------------------------------------- blocks */

static void emu_thread_coords(opara_kernel_thread* t, const emu_exec_launch* l, emu_dim3 block_idx,
                              unsigned int linear) {
    t->thread_idx.x = linear % l->block.x;
    t->thread_idx.y = (linear / l->block.x) % l->block.y;
    t->thread_idx.z = linear / (l->block.x * l->block.y);
    t->block_idx.x = block_idx.x;
    t->block_idx.y = block_idx.y;
    t->block_idx.z = block_idx.z;
    t->block_dim.x = l->block.x;
    t->block_dim.y = l->block.y;
    t->block_dim.z = l->block.z;
    t->grid_dim.x = l->grid.x;
    t->grid_dim.y = l->grid.y;
    t->grid_dim.z = l->grid.z;
}

static void emu_run_plain(emu_executor* x, emu_dim3 block_idx, unsigned int from, unsigned int count) {
    opara_kernel_thread t;
    unsigned int i;
    t.dynamic_shared = x->smem;
    x->plain = 1;
    for (i = from; i < count && !x->failed; i++) {
        emu_thread_coords(&t, x->launch, block_idx, i);
        opara__kernel_current = &t;
        x->launch->entry->trampoline(x->launch->params);
    }
    x->plain = 0;
}

/* Runs the block phase by phase: in phase p every live thread that has reached fewer than p barriers runs
 * until its next barrier or its end (thread 0 already ran its first phase). */
static void emu_run_cooperative(emu_executor* x, unsigned int count, unsigned long long* rng) {
    unsigned int order[EMU_MAX_THREADS];
    unsigned int i, j, left;
    int phase;
    for (phase = 1;; phase++) {
        left = 0;
        for (i = 0; i < count; i++)
            if (x->fibers[i]->state != FIBER_DONE && x->fibers[i]->arrivals < phase) order[left++] = i;
        if (x->failed) return;
        if (left == 0) {
            for (i = 0; i < count; i++)
                if (x->fibers[i]->state != FIBER_DONE) break;
            if (i == count) return;
            continue;
        }
        for (i = left; i > 1; i--) { /* Fisher-Yates: this phase's thread order */
            unsigned int tmp;
            j = (unsigned int)(emu_next_random(rng) % i);
            tmp = order[i - 1];
            order[i - 1] = order[j];
            order[j] = tmp;
        }
        for (i = 0; i < left && !x->failed; i++) emu_switch_to_fiber(x, x->fibers[order[i]]);
    }
}

static int emu_run_block(emu_executor* x, emu_dim3 block_idx, unsigned long long* rng) {
    const emu_exec_launch* l = x->launch;
    unsigned int count = l->block.x * l->block.y * l->block.z, i;
    size_t used = l->dynamic_shared + l->static_shared_limit;
    memset(x->smem, 0xff, used < (size_t)EMU_SMEM_MAX ? used : (size_t)EMU_SMEM_MAX); /* undefined at block start: NaN */
    x->smem_top = l->dynamic_shared;
    x->decl_count = 0;
    x->cooperative = 0;
    for (i = 0; i < count; i++) {
        emu_fiber* f = emu_fiber_get(x, i);
        if (!f) {
            emu_fail(x, "out of memory for fibers");
            return -1;
        }
        if (i == 0 || x->cooperative) {
            if (emu_fiber_start(x, f) != 0) {
                emu_fail(x, "getcontext failed");
                return -1;
            }
            emu_thread_coords(&f->thread, l, block_idx, i);
            f->thread.dynamic_shared = x->smem;
        }
        if (i == 0) {
            emu_switch_to_fiber(x, f);
            if (!x->cooperative) {
                emu_run_plain(x, block_idx, 1, count);
                return x->failed ? -1 : 0;
            }
        }
    }
    emu_run_cooperative(x, count, rng);
    return x->failed ? -1 : 0;
}

static emu_executor* emu_executor_get(void) {
    emu_executor* x = emu_tls_executor;
    if (x) return x;
    x = (emu_executor*)calloc(1, sizeof(*x));
    if (!x) return NULL;
    x->smem = (unsigned char*)malloc(EMU_SMEM_MAX + EMU_SMEM_GUARD);
    if (!x->smem) {
        free(x);
        return NULL;
    }
    emu_tls_executor = x;
    return x;
}

static int emu_smem_guard_intact(const emu_executor* x) {
    size_t i;
    for (i = 0; i < EMU_SMEM_GUARD; i++)
        if (x->smem[EMU_SMEM_MAX + i] != 0xa5) return 0;
    return 1;
}

int emu_exec_run(const emu_exec_launch* l, char* err, size_t err_size) {
    emu_executor* x = emu_executor_get();
    unsigned long long rng = l->seed;
    emu_dim3 b;
    if (!x) {
        snprintf(err, err_size, "out of memory for the executor");
        return -1;
    }
    if (l->dynamic_shared + l->static_shared_limit > EMU_SMEM_MAX) {
        snprintf(err, err_size, "kernel %s: shared memory above the emulator's %d bytes", l->entry->name,
                 EMU_SMEM_MAX);
        return -1;
    }
    memset(x->smem + EMU_SMEM_MAX, 0xa5, EMU_SMEM_GUARD);
    x->launch = l;
    x->err = err;
    x->err_size = err_size;
    x->failed = 0;
    for (b.z = 0; b.z < l->grid.z && !x->failed; b.z++)
        for (b.y = 0; b.y < l->grid.y && !x->failed; b.y++)
            for (b.x = 0; b.x < l->grid.x && !x->failed; b.x++) emu_run_block(x, b, &rng);
    opara__kernel_current = NULL;
    if (!x->failed && !emu_smem_guard_intact(x)) emu_fail(x, "write past the end of shared memory");
    x->launch = NULL;
    return x->failed ? -1 : 0;
}

void emu_exec_release(void) {
    emu_executor* x = emu_tls_executor;
    int i;
    if (!x) return;
    for (i = 0; i < EMU_MAX_THREADS; i++) {
        if (!x->fibers[i]) continue;
        munmap(x->fibers[i]->stack, EMU_FIBER_STACK + EMU_PAGE);
        free(x->fibers[i]);
    }
    free(x->smem);
    free(x);
    emu_tls_executor = NULL;
}
