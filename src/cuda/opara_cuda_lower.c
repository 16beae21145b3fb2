/* Lowering of graph nodes to CUDA launch descriptors: which kernel, which grid and block, which
   arguments (scalars, tensors by value index, shape tables in the meta array, folded constants
   in the aux array). Pure host code: no driver call, so it runs before any device memory exists
   and its output also feeds the scheduler's per-op descriptors. */
#include "opara_backend_cuda.h"

#include <math.h>
#include <string.h>

#define OPARA__CUDA_THREADS 256u
#define OPARA__CUDA_MAX_GRID 65535u
/* Limits of a launch (CUDA C++ Programming Guide, compute capabilities table, all architectures
   since 3.0): grid x up to 2^31 - 1, y and z up to 65535; block x, y up to 1024, z up to 64, at
   most 1024 threads. */
#define OPARA__CUDA_GRID_X_MAX 2147483647u
#define OPARA__CUDA_GRID_YZ_MAX 65535u
/* Our kernels index with 32-bit ints and walk with grid-stride loops (i += blockDim.x * gridDim.x,
   at most 256 * 65535): the last step must not overflow, so a tensor a kernel touches has at most
   this many elements (2^31 - 1 - 256 * 65535 + 1, about 2.13e9). */
#define OPARA__CUDA_MAX_ELEMS ((int64_t)INT32_MAX - (int64_t)OPARA__CUDA_THREADS * OPARA__CUDA_MAX_GRID + 1)

typedef struct opara__lower_walk {
    opara_runtime* rt;
    const opara__graph* g;
    const opara__shape* shapes;
    const opara__node_params* params; /* [n_nodes] what the shape engine resolved */
    const opara_dtype* dtypes;
    opara__cuda_lowering* low;
    uint32_t node;
} opara__lower_walk;

#define OPARA__CUDA_KERNEL_NAME(id, name, file) name,
#define OPARA__CUDA_KERNEL_FILE(id, name, file) file,
static const char* const opara__lower_cuda_kernel_names[] = {OPARA__CUDA_KERNELS(OPARA__CUDA_KERNEL_NAME)};
static const char* const opara__lower_cuda_kernel_files[] = {OPARA__CUDA_KERNELS(OPARA__CUDA_KERNEL_FILE)};
#undef OPARA__CUDA_KERNEL_NAME
#undef OPARA__CUDA_KERNEL_FILE

OPARA__PRIVATE const char* opara__cuda_kernel_name(opara__cuda_kernel k) {
    return (unsigned)k < OPARA__CUK_COUNT ? opara__lower_cuda_kernel_names[k] : "?";
}
OPARA__PRIVATE const char* opara__cuda_kernel_file(opara__cuda_kernel k) {
    return (unsigned)k < OPARA__CUK_COUNT ? opara__lower_cuda_kernel_files[k] : "?";
}

/* The node's axis as the shape engine normalized it; -1 when it could not. */
static int64_t opara__lower_axis(const opara__lower_walk* w) {
    return w->params[w->node].resolved ? w->params[w->node].axis : -1;
}

static opara_result opara__lower_fail(opara__lower_walk* w, opara_result code, const char* what) {
    const opara__node* n = &w->g->nodes[w->node];
    return opara__fail_to(&w->rt->error, w->low->logger, code, "CUDA backend: node %u '%s' (%s): %s", w->node,
                          n->name ? n->name : "", opara__op_name(n->op), what);
}

/* ---- building launches ------------------------------------------------------------------------- */

static opara__cuda_launch* opara__lower_launch(opara__lower_walk* w, opara__cuda_kernel k) {
    opara__cuda_lowering* low = w->low;
    opara__cuda_launch* L;
    if (opara__grow(w->rt, (void**)&low->launches, &low->cap_launches, low->n_launches + 1, sizeof *L) != OPARA_OK)
        return NULL;
    L = &low->launches[low->n_launches++];
    memset(L, 0, sizeof *L);
    L->node = w->node;
    L->type = OPARA__CULAUNCH_KERNEL;
    L->kernel = (uint8_t)k;
    L->grid[0] = L->grid[1] = L->grid[2] = 1;
    L->block[0] = L->block[1] = L->block[2] = 1;
    return L;
}

static void opara__lower_arg(opara__cuda_launch* L, opara__cuda_arg_kind kind, int32_t ref, uint64_t raw) {
    if (L->n_args >= OPARA__CUDA_MAX_ARGS) return; /* the kernel signatures have at most 24 */
    L->args[L->n_args].kind = (uint8_t)kind;
    L->args[L->n_args].ref = ref;
    L->args[L->n_args].raw = raw;
    L->n_args++;
}
/* A 32-bit int argument; a value that does not fit is remembered (opara__lower_check_launches refuses
   the node) rather than silently truncated. */
static void opara__lower_arg_i32(opara__cuda_launch* L, int64_t v) {
    if ((v < INT32_MIN || v > INT32_MAX) && !L->arg_overflow) L->arg_overflow = (uint8_t)(L->n_args + 1);
    opara__lower_arg(L, OPARA__CUARG_I32, 0, (uint64_t)(uint32_t)(int32_t)v);
}
static void opara__lower_arg_i64(opara__cuda_launch* L, int64_t v) { opara__lower_arg(L, OPARA__CUARG_I64, 0, (uint64_t)v); }
static void opara__lower_arg_f32(opara__cuda_launch* L, float v) {
    uint32_t bits;
    memcpy(&bits, &v, sizeof bits);
    opara__lower_arg(L, OPARA__CUARG_F32, 0, bits);
}
/* Tensor argument: value v (or a NULL pointer for v < 0, an omitted optional input). */
static void opara__lower_arg_tensor(opara__cuda_launch* L, int32_t v) {
    if (v < 0) opara__lower_arg(L, OPARA__CUARG_NULL, 0, 0);
    else opara__lower_arg(L, OPARA__CUARG_TENSOR, v, 0);
}

/* One thread per element, grid-stride loops in the kernels: the grid is capped. */
static void opara__lower_grid_1d(opara__cuda_launch* L, int64_t n) {
    int64_t blocks = (n + OPARA__CUDA_THREADS - 1) / OPARA__CUDA_THREADS;
    L->grid[0] = (uint32_t)(blocks < 1 ? 1 : blocks > OPARA__CUDA_MAX_GRID ? OPARA__CUDA_MAX_GRID : blocks);
    L->block[0] = OPARA__CUDA_THREADS;
}

static opara_result opara__lower_meta_push(opara__lower_walk* w, const int64_t* v, uint32_t n, int32_t* at) {
    opara__cuda_lowering* low = w->low;
    uint32_t i;
    if (opara__grow(w->rt, (void**)&low->meta, &low->cap_meta, low->n_meta + n, sizeof(int32_t)) != OPARA_OK)
        return OPARA_ERR_OUT_OF_MEMORY;
    for (i = 0; i < n; ++i) {
        if (v[i] > INT32_MAX || v[i] < INT32_MIN) return opara__lower_fail(w, OPARA_ERR_LIMIT_EXCEEDED, "a dimension exceeds 2^31");
        low->meta[low->n_meta + i] = (int32_t)v[i];
    }
    *at = (int32_t)low->n_meta;
    low->n_meta += n;
    return OPARA_OK;
}

/* Appends n floats to the aux table; they start 16 bytes aligned (the table itself is 256-aligned
   in device memory), so a library may read them too. */
static opara_result opara__lower_aux_push(opara__lower_walk* w, const float* v, size_t n, int32_t* at) {
    opara__cuda_lowering* low = w->low;
    size_t start = (low->n_aux + 3) / 4 * 4;
    if (opara__grow(w->rt, (void**)&low->aux, &low->cap_aux, start + n, sizeof(float)) != OPARA_OK)
        return OPARA_ERR_OUT_OF_MEMORY;
    memset(low->aux + low->n_aux, 0, (start - low->n_aux) * sizeof(float));
    low->n_aux = start;
    memcpy(low->aux + low->n_aux, v, n * sizeof(float));
    *at = (int32_t)low->n_aux;
    low->n_aux += n;
    return OPARA_OK;
}

/* ---- shapes ---------------------------------------------------------------------------------- */

static const opara__shape* opara__lower_in_shape(const opara__lower_walk* w, uint32_t i) {
    return &w->shapes[w->g->nodes[w->node].inputs[i]];
}
static const opara__shape* opara__lower_out_shape(const opara__lower_walk* w, uint32_t i) {
    return &w->shapes[w->g->nodes[w->node].outputs[i]];
}
static int32_t opara__lower_in(const opara__lower_walk* w, uint32_t i) {
    const opara__node* n = &w->g->nodes[w->node];
    return i < n->n_inputs ? n->inputs[i] : -1;
}
static int32_t opara__lower_out(const opara__lower_walk* w, uint32_t i) { return w->g->nodes[w->node].outputs[i]; }

static int64_t opara__lower_numel(const opara__shape* s) {
    int64_t n = 1;
    int32_t d;
    for (d = 0; d < s->ndim; ++d) n *= s->dims[d];
    return n;
}

static void opara__lower_contig_strides(const opara__shape* s, int64_t* st) {
    int64_t acc = 1;
    int32_t d;
    for (d = s->ndim - 1; d >= 0; --d) {
        st[d] = acc;
        acc *= s->dims[d];
    }
}

static size_t opara__lower_dsize(opara_dtype t) { return opara_dtype_size(t); }

static opara_result opara__lower_check_elems(opara__lower_walk* w, int64_t n) {
    char what[160];
    if (n <= OPARA__CUDA_MAX_ELEMS) return OPARA_OK;
    opara__format(what, sizeof what, "%lld elements, more than the %lld the CUDA kernels can index with 32-bit ints", (long long)n,
                  (long long)OPARA__CUDA_MAX_ELEMS);
    return opara__lower_fail(w, OPARA_ERR_LIMIT_EXCEEDED, what);
}

/* Value v (an input or output a kernel indexes) within OPARA__CUDA_MAX_ELEMS; the error names it. */
static opara_result opara__lower_check_value(opara__lower_walk* w, int32_t v, const char* kernel) {
    char what[192];
    int64_t n = v >= 0 ? opara__lower_numel(&w->shapes[v]) : 0;
    if (n <= OPARA__CUDA_MAX_ELEMS) return OPARA_OK;
    opara__format(what, sizeof what, "%s would index value '%s' of %lld elements with 32-bit ints (at most %lld)", kernel,
                  w->g->values[v].name ? w->g->values[v].name : "", (long long)n, (long long)OPARA__CUDA_MAX_ELEMS);
    return opara__lower_fail(w, OPARA_ERR_LIMIT_EXCEEDED, what);
}

/* An element-wise walk over an output shape with up to 4 operands' element strides. */
typedef struct opara__lower_walk_shape {
    int32_t ndim;
    int64_t dims[OPARA_MAX_DIMS];
    int64_t st[4][OPARA_MAX_DIMS];
} opara__lower_walk_shape;

/* The walk over out with n_ops (<= 4) stride sets, collapsed: size-1 dims dropped, and a dim merged into
   the next inner one where every operand steps through the pair as one (stride = inner stride * inner
   dim). The row-major order of the elements, hence each one's offsets, is unchanged; ndim >= 1 (a scalar
   or all-1 shape is [1] with zero strides). */
static void opara__lower_collapse(const opara__shape* out, const int64_t* const* strides, uint32_t n_ops,
                                  opara__lower_walk_shape* c) {
    int64_t dims[OPARA_MAX_DIMS], st[4][OPARA_MAX_DIMS]; /* innermost first */
    int32_t d, k = 0, j;
    uint32_t i;
    for (d = out->ndim - 1; d >= 0; --d) {
        int merge = k > 0;
        if (out->dims[d] == 1) continue;
        for (i = 0; i < n_ops && merge; ++i) merge = strides[i][d] == st[i][k - 1] * dims[k - 1];
        if (merge) {
            dims[k - 1] *= out->dims[d];
            continue;
        }
        dims[k] = out->dims[d];
        for (i = 0; i < n_ops; ++i) st[i][k] = strides[i][d];
        ++k;
    }
    if (k == 0) {
        dims[0] = 1;
        for (i = 0; i < n_ops; ++i) st[i][0] = 0;
        k = 1;
    }
    c->ndim = k;
    for (j = 0; j < k; ++j) {
        c->dims[j] = dims[k - 1 - j];
        for (i = 0; i < n_ops; ++i) c->st[i][j] = st[i][k - 1 - j];
    }
}

/* Pushes a collapsed walk as [ndim, dims, strides of each operand]. */
static opara_result opara__lower_meta_walk(opara__lower_walk* w, const opara__lower_walk_shape* c, uint32_t n_ops, int32_t* at) {
    int64_t buf[1 + OPARA_MAX_DIMS * 5];
    uint32_t k = 0, i;
    int32_t d;
    buf[k++] = c->ndim;
    for (d = 0; d < c->ndim; ++d) buf[k++] = c->dims[d];
    for (i = 0; i < n_ops; ++i)
        for (d = 0; d < c->ndim; ++d) buf[k++] = c->st[i][d];
    return opara__lower_meta_push(w, buf, k, at);
}

/* Pushes [ndim, dims, strides of each operand] (n_ops <= 4) of the collapsed walk over out. */
static opara_result opara__lower_meta_strided(opara__lower_walk* w, const opara__shape* out, const int64_t* const* strides,
                                        uint32_t n_ops, int32_t* at) {
    opara__lower_walk_shape c;
    opara__lower_collapse(out, strides, n_ops, &c);
    return opara__lower_meta_walk(w, &c, n_ops, at);
}

/* The kernels' register copy of a collapsed walk (elementwise.cu): fast_ndim (0 where the walk has more
   than 4 dims: the kernel reads meta), dims 1..3 of the 4 right-aligned slots, then 4 strides per operand. */
static void opara__lower_args_walk(opara__cuda_launch* L, const opara__lower_walk_shape* c, uint32_t n_ops) {
    int32_t pad = 4 - c->ndim, s;
    uint32_t i;
    int fast = c->ndim <= 4;
    opara__lower_arg_i32(L, fast ? c->ndim : 0);
    for (s = 1; s < 4; ++s) opara__lower_arg_i32(L, fast && s >= pad ? c->dims[s - pad] : 1);
    for (i = 0; i < n_ops; ++i)
        for (s = 0; s < 4; ++s) opara__lower_arg_i32(L, fast && s >= pad ? c->st[i][s - pad] : 0);
}

/* ---- element-wise ---------------------------------------------------------------------------- */

/* y = f(x) element-wise with kernel k (UNARY or MATH: the same arguments), its code and parameters. */
static opara_result opara__lower_map(opara__lower_walk* w, opara__cuda_kernel k, int code, float a, float b) {
    const opara__node* n = &w->g->nodes[w->node];
    int64_t count = opara__lower_numel(opara__lower_out_shape(w, 0));
    opara__cuda_launch* L;
    if (w->dtypes[n->outputs[0]] != OPARA_DTYPE_F32) return opara__lower_fail(w, OPARA_ERR_UNSUPPORTED, "only float32");
    if (opara__lower_check_elems(w, count) != OPARA_OK) return OPARA_ERR_LIMIT_EXCEEDED;
    if (!(L = opara__lower_launch(w, k))) return OPARA_ERR_OUT_OF_MEMORY;
    opara__lower_arg_tensor(L, opara__lower_in(w, 0));
    opara__lower_arg_tensor(L, opara__lower_out(w, 0));
    opara__lower_arg_i32(L, count);
    opara__lower_arg_i32(L, code);
    opara__lower_arg_f32(L, a);
    opara__lower_arg_f32(L, b);
    opara__lower_grid_1d(L, count);
    return OPARA_OK;
}

static opara_result opara__lower_unary(opara__lower_walk* w, opara__cuda_act act, float a, float b) {
    return opara__lower_map(w, OPARA__CUK_UNARY, act, a, b);
}

static opara_result opara__lower_math(opara__lower_walk* w, opara__cuda_math op, float a, float b) {
    return opara__lower_map(w, OPARA__CUK_MATH, op, a, b);
}

/* QuantizeLinear, DequantizeLinear (src/cuda/kernels/quant.cu): x viewed as [outer, mid, inner] around
   the record's axis (mid 1 per tensor); an omitted zero point is a NULL pointer. */
static opara_result opara__lower_quantize(opara__lower_walk* w, int quantize) {
    const opara__shape* x = opara__lower_in_shape(w, 0);
    const opara__node_params* p = &w->params[w->node];
    int64_t count = opara__lower_numel(x), mid = 1, inner = count;
    int32_t d;
    opara__cuda_launch* L;
    if (!p->resolved) return opara__lower_fail(w, OPARA_ERR_SHAPE, "the scale does not fit the input");
    if (p->u.quant.per_axis) {
        mid = x->dims[p->axis];
        for (d = (int32_t)p->axis + 1, inner = 1; d < x->ndim; ++d) inner *= x->dims[d];
    }
    if (opara__lower_check_elems(w, count) != OPARA_OK) return OPARA_ERR_LIMIT_EXCEEDED;
    if (!(L = opara__lower_launch(w, quantize ? OPARA__CUK_QUANTIZE : OPARA__CUK_DEQUANTIZE))) return OPARA_ERR_OUT_OF_MEMORY;
    opara__lower_arg_tensor(L, opara__lower_in(w, 0));
    opara__lower_arg_tensor(L, opara__lower_in(w, 1));
    opara__lower_arg_tensor(L, opara__lower_in(w, 2));
    opara__lower_arg_tensor(L, opara__lower_out(w, 0));
    opara__lower_arg_i32(L, count);
    opara__lower_arg_i32(L, inner > 0 ? inner : 1);
    opara__lower_arg_i32(L, mid > 0 ? mid : 1);
    opara__lower_arg_i32(L, quantize ? w->dtypes[opara__lower_out(w, 0)] == OPARA_DTYPE_I8
                                     : (int64_t)w->dtypes[opara__lower_in(w, 0)]); /* ONNX's type code */
    opara__lower_grid_1d(L, count);
    return OPARA_OK;
}

