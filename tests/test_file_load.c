/* The file layer of both loaders (opara_model_load_file, opara_model_load_onnx_file): a file is
   sized once and read at most that far; directories, devices, FIFOs and files whose size says 0
   but that yield bytes are refused with OPARA_ERR_IO, and so is a file that grows or shrinks
   between the size query and the read (an editor rewriting a model in place). The change is made
   deterministic by the allocator hook: the allocation of the read buffer (which happens after the
   size query and before the read) rewrites the file.

   Built with OPARA_NO_MMAP so that .opara files take the read path too (with mmap, a regular
   file is mapped and never read). Directory, device and FIFO refusals of the default (mmap) build
   are rows of test_api_misuse. */
#if !defined(_WIN32)
#  define _GNU_SOURCE /* mkdtemp, mkfifo, alarm: the test's own fixture */
#endif
#define OPARA_NO_MMAP
#define OPARA_IMPLEMENTATION
#include "opara.h"
#include "opara_test.h"
#include "opara_model_fixture.h"
#if defined(__GNUC__)
#  pragma GCC diagnostic ignored "-Wunused-function" /* onnx_pbw.h: only a few writers are used */
#endif
#include "onnx_pbw.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if !defined(_WIN32)
#  include <sys/stat.h>
#  include <sys/types.h>
#  include <unistd.h>
#endif

/* ---- the allocator hook that rewrites the file ----------------------------------------------- */

enum { MUTATE_NONE, MUTATE_GROW, MUTATE_SHRINK };

typedef struct file_hook {
    const char* path;
    size_t file_size; /* the size the loader will see */
    int mutate;       /* armed mutation, done once */
    int fired;
} file_hook;

static file_hook g_hook;

/* The file cut to its first half, in place (plain stdio: truncate() is POSIX's). */
static int rewrite_first_half(const char* path, size_t size) {
    unsigned char* head = (unsigned char*)malloc(size / 2 + 1);
    FILE* f = head ? fopen(path, "rb") : NULL;
    int ok = f && fread(head, 1, size / 2, f) == size / 2;
    if (f) fclose(f);
    f = ok ? fopen(path, "wb") : NULL;
    ok = f && fwrite(head, 1, size / 2, f) == size / 2;
    if (f && fclose(f) != 0) ok = 0;
    free(head);
    return ok;
}

static void mutate_file(void) {
    FILE* f;
    if (g_hook.mutate == MUTATE_GROW) {
        static const char more[64] = "appended by the editor";
        f = fopen(g_hook.path, "ab");
        if (f) fwrite(more, 1, sizeof more, f), fclose(f);
    } else if (!rewrite_first_half(g_hook.path, g_hook.file_size)) {
        return;
    }
    g_hook.fired = 1;
    g_hook.mutate = MUTATE_NONE;
}

/* Over-allocates and keeps malloc's pointer just below the aligned block. */
static void* hook_alloc(size_t size, size_t alignment, void* user) {
    uint8_t *raw, *p;
    (void)user;
    /* The read buffer: the file's size (plus a little slack); nothing else the loader allocates
       before reading is that large for these files. */
    if (g_hook.mutate != MUTATE_NONE && size >= g_hook.file_size && size - g_hook.file_size <= 64) mutate_file();
    raw = (uint8_t*)malloc(size + alignment + sizeof(void*));
    if (!raw) return NULL;
    p = raw + sizeof(void*);
    p += (alignment - ((uintptr_t)p & (alignment - 1))) & (alignment - 1);
    memcpy(p - sizeof(void*), &raw, sizeof raw);
    return p;
}

static void hook_free(void* ptr, void* user) {
    void* raw;
    (void)user;
    memcpy(&raw, (uint8_t*)ptr - sizeof(void*), sizeof raw);
    free(raw);
}

static opara_runtime* hooked_runtime(void) {
    opara_runtime_desc d;
    opara_runtime* rt = NULL;
    memset(&d, 0, sizeof d);
    d.allocator.alloc_fn = hook_alloc;
    d.allocator.free_fn = hook_free;
    return opara_runtime_create(&d, &rt) == OPARA_OK ? rt : NULL;
}

/* ---- fixture files ---------------------------------------------------------------------------- */

static char g_dir[] = "/tmp/opara_file_load_XXXXXX";
static char g_opara[128], g_onnx[128], g_fifo[128];

static int write_file(const char* path, const void* data, size_t size) {
    FILE* f = fopen(path, "wb");
    int ok = f && fwrite(data, 1, size, f) == size;
    if (f) ok &= fclose(f) == 0;
    return ok;
}

