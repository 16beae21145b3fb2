/* GoogLeNet (Szegedy et al. 2015, torchvision's layout without the auxiliary heads) built through
   opara.h's graph-builder API with deterministic random weights. Used by the demo, tests and
   benchmarks when no exported model is at hand. Convolutions carry their ReLU as the fused
   "activation" attribute (what the ONNX importer produces after folding BatchNorm and ReLU). */
#ifndef OPARA_EXAMPLE_GOOGLENET_H
#define OPARA_EXAMPLE_GOOGLENET_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct googlenet_builder {
    opara_builder* b;
    uint32_t rng;
    int counter;
    float* scratch;
    size_t scratch_size;
} googlenet_builder;

static float googlenet_uniform(googlenet_builder* g) { /* in [-1, 1) */
    g->rng = g->rng * 1664525u + 1013904223u;
    return (float)(g->rng >> 8) / 8388608.0f - 1.0f;
}

/* Fills n floats with uniform values of the given standard deviation. */
static float* googlenet_random(googlenet_builder* g, size_t n, float stddev) {
    size_t i;
    if (n > g->scratch_size) {
        free(g->scratch);
        g->scratch = (float*)malloc(n * sizeof(float));
        g->scratch_size = g->scratch ? n : 0;
        if (!g->scratch) return NULL;
    }
    for (i = 0; i < n; ++i) g->scratch[i] = googlenet_uniform(g) * stddev * 1.7320508f;
    return g->scratch;
}

static const char* googlenet_name(googlenet_builder* g, const char* stem, char* buf, size_t cap) {
    snprintf(buf, cap, "%s_%d", stem, g->counter++);
    return buf;
}

/* Conv (+ fused ReLU) with He-initialised weights and small biases. Writes the output name. */
static void googlenet_conv(googlenet_builder* g, const char* in, int c_in, int c_out, int k, int stride, int pad,
                           char* out, size_t cap) {
    char w[48], bias[48], node[48];
    const char* inputs[3];
    int64_t wdims[4], bdims[1];
    int64_t kernel[2], strides[2], pads[4];
    opara_attr attrs[4];
    size_t n = (size_t)c_out * (size_t)c_in * (size_t)k * (size_t)k;
    float* data;
    googlenet_name(g, "w", w, sizeof w);
    googlenet_name(g, "b", bias, sizeof bias);
    googlenet_name(g, "conv", node, sizeof node);
    snprintf(out, cap, "%s_out", node);
    wdims[0] = c_out, wdims[1] = c_in, wdims[2] = k, wdims[3] = k;
    bdims[0] = c_out;
    data = googlenet_random(g, n, sqrtf(2.0f / (float)(c_in * k * k)));
    if (data) opara_builder_add_constant(g->b, w, OPARA_DTYPE_F32, 4, wdims, data, n * sizeof(float));
    data = googlenet_random(g, (size_t)c_out, 0.01f);
    if (data) opara_builder_add_constant(g->b, bias, OPARA_DTYPE_F32, 1, bdims, data, (size_t)c_out * sizeof(float));
    kernel[0] = kernel[1] = k;
    strides[0] = strides[1] = stride;
    pads[0] = pads[1] = pads[2] = pads[3] = pad;
    attrs[0].name = "kernel_shape", attrs[0].type = OPARA_ATTR_INTS, attrs[0].count = 2, attrs[0].v.ints = kernel;
    attrs[1].name = "strides", attrs[1].type = OPARA_ATTR_INTS, attrs[1].count = 2, attrs[1].v.ints = strides;
    attrs[2].name = "pads", attrs[2].type = OPARA_ATTR_INTS, attrs[2].count = 4, attrs[2].v.ints = pads;
    attrs[3].name = "activation", attrs[3].type = OPARA_ATTR_STRING, attrs[3].count = 0, attrs[3].v.s = "Relu";
    inputs[0] = in, inputs[1] = w, inputs[2] = bias;
    {
        const char* outputs[1];
        outputs[0] = out;
        opara_builder_add_node(g->b, "Conv", node, 3, inputs, 1, outputs, 4, attrs);
    }
}

static void googlenet_maxpool(googlenet_builder* g, const char* in, int k, int stride, int pad, char* out,
                              size_t cap) {
    char node[48];
    int64_t kernel[2], strides[2], pads[4];
    opara_attr attrs[4];
    const char* outputs[1];
    googlenet_name(g, "maxpool", node, sizeof node);
    snprintf(out, cap, "%s_out", node);
    kernel[0] = kernel[1] = k;
    strides[0] = strides[1] = stride;
    pads[0] = pads[1] = pads[2] = pads[3] = pad;
    attrs[0].name = "kernel_shape", attrs[0].type = OPARA_ATTR_INTS, attrs[0].count = 2, attrs[0].v.ints = kernel;
    attrs[1].name = "strides", attrs[1].type = OPARA_ATTR_INTS, attrs[1].count = 2, attrs[1].v.ints = strides;
    attrs[2].name = "pads", attrs[2].type = OPARA_ATTR_INTS, attrs[2].count = 4, attrs[2].v.ints = pads;
    attrs[3].name = "ceil_mode", attrs[3].type = OPARA_ATTR_INT, attrs[3].count = 1, attrs[3].v.i = 1;
    outputs[0] = out;
    opara_builder_add_node(g->b, "MaxPool", node, 1, &in, 1, outputs, 4, attrs);
}

