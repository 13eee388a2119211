"""What the judge runs inside its sandboxed child for a Triton unit: one call of the student's code, as data.

The child (`utils.judged.run`) receives tensors as contiguous plain data and can only call a function by
name. A Triton exercise also promises things that only the process running the kernels can see, so the
judge calls `run` (the unit's preamble imports this module) and gets back, beside the outputs:

- the inputs as the strided views the judge asked for (a transposed matrix, every other column, a stride-0
  broadcast), since a kernel must read its inputs through their strides;
- the gradients when the judge asked for a backward pass (of a given gradient, or of `out.sum()`, whose
  gradient autograd hands on as a stride-0 broadcast);
- how many times the student's own `@triton.jit` kernels were launched, and which PyTorch operators ran,
  in the forward call and in the backward pass separately;
- with `plan["guard"]`, the inputs sit between NaN margins and what the student's code allocates starts as
  `utils.checks.guarded.UNWRITTEN` between guarded margins: a missing mask or store fails the same way every run,
  and a store outside an allocation fails the call.

Like `utils.judged.run`, this decides nothing: the judge, in its own process, compares the outputs with its
float64 references and reads the launches and operators against what the notebook allows.
"""

from __future__ import annotations

import sys

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from utils.checks.guarded import GuardedAllocations, padded
from utils.checks.launches import count_launches
from utils.grading import saved_tensors
from utils.judged.run import resolve
from utils.judged.student_module import MODULE_NAME
from utils.messages import bilingual


class OperatorLog(TorchDispatchMode):
    """Records the name of every aten operator that runs while active (e.g. "mul", "sum", "exp")."""

    def __init__(self):
        super().__init__()
        self.names: set[str] = set()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.names.add(func.overloadpacket.__name__)
        return func(*args, **(kwargs or {}))


def view(tensor: torch.Tensor, how) -> torch.Tensor:
    """The strided view `how` describes of the contiguous `tensor`:
    None: as is; "t": the last two dimensions swapped (the judge sent the transposed data);
    "step2": every other element of the last dimension (the judge sent it twice as long);
    ["expand", shape]: a stride-0 broadcast of `tensor` to `shape`."""
    if how is None:
        return tensor
    if how == "t":
        return tensor.transpose(-2, -1)
    if how == "step2":
        return tensor[..., ::2]
    if isinstance(how, list) and len(how) == 2 and how[0] == "expand":
        return tensor.expand(*how[1])
    raise ValueError(f"unknown view {how!r}")


class _Unguarded:
    """Stands in for `GuardedAllocations` when the plan asks for no guard."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def check(self, what: str) -> None:
        pass


def guarded(on: bool):
    return GuardedAllocations() if on else _Unguarded()


def run(target: str, plan: dict, *tensors):
    """Call `target` (a dotted name in the student's module) on `tensors` (and plain values), each tensor
    viewed as `plan["views"]` says.

    plan["backward"]: None (forward only); "grad" (the last tensor is the gradient of the output, not an
    argument) or "sum" (backpropagate `output.sum()`); the gradients of the arguments listed in
    plan["grad_of"] (as the student's code saw them) come back; plan["saved"]: also return the tensors saved for
    backward. Returns (output, gradients, forward launches, backward launches, forward operators, backward
    operators, saved tensors)."""
    module = sys.modules[MODULE_NAME]
    backward = plan.get("backward")
    guard = plan.get("guard", False)
    if guard:
        tensors = tuple(padded(t) if isinstance(t, torch.Tensor) else t for t in tensors)
    grad = tensors[-1] if backward == "grad" else None
    inputs = tensors[:-1] if backward == "grad" else tensors
    views = list(plan.get("views") or []) + [None] * len(inputs)
    grad_of = list(plan.get("grad_of") or [])
    leaves = [
        t.detach().requires_grad_(i in grad_of) if isinstance(t, torch.Tensor) else t
        for i, t in enumerate(inputs)
    ]
    args = [view(t, how) if isinstance(t, torch.Tensor) else t for t, how in zip(leaves, views, strict=False)]
    for i in grad_of:
        if args[i] is not leaves[i]:
            args[i].retain_grad()  # the gradient of the view the student's code saw
    function = resolve(module, target)
    with guarded(guard) as allocations, count_launches(module) as launches, OperatorLog() as forward_ops:
        output = function(*args)
    allocations.check(target)
    forward_launches = sum(launches.values())
    grads, backward_launches, backward_ops = (), 0, set()
    if backward is not None:
        if not isinstance(output, torch.Tensor) or not output.requires_grad:
            raise AssertionError(
                bilingual("输出不可求导（没有 grad_fn）", "the output is not differentiable (no grad_fn)")
            )
        seed = output.sum() if backward == "sum" else output
        with guarded(guard) as allocations, count_launches(module) as launches, OperatorLog() as log:
            seed.backward(None if backward == "sum" else grad)
        allocations.check(f"{target} backward")
        backward_launches, backward_ops = sum(launches.values()), log.names
        grads = tuple(args[i].grad for i in grad_of)
    return (
        output,
        grads,
        forward_launches,
        backward_launches,
        tuple(sorted(forward_ops.names)),
        tuple(sorted(backward_ops)),
        saved_tensors(output) if plan.get("saved") else (),
    )


__all__ = ["OperatorLog", "run", "view"]
