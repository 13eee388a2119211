"""`python -m course handgrade`: written answers graded by rubric, by a team, in spreadsheets.

`export UNIT --graders alice bob [--by question|student] [--anonymous]` writes one CSV sheet per grader into
`handgrade/<unit>/` of the course folder: one row per (student, question) the grader got, the answer's text (or,
when long, the path of a file beside the sheet that holds it), one column per rubric item (`course.grading.rubric`)
and a free `comment` column. With `--anonymous` the student column holds an opaque id (an HMAC of the student with
the grading salt), mapped back on import. A sheet is never overwritten; a grader's marks already in the ledger are
filled in.

`import SHEET…` checks every sheet whole before anything changes (its unit, students, questions, item columns, the
ticks), then records each grader's marks in the ledger (`handgrade/<unit>.json`) and writes every answer of the
unit whose marks agree into the gradebook: the sum of its ticked items' points clamped to the cell's points, and
the items' reusable comments followed by the free comment. A row with no tick and no comment is not graded yet.
Two graders' different marks for one answer are reported and neither is written until they agree (a corrected
sheet imported again) or an import with `--resolve` decides for its own marks. A gradebook entry changed since
the ledger wrote it (formgrader) is reported and kept, unless `--resolve`, which keeps what it replaces in the
ledger. Importing the same sheets again changes nothing; points changed in the rubric re-score everyone who has
the item (`import` again, or `rescore UNIT`). One import or grading run at a time holds the course (its lock).
"""

from __future__ import annotations

import contextlib
import csv
import datetime as dt
import hashlib
import hmac
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from course.grading import gradebook_db
from course.grading.atomic import replace_text
from course.grading.grade import grading_salt
from course.grading.lock import grading_lock
from course.grading.rubric import Rubric, answer_key, ledger_path, read_ledger, unit_rubrics
from course.layout import Course
from course.neutral import FORMULA_START
from utils.messages import bilingual

FIXED = ["unit", "grader", "student", "question", "answer"]
COMMENT = "comment"
LONG_ANSWER = 500  # characters: a longer answer goes into a file beside the sheet
TICKED = {"x", "1", "y", "yes", "✓", "✔", "true"}
UNTICKED = {"", "0", "n", "no", "false"}
ANONYMOUS = "anon-"
ITEM_COLUMN = re.compile(r"^(?P<question>[^:]+):(?P<item>[A-Za-z0-9_-]+)( \([^)]*\))?$")


class SheetError(ValueError):
    """A sheet that cannot be imported (the message names it); nothing was changed."""


@dataclass(frozen=True)
class Marks:
    items: tuple[str, ...]
    comment: str

    def record(self, sheet: str) -> dict:
        return {"items": list(self.items), "comment": self.comment, "sheet": sheet}

    @staticmethod
    def of(record: dict) -> Marks:
        return Marks(tuple(record["items"]), record["comment"])


@dataclass
class Sheet:
    path: Path
    unit: str
    grader: str
    marks: dict[str, Marks]  # answer key -> the grader's marks (rows not graded yet left out)


@dataclass
class Report:
    changed: list[str] = field(default_factory=list)  # "answer: before -> after"
    kept: int = 0
    conflicts: list[str] = field(default_factory=list)

    def show(self) -> None:
        for line in self.changed:
            print(bilingual(f"写入：{line}", f"written: {line}"))
        print(
            bilingual(
                f"写入成绩簿 {len(self.changed)} 个回答，未变 {self.kept} 个，冲突 {len(self.conflicts)} 个",
                f"{len(self.changed)} answers written to the gradebook, {self.kept} unchanged, "
                f"{len(self.conflicts)} in conflict",
            )
        )
        for line in self.conflicts:
            print(line)


