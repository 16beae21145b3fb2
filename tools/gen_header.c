/* gen_header: builds the single header opara.h from src/.

   usage: gen_header [--root DIR] [--out FILE] [--check] [--cpu-only]

   The manifest below is the whole recipe: an ordered list of files, each placed either in the
   public part (outside the implementation guard) or in the implementation part, and each either
   always there or belonging to a part a feature macro compiles out (OPARA_NO_CUDA, OPARA_NO_ONNX,
   OPARA_NO_SIM): such a file is wrapped in `#ifndef OPARA_NO_X`, so the sources need no guards of
   their own. Each local header is inlined once, at its first #include; later includes of it become
   comments. A companion header (opara_nvrtc.h) is never inlined: its include stays, naming it
   beside opara.h. A local include that is not in the manifest is an error. The output is LF-only
   and has nothing that depends on time or machine, so regenerating gives identical bytes. --check
   compares with the existing file instead of writing it and names the first line that differs.
   --cpu-only writes the header a CPU-only program needs: OPARA_NO_CUDA defined, the files it
   would compile out left out (`make header` writes it to build/opara_cpu.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { PART_PUBLIC, PART_IMPL };

/* The part of the library a file belongs to; all but CORE can be compiled out. */
typedef enum feature { CORE, CUDA, ONNX, SIM } feature;

/* The macro that compiles a feature out (CORE: none). */
static const char* const feature_macro[] = {NULL, "OPARA_NO_CUDA", "OPARA_NO_ONNX", "OPARA_NO_SIM"};

typedef struct manifest_entry {
    const char* path; /* relative to the repository root */
    int part;
    feature feature;
} manifest_entry;

