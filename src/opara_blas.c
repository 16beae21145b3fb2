/* Run-time BLAS: OpenBLAS (set to one thread) or any libblas that exports cblas_sgemm, by dlopen. */
#include "opara_cpu.h"

#if !defined(_WIN32)
#  include <dlfcn.h>
#endif

typedef void (*opara__blas_set_threads_fn)(int n);

#if defined(_WIN32)
static void* opara__blas_open(const char* path) { (void)path; return NULL; }
static void* opara__blas_sym(void* lib, const char* name) { (void)lib; (void)name; return NULL; }
static void opara__blas_close(void* lib) { (void)lib; }
#else
static void* opara__blas_open(const char* path) { return dlopen(path, RTLD_NOW | RTLD_LOCAL); }
static void* opara__blas_sym(void* lib, const char* name) { return dlsym(lib, name); }
static void opara__blas_close(void* lib) { dlclose(lib); }
#endif

/* Function pointers from dlsym come as void*; memcpy keeps ISO C quiet about the conversion. */
static void opara__blas_fnptr(void* sym, void* dst, size_t size) { memcpy(dst, &sym, size); }

OPARA__PRIVATE void opara__blas_load(opara__blas* blas, int use_builtin, char* tried, size_t tried_cap) {
    static const char* const paths[] = {"libopenblas.so.0", "libopenblasp.so.0", "libopenblas.so",
                                        "libblas.so.3",     "libcblas.so.3",     "libblas.so"};
    size_t i, used = 0;
    memset(blas, 0, sizeof *blas);
    if (tried && tried_cap) tried[0] = 0;
    if (!use_builtin) {
        for (i = 0; i < OPARA__ARRAY_COUNT(paths); ++i) {
            void* lib = opara__blas_open(paths[i]);
            void *sgemm, *threads;
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
            threads = opara__blas_sym(lib, "openblas_set_num_threads");
            if (threads) {
                opara__blas_set_threads_fn set_threads;
                opara__blas_fnptr(threads, &set_threads, sizeof set_threads);
                set_threads(1);
                opara__format(blas->name, sizeof blas->name, "OpenBLAS (%s)", paths[i]);
            } else {
                opara__format(blas->name, sizeof blas->name, "BLAS (%s)", paths[i]);
            }
            return;
        }
    }
    opara__format(blas->name, sizeof blas->name, "built-in (%s)", opara__sgemm_builtin_kind());
}

OPARA__PRIVATE void opara__blas_unload(opara__blas* blas) {
    if (blas->lib) opara__blas_close(blas->lib);
    memset(blas, 0, sizeof *blas);
}