def questions(course: Course, unit: str) -> dict[str, Rubric]:
    """{"notebook stem/grade_id": rubric} of the unit's hand-graded cells; one without a rubric is an error."""
    found = unit_rubrics(course.source / unit)
    if missing := [question for question, rubric in found.items() if rubric is None]:
        raise ValueError(
            bilingual(
                f"{unit} 的人工评分单元格 {missing} 没有评分细则（见 course/AUTHORING.md）",
                f"{unit}: the hand-graded cell(s) {missing} declare no rubric (see course/AUTHORING.md)",
            )
        )
    if not found:
        raise ValueError(bilingual(f"{unit} 没有人工评分的单元格", f"{unit} has no hand-graded cell"))
    return found


@contextlib.contextmanager
def gradebook(course: Course):
    """nbgrader's Gradebook of the course (SQLite or PostgreSQL)."""
    import nbgrader.api

    from course.grading import worker

    nbgrader.api.get_alembic_version = worker.alembic_head  # as the course's jobs do
    with nbgrader.api.Gradebook(gradebook_db.url(course), gradebook_db.COURSE_ID) as gb:
        yield gb


def graded_students(gb, unit: str) -> list[str]:
    """The students with a submission of `unit` in the gradebook."""
    from nbgrader.api import MissingEntry

    try:
        return sorted(submission.student.id for submission in gb.find_assignment(unit).submissions)
    except MissingEntry:
        return []


def anonymous_id(salt: str, unit: str, student: str) -> str:
    """An id that names no one: the salt's HMAC of the student's answer sheet."""
    return ANONYMOUS + hmac.new(salt.encode(), f"{unit}/{student}".encode(), hashlib.sha256).hexdigest()[:12]


def answer_text(course: Course, student: str, unit: str, rubric: Rubric) -> str:
    """What the student wrote in the cell (from their submission; empty when it is missing)."""
    from course import notebooks

    path = course.submitted / student / unit / rubric.notebook
    if not path.is_file():
        return ""
    for cell in notebooks.read(path).cells:
        if notebooks.meta(cell).get("grade_id") == rubric.grade_id and cell.cell_type == "markdown":
            return cell.source
    return ""


def inert(text: str) -> str:
    """A spreadsheet shows `text` as text, never runs it as a formula; unlike `neutral.cell` its line breaks stay
    (a written answer is read whole in its cell)."""
    return "'" + text if text.startswith(FORMULA_START) else text


def split(
    graders: list[str], students: list[str], asked: list[str], by: str
) -> dict[str, list[tuple[str, str]]]:
    """{grader: [(student, question)]}: by question, each question to one grader in turn; by student, each
    grader a run of students (all their questions)."""
    if by == "question":
        return {
            grader: [(s, q) for q in asked[i :: len(graders)] for s in students]
            for i, grader in enumerate(graders)
        }
    size, extra = divmod(len(students), len(graders))
    shares, start = {}, 0
    for i, grader in enumerate(graders):
        end = start + size + (i < extra)
        shares[grader] = [(s, q) for s in students[start:end] for q in asked]
        start = end
    return shares


def item_column(question: str, item) -> str:
    return f"{question}:{item.id} ({item.points:+g})"


