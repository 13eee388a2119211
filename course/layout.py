"""Where a course lives on disk: an nbgrader course root plus the folder of wrong implementations."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from course import ROOT
from utils.messages import bilingual


@dataclass(frozen=True)
class Course:
    """An nbgrader course root (`source/`, `release/`, `submitted/`, …) and its wrong implementations."""

    root: Path
    wrong: Path

    @property
    def source(self) -> Path:
        return self.root / "source"

    @property
    def release(self) -> Path:
        return self.root / "release"

    @property
    def submitted(self) -> Path:
        return self.root / "submitted"

    @property
    def autograded(self) -> Path:
        return self.root / "autograded"

    @property
    def feedback(self) -> Path:
        return self.root / "feedback"

    def units(self) -> list[str]:
        """Every unit: a folder of `source/` holding at least one notebook."""
        if not self.source.is_dir():
            return []
        return sorted(p.name for p in self.source.iterdir() if p.is_dir() and any(p.glob("*.ipynb")))

    def notebooks(self, unit: str) -> list[str]:
        """The notebook file names of one unit, sorted."""
        return sorted(p.name for p in (self.source / unit).glob("*.ipynb"))

    def select(self, names: list[str] | None) -> list[str]:
        """The units named (all when none are), with a clear error for a name that is not a unit."""
        units = self.units()
        unknown = [name for name in names or [] if name not in units]
        if unknown:
            raise ValueError(
                bilingual(
                    f"未知单元 {unknown}；现有单元：{units}", f"unknown unit(s) {unknown}; units are {units}"
                )
            )
        return list(names) if names else units


COURSE = Course(ROOT, ROOT / "course" / "wrong")
SAMPLE_CLASS = ROOT / "course" / "sample_class"