/* y = Relu(x), x [1,4]. */
static pbw relu_onnx(void) {
    static const int64_t d[2] = {1, 4};
    static char doc[4096];
    pbw g = {0, 0, 0}, m;
    static const char* const in[] = {"x", NULL};
    static const char* const out[] = {"y", NULL};
    pbw_node(&g, "Relu", "relu", in, out, NULL);
    pbw_value_info(&g, 11, "x", 1, d, 2);
    pbw_value_info(&g, 12, "y", 1, d, 2);
    m = pbw_model(7, 13, &g);
    memset(doc, 'd', sizeof doc);
    pbw_bytes(&m, 6, doc, sizeof doc); /* ModelProto.doc_string: a file well beyond the 192-byte head */
    return m;
}

/* Writes the fixture files afresh (a test may have rewritten them). */
static int write_fixtures(opara_runtime* rt) {
    void* image = NULL;
    size_t size = 0;
    pbw m = relu_onnx();
    int ok = fixture_image(rt, &image, &size) == OPARA_OK && write_file(g_opara, image, size) &&
             write_file(g_onnx, m.d, m.n);
    opara_free(rt, image);
    free(m.d);
    return ok;
}

static size_t file_size(const char* path) {
    FILE* f = fopen(path, "rb");
    long n = f && fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    if (f) fclose(f);
    return n > 0 ? (size_t)n : 0;
}

typedef opara_result (*load_fn)(opara_runtime* rt, const char* path, opara_model** m);

static opara_result load_opara(opara_runtime* rt, const char* path, opara_model** m) {
    return opara_model_load_file(rt, path, m);
}
static opara_result load_onnx(opara_runtime* rt, const char* path, opara_model** m) {
    return opara_model_load_onnx_file(rt, path, NULL, m);
}

/* Loads path with the file rewritten (mutate) during the load; returns the result code. */
static opara_result load_mutated(opara_test* T, load_fn load, const char* path, int mutate, char* detail, size_t cap) {
    opara_runtime* rt = hooked_runtime();
    opara_model* m = (opara_model*)&g_hook; /* must come back NULL */
    opara_result r;
    if (!rt || !write_fixtures(rt)) {
        CHECK(!"fixture");
        opara_runtime_destroy(rt);
        return OPARA_ERR_INTERNAL;
    }
    g_hook.path = path;
    g_hook.file_size = file_size(path);
    g_hook.mutate = mutate;
    g_hook.fired = 0;
    r = load(rt, path, &m);
    snprintf(detail, cap, "%s", opara_runtime_last_error(rt));
    CHECK_EQ(g_hook.fired, mutate != MUTATE_NONE);
    if (r != OPARA_OK) CHECK(m == NULL);
    opara_model_destroy(r == OPARA_OK ? m : NULL);
    g_hook.mutate = MUTATE_NONE;
    opara_runtime_destroy(rt);
    return r;
}

/* ---- tests ------------------------------------------------------------------------------------ */

OT_TEST(unchanged_files_load_through_the_read_path) {
    char detail[1100];
    CHECK_EQ(load_mutated(T, load_opara, g_opara, MUTATE_NONE, detail, sizeof detail), OPARA_OK);
    CHECK_EQ(load_mutated(T, load_onnx, g_onnx, MUTATE_NONE, detail, sizeof detail), OPARA_OK);
}

OT_TEST(opara_file_that_grows_while_read_is_refused) {
    char detail[1100];
    CHECK_EQ(load_mutated(T, load_opara, g_opara, MUTATE_GROW, detail, sizeof detail), OPARA_ERR_IO);
    CHECK(strstr(detail, "changed while being read") != NULL);
    OT_LOG("%s", detail);
}

OT_TEST(opara_file_that_shrinks_while_read_is_refused) {
    char detail[1100];
    CHECK_EQ(load_mutated(T, load_opara, g_opara, MUTATE_SHRINK, detail, sizeof detail), OPARA_ERR_IO);
    CHECK(strstr(detail, "changed while being read") != NULL);
}

OT_TEST(onnx_file_that_grows_while_read_is_refused) {
    char detail[1100];
    CHECK_EQ(load_mutated(T, load_onnx, g_onnx, MUTATE_GROW, detail, sizeof detail), OPARA_ERR_IO);
    CHECK(strstr(detail, "changed while being read") != NULL);
}

OT_TEST(onnx_file_that_shrinks_while_read_is_refused) {
    char detail[1100];
    CHECK_EQ(load_mutated(T, load_onnx, g_onnx, MUTATE_SHRINK, detail, sizeof detail), OPARA_ERR_IO);
    CHECK(strstr(detail, "changed while being read") != NULL);
}

