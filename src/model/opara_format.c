/* The .opara reader (hardened: every offset, size, index and enum is checked before use) and
   the deterministic writer. docs/FORMAT.md is the specification; both sides share the
   constants of opara_model.h. */
#include "opara_model.h"

/* ---- reader ---------------------------------------------------------------------------------- */

typedef struct opara__reader {
    opara_runtime* rt;
    const uint8_t* data;
    uint64_t total;
    uint32_t alignment;
    uint32_t n_strings, n_tensors, n_nodes, n_attrs, n_refs;
    uint64_t strings_off, strbytes_off, strbytes_size, tensors_off, nodes_off, attrs_off, refs_off;
    uint64_t payload_off, payload_size, data_off, data_size;
} opara__reader;

static const char* opara__hdr_magic_prefix_ok(const uint8_t* data, size_t size) {
    size_t n = OPARA__MIN(size, (size_t)OPARA__FORMAT_MAGIC_SIZE);
    return memcmp(data, OPARA__FORMAT_MAGIC, n) == 0 ? "" : NULL;
}

OPARA__PRIVATE uint32_t opara__format_peek_alignment(const uint8_t* data, size_t size) {
    if (size < OPARA__FORMAT_HEADER_SIZE || memcmp(data, OPARA__FORMAT_MAGIC, OPARA__FORMAT_MAGIC_SIZE) != 0) return 0;
    return opara__rd_u32(data + OPARA__HDR_ALIGNMENT);
}

static opara_result opara__read_preamble(opara__reader* r, size_t size, uint64_t* hash) {
    const uint8_t* d = r->data;
    uint32_t major, minor, header_size, flags, unknown;
    if (!opara__hdr_magic_prefix_ok(d, size))
        return opara__fail(r->rt, OPARA_ERR_BAD_MAGIC, "not a .opara model: the first bytes are not the magic");
    if (size < OPARA__FORMAT_MAGIC_SIZE)
        return opara__fail(r->rt, OPARA_ERR_TRUNCATED, "model is %zu bytes, shorter than the magic", size);
    if (size < OPARA__HDR_HEADER_SIZE + 4)
        return opara__fail(r->rt, OPARA_ERR_TRUNCATED, "model is %zu bytes: the header is cut off", size);
    major = opara__rd_u16(d + OPARA__HDR_VER_MAJOR);
    minor = opara__rd_u16(d + OPARA__HDR_VER_MINOR);
    if (major > OPARA__FORMAT_MAJOR)
        return opara__fail(r->rt, OPARA_ERR_VERSION_TOO_NEW, "format version %u.%u is newer than this library's %d.%d",
                           major, minor, OPARA__FORMAT_MAJOR, OPARA__FORMAT_MINOR);
    if (major < OPARA__FORMAT_MIN_MAJOR)
        return opara__fail(r->rt, OPARA_ERR_VERSION_TOO_OLD, "format version %u.%u is older than the oldest supported %d.0",
                           major, minor, OPARA__FORMAT_MIN_MAJOR);
    header_size = opara__rd_u32(d + OPARA__HDR_HEADER_SIZE);
    if (size < OPARA__FORMAT_HEADER_SIZE || size < header_size)
        return opara__fail(r->rt, OPARA_ERR_TRUNCATED, "model is %zu bytes: the %u-byte header is cut off", size,
                           OPARA__MAX(header_size, (uint32_t)OPARA__FORMAT_HEADER_SIZE));
    if (header_size < OPARA__FORMAT_HEADER_SIZE || header_size % 8)
        return opara__fail(r->rt, OPARA_ERR_CORRUPT, "header size %u (must be a multiple of 8, at least %d)",
                           header_size, OPARA__FORMAT_HEADER_SIZE);
    r->total = opara__rd_u64(d + OPARA__HDR_TOTAL_SIZE);
    if (r->total > (uint64_t)OPARA_MAX_MODEL_BYTES)
        return opara__fail(r->rt, OPARA_ERR_LIMIT_EXCEEDED, "model is %llu bytes (limit OPARA_MAX_MODEL_BYTES %llu)",
                           (unsigned long long)r->total, (unsigned long long)OPARA_MAX_MODEL_BYTES);
    if (r->total > size)
        return opara__fail(r->rt, OPARA_ERR_TRUNCATED, "model header says %llu bytes, only %zu are present",
                           (unsigned long long)r->total, size);
    if (r->total < header_size)
        return opara__fail(r->rt, OPARA_ERR_CORRUPT, "total size %llu is smaller than the header",
                           (unsigned long long)r->total);
    flags = opara__rd_u32(d + OPARA__HDR_FLAGS);
    unknown = flags & OPARA__FORMAT_REQUIRED_MASK & ~(uint32_t)OPARA__FORMAT_KNOWN_REQUIRED_FLAGS;
    if (unknown)
        return opara__fail(r->rt, OPARA_ERR_UNKNOWN_FLAGS, "must-understand flags 0x%04x are not known to this library",
                           unknown);
    r->alignment = opara__rd_u32(d + OPARA__HDR_ALIGNMENT);
    if (!opara__is_pow2(r->alignment) || r->alignment < OPARA__FORMAT_MIN_ALIGN || r->alignment > OPARA__FORMAT_MAX_ALIGN)
        return opara__fail(r->rt, OPARA_ERR_BAD_ALIGNMENT, "alignment %u is not a power of two in [%u, %u]",
                           r->alignment, OPARA__FORMAT_MIN_ALIGN, OPARA__FORMAT_MAX_ALIGN);
    if ((uintptr_t)d % r->alignment)
        return opara__fail(r->rt, OPARA_ERR_BAD_ALIGNMENT, "model buffer %p is not aligned to %u bytes", (const void*)d,
                           r->alignment);
    *hash = opara__rd_u64(d + OPARA__HDR_HASH);
    r->strings_off = header_size; /* the first section may not start inside the header */
    return OPARA_OK;
}

static opara_result opara__read_counts(opara__reader* r) {
    const uint8_t* d = r->data;
    r->n_strings = opara__rd_u32(d + OPARA__HDR_N_STRINGS);
    r->n_tensors = opara__rd_u32(d + OPARA__HDR_N_TENSORS);
    r->n_nodes = opara__rd_u32(d + OPARA__HDR_N_NODES);
    r->n_attrs = opara__rd_u32(d + OPARA__HDR_N_ATTRS);
    r->n_refs = opara__rd_u32(d + OPARA__HDR_N_REFS);
    if (r->n_strings > OPARA_MAX_STRINGS)
        return opara__fail(r->rt, OPARA_ERR_LIMIT_EXCEEDED, "%u strings (limit OPARA_MAX_STRINGS %u)", r->n_strings,
                           (unsigned)OPARA_MAX_STRINGS);
    if (r->n_tensors > OPARA_MAX_TENSORS)
        return opara__fail(r->rt, OPARA_ERR_LIMIT_EXCEEDED, "%u tensors (limit OPARA_MAX_TENSORS %u)", r->n_tensors,
                           (unsigned)OPARA_MAX_TENSORS);
    if (r->n_nodes > OPARA_MAX_NODES)
        return opara__fail(r->rt, OPARA_ERR_LIMIT_EXCEEDED, "%u nodes (limit OPARA_MAX_NODES %u)", r->n_nodes,
                           (unsigned)OPARA_MAX_NODES);
    if ((uint64_t)r->n_attrs > (uint64_t)r->n_nodes * OPARA_MAX_ATTRS + 0)
        return opara__fail(r->rt, OPARA_ERR_LIMIT_EXCEEDED, "%u attributes for %u nodes (limit OPARA_MAX_ATTRS %u each)",
                           r->n_attrs, r->n_nodes, (unsigned)OPARA_MAX_ATTRS);
    return OPARA_OK;
}

