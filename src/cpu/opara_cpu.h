/* The CPU backend's kernels: one prepared operator (opara__cpu_op) per graph node, a kernel
   function that runs a range of the operator's work items, and the SGEMM used by Conv, Gemm
   and MatMul (BLAS loaded at run time, or the built-in one).

   Life of an operator: the executor fills node, in/out tensors (shapes from shape inference,
   data pointers into the arena, constants or caller buffers) and blas, then calls
   opara__cpu_prepare once; prepare validates shapes and attributes, fills the parameters, the
   kernel, the number of independent work items and the per-worker scratch the kernel needs.
   At run time any worker may call op->fn(op, begin, end, scratch) on any sub-range of
   [0, work_items); disjoint ranges write disjoint output elements, so several workers can
   share one operator. Kernels never allocate. */
#ifndef OPARA_CPU_H
#define OPARA_CPU_H

#include "../ir/opara_ir.h"
#include "../plan/opara_sched.h"

typedef struct opara__cpu_tensor {
    opara_dtype dtype;
    int32_t ndim;
    int64_t dims[OPARA_MAX_DIMS];
    void* data; /* NULL for an omitted optional input or output */
    int is_const; /* a model constant (or a view of one): the same data in every run */
} opara__cpu_tensor;

/* ---- SGEMM ----------------------------------------------------------------------------------- */

typedef void (*opara__cblas_sgemm_fn)(int order, int trans_a, int trans_b, int m, int n, int k, float alpha,
                                      const float* a, int lda, const float* b, int ldb, float beta, float* c,
                                      int ldc);

typedef struct opara__blas {
    void* lib;                    /* dlopen handle; NULL: the built-in GEMM */
    opara__cblas_sgemm_fn sgemm;  /* cblas_sgemm, or NULL */
    void (*set_threads)(int n);   /* OpenBLAS's openblas_set_num_threads and _get_, or NULL (then */
    int (*get_threads)(void);     /* the library's thread count is left alone) */
    char name[96];                /* "OpenBLAS (libopenblas.so.0)", "BLIS (...)", "MKL (...)", "built-in (...)" */
    char refused[192];            /* "refused libblas.so.3: a reference BLAS (...)", "; "-separated, or "" */
    char summary[300];            /* name, then "; " and the refusals if any: the plan info's gemm */
} opara__blas;

/* Scratch floats the built-in GEMM needs per call (packing buffers). */
#define OPARA__GEMM_MC 120
#define OPARA__GEMM_KC 256
#define OPARA__GEMM_NC 1024
#define OPARA__GEMM_SCRATCH ((size_t)OPARA__GEMM_MC * OPARA__GEMM_KC + (size_t)OPARA__GEMM_KC * OPARA__GEMM_NC + 64)

/* Loads a fast BLAS (OpenBLAS, BLIS or MKL, identified by their own entry points; a library with
   cblas_sgemm and none of them is a reference BLAS, refused) unless use_builtin is set; without one the
   built-in GEMM is used. Never fails: the name says what was chosen, `refused` what was refused and
   why, and `tried` (may be NULL) receives each path tried with its outcome ("libblas.so.3 (refused:
   ...)"). Loading changes nothing in the library. */
OPARA__PRIVATE void opara__blas_load(opara__blas* blas, int use_builtin, char* tried, size_t tried_cap);
/* The same over the given candidates (file names or paths, tried in order; none: the built-in GEMM). */
OPARA__PRIVATE void opara__blas_load_from(opara__blas* blas, const char* const* paths, size_t n_paths, char* tried,
                                          size_t tried_cap);
OPARA__PRIVATE void opara__blas_unload(opara__blas* blas);
/* Brackets a run that may call the BLAS: the executor owns the parallelism, so OpenBLAS runs one
   thread per call while any opara run is in progress (process-wide count: OpenBLAS's thread count is
   process-wide), and the host's setting is put back when the last such run ends. */
OPARA__PRIVATE void opara__blas_run_enter(const opara__blas* blas);
OPARA__PRIVATE void opara__blas_run_leave(const opara__blas* blas);

/* Row-major C[m,n] = alpha * op(A)[m,k] * op(B)[k,n] + beta * C (beta 0: C is not read).
   op(A) = A when trans_a is 0 (A is m x k, row stride lda), else A^T (A is k x m). Uses the
   BLAS when loaded (and sizes fit an int), else the built-in SGEMM with `scratch`
   (OPARA__GEMM_SCRATCH floats). */
