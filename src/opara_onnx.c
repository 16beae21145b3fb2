/* ONNX import (see opara_onnx.h).

   Nodes are taken in dependency order (real exports are not always sorted). Each node either
   folds (all inputs constant and the op has a constant evaluator, or it is a Shape whose input
   shape is known), disappears (Constant, Identity, Dropout) or becomes one IR node whose
   constant inputs (axes, pads, shape, ...) move into canonical attributes. Integer constants
   carry a per-element multiple of the symbolic batch ("value + k * batch"), so the
   Shape -> Gather -> Unsqueeze -> Concat -> Reshape chains of batch-dynamic exports fold into
   a Reshape whose "shape" holds OPARA__DIM_BATCH or -1. Afterwards BatchNormalization folds
   into the preceding Conv and a Relu fuses into its Conv/Gemm, and the graph is rebuilt
   in topological order with only what the outputs need. */
#include "opara_onnx.h"
#include "opara_model.h"
#include "opara_cpu.h"

#include <math.h>
#include <stdlib.h>
#ifndef OPARA_NO_STDIO
#  include <stdio.h>
#endif

/* ---- tensors ---------------------------------------------------------------------------------- */

static opara_dtype opara__onnx_dtype(int32_t t) {
    switch (t) {
    case 1: case 2: case 3: case 6: case 7: case 9: case 10: case 11: return (opara_dtype)t;
    default: return OPARA_DTYPE_UNDEFINED;
    }
}

/* Copies count little-endian elements of size esize from src to native order in dst. */
static void opara__copy_le(void* dst, const uint8_t* src, uint64_t count, size_t esize) {
    uint64_t i;
    const uint16_t probe = 1;
    uint8_t first;
    memcpy(&first, &probe, 1);
    if (first == 1 || esize == 1) {
        memcpy(dst, src, (size_t)(count * esize));
        return;
    }
    for (i = 0; i < count; ++i) {
        uint8_t* d = (uint8_t*)dst + i * esize;
        if (esize == 2) { uint16_t v = opara__rd_u16(src + i * 2); memcpy(d, &v, 2); }
        else if (esize == 4) { uint32_t v = opara__rd_u32(src + i * 4); memcpy(d, &v, 4); }
        else { uint64_t v = opara__rd_u64(src + i * 8); memcpy(d, &v, 8); }
    }
}

/* Checks that the typed field for the tensor's dtype holds exactly count values (before allocating). */
static opara_result opara__typed_check(opara_runtime* rt, const opara__onnx_tensor* t, const char* where,
                                       const opara__tensor_data* out) {
    uint64_t have;
    const char* field;
    switch (out->dtype) {
    case OPARA_DTYPE_F32: have = t->n_float; field = "float_data"; break;
    case OPARA_DTYPE_F64: have = t->n_double; field = "double_data"; break;
    case OPARA_DTYPE_I64: have = t->n_int64; field = "int64_data"; break;
    default: have = t->n_int32; field = "int32_data"; break;
    }
    if (have == out->count) return OPARA_OK;
    return opara__fail(rt, OPARA_ERR_ONNX_INVALID, "%s: %s has %llu values, dims need %llu", where, field,
                       (unsigned long long)have, (unsigned long long)out->count);
}

static void opara__typed_fill(const opara__onnx_tensor* t, opara__tensor_data* out) {
    uint64_t i, n = out->count;
    for (i = 0; i < n; ++i) {
        switch (out->dtype) {
        case OPARA_DTYPE_F32: ((float*)out->data)[i] = t->float_data[i]; break;
        case OPARA_DTYPE_F64: ((double*)out->data)[i] = t->double_data[i]; break;
        case OPARA_DTYPE_I64: ((int64_t*)out->data)[i] = t->int64_data[i]; break;
        case OPARA_DTYPE_I32: ((int32_t*)out->data)[i] = t->int32_data[i]; break;
        case OPARA_DTYPE_F16: ((uint16_t*)out->data)[i] = (uint16_t)t->int32_data[i]; break;
        default: ((uint8_t*)out->data)[i] = (uint8_t)t->int32_data[i]; break;
        }
    }
}

static int opara__path_is_safe(const char* p) {
    const char* seg = p;
    if (!p[0] || p[0] == '/' || p[0] == '\\' || (p[0] && p[1] == ':')) return 0;
    for (;;) {
        const char* end = seg;
        while (*end && *end != '/' && *end != '\\') ++end;
        if (end - seg == 2 && seg[0] == '.' && seg[1] == '.') return 0;
        if (!*end) return 1;
        seg = end + 1;
    }
}

/* Where an external tensor's bytes are (path = base_dir/location, *offset), checked before anything
   is allocated: the keys parse, the location is a relative path inside the model's directory, a
   given length matches the dims, and the file holds offset + nbytes bytes. */
static opara_result opara__external_locate(opara_runtime* rt, const opara__onnx_tensor* t, const char* base_dir,
                                           const char* where, const opara__tensor_data* out, char* path, size_t cap,
                                           uint64_t* offset) {
    const char* location = NULL;
    uint64_t length = out->nbytes;
    int has_length = 0;
    uint32_t i;
    *offset = 0;
    for (i = 0; i < t->n_external; ++i) {
        const opara__onnx_kv* kv = &t->external[i];
        char* end = NULL;
        if (strcmp(kv->key, "location") == 0) location = kv->value;
        else if (strcmp(kv->key, "offset") == 0 || strcmp(kv->key, "length") == 0) {
            unsigned long long v = strtoull(kv->value, &end, 10);
            if (!kv->value[0] || !end || *end || kv->value[0] == '-')
                return opara__fail(rt, OPARA_ERR_EXTERNAL_DATA, "%s: external_data %s '%s' is not a number", where,
                                   kv->key, kv->value);
            if (kv->key[0] == 'o') *offset = v;
            else length = v, has_length = 1;
        }
    }
    if (!location) return opara__fail(rt, OPARA_ERR_EXTERNAL_DATA, "%s: external data without a location", where);
    if (!opara__path_is_safe(location))
        return opara__fail(rt, OPARA_ERR_EXTERNAL_DATA,
                           "%s: external data location '%s' must be a relative path inside the model's directory",
                           where, location);
    if (has_length && length != out->nbytes)
        return opara__fail(rt, OPARA_ERR_EXTERNAL_DATA, "%s: external data length %llu, dims need %llu bytes", where,
                           (unsigned long long)length, (unsigned long long)out->nbytes);
    if (!base_dir)
        return opara__fail(rt, OPARA_ERR_EXTERNAL_DATA,
                           "%s: external data '%s' needs the model's directory (load from a file, or set "
                           "external_data_dir)", where, location);
#ifdef OPARA_NO_STDIO
    (void)path, (void)cap;
    return opara__fail(rt, OPARA_ERR_EXTERNAL_DATA, "%s: external data needs stdio (OPARA_NO_STDIO is set)", where);
#else
    {
        FILE* f;
        long end = -1;
        if (opara__format(path, cap, "%s/%s", base_dir, location) >= cap - 1)
            return opara__fail(rt, OPARA_ERR_EXTERNAL_DATA, "%s: external data path too long", where);
        f = fopen(path, "rb");
        if (!f) return opara__fail(rt, OPARA_ERR_EXTERNAL_DATA, "%s: cannot open external data '%s'", where, path);
        if (fseek(f, 0, SEEK_END) == 0) end = ftell(f);
        fclose(f);
        if (end < 0 || *offset > (uint64_t)end || out->nbytes > (uint64_t)end - *offset)
            return opara__fail(rt, OPARA_ERR_EXTERNAL_DATA, "%s: '%s' has fewer than %llu bytes at offset %llu", where,
                               path, (unsigned long long)out->nbytes, (unsigned long long)*offset);
        return OPARA_OK;
    }
#endif
}

/* Reads the bytes opara__external_locate found into out->data. */
static opara_result opara__external_fill(opara_runtime* rt, const char* path, uint64_t offset, const char* where,
                                         opara__tensor_data* out) {
#ifdef OPARA_NO_STDIO
    (void)path, (void)offset, (void)out;
    return opara__fail(rt, OPARA_ERR_EXTERNAL_DATA, "%s: external data needs stdio (OPARA_NO_STDIO is set)", where);
#else
    FILE* f = fopen(path, "rb");
    size_t got = 0;
    if (!f) return opara__fail(rt, OPARA_ERR_EXTERNAL_DATA, "%s: cannot open external data '%s'", where, path);
    if (offset <= (uint64_t)LONG_MAX && fseek(f, (long)offset, SEEK_SET) == 0) got = fread(out->data, 1, (size_t)out->nbytes, f);
    fclose(f);
    if (got != out->nbytes)
        return opara__fail(rt, OPARA_ERR_EXTERNAL_DATA, "%s: '%s' has fewer than %llu bytes at offset %llu", where, path,
                           (unsigned long long)out->nbytes, (unsigned long long)offset);
    return OPARA_OK;
#endif
}

OPARA__PRIVATE void opara__tensor_data_free(opara_runtime* rt, opara__tensor_data* t) {
    opara__free(rt, t->data);
    t->data = NULL;
}

OPARA__PRIVATE opara_result opara__onnx_tensor_load(opara_runtime* rt, const opara__onnx_tensor* t,
                                                   const char* base_dir, const char* where, opara__tensor_data* out) {
    uint32_t i;
    int64_t count = 1;
    size_t esize, bytes;
    uint64_t offset = 0;
    char path[4096];
    opara_result r;
    memset(out, 0, sizeof *out);
    opara__format(out->name, sizeof out->name, "%s", t->name);
    out->dtype = opara__onnx_dtype(t->data_type);
    if (out->dtype == OPARA_DTYPE_UNDEFINED)
        return opara__fail(rt, OPARA_ERR_BAD_DTYPE, "%s: tensor data type %d is not supported", where,
                           (int)t->data_type);
    if (t->has_segment) return opara__fail(rt, OPARA_ERR_UNSUPPORTED, "%s: segmented tensors are not supported", where);
    if (t->n_dims > OPARA_MAX_DIMS)
        return opara__fail(rt, OPARA_ERR_LIMIT_EXCEEDED, "%s: rank %u exceeds OPARA_MAX_DIMS (%d)", where, t->n_dims,
                           OPARA_MAX_DIMS);
    out->shape.ndim = (int32_t)t->n_dims;
    for (i = 0; i < t->n_dims; ++i) {
        if (t->dims[i] < 0 || !opara__mul_i64(count, t->dims[i], &count))
            return opara__fail(rt, OPARA_ERR_ONNX_INVALID, "%s: invalid dims[%u] = %lld", where, i,
                               (long long)t->dims[i]);
        out->shape.dims[i] = t->dims[i];
    }
    esize = opara_dtype_size(out->dtype);
    if ((uint64_t)count > (uint64_t)((size_t)-1) || !opara__mul_size((size_t)count, esize, &bytes))
        return opara__fail(rt, OPARA_ERR_LIMIT_EXCEEDED, "%s: tensor too large", where);
    out->count = (uint64_t)count;
    out->nbytes = bytes;
    if (t->data_location != 0 && t->data_location != 1)
        return opara__fail(rt, OPARA_ERR_ONNX_INVALID, "%s: data_location %d is not DEFAULT (0) or EXTERNAL (1)", where,
                           (int)t->data_location);
    if (t->data_location == 0 && t->has_raw && t->raw.size != bytes)
        return opara__fail(rt, OPARA_ERR_ONNX_INVALID, "%s: raw_data has %llu bytes, dims need %llu", where,
                           (unsigned long long)t->raw.size, (unsigned long long)bytes);
    if (t->data_location == 0 && !t->has_raw && (r = opara__typed_check(rt, t, where, out)) != OPARA_OK) return r;
    if (t->data_location == 1 &&
        (r = opara__external_locate(rt, t, base_dir, where, out, path, sizeof path, &offset)) != OPARA_OK)
        return r;
    out->data = opara__alloc(rt, bytes ? bytes : 1);
    if (!out->data) return opara__fail(rt, OPARA_ERR_OUT_OF_MEMORY, "%s: out of memory (%zu bytes)", where, bytes);
    if (t->data_location == 1) r = opara__external_fill(rt, path, offset, where, out);
    else if (t->has_raw) {
        opara__copy_le(out->data, t->raw.data, out->count, esize);
        r = OPARA_OK;
    } else {
        opara__typed_fill(t, out);
        r = OPARA_OK;
    }
    if (r != OPARA_OK) opara__tensor_data_free(rt, out);
    return r;
}

OPARA__PRIVATE_TOOL opara_result opara__onnx_read_tensor(opara_runtime* rt, const void* data, size_t size,
                                                   opara__tensor_data* out) {
    opara__pool pool;
    opara__onnx_tensor t;
    opara_result r;
    memset(&pool, 0, sizeof pool);
    memset(out, 0, sizeof *out);
    r = opara__onnx_decode_tensor(rt, &pool, (const uint8_t*)data, size, &t);
    if (r == OPARA_OK) r = opara__onnx_tensor_load(rt, &t, NULL, t.name[0] ? t.name : "tensor", out);
    opara__pool_free(rt, &pool);
    return r;
}

/* ---- importer state --------------------------------------------------------------------------- */

typedef struct opara__imp_side {
    int32_t alias;        /* Identity/Dropout output: the value it stands for, else -1 */
    const int64_t* coef;  /* I64 constants: per-element multiple of the batch, or NULL (all zero) */
    opara__shape shape;   /* inferred shape of activations; dims may be OPARA__DIM_BATCH or -1 (unknown) */
    const char* rename;   /* the graph-output name this value takes in the rebuilt graph */
} opara__imp_side;

typedef struct opara__imp {
    opara_runtime* rt;
    opara__graph* g;
    const opara__onnx_model* model;
    const opara_onnx_options* opt;
    const char* base_dir;
    int64_t opset;
    opara__imp_side* side;
    size_t side_cap;
    const opara__onnx_node* node; /* node being imported, for messages */
    const char* node_name;
    const opara__onnx_extra* extra;
} opara__imp;

/* A constant tensor seen by the evaluator. */
typedef struct opara__cv {
    opara_dtype dtype;
    opara__shape shape;
    const uint8_t* data;
    const int64_t* coef;
    uint64_t count;
} opara__cv;

/* The evaluator declines (the node is then imported as an operator, or reported). */
#define OPARA__NOFOLD 1

static opara__imp_side* opara__side(opara__imp* im, int32_t v) {
    size_t need = (size_t)v + 1, old = im->side_cap, i;
    if (need > im->side_cap) {
        if (opara__grow(im->rt, (void**)&im->side, &im->side_cap, need, sizeof *im->side) != OPARA_OK) return NULL;
        for (i = old; i < im->side_cap; ++i) {
            im->side[i].alias = -1;
            im->side[i].shape.ndim = -1;
        }
    }
    return &im->side[v];
}

static int32_t opara__imp_find(opara__imp* im, const char* name) {
    int32_t v = opara__graph_find_value(im->g, name);
    int guard = 0;
    while (v >= 0 && (size_t)v < im->side_cap && im->side[v].alias >= 0 && guard++ < 1000000) v = im->side[v].alias;
    return v;
}