/* Each loader refuses path with OPARA_ERR_IO and a detail containing `says`. */
static void check_refused(opara_test* T, const char* path, const char* says) {
    opara_runtime* rt = hooked_runtime();
    opara_model* m = (opara_model*)&g_hook;
    REQUIRE(rt != NULL);
    CHECK_EQ(opara_model_load_file(rt, path, &m), OPARA_ERR_IO);
    CHECK(m == NULL);
    CHECK(strstr(opara_runtime_last_error(rt), says) != NULL);
    OT_LOG("%s: %s", path, opara_runtime_last_error(rt));
    m = (opara_model*)&g_hook;
    CHECK_EQ(opara_model_load_onnx_file(rt, path, NULL, &m), OPARA_ERR_IO);
    CHECK(m == NULL);
    CHECK(strstr(opara_runtime_last_error(rt), says) != NULL);
    opara_runtime_destroy(rt);
}

OT_TEST(dev_zero_is_refused_not_overflowed) {
    if (access("/dev/zero", R_OK) != 0) SKIP("no /dev/zero here");
    check_refused(T, "/dev/zero", "not a regular file");
}

OT_TEST(file_whose_size_reads_0_but_yields_bytes_is_refused) {
    /* procfs files report st_size 0 and yield text: the header must not be copied into a
       buffer sized from the 0. */
    if (access("/proc/self/status", R_OK) != 0) SKIP("no /proc/self/status here");
    check_refused(T, "/proc/self/status", "changed while being read");
}

OT_TEST(directory_is_io_not_out_of_memory) {
    check_refused(T, g_dir, "is a directory");
}

OT_TEST(fifo_is_refused_without_blocking) {
#ifdef _WIN32
    SKIP("Windows has no FIFOs in the file system");
#else
    if (mkfifo(g_fifo, 0600) != 0) SKIP("mkfifo failed");
    alarm(20); /* a blocking open would hang the suite: fail loudly instead */
    check_refused(T, g_fifo, "not a regular file");
    alarm(0);
    remove(g_fifo);
#endif
}

/* fopen of a UTF-8 name for the test's own checks, without the library (Windows: _wfopen). */
static FILE* fopen_utf8(const char* path, const char* mode) {
#ifdef _WIN32
    wchar_t wide_path[1024], wide_mode[8];
    if (!MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, path, -1, wide_path, 1024) ||
        !MultiByteToWideChar(CP_UTF8, 0, mode, -1, wide_mode, 8))
        return NULL;
    return _wfopen(wide_path, wide_mode);
#else
    return fopen(path, mode);
#endif
}

static void remove_utf8(const char* path) {
#ifdef _WIN32
    wchar_t wide_path[1024];
    if (MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, path, -1, wide_path, 1024)) _wremove(wide_path);
#else
    remove(path);
#endif
}

/* Every path given to opara is UTF-8: a builder saves under a non-ASCII name (the file must exist under
   that very name), both loaders read it back (on Windows: the wide-character calls, not the ANSI code
   page). */
OT_TEST(utf8_file_names_are_saved_and_loaded) {
    static const char name[] = "mod\xc3\xa8le_\xc3\xbc_\xe6\xa8\xa1\xe5\x9e\x8b"; /* "modèle_ü_模型" */
    char opara_path[256], onnx_path[256];
    opara_runtime* rt = NULL;
    opara_builder* b = NULL;
    opara_model* m = NULL;
    int64_t xd[2] = {2, 3};
    const char *in[1] = {"x"}, *out[1] = {"y"};
    pbw onnx = relu_onnx();
    FILE* f;
    snprintf(opara_path, sizeof opara_path, "%s/%s.opara", g_dir, name);
    snprintf(onnx_path, sizeof onnx_path, "%s/%s.onnx", g_dir, name);
    REQUIRE(opara_runtime_create(NULL, &rt) == OPARA_OK);
    REQUIRE(opara_builder_create(rt, &b) == OPARA_OK);
    opara_builder_add_input(b, "x", OPARA_DTYPE_F32, 2, xd);
    opara_builder_add_node(b, "Relu", "relu", 1, in, 1, out, 0, NULL);
    opara_builder_add_output(b, "y");
    CHECK_EQ(opara_builder_save_file(b, opara_path), OPARA_OK);
    opara_builder_destroy(b);
    f = fopen_utf8(opara_path, "rb");
    CHECK(f != NULL); /* under its UTF-8 name */
    if (f) fclose(f);
    CHECK_EQ(opara_model_load_file(rt, opara_path, &m), OPARA_OK);
    opara_model_destroy(m);
    m = NULL;
    f = fopen_utf8(onnx_path, "wb");
    REQUIRE(f != NULL);
    CHECK(fwrite(onnx.d, 1, onnx.n, f) == onnx.n);
    fclose(f);
    CHECK_EQ(opara_model_load_onnx_file(rt, onnx_path, NULL, &m), OPARA_OK);
    opara_model_destroy(m);
    free(onnx.d);
    opara_runtime_destroy(rt);
    remove_utf8(opara_path);
    remove_utf8(onnx_path);
}

