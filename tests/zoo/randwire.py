"""RandWire-WS, small regime (Xie et al. 2019, "Exploring Randomly Wired Neural Networks
for Image Recognition", Table 1): conv1 3x3/2 C/2, conv2 3x3/2 C, then three random stages
(32 nodes each, C, 2C, 4C channels, each starting with stride 2), a 1x1 conv to 1280,
global pooling and a classifier; C = 78, graphs WS(k=4, p=0.75) drawn with fixed seeds.

A graph is turned into a DAG by orienting every edge from the lower to the higher node
index. A node aggregates its inputs by a weighted sum with sigmoid-positive learnable
weights and transforms them with ReLU - separable 3x3 conv - BN. Nodes without inputs read
the stage input (stride 2); the stage output is the plain average of the nodes without
outputs.
"""
import random

import torch
import torch.nn as nn

CHANNELS = 78
NODES = 32
WS_K = 4
WS_P = 0.75
GRAPH_SEEDS = (1, 2, 3)  # one independently drawn graph per stage


def watts_strogatz(n, k, p, seed):
    """Undirected WS graph: ring lattice with k neighbours, each clockwise edge rewired with prob. p."""
    rng = random.Random(seed)
    adj = [set() for _ in range(n)]
    for u in range(n):
        for j in range(1, k // 2 + 1):
            v = (u + j) % n
            adj[u].add(v)
            adj[v].add(u)
    for j in range(1, k // 2 + 1):
        for u in range(n):
            v = (u + j) % n
            if v not in adj[u] or rng.random() >= p or len(adj[u]) >= n - 1:
                continue
            w = rng.randrange(n)
            while w == u or w in adj[u]:
                w = rng.randrange(n)
            adj[u].discard(v)
            adj[v].discard(u)
            adj[u].add(w)
            adj[w].add(u)
    return adj


def dag_predecessors(adj):
    return [sorted(v for v in adj[u] if v < u) for u in range(len(adj))]


class NodeOp(nn.Module):
    """Weighted-sum aggregation followed by ReLU - separable 3x3 conv - BN."""

    def __init__(self, num_inputs, cin, cout, stride):
        super().__init__()
        self.agg_weights = nn.Parameter(torch.randn(num_inputs)) if num_inputs > 1 else None
        self.body = nn.Sequential(nn.ReLU(),
                                  nn.Conv2d(cin, cin, 3, stride, 1, groups=cin, bias=False),
                                  nn.Conv2d(cin, cout, 1, bias=False),
                                  nn.BatchNorm2d(cout))

    def forward(self, inputs):
        if self.agg_weights is None:
            x = inputs[0]
        else:
            w = torch.sigmoid(self.agg_weights)
            x = inputs[0] * w[0]
            for i in range(1, len(inputs)):
                x = x + inputs[i] * w[i]
        return self.body(x)


class RandomStage(nn.Module):
    def __init__(self, cin, cout, seed):
        super().__init__()
        self.preds = dag_predecessors(watts_strogatz(NODES, WS_K, WS_P, seed))
        has_succ = set(p for ps in self.preds for p in ps)
        self.outputs = [u for u in range(NODES) if u not in has_succ]
        self.nodes = nn.ModuleList(
            NodeOp(1, cin, cout, 2) if not ps else NodeOp(len(ps), cout, cout, 1) for ps in self.preds)

    def forward(self, x):
        values = []
        for u, ps in enumerate(self.preds):
            values.append(self.nodes[u]([x] if not ps else [values[p] for p in ps]))
        out = values[self.outputs[0]]
        for u in self.outputs[1:]:
            out = out + values[u]
        return out / len(self.outputs)


class RandWireSmall(nn.Module):
    def __init__(self, num_classes=1000):
        super().__init__()
        c = CHANNELS
        self.conv1 = nn.Sequential(nn.Conv2d(3, c // 2, 3, 2, 1, bias=False), nn.BatchNorm2d(c // 2))
        self.conv2 = nn.Sequential(nn.ReLU(), nn.Conv2d(c // 2, c, 3, 2, 1, bias=False), nn.BatchNorm2d(c))
        self.conv3 = RandomStage(c, c, GRAPH_SEEDS[0])
        self.conv4 = RandomStage(c, 2 * c, GRAPH_SEEDS[1])
        self.conv5 = RandomStage(2 * c, 4 * c, GRAPH_SEEDS[2])
        self.head = nn.Sequential(nn.ReLU(), nn.Conv2d(4 * c, 1280, 1, bias=False), nn.BatchNorm2d(1280),
                                  nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.fc = nn.Linear(1280, num_classes)

    def forward(self, x):
        x = self.conv2(self.conv1(x))
        x = self.conv5(self.conv4(self.conv3(x)))
        return self.fc(self.head(x))


def build():
    return dict(model=RandWireSmall(), inputs=[torch.randn(2, 3, 224, 224)], input_names=["input"],
                output_names=["logits"], opset=13)
