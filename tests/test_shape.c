/* Shape and dtype inference against hand-derived ONNX examples (most from the ONNX operator
   docs and the shapes of the ONNX backend test cases named in the comments), Python's own
   slice semantics for Slice, and brute-force window counting for Conv. */
#define OPARA_IMPLEMENTATION
#include "opara.h"
#include "opara_test.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static opara_runtime* g_rt;

/* A one-node graph under construction. */
typedef struct one {
    opara__graph g;
    int32_t node;
    int32_t outs[4];
    uint32_t n_outs;
    opara__shape* shapes;
    opara_dtype* dtypes;
} one;

static opara__shape shp(int n, ...) {
    opara__shape s;
    va_list ap;
    int i;
    memset(&s, 0, sizeof s);
    s.ndim = n;
    va_start(ap, n);
    for (i = 0; i < n; ++i) s.dims[i] = va_arg(ap, int);
    va_end(ap);
    return s;
}

static void one_init(one* t) {
    memset(t, 0, sizeof *t);
    opara__graph_init(&t->g, g_rt);
}

static void one_free(one* t) {
    opara__free(g_rt, t->shapes);
    opara__free(g_rt, t->dtypes);
    opara__graph_free(&t->g);
}

/* Adds an input named "in<k>" with the given shape and dtype; returns its index. */
static int32_t one_input(one* t, opara__shape s, opara_dtype dt) {
    char name[16];
    int32_t v;
    sprintf(name, "in%u", t->g.n_values);
    v = opara__graph_add_value(&t->g, name, dt, &s);
    opara__graph_add_input(&t->g, v);
    return v;
}

/* Adds the node with n_in inputs (-1 = omitted) and n_out outputs. */
static void one_node(one* t, opara__op op, uint32_t n_in, const int32_t* in, uint32_t n_out) {
    uint32_t k;
    for (k = 0; k < n_out; ++k) {
        char name[16];
        sprintf(name, "out%u", k);
        t->outs[k] = opara__graph_add_value(&t->g, name, OPARA_DTYPE_UNDEFINED, NULL);
        opara__graph_add_output(&t->g, t->outs[k]);
    }
    t->n_outs = n_out;
    t->node = opara__graph_add_node(&t->g, op, "n0", n_in, in, n_out, t->outs);
}

static opara_result one_infer(one* t, int64_t batch) {
    opara_result r = opara__graph_finalize(&t->g);
    if (r != OPARA_OK) return r;
    t->shapes = (opara__shape*)opara__calloc(g_rt, t->g.n_values, sizeof(opara__shape));
    t->dtypes = (opara_dtype*)opara__calloc(g_rt, t->g.n_values, sizeof(opara_dtype));
    r = opara__infer_dtypes(g_rt, &t->g, t->dtypes);
    if (r != OPARA_OK) return r;
    return opara__infer_shapes(g_rt, &t->g, batch, t->shapes);
}

static int same_shape(const opara__shape* a, const opara__shape* b) {
    int i;
    if (a->ndim != b->ndim) return 0;
    for (i = 0; i < a->ndim; ++i)
        if (a->dims[i] != b->dims[i]) return 0;
    return 1;
}

static void check_shape(opara_test* T, const char* file, int line, const opara__shape* got, opara__shape want) {
    char a[128], b[128];
    if (!same_shape(got, &want))
        ot__fail_at(T, file, line, "shape %s, expected %s", opara__shape_str(got, a, sizeof a),
                    opara__shape_str(&want, b, sizeof b));
}
#define CHECK_SHAPE(got, want) check_shape(T, __FILE__, __LINE__, (got), (want))

/* Unary/attribute-driven case: one f32 input of shape x, node op with attrs set by the caller. */
#define F32 OPARA_DTYPE_F32

static void set_ints(one* t, const char* name, uint32_t n, ...) {
    int64_t v[16];
    va_list ap;
    uint32_t i;
    va_start(ap, n);
    for (i = 0; i < n; ++i) v[i] = va_arg(ap, int);
    va_end(ap);
    opara__node_set_ints(&t->g, t->node, name, v, n);
}

/* Runs a node over inputs of the given shapes; the attributes are set by `attrs`. */
typedef void (*attrs_fn)(one* t);

static opara_result run(one* t, opara__op op, uint32_t n_in, const opara__shape* ins, uint32_t n_out, attrs_fn attrs) {
    int32_t idx[8];
    uint32_t k;
    one_init(t);
    for (k = 0; k < n_in; ++k) {
        int seq_lens = (op == OPARA__OP_LSTM || op == OPARA__OP_GRU || op == OPARA__OP_RNN) && k == 4;
        opara_dtype dt = (op == OPARA__OP_GATHER || op == OPARA__OP_MAX_UNPOOL) && k == 1 ? OPARA_DTYPE_I64 : op == OPARA__OP_WHERE && k == 0 ? OPARA_DTYPE_BOOL :
                         seq_lens ? OPARA_DTYPE_I32 : F32;
        if (k == 1 && (op == OPARA__OP_GATHER_ELEMENTS || op == OPARA__OP_SCATTER_ELEMENTS || op == OPARA__OP_SCATTER ||
                       op == OPARA__OP_GATHER_ND || op == OPARA__OP_SCATTER_ND || op == OPARA__OP_REVERSE_SEQUENCE))
            dt = OPARA_DTYPE_I64; /* indices, sequence_lens */
        idx[k] = ins[k].ndim < 0 ? -1 : one_input(t, ins[k], dt);
    }
    one_node(t, op, n_in, idx, n_out);
    if (attrs) attrs(t);
    return one_infer(t, 1);
}

/* Shorthand: expect output 0 of op over inputs to have shape want. */
static void expect1(opara_test* T, int line, opara__op op, uint32_t n_in, const opara__shape* ins, attrs_fn attrs,
                    opara__shape want) {
    one t;
    opara_result r = run(&t, op, n_in, ins, 1, attrs);
    if (r != OPARA_OK) ot__fail_at(T, __FILE__, line, "%s failed: %s", opara__op_name(op), opara_runtime_last_error(g_rt));
    else check_shape(T, __FILE__, line, &t.shapes[t.outs[0]], want);
    one_free(&t);
}

static void expect_fail(opara_test* T, int line, opara__op op, uint32_t n_in, const opara__shape* ins, attrs_fn attrs) {
    one t;
    opara_result r = run(&t, op, n_in, ins, 1, attrs);
    if (r == OPARA_OK) ot__fail_at(T, __FILE__, line, "%s succeeded, expected a failure", opara__op_name(op));
    else if (!strstr(opara_runtime_last_error(g_rt), "'n0'") || !strstr(opara_runtime_last_error(g_rt), opara__op_name(op)))
        ot__fail_at(T, __FILE__, line, "message does not name the node and op: %s", opara_runtime_last_error(g_rt));
    one_free(&t);
}

#define EXPECT1(op, ins, attrs, want) expect1(T, __LINE__, op, (uint32_t)(sizeof ins / sizeof ins[0]), ins, attrs, want)
#define EXPECT_FAIL(op, ins, attrs) expect_fail(T, __LINE__, op, (uint32_t)(sizeof ins / sizeof ins[0]), ins, attrs)

/* ---- convolution ----------------------------------------------------------------------------- */

static void a_pads1(one* t) { set_ints(t, "pads", 4, 1, 1, 1, 1); }
static void a_s2_asym(one* t) { set_ints(t, "strides", 2, 2, 2); set_ints(t, "pads", 4, 1, 0, 1, 0); }
static void a_same_lower_s2(one* t) { set_ints(t, "strides", 2, 2, 2); opara__node_set_string(&t->g, t->node, "auto_pad", "SAME_LOWER"); }
static void a_dil2(one* t) { set_ints(t, "dilations", 2, 2, 2); }
static void a_group2(one* t) { opara__node_set_int(&t->g, t->node, "group", 2); }
static void a_bad_kernel(one* t) { set_ints(t, "kernel_shape", 2, 5, 5); }

OT_TEST(conv_follows_onnx) {
    opara__shape a[] = {shp(4, 1, 1, 5, 5), shp(4, 1, 1, 3, 3)};
    opara__shape b[] = {shp(4, 1, 1, 7, 5), shp(4, 1, 1, 3, 3)};
    opara__shape c[] = {shp(4, 1, 1, 7, 7), shp(4, 1, 1, 3, 3)};
    opara__shape d[] = {shp(4, 2, 4, 5, 5), shp(4, 8, 2, 3, 3), shp(1, 8)};
    opara__shape e[] = {shp(4, 1, 4, 5, 5), shp(4, 8, 3, 3, 3)};
    opara__shape f[] = {shp(3, 1, 2, 10), shp(3, 4, 2, 3)};
    EXPECT1(OPARA__OP_CONV, a, a_pads1, shp(4, 1, 1, 5, 5));        /* test_basic_conv_with_padding */
    EXPECT1(OPARA__OP_CONV, a, NULL, shp(4, 1, 1, 3, 3));           /* test_basic_conv_without_padding */
    EXPECT1(OPARA__OP_CONV, b, a_s2_asym, shp(4, 1, 1, 4, 2));      /* test_conv_with_strides_and_asymmetric_padding */
    EXPECT1(OPARA__OP_CONV, a, a_same_lower_s2, shp(4, 1, 1, 3, 3)); /* test_conv_with_autopad_same: ceil(5/2) */
    EXPECT1(OPARA__OP_CONV, c, a_dil2, shp(4, 1, 1, 3, 3));         /* effective kernel 5 */
    EXPECT1(OPARA__OP_CONV, d, a_group2, shp(4, 2, 8, 3, 3));
    EXPECT1(OPARA__OP_CONV, f, NULL, shp(3, 1, 4, 8));              /* 1-D */
    EXPECT_FAIL(OPARA__OP_CONV, e, NULL);                           /* 4 input channels vs 3 */
    EXPECT_FAIL(OPARA__OP_CONV, a, a_bad_kernel);                   /* kernel_shape disagrees with W */
}

/* Brute force: count window positions p = -pad_begin + j*stride whose extent fits the padded input. */
static int64_t windows(int64_t in, int64_t k, int64_t s, int64_t d, int64_t pb, int64_t pe) {
    int64_t p, n = 0, eff = (k - 1) * d + 1;
    for (p = -pb; p + eff <= in + pe; p += s) ++n;
    return n;
}

static int64_t bf_in, bf_k, bf_s, bf_d, bf_pb, bf_pe;
static void a_brute(one* t) {
    int64_t strides[1], dil[1], pads[2];
    strides[0] = bf_s, dil[0] = bf_d, pads[0] = bf_pb, pads[1] = bf_pe;
    opara__node_set_ints(&t->g, t->node, "strides", strides, 1);
    opara__node_set_ints(&t->g, t->node, "dilations", dil, 1);
    opara__node_set_ints(&t->g, t->node, "pads", pads, 2);
}

OT_TEST(conv_matches_brute_force_window_count) {
    int cases = 0;
    for (bf_in = 1; bf_in <= 9; ++bf_in)
        for (bf_k = 1; bf_k <= 4; ++bf_k)
            for (bf_s = 1; bf_s <= 3; ++bf_s)
                for (bf_d = 1; bf_d <= 2; ++bf_d)
                    for (bf_pb = 0; bf_pb <= 2; ++bf_pb)
                        for (bf_pe = 0; bf_pe <= 2; ++bf_pe) {
                            opara__shape ins[2];
                            one t;
                            int64_t want = windows(bf_in, bf_k, bf_s, bf_d, bf_pb, bf_pe);
                            opara_result r;
                            ins[0] = shp(3, 1, 1, (int)bf_in);
                            ins[1] = shp(3, 1, 1, (int)bf_k);
                            r = run(&t, OPARA__OP_CONV, 2, ins, 1, a_brute);
                            if (want <= 0) CHECK(r != OPARA_OK);
                            else if (r != OPARA_OK || t.shapes[t.outs[0]].dims[2] != want) {
                                CHECK_EQ(r, OPARA_OK);
                                if (r == OPARA_OK) CHECK_EQ(t.shapes[t.outs[0]].dims[2], want);
                                OT_LOG("in %lld k %lld s %lld d %lld pads %lld %lld", (long long)bf_in, (long long)bf_k,
                                       (long long)bf_s, (long long)bf_d, (long long)bf_pb, (long long)bf_pe);
                            }
                            one_free(&t);
                            ++cases;
                        }
    CHECK_EQ(cases, 9 * 4 * 3 * 2 * 3 * 3);
}

static void a_ct_pads(one* t) { set_ints(t, "strides", 2, 3, 2); set_ints(t, "pads", 4, 1, 2, 1, 2); }
static void a_ct_outpad(one* t) { set_ints(t, "strides", 2, 3, 2); set_ints(t, "output_padding", 2, 1, 1); }
static void a_ct_outshape(one* t) { set_ints(t, "strides", 2, 3, 2); set_ints(t, "output_shape", 2, 10, 8); }
static void a_ct_same(one* t) { set_ints(t, "strides", 2, 2, 2); opara__node_set_string(&t->g, t->node, "auto_pad", "SAME_UPPER"); }
static void a_ct_group(one* t) { opara__node_set_int(&t->g, t->node, "group", 2); }

OT_TEST(conv_transpose_follows_onnx) {
    opara__shape a[] = {shp(4, 1, 1, 3, 3), shp(4, 1, 2, 3, 3)};
    opara__shape dil[] = {shp(4, 1, 1, 3, 3), shp(4, 1, 1, 2, 2)};
    opara__shape grp[] = {shp(4, 1, 4, 3, 3), shp(4, 4, 3, 3, 3), shp(1, 6)};
    EXPECT1(OPARA__OP_CONV_TRANSPOSE, a, NULL, shp(4, 1, 2, 5, 5));           /* test_convtranspose */
    EXPECT1(OPARA__OP_CONV_TRANSPOSE, a, a_ct_pads, shp(4, 1, 2, 7, 3));      /* test_convtranspose_pads */
    EXPECT1(OPARA__OP_CONV_TRANSPOSE, a, a_ct_outpad, shp(4, 1, 2, 10, 8));   /* test_convtranspose_output_shape */
    EXPECT1(OPARA__OP_CONV_TRANSPOSE, a, a_ct_outshape, shp(4, 1, 2, 10, 8));
    EXPECT1(OPARA__OP_CONV_TRANSPOSE, a, a_ct_same, shp(4, 1, 2, 6, 6));      /* test_convtranspose_autopad_same */
    EXPECT1(OPARA__OP_CONV_TRANSPOSE, dil, a_dil2, shp(4, 1, 1, 5, 5));      /* test_convtranspose_dilations */
    EXPECT1(OPARA__OP_CONV_TRANSPOSE, grp, a_ct_group, shp(4, 1, 6, 5, 5));
}

static void a_k3s2(one* t) { set_ints(t, "kernel_shape", 2, 3, 3); set_ints(t, "strides", 2, 2, 2); }
static void a_k3s2_ceil(one* t) { a_k3s2(t); opara__node_set_int(&t->g, t->node, "ceil_mode", 1); }
static void a_k3_pads2(one* t) { set_ints(t, "kernel_shape", 2, 3, 3); set_ints(t, "pads", 4, 2, 2, 2, 2); }
static void a_k2_same(one* t) { set_ints(t, "kernel_shape", 2, 2, 2); opara__node_set_string(&t->g, t->node, "auto_pad", "SAME_UPPER"); }
static void a_k5s3(one* t) { set_ints(t, "kernel_shape", 2, 5, 5); set_ints(t, "strides", 2, 3, 3); }
static void a_k2_dil2(one* t) { set_ints(t, "kernel_shape", 2, 2, 2); set_ints(t, "dilations", 2, 2, 2); }
static void a_k2s2p1_ceil(one* t) {
    set_ints(t, "kernel_shape", 2, 2, 2);
    set_ints(t, "strides", 2, 2, 2);
    set_ints(t, "pads", 4, 1, 1, 1, 1);
    opara__node_set_int(&t->g, t->node, "ceil_mode", 1);
}
static void a_k2_3d(one* t) { set_ints(t, "kernel_shape", 3, 2, 2, 2); }
static void a_no_kernel(one* t) { (void)t; }

OT_TEST(pools_follow_onnx) {
    opara__shape x4[] = {shp(4, 1, 1, 4, 4)};
    opara__shape x28[] = {shp(4, 1, 3, 28, 28)};
    opara__shape x32[] = {shp(4, 1, 3, 32, 32)};
    opara__shape x5[] = {shp(4, 1, 1, 5, 5)};
    opara__shape x3d[] = {shp(5, 1, 3, 32, 32, 32)};
    opara__shape x2[] = {shp(2, 3, 4)};
    EXPECT1(OPARA__OP_MAX_POOL, x4, a_k3s2_ceil, shp(4, 1, 1, 2, 2));   /* test_maxpool_2d_ceil */
    EXPECT1(OPARA__OP_MAX_POOL, x4, a_k3s2, shp(4, 1, 1, 1, 1));
    EXPECT1(OPARA__OP_MAX_POOL, x28, a_k3_pads2, shp(4, 1, 3, 30, 30)); /* test_maxpool_2d_pads */
    EXPECT1(OPARA__OP_MAX_POOL, x32, a_k2_same, shp(4, 1, 3, 32, 32));  /* test_maxpool_2d_same_upper */
    EXPECT1(OPARA__OP_MAX_POOL, x32, a_k5s3, shp(4, 1, 3, 10, 10));     /* test_maxpool_2d_strides */
    EXPECT1(OPARA__OP_MAX_POOL, x4, a_k2_dil2, shp(4, 1, 1, 2, 2));     /* test_maxpool_2d_dilations */
    /* ceil_mode drops a last window that would start in the end padding: ceil((5+2-2)/2)+1 = 4 -> 3
       (what PyTorch's MaxPool2d(2, 2, padding=1, ceil_mode=True) gives for 5) */
    EXPECT1(OPARA__OP_MAX_POOL, x5, a_k2s2p1_ceil, shp(4, 1, 1, 3, 3));
    EXPECT1(OPARA__OP_AVERAGE_POOL, x3d, a_k2_3d, shp(5, 1, 3, 31, 31, 31)); /* test_averagepool_3d_default */
    EXPECT1(OPARA__OP_GLOBAL_AVERAGE_POOL, x28, NULL, shp(4, 1, 3, 1, 1));
    EXPECT_FAIL(OPARA__OP_MAX_POOL, x28, a_no_kernel);
    EXPECT_FAIL(OPARA__OP_MAX_POOL, x2, a_k3s2);
}

