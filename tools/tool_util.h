/* What the command-line tools and benchmarks share beside the public API: a monotonic clock and a
   JSON string writer. Include after opara.h (which asks for the POSIX declarations it needs). */
#ifndef OPARA_TOOL_UTIL_H
#define OPARA_TOOL_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <time.h>
#ifdef _WIN32
#  include <windows.h>
#endif

/* Nanoseconds of a monotonic clock (differences only). */
static inline uint64_t tool_now_ns(void) {
#ifdef _WIN32
    LARGE_INTEGER freq, now;
    QueryPerformanceFrequency(&freq);
    QueryPerformanceCounter(&now);
    return (uint64_t)(now.QuadPart / freq.QuadPart) * 1000000000ull +
           (uint64_t)(now.QuadPart % freq.QuadPart) * 1000000000ull / (uint64_t)freq.QuadPart;
#else
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
#endif
}

#ifdef _WIN32
/* UTF-8 to the UTF-16 of Windows' W functions; 0 when it is not UTF-8 or does not fit. */
static inline int tool_widen(const char* utf8, wchar_t* out, int count) {
    return MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, utf8, -1, out, count) > 0;
}
#endif

/* fopen of a UTF-8 path, as the library opens files (Windows: _wfopen; the CLI's arguments arrive as
   UTF-8 there, tools/opara.c). */
static inline FILE* tool_fopen(const char* path, const char* mode) {
#ifdef _WIN32
    wchar_t wide_path[4096], wide_mode[8];
    return tool_widen(path, wide_path, 4096) && tool_widen(mode, wide_mode, 8) ? _wfopen(wide_path, wide_mode) : NULL;
#else
    return fopen(path, mode);
#endif
}

/* A JSON string literal (quotes included) with ", \ and control characters escaped. */
static inline void tool_json_string(FILE* f, const char* s) {
    fputc('"', f);
    for (; s && *s; ++s) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
        else if (c < 0x20) fprintf(f, "\\u%04x", c);
        else fputc(c, f);
    }
    fputc('"', f);
}

#endif /* OPARA_TOOL_UTIL_H */