static const manifest_entry manifest[] = {
    {"src/api/opara_api.h", PART_PUBLIC, CORE},
    {"src/sim/opara_sim.h", PART_PUBLIC, CORE},
    {"src/core/opara_internal.h", PART_IMPL, CORE},
    {"opara_dl.h", PART_IMPL, CORE},
    {"opara_cuda.h", PART_IMPL, CUDA},
    {"src/core/opara_util.c", PART_IMPL, CORE},
    {"src/core/opara_log.c", PART_IMPL, CORE},
    {"src/core/opara_thread.c", PART_IMPL, CORE},
    {"src/core/opara_runtime.c", PART_IMPL, CORE},
    {"src/ir/opara_ir.h", PART_IMPL, CORE},
    {"src/ir/opara_graph.c", PART_IMPL, CORE},
    {"src/model/opara_model.h", PART_IMPL, CORE},
    {"src/ir/opara_shape.c", PART_IMPL, CORE},
    {"src/ir/opara_reach.c", PART_IMPL, CORE},
    {"src/model/opara_validate.c", PART_IMPL, CORE},
    {"src/model/opara_format.c", PART_IMPL, CORE},
    {"src/model/opara_model.c", PART_IMPL, CORE},
    {"src/model/opara_builder.c", PART_IMPL, CORE},
    {"src/cpu/opara_cpu.h", PART_IMPL, CORE},
    {"src/cpu/opara_blas.c", PART_IMPL, CORE},
    {"src/cpu/opara_cpu_base.c", PART_IMPL, CORE},
    {"src/cpu/opara_cpu_gemm.c", PART_IMPL, CORE},
    {"src/cpu/opara_cpu_rnn.c", PART_IMPL, CORE},
    {"src/cpu/opara_cpu_math.c", PART_IMPL, CORE},
    {"src/cpu/opara_cpu_elementwise.c", PART_IMPL, CORE},
    {"src/cpu/opara_cpu_logic.c", PART_IMPL, CORE},
    {"src/cpu/opara_cpu_movement.c", PART_IMPL, CORE},
    {"src/cpu/opara_cpu_index.c", PART_IMPL, CORE},
    {"src/cpu/opara_cpu_norm.c", PART_IMPL, CORE},
    {"src/cpu/opara_cpu_reduce.c", PART_IMPL, CORE},
    {"src/cpu/opara_cpu_sort.c", PART_IMPL, CORE},
    {"src/cpu/opara_cpu_sample.c", PART_IMPL, CORE},
    {"src/cpu/opara_cpu_linalg.c", PART_IMPL, CORE},
    {"src/cpu/opara_cpu_kernels.c", PART_IMPL, CORE},
    {"src/cpu/opara_cpu_conv.c", PART_IMPL, CORE},
    {"src/cpu/opara_cpu_winograd.c", PART_IMPL, CORE},
    {"src/cpu/opara_cpu_quant.c", PART_IMPL, CORE},
    {"src/plan/opara_sched.h", PART_IMPL, CORE},
    {"src/plan/opara_desc.c", PART_IMPL, CORE},
    {"src/plan/opara_sched.c", PART_IMPL, CORE},
    {"src/plan/opara_sync.c", PART_IMPL, CORE},
    {"src/plan/opara_memplan.c", PART_IMPL, CORE},
    {"src/plan/opara_live.c", PART_IMPL, CORE},
    {"src/plan/opara_verify.c", PART_IMPL, CORE},
    {"src/plan/opara_backend.h", PART_IMPL, CORE},
    {"src/plan/opara_backend.c", PART_IMPL, CORE},
    {"src/cuda/kernels/opara_ptx.h", PART_IMPL, CUDA},
    {"src/cuda/opara_backend_cuda.h", PART_IMPL, CUDA},
    {"src/cuda/opara_cuda_lower.c", PART_IMPL, CUDA},
    {"src/cuda/opara_cuda_cudnn.c", PART_IMPL, CUDA},
    {"src/cuda/opara_cuda_runtime.c", PART_IMPL, CUDA},
    {"src/cuda/opara_cuda_resources.c", PART_IMPL, CUDA},
    {"src/cuda/opara_backend_cuda.c", PART_IMPL, CUDA},
    {"src/cuda/opara_cuda_profile.c", PART_IMPL, CUDA},
    {"src/cuda/opara_cuda_table.c", PART_IMPL, CUDA},
    {"src/api/opara_export.h", PART_IMPL, CORE},
    {"src/api/opara_export.c", PART_IMPL, CORE},
    {"src/cpu/opara_backend_cpu.c", PART_IMPL, CORE},
    {"src/api/opara_session.c", PART_IMPL, CORE},
    {"src/onnx/opara_pb.h", PART_IMPL, ONNX},
    {"src/onnx/opara_pb.c", PART_IMPL, ONNX},
    {"src/onnx/opara_onnx.h", PART_IMPL, ONNX},
    {"src/onnx/opara_onnx_tensor.c", PART_IMPL, ONNX},
    {"src/onnx/opara_onnx_fold.c", PART_IMPL, ONNX},
    {"src/onnx/opara_onnx.c", PART_IMPL, ONNX},
    {"src/sim/opara_sim.c", PART_IMPL, SIM},
    {"src/api/opara_inspect.c", PART_IMPL, CORE},
    {"src/api/opara_features.c", PART_IMPL, CORE},
};

/* Code that runs once per model or session, not per inference: import and parsing, validation, the
   planner, printing and inspection, the simulator, the CUDA backend's set-up and lowering. GCC compiles
   these files at -O1 where the program is built at -O2 or -O3 (OPARA__COLD_BEGIN below), which takes
   about 40% off the implementation's compile time and costs a run nothing. GCC does not inline across
   optimisation levels, so none of them may hold a function that a kernel or the executor calls while
   it runs (today only the kernels' preparation and error paths call into them). */
