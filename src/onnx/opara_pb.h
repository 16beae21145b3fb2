/* Protobuf wire-format reader and the decoder of the ONNX messages the importer needs
   (ModelProto, GraphProto, NodeProto, TensorProto, AttributeProto, ValueInfoProto, TypeProto,
   OperatorSetIdProto). The decoded structs point into the caller's buffer for bulk bytes
   (raw_data) and keep everything else (strings, arrays) in a pool. Every failure names the
   field path, e.g. "graph.node[12].attribute[2]: truncated varint". */
#ifndef OPARA_PB_H
#define OPARA_PB_H

#include "../ir/opara_ir.h"

/* ---- wire level ------------------------------------------------------------------------------ */

typedef enum opara__pb_status {
    OPARA__PB_OK = 0,
    OPARA__PB_END,
    OPARA__PB_TRUNCATED_VARINT,
    OPARA__PB_VARINT_OVERFLOW,
    OPARA__PB_TRUNCATED,       /* a fixed-size value or a length-delimited payload runs past its parent */
    OPARA__PB_GROUP,           /* wire types 3/4 (groups) are rejected */
    OPARA__PB_BAD_WIRE_TYPE,   /* wire type 6/7, or a known field with the wrong wire type */
    OPARA__PB_BAD_FIELD_NUMBER,
    OPARA__PB_BAD_PACKED       /* a packed payload whose size is not a multiple of the element size */
} opara__pb_status;

enum { OPARA__PB_WIRE_VARINT = 0, OPARA__PB_WIRE_FIXED64 = 1, OPARA__PB_WIRE_LEN = 2, OPARA__PB_WIRE_FIXED32 = 5 };

typedef struct opara__pb_reader {
    const uint8_t* p;
    const uint8_t* end;
} opara__pb_reader;

typedef struct opara__pb_field {
    uint32_t number;
    uint32_t wire;
    uint64_t u;          /* value of a varint, fixed32 or fixed64 field */
    const uint8_t* data; /* payload of a length-delimited field (inside the parent's bounds) */
    size_t size;
} opara__pb_field;

/* Element encodings of repeated scalar fields. */
typedef enum opara__pb_scalar {
    OPARA__PB_VARINT_I64, /* int64/uint64/int32/enum varints, stored as int64 */
    OPARA__PB_VARINT_I32, /* int32 varints, stored truncated to int32 */
    OPARA__PB_FIXED32_F32,
    OPARA__PB_FIXED64_F64,
    OPARA__PB_VARINT_U64
} opara__pb_scalar;

OPARA__PRIVATE const char* opara__pb_status_text(opara__pb_status status);
OPARA__PRIVATE opara__pb_status opara__pb_read_varint(const uint8_t** p, const uint8_t* end, uint64_t* out);
OPARA__PRIVATE void opara__pb_reader_init(opara__pb_reader* r, const uint8_t* data, size_t size);
/* Reads the next field of r. OPARA__PB_END at the end of the message. Unknown fields are
   returned too; the caller ignores them (their payload was already bounds-checked). */
OPARA__PRIVATE opara__pb_status opara__pb_next(opara__pb_reader* r, opara__pb_field* f);
/* Number of elements one occurrence of a repeated scalar field holds (packed or unpacked). */
OPARA__PRIVATE opara__pb_status opara__pb_scalar_count(const opara__pb_field* f, opara__pb_scalar kind, size_t* count);
/* Appends the elements of one occurrence to out (an array of the kind's C type) at *index. */
OPARA__PRIVATE opara__pb_status opara__pb_scalar_unpack(const opara__pb_field* f, opara__pb_scalar kind, void* out,
                                                      size_t* index);

/* ---- ONNX messages --------------------------------------------------------------------------- */

typedef struct opara__pb_bytes {
    const uint8_t* data;
    size_t size;
} opara__pb_bytes;

typedef struct opara__onnx_kv {
    const char* key;
    const char* value;
} opara__onnx_kv;