OPARA__PRIVATE void opara__sgemm(const opara__blas* blas, int trans_a, int trans_b, size_t m, size_t n, size_t k,
                                 float alpha, const float* a, size_t lda, const float* b, size_t ldb, float beta,
                                 float* c, size_t ldc, float* scratch);

/* What follows the product, applied once to each output as it is stored (the built-in GEMM's
   micro-kernels do it in registers; with an external BLAS it is a pass over C): a bias per row
   (row_bias[i]) and one per column (col_bias[j]), then ReLU (NaN stays NaN). NULL members: none. */
typedef struct opara__gemm_epilogue {
    const float* row_bias;
    const float* col_bias;
    int relu;
} opara__gemm_epilogue;

/* op(B) packed once (constant weights, at session creation) into the built-in GEMM's panels: for
   each block of OPARA__GEMM_KC rows starting at row pc (kc rows, fewer in the last), np columns (n
   rounded up to nr, the padding zero) in strips of nr, strip s at data + pc * np + s * nr * kc. A
   call whose B starts at column col0 of op(B) (a multiple of nr) reads its panels from there. */
typedef struct opara__gemm_packed {
    const float* data;
    size_t np, nr, col0;
} opara__gemm_packed;

/* The strip width the built-in GEMM packs B to on this CPU (OPARA_CPU_ISA applied), the floats
   op(B) of k x n takes packed to width nr, and the packing itself into dst. */
OPARA__PRIVATE size_t opara__gemm_pack_width(void);
OPARA__PRIVATE size_t opara__gemm_packed_floats(size_t k, size_t n, size_t nr);
OPARA__PRIVATE void opara__gemm_pack_b_all(int trans_b, const float* b, size_t ldb, size_t k, size_t n, size_t nr,
                                           float* dst);

/* opara__sgemm and the built-in SGEMM with an epilogue (epi may be NULL) and, for the built-in
   GEMM, B already packed (packed may be NULL; it is ignored when packed for another width, and b
   must be valid in any case: an external BLAS and the one-row path read it). */
OPARA__PRIVATE void opara__sgemm_ex(const opara__blas* blas, int trans_a, int trans_b, size_t m, size_t n, size_t k,
                                    float alpha, const float* a, size_t lda, const float* b, size_t ldb, float beta,
                                    float* c, size_t ldc, float* scratch, const opara__gemm_epilogue* epi,
                                    const opara__gemm_packed* packed);
OPARA__PRIVATE_TOOL void opara__sgemm_builtin_ex(int trans_a, int trans_b, size_t m, size_t n, size_t k, float alpha,
                                            const float* a, size_t lda, const float* b, size_t ldb, float beta, float* c,
                                            size_t ldc, float* scratch, const opara__gemm_epilogue* epi);
/* The widest vector code this CPU runs, capped by OPARA_CPU_ISA (avx2 or neon: 1, portable: 0): on
   x86 2 AVX-512F, 1 AVX2+FMA, 0 portable; on aarch64 1 NEON (every aarch64 CPU has it), 0 portable. */
OPARA__PRIVATE int opara__cpu_isa_level(void);
/* y[i] = a[i * a_step] op b[i * b_step], op by kind (0 +, 1 -, 2 *, 3 /), steps 0 or 1, vectors of
   the given level. */
OPARA__PRIVATE void opara__vec_binary_f32(int level, int kind, const float* a, int a_step, const float* b, int b_step,
                                          float* y, size_t n);
/* y = min(max(x, lo), hi) (lo > hi gives hi), NaN kept, vectors of the given level. */
OPARA__PRIVATE void opara__vec_clip(int level, float* y, const float* x, size_t n, float lo, float hi);
/* Which micro-kernel the built-in GEMM uses on this CPU ("avx512", "avx2+fma", "neon" or "portable";
   OPARA_CPU_ISA=avx2 or =portable caps it). */
OPARA__PRIVATE const char* opara__sgemm_builtin_kind(void);

/* Vector transcendental functions (opara_cpu_math.c; y may be x): exp, erf and the logistic
   sigmoid, a few ulp from libm's, NaN kept; the Softmax of a contiguous row (y = exp(x - max) /
   sum); the mean and variance of a row in double (LayerNormalization). */
