"""Writes what onnx.numpy_helper reads from ONNX test data .pb files and the node counts the
importer must produce for zoo models, so tests/test_onnx.c compares against an independent
reader.  usage: onnx_expected.py tensors OUT | zoo ZOO_DIR OUT   (no onnx/data: writes nothing)"""
import glob, os, sys

DATA = "/usr/share/libonnx-testdata/data"


def tensors(out):
    import numpy as np
    from onnx import TensorProto, numpy_helper
    files = sorted(glob.glob(DATA + "/node/test_*/test_data_set_0/*.pb"))
    files += sorted(glob.glob(DATA + "/pytorch-converted/test_*/test_data_set_0/*.pb"))
    lines = []
    for path in files:
        t = TensorProto()
        with open(path, "rb") as f:
            try:
                t.ParseFromString(f.read())
            except Exception:
                continue
        if t.data_type not in (1, 2, 3, 6, 7, 9, 10, 11) or not t.ListFields():
            continue
        try:
            a = numpy_helper.to_array(t)
        except Exception:  # SequenceProto/OptionalProto files parse as garbage tensors
            continue
        flat = a.astype(np.float64).ravel()
        first = flat[0] if flat.size else 0.0
        lines.append("%s %d %d %s %d %.17g %.17g" % (path, t.data_type, a.ndim, ",".join(map(str, a.shape)) or "-",
                                                     a.size, float(np.sum(flat)), float(first)))
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")


FOLDABLE = {"Shape", "Gather", "Unsqueeze", "Squeeze", "Concat", "Slice", "Cast", "Add", "Sub", "Mul", "Div",
            "Reshape", "ConstantOfShape", "Range", "Equal", "Where", "Transpose", "Flatten", "Sqrt", "Pow"}


def zero_pad(n, init):
    """A constant Pad's pads (opset >= 11: from initializers or Constant nodes) when its value is 0, else None."""
    from onnx import numpy_helper
    attrs = {a.name: a for a in n.attribute}
    if "mode" in attrs and attrs["mode"].s not in (b"", b"constant"):
        return None
    if len(n.input) < 2 or n.input[1] not in init:
        return None
    if len(n.input) > 2 and n.input[2]:
        if n.input[2] not in init or float(numpy_helper.to_array(init[n.input[2]])) != 0.0:
            return None
    return [int(v) for v in numpy_helper.to_array(init[n.input[1]])]


def pool_takes_pad(n, pads):
    """An unpadded AveragePool absorbs a zero pad of its spatial dims smaller than its window."""
    attrs = {a.name: a for a in n.attribute}
    kernel = list(attrs["kernel_shape"].ints)
    rank = len(kernel) + 2
    if len(pads) != 2 * rank or any(pads[i] or pads[rank + i] for i in (0, 1)):
        return False
    if any(attrs[k].ints and any(attrs[k].ints) for k in ("pads",) if k in attrs):
        return False
    if "dilations" in attrs and any(d != 1 for d in attrs["dilations"].ints):
        return False
    if attrs.get("ceil_mode") and attrs["ceil_mode"].i or attrs.get("auto_pad") and attrs["auto_pad"].s not in (b"", b"NOTSET"):
        return False
    return all(0 <= pads[2 + i] < kernel[i] and 0 <= pads[rank + 2 + i] < kernel[i] for i in range(len(kernel)))


BINARY = ("Add", "Sub", "Mul", "Div")  # the operators a following Relu or Gelu fuses into


def gelu_chains(kept, init, uses, outputs):
    """Erf-form GELU chains (x/sqrt2 or x*(1/sqrt2) -> Erf -> +1 -> *x -> *0.5, or *0.5 then *x), each
    intermediate read once and no graph output: the importer makes each one Gelu node (5 -> 1). Returns
    their count and how many of them then fuse into the binary operator that makes x."""
    import math
    from onnx import numpy_helper
    by_out = {o: (n, ins) for n, ins in kept for o in n.output}
    readers = {}
    for n, ins in kept:
        for i in ins: readers.setdefault(i, []).append((n, ins))

    def scalar(v, want):
        if v not in init: return False
        a = numpy_helper.to_array(init[v])
        return a.size == 1 and a.ndim <= 1 and abs(float(a.reshape(-1)[0]) - want) <= 1e-6 * want

    def single(v):
        return uses.get(v) == 1 and v not in outputs

    def next_op(v, op):
        r = readers.get(v, [])
        return r[0] if single(v) and len(r) == 1 and r[0][0].op_type == op else None

    def other(ins, v):
        return [i for i in ins if i != v][0] if len(ins) == 2 and v in ins and ins[0] != ins[1] else None

    count = into_binary = 0
    for n, ins in kept:
        if n.op_type != "Erf" or not single(ins[0]) or ins[0] not in by_out: continue
        p, pins = by_out[ins[0]]
        if p.op_type == "Div" and scalar(pins[1], math.sqrt(2)): x = pins[0]
        elif p.op_type == "Mul" and scalar(pins[1], math.sqrt(0.5)): x = pins[0]
        elif p.op_type == "Mul" and scalar(pins[0], math.sqrt(0.5)): x = pins[1]
        else: continue
        a = next_op(n.output[0], "Add")
        if not a or not scalar(other(a[1], n.output[0]), 1.0): continue
        m1 = next_op(a[0].output[0], "Mul")
        if not m1: continue
        o1 = other(m1[1], a[0].output[0])
        m2 = next_op(m1[0].output[0], "Mul")
        o2 = m2 and other(m2[1], m1[0].output[0])
        if m2 and ((o1 == x and scalar(o2, 0.5)) or (scalar(o1, 0.5) and o2 == x)):
            count += 1
        elif o1 in by_out and single(o1) and by_out[o1][0].op_type == "Mul" and scalar(other(by_out[o1][1], x), 0.5):
            count += 1
        else:
            continue
        # the Gelu then goes into the binary operator that makes x when the chain's two reads are x's only
        if x in by_out and by_out[x][0].op_type in BINARY and uses.get(x) == 2 and x not in outputs:
            into_binary += 1
    return count, into_binary


