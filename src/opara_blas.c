/* Run-time BLAS: OpenBLAS or any libblas that exports cblas_sgemm, by dlopen; OpenBLAS runs one
   thread per call during opara runs only (opara__blas_run_enter/leave). */
#include "opara_cpu.h"

#if !defined(_WIN32)
#  include <dlfcn.h>
#endif

/* OpenBLAS's thread count is one process-wide setting, and 0.3.x has no per-call count for sgemm
   (openblas_set_num_threads_local, 0.3.27, sets the same global and returns the old value). Our
   workers each call sgemm on their own part, so OpenBLAS must run one thread per call while we
   run (else every worker's call fans out over all cores). The library must not change the host's
   setting for good: the first opara run in progress (in any session or runtime of the process)
   saves the host's count and sets 1, the last one to end puts the saved count back, unless the
   host changed it meanwhile (then the host's new value stays). So between opara calls the host
   always sees its own setting; a host that calls OpenBLAS on its own threads *during* an opara run
   gets one thread per call for that time (correct results, less parallelism). The state is
   process-wide on purpose (the setting it guards is) and guarded by its own lock. */
typedef struct opara__blas_guard {
    int32_t depth; /* opara runs in progress that use OpenBLAS */
    int saved;     /* the host's thread count when the first of them began */
} opara__blas_guard;

static opara__blas_guard opara__blas_state;

#if defined(_WIN32)
/* No BLAS is loaded on Windows, so the guard is never used there. */
static void opara__blas_lock(void) {}
static void opara__blas_unlock(void) {}
static void* opara__blas_open(const char* path) { (void)path; return NULL; }
static void* opara__blas_sym(void* lib, const char* name) { (void)lib; (void)name; return NULL; }
static void opara__blas_close(void* lib) { (void)lib; }
#else
static pthread_mutex_t opara__blas_mutex = PTHREAD_MUTEX_INITIALIZER;
static void opara__blas_lock(void) { pthread_mutex_lock(&opara__blas_mutex); }
static void opara__blas_unlock(void) { pthread_mutex_unlock(&opara__blas_mutex); }
static void* opara__blas_open(const char* path) { return dlopen(path, RTLD_NOW | RTLD_LOCAL); }
static void* opara__blas_sym(void* lib, const char* name) { return dlsym(lib, name); }
static void opara__blas_close(void* lib) { dlclose(lib); }
#endif

/* Function pointers from dlsym come as void*; memcpy keeps ISO C quiet about the conversion. */
static void opara__blas_fnptr(void* sym, void* dst, size_t size) { memcpy(dst, &sym, size); }

/* The sonames tried when no list is given, OpenBLAS's first. */
static const char* const opara__blas_default_paths[] = {"libopenblas.so.0", "libopenblasp.so.0", "libopenblas.so",
                                                        "libblas.so.3",     "libcblas.so.3",     "libblas.so"};

OPARA__PRIVATE void opara__blas_load_from(opara__blas* blas, const char* const* paths, size_t n_paths, char* tried,
                                          size_t tried_cap) {
    size_t i, used = 0;
    memset(blas, 0, sizeof *blas);
    if (tried && tried_cap) tried[0] = 0;
    for (i = 0; i < n_paths; ++i) {
        void* lib = opara__blas_open(paths[i]);
        void *sgemm, *set_threads, *get_threads;
        if (tried && used < tried_cap)
            used += opara__format(tried + used, tried_cap - used, "%s%s", used ? ", " : "", paths[i]);
        if (!lib) continue;
        sgemm = opara__blas_sym(lib, "cblas_sgemm");
        if (!sgemm) {
            opara__blas_close(lib);
            continue;
        }
        blas->lib = lib;
        opara__blas_fnptr(sgemm, &blas->sgemm, sizeof blas->sgemm);
        set_threads = opara__blas_sym(lib, "openblas_set_num_threads");
        get_threads = opara__blas_sym(lib, "openblas_get_num_threads");
        if (set_threads && get_threads) {
            opara__blas_fnptr(set_threads, &blas->set_threads, sizeof blas->set_threads);
            opara__blas_fnptr(get_threads, &blas->get_threads, sizeof blas->get_threads);
            opara__format(blas->name, sizeof blas->name, "OpenBLAS (%s)", paths[i]);
        } else {
            opara__format(blas->name, sizeof blas->name, "BLAS (%s)", paths[i]);
        }
        return;
    }
    opara__format(blas->name, sizeof blas->name, "built-in (%s)", opara__sgemm_builtin_kind());
}

OPARA__PRIVATE void opara__blas_load(opara__blas* blas, int use_builtin, char* tried, size_t tried_cap) {
    size_t n = use_builtin ? 0 : OPARA__ARRAY_COUNT(opara__blas_default_paths);
    opara__blas_load_from(blas, opara__blas_default_paths, n, tried, tried_cap);
}

OPARA__PRIVATE void opara__blas_unload(opara__blas* blas) {
    if (blas->lib) opara__blas_close(blas->lib);
    memset(blas, 0, sizeof *blas);
}

OPARA__PRIVATE void opara__blas_run_enter(const opara__blas* blas) {
    if (!blas->set_threads) return;
    opara__blas_lock();
    if (opara__blas_state.depth++ == 0) {
        opara__blas_state.saved = blas->get_threads();
        if (opara__blas_state.saved != 1) blas->set_threads(1);
    }
    opara__blas_unlock();
}

OPARA__PRIVATE void opara__blas_run_leave(const opara__blas* blas) {
    if (!blas->set_threads) return;
    opara__blas_lock();
    /* get_threads() != 1: the host set its own count during the run; keep it */
    if (--opara__blas_state.depth == 0 && opara__blas_state.saved != 1 && blas->get_threads() == 1)
        blas->set_threads(opara__blas_state.saved);
    opara__blas_unlock();
}
