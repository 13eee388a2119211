"""Grades an LMS takes: one column per graded cell with unit and course totals (late penalty applied), written
answers shown as needing manual grading until an instructor grades them, and Canvas / Moodle imports through a
roster. The gradebook is built with nbgrader's API, as autograding and formgrader leave it."""

import csv
import shutil

import nbgrader.api
import pytest
from nbgrader.api import Gradebook

from course import cli, notebooks
from course.grading import lms, worker
from course.layout import COURSE, Course

UNIT = "01_memory_bottleneck"
NB = "memory_bottleneck"


@pytest.fixture
def course(tmp_path, monkeypatch):
    # as the course's worker does: no `alembic` script needed on PATH
    monkeypatch.setattr(nbgrader.api, "get_alembic_version", worker.alembic_head)
    course = Course(tmp_path, COURSE.wrong)
    shutil.copytree(COURSE.source / UNIT, course.source / UNIT)
    cells = {
        notebooks.meta(c)["grade_id"]: (float(notebooks.meta(c)["points"]), c.cell_type)
        for c in notebooks.read(course.source / UNIT / f"{NB}.ipynb").cells
        if notebooks.meta(c).get("grade")
    }
    with Gradebook(f"sqlite:///{course.gradebook}", "flash-attention-first-principles") as gb:
        gb.add_assignment(UNIT)
        gb.add_notebook(NB, UNIT)
        for name, (points, kind) in cells.items():
            gb.add_grade_cell(name, NB, UNIT, max_score=points, cell_type=kind)
        for student in ("alice", "bob", "dave"):
            gb.add_student(student)
            gb.add_submission(UNIT, student)
            for name, (points, kind) in cells.items():
                grade = gb.find_grade(name, NB, UNIT, student)
                grade.auto_score = None if kind == "markdown" else (points if student != "bob" else 1.0)
        gb.find_grade("written_oom_accounting", NB, UNIT, "alice").manual_score = 2.5
        gb.db.commit()
    (tmp_path / "grades.csv").write_text(
        f"student_id,unit,penalty_rate\nalice,{UNIT},0\nbob,{UNIT},0.5\ndave,{UNIT},0\n"
    )
    return course


def read(path):
    with path.open(newline="") as f:
        return list(csv.reader(f))


def test_one_column_per_graded_cell_and_manual_grading(course):
    rows = read(lms.write_cells(course))
    header, possible, *students = rows
    assert header == [
        "student_id",
        f"{UNIT}/{NB}/test_standard_attention",
        f"{UNIT}/{NB}/test_memory_model",
        f"{UNIT}/{NB}/test_max_sequence_length",
        f"{UNIT}/{NB}/written_oom_accounting",
        f"{UNIT} total",
        "total",
    ]
    assert possible == ["Points Possible", "3", "4", "2", "3", "12", "12"]
    assert students == [
        ["alice", "3", "4", "2", "2.5", "11.5", "11.5"],
        ["bob", "1", "1", "1", lms.NEEDS_MANUAL, "1.5", "1.5"],  # 3 points, late: half
        ["dave", "3", "4", "2", lms.NEEDS_MANUAL, "9", "9"],
    ]
    assert lms.table(course).ungraded() == [f"bob: {UNIT}/{NB}/written_oom_accounting", f"dave: {header[4]}"]


def test_canvas_and_moodle_imports_through_the_roster(course, tmp_path, capsys):
    roster = tmp_path / "roster.csv"
    roster.write_text(
        "student_id,name,email,sis_login_id,canvas_id,section,idnumber\n"
        "alice,Alice Li,alice@uni.edu,ali,101,A,S1\n"
        "bob,Bob Wang,bob@uni.edu,bwa,102,B,S2\n"
        "carol,Carol Xu,carol@uni.edu,cxu,103,A,S3\n"
    )
    canvas, moodle = tmp_path / "canvas.csv", tmp_path / "moodle.csv"
    assert lms.export(course, roster, canvas, moodle, "email") == 0
    out = capsys.readouterr().out
    assert "['dave']" in out and "waiting for manual grading (counted as 0): 2 written answers" in out
    assert read(canvas) == [
        ["Student", "ID", "SIS Login ID", "Section", UNIT],
        ["    Points Possible", "", "", "", "12"],
        ["Alice Li", "101", "ali", "A", "11.5"],
        ["Bob Wang", "102", "bwa", "B", "1.5"],
        ["Carol Xu", "103", "cxu", "A", ""],  # nothing submitted: left blank, Canvas keeps what it has
    ]
    assert read(moodle) == [
        ["email", UNIT],
        ["alice@uni.edu", "11.5"],
        ["bob@uni.edu", "1.5"],
        ["carol@uni.edu", ""],
    ]
    with pytest.raises(ValueError, match="roster"):
        lms.export(course, None, canvas, None, "idnumber")