OT_TEST(maxpool_indices_output_is_i64) {
    one t;
    opara__shape x[] = {shp(4, 1, 1, 4, 4)};
    REQUIRE(run(&t, OPARA__OP_MAX_POOL, 1, x, 2, a_k3s2_ceil) == OPARA_OK);
    CHECK_SHAPE(&t.shapes[t.outs[1]], shp(4, 1, 1, 2, 2));
    CHECK_EQ(t.dtypes[t.outs[0]], OPARA_DTYPE_F32);
    CHECK_EQ(t.dtypes[t.outs[1]], OPARA_DTYPE_I64);
    one_free(&t);
}

OT_TEST(batch_norm_checks_channels) {
    opara__shape ok[] = {shp(4, 2, 3, 4, 5), shp(1, 3), shp(1, 3), shp(1, 3), shp(1, 3)};
    opara__shape bad[] = {shp(4, 2, 3, 4, 5), shp(1, 3), shp(1, 4), shp(1, 3), shp(1, 3)};
    EXPECT1(OPARA__OP_BATCH_NORM, ok, NULL, shp(4, 2, 3, 4, 5));
    EXPECT_FAIL(OPARA__OP_BATCH_NORM, bad, NULL);
}

static void a_size3(one* t) { opara__node_set_int(&t->g, t->node, "size", 3); }
static void a_axes_bad(one* t) { set_ints(t, "axes", 1, 5); }
static void a_unpool_k2(one* t) { set_ints(t, "kernel_shape", 2, 2, 2); set_ints(t, "strides", 2, 2, 2); }
static void a_unpool_k2_os(one* t) { a_unpool_k2(t); set_ints(t, "output_shape", 4, 1, 1, 5, 5); }
static void a_unpool_os_bad(one* t) { a_unpool_k2(t); set_ints(t, "output_shape", 4, 1, 2, 5, 5); }

OT_TEST(norm_and_pool_family_shapes) {
    opara__shape pr_last[] = {shp(3, 3, 4, 5), shp(1, 5)}, pr_ch[] = {shp(4, 2, 3, 4, 5), shp(3, 3, 1, 1)};
    opara__shape pr_bad[] = {shp(3, 3, 4, 5), shp(1, 4)}, pr_grows[] = {shp(2, 4, 5), shp(3, 2, 4, 5)};
    opara__shape in_ok[] = {shp(4, 2, 3, 4, 5), shp(1, 3), shp(1, 3)}, in_bad[] = {shp(4, 2, 3, 4, 5), shp(1, 3), shp(1, 4)};
    opara__shape in_rank2[] = {shp(2, 2, 3), shp(1, 3), shp(1, 3)}, x[] = {shp(4, 5, 5, 5, 5)}, g[] = {shp(4, 1, 3, 28, 28)};
    opara__shape up[] = {shp(4, 1, 1, 2, 2), shp(4, 1, 1, 2, 2)}, up_bad[] = {shp(4, 1, 1, 2, 2), shp(4, 1, 1, 2, 3)};
    EXPECT1(OPARA__OP_PRELU, pr_last, NULL, shp(3, 3, 4, 5));      /* test_prelu_broadcast */
    EXPECT1(OPARA__OP_PRELU, pr_ch, NULL, shp(4, 2, 3, 4, 5));
    EXPECT_FAIL(OPARA__OP_PRELU, pr_bad, NULL);
    EXPECT_FAIL(OPARA__OP_PRELU, pr_grows, NULL);                  /* the slope may not enlarge X */
    EXPECT1(OPARA__OP_INSTANCE_NORM, in_ok, NULL, shp(4, 2, 3, 4, 5));
    EXPECT_FAIL(OPARA__OP_INSTANCE_NORM, in_bad, NULL);
    EXPECT_FAIL(OPARA__OP_INSTANCE_NORM, in_rank2, NULL);
    EXPECT1(OPARA__OP_LRN, x, a_size3, shp(4, 5, 5, 5, 5));        /* test_lrn */
    EXPECT_FAIL(OPARA__OP_LRN, x, NULL);                           /* size is required */
    EXPECT1(OPARA__OP_MVN, x, NULL, shp(4, 5, 5, 5, 5));
    EXPECT_FAIL(OPARA__OP_MVN, x, a_axes_bad);
    EXPECT1(OPARA__OP_SHRINK, x, NULL, shp(4, 5, 5, 5, 5));
    EXPECT1(OPARA__OP_GLOBAL_MAX_POOL, g, NULL, shp(4, 1, 3, 1, 1)); /* test_globalmaxpool */
    EXPECT1(OPARA__OP_MAX_UNPOOL, up, a_unpool_k2, shp(4, 1, 1, 4, 4)); /* test_maxunpool_export_without_output_shape */
    EXPECT1(OPARA__OP_MAX_UNPOOL, up, a_unpool_k2_os, shp(4, 1, 1, 5, 5));
    EXPECT_FAIL(OPARA__OP_MAX_UNPOOL, up, NULL);                   /* kernel_shape is required */
    EXPECT_FAIL(OPARA__OP_MAX_UNPOOL, up, a_unpool_os_bad);        /* output_shape changes C */
    EXPECT_FAIL(OPARA__OP_MAX_UNPOOL, up_bad, a_unpool_k2);        /* I is not shaped like X */
}

static void a_eq_bmm(one* t) { opara__node_set_string(&t->g, t->node, "equation", "bij, bjk -> bik"); }
static void a_eq_implicit(one* t) { opara__node_set_string(&t->g, t->node, "equation", "ij,jk"); }
static void a_eq_diag(one* t) { opara__node_set_string(&t->g, t->node, "equation", "...ii->...i"); }
static void a_eq_bad(one* t) { opara__node_set_string(&t->g, t->node, "equation", "ij,jk->iq"); }

static opara_result record_of(one* t, opara__op op, uint32_t n_in, const opara__shape* ins, attrs_fn attrs,
                              opara__node_params* p);

OT_TEST(einsum_shapes_and_strides) {
    opara__shape bmm[] = {shp(3, 5, 2, 3), shp(3, 5, 3, 4)}, mm[] = {shp(2, 2, 3), shp(2, 3, 4)}, diag[] = {shp(3, 3, 5, 5)};
    opara__shape bad[] = {shp(3, 5, 2, 3), shp(3, 5, 4, 4)};
    opara__node_params p;
    one t;
    EXPECT1(OPARA__OP_EINSUM, bmm, a_eq_bmm, shp(3, 5, 2, 4)); /* test_einsum_batch_matmul */
    EXPECT1(OPARA__OP_EINSUM, mm, a_eq_implicit, shp(2, 2, 4)); /* implicit output: i, k (used once) */
    EXPECT1(OPARA__OP_EINSUM, diag, a_eq_diag, shp(2, 3, 5));   /* test_einsum_batch_diagonal */
    EXPECT_FAIL(OPARA__OP_EINSUM, bad, a_eq_bmm);               /* j is 3 and 4 */
    EXPECT_FAIL(OPARA__OP_EINSUM, mm, a_eq_bad);                /* q is no operand's */
    /* the diagonal: output i reads x[b, i, i], stride 5 + 1; b has stride 25; nothing is summed */
    REQUIRE(record_of(&t, OPARA__OP_EINSUM, 1, diag, a_eq_diag, &p) == OPARA_OK);
    CHECK(p.u.einsum.n_sum == 0 && p.u.einsum.out_strides[0][0] == 25 && p.u.einsum.out_strides[0][1] == 6);
    one_free(&t);
    /* the batch matmul sums j: stride 1 in the first operand, 4 in the second */
    REQUIRE(record_of(&t, OPARA__OP_EINSUM, 2, bmm, a_eq_bmm, &p) == OPARA_OK);
    CHECK(p.u.einsum.n_sum == 1 && p.u.einsum.sum_dims[0] == 3 && p.u.einsum.sum_strides[0][0] == 1 &&
          p.u.einsum.sum_strides[1][0] == 4);
    CHECK(p.u.einsum.out_strides[0][1] == 3 && p.u.einsum.out_strides[1][1] == 0 && p.u.einsum.out_strides[1][2] == 1);
    one_free(&t);
}

OT_TEST(dropout_mask_is_bool) {
    one t;
    opara__shape x[] = {shp(3, 3, 4, 5)};
    REQUIRE(run(&t, OPARA__OP_DROPOUT, 1, x, 2, NULL) == OPARA_OK);
    CHECK_SHAPE(&t.shapes[t.outs[0]], shp(3, 3, 4, 5));
    CHECK_SHAPE(&t.shapes[t.outs[1]], shp(3, 3, 4, 5));
    CHECK_EQ(t.dtypes[t.outs[0]], OPARA_DTYPE_F32);
    CHECK_EQ(t.dtypes[t.outs[1]], OPARA_DTYPE_BOOL);
    one_free(&t);
}

/* ---- elementwise ----------------------------------------------------------------------------- */

OT_TEST(broadcasting_is_numpy) {
    opara__shape a[] = {shp(4, 2, 3, 4, 5), shp(1, 5)};
    opara__shape b[] = {shp(3, 1, 4, 5), shp(3, 2, 1, 1)};
    opara__shape c[] = {shp(2, 3, 1), shp(2, 1, 4)};
    opara__shape d[] = {shp(2, 0, 3), shp(2, 1, 3)};
    opara__shape e[] = {shp(0), shp(2, 2, 3)};
    opara__shape bad[] = {shp(2, 2, 3), shp(1, 4)};
    EXPECT1(OPARA__OP_ADD, a, NULL, shp(4, 2, 3, 4, 5));
    EXPECT1(OPARA__OP_MUL, b, NULL, shp(3, 2, 4, 5));
    EXPECT1(OPARA__OP_SUB, c, NULL, shp(2, 3, 4));
    EXPECT1(OPARA__OP_DIV, d, NULL, shp(2, 0, 3));
    EXPECT1(OPARA__OP_POW, e, NULL, shp(2, 2, 3));
    EXPECT_FAIL(OPARA__OP_ADD, bad, NULL);
}

OT_TEST(unary_ops_keep_the_shape) {
    static const opara__op ops[] = {OPARA__OP_RELU, OPARA__OP_LEAKY_RELU, OPARA__OP_SIGMOID, OPARA__OP_TANH,
                                    OPARA__OP_HARD_SIGMOID, OPARA__OP_HARD_SWISH, OPARA__OP_CLIP, OPARA__OP_SQRT,
                                    OPARA__OP_ERF, OPARA__OP_GELU, OPARA__OP_SOFTMAX, OPARA__OP_CAST,
                                    OPARA__OP_NEG, OPARA__OP_ABS, OPARA__OP_EXP, OPARA__OP_LOG, OPARA__OP_RECIPROCAL,
                                    OPARA__OP_FLOOR, OPARA__OP_CEIL, OPARA__OP_ROUND, OPARA__OP_SIGN, OPARA__OP_SIN,
                                    OPARA__OP_COS, OPARA__OP_TAN, OPARA__OP_SOFTPLUS, OPARA__OP_SOFTSIGN,
                                    OPARA__OP_ELU, OPARA__OP_SELU, OPARA__OP_CELU, OPARA__OP_THRESHOLDED_RELU,
                                    OPARA__OP_ASIN, OPARA__OP_ACOS, OPARA__OP_ATAN, OPARA__OP_SINH, OPARA__OP_COSH,
                                    OPARA__OP_ASINH, OPARA__OP_ACOSH, OPARA__OP_ATANH};
    opara__shape x[] = {shp(3, 2, 3, 4)};
    size_t i;
    for (i = 0; i < sizeof ops / sizeof ops[0]; ++i) {
        one t;
        opara_result r = run(&t, ops[i], 1, x, 1, NULL);
        if (ops[i] == OPARA__OP_CAST) CHECK_EQ(r, OPARA_ERR_BAD_DTYPE); /* Cast needs 'to' */
        else if (r != OPARA_OK) CHECK_STR(opara_runtime_last_error(g_rt), "");
        else CHECK_SHAPE(&t.shapes[t.outs[0]], shp(3, 2, 3, 4));
        one_free(&t);
    }
}

static void a_axis2(one* t) { opara__node_set_int(&t->g, t->node, "axis", 2); }
OT_TEST(softmax_axis_is_checked) {
    opara__shape x[] = {shp(2, 2, 3)};
    EXPECT_FAIL(OPARA__OP_SOFTMAX, x, a_axis2);
}

/* ---- data movement --------------------------------------------------------------------------- */

static void a_axis_m1(one* t) { opara__node_set_int(&t->g, t->node, "axis", -1); }
static void a_axis1(one* t) { opara__node_set_int(&t->g, t->node, "axis", 1); }

OT_TEST(concat) {
    opara__shape a[] = {shp(2, 2, 3), shp(2, 2, 5), shp(2, 2, 1)};
    opara__shape bad[] = {shp(2, 2, 3), shp(2, 3, 3)};
    EXPECT1(OPARA__OP_CONCAT, a, a_axis_m1, shp(2, 2, 9));
    EXPECT_FAIL(OPARA__OP_CONCAT, bad, a_axis_m1);
    EXPECT_FAIL(OPARA__OP_CONCAT, a, NULL); /* axis is required */
}

/* Concat has no optional inputs: an omitted one (a fuzz finding: it was dereferenced) is an error. */
OT_TEST(concat_with_an_omitted_input_is_an_error) {
    one t;
    int32_t in[3];
    one_init(&t);
    in[0] = one_input(&t, shp(2, 2, 3), F32);
    in[1] = -1;
    in[2] = one_input(&t, shp(2, 2, 3), F32);
    one_node(&t, OPARA__OP_CONCAT, 3, in, 1);
    opara__node_set_int(&t.g, t.node, "axis", 2);
    CHECK_EQ(OPARA_ERR_SHAPE, one_infer(&t, 1));
    CHECK(strstr(opara_runtime_last_error(g_rt), "required input 1 is omitted") != NULL);
    one_free(&t);
}

static void a_split_2_4(one* t) { set_ints(t, "split", 2, 2, 4); }
static void a_split_axis1(one* t) { opara__node_set_int(&t->g, t->node, "axis", 1); set_ints(t, "split", 2, 1, 5); }

OT_TEST(split) {
    one t;
    opara__shape x6[] = {shp(1, 6)};
    opara__shape x26[] = {shp(2, 2, 6)};
    opara__shape x7[] = {shp(1, 7)};
    REQUIRE(run(&t, OPARA__OP_SPLIT, 1, x6, 3, NULL) == OPARA_OK); /* test_split_equal_parts_1d */
    CHECK_SHAPE(&t.shapes[t.outs[0]], shp(1, 2));
    CHECK_SHAPE(&t.shapes[t.outs[2]], shp(1, 2));
    one_free(&t);
    REQUIRE(run(&t, OPARA__OP_SPLIT, 1, x6, 2, a_split_2_4) == OPARA_OK); /* test_split_variable_parts_1d */
    CHECK_SHAPE(&t.shapes[t.outs[0]], shp(1, 2));
    CHECK_SHAPE(&t.shapes[t.outs[1]], shp(1, 4));
    one_free(&t);
    REQUIRE(run(&t, OPARA__OP_SPLIT, 1, x26, 2, a_split_axis1) == OPARA_OK);
    CHECK_SHAPE(&t.shapes[t.outs[0]], shp(2, 2, 1));
    CHECK_SHAPE(&t.shapes[t.outs[1]], shp(2, 2, 5));
    one_free(&t);
    CHECK(run(&t, OPARA__OP_SPLIT, 1, x7, 2, NULL) == OPARA_ERR_SHAPE);
    one_free(&t);
}

