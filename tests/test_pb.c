/* Protobuf wire decoder and ONNX message decoder, on bytes encoded by hand from the protobuf
   encoding spec (https://protobuf.dev/programming-guides/encoding/) and onnx.proto field numbers. */
#define OPARA_IMPLEMENTATION
#include "opara.h"
#include "opara_test.h"

static opara_runtime* new_rt(void) {
    opara_runtime* rt = NULL;
    opara_runtime_create(NULL, &rt);
    return rt;
}

OT_TEST(varint_spec_examples) {
    /* spec: 150 = 96 01; 1 = 01; 300 = ac 02; max uint64 = ff x9 01 */
    static const uint8_t v150[] = {0x96, 0x01}, v300[] = {0xac, 0x02};
    static const uint8_t vmax[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    const uint8_t* p;
    uint64_t v = 0;
    p = v150;
    CHECK_EQ(opara__pb_read_varint(&p, v150 + 2, &v), OPARA__PB_OK);
    CHECK_EQ(v, 150);
    CHECK(p == v150 + 2);
    p = v300;
    CHECK_EQ(opara__pb_read_varint(&p, v300 + 2, &v), OPARA__PB_OK);
    CHECK_EQ(v, 300);
    p = vmax;
    CHECK_EQ(opara__pb_read_varint(&p, vmax + 10, &v), OPARA__PB_OK);
    CHECK(v == UINT64_MAX);
}

OT_TEST(varint_truncated_and_overflow) {
    static const uint8_t trunc[] = {0x96};
    static const uint8_t eleven[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    static const uint8_t tenth_too_big[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02};
    const uint8_t* p;
    uint64_t v;
    p = trunc;
    CHECK_EQ(opara__pb_read_varint(&p, trunc + 1, &v), OPARA__PB_TRUNCATED_VARINT);
    p = eleven;
    CHECK_EQ(opara__pb_read_varint(&p, eleven + 11, &v), OPARA__PB_VARINT_OVERFLOW);
    p = tenth_too_big;
    CHECK_EQ(opara__pb_read_varint(&p, tenth_too_big + 10, &v), OPARA__PB_VARINT_OVERFLOW);
}

OT_TEST(fields_of_every_wire_type) {
    /* field 1 varint 150; field 2 string "testing"; field 3 fixed32 1.0f; field 4 fixed64 */
    static const uint8_t msg[] = {0x08, 0x96, 0x01, 0x12, 0x07, 't', 'e', 's', 't', 'i', 'n', 'g',
                                  0x1d, 0x00, 0x00, 0x80, 0x3f, 0x21, 1, 2, 3, 4, 5, 6, 7, 8};
    opara__pb_reader r;
    opara__pb_field f;
    opara__pb_reader_init(&r, msg, sizeof msg);
    REQUIRE(opara__pb_next(&r, &f) == OPARA__PB_OK);
    CHECK_EQ(f.number, 1);
    CHECK_EQ(f.wire, 0);
    CHECK_EQ(f.u, 150);
    REQUIRE(opara__pb_next(&r, &f) == OPARA__PB_OK);
    CHECK_EQ(f.number, 2);
    CHECK_EQ(f.size, 7);
    CHECK(memcmp(f.data, "testing", 7) == 0);
    REQUIRE(opara__pb_next(&r, &f) == OPARA__PB_OK);
    CHECK_EQ(f.wire, 5);
    CHECK_EQ(f.u, 0x3f800000u);
    REQUIRE(opara__pb_next(&r, &f) == OPARA__PB_OK);
    CHECK_EQ(f.wire, 1);
    CHECK(f.u == 0x0807060504030201ull);
    CHECK_EQ(opara__pb_next(&r, &f), OPARA__PB_END);
}

OT_TEST(length_must_stay_inside_parent) {
    static const uint8_t msg[] = {0x12, 0x08, 'a', 'b', 'c'};
    static const uint8_t fixed[] = {0x1d, 0x00, 0x00};
    opara__pb_reader r;
    opara__pb_field f;
    opara__pb_reader_init(&r, msg, sizeof msg);
    CHECK_EQ(opara__pb_next(&r, &f), OPARA__PB_TRUNCATED);
    opara__pb_reader_init(&r, fixed, sizeof fixed);
    CHECK_EQ(opara__pb_next(&r, &f), OPARA__PB_TRUNCATED);
}

OT_TEST(groups_and_bad_wire_types_rejected) {
    static const uint8_t group[] = {0x0b, 0x0c}, wire6[] = {0x0e}, field0[] = {0x00, 0x01};
    opara__pb_reader r;
    opara__pb_field f;
    opara__pb_reader_init(&r, group, sizeof group);
    CHECK_EQ(opara__pb_next(&r, &f), OPARA__PB_GROUP);
    opara__pb_reader_init(&r, wire6, sizeof wire6);
    CHECK_EQ(opara__pb_next(&r, &f), OPARA__PB_BAD_WIRE_TYPE);
    opara__pb_reader_init(&r, field0, sizeof field0);
    CHECK_EQ(opara__pb_next(&r, &f), OPARA__PB_BAD_FIELD_NUMBER);
}

OT_TEST(packed_and_unpacked_repeated) {
    /* spec example: field 4 packed [3, 270, 86942] = 22 06 03 8e 02 9e a7 05; then unpacked 7 */
    static const uint8_t msg[] = {0x22, 0x06, 0x03, 0x8e, 0x02, 0x9e, 0xa7, 0x05, 0x20, 0x07};
    opara__pb_reader r;
    opara__pb_field f;
    size_t count = 0, n, idx = 0;
    int64_t vals[4];
    opara__pb_reader_init(&r, msg, sizeof msg);
    while (opara__pb_next(&r, &f) == OPARA__PB_OK) {
        REQUIRE(opara__pb_scalar_count(&f, OPARA__PB_VARINT_I64, &n) == OPARA__PB_OK);
        count += n;
        REQUIRE(opara__pb_scalar_unpack(&f, OPARA__PB_VARINT_I64, vals, &idx) == OPARA__PB_OK);
    }
    CHECK_EQ(count, 4);
    CHECK_EQ(idx, 4);
    CHECK_EQ(vals[0], 3);
    CHECK_EQ(vals[1], 270);
    CHECK_EQ(vals[2], 86942);
    CHECK_EQ(vals[3], 7);
}

OT_TEST(packed_fixed32_must_be_whole) {
    static const uint8_t msg[] = {0x22, 0x05, 0, 0, 0x80, 0x3f, 0};
    opara__pb_reader r;
    opara__pb_field f;
    size_t n;
    opara__pb_reader_init(&r, msg, sizeof msg);
    REQUIRE(opara__pb_next(&r, &f) == OPARA__PB_OK);
    CHECK_EQ(opara__pb_scalar_count(&f, OPARA__PB_FIXED32_F32, &n), OPARA__PB_BAD_PACKED);
}

OT_TEST(tensor_proto_typed_fields) {
    /* TensorProto: dims 2 (unpacked) dims 3 (unpacked), data_type 1, float_data packed [1, -2.5]
       then unpacked 4.0 x4, name "w", unknown field 15 (varint) skipped */
    static const uint8_t msg[] = {0x08, 0x02, 0x08, 0x03, 0x10, 0x01,
                                  0x22, 0x08, 0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x20, 0xc0,
                                  0x25, 0x00, 0x00, 0x80, 0x40, 0x25, 0x00, 0x00, 0x80, 0x40,
                                  0x25, 0x00, 0x00, 0x80, 0x40, 0x25, 0x00, 0x00, 0x80, 0x40,
                                  0x42, 0x01, 'w', 0x78, 0x05};
    opara_runtime* rt = new_rt();
    opara__tensor_data t;
    REQUIRE(rt);
    CHECK_EQ(opara__onnx_read_tensor(rt, msg, sizeof msg, &t), OPARA_OK);
    CHECK_STR(t.name, "w");
    CHECK_EQ(t.dtype, OPARA_DTYPE_F32);
    CHECK_EQ(t.shape.ndim, 2);
    CHECK_EQ(t.shape.dims[0], 2);
    CHECK_EQ(t.shape.dims[1], 3);
    REQUIRE(t.data && t.count == 6);
    CHECK_NEAR(((float*)t.data)[0], 1.0, 0);
    CHECK_NEAR(((float*)t.data)[1], -2.5, 0);
    CHECK_NEAR(((float*)t.data)[5], 4.0, 0);
    opara__tensor_data_free(rt, &t);
    opara_runtime_destroy(rt);
}

OT_TEST(tensor_proto_raw_and_int64) {
    /* scalar int64 -1 via int64_data (10-byte varint), and a raw int32 pair */
    static const uint8_t scalar[] = {0x10, 0x07, 0x38, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    static const uint8_t raw[] = {0x08, 0x02, 0x10, 0x06, 0x4a, 0x08, 0x05, 0, 0, 0, 0xfe, 0xff, 0xff, 0xff};
    opara_runtime* rt = new_rt();
    opara__tensor_data t;
    REQUIRE(rt);
    REQUIRE(opara__onnx_read_tensor(rt, scalar, sizeof scalar, &t) == OPARA_OK);
    CHECK_EQ(t.shape.ndim, 0);
    CHECK_EQ(t.count, 1);
    CHECK_EQ(((int64_t*)t.data)[0], -1);
    opara__tensor_data_free(rt, &t);
    REQUIRE(opara__onnx_read_tensor(rt, raw, sizeof raw, &t) == OPARA_OK);
    CHECK_EQ(t.dtype, OPARA_DTYPE_I32);
    CHECK_EQ(((int32_t*)t.data)[0], 5);
    CHECK_EQ(((int32_t*)t.data)[1], -2);
    opara__tensor_data_free(rt, &t);
    opara_runtime_destroy(rt);
}

OT_TEST(tensor_proto_size_mismatch_is_an_error) {
    static const uint8_t raw[] = {0x08, 0x03, 0x10, 0x01, 0x4a, 0x04, 0, 0, 0x80, 0x3f};
    static const uint8_t bad_type[] = {0x10, 0x10};
    opara_runtime* rt = new_rt();
    opara__tensor_data t;
    REQUIRE(rt);
    CHECK_EQ(opara__onnx_read_tensor(rt, raw, sizeof raw, &t), OPARA_ERR_ONNX_INVALID);
    CHECK(strstr(opara_runtime_last_error(rt), "raw_data has 4 bytes") != NULL);
    CHECK_EQ(opara__onnx_read_tensor(rt, bad_type, sizeof bad_type, &t), OPARA_ERR_BAD_DTYPE);
    opara_runtime_destroy(rt);
}

/* ModelProto { graph { node { input "x" attribute { name "a" ints <truncated> } } } } */
OT_TEST(error_names_the_field_path) {
    static const uint8_t model[] = {0x3a, 0x0f,                   /* graph, 15 bytes */
                                    0x0a, 0x0d,                   /* node, 13 bytes */
                                    0x0a, 0x01, 'x',              /* input "x" */
                                    0x2a, 0x08,                   /* attribute, 8 bytes */
                                    0x0a, 0x01, 'a',              /* name "a" */
                                    0x42, 0x03, 0x01, 0x02, 0x80}; /* ints packed, last varint truncated */
    opara_runtime* rt = new_rt();
    opara__pool pool;
    opara__onnx_model m;
    REQUIRE(rt);
    memset(&pool, 0, sizeof pool);
    CHECK_EQ(opara__onnx_decode_model(rt, &pool, model, sizeof model, &m), OPARA_ERR_ONNX_DECODE);
    CHECK_STR(opara_runtime_last_error(rt), "graph.node[0].attribute[0].ints: truncated varint");
    opara__pool_free(rt, &pool);
    opara_runtime_destroy(rt);
}

OT_TEST(model_proto_fields) {
    /* ir_version 7, producer "p", opset_import {domain "" version 13}, graph { node { input "x" output "y"
       op_type "Relu" } name "g" input { name "x" type { tensor_type { elem_type 1 shape { dim { dim_param "N" }
       dim { dim_value 4 } } } } } output { name "y" } } */
    static const uint8_t model[] = {
        0x08, 0x07, 0x12, 0x01, 'p', 0x42, 0x02, 0x10, 0x0d,
        0x3a, 0x2c,
        0x0a, 0x0c, 0x0a, 0x01, 'x', 0x12, 0x01, 'y', 0x22, 0x04, 'R', 'e', 'l', 'u',
        0x12, 0x01, 'g',
        0x5a, 0x14, 0x0a, 0x01, 'x', 0x12, 0x0f, 0x0a, 0x0d, 0x08, 0x01, 0x12, 0x09,
        0x0a, 0x03, 0x12, 0x01, 'N', 0x0a, 0x02, 0x08, 0x04,
        0x62, 0x03, 0x0a, 0x01, 'y'};
    opara_runtime* rt = new_rt();
    opara__pool pool;
    opara__onnx_model m;
    REQUIRE(rt);
    memset(&pool, 0, sizeof pool);
    REQUIRE(opara__onnx_decode_model(rt, &pool, model, sizeof model, &m) == OPARA_OK);
    CHECK_EQ(m.ir_version, 7);
    CHECK_STR(m.producer_name, "p");
    REQUIRE(m.n_opsets == 1);
    CHECK_STR(m.opsets[0].domain, "");
    CHECK_EQ(m.opsets[0].version, 13);
    REQUIRE(m.has_graph && m.graph.n_nodes == 1);
    CHECK_STR(m.graph.name, "g");
    CHECK_STR(m.graph.nodes[0].op_type, "Relu");
    CHECK_STR(m.graph.nodes[0].inputs[0], "x");
    REQUIRE(m.graph.n_inputs == 1 && m.graph.inputs[0].n_dims == 2);
    CHECK_EQ(m.graph.inputs[0].elem_type, 1);
    CHECK_STR(m.graph.inputs[0].dims[0].param, "N");
    CHECK_EQ(m.graph.inputs[0].dims[1].value, 4);
    CHECK_EQ(m.graph.n_outputs, 1);
    opara__pool_free(rt, &pool);
    opara_runtime_destroy(rt);
}

OT_TEST(every_truncation_of_a_model_fails_cleanly) {
    static const uint8_t model[] = {
        0x08, 0x07, 0x12, 0x01, 'p', 0x42, 0x02, 0x10, 0x0d,
        0x3a, 0x2c,
        0x0a, 0x0c, 0x0a, 0x01, 'x', 0x12, 0x01, 'y', 0x22, 0x04, 'R', 'e', 'l', 'u',
        0x12, 0x01, 'g',
        0x5a, 0x14, 0x0a, 0x01, 'x', 0x12, 0x0f, 0x0a, 0x0d, 0x08, 0x01, 0x12, 0x09,
        0x0a, 0x03, 0x12, 0x01, 'N', 0x0a, 0x02, 0x08, 0x04,
        0x62, 0x03, 0x0a, 0x01, 'y'};
    opara_runtime* rt = new_rt();
    size_t cut;
    REQUIRE(rt);
    for (cut = 0; cut < sizeof model; ++cut) {
        opara__pool pool;
        opara__onnx_model m;
        uint8_t* copy = (uint8_t*)malloc(cut + 1); /* exact size so ASan sees any over-read */
        opara_result r;
        REQUIRE(copy);
        memcpy(copy, model, cut);
        memset(&pool, 0, sizeof pool);
        r = opara__onnx_decode_model(rt, &pool, copy, cut, &m);
        /* a cut at a field boundary of the top-level message is a valid (shorter) model */
        if (r != OPARA_OK) CHECK_EQ(r, OPARA_ERR_ONNX_DECODE);
        opara__pool_free(rt, &pool);
        free(copy);
    }
    opara_runtime_destroy(rt);
}

static const opara_test_case tests[] = {
    OT_CASE(varint_spec_examples), OT_CASE(varint_truncated_and_overflow), OT_CASE(fields_of_every_wire_type),
    OT_CASE(length_must_stay_inside_parent), OT_CASE(groups_and_bad_wire_types_rejected),
    OT_CASE(packed_and_unpacked_repeated), OT_CASE(packed_fixed32_must_be_whole), OT_CASE(tensor_proto_typed_fields),
    OT_CASE(tensor_proto_raw_and_int64), OT_CASE(tensor_proto_size_mismatch_is_an_error),
    OT_CASE(error_names_the_field_path), OT_CASE(model_proto_fields), OT_CASE(every_truncation_of_a_model_fails_cleanly),
};

int main(int argc, char** argv) { return opara_test_main(argc, argv, tests, OT_COUNT(tests)); }
