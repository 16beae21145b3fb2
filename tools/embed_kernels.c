/* embed_kernels - writes the generated kernel headers from the PTX of each kernel file and its source:
 *   --ptx OUT     the PTX of every kernel file, packed (src/cuda/kernels/opara_ptx_pack.h), one string each, and
 *                 the register / shared-memory use ptxas reports per entry point (src/cuda/kernels/opara_ptx.h,
 *                 inlined into opara.h)
 *   --nvrtc OUT   the kernel sources for NVRTC, one string each, and the kernel dialect header they include,
 *                 once (opara_nvrtc.h, the companion that OPARA_NVRTC_SOURCE includes)
 *   --tables P    names the tables P_images / P_resources instead of opara__kernel_images /
 *                 opara__kernel_resource_table (the tests' own kernel images, beside opara_ptx.h)
 *   --decoder H   how OUT includes the decoder (default "opara_ptx_pack.h", beside it in src/cuda/kernels)
 *
 *   embed_kernels [--check] --ptx OUT [--tables P] [--decoder H] [--nvrtc OUT --header opara_kernel.h]
 *                 {NAME PTX LOG SRC}...
 *
 * PTX is the plain text (the committed reference src/cuda/kernels/ptx/NAME.ptx, which `make ptx` copies from
 * nvcc's output), LOG what ptxas -v said of it. With --check nothing is written: each output is compared
 * with the file there, every kernel file whose text differs is named and the exit status is 1.
 * Deterministic: the output depends only on the input files. Every packed string is unpacked again with
 * the library's decoder and compared with the text before anything is written.
 *
 * Each text is one string made of adjacent literals, about 110 columns to a line of the header. C99 only
 * promises 4095 characters per string (-Woverlength-strings under -pedantic); gcc and clang take any length,
 * so the strings are wrapped in a diagnostic pragma instead of being cut into pieces the program joins. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/cuda/kernels/opara_ptx_pack.h"

typedef struct text {
    char* data;
    size_t len, cap;
} text;

static void text_add(text* t, const char* s, size_t n) {
    if (t->len + n + 1 > t->cap) {
        size_t cap = (t->cap + n + 1) * 2;
        char* grown = (char*)realloc(t->data, cap);
        if (!grown) {
            fprintf(stderr, "embed_kernels: out of memory\n");
            exit(2);
        }
        t->data = grown;
        t->cap = cap;
    }
    memcpy(t->data + t->len, s, n);
    t->len += n;
    t->data[t->len] = 0;
}

static void text_str(text* t, const char* s) { text_add(t, s, strlen(s)); }

static char* read_file_size(const char* path, size_t* size) {
    FILE* f = fopen(path, "rb");
    text t = {NULL, 0, 0};
    char buf[65536];
    size_t n;
    if (!f) {
        fprintf(stderr, "embed_kernels: cannot open %s\n", path);
        exit(2);
    }
    text_add(&t, "", 0);
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) text_add(&t, buf, n);
    fclose(f);
    if (size) *size = t.len;
    return t.data;
}

static char* read_file(const char* path) { return read_file_size(path, NULL); }

/* One character as it stands inside a C string literal (after `prev`: the second '?' of a pair is
   escaped, so no trigraph forms under -std=c99). */
static void escape_char(text* out, char c, char prev) {
    char esc[8];
    if (c == '\\' || c == '"' || (c == '?' && prev == '?')) {
        esc[0] = '\\';
        esc[1] = c;
        text_add(out, esc, 2);
    } else if (c == '\n') {
        text_str(out, "\\n");
    } else if (c == '\t') {
        text_str(out, "\\t");
    } else if ((unsigned char)c < 32 || (unsigned char)c > 126) {
        snprintf(esc, sizeof esc, "\\%03o", (unsigned char)c);
        text_str(out, esc);
    } else {
        text_add(out, &c, 1);
    }
}

/* ---- the packer (the format: src/cuda/kernels/opara_ptx_pack.h) ------------------------------------------ */

#define HASH_BITS 16
#define MAX_CHAIN 1024

static char digit_char(size_t value) {
    static char digits[OPARA__PTX_PACK_BASE];
    int c, n = 0;
    if (!digits[1])
        for (c = 0x20; c <= 0x7E; ++c)
            if (c != '"' && c != '?' && c != '\\') digits[n++] = (char)c;
    return digits[value];
}

static void put_digit(text* out, size_t value) {
    char c = digit_char(value);
    text_add(out, &c, 1);
}

