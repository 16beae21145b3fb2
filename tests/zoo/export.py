"""Usage: export.py NAME OUT.onnx -- export one zoo model with torch.onnx.export (or, for
specs.ONNX_MODELS, write it with python3-onnx)."""
import importlib
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402

import specs  # noqa: E402
import zoo_common  # noqa: E402


def main(argv):
    if len(argv) != 3:
        sys.exit("usage: export.py NAME OUT.onnx")
    name, out = argv[1], argv[2]
    if name in specs.ONNX_MODELS:
        os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
        importlib.import_module(name).write(out)
        print("zoo: wrote %s -> %s" % (name, out))
        return
    torch.manual_seed(0)  # deterministic random weights
    torch.set_num_threads(os.cpu_count() or 1)
    if name in specs.TORCHVISION_MODELS:
        desc = importlib.import_module("torchvision_models").build(name)
    elif name in specs.OWN_MODELS:
        desc = importlib.import_module(name).build()
    else:
        sys.exit("export.py: unknown model " + name)
    if desc["inputs"][0].is_floating_point():
        zoo_common.calibrate_batchnorm(desc["model"], desc["inputs"][0])
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    zoo_common.export_model(desc["model"], desc["inputs"], desc["input_names"],
                            desc["output_names"], out, desc["opset"])
    print("zoo: exported %s -> %s" % (name, out))


if __name__ == "__main__":
    main(sys.argv)