/* Slice cases: (dim, start, end, step) -> len(range(dim)[start:end:step]) as Python 3 computes it. */
static const struct { int64_t d, start, end, step, want; } slice_cases[] = {
    {20, 0, 3, 1, 3}, {20, 1, 1000, 1, 19}, {10, -1, -100, -1, 10}, {10, 100, -100, -1, 10},
    {10, -100, 100, 1, 10}, {10, 5, 5, 1, 0}, {10, 9, -1, -2, 0}, {10, -3, -1, 1, 2}, {7, 0, 7, 3, 3},
    {7, 6, 0, -3, 2}, {5, INT64_MIN, INT64_MAX, 1, 5}, {5, -1, INT64_MIN, -1, 5}, {5, 4, INT64_MIN, -INT64_MAX, 1},
    {0, 0, 10, 1, 0}, {1, 0, -1, 1, 0}, {10, 3, 8, INT64_MAX, 1}, {10, 9, 0, -4, 3}, {13, 2, 11, 4, 3},
};
static size_t slice_i;
static void a_slice_case(one* t) {
    int64_t v;
    v = slice_cases[slice_i].start, opara__node_set_ints(&t->g, t->node, "starts", &v, 1);
    v = slice_cases[slice_i].end, opara__node_set_ints(&t->g, t->node, "ends", &v, 1);
    v = slice_cases[slice_i].step, opara__node_set_ints(&t->g, t->node, "steps", &v, 1);
}
static void a_slice_onnx(one* t) { set_ints(t, "starts", 2, 0, 0); set_ints(t, "ends", 2, 3, 10); set_ints(t, "axes", 2, 0, 1); }
static void a_slice_neg(one* t) { set_ints(t, "starts", 1, 0); set_ints(t, "ends", 1, -1); set_ints(t, "axes", 1, 1); }
static void a_slice_negsteps(one* t) {
    set_ints(t, "starts", 3, 20, 10, 4);
    set_ints(t, "ends", 3, 0, 0, 1);
    set_ints(t, "axes", 3, 0, 1, 2);
    set_ints(t, "steps", 3, -1, -3, -2);
}
static void a_slice_default_axes(one* t) { set_ints(t, "starts", 3, 0, 0, 3); set_ints(t, "ends", 3, 20, 10, 4); }
static void a_slice_zero_step(one* t) { set_ints(t, "starts", 1, 0); set_ints(t, "ends", 1, 1); set_ints(t, "steps", 1, 0); }

OT_TEST(slice) {
    opara__shape x[] = {shp(3, 20, 10, 5)};
    for (slice_i = 0; slice_i < sizeof slice_cases / sizeof slice_cases[0]; ++slice_i) {
        opara__shape in[1];
        in[0] = shp(1, (int)slice_cases[slice_i].d);
        OT_LOG("case %u", (unsigned)slice_i);
        EXPECT1(OPARA__OP_SLICE, in, a_slice_case, shp(1, (int)slice_cases[slice_i].want));
    }
    EXPECT1(OPARA__OP_SLICE, x, a_slice_onnx, shp(3, 3, 10, 5));          /* test_slice */
    EXPECT1(OPARA__OP_SLICE, x, a_slice_neg, shp(3, 20, 9, 5));           /* test_slice_neg */
    EXPECT1(OPARA__OP_SLICE, x, a_slice_negsteps, shp(3, 19, 3, 2));      /* test_slice_neg_steps */
    EXPECT1(OPARA__OP_SLICE, x, a_slice_default_axes, shp(3, 20, 10, 1)); /* test_slice_default_axes */
    EXPECT_FAIL(OPARA__OP_SLICE, x, a_slice_zero_step);
}

static void a_gather_axis1(one* t) { opara__node_set_int(&t->g, t->node, "axis", 1); }
static void a_gather_axis_m1(one* t) { opara__node_set_int(&t->g, t->node, "axis", -1); }

OT_TEST(gather) {
    one t;
    int32_t idx[2];
    opara__shape g0[2];
    g0[0] = shp(4, 5, 4, 3, 2), g0[1] = shp(1, 3);
    EXPECT1(OPARA__OP_GATHER, g0, NULL, shp(4, 3, 4, 3, 2)); /* test_gather_0 */
    one_init(&t);
    idx[0] = one_input(&t, shp(2, 3, 3), F32);
    idx[1] = one_input(&t, shp(2, 1, 2), OPARA_DTYPE_I64);
    one_node(&t, OPARA__OP_GATHER, 2, idx, 1);
    a_gather_axis1(&t);
    REQUIRE(one_infer(&t, 1) == OPARA_OK); /* test_gather_2d_indices */
    CHECK_SHAPE(&t.shapes[t.outs[0]], shp(3, 3, 1, 2));
    CHECK_EQ(t.dtypes[t.outs[0]], OPARA_DTYPE_F32);
    one_free(&t);
    one_init(&t);
    idx[0] = one_input(&t, shp(4, 5, 4, 3, 2), F32);
    idx[1] = one_input(&t, shp(0), OPARA_DTYPE_I32);
    one_node(&t, OPARA__OP_GATHER, 2, idx, 1);
    a_gather_axis_m1(&t);
    REQUIRE(one_infer(&t, 1) == OPARA_OK); /* scalar index removes the axis */
    CHECK_SHAPE(&t.shapes[t.outs[0]], shp(3, 5, 4, 3));
    one_free(&t);
}

static void a_shape_423(one* t) { set_ints(t, "shape", 3, 4, 2, 3); }
static void a_shape_neg(one* t) { set_ints(t, "shape", 3, 2, -1, 2); }
static void a_shape_zero(one* t) { set_ints(t, "shape", 4, 2, 0, 4, 1); }
static void a_shape_zero_neg(one* t) { set_ints(t, "shape", 4, 2, 0, 1, -1); }
static void a_shape_24(one* t) { set_ints(t, "shape", 1, 24); }
static void a_shape_allowzero(one* t) { set_ints(t, "shape", 3, 3, 4, 0); opara__node_set_int(&t->g, t->node, "allowzero", 1); }
static void a_shape_two_neg(one* t) { set_ints(t, "shape", 2, -1, -1); }
static void a_shape_bad_count(one* t) { set_ints(t, "shape", 2, 5, 5); }

OT_TEST(reshape) {
    opara__shape x[] = {shp(3, 2, 3, 4)};
    opara__shape z[] = {shp(3, 0, 3, 4)};
    EXPECT1(OPARA__OP_RESHAPE, x, a_shape_423, shp(3, 4, 2, 3));          /* test_reshape_reordered_all_dims */
    EXPECT1(OPARA__OP_RESHAPE, x, a_shape_neg, shp(3, 2, 6, 2));          /* test_reshape_negative_extended_dims */
    EXPECT1(OPARA__OP_RESHAPE, x, a_shape_zero, shp(4, 2, 3, 4, 1));      /* test_reshape_zero_dim */
    EXPECT1(OPARA__OP_RESHAPE, x, a_shape_zero_neg, shp(4, 2, 3, 1, 4));  /* test_reshape_zero_and_negative_dim */
    EXPECT1(OPARA__OP_RESHAPE, x, a_shape_24, shp(1, 24));                /* test_reshape_one_dim */
    EXPECT1(OPARA__OP_RESHAPE, z, a_shape_allowzero, shp(3, 3, 4, 0));    /* test_reshape_allowzero_reordered */
    EXPECT_FAIL(OPARA__OP_RESHAPE, x, a_shape_two_neg);
    EXPECT_FAIL(OPARA__OP_RESHAPE, x, a_shape_bad_count);
}

static void a_shape_batch(one* t) {
    int64_t v[2];
    v[0] = OPARA__DIM_BATCH, v[1] = -1;
    opara__node_set_ints(&t->g, t->node, "shape", v, 2);
}

OT_TEST(symbolic_batch_flows_through) {
    one t;
    int32_t idx[1];
    one_init(&t);
    idx[0] = one_input(&t, shp(3, 1, 3, 4), F32);
    t.g.values[idx[0]].shape.dims[0] = OPARA__DIM_BATCH;
    one_node(&t, OPARA__OP_RESHAPE, 1, idx, 1);
    a_shape_batch(&t);
    REQUIRE(one_infer(&t, 5) == OPARA_OK);
    CHECK_SHAPE(&t.shapes[idx[0]], shp(3, 5, 3, 4));
    CHECK_SHAPE(&t.shapes[t.outs[0]], shp(2, 5, 12));
    CHECK_EQ(opara__infer_shapes(g_rt, &t.g, 0, t.shapes), OPARA_ERR_INVALID_ARGS);
    one_free(&t);
}

static int64_t flatten_axis;
static void a_flatten(one* t) { opara__node_set_int(&t->g, t->node, "axis", flatten_axis); }

OT_TEST(flatten) {
    opara__shape x[] = {shp(4, 2, 3, 4, 5)};
    static const int want[6][2] = {{1, 120}, {2, 60}, {6, 20}, {24, 5}, {120, 1}, {24, 5}};
    for (flatten_axis = 0; flatten_axis <= 5; ++flatten_axis) { /* test_flatten_axis0..3, default, negative */
        if (flatten_axis == 5) flatten_axis = -1;
        EXPECT1(OPARA__OP_FLATTEN, x, a_flatten, shp(2, want[flatten_axis < 0 ? 5 : flatten_axis][0],
                                                     want[flatten_axis < 0 ? 5 : flatten_axis][1]));
        if (flatten_axis == -1) break;
    }
    flatten_axis = 5;
    EXPECT_FAIL(OPARA__OP_FLATTEN, x, a_flatten);
}

static void a_perm102(one* t) { set_ints(t, "perm", 3, 1, 0, 2); }
static void a_perm_bad(one* t) { set_ints(t, "perm", 3, 1, 1, 2); }

OT_TEST(transpose) {
    opara__shape x[] = {shp(3, 2, 3, 4)};
    EXPECT1(OPARA__OP_TRANSPOSE, x, NULL, shp(3, 4, 3, 2)); /* test_transpose_default */
    EXPECT1(OPARA__OP_TRANSPOSE, x, a_perm102, shp(3, 3, 2, 4));
    EXPECT_FAIL(OPARA__OP_TRANSPOSE, x, a_perm_bad);
}

static void a_axes0(one* t) { set_ints(t, "axes", 1, 0); }
static void a_axes1(one* t) { set_ints(t, "axes", 1, 1); }
static void a_axes_0_4(one* t) { set_ints(t, "axes", 2, 0, 4); }
static void a_axes_542(one* t) { set_ints(t, "axes", 3, 5, 4, 2); }
static void a_axes_m1(one* t) { set_ints(t, "axes", 1, -1); }

OT_TEST(squeeze_unsqueeze) {
    opara__shape x[] = {shp(4, 1, 3, 4, 5)};
    opara__shape y[] = {shp(4, 1, 3, 1, 5)};
    opara__shape u[] = {shp(3, 3, 4, 5)};
    EXPECT1(OPARA__OP_SQUEEZE, x, a_axes0, shp(3, 3, 4, 5)); /* test_squeeze */
    EXPECT1(OPARA__OP_SQUEEZE, y, NULL, shp(2, 3, 5));
    EXPECT_FAIL(OPARA__OP_SQUEEZE, x, a_axes1);              /* dim 1 is 3 */
    EXPECT1(OPARA__OP_UNSQUEEZE, u, a_axes_0_4, shp(5, 1, 3, 4, 5, 1)); /* test_unsqueeze_two_axes */
    EXPECT1(OPARA__OP_UNSQUEEZE, u, a_axes_542, shp(6, 3, 4, 1, 5, 1, 1)); /* test_unsqueeze_unsorted_axes */
    EXPECT1(OPARA__OP_UNSQUEEZE, u, a_axes_m1, shp(4, 3, 4, 5, 1));    /* test_unsqueeze_negative_axes */
    EXPECT_FAIL(OPARA__OP_UNSQUEEZE, u, NULL);
}

static void a_expand_216(one* t) { set_ints(t, "shape", 3, 2, 1, 6); }
static void a_expand_34(one* t) { set_ints(t, "shape", 2, 3, 4); }
static void a_expand_11(one* t) { set_ints(t, "shape", 2, 1, 1); }
static void a_expand_bad(one* t) { set_ints(t, "shape", 2, 2, 4); }

OT_TEST(expand) {
    opara__shape x[] = {shp(2, 3, 1)};
    opara__shape y[] = {shp(2, 3, 4)};
    EXPECT1(OPARA__OP_EXPAND, x, a_expand_216, shp(3, 2, 3, 6)); /* test_expand_dim_changed */
    EXPECT1(OPARA__OP_EXPAND, x, a_expand_34, shp(2, 3, 4));     /* test_expand_dim_unchanged */
    EXPECT1(OPARA__OP_EXPAND, y, a_expand_11, shp(2, 3, 4));     /* bidirectional */
    EXPECT_FAIL(OPARA__OP_EXPAND, x, a_expand_bad);
}

static void a_transA(one* t) { opara__node_set_int(&t->g, t->node, "transA", 1); }
static void a_transB(one* t) { opara__node_set_int(&t->g, t->node, "transB", 1); }

OT_TEST(gemm) {
    opara__shape a[] = {shp(2, 3, 5), shp(2, 5, 4)};
    opara__shape ta[] = {shp(2, 5, 3), shp(2, 5, 4)};
    opara__shape tb[] = {shp(2, 3, 5), shp(2, 4, 5), shp(2, 1, 4)};
    opara__shape cs[] = {shp(2, 3, 5), shp(2, 5, 4), shp(0)};
    opara__shape cbad[] = {shp(2, 3, 5), shp(2, 5, 4), shp(2, 2, 4)};
    opara__shape kbad[] = {shp(2, 3, 5), shp(2, 4, 4)};
    EXPECT1(OPARA__OP_GEMM, a, NULL, shp(2, 3, 4));
    EXPECT1(OPARA__OP_GEMM, ta, a_transA, shp(2, 3, 4));
    EXPECT1(OPARA__OP_GEMM, tb, a_transB, shp(2, 3, 4));
    EXPECT1(OPARA__OP_GEMM, cs, NULL, shp(2, 3, 4));
    EXPECT_FAIL(OPARA__OP_GEMM, cbad, NULL);
    EXPECT_FAIL(OPARA__OP_GEMM, kbad, NULL);
}

static void a_rnn_h2(one* t) { opara__node_set_int(&t->g, t->node, "hidden_size", 2); }
static void a_rnn_bidi_batch_first(one* t) {
    opara__node_set_string(&t->g, t->node, "direction", "bidirectional");
    opara__node_set_int(&t->g, t->node, "layout", 1);
}
static void a_rnn_bad_direction(one* t) { opara__node_set_string(&t->g, t->node, "direction", "sideways"); }
static void a_rnn_bad_activation(one* t) { opara__node_set_string(&t->g, t->node, "activations", "Sigmoid,Gelu"); }
static void a_rnn_three_activations(one* t) { opara__node_set_string(&t->g, t->node, "activations", "Sigmoid,Tanh,Tanh"); }
static void a_rnn_hidden3(one* t) { opara__node_set_int(&t->g, t->node, "hidden_size", 3); }
static void a_rnn_record(one* t) {
    static const float alpha[2] = {0.25f, 0.75f};
    a_rnn_bidi_batch_first(t);
    opara__node_set_string(&t->g, t->node, "activations", "hardsigmoid,Tanh"); /* any case, as ONNX Runtime */
    opara__node_set_floats(&t->g, t->node, "activation_alpha", alpha, 2);
    opara__node_set_float(&t->g, t->node, "clip", 3.0f);
    opara__node_set_int(&t->g, t->node, "linear_before_reset", 1);
}

static opara_result record_of(one* t, opara__op op, uint32_t n_in, const opara__shape* ins, attrs_fn attrs,
                              opara__node_params* p);

/* X [seq, batch, input] (layout 1: [batch, seq, input]); Y [seq, dirs, batch, hidden] (layout 1:
   [batch, seq, dirs, hidden]); the optional inputs checked against them. */
