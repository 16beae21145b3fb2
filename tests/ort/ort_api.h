/* ONNX Runtime as an independent reference and baseline, through its C API loaded with dlopen.
   No ORT header is needed: OrtGetApiBase()->GetApi(13) returns the OrtApi function table, whose
   layout only ever grows at the end, so entries are addressed by their index in that table.
   Used by the reference tools and benchmarks under tests/ and tools/; never part of opara.h. */
#ifndef OPARA_ORT_API_H
#define OPARA_ORT_API_H

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void (*ort_fn)(void);

typedef struct ort_api {
    void* lib;
    const ort_fn* table; /* OrtApi, as an array of function pointers */
    void* env;
    void* mem_info;
    char error[512];
} ort_api;

typedef struct ort_session {
    ort_api* api;
    void* session;
    size_t n_inputs, n_outputs;
    char** input_names;
    char** output_names;
} ort_session;

/* One tensor handed to or returned by ort_session_run. Element types use ONNX numbers. */
typedef struct ort_tensor {
    int elem_type;
    size_t rank;
    int64_t dims[8];
    void* data;
    size_t nbytes;
} ort_tensor;

/* OrtApi indices (version 13 table). */
enum {
    ORT_GetErrorMessage = 2, ORT_CreateEnv = 3, ORT_CreateSession = 7, ORT_Run = 9, ORT_CreateSessionOptions = 10,
    ORT_SetSessionGraphOptimizationLevel = 23, ORT_SetIntraOpNumThreads = 24, ORT_SetInterOpNumThreads = 25,
    ORT_SessionGetInputCount = 30, ORT_SessionGetOutputCount = 31, ORT_SessionGetInputName = 36,
    ORT_SessionGetOutputName = 37, ORT_CreateTensorWithDataAsOrtValue = 49, ORT_GetTensorMutableData = 51,
    ORT_GetTensorElementType = 60, ORT_GetDimensionsCount = 61, ORT_GetDimensions = 62,
    ORT_GetTensorTypeAndShape = 65, ORT_CreateCpuMemoryInfo = 69, ORT_AllocatorFree = 76,
    ORT_GetAllocatorWithDefaultOptions = 78, ORT_ReleaseEnv = 92, ORT_ReleaseStatus = 93, ORT_ReleaseMemoryInfo = 94,
    ORT_ReleaseSession = 95, ORT_ReleaseValue = 96, ORT_ReleaseTensorTypeAndShapeInfo = 99,
    ORT_ReleaseSessionOptions = 100
};

#define ORT_FN(api, index, type) ((type)(api)->table[index])

/* Returns 0 and fills api->error from a non-NULL OrtStatus. */
static int ort__ok(ort_api* api, void* status) {
    if (!status) return 1;
    snprintf(api->error, sizeof api->error, "%s",
             ORT_FN(api, ORT_GetErrorMessage, const char* (*)(const void*))(status));
    ORT_FN(api, ORT_ReleaseStatus, void (*)(void*))(status);
    return 0;
}

/* Default library: $ORT_LIB, else the npm package installed under build/npm. */
static const char* ort_default_library(void) {
    const char* env = getenv("ORT_LIB");
    return env && env[0] ? env : "build/npm/node_modules/onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime.so.1";
}

static int ort_open(ort_api* api, const char* path) {
    typedef struct { const void* (*GetApi)(uint32_t); const char* (*GetVersionString)(void); } base_t;
    const base_t* (*get_base)(void);
    memset(api, 0, sizeof *api);
    api->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!api->lib) {
        snprintf(api->error, sizeof api->error, "dlopen %s: %s", path, dlerror());
        return 0;
    }
    *(void**)&get_base = dlsym(api->lib, "OrtGetApiBase");
    if (!get_base || !(api->table = (const ort_fn*)get_base()->GetApi(13))) {
        snprintf(api->error, sizeof api->error, "%s has no usable OrtGetApiBase/GetApi(13)", path);
        return 0;
    }
    if (!ort__ok(api, ORT_FN(api, ORT_CreateEnv, void* (*)(int, const char*, void**))(3, "opara-ref", &api->env)))
        return 0;
    return ort__ok(api, ORT_FN(api, ORT_CreateCpuMemoryInfo, void* (*)(int, int, void**))(0, 0, &api->mem_info));
}

static void ort_close(ort_api* api) {
    if (api->mem_info) ORT_FN(api, ORT_ReleaseMemoryInfo, void (*)(void*))(api->mem_info);
    if (api->env) ORT_FN(api, ORT_ReleaseEnv, void (*)(void*))(api->env);
    if (api->lib) dlclose(api->lib);
    memset(api, 0, sizeof *api);
}

static char** ort__names(ort_session* s, size_t count, int index) {
    void* alloc = NULL;
    char** names = (char**)calloc(count + 1, sizeof(char*));
    size_t i;
    if (!names || !ort__ok(s->api, ORT_FN(s->api, ORT_GetAllocatorWithDefaultOptions, void* (*)(void**))(&alloc)))
        return names;
    for (i = 0; i < count; ++i) {
        char* name = NULL;
        if (!ort__ok(s->api, ORT_FN(s->api, index, void* (*)(void*, size_t, void*, char**))(s->session, i, alloc, &name)))
            break;
        names[i] = (char*)malloc(strlen(name) + 1);
        if (names[i]) strcpy(names[i], name);
        ORT_FN(s->api, ORT_AllocatorFree, void* (*)(void*, void*))(alloc, name);
    }
    return names;
}