OPARA__PRIVATE void opara__vec_exp(int level, float* y, const float* x, size_t n);
OPARA__PRIVATE void opara__vec_erf(int level, float* y, const float* x, size_t n);
OPARA__PRIVATE void opara__vec_sigmoid(int level, float* y, const float* x, size_t n);
OPARA__PRIVATE void opara__softmax_row(int level, float* y, const float* x, size_t n);
OPARA__PRIVATE void opara__row_moments(int level, const float* x, size_t n, double* mean, double* var);
/* Sum of a row (the vector paths in several partial sums). */
OPARA__PRIVATE float opara__vec_sum(int level, const float* x, size_t n);

/* max(acc, v) as ONNX Runtime computes it: a NaN in either operand gives NaN (C's fmaxf and the
   SSE/AVX max instructions drop one side's NaN instead). */
static OPARA__UNUSED float opara__max_nan(float acc, float v) { return v > acc || v != v ? v : acc; }
/* min(acc, v) with the same NaN rule. */
static OPARA__UNUSED float opara__min_nan(float acc, float v) { return v < acc || v != v ? v : acc; }
/* The same for doubles. */
static OPARA__UNUSED double opara__max_nan_d(double acc, double v) { return v > acc || v != v ? v : acc; }
static OPARA__UNUSED double opara__min_nan_d(double acc, double v) { return v < acc || v != v ? v : acc; }

/* The bit mask of the first `lanes` of 16 (none for lanes <= 0, all from 16 on): the AVX-512 loops'
   masked tails and edge tiles. */
static OPARA__UNUSED unsigned opara__lanes16(int64_t lanes) {
    return lanes <= 0 ? 0u : lanes >= 16 ? 0xFFFFu : (1u << lanes) - 1u;
}

/* Row helpers of the kernels (SSE2 where available; `level` as opara__cpu_isa_level): fill with v;
   y = ReLU(x) (NaN stays NaN, y may be x); d = max(d, s) (NaN-propagating), d += s and d += w * s
   over n elements of s taken every `stride`; the max or sum of `taps` elements `pitch` apart
   (pool windows); a plain copy. */
OPARA__PRIVATE void opara__vec_fill(float* d, size_t n, float v);
OPARA__PRIVATE void opara__vec_relu(float* y, const float* x, size_t n);
OPARA__PRIVATE void opara__vec_axpy(float* d, const float* s, size_t stride, size_t n, float w);
OPARA__PRIVATE void opara__vec_taps(float* d, const float* s, size_t stride, size_t n, const float* w, size_t taps,
                                    size_t dil);
OPARA__PRIVATE void opara__vec_window(int level, float* d, const float* s, size_t n, size_t taps, size_t pitch,
                                      int is_max);
OPARA__PRIVATE void opara__vec_copy(int level, float* d, const float* s, size_t n);
OPARA__PRIVATE void opara__vec_copy_even(float* d, const float* s, size_t n);
OPARA__PRIVATE void opara__vec_max_into(float* d, const float* s, size_t stride, size_t n);
OPARA__PRIVATE void opara__vec_min_into(float* d, const float* s, size_t n);
OPARA__PRIVATE void opara__vec_add_into(float* d, const float* s, size_t stride, size_t n);

/* ---- prepared operators ---------------------------------------------------------------------- */

typedef struct opara__cpu_op opara__cpu_op;

/* Runs work items [begin, end). Returns OPARA_OK or an error (e.g. an index out of range). */
typedef opara_result (*opara__cpu_kernel_fn)(const opara__cpu_op* op, size_t begin, size_t end, float* scratch);

#define OPARA__BCAST_MAX_IN 3

/* The functions of the unary kernel (opara__cpu_prepare maps each operator to one). */
typedef enum opara__cpu_unary {
    OPARA__UN_RELU, OPARA__UN_LEAKY_RELU, OPARA__UN_SIGMOID, OPARA__UN_TANH, OPARA__UN_HARD_SIGMOID,
    OPARA__UN_HARD_SWISH, OPARA__UN_CLIP, OPARA__UN_SQRT, OPARA__UN_ERF, OPARA__UN_GELU,
    /* the math operators (opara__unary_math) */
    OPARA__UN_NEG, OPARA__UN_ABS, OPARA__UN_EXP, OPARA__UN_LOG, OPARA__UN_RECIPROCAL, OPARA__UN_FLOOR,
    OPARA__UN_CEIL, OPARA__UN_ROUND, OPARA__UN_SIGN, OPARA__UN_SIN, OPARA__UN_COS, OPARA__UN_TAN, OPARA__UN_SOFTPLUS,
    OPARA__UN_SOFTSIGN, OPARA__UN_ELU, OPARA__UN_SELU, OPARA__UN_CELU, OPARA__UN_THRESHOLDED_RELU, OPARA__UN_ASIN,
    OPARA__UN_ACOS, OPARA__UN_ATAN, OPARA__UN_SINH, OPARA__UN_COSH, OPARA__UN_ASINH, OPARA__UN_ACOSH, OPARA__UN_ATANH,
    OPARA__UN_SHRINK /* alpha: lambd, beta: bias */
} opara__cpu_unary;

