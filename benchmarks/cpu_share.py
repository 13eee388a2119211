"""How fast one core runs when half of the machine's cores are busy and when all are (issue 38: does a two-GPU
run, with twice the grading jobs, get twice the CPU?).

    python -m benchmarks.cpu_share [--seconds 0.5] [--out DIR]

Runs the same pure-Python loop in one process per core of the first half of the cores, then in one per core of
all of them, each pinned to its core, and writes `cpu_share.json`: the median seconds of one loop in each case
and their ratio (1.0: the second half of the cores adds as much as the first; higher: shared cores, a lower
all-core clock or shared caches slow every job when all cores work, as a two-GPU grading run has them).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import time
from pathlib import Path


def loop_seconds(core: int, steps: int) -> float:
    """Seconds of `steps` steps of a fixed integer loop, on `core` alone."""
    os.sched_setaffinity(0, [core])
    started = time.perf_counter()
    total = 0
    for i in range(steps):
        total = (total + i * i) % 1_000_003
    return time.perf_counter() - started


def median_seconds(cores: list[int], steps: int) -> float:
    """The median of `loop_seconds` over one process per core of `cores`, all started at once."""
    with multiprocessing.get_context("fork").Pool(len(cores)) as pool:  # no re-import per process
        return statistics.median(pool.starmap(loop_seconds, [(core, steps) for core in cores]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=0.5, help="about how long one loop runs alone")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/local"))
    args = parser.parse_args()
    cores = sorted(os.sched_getaffinity(0))
    steps = int(2_000_000 * args.seconds / loop_seconds(cores[0], 2_000_000))
    half = median_seconds(cores[: len(cores) // 2], steps)
    every = median_seconds(cores, steps)
    result = {
        "cores": len(cores),
        "half_busy_seconds": round(half, 3),
        "all_busy_seconds": round(every, 3),
        "all_over_half": round(every / half, 3),
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "cpu_share.json").write_text(json.dumps(result, indent=1))
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
