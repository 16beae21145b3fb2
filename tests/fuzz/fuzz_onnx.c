/* libFuzzer target: the ONNX protobuf decoder and the whole import (folding, fusion, rebuild,
   model validation) from memory, plus the bare TensorProto reader. Build: make fuzz-onnx. */
#define OPARA_IMPLEMENTATION
#include "opara.h"

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    opara_runtime* rt = NULL;
    opara_model* model = NULL;
    opara__tensor_data t;
    opara_onnx_options options;
    if (opara_runtime_create(NULL, &rt) != OPARA_OK) return 0;
    memset(&options, 0, sizeof options);
    options.default_dim = 3; /* let symbolic dims through so the importer runs deeper */
    if (opara_model_load_onnx_memory(rt, data, size, &options, &model) == OPARA_OK) opara_model_destroy(model);
    if (opara__onnx_read_tensor(rt, data, size, &t) == OPARA_OK) opara__tensor_data_free(rt, &t);
    opara_runtime_destroy(rt);
    return 0;
}
