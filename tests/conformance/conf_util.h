/* Helpers shared by the conformance tools (tests/conformance/): element access by dtype,
   the ONNX backend-test tolerance check and error statistics (max abs error, NMSE). Included
   after opara.h with OPARA_IMPLEMENTATION. */
#ifndef OPARA_CONF_UTIL_H
#define OPARA_CONF_UTIL_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#if defined(__GNUC__)
#  define CONF_UNUSED __attribute__((unused))
#else
#  define CONF_UNUSED
#endif

static float conf_half_to_float(uint16_t h) {
    uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 31u, man = h & 1023u;
    float f;
    if (exp == 31) return man ? (float)NAN : (sign ? -INFINITY : INFINITY);
    f = exp ? ldexpf((float)(man | 1024u), (int)exp - 25) : ldexpf((float)man, -24);
    return sign ? -f : f;
}

static int conf_dtype_is_float(opara_dtype t) {
    return t == OPARA_DTYPE_F32 || t == OPARA_DTYPE_F64 || t == OPARA_DTYPE_F16;
}

/* Element i of a tensor of dtype t as a double (exact for every integer type we support up to 2^53). */
static double conf_get(opara_dtype t, const void* p, uint64_t i) {
    switch (t) {
    case OPARA_DTYPE_F32: return ((const float*)p)[i];
    case OPARA_DTYPE_F64: return ((const double*)p)[i];
    case OPARA_DTYPE_F16: return conf_half_to_float(((const uint16_t*)p)[i]);
    case OPARA_DTYPE_U8: return ((const uint8_t*)p)[i];
    case OPARA_DTYPE_I8: return ((const int8_t*)p)[i];
    case OPARA_DTYPE_I32: return ((const int32_t*)p)[i];
    case OPARA_DTYPE_I64: return (double)((const int64_t*)p)[i];
    case OPARA_DTYPE_BOOL: return ((const uint8_t*)p)[i] != 0;
    default: return 0;
    }
}

/* Result of comparing got with expected, element by element. */
typedef struct conf_cmp {
    uint64_t count, mismatches, first_bad;
    double max_abs, max_ref, sum_sq_err, sum_sq_ref;
    double bad_got, bad_exp;
} conf_cmp;

/* ONNX's backend tests: floats pass when |got - exp| <= atol + rtol * |exp| (NaN matches NaN,
   infinities must match exactly); integers and bools must be equal. Integer tensors are compared
   as int64 so that large i64 values are exact. */
static void conf_compare(opara_dtype t, const void* got, const void* exp, uint64_t count, double rtol, double atol,
                         conf_cmp* c) {
    uint64_t i;
    memset(c, 0, sizeof *c);
    c->count = count;
    for (i = 0; i < count; ++i) {
        int ok;
        double g, e, d;
        if (t == OPARA_DTYPE_I64) {
            int64_t gi = ((const int64_t*)got)[i], ei = ((const int64_t*)exp)[i];
            g = (double)gi;
            e = (double)ei;
            ok = gi == ei;
        } else {
            g = conf_get(t, got, i);
            e = conf_get(t, exp, i);
            if (!conf_dtype_is_float(t)) ok = g == e;
            else if (isnan(e) || isnan(g)) ok = isnan(e) && isnan(g);
            else if (isinf(e) || isinf(g)) ok = g == e;
            else ok = fabs(g - e) <= atol + rtol * fabs(e);
        }
        if (!isnan(g) && !isnan(e) && !isinf(g) && !isinf(e)) {
            d = fabs(g - e);
            if (d > c->max_abs) c->max_abs = d;
            if (fabs(e) > c->max_ref) c->max_ref = fabs(e);
            c->sum_sq_err += d * d;
            c->sum_sq_ref += e * e;
        }
        if (!ok) {
            if (!c->mismatches) {
                c->first_bad = i;
                c->bad_got = g;
                c->bad_exp = e;
            }
            c->mismatches++;
        }
    }
}

/* Normalized mean square error sum((g-e)^2) / sum(e^2); 0 when both are zero. */
CONF_UNUSED static double conf_nmse(const conf_cmp* c) {
    if (c->sum_sq_ref > 0) return c->sum_sq_err / c->sum_sq_ref;
    return c->sum_sq_err > 0 ? INFINITY : 0.0;
}

CONF_UNUSED static void conf_shape_text(int32_t rank, const int64_t* dims, char* buf, size_t cap) {
    size_t n = 0;
    int32_t i;
    buf[0] = 0;
    n += (size_t)snprintf(buf + n, cap - n, "[");
    for (i = 0; i < rank && n < cap; ++i) n += (size_t)snprintf(buf + n, cap - n, "%s%lld", i ? "," : "", (long long)dims[i]);
    if (n < cap) snprintf(buf + n, cap - n, "]");
}

#endif /* OPARA_CONF_UTIL_H */
