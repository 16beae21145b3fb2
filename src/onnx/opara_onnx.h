/* ONNX import: decoded ModelProto -> opara__graph in canonical form, with constant folding
   (including shape arithmetic over the symbolic batch), Identity/Dropout removal,
   BatchNormalization-into-Conv folding and Relu fusion. Also the TensorProto reader used by
   tests and tools for ONNX test data (.pb files).

   Three parts, each calling only the ones before it:
     opara_onnx_tensor.c  TensorProto -> bytes (typed fields, raw data, external data files)
     opara_onnx_fold.c    the importer's state and the constant folder (evaluates nodes whose
                          inputs are constant, and reads operator parameters from constants)
     opara_onnx.c         the import itself: op mapping and canonical attributes, graph inputs and
                          outputs, fusions, the rebuild, and the public loaders
   The second half of this header is what the parts share; nothing outside them uses it. */
#ifndef OPARA_ONNX_H
#define OPARA_ONNX_H

#include "opara_pb.h"

/* A tensor read from a TensorProto: data in the runtime's allocator (free with
   opara__tensor_data_free). */
typedef struct opara__tensor_data {
    char name[128];
    opara_dtype dtype;
    opara__shape shape;
    void* data;
    uint64_t nbytes;
    uint64_t count;
} opara__tensor_data;

/* Converts a decoded TensorProto (raw_data or typed fields) into dtype/shape/bytes. External
   data is read from base_dir (NULL: external data is an error). */
OPARA__PRIVATE opara_result opara__onnx_tensor_load(opara_runtime* rt, const opara__onnx_tensor* t,
                                                   const char* base_dir, const char* where, opara__tensor_data* out);
/* A bare serialized TensorProto, as in ONNX test data. */
OPARA__PRIVATE_TOOL opara_result opara__onnx_read_tensor(opara_runtime* rt, const void* data, size_t size,
                                                   opara__tensor_data* out);
OPARA__PRIVATE void opara__tensor_data_free(opara_runtime* rt, opara__tensor_data* t);

/* The dtype of an ONNX TensorProto data type; OPARA_DTYPE_UNDEFINED when we have no such dtype. */
OPARA__PRIVATE opara_dtype opara__onnx_dtype(int32_t t);

/* Import flags for tests and tools (the public options cannot turn these off). */
enum { OPARA__ONNX_NO_FUSION = 1 };

/* Private import knobs: flags, and graph inputs frozen to constant values (ONNX node tests pass
   parameters such as Reshape's shape as graph inputs; freezing them makes the model importable). */
typedef struct opara__onnx_extra {
    int flags;
    const opara__tensor_data* frozen;
    uint32_t n_frozen;
} opara__onnx_extra;

/* Imports a serialized ModelProto into out (initialised here; the caller frees it with
   opara__graph_free, also on failure). base_dir: directory for external data, or NULL.
   extra may be NULL. */
OPARA__PRIVATE opara_result opara__onnx_import(opara_runtime* rt, const void* data, size_t size,
                                              const opara_onnx_options* options, const char* base_dir,
                                              const opara__onnx_extra* extra, opara__graph* out);

#ifndef OPARA_NO_STDIO
/* Whole file into a buffer from the runtime's allocator. */
OPARA__PRIVATE opara_result opara__onnx_read_file(opara_runtime* rt, const char* path, uint8_t** data, size_t* size);
OPARA__PRIVATE_TOOL opara_result opara__onnx_read_tensor_file(opara_runtime* rt, const char* path, opara__tensor_data* out);
OPARA__PRIVATE opara_result opara__onnx_import_file(opara_runtime* rt, const char* path,
                                                   const opara_onnx_options* options, const opara__onnx_extra* extra,
                                                   opara__graph* out);
#endif

/* ---- shared by the importer's parts ----------------------------------------------------------- */

/* What the importer knows of a value beyond the graph's record of it. */
typedef struct opara__imp_side {
    int32_t alias;        /* Identity/Dropout output: the value it stands for, else -1 */
    const int64_t* coef;  /* I64 constants: per-element multiple of the batch, or NULL (all zero) */
    opara__shape shape;   /* inferred shape of activations; dims may be OPARA__DIM_BATCH or -1 (unknown) */
    const char* rename;   /* the graph-output name this value takes in the rebuilt graph */
    int32_t narrow;       /* f16 widening (docs/ARCHITECTURE.md): the f16 value this f32 one widens, else -1 */
    int onnx_f16;         /* f32 here, f16 in the ONNX model (a widened constant, input or Cast) */
    const char* zeros_of; /* zeros of a batch-dependent shape, from the ConstantOfShape node so named (only an
                             RNN's initial state may read them: it is omitted instead), else NULL */
} opara__imp_side;

