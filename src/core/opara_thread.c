/* Threads, locks, atomics and a monotonic clock over pthreads or Win32. */
#include "opara_internal.h"
#include "../../opara_dl.h" /* opara_dl_open/sym/close: the one dynamic-library layer */

#if !defined(_WIN32) /* Windows: <windows.h> comes with opara_dl.h */
#  include <stdlib.h>
#  include <string.h>
#  include <time.h>
#  include <unistd.h>
#  if !defined(CLOCK_MONOTONIC)
#    include <sys/time.h>
#  endif
#endif

#if defined(_WIN32)

OPARA__PRIVATE int opara__mutex_init(opara__mutex* m) { InitializeSRWLock((PSRWLOCK)&m->srw); return 1; }
OPARA__PRIVATE void opara__mutex_destroy(opara__mutex* m) { (void)m; }
OPARA__PRIVATE void opara__mutex_lock(opara__mutex* m) { AcquireSRWLockExclusive((PSRWLOCK)&m->srw); }
OPARA__PRIVATE void opara__mutex_unlock(opara__mutex* m) { ReleaseSRWLockExclusive((PSRWLOCK)&m->srw); }
OPARA__PRIVATE int opara__cond_init(opara__cond* c) { InitializeConditionVariable((PCONDITION_VARIABLE)&c->cv); return 1; }
OPARA__PRIVATE void opara__cond_destroy(opara__cond* c) { (void)c; }
OPARA__PRIVATE void opara__cond_wait(opara__cond* c, opara__mutex* m) {
    SleepConditionVariableSRW((PCONDITION_VARIABLE)&c->cv, (PSRWLOCK)&m->srw, INFINITE, 0);
}
OPARA__PRIVATE void opara__cond_broadcast(opara__cond* c) { WakeAllConditionVariable((PCONDITION_VARIABLE)&c->cv); }

static DWORD WINAPI opara__thread_main(LPVOID p) {
    const opara__thread* t = (const opara__thread*)p;
    t->fn(t->arg);
    return 0;
}

OPARA__PRIVATE int opara__thread_start(opara__thread* t, opara__thread_fn fn, void* arg) {
    t->fn = fn;
    t->arg = arg;
    t->handle = CreateThread(NULL, 0, opara__thread_main, t, 0, NULL);
    return t->handle != NULL;
}

OPARA__PRIVATE void opara__thread_join(opara__thread* t) {
    WaitForSingleObject((HANDLE)t->handle, INFINITE);
    CloseHandle((HANDLE)t->handle);
}

/* The processors this process may run on (its affinity mask; one processor group, as Windows gives a
   process by default). */
static DWORD_PTR opara__process_cpus(void) {
    DWORD_PTR process = 0, system = 0;
    return GetProcessAffinityMask(GetCurrentProcess(), &process, &system) ? process : 0;
}

static int opara__bit_count(DWORD_PTR mask) {
    int n = 0;
    for (; mask; mask &= mask - 1) ++n;
    return n;
}

/* Pins the calling thread (one of ours) to the slot-th processor of the process's mask. */
OPARA__PRIVATE int opara__thread_pin_self(uint32_t slot) {
    DWORD_PTR mask = opara__process_cpus(), bit;
    int n = opara__bit_count(mask), want;
    if (n == 0) return 0;
    want = (int)(slot % (uint32_t)n);
    for (bit = 1; bit; bit <<= 1) {
        if (!(mask & bit) || want-- > 0) continue;
        return SetThreadAffinityMask(GetCurrentThread(), bit) != 0;
    }
    return 0;
}

OPARA__PRIVATE int opara__cpu_count(void) {
    SYSTEM_INFO info;
    int n = opara__bit_count(opara__process_cpus());
    if (n > 0) return n;
    GetSystemInfo(&info);
    return info.dwNumberOfProcessors > 0 ? (int)info.dwNumberOfProcessors : 1;
}

OPARA__PRIVATE uint64_t opara__now_ns(void) {
    LARGE_INTEGER freq, now;
    QueryPerformanceFrequency(&freq);
    QueryPerformanceCounter(&now);
    /* whole seconds and the remainder apart: ticks * 1e9 in a double would round to about a
       millisecond after a day of uptime */
    return (uint64_t)(now.QuadPart / freq.QuadPart) * 1000000000ull +
           (uint64_t)(now.QuadPart % freq.QuadPart) * 1000000000ull / (uint64_t)freq.QuadPart;
}

OPARA__PRIVATE int32_t opara__atomic_load(const volatile int32_t* p) { return InterlockedCompareExchange((volatile LONG*)p, 0, 0); }
OPARA__PRIVATE void opara__atomic_store(volatile int32_t* p, int32_t v) { InterlockedExchange((volatile LONG*)p, v); }
OPARA__PRIVATE int32_t opara__atomic_add(volatile int32_t* p, int32_t d) { return InterlockedAdd((volatile LONG*)p, d); }
OPARA__PRIVATE int opara__atomic_cas(volatile int32_t* p, int32_t expected, int32_t desired) {
    return InterlockedCompareExchange((volatile LONG*)p, desired, expected) == expected;
}

#else