OT_TEST(rnn_shapes_and_record) {
    opara__shape lstm[] = {shp(3, 5, 2, 3), shp(3, 1, 8, 3), shp(3, 1, 8, 2)};
    opara__shape gru[] = {shp(3, 2, 5, 3), shp(3, 2, 6, 3), shp(3, 2, 6, 2)};
    opara__shape rnn_full[] = {shp(3, 5, 2, 3), shp(3, 1, 2, 3), shp(3, 1, 2, 2), shp(2, 1, 4), shp(1, 2), shp(3, 1, 2, 2)};
    opara__shape rnn_bad_b[] = {shp(3, 5, 2, 3), shp(3, 1, 2, 3), shp(3, 1, 2, 2), shp(2, 1, 2)};
    opara__shape rnn_bad_h0[] = {shp(3, 5, 2, 3), shp(3, 1, 2, 3), shp(3, 1, 2, 2), shp(-1), shp(-1), shp(3, 2, 1, 2)};
    opara__shape lstm_bad_p[] = {shp(3, 5, 2, 3), shp(3, 1, 8, 3), shp(3, 1, 8, 2), shp(-1), shp(-1), shp(-1), shp(-1), shp(2, 1, 4)};
    opara__shape gru_bad_w[] = {shp(3, 5, 2, 3), shp(3, 1, 8, 3), shp(3, 1, 8, 2)};
    opara__shape x2d[] = {shp(2, 5, 3), shp(3, 1, 2, 3), shp(3, 1, 2, 2)};
    opara__node_params p;
    one t;
    EXPECT1(OPARA__OP_LSTM, lstm, NULL, shp(4, 5, 1, 2, 2));
    EXPECT1(OPARA__OP_LSTM, lstm, a_rnn_h2, shp(4, 5, 1, 2, 2));
    EXPECT1(OPARA__OP_GRU, gru, a_rnn_bidi_batch_first, shp(4, 2, 5, 2, 2));
    EXPECT1(OPARA__OP_RNN, rnn_full, NULL, shp(4, 5, 1, 2, 2));
    EXPECT1(OPARA__OP_LSTM, lstm, a_rnn_three_activations, shp(4, 5, 1, 2, 2));
    EXPECT_FAIL(OPARA__OP_RNN, rnn_bad_b, NULL);
    EXPECT_FAIL(OPARA__OP_RNN, rnn_bad_h0, NULL);
    EXPECT_FAIL(OPARA__OP_LSTM, lstm_bad_p, NULL);
    EXPECT_FAIL(OPARA__OP_GRU, gru_bad_w, NULL); /* 8 rows are not 3 gates */
    EXPECT_FAIL(OPARA__OP_RNN, x2d, NULL);
    EXPECT_FAIL(OPARA__OP_LSTM, lstm, a_rnn_bad_direction);
    EXPECT_FAIL(OPARA__OP_GRU, gru, a_rnn_bad_activation);
    EXPECT_FAIL(OPARA__OP_LSTM, lstm, a_rnn_hidden3);
    EXPECT_FAIL(OPARA__OP_GRU, gru, a_rnn_three_activations); /* GRU takes 2 per direction */
    REQUIRE(record_of(&t, OPARA__OP_GRU, 3, gru, a_rnn_record, &p) == OPARA_OK);
    CHECK(p.u.rnn.seq_length == 5 && p.u.rnn.batch_size == 2 && p.u.rnn.input_size == 3 && p.u.rnn.hidden_size == 2);
    CHECK(p.u.rnn.direction == 2 && p.u.rnn.num_directions == 2 && p.u.rnn.gates == 3 && p.u.rnn.n_acts == 2);
    CHECK(p.u.rnn.layout == 1 && p.u.rnn.linear_before_reset == 1 && p.u.rnn.clip == 3.0f);
    /* one direction's list serves both; HardSigmoid takes alpha 0.25 and its default beta 0.5 */
    CHECK(p.u.rnn.act[0] == OPARA__RNN_ACT_HARD_SIGMOID && p.u.rnn.act[1] == OPARA__RNN_ACT_TANH);
    CHECK(p.u.rnn.act[2] == OPARA__RNN_ACT_HARD_SIGMOID && p.u.rnn.act[3] == OPARA__RNN_ACT_TANH);
    CHECK(p.u.rnn.act_alpha[0] == 0.25f && p.u.rnn.act_beta[0] == 0.5f && p.u.rnn.act_alpha[2] == 0.25f);
    one_free(&t);
    REQUIRE(record_of(&t, OPARA__OP_LSTM, 3, lstm, NULL, &p) == OPARA_OK);
    CHECK(p.u.rnn.direction == 0 && p.u.rnn.gates == 4 && p.u.rnn.clip == HUGE_VALF && p.u.rnn.input_forget == 0);
    CHECK(p.u.rnn.act[0] == OPARA__RNN_ACT_SIGMOID && p.u.rnn.act[1] == OPARA__RNN_ACT_TANH && p.u.rnn.act[2] == OPARA__RNN_ACT_TANH);
    one_free(&t);
}

OT_TEST(matmul_is_numpy) {
    opara__shape a[] = {shp(2, 3, 4), shp(2, 4, 5)};
    opara__shape b[] = {shp(3, 2, 3, 4), shp(3, 2, 4, 5)};
    opara__shape c[] = {shp(1, 4), shp(2, 4, 5)};
    opara__shape d[] = {shp(2, 3, 4), shp(1, 4)};
    opara__shape e[] = {shp(1, 4), shp(1, 4)};
    opara__shape f[] = {shp(3, 1, 3, 4), shp(3, 2, 4, 5)};
    opara__shape g[] = {shp(4, 5, 1, 3, 4), shp(3, 2, 4, 6)};
    opara__shape bad[] = {shp(2, 3, 4), shp(2, 3, 5)};
    opara__shape badb[] = {shp(3, 2, 3, 4), shp(3, 3, 4, 5)};
    EXPECT1(OPARA__OP_MATMUL, a, NULL, shp(2, 3, 5));
    EXPECT1(OPARA__OP_MATMUL, b, NULL, shp(3, 2, 3, 5));
    EXPECT1(OPARA__OP_MATMUL, c, NULL, shp(1, 5));
    EXPECT1(OPARA__OP_MATMUL, d, NULL, shp(1, 3));
    EXPECT1(OPARA__OP_MATMUL, e, NULL, shp(0));
    EXPECT1(OPARA__OP_MATMUL, f, NULL, shp(3, 2, 3, 5));
    EXPECT1(OPARA__OP_MATMUL, g, NULL, shp(4, 5, 2, 3, 6));
    EXPECT_FAIL(OPARA__OP_MATMUL, bad, NULL);
    EXPECT_FAIL(OPARA__OP_MATMUL, badb, NULL);
}

OT_TEST(layer_norm_statistics) {
    one t;
    opara__shape x[] = {shp(3, 2, 3, 4), shp(1, 4), shp(1, 4)};
    opara__shape x1[] = {shp(3, 2, 3, 4), shp(2, 3, 4)};
    REQUIRE(run(&t, OPARA__OP_LAYER_NORM, 3, x, 3, NULL) == OPARA_OK);
    CHECK_SHAPE(&t.shapes[t.outs[0]], shp(3, 2, 3, 4));
    CHECK_SHAPE(&t.shapes[t.outs[1]], shp(3, 2, 3, 1));
    CHECK_SHAPE(&t.shapes[t.outs[2]], shp(3, 2, 3, 1));
    CHECK_EQ(t.dtypes[t.outs[1]], OPARA_DTYPE_F32);
    one_free(&t);
    REQUIRE(run(&t, OPARA__OP_LAYER_NORM, 2, x1, 2, a_axis1) == OPARA_OK);
    CHECK_SHAPE(&t.shapes[t.outs[1]], shp(3, 2, 1, 1));
    one_free(&t);
    EXPECT_FAIL(OPARA__OP_LAYER_NORM, x1, NULL); /* scale [3,4] vs normalized [4] */
}

static void a_rm_axes1(one* t) { set_ints(t, "axes", 1, 1); }
static void a_rm_axes1_nokeep(one* t) { set_ints(t, "axes", 1, 1); opara__node_set_int(&t->g, t->node, "keepdims", 0); }
static void a_rm_noop(one* t) { opara__node_set_int(&t->g, t->node, "noop_with_empty_axes", 1); }
static void a_rm_neg(one* t) { set_ints(t, "axes", 1, -2); }
static void a_rm_dup(one* t) { set_ints(t, "axes", 2, 1, -2); }

OT_TEST(reduce_mean) {
    opara__shape x[] = {shp(3, 3, 2, 2)};
    EXPECT1(OPARA__OP_REDUCE_MEAN, x, a_rm_axes1, shp(3, 3, 1, 2));        /* test_reduce_mean_keepdims */
    EXPECT1(OPARA__OP_REDUCE_MEAN, x, a_rm_axes1_nokeep, shp(2, 3, 2));    /* test_reduce_mean_do_not_keepdims */
    EXPECT1(OPARA__OP_REDUCE_MEAN, x, NULL, shp(3, 1, 1, 1));              /* test_reduce_mean_default_axes_keepdims */
    EXPECT1(OPARA__OP_REDUCE_MEAN, x, a_rm_noop, shp(3, 3, 2, 2));
    EXPECT1(OPARA__OP_REDUCE_MEAN, x, a_rm_neg, shp(3, 3, 1, 2));          /* test_reduce_mean_negative_axes_keepdims */
    EXPECT_FAIL(OPARA__OP_REDUCE_MEAN, x, a_rm_dup);
}

/* The other reductions share ReduceMean's rule; ArgMax/ArgMin drop (or keep) their one axis and
   give i64; LogSoftmax, Hardmax and CumSum keep the shape; CumSum needs its axis. */
static void a_axis_neg1(one* t) { opara__node_set_int(&t->g, t->node, "axis", -1); }
static void a_axis1_nokeep(one* t) { opara__node_set_int(&t->g, t->node, "axis", 1); opara__node_set_int(&t->g, t->node, "keepdims", 0); }
static void a_axis4(one* t) { opara__node_set_int(&t->g, t->node, "axis", 4); }

OT_TEST(reductions_arg_and_scans) {
    opara__shape x[] = {shp(3, 3, 2, 2)};
    one t;
    opara__op op;
    for (op = OPARA__OP_REDUCE_SUM; op <= OPARA__OP_REDUCE_SUM_SQUARE; op = (opara__op)(op + 1)) {
        EXPECT1(op, x, a_rm_axes1_nokeep, shp(2, 3, 2));
        EXPECT1(op, x, NULL, shp(3, 1, 1, 1));
        EXPECT1(op, x, a_rm_noop, shp(3, 3, 2, 2));
        EXPECT1(op, x, a_rm_neg, shp(3, 3, 1, 2));
        EXPECT_FAIL(op, x, a_rm_dup);
    }
    EXPECT1(OPARA__OP_ARG_MAX, x, NULL, shp(3, 1, 2, 2));             /* test_argmax_default_axis_example */
    EXPECT1(OPARA__OP_ARG_MIN, x, a_axis1_nokeep, shp(2, 3, 2));      /* test_argmin_no_keepdims_example */
    EXPECT1(OPARA__OP_ARG_MAX, x, a_axis_neg1, shp(3, 3, 2, 1));
    EXPECT_FAIL(OPARA__OP_ARG_MIN, x, a_axis4);
    REQUIRE(run(&t, OPARA__OP_ARG_MAX, 1, x, 1, NULL) == OPARA_OK);
    CHECK_EQ(t.dtypes[t.outs[0]], OPARA_DTYPE_I64);
    one_free(&t);
    EXPECT1(OPARA__OP_LOG_SOFTMAX, x, a_axis_neg1, shp(3, 3, 2, 2));
    EXPECT1(OPARA__OP_HARDMAX, x, NULL, shp(3, 3, 2, 2));
    EXPECT_FAIL(OPARA__OP_HARDMAX, x, a_axis4);
    EXPECT1(OPARA__OP_CUM_SUM, x, a_axis_neg1, shp(3, 3, 2, 2));
    EXPECT_FAIL(OPARA__OP_CUM_SUM, x, NULL); /* no axis */
    EXPECT_FAIL(OPARA__OP_CUM_SUM, x, a_axis4);
}

OT_TEST(where_and_dtypes) {
    one t;
    int32_t idx[3];
    opara__shape w[] = {shp(2, 2, 1), shp(2, 2, 2), shp(2, 1, 2)};
    EXPECT1(OPARA__OP_WHERE, w, NULL, shp(2, 2, 2)); /* test_where_broadcast-like */
    one_init(&t);                                    /* Where's condition must be bool */
    idx[0] = one_input(&t, shp(1, 2), F32);
    idx[1] = one_input(&t, shp(1, 2), OPARA_DTYPE_I64);
    idx[2] = one_input(&t, shp(1, 2), OPARA_DTYPE_I64);
    one_node(&t, OPARA__OP_WHERE, 3, idx, 1);
    CHECK_EQ(one_infer(&t, 1), OPARA_ERR_BAD_DTYPE);
    one_free(&t);
    one_init(&t); /* Where's type is its data inputs' */
    idx[0] = one_input(&t, shp(1, 2), OPARA_DTYPE_BOOL);
    idx[1] = one_input(&t, shp(1, 2), OPARA_DTYPE_I64);
    idx[2] = one_input(&t, shp(1, 2), OPARA_DTYPE_I64);
    one_node(&t, OPARA__OP_WHERE, 3, idx, 1);
    REQUIRE(one_infer(&t, 1) == OPARA_OK);
    CHECK_EQ(t.dtypes[t.outs[0]], OPARA_DTYPE_I64);
    one_free(&t);
    one_init(&t); /* Add of f32 and i64 */
    idx[0] = one_input(&t, shp(1, 2), F32);
    idx[1] = one_input(&t, shp(1, 2), OPARA_DTYPE_I64);
    one_node(&t, OPARA__OP_ADD, 2, idx, 1);
    CHECK_EQ(one_infer(&t, 1), OPARA_ERR_BAD_DTYPE);
    CHECK(strstr(opara_runtime_last_error(g_rt), "'n0' (Add)") != NULL);
    one_free(&t);
    one_init(&t); /* Gather with float indices */
    idx[0] = one_input(&t, shp(1, 2), F32);
    idx[1] = one_input(&t, shp(1, 2), F32);
    one_node(&t, OPARA__OP_GATHER, 2, idx, 1);
    CHECK_EQ(one_infer(&t, 1), OPARA_ERR_BAD_DTYPE);
    one_free(&t);
}

/* One node op over inputs of the given shapes and dtypes. */
static opara_result run_typed(one* t, opara__op op, uint32_t n_in, const opara__shape* ins, const opara_dtype* dts) {
    int32_t idx[8];
    uint32_t k;
    one_init(t);
    for (k = 0; k < n_in; ++k) idx[k] = ins[k].ndim < 0 ? -1 : one_input(t, ins[k], dts[k]);
    one_node(t, op, n_in, idx, 1);
    return one_infer(t, 1);
}

static void a_left(one* t);

OT_TEST(logic_ops_broadcast_and_give_bool) {
    static const opara_dtype f32x3[3] = {F32, F32, F32}, bools[2] = {OPARA_DTYPE_BOOL, OPARA_DTYPE_BOOL};
    static const opara_dtype mixed[2] = {F32, OPARA_DTYPE_I64}, i64[1] = {OPARA_DTYPE_I64};
    opara__shape cmp[] = {shp(3, 2, 1, 3), shp(2, 4, 1)}, var3[] = {shp(1, 3), shp(2, 2, 1), shp(3, 1, 1, 3)};
    opara__shape omitted[] = {shp(1, 3), shp(-1), shp(1, 3)}, one_in[] = {shp(2, 2, 3)};
    one t;
    REQUIRE(run_typed(&t, OPARA__OP_GREATER_OR_EQUAL, 2, cmp, f32x3) == OPARA_OK); /* test_greater_equal_bcast-like */
    CHECK_SHAPE(&t.shapes[t.outs[0]], shp(3, 2, 4, 3));
    CHECK_EQ(t.dtypes[t.outs[0]], OPARA_DTYPE_BOOL);
    one_free(&t);
    REQUIRE(run_typed(&t, OPARA__OP_XOR, 2, cmp, bools) == OPARA_OK);
    CHECK_EQ(t.dtypes[t.outs[0]], OPARA_DTYPE_BOOL);
    one_free(&t);
    CHECK_EQ(run_typed(&t, OPARA__OP_AND, 2, cmp, f32x3), OPARA_ERR_BAD_DTYPE); /* And takes bool only */
    CHECK(strstr(opara_runtime_last_error(g_rt), "'n0' (And)") != NULL);
    one_free(&t);
    CHECK_EQ(run_typed(&t, OPARA__OP_LESS, 2, cmp, mixed), OPARA_ERR_BAD_DTYPE); /* operands of one type */
    one_free(&t);
    CHECK_EQ(run_typed(&t, OPARA__OP_IS_NAN, 1, one_in, i64), OPARA_ERR_BAD_DTYPE); /* a float type */
    one_free(&t);
    REQUIRE(run_typed(&t, OPARA__OP_IS_INF, 1, one_in, f32x3) == OPARA_OK);
    CHECK_EQ(t.dtypes[t.outs[0]], OPARA_DTYPE_BOOL);
    one_free(&t);
    one_init(&t); /* the operands' type */
    {
        int32_t idx[2];
        idx[0] = one_input(&t, cmp[0], OPARA_DTYPE_U8);
        idx[1] = one_input(&t, cmp[1], OPARA_DTYPE_U8);
        one_node(&t, OPARA__OP_BIT_SHIFT, 2, idx, 1);
        a_left(&t);
        REQUIRE(one_infer(&t, 1) == OPARA_OK);
    }
    CHECK_EQ(t.dtypes[t.outs[0]], OPARA_DTYPE_U8);
    one_free(&t);
    REQUIRE(run_typed(&t, OPARA__OP_MAX, 3, var3, f32x3) == OPARA_OK); /* multidirectional, three inputs */
    CHECK_SHAPE(&t.shapes[t.outs[0]], shp(3, 1, 2, 3));
    CHECK_EQ(t.dtypes[t.outs[0]], F32);
    one_free(&t);
    REQUIRE(run_typed(&t, OPARA__OP_SUM, 1, one_in, f32x3) == OPARA_OK); /* a single input */
    CHECK_SHAPE(&t.shapes[t.outs[0]], shp(2, 2, 3));
    one_free(&t);
    CHECK(run_typed(&t, OPARA__OP_MEAN, 3, omitted, f32x3) != OPARA_OK); /* no input may be omitted */
    one_free(&t);
}

static opara_result record_of(one* t, opara__op op, uint32_t n_in, const opara__shape* ins, attrs_fn attrs,
                              opara__node_params* p);
static void a_fmod(one* t) { opara__node_set_int(&t->g, t->node, "fmod", 1); }
static void a_left(one* t) { opara__node_set_string(&t->g, t->node, "direction", "LEFT"); }
static void a_no_negative(one* t) { opara__node_set_int(&t->g, t->node, "detect_negative", 0); }

