"""Usage: to_fp16.py IN.onnx OUT.onnx -- convert a float32 zoo export to float16, as users do.

What onnxconverter-common's convert_float_to_float16(keep_io_types=False) does, with python3-onnx
only (a fresh machine gets onnx from the project's setup, not onnxconverter-common): every float32
initializer and Constant tensor becomes float16, so do the graph's float inputs and outputs and
every float value_info, and a Cast to float becomes a Cast to float16. The result passes
onnx.checker and full shape inference (strict mode), so every node's types agree.
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper


def to_half(tensor):
    if tensor.data_type != TensorProto.FLOAT:
        return tensor
    half = numpy_helper.from_array(numpy_helper.to_array(tensor).astype(np.float16), tensor.name)
    tensor.CopyFrom(half)
    return tensor


def retype(value_info):
    tt = value_info.type.tensor_type
    if tt.elem_type == TensorProto.FLOAT:
        tt.elem_type = TensorProto.FLOAT16


def convert(model):
    graph = model.graph
    for init in graph.initializer:
        to_half(init)
    for node in graph.node:
        for attr in node.attribute:
            if node.op_type == "Constant" and attr.name == "value":
                to_half(attr.t)
            if node.op_type == "Cast" and attr.name == "to" and attr.i == TensorProto.FLOAT:
                attr.i = TensorProto.FLOAT16
    for vi in list(graph.input) + list(graph.output) + list(graph.value_info):
        retype(vi)
    return model


def main(argv):
    if len(argv) != 3:
        sys.exit("usage: to_fp16.py IN.onnx OUT.onnx")
    model = convert(onnx.load(argv[1]))
    onnx.checker.check_model(model)
    onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
    onnx.save(model, argv[2])
    print("zoo: converted %s to float16 -> %s" % (argv[1], argv[2]))


if __name__ == "__main__":
    main(sys.argv)
