/* The .opara reader and writer: layout as docs/FORMAT.md specifies it (offsets written out here
   from the spec, not taken from the code), determinism, zero-copy loading, a specific error for
   every check, truncation at every byte and thousands of random corruptions. */
#define OPARA_IMPLEMENTATION
#include "opara.h"
#include "opara_test.h"
#include "opara_model_fixture.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers: little-endian access written independently of the library ---------------------- */

static uint32_t le32(const uint8_t* p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t le64(const uint8_t* p) {
    return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}
static void put32(uint8_t* p, uint32_t v) {
    int i;
    for (i = 0; i < 4; ++i) p[i] = (uint8_t)(v >> (8 * i));
}
static void put64(uint8_t* p, uint64_t v) {
    int i;
    for (i = 0; i < 8; ++i) p[i] = (uint8_t)(v >> (8 * i));
}

/* Spec offsets (docs/FORMAT.md). */
enum {
    H_VER_MAJOR = 8, H_VER_MINOR = 10, H_HEADER_SIZE = 12, H_FLAGS = 16, H_ALIGN = 20, H_N_STRINGS = 24,
    H_N_TENSORS = 28, H_N_NODES = 32, H_N_ATTRS = 36, H_N_REFS = 40, H_N_INPUTS = 44, H_N_OUTPUTS = 48,
    H_IO_REF = 52, H_PRODUCER = 56, H_OPSET = 64, H_HASH = 72, H_STRINGS = 80, H_STRBYTES = 88,
    H_STRBYTES_SIZE = 96, H_TENSORS = 104, H_NODES = 112, H_ATTRS = 120, H_REFS = 128, H_PAYLOAD = 136,
    H_PAYLOAD_SIZE = 144, H_DATA = 152, H_DATA_SIZE = 160, H_TOTAL = 168, HEADER = 192,
    T_SIZE = 96, N_SIZE = 32, A_SIZE = 24
};
enum { T_X, T_W1, T_B1, T_W2, T_WF, T_BF, T_C1, T_R1, T_A, T_B, T_CAT, T_GAP, T_F, T_Y, N_TENSORS };
enum { N_CONV1, N_RELU, N_CONV2, N_POOL, N_CAT, N_GAP, N_FLATTEN, N_FC, N_NODES };

typedef struct image {
    uint8_t* raw;  /* malloc'd */
    uint8_t* data; /* 64-byte aligned start (or misaligned on purpose) */
    size_t size;
} image;

static void image_alloc(image* im, size_t size, size_t misalign) {
    im->raw = (uint8_t*)malloc(size + 128);
    im->data = im->raw + ((64 - ((uintptr_t)im->raw & 63)) & 63) + misalign;
    im->size = size;
}

static void image_free(image* im) {
    free(im->raw);
    memset(im, 0, sizeof *im);
}

static opara_runtime* g_rt;
static image g_fixture; /* the pristine fixture image */

static void fixture_copy(image* im) {
    image_alloc(im, g_fixture.size, 0);
    memcpy(im->data, g_fixture.data, g_fixture.size);
}

static uint8_t* tensor_rec(image* im, uint32_t t) {
    return im->data + le64(im->data + H_TENSORS) + (size_t)t * T_SIZE;
}
static uint8_t* node_rec(image* im, uint32_t n) {
    return im->data + le64(im->data + H_NODES) + (size_t)n * N_SIZE;
}
static uint8_t* ref_at(image* im, uint32_t k) {
    return im->data + le64(im->data + H_REFS) + (size_t)k * 4;
}
static const char* string_at(image* im, uint32_t idx) {
    const uint8_t* e = im->data + le64(im->data + H_STRINGS) + (size_t)idx * 8;
    return (const char*)im->data + le64(im->data + H_STRBYTES) + le32(e);
}

/* Loads im and returns the code; on failure checks that there is a message. */
static opara_result load_image(opara_test* T, const image* im, opara_model** out) {
    opara_model* m = NULL;
    opara_result r = opara_model_load_memory(g_rt, im->data, im->size, &m);
    if (r != OPARA_OK) {
        CHECK(m == NULL);
        CHECK(opara_runtime_last_error(g_rt)[0] != 0);
    }
    if (out) *out = m;
    else opara_model_destroy(m);
    return r;
}

#define EXPECT_LOAD(im, code, needle)                                                                       \
    do {                                                                                                    \
        opara_result r_ = load_image(T, (im), NULL);                                                         \
        CHECK_EQ(r_, (code));                                                                               \
        if ((needle)[0] && !strstr(opara_runtime_last_error(g_rt), (needle)))                               \
            CHECK_STR(opara_runtime_last_error(g_rt), (needle));                                             \
    } while (0)

static int setup(void) {
    void* data = NULL;
    size_t size = 0;
    if (opara_runtime_create(NULL, &g_rt) != OPARA_OK) return 0;
    if (fixture_image(g_rt, &data, &size) != OPARA_OK) {
        printf("fixture: %s\n", opara_runtime_last_error(g_rt));
        return 0;
    }
    image_alloc(&g_fixture, size, 0);
    memcpy(g_fixture.data, data, size);
    opara_free(g_rt, data);
    return 1;
}

/* ---- layout ---------------------------------------------------------------------------------- */

OT_TEST(header_follows_the_spec) {
    const uint8_t* d = g_fixture.data;
    static const uint8_t magic[8] = {0x89, 'O', 'P', 'R', '\r', '\n', 0x1a, '\n'};
    uint64_t data_off = le64(d + H_DATA);
    REQUIRE(g_fixture.size > HEADER);
    CHECK(memcmp(d, magic, 8) == 0);
    CHECK_EQ(d[H_VER_MAJOR] | d[H_VER_MAJOR + 1] << 8, 1);
    CHECK_EQ(d[H_VER_MINOR] | d[H_VER_MINOR + 1] << 8, 0);
    CHECK_EQ(le32(d + H_HEADER_SIZE), HEADER);
    CHECK_EQ(le32(d + H_FLAGS), 0);
    CHECK_EQ(le32(d + H_ALIGN), 64);
    CHECK_EQ(le32(d + H_N_TENSORS), N_TENSORS);
    CHECK_EQ(le32(d + H_N_NODES), N_NODES);
    CHECK_EQ(le32(d + H_N_INPUTS), 1);
    CHECK_EQ(le32(d + H_N_OUTPUTS), 2);
    CHECK_EQ(le64(d + H_TOTAL), g_fixture.size);
    CHECK_EQ(data_off % 64, 0);
    /* 6 + 3 attributes, 4 refs for conv1 ... : count them from the fixture's definition */
    CHECK_EQ(le32(d + H_N_ATTRS), 1 + 3 + 1 + 1);
    CHECK_EQ(le32(d + H_N_REFS), 4 + 2 + 4 + 2 + 3 + 2 + 2 + 4 + 1 + 2);
    CHECK_EQ(le32(d + H_IO_REF), 4 + 2 + 4 + 2 + 3 + 2 + 2 + 4);
    /* data section: w1 (108 floats) at 0, b1 at 448 (432 rounded up to 64), ... */
    CHECK_EQ(le64(tensor_rec(&g_fixture, T_W1) + 80), 0);
    CHECK_EQ(le64(tensor_rec(&g_fixture, T_W1) + 88), 4 * 108);
    CHECK_EQ(le64(tensor_rec(&g_fixture, T_B1) + 80), 448);
    CHECK_EQ(le64(d + H_DATA_SIZE), 448 + 64 + 64 + 128 + 20); /* b1 16 -> w2 at 512, 32 -> wf at 576, 120 -> bf at 704 */
    CHECK_STR(string_at(&g_fixture, le32(tensor_rec(&g_fixture, T_W1))), "w1");
    CHECK_STR(string_at(&g_fixture, le32(node_rec(&g_fixture, N_POOL))), "MaxPool");
    CHECK_EQ(tensor_rec(&g_fixture, T_X)[6], 4);                                   /* rank */
    CHECK_EQ((int64_t)le64(tensor_rec(&g_fixture, T_X) + 16), -1);                  /* symbolic batch */
    CHECK_EQ(tensor_rec(&g_fixture, T_X)[7], 1);                                    /* kind input */
    CHECK_EQ(tensor_rec(&g_fixture, T_W1)[7], 2);                                   /* kind constant */
    CHECK_EQ(tensor_rec(&g_fixture, T_Y)[4], OPARA_DTYPE_F32);                       /* inferred dtype */
    CHECK_EQ(le32(ref_at(&g_fixture, 0)), T_X);
    CHECK_EQ(le32(ref_at(&g_fixture, 8)), 0xFFFFFFFFu); /* conv2's omitted bias */
}

OT_TEST(content_hash_is_fnv1a_of_everything_after_the_header) {
    uint64_t h = 0xcbf29ce484222325ull;
    size_t i, k;
    for (i = HEADER; i < g_fixture.size; i += 8) { /* 64-bit little-endian words, zero-padded */
        uint64_t w = 0;
        for (k = 0; k < 8 && i + k < g_fixture.size; ++k) w |= (uint64_t)g_fixture.data[i + k] << (8 * k);
        h ^= w;
        h *= 0x100000001b3ull;
    }
    CHECK(le64(g_fixture.data + H_HASH) == h);
}

OT_TEST(save_load_save_is_byte_identical) {
    opara_model* m = NULL;
    opara__bytes again;
    void* data2 = NULL;
    size_t size2 = 0;
    REQUIRE(load_image(T, &g_fixture, &m) == OPARA_OK);
    REQUIRE(opara__format_write(g_rt, opara__model_graph(m), 64, &again) == OPARA_OK);
    CHECK_EQ(again.size, g_fixture.size);
    CHECK(again.size == g_fixture.size && memcmp(again.data, g_fixture.data, again.size) == 0);
    opara_free(g_rt, again.data);
    opara_model_destroy(m);
    REQUIRE(fixture_image(g_rt, &data2, &size2) == OPARA_OK); /* a second, independent build */
    CHECK(size2 == g_fixture.size && memcmp(data2, g_fixture.data, size2) == 0);
    opara_free(g_rt, data2);
}

OT_TEST(queries_report_the_model) {
    opara_model* m = NULL;
    opara_tensor_info info;
    opara_model_stats st;
    REQUIRE(load_image(T, &g_fixture, &m) == OPARA_OK);
    CHECK_EQ(opara_model_input_count(m), 1);
    CHECK_EQ(opara_model_output_count(m), 2);
    CHECK_EQ(opara_model_node_count(m), N_NODES);
    CHECK_STR(opara_model_node_op(m, N_GAP), "GlobalAveragePool");
    CHECK_STR(opara_model_node_name(m, N_FC), "fc");
    CHECK(opara_model_node_op(m, N_NODES) == NULL);
    REQUIRE(opara_model_input_info(m, 0, &info) == OPARA_OK);
    CHECK_STR(info.name, "x");
    CHECK_EQ(info.rank, 4);
    CHECK_EQ(info.dims[0], OPARA_DIM_BATCH);
    CHECK_EQ(info.dims[3], 8);
    REQUIRE(opara_model_output_info(m, 1, &info) == OPARA_OK);
    CHECK_STR(info.name, "a");
    CHECK_EQ(info.dtype, OPARA_DTYPE_F32);
    CHECK_EQ(opara_model_output_info(m, 2, &info), OPARA_ERR_NOT_FOUND);
    REQUIRE(opara_model_get_stats(m, &st) == OPARA_OK);
    CHECK_EQ(st.n_constants, 5);
    CHECK_EQ(st.n_params, 108 + 4 + 8 + 30 + 5);
    CHECK_EQ(st.param_bytes, 4 * (108 + 4 + 8 + 30 + 5));
    CHECK_EQ(st.file_bytes, g_fixture.size);
    CHECK(st.zero_copy);
    CHECK(strstr(st.producer, "builder") != NULL);
    opara_model_destroy(m);
}

/* ---- zero copy ------------------------------------------------------------------------------- */

static int constants_inside(const opara_model* m, const uint8_t* lo, size_t size) {
    const opara__graph* g = opara__model_graph(m);
    uint32_t i, n = 0;
    for (i = 0; i < g->n_values; ++i)
        if (g->values[i].kind == OPARA__VALUE_CONST) {
            const uint8_t* p = (const uint8_t*)g->values[i].data;
            if (p < lo || p + g->values[i].nbytes > lo + size || (uintptr_t)p % 64) return 0;
            ++n;
        }
    return n == 5;
}

OT_TEST(load_memory_uses_weights_in_place) {
    opara_model* m = NULL;
    const opara__graph* g;
    REQUIRE(load_image(T, &g_fixture, &m) == OPARA_OK);
    CHECK(constants_inside(m, g_fixture.data, g_fixture.size));
    g = opara__model_graph(m);
    /* w1's data is exactly at data_off + its offset in the caller's buffer */
    CHECK(g->values[T_W1].data == g_fixture.data + le64(g_fixture.data + H_DATA));
    opara_model_destroy(m);
}

OT_TEST(misaligned_buffer_is_copied) {
    image im;
    opara_model* m = NULL;
    opara_model_stats st;
    image_alloc(&im, g_fixture.size, 8);
    memcpy(im.data, g_fixture.data, im.size);
    REQUIRE(load_image(T, &im, &m) == OPARA_OK);
    REQUIRE(opara_model_get_stats(m, &st) == OPARA_OK);
    CHECK_EQ(st.zero_copy, 0);
    CHECK(!constants_inside(m, im.data, im.size));
    image_free(&im); /* the model owns its copy */
    CHECK_EQ(opara_model_node_count(m), N_NODES);
    CHECK(((const float*)opara__model_graph(m)->values[T_BF].data)[0] == 0.5f * -8);
    opara_model_destroy(m);
}

#if !defined(OPARA_NO_STDIO)
OT_TEST(load_file_maps_and_validates) {
    char path[64];
    FILE* f;
    opara_model* m = NULL;
    opara_model_stats st;
    opara_result r;
    sprintf(path, "build/test_format_%d.opara", (int)(uintptr_t)&path % 9973);
    f = fopen(path, "wb");
    if (!f) SKIP("cannot write %s", path);
    fwrite(g_fixture.data, 1, g_fixture.size, f);
    fclose(f);
    r = opara_model_load_file(g_rt, path, &m);
    REQUIRE(r == OPARA_OK);
    REQUIRE(opara_model_get_stats(m, &st) == OPARA_OK);
    CHECK(st.zero_copy);
#  if defined(__unix__)
    CHECK(m->map_base != NULL);
    CHECK(constants_inside(m, (const uint8_t*)m->map_base, m->map_size));
#  endif
    opara_model_destroy(m);
    remove(path);
    CHECK_EQ(opara_model_load_file(g_rt, "build/no/such/file.opara", &m), OPARA_ERR_IO);
    CHECK(strstr(opara_runtime_last_error(g_rt), "no/such/file") != NULL);
    CHECK(m == NULL);
}
#endif

/* ---- every check has its code ---------------------------------------------------------------- */

OT_TEST(bad_magic) {
    image im;
    fixture_copy(&im);
    im.data[1] = 'X';
    EXPECT_LOAD(&im, OPARA_ERR_BAD_MAGIC, "magic");
    im.data[1] = 'O';
    im.data[6] = '\n'; /* text-mode damage */
    EXPECT_LOAD(&im, OPARA_ERR_BAD_MAGIC, "");
    image_free(&im);
}

OT_TEST(versions) {
    image im;
    fixture_copy(&im);
    im.data[H_VER_MAJOR] = 2;
    EXPECT_LOAD(&im, OPARA_ERR_VERSION_TOO_NEW, "2.0");
    im.data[H_VER_MAJOR] = 0;
    EXPECT_LOAD(&im, OPARA_ERR_VERSION_TOO_OLD, "0.0");
    im.data[H_VER_MAJOR] = 1;
    im.data[H_VER_MINOR] = 7; /* a newer minor version is readable */
    EXPECT_LOAD(&im, OPARA_OK, "");
    image_free(&im);
}

OT_TEST(flags) {
    image im;
    fixture_copy(&im);
    put32(im.data + H_FLAGS, 1u << 3);
    EXPECT_LOAD(&im, OPARA_ERR_UNKNOWN_FLAGS, "0x0008");
    put32(im.data + H_FLAGS, 1u << 20); /* optional bits are ignored */
    EXPECT_LOAD(&im, OPARA_OK, "");
    image_free(&im);
}

/* An Add with a fused "activation" sets must-understand bit 0 (a reader without it would compute the Add
   alone), loads back with its attribute, and a file without one keeps flags 0 (the fixture). */
OT_TEST(a_fused_binary_activation_sets_must_understand_bit_0) {
    static const int64_t xd[2] = {2, 3};
    static const char* const ins[2] = {"x", "x"}, *const outs[1] = {"y"};
    opara_builder* b = NULL;
    opara_model *m = NULL, *back = NULL;
    opara__bytes bytes;
    opara_attr a;
    image im;
    memset(&a, 0, sizeof a);
    a.name = "activation", a.type = OPARA_ATTR_STRING, a.v.s = "GeluTanh";
    REQUIRE(opara_builder_create(g_rt, &b) == OPARA_OK);
    opara_builder_add_input(b, "x", OPARA_DTYPE_F32, 2, xd);
    opara_builder_add_node(b, "Add", "add", 2, ins, 1, outs, 1, &a);
    opara_builder_add_output(b, "y");
    REQUIRE(opara_builder_finish(b, &m) == OPARA_OK);
    opara_builder_destroy(b);
    REQUIRE(opara__format_write(g_rt, opara__model_graph(m), 64, &bytes) == OPARA_OK);
    image_alloc(&im, bytes.size, 0);
    memcpy(im.data, bytes.data, bytes.size);
    opara_free(g_rt, bytes.data);
    CHECK_EQ(le32(im.data + H_FLAGS), 1);
    REQUIRE(load_image(T, &im, &back) == OPARA_OK);
    CHECK_STR(opara__attr_string(&opara__model_graph(back)->nodes[0], "activation", ""), "GeluTanh");
    opara_model_destroy(back);
    opara_model_destroy(m);
    image_free(&im);
    CHECK_EQ(le32(g_fixture.data + H_FLAGS), 0);
}

OT_TEST(alignment_checks) {
    image im;
    uint64_t off;
    fixture_copy(&im);
    put32(im.data + H_ALIGN, 48);
    EXPECT_LOAD(&im, OPARA_ERR_BAD_ALIGNMENT, "alignment 48");
    put32(im.data + H_ALIGN, 8);
    EXPECT_LOAD(&im, OPARA_ERR_BAD_ALIGNMENT, "");
    put32(im.data + H_ALIGN, 64);
    off = le64(tensor_rec(&im, T_B1) + 80);
    put64(tensor_rec(&im, T_B1) + 80, off + 4);
    EXPECT_LOAD(&im, OPARA_ERR_BAD_ALIGNMENT, "'b1'");
    put64(tensor_rec(&im, T_B1) + 80, off);
    put64(im.data + H_DATA, le64(im.data + H_DATA) + 8);
    put64(im.data + H_DATA_SIZE, le64(im.data + H_DATA_SIZE) - 8);
    EXPECT_LOAD(&im, OPARA_ERR_BAD_ALIGNMENT, "data section");
    image_free(&im);
}

OT_TEST(offsets_out_of_bounds) {
    image im;
    fixture_copy(&im);
    put64(tensor_rec(&im, T_BF) + 80, (le64(im.data + H_DATA_SIZE) + 63) / 64 * 64); /* past the end, aligned */
    EXPECT_LOAD(&im, OPARA_ERR_OUT_OF_BOUNDS, "tensor 5 'bf': data [");
    image_free(&im);
    fixture_copy(&im);
    put64(im.data + H_PAYLOAD_SIZE, UINT64_MAX - 3);
    EXPECT_LOAD(&im, OPARA_ERR_OUT_OF_BOUNDS, "attribute payload");
    image_free(&im);
    fixture_copy(&im);
    put64(tensor_rec(&im, T_W1) + 88, UINT64_MAX); /* size overflow in the subtraction-form check */
    EXPECT_LOAD(&im, OPARA_ERR_OUT_OF_BOUNDS, "'w1'");
    image_free(&im);
}

OT_TEST(indices_out_of_range) {
    image im;
    fixture_copy(&im);
    put32(ref_at(&im, 1), N_TENSORS); /* conv1's weight */
    EXPECT_LOAD(&im, OPARA_ERR_BAD_INDEX, "node 0 'conv1' input 1: tensor index 14");
    image_free(&im);
    fixture_copy(&im);
    put32(tensor_rec(&im, T_W2), le32(im.data + H_N_STRINGS)); /* name */
    EXPECT_LOAD(&im, OPARA_ERR_BAD_INDEX, "string index");
    image_free(&im);
    fixture_copy(&im);
    put32(node_rec(&im, N_FC) + 8, le32(im.data + H_N_REFS) - 1); /* refs run past the table */
    EXPECT_LOAD(&im, OPARA_ERR_BAD_INDEX, "'fc'");
    image_free(&im);
}

OT_TEST(enums_and_dtypes) {
    image im;
    fixture_copy(&im);
    tensor_rec(&im, T_W2)[4] = 99;
    EXPECT_LOAD(&im, OPARA_ERR_BAD_DTYPE, "'w2': unknown data type 99");
    tensor_rec(&im, T_W2)[4] = OPARA_DTYPE_I64; /* 8 elements of i64 need 64 bytes, the data has 32 */
    EXPECT_LOAD(&im, OPARA_ERR_BAD_DTYPE, "'w2'");
    tensor_rec(&im, T_W2)[4] = OPARA_DTYPE_F32;
    tensor_rec(&im, T_Y)[4] = OPARA_DTYPE_I32; /* declared dtype of an activation disagrees with inference */
    EXPECT_LOAD(&im, OPARA_ERR_BAD_DTYPE, "'y'");
    tensor_rec(&im, T_Y)[4] = OPARA_DTYPE_F32;
    tensor_rec(&im, T_W2)[7] = 7;
    EXPECT_LOAD(&im, OPARA_ERR_BAD_ENUM, "kind 7");
    tensor_rec(&im, T_W2)[7] = 2;
    {
        uint8_t* attr = im.data + le64(im.data + H_ATTRS) + (size_t)le32(node_rec(&im, N_CONV1) + 20) * A_SIZE;
        attr[4] = 9;
        EXPECT_LOAD(&im, OPARA_ERR_BAD_ENUM, "unknown type 9");
        attr[4] = 1; /* "pads" as INT: the schema rejects it */
        EXPECT_LOAD(&im, OPARA_ERR_CORRUPT, "'pads' is INT, expected INTS");
    }
    image_free(&im);
}

OT_TEST(cycle_is_detected) {
    image im;
    fixture_copy(&im);
    put32(ref_at(&im, 0), T_R1); /* conv1 reads relu's output: conv1 -> relu1 -> conv1 */
    EXPECT_LOAD(&im, OPARA_ERR_CYCLE, "cycle");
    image_free(&im);
}

OT_TEST(duplicates_and_overlaps) {
    image im;
    fixture_copy(&im);
    put32(tensor_rec(&im, T_B1), le32(tensor_rec(&im, T_W1))); /* b1 renamed to "w1" */
    EXPECT_LOAD(&im, OPARA_ERR_CORRUPT, "duplicate name 'w1'");
    image_free(&im);
    fixture_copy(&im);
    put64(tensor_rec(&im, T_B1) + 80, 64); /* inside w1's [0, 432) */
    EXPECT_LOAD(&im, OPARA_ERR_CORRUPT, "overlaps");
    image_free(&im);
    fixture_copy(&im);
    put32(ref_at(&im, 5), T_C1); /* relu writes c1, which conv1 produces */
    EXPECT_LOAD(&im, OPARA_ERR_CORRUPT, "producer");
    image_free(&im);
}

OT_TEST(strings_and_ops) {
    image im;
    char* relu;
    fixture_copy(&im);
    relu = (char*)string_at(&im, le32(node_rec(&im, N_RELU)));
    REQUIRE(strcmp(relu, "Relu") == 0);
    relu[3] = 'x';
    EXPECT_LOAD(&im, OPARA_ERR_UNSUPPORTED_OP, "'Relx'");
    relu[4] = 'y'; /* the NUL terminator is gone */
    EXPECT_LOAD(&im, OPARA_ERR_CORRUPT, "NUL");
    image_free(&im);
}

OT_TEST(limits) {
    image im;
    fixture_copy(&im);
    put32(im.data + H_N_TENSORS, OPARA_MAX_TENSORS + 1);
    EXPECT_LOAD(&im, OPARA_ERR_LIMIT_EXCEEDED, "OPARA_MAX_TENSORS");
    put32(im.data + H_N_TENSORS, N_TENSORS);
    put64(im.data + H_TOTAL, (uint64_t)OPARA_MAX_MODEL_BYTES + 1);
    EXPECT_LOAD(&im, OPARA_ERR_LIMIT_EXCEEDED, "OPARA_MAX_MODEL_BYTES");
    put64(im.data + H_TOTAL, im.size + 1);
    EXPECT_LOAD(&im, OPARA_ERR_TRUNCATED, "");
    image_free(&im);
}

OT_TEST(sections_must_not_overlap) {
    image im;
    fixture_copy(&im);
    put64(im.data + H_NODES, le64(im.data + H_TENSORS)); /* node table on top of the tensor table */
    EXPECT_LOAD(&im, OPARA_ERR_CORRUPT, "node table");
    image_free(&im);
    fixture_copy(&im);
    put64(im.data + H_STRINGS, 64); /* inside the header */
    EXPECT_LOAD(&im, OPARA_ERR_CORRUPT, "string index");
    image_free(&im);
}

/* ---- robustness ------------------------------------------------------------------------------ */

OT_TEST(truncated_at_every_byte) {
    size_t len;
    int bad = 0;
    for (len = 0; len < g_fixture.size; ++len) {
        image im;
        opara_model* m = NULL;
        opara_result r;
        image_alloc(&im, len, 0);
        memcpy(im.data, g_fixture.data, len);
        r = opara_model_load_memory(g_rt, len ? im.data : NULL, len, &m);
        if (r != OPARA_ERR_TRUNCATED || m != NULL || !opara_runtime_last_error(g_rt)[0]) {
            if (bad++ < 5) OT_LOG("length %zu: %s (%s)", len, opara_result_string(r), opara_runtime_last_error(g_rt));
        }
        opara_model_destroy(m);
        image_free(&im);
    }
    CHECK_EQ(bad, 0);
}

static uint64_t xorshift(uint64_t* s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Flips/sets random bytes, mostly in the tables (where structure lives), and loads. Success is
   allowed (a flip in weights changes nothing structural); a failure must come with a code and a
   message, and a model that loads must also infer shapes or fail cleanly. */
OT_TEST(random_corruptions_never_crash) {
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    int iter, ok = 0, failed = 0, no_message = 0;
    uint64_t table_end = le64(g_fixture.data + H_DATA);
    image im;
    fixture_copy(&im);
    for (iter = 0; iter < 6000; ++iter) {
        int flips = 1 + (int)(xorshift(&seed) % 4), k;
        opara_model* m = NULL;
        opara_result r;
        memcpy(im.data, g_fixture.data, im.size);
        for (k = 0; k < flips; ++k) {
            uint64_t pos = xorshift(&seed) % (iter % 8 == 0 ? im.size : table_end);
            uint64_t how = xorshift(&seed) % 4;
            if (how == 0) im.data[pos] ^= (uint8_t)(1u << (xorshift(&seed) % 8));
            else if (how == 1) im.data[pos] = 0xFF;
            else if (how == 2) im.data[pos] = 0;
            else im.data[pos] = (uint8_t)xorshift(&seed);
        }
        r = opara_model_load_memory(g_rt, im.data, im.size, &m);
        if (r == OPARA_OK) {
            const opara__graph* g = opara__model_graph(m);
            opara__shape* shapes = (opara__shape*)malloc(sizeof(opara__shape) * (g->n_values + 1));
            (void)opara__infer_shapes(g_rt, g, 3, shapes);
            free(shapes);
            ++ok;
        } else {
            ++failed;
            if (!opara_runtime_last_error(g_rt)[0] || r > 0) ++no_message;
        }
        opara_model_destroy(m);
    }
    image_free(&im);
    OT_LOG("%d loaded, %d rejected", ok, failed);
    CHECK_EQ(no_message, 0);
    CHECK(failed > 3000); /* most corruptions of the tables must be caught */
}

static const opara_test_case tests[] = {
    OT_CASE(header_follows_the_spec),
    OT_CASE(content_hash_is_fnv1a_of_everything_after_the_header),
    OT_CASE(save_load_save_is_byte_identical),
    OT_CASE(queries_report_the_model),
    OT_CASE(load_memory_uses_weights_in_place),
    OT_CASE(misaligned_buffer_is_copied),
#if !defined(OPARA_NO_STDIO)
    OT_CASE(load_file_maps_and_validates),
#endif
    OT_CASE(bad_magic),
    OT_CASE(versions),
    OT_CASE(flags),
    OT_CASE(a_fused_binary_activation_sets_must_understand_bit_0),
    OT_CASE(alignment_checks),
    OT_CASE(offsets_out_of_bounds),
    OT_CASE(indices_out_of_range),
    OT_CASE(enums_and_dtypes),
    OT_CASE(cycle_is_detected),
    OT_CASE(duplicates_and_overlaps),
    OT_CASE(strings_and_ops),
    OT_CASE(limits),
    OT_CASE(sections_must_not_overlap),
    OT_CASE(truncated_at_every_byte),
    OT_CASE(random_corruptions_never_crash),
};

int main(int argc, char** argv) {
    int rc;
    if (!setup()) {
        printf("setup failed\n0 passed, 1 failed\n");
        return 1;
    }
    rc = opara_test_main(argc, argv, tests, OT_COUNT(tests));
    image_free(&g_fixture);
    opara_runtime_destroy(g_rt);
    return rc;
}
