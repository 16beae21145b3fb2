/* The graph IR: values (tensors), nodes (operators) with typed attributes, graph inputs and
   outputs, and the derived DAG (consumers, predecessors, successors, topological order).
   Everything a graph owns lives in its pool and is freed with it. */
#ifndef OPARA_IR_H
#define OPARA_IR_H

#include "../core/opara_internal.h"

/* The operator table: one row per IR operator, the only place an operator's facts are written.
   X(ID, "OnnxName", "domain", since, until, next, min_in, max_in, max_out, kept_in, work, flops, flags):
     OnnxName/domain  the ONNX op_type it imports ("" = the default domain ai.onnx); the IR name too
     since            the first opset of that domain defining it: an older model is refused at import
     until, next      the newest ONNX version of the op whose meaning we implement (versions that only
                      add types count as ours), and ONNX's next version after it, which changed the
                      meaning (0: none, as of ONNX opset 28): a model whose opset is >= next has that
                      newer version and is refused at import
     min_in, max_in   inputs a node has: the first min_in present, the optional ones up to max_in may
                      be omitted (-1); max_out outputs at most, at least 1 (OPARA__OP_ANY: no limit)
     kept_in          ONNX inputs kept as tensors (0: all); the importer turns the rest into attributes
     work             how the planner and the CPU executor estimate its cost (opara__op_work)
     flops            floating-point operations per element for ELEMENTWISE/ROWS work
     flags            OPARA__OPF_*: F32 (f32 tensors only), INPLACE (an element-wise op that may write
                      its output over an input), COMPUTE (compute-bound when its size is unknown),
                      NO_OMITTED (variadic inputs that are all required)
   Attributes are in canonical form: whatever ONNX allows as either an attribute or a constant input
   (axes, split sizes, pads, Clip bounds, Slice starts/ends/axes/steps, Reshape/Expand shape, Resize
   scales/sizes) is an attribute here; the importer moves it. See docs/FORMAT.md for the attributes and
   docs/ADDING-AN-OPERATOR.md for every place a new row needs code (the compiler's -Wswitch names the
   switches; tests/test_ops.c fails naming an op without a test case). */