static void put_extension(text* out, size_t value) {
    for (; value >= OPARA__PTX_PACK_BASE - 1; value -= OPARA__PTX_PACK_BASE - 1) put_digit(out, OPARA__PTX_PACK_BASE - 1);
    put_digit(out, value);
}

static void put_distance(text* out, size_t distance) {
    size_t value = distance - 1;
    for (; value >= OPARA__PTX_PACK_DISTANCE_BASE; value /= OPARA__PTX_PACK_DISTANCE_BASE)
        put_digit(out, OPARA__PTX_PACK_DISTANCE_BASE + value % OPARA__PTX_PACK_DISTANCE_BASE);
    put_digit(out, value);
}

/* One sequence: the literals, then the match (length 0: none, the last sequence). */
static void put_sequence(text* out, const char* literals, size_t count, size_t length, size_t distance) {
    size_t lit_code = count < 3 ? count : 3;
    size_t match_code = length == 0 ? 0 : length - OPARA__PTX_PACK_MIN_MATCH;
    if (match_code > OPARA__PTX_PACK_MATCH_CODES - 1) match_code = OPARA__PTX_PACK_MATCH_CODES - 1;
    put_digit(out, lit_code * OPARA__PTX_PACK_MATCH_CODES + match_code);
    if (lit_code == 3) put_extension(out, count - 3);
    text_add(out, literals, count);
    if (length == 0) return;
    if (match_code == OPARA__PTX_PACK_MATCH_CODES - 1) put_extension(out, length - (OPARA__PTX_PACK_MATCH_CODES - 1 + OPARA__PTX_PACK_MIN_MATCH));
    put_distance(out, distance);
}

typedef struct matcher {
    const unsigned char* s;
    size_t n;
    long head[1 << HASH_BITS];
    long* prev; /* per position: the previous one with the same hash, -1 at the end */
} matcher;

static size_t hash4(const unsigned char* p) {
    unsigned long v = (unsigned long)p[0] | (unsigned long)p[1] << 8 | (unsigned long)p[2] << 16 | (unsigned long)p[3] << 24;
    return (size_t)(((v * 2654435761UL) & 0xFFFFFFFFUL) >> (32 - HASH_BITS));
}

static void matcher_insert(matcher* m, size_t at) {
    size_t h;
    if (m->n - at < OPARA__PTX_PACK_MIN_MATCH) return;
    h = hash4(m->s + at);
    m->prev[at] = m->head[h];
    m->head[h] = (long)at;
}

/* The longest earlier match at `at` within the window (the nearest of equal length); 0 when none. */
static size_t matcher_find(const matcher* m, size_t at, size_t* distance) {
    size_t best = 0;
    long p;
    int chain = MAX_CHAIN;
    if (m->n - at < OPARA__PTX_PACK_MIN_MATCH) return 0;
    for (p = m->head[hash4(m->s + at)]; p >= 0 && chain-- > 0 && at - (size_t)p <= (size_t)OPARA__PTX_PACK_WINDOW; p = m->prev[p]) {
        size_t len = 0;
        while (len < m->n - at && m->s[(size_t)p + len] == m->s[at + len]) ++len;
        if (len > best) {
            best = len;
            *distance = at - (size_t)p;
        }
    }
    return best >= OPARA__PTX_PACK_MIN_MATCH ? best : 0;
}

/* Greedy parsing with one step of lazy evaluation: a match is put off by a byte when the next
   position has a longer one. */
static void pack(const char* s, size_t n, text* out) {
    matcher* m = (matcher*)malloc(sizeof *m);
    size_t at = 0, start = 0, i;
    if (!m || !(m->prev = (long*)malloc((n + 1) * sizeof(long)))) {
        fprintf(stderr, "embed_kernels: out of memory\n");
        exit(2);
    }
    m->s = (const unsigned char*)s;
    m->n = n;
    for (i = 0; i < (size_t)1 << HASH_BITS; ++i) m->head[i] = -1;
    while (at < n) {
        size_t distance = 0, next_distance = 0;
        size_t length = matcher_find(m, at, &distance);
        if (length && at + 1 < n) {
            matcher_insert(m, at);
            if (matcher_find(m, at + 1, &next_distance) > length) length = 0;
        } else {
            matcher_insert(m, at);
        }
        if (!length) {
            ++at;
            continue;
        }
        put_sequence(out, s + start, at - start, length, distance);
        for (i = 1; i < length; ++i) matcher_insert(m, at + i);
        at += length;
        start = at;
    }
    if (start < n) put_sequence(out, s + start, n - start, 0, 0);
    free(m->prev);
    free(m);
}

