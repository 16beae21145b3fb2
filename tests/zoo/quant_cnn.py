"""A dynamically quantized CNN, written with python3-onnx as onnxruntime.quantization.quantize_dynamic
lays such a model out: every convolution and the classifier read their input through
DynamicQuantizeLinear (u8), multiply integers (ConvInteger with u8 weights, MatMulInteger with i8
weights, int32 out), then Cast to float, scale by input scale x weight scale (Mul) and add the float
bias. Weights are seeded random floats quantized here per tensor (u8 with a zero point, i8 symmetric).
Needs numpy and onnx only (no torch)."""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 13
CHANNELS = [3, 16, 32, 32]
CLASSES = 10
IMAGE = 32


def _quantize_u8(w):
    lo, hi = min(float(w.min()), 0.0), max(float(w.max()), 0.0)
    scale = np.float32((hi - lo) / 255.0)
    zp = np.uint8(np.clip(np.rint(-lo / scale), 0, 255))
    q = np.clip(np.rint(w / scale) + zp, 0, 255).astype(np.uint8)
    return q, scale, zp


def _quantize_i8(w):
    scale = np.float32(float(np.abs(w).max()) / 127.0)
    q = np.clip(np.rint(w / scale), -127, 127).astype(np.int8)
    return q, scale, np.int8(0)


class _Graph:
    def __init__(self):
        self.nodes, self.inits = [], []

    def const(self, name, array):
        self.inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def node(self, op, inputs, outputs, **attrs):
        self.nodes.append(helper.make_node(op, inputs, outputs, name=outputs[0] + "_" + op, **attrs))
        return outputs[0]

    def dequantized_product(self, tag, x, op, wq, wscale, wzp, bias, bias_shape, **attrs):
        """DynamicQuantizeLinear(x) -> op (integer) -> Cast -> Mul(x_scale * w_scale) -> Add(bias)."""
        xq, xs, xz = tag + "_xq", tag + "_xscale", tag + "_xzp"
        self.node("DynamicQuantizeLinear", [x], [xq, xs, xz])
        w = self.const(tag + "_wq", wq)
        ws = self.const(tag + "_wscale", wscale)
        wz = self.const(tag + "_wzp", wzp)
        scale = self.node("Mul", [xs, ws], [tag + "_scale"])
        acc = self.node(op, [xq, w, xz, wz], [tag + "_i32"], **attrs)
        f = self.node("Cast", [acc], [tag + "_f32"], to=TensorProto.FLOAT)
        y = self.node("Mul", [f, scale], [tag + "_scaled"])
        b = self.const(tag + "_bias", bias.reshape(bias_shape))
        return self.node("Add", [y, b], [tag + "_out"])


def write(path):
    rng = np.random.default_rng(2024)
    g = _Graph()
    x = "input"
    for i in range(3):
        cin, cout = CHANNELS[i], CHANNELS[i + 1]
        w = (rng.standard_normal((cout, cin, 3, 3)) * np.sqrt(2.0 / (cin * 9))).astype(np.float32)
        bias = (rng.standard_normal(cout) * 0.1).astype(np.float32)
        wq, ws, wz = _quantize_u8(w)
        y = g.dequantized_product("conv%d" % i, x, "ConvInteger", wq, ws, wz, bias, (1, cout, 1, 1),
                                  pads=[1, 1, 1, 1], kernel_shape=[3, 3])
        y = g.node("Relu", [y], ["relu%d" % i])
        if i < 2:
            y = g.node("MaxPool", [y], ["pool%d" % i], kernel_shape=[2, 2], strides=[2, 2])
        x = y
    x = g.node("GlobalAveragePool", [x], ["gap"])
    x = g.node("Flatten", [x], ["flat"], axis=1)
    w = (rng.standard_normal((CHANNELS[-1], CLASSES)) * np.sqrt(1.0 / CHANNELS[-1])).astype(np.float32)
    bias = (rng.standard_normal(CLASSES) * 0.1).astype(np.float32)
    wq, ws, wz = _quantize_i8(w)
    y = g.dequantized_product("fc", x, "MatMulInteger", wq, ws, wz, bias, (CLASSES,))
    g.node("Identity", [y], ["logits"])
    graph = helper.make_graph(
        g.nodes, "quant_cnn",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["N", CHANNELS[0], IMAGE, IMAGE])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", CLASSES])], g.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="opara-zoo")
    model.ir_version = 7
    onnx.checker.check_model(model)
    tmp = path + ".tmp"
    onnx.save(model, tmp)
    import os
    os.replace(tmp, path)  # a failed write never leaves a fresh-looking file behind
