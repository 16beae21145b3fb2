/* Protobuf wire reader and ONNX message decoder (see opara_pb.h). Field numbers follow onnx.proto
   (proto2). Each message is read twice: the first pass validates the wire data and counts
   repeated fields, the second allocates exact arrays and fills them. */
#include "opara_pb.h"

#include <stdio.h>

/* ---- wire level ------------------------------------------------------------------------------ */

OPARA__PRIVATE const char* opara__pb_status_text(opara__pb_status status) {
    switch (status) {
    case OPARA__PB_OK: return "ok";
    case OPARA__PB_END: return "end of message";
    case OPARA__PB_TRUNCATED_VARINT: return "truncated varint";
    case OPARA__PB_VARINT_OVERFLOW: return "varint longer than 64 bits";
    case OPARA__PB_TRUNCATED: return "field runs past the end of its parent";
    case OPARA__PB_GROUP: return "groups (wire types 3/4) are not supported";
    case OPARA__PB_BAD_WIRE_TYPE: return "invalid wire type";
    case OPARA__PB_BAD_FIELD_NUMBER: return "invalid field number";
    case OPARA__PB_BAD_PACKED: return "packed field size is not a multiple of the element size";
    }
    return "unknown protobuf error";
}

OPARA__PRIVATE opara__pb_status opara__pb_read_varint(const uint8_t** p, const uint8_t* end, uint64_t* out) {
    const uint8_t* q = *p;
    uint64_t value = 0;
    unsigned shift;
    for (shift = 0; shift < 70; shift += 7) {
        uint8_t byte;
        if (q >= end) return OPARA__PB_TRUNCATED_VARINT;
        byte = *q++;
        if (shift == 63 && (byte & 0x7e)) return OPARA__PB_VARINT_OVERFLOW; /* 10th byte holds one bit */
        value |= (uint64_t)(byte & 0x7f) << shift;
        if (!(byte & 0x80)) {
            *p = q;
            *out = value;
            return OPARA__PB_OK;
        }
    }
    return OPARA__PB_VARINT_OVERFLOW;
}

OPARA__PRIVATE void opara__pb_reader_init(opara__pb_reader* r, const uint8_t* data, size_t size) {
    r->p = data;
    r->end = data ? data + size : data;
}

OPARA__PRIVATE opara__pb_status opara__pb_next(opara__pb_reader* r, opara__pb_field* f) {
    uint64_t key;
    opara__pb_status st;
    if (r->p >= r->end) return OPARA__PB_END;
    st = opara__pb_read_varint(&r->p, r->end, &key);
    if (st != OPARA__PB_OK) return st;
    if ((key >> 3) == 0 || (key >> 3) > 0x1fffffff) return OPARA__PB_BAD_FIELD_NUMBER;
    f->number = (uint32_t)(key >> 3);
    f->wire = (uint32_t)(key & 7);
    f->u = 0;
    f->data = NULL;
    f->size = 0;
    switch (f->wire) {
    case OPARA__PB_WIRE_VARINT: return opara__pb_read_varint(&r->p, r->end, &f->u);
    case OPARA__PB_WIRE_FIXED64:
        if ((size_t)(r->end - r->p) < 8) return OPARA__PB_TRUNCATED;
        f->u = opara__rd_u64(r->p);
        r->p += 8;
        return OPARA__PB_OK;
    case OPARA__PB_WIRE_FIXED32:
        if ((size_t)(r->end - r->p) < 4) return OPARA__PB_TRUNCATED;
        f->u = opara__rd_u32(r->p);
        r->p += 4;
        return OPARA__PB_OK;
    case OPARA__PB_WIRE_LEN: {
        uint64_t len;
        st = opara__pb_read_varint(&r->p, r->end, &len);
        if (st != OPARA__PB_OK) return st;
        if (len > (uint64_t)(r->end - r->p)) return OPARA__PB_TRUNCATED;
        f->data = r->p;
        f->size = (size_t)len;
        r->p += (size_t)len;
        return OPARA__PB_OK;
    }
    case 3: case 4: return OPARA__PB_GROUP;
    default: return OPARA__PB_BAD_WIRE_TYPE;
    }
}

static uint32_t opara__pb_scalar_wire(opara__pb_scalar kind) {
    switch (kind) {
    case OPARA__PB_FIXED32_F32: return OPARA__PB_WIRE_FIXED32;
    case OPARA__PB_FIXED64_F64: return OPARA__PB_WIRE_FIXED64;
    default: return OPARA__PB_WIRE_VARINT;
    }
}

static size_t opara__pb_scalar_fixed_size(opara__pb_scalar kind) {
    return kind == OPARA__PB_FIXED32_F32 ? 4 : kind == OPARA__PB_FIXED64_F64 ? 8 : 0;
}

