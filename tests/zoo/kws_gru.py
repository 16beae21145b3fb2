"""Keyword spotting with a GRU back-end: MFCC frames [N, 49, 40] (time-major per example), a Linear
front-end with ReLU, a 2-layer GRU (hidden 64, batch_first; PyTorch's GRU exports with
linear_before_reset=1) and a classifier on the last layer's final state (the GRU's Y_h output)."""
import torch
from torch import nn

KWS = dict(mfcc=40, frames=49, features=64, hidden=64, layers=2, keywords=12)


class KwsGru(nn.Module):
    def __init__(self, cfg=KWS):
        super().__init__()
        self.front = nn.Sequential(nn.Linear(cfg["mfcc"], cfg["features"]), nn.ReLU())
        self.rnn = nn.GRU(cfg["features"], cfg["hidden"], num_layers=cfg["layers"], batch_first=True)
        self.classify = nn.Linear(cfg["hidden"], cfg["keywords"])

    def forward(self, mfcc):
        _, h = self.rnn(self.front(mfcc))  # h: [layers, N, hidden]
        return self.classify(h[-1])


def build():
    n = 2
    return dict(model=KwsGru(), inputs=[torch.randn(n, KWS["frames"], KWS["mfcc"])], input_names=["mfcc"],
                output_names=["logits"], opset=13)
