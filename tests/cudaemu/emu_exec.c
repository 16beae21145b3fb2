/* emu_exec.c - host execution of kernels written in the opara kernel dialect (src/cuda/kernels/opara_kernel.h).
 *
 * The blocks of a launch are shared out between the calling thread and a small pool of helper threads
 * (emu_exec_set_threads; blocks are independent in CUDA too, and atomics are real atomics), each with its own
 * executor. A block's thread order comes from the launch seed and the block's index alone, so a seed replays
 * the same orders however the blocks were shared out. In a block, thread 0 starts on a fiber; if it ends
 * without touching shared memory or a barrier, the other threads run as plain calls. Otherwise every thread
 * gets a fiber (ucontext) and each __syncthreads() switches back to the block scheduler, which resumes the
 * threads in a seeded random order per phase, so code that needs a barrier it does not have sees stale data.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "emu_exec.h"

#include <pthread.h>
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
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

enum { EMU_MAX_THREADS = 1024, EMU_FIBER_STACK = 128 * 1024, EMU_PAGE = 4096, EMU_SMEM_MAX = 256 * 1024,
       EMU_SMEM_GUARD = 256, EMU_MAX_SHARED_DECLS = 64, EMU_MAX_HELPERS = 15 };
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
    unsigned int order[EMU_MAX_THREADS];    /* this phase's thread order */
    unsigned int phase_next, phase_len;     /* next position in order to run, its length */
    int from_scheduler;                     /* the running fiber was entered by the scheduler */
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

static void emu_context_switch(emu_context* save, emu_context* load) {
#ifdef EMU_FAST_SWITCH
    emu_ctx_switch(&save->sp, load->sp);
#else
    swapcontext(&save->uc, &load->uc);
#endif
}

/* Called where a fiber starts or resumes: ends ASan's stack switch and remembers the scheduler's stack
 * when the scheduler (not another fiber) resumed it. */
static void emu_fiber_arrived(emu_executor* x, void* fake) {
#ifdef EMU_ASAN
    const void* bottom;
    size_t size;
    __sanitizer_finish_switch_fiber(fake, &bottom, &size);
    if (x->from_scheduler) {
        x->sched_bottom = bottom;
        x->sched_size = size;
    }
#else
    (void)fake;
#endif
    (void)x;
}

/* The scheduler starts a chain of fibers (this phase's order from phase_next on, after f). */
static void emu_switch_to_fiber(emu_executor* x, emu_fiber* f) {
    x->running = f;
    x->from_scheduler = 1;
    opara__kernel_current = &f->thread;
#ifdef EMU_ASAN
    __sanitizer_start_switch_fiber(&x->fake_stack, f->stack + EMU_PAGE, EMU_FIBER_STACK);
#endif
    emu_context_switch(&x->scheduler, &f->context);
#ifdef EMU_ASAN
    __sanitizer_finish_switch_fiber(x->fake_stack, NULL, NULL);
#endif
    x->running = NULL;
}

/* The running fiber stops (at a barrier, or for good when finishing) and hands over directly to the next
 * fiber of the phase's order, or to the scheduler after the last one (one switch per thread and phase
 * instead of two). */
static void emu_fiber_yield(emu_executor* x, int finishing) {
    emu_fiber* from = x->running;
    emu_fiber* to = NULL;
    void* fake = NULL;
    if (!x->failed && x->phase_next < x->phase_len) to = x->fibers[x->order[x->phase_next++]];
#ifdef EMU_ASAN
    if (finishing) { /* these frames never return: clear their redzones before the stack is reused */
        unsigned char* top = from->stack + EMU_PAGE + EMU_FIBER_STACK;
        unsigned char* low = (unsigned char*)__builtin_frame_address(0) - 1024;
        if (low < from->stack + EMU_PAGE) low = from->stack + EMU_PAGE;
        __asan_unpoison_memory_region(low, (size_t)(top - low));
    }
    if (to) __sanitizer_start_switch_fiber(finishing ? NULL : &fake, to->stack + EMU_PAGE, EMU_FIBER_STACK);
    else __sanitizer_start_switch_fiber(finishing ? NULL : &fake, x->sched_bottom, x->sched_size);
#endif
    (void)finishing;
    if (to) {
        x->running = to;
        x->from_scheduler = 0;
        opara__kernel_current = &to->thread;
        emu_context_switch(&from->context, &to->context);
    } else {
        emu_context_switch(&from->context, &x->scheduler);
    }
    emu_fiber_arrived(x, fake);
}

