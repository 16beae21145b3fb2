"""Export helper: torch.onnx.export the way users call it, then check the result."""
import collections
import os

import onnx

import specs


def export_model(model, example_inputs, input_names, output_names, path, opset):
    """Export in eval mode with a symbolic batch dimension N on every input and output."""
    import torch  # here, so that zoo_table.py works without torch
    model.eval()
    dynamic_axes = {name: {0: "N"} for name in list(input_names) + list(output_names)}
    tmp = path + ".tmp"
    with torch.no_grad():
        torch.onnx.export(model, tuple(example_inputs), tmp, opset_version=opset,
                          input_names=list(input_names), output_names=list(output_names),
                          dynamic_axes=dynamic_axes, do_constant_folding=True)
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