#define OPARA__OPS(X) \
    X(CONV, "Conv", "", 1, 22, 0, 2, 3, 1, 0, CONV, 0, OPARA__OPF_F32 | OPARA__OPF_COMPUTE)                           \
    X(CONV_TRANSPOSE, "ConvTranspose", "", 1, 22, 0, 2, 3, 1, 0, CONV, 0, OPARA__OPF_F32 | OPARA__OPF_COMPUTE)        \
    X(QUANTIZE_LINEAR, "QuantizeLinear", "", 10, 21, 23, 2, 3, 1, 0, ELEMENTWISE, 2, 0)                               \
    X(DEQUANTIZE_LINEAR, "DequantizeLinear", "", 10, 21, 23, 2, 3, 1, 0, ELEMENTWISE, 2, 0)                           \
    X(DYNAMIC_QUANTIZE_LINEAR, "DynamicQuantizeLinear", "", 11, 11, 0, 1, 1, 3, 0, ELEMENTWISE, 4, 0)                 \
    X(CONV_INTEGER, "ConvInteger", "", 10, 10, 0, 2, 4, 1, 0, CONV, 0, OPARA__OPF_COMPUTE)                            \
    X(MATMUL_INTEGER, "MatMulInteger", "", 10, 10, 0, 2, 4, 1, 0, MATMUL, 0, OPARA__OPF_COMPUTE)                      \
    X(QLINEAR_CONV, "QLinearConv", "", 10, 10, 0, 8, 9, 1, 0, CONV, 0, OPARA__OPF_COMPUTE)                            \
    X(QLINEAR_MATMUL, "QLinearMatMul", "", 10, 21, 0, 8, 8, 1, 0, MATMUL, 0, OPARA__OPF_COMPUTE)                      \
    X(MAX_POOL, "MaxPool", "", 1, 22, 0, 1, 1, 2, 0, POOL, 0, OPARA__OPF_F32)                                         \
    X(AVERAGE_POOL, "AveragePool", "", 1, 22, 0, 1, 1, 1, 0, POOL, 0, OPARA__OPF_F32)                                 \
    X(GLOBAL_AVERAGE_POOL, "GlobalAveragePool", "", 1, 22, 0, 1, 1, 1, 0, ROWS, 1, OPARA__OPF_F32)                    \
    X(BATCH_NORM, "BatchNormalization", "", 1, 15, 0, 5, 5, 1, 0, ELEMENTWISE, 2, OPARA__OPF_F32 | OPARA__OPF_INPLACE) \
    X(PRELU, "PRelu", "", 1, 16, 0, 2, 2, 1, 0, ELEMENTWISE, 2, OPARA__OPF_F32 | OPARA__OPF_INPLACE)                   \
    X(INSTANCE_NORM, "InstanceNormalization", "", 1, 22, 0, 3, 3, 1, 0, ROWS, 5, OPARA__OPF_F32)                     \
    X(LRN, "LRN", "", 1, 13, 0, 1, 1, 1, 0, ELEMENTWISE, 8, OPARA__OPF_F32)                                           \
    X(MVN, "MeanVarianceNormalization", "", 9, 13, 0, 1, 1, 1, 0, ROWS, 5, OPARA__OPF_F32)                           \
    X(SHRINK, "Shrink", "", 9, 9, 0, 1, 1, 1, 0, ELEMENTWISE, 2, OPARA__OPF_F32 | OPARA__OPF_INPLACE)                 \
    X(GLOBAL_MAX_POOL, "GlobalMaxPool", "", 1, 22, 0, 1, 1, 1, 0, ROWS, 1, OPARA__OPF_F32)                            \
    X(MAX_UNPOOL, "MaxUnpool", "", 9, 22, 0, 2, 2, 1, 2, ELEMENTWISE, 0, OPARA__OPF_F32)                              \
    X(DROPOUT, "Dropout", "", 1, 22, 0, 1, 1, 2, 1, ELEMENTWISE, 0, 0)                                                \
    X(EINSUM, "Einsum", "", 12, 12, 0, 1, 2, 1, 0, ELEMENTWISE, 2, 0)                                                 \
    X(RELU, "Relu", "", 1, 14, 0, 1, 1, 1, 0, ELEMENTWISE, 1, OPARA__OPF_F32 | OPARA__OPF_INPLACE)                    \
    X(LEAKY_RELU, "LeakyRelu", "", 1, 16, 0, 1, 1, 1, 0, ELEMENTWISE, 2, OPARA__OPF_F32 | OPARA__OPF_INPLACE)         \
    X(SIGMOID, "Sigmoid", "", 1, 13, 0, 1, 1, 1, 0, ELEMENTWISE, 8, OPARA__OPF_F32 | OPARA__OPF_INPLACE)              \
    X(TANH, "Tanh", "", 1, 13, 0, 1, 1, 1, 0, ELEMENTWISE, 8, OPARA__OPF_F32 | OPARA__OPF_INPLACE)                    \
    X(HARD_SIGMOID, "HardSigmoid", "", 1, 22, 0, 1, 1, 1, 0, ELEMENTWISE, 4, OPARA__OPF_F32 | OPARA__OPF_INPLACE)     \
    X(HARD_SWISH, "HardSwish", "", 14, 22, 0, 1, 1, 1, 0, ELEMENTWISE, 4, OPARA__OPF_F32 | OPARA__OPF_INPLACE)        \
    X(CLIP, "Clip", "", 1, 13, 0, 1, 1, 1, 1, ELEMENTWISE, 2, OPARA__OPF_F32 | OPARA__OPF_INPLACE)                    \
    X(ADD, "Add", "", 1, 14, 0, 2, 2, 1, 0, ELEMENTWISE, 1, OPARA__OPF_INPLACE)                                       \
    X(SUB, "Sub", "", 1, 14, 0, 2, 2, 1, 0, ELEMENTWISE, 1, OPARA__OPF_INPLACE)                                       \
    X(MUL, "Mul", "", 1, 14, 0, 2, 2, 1, 0, ELEMENTWISE, 1, OPARA__OPF_INPLACE)                                       \
    X(DIV, "Div", "", 1, 14, 0, 2, 2, 1, 0, ELEMENTWISE, 1, OPARA__OPF_INPLACE)                                       \
    X(POW, "Pow", "", 1, 15, 0, 2, 2, 1, 0, ELEMENTWISE, 4, OPARA__OPF_INPLACE)                                       \
    X(EQUAL, "Equal", "", 7, 19, 0, 2, 2, 1, 0, ELEMENTWISE, 1, OPARA__OPF_INPLACE)                                   \
    X(GREATER, "Greater", "", 7, 13, 0, 2, 2, 1, 0, ELEMENTWISE, 1, OPARA__OPF_INPLACE)                               \
    X(LESS, "Less", "", 7, 13, 0, 2, 2, 1, 0, ELEMENTWISE, 1, OPARA__OPF_INPLACE)                                     \
    X(GREATER_OR_EQUAL, "GreaterOrEqual", "", 12, 16, 0, 2, 2, 1, 0, ELEMENTWISE, 1, OPARA__OPF_INPLACE)              \
    X(LESS_OR_EQUAL, "LessOrEqual", "", 12, 16, 0, 2, 2, 1, 0, ELEMENTWISE, 1, OPARA__OPF_INPLACE)                    \
    X(AND, "And", "", 7, 7, 0, 2, 2, 1, 0, ELEMENTWISE, 1, OPARA__OPF_INPLACE)                                        \
    X(OR, "Or", "", 7, 7, 0, 2, 2, 1, 0, ELEMENTWISE, 1, OPARA__OPF_INPLACE)                                          \
    X(XOR, "Xor", "", 7, 7, 0, 2, 2, 1, 0, ELEMENTWISE, 1, OPARA__OPF_INPLACE)                                        \
    X(MOD, "Mod", "", 10, 13, 0, 2, 2, 1, 0, ELEMENTWISE, 2, OPARA__OPF_INPLACE)                                      \
    X(BIT_SHIFT, "BitShift", "", 11, 11, 0, 2, 2, 1, 0, ELEMENTWISE, 1, OPARA__OPF_INPLACE)                           \
    X(NOT, "Not", "", 1, 1, 0, 1, 1, 1, 0, ELEMENTWISE, 1, OPARA__OPF_INPLACE)                                        \
    X(IS_NAN, "IsNaN", "", 9, 20, 0, 1, 1, 1, 0, ELEMENTWISE, 1, 0)                                                  \
    X(IS_INF, "IsInf", "", 10, 20, 0, 1, 1, 1, 0, ELEMENTWISE, 1, 0)                                                 \
    X(MAX, "Max", "", 6, 13, 0, 1, OPARA__OP_ANY, 1, 0, ELEMENTWISE, 1, OPARA__OPF_NO_OMITTED)                         \
    X(MIN, "Min", "", 6, 13, 0, 1, OPARA__OP_ANY, 1, 0, ELEMENTWISE, 1, OPARA__OPF_NO_OMITTED)                         \
    X(MEAN, "Mean", "", 6, 13, 0, 1, OPARA__OP_ANY, 1, 0, ELEMENTWISE, 1, OPARA__OPF_NO_OMITTED)                       \
    X(SUM, "Sum", "", 6, 13, 0, 1, OPARA__OP_ANY, 1, 0, ELEMENTWISE, 1, OPARA__OPF_NO_OMITTED)                         \
    X(SQRT, "Sqrt", "", 1, 13, 0, 1, 1, 1, 0, ELEMENTWISE, 1, OPARA__OPF_F32 | OPARA__OPF_INPLACE)                    \
    X(ERF, "Erf", "", 9, 13, 0, 1, 1, 1, 0, ELEMENTWISE, 8, OPARA__OPF_F32 | OPARA__OPF_INPLACE)                      \
    X(GELU, "Gelu", "", 20, 20, 0, 1, 1, 1, 0, ELEMENTWISE, 8, OPARA__OPF_F32 | OPARA__OPF_INPLACE)                   \
    X(CONCAT, "Concat", "", 1, 13, 0, 1, OPARA__OP_ANY, 1, 0, ELEMENTWISE, 0, OPARA__OPF_NO_OMITTED)                  \
    X(SPLIT, "Split", "", 1, 18, 0, 1, 1, OPARA__OP_ANY, 1, ELEMENTWISE, 0, 0)                                        \
    X(SLICE, "Slice", "", 1, 13, 0, 1, 1, 1, 1, ELEMENTWISE, 0, 0)                                                    \
    X(GATHER, "Gather", "", 1, 13, 0, 2, 2, 1, 0, ELEMENTWISE, 0, 0)                                                  \
    X(GATHER_ELEMENTS, "GatherElements", "", 11, 13, 0, 2, 2, 1, 0, ELEMENTWISE, 0, 0)                                \
    X(SCATTER_ELEMENTS, "ScatterElements", "", 11, 18, 0, 3, 3, 1, 0, ELEMENTWISE, 0, 0)                              \
    X(SCATTER, "Scatter", "", 9, 11, 0, 3, 3, 1, 0, ELEMENTWISE, 0, 0)                                                \
    X(GATHER_ND, "GatherND", "", 11, 13, 0, 2, 2, 1, 0, ELEMENTWISE, 0, 0)                                            \
    X(SCATTER_ND, "ScatterND", "", 11, 18, 0, 3, 3, 1, 0, ELEMENTWISE, 0, 0)                                          \
    X(SIZE, "Size", "", 1, 25, 0, 1, 1, 1, 0, ELEMENTWISE, 0, 0)                                                      \
    X(TRILU, "Trilu", "", 14, 14, 0, 1, 1, 1, 1, ELEMENTWISE, 0, 0)                                                   \
    X(TILE, "Tile", "", 6, 13, 0, 1, 1, 1, 1, ELEMENTWISE, 0, 0)                                                      \
    X(DEPTH_TO_SPACE, "DepthToSpace", "", 1, 13, 0, 1, 1, 1, 0, TRANSPOSE, 0, 0)                                      \
    X(SPACE_TO_DEPTH, "SpaceToDepth", "", 1, 13, 0, 1, 1, 1, 0, TRANSPOSE, 0, 0)                                      \
    X(EYE_LIKE, "EyeLike", "", 9, 22, 0, 1, 1, 1, 0, ELEMENTWISE, 0, 0)                                               \
    X(ONE_HOT, "OneHot", "", 9, 11, 0, 2, 2, 1, 1, ELEMENTWISE, 0, 0)                                                 \
    X(REVERSE_SEQUENCE, "ReverseSequence", "", 10, 10, 0, 2, 2, 1, 0, ELEMENTWISE, 0, 0)                              \
    X(RESHAPE, "Reshape", "", 1, 25, 0, 1, 1, 1, 1, VIEW, 0, 0)                                                       \
    X(FLATTEN, "Flatten", "", 1, 25, 0, 1, 1, 1, 0, VIEW, 0, 0)                                                       \
    X(TRANSPOSE, "Transpose", "", 1, 25, 0, 1, 1, 1, 0, TRANSPOSE, 0, 0)                                              \
    X(SQUEEZE, "Squeeze", "", 1, 25, 0, 1, 1, 1, 1, VIEW, 0, 0)                                                       \
    X(UNSQUEEZE, "Unsqueeze", "", 1, 25, 0, 1, 1, 1, 1, VIEW, 0, 0)                                                   \
    X(EXPAND, "Expand", "", 8, 13, 0, 1, 1, 1, 1, ELEMENTWISE, 0, 0)                                                  \
    X(GEMM, "Gemm", "", 1, 13, 0, 2, 3, 1, 0, MATMUL, 0, OPARA__OPF_F32 | OPARA__OPF_COMPUTE)                         \
    X(LSTM, "LSTM", "", 7, 22, 0, 3, 8, 3, 0, MATMUL, 0, OPARA__OPF_F32 | OPARA__OPF_COMPUTE)                         \
    X(GRU, "GRU", "", 7, 22, 0, 3, 6, 2, 0, MATMUL, 0, OPARA__OPF_F32 | OPARA__OPF_COMPUTE)                           \
    X(RNN, "RNN", "", 7, 22, 0, 3, 6, 2, 0, MATMUL, 0, OPARA__OPF_F32 | OPARA__OPF_COMPUTE)                           \
    X(MATMUL, "MatMul", "", 1, 13, 0, 2, 2, 1, 0, MATMUL, 0, OPARA__OPF_F32 | OPARA__OPF_COMPUTE)                     \
    X(SOFTMAX, "Softmax", "", 1, 13, 0, 1, 1, 1, 0, ROWS, 5, OPARA__OPF_F32)                                          \
    X(LAYER_NORM, "LayerNormalization", "", 17, 17, 0, 2, 3, 3, 0, ROWS, 5, OPARA__OPF_F32)                           \
    X(REDUCE_MEAN, "ReduceMean", "", 1, 18, 0, 1, 1, 1, 1, ROWS, 1, OPARA__OPF_F32)                                   \
    X(REDUCE_SUM, "ReduceSum", "", 1, 13, 0, 1, 1, 1, 1, ROWS, 1, 0)                                                  \
    X(REDUCE_MAX, "ReduceMax", "", 1, 20, 0, 1, 1, 1, 1, ROWS, 1, 0)                                                  \
    X(REDUCE_MIN, "ReduceMin", "", 1, 20, 0, 1, 1, 1, 1, ROWS, 1, 0)                                                  \
    X(REDUCE_PROD, "ReduceProd", "", 1, 18, 0, 1, 1, 1, 1, ROWS, 1, 0)                                                \
    X(REDUCE_L1, "ReduceL1", "", 1, 18, 0, 1, 1, 1, 1, ROWS, 1, 0)                                                    \
    X(REDUCE_L2, "ReduceL2", "", 1, 18, 0, 1, 1, 1, 1, ROWS, 1, 0)                                                    \
    X(REDUCE_LOG_SUM, "ReduceLogSum", "", 1, 18, 0, 1, 1, 1, 1, ROWS, 1, 0)                                           \
    X(REDUCE_LOG_SUM_EXP, "ReduceLogSumExp", "", 1, 18, 0, 1, 1, 1, 1, ROWS, 8, 0)                                    \
    X(REDUCE_SUM_SQUARE, "ReduceSumSquare", "", 1, 18, 0, 1, 1, 1, 1, ROWS, 1, 0)                                     \
    X(ARG_MAX, "ArgMax", "", 1, 13, 0, 1, 1, 1, 0, ROWS, 1, 0)                                                        \
    X(ARG_MIN, "ArgMin", "", 1, 13, 0, 1, 1, 1, 0, ROWS, 1, 0)                                                        \
    X(LOG_SOFTMAX, "LogSoftmax", "", 1, 13, 0, 1, 1, 1, 0, ROWS, 8, OPARA__OPF_F32)                                   \
    X(HARDMAX, "Hardmax", "", 1, 13, 0, 1, 1, 1, 0, ROWS, 1, OPARA__OPF_F32)                                          \
    X(CUM_SUM, "CumSum", "", 11, 14, 0, 1, 1, 1, 1, ROWS, 1, 0)                                                       \
    X(WHERE, "Where", "", 9, 16, 0, 3, 3, 1, 0, ELEMENTWISE, 1, 0)                                                    \
    X(CAST, "Cast", "", 1, 25, 0, 1, 1, 1, 0, ELEMENTWISE, 0, 0)                                                      \
    X(PAD, "Pad", "", 1, 25, 0, 1, 1, 1, 1, ELEMENTWISE, 0, 0)                                                        \
    X(RESIZE, "Resize", "", 10, 19, 0, 1, 1, 1, 1, ELEMENTWISE, 0, 0)                                                 \
    X(NEG, "Neg", "", 1, 13, 0, 1, 1, 1, 0, ELEMENTWISE, 1, OPARA__OPF_INPLACE)                                       \
    X(ABS, "Abs", "", 1, 13, 0, 1, 1, 1, 0, ELEMENTWISE, 1, OPARA__OPF_INPLACE)                                       \
    X(EXP, "Exp", "", 1, 13, 0, 1, 1, 1, 0, ELEMENTWISE, 8, OPARA__OPF_F32 | OPARA__OPF_INPLACE)                      \
    X(LOG, "Log", "", 1, 13, 0, 1, 1, 1, 0, ELEMENTWISE, 8, OPARA__OPF_F32 | OPARA__OPF_INPLACE)                      \
    X(RECIPROCAL, "Reciprocal", "", 1, 13, 0, 1, 1, 1, 0, ELEMENTWISE, 1, OPARA__OPF_F32 | OPARA__OPF_INPLACE)        \
    X(FLOOR, "Floor", "", 1, 13, 0, 1, 1, 1, 0, ELEMENTWISE, 1, OPARA__OPF_F32 | OPARA__OPF_INPLACE)                  \
    X(CEIL, "Ceil", "", 1, 13, 0, 1, 1, 1, 0, ELEMENTWISE, 1, OPARA__OPF_F32 | OPARA__OPF_INPLACE)                    \
    X(ROUND, "Round", "", 11, 22, 0, 1, 1, 1, 0, ELEMENTWISE, 1, OPARA__OPF_F32 | OPARA__OPF_INPLACE)                 \
    X(SIGN, "Sign", "", 9, 13, 0, 1, 1, 1, 0, ELEMENTWISE, 1, OPARA__OPF_INPLACE)                                     \
    X(SIN, "Sin", "", 7, 22, 0, 1, 1, 1, 0, ELEMENTWISE, 8, OPARA__OPF_F32 | OPARA__OPF_INPLACE)                      \
    X(COS, "Cos", "", 7, 22, 0, 1, 1, 1, 0, ELEMENTWISE, 8, OPARA__OPF_F32 | OPARA__OPF_INPLACE)                      \
    X(TAN, "Tan", "", 7, 22, 0, 1, 1, 1, 0, ELEMENTWISE, 8, OPARA__OPF_F32 | OPARA__OPF_INPLACE)                      \
    X(SOFTPLUS, "Softplus", "", 1, 22, 0, 1, 1, 1, 0, ELEMENTWISE, 8, OPARA__OPF_F32 | OPARA__OPF_INPLACE)            \
    X(SOFTSIGN, "Softsign", "", 1, 22, 0, 1, 1, 1, 0, ELEMENTWISE, 2, OPARA__OPF_F32 | OPARA__OPF_INPLACE)            \
    X(ELU, "Elu", "", 1, 22, 0, 1, 1, 1, 0, ELEMENTWISE, 8, OPARA__OPF_F32 | OPARA__OPF_INPLACE)                      \
    X(SELU, "Selu", "", 1, 22, 0, 1, 1, 1, 0, ELEMENTWISE, 8, OPARA__OPF_F32 | OPARA__OPF_INPLACE)                    \
    X(CELU, "Celu", "", 12, 28, 0, 1, 1, 1, 0, ELEMENTWISE, 8, OPARA__OPF_F32 | OPARA__OPF_INPLACE)                   \
    X(THRESHOLDED_RELU, "ThresholdedRelu", "", 10, 22, 0, 1, 1, 1, 0, ELEMENTWISE, 1, OPARA__OPF_F32 | OPARA__OPF_INPLACE) \
    X(ASIN, "Asin", "", 7, 22, 0, 1, 1, 1, 0, ELEMENTWISE, 8, OPARA__OPF_F32 | OPARA__OPF_INPLACE)                    \
    X(ACOS, "Acos", "", 7, 22, 0, 1, 1, 1, 0, ELEMENTWISE, 8, OPARA__OPF_F32 | OPARA__OPF_INPLACE)                    \
    X(ATAN, "Atan", "", 7, 22, 0, 1, 1, 1, 0, ELEMENTWISE, 8, OPARA__OPF_F32 | OPARA__OPF_INPLACE)                    \
    X(SINH, "Sinh", "", 9, 22, 0, 1, 1, 1, 0, ELEMENTWISE, 8, OPARA__OPF_F32 | OPARA__OPF_INPLACE)                    \
    X(COSH, "Cosh", "", 9, 22, 0, 1, 1, 1, 0, ELEMENTWISE, 8, OPARA__OPF_F32 | OPARA__OPF_INPLACE)                    \
    X(ASINH, "Asinh", "", 9, 22, 0, 1, 1, 1, 0, ELEMENTWISE, 8, OPARA__OPF_F32 | OPARA__OPF_INPLACE)                  \
    X(ACOSH, "Acosh", "", 9, 22, 0, 1, 1, 1, 0, ELEMENTWISE, 8, OPARA__OPF_F32 | OPARA__OPF_INPLACE)                  \
    X(ATANH, "Atanh", "", 9, 22, 0, 1, 1, 1, 0, ELEMENTWISE, 8, OPARA__OPF_F32 | OPARA__OPF_INPLACE)                  \
    X(TOPK, "TopK", "", 1, 11, 24, 1, 1, 2, 1, ROWS, 1, OPARA__OPF_F32)                                             \
    X(GRID_SAMPLE, "GridSample", "", 16, 22, 0, 2, 2, 1, 0, ELEMENTWISE, 16, OPARA__OPF_F32)                        \
    X(DET, "Det", "", 11, 22, 0, 1, 1, 1, 0, MATMUL, 0, OPARA__OPF_F32)