OT_TEST(record_resolves_logic_attributes) {
    opara__shape two[2], x = shp(2, 2, 3);
    opara__node_params p;
    one t;
    two[0] = shp(2, 2, 3), two[1] = shp(1, 3);
    REQUIRE(record_of(&t, OPARA__OP_MOD, 2, two, NULL, &p) == OPARA_OK);
    CHECK(p.u.broadcast.fmod == 0 && p.u.broadcast.strides[1][0] == 0 && p.u.broadcast.strides[1][1] == 1);
    one_free(&t);
    REQUIRE(record_of(&t, OPARA__OP_MOD, 2, two, a_fmod, &p) == OPARA_OK);
    CHECK(p.u.broadcast.fmod == 1);
    one_free(&t);
    REQUIRE(record_of(&t, OPARA__OP_BIT_SHIFT, 2, two, a_left, &p) == OPARA_OK);
    CHECK(p.u.broadcast.shift_left == 1);
    one_free(&t);
    CHECK(record_of(&t, OPARA__OP_BIT_SHIFT, 2, two, NULL, &p) != OPARA_OK); /* direction is required */
    one_free(&t);
    REQUIRE(record_of(&t, OPARA__OP_IS_INF, 1, &x, NULL, &p) == OPARA_OK);
    CHECK(p.u.is_inf.detect_negative == 1 && p.u.is_inf.detect_positive == 1);
    one_free(&t);
    REQUIRE(record_of(&t, OPARA__OP_IS_INF, 1, &x, a_no_negative, &p) == OPARA_OK);
    CHECK(p.u.is_inf.detect_negative == 0 && p.u.is_inf.detect_positive == 1);
    one_free(&t);
}

static int64_t cast_to;
static void a_cast(one* t) { opara__node_set_int(&t->g, t->node, "to", cast_to); }

OT_TEST(cast_type) {
    one t;
    opara__shape x[] = {shp(2, 2, 3)};
    cast_to = OPARA_DTYPE_F16;
    REQUIRE(run(&t, OPARA__OP_CAST, 1, x, 1, a_cast) == OPARA_OK);
    CHECK_EQ(t.dtypes[t.outs[0]], OPARA_DTYPE_F16);
    CHECK_SHAPE(&t.shapes[t.outs[0]], shp(2, 2, 3));
    one_free(&t);
    cast_to = 99;
    CHECK_EQ(run(&t, OPARA__OP_CAST, 1, x, 1, a_cast), OPARA_ERR_BAD_DTYPE);
    one_free(&t);
    cast_to = -1;
    CHECK_EQ(run(&t, OPARA__OP_CAST, 1, x, 1, a_cast), OPARA_ERR_BAD_DTYPE);
    one_free(&t);
}

static void a_pad(one* t) { set_ints(t, "pads", 8, 0, 0, 1, 3, 0, 0, 2, 4); }
static void a_pad_crop(one* t) { set_ints(t, "pads", 4, -1, 0, 0, -2); }
static void a_pad_axes(one* t) { set_ints(t, "pads", 2, 1, 2); set_ints(t, "axes", 1, -1); }
static void a_pad_reflect_bad(one* t) { set_ints(t, "pads", 4, 0, 3, 0, 0); opara__node_set_string(&t->g, t->node, "mode", "reflect"); }
static void a_pad_mode_bad(one* t) { set_ints(t, "pads", 4, 0, 0, 0, 0); opara__node_set_string(&t->g, t->node, "mode", "mirror"); }

OT_TEST(pad) {
    opara__shape x[] = {shp(4, 1, 3, 4, 5)};
    opara__shape y[] = {shp(2, 3, 3)};
    EXPECT1(OPARA__OP_PAD, x, a_pad, shp(4, 1, 3, 7, 12)); /* test_constant_pad */
    EXPECT1(OPARA__OP_PAD, y, a_pad_crop, shp(2, 2, 1));
    EXPECT1(OPARA__OP_PAD, y, a_pad_axes, shp(2, 3, 6));
    EXPECT_FAIL(OPARA__OP_PAD, y, a_pad_reflect_bad);
    EXPECT_FAIL(OPARA__OP_PAD, y, a_pad_mode_bad);
}

static void a_resize_scales(one* t) {
    float s[4];
    s[0] = 1.0f, s[1] = 1.0f, s[2] = 0.6f, s[3] = 0.6f;
    opara__node_set_floats(&t->g, t->node, "scales", s, 4);
}
static void a_resize_up(one* t) {
    float s[4];
    s[0] = 1.0f, s[1] = 1.0f, s[2] = 2.0f, s[3] = 3.0f;
    opara__node_set_floats(&t->g, t->node, "scales", s, 4);
    opara__node_set_string(&t->g, t->node, "mode", "linear");
}
static void a_resize_sizes(one* t) { set_ints(t, "sizes", 4, 1, 1, 1, 3); }
static void a_resize_both(one* t) { a_resize_scales(t); a_resize_sizes(t); }

OT_TEST(resize) {
    opara__shape x[] = {shp(4, 1, 1, 2, 4)};
    opara__shape y[] = {shp(4, 1, 1, 2, 2)};
    EXPECT1(OPARA__OP_RESIZE, x, a_resize_scales, shp(4, 1, 1, 1, 2)); /* test_resize_downsample_scales_nearest */
    EXPECT1(OPARA__OP_RESIZE, y, a_resize_up, shp(4, 1, 1, 4, 6));     /* test_resize_upsample_scales_linear-like */
    EXPECT1(OPARA__OP_RESIZE, x, a_resize_sizes, shp(4, 1, 1, 1, 3));  /* test_resize_downsample_sizes_nearest */
    EXPECT_FAIL(OPARA__OP_RESIZE, x, a_resize_both);
    EXPECT_FAIL(OPARA__OP_RESIZE, x, NULL);
}

OT_TEST(arity_is_checked) {
    opara__shape one_in[] = {shp(2, 2, 3)};
    opara__shape conv_no_w[] = {shp(4, 1, 1, 5, 5), shp(-1)};
    opara__shape slice_extra[] = {shp(2, 2, 3), shp(1, 1)};
    EXPECT_FAIL(OPARA__OP_ADD, one_in, NULL);
    conv_no_w[1].ndim = -1;
    EXPECT_FAIL(OPARA__OP_CONV, conv_no_w, NULL);
    EXPECT_FAIL(OPARA__OP_SLICE, slice_extra, a_slice_onnx); /* constant inputs belong in attributes */
}

OT_TEST(hostile_attributes_fail_cleanly) {
    one t;
    opara__shape x[] = {shp(4, 1, 1, 5, 5), shp(4, 1, 1, 3, 3)};
    int64_t big[4];
    int32_t idx[2];
    big[0] = big[1] = INT64_MAX, big[2] = big[3] = INT64_MIN;
    one_init(&t);
    idx[0] = one_input(&t, x[0], F32);
    idx[1] = one_input(&t, x[1], F32);
    one_node(&t, OPARA__OP_CONV, 2, idx, 1);
    opara__node_set_ints(&t.g, t.node, "strides", big, 2);
    opara__node_set_ints(&t.g, t.node, "dilations", big, 2);
    CHECK_EQ(one_infer(&t, 1), OPARA_ERR_SHAPE);
    one_free(&t);
    one_init(&t);
    idx[0] = one_input(&t, x[0], F32);
    idx[1] = one_input(&t, x[1], F32);
    one_node(&t, OPARA__OP_CONV_TRANSPOSE, 2, idx, 1);
    big[0] = big[1] = (int64_t)1 << 40;
    opara__node_set_ints(&t.g, t.node, "strides", big, 2);
    CHECK(one_infer(&t, 1) != OPARA_OK);
    one_free(&t);
}

/* ---- the broadcast function, against a naive reference ---------------------------------------- */

/* Reference: pad both shapes with leading ones to the larger rank; each output dim is the larger
   of the two, and they broadcast when every dim is that maximum or 1. */
static int naive_broadcast(const opara__shape* a, const opara__shape* b, opara__shape* out) {
    int32_t r = a->ndim > b->ndim ? a->ndim : b->ndim, d;
    out->ndim = r;
    for (d = 0; d < r; ++d) {
        int64_t da = d - (r - a->ndim) >= 0 ? a->dims[d - (r - a->ndim)] : 1;
        int64_t db = d - (r - b->ndim) >= 0 ? b->dims[d - (r - b->ndim)] : 1;
        int64_t m = da > db ? da : db;
        if ((da != m && da != 1) || (db != m && db != 1)) return 0;
        out->dims[d] = m;
    }
    return 1;
}

/* Reference offset of output multi-index idx in input s: row-major over s's own dims, with a
   coordinate of 0 wherever s has a 1. */
static int64_t naive_offset(const opara__shape* out, const int64_t* idx, const opara__shape* s) {
    int64_t off = 0;
    int32_t j;
    for (j = 0; j < s->ndim; ++j) {
        int64_t coord = s->dims[j] == 1 ? 0 : idx[j + (out->ndim - s->ndim)];
        off = off * s->dims[j] + coord;
    }
    return off;
}

/* Shape number `code` (in base 3) of the given rank, dims in {1, 2, 3}. */
static opara__shape small_shape(int rank, int code) {
    opara__shape s;
    int d;
    memset(&s, 0, sizeof s);
    s.ndim = rank;
    for (d = 0; d < rank; ++d, code /= 3) s.dims[d] = 1 + code % 3;
    return s;
}

static int n_small_shapes(int rank) { return rank == 0 ? 1 : rank == 1 ? 3 : rank == 2 ? 9 : 27; }

/* Every output element's offset through the strides equals the reference offset. */
static int check_strides(const opara__shape* out, const opara__shape* in, const int64_t* st) {
    int64_t idx[OPARA_MAX_DIMS], n = opara__shape_numel(out), flat, rest;
    int32_t d;
    for (flat = 0; flat < n; ++flat) {
        int64_t off = 0;
        for (d = out->ndim - 1, rest = flat; d >= 0; --d) idx[d] = rest % out->dims[d], rest /= out->dims[d];
        for (d = 0; d < out->ndim; ++d) off += idx[d] * st[d];
        if (off != naive_offset(out, idx, in)) return 0;
    }
    return 1;
}

OT_TEST(broadcast_matches_naive_reference) {
    int ra, rb, ca, cb, cases = 0, compatible = 0;
    for (ra = 0; ra <= 3; ++ra)
        for (rb = 0; rb <= 3; ++rb)
            for (ca = 0; ca < n_small_shapes(ra); ++ca)
                for (cb = 0; cb < n_small_shapes(rb); ++cb) {
                    opara__shape a = small_shape(ra, ca), b = small_shape(rb, cb), want, got;
                    const opara__shape* in[2];
                    int64_t st[2][OPARA_MAX_DIMS], to[OPARA_MAX_DIMS];
                    int ok_want = naive_broadcast(&a, &b, &want), ok;
                    in[0] = &a, in[1] = &b;
                    ok = opara__broadcast_shapes(in, 2, OPARA__SHAPE_STRICT, &got, st);
                    ++cases;
                    CHECK_EQ(ok, ok_want);
                    if (!ok || !ok_want) continue;
                    ++compatible;
                    CHECK_SHAPE(&got, want);
                    CHECK(check_strides(&got, &a, st[0]));
                    CHECK(check_strides(&got, &b, st[1]));
                    CHECK_EQ(opara__broadcast_to(&got, &a, to), 1);
                    CHECK(check_strides(&got, &a, to));
                    CHECK_EQ(opara__broadcast_to(&a, &got, to), same_shape(&a, &got)); /* only when a is the result */
                }
    OT_LOG("%d shape pairs, %d broadcast", cases, compatible);
    CHECK_EQ(cases, 40 * 40);
}

OT_TEST(broadcast_of_three_matches_the_reference) {
    int ca, cb, cc, bad = 0;
    for (ca = 0; ca < 27; ++ca)
        for (cb = 0; cb < 9; ++cb)
            for (cc = 0; cc < 3; ++cc) {
                opara__shape a = small_shape(3, ca), b = small_shape(2, cb), c = small_shape(1, cc), ab, want, got;
                const opara__shape* in[3];
                int64_t st[3][OPARA_MAX_DIMS];
                int ok_want = naive_broadcast(&a, &b, &ab) && naive_broadcast(&ab, &c, &want);
                in[0] = &a, in[1] = &b, in[2] = &c;
                if (opara__broadcast_shapes(in, 3, OPARA__SHAPE_STRICT, &got, st) != ok_want) ++bad;
                else if (ok_want && (!same_shape(&got, &want) || !check_strides(&got, &a, st[0]) ||
                                     !check_strides(&got, &b, st[1]) || !check_strides(&got, &c, st[2])))
                    ++bad;
            }
    CHECK_EQ(bad, 0);
}

/* ---- tolerant (import) and strict (session) modes -------------------------------------------- */

OT_TEST(broadcast_tolerant_mode_propagates_unknown_dims) {
    opara__shape a = shp(2, -1, 3), b = shp(2, 4, 1), c = shp(1, 2), d = shp(1, 3), batch = shp(2, 1, 3), got;
    const opara__shape* in[2];
    batch.dims[0] = OPARA__DIM_BATCH;
    in[0] = &a, in[1] = &b;
    CHECK_EQ(opara__broadcast_shapes(in, 2, OPARA__SHAPE_TOLERANT, &got, NULL), 1);
    CHECK_SHAPE(&got, shp(2, 4, 3)); /* the unknown dim yields to the known 4 */
    in[0] = &c, in[1] = &d;
    CHECK_EQ(opara__broadcast_shapes(in, 2, OPARA__SHAPE_STRICT, &got, NULL), 0);
    CHECK_EQ(opara__broadcast_shapes(in, 2, OPARA__SHAPE_TOLERANT, &got, NULL), 1);
    CHECK_SHAPE(&got, shp(1, -1)); /* 2 vs 3: left unknown for the graph's checker */
    in[0] = &batch, in[1] = &d;
    CHECK_EQ(opara__broadcast_shapes(in, 2, OPARA__SHAPE_TOLERANT, &got, NULL), 1);
    CHECK(got.ndim == 2 && got.dims[0] == OPARA__DIM_BATCH && got.dims[1] == 3);
    a.ndim = -1;
    in[0] = &a;
    CHECK_EQ(opara__broadcast_shapes(in, 2, OPARA__SHAPE_TOLERANT, &got, NULL), 1);
    CHECK_EQ(got.ndim, -1);
    CHECK_EQ(opara__broadcast_shapes(in, 2, OPARA__SHAPE_STRICT, &got, NULL), 0);
}

/* One node of `op` over inputs of the given shapes through the engine in `mode` (batch 2 when
   strict); output 0's shape in y. */
static opara_result node_shapes(one* t, opara__op op, uint32_t n_in, const opara__shape* ins, attrs_fn attrs,
                                opara__shape_mode mode, opara__shape* y) {
    const opara__shape* in[4];
    opara__shape* out[1];
    uint32_t k;
    int32_t idx[4];
    one_init(t);
    for (k = 0; k < n_in; ++k) {
        idx[k] = one_input(t, shp(0), F32);
        in[k] = &ins[k];
    }
    one_node(t, op, n_in, idx, 1);
    if (attrs) attrs(t);
    y->ndim = 7; /* overwritten either way */
    out[0] = y;
    return opara__infer_node_shapes(g_rt, &t->g, (uint32_t)t->node, mode, 2, in, out, NULL);
}

static void a_reshape_0_m1(one* t) { set_ints(t, "shape", 2, 0, -1); }
static void a_reshape_m1_6(one* t) { set_ints(t, "shape", 2, -1, 6); }
static void a_flatten_axis1(one* t) { opara__node_set_int(&t->g, t->node, "axis", 1); }

OT_TEST(tolerant_mode_keeps_the_batch_and_unknown_dims) {
    int64_t B = OPARA__DIM_BATCH;
    opara__shape conv[2], x = shp(3, 1, 2, 3), add[2], y;
    one t;
    conv[0] = shp(4, 1, 3, -1, 8), conv[1] = shp(4, 4, 3, 3, 3);
    conv[0].dims[0] = B, x.dims[0] = B;
    CHECK_EQ(node_shapes(&t, OPARA__OP_CONV, 2, conv, NULL, OPARA__SHAPE_TOLERANT, &y), OPARA_OK);
    CHECK(y.ndim == 4 && y.dims[0] == B && y.dims[1] == 4 && y.dims[2] == -1 && y.dims[3] == 6);
    one_free(&t);
    CHECK_EQ(node_shapes(&t, OPARA__OP_RESHAPE, 1, &x, a_reshape_0_m1, OPARA__SHAPE_TOLERANT, &y), OPARA_OK);
    CHECK(y.ndim == 2 && y.dims[0] == B && y.dims[1] == 6);
    one_free(&t);
    CHECK_EQ(node_shapes(&t, OPARA__OP_RESHAPE, 1, &x, a_reshape_m1_6, OPARA__SHAPE_TOLERANT, &y), OPARA_OK);
    CHECK(y.ndim == 2 && y.dims[0] == B && y.dims[1] == 6); /* the -1 is the batch itself */
    one_free(&t);
    CHECK_EQ(node_shapes(&t, OPARA__OP_FLATTEN, 1, &x, a_flatten_axis1, OPARA__SHAPE_TOLERANT, &y), OPARA_OK);
    CHECK(y.ndim == 2 && y.dims[0] == B && y.dims[1] == 6);
    one_free(&t);
    add[0] = shp(2, 5, -1), add[1] = shp(1, 3);
    CHECK_EQ(node_shapes(&t, OPARA__OP_ADD, 2, add, NULL, OPARA__SHAPE_TOLERANT, &y), OPARA_OK);
    CHECK_SHAPE(&y, shp(2, 5, 3));
    one_free(&t);
}