/* The packed text, checked by unpacking it with the library's decoder. */
static void pack_checked(const char* path, const char* s, size_t n, text* out) {
    char* back = (char*)malloc(n + 1);
    size_t at = 0;
    opara__ptx_unpack_result r;
    text_add(out, "", 0);
    pack(s, n, out);
    if (!back) {
        fprintf(stderr, "embed_kernels: out of memory\n");
        exit(2);
    }
    r = opara__ptx_unpack(out->data, out->len, back, n, &at);
    if (r != OPARA__PTX_UNPACKED || memcmp(back, s, n) != 0) {
        fprintf(stderr, "embed_kernels: %s does not unpack to itself (%s at byte %lu)\n", path, opara__ptx_unpack_result_text(r),
                (unsigned long)at);
        exit(2);
    }
    free(back);
}

/* `static const char var[] = "..." "...";`: the bytes packed into literals of about 110 columns, one
   literal per header line. With keep_lines a line of the text never splits (so the header diffs with the
   text); else (a packed text, which has no lines) the cut falls anywhere but inside an escape. */
static void emit_string(text* out, const char* var, const char* s, size_t n, int keep_lines) {
    size_t col = 0, at = 0;
    text_str(out, "static const char ");
    text_str(out, var);
    text_str(out, "[] =");
    if (n == 0) text_str(out, " \"\"");
    while (at < n) {
        const char* eol = keep_lines ? (const char*)memchr(s + at, '\n', n - at) : NULL;
        size_t end = !keep_lines ? at + 1 : eol ? (size_t)(eol - s) + 1 : n;
        text piece = {NULL, 0, 0};
        text_add(&piece, "", 0);
        for (; at < end; ++at) escape_char(&piece, s[at], at == 0 ? 0 : s[at - 1]);
        if (col > 0 && col + piece.len + 1 > 110) {
            text_str(out, "\"");
            col = 0;
        }
        if (col == 0) {
            text_str(out, "\n    \"");
            col = 5;
        }
        text_add(out, piece.data, piece.len);
        col += piece.len;
        free(piece.data);
    }
    if (col > 0) text_str(out, "\"");
    text_str(out, ";\n");
}

static const char long_strings_begin[] =
    "/* Strings longer than the 4095 characters C99 promises (gcc and clang take any length). */\n"
    "#if defined(__clang__)\n"
    "#  pragma clang diagnostic push\n"
    "#  pragma clang diagnostic ignored \"-Woverlength-strings\"\n"
    "#elif defined(__GNUC__) && !defined(__cplusplus)\n"
    "#  pragma GCC diagnostic push\n"
    "#  pragma GCC diagnostic ignored \"-Woverlength-strings\"\n"
    "#endif\n\n";

static const char long_strings_end[] =
    "#if defined(__clang__)\n"
    "#  pragma clang diagnostic pop\n"
    "#elif defined(__GNUC__) && !defined(__cplusplus)\n"
    "#  pragma GCC diagnostic pop\n"
    "#endif\n\n";

/* ptxas -v lines: "Compiling entry function 'X' for 'sm_75'" then "Used N registers, ... M bytes smem". */
static void emit_resources(text* out, const char* log) {
    const char* p = log;
    char line[512];
    while ((p = strstr(p, "Compiling entry function '")) != NULL) {
        const char* name = p + strlen("Compiling entry function '");
        const char* end = strchr(name, '\'');
        const char* used = strstr(name, "Used ");
        const char* next = strstr(name, "Compiling entry function '");
        const char* smem;
        int regs = 0, bytes = 0;
        if (!end) break;
        if (used && (!next || used < next)) {
            regs = atoi(used + 5);
            smem = strstr(used, " bytes smem");
            if (smem && (!next || smem < next) && strchr(used, '\n') > smem) {
                while (smem > used && smem[-1] >= '0' && smem[-1] <= '9') smem--;
                bytes = atoi(smem);
            }
        }
        snprintf(line, sizeof line, "    {\"%.*s\", %d, %d},\n", (int)(end - name), name, regs, bytes);
        text_str(out, line);
        p = end;
    }
}

typedef struct kernel_file {
    const char *name, *ptx, *log, *src;
} kernel_file;

