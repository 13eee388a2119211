"""What students get wrong: every judged property's verdict, kept with the grades, and `python -m course stats`.

`course grade` keeps, for each graded (student, unit), whether each property the judge judged held (the
judge's summary, `course.judge.preprocessor`) and, for a test cell that nbgrader's own tests grade, whether
the cell earned its points: one line each in `checks.csv` beside `grades.csv`, written with it at the end of
the run (a run narrowed to some students or units keeps the other lines). A cell graded by hand is not judged
there: `stats` reads its hand scores from the gradebook as they are then. `stats` counts, per unit, how often
each property failed across the class: a table, and a bar plot for the next lecture.
"""

from __future__ import annotations

import csv
import textwrap
from collections import Counter
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from pathlib import Path

from course.layout import Course
from course.neutral import cell
from utils.messages import bilingual

CHECKS_FILE = "checks.csv"
CHECKS_COLUMNS = ["student_id", "unit", "notebook", "cell", "property", "passed"]
WHOLE_CELL = ""  # the property of a test cell graded by nbgrader's own tests: the cell earned its points
HAND = "人工评分满分 · full marks by hand"  # the property of a cell graded by hand (`hand_lines`)


def cell_checks(notebook: str, entry: dict, hand: Collection[str] = ()) -> dict[str, dict[str, bool]]:
    """{"notebook/grade_id": {property: passed}} of one graded notebook (the worker's entry): the properties
    the judge judged; for the other test cells, whether the cell earned its points, when the notebook ran to
    its end (a timeout or a dead kernel says nothing of the cells it never reached). The cells graded by hand
    (`hand`) are left out: `stats` reads them from the gradebook (`hand_lines`), where their grades are."""
    judged = (entry.get("judge") or {}).get("properties", {})
    checks = {f"{notebook}/{gid}": dict(properties) for gid, properties in judged.items() if properties}
    if entry.get("status") == "graded":
        for gid, (score, points) in entry.get("scores", {}).items():
            if gid not in judged and gid not in hand:
                checks[f"{notebook}/{gid}"] = {WHOLE_CELL: score >= points}
    return checks


def hand_lines(found) -> list[dict[str, str]]:
    """checks.csv's lines for the cells graded by hand, from the gradebook as it is now (`lms.table`): passed when
    a person gave full marks; an answer not graded yet has no line (it is counted as pending, `pending`)."""
    return [
        {
            "student_id": student,
            "unit": column.unit,
            "notebook": column.notebook,
            "cell": column.grade_id,
            "property": HAND,
            "passed": "yes" if cells[column.name] >= column.points else "no",
        }
        for student, cells in sorted(found.cells.items())
        for column in found.columns
        if column.manual and cells.get(column.name) is not None
    ]


def pending(found, unit: str) -> int:
    """How many answers of the unit's cells graded by hand wait for a person (`lms.table`)."""
    manual = [c.name for c in found.columns if c.manual and c.unit == unit]
    return sum(name in cells and cells[name] is None for cells in found.cells.values() for name in manual)


def write_checks(rows: Iterable, path: Path, keep_others: bool = False) -> None:
    """One line per (student, unit, cell, property) of the grading rows (`course.grading.grade.Row`);
    `keep_others` keeps the lines of the pairs not in `rows` from the file as it was."""
    rows = list(rows)
    ours = {(cell(row.student), cell(row.unit)) for row in rows}
    kept = [line for line in read_checks(path) if (line["student_id"], line["unit"]) not in ours]
    partial = path.with_suffix(".partial")
    with partial.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(CHECKS_COLUMNS)
        for line in kept if keep_others else []:
            writer.writerow([line[column] for column in CHECKS_COLUMNS])
        for row in rows:
            for key, properties in sorted(row.checks.items()):
                notebook, grade_id = key.split("/", 1)
                for prop, passed in properties.items():
                    fields = [row.student, row.unit, notebook, grade_id, prop]
                    writer.writerow([*map(cell, fields), "yes" if passed else "no"])
    partial.replace(path)


def read_checks(path: Path) -> list[dict[str, str]]:
    if not path.is_file():
        return []
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