/* DynamicQuantizeLinear: one block (the range is global), 256 threads. */
static opara_result opara__lower_dynamic_quantize(opara__lower_walk* w) {
    int64_t count = opara__lower_numel(opara__lower_in_shape(w, 0));
    opara__cuda_launch* L;
    if (opara__lower_check_elems(w, count) != OPARA_OK) return OPARA_ERR_LIMIT_EXCEEDED;
    if (!(L = opara__lower_launch(w, OPARA__CUK_DYNAMIC_QUANTIZE))) return OPARA_ERR_OUT_OF_MEMORY;
    opara__lower_arg_tensor(L, opara__lower_in(w, 0));
    opara__lower_arg_tensor(L, opara__lower_out(w, 0));
    opara__lower_arg_tensor(L, opara__lower_out(w, 1));
    opara__lower_arg_tensor(L, opara__lower_out(w, 2));
    opara__lower_arg_i32(L, count);
    L->grid[0] = 1;
    L->block[0] = 256;
    return OPARA_OK;
}

static int opara__lower_fused_act(opara__fused_act act);

/* Add, Sub, Mul, Div, Pow: opara_binary_f32 (with the record's fused activation) or opara_binary_int. */
static opara_result opara__lower_binary(opara__lower_walk* w, opara__cuda_binop op) {
    const opara__shape* y = opara__lower_out_shape(w, 0);
    opara__fused_act fused = op != OPARA__CUDA_BIN_POW ? w->params[w->node].u.broadcast.activation : OPARA__FUSED_NONE;
    int act = opara__lower_fused_act(fused);
    int64_t count = opara__lower_numel(y);
    const int64_t* st[2];
    opara_dtype t = w->dtypes[opara__lower_out(w, 0)];
    opara__cuda_launch* L;
    opara__lower_walk_shape c;
    int32_t meta;
    opara_result r;
    if (!w->params[w->node].resolved) return opara__lower_fail(w, OPARA_ERR_SHAPE, "inputs do not broadcast to the output");
    st[0] = w->params[w->node].u.broadcast.strides[0], st[1] = w->params[w->node].u.broadcast.strides[1];
    if (t != OPARA_DTYPE_F32 && t != OPARA_DTYPE_I64 && t != OPARA_DTYPE_I32)
        return opara__lower_fail(w, OPARA_ERR_UNSUPPORTED, "only float32, int32 and int64");
    if (w->dtypes[opara__lower_in(w, 0)] != t || w->dtypes[opara__lower_in(w, 1)] != t) /* e.g. Pow(float, int64) */
        return opara__lower_fail(w, OPARA_ERR_UNSUPPORTED, "inputs of different data types");
    if (act < 0 || (act != OPARA__CUDA_ACT_NONE && t != OPARA_DTYPE_F32))
        return opara__lower_fail(w, OPARA_ERR_UNSUPPORTED, "a fused activation needs float32 and Relu, Gelu or GeluTanh");
    if ((r = opara__lower_check_elems(w, count)) != OPARA_OK) return r;
    opara__lower_collapse(y, st, 2, &c);
    if ((r = opara__lower_meta_walk(w, &c, 2, &meta)) != OPARA_OK) return r;
    if (!(L = opara__lower_launch(w, t == OPARA_DTYPE_F32 ? OPARA__CUK_BINARY_F32 : OPARA__CUK_BINARY_INT)))
        return OPARA_ERR_OUT_OF_MEMORY;
    opara__lower_arg_tensor(L, opara__lower_in(w, 0));
    opara__lower_arg_tensor(L, opara__lower_in(w, 1));
    opara__lower_arg_tensor(L, opara__lower_out(w, 0));
    opara__lower_arg_i32(L, count);
    opara__lower_arg_i32(L, op);
    opara__lower_arg_i32(L, t == OPARA_DTYPE_F32 ? act : t == OPARA_DTYPE_I64); /* binary_int: is64 */
    opara__lower_arg(L, OPARA__CUARG_META, meta, 0);
    if (t == OPARA_DTYPE_F32) opara__lower_args_walk(L, &c, 2);
    opara__lower_grid_1d(L, count);
    return OPARA_OK;
}

/* The logic kernels' dtypes: f32, f64, i8, u8, i32, i64 (and bool where the op takes it). */
static int opara__lower_logic_type_ok(opara_dtype t) {
    return t == OPARA_DTYPE_F32 || t == OPARA_DTYPE_F64 || t == OPARA_DTYPE_I8 || t == OPARA_DTYPE_U8 ||
           t == OPARA_DTYPE_I32 || t == OPARA_DTYPE_I64 || t == OPARA_DTYPE_BOOL;
}

/* The comparisons, And/Or/Xor, Mod, BitShift: opara_logic_binary with the record's strides; the dtype
   rules are the shape engine's and the CPU's (a float Mod needs fmod=1, BitShift u8). */
static opara_result opara__lower_logic_binary(opara__lower_walk* w, opara__cuda_logic_op op) {
    const opara__shape* y = opara__lower_out_shape(w, 0);
    const opara__node_params* rec = &w->params[w->node];
    int64_t count = opara__lower_numel(y);
    const int64_t* st[2];
    opara_dtype t = w->dtypes[opara__lower_in(w, 0)];
    opara__cuda_launch* L;
    int32_t meta;
    opara_result r;
    if (!rec->resolved) return opara__lower_fail(w, OPARA_ERR_SHAPE, "inputs do not broadcast to the output");
    if (op == OPARA__CUDA_LOGIC_MOD && rec->u.broadcast.fmod) op = OPARA__CUDA_LOGIC_FMOD;
    if (op == OPARA__CUDA_LOGIC_SHIFT_LEFT && !rec->u.broadcast.shift_left) op = OPARA__CUDA_LOGIC_SHIFT_RIGHT;
    if (!opara__lower_logic_type_ok(t) || w->dtypes[opara__lower_in(w, 1)] != t ||
        (op == OPARA__CUDA_LOGIC_MOD && (t == OPARA_DTYPE_F32 || t == OPARA_DTYPE_F64)) ||
        (op >= OPARA__CUDA_LOGIC_MOD && t == OPARA_DTYPE_BOOL) || (op >= OPARA__CUDA_LOGIC_SHIFT_LEFT && t != OPARA_DTYPE_U8))
        return opara__lower_fail(w, OPARA_ERR_UNSUPPORTED, "data type (see the CPU's rules for this operator)");
    st[0] = rec->u.broadcast.strides[0], st[1] = rec->u.broadcast.strides[1];
    if ((r = opara__lower_check_elems(w, count)) != OPARA_OK) return r;
    if ((r = opara__lower_meta_strided(w, y, st, 2, &meta)) != OPARA_OK) return r;
    if (!(L = opara__lower_launch(w, OPARA__CUK_LOGIC_BINARY))) return OPARA_ERR_OUT_OF_MEMORY;
    opara__lower_arg_tensor(L, opara__lower_in(w, 0));
    opara__lower_arg_tensor(L, opara__lower_in(w, 1));
    opara__lower_arg_tensor(L, opara__lower_out(w, 0));
    opara__lower_arg_i32(L, count);
    opara__lower_arg_i32(L, op);
    opara__lower_arg_i32(L, t);
    opara__lower_arg(L, OPARA__CUARG_META, meta, 0);
    opara__lower_grid_1d(L, count);
    return OPARA_OK;
}

/* Not, IsNaN, IsInf: opara_logic_unary. */
static opara_result opara__lower_logic_unary(opara__lower_walk* w, opara__cuda_logic_unary op) {
    int64_t count = opara__lower_numel(opara__lower_out_shape(w, 0));
    opara_dtype t = w->dtypes[opara__lower_in(w, 0)];
    const opara__is_inf_params* inf = &w->params[w->node].u.is_inf;
    opara__cuda_launch* L;
    opara_result r;
    if (op == OPARA__CUDA_NOT ? t != OPARA_DTYPE_BOOL : (t != OPARA_DTYPE_F32 && t != OPARA_DTYPE_F64))
        return opara__lower_fail(w, OPARA_ERR_UNSUPPORTED, "data type (Not: bool; IsNaN, IsInf: f32 or f64)");
    if ((r = opara__lower_check_elems(w, count)) != OPARA_OK) return r;
    if (!(L = opara__lower_launch(w, OPARA__CUK_LOGIC_UNARY))) return OPARA_ERR_OUT_OF_MEMORY;
    opara__lower_arg_tensor(L, opara__lower_in(w, 0));
    opara__lower_arg_tensor(L, opara__lower_out(w, 0));
    opara__lower_arg_i32(L, count);
    opara__lower_arg_i32(L, op);
    opara__lower_arg_i32(L, t);
    opara__lower_arg_i32(L, op == OPARA__CUDA_IS_INF ? (inf->detect_negative ? 1 : 0) | (inf->detect_positive ? 2 : 0) : 0);
    opara__lower_grid_1d(L, count);
    return OPARA_OK;
}

/* Max, Min, Mean, Sum: one opara_variadic_step per input into the output, in input order (the CPU's
   order of the arithmetic); Mean divides in the last step. */
static opara_result opara__lower_variadic(opara__lower_walk* w, opara__cuda_variadic op) {
    const opara__node* n = &w->g->nodes[w->node];
    const opara__shape* y = opara__lower_out_shape(w, 0);
    int64_t count = opara__lower_numel(y), strides[OPARA_MAX_DIMS];
    const int64_t* st[1];
    opara_dtype t = w->dtypes[opara__lower_out(w, 0)];
    uint32_t k;
    opara_result r;
    if (!opara__lower_logic_type_ok(t) || t == OPARA_DTYPE_BOOL ||
        ((op == OPARA__CUDA_VAR_MEAN || op == OPARA__CUDA_VAR_SUM) && t != OPARA_DTYPE_F32 && t != OPARA_DTYPE_F64))
        return opara__lower_fail(w, OPARA_ERR_UNSUPPORTED, "data type (Max, Min: f32, f64, i8, u8, i32, i64; Mean, Sum: f32, f64)");
    if ((r = opara__lower_check_elems(w, count)) != OPARA_OK) return r;
    st[0] = strides;
    for (k = 0; k < n->n_inputs; ++k) {
        opara__cuda_launch* L;
        int32_t meta;
        if (w->dtypes[opara__lower_in(w, k)] != t || !opara__broadcast_to(y, opara__lower_in_shape(w, k), strides))
            return opara__lower_fail(w, OPARA_ERR_UNSUPPORTED, "an input of another data type or shape");
        if ((r = opara__lower_meta_strided(w, y, st, 1, &meta)) != OPARA_OK) return r;
        if (!(L = opara__lower_launch(w, OPARA__CUK_VARIADIC_STEP))) return OPARA_ERR_OUT_OF_MEMORY;
        opara__lower_arg_tensor(L, opara__lower_in(w, k));
        opara__lower_arg_tensor(L, opara__lower_out(w, 0));
        opara__lower_arg_i32(L, count);
        opara__lower_arg_i32(L, op);
        opara__lower_arg_i32(L, t);
        opara__lower_arg_i32(L, k == 0);
        opara__lower_arg_i32(L, op == OPARA__CUDA_VAR_MEAN && k + 1 == n->n_inputs ? (int64_t)n->n_inputs : 0);
        opara__lower_arg(L, OPARA__CUARG_META, meta, 0);
        opara__lower_grid_1d(L, count);
    }
    return OPARA_OK;
}

static opara_result opara__lower_where(opara__lower_walk* w) {
    const opara__shape* y = opara__lower_out_shape(w, 0);
    int64_t count = opara__lower_numel(y);
    const int64_t* st[3];
    opara__cuda_launch* L;
    int32_t meta;
    uint32_t i;
    opara_result r;
    if (!w->params[w->node].resolved) return opara__lower_fail(w, OPARA_ERR_SHAPE, "inputs do not broadcast to the output");
    for (i = 0; i < 3; ++i) st[i] = w->params[w->node].u.broadcast.strides[i];
    if (w->dtypes[opara__lower_in(w, 0)] != OPARA_DTYPE_BOOL) return opara__lower_fail(w, OPARA_ERR_UNSUPPORTED, "condition must be bool");
    if ((r = opara__lower_check_elems(w, count)) != OPARA_OK) return r;
    if ((r = opara__lower_meta_strided(w, y, st, 3, &meta)) != OPARA_OK) return r;
    if (!(L = opara__lower_launch(w, OPARA__CUK_WHERE))) return OPARA_ERR_OUT_OF_MEMORY;
    for (i = 0; i < 3; ++i) opara__lower_arg_tensor(L, opara__lower_in(w, i));
    opara__lower_arg_tensor(L, opara__lower_out(w, 0));
    opara__lower_arg_i32(L, count);
    opara__lower_arg_i32(L, (int64_t)opara__lower_dsize(w->dtypes[opara__lower_out(w, 0)]));
    opara__lower_arg(L, OPARA__CUARG_META, meta, 0);
    opara__lower_grid_1d(L, count);
    return OPARA_OK;
}

static int opara__lower_cast_type_ok(opara_dtype t) {
    return t == OPARA_DTYPE_F32 || t == OPARA_DTYPE_U8 || t == OPARA_DTYPE_I8 || t == OPARA_DTYPE_I32 ||
           t == OPARA_DTYPE_I64 || t == OPARA_DTYPE_BOOL || t == OPARA_DTYPE_F64 || t == OPARA_DTYPE_F16;
}

static opara_result opara__lower_cast(opara__lower_walk* w) {
    opara_dtype from = w->dtypes[opara__lower_in(w, 0)], to = w->dtypes[opara__lower_out(w, 0)];
    int64_t count = opara__lower_numel(opara__lower_out_shape(w, 0));
    /* from a float type (the truncation rule of ONNX Runtime), or to f16: cast.cu; the rest: opara_cast */
    int by_float = from == OPARA_DTYPE_F32 || from == OPARA_DTYPE_F64 || from == OPARA_DTYPE_F16 || to == OPARA_DTYPE_F16;
    opara__cuda_launch* L;
    if (!opara__lower_cast_type_ok(from) || !opara__lower_cast_type_ok(to)) {
        char why[160];
        opara__format(why, sizeof why, "Cast from %s to %s is not supported (it casts between f32, f16, f64, i8, u8, "
                      "i32, i64 and bool)", opara_dtype_name(from), opara_dtype_name(to));
        return opara__lower_fail(w, OPARA_ERR_UNSUPPORTED, why);
    }
    if (opara__lower_check_elems(w, count) != OPARA_OK) return OPARA_ERR_LIMIT_EXCEEDED;
    if (!(L = opara__lower_launch(w, by_float ? OPARA__CUK_CAST_FLOAT : OPARA__CUK_CAST))) return OPARA_ERR_OUT_OF_MEMORY;
    opara__lower_arg_tensor(L, opara__lower_in(w, 0));
    opara__lower_arg_tensor(L, opara__lower_out(w, 0));
    opara__lower_arg_i32(L, count);
    opara__lower_arg_i32(L, (int64_t)from);
    opara__lower_arg_i32(L, (int64_t)to);
    opara__lower_grid_1d(L, count);
    return OPARA_OK;
}

/* Copies runs of 1-, 2- or 4-byte elements as units of up to 8 bytes: where the innermost dim is
   contiguous on both sides and the run, the outer strides and both offsets are multiples of the factor.
   Returns the unit size; the walk, count and offsets are rescaled to units. */
static int64_t opara__lower_copy_widen(opara__lower_walk_shape* c, int64_t es, int64_t* count, int64_t* src_off, int64_t* dst_off) {
    int64_t k;
    int32_t last = c->ndim - 1, d;
    if (c->st[0][last] != 1 || c->st[1][last] != 1) return es;
    for (k = 8 / es; k > 1; k /= 2) {
        int ok = c->dims[last] % k == 0 && *src_off % k == 0 && *dst_off % k == 0;
        for (d = 0; d < last && ok; ++d) ok = c->st[0][d] % k == 0 && c->st[1][d] % k == 0;
        if (ok) break;
    }
    if (k <= 1) return es;
    c->dims[last] /= k;
    for (d = 0; d < last; ++d) c->st[0][d] /= k, c->st[1][d] /= k;
    *count /= k, *src_off /= k, *dst_off /= k;
    return es * k;
}

/* A strided copy of `dims` elements from value src (element offset src_off, strides ss) into
   value dst (offset dst_off, strides ds), on the collapsed walk, in units as wide as it allows. */
