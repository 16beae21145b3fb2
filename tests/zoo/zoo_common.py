"""Export helper: torch.onnx.export the way users call it, then check the result."""
import collections
import inspect
import os

import numpy as np
import onnx

import specs


def legacy_exporter_args(export):
    """{"dynamo": False} when torch.onnx.export has a `dynamo` parameter (torch 2.5+; the default
    became True in torch 2.9), so every torch exports with the TorchScript exporter that the zoo's
    `dynamic_axes` and opsets are written for; {} for older torch (1.13 has no such parameter)."""
    try:
        params = inspect.signature(export).parameters
    except (TypeError, ValueError):
        return {}
    return {"dynamo": False} if "dynamo" in params else {}


def onnx_np_dtype(elem_type):
    """numpy dtype of an ONNX TensorProto data type (onnx.mapping is gone from newer onnx)."""
    to_np = getattr(onnx.helper, "tensor_dtype_to_np_dtype", None)
    if to_np is not None:
        return np.dtype(to_np(elem_type))
    from onnx import mapping  # onnx < 1.13
    return np.dtype(mapping.TENSOR_TYPE_TO_NP_TYPE[elem_type])


def export_model(model, example_inputs, input_names, output_names, path, opset):
    """Export in eval mode with a symbolic batch dimension N on every input and output."""
    import torch  # here, so that zoo_table.py works without torch
    model.eval()
    dynamic_axes = {name: {0: "N"} for name in list(input_names) + list(output_names)}
    tmp = path + ".tmp"
    with torch.no_grad():
        torch.onnx.export(model, tuple(example_inputs), tmp, opset_version=opset,
                          input_names=list(input_names), output_names=list(output_names),
                          dynamic_axes=dynamic_axes, do_constant_folding=True,
                          **legacy_exporter_args(torch.onnx.export))
    onnx.checker.check_model(tmp)
    os.replace(tmp, path)  # a failed export never leaves a fresh-looking file behind


def calibrate_batchnorm(model, example_input, batch=4):
    """Set every BatchNorm's running statistics to those of one seeded random batch.

    With random weights and the default running statistics (mean 0, variance 1), eval-mode
    activations drift by orders of magnitude (Inception-v3's logits reached 1e12), which
    makes numeric comparisons meaningless. Trained models have calibrated statistics; this
    gives random ones the same property. Returns False when the model has no BatchNorm.
    """
    import torch
    norms = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    if not norms:
        return False
    for m in norms:
        m.reset_running_stats()
        m.momentum = None  # cumulative average: after one batch, exactly that batch's statistics
    model.train()
    with torch.no_grad():
        model(torch.randn(batch, *example_input.shape[1:]))
    model.eval()
    return True


def op_counts(graph):
    return collections.Counter(node.op_type for node in graph.node)


def unsupported_ops(graph):
    return sorted(op for op in op_counts(graph) if op not in specs.SUPPORTED_OPS)