def export(
    course: Course,
    unit: str,
    graders: list[str],
    by: str = "question",
    anonymous: bool = False,
    into: Path | None = None,
) -> list[Path]:
    """Write each grader's sheet (and the rubric for them to read); the sheets' paths."""
    if len(set(graders)) != len(graders) or not all(re.fullmatch(r"[A-Za-z0-9_.-]+", g) for g in graders):
        raise ValueError(
            bilingual(f"评分人名字重复或含有特殊字符：{graders}", f"graders named twice or oddly: {graders}")
        )
    asked = questions(course, unit)
    gradebook_db.settle(course)
    with gradebook(course) as gb:
        students = graded_students(gb, unit)
    if not students:
        raise ValueError(bilingual(f"{unit} 还没有评过分的提交", f"{unit} has no graded submission yet"))
    folder = into or course.root / "handgrade" / unit
    sheets = {grader: folder / f"{unit}__{grader}.csv" for grader in graders}
    if existing := [str(path) for path in sheets.values() if path.exists()]:
        raise ValueError(
            bilingual(
                f"评分表已存在，不会覆盖：{existing}（先导入，再换一个 --into）",
                f"sheets exist already, never overwritten: {existing} (import them, then use another --into)",
            )
        )
    salt = grading_salt(course) if anonymous else ""
    shown = {s: anonymous_id(salt, unit, s) if anonymous else s for s in students}
    ledger = read_ledger(course.root, unit)
    columns = FIXED + [item_column(q, item) for q, r in asked.items() for item in r.items] + [COMMENT]
    folder.mkdir(parents=True, exist_ok=True)
    write_rubric(folder / f"{unit}__rubric.md", asked)
    written = []
    for grader, share in split(graders, sorted(students, key=shown.get), list(asked), by).items():
        if not share:
            print(bilingual(f"{grader} 没有分到题目", f"{grader} got no question"))
            continue
        with sheets[grader].open("w", newline="", encoding="utf-8") as f:
            writer = csv.DictWriter(f, columns)
            writer.writeheader()
            for student, question in share:
                text = answer_text(course, student, unit, asked[question])
                if len(text) > LONG_ANSWER:
                    path = folder / "answers" / f"{shown[student]}__{question.replace('/', '__')}.md"
                    path.parent.mkdir(exist_ok=True)
                    path.write_text(text, encoding="utf-8")
                    text = str(path.relative_to(folder))
                row = {"unit": unit, "grader": grader, "student": shown[student], "question": question}
                row["answer"] = inert(text)
                earlier = ledger.get(answer_key(student, question), {}).get("marks", {}).get(grader)
                if earlier:
                    row[COMMENT] = inert(earlier["comment"])
                    row.update(
                        {item_column(question, asked[question].item(i)): "x" for i in earlier["items"]}
                    )
                writer.writerow(row)
        written.append(sheets[grader])
    return written


def write_rubric(path: Path, asked: dict[str, Rubric]) -> None:
    """The rubric as the graders read it beside their sheets."""
    lines = []
    for question, rubric in asked.items():
        lines += [f"## {question} ({rubric.points:g})", ""]
        for item in rubric.items:
            lines += [f"- **{item_column(question, item)}** {item.criterion}", f"  - → {item.comment}"]
        lines.append("")
    replace_text(path, "\n".join(lines))


# ---- import ------------------------------------------------------------------------------------------------


def sheet_error(path: Path, zh: str, en: str) -> SheetError:
    return SheetError(
        bilingual(f"评分表 {path}：{zh}（什么都没有改动）", f"sheet {path}: {en} (nothing was changed)")
    )