def zoo(zoo_dir, out):
    import onnx
    lines = []
    for path in sorted(glob.glob(os.path.join(zoo_dir, "*.onnx"))):
        g = onnx.load(path, load_external_data=False).graph
        const = {i.name for i in g.initializer}
        init = {i.name: i for i in g.initializer}
        init.update({n.output[0]: a.t for n in g.node if n.op_type == "Constant" for a in n.attribute if a.name == "value"})
        nodes = list(g.node)
        kept = []
        alias = {}
        # nodes are in topological order in torch exports
        for n in nodes:
            ins = [alias.get(i, i) for i in n.input if i]
            if n.op_type == "Constant":
                const.add(n.output[0]); continue
            if n.op_type in ("Identity", "Dropout"):
                alias[n.output[0]] = ins[0]
                if ins[0] in const: const.add(n.output[0])
                continue
            if n.op_type == "Shape" or (n.op_type in FOLDABLE and all(i in const for i in ins)):
                const.update(n.output); continue
            kept.append((n, ins))
        outputs = {alias.get(o.name, o.name) for o in g.output}
        # nodes whose outputs only Shape (folded) or nothing reads are dead: the importer drops them
        while True:
            read = {i for _, ins in kept for i in ins} | outputs
            live = [(n, ins) for n, ins in kept if any(o in read for o in n.output)]
            if len(live) == len(kept):
                break
            kept = live
        producer = {}
        uses = {}
        for n, ins in kept:
            for o in n.output: producer[o] = n.op_type
            for i in ins: uses[i] = uses.get(i, 0) + 1
        fused = 0
        pads_of = {}  # Pad output -> its pads, when the Pad is a zero pad (AveragePool takes it over)
        for n, ins in kept:
            if n.op_type == "Pad":
                pads = zero_pad(n, init)
                if pads is not None: pads_of[n.output[0]] = pads
            if n.op_type == "AveragePool" and ins and uses.get(ins[0]) == 1 and ins[0] not in outputs and \
                    ins[0] in pads_of and pool_takes_pad(n, pads_of[ins[0]]):
                fused += 1
        for n, ins in kept:
            if n.op_type in ("BatchNormalization", "Relu") and ins and uses.get(ins[0]) == 1 and ins[0] not in outputs:
                p = producer.get(ins[0])
                if p == "Conv" or (p == "Gemm" and n.op_type == "Relu"):
                    fused += 1
                    if n.op_type == "BatchNormalization":  # the Conv now produces the BN output
                        producer[n.output[0]] = "Conv"
                elif n.op_type == "Relu" and p in BINARY:  # Add -> Relu: the Add takes it
                    fused += 1
            gelu = n.op_type == "Gelu" and all(a.s in (b"none", b"tanh") for a in n.attribute if a.name == "approximate")
            if gelu and ins and uses.get(ins[0]) == 1 and ins[0] not in outputs and producer.get(ins[0]) in BINARY:
                fused += 1
        chains, into_binary = gelu_chains(kept, init, uses, outputs)
        fused += chains * 4 + into_binary
        # f16 models compute in f32 (docs/ARCHITECTURE.md): a Cast after each f16 graph input, one before
        # each f16 graph output (unless a Cast to f16 makes it), one after a Cast to f16 that is consumed
        F16 = 10
        cast_to_f16 = {n.output[0] for n, _ in kept if n.op_type == "Cast" and
                       any(a.name == "to" and a.i == F16 for a in n.attribute)}
        widen = sum(1 for i in g.input if i.name not in init and i.type.tensor_type.elem_type == F16)
        widen += sum(1 for o in g.output if o.type.tensor_type.elem_type == F16 and alias.get(o.name, o.name) not in cast_to_f16)
        widen += sum(1 for c in cast_to_f16 if uses.get(c))
        lines.append("%s %d %d" % (os.path.basename(path)[:-5], len(g.node), len(kept) - fused + widen))
    with open(out, "w") as f:
        f.write("\n".join(lines) + ("\n" if lines else ""))


if __name__ == "__main__":
    try:
        if sys.argv[1] == "tensors":
            tensors(sys.argv[2])
        else:
            zoo(sys.argv[2], sys.argv[3])
    except ImportError as e:
        print("onnx_expected.py: %s; nothing written" % e)