OPARA__PRIVATE opara__pb_status opara__pb_scalar_count(const opara__pb_field* f, opara__pb_scalar kind, size_t* count) {
    size_t fixed = opara__pb_scalar_fixed_size(kind), n = 0;
    const uint8_t *p, *end;
    if (f->wire == opara__pb_scalar_wire(kind)) {
        *count = 1;
        return OPARA__PB_OK;
    }
    if (f->wire != OPARA__PB_WIRE_LEN) return OPARA__PB_BAD_WIRE_TYPE;
    if (fixed) {
        if (f->size % fixed) return OPARA__PB_BAD_PACKED;
        *count = f->size / fixed;
        return OPARA__PB_OK;
    }
    for (p = f->data, end = f->data + f->size; p < end; ++n) {
        uint64_t ignored;
        opara__pb_status st = opara__pb_read_varint(&p, end, &ignored);
        if (st != OPARA__PB_OK) return st;
    }
    *count = n;
    return OPARA__PB_OK;
}

static void opara__pb_store(opara__pb_scalar kind, void* out, size_t i, uint64_t raw) {
    switch (kind) {
    case OPARA__PB_VARINT_I64: ((int64_t*)out)[i] = (int64_t)raw; break;
    case OPARA__PB_VARINT_I32: ((int32_t*)out)[i] = (int32_t)(uint32_t)raw; break;
    case OPARA__PB_VARINT_U64: ((uint64_t*)out)[i] = raw; break;
    case OPARA__PB_FIXED32_F32: {
        uint32_t bits = (uint32_t)raw;
        memcpy((float*)out + i, &bits, 4);
        break;
    }
    case OPARA__PB_FIXED64_F64: memcpy((double*)out + i, &raw, 8); break;
    }
}

OPARA__PRIVATE opara__pb_status opara__pb_scalar_unpack(const opara__pb_field* f, opara__pb_scalar kind, void* out,
                                                      size_t* index) {
    size_t fixed = opara__pb_scalar_fixed_size(kind);
    const uint8_t *p, *end;
    if (f->wire == opara__pb_scalar_wire(kind)) {
        opara__pb_store(kind, out, (*index)++, f->u);
        return OPARA__PB_OK;
    }
    if (f->wire != OPARA__PB_WIRE_LEN) return OPARA__PB_BAD_WIRE_TYPE;
    for (p = f->data, end = f->data + f->size; p < end;) {
        uint64_t raw;
        if (fixed == 4) {
            if ((size_t)(end - p) < 4) return OPARA__PB_BAD_PACKED;
            raw = opara__rd_u32(p);
            p += 4;
        } else if (fixed == 8) {
            if ((size_t)(end - p) < 8) return OPARA__PB_BAD_PACKED;
            raw = opara__rd_u64(p);
            p += 8;
        } else {
            opara__pb_status st = opara__pb_read_varint(&p, end, &raw);
            if (st != OPARA__PB_OK) return st;
        }
        opara__pb_store(kind, out, (*index)++, raw);
    }
    return OPARA__PB_OK;
}

/* ---- decoding context: pool, runtime and the current field path ------------------------------ */

typedef struct opara__pb_ctx {
    opara_runtime* rt;
    opara__pool* pool;
    char path[384];
    size_t len;
    int graph_depth; /* subgraphs being decoded around the current field */
} opara__pb_ctx;

/* Subgraphs inside subgraphs (an If in a Loop body, ...) deeper than this are refused: real models
   nest two or three levels, and the bound keeps a hostile file from exhausting the stack. */
#define OPARA__ONNX_MAX_GRAPH_DEPTH 16

static size_t opara__pb_push(opara__pb_ctx* c, const char* field, long index) {
    size_t mark = c->len;
    int n;
    if (index >= 0)
        n = snprintf(c->path + c->len, sizeof c->path - c->len, "%s%s[%ld]", c->len ? "." : "", field, index);
    else
        n = snprintf(c->path + c->len, sizeof c->path - c->len, "%s%s", c->len ? "." : "", field);
    if (n > 0) c->len = OPARA__MIN(c->len + (size_t)n, sizeof c->path - 1);
    return mark;
}

static void opara__pb_pop(opara__pb_ctx* c, size_t mark) {
    c->len = mark;
    c->path[mark] = 0;
}

static opara_result opara__pb_wire_error(opara__pb_ctx* c, opara__pb_status st) {
    return opara__fail(c->rt, OPARA_ERR_ONNX_DECODE, "%s: %s", c->len ? c->path : "(message)",
                       opara__pb_status_text(st));
}

static opara_result opara__pb_field_error(opara__pb_ctx* c, const char* field, opara__pb_status st) {
    return opara__fail(c->rt, OPARA_ERR_ONNX_DECODE, "%s%s%s: %s", c->path, c->len ? "." : "", field,
                       opara__pb_status_text(st));
}

