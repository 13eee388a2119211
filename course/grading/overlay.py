"""A private instructor overlay: hidden cases and the seeds' salt kept outside the public repository.

The overlay is a directory named by the environment variable `FLASH_COURSE_OVERLAY` (read by
nbgrader_config.py in every nbgrader run and by `python -m course grade`):

    my-overlay/
      salt               the grading-round salt (replaces the course's .grading_salt)
      judge/unit06.py    a unit judge that replaces the public one of the same notebook

An overlay judge module defines `UNIT` like `course/judge/unitNN.py`. Usually it starts from the public judge
and changes its cases or adds extra ones, e.g. `UNIT = copy_unit(public.UNIT)` then `@UNIT.cell(...)` for the
cells it overrides; a notebook without an overlay module keeps its public judge.
"""

from __future__ import annotations

import copy
import importlib.util
import os
import sys
from pathlib import Path

from utils.messages import bilingual

ENV = "FLASH_COURSE_OVERLAY"


def directory() -> Path | None:
    """The overlay directory, or None when no overlay is configured; a missing directory is an error."""
    name = os.environ.get(ENV, "").strip()
    if not name:
        return None
    folder = Path(name).expanduser()
    if not folder.is_dir():
        raise ValueError(bilingual(f"{ENV} 指向的文件夹不存在：{folder}", f"{ENV} names no folder: {folder}"))
    return folder


def salt() -> str | None:
    """The overlay's grading-round salt, if it has one."""
    folder = directory()
    path = folder / "salt" if folder else None
    return path.read_text(encoding="utf-8").strip() if path and path.is_file() else None


def load_units(folder: Path) -> dict:
    """{notebook: Unit} of the overlay's judge modules (`judge/*.py`, each defining UNIT); a module that fails to
    load is a ValueError naming its file and its own error."""
    found = {}
    for path in sorted((folder / "judge").glob("*.py")):
        name = f"flash_course_overlay.{path.stem}"
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
            found[module.UNIT.notebook] = module.UNIT
        except Exception as error:  # the instructor's own code: whatever it raises is named, with its file
            raise load_error(path, error) from error
    return found


def load_error(path: Path, error: Exception) -> ValueError:
    """The bilingual error of an overlay judge module that fails to load: its file, its own error, and where
    `copy_unit` lives now (overlays written for the course before it moved imported `course.overlay`)."""
    said = f"{type(error).__name__}: {error}"
    return ValueError(
        bilingual(
            f"覆盖层的评审模块 {path} 无法加载：{said}（它必须定义 UNIT；copy_unit 在 course.grading.overlay 中）",
            f"the overlay's judge module {path} fails to load: {said} (it must define UNIT; copy_unit is in "
            "course.grading.overlay)",
        )
    )


def check() -> list[str]:
    """Load the overlay's judges here, before any grading (each nbgrader run loads them again): an error names its
    module. The notebooks they judge."""
    folder = directory()
    return sorted(load_units(folder)) if folder else []


def activate() -> list[str]:
    """Replace the public unit judges by the overlay's (in this process); the notebooks overridden."""
    folder = directory()
    if folder is None:
        return []
    from course.judge import units

    overriding = load_units(folder)
    units.UNITS.update(overriding)
    return sorted(overriding)


def copy_unit(unit):
    """A copy of a public Unit whose cells an overlay may replace without changing the public judge."""
    changed = copy.copy(unit)
    changed.cells = dict(unit.cells)
    return changed
