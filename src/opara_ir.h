/* The graph IR: values (tensors), nodes (operators) with typed attributes, graph inputs and
   outputs, and the derived DAG (consumers, predecessors, successors, topological order).
   Everything a graph owns lives in its pool and is freed with it. */
#ifndef OPARA_IR_H
#define OPARA_IR_H

#include "opara_internal.h"

/* X(ENUM_SUFFIX, "OnnxName"): the operators of the IR. Their attributes are in canonical form:
   whatever ONNX allows as either an attribute or a constant input (axes, split sizes, pads,
   Clip bounds, Slice starts/ends/axes/steps, Reshape/Expand shape, Resize scales/sizes) is an
   attribute here; the importer moves it. Names follow ONNX; see docs/FORMAT.md for the table. */
#define OPARA__OPS(X) \
    X(CONV, "Conv") X(CONV_TRANSPOSE, "ConvTranspose") X(MAX_POOL, "MaxPool") X(AVERAGE_POOL, "AveragePool") \
    X(GLOBAL_AVERAGE_POOL, "GlobalAveragePool") X(BATCH_NORM, "BatchNormalization") X(RELU, "Relu") \
    X(LEAKY_RELU, "LeakyRelu") X(SIGMOID, "Sigmoid") X(TANH, "Tanh") X(HARD_SIGMOID, "HardSigmoid") \
    X(HARD_SWISH, "HardSwish") X(CLIP, "Clip") X(ADD, "Add") X(SUB, "Sub") X(MUL, "Mul") X(DIV, "Div") \
    X(POW, "Pow") X(SQRT, "Sqrt") X(ERF, "Erf") X(GELU, "Gelu") X(CONCAT, "Concat") X(SPLIT, "Split") \
    X(SLICE, "Slice") X(GATHER, "Gather") X(RESHAPE, "Reshape") X(FLATTEN, "Flatten") X(TRANSPOSE, "Transpose") \
    X(SQUEEZE, "Squeeze") X(UNSQUEEZE, "Unsqueeze") X(EXPAND, "Expand") X(GEMM, "Gemm") X(MATMUL, "MatMul") \
    X(SOFTMAX, "Softmax") X(LAYER_NORM, "LayerNormalization") X(REDUCE_MEAN, "ReduceMean") X(WHERE, "Where") \
    X(CAST, "Cast") X(PAD, "Pad") X(RESIZE, "Resize")

#define OPARA__OP_ENUM(id, name) OPARA__OP_##id,
typedef enum opara__op { OPARA__OPS(OPARA__OP_ENUM) OPARA__OP_COUNT } opara__op;
#undef OPARA__OP_ENUM

/* The symbolic batch dimension in declared shapes and in shape-valued attributes (Reshape,
   Expand): replaced by the session's batch size. */
#define OPARA__DIM_BATCH (-(INT64_C(1) << 62))

typedef enum opara__attr_type {
    OPARA__ATTR_INT = 1,
    OPARA__ATTR_FLOAT = 2,
    OPARA__ATTR_INTS = 3,
    OPARA__ATTR_FLOATS = 4,
    OPARA__ATTR_STRING = 5
} opara__attr_type;

typedef struct opara__attr {
    const char* name;
    opara__attr_type type;
    uint32_t count; /* elements of INTS/FLOATS, bytes of STRING (without the NUL) */
    union {
        int64_t i;
        float f;
        const int64_t* ints;
        const float* floats;
        const char* s;
    } v;
} opara__attr;

typedef enum opara__value_kind {
    OPARA__VALUE_ACTIVATION = 0, /* produced by a node */
    OPARA__VALUE_INPUT = 1,      /* a graph input the caller provides */
    OPARA__VALUE_CONST = 2       /* weights and other constants */
} opara__value_kind;

typedef struct opara__shape {
    int32_t ndim;
    int64_t dims[OPARA_MAX_DIMS];
} opara__shape;

/* How shape inference treats what it cannot resolve: strict (sessions: every dim known and every
   rule checked, a violation is an error) or tolerant (ONNX import: dims may be unknown (< 0) or
   the symbolic batch and propagate as unknown; a violation leaves the result unknown for the
   graph's checker to report). */
typedef enum opara__shape_mode { OPARA__SHAPE_STRICT, OPARA__SHAPE_TOLERANT } opara__shape_mode;

/* The numpy (multidirectional) broadcast rule, the only copy: the broadcast of n shapes into out
   and, when strides is not NULL, each input's element strides over out's dims (0 where that input
   is broadcast). Strict: 0 when two dims differ and neither is 1. Tolerant never fails: an unknown
   dim yields to a known one, dims that cannot broadcast become unknown, an unknown rank makes out
   unknown (strides are then not filled). */