/* The cost model of an operator (the op table's work column). */
typedef enum opara__op_work {
    OPARA__WORK_CONV,        /* 2 * outputs * taps (ConvTranspose: inputs * taps) */
    OPARA__WORK_MATMUL,      /* 2 * batch * M * N * K */
    OPARA__WORK_POOL,        /* outputs * window */
    OPARA__WORK_ROWS,        /* a reduction along rows: inputs * flops */
    OPARA__WORK_TRANSPOSE,   /* a tiled copy */
    OPARA__WORK_ELEMENTWISE, /* outputs * flops (copies, gathers: flops 0) */
    OPARA__WORK_VIEW         /* no kernel: the output aliases the input's bytes (a reshape) */
} opara__op_work;

#define OPARA__OPF_F32 1u
#define OPARA__OPF_INPLACE 2u
#define OPARA__OPF_COMPUTE 4u
#define OPARA__OPF_NO_OMITTED 8u
#define OPARA__OP_ANY 255 /* max_in/max_out without a limit */

typedef struct opara__op_info {
    const char* name;
    const char* domain;
    uint8_t since, until, next, min_inputs, max_inputs, max_outputs, kept_inputs, flops_per_elem;
    opara__op_work work;
    uint32_t flags;
} opara__op_info;

#define OPARA__OP_ENUM(id, name, domain, since, until, next, min_in, max_in, max_out, kept, work, flops, flags) \
    OPARA__OP_##id,
