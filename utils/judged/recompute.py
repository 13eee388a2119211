"""What the judge runs inside its sandboxed child for unit 05: the student's function on layers built here.

The child (`utils.judged.run`) can pass only tensors and plain values, and the exercises take modules, so the
judge calls these entry points (the unit's preamble imports this module) with the layers' weights; they
build the modules on the child's device, call the student's function and send back tensors and numbers.
Nothing here decides a grade: the judge, in its own process, builds the same layers, runs plain autograd
with the same seed and compares.

Residual risk, said plainly: peak memory (`utils.measure.peak_memory_bytes`) is measured in the child, the
process the student's code runs in, as in unit 06; code that tampers with PyTorch's allocator statistics
or with the measuring function there could report a lower peak. The judge checks that the numbers are
plausible (plain autograd's peak at least the activations it must keep, the student's at least the
output), and the gradients of that very run must be right.
"""

from __future__ import annotations

import sys

import torch

from utils import measure, recompute
from utils.judged.run import resolve
from utils.judged.student_module import MODULE_NAME
from utils.messages import bilingual

DRAWS = 8  # random numbers drawn after backward: the generator must be where plain autograd leaves it


def _student(target: str):
    return resolve(sys.modules[MODULE_NAME], target)


def _layers(container: str, params, p: float):
    layers = recompute.chain_from(params, p)
    return list(layers) if container == "list" else layers


def _backward(out, grad: torch.Tensor) -> None:
    if not isinstance(out, torch.Tensor) or not out.requires_grad:
        raise AssertionError(
            bilingual(
                "输出不可求导（没有 grad_fn）：参数需要梯度时，即使 x 不需要，输出也必须可求导",
                "the output is not differentiable (no grad_fn): it must be whenever the parameters need "
                "gradients, even when x does not",
            )
        )
    out.backward(grad)


def checkpoint_gradients(
    target: str, seed: int, segments: int, p: float, container: str, x_grad: bool, x, grad, *params
):
    """`target(layers, x, segments)` then backward of `grad`, after `torch.manual_seed(seed)`.

    Returns (output, x.grad or None, the parameters' gradients, DRAWS numbers drawn afterwards, the indices of
    the layers run during backward, in order: `recompute.segment_lengths` reads the segments from them)."""
    layers = _layers(container, params, p)
    x = x.detach().requires_grad_(x_grad)
    ran = recompute.watch_layers(layers)
    torch.manual_seed(seed)
    with recompute.no_torch_checkpoint():
        out = _student(target)(layers, x, segments)
        forward_calls = len(ran)
        _backward(out, grad)
    draws = torch.rand(DRAWS, device=x.device)
    grads = tuple(p.grad for p in recompute.parameters_of(layers))
    return out.detach(), x.grad, grads, draws, tuple(ran[forward_calls:])


def checkpoint_memory(target: str, segments: int, x, grad, *params):
    """Peak memory of forward+backward: plain autograd first (after a warm-up), then `target`.

    Returns (output, x.grad, the parameters' gradients, plain peak bytes, the student's peak bytes)."""
    layers = recompute.chain_from(params)
    x = x.detach().requires_grad_(True)
    recompute.plain_step(layers, x, grad)  # warm-up: library workspaces are allocated here, not below
    x.grad = None
    plain = measure.peak_memory_bytes(lambda: recompute.plain_step(layers, x, grad))
    result = {}

    def step():
        x.grad = None
        for p in recompute.parameters_of(layers):
            p.grad = None
        result["out"] = _student(target)(layers, x, segments)
        _backward(result["out"], grad)

    with recompute.no_torch_checkpoint():
        peak = measure.peak_memory_bytes(step)
    grads = tuple(p.grad for p in recompute.parameters_of(layers))
    return result["out"].detach(), x.grad, grads, plain, peak


def storage(target: str, kind: str, width_out: int, x_grad: bool, x, *state):
    """`target(module, x)` on the `recompute.STORAGE_LAYERS[kind]` module whose state is `state`."""
    module = recompute.storage_layer(kind, x.shape[-1], width_out, state, x.dtype, x.device)
    return _student(target)(module, x.detach().requires_grad_(x_grad))


__all__ = ["DRAWS", "checkpoint_gradients", "checkpoint_memory", "storage"]