static void emit_ptx_header(text* out, const char* guard, const char* tables, const char* decoder, const kernel_file* k,
                            int n) {
    char var[256];
    size_t* sizes = (size_t*)calloc((size_t)n + 1, sizeof(size_t));
    int i;
    text_str(out, "/* GENERATED by tools/embed_kernels.c (`make ptx`) from the kernel files; do not edit. `make check-ptx`\n"
                  " * fails when this file is stale. Per kernel file: its PTX (nvcc -ptx for the lowest architecture the\n"
                  " * toolkit supports, comments and indentation dropped: ptxas -v read this same text, kept plain in\n"
                  " * src/cuda/kernels/ptx/), packed (opara_ptx_pack.h); per entry point: registers and static shared memory\n"
                  " * reported by ptxas. */\n");
    text_str(out, "#ifndef ");
    text_str(out, guard);
    text_str(out, "\n#define ");
    text_str(out, guard);
    text_str(out, "\n\n#include \"");
    text_str(out, decoder);
    text_str(out, "\"\n\n#ifndef OPARA__KERNEL_IMAGE_DEFINED\n#define OPARA__KERNEL_IMAGE_DEFINED\n"
                  "typedef struct opara__kernel_image {\n    const char* file;\n"
                  "    const char* packed; /* the PTX, packed (opara_ptx_pack.h) */\n    size_t packed_size;\n"
                  "    size_t ptx_size; /* the bytes it unpacks to */\n} opara__kernel_image;\n\n"
                  "typedef struct opara__kernel_resources {\n    const char* entry;\n    int registers;\n"
                  "    int static_shared_bytes;\n} opara__kernel_resources;\n#endif\n\n");
    if (!sizes) {
        fprintf(stderr, "embed_kernels: out of memory\n");
        exit(2);
    }
    text_str(out, long_strings_begin);
    for (i = 0; i < n; ++i) {
        text packed = {NULL, 0, 0};
        char* ptx = read_file_size(k[i].ptx, &sizes[i]);
        pack_checked(k[i].ptx, ptx, sizes[i], &packed);
        snprintf(var, sizeof var, "opara__ptx_%s", k[i].name);
        emit_string(out, var, packed.data, packed.len, 0);
        text_str(out, "\n");
        free(packed.data);
        free(ptx);
    }
    text_str(out, long_strings_end);
    snprintf(var, sizeof var, "static const opara__kernel_image %s_images[] = {\n", tables ? tables : "opara__kernel");
    text_str(out, var);
    for (i = 0; i < n; ++i) {
        snprintf(var, sizeof var, "    {\"%s\", opara__ptx_%s, sizeof opara__ptx_%s - 1, %lu},\n", k[i].name, k[i].name,
                 k[i].name, (unsigned long)sizes[i]);
        text_str(out, var);
    }
    free(sizes);
    if (tables) snprintf(var, sizeof var, "};\n\nstatic const opara__kernel_resources %s_resources[] = {\n", tables);
    else snprintf(var, sizeof var, "};\n\nstatic const opara__kernel_resources opara__kernel_resource_table[] = {\n");
    text_str(out, var);
    for (i = 0; i < n; ++i) {
        char* log = read_file(k[i].log);
        emit_resources(out, log);
        free(log);
    }
    text_str(out, "};\n\n#endif\n");
}

static void emit_nvrtc_header(text* out, const char* header_path, const kernel_file* k, int n) {
    char var[256];
    char* header = read_file(header_path);
    int i;
    text_str(out, "/* opara_nvrtc.h - GENERATED by tools/embed_kernels.c (`make ptx`) from src/cuda/kernels; do not edit.\n"
                  "   The CUDA kernels' sources, for a CUDA session with use_nvrtc to compile them for the exact device.\n"
                  "   opara.h includes this file (keep it beside opara.h) where the implementation is compiled with\n"
                  "   OPARA_NVRTC_SOURCE defined; without it such a session runs the PTX embedded in opara.h. Each\n"
                  "   source includes the kernel dialect header, which NVRTC is given once as opara_kernel.h. */\n"
                  "#ifndef OPARA_NVRTC_H\n#define OPARA_NVRTC_H\n\n"
                  "typedef struct opara__kernel_source {\n    const char* file;\n    const char* source;\n"
                  "} opara__kernel_source;\n\n");
    text_str(out, long_strings_begin);
    emit_string(out, "opara__kernel_dialect", header, strlen(header), 1);
    text_str(out, "\n");
    for (i = 0; i < n; ++i) {
        char* src = read_file(k[i].src);
        snprintf(var, sizeof var, "opara__source_%s", k[i].name);
        emit_string(out, var, src, strlen(src), 1);
        text_str(out, "\n");
        free(src);
    }
    text_str(out, long_strings_end);
    text_str(out, "static const opara__kernel_source opara__kernel_sources[] = {\n");
    for (i = 0; i < n; ++i) {
        snprintf(var, sizeof var, "    {\"%s\", opara__source_%s},\n", k[i].name, k[i].name);
        text_str(out, var);
    }
    text_str(out, "};\n\n#endif /* OPARA_NVRTC_H */\n");
    free(header);
}

