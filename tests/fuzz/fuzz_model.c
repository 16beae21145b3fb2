/* libFuzzer target: opara_model_load_memory on arbitrary bytes, then shape inference, the
   queries and a re-save of whatever loads. Build: make fuzz (clang -fsanitize=fuzzer,address,undefined).
   With -DFUZZ_WRITE_SEEDS it is instead a program that writes the seed corpus (a few small
   valid models) into the directory given as argv[1]. */
#define OPARA_IMPLEMENTATION
#include "../../opara.h"
#include "../opara_model_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

FIXTURE_UNUSED static void fuzz_exercise(opara_runtime* rt, const opara_model* m) {
    const opara__graph* g = opara__model_graph(m);
    opara__shape* shapes = (opara__shape*)malloc(sizeof(opara__shape) * (g->n_values + 1));
    opara_tensor_info info;
    opara_model_stats st;
    opara__bytes again;
    uint32_t i, width;
    if (shapes) {
        (void)opara__infer_shapes(rt, g, 2, shapes);
        free(shapes);
    }
    for (i = 0; i < opara_model_input_count(m); ++i) (void)opara_model_input_info(m, i, &info);
    (void)opara_model_get_stats(m, &st);
    if (g->n_nodes <= 64) (void)opara__graph_max_width(rt, g, &width, NULL);
    if (opara__format_write(rt, g, 0, &again) == OPARA_OK) opara_free(rt, again.data);
}

#if defined(FUZZ_WRITE_SEEDS)
static int write_file(const char* dir, const char* name, const void* data, size_t size) {
    char path[1024];
    FILE* f;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    f = fopen(path, "wb");
    if (!f || fwrite(data, 1, size, f) != size) return 1;
    return fclose(f) != 0;
}

int main(int argc, char** argv) {
    opara_runtime* rt = NULL;
    opara_builder* b = NULL;
    void* data = NULL;
    size_t size = 0;
    const int64_t d[] = {OPARA_DIM_BATCH, 4};
    const char* in[] = {"x"};
    const char* out[] = {"y"};
    int rc = 0;
    if (argc != 2 || opara_runtime_create(NULL, &rt) != OPARA_OK) return 2;
    if (fixture_image(rt, &data, &size) != OPARA_OK) return 1;
    rc |= write_file(argv[1], "fixture.opara", data, size);
    opara_free(rt, data);
    opara_builder_create(rt, &b); /* the smallest model: one Relu */
    opara_builder_add_input(b, "x", OPARA_DTYPE_F32, 2, d);
    opara_builder_add_node(b, "Relu", "r", 1, in, 1, out, 0, NULL);
    opara_builder_add_output(b, "y");
    if (opara_builder_save_memory(b, &data, &size) != OPARA_OK) return 1;
    rc |= write_file(argv[1], "relu.opara", data, size);
    opara_free(rt, data);
    opara_builder_destroy(b);
    opara_runtime_destroy(rt);
    return rc;
}
#else
int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    opara_runtime* rt = NULL;
    opara_model* m = NULL;
    uint8_t* copy;
    if (opara_runtime_create(NULL, &rt) != OPARA_OK) return 0;
    /* A 64-aligned copy, so the zero-copy path is the one fuzzed (libFuzzer's buffer is not aligned). */
    copy = (uint8_t*)opara__alloc_aligned(NULL, size ? size : 1, 64);
    if (copy) {
        if (size) memcpy(copy, data, size);
        if (opara_model_load_memory(rt, copy, size, &m) == OPARA_OK) fuzz_exercise(rt, m);
        else if (!opara_runtime_last_error(rt)[0]) abort(); /* every failure must say why */
        opara_model_destroy(m);
        opara__free_aligned(NULL, copy);
    }
    if (size && opara_model_load_memory(rt, data, size, &m) == OPARA_OK) opara_model_destroy(m); /* copy path */
    opara_runtime_destroy(rt);
    return 0;
}
#endif
