"""Find where attention runs out of memory by experiment, on a GPU or (safely) on a CPU.

`run_points(points)` runs one training or inference step of the course's standard attention
(`utils.memory.attention_step`) per point and records its time and peak memory, or "oom":
- on a GPU, in this process: a `torch.cuda.OutOfMemoryError` is the device's real limit;
- on a CPU, in a child process whose address space is capped at `cap_bytes` above what it already uses
  (Linux `RLIMIT_AS`): an allocation past the cap fails inside PyTorch exactly as a full machine would,
  and the machine itself never runs short. Elsewhere (macOS, Windows) the CPU experiment is unavailable.

A point is a dict: batch, heads, n, d, dtype (a name: "float32", …), training. A point that ran out also says
where: the aten operator whose allocation failed (`failed_at`) and the bytes of the tensors alive then
(`alive_bytes`, counted as `utils.memory.LiveTensors` counts). That is not the modelled peak: on a CPU the cap
also holds the process's own memory, so a run can fail before it reaches its peak.
"""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import time

import torch

from utils import measure, memory
from utils.messages import bilingual
from utils.runtime import BANNER_SHOWN, mode

OOM_MESSAGES = ("can't allocate memory", "not enough memory", "out of memory")


def available() -> bool:
    """True where the experiment can run: a GPU, or a CPU whose memory a child process can cap (Linux)."""
    return mode().is_gpu or sys.platform.startswith("linux")


def _step(point: dict, device):
    dtype = getattr(torch, point["dtype"])
    return memory.attention_step(
        point["batch"], point["heads"], point["n"], point["d"], dtype, point["training"], device
    )


def _is_oom(error: BaseException) -> bool:
    return isinstance(error, MemoryError | torch.cuda.OutOfMemoryError) or any(
        text in str(error) for text in OOM_MESSAGES
    )


class _Watch(memory.LiveTensors):
    """Live tensors, and the operator that was running when an allocation first failed."""

    def __init__(self):
        super().__init__()
        self.failed_at: str | None = None
        self.alive_at_failure: int | None = None

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        try:
            return super().__torch_dispatch__(func, types, args, kwargs)
        except (RuntimeError, MemoryError):
            if self.failed_at is None:
                self.failed_at, self.alive_at_failure = str(func.overloadpacket.__name__), self.live
            raise


def measure_point(point: dict, device) -> dict:
    """{status, time_ms, peak_memory_bytes} of one point; status "oom" when an allocation failed, with the
    operator that failed and the bytes alive then (`failed_at`, `alive_bytes`)."""
    step = _step(point, device)
    watch = _Watch()
    try:
        begin = time.perf_counter()
        with watch:
            peak = measure.peak_memory_bytes(step)
        seconds = time.perf_counter() - begin
    except (RuntimeError, MemoryError) as error:
        if not _is_oom(error):
            raise
        peak = None  # the error (and the tensors its traceback holds) is gone once we leave this block
    if peak is None:
        gc.collect()
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
        where = {"failed_at": watch.failed_at, "alive_bytes": watch.alive_at_failure}
        return {**point, "status": "oom", "time_ms": None, "peak_memory_bytes": None, **where}
    return {**point, "status": "ok", "time_ms": seconds * 1e3, "peak_memory_bytes": peak}


def run_points(points: list[dict], cap_bytes: int | None = None, timeout: float = 300) -> list[dict]:
    """Each point's record (see `measure_point`): on a GPU here; on a CPU in a child capped at `cap_bytes`."""
    if mode().is_gpu:
        measure_point(
            {"batch": 1, "heads": 1, "n": 64, "d": 16, "dtype": "float32", "training": True}, "cuda"
        )
        return [measure_point(point, "cuda") for point in points]
    if not sys.platform.startswith("linux"):
        raise RuntimeError(
            bilingual(
                "只有 Linux 能给子进程设内存上限（RLIMIT_AS）：这里无法安全地做 CPU 上的内存不足实验",
                "only Linux can cap a child's memory (RLIMIT_AS): the CPU out-of-memory experiment cannot "
                "run safely here",
            )
        )
    if cap_bytes is None:
        raise ValueError(bilingual("CPU 上需要 cap_bytes", "cap_bytes is required on the CPU"))
    command = [sys.executable, "-m", "utils.capped", json.dumps(points), str(int(cap_bytes))]
    child = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, BANNER_SHOWN: "1", "FLASH_COURSE_DEVICE": "cpu"},
    )
    if child.returncode != 0:
        raise RuntimeError(
            bilingual(
                f"内存受限的子进程失败（退出码 {child.returncode}）",
                f"the capped child failed (exit code {child.returncode})",
            )
            + "\n"
            + child.stderr[-2000:]
        )
    return json.loads(child.stdout.strip().splitlines()[-1])


def _address_space() -> int:
    """Bytes of address space this process uses now (Linux)."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


def _child(points_json: str, cap: str) -> None:
    import resource

    import utils  # noqa: F401  (CPU mode, before anything else)

    warm_up = {"batch": 1, "heads": 1, "n": 64, "d": 16, "dtype": "float32", "training": True}
    measure_point(warm_up, "cpu")  # threads and allocator arenas exist before the cap
    limit = _address_space() + int(cap)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    records = [measure_point(point, "cpu") for point in json.loads(points_json)]
    print(json.dumps(records))


if __name__ == "__main__":
    _child(*sys.argv[1:3])
