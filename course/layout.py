"""Where a course lives on disk: the course folder (nbgrader's course root, which holds the semester's state),
the checkout (`source/`, `release/`) and the folder of wrong implementations.

The semester's state (submissions, gradebook, grading salt, roster, semester file, grades, backups) lives in a
course folder apart from the checkout, so that `git clean -xfd` or a fresh clone never loses it and a second
checkout (a GPU host) grades with the same salt and gradebook: `--course-dir DIR`, else `FLASH_COURSE_DIR`, else
`~/flash-attention-semester`. nbgrader sees the course folder as its course root, with `source/` and `release/`
taken from the checkout (`course.grading.worker.make_api`, `nbgrader_config.py`).
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from course import ROOT
from course.folder import ENV, course_folder, missing_message
from utils.messages import bilingual

# What a semester writes into its course folder (before the course folder existed, into the checkout).
STATE = (
    "submitted",
    "autograded",
    "feedback",
    "gradebook.db",
    ".grading_salt",
    "roster.csv",
    "semester.toml",
    "semester.lock.json",
    "grades.csv",
    "grades_by_cell.csv",
    "regrades.csv",
    "gradebook_backups",
    "feedback_preview",
    "grades_preview.csv",
    "checks.csv",
    "similarity",
    "stats",
)
KEPT_IN_CHECKOUT = "README.md"  # autograded/README.md is committed: never state


@dataclass(frozen=True)
class Course:
    """A course folder (nbgrader's course root: `submitted/`, `autograded/`, `feedback/`, the gradebook and the
    semester's files), its wrong implementations, and the checkout its `source/` and `release/` come from
    (`code`; the course folder itself when None, as in a scratch course)."""

    root: Path
    wrong: Path
    db: str = ""  # the gradebook's database URL (`--db postgresql://…`); empty: `gradebook`, a SQLite file
    code: Path | None = None

    @property
    def checkout(self) -> Path:
        """Where `source/` and `release/` are."""
        return self.code or self.root

    @property
    def source(self) -> Path:
        return self.checkout / "source"

    @property
    def release(self) -> Path:
        return self.checkout / "release"

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


def old_state(checkout: Path) -> list[str]:
    """The semester files found in the checkout itself, where the course kept them before the course folder."""
    found = []
    for name in STATE:
        path = checkout / name
        if name == "autograded":
            if path.is_dir() and any(p.name != KEPT_IN_CHECKOUT for p in path.iterdir()):
                found.append(name)
        elif path.exists() or path.is_symlink():
            found.append(name)
    return found


def open_course(chosen: str | os.PathLike | None = None, checkout: Path = ROOT) -> Course:
    """The course of `checkout` with its course folder (`course.folder.course_folder(chosen)`)."""
    return Course(course_folder(chosen), checkout / "course" / "wrong", code=checkout)


def refuse_missing_folder(course: Course) -> None:
    """Refuse a course folder named (`--course-dir`, FLASH_COURSE_DIR) that does not exist: a typo would start a new
    semester (a new salt, no roster, no semester.toml, no late penalties). The default folder is made on first use;
    `course init` makes a named one."""
    if course.root.is_dir() or not os.environ.get(ENV):
        return
    raise ValueError(missing_message(course.root))


def init_folder(course: Course) -> bool:
    """Make the course folder (nothing in it is changed when it exists); whether it was made."""
    made = not course.root.exists()
    course.root.mkdir(parents=True, exist_ok=True)
    return made


def refuse_old_state(course: Course) -> None:
    """Refuse while the checkout still holds a semester's files of the earlier layout: grading in the course
    folder would start a second gradebook with another salt. The error says how to move them."""
    checkout = course.checkout
    if course.root == checkout or not (found := old_state(checkout)):
        return
    raise ValueError(
        bilingual(
            f"课程文件夹是 {course.root}，但检出目录 {checkout} 中还有旧布局的学期文件：{', '.join(found)}。"
            f"用 `python -m course migrate-state --course-dir {course.root}` 把它们移过去（不覆盖任何文件），"
            f"或用 `--course-dir {checkout}` 继续在检出目录中使用它们",
            f"the course folder is {course.root}, but the checkout {checkout} still holds a semester's files of "
            f"the earlier layout: {', '.join(found)}. Move them there with `python -m course migrate-state "
            f"--course-dir {course.root}` (it overwrites nothing), or keep using them in place with "
            f"`--course-dir {checkout}`",
        )
    )


def migrate_state(course: Course) -> list[str]:
    """Move the semester's files of the earlier layout from the checkout into the course folder; refused, moving
    nothing, when one of them exists there already. The names moved."""
    checkout = course.checkout
    found = [] if course.root == checkout else old_state(checkout)
    if clashes := [name for name in found if (course.root / name).exists()]:
        raise ValueError(
            bilingual(
                f"课程文件夹 {course.root} 中已有 {', '.join(clashes)}：什么都没有移动；请先比较两边，只留下要用的一份",
                f"the course folder {course.root} already holds {', '.join(clashes)}: nothing was moved; compare "
                "both and keep only the one to use",
            )
        )
    course.root.mkdir(parents=True, exist_ok=True)
    for name in found:
        if name == "autograded":  # its committed README stays
            (course.root / name).mkdir()
            for entry in (checkout / name).iterdir():
                if entry.name != KEPT_IN_CHECKOUT:
                    shutil.move(entry, course.root / name / entry.name)
        else:
            shutil.move(checkout / name, course.root / name)
    return found


def inside_checkout(course: Course) -> bool:
    """Whether the course folder is the checkout or inside it (where `git clean -xfd` would delete it)."""
    return course.root.is_relative_to(course.checkout.resolve())


COURSE = open_course()
SAMPLE_CLASS = ROOT / "course" / "sample_class"