static opara_result opara__lower_push_copy(opara__lower_walk* w, int32_t src, int32_t dst, const opara__shape* dims, const int64_t* ss,
                                     const int64_t* ds, int64_t src_off, int64_t dst_off) {
    const int64_t* st[2];
    int64_t count = opara__lower_numel(dims), unit;
    opara__cuda_launch* L;
    opara__lower_walk_shape c;
    int32_t meta;
    opara_result r;
    if (count == 0) return OPARA_OK;
    st[0] = ss, st[1] = ds;
    if ((r = opara__lower_check_value(w, src, "opara_strided_copy")) != OPARA_OK ||
        (r = opara__lower_check_value(w, dst, "opara_strided_copy")) != OPARA_OK)
        return r;
    opara__lower_collapse(dims, st, 2, &c);
    unit = opara__lower_copy_widen(&c, (int64_t)opara__lower_dsize(w->dtypes[dst]), &count, &src_off, &dst_off);
    if ((r = opara__lower_meta_walk(w, &c, 2, &meta)) != OPARA_OK) return r;
    if (!(L = opara__lower_launch(w, OPARA__CUK_STRIDED_COPY))) return OPARA_ERR_OUT_OF_MEMORY;
    opara__lower_arg_tensor(L, src);
    opara__lower_arg_tensor(L, dst);
    opara__lower_arg_i32(L, count);
    opara__lower_arg_i32(L, unit);
    opara__lower_arg_i64(L, src_off);
    opara__lower_arg_i64(L, dst_off);
    opara__lower_arg(L, OPARA__CUARG_META, meta, 0);
    opara__lower_args_walk(L, &c, 2);
    opara__lower_grid_1d(L, count);
    return OPARA_OK;
}

/* Views (Reshape, Flatten, Squeeze, Unsqueeze): no launch when the plan aliases the output to
   the input; the backend adds a byte copy at bind time when it does not. The launch is recorded
   as a COPY so the backend can decide. */
static opara_result opara__lower_view(opara__lower_walk* w) {
    opara__cuda_launch* L = opara__lower_launch(w, OPARA__CUK_COUNT);
    if (!L) return OPARA_ERR_OUT_OF_MEMORY;
    L->type = OPARA__CULAUNCH_COPY;
    opara__lower_arg_tensor(L, opara__lower_out(w, 0));
    opara__lower_arg_tensor(L, opara__lower_in(w, 0));
    return OPARA_OK;
}

static opara_result opara__lower_transpose(opara__lower_walk* w) {
    const opara__shape *x = opara__lower_in_shape(w, 0), *y = opara__lower_out_shape(w, 0);
    const opara__node_params* rec = &w->params[w->node];
    int64_t xs[OPARA_MAX_DIMS], ss[OPARA_MAX_DIMS], ds[OPARA_MAX_DIMS];
    int32_t d;
    if (!rec->resolved) return opara__lower_fail(w, OPARA_ERR_SHAPE, "bad perm");
    opara__lower_contig_strides(x, xs);
    opara__lower_contig_strides(y, ds);
    for (d = 0; d < y->ndim; ++d) {
        int64_t p = rec->u.transpose.perm[d];
        if (p < 0 || p >= x->ndim) return opara__lower_fail(w, OPARA_ERR_SHAPE, "bad perm");
        ss[d] = xs[p];
    }
    return opara__lower_push_copy(w, opara__lower_in(w, 0), opara__lower_out(w, 0), y, ss, ds, 0, 0);
}

static opara_result opara__lower_expand(opara__lower_walk* w) {
    const opara__shape* y = opara__lower_out_shape(w, 0);
    int64_t ds[OPARA_MAX_DIMS];
    if (!w->params[w->node].resolved) return opara__lower_fail(w, OPARA_ERR_SHAPE, "does not broadcast");
    opara__lower_contig_strides(y, ds);
    return opara__lower_push_copy(w, opara__lower_in(w, 0), opara__lower_out(w, 0), y, w->params[w->node].u.broadcast.strides[0], ds, 0, 0);
}

/* Slice as the shape engine resolved it (first index and step per dim): a strided copy. */
static opara_result opara__lower_slice(opara__lower_walk* w) {
    const opara__shape *x = opara__lower_in_shape(w, 0), *y = opara__lower_out_shape(w, 0);
    const opara__node_params* p = &w->params[w->node];
    int64_t xs[OPARA_MAX_DIMS], ss[OPARA_MAX_DIMS], ds[OPARA_MAX_DIMS], off = 0;
    int32_t d;
    if (!p->resolved || x->ndim != y->ndim) return opara__lower_fail(w, OPARA_ERR_SHAPE, "bad axes or steps");
    opara__lower_contig_strides(x, xs);
    opara__lower_contig_strides(y, ds);
    for (d = 0; d < x->ndim; ++d) {
        if (y->dims[d] > 0) off += p->u.slice.start[d] * xs[d];
        ss[d] = xs[d] * p->u.slice.step[d];
    }
    return opara__lower_push_copy(w, opara__lower_in(w, 0), opara__lower_out(w, 0), y, ss, ds, off, 0);
}

/* Concat and Split: one strided copy per part (the parts' slices along axis of the whole). A
   Concat input that the plan placed in its slice is skipped at bind time (see the backend). */
static opara_result opara__lower_concat_split(opara__lower_walk* w, int is_concat) {
    const opara__node* n = &w->g->nodes[w->node];
    const opara__shape* whole = is_concat ? opara__lower_out_shape(w, 0) : opara__lower_in_shape(w, 0);
    int64_t axis = opara__lower_axis(w), ws[OPARA_MAX_DIMS], off = 0;
    uint32_t parts = is_concat ? n->n_inputs : n->n_outputs, k;
    if (axis < 0 || axis >= whole->ndim) return opara__lower_fail(w, OPARA_ERR_SHAPE, "axis out of range");
    opara__lower_contig_strides(whole, ws);
    for (k = 0; k < parts; ++k) {
        int32_t part = is_concat ? n->inputs[k] : n->outputs[k];
        const opara__shape* ps = &w->shapes[part];
        int64_t pst[OPARA_MAX_DIMS];
        opara_result r;
        opara__lower_contig_strides(ps, pst);
        r = is_concat ? opara__lower_push_copy(w, part, n->outputs[0], ps, pst, ws, 0, off)
                      : opara__lower_push_copy(w, n->inputs[0], part, ps, ws, pst, off, 0);
        if (r != OPARA_OK) return r;
        off += ps->dims[axis] * ws[axis];
    }
    return OPARA_OK;
}

static opara_result opara__lower_gather(opara__lower_walk* w) {
    const opara__shape *x = opara__lower_in_shape(w, 0), *idx = opara__lower_in_shape(w, 1);
    opara_dtype it = w->dtypes[opara__lower_in(w, 1)];
    int64_t axis = opara__lower_axis(w), inner = 1, count;
    opara__cuda_launch* L;
    int32_t d;
    if (axis < 0 || axis >= x->ndim) return opara__lower_fail(w, OPARA_ERR_SHAPE, "axis out of range");
    if (it != OPARA_DTYPE_I64 && it != OPARA_DTYPE_I32) return opara__lower_fail(w, OPARA_ERR_UNSUPPORTED, "indices must be int32/int64");
    for (d = (int32_t)axis + 1; d < x->ndim; ++d) inner *= x->dims[d];
    count = opara__lower_numel(opara__lower_out_shape(w, 0));
    if (opara__lower_check_elems(w, count) != OPARA_OK) return OPARA_ERR_LIMIT_EXCEEDED;
    if (!(L = opara__lower_launch(w, OPARA__CUK_GATHER))) return OPARA_ERR_OUT_OF_MEMORY;
    opara__lower_arg_tensor(L, opara__lower_in(w, 0));
    opara__lower_arg_tensor(L, opara__lower_in(w, 1));
    opara__lower_arg_tensor(L, opara__lower_out(w, 0));
    opara__lower_arg_i32(L, count);
    opara__lower_arg_i32(L, (int64_t)opara__lower_dsize(w->dtypes[opara__lower_out(w, 0)]));
    opara__lower_arg_i32(L, it == OPARA_DTYPE_I64);
    opara__lower_arg_i32(L, x->dims[axis]);
    opara__lower_arg_i32(L, inner);
    opara__lower_arg_i32(L, opara__lower_numel(idx));
    opara__lower_grid_1d(L, count);
    return OPARA_OK;
}

/* ---- GatherElements .. ReverseSequence (src/cuda/kernels/gather.cu) ----------------------------- */

static int opara__lower_is_index(opara_dtype t) { return t == OPARA_DTYPE_I64 || t == OPARA_DTYPE_I32; }

/* A launch of one of gather.cu's kernels over count threads (the count checked first). */
static opara__cuda_launch* opara__lower_index_launch(opara__lower_walk* w, opara__cuda_kernel k, int64_t count,
                                                     opara_result* r) {
    opara__cuda_launch* L = NULL;
    *r = opara__lower_check_elems(w, count);
    if (*r == OPARA_OK && !(L = opara__lower_launch(w, k))) *r = OPARA_ERR_OUT_OF_MEMORY;
    if (L) opara__lower_grid_1d(L, count);
    return L;
}

/* The scatters start from a copy of the data in the output. */
static opara_result opara__lower_copy_data(opara__lower_walk* w) {
    const opara__shape* x = opara__lower_in_shape(w, 0);
    int64_t st[OPARA_MAX_DIMS];
    opara__lower_contig_strides(x, st);
    return opara__lower_push_copy(w, opara__lower_in(w, 0), opara__lower_out(w, 0), x, st, st, 0, 0);
}

/* The reduction of a scatter as the kernel's code (the record's order: 0 none .. 4 min); a reduction
   over a type the kernel does not combine is refused. */
static opara_result opara__lower_reduction(opara__lower_walk* w, int* code) {
    opara_dtype t = w->dtypes[opara__lower_out(w, 0)];
    const opara__node* n = &w->g->nodes[w->node];
    *code = n->op == OPARA__OP_SCATTER ? 0 : (int)w->params[w->node].u.index.reduction;
    if (*code && t != OPARA_DTYPE_F32 && t != OPARA_DTYPE_F64 && t != OPARA_DTYPE_I32 && t != OPARA_DTYPE_I64 &&
        t != OPARA_DTYPE_I8 && t != OPARA_DTYPE_U8)
        return opara__lower_fail(w, OPARA_ERR_UNSUPPORTED, "a reduction needs f32, f64, i8, u8, i32 or i64 data");
    return OPARA_OK;
}

/* GatherElements, ScatterElements and Scatter: meta = [ndim, index dims, strides of the data]. */
static opara_result opara__lower_elements(opara__lower_walk* w) {
    const opara__shape *x = opara__lower_in_shape(w, 0), *idx = opara__lower_in_shape(w, 1);
    int gather = w->g->nodes[w->node].op == OPARA__OP_GATHER_ELEMENTS;
    opara_dtype it = w->dtypes[opara__lower_in(w, 1)], t = w->dtypes[opara__lower_out(w, 0)];
    int64_t axis = opara__lower_axis(w), meta[1 + 2 * OPARA_MAX_DIMS], count = opara__lower_numel(idx);
    int32_t d, at;
    int red = 0;
    opara__cuda_launch* L;
    opara_result r;
    if (axis < 0 || axis >= x->ndim || idx->ndim != x->ndim || !opara__lower_is_index(it))
        return opara__lower_fail(w, OPARA_ERR_SHAPE, "axis or indices do not fit the data");
    meta[0] = x->ndim;
    opara__lower_contig_strides(x, meta + 1 + x->ndim);
    for (d = 0; d < x->ndim; ++d) meta[1 + d] = idx->dims[d];
    if (!gather && ((r = opara__lower_reduction(w, &red)) != OPARA_OK || (r = opara__lower_copy_data(w)) != OPARA_OK)) return r;
    if (count == 0) return OPARA_OK;
    if ((r = opara__lower_meta_push(w, meta, 1 + 2 * (uint32_t)x->ndim, &at)) != OPARA_OK) return r;
    if (!gather) count /= idx->dims[axis]; /* one thread per line along the axis */
    L = opara__lower_index_launch(w, gather ? OPARA__CUK_GATHER_ELEMENTS : OPARA__CUK_SCATTER_ELEMENTS, count, &r);
    if (!L) return r;
    if (gather) opara__lower_arg_tensor(L, opara__lower_in(w, 0));
    opara__lower_arg_tensor(L, opara__lower_in(w, 1));
    if (!gather) opara__lower_arg_tensor(L, opara__lower_in(w, 2));
    opara__lower_arg_tensor(L, opara__lower_out(w, 0));
    opara__lower_arg_i32(L, count);
    opara__lower_arg_i32(L, (int64_t)opara__lower_dsize(t));
    if (!gather) opara__lower_arg_i32(L, (int64_t)t), opara__lower_arg_i32(L, red);
    opara__lower_arg_i32(L, it == OPARA_DTYPE_I64);
    opara__lower_arg_i32(L, axis);
    opara__lower_arg_i32(L, x->dims[axis]);
    opara__lower_arg(L, OPARA__CUARG_META, at, 0);
    return OPARA_OK;
}

/* GatherND and ScatterND: meta = [dims, strides] of the k data dims a tuple indexes. */
static opara_result opara__lower_nd(opara__lower_walk* w) {
    const opara__shape *x = opara__lower_in_shape(w, 0), *idx = opara__lower_in_shape(w, 1);
    int gather = w->g->nodes[w->node].op == OPARA__OP_GATHER_ND;
    opara_dtype it = w->dtypes[opara__lower_in(w, 1)], t = w->dtypes[opara__lower_out(w, 0)];
    int64_t b = gather ? w->params[w->node].u.index.batch_dims : 0, k, tuples, m, inner = 1, base = 1;
    int64_t xs[OPARA_MAX_DIMS], meta[2 * OPARA_MAX_DIMS];
    int32_t d, at;
    int red = 0;
    opara__cuda_launch* L;
    opara_result r;
    if (!w->params[w->node].resolved || idx->ndim < 1 || !opara__lower_is_index(it))
        return opara__lower_fail(w, OPARA_ERR_SHAPE, "indices do not fit the data");
    k = idx->dims[idx->ndim - 1];
    if (k < 1 || b + k > x->ndim) return opara__lower_fail(w, OPARA_ERR_SHAPE, "indices do not fit the data");
    tuples = opara__lower_numel(idx) / k;
    for (m = 1, d = 0; d < (int32_t)b; ++d) m *= idx->dims[d];
    m = m ? tuples / m : 1;
    for (d = (int32_t)b; d < x->ndim; ++d) base *= x->dims[d];
    for (d = (int32_t)(b + k); d < x->ndim; ++d) inner *= x->dims[d];
    opara__lower_contig_strides(x, xs);
    for (d = 0; d < (int32_t)k; ++d) meta[d] = x->dims[b + d], meta[k + d] = xs[b + d];
    if (!gather && ((r = opara__lower_reduction(w, &red)) != OPARA_OK || (r = opara__lower_copy_data(w)) != OPARA_OK)) return r;
    if (tuples == 0 || inner == 0) return OPARA_OK;
    if ((r = opara__lower_meta_push(w, meta, 2 * (uint32_t)k, &at)) != OPARA_OK) return r;
    if ((r = opara__lower_check_elems(w, base)) != OPARA_OK) return r;
    L = opara__lower_index_launch(w, gather ? OPARA__CUK_GATHER_ND : OPARA__CUK_SCATTER_ND, gather ? tuples * inner : inner, &r);
    if (!L) return r;
    if (gather) opara__lower_arg_tensor(L, opara__lower_in(w, 0));
    opara__lower_arg_tensor(L, opara__lower_in(w, 1));
    if (!gather) opara__lower_arg_tensor(L, opara__lower_in(w, 2));
    opara__lower_arg_tensor(L, opara__lower_out(w, 0));
    opara__lower_arg_i32(L, gather ? tuples * inner : inner);
    opara__lower_arg_i32(L, (int64_t)opara__lower_dsize(t));
    if (!gather) opara__lower_arg_i32(L, (int64_t)t), opara__lower_arg_i32(L, red);
    opara__lower_arg_i32(L, it == OPARA_DTYPE_I64);
    opara__lower_arg_i32(L, k);
    if (gather) opara__lower_arg_i32(L, m), opara__lower_arg_i32(L, inner), opara__lower_arg_i64(L, base);
    else opara__lower_arg_i32(L, tuples);
    opara__lower_arg(L, OPARA__CUARG_META, at, 0);
    return OPARA_OK;
}

/* Tile: meta = [ndim, output dims, input dims] (a scalar as [1]). */
static opara_result opara__lower_tile(opara__lower_walk* w) {
    const opara__shape *x = opara__lower_in_shape(w, 0), *y = opara__lower_out_shape(w, 0);
    int64_t meta[1 + 2 * OPARA_MAX_DIMS], count = opara__lower_numel(y);
    int32_t d, nd = y->ndim ? y->ndim : 1, at;
    opara__cuda_launch* L;
    opara_result r;
    if (x->ndim != y->ndim) return opara__lower_fail(w, OPARA_ERR_SHAPE, "input and output ranks differ");
    if (count == 0) return OPARA_OK;
    meta[0] = nd;
    for (d = 0; d < nd; ++d) meta[1 + d] = y->ndim ? y->dims[d] : 1, meta[1 + nd + d] = x->ndim ? x->dims[d] : 1;
    if ((r = opara__lower_meta_push(w, meta, 1 + 2 * (uint32_t)nd, &at)) != OPARA_OK) return r;
    if (!(L = opara__lower_index_launch(w, OPARA__CUK_TILE, count, &r))) return r;
    opara__lower_arg_tensor(L, opara__lower_in(w, 0));
    opara__lower_arg_tensor(L, opara__lower_out(w, 0));
    opara__lower_arg_i32(L, count);
    opara__lower_arg_i32(L, (int64_t)opara__lower_dsize(w->dtypes[opara__lower_out(w, 0)]));
    opara__lower_arg(L, OPARA__CUARG_META, at, 0);
    return OPARA_OK;
}

