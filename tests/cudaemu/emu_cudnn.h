/* emu_cudnn.h - what the cuDNN fake's main library (emu_cudnn.c, libcudnn.so.9) and its late-loaded
 * convolution sub-library (emu_cudnn_cnn.c, libcudnn_cnn.so.9) share: the descriptor structs, small helpers,
 * and the two tables they exchange when the main library loads the sub-library at its first convolution call
 * (docs/TESTING-GPU.md "cuDNN sub-library"). The sub-library reaches the main library's state only through the
 * core table, never by symbol: NVIDIA's libcudnn may be loaded in the same process (test_emu_dnn compares). */
#ifndef EMU_CUDNN_H
#define EMU_CUDNN_H
#include <limits.h>

#include "emu_lib.h"

enum { DIM_MAX = 8, CUDNN_EMU_VERSION = 91900, THREADS = 256 };

#define BAD OPARA_CUDNN_STATUS_BAD_PARAM
#define OK OPARA_CUDNN_STATUS_SUCCESS

struct opara_cudnnContext {
    opara_CUcontext ctx; /* current when the handle was created */
    opara_CUstream stream;
    opara_CUdeviceptr state;
    opara_CUdeviceptr setup; /* lazily set up at the first execution call (emu_lib_first_use) */
    int cc; /* compute capability of the device (10 * major + minor) */
};
struct opara_cudnnTensorStruct {
    int set, nb;
    opara_cudnnDataType_t type;
    int dims[DIM_MAX], strides[DIM_MAX];
};
struct opara_cudnnFilterStruct {
    int set;
    opara_cudnnDataType_t type;
    opara_cudnnTensorFormat_t format;
    int k, c, r, s;
};
struct opara_cudnnActivationStruct {
    int set;
    opara_cudnnActivationMode_t mode;
    opara_cudnnNanPropagation_t nan;
    double coef;
};

/* Calls counted by opara_emu_cudnn_calls (main library). */
enum { COUNT_FORWARD, COUNT_BIAS_ACT, COUNT_ADD_TENSOR, COUNT_N };

/* What the main library lends the sub-library (validity checks against its registries, the launch
 * preconditions and the call counters). */
enum { EMU_CUDNN_ABI = 1 };
typedef struct emu_cudnn_core {
    int abi;
    int (*valid_handle)(opara_cudnnHandle_t h);
    int (*valid_tensor)(opara_cudnnTensorDescriptor_t t);         /* registered and set */
    int (*valid_filter)(opara_cudnnFilterDescriptor_t f);         /* registered and set */
    int (*valid_activation)(opara_cudnnActivationDescriptor_t a); /* registered and set */
    opara_cudnnStatus_t (*launch_context)(opara_cudnnHandle_t h, const char* call);
    void (*count)(int which);
} emu_cudnn_core;

/* The convolution functions (cudnn_cnn.h) that live in the sub-library; the main library's exported functions
 * of the same names forward to them. */
#define EMU_CUDNN_CNN_FUNCS(X)                                                                                  \
    X(cudnnCreateConvolutionDescriptor) X(cudnnDestroyConvolutionDescriptor) X(cudnnSetConvolution2dDescriptor) \
    X(cudnnSetConvolutionGroupCount) X(cudnnSetConvolutionMathType) X(cudnnGetConvolution2dForwardOutputDim)    \
    X(cudnnGetConvolutionForwardAlgorithm_v7) X(cudnnGetConvolutionForwardWorkspaceSize)                        \
    X(cudnnConvolutionForward) X(cudnnConvolutionBiasActivationForward)

OPARA_CUDA_CUDNN_FUNCS(EMU_LIB_DECLARE)

#define EMU_CUDNN_CNN_MEMBER(name) __typeof__(&name) name;
typedef struct emu_cudnn_cnn {
    int abi;
    EMU_CUDNN_CNN_FUNCS(EMU_CUDNN_CNN_MEMBER)
} emu_cudnn_cnn;
#undef EMU_CUDNN_CNN_MEMBER

/* The sub-library's one export: its table, given the core (NULL when the ABI differs). */
#define EMU_CUDNN_CNN_OPEN "opara_emu_cudnn_cnn_open"
typedef const emu_cudnn_cnn* (*emu_cudnn_cnn_open_fn)(const emu_cudnn_core* core);

static inline void report(const char* msg) { emu_lib_report("cuDNN", msg); }

int opara_emu_is_device_pointer(const void* p); /* the emulated driver's allocation lookup */

static inline opara_cudnnStatus_t create(emu_lib_registry* r, void** out, size_t size) {
    void* p;
    if (!out) return BAD;
    if (!(p = calloc(1, size))) return OPARA_CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
    if (!emu_lib_registry_add(r, p)) {
        free(p);
        return OPARA_CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
    }
    *out = p;
    return OK;
}

static inline opara_cudnnStatus_t destroy(emu_lib_registry* r, void* p) {
    if (!p) return OK;
    if (!emu_lib_registry_remove(r, p)) return BAD;
    free(p);
    return OK;
}

static inline int valid_type(opara_cudnnDataType_t t) {
    switch (t) {
#define TYPE_CASE(name, value) case OPARA_##name:
        OPARA_CUDNN_DATA_TYPE_LIST(TYPE_CASE)
#undef TYPE_CASE
        return 1;
    }
    return 0;
}

static inline int all_float(opara_cudnnTensorDescriptor_t t) { return t->type == OPARA_CUDNN_DATA_FLOAT; }

static inline int nonneg_strides(opara_cudnnTensorDescriptor_t t) {
    int i;
    for (i = 0; i < t->nb; i++)
        if (t->strides[i] < 0) return 0;
    return 1;
}

/* [p, p + bytes) inside device memory: its first and last byte are in live allocations. */
static inline int device_range(const void* p, size_t bytes, const char* what) {
    char msg[200];
    if (bytes == 0 || (opara_emu_is_device_pointer(p) && opara_emu_is_device_pointer((const char*)p + bytes - 1))) return 1;
    snprintf(msg, sizeof msg, "%s at %p: its %zu bytes are not inside a live device allocation", what, p, bytes);
    report(msg);
    return 0;
}

static inline size_t type_size(opara_cudnnDataType_t t) {
    switch (t) {
    case OPARA_CUDNN_DATA_DOUBLE: case OPARA_CUDNN_DATA_INT64: return 8;
    case OPARA_CUDNN_DATA_HALF: case OPARA_CUDNN_DATA_BFLOAT16: return 2;
    case OPARA_CUDNN_DATA_INT8: case OPARA_CUDNN_DATA_UINT8: return 1;
    default: return 4;
    }
}

/* The bytes a tensor descriptor reaches from its base pointer (non-negative strides). */
static inline size_t tensor_span(opara_cudnnTensorDescriptor_t t) {
    size_t last = 0;
    int i;
    for (i = 0; i < t->nb; i++) last += (size_t)(t->dims[i] - 1) * (size_t)(t->strides[i] > 0 ? t->strides[i] : 0);
    return (last + 1) * type_size(t->type);
}

static inline int tensor_in_memory(opara_cudnnTensorDescriptor_t t, const void* p, const char* what) {
    return device_range(p, tensor_span(t), what);
}

#endif
