"""What the judge of unit 03 runs inside its sandboxed child: one call of the student's tiled matmul on a
`SlowMemory` holding A, B and a NaN-filled C, returned as data (the counting is course code; the judge
decides from the element maps, as `utils.traffic.judged` does for unit 02)."""

from __future__ import annotations

import sys

import torch

from utils.isolation import MODULE_NAME
from utils.judged_run import resolve
from utils.traffic.slow_memory import SlowMemory, bookkeeping


def run_matmul(target: str, a: torch.Tensor, b: torch.Tensor, *args):
    """Call `target(mem, *args)` with mem holding A, B and C (m×n, A's dtype, NaN). Returns (C's contents,
    read maps of A and B, C's read and write maps, ((name, read bytes, written bytes), ...) of every tensor)."""
    with bookkeeping():
        mem = SlowMemory(A=a, B=b)
        mem.add("C", torch.full((a.shape[0], b.shape[1]), float("nan"), dtype=a.dtype, device=a.device))
    resolve(sys.modules[MODULE_NAME], target)(mem, *args)
    with bookkeeping():
        stats = tuple((name, s["read_bytes"], s["written_bytes"]) for name, s in mem.stats().items())
        return (
            mem.tensor("C").clone(),
            mem.read_map("A"),
            mem.read_map("B"),
            mem.read_map("C"),
            mem.write_map("C"),
            stats,
        )


__all__ = ["run_matmul"]
