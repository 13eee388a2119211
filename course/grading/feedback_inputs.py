"""What a student's feedback page is made from, as one digest per (student, unit), and the digests of the pages
made (`autograded/.feedback_inputs.json`).

A page shows the autograded notebooks, the gradebook's scores and comments of the submission (hand grades
among them), the late work of its line of grades.csv (which `course feedback` and `course export` compute again
from semester.toml), the unit's rubrics and the items the sheets gave (`course.grading.rubric`), in the course's
template: a change to any of them changes the digest, and `course feedback` makes again exactly the pages whose
digest is not the one recorded when they were made (`course grade` records the pages it makes). Read without
nbgrader (through SQLite, a copy of a PostgreSQL gradebook), as the grading parent does.
"""

from __future__ import annotations

import csv
import hashlib
import json
import sqlite3
from pathlib import Path

from course.grading import gradebook_db, lms, rubric
from course.grading.atomic import replace_text
from course.layout import Course

STATE = ".feedback_inputs.json"  # in autograded/
LATE_COLUMNS = ("score", "penalty_rate", "late_by")
TEMPLATE = Path(__file__).resolve().parents[1] / "judge"
COMMENTS = lms.cells_query("comment", "x.auto_comment, x.manual_comment")


def key(pair: tuple[str, str]) -> str:
    return f"{pair[0]}/{pair[1]}"


def made_pairs(course: Course, units: list[str]) -> list[tuple[str, str]]:
    """The (student, unit) of the units that have an autograded submission, whose feedback can be made."""
    folder = course.autograded
    found = folder.glob("*/*") if folder.is_dir() else []
    return sorted((p.parent.name, p.name) for p in found if p.is_dir() and p.name in units)


def gradebook_rows(course: Course) -> dict[tuple[str, str], list]:
    """{(student, unit): every grade and comment of the submission, sorted}."""
    rows: dict[tuple[str, str], list] = {}
    with gradebook_db.readable(course) as path:
        if not path.is_file():
            return rows
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
            for query in (lms.QUERY, COMMENTS):
                for student, unit, *rest in db.execute(query):
                    rows.setdefault((student, unit), []).append(rest)
    return {pair: sorted(found, key=repr) for pair, found in rows.items()}


def late_lines(course: Course) -> dict[tuple[str, str], list[str]]:
    path = course.root / "grades.csv"
    if not path.is_file():
        return {}
    with path.open(newline="", encoding="utf-8") as f:
        return {(r["student_id"], r["unit"]): [r.get(c, "") for c in LATE_COLUMNS] for r in csv.DictReader(f)}


def files_digest(folder: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(path.relative_to(folder).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def digests(course: Course, pairs: list[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """{pair: the digest of everything its feedback page shows}."""
    grades, late = gradebook_rows(course), late_lines(course)
    template = (
        files_digest(TEMPLATE / "templates")
        + hashlib.sha256((TEMPLATE / "feedback_html.py").read_bytes()).hexdigest()
    )
    found, rubrics, ledgers = {}, {}, {}
    for student, unit in pairs:
        if unit not in rubrics:
            try:
                rubrics[unit] = repr(sorted(rubric.unit_rubrics(course.source / unit).items()))
            except rubric.RubricError as error:  # `course release` refuses it; the page shows no rubric
                rubrics[unit] = str(error)
            ledgers[unit] = rubric.read_ledger(course.root, unit)
        given = {k: v.get("applied") for k, v in ledgers[unit].items() if k.startswith(f"{student}/")}
        inputs = {
            "autograded": files_digest(course.autograded / student / unit),
            "gradebook": grades.get((student, unit), []),
            "late": late.get((student, unit)),
            "rubric": rubrics[unit],
            "given": given,
            "template": template,
        }
        found[student, unit] = hashlib.sha256(
            json.dumps(inputs, sort_keys=True, default=repr).encode()
        ).hexdigest()
    return found


def recorded(course: Course) -> dict[str, str]:
    path = course.autograded / STATE
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def record(course: Course, made: dict[tuple[str, str], str]) -> None:
    """Remember the digests of the pages just made (the others' stay)."""
    if not made:
        return
    course.autograded.mkdir(parents=True, exist_ok=True)
    kept = recorded(course) | {key(pair): digest for pair, digest in made.items()}
    replace_text(course.autograded / STATE, json.dumps(kept, indent=1, sort_keys=True))


def record_made(course: Course, pairs: list[tuple[str, str]]) -> None:
    """After a grading run made these pairs' pages: their digests as they are now."""
    record(
        course, digests(course, [pair for pair in pairs if (course.feedback / pair[0] / pair[1]).is_dir()])
    )