typedef enum opara__op { OPARA__OPS(OPARA__OP_ENUM) OPARA__OP_COUNT } opara__op;
#undef OPARA__OP_ENUM
/* A new operator changes this count on purpose: follow docs/ADDING-AN-OPERATOR.md, then update it. */
#define OPARA__OP_COUNT_EXPECTED 132
typedef char opara__op_count_check[OPARA__OP_COUNT == OPARA__OP_COUNT_EXPECTED ? 1 : -1];

/* The case labels of the element-wise math operators (Neg .. Atanh): one f32 input (Neg, Abs, Sign: also
   f64 and the integer types), one output of its shape and dtype, attributes (if any) scalars read into the record's u.activation. For the switches
   where they all behave alike; those that tell them apart list them one by one. */
#define OPARA__CASE_MATH_UNARY                                                                                     \
    case OPARA__OP_NEG: case OPARA__OP_ABS: case OPARA__OP_EXP: case OPARA__OP_LOG: case OPARA__OP_RECIPROCAL:      \
    case OPARA__OP_FLOOR: case OPARA__OP_CEIL: case OPARA__OP_ROUND: case OPARA__OP_SIGN: case OPARA__OP_SIN:      \
    case OPARA__OP_COS: case OPARA__OP_TAN: case OPARA__OP_SOFTPLUS: case OPARA__OP_SOFTSIGN: case OPARA__OP_ELU:  \
    case OPARA__OP_SELU: case OPARA__OP_CELU: case OPARA__OP_THRESHOLDED_RELU: case OPARA__OP_ASIN:                \
    case OPARA__OP_ACOS: case OPARA__OP_ATAN: case OPARA__OP_SINH: case OPARA__OP_COSH: case OPARA__OP_ASINH:      \
    case OPARA__OP_ACOSH: case OPARA__OP_ATANH