static const opara__shape* opara__imp_shape(opara__imp* im, int32_t v) {
    const opara__value* val = &im->g->values[v];
    if (val->kind != OPARA__VALUE_ACTIVATION || (size_t)v >= im->side_cap) return &val->shape;
    return &im->side[v].shape;
}

static int opara__is_const(opara__imp* im, int32_t v) {
    return v >= 0 && im->g->values[v].kind == OPARA__VALUE_CONST;
}

static void opara__cv_of(opara__imp* im, int32_t v, opara__cv* cv) {
    const opara__value* val = &im->g->values[v];
    int32_t i;
    cv->dtype = val->dtype;
    cv->shape = val->shape;
    cv->data = (const uint8_t*)val->data;
    cv->coef = (size_t)v < im->side_cap ? im->side[v].coef : NULL;
    cv->count = 1;
    for (i = 0; i < val->shape.ndim; ++i) cv->count *= (uint64_t)val->shape.dims[i];
}

static void* opara__imp_alloc(opara__imp* im, uint64_t bytes) {
    if (bytes > (uint64_t)((size_t)-1 - 64)) return NULL;
    return opara__pool_alloc(im->rt, &im->g->pool, (size_t)bytes + 1, 64);
}

static opara_result opara__imp_oom(opara__imp* im) {
    return opara__fail(im->rt, OPARA_ERR_OUT_OF_MEMORY, "node '%s': out of memory", im->node_name);
}

/* A graph insertion failed with the detail set: out of memory stays so; anything else (a name
   defined twice, a rank beyond the limit) is the ONNX model's fault. */
static opara_result opara__onnx_insert_result(opara_result r) {
    return r == OPARA_ERR_OUT_OF_MEMORY ? r : OPARA_ERR_ONNX_INVALID;
}

/* Elements of a shape with known dims; UINT64_MAX when a dim is negative or the product overflows. */
static uint64_t opara__shape_count(const opara__shape* s) {
    uint64_t n = 1;
    int32_t i;
    for (i = 0; i < s->ndim; ++i) {
        if (s->dims[i] < 0 || (s->dims[i] && n > UINT64_MAX / (uint64_t)s->dims[i])) return UINT64_MAX;
        n *= (uint64_t)s->dims[i];
    }
    return n;
}

/* Dims beyond this are treated as unknown by shape inference (keeps all arithmetic in range). */
#define OPARA__DIM_LIMIT (INT64_C(1) << 40)

/* Constants larger than this are not folded (the node is imported as an operator instead). */
#define OPARA__FOLD_MAX_ELEMENTS (UINT64_C(1) << 26)

/* Creates (or reuses an existing undefined) value name as a constant; data is in the graph pool. */
static opara_result opara__imp_const(opara__imp* im, const char* name, opara_dtype dtype, const opara__shape* shape,
                                     const void* data, const int64_t* coef, int copy) {
    int32_t v = opara__graph_find_value(im->g, name);
    opara__imp_side* side;
    opara_result r;
    int has_coef = 0;
    uint64_t i, n = opara__shape_count(shape);
    if (v >= 0) return opara__fail(im->rt, OPARA_ERR_ONNX_INVALID, "tensor '%s' is defined twice", name);
    r = opara__graph_insert_value(im->g, name, dtype, shape, &v);
    if (r != OPARA_OK) return opara__onnx_insert_result(r);
    r = opara__graph_set_const(im->g, v, data, n * opara_dtype_size(dtype), copy);
    if (r != OPARA_OK) return r;
    for (i = 0; coef && i < n; ++i) has_coef |= coef[i] != 0;
    side = opara__side(im, v);
    if (!side) return opara__imp_oom(im);
    side->coef = has_coef ? coef : NULL;
    return OPARA_OK;
}

/* ---- element access --------------------------------------------------------------------------- */

static int opara__dtype_is_float(opara_dtype t) { return t == OPARA_DTYPE_F32 || t == OPARA_DTYPE_F64; }
static int opara__dtype_is_int(opara_dtype t) {
    return t == OPARA_DTYPE_I64 || t == OPARA_DTYPE_I32 || t == OPARA_DTYPE_I8 || t == OPARA_DTYPE_U8 ||
           t == OPARA_DTYPE_BOOL;
}
static int opara__dtype_numeric(opara_dtype t) { return opara__dtype_is_float(t) || opara__dtype_is_int(t); }

static double opara__get_f64(opara_dtype t, const uint8_t* p, uint64_t i) {
    switch (t) {
    case OPARA_DTYPE_F32: { float v; memcpy(&v, p + i * 4, 4); return v; }
    case OPARA_DTYPE_F64: { double v; memcpy(&v, p + i * 8, 8); return v; }
    case OPARA_DTYPE_I64: { int64_t v; memcpy(&v, p + i * 8, 8); return (double)v; }
    case OPARA_DTYPE_I32: { int32_t v; memcpy(&v, p + i * 4, 4); return v; }
    case OPARA_DTYPE_I8: return (double)(int8_t)p[i];
    default: return p[i];
    }
}

static int64_t opara__get_i64(opara_dtype t, const uint8_t* p, uint64_t i) {
    switch (t) {
    case OPARA_DTYPE_I64: { int64_t v; memcpy(&v, p + i * 8, 8); return v; }
    case OPARA_DTYPE_I32: { int32_t v; memcpy(&v, p + i * 4, 4); return v; }
    case OPARA_DTYPE_I8: return (int8_t)p[i];
    case OPARA_DTYPE_U8: case OPARA_DTYPE_BOOL: return p[i];
    default: {
        double d = opara__get_f64(t, p, i);
        if (!(d > -9.2e18 && d < 9.2e18)) return 0;
        return (int64_t)d;
    }
    }
}

static void opara__put_f64(opara_dtype t, uint8_t* p, uint64_t i, double v) {
    switch (t) {
    case OPARA_DTYPE_F32: { float f = (float)v; memcpy(p + i * 4, &f, 4); break; }
    case OPARA_DTYPE_F64: memcpy(p + i * 8, &v, 8); break;
    default: break;
    }
}

static void opara__put_i64(opara_dtype t, uint8_t* p, uint64_t i, int64_t v) {
    switch (t) {
    case OPARA_DTYPE_I64: memcpy(p + i * 8, &v, 8); break;
    case OPARA_DTYPE_I32: { int32_t x = (int32_t)v; memcpy(p + i * 4, &x, 4); break; }
    case OPARA_DTYPE_BOOL: p[i] = (uint8_t)(v != 0); break;
    case OPARA_DTYPE_I8: case OPARA_DTYPE_U8: p[i] = (uint8_t)v; break;
    default: opara__put_f64(t, p, i, (double)v); break;
    }
}

/* Integer values of a 1-D (or scalar) constant with no batch terms; 0 if not so. */
static int opara__cv_ints(const opara__cv* cv, int64_t* out, uint32_t cap, uint32_t* n) {
    uint64_t i;
    if (!opara__dtype_is_int(cv->dtype) || cv->shape.ndim > 1 || cv->count > cap) return 0;
    for (i = 0; i < cv->count; ++i) {
        if (cv->coef && cv->coef[i]) return 0;
        out[i] = opara__get_i64(cv->dtype, cv->data, i);
    }
    *n = (uint32_t)cv->count;
    return 1;
}

static int64_t opara__onnx_axis(int64_t axis, int32_t rank) {
    return axis < 0 ? axis + rank : axis;
}

/* ---- attributes of the ONNX node being imported ------------------------------------------------ */

static const opara__onnx_attr* opara__oattr(const opara__onnx_node* n, const char* name) {
    uint32_t i;
    for (i = 0; i < n->n_attrs; ++i)
        if (strcmp(n->attrs[i].name, name) == 0) return &n->attrs[i];
    return NULL;
}

static int64_t opara__oattr_int(const opara__onnx_node* n, const char* name, int64_t fallback) {
    const opara__onnx_attr* a = opara__oattr(n, name);
    return a && a->has_i ? a->i : fallback;
}

static const int64_t* opara__oattr_ints(const opara__onnx_node* n, const char* name, uint32_t* count) {
    const opara__onnx_attr* a = opara__oattr(n, name);
    *count = a ? a->n_ints : 0;
    return a && (a->n_ints || a->type == OPARA__ONNX_ATTR_INTS) ? a->ints : NULL;
}

/* ---- constant evaluator ----------------------------------------------------------------------- */

static int opara__cv_alloc(opara__imp* im, opara__cv* out, opara_dtype dtype, const opara__shape* shape,
                           int with_coef, uint8_t** data, int64_t** coef) {
    out->dtype = dtype;
    out->shape = *shape;
    out->count = opara__shape_count(shape);
    if (out->count > OPARA__FOLD_MAX_ELEMENTS || !opara_dtype_size(dtype)) return OPARA__NOFOLD;
    *data = (uint8_t*)opara__imp_alloc(im, out->count * opara_dtype_size(dtype));
    *coef = with_coef ? (int64_t*)opara__imp_alloc(im, out->count * 8) : NULL;
    if (!*data || (with_coef && !*coef)) return opara__imp_oom(im);
    if (*coef) memset(*coef, 0, (size_t)out->count * 8);
    out->data = *data;
    out->coef = *coef;
    return OPARA_OK;
}

static int opara__cv_broadcast(const opara__cv* const* in, uint32_t n, opara__shape* out, int64_t (*strides)[OPARA_MAX_DIMS]) {
    const opara__shape* shapes[3];
    uint32_t k;
    for (k = 0; k < n && k < 3; ++k) shapes[k] = &in[k]->shape;
    return n <= 3 && opara__broadcast_shapes(shapes, n, OPARA__SHAPE_STRICT, out, strides);
}

/* Element offset in an input (broadcast strides st) of the output's flat index idx. */
static uint64_t opara__bcast_src(const opara__shape* out, const int64_t* st, uint64_t idx) {
    uint64_t src = 0;
    int32_t d;
    for (d = out->ndim - 1; d >= 0; --d) {
        uint64_t od = (uint64_t)out->dims[d];
        src += (idx % od) * (uint64_t)st[d];
        idx /= od;
    }
    return src;
}