typedef struct opara__section {
    const char* name;
    uint64_t off, size;
} opara__section;

/* Sections must lie inside the file, after the header, in the order of the spec, without overlap. */
static opara_result opara__read_sections(opara__reader* r) {
    const uint8_t* d = r->data;
    opara__section s[8];
    uint64_t prev_end = r->strings_off;
    int i;
    r->strings_off = opara__rd_u64(d + OPARA__HDR_STRINGS_OFF);
    r->strbytes_off = opara__rd_u64(d + OPARA__HDR_STRBYTES_OFF);
    r->strbytes_size = opara__rd_u64(d + OPARA__HDR_STRBYTES_SIZE);
    r->tensors_off = opara__rd_u64(d + OPARA__HDR_TENSORS_OFF);
    r->nodes_off = opara__rd_u64(d + OPARA__HDR_NODES_OFF);
    r->attrs_off = opara__rd_u64(d + OPARA__HDR_ATTRS_OFF);
    r->refs_off = opara__rd_u64(d + OPARA__HDR_REFS_OFF);
    r->payload_off = opara__rd_u64(d + OPARA__HDR_PAYLOAD_OFF);
    r->payload_size = opara__rd_u64(d + OPARA__HDR_PAYLOAD_SIZE);
    r->data_off = opara__rd_u64(d + OPARA__HDR_DATA_OFF);
    r->data_size = opara__rd_u64(d + OPARA__HDR_DATA_SIZE);
    s[0].name = "string index", s[0].off = r->strings_off, s[0].size = (uint64_t)r->n_strings * OPARA__FORMAT_STRING_SIZE;
    s[1].name = "string bytes", s[1].off = r->strbytes_off, s[1].size = r->strbytes_size;
    s[2].name = "tensor table", s[2].off = r->tensors_off, s[2].size = (uint64_t)r->n_tensors * OPARA__FORMAT_TENSOR_SIZE;
    s[3].name = "node table", s[3].off = r->nodes_off, s[3].size = (uint64_t)r->n_nodes * OPARA__FORMAT_NODE_SIZE;
    s[4].name = "attribute table", s[4].off = r->attrs_off, s[4].size = (uint64_t)r->n_attrs * OPARA__FORMAT_ATTR_SIZE;
    s[5].name = "reference table", s[5].off = r->refs_off, s[5].size = (uint64_t)r->n_refs * 4;
    s[6].name = "attribute payload", s[6].off = r->payload_off, s[6].size = r->payload_size;
    s[7].name = "data section", s[7].off = r->data_off, s[7].size = r->data_size;
    for (i = 0; i < 8; ++i) {
        if (!opara__range_ok(s[i].off, s[i].size, r->total))
            return opara__fail(r->rt, OPARA_ERR_OUT_OF_BOUNDS, "%s at offset %llu, %llu bytes, ends outside the %llu-byte model",
                               s[i].name, (unsigned long long)s[i].off, (unsigned long long)s[i].size,
                               (unsigned long long)r->total);
        if (s[i].off < prev_end)
            return opara__fail(r->rt, OPARA_ERR_CORRUPT, "%s at offset %llu overlaps what precedes it (ends at %llu)",
                               s[i].name, (unsigned long long)s[i].off, (unsigned long long)prev_end);
        prev_end = s[i].off + s[i].size;
    }
    if (r->data_off % r->alignment)
        return opara__fail(r->rt, OPARA_ERR_BAD_ALIGNMENT, "data section offset %llu is not a multiple of the alignment %u",
                           (unsigned long long)r->data_off, r->alignment);
    return OPARA_OK;
}

/* ---- strings: index entries {u32 offset, u32 length} into the string bytes, each NUL-terminated */

static opara_result opara__check_strings(opara__reader* r) {
    uint32_t i;
    const uint8_t* bytes = r->data + r->strbytes_off;
    for (i = 0; i < r->n_strings; ++i) {
        const uint8_t* e = r->data + r->strings_off + (size_t)i * OPARA__FORMAT_STRING_SIZE;
        uint32_t off = opara__rd_u32(e), len = opara__rd_u32(e + 4);
        if (len > OPARA_MAX_NAME)
            return opara__fail(r->rt, OPARA_ERR_LIMIT_EXCEEDED, "string %u is %u bytes (limit OPARA_MAX_NAME %u)", i, len,
                               (unsigned)OPARA_MAX_NAME);
        if (!opara__range_ok(off, (uint64_t)len + 1, r->strbytes_size))
            return opara__fail(r->rt, OPARA_ERR_OUT_OF_BOUNDS, "string %u: bytes [%u, %llu) outside the string bytes [0, %llu)",
                               i, off, (unsigned long long)off + len + 1, (unsigned long long)r->strbytes_size);
        if (bytes[(size_t)off + len] != 0 || memchr(bytes + off, 0, len) != NULL)
            return opara__fail(r->rt, OPARA_ERR_CORRUPT, "string %u is not a %u-byte NUL-terminated string", i, len);
    }
    return OPARA_OK;
}

/* The string with index idx (checked by opara__check_strings), or NULL with BAD_INDEX reported. */
static const char* opara__string(opara__reader* r, uint32_t idx, const char* what, uint32_t owner) {
    if (idx >= r->n_strings) {
        opara__fail(r->rt, OPARA_ERR_BAD_INDEX, "%s %u: string index %u out of range (%u strings)", what, owner, idx,
                    r->n_strings);
        return NULL;
    }
    return (const char*)r->data + r->strbytes_off +
           opara__rd_u32(r->data + r->strings_off + (size_t)idx * OPARA__FORMAT_STRING_SIZE);
}

/* ---- tensors --------------------------------------------------------------------------------- */

