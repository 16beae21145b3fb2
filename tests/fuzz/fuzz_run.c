/* libFuzzer target: the bytes describe a tiny model (one to three nodes of any IR operator, tiny
   shapes that may hold 0, fuzzed attributes and constants whose values include NaN and +-Inf),
   which is built with the public builder API; whatever builds gets a CPU session (fuzzed batch,
   strategy and threads) that runs on fuzzed inputs and is destroyed. The two model targets stop
   at load; this one reaches session planning and every kernel. Invariants: no crash, no sanitizer
   report, every failure says why (a non-empty last error). Build: make fuzz (clang
   -fsanitize=fuzzer,address,undefined). With -DFUZZ_STANDALONE it is a plain program that runs
   the files named on its command line (a regression driver that needs no libFuzzer). */
#define OPARA_IMPLEMENTATION
#include "../../opara.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct fz {
    const uint8_t* p;
    size_t n, at;
} fz;

static unsigned fz_byte(fz* f) { return f->at < f->n ? f->p[f->at++] : 0u; }
static unsigned fz_pick(fz* f, unsigned count) { return fz_byte(f) % count; }
static int64_t fz_small(fz* f) { return (int64_t)fz_pick(f, 9) - 3; } /* -3 .. 5 */

static float fz_value(fz* f) {
    static const float palette[12] = {0.0f, 1.0f, -1.0f, 0.5f, -2.5f, 3.0f, 1e-3f, 6.5f, 0.0f, 0.0f, 0.0f, 0.0f};
    unsigned k = fz_pick(f, 16);
    if (k == 12) return (float)NAN;
    if (k == 13) return (float)INFINITY;
    if (k == 14) return -(float)INFINITY;
    if (k == 15) return -0.0f;
    return palette[k];
}

static const char* const fz_ops[] = { /* every operator of the op table */
#define FZ_OP(id, name, ...) name,
    OPARA__OPS(FZ_OP)
#undef FZ_OP
};

typedef struct fz_attr_kind {
    const char* name;
    opara_attr_type type;
} fz_attr_kind;

static const fz_attr_kind fz_attrs[] = {
    {"axis", OPARA_ATTR_INT},          {"kernel_shape", OPARA_ATTR_INTS}, {"strides", OPARA_ATTR_INTS},
    {"pads", OPARA_ATTR_INTS},         {"dilations", OPARA_ATTR_INTS},    {"group", OPARA_ATTR_INT},
    {"perm", OPARA_ATTR_INTS},         {"axes", OPARA_ATTR_INTS},         {"starts", OPARA_ATTR_INTS},
    {"ends", OPARA_ATTR_INTS},         {"steps", OPARA_ATTR_INTS},        {"shape", OPARA_ATTR_INTS},
    {"split", OPARA_ATTR_INTS},        {"keepdims", OPARA_ATTR_INT},      {"alpha", OPARA_ATTR_FLOAT},
    {"beta", OPARA_ATTR_FLOAT},        {"min", OPARA_ATTR_FLOAT},         {"max", OPARA_ATTR_FLOAT},
    {"to", OPARA_ATTR_INT},            {"transA", OPARA_ATTR_INT},        {"transB", OPARA_ATTR_INT},
    {"mode", OPARA_ATTR_STRING},       {"scales", OPARA_ATTR_FLOATS},     {"ceil_mode", OPARA_ATTR_INT},
    {"count_include_pad", OPARA_ATTR_INT}, {"epsilon", OPARA_ATTR_FLOAT}, {"output_padding", OPARA_ATTR_INTS},
    {"output_shape", OPARA_ATTR_INTS}, {"activation", OPARA_ATTR_STRING}, {"storage_order", OPARA_ATTR_INT},
    {"approximate", OPARA_ATTR_STRING}, {"value", OPARA_ATTR_FLOAT},      {"sizes", OPARA_ATTR_INTS}};

static const char* const fz_strings[] = {"constant", "reflect", "edge", "nearest", "linear", "Relu", "tanh", "none", ""};

#define FZ_MAX_ATTRS 4
#define FZ_MAX_LIST 8