/* The import of one model. */
typedef struct opara__imp {
    opara_runtime* rt;
    opara__graph* g;
    const opara__onnx_model* model;
    const opara_onnx_options* opt;
    const char* base_dir;
    int64_t opset;
    opara__imp_side* side;
    size_t side_cap;
    const opara__onnx_node* node; /* node being imported, for messages */
    const char* node_name;
    const opara__onnx_extra* extra;
} opara__imp;

/* A constant tensor seen by the evaluator. */
typedef struct opara__cv {
    opara_dtype dtype;
    opara__shape shape;
    const uint8_t* data;
    const int64_t* coef;
    uint64_t count;
} opara__cv;

/* The evaluator declines (the node is then imported as an operator, or reported). */
#define OPARA__NOFOLD 1

/* An operator parameter read from an attribute or a constant input (at most OPARA__PARAM_CAP values). */
#define OPARA__PARAM_CAP 64

typedef struct opara__param {
    int present;
    uint32_t n;
    int64_t ints[OPARA__PARAM_CAP];
    float floats[OPARA__PARAM_CAP];
} opara__param;

/* The importer's state (opara_onnx_fold.c). */
OPARA__PRIVATE opara__imp_side* opara__side(opara__imp* im, int32_t v);
OPARA__PRIVATE int32_t opara__imp_find(opara__imp* im, const char* name);
OPARA__PRIVATE const opara__shape* opara__imp_shape(opara__imp* im, int32_t v);
OPARA__PRIVATE int opara__is_const(opara__imp* im, int32_t v);
OPARA__PRIVATE void opara__cv_of(opara__imp* im, int32_t v, opara__cv* cv);
OPARA__PRIVATE opara_result opara__imp_oom(opara__imp* im);
OPARA__PRIVATE opara_result opara__onnx_insert_result(opara_result r);
OPARA__PRIVATE uint64_t opara__shape_count(const opara__shape* s);
OPARA__PRIVATE opara_result opara__imp_const(opara__imp* im, const char* name, opara_dtype dtype, const opara__shape* shape,
                                             const void* data, const int64_t* coef, int copy);

/* Elements, axes and attributes of the ONNX node being imported (opara_onnx_fold.c). */
OPARA__PRIVATE int64_t opara__get_i64(opara_dtype t, const uint8_t* p, uint64_t i);
OPARA__PRIVATE int64_t opara__onnx_axis(int64_t axis, int32_t rank);
OPARA__PRIVATE const opara__onnx_attr* opara__oattr(const opara__onnx_node* n, const char* name);
OPARA__PRIVATE int64_t opara__oattr_int(const opara__onnx_node* n, const char* name, int64_t fallback);
OPARA__PRIVATE const int64_t* opara__oattr_ints(const opara__onnx_node* n, const char* name, uint32_t* count);
OPARA__PRIVATE int opara__op_is(const opara__onnx_node* n, const char* op);

/* Integer / float parameter i of the node being imported, from attribute attr or constant input i
   (opara_onnx_fold.c). */
OPARA__PRIVATE opara_result opara__ints_param(opara__imp* im, const int32_t* in, uint32_t n_in, uint32_t i, const char* attr,
                                              int allow_batch, opara__param* p);
OPARA__PRIVATE opara_result opara__floats_param(opara__imp* im, const int32_t* in, uint32_t n_in, uint32_t i,
                                                opara__param* p);

/* Evaluates the node being imported when its inputs allow it: OPARA_OK with *out filled,
   OPARA__NOFOLD, or an error (opara_onnx_fold.c). */
OPARA__PRIVATE int opara__try_fold(opara__imp* im, const int32_t* in, uint32_t n_in, opara__cv* out);
/* Split of a constant into one constant per output: OPARA_OK (all made), OPARA__NOFOLD or an error. */
OPARA__PRIVATE int opara__try_fold_split(opara__imp* im, const int32_t* in, uint32_t n_in);

#endif /* OPARA_ONNX_H */
