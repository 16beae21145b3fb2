/* Edge values through the public API, on the CPU backend and the CUDA backend (the CUDA emulator,
   or a real GPU with OPARA_CUDA_DRIVER / OPARA_CUBLAS / OPARA_CUDNN):
   - zero-sized tensors: a one-op model per IR operator whose input has a dim of 0, and ops that
     would produce an empty output, are refused with OPARA_ERR_SHAPE naming the input or node (the
     documented choice, README "Zero-sized tensors"); a session is never created on them, and if a
     model got through, creating and running its session must still not raise a signal;
   - NaN and +-Inf through every op that takes a max, min or clamp (Relu, LeakyRelu, Clip,
     HardSigmoid, HardSwish, MaxPool in its several CPU paths, Softmax, fused Conv+Relu and
     Gemm+Relu, GlobalAveragePool, ReduceMean, ReduceSum, ReduceMax, ReduceMin) against the ONNX
     reference behaviour (ONNX Runtime and PyTorch): NaN in gives NaN out at every position it
     reaches; expected values are written here, the MaxPool reference is a naive loop of this file;
   - an out-of-range Gather index: the error names the node, the index and the axis size. */
#define _GNU_SOURCE
#define OPARA_IMPLEMENTATION
#include "opara.h"
#include "opara_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_test_env.h"
#include "builder_attrs.h"

static int64_t numel(int32_t rank, const int64_t* dims) {
    int64_t n = 1;
    int32_t i;
    for (i = 0; i < rank; ++i) n *= dims[i];
    return n;
}

/* ---- zero-sized tensors -------------------------------------------------------------------------- */

/* One operator with input x of shape xd (rank xr) and the constants/attributes it needs. */
typedef struct zero_case {
    const char* op;
    int32_t xr;
    int64_t xd[4];
} zero_case;

static const float ones[64] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
                               1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};

/* Adds the node `op` reading x (and constants named c*) writing y, with attributes that make a
   well-formed node for a non-empty x of the same rank. */
static int is_logic_binary(const char* op) {
    static const char* const names[] = {"Equal", "Greater", "Less", "GreaterOrEqual", "LessOrEqual", "And", "Or", "Xor",
                                        "Mod", "BitShift", "Max", "Min", "Mean", "Sum"};
    size_t i;
    for (i = 0; i < sizeof names / sizeof names[0]; ++i)
        if (!strcmp(op, names[i])) return 1;
    return 0;
}

