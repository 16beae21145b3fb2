"""T5-small encoder (Raffel et al. 2020, "Exploring the Limits of Transfer Learning with a
Unified Text-to-Text Transformer"): token embedding (Gather), 6 pre-norm layers with
d_model 512, 8 heads of d_kv 64, ReLU feed-forward d_ff 2048, no biases, RMS layer norm
(x * rsqrt(mean(x^2) + eps) * w), and a learned relative position bias (32 buckets,
max distance 128, bidirectional) computed once, in the first layer, and shared by all.
Sequence length 128.

The bucket index of every (query, key) pair is precomputed at construction as a constant
buffer: computed in the graph it would export Log/Abs/Min/Less, which are outside the
converter's op set. The exporter's constant folding then folds the bias lookup itself.
The attention mask enters as (1 - mask) * float32.min, added to the shared bias.
"""
import math

import torch
import torch.nn as nn

import specs

CFG = specs.T5


def relative_position_buckets(seq, num_buckets, max_distance):
    """Bucket of (key - query) for a bidirectional T5 encoder, as a [seq, seq] int64 tensor."""
    rel = torch.arange(seq)[None, :] - torch.arange(seq)[:, None]
    half = num_buckets // 2
    bucket = (rel > 0).long() * half
    dist = rel.abs()
    max_exact = half // 2
    log_ratio = torch.log(dist.float().clamp(min=1) / max_exact) / math.log(max_distance / max_exact)
    large = (max_exact + (log_ratio * (half - max_exact)).long()).clamp(max=half - 1)
    return bucket + torch.where(dist < max_exact, dist, large)


class RMSNorm(nn.Module):
    def __init__(self, dim):
        super().__init__()
        # T5 starts at ones; randomised so that a dropped scale shows up in comparisons.
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + CFG["ln_eps"]) * self.weight


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        d, inner = CFG["d_model"], CFG["heads"] * CFG["d_kv"]
        self.q, self.k = nn.Linear(d, inner, bias=False), nn.Linear(d, inner, bias=False)
        self.v, self.o = nn.Linear(d, inner, bias=False), nn.Linear(inner, d, bias=False)
        # T5's initialisation scales (Mesh TensorFlow): query by (d_model * d_kv)^-1/2.
        nn.init.normal_(self.q.weight, 0.0, (d * CFG["d_kv"]) ** -0.5)
        nn.init.normal_(self.k.weight, 0.0, d ** -0.5)
        nn.init.normal_(self.v.weight, 0.0, d ** -0.5)
        nn.init.normal_(self.o.weight, 0.0, inner ** -0.5)

    def split_heads(self, x):
        return x.view(x.shape[0], -1, CFG["heads"], CFG["d_kv"]).transpose(1, 2)

    def forward(self, x, position_bias):
        q, k, v = self.split_heads(self.q(x)), self.split_heads(self.k(x)), self.split_heads(self.v(x))
        scores = torch.matmul(q, k.transpose(2, 3)) + position_bias  # T5 does not scale by sqrt(d_kv)
        context = torch.matmul(torch.softmax(scores, -1), v).transpose(1, 2)
        return self.o(context.reshape(context.shape[0], -1, CFG["heads"] * CFG["d_kv"]))


class Layer(nn.Module):
    def __init__(self, has_relative_bias):
        super().__init__()
        d, ff = CFG["d_model"], CFG["d_ff"]
        self.attention_norm = RMSNorm(d)
        self.attention = Attention()
        self.ff_norm = RMSNorm(d)
        self.wi, self.wo = nn.Linear(d, ff, bias=False), nn.Linear(ff, d, bias=False)
        nn.init.normal_(self.wi.weight, 0.0, d ** -0.5)
        nn.init.normal_(self.wo.weight, 0.0, ff ** -0.5)
        self.relative_bias = nn.Embedding(CFG["num_buckets"], CFG["heads"]) if has_relative_bias else None
        if has_relative_bias:
            nn.init.normal_(self.relative_bias.weight, 0.0, d ** -0.5)
            self.register_buffer("buckets", relative_position_buckets(
                CFG["seq"], CFG["num_buckets"], CFG["max_distance"]))

    def position_bias(self, mask_bias):
        bias = self.relative_bias(self.buckets).permute(2, 0, 1).unsqueeze(0)  # [1, H, S, S]
        return bias + mask_bias

    def forward(self, x, position_bias):
        x = x + self.attention(self.attention_norm(x), position_bias)
        return x + self.wo(torch.relu(self.wi(self.ff_norm(x))))


class T5Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(CFG["vocab"], CFG["d_model"])
        nn.init.normal_(self.embed.weight, 0.0, 1.0)
        self.layers = nn.ModuleList(Layer(i == 0) for i in range(CFG["layers"]))
        self.final_norm = RMSNorm(CFG["d_model"])

    def forward(self, input_ids, attention_mask):
        mask_bias = (1.0 - attention_mask[:, None, None, :].to(torch.float32)) * torch.finfo(torch.float32).min
        x = self.embed(input_ids)
        position_bias = self.layers[0].position_bias(mask_bias)
        for layer in self.layers:
            x = layer(x, position_bias)
        return self.final_norm(x)


def build():
    n, s = 2, CFG["seq"]
    ids = torch.randint(0, CFG["vocab"], (n, s))
    mask = torch.ones(n, s, dtype=torch.int64)
    return dict(model=T5Encoder(), inputs=[ids, mask], input_names=["input_ids", "attention_mask"],
                output_names=["last_hidden_state"], opset=13)
