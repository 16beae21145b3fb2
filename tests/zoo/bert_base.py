"""BERT-base (Devlin et al. 2019, "BERT: Pre-training of Deep Bidirectional Transformers"),
laid out like Hugging Face's BertModel: embeddings (word + position + token type, each a
Gather, then LayerNorm), 12 post-LN encoder layers (hidden 768, 12 heads, intermediate 3072,
exact erf GELU), and the tanh pooler on the first token. Sequence length 128.

Inputs: input_ids, token_type_ids, attention_mask, all int64 [N, 128]. The mask becomes an
additive bias (1 - mask) * -10000 as in the original BERT. Exported at opset 17 so that
LayerNorm is one LayerNormalization op.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

import specs

CFG = specs.BERT


class Embeddings(nn.Module):
    def __init__(self):
        super().__init__()
        h = CFG["hidden"]
        self.word = nn.Embedding(CFG["vocab"], h, padding_idx=0)
        self.position = nn.Embedding(CFG["max_positions"], h)
        self.token_type = nn.Embedding(CFG["type_vocab"], h)
        self.norm = nn.LayerNorm(h, eps=CFG["ln_eps"])
        self.register_buffer("position_ids", torch.arange(CFG["max_positions"]).unsqueeze(0))

    def forward(self, input_ids, token_type_ids):
        positions = self.position_ids[:, :input_ids.shape[1]]
        x = self.word(input_ids) + self.token_type(token_type_ids) + self.position(positions)
        return self.norm(x)


class SelfAttention(nn.Module):
    def __init__(self):
        super().__init__()
        h = CFG["hidden"]
        self.heads, self.head_dim = CFG["heads"], h // CFG["heads"]
        self.query, self.key, self.value = nn.Linear(h, h), nn.Linear(h, h), nn.Linear(h, h)

    def split_heads(self, x):
        return x.view(x.shape[0], -1, self.heads, self.head_dim).permute(0, 2, 1, 3)

    def forward(self, x, mask_bias):
        q, k, v = self.split_heads(self.query(x)), self.split_heads(self.key(x)), self.split_heads(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim) + mask_bias
        context = torch.matmul(torch.softmax(scores, -1), v).permute(0, 2, 1, 3)
        return context.reshape(context.shape[0], -1, self.heads * self.head_dim)


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        h, inner = CFG["hidden"], CFG["intermediate"]
        self.attention = SelfAttention()
        self.attention_out = nn.Linear(h, h)
        self.attention_norm = nn.LayerNorm(h, eps=CFG["ln_eps"])
        self.intermediate = nn.Linear(h, inner)
        self.output = nn.Linear(inner, h)
        self.output_norm = nn.LayerNorm(h, eps=CFG["ln_eps"])

    def forward(self, x, mask_bias):
        x = self.attention_norm(x + self.attention_out(self.attention(x, mask_bias)))
        return self.output_norm(x + self.output(F.gelu(self.intermediate(x))))


class BertModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.embeddings = Embeddings()
        self.layers = nn.ModuleList(Layer() for _ in range(CFG["layers"]))
        self.pooler = nn.Linear(CFG["hidden"], CFG["hidden"])
        self.apply(self.init_weights)

    @staticmethod
    def init_weights(module):
        """BERT's N(0, 0.02) weights; biases and LayerNorm parameters are randomised too
        (BERT starts them at 0 and 1) so that, as in a trained model, none is trivial: a
        converter that drops a bias or a norm scale must fail the comparison."""
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, 0.0, 0.02)
        if isinstance(module, nn.Linear):
            nn.init.normal_(module.bias, 0.0, 0.02)
        if isinstance(module, nn.LayerNorm):
            nn.init.normal_(module.weight, 1.0, 0.1)
            nn.init.normal_(module.bias, 0.0, 0.02)
        if isinstance(module, nn.Embedding) and module.padding_idx is not None:
            with torch.no_grad():
                module.weight[module.padding_idx].zero_()

    def forward(self, input_ids, token_type_ids, attention_mask):
        mask_bias = (1.0 - attention_mask[:, None, None, :].to(torch.float32)) * -10000.0
        x = self.embeddings(input_ids, token_type_ids)
        for layer in self.layers:
            x = layer(x, mask_bias)
        pooled = torch.tanh(self.pooler(x[:, 0]))
        return x, pooled


def build():
    n, s = 2, CFG["seq"]
    ids = torch.randint(0, CFG["vocab"], (n, s))
    types = torch.randint(0, CFG["type_vocab"], (n, s))
    mask = torch.ones(n, s, dtype=torch.int64)
    return dict(model=BertModel(), inputs=[ids, types, mask],
                input_names=["input_ids", "token_type_ids", "attention_mask"],
                output_names=["last_hidden_state", "pooler_output"], opset=17)