static opara_result opara__pb_oom(opara__pb_ctx* c) {
    return opara__fail(c->rt, OPARA_ERR_OUT_OF_MEMORY, "%s: out of memory", c->len ? c->path : "(message)");
}

/* Next field: OPARA_OK with *more = 1, or *more = 0 at the end; an error names the path. */
static opara_result opara__pb_step(opara__pb_ctx* c, opara__pb_reader* r, opara__pb_field* f, int* more) {
    opara__pb_status st = opara__pb_next(r, f);
    *more = st == OPARA__PB_OK;
    if (st == OPARA__PB_OK || st == OPARA__PB_END) return OPARA_OK;
    return opara__pb_wire_error(c, st);
}

static opara_result opara__pb_expect(opara__pb_ctx* c, const opara__pb_field* f, uint32_t wire, const char* field) {
    if (f->wire == wire) return OPARA_OK;
    return opara__fail(c->rt, OPARA_ERR_ONNX_DECODE, "%s%s%s: wire type %u, expected %u", c->path, c->len ? "." : "",
                       field, f->wire, wire);
}

static void* opara__pb_array(opara__pb_ctx* c, size_t count, size_t elem) {
    size_t bytes;
    void* p;
    if (!opara__mul_size(count ? count : 1, elem, &bytes)) return NULL;
    p = opara__pool_alloc(c->rt, c->pool, bytes, 8);
    if (p) memset(p, 0, bytes);
    return p;
}

static opara_result opara__pb_string(opara__pb_ctx* c, const opara__pb_field* f, const char* field, const char** out) {
    char* s;
    opara_result r = opara__pb_expect(c, f, OPARA__PB_WIRE_LEN, field);
    if (r != OPARA_OK) return r;
    s = (char*)opara__pool_alloc(c->rt, c->pool, f->size + 1, 1);
    if (!s) return opara__pb_oom(c);
    if (f->size) memcpy(s, f->data, f->size);
    s[f->size] = 0;
    *out = s;
    return OPARA_OK;
}

static opara_result opara__pb_varint_field(opara__pb_ctx* c, const opara__pb_field* f, const char* field,
                                           int64_t* out) {
    opara_result r = opara__pb_expect(c, f, OPARA__PB_WIRE_VARINT, field);
    if (r == OPARA_OK) *out = (int64_t)f->u;
    return r;
}

static opara_result opara__pb_int32_field(opara__pb_ctx* c, const opara__pb_field* f, const char* field,
                                          int32_t* out) {
    int64_t v = 0;
    opara_result r = opara__pb_varint_field(c, f, field, &v);
    if (r == OPARA_OK) *out = (int32_t)(uint32_t)(uint64_t)v;
    return r;
}

/* Repeated scalar field: pass 0 adds to *count, pass 1 stores into *array at *index. */
static opara_result opara__pb_repeated(opara__pb_ctx* c, int pass, const opara__pb_field* f, opara__pb_scalar kind,
                                       const char* field, size_t* count, void* array, size_t* index) {
    opara__pb_status st;
    if (pass == 0) {
        size_t n = 0;
        st = opara__pb_scalar_count(f, kind, &n);
        if (st == OPARA__PB_OK && !opara__add_size(*count, n, count)) st = OPARA__PB_TRUNCATED;
    } else {
        st = opara__pb_scalar_unpack(f, kind, array, index);
    }
    return st == OPARA__PB_OK ? OPARA_OK : opara__pb_field_error(c, field, st);
}

/* ---- messages -------------------------------------------------------------------------------- */

static opara_result opara__pb_kv(opara__pb_ctx* c, const uint8_t* data, size_t size, opara__onnx_kv* kv) {
    opara__pb_reader rd;
    opara__pb_field f;
    opara_result r = OPARA_OK;
    int more = 1;
    opara__pb_reader_init(&rd, data, size);
    while (r == OPARA_OK && (r = opara__pb_step(c, &rd, &f, &more)) == OPARA_OK && more) {
        if (f.number == 1) r = opara__pb_string(c, &f, "key", &kv->key);
        else if (f.number == 2) r = opara__pb_string(c, &f, "value", &kv->value);
    }
    if (r == OPARA_OK && !kv->key) kv->key = "";
    if (r == OPARA_OK && !kv->value) kv->value = "";
    return r;
}

