"""Counting sweeps over a row: a slow-memory tensor (unit 02's `SlowTensor`) that also records, for every
element, which read was its first and which its second, and how many columns each read spanned.

Unit 04 uses it to see how many times a softmax reads its input and in what order:

    x_slow = CountedTensor("x", x)
    y = online_softmax(x_slow, 64)             # the code only slices it: x_slow[..., c0:c1]
    x_slow.read_map()                           # every element 2 (two sweeps) or 3 (safe softmax)
    x_slow.widths                               # columns spanned by each read (at most the block size)
    sweeps_in_order(x_slow.first, x_slow.second)  # per row, every first read before any second read

`run` is what the judge calls in its sandboxed child (`utils.judged_run`): it wraps one argument, calls the
student's function and returns the result and the maps as data; the judge decides from them in its own
process. As with `utils.traffic.judged`, what stays possible is deliberate tampering with the child's own
process; and a sweep that reads twice cannot show what the code keeps in fast memory in between.
"""

from __future__ import annotations

import sys

import torch

from utils.isolation import MODULE_NAME
from utils.judged_run import resolve
from utils.traffic.slow_memory import SlowTensor, _on_cpu, bookkeeping


class CountedTensor(SlowTensor):
    """A `SlowTensor` whose reads are also ordered: `first`/`second` hold each element's read numbers."""

    def __init__(self, name: str, data: torch.Tensor):
        with bookkeeping():
            super().__init__(name, data)
            self.first = torch.full(data.shape, -1, dtype=torch.int64)
            self.second = torch.full(data.shape, -1, dtype=torch.int64)
        self.widths: list[int] = []

    def _count(self, counts: torch.Tensor, index) -> None:
        super()._count(counts, index)
        if counts is not self._reads:
            return
        selected = self._ids[_on_cpu(index)].reshape(-1)
        number = len(self.widths)
        columns = selected % max(1, self.shape[-1]) if self.ndim else selected
        self.widths.append(int(columns.max() - columns.min() + 1) if selected.numel() else 0)
        now = self._reads.view(-1)[selected]
        self.first.view(-1)[selected[now == 1]] = number
        self.second.view(-1)[selected[now == 2]] = number

    def read_map(self) -> torch.Tensor:
        return self._reads.clone()


def sweeps_in_order(first: torch.Tensor, second: torch.Tensor) -> torch.Tensor:
    """For each row (all dims but the last): whether every element's first read came before any second read."""
    if first.dim() == 0:
        return torch.tensor(True)
    pending = torch.where(second < 0, torch.full_like(second, torch.iinfo(torch.int64).max), second)
    return first.amax(dim=-1) < pending.amin(dim=-1)


def run(target: str, position: int, *args):
    """Call `target(*args)` with `args[position]` in a `CountedTensor`; returns (result, read map, first, second,
    widths as an int64 tensor)."""
    args = list(args)
    counted = CountedTensor("x", args[position])
    args[position] = counted
    result = resolve(sys.modules[MODULE_NAME], target)(*args)
    with bookkeeping():
        widths = torch.tensor(counted.widths, dtype=torch.int64)
        return result, counted.read_map(), counted.first.clone(), counted.second.clone(), widths


__all__ = ["CountedTensor", "run", "sweeps_in_order"]
