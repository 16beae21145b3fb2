/* What every CPU kernel file shares, below all of them: failure text for the executor, element
   counts, dims comparison and broadcast strides (from the shape engine's one broadcast rule), the
   record's axis, the broadcast iteration space, the integer conversions of Cast and Pad. */
#include "opara_cpu.h"

#include <stdio.h>

OPARA__PRIVATE opara_result opara__cpu_reject(char* err, size_t cap, opara_result code, const char* fmt, ...) {
    va_list args;
    if (err && cap) {
        va_start(args, fmt);
        opara__vsnprintf(err, cap, fmt, args);
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

/* The axis the shape engine resolved for the node (normalized), when it is one of the rank's. */
OPARA__PRIVATE int opara__cpu_record_axis(const opara__cpu_op* op, int32_t rank, int64_t* axis) {
    if (!op->params || !op->params->resolved || op->params->axis < 0 || op->params->axis >= rank) return 0;
    *axis = op->params->axis;
    return 1;
}

OPARA__PRIVATE int64_t opara__cpu_dims_prod(const int64_t* dims, int32_t from, int32_t to) {
    int64_t n = 1;
    int32_t i;
    for (i = from; i < to; ++i) n *= dims[i];
    return n;
}

/* Drops unit dims and merges neighbours that are contiguous for every input; fills
   p->bc_ndim/bc_dims/bc_strides. strides[k] are the uncollapsed element strides of input k. */
OPARA__PRIVATE void opara__cpu_bc_collapse(opara__cpu_params* p, int n_in, int32_t ndim, const int64_t* dims,
                                           int64_t strides[][OPARA_MAX_DIMS]) {
    int32_t i, nd = 0;
    int k;
    for (i = 0; i < ndim; ++i) {
        if (dims[i] == 1) continue;
        if (nd > 0) {
            int merge = 1;
            for (k = 0; k < n_in; ++k)
                if (p->bc_strides[k][nd - 1] != strides[k][i] * dims[i]) merge = 0;
            if (merge) {
                p->bc_dims[nd - 1] *= dims[i];
                for (k = 0; k < n_in; ++k) p->bc_strides[k][nd - 1] = strides[k][i];
                continue;
            }
        }
        p->bc_dims[nd] = dims[i];
        for (k = 0; k < n_in; ++k) p->bc_strides[k][nd] = strides[k][i];
        ++nd;
    }
    if (nd == 0) {
        p->bc_dims[0] = 1;
        for (k = 0; k < n_in; ++k) p->bc_strides[k][0] = 0;
        nd = 1;
    }
    p->bc_ndim = nd;
    /* work items: rows (all but the innermost dim) x chunks of the innermost dim */
    p->inner = p->bc_dims[nd - 1];
    p->tail = p->inner > 0 ? (p->inner + OPARA__CHUNK - 1) / OPARA__CHUNK : 0;
    p->outer = opara__cpu_dims_prod(p->bc_dims, 0, nd - 1);
}

/* Element offsets of each input for row `row` of the collapsed iteration space. */
OPARA__PRIVATE void opara__cpu_bc_offsets(const opara__cpu_params* p, int n_in, size_t row, int64_t* off) {
    int32_t d;
    int k;
    for (k = 0; k < n_in; ++k) off[k] = 0;
    for (d = p->bc_ndim - 2; d >= 0; --d) {
        int64_t idx = (int64_t)(row % (size_t)p->bc_dims[d]);
        row /= (size_t)p->bc_dims[d];
        for (k = 0; k < n_in; ++k) off[k] += idx * p->bc_strides[k][d];
    }
}

/* Decodes item -> (row, first element, count) of the innermost dim. */
OPARA__PRIVATE void opara__cpu_bc_item(const opara__cpu_params* p, size_t item, size_t* row, size_t* j0, size_t* n) {
    size_t chunk = item % (size_t)p->tail;
    *row = item / (size_t)p->tail;
    *j0 = chunk * OPARA__CHUNK;
    *n = OPARA__MIN((size_t)OPARA__CHUNK, (size_t)p->inner - *j0);
}

OPARA__PRIVATE void opara__cpu_natural_strides(const opara__cpu_tensor* t, int64_t* strides) {
    int32_t i;
    int64_t s = 1;
    for (i = t->ndim - 1; i >= 0; --i) {
        strides[i] = s;
        s *= t->dims[i];
    }
}

OPARA__PRIVATE void opara__cpu_store_i(void* base, opara_dtype t, size_t i, int64_t v) {
    switch (t) {
    case OPARA_DTYPE_I64: ((int64_t*)base)[i] = v; break;
    case OPARA_DTYPE_I32: ((int32_t*)base)[i] = (int32_t)(uint32_t)(uint64_t)v; break;
    case OPARA_DTYPE_I8: ((int8_t*)base)[i] = (int8_t)(uint8_t)(uint64_t)v; break;
    case OPARA_DTYPE_BOOL: ((uint8_t*)base)[i] = v != 0; break;
    default: ((uint8_t*)base)[i] = (uint8_t)(uint64_t)v; break;
    }
}

/* Float to integer: truncation toward zero, saturated to the int64 range, NaN gives 0. */
OPARA__PRIVATE int64_t opara__cpu_f_to_i(double v) {
    if (v != v) return 0;
    if (v >= 9.2233720368547758e18) return INT64_MAX;
    if (v <= -9.2233720368547758e18) return INT64_MIN;
    return (int64_t)v;
}

OPARA__PRIVATE int opara__cpu_cast_type_ok(opara_dtype t) {
    return t == OPARA_DTYPE_F32 || t == OPARA_DTYPE_F64 || t == OPARA_DTYPE_I64 || t == OPARA_DTYPE_I32 ||
           t == OPARA_DTYPE_I8 || t == OPARA_DTYPE_U8 || t == OPARA_DTYPE_BOOL;
}
