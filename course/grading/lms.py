"""Grades an LMS takes: one column per graded cell (`grades_by_cell.csv`) and imports for Canvas and Moodle.

The scores come from nbgrader's gradebook (autograded scores and, once an instructor graded them in formgrader,
the manual scores of written answers); the late penalty from `grades.csv`, whose late columns `export` first
computes again from each submission's stored time and `semester.toml` as it is now (an extension needs no
regrade). A written answer not graded yet shows "needs manual grading" and counts 0 in the totals.

The roster (`--roster`) maps the course's student ids to the LMS's: a CSV with the columns
`student_id,name,email,sis_login_id,canvas_id,section,idnumber` (only those an export needs must be filled;
another column, or a student id missing or given twice, is an error naming the line).
"""

from __future__ import annotations

import csv
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from course import neutral, notebooks
from course.grading import gradebook_db, lms_columns, semester
from course.layout import Course
from utils.messages import bilingual

NEEDS_MANUAL = "needs manual grading"
CELLS_FILE = "grades_by_cell.csv"


def cells_query(table: str, columns: str) -> str:
    """SQL for every row of nbgrader's per-cell `table` (grade, comment) as (student, unit, notebook, cell,
    `columns` of it, named `x.…`)."""
    return f"""
SELECT sa.student_id, a.name, n.name, bc.name, {columns}
FROM {table} x
JOIN submitted_notebook sn ON x.notebook_id = sn.id
JOIN submitted_assignment sa ON sn.assignment_id = sa.id
JOIN assignment a ON sa.assignment_id = a.id
JOIN notebook n ON sn.notebook_id = n.id
JOIN base_cell bc ON x.cell_id = bc.id
"""


QUERY = cells_query("grade", "x.auto_score, x.manual_score, x.extra_credit")


@dataclass(frozen=True)
class Column:
    """One graded cell of the course, in notebook order."""

    unit: str
    notebook: str  # file name
    grade_id: str
    points: float
    manual: bool  # a written answer graded by hand

    @property
    def name(self) -> str:
        return f"{self.unit}/{self.notebook.removesuffix('.ipynb')}/{self.grade_id}"


def columns(course: Course, units: list[str]) -> list[Column]:
    """Every graded cell (test cells and written answers) of the units, from source/."""
    found = []
    for unit in units:
        for name in course.notebooks(unit):
            for cell in notebooks.read(course.source / unit / name).cells:
                meta = notebooks.meta(cell)
                if meta.get("grade"):
                    manual = notebooks.is_hand_graded(cell)
                    found.append(Column(unit, name, meta["grade_id"], float(meta.get("points", 0)), manual))
    return found


def gradebook_scores(path: Path) -> dict[tuple[str, str, str, str], float | None]:
    """{(student, unit, notebook stem, grade_id): score} read from the gradebook (None: needs manual grading).
    A manual score, once given, replaces the autograded one, as in nbgrader."""
    if not path.is_file():
        return {}
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        found = db.execute(QUERY).fetchall()
    return {
        (student, unit, notebook, cell): None
        if manual is None and auto is None
        else float(manual if manual is not None else auto) + float(extra or 0)
        for student, unit, notebook, cell, auto, manual, extra in found
    }


def judge_points(course: Course, student: str, unit: str) -> float | None:
    """What the judge gave the pair: its autograded scores, without hand scores or extra credit (None: the
    gradebook has no such submission)."""
    with gradebook_db.readable(course, (student, unit)) as gradebook:
        if not gradebook.is_file():
            return None
        with sqlite3.connect(f"file:{gradebook}?mode=ro", uri=True) as db:
            where = " WHERE sa.student_id = ? AND a.name = ?"
            found = db.execute(QUERY + where, (student, unit)).fetchall()
    return sum(float(auto or 0) for *_, auto, _, _ in found) if found else None


def penalty_rates(course: Course) -> dict[tuple[str, str], float]:
    path = course.root / "grades.csv"
    if not path.is_file():
        return {}
    with path.open(newline="", encoding="utf-8") as f:
        return {(r["student_id"], r["unit"]): float(r.get("penalty_rate") or 0) for r in csv.DictReader(f)}


