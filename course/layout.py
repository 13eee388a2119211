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

    @property
    def gradebook(self) -> Path:
        """nbgrader's database (its default `sqlite:///<root>/gradebook.db`)."""
        return self.root / "gradebook.db"

    @property
    def variants(self) -> Path:
        """Legitimate variants of the solution cells, beside the wrong implementations."""
        return self.wrong.parent / "variants"

    @property
    def redteam(self) -> Path:
        """Red-team attacks on the grader, beside the wrong implementations."""
        return self.wrong.parent / "redteam"

    def units(self) -> list[str]:
        """Every unit: a folder of `source/` holding at least one notebook."""
        if not self.source.is_dir():
            return []
        return sorted(p.name for p in self.source.iterdir() if p.is_dir() and any(p.glob("*.ipynb")))

    def notebooks(self, unit: str) -> list[str]:
        """The notebook file names of one unit, sorted."""
        return sorted(p.name for p in (self.source / unit).glob("*.ipynb"))

    def select(self, names: list[str] | None) -> list[str]:
        """The units named, by full name or number prefix ("06"); all when none are named.

        A name that matches no unit, or more than one, is a clear error.
        """
        units = self.units()
        if not names:
            return units
        chosen, unknown = [], []
        for name in names:
            matches = [u for u in units if u == name] or [u for u in units if u.split("_", 1)[0] == name]
            if len(matches) == 1:
                chosen.append(matches[0])
            else:
                unknown.append(name)
        if unknown:
            raise ValueError(
                bilingual(
                    f"未知单元 {unknown}；现有单元：{units}", f"unknown unit(s) {unknown}; units are {units}"
                )
            )
        return chosen


COURSE = Course(ROOT, ROOT / "course" / "wrong")
SAMPLE_CLASS = ROOT / "course" / "sample_class"
