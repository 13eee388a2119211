"""Measuring: FLOP counts, timing, peak memory and sweeps over the sequence length N.

Numbers mean most on a GPU. On the CPU (interpreter mode) `time_ms` is wall-clock time of the CPU
code and `peak_memory_bytes` is the peak of the tensors PyTorch's operators hold (`utils.memory`; see
its docstring); every record of `sweep` says which device produced it, so plots can label CPU results
as such.

Typical use in a notebook:

    def make_naive(n):                       # setup for one size; returns what to measure
        q, k, v = random_qkv(1, n, n, 64, device=utils.device())
        return lambda: naive_attention(q, k, v)

    records = sweep({"naive": make_naive}, ns=[256, 512, 1024])
    plot_vs_n(records, "time_ms")            # from utils.plotting
"""

from __future__ import annotations

import contextlib
import functools
import gc
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import numpy as np
import torch
from tqdm import tqdm

from utils import memory
from utils.messages import bilingual
from utils.runtime import mode

METRICS = ("time_ms", "peak_memory_bytes")


def attention_flops(
    batch_heads: int, n_q: int, n_k: int, d: int, is_causal: bool, backward: bool = False
) -> float:
    """FLOPs of attention: 4·B·H·Nq·Nk·d forward (halved for causal); forward+backward is 3.5× forward."""
    flops = 4.0 * batch_heads * n_q * n_k * d * (0.5 if is_causal else 1.0)
    return flops * 3.5 if backward else flops


def _on_gpu() -> bool:
    return mode().is_gpu


def _synchronize() -> None:
    if _on_gpu():
        torch.cuda.synchronize()


@contextlib.contextmanager
def one_thread() -> Iterator[None]:
    """On a CPU, PyTorch runs on one thread inside the block, so that a timing measures the code rather than
    thread start-up and the other programs on the machine (a GPU is left as it is)."""
    if _on_gpu():
        yield
        return
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def time_ms(fn: Callable[[], object], warmup: int = 3, repeats: int = 10) -> float:
    """Median run time of `fn()` in milliseconds, after `warmup` untimed calls (`time_samples_ms`)."""
    return statistics.median(time_samples_ms(fn, warmup, repeats))


def time_samples_ms(fn: Callable[[], object], warmup: int = 3, repeats: int = 10) -> list[float]:
    """The run time of each of `repeats` calls of `fn()` in milliseconds, after `warmup` untimed calls: their
    median is `time_ms`, their spread how far to trust it.

    GPU: CUDA events around each call. CPU: wall-clock time (`time.perf_counter`); it says how fast the
    CPU code is, not how a GPU kernel would perform.
    """
    if repeats < 1:
        raise ValueError(f"repeats must be >= 1, got {repeats}")
    for _ in range(warmup):
        fn()
    _synchronize()
    samples = []
    for _ in range(repeats):
        if _on_gpu():
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            torch.cuda.synchronize()
            samples.append(start.elapsed_time(end))
        else:
            begin = time.perf_counter()
            fn()
            samples.append((time.perf_counter() - begin) * 1e3)
    return samples


@contextlib.contextmanager
def exclusive_file_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on the file `path` (created if missing); other processes asking for it wait.

    The operating system releases it when the holder exits, even by a crash. A no-op where `fcntl` is
    missing (Windows).
    """
    try:
        import fcntl
    except ImportError:
        yield
        return
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


LOCK_DIR_ENV = "FLASH_COURSE_LOCK_DIR"


@contextlib.contextmanager
def timing_lock() -> Iterator[None]:
    """While held, no other process of this course times work on this GPU (a no-op on the CPU).

    Concurrent graders on one GPU (`python -m course grade --jobs N`) would otherwise time their
    performance cells on top of each other. The lock is one file per GPU in `lock_folder()`.
    """
    if not _on_gpu():
        yield
        return
    user = os.getuid() if hasattr(os, "getuid") else "user"  # no getuid: no fcntl either, the lock is a no-op
    name = f"flash-course-timing-{user}-gpu-{gpu_identity()}.lock"
    with exclusive_file_lock(lock_folder() / name):
        yield


def lock_folder() -> Path:
    """Where the timing locks live: `FLASH_COURSE_LOCK_DIR` (the grader names one folder for all its jobs, whose
    temporary folders differ), else the temporary folder."""
    return Path(os.environ.get(LOCK_DIR_ENV) or tempfile.gettempdir())


def gpu_identity() -> str:
    """This process's GPU as every process names it (its UUID), whatever `CUDA_VISIBLE_DEVICES` each was given."""
    index = torch.cuda.current_device()
    return str(getattr(torch.cuda.get_device_properties(index), "uuid", index))