OT_TEST(strict_mode_checks_what_tolerant_mode_leaves_unknown) {
    opara__shape add[2], conv[2], y;
    one t;
    char before[OPARA__DETAIL_MAX + 1];
    add[0] = shp(2, 5, 2), add[1] = shp(1, 3);
    CHECK_EQ(node_shapes(&t, OPARA__OP_ADD, 2, add, NULL, OPARA__SHAPE_STRICT, &y), OPARA_ERR_SHAPE);
    CHECK(strstr(opara_runtime_last_error(g_rt), "do not broadcast") != NULL);
    one_free(&t);
    conv[0] = shp(4, 1, 4, 5, 5), conv[1] = shp(4, 8, 3, 3, 3); /* 4 input channels vs 3 */
    CHECK_EQ(node_shapes(&t, OPARA__OP_CONV, 2, conv, NULL, OPARA__SHAPE_STRICT, &y), OPARA_ERR_SHAPE);
    one_free(&t);
    snprintf(before, sizeof before, "%s", opara_runtime_last_error(g_rt));
    CHECK_EQ(node_shapes(&t, OPARA__OP_ADD, 2, add, NULL, OPARA__SHAPE_TOLERANT, &y), OPARA_OK);
    CHECK_SHAPE(&y, shp(2, 5, -1));
    one_free(&t);
    CHECK_EQ(node_shapes(&t, OPARA__OP_CONV, 2, conv, NULL, OPARA__SHAPE_TOLERANT, &y), OPARA_OK);
    CHECK_EQ(y.ndim, -1); /* the broken rule leaves the output unknown */
    one_free(&t);
    CHECK_STR(opara_runtime_last_error(g_rt), before); /* and tolerant mode reported nothing */
    conv[0] = shp(4, 2, 3, 5, 5);
    CHECK_EQ(node_shapes(&t, OPARA__OP_CONV, 2, conv, NULL, OPARA__SHAPE_STRICT, &y), OPARA_OK);
    CHECK_SHAPE(&y, shp(4, 2, 8, 3, 3));
    one_free(&t);
}


/* ---- the resolved parameter record ------------------------------------------------------------ */

static void a_k4_same_upper(one* t) { opara__node_set_string(&t->g, t->node, "auto_pad", "SAME_UPPER"); }
static void a_k4_same_lower(one* t) { opara__node_set_string(&t->g, t->node, "auto_pad", "SAME_LOWER"); }
static void a_ct_output_shape(one* t) { set_ints(t, "strides", 1, 2); set_ints(t, "output_shape", 1, 6); }
static void a_ct_output_shape_upper(one* t) { a_ct_output_shape(t); a_k4_same_upper(t); }
static void a_pool_k3s2_ceil(one* t) {
    set_ints(t, "kernel_shape", 2, 3, 3);
    set_ints(t, "strides", 2, 2, 2);
    set_ints(t, "pads", 4, 0, 1, 0, 1);
    opara__node_set_int(&t->g, t->node, "ceil_mode", 1);
}

/* The record of node `op` over the given input shapes (strict). */
static opara_result record_of(one* t, opara__op op, uint32_t n_in, const opara__shape* ins, attrs_fn attrs,
                              opara__node_params* p) {
    const opara__shape* in[4];
    opara__shape y, *out[1];
    uint32_t k;
    int32_t idx[4];
    one_init(t);
    for (k = 0; k < n_in; ++k) idx[k] = one_input(t, shp(0), F32), in[k] = &ins[k];
    one_node(t, op, n_in, idx, 1);
    if (attrs) attrs(t);
    out[0] = &y;
    return opara__infer_node_shapes(g_rt, &t->g, (uint32_t)t->node, OPARA__SHAPE_STRICT, 1, in, out, p);
}

static void a_topk2_axis1_smallest(one* t) {
    opara__node_set_int(&t->g, t->node, "k", 2);
    opara__node_set_int(&t->g, t->node, "axis", 1);
    opara__node_set_int(&t->g, t->node, "largest", 0);
}
static void a_topk5_axis1(one* t) {
    opara__node_set_int(&t->g, t->node, "k", 5);
    opara__node_set_int(&t->g, t->node, "axis", 1);
}

/* TopK: k along the axis for both outputs, indices i64, the record; k past the dim or absent fails. */
OT_TEST(topk) {
    opara__shape x[] = {shp(3, 3, 4, 5)};
    opara__node_params p;
    one t;
    REQUIRE(run(&t, OPARA__OP_TOPK, 1, x, 2, a_topk2_axis1_smallest) == OPARA_OK);
    CHECK_SHAPE(&t.shapes[t.outs[0]], shp(3, 3, 2, 5));
    CHECK_SHAPE(&t.shapes[t.outs[1]], shp(3, 3, 2, 5));
    CHECK_EQ(t.dtypes[t.outs[0]], OPARA_DTYPE_F32);
    CHECK_EQ(t.dtypes[t.outs[1]], OPARA_DTYPE_I64);
    one_free(&t);
    REQUIRE(record_of(&t, OPARA__OP_TOPK, 1, x, a_topk2_axis1_smallest, &p) == OPARA_OK);
    CHECK(p.axis == 1 && p.u.topk.k == 2 && p.u.topk.largest == 0 && p.u.topk.sorted == 1);
    one_free(&t);
    EXPECT_FAIL(OPARA__OP_TOPK, x, a_topk5_axis1);
    CHECK(strstr(opara_runtime_last_error(g_rt), "k 5 is not in [0, 4]") != NULL);
    EXPECT_FAIL(OPARA__OP_TOPK, x, NULL);
}

static void a_grid_cubic_border(one* t) {
    opara__node_set_string(&t->g, t->node, "mode", "cubic");
    opara__node_set_string(&t->g, t->node, "padding_mode", "border");
    opara__node_set_int(&t->g, t->node, "align_corners", 1);
}
static void a_grid_bad_mode(one* t) { opara__node_set_string(&t->g, t->node, "mode", "area"); }

/* GridSample: [N, C, Ho, Wo] from X [N, C, H, W] and grid [N, Ho, Wo, 2]; modes of opsets 16 and 20
   parsed into the record; other ranks, a grid that does not fit and unknown modes fail. */
OT_TEST(grid_sample) {
    opara__shape ok[] = {shp(4, 2, 3, 8, 9), shp(4, 2, 5, 6, 2)};
    opara__shape bad_last[] = {shp(4, 2, 3, 8, 9), shp(4, 2, 5, 6, 3)};
    opara__shape bad_n[] = {shp(4, 2, 3, 8, 9), shp(4, 1, 5, 6, 2)};
    opara__shape vol[] = {shp(5, 2, 3, 4, 8, 9), shp(5, 2, 4, 5, 6, 3)};
    opara__node_params p;
    one t;
    EXPECT1(OPARA__OP_GRID_SAMPLE, ok, NULL, shp(4, 2, 3, 5, 6));
    REQUIRE(record_of(&t, OPARA__OP_GRID_SAMPLE, 2, ok, a_grid_cubic_border, &p) == OPARA_OK);
    CHECK(p.u.grid.mode == OPARA__GRID_CUBIC && p.u.grid.padding == OPARA__GRID_BORDER && p.u.grid.align_corners == 1);
    one_free(&t);
    REQUIRE(record_of(&t, OPARA__OP_GRID_SAMPLE, 2, ok, NULL, &p) == OPARA_OK);
    CHECK(p.u.grid.mode == OPARA__GRID_LINEAR && p.u.grid.padding == OPARA__GRID_ZEROS && p.u.grid.align_corners == 0);
    one_free(&t);
    EXPECT_FAIL(OPARA__OP_GRID_SAMPLE, bad_last, NULL);
    EXPECT_FAIL(OPARA__OP_GRID_SAMPLE, bad_n, NULL);
    EXPECT_FAIL(OPARA__OP_GRID_SAMPLE, vol, NULL);
    CHECK(strstr(opara_runtime_last_error(g_rt), "only 2-D images") != NULL);
    EXPECT_FAIL(OPARA__OP_GRID_SAMPLE, ok, a_grid_bad_mode);
    CHECK(strstr(opara_runtime_last_error(g_rt), "mode 'area'") != NULL);
}

/* Det: [..., M, M] -> [...]; a matrix that is not square, or a vector, fails. */
OT_TEST(det) {
    opara__shape batch[] = {shp(4, 2, 3, 5, 5)}, one[] = {shp(2, 4, 4)}, wide[] = {shp(2, 4, 5)}, vec[] = {shp(1, 4)};
    EXPECT1(OPARA__OP_DET, batch, NULL, shp(2, 2, 3));
    EXPECT1(OPARA__OP_DET, one, NULL, shp(0));
    EXPECT_FAIL(OPARA__OP_DET, wide, NULL);
    EXPECT_FAIL(OPARA__OP_DET, vec, NULL);
}

/* ---- GatherElements .. ReverseSequence --------------------------------------------------------- */

static void a_batch_dims1(one* t) { opara__node_set_int(&t->g, t->node, "batch_dims", 1); }
static void a_reduction_max(one* t) { opara__node_set_string(&t->g, t->node, "reduction", "max"); }
static void a_reduction_bad(one* t) { opara__node_set_string(&t->g, t->node, "reduction", "avg"); }
static void a_repeats_2_3(one* t) { set_ints(t, "repeats", 2, 2, 3); }
static void a_repeats_short(one* t) { set_ints(t, "repeats", 1, 2); }
static void a_crd2(one* t) {
    opara__node_set_int(&t->g, t->node, "blocksize", 2);
    opara__node_set_string(&t->g, t->node, "mode", "CRD");
}
static void a_block2(one* t) { opara__node_set_int(&t->g, t->node, "blocksize", 2); }
static void a_block3(one* t) { opara__node_set_int(&t->g, t->node, "blocksize", 3); }
static void a_lower_k2(one* t) {
    opara__node_set_int(&t->g, t->node, "upper", 0);
    opara__node_set_int(&t->g, t->node, "k", -2);
}
static void a_depth10_axis1(one* t) {
    opara__node_set_int(&t->g, t->node, "depth", 10);
    opara__node_set_int(&t->g, t->node, "axis", 1);
}
static void a_k_huge(one* t) { opara__node_set_int(&t->g, t->node, "k", INT64_MAX); }
static void a_depth0(one* t) { opara__node_set_int(&t->g, t->node, "depth", 0); }
static void a_batch0_time1(one* t) {
    opara__node_set_int(&t->g, t->node, "batch_axis", 0);
    opara__node_set_int(&t->g, t->node, "time_axis", 1);
}

OT_TEST(gather_scatter_shapes_follow_onnx) {
    opara__shape ge[2], se[3], gnd[2], gnd_b[2], snd[3], bad[3];
    ge[0] = shp(2, 3, 3), ge[1] = shp(2, 2, 3); /* test_gather_elements_1 */
    EXPECT1(OPARA__OP_GATHER_ELEMENTS, ge, NULL, shp(2, 2, 3));
    ge[1] = shp(2, 2, 4); /* wider than the data off the axis */
    EXPECT_FAIL(OPARA__OP_GATHER_ELEMENTS, ge, NULL);
    ge[1] = shp(1, 3); /* another rank */
    EXPECT_FAIL(OPARA__OP_GATHER_ELEMENTS, ge, NULL);
    se[0] = shp(2, 1, 5), se[1] = shp(2, 1, 2), se[2] = shp(2, 1, 2); /* test_scatter_elements_with_axis */
    EXPECT1(OPARA__OP_SCATTER_ELEMENTS, se, a_axis1, shp(2, 1, 5));
    EXPECT1(OPARA__OP_SCATTER_ELEMENTS, se, a_reduction_max, shp(2, 1, 5));
    EXPECT1(OPARA__OP_SCATTER, se, a_axis1, shp(2, 1, 5));
    EXPECT_FAIL(OPARA__OP_SCATTER_ELEMENTS, se, a_reduction_bad);
    memcpy(bad, se, sizeof se);
    bad[2] = shp(2, 1, 3); /* updates not of the indices' shape */
    EXPECT_FAIL(OPARA__OP_SCATTER_ELEMENTS, bad, NULL);
    gnd[0] = shp(3, 2, 2, 2), gnd[1] = shp(3, 2, 1, 2); /* test_gathernd_example_float32 */
    EXPECT1(OPARA__OP_GATHER_ND, gnd, NULL, shp(3, 2, 1, 2));
    gnd_b[0] = shp(3, 2, 2, 2), gnd_b[1] = shp(2, 2, 1); /* test_gathernd_example_int32_batch_dim1 */
    EXPECT1(OPARA__OP_GATHER_ND, gnd_b, a_batch_dims1, shp(2, 2, 2));
    gnd[1] = shp(2, 1, 4); /* tuples longer than the rank */
    EXPECT_FAIL(OPARA__OP_GATHER_ND, gnd, NULL);
    snd[0] = shp(3, 4, 4, 4), snd[1] = shp(2, 2, 1), snd[2] = shp(3, 2, 4, 4); /* test_scatternd */
    EXPECT1(OPARA__OP_SCATTER_ND, snd, NULL, shp(3, 4, 4, 4));
    snd[2] = shp(3, 2, 4, 3);
    EXPECT_FAIL(OPARA__OP_SCATTER_ND, snd, NULL);
}

OT_TEST(index_pattern_shapes_follow_onnx) {
    opara__shape x[1], img[1], s2d[1], vec[1], hot[2], rs[2], scalar;
    x[0] = shp(3, 2, 3, 4), img[0] = shp(4, 1, 8, 2, 3), s2d[0] = shp(4, 1, 2, 6, 9), vec[0] = shp(1, 3);
    scalar.ndim = 0;
    EXPECT1(OPARA__OP_SIZE, x, NULL, scalar);
    EXPECT1(OPARA__OP_TRILU, x, a_lower_k2, shp(3, 2, 3, 4));
    EXPECT_FAIL(OPARA__OP_TRILU, vec, NULL);
    EXPECT1(OPARA__OP_TILE, vec, a_repeats_short, shp(1, 6));
    EXPECT_FAIL(OPARA__OP_TILE, x, a_repeats_2_3);
    EXPECT1(OPARA__OP_DEPTH_TO_SPACE, img, a_crd2, shp(4, 1, 2, 4, 6));
    EXPECT_FAIL(OPARA__OP_DEPTH_TO_SPACE, img, a_block3); /* 8 channels, not a multiple of 9 */
    EXPECT1(OPARA__OP_SPACE_TO_DEPTH, s2d, a_block3, shp(4, 1, 18, 2, 3));
    EXPECT_FAIL(OPARA__OP_SPACE_TO_DEPTH, s2d, a_block2); /* width 9 */
    EXPECT_FAIL(OPARA__OP_EYE_LIKE, x, NULL);
    hot[0] = shp(2, 2, 3), hot[1] = shp(1, 2); /* indices, values (canonical form) */
    EXPECT1(OPARA__OP_ONE_HOT, hot, a_depth10_axis1, shp(3, 2, 10, 3));
    EXPECT_FAIL(OPARA__OP_ONE_HOT, hot, a_depth0);
    hot[1] = shp(1, 3);
    EXPECT_FAIL(OPARA__OP_ONE_HOT, hot, a_depth10_axis1);
    rs[0] = shp(3, 3, 4, 2), rs[1] = shp(1, 3); /* as test_reversesequence_batch: [batch, time, ...] */
    EXPECT1(OPARA__OP_REVERSE_SEQUENCE, rs, a_batch0_time1, shp(3, 3, 4, 2));
    EXPECT_FAIL(OPARA__OP_REVERSE_SEQUENCE, rs, NULL); /* default batch_axis 1: 3 lengths for 4 batches */
    rs[1] = shp(1, 4);
    EXPECT1(OPARA__OP_REVERSE_SEQUENCE, rs, NULL, shp(3, 3, 4, 2));
    EXPECT_FAIL(OPARA__OP_REVERSE_SEQUENCE, rs, a_batch0_time1);
}

OT_TEST(record_resolves_index_attributes) {
    opara__shape x = shp(2, 3, 4), img = shp(4, 1, 8, 2, 3), se[3], hot[2], nd[2];
    opara__node_params p;
    one t;
    REQUIRE(record_of(&t, OPARA__OP_TRILU, 1, &x, NULL, &p) == OPARA_OK);
    CHECK(p.resolved && p.u.index.upper == 1 && p.u.index.k == 0);
    one_free(&t);
    REQUIRE(record_of(&t, OPARA__OP_TRILU, 1, &x, a_lower_k2, &p) == OPARA_OK);
    CHECK(p.u.index.upper == 0 && p.u.index.k == -2);
    one_free(&t);
    REQUIRE(record_of(&t, OPARA__OP_EYE_LIKE, 1, &x, a_k_huge, &p) == OPARA_OK);
    CHECK(p.u.index.k == INT64_C(1) << 40); /* clamped: the kernels add it to indices */
    one_free(&t);
    REQUIRE(record_of(&t, OPARA__OP_DEPTH_TO_SPACE, 1, &img, a_crd2, &p) == OPARA_OK);
    CHECK(p.u.index.blocksize == 2 && p.u.index.crd == 1);
    one_free(&t);
    REQUIRE(record_of(&t, OPARA__OP_DEPTH_TO_SPACE, 1, &img, a_block2, &p) == OPARA_OK);
    CHECK(p.u.index.crd == 0);
    one_free(&t);
    se[0] = shp(2, 3, 4), se[1] = shp(2, 3, 2), se[2] = shp(2, 3, 2);
    REQUIRE(record_of(&t, OPARA__OP_SCATTER_ELEMENTS, 3, se, a_reduction_max, &p) == OPARA_OK);
    CHECK(p.u.index.reduction == OPARA__SCATTER_MAX && p.axis == 0);
    one_free(&t);
    REQUIRE(record_of(&t, OPARA__OP_GATHER_ELEMENTS, 2, se, a_axis_neg1, &p) == OPARA_OK);
    CHECK(p.axis == 1); /* -1 of rank 2 */
    one_free(&t);
    nd[0] = shp(3, 2, 2, 2), nd[1] = shp(2, 2, 1);
    REQUIRE(record_of(&t, OPARA__OP_GATHER_ND, 2, nd, a_batch_dims1, &p) == OPARA_OK);
    CHECK(p.u.index.batch_dims == 1);
    one_free(&t);
    hot[0] = shp(1, 4), hot[1] = shp(1, 2);
    REQUIRE(record_of(&t, OPARA__OP_ONE_HOT, 2, hot, a_depth10_axis1, &p) == OPARA_OK);
    CHECK(p.axis == 1 && p.u.index.depth == 10);
    one_free(&t);
}

