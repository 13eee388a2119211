"""Unit 10 (the Hopper track): which kernel path this machine can run, its SM count, and what a launch did.

- `path()`: "hopper" where Triton has host-side tensor descriptors (TMA) and the GPU is sm90 or newer (or in
  the CPU interpreter, which runs descriptors too), else "pointers" (the unit-08 kernel) with the reason.
- `num_sms()`: the number of streaming multiprocessors a persistent grid is sized by; in the interpreter a
  pretend GPU of `INTERPRETER_SMS`, so a persistent kernel still loops over several tiles per program.
- `record_launches(module)`: the grid and the number of `TensorDescriptor` arguments of every launch of the
  module's Triton kernels (the judge's child reports them, the judge decides).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass

import torch

from utils.checks.launches import triton_kernels
from utils.messages import bilingual
from utils.runtime import interpreter

INTERPRETER_SMS = 4  # a pretend GPU for the interpreter: small enough that tiny cases have more tiles
MIN_CAPABILITY = (9, 0)  # TMA (the tensor-memory accelerator) arrived with Hopper, sm90


@dataclass(frozen=True)
class Path:
    name: str  # "hopper" (tensor descriptors, persistent grid) or "pointers" (the unit-08 kernel)
    reason: str  # bilingual, one line

    @property
    def hopper(self) -> bool:
        return self.name == "hopper"


def tensor_descriptor_class():
    """Triton's host-side `TensorDescriptor`, or None where this Triton has none (older than 3.4)."""
    try:
        from triton.tools.tensor_descriptor import TensorDescriptor
    except ImportError:
        return None
    return TensorDescriptor


def capability() -> tuple[int, int] | None:
    """The CUDA compute capability of the current GPU; None in the interpreter or without CUDA."""
    if interpreter() or not torch.cuda.is_available():
        return None
    return tuple(torch.cuda.get_device_capability())


def path() -> Path:
    """The kernel path this machine runs, chosen at run time (tested with a monkeypatched capability)."""
    if tensor_descriptor_class() is None:
        return Path(
            "pointers",
            bilingual(
                "这个 Triton 没有张量描述符（需要 ≥ 3.4）：使用单元 08 的指针内核",
                "this Triton has no tensor descriptors (needs >= 3.4): using the unit-08 pointer kernel",
            ),
        )
    cap = capability()
    if cap is None and interpreter():
        return Path(
            "hopper",
            bilingual(
                "解释器：描述符与持久网格在 CPU 上模拟运行（速度没有意义）",
                "interpreter: descriptors and the persistent grid are emulated on the CPU (speed means nothing)",
            ),
        )
    if cap is None or cap < MIN_CAPABILITY:
        return Path(
            "pointers",
            bilingual(
                f"GPU 计算能力 {cap} 低于 9.0（没有 TMA）：使用单元 08 的指针内核",
                f"GPU compute capability {cap} is below 9.0 (no TMA): using the unit-08 pointer kernel",
            ),
        )
    return Path(
        "hopper",
        bilingual(
            f"sm{cap[0]}{cap[1]}：张量描述符（TMA）+ 持久网格",
            f"sm{cap[0]}{cap[1]}: tensor descriptors (TMA) + persistent grid",
        ),
    )


def num_sms() -> int:
    """Streaming multiprocessors of the current GPU (132 on an H100 SXM); `INTERPRETER_SMS` in the interpreter."""
    if interpreter() or not torch.cuda.is_available():
        return INTERPRETER_SMS
    return torch.cuda.get_device_properties(torch.cuda.current_device()).multi_processor_count


def programs(grid) -> int:
    """The number of programs of a launch grid (an int or a tuple of up to three ints)."""
    if isinstance(grid, int):
        return grid
    total = 1
    for size in grid:
        total *= int(size)
    return total


def _innermost(kernel):
    """The JIT function under autotuning and heuristics wrappers: the one that receives the final grid."""
    while hasattr(kernel, "fn") and hasattr(kernel.fn, "run"):
        kernel = kernel.fn
    return kernel


@contextlib.contextmanager
def record_launches(module) -> Iterator[list[dict]]:
    """While active, every launch of `module`'s Triton kernels (autotuning's trial runs included) appends
    {"kernel", "programs", "descriptors"}: the size of its resolved grid and how many arguments were
    host-side `TensorDescriptor`s."""
    descriptor = tensor_descriptor_class()
    records: list[dict] = []
    patched = {}
    for name, kernel in triton_kernels(module).items():
        inner = _innermost(kernel)
        if id(inner) in patched:
            continue
        patched[id(inner)] = (inner, inner.__dict__.get("run"))

        def recording(*args, _name=name, _inner=inner, _run=inner.run, **kwargs):
            if kwargs.get("warmup"):
                return _run(*args, **kwargs)
            grid = kwargs.get("grid")
            if callable(grid):
                grid = grid({**dict(zip(_inner.arg_names, args, strict=False)), **kwargs})
            values = [*args, *kwargs.values()]
            records.append(
                {
                    "kernel": _name,
                    "programs": programs(grid),
                    "descriptors": sum(descriptor is not None and isinstance(a, descriptor) for a in values),
                }
            )
            return _run(*args, **kwargs)

        inner.run = recording
    try:
        yield records
    finally:
        for inner, original in patched.values():
            if original is None:
                del inner.run
            else:
                inner.run = original


__all__ = [
    "INTERPRETER_SMS",
    "MIN_CAPABILITY",
    "Path",
    "capability",
    "num_sms",
    "path",
    "programs",
    "record_launches",
    "tensor_descriptor_class",
]