/* The case labels of the reductions ReduceSum .. ReduceSumSquare, which share ReduceMean's shape rule,
   record (u.reduce), import and kernels (the reduction kind tells them apart); ReduceMean itself is
   listed beside them. */
#define OPARA__CASE_REDUCE_KINDS                                                                                   \
    case OPARA__OP_REDUCE_SUM: case OPARA__OP_REDUCE_MAX: case OPARA__OP_REDUCE_MIN: case OPARA__OP_REDUCE_PROD:   \
    case OPARA__OP_REDUCE_L1: case OPARA__OP_REDUCE_L2: case OPARA__OP_REDUCE_LOG_SUM:                             \
    case OPARA__OP_REDUCE_LOG_SUM_EXP: case OPARA__OP_REDUCE_SUM_SQUARE

/* The reduction a Reduce* operator applies, in the op table's order from ReduceMean (the CUDA kernel
   opara_reduce_f32 takes the same numbers). */
typedef enum opara__reduce_kind {
    OPARA__RED_MEAN, OPARA__RED_SUM, OPARA__RED_MAX, OPARA__RED_MIN, OPARA__RED_PROD, OPARA__RED_L1, OPARA__RED_L2,
    OPARA__RED_LOG_SUM, OPARA__RED_LOG_SUM_EXP, OPARA__RED_SUM_SQUARE
} opara__reduce_kind;
/* 1 and the kind when op is one of ReduceMean .. ReduceSumSquare, else 0. */
OPARA__PRIVATE int opara__reduce_kind_of(opara__op op, opara__reduce_kind* kind);

/* The case labels of the logic operators' families: the comparisons (two inputs of one type, broadcast,
   a bool output), the binary logical operators (bool inputs, broadcast), the other broadcasting binary
   operators with attributes (Mod, BitShift), the unary ones (Not, IsNaN, IsInf: a bool output) and the
   variadic ones (1..N inputs of one type, multidirectional broadcast). */
#define OPARA__CASE_COMPARE                                                                                       \
    case OPARA__OP_EQUAL: case OPARA__OP_GREATER: case OPARA__OP_LESS: case OPARA__OP_GREATER_OR_EQUAL:            \
    case OPARA__OP_LESS_OR_EQUAL
#define OPARA__CASE_LOGIC_BINARY case OPARA__OP_AND: case OPARA__OP_OR: case OPARA__OP_XOR
#define OPARA__CASE_INT_BINARY case OPARA__OP_MOD: case OPARA__OP_BIT_SHIFT
#define OPARA__CASE_LOGIC_UNARY case OPARA__OP_NOT: case OPARA__OP_IS_NAN: case OPARA__OP_IS_INF
#define OPARA__CASE_VARIADIC case OPARA__OP_MAX: case OPARA__OP_MIN: case OPARA__OP_MEAN: case OPARA__OP_SUM
/* The operators whose output is bool whatever their inputs' type: the comparisons, And, Or, Xor, Not,
   IsNaN, IsInf. */
#define OPARA__OP_GIVES_BOOL(op)                                                                                  \
    ((op) == OPARA__OP_EQUAL || (op) == OPARA__OP_GREATER || (op) == OPARA__OP_LESS ||                              \
     (op) == OPARA__OP_GREATER_OR_EQUAL || (op) == OPARA__OP_LESS_OR_EQUAL || (op) == OPARA__OP_AND ||              \
     (op) == OPARA__OP_OR || (op) == OPARA__OP_XOR || (op) == OPARA__OP_NOT || (op) == OPARA__OP_IS_NAN ||          \
     (op) == OPARA__OP_IS_INF)

/* The symbolic batch dimension in declared shapes and in shape-valued attributes (Reshape,
   Expand): replaced by the session's batch size. */
#define OPARA__DIM_BATCH (-(INT64_C(1) << 62))

typedef enum opara__attr_type {
    OPARA__ATTR_INT = 1,
    OPARA__ATTR_FLOAT = 2,
    OPARA__ATTR_INTS = 3,
    OPARA__ATTR_FLOATS = 4,
    OPARA__ATTR_STRING = 5
} opara__attr_type;

typedef struct opara__attr {
    const char* name;
    opara__attr_type type;
    uint32_t count; /* elements of INTS/FLOATS, bytes of STRING (without the NUL) */
    union {
        int64_t i;
        float f;
        const int64_t* ints;
        const float* floats;
        const char* s;
    } v;
} opara__attr;

typedef enum opara__value_kind {
    OPARA__VALUE_ACTIVATION = 0, /* produced by a node */
    OPARA__VALUE_INPUT = 1,      /* a graph input the caller provides */
    OPARA__VALUE_CONST = 2       /* weights and other constants */
} opara__value_kind;

typedef struct opara__shape {
    int32_t ndim;
    int64_t dims[OPARA_MAX_DIMS];
} opara__shape;

/* How shape inference treats what it cannot resolve: strict (sessions: every dim known and every
   rule checked, a violation is an error) or tolerant (ONNX import: dims may be unknown (< 0) or
   the symbolic batch and propagate as unknown; a violation leaves the result unknown for the
   graph's checker to report). */
typedef enum opara__shape_mode { OPARA__SHAPE_STRICT, OPARA__SHAPE_TOLERANT } opara__shape_mode;

/* The numpy (multidirectional) broadcast rule, the only copy: the broadcast of n shapes into out
   and, when strides is not NULL, each input's element strides over out's dims (0 where that input
   is broadcast). Strict: 0 when two dims differ and neither is 1. Tolerant never fails: an unknown
   dim yields to a known one, dims that cannot broadcast become unknown, an unknown rank makes out
   unknown (strides are then not filled). */
OPARA__PRIVATE int opara__broadcast_shapes(const opara__shape* const* in, uint32_t n, opara__shape_mode mode,
                                           opara__shape* out, int64_t (*strides)[OPARA_MAX_DIMS]);
/* What the shape engine resolved for one node (opara__infer_shapes_params), read by the backends
   instead of the attributes: one family of fields per kind of op, in a union (only the node's
   family is set; the rest of the union is zero). */

/* The activation the ONNX importer fused into a Conv or Gemm (its attribute "activation": "Relu"),
   or into an Add, Sub, Mul or Div of f32 ("Relu", "Gelu" (erf) or "GeluTanh" (the tanh
   approximation)). UNKNOWN: another name (for Conv and Gemm any but Relu), which the CUDA lowering
   refuses, the CPU's Conv and Gemm ignore and its binary kernel refuses. */
typedef enum opara__fused_act {
    OPARA__FUSED_NONE, OPARA__FUSED_RELU, OPARA__FUSED_GELU, OPARA__FUSED_GELU_TANH, OPARA__FUSED_UNKNOWN
} opara__fused_act;

