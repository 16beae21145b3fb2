/* The public API skeleton and the private helpers every module relies on. */
#define OPARA_IMPLEMENTATION
#include "opara.h"
#include "opara_test.h"

OT_TEST(result_strings_name_every_code) {
    static const opara_result codes[] = {
#define X(name, value, text) name,
        OPARA_RESULTS(X)
#undef X
    };
    int i;
    for (i = 0; i < (int)(sizeof codes / sizeof codes[0]); ++i) {
        const char* s = opara_result_string(codes[i]);
        CHECK(s != NULL && strncmp(s, "OPARA_", 6) == 0);
        CHECK(codes[i] <= 0);
    }
    CHECK_STR(opara_result_string((opara_result)12345), "unknown opara_result");
    CHECK_STR(opara_result_string(OPARA_ERR_TRUNCATED), "OPARA_ERR_TRUNCATED: model data is truncated");
}

OT_TEST(result_codes_are_grouped_by_area) {
    CHECK(OPARA_ERR_INVALID_ARGS > -100);
    CHECK(OPARA_ERR_TRUNCATED <= -100 && OPARA_ERR_TRUNCATED > -200);
    CHECK(OPARA_ERR_UNSUPPORTED_OP <= -200 && OPARA_ERR_UNSUPPORTED_OP > -300);
    CHECK(OPARA_ERR_PLAN_INVALID <= -300 && OPARA_ERR_PLAN_INVALID > -400);
    CHECK(OPARA_ERR_CUDA <= -400);
}

OT_TEST(dtype_sizes_follow_onnx) {
    /* ONNX TensorProto.DataType: FLOAT=1 UINT8=2 INT8=3 INT32=6 INT64=7 BOOL=9 FLOAT16=10 DOUBLE=11 */
    CHECK_EQ(OPARA_DTYPE_F32, 1);
    CHECK_EQ(OPARA_DTYPE_I64, 7);
    CHECK_EQ(OPARA_DTYPE_F64, 11);
    CHECK_EQ(opara_dtype_size(OPARA_DTYPE_F32), sizeof(float));
    CHECK_EQ(opara_dtype_size(OPARA_DTYPE_I64), sizeof(int64_t));
    CHECK_EQ(opara_dtype_size(OPARA_DTYPE_F64), sizeof(double));
    CHECK_EQ(opara_dtype_size(OPARA_DTYPE_BOOL), 1);
    CHECK_EQ(opara_dtype_size((opara_dtype)99), 0);
    CHECK_STR(opara_dtype_name(OPARA_DTYPE_I64), "i64");
}

typedef struct counting_allocator {
    int allocs, frees;
    size_t last_alignment;
} counting_allocator;

static void* count_alloc(size_t size, size_t alignment, void* user) {
    counting_allocator* c = (counting_allocator*)user;
    c->allocs++;
    c->last_alignment = alignment;
    return ot_aligned_alloc(size, alignment);
}

static void count_free(void* p, void* user) {
    ((counting_allocator*)user)->frees++;
    ot_aligned_free(p);
}

OT_TEST(allocator_hook_sees_every_allocation) {
    counting_allocator c;
    opara_runtime_desc desc;
    opara_runtime* rt = NULL;
    void* p;
    memset(&c, 0, sizeof c);
    memset(&desc, 0, sizeof desc);
    desc.allocator.alloc_fn = count_alloc;
    desc.allocator.free_fn = count_free;
    desc.allocator.user_data = &c;
    REQUIRE(opara_runtime_create(&desc, &rt) == OPARA_OK);
    p = opara__alloc_aligned(&rt->allocator, 100, 64);
    REQUIRE(p != NULL);
    CHECK_EQ((uintptr_t)p % 64, 0);
    CHECK_EQ(c.last_alignment, 64);
    opara__free_aligned(&rt->allocator, p);
    opara_runtime_destroy(rt);
    CHECK_EQ(c.allocs, 2);
    CHECK_EQ(c.frees, 2);
}

OT_TEST(half_an_allocator_is_rejected) {
    opara_runtime_desc desc;
    opara_runtime* rt = (opara_runtime*)&desc;
    memset(&desc, 0, sizeof desc);
    desc.allocator.alloc_fn = count_alloc;
    CHECK_EQ(opara_runtime_create(&desc, &rt), OPARA_ERR_INVALID_ARGS);
    CHECK(rt == NULL);
    CHECK_EQ(opara_runtime_create(NULL, NULL), OPARA_ERR_INVALID_ARGS);
}

OT_TEST(default_allocator_aligns) {
    size_t align;
    for (align = 16; align <= 4096; align *= 2) {
        void* p = opara__alloc_aligned(NULL, 3, align);
        REQUIRE(p != NULL);
        CHECK_EQ((uintptr_t)p % align, 0);
        memset(p, 0xab, 3);
        opara__free_aligned(NULL, p);
    }
    CHECK(opara__alloc_aligned(NULL, 8, 48) == NULL); /* not a power of two */
    CHECK(opara__alloc_aligned(NULL, (size_t)-1, 64) == NULL);
}

typedef struct captured_log {
    int count;
    opara_log_level level;
    opara_log_item item;
    char text[256];
} captured_log;

static void capture_log(opara_log_level level, opara_log_item item, const char* message, void* user) {
    captured_log* c = (captured_log*)user;
    c->count++;
    c->level = level;
    c->item = item;
    strncpy(c->text, message, sizeof c->text - 1);
}