@dataclass
class Table:
    """Each student's cell scores and unit totals (after the late penalty)."""

    columns: list[Column]
    cells: dict[str, dict[str, float | None]]  # student -> column name -> score (None: needs manual grading)
    totals: dict[str, dict[str, float]]  # student -> unit -> points

    def units(self) -> list[str]:
        return sorted({c.unit for c in self.columns})

    def possible(self, unit: str) -> float:
        return sum(c.points for c in self.columns if c.unit == unit)

    def ungraded(self) -> list[str]:
        """ "student: cell" of the written answers still waiting for manual grading."""
        return [
            f"{s}: {name}"
            for s, cells in sorted(self.cells.items())
            for name, v in cells.items()
            if v is None
        ]


def table(course: Course) -> Table:
    with gradebook_db.readable(course) as gradebook:
        scores = gradebook_scores(gradebook)
    units = sorted({unit for _, unit, _, _ in scores} & set(course.units()))
    cols = columns(course, units)
    rates = penalty_rates(course)
    cells: dict[str, dict[str, float | None]] = {}
    totals: dict[str, dict[str, float]] = {}
    for student in sorted({s for s, *_ in scores}):
        for unit in units:
            ours = [c for c in cols if c.unit == unit]
            keys = [(student, unit, c.notebook.removesuffix(".ipynb"), c.grade_id) for c in ours]
            if not any(key in scores for key in keys):
                continue  # no submission of this unit
            values = {c.name: scores.get(key, 0.0) for c, key in zip(ours, keys, strict=True)}
            cells.setdefault(student, {}).update(values)
            raw = sum(v for v in values.values() if v is not None)
            totals.setdefault(student, {})[unit] = raw * (1 - rates.get((student, unit), 0.0))
    return Table(cols, cells, totals)


def number(value: float | None) -> str:
    return NEEDS_MANUAL if value is None else f"{round(value, 4):g}"


def write_cells(course: Course, path: Path | None = None) -> Path:
    """`grades_by_cell.csv`: a "Points Possible" row, then one row per student: every graded cell, each unit's
    total after the late penalty, and the course total."""
    found = table(course)
    path = path or course.root / CELLS_FILE
    units = found.units()
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(
            ["student_id", *(c.name for c in found.columns), *(f"{u} total" for u in units), "total"]
        )
        possible = [found.possible(u) for u in units]
        writer.writerow(
            [
                "Points Possible",
                *(number(c.points) for c in found.columns),
                *map(number, possible),
                number(sum(possible)),
            ]
        )
        for student in sorted(found.cells):
            cells, totals = found.cells[student], found.totals[student]
            writer.writerow(
                [
                    student,
                    *(number(cells[c.name]) if c.name in cells else "" for c in found.columns),
                    *(number(totals[u]) if u in totals else "" for u in units),
                    number(sum(totals.values())),
                ]
            )
    return path


ROSTER_FILE = semester.ROSTER_FILE


def nbgrader_students(roster: dict[str, dict[str, str]] | None) -> dict[str, dict[str, str]]:
    """The roster as nbgrader's students: {id: first_name, last_name (the name split at its last space, or all
    of it), email, lms_user_id (canvas_id, else idnumber)}, only what the roster fills in."""
    students = {}
    for student, row in (roster or {}).items():
        name = (row.get("name") or "").strip()
        first, _, last = name.rpartition(" ")
        fields = {
            "first_name": first.strip(),
            "last_name": last,
            "email": (row.get("email") or "").strip(),
            "lms_user_id": (row.get("canvas_id") or row.get("idnumber") or "").strip(),
        }
        students[student] = {key: value for key, value in fields.items() if value}
    return students


def unit_scores(found: Table, student: str, missing_as_zero: bool = False) -> list[str]:
    """The student's unit totals; a unit not submitted is blank (the LMS keeps what it has), or 0."""
    totals = found.totals.get(student, {})
    blank = "0" if missing_as_zero else ""
    return [number(totals[u]) if u in totals else blank for u in found.units()]


