"""A small, readable pre-norm Transformer language model (unit 09 measures it) and the seed's toy model.

`Transformer(config)` maps token ids `(B, N)` to logits `(B, N, vocab_size)`:

    x = token_embedding(ids) + position[:N]
    for each block:  x = x + attention(LayerNorm(x));  x = x + MLP(LayerNorm(x))
    logits = lm_head(LayerNorm(x))

Attention is written out (no fused kernel) so that every tensor it keeps for the backward pass is visible:
the heads become the batch dimension of `torch.bmm`, the causal mask is a buffer. Linear layers have no
bias. `ToyModel` is the four-layer network of the autocast experiment (Linear → ReLU → LayerNorm → Linear).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F
from torch import nn


@dataclass(frozen=True)
class TransformerConfig:
    vocab_size: int = 256
    context_length: int = 64
    d_model: int = 64
    num_layers: int = 2
    num_heads: int = 4
    d_ff: int = 256

    def __post_init__(self):
        if self.d_model % self.num_heads:
            raise ValueError(f"d_model={self.d_model} is not a multiple of num_heads={self.num_heads}")

    def as_dict(self) -> dict:
        return asdict(self)


class CausalSelfAttention(nn.Module):
    def __init__(self, config: TransformerConfig):
        super().__init__()
        self.heads = config.num_heads
        self.q_proj, self.k_proj, self.v_proj, self.out_proj = (
            nn.Linear(config.d_model, config.d_model, bias=False) for _ in range(4)
        )
        n = config.context_length
        self.register_buffer("mask", torch.ones(n, n, dtype=torch.bool).triu(1), persistent=False)

    def split_heads(self, x: torch.Tensor) -> torch.Tensor:
        """(B, N, d_model) → (B·heads, N, d): a contiguous copy, the heads as batch."""
        b, n, width = x.shape
        return x.view(b, n, self.heads, width // self.heads).transpose(1, 2).reshape(b * self.heads, n, -1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, n, width = x.shape
        q, k, v = (self.split_heads(proj(x)) for proj in (self.q_proj, self.k_proj, self.v_proj))
        scores = torch.bmm(q, k.transpose(1, 2)) * (1.0 / math.sqrt(width // self.heads))
        weights = torch.softmax(scores.masked_fill(self.mask[:n, :n], float("-inf")), dim=-1)
        out = torch.bmm(weights, v).view(b, self.heads, n, -1).transpose(1, 2).reshape(b, n, width)
        return self.out_proj(out)


class MLP(nn.Module):
    def __init__(self, config: TransformerConfig):
        super().__init__()
        self.up = nn.Linear(config.d_model, config.d_ff, bias=False)
        self.down = nn.Linear(config.d_ff, config.d_model, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(F.gelu(self.up(x)))


class Block(nn.Module):
    def __init__(self, config: TransformerConfig):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(config.d_model), nn.LayerNorm(config.d_model)
        self.attention, self.mlp = CausalSelfAttention(config), MLP(config)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attention(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class Transformer(nn.Module):
    def __init__(self, config: TransformerConfig):
        super().__init__()
        self.config = config
        self.token_embedding = nn.Embedding(config.vocab_size, config.d_model)
        self.position = nn.Parameter(torch.randn(config.context_length, config.d_model) * 0.02)
        self.blocks = nn.ModuleList(Block(config) for _ in range(config.num_layers))
        self.ln_f = nn.LayerNorm(config.d_model)
        self.lm_head = nn.Linear(config.d_model, config.vocab_size, bias=False)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        n = ids.shape[-1]
        if n > self.config.context_length:
            raise ValueError(f"sequence length {n} > context_length {self.config.context_length}")
        x = self.token_embedding(ids) + self.position[:n]
        for block in self.blocks:
            x = block(x)
        return self.lm_head(self.ln_f(x))


def parameter_count(config: TransformerConfig) -> int:
    d, f, layers = config.d_model, config.d_ff, config.num_layers
    per_block = 4 * d * d + 2 * d * f + 4 * d  # attention, MLP, two LayerNorms (weight and bias)
    return 2 * config.vocab_size * d + config.context_length * d + layers * per_block + 2 * d


def training_step(model: nn.Module, ids: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Forward, cross-entropy loss and backward; returns the loss (gradients accumulate in the model)."""
    logits = model(ids)
    loss = F.cross_entropy(logits.flatten(0, -2), targets.flatten())
    loss.backward()
    return loss


def random_batch(config: TransformerConfig, batch: int, seq_len: int, device=None, generator=None):
    """Token ids and next-token targets, uniformly random."""
    shape = (batch, seq_len)
    ids = torch.randint(config.vocab_size, shape, generator=generator).to(device)
    return ids, torch.randint(config.vocab_size, shape, generator=generator).to(device)


class ToyModel(nn.Module):
    """fc1 → ReLU → LayerNorm → fc2: the model of the autocast dtype table."""

    def __init__(self, in_features: int = 10, out_features: int = 5, hidden: int = 10):
        super().__init__()
        self.fc1 = nn.Linear(in_features, hidden, bias=False)
        self.relu = nn.ReLU()
        self.ln = nn.LayerNorm(hidden)
        self.fc2 = nn.Linear(hidden, out_features, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(self.ln(self.relu(self.fc1(x))))