/* Conv, ConvTranspose, MaxPool, AveragePool: n_spatial dims, defaults filled in. */
typedef struct opara__window_params {
    int32_t n_spatial;
    int ceil_mode;         /* pools */
    int count_include_pad; /* AveragePool */
    int storage_order;     /* MaxPool's Indices */
    opara__fused_act activation; /* Conv */
    int has_output_shape;  /* ConvTranspose: output_shape given (it may extend past the full size) */
    int64_t group;        /* Conv, ConvTranspose */
    int64_t kernel[OPARA_MAX_DIMS], strides[OPARA_MAX_DIMS], dilations[OPARA_MAX_DIMS];
    int64_t pads[2 * OPARA_MAX_DIMS];       /* n_spatial begins then n_spatial ends, after auto_pad and output_shape */
    int64_t output_padding[OPARA_MAX_DIMS]; /* ConvTranspose */
    int64_t output_shape[OPARA_MAX_DIMS];   /* ConvTranspose: output_shape's spatial dims */
} opara__window_params;

/* Add, Sub, Mul, Div, Pow, Where, Expand: each input's element strides over output 0's dims (0
   where the input is broadcast), from opara__broadcast_shapes. */
typedef struct opara__broadcast_params {
    int64_t strides[3][OPARA_MAX_DIMS];
    int fmod;       /* Mod: its attribute (1: C's fmod, the dividend's sign; 0: the divisor's sign) */
    int shift_left; /* BitShift: direction "LEFT" (else "RIGHT") */
    opara__fused_act activation; /* Add, Sub, Mul, Div: applied to the result (the importer's fusion) */
} opara__broadcast_params;

/* IsInf: which infinities it detects (ONNX's defaults: both). */
typedef struct opara__is_inf_params {
    int detect_negative, detect_positive;
} opara__is_inf_params;

/* Slice, per input dim (untouched ones 0, 1, the dim): first index after ONNX's clamping, step, count. */
typedef struct opara__slice_params {
    int64_t start[OPARA_MAX_DIMS], step[OPARA_MAX_DIMS], count[OPARA_MAX_DIMS];
} opara__slice_params;

typedef enum opara__pad_mode { OPARA__PAD_CONSTANT, OPARA__PAD_REFLECT, OPARA__PAD_EDGE, OPARA__PAD_WRAP } opara__pad_mode;
/* ONNX's name of a pad mode (opara_shape.c parses it). */
OPARA__PRIVATE const char* opara__pad_mode_name(opara__pad_mode mode);

/* Pad: the pads of every input dim (axes applied, 0 where a dim is not padded; negative crops). */
typedef struct opara__pad_params {
    opara__pad_mode mode;
    float value; /* constant mode's fill: 'value', else 'constant_value', else 0 */
    int64_t begin[OPARA_MAX_DIMS], end[OPARA_MAX_DIMS];
} opara__pad_params;

/* Transpose: output dim d is input dim perm[d] (the reversal when the attribute is absent). */
typedef struct opara__transpose_params {
    int64_t perm[OPARA_MAX_DIMS];
} opara__transpose_params;

typedef enum opara__resize_mode { OPARA__RESIZE_NEAREST, OPARA__RESIZE_LINEAR, OPARA__RESIZE_CUBIC } opara__resize_mode;
/* ONNX's coordinate_transformation_mode and nearest_mode (UNKNOWN: a name ONNX does not define;
   the backends refuse it). */
typedef enum opara__resize_coord_mode {
    OPARA__RESIZE_HALF_PIXEL,
    OPARA__RESIZE_PYTORCH_HALF_PIXEL,
    OPARA__RESIZE_ALIGN_CORNERS,
    OPARA__RESIZE_ASYMMETRIC,
    OPARA__RESIZE_TF_HALF_PIXEL_FOR_NN,
    OPARA__RESIZE_TF_CROP_AND_RESIZE,
    OPARA__RESIZE_HALF_PIXEL_SYMMETRIC,
    OPARA__RESIZE_COORD_UNKNOWN
} opara__resize_coord_mode;
typedef enum opara__resize_nearest_mode {
    OPARA__NEAREST_ROUND_PREFER_FLOOR,
    OPARA__NEAREST_ROUND_PREFER_CEIL,
    OPARA__NEAREST_FLOOR,
    OPARA__NEAREST_CEIL,
    OPARA__NEAREST_UNKNOWN
} opara__resize_nearest_mode;

/* Resize, per input dim: the scale (from 'scales' through 'axes', else output / input), the roi
   (tf_crop_and_resize; 0 and 1 where not given). */
typedef struct opara__resize_params {
    opara__resize_mode mode;
    opara__resize_coord_mode coord;
    opara__resize_nearest_mode nearest;
    int antialias;
    float extrapolation_value;
    float cubic_coeff_a; /* cubic: the kernel's a (default -0.75) */
    int exclude_outside; /* cubic: taps outside the input get weight 0, the rest renormalized */
    float scale[OPARA_MAX_DIMS], roi_lo[OPARA_MAX_DIMS], roi_hi[OPARA_MAX_DIMS];
} opara__resize_params;

/* TopK: k (from the K input or attribute), largest, sorted. */
typedef struct opara__topk_params {
    int64_t k;
    int largest, sorted;
} opara__topk_params;

/* GridSample: its mode ("bilinear"/"linear", "nearest", "bicubic"/"cubic") and padding_mode parsed. */
typedef enum opara__grid_mode { OPARA__GRID_LINEAR, OPARA__GRID_NEAREST, OPARA__GRID_CUBIC } opara__grid_mode;
typedef enum opara__grid_padding { OPARA__GRID_ZEROS, OPARA__GRID_BORDER, OPARA__GRID_REFLECTION } opara__grid_padding;
typedef struct opara__grid_sample_params {
    opara__grid_mode mode;
    opara__grid_padding padding;
    int align_corners;
} opara__grid_sample_params;

/* The input coordinate of output index x of a dim resized from in to out elements (scale out / in
   unless sizes round it; roi for tf_crop_and_resize), ONNX's coordinate_transformation_mode. */
OPARA__PRIVATE double opara__resize_source(opara__resize_coord_mode mode, double scale, double roi_lo, double roi_hi,
                                          int64_t x, int64_t in, int64_t out);
/* Cubic taps of output index x along dim d: the four input indices floor(c) - 1 .. floor(c) + 2
   (clamped to the edges, as ONNX's reference pads them) and their weights (Keys' kernel with
   cubic_coeff_a; with exclude_outside the taps outside the input weigh 0 and the rest are
   renormalized); 0 where tf_crop_and_resize extrapolates. The CPU kernel and the CUDA lowering share it. */
OPARA__PRIVATE int opara__resize_cubic_taps(const opara__resize_params* rp, int32_t d, int64_t x, int64_t in, int64_t out,
                                           int64_t* idx, float* w);

/* Gemm: its attributes with ONNX's defaults. */
typedef struct opara__gemm_params {
    int trans_a, trans_b;
    float alpha, beta;
    opara__fused_act activation;
} opara__gemm_params;

/* The activation functions ONNX's recurrent operators name in 'activations'. */
typedef enum opara__rnn_act {
    OPARA__RNN_ACT_RELU, OPARA__RNN_ACT_TANH, OPARA__RNN_ACT_SIGMOID, OPARA__RNN_ACT_AFFINE, OPARA__RNN_ACT_LEAKY_RELU,
    OPARA__RNN_ACT_THRESHOLDED_RELU, OPARA__RNN_ACT_SCALED_TANH, OPARA__RNN_ACT_HARD_SIGMOID, OPARA__RNN_ACT_ELU,
    OPARA__RNN_ACT_SOFTSIGN, OPARA__RNN_ACT_SOFTPLUS
} opara__rnn_act;