static void add_one_op(opara_builder* b, const char* op, int32_t xr, const int64_t* xd) {
    static const int64_t k2[2] = {1, 1}, perm4[4] = {0, 1, 3, 2}, ax0[1] = {0};
    static const int64_t shape_flat[2] = {-1, 4}, expand_to[4] = {0, 3, 4, 4}, split2[2] = {2, 2};
    const char *ins[5] = {"x", "c1", "c2", "c3", "c4"}, *outs[3] = {"y", "y2", "y3"};
    int64_t c = xr > 1 ? xd[1] : 1, dw[4] = {2, c, 1, 1}, dv[1], dm[2] = {xr ? xd[xr - 1] : 1, 2}, idx[1] = {0};
    int64_t dl[1] = {xr ? xd[xr - 1] : 1}, one[1] = {1};
    opara_attr a[4];
    uint32_t n_in = 1, n_out = 1, n_attr = 0;
    dv[0] = c;
    if (!strcmp(op, "Conv")) {
        opara_builder_add_constant(b, "c1", OPARA_DTYPE_F32, 4, dw, ones, (size_t)numel(4, dw) * 4);
        n_in = 2;
    } else if (!strcmp(op, "ConvTranspose")) {
        int64_t wt[4] = {c, 2, 1, 1};
        opara_builder_add_constant(b, "c1", OPARA_DTYPE_F32, 4, wt, ones, (size_t)numel(4, wt) * 4);
        n_in = 2;
    } else if (!strcmp(op, "QuantizeLinear") || !strcmp(op, "DequantizeLinear")) {
        opara_builder_add_constant(b, "c1", OPARA_DTYPE_F32, 1, one, ones, 4); /* the scale (x is f32 here) */
        n_in = 2;
    } else if (!strcmp(op, "DynamicQuantizeLinear")) {
        n_out = 3;
    } else if (!strcmp(op, "ConvInteger") || !strcmp(op, "MatMulInteger")) {
        ins[1] = "x"; /* x is not u8 or i8: refused either way, never run */
        n_in = 2;
    } else if (!strcmp(op, "MaxPool") || !strcmp(op, "AveragePool")) {
        a[n_attr++] = attr_ints("kernel_shape", k2, 2);
    } else if (!strcmp(op, "BatchNormalization")) {
        opara_builder_add_constant(b, "c1", OPARA_DTYPE_F32, 1, dv, ones, (size_t)c * 4);
        opara_builder_add_constant(b, "c2", OPARA_DTYPE_F32, 1, dv, ones, (size_t)c * 4);
        opara_builder_add_constant(b, "c3", OPARA_DTYPE_F32, 1, dv, ones, (size_t)c * 4);
        opara_builder_add_constant(b, "c4", OPARA_DTYPE_F32, 1, dv, ones, (size_t)c * 4);
        n_in = 5;
    } else if (!strcmp(op, "PRelu")) {
        opara_builder_add_constant(b, "c1", OPARA_DTYPE_F32, 1, one, ones, 4);
        n_in = 2;
    } else if (!strcmp(op, "InstanceNormalization")) {
        opara_builder_add_constant(b, "c1", OPARA_DTYPE_F32, 1, dv, ones, (size_t)c * 4);
        opara_builder_add_constant(b, "c2", OPARA_DTYPE_F32, 1, dv, ones, (size_t)c * 4);
        n_in = 3;
    } else if (!strcmp(op, "Einsum")) {
        static const char eq[] = "abcd->dcba";
        opara_attr s;
        memset(&s, 0, sizeof s);
        s.name = "equation";
        s.type = OPARA_ATTR_STRING;
        s.count = (uint32_t)strlen(eq);
        s.v.s = eq;
        a[n_attr++] = s;
    } else if (!strcmp(op, "LRN")) {
        a[n_attr++] = attr_int("size", 3);
    } else if (!strcmp(op, "MaxUnpool")) {
        int64_t zeros[64] = {0};
        opara_builder_add_constant(b, "c1", OPARA_DTYPE_I64, xr, xd, zeros, (size_t)numel(xr, xd) * 8);
        a[n_attr++] = attr_ints("kernel_shape", k2, 2);
        n_in = 2;
    } else if (!strcmp(op, "Add") || !strcmp(op, "Sub") || !strcmp(op, "Mul") || !strcmp(op, "Div") ||
               !strcmp(op, "Pow") || !strcmp(op, "Concat")) {
        ins[1] = "x";
        n_in = 2;
        if (!strcmp(op, "Concat")) a[n_attr++] = attr_int("axis", 1);
    } else if (is_logic_binary(op)) { /* the comparisons, logical, variadic ones, Mod, BitShift: x with itself */
        ins[1] = "x";
        n_in = 2;
        if (!strcmp(op, "Mod")) a[n_attr++] = attr_int("fmod", 1);
        if (!strcmp(op, "BitShift")) a[n_attr++] = attr_str("direction", "LEFT");
    } else if (!strcmp(op, "Where")) {
        ins[0] = "x";
        ins[1] = "x";
        ins[2] = "x";
        n_in = 3; /* x is not bool: refused either way, never run */
    } else if (!strcmp(op, "Split")) {
        a[n_attr++] = attr_int("axis", xr - 1);
        a[n_attr++] = attr_ints("split", split2, 2);
        n_out = 2;
    } else if (!strcmp(op, "Slice")) {
        static const int64_t st[1] = {0}, en[1] = {1};
        a[n_attr++] = attr_ints("starts", st, 1);
        a[n_attr++] = attr_ints("ends", en, 1);
        a[n_attr++] = attr_ints("axes", ax0, 1);
    } else if (!strcmp(op, "Gather")) {
        opara_builder_add_constant(b, "c1", OPARA_DTYPE_I64, 1, one, idx, 8);
        n_in = 2;
    } else if (!strcmp(op, "GatherElements") || !strcmp(op, "GatherND") || !strcmp(op, "ScatterElements") ||
               !strcmp(op, "Scatter") || !strcmp(op, "ScatterND")) {
        ins[1] = "x"; /* x as indices and updates: refused either way (dtype or zero size), never run */
        ins[2] = "x";
        n_in = strncmp(op, "Gather", 6) ? 3 : 2;
    } else if (!strcmp(op, "Tile")) {
        static const int64_t rep[4] = {1, 2, 1, 2};
        a[n_attr++] = attr_ints("repeats", rep, (uint32_t)xr);
    } else if (!strcmp(op, "DepthToSpace") || !strcmp(op, "SpaceToDepth")) {
        a[n_attr++] = attr_int("blocksize", 1);
    } else if (!strcmp(op, "OneHot")) {
        static const float off_on[2] = {0, 1};
        static const int64_t two[1] = {2};
        opara_builder_add_constant(b, "c1", OPARA_DTYPE_F32, 1, two, off_on, sizeof off_on);
        a[n_attr++] = attr_int("depth", 3);
        n_in = 2;
    } else if (!strcmp(op, "ReverseSequence")) {
        static const int64_t lens[4] = {1, 1, 1, 1};
        opara_builder_add_constant(b, "c1", OPARA_DTYPE_I64, 1, xr > 1 ? &xd[1] : one, lens, (size_t)(xr > 1 ? xd[1] : 1) * 8);
        n_in = 2;
    } else if (!strcmp(op, "Reshape")) {
        a[n_attr++] = attr_ints("shape", shape_flat, 2);
    } else if (!strcmp(op, "Transpose")) {
        a[n_attr++] = attr_ints("perm", perm4, 4);
    } else if (!strcmp(op, "Squeeze") || !strcmp(op, "Unsqueeze")) {
        a[n_attr++] = attr_ints("axes", ax0, 1);
    } else if (!strcmp(op, "Expand")) {
        a[n_attr++] = attr_ints("shape", expand_to, 4);
    } else if (!strcmp(op, "Gemm") || !strcmp(op, "MatMul")) {
        opara_builder_add_constant(b, "c1", OPARA_DTYPE_F32, 2, dm, ones, (size_t)numel(2, dm) * 4);
        n_in = 2;
    } else if (!strcmp(op, "LSTM") || !strcmp(op, "GRU") || !strcmp(op, "RNN")) { /* x [seq, batch, input] */
        int64_t g = !strcmp(op, "LSTM") ? 4 : !strcmp(op, "GRU") ? 3 : 1, wd[3] = {1, 2 * g, xd[2]}, rd[3] = {1, 2 * g, 2};
        opara_builder_add_constant(b, "c1", OPARA_DTYPE_F32, 3, wd, ones, (size_t)numel(3, wd) * 4);
        opara_builder_add_constant(b, "c2", OPARA_DTYPE_F32, 3, rd, ones, (size_t)numel(3, rd) * 4);
        n_in = 3;
        a[n_attr++] = attr_int("hidden_size", 2);
    } else if (!strcmp(op, "LayerNormalization")) {
        opara_builder_add_constant(b, "c1", OPARA_DTYPE_F32, 1, dl, ones, (size_t)dl[0] * 4);
        n_in = 2;
        a[n_attr++] = attr_int("axis", -1);
    } else if (!strcmp(op, "ReduceMean")) {
        a[n_attr++] = attr_ints("axes", ax0, 1);
    } else if (!strcmp(op, "CumSum")) {
        a[n_attr++] = attr_int("axis", 0);
    } else if (!strcmp(op, "Cast")) {
        a[n_attr++] = attr_int("to", OPARA_DTYPE_F32);
    } else if (!strcmp(op, "GridSample")) {
        static const int64_t gd[4] = {1, 2, 2, 2};
        opara_builder_add_constant(b, "c1", OPARA_DTYPE_F32, 4, gd, ones, (size_t)numel(4, gd) * 4);
        n_in = 2;
    } else if (!strcmp(op, "TopK")) {
        a[n_attr++] = attr_int("k", 0); /* no larger than any dim, zero ones included */
    } else if (!strcmp(op, "Pad")) {
        static const int64_t p8[8] = {0, 0, 1, 1, 0, 0, 1, 1};
        a[n_attr++] = attr_ints("pads", p8, 8);
    } else if (!strcmp(op, "Resize")) {
        static const float sc[4] = {1, 1, 2, 2};
        opara_attr s;
        memset(&s, 0, sizeof s);
        s.name = "scales";
        s.type = OPARA_ATTR_FLOATS;
        s.count = 4;
        s.v.floats = sc;
        a[n_attr++] = s;
    }
    opara_builder_add_node(b, op, "the_op", n_in, ins, n_out, outs, n_attr, a);
    opara_builder_add_output(b, "y");
}