OPARA__PRIVATE int opara__broadcast_shapes(const opara__shape* const* in, uint32_t n, opara__shape_mode mode,
                                           opara__shape* out, int64_t (*strides)[OPARA_MAX_DIMS]);
/* What the shape engine resolved for one node (opara__infer_shapes_params), read by the backends
   instead of the attributes. Only the fields of the node's op family are set. */
typedef struct opara__node_params {
    int resolved; /* the engine inferred the node: the fields below are valid */
    /* Conv, ConvTranspose, MaxPool, AveragePool: n_spatial dims, defaults filled in */
    int32_t n_spatial;
    int64_t kernel[OPARA_MAX_DIMS], strides[OPARA_MAX_DIMS], dilations[OPARA_MAX_DIMS];
    int64_t pads[2 * OPARA_MAX_DIMS];       /* n_spatial begins then n_spatial ends, after auto_pad and output_shape */
    int64_t output_padding[OPARA_MAX_DIMS]; /* ConvTranspose */
    int64_t group;                          /* Conv, ConvTranspose */
    int ceil_mode;                          /* pools */
    int has_output_shape;                   /* ConvTranspose: output_shape given (it may extend past the full size) */
    int64_t output_shape[OPARA_MAX_DIMS];   /* its spatial dims */
    /* Add, Sub, Mul, Div, Pow, Where, Expand: each input's element strides over output 0's dims
       (0 where the input is broadcast), from opara__broadcast_shapes */
    int64_t bcast_strides[3][OPARA_MAX_DIMS];
    int64_t axis;                  /* Concat, Split, Gather, Softmax, LayerNormalization, Flatten: in [0, rank] */
    uint8_t reduce[OPARA_MAX_DIMS]; /* ReduceMean: the input dims reduced (axes normalized, noop_with_empty_axes applied) */
    /* Slice, per input dim (untouched ones 0, 1, the dim): first index after ONNX's clamping, step, count */
    int64_t slice_start[OPARA_MAX_DIMS], slice_step[OPARA_MAX_DIMS], slice_count[OPARA_MAX_DIMS];
} opara__node_params;

/* The auto_pad attribute of Conv, ConvTranspose and the pools, parsed once (INVALID: not one of
   ONNX's four strings). */
typedef enum opara__auto_pad {
    OPARA__AUTO_PAD_NOTSET,
    OPARA__AUTO_PAD_SAME_UPPER,
    OPARA__AUTO_PAD_SAME_LOWER,
    OPARA__AUTO_PAD_VALID,
    OPARA__AUTO_PAD_INVALID
} opara__auto_pad;
/* Element strides of `in` broadcast to exactly `out` (0 where broadcast); 0 when it does not. */
OPARA__PRIVATE int opara__broadcast_to(const opara__shape* out, const opara__shape* in, int64_t* strides);

typedef struct opara__value {
    const char* name;
    opara_dtype dtype;
    opara__value_kind kind;
    int is_output;
    opara__shape shape;      /* declared for inputs and constants (may hold OPARA__DIM_BATCH); ndim -1 when unknown */
    const void* data;        /* constants: the bytes (in the pool, or in the caller's model buffer) */
    uint64_t nbytes;
    int32_t producer;        /* node index, or -1 */
} opara__value;

typedef struct opara__node {
    opara__op op;
    const char* name;
    uint32_t n_inputs, n_outputs, n_attrs;
    int32_t* inputs;   /* value indices; -1 marks an omitted optional input */
    int32_t* outputs;  /* value indices */
    opara__attr* attrs;
    uint32_t attr_cap;
} opara__node;

typedef struct opara__pool_block opara__pool_block;

typedef struct opara__pool {
    opara__pool_block* head;
    size_t used, cap;
} opara__pool;

typedef struct opara__graph {
    opara_runtime* rt;
    opara__pool pool;
    opara__value* values;
    uint32_t n_values;
    size_t cap_values;
    opara__node* nodes;
    uint32_t n_nodes;
    size_t cap_nodes;
    int32_t* inputs;   /* graph inputs, in order */
    uint32_t n_inputs;
    size_t cap_inputs;
    int32_t* outputs;  /* graph outputs, in order */
    uint32_t n_outputs;
    size_t cap_outputs;
    uint32_t* name_index; /* open addressing over value names: value index + 1, 0 = empty */
    uint32_t name_index_cap;
    const char* producer_name; /* metadata */
    int64_t source_opset;

    /* Derived by opara__graph_finalize(); NULL before. CSR arrays: the consumers of value v are
       consumer_nodes[consumer_start[v] .. consumer_start[v+1]), likewise preds/succs per node
       (distinct nodes, in first-use order of the inputs/outputs). */
    int finalized;
    uint32_t* topo; /* node indices in a deterministic topological order (Kahn, lowest index first) */
    uint32_t* consumer_start;
    uint32_t* consumer_nodes;
    uint32_t* pred_start;
    uint32_t* preds;
    uint32_t* succ_start;
    uint32_t* succs;
} opara__graph;

