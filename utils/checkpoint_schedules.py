"""A layer-chain simulator for gradient checkpointing: peak memory and recompute cost of a schedule.

The model (unit 05): a chain of n layers; layer i turns x_{i-1} into x_i, whose size is `sizes[i-1]`, and
autograd keeps x_i for the backward pass when layer i runs with gradients (true of Linear→Tanh blocks:
Tanh saves its output, the next Linear saves the same tensor as its input). The input x_0 and the gradient
of the output belong to the caller and are not counted; buffers inside one layer's forward or backward and
the parameters' gradients are left out (a constant the measurements show).

A schedule is the set of checkpoints, the layer outputs kept during the forward pass (positions 1 … n-1).
It follows `torch.utils.checkpoint.checkpoint_sequential`: every segment but the last runs without
gradients and keeps only its output; the last segment runs with gradients; in the backward pass each earlier
segment is run again from its checkpoint (the recompute cost) while the gradient of its output (the size of
that output) waits, and is then backpropagated. No checkpoints is plain autograd.

    sizes = [1.0] * 16
    simulate(sizes, sqrt_checkpoints(16))      # Outcome(checkpoints=(4, 8, 12), peak=7.0, recompute=12.0)
    optimal(sizes)                              # peak 6.0: later segments shorter, since more checkpoints wait
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from utils.messages import bilingual


@dataclass(frozen=True)
class Outcome:
    """What a schedule costs: peak memory (units of `sizes`) and recomputed work (units of `costs`)."""

    checkpoints: tuple[int, ...]
    peak: float
    recompute: float


def _boundaries(n: int, checkpoints: Sequence[int]) -> list[int]:
    inner = sorted(set(checkpoints))
    if any(not 0 < c < n for c in inner):
        raise ValueError(
            bilingual(
                f"检查点必须在 1 … {n - 1} 之间，得到 {inner}",
                f"checkpoints must lie in 1 … {n - 1}, got {inner}",
            )
        )
    return [0, *inner, n]


def simulate(
    sizes: Sequence[float], checkpoints: Sequence[int], costs: Sequence[float] | None = None
) -> Outcome:
    """Run the schedule step by step, tracking which activations are alive; return its peak and recompute.

    `costs[i]` is the forward cost of layer i+1 (default 1 per layer: recompute counts layers run again).
    """
    n = len(sizes)
    costs = [1.0] * n if costs is None else list(costs)
    bounds = _boundaries(n, checkpoints)
    segments = list(itertools.pairwise(bounds))
    kept = set(bounds[1:-1])
    live: dict[int | str, float] = {}  # activation positions, and "grad": the gradient being passed back
    peak = recompute = 0.0

    def add(key: int | str, size: float) -> None:
        nonlocal peak
        live[key] = size
        peak = max(peak, sum(live.values()))

    *early, (last_start, last_end) = segments
    for start, end in early:  # forward without gradients: only the checkpoints stay
        for i in range(start + 1, end + 1):
            add(i, sizes[i - 1])
            if i - 1 in live and i - 1 not in kept:
                del live[i - 1]
    for i in range(last_start + 1, last_end + 1):  # the last segment keeps everything for backward
        add(i, sizes[i - 1])
    for start, end in reversed(segments):
        if end != n:  # an earlier segment: its output's gradient waits while it runs again, with gradients
            add("grad", sizes[end - 1])
            for i in range(start + 1, end + 1):
                add(i, sizes[i - 1])
            recompute += sum(costs[start:end])
        for i in range(start + 1, end + 1):  # backpropagate through the segment: its activations go
            live.pop(i, None)
        live.pop("grad", None)  # replaced by the gradient of the segment's input (the next one's output)
    return Outcome(tuple(bounds[1:-1]), peak, recompute)


def even_checkpoints(n: int, segments: int) -> tuple[int, ...]:
    """`checkpoint_sequential`'s split of n layers into `segments`: n // segments layers each, the rest last."""
    if not 1 <= segments <= n:
        raise ValueError(bilingual(f"段数必须在 1 … {n} 之间", f"segments must lie in 1 … {n}"))
    size = n // segments
    return tuple(size * j for j in range(1, segments))


def sqrt_checkpoints(n: int) -> tuple[int, ...]:
    """The √n schedule: round(√n) segments of equal length."""
    return even_checkpoints(n, max(1, round(math.sqrt(n))))


def all_schedules(n: int) -> Iterator[tuple[int, ...]]:
    """Every set of checkpoints of an n-layer chain (2^(n-1) of them): for brute force on small n."""
    for r in range(n):
        yield from itertools.combinations(range(1, n), r)


def _pareto(states: list[tuple[float, float, tuple[int, ...]]]) -> list[tuple[float, float, tuple[int, ...]]]:
    """The (stored, peak, checkpoints) states that no other state beats in both stored and peak."""
    best, frontier = math.inf, []
    for stored, peak, path in sorted(states):
        if peak < best:
            frontier.append((stored, peak, path))
            best = peak
    return frontier


def frontier(sizes: Sequence[float], costs: Sequence[float] | None = None) -> list[Outcome]:
    """For each possible last checkpoint (which fixes the recompute cost), the schedule of least peak memory.

    Dynamic programming over the boundaries: at boundary s keep the Pareto set of (memory stored in
    checkpoints up to s, peak so far); a segment s → e raises the peak to at least stored + its activations
    (+ the gradient of its output, size of x_e, unless it is the last segment). Sorted by recompute cost; the
    first entry is plain autograd.
    """
    n = len(sizes)
    costs = [1.0] * n if costs is None else list(costs)
    prefix = list(itertools.accumulate(sizes, initial=0.0))
    states: dict[int, list] = {0: [(0.0, 0.0, ())]}
    for e in range(1, n):
        candidates = [
            (stored + sizes[e - 1], max(peak, stored + prefix[e] - prefix[s] + sizes[e - 1]), (*path, e))
            for s in range(e)
            for stored, peak, path in states[s]
        ]
        states[e] = _pareto(candidates)
    outcomes = []
    for last in range(n):
        stored, peak, path = min(
            (
                (stored, max(peak, stored + prefix[n] - prefix[last]), path)
                for stored, peak, path in states[last]
            ),
            key=lambda state: state[1],
        )
        outcomes.append(Outcome(path, peak, sum(costs[:last])))
    return sorted(outcomes, key=lambda o: (o.recompute, o.peak))


def optimal(sizes: Sequence[float], costs: Sequence[float] | None = None) -> Outcome:
    """The schedule of least peak memory (of those, the least recompute)."""
    return min(frontier(sizes, costs), key=lambda o: (o.peak, o.recompute))


__all__ = [
    "Outcome",
    "all_schedules",
    "even_checkpoints",
    "frontier",
    "optimal",
    "simulate",
    "sqrt_checkpoints",
]