static int64_t opara__wrap_add(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
static int64_t opara__wrap_mul(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }

/* value + k*batch arithmetic; returns 0 when the result is not of that form. */
static int opara__affine(char op, int64_t xa, int64_t ka, int64_t xb, int64_t kb, int64_t* x, int64_t* k) {
    switch (op) {
    case '+': *x = opara__wrap_add(xa, xb); *k = opara__wrap_add(ka, kb); return 1;
    case '-': *x = opara__wrap_add(xa, -xb); *k = opara__wrap_add(ka, -kb); return 1;
    case '*':
        if (ka && kb) return 0;
        *x = opara__wrap_mul(xa, xb);
        *k = opara__wrap_add(opara__wrap_mul(ka, xb), opara__wrap_mul(kb, xa));
        return 1;
    case '/':
        if (kb || xb == 0 || (xb == -1 && (xa == INT64_MIN || ka == INT64_MIN))) return 0;
        if (ka % xb || (ka && xa % xb)) return 0;
        *x = xa / xb;
        *k = ka / xb;
        return 1;
    default: return 0;
    }
}

/* A float32 copy of a constant that the CPU kernels may read (aligned; constants may sit anywhere
   in the file's bytes). */
static float* opara__cv_f32_copy(opara__imp* im, const opara__cv* x) {
    float* f = (float*)opara__calloc(im->rt, (size_t)(x->count ? x->count : 1), sizeof(float));
    if (f && x->count) memcpy(f, x->data, (size_t)x->count * sizeof(float));
    return f;
}

static void opara__cv_tensor(const opara__cv* x, const float* data, opara__cpu_tensor* t) {
    memset(t, 0, sizeof *t);
    t->dtype = OPARA_DTYPE_F32;
    t->ndim = x->shape.ndim;
    memcpy(t->dims, x->shape.dims, sizeof t->dims);
    t->data = (void*)(uintptr_t)data;
}

/* Float32 Add/Sub/Mul/Div/Pow folded by the CPU kernel itself, so that the constant holds the bits a
   session would compute (the kernels compute in float: Pow is powf, x^2 is x*x). */
static int opara__fold_binary_f32(opara__imp* im, opara__op kind, const opara__cv* a, const opara__cv* b,
                                  const opara__shape* shape, int64_t (*st)[OPARA_MAX_DIMS], float* y) {
    opara__node node;
    opara__node_params params;
    opara__cpu_tensor t[3];
    opara__cpu_op op;
    char err[OPARA__DETAIL_MAX];
    float scratch[1];
    float *fa = opara__cv_f32_copy(im, a), *fb = opara__cv_f32_copy(im, b);
    int r = OPARA__NOFOLD;
    memset(&node, 0, sizeof node);
    memset(&params, 0, sizeof params);
    memset(&op, 0, sizeof op);
    node.op = kind, node.n_inputs = 2, node.n_outputs = 1;
    params.resolved = 1;
    memcpy(params.u.broadcast.strides, st, 2 * sizeof st[0]);
    if (fa && fb) {
        opara__cv_tensor(a, fa, &t[0]);
        opara__cv_tensor(b, fb, &t[1]);
        t[2].dtype = OPARA_DTYPE_F32, t[2].ndim = shape->ndim, t[2].data = y;
        memcpy(t[2].dims, shape->dims, sizeof t[2].dims);
        op.node = &node, op.params = &params, op.n_in = 2, op.n_out = 1, op.in = t, op.out = t + 2, op.workers = 1;
        if (opara__cpu_prepare(&op, err, sizeof err) == OPARA_OK &&
            (!op.work_items || op.fn(&op, 0, op.work_items, scratch) == OPARA_OK))
            r = OPARA_OK;
    }
    opara__free(im->rt, fa);
    opara__free(im->rt, fb);
    return r;
}

static int opara__eval_binary(opara__imp* im, char op, const opara__cv* a, const opara__cv* b, opara__cv* out) {
    const opara__cv* in[2];
    opara__shape shape;
    int64_t st[2][OPARA_MAX_DIMS];
    opara_dtype rt;
    uint8_t* data;
    int64_t* coef;
    uint64_t i;
    int r, is_float = opara__dtype_is_float(a->dtype);
    in[0] = a;
    in[1] = b;
    if (!opara__dtype_numeric(a->dtype) || a->dtype != b->dtype || !opara__cv_broadcast(in, 2, &shape, st)) return OPARA__NOFOLD;
    rt = op == '=' ? OPARA_DTYPE_BOOL : a->dtype;
    r = opara__cv_alloc(im, out, rt, &shape, (a->coef || b->coef) && rt == OPARA_DTYPE_I64, &data, &coef);
    if (r != OPARA_OK) return r;
    if (rt == OPARA_DTYPE_F32 && op != '=')
        return opara__fold_binary_f32(im, op == '+' ? OPARA__OP_ADD : op == '-' ? OPARA__OP_SUB : op == '*' ? OPARA__OP_MUL
                                          : op == '/' ? OPARA__OP_DIV : OPARA__OP_POW, a, b, &shape, st, (float*)data);
    for (i = 0; i < out->count; ++i) {
        uint64_t ia = opara__bcast_src(&shape, st[0], i), ib = opara__bcast_src(&shape, st[1], i);
        if (is_float) {
            double x = opara__get_f64(a->dtype, a->data, ia), y = opara__get_f64(b->dtype, b->data, ib), z;
            switch (op) {
            case '+': z = x + y; break;
            case '-': z = x - y; break;
            case '*': z = x * y; break;
            case '/': z = x / y; break;
            case '^': z = pow(x, y); break;
            default: opara__put_i64(rt, data, i, x == y); continue;
            }
            opara__put_f64(rt, data, i, z);
        } else {
            int64_t xa = opara__get_i64(a->dtype, a->data, ia), xb = opara__get_i64(b->dtype, b->data, ib);
            int64_t ka = a->coef ? a->coef[ia] : 0, kb = b->coef ? b->coef[ib] : 0, x, k;
            if (op == '=') {
                if (ka != kb) return OPARA__NOFOLD;
                opara__put_i64(rt, data, i, xa == xb);
                continue;
            }
            if (!opara__affine(op, xa, ka, xb, kb, &x, &k)) return OPARA__NOFOLD;
            opara__put_i64(rt, data, i, x);
            if (coef) coef[i] = k;
            else if (k) return OPARA__NOFOLD;
        }
    }
    return OPARA_OK;
}

static int opara__eval_where(opara__imp* im, const opara__cv* c, const opara__cv* x, const opara__cv* y,
                             opara__cv* out) {
    const opara__cv* in[3];
    opara__shape shape;
    int64_t st[3][OPARA_MAX_DIMS];
    uint8_t* data;
    int64_t* coef;
    uint64_t i;
    size_t es = opara_dtype_size(x->dtype);
    int r;
    in[0] = c, in[1] = x, in[2] = y;
    if (x->dtype != y->dtype || !opara__dtype_is_int(c->dtype) || !es || !opara__cv_broadcast(in, 3, &shape, st))
        return OPARA__NOFOLD;
    r = opara__cv_alloc(im, out, x->dtype, &shape, x->coef || y->coef, &data, &coef);
    if (r != OPARA_OK) return r;
    for (i = 0; i < out->count; ++i) {
        int pick = opara__get_i64(c->dtype, c->data, opara__bcast_src(&shape, st[0], i)) != 0;
        const opara__cv* src = pick ? x : y;
        uint64_t s = opara__bcast_src(&shape, st[pick ? 1 : 2], i);
        memcpy(data + i * es, src->data + s * es, es);
        if (coef) coef[i] = src->coef ? src->coef[s] : 0;
    }
    return OPARA_OK;
}

/* dst[n] = src[base + sum(idx_d * strides_d)] over the box dims, in row-major order. */
static void opara__strided_copy(uint8_t* dst, const uint8_t* src, size_t es, int32_t rank, const int64_t* dims,
                                const int64_t* strides, int64_t base) {
    int64_t idx[OPARA_MAX_DIMS], off = base;
    uint64_t n, total = 1;
    int32_t d;
    for (d = 0; d < rank; ++d) total *= (uint64_t)dims[d], idx[d] = 0;
    for (n = 0; n < total; ++n) {
        memcpy(dst + n * es, src + (size_t)off * es, es);
        for (d = rank - 1; d >= 0; --d) {
            off += strides[d];
            if (++idx[d] < dims[d]) break;
            off -= strides[d] * dims[d];
            idx[d] = 0;
        }
    }
}

static void opara__row_strides(const opara__shape* s, int64_t* strides) {
    int64_t st = 1;
    int32_t d;
    for (d = s->ndim - 1; d >= 0; --d) strides[d] = st, st *= s->dims[d];
}

/* Runs a strided copy of the data and, when present, of the batch coefficients. */
static int opara__eval_strided(opara__imp* im, const opara__cv* x, const opara__shape* out_shape,
                               const int64_t* strides, int64_t base, opara__cv* out) {
    uint8_t* data;
    int64_t* coef;
    size_t es = opara_dtype_size(x->dtype);
    int r = opara__cv_alloc(im, out, x->dtype, out_shape, x->coef != NULL, &data, &coef);
    if (r != OPARA_OK) return r;
    if (!out->count) return OPARA_OK;
    opara__strided_copy(data, x->data, es, out_shape->ndim, out_shape->dims, strides, base);
    if (coef) opara__strided_copy((uint8_t*)coef, (const uint8_t*)x->coef, 8, out_shape->ndim, out_shape->dims, strides, base);
    return OPARA_OK;
}

static int opara__eval_transpose(opara__imp* im, const opara__onnx_node* n, const opara__cv* x, opara__cv* out) {
    int64_t in_strides[OPARA_MAX_DIMS], strides[OPARA_MAX_DIMS];
    opara__shape shape;
    uint32_t count;
    const int64_t* perm = opara__oattr_ints(n, "perm", &count);
    int32_t d;
    if (perm && count != (uint32_t)x->shape.ndim) return OPARA__NOFOLD;
    opara__row_strides(&x->shape, in_strides);
    shape.ndim = x->shape.ndim;
    for (d = 0; d < shape.ndim; ++d) {
        int64_t p = perm ? perm[d] : shape.ndim - 1 - d;
        if (p < 0 || p >= shape.ndim) return OPARA__NOFOLD;
        shape.dims[d] = x->shape.dims[p];
        strides[d] = in_strides[p];
    }
    return opara__eval_strided(im, x, &shape, strides, 0, out);
}

/* Per-axis start/step/length of an ONNX Slice on shape in; 0 when the parameters are invalid. */
static int opara__slice_box(const opara__shape* in, const int64_t* starts, const int64_t* ends, const int64_t* axes,
                            const int64_t* steps, uint32_t k, int64_t* start, int64_t* step, opara__shape* out) {
    uint32_t i;
    int32_t d;
    *out = *in;
    for (d = 0; d < in->ndim; ++d) start[d] = 0, step[d] = 1;
    for (i = 0; i < k; ++i) {
        int64_t axis = axes ? opara__onnx_axis(axes[i], in->ndim) : (int64_t)i;
        int64_t dim, s, e, st = steps ? steps[i] : 1, len;
        if (axis < 0 || axis >= in->ndim || st == 0 || st == INT64_MIN) return 0;
        dim = in->dims[axis];
        if (dim < 0 || dim >= OPARA__DIM_LIMIT) return 0;
        s = starts[i] < -OPARA__DIM_LIMIT ? -OPARA__DIM_LIMIT : starts[i] > OPARA__DIM_LIMIT ? OPARA__DIM_LIMIT : starts[i];
        e = ends[i] < -OPARA__DIM_LIMIT ? -OPARA__DIM_LIMIT : ends[i] > OPARA__DIM_LIMIT ? OPARA__DIM_LIMIT : ends[i];
        s = s < 0 ? s + dim : s;
        e = e < 0 ? e + dim : e;
        if (st > 0) {
            s = OPARA__MAX(0, OPARA__MIN(s, dim));
            e = OPARA__MAX(0, OPARA__MIN(e, dim));
            len = e > s ? (e - s - 1) / st + 1 : 0;
        } else {
            s = OPARA__MAX(-1, OPARA__MIN(s, dim - 1));
            e = OPARA__MAX(-1, OPARA__MIN(e, dim - 1));
            len = s > e ? (s - e - 1) / (-st) + 1 : 0;
        }
        start[axis] = s;
        step[axis] = st;
        out->dims[axis] = len;
    }
    return 1;
}

static int opara__eval_slice(opara__imp* im, const opara__cv* x, const int64_t* starts, const int64_t* ends,
                             const int64_t* axes, const int64_t* steps, uint32_t k, opara__cv* out) {
    int64_t start[OPARA_MAX_DIMS], step[OPARA_MAX_DIMS], in_strides[OPARA_MAX_DIMS], strides[OPARA_MAX_DIMS], base = 0;
    opara__shape shape;
    int32_t d;
    if (!opara__slice_box(&x->shape, starts, ends, axes, steps, k, start, step, &shape)) return OPARA__NOFOLD;
    opara__row_strides(&x->shape, in_strides);
    for (d = 0; d < shape.ndim; ++d) {
        strides[d] = step[d] * in_strides[d];
        if (shape.dims[d]) base += start[d] * in_strides[d];
    }
    return opara__eval_strided(im, x, &shape, strides, base, out);
}

static int opara__eval_gather(opara__imp* im, const opara__cv* x, const opara__cv* idx, int64_t axis, opara__cv* out) {
    opara__shape shape;
    uint8_t* data;
    int64_t* coef;
    uint64_t outer = 1, inner = 1, o, j;
    int64_t dim;
    int32_t d;
    size_t es = opara_dtype_size(x->dtype);
    int r;
    axis = opara__onnx_axis(axis, x->shape.ndim);
    if (axis < 0 || axis >= x->shape.ndim || !opara__dtype_is_int(idx->dtype) || idx->coef ||
        x->shape.ndim + idx->shape.ndim - 1 > OPARA_MAX_DIMS)
        return OPARA__NOFOLD;
    dim = x->shape.dims[axis];
    shape.ndim = 0;
    for (d = 0; d < axis; ++d) shape.dims[shape.ndim++] = x->shape.dims[d], outer *= (uint64_t)x->shape.dims[d];
    for (d = 0; d < idx->shape.ndim; ++d) shape.dims[shape.ndim++] = idx->shape.dims[d];
    for (d = (int32_t)axis + 1; d < x->shape.ndim; ++d) shape.dims[shape.ndim++] = x->shape.dims[d], inner *= (uint64_t)x->shape.dims[d];
    r = opara__cv_alloc(im, out, x->dtype, &shape, x->coef != NULL, &data, &coef);
    if (r != OPARA_OK) return r;
    for (o = 0; o < outer; ++o)
        for (j = 0; j < idx->count; ++j) {
            int64_t k = opara__get_i64(idx->dtype, idx->data, j);
            uint64_t src, dst = (o * idx->count + j) * inner;
            if (k < 0) k += dim;
            if (k < 0 || k >= dim)
                return opara__fail(im->rt, OPARA_ERR_ONNX_INVALID, "node '%s' (Gather): index %lld out of range [0, %lld)",
                                   im->node_name, (long long)opara__get_i64(idx->dtype, idx->data, j), (long long)dim);
            src = (o * (uint64_t)dim + (uint64_t)k) * inner;
            memcpy(data + dst * es, x->data + src * es, (size_t)(inner * es));
            if (coef) memcpy(coef + dst, x->coef + src, (size_t)(inner * 8));
        }
    return OPARA_OK;
}

static int opara__eval_concat(opara__imp* im, const opara__cv* in, uint32_t n, int64_t axis, opara__cv* out) {
    opara__shape shape = in[0].shape;
    uint8_t* data;
    int64_t* coef;
    uint64_t outer = 1, o, pos = 0;
    uint32_t k;
    int32_t d;
    int any_coef = 0, r;
    size_t es = opara_dtype_size(in[0].dtype);
    axis = opara__onnx_axis(axis, shape.ndim);
    if (axis < 0 || axis >= shape.ndim) return OPARA__NOFOLD;
    shape.dims[axis] = 0;
    for (k = 0; k < n; ++k) {
        if (in[k].dtype != in[0].dtype || in[k].shape.ndim != shape.ndim) return OPARA__NOFOLD;
        for (d = 0; d < shape.ndim; ++d)
            if (d != axis && in[k].shape.dims[d] != shape.dims[d]) return OPARA__NOFOLD;
        shape.dims[axis] += in[k].shape.dims[axis];
        any_coef |= in[k].coef != NULL;
    }
    for (d = 0; d < axis; ++d) outer *= (uint64_t)shape.dims[d];
    r = opara__cv_alloc(im, out, in[0].dtype, &shape, any_coef, &data, &coef);
    if (r != OPARA_OK) return r;
    for (o = 0; o < outer; ++o)
        for (k = 0; k < n; ++k) {
            uint64_t block = outer ? in[k].count / outer : 0;
            memcpy(data + pos * es, in[k].data + o * block * es, (size_t)(block * es));
            if (coef && in[k].coef) memcpy(coef + pos, in[k].coef + o * block, (size_t)(block * 8));
            pos += block;
        }
    return OPARA_OK;
}

static int opara__eval_cast(opara__imp* im, const opara__cv* x, int64_t to, opara__cv* out) {
    opara_dtype t = opara__onnx_dtype((int32_t)to);
    uint8_t* data;
    int64_t* coef;
    uint64_t i;
    int r;
    if (!opara__dtype_numeric(t) || !opara__dtype_numeric(x->dtype)) return OPARA__NOFOLD;
    if (x->coef && t != OPARA_DTYPE_I64) return OPARA__NOFOLD;
    r = opara__cv_alloc(im, out, t, &x->shape, x->coef != NULL, &data, &coef);
    if (r != OPARA_OK) return r;
    for (i = 0; i < x->count; ++i) {
        if (opara__dtype_is_float(t)) opara__put_f64(t, data, i, opara__get_f64(x->dtype, x->data, i));
        else if (t == OPARA_DTYPE_BOOL) opara__put_i64(t, data, i, opara__get_f64(x->dtype, x->data, i) != 0);
        else opara__put_i64(t, data, i, opara__get_i64(x->dtype, x->data, i));
    }
    if (coef) memcpy(coef, x->coef, (size_t)x->count * 8);
    return OPARA_OK;
}

/* Same data, new shape (Reshape, Flatten, Squeeze, Unsqueeze). */
static int opara__eval_view(const opara__cv* x, const opara__shape* shape, opara__cv* out) {
    if (opara__shape_count(shape) != x->count) return OPARA__NOFOLD;
    *out = *x;
    out->shape = *shape;
    return OPARA_OK;
}

/* Output shape of an ONNX Reshape with fully known dims; 0 when invalid. */
static int opara__reshape_dims(const opara__shape* in, const int64_t* spec, uint32_t n, int allowzero,
                               opara__shape* out) {
    int64_t known = 1, total = opara__shape_count(in) > (uint64_t)INT64_MAX ? -1 : (int64_t)opara__shape_count(in);
    int32_t infer = -1;
    uint32_t i;
    if (n > OPARA_MAX_DIMS) return 0;
    out->ndim = (int32_t)n;
    for (i = 0; i < n; ++i) {
        int64_t d = spec[i];
        if (d == 0 && !allowzero) {
            if ((int32_t)i >= in->ndim) return 0;
            d = in->dims[i];
        }
        if (d == -1) {
            if (infer >= 0) return 0;
            infer = (int32_t)i;
            d = 1;
        } else if (d < 0 || d >= OPARA__DIM_LIMIT) return 0;
        out->dims[i] = d;
        if (d && known > INT64_MAX / d) return 0;
        known *= d;
    }
    if (total < 0) return 0;
    if (infer >= 0) {
        if (known == 0 || total % known) return 0;
        out->dims[infer] = total / known;
    }
    return opara__shape_count(out) == (uint64_t)total;
}

static int opara__squeeze_shape(const opara__shape* in, const int64_t* axes, uint32_t n, opara__shape* out) {
    int32_t d;
    uint32_t i;
    out->ndim = 0;
    for (d = 0; d < in->ndim; ++d) {
        int drop = 0;
        if (!axes) drop = in->dims[d] == 1;
        for (i = 0; axes && i < n; ++i) drop |= opara__onnx_axis(axes[i], in->ndim) == d;
        if (drop && in->dims[d] != 1 && in->dims[d] != -1) return 0;
        if (!drop) out->dims[out->ndim++] = in->dims[d];
    }
    return 1;
}

static int opara__unsqueeze_shape(const opara__shape* in, const int64_t* axes, uint32_t n, opara__shape* out) {
    int32_t rank = in->ndim + (int32_t)n, d, src = 0;
    uint32_t i;
    if (rank > OPARA_MAX_DIMS) return 0;
    out->ndim = rank;
    for (d = 0; d < rank; ++d) out->dims[d] = -2;
    for (i = 0; i < n; ++i) {
        int64_t a = opara__onnx_axis(axes[i], rank);
        if (a < 0 || a >= rank || out->dims[a] == 1) return 0;
        out->dims[a] = 1;
    }
    for (d = 0; d < rank; ++d)
        if (out->dims[d] == -2) out->dims[d] = in->dims[src++];
    return 1;
}

static int opara__flatten_shape(const opara__shape* in, int64_t axis, opara__shape* out) {
    int64_t a = opara__onnx_axis(axis, in->ndim), outer = 1, inner = 1;
    int32_t d;
    if (a < 0 || a > in->ndim) return 0;
    for (d = 0; d < in->ndim; ++d) {
        int64_t x = in->dims[d];
        int64_t* acc = d < a ? &outer : &inner;
        if (x == OPARA__DIM_BATCH) {
            if (*acc != 1 && *acc != OPARA__DIM_BATCH) *acc = -1;
            else *acc = OPARA__DIM_BATCH;
        } else if (x < 0 || *acc == -1) *acc = -1;
        else if (*acc == OPARA__DIM_BATCH) { if (x != 1) *acc = -1; }
        else if (x >= OPARA__DIM_LIMIT || (x && *acc > OPARA__DIM_LIMIT / x)) *acc = -1;
        else *acc *= x;
    }
    out->ndim = 2;
    out->dims[0] = outer;
    out->dims[1] = inner;
    return 1;
}

static int opara__eval_constant_of_shape(opara__imp* im, const opara__cv* shp, opara__cv* out) {
    const opara__onnx_attr* a = opara__oattr(im->node, "value");
    opara__tensor_data value;
    opara__shape shape;
    uint8_t* data;
    int64_t* coef;
    uint64_t i;
    uint32_t n;
    int r;
    size_t es;
    if (!opara__cv_ints(shp, shape.dims, OPARA_MAX_DIMS, &n)) return OPARA__NOFOLD;
    shape.ndim = (int32_t)n;
    for (i = 0; i < n; ++i)
        if (shape.dims[i] < 0) return OPARA__NOFOLD;
    memset(&value, 0, sizeof value);
    if (a && a->t) {
        r = opara__onnx_tensor_load(im->rt, a->t, NULL, im->node_name, &value);
        if (r != OPARA_OK) return r;
        if (value.count != 1) {
            opara__tensor_data_free(im->rt, &value);
            return opara__fail(im->rt, OPARA_ERR_ONNX_INVALID, "node '%s' (ConstantOfShape): value must have one element",
                               im->node_name);
        }
    }
    r = opara__cv_alloc(im, out, a && a->t ? value.dtype : OPARA_DTYPE_F32, &shape, 0, &data, &coef);
    es = opara_dtype_size(out->dtype);
    for (i = 0; r == OPARA_OK && i < out->count; ++i) {
        if (value.data) memcpy(data + i * es, value.data, es);
        else memset(data + i * es, 0, es);
    }
    opara__tensor_data_free(im->rt, &value);
    return r;
}

static int opara__eval_range(opara__imp* im, const opara__cv* start, const opara__cv* limit, const opara__cv* delta,
                             opara__cv* out) {
    opara__shape shape;
    uint8_t* data;
    int64_t* coef;
    double s, l, d, n;
    uint64_t i;
    int r;
    if (start->count != 1 || limit->count != 1 || delta->count != 1 || start->coef || limit->coef || delta->coef ||
        !opara__dtype_numeric(start->dtype))
        return OPARA__NOFOLD;
    s = opara__get_f64(start->dtype, start->data, 0);
    l = opara__get_f64(limit->dtype, limit->data, 0);
    d = opara__get_f64(delta->dtype, delta->data, 0);
    if (d == 0) return OPARA__NOFOLD;
    n = ceil((l - s) / d);
    if (!(n < 1e9)) return OPARA__NOFOLD;
    shape.ndim = 1;
    shape.dims[0] = n > 0 ? (int64_t)n : 0;
    r = opara__cv_alloc(im, out, start->dtype, &shape, 0, &data, &coef);
    for (i = 0; r == OPARA_OK && i < out->count; ++i) {
        if (opara__dtype_is_float(start->dtype)) opara__put_f64(start->dtype, data, i, s + (double)i * d);
        else
            opara__put_i64(start->dtype, data, i,
                           opara__wrap_add(opara__get_i64(start->dtype, start->data, 0),
                                           opara__wrap_mul((int64_t)i, opara__get_i64(delta->dtype, delta->data, 0))));
    }
    return r;
}

static int opara__eval_sqrt(opara__imp* im, const opara__cv* x, opara__cv* out) {
    uint8_t* data;
    int64_t* coef;
    uint64_t i;
    int r;
    if (!opara__dtype_is_float(x->dtype)) return OPARA__NOFOLD;
    r = opara__cv_alloc(im, out, x->dtype, &x->shape, 0, &data, &coef);
    for (i = 0; r == OPARA_OK && i < x->count; ++i) opara__put_f64(x->dtype, data, i, sqrt(opara__get_f64(x->dtype, x->data, i)));
    return r;
}

/* Shape of an input whose dims are all known or the batch. */
static int opara__eval_shape(opara__imp* im, int32_t v, opara__cv* out) {
    const opara__shape* s = opara__imp_shape(im, v);
    opara__shape shape;
    uint8_t* data;
    int64_t* coef;
    int64_t start = opara__oattr_int(im->node, "start", 0), end = opara__oattr_int(im->node, "end", INT64_MAX), i;
    int r;
    if (s->ndim < 0) return OPARA__NOFOLD;
    start = start < 0 ? OPARA__MAX(0, start + s->ndim) : OPARA__MIN(start, s->ndim);
    end = end < 0 ? OPARA__MAX(0, end + s->ndim) : OPARA__MIN(end, s->ndim);
    for (i = start; i < end; ++i)
        if (s->dims[i] < 0 && s->dims[i] != OPARA__DIM_BATCH) return OPARA__NOFOLD;
    shape.ndim = 1;
    shape.dims[0] = end > start ? end - start : 0;
    r = opara__cv_alloc(im, out, OPARA_DTYPE_I64, &shape, 1, &data, &coef);
    for (i = start; r == OPARA_OK && i < end; ++i) {
        int batch = s->dims[i] == OPARA__DIM_BATCH;
        opara__put_i64(OPARA_DTYPE_I64, data, (uint64_t)(i - start), batch ? 0 : s->dims[i]);
        coef[i - start] = batch;
    }
    return r;
}

/* ---- operator parameters: attribute or constant input ------------------------------------------ */

#define OPARA__PARAM_CAP 64

typedef struct opara__param {
    int present;
    uint32_t n;
    int64_t ints[OPARA__PARAM_CAP];
    float floats[OPARA__PARAM_CAP];
} opara__param;

static const char* opara__input_name(opara__imp* im, uint32_t i) {
    return i < im->node->n_inputs ? im->node->inputs[i] : "";
}

static opara_result opara__not_const(opara__imp* im, uint32_t i, const char* what) {
    return opara__fail(im->rt, OPARA_ERR_UNSUPPORTED_OP,
                       "node '%s' (%s): input %u '%s' (%s) must be a constant (it is computed at run time)",
                       im->node_name, im->node->op_type, i, opara__input_name(im, i), what);
}

/* Reads integer parameter `what` from attribute attr (when the node has it) or from constant
   input i. allow_batch: batch terms become OPARA__DIM_BATCH (exactly one batch) or -1. */
static opara_result opara__ints_param(opara__imp* im, const int32_t* in, uint32_t n_in, uint32_t i, const char* attr,
                                      int allow_batch, opara__param* p) {
    const opara__onnx_attr* a = attr ? opara__oattr(im->node, attr) : NULL;
    opara__cv cv;
    uint64_t k;
    int minus_one = 0;
    memset(p, 0, sizeof *p);
    if (a) {
        if (a->n_ints > OPARA__PARAM_CAP) goto too_many;
        p->present = 1;
        p->n = a->n_ints;
        if (a->n_ints) memcpy(p->ints, a->ints, a->n_ints * sizeof(int64_t));
        else if (a->has_i) p->n = 1, p->ints[0] = a->i;
        return OPARA_OK;
    }
    if (i >= n_in || in[i] < 0) return OPARA_OK;
    if (!opara__is_const(im, in[i])) return opara__not_const(im, i, attr ? attr : "parameter");
    opara__cv_of(im, in[i], &cv);
    if (cv.count > OPARA__PARAM_CAP) goto too_many;
    if (!opara__dtype_is_int(cv.dtype) || cv.shape.ndim > 1)
        return opara__fail(im->rt, OPARA_ERR_ONNX_INVALID, "node '%s' (%s): input %u must be a 1-D integer tensor",
                           im->node_name, im->node->op_type, i);
    p->present = 1;
    p->n = (uint32_t)cv.count;
    for (k = 0; k < cv.count; ++k) {
        int64_t x = opara__get_i64(cv.dtype, cv.data, k), c = cv.coef ? cv.coef[k] : 0;
        if (c && !allow_batch) return opara__not_const(im, i, "depends on the batch size");
        if (c == 1 && x == 0) x = OPARA__DIM_BATCH;
        else if (c) x = -1, minus_one++;
        else if (x == -1) minus_one++;
        p->ints[k] = x;
    }
    if (minus_one > 1)
        return opara__fail(im->rt, OPARA_ERR_UNSUPPORTED_OP,
                           "node '%s' (%s): the target shape has %d unknown dims (only one -1 is allowed)",
                           im->node_name, im->node->op_type, minus_one);
    return OPARA_OK;
too_many:
    return opara__fail(im->rt, OPARA_ERR_LIMIT_EXCEEDED, "node '%s' (%s): more than %d values in '%s'", im->node_name,
                       im->node->op_type, OPARA__PARAM_CAP, attr ? attr : "parameter");
}

static opara_result opara__floats_param(opara__imp* im, const int32_t* in, uint32_t n_in, uint32_t i,
                                        opara__param* p) {
    opara__cv cv;
    uint64_t k;
    memset(p, 0, sizeof *p);
    if (i >= n_in || in[i] < 0) return OPARA_OK;
    if (!opara__is_const(im, in[i])) return opara__not_const(im, i, "float parameter");
    opara__cv_of(im, in[i], &cv);
    if (cv.count > OPARA__PARAM_CAP || !opara__dtype_numeric(cv.dtype))
        return opara__fail(im->rt, OPARA_ERR_ONNX_INVALID, "node '%s' (%s): input %u must be a small numeric tensor",
                           im->node_name, im->node->op_type, i);
    p->present = 1;
    p->n = (uint32_t)cv.count;
    for (k = 0; k < cv.count; ++k) p->floats[k] = (float)opara__get_f64(cv.dtype, cv.data, k);
    return OPARA_OK;
}

static int opara__op_is(const opara__onnx_node* n, const char* op) { return strcmp(n->op_type, op) == 0; }

/* Evaluates the node when its inputs allow it. OPARA_OK with *out filled, OPARA__NOFOLD, or an error. */
static int opara__try_fold(opara__imp* im, const int32_t* in, uint32_t n_in, opara__cv* out) {
    const opara__onnx_node* n = im->node;
    opara__cv cv[4];
    uint32_t i;
    int r;
    if (opara__op_is(n, "Shape")) return n_in >= 1 && in[0] >= 0 ? opara__eval_shape(im, in[0], out) : OPARA__NOFOLD;
    if (n_in == 0 || in[0] < 0) return OPARA__NOFOLD;
    for (i = 0; i < n_in; ++i)
        if (in[i] >= 0 && !opara__is_const(im, in[i])) return OPARA__NOFOLD;
    if (opara__op_is(n, "Concat")) {
        opara__cv* all = (opara__cv*)opara__calloc(im->rt, n_in, sizeof(opara__cv));
        if (!all) return opara__imp_oom(im);
        for (i = 0; i < n_in; ++i) {
            if (in[i] < 0) break;
            opara__cv_of(im, in[i], &all[i]);
        }
        r = i == n_in ? opara__eval_concat(im, all, n_in, opara__oattr_int(n, "axis", 0), out) : OPARA__NOFOLD;
        opara__free(im->rt, all);
        return r;
    }
    for (i = 0; i < 4; ++i) {
        if (i < n_in && in[i] >= 0) opara__cv_of(im, in[i], &cv[i]);
        else memset(&cv[i], 0, sizeof cv[i]);
    }
    if (n_in >= 2 && in[1] >= 0) {
        static const char* const ops[] = {"Add", "Sub", "Mul", "Div", "Pow", "Equal"};
        static const char codes[] = "+-*/^=";
        for (i = 0; i < 6; ++i)
            if (opara__op_is(n, ops[i])) return opara__eval_binary(im, codes[i], &cv[0], &cv[1], out);
    }
    if (opara__op_is(n, "Where") && n_in == 3 && in[1] >= 0 && in[2] >= 0)
        return opara__eval_where(im, &cv[0], &cv[1], &cv[2], out);
    if (opara__op_is(n, "Transpose")) return opara__eval_transpose(im, n, &cv[0], out);
    if (opara__op_is(n, "Cast")) return opara__eval_cast(im, &cv[0], opara__oattr_int(n, "to", 0), out);
    if (opara__op_is(n, "Sqrt")) return opara__eval_sqrt(im, &cv[0], out);
    if (opara__op_is(n, "ConstantOfShape")) return opara__eval_constant_of_shape(im, &cv[0], out);
    if (opara__op_is(n, "Range") && n_in == 3 && in[1] >= 0 && in[2] >= 0)
        return opara__eval_range(im, &cv[0], &cv[1], &cv[2], out);
    if (opara__op_is(n, "Gather") && n_in >= 2 && in[1] >= 0)
        return opara__eval_gather(im, &cv[0], &cv[1], opara__oattr_int(n, "axis", 0), out);
    if (opara__op_is(n, "Slice")) {
        opara__param p[4];
        static const char* const names[4] = {"starts", "ends", "axes", "steps"};
        for (i = 0; i < 4; ++i) {
            r = im->opset < 10 ? opara__ints_param(im, in, 0, 0, i < 3 ? names[i] : NULL, 0, &p[i])
                               : opara__ints_param(im, in, n_in, i + 1, NULL, 0, &p[i]);
            if (r != OPARA_OK) return r;
        }
        if (!p[0].present || !p[1].present || p[0].n != p[1].n || (p[2].present && p[2].n != p[0].n) ||
            (p[3].present && p[3].n != p[0].n))
            return OPARA__NOFOLD;
        return opara__eval_slice(im, &cv[0], p[0].ints, p[1].ints, p[2].present ? p[2].ints : NULL,
                                 p[3].present ? p[3].ints : NULL, p[0].n, out);
    }
    {
        opara__shape shape;
        opara__param p;
        if (opara__op_is(n, "Reshape")) {
            r = opara__ints_param(im, in, n_in, 1, NULL, 0, &p);
            if (r != OPARA_OK) return r;
            if (!p.present || !opara__reshape_dims(&cv[0].shape, p.ints, p.n, (int)opara__oattr_int(n, "allowzero", 0), &shape))
                return OPARA__NOFOLD;
            return opara__eval_view(&cv[0], &shape, out);
        }
        if (opara__op_is(n, "Flatten")) {
            if (!opara__flatten_shape(&cv[0].shape, opara__oattr_int(n, "axis", 1), &shape)) return OPARA__NOFOLD;
            return opara__eval_view(&cv[0], &shape, out);
        }
        if (opara__op_is(n, "Squeeze") || opara__op_is(n, "Unsqueeze")) {
            int squeeze = opara__op_is(n, "Squeeze");
            r = opara__ints_param(im, in, n_in, 1, "axes", 0, &p);
            if (r != OPARA_OK) return r;
            if (squeeze ? !opara__squeeze_shape(&cv[0].shape, p.present ? p.ints : NULL, p.n, &shape)
                        : !p.present || !opara__unsqueeze_shape(&cv[0].shape, p.ints, p.n, &shape))
                return OPARA__NOFOLD;
            return opara__eval_view(&cv[0], &shape, out);
        }
    }
    return OPARA__NOFOLD;
}

/* ---- shape inference while importing (only so that Shape nodes can fold) ---------------------- */

/* Output shapes of an imported node from the shape engine in tolerant mode (unknown dims and the
   symbolic batch propagate), and output dtypes: input 0's, Where's input 1, Cast's 'to'. What the
   engine cannot infer stays unknown; only running out of memory is a failure. */
static opara_result opara__infer_node(opara__imp* im, int32_t node) {
    const opara__node* n = &im->g->nodes[node];
    const opara__shape** in;
    opara__shape** out;
    opara_dtype dt;
    uint32_t k;
    if (n->n_inputs == 0 || n->inputs[0] < 0) return OPARA_OK;
    for (k = 0; k < n->n_outputs; ++k) /* grow the side table first: the inputs may point into it */
        if (!opara__side(im, n->outputs[k])) return opara__imp_oom(im);
    in = (const opara__shape**)opara__calloc(im->rt, (size_t)n->n_inputs + n->n_outputs, sizeof *in);
    if (!in) return opara__imp_oom(im);
    out = (opara__shape**)(void*)(in + n->n_inputs);
    for (k = 0; k < n->n_inputs; ++k) in[k] = n->inputs[k] >= 0 ? opara__imp_shape(im, n->inputs[k]) : NULL;
    for (k = 0; k < n->n_outputs; ++k) out[k] = &opara__side(im, n->outputs[k])->shape;
    (void)opara__infer_node_shapes(im->rt, im->g, (uint32_t)node, OPARA__SHAPE_TOLERANT, OPARA__DIM_BATCH, in, out, NULL);
    opara__free(im->rt, (void*)in);
    dt = im->g->values[n->inputs[0]].dtype;
    if (n->op == OPARA__OP_WHERE && n->n_inputs > 1 && n->inputs[1] >= 0) dt = im->g->values[n->inputs[1]].dtype;
    if (n->op == OPARA__OP_CAST) dt = opara__onnx_dtype((int32_t)opara__attr_int(n, "to", 1));
    for (k = 0; k < n->n_outputs; ++k) im->g->values[n->outputs[k]].dtype = dt;
    return OPARA_OK;
}

/* ---- importing one node ----------------------------------------------------------------------- */

static opara_result opara__copy_onnx_attrs(opara__imp* im, int32_t node) {
    const opara__onnx_node* n = im->node;
    uint32_t i;
    opara_result r = OPARA_OK;
    for (i = 0; i < n->n_attrs && r == OPARA_OK; ++i) {
        const opara__onnx_attr* a = &n->attrs[i];
        int32_t type = a->type;
        if (!type) /* IR < 2 files leave the type out */
            type = a->has_f ? OPARA__ONNX_ATTR_FLOAT : a->has_i ? OPARA__ONNX_ATTR_INT : a->has_s ? OPARA__ONNX_ATTR_STRING :
                   a->n_floats ? OPARA__ONNX_ATTR_FLOATS : a->n_ints ? OPARA__ONNX_ATTR_INTS : 0;
        switch (type) {
        case OPARA__ONNX_ATTR_FLOAT: r = opara__node_set_float(im->g, node, a->name, a->f); break;
        case OPARA__ONNX_ATTR_INT: r = opara__node_set_int(im->g, node, a->name, a->i); break;
        case OPARA__ONNX_ATTR_FLOATS: r = opara__node_set_floats(im->g, node, a->name, a->floats, a->n_floats); break;
        case OPARA__ONNX_ATTR_INTS: r = opara__node_set_ints(im->g, node, a->name, a->ints, a->n_ints); break;
        case OPARA__ONNX_ATTR_STRING: {
            char buf[256];
            if (a->s.size >= sizeof buf)
                return opara__fail(im->rt, OPARA_ERR_ONNX_INVALID, "node '%s': attribute '%s' is too long",
                                   im->node_name, a->name);
            if (a->s.size) memcpy(buf, a->s.data, a->s.size);
            buf[a->s.size] = 0;
            r = opara__node_set_string(im->g, node, a->name, buf);
            break;
        }
        default: break; /* tensors, graphs, string lists: no IR operator uses them */
        }
    }
    return r;
}

static opara_result opara__set_ints_param(opara__imp* im, int32_t node, const char* name, const opara__param* p) {
    return p->present ? opara__node_set_ints(im->g, node, name, p->ints, p->n) : OPARA_OK;
}

static opara_result opara__canon_slice(opara__imp* im, int32_t node, const int32_t* in, uint32_t n_in) {
    static const char* const names[4] = {"starts", "ends", "axes", "steps"};
    opara__param p[4];
    opara_result r = OPARA_OK;
    uint32_t i;
    for (i = 0; i < 4 && r == OPARA_OK; ++i)
        r = im->opset < 10 ? opara__ints_param(im, in, 0, 0, i < 3 ? names[i] : NULL, 0, &p[i])
                           : opara__ints_param(im, in, n_in, i + 1, NULL, 0, &p[i]);
    if (r != OPARA_OK) return r;
    if (!p[0].present || !p[1].present || p[0].n != p[1].n || (p[2].present && p[2].n != p[0].n) ||
        (p[3].present && p[3].n != p[0].n))
        return opara__fail(im->rt, OPARA_ERR_ONNX_INVALID, "node '%s' (Slice): starts/ends/axes/steps disagree",
                           im->node_name);
    for (i = 0; i < p[0].n; ++i) {
        if (!p[2].present) p[2].ints[i] = (int64_t)i;
        if (!p[3].present) p[3].ints[i] = 1;
    }
    p[2].present = p[3].present = 1;
    p[2].n = p[3].n = p[0].n;
    for (i = 0; i < 4 && r == OPARA_OK; ++i) r = opara__set_ints_param(im, node, names[i], &p[i]);
    return r;
}

static opara_result opara__canon_resize(opara__imp* im, int32_t node, const int32_t* in, uint32_t n_in) {
    opara__param scales, sizes, roi;
    opara_result r;
    uint32_t si = im->opset < 11 ? 1 : 2;
    r = opara__floats_param(im, in, n_in, si, &scales);
    if (r == OPARA_OK && im->opset >= 11) r = opara__ints_param(im, in, n_in, 3, NULL, 0, &sizes);
    else memset(&sizes, 0, sizeof sizes);
    if (r == OPARA_OK && im->opset >= 11 &&
        strcmp(opara__attr_string(&im->g->nodes[node], "coordinate_transformation_mode", ""), "tf_crop_and_resize") == 0)
        r = opara__floats_param(im, in, n_in, 1, &roi);
    else memset(&roi, 0, sizeof roi);
    if (r != OPARA_OK) return r;
    if (scales.present && scales.n) r = opara__node_set_floats(im->g, node, "scales", scales.floats, scales.n);
    if (r == OPARA_OK && sizes.present && sizes.n) r = opara__node_set_ints(im->g, node, "sizes", sizes.ints, sizes.n);
    if (r == OPARA_OK && roi.present && roi.n) r = opara__node_set_floats(im->g, node, "roi", roi.floats, roi.n);
    if (r == OPARA_OK && !(scales.present && scales.n) && !(sizes.present && sizes.n))
        return opara__fail(im->rt, OPARA_ERR_ONNX_INVALID, "node '%s' (Resize): neither scales nor sizes given",
                           im->node_name);
    return r;
}

static opara_result opara__canon_clip(opara__imp* im, int32_t node, const int32_t* in, uint32_t n_in) {
    opara__param lo, hi;
    opara_result r;
    if (im->opset < 11) return OPARA_OK; /* min/max are attributes already */
    r = opara__floats_param(im, in, n_in, 1, &lo);
    if (r == OPARA_OK) r = opara__floats_param(im, in, n_in, 2, &hi);
    if (r == OPARA_OK && lo.present && lo.n == 1) r = opara__node_set_float(im->g, node, "min", lo.floats[0]);
    if (r == OPARA_OK && hi.present && hi.n == 1) r = opara__node_set_float(im->g, node, "max", hi.floats[0]);
    return r;
}

static opara_result opara__canon_pad(opara__imp* im, int32_t node, const int32_t* in, uint32_t n_in) {
    opara__param pads, value;
    opara_result r;
    if (im->opset < 11) {
        uint32_t n;
        if (!opara__oattr_ints(im->node, "pads", &n) && opara__oattr(im->node, "paddings")) {
            const int64_t* p = opara__oattr_ints(im->node, "paddings", &n);
            return opara__node_set_ints(im->g, node, "pads", p, n);
        }
        return OPARA_OK;
    }
    r = opara__ints_param(im, in, n_in, 1, NULL, 0, &pads);
    if (r == OPARA_OK) r = opara__floats_param(im, in, n_in, 2, &value);
    if (r == OPARA_OK) r = opara__set_ints_param(im, node, "pads", &pads);
    if (r == OPARA_OK && value.present && value.n == 1) r = opara__node_set_float(im->g, node, "value", value.floats[0]);
    return r;
}

static opara_result opara__canon_softmax(opara__imp* im, int32_t node, const int32_t* in) {
    const opara__shape* x = opara__imp_shape(im, in[0]);
    int64_t axis = opara__oattr_int(im->node, "axis", im->opset < 13 ? 1 : -1);
    if (im->opset < 13 && x->ndim >= 0 && opara__onnx_axis(axis, x->ndim) != x->ndim - 1)
        return opara__fail(im->rt, OPARA_ERR_UNSUPPORTED_OP,
                           "node '%s' (Softmax, opset %lld): axis %lld of a rank-%d input flattens the trailing dims; "
                           "only the last axis is supported before opset 13",
                           im->node_name, (long long)im->opset, (long long)axis, (int)x->ndim);
    return opara__node_set_int(im->g, node, "axis", axis);
}

/* Moves constant inputs into canonical attributes and fills defaults that depend on the opset. */
static opara_result opara__canonicalize(opara__imp* im, opara__op op, int32_t node, const int32_t* in, uint32_t n_in) {
    opara__param p;
    opara_result r = OPARA_OK;
    switch (op) {
    case OPARA__OP_SPLIT:
        r = opara__ints_param(im, in, n_in, 1, "split", 0, &p);
        if (r == OPARA_OK) r = opara__set_ints_param(im, node, "split", &p);
        break;
    case OPARA__OP_SQUEEZE: case OPARA__OP_UNSQUEEZE: case OPARA__OP_REDUCE_MEAN:
        r = opara__ints_param(im, in, n_in, 1, "axes", 0, &p);
        if (r == OPARA_OK) r = opara__set_ints_param(im, node, "axes", &p);
        if (r == OPARA_OK && op == OPARA__OP_UNSQUEEZE && !p.present)
            r = opara__fail(im->rt, OPARA_ERR_ONNX_INVALID, "node '%s' (Unsqueeze): no axes", im->node_name);
        break;
    case OPARA__OP_RESHAPE: case OPARA__OP_EXPAND:
        r = opara__ints_param(im, in, n_in, 1, "shape", 1, &p);
        if (r == OPARA_OK && !p.present)
            r = opara__fail(im->rt, OPARA_ERR_ONNX_INVALID, "node '%s': no target shape", im->node_name);
        if (r == OPARA_OK) r = opara__set_ints_param(im, node, "shape", &p);
        break;
    case OPARA__OP_SLICE: r = opara__canon_slice(im, node, in, n_in); break;
    case OPARA__OP_RESIZE: r = opara__canon_resize(im, node, in, n_in); break;
    case OPARA__OP_CLIP: r = opara__canon_clip(im, node, in, n_in); break;
    case OPARA__OP_PAD: r = opara__canon_pad(im, node, in, n_in); break;
    case OPARA__OP_SOFTMAX: r = opara__canon_softmax(im, node, in); break;
    case OPARA__OP_CONV: case OPARA__OP_CONV_TRANSPOSE: case OPARA__OP_MAX_POOL: case OPARA__OP_AVERAGE_POOL:
    case OPARA__OP_GLOBAL_AVERAGE_POOL: case OPARA__OP_BATCH_NORM: case OPARA__OP_RELU: case OPARA__OP_LEAKY_RELU:
    case OPARA__OP_SIGMOID: case OPARA__OP_TANH: case OPARA__OP_HARD_SIGMOID: case OPARA__OP_HARD_SWISH:
    case OPARA__OP_ADD: case OPARA__OP_SUB: case OPARA__OP_MUL: case OPARA__OP_DIV: case OPARA__OP_POW:
    case OPARA__OP_SQRT: case OPARA__OP_ERF: case OPARA__OP_GELU: case OPARA__OP_CONCAT: case OPARA__OP_GATHER:
    case OPARA__OP_FLATTEN: case OPARA__OP_TRANSPOSE: case OPARA__OP_GEMM: case OPARA__OP_MATMUL:
    case OPARA__OP_LAYER_NORM: case OPARA__OP_WHERE: case OPARA__OP_CAST: case OPARA__OP_COUNT:
        break; /* attributes as ONNX has them */
    }
    return r;
}

static opara_result opara__emit_node(opara__imp* im, opara__op op, const int32_t* in, uint32_t n_in) {
    const opara__onnx_node* n = im->node;
    uint32_t n_out = n->n_outputs, kept = opara__op_info_of(op)->kept_inputs, i;
    int32_t outs[16], node;
    opara_result r;
    while (n_out > 0 && !n->outputs[n_out - 1][0]) --n_out;
    if (kept == 0 || kept > n_in) kept = n_in; /* the rest became attributes (opara__canonicalize) */
    while (kept > 0 && in[kept - 1] < 0) --kept;
    if (n_out == 0 || n_out > 16)
        return opara__fail(im->rt, OPARA_ERR_ONNX_INVALID, "node '%s' (%s): %u outputs", im->node_name, n->op_type, n_out);
    for (i = 0; i < n_out; ++i) {
        if (!n->outputs[i][0])
            return opara__fail(im->rt, OPARA_ERR_UNSUPPORTED_OP, "node '%s' (%s): omitted output %u is not supported",
                               im->node_name, n->op_type, i);
        if (opara__graph_find_value(im->g, n->outputs[i]) >= 0)
            return opara__fail(im->rt, OPARA_ERR_ONNX_INVALID, "node '%s': tensor '%s' is defined twice", im->node_name,
                               n->outputs[i]);
        r = opara__graph_insert_value(im->g, n->outputs[i], OPARA_DTYPE_UNDEFINED, NULL, &outs[i]);
        if (r != OPARA_OK) return opara__onnx_insert_result(r);
    }
    r = opara__graph_insert_node(im->g, op, im->node_name, kept, in, n_out, outs, &node);
    if (r != OPARA_OK) return opara__onnx_insert_result(r);
    r = opara__copy_onnx_attrs(im, node);
    if (r == OPARA_OK) r = opara__canonicalize(im, op, node, in, n_in);
    if (r == OPARA_OK) r = opara__infer_node(im, node);
    return r;
}

static opara_result opara__import_constant(opara__imp* im) {
    const opara__onnx_node* n = im->node;
    const opara__onnx_attr* a;
    opara__shape shape;
    const char* out = n->n_outputs ? n->outputs[0] : "";
    if (!out[0]) return opara__fail(im->rt, OPARA_ERR_ONNX_INVALID, "node '%s' (Constant): no output", im->node_name);
    if ((a = opara__oattr(n, "value")) != NULL && a->t) {
        opara__tensor_data t;
        opara_result r = opara__onnx_tensor_load(im->rt, a->t, im->base_dir, im->node_name, &t);
        if (r != OPARA_OK) return r;
        r = opara__imp_const(im, out, t.dtype, &t.shape, t.data, NULL, 1);
        opara__tensor_data_free(im->rt, &t);
        return r;
    }
    shape.ndim = 0;
    if ((a = opara__oattr(n, "value_float")) != NULL)
        return opara__imp_const(im, out, OPARA_DTYPE_F32, &shape, &a->f, NULL, 1);
    if ((a = opara__oattr(n, "value_int")) != NULL)
        return opara__imp_const(im, out, OPARA_DTYPE_I64, &shape, &a->i, NULL, 1);
    shape.ndim = 1;
    if ((a = opara__oattr(n, "value_floats")) != NULL) {
        shape.dims[0] = a->n_floats;
        return opara__imp_const(im, out, OPARA_DTYPE_F32, &shape, a->floats, NULL, 1);
    }
    if ((a = opara__oattr(n, "value_ints")) != NULL) {
        shape.dims[0] = a->n_ints;
        return opara__imp_const(im, out, OPARA_DTYPE_I64, &shape, a->ints, NULL, 1);
    }
    return opara__fail(im->rt, OPARA_ERR_UNSUPPORTED_OP, "node '%s' (Constant): only value, value_float(s) and "
                       "value_int(s) are supported", im->node_name);
}

static opara_result opara__import_alias(opara__imp* im, int32_t src) {
    const char* out = im->node->n_outputs ? im->node->outputs[0] : "";
    int32_t v;
    opara__imp_side* side;
    opara_result r;
    if (!out[0] || src < 0) return opara__fail(im->rt, OPARA_ERR_ONNX_INVALID, "node '%s' (%s): missing input or output",
                                               im->node_name, im->node->op_type);
    if (opara__graph_find_value(im->g, out) >= 0)
        return opara__fail(im->rt, OPARA_ERR_ONNX_INVALID, "node '%s': tensor '%s' is defined twice", im->node_name, out);
    r = opara__graph_insert_value(im->g, out, im->g->values[src].dtype, NULL, &v);
    if (r != OPARA_OK) return opara__onnx_insert_result(r);
    if (!(side = opara__side(im, v))) return opara__imp_oom(im);
    side->alias = src;
    return OPARA_OK;
}

static opara_result opara__import_node(opara__imp* im, const opara__onnx_node* n, int32_t* in) {
    opara__op op = opara__op_from_name(n->op_type);
    opara__cv folded;
    uint32_t i;
    int r;
    im->node = n;
    im->node_name = n->name[0] ? n->name : n->n_outputs ? n->outputs[0] : n->op_type;
    for (i = 0; i < n->n_inputs; ++i) in[i] = n->inputs[i][0] ? opara__imp_find(im, n->inputs[i]) : -1;
    if (opara__op_is(n, "Constant")) return opara__import_constant(im);
    if (opara__op_is(n, "Dropout") && n->n_inputs >= 3 && in[2] >= 0) {
        opara__cv mode;
        if (opara__is_const(im, in[2])) opara__cv_of(im, in[2], &mode);
        if (!opara__is_const(im, in[2]) || mode.count != 1 || opara__get_i64(mode.dtype, mode.data, 0) != 0)
            return opara__fail(im->rt, OPARA_ERR_UNSUPPORTED_OP, "node '%s' (Dropout): training mode is not supported",
                               im->node_name);
    }
    if (opara__op_is(n, "Identity") || opara__op_is(n, "Dropout"))
        return opara__import_alias(im, n->n_inputs ? in[0] : -1);
    r = opara__try_fold(im, in, n->n_inputs, &folded);
    if (r == OPARA_OK) {
        if (!n->n_outputs || !n->outputs[0][0])
            return opara__fail(im->rt, OPARA_ERR_ONNX_INVALID, "node '%s': no output", im->node_name);
        return opara__imp_const(im, n->outputs[0], folded.dtype, &folded.shape, folded.data, folded.coef, 0);
    }
    if (r != OPARA__NOFOLD) return (opara_result)r;
    if (op == OPARA__OP_COUNT)
        return opara__fail(im->rt, OPARA_ERR_UNSUPPORTED_OP,
                           "node '%s' (%s): only supported when it can be evaluated at import time (constant inputs%s)",
                           im->node_name, n->op_type, opara__op_is(n, "Shape") ? ", or an input of known shape" : "");
    if (n->n_inputs == 0 || in[0] < 0)
        return opara__fail(im->rt, OPARA_ERR_ONNX_INVALID, "node '%s' (%s): missing first input", im->node_name,
                           n->op_type);
    return opara__emit_node(im, op, in, n->n_inputs);
}

/* ---- unsupported operators: one error listing them all ---------------------------------------- */

/* An IR operator whose table row is newer than the model's default-domain opset (0: none declared). */
static int opara__op_too_new(opara__op op, int64_t opset) {
    return op != OPARA__OP_COUNT && opset > 0 && opset < opara__op_info_of(op)->since;
}

static int opara__node_supported(const opara__onnx_node* n, int64_t opset) {
    static const char* const fold_only[] = {"Constant", "Shape", "Identity", "Dropout", "ConstantOfShape", "Range",
                                            "Equal"};
    opara__op op = opara__op_from_name(n->op_type);
    const char* domain = strcmp(n->domain, "ai.onnx") == 0 ? "" : n->domain; /* the table's "" */
    uint32_t i, extra_outputs = 0;
    if (strcmp(domain, op != OPARA__OP_COUNT ? opara__op_info_of(op)->domain : "") != 0) return 0;
    for (i = 1; i < n->n_outputs; ++i) extra_outputs += n->outputs[i][0] != 0;
    if ((op == OPARA__OP_MAX_POOL || op == OPARA__OP_BATCH_NORM || strcmp(n->op_type, "Dropout") == 0) && extra_outputs)
        return 0;
    if (op == OPARA__OP_BATCH_NORM && opara__oattr_int(n, "training_mode", 0)) return 0;
    if (op != OPARA__OP_COUNT) return !opara__op_too_new(op, opset);
    for (i = 0; i < OPARA__ARRAY_COUNT(fold_only); ++i)
        if (strcmp(n->op_type, fold_only[i]) == 0) return 1;
    return 0;
}

static void opara__unsupported_label(const opara__onnx_node* n, int64_t opset, char* buf, size_t cap) {
    opara__op op = opara__op_from_name(n->op_type);
    const char* what = op == OPARA__OP_BATCH_NORM ? " (training mode)" : op == OPARA__OP_MAX_POOL ? " (with Indices)" :
                       strcmp(n->op_type, "Dropout") == 0 ? " (with mask)" : "";
    if (n->domain[0] && strcmp(n->domain, "ai.onnx") != 0) opara__format(buf, cap, "%s.%s", n->domain, n->op_type);
    else if (opara__op_too_new(op, opset))
        opara__format(buf, cap, "%s (opset %d+, the model's is %lld)", n->op_type, (int)opara__op_info_of(op)->since,
                      (long long)opset);
    else opara__format(buf, cap, "%s%s", n->op_type, what);
}

static opara_result opara__check_ops(opara_runtime* rt, const opara__onnx_graph* g, int64_t opset) {
    char msg[OPARA__DETAIL_MAX], label[128], other[128];
    uint32_t i, j, kinds = 0, total = 0;
    size_t len;
    for (i = 0; i < g->n_nodes; ++i)
        if (!opara__node_supported(&g->nodes[i], opset)) total++;
    if (!total) return OPARA_OK;
    len = opara__format(msg, sizeof msg, "%u node%s use%s unsupported operators:", total, total == 1 ? "" : "s",
                        total == 1 ? "s" : "");
    for (i = 0; i < g->n_nodes; ++i) {
        const opara__onnx_node* n = &g->nodes[i];
        uint32_t count = 0, seen = 0;
        if (opara__node_supported(n, opset)) continue;
        opara__unsupported_label(n, opset, label, sizeof label);
        for (j = 0; j < g->n_nodes; ++j) {
            if (opara__node_supported(&g->nodes[j], opset)) continue;
            opara__unsupported_label(&g->nodes[j], opset, other, sizeof other);
            if (strcmp(label, other) != 0) continue;
            if (j < i) seen = 1;
            count++;
        }
        if (seen) continue;
        kinds++;
        len += opara__format(msg + len, sizeof msg - len, "%s %s x%u (first: node '%s')", kinds > 1 ? "," : "", label,
                             count, n->name[0] ? n->name : n->n_outputs ? n->outputs[0] : "");
    }
    return opara__fail(rt, OPARA_ERR_UNSUPPORTED_OP, "%s", msg);
}

/* ---- graph inputs ----------------------------------------------------------------------------- */

/* Finds "name=d0,d1,..." for input name in the options and parses it into shape. 1 found, 0 not, <0 error. */
static int opara__override_shape(opara__imp* im, const char* name, opara__shape* shape) {
    uint32_t i;
    size_t len = strlen(name);
    if (!im->opt) return 0;
    for (i = 0; i < im->opt->n_input_shapes; ++i) {
        const char* spec = im->opt->input_shapes[i];
        const char* p;
        if (!spec || strncmp(spec, name, len) != 0 || spec[len] != '=') continue;
        shape->ndim = 0;
        for (p = spec + len + 1; *p;) {
            char* end = NULL;
            long long v;
            if (shape->ndim == OPARA_MAX_DIMS) goto bad;
            if (*p == 'N' || *p == '?') {
                v = OPARA__DIM_BATCH;
                end = (char*)(p + 1);
            } else {
                v = strtoll(p, &end, 10);
                if (end == p || v < 0) goto bad;
            }
            shape->dims[shape->ndim++] = v;
            p = end;
            if (*p == ',') ++p;
            else if (*p) goto bad;
        }
        return 1;
    bad:
        return opara__fail(im->rt, OPARA_ERR_INVALID_ARGS,
                           "shape override '%s': expected NAME=d0,d1,... with sizes >= 0 (N or ? for the batch)", spec);
    }
    return 0;
}

static opara_result opara__check_overrides(opara__imp* im) {
    uint32_t i;
    if (!im->opt) return OPARA_OK;
    for (i = 0; i < im->opt->n_input_shapes; ++i) {
        const char* spec = im->opt->input_shapes[i];
        const char* eq = spec ? strchr(spec, '=') : NULL;
        uint32_t k;
        int found = 0;
        if (!eq) return opara__fail(im->rt, OPARA_ERR_INVALID_ARGS, "shape override '%s': expected NAME=d0,d1,...",
                                    spec ? spec : "(null)");
        for (k = 0; k < im->model->graph.n_inputs; ++k) {
            const char* nm = im->model->graph.inputs[k].name;
            found |= strlen(nm) == (size_t)(eq - spec) && strncmp(nm, spec, (size_t)(eq - spec)) == 0;
        }
        if (!found)
            return opara__fail(im->rt, OPARA_ERR_NOT_FOUND, "shape override '%s': the model has no input '%.*s'", spec,
                               (int)(eq - spec), spec);
    }
    return OPARA_OK;
}

static opara_result opara__add_graph_input(opara__imp* im, const opara__onnx_value_info* vi) {
    opara__shape shape;
    opara_dtype dtype = opara__onnx_dtype(vi->elem_type);
    uint32_t d;
    int32_t v;
    int r;
    if (!vi->is_tensor || dtype == OPARA_DTYPE_UNDEFINED)
        return opara__fail(im->rt, OPARA_ERR_UNSUPPORTED, "graph input '%s': only tensors of f32/f64/f16/i64/i32/i8/u8/"
                           "bool are supported (elem_type %d)", vi->name, (int)vi->elem_type);
    r = opara__override_shape(im, vi->name, &shape);
    if (r < 0) return (opara_result)r;
    if (!r) {
        if (!vi->has_shape)
            return opara__fail(im->rt, OPARA_ERR_SHAPE, "graph input '%s' has no shape: give one with a shape override "
                               "(\"%s=d0,d1,...\")", vi->name, vi->name);
        if (vi->n_dims > OPARA_MAX_DIMS)
            return opara__fail(im->rt, OPARA_ERR_LIMIT_EXCEEDED, "graph input '%s' has rank %u (max %d)", vi->name,
                               vi->n_dims, OPARA_MAX_DIMS);
        shape.ndim = (int32_t)vi->n_dims;
        for (d = 0; d < vi->n_dims; ++d) {
            const opara__onnx_dim* dim = &vi->dims[d];
            if (dim->has_value && dim->value >= 0) shape.dims[d] = dim->value;
            else if (d == 0) shape.dims[d] = OPARA__DIM_BATCH;
            else if (im->opt && im->opt->default_dim > 0) shape.dims[d] = im->opt->default_dim;
            else
                return opara__fail(im->rt, OPARA_ERR_SHAPE,
                                   "graph input '%s' dim %u ('%s') is symbolic: give its size with a shape override "
                                   "(\"%s=d0,d1,...\") or options.default_dim",
                                   vi->name, d, dim->param ? dim->param : "?", vi->name);
        }
    }
    r = opara__graph_insert_value(im->g, vi->name, dtype, &shape, &v);
    if (r != OPARA_OK) return opara__onnx_insert_result((opara_result)r);
    return opara__graph_add_input(im->g, v);
}

static opara_result opara__add_initializers(opara__imp* im) {
    const opara__onnx_graph* g = &im->model->graph;
    uint32_t i;
    for (i = 0; i < g->n_initializers; ++i) {
        opara__tensor_data t;
        char where[192];
        opara_result r;
        opara__format(where, sizeof where, "graph.initializer[%u] '%s'", i, g->initializers[i].name);
        r = opara__onnx_tensor_load(im->rt, &g->initializers[i], im->base_dir, where, &t);
        if (r == OPARA_OK) {
            r = opara__imp_const(im, g->initializers[i].name, t.dtype, &t.shape, t.data, NULL, 1);
            opara__tensor_data_free(im->rt, &t);
        }
        if (r != OPARA_OK) return r;
    }
    for (i = 0; i < g->n_inputs; ++i) {
        opara_result r;
        uint32_t k;
        const opara__tensor_data* frozen = NULL;
        if (opara__graph_find_value(im->g, g->inputs[i].name) >= 0) continue; /* IR < 4: an initializer */
        for (k = 0; im->extra && k < im->extra->n_frozen; ++k)
            if (strcmp(im->extra->frozen[k].name, g->inputs[i].name) == 0) frozen = &im->extra->frozen[k];
        if (frozen) r = opara__imp_const(im, g->inputs[i].name, frozen->dtype, &frozen->shape, frozen->data, NULL, 1);
        else r = opara__add_graph_input(im, &g->inputs[i]);
        if (r != OPARA_OK) return r;
    }
    return OPARA_OK;
}

/* ---- nodes in dependency order ---------------------------------------------------------------- */

static int opara__node_ready(opara__imp* im, const opara__onnx_node* n, const char** missing) {
    uint32_t i;
    for (i = 0; i < n->n_inputs; ++i)
        if (n->inputs[i][0] && opara__imp_find(im, n->inputs[i]) < 0) {
            *missing = n->inputs[i];
            return 0;
        }
    return 1;
}

static opara_result opara__stuck(opara__imp* im, const uint8_t* done) {
    const opara__onnx_graph* g = &im->model->graph;
    uint32_t i, j, k;
    for (i = 0; i < g->n_nodes; ++i) {
        const char* missing = NULL;
        if (done[i] || opara__node_ready(im, &g->nodes[i], &missing)) continue;
        for (j = 0; j < g->n_nodes; ++j)
            for (k = 0; !done[j] && k < g->nodes[j].n_outputs; ++k)
                if (strcmp(g->nodes[j].outputs[k], missing) == 0)
                    return opara__fail(im->rt, OPARA_ERR_CYCLE, "node '%s' (%s): input '%s' lies on a cycle",
                                       g->nodes[i].name, g->nodes[i].op_type, missing);
        return opara__fail(im->rt, OPARA_ERR_ONNX_INVALID,
                           "node '%s' (%s): input '%s' is not produced by any node, initializer or graph input",
                           g->nodes[i].name, g->nodes[i].op_type, missing);
    }
    return OPARA_ERR_INTERNAL;
}

static opara_result opara__import_nodes(opara__imp* im) {
    const opara__onnx_graph* g = &im->model->graph;
    uint32_t i, max_in = 1, left = g->n_nodes, first = 0;
    uint8_t* done = (uint8_t*)opara__calloc(im->rt, g->n_nodes + 1, 1);
    int32_t* in;
    opara_result r = OPARA_OK;
    for (i = 0; i < g->n_nodes; ++i) max_in = OPARA__MAX(max_in, g->nodes[i].n_inputs);
    in = (int32_t*)opara__calloc(im->rt, max_in, sizeof(int32_t));
    if (!done || !in) r = opara__fail(im->rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory importing nodes");
    while (r == OPARA_OK && left) {
        uint32_t progress = 0;
        for (i = first; i < g->n_nodes && r == OPARA_OK; ++i) {
            const char* missing;
            if (done[i] || !opara__node_ready(im, &g->nodes[i], &missing)) continue;
            r = opara__import_node(im, &g->nodes[i], in);
            done[i] = 1;
            left--;
            progress++;
        }
        while (first < g->n_nodes && done[first]) first++;
        if (r == OPARA_OK && left && !progress) r = opara__stuck(im, done);
    }
    opara__free(im->rt, done);
    opara__free(im->rt, in);
    return r;
}

/* A graph output that Identity/Dropout made an alias of a graph input, a constant or another
   output cannot take over that tensor's name: it becomes a copy (Cast to its own type). */
static opara_result opara__materialize_alias(opara__imp* im, int32_t alias, int32_t src) {
    int32_t node;
    opara_result r;
    im->side[alias].alias = -1;
    im->g->values[alias].dtype = im->g->values[src].dtype;
    r = opara__graph_insert_node(im->g, OPARA__OP_CAST, im->g->values[alias].name, 1, &src, 1, &alias, &node);
    if (r != OPARA_OK) return opara__onnx_insert_result(r);
    if (opara__node_set_int(im->g, node, "to", (int64_t)im->g->values[src].dtype) != OPARA_OK) return opara__imp_oom(im);
    return opara__infer_node(im, node);
}

static opara_result opara__add_outputs(opara__imp* im) {
    const opara__onnx_graph* g = &im->model->graph;
    uint32_t i;
    for (i = 0; i < g->n_outputs; ++i) {
        const char* name = g->outputs[i].name;
        int32_t direct = opara__graph_find_value(im->g, name), v = opara__imp_find(im, name);
        opara_result r;
        if (v < 0)
            return opara__fail(im->rt, OPARA_ERR_ONNX_INVALID, "graph output '%s' is not produced by any node", name);
        if (direct != v) {
            opara__imp_side* side = opara__side(im, v);
            if (!side) return opara__imp_oom(im);
            if (im->g->values[v].kind == OPARA__VALUE_ACTIVATION && !im->g->values[v].is_output && !side->rename) {
                side->rename = im->g->values[direct].name; /* keeps its name through Identity */
            } else {
                r = opara__materialize_alias(im, direct, v);
                if (r != OPARA_OK) return r;
                v = direct;
            }
        }
        r = opara__graph_add_output(im->g, v);
        if (r != OPARA_OK) return r;
    }
    return OPARA_OK;
}

/* ---- rebuild: live nodes in topological order, only the values they use ------------------------- */

typedef struct opara__rebuild {
    opara__imp* im;
    const opara__graph* src;
    opara__graph* dst;
    int32_t* map; /* src value -> dst value, -1 */
    opara_result result; /* why opara__rebuild_value last failed */
} opara__rebuild;

/* Why opara__rebuild_value failed: its insertion's code (out of memory), else ours (a bug). */
static opara_result opara__rebuild_failure(const opara__rebuild* rb) {
    if (rb->result == OPARA_ERR_OUT_OF_MEMORY) return rb->result;
    return opara__fail(rb->im->rt, OPARA_ERR_INTERNAL, "rebuilding the graph failed");
}

static int32_t opara__rebuild_value(opara__rebuild* rb, int32_t v) {
    const opara__value* val;
    const char* name;
    int32_t nv;
    opara_result r;
    if (v < 0) return -1;
    if (rb->map[v] >= 0) return rb->map[v];
    val = &rb->src->values[v];
    name = (size_t)v < rb->im->side_cap && rb->im->side[v].rename ? rb->im->side[v].rename : val->name;
    r = opara__graph_insert_value(rb->dst, name, val->dtype, val->kind == OPARA__VALUE_ACTIVATION ? NULL : &val->shape,
                                  &nv);
    if (r == OPARA_OK && val->kind == OPARA__VALUE_CONST)
        r = opara__graph_set_const(rb->dst, nv, val->data, val->nbytes, 1);
    if (r != OPARA_OK) {
        rb->result = r;
        return -2;
    }
    rb->map[v] = nv;
    return nv;
}

static opara_result opara__rebuild_attrs(opara__rebuild* rb, const opara__node* n, int32_t node) {
    uint32_t i;
    opara_result r = OPARA_OK;
    for (i = 0; i < n->n_attrs && r == OPARA_OK; ++i) {
        const opara__attr* a = &n->attrs[i];
        switch (a->type) {
        case OPARA__ATTR_INT: r = opara__node_set_int(rb->dst, node, a->name, a->v.i); break;
        case OPARA__ATTR_FLOAT: r = opara__node_set_float(rb->dst, node, a->name, a->v.f); break;
        case OPARA__ATTR_INTS: r = opara__node_set_ints(rb->dst, node, a->name, a->v.ints, a->count); break;
        case OPARA__ATTR_FLOATS: r = opara__node_set_floats(rb->dst, node, a->name, a->v.floats, a->count); break;
        case OPARA__ATTR_STRING: r = opara__node_set_string(rb->dst, node, a->name, a->v.s); break;
        }
    }
    return r;
}

/* Marks the nodes that some graph output needs (walking the topological order backwards). */
static uint8_t* opara__live_nodes(opara__imp* im, const opara__graph* g, const uint8_t* dead) {
    uint8_t* live = (uint8_t*)opara__calloc(im->rt, (size_t)g->n_nodes + 1, 1);
    uint8_t* needed = (uint8_t*)opara__calloc(im->rt, (size_t)g->n_values + 1, 1);
    uint32_t i, k;
    if (live && needed) {
        for (i = 0; i < g->n_outputs; ++i) needed[g->outputs[i]] = 1;
        for (i = g->n_nodes; i-- > 0;) {
            uint32_t n = g->topo[i];
            const opara__node* node = &g->nodes[n];
            if (dead && dead[n]) continue;
            for (k = 0; k < node->n_outputs && !live[n]; ++k) live[n] = needed[node->outputs[k]];
            for (k = 0; live[n] && k < node->n_inputs; ++k)
                if (node->inputs[k] >= 0) needed[node->inputs[k]] = 1;
        }
    }
    opara__free(im->rt, needed);
    if (!needed) {
        opara__free(im->rt, live);
        return NULL;
    }
    return live;
}

static opara_result opara__rebuild_into(opara__imp* im, const uint8_t* dead, opara__graph* dst) {
    opara__rebuild rb;
    const opara__graph* src = im->g;
    uint8_t* live;
    uint32_t i, k;
    opara_result r = opara__graph_finalize(im->g);
    if (r != OPARA_OK) return r;
    rb.im = im;
    rb.src = src;
    rb.dst = dst;
    rb.result = OPARA_OK;
    rb.map = (int32_t*)opara__calloc(im->rt, (size_t)src->n_values + 1, sizeof(int32_t));
    live = opara__live_nodes(im, src, dead);
    if (!rb.map || !live) r = opara__fail(im->rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory rebuilding the graph");
    for (i = 0; rb.map && i < src->n_values; ++i) rb.map[i] = -1;
    dst->producer_name = src->producer_name ? opara__pool_strdup(im->rt, &dst->pool, src->producer_name) : NULL;
    dst->source_opset = src->source_opset;
    for (i = 0; r == OPARA_OK && i < src->n_inputs; ++i) {
        int32_t v = opara__rebuild_value(&rb, src->inputs[i]);
        r = v < 0 ? opara__rebuild_failure(&rb) : opara__graph_add_input(dst, v);
    }
    for (i = 0; r == OPARA_OK && i < src->n_nodes; ++i) {
        const opara__node* n = &src->nodes[src->topo[i]];
        int32_t ins[64], outs[16], node;
        if (!live[src->topo[i]]) continue;
        if (n->n_inputs > 64 || n->n_outputs > 16) {
            r = opara__fail(im->rt, OPARA_ERR_LIMIT_EXCEEDED, "node '%s': more than 64 inputs", n->name);
            break;
        }
        for (k = 0; k < n->n_inputs; ++k)
            if ((ins[k] = opara__rebuild_value(&rb, n->inputs[k])) < -1) r = opara__rebuild_failure(&rb);
        for (k = 0; k < n->n_outputs; ++k)
            if ((outs[k] = opara__rebuild_value(&rb, n->outputs[k])) < 0) r = opara__rebuild_failure(&rb);
        if (r != OPARA_OK) break;
        r = opara__graph_insert_node(dst, n->op, n->name, n->n_inputs, ins, n->n_outputs, outs, &node);
        if (r == OPARA_OK) r = opara__rebuild_attrs(&rb, n, node);
    }
    for (i = 0; r == OPARA_OK && i < src->n_outputs; ++i) {
        int32_t v = opara__rebuild_value(&rb, src->outputs[i]);
        r = v < 0 ? opara__rebuild_failure(&rb) : opara__graph_add_output(dst, v);
    }
    if (r == OPARA_OK) r = opara__graph_finalize(dst);
    else if (!im->rt->error.text[0]) r = opara__fail(im->rt, r, "rebuilding the graph failed");
    opara__free(im->rt, rb.map);
    opara__free(im->rt, live);
    return r;
}

/* ---- fusions ---------------------------------------------------------------------------------- */

/* The single consumer of value v that is not a graph output, or -1. */
static int32_t opara__sole_consumer(const opara__graph* g, int32_t v) {
    if (g->values[v].is_output || g->consumer_start[v + 1] - g->consumer_start[v] != 1) return -1;
    return (int32_t)g->consumer_nodes[g->consumer_start[v]];
}

static int opara__const_f32(const opara__graph* g, int32_t v, uint64_t count) {
    return v >= 0 && g->values[v].kind == OPARA__VALUE_CONST && g->values[v].dtype == OPARA_DTYPE_F32 &&
           g->values[v].nbytes == count * 4;
}

static int32_t opara__add_folded_const(opara__imp* im, const char* base, const char* suffix, const opara__shape* shape,
                                       const float* data) {
    char name[256];
    int32_t v;
    int k;
    for (k = 0; k < 1000; ++k) {
        if (k) opara__format(name, sizeof name, "%s%s_%d", base, suffix, k);
        else opara__format(name, sizeof name, "%s%s", base, suffix);
        if (opara__graph_find_value(im->g, name) < 0) break;
    }
    v = opara__graph_add_value(im->g, name, OPARA_DTYPE_F32, shape);
    if (v < 0 || opara__graph_set_const(im->g, v, data, opara__shape_count(shape) * 4, 1) != OPARA_OK) return -1;
    return v;
}

static float opara__f32_at(const opara__value* v, uint64_t i) {
    float f;
    memcpy(&f, (const uint8_t*)v->data + i * 4, 4);
    return f;
}

/* Conv(X, W, B) -> BatchNormalization(scale, bias, mean, var): W' = W*s, B' = (B - mean)*s + bias,
   s = scale / sqrt(var + eps), per output channel. */
static opara_result opara__fold_bn(opara__imp* im, uint32_t bn, uint8_t* dead) {
    opara__graph* g = im->g;
    opara__node* b = &g->nodes[bn];
    int32_t y = b->inputs[0], conv, wv, bv, nw, nb;
    opara__node* c;
    opara__shape wshape, bshape;
    uint64_t ch, per, o, i;
    float *w, *bias;
    double eps = opara__attr_float(b, "epsilon", 1e-5f);
    int32_t* ins;
    if (b->n_inputs != 5 || y < 0 || (conv = g->values[y].producer) < 0 || dead[conv]) return OPARA_OK;
    c = &g->nodes[conv];
    if (c->op != OPARA__OP_CONV || opara__sole_consumer(g, y) != (int32_t)bn || c->n_inputs < 2) return OPARA_OK;
    wv = c->inputs[1];
    bv = c->n_inputs > 2 ? c->inputs[2] : -1;
    if (wv < 0 || g->values[wv].kind != OPARA__VALUE_CONST || g->values[wv].shape.ndim < 1) return OPARA_OK;
    wshape = g->values[wv].shape;
    ch = (uint64_t)wshape.dims[0];
    if (!ch || !opara__const_f32(g, wv, opara__shape_count(&wshape)) || (bv >= 0 && !opara__const_f32(g, bv, ch)))
        return OPARA_OK;
    for (i = 1; i < 5; ++i)
        if (!opara__const_f32(g, b->inputs[i], ch)) return OPARA_OK;
    per = opara__shape_count(&wshape) / ch;
    w = (float*)opara__alloc(im->rt, (size_t)(ch * per * 4 + 4));
    bias = (float*)opara__alloc(im->rt, (size_t)(ch * 4 + 4));
    if (!w || !bias) {
        opara__free(im->rt, w);
        opara__free(im->rt, bias);
        return opara__fail(im->rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory folding BatchNormalization");
    }
    for (o = 0; o < ch; ++o) {
        double s = opara__f32_at(&g->values[b->inputs[1]], o) / sqrt((double)opara__f32_at(&g->values[b->inputs[4]], o) + eps);
        double b0 = bv >= 0 ? opara__f32_at(&g->values[bv], o) : 0.0;
        for (i = 0; i < per; ++i) w[o * per + i] = (float)(opara__f32_at(&g->values[wv], o * per + i) * s);
        bias[o] = (float)((b0 - opara__f32_at(&g->values[b->inputs[3]], o)) * s + opara__f32_at(&g->values[b->inputs[2]], o));
    }
    bshape.ndim = 1;
    bshape.dims[0] = (int64_t)ch;
    nw = opara__add_folded_const(im, g->values[wv].name, "_bnfold", &wshape, w);
    nb = opara__add_folded_const(im, g->values[wv].name, "_bnfold_bias", &bshape, bias);
    opara__free(im->rt, w);
    opara__free(im->rt, bias);
    if (nw < 0 || nb < 0) return OPARA_ERR_OUT_OF_MEMORY;
    c = &g->nodes[conv];
    b = &g->nodes[bn];
    ins = (int32_t*)opara__pool_alloc(im->rt, &g->pool, 3 * sizeof(int32_t), 4);
    if (!ins) return opara__imp_oom(im);
    ins[0] = c->inputs[0];
    ins[1] = nw;
    ins[2] = nb;
    c->inputs = ins;
    c->n_inputs = 3;
    c->outputs[0] = b->outputs[0];
    g->values[b->outputs[0]].producer = conv;
    dead[bn] = 1;
    return OPARA_OK;
}

static opara_result opara__fuse_relu(opara__imp* im, uint32_t relu, uint8_t* dead) {
    opara__graph* g = im->g;
    opara__node* r = &g->nodes[relu];
    int32_t y = r->n_inputs ? r->inputs[0] : -1, p;
    opara__node* prod;
    if (y < 0 || (p = g->values[y].producer) < 0 || dead[p]) return OPARA_OK;
    prod = &g->nodes[p];
    if ((prod->op != OPARA__OP_CONV && prod->op != OPARA__OP_GEMM) || opara__node_attr(prod, "activation") ||
        prod->n_outputs != 1 || opara__sole_consumer(g, y) != (int32_t)relu)
        return OPARA_OK;
    if (opara__node_set_string(g, p, "activation", "Relu") != OPARA_OK) return OPARA_ERR_OUT_OF_MEMORY;
    prod = &g->nodes[p];
    prod->outputs[0] = r->outputs[0];
    g->values[r->outputs[0]].producer = p;
    dead[relu] = 1;
    return OPARA_OK;
}

/* The spatial pads of a Pad that an unpadded AveragePool after it can take over: constant 0, no
   padding of N and C, each pad smaller than the window; 0 when it cannot. */
static int opara__pad_for_pool(const opara__node* pad, const opara__node* pool, int64_t* pads, uint32_t* n_pads) {
    uint32_t np = 0, nk = 0, n_pool_pads = 0, n_dil = 0, i, rank;
    const int64_t* p = opara__attr_ints(pad, "pads", &np);
    const int64_t* kernel = opara__attr_ints(pool, "kernel_shape", &nk);
    const int64_t* pool_pads = opara__attr_ints(pool, "pads", &n_pool_pads);
    const int64_t* dil = opara__attr_ints(pool, "dilations", &n_dil);
    rank = nk + 2;
    if (!p || !kernel || nk == 0 || nk > 3 || np != 2 * rank || opara__attr_float(pad, "value", 0.0f) != 0.0f ||
        strcmp(opara__attr_string(pad, "mode", "constant"), "constant") != 0 ||
        opara__node_auto_pad(pool) != OPARA__AUTO_PAD_NOTSET || opara__attr_int(pool, "ceil_mode", 0))
        return 0;
    for (i = 0; i < n_pool_pads; ++i)
        if (pool_pads[i]) return 0;
    for (i = 0; i < n_dil; ++i)
        if (dil[i] != 1) return 0;
    if (p[0] || p[1] || p[rank] || p[rank + 1]) return 0;
    for (i = 0; i < nk; ++i) {
        int64_t b = p[2 + i], e = p[2 + i + rank];
        if (b < 0 || e < 0 || b >= kernel[i] || e >= kernel[i]) return 0;
        pads[i] = b;
        pads[i + nk] = e;
    }
    *n_pads = 2 * nk;
    return 1;
}

/* Pad(0) -> AveragePool (how exporters write count_include_pad pooling) becomes one AveragePool
   with the pads and count_include_pad = 1: every window lies inside the padded extent and divides
   by the whole kernel, as it did over the padded tensor. */
static opara_result opara__fuse_pad_pool(opara__imp* im, uint32_t pool, uint8_t* dead) {
    opara__graph* g = im->g;
    int32_t x = g->nodes[pool].n_inputs ? g->nodes[pool].inputs[0] : -1, p;
    int64_t pads[6];
    uint32_t n_pads = 0;
    opara_result r;
    if (x < 0 || (p = g->values[x].producer) < 0 || dead[p] || g->nodes[p].op != OPARA__OP_PAD ||
        g->nodes[p].n_inputs < 1 || g->nodes[p].inputs[0] < 0 || opara__sole_consumer(g, x) != (int32_t)pool ||
        !opara__pad_for_pool(&g->nodes[p], &g->nodes[pool], pads, &n_pads))
        return OPARA_OK;
    r = opara__node_set_ints(g, (int32_t)pool, "pads", pads, n_pads);
    if (r == OPARA_OK) r = opara__node_set_int(g, (int32_t)pool, "count_include_pad", 1);
    if (r != OPARA_OK) return OPARA_ERR_OUT_OF_MEMORY;
    g->nodes[pool].inputs[0] = g->nodes[p].inputs[0];
    dead[p] = 1;
    return OPARA_OK;
}

static opara_result opara__fuse(opara__imp* im, uint8_t* dead) {
    opara__graph* g = im->g;
    uint32_t i, n = g->n_nodes;
    opara_result r = opara__graph_finalize(g);
    for (i = 0; r == OPARA_OK && i < n; ++i)
        if (g->nodes[g->topo[i]].op == OPARA__OP_BATCH_NORM) r = opara__fold_bn(im, g->topo[i], dead);
    for (i = 0; r == OPARA_OK && i < n; ++i)
        if (g->nodes[g->topo[i]].op == OPARA__OP_RELU) r = opara__fuse_relu(im, g->topo[i], dead);
    for (i = 0; r == OPARA_OK && i < n; ++i)
        if (g->nodes[g->topo[i]].op == OPARA__OP_AVERAGE_POOL) r = opara__fuse_pad_pool(im, g->topo[i], dead);
    return r;
}

/* ---- entry points ----------------------------------------------------------------------------- */

static int64_t opara__default_opset(const opara__onnx_model* m) {
    uint32_t i;
    for (i = 0; i < m->n_opsets; ++i)
        if (!m->opsets[i].domain[0] || strcmp(m->opsets[i].domain, "ai.onnx") == 0) return m->opsets[i].version;
    return m->n_opsets ? 0 : 1; /* no opset_import at all: very old files mean opset 1 */
}

static opara_result opara__import_model(opara__imp* im, opara__graph* out) {
    int flags = im->extra ? im->extra->flags : 0;
    opara__graph work;
    uint8_t* dead;
    opara_result r;
    opara__graph_init(&work, im->rt);
    im->g = &work;
    work.source_opset = im->opset;
    work.producer_name = opara__pool_strdup(im->rt, &work.pool, im->model->producer_name);
    r = opara__check_overrides(im);
    if (r == OPARA_OK) r = opara__add_initializers(im);
    if (r == OPARA_OK) r = opara__import_nodes(im);
    if (r == OPARA_OK) r = opara__add_outputs(im);
    dead = (uint8_t*)opara__calloc(im->rt, (size_t)work.n_nodes + 1, 1);
    if (r == OPARA_OK && !dead) r = opara__fail(im->rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory");
    if (r == OPARA_OK && !(flags & OPARA__ONNX_NO_FUSION)) r = opara__fuse(im, dead);
    if (r == OPARA_OK) r = opara__rebuild_into(im, dead, out);
    opara__free(im->rt, dead);
    opara__graph_free(&work);
    return r;
}

OPARA__PRIVATE opara_result opara__onnx_import(opara_runtime* rt, const void* data, size_t size,
                                              const opara_onnx_options* options, const char* base_dir,
                                              const opara__onnx_extra* extra, opara__graph* out) {
    opara__pool pool;
    opara__onnx_model model;
    opara__imp im;
    opara_result r;
    opara__graph_init(out, rt);
    if (!data && size) return opara__fail(rt, OPARA_ERR_INVALID_ARGS, "ONNX import: no data");
    memset(&pool, 0, sizeof pool);
    memset(&im, 0, sizeof im);
    r = opara__onnx_decode_model(rt, &pool, (const uint8_t*)data, size, &model);
    if (r == OPARA_OK && !model.has_graph) r = opara__fail(rt, OPARA_ERR_ONNX_INVALID, "the model has no graph");
    if (r == OPARA_OK && model.graph.n_sparse_initializers)
        r = opara__fail(rt, OPARA_ERR_UNSUPPORTED, "graph.sparse_initializer is not supported");
    if (r == OPARA_OK) r = opara__check_ops(rt, &model.graph, opara__default_opset(&model));
    if (r == OPARA_OK) {
        im.rt = rt;
        im.model = &model;
        im.opt = options;
        im.base_dir = base_dir ? base_dir : options ? options->external_data_dir : NULL;
        im.opset = opara__default_opset(&model);
        im.extra = extra;
        r = opara__import_model(&im, out);
    }
    opara__free(rt, im.side);
    opara__pool_free(rt, &pool);
    return r;
}

#ifndef OPARA_NO_STDIO
/* The loaders' shared file reader (opara__read_file_once): sized once, regular files only, refused if it changes. */
OPARA__PRIVATE opara_result opara__onnx_read_file(opara_runtime* rt, const char* path, uint8_t** data, size_t* size) {
    return opara__read_file_once(rt, path, NULL, data, size);
}

OPARA__PRIVATE_TOOL opara_result opara__onnx_read_tensor_file(opara_runtime* rt, const char* path, opara__tensor_data* out) {
    uint8_t* data;
    size_t size;
    opara_result r = opara__onnx_read_file(rt, path, &data, &size);
    memset(out, 0, sizeof *out);
    if (r != OPARA_OK) return r;
    r = opara__onnx_read_tensor(rt, data, size, out);
    opara__free(rt, data);
    return r;
}

OPARA__PRIVATE opara_result opara__onnx_import_file(opara_runtime* rt, const char* path,
                                                   const opara_onnx_options* options, const opara__onnx_extra* extra,
                                                   opara__graph* out) {
    char dir[4096];
    const char* slash = strrchr(path, '/');
    uint8_t* data;
    size_t size;
    opara_result r;
#ifdef _WIN32
    const char* bslash = strrchr(path, '\\');
    if (bslash && (!slash || bslash > slash)) slash = bslash;
#endif
    opara__graph_init(out, rt);
    if (slash) opara__format(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    else opara__format(dir, sizeof dir, ".");
    if (slash == path) opara__format(dir, sizeof dir, "/");
    r = opara__onnx_read_file(rt, path, &data, &size);
    if (r != OPARA_OK) return r;
    r = opara__onnx_import(rt, data, size, options, options && options->external_data_dir ? options->external_data_dir : dir,
                           extra, out);
    opara__free(rt, data);
    return r;
}
#endif

/* ---- public API ------------------------------------------------------------------------------- */

static opara_result opara__model_from_onnx_graph(opara_runtime* rt, opara_result r, opara__graph* g, opara_model** out) {
    if (r == OPARA_OK) return opara__model_from_graph(rt, g, out);
    opara__graph_free(g);
    return r;
}

/* The (pointer, count) pairs and values of the options, checked before anything is read. */
static opara_result opara__check_onnx_options(opara_runtime* rt, const opara_onnx_options* o, const char* fn) {
    if (!o) return OPARA_OK;
    if (o->n_input_shapes && !o->input_shapes)
        return opara__fail(rt, OPARA_ERR_INVALID_ARGS, "%s: options.input_shapes is NULL but n_input_shapes is %u", fn,
                           (unsigned)o->n_input_shapes);
    if (o->default_dim < 0)
        return opara__fail(rt, OPARA_ERR_INVALID_ARGS, "%s: options.default_dim is %lld (0 or a size > 0)", fn,
                           (long long)o->default_dim);
    return OPARA_OK;
}

OPARADEF opara_result opara_model_load_onnx_memory(opara_runtime* runtime, const void* data, size_t size,
                                                   const opara_onnx_options* options, opara_model** out) {
    opara__graph g;
    if (!out) return runtime ? opara__fail(runtime, OPARA_ERR_INVALID_ARGS, "opara_model_load_onnx_memory: out is NULL")
                             : OPARA_ERR_INVALID_ARGS;
    *out = NULL;
    if (!runtime || (!data && size)) return runtime ? opara__fail(runtime, OPARA_ERR_INVALID_ARGS,
                                                                  "opara_model_load_onnx_memory: no data") : OPARA_ERR_INVALID_ARGS;
    if (opara__check_onnx_options(runtime, options, "opara_model_load_onnx_memory") != OPARA_OK) return OPARA_ERR_INVALID_ARGS;
    return opara__model_from_onnx_graph(runtime, opara__onnx_import(runtime, data, size, options, NULL, NULL, &g), &g, out);
}

#ifndef OPARA_NO_STDIO
OPARADEF opara_result opara_model_load_onnx_file(opara_runtime* runtime, const char* path,
                                                 const opara_onnx_options* options, opara_model** out) {
    opara__graph g;
    if (!out) return runtime ? opara__fail(runtime, OPARA_ERR_INVALID_ARGS, "opara_model_load_onnx_file: out is NULL")
                             : OPARA_ERR_INVALID_ARGS;
    *out = NULL;
    if (!runtime || !path) return runtime ? opara__fail(runtime, OPARA_ERR_INVALID_ARGS,
                                                        "opara_model_load_onnx_file: no path") : OPARA_ERR_INVALID_ARGS;
    if (opara__check_onnx_options(runtime, options, "opara_model_load_onnx_file") != OPARA_OK) return OPARA_ERR_INVALID_ARGS;
    return opara__model_from_onnx_graph(runtime, opara__onnx_import_file(runtime, path, options, NULL, &g), &g, out);
}
#endif