def write_canvas(
    found: Table,
    roster: dict[str, dict[str, str]],
    path: Path,
    names: dict[str, str] | None = None,
    missing_as_zero: bool = False,
) -> None:
    """Canvas's gradebook import: Student, ID, SIS Login ID, Section, one column per unit (named by `names`, see
    course/grading/lms_columns.py); a "Points Possible" row first. Canvas matches students by SIS Login ID (or ID)
    and assignments by column name. The roster's fields are the LMS's (a name the student may edit): CSV cells
    without a formula (`course.neutral.cell`)."""
    names = names or {}
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(
            ["Student", "ID", "SIS Login ID", "Section", *(names.get(u, u) for u in found.units())]
        )
        writer.writerow(
            ["    Points Possible", "", "", "", *(number(found.possible(u)) for u in found.units())]
        )
        for student, person in roster.items():
            who = [person.get(key, "") for key in ("name", "canvas_id", "sis_login_id", "section")]
            writer.writerow([*map(neutral.cell, who), *unit_scores(found, student, missing_as_zero)])


def write_moodle(
    found: Table,
    roster: dict[str, dict[str, str]],
    path: Path,
    key: str = "idnumber",
    names: dict[str, str] | None = None,
    missing_as_zero: bool = False,
) -> None:
    """Moodle's grade import (CSV): the identifying column (`idnumber` or `email`), then one column per unit
    (named by `names`), mapped to grade items when importing."""
    names = names or {}
    if key not in ("idnumber", "email"):
        raise ValueError(
            bilingual("Moodle 的标识列只能是 idnumber 或 email", "Moodle's key is idnumber or email")
        )
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow([key, *(names.get(u, u) for u in found.units())])
        for student, person in roster.items():
            writer.writerow(
                [neutral.cell(person.get(key, "")), *unit_scores(found, student, missing_as_zero)]
            )


def export(
    course: Course,
    roster_path: Path | None,
    canvas: Path | None,
    moodle: Path | None,
    key: str,
    columns_path: Path | None = None,
    lms_gradebook: Path | None = None,
    missing_as_zero: bool = False,
) -> int:
    """`python -m course export`: grades.csv's late columns computed again, grades_by_cell.csv, and the LMS files
    asked for (through the roster), each unit in its LMS column (`columns_path`, `lms_gradebook`: see
    course/grading/lms_columns.py), a unit not submitted blank or, `missing_as_zero`, 0."""
    gradebook_db.settle(course)  # a wrong URL or password, another database: refused before writing
    semester.refresh_late_columns(course)
    found = table(course)
    names = lms_columns.unit_columns(course, found.units(), columns_path, lms_gradebook)
    print(bilingual(f"按单元格的成绩：{write_cells(course)}", f"grades by cell: {course.root / CELLS_FILE}"))
    if ungraded := found.ungraded():
        print(
            bilingual(
                f"尚待人工评分（计 0 分）：{len(ungraded)} 个书面回答，例如 {ungraded[0]}",
                f"waiting for manual grading (counted as 0): {len(ungraded)} written answers, e.g. {ungraded[0]}",
            )
        )
    if canvas or moodle:
        if roster_path is None:
            raise ValueError(bilingual("导出到 LMS 需要 --roster", "an LMS export needs --roster"))
        roster = semester.read_roster(roster_path)
        if missing := sorted(set(found.cells) - set(roster)):
            print(
                bilingual(
                    f"名单中没有这些学生（未导出）：{missing}", f"not in the roster (left out): {missing}"
                )
            )
        if canvas:
            write_canvas(found, roster, canvas, names, missing_as_zero)
            print(bilingual(f"Canvas 导入文件：{canvas}", f"Canvas import: {canvas}"))
        if moodle:
            write_moodle(found, roster, moodle, key, names, missing_as_zero)
            print(bilingual(f"Moodle 导入文件：{moodle}", f"Moodle import: {moodle}"))
    return 0