typedef struct fz_node_buf {
    opara_attr attrs[FZ_MAX_ATTRS];
    int64_t ints[FZ_MAX_ATTRS][FZ_MAX_LIST];
    float floats[FZ_MAX_ATTRS][FZ_MAX_LIST];
} fz_node_buf;

static uint32_t fz_make_attrs(fz* f, fz_node_buf* nb) {
    uint32_t n = fz_pick(f, FZ_MAX_ATTRS + 1), i, j;
    for (i = 0; i < n; ++i) {
        const fz_attr_kind* k = &fz_attrs[fz_pick(f, sizeof fz_attrs / sizeof fz_attrs[0])];
        opara_attr* a = &nb->attrs[i];
        memset(a, 0, sizeof *a);
        a->name = k->name;
        a->type = k->type;
        switch (k->type) {
        case OPARA_ATTR_INT: a->v.i = fz_small(f); break;
        case OPARA_ATTR_FLOAT: a->v.f = fz_value(f); break;
        case OPARA_ATTR_STRING: a->v.s = fz_strings[fz_pick(f, sizeof fz_strings / sizeof fz_strings[0])]; break;
        case OPARA_ATTR_INTS:
            a->count = fz_pick(f, FZ_MAX_LIST + 1);
            for (j = 0; j < a->count; ++j) nb->ints[i][j] = fz_small(f);
            a->v.ints = nb->ints[i];
            break;
        case OPARA_ATTR_FLOATS:
            a->count = fz_pick(f, FZ_MAX_LIST + 1);
            for (j = 0; j < a->count; ++j) nb->floats[i][j] = fz_value(f);
            a->v.floats = nb->floats[i];
            break;
        }
    }
    return n;
}

/* A constant named name of fuzzed rank (0..4), dims (0..4) and values. */
static void fz_constant(fz* f, opara_builder* b, const char* name) {
    int64_t dims[4];
    int32_t rank = (int32_t)fz_pick(f, 5), i;
    size_t count = 1, k;
    opara_dtype dt = fz_pick(f, 4) == 0 ? OPARA_DTYPE_I64 : OPARA_DTYPE_F32;
    void* data;
    for (i = 0; i < rank; ++i) {
        dims[i] = (int64_t)fz_pick(f, 5);
        count *= (size_t)dims[i];
    }
    data = calloc(count + 1, 8);
    if (!data) return;
    for (k = 0; k < count; ++k) {
        if (dt == OPARA_DTYPE_I64) ((int64_t*)data)[k] = fz_small(f);
        else ((float*)data)[k] = fz_value(f);
    }
    opara_builder_add_constant(b, name, dt, rank, dims, data, count * opara_dtype_size(dt));
    free(data);
}

/* Builds the model the bytes describe; NULL when the builder refuses it (with a reason). */
static opara_model* fz_build(fz* f, opara_runtime* rt) {
    opara_builder* b = NULL;
    opara_model* m = NULL;
    int64_t xd[4];
    int32_t xr = 1 + (int32_t)fz_pick(f, 4), i;
    uint32_t n_nodes = 1 + fz_pick(f, 3), k, j, n_consts = 0;
    char names[4][8], consts[16][8];
    opara_result r;
    if (opara_builder_create(rt, &b) != OPARA_OK) return NULL;
    for (i = 0; i < xr; ++i) xd[i] = fz_pick(f, 8) == 0 ? OPARA_DIM_BATCH : (int64_t)fz_pick(f, 6);
    opara_builder_add_input(b, "x", OPARA_DTYPE_F32, xr, xd);
    strcpy(names[0], "x");
    for (k = 0; k < n_nodes; ++k) {
        fz_node_buf nb;
        const char* ins[5];
        const char* outs[2];
        char out2[8];
        uint32_t n_in = 1 + fz_pick(f, 3), n_out = 1 + (fz_pick(f, 4) == 0), n_attr;
        const char* op = fz_ops[fz_pick(f, sizeof fz_ops / sizeof fz_ops[0])];
        ins[0] = names[fz_pick(f, k + 1)];
        for (j = 1; j < n_in; ++j) {
            unsigned src = fz_pick(f, 3);
            if (src == 0 || n_consts == 16) ins[j] = names[fz_pick(f, k + 1)];
            else {
                snprintf(consts[n_consts], sizeof consts[0], "c%u", n_consts);
                fz_constant(f, b, consts[n_consts]);
                ins[j] = consts[n_consts++];
            }
        }
        snprintf(names[k + 1], sizeof names[0], "t%u", k + 1);
        snprintf(out2, sizeof out2, "u%u", k + 1);
        outs[0] = names[k + 1];
        outs[1] = out2;
        n_attr = fz_make_attrs(f, &nb);
        opara_builder_add_node(b, op, NULL, n_in, ins, n_out, outs, n_attr, nb.attrs);
    }
    opara_builder_add_output(b, names[n_nodes]);
    r = opara_builder_finish(b, &m);
    if (r != OPARA_OK && !opara_builder_last_error(b)[0]) abort(); /* every failure must say why */
    opara_builder_destroy(b);
    return r == OPARA_OK ? m : NULL;
}

