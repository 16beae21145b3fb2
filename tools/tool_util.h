/* What the command-line tools and benchmarks share beside the public API: a monotonic clock and a
   JSON string writer. Include after opara.h (which asks for the POSIX declarations it needs). */
#ifndef OPARA_TOOL_UTIL_H
#define OPARA_TOOL_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <time.h>

/* Nanoseconds of a monotonic clock (differences only). */
static inline uint64_t tool_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
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