/* Creates and runs a session on m with zero-filled inputs; returns its result (never a signal). */
static opara_result create_and_run(opara_runtime* rt, const opara_model* m, opara_backend backend) {
    opara_session_desc d;
    opara_session* s = NULL;
    opara_tensor_info info = {0};
    opara_tensor in;
    opara_result r;
    void* data;
    memset(&d, 0, sizeof d);
    d.backend = backend;
    d.threads = 2;
    if ((r = opara_session_create(rt, m, &d, &s)) != OPARA_OK) return r;
    opara_session_input_info(s, 0, &info);
    data = calloc((size_t)numel(info.rank, info.dims) + 1, 8);
    memset(&in, 0, sizeof in);
    in.name = info.name;
    in.dtype = info.dtype;
    in.rank = info.rank;
    memcpy(in.dims, info.dims, sizeof in.dims);
    in.data = data;
    r = opara_session_run(s, &in, 1, NULL, 0);
    free(data);
    opara_session_destroy(s);
    return r;
}

OT_TEST(zero_sized_input_is_refused_for_every_operator) {
    static const char* const ops[] = { /* every operator of the op table */
#define TABLE_OP(id, name, ...) name,
        OPARA__OPS(TABLE_OP)
#undef TABLE_OP
    };
    /* a zero in each position of a 4-D input, of a 2-D one for the matrix ops, a 3-D one for the RNNs */
    static const int64_t shapes4[4][4] = {{0, 3, 4, 4}, {1, 0, 4, 4}, {1, 3, 0, 4}, {1, 3, 4, 0}};
    static const int64_t shapes2[2][2] = {{0, 4}, {3, 0}};
    static const int64_t shapes3[3][3] = {{0, 2, 4}, {3, 0, 4}, {3, 2, 0}}; /* LSTM, GRU, RNN: [seq, batch, input] */
    opara_runtime* rt;
    char why[256], detail[1024];
    int cuda = 0;
    size_t i, k;
    unsigned refused = 0, tried = 0;
    REQUIRE(opara_runtime_create(NULL, &rt) == OPARA_OK);
    cuda = cuda_usable(why, sizeof why);
    if (!cuda) OT_LOG("CUDA backend not checked: %s", why);
    for (i = 0; i < sizeof ops / sizeof ops[0]; ++i) {
        int is_matrix = !strcmp(ops[i], "Gemm") || !strcmp(ops[i], "MatMul");
        int is_seq = !strcmp(ops[i], "LSTM") || !strcmp(ops[i], "GRU") || !strcmp(ops[i], "RNN");
        size_t n_shapes = is_matrix ? 2 : is_seq ? 3 : 4;
        for (k = 0; k < n_shapes; ++k) {
            opara_builder* b;
            opara_model* m = NULL;
            const int64_t* xd = is_matrix ? shapes2[k] : is_seq ? shapes3[k] : shapes4[k];
            int32_t xr = is_matrix ? 2 : is_seq ? 3 : 4;
            opara_result r;
            REQUIRE(opara_builder_create(rt, &b) == OPARA_OK);
            opara_builder_add_input(b, "x", OPARA_DTYPE_F32, xr, xd);
            add_one_op(b, ops[i], xr, xd);
            r = opara_builder_finish(b, &m);
            snprintf(detail, sizeof detail, "%s", opara_builder_last_error(b));
            opara_builder_destroy(b);
            ++tried;
            if (r == OPARA_OK) {
                /* got through: the session must still be safe and say why it cannot run, if it cannot */
                opara_result rc = create_and_run(rt, m, OPARA_BACKEND_CPU);
                OT_LOG("%s with x dim %zu = 0 loaded; CPU session: %s", ops[i], k, opara_result_string(rc));
                if (cuda) (void)create_and_run(rt, m, OPARA_BACKEND_CUDA);
                opara_model_destroy(m);
                CHECK(r == OPARA_ERR_SHAPE); /* the documented choice: refused at load */
                continue;
            }
            if (r == OPARA_ERR_BAD_DTYPE && !strcmp(ops[i], "Where")) continue; /* x is not a bool condition */
            ++refused;
            CHECK_EQ(r, OPARA_ERR_SHAPE);
            if (r != OPARA_ERR_SHAPE) OT_LOG("%s, dim %zu: %s", ops[i], k, detail);
            if (r == OPARA_ERR_SHAPE) {
                const char* msg = detail;
                char want[32];
                snprintf(want, sizeof want, "dim %zu is 0", k);
                CHECK(strstr(msg, "'x'") != NULL);
                CHECK(strstr(msg, want) != NULL);
                if (!strstr(msg, want)) OT_LOG("%s: %s", ops[i], msg);
            }
        }
    }
    OT_LOG("%u one-op models with a zero-sized input, %u refused with OPARA_ERR_SHAPE", tried, refused);
    opara_runtime_destroy(rt);
}