/* Trilu and EyeLike over their last two dims. */
static opara_result opara__lower_trilu_eye(opara__lower_walk* w) {
    const opara__shape* y = opara__lower_out_shape(w, 0);
    int eye = w->g->nodes[w->node].op == OPARA__OP_EYE_LIKE;
    opara_dtype t = w->dtypes[opara__lower_out(w, 0)];
    const opara__index_params* ip = &w->params[w->node].u.index;
    int64_t count = opara__lower_numel(y);
    opara__cuda_launch* L;
    opara_result r;
    if (!w->params[w->node].resolved || y->ndim < 2) return opara__lower_fail(w, OPARA_ERR_SHAPE, "needs a matrix");
    if (count == 0) return OPARA_OK;
    if (!(L = opara__lower_index_launch(w, eye ? OPARA__CUK_EYE_LIKE : OPARA__CUK_TRILU, count, &r))) return r;
    if (!eye) opara__lower_arg_tensor(L, opara__lower_in(w, 0));
    opara__lower_arg_tensor(L, opara__lower_out(w, 0));
    opara__lower_arg_i32(L, count);
    opara__lower_arg_i32(L, (int64_t)opara__lower_dsize(t));
    if (!eye) opara__lower_arg_i32(L, y->dims[y->ndim - 2]);
    opara__lower_arg_i32(L, y->dims[y->ndim - 1]);
    opara__lower_arg_i64(L, ip->k);
    if (eye) opara__lower_arg_i64(L, (int64_t)opara__dtype_one_bits(t));
    else opara__lower_arg_i32(L, ip->upper);
    return OPARA_OK;
}

static opara_result opara__lower_size(opara__lower_walk* w) {
    opara__cuda_launch* L;
    opara_result r;
    if (!(L = opara__lower_index_launch(w, OPARA__CUK_SIZE, 1, &r))) return r;
    opara__lower_arg_tensor(L, opara__lower_out(w, 0));
    opara__lower_arg_i64(L, opara__lower_numel(opara__lower_in_shape(w, 0)));
    return OPARA_OK;
}

static opara_result opara__lower_depth_space(opara__lower_walk* w) {
    const opara__shape* x = opara__lower_in_shape(w, 0);
    opara__shape dims;
    int64_t ss[OPARA_MAX_DIMS], ds[OPARA_MAX_DIMS];
    if (!w->params[w->node].resolved || x->ndim != 4) return opara__lower_fail(w, OPARA_ERR_SHAPE, "needs a 4-D input");
    dims.ndim = 6;
    opara__depth_space_view(x->dims, w->params[w->node].u.index.blocksize,
                            w->g->nodes[w->node].op == OPARA__OP_DEPTH_TO_SPACE, w->params[w->node].u.index.crd, dims.dims, ss);
    opara__lower_contig_strides(&dims, ds);
    return opara__lower_push_copy(w, opara__lower_in(w, 0), opara__lower_out(w, 0), &dims, ss, ds, 0, 0);
}

static opara_result opara__lower_one_hot(opara__lower_walk* w) {
    const opara__shape *idx = opara__lower_in_shape(w, 0), *y = opara__lower_out_shape(w, 0);
    opara_dtype it = w->dtypes[opara__lower_in(w, 0)], t = w->dtypes[opara__lower_out(w, 0)];
    int64_t axis = opara__lower_axis(w), inner = 1, count = opara__lower_numel(y);
    int32_t d;
    opara__cuda_launch* L;
    opara_result r;
    if (axis < 0 || axis > idx->ndim) return opara__lower_fail(w, OPARA_ERR_SHAPE, "axis out of range");
    if (it == OPARA_DTYPE_BOOL || it == OPARA_DTYPE_F16) return opara__lower_fail(w, OPARA_ERR_UNSUPPORTED, "indices of this type");
    for (d = (int32_t)axis; d < idx->ndim; ++d) inner *= idx->dims[d];
    if (count == 0) return OPARA_OK;
    if (!(L = opara__lower_index_launch(w, OPARA__CUK_ONE_HOT, count, &r))) return r;
    opara__lower_arg_tensor(L, opara__lower_in(w, 0));
    opara__lower_arg_tensor(L, opara__lower_in(w, 1));
    opara__lower_arg_tensor(L, opara__lower_out(w, 0));
    opara__lower_arg_i32(L, count);
    opara__lower_arg_i32(L, (int64_t)opara__lower_dsize(t));
    opara__lower_arg_i32(L, (int64_t)it);
    opara__lower_arg_i32(L, y->dims[axis]);
    opara__lower_arg_i32(L, inner);
    return OPARA_OK;
}

static opara_result opara__lower_reverse_sequence(opara__lower_walk* w) {
    const opara__shape* x = opara__lower_in_shape(w, 0);
    const opara__index_params* ip = &w->params[w->node].u.index;
    opara_dtype lt = w->dtypes[opara__lower_in(w, 1)];
    int64_t inner = 1, count = opara__lower_numel(x);
    int32_t d;
    opara__cuda_launch* L;
    opara_result r;
    if (!w->params[w->node].resolved || x->ndim < 2 || !opara__lower_is_index(lt))
        return opara__lower_fail(w, OPARA_ERR_SHAPE, "input or sequence_lens do not fit");
    for (d = 2; d < x->ndim; ++d) inner *= x->dims[d];
    if (count == 0) return OPARA_OK;
    if (!(L = opara__lower_index_launch(w, OPARA__CUK_REVERSE_SEQUENCE, count, &r))) return r;
    opara__lower_arg_tensor(L, opara__lower_in(w, 0));
    opara__lower_arg_tensor(L, opara__lower_in(w, 1));
    opara__lower_arg_tensor(L, opara__lower_out(w, 0));
    opara__lower_arg_i32(L, count);
    opara__lower_arg_i32(L, (int64_t)opara__lower_dsize(w->dtypes[opara__lower_out(w, 0)]));
    opara__lower_arg_i32(L, lt == OPARA_DTYPE_I64);
    opara__lower_arg_i32(L, x->dims[1]);
    opara__lower_arg_i32(L, inner);
    opara__lower_arg_i32(L, ip->time_axis == 0);
    opara__lower_arg_i32(L, x->dims[ip->time_axis]);
    return OPARA_OK;
}

/* The pad kernel's mode (src/cuda/kernels: 0 constant, 1 reflect, 2 edge), -1 where it has none. */
static int opara__lower_pad_mode(opara__pad_mode mode) {
    switch (mode) {
    case OPARA__PAD_CONSTANT: return 0;
    case OPARA__PAD_REFLECT: return 1;
    case OPARA__PAD_EDGE: return 2;
    case OPARA__PAD_WRAP: return -1;
    }
    return -1;
}

static opara_result opara__lower_pad(opara__lower_walk* w) {
    const opara__shape *x = opara__lower_in_shape(w, 0), *y = opara__lower_out_shape(w, 0);
    const opara__node_params* rec = &w->params[w->node];
    const opara__pad_params* pp = &rec->u.pad;
    float value = pp->value;
    int64_t meta[1 + 3 * OPARA_MAX_DIMS], count = opara__lower_numel(y), fill = 0;
    opara_dtype t = w->dtypes[opara__lower_out(w, 0)];
    opara__cuda_launch* L;
    int32_t d, at, m = opara__lower_pad_mode(pp->mode);
    opara_result r;
    if (x->ndim < 1 || !rec->resolved) return opara__lower_fail(w, OPARA_ERR_SHAPE, "pads do not match the rank");
    if (m < 0) return opara__lower_fail(w, OPARA_ERR_UNSUPPORTED, "pad mode (constant, reflect and edge are supported)");
    meta[0] = x->ndim;
    for (d = 0; d < x->ndim; ++d) {
        meta[1 + d] = y->dims[d];
        meta[1 + x->ndim + d] = x->dims[d];
        meta[1 + 2 * x->ndim + d] = pp->begin[d];
    }
    if (t == OPARA_DTYPE_F32) {
        uint32_t bits;
        memcpy(&bits, &value, sizeof bits);
        fill = (int64_t)bits;
    } else if (t == OPARA_DTYPE_I64 || t == OPARA_DTYPE_I32) {
        fill = (int64_t)value;
        if (t == OPARA_DTYPE_I32) fill &= 0xffffffff;
    } else if (value != 0.0f) {
        return opara__lower_fail(w, OPARA_ERR_UNSUPPORTED, "pad value for this data type");
    }
    if ((r = opara__lower_check_elems(w, count)) != OPARA_OK) return r;
    if ((r = opara__lower_meta_push(w, meta, 1 + 3 * (uint32_t)x->ndim, &at)) != OPARA_OK) return r;
    if (!(L = opara__lower_launch(w, OPARA__CUK_PAD))) return OPARA_ERR_OUT_OF_MEMORY;
    opara__lower_arg_tensor(L, opara__lower_in(w, 0));
    opara__lower_arg_tensor(L, opara__lower_out(w, 0));
    opara__lower_arg_i32(L, count);
    opara__lower_arg_i32(L, (int64_t)opara__lower_dsize(t));
    opara__lower_arg_i32(L, m);
    opara__lower_arg_i64(L, fill);
    opara__lower_arg(L, OPARA__CUARG_META, at, 0);
    opara__lower_grid_1d(L, count);
    return OPARA_OK;
}

/* The resize kernel's codes (src/cuda/kernels: mode 0 nearest, 1 linear; coordinates 0 half_pixel,
   1 asymmetric, 2 align_corners, 3 pytorch_half_pixel; nearest modes in ONNX's order), -1 where it
   has none. */
static int opara__lower_resize_mode(opara__resize_mode mode) {
    switch (mode) {
    case OPARA__RESIZE_NEAREST: return 0;
    case OPARA__RESIZE_LINEAR: return 1;
    case OPARA__RESIZE_CUBIC: return -1;
    }
    return -1;
}

static int opara__lower_resize_coord(opara__resize_coord_mode coord) {
    switch (coord) {
    case OPARA__RESIZE_HALF_PIXEL: return 0;
    case OPARA__RESIZE_ASYMMETRIC: return 1;
    case OPARA__RESIZE_ALIGN_CORNERS: return 2;
    case OPARA__RESIZE_PYTORCH_HALF_PIXEL: return 3;
    case OPARA__RESIZE_TF_HALF_PIXEL_FOR_NN: case OPARA__RESIZE_TF_CROP_AND_RESIZE: case OPARA__RESIZE_HALF_PIXEL_SYMMETRIC:
    case OPARA__RESIZE_COORD_UNKNOWN: return -1;
    }
    return -1;
}

static int opara__lower_resize_nearest(opara__resize_nearest_mode nearest) {
    switch (nearest) {
    case OPARA__NEAREST_ROUND_PREFER_FLOOR: return 0;
    case OPARA__NEAREST_ROUND_PREFER_CEIL: return 1;
    case OPARA__NEAREST_FLOOR: return 2;
    case OPARA__NEAREST_CEIL: return 3;
    case OPARA__NEAREST_UNKNOWN: return -1;
    }
    return -1;
}

/* The cubic taps of one resized axis (4 per output index) into weights and indices (-1: extrapolated). */
static void opara__lower_cubic_axis(const opara__resize_params* rp, int32_t d, int64_t in, int64_t out, float* wt,
                                    int64_t* idx) {
    int64_t o, t[4];
    int k;
    for (o = 0; o < out; ++o) {
        int ok = opara__resize_cubic_taps(rp, d, o, in, out, t, wt + 4 * o);
        for (k = 0; k < 4; ++k) idx[4 * o + k] = ok ? t[k] : -1;
    }
}

/* Cubic Resize of the last two axes: the taps computed here (opara__resize_cubic_taps, the CPU's),
   applied by pool.cu's opara_resize_taps4_f32. */
static opara_result opara__lower_resize_cubic(opara__lower_walk* w, const opara__shape* x, const opara__shape* y) {
    const opara__resize_params* rp = &w->params[w->node].u.resize;
    int64_t OH = y->dims[2], OW = y->dims[3], count = opara__lower_numel(y);
    size_t n = (size_t)(4 * (OH + OW));
    float* wt;
    int64_t* idx;
    int32_t at_w = 0, at_i = 0;
    opara__cuda_launch* L;
    opara_result r;
    if (opara__lower_check_elems(w, count) != OPARA_OK) return OPARA_ERR_LIMIT_EXCEEDED;
    if (count == 0) return OPARA_OK;
    wt = (float*)opara__calloc(w->rt, n, sizeof *wt);
    idx = (int64_t*)opara__calloc(w->rt, n, sizeof *idx);
    if (!wt || !idx) r = opara__fail_to(&w->rt->error, w->low->logger, OPARA_ERR_OUT_OF_MEMORY, "CUDA backend: out of memory");
    else {
        opara__lower_cubic_axis(rp, 2, x->dims[2], OH, wt, idx);
        opara__lower_cubic_axis(rp, 3, x->dims[3], OW, wt + 4 * OH, idx + 4 * OH);
        r = opara__lower_aux_push(w, wt, n, &at_w);
        if (r == OPARA_OK) r = opara__lower_meta_push(w, idx, (uint32_t)n, &at_i);
    }
    opara__free(w->rt, wt);
    opara__free(w->rt, idx);
    if (r != OPARA_OK) return r;
    if (!(L = opara__lower_launch(w, OPARA__CUK_RESIZE_TAPS4))) return OPARA_ERR_OUT_OF_MEMORY;
    opara__lower_arg_tensor(L, opara__lower_in(w, 0));
    opara__lower_arg_tensor(L, opara__lower_out(w, 0));
    opara__lower_arg(L, OPARA__CUARG_AUX, at_w, 0);
    opara__lower_arg(L, OPARA__CUARG_AUX, at_w + (int32_t)(4 * OH), 0);
    opara__lower_arg(L, OPARA__CUARG_META, at_i, 0);
    opara__lower_arg(L, OPARA__CUARG_META, at_i + (int32_t)(4 * OH), 0);
    opara__lower_arg_i32(L, x->dims[0] * x->dims[1]);
    opara__lower_arg_i32(L, x->dims[2]), opara__lower_arg_i32(L, x->dims[3]);
    opara__lower_arg_i32(L, OH), opara__lower_arg_i32(L, OW);
    opara__lower_arg_f32(L, rp->extrapolation_value);
    opara__lower_grid_1d(L, count);
    return OPARA_OK;
}

static opara_result opara__lower_resize(opara__lower_walk* w) {
    const opara__shape *x = opara__lower_in_shape(w, 0), *y = opara__lower_out_shape(w, 0);
    const opara__node_params* rec = &w->params[w->node];
    const opara__resize_params* rp = &rec->u.resize;
    int mode = opara__lower_resize_mode(rp->mode), coord = opara__lower_resize_coord(rp->coord);
    int nm = opara__lower_resize_nearest(rp->nearest);
    float sh, sw;
    int64_t count = opara__lower_numel(y);
    opara__cuda_launch* L;
    if (!rec->resolved) return opara__lower_fail(w, OPARA_ERR_SHAPE, "scales/sizes/axes/roi do not match the input");
    if (rp->mode == OPARA__RESIZE_CUBIC && !rp->antialias && rp->coord != OPARA__RESIZE_COORD_UNKNOWN && x->ndim == 4 &&
        y->dims[0] == x->dims[0] && y->dims[1] == x->dims[1] && w->dtypes[opara__lower_in(w, 0)] == OPARA_DTYPE_F32)
        return opara__lower_resize_cubic(w, x, y);
    if (mode < 0 || coord < 0 || nm < 0 || rp->antialias)
        return opara__lower_fail(w, OPARA_ERR_UNSUPPORTED, "Resize mode (nearest/linear; half_pixel, asymmetric, "
                                                         "align_corners, pytorch_half_pixel)");
    if (x->ndim != 4 || y->dims[0] != x->dims[0] || y->dims[1] != x->dims[1] || w->dtypes[opara__lower_in(w, 0)] != OPARA_DTYPE_F32)
        return opara__lower_fail(w, OPARA_ERR_UNSUPPORTED, "Resize of the last two axes of a float32 NCHW tensor only");
    sh = rp->scale[2], sw = rp->scale[3];
    if (opara__lower_check_elems(w, count) != OPARA_OK) return OPARA_ERR_LIMIT_EXCEEDED;
    if (!(L = opara__lower_launch(w, OPARA__CUK_RESIZE))) return OPARA_ERR_OUT_OF_MEMORY;
    opara__lower_arg_tensor(L, opara__lower_in(w, 0));
    opara__lower_arg_tensor(L, opara__lower_out(w, 0));
    opara__lower_arg_i32(L, x->dims[0] * x->dims[1]);
    opara__lower_arg_i32(L, x->dims[2]);
    opara__lower_arg_i32(L, x->dims[3]);
    opara__lower_arg_i32(L, y->dims[2]);
    opara__lower_arg_i32(L, y->dims[3]);
    opara__lower_arg_f32(L, sh);
    opara__lower_arg_f32(L, sw);
    opara__lower_arg_i32(L, mode);
    opara__lower_arg_i32(L, coord);
    opara__lower_arg_i32(L, nm);
    opara__lower_grid_1d(L, count);
    return OPARA_OK;
}

