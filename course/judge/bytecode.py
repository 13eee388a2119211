"""Python bytecode for the sandboxes, compiled by the grader alone.

Every sandboxed process of a grading (the notebook's kernel, each visible self-check, each judge child) imports
torch and Triton. Where the Python environment ships without bytecode and cannot be written (a read-only image, a
`pip install --no-compile`; the sandbox itself sets `PYTHONDONTWRITEBYTECODE`), each of them compiles those
sources again: on the H100 host 5.4–5.9 s of one unit-08 self-check child's 10–16 s, and a pair starts about a
dozen such processes. So the grader compiles the environment once into a folder of its own
(`PYTHONPYCACHEPREFIX`), which sandboxes read through a read-only mount and can never write: nothing a student's
code writes is loaded by another's. Where the environment has its bytecode, nothing changes.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import importlib.util
import os
import site
import stat
import subprocess
import sys
import sysconfig
from collections.abc import Callable
from pathlib import Path

from course.judge.environment import environment_paths, outermost
from utils.messages import bilingual

FOLDER = Path.home() / ".cache" / "flash-course-bytecode" / sys.implementation.cache_tag
SAMPLES = ("json", "torch", "triton")  # modules every sandboxed process imports, stdlib first
MADE_FROM = ".compiled-from"  # what a folder of `made_once` was made from


def beside_source(module: str) -> bool:
    """Whether `module`'s bytecode lies where Python looks for it without a prefix (its `__pycache__`); True for a
    module that is not installed."""
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        return True
    source = Path(spec.origin)
    return (source.parent / "__pycache__" / f"{source.stem}.{sys.implementation.cache_tag}.pyc").exists()


def environment_folders() -> list[Path]:
    """The Python environment's source folders: the standard library, site-packages and PYTHONPATH folders outside
    the course's own code (copied into each sandbox)."""
    paths = sysconfig.get_paths()
    found = [paths[key] for key in ("stdlib", "platstdlib", "purelib", "platlib")] + site.getsitepackages()
    return outermost(environment_paths(found))


def own_folder(path: Path) -> bool:
    """`path` is a folder of this user that nobody else may write (else a planted file would be loaded)."""
    found = os.lstat(path)
    return stat.S_ISDIR(found.st_mode) and found.st_uid == os.getuid() and not found.st_mode & 0o022


def signature(folders: list[Path]) -> str:
    """What the compiled folder was made from: each source folder and the time it last changed (installing or
    removing a package changes its site-packages folder)."""
    return "\n".join(f"{folder} {folder.stat().st_mtime_ns}" for folder in folders)


@functools.cache
def prepare() -> Path | None:
    """The folder of the environment's bytecode for `PYTHONPYCACHEPREFIX`, compiled now unless it was made from
    this environment already (once per process, under a lock shared by the graders of this user); None where the
    environment has its bytecode already, or where no such folder of this user's own can be made."""
    if all(beside_source(module) for module in SAMPLES):
        return None
    folders = environment_folders()

    def compile_into(folder: Path) -> None:
        build_quietly(
            bilingual(
                "正在为沙箱编译 Python 环境的字节码（每台主机一次）……",
                "compiling the Python environment's bytecode for the sandboxes (once per host)…",
            ),
            [sys.executable, "-m", "compileall", "-q", "-q", "-j", "0", *map(str, folders)],
            {**os.environ, "PYTHONPYCACHEPREFIX": str(folder)},
        )

    return made_once(FOLDER, signature(folders), compile_into)


def made_once(folder: Path, made_from: str, make: Callable[[Path], None]) -> Path | None:
    """`folder` (0755, this user's own, its parent too), made by `make(folder)` unless it was made from
    `made_from` already, under a lock the graders of this user share; None where no such folder can be made."""
    with contextlib.suppress(OSError):  # both 0755: umask 002 would make them group-writable, hence refused
        folder.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
        folder.mkdir(mode=0o755, exist_ok=True)
    if not folder.is_dir() or not own_folder(folder) or not own_folder(folder.parent):
        return None
    done = folder / MADE_FROM
    with open(folder / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if done.is_file() and done.read_text(encoding="utf-8") == made_from:
            return folder  # another grader (a Ray worker, an earlier run) made it
        make(folder)
        done.write_text(made_from, encoding="utf-8")
    return folder


def build_quietly(message: str, argv: list[str], env: dict[str, str]) -> None:
    """Say `message`, then run `argv` in `env` without its output, its folders made for nobody else to write; what
    it could not build (a package's unparsable file, a kernel too large for the device) stays unbuilt."""
    print(message, file=sys.stderr, flush=True)
    subprocess.run(
        argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, umask=0o022, check=False
    )


def in_use() -> Path | None:
    """`FOLDER` when this process's environment hands it to its sandboxes (`runner.worker_env` set it) and nobody
    else may write it."""
    prefix = os.environ.get("PYTHONPYCACHEPREFIX")
    return FOLDER if prefix and Path(prefix) == FOLDER and FOLDER.is_dir() and own_folder(FOLDER) else None