OT_TEST(missing_file_says_no_such_file) {
    char path[160];
    snprintf(path, sizeof path, "%s/absent.opara", g_dir);
    check_refused(T, path, "No such file");
}

/* ---- the opt-in content-hash check ------------------------------------------------------------ */

static uint64_t rd64(const uint8_t* p) {
    uint64_t v = 0;
    int i;
    for (i = 7; i >= 0; --i) v = v << 8 | p[i];
    return v;
}

/* The fixture image with one weight byte flipped (data_off at header offset 152, docs/FORMAT.md),
   in a malloc'd buffer whose 64-byte aligned start is aligned_start(buffer). */
static uint8_t* aligned_start(uint8_t* raw) { return raw + ((64 - ((uintptr_t)raw & 63)) & 63); }

static uint8_t* flipped_image(opara_runtime* rt, size_t* size) {
    void* image = NULL;
    uint8_t *raw = NULL, *aligned;
    if (fixture_image(rt, &image, size) == OPARA_OK && (raw = (uint8_t*)malloc(*size + 64)) != NULL) {
        aligned = aligned_start(raw);
        memcpy(aligned, image, *size);
        aligned[rd64(aligned + 152) + 5] ^= 0x10; /* inside w1, the first constant */
    }
    opara_free(rt, image);
    return raw;
}

static opara_runtime* runtime_verifying(int verify) {
    opara_runtime_desc d;
    opara_runtime* rt = NULL;
    memset(&d, 0, sizeof d);
    d.verify_content_hash = verify;
    return opara_runtime_create(&d, &rt) == OPARA_OK ? rt : NULL;
}

OT_TEST(flipped_weight_byte_is_refused_when_verifying) {
    opara_runtime* plain = runtime_verifying(0);
    opara_runtime* verifying = runtime_verifying(1);
    opara_model* m = NULL;
    size_t size = 0;
    uint8_t* raw;
    const uint8_t* image;
    REQUIRE(plain && verifying);
    raw = flipped_image(plain, &size);
    REQUIRE(raw != NULL);
    image = aligned_start(raw);
    /* default: structure only, so the damaged weight loads (documented) */
    CHECK_EQ(opara_model_load_memory(plain, image, size, &m), OPARA_OK);
    opara_model_destroy(m);
    m = (opara_model*)raw;
    CHECK_EQ(opara_model_load_memory(verifying, image, size, &m), OPARA_ERR_CORRUPT);
    CHECK(m == NULL);
    CHECK(strstr(opara_runtime_last_error(verifying), "content hash mismatch") != NULL);
    /* the same through a file */
    REQUIRE(write_file(g_opara, image, size));
    CHECK_EQ(opara_model_load_file(verifying, g_opara, &m), OPARA_ERR_CORRUPT);
    free(raw);
    opara_runtime_destroy(plain);
    opara_runtime_destroy(verifying);
}

OT_TEST(intact_model_loads_when_verifying) {
    opara_runtime* rt = runtime_verifying(1);
    opara_model* m = NULL;
    REQUIRE(rt && write_fixtures(rt));
    CHECK_EQ(opara_model_load_file(rt, g_opara, &m), OPARA_OK);
    opara_model_destroy(m);
    opara_runtime_destroy(rt);
}

static const opara_test_case tests[] = {
    OT_CASE(flipped_weight_byte_is_refused_when_verifying),
    OT_CASE(intact_model_loads_when_verifying),
    OT_CASE(unchanged_files_load_through_the_read_path),
    OT_CASE(opara_file_that_grows_while_read_is_refused),
    OT_CASE(opara_file_that_shrinks_while_read_is_refused),
    OT_CASE(onnx_file_that_grows_while_read_is_refused),
    OT_CASE(onnx_file_that_shrinks_while_read_is_refused),
    OT_CASE(dev_zero_is_refused_not_overflowed),
    OT_CASE(file_whose_size_reads_0_but_yields_bytes_is_refused),
    OT_CASE(directory_is_io_not_out_of_memory),
    OT_CASE(fifo_is_refused_without_blocking),
    OT_CASE(missing_file_says_no_such_file),
    OT_CASE(utf8_file_names_are_saved_and_loaded),
};

int main(int argc, char** argv) {
    int rc;
    if (!mkdtemp(g_dir)) {
        printf("mkdtemp failed\n0 passed, 1 failed, 0 skipped\n");
        return 1;
    }
    snprintf(g_opara, sizeof g_opara, "%s/model.opara", g_dir);
    snprintf(g_onnx, sizeof g_onnx, "%s/model.onnx", g_dir);
    snprintf(g_fifo, sizeof g_fifo, "%s/fifo", g_dir);
    rc = opara_test_main(argc, argv, tests, OT_COUNT(tests));
    remove(g_opara);
    remove(g_onnx);
    remove(g_fifo);
    rmdir(g_dir);
    return rc;
}
