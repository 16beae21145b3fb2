/* Node attributes for the public builder (opara_attr values) in one call each, and the public API's
   CUDA libraries defaulted to the emulator's; for the tests that build one-op models (tests/test_ops.c,
   tests/test_edge_values.c). Include after opara.h and cuda_test_env.h. */
#ifndef BUILDER_ATTRS_H
#define BUILDER_ATTRS_H

#include <stdlib.h>
#include <string.h>

OT__UNUSED static opara_attr attr_int(const char* name, int64_t v) {
    opara_attr a;
    memset(&a, 0, sizeof a);
    a.name = name, a.type = OPARA_ATTR_INT, a.v.i = v;
    return a;
}

OT__UNUSED static opara_attr attr_float(const char* name, float v) {
    opara_attr a;
    memset(&a, 0, sizeof a);
    a.name = name, a.type = OPARA_ATTR_FLOAT, a.v.f = v;
    return a;
}

OT__UNUSED static opara_attr attr_ints(const char* name, const int64_t* v, uint32_t n) {
    opara_attr a;
    memset(&a, 0, sizeof a);
    a.name = name, a.type = OPARA_ATTR_INTS, a.count = n, a.v.ints = v;
    return a;
}

OT__UNUSED static opara_attr attr_floats(const char* name, const float* v, uint32_t n) {
    opara_attr a;
    memset(&a, 0, sizeof a);
    a.name = name, a.type = OPARA_ATTR_FLOATS, a.count = n, a.v.floats = v;
    return a;
}

OT__UNUSED static opara_attr attr_str(const char* name, const char* s) {
    opara_attr a;
    memset(&a, 0, sizeof a);
    a.name = name, a.type = OPARA_ATTR_STRING, a.v.s = s;
    return a;
}

/* The public API reads the CUDA libraries from the environment: default them to the emulator's
   (cuda_test_env.h) and say whether the driver loads. */
OT__UNUSED static int cuda_usable(char* why, size_t cap) {
    setenv("OPARA_CUDA_DRIVER", driver_path(), 0);
    setenv("OPARA_CUBLAS", cublas_path(), 0);
    setenv("OPARA_CUDNN", cudnn_path(), 0);
    return opara__cuda_available(driver_path(), why, cap);
}

#endif