/* One inception module: 1x1 | 1x1->3x3 | 1x1->3x3 | maxpool->1x1, concatenated on channels. */
static int googlenet_inception(googlenet_builder* g, const char* in, int c_in, int c1, int c3r, int c3, int c5r, int c5,
                               int cp, char* out, size_t cap) {
    char b1[64], b2a[64], b2[64], b3a[64], b3[64], b4a[64], b4[64], node[48];
    const char* parts[4];
    const char* outputs[1];
    opara_attr axis;
    googlenet_conv(g, in, c_in, c1, 1, 1, 0, b1, sizeof b1);
    googlenet_conv(g, in, c_in, c3r, 1, 1, 0, b2a, sizeof b2a);
    googlenet_conv(g, b2a, c3r, c3, 3, 1, 1, b2, sizeof b2);
    googlenet_conv(g, in, c_in, c5r, 1, 1, 0, b3a, sizeof b3a);
    googlenet_conv(g, b3a, c5r, c5, 3, 1, 1, b3, sizeof b3);
    googlenet_maxpool(g, in, 3, 1, 1, b4a, sizeof b4a);
    googlenet_conv(g, b4a, c_in, cp, 1, 1, 0, b4, sizeof b4);
    googlenet_name(g, "concat", node, sizeof node);
    snprintf(out, cap, "%s_out", node);
    parts[0] = b1, parts[1] = b2, parts[2] = b3, parts[3] = b4;
    axis.name = "axis", axis.type = OPARA_ATTR_INT, axis.count = 1, axis.v.i = 1;
    outputs[0] = out;
    opara_builder_add_node(g->b, "Concat", node, 4, parts, 1, outputs, 1, &axis);
    return c1 + c3 + c5 + cp;
}

/* Builds GoogLeNet for input "input" [N, 3, 224, 224] and output "logits" [N, 1000]. Returns the
   builder's sticky result through opara_builder_finish/save, which the caller calls. */
static void googlenet_build(opara_builder* b, uint32_t seed) {
    static const int cfg[9][7] = {
        {64, 96, 128, 16, 32, 32, 0},     {128, 128, 192, 32, 96, 64, 1}, /* 3a 3b, then pool */
        {192, 96, 208, 16, 48, 64, 0},    {160, 112, 224, 24, 64, 64, 0},  {128, 128, 256, 24, 64, 64, 0},
        {112, 144, 288, 32, 64, 64, 0},   {256, 160, 320, 32, 128, 128, 2}, /* 4a-4e, then pool */
        {256, 160, 320, 32, 128, 128, 0}, {384, 192, 384, 48, 128, 128, 0}, /* 5a 5b */
    };
    googlenet_builder g;
    char x[64], y[64];
    int64_t in_dims[4], fc_dims[2], bias_dims[1];
    int c, i;
    g.b = b, g.rng = seed, g.counter = 0, g.scratch = NULL, g.scratch_size = 0;
    in_dims[0] = OPARA_DIM_BATCH, in_dims[1] = 3, in_dims[2] = 224, in_dims[3] = 224;
    opara_builder_add_input(b, "input", OPARA_DTYPE_F32, 4, in_dims);
    googlenet_conv(&g, "input", 3, 64, 7, 2, 3, x, sizeof x);
    googlenet_maxpool(&g, x, 3, 2, 0, y, sizeof y);
    googlenet_conv(&g, y, 64, 64, 1, 1, 0, x, sizeof x);
    googlenet_conv(&g, x, 64, 192, 3, 1, 1, y, sizeof y);
    googlenet_maxpool(&g, y, 3, 2, 0, x, sizeof x);
    c = 192;
    for (i = 0; i < 9; ++i) {
        c = googlenet_inception(&g, x, c, cfg[i][0], cfg[i][1], cfg[i][2], cfg[i][3], cfg[i][4], cfg[i][5], y,
                                sizeof y);
        if (cfg[i][6]) googlenet_maxpool(&g, y, cfg[i][6] == 1 ? 3 : 2, 2, 0, x, sizeof x);
        else memcpy(x, y, sizeof x);
    }
    {
        const char* in1[1];
        const char* out1[1];
        const char* gemm_in[3];
        opara_attr trans_b;
        float* data;
        in1[0] = x, out1[0] = "pooled";
        opara_builder_add_node(b, "GlobalAveragePool", "avgpool", 1, in1, 1, out1, 0, NULL);
        in1[0] = "pooled", out1[0] = "flat";
        opara_builder_add_node(b, "Flatten", "flatten", 1, in1, 1, out1, 0, NULL);
        fc_dims[0] = 1000, fc_dims[1] = c;
        bias_dims[0] = 1000;
        data = googlenet_random(&g, (size_t)1000 * (size_t)c, sqrtf(1.0f / (float)c));
        if (data) opara_builder_add_constant(b, "fc_w", OPARA_DTYPE_F32, 2, fc_dims, data, (size_t)1000 * c * sizeof(float));
        data = googlenet_random(&g, 1000, 0.01f);
        if (data) opara_builder_add_constant(b, "fc_b", OPARA_DTYPE_F32, 1, bias_dims, data, 1000 * sizeof(float));
        gemm_in[0] = "flat", gemm_in[1] = "fc_w", gemm_in[2] = "fc_b";
        trans_b.name = "transB", trans_b.type = OPARA_ATTR_INT, trans_b.count = 1, trans_b.v.i = 1;
        out1[0] = "logits";
        opara_builder_add_node(b, "Gemm", "fc", 3, gemm_in, 1, out1, 1, &trans_b);
        opara_builder_add_output(b, "logits");
    }
    free(g.scratch);
}

#endif /* OPARA_EXAMPLE_GOOGLENET_H */
