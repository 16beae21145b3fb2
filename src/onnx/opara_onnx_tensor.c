/* ONNX tensors (see opara_onnx.h): a decoded TensorProto's typed fields, raw data or external
   data file -> dtype, shape and bytes in native order, and the readers of bare TensorProto files
   (ONNX test data). */
#include "opara_onnx.h"
#include "../model/opara_model.h"

#include <stdlib.h>
#ifndef OPARA_NO_STDIO
#  include <stdio.h>
#endif

OPARA__PRIVATE opara_dtype opara__onnx_dtype(int32_t t) {
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
        uint64_t end = 0;
        int sized;
        if (opara__format(path, cap, "%s/%s", base_dir, location) >= cap - 1)
            return opara__fail(rt, OPARA_ERR_EXTERNAL_DATA, "%s: external data path too long", where);
        f = opara__fopen(path, "rb");
        if (!f) return opara__fail(rt, OPARA_ERR_EXTERNAL_DATA, "%s: cannot open external data '%s'", where, path);
        sized = opara__fsize(f, &end);
        fclose(f);
        if (!sized || *offset > end || out->nbytes > end - *offset)
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
    FILE* f = opara__fopen(path, "rb");
    size_t got = 0;
    if (!f) return opara__fail(rt, OPARA_ERR_EXTERNAL_DATA, "%s: cannot open external data '%s'", where, path);
    if (opara__fseek_to(f, offset)) got = fread(out->data, 1, (size_t)out->nbytes, f);
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
#endif
