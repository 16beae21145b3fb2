"""Usage: zoo_table.py ZOO_DIR OUT.tsv -- onnx.checker on every zoo model, then one TSV line each.

Columns: name, file, opset, inputs and outputs (name:dtype[dims], symbolic batch as N,
other symbolic dims as ?), nodes, params (elements of float initializers and float Constant
tensors), bytes, op counts, and ops outside the converter's op set (empty when none).
A model that is missing (e.g. npm unavailable) is reported and left out of the table.
"""
import os
import sys

import numpy as np
import onnx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import specs  # noqa: E402
import zoo_common  # noqa: E402

COLUMNS = ["name", "file", "opset", "inputs", "outputs", "nodes", "params", "bytes", "ops", "unsupported_ops"]


def describe_values(values):
    parts = []
    for v in values:
        t = v.type.tensor_type
        dtype = zoo_common.onnx_np_dtype(t.elem_type).name
        dims = []
        for axis, d in enumerate(t.shape.dim):
            if d.HasField("dim_value"):
                dims.append(str(d.dim_value))
            else:
                dims.append("N" if axis == 0 else "?")
        parts.append("%s:%s[%s]" % (v.name, dtype, ",".join(dims)))
    return ";".join(parts)


FLOAT_TYPES = (onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16)


def count_params(graph):
    total = sum(int(np.prod(t.dims)) for t in graph.initializer if t.data_type in FLOAT_TYPES)
    for node in graph.node:
        if node.op_type == "Constant":
            for a in node.attribute:
                if a.name == "value" and a.t.data_type in FLOAT_TYPES:
                    total += int(np.prod(a.t.dims))
    return total


def row(name, path):
    onnx.checker.check_model(path)
    model = onnx.load(path)
    g = model.graph
    opset = next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
    counts = zoo_common.op_counts(g)
    ops = ",".join("%s:%d" % (op, n) for op, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
    outside = zoo_common.unsupported_ops(g)
    return [name, os.path.basename(path), str(opset), describe_values(g.input), describe_values(g.output),
            str(len(g.node)), str(count_params(g)), str(os.path.getsize(path)), ops, ",".join(outside)], outside


def main(argv):
    if len(argv) != 3:
        sys.exit("usage: zoo_table.py ZOO_DIR OUT.tsv")
    zoo_dir, out = argv[1], argv[2]
    lines = ["\t".join(COLUMNS)]
    for name in specs.ALL_MODELS:
        path = os.path.join(zoo_dir, name + ".onnx")
        if not os.path.exists(path):
            print("zoo: %s missing, left out of %s" % (name, out))
            continue
        fields, outside = row(name, path)
        print("zoo: %-17s onnx.checker OK  %5s nodes  %10s params%s" % (
            name, fields[5], fields[6], ("  OUTSIDE OP SET: " + ",".join(outside)) if outside else ""))
        lines.append("\t".join(fields))
    with open(out + ".tmp", "w") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(out + ".tmp", out)


if __name__ == "__main__":
    main(sys.argv)
