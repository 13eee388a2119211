"""Counting sweeps over a row: a slow-memory tensor (unit 02's `SlowTensor`) that also records, for every
element, which read was its first and which its second, and how many columns each read spanned.

Unit 04 uses it to see how many times a softmax reads its input and in what order:

    x_slow = CountedTensor("x", x)
    y = online_softmax(x_slow, 64)             # the code only slices it: x_slow[..., c0:c1]
    x_slow.read_map()                           # every element 2 (two sweeps) or 3 (safe softmax)
    x_slow.widths                               # columns spanned by each read (at most the block size)
    sweeps_in_order(x_slow.first, x_slow.second)  # per row, every first read before any second read

The judge counts sweeps the same way, in its sandboxed child (`utils.judged.sweeps`).
"""

from __future__ import annotations

import torch

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


__all__ = ["CountedTensor", "sweeps_in_order"]
