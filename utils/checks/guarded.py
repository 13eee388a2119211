"""Guarded memory for checks of student kernels: unwritten elements and stray stores, found every time.

A kernel without the right mask reads and writes past the end of its tensors. What happens next depends on
whatever lies there: a check may pass, fail or crash the process, differently on every run. Inside
`GuardedAllocations`:

- every floating-point tensor the code allocates with an `empty` factory (`torch.empty`, `empty_like`,
  `new_empty`, …) starts filled with `UNWRITTEN` instead of leftover memory, so an element the kernel never
  stored is recognisable (`unwritten`), and the same every run;
- that tensor, and any made by a filling factory (`ones_like`, `zeros`, `full`, …, autograd's gradient of
  `y.sum()` among them), lives in the middle of a larger buffer whose margins hold `UNWRITTEN`: a load past
  either end reads `UNWRITTEN`, and a store there lands in a margin, where `check` finds it, instead of in
  another tensor;
- `padded(t)` gives a copy of an input inside NaN margins: a load past its end reads NaN, every run.
"""

from __future__ import annotations

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from utils.messages import bilingual

UNWRITTEN = -7777.0  # what a guarded allocation holds until a kernel stores into it
EMPTY_FACTORIES = frozenset({"empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided"})
FILLING_FACTORIES = frozenset(
    {"ones", "ones_like", "zeros", "zeros_like", "full", "full_like", "new_ones", "new_zeros", "new_full"}
)
MARGIN = 4096  # elements on each side, beyond the tensor's own size (a tile row past the end fits)


def _span(t: torch.Tensor) -> int:
    """How many elements the strided tensor `t` reaches, from its first element to its last."""
    if t.numel() == 0:
        return 0
    return 1 + sum((size - 1) * abs(stride) for size, stride in zip(t.shape, t.stride(), strict=True))


def _margin(span: int) -> int:
    return span + MARGIN


def unwritten(t: torch.Tensor) -> torch.Tensor:
    """Boolean mask of the elements of `t` that still hold `UNWRITTEN` (never stored by a kernel)."""
    if not t.is_floating_point():
        return torch.zeros(t.shape, dtype=torch.bool, device=t.device)
    return t.detach() == torch.tensor(UNWRITTEN, dtype=t.dtype, device=t.device)


def padded(t: torch.Tensor) -> torch.Tensor:
    """A contiguous copy of `t` with NaN margins on both sides (floating point; other dtypes as they are)."""
    if not t.is_floating_point():
        return t.clone()
    span = t.numel()
    margin = _margin(span)
    buffer = torch.full((2 * margin + span,), float("nan"), dtype=t.dtype, device=t.device)
    copy = torch.empty(0, dtype=t.dtype, device=t.device)
    copy.set_(buffer.untyped_storage(), margin, t.shape, torch.empty(t.shape, device="meta").stride())
    copy.copy_(t.detach())
    return copy.requires_grad_(t.requires_grad)


class GuardedAllocations(TorchDispatchMode):
    """While active, `empty` allocations are filled with `UNWRITTEN` and placed between guarded margins."""

    def __init__(self):
        super().__init__()
        self.allocations: list[tuple[torch.Tensor, int, int, tuple[int, ...]]] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        name = func.overloadpacket.__name__
        if (
            name in EMPTY_FACTORIES | FILLING_FACTORIES
            and isinstance(out, torch.Tensor)
            and out.is_floating_point()
            and out.device.type != "meta"
        ):
            span = _span(out)
            margin = _margin(span)
            buffer = torch.full((2 * margin + span,), UNWRITTEN, dtype=out.dtype, device=out.device)
            if name in FILLING_FACTORIES:  # keep the values it was filled with
                inside = torch.empty(0, dtype=out.dtype, device=out.device)
                inside.set_(buffer.untyped_storage(), margin, out.shape, out.stride()).copy_(out)
            out.set_(buffer.untyped_storage(), margin, out.shape, out.stride())
            self.allocations.append((buffer, margin, span, tuple(out.shape)))
        return out

    def check(self, what: str) -> None:
        """Raise AssertionError if a store landed outside a guarded allocation (before or after it)."""
        for buffer, margin, span, shape in self.allocations:
            outside = torch.cat([buffer[:margin], buffer[margin + span :]])
            changed = int((~unwritten(outside)).sum())
            if changed:
                raise AssertionError(
                    bilingual(
                        f"{what}：你的内核在代码分配的张量（形状 {shape}）之外写了 {changed} 个元素："
                        "有 tl.store 缺少掩码或掩码不对",
                        f"{what}: your kernel stored {changed} element(s) outside a tensor your code "
                        f"allocated (shape {shape}): a tl.store lacks its mask or has the wrong one",
                    )
                )


__all__ = ["UNWRITTEN", "GuardedAllocations", "padded", "unwritten"]
