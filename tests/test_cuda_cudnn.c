/* The cuDNN descriptor and shape code of the CUDA backend against the real libcudnn (loaded with
   dlopen; the descriptor calls need no GPU): for convolutions of every kind the models use
   (strided, padded, dilated, grouped, depthwise, pointwise, 1-D), cuDNN's output size equals the
   size computed here from the ONNX formula (with the math type of exact FP32, FMA_MATH, and of TF32,
   DEFAULT_MATH, set on the descriptor), and a geometry whose output size is wrong is refused.
   Skips with the reason when libcudnn is not installed (OPARA_CUDNN names it). */
#define OPARA_IMPLEMENTATION
#include "opara.h"
#include "opara_test.h"

static int out_dim(int in, int pad_b, int pad_e, int k, int stride, int dil) {
    return (in + pad_b + pad_e - dil * (k - 1) - 1) / stride + 1;
}

static opara__cuda_conv_geom geom(int N, int C, int H, int W, int K, int R, int S, int p, int s, int d, int g, int relu) {
    opara__cuda_conv_geom c;
    memset(&c, 0, sizeof c);
    c.N = N, c.C = C, c.H = H, c.W = W, c.K = K, c.R = R, c.S = S;
    c.ph = c.ph_end = H > 1 ? p : 0, c.pw = c.pw_end = p;
    c.sh = H > 1 ? s : 1, c.sw = s, c.dh = H > 1 ? d : 1, c.dw = d, c.group = g, c.relu = relu;
    c.OH = out_dim(H, c.ph, c.ph_end, R, c.sh, c.dh);
    c.OW = out_dim(W, c.pw, c.pw_end, S, c.sw, c.dw);
    return c;
}

static int load(opara_cuda_cudnn* dnn, char* why, size_t cap) {
    if (opara_cuda_cudnn_load(dnn, NULL, why, cap) == OPARA_CUDA_LOAD_OK) return 1;
    return opara_cuda_cudnn_load(dnn, "/usr/local/cuda/lib64/libcudnn.so.9", why, cap) == OPARA_CUDA_LOAD_OK;
}

OT_TEST(cudnn_output_sizes_match_shape_inference) {
    opara_cuda_cudnn dnn;
    opara_runtime* rt = NULL;
    opara_runtime_desc rd;
    char why[2048];
    opara__cuda_conv_geom cases[8];
    int i;
    memset(&dnn, 0, sizeof dnn);
    if (!load(&dnn, why, sizeof why)) SKIP("cuDNN not loadable: %s", why);
    memset(&rd, 0, sizeof rd);
    opara_runtime_create(&rd, &rt);
    cases[0] = geom(1, 3, 224, 224, 64, 7, 7, 3, 2, 1, 1, 1);   /* ResNet stem */
    cases[1] = geom(2, 64, 56, 56, 64, 3, 3, 1, 1, 1, 1, 1);    /* 3x3 same */
    cases[2] = geom(1, 32, 17, 17, 32, 3, 3, 2, 1, 2, 32, 0);   /* depthwise, dilated */
    cases[3] = geom(4, 256, 14, 14, 512, 1, 1, 0, 2, 1, 1, 0);  /* strided pointwise */
    cases[4] = geom(1, 12, 9, 11, 8, 3, 5, 1, 2, 1, 4, 1);      /* grouped, rectangular kernel */
    cases[5] = geom(3, 4, 1, 50, 6, 1, 7, 3, 1, 1, 1, 0);       /* 1-D as H = 1 */
    cases[6] = geom(1, 3, 299, 299, 32, 3, 3, 0, 2, 1, 1, 1);   /* Inception stem */
    cases[7] = geom(1, 8, 10, 10, 8, 5, 5, 4, 3, 2, 2, 1);      /* stride 3, dilation 2 */
    for (i = 0; i < 16; ++i) { /* each case in exact FP32 (FMA_MATH) and with TF32 allowed (DEFAULT_MATH) */
        opara__cudnn_conv conv;
        opara__cuda_conv_geom c = cases[i / 2];
        opara_result r;
        c.tf32 = i % 2;
        r = opara__cudnn_conv_describe(rt, NULL, &dnn, &c, &conv);
        if (r != OPARA_OK)
            OT_LOG("case %d (tf32 %d): %s; %s: %s", i / 2, c.tf32, opara_runtime_last_error(rt),
                   conv.failed_call ? conv.failed_call : "-", opara_cudnn_status_name(conv.status));
        CHECK_EQ(OPARA_OK, r);
        CHECK_EQ(c.tf32 ? OPARA_CUDNN_DEFAULT_MATH : OPARA_CUDNN_FMA_MATH, conv.math);
        opara__cudnn_conv_destroy(&dnn, &conv);
    }
    /* a wrong output size (as a broken shape inference would give) is refused */
    {
        opara__cudnn_conv conv;
        opara__cuda_conv_geom bad = cases[1];
        bad.OW += 1;
        CHECK_EQ(OPARA_ERR_SHAPE, opara__cudnn_conv_describe(rt, NULL, &dnn, &bad, &conv));
        CHECK(strstr(opara_runtime_last_error(rt), "cuDNN computes output") != NULL);
        opara__cudnn_conv_destroy(&dnn, &conv);
    }
    /* asymmetric padding is not expressible in cuDNN's legacy API: our kernel handles it */
    {
        opara__cudnn_conv conv;
        opara__cuda_conv_geom asym = cases[1];
        asym.pw_end = 0;
        CHECK(!opara__cudnn_conv_supported(&asym));
        CHECK_EQ(OPARA_ERR_UNSUPPORTED, opara__cudnn_conv_describe(rt, NULL, &dnn, &asym, &conv));
        opara__cudnn_conv_destroy(&dnn, &conv);
    }
    printf("checked against %s (version %zu)\n", dnn.path, dnn.cudnnGetVersion());
    opara_cuda_cudnn_unload(&dnn);
    opara_runtime_destroy(rt);
}

static const opara_test_case tests[] = {
    OT_CASE(cudnn_output_sizes_match_shape_inference),
};

int main(int argc, char** argv) { return opara_test_main(argc, argv, tests, OT_COUNT(tests)); }
