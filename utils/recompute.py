"""Unit 05 (recomputation): the layers its exercises run on, plain autograd to compare with, and a guard.

- `Block` (Linear → Tanh → Dropout) and `chain`: the deep MLP that checkpointing is tried on. Each block keeps
  one activation for backward (Tanh's output, which the next Linear saves as its input), plus the dropout
  noise when p > 0: the memory model of `utils.checkpoint_schedules`.
- `plain_step`: forward and backward with plain autograd, the behaviour a checkpointed forward must match.
- `STORAGE_LAYERS`: small modules whose saved tensors are known exactly (the `saved_bytes` exercise).
- `no_torch_checkpoint`: while active, `torch.utils.checkpoint` refuses to run (the exercise builds it).
- `watch_layers` and `segment_lengths`: which layers a checkpointed backward ran again, and the segments that
  makes (the exercise asks for segments whose lengths differ by at most one).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence

import torch
from torch import nn

from utils.messages import bilingual


class Block(nn.Module):
    """Linear(width, width) → Tanh → Dropout(p) (no dropout when p = 0)."""

    def __init__(self, width: int, p: float = 0.0):
        super().__init__()
        self.linear = nn.Linear(width, width)
        self.dropout = nn.Dropout(p) if p > 0 else nn.Identity()

    def forward(self, x):
        return self.dropout(torch.tanh(self.linear(x)))


def chain(n: int, width: int, p: float = 0.0, device=None) -> nn.Sequential:
    """n fresh `Block`s in an nn.Sequential (training mode, so dropout is active)."""
    return nn.Sequential(*[Block(width, p) for _ in range(n)]).to(device)


def chain_from(params: Sequence[torch.Tensor], p: float = 0.0) -> nn.Sequential:
    """The chain whose blocks' (weight, bias) are `params` (copied), on their device."""
    weights, biases = params[0::2], params[1::2]
    layers = chain(len(weights), weights[0].shape[0], p, device=weights[0].device)
    with torch.no_grad():
        for block, weight, bias in zip(layers, weights, biases, strict=True):
            block.linear.weight.copy_(weight)
            block.linear.bias.copy_(bias)
    return layers


def parameters_of(layers) -> list[torch.Tensor]:
    return [p for layer in layers for p in layer.parameters()]


def plain_step(layers, x: torch.Tensor, grad: torch.Tensor):
    """Plain autograd: apply `layers` in order, backpropagate `grad`. Returns (output, x.grad, parameter grads)."""
    for p in parameters_of(layers):
        p.grad = None
    out = x
    for layer in layers:
        out = layer(out)
    out.backward(grad)
    return out.detach(), x.grad, [p.grad for p in parameters_of(layers)]


class LinearTanh(nn.Module):
    """Saves its input (for the weight's gradient) and Tanh's output."""

    def __init__(self, width_in: int, width_out: int):
        super().__init__()
        self.linear = nn.Linear(width_in, width_out)

    def forward(self, x):
        return torch.tanh(self.linear(x))

    @staticmethod
    def activation_elements(rows: int, width_in: int, width_out: int, x_requires_grad: bool) -> int:
        return rows * (width_in + width_out)


class TwoLayerMLP(nn.Module):
    """Linear → ReLU → Linear: ReLU saves its output and the second Linear saves the same tensor again."""

    def __init__(self, width_in: int, width_out: int):
        super().__init__()
        self.up, self.down = nn.Linear(width_in, width_out), nn.Linear(width_out, width_in)

    def forward(self, x):
        return self.down(torch.relu(self.up(x)))

    @staticmethod
    def activation_elements(rows: int, width_in: int, width_out: int, x_requires_grad: bool) -> int:
        return rows * (width_in + width_out)


class Gated(nn.Module):
    """One Linear to 2·width_out, split in halves a, b, output a ∘ b: both saved halves share one storage."""

    def __init__(self, width_in: int, width_out: int):
        super().__init__()
        self.linear = nn.Linear(width_in, 2 * width_out)

    def forward(self, x):
        a, b = self.linear(x).chunk(2, dim=-1)
        return a * b

    @staticmethod
    def activation_elements(rows: int, width_in: int, width_out: int, x_requires_grad: bool) -> int:
        return rows * (width_in + 2 * width_out)


class Scaled(nn.Module):
    """(x ∘ mask) ∘ gain with a buffer `mask` and a parameter `gain`: autograd saves both, and x ∘ mask."""

    def __init__(self, width_in: int, width_out: int):
        super().__init__()
        self.gain = nn.Parameter(torch.randn(width_in))
        self.register_buffer("mask", (torch.rand(width_in) > 0.5).float())

    def forward(self, x):
        return (x * self.mask) * self.gain

    @staticmethod
    def activation_elements(rows: int, width_in: int, width_out: int, x_requires_grad: bool) -> int:
        return rows * width_in