static opara_result opara__pb_tensor(opara__pb_ctx* c, const uint8_t* data, size_t size, opara__onnx_tensor* t) {
    size_t n_dims = 0, n_ext = 0, i_dims = 0, i_ext = 0, i_f = 0, i_i32 = 0, i_i64 = 0, i_d = 0, i_u64 = 0;
    int pass;
    memset(t, 0, sizeof *t);
    t->name = "";
    for (pass = 0; pass < 2; ++pass) {
        opara__pb_reader rd;
        opara__pb_field f;
        opara_result r = OPARA_OK;
        int more = 1;
        if (pass == 1) {
            if (n_dims > 0xffffffffu || n_ext > 0xffffffffu)
                return opara__fail(c->rt, OPARA_ERR_ONNX_DECODE, "%s: too many dims", c->path);
            t->dims = (int64_t*)opara__pb_array(c, n_dims, sizeof(int64_t));
            t->external = (opara__onnx_kv*)opara__pb_array(c, n_ext, sizeof(opara__onnx_kv));
            t->float_data = (float*)opara__pb_array(c, t->n_float, sizeof(float));
            t->int32_data = (int32_t*)opara__pb_array(c, t->n_int32, sizeof(int32_t));
            t->int64_data = (int64_t*)opara__pb_array(c, t->n_int64, sizeof(int64_t));
            t->double_data = (double*)opara__pb_array(c, t->n_double, sizeof(double));
            t->uint64_data = (uint64_t*)opara__pb_array(c, t->n_uint64, sizeof(uint64_t));
            if (!t->dims || !t->external || !t->float_data || !t->int32_data || !t->int64_data || !t->double_data ||
                !t->uint64_data)
                return opara__pb_oom(c);
            t->n_dims = (uint32_t)n_dims;
            t->n_external = (uint32_t)n_ext;
        }
        opara__pb_reader_init(&rd, data, size);
        while (r == OPARA_OK && (r = opara__pb_step(c, &rd, &f, &more)) == OPARA_OK && more) {
            switch (f.number) {
            case 1: r = opara__pb_repeated(c, pass, &f, OPARA__PB_VARINT_I64, "dims", &n_dims, t->dims, &i_dims); break;
            case 2: r = opara__pb_int32_field(c, &f, "data_type", &t->data_type); break;
            case 3: t->has_segment = 1; break;
            case 4:
                r = opara__pb_repeated(c, pass, &f, OPARA__PB_FIXED32_F32, "float_data", &t->n_float, t->float_data, &i_f);
                break;
            case 5:
                r = opara__pb_repeated(c, pass, &f, OPARA__PB_VARINT_I32, "int32_data", &t->n_int32, t->int32_data,
                                       &i_i32);
                break;
            case 6:
                r = opara__pb_expect(c, &f, OPARA__PB_WIRE_LEN, "string_data");
                if (pass == 0) t->n_string++;
                break;
            case 7:
                r = opara__pb_repeated(c, pass, &f, OPARA__PB_VARINT_I64, "int64_data", &t->n_int64, t->int64_data,
                                       &i_i64);
                break;
            case 8: if (pass == 1) r = opara__pb_string(c, &f, "name", &t->name); break;
            case 9:
                r = opara__pb_expect(c, &f, OPARA__PB_WIRE_LEN, "raw_data");
                t->has_raw = 1;
                t->raw.data = f.data;
                t->raw.size = f.size;
                break;
            case 10:
                r = opara__pb_repeated(c, pass, &f, OPARA__PB_FIXED64_F64, "double_data", &t->n_double, t->double_data,
                                       &i_d);
                break;
            case 11:
                r = opara__pb_repeated(c, pass, &f, OPARA__PB_VARINT_U64, "uint64_data", &t->n_uint64, t->uint64_data,
                                       &i_u64);
                break;
            case 13:
                r = opara__pb_expect(c, &f, OPARA__PB_WIRE_LEN, "external_data");
                if (r == OPARA_OK && pass == 0) n_ext++;
                if (r == OPARA_OK && pass == 1) {
                    size_t mark = opara__pb_push(c, "external_data", (long)i_ext);
                    r = opara__pb_kv(c, f.data, f.size, &t->external[i_ext++]);
                    if (r == OPARA_OK) opara__pb_pop(c, mark);
                }
                break;
            case 14: r = opara__pb_int32_field(c, &f, "data_location", &t->data_location); break;
            default: break;
            }
        }
        if (r != OPARA_OK) return r;
    }
    return OPARA_OK;
}

/* Decodes a nested message held by field f into a pool-allocated struct at *out. */
typedef opara_result (*opara__pb_msg_fn)(opara__pb_ctx* c, const uint8_t* data, size_t size, void* out);

static opara_result opara__pb_tensor_msg(opara__pb_ctx* c, const uint8_t* data, size_t size, void* out) {
    return opara__pb_tensor(c, data, size, (opara__onnx_tensor*)out);
}

static opara_result opara__pb_nested(opara__pb_ctx* c, const opara__pb_field* f, const char* field, long index,
                                     opara__pb_msg_fn fn, void* out) {
    size_t mark;
    opara_result r = opara__pb_expect(c, f, OPARA__PB_WIRE_LEN, field);
    if (r != OPARA_OK) return r;
    mark = opara__pb_push(c, field, index);
    r = fn(c, f->data, f->size, out);
    if (r == OPARA_OK) opara__pb_pop(c, mark);
    return r;
}