/* Slice to an empty range from a non-empty input: the node and its output are named. */
OT_TEST(op_producing_an_empty_tensor_is_refused) {
    static const int64_t xd[2] = {2, 4}, st[1] = {2}, en[1] = {2}, ax[1] = {1};
    const char *ins[1] = {"x"}, *outs[1] = {"y"};
    opara_attr a[3];
    opara_runtime* rt;
    opara_builder* b;
    opara_model* m = NULL;
    opara_result r;
    REQUIRE(opara_runtime_create(NULL, &rt) == OPARA_OK);
    REQUIRE(opara_builder_create(rt, &b) == OPARA_OK);
    a[0] = attr_ints("starts", st, 1);
    a[1] = attr_ints("ends", en, 1);
    a[2] = attr_ints("axes", ax, 1);
    opara_builder_add_input(b, "x", OPARA_DTYPE_F32, 2, xd);
    opara_builder_add_node(b, "Slice", "empty_slice", 1, ins, 1, outs, 3, a);
    opara_builder_add_output(b, "y");
    r = opara_builder_finish(b, &m);
    CHECK_EQ(r, OPARA_ERR_SHAPE);
    if (r == OPARA_OK) {
        CHECK_EQ(create_and_run(rt, m, OPARA_BACKEND_CPU), OPARA_ERR_SHAPE);
        opara_model_destroy(m);
    } else {
        CHECK(strstr(opara_builder_last_error(b), "empty_slice") != NULL);
        CHECK(strstr(opara_builder_last_error(b), "[2, 0]") != NULL);
    }
    opara_builder_destroy(b);
    opara_runtime_destroy(rt);
}

/* Concat of x with a constant of zero elements: the output would not be empty, so the constant is
   what is refused (found by tests/fuzz/fuzz_run.c: the kernel offset the constant's NULL data). */
OT_TEST(empty_constant_input_is_refused) {
    static const int64_t xd[2] = {2, 4}, cd[2] = {2, 0};
    const char *ins[2] = {"x", "empty"}, *outs[1] = {"y"};
    opara_attr axis = attr_int("axis", 1);
    opara_runtime* rt;
    opara_builder* b;
    opara_model* m = NULL;
    opara_result r;
    REQUIRE(opara_runtime_create(NULL, &rt) == OPARA_OK);
    REQUIRE(opara_builder_create(rt, &b) == OPARA_OK);
    opara_builder_add_input(b, "x", OPARA_DTYPE_F32, 2, xd);
    opara_builder_add_constant(b, "empty", OPARA_DTYPE_F32, 2, cd, NULL, 0);
    opara_builder_add_node(b, "Concat", "cat", 2, ins, 1, outs, 1, &axis);
    opara_builder_add_output(b, "y");
    r = opara_builder_finish(b, &m);
    CHECK_EQ(r, OPARA_ERR_SHAPE);
    if (r == OPARA_OK) opara_model_destroy(m);
    else {
        CHECK(strstr(opara_builder_last_error(b), "'cat'") != NULL);
        CHECK(strstr(opara_builder_last_error(b), "'empty'") != NULL);
    }
    opara_builder_destroy(b);
    opara_runtime_destroy(rt);
}

/* The call: a Conv model from ONNX with the input overridden to batch 0. */
OT_TEST(onnx_batch_zero_override_is_refused_at_load) {
    const char* path = "build/zoo/squeezenet.onnx";
    opara_runtime* rt;
    opara_model* m = NULL;
    opara_tensor_info info = {0};
    opara_onnx_options o;
    char shape[160], name[128];
    const char* shapes[1];
    opara_result r;
    FILE* f = fopen(path, "rb");
    if (!f) SKIP("%s missing (make zoo)", path);
    fclose(f);
    REQUIRE(opara_runtime_create(NULL, &rt) == OPARA_OK);
    REQUIRE(opara_model_load_onnx_file(rt, path, NULL, &m) == OPARA_OK);
    REQUIRE(opara_model_input_info(m, 0, &info) == OPARA_OK);
    snprintf(name, sizeof name, "%s", info.name);
    snprintf(shape, sizeof shape, "%s=0,3,224,224", name);
    opara_model_destroy(m);
    m = NULL;
    memset(&o, 0, sizeof o);
    shapes[0] = shape;
    o.input_shapes = shapes;
    o.n_input_shapes = 1;
    r = opara_model_load_onnx_file(rt, path, &o, &m);
    CHECK_EQ(r, OPARA_ERR_SHAPE);
    if (r == OPARA_OK) {
        CHECK_EQ(create_and_run(rt, m, OPARA_BACKEND_CPU), OPARA_ERR_SHAPE);
        opara_model_destroy(m);
    } else {
        OT_LOG("%s", opara_runtime_last_error(rt));
        CHECK(strstr(opara_runtime_last_error(rt), name) != NULL);
    }
    opara_runtime_destroy(rt);
}