/* The functions of the binary kernel; ADD..DIV are opara__vec_binary_f32's kinds 0..3. */
typedef enum opara__cpu_binary {
    OPARA__BIN_ADD, OPARA__BIN_SUB, OPARA__BIN_MUL, OPARA__BIN_DIV, OPARA__BIN_POW,
    OPARA__BIN_PRELU /* x < 0 ? x * slope : x */
} opara__cpu_binary;

#define OPARA__CHUNK 16384 /* elements per work item of element-wise kernels */

/* Parameters derived at prepare time; each kernel uses the fields it needs. */
typedef struct opara__cpu_params {
    /* Conv, ConvTranspose, pools: spatial dims normalized to 3 (leading dims of size 1). */
    int64_t batch, cin, cout, group;
    int64_t in_sp[3], out_sp[3], kernel[3], stride[3], dil[3], pad_b[3], pad_e[3];
    int64_t col_block, n_col_blocks;
    int relu, depthwise, pointwise, count_include_pad, storage_order;
    /* scalars */
    float alpha, beta, lo, hi, eps, value;
    int64_t axis, outer, mid, inner, tail;
    int trans_a, trans_b, approx;
    /* broadcasting (collapsed): out dims and per-input element strides (0 = broadcast) */
    int32_t bc_ndim;
    int64_t bc_dims[OPARA_MAX_DIMS];
    int64_t bc_strides[OPARA__BCAST_MAX_IN][OPARA_MAX_DIMS];
    /* generic per-dimension tables (Slice, Transpose, Pad, Resize, Gemm/MatMul blocking) */
    int64_t start[OPARA_MAX_DIMS], step[OPARA_MAX_DIMS], src_stride[OPARA_MAX_DIMS];
    float scale[OPARA_MAX_DIMS], roi_lo[OPARA_MAX_DIMS], roi_hi[OPARA_MAX_DIMS];
    int mode, coord_mode, nearest_mode;
    int fn;                /* the unary or binary kernel's function (opara_cpu_elementwise.c) */
    opara__fused_act act;  /* the binary kernel's activation after the op (f32 Add, Sub, Mul, Div) */
    int64_t m, n, k, m_blocks, n_blocks, a_batch_stride[OPARA_MAX_DIMS], b_batch_stride[OPARA_MAX_DIMS];
    int64_t base;          /* element offset of the first source element (Slice) */
    uint8_t fill[8];       /* Pad's constant in the output dtype */
    int32_t kept_n, red_n; /* ReduceMean ..: kept and reduced groups of input dims with their input strides */
    int64_t kept_dims[OPARA_MAX_DIMS], kept_strides[OPARA_MAX_DIMS];
    int64_t red_dims[OPARA_MAX_DIMS], red_strides[OPARA_MAX_DIMS];
    size_t elem;           /* element size in bytes for dtype-generic kernels */
    opara__grid_sample_params grid; /* GridSample */
    int select_last;       /* ArgMax, ArgMin: select_last_index */
    int exclusive, reverse; /* CumSum */
} opara__cpu_params;

struct opara__cpu_op {
    const opara__node* node;
    const opara__node_params* params; /* what the shape engine resolved for the node */
    uint32_t n_in, n_out;
    opara__cpu_tensor* in;
    opara__cpu_tensor* out;
    const opara__blas* blas;
    /* filled by opara__cpu_prepare */
    opara__cpu_kernel_fn fn;
    size_t work_items;
    size_t scratch_floats; /* per worker */
    size_t min_items_per_task; /* how many items make a task worth handing to another worker */
    uint32_t workers;      /* set before prepare: the executor's worker count (0: unknown) */
    opara__cpu_params p;
    /* Constant weights transformed once (Gemm/MatMul: B in the GEMM's panels of width packed_nr;
       3x3 Conv: the Winograd transform): unless keep_weights is set (before prepare), prepare asks
       for packed_floats (0: none), the executor allocates `packed` and fills it with
       opara__cpu_pack_weights. When that allocation fails the executor sets keep_weights and
       prepares the op again, which then needs no packed weights. */
    int keep_weights;
    size_t packed_floats, packed_nr;
    float* packed;
};

