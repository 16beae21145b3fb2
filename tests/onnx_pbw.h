/* A tiny protobuf writer for tests: builds ONNX ModelProtos by hand (field numbers from
   onnx.proto), so import tests do not depend on files. Test-only; never part of opara.h. */
#ifndef ONNX_PBW_H
#define ONNX_PBW_H
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct pbw {
    uint8_t* d;
    size_t n, cap;
} pbw;

static void pbw_put(pbw* b, const void* p, size_t n) {
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2 + 64;
        b->d = (uint8_t*)realloc(b->d, b->cap);
    }
    if (n) memcpy(b->d + b->n, p, n); /* an empty message has no buffer (p NULL) */
    b->n += n;
}
static void pbw_varint(pbw* b, uint64_t v) {
    uint8_t c;
    do {
        c = (uint8_t)(v & 0x7f);
        v >>= 7;
        if (v) c |= 0x80;
        pbw_put(b, &c, 1);
    } while (v);
}
static void pbw_key(pbw* b, uint32_t field, uint32_t wire) { pbw_varint(b, ((uint64_t)field << 3) | wire); }
static void pbw_int(pbw* b, uint32_t field, int64_t v) { pbw_key(b, field, 0); pbw_varint(b, (uint64_t)v); }
static void pbw_bytes(pbw* b, uint32_t field, const void* p, size_t n) {
    pbw_key(b, field, 2);
    pbw_varint(b, n);
    pbw_put(b, p, n);
}
static void pbw_str(pbw* b, uint32_t field, const char* s) { pbw_bytes(b, field, s, strlen(s)); }
static void pbw_msg(pbw* b, uint32_t field, pbw* m) { /* appends and frees m */
    pbw_bytes(b, field, m->d, m->n);
    free(m->d);
    memset(m, 0, sizeof *m);
}
static void pbw_float(pbw* b, uint32_t field, float f) {
    uint8_t le[4];
    uint32_t u;
    memcpy(&u, &f, 4);
    le[0] = (uint8_t)u, le[1] = (uint8_t)(u >> 8), le[2] = (uint8_t)(u >> 16), le[3] = (uint8_t)(u >> 24);
    pbw_key(b, field, 5);
    pbw_put(b, le, 4);
}

/* TensorProto of ONNX data_type with raw_data of elem_size-byte elements (little-endian host
   assumed, as on every test machine). */
static void pbw_tensor_raw(pbw* out, uint32_t field, const char* name, const int64_t* dims, int nd, int data_type,
                           const void* v, size_t elem_size) {
    pbw t = {0, 0, 0};
    size_t n = 1;
    int i;
    for (i = 0; i < nd; ++i) pbw_int(&t, 1, dims[i]), n *= (size_t)dims[i];
    pbw_int(&t, 2, data_type);
    pbw_str(&t, 8, name);
    pbw_bytes(&t, 9, v, n * elem_size);
    pbw_msg(out, field, &t);
}
static void pbw_tensor_f32(pbw* out, uint32_t field, const char* name, const int64_t* dims, int nd, const float* v) {
    pbw_tensor_raw(out, field, name, dims, nd, 1, v, 4);
}
static void pbw_tensor_i64(pbw* out, uint32_t field, const char* name, const int64_t* dims, int nd, const int64_t* v) {
    pbw t = {0, 0, 0}, packed = {0, 0, 0};
    size_t n = 1;
    int i;
    for (i = 0; i < nd; ++i) pbw_int(&t, 1, dims[i]), n *= (size_t)dims[i];
    pbw_int(&t, 2, 7);
    for (i = 0; i < (int)n; ++i) pbw_varint(&packed, (uint64_t)v[i]);
    pbw_msg(&t, 7, &packed);
    pbw_str(&t, 8, name);
    pbw_msg(out, field, &t);
}

/* ValueInfoProto for a float tensor; dims < 0 are written as dim_param "N". */
static void pbw_value_info(pbw* g, uint32_t field, const char* name, int elem, const int64_t* dims, int nd) {
    pbw vi = {0, 0, 0}, type = {0, 0, 0}, tt = {0, 0, 0}, shape = {0, 0, 0};
    int i;
    pbw_str(&vi, 1, name);
    pbw_int(&tt, 1, elem);
    for (i = 0; i < nd; ++i) {
        pbw dim = {0, 0, 0};
        if (dims[i] < 0) pbw_str(&dim, 2, "N");
        else pbw_int(&dim, 1, dims[i]);
        pbw_msg(&shape, 1, &dim);
    }
    if (nd >= 0) pbw_msg(&tt, 2, &shape);
    pbw_msg(&type, 1, &tt);
    pbw_msg(&vi, 2, &type);
    pbw_msg(g, field, &vi);
}