static opara_result opara__read_shape(opara__reader* r, uint32_t t, const char* name, const uint8_t* rec,
                                      opara__shape* shape) {
    uint32_t rank = rec[6], k;
    if (rank == OPARA__FORMAT_RANK_UNKNOWN) {
        shape->ndim = -1;
        return OPARA_OK;
    }
    if (rank > OPARA__FORMAT_MAX_RANK)
        return opara__fail(r->rt, OPARA_ERR_CORRUPT, "tensor %u '%s': rank %u (the format allows %d)", t, name, rank,
                           OPARA__FORMAT_MAX_RANK);
    if (rank > OPARA_MAX_DIMS)
        return opara__fail(r->rt, OPARA_ERR_LIMIT_EXCEEDED, "tensor %u '%s': rank %u (limit OPARA_MAX_DIMS %d)", t, name,
                           rank, OPARA_MAX_DIMS);
    shape->ndim = (int32_t)rank;
    for (k = 0; k < OPARA__FORMAT_MAX_RANK; ++k) {
        int64_t dim = (int64_t)opara__rd_u64(rec + 16 + 8 * k);
        if (k >= rank) {
            if (dim != 0)
                return opara__fail(r->rt, OPARA_ERR_CORRUPT, "tensor %u '%s': unused dimension %u is %lld, not 0", t, name,
                                   k, (long long)dim);
            continue;
        }
        if (dim < OPARA__FORMAT_DIM_BATCH)
            return opara__fail(r->rt, OPARA_ERR_CORRUPT, "tensor %u '%s': dimension %u is %lld", t, name, k, (long long)dim);
        shape->dims[k] = dim == OPARA__FORMAT_DIM_BATCH ? OPARA__DIM_BATCH : dim;
    }
    return OPARA_OK;
}

typedef struct opara__extent {
    uint64_t off, size;
    uint32_t tensor;
} opara__extent;

static opara_result opara__read_tensor(opara__reader* r, opara__graph* g, uint32_t t, opara__extent* ext, uint32_t* n_ext) {
    const uint8_t* rec = r->data + r->tensors_off + (size_t)t * OPARA__FORMAT_TENSOR_SIZE;
    const char* name = opara__string(r, opara__rd_u32(rec), "tensor", t);
    uint32_t dtype = opara__rd_u16(rec + 4), kind = rec[7];
    uint64_t off = opara__rd_u64(rec + 80), size = opara__rd_u64(rec + 88);
    opara__shape shape;
    opara_result res;
    int32_t index;
    if (!name) return OPARA_ERR_BAD_INDEX;
    if (!name[0]) return opara__fail(r->rt, OPARA_ERR_CORRUPT, "tensor %u has an empty name", t);
    if (opara__graph_find_value(g, name) >= 0)
        return opara__fail(r->rt, OPARA_ERR_CORRUPT, "tensor %u: duplicate name '%s' (also tensor %d)", t, name,
                           opara__graph_find_value(g, name));
    if (opara_dtype_size((opara_dtype)dtype) == 0)
        return opara__fail(r->rt, OPARA_ERR_BAD_DTYPE, "tensor %u '%s': unknown data type %u", t, name, dtype);
    if (kind > OPARA__VALUE_CONST)
        return opara__fail(r->rt, OPARA_ERR_BAD_ENUM, "tensor %u '%s': unknown kind %u", t, name, kind);
    if (opara__rd_u32(rec + 8) != 0 || opara__rd_u32(rec + 12) != 0)
        return opara__fail(r->rt, OPARA_ERR_CORRUPT, "tensor %u '%s': reserved fields are not zero", t, name);
    memset(&shape, 0, sizeof shape);
    res = opara__read_shape(r, t, name, rec, &shape);
    if (res != OPARA_OK) return res;
    res = opara__graph_insert_value(g, name, (opara_dtype)dtype, &shape, &index);
    if (res != OPARA_OK) return res;
    if (kind != OPARA__VALUE_CONST) {
        if (off || size)
            return opara__fail(r->rt, OPARA_ERR_CORRUPT, "tensor %u '%s' is not a constant but has data [%llu, +%llu)", t,
                               name, (unsigned long long)off, (unsigned long long)size);
        if (kind == OPARA__VALUE_INPUT) g->values[t].kind = OPARA__VALUE_INPUT; /* checked against the input list */
        return OPARA_OK;
    }
    if (off % r->alignment)
        return opara__fail(r->rt, OPARA_ERR_BAD_ALIGNMENT, "tensor %u '%s': data offset %llu is not a multiple of %u", t,
                           name, (unsigned long long)off, r->alignment);
    if (!opara__range_ok(off, size, r->data_size))
        return opara__fail(r->rt, OPARA_ERR_OUT_OF_BOUNDS,
                           "tensor %u '%s': data [%llu, %llu) outside the data section [%llu, %llu)", t, name,
                           (unsigned long long)(r->data_off + off), (unsigned long long)(r->data_off + off + size),
                           (unsigned long long)r->data_off, (unsigned long long)(r->data_off + r->data_size));
    if (size > (uint64_t)(size_t)-1)
        return opara__fail(r->rt, OPARA_ERR_LIMIT_EXCEEDED, "tensor %u '%s': %llu bytes", t, name, (unsigned long long)size);
    if (size) {
        ext[*n_ext].off = off;
        ext[*n_ext].size = size;
        ext[*n_ext].tensor = t;
        ++*n_ext;
    }
    return opara__graph_set_const(g, (int32_t)t, r->data + r->data_off + off, size, 0);
}

static int opara__extent_cmp(const opara__extent* a, const opara__extent* b) {
    if (a->off != b->off) return a->off < b->off ? -1 : 1;
    return a->tensor < b->tensor ? -1 : a->tensor > b->tensor;
}

/* Heap sort (no recursion, no qsort callback casts). */
static void opara__extent_sift(opara__extent* e, size_t start, size_t n) {
    size_t root = start;
    while (2 * root + 1 < n) {
        size_t child = 2 * root + 1;
        opara__extent tmp;
        if (child + 1 < n && opara__extent_cmp(&e[child], &e[child + 1]) < 0) ++child;
        if (opara__extent_cmp(&e[root], &e[child]) >= 0) return;
        tmp = e[root], e[root] = e[child], e[child] = tmp;
        root = child;
    }
}

static void opara__extent_sort(opara__extent* e, size_t n) {
    size_t i;
    for (i = n / 2; i-- > 0;) opara__extent_sift(e, i, n);
    for (i = n; i-- > 1;) {
        opara__extent tmp = e[0];
        e[0] = e[i], e[i] = tmp;
        opara__extent_sift(e, 0, i);
    }
}

static opara_result opara__check_overlap(opara__reader* r, const opara__graph* g, opara__extent* ext, uint32_t n) {
    uint32_t i;
    opara__extent_sort(ext, n);
    for (i = 1; i < n; ++i)
        if (ext[i].off - ext[i - 1].off < ext[i - 1].size)
            return opara__fail(r->rt, OPARA_ERR_CORRUPT, "tensor %u '%s' data [%llu, %llu) overlaps tensor %u '%s' [%llu, %llu)",
                               ext[i].tensor, g->values[ext[i].tensor].name, (unsigned long long)ext[i].off,
                               (unsigned long long)(ext[i].off + ext[i].size), ext[i - 1].tensor,
                               g->values[ext[i - 1].tensor].name, (unsigned long long)ext[i - 1].off,
                               (unsigned long long)(ext[i - 1].off + ext[i - 1].size));
    return OPARA_OK;
}