@dataclass(frozen=True)
class Failures:
    """How often one property of one test cell failed across the class."""

    notebook: str
    cell: str
    property: str
    failed: int
    judged: int  # students whose verdict on it is known

    @property
    def share(self) -> float:
        return self.failed / self.judged

    def label(self, english_only: bool = False, wrap: int = 0) -> str:
        """ "cell: property" (a property is named "中文 · English"); with `english_only` its English half alone (a
        plot without a CJK font); with `wrap`, the cell and each half on lines of at most `wrap` characters."""
        halves = [half.strip() for half in (self.property or "整个单元格 · the whole cell").rsplit("· ", 1)]
        halves = halves[-1:] if english_only else halves
        if not wrap:
            return f"{self.cell}: {' · '.join(halves)}"
        return "\n".join([self.cell, *(textwrap.fill(half, wrap) for half in halves)])


def failures(lines: list[dict[str, str]], unit: str) -> list[Failures]:
    """Every property of the unit's cells, most often failed first."""
    judged, failed = Counter(), Counter()
    for line in lines:
        if line["unit"] == unit:
            key = (line["notebook"], line["cell"], line["property"])
            judged[key] += 1
            failed[key] += line["passed"] != "yes"
    found = [Failures(*key, failed[key], judged[key]) for key in judged]
    return sorted(found, key=lambda f: (-f.share, f.notebook, f.cell, f.property))


def print_table(unit: str, found: list[Failures]) -> None:
    print(f"== {unit}")
    header = (
        bilingual("性质", "property"),
        bilingual("失败", "failed"),
        bilingual("占全班", "share of class"),
    )
    lines = [(f"{f.notebook} {f.label()}", f"{f.failed} / {f.judged}", f"{f.share:.0%}") for f in found]
    widths = [max(len(x) for x in column) for column in zip(header, *lines, strict=False)]
    for line in [header, *lines]:
        print("  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=False)).rstrip())


def write_table(found: list[Failures], path: Path) -> Path:
    """The table as CSV (for slides or a spreadsheet)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["notebook", "cell", "property", "failed", "graded", "share"])
        for item in found:
            names = map(cell, [item.notebook, item.cell, item.property])
            writer.writerow([*names, item.failed, item.judged, f"{item.share:.3f}"])
    return path


def plot(unit: str, found: list[Failures], path: Path) -> Path:
    """A horizontal bar per property: the share of the class that failed it (bilingual where a CJK font is)."""
    import matplotlib.pyplot as plt

    from utils import plotting

    english_only = plotting.cjk_font() is None
    shown = list(reversed(found))  # the most often failed on top
    labels = [f.label(english_only, wrap=48) for f in shown]
    ax = plotting.axes()
    ax.figure.set_size_inches(10, 1.5 + 0.2 * sum(label.count("\n") + 1.5 for label in labels))
    ax.barh(labels, [100 * f.share for f in shown], color="tab:red")
    ax.tick_params(axis="y", labelsize=8)
    for y, f in enumerate(shown):
        ax.text(100 * f.share + 1, y, f"{f.failed}/{f.judged}", va="center", fontsize=8)
    ax.set_xlim(0, 110)
    ax.set_xlabel(plotting.text("未通过的学生 (%)", "students who failed it (%)"))
    ax.set_title(f"{unit}\n" + plotting.text("学生常错之处", "what students get wrong"))
    ax.figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    ax.figure.savefig(path, dpi=120)
    plt.close(ax.figure)
    return path


def main(course: Course, unit: str | None = None) -> int:
    from course.grading import gradebook_db, lms

    gradebook_db.settle(course)  # the gradebook the hand grades are in
    found = lms.table(course)
    lines = read_checks(course.root / CHECKS_FILE) + hand_lines(found)
    recorded = sorted({line["unit"] for line in lines})
    units = course.select([unit]) if unit else recorded
    if not lines:
        print(
            bilingual(
                f"还没有检查记录（{course.root / CHECKS_FILE}）：先运行 `python -m course grade`",
                f"no checks recorded yet ({course.root / CHECKS_FILE}): run `python -m course grade` first",
            )
        )
        return 1
    for name in units:
        failed = failures(lines, name)
        if not failed:
            print(bilingual(f"{name}：没有检查记录", f"{name}: no checks recorded"))
            continue
        print_table(name, failed)
        if waiting := pending(found, name):
            print(
                bilingual(
                    f"尚待人工评分（未计入上表）：{waiting} 个回答",
                    f"waiting for grading by hand (not in the table): {waiting} answers",
                )
            )
        table = write_table(failed, course.root / "stats" / f"{name}.csv")
        made = plot(name, failed, course.root / "stats" / f"{name}.png")
        print(bilingual(f"表：{table}；图：{made}", f"table: {table}; plot: {made}"))
    return 0
