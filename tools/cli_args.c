/* Numeric option values for every subcommand: the whole value must be a number inside the option's
   range, so a typo ("--memory-budget 1,15", "--iters ten") is an error naming the option, never a
   silent 0 that changes what runs. */
#include <errno.h>

static int cli_int_arg(const char* cmd, const char* opt, const char* v, long long lo, long long hi, long long* out) {
    char* end = NULL;
    long long x = 0;
    errno = 0;
    if (v) x = strtoll(v, &end, 10);
    if (!v || end == v || *end || errno == ERANGE || x < lo || x > hi) {
        fprintf(stderr, "opara %s: %s takes an integer in [%lld, %lld], not '%s'\n", cmd, opt, lo, hi, v ? v : "");
        return 0;
    }
    *out = x;
    return 1;
}

static int cli_real_arg(const char* cmd, const char* opt, const char* v, double lo, double hi, double* out) {
    char* end = NULL;
    double x = 0;
    errno = 0;
    if (v) x = strtod(v, &end);
    if (!v || end == v || *end || errno == ERANGE || !(x >= lo && x <= hi)) {
        fprintf(stderr, "opara %s: %s takes a number in [%g, %g], not '%s'\n", cmd, opt, lo, hi, v ? v : "");
        return 0;
    }
    *out = x;
    return 1;
}

/* --precision: one of the library's precision names (opara_precision_name), nothing else. */
static int cli_precision_arg(const char* cmd, const char* opt, const char* v, opara_precision* out) {
    int i;
    for (i = 0; v && i < (int)OPARA_PRECISION_COUNT; ++i)
        if (strcmp(v, opara_precision_name((opara_precision)i)) == 0) {
            *out = (opara_precision)i;
            return 1;
        }
    fprintf(stderr, "opara %s: %s takes fp32 or tf32, not '%s'\n", cmd, opt, v ? v : "");
    return 0;
}
