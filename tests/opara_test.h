/* opara_test.h - the project's test harness (single header, explicit test tables).

   OT_TEST(name) { CHECK(cond); REQUIRE(cond); CHECK_EQ(a, b); CHECK_STR(a, b); CHECK_NEAR(a, b, tol);
                   CHECK_NMSE(ref, got, n, max); SKIP("why %d", x); OT_LOG("context %d", i); }
   static const opara_test_case tests[] = { OT_CASE(name), ... };
   int main(int argc, char** argv) { return opara_test_main(argc, argv, tests, OT_COUNT(tests)); }

   CHECK records a failure and continues; REQUIRE records it and returns from the test; SKIP
   returns and counts the test as skipped with its reason. The run ends with the line
   "N passed, N failed, N skipped" and exits 1 when anything failed. Output is line-buffered, and a
   crash (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT) names the running test on stderr first, so a log
   cut short by a crash still says where (a handler installed before ours, e.g. a sanitizer's, is kept).
   Options: --filter SUBSTR (run matching tests only), --list. */
#ifndef OPARA_TEST_H
#define OPARA_TEST_H

#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct opara_test {
    const char* name;
    int failures;
    int skipped;
    char skip_reason[512];
    char log[2048];
    size_t log_len;
} opara_test;

typedef struct opara_test_case {
    const char* name;
    void (*fn)(opara_test* T);
} opara_test_case;

#define OT_TEST(name) static void name(opara_test* T)
#define OT_CASE(name) {#name, name}
#define OT_COUNT(table) ((int)(sizeof(table) / sizeof((table)[0])))

/* MinGW builds of the tests define __USE_MINGW_ANSI_STDIO=1 (mk/windows.mk): C99 printf formats. */
#if defined(__MINGW32__) && !defined(__clang__)
#  define OT__PRINTF(a, b) __attribute__((format(gnu_printf, a, b)))
#  define OT__UNUSED __attribute__((unused))
#elif defined(__GNUC__) || defined(__clang__)
#  define OT__PRINTF(a, b) __attribute__((format(printf, a, b)))
#  define OT__UNUSED __attribute__((unused))
#else
#  define OT__PRINTF(a, b)
#  define OT__UNUSED
#endif

/* The POSIX calls the tests' fixtures use, on Windows (make test-windows: MinGW, run under Wine). */
#ifdef _WIN32
#  include <direct.h>
#  include <io.h>
#  ifndef R_OK
#    define R_OK 4
#  endif
OT__UNUSED static int setenv(const char* name, const char* value, int overwrite) {
    if (!overwrite && getenv(name)) return 0;
    return _putenv_s(name, value) == 0 ? 0 : -1;
}
OT__UNUSED static int unsetenv(const char* name) { return _putenv_s(name, "") == 0 ? 0 : -1; }
OT__UNUSED static char* mkdtemp(char* pattern) {
    return _mktemp_s(pattern, strlen(pattern) + 1) == 0 && _mkdir(pattern) == 0 ? pattern : NULL;
}
#endif

/* Aligned memory for the tests' allocator hooks, in plain C99 (posix_memalign and _aligned_malloc are
   each one platform's): the block's start is kept just below the aligned pointer. alignment: a power
   of two. */
OT__UNUSED static void* ot_aligned_alloc(size_t size, size_t alignment) {
    unsigned char* raw;
    uintptr_t at;
    if (alignment < sizeof(void*)) alignment = sizeof(void*);
    if (size > (size_t)-1 - alignment - sizeof(void*)) return NULL;
    raw = (unsigned char*)malloc(size + alignment + sizeof(void*));
    if (!raw) return NULL;
    at = ((uintptr_t)(raw + sizeof(void*)) + alignment - 1) & ~(uintptr_t)(alignment - 1);
    memcpy((unsigned char*)at - sizeof(void*), &raw, sizeof raw);
    return (void*)at;
}
OT__UNUSED static void ot_aligned_free(void* p) {
    void* raw;
    if (!p) return;
    memcpy(&raw, (unsigned char*)p - sizeof(void*), sizeof raw);
    free(raw);
}