static const char* const cold_files[] = {
    "opara_cuda.h",          "src/ir/opara_graph.c",        "src/ir/opara_shape.c",         "src/ir/opara_reach.c",
    "src/model/opara_validate.c",  "src/model/opara_format.c",       "src/model/opara_model.c",         "src/model/opara_builder.c",
    "src/plan/opara_desc.c",      "src/plan/opara_sched.c",        "src/plan/opara_sync.c",          "src/plan/opara_memplan.c",
    "src/plan/opara_live.c",      "src/plan/opara_verify.c",       "src/cuda/opara_cuda_lower.c",    "src/cuda/opara_cuda_cudnn.c",
    "src/cuda/opara_cuda_runtime.c", "src/cuda/opara_cuda_resources.c", "src/cuda/opara_backend_cuda.c", "src/cuda/opara_cuda_profile.c",
    "src/api/opara_export.c",    "src/api/opara_session.c",      "src/onnx/opara_pb.c",            "src/onnx/opara_onnx.c",
    "src/sim/opara_sim.c",       "src/api/opara_inspect.c",      "src/onnx/opara_onnx_tensor.c",   "src/onnx/opara_onnx_fold.c",
    "src/plan/opara_backend.c",   "src/cuda/opara_cuda_table.c",
};

/* Defined once, where the implementation begins: GCC only (clang has no per-function level), and only
   when the program is optimised for speed (not at -O0, -Os, or with OPARA_NO_COLD_O1). */
static const char cold_macros[] =
    "/* Cold code (tools/gen_header.c, cold_files): the files that run once per model or session, not per\n"
    "   inference, are compiled at -O1 under GCC -O2/-O3 (half their compile time; no kernel calls them).\n"
    "   Define OPARA_NO_COLD_O1 to compile them like the rest. */\n"
    "#if defined(__GNUC__) && !defined(__clang__) && !defined(__INTEL_COMPILER) && defined(__OPTIMIZE__) && \\\n"
    "    !defined(__OPTIMIZE_SIZE__) && !defined(OPARA_NO_COLD_O1)\n"
    "#  define OPARA__COLD_BEGIN _Pragma(\"GCC push_options\") _Pragma(\"GCC optimize (\\\"O1\\\")\")\n"
    "#  define OPARA__COLD_END _Pragma(\"GCC pop_options\")\n"
    "#else\n"
    "#  define OPARA__COLD_BEGIN\n"
    "#  define OPARA__COLD_END\n"
    "#endif\n\n";

#define N_COLD (sizeof cold_files / sizeof cold_files[0])

/* Headers that ship beside opara.h and are included from it, not inlined. */
static const char* const companions[] = {"opara_nvrtc.h"};

/* Headers that may be included locally; inlined where first included. */
static const char* const known_headers[] = {
    "src/api/opara_api.h",
    "src/core/opara_internal.h",
    "opara_dl.h",
    "opara_cuda.h",
    "src/ir/opara_ir.h",
    "src/model/opara_model.h",
    "src/cpu/opara_cpu.h",
    "src/plan/opara_sched.h",
    "src/cuda/kernels/opara_ptx_pack.h",
    "src/cuda/kernels/opara_ptx.h",
    "src/plan/opara_backend.h",
    "src/cuda/opara_backend_cuda.h",
    "src/api/opara_export.h",
    "src/onnx/opara_pb.h",
    "src/onnx/opara_onnx.h",
    "src/sim/opara_sim.h",
};

#define N_MANIFEST (sizeof manifest / sizeof manifest[0])
#define N_HEADERS (sizeof known_headers / sizeof known_headers[0])

typedef struct buffer {
    char* data;
    size_t size, cap;
} buffer;

static const char* root = ".";
static int header_done[N_HEADERS];
static int cpu_only; /* --cpu-only: the CUDA files are left out */