OT_TEST(failures_fill_last_error_and_reach_the_logger) {
    captured_log log;
    opara_runtime_desc desc;
    opara_runtime* rt = NULL;
    memset(&log, 0, sizeof log);
    memset(&desc, 0, sizeof desc);
    desc.logger.func = capture_log;
    desc.logger.user_data = &log;
    REQUIRE(opara_runtime_create(&desc, &rt) == OPARA_OK);
    CHECK_STR(opara_runtime_last_error(rt), "");
    CHECK_EQ(opara__fail(rt, OPARA_ERR_BAD_INDEX, "node %d input %d: tensor %u of %u", 3, 1, 99u, 10u),
             OPARA_ERR_BAD_INDEX);
    CHECK_STR(opara_runtime_last_error(rt), "node 3 input 1: tensor 99 of 10");
    CHECK_EQ(log.count, 1);
    CHECK_EQ(log.level, OPARA_LOG_ERROR);
    CHECK_EQ(log.item, OPARA_LOGITEM_ERROR_DETAIL);
    CHECK(strstr(log.text, "OPARA_ERR_BAD_INDEX") != NULL);
    opara__log(&rt->logger, OPARA_LOG_DEBUG, OPARA_LOGITEM_PLAN_SUMMARY, "hidden below the default level");
    CHECK_EQ(log.count, 1);
    opara_runtime_destroy(rt);
}

OT_TEST(checked_arithmetic_matches_wide_math) {
    static const uint64_t samples[] = {0, 1, 2, 3, 255, 65536, 0xffffffffull, 0x100000000ull, 0x7fffffffffffffffull,
                                       0x8000000000000000ull, 0xfffffffffffffffeull, 0xffffffffffffffffull};
    size_t i, j, n = sizeof samples / sizeof samples[0];
    for (i = 0; i < n; ++i) {
        for (j = 0; j < n; ++j) {
            uint64_t a = samples[i], b = samples[j];
            size_t r;
#if defined(__SIZEOF_INT128__)
            if (sizeof(size_t) == 8) {
                __extension__ typedef unsigned __int128 u128;
                CHECK_EQ(opara__mul_size((size_t)a, (size_t)b, &r), (u128)a * b <= (u128)SIZE_MAX);
                CHECK_EQ(opara__add_size((size_t)a, (size_t)b, &r), (u128)a + b <= (u128)SIZE_MAX);
            }
#endif
            CHECK_EQ(opara__range_ok(a, b, 1000), a <= 1000 && b <= 1000 && a + b <= 1000);
        }
    }
    {
        int64_t out;
        CHECK(opara__mul_i64(INT64_MAX / 2, 2, &out) && out == INT64_MAX - 1);
        CHECK(!opara__mul_i64(INT64_MAX / 2 + 1, 2, &out));
        CHECK(!opara__mul_i64(-1, 2, &out));
    }
}

OT_TEST(little_endian_round_trip) {
    uint8_t buf[8];
    static const uint8_t expected[8] = {0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01};
    opara__wr_u64(buf, 0x0102030405060708ull);
    CHECK(memcmp(buf, expected, 8) == 0);
    CHECK_EQ(opara__rd_u64(buf), 0x0102030405060708ll);
    CHECK_EQ(opara__rd_u32(buf + 4), 0x01020304);
    CHECK_EQ(opara__rd_u16(buf + 6), 0x0102);
}

OT_TEST(format_truncates_safely) {
    char small[8];
    CHECK_EQ(opara__format(small, sizeof small, "%s", "0123456789"), 7);
    CHECK_STR(small, "0123456");
}

typedef struct counter_job {
    volatile int32_t* counter;
    int iterations;
} counter_job;

static void count_up(void* arg) {
    counter_job* job = (counter_job*)arg;
    int i;
    for (i = 0; i < job->iterations; ++i) opara__atomic_add(job->counter, 1);
}

OT_TEST(threads_and_atomics) {
    volatile int32_t counter = 0;
    opara__thread threads[4];
    counter_job job;
    int i;
    job.counter = &counter;
    job.iterations = 10000;
    for (i = 0; i < 4; ++i) REQUIRE(opara__thread_start(&threads[i], count_up, &job));
    for (i = 0; i < 4; ++i) opara__thread_join(&threads[i]);
    CHECK_EQ(opara__atomic_load(&counter), 40000);
    CHECK(opara__atomic_cas(&counter, 40000, 7));
    CHECK(!opara__atomic_cas(&counter, 40000, 8));
    CHECK_EQ(opara__atomic_load(&counter), 7);
    CHECK(opara__cpu_count() >= 1);
}

OT_TEST(clock_is_monotonic) {
    uint64_t a = opara__now_ns(), b = opara__now_ns();
    CHECK(b >= a);
}

static const opara_test_case tests[] = {
    OT_CASE(result_strings_name_every_code),
    OT_CASE(result_codes_are_grouped_by_area),
    OT_CASE(dtype_sizes_follow_onnx),
    OT_CASE(allocator_hook_sees_every_allocation),
    OT_CASE(half_an_allocator_is_rejected),
    OT_CASE(default_allocator_aligns),
    OT_CASE(failures_fill_last_error_and_reach_the_logger),
    OT_CASE(checked_arithmetic_matches_wide_math),
    OT_CASE(little_endian_round_trip),
    OT_CASE(format_truncates_safely),
    OT_CASE(threads_and_atomics),
    OT_CASE(clock_is_monotonic),
};

int main(int argc, char** argv) { return opara_test_main(argc, argv, tests, OT_COUNT(tests)); }
