/* Double-precision references of the unary math operators (Neg .. Atanh), by ONNX name, written from
   ONNX's operator definitions for tests/test_cpu_kernels.c and tests/test_cuda_kernels.c; a, b: alpha
   and gamma where the operator has them. Also each operator's input domain for random tests. */
#ifndef OPARA_TEST_MATH_REF_H
#define OPARA_TEST_MATH_REF_H

#include <math.h>
#include <string.h>

static const char* const MATH_OPS[] = {"Neg", "Abs", "Exp", "Log", "Reciprocal", "Floor", "Ceil", "Round", "Sign",
                                       "Sin", "Cos", "Tan", "Softplus", "Softsign", "Elu", "Selu", "Celu",
                                       "ThresholdedRelu", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh",
                                       "Atanh"};
#define MATH_OP_COUNT (sizeof MATH_OPS / sizeof MATH_OPS[0])

/* Round half to even, written out (not the C library's rounding mode). */
static double math_ref_round(double x) {
    double f = floor(x), d = x - f;
    if (x != x || isinf(x)) return x;
    if (d > 0.5 || (d == 0.5 && fmod(f, 2.0) != 0.0)) return f + 1.0;
    return f;
}

static double math_ref_sign(double x) { return x > 0 ? 1.0 : (x < 0 ? -1.0 : x); }

static double math_ref(const char* op, double x, double a, double b) {
    static const struct { const char* name; double (*f)(double); } plain[] = {
        {"Abs", fabs}, {"Exp", exp}, {"Log", log}, {"Floor", floor}, {"Ceil", ceil}, {"Round", math_ref_round},
        {"Sign", math_ref_sign}, {"Sin", sin}, {"Cos", cos}, {"Tan", tan}, {"Asin", asin}, {"Acos", acos},
        {"Atan", atan}, {"Sinh", sinh}, {"Cosh", cosh}, {"Asinh", asinh}, {"Acosh", acosh}, {"Atanh", atanh}};
    size_t i;
    for (i = 0; i < sizeof plain / sizeof plain[0]; ++i)
        if (strcmp(op, plain[i].name) == 0) return plain[i].f(x);
    if (strcmp(op, "Neg") == 0) return -x;
    if (strcmp(op, "Reciprocal") == 0) return 1.0 / x;
    if (strcmp(op, "Softplus") == 0) return x > 30 ? x : log(1.0 + exp(x));
    if (strcmp(op, "Softsign") == 0) return x / (1.0 + fabs(x));
    if (strcmp(op, "Elu") == 0) return x < 0 ? a * (exp(x) - 1.0) : x;
    if (strcmp(op, "Selu") == 0) return x <= 0 ? b * (a * exp(x) - a) : b * x;
    if (strcmp(op, "Celu") == 0) /* max and min as numpy's: NaN propagates */
        return x != x ? x : fmax(0.0, x) + fmin(0.0, a * (exp(x / a) - 1.0));
    return x > a ? x : 0.0; /* ThresholdedRelu */
}

/* The interval random inputs of op are drawn from: its domain, and where the f32 result stays finite. */
static void math_ref_domain(const char* op, double* lo, double* hi) {
    *lo = -6.0, *hi = 6.0;
    if (strcmp(op, "Log") == 0) *lo = 1e-3;
    if (strcmp(op, "Asin") == 0 || strcmp(op, "Acos") == 0 || strcmp(op, "Atanh") == 0) *lo = -0.999, *hi = 0.999;
    if (strcmp(op, "Acosh") == 0) *lo = 1.0, *hi = 50.0;
    if (strcmp(op, "Tan") == 0) *lo = -1.5, *hi = 1.5;
}

/* The special values every math operator gets (its last inputs): NaN, the infinities, signed zeros,
   halves (Round's ties), the ends of the inverse functions' domains, tiny and huge values (the
   argument reduction of Sin, Cos and Tan). */
static const float MATH_SPECIALS[] = {NAN,   INFINITY, -INFINITY, 0.0f,   -0.0f,     0.5f,     1.5f,     2.5f,
                                      -0.5f, -2.5f,    1.0f,      -1.0f,  1e-5f,     -3e-3f,   105615.0f, -3.3e7f,
                                      1e10f, -7e22f,   1e30f,     3e38f,  -1.6e38f};
#define N_SPECIALS (sizeof MATH_SPECIALS / sizeof MATH_SPECIALS[0])

/* |got - want| within 1e-5 relative (1e-5 absolute near 0); NaN and infinities must agree exactly. */
static int math_close(double want, float got) {
    if (want != want || got != got) return (want != want) && (got != got);
    if (isinf(want) || isinf(got)) return (double)got == want || (isinf(got) && fabs(want) > 3.4e38);
    return fabs(want - got) <= 1e-5 * (1.0 + fabs(want));
}

#endif
