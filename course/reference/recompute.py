"""Unit 05's reference solutions: what autograd saves, manual segment checkpointing, and the attention
backward pass from the saved statistics (untiled: the mathematics unit 06 tiles)."""

from __future__ import annotations

import contextlib

import torch

from utils.attention.validate import causal_mask


def saved_bytes(module: torch.nn.Module, x: torch.Tensor) -> int:
    """Bytes of the distinct storages autograd saves while `module(x)` runs, the module's parameters and
    buffers excluded (the input counts when it is saved: the graph keeps it alive)."""
    state = {t.untyped_storage().data_ptr() for t in [*module.parameters(), *module.buffers()]}
    storages: dict[tuple[str, int], int] = {}

    def pack(tensor):
        storage = tensor.untyped_storage()
        if storage.data_ptr() not in state:
            storages[(str(tensor.device), storage.data_ptr())] = storage.nbytes()
        return tensor

    with torch.enable_grad(), torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        out = module(x)
    del out
    return sum(storages.values())


@contextlib.contextmanager
def _replayed_rng(state: tuple[torch.Tensor, torch.Tensor | None], device: torch.device):
    """Run the block with the random-number state `state`; the generator is as before afterwards."""
    devices = [device] if device.type == "cuda" else []
    with torch.random.fork_rng(devices=devices):
        torch.set_rng_state(state[0])
        if state[1] is not None:
            torch.cuda.set_rng_state(state[1], device)
        yield


def _rng_state(device: torch.device) -> tuple[torch.Tensor, torch.Tensor | None]:
    return torch.get_rng_state(), torch.cuda.get_rng_state(device) if device.type == "cuda" else None


class _Segment(torch.autograd.Function):
    """One checkpointed segment: forward without a graph (keeps only its input), backward recomputes it.

    The segment's parameters are inputs too, so the output needs a gradient even when x does not (the
    reentrant `torch.utils.checkpoint` loses the parameters' gradients there)."""

    @staticmethod
    def forward(ctx, layers, x, *params):
        ctx.layers, ctx.rng = layers, _rng_state(x.device)
        ctx.save_for_backward(x)
        for layer in layers:
            x = layer(x)
        return x

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        params = [p for layer in ctx.layers for p in layer.parameters()]
        inputs = x.detach().requires_grad_(ctx.needs_input_grad[1])
        with _replayed_rng(ctx.rng, x.device), torch.enable_grad():
            out = inputs
            for layer in ctx.layers:
                out = layer(out)
        wanted = [inputs] if inputs.requires_grad else []
        wanted += [p for p in params if p.requires_grad]
        grads = iter(torch.autograd.grad(out, wanted, grad_out, allow_unused=True))
        grad_x = next(grads) if inputs.requires_grad else None
        grad_params = [next(grads) if p.requires_grad else None for p in params]
        return None, grad_x, *grad_params


def checkpointed_forward(layers, x: torch.Tensor, segments: int) -> torch.Tensor:
    """Apply `layers` (a list or nn.Sequential) in order, keeping only each segment's input for backward.

    The layers are split into `segments` contiguous runs whose lengths differ by at most one; each run's
    activations are recomputed in the backward pass with the random state of its forward pass.
    """
    layers = list(layers)
    if not 1 <= segments <= len(layers):
        raise ValueError(f"segments must lie in 1 … {len(layers)}, got {segments}")
    size, extra = divmod(len(layers), segments)
    start = 0
    for j in range(segments):
        stop = start + size + (j < extra)
        run = layers[start:stop]
        x = _Segment.apply(run, x, *[p for layer in run for p in layer.parameters()])
        start = stop
    return x


def attention_backward_from_lse(Q, K, V, out, L, dO, is_causal: bool = False):
    """dQ, dK, dV of O = softmax(σ Q Kᵀ) V from the saved output `out` (O) and L (float32 (B, Nq)) alone, untiled.

    P = exp(σ Q Kᵀ − L) is rebuilt whole; Δ = rowsum(dO ∘ O); dS = P ∘ (dO Vᵀ − Δ). Computed in at least
    float32; the gradients come back in the inputs' dtypes.
    """
    compute = torch.promote_types(Q.dtype, torch.float32)
    q, k, v, o, d_out = (t.to(compute) for t in (Q, K, V, out, dO))
    scale = Q.shape[-1] ** -0.5
    s = scale * q @ k.transpose(-2, -1)
    if is_causal:
        s = s.masked_fill(~causal_mask(Q.shape[-2], K.shape[-2], Q.device), float("-inf"))
    p = torch.exp(s - L.to(compute)[..., None])
    delta = (d_out * o).sum(dim=-1, keepdim=True)
    d_s = p * (d_out @ v.transpose(-2, -1) - delta)
    dQ = scale * d_s @ k
    dK = scale * d_s.transpose(-2, -1) @ q
    dV = p.transpose(-2, -1) @ d_out
    return dQ.to(Q.dtype), dK.to(K.dtype), dV.to(V.dtype)