OPARA__PRIVATE opara_result opara__cpu_prepare(opara__cpu_op* op, char* err, size_t err_cap);
/* Fills op->packed (allocated by the caller with op->packed_floats floats) from the op's
   constant weights. */
OPARA__PRIVATE void opara__cpu_pack_weights(opara__cpu_op* op);
/* 3x3 stride-1 convolutions by Winograd F(2x2, 3x3) (opara_cpu_winograd.c): takes the op (kernel,
   items, scratch, packed weights) and returns 1 where that path serves it, else 0; and the
   weight transform. */
OPARA__PRIVATE int opara__winograd_prepare(opara__cpu_op* op);
OPARA__PRIVATE void opara__winograd_pack(opara__cpu_op* op);
/* After op's kernel failed in a run: what went wrong, found again single-threaded (kernels only
   return a code); leaves buf untouched when the op has nothing to add. */
OPARA__PRIVATE void opara__cpu_explain_error(const opara__cpu_op* op, char* buf, size_t cap);

/* Shared helpers of the kernel files. */
OPARA__PRIVATE opara_result opara__cpu_reject(char* err, size_t cap, opara_result code, const char* fmt, ...)
    OPARA__PRINTF(4, 5);
OPARA__PRIVATE size_t opara__cpu_numel(const opara__cpu_tensor* t);
OPARA__PRIVATE int opara__cpu_same_dims(const opara__cpu_tensor* a, const opara__cpu_tensor* b);
/* Element strides of an input (in_ndim dims) broadcast numpy-style to out dims; 0 where it is
   broadcast. Returns 0 when the shapes are not broadcast-compatible. */
OPARA__PRIVATE int opara__cpu_bcast_strides(int32_t out_ndim, const int64_t* out_dims, int32_t in_ndim,
                                            const int64_t* in_dims, int64_t* strides);
/* The axis the shape engine resolved for the node (normalized), when it is one of the rank's. */
OPARA__PRIVATE int opara__cpu_record_axis(const opara__cpu_op* op, int32_t rank, int64_t* axis);
OPARA__PRIVATE int64_t opara__cpu_dims_prod(const int64_t* dims, int32_t from, int32_t to);
OPARA__PRIVATE void opara__cpu_natural_strides(const opara__cpu_tensor* t, int64_t* strides);
/* The broadcast iteration space (element-wise kernels and strided copies): collapse the dims into
   p->bc_*, then per work item its row, first element and count, and each input's offset of a row. */
OPARA__PRIVATE void opara__cpu_bc_collapse(opara__cpu_params* p, int n_in, int32_t ndim, const int64_t* dims,
                                           int64_t strides[][OPARA_MAX_DIMS]);
OPARA__PRIVATE void opara__cpu_bc_offsets(const opara__cpu_params* p, int n_in, size_t row, int64_t* off);
OPARA__PRIVATE void opara__cpu_bc_item(const opara__cpu_params* p, size_t item, size_t* row, size_t* j0, size_t* n);
/* Cast's conversions, which Pad's fill uses too: the dtypes they take, storing an integer, float to
   integer. */
OPARA__PRIVATE int opara__cpu_cast_type_ok(opara_dtype t);
OPARA__PRIVATE void opara__cpu_store_i(void* base, opara_dtype t, size_t i, int64_t v);
OPARA__PRIVATE int64_t opara__cpu_f_to_i(double v);

/* Conv's window (opara_cpu_conv.c; the integer convolutions share it): the resolved record's spatial
   dims normalized to 3 into p (kernel, when not NULL, must match the weight's), and y's spatial dims
   checked against it. */
OPARA__PRIVATE opara_result opara__conv_geometry(opara__cpu_op* op, const opara__cpu_tensor* x, const int64_t* kernel,
                                                char* err, size_t cap);
OPARA__PRIVATE opara_result opara__conv_check_out(opara__cpu_op* op, const opara__cpu_tensor* y, int ceil_mode, char* err,
                                                 size_t cap);

