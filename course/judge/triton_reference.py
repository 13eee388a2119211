"""The course's own Triton kernels, compiled once per course version and machine into a cache that gradings read
and can never write (issue 50, compile once).

Every sandboxed process of a grading (the notebook's kernel, its visible self-checks, the judge's children) starts
with an empty Triton cache of its grading's own and compiles again what the course's `utils` kernels and Triton's
driver stubs need (on the H200, 8–9 C builds in the notebook's cache and as many in the judge's, each pair). The
grader compiles them once, running course code alone (`utils.judged.triton_cache`'s warm-up: `utils` is what the
student bundle holds, so nothing here is a solution's), into `FOLDER/<version>/cache`, which sandboxes see through a
read-only mount and read before their own cache (`utils.judged.triton_cache.Layered`). The student's kernels are
never put there, and no grading's cache is ever copied there: a student's process writes its grading's cache.

Where Triton runs in its interpreter (a CPU) nothing is compiled and there is no such folder.
"""

from __future__ import annotations

import functools
import hashlib
import os
import sys
from pathlib import Path

import torch
import triton

import utils
from course import ROOT
from course.judge.bytecode import MADE_FROM, build_quietly, made_once, own_folder
from utils.judged.triton_cache import REFERENCE_ENV
from utils.messages import bilingual

FOLDER = Path.home() / ".cache" / "flash-course-triton"
WARM_UP = [sys.executable, "-m", "utils.judged.triton_cache"]


def version() -> str:
    """What the cache is made from: Triton's and torch's versions, the device, and the course's `utils` sources."""
    digest = hashlib.sha256(f"{triton.__version__} {torch.__version__} {utils.mode().name}".encode())
    for path in sorted((ROOT / "utils").rglob("*.py")):
        digest.update(path.relative_to(ROOT).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def cache_of(made: Path) -> Path:
    """The cache inside a folder of `made_once` (the sandboxes see it alone, not the lock beside it)."""
    return made / "cache"


@functools.cache
def prepare() -> Path | None:
    """The reference cache for `REFERENCE_ENV`, compiled now unless this version was compiled already (once per
    process, under a lock shared by the graders of this user); None on a CPU or where no folder of this user's own
    can be made."""
    if not utils.mode().is_gpu:
        return None
    made_from = version()

    def compile_into(folder: Path) -> None:
        cache_of(folder).mkdir(mode=0o755, exist_ok=True)
        build_quietly(
            bilingual(
                "正在为沙箱编译课程自己的 Triton 内核（每个版本、每台主机一次）……",
                "compiling the course's own Triton kernels for the sandboxes (once per version and host)…",
            ),
            WARM_UP,
            {**os.environ, "TRITON_CACHE_DIR": str(cache_of(folder)), "PYTHONPATH": str(ROOT)},
        )

    made = made_once(FOLDER / made_from, made_from, compile_into)
    return cache_of(made) if made is not None else None


def in_use() -> Path | None:
    """The reference cache when this process's environment hands it to its sandboxes (`runner.worker_env` set
    `REFERENCE_ENV`), it was made completely, and nobody else may write it or the folders above it."""
    named = os.environ.get(REFERENCE_ENV)
    if not named:
        return None
    cache = Path(named)
    made = cache.parent
    if cache != cache_of(made) or made.parent != FOLDER or not (made / MADE_FROM).is_file():
        return None
    if not all(path.is_dir() and own_folder(path) for path in (cache, made, FOLDER)):
        return None
    return cache