/* ---- rows: softmax, layer norm, reductions ------------------------------------------------------ */

/* Rows up to this length over the last axis take the row kernel (opara_softmax_rows_f32). */
#define OPARA__SOFTMAX_ROW_MAX 1024

/* Softmax or LogSoftmax over `rows` contiguous rows of len <= OPARA__SOFTMAX_ROW_MAX: the fewest
   lanes per row (a power of two, at most a warp) that hold the row in 4 registers each, and as many
   rows per block as fill it. */
static opara_result opara__lower_softmax_rows(opara__lower_walk* w, int64_t rows, int64_t len, int log_form) {
    int64_t lanes = 1, per_block;
    opara__cuda_launch* L;
    while (lanes < 32 && lanes * 4 < len) lanes *= 2;
    per_block = (int64_t)OPARA__CUDA_THREADS / lanes;
    if (!(L = opara__lower_launch(w, OPARA__CUK_SOFTMAX_ROWS))) return OPARA_ERR_OUT_OF_MEMORY;
    opara__lower_arg_tensor(L, opara__lower_in(w, 0));
    opara__lower_arg_tensor(L, opara__lower_out(w, 0));
    opara__lower_arg_i32(L, rows);
    opara__lower_arg_i32(L, len);
    opara__lower_arg_i32(L, lanes);
    opara__lower_arg_i32(L, log_form);
    L->grid[0] = (uint32_t)((rows + per_block - 1) / per_block);
    L->block[0] = OPARA__CUDA_THREADS;
    return OPARA_OK;
}

static opara_result opara__lower_softmax(opara__lower_walk* w) {
    const opara__shape* x = opara__lower_in_shape(w, 0);
    int64_t axis = opara__lower_axis(w), outer = 1, inner = 1;
    opara__cuda_launch* L;
    int32_t d;
    if (axis < 0 || axis >= x->ndim) return opara__lower_fail(w, OPARA_ERR_SHAPE, "axis out of range");
    for (d = 0; d < axis; ++d) outer *= x->dims[d];
    for (d = (int32_t)axis + 1; d < x->ndim; ++d) inner *= x->dims[d];
    if (outer * inner == 0 || x->dims[axis] == 0) return OPARA_OK;
    if (outer * inner > INT32_MAX) return opara__lower_fail(w, OPARA_ERR_LIMIT_EXCEEDED, "too many rows");
    if (inner == 1 && x->dims[axis] <= OPARA__SOFTMAX_ROW_MAX) return opara__lower_softmax_rows(w, outer, x->dims[axis], 0);
    if (!(L = opara__lower_launch(w, OPARA__CUK_SOFTMAX))) return OPARA_ERR_OUT_OF_MEMORY;
    opara__lower_arg_tensor(L, opara__lower_in(w, 0));
    opara__lower_arg_tensor(L, opara__lower_out(w, 0));
    opara__lower_arg_i32(L, x->dims[axis]);
    opara__lower_arg_i32(L, inner);
    L->grid[0] = (uint32_t)(outer * inner);
    L->block[0] = OPARA__CUDA_THREADS;
    return OPARA_OK;
}

static opara_result opara__lower_layer_norm(opara__lower_walk* w) {
    const opara__node* n = &w->g->nodes[w->node];
    const opara__shape* x = opara__lower_in_shape(w, 0);
    int64_t axis = opara__lower_axis(w), rows = 1, cols = 1;
    opara__cuda_launch* L;
    int32_t d;
    if (axis < 0 || axis >= x->ndim) return opara__lower_fail(w, OPARA_ERR_SHAPE, "axis out of range");
    if (n->n_outputs > 1)
        return opara__lower_fail(w, OPARA_ERR_UNSUPPORTED, "Mean/InvStdDev outputs");
    for (d = 0; d < axis; ++d) rows *= x->dims[d];
    for (d = (int32_t)axis; d < x->ndim; ++d) cols *= x->dims[d];
    if (opara__lower_numel(opara__lower_in_shape(w, 1)) != cols || (opara__lower_in(w, 2) >= 0 && opara__lower_numel(opara__lower_in_shape(w, 2)) != cols))
        return opara__lower_fail(w, OPARA_ERR_UNSUPPORTED, "Scale and B must have the normalized shape");
    if (rows == 0) return OPARA_OK;
    if (rows > INT32_MAX || cols > INT32_MAX) return opara__lower_fail(w, OPARA_ERR_LIMIT_EXCEEDED, "too large");
    if (!(L = opara__lower_launch(w, OPARA__CUK_LAYER_NORM))) return OPARA_ERR_OUT_OF_MEMORY;
    opara__lower_arg_tensor(L, opara__lower_in(w, 0));
    opara__lower_arg_tensor(L, opara__lower_in(w, 1));
    opara__lower_arg_tensor(L, opara__lower_in(w, 2));
    opara__lower_arg_tensor(L, opara__lower_out(w, 0));
    opara__lower_arg_i32(L, cols);
    opara__lower_arg_f32(L, w->params[w->node].u.epsilon);
    L->grid[0] = (uint32_t)rows;
    L->block[0] = OPARA__CUDA_THREADS;
    return OPARA_OK;
}

/* The groups of a reduction over `red` (a mask of x's dims) as the kernels' meta (norm.cu's
   opara__k_group_base), pushed at *at; *outs: the number of groups (0: nothing to launch). */
static opara_result opara__lower_group_meta(opara__lower_walk* w, const opara__shape* x, const int* red, int32_t* at,
                                            int64_t* outs_out) {
    int64_t xs[OPARA_MAX_DIMS], meta[2 + 4 * OPARA_MAX_DIMS], kept = 0, nred = 0, outs = 1;
    uint32_t k = 1;
    int32_t d;
    opara__lower_contig_strides(x, xs);
    for (d = 0; d < x->ndim; ++d)
        if (!red[d]) kept++, outs *= x->dims[d];
    meta[0] = kept;
    for (d = 0; d < x->ndim; ++d)
        if (!red[d]) meta[k++] = x->dims[d];
    for (d = 0; d < x->ndim; ++d)
        if (!red[d]) meta[k++] = xs[d];
    for (d = 0; d < x->ndim; ++d) nred += red[d] != 0;
    if (nred == 0) { /* nothing reduced: mean of one element, keep the kernel path */
        meta[k++] = 1, meta[k++] = 1, meta[k++] = 0;
    } else {
        meta[k++] = nred;
        for (d = 0; d < x->ndim; ++d)
            if (red[d]) meta[k++] = x->dims[d];
        for (d = 0; d < x->ndim; ++d)
            if (red[d]) meta[k++] = xs[d];
    }
    *outs_out = outs;
    if (outs == 0) return OPARA_OK;
    if (outs > INT32_MAX) return opara__lower_fail(w, OPARA_ERR_LIMIT_EXCEEDED, "too many outputs");
    return opara__lower_meta_push(w, meta, k, at);
}

/* The kind's reduction over `red` (a mask of input dims) of x (GlobalAveragePool: the mean over the
   mask of dims 2..). */
static opara_result opara__lower_reduce(opara__lower_walk* w, const int* red, opara__reduce_kind kind) {
    int64_t outs = 0;
    int32_t at = 0;
    opara__cuda_launch* L;
    opara_result r;
    if (w->dtypes[opara__lower_in(w, 0)] != OPARA_DTYPE_F32) return opara__lower_fail(w, OPARA_ERR_UNSUPPORTED, "only float32");
    r = opara__lower_group_meta(w, opara__lower_in_shape(w, 0), red, &at, &outs);
    if (r != OPARA_OK || outs == 0) return r;
    if (!(L = opara__lower_launch(w, OPARA__CUK_REDUCE))) return OPARA_ERR_OUT_OF_MEMORY;
    opara__lower_arg_tensor(L, opara__lower_in(w, 0));
    opara__lower_arg_tensor(L, opara__lower_out(w, 0));
    opara__lower_arg(L, OPARA__CUARG_META, at, 0);
    opara__lower_arg_i32(L, (int64_t)kind);
    L->grid[0] = (uint32_t)outs;
    L->block[0] = OPARA__CUDA_THREADS;
    return OPARA_OK;
}

/* ReduceMean .. ReduceSumSquare. */
static opara_result opara__lower_reduce_axes(opara__lower_walk* w) {
    const opara__shape* x = opara__lower_in_shape(w, 0);
    int red[OPARA_MAX_DIMS];
    int32_t d;
    opara__reduce_kind kind = OPARA__RED_MEAN;
    opara__reduce_kind_of(w->g->nodes[w->node].op, &kind);
    if (!w->params[w->node].resolved) return opara__lower_fail(w, OPARA_ERR_SHAPE, "axis out of range");
    for (d = 0; d < x->ndim; ++d) red[d] = w->params[w->node].u.reduce.axes[d]; /* as the shape engine resolved the axes */
    return opara__lower_reduce(w, red, kind);
}

/* The rows along the record's axis of the input as [outer, len, inner] (ArgMax, ArgMin, Hardmax,
   LogSoftmax: float32; CumSum: also float64, int32, int64), each count checked against the kernels'
   int indices. */
static opara_result opara__lower_axis_rows(opara__lower_walk* w, int64_t* outer, int64_t* len, int64_t* inner) {
    const opara__shape* x = opara__lower_in_shape(w, 0);
    int64_t axis = opara__lower_axis(w);
    int32_t d;
    opara_dtype t = w->dtypes[opara__lower_in(w, 0)];
    int any = w->g->nodes[w->node].op == OPARA__OP_CUM_SUM &&
              (t == OPARA_DTYPE_F64 || t == OPARA_DTYPE_I32 || t == OPARA_DTYPE_I64);
    if (axis < 0 || axis >= x->ndim) return opara__lower_fail(w, OPARA_ERR_SHAPE, "axis out of range");
    if (t != OPARA_DTYPE_F32 && !any) return opara__lower_fail(w, OPARA_ERR_UNSUPPORTED, "data type");
    *outer = *inner = 1;
    for (d = 0; d < axis; ++d) *outer *= x->dims[d];
    for (d = (int32_t)axis + 1; d < x->ndim; ++d) *inner *= x->dims[d];
    *len = x->dims[axis];
    return opara__lower_check_elems(w, opara__lower_numel(x));
}

/* ArgMax, ArgMin, Hardmax, CumSum: one thread per row. */
static opara_result opara__lower_axis_scan(opara__lower_walk* w, opara__cuda_kernel kernel) {
    const opara__reduce_params* p = &w->params[w->node].u.reduce;
    opara__op op = w->g->nodes[w->node].op;
    int64_t outer, len, inner;
    opara__cuda_launch* L;
    opara_result r = opara__lower_axis_rows(w, &outer, &len, &inner);
    if (r != OPARA_OK) return r;
    if (outer * inner * len == 0) return OPARA_OK;
    if (!(L = opara__lower_launch(w, kernel))) return OPARA_ERR_OUT_OF_MEMORY;
    opara__lower_arg_tensor(L, opara__lower_in(w, 0));
    opara__lower_arg_tensor(L, opara__lower_out(w, 0));
    opara__lower_arg_i32(L, outer * inner);
    opara__lower_arg_i32(L, len);
    opara__lower_arg_i32(L, inner);
    if (kernel == OPARA__CUK_ARG_REDUCE) {
        opara__lower_arg_i32(L, op == OPARA__OP_ARG_MIN);
        opara__lower_arg_i32(L, p->select_last_index);
    }
    if (kernel == OPARA__CUK_CUM_SUM) {
        opara__lower_arg_i32(L, p->exclusive);
        opara__lower_arg_i32(L, p->reverse);
        opara__lower_arg_i32(L, (int64_t)w->dtypes[opara__lower_in(w, 0)]);
    }
    opara__lower_grid_1d(L, outer * inner);
    return OPARA_OK;
}

/* LogSoftmax: one block per row, short contiguous rows several per block. */
static opara_result opara__lower_log_softmax(opara__lower_walk* w) {
    int64_t outer, len, inner;
    opara__cuda_launch* L;
    opara_result r = opara__lower_axis_rows(w, &outer, &len, &inner);
    if (r != OPARA_OK) return r;
    if (outer * inner * len == 0) return OPARA_OK;
    if (inner == 1 && len <= OPARA__SOFTMAX_ROW_MAX) return opara__lower_softmax_rows(w, outer, len, 1);
    if (!(L = opara__lower_launch(w, OPARA__CUK_LOG_SOFTMAX))) return OPARA_ERR_OUT_OF_MEMORY;
    opara__lower_arg_tensor(L, opara__lower_in(w, 0));
    opara__lower_arg_tensor(L, opara__lower_out(w, 0));
    opara__lower_arg_i32(L, len);
    opara__lower_arg_i32(L, inner);
    L->grid[0] = (uint32_t)(outer * inner);
    L->block[0] = OPARA__CUDA_THREADS;
    return OPARA_OK;
}

static opara_result opara__lower_global_avg(opara__lower_walk* w) {
    const opara__shape* x = opara__lower_in_shape(w, 0);
    int red[OPARA_MAX_DIMS];
    int32_t d;
    for (d = 0; d < x->ndim; ++d) red[d] = d >= 2;
    return opara__lower_reduce(w, red, OPARA__RED_MEAN);
}

/* ---- pooling and normalisation with constants ------------------------------------------------- */

/* Spatial geometry of 1-D or 2-D window ops as 2-D (a 1-D op gets H = 1). */
typedef struct opara__lower_win2 {
    int64_t H, W, OH, OW, kh, kw, sh, sw, dh, dw, ph, pw, ph_end, pw_end;
} opara__lower_win2;

/* The window the shape engine resolved for the node (pads after auto_pad / output_shape) as 2-D. */
static opara_result opara__lower_win2_read(opara__lower_walk* w, const opara__shape* x, const opara__shape* y, opara__lower_win2* v) {
    const opara__node_params* rec = &w->params[w->node];
    const opara__window_params* p = &rec->u.window;
    int32_t k = x->ndim - 2, h = k == 2 ? 0 : -1, ww = k - 1; /* spatial indices of H (-1: 1-D) and W */
    if (k < 1 || k > 2) return opara__lower_fail(w, OPARA_ERR_UNSUPPORTED, "only 1-D and 2-D windows");
    if (!rec->resolved || p->n_spatial != k) return opara__lower_fail(w, OPARA_ERR_SHAPE, "no resolved window");
    memset(v, 0, sizeof *v);
    v->H = h >= 0 ? x->dims[2] : 1, v->W = x->dims[1 + k];
    v->OH = h >= 0 ? y->dims[2] : 1, v->OW = y->dims[1 + k];
    v->kh = h >= 0 ? p->kernel[h] : 1, v->kw = p->kernel[ww];
    v->sh = h >= 0 ? p->strides[h] : 1, v->sw = p->strides[ww];
    v->dh = h >= 0 ? p->dilations[h] : 1, v->dw = p->dilations[ww];
    v->ph = h >= 0 ? p->pads[h] : 0, v->ph_end = h >= 0 ? p->pads[k + h] : 0;
    v->pw = p->pads[ww], v->pw_end = p->pads[k + ww];
    return OPARA_OK;
}

/* MaxPool with its Indices output (pool.cu's opara_maxpool2d_idx_f32). */
static opara_result opara__lower_maxpool_idx(opara__lower_walk* w, const opara__lower_win2* v, int64_t planes, int64_t count) {
    opara__cuda_launch* L = opara__lower_launch(w, OPARA__CUK_MAXPOOL_IDX);
    if (!L) return OPARA_ERR_OUT_OF_MEMORY;
    opara__lower_arg_tensor(L, opara__lower_in(w, 0));
    opara__lower_arg_tensor(L, opara__lower_out(w, 0));
    opara__lower_arg_tensor(L, opara__lower_out(w, 1));
    opara__lower_arg_i32(L, planes);
    opara__lower_arg_i32(L, v->H), opara__lower_arg_i32(L, v->W), opara__lower_arg_i32(L, v->OH), opara__lower_arg_i32(L, v->OW);
    opara__lower_arg_i32(L, v->kh), opara__lower_arg_i32(L, v->kw), opara__lower_arg_i32(L, v->sh), opara__lower_arg_i32(L, v->sw);
    opara__lower_arg_i32(L, v->ph), opara__lower_arg_i32(L, v->pw), opara__lower_arg_i32(L, v->dh), opara__lower_arg_i32(L, v->dw);
    opara__lower_arg_i32(L, w->params[w->node].u.window.storage_order);
    opara__lower_grid_1d(L, count);
    return OPARA_OK;
}

