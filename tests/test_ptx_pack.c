/* test_ptx_pack.c - the packed PTX (src/cuda/kernels/opara_ptx_pack.h): every embedded kernel file unpacks to
   its committed plain PTX byte for byte (src/cuda/kernels/ptx/, tests/cudaemu/ptx/: what nvcc gave and ptxas
   read), streams written by hand from the format's description unpack as it says, and truncated, damaged
   or malformed streams are refused without a read or a write outside their buffers (each test copies the
   stream into a buffer of its exact size; SAN=1 builds check every access). Run from the repository root
   (make test does). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opara_test.h"
#include "src/cuda/kernels/opara_ptx.h"
#include "tests/cudaemu/emu_test_ptx.h"

#define GUARD 16

/* A file's bytes (malloc'd), or NULL. */
static char* read_all(const char* path, size_t* size) {
    FILE* f = fopen(path, "rb");
    char* data = NULL;
    long n;
    if (!f) return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (data = (char*)malloc((size_t)n + 1)) != NULL && fread(data, 1, (size_t)n, f) != (size_t)n) {
        free(data);
        data = NULL;
    }
    if (data) *size = (size_t)n;
    fclose(f);
    return data;
}

/* Unpacks stream[0, n) (copied into a buffer of exactly n bytes) into a buffer of size bytes followed by a
   guard; *out (may be NULL) gets the output, which the caller frees. A write past size fails the test. */
static opara__ptx_unpack_result unpack_exact(opara_test* T, const char* stream, size_t n, size_t size, char** out) {
    char* in = (char*)malloc(n ? n : 1);
    char* buf = (char*)malloc(size + GUARD);
    size_t at = 0, i;
    opara__ptx_unpack_result r = OPARA__PTX_TRUNCATED;
    if (out) *out = NULL;
    if (!in || !buf) {
        CHECK(!"out of memory");
    } else {
        memcpy(in, stream, n);
        memset(buf + size, 0x5A, GUARD);
        r = opara__ptx_unpack(in, n, buf, size, &at);
        for (i = 0; i < GUARD; ++i) CHECK(buf[size + i] == 0x5A);
        CHECK(at <= n);
    }
    free(in);
    if (out && r == OPARA__PTX_UNPACKED) *out = buf;
    else free(buf);
    return r;
}

static void check_image(opara_test* T, const opara__kernel_image* img, const char* dir) {
    char path[256], *plain, *text;
    size_t size = 0;
    snprintf(path, sizeof path, "%s/%s.ptx", dir, img->file);
    plain = read_all(path, &size);
    if (!plain) {
        OT_LOG("cannot read %s (run from the repository root)", path);
        CHECK(plain != NULL);
        return;
    }
    CHECK_EQ(size, img->ptx_size);
    CHECK_EQ(OPARA__PTX_UNPACKED, unpack_exact(T, img->packed, img->packed_size, img->ptx_size, &text));
    if (text && size == img->ptx_size && memcmp(text, plain, size) != 0) {
        OT_LOG("%s: the unpacked text differs from %s", img->file, path);
        CHECK(0);
    }
    OT_LOG("%s: %lu bytes of PTX packed in %lu", img->file, (unsigned long)img->ptx_size, (unsigned long)img->packed_size);
    free(text);
    free(plain);
}

OT_TEST(every_kernel_file_unpacks_to_its_plain_ptx) {
    size_t i;
    for (i = 0; i < sizeof opara__kernel_images / sizeof opara__kernel_images[0]; ++i)
        check_image(T, &opara__kernel_images[i], "src/cuda/kernels/ptx");
    for (i = 0; i < sizeof emu_test_kernel_images / sizeof emu_test_kernel_images[0]; ++i)
        check_image(T, &emu_test_kernel_images[i], "tests/cudaemu/ptx");
}

/* The packed text is at most a third of the PTX (the header diet: the PTX was 281 KB of opara.h). */
OT_TEST(the_library_ptx_packs_to_under_a_third) {
    size_t i, ptx = 0, packed = 0;
    for (i = 0; i < sizeof opara__kernel_images / sizeof opara__kernel_images[0]; ++i) {
        ptx += opara__kernel_images[i].ptx_size;
        packed += opara__kernel_images[i].packed_size;
    }
    OT_LOG("%lu bytes of PTX in %lu packed", (unsigned long)ptx, (unsigned long)packed);
    CHECK(packed * 3 < ptx);
}