typedef struct opara__onnx_tensor {
    const char* name;
    int32_t data_type;
    uint32_t n_dims;
    int64_t* dims;
    int has_raw;
    opara__pb_bytes raw;
    float* float_data;
    size_t n_float;
    int32_t* int32_data;
    size_t n_int32;
    int64_t* int64_data;
    size_t n_int64;
    double* double_data;
    size_t n_double;
    uint64_t* uint64_data;
    size_t n_uint64;
    size_t n_string;
    int32_t data_location; /* 0 DEFAULT, 1 EXTERNAL */
    uint32_t n_external;
    opara__onnx_kv* external;
    int has_segment;
} opara__onnx_tensor;

enum {
    OPARA__ONNX_ATTR_FLOAT = 1, OPARA__ONNX_ATTR_INT = 2, OPARA__ONNX_ATTR_STRING = 3, OPARA__ONNX_ATTR_TENSOR = 4,
    OPARA__ONNX_ATTR_GRAPH = 5, OPARA__ONNX_ATTR_FLOATS = 6, OPARA__ONNX_ATTR_INTS = 7, OPARA__ONNX_ATTR_STRINGS = 8
};

typedef struct opara__onnx_attr {
    const char* name;
    int32_t type; /* the AttributeType enum above; 0 when the file leaves it out (IR < 2) */
    int has_f, has_i, has_s, has_g;
    float f;
    int64_t i;
    opara__pb_bytes s;
    opara__onnx_tensor* t;
    struct opara__onnx_graph* g; /* a subgraph (If's branches, Loop's and Scan's bodies); NULL when absent */
    float* floats;
    uint32_t n_floats;
    int64_t* ints;
    uint32_t n_ints;
    opara__pb_bytes* strings;
    uint32_t n_strings;
} opara__onnx_attr;

typedef struct opara__onnx_dim {
    int has_value;
    int64_t value;
    const char* param; /* NULL when absent */
} opara__onnx_dim;

typedef struct opara__onnx_value_info {
    const char* name;
    int is_tensor;  /* type.tensor_type present */
    int32_t elem_type;
    int has_shape;
    uint32_t n_dims;
    opara__onnx_dim* dims;
} opara__onnx_value_info;

typedef struct opara__onnx_node {
    const char* name;
    const char* op_type;
    const char* domain;
    uint32_t n_inputs, n_outputs, n_attrs;
    const char** inputs;
    const char** outputs;
    opara__onnx_attr* attrs;
} opara__onnx_node;

typedef struct opara__onnx_graph {
    const char* name;
    uint32_t n_nodes, n_initializers, n_inputs, n_outputs, n_value_infos, n_sparse_initializers;
    opara__onnx_node* nodes;
    opara__onnx_tensor* initializers;
    opara__onnx_value_info* inputs;
    opara__onnx_value_info* outputs;
    opara__onnx_value_info* value_infos;
} opara__onnx_graph;

typedef struct opara__onnx_opset {
    const char* domain;
    int64_t version;
} opara__onnx_opset;

typedef struct opara__onnx_model {
    int64_t ir_version;
    const char* producer_name;
    uint32_t n_opsets;
    opara__onnx_opset* opsets;
    int has_graph;
    opara__onnx_graph graph;
} opara__onnx_model;

/* Decode into structs allocated from pool (freed by the caller with opara__pool_free). The
   structs keep pointers into data for raw_data, so data must outlive them. Failures set the
   runtime's detail and return OPARA_ERR_ONNX_DECODE (malformed wire data). */
OPARA__PRIVATE opara_result opara__onnx_decode_model(opara_runtime* rt, opara__pool* pool, const uint8_t* data,
                                                    size_t size, opara__onnx_model* out);
OPARA__PRIVATE opara_result opara__onnx_decode_tensor(opara_runtime* rt, opara__pool* pool, const uint8_t* data,
                                                     size_t size, opara__onnx_tensor* out);

#endif /* OPARA_PB_H */