static opara_result opara__lower_pool(opara__lower_walk* w, int is_max) {
    const opara__node* n = &w->g->nodes[w->node];
    const opara__shape *x = opara__lower_in_shape(w, 0), *y = opara__lower_out_shape(w, 0);
    int32_t k = x->ndim - 2;
    opara__lower_win2 v;
    int64_t count = opara__lower_numel(y);
    opara__cuda_launch* L;
    opara_result r;
    int with_idx = n->n_outputs > 1 && n->outputs[1] >= 0;
    if (w->dtypes[opara__lower_in(w, 0)] != OPARA_DTYPE_F32) return opara__lower_fail(w, OPARA_ERR_UNSUPPORTED, "only float32");
    if (k < 1 || k > 2) return opara__lower_fail(w, OPARA_ERR_UNSUPPORTED, "only 1-D and 2-D pooling");
    r = opara__lower_win2_read(w, x, y, &v);
    if (r != OPARA_OK) return r;
    if (opara__lower_check_elems(w, count) != OPARA_OK) return OPARA_ERR_LIMIT_EXCEEDED;
    if (with_idx) return opara__lower_maxpool_idx(w, &v, x->dims[0] * x->dims[1], count);
    if (!(L = opara__lower_launch(w, OPARA__CUK_POOL2D))) return OPARA_ERR_OUT_OF_MEMORY;
    opara__lower_arg_tensor(L, opara__lower_in(w, 0));
    opara__lower_arg_tensor(L, opara__lower_out(w, 0));
    opara__lower_arg_i32(L, x->dims[0] * x->dims[1]);
    opara__lower_arg_i32(L, v.H), opara__lower_arg_i32(L, v.W), opara__lower_arg_i32(L, v.OH), opara__lower_arg_i32(L, v.OW);
    opara__lower_arg_i32(L, v.kh), opara__lower_arg_i32(L, v.kw), opara__lower_arg_i32(L, v.sh), opara__lower_arg_i32(L, v.sw);
    opara__lower_arg_i32(L, v.ph), opara__lower_arg_i32(L, v.pw), opara__lower_arg_i32(L, v.dh), opara__lower_arg_i32(L, v.dw);
    opara__lower_arg_i32(L, is_max ? 0 : 1);
    opara__lower_arg_i32(L, w->params[w->node].u.window.count_include_pad);
    opara__lower_arg_i32(L, v.ph_end), opara__lower_arg_i32(L, v.pw_end);
    opara__lower_grid_1d(L, count);
    return OPARA_OK;
}

static const float* opara__lower_const_f32(const opara__lower_walk* w, int32_t v, int64_t count) {
    const opara__value* val = &w->g->values[v];
    if (val->kind != OPARA__VALUE_CONST || val->dtype != OPARA_DTYPE_F32 || !val->data ||
        val->nbytes != (uint64_t)count * sizeof(float))
        return NULL;
    return (const float*)val->data;
}

/* BatchNormalization (inference) with constant statistics: folded into per-channel scale and
   shift at session creation, y = x * scale + shift. */
static opara_result opara__lower_batch_norm(opara__lower_walk* w) {
    const opara__node* n = &w->g->nodes[w->node];
    const opara__shape* x = opara__lower_in_shape(w, 0);
    int64_t C = x->ndim >= 2 ? x->dims[1] : 1, inner = 1, count = opara__lower_numel(x), c;
    const float *s = opara__lower_const_f32(w, opara__lower_in(w, 1), C), *b = opara__lower_const_f32(w, opara__lower_in(w, 2), C);
    const float *m = opara__lower_const_f32(w, opara__lower_in(w, 3), C), *var = opara__lower_const_f32(w, opara__lower_in(w, 4), C);
    float eps = w->params[w->node].u.epsilon;
    float* folded;
    int32_t d, at;
    opara__cuda_launch* L;
    opara_result r;
    if (!s || !b || !m || !var) return opara__lower_fail(w, OPARA_ERR_UNSUPPORTED, "scale, B, mean and var must be float32 constants");
    if (n->n_outputs > 1) return opara__lower_fail(w, OPARA_ERR_UNSUPPORTED, "training outputs");
    for (d = 2; d < x->ndim; ++d) inner *= x->dims[d];
    if ((r = opara__lower_check_elems(w, count)) != OPARA_OK) return r;
    folded = (float*)opara__calloc(w->rt, (size_t)(2 * C > 0 ? 2 * C : 1), sizeof(float));
    if (!folded) return opara__fail_to(&w->rt->error, w->low->logger, OPARA_ERR_OUT_OF_MEMORY, "CUDA backend: out of memory");
    for (c = 0; c < C; ++c) {
        double sc = (double)s[c] / sqrt((double)var[c] + (double)eps);
        folded[c] = (float)sc;
        folded[C + c] = (float)((double)b[c] - (double)m[c] * sc);
    }
    r = opara__lower_aux_push(w, folded, (size_t)(2 * C), &at);
    opara__free(w->rt, folded);
    if (r != OPARA_OK) return r;
    if (!(L = opara__lower_launch(w, OPARA__CUK_CHANNEL_AFFINE))) return OPARA_ERR_OUT_OF_MEMORY;
    opara__lower_arg_tensor(L, opara__lower_in(w, 0));
    opara__lower_arg(L, OPARA__CUARG_AUX, at, 0);
    opara__lower_arg(L, OPARA__CUARG_AUX, at + (int32_t)C, 0);
    opara__lower_arg_tensor(L, opara__lower_out(w, 0));
    opara__lower_arg_i32(L, count);
    opara__lower_arg_i32(L, C > 0 ? C : 1);
    opara__lower_arg_i32(L, inner > 0 ? inner : 1);
    opara__lower_arg_i32(L, OPARA__CUDA_ACT_NONE);
    opara__lower_arg_f32(L, 0.0f), opara__lower_arg_f32(L, 0.0f);
    opara__lower_grid_1d(L, count);
    return OPARA_OK;
}

/* InstanceNormalization (mode 0: groups are the (n, c) planes) and MeanVarianceNormalization (mode 1:
   groups over the record's axes) by norm.cu's opara_group_norm_f32. */
static opara_result opara__lower_group_norm(opara__lower_walk* w, int mode) {
    const opara__shape* x = opara__lower_in_shape(w, 0);
    int red[OPARA_MAX_DIMS];
    int64_t groups = 0;
    int32_t d, at = 0;
    opara__cuda_launch* L;
    opara_result r;
    if (!w->params[w->node].resolved) return opara__lower_fail(w, OPARA_ERR_SHAPE, "no resolved axes");
    if (w->dtypes[opara__lower_in(w, 0)] != OPARA_DTYPE_F32) return opara__lower_fail(w, OPARA_ERR_UNSUPPORTED, "only float32");
    for (d = 0; d < x->ndim; ++d) red[d] = mode == 0 ? d >= 2 : w->params[w->node].u.reduce.axes[d];
    if ((r = opara__lower_check_elems(w, opara__lower_numel(x))) != OPARA_OK) return r;
    if ((r = opara__lower_group_meta(w, x, red, &at, &groups)) != OPARA_OK || groups == 0) return r;
    if (!(L = opara__lower_launch(w, OPARA__CUK_GROUP_NORM))) return OPARA_ERR_OUT_OF_MEMORY;
    opara__lower_arg_tensor(L, opara__lower_in(w, 0));
    opara__lower_arg_tensor(L, mode == 0 ? opara__lower_in(w, 1) : -1);
    opara__lower_arg_tensor(L, mode == 0 ? opara__lower_in(w, 2) : -1);
    opara__lower_arg_tensor(L, opara__lower_out(w, 0));
    opara__lower_arg(L, OPARA__CUARG_META, at, 0);
    opara__lower_arg_i32(L, x->ndim >= 2 && x->dims[1] > 0 ? x->dims[1] : 1);
    opara__lower_arg_i32(L, mode);
    opara__lower_arg_f32(L, mode == 0 ? w->params[w->node].u.epsilon : 1e-9f);
    L->grid[0] = (uint32_t)groups;
    L->block[0] = OPARA__CUDA_THREADS;
    return OPARA_OK;
}

static opara_result opara__lower_global_max(opara__lower_walk* w) {
    const opara__shape* x = opara__lower_in_shape(w, 0);
    int64_t planes = x->ndim >= 2 ? x->dims[0] * x->dims[1] : 1, inner = 1;
    int32_t d;
    opara__cuda_launch* L;
    if (w->dtypes[opara__lower_in(w, 0)] != OPARA_DTYPE_F32) return opara__lower_fail(w, OPARA_ERR_UNSUPPORTED, "only float32");
    for (d = 2; d < x->ndim; ++d) inner *= x->dims[d];
    if (planes == 0 || inner == 0) return OPARA_OK;
    if (opara__lower_check_elems(w, opara__lower_numel(x)) != OPARA_OK) return OPARA_ERR_LIMIT_EXCEEDED;
    if (!(L = opara__lower_launch(w, OPARA__CUK_GLOBAL_MAX))) return OPARA_ERR_OUT_OF_MEMORY;
    opara__lower_arg_tensor(L, opara__lower_in(w, 0));
    opara__lower_arg_tensor(L, opara__lower_out(w, 0));
    opara__lower_arg_i32(L, inner);
    L->grid[0] = (uint32_t)planes;
    L->block[0] = OPARA__CUDA_THREADS;
    return OPARA_OK;
}

static opara_result opara__lower_lrn(opara__lower_walk* w) {
    const opara__shape* x = opara__lower_in_shape(w, 0);
    const opara__lrn_params* p = &w->params[w->node].u.lrn;
    int64_t count = opara__lower_numel(x), inner = 1;
    int32_t d;
    opara__cuda_launch* L;
    if (!w->params[w->node].resolved || x->ndim < 2) return opara__lower_fail(w, OPARA_ERR_SHAPE, "no resolved LRN");
    if (w->dtypes[opara__lower_in(w, 0)] != OPARA_DTYPE_F32) return opara__lower_fail(w, OPARA_ERR_UNSUPPORTED, "only float32");
    for (d = 2; d < x->ndim; ++d) inner *= x->dims[d];
    if (count == 0) return OPARA_OK;
    if (opara__lower_check_elems(w, count) != OPARA_OK) return OPARA_ERR_LIMIT_EXCEEDED;
    if (!(L = opara__lower_launch(w, OPARA__CUK_LRN))) return OPARA_ERR_OUT_OF_MEMORY;
    opara__lower_arg_tensor(L, opara__lower_in(w, 0));
    opara__lower_arg_tensor(L, opara__lower_out(w, 0));
    opara__lower_arg_i32(L, count);
    opara__lower_arg_i32(L, x->dims[1]);
    opara__lower_arg_i32(L, inner);
    opara__lower_arg_i32(L, p->size);
    opara__lower_arg_f32(L, p->alpha), opara__lower_arg_f32(L, p->beta), opara__lower_arg_f32(L, p->bias);
    opara__lower_grid_1d(L, count);
    return OPARA_OK;
}

static opara_result opara__lower_prelu(opara__lower_walk* w) {
    const opara__shape* x = opara__lower_in_shape(w, 0);
    int64_t count = opara__lower_numel(x), xs[OPARA_MAX_DIMS];
    const int64_t* st[2];
    opara__cuda_launch* L;
    int32_t meta;
    opara_result r;
    if (!w->params[w->node].resolved) return opara__lower_fail(w, OPARA_ERR_SHAPE, "slope does not broadcast to X");
    if (w->dtypes[opara__lower_in(w, 0)] != OPARA_DTYPE_F32 || w->dtypes[opara__lower_in(w, 1)] != OPARA_DTYPE_F32)
        return opara__lower_fail(w, OPARA_ERR_UNSUPPORTED, "only float32");
    opara__lower_contig_strides(x, xs);
    st[0] = xs, st[1] = w->params[w->node].u.broadcast.strides[1];
    if ((r = opara__lower_check_elems(w, count)) != OPARA_OK) return r;
    if ((r = opara__lower_meta_strided(w, x, st, 2, &meta)) != OPARA_OK) return r;
    if (!(L = opara__lower_launch(w, OPARA__CUK_PRELU))) return OPARA_ERR_OUT_OF_MEMORY;
    opara__lower_arg_tensor(L, opara__lower_in(w, 0));
    opara__lower_arg_tensor(L, opara__lower_in(w, 1));
    opara__lower_arg_tensor(L, opara__lower_out(w, 0));
    opara__lower_arg_i32(L, count);
    opara__lower_arg(L, OPARA__CUARG_META, meta, 0);
    opara__lower_grid_1d(L, count);
    return OPARA_OK;
}

static opara_result opara__lower_shrink(opara__lower_walk* w) {
    int64_t count = opara__lower_numel(opara__lower_out_shape(w, 0));
    const opara__activation_params* a = &w->params[w->node].u.activation;
    opara__cuda_launch* L;
    if (w->dtypes[opara__lower_in(w, 0)] != OPARA_DTYPE_F32) return opara__lower_fail(w, OPARA_ERR_UNSUPPORTED, "only float32");
    if (opara__lower_check_elems(w, count) != OPARA_OK) return OPARA_ERR_LIMIT_EXCEEDED;
    if (!(L = opara__lower_launch(w, OPARA__CUK_SHRINK))) return OPARA_ERR_OUT_OF_MEMORY;
    opara__lower_arg_tensor(L, opara__lower_in(w, 0));
    opara__lower_arg_tensor(L, opara__lower_out(w, 0));
    opara__lower_arg_i32(L, count);
    opara__lower_arg_f32(L, a->alpha), opara__lower_arg_f32(L, a->beta);
    opara__lower_grid_1d(L, count);
    return OPARA_OK;
}

/* Dropout (inference): Y a byte copy of X, the mask (if any) all true. */
static opara_result opara__lower_dropout(opara__lower_walk* w) {
    const opara__node* n = &w->g->nodes[w->node];
    int64_t count = opara__lower_numel(opara__lower_out_shape(w, 0));
    int64_t bytes = count * (int64_t)opara_dtype_size(w->dtypes[opara__lower_out(w, 0)]);
    opara__cuda_launch* L;
    if (count == 0) return OPARA_OK;
    if (opara__lower_check_elems(w, bytes) != OPARA_OK) return OPARA_ERR_LIMIT_EXCEEDED;
    if (!(L = opara__lower_launch(w, OPARA__CUK_DROPOUT))) return OPARA_ERR_OUT_OF_MEMORY;
    opara__lower_arg_tensor(L, opara__lower_in(w, 0));
    opara__lower_arg_tensor(L, opara__lower_out(w, 0));
    opara__lower_arg_tensor(L, n->n_outputs > 1 ? n->outputs[1] : -1);
    opara__lower_arg_i32(L, bytes);
    opara__lower_arg_i32(L, count);
    opara__lower_grid_1d(L, bytes);
    return OPARA_OK;
}

/* MaxUnpool (1-D or 2-D windows): zero the output, then scatter X by its indices (pool.cu). */
static opara_result opara__lower_max_unpool(opara__lower_walk* w) {
    const opara__shape *x = opara__lower_in_shape(w, 0), *y = opara__lower_out_shape(w, 0);
    const opara__window_params* p = &w->params[w->node].u.window;
    int32_t k = x->ndim - 2, phase;
    int64_t uh = 1, uw, n_in = opara__lower_numel(x), n_out = opara__lower_numel(y);
    if (!w->params[w->node].resolved || k < 1 || k > 2 || p->n_spatial != k)
        return opara__lower_fail(w, OPARA_ERR_UNSUPPORTED, "only 1-D and 2-D windows");
    if (w->dtypes[opara__lower_in(w, 0)] != OPARA_DTYPE_F32) return opara__lower_fail(w, OPARA_ERR_UNSUPPORTED, "only float32");
    if (k == 2) uh = (x->dims[2] - 1) * p->strides[0] + p->kernel[0] - p->pads[0] - p->pads[2];
    uw = (x->dims[1 + k] - 1) * p->strides[k - 1] + p->kernel[k - 1] - p->pads[k - 1] - p->pads[2 * k - 1];
    if (uh < 1 || uw < 1) return opara__lower_fail(w, OPARA_ERR_SHAPE, "the window unpools to an empty shape");
    if (opara__lower_check_elems(w, n_out) != OPARA_OK || opara__lower_check_elems(w, n_in) != OPARA_OK)
        return OPARA_ERR_LIMIT_EXCEEDED;
    for (phase = 0; phase < 2 && n_out > 0; ++phase) {
        opara__cuda_launch* L = opara__lower_launch(w, OPARA__CUK_MAX_UNPOOL);
        if (!L) return OPARA_ERR_OUT_OF_MEMORY;
        opara__lower_arg_tensor(L, opara__lower_in(w, 0));
        opara__lower_arg_tensor(L, opara__lower_in(w, 1));
        opara__lower_arg_tensor(L, opara__lower_out(w, 0));
        opara__lower_arg_i32(L, phase);
        opara__lower_arg_i32(L, n_in), opara__lower_arg_i32(L, n_out);
        opara__lower_arg_i32(L, opara__lower_numel(x) / (x->dims[0] * x->dims[1] > 0 ? x->dims[0] * x->dims[1] : 1));
        opara__lower_arg_i32(L, uh), opara__lower_arg_i32(L, uw);
        opara__lower_arg_i32(L, k == 2 ? y->dims[2] : 1), opara__lower_arg_i32(L, y->dims[1 + k]);
        opara__lower_grid_1d(L, phase == 0 ? n_out : n_in);
    }
    return OPARA_OK;
}

/* ---- convolution and GEMM --------------------------------------------------------------------- */

