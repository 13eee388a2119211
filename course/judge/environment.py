"""The host's folders of the Python environment: what every sandbox is given read-only (`sandbox`) and what the
grader compiles for them (`bytecode`); below both, so neither imports the other."""

from __future__ import annotations

import os
import site
import sys
from pathlib import Path

from course import ROOT


def inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def outermost(paths: list[Path]) -> list[Path]:
    unique = sorted(set(paths), key=lambda p: len(p.parts))
    return [p for i, p in enumerate(unique) if not any(inside(p, q) for q in unique[:i])]


def outside_pythonpath() -> list[str]:
    """PYTHONPATH's entries outside the course (a `pip install --target` folder on a GPU box): what a process the
    grader starts with an environment of its own keeps."""
    entries = os.environ.get("PYTHONPATH", "").split(os.pathsep)
    return [p for p in entries if p and not inside(Path(p).resolve(), ROOT)]


def environment_paths(entries: list[str]) -> list[Path]:
    """The folders of `entries` and of PYTHONPATH that exist outside the course (e.g. a `pip install --target`
    folder on a GPU box; a virtual environment in the checkout counts as outside)."""
    entries = [*entries, *(p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p)]
    found = [Path(p).resolve() for p in entries if Path(p).is_dir()]
    prefix = Path(sys.prefix).resolve()
    return [p for p in found if not inside(p, ROOT) or inside(p, prefix)]


def python_paths() -> list[Path]:
    """The environment the child needs: the interpreter's prefixes, its site-packages and the PYTHONPATH
    folders outside the course."""
    return environment_paths([sys.prefix, sys.base_prefix, *site.getsitepackages()])