def roster_file(tmp_path):
    roster = tmp_path / "roster.csv"
    roster.write_text(
        "student_id,name,canvas_id,sis_login_id,idnumber\n"
        "alice,Alice Li,101,ali,S1\nbob,Bob Wang,102,bwa,S2\ncarol,Carol Xu,103,cxu,S3\n"
    )
    return roster


CANVAS_EXPORT = (
    "\ufeffStudent,ID,SIS User ID,SIS Login ID,Section,Quiz 1 (4100),"
    f"{UNIT} (4242),Assignments Current Score\n"
    "    Points Possible,,,,,5,12,(read only)\n"
)


def test_grades_land_in_the_lms_own_column_never_a_new_assignment(course, tmp_path):
    """Canvas's own export names the unit's assignment `01_memory_bottleneck (4242)`: the import file uses that
    column, so Canvas updates the assignment instead of creating a second one beside it."""
    lms_export, canvas, moodle = (
        tmp_path / "canvas_export.csv",
        tmp_path / "canvas.csv",
        tmp_path / "moodle.csv",
    )
    lms_export.write_text(CANVAS_EXPORT, encoding="utf-8")
    lms.export(course, roster_file(tmp_path), canvas, moodle, "idnumber", lms_gradebook=lms_export)
    assert read(canvas)[0] == ["Student", "ID", "SIS Login ID", "Section", f"{UNIT} (4242)"]
    assert read(moodle)[0] == ["idnumber", f"{UNIT} (4242)"]


def test_a_mapping_file_names_the_column(course, tmp_path):
    mapping, canvas = tmp_path / "columns.csv", tmp_path / "canvas.csv"
    mapping.write_text("unit,column\n01,Quiz 1 (4100)\n")
    lms_export = tmp_path / "canvas_export.csv"
    lms_export.write_text(CANVAS_EXPORT, encoding="utf-8")
    lms.export(course, roster_file(tmp_path), canvas, None, "idnumber", mapping, lms_export)
    assert read(canvas)[0][-1] == "Quiz 1 (4100)"
    lms.export(
        course, roster_file(tmp_path), canvas, None, "idnumber", mapping
    )  # no LMS export to check against
    assert read(canvas)[0][-1] == "Quiz 1 (4100)"
    mapping.write_text("unit,column\n01,Homework 1\n")
    with pytest.raises(ValueError, match="duplicate assignment") as refused:
        lms.export(course, roster_file(tmp_path), canvas, None, "idnumber", mapping, lms_export)
    assert str(lms_export) in str(refused.value) and "--columns" in str(refused.value)
    mapping.write_text("unit,column\n99,Homework 1\n")
    with pytest.raises(ValueError, match="line 2"):
        lms.export(course, roster_file(tmp_path), canvas, None, "idnumber", mapping)


def test_a_unit_the_lms_does_not_have_is_refused_before_any_lms_file_is_written(course, tmp_path):
    lms_export, canvas = tmp_path / "canvas_export.csv", tmp_path / "canvas.csv"
    lms_export.write_text("Student,ID,SIS User ID,SIS Login ID,Section,Quiz 1 (4100)\n", encoding="utf-8")
    with pytest.raises(ValueError, match="duplicate assignment"):
        lms.export(course, roster_file(tmp_path), canvas, None, "idnumber", lms_gradebook=lms_export)
    assert not canvas.exists()


def test_missing_exported_as_zero_on_request(course, tmp_path):
    canvas, moodle = tmp_path / "canvas.csv", tmp_path / "moodle.csv"
    lms.export(course, roster_file(tmp_path), canvas, moodle, "idnumber")
    assert read(canvas)[-1][-1] == "" and read(moodle)[-1] == ["S3", ""]  # carol: nothing submitted
    lms.export(course, roster_file(tmp_path), canvas, moodle, "idnumber", missing_as_zero=True)
    assert read(canvas)[-1] == ["Carol Xu", "103", "cxu", "", "0"]
    assert read(moodle)[-1] == ["S3", "0"]
    assert read(moodle)[1] == ["S1", "11.5"]


def test_the_export_options_on_the_command_line():
    args = cli.build_parser().parse_args(
        ["export", "--columns", "c.csv", "--lms-gradebook", "g.csv", "--missing-as-zero"]
    )
    assert (args.columns, args.lms_gradebook, args.missing_as_zero) == ("c.csv", "g.csv", True)
