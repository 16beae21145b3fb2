/* opara_dl.h - the one dynamic-library layer of opara: opening a library, finding a symbol in it,
   closing it. opara_cuda.h loads every CUDA library through it and includes it (keep the two files
   side by side); opara.h inlines it for its BLAS and CPU-affinity calls too, so it stays when
   opara.h is built without CUDA (OPARA_NO_CUDA, build/opara_cpu.h).

   POSIX: dlopen (RTLD_NOW | RTLD_LOCAL), dlsym, dlclose; link with -ldl. Windows: LoadLibraryW on the
   UTF-8 name converted (an absolute path: LoadLibraryExW, which looks for the DLLs it imports in its
   own directory first), without the system's error dialog box, GetProcAddress, FreeLibrary; the
   UTF-8 to UTF-16 conversion (opara_dl_widen) serves opara.h's file names too.

   Configuration macros (define before including):
       OPARA_DL_IMPLEMENTATION  emit the functions in this translation unit (OPARA_CUDA_IMPLEMENTATION
                                implies it)
       OPARA_DL_STATIC          make them static (OPARA_CUDA_STATIC implies it)
       OPARA_DL_DEF             their storage class (overrides OPARA_DL_STATIC)
   Inside the amalgamated opara.h they are emitted with the implementation and are static. */
#ifndef OPARA_DL_H_INCLUDED
#define OPARA_DL_H_INCLUDED

#include <stddef.h>
#ifdef _WIN32
/* The one place opara includes <windows.h>: lean, and without the min/max macros that would break a
   C++ program including it (each is left alone when the program set it). */
#  ifndef WIN32_LEAN_AND_MEAN
#    define WIN32_LEAN_AND_MEAN
#  endif
#  ifndef NOMINMAX
#    define NOMINMAX
#  endif
#  include <windows.h>
#endif

#ifndef OPARA_DL_DEF
#  if defined(OPARA_DL_STATIC) || defined(OPARA_CUDA_STATIC) || defined(OPARA__AMALGAMATED)
#    if defined(__GNUC__) || defined(__clang__)
#      define OPARA_DL_DEF static __attribute__((unused))
#    else
#      define OPARA_DL_DEF static
#    endif
#  else
#    define OPARA_DL_DEF extern
#  endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Opens a library by path or name. NULL opens the program itself with what it has loaded (POSIX;
   NULL on Windows). On failure returns NULL and, when err is given, the system's reason in it
   (POSIX: dlerror without the leading "<path>: ", which the caller names anyway). */
OPARA_DL_DEF void* opara_dl_open(const char* path, char* err, size_t err_size);
/* The address of an exported symbol, NULL when the library has none. */
OPARA_DL_DEF void* opara_dl_sym(void* library, const char* name);
/* Closes what opara_dl_open opened (NULL is ignored). */
OPARA_DL_DEF void opara_dl_close(void* library);

#ifdef _WIN32
/* UTF-8 (what every path given to opara is) to the UTF-16 of Windows' W functions, terminated, in
   out[out_count]. Returns 0 when it is not UTF-8 or does not fit. */
OPARA_DL_DEF int opara_dl_widen(const char* utf8, wchar_t* out, size_t out_count);
/* The longest path, in UTF-16 units with the terminator, that opara passes to Windows. */
#  define OPARA_DL_WPATH_MAX 4096
#endif

#ifdef __cplusplus
}
#endif

#endif /* OPARA_DL_H_INCLUDED */

#if defined(OPARA__AMALGAMATED) && defined(OPARA_IMPLEMENTATION) && !defined(OPARA_DL_IMPLEMENTATION)
#  define OPARA_DL_IMPLEMENTATION
#endif
#if defined(OPARA_CUDA_IMPLEMENTATION) && !defined(OPARA_DL_IMPLEMENTATION)
#  define OPARA_DL_IMPLEMENTATION
#endif

#if defined(OPARA_DL_IMPLEMENTATION) && !defined(OPARA_DL_IMPLEMENTATION_INCLUDED)
#define OPARA_DL_IMPLEMENTATION_INCLUDED