/* ---- NaN and infinities -------------------------------------------------------------------------- */

#define NAN_F ((float)NAN)
#define INF_F ((float)INFINITY)

/* got against want element by element: NaN where want is NaN, else within tol. */
static void check_values(opara_test* T, const char* what, const float* got, const float* want, int64_t n, float tol) {
    int64_t i;
    int bad = 0;
    for (i = 0; i < n; ++i) {
        int ok = isnan(want[i]) ? isnan(got[i]) : (isinf(want[i]) ? got[i] == want[i] : fabsf(got[i] - want[i]) <= tol);
        if (!ok && bad++ < 4) OT_LOG("%s: element %lld is %g, ONNX gives %g", what, (long long)i, got[i], want[i]);
    }
    CHECK(bad == 0);
}

/* Runs the one-input, one-output model m on backend with x; the output is copied to y (count n). */
static opara_result run_model(opara_runtime* rt, const opara_model* m, opara_backend backend, const float* x, float* y,
                              int64_t n) {
    opara_session_desc d;
    opara_session* s = NULL;
    opara_tensor_info info = {0};
    opara_tensor in;
    opara_result r;
    const void* out;
    memset(&d, 0, sizeof d);
    d.backend = backend;
    d.threads = 2;
    if ((r = opara_session_create(rt, m, &d, &s)) != OPARA_OK) return r;
    opara_session_input_info(s, 0, &info);
    memset(&in, 0, sizeof in);
    in.name = info.name;
    in.dtype = OPARA_DTYPE_F32;
    in.rank = info.rank;
    memcpy(in.dims, info.dims, sizeof in.dims);
    in.data = (void*)x;
    r = opara_session_run(s, &in, 1, NULL, 0);
    out = opara_session_output_data(s, 0);
    if (r == OPARA_OK && out) memcpy(y, out, (size_t)n * sizeof(float));
    opara_session_destroy(s);
    return r;
}

/* x[1, 1, 2, 4] through `op` (with attrs, or a 1x1 Conv / Gemm with weight 1 and the op after it
   when `after` names one: the fused epilogues) on every backend we have; y against want. */
static void check_op(opara_test* T, const char* op, uint32_t n_attr, const opara_attr* attrs, const float* x,
                     const float* want) {
    static const int64_t xd[4] = {1, 1, 2, 4};
    const char *ins[1] = {"x"}, *outs[1] = {"y"};
    opara_runtime* rt;
    opara_builder* b;
    opara_model* m = NULL;
    float y[8];
    char why[256], what[64];
    int backend;
    REQUIRE(opara_runtime_create(NULL, &rt) == OPARA_OK);
    REQUIRE(opara_builder_create(rt, &b) == OPARA_OK);
    opara_builder_add_input(b, "x", OPARA_DTYPE_F32, 4, xd);
    opara_builder_add_node(b, op, "n", 1, ins, 1, outs, n_attr, attrs);
    opara_builder_add_output(b, "y");
    REQUIRE(opara_builder_finish(b, &m) == OPARA_OK);
    opara_builder_destroy(b);
    for (backend = 0; backend < 2; ++backend) {
        if (backend == 1 && !cuda_usable(why, sizeof why)) {
            OT_LOG("%s: CUDA backend not checked: %s", op, why);
            break;
        }
        memset(y, 0, sizeof y);
        snprintf(what, sizeof what, "%s (%s)", op, backend ? "CUDA" : "CPU");
        CHECK_EQ(run_model(rt, m, backend ? OPARA_BACKEND_CUDA : OPARA_BACKEND_CPU, x, y, 8), OPARA_OK);
        check_values(T, what, y, want, 8, 1e-6f);
    }
    opara_model_destroy(m);
    opara_runtime_destroy(rt);
}

static const float edge_x[8] = {NAN, INFINITY, -INFINITY, -1.0f, 0.0f, 2.0f, -3.0f, 0.5f};

OT_TEST(relu_propagates_nan) {
    const float want[8] = {NAN_F, INF_F, 0.0f, 0.0f, 0.0f, 2.0f, 0.0f, 0.5f};
    float x[8];
    int i;
    check_op(T, "Relu", 0, NULL, edge_x, want);
    /* every lane of the SIMD body */
    for (i = 0; i < 8; ++i) x[i] = NAN_F;
    {
        const float all_nan[8] = {NAN_F, NAN_F, NAN_F, NAN_F, NAN_F, NAN_F, NAN_F, NAN_F};
        check_op(T, "Relu", 0, NULL, x, all_nan);
    }
}

OT_TEST(leaky_relu_clip_hard_sigmoid_hard_swish_propagate_nan) {
    opara_attr a[2];
    {
        const float want[8] = {NAN_F, INF_F, -INF_F, -0.1f, 0.0f, 2.0f, -0.3f, 0.5f};
        a[0] = attr_float("alpha", 0.1f);
        check_op(T, "LeakyRelu", 1, a, edge_x, want);
    }
    {
        const float want[8] = {NAN_F, 1.0f, -0.5f, -0.5f, 0.0f, 1.0f, -0.5f, 0.5f};
        a[0] = attr_float("min", -0.5f);
        a[1] = attr_float("max", 1.0f);
        check_op(T, "Clip", 2, a, edge_x, want);
    }
    {
        const float want[8] = {NAN_F, 1.0f, 0.0f, 0.3f, 0.5f, 0.9f, 0.0f, 0.6f};
        a[0] = attr_float("alpha", 0.2f);
        a[1] = attr_float("beta", 0.5f);
        check_op(T, "HardSigmoid", 2, a, edge_x, want);
    }
    {
        /* x * clamp(x / 6 + 1/2, 0, 1); -inf * 0 is NaN in ONNX Runtime's formula too, so -inf is left out */
        const float x[8] = {NAN, INFINITY, 1.0f, -1.0f, 0.0f, 2.0f, -3.0f, 3.0f};
        const float want[8] = {NAN_F, INF_F, 1.0f * (1.0f / 6.0f + 0.5f), -1.0f * (0.5f - 1.0f / 6.0f), 0.0f,
                               2.0f * (2.0f / 6.0f + 0.5f), 0.0f, 3.0f};
        check_op(T, "HardSwish", 0, NULL, x, want);
    }
}

