/* The model object, the .opara reader and writer, shape and dtype inference, and reachability
   queries on the DAG. Private; the public side is the model/builder section of opara_api.h. */
#ifndef OPARA_MODEL_H
#define OPARA_MODEL_H

#include "../ir/opara_ir.h"

/* ---- the .opara format (docs/FORMAT.md is the specification) --------------------------------- */

#define OPARA__FORMAT_MAGIC "\x89OPR\r\n\x1a\n"
#define OPARA__FORMAT_MAGIC_SIZE 8
#define OPARA__FORMAT_MAJOR 1
#define OPARA__FORMAT_MINOR 0
#define OPARA__FORMAT_MIN_MAJOR 1
#define OPARA__FORMAT_HEADER_SIZE 192
#define OPARA__FORMAT_TENSOR_SIZE 96
#define OPARA__FORMAT_NODE_SIZE 32
#define OPARA__FORMAT_ATTR_SIZE 24
#define OPARA__FORMAT_STRING_SIZE 8
#define OPARA__FORMAT_MAX_RANK 8
#define OPARA__FORMAT_RANK_UNKNOWN 0xFFu
#define OPARA__FORMAT_NONE 0xFFFFFFFFu       /* "no string" / omitted input */
#define OPARA__FORMAT_DIM_BATCH (-1)         /* the symbolic batch dimension in the file */
#define OPARA__FORMAT_MIN_ALIGN 16u
#define OPARA__FORMAT_MAX_ALIGN 65536u
/* Must-understand flags (bits 0..15) this reader knows. Bit 0: an Add, Sub, Mul or Div carries a fused
   "activation" (docs/FORMAT.md), which a reader that ignored it would compute without. */
#define OPARA__FORMAT_FLAG_BINARY_ACTIVATION 0x0001u
#define OPARA__FORMAT_KNOWN_REQUIRED_FLAGS 0x0001u
#define OPARA__FORMAT_REQUIRED_MASK 0xFFFFu

/* Header byte offsets. */
#define OPARA__HDR_VER_MAJOR 8
#define OPARA__HDR_VER_MINOR 10
#define OPARA__HDR_HEADER_SIZE 12
#define OPARA__HDR_FLAGS 16
#define OPARA__HDR_ALIGNMENT 20
#define OPARA__HDR_N_STRINGS 24
#define OPARA__HDR_N_TENSORS 28
#define OPARA__HDR_N_NODES 32
#define OPARA__HDR_N_ATTRS 36
#define OPARA__HDR_N_REFS 40
#define OPARA__HDR_N_INPUTS 44
#define OPARA__HDR_N_OUTPUTS 48
#define OPARA__HDR_IO_REF 52
#define OPARA__HDR_PRODUCER 56
#define OPARA__HDR_RESERVED 60
#define OPARA__HDR_OPSET 64
#define OPARA__HDR_HASH 72
#define OPARA__HDR_STRINGS_OFF 80
#define OPARA__HDR_STRBYTES_OFF 88
#define OPARA__HDR_STRBYTES_SIZE 96
#define OPARA__HDR_TENSORS_OFF 104
#define OPARA__HDR_NODES_OFF 112
#define OPARA__HDR_ATTRS_OFF 120
#define OPARA__HDR_REFS_OFF 128
#define OPARA__HDR_PAYLOAD_OFF 136
#define OPARA__HDR_PAYLOAD_SIZE 144
#define OPARA__HDR_DATA_OFF 152
#define OPARA__HDR_DATA_SIZE 160
#define OPARA__HDR_TOTAL_SIZE 168

/* A byte buffer owned by the runtime's allocator (aligned to `alignment`). */
typedef struct opara__bytes {
    uint8_t* data;
    size_t size;
} opara__bytes;

/* Serializes g (which must pass opara__graph_validate; dtypes of activations must be known)
   into a new buffer: deterministic, the same graph gives the same bytes. alignment 0 means 64. */
OPARA__PRIVATE opara_result opara__format_write(opara_runtime* rt, const opara__graph* g, uint32_t alignment,
                                               opara__bytes* out);
/* Parses and validates an image into g (initialised by the caller). Names and constants point
   into `data`, which must outlive g and be aligned to the file's alignment (else BAD_ALIGNMENT).
   Fills *alignment and *hash from the header. */
