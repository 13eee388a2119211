"""The rubric of a written answer graded by hand, declared once in its source cell, and the ledger of the marks
graders gave by it.

A hand-graded cell (a markdown cell with nbgrader `grade` and `solution`) holds its rubric inside its solution
region, in a fenced block whose info string is `rubric` (TOML, one `[[item]]` per item):

    ```rubric
    [[item]]
    id = "peak"                                  # letters, digits, _ and -
    points = 1                                   # a deduction is negative
    criterion = "中文 / English"                  # what earns it (graders read it; the feedback shows it)
    comment = "中文 / English"                    # the reusable comment the student gets when it is given
    ```

The release clears the solution region (nbgrader's ClearSolutions; `course release` checks nothing of it leaks),
so students see the rubric only in their feedback, once their answer is graded. Everything reads the rubric from
`source/`, never from a submission (which a student could have edited).

A cell's score is the sum of its given items' points, clamped to [0, the cell's points]; its comment is the given
items' comments, a paragraph each, then the grader's own (`compose`). The ledger `handgrade/<unit>.json` in the course
folder keeps every grader's marks of every answer and what was last written to the gradebook
(`course.grading.handgrade`); the feedback shows the items of an answer whose gradebook entry is still what the
ledger wrote (`given_items`). Nothing here imports nbgrader or torch: the feedback's preprocessor reads it.
"""

from __future__ import annotations

import json
import math
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from course import notebooks
from utils.messages import bilingual

FENCE = re.compile(r"^```rubric[ \t]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
ITEM_ID = re.compile(r"^[A-Za-z0-9_-]+$")
LEDGER_FOLDER = "handgrade"


@dataclass(frozen=True)
class Item:
    id: str
    points: float
    criterion: str
    comment: str


@dataclass(frozen=True)
class Rubric:
    """The rubric of one hand-graded cell."""

    notebook: str  # file name
    grade_id: str
    points: float  # the cell's
    items: tuple[Item, ...]

    @property
    def question(self) -> str:
        return f"{self.notebook.removesuffix('.ipynb')}/{self.grade_id}"

    def item(self, item_id: str) -> Item | None:
        return next((item for item in self.items if item.id == item_id), None)

    def compose(self, given: list[str], comment: str) -> tuple[float, str]:
        """(score, comment) of an answer given the items `given` and the grader's own `comment`."""
        items = [self.item(item_id) for item_id in given]
        score = min(max(sum(item.points for item in items), 0.0), self.points)
        lines = [item.comment for item in items if item.comment] + ([comment] if comment else [])
        return score, "\n\n".join(lines)  # a paragraph each in the feedback


class RubricError(ValueError):
    """A rubric that cannot be read (the message names the notebook and the cell)."""


def is_written_answer(cell) -> bool:
    """A hand-graded markdown answer cell: where a rubric is declared."""
    return (
        cell.cell_type == "markdown"
        and bool(notebooks.meta(cell).get("solution"))
        and notebooks.is_hand_graded(cell)
    )


def parse(source: str, notebook: str, grade_id: str, points: float) -> Rubric | None:
    """The rubric in a hand-graded cell's `source` (None where it declares none)."""
    found = FENCE.search(source)
    if found is None:
        return None
    where = f"{notebook} {grade_id}"
    try:
        data = tomllib.loads(found.group(1))
    except tomllib.TOMLDecodeError as error:
        raise RubricError(
            bilingual(
                f"{where} 的评分细则不是有效的 TOML：{error}",
                f"{where}: the rubric is not valid TOML: {error}",
            )
        ) from None
    items = []
    for index, entry in enumerate(data.get("item", []), 1):
        item_id, value = entry.get("id"), entry.get("points")
        if not isinstance(item_id, str) or not ITEM_ID.match(item_id):
            raise RubricError(
                bilingual(
                    f"{where} 的第 {index} 项需要 id（字母、数字、_ 或 -）",
                    f"{where}: item {index} needs an id (letters, digits, _ or -)",
                )
            )
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise RubricError(
                bilingual(
                    f"{where} 的 {item_id} 需要分数 points",
                    f"{where}: item {item_id} needs a number of points",
                )
            )
        if item_id in {item.id for item in items}:
            raise RubricError(
                bilingual(f"{where} 的 id {item_id} 重复", f"{where}: item id {item_id} given twice")
            )
        items.append(
            Item(item_id, float(value), str(entry.get("criterion", "")), str(entry.get("comment", "")))
        )
    if not items or set(data) != {"item"}:
        raise RubricError(
            bilingual(
                f"{where} 的评分细则只能有 [[item]] 表，且至少一项",
                f"{where}: a rubric holds [[item]] tables only, at least one",
            )
        )
    return Rubric(notebook, grade_id, points, tuple(items))


def unit_rubrics(unit_source: Path) -> dict[str, Rubric | None]:
    """{"notebook stem/grade_id": its rubric or None} of every hand-graded cell of a unit's source folder."""
    found = {}
    for path in sorted(unit_source.glob("*.ipynb")):
        for cell in notebooks.read(path).cells:
            if is_written_answer(cell):
                meta = notebooks.meta(cell)
                rubric = parse(cell.source, path.name, meta["grade_id"], float(meta.get("points", 0)))
                found[f"{path.stem}/{meta['grade_id']}"] = rubric
    return found


# ---- the ledger ---------------------------------------------------------------------------------------------


def ledger_path(root: Path, unit: str) -> Path:
    return root / LEDGER_FOLDER / f"{unit}.json"


def answer_key(student: str, question: str) -> str:
    """The ledger's key of one student's answer to a question ("notebook stem/grade_id")."""
    return f"{student}/{question}"


def read_ledger(root: Path, unit: str) -> dict:
    """{answer key: {"marks": {grader: {"items", "comment", "sheet"}}, "resolved": grader or None,
    "applied": {"score", "comment", "items"} or None, "replaced": [what the gradebook held before]}}."""
    path = ledger_path(root, unit)
    if not path.is_file():
        return {}
    return json.loads(path.read_text(encoding="utf-8"))["answers"]


def given_items(root: Path, unit: str, student: str, question: str, score, comment) -> list[str] | None:
    """The items given to an answer by the sheets, while the gradebook still holds what they made (`score`,
    `comment`: its manual entries now); None otherwise (graded in formgrader, or changed there since)."""
    try:
        applied = read_ledger(root, unit).get(answer_key(student, question), {}).get("applied")
    except (OSError, ValueError, KeyError):
        return None
    if applied is None or score is None or float(score) != applied["score"]:
        return None
    return applied["items"] if (comment or "") == applied["comment"] else None