static void a_lrn(one* t) {
    opara__node_set_int(&t->g, t->node, "size", 5);
    opara__node_set_float(&t->g, t->node, "alpha", 0.5f);
}
static void a_axes_23(one* t) { set_ints(t, "axes", 2, 2, -1); }
static void a_shrink(one* t) { opara__node_set_float(&t->g, t->node, "bias", 1.5f); }
static void a_cubic(one* t) {
    set_ints(t, "sizes", 4, 1, 1, 8, 8);
    opara__node_set_string(&t->g, t->node, "mode", "cubic");
    opara__node_set_int(&t->g, t->node, "exclude_outside", 1);
}

OT_TEST(record_of_the_norm_family) {
    opara__shape x[] = {shp(4, 1, 3, 4, 4)};
    opara__node_params p;
    one t;
    REQUIRE(record_of(&t, OPARA__OP_LRN, 1, x, a_lrn, &p) == OPARA_OK); /* ONNX's defaults for the others */
    CHECK(p.u.lrn.size == 5 && p.u.lrn.alpha == 0.5f && p.u.lrn.beta == 0.75f && p.u.lrn.bias == 1.0f);
    one_free(&t);
    REQUIRE(record_of(&t, OPARA__OP_MVN, 1, x, NULL, &p) == OPARA_OK); /* default axes 0, 2, 3 */
    CHECK(p.u.reduce.axes[0] && !p.u.reduce.axes[1] && p.u.reduce.axes[2] && p.u.reduce.axes[3]);
    one_free(&t);
    REQUIRE(record_of(&t, OPARA__OP_MVN, 1, x, a_axes_23, &p) == OPARA_OK);
    CHECK(!p.u.reduce.axes[0] && !p.u.reduce.axes[1] && p.u.reduce.axes[2] && p.u.reduce.axes[3]);
    one_free(&t);
    REQUIRE(record_of(&t, OPARA__OP_SHRINK, 1, x, a_shrink, &p) == OPARA_OK);
    CHECK(p.u.activation.alpha == 0.5f && p.u.activation.beta == 1.5f);
    one_free(&t);
    REQUIRE(record_of(&t, OPARA__OP_INSTANCE_NORM, 1, x, NULL, &p) != OPARA_OK); /* needs scale and B */
    one_free(&t);
    REQUIRE(record_of(&t, OPARA__OP_RESIZE, 1, x, a_cubic, &p) == OPARA_OK);
    CHECK(p.u.resize.mode == OPARA__RESIZE_CUBIC && p.u.resize.cubic_coeff_a == -0.75f && p.u.resize.exclude_outside);
    one_free(&t);
}

OT_TEST(cubic_taps_follow_onnx) {
    opara__resize_params rp;
    int64_t idx[4];
    float w[4];
    memset(&rp, 0, sizeof rp);
    rp.coord = OPARA__RESIZE_ASYMMETRIC;
    rp.cubic_coeff_a = -0.75f;
    rp.scale[0] = 2.0f;
    /* output 1 of 4 -> input 0.5: taps -1 (clamped to 0), 0, 1, 2 with Keys' weights at 1.5, 0.5, 0.5, 1.5 */
    REQUIRE(opara__resize_cubic_taps(&rp, 0, 1, 4, 8, idx, w));
    CHECK(idx[0] == 0 && idx[1] == 0 && idx[2] == 1 && idx[3] == 2);
    CHECK(fabsf(w[0] + 0.09375f) < 1e-6f && fabsf(w[1] - 0.59375f) < 1e-6f && fabsf(w[2] - 0.59375f) < 1e-6f &&
          fabsf(w[3] + 0.09375f) < 1e-6f);
    rp.exclude_outside = 1; /* tap -1 weighs 0, the rest sum to 1 */
    REQUIRE(opara__resize_cubic_taps(&rp, 0, 1, 4, 8, idx, w));
    CHECK(w[0] == 0.0f && fabsf(w[1] + w[2] + w[3] - 1.0f) < 1e-6f && fabsf(w[1] - 0.59375f / 1.09375f) < 1e-6f);
}

OT_TEST(record_resolves_auto_pad_and_defaults) {
    opara__shape conv[2], ct[2], pool = shp(4, 1, 1, 6, 6);
    opara__node_params p;
    const opara__window_params* w = &p.u.window;
    one t;
    conv[0] = shp(3, 1, 1, 5), conv[1] = shp(3, 2, 1, 4);
    /* kernel 4, stride 1, input 5: output 5, total padding 4 - 1 = 3: the odd one at the end for SAME_UPPER */
    REQUIRE(record_of(&t, OPARA__OP_CONV, 2, conv, a_k4_same_upper, &p) == OPARA_OK);
    CHECK(p.resolved && w->n_spatial == 1 && w->kernel[0] == 4 && w->strides[0] == 1 && w->dilations[0] == 1 && w->group == 1);
    CHECK(w->pads[0] == 1 && w->pads[1] == 2);
    one_free(&t);
    REQUIRE(record_of(&t, OPARA__OP_CONV, 2, conv, a_k4_same_lower, &p) == OPARA_OK);
    CHECK(w->pads[0] == 2 && w->pads[1] == 1);
    one_free(&t);
    /* ConvTranspose, input 3, stride 2, kernel 3: full size 7, output_shape 6: total 1, at the start
       unless SAME_UPPER (ONNX's ConvTranspose rule) */
    ct[0] = shp(3, 1, 1, 3), ct[1] = shp(3, 1, 1, 3);
    REQUIRE(record_of(&t, OPARA__OP_CONV_TRANSPOSE, 2, ct, a_ct_output_shape, &p) == OPARA_OK);
    CHECK(w->has_output_shape && w->output_shape[0] == 6 && w->pads[0] == 1 && w->pads[1] == 0);
    one_free(&t);
    REQUIRE(record_of(&t, OPARA__OP_CONV_TRANSPOSE, 2, ct, a_ct_output_shape_upper, &p) == OPARA_OK);
    CHECK(w->pads[0] == 0 && w->pads[1] == 1);
    one_free(&t);
    REQUIRE(record_of(&t, OPARA__OP_MAX_POOL, 1, &pool, a_pool_k3s2_ceil, &p) == OPARA_OK);
    CHECK(w->n_spatial == 2 && w->ceil_mode == 1 && w->kernel[1] == 3 && w->strides[0] == 2);
    CHECK(w->pads[0] == 0 && w->pads[1] == 1 && w->pads[2] == 0 && w->pads[3] == 1);
    one_free(&t);
    conv[1] = shp(3, 2, 3, 4); /* 1 input channel vs 3: not resolved */
    CHECK_EQ(record_of(&t, OPARA__OP_CONV, 2, conv, NULL, &p), OPARA_ERR_SHAPE);
    CHECK_EQ(p.resolved, 0);
    one_free(&t);
}

/* The scalar attributes the backends read, with ONNX's defaults when absent. */
static void a_gemm_scalars(one* t) {
    opara__node_set_int(&t->g, t->node, "transB", 1);
    opara__node_set_float(&t->g, t->node, "alpha", 0.5f);
    opara__node_set_string(&t->g, t->node, "activation", "Relu");
}
static void a_clip_min(one* t) { opara__node_set_float(&t->g, t->node, "min", -2.0f); }
static void a_conv_tanh(one* t) { opara__node_set_string(&t->g, t->node, "activation", "Tanh"); }
static void a_pool_k2_count_pad(one* t) {
    set_ints(t, "kernel_shape", 2, 2, 2);
    opara__node_set_int(&t->g, t->node, "count_include_pad", 1);
}
static void a_keepdims0_eps(one* t) {
    opara__node_set_int(&t->g, t->node, "keepdims", 0);
    opara__node_set_float(&t->g, t->node, "epsilon", 0.25f);
}

static void a_arg_last(one* t) {
    opara__node_set_int(&t->g, t->node, "axis", -1);
    opara__node_set_int(&t->g, t->node, "keepdims", 0);
    opara__node_set_int(&t->g, t->node, "select_last_index", 1);
}
static void a_cum_sum_modes(one* t) {
    opara__node_set_int(&t->g, t->node, "axis", -2);
    opara__node_set_int(&t->g, t->node, "exclusive", 1);
    opara__node_set_int(&t->g, t->node, "reverse", 1);
}

static void a_alpha_half(one* t) { opara__node_set_float(&t->g, t->node, "alpha", 0.5f); }
OT_TEST(record_resolves_scalar_attributes) {
    opara__shape mat[2], conv[2], x = shp(2, 2, 3), img = shp(4, 1, 1, 4, 4);
    opara__node_params p;
    one t;
    mat[0] = shp(2, 2, 3), mat[1] = shp(2, 4, 3);
    REQUIRE(record_of(&t, OPARA__OP_GEMM, 2, mat, a_gemm_scalars, &p) == OPARA_OK);
    CHECK(p.u.gemm.trans_a == 0 && p.u.gemm.trans_b == 1 && p.u.gemm.alpha == 0.5f && p.u.gemm.beta == 1.0f);
    CHECK(p.u.gemm.activation == OPARA__FUSED_RELU);
    one_free(&t);
    REQUIRE(record_of(&t, OPARA__OP_LEAKY_RELU, 1, &x, NULL, &p) == OPARA_OK);
    CHECK(p.u.activation.alpha == 0.01f);
    one_free(&t);
    REQUIRE(record_of(&t, OPARA__OP_HARD_SIGMOID, 1, &x, NULL, &p) == OPARA_OK);
    CHECK(p.u.activation.alpha == 0.2f && p.u.activation.beta == 0.5f);
    one_free(&t);
    REQUIRE(record_of(&t, OPARA__OP_SELU, 1, &x, NULL, &p) == OPARA_OK);
    CHECK(p.u.activation.alpha == 1.67326319217681884765625f && p.u.activation.gamma == 1.05070102214813232421875f);
    one_free(&t);
    REQUIRE(record_of(&t, OPARA__OP_ELU, 1, &x, NULL, &p) == OPARA_OK);
    CHECK(p.u.activation.alpha == 1.0f);
    one_free(&t);
    REQUIRE(record_of(&t, OPARA__OP_THRESHOLDED_RELU, 1, &x, a_alpha_half, &p) == OPARA_OK);
    CHECK(p.u.activation.alpha == 0.5f);
    one_free(&t);
    REQUIRE(record_of(&t, OPARA__OP_CLIP, 1, &x, a_clip_min, &p) == OPARA_OK);
    CHECK(p.u.activation.min == -2.0f && p.u.activation.max == HUGE_VALF);
    one_free(&t);
    conv[0] = shp(4, 1, 1, 4, 4), conv[1] = shp(4, 1, 1, 3, 3);
    REQUIRE(record_of(&t, OPARA__OP_CONV, 2, conv, a_conv_tanh, &p) == OPARA_OK);
    CHECK(p.u.window.activation == OPARA__FUSED_UNKNOWN && p.u.window.kernel[0] == 3);
    one_free(&t);
    REQUIRE(record_of(&t, OPARA__OP_AVERAGE_POOL, 1, &img, a_pool_k2_count_pad, &p) == OPARA_OK);
    CHECK(p.u.window.count_include_pad == 1 && p.u.window.storage_order == 0 && p.u.window.kernel[1] == 2);
    one_free(&t);
    REQUIRE(record_of(&t, OPARA__OP_REDUCE_MEAN, 1, &x, a_keepdims0_eps, &p) == OPARA_OK);
    CHECK(p.u.reduce.keepdims == 0 && p.u.reduce.axes[0] == 1 && p.u.reduce.axes[1] == 1);
    one_free(&t);
    REQUIRE(record_of(&t, OPARA__OP_REDUCE_LOG_SUM_EXP, 1, &x, a_keepdims0_eps, &p) == OPARA_OK);
    CHECK(p.u.reduce.keepdims == 0 && p.u.reduce.axes[0] == 1 && p.u.reduce.axes[1] == 1);
    one_free(&t);
    REQUIRE(record_of(&t, OPARA__OP_ARG_MIN, 1, &x, a_arg_last, &p) == OPARA_OK);
    CHECK(p.axis == 1 && p.u.reduce.keepdims == 0 && p.u.reduce.select_last_index == 1);
    one_free(&t);
    REQUIRE(record_of(&t, OPARA__OP_CUM_SUM, 1, &x, a_cum_sum_modes, &p) == OPARA_OK);
    CHECK(p.axis == 0 && p.u.reduce.exclusive == 1 && p.u.reduce.reverse == 1);
    one_free(&t);
    mat[0] = x, mat[1] = shp(1, 3); /* X and Scale */
    REQUIRE(record_of(&t, OPARA__OP_LAYER_NORM, 2, mat, a_keepdims0_eps, &p) == OPARA_OK);
    CHECK(p.u.epsilon == 0.25f && p.axis == 1);
    one_free(&t);
    REQUIRE(record_of(&t, OPARA__OP_CAST, 1, &x, NULL, &p) == OPARA_OK);
    CHECK(p.u.cast_to == -1); /* absent: the output's dtype */
    one_free(&t);
}

/* Transpose's perm (the reversal when absent), Pad's pads per dim through axes with its mode and
   value, as the backends read them. */
static void a_pad_axes_edge(one* t) {
    set_ints(t, "pads", 4, 2, -1, 3, 0);
    set_ints(t, "axes", 2, -1, 0);
    opara__node_set_string(&t->g, t->node, "mode", "edge");
    opara__node_set_float(&t->g, t->node, "constant_value", 2.5f);
}
static void a_pad_value_wrap(one* t) {
    set_ints(t, "pads", 4, 1, 0, 0, 1);
    opara__node_set_string(&t->g, t->node, "mode", "wrap");
    opara__node_set_float(&t->g, t->node, "value", -1.0f);
    opara__node_set_float(&t->g, t->node, "constant_value", 2.5f);
}

OT_TEST(record_resolves_transpose_and_pad) {
    opara__shape x = shp(3, 2, 3, 4), y = shp(2, 4, 5);
    opara__node_params p;
    one t;
    REQUIRE(record_of(&t, OPARA__OP_TRANSPOSE, 1, &x, NULL, &p) == OPARA_OK);
    CHECK(p.resolved && p.u.transpose.perm[0] == 2 && p.u.transpose.perm[1] == 1 && p.u.transpose.perm[2] == 0);
    one_free(&t);
    REQUIRE(record_of(&t, OPARA__OP_TRANSPOSE, 1, &x, a_perm102, &p) == OPARA_OK);
    CHECK(p.u.transpose.perm[0] == 1 && p.u.transpose.perm[1] == 0 && p.u.transpose.perm[2] == 2);
    one_free(&t);
    CHECK_EQ(record_of(&t, OPARA__OP_TRANSPOSE, 1, &x, a_perm_bad, &p), OPARA_ERR_SHAPE);
    CHECK_EQ(p.resolved, 0);
    one_free(&t);
    /* axes (-1, 0): dim 1 gets begin 2 / end 3, dim 0 begin -1 / end 0; 'constant_value' is the fill */
    REQUIRE(record_of(&t, OPARA__OP_PAD, 1, &y, a_pad_axes_edge, &p) == OPARA_OK);
    CHECK(p.resolved && p.u.pad.mode == OPARA__PAD_EDGE && p.u.pad.value == 2.5f);
    CHECK(p.u.pad.begin[0] == -1 && p.u.pad.end[0] == 0 && p.u.pad.begin[1] == 2 && p.u.pad.end[1] == 3);
    one_free(&t);
    REQUIRE(record_of(&t, OPARA__OP_PAD, 1, &y, a_pad_value_wrap, &p) == OPARA_OK); /* 'value' wins */
    CHECK(p.u.pad.mode == OPARA__PAD_WRAP && p.u.pad.value == -1.0f && p.u.pad.begin[0] == 1 && p.u.pad.end[1] == 1);
    CHECK(strcmp(opara__pad_mode_name(p.u.pad.mode), "wrap") == 0);
    one_free(&t);
}

/* Resize: scales or sizes through 'axes' (ONNX: the i-th value is for axes[i], other dims stay),
   the scale per dim (given, else output / input), roi, and the modes parsed once. */
static void a_resize_axes(one* t) {
    float s[1] = {2.5f};
    opara__node_set_floats(&t->g, t->node, "scales", s, 1);
    set_ints(t, "axes", 1, -1);
    opara__node_set_string(&t->g, t->node, "coordinate_transformation_mode", "align_corners");
    opara__node_set_string(&t->g, t->node, "nearest_mode", "ceil");
}
static void a_resize_axes_sizes_roi(one* t) {
    float roi[4] = {0.25f, 0.0f, 0.75f, 1.0f};
    set_ints(t, "sizes", 2, 5, 6);
    set_ints(t, "axes", 2, 3, 2);
    opara__node_set_floats(&t->g, t->node, "roi", roi, 4);
    opara__node_set_string(&t->g, t->node, "coordinate_transformation_mode", "tf_crop_and_resize");
    opara__node_set_string(&t->g, t->node, "mode", "linear");
    opara__node_set_float(&t->g, t->node, "extrapolation_value", 7.0f);
}
static void a_resize_axes_short(one* t) { a_resize_scales(t); set_ints(t, "axes", 2, 2, 3); }
static void a_resize_axis_out_of_range(one* t) { a_resize_axes(t); set_ints(t, "axes", 1, 9); }
static void a_resize_unknown_coord(one* t) {
    a_resize_sizes(t);
    opara__node_set_string(&t->g, t->node, "coordinate_transformation_mode", "no_such_mode");
}