static opara_result opara__pb_graph(opara__pb_ctx* c, const uint8_t* data, size_t size, void* out);

/* An attribute's graph (field g), decoded like the main graph. */
static opara_result opara__pb_subgraph(opara__pb_ctx* c, const opara__pb_field* f, opara__onnx_attr* a) {
    opara_result r;
    if (c->graph_depth >= OPARA__ONNX_MAX_GRAPH_DEPTH)
        return opara__fail(c->rt, OPARA_ERR_ONNX_DECODE, "%s: subgraphs nested more than %d deep", c->path,
                           OPARA__ONNX_MAX_GRAPH_DEPTH);
    a->g = (opara__onnx_graph*)opara__pb_array(c, 1, sizeof(opara__onnx_graph));
    if (!a->g) return opara__pb_oom(c);
    c->graph_depth++;
    r = opara__pb_nested(c, f, "g", -1, opara__pb_graph, a->g);
    c->graph_depth--;
    return r;
}

static opara_result opara__pb_attr(opara__pb_ctx* c, const uint8_t* data, size_t size, void* out) {
    opara__onnx_attr* a = (opara__onnx_attr*)out;
    size_t n_floats = 0, n_ints = 0, n_strings = 0, i_f = 0, i_i = 0, i_s = 0;
    int pass;
    a->name = "";
    for (pass = 0; pass < 2; ++pass) {
        opara__pb_reader rd;
        opara__pb_field f;
        opara_result r = OPARA_OK;
        int more = 1;
        if (pass == 1) {
            if (n_floats > 0xffffffffu || n_ints > 0xffffffffu || n_strings > 0xffffffffu)
                return opara__fail(c->rt, OPARA_ERR_ONNX_DECODE, "%s: too many values", c->path);
            a->floats = (float*)opara__pb_array(c, n_floats, sizeof(float));
            a->ints = (int64_t*)opara__pb_array(c, n_ints, sizeof(int64_t));
            a->strings = (opara__pb_bytes*)opara__pb_array(c, n_strings, sizeof(opara__pb_bytes));
            if (!a->floats || !a->ints || !a->strings) return opara__pb_oom(c);
            a->n_floats = (uint32_t)n_floats;
            a->n_ints = (uint32_t)n_ints;
            a->n_strings = (uint32_t)n_strings;
        }
        opara__pb_reader_init(&rd, data, size);
        while (r == OPARA_OK && (r = opara__pb_step(c, &rd, &f, &more)) == OPARA_OK && more) {
            switch (f.number) {
            case 1: if (pass == 1) r = opara__pb_string(c, &f, "name", &a->name); break;
            case 2:
                r = opara__pb_expect(c, &f, OPARA__PB_WIRE_FIXED32, "f");
                if (r == OPARA_OK) {
                    uint32_t bits = (uint32_t)f.u;
                    memcpy(&a->f, &bits, 4);
                    a->has_f = 1;
                }
                break;
            case 3: r = opara__pb_varint_field(c, &f, "i", &a->i); a->has_i = 1; break;
            case 4:
                r = opara__pb_expect(c, &f, OPARA__PB_WIRE_LEN, "s");
                a->s.data = f.data;
                a->s.size = f.size;
                a->has_s = 1;
                break;
            case 5:
                if (pass == 0) {
                    r = opara__pb_expect(c, &f, OPARA__PB_WIRE_LEN, "t");
                    break;
                }
                a->t = (opara__onnx_tensor*)opara__pb_array(c, 1, sizeof(opara__onnx_tensor));
                r = a->t ? opara__pb_nested(c, &f, "t", -1, opara__pb_tensor_msg, a->t) : opara__pb_oom(c);
                break;
            case 6:
                r = pass == 0 ? opara__pb_expect(c, &f, OPARA__PB_WIRE_LEN, "g") : opara__pb_subgraph(c, &f, a);
                a->has_g = 1;
                break;
            case 7: r = opara__pb_repeated(c, pass, &f, OPARA__PB_FIXED32_F32, "floats", &n_floats, a->floats, &i_f); break;
            case 8: r = opara__pb_repeated(c, pass, &f, OPARA__PB_VARINT_I64, "ints", &n_ints, a->ints, &i_i); break;
            case 9:
                r = opara__pb_expect(c, &f, OPARA__PB_WIRE_LEN, "strings");
                if (r == OPARA_OK && pass == 0) n_strings++;
                if (r == OPARA_OK && pass == 1) {
                    a->strings[i_s].data = f.data;
                    a->strings[i_s++].size = f.size;
                }
                break;
            case 11: r = opara__pb_expect(c, &f, OPARA__PB_WIRE_LEN, "graphs"); a->has_g = 1; break;
            case 20: r = opara__pb_int32_field(c, &f, "type", &a->type); break;
            default: break;
            }
        }
        if (r != OPARA_OK) return r;
    }
    return OPARA_OK;
}