/* Each kernel file's prepare functions, called by opara__cpu_prepare (opara_cpu_kernels.c). */
OPARA__PRIVATE opara_result opara__cpu_prepare_conv(opara__cpu_op* op, char* err, size_t cap); /* opara_cpu_conv.c */
OPARA__PRIVATE opara_result opara__cpu_prepare_conv_transpose(opara__cpu_op* op, char* err, size_t cap);
OPARA__PRIVATE opara_result opara__cpu_prepare_pool(opara__cpu_op* op, char* err, size_t cap);
OPARA__PRIVATE opara_result opara__cpu_prepare_max_unpool(opara__cpu_op* op, char* err, size_t cap);
OPARA__PRIVATE void opara__max_unpool_explain(const opara__cpu_op* op, char* buf, size_t cap);
OPARA__PRIVATE opara_result opara__cpu_prepare_gemm(opara__cpu_op* op, char* err, size_t cap); /* opara_cpu_gemm.c */
OPARA__PRIVATE opara_result opara__cpu_prepare_matmul(opara__cpu_op* op, char* err, size_t cap);
OPARA__PRIVATE opara_result opara__cpu_matmul_geometry(opara__cpu_op* op, const opara__cpu_tensor* a,
                                                      const opara__cpu_tensor* b, int64_t* batch, char* err, size_t cap);
/* Element offsets of A and B for batch index `batch` (of the product of p->bc_dims). */
OPARA__PRIVATE void opara__cpu_matmul_batch_offsets(const opara__cpu_params* p, size_t batch, int64_t* aoff,
                                                    int64_t* boff);
/* opara_cpu_quant.c: the quantization operators and the integer convolution and matrix product */
OPARA__PRIVATE opara_result opara__cpu_prepare_quantize(opara__cpu_op* op, char* err, size_t cap);
OPARA__PRIVATE opara_result opara__cpu_prepare_dequantize(opara__cpu_op* op, char* err, size_t cap);
OPARA__PRIVATE opara_result opara__cpu_prepare_dynamic_quantize(opara__cpu_op* op, char* err, size_t cap);
OPARA__PRIVATE opara_result opara__cpu_prepare_quant_conv(opara__cpu_op* op, char* err, size_t cap);
OPARA__PRIVATE opara_result opara__cpu_prepare_quant_matmul(opara__cpu_op* op, char* err, size_t cap);
/* LSTM, GRU, RNN: GEMMs on the SGEMM above and the gates in opara_cpu_rnn.c */
OPARA__PRIVATE opara_result opara__cpu_prepare_rnn(opara__cpu_op* op, char* err, size_t cap);
/* Packs a constant R into op->packed (the executor allocated op->packed_floats) for the step GEMMs. */
OPARA__PRIVATE void opara__cpu_rnn_pack(opara__cpu_op* op);
/* A run that failed on its sequence_lens: which length is out of range. */
OPARA__PRIVATE void opara__cpu_rnn_explain(const opara__cpu_op* op, char* buf, size_t cap);
/* opara_cpu_elementwise.c */
OPARA__PRIVATE opara_result opara__cpu_prepare_unary(opara__cpu_op* op, opara__cpu_unary fn, char* err, size_t cap);
OPARA__PRIVATE opara_result opara__cpu_prepare_binary(opara__cpu_op* op, opara__cpu_binary fn, char* err, size_t cap);
OPARA__PRIVATE opara_result opara__cpu_prepare_where(opara__cpu_op* op, char* err, size_t cap);
OPARA__PRIVATE opara_result opara__cpu_prepare_cast(opara__cpu_op* op, char* err, size_t cap);
/* The broadcasting set-up of the element-wise kernels: n_in inputs (at most OPARA__BCAST_MAX_IN) to the
   output with the strides of the node's record, into op->p's collapsed iteration space and work items. */
OPARA__PRIVATE opara_result opara__bc_prepare(opara__cpu_op* op, int n_in, const opara__cpu_tensor* const* ins, char* err,
                                              size_t cap);
/* opara_cpu_logic.c: the comparisons, And/Or/Xor, Mod, BitShift (broadcast binary); Not, IsNaN, IsInf;
   Max, Min, Mean, Sum (variadic) */
