/* The API-misuse table: every public function of src/api/opara_api.h called with NULL for each pointer
   argument, (pointer, count) pairs that disagree (a count with a NULL array, an array with a zero
   count), wrong names, dtypes, ranks and dims where the API takes them, enum values out of range,
   files that are not models, and every documented order of destroy calls. Each row states the
   exact opara_result the call must return (read from the API's comments, not from the code), and
   runs on fresh objects so that no row depends on another (builder errors are sticky). A crash
   is a failure of the whole binary; `make test SAN=1` adds ASan/UBSan to every row.

   The public functions (src/api/opara_api.h): opara_result_string, opara_version_string,
   opara_dtype_size, opara_dtype_name, opara_log_stderr, opara_runtime_create, opara_runtime_destroy,
   opara_runtime_last_error, opara_model_load_file, opara_model_load_memory, opara_model_destroy,
   opara_model_input_count, opara_model_output_count, opara_model_input_info, opara_model_output_info,
   opara_model_node_count, opara_model_node_op, opara_model_node_name, opara_model_get_stats,
   opara_builder_create, opara_builder_destroy, opara_builder_add_input, opara_builder_add_constant,
   opara_builder_add_node, opara_builder_add_output, opara_builder_finish, opara_builder_save_memory,
   opara_builder_save_file, opara_builder_last_error, opara_free, opara_strategy_name, opara_precision_name,
   opara_session_create, opara_session_destroy, opara_session_input_count, opara_session_output_count,
   opara_session_input_info, opara_session_output_info, opara_session_run, opara_session_run_device,
   opara_session_output_data, opara_session_get_plan_info, opara_session_get_run_stats,
   opara_session_get_node_times, opara_session_last_error, opara_session_write_plan_dot,
   opara_session_write_trace, opara_model_load_onnx_memory, opara_model_load_onnx_file (49). */
#if !defined(_WIN32)
#  define _GNU_SOURCE /* mkdtemp: the test's own fixture */
#endif
#define OPARA_IMPLEMENTATION
#include "opara.h"
#include "opara_test.h"
#include "opara_model_fixture.h"
#if defined(__GNUC__)
#  pragma GCC diagnostic ignored "-Wunused-function" /* onnx_pbw.h: only a few writers are used */
#endif
#include "onnx_pbw.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- the objects a row may use: made fresh for every row -------------------------------------- */

typedef struct fx {
    opara_runtime* rt;
    opara_model* m;       /* the fixture model (x [N,3,8,8] -> y [N,5], a [N,2,8,8]) */
    opara_session* s;     /* CPU, one thread, batch 1 */
    opara_builder* b;     /* empty */
    void* image;          /* the fixture's .opara image */
    size_t image_size;
    /* scratch for outputs of the calls */
    opara_model* out_m;
    opara_session* out_s;
    opara_builder* out_b;
    opara_tensor_info info;
    opara_model_stats stats;
    opara_plan_info plan;
    opara_run_stats run_stats;
    opara_node_time times[64];
    void* data;
    size_t size;
    opara_onnx_options oo;
    /* a correct run's tensors, which rows then spoil */
    float x[3 * 8 * 8], y[5], a[2 * 8 * 8];
    opara_tensor in[2], out[2];
} fx;

static char g_dir[] = "/tmp/opara_api_misuse_XXXXXX";
static char g_model_path[128], g_onnx_path[128], g_absent[128], g_out_path[128], g_fifo[128];
static pbw g_onnx;

static opara_tensor tensor(const char* name, int32_t rank, const int64_t* dims, void* data) {
    opara_tensor t;
    memset(&t, 0, sizeof t);
    t.name = name;
    t.dtype = OPARA_DTYPE_F32;
    t.rank = rank;
    memcpy(t.dims, dims, sizeof(int64_t) * (size_t)rank);
    t.data = data;
    return t;
}

static int fx_open(fx* f) {
    static const int64_t xd[4] = {1, 3, 8, 8}, yd[2] = {1, 5}, ad[4] = {1, 2, 8, 8};
    opara_session_desc d;
    memset(f, 0, sizeof *f);
    memset(&d, 0, sizeof d);
    d.backend = OPARA_BACKEND_CPU;
    d.threads = 1;
    if (opara_runtime_create(NULL, &f->rt) != OPARA_OK) return 0;
    if (fixture_image(f->rt, &f->image, &f->image_size) != OPARA_OK) return 0;
    if (opara_model_load_memory(f->rt, f->image, f->image_size, &f->m) != OPARA_OK) return 0;
    if (opara_session_create(f->rt, f->m, &d, &f->s) != OPARA_OK) return 0;
    if (opara_builder_create(f->rt, &f->b) != OPARA_OK) return 0;
    fixture_fill(f->x, sizeof f->x / sizeof f->x[0], 0.1f);
    f->in[0] = tensor("x", 4, xd, f->x);
    f->in[1] = f->in[0];
    f->out[0] = tensor("y", 2, yd, f->y);
    f->out[1] = tensor("a", 4, ad, f->a);
    return 1;
}

/* Destroys what is left (a row may have destroyed some objects itself and cleared them). */
static void fx_close(fx* f) {
    opara_session_destroy(f->out_s);
    opara_session_destroy(f->s);
    opara_model_destroy(f->out_m);
    opara_model_destroy(f->m);
    opara_builder_destroy(f->out_b);
    opara_builder_destroy(f->b);
    opara_free(f->rt, f->data);
    opara_free(f->rt, f->image);
    opara_runtime_destroy(f->rt);
}

/* Calls returning void, a count or a pointer become results: OK when they did the right thing. */
#define IS(cond) ((cond) ? OPARA_OK : OPARA_ERR_INTERNAL)
#define AS_OK(call) ((call), OPARA_OK)

/* ---- helpers for rows that need more than one call ------------------------------------------- */

static opara_onnx_options onnx_opts(const char* const* shapes, uint32_t n, int64_t default_dim) {
    opara_onnx_options o;
    memset(&o, 0, sizeof o);
    o.input_shapes = shapes;
    o.n_input_shapes = n;
    o.default_dim = default_dim;
    return o;
}
static const char* const k_shape_ok[] = {"x=1,4"};
static const char* const k_shape_null[] = {NULL};
static const char* const k_shape_unknown[] = {"nosuch=1,4"};
static const char* const k_shape_bad[] = {"x=1,,four"};

static opara_result onnx_mem(fx* f, const opara_onnx_options* o) {
    return opara_model_load_onnx_memory(f->rt, g_onnx.d, g_onnx.n, o, &f->out_m);
}
static opara_result onnx_file(fx* f, const opara_onnx_options* o) {
    return opara_model_load_onnx_file(f->rt, g_onnx_path, o, &f->out_m);
}