OPARA__PRIVATE const char* opara__op_name(opara__op op);
/* OPARA__OP_COUNT when the name is not an IR operator. */
OPARA__PRIVATE opara__op opara__op_from_name(const char* name);

/* Pool allocation: lives until the graph is freed; NULL on failure. */
OPARA__PRIVATE void* opara__pool_alloc(opara_runtime* rt, opara__pool* pool, size_t size, size_t alignment);
OPARA__PRIVATE const char* opara__pool_strdup(opara_runtime* rt, opara__pool* pool, const char* s);
OPARA__PRIVATE void opara__pool_free(opara_runtime* rt, opara__pool* pool);

OPARA__PRIVATE void opara__graph_init(opara__graph* g, opara_runtime* rt);
OPARA__PRIVATE void opara__graph_free(opara__graph* g);

/* Adds a value; the name must be unique and non-empty. shape may be NULL (unknown). Sets *index
   (-1 on failure) and returns why it failed, with the runtime's error set: OPARA_ERR_OUT_OF_MEMORY
   when an allocation failed, so callers propagate the code instead of choosing one. */
OPARA__PRIVATE opara_result opara__graph_insert_value(opara__graph* g, const char* name, opara_dtype dtype,
                                                     const opara__shape* shape, int32_t* index);
/* The same returning the index or -1, for tests and tools that build graphs known to be valid;
   library code uses opara__graph_insert_value, whose failure says why. */
OPARA__PRIVATE int32_t opara__graph_add_value(opara__graph* g, const char* name, opara_dtype dtype,
                                             const opara__shape* shape);
OPARA__PRIVATE int32_t opara__graph_find_value(const opara__graph* g, const char* name);
/* Makes v a constant holding data; copies it into the pool when copy is set, else keeps the pointer. */
OPARA__PRIVATE opara_result opara__graph_set_const(opara__graph* g, int32_t v, const void* data, uint64_t nbytes,
                                                  int copy);
OPARA__PRIVATE opara_result opara__graph_add_input(opara__graph* g, int32_t v);
OPARA__PRIVATE opara_result opara__graph_add_output(opara__graph* g, int32_t v);
/* Adds a node; inputs may contain -1 for omitted optional inputs. Sets *index (-1 on failure) and
   returns why it failed, like opara__graph_insert_value. */
OPARA__PRIVATE opara_result opara__graph_insert_node(opara__graph* g, opara__op op, const char* name,
                                                    uint32_t n_inputs, const int32_t* inputs, uint32_t n_outputs,
                                                    const int32_t* outputs, int32_t* index);
/* The same returning the index or -1 (tests and tools, as opara__graph_add_value). */
OPARA__PRIVATE int32_t opara__graph_add_node(opara__graph* g, opara__op op, const char* name, uint32_t n_inputs,
                                            const int32_t* inputs, uint32_t n_outputs, const int32_t* outputs);
OPARA__PRIVATE opara_result opara__node_set_int(opara__graph* g, int32_t node, const char* name, int64_t value);
OPARA__PRIVATE opara_result opara__node_set_float(opara__graph* g, int32_t node, const char* name, float value);
OPARA__PRIVATE opara_result opara__node_set_ints(opara__graph* g, int32_t node, const char* name,
                                                const int64_t* values, uint32_t count);
OPARA__PRIVATE opara_result opara__node_set_floats(opara__graph* g, int32_t node, const char* name,
                                                  const float* values, uint32_t count);
OPARA__PRIVATE opara_result opara__node_set_string(opara__graph* g, int32_t node, const char* name, const char* value);

OPARA__PRIVATE const opara__attr* opara__node_attr(const opara__node* n, const char* name);
OPARA__PRIVATE int64_t opara__attr_int(const opara__node* n, const char* name, int64_t fallback);
OPARA__PRIVATE float opara__attr_float(const opara__node* n, const char* name, float fallback);
/* Pointer to the INTS values (and their count) or NULL when absent or of another type. */
OPARA__PRIVATE const int64_t* opara__attr_ints(const opara__node* n, const char* name, uint32_t* count);
OPARA__PRIVATE const char* opara__attr_string(const opara__node* n, const char* name, const char* fallback);
OPARA__PRIVATE opara__auto_pad opara__node_auto_pad(const opara__node* n);

/* Checks indices and single producers, computes consumers, predecessors, successors and the
   topological order. Fails with OPARA_ERR_CYCLE naming a node on a cycle. Idempotent. */
OPARA__PRIVATE opara_result opara__graph_finalize(opara__graph* g);

#endif /* OPARA_IR_H */