/* The kernels' code of the activation the importer fused into a Conv, Gemm or binary operator, or -1. */
static int opara__lower_fused_act(opara__fused_act act) {
    switch (act) {
    case OPARA__FUSED_NONE: return OPARA__CUDA_ACT_NONE;
    case OPARA__FUSED_RELU: return OPARA__CUDA_ACT_RELU;
    case OPARA__FUSED_GELU: return OPARA__CUDA_ACT_GELU;
    case OPARA__FUSED_GELU_TANH: return OPARA__CUDA_ACT_GELU_TANH;
    case OPARA__FUSED_UNKNOWN: return -1;
    }
    return -1;
}

/* The arguments both convolution kernels start with: X, W, B, Y and the geometry. */
static void opara__lower_conv_args(const opara__lower_walk* w, opara__cuda_launch* L, const opara__shape* x, const opara__shape* y,
                                 const opara__lower_win2* v, int64_t group) {
    opara__lower_arg_tensor(L, opara__lower_in(w, 0));
    opara__lower_arg_tensor(L, opara__lower_in(w, 1));
    opara__lower_arg_tensor(L, opara__lower_in(w, 2));
    opara__lower_arg_tensor(L, opara__lower_out(w, 0));
    opara__lower_arg_i32(L, x->dims[0]), opara__lower_arg_i32(L, x->dims[1]), opara__lower_arg_i32(L, v->H), opara__lower_arg_i32(L, v->W);
    opara__lower_arg_i32(L, y->dims[1]), opara__lower_arg_i32(L, v->kh), opara__lower_arg_i32(L, v->kw);
    opara__lower_arg_i32(L, v->OH), opara__lower_arg_i32(L, v->OW);
    opara__lower_arg_i32(L, v->sh), opara__lower_arg_i32(L, v->sw), opara__lower_arg_i32(L, v->ph), opara__lower_arg_i32(L, v->pw);
    opara__lower_arg_i32(L, v->dh), opara__lower_arg_i32(L, v->dw), opara__lower_arg_i32(L, group);
}

static opara_result opara__lower_conv_transpose(opara__lower_walk* w, const opara__shape* x, const opara__shape* y,
                                                    opara__lower_win2 v, int64_t group) {
    opara__cuda_launch* L;
    if (!(L = opara__lower_launch(w, OPARA__CUK_CONV_TRANSPOSE2D))) return OPARA_ERR_OUT_OF_MEMORY;
    opara__lower_conv_args(w, L, x, y, &v, group);
    opara__lower_grid_1d(L, opara__lower_numel(y));
    return OPARA_OK;
}

/* The convolution's geometry in cuDNN's int terms; 0 when a size is empty or beyond int. */
static int opara__lower_conv_geom(const opara__shape* x, const opara__shape* y, const opara__lower_win2* v, int64_t group,
                                opara__cuda_conv_geom* c) {
    int64_t g[19];
    int i;
    g[0] = x->dims[0], g[1] = x->dims[1], g[2] = v->H, g[3] = v->W, g[4] = y->dims[1], g[5] = v->kh, g[6] = v->kw;
    g[7] = v->OH, g[8] = v->OW, g[9] = v->ph + 1, g[10] = v->pw + 1, g[11] = v->ph_end + 1, g[12] = v->pw_end + 1;
    g[13] = v->sh, g[14] = v->sw, g[15] = v->dh, g[16] = v->dw, g[17] = group, g[18] = opara__lower_numel(x);
    for (i = 0; i < 19; ++i)
        if (g[i] < 1 || g[i] > INT32_MAX) return 0;
    if (opara__lower_numel(y) > INT32_MAX) return 0;
    memset(c, 0, sizeof *c);
    c->N = (int)g[0], c->C = (int)g[1], c->H = (int)g[2], c->W = (int)g[3], c->K = (int)g[4], c->R = (int)g[5];
    c->S = (int)g[6], c->OH = (int)g[7], c->OW = (int)g[8], c->ph = (int)v->ph, c->pw = (int)v->pw;
    c->ph_end = (int)v->ph_end, c->pw_end = (int)v->pw_end, c->sh = (int)v->sh, c->sw = (int)v->sw;
    c->dh = (int)v->dh, c->dw = (int)v->dw, c->group = (int)group;
    return 1;
}

/* cuDNN 9 loads its sub-libraries (libcudnn_cnn, ...) late, so a missing or broken one shows up
   at the first descriptor or heuristics call of a convolution, as may a geometry cuDNN does not
   support: that convolution runs on our kernel, counted, with cuDNN's status logged. */
static void opara__lower_cudnn_refused(opara__lower_walk* w, const opara__cudnn_conv* conv) {
    const opara__node* n = &w->g->nodes[w->node];
    w->low->n_dnn_refused++;
    opara__log(w->low->logger, OPARA_LOG_WARN, OPARA_LOGITEM_BACKEND_FALLBACK,
               "CUDA backend: node %u '%s' (Conv): cuDNN refused it (%s: %s, %d); it runs on opara_conv2d_f32", w->node,
               n->name ? n->name : "", conv->failed_call, opara_cudnn_status_name(conv->status), (int)conv->status);
}

/* A Conv that cuDNN can express becomes one cuDNN call with bias and Relu fused (a Relu without a
   bias gets zeros from the aux table: the fused call needs a bias). *done = 0 leaves the Conv to
   our kernel. */
static opara_result opara__lower_conv_cudnn(opara__lower_walk* w, const opara__shape* x, const opara__shape* y,
                                                const opara__lower_win2* v, int64_t group, int act, int* done) {
    opara__cuda_lowering* low = w->low;
    opara__cuda_conv_geom c;
    opara__cudnn_conv* conv;
    opara__cuda_launch* L;
    int32_t bias = opara__lower_in(w, 2), zeros_at = -1;
    opara_result r;
    *done = 0;
    if (!opara__lower_conv_geom(x, y, v, group, &c)) return OPARA_OK;
    c.relu = act == OPARA__CUDA_ACT_RELU;
    c.has_bias = bias >= 0 || c.relu;
    if (!opara__cudnn_conv_supported(&c)) return OPARA_OK;
    if (opara__grow(w->rt, (void**)&low->dnn_convs, &low->cap_dnn_convs, low->n_dnn_convs + 1, sizeof *conv) != OPARA_OK)
        return OPARA_ERR_OUT_OF_MEMORY;
    conv = &low->dnn_convs[low->n_dnn_convs];
    c.tf32 = low->tf32;
    r = opara__cudnn_conv_describe(w->rt, low->logger, low->dnn, &c, conv);
    if (r == OPARA_OK) r = opara__cudnn_conv_choose(w->rt, low->logger, low->dnn, low->dnn_handle, conv);
    if (r == OPARA_ERR_CUDNN) { /* cuDNN refused this one (e.g. a sub-library that fails to load): our kernel */
        opara__lower_cudnn_refused(w, conv);
        r = OPARA_OK;
    }
    if (r != OPARA_OK || conv->failed_call) {
        opara__cudnn_conv_destroy(low->dnn, conv);
        return r;
    }
    low->n_dnn_convs++;
    if (bias < 0 && c.relu) {
        float* zeros = (float*)opara__calloc(w->rt, (size_t)c.K, sizeof(float));
        r = zeros ? opara__lower_aux_push(w, zeros, (size_t)c.K, &zeros_at) : OPARA_ERR_OUT_OF_MEMORY;
        opara__free(w->rt, zeros);
        if (r != OPARA_OK) return r;
    }
    if (!(L = opara__lower_launch(w, OPARA__CUK_CONV2D))) return OPARA_ERR_OUT_OF_MEMORY;
    L->type = OPARA__CULAUNCH_CUDNN;
    L->lib = low->n_dnn_convs - 1;
    opara__lower_arg_tensor(L, opara__lower_in(w, 0));
    opara__lower_arg_tensor(L, opara__lower_in(w, 1));
    if (zeros_at >= 0) opara__lower_arg(L, OPARA__CUARG_AUX, zeros_at, 0);
    else opara__lower_arg_tensor(L, bias);
    opara__lower_arg_tensor(L, opara__lower_out(w, 0));
    *done = 1;
    return OPARA_OK;
}

static opara_result opara__lower_conv(opara__lower_walk* w, int transpose) {
    const opara__shape *x = opara__lower_in_shape(w, 0), *y = opara__lower_out_shape(w, 0);
    int64_t group = w->params[w->node].u.window.group, K = y->dims[1], kgroup;
    int32_t k = x->ndim - 2;
    int act = opara__lower_fused_act(w->params[w->node].u.window.activation), done = 0;
    opara__lower_win2 v;
    opara__cuda_launch* L;
    opara_result r;
    if (k < 1 || k > 2) return opara__lower_fail(w, OPARA_ERR_UNSUPPORTED, "only 1-D and 2-D convolutions");
    if (act < 0 || (transpose && act != OPARA__CUDA_ACT_NONE))
        return opara__lower_fail(w, OPARA_ERR_UNSUPPORTED, "fused activation");
    if (w->dtypes[opara__lower_in(w, 0)] != OPARA_DTYPE_F32) return opara__lower_fail(w, OPARA_ERR_UNSUPPORTED, "only float32");
    r = opara__lower_win2_read(w, x, y, &v);
    if (r != OPARA_OK) return r;
    if (opara__lower_check_elems(w, opara__lower_numel(y)) != OPARA_OK || opara__lower_check_elems(w, opara__lower_numel(x)) != OPARA_OK)
        return OPARA_ERR_LIMIT_EXCEEDED;
    if (transpose) return opara__lower_conv_transpose(w, x, y, v, group);
    w->low->n_conv++;
    if (w->low->dnn && (r = opara__lower_conv_cudnn(w, x, y, &v, group, act, &done)) != OPARA_OK) return r;
    if (done) return OPARA_OK;
    kgroup = K / (group > 0 ? group : 1);
    if (!(L = opara__lower_launch(w, OPARA__CUK_CONV2D))) return OPARA_ERR_OUT_OF_MEMORY;
    opara__lower_conv_args(w, L, x, y, &v, group);
    opara__lower_arg_i32(L, act), opara__lower_arg_f32(L, 0.0f), opara__lower_arg_f32(L, 0.0f);
    L->grid[0] = (uint32_t)((x->dims[0] * v.OH * v.OW + 15) / 16);
    L->grid[1] = (uint32_t)((kgroup + 15) / 16);
    L->grid[2] = (uint32_t)group;
    L->block[0] = 16, L->block[1] = 16;
    return OPARA_OK;
}

/* One SGEMM launch (our kernel): Y = alpha op(A) op(B) + beta C (C strides crs, ccs). */
static opara_result opara__lower_push_sgemm(opara__lower_walk* w, int32_t a, int32_t b, int32_t c, int32_t y, int64_t M, int64_t N,
                                      int64_t K, int ta, int tb, float alpha, float beta, int64_t crs, int64_t ccs,
                                      int64_t batch, int64_t sa, int64_t sb, int64_t sy, int act) {
    opara__cuda_launch* L;
    if (M > INT32_MAX || N > INT32_MAX || K > INT32_MAX || batch > 65535) {
        char what[160];
        opara__format(what, sizeof what, "GEMM of M %lld, N %lld, K %lld, batch %lld (at most 2^31 - 1 and a batch of 65535)",
                      (long long)M, (long long)N, (long long)K, (long long)batch);
        return opara__lower_fail(w, OPARA_ERR_LIMIT_EXCEEDED, what);
    }
    if (M == 0 || N == 0 || batch == 0) return OPARA_OK;
    if (!(L = opara__lower_launch(w, OPARA__CUK_SGEMM))) return OPARA_ERR_OUT_OF_MEMORY;
    opara__lower_arg_tensor(L, a), opara__lower_arg_tensor(L, b), opara__lower_arg_tensor(L, c), opara__lower_arg_tensor(L, y);
    opara__lower_arg_i32(L, M), opara__lower_arg_i32(L, N), opara__lower_arg_i32(L, K), opara__lower_arg_i32(L, ta), opara__lower_arg_i32(L, tb);
    opara__lower_arg_f32(L, alpha), opara__lower_arg_f32(L, beta), opara__lower_arg_i32(L, crs), opara__lower_arg_i32(L, ccs);
    opara__lower_arg_i32(L, act), opara__lower_arg_f32(L, 0.0f), opara__lower_arg_f32(L, 0.0f);
    opara__lower_arg_i64(L, sa), opara__lower_arg_i64(L, sb), opara__lower_arg_i64(L, sy);
    L->grid[0] = (uint32_t)((N + 15) / 16);
    L->grid[1] = (uint32_t)((M + 15) / 16);
    L->grid[2] = (uint32_t)batch;
    L->block[0] = 16, L->block[1] = 16;
    if (!w->low->use_cublas) return OPARA_OK;
    /* cuBLAS computes alpha op(A) op(B); C and the activation join in our epilogue kernel */
    L->type = OPARA__CULAUNCH_CUBLAS;
    if (c < 0 && act == OPARA__CUDA_ACT_NONE) return OPARA_OK;
    if (batch != 1) return opara__lower_fail(w, OPARA_ERR_UNSUPPORTED, "batched GEMM with C");
    if (opara__lower_check_elems(w, M * N) != OPARA_OK) return OPARA_ERR_LIMIT_EXCEEDED;
    if (!(L = opara__lower_launch(w, OPARA__CUK_BIAS_ACT))) return OPARA_ERR_OUT_OF_MEMORY;
    opara__lower_arg_tensor(L, y), opara__lower_arg_tensor(L, c);
    opara__lower_arg_i32(L, M * N), opara__lower_arg_i32(L, N), opara__lower_arg_i32(L, crs), opara__lower_arg_i32(L, ccs);
    opara__lower_arg_f32(L, beta), opara__lower_arg_i32(L, act), opara__lower_arg_f32(L, 0.0f), opara__lower_arg_f32(L, 0.0f);
    opara__lower_grid_1d(L, M * N);
    return OPARA_OK;
}

static opara_result opara__lower_gemm(opara__lower_walk* w) {
    const opara__gemm_params* g = &w->params[w->node].u.gemm;
    const opara__shape *a = opara__lower_in_shape(w, 0), *b = opara__lower_in_shape(w, 1), *y = opara__lower_out_shape(w, 0);
    int ta = g->trans_a, tb = g->trans_b, act = opara__lower_fused_act(g->activation);
    int64_t M = y->dims[0], N = y->dims[1], K = ta ? a->dims[0] : a->dims[1], crs = 0, ccs = 0;
    int32_t c = opara__lower_in(w, 2);
    if (!w->params[w->node].resolved || a->ndim != 2 || b->ndim != 2 || y->ndim != 2)
        return opara__lower_fail(w, OPARA_ERR_SHAPE, "Gemm needs 2-D A and B");
    if (c >= 0) {
        const opara__shape* cs = &w->shapes[c];
        int64_t st[2];
        if (!opara__broadcast_to(y, cs, st)) return opara__lower_fail(w, OPARA_ERR_SHAPE, "C does not broadcast to [M, N]");
        crs = st[0], ccs = st[1];
    }
    if (act < 0) return opara__lower_fail(w, OPARA_ERR_UNSUPPORTED, "fused activation");
    return opara__lower_push_sgemm(w, opara__lower_in(w, 0), opara__lower_in(w, 1), c, opara__lower_out(w, 0), M, N, K, ta, tb,
                             g->alpha, g->beta, crs, ccs, 1, 0, 0, 0, act);
}

/* MatMul with numpy semantics: 1-D operands are promoted, batch dims broadcast. The batch is one
   flattened dim per operand: each operand's batch must equal the output's or be all ones. */
static opara_result opara__lower_matmul(opara__lower_walk* w) {
    const opara__shape *a = opara__lower_in_shape(w, 0), *b = opara__lower_in_shape(w, 1), *y = opara__lower_out_shape(w, 0);
    int64_t M = a->ndim >= 2 ? a->dims[a->ndim - 2] : 1, K = a->dims[a->ndim - 1];
    int64_t N = b->ndim >= 2 ? b->dims[b->ndim - 1] : 1, batch = 1, ab = 1, bb = 1;
    int32_t d;
    if (a->ndim < 1 || b->ndim < 1) return opara__lower_fail(w, OPARA_ERR_SHAPE, "MatMul of a scalar");
    for (d = 0; d < a->ndim - 2; ++d) ab *= a->dims[d];
    for (d = 0; d < b->ndim - 2; ++d) bb *= b->dims[d];
    batch = M * N > 0 ? opara__lower_numel(y) / (M * N) : 0;
    if ((ab != batch && ab != 1) || (bb != batch && bb != 1))
        return opara__lower_fail(w, OPARA_ERR_UNSUPPORTED, "MatMul batch broadcast across several dims");
    return opara__lower_push_sgemm(w, opara__lower_in(w, 0), opara__lower_in(w, 1), -1, opara__lower_out(w, 0), M, N, K, 0, 0, 1.0f, 0.0f, 0, 0,
                             batch, ab == 1 ? 0 : M * K, bb == 1 ? 0 : K * N, M * N, OPARA__CUDA_ACT_NONE);
}

/* ---- limits ------------------------------------------------------------------------------------ */

/* What the node's kernel launches (from launch `first` on) must respect, whatever each lowering
   function checked: every 32-bit int argument fits, the grid and block are within the device
   limits, and every tensor a kernel touches has at most OPARA__CUDA_MAX_ELEMS elements. Library
   calls (cuBLAS, cuDNN) and device copies keep their own limits. */
