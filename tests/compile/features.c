/* The feature macros (tests/compile_matrix.sh builds this with each of OPARA_NO_CUDA, OPARA_NO_ONNX,
   OPARA_NO_SIM, all three, none, and against build/opara_cpu.h with FEATURES_HEADER): a CPU session
   still builds and runs a model, and every call into a compiled-out part fails cleanly with the code
   and a detail naming its macro; where the part is compiled in, the same calls do what they always do.
   Exits 0 when all hold, else the number of the first check that failed (printed). */
#define OPARA_IMPLEMENTATION
#ifdef FEATURES_HEADER
#  include "opara_cpu.h"
#else
#  include "opara.h"
#endif

#include <stdio.h>
#include <string.h>

static int failed(int check, const char* what) {
    printf("features: check %d failed: %s\n", check, what);
    return check;
}

static int detail_names(opara_runtime* rt, const char* macro) { return strstr(opara_runtime_last_error(rt), macro) != NULL; }

/* The model y = Relu(x), x of 2 floats (NULL on failure). */
static opara_model* relu_model(opara_runtime* rt) {
    const int64_t dims[1] = {2};
    const char* in[1] = {"x"};
    const char* out[1] = {"y"};
    opara_builder* b = NULL;
    opara_model* model = NULL;
    if (opara_builder_create(rt, &b) != OPARA_OK) return NULL;
    opara_builder_add_input(b, "x", OPARA_DTYPE_F32, 1, dims);
    opara_builder_add_node(b, "Relu", "relu", 1, in, 1, out, 0, NULL);
    opara_builder_add_output(b, "y");
    if (opara_builder_finish(b, &model) != OPARA_OK) model = NULL;
    opara_builder_destroy(b);
    return model;
}

/* Relu on the CPU (AUTO must pick it without CUDA): y of {-1, 2} is {0, 2}. */
static int cpu_session_runs(opara_runtime* rt) {
    float x[2] = {-1.0f, 2.0f}, y[2] = {7.0f, 7.0f};
    opara_model* model = relu_model(rt);
    opara_session* s = NULL;
    opara_session_desc desc;
    opara_plan_info info;
    opara_tensor tx, ty;
    int ok;
    memset(&desc, 0, sizeof desc);
    memset(&tx, 0, sizeof tx);
    memset(&ty, 0, sizeof ty);
    desc.threads = 1;
    ok = model && opara_session_create(rt, model, &desc, &s) == OPARA_OK;
    tx.name = "x", tx.dtype = OPARA_DTYPE_F32, tx.rank = 1, tx.dims[0] = 2, tx.data = x;
    ty.name = "y", ty.dtype = OPARA_DTYPE_F32, ty.rank = 1, ty.dims[0] = 2, ty.data = y;
    ok = ok && opara_session_run(s, &tx, 1, &ty, 1) == OPARA_OK && y[0] == 0.0f && y[1] == 2.0f;
    ok = ok && opara_session_get_plan_info(s, &info) == OPARA_OK;
#ifdef OPARA_NO_CUDA
    ok = ok && strcmp(info.backend, "cpu") == 0;
#endif
    opara_session_destroy(s);
    opara_model_destroy(model);
    return ok;
}

/* Asking for the CUDA backend without it: OPARA_ERR_NO_BACKEND naming the macro. */
static int cuda_session_refused(opara_runtime* rt) {
    opara_model* model = relu_model(rt);
    opara_session* s = (opara_session*)&s;
    opara_session_desc desc;
    int ok;
    memset(&desc, 0, sizeof desc);
    desc.backend = OPARA_BACKEND_CUDA;
    ok = model && opara_session_create(rt, model, &desc, &s) == OPARA_ERR_NO_BACKEND && s == NULL &&
         detail_names(rt, "OPARA_NO_CUDA");
    opara_model_destroy(model);
    return ok;
}

int main(void) {
    static const unsigned char not_onnx[4] = {0xff, 0xff, 0xff, 0xff};
    opara_runtime* rt = NULL;
    opara_model* model = (opara_model*)&rt;
    opara_sim_device dev;
    opara_result r;
    char text[64] = "x";
    if (opara_runtime_create(NULL, &rt) != OPARA_OK) return failed(1, "runtime");
    if (!cpu_session_runs(rt)) return failed(2, "a CPU session builds, runs and computes Relu");
#ifdef OPARA_NO_CUDA
    if (!cuda_session_refused(rt)) return failed(3, "OPARA_BACKEND_CUDA: OPARA_ERR_NO_BACKEND naming OPARA_NO_CUDA");
#else
    (void)cuda_session_refused;
#endif

    r = opara_model_load_onnx_memory(rt, not_onnx, sizeof not_onnx, NULL, &model);
#ifdef OPARA_NO_ONNX
    if (r != OPARA_ERR_UNSUPPORTED || model != NULL || !detail_names(rt, "OPARA_NO_ONNX"))
        return failed(4, "ONNX import: OPARA_ERR_UNSUPPORTED naming OPARA_NO_ONNX, *out NULL");
#else
    if (r == OPARA_OK || r == OPARA_ERR_UNSUPPORTED || model != NULL) return failed(5, "ONNX import decodes (and refuses junk)");
#endif

    r = opara_sim_device_parse(rt, "base = a100\n", 12, &dev);
#ifdef OPARA_NO_SIM
    if (r != OPARA_ERR_UNSUPPORTED || !detail_names(rt, "OPARA_NO_SIM") || opara_sim_device_preset_name(0) != NULL ||
        opara_sim_device_preset("a100", &dev) != OPARA_ERR_UNSUPPORTED || opara_sim_device_format(&dev, text, sizeof text) != 0 ||
        text[0] != 0)
        return failed(6, "simulator: OPARA_ERR_UNSUPPORTED naming OPARA_NO_SIM, no presets, empty format");
#else
    if (r != OPARA_OK || opara_sim_device_preset_name(0) == NULL || opara_sim_device_format(&dev, text, sizeof text) == 0)
        return failed(7, "simulator: presets parse and format");
#endif
    opara_runtime_destroy(rt);
    printf("features: ok\n");
    return 0;
}