static opara_session_desc desc_cpu(void) {
    opara_session_desc d;
    memset(&d, 0, sizeof d);
    d.backend = OPARA_BACKEND_CPU;
    d.threads = 1;
    return d;
}
static opara_result session_with(fx* f, opara_session_desc d) { return opara_session_create(f->rt, f->m, &d, &f->out_s); }
static opara_session_desc desc_strategy(int v) { opara_session_desc d = desc_cpu(); d.strategy = (opara_strategy)v; return d; }
static opara_session_desc desc_order(int v) { opara_session_desc d = desc_cpu(); d.launch_order = (opara_launch_order)v; return d; }
static opara_session_desc desc_precision(int v) { opara_session_desc d = desc_cpu(); d.precision = (opara_precision)v; return d; }
static opara_session_desc desc_backend(int v) { opara_session_desc d = desc_cpu(); d.backend = (opara_backend)v; return d; }
static opara_session_desc desc_budget(double v) { opara_session_desc d = desc_cpu(); d.memory_budget = v; return d; }
static opara_session_desc desc_batch(int64_t v) { opara_session_desc d = desc_cpu(); d.batch_size = v; return d; }

/* A builder row: the call, then finish (which returns the sticky first error). */
static opara_result then_finish(fx* f, opara_result r) {
    opara_result fin = opara_builder_finish(f->b, &f->out_m);
    return r != OPARA_OK ? r : fin;
}