def compare_ms(
    fns: dict[str, Callable[[], object]], rounds: int = 5, warmup: int = 3, repeats: int = 10
) -> dict[str, list[float]]:
    """{name: per-round median run time in ms} of several functions timed in turns.

    All warm up first (compiling, outside the lock); then each round times every function, one after the
    other, under `timing_lock`, so a change of the machine's load between rounds affects all alike: compare
    them round by round (e.g. the median of per-round ratios).
    """
    if rounds < 1:
        raise ValueError(f"rounds must be >= 1, got {rounds}")
    for fn in fns.values():
        for _ in range(warmup):
            fn()
    _synchronize()
    per_round = {name: [] for name in fns}
    for _ in range(rounds):
        with timing_lock():
            for name, ms in zip(fns, round_ms(fns.values(), repeats), strict=True):
                per_round[name].append(ms)
    return per_round


# A warm call slower than SLOW_CALL_FACTOR times what a speed threshold allows fails at once, without timed
# rounds: a far too slow kernel (a NumPy forward takes seconds a call) would otherwise take minutes to time,
# holding the GPU timing lock other graders wait for. The factor leaves room for a warm call slowed by other
# work on the GPU (on the H100 the unit-08 reference runs at 1.5x SDPA's time against a limit of 67x; unit
# 10's at 0.9x the unit-08 kernel's against 11x).
SLOW_CALL_FACTOR = 10


def slow_call_limits(peer_ms: tuple[float, ...], fraction: float) -> list[float]:
    """Per measurement, the ms over which a warm call is far too slow to reach `fraction` of the peer's throughput."""
    return [peer / fraction * SLOW_CALL_FACTOR for peer in peer_ms]


def far_too_slow(ms: tuple[float, ...], peer_ms: tuple[float, ...], fraction: float) -> bool:
    """Whether a warm call (`ms`, one per measurement) is over one of its `slow_call_limits`."""
    return any(t > limit for t, limit in zip(ms, slow_call_limits(peer_ms, fraction), strict=True))


def assert_not_far_too_slow(ms: tuple[float, ...], peer_ms: tuple[float, ...], fraction: float) -> None:
    """AssertionError when `far_too_slow`, saying by how much."""
    if not far_too_slow(ms, peer_ms, fraction):
        return
    limits = slow_call_limits(peer_ms, fraction)
    took, allowed = (" / ".join(f"{t:.1f}" for t in times) for times in (ms, limits))
    raise AssertionError(
        bilingual(
            f"一次调用用了 {took} ms，远远达不到阈值 {fraction} 倍（上限 {allowed} ms），不再计时：用 tl.dot 处理整块",
            f"one call took {took} ms, far too slow for the {fraction}× threshold (limit {allowed} ms); not timed "
            "further: use tl.dot on whole tiles",
        )
    )


def assert_warm_calls_not_far_too_slow(
    fns: Iterable[Callable[[], object]], peer_fns: Iterable[Callable[[], object]], fraction: float
) -> None:
    """One warm call of each function and of its peer (`round_ms` with one repeat), then
    `assert_not_far_too_slow`: for visible self-checks, where both run in this process."""
    assert_not_far_too_slow(round_ms(fns, repeats=1), round_ms(peer_fns, repeats=1), fraction)


# The speed cells time the student's code and the peer in alternating rounds, both in a round under the GPU timing
# lock, and compare them round by round: other gradings' work on the GPU (not timed, so not excluded by the lock)
# then slows both alike. Before and after whole timings disagreed by 20 % with 9 gradings at once on the H100 and
# flipped unit 10's verdict on a regrade.
ROUNDS, REPEATS = 5, 10
# A warm call over the far-too-slow limit is tried again, under the lock, before the cell fails: on the H200, 48
# unit-08 gradings at 16 jobs failed two legitimate variants on one warm call of 240 ms against a limit of 61 ms,
# waiting behind other gradings' kernels (their timed rounds were never reached). A far too slow kernel stays so.
WARM_TRIES = 3


def speed_ratios(
    peer_ms: Callable[[int], tuple[float, ...]],
    student_ms: Callable[[int], tuple[float, ...]],
    threshold: float,
) -> list[float]:
    """Per measurement, the median over ROUNDS of the student's throughput over the peer's. `peer_ms(repeats)` and
    `student_ms(repeats)` each time one round (`round_ms`: the median of `repeats` calls after an untimed one),
    wherever they run: the judge (the student's in its child) and a visible self-check (both here) measure alike.
    First one warm call each: a far too slow one fails there (`SLOW_CALL_FACTOR`), after WARM_TRIES tries."""
    peer_warm, warm = peer_ms(1), student_ms(1)
    for _ in range(WARM_TRIES - 1):  # one call can wait behind another grading's long kernel: try again
        if not far_too_slow(warm, peer_warm, threshold):
            break
        with timing_lock():
            peer_warm, warm = peer_ms(1), student_ms(1)
    assert_not_far_too_slow(warm, peer_warm, threshold)
    per_round = []
    for _ in range(ROUNDS):
        with timing_lock():
            peer_round, student_round = peer_ms(REPEATS), student_ms(REPEATS)
        per_round.append([p / t for p, t in zip(peer_round, student_round, strict=True)])
    return [statistics.median(ratios) for ratios in zip(*per_round, strict=True)]