OT_TEST(softmax_propagates_nan) {
    /* rows of 4 along the last axis: the row holding NaN is NaN throughout, the other is untouched */
    const float x[8] = {1.0f, NAN, 0.0f, 2.0f, 0.0f, 0.0f, 0.0f, 0.0f};
    const float want[8] = {NAN_F, NAN_F, NAN_F, NAN_F, 0.25f, 0.25f, 0.25f, 0.25f};
    opara_attr a = attr_int("axis", -1);
    check_op(T, "Softmax", 1, &a, x, want);
}

/* A model x -> op(x) -> y with y of n_out elements, on each backend, against want. */
static void check_model(opara_test* T, opara_model* m, opara_runtime* rt, const char* what, const float* x,
                        const float* want, int64_t n_out) {
    float* y = (float*)calloc((size_t)n_out, sizeof(float));
    char why[256], label[96];
    int backend;
    for (backend = 0; backend < 2; ++backend) {
        if (backend == 1 && !cuda_usable(why, sizeof why)) {
            OT_LOG("%s: CUDA backend not checked: %s", what, why);
            break;
        }
        snprintf(label, sizeof label, "%s (%s)", what, backend ? "CUDA" : "CPU");
        memset(y, 0, (size_t)n_out * sizeof(float));
        CHECK_EQ(run_model(rt, m, backend ? OPARA_BACKEND_CUDA : OPARA_BACKEND_CPU, x, y, n_out), OPARA_OK);
        check_values(T, label, y, want, n_out, 1e-5f);
    }
    free(y);
}

OT_TEST(reductions_propagate_nan) {
    static const int64_t xd[4] = {1, 2, 2, 2}, ax[2] = {2, 3};
    const float x[8] = {1.0f, NAN, 3.0f, 4.0f, 1.0f, 2.0f, 3.0f, 6.0f};
    const float want[5][2] = {{NAN_F, 3.0f}, {NAN_F, 3.0f}, {NAN_F, 12.0f}, {NAN_F, 6.0f}, {NAN_F, 1.0f}};
    const char* names[5] = {"GlobalAveragePool", "ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin"};
    const char *ins[1] = {"x"}, *outs[1] = {"y"};
    opara_runtime* rt;
    int i;
    REQUIRE(opara_runtime_create(NULL, &rt) == OPARA_OK);
    for (i = 0; i < 5; ++i) {
        opara_builder* b;
        opara_model* m = NULL;
        opara_attr a = attr_ints("axes", ax, 2);
        REQUIRE(opara_builder_create(rt, &b) == OPARA_OK);
        opara_builder_add_input(b, "x", OPARA_DTYPE_F32, 4, xd);
        opara_builder_add_node(b, names[i], "n", 1, ins, 1, outs, i ? 1 : 0, &a);
        opara_builder_add_output(b, "y");
        REQUIRE(opara_builder_finish(b, &m) == OPARA_OK);
        opara_builder_destroy(b);
        check_model(T, m, rt, names[i], x, want[i], 2);
        opara_model_destroy(m);
    }
    opara_runtime_destroy(rt);
}

/* Conv (1x1, weight 1, bias 0) + Relu and Gemm (identity) + Relu: the fused epilogues. */
OT_TEST(fused_conv_relu_and_gemm_relu_propagate_nan) {
    static const int64_t xd[4] = {1, 1, 2, 4}, wd[4] = {1, 1, 1, 1}, bd[1] = {1}, gd[2] = {2, 4}, id[2] = {4, 4};
    static const float w1[1] = {1.0f}, b0[1] = {0.0f};
    const float want[8] = {NAN_F, INF_F, 0.0f, 0.0f, 0.0f, 2.0f, 0.0f, 0.5f};
    float eye[16] = {0};
    const char *cin[3] = {"x", "w", "b"}, *cout[1] = {"t"}, *rin[1] = {"t"}, *rout[1] = {"y"};
    opara_runtime* rt;
    opara_builder* b;
    opara_model* m = NULL;
    int i;
    for (i = 0; i < 4; ++i) eye[i * 5] = 1.0f;
    REQUIRE(opara_runtime_create(NULL, &rt) == OPARA_OK);
    REQUIRE(opara_builder_create(rt, &b) == OPARA_OK);
    opara_builder_add_input(b, "x", OPARA_DTYPE_F32, 4, xd);
    opara_builder_add_constant(b, "w", OPARA_DTYPE_F32, 4, wd, w1, sizeof w1);
    opara_builder_add_constant(b, "b", OPARA_DTYPE_F32, 1, bd, b0, sizeof b0);
    opara_builder_add_node(b, "Conv", "conv", 3, cin, 1, cout, 0, NULL);
    opara_builder_add_node(b, "Relu", "relu", 1, rin, 1, rout, 0, NULL);
    opara_builder_add_output(b, "y");
    REQUIRE(opara_builder_finish(b, &m) == OPARA_OK);
    opara_builder_destroy(b);
    check_model(T, m, rt, "Conv+Relu", edge_x, want, 8);
    opara_model_destroy(m);
    m = NULL;
    {
        /* the NaN row spreads through the product: row 0 of x @ I is {NaN, NaN, NaN, NaN} */
        const float want_gemm[8] = {NAN_F, NAN_F, NAN_F, NAN_F, 0.0f, 2.0f, 0.0f, 0.5f};
        const char* gin[2] = {"x", "w"};
        REQUIRE(opara_builder_create(rt, &b) == OPARA_OK);
        opara_builder_add_input(b, "x", OPARA_DTYPE_F32, 2, gd);
        opara_builder_add_constant(b, "w", OPARA_DTYPE_F32, 2, id, eye, sizeof eye);
        opara_builder_add_node(b, "Gemm", "gemm", 2, gin, 1, cout, 0, NULL);
        opara_builder_add_node(b, "Relu", "relu", 1, rin, 1, rout, 0, NULL);
        opara_builder_add_output(b, "y");
        REQUIRE(opara_builder_finish(b, &m) == OPARA_OK);
        opara_builder_destroy(b);
        check_model(T, m, rt, "Gemm+Relu", edge_x, want_gemm, 8);
        opara_model_destroy(m);
    }
    opara_runtime_destroy(rt);
}