OT__UNUSED static void ot__fail_at(opara_test* T, const char* file, int line, const char* fmt, ...) OT__PRINTF(4, 5);
OT__UNUSED static void ot__fail_at(opara_test* T, const char* file, int line, const char* fmt, ...) {
    va_list args;
    if (T->failures == 0) printf("FAIL %s\n", T->name);
    printf("  %s:%d: ", file, line);
    va_start(args, fmt);
    vprintf(fmt, args);
    va_end(args);
    printf("\n");
    T->failures++;
}

OT__UNUSED static void ot__log(opara_test* T, const char* fmt, ...) OT__PRINTF(2, 3);
OT__UNUSED static void ot__log(opara_test* T, const char* fmt, ...) {
    va_list args;
    int n;
    if (T->log_len + 2 >= sizeof T->log) return;
    va_start(args, fmt);
    n = vsnprintf(T->log + T->log_len, sizeof T->log - T->log_len - 1, fmt, args);
    va_end(args);
    if (n < 0) return;
    T->log_len += (size_t)n < sizeof T->log - T->log_len - 1 ? (size_t)n : sizeof T->log - T->log_len - 2;
    T->log[T->log_len++] = '\n';
    T->log[T->log_len] = 0;
}

OT__UNUSED static void ot__skip(opara_test* T, const char* fmt, ...) OT__PRINTF(2, 3);
OT__UNUSED static void ot__skip(opara_test* T, const char* fmt, ...) {
    va_list args;
    va_start(args, fmt);
    vsnprintf(T->skip_reason, sizeof T->skip_reason, fmt, args);
    va_end(args);
    T->skipped = 1;
}

/* Normalized mean square error: sum((ref-got)^2) / max(sum(ref^2), tiny). */
OT__UNUSED static double ot_nmse(const float* ref, const float* got, size_t n) {
    double num = 0, den = 0;
    size_t i;
    for (i = 0; i < n; ++i) {
        double d = (double)ref[i] - (double)got[i];
        if (got[i] != got[i]) return 1e300; /* NaN in the result */
        num += d * d;
        den += (double)ref[i] * (double)ref[i];
    }
    return num / (den > 1e-30 ? den : 1e-30);
}

/* The running test and the check being evaluated, for the crash message. */
static const char* volatile ot__running;
#if defined(__GNUC__) || defined(__clang__)
#  define OT__THREAD __thread /* checks run on tests' own threads too */
#else
#  define OT__THREAD
#endif
static OT__THREAD const char* volatile ot__file;
static OT__THREAD volatile int ot__line;
#define OT__AT() (ot__file = __FILE__, ot__line = __LINE__)