static opara_result opara__pb_dim(opara__pb_ctx* c, const uint8_t* data, size_t size, void* out) {
    opara__onnx_dim* d = (opara__onnx_dim*)out;
    opara__pb_reader rd;
    opara__pb_field f;
    opara_result r = OPARA_OK;
    int more = 1;
    opara__pb_reader_init(&rd, data, size);
    while (r == OPARA_OK && (r = opara__pb_step(c, &rd, &f, &more)) == OPARA_OK && more) {
        if (f.number == 1) {
            r = opara__pb_varint_field(c, &f, "dim_value", &d->value);
            d->has_value = 1;
            d->param = NULL;
        } else if (f.number == 2) {
            r = opara__pb_string(c, &f, "dim_param", &d->param);
            d->has_value = 0;
        }
    }
    return r;
}

static opara_result opara__pb_shape(opara__pb_ctx* c, const uint8_t* data, size_t size, void* out) {
    opara__onnx_value_info* vi = (opara__onnx_value_info*)out;
    size_t n = 0, i = 0;
    int pass;
    for (pass = 0; pass < 2; ++pass) {
        opara__pb_reader rd;
        opara__pb_field f;
        opara_result r = OPARA_OK;
        int more = 1;
        if (pass == 1) {
            if (n > OPARA_MAX_DIMS * 64) return opara__fail(c->rt, OPARA_ERR_ONNX_DECODE, "%s: too many dims", c->path);
            vi->dims = (opara__onnx_dim*)opara__pb_array(c, n, sizeof(opara__onnx_dim));
            if (!vi->dims) return opara__pb_oom(c);
            vi->n_dims = (uint32_t)n;
        }
        opara__pb_reader_init(&rd, data, size);
        while (r == OPARA_OK && (r = opara__pb_step(c, &rd, &f, &more)) == OPARA_OK && more) {
            if (f.number != 1) continue;
            if (pass == 0) {
                r = opara__pb_expect(c, &f, OPARA__PB_WIRE_LEN, "dim");
                n++;
            } else {
                r = opara__pb_nested(c, &f, "dim", (long)i, opara__pb_dim, &vi->dims[i]);
                i++;
            }
        }
        if (r != OPARA_OK) return r;
    }
    vi->has_shape = 1;
    return OPARA_OK;
}

static opara_result opara__pb_tensor_type(opara__pb_ctx* c, const uint8_t* data, size_t size, void* out) {
    opara__onnx_value_info* vi = (opara__onnx_value_info*)out;
    opara__pb_reader rd;
    opara__pb_field f;
    opara_result r = OPARA_OK;
    int more = 1;
    vi->is_tensor = 1;
    opara__pb_reader_init(&rd, data, size);
    while (r == OPARA_OK && (r = opara__pb_step(c, &rd, &f, &more)) == OPARA_OK && more) {
        if (f.number == 1) r = opara__pb_int32_field(c, &f, "elem_type", &vi->elem_type);
        else if (f.number == 2) r = opara__pb_nested(c, &f, "shape", -1, opara__pb_shape, vi);
    }
    return r;
}

static opara_result opara__pb_type(opara__pb_ctx* c, const uint8_t* data, size_t size, void* out) {
    opara__pb_reader rd;
    opara__pb_field f;
    opara_result r = OPARA_OK;
    int more = 1;
    opara__pb_reader_init(&rd, data, size);
    while (r == OPARA_OK && (r = opara__pb_step(c, &rd, &f, &more)) == OPARA_OK && more)
        if (f.number == 1) r = opara__pb_nested(c, &f, "tensor_type", -1, opara__pb_tensor_type, out);
    return r;
}

static opara_result opara__pb_value_info(opara__pb_ctx* c, const uint8_t* data, size_t size, void* out) {
    opara__onnx_value_info* vi = (opara__onnx_value_info*)out;
    opara__pb_reader rd;
    opara__pb_field f;
    opara_result r = OPARA_OK;
    int more = 1;
    vi->name = "";
    opara__pb_reader_init(&rd, data, size);
    while (r == OPARA_OK && (r = opara__pb_step(c, &rd, &f, &more)) == OPARA_OK && more) {
        if (f.number == 1) r = opara__pb_string(c, &f, "name", &vi->name);
        else if (f.number == 2) r = opara__pb_nested(c, &f, "type", -1, opara__pb_type, vi);
    }
    return r;
}