/* MaxPool reference: a naive loop over each window, a NaN anywhere in it giving NaN. */
static void maxpool_reference(const float* x, int C, int H, int W, int k, int s, int p, float* y, int OH, int OW) {
    int c, oh, ow, r, q;
    for (c = 0; c < C; ++c)
        for (oh = 0; oh < OH; ++oh)
            for (ow = 0; ow < OW; ++ow) {
                float best = -INF_F;
                int saw_nan = 0;
                for (r = 0; r < k; ++r)
                    for (q = 0; q < k; ++q) {
                        int ih = oh * s - p + r, iw = ow * s - p + q;
                        float v;
                        if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                        v = x[(c * H + ih) * W + iw];
                        if (isnan(v)) saw_nan = 1;
                        else if (v > best) best = v;
                    }
                y[(c * OH + oh) * OW + ow] = saw_nan ? NAN_F : best;
            }
}

/* MaxPool kernel k, stride s, pads p over [1, 2, 9, 21] holding NaN and +-Inf at several window
   positions (first, middle, last tap; SIMD lanes and the scalar tail): the CPU's direct, flat
   and vectorized paths and the CUDA kernel. */
OT_TEST(max_pool_propagates_nan_in_every_window_position) {
    enum { C = 2, H = 9, W = 21 };
    static const int cfg[4][3] = {{3, 1, 1}, {3, 2, 1}, {2, 2, 0}, {3, 1, 0}};
    float x[C * H * W];
    opara_runtime* rt;
    int i, j;
    for (i = 0; i < C * H * W; ++i) x[i] = (float)((i * 37) % 101) * 0.25f - 10.0f;
    x[0] = NAN_F;                 /* corner: first tap */
    x[1 * W + 9] = NAN_F;         /* interior, a middle tap of vector lanes */
    x[4 * W + 20] = NAN_F;        /* last column: scalar tail */
    x[6 * W + 5] = INF_F;
    x[7 * W + 13] = -INF_F;
    x[H * W + 3 * W + 7] = NAN_F; /* channel 1 */
    x[H * W + 8 * W + 16] = INF_F;
    REQUIRE(opara_runtime_create(NULL, &rt) == OPARA_OK);
    for (j = 0; j < 4; ++j) {
        int k = cfg[j][0], s = cfg[j][1], p = cfg[j][2];
        int OH = (H + 2 * p - k) / s + 1, OW = (W + 2 * p - k) / s + 1;
        int64_t xd[4] = {1, C, H, W}, ks[2], ss[2], ps[4];
        float* want = (float*)calloc((size_t)(C * OH * OW), sizeof(float));
        const char *ins[1] = {"x"}, *outs[1] = {"y"};
        opara_attr a[3];
        opara_builder* b;
        opara_model* m = NULL;
        char what[64];
        ks[0] = ks[1] = k;
        ss[0] = ss[1] = s;
        ps[0] = ps[1] = ps[2] = ps[3] = p;
        a[0] = attr_ints("kernel_shape", ks, 2);
        a[1] = attr_ints("strides", ss, 2);
        a[2] = attr_ints("pads", ps, 4);
        maxpool_reference(x, C, H, W, k, s, p, want, OH, OW);
        REQUIRE(opara_builder_create(rt, &b) == OPARA_OK);
        opara_builder_add_input(b, "x", OPARA_DTYPE_F32, 4, xd);
        opara_builder_add_node(b, "MaxPool", "pool", 1, ins, 1, outs, 3, a);
        opara_builder_add_output(b, "y");
        REQUIRE(opara_builder_finish(b, &m) == OPARA_OK);
        opara_builder_destroy(b);
        snprintf(what, sizeof what, "MaxPool k%d s%d p%d", k, s, p);
        check_model(T, m, rt, what, x, want, C * OH * OW);
        opara_model_destroy(m);
        free(want);
    }
    opara_runtime_destroy(rt);
}

/* ---- Gather index out of range ------------------------------------------------------------------- */

/* The gather/scatter operators and ReverseSequence: an index (or a sequence length) out of range is a
   run-time data error, OPARA_ERR_BAD_INDEX, naming the node and the value; nothing is read or written
   out of bounds (the sanitizer build checks that). x is [4, 2] f32; idx (i64) and upd (f32) as given. */
