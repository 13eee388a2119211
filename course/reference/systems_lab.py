"""Unit 09's reference solutions: a synchronised benchmark, the autocast dtype table of a model, and the bytes
a Transformer keeps for its backward pass; plus the trusted measurement the judge checks that formula with."""

from __future__ import annotations

import statistics
import time

import torch
import torch.nn.functional as F

from course.reference import recompute
from utils import timing
from utils.toy_transformer import Transformer, TransformerConfig, random_batch


def benchmark(fn, warmup: int, reps: int) -> tuple[float, float]:
    """(median, interquartile range) in seconds of `reps` timed calls of `fn()` after `warmup` untimed ones."""
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(reps):
        timing.synchronize()
        start = time.perf_counter()
        fn()
        timing.synchronize()
        samples.append(time.perf_counter() - start)
    if reps == 1:
        return samples[0], 0.0
    q1, _, q3 = statistics.quantiles(samples, n=4, method="inclusive")
    return statistics.median(samples), q3 - q1


def leaf_modules(model: torch.nn.Module) -> dict[str, torch.nn.Module]:
    return {name: m for name, m in model.named_modules() if name and not any(m.children())}


def autocast_dtypes(model, x, target, dtype) -> dict[str, torch.dtype]:
    """The dtypes of a training step under `torch.autocast(x.device.type, dtype)`: the parameters, each leaf
    module's output, the loss (computed inside autocast) and the parameters' gradients (after backward)."""
    table = {}
    hooks = [
        module.register_forward_hook(lambda _m, _i, out, name=name: table.__setitem__(name, out.dtype))
        for name, module in leaf_modules(model).items()
    ]
    try:
        with torch.autocast(x.device.type, dtype=dtype):
            table["parameters"] = next(model.parameters()).dtype
            logits = model(x)
            loss = F.cross_entropy(logits.flatten(0, -2), target.flatten())
        table["loss"] = loss.dtype
        model.zero_grad(set_to_none=True)
        loss.backward()
        table["gradients"] = next(model.parameters()).grad.dtype
    finally:
        for hook in hooks:
            hook.remove()
    return table


def activation_memory_bytes(config: TransformerConfig, batch: int, seq_len: int, dtype) -> int:
    """Bytes autograd keeps for backward in `Transformer(config)` (in `dtype`) from ids (batch, seq_len) to
    logits, each storage once, parameters and buffers excluded; LayerNorm statistics in float32 (a GPU).

    Per block: the residual stream twice (LayerNorm inputs), both LayerNorm outputs, the q, k, v copies with
    the heads as batch, the merged heads (out_proj's input): 8·B·N·d; the MLP's up output (GELU's input) and
    GELU's output: 2·B·N·d_ff; the softmax output P: B·h·N²; LayerNorm's mean and rstd: 4·B·N in float32.
    Then the token ids (int64), the final LayerNorm's input, output and statistics."""
    size = torch.empty((), dtype=dtype).element_size()
    tokens = batch * seq_len
    d, f, h = config.d_model, config.d_ff, config.num_heads
    per_block = (8 * tokens * d + 2 * tokens * f + batch * h * seq_len**2) * size + 4 * tokens * 4
    return 8 * tokens + config.num_layers * per_block + 2 * tokens * d * size + 2 * tokens * 4


def layer_norm_statistics(config: TransformerConfig, batch: int, seq_len: int) -> int:
    """How many LayerNorm statistics (mean and rstd) the Transformer saves: 2 per token per LayerNorm."""
    return 2 * batch * seq_len * (2 * config.num_layers + 1)


def measured_activation_bytes(
    config: TransformerConfig, batch: int, seq_len: int, dtype, device=None, generator=None
) -> int:
    """What saved-tensor hooks count for one forward of `Transformer(config)` (unit 05's `saved_bytes`): the
    judge's measurement."""
    model = Transformer(config).to(device=device, dtype=dtype)
    ids, _ = random_batch(config, batch, seq_len, device, generator)
    return recompute.saved_bytes(model, ids)
