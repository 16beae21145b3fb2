/* bench_load: how fast a .opara model loads, and proof that loading does not copy weights.

   Builds two synthetic models with the same 1000-node graph (500 MatMul + 500 Relu in a chain):
   "large" with 224x224 f32 weights per MatMul (~100 MB), "small" with 16x16 weights (~0.5 MB).
   Writes both, then times opara_model_load_file (mmap) and opara_model_load_memory (caller's
   buffer) for each, checks that every constant points into the mapping / the buffer (pointer
   identity), and compares with the time a plain memcpy of the large file takes. If loading
   copied weights, large would take about memcpy's time longer than small.

   usage: bench_load [--dir DIR] [--out FILE.json] [--runs N] */
#if !defined(_POSIX_C_SOURCE) && !defined(_GNU_SOURCE)
#  define _POSIX_C_SOURCE 200809L /* clock_gettime, stat, setenv: also when the library is linked from elsewhere */
#endif
#define OPARA_IMPLEMENTATION
#include "../opara.h"
#include "tool_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct bench_model {
    const char* label;
    int64_t dim;
    char path[512];
    uint64_t file_bytes, weight_bytes;
    double save_ms, load_file_ms, load_memory_ms;
    int file_in_place, memory_in_place;
} bench_model;

static int bench_fail(opara_runtime* rt, const char* what) {
    fprintf(stderr, "bench_load: %s: %s\n", what, opara_runtime_last_error(rt));
    return 1;
}

static int bench_build(opara_runtime* rt, bench_model* bm) {
    opara_builder* b = NULL;
    int64_t xdims[2], wdims[2];
    size_t wbytes = (size_t)(bm->dim * bm->dim) * sizeof(float), i;
    float* w = (float*)malloc(wbytes);
    char prev[32], name[32], mm[32], relu[32];
    uint64_t t0;
    int k;
    opara_result r;
    if (!w || opara_builder_create(rt, &b) != OPARA_OK) return bench_fail(rt, "builder");
    for (i = 0; i < wbytes / sizeof(float); ++i) w[i] = (float)(i % 7) * 0.001f;
    xdims[0] = OPARA_DIM_BATCH, xdims[1] = bm->dim;
    wdims[0] = bm->dim, wdims[1] = bm->dim;
    opara_builder_add_input(b, "x", OPARA_DTYPE_F32, 2, xdims);
    strcpy(prev, "x");
    for (k = 0; k < 500; ++k) {
        const char* in[2];
        const char* out[1];
        sprintf(name, "w%d", k);
        sprintf(mm, "mm%d", k);
        sprintf(relu, "relu%d", k);
        w[0] = (float)k; /* distinct weights */
        opara_builder_add_constant(b, name, OPARA_DTYPE_F32, 2, wdims, w, wbytes);
        in[0] = prev, in[1] = name, out[0] = mm;
        opara_builder_add_node(b, "MatMul", mm, 2, in, 1, out, 0, NULL);
        in[0] = mm, out[0] = relu;
        opara_builder_add_node(b, "Relu", relu, 1, in, 1, out, 0, NULL);
        strcpy(prev, relu);
    }
    opara_builder_add_output(b, prev);
    t0 = tool_now_ns();
    r = opara_builder_save_file(b, bm->path);
    bm->save_ms = (double)(tool_now_ns() - t0) / 1e6;
    bm->weight_bytes = (uint64_t)wbytes * 500;
    if (r != OPARA_OK) fprintf(stderr, "bench_load: save: %s\n", opara_builder_last_error(b));
    opara_builder_destroy(b);
    free(w);
    return r == OPARA_OK ? 0 : 1;
}

/* 1 when every constant of m lies inside [base, base + size); base NULL (a file mapping, whose
   address the API does not give): when the model says it is zero-copy and all constants lie
   within `size` bytes of each other (one image of the file, not copies of their own). */
static int bench_in_place(const opara_model* m, const void* base, size_t size) {
    opara_plan* plan = NULL;
    opara_plan_tensor t;
    opara_model_stats st;
    const uint8_t *lo = (const uint8_t*)base, *first = NULL, *last = NULL;
    uint32_t i;
    int ok = opara_plan_create(m, NULL, &plan) == OPARA_OK && opara_model_get_stats(m, &st) == OPARA_OK && st.zero_copy;
    for (i = 0; ok && i < opara_plan_tensor_count(plan); ++i) {
        const uint8_t* p;
        if (opara_plan_get_tensor(plan, i, &t) != OPARA_OK || !t.is_constant) continue;
        p = (const uint8_t*)t.data;
        if (!first || p < first) first = p;
        if (!last || p + t.bytes > last) last = p + t.bytes;
        if (lo && (p < lo || p + t.bytes > lo + size)) ok = 0;
    }
    if (ok && !lo && first) ok = (size_t)(last - first) <= size;
    opara_plan_destroy(plan);
    return ok;
}

