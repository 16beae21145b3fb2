"""The torchvision classifiers, built exactly as torchvision ships them (random weights)."""
import torch
import torchvision


def build(name):
    m = torchvision.models
    if name == "googlenet":
        model = m.googlenet(weights=None, aux_logits=False, init_weights=True)
    elif name == "inception_v3":
        model = m.inception_v3(weights=None, aux_logits=False, init_weights=True)
    elif name == "squeezenet":
        model = m.squeezenet1_1(weights=None)
    elif name == "resnet50":
        model = m.resnet50(weights=None)
    else:
        raise ValueError("not a torchvision zoo model: " + name)
    size = 299 if name == "inception_v3" else 224
    example = torch.randn(2, 3, size, size)
    return dict(model=model, inputs=[example], input_names=["input"], output_names=["logits"], opset=13)