static void fz_run(fz* f, opara_runtime* rt, const opara_model* m) {
    static const opara_strategy strategies[] = {OPARA_STRATEGY_OPARA, OPARA_STRATEGY_SEQUENTIAL};
    opara_session_desc d;
    opara_session* s = NULL;
    opara_tensor in[4];
    void* bufs[4] = {NULL, NULL, NULL, NULL};
    uint32_t n_in, i;
    int runs;
    memset(&d, 0, sizeof d);
    d.backend = OPARA_BACKEND_CPU;
    d.builtin_gemm = 1;
    d.batch_size = (int64_t)fz_pick(f, 3);
    d.threads = 1 + fz_pick(f, 2);
    d.strategy = strategies[fz_pick(f, 2)];
    if (opara_session_create(rt, m, &d, &s) != OPARA_OK) {
        if (!opara_runtime_last_error(rt)[0]) abort();
        return;
    }
    n_in = opara_session_input_count(s);
    if (n_in > 4) n_in = 4;
    memset(in, 0, sizeof in);
    for (i = 0; i < n_in; ++i) {
        opara_tensor_info info;
        size_t count = 1, k;
        int32_t r;
        memset(&info, 0, sizeof info);
        if (opara_session_input_info(s, i, &info) != OPARA_OK) abort();
        for (r = 0; r < info.rank; ++r) count *= (size_t)info.dims[r];
        bufs[i] = calloc(count + 1, 8);
        if (!bufs[i]) goto done;
        for (k = 0; k < count; ++k) {
            if (info.dtype == OPARA_DTYPE_F32) ((float*)bufs[i])[k] = fz_value(f);
            else if (info.dtype == OPARA_DTYPE_I64) ((int64_t*)bufs[i])[k] = fz_small(f);
        }
        in[i].name = info.name;
        in[i].dtype = info.dtype;
        in[i].rank = info.rank;
        memcpy(in[i].dims, info.dims, sizeof in[i].dims);
        in[i].data = bufs[i];
    }
    for (runs = 0; runs < 2; ++runs)
        if (opara_session_run(s, in, n_in, NULL, 0) != OPARA_OK && !opara_session_last_error(s)[0]) abort();
done:
    for (i = 0; i < 4; ++i) free(bufs[i]);
    opara_session_destroy(s);
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    opara_runtime* rt = NULL;
    opara_model* m;
    fz f;
    f.p = data;
    f.n = size;
    f.at = 0;
    if (opara_runtime_create(NULL, &rt) != OPARA_OK) return 0;
    m = fz_build(&f, rt);
    if (m) {
        fz_run(&f, rt, m);
        opara_model_destroy(m);
    }
    opara_runtime_destroy(rt);
    return 0;
}

#if defined(FUZZ_STANDALONE)
/* Runs each file named on the command line once (the committed corpus as a regression test). */
int main(int argc, char** argv) {
    int i;
    for (i = 1; i < argc; ++i) {
        FILE* fp = fopen(argv[i], "rb");
        uint8_t buf[4096];
        size_t n;
        if (!fp) return 2;
        n = fread(buf, 1, sizeof buf, fp);
        fclose(fp);
        LLVMFuzzerTestOneInput(buf, n);
    }
    printf("fuzz_run: %d inputs ran\n", argc - 1);
    return 0;
}
#endif