static uint8_t* bench_read(const char* path, size_t* size) {
    FILE* f = fopen(path, "rb");
    long n;
    uint8_t *raw, *aligned;
    if (!f || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) return NULL;
    raw = (uint8_t*)malloc((size_t)n + 64 + sizeof(void*));
    if (!raw) return NULL;
    aligned = raw + sizeof(void*);
    aligned += (64 - ((uintptr_t)aligned & 63)) & 63;
    memcpy(aligned - sizeof(void*), &raw, sizeof raw);
    if (fread(aligned, 1, (size_t)n, f) != (size_t)n) return NULL;
    fclose(f);
    *size = (size_t)n;
    return aligned;
}

static void bench_release(uint8_t* aligned) {
    void* raw;
    memcpy(&raw, aligned - sizeof(void*), sizeof raw);
    free(raw);
}

static int bench_load(opara_runtime* rt, bench_model* bm, int runs) {
    opara_model* m = NULL;
    size_t size = 0;
    uint8_t* buf = bench_read(bm->path, &size);
    uint64_t t0, best_file = UINT64_MAX, best_mem = UINT64_MAX;
    int i;
    if (!buf) return bench_fail(rt, "read");
    bm->file_bytes = size;
    bm->file_in_place = bm->memory_in_place = 1;
    for (i = 0; i < runs; ++i) {
        uint64_t dt;
        t0 = tool_now_ns();
        if (opara_model_load_file(rt, bm->path, &m) != OPARA_OK) return bench_fail(rt, "load_file");
        dt = tool_now_ns() - t0;
        best_file = dt < best_file ? dt : best_file;
        bm->file_in_place &= bench_in_place(m, NULL, size);
        opara_model_destroy(m);
        t0 = tool_now_ns();
        if (opara_model_load_memory(rt, buf, size, &m) != OPARA_OK) return bench_fail(rt, "load_memory");
        dt = tool_now_ns() - t0;
        best_mem = dt < best_mem ? dt : best_mem;
        bm->memory_in_place &= bench_in_place(m, buf, size);
        opara_model_destroy(m);
    }
    bm->load_file_ms = (double)best_file / 1e6;
    bm->load_memory_ms = (double)best_mem / 1e6;
    bench_release(buf);
    return 0;
}

static double bench_memcpy_ms(size_t bytes) {
    uint8_t* a = (uint8_t*)malloc(bytes);
    uint8_t* b = (uint8_t*)malloc(bytes);
    uint64_t t0, best = UINT64_MAX;
    int i;
    if (!a || !b) return -1;
    memset(a, 1, bytes);
    memset(b, 2, bytes); /* fault the pages in first */
    for (i = 0; i < 3; ++i) {
        t0 = tool_now_ns();
        memcpy(b, a, bytes);
        if (tool_now_ns() - t0 < best) best = tool_now_ns() - t0;
    }
    i = b[bytes / 2];
    free(a);
    free(b);
    return (double)best / 1e6 + (double)(i - 1); /* i is 1: keeps the copy observable */
}

typedef struct bench_convert_result {
    double onnx_mb, convert_ms, load_ms;
    int zero_copy;
} bench_convert_result;

/* ONNX -> .opara (import, fold, write the file) for one model, then the converted file's load. */
static int bench_convert(opara_runtime* rt, const char* onnx_path, const char* out_path, bench_convert_result* res) {
    opara_model *m = NULL, *loaded = NULL;
    void* bytes = NULL;
    size_t n_bytes = 0;
    opara_model_stats stats;
    FILE* f;
    uint64_t t0;
    memset(res, 0, sizeof *res);
    f = fopen(onnx_path, "rb");
    if (!f) return 1;
    fseek(f, 0, SEEK_END);
    res->onnx_mb = (double)ftell(f) / 1e6;
    fclose(f);
    t0 = tool_now_ns();
    if (opara_model_load_onnx_file(rt, onnx_path, NULL, &m) != OPARA_OK ||
        opara_model_save_memory(m, &bytes, &n_bytes) != OPARA_OK)
        return bench_fail(rt, "convert");
    f = fopen(out_path, "wb");
    if (!f || fwrite(bytes, 1, n_bytes, f) != n_bytes || fclose(f) != 0) return 1;
    res->convert_ms = (double)(tool_now_ns() - t0) / 1e6;
    opara_free(rt, bytes);
    opara_model_destroy(m);
    t0 = tool_now_ns();
    if (opara_model_load_file(rt, out_path, &loaded) != OPARA_OK) return bench_fail(rt, "load converted");
    res->load_ms = (double)(tool_now_ns() - t0) / 1e6;
    opara_model_get_stats(loaded, &stats);
    res->zero_copy = stats.zero_copy;
    opara_model_destroy(loaded);
    remove(out_path);
    return 0;
}