static opara_result opara__pb_node(opara__pb_ctx* c, const uint8_t* data, size_t size, void* out) {
    opara__onnx_node* n = (opara__onnx_node*)out;
    size_t n_in = 0, n_out = 0, n_attr = 0, i_in = 0, i_out = 0, i_attr = 0;
    int pass;
    n->name = n->op_type = n->domain = "";
    for (pass = 0; pass < 2; ++pass) {
        opara__pb_reader rd;
        opara__pb_field f;
        opara_result r = OPARA_OK;
        int more = 1;
        if (pass == 1) {
            n->inputs = (const char**)opara__pb_array(c, n_in, sizeof(char*));
            n->outputs = (const char**)opara__pb_array(c, n_out, sizeof(char*));
            n->attrs = (opara__onnx_attr*)opara__pb_array(c, n_attr, sizeof(opara__onnx_attr));
            if (!n->inputs || !n->outputs || !n->attrs) return opara__pb_oom(c);
            n->n_inputs = (uint32_t)n_in;
            n->n_outputs = (uint32_t)n_out;
            n->n_attrs = (uint32_t)n_attr;
        }
        opara__pb_reader_init(&rd, data, size);
        while (r == OPARA_OK && (r = opara__pb_step(c, &rd, &f, &more)) == OPARA_OK && more) {
            switch (f.number) {
            case 1:
                if (pass == 0) r = opara__pb_expect(c, &f, OPARA__PB_WIRE_LEN, "input"), n_in++;
                else r = opara__pb_string(c, &f, "input", &n->inputs[i_in++]);
                break;
            case 2:
                if (pass == 0) r = opara__pb_expect(c, &f, OPARA__PB_WIRE_LEN, "output"), n_out++;
                else r = opara__pb_string(c, &f, "output", &n->outputs[i_out++]);
                break;
            case 3: if (pass == 1) r = opara__pb_string(c, &f, "name", &n->name); break;
            case 4: if (pass == 1) r = opara__pb_string(c, &f, "op_type", &n->op_type); break;
            case 5:
                if (pass == 0) r = opara__pb_expect(c, &f, OPARA__PB_WIRE_LEN, "attribute"), n_attr++;
                else r = opara__pb_nested(c, &f, "attribute", (long)i_attr, opara__pb_attr, &n->attrs[i_attr]), i_attr++;
                break;
            case 7: if (pass == 1) r = opara__pb_string(c, &f, "domain", &n->domain); break;
            default: break;
            }
        }
        if (r != OPARA_OK) return r;
    }
    return OPARA_OK;
}

static opara_result opara__pb_graph(opara__pb_ctx* c, const uint8_t* data, size_t size, void* out) {
    opara__onnx_graph* g = (opara__onnx_graph*)out;
    size_t cnt[5] = {0, 0, 0, 0, 0}, idx[5] = {0, 0, 0, 0, 0};
    int pass;
    g->name = "";
    for (pass = 0; pass < 2; ++pass) {
        opara__pb_reader rd;
        opara__pb_field f;
        opara_result r = OPARA_OK;
        int more = 1, k;
        if (pass == 1) {
            for (k = 0; k < 5; ++k)
                if (cnt[k] > 0x7fffffffu) return opara__fail(c->rt, OPARA_ERR_ONNX_DECODE, "%s: too many entries", c->path);
            g->nodes = (opara__onnx_node*)opara__pb_array(c, cnt[0], sizeof(opara__onnx_node));
            g->initializers = (opara__onnx_tensor*)opara__pb_array(c, cnt[1], sizeof(opara__onnx_tensor));
            g->inputs = (opara__onnx_value_info*)opara__pb_array(c, cnt[2], sizeof(opara__onnx_value_info));
            g->outputs = (opara__onnx_value_info*)opara__pb_array(c, cnt[3], sizeof(opara__onnx_value_info));
            g->value_infos = (opara__onnx_value_info*)opara__pb_array(c, cnt[4], sizeof(opara__onnx_value_info));
            if (!g->nodes || !g->initializers || !g->inputs || !g->outputs || !g->value_infos) return opara__pb_oom(c);
            g->n_nodes = (uint32_t)cnt[0];
            g->n_initializers = (uint32_t)cnt[1];
            g->n_inputs = (uint32_t)cnt[2];
            g->n_outputs = (uint32_t)cnt[3];
            g->n_value_infos = (uint32_t)cnt[4];
        }
        opara__pb_reader_init(&rd, data, size);
        while (r == OPARA_OK && (r = opara__pb_step(c, &rd, &f, &more)) == OPARA_OK && more) {
            static const char* const names[5] = {"node", "initializer", "input", "output", "value_info"};
            int slot = f.number == 1 ? 0 : f.number == 5 ? 1 : f.number == 11 ? 2 : f.number == 12 ? 3 :
                       f.number == 13 ? 4 : -1;
            if (f.number == 2 && pass == 1) r = opara__pb_string(c, &f, "name", &g->name);
            if (f.number == 15 && pass == 0) {
                r = opara__pb_expect(c, &f, OPARA__PB_WIRE_LEN, "sparse_initializer");
                g->n_sparse_initializers++;
            }
            if (slot < 0 || r != OPARA_OK) continue;
            if (pass == 0) {
                r = opara__pb_expect(c, &f, OPARA__PB_WIRE_LEN, names[slot]);
                cnt[slot]++;
                continue;
            }
            switch (slot) {
            case 0: r = opara__pb_nested(c, &f, "node", (long)idx[0], opara__pb_node, &g->nodes[idx[0]]); break;
            case 1:
                r = opara__pb_nested(c, &f, "initializer", (long)idx[1], opara__pb_tensor_msg, &g->initializers[idx[1]]);
                break;
            case 2: r = opara__pb_nested(c, &f, "input", (long)idx[2], opara__pb_value_info, &g->inputs[idx[2]]); break;
            case 3: r = opara__pb_nested(c, &f, "output", (long)idx[3], opara__pb_value_info, &g->outputs[idx[3]]); break;
            default:
                r = opara__pb_nested(c, &f, "value_info", (long)idx[4], opara__pb_value_info, &g->value_infos[idx[4]]);
                break;
            }
            idx[slot]++;
        }
        if (r != OPARA_OK) return r;
    }
    return OPARA_OK;
}

