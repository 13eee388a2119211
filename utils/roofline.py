"""The roofline of the machine you are on: its measured memory bandwidth and arithmetic throughput.

`measure_ceilings()` measures both ceilings (GPU: the course's Triton copy kernel and a bfloat16 matrix
product; CPU: a large tensor copy and a float32 matrix product, on one thread). `describe_machine()` lists what
the device reports about its memory hierarchy, `bandwidth_sweep()` shows the cache levels as steps, and
`plot_roofline()` draws the roof with operations placed on it: each measured point (with its spread) beside the
model's prediction, a square on the roof; `above_roof()` names the points the roof does not bound.

On a CPU every measurement runs on one thread (`utils.measure.one_thread()`): with several, the threads' start-up and other
programs on the machine decide the numbers more than the memory hierarchy does.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import torch

from utils import measure, plotting, runtime
from utils.messages import bilingual


@dataclass(frozen=True)
class Ceilings:
    """Measured peak throughput (FLOP/s, for `dtype` matrix products) and memory bandwidth (bytes/s)."""

    device: str
    dtype: str
    peak_flops: float
    peak_bandwidth: float

    @property
    def ridge(self) -> float:
        """The arithmetic intensity (FLOP/byte) where the memory slope meets the compute roof."""
        return self.peak_flops / self.peak_bandwidth

    def __str__(self) -> str:
        return (
            f"{self.device}: {self.peak_flops / 1e12:.3g} TFLOP/s ({self.dtype} matmul), "
            f"{self.peak_bandwidth / 1e9:.4g} GB/s, ridge {self.ridge:.3g} FLOP/B"
        )


def _cpu_caches() -> dict[str, int]:
    """Cache sizes of CPU 0 from sysfs (Linux), e.g. {"L1d": 49152, "L2": 2097152, "L3": ...}."""
    caches = {}
    for index in sorted(Path("/sys/devices/system/cpu/cpu0/cache").glob("index*")):
        try:
            level = (index / "level").read_text().strip()
            kind = (index / "type").read_text().strip()
            size = (index / "size").read_text().strip()
        except OSError:
            continue
        if kind == "Instruction":
            continue
        factor = {"K": 2**10, "M": 2**20, "G": 2**30}.get(size[-1], 1)
        caches[f"L{level}{'d' if kind == 'Data' else ''}"] = int(size.rstrip("KMG")) * factor
    return caches


def _cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "CPU"


def describe_machine() -> dict[str, object]:
    """What the device reports about itself: name, compute units and the sizes of its memory levels."""
    if runtime.mode().is_gpu:
        props = torch.cuda.get_device_properties(0)
        return {
            "name": props.name,
            "SMs": props.multi_processor_count,
            "shared memory per block (opt-in), bytes": getattr(props, "shared_memory_per_block_optin", None),
            "shared memory per SM, bytes": getattr(props, "shared_memory_per_multiprocessor", None),
            "L2 cache, bytes": getattr(props, "L2_cache_size", None),
            "global memory, bytes": props.total_memory,
        }
    return {
        "name": _cpu_name(),
        "cores (this process)": len(os.sched_getaffinity(0))
        if hasattr(os, "sched_getaffinity")
        else os.cpu_count(),
        "threads (torch)": torch.get_num_threads(),
        **{f"{level} cache, bytes": size for level, size in _cpu_caches().items()},
    }


def copy_bandwidth(nbytes: int, repeats: int = 10) -> float:
    """Bytes/s of copying an `nbytes` float32 array (each element read once and written once)."""
    from utils import io_kernels

    n = max(1, nbytes // 4)
    x = torch.randn(n, device=runtime.device())
    if runtime.mode().is_gpu:
        ms = measure.time_ms(lambda: io_kernels.copy(x), warmup=3, repeats=repeats)
    else:
        y = torch.empty_like(x)
        ms = measure.time_ms(lambda: y.copy_(x), warmup=2, repeats=repeats)
    return 2 * n * 4 / (ms * 1e-3)


def bandwidth_sweep(sizes: list[int], budget_bytes: float = 4e9) -> list[tuple[int, float]]:
    """(bytes, bytes/s) of the copy for each working-set size: cache levels show as steps.
    Each size is copied about `budget_bytes / size` times (at most 200, at least 5) to be timed reliably; on a
    CPU on one thread."""
    with measure.one_thread():
        return [
            (size, copy_bandwidth(size, repeats=int(min(200, max(5, budget_bytes / size / 50)))))
            for size in sizes
        ]


def matmul_flops(n: int, dtype: torch.dtype, repeats: int = 7) -> float:
    """FLOP/s of an n×n by n×n matrix product (2·n³ FLOPs) in `dtype` on the current device (median run)."""
    a = torch.randn(n, n, device=runtime.device()).to(dtype)
    b = torch.randn(n, n, device=runtime.device()).to(dtype)
    ms = measure.time_ms(lambda: a @ b, warmup=2, repeats=repeats)
    return 2 * n**3 / (ms * 1e-3)


def measure_ceilings() -> Ceilings:
    """Both ceilings of this machine. GPU: bfloat16 products of 8192², a 1 GiB copy. CPU, on one thread: float32
    products of 512², a 256 MiB copy (larger than any cache of a usual CPU)."""
    if runtime.mode().is_gpu:
        flops = max(matmul_flops(8192, torch.bfloat16) for _ in range(2))
        return Ceilings(runtime.mode().name, "bfloat16", flops, copy_bandwidth(2**30))
    with measure.one_thread():
        flops = max(matmul_flops(512, torch.float32) for _ in range(2))
        bandwidth = copy_bandwidth(2**28, repeats=7)
    return Ceilings(f"{_cpu_name()}, {bilingual('单线程', 'one thread')}", "float32", flops, bandwidth)


def roof(ceilings: Ceilings, intensity: float) -> float:
    """What the roofline model predicts for an operation of `intensity` FLOP/byte (FLOP/s)."""
    return min(ceilings.peak_flops, intensity * ceilings.peak_bandwidth)


def above_roof(ceilings: Ceilings, points) -> list[str]:
    """The labels of the measured points above the roof: the measured ceilings do not bound them (a cache faster
    than the copy measured, or the machine busier while the ceilings were measured than while the point was)."""
    return [point[0] for point in points if point[2] is not None and point[2] > roof(ceilings, point[1])]


def _spread(point) -> tuple[float, float]:
    """(lowest, highest) FLOP/s of a point's repeats (just the measurement where it has no spread)."""
    return point[3] if len(point) > 3 else (point[2], point[2])


