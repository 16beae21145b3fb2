"""DeepFM (Guo et al. 2017, "DeepFM: A Factorization-Machine based Neural Network for CTR
Prediction"): an FM component and a deep component sharing the same feature embeddings,
run in parallel and added before the output sigmoid.

39 fields as in the Criteo setup of the paper, one embedding table (and one first-order
weight table) per field, embedding size 10, deep part 400-400-400 with ReLU.
Inputs: feat_index int64 [N, 39] (per-field indices, looked up with Gather) and
feat_value float [N, 39] (value of each field, 1 for one-hot categorical fields).
"""
import torch
import torch.nn as nn

import specs


class DeepFM(nn.Module):
    def __init__(self):
        super().__init__()
        cfg = specs.DEEPFM
        sizes, k = cfg["field_sizes"], cfg["embed"]
        self.num_fields, self.embed = len(sizes), k
        self.embeddings = nn.ModuleList(nn.Embedding(n, k) for n in sizes)
        self.first_order = nn.ModuleList(nn.Embedding(n, 1) for n in sizes)
        for table in list(self.embeddings) + list(self.first_order):
            nn.init.normal_(table.weight, 0.0, 0.01)
        self.bias = nn.Parameter(0.01 * torch.randn(1))
        layers, width = [], self.num_fields * k
        for hidden in cfg["hidden"]:
            layers += [nn.Linear(width, hidden), nn.ReLU()]  # dropout: identity at inference
            width = hidden
        layers.append(nn.Linear(width, 1))
        self.deep = nn.Sequential(*layers)

    def forward(self, feat_index, feat_value):
        embedded, linear = [], []
        for f in range(self.num_fields):
            value = feat_value[:, f:f + 1]
            embedded.append(self.embeddings[f](feat_index[:, f]) * value)       # [N, K]
            linear.append(self.first_order[f](feat_index[:, f]) * value)        # [N, 1]
        v = torch.stack(embedded, 1)                                           # [N, F, K]
        # Sums are written as mean * count: ReduceSum is not in the converter's op set.
        n, k = float(self.num_fields), float(self.embed)
        first = torch.cat(linear, 1).mean(1, keepdim=True) * n + self.bias     # [N, 1]
        sum_v = v.mean(1) * n                                                  # [N, K]
        sum_sq = (v * v).mean(1) * n
        second = 0.5 * k * (sum_v * sum_v - sum_sq).mean(1, keepdim=True)     # [N, 1]
        deep = self.deep(v.flatten(1))
        return torch.sigmoid(first + second + deep)


def build():
    n = 2
    sizes = specs.DEEPFM["field_sizes"]
    index = torch.stack([torch.randint(0, s, (n,)) for s in sizes], 1)
    value = torch.ones(n, len(sizes))
    return dict(model=DeepFM(), inputs=[index, value], input_names=["feat_index", "feat_value"],
                output_names=["probability"], opset=13)