/* Digits by the format's table: ' ' 0, '!' 1, '#' 2 ... '>' 29, '@' 30, 'A' 31 ... 'Z' 56, '[' 57, ']' 58,
   '^' 59, '_' 60, '`' 61, 'a' 62 ... 'z' 87, '{' 88, '|' 89, '}' 90, '~' 91. Tokens: literals * 23 + match. */
typedef struct hand_stream {
    const char* stream;
    size_t stream_size;
    const char* text; /* NULL: refused with `refused` */
    size_t size;
    opara__ptx_unpack_result refused;
} hand_stream;

#define S(s) s, sizeof s - 1

OT_TEST(hand_made_streams_unpack_as_the_format_says) {
    static char aaa[123];
    static const hand_stream cases[] = {
        {S(""), "", 0, OPARA__PTX_UNPACKED},
        /* 'P' 46 = 2 literals, no match (the last sequence) */
        {S("Pab"), "ab", 2, OPARA__PTX_UNPACKED},
        /* 'm' 74 = 3 + extension ' ' 0 literals, match 5 + 4 = 9 at distance '#' 2 + 1 = 3: overlapping */
        {S("m abc#"), "abcabcabcabc", 12, OPARA__PTX_UNPACKED},
        /* 'h' 69 = 3 + 'Q' 47 literals, match 4 at distance 'S' 49 (46 + 3, another digit) '!' 1: 3 + 46 + 1 = 50 */
        {S("hQ01234567890123456789012345678901234567890123456789S!"),
         "012345678901234567890123456789012345678901234567890123", 54, OPARA__PTX_UNPACKED},
        /* two sequences: 'P' 2 literals, match 4 at distance '!' 2; 'L' 42 = 1 literal, match 19 + 4 = 23 at
           distance ' ' 1 */
        {S("Pab!Lc "), "ababab" "cccccccccccccccccccccccc", 30, OPARA__PTX_UNPACKED},
    };
    size_t i;
    char* out;
    for (i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        OT_LOG("case %lu: \"%s\"", (unsigned long)i, cases[i].stream);
        CHECK_EQ(OPARA__PTX_UNPACKED, unpack_exact(T, cases[i].stream, cases[i].stream_size, cases[i].size, &out));
        if (out) CHECK(memcmp(out, cases[i].text, cases[i].size) == 0);
        free(out);
    }
    /* 'O' 45 = 1 literal, match code 22: 26 + extension '~' 91 + '&' 5 = 122 at distance 1 */
    memset(aaa, 'a', sizeof aaa);
    CHECK_EQ(OPARA__PTX_UNPACKED, unpack_exact(T, S("Oa~& "), sizeof aaa, &out));
    if (out) CHECK(memcmp(out, aaa, sizeof aaa) == 0);
    free(out);
}