static opara_result opara__read_tensors(opara__reader* r, opara__graph* g) {
    opara__extent* ext = (opara__extent*)opara__calloc(r->rt, (size_t)r->n_tensors + 1, sizeof(opara__extent));
    uint32_t t, n_ext = 0;
    opara_result res = OPARA_OK;
    if (!ext) return opara__fail(r->rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory reading %u tensors", r->n_tensors);
    for (t = 0; t < r->n_tensors && res == OPARA_OK; ++t) res = opara__read_tensor(r, g, t, ext, &n_ext);
    if (res == OPARA_OK) res = opara__check_overlap(r, g, ext, n_ext);
    opara__free(r->rt, ext);
    return res;
}

/* ---- nodes and attributes -------------------------------------------------------------------- */

static int32_t opara__ref(opara__reader* r, uint32_t k) {
    return (int32_t)opara__rd_u32(r->data + r->refs_off + (size_t)k * 4);
}

static opara_result opara__read_attr(opara__reader* r, opara__graph* g, uint32_t node, const char* node_name,
                                     uint32_t a) {
    const uint8_t* rec = r->data + r->attrs_off + (size_t)a * OPARA__FORMAT_ATTR_SIZE;
    const char* name = opara__string(r, opara__rd_u32(rec), "attribute", a);
    uint32_t type = rec[4], count = opara__rd_u32(rec + 8);
    uint64_t value = opara__rd_u64(rec + 16);
    const opara__node* n = &g->nodes[node];
    if (!name) return OPARA_ERR_BAD_INDEX;
    if (!name[0]) return opara__fail(r->rt, OPARA_ERR_CORRUPT, "node %u '%s': attribute %u has an empty name", node, node_name, a);
    if (opara__node_attr(n, name))
        return opara__fail(r->rt, OPARA_ERR_CORRUPT, "node %u '%s': attribute '%s' appears twice", node, node_name, name);
    if (rec[5] || rec[6] || rec[7] || opara__rd_u32(rec + 12))
        return opara__fail(r->rt, OPARA_ERR_CORRUPT, "node %u '%s' attribute '%s': reserved fields are not zero", node,
                           node_name, name);
    switch (type) {
    case OPARA__ATTR_INT: return opara__node_set_int(g, (int32_t)node, name, (int64_t)value);
    case OPARA__ATTR_FLOAT: {
        uint32_t bits = (uint32_t)value;
        float f;
        memcpy(&f, &bits, sizeof f);
        return opara__node_set_float(g, (int32_t)node, name, f);
    }
    case OPARA__ATTR_STRING: {
        const char* s;
        if (value > 0xFFFFFFFFu) return opara__fail(r->rt, OPARA_ERR_BAD_INDEX, "node %u '%s' attribute '%s': string index %llu",
                                                    node, node_name, name, (unsigned long long)value);
        s = opara__string(r, (uint32_t)value, "attribute", a);
        return s ? opara__node_set_string(g, (int32_t)node, name, s) : OPARA_ERR_BAD_INDEX;
    }
    case OPARA__ATTR_INTS:
    case OPARA__ATTR_FLOATS: {
        size_t elem = type == OPARA__ATTR_INTS ? 8 : 4, i;
        const uint8_t* p;
        opara_result res;
        void* tmp;
        if (count > OPARA_MAX_ATTR_ELEMS)
            return opara__fail(r->rt, OPARA_ERR_LIMIT_EXCEEDED, "node %u '%s' attribute '%s': %u elements (limit %u)", node,
                               node_name, name, count, (unsigned)OPARA_MAX_ATTR_ELEMS);
        if (!opara__range_ok(value, (uint64_t)count * elem, r->payload_size))
            return opara__fail(r->rt, OPARA_ERR_OUT_OF_BOUNDS,
                               "node %u '%s' attribute '%s': values [%llu, %llu) outside the payload [0, %llu)", node,
                               node_name, name, (unsigned long long)value, (unsigned long long)(value + count * elem),
                               (unsigned long long)r->payload_size);
        if (value % elem)
            return opara__fail(r->rt, OPARA_ERR_BAD_ALIGNMENT, "node %u '%s' attribute '%s': payload offset %llu is not a multiple of %u",
                               node, node_name, name, (unsigned long long)value, (unsigned)elem);
        p = r->data + r->payload_off + value;
        tmp = opara__calloc(r->rt, (size_t)count + 1, elem);
        if (!tmp) return opara__fail(r->rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory reading attribute '%s'", name);
        for (i = 0; i < count; ++i) {
            if (elem == 8) ((int64_t*)tmp)[i] = (int64_t)opara__rd_u64(p + 8 * i);
            else {
                uint32_t bits = opara__rd_u32(p + 4 * i);
                memcpy((float*)tmp + i, &bits, 4);
            }
        }
        res = elem == 8 ? opara__node_set_ints(g, (int32_t)node, name, (const int64_t*)tmp, count)
                        : opara__node_set_floats(g, (int32_t)node, name, (const float*)tmp, count);
        opara__free(r->rt, tmp);
        return res;
    }
    default:
        return opara__fail(r->rt, OPARA_ERR_BAD_ENUM, "node %u '%s' attribute '%s': unknown type %u", node, node_name, name,
                           type);
    }
}

static opara_result opara__check_refs(opara__reader* r, uint32_t node, const char* node_name, uint32_t first,
                                      uint32_t n_in, uint32_t n_out, int32_t* idx) {
    uint32_t k;
    if (!opara__range_ok(first, (uint64_t)n_in + n_out, r->n_refs))
        return opara__fail(r->rt, OPARA_ERR_BAD_INDEX, "node %u '%s': references [%u, %llu) outside the %u references", node,
                           node_name, first, (unsigned long long)first + n_in + n_out, r->n_refs);
    for (k = 0; k < n_in + n_out; ++k) {
        int32_t v = opara__ref(r, first + k);
        int omitted = (uint32_t)v == OPARA__FORMAT_NONE && k < n_in;
        if (!omitted && (v < 0 || (uint32_t)v >= r->n_tensors))
            return opara__fail(r->rt, OPARA_ERR_BAD_INDEX, "node %u '%s' %s %u: tensor index %u out of range (%u tensors)",
                               node, node_name, k < n_in ? "input" : "output", k < n_in ? k : k - n_in, (uint32_t)v,
                               r->n_tensors);
        idx[k] = omitted ? -1 : v;
    }
    return OPARA_OK;
}

static opara_result opara__read_node(opara__reader* r, opara__graph* g, uint32_t node, int32_t* idx) {
    const uint8_t* rec = r->data + r->nodes_off + (size_t)node * OPARA__FORMAT_NODE_SIZE;
    const char* op_name = opara__string(r, opara__rd_u32(rec), "node", node);
    const char* name = opara__string(r, opara__rd_u32(rec + 4), "node", node);
    uint32_t first = opara__rd_u32(rec + 8), n_in = opara__rd_u32(rec + 12), n_out = opara__rd_u32(rec + 16);
    uint32_t first_attr = opara__rd_u32(rec + 20), n_attrs = opara__rd_u32(rec + 24), a;
    int32_t index;
    opara__op op;
    opara_result res;
    if (!op_name || !name) return OPARA_ERR_BAD_INDEX;
    op = opara__op_from_name(op_name);
    if (op == OPARA__OP_COUNT)
        return opara__fail(r->rt, OPARA_ERR_UNSUPPORTED_OP, "node %u '%s': operator '%s' is not supported", node, name,
                           op_name);
    if (opara__rd_u32(rec + 28))
        return opara__fail(r->rt, OPARA_ERR_CORRUPT, "node %u '%s': reserved field is not zero", node, name);
    if (n_in > OPARA_MAX_NODE_IO || n_out > OPARA_MAX_NODE_IO || n_attrs > OPARA_MAX_ATTRS)
        return opara__fail(r->rt, OPARA_ERR_LIMIT_EXCEEDED, "node %u '%s': %u inputs, %u outputs, %u attributes (limits %u, %u)",
                           node, name, n_in, n_out, n_attrs, (unsigned)OPARA_MAX_NODE_IO, (unsigned)OPARA_MAX_ATTRS);
    if (n_out == 0) return opara__fail(r->rt, OPARA_ERR_CORRUPT, "node %u '%s' has no outputs", node, name);
    if (!opara__range_ok(first_attr, n_attrs, r->n_attrs))
        return opara__fail(r->rt, OPARA_ERR_BAD_INDEX, "node %u '%s': attributes [%u, %llu) outside the %u attributes", node,
                           name, first_attr, (unsigned long long)first_attr + n_attrs, r->n_attrs);
    res = opara__check_refs(r, node, name, first, n_in, n_out, idx);
    if (res != OPARA_OK) return res;
    res = opara__graph_insert_node(g, op, name, n_in, idx, n_out, idx + n_in, &index);
    if (res != OPARA_OK) return res;
    for (a = 0; a < n_attrs; ++a) {
        res = opara__read_attr(r, g, node, name, first_attr + a);
        if (res != OPARA_OK) return res;
    }
    return OPARA_OK;
}

static opara_result opara__read_nodes(opara__reader* r, opara__graph* g) {
    int32_t* idx = (int32_t*)opara__calloc(r->rt, 2 * (size_t)OPARA_MAX_NODE_IO + 1, sizeof(int32_t));
    uint32_t node;
    opara_result res = OPARA_OK;
    if (!idx) return opara__fail(r->rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory reading nodes");
    for (node = 0; node < r->n_nodes && res == OPARA_OK; ++node) res = opara__read_node(r, g, node, idx);
    opara__free(r->rt, idx);
    return res;
}

static opara_result opara__read_io(opara__reader* r, opara__graph* g) {
    uint32_t n_in = opara__rd_u32(r->data + OPARA__HDR_N_INPUTS), n_out = opara__rd_u32(r->data + OPARA__HDR_N_OUTPUTS);
    uint32_t first = opara__rd_u32(r->data + OPARA__HDR_IO_REF), k;
    if (!opara__range_ok(first, (uint64_t)n_in + n_out, r->n_refs))
        return opara__fail(r->rt, OPARA_ERR_BAD_INDEX, "graph inputs/outputs: references [%u, %llu) outside the %u references",
                           first, (unsigned long long)first + n_in + n_out, r->n_refs);
    for (k = 0; k < n_in + n_out; ++k) {
        int32_t v = opara__ref(r, first + k);
        opara_result res;
        if (v < 0 || (uint32_t)v >= r->n_tensors)
            return opara__fail(r->rt, OPARA_ERR_BAD_INDEX, "graph %s %u: tensor index %u out of range (%u tensors)",
                               k < n_in ? "input" : "output", k < n_in ? k : k - n_in, (uint32_t)v, r->n_tensors);
        if (k < n_in && g->values[v].kind != OPARA__VALUE_INPUT)
            return opara__fail(r->rt, OPARA_ERR_CORRUPT, "graph input %u: tensor %d '%s' is not of kind input", k, v,
                               g->values[v].name);
        res = k < n_in ? opara__graph_add_input(g, v) : opara__graph_add_output(g, v);
        if (res != OPARA_OK) return res;
    }
    return OPARA_OK;
}

static opara_result opara__read_metadata(opara__reader* r, opara__graph* g) {
    uint32_t producer = opara__rd_u32(r->data + OPARA__HDR_PRODUCER);
    g->source_opset = (int64_t)opara__rd_u64(r->data + OPARA__HDR_OPSET);
    if (opara__rd_u32(r->data + OPARA__HDR_RESERVED) != 0)
        return opara__fail(r->rt, OPARA_ERR_CORRUPT, "header: reserved field is not zero");
    if (producer != OPARA__FORMAT_NONE) {
        const char* s = opara__string(r, producer, "producer", 0);
        if (!s) return OPARA_ERR_BAD_INDEX;
        g->producer_name = opara__pool_strdup(r->rt, &g->pool, s);
        if (!g->producer_name) return opara__fail(r->rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory");
    }
    return OPARA_OK;
}

OPARA__PRIVATE opara_result opara__format_read(opara_runtime* rt, const uint8_t* data, size_t size, opara__graph* g,
                                              uint32_t* alignment, uint64_t* hash) {
    opara__reader r;
    opara_result res;
    memset(&r, 0, sizeof r);
    r.rt = rt;
    r.data = data;
    *alignment = 0;
    *hash = 0;
    if (!data && size) return opara__fail(rt, OPARA_ERR_INVALID_ARGS, "model data is NULL");
    if (size == 0) return opara__fail(rt, OPARA_ERR_TRUNCATED, "model is empty (0 bytes)");
    res = opara__read_preamble(&r, size, hash);
    if (res == OPARA_OK) res = opara__read_counts(&r);
    if (res == OPARA_OK) res = opara__read_sections(&r);
    if (res == OPARA_OK) res = opara__check_strings(&r);
    if (res == OPARA_OK) res = opara__read_metadata(&r, g);
    if (res == OPARA_OK) res = opara__read_tensors(&r, g);
    if (res == OPARA_OK) res = opara__read_nodes(&r, g);
    if (res == OPARA_OK) res = opara__read_io(&r, g);
    if (res == OPARA_OK) res = opara__graph_validate(g);
    *alignment = r.alignment;
    return res;
}

/* ---- writer ---------------------------------------------------------------------------------- */

typedef struct opara__strtab {
    opara_runtime* rt;
    const char** items;
    size_t n, cap;
    uint32_t* slots; /* open addressing: index + 1 */
    uint32_t n_slots;
    uint64_t bytes;
} opara__strtab;

static opara_result opara__strtab_rehash(opara__strtab* t) {
    uint32_t cap = t->n_slots ? t->n_slots * 2 : 256, i;
    uint32_t* slots = (uint32_t*)opara__calloc(t->rt, cap, sizeof(uint32_t));
    if (!slots) return OPARA_ERR_OUT_OF_MEMORY;
    for (i = 0; i < t->n; ++i) {
        uint32_t s = (uint32_t)opara__hash64(t->items[i], strlen(t->items[i]), 0) & (cap - 1);
        while (slots[s]) s = (s + 1) & (cap - 1);
        slots[s] = i + 1;
    }
    opara__free(t->rt, t->slots);
    t->slots = slots;
    t->n_slots = cap;
    return OPARA_OK;
}

/* Index of s, added at the end on first use (so the order is deterministic). */
static opara_result opara__strtab_intern(opara__strtab* t, const char* s, uint32_t* index) {
    uint32_t slot;
    size_t len = strlen(s);
    if (len > OPARA_MAX_NAME) return opara__fail(t->rt, OPARA_ERR_LIMIT_EXCEEDED, "string '%.40s...' is %zu bytes (limit %u)",
                                                 s, len, (unsigned)OPARA_MAX_NAME);
    if ((t->n + 1) * 2 > t->n_slots && opara__strtab_rehash(t) != OPARA_OK)
        return opara__fail(t->rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory writing the string table");
    for (slot = (uint32_t)opara__hash64(s, len, 0) & (t->n_slots - 1); t->slots[slot]; slot = (slot + 1) & (t->n_slots - 1))
        if (strcmp(t->items[t->slots[slot] - 1], s) == 0) {
            *index = t->slots[slot] - 1;
            return OPARA_OK;
        }
    if (opara__grow(t->rt, (void**)&t->items, &t->cap, t->n + 1, sizeof(const char*)) != OPARA_OK)
        return opara__fail(t->rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory writing the string table");
    t->items[t->n] = s;
    t->slots[slot] = (uint32_t)t->n + 1;
    *index = (uint32_t)t->n++;
    t->bytes += len + 1;
    return OPARA_OK;
}

typedef struct opara__layout {
    uint32_t n_attrs, n_refs, io_ref;
    uint64_t payload_size, strings_off, strbytes_off, strbytes_size, tensors_off, nodes_off, attrs_off, refs_off;
    uint64_t payload_off, data_off, data_size, total;
    uint64_t* tensor_data_off; /* per value */
} opara__layout;

static opara_result opara__intern_all(opara__strtab* t, const opara__graph* g) {
    uint32_t i, a;
    opara_result res = OPARA_OK;
    uint32_t dummy;
    for (i = 0; i < g->n_values && res == OPARA_OK; ++i) res = opara__strtab_intern(t, g->values[i].name, &dummy);
    for (i = 0; i < g->n_nodes && res == OPARA_OK; ++i) {
        const opara__node* n = &g->nodes[i];
        res = opara__strtab_intern(t, opara__op_name(n->op), &dummy);
        if (res == OPARA_OK) res = opara__strtab_intern(t, n->name ? n->name : "", &dummy);
        for (a = 0; a < n->n_attrs && res == OPARA_OK; ++a) {
            res = opara__strtab_intern(t, n->attrs[a].name, &dummy);
            if (res == OPARA_OK && n->attrs[a].type == OPARA__ATTR_STRING) res = opara__strtab_intern(t, n->attrs[a].v.s, &dummy);
        }
    }
    if (res == OPARA_OK && g->producer_name) res = opara__strtab_intern(t, g->producer_name, &dummy);
    return res;
}

static uint64_t opara__align64(uint64_t x, uint64_t a) {
    return (x + a - 1) & ~(a - 1);
}

static opara_result opara__plan_layout(opara_runtime* rt, const opara__graph* g, const opara__strtab* t,
                                       uint32_t alignment, opara__layout* L) {
    uint32_t i, a;
    uint64_t refs = 0, attrs = 0, payload = 0, data = 0;
    for (i = 0; i < g->n_nodes; ++i) {
        const opara__node* n = &g->nodes[i];
        refs += (uint64_t)n->n_inputs + n->n_outputs;
        attrs += n->n_attrs;
        for (a = 0; a < n->n_attrs; ++a) {
            if (n->attrs[a].type == OPARA__ATTR_INTS) payload = opara__align64(payload, 8) + 8 * (uint64_t)n->attrs[a].count;
            if (n->attrs[a].type == OPARA__ATTR_FLOATS) payload = opara__align64(payload, 4) + 4 * (uint64_t)n->attrs[a].count;
        }
    }
    L->io_ref = (uint32_t)refs;
    refs += (uint64_t)g->n_inputs + g->n_outputs;
    if (refs > 0xFFFFFFF0u || attrs > 0xFFFFFFF0u) return opara__fail(rt, OPARA_ERR_LIMIT_EXCEEDED, "graph too big to write");
    L->n_refs = (uint32_t)refs;
    L->n_attrs = (uint32_t)attrs;
    L->payload_size = payload;
    L->tensor_data_off = (uint64_t*)opara__calloc(rt, (size_t)g->n_values + 1, sizeof(uint64_t));
    if (!L->tensor_data_off) return opara__fail(rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory writing the model");
    for (i = 0; i < g->n_values; ++i)
        if (g->values[i].kind == OPARA__VALUE_CONST) {
            data = opara__align64(data, alignment);
            L->tensor_data_off[i] = data;
            data += g->values[i].nbytes;
        }
    L->data_size = data;
    L->strings_off = OPARA__FORMAT_HEADER_SIZE;
    L->strbytes_off = L->strings_off + (uint64_t)t->n * OPARA__FORMAT_STRING_SIZE;
    L->strbytes_size = t->bytes;
    L->tensors_off = opara__align64(L->strbytes_off + L->strbytes_size, 8);
    L->nodes_off = L->tensors_off + (uint64_t)g->n_values * OPARA__FORMAT_TENSOR_SIZE;
    L->attrs_off = L->nodes_off + (uint64_t)g->n_nodes * OPARA__FORMAT_NODE_SIZE;
    L->refs_off = L->attrs_off + attrs * OPARA__FORMAT_ATTR_SIZE;
    L->payload_off = opara__align64(L->refs_off + refs * 4, 8);
    L->data_off = opara__align64(L->payload_off + payload, alignment);
    L->total = L->data_off + L->data_size;
    if (L->total > (uint64_t)OPARA_MAX_MODEL_BYTES || L->total > (uint64_t)(size_t)-1)
        return opara__fail(rt, OPARA_ERR_LIMIT_EXCEEDED, "model would be %llu bytes", (unsigned long long)L->total);
    return OPARA_OK;
}

/* The must-understand flags the graph needs. */
static uint32_t opara__format_required_flags(const opara__graph* g) {
    uint32_t i, flags = 0;
    for (i = 0; i < g->n_nodes; ++i) {
        opara__op op = g->nodes[i].op;
        if ((op == OPARA__OP_ADD || op == OPARA__OP_SUB || op == OPARA__OP_MUL || op == OPARA__OP_DIV) &&
            opara__node_attr(&g->nodes[i], "activation"))
            flags |= OPARA__FORMAT_FLAG_BINARY_ACTIVATION;
    }
    return flags;
}

static void opara__write_header(uint8_t* o, const opara__graph* g, const opara__strtab* t, const opara__layout* L,
                                uint32_t alignment, uint32_t producer) {
    memcpy(o, OPARA__FORMAT_MAGIC, OPARA__FORMAT_MAGIC_SIZE);
    opara__wr_u16(o + OPARA__HDR_VER_MAJOR, OPARA__FORMAT_MAJOR);
    opara__wr_u16(o + OPARA__HDR_VER_MINOR, OPARA__FORMAT_MINOR);
    opara__wr_u32(o + OPARA__HDR_HEADER_SIZE, OPARA__FORMAT_HEADER_SIZE);
    opara__wr_u32(o + OPARA__HDR_FLAGS, opara__format_required_flags(g));
    opara__wr_u32(o + OPARA__HDR_ALIGNMENT, alignment);
    opara__wr_u32(o + OPARA__HDR_N_STRINGS, (uint32_t)t->n);
    opara__wr_u32(o + OPARA__HDR_N_TENSORS, g->n_values);
    opara__wr_u32(o + OPARA__HDR_N_NODES, g->n_nodes);
    opara__wr_u32(o + OPARA__HDR_N_ATTRS, L->n_attrs);
    opara__wr_u32(o + OPARA__HDR_N_REFS, L->n_refs);
    opara__wr_u32(o + OPARA__HDR_N_INPUTS, g->n_inputs);
    opara__wr_u32(o + OPARA__HDR_N_OUTPUTS, g->n_outputs);
    opara__wr_u32(o + OPARA__HDR_IO_REF, L->io_ref);
    opara__wr_u32(o + OPARA__HDR_PRODUCER, producer);
    opara__wr_u64(o + OPARA__HDR_OPSET, (uint64_t)g->source_opset);
    opara__wr_u64(o + OPARA__HDR_STRINGS_OFF, L->strings_off);
    opara__wr_u64(o + OPARA__HDR_STRBYTES_OFF, L->strbytes_off);
    opara__wr_u64(o + OPARA__HDR_STRBYTES_SIZE, L->strbytes_size);
    opara__wr_u64(o + OPARA__HDR_TENSORS_OFF, L->tensors_off);
    opara__wr_u64(o + OPARA__HDR_NODES_OFF, L->nodes_off);
    opara__wr_u64(o + OPARA__HDR_ATTRS_OFF, L->attrs_off);
    opara__wr_u64(o + OPARA__HDR_REFS_OFF, L->refs_off);
    opara__wr_u64(o + OPARA__HDR_PAYLOAD_OFF, L->payload_off);
    opara__wr_u64(o + OPARA__HDR_PAYLOAD_SIZE, L->payload_size);
    opara__wr_u64(o + OPARA__HDR_DATA_OFF, L->data_off);
    opara__wr_u64(o + OPARA__HDR_DATA_SIZE, L->data_size);
    opara__wr_u64(o + OPARA__HDR_TOTAL_SIZE, L->total);
}

static void opara__write_strings(uint8_t* o, const opara__strtab* t, const opara__layout* L) {
    uint64_t pos = 0;
    size_t i;
    for (i = 0; i < t->n; ++i) {
        size_t len = strlen(t->items[i]);
        uint8_t* e = o + L->strings_off + i * OPARA__FORMAT_STRING_SIZE;
        opara__wr_u32(e, (uint32_t)pos);
        opara__wr_u32(e + 4, (uint32_t)len);
        memcpy(o + L->strbytes_off + pos, t->items[i], len + 1);
        pos += len + 1;
    }
}

static uint32_t opara__str_index(opara__strtab* t, const char* s) {
    uint32_t index = 0;
    opara__strtab_intern(t, s, &index); /* already present: cannot fail */
    return index;
}

static void opara__write_tensors(uint8_t* o, const opara__graph* g, opara__strtab* t, const opara__layout* L) {
    uint32_t i;
    int k;
    for (i = 0; i < g->n_values; ++i) {
        const opara__value* v = &g->values[i];
        uint8_t* rec = o + L->tensors_off + (size_t)i * OPARA__FORMAT_TENSOR_SIZE;
        opara__wr_u32(rec, opara__str_index(t, v->name));
        opara__wr_u16(rec + 4, (uint16_t)v->dtype);
        rec[6] = (uint8_t)(v->shape.ndim < 0 ? OPARA__FORMAT_RANK_UNKNOWN : (uint32_t)v->shape.ndim);
        rec[7] = (uint8_t)v->kind;
        for (k = 0; k < v->shape.ndim; ++k)
            opara__wr_u64(rec + 16 + 8 * k,
                          (uint64_t)(v->shape.dims[k] == OPARA__DIM_BATCH ? OPARA__FORMAT_DIM_BATCH : v->shape.dims[k]));
        if (v->kind == OPARA__VALUE_CONST) {
            opara__wr_u64(rec + 80, L->tensor_data_off[i]);
            opara__wr_u64(rec + 88, v->nbytes);
            if (v->nbytes) memcpy(o + L->data_off + L->tensor_data_off[i], v->data, (size_t)v->nbytes);
        }
    }
}

static void opara__write_nodes(uint8_t* o, const opara__graph* g, opara__strtab* t, const opara__layout* L) {
    uint32_t i, k, ref = 0, attr = 0;
    uint64_t payload = 0;
    for (i = 0; i < g->n_nodes; ++i) {
        const opara__node* n = &g->nodes[i];
        uint8_t* rec = o + L->nodes_off + (size_t)i * OPARA__FORMAT_NODE_SIZE;
        opara__wr_u32(rec, opara__str_index(t, opara__op_name(n->op)));
        opara__wr_u32(rec + 4, opara__str_index(t, n->name ? n->name : ""));
        opara__wr_u32(rec + 8, ref);
        opara__wr_u32(rec + 12, n->n_inputs);
        opara__wr_u32(rec + 16, n->n_outputs);
        opara__wr_u32(rec + 20, attr);
        opara__wr_u32(rec + 24, n->n_attrs);
        for (k = 0; k < n->n_inputs; ++k) opara__wr_u32(o + L->refs_off + 4 * (size_t)ref++, (uint32_t)n->inputs[k]);
        for (k = 0; k < n->n_outputs; ++k) opara__wr_u32(o + L->refs_off + 4 * (size_t)ref++, (uint32_t)n->outputs[k]);
        for (k = 0; k < n->n_attrs; ++k) {
            const opara__attr* a = &n->attrs[k];
            uint8_t* ar = o + L->attrs_off + (size_t)attr++ * OPARA__FORMAT_ATTR_SIZE;
            uint32_t e;
            opara__wr_u32(ar, opara__str_index(t, a->name));
            ar[4] = (uint8_t)a->type;
            switch (a->type) {
            case OPARA__ATTR_INT: opara__wr_u32(ar + 8, 1), opara__wr_u64(ar + 16, (uint64_t)a->v.i); break;
            case OPARA__ATTR_FLOAT: {
                uint32_t bits;
                memcpy(&bits, &a->v.f, 4);
                opara__wr_u32(ar + 8, 1);
                opara__wr_u64(ar + 16, bits);
                break;
            }
            case OPARA__ATTR_STRING: opara__wr_u64(ar + 16, opara__str_index(t, a->v.s)); break;
            case OPARA__ATTR_INTS:
                payload = opara__align64(payload, 8);
                opara__wr_u32(ar + 8, a->count);
                opara__wr_u64(ar + 16, payload);
                for (e = 0; e < a->count; ++e, payload += 8) opara__wr_u64(o + L->payload_off + payload, (uint64_t)a->v.ints[e]);
                break;
            case OPARA__ATTR_FLOATS:
                payload = opara__align64(payload, 4);
                opara__wr_u32(ar + 8, a->count);
                opara__wr_u64(ar + 16, payload);
                for (e = 0; e < a->count; ++e, payload += 4) {
                    uint32_t bits;
                    memcpy(&bits, &a->v.floats[e], 4);
                    opara__wr_u32(o + L->payload_off + payload, bits);
                }
                break;
            }
        }
    }
    for (i = 0; i < g->n_inputs; ++i) opara__wr_u32(o + L->refs_off + 4 * (size_t)ref++, (uint32_t)g->inputs[i]);
    for (i = 0; i < g->n_outputs; ++i) opara__wr_u32(o + L->refs_off + 4 * (size_t)ref++, (uint32_t)g->outputs[i]);
}

static opara_result opara__check_writable(opara_runtime* rt, const opara__graph* g) {
    uint32_t i;
    for (i = 0; i < g->n_values; ++i) {
        const opara__value* v = &g->values[i];
        if (opara_dtype_size(v->dtype) == 0)
            return opara__fail(rt, OPARA_ERR_BAD_DTYPE, "tensor %u '%s': data type %d cannot be written", i, v->name,
                               (int)v->dtype);
        if (v->shape.ndim > OPARA__FORMAT_MAX_RANK)
            return opara__fail(rt, OPARA_ERR_LIMIT_EXCEEDED, "tensor %u '%s': rank %d (the format allows %d)", i, v->name,
                               (int)v->shape.ndim, OPARA__FORMAT_MAX_RANK);
    }
    return OPARA_OK;
}

/* FNV-1a over little-endian 64-bit words (the last one zero-padded): one multiply per 8 bytes,
   so hashing the weights of a large model costs little next to writing them. */
static uint64_t opara__content_hash(const uint8_t* p, size_t size) {
    uint64_t h = 0xcbf29ce484222325ull;
    size_t i;
    for (i = 0; i + 8 <= size; i += 8) h = (h ^ opara__rd_u64(p + i)) * 0x100000001b3ull;
    if (i < size) {
        uint8_t tail[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        memcpy(tail, p + i, size - i);
        h = (h ^ opara__rd_u64(tail)) * 0x100000001b3ull;
    }
    return h;
}

OPARA__PRIVATE opara_result opara__format_verify_hash(opara_runtime* rt, const uint8_t* data) {
    uint32_t header_size = opara__rd_u32(data + OPARA__HDR_HEADER_SIZE);
    uint64_t total = opara__rd_u64(data + OPARA__HDR_TOTAL_SIZE), stored = opara__rd_u64(data + OPARA__HDR_HASH);
    uint64_t computed = opara__content_hash(data + header_size, (size_t)(total - header_size));
    if (computed != stored)
        return opara__fail(rt, OPARA_ERR_CORRUPT, "content hash mismatch: the header says %016llx, the %llu bytes after "
                           "it hash to %016llx (the file was altered or damaged)", (unsigned long long)stored,
                           (unsigned long long)(total - header_size), (unsigned long long)computed);
    return OPARA_OK;
}

OPARA__PRIVATE opara_result opara__format_write(opara_runtime* rt, const opara__graph* g, uint32_t alignment,
                                               opara__bytes* out) {
    opara__strtab t;
    opara__layout L;
    opara_result res;
    uint8_t* o = NULL;
    out->data = NULL;
    out->size = 0;
    if (!alignment) alignment = OPARA__DEFAULT_ALIGN;
    if (!opara__is_pow2(alignment) || alignment < OPARA__FORMAT_MIN_ALIGN || alignment > OPARA__FORMAT_MAX_ALIGN)
        return opara__fail(rt, OPARA_ERR_BAD_ALIGNMENT, "alignment %u is not a power of two in [%u, %u]", alignment,
                           OPARA__FORMAT_MIN_ALIGN, OPARA__FORMAT_MAX_ALIGN);
    memset(&t, 0, sizeof t);
    memset(&L, 0, sizeof L);
    t.rt = rt;
    res = opara__check_writable(rt, g);
    if (res == OPARA_OK) res = opara__intern_all(&t, g);
    if (res == OPARA_OK) res = opara__plan_layout(rt, g, &t, alignment, &L);
    if (res == OPARA_OK) {
        o = (uint8_t*)opara__alloc_aligned(&rt->allocator, (size_t)L.total, alignment);
        if (!o) res = opara__fail(rt, OPARA_ERR_OUT_OF_MEMORY, "out of memory for a %llu-byte model", (unsigned long long)L.total);
    }
    if (res == OPARA_OK) {
        memset(o, 0, (size_t)L.total);
        opara__write_header(o, g, &t, &L, alignment,
                            g->producer_name ? opara__str_index(&t, g->producer_name) : OPARA__FORMAT_NONE);
        opara__write_strings(o, &t, &L);
        opara__write_tensors(o, g, &t, &L);
        opara__write_nodes(o, g, &t, &L);
        opara__wr_u64(o + OPARA__HDR_HASH, opara__content_hash(o + OPARA__FORMAT_HEADER_SIZE,
                                                               (size_t)L.total - OPARA__FORMAT_HEADER_SIZE));
        out->data = o;
        out->size = (size_t)L.total;
    }
    opara__free(rt, L.tensor_data_off);
    opara__free(rt, (void*)t.items);
    opara__free(rt, t.slots);
    return res;
}