def fit_exponent(xs, ys) -> float:
    """The slope p of the least-squares line log y = p·log x + c (y ∝ x^p): how a measurement grows with a size."""
    slope, _ = np.polyfit(np.log(np.asarray(xs, dtype=float)), np.log(np.asarray(ys, dtype=float)), 1)
    return float(slope)


def round_ms(fns: Iterable[Callable[[], object]], repeats: int = 10) -> tuple[float, ...]:
    """One round of timings: each function's median ms over `repeats` calls after one untimed call."""
    return tuple(time_ms(fn, warmup=1, repeats=repeats) for fn in fns)


def peak_memory_bytes(fn: Callable[[], object]) -> int:
    """Extra memory `fn()` needs, in bytes.

    GPU: the peak of `torch.cuda.max_memory_allocated` during the call minus what was allocated before
    it (tensors that already existed do not count). CPU: the peak of the bytes held by the tensors that
    PyTorch's operators create during the call, each storage counted once from its creation to its release
    (views and in-place results share it; autograd's saved tensors count while saved), as counted by
    `utils.memory.LiveTensors`. Scratch buffers a kernel frees before returning are not seen there, so
    the CPU figure is the tensors' peak, not the process's. On a GPU the cuBLAS workspaces (tens of MiB, made
    once per thread at its first matrix product) are made before the call, so that they never count.
    """
    if not _on_gpu():
        return memory.peak_bytes(fn)
    _warm_cuda_libraries()
    torch.cuda.synchronize()
    baseline = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    fn()
    torch.cuda.synchronize()
    return max(0, torch.cuda.max_memory_allocated() - baseline)


@functools.cache
def _warm_cuda_libraries() -> None:
    """One small linear layer forward and backward: cuBLAS allocates its workspace in this thread and in
    autograd's backward thread through PyTorch's allocator, once, at the first product of each."""
    w = torch.ones(8, 8, device="cuda", requires_grad=True)
    torch.nn.functional.linear(w, w, w[0]).sum().backward()
    torch.cuda.synchronize()


def _free_memory() -> None:
    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def _measure_point(make: Callable[[int], Callable[[], object]], n: int, metrics, repeats: int) -> dict:
    run = make(n)
    result = {}
    if "time_ms" in metrics:
        result["time_ms"] = time_ms(run, warmup=1, repeats=repeats)
    if "peak_memory_bytes" in metrics:
        result["peak_memory_bytes"] = peak_memory_bytes(run)
    return result


def sweep(
    fns: dict[str, Callable[[int], Callable[[], object]]],
    ns: Iterable[int],
    metrics: Iterable[str] = METRICS,
    repeats: int = 5,
    progress: bool = True,
) -> list[dict]:
    """Measure each implementation at each sequence length N; returns one tidy record per (name, N).

    `fns` maps a name to a factory: `make(n)` does the setup for size n (allocating inputs, which is not
    measured) and returns a zero-argument callable, the thing that is timed and measured.
    A `torch.cuda.OutOfMemoryError` at one point is recorded (status "oom"), memory is freed and the
    sweep goes on. Each record: name, n, status ("ok" | "oom"), time_ms, peak_memory_bytes (None when
    not measured or OOM), device (name) and gpu (False: CPU numbers, not representative of a GPU).
    The progress bar writes to stdout (nbgrader treats stderr output as a failure).
    """
    metrics = tuple(metrics)
    unknown = set(metrics) - set(METRICS)
    if unknown:
        raise ValueError(f"unknown metrics {sorted(unknown)}; choose from {METRICS}")
    ns = list(ns)
    device = mode().name
    records = []
    bar = tqdm(total=len(fns) * len(ns), file=sys.stdout, disable=not progress, desc="sweep")
    for name, make in fns.items():
        for n in ns:
            bar.set_postfix_str(f"{name} N={n}")
            record = {"name": name, "n": n, "status": "ok", "device": device, "gpu": _on_gpu()}
            record.update(dict.fromkeys(METRICS))
            try:
                record.update(_measure_point(make, n, metrics, repeats))
            except torch.cuda.OutOfMemoryError:
                record["status"] = "oom"
            _free_memory()
            records.append(record)
            bar.update()
    bar.close()
    return records