OPARA__PRIVATE int opara__mutex_init(opara__mutex* m) { return pthread_mutex_init(&m->m, NULL) == 0; }
OPARA__PRIVATE void opara__mutex_destroy(opara__mutex* m) { pthread_mutex_destroy(&m->m); }
OPARA__PRIVATE void opara__mutex_lock(opara__mutex* m) { pthread_mutex_lock(&m->m); }
OPARA__PRIVATE void opara__mutex_unlock(opara__mutex* m) { pthread_mutex_unlock(&m->m); }
OPARA__PRIVATE int opara__cond_init(opara__cond* c) { return pthread_cond_init(&c->c, NULL) == 0; }
OPARA__PRIVATE void opara__cond_destroy(opara__cond* c) { pthread_cond_destroy(&c->c); }
OPARA__PRIVATE void opara__cond_wait(opara__cond* c, opara__mutex* m) { pthread_cond_wait(&c->c, &m->m); }
OPARA__PRIVATE void opara__cond_broadcast(opara__cond* c) { pthread_cond_broadcast(&c->c); }

static void* opara__thread_main(void* p) {
    const opara__thread* t = (const opara__thread*)p;
    t->fn(t->arg);
    return NULL;
}

OPARA__PRIVATE int opara__thread_start(opara__thread* t, opara__thread_fn fn, void* arg) {
    t->fn = fn;
    t->arg = arg;
    return pthread_create(&t->t, NULL, opara__thread_main, t) == 0;
}

OPARA__PRIVATE void opara__thread_join(opara__thread* t) { pthread_join(t->t, NULL); }

#  if defined(__linux__)
/* The process's CPU affinity through sched_getaffinity / sched_setaffinity found at run time: their
   declarations need _GNU_SOURCE, which a header included after other system headers cannot turn on.
   The mask is the kernel's bit array of unsigned longs (here 1024 CPUs); pid 0 is the calling
   thread. Returns 0 on success. */
#    define OPARA__CPU_WORDS (1024 / (8 * sizeof(unsigned long)))
typedef int (*opara__affinity_fn)(int pid, size_t size, unsigned long* mask);

static int opara__affinity(const char* name, unsigned long* mask) {
    void* self = opara_dl_open(NULL, NULL, 0);
    void* sym = self ? opara_dl_sym(self, name) : NULL;
    opara__affinity_fn fn;
    int r = -1;
    if (sym) {
        memcpy(&fn, &sym, sizeof fn); /* dlsym's void* to a function pointer, quietly for ISO C */
        r = fn(0, OPARA__CPU_WORDS * sizeof(unsigned long), mask);
    }
    opara_dl_close(self);
    return r < 0 ? -1 : 0;
}

static int opara__mask_count(const unsigned long* mask) {
    int n = 0;
    size_t w, b;
    for (w = 0; w < OPARA__CPU_WORDS; ++w)
        for (b = 0; b < 8 * sizeof(unsigned long); ++b) n += (int)((mask[w] >> b) & 1ul);
    return n;
}

OPARA__PRIVATE int opara__cpu_count(void) {
    unsigned long mask[OPARA__CPU_WORDS];
    long n;
    memset(mask, 0, sizeof mask);
    if (opara__affinity("sched_getaffinity", mask) == 0 && opara__mask_count(mask) > 0) return opara__mask_count(mask);
    n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

OPARA__PRIVATE int opara__thread_pin_self(uint32_t slot) {
    unsigned long mask[OPARA__CPU_WORDS], one[OPARA__CPU_WORDS];
    size_t bits = 8 * sizeof(unsigned long), b;
    int n, want;
    memset(mask, 0, sizeof mask);
    if (opara__affinity("sched_getaffinity", mask) != 0 || (n = opara__mask_count(mask)) == 0) return 0;
    want = (int)(slot % (uint32_t)n);
    for (b = 0; b < OPARA__CPU_WORDS * bits; ++b) {
        if (!((mask[b / bits] >> (b % bits)) & 1ul) || want-- > 0) continue;
        memset(one, 0, sizeof one);
        one[b / bits] = 1ul << (b % bits);
        return opara__affinity("sched_setaffinity", one) == 0;
    }
    return 0;
}
#  else
OPARA__PRIVATE int opara__cpu_count(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

OPARA__PRIVATE int opara__thread_pin_self(uint32_t slot) {
    (void)slot;
    return 0;
}
#  endif

OPARA__PRIVATE uint64_t opara__now_ns(void) {
#  if defined(CLOCK_MONOTONIC)
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
#  else /* a strict-C TU that included <time.h> before opara.h: wall clock is the best left */
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (uint64_t)tv.tv_sec * 1000000000ull + (uint64_t)tv.tv_usec * 1000ull;
#  endif
}

OPARA__PRIVATE int32_t opara__atomic_load(const volatile int32_t* p) { return __atomic_load_n(p, __ATOMIC_SEQ_CST); }
OPARA__PRIVATE void opara__atomic_store(volatile int32_t* p, int32_t v) { __atomic_store_n(p, v, __ATOMIC_SEQ_CST); }
OPARA__PRIVATE int32_t opara__atomic_add(volatile int32_t* p, int32_t d) { return __atomic_add_fetch(p, d, __ATOMIC_SEQ_CST); }
OPARA__PRIVATE int opara__atomic_cas(volatile int32_t* p, int32_t expected, int32_t desired) {
    return __atomic_compare_exchange_n(p, &expected, desired, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}

#endif