static void die(const char* what, const char* detail) {
    fprintf(stderr, "gen_header: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
    exit(2);
}

static void put_bytes(buffer* b, const char* s, size_t n) {
    if (b->size + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 1 << 16;
        while (cap < b->size + n + 1) cap *= 2;
        b->data = (char*)realloc(b->data, cap);
        if (!b->data) die("out of memory", NULL);
        b->cap = cap;
    }
    memcpy(b->data + b->size, s, n);
    b->size += n;
    b->data[b->size] = 0;
}

static void put(buffer* b, const char* s) { put_bytes(b, s, strlen(s)); }

static char* read_file(const char* rel, size_t* size) {
    char path[4096];
    FILE* f;
    char* data;
    long n;
    snprintf(path, sizeof path, "%s/%s", root, rel);
    f = fopen(path, "rb");
    if (!f) die("cannot open", path);
    if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) die("cannot size", path);
    data = (char*)malloc((size_t)n + 1);
    if (!data) die("out of memory", NULL);
    if (fread(data, 1, (size_t)n, f) != (size_t)n) die("cannot read", path);
    fclose(f);
    data[n] = 0;
    *size = (size_t)n;
    return data;
}

/* Removes "dir/../" and "./" segments in place ("src/cuda/../ir/opara_ir.h" -> "src/ir/opara_ir.h");
   a ".." that would climb above the repository root stays, so the path matches no header. */
static void normalize_path(char* path) {
    char* seg[64];
    size_t n = 0, i;
    char out[1024];
    char* p = path;
    size_t used = 0;
    while (*p && n < 64) {
        char* slash = strchr(p, '/');
        if (slash) *slash = 0;
        if (strcmp(p, ".") == 0) {
        } else if (strcmp(p, "..") == 0 && n > 0 && strcmp(seg[n - 1], "..") != 0) {
            --n;
        } else {
            seg[n++] = p;
        }
        if (!slash) break;
        p = slash + 1;
    }
    out[0] = 0;
    for (i = 0; i < n; ++i) {
        size_t len = strlen(seg[i]);
        if (used + len + 2 > sizeof out) return;
        if (i) out[used++] = '/';
        memcpy(out + used, seg[i], len);
        used += len;
        out[used] = 0;
    }
    strcpy(path, out);
}

/* Index in known_headers of the header an #include "name" in file `from` refers to (the name is
   relative to the including file's folder, as a C compiler reads it), or -1. */
static int find_header(const char* from, const char* name) {
    char candidate[1024];
    const char* slash = strrchr(from, '/');
    size_t dir_len = slash ? (size_t)(slash - from + 1) : 0;
    size_t i;
    snprintf(candidate, sizeof candidate, "%.*s%s", (int)dir_len, from, name);
    normalize_path(candidate);
    for (i = 0; i < N_HEADERS; ++i)
        if (strcmp(known_headers[i], candidate) == 0) return (int)i;
    return -1;
}

/* Returns the quoted name of a local include line, or NULL. */
static int local_include(const char* line, size_t len, char* name, size_t cap) {
    const char* p = line;
    const char* end = line + len;
    const char* q;
    while (p < end && (*p == ' ' || *p == '\t')) ++p;
    if (p >= end || *p != '#') return 0;
    ++p;
    while (p < end && (*p == ' ' || *p == '\t')) ++p;
    if ((size_t)(end - p) < 7 || strncmp(p, "include", 7) != 0) return 0;
    p += 7;
    while (p < end && (*p == ' ' || *p == '\t')) ++p;
    if (p >= end || *p != '"') return 0;
    q = memchr(p + 1, '"', (size_t)(end - p - 1));
    if (!q || (size_t)(q - p - 1) >= cap) die("malformed include", NULL);
    memcpy(name, p + 1, (size_t)(q - p - 1));
    name[q - p - 1] = 0;
    return 1;
}

static void emit_file(buffer* out, const char* rel);

/* The feature a manifest file belongs to (CORE for a file not in the manifest list). */
static feature feature_of(const char* rel) {
    size_t i;
    for (i = 0; i < N_MANIFEST; ++i)
        if (strcmp(manifest[i].path, rel) == 0) return manifest[i].feature;
    return CORE;
}