int main(int argc, char** argv) {
    const char* dir = "build/bench";
    const char* json_path = "build/bench/load.json";
    int runs = 10, i, failed = 0;
    bench_model models[2];
    opara_runtime* rt = NULL;
    double copy_ms;
    bench_convert_result convert;
    int have_convert = 0;
    FILE* json;
    for (i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc) dir = argv[++i];
        else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc) json_path = argv[++i];
        else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) runs = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: bench_load [--dir DIR] [--out FILE.json] [--runs N]\n");
            return 2;
        }
    }
    if (runs < 1) runs = 1;
    if (opara_runtime_create(NULL, &rt) != OPARA_OK) return 1;
    memset(models, 0, sizeof models);
    models[0].label = "large", models[0].dim = 224;
    models[1].label = "small", models[1].dim = 16;
    for (i = 0; i < 2; ++i) {
        sprintf(models[i].path, "%s/synthetic_%s.opara", dir, models[i].label);
        if (bench_build(rt, &models[i]) || bench_load(rt, &models[i], runs)) return 1;
        failed |= !models[i].file_in_place || !models[i].memory_in_place;
    }
    copy_ms = bench_memcpy_ms((size_t)models[0].file_bytes);
    printf("model   nodes  weights(MB)  file(MB)  save(ms)  load_file(ms)  load_memory(ms)  weights in place\n");
    for (i = 0; i < 2; ++i)
        printf("%-7s %5d  %11.1f  %8.1f  %8.1f  %13.3f  %15.3f  %s\n", models[i].label, 1000,
               (double)models[i].weight_bytes / 1e6, (double)models[i].file_bytes / 1e6, models[i].save_ms,
               models[i].load_file_ms, models[i].load_memory_ms,
               models[i].file_in_place && models[i].memory_in_place ? "yes (pointer identity)" : "NO");
    printf("memcpy of the large file: %.3f ms (what a copying loader would add)\n", copy_ms);
    printf("load time large/small: file %.2fx, memory %.2fx for %.0fx the weight bytes\n",
           models[0].load_file_ms / models[1].load_file_ms, models[0].load_memory_ms / models[1].load_memory_ms,
           (double)models[0].weight_bytes / (double)models[1].weight_bytes);
    {
        char out_path[600];
        snprintf(out_path, sizeof out_path, "%s/bert_base.opara", dir);
        if (bench_convert(rt, "build/zoo/bert_base.onnx", out_path, &convert) == 0) {
            have_convert = 1;
            printf("ONNX convert (bert_base, %.1f MB): %.0f ms = %.0f MB/s; load of the converted file %.3f ms, weights in place: %s\n",
                   convert.onnx_mb, convert.convert_ms, convert.onnx_mb / (convert.convert_ms / 1000.0), convert.load_ms,
                   convert.zero_copy ? "yes" : "NO");
            failed |= !convert.zero_copy;
        } else {
            printf("ONNX convert (bert_base): SKIP, build/zoo/bert_base.onnx not available (make zoo)\n");
        }
    }
    json = fopen(json_path, "w");
    if (json) {
        fprintf(json, "{\"runs\": %d, \"memcpy_large_ms\": %.3f,\n", runs, copy_ms);
        if (have_convert)
            fprintf(json, " \"onnx_convert_bert_base\": {\"onnx_mb\": %.1f, \"convert_ms\": %.1f, \"mb_per_s\": %.1f, "
                          "\"load_converted_ms\": %.3f, \"zero_copy\": %s},\n",
                    convert.onnx_mb, convert.convert_ms, convert.onnx_mb / (convert.convert_ms / 1000.0), convert.load_ms,
                    convert.zero_copy ? "true" : "false");
        else
            fprintf(json, " \"onnx_convert_bert_base\": null,\n");
        fprintf(json, " \"models\": [");
        for (i = 0; i < 2; ++i)
            fprintf(json,
                    "%s\n  {\"label\": \"%s\", \"nodes\": 1000, \"weight_bytes\": %llu, \"file_bytes\": %llu, \"save_ms\": %.3f, "
                    "\"load_file_ms\": %.3f, \"load_memory_ms\": %.3f, \"file_in_place\": %s, \"memory_in_place\": %s}",
                    i ? "," : "", models[i].label, (unsigned long long)models[i].weight_bytes,
                    (unsigned long long)models[i].file_bytes, models[i].save_ms, models[i].load_file_ms,
                    models[i].load_memory_ms, models[i].file_in_place ? "true" : "false",
                    models[i].memory_in_place ? "true" : "false");
        fprintf(json, "\n]}\n");
        fclose(json);
        printf("wrote %s\n", json_path);
    }
    remove(models[0].path); /* the small one stays for `opara info` */
    opara_runtime_destroy(rt);
    return failed;
}
