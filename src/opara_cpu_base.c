/* What every CPU kernel file shares, below all of them: failure text for the executor, element
   counts, dims comparison and broadcast strides (from the shape engine's one broadcast rule). */
#include "opara_cpu.h"

#include <stdio.h>

OPARA__PRIVATE opara_result opara__cpu_reject(char* err, size_t cap, opara_result code, const char* fmt, ...) {
    va_list args;
    if (err && cap) {
        va_start(args, fmt);
        vsnprintf(err, cap, fmt, args);
        va_end(args);
    }
    return code;
}

OPARA__PRIVATE size_t opara__cpu_numel(const opara__cpu_tensor* t) {
    size_t n = 1;
    int32_t i;
    for (i = 0; i < t->ndim; ++i) n *= (size_t)t->dims[i];
    return n;
}

OPARA__PRIVATE int opara__cpu_same_dims(const opara__cpu_tensor* a, const opara__cpu_tensor* b) {
    int32_t i;
    if (a->ndim != b->ndim) return 0;
    for (i = 0; i < a->ndim; ++i)
        if (a->dims[i] != b->dims[i]) return 0;
    return 1;
}

OPARA__PRIVATE int opara__cpu_bcast_strides(int32_t out_ndim, const int64_t* out_dims, int32_t in_ndim,
                                            const int64_t* in_dims, int64_t* strides) {
    opara__shape out, in;
    if (out_ndim < 0 || out_ndim > OPARA_MAX_DIMS || in_ndim < 0 || in_ndim > OPARA_MAX_DIMS) return 0;
    out.ndim = out_ndim, in.ndim = in_ndim;
    memcpy(out.dims, out_dims, (size_t)out_ndim * sizeof *out_dims);
    memcpy(in.dims, in_dims, (size_t)in_ndim * sizeof *in_dims);
    return opara__broadcast_to(&out, &in, strides);
}