def read_sheet(course: Course, path: Path, unit: str | None) -> Sheet:
    """One sheet, checked whole: its unit (the one given, if any), grader, students, questions and items."""
    try:
        with path.open(newline="", encoding="utf-8-sig") as f:
            rows = list(csv.DictReader(f))
            header = rows[0].keys() if rows else []
    except (OSError, UnicodeDecodeError, csv.Error) as error:
        raise sheet_error(path, f"无法读取：{error}", f"cannot be read: {error}") from None
    if not rows or not set(FIXED + [COMMENT]) <= set(header) or None in header:
        raise sheet_error(
            path,
            f"不是 course handgrade export 写出的 CSV（需要列 {FIXED + [COMMENT]}，至少一行）",
            f"not a CSV that course handgrade export wrote (columns {FIXED + [COMMENT]}, one row at least)",
        )
    units, graders = {row["unit"] for row in rows}, {row["grader"] for row in rows}
    if len(units) != 1 or len(graders) != 1:
        raise sheet_error(
            path, "每个评分表只能有一个单元和一个评分人", "a sheet holds one unit and one grader"
        )
    (found,) = units
    if found not in course.units() or (unit and found != unit):
        wanted = f"（要导入的是 {unit}）" if unit else ""
        raise sheet_error(
            path,
            f"是单元 {found} 的评分表{wanted}",
            f"is a sheet of unit {found}" + (f", not {unit}" if unit else ""),
        )
    asked = questions(course, found)
    items = {}
    for column in header:
        if column in FIXED or column == COMMENT:
            continue
        match = ITEM_COLUMN.match(column)
        rubric = asked.get(match["question"]) if match else None
        if rubric is None or rubric.item(match["item"]) is None:
            raise sheet_error(
                path,
                f"未知的评分项列 {column!r}",
                f"unknown rubric item column {column!r} (not in {found}'s rubric)",
            )
        items[column] = (match["question"], match["item"])
    with gradebook(course) as gb:
        students = graded_students(gb, found)
    names = {s: s for s in students}
    if any(row["student"].startswith(ANONYMOUS) for row in rows):
        salt = grading_salt(course)
        names |= {anonymous_id(salt, found, s): s for s in students}
    marks: dict[str, Marks] = {}
    for line, row in enumerate(rows, 2):
        where = f"第 {line} 行", f"line {line}"
        student, question = names.get(row["student"]), row["question"]
        if student is None:
            raise sheet_error(
                path,
                f"{where[0]}：{found} 中没有学生 {row['student']!r}",
                f"{where[1]}: no student {row['student']!r} in {found}",
            )
        if question not in asked:
            raise sheet_error(
                path, f"{where[0]}：未知的题目 {question!r}", f"{where[1]}: unknown question {question!r}"
            )
        given = []
        for column, (item_question, item) in items.items():
            value = (row[column] or "").strip().casefold()
            if value not in TICKED | UNTICKED:
                raise sheet_error(
                    path,
                    f"{where[0]} {column}：{row[column]!r} 不是勾选（x 或留空）",
                    f"{where[1]} {column}: {row[column]!r} is no tick (x, or empty)",
                )
            if value in TICKED and item_question != question:
                raise sheet_error(
                    path,
                    f"{where[0]}：评分项 {column} 不属于题目 {question}",
                    f"{where[1]}: item {column} is not of the question {question}",
                )
            if value in TICKED:
                given.append(item)
        comment = " ".join((row[COMMENT] or "").split())
        key = answer_key(student, question)
        if key in marks:
            raise sheet_error(path, f"{where[0]}：同一个回答出现两次", f"{where[1]}: the same answer twice")
        if given or comment:
            marks[key] = Marks(tuple(given), comment)
    return Sheet(path, found, graders.pop(), marks)


def import_sheets(
    course: Course, paths: list[Path], unit: str | None = None, resolve: bool = False
) -> Report:
    """Check every sheet, then record their marks and write the unit's agreed answers to the gradebook."""
    gradebook_db.settle(course)
    with grading_lock(course, "course handgrade import"):
        sheets = [read_sheet(course, path, unit) for path in paths]
        if len({sheet.unit for sheet in sheets}) > 1:
            raise SheetError(
                bilingual(
                    "一次只导入一个单元的评分表",
                    "import the sheets of one unit at a time (nothing was changed)",
                )
            )
        found = sheets[0].unit
        if len({sheet.grader for sheet in sheets}) < len(sheets):
            raise SheetError(
                bilingual(
                    "同一个评分人的评分表给了两份（什么都没有改动）",
                    "two sheets of one grader given (nothing was changed)",
                )
            )
        ledger = read_ledger(course.root, found)
        decided = {}
        for sheet in sheets:
            for key, marks in sheet.marks.items():
                entry = ledger.setdefault(
                    key, {"marks": {}, "resolved": None, "applied": None, "replaced": []}
                )
                entry["marks"][sheet.grader] = marks.record(sheet.path.name)
                if resolve:
                    entry["resolved"] = decided[key] = sheet.grader
        return write_answers(course, found, ledger, set(decided))


def rescore(course: Course, unit: str) -> Report:
    """Write the unit's answers again from the ledger with the rubric as it is now (points changed)."""
    gradebook_db.settle(course)
    with grading_lock(course, "course handgrade rescore"):
        return write_answers(course, unit, read_ledger(course.root, unit), set())


def agreed(entry: dict) -> Marks | None:
    """The marks the answer gets: the deciding grader's, or the one set of marks every grader gave; None when
    they differ."""
    if entry.get("resolved") in entry["marks"]:
        return Marks.of(entry["marks"][entry["resolved"]])
    found = {Marks.of(record) for record in entry["marks"].values()}
    return found.pop() if len(found) == 1 else None