/* NodeProto: inputs/outputs as NULL-terminated lists; attributes appended by the caller into attrs. */
static void pbw_node(pbw* g, const char* op, const char* name, const char* const* ins, const char* const* outs,
                     pbw* attrs) {
    pbw n = {0, 0, 0};
    for (; ins && *ins; ++ins) pbw_str(&n, 1, *ins);
    for (; outs && *outs; ++outs) pbw_str(&n, 2, *outs);
    pbw_str(&n, 3, name);
    pbw_str(&n, 4, op);
    if (attrs && attrs->n) pbw_put(&n, attrs->d, attrs->n);
    if (attrs) free(attrs->d), memset(attrs, 0, sizeof *attrs);
    pbw_msg(g, 1, &n);
}
static void pbw_attr_int(pbw* attrs, const char* name, int64_t v) {
    pbw a = {0, 0, 0};
    pbw_str(&a, 1, name);
    pbw_int(&a, 20, 2);
    pbw_int(&a, 3, v);
    pbw_msg(attrs, 5, &a);
}
static void pbw_attr_ints(pbw* attrs, const char* name, const int64_t* v, int n) {
    pbw a = {0, 0, 0};
    int i;
    pbw_str(&a, 1, name);
    pbw_int(&a, 20, 7);
    for (i = 0; i < n; ++i) pbw_int(&a, 8, v[i]);
    pbw_msg(attrs, 5, &a);
}
static void pbw_attr_float(pbw* attrs, const char* name, float v) {
    pbw a = {0, 0, 0};
    pbw_str(&a, 1, name);
    pbw_int(&a, 20, 1);
    pbw_float(&a, 2, v);
    pbw_msg(attrs, 5, &a);
}

/* Not every test that includes this header writes a string attribute. */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((unused))
#endif
static void pbw_attr_str(pbw* attrs, const char* name, const char* v) {
    pbw a = {0, 0, 0};
    pbw_str(&a, 1, name);
    pbw_int(&a, 20, 3);
    pbw_str(&a, 4, v);
    pbw_msg(attrs, 5, &a);
}

/* A GraphProto attribute (If's branches, Loop's body): graph g (its nodes, inputs, outputs) is consumed. */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((unused))
#endif
static void pbw_attr_graph(pbw* attrs, const char* name, pbw* g) {
    pbw a = {0, 0, 0};
    pbw_str(&a, 1, name);
    pbw_int(&a, 20, 5);
    pbw_msg(&a, 6, g);
    pbw_msg(attrs, 5, &a);
}

/* STRINGS and FLOATS attributes (AttributeProto strings = 9, floats = 7; types 8 and 6). */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((unused))
#endif
static void pbw_attr_strs(pbw* attrs, const char* name, const char* const* v) {
    pbw a = {0, 0, 0};
    pbw_str(&a, 1, name);
    pbw_int(&a, 20, 8);
    for (; *v; ++v) pbw_str(&a, 9, *v);
    pbw_msg(attrs, 5, &a);
}

#if defined(__GNUC__) || defined(__clang__)
__attribute__((unused))
#endif
static void pbw_attr_floats(pbw* attrs, const char* name, const float* v, int n) {
    pbw a = {0, 0, 0};
    int i;
    pbw_str(&a, 1, name);
    pbw_int(&a, 20, 6);
    for (i = 0; i < n; ++i) pbw_float(&a, 7, v[i]);
    pbw_msg(attrs, 5, &a);
}

/* ModelProto around graph g (consumed). */
static pbw pbw_model(int64_t ir, int64_t opset, pbw* g) {
    pbw m = {0, 0, 0}, op = {0, 0, 0};
    pbw_int(&m, 1, ir);
    pbw_str(&m, 2, "test");
    pbw_int(&op, 2, opset);
    pbw_msg(&m, 8, &op);
    pbw_msg(&m, 7, g);
    return m;
}
#endif