class TanhOnly(nn.Module):
    """No parameters: with an input that needs no gradient, nothing is saved at all."""

    def __init__(self, width_in: int, width_out: int):
        super().__init__()

    def forward(self, x):
        return torch.tanh(x)

    @staticmethod
    def activation_elements(rows: int, width_in: int, width_out: int, x_requires_grad: bool) -> int:
        return rows * width_in if x_requires_grad else 0


STORAGE_LAYERS = {cls.__name__: cls for cls in (LinearTanh, TwoLayerMLP, Gated, Scaled, TanhOnly)}


def storage_layer(kind: str, width_in: int, width_out: int, state: Sequence[torch.Tensor], dtype, device):
    """The `STORAGE_LAYERS[kind]` module with its parameters and buffers set to `state` (in order)."""
    module = STORAGE_LAYERS[kind](width_in, width_out).to(device=device, dtype=dtype)
    tensors = [*module.parameters(), *module.buffers()]
    with torch.no_grad():
        for tensor, value in zip(tensors, state, strict=True):
            tensor.copy_(value)
    return module


def storage_state(kind: str, width_in: int, width_out: int, generator: torch.Generator) -> list[torch.Tensor]:
    """Random values for the parameters and buffers of `STORAGE_LAYERS[kind]` (float32, on the CPU)."""
    module = STORAGE_LAYERS[kind](width_in, width_out)
    return [torch.randn(t.shape, generator=generator) for t in [*module.parameters(), *module.buffers()]]


class _Refused:
    """Stands in for `torch.utils.checkpoint`'s functions and its `CheckpointFunction`: calling either raises."""

    def __call__(self, *args, **kwargs):
        raise AssertionError(
            bilingual(
                "这个练习不能使用 torch.utils.checkpoint：请自己实现分段重计算",
                "torch.utils.checkpoint is not allowed in this exercise: write the segment recomputation yourself",
            )
        )

    def apply(self, *args, **kwargs):
        self()


CHECKPOINT_ENTRIES = (
    "checkpoint",
    "checkpoint_sequential",
    "CheckpointFunction",
    "_checkpoint_without_reentrant_generator",
)


@contextlib.contextmanager
def no_torch_checkpoint() -> Iterator[None]:
    """While active, every way into `torch.utils.checkpoint` raises (also through names imported before)."""
    import torch.utils.checkpoint as module

    originals = {name: getattr(module, name) for name in CHECKPOINT_ENTRIES if hasattr(module, name)}
    try:
        for name in originals:
            setattr(module, name, _Refused())
        yield
    finally:
        for name, original in originals.items():
            setattr(module, name, original)


def watch_layers(layers) -> list[int]:
    """A list that gets the index of each layer of `layers` every time that layer runs from now on.

    Each layer's `forward` is wrapped on the instance, so `layer(x)` and `layer.forward(x)` are both seen."""
    ran: list[int] = []
    for index, layer in enumerate(layers):

        def forward(*args, _index=index, _forward=layer.forward, **kwargs):
            ran.append(_index)
            return _forward(*args, **kwargs)

        layer.forward = forward
    return ran


def segment_lengths(n: int, recomputed: Sequence[int]) -> list[int] | None:
    """The segment lengths, front to back, that the backward pass's recomputation of `n` layers shows.

    The backward pass runs each checkpointed segment again, the last segment first: `recomputed` (the layer
    indices run during backward, in order) is one run of consecutive indices per segment. Layers after the
    last recomputed one are a last segment run normally. None when the runs do not cover layers 0, 1, …
    in order, each once (a layer recomputed twice, or a gap)."""
    runs: list[list[int]] = []
    for index in recomputed:
        if runs and index == runs[-1][-1] + 1:
            runs[-1].append(index)
        else:
            runs.append([index])
    runs.reverse()
    covered = [index for run in runs for index in run]
    if covered != list(range(len(covered))) or len(covered) > n:
        return None
    return [len(run) for run in runs] + ([n - len(covered)] if len(covered) < n else [])


__all__ = [
    "CHECKPOINT_ENTRIES",
    "STORAGE_LAYERS",
    "Block",
    "chain",
    "chain_from",
    "no_torch_checkpoint",
    "parameters_of",
    "plain_step",
    "storage_layer",
    "segment_lengths",
    "storage_state",
    "watch_layers",
]