/* The generated definition of var in a header's text (up to the next blank line), or NULL. */
static char* definition_of(const char* file, const char* var) {
    char marker[300];
    const char *b, *e;
    text t = {NULL, 0, 0};
    snprintf(marker, sizeof marker, "char %s[] =", var);
    b = strstr(file, marker);
    if (!b) return NULL;
    e = strstr(b, ";\n\n");
    if (!e) return NULL;
    text_add(&t, b, (size_t)(e - b));
    return t.data;
}

/* 0 when out_path holds exactly `fresh`; else 1, naming each kernel file whose string differs. */
static int check_file(const char* out_path, const text* fresh, const char* prefix, const kernel_file* k, int n) {
    FILE* f = fopen(out_path, "rb");
    char* committed;
    int i, named = 0;
    if (!f) {
        fprintf(stderr, "check-ptx: %s is missing: run `make ptx`\n", out_path);
        return 1;
    }
    fclose(f);
    committed = read_file(out_path);
    if (strcmp(committed, fresh->data) == 0) {
        free(committed);
        return 0;
    }
    for (i = 0; i < n; ++i) {
        char var[256];
        char *a, *b;
        snprintf(var, sizeof var, "%s%s", prefix, k[i].name);
        a = definition_of(fresh->data, var);
        b = definition_of(committed, var);
        if (!a || !b || strcmp(a, b) != 0) {
            fprintf(stderr, "check-ptx: %s of %s is stale in %s\n", strcmp(prefix, "opara__ptx_") == 0 ? "PTX" : "source",
                    k[i].src, out_path);
            named = 1;
        }
        free(a);
        free(b);
    }
    if (!named) fprintf(stderr, "check-ptx: %s is stale\n", out_path);
    free(committed);
    return 1;
}

static int write_file(const char* path, const text* t) {
    FILE* f = fopen(path, "wb");
    if (!f || fwrite(t->data, 1, t->len, f) != t->len || fclose(f) != 0) {
        fprintf(stderr, "embed_kernels: cannot write %s\n", path);
        return 2;
    }
    return 0;
}

static int usage(void) {
    fprintf(stderr, "usage: embed_kernels [--check] --ptx OUT [--tables P] [--decoder H] [--nvrtc OUT --header H] {NAME PTX LOG SRC}...\n");
    return 2;
}

int main(int argc, char** argv) {
    const char *ptx_out = NULL, *nvrtc_out = NULL, *header = NULL, *tables = NULL, *decoder = "opara_ptx_pack.h";
    kernel_file files[64];
    text ptx = {NULL, 0, 0}, nvrtc = {NULL, 0, 0};
    int i = 1, n = 0, check = 0, rc = 0;
    for (; i < argc && strncmp(argv[i], "--", 2) == 0; ++i) {
        if (strcmp(argv[i], "--check") == 0) check = 1;
        else if (i + 1 >= argc) return usage();
        else if (strcmp(argv[i], "--ptx") == 0) ptx_out = argv[++i];
        else if (strcmp(argv[i], "--nvrtc") == 0) nvrtc_out = argv[++i];
        else if (strcmp(argv[i], "--header") == 0) header = argv[++i];
        else if (strcmp(argv[i], "--tables") == 0) tables = argv[++i];
        else if (strcmp(argv[i], "--decoder") == 0) decoder = argv[++i];
        else return usage();
    }
    if (!ptx_out || (nvrtc_out && !header) || (argc - i) % 4 != 0 || (argc - i) / 4 > 64) return usage();
    for (; i < argc; i += 4, ++n) {
        files[n].name = argv[i];
        files[n].ptx = argv[i + 1];
        files[n].log = argv[i + 2];
        files[n].src = argv[i + 3];
    }
    emit_ptx_header(&ptx, tables ? "OPARA_TEST_PTX_H" : "OPARA_PTX_H", tables, decoder, files, n);
    if (nvrtc_out) emit_nvrtc_header(&nvrtc, header, files, n);
    if (check) {
        rc = check_file(ptx_out, &ptx, "opara__ptx_", files, n);
        if (nvrtc_out) rc |= check_file(nvrtc_out, &nvrtc, "opara__source_", files, n);
    } else {
        rc = write_file(ptx_out, &ptx);
        if (!rc && nvrtc_out) rc = write_file(nvrtc_out, &nvrtc);
    }
    free(ptx.data);
    free(nvrtc.data);
    return rc;
}