OT_TEST(record_resolves_resize) {
    opara__shape x = shp(4, 1, 2, 2, 4), y;
    opara__node_params p;
    const opara__resize_params* r = &p.u.resize;
    one t;
    REQUIRE(record_of(&t, OPARA__OP_RESIZE, 1, &x, a_resize_axes, &p) == OPARA_OK);
    CHECK(p.resolved && r->mode == OPARA__RESIZE_NEAREST && r->coord == OPARA__RESIZE_ALIGN_CORNERS);
    CHECK(r->nearest == OPARA__NEAREST_CEIL && r->antialias == 0 && r->extrapolation_value == 0.0f);
    CHECK(r->scale[0] == 1.0f && r->scale[1] == 1.0f && r->scale[2] == 1.0f && r->scale[3] == 2.5f);
    CHECK(r->roi_lo[3] == 0.0f && r->roi_hi[3] == 1.0f);
    one_free(&t);
    CHECK_EQ(node_shapes(&t, OPARA__OP_RESIZE, 1, &x, a_resize_axes, OPARA__SHAPE_STRICT, &y), OPARA_OK);
    CHECK_SHAPE(&y, shp(4, 1, 2, 2, 10)); /* 4 * 2.5 along the last axis only */
    one_free(&t);
    REQUIRE(record_of(&t, OPARA__OP_RESIZE, 1, &x, a_resize_axes_sizes_roi, &p) == OPARA_OK);
    CHECK(r->mode == OPARA__RESIZE_LINEAR && r->coord == OPARA__RESIZE_TF_CROP_AND_RESIZE && r->extrapolation_value == 7.0f);
    CHECK(r->scale[2] == 3.0f && r->scale[3] == 1.25f && r->scale[1] == 1.0f); /* sizes 6 (dim 2) and 5 (dim 3) */
    CHECK(r->roi_lo[3] == 0.25f && r->roi_hi[3] == 0.75f && r->roi_lo[2] == 0.0f && r->roi_hi[2] == 1.0f);
    CHECK(r->roi_lo[0] == 0.0f && r->roi_hi[0] == 1.0f);
    one_free(&t);
    REQUIRE(record_of(&t, OPARA__OP_RESIZE, 1, &x, a_resize_unknown_coord, &p) == OPARA_OK); /* the backends refuse it */
    CHECK(r->coord == OPARA__RESIZE_COORD_UNKNOWN && r->scale[3] == 0.75f);
    one_free(&t);
    CHECK_EQ(record_of(&t, OPARA__OP_RESIZE, 1, &x, a_resize_axes_short, &p), OPARA_ERR_SHAPE); /* 4 scales, 2 axes */
    one_free(&t);
    CHECK_EQ(record_of(&t, OPARA__OP_RESIZE, 1, &x, a_resize_axis_out_of_range, &p), OPARA_ERR_SHAPE);
    one_free(&t);
}

/* ---- the quantized operators ------------------------------------------------------------------- */

/* A one-node graph over inputs of the given shapes and dtypes (ndim < 0: omitted). */
static opara_result quant_run(one* t, opara__op op, uint32_t n_in, const opara__shape* ins, const opara_dtype* dts,
                              uint32_t n_out, attrs_fn attrs) {
    int32_t idx[10];
    uint32_t k;
    one_init(t);
    for (k = 0; k < n_in; ++k) idx[k] = ins[k].ndim < 0 ? -1 : one_input(t, ins[k], dts[k]);
    one_node(t, op, n_in, idx, n_out);
    if (attrs) attrs(t);
    return one_infer(t, 1);
}

static void a_axis_minus3(one* t) { opara__node_set_int(&t->g, t->node, "axis", -3); }
static void a_out_i8(one* t) { opara__node_set_int(&t->g, t->node, "output_dtype", OPARA_DTYPE_I8); }
static void a_block_size2(one* t) { opara__node_set_int(&t->g, t->node, "block_size", 2); }

OT_TEST(quantize_dequantize_shapes_dtypes_and_record) {
    opara__shape per_axis[] = {shp(4, 1, 3, 4, 4), shp(1, 3), shp(1, 3)}, bad_axis[] = {shp(4, 1, 3, 4, 4), shp(1, 4), shp(1, 4)};
    opara__shape per_tensor[] = {shp(2, 5, 6), shp(0), shp(-1)}, one_elem[] = {shp(2, 5, 6), shp(1, 1), shp(1, 1)};
    const opara_dtype q_i8[] = {F32, F32, OPARA_DTYPE_I8}, q_u8[] = {F32, F32, OPARA_DTYPE_U8};
    const opara_dtype dq_i32[] = {OPARA_DTYPE_I32, F32, OPARA_DTYPE_I32}, dq_mixed[] = {OPARA_DTYPE_U8, F32, OPARA_DTYPE_I8};
    opara__node_params p;
    one t;
    REQUIRE(quant_run(&t, OPARA__OP_QUANTIZE_LINEAR, 3, per_axis, q_i8, 1, NULL) == OPARA_OK);
    CHECK_SHAPE(&t.shapes[t.outs[0]], shp(4, 1, 3, 4, 4));
    CHECK_EQ(t.dtypes[t.outs[0]], OPARA_DTYPE_I8); /* the zero point's type */
    REQUIRE(opara__infer_node_shapes(g_rt, &t.g, (uint32_t)t.node, OPARA__SHAPE_STRICT, 1,
                                     (const opara__shape* const[]){&per_axis[0], &per_axis[1], &per_axis[2]},
                                     (opara__shape* const[]){&t.shapes[t.outs[0]]}, &p) == OPARA_OK);
    CHECK(p.resolved && p.u.quant.per_axis && p.axis == 1 && p.u.quant.saturate);
    one_free(&t);
    CHECK_EQ(quant_run(&t, OPARA__OP_QUANTIZE_LINEAR, 3, bad_axis, q_i8, 1, NULL), OPARA_ERR_SHAPE);
    CHECK(strstr(opara_runtime_last_error(g_rt), "neither one value nor [3] along axis 1") != NULL);
    one_free(&t);
    REQUIRE(quant_run(&t, OPARA__OP_QUANTIZE_LINEAR, 3, bad_axis, q_i8, 1, a_axis_minus3) == OPARA_ERR_SHAPE); /* axis 1 */
    one_free(&t);
    REQUIRE(quant_run(&t, OPARA__OP_QUANTIZE_LINEAR, 2, per_tensor, q_u8, 1, NULL) == OPARA_OK);
    CHECK_EQ(t.dtypes[t.outs[0]], OPARA_DTYPE_U8); /* no zero point, no output_dtype: u8 */
    one_free(&t);
    REQUIRE(quant_run(&t, OPARA__OP_QUANTIZE_LINEAR, 2, per_tensor, q_u8, 1, a_out_i8) == OPARA_OK);
    CHECK_EQ(t.dtypes[t.outs[0]], OPARA_DTYPE_I8); /* opset 21's output_dtype */
    one_free(&t);
    CHECK_EQ(quant_run(&t, OPARA__OP_QUANTIZE_LINEAR, 3, one_elem, q_u8, 1, a_out_i8), OPARA_ERR_BAD_DTYPE);
    one_free(&t);
    CHECK_EQ(quant_run(&t, OPARA__OP_QUANTIZE_LINEAR, 3, one_elem, q_u8, 1, a_block_size2), OPARA_ERR_UNSUPPORTED);
    CHECK(strstr(opara_runtime_last_error(g_rt), "blocked quantization (block_size 2) is not supported") != NULL);
    one_free(&t);
    REQUIRE(quant_run(&t, OPARA__OP_DEQUANTIZE_LINEAR, 3, one_elem, dq_i32, 1, NULL) == OPARA_OK);
    CHECK_EQ(t.dtypes[t.outs[0]], OPARA_DTYPE_F32);
    one_free(&t);
    CHECK_EQ(quant_run(&t, OPARA__OP_DEQUANTIZE_LINEAR, 3, one_elem, dq_mixed, 1, NULL), OPARA_ERR_BAD_DTYPE);
    CHECK(strstr(opara_runtime_last_error(g_rt), "x_zero_point's type differs from x's") != NULL);
    one_free(&t);
    CHECK_EQ(quant_run(&t, OPARA__OP_DEQUANTIZE_LINEAR, 3, one_elem, q_u8, 1, NULL), OPARA_ERR_BAD_DTYPE); /* f32 x */
    one_free(&t);
}

OT_TEST(dynamic_quantize_outputs) {
    opara__shape x[] = {shp(2, 3, 4)};
    const opara_dtype f32[] = {F32};
    one t;
    REQUIRE(quant_run(&t, OPARA__OP_DYNAMIC_QUANTIZE_LINEAR, 1, x, f32, 3, NULL) == OPARA_OK);
    CHECK_SHAPE(&t.shapes[t.outs[0]], shp(2, 3, 4));
    CHECK_SHAPE(&t.shapes[t.outs[1]], shp(0));
    CHECK_SHAPE(&t.shapes[t.outs[2]], shp(0));
    CHECK(t.dtypes[t.outs[0]] == OPARA_DTYPE_U8 && t.dtypes[t.outs[1]] == F32 && t.dtypes[t.outs[2]] == OPARA_DTYPE_U8);
    one_free(&t);
    CHECK_EQ(quant_run(&t, OPARA__OP_DYNAMIC_QUANTIZE_LINEAR, 1, x, f32, 1, NULL), OPARA_ERR_SHAPE); /* 3 outputs */
    one_free(&t);
}

OT_TEST(integer_conv_and_matmul_shapes_and_dtypes) {
    opara__shape conv[] = {shp(4, 1, 4, 5, 5), shp(4, 6, 2, 3, 3), shp(0), shp(1, 6)};
    opara__shape conv_bad_zp[] = {shp(4, 1, 4, 5, 5), shp(4, 6, 2, 3, 3), shp(0), shp(1, 4)};
    opara__shape qconv[] = {shp(4, 1, 4, 5, 5), shp(0), shp(0), shp(4, 6, 2, 3, 3), shp(1, 6), shp(1, 6), shp(0), shp(0), shp(1, 6)};
    opara__shape mm[] = {shp(3, 2, 3, 4), shp(2, 4, 5), shp(1, 3), shp(1, 5)};
    opara__shape qmm[] = {shp(2, 2, 4), shp(1, 1), shp(1, 1), shp(2, 4, 3), shp(1, 3), shp(1, 3), shp(0), shp(0)};
    const opara_dtype conv_dt[] = {OPARA_DTYPE_U8, OPARA_DTYPE_I8, OPARA_DTYPE_U8, OPARA_DTYPE_I8};
    const opara_dtype conv_mixed[] = {OPARA_DTYPE_U8, OPARA_DTYPE_I8, OPARA_DTYPE_I8, OPARA_DTYPE_I8};
    const opara_dtype q_dt[] = {OPARA_DTYPE_U8, F32, OPARA_DTYPE_U8, OPARA_DTYPE_I8, F32, OPARA_DTYPE_I8, F32, OPARA_DTYPE_I8,
                                OPARA_DTYPE_I32};
    const opara_dtype q_bias_i64[] = {OPARA_DTYPE_U8, F32, OPARA_DTYPE_U8, OPARA_DTYPE_I8, F32, OPARA_DTYPE_I8, F32,
                                      OPARA_DTYPE_I8, OPARA_DTYPE_I64};
    one t;
    REQUIRE(quant_run(&t, OPARA__OP_CONV_INTEGER, 4, conv, conv_dt, 1, a_group2) == OPARA_OK);
    CHECK_SHAPE(&t.shapes[t.outs[0]], shp(4, 1, 6, 3, 3));
    CHECK_EQ(t.dtypes[t.outs[0]], OPARA_DTYPE_I32);
    one_free(&t);
    CHECK_EQ(quant_run(&t, OPARA__OP_CONV_INTEGER, 4, conv_bad_zp, conv_dt, 1, a_group2), OPARA_ERR_SHAPE);
    CHECK(strstr(opara_runtime_last_error(g_rt), "w_zero_point (input 3) is [4]: neither one value nor [6]") != NULL);
    one_free(&t);
    CHECK_EQ(quant_run(&t, OPARA__OP_CONV_INTEGER, 4, conv, conv_mixed, 1, a_group2), OPARA_ERR_BAD_DTYPE);
    one_free(&t);
    REQUIRE(quant_run(&t, OPARA__OP_QLINEAR_CONV, 9, qconv, q_dt, 1, a_group2) == OPARA_OK);
    CHECK_SHAPE(&t.shapes[t.outs[0]], shp(4, 1, 6, 3, 3));
    CHECK_EQ(t.dtypes[t.outs[0]], OPARA_DTYPE_I8); /* y_zero_point's */
    one_free(&t);
    CHECK_EQ(quant_run(&t, OPARA__OP_QLINEAR_CONV, 9, qconv, q_bias_i64, 1, a_group2), OPARA_ERR_BAD_DTYPE);
    one_free(&t);
    REQUIRE(quant_run(&t, OPARA__OP_MATMUL_INTEGER, 4, mm, conv_dt, 1, NULL) == OPARA_OK);
    CHECK_SHAPE(&t.shapes[t.outs[0]], shp(3, 2, 3, 5));
    CHECK_EQ(t.dtypes[t.outs[0]], OPARA_DTYPE_I32);
    one_free(&t);
    REQUIRE(quant_run(&t, OPARA__OP_QLINEAR_MATMUL, 8, qmm, q_dt, 1, NULL) == OPARA_OK);
    CHECK_SHAPE(&t.shapes[t.outs[0]], shp(2, 2, 3));
    CHECK_EQ(t.dtypes[t.outs[0]], OPARA_DTYPE_I8);
    one_free(&t);
}

static const opara_test_case tests[] = {
    OT_CASE(conv_follows_onnx),
    OT_CASE(conv_matches_brute_force_window_count),
    OT_CASE(conv_transpose_follows_onnx),
    OT_CASE(quantize_dequantize_shapes_dtypes_and_record),
    OT_CASE(dynamic_quantize_outputs),
    OT_CASE(integer_conv_and_matmul_shapes_and_dtypes),
    OT_CASE(pools_follow_onnx),
    OT_CASE(maxpool_indices_output_is_i64),
    OT_CASE(batch_norm_checks_channels),
    OT_CASE(norm_and_pool_family_shapes),
    OT_CASE(dropout_mask_is_bool),
    OT_CASE(einsum_shapes_and_strides),
    OT_CASE(record_of_the_norm_family),
    OT_CASE(cubic_taps_follow_onnx),
    OT_CASE(broadcasting_is_numpy),
    OT_CASE(unary_ops_keep_the_shape),
    OT_CASE(softmax_axis_is_checked),
    OT_CASE(concat),
    OT_CASE(concat_with_an_omitted_input_is_an_error),
    OT_CASE(split),
    OT_CASE(slice),
    OT_CASE(gather),
    OT_CASE(reshape),
    OT_CASE(symbolic_batch_flows_through),
    OT_CASE(flatten),
    OT_CASE(transpose),
    OT_CASE(squeeze_unsqueeze),
    OT_CASE(expand),
    OT_CASE(gemm), OT_CASE(rnn_shapes_and_record),
    OT_CASE(matmul_is_numpy),
    OT_CASE(layer_norm_statistics),
    OT_CASE(reduce_mean), OT_CASE(reductions_arg_and_scans), OT_CASE(topk), OT_CASE(grid_sample), OT_CASE(det),
    OT_CASE(where_and_dtypes), OT_CASE(logic_ops_broadcast_and_give_bool), OT_CASE(record_resolves_logic_attributes),
    OT_CASE(cast_type),
    OT_CASE(pad),
    OT_CASE(resize),
    OT_CASE(arity_is_checked),
    OT_CASE(hostile_attributes_fail_cleanly),
    OT_CASE(broadcast_matches_naive_reference),
    OT_CASE(broadcast_of_three_matches_the_reference),
    OT_CASE(broadcast_tolerant_mode_propagates_unknown_dims),
    OT_CASE(tolerant_mode_keeps_the_batch_and_unknown_dims),
    OT_CASE(strict_mode_checks_what_tolerant_mode_leaves_unknown),
    OT_CASE(record_resolves_auto_pad_and_defaults), OT_CASE(record_resolves_transpose_and_pad),
    OT_CASE(record_resolves_resize), OT_CASE(record_resolves_scalar_attributes),
    OT_CASE(gather_scatter_shapes_follow_onnx), OT_CASE(index_pattern_shapes_follow_onnx),
    OT_CASE(record_resolves_index_attributes),
};

int main(int argc, char** argv) {
    int rc;
    if (opara_runtime_create(NULL, &g_rt) != OPARA_OK) return 1;
    rc = opara_test_main(argc, argv, tests, OT_COUNT(tests));
    opara_runtime_destroy(g_rt);
    return rc;
}
