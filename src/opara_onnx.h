/* ONNX import: decoded ModelProto -> opara__graph in canonical form, with constant folding
   (including shape arithmetic over the symbolic batch), Identity/Dropout removal,
   BatchNormalization-into-Conv folding and Relu fusion. Also the TensorProto reader used by
   tests and tools for ONNX test data (.pb files). */
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

#endif /* OPARA_ONNX_H */