/* Writes `#include "companion"` (the name as it stands beside opara.h) when name is a companion. */
static int emit_companion(buffer* out, const char* line, size_t len, const char* name) {
    const char* base = strrchr(name, '/');
    const char* quote = (const char*)memchr(line, '"', len);
    size_t i;
    base = base ? base + 1 : name;
    for (i = 0; i < sizeof companions / sizeof companions[0]; ++i) {
        if (strcmp(base, companions[i]) != 0) continue;
        put_bytes(out, line, (size_t)(quote - line) + 1);
        put(out, base);
        put(out, "\"\n");
        return 1;
    }
    return 0;
}

/* Updates whether a block comment is open after this line (string literals are not special:
   the sources keep comment markers out of strings). */
static int comment_open_after(const char* line, size_t len, int open) {
    size_t i;
    for (i = 0; i + 1 < len; ++i) {
        if (!open && line[i] == '/' && line[i + 1] == '/') return 0;
        if (!open && line[i] == '/' && line[i + 1] == '*') open = 1, ++i;
        else if (open && line[i] == '*' && line[i + 1] == '/') open = 0, ++i;
    }
    return open;
}

static void emit_line(buffer* out, const char* rel, const char* line, size_t len, int in_comment) {
    char name[512];
    int h;
    if (in_comment || !local_include(line, len, name, sizeof name)) {
        put_bytes(out, line, len);
        put(out, "\n");
        return;
    }
    if (emit_companion(out, line, len, name)) return;
    h = find_header(rel, name);
    if (h < 0) {
        fprintf(stderr, "gen_header: %s includes \"%s\", which is not in the manifest of tools/gen_header.c\n", rel,
                name);
        exit(2);
    }
    if (header_done[h]) {
        put(out, "/* #include \"");
        put(out, name);
        put(out, "\" (inlined above) */\n");
        return;
    }
    emit_file(out, known_headers[h]);
}

static int is_cold(const char* rel) {
    size_t i;
    for (i = 0; i < N_COLD; ++i)
        if (strcmp(cold_files[i], rel) == 0) return 1;
    return 0;
}

static void emit_file(buffer* out, const char* rel) {
    size_t size, i, start = 0;
    char* text;
    size_t h;
    int in_comment = 0;
    feature f = feature_of(rel);
    int cold = is_cold(rel);
    for (h = 0; h < N_HEADERS; ++h)
        if (strcmp(known_headers[h], rel) == 0) header_done[h] = 1;
    if (cpu_only && f == CUDA) {
        put(out, "/* ==== ");
        put(out, rel);
        put(out, " left out (OPARA_NO_CUDA) ==== */\n");
        return;
    }
    text = read_file(rel, &size);
    if (f != CORE) {
        put(out, "#ifndef ");
        put(out, feature_macro[f]);
        put(out, "\n");
    }
    put(out, "/* ==== BEGIN ");
    put(out, rel);
    put(out, " ==== */\n");
    if (cold) put(out, "OPARA__COLD_BEGIN\n");
    for (i = 0; i <= size; ++i) {
        if (i == size || text[i] == '\n') {
            size_t len = i - start;
            if (len > 0 && text[start + len - 1] == '\r') --len;
            if (i < size || len > 0) emit_line(out, rel, text + start, len, in_comment);
            in_comment = comment_open_after(text + start, len, in_comment);
            start = i + 1;
        }
    }
    if (cold) put(out, "OPARA__COLD_END\n");
    put(out, "/* ==== END ");
    put(out, rel);
    put(out, " ==== */\n");
    if (f != CORE) {
        put(out, "#endif /* ");
        put(out, feature_macro[f]);
        put(out, " */\n");
    }
    free(text);
}

