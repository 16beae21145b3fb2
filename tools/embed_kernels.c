/* embed_kernels - writes src/kernels/opara_ptx.h: the PTX of every kernel file (one string per line, so no
 * literal exceeds the 4095 characters C99 guarantees), the kernel source for NVRTC (opara_kernel.h inlined)
 * and the register / shared-memory use ptxas reports for the PTX's target.
 *
 *   embed_kernels OUT [--check COMMITTED] --header opara_kernel.h {NAME PTX PTXAS_LOG SOURCE}...
 *
 * With --check, OUT is written as usual and compared with COMMITTED; every kernel file whose block differs is
 * named and the exit status is 1. Deterministic: the output depends only on the input files. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static char* read_file(const char* path) {
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
    return t.data;
}

/* Appends `text` as a NULL-terminated array of C string literals, one per source line. */
static void emit_lines(text* out, const char* var, const char* s) {
    text_str(out, "static const char* const ");
    text_str(out, var);
    text_str(out, "[] = {\n");
    while (*s) {
        size_t col = 0;
        text_str(out, "    \"");
        while (*s && col < 2000) {
            char c = *s++;
            char esc[8];
            col++;
            if (c == '\n') {
                text_str(out, "\\n");
                break;
            }
            if (c == '\\' || c == '"') {
                esc[0] = '\\';
                esc[1] = c;
                text_add(out, esc, 2);
            } else if (c == '\t') {
                text_str(out, "\\t");
            } else if ((unsigned char)c < 32 || (unsigned char)c > 126) {
                snprintf(esc, sizeof esc, "\\%03o", (unsigned char)c);
                text_str(out, esc);
            } else {
                text_add(out, &c, 1);
            }
        }
        text_str(out, "\",\n");
    }
    text_str(out, "    NULL};\n");
}

/* The kernel source with its `#include "opara_kernel.h"` line replaced by the header text. */
static char* inline_header(const char* src, const char* header) {
    const char* inc = strstr(src, "#include \"opara_kernel.h\"");
    text t = {NULL, 0, 0};
    text_add(&t, "", 0);
    if (!inc) {
        text_str(&t, src);
        return t.data;
    }
    text_add(&t, src, (size_t)(inc - src));
    text_str(&t, header);
    inc = strchr(inc, '\n');
    if (inc) text_str(&t, inc + 1);
    return t.data;
}

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

static char* block_of(const char* file, const char* marker) {
    const char* b = strstr(file, marker);
    const char* e;
    text t = {NULL, 0, 0};
    if (!b) return NULL;
    e = strstr(b, "NULL};\n");
    if (!e) return NULL;
    text_add(&t, b, (size_t)(e - b));
    return t.data;
}

int main(int argc, char** argv) {
    const char* out_path;
    const char* check = NULL;
    char* header = NULL;
    text out = {NULL, 0, 0}, images = {NULL, 0, 0}, res = {NULL, 0, 0};
    int i, first, stale = 0;
    FILE* f;
    if (argc < 2) {
        fprintf(stderr, "usage: embed_kernels OUT [--check COMMITTED] --header H {NAME PTX LOG SRC}...\n");
        return 2;
    }
    out_path = argv[1];
    i = 2;
    if (i + 1 < argc && strcmp(argv[i], "--check") == 0) {
        check = argv[i + 1];
        i += 2;
    }
    if (i + 1 < argc && strcmp(argv[i], "--header") == 0) {
        header = read_file(argv[i + 1]);
        i += 2;
    }
    if (!header || (argc - i) % 4 != 0) {
        fprintf(stderr, "embed_kernels: bad arguments\n");
        return 2;
    }
    text_str(&out, "/* opara_ptx.h - GENERATED by tools/embed_kernels.c (`make ptx`) from the kernel files in src/kernels;\n"
                   " * do not edit. `make check-ptx` fails when this file is stale. Per kernel file: its PTX (nvcc -ptx for the\n"
                   " * lowest architecture the toolkit supports) and its source for NVRTC, each as a NULL-terminated array of\n"
                   " * lines to concatenate; per entry point: registers and static shared memory reported by ptxas. */\n"
                   "#ifndef OPARA_PTX_H\n#define OPARA_PTX_H\n#include <stddef.h>\n\n"
                   "typedef struct opara__kernel_image {\n    const char* file;\n    const char* const* ptx;\n"
                   "    const char* const* source;\n} opara__kernel_image;\n\n"
                   "typedef struct opara__kernel_resources {\n    const char* entry;\n    int registers;\n"
                   "    int static_shared_bytes;\n} opara__kernel_resources;\n\n");
    text_add(&images, "", 0);
    text_add(&res, "", 0);
    for (first = i; i < argc; i += 4) {
        char var[256];
        char* ptx = read_file(argv[i + 1]);
        char* log = read_file(argv[i + 2]);
        char* src = read_file(argv[i + 3]);
        char* full = inline_header(src, header);
        snprintf(var, sizeof var, "opara__ptx_%s", argv[i]);
        emit_lines(&out, var, ptx);
        text_str(&out, "\n");
        snprintf(var, sizeof var, "opara__source_%s", argv[i]);
        emit_lines(&out, var, full);
        text_str(&out, "\n");
        snprintf(var, sizeof var, "    {\"%s\", opara__ptx_%s, opara__source_%s},\n", argv[i], argv[i], argv[i]);
        text_str(&images, var);
        emit_resources(&res, log);
        free(ptx);
        free(log);
        free(src);
        free(full);
    }
    text_str(&out, "static const opara__kernel_image opara__kernel_images[] = {\n");
    text_str(&out, images.data);
    text_str(&out, "};\n\nstatic const opara__kernel_resources opara__kernel_resource_table[] = {\n");
    text_str(&out, res.data);
    text_str(&out, "};\n\n#endif /* OPARA_PTX_H */\n");
    f = fopen(out_path, "wb");
    if (!f || fwrite(out.data, 1, out.len, f) != out.len || fclose(f) != 0) {
        fprintf(stderr, "embed_kernels: cannot write %s\n", out_path);
        return 2;
    }
    if (check) {
        char* committed = read_file(check);
        if (strcmp(committed, out.data) != 0) {
            for (i = first; i < argc; i += 4) {
                char marker[256];
                char *a, *b;
                snprintf(marker, sizeof marker, "opara__ptx_%s[]", argv[i]);
                a = block_of(out.data, marker);
                b = block_of(committed, marker);
                if (!b || !a || strcmp(a, b) != 0) {
                    fprintf(stderr, "check-ptx: PTX of src/kernels/%s.cu is stale in %s\n", argv[i], check);
                    stale = 1;
                }
                free(a);
                free(b);
            }
            if (!stale) fprintf(stderr, "check-ptx: %s is stale (sources or resource table)\n", check);
            stale = 1;
        }
        free(committed);
    }
    free(header);
    free(out.data);
    free(images.data);
    free(res.data);
    return stale;
}