#define OT_LOG(...) ot__log(T, __VA_ARGS__)
#define CHECK(cond) \
    do { OT__AT(); if (!(cond)) ot__fail_at(T, __FILE__, __LINE__, "CHECK(%s)", #cond); } while (0)
#define REQUIRE(cond) \
    do { OT__AT(); if (!(cond)) { ot__fail_at(T, __FILE__, __LINE__, "REQUIRE(%s)", #cond); return; } } while (0)
#define CHECK_EQ(a, b) \
    do { OT__AT(); long long ot_a_ = (long long)(a), ot_b_ = (long long)(b); \
         if (ot_a_ != ot_b_) ot__fail_at(T, __FILE__, __LINE__, "CHECK_EQ(%s, %s): %lld != %lld", #a, #b, ot_a_, ot_b_); \
    } while (0)
#define CHECK_STR(a, b) \
    do { OT__AT(); const char *ot_a_ = (a), *ot_b_ = (b); \
         if (!ot_a_ || !ot_b_ || strcmp(ot_a_, ot_b_) != 0) \
             ot__fail_at(T, __FILE__, __LINE__, "CHECK_STR(%s, %s): \"%s\" != \"%s\"", #a, #b, \
                         ot_a_ ? ot_a_ : "(null)", ot_b_ ? ot_b_ : "(null)"); \
    } while (0)
#define CHECK_NEAR(a, b, tol) \
    do { OT__AT(); double ot_a_ = (double)(a), ot_b_ = (double)(b), ot_t_ = (double)(tol); \
         if (!(ot_a_ - ot_b_ <= ot_t_ && ot_b_ - ot_a_ <= ot_t_)) \
             ot__fail_at(T, __FILE__, __LINE__, "CHECK_NEAR(%s, %s, %s): %.9g vs %.9g", #a, #b, #tol, ot_a_, ot_b_); \
    } while (0)
#define CHECK_NMSE(ref, got, n, max) \
    do { OT__AT(); double ot_e_ = ot_nmse((ref), (got), (size_t)(n)); \
         if (!(ot_e_ <= (double)(max))) \
             ot__fail_at(T, __FILE__, __LINE__, "CHECK_NMSE(%s, %s): %.3g > %.3g", #ref, #got, ot_e_, (double)(max)); \
    } while (0)
#define SKIP(...) do { ot__skip(T, __VA_ARGS__); return; } while (0)

OT__UNUSED static void ot__on_crash(int sig) {
    signal(sig, SIG_DFL);
    fprintf(stderr, "CRASH in test %s (signal %d) at or after the check at %s:%d\n",
            ot__running ? ot__running : "(none)", sig, ot__file ? ot__file : "?", ot__line);
    raise(sig);
}

OT__UNUSED static void ot__catch_crashes(void) {
    static const int sigs[] = {SIGSEGV, SIGFPE, SIGILL, SIGABRT,
#ifdef SIGBUS
                               SIGBUS
#endif
    };
    size_t i;
    for (i = 0; i < sizeof sigs / sizeof sigs[0]; ++i) {
        void (*before)(int) = signal(sigs[i], ot__on_crash);
        if (before != SIG_DFL && before != SIG_ERR) signal(sigs[i], before);
    }
}

OT__UNUSED static int opara_test_main(int argc, char** argv, const opara_test_case* tests, int count) {
    const char* filter = NULL;
    int i, passed = 0, failed = 0, skipped = 0;
#ifdef _WIN32
    setvbuf(stdout, NULL, _IONBF, 0); /* the C runtime has no line buffering (and refuses size 0 for it) */
#else
    setvbuf(stdout, NULL, _IOLBF, 0);
#endif
    ot__catch_crashes();
    for (i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--filter") == 0 && i + 1 < argc) filter = argv[++i];
        else if (strcmp(argv[i], "--list") == 0) {
            int k;
            for (k = 0; k < count; ++k) printf("%s\n", tests[k].name);
            return 0;
        }
    }
    for (i = 0; i < count; ++i) {
        opara_test t;
        clock_t start;
        if (filter && !strstr(tests[i].name, filter)) continue;
        memset(&t, 0, sizeof t);
        t.name = tests[i].name;
        start = clock();
        ot__running = t.name;
        ot__file = NULL;
        tests[i].fn(&t);
        ot__running = NULL;
        if (t.failures) {
            if (t.log_len) printf("  log:\n%s", t.log);
            failed++;
        } else if (t.skipped) {
            printf("SKIP %s: %s\n", t.name, t.skip_reason);
            skipped++;
        } else {
            double ms = 1000.0 * (double)(clock() - start) / CLOCKS_PER_SEC;
            if (getenv("OT_VERBOSE")) {
                printf("ok   %s (%.1f ms)\n", t.name, ms);
                if (t.log_len) printf("  log:\n%s", t.log);
            }
            passed++;
        }
    }
    printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
    return failed ? 1 : 0;
}

#endif /* OPARA_TEST_H */