static void generate(buffer* out) {
    size_t i, m;
    for (i = 0; i < N_COLD; ++i) {
        for (m = 0; m < N_MANIFEST && strcmp(manifest[m].path, cold_files[i]) != 0; ++m) {
        }
        if (m == N_MANIFEST) die("a cold file is not in the manifest", cold_files[i]);
    }
    put(out, "/* opara.h - GENERATED FILE, DO NOT EDIT.\n"
             "   Built from src/ by tools/gen_header.c; edit the sources and run `make header`. */\n");
    if (cpu_only)
        put(out, "/* The CPU-only opara.h (gen_header --cpu-only): OPARA_NO_CUDA is defined and the CUDA backend's\n"
                 "   files are left out; everything else is opara.h's. */\n"
                 "#ifndef OPARA_NO_CUDA\n#define OPARA_NO_CUDA\n#endif\n");
    for (i = 0; i < N_MANIFEST; ++i)
        if (manifest[i].part == PART_PUBLIC) emit_file(out, manifest[i].path);
    put(out, "\n#if defined(OPARA_IMPLEMENTATION) && !defined(OPARA_IMPLEMENTATION_INCLUDED)\n"
             "#define OPARA_IMPLEMENTATION_INCLUDED\n"
             "#define OPARA__AMALGAMATED 1\n\n");
    put(out, cold_macros);
    for (i = 0; i < N_MANIFEST; ++i) {
        size_t h;
        int done = 0;
        if (manifest[i].part != PART_IMPL) continue;
        for (h = 0; h < N_HEADERS; ++h)
            if (strcmp(known_headers[h], manifest[i].path) == 0 && header_done[h]) done = 1;
        if (!done) emit_file(out, manifest[i].path);
    }
    put(out, "\n#endif /* OPARA_IMPLEMENTATION */\n\n");
    {
        size_t n;
        char* license = read_file("LICENSE", &n);
        char* p;
        put(out, "/*\n");
        for (p = license; *p; ++p)
            if (*p != '\r') put_bytes(out, p, 1);
        put(out, "*/\n");
        free(license);
    }
}

static int check(const buffer* fresh, const char* out_path) {
    size_t size, line = 1, i = 0, a_start = 0;
    char* old;
    FILE* f = fopen(out_path, "rb");
    if (!f) {
        fprintf(stderr, "%s is missing: run `make header`\n", out_path);
        return 1;
    }
    fclose(f);
    {
        const char* saved_root = root;
        root = ".";
        old = read_file(out_path, &size);
        root = saved_root;
    }
    if (size == fresh->size && memcmp(old, fresh->data, size) == 0) {
        free(old);
        return 0;
    }
    while (i < size && i < fresh->size && old[i] == fresh->data[i]) {
        if (old[i] == '\n') {
            ++line;
            a_start = i + 1;
        }
        ++i;
    }
    {
        const char* o = old + a_start;
        const char* n = fresh->data + a_start;
        int ol = (int)strcspn(o, "\n"), nl = (int)strcspn(n, "\n");
        fprintf(stderr,
                "%s is stale: run `make header`.\nfirst difference at line %lu:\n  committed: %.*s\n  generated: %.*s\n",
                out_path, (unsigned long)line, ol, o, nl, n);
    }
    free(old);
    return 1;
}

int main(int argc, char** argv) {
    const char* out_path = "opara.h";
    int check_only = 0, i;
    buffer out = {NULL, 0, 0};
    for (i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--check") == 0) check_only = 1;
        else if (strcmp(argv[i], "--cpu-only") == 0) cpu_only = 1;
        else if (strcmp(argv[i], "--root") == 0 && i + 1 < argc) root = argv[++i];
        else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc) out_path = argv[++i];
        else {
            fprintf(stderr, "usage: gen_header [--root DIR] [--out FILE] [--check] [--cpu-only]\n");
            return 2;
        }
    }
    generate(&out);
    if (check_only) return check(&out, out_path);
    {
        char tmp[4096];
        FILE* f;
        snprintf(tmp, sizeof tmp, "%s.tmp", out_path);
        f = fopen(tmp, "wb");
        if (!f || fwrite(out.data, 1, out.size, f) != out.size || fclose(f) != 0) die("cannot write", tmp);
        if (rename(tmp, out_path) != 0) die("cannot rename", tmp);
    }
    free(out.data);
    return 0;
}