#define OPARA__RNN_MAX_ACTS 6 /* LSTM: f, g, h for each of two directions */

/* LSTM, GRU, RNN: the sizes (ONNX's names), the direction (0 forward, 1 reverse, 2 bidirectional),
   the gates per direction (LSTM 4: i o f c; GRU 3: z r h; RNN 1), clip (HUGE_VALF: none) and the
   activations of each direction (n_acts per direction: LSTM f g h, GRU f g, RNN f) with their
   alpha and beta, ONNX's defaults applied. */
typedef struct opara__rnn_params {
    int64_t seq_length, batch_size, input_size, hidden_size;
    int32_t direction, num_directions, gates, n_acts;
    int layout, input_forget, linear_before_reset;
    float clip;
    opara__rnn_act act[OPARA__RNN_MAX_ACTS];
    float act_alpha[OPARA__RNN_MAX_ACTS], act_beta[OPARA__RNN_MAX_ACTS];
} opara__rnn_params;

/* LeakyRelu (alpha), HardSigmoid (alpha, beta), Clip (min, max), Gelu (tanh: approximate="tanh"),
   Elu, Celu and ThresholdedRelu (alpha), Selu (alpha, gamma), with ONNX's defaults. */
typedef struct opara__activation_params {
    float alpha, beta, min, max, gamma;
    int gelu_tanh;
} opara__activation_params;

/* LRN: its attributes with ONNX's defaults (size is required). */
typedef struct opara__lrn_params {
    float alpha, beta, bias;
    int64_t size;
} opara__lrn_params;

/* ReduceMean .. ReduceSumSquare: the input dims reduced (axes normalized, noop_with_empty_axes
   applied), keepdims. ArgMax, ArgMin: keepdims (their axis is the record's axis), select_last_index.
   CumSum: exclusive, reverse (its axis is the record's axis). MeanVarianceNormalization: the dims its
   moments run over (default 0, 2, 3). */
typedef struct opara__reduce_params {
    uint8_t axes[OPARA_MAX_DIMS];
    int keepdims;
    int select_last_index;
    int exclusive, reverse;
} opara__reduce_params;

/* QuantizeLinear, DequantizeLinear: the scale (and zero point) is one value or, per_axis, one per
   index of the record's axis (normalized); saturate and output_dtype with ONNX's defaults (output_dtype
   0: the zero point's type, else u8). */
typedef struct opara__quant_params {
    int per_axis;
    int saturate;
    int64_t output_dtype;
} opara__quant_params;

/* The reduction of ScatterElements and ScatterND ('reduction'; Scatter: none). */
typedef enum opara__scatter_reduction {
    OPARA__SCATTER_NONE, OPARA__SCATTER_ADD, OPARA__SCATTER_MUL, OPARA__SCATTER_MAX, OPARA__SCATTER_MIN
} opara__scatter_reduction;

/* The gather/scatter and index-pattern operators, with ONNX's defaults (the axis of GatherElements,
   ScatterElements, Scatter and OneHot is the record's axis): */
typedef struct opara__index_params {
    opara__scatter_reduction reduction; /* ScatterElements, ScatterND */
    int64_t batch_dims;                 /* GatherND */
    int upper;                          /* Trilu */
    int64_t k;                          /* Trilu, EyeLike: the diagonal */
    int crd;                            /* DepthToSpace: mode "CRD" (else DCR) */
    int64_t blocksize;                  /* DepthToSpace, SpaceToDepth */
    int64_t batch_axis, time_axis;      /* ReverseSequence */
    int64_t depth;                      /* OneHot */
} opara__index_params;

/* Einsum (one or two operands): each operand's element stride along every output dim and every
   summed label (a label repeated in an operand adds its strides: a diagonal; 0 where broadcast). */
typedef struct opara__einsum_params {
    int32_t n_sum;
    int64_t sum_dims[OPARA_MAX_DIMS];
    int64_t out_strides[2][OPARA_MAX_DIMS], sum_strides[2][OPARA_MAX_DIMS];
} opara__einsum_params;

typedef struct opara__node_params {
    int resolved; /* the engine inferred the node: the fields below are valid */
    int64_t axis; /* Concat, Split, Gather, Softmax, LogSoftmax, Hardmax, ArgMax, ArgMin, CumSum, LayerNormalization,
                     Flatten: in [0, rank]; Split's sizes are its outputs' dims along it */
    union {
        opara__window_params window;       /* Conv, ConvTranspose, ConvInteger, QLinearConv, MaxPool, AveragePool */
        opara__quant_params quant;         /* QuantizeLinear, DequantizeLinear */
        opara__broadcast_params broadcast; /* Add, Sub, Mul, Div, Pow, Where, Expand, the comparisons, And, Or,
                                              Xor, Mod, BitShift, Max, Min, Mean, Sum (the first 3 inputs) */
        opara__is_inf_params is_inf;       /* IsInf */
        opara__slice_params slice;         /* Slice */
        opara__pad_params pad;             /* Pad */
        opara__transpose_params transpose; /* Transpose */
        opara__topk_params topk;           /* TopK (its axis in axis) */
        opara__grid_sample_params grid;    /* GridSample */
        opara__resize_params resize;       /* Resize */
        opara__reduce_params reduce;       /* ReduceMean .. ReduceSumSquare, ArgMax, ArgMin, CumSum,
                                              MeanVarianceNormalization */
        opara__lrn_params lrn;             /* LRN */
        opara__einsum_params einsum;       /* Einsum */
        opara__gemm_params gemm;           /* Gemm */
        opara__rnn_params rnn;             /* LSTM, GRU, RNN */
        opara__activation_params activation; /* LeakyRelu, HardSigmoid, Clip, Gelu, Elu, Selu, Celu, ThresholdedRelu,
                                                Shrink (alpha: lambd, beta: bias) */
        float epsilon;                     /* BatchNormalization, LayerNormalization, InstanceNormalization */
        int64_t cast_to;                   /* Cast: 'to' (an ONNX data type), -1 when absent */
        opara__index_params index;         /* GatherElements .. ReverseSequence (the op table's rows after Gather) */
    } u;
} opara__node_params;

/* DepthToSpace (to_space; crd: mode CRD, else DCR) and SpaceToDepth of a 4-D input x_dims with
   blocksize b as a 6-D strided copy: the output's elements in order over dims, read from the input at
   the element strides (opara_shape.c; the CPU and CUDA backends both copy this way). */
OPARA__PRIVATE void opara__depth_space_view(const int64_t* x_dims, int64_t b, int to_space, int crd, int64_t* dims,
                                            int64_t* strides);
/* The bits of the value one in dtype t, little-endian in the type's size (0 for a type without one):
   EyeLike's diagonal. */
OPARA__PRIVATE uint64_t opara__dtype_one_bits(opara_dtype t);

/* The auto_pad attribute of Conv, ConvTranspose and the pools, parsed once (INVALID: not one of
   ONNX's four strings). */