def write_answers(course: Course, unit: str, ledger: dict, decided: set[str]) -> Report:
    """Score every answer of the ledger by the rubric now and write those that agree and changed into the
    gradebook, in one transaction; the ledger after. `decided`: answers whose gradebook entry may be replaced
    even where it changed outside the ledger (`--resolve`)."""
    asked, report = questions(course, unit), Report()
    with gradebook(course) as gb, gradebook_db.one_transaction(gb):
        for key, entry in sorted(ledger.items()):
            student, question = key.split("/", 1)
            rubric = asked.get(question)
            marks = agreed(entry)
            if marks is None:
                given = "; ".join(
                    f"{g}: {sorted(m['items'])} {m['comment']!r}" for g, m in entry["marks"].items()
                )
                report.conflicts.append(
                    bilingual(
                        f"冲突，未写入：{key}（{given}）；改正评分表后重新导入，或用 --resolve",
                        f"in conflict, not written: {key} ({given}); import a corrected sheet, or --resolve",
                    )
                )
                continue
            if rubric is None or any(rubric.item(i) is None for i in marks.items):
                raise ValueError(
                    bilingual(
                        f"{key} 的评分项已不在评分细则中：{list(marks.items)}（什么都没有改动）",
                        f"{key}: its items are no longer in the rubric: {list(marks.items)} (nothing was changed)",
                    )
                )
            score, comment = rubric.compose(list(marks.items), marks.comment)
            notebook = rubric.notebook.removesuffix(".ipynb")
            grade = gb.find_grade(rubric.grade_id, notebook, unit, student)
            remark = gb.find_comment(rubric.grade_id, notebook, unit, student)
            now = {"score": grade.manual_score, "comment": remark.manual_comment or ""}
            applied = entry.get("applied")
            expected = {"score": applied["score"], "comment": applied["comment"]} if applied else None
            if now == {"score": score, "comment": comment}:
                entry["applied"] = {"score": score, "comment": comment, "items": list(marks.items)}
                report.kept += 1
                continue
            untouched = now == expected if expected else now["score"] is None and not now["comment"]
            if not untouched and key not in decided:
                report.conflicts.append(
                    bilingual(
                        f"成绩簿中 {key} 已在别处改过（{now}），评分表给出 {score:g}：保留成绩簿的；要用评分表的，"
                        "重新导入并加 --resolve",
                        f"{key} was changed elsewhere in the gradebook ({now}), the sheets give {score:g}: the "
                        "gradebook's is kept; to take the sheets', import again with --resolve",
                    )
                )
                continue
            if not untouched:
                entry["replaced"].append(now | {"at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds")})
            grade.manual_score, grade.needs_manual_grade = score, False
            remark.manual_comment = comment
            entry["applied"] = {"score": score, "comment": comment, "items": list(marks.items)}
            before = "—" if now["score"] is None else f"{now['score']:g}"
            report.changed.append(f"{key}: {before} -> {score:g}")
        gb.db.commit()
    path = ledger_path(course.root, unit)
    path.parent.mkdir(parents=True, exist_ok=True)
    replace_text(path, json_text({"unit": unit, "answers": ledger}))
    return report


def json_text(data: dict) -> str:
    return json.dumps(data, ensure_ascii=False, indent=1, sort_keys=True) + "\n"


def main_export(
    course: Course, unit: str, graders: list[str], by: str, anonymous: bool, into: str | None
) -> int:
    (unit,) = course.select([unit])
    for path in export(course, unit, graders, by, anonymous, Path(into) if into else None):
        print(bilingual(f"评分表：{path}", f"sheet: {path}"))
    return 0


def main_import(course: Course, sheets: list[str], unit: str | None, resolve: bool) -> int:
    chosen = course.select([unit])[0] if unit else None
    report = import_sheets(course, [Path(s) for s in sheets], chosen, resolve)
    report.show()
    return 1 if report.conflicts else 0


def main_rescore(course: Course, unit: str) -> int:
    (unit,) = course.select([unit])
    report = rescore(course, unit)
    report.show()
    return 1 if report.conflicts else 0
