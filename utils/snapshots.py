"""Reading a CUDA memory snapshot without PyTorch's HTML viewer (it fetches its script online).

`torch.cuda.memory._record_memory_history()` records every allocation and release of the caching allocator;
`torch.cuda.memory._dump_snapshot(path)` writes them to a pickle. `allocated_timeline(path)` replays its trace
into the bytes allocated after each event, relative to the start of the recording: the curve the viewer's
"Active Memory Timeline" draws. On a CPU, `live_timeline(fn)` gives the same curve from the tensor-level
accounting of `utils.memory.LiveTensors`. `plot_timelines` draws such curves side by side.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable
from pathlib import Path

from utils.memory import LiveTensors

MIB = 2**20
STEPS = {"alloc": 1, "free_completed": -1}  # "free_requested" waits for the stream: counted when completed


def allocated_timeline(path: str | Path, device: int = 0) -> list[int]:
    """Bytes allocated after each allocation or completed release in the snapshot's trace of `device`."""
    with open(path, "rb") as file:
        snapshot = pickle.load(file)  # noqa: S301 (a file this process wrote)
    total, timeline = 0, []
    for event in snapshot["device_traces"][device]:
        step = STEPS.get(event.get("action"))
        if step is not None:
            total += step * event["size"]
            timeline.append(total)
    return timeline


def live_timeline(fn: Callable[[], object]) -> list[int]:
    """Bytes held by the tensors `fn()` creates, after each allocation or release (`utils.memory`)."""
    with LiveTensors(record=True) as live:
        fn()
    return [event.live for event in live.events]


def plot_timelines(curves: dict[str, list[int]], where: str):
    """One panel per curve (`{title: bytes after each event}`), in MiB, each title naming `where` and the peak on
    lines of their own (two bilingual titles on one line overlapped); returns the figure."""
    import matplotlib.pyplot as plt

    from utils.plotting import axes, text

    fig, grid = plt.subplots(1, len(curves), figsize=(13, 4.4), squeeze=False)
    for ax, (title, curve) in zip(grid[0], curves.items(), strict=True):
        ax = axes(ax)
        ax.plot([b / MIB for b in curve])
        peak = max(curve) / MIB
        ax.set_title(
            f"{title}\n{where}; " + text(f"峰值 {peak:.1f} MiB", f"peak {peak:.1f} MiB"), fontsize=10
        )
        ax.set_xlabel(text("分配与释放事件", "allocation and release events"))
        ax.set_ylabel(text("已分配 (MiB)", "allocated (MiB)"))
    fig.tight_layout()
    return fig
