/* What is left of a part that a feature macro compiles out of opara.h (stb / miniaudio style; the
   table at the top of src/api/opara_api.h). The public declarations stay, so a program compiles the same
   either way; each call of the missing part fails cleanly, with OPARA_ERR_UNSUPPORTED and a detail
   that names the macro where the call has an object to hold it:
   - OPARA_NO_CUDA: nothing is needed here: the session reaches backends only through the list of
     compiled-in tables (opara_backend.h), so a session asking for OPARA_BACKEND_CUDA fails with
     OPARA_ERR_NO_BACKEND (as on a machine without a driver) and a detail naming the macro, and
     OPARA_BACKEND_AUTO takes the CPU, the only table there; opara_session_get_node_kernel says
     OPARA_ERR_UNSUPPORTED (the CPU's table has no per-node kernels).
   - OPARA_NO_ONNX: opara_model_load_onnx_* return OPARA_ERR_UNSUPPORTED (and *out is NULL).
   - OPARA_NO_SIM: the simulator's functions return OPARA_ERR_UNSUPPORTED; there are no presets
     (opara_sim_device_preset_name gives NULL), opara_sim_device_format writes "", and freeing or
     tracing a result (which nothing can produce) does nothing.
   tools/gen_header.c wraps each part's files in `#ifndef OPARA_NO_X`; this file holds the other side.
   The macros select parts of opara.h: the files of src/ built separately are the whole library. */
#include "../core/opara_internal.h"
#include "../sim/opara_sim.h"

#include <string.h>

#ifdef OPARA_NO_ONNX
#define OPARA__NO_ONNX_DETAIL "ONNX import is compiled out (OPARA_NO_ONNX)"

OPARADEF opara_result opara_model_load_onnx_memory(opara_runtime* runtime, const void* data, size_t size,
                                                   const opara_onnx_options* options, opara_model** out) {
    (void)data, (void)size, (void)options;
    if (out) *out = NULL;
    return opara__fail(runtime, OPARA_ERR_UNSUPPORTED, "%s", OPARA__NO_ONNX_DETAIL);
}

#ifndef OPARA_NO_STDIO
OPARADEF opara_result opara_model_load_onnx_file(opara_runtime* runtime, const char* path,
                                                 const opara_onnx_options* options, opara_model** out) {
    (void)path, (void)options;
    if (out) *out = NULL;
    return opara__fail(runtime, OPARA_ERR_UNSUPPORTED, "%s", OPARA__NO_ONNX_DETAIL);
}
#endif
#endif /* OPARA_NO_ONNX */

#ifdef OPARA_NO_SIM
#define OPARA__NO_SIM_DETAIL "the simulator is compiled out (OPARA_NO_SIM)"

OPARADEF opara_result opara_sim_device_preset(const char* name, opara_sim_device* out) {
    (void)name, (void)out;
    return OPARA_ERR_UNSUPPORTED;
}

OPARADEF const char* opara_sim_device_preset_name(uint32_t index) {
    (void)index;
    return NULL;
}

OPARADEF opara_result opara_sim_device_parse(opara_runtime* rt, const char* text, size_t len, opara_sim_device* out) {
    (void)text, (void)len, (void)out;
    return opara__fail(rt, OPARA_ERR_UNSUPPORTED, "%s", OPARA__NO_SIM_DETAIL);
}

OPARADEF size_t opara_sim_device_format(const opara_sim_device* dev, char* dst, size_t cap) {
    (void)dev;
    if (dst && cap > 0) dst[0] = 0;
    return 0;
}

#ifndef OPARA_NO_STDIO
OPARADEF opara_result opara_sim_device_load(opara_runtime* rt, const char* name_or_path, opara_sim_device* out) {
    (void)name_or_path, (void)out;
    return opara__fail(rt, OPARA_ERR_UNSUPPORTED, "%s", OPARA__NO_SIM_DETAIL);
}
#endif

OPARADEF void opara_sim_result_free(opara_runtime* rt, opara_sim_result* result) { (void)rt, (void)result; }

OPARADEF void opara_sim_trace_write(const opara_sim_result* result, const char* const* op_names,
                                    void (*write)(const char* text, size_t len, void* user), void* user) {
    (void)result, (void)op_names, (void)write, (void)user;
}
#endif /* OPARA_NO_SIM */

/* (ISO C wants a declaration in every translation unit: this file built alone with no macro set) */
typedef int opara__features_unit;