/* threads: intra-op threads (0 = ORT's default). Graph optimizations are left at ORT's default (all). */
static int ort_session_open(ort_api* api, ort_session* s, const char* model_path, int threads) {
    void* options = NULL;
    int ok;
    memset(s, 0, sizeof *s);
    s->api = api;
    if (!ort__ok(api, ORT_FN(api, ORT_CreateSessionOptions, void* (*)(void**))(&options))) return 0;
    ok = ort__ok(api, ORT_FN(api, ORT_SetIntraOpNumThreads, void* (*)(void*, int))(options, threads)) &&
         ort__ok(api, ORT_FN(api, ORT_SetInterOpNumThreads, void* (*)(void*, int))(options, 1)) &&
         ort__ok(api, ORT_FN(api, ORT_CreateSession, void* (*)(void*, const char*, void*, void**))(
                          api->env, model_path, options, &s->session)) &&
         ort__ok(api, ORT_FN(api, ORT_SessionGetInputCount, void* (*)(void*, size_t*))(s->session, &s->n_inputs)) &&
         ort__ok(api, ORT_FN(api, ORT_SessionGetOutputCount, void* (*)(void*, size_t*))(s->session, &s->n_outputs));
    ORT_FN(api, ORT_ReleaseSessionOptions, void (*)(void*))(options);
    if (!ok) return 0;
    s->input_names = ort__names(s, s->n_inputs, ORT_SessionGetInputName);
    s->output_names = ort__names(s, s->n_outputs, ORT_SessionGetOutputName);
    return s->input_names && s->output_names;
}

static void ort_session_close(ort_session* s) {
    size_t i;
    for (i = 0; s->input_names && i < s->n_inputs; ++i) free(s->input_names[i]);
    for (i = 0; s->output_names && i < s->n_outputs; ++i) free(s->output_names[i]);
    free(s->input_names);
    free(s->output_names);
    if (s->session) ORT_FN(s->api, ORT_ReleaseSession, void (*)(void*))(s->session);
    memset(s, 0, sizeof *s);
}

/* Runs once. inputs[i] pairs with s->input_names[i]. On success outputs[i] holds a malloc'd copy
   of output i (free with ort_tensor_free). */
static int ort_session_run(ort_session* s, const ort_tensor* inputs, ort_tensor* outputs) {
    ort_api* api = s->api;
    void** in_values = (void**)calloc(s->n_inputs + 1, sizeof(void*));
    void** out_values = (void**)calloc(s->n_outputs + 1, sizeof(void*));
    size_t i;
    int ok = in_values && out_values;
    for (i = 0; ok && i < s->n_inputs; ++i)
        ok = ort__ok(api, ORT_FN(api, ORT_CreateTensorWithDataAsOrtValue,
                                 void* (*)(const void*, void*, size_t, const int64_t*, size_t, int, void**))(
                              api->mem_info, inputs[i].data, inputs[i].nbytes, inputs[i].dims, inputs[i].rank,
                              inputs[i].elem_type, &in_values[i]));
    if (ok)
        ok = ort__ok(api, ORT_FN(api, ORT_Run,
                                 void* (*)(void*, const void*, const char* const*, const void* const*, size_t,
                                           const char* const*, size_t, void**))(
                              s->session, NULL, (const char* const*)s->input_names, (const void* const*)in_values,
                              s->n_inputs, (const char* const*)s->output_names, s->n_outputs, out_values));
    for (i = 0; ok && outputs && i < s->n_outputs; ++i) {
        void* info = NULL;
        size_t count = 1, k, elem;
        void* data = NULL;
        ort_tensor* t = &outputs[i];
        memset(t, 0, sizeof *t);
        ok = ort__ok(api, ORT_FN(api, ORT_GetTensorTypeAndShape, void* (*)(const void*, void**))(out_values[i], &info)) &&
             ort__ok(api, ORT_FN(api, ORT_GetTensorElementType, void* (*)(const void*, int*))(info, &t->elem_type)) &&
             ort__ok(api, ORT_FN(api, ORT_GetDimensionsCount, void* (*)(const void*, size_t*))(info, &t->rank)) &&
             t->rank <= 8 &&
             ort__ok(api, ORT_FN(api, ORT_GetDimensions, void* (*)(const void*, int64_t*, size_t))(info, t->dims, t->rank)) &&
             ort__ok(api, ORT_FN(api, ORT_GetTensorMutableData, void* (*)(void*, void**))(out_values[i], &data));
        if (info) ORT_FN(api, ORT_ReleaseTensorTypeAndShapeInfo, void (*)(void*))(info);
        if (!ok) break;
        for (k = 0; k < t->rank; ++k) count *= (size_t)t->dims[k];
        elem = t->elem_type == 7 || t->elem_type == 11 ? 8 : t->elem_type == 9 || t->elem_type == 2 || t->elem_type == 3 ? 1 : 4;
        t->nbytes = count * elem;
        t->data = malloc(t->nbytes ? t->nbytes : 1);
        if (!t->data) ok = 0;
        else memcpy(t->data, data, t->nbytes);
    }
    for (i = 0; in_values && i < s->n_inputs; ++i)
        if (in_values[i]) ORT_FN(api, ORT_ReleaseValue, void (*)(void*))(in_values[i]);
    for (i = 0; out_values && i < s->n_outputs; ++i)
        if (out_values[i]) ORT_FN(api, ORT_ReleaseValue, void (*)(void*))(out_values[i]);
    free(in_values);
    free(out_values);
    return ok;
}

static void ort_tensor_free(ort_tensor* t) {
    free(t->data);
    t->data = NULL;
}

#endif /* OPARA_ORT_API_H */