typedef enum opara__auto_pad {
    OPARA__AUTO_PAD_NOTSET,
    OPARA__AUTO_PAD_SAME_UPPER,
    OPARA__AUTO_PAD_SAME_LOWER,
    OPARA__AUTO_PAD_VALID,
    OPARA__AUTO_PAD_INVALID
} opara__auto_pad;
/* Element strides of `in` broadcast to exactly `out` (0 where broadcast); 0 when it does not. */
OPARA__PRIVATE int opara__broadcast_to(const opara__shape* out, const opara__shape* in, int64_t* strides);

typedef struct opara__value {
    const char* name;
    opara_dtype dtype;
    opara__value_kind kind;
    int is_output;
    opara__shape shape;      /* declared for inputs and constants (may hold OPARA__DIM_BATCH); ndim -1 when unknown */
    const void* data;        /* constants: the bytes (in the pool, or in the caller's model buffer) */
    uint64_t nbytes;
    int32_t producer;        /* node index, or -1 */
} opara__value;

typedef struct opara__node {
    opara__op op;
    const char* name;
    uint32_t n_inputs, n_outputs, n_attrs;
    int32_t* inputs;   /* value indices; -1 marks an omitted optional input */
    int32_t* outputs;  /* value indices */
    opara__attr* attrs;
    uint32_t attr_cap;
} opara__node;

typedef struct opara__pool_block opara__pool_block;

typedef struct opara__pool {
    opara__pool_block* head;
    size_t used, cap;
} opara__pool;

typedef struct opara__graph {
    opara_runtime* rt;
    opara__pool pool;
    opara__value* values;
    uint32_t n_values;
    size_t cap_values;
    opara__node* nodes;
    uint32_t n_nodes;
    size_t cap_nodes;
    int32_t* inputs;   /* graph inputs, in order */
    uint32_t n_inputs;
    size_t cap_inputs;
    int32_t* outputs;  /* graph outputs, in order */
    uint32_t n_outputs;
    size_t cap_outputs;
    uint32_t* name_index; /* open addressing over value names: value index + 1, 0 = empty */
    uint32_t name_index_cap;
    const char* producer_name; /* metadata */
    int64_t source_opset;

    /* Derived by opara__graph_finalize(); NULL before. CSR arrays: the consumers of value v are
       consumer_nodes[consumer_start[v] .. consumer_start[v+1]), likewise preds/succs per node
       (distinct nodes, in first-use order of the inputs/outputs). */
    int finalized;
    uint32_t* topo; /* node indices in a deterministic topological order (Kahn, lowest index first) */
    uint32_t* consumer_start;
    uint32_t* consumer_nodes;
    uint32_t* pred_start;
    uint32_t* preds;
    uint32_t* succ_start;
    uint32_t* succs;
} opara__graph;

/* The op table's row of op (op < OPARA__OP_COUNT). */
OPARA__PRIVATE const opara__op_info* opara__op_info_of(opara__op op);
OPARA__PRIVATE const char* opara__op_name(opara__op op);
/* OPARA__OP_COUNT when the name is not an IR operator. */
OPARA__PRIVATE opara__op opara__op_from_name(const char* name);

/* Pool allocation: lives until the graph is freed; NULL on failure. */
OPARA__PRIVATE void* opara__pool_alloc(opara_runtime* rt, opara__pool* pool, size_t size, size_t alignment);
OPARA__PRIVATE const char* opara__pool_strdup(opara_runtime* rt, opara__pool* pool, const char* s);
OPARA__PRIVATE void opara__pool_free(opara_runtime* rt, opara__pool* pool);

OPARA__PRIVATE void opara__graph_init(opara__graph* g, opara_runtime* rt);
OPARA__PRIVATE void opara__graph_free(opara__graph* g);

/* Adds a value; the name must be unique and non-empty. shape may be NULL (unknown). Sets *index
   (-1 on failure) and returns why it failed, with the runtime's error set: OPARA_ERR_OUT_OF_MEMORY
   when an allocation failed, so callers propagate the code instead of choosing one. */
OPARA__PRIVATE opara_result opara__graph_insert_value(opara__graph* g, const char* name, opara_dtype dtype,
                                                     const opara__shape* shape, int32_t* index);
/* The same returning the index or -1, for tests and tools that build graphs known to be valid;
   library code uses opara__graph_insert_value, whose failure says why. */
OPARA__PRIVATE int32_t opara__graph_add_value(opara__graph* g, const char* name, opara_dtype dtype,
                                             const opara__shape* shape);
OPARA__PRIVATE int32_t opara__graph_find_value(const opara__graph* g, const char* name);
/* Makes v a constant holding data; copies it into the pool when copy is set, else keeps the pointer. */
OPARA__PRIVATE opara_result opara__graph_set_const(opara__graph* g, int32_t v, const void* data, uint64_t nbytes,
                                                  int copy);
OPARA__PRIVATE opara_result opara__graph_add_input(opara__graph* g, int32_t v);
OPARA__PRIVATE opara_result opara__graph_add_output(opara__graph* g, int32_t v);
/* Adds a node; inputs may contain -1 for omitted optional inputs. Sets *index (-1 on failure) and
   returns why it failed, like opara__graph_insert_value. */
OPARA__PRIVATE opara_result opara__graph_insert_node(opara__graph* g, opara__op op, const char* name,
                                                    uint32_t n_inputs, const int32_t* inputs, uint32_t n_outputs,
                                                    const int32_t* outputs, int32_t* index);
/* The same returning the index or -1 (tests and tools, as opara__graph_add_value). */
OPARA__PRIVATE_TOOL int32_t opara__graph_add_node(opara__graph* g, opara__op op, const char* name, uint32_t n_inputs,
                                            const int32_t* inputs, uint32_t n_outputs, const int32_t* outputs);
OPARA__PRIVATE opara_result opara__node_set_int(opara__graph* g, int32_t node, const char* name, int64_t value);
OPARA__PRIVATE opara_result opara__node_set_float(opara__graph* g, int32_t node, const char* name, float value);
OPARA__PRIVATE opara_result opara__node_set_ints(opara__graph* g, int32_t node, const char* name,
                                                const int64_t* values, uint32_t count);
OPARA__PRIVATE opara_result opara__node_set_floats(opara__graph* g, int32_t node, const char* name,
                                                  const float* values, uint32_t count);
OPARA__PRIVATE opara_result opara__node_set_string(opara__graph* g, int32_t node, const char* name, const char* value);

OPARA__PRIVATE const opara__attr* opara__node_attr(const opara__node* n, const char* name);
OPARA__PRIVATE int64_t opara__attr_int(const opara__node* n, const char* name, int64_t fallback);
OPARA__PRIVATE float opara__attr_float(const opara__node* n, const char* name, float fallback);
/* Pointer to the INTS values (and their count) or NULL when absent or of another type. */
OPARA__PRIVATE const int64_t* opara__attr_ints(const opara__node* n, const char* name, uint32_t* count);
OPARA__PRIVATE const char* opara__attr_string(const opara__node* n, const char* name, const char* fallback);
OPARA__PRIVATE opara__auto_pad opara__node_auto_pad(const opara__node* n);

/* Checks indices and single producers, computes consumers, predecessors, successors and the
   topological order. Fails with OPARA_ERR_CYCLE naming a node on a cycle. Idempotent. */
OPARA__PRIVATE opara_result opara__graph_finalize(opara__graph* g);

#endif /* OPARA_IR_H */
