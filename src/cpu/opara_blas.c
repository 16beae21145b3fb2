/* Run-time BLAS by dlopen, only a fast one named by its own entry points: OpenBLAS (one thread per call
   during opara runs only, opara__blas_run_enter/leave), or BLIS or MKL set to one thread per call. A
   reference BLAS is refused; the built-in GEMM is used then. */
#include "opara_cpu.h"
#include "../../opara_dl.h" /* opara_dl_open/sym/close: the one dynamic-library layer */

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
/* No BLAS is loaded on Windows (the names below are sonames), so the guard is never used there. */
static void opara__blas_lock(void) {}
static void opara__blas_unlock(void) {}
#else
static pthread_mutex_t opara__blas_mutex = PTHREAD_MUTEX_INITIALIZER;
static void opara__blas_lock(void) { pthread_mutex_lock(&opara__blas_mutex); }
static void opara__blas_unlock(void) { pthread_mutex_unlock(&opara__blas_mutex); }
#endif

#if defined(_WIN32)
static void* opara__blas_open(const char* path) { (void)path; return NULL; }
#else
static void* opara__blas_open(const char* path) { return opara_dl_open(path, NULL, 0); }
#endif

/* Function pointers from dlsym come as void*; memcpy keeps ISO C quiet about the conversion. */
static void opara__blas_fnptr(void* sym, void* dst, size_t size) { memcpy(dst, &sym, size); }

/* A symbol's presence: identifies which BLAS a library is. */
static int opara__blas_has(void* lib, const char* name) { return opara_dl_sym(lib, name) != NULL; }

/* A thread-count query of BLIS or MKL, or -1 when the library lacks it. BLIS returns dim_t (64 bits in
   its default build, 32 in others): read as int, the low half, which holds any real count either way
   (x86-64 and AArch64 return it in the low half of the same register). */
static int opara__blas_count(void* lib, const char* name) {
    void* sym = opara_dl_sym(lib, name);
    int (*query)(void);
    if (!sym) return -1;
    opara__blas_fnptr(sym, &query, sizeof query);
    return query();
}

/* OpenBLAS: taken with its thread guard (opara__blas_run_enter/leave), which needs both calls. */
static int opara__blas_take_openblas(opara__blas* blas, void* lib, const char* path, char* why, size_t cap) {
    void* set_threads = opara_dl_sym(lib, "openblas_set_num_threads");
    void* get_threads = opara_dl_sym(lib, "openblas_get_num_threads");
    if (!set_threads || !get_threads) {
        opara__format(why, cap, "OpenBLAS without openblas_set_num_threads/openblas_get_num_threads");
        return 0;
    }
    opara__blas_fnptr(set_threads, &blas->set_threads, sizeof blas->set_threads);
    opara__blas_fnptr(get_threads, &blas->get_threads, sizeof blas->get_threads);
    opara__format(blas->name, sizeof blas->name, "OpenBLAS (%s)", path);
    return 1;
}

/* BLIS and MKL thread each call as their own process-wide setting says (BLIS_NUM_THREADS or
   OMP_NUM_THREADS, MKL_NUM_THREADS or OMP_NUM_THREADS, or the host's calls). Our workers each call
   sgemm on their own part, so the library must run one thread per call; per-call control needs BLIS's
   expert API (a rntm_t whose layout changes between versions) or MKL's mkl_set_num_threads_local on
   every worker, and changing the process-wide setting would change the host's. So the library is taken
   only when its setting already is one thread per call (BLIS's default; sequential MKL), read once at
   load, and refused with its count otherwise. */
static int opara__blas_take_threaded(opara__blas* blas, const char* kind, int threads, const char* path, char* why,
                                     size_t cap) {
    if (threads > 1) {
        opara__format(why, cap, "%s runs %d threads per call (opara leaves its process-wide setting alone)", kind,
                      threads);
        return 0;
    }
    opara__format(blas->name, sizeof blas->name, "%s (%s)", kind, path);
    return 1;
}

static int opara__blas_blis_threads(void* lib) {
    static const char* const ways[] = {"bli_thread_get_jc_nt", "bli_thread_get_pc_nt", "bli_thread_get_ic_nt",
                                       "bli_thread_get_jr_nt", "bli_thread_get_ir_nt"};
    int threads = opara__blas_count(lib, "bli_thread_get_num_threads"), product = 1;
    size_t i;
    /* -1: not set; a count set per loop (BLIS_JC_NT, ...) instead is the product of the ways */
    for (i = 0; i < OPARA__ARRAY_COUNT(ways); ++i) {
        int w = opara__blas_count(lib, ways[i]);
        if (w > 1 && product <= 4096) product *= w;
    }
    return threads > product ? threads : product;
}

/* Takes the library (1) if it is a fast BLAS that can run one thread per call, else says why not (0).
   The netlib reference BLAS (Debian's libblas3, often behind libblas.so.3) has cblas_sgemm and no
   identifying entry point: it is tens of times slower than the built-in GEMM. */