OPARA__PRIVATE opara_result opara__cpu_prepare_logic_binary(opara__cpu_op* op, char* err, size_t cap);
OPARA__PRIVATE opara_result opara__cpu_prepare_logic_unary(opara__cpu_op* op, char* err, size_t cap);
OPARA__PRIVATE opara_result opara__cpu_prepare_variadic(opara__cpu_op* op, char* err, size_t cap);
/* Neg, Abs, Sign (fn): f32 through opara__cpu_prepare_unary, f64 and the integer types here. */
OPARA__PRIVATE opara_result opara__cpu_prepare_signed(opara__cpu_op* op, opara__cpu_unary fn, char* err, size_t cap);
/* opara_cpu_movement.c */
OPARA__PRIVATE opara_result opara__cpu_prepare_expand(opara__cpu_op* op, char* err, size_t cap);
OPARA__PRIVATE opara_result opara__cpu_prepare_transpose(opara__cpu_op* op, char* err, size_t cap);
OPARA__PRIVATE opara_result opara__cpu_prepare_slice(opara__cpu_op* op, char* err, size_t cap);
OPARA__PRIVATE opara_result opara__cpu_prepare_reshape(opara__cpu_op* op, char* err, size_t cap);
OPARA__PRIVATE opara_result opara__cpu_prepare_concat_split(opara__cpu_op* op, char* err, size_t cap);
OPARA__PRIVATE opara_result opara__cpu_prepare_gather(opara__cpu_op* op, char* err, size_t cap);
OPARA__PRIVATE opara_result opara__cpu_prepare_dropout(opara__cpu_op* op, char* err, size_t cap);
OPARA__PRIVATE opara_result opara__cpu_prepare_pad(opara__cpu_op* op, char* err, size_t cap);
OPARA__PRIVATE opara_result opara__cpu_prepare_resize(opara__cpu_op* op, char* err, size_t cap);
/* opara_cpu_index.c; opara__cpu_index_explain: the data error of one of its kernels */
OPARA__PRIVATE opara_result opara__cpu_prepare_elements(opara__cpu_op* op, char* err, size_t cap);
OPARA__PRIVATE opara_result opara__cpu_prepare_nd(opara__cpu_op* op, char* err, size_t cap);
OPARA__PRIVATE opara_result opara__cpu_prepare_size(opara__cpu_op* op, char* err, size_t cap);
OPARA__PRIVATE opara_result opara__cpu_prepare_trilu_eye(opara__cpu_op* op, char* err, size_t cap);
OPARA__PRIVATE opara_result opara__cpu_prepare_tile(opara__cpu_op* op, char* err, size_t cap);
OPARA__PRIVATE opara_result opara__cpu_prepare_one_hot(opara__cpu_op* op, char* err, size_t cap);
OPARA__PRIVATE opara_result opara__cpu_prepare_reverse_sequence(opara__cpu_op* op, char* err, size_t cap);
OPARA__PRIVATE void opara__cpu_index_explain(const opara__cpu_op* op, char* buf, size_t cap);
OPARA__PRIVATE opara_result opara__cpu_prepare_depth_space(opara__cpu_op* op, char* err, size_t cap); /* movement.c */
/* opara_cpu_norm.c */
OPARA__PRIVATE opara_result opara__cpu_prepare_layer_norm(opara__cpu_op* op, char* err, size_t cap);
OPARA__PRIVATE opara_result opara__cpu_prepare_batch_norm(opara__cpu_op* op, char* err, size_t cap);
OPARA__PRIVATE opara_result opara__cpu_prepare_instance_norm(opara__cpu_op* op, char* err, size_t cap);
OPARA__PRIVATE opara_result opara__cpu_prepare_lrn(opara__cpu_op* op, char* err, size_t cap);
/* opara_cpu_reduce.c */
OPARA__PRIVATE opara_result opara__cpu_prepare_softmax(opara__cpu_op* op, char* err, size_t cap);
OPARA__PRIVATE opara_result opara__cpu_prepare_topk(opara__cpu_op* op, char* err, size_t cap);
OPARA__PRIVATE opara_result opara__cpu_prepare_grid_sample(opara__cpu_op* op, char* err, size_t cap);
OPARA__PRIVATE opara_result opara__cpu_prepare_det(opara__cpu_op* op, char* err, size_t cap);
OPARA__PRIVATE opara_result opara__cpu_prepare_global_avg(opara__cpu_op* op, char* err, size_t cap);
OPARA__PRIVATE opara_result opara__cpu_prepare_reduce(opara__cpu_op* op, char* err, size_t cap);
OPARA__PRIVATE opara_result opara__cpu_prepare_arg_reduce(opara__cpu_op* op, char* err, size_t cap);
OPARA__PRIVATE opara_result opara__cpu_prepare_log_softmax(opara__cpu_op* op, char* err, size_t cap);
OPARA__PRIVATE opara_result opara__cpu_prepare_cum_sum(opara__cpu_op* op, char* err, size_t cap);
OPARA__PRIVATE opara_result opara__cpu_prepare_mvn(opara__cpu_op* op, char* err, size_t cap);
OPARA__PRIVATE opara_result opara__cpu_prepare_einsum(opara__cpu_op* op, char* err, size_t cap);