OPARA__PRIVATE opara_result opara__format_read(opara_runtime* rt, const uint8_t* data, size_t size, opara__graph* g,
                                              uint32_t* alignment, uint64_t* hash);
/* Recomputes the content hash of an image that opara__format_read accepted over
   [header_size, total_size) and compares it with the header's: OPARA_ERR_CORRUPT on a mismatch. */
OPARA__PRIVATE opara_result opara__format_verify_hash(opara_runtime* rt, const uint8_t* data);
/* Reads only the header's alignment field (0 when the header is unusable). */
OPARA__PRIVATE uint32_t opara__format_peek_alignment(const uint8_t* data, size_t size);

#ifndef OPARA_NO_STDIO
/* Reads a whole regular file into a buffer from the runtime's allocator (free with opara__free),
   aligned to align(first bytes) (NULL or 0: 16). The file is sized once and at most that many
   bytes are read; a file that is not regular (directory, device, pipe) or that holds more or fewer
   bytes than its size said (rewritten while being read) is OPARA_ERR_IO, never a short or
   overlong buffer. */
typedef uint32_t (*opara__head_alignment_fn)(const uint8_t* head, size_t size);
OPARA__PRIVATE opara_result opara__read_file_once(opara_runtime* rt, const char* path, opara__head_alignment_fn align,
                                                 uint8_t** data, size_t* size);
#endif

/* Semantic checks shared by the loader, the builder and the converter: names, kinds, constant
   sizes against dtype and shape, producers, graph inputs/outputs, per-op attribute types,
   acyclicity (finalizes g), data types (activations with OPARA_DTYPE_UNDEFINED are filled in;
   a declared dtype that disagrees is OPARA_ERR_BAD_DTYPE) and shapes at batch 1. */
OPARA__PRIVATE opara_result opara__graph_validate(opara__graph* g);

/* ---- the model object ------------------------------------------------------------------------ */

struct opara_model {
    opara_runtime* rt;
    volatile int32_t refs;   /* the caller's handle (1 until opara_model_destroy) + 1 per live session;
                                atomic: sessions are destroyed on any thread */
    opara__graph graph;      /* finalized and validated */
    uint8_t* owned;          /* aligned copy of the image (or NULL) */
    void* map_base;          /* file mapping (or NULL) */
    size_t map_size;
    void* map_handle;        /* Win32 mapping handle */
    const uint8_t* image;    /* the .opara bytes the graph points into (NULL when built in memory) */
    size_t image_size;
    uint32_t alignment;
    uint64_t content_hash;
    int zero_copy;
};

/* Makes a model from g, which is moved into it (g is left empty, also on failure, when it is
   freed). Validates with opara__graph_validate. */
OPARA__PRIVATE opara_result opara__model_from_graph(opara_runtime* rt, opara__graph* g, opara_model** out);
/* The builder's graph as declared, finalized but not validated: node outputs given to
   opara_builder_declare take that dtype and shape (opara_plan_create_declared). */
OPARA__PRIVATE opara_result opara__builder_declared_graph(opara_builder* b, opara__graph* g);
OPARA__PRIVATE opara_runtime* opara__builder_runtime(const opara_builder* b);
OPARA__PRIVATE const opara__graph* opara__model_graph(const opara_model* model);
/* A session's reference: the model (its graph, constants and image) stays alive until the last
   session that retained it releases it, even after opara_model_destroy. */
OPARA__PRIVATE void opara__model_retain(const opara_model* model);
OPARA__PRIVATE void opara__model_release(const opara_model* model);

/* ---- shapes and data types ------------------------------------------------------------------- */

/* Output dtype of every value (inputs and constants as declared) following each op's ONNX
   rule (Cast: attr "to"; Where: input 1; Gather: input 0; comparison-free IR, so most ops keep
   input 0's type). g must be finalized. dtypes has g->n_values entries. */
OPARA__PRIVATE opara_result opara__infer_dtypes(opara_runtime* rt, const opara__graph* g, opara_dtype* dtypes);
/* Output k's dtype for the operators whose outputs do not all take input 0's (the quantized ones):
   returns 1 with *out set (UNDEFINED when the inputs' dtypes are wrong), else 0. in_dt: the inputs'
   dtypes by position (UNDEFINED: omitted). */