static void emu_fiber_main(void) {
    emu_executor* x = emu_tls_executor;
    emu_fiber* f = x->running;
    emu_fiber_arrived(x, NULL);
    x->launch->entry->trampoline(x->launch->params);
    f->state = FIBER_DONE;
    emu_fiber_yield(x, 1);
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

static int emu_fiber_start(emu_executor* x, emu_fiber* f, unsigned int index) {
#ifdef EMU_FAST_SWITCH
    /* Initial frame popped by emu_ctx_switch: six callee-saved registers, then the entry as return address,
     * then a dummy return address so the entry starts with the stack aligned as after a call. The top is
     * staggered by a cache line per fiber: with every top at the same page offset, the hot frames of a
     * block's threads fall into one cache set and evict each other at every switch. */
    void** top = (void**)(void*)(f->stack + EMU_PAGE + EMU_FIBER_STACK - (index % 60u) * 64u);
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
    (void)index;
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
    emu_fiber_yield(x, 0);
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
    unsigned int* order = x->order;
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
            j = (unsigned int)(((emu_next_random(rng) >> 32) * i) >> 32); /* uniform in [0, i) without a division */
            tmp = order[i - 1];
            order[i - 1] = order[j];
            order[j] = tmp;
        }
        x->phase_len = left;
        x->phase_next = 1;
        emu_switch_to_fiber(x, x->fibers[order[0]]); /* runs the whole order as a chain */
        x->phase_len = 0;
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
            if (emu_fiber_start(x, f, i) != 0) {
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

/* ---------------------------------------------------------------- launches and the helper pool */

/* One launch being shared out: threads take chunks of blocks through an atomic counter. */
typedef struct emu_job {
    const emu_exec_launch* launch;
    unsigned long long blocks, chunk;
    unsigned long long next;       /* first block not yet taken (atomic) */
    int failed;                    /* atomic: nobody takes more blocks */
    int active, max_helpers;       /* helpers inside the job (pool mutex) and how many may join */
    char* err;
    size_t err_size;
    struct emu_job* next_job;
} emu_job;

static struct emu_pool {
    pthread_mutex_t mu;
    pthread_cond_t work, idle;
    emu_job* jobs;                 /* launches open to helpers */
    pthread_t helpers[EMU_MAX_HELPERS];
    int started, threads, quit;    /* threads: per launch, the caller included */
} emu_pool = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, {0}, 0, 1, 0};

static void emu_job_fail(emu_job* job, const char* msg) {
    pthread_mutex_lock(&emu_pool.mu);
    if (!__atomic_load_n(&job->failed, __ATOMIC_RELAXED)) snprintf(job->err, job->err_size, "%s", msg);
    __atomic_store_n(&job->failed, 1, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&emu_pool.mu);
}

static emu_dim3 emu_block_index(const emu_exec_launch* l, unsigned long long linear) {
    emu_dim3 b;
    b.x = (unsigned int)(linear % l->grid.x);
    b.y = (unsigned int)((linear / l->grid.x) % l->grid.y);
    b.z = (unsigned int)(linear / ((unsigned long long)l->grid.x * l->grid.y));
    return b;
}

/* Runs chunks of the job's blocks on the calling thread's executor until none is left or one failed. */
static void emu_job_work(emu_job* job) {
    emu_executor* x = emu_executor_get();
    const emu_exec_launch* l = job->launch;
    char err[512];
    if (!x) {
        emu_job_fail(job, "out of memory for the executor");
        return;
    }
    err[0] = 0;
    memset(x->smem + EMU_SMEM_MAX, 0xa5, EMU_SMEM_GUARD);
    x->launch = l;
    x->err = err;
    x->err_size = sizeof err;
    x->failed = 0;
    while (!x->failed && !__atomic_load_n(&job->failed, __ATOMIC_RELAXED)) {
        unsigned long long first = __atomic_fetch_add(&job->next, job->chunk, __ATOMIC_RELAXED), i;
        if (first >= job->blocks) break;
        for (i = first; i < first + job->chunk && i < job->blocks && !x->failed; i++) {
            unsigned long long rng = l->seed ^ (i * 0xD1B54A32D192ED03ULL); /* this block's orders */
            emu_run_block(x, emu_block_index(l, i), &rng);
        }
    }
    opara__kernel_current = NULL;
    if (!x->failed && !emu_smem_guard_intact(x)) emu_fail(x, "write past the end of shared memory");
    x->launch = NULL;
    if (x->failed) emu_job_fail(job, err);
}

static emu_job* emu_open_job_locked(void) {
    emu_job* j;
    for (j = emu_pool.jobs; j; j = j->next_job)
        if (j->active < j->max_helpers && !__atomic_load_n(&j->failed, __ATOMIC_RELAXED) &&
            __atomic_load_n(&j->next, __ATOMIC_RELAXED) < j->blocks)
            return j;
    return NULL;
}

static void* emu_helper_main(void* arg) {
    (void)arg;
    pthread_mutex_lock(&emu_pool.mu);
    for (;;) {
        emu_job* job = NULL;
        while (!emu_pool.quit && (job = emu_open_job_locked()) == NULL) pthread_cond_wait(&emu_pool.work, &emu_pool.mu);
        if (emu_pool.quit) break;
        job->active++;
        pthread_mutex_unlock(&emu_pool.mu);
        emu_job_work(job);
        pthread_mutex_lock(&emu_pool.mu);
        if (--job->active == 0) pthread_cond_broadcast(&emu_pool.idle);
    }
    pthread_mutex_unlock(&emu_pool.mu);
    emu_exec_release();
    return NULL;
}

/* Starts helpers up to the configured count; returns how many may join a launch. */
static int emu_pool_helpers_locked(void) {
    int want = emu_pool.threads - 1;
    if (want > EMU_MAX_HELPERS) want = EMU_MAX_HELPERS;
    while (!emu_pool.quit && emu_pool.started < want &&
           pthread_create(&emu_pool.helpers[emu_pool.started], NULL, emu_helper_main, NULL) == 0)
        emu_pool.started++;
    return want < emu_pool.started ? want : emu_pool.started;
}

void emu_exec_set_threads(int threads) {
    pthread_mutex_lock(&emu_pool.mu);
    emu_pool.threads = threads < 1 ? 1 : threads;
    pthread_mutex_unlock(&emu_pool.mu);
}

void emu_exec_shutdown(void) {
    int i, n;
    pthread_mutex_lock(&emu_pool.mu);
    emu_pool.quit = 1;
    pthread_cond_broadcast(&emu_pool.work);
    n = emu_pool.started;
    emu_pool.started = 0;
    pthread_mutex_unlock(&emu_pool.mu);
    for (i = 0; i < n; i++) pthread_join(emu_pool.helpers[i], NULL);
}

int emu_exec_run(const emu_exec_launch* l, char* err, size_t err_size) {
    emu_job job;
    int helpers, shared;
    if (l->dynamic_shared + l->static_shared_limit > EMU_SMEM_MAX) {
        snprintf(err, err_size, "kernel %s: shared memory above the emulator's %d bytes", l->entry->name,
                 EMU_SMEM_MAX);
        return -1;
    }
    memset(&job, 0, sizeof job);
    job.launch = l;
    job.blocks = (unsigned long long)l->grid.x * l->grid.y * l->grid.z;
    job.err = err;
    job.err_size = err_size;
    if (err_size) err[0] = 0;
    pthread_mutex_lock(&emu_pool.mu);
    helpers = job.blocks > 1 ? emu_pool_helpers_locked() : 0;
    shared = helpers > 0;
    job.chunk = job.blocks / ((unsigned long long)(helpers + 1) * 8); /* small chunks balance uneven blocks */
    if (job.chunk == 0) job.chunk = 1;
    if (shared) {
        job.max_helpers = helpers;
        job.next_job = emu_pool.jobs;
        emu_pool.jobs = &job;
        pthread_cond_broadcast(&emu_pool.work);
    }
    pthread_mutex_unlock(&emu_pool.mu);
    emu_job_work(&job);
    if (shared) {
        emu_job** p;
        pthread_mutex_lock(&emu_pool.mu);
        for (p = &emu_pool.jobs; *p != &job; p = &(*p)->next_job) {}
        *p = job.next_job;
        while (job.active > 0) pthread_cond_wait(&emu_pool.idle, &emu_pool.mu);
        pthread_mutex_unlock(&emu_pool.mu);
    }
    return job.failed ? -1 : 0;
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