#include <stdio.h>
#include <string.h>
#ifdef _WIN32
OPARA_DL_DEF int opara_dl_widen(const char* utf8, wchar_t* out, size_t out_count) {
    int n;
    if (!utf8 || !out || out_count == 0 || out_count > 0x7fffffff) return 0;
    n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, utf8, -1, out, (int)out_count);
    return n > 0;
}

/* A drive-letter or UNC path (either slash). */
static int opara__dl_absolute(const char* p) {
    return (p[0] && p[1] == ':') || ((p[0] == '\\' || p[0] == '/') && (p[1] == '\\' || p[1] == '/'));
}

/* "error N: the system's sentence" */
static void opara__dl_error(char* err, size_t err_size, DWORD code) {
    char text[256];
    size_t n;
    text[0] = 0;
    FormatMessageA(FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, NULL, code, 0, text, sizeof text, NULL);
    for (n = strlen(text); n > 0 && (text[n - 1] == '\n' || text[n - 1] == '\r' || text[n - 1] == ' ');) text[--n] = 0;
    snprintf(err, err_size, "LoadLibrary error %lu%s%s", (unsigned long)code, text[0] ? ": " : "", text);
}

OPARA_DL_DEF void* opara_dl_open(const char* path, char* err, size_t err_size) {
    HMODULE library = NULL;
    wchar_t wide[OPARA_DL_WPATH_MAX];
    DWORD old_mode = 0, code;
    int quiet;
    if (!path) {
        if (err && err_size) snprintf(err, err_size, "no handle for the program itself on Windows");
        return NULL;
    }
    if (!opara_dl_widen(path, wide, OPARA_DL_WPATH_MAX)) {
        if (err && err_size) snprintf(err, err_size, "the name is not UTF-8 or is longer than %d characters",
                                      OPARA_DL_WPATH_MAX - 1);
        return NULL;
    }
    /* no "missing DLL" dialog box: the thread's error mode only, the process's stays the program's */
    quiet = SetThreadErrorMode(SEM_FAILCRITICALERRORS | SEM_NOOPENFILEERRORBOX, &old_mode);
    /* an absolute path: the DLLs it imports are looked for in its own directory first */
    library = opara__dl_absolute(path) ? LoadLibraryExW(wide, NULL, LOAD_WITH_ALTERED_SEARCH_PATH) : LoadLibraryW(wide);
    code = GetLastError();
    if (quiet) SetThreadErrorMode(old_mode, NULL);
    if (!library && err && err_size) opara__dl_error(err, err_size, code);
    return (void*)library;
}
OPARA_DL_DEF void* opara_dl_sym(void* library, const char* name) {
    FARPROC proc = GetProcAddress((HMODULE)library, name);
    void* p;
    memcpy(&p, &proc, sizeof p);
    return p;
}
OPARA_DL_DEF void opara_dl_close(void* library) {
    if (library) FreeLibrary((HMODULE)library);
}
#else
#  include <dlfcn.h>

/* dlerror() says "<what was opened>: <reason>"; the caller's message names the file already. */
static void opara__dl_strip_name(char* why, const char* name) {
    size_t len = strlen(name);
    if (strncmp(why, name, len) == 0 && why[len] == ':' && why[len + 1] == ' ')
        memmove(why, why + len + 2, strlen(why + len + 2) + 1);
}
OPARA_DL_DEF void* opara_dl_open(const char* path, char* err, size_t err_size) {
    void* library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!library && err && err_size) {
        const char* why = dlerror();
        snprintf(err, err_size, "%s", why ? why : "unknown dlopen error");
        if (path) opara__dl_strip_name(err, path);
    }
    return library;
}
OPARA_DL_DEF void* opara_dl_sym(void* library, const char* name) { return dlsym(library, name); }
OPARA_DL_DEF void opara_dl_close(void* library) {
    if (library) dlclose(library);
}
#endif

#endif /* OPARA_DL_IMPLEMENTATION */
