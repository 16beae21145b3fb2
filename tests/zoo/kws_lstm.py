"""Keyword spotting with a recurrent back-end, as audio users build it: MFCC frames [N, 40, 49]
(40 coefficients, 49 frames of 20 ms: one second), a Conv1d front-end (BatchNorm, ReLU), a 2-layer
bidirectional LSTM (hidden 64, batch_first), and a classifier over the last frame's features into
12 keywords (the Speech Commands setup). Exported with its LSTM nodes as torch.onnx.export writes
them (Transposes around each batch-first layer, zero initial states, Y and Y_h/Y_c outputs)."""
import torch
from torch import nn

KWS = dict(mfcc=40, frames=49, channels=64, hidden=64, layers=2, keywords=12)


class KwsLstm(nn.Module):
    def __init__(self, cfg=KWS):
        super().__init__()
        self.front = nn.Sequential(nn.Conv1d(cfg["mfcc"], cfg["channels"], 3, padding=1),
                                   nn.BatchNorm1d(cfg["channels"]), nn.ReLU())
        self.rnn = nn.LSTM(cfg["channels"], cfg["hidden"], num_layers=cfg["layers"], batch_first=True,
                           bidirectional=True)
        self.classify = nn.Linear(2 * cfg["hidden"], cfg["keywords"])

    def forward(self, mfcc):
        x = self.front(mfcc).transpose(1, 2)  # [N, frames, channels]
        y, _ = self.rnn(x)                    # [N, frames, 2 * hidden]
        return self.classify(y[:, -1])


def build():
    n = 2
    return dict(model=KwsLstm(), inputs=[torch.randn(n, KWS["mfcc"], KWS["frames"])], input_names=["mfcc"],
                output_names=["logits"], opset=13)
