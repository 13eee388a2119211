"""How many kernels a Triton cache folder holds and how long compiling them took, read from outside (the stage
timings of a grading: `course grade` and `benchmarks/grading_throughput.py`).

Triton writes each compiled kernel into a folder of its own in the cache, one file per stage as the stage ends
(its IR, PTX, the binary, then the metadata): the span of those files' times is the compilation, but for the
first stage (the Python source to IR, a small part). A folder holding only a shared library (Triton's launcher or
driver stubs, built by a C compiler) counts as a C build. The files are never opened and never followed through a
link; in a folder a student's process wrote, the numbers are the student's to spoil, like their own time.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

LIBRARY = ".so"
MAX_ENTRIES = 10_000  # folders looked at, at most


def stages(name: str, cache: Path) -> dict[str, float]:
    """{"NAME compiles", "NAME compile seconds", "NAME C builds"} of the Triton cache folder `cache`."""
    kernels, seconds, builds = 0, 0.0, 0
    for times in folders(cache):
        if not times:
            continue  # a folder made for a kernel found elsewhere (`utils.judged.triton_cache`): nothing compiled
        if all(suffix == LIBRARY for suffix, _ in times):
            builds += 1
        else:
            kernels += 1
            moments = [moment for _, moment in times]
            seconds += max(moments) - min(moments)
    return {f"{name} compiles": kernels, f"{name} compile seconds": seconds, f"{name} C builds": builds}


def folders(cache: Path) -> list[list[tuple[str, float]]]:
    """[(suffix, modification time) of each regular file] of each folder directly under `cache`."""
    found = []
    with contextlib.suppress(OSError):
        with os.scandir(cache) as entries:
            for entry in list(entries)[:MAX_ENTRIES]:
                if entry.is_dir(follow_symlinks=False):
                    found.append(files(Path(entry.path)))
    return found


def files(folder: Path) -> list[tuple[str, float]]:
    times = []
    with contextlib.suppress(OSError):
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.is_file(follow_symlinks=False):
                    times.append((Path(entry.name).suffix, entry.stat(follow_symlinks=False).st_mtime))
    return times