/* ---- the executor (opara_backend_cpu.c) ------------------------------------------------------- */

/* A session's CPU side: one prepared operator per node, the arena (one 64-byte aligned block),
   static input buffers, per-worker scratch and the worker threads. A node becomes ready when its
   stream predecessor and the nodes whose events it waits on have finished (dependency counts);
   any free worker takes the ready node with the longest estimated path to the end (streams are
   the unit of ordering, not workers, so any number of streams runs on any number of workers).
   A node with enough work items is cut into chunks that idle workers claim; the worker that
   finishes the last chunk completes the node, so no worker waits for another one. */
typedef struct opara__cpu_exec opara__cpu_exec;

/* Creates the executor for graph g with plan and per-value shapes/dtypes (all borrowed: they must
   outlive the executor). threads: worker count (>= 1, the caller is worker 0); pack_weights: repack
   constant GEMM weights once (opara__cpu_op.packed); pin_workers: each worker thread binds itself to
   one CPU (process-wide round robin over the affinity mask, starting at its second CPU, so that the
   workers of several sessions spread out). On failure the detail is written to err. */
/* The CPU as the planner sees it (the plan is made for it, not for a GPU preset): `cores` workers,
   each with the FMA throughput of the SGEMM's instruction set and 32 bytes a cycle from its caches,
   at a nominal 3 GHz. Presets, not measurements, so a model's plan is the same on every run. */
OPARA__PRIVATE void opara__cpu_device(uint32_t cores, opara__device* dev);
OPARA__PRIVATE opara_result opara__cpu_exec_create(opara_runtime* rt, const opara__graph* g, const opara__plan* plan,
                                                   const opara__shape* shapes, const opara__node_params* params,
                                                   const opara_dtype* dtypes,
                                                   uint32_t threads, int builtin_gemm, int pack_weights,
                                                   int pin_workers, char* err, size_t err_cap, opara__cpu_exec** out);
OPARA__PRIVATE void opara__cpu_exec_destroy(opara__cpu_exec* ex);
/* Where value v lives during a run (graph inputs: their static buffer; outputs: in the arena). */
OPARA__PRIVATE void* opara__cpu_exec_value_data(const opara__cpu_exec* ex, int32_t v);
/* One inference; kernel errors (e.g. a Gather index out of range) are reported after the run. */
OPARA__PRIVATE opara_result opara__cpu_exec_run(opara__cpu_exec* ex, char* err, size_t err_cap);
/* Name of the GEMM in use, worker count, and the last run's per-node times (ns since run start)
   and the worker that ran each node; arrays have one entry per node. */
OPARA__PRIVATE const char* opara__cpu_exec_gemm_name(const opara__cpu_exec* ex);
/* Conv nodes: their count, how many run their GEMM on a loaded BLAS library (0 with the built-in
   SGEMM), and the path in words (opara_cpu_conv.c: 1x1 convolutions as one GEMM, others im2col +
   GEMM, depthwise ones a direct loop; opara_cpu_winograd.c: "N Winograd 3x3 + ..." first when some
   3x3 ones take Winograd; "" without Conv). */
OPARA__PRIVATE void opara__cpu_exec_conv_info(const opara__cpu_exec* ex, uint32_t* n_conv, uint32_t* n_library, char* name,
                                              size_t cap);
OPARA__PRIVATE uint32_t opara__cpu_exec_workers(const opara__cpu_exec* ex);
/* Bytes of constant weights repacked for the GEMM at creation, kept for the session's life. */
OPARA__PRIVATE uint64_t opara__cpu_exec_packed_bytes(const opara__cpu_exec* ex);
OPARA__PRIVATE void opara__cpu_exec_node_times(const opara__cpu_exec* ex, const uint64_t** start, const uint64_t** end,
                                               const uint32_t** worker);

#endif /* OPARA_CPU_H */
