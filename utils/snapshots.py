"""Reading a CUDA memory snapshot without PyTorch's HTML viewer (it fetches its script online).

`torch.cuda.memory._record_memory_history()` records every allocation and release of the caching allocator;
`torch.cuda.memory._dump_snapshot(path)` writes them to a pickle. `allocated_timeline(path)` replays its trace
into the bytes allocated after each event, relative to the start of the recording: the curve the viewer's
"Active Memory Timeline" draws. On a CPU, `live_timeline(fn)` gives the same curve from the tensor-level
accounting of `utils.memory.LiveTensors`.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable
from pathlib import Path

from utils.memory import LiveTensors

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
