"""Usage: make_inputs.py ZOO_DIR NAME... -- deterministic batch-1 inputs for zoo models.

Writes ZOO_DIR/NAME/input_<i>.pb, one bare serialized onnx.TensorProto per graph input, in
graph input order. Float inputs: seeded standard normal. Integer index inputs: uniform in
their valid range (per column for DeepFM's fields). Attention masks: ones. Symbolic batch
dimensions become 1; other symbolic dimensions (PP-OCR's H and W) take the model's image size.
Needs numpy and onnx only.
"""
import os
import sys
import zlib

import numpy as np
import onnx
from onnx import numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import specs  # noqa: E402
import zoo_common  # noqa: E402


def concrete_shape(name, value):
    dims = []
    for axis, d in enumerate(value.type.tensor_type.shape.dim):
        if d.HasField("dim_value"):
            dims.append(d.dim_value)
        elif axis == 0:
            dims.append(1)
        else:
            dims.append(specs.IMAGE_SIZE[name])
    return dims


def make_array(rng, kind, shape, dtype):
    if kind[0] == "ones":
        return np.ones(shape, dtype)
    if kind[0] == "int":
        high = np.broadcast_to(np.asarray(kind[1], dtype=np.int64), shape)
        return np.floor(rng.random(shape) * high).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def write_inputs(zoo_dir, name):
    path = os.path.join(zoo_dir, name + ".onnx")
    if not os.path.exists(path):
        print("zoo: %s missing, no inputs written" % name)
        return
    graph = onnx.load(path, load_external_data=False).graph
    ranges = specs.input_ranges(name)
    out_dir = os.path.join(zoo_dir, name)
    os.makedirs(out_dir, exist_ok=True)
    for i, value in enumerate(graph.input):
        dtype = zoo_common.onnx_np_dtype(value.type.tensor_type.elem_type)
        kind = ranges.get(value.name, ("normal",))
        if kind[0] == "normal" and not np.issubdtype(dtype, np.floating):
            sys.exit("make_inputs.py: %s input %s is %s but has no range" % (name, value.name, dtype))
        rng = np.random.default_rng(zlib.crc32(("%s/%d" % (name, i)).encode()))
        array = make_array(rng, kind, concrete_shape(name, value), dtype)
        tensor = numpy_helper.from_array(array, value.name)
        with open(os.path.join(out_dir, "input_%d.pb" % i), "wb") as f:
            f.write(tensor.SerializeToString())
    print("zoo: %s inputs -> %s (%d files)" % (name, out_dir, len(graph.input)))


def main(argv):
    if len(argv) < 3:
        sys.exit("usage: make_inputs.py ZOO_DIR NAME...")
    for name in argv[2:]:
        write_inputs(argv[1], name)


if __name__ == "__main__":
    main(sys.argv)