static void check_index_error(opara_test* T, const char* op, int32_t idx_rank, const int64_t* idx_dims, const int64_t* idx,
                              int with_updates, uint32_t n_attrs, const opara_attr* attrs, const char* want) {
    static const int64_t xd[2] = {4, 2};
    static const float x[8] = {0, 1, 2, 3, 4, 5, 6, 7}, upd[8] = {9, 9, 9, 9, 9, 9, 9, 9};
    const char *ins[3] = {"x", "idx", "upd"}, *outs[1] = {"y"};
    opara_runtime* rt;
    opara_builder* b;
    opara_model* m = NULL;
    opara_session_desc d;
    opara_session* s = NULL;
    opara_tensor in[2];
    opara_result r;
    int64_t n = numel(idx_rank, idx_dims);
    REQUIRE(opara_runtime_create(NULL, &rt) == OPARA_OK);
    REQUIRE(opara_builder_create(rt, &b) == OPARA_OK);
    opara_builder_add_input(b, "x", OPARA_DTYPE_F32, 2, xd);
    opara_builder_add_input(b, "idx", OPARA_DTYPE_I64, idx_rank, idx_dims);
    if (with_updates) {
        const int64_t* ud = with_updates == 1 ? idx_dims : xd + 1; /* ScatterND: one row of x per tuple */
        int64_t tuples[2] = {idx_dims[0], 2};
        if (with_updates == 2) ud = tuples;
        opara_builder_add_constant(b, "upd", OPARA_DTYPE_F32, with_updates == 1 ? idx_rank : 2, ud, upd,
                                   (size_t)numel(with_updates == 1 ? idx_rank : 2, ud) * 4);
    }
    opara_builder_add_node(b, op, "the_op", with_updates ? 3 : 2, ins, 1, outs, n_attrs, attrs);
    opara_builder_add_output(b, "y");
    r = opara_builder_finish(b, &m);
    if (r != OPARA_OK) OT_LOG("%s: %s", op, opara_builder_last_error(b));
    REQUIRE(r == OPARA_OK);
    opara_builder_destroy(b);
    memset(&d, 0, sizeof d);
    d.backend = OPARA_BACKEND_CPU;
    d.threads = 2;
    REQUIRE(opara_session_create(rt, m, &d, &s) == OPARA_OK);
    memset(in, 0, sizeof in);
    in[0].name = "x", in[0].dtype = OPARA_DTYPE_F32, in[0].rank = 2, in[0].dims[0] = 4, in[0].dims[1] = 2;
    in[0].data = (void*)x;
    in[1].name = "idx", in[1].dtype = OPARA_DTYPE_I64, in[1].rank = idx_rank, in[1].data = (void*)idx;
    memcpy(in[1].dims, idx_dims, (size_t)idx_rank * sizeof idx_dims[0]);
    r = opara_session_run(s, in, 2, NULL, 0);
    OT_LOG("%s (%lld indices): %s", op, (long long)n, opara_session_last_error(s));
    CHECK_EQ(r, OPARA_ERR_BAD_INDEX);
    CHECK(strstr(opara_session_last_error(s), "'the_op'") != NULL);
    CHECK(strstr(opara_session_last_error(s), want) != NULL);
    opara_session_destroy(s);
    opara_model_destroy(m);
    opara_runtime_destroy(rt);
}

OT_TEST(gather_index_out_of_range_names_node_index_and_axis_size) {
    static const int64_t id[1] = {3}, idx[3] = {1, 7, -2};
    check_index_error(T, "Gather", 1, id, idx, 0, 0, NULL, "index 7 (indices element 1) is out of range for axis 0 of size 4");
}

OT_TEST(gather_scatter_index_out_of_range_is_a_data_error) {
    static const int64_t d22[2] = {2, 2}, d21[2] = {2, 1}, d2[1] = {2};
    static const int64_t past_end[4] = {0, 1, 4, -1}, neg[4] = {0, -5, 1, 1}, tuple[2] = {1, -9}, lens[2] = {2, 5};
    opara_attr a[2];
    a[0] = attr_int("axis", 0);
    check_index_error(T, "GatherElements", 2, d22, past_end, 0, 1, a, "index 4 (indices element 2) is out of range for axis 0 of size 4");
    check_index_error(T, "ScatterElements", 2, d22, neg, 1, 1, a, "index -5 (indices element 1)");
    check_index_error(T, "Scatter", 2, d22, past_end, 1, 1, a, "index 4");
    check_index_error(T, "GatherND", 2, d21, tuple, 0, 0, a, "index tuple 1: element 0 = -9 is out of range for data dim 0 of size 4");
    check_index_error(T, "ScatterND", 2, d21, tuple, 2, 0, a, "index tuple 1");
    a[0] = attr_int("batch_axis", 1);
    a[1] = attr_int("time_axis", 0); /* x [4, 2] is [time, batch]: a length of 5 > 4 steps */
    check_index_error(T, "ReverseSequence", 1, d2, lens, 0, 2, a, "sequence_lens[1] = 5 is outside [0, 4]");
}

static const opara_test_case tests[] = {
    OT_CASE(zero_sized_input_is_refused_for_every_operator),
    OT_CASE(gather_scatter_index_out_of_range_is_a_data_error),
    OT_CASE(op_producing_an_empty_tensor_is_refused),
    OT_CASE(empty_constant_input_is_refused),
    OT_CASE(onnx_batch_zero_override_is_refused_at_load),
    OT_CASE(relu_propagates_nan),
    OT_CASE(leaky_relu_clip_hard_sigmoid_hard_swish_propagate_nan),
    OT_CASE(softmax_propagates_nan),
    OT_CASE(reductions_propagate_nan),
    OT_CASE(fused_conv_relu_and_gemm_relu_propagate_nan),
    OT_CASE(max_pool_propagates_nan_in_every_window_position),
    OT_CASE(gather_index_out_of_range_names_node_index_and_axis_size),
};

int main(int argc, char** argv) { return opara_test_main(argc, argv, tests, OT_COUNT(tests)); }