static opara_result opara__lower_check_launches(opara__lower_walk* w, uint32_t first) {
    const opara__cuda_lowering* low = w->low;
    char what[192];
    uint32_t i, a;
    for (i = first; i < low->n_launches; ++i) {
        const opara__cuda_launch* L = &low->launches[i];
        const char* k = opara__cuda_kernel_name((opara__cuda_kernel)L->kernel);
        uint64_t threads = (uint64_t)L->block[0] * L->block[1] * L->block[2];
        if (L->type != OPARA__CULAUNCH_KERNEL) continue;
        if (L->arg_overflow) {
            opara__format(what, sizeof what, "argument %u of %s exceeds a 32-bit int", L->arg_overflow - 1, k);
            return opara__lower_fail(w, OPARA_ERR_LIMIT_EXCEEDED, what);
        }
        if (L->grid[0] < 1 || L->grid[0] > OPARA__CUDA_GRID_X_MAX || L->grid[1] < 1 || L->grid[1] > OPARA__CUDA_GRID_YZ_MAX ||
            L->grid[2] < 1 || L->grid[2] > OPARA__CUDA_GRID_YZ_MAX || threads < 1 || threads > 1024 || L->block[2] > 64) {
            opara__format(what, sizeof what, "%s grid (%u, %u, %u) x block (%u, %u, %u) exceeds the launch limits (grid y, z <= 65535)",
                          k, L->grid[0], L->grid[1], L->grid[2], L->block[0], L->block[1], L->block[2]);
            return opara__lower_fail(w, OPARA_ERR_LIMIT_EXCEEDED, what);
        }
        for (a = 0; a < L->n_args; ++a)
            if (L->args[a].kind == OPARA__CUARG_TENSOR && opara__lower_check_value(w, L->args[a].ref, k) != OPARA_OK)
                return OPARA_ERR_LIMIT_EXCEEDED;
    }
    return OPARA_OK;
}

/* ---- dispatch ---------------------------------------------------------------------------------- */

static opara_result opara__lower_node(opara__lower_walk* w) {
    const opara__node* n = &w->g->nodes[w->node];
    const opara__activation_params* act = &w->params[w->node].u.activation; /* the unary ops' attributes */
    switch (n->op) {
    case OPARA__OP_CONV: return opara__lower_conv(w, 0);
    case OPARA__OP_CONV_TRANSPOSE: return opara__lower_conv(w, 1);
    case OPARA__OP_QUANTIZE_LINEAR: return opara__lower_quantize(w, 1);
    case OPARA__OP_DEQUANTIZE_LINEAR: return opara__lower_quantize(w, 0);
    case OPARA__OP_DYNAMIC_QUANTIZE_LINEAR: return opara__lower_dynamic_quantize(w);
    case OPARA__OP_CONV_INTEGER: case OPARA__OP_MATMUL_INTEGER: case OPARA__OP_QLINEAR_CONV: case OPARA__OP_QLINEAR_MATMUL:
        break; /* CPU only (docs/CUDA-BACKEND.md) */
    case OPARA__OP_MAX_POOL: return opara__lower_pool(w, 1);
    case OPARA__OP_AVERAGE_POOL: return opara__lower_pool(w, 0);
    case OPARA__OP_GLOBAL_AVERAGE_POOL: return opara__lower_global_avg(w);
    case OPARA__OP_BATCH_NORM: return opara__lower_batch_norm(w);
    case OPARA__OP_PRELU: return opara__lower_prelu(w);
    case OPARA__OP_INSTANCE_NORM: return opara__lower_group_norm(w, 0);
    case OPARA__OP_LRN: return opara__lower_lrn(w);
    case OPARA__OP_MVN: return opara__lower_group_norm(w, 1);
    case OPARA__OP_SHRINK: return opara__lower_shrink(w);
    case OPARA__OP_GLOBAL_MAX_POOL: return opara__lower_global_max(w);
    case OPARA__OP_MAX_UNPOOL: return opara__lower_max_unpool(w);
    case OPARA__OP_DROPOUT: return opara__lower_dropout(w);
    case OPARA__OP_EINSUM: break; /* CPU only (docs/CUDA-BACKEND.md) */
    case OPARA__OP_RELU: return opara__lower_unary(w, OPARA__CUDA_ACT_RELU, 0, 0);
    case OPARA__OP_LEAKY_RELU: return opara__lower_unary(w, OPARA__CUDA_ACT_LEAKY_RELU, act->alpha, 0);
    case OPARA__OP_SIGMOID: return opara__lower_unary(w, OPARA__CUDA_ACT_SIGMOID, 0, 0);
    case OPARA__OP_TANH: return opara__lower_unary(w, OPARA__CUDA_ACT_TANH, 0, 0);
    case OPARA__OP_HARD_SIGMOID:
        return opara__lower_unary(w, OPARA__CUDA_ACT_HARD_SIGMOID, act->alpha, act->beta);
    case OPARA__OP_HARD_SWISH: return opara__lower_unary(w, OPARA__CUDA_ACT_HARD_SWISH, 0, 0);
    case OPARA__OP_CLIP:
        return opara__lower_unary(w, OPARA__CUDA_ACT_CLIP, act->min, act->max);
    case OPARA__OP_SQRT: return opara__lower_unary(w, OPARA__CUDA_ACT_SQRT, 0, 0);
    case OPARA__OP_ERF: return opara__lower_unary(w, OPARA__CUDA_ACT_ERF, 0, 0);
    case OPARA__OP_GELU:
        return opara__lower_unary(w, act->gelu_tanh ? OPARA__CUDA_ACT_GELU_TANH : OPARA__CUDA_ACT_GELU, 0, 0);
    case OPARA__OP_NEG: return opara__lower_math(w, OPARA__CUDA_MATH_NEG, 0, 0);
    case OPARA__OP_ABS: return opara__lower_math(w, OPARA__CUDA_MATH_ABS, 0, 0);
    case OPARA__OP_EXP: return opara__lower_math(w, OPARA__CUDA_MATH_EXP, 0, 0);
    case OPARA__OP_LOG: return opara__lower_math(w, OPARA__CUDA_MATH_LOG, 0, 0);
    case OPARA__OP_RECIPROCAL: return opara__lower_math(w, OPARA__CUDA_MATH_RECIPROCAL, 0, 0);
    case OPARA__OP_FLOOR: return opara__lower_math(w, OPARA__CUDA_MATH_FLOOR, 0, 0);
    case OPARA__OP_CEIL: return opara__lower_math(w, OPARA__CUDA_MATH_CEIL, 0, 0);
    case OPARA__OP_ROUND: return opara__lower_math(w, OPARA__CUDA_MATH_ROUND, 0, 0);
    case OPARA__OP_SIGN: return opara__lower_math(w, OPARA__CUDA_MATH_SIGN, 0, 0);
    case OPARA__OP_SIN: return opara__lower_math(w, OPARA__CUDA_MATH_SIN, 0, 0);
    case OPARA__OP_COS: return opara__lower_math(w, OPARA__CUDA_MATH_COS, 0, 0);
    case OPARA__OP_TAN: return opara__lower_math(w, OPARA__CUDA_MATH_TAN, 0, 0);
    case OPARA__OP_SOFTPLUS: return opara__lower_math(w, OPARA__CUDA_MATH_SOFTPLUS, 0, 0);
    case OPARA__OP_SOFTSIGN: return opara__lower_math(w, OPARA__CUDA_MATH_SOFTSIGN, 0, 0);
    case OPARA__OP_ELU: return opara__lower_math(w, OPARA__CUDA_MATH_ELU, act->alpha, 0);
    case OPARA__OP_SELU: return opara__lower_math(w, OPARA__CUDA_MATH_SELU, act->alpha, act->gamma);
    case OPARA__OP_CELU: return opara__lower_math(w, OPARA__CUDA_MATH_CELU, act->alpha, 0);
    case OPARA__OP_THRESHOLDED_RELU: return opara__lower_math(w, OPARA__CUDA_MATH_THRESHOLDED_RELU, act->alpha, 0);
    case OPARA__OP_ASIN: return opara__lower_math(w, OPARA__CUDA_MATH_ASIN, 0, 0);
    case OPARA__OP_ACOS: return opara__lower_math(w, OPARA__CUDA_MATH_ACOS, 0, 0);
    case OPARA__OP_ATAN: return opara__lower_math(w, OPARA__CUDA_MATH_ATAN, 0, 0);
    case OPARA__OP_SINH: return opara__lower_math(w, OPARA__CUDA_MATH_SINH, 0, 0);
    case OPARA__OP_COSH: return opara__lower_math(w, OPARA__CUDA_MATH_COSH, 0, 0);
    case OPARA__OP_ASINH: return opara__lower_math(w, OPARA__CUDA_MATH_ASINH, 0, 0);
    case OPARA__OP_ACOSH: return opara__lower_math(w, OPARA__CUDA_MATH_ACOSH, 0, 0);
    case OPARA__OP_ATANH: return opara__lower_math(w, OPARA__CUDA_MATH_ATANH, 0, 0);
    case OPARA__OP_ADD: return opara__lower_binary(w, OPARA__CUDA_BIN_ADD);
    case OPARA__OP_SUB: return opara__lower_binary(w, OPARA__CUDA_BIN_SUB);
    case OPARA__OP_MUL: return opara__lower_binary(w, OPARA__CUDA_BIN_MUL);
    case OPARA__OP_DIV: return opara__lower_binary(w, OPARA__CUDA_BIN_DIV);
    case OPARA__OP_POW: return opara__lower_binary(w, OPARA__CUDA_BIN_POW);
    case OPARA__OP_EQUAL: return opara__lower_logic_binary(w, OPARA__CUDA_LOGIC_EQUAL);
    case OPARA__OP_GREATER: return opara__lower_logic_binary(w, OPARA__CUDA_LOGIC_GREATER);
    case OPARA__OP_LESS: return opara__lower_logic_binary(w, OPARA__CUDA_LOGIC_LESS);
    case OPARA__OP_GREATER_OR_EQUAL: return opara__lower_logic_binary(w, OPARA__CUDA_LOGIC_GREATER_EQUAL);
    case OPARA__OP_LESS_OR_EQUAL: return opara__lower_logic_binary(w, OPARA__CUDA_LOGIC_LESS_EQUAL);
    case OPARA__OP_AND: return opara__lower_logic_binary(w, OPARA__CUDA_LOGIC_AND);
    case OPARA__OP_OR: return opara__lower_logic_binary(w, OPARA__CUDA_LOGIC_OR);
    case OPARA__OP_XOR: return opara__lower_logic_binary(w, OPARA__CUDA_LOGIC_XOR);
    case OPARA__OP_MOD: return opara__lower_logic_binary(w, OPARA__CUDA_LOGIC_MOD);
    case OPARA__OP_BIT_SHIFT: return opara__lower_logic_binary(w, OPARA__CUDA_LOGIC_SHIFT_LEFT);
    case OPARA__OP_NOT: return opara__lower_logic_unary(w, OPARA__CUDA_NOT);
    case OPARA__OP_IS_NAN: return opara__lower_logic_unary(w, OPARA__CUDA_IS_NAN);
    case OPARA__OP_IS_INF: return opara__lower_logic_unary(w, OPARA__CUDA_IS_INF);
    case OPARA__OP_MAX: return opara__lower_variadic(w, OPARA__CUDA_VAR_MAX);
    case OPARA__OP_MIN: return opara__lower_variadic(w, OPARA__CUDA_VAR_MIN);
    case OPARA__OP_MEAN: return opara__lower_variadic(w, OPARA__CUDA_VAR_MEAN);
    case OPARA__OP_SUM: return opara__lower_variadic(w, OPARA__CUDA_VAR_SUM);
    case OPARA__OP_CONCAT: return opara__lower_concat_split(w, 1);
    case OPARA__OP_SPLIT: return opara__lower_concat_split(w, 0);
    case OPARA__OP_SLICE: return opara__lower_slice(w);
    case OPARA__OP_GATHER: return opara__lower_gather(w);
    case OPARA__OP_GATHER_ELEMENTS: case OPARA__OP_SCATTER_ELEMENTS: case OPARA__OP_SCATTER: return opara__lower_elements(w);
    case OPARA__OP_GATHER_ND: case OPARA__OP_SCATTER_ND: return opara__lower_nd(w);
    case OPARA__OP_SIZE: return opara__lower_size(w);
    case OPARA__OP_TRILU: case OPARA__OP_EYE_LIKE: return opara__lower_trilu_eye(w);
    case OPARA__OP_TILE: return opara__lower_tile(w);
    case OPARA__OP_DEPTH_TO_SPACE: case OPARA__OP_SPACE_TO_DEPTH: return opara__lower_depth_space(w);
    case OPARA__OP_ONE_HOT: return opara__lower_one_hot(w);
    case OPARA__OP_REVERSE_SEQUENCE: return opara__lower_reverse_sequence(w);
    case OPARA__OP_RESHAPE: case OPARA__OP_FLATTEN: case OPARA__OP_SQUEEZE: case OPARA__OP_UNSQUEEZE:
        return opara__lower_view(w);
    case OPARA__OP_TRANSPOSE: return opara__lower_transpose(w);
    case OPARA__OP_EXPAND: return opara__lower_expand(w);
    case OPARA__OP_GEMM: return opara__lower_gemm(w);
    case OPARA__OP_LSTM: case OPARA__OP_GRU: case OPARA__OP_RNN: break; /* CPU-only (docs/CUDA-BACKEND.md) */
    case OPARA__OP_MATMUL: return opara__lower_matmul(w);
    case OPARA__OP_SOFTMAX: return opara__lower_softmax(w);
    case OPARA__OP_LAYER_NORM: return opara__lower_layer_norm(w);
    case OPARA__OP_REDUCE_MEAN: OPARA__CASE_REDUCE_KINDS: return opara__lower_reduce_axes(w);
    case OPARA__OP_ARG_MAX: case OPARA__OP_ARG_MIN: return opara__lower_axis_scan(w, OPARA__CUK_ARG_REDUCE);
    case OPARA__OP_LOG_SOFTMAX: return opara__lower_log_softmax(w);
    case OPARA__OP_HARDMAX: return opara__lower_axis_scan(w, OPARA__CUK_HARDMAX);
    case OPARA__OP_CUM_SUM: return opara__lower_axis_scan(w, OPARA__CUK_CUM_SUM);
    case OPARA__OP_WHERE: return opara__lower_where(w);
    case OPARA__OP_CAST: return opara__lower_cast(w);
    case OPARA__OP_PAD: return opara__lower_pad(w);
    case OPARA__OP_RESIZE: return opara__lower_resize(w);
    case OPARA__OP_TOPK: case OPARA__OP_GRID_SAMPLE: case OPARA__OP_DET: /* CPU-only: docs/CUDA-BACKEND.md */
    case OPARA__OP_COUNT: break;
    }
    return opara__lower_fail(w, OPARA_ERR_UNSUPPORTED_OP, "operator not supported by the CUDA backend");
}

OPARA__PRIVATE opara_result opara__cuda_lower(opara_runtime* rt, const opara__graph* g, const opara__shape* shapes,
                                             const opara__node_params* params, const opara_dtype* dtypes,
                                             opara__cuda_lowering* low) {
    opara__lower_walk w;
    uint32_t i;
    opara_result r = OPARA_OK;
    opara__cuda_lowering keep = *low; /* the caller's choices */
    memset(low, 0, sizeof *low);
    low->use_cublas = keep.use_cublas;
    low->tf32 = keep.tf32;
    low->dnn = keep.dnn;
    low->dnn_handle = keep.dnn_handle;
    low->logger = keep.logger ? keep.logger : &rt->logger;
    low->node_start = (uint32_t*)opara__calloc(rt, (size_t)g->n_nodes + 1, sizeof(uint32_t));
    if (!low->node_start)
        return opara__fail_to(&rt->error, low->logger, OPARA_ERR_OUT_OF_MEMORY, "CUDA backend: out of memory");
    w.rt = rt, w.g = g, w.shapes = shapes, w.params = params, w.dtypes = dtypes, w.low = low;
    for (i = 0; i < g->n_nodes && r == OPARA_OK; ++i) {
        w.node = i;
        low->node_start[i] = low->n_launches;
        r = opara__lower_node(&w);
        if (r == OPARA_OK) r = opara__lower_check_launches(&w, low->node_start[i]);
        if (r == OPARA_ERR_OUT_OF_MEMORY)
            opara__fail_to(&rt->error, low->logger, r, "CUDA backend: out of memory while lowering node %u", i);
    }
    low->node_start[g->n_nodes] = low->n_launches;
    if (r != OPARA_OK) opara__cuda_lowering_free(rt, low);
    return r;
}

OPARA__PRIVATE void opara__cuda_lowering_free(opara_runtime* rt, opara__cuda_lowering* low) {
    uint32_t i;
    for (i = 0; i < low->n_dnn_convs; ++i) opara__cudnn_conv_destroy(low->dnn, &low->dnn_convs[i]);
    opara__free(rt, low->dnn_convs);
    opara__free(rt, low->launches);
    opara__free(rt, low->node_start);
    opara__free(rt, low->meta);
    opara__free(rt, low->aux);
    memset(low, 0, sizeof *low);
}