OPARA__PRIVATE int opara__op_out_dtype(const opara__node* n, const opara_dtype* in_dt, uint32_t k, opara_dtype* out);
/* Shape of every value for the given batch size (OPARA__DIM_BATCH in declared shapes and in
   Reshape/Expand shape attributes becomes `batch`), with ONNX semantics. g must be finalized.
   Errors (OPARA_ERR_SHAPE, ...) name the node, its op and the offending shapes. */
OPARA__PRIVATE opara_result opara__infer_shapes(opara_runtime* rt, const opara__graph* g, int64_t batch,
                                               opara__shape* shapes);
/* The shape engine on one node: out[k] (n_outputs entries) from in[k] (n_inputs entries, NULL for
   an omitted input). Strict (sessions, through opara__infer_shapes): every input known, every rule
   checked, a violation is an error naming the node. Tolerant (ONNX import): inputs may hold unknown
   dims (-1) or OPARA__DIM_BATCH, which propagate; what cannot be inferred is left unknown (ndim -1)
   and it returns OPARA_OK without reporting. params (may be NULL) receives the node's resolved
   parameters (params->resolved is 0 when the node could not be inferred). */
OPARA__PRIVATE opara_result opara__infer_node_shapes(opara_runtime* rt, const opara__graph* g, uint32_t node,
                                                    opara__shape_mode mode, int64_t batch, const opara__shape* const* in,
                                                    opara__shape* const* out, opara__node_params* params);
/* opara__infer_shapes that also resolves every node's parameters into params (g->n_nodes entries). */
OPARA__PRIVATE opara_result opara__infer_shapes_params(opara_runtime* rt, const opara__graph* g, int64_t batch,
                                                      opara__shape* shapes, opara__node_params* params);
/* OPARA_ERR_SHAPE naming the input or node when a declared input or (shapes not NULL) an
   inferred tensor is zero-sized. */
OPARA__PRIVATE opara_result opara__refuse_zero_sized(opara_runtime* rt, const opara__graph* g, const opara__shape* shapes);
/* Number of elements (1 for a scalar); -1 on overflow or a negative dim. */
OPARA__PRIVATE int64_t opara__shape_numel(const opara__shape* s);
/* "[1, 3, 224, 224]" (or "[?]" for an unknown shape) into buf. */
OPARA__PRIVATE const char* opara__shape_str(const opara__shape* s, char* buf, size_t cap);

/* ---- reachability on the DAG of a finalized graph -------------------------------------------- */

/* Transitive closure as one bitset row per node: bit b of row a is set when a path of one or
   more edges leads from node a to node b. */
typedef struct opara__closure {
    uint32_t n;
    uint32_t words;   /* 64-bit words per row */
    uint64_t* bits;
} opara__closure;

#define OPARA__CLOSURE_MAX_NODES 65536u

OPARA__PRIVATE opara_result opara__closure_build(opara_runtime* rt, const opara__graph* g, opara__closure* out);
OPARA__PRIVATE void opara__closure_free(opara_runtime* rt, opara__closure* c);
OPARA__PRIVATE int opara__closure_reaches(const opara__closure* c, uint32_t a, uint32_t b);
/* One query by depth-first search (no closure needed): 1 if a path leads from node a to node b
   (a != b), 0 if not, negative opara_result on failure. */
OPARA__PRIVATE_TOOL int opara__graph_reaches(const opara__graph* g, uint32_t a, uint32_t b);
/* Maximum antichain of the DAG (largest set of nodes no two of which are ordered): the
   parallelism available. Exact, by Dilworth's theorem (= minimum chain cover of the closure =
   n - maximum bipartite matching, Hopcroft-Karp). If antichain is not NULL it receives the
   nodes of one maximum antichain (g->n_nodes entries of room), *width their count. */
OPARA__PRIVATE_TOOL opara_result opara__graph_max_width(opara_runtime* rt, const opara__graph* g, uint32_t* width,
                                                  uint32_t* antichain);

#endif /* OPARA_MODEL_H */