static opara_result opara__pb_opset(opara__pb_ctx* c, const uint8_t* data, size_t size, void* out) {
    opara__onnx_opset* o = (opara__onnx_opset*)out;
    opara__pb_reader rd;
    opara__pb_field f;
    opara_result r = OPARA_OK;
    int more = 1;
    o->domain = "";
    opara__pb_reader_init(&rd, data, size);
    while (r == OPARA_OK && (r = opara__pb_step(c, &rd, &f, &more)) == OPARA_OK && more) {
        if (f.number == 1) r = opara__pb_string(c, &f, "domain", &o->domain);
        else if (f.number == 2) r = opara__pb_varint_field(c, &f, "version", &o->version);
    }
    return r;
}

static opara_result opara__pb_model(opara__pb_ctx* c, const uint8_t* data, size_t size, opara__onnx_model* m) {
    size_t n_opsets = 0, i_opset = 0;
    int pass;
    for (pass = 0; pass < 2; ++pass) {
        opara__pb_reader rd;
        opara__pb_field f;
        opara_result r = OPARA_OK;
        int more = 1;
        if (pass == 1) {
            if (n_opsets > 0xffffu) return opara__fail(c->rt, OPARA_ERR_ONNX_DECODE, "too many opset_import entries");
            m->opsets = (opara__onnx_opset*)opara__pb_array(c, n_opsets, sizeof(opara__onnx_opset));
            if (!m->opsets) return opara__pb_oom(c);
            m->n_opsets = (uint32_t)n_opsets;
        }
        opara__pb_reader_init(&rd, data, size);
        while (r == OPARA_OK && (r = opara__pb_step(c, &rd, &f, &more)) == OPARA_OK && more) {
            switch (f.number) {
            case 1: r = opara__pb_varint_field(c, &f, "ir_version", &m->ir_version); break;
            case 2: if (pass == 1) r = opara__pb_string(c, &f, "producer_name", &m->producer_name); break;
            case 7:
                if (pass == 0) {
                    r = opara__pb_expect(c, &f, OPARA__PB_WIRE_LEN, "graph");
                    break;
                }
                memset(&m->graph, 0, sizeof m->graph);
                r = opara__pb_nested(c, &f, "graph", -1, opara__pb_graph, &m->graph);
                m->has_graph = 1;
                break;
            case 8:
                if (pass == 0) r = opara__pb_expect(c, &f, OPARA__PB_WIRE_LEN, "opset_import"), n_opsets++;
                else r = opara__pb_nested(c, &f, "opset_import", (long)i_opset, opara__pb_opset, &m->opsets[i_opset]),
                     i_opset++;
                break;
            default: break;
            }
        }
        if (r != OPARA_OK) return r;
    }
    return OPARA_OK;
}

static void opara__pb_ctx_init(opara__pb_ctx* c, opara_runtime* rt, opara__pool* pool) {
    c->rt = rt;
    c->pool = pool;
    c->len = 0;
    c->graph_depth = 0;
    c->path[0] = 0;
}

OPARA__PRIVATE opara_result opara__onnx_decode_model(opara_runtime* rt, opara__pool* pool, const uint8_t* data,
                                                    size_t size, opara__onnx_model* out) {
    opara__pb_ctx c;
    memset(out, 0, sizeof *out);
    out->producer_name = "";
    opara__pb_ctx_init(&c, rt, pool);
    return opara__pb_model(&c, data, size, out);
}

OPARA__PRIVATE opara_result opara__onnx_decode_tensor(opara_runtime* rt, opara__pool* pool, const uint8_t* data,
                                                     size_t size, opara__onnx_tensor* out) {
    opara__pb_ctx c;
    opara__pb_ctx_init(&c, rt, pool);
    return opara__pb_tensor(&c, data, size, out);
}
