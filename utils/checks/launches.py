"""Is the graded work really done by the student's Triton kernels? Launch counting and forbidden torch ops.

- `count_launches(module)`: wraps the launch of every Triton kernel defined in `module` (plain,
  autotuned or heuristics kernels) and counts launches per kernel name.
- `forbid_torch_ops(names, what)`: makes the listed aten operators (e.g. "mm", "exp") raise while
  active, so a PyTorch fallback cannot do the work that the kernels are supposed to do.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Iterable, Iterator

from torch.utils._python_dispatch import TorchDispatchMode

from utils.messages import bilingual

MATMUL_OPS = ("mm", "bmm", "matmul", "addmm", "baddbmm", "mv", "addmv", "dot", "einsum", "outer")
ATTENTION_OPS = (
    *MATMUL_OPS,
    "exp",
    "_softmax",
    "softmax",
    "logsumexp",
    "_scaled_dot_product_flash_attention",
    "_scaled_dot_product_efficient_attention",
    "_scaled_dot_product_cudnn_attention",
    "_scaled_dot_product_flash_attention_for_cpu",
)


def triton_kernels(module) -> dict[str, object]:
    """The Triton kernels (launchable objects) defined at the top level of `module`, by name."""
    from triton.runtime.jit import KernelInterface

    return {name: obj for name, obj in vars(module).items() if isinstance(obj, KernelInterface)}


@contextlib.contextmanager
def count_launches(module) -> Iterator[Counter]:
    """Count launches of `module`'s Triton kernels while active: yields a Counter {kernel name: launches}."""
    launches: Counter = Counter()
    kernels = triton_kernels(module)

    def counting(name, run):
        def run_and_count(*args, **kwargs):
            if not kwargs.get("warmup", False):
                launches[name] += 1
            return run(*args, **kwargs)

        return run_and_count

    originals = {name: kernel.__dict__.get("run") for name, kernel in kernels.items()}
    try:
        for name, kernel in kernels.items():
            kernel.run = counting(name, kernel.run)
        yield launches
    finally:
        for name, kernel in kernels.items():
            if originals[name] is None:
                del kernel.run
            else:
                kernel.run = originals[name]


def require_launches(launches: Counter, what: str) -> None:
    """Fail unless at least one of the student's Triton kernels was launched during `what`."""
    if sum(launches.values()) == 0:
        raise AssertionError(
            bilingual(
                f"{what} 没有启动任何你自己写的 Triton 内核：计算必须由 @triton.jit 内核完成",
                f"{what} launched none of your Triton kernels: the work must be done by your @triton.jit kernels",
            )
        )


class _ForbiddenOps(TorchDispatchMode):
    def __init__(self, names: Iterable[str], what: str):
        super().__init__()
        self.names = frozenset(names)
        self.what = what

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = func.overloadpacket.__name__
        if name in self.names:
            raise AssertionError(
                bilingual(
                    f"{self.what} 调用了 PyTorch 运算 torch.{name}：这部分计算应在你的 Triton 内核里完成",
                    f"{self.what} called the PyTorch op torch.{name}: this work belongs in your Triton kernel",
                )
            )
        return func(*args, **(kwargs or {}))


@contextlib.contextmanager
def forbid_torch_ops(names: Iterable[str], what: str) -> Iterator[None]:
    """Raise AssertionError if any aten op in `names` (e.g. "mm", "exp") runs while active."""
    with _ForbiddenOps(names, what):
        yield


__all__ = [
    "ATTENTION_OPS",
    "MATMUL_OPS",
    "count_launches",
    "forbid_torch_ops",
    "require_launches",
    "triton_kernels",
]
