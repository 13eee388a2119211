"""Timing helpers of unit 09: one `synchronize()` for every device, and two workloads that expose mistakes.

- `synchronize()` waits until the device has finished the work launched so far: `torch.cuda.synchronize()` on
  a GPU, nothing on a CPU (its work is done when the call returns) — except inside a `SimulatedDevice`,
  which it drains. Timing code that calls it is correct on every device.
- `SimulatedDevice(seconds)` stands in for a GPU on a CPU: `launch()` queues `seconds` of work and returns at
  once, like a kernel launch; the work runs "on the device" in wall-clock time, and only `synchronize()`
  waits for it. A timer that forgets to synchronise measures launches, about a microsecond; one that forgets
  to synchronise before starting its clock also times the work still queued from before (slow first launches
  when `seconds` is a list, like `Workload`'s durations).
- `Workload(durations)`: the i-th call takes `durations[i]` seconds (the first calls of real code are slow:
  compilation, caches, allocator, clocks); it counts its calls and keeps how long each one took.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import torch

_active: list[SimulatedDevice] = []


def synchronize() -> None:
    """Wait for the work launched so far on the current device (GPU, or a simulated asynchronous one)."""
    if _active:
        _active[-1].wait()
    elif torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.synchronize()


class SimulatedDevice:
    """An asynchronous device on the CPU: `launch()` queues `seconds` of work; `synchronize()` waits for it. A list
    of seconds gives the i-th launch its own (the last one for later launches).

    Use as a context manager (`with SimulatedDevice(0.01) as device: benchmark(device.launch, 2, 5)`)."""

    def __init__(self, seconds: float | Sequence[float]):
        self.durations = as_durations([seconds] if isinstance(seconds, int | float) else seconds)
        self.busy_until, self.launches = 0.0, 0

    def launch(self, start: float | None = None) -> None:
        """Queue this launch's seconds of work, from `start` (a `time.perf_counter()` reading; default now) or once
        the work queued before it is done."""
        start = time.perf_counter() if start is None else start
        self.busy_until = max(start, self.busy_until) + nth(self.durations, self.launches)
        self.launches += 1

    def wait(self) -> None:
        sleep_until(self.busy_until)

    def __enter__(self) -> SimulatedDevice:
        _active.append(self)
        return self

    def __exit__(self, *exc) -> None:
        self.wait()
        _active.remove(self)


class Workload:
    """A callable whose i-th call sleeps `durations[i]` seconds (the last one for later calls); counts calls and
    keeps the seconds each call took (`observed`: on a busy machine a sleep wakes late)."""

    def __init__(self, durations: Sequence[float]):
        self.durations, self.calls, self.observed = as_durations(durations), 0, []

    def __call__(self, start: float | None = None) -> None:
        """Sleep this call's duration, counted from `start` (a `time.perf_counter()` reading; default now)."""
        seconds = nth(self.durations, self.calls)
        self.calls += 1
        start = time.perf_counter() if start is None else start
        sleep_until(start + seconds)
        self.observed.append(time.perf_counter() - start)


def as_durations(seconds: Sequence[float]) -> list[float]:
    """`seconds` as a list, refused when empty."""
    if not seconds:
        raise ValueError("durations must not be empty")
    return list(seconds)


def nth(durations: list[float], i: int) -> float:
    """The i-th duration, the last one for every later i."""
    return durations[min(i, len(durations) - 1)]


def sleep_until(deadline: float) -> None:
    """Sleep until `time.perf_counter()` reaches `deadline` (a sleep can wake early on some systems: sleep again)."""
    while (left := deadline - time.perf_counter()) > 0:
        time.sleep(left)