def plot_roofline(ceilings: Ceilings, points: list[tuple] = (), ax=None):
    """The roofline (log–log) with `points` = (label, FLOP/byte, achieved FLOP/s or None[, (lowest, highest)
    FLOP/s of the repeats]) on it. Each point's prediction is a hollow square on the roof; a measurement is a
    dot with its spread as an error bar, joined to its square; a dot above the roof is ringed in red."""
    ax = plotting._new_axes(ax)
    intensities = [p[1] for p in points] + [ceilings.ridge]
    low, high = min(intensities) / 4, max(intensities) * 4
    x = np.logspace(np.log10(low), np.log10(high), 200)
    ax.loglog(x, np.minimum(ceilings.peak_flops, x * ceilings.peak_bandwidth), color="black", lw=2)
    ax.axvline(ceilings.ridge, color="grey", ls=":", lw=1)
    ax.annotate(
        plotting.text(f"拐点 {ceilings.ridge:.3g}", f"ridge {ceilings.ridge:.3g}"),
        (ceilings.ridge, ceilings.peak_flops),
        textcoords="offset points",
        xytext=(4, -14),
        fontsize=8,
    )
    above = set(above_roof(ceilings, points))
    for point in points:
        label, intensity, achieved = point[:3]
        predicted = roof(ceilings, intensity)
        (square,) = ax.plot([intensity], [predicted], "s", ms=8, mfc="none")
        y = predicted
        if achieved is not None:
            low, high = _spread(point)
            color = square.get_color()
            ax.plot([intensity, intensity], [predicted, achieved], ":", color=color, lw=1)
            ax.errorbar(
                [intensity], [achieved], yerr=[[achieved - low], [high - achieved]], fmt="o", color=color
            )
            if label in above:
                ax.plot([intensity], [achieved], "o", ms=13, mfc="none", mec="red")
            y = achieved
        ax.annotate(label, (intensity, y), textcoords="offset points", xytext=(5, 4), fontsize=8)
    ax.plot([], [], "ks", mfc="none", label=plotting.text("模型的预测", "the model's prediction"))
    ax.plot(
        [],
        [],
        "ko",
        label=plotting.text("实测（误差棒：重复间的范围）", "measured (bar: range of the repeats)"),
    )
    ax.legend(fontsize=8, loc="best")
    ax.set_xlabel(plotting.text("算术强度 (FLOP/字节)", "arithmetic intensity (FLOP/byte)"))
    ax.set_ylabel(plotting.text("FLOP/s", "FLOP/s"))
    ax.set_title(str(ceilings.device)[:90], fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    return ax


def plot_bandwidth_sweep(sweep: list[tuple[int, float]], ax=None):
    """Measured copy bandwidth against working-set size, with the cache sizes the machine reports."""
    ax = plotting._new_axes(ax)
    sizes, rates = zip(*sweep, strict=True)
    ax.semilogx(sizes, np.array(rates) / 1e9, "o-")
    for key, value in describe_machine().items():
        if ("cache" in key or "L2" in key) and isinstance(value, int) and value > 0:
            ax.axvline(value, color="grey", ls=":", lw=1)
            ax.annotate(key.split(",")[0], (value, max(rates) / 1e9), rotation=90, fontsize=7, va="top")
    ax.set_xlabel(plotting.text("工作集大小 (字节)", "working set (bytes)"))
    ax.set_ylabel(plotting.text("带宽 (GB/s)", "bandwidth (GB/s)"))
    ax.grid(True, which="both", alpha=0.3)
    plt.tight_layout()
    return ax


__all__ = [
    "Ceilings",
    "above_roof",
    "bandwidth_sweep",
    "copy_bandwidth",
    "describe_machine",
    "matmul_flops",
    "measure_ceilings",
    "plot_bandwidth_sweep",
    "plot_roofline",
    "roof",
]