static int opara__blas_take(opara__blas* blas, void* lib, const char* path, char* why, size_t cap) {
    if (opara__blas_has(lib, "openblas_get_num_threads") || opara__blas_has(lib, "openblas_get_config"))
        return opara__blas_take_openblas(blas, lib, path, why, cap);
    if (opara__blas_has(lib, "bli_info_get_version_str")) {
        if (opara__blas_has(lib, "bli_thread_get_num_threads"))
            return opara__blas_take_threaded(blas, "BLIS", opara__blas_blis_threads(lib), path, why, cap);
        opara__format(why, cap, "BLIS without bli_thread_get_num_threads (its threads per call are unknown)");
        return 0;
    }
    if (opara__blas_has(lib, "MKL_Get_Version") || opara__blas_has(lib, "mkl_get_version_string")) {
        if (opara__blas_has(lib, "mkl_get_max_threads"))
            return opara__blas_take_threaded(blas, "MKL", opara__blas_count(lib, "mkl_get_max_threads"), path, why,
                                             cap);
        opara__format(why, cap, "MKL without mkl_get_max_threads (its threads per call are unknown)");
        return 0;
    }
    opara__format(why, cap, "a reference BLAS (no OpenBLAS, BLIS or MKL entry point)");
    return 0;
}

/* The sonames tried when no list is given: the fast BLAS libraries by name, then the generic names,
   which Debian's update-alternatives may point at OpenBLAS or BLIS (or at the reference BLAS,
   refused). Only 32-bit-integer (LP64) builds: the call passes int. */
static const char* const opara__blas_default_paths[] = {
    "libopenblas.so.0", "libopenblasp.so.0", "libopenblas.so", "libblis.so.4", "libblis.so",
    "libmkl_rt.so.2",   "libmkl_rt.so",      "libblas.so.3",   "libcblas.so.3", "libblas.so"};

/* Appends "refused PATH: WHY" to the refusals, "; "-separated. */
static void opara__blas_note_refusal(opara__blas* blas, const char* path, const char* why) {
    size_t used = strlen(blas->refused);
    opara__format(blas->refused + used, sizeof blas->refused - used, "%srefused %s: %s", used ? "; " : "", path, why);
}

/* Whether `lib` is one of the n handles in `seen` (the generic names often lead to one file). */
static int opara__blas_seen(void* const* seen, size_t n, const void* lib) {
    size_t i;
    for (i = 0; i < n; ++i)
        if (seen[i] == lib) return 1;
    return 0;
}

OPARA__PRIVATE void opara__blas_load_from(opara__blas* blas, const char* const* paths, size_t n_paths, char* tried,
                                          size_t tried_cap) {
    void* refused[16]; /* kept open until the end, so that a second name for one of them is seen as such */
    size_t i, n_refused = 0, used = 0;
    memset(blas, 0, sizeof *blas);
    if (tried && tried_cap) tried[0] = 0;
    for (i = 0; i < n_paths; ++i) {
        void* lib = opara__blas_open(paths[i]);
        void* sgemm = lib ? opara_dl_sym(lib, "cblas_sgemm") : NULL;
        char why[160] = "";
        int taken = sgemm && opara__blas_take(blas, lib, paths[i], why, sizeof why);
        if (!lib) opara__format(why, sizeof why, "not found");
        else if (!sgemm) opara__format(why, sizeof why, "no cblas_sgemm");
        else if (!taken && !opara__blas_seen(refused, n_refused, lib)) opara__blas_note_refusal(blas, paths[i], why);
        if (tried && used < tried_cap)
            used += opara__format(tried + used, tried_cap - used, "%s%s (%s%s)", used ? ", " : "", paths[i],
                                  taken ? "taken" : sgemm ? "refused: " : "", why);
        if (taken) {
            blas->lib = lib;
            opara__blas_fnptr(sgemm, &blas->sgemm, sizeof blas->sgemm);
            break;
        }
        if (sgemm && n_refused < OPARA__ARRAY_COUNT(refused)) refused[n_refused++] = lib;
        else opara_dl_close(lib);
    }
    while (n_refused > 0) opara_dl_close(refused[--n_refused]);
    if (!blas->sgemm) {
        blas->set_threads = NULL;
        blas->get_threads = NULL;
        opara__format(blas->name, sizeof blas->name, "built-in (%s)", opara__sgemm_builtin_kind());
    }
    if (blas->refused[0])
        opara__format(blas->summary, sizeof blas->summary, "%s; %s", blas->name, blas->refused);
    else
        opara__format(blas->summary, sizeof blas->summary, "%s", blas->name);
}

OPARA__PRIVATE void opara__blas_load(opara__blas* blas, int use_builtin, char* tried, size_t tried_cap) {
    size_t n = use_builtin ? 0 : OPARA__ARRAY_COUNT(opara__blas_default_paths);
    opara__blas_load_from(blas, opara__blas_default_paths, n, tried, tried_cap);
}

OPARA__PRIVATE void opara__blas_unload(opara__blas* blas) {
    opara_dl_close(blas->lib);
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
