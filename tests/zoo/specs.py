"""Sizes and input descriptions shared by the zoo's exporters and make_inputs.py.

Plain Python (no torch import) so that make_inputs.py runs with numpy and onnx only.
"""
import random

# Models exported with torch.onnx.export, and the one taken as a pretrained file.
TORCHVISION_MODELS = ["googlenet", "inception_v3", "squeezenet", "resnet50"]
OWN_MODELS = ["nasnet_mobile", "randwire", "deepfm", "bert_base", "t5_small_encoder"]
# Models written with python3-onnx directly (their module's write(path)), not exported from torch.
ONNX_MODELS = ["quant_cnn"]
OWN_MODELS += ["kws_lstm", "kws_gru"]  # recurrent: LSTM, GRU
PRETRAINED_MODELS = ["ppocr_det"]
# float16 conversions of zoo exports (to_fp16.py): name -> the float32 model it is made from.
FP16_MODELS = {"squeezenet_fp16": "squeezenet"}
ALL_MODELS = TORCHVISION_MODELS + OWN_MODELS + ONNX_MODELS + PRETRAINED_MODELS + list(FP16_MODELS)

# The op set the converter supports. ConstantOfShape, Equal and Range are accepted
# by the converter only when they fold away, so they count as outside here.
SUPPORTED_OPS = frozenset("""
Conv ConvTranspose QuantizeLinear DequantizeLinear DynamicQuantizeLinear ConvInteger MatMulInteger
QLinearConv QLinearMatMul MaxPool AveragePool GlobalAveragePool BatchNormalization
Relu LeakyRelu Sigmoid Tanh HardSigmoid HardSwish Clip
Add Sub Mul Div Pow Sqrt Erf Gelu
Equal Greater Less GreaterOrEqual LessOrEqual And Or Xor Mod BitShift Not IsNaN IsInf
Max Min Mean Sum
Neg Abs Exp Log Reciprocal Floor Ceil Round Sign Sin Cos Tan Softplus Softsign
Elu Selu Celu ThresholdedRelu Asin Acos Atan Sinh Cosh Asinh Acosh Atanh
Concat Split Slice Gather Reshape Flatten Transpose Squeeze Unsqueeze Expand
GatherElements ScatterElements Scatter GatherND ScatterND Size Trilu Tile DepthToSpace SpaceToDepth EyeLike OneHot ReverseSequence
Gemm LSTM GRU RNN MatMul Softmax LayerNormalization ReduceMean Where Cast Pad Resize
ReduceSum ReduceMax ReduceMin ReduceProd ReduceL1 ReduceL2 ReduceLogSum ReduceLogSumExp ReduceSumSquare
ArgMax ArgMin LogSoftmax Hardmax CumSum
Constant Shape Identity Dropout
""".split())

# BERT-base (Devlin et al. 2019; Hugging Face BertModel layout).
BERT = dict(vocab=30522, max_positions=512, type_vocab=2, hidden=768, layers=12,
            heads=12, intermediate=3072, seq=128, ln_eps=1e-12)

# T5-small encoder (Raffel et al. 2020).
T5 = dict(vocab=32128, d_model=512, layers=6, heads=8, d_kv=64, d_ff=2048, seq=128,
          num_buckets=32, max_distance=128, ln_eps=1e-6)


def _deepfm_field_sizes():
    """39 fields as in Criteo: 13 small-range (bucketized counts) + 26 categorical."""
    rng = random.Random(2017)
    counts = [rng.randint(8, 128) for _ in range(13)]
    categorical = [rng.randint(4, 20000) for _ in range(26)]
    return counts + categorical


# DeepFM (Guo et al. 2017): embedding size 10, deep part 400-400-400 as in the paper's Criteo setup.
DEEPFM = dict(field_sizes=_deepfm_field_sizes(), embed=10, hidden=[400, 400, 400])

IMAGE_SIZE = {"inception_v3": 299, "ppocr_det": 320}


def input_ranges(name):
    """Per input name: ('normal',) | ('ones',) | ('int', [high per column] or high)."""
    if name == "bert_base":
        return {"input_ids": ("int", BERT["vocab"]), "token_type_ids": ("int", BERT["type_vocab"]),
                "attention_mask": ("ones",)}
    if name == "t5_small_encoder":
        return {"input_ids": ("int", T5["vocab"]), "attention_mask": ("ones",)}
    if name == "deepfm":
        return {"feat_index": ("int", DEEPFM["field_sizes"]), "feat_value": ("normal",)}
    return {}