OT_TEST(streams_that_break_the_format_are_refused) {
    static const hand_stream cases[] = {
        {S("m abc#"), NULL, 11, OPARA__PTX_TOO_LONG},     /* the match passes the recorded size */
        {S("m abc#"), NULL, 13, OPARA__PTX_TRUNCATED},    /* the output stops short of it */
        {S("Pab"), NULL, 1, OPARA__PTX_TOO_LONG},         /* literals past the size */
        {S("PabPcd"), NULL, 2, OPARA__PTX_TOO_LONG},      /* more after the output is complete */
        {S("Pa"), NULL, 2, OPARA__PTX_TRUNCATED},         /* the stream stops inside the literals */
        {S("m abc'"), NULL, 12, OPARA__PTX_BAD_DISTANCE}, /* distance 7 with 3 bytes written */
        {S("8a~~~"), NULL, 5, OPARA__PTX_BAD_DISTANCE},   /* a fourth distance digit */
        {S("8a~"), NULL, 5, OPARA__PTX_TRUNCATED},        /* the distance is cut */
        {S("8a"), NULL, 5, OPARA__PTX_TRUNCATED},         /* a last sequence, but the output is short */
        {S("8a\""), NULL, 5, OPARA__PTX_NOT_A_DIGIT},     /* '"', '?', '\\' and non-ASCII are no digits */
        {S("8a?"), NULL, 5, OPARA__PTX_NOT_A_DIGIT},
        {S("\\a "), NULL, 5, OPARA__PTX_NOT_A_DIGIT},
        {S("8a\200"), NULL, 5, OPARA__PTX_NOT_A_DIGIT},
        {S("8a\n"), NULL, 5, OPARA__PTX_NOT_A_DIGIT},
        {S("m~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~"), NULL, 500, OPARA__PTX_TOO_LONG}, /* an extension past the size */
    };
    size_t i;
    for (i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        OT_LOG("case %lu", (unsigned long)i);
        CHECK_EQ(cases[i].refused, unpack_exact(T, cases[i].stream, cases[i].stream_size, cases[i].size, NULL));
    }
}

/* Every way of cutting a packed kernel file short is refused; the cuts are every byte of the small files
   and about 600 spread over each large one, with the last 64 bytes all tried. */
OT_TEST(every_cut_of_a_packed_kernel_is_refused) {
    size_t i, cut, tried = 0, refused = 0;
    for (i = 0; i < sizeof opara__kernel_images / sizeof opara__kernel_images[0] + 1; ++i) {
        const opara__kernel_image* img =
            i < sizeof opara__kernel_images / sizeof opara__kernel_images[0] ? &opara__kernel_images[i] : &emu_test_kernel_images[0];
        size_t step = img->packed_size / 600 + 1;
        for (cut = 0; cut < img->packed_size; cut += img->packed_size - cut <= 64 ? 1 : step) {
            ++tried;
            refused += unpack_exact(T, img->packed, cut, img->ptx_size, NULL) != OPARA__PTX_UNPACKED;
        }
    }
    OT_LOG("%lu cuts", (unsigned long)tried);
    CHECK_EQ(tried, refused);
}

/* Damage: single bytes of each packed file replaced by digits, quotes, newlines and high bytes. A damaged
   literal may still unpack (to other text); whatever the result, nothing is written past the output (the
   guard) nor read past the stream (the exact buffers under SAN=1), and most damage is refused. */
OT_TEST(damaged_kernels_never_write_past_the_output) {
    static const char values[] = {' ', '!', '-', 'E', 'm', '~', '"', '?', '\n', '\0', (char)0x80, (char)0xFF};
    size_t i, at, v, tried = 0, refused = 0;
    for (i = 0; i < sizeof opara__kernel_images / sizeof opara__kernel_images[0]; ++i) {
        const opara__kernel_image* img = &opara__kernel_images[i];
        char* copy = (char*)malloc(img->packed_size);
        REQUIRE(copy != NULL);
        for (at = 0; at < img->packed_size; at += img->packed_size / 97 + 1) {
            for (v = 0; v < sizeof values; ++v) {
                memcpy(copy, img->packed, img->packed_size);
                if (copy[at] == values[v]) continue;
                copy[at] = values[v];
                ++tried;
                refused += unpack_exact(T, copy, img->packed_size, img->ptx_size, NULL) != OPARA__PTX_UNPACKED;
            }
        }
        free(copy);
    }
    OT_LOG("%lu of %lu damaged streams refused", (unsigned long)refused, (unsigned long)tried);
    CHECK(refused * 2 > tried);
}

static const opara_test_case tests[] = {
    OT_CASE(every_kernel_file_unpacks_to_its_plain_ptx),
    OT_CASE(the_library_ptx_packs_to_under_a_third),
    OT_CASE(hand_made_streams_unpack_as_the_format_says),
    OT_CASE(streams_that_break_the_format_are_refused),
    OT_CASE(every_cut_of_a_packed_kernel_is_refused),
    OT_CASE(damaged_kernels_never_write_past_the_output),
};

int main(int argc, char** argv) { return opara_test_main(argc, argv, tests, OT_COUNT(tests)); }
