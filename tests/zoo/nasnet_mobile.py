"""NASNet-A mobile (Zoph et al. 2018, "Learning Transferable Architectures for Scalable
Image Recognition"), configuration 4@1056: 4 normal cells per stack, 1056 filters in the
penultimate layer, 224x224 input.

The cells follow the paper's NASNet-A normal and reduction cells (Fig. 4, Appendix A):
separable convolutions are applied twice (ReLU-sep-BN, ReLU-sep-BN), the previous cell's
output is fitted to the current one by a factorized reduction when its resolution is higher
and by ReLU-1x1 conv-BN otherwise, and a cell's output concatenates its unused hidden states.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

STEM_FILTERS = 32
PENULTIMATE_FILTERS = 1056
CELLS_PER_STACK = 4
FILTER_SCALING = 2  # filters double at each reduction


def conv_bn(cin, cout):
    """ReLU - 1x1 conv - BN, the projection applied to each cell input."""
    return nn.Sequential(nn.ReLU(), nn.Conv2d(cin, cout, 1, bias=False), nn.BatchNorm2d(cout, eps=1e-3))


class SeparableStack(nn.Module):
    """Two ReLU - depthwise k x k - pointwise 1x1 - BN layers; the stride is taken by the first."""

    def __init__(self, cin, cout, kernel, stride):
        super().__init__()
        layers = []
        for i in range(2):
            c = cin if i == 0 else cout
            layers += [nn.ReLU(),
                       nn.Conv2d(c, c, kernel, stride if i == 0 else 1, kernel // 2, groups=c, bias=False),
                       nn.Conv2d(c, cout, 1, bias=False),
                       nn.BatchNorm2d(cout, eps=1e-3)]
        self.body = nn.Sequential(*layers)

    def forward(self, x):
        return self.body(x)


def avg_pool(stride):
    return nn.AvgPool2d(3, stride, 1, count_include_pad=False)


def max_pool(stride):
    return nn.MaxPool2d(3, stride, 1)


class FactorizedReduction(nn.Module):
    """Halve the resolution of the previous cell's output with two offset 1x1 stride-2 paths."""

    def __init__(self, cin, cout):
        super().__init__()
        self.path1 = nn.Conv2d(cin, cout // 2, 1, bias=False)
        self.path2 = nn.Conv2d(cin, cout - cout // 2, 1, bias=False)
        self.bn = nn.BatchNorm2d(cout, eps=1e-3)

    def forward(self, x):
        x = F.relu(x)
        p1 = self.path1(F.avg_pool2d(x, 1, 2))
        # The paper's path shifts by one pixel (pad bottom/right, drop top/left row and
        # column). For even sizes the zero padding is never sampled by the 1x1 stride-2 pool,
        # so slicing alone is exact and avoids F.pad, which torch 1.13 exports with an
        # unfoldable ConstantOfShape chain.
        p2 = self.path2(F.avg_pool2d(x[:, :, 1:, 1:], 1, 2))
        return self.bn(torch.cat([p1, p2], 1))


class NormalCell(nn.Module):
    """NASNet-A normal cell; h is the current input, p the previous one (both `filters` wide)."""

    def __init__(self, cin_cur, cin_prev, filters, prev_is_larger):
        super().__init__()
        self.cur = conv_bn(cin_cur, filters)
        self.prev = FactorizedReduction(cin_prev, filters) if prev_is_larger else conv_bn(cin_prev, filters)
        self.b0_h = SeparableStack(filters, filters, 5, 1)
        self.b0_p = SeparableStack(filters, filters, 3, 1)
        self.b1_p5 = SeparableStack(filters, filters, 5, 1)
        self.b1_p3 = SeparableStack(filters, filters, 3, 1)
        self.b2_h = avg_pool(1)
        self.b3_p1 = avg_pool(1)
        self.b3_p2 = avg_pool(1)
        self.b4_h = SeparableStack(filters, filters, 3, 1)

    def forward(self, h, p):
        h = self.cur(h)
        p = self.prev(p)
        b0 = self.b0_h(h) + self.b0_p(p)
        b1 = self.b1_p5(p) + self.b1_p3(p)
        b2 = self.b2_h(h) + p
        b3 = self.b3_p1(p) + self.b3_p2(p)
        b4 = self.b4_h(h) + h
        return torch.cat([p, b0, b1, b2, b3, b4], 1)


class ReductionCell(nn.Module):
    """NASNet-A reduction cell: stride-2 ops on the cell inputs, output of 4 * filters channels.

    In the first stem cell the previous input is the raw stem conv output, which the
    separable branches project directly (p_proj=False).
    """

    def __init__(self, cin_cur, cin_prev, filters, prev_mode):
        super().__init__()
        self.cur = conv_bn(cin_cur, filters)
        if prev_mode == "reduce":
            self.prev = FactorizedReduction(cin_prev, filters)
        elif prev_mode == "project":
            self.prev = conv_bn(cin_prev, filters)
        else:  # "raw": separable branches read the previous input as it is
            self.prev = nn.Identity()
        cp = filters if prev_mode != "raw" else cin_prev
        self.b0_h = SeparableStack(filters, filters, 5, 2)
        self.b0_p = SeparableStack(cp, filters, 7, 2)
        self.b1_h = max_pool(2)
        self.b1_p = SeparableStack(cp, filters, 7, 2)
        self.b2_h = avg_pool(2)
        self.b2_p = SeparableStack(cp, filters, 5, 2)
        self.b3_b0 = avg_pool(1)
        self.b4_b0 = SeparableStack(filters, filters, 3, 1)
        self.b4_h = max_pool(2)

    def forward(self, h, p):
        h = self.cur(h)
        p = self.prev(p)
        b0 = self.b0_h(h) + self.b0_p(p)
        b1 = self.b1_h(h) + self.b1_p(p)
        b2 = self.b2_h(h) + self.b2_p(p)
        b3 = self.b3_b0(b0) + b1
        b4 = self.b4_b0(b0) + self.b4_h(h)
        return torch.cat([b1, b2, b3, b4], 1)


class NASNetAMobile(nn.Module):
    def __init__(self, num_classes=1000):
        super().__init__()
        f = PENULTIMATE_FILTERS // 24  # 44: the last stack outputs 6 * 4f = 1056 channels
        s = FILTER_SCALING
        # Padding 1 (112x112 out instead of the reference's VALID 111x111) keeps every
        # resolution even, so the factorized reductions need no Pad (see FactorizedReduction).
        self.stem = nn.Sequential(nn.Conv2d(3, STEM_FILTERS, 3, 2, 1, bias=False),
                                  nn.BatchNorm2d(STEM_FILTERS, eps=1e-3))
        self.stem_cell0 = ReductionCell(STEM_FILTERS, STEM_FILTERS, f // (s * s), "raw")
        self.stem_cell1 = ReductionCell(4 * (f // (s * s)), STEM_FILTERS, f // s, "reduce")
        cells = []
        prev_c, cur_c = 4 * (f // (s * s)), 4 * (f // s)
        filters = f
        prev_larger = True  # stem_cell0's output has twice the resolution of stem_cell1's
        for stack in range(3):
            if stack > 0:
                filters *= s
                cells.append(ReductionCell(cur_c, prev_c, filters, "project"))
                prev_c, cur_c = cur_c, 4 * filters
                prev_larger = True
            for _ in range(CELLS_PER_STACK):
                cells.append(NormalCell(cur_c, prev_c, filters, prev_larger))
                prev_c, cur_c = cur_c, 6 * filters
                prev_larger = False
        self.cells = nn.ModuleList(cells)
        self.classifier = nn.Linear(cur_c, num_classes)

    def forward(self, x):
        x0 = self.stem(x)
        prev = x0
        cur = self.stem_cell0(x0, x0)
        prev, cur = cur, self.stem_cell1(cur, prev)
        for cell in self.cells:
            prev, cur = cur, cell(cur, prev)
        x = F.adaptive_avg_pool2d(F.relu(cur), 1).flatten(1)
        return self.classifier(x)  # dropout omitted: it is an identity at inference


def build():
    return dict(model=NASNetAMobile(), inputs=[torch.randn(2, 3, 224, 224)], input_names=["input"],
                output_names=["logits"], opset=13)