static const int64_t k_dims2[2] = {2, 3};
static const int64_t k_dims_neg[2] = {2, -5};
static const int64_t k_dims9[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
static const float k_six[6] = {1, 2, 3, 4, 5, 6};
static const char* const k_x[] = {"x"};
static const char* const k_y[] = {"y"};
static const char* const k_null_name[] = {NULL};

static opara_attr attr_of(const char* name, opara_attr_type type, uint32_t count) {
    opara_attr a;
    memset(&a, 0, sizeof a);
    a.name = name;
    a.type = type;
    a.count = count;
    return a;
}
/* Relu x -> y with one attribute, then finish. */
static opara_result node_with_attr(fx* f, opara_attr a) {
    opara_builder_add_input(f->b, "x", OPARA_DTYPE_F32, 2, k_dims2);
    opara_builder_add_output(f->b, "y");
    return then_finish(f, opara_builder_add_node(f->b, "Relu", "r", 1, k_x, 1, k_y, 1, &a));
}
/* A valid Relu model built through the builder, with one thing changed by the caller's call. */
static opara_result relu_model(fx* f, const char* op, opara_dtype dtype, const char* output) {
    opara_builder_add_input(f->b, "x", dtype, 2, k_dims2);
    opara_builder_add_node(f->b, op, "r", 1, k_x, 1, k_y, 0, NULL);
    opara_builder_add_output(f->b, output);
    return opara_builder_finish(f->b, &f->out_m);
}

/* Runs with tensor k of inputs (0) or outputs (1) changed by `spoil`. */
typedef void (*spoil_fn)(opara_tensor* t);
static void sp_name(opara_tensor* t) { t->name = "nosuch"; }
static void sp_dtype(opara_tensor* t) { t->dtype = OPARA_DTYPE_I64; }
static void sp_bad_dtype(opara_tensor* t) { t->dtype = (opara_dtype)999; }
static void sp_rank(opara_tensor* t) { t->rank = 3; }
static void sp_rank_neg(opara_tensor* t) { t->rank = -1; }
static void sp_rank_big(opara_tensor* t) { t->rank = 1000; }
static void sp_dim(opara_tensor* t) { t->dims[1] = 4; }
static void sp_batch(opara_tensor* t) { t->dims[0] = 2; }
static void sp_data(opara_tensor* t) { t->data = NULL; }
static void sp_none(opara_tensor* t) { (void)t; }
static opara_result run_spoiled(fx* f, int which, spoil_fn spoil) {
    opara_tensor in = f->in[0], out = f->out[0];
    spoil(which == 0 ? &in : &out);
    return opara_session_run(f->s, &in, 1, &out, 1);
}
static opara_result run_ok(fx* f) { return opara_session_run(f->s, f->in, 1, f->out, 2); }
/* Positional inputs (name NULL) beyond the model's count. */
static opara_result run_extra_positional(fx* f) {
    opara_tensor in[2];
    in[0] = f->in[0];
    in[1] = f->in[0];
    in[0].name = in[1].name = NULL;
    return opara_session_run(f->s, in, 2, NULL, 0);
}


static void* alloc_only(size_t size, size_t alignment, void* user) {
    (void)size, (void)alignment, (void)user;
    return NULL;
}
static opara_result half_allocator(fx* f) {
    opara_runtime_desc d;
    opara_runtime* rt = (opara_runtime*)f; /* must come back NULL */
    opara_result r;
    memset(&d, 0, sizeof d);
    d.allocator.alloc_fn = alloc_only; /* "set both functions or neither" */
    r = opara_runtime_create(&d, &rt);
    return rt == NULL ? r : OPARA_ERR_INTERNAL;
}
/* y = x + c with the constant given `size` bytes for its [2,3] f32 shape (24 bytes). */
static opara_result constant_then_finish(fx* f, const void* data, size_t size) {
    static const char* const in[] = {"x", "c"};
    opara_builder_add_input(f->b, "x", OPARA_DTYPE_F32, 2, k_dims2);
    opara_builder_add_constant(f->b, "c", OPARA_DTYPE_F32, 2, k_dims2, data, size);
    opara_builder_add_node(f->b, "Add", "add", 2, in, 1, k_y, 0, NULL);
    opara_builder_add_output(f->b, "y");
    return opara_builder_finish(f->b, &f->out_m);
}
/* Relu given no inputs (a non-NULL array with a zero count): it needs one. */
static opara_result node_without_inputs(fx* f) {
    opara_builder_add_input(f->b, "x", OPARA_DTYPE_F32, 2, k_dims2);
    opara_builder_add_node(f->b, "Relu", "r", 0, k_x, 1, k_y, 0, NULL);
    opara_builder_add_output(f->b, "y");
    return opara_builder_finish(f->b, &f->out_m);
}
/* A zero-element constant needs no data: dims [2,0], data NULL, size 0. */
static opara_result empty_constant(fx* f) {
    static const int64_t empty[2] = {2, 0};
    return opara_builder_add_constant(f->b, "c", OPARA_DTYPE_F32, 2, empty, NULL, 0);
}
/* A valid model saved to path. */
static opara_result save_to(fx* f, const char* path) {
    opara_builder_add_input(f->b, "x", OPARA_DTYPE_F32, 2, k_dims2);
    opara_builder_add_node(f->b, "Relu", "r", 1, k_x, 1, k_y, 0, NULL);
    opara_builder_add_output(f->b, "y");
    return opara_builder_save_file(f->b, path);
}
static opara_result session_cpu_default(fx* f) {
    opara_session_desc d = desc_cpu();
    return opara_session_create(f->rt, f->m, &d, &f->out_s); /* (desc NULL may pick CUDA: AUTO) */
}

/* ---- destroy orders (docs: models, sessions and builders before their runtime) -------------- */

static opara_result order_session_model_runtime(fx* f) {
    opara_session_destroy(f->s), f->s = NULL;
    opara_model_destroy(f->m), f->m = NULL;
    return OPARA_OK; /* fx_close destroys the runtime last */
}
static opara_result order_two_sessions_either_order(fx* f) {
    opara_session_desc d = desc_cpu();
    opara_result r = opara_session_create(f->rt, f->m, &d, &f->out_s);
    if (r != OPARA_OK) return r;
    opara_session_destroy(f->s), f->s = NULL;         /* the first one first */
    r = run_ok((f->s = f->out_s, f->out_s = NULL, f)); /* the second still runs */
    return r;
}
static opara_result order_builder_before_its_model(fx* f) {
    opara_result r = relu_model(f, "Relu", OPARA_DTYPE_F32, "y");
    opara_builder_destroy(f->b), f->b = NULL; /* the model copied the weights: it outlives the builder */
    if (r == OPARA_OK) r = IS(opara_model_node_count(f->out_m) == 1 && strcmp(opara_model_node_op(f->out_m, 0), "Relu") == 0);
    return r;
}
static opara_result order_model_before_its_builder(fx* f) {
    opara_result r = relu_model(f, "Relu", OPARA_DTYPE_F32, "y");
    opara_model_destroy(f->out_m), f->out_m = NULL;
    if (r == OPARA_OK) r = opara_builder_finish(f->b, &f->out_m); /* the builder stays usable */
    return r;
}
static opara_result order_saved_image_after_builder(fx* f) {
    opara_result r = relu_model(f, "Relu", OPARA_DTYPE_F32, "y");
    if (r == OPARA_OK) r = opara_builder_save_memory(f->b, &f->data, &f->size);
    opara_builder_destroy(f->b), f->b = NULL; /* the buffer is the runtime's, freed by opara_free later */
    return r;
}
static opara_result order_memory_model_before_its_session_destroyed_last(fx* f) {
    /* a model loaded from memory, its session destroyed, then the model, then the image freed */
    opara_session_desc d = desc_cpu();
    opara_result r = opara_model_load_memory(f->rt, f->image, f->image_size, &f->out_m);
    if (r == OPARA_OK) r = opara_session_create(f->rt, f->out_m, &d, &f->out_s);
    opara_session_destroy(f->out_s), f->out_s = NULL;
    opara_model_destroy(f->out_m), f->out_m = NULL;
    opara_free(f->rt, f->image), f->image = NULL;
    return r;
}

/* ---- output data before and after runs ----------------------------------------------------- */

static opara_result output_data_after_run(fx* f) {
    opara_result r = run_ok(f);
    if (r != OPARA_OK) return r;
    return IS(opara_session_output_data(f->s, 0) != NULL &&
              memcmp(opara_session_output_data(f->s, 0), f->y, sizeof f->y) == 0);
}
static opara_result output_data_after_failed_run(fx* f) {
    opara_result r = run_ok(f);
    if (r != OPARA_OK) return r;
    (void)run_spoiled(f, 0, sp_dim);
    return IS(opara_session_output_data(f->s, 0) == NULL);
}

/* ---- the table ------------------------------------------------------------------------------- */

#define MISUSE_ROWS(X) \
    /* enums and strings */ \
    X(result_string_unknown,            OPARA_OK, IS(opara_result_string((opara_result)12345) != NULL)) \
    X(dtype_size_unknown,               OPARA_OK, IS(opara_dtype_size((opara_dtype)999) == 0)) \
    X(dtype_name_unknown,               OPARA_OK, IS(strcmp(opara_dtype_name((opara_dtype)999), "?") == 0)) \
    X(strategy_name_unknown,            OPARA_OK, IS(strcmp(opara_strategy_name(OPARA_STRATEGY_COUNT), "?") == 0)) \
    X(precision_name_unknown,           OPARA_OK, IS(strcmp(opara_precision_name((opara_precision)-1), "?") == 0)) \
    X(log_stderr_null_message,          OPARA_OK, AS_OK(opara_log_stderr(OPARA_LOG_DEBUG, OPARA_LOGITEM_ERROR_DETAIL, NULL, NULL))) \
    /* runtime */ \
    X(runtime_create_null_out,          OPARA_ERR_INVALID_ARGS, opara_runtime_create(NULL, NULL)) \
    X(runtime_create_half_allocator,    OPARA_ERR_INVALID_ARGS, half_allocator(f)) \
    X(runtime_destroy_null,             OPARA_OK, AS_OK(opara_runtime_destroy(NULL))) \
    X(runtime_last_error_null,          OPARA_OK, IS(opara_runtime_last_error(NULL) != NULL)) \
    /* .opara loading */ \
    X(load_file_null_runtime,           OPARA_ERR_INVALID_ARGS, opara_model_load_file(NULL, g_model_path, &f->out_m)) \
    X(load_file_null_path,              OPARA_ERR_INVALID_ARGS, opara_model_load_file(f->rt, NULL, &f->out_m)) \
    X(load_file_null_out,               OPARA_ERR_INVALID_ARGS, opara_model_load_file(f->rt, g_model_path, NULL)) \
    X(load_file_missing,                OPARA_ERR_IO, opara_model_load_file(f->rt, g_absent, &f->out_m)) \
    X(load_file_directory,              OPARA_ERR_IO, opara_model_load_file(f->rt, g_dir, &f->out_m)) \
    X(load_file_dev_zero,               OPARA_ERR_IO, opara_model_load_file(f->rt, "/dev/zero", &f->out_m)) \
    X(load_file_fifo,                   OPARA_ERR_IO, opara_model_load_file(f->rt, g_fifo, &f->out_m)) \
    X(load_file_ok,                     OPARA_OK, opara_model_load_file(f->rt, g_model_path, &f->out_m)) \
    X(load_memory_null_runtime,         OPARA_ERR_INVALID_ARGS, opara_model_load_memory(NULL, f->image, f->image_size, &f->out_m)) \
    X(load_memory_null_data_with_size,  OPARA_ERR_INVALID_ARGS, opara_model_load_memory(f->rt, NULL, f->image_size, &f->out_m)) \
    X(load_memory_null_data_size_0,     OPARA_ERR_TRUNCATED, opara_model_load_memory(f->rt, NULL, 0, &f->out_m)) \
    X(load_memory_data_with_size_0,     OPARA_ERR_TRUNCATED, opara_model_load_memory(f->rt, f->image, 0, &f->out_m)) \
    X(load_memory_null_out,             OPARA_ERR_INVALID_ARGS, opara_model_load_memory(f->rt, f->image, f->image_size, NULL)) \
    /* ONNX loading */ \
    X(onnx_memory_null_runtime,         OPARA_ERR_INVALID_ARGS, opara_model_load_onnx_memory(NULL, g_onnx.d, g_onnx.n, NULL, &f->out_m)) \
    X(onnx_memory_null_data_with_size,  OPARA_ERR_INVALID_ARGS, opara_model_load_onnx_memory(f->rt, NULL, g_onnx.n, NULL, &f->out_m)) \
    X(onnx_memory_null_out,             OPARA_ERR_INVALID_ARGS, opara_model_load_onnx_memory(f->rt, g_onnx.d, g_onnx.n, NULL, NULL)) \
    X(onnx_memory_size_0,               OPARA_ERR_ONNX_INVALID, opara_model_load_onnx_memory(f->rt, g_onnx.d, 0, NULL, &f->out_m)) \
    X(onnx_memory_shapes_null_count_1,  OPARA_ERR_INVALID_ARGS, (f->oo = onnx_opts(NULL, 1, 0), onnx_mem(f, &f->oo))) \
    X(onnx_memory_shapes_entry_null,    OPARA_ERR_INVALID_ARGS, (f->oo = onnx_opts(k_shape_null, 1, 0), onnx_mem(f, &f->oo))) \
    X(onnx_memory_shapes_count_0,       OPARA_OK, (f->oo = onnx_opts(k_shape_bad, 0, 0), onnx_mem(f, &f->oo))) \
    X(onnx_memory_shape_ok,             OPARA_OK, (f->oo = onnx_opts(k_shape_ok, 1, 0), onnx_mem(f, &f->oo))) \
    X(onnx_memory_shape_unknown_input,  OPARA_ERR_NOT_FOUND, (f->oo = onnx_opts(k_shape_unknown, 1, 0), onnx_mem(f, &f->oo))) \
    X(onnx_memory_shape_malformed,      OPARA_ERR_INVALID_ARGS, (f->oo = onnx_opts(k_shape_bad, 1, 0), onnx_mem(f, &f->oo))) \
    X(onnx_memory_default_dim_negative, OPARA_ERR_INVALID_ARGS, (f->oo = onnx_opts(NULL, 0, -3), onnx_mem(f, &f->oo))) \
    X(onnx_file_null_runtime,           OPARA_ERR_INVALID_ARGS, opara_model_load_onnx_file(NULL, g_onnx_path, NULL, &f->out_m)) \
    X(onnx_file_null_path,              OPARA_ERR_INVALID_ARGS, opara_model_load_onnx_file(f->rt, NULL, NULL, &f->out_m)) \
    X(onnx_file_null_out,               OPARA_ERR_INVALID_ARGS, opara_model_load_onnx_file(f->rt, g_onnx_path, NULL, NULL)) \
    X(onnx_file_shapes_null_count_1,    OPARA_ERR_INVALID_ARGS, (f->oo = onnx_opts(NULL, 1, 0), onnx_file(f, &f->oo))) \
    X(onnx_file_default_dim_negative,   OPARA_ERR_INVALID_ARGS, (f->oo = onnx_opts(NULL, 0, -1), onnx_file(f, &f->oo))) \
    X(onnx_file_missing,                OPARA_ERR_IO, opara_model_load_onnx_file(f->rt, g_absent, NULL, &f->out_m)) \
    X(onnx_file_directory,              OPARA_ERR_IO, opara_model_load_onnx_file(f->rt, g_dir, NULL, &f->out_m)) \
    X(onnx_file_dev_zero,               OPARA_ERR_IO, opara_model_load_onnx_file(f->rt, "/dev/zero", NULL, &f->out_m)) \
    X(onnx_file_fifo,                   OPARA_ERR_IO, opara_model_load_onnx_file(f->rt, g_fifo, NULL, &f->out_m)) \
    X(onnx_file_ok,                     OPARA_OK, onnx_file(f, NULL)) \
    /* model queries */ \
    X(model_destroy_null,               OPARA_OK, AS_OK(opara_model_destroy(NULL))) \
    X(model_input_count_null,           OPARA_OK, IS(opara_model_input_count(NULL) == 0)) \
    X(model_output_count_null,          OPARA_OK, IS(opara_model_output_count(NULL) == 0)) \
    X(model_node_count_null,            OPARA_OK, IS(opara_model_node_count(NULL) == 0)) \
    X(model_input_info_null_model,      OPARA_ERR_INVALID_ARGS, opara_model_input_info(NULL, 0, &f->info)) \
    X(model_input_info_null_out,        OPARA_ERR_INVALID_ARGS, opara_model_input_info(f->m, 0, NULL)) \
    X(model_input_info_index,           OPARA_ERR_NOT_FOUND, opara_model_input_info(f->m, 1, &f->info)) \
    X(model_output_info_null_model,     OPARA_ERR_INVALID_ARGS, opara_model_output_info(NULL, 0, &f->info)) \
    X(model_output_info_null_out,       OPARA_ERR_INVALID_ARGS, opara_model_output_info(f->m, 0, NULL)) \
    X(model_output_info_index,          OPARA_ERR_NOT_FOUND, opara_model_output_info(f->m, 2, &f->info)) \
    X(model_node_op_null,               OPARA_OK, IS(opara_model_node_op(NULL, 0) == NULL)) \
    X(model_node_op_index,              OPARA_OK, IS(opara_model_node_op(f->m, 8) == NULL)) \
    X(model_node_name_null,             OPARA_OK, IS(opara_model_node_name(NULL, 0) == NULL)) \
    X(model_node_name_index,            OPARA_OK, IS(opara_model_node_name(f->m, 8) == NULL)) \
    X(model_get_stats_null_model,       OPARA_ERR_INVALID_ARGS, opara_model_get_stats(NULL, &f->stats)) \
    X(model_get_stats_null_out,         OPARA_ERR_INVALID_ARGS, opara_model_get_stats(f->m, NULL)) \
    /* builder */ \
    X(builder_create_null_runtime,      OPARA_ERR_INVALID_ARGS, opara_builder_create(NULL, &f->out_b)) \
    X(builder_create_null_out,          OPARA_ERR_INVALID_ARGS, opara_builder_create(f->rt, NULL)) \
    X(builder_destroy_null,             OPARA_OK, AS_OK(opara_builder_destroy(NULL))) \
    X(builder_last_error_null,          OPARA_OK, IS(strcmp(opara_builder_last_error(NULL), "") == 0)) \
    X(add_input_null_builder,           OPARA_ERR_INVALID_ARGS, opara_builder_add_input(NULL, "x", OPARA_DTYPE_F32, 2, k_dims2)) \
    X(add_input_null_name,              OPARA_ERR_INVALID_ARGS, opara_builder_add_input(f->b, NULL, OPARA_DTYPE_F32, 2, k_dims2)) \
    X(add_input_empty_name,             OPARA_ERR_INVALID_ARGS, opara_builder_add_input(f->b, "", OPARA_DTYPE_F32, 2, k_dims2)) \
    X(add_input_rank_with_null_dims,    OPARA_ERR_INVALID_ARGS, opara_builder_add_input(f->b, "x", OPARA_DTYPE_F32, 2, NULL)) \
    X(add_input_rank_0_null_dims,       OPARA_OK, opara_builder_add_input(f->b, "x", OPARA_DTYPE_F32, 0, NULL)) \
    X(add_input_rank_0_with_dims,       OPARA_OK, opara_builder_add_input(f->b, "x", OPARA_DTYPE_F32, 0, k_dims2)) \
    X(add_input_rank_negative,          OPARA_ERR_INVALID_ARGS, opara_builder_add_input(f->b, "x", OPARA_DTYPE_F32, -1, k_dims2)) \
    X(add_input_rank_over_max,          OPARA_ERR_LIMIT_EXCEEDED, opara_builder_add_input(f->b, "x", OPARA_DTYPE_F32, 9, k_dims9)) \
    X(add_input_negative_dim,           OPARA_ERR_INVALID_ARGS, opara_builder_add_input(f->b, "x", OPARA_DTYPE_F32, 2, k_dims_neg)) \
    X(add_input_error_is_sticky,        OPARA_ERR_INVALID_ARGS, then_finish(f, opara_builder_add_input(f->b, NULL, OPARA_DTYPE_F32, 2, k_dims2))) \
    X(add_input_unknown_dtype,          OPARA_ERR_BAD_DTYPE, relu_model(f, "Relu", (opara_dtype)999, "y")) \
    X(add_constant_null_builder,        OPARA_ERR_INVALID_ARGS, opara_builder_add_constant(NULL, "c", OPARA_DTYPE_F32, 2, k_dims2, k_six, sizeof k_six)) \
    X(add_constant_null_data_with_size, OPARA_ERR_INVALID_ARGS, opara_builder_add_constant(f->b, "c", OPARA_DTYPE_F32, 2, k_dims2, NULL, sizeof k_six)) \
    X(add_constant_null_name,           OPARA_ERR_INVALID_ARGS, opara_builder_add_constant(f->b, NULL, OPARA_DTYPE_F32, 2, k_dims2, k_six, sizeof k_six)) \
    X(add_constant_rank_with_null_dims, OPARA_ERR_INVALID_ARGS, opara_builder_add_constant(f->b, "c", OPARA_DTYPE_F32, 2, NULL, k_six, sizeof k_six)) \
    X(add_constant_size_mismatch,       OPARA_ERR_BAD_DTYPE, constant_then_finish(f, k_six, sizeof k_six - 4)) \
    X(add_constant_data_with_size_0,    OPARA_ERR_BAD_DTYPE, constant_then_finish(f, k_six, 0)) \
    X(add_constant_empty_null_data,     OPARA_OK, empty_constant(f)) \
    X(add_node_null_builder,            OPARA_ERR_INVALID_ARGS, opara_builder_add_node(NULL, "Relu", "r", 1, k_x, 1, k_y, 0, NULL)) \
    X(add_node_null_op,                 OPARA_ERR_INVALID_ARGS, opara_builder_add_node(f->b, NULL, "r", 1, k_x, 1, k_y, 0, NULL)) \
    X(add_node_null_name_is_fine,       OPARA_OK, opara_builder_add_node(f->b, "Relu", NULL, 1, k_x, 1, k_y, 0, NULL)) \
    X(add_node_inputs_null_count_1,     OPARA_ERR_INVALID_ARGS, opara_builder_add_node(f->b, "Relu", "r", 1, NULL, 1, k_y, 0, NULL)) \
    X(add_node_outputs_null_count_1,    OPARA_ERR_INVALID_ARGS, opara_builder_add_node(f->b, "Relu", "r", 1, k_x, 1, NULL, 0, NULL)) \
    X(add_node_outputs_count_0,         OPARA_ERR_INVALID_ARGS, opara_builder_add_node(f->b, "Relu", "r", 1, k_x, 0, k_y, 0, NULL)) \
    X(add_node_output_name_null,        OPARA_ERR_INVALID_ARGS, opara_builder_add_node(f->b, "Relu", "r", 1, k_x, 1, k_null_name, 0, NULL)) \
    X(add_node_attrs_null_count_1,      OPARA_ERR_INVALID_ARGS, opara_builder_add_node(f->b, "Relu", "r", 1, k_x, 1, k_y, 1, NULL)) \
    X(add_node_inputs_count_0,          OPARA_ERR_CORRUPT, node_without_inputs(f)) \
    X(add_node_too_many_inputs,         OPARA_ERR_LIMIT_EXCEEDED, opara_builder_add_node(f->b, "Relu", "r", 100000, k_x, 1, k_y, 0, NULL)) \
    X(add_node_unknown_op,              OPARA_ERR_UNSUPPORTED_OP, relu_model(f, "NoSuchOp", OPARA_DTYPE_F32, "y")) \
    X(attr_null_name,                   OPARA_ERR_INVALID_ARGS, node_with_attr(f, attr_of(NULL, OPARA_ATTR_INT, 1))) \
    X(attr_unknown_type,                OPARA_ERR_INVALID_ARGS, node_with_attr(f, attr_of("alpha", (opara_attr_type)99, 1))) \
    X(attr_ints_null_count_2,           OPARA_ERR_INVALID_ARGS, node_with_attr(f, attr_of("pads", OPARA_ATTR_INTS, 2))) \
    X(attr_floats_null_count_2,         OPARA_ERR_INVALID_ARGS, node_with_attr(f, attr_of("scales", OPARA_ATTR_FLOATS, 2))) \
    X(attr_ints_null_count_0,           OPARA_OK, node_with_attr(f, attr_of("unused_ints", OPARA_ATTR_INTS, 0))) \
    X(attr_string_null,                 OPARA_ERR_INVALID_ARGS, node_with_attr(f, attr_of("mode", OPARA_ATTR_STRING, 0))) \
    X(add_output_null_builder,          OPARA_ERR_INVALID_ARGS, opara_builder_add_output(NULL, "y")) \
    X(add_output_null_name,             OPARA_ERR_INVALID_ARGS, opara_builder_add_output(f->b, NULL)) \
    X(add_output_empty_name,            OPARA_ERR_INVALID_ARGS, opara_builder_add_output(f->b, "")) \
    X(add_output_unknown_name,          OPARA_ERR_NOT_FOUND, relu_model(f, "Relu", OPARA_DTYPE_F32, "nosuch")) \
    X(finish_null_builder,              OPARA_ERR_INVALID_ARGS, opara_builder_finish(NULL, &f->out_m)) \
    X(finish_null_out,                  OPARA_ERR_INVALID_ARGS, opara_builder_finish(f->b, NULL)) \
    X(finish_empty_builder,             OPARA_ERR_CORRUPT, opara_builder_finish(f->b, &f->out_m)) \
    X(save_memory_null_builder,         OPARA_ERR_INVALID_ARGS, opara_builder_save_memory(NULL, &f->data, &f->size)) \
    X(save_memory_null_data,            OPARA_ERR_INVALID_ARGS, opara_builder_save_memory(f->b, NULL, &f->size)) \
    X(save_memory_null_size,            OPARA_ERR_INVALID_ARGS, opara_builder_save_memory(f->b, &f->data, NULL)) \
    X(save_file_null_builder,           OPARA_ERR_INVALID_ARGS, opara_builder_save_file(NULL, g_out_path)) \
    X(save_file_null_path,              OPARA_ERR_INVALID_ARGS, opara_builder_save_file(f->b, NULL)) \
    X(save_file_ok,                     OPARA_OK, save_to(f, g_out_path)) \
    X(save_file_directory,              OPARA_ERR_IO, save_to(f, g_dir)) \
    X(free_null_runtime_null_ptr,       OPARA_OK, AS_OK(opara_free(NULL, NULL))) \
    X(free_null_ptr,                    OPARA_OK, AS_OK(opara_free(f->rt, NULL))) \
    /* session creation */ \
    X(session_create_null_runtime,      OPARA_ERR_INVALID_ARGS, opara_session_create(NULL, f->m, NULL, &f->out_s)) \
    X(session_create_null_model,        OPARA_ERR_INVALID_ARGS, opara_session_create(f->rt, NULL, NULL, &f->out_s)) \
    X(session_create_null_out,          OPARA_ERR_INVALID_ARGS, opara_session_create(f->rt, f->m, NULL, NULL)) \
    X(session_create_strategy_enum,     OPARA_ERR_BAD_ENUM, session_with(f, desc_strategy(OPARA_STRATEGY_COUNT))) \
    X(session_create_strategy_negative, OPARA_ERR_BAD_ENUM, session_with(f, desc_strategy(-1))) \
    X(session_create_launch_order_enum, OPARA_ERR_BAD_ENUM, session_with(f, desc_order(OPARA_LAUNCH_COUNT))) \
    X(session_create_precision_enum,    OPARA_ERR_BAD_ENUM, session_with(f, desc_precision(OPARA_PRECISION_COUNT))) \
    X(session_create_backend_enum,      OPARA_ERR_BAD_ENUM, session_with(f, desc_backend(7))) \
    X(session_create_budget_negative,   OPARA_ERR_INVALID_ARGS, session_with(f, desc_budget(-1.0))) \
    X(session_create_budget_nan,        OPARA_ERR_INVALID_ARGS, session_with(f, desc_budget(nan("")))) \
    X(session_create_batch_negative,    OPARA_ERR_INVALID_ARGS, session_with(f, desc_batch(-2))) \
    X(session_create_cpu_one_thread,    OPARA_OK, session_cpu_default(f)) \
    /* session queries */ \
    X(session_destroy_null,             OPARA_OK, AS_OK(opara_session_destroy(NULL))) \
    X(session_input_count_null,         OPARA_OK, IS(opara_session_input_count(NULL) == 0)) \
    X(session_output_count_null,        OPARA_OK, IS(opara_session_output_count(NULL) == 0)) \
    X(session_input_info_null_session,  OPARA_ERR_INVALID_ARGS, opara_session_input_info(NULL, 0, &f->info)) \
    X(session_input_info_null_out,      OPARA_ERR_INVALID_ARGS, opara_session_input_info(f->s, 0, NULL)) \
    X(session_input_info_index,         OPARA_ERR_NOT_FOUND, opara_session_input_info(f->s, 1, &f->info)) \
    X(session_output_info_null_session, OPARA_ERR_INVALID_ARGS, opara_session_output_info(NULL, 0, &f->info)) \
    X(session_output_info_null_out,     OPARA_ERR_INVALID_ARGS, opara_session_output_info(f->s, 0, NULL)) \
    X(session_output_info_index,        OPARA_ERR_NOT_FOUND, opara_session_output_info(f->s, 2, &f->info)) \
    X(session_plan_info_null_session,   OPARA_ERR_INVALID_ARGS, opara_session_get_plan_info(NULL, &f->plan)) \
    X(session_plan_info_null_out,       OPARA_ERR_INVALID_ARGS, opara_session_get_plan_info(f->s, NULL)) \
    X(session_run_stats_null_session,   OPARA_ERR_INVALID_ARGS, opara_session_get_run_stats(NULL, &f->run_stats)) \
    X(session_run_stats_null_out,       OPARA_ERR_INVALID_ARGS, opara_session_get_run_stats(f->s, NULL)) \
    X(session_node_times_null_session,  OPARA_OK, IS(opara_session_get_node_times(NULL, f->times, 64) == 0)) \
    X(session_node_times_null_out,      OPARA_OK, IS(opara_session_get_node_times(f->s, NULL, 64) == 8)) \
    X(session_node_times_cap_0,         OPARA_OK, IS(opara_session_get_node_times(f->s, f->times, 0) == 8)) \
    X(session_last_error_null,          OPARA_OK, IS(opara_session_last_error(NULL) != NULL)) \
    X(write_plan_dot_null_session,      OPARA_ERR_INVALID_ARGS, opara_session_write_plan_dot(NULL, g_out_path)) \
    X(write_plan_dot_null_path,         OPARA_ERR_INVALID_ARGS, opara_session_write_plan_dot(f->s, NULL)) \
    X(write_plan_dot_directory,         OPARA_ERR_IO, opara_session_write_plan_dot(f->s, g_dir)) \
    X(write_trace_null_session,         OPARA_ERR_INVALID_ARGS, opara_session_write_trace(NULL, g_out_path)) \
    X(write_trace_null_path,            OPARA_ERR_INVALID_ARGS, opara_session_write_trace(f->s, NULL)) \
    X(write_trace_directory,            OPARA_ERR_IO, opara_session_write_trace(f->s, g_dir)) \
    /* output data */ \
    X(output_data_null_session,         OPARA_OK, IS(opara_session_output_data(NULL, 0) == NULL)) \
    X(output_data_index,                OPARA_OK, IS(opara_session_output_data(f->s, 2) == NULL)) \
    X(output_data_before_any_run,       OPARA_OK, IS(opara_session_output_data(f->s, 0) == NULL)) \
    X(output_data_after_run,            OPARA_OK, output_data_after_run(f)) \
    X(output_data_after_failed_run,     OPARA_OK, output_data_after_failed_run(f)) \
    /* running */ \
    X(run_ok,                           OPARA_OK, run_ok(f)) \
    X(run_null_session,                 OPARA_ERR_INVALID_ARGS, opara_session_run(NULL, f->in, 1, f->out, 1)) \
    X(run_inputs_null_count_1,          OPARA_ERR_INVALID_ARGS, opara_session_run(f->s, NULL, 1, f->out, 1)) \
    X(run_outputs_null_count_1,         OPARA_ERR_INVALID_ARGS, opara_session_run(f->s, f->in, 1, NULL, 1)) \
    X(run_inputs_count_0,               OPARA_ERR_INVALID_ARGS, opara_session_run(f->s, f->in, 0, f->out, 1)) \
    X(run_inputs_null_count_0,          OPARA_ERR_INVALID_ARGS, opara_session_run(f->s, NULL, 0, NULL, 0)) \
    X(run_outputs_count_0_is_fine,      OPARA_OK, opara_session_run(f->s, f->in, 1, f->out, 0)) \
    X(run_outputs_null_count_0_fine,    OPARA_OK, opara_session_run(f->s, f->in, 1, NULL, 0)) \
    X(run_input_given_twice,            OPARA_ERR_INVALID_ARGS, opara_session_run(f->s, f->in, 2, NULL, 0)) \
    X(run_extra_positional_input,       OPARA_ERR_NOT_FOUND, run_extra_positional(f)) \
    X(run_input_wrong_name,             OPARA_ERR_NOT_FOUND, run_spoiled(f, 0, sp_name)) \
    X(run_input_wrong_dtype,            OPARA_ERR_BAD_DTYPE, run_spoiled(f, 0, sp_dtype)) \
    X(run_input_unknown_dtype,          OPARA_ERR_BAD_DTYPE, run_spoiled(f, 0, sp_bad_dtype)) \
    X(run_input_wrong_rank,             OPARA_ERR_SHAPE, run_spoiled(f, 0, sp_rank)) \
    X(run_input_negative_rank,          OPARA_ERR_SHAPE, run_spoiled(f, 0, sp_rank_neg)) \
    X(run_input_huge_rank,              OPARA_ERR_SHAPE, run_spoiled(f, 0, sp_rank_big)) \
    X(run_input_wrong_dim,              OPARA_ERR_SHAPE, run_spoiled(f, 0, sp_dim)) \
    X(run_input_wrong_batch,            OPARA_ERR_SHAPE, run_spoiled(f, 0, sp_batch)) \
    X(run_input_null_data,              OPARA_ERR_INVALID_ARGS, run_spoiled(f, 0, sp_data)) \
    X(run_output_ok,                    OPARA_OK, run_spoiled(f, 1, sp_none)) \
    X(run_output_wrong_name,            OPARA_ERR_NOT_FOUND, run_spoiled(f, 1, sp_name)) \
    X(run_output_wrong_dtype,           OPARA_ERR_BAD_DTYPE, run_spoiled(f, 1, sp_dtype)) \
    X(run_output_wrong_rank,            OPARA_ERR_SHAPE, run_spoiled(f, 1, sp_rank)) \
    X(run_output_huge_rank,             OPARA_ERR_SHAPE, run_spoiled(f, 1, sp_rank_big)) \
    X(run_output_wrong_batch,           OPARA_ERR_SHAPE, run_spoiled(f, 1, sp_batch)) \
    X(run_output_null_data,             OPARA_ERR_INVALID_ARGS, run_spoiled(f, 1, sp_data)) \
    X(run_device_null_session,          OPARA_ERR_INVALID_ARGS, opara_session_run_device(NULL, f->in, 1, f->out, 1)) \
    X(run_device_on_cpu_session,        OPARA_ERR_INVALID_ARGS, opara_session_run_device(f->s, f->in, 1, f->out, 1)) \
    /* destroy orders */ \
    X(destroy_session_model_runtime,    OPARA_OK, order_session_model_runtime(f)) \
    X(destroy_two_sessions_any_order,   OPARA_OK, order_two_sessions_either_order(f)) \
    X(destroy_builder_before_its_model, OPARA_OK, order_builder_before_its_model(f)) \
    X(destroy_model_before_its_builder, OPARA_OK, order_model_before_its_builder(f)) \
    X(destroy_builder_then_free_image,  OPARA_OK, order_saved_image_after_builder(f)) \
    X(destroy_memory_model_then_image,  OPARA_OK, order_memory_model_before_its_session_destroyed_last(f))

#define MISUSE_ENUM(name, expected, call) ROW_##name,
enum { MISUSE_ROWS(MISUSE_ENUM) N_ROWS };

typedef struct misuse_row {
    const char* name;
    opara_result expected;
} misuse_row;

#define MISUSE_ENTRY(name, expected, call) {#name, expected},
static const misuse_row k_rows[] = {MISUSE_ROWS(MISUSE_ENTRY)};

#define MISUSE_CASE(name, expected, call) case ROW_##name: return (call);
static opara_result misuse_call(int row, fx* f) {
    switch (row) {
    MISUSE_ROWS(MISUSE_CASE)
    default: break;
    }
    return OPARA_ERR_INTERNAL;
}

OT_TEST(every_row_returns_its_code) {
    int row, wrong = 0, ran = 0;
    const char* only = getenv("OPARA_MISUSE_ROW"); /* one row, by name (debugging a crash) */
    for (row = 0; row < N_ROWS; ++row) {
        fx f;
        opara_result r;
        if (only && strcmp(only, k_rows[row].name) != 0) continue;
        ++ran;
        if (!fx_open(&f)) {
            CHECK(!"fixture");
            fx_close(&f);
            return;
        }
        r = misuse_call(row, &f);
        if (r != k_rows[row].expected) {
            ++wrong;
            OT_LOG("row %s: %s (%d), expected %s (%d); detail: %s | %s", k_rows[row].name, opara_result_string(r), (int)r,
                   opara_result_string(k_rows[row].expected), (int)k_rows[row].expected,
                   opara_runtime_last_error(f.rt), opara_session_last_error(f.s));
        }
        fx_close(&f);
    }
    printf("misuse table: %d calls, %d with the wrong code\n", ran, wrong);
    CHECK_EQ(wrong, 0);
}

/* A failing run reports to its session and leaves the runtime's detail (here a failed load's) as it
   was; a later good run clears the session's detail. */
OT_TEST(run_failure_is_the_sessions_detail_not_the_runtimes) {
    static const char junk[8] = "notopara";
    char load_detail[1024];
    fx f;
    REQUIRE(fx_open(&f));
    CHECK(opara_model_load_memory(f.rt, junk, sizeof junk, &f.out_m) != OPARA_OK);
    snprintf(load_detail, sizeof load_detail, "%s", opara_runtime_last_error(f.rt));
    CHECK(load_detail[0] != 0);
    CHECK_EQ(opara_session_run(f.s, f.in, 0, f.out, 1), OPARA_ERR_INVALID_ARGS); /* x is missing */
    CHECK(strstr(opara_session_last_error(f.s), "'x' is missing") != NULL);
    CHECK_STR(opara_runtime_last_error(f.rt), load_detail);
    CHECK_EQ(opara_session_run(f.s, f.in, 1, f.out, 1), OPARA_OK);
    CHECK_STR(opara_session_last_error(f.s), "");
    CHECK_STR(opara_runtime_last_error(f.rt), load_detail);
    fx_close(&f);
}

/* The call: n_input_shapes = 1 with input_shapes = NULL segfaulted in the loader. */
OT_TEST(onnx_null_shape_list_is_invalid_args) {
    fx f;
    REQUIRE(fx_open(&f));
    f.oo = onnx_opts(NULL, 1, 0);
    CHECK_EQ(opara_model_load_onnx_memory(f.rt, g_onnx.d, g_onnx.n, &f.oo, &f.out_m), OPARA_ERR_INVALID_ARGS);
    CHECK(f.out_m == NULL);
    CHECK(strstr(opara_runtime_last_error(f.rt), "input_shapes is NULL") != NULL);
    fx_close(&f);
}

/* A zero-element constant is named as such, not as missing (y = Relu(c), c a [0] constant): zero-sized
   tensors are refused with OPARA_ERR_SHAPE, at the builder's finish or at session creation. */
OT_TEST(zero_element_constant_is_not_reported_missing) {
    static const int64_t c_dims[1] = {0};
    static const char* const in[] = {"c"};
    static const char* const out[] = {"y"};
    float dummy = 0;
    fx f;
    opara_session_desc d = desc_cpu();
    opara_result r;
    const char* why;
    REQUIRE(fx_open(&f));
    opara_builder_add_constant(f.b, "c", OPARA_DTYPE_F32, 1, c_dims, &dummy, 0);
    opara_builder_add_node(f.b, "Relu", "relu", 1, in, 1, out, 0, NULL);
    opara_builder_add_output(f.b, "y");
    r = opara_builder_finish(f.b, &f.out_m);
    if (r == OPARA_OK) r = opara_session_create(f.rt, f.out_m, &d, &f.out_s);
    /* refused by the builder's finish (its detail) or by session creation (the runtime's) */
    why = f.out_m ? opara_runtime_last_error(f.rt) : opara_builder_last_error(f.b);
    OT_LOG("%s: %s", opara_result_string(r), why);
    CHECK_EQ(r, OPARA_ERR_SHAPE);
    CHECK(strstr(why, "missing") == NULL);
    CHECK(strstr(why, "'c'") != NULL);
    CHECK(strstr(why, "zero-sized") != NULL);
    fx_close(&f);
}

static const opara_test_case tests[] = {
    OT_CASE(every_row_returns_its_code),
    OT_CASE(onnx_null_shape_list_is_invalid_args),
    OT_CASE(run_failure_is_the_sessions_detail_not_the_runtimes),
    OT_CASE(zero_element_constant_is_not_reported_missing),
};

/* y = Relu(x), x [1,4]. */
static pbw relu_onnx(void) {
    static const int64_t d[2] = {1, 4};
    static const char* const in[] = {"x", NULL};
    static const char* const out[] = {"y", NULL};
    pbw g = {0, 0, 0};
    pbw_node(&g, "Relu", "relu", in, out, NULL);
    pbw_value_info(&g, 11, "x", 1, d, 2);
    pbw_value_info(&g, 12, "y", 1, d, 2);
    return pbw_model(7, 13, &g);
}

static int write_file(const char* path, const void* data, size_t size) {
    FILE* f = fopen(path, "wb");
    int ok = f && fwrite(data, 1, size, f) == size;
    if (f) ok &= fclose(f) == 0;
    return ok;
}

int main(int argc, char** argv) {
    int rc, ok;
    opara_runtime* rt = NULL;
    void* image = NULL;
    size_t size = 0;
    if (!mkdtemp(g_dir)) {
        printf("mkdtemp failed\n0 passed, 1 failed, 0 skipped\n");
        return 1;
    }
    snprintf(g_model_path, sizeof g_model_path, "%s/model.opara", g_dir);
    snprintf(g_onnx_path, sizeof g_onnx_path, "%s/model.onnx", g_dir);
    snprintf(g_absent, sizeof g_absent, "%s/absent.opara", g_dir);
    snprintf(g_out_path, sizeof g_out_path, "%s/out.txt", g_dir);
#ifdef _WIN32
    snprintf(g_fifo, sizeof g_fifo, "%s", g_dir); /* no FIFOs there: the rows load a directory, also an I/O error */
#else
    snprintf(g_fifo, sizeof g_fifo, "%s/fifo.opara", g_dir);
#endif
    g_onnx = relu_onnx();
    ok = opara_runtime_create(NULL, &rt) == OPARA_OK && fixture_image(rt, &image, &size) == OPARA_OK &&
         write_file(g_model_path, image, size) && write_file(g_onnx_path, g_onnx.d, g_onnx.n);
#ifndef _WIN32
    ok = ok && mkfifo(g_fifo, 0600) == 0; /* no writer ever opens it: a blocking open would hang the row */
#endif
    opara_free(rt, image);
    opara_runtime_destroy(rt);
    if (!ok) {
        printf("setup failed\n0 passed, 1 failed, 0 skipped\n");
        return 1;
    }
    rc = opara_test_main(argc, argv, tests, OT_COUNT(tests));
    remove(g_model_path);
    remove(g_onnx_path);
    remove(g_out_path);
#ifndef _WIN32
    remove(g_fifo);
#endif
    rmdir(g_dir);
    free(g_onnx.d);
    return rc;
}
