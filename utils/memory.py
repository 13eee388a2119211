"""Memory that PyTorch operators allocate, counted tensor by tensor: a real measurement on any device.

`LiveTensors` is a dispatch mode that sees every aten operator run while it is active. Each output whose
storage is new (not one of the operator's inputs, not seen before) adds its storage's bytes once; when
that storage is freed (the last tensor, view or autograd saved tensor using it goes away) its bytes are
subtracted. `peak` is the largest sum reached: the peak memory of the tensors created while it was active.

What it counts: storages that aten operators return, including factory functions (`torch.randn`), the
tensors autograd saves for backward and the gradients it computes. Views and in-place results share a
storage and count once. What it does not count: tensors that existed before (they are the baseline),
scratch buffers a kernel allocates for itself and frees before returning (e.g. the `grad · P` buffer
inside PyTorch's CUDA softmax backward, or cuBLAS workspaces), tensors built from Python data with
`torch.tensor` (no operator creates their storage), and allocator rounding and caching. On a GPU,
`torch.cuda.max_memory_allocated` sees all of those too; on a CPU this is the measurement we have.

    with LiveTensors() as live:
        out = naive_attention(q, k, v)
    live.peak, live.live          # bytes at the peak, bytes still held at the end (`out`)

`attention_step` builds the step the memory model of unit 01 describes (inputs created inside, so they
count); `trace` prints every allocation and release with the running total.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

from utils.attention.naive import naive_attention


@dataclass(frozen=True)
class Event:
    """One allocation (+) or release (−) seen by `LiveTensors`, with the total held afterwards."""

    op: str  # the operator that created the storage
    shape: tuple[int, ...]
    dtype: torch.dtype
    nbytes: int  # positive: allocated; negative: released
    live: int


def _storage(tensor: torch.Tensor):
    """The tensor's storage, or None for tensors without one (sparse, nested, some subclasses)."""
    try:
        return tensor.untyped_storage()
    except (RuntimeError, NotImplementedError, TypeError):
        return None


def _tensors(tree) -> list[torch.Tensor]:
    return [t for t in tree_flatten(tree)[0] if isinstance(t, torch.Tensor)]


class LiveTensors(TorchDispatchMode):
    """Bytes of the storages created by aten operators while active: `live` now, `peak` the most ever.

    With `record=True`, `events` lists every allocation and release (`Event`) in order.
    """

    def __init__(self, record: bool = False):
        super().__init__()
        self.live = 0
        self.peak = 0
        self.events: list[Event] = []
        self._record = record
        self._sizes: dict[int, int] = {}  # storage id -> bytes counted
        self._origin: dict[int, tuple[str, tuple[int, ...], torch.dtype]] = {}
        self._lock = threading.RLock()  # releases may come from autograd's threads or the garbage collector

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        return False  # never runs under torch.compile: skip wrapping (and importing torch._dynamo, seconds)

    def _change(self, key: int, nbytes: int) -> None:
        self.live += nbytes
        self.peak = max(self.peak, self.live)
        if self._record and nbytes:
            self.events.append(Event(*self._origin[key], nbytes, self.live))

    def _released(self, key: int) -> None:
        with self._lock:
            self._change(key, -self._sizes.pop(key))
            self._origin.pop(key)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        inputs = {s._cdata for s in map(_storage, _tensors((args, kwargs))) if s is not None}
        for tensor in _tensors(out):
            storage = _storage(tensor)
            if storage is None:
                continue
            key, nbytes = storage._cdata, storage.nbytes()
            with self._lock:
                if key in self._sizes:  # seen before: an in-place or out= result, maybe resized
                    grown, self._sizes[key] = nbytes - self._sizes[key], nbytes
                    self._change(key, grown)
                elif key not in inputs:  # a new storage (inputs' storages existed already)
                    self._sizes[key] = nbytes
                    self._origin[key] = (str(func.overloadpacket.__name__), tuple(tensor.shape), tensor.dtype)
                    weakref.finalize(storage, self._released, key)
                    self._change(key, nbytes)
        return out


def peak_bytes(fn: Callable[[], object]) -> int:
    """Peak bytes of the tensors `fn()` creates (counted by `LiveTensors`; tensors that existed do not count)."""
    with LiveTensors() as live:
        fn()
    return live.peak


def attention_step(batch: int, heads: int, n: int, d: int, dtype=torch.float32, training=False, device=None):
    """A zero-argument callable: one call of the course's standard attention (`utils.naive_attention`,
    non-causal) on fresh random Q, K, V of shape (batch, heads, n, d), created inside the call so they count;
    with `training`, also the backward pass of a fresh random dO."""

    def step() -> None:
        q, k, v = (
            torch.randn(batch, heads, n, d, dtype=dtype, device=device, requires_grad=training)
            for _ in range(3)
        )
        out = naive_attention(q, k, v)
        if training:
            out.backward(torch.randn_like(out))

    return step


def mib(nbytes: float) -> str:
    return f"{nbytes / 2**20:,.2f} MiB"


def trace(fn: Callable[[], object], unit: int | None = None) -> int:
    """Run `fn()`, print each allocation (+) and release (−) with the running total, mark the peak; return it.

    `unit`: bytes to express sizes in as well (e.g. one N×N matrix of 1 byte per element, B·H·N²), or None.
    """
    with LiveTensors(record=True) as live:
        fn()
    events = list(live.events)
    at_peak = next(i for i, e in enumerate(events) if e.live == live.peak) if events else -1
    for i, event in enumerate(events):
        sign = "+" if event.nbytes > 0 else "−"
        size = f"{sign} {mib(abs(event.nbytes)):>12}"
        if unit:
            size += f" ({abs(event.nbytes) / unit:6.2f})"
        what = f"{event.op:<24} {str(tuple(event.shape)):<20} {str(event.dtype).removeprefix('torch.'):<9}"
        mark = "  ◀ peak" if i == at_peak else ""
        print(f"{size}  {what} live {mib(event.live):>12}{mark}")
    return live.peak
