"""A course folder with unit 01 graded for a few students and their written answers waiting for hand grading, in
a real gradebook (SQLite, or the database a test names): no notebook runs (tests/test_handgrade.py,
tests/test_feedback_fresh.py)."""

import copy
import shutil
from pathlib import Path

import nbgrader.api
from nbgrader.api import Gradebook
from nbgrader.preprocessors import SaveCells

from course import ROOT, notebooks
from course.grading import gradebook_db, worker
from course.layout import COURSE, Course

UNIT, NB = "01_memory_bottleneck", "memory_bottleneck"
WRITTEN = "written_oom_accounting"
QUESTION = f"{NB}/{WRITTEN}"
TESTS = ("test_standard_attention", "test_memory_model", "test_max_sequence_length")
ANSWERS = {
    "alice": "峰值在 softmax 反向。 / The peak is in the softmax backward.",
    "bob": '=HYPERLINK("http://evil") ' + "long answer " * 60,
    "carol": "不知道。 / No idea.",
}


def checkout_copy(folder: Path) -> Path:
    """A checkout holding unit 01's source alone (a test may edit its rubric)."""
    shutil.copytree(ROOT / "source" / UNIT, folder / "source" / UNIT)
    return folder


def make_course(root: Path, checkout: Path, db: str = "") -> Course:
    """The course folder `root`: unit 01 registered, ANSWERS' students submitted and autograded, nothing graded
    by hand; `db` the gradebook's database (default: the folder's SQLite file)."""
    nbgrader.api.get_alembic_version = worker.alembic_head
    course = Course(root, COURSE.wrong, db, checkout)
    root.mkdir(parents=True, exist_ok=True)
    url = gradebook_db.url(course)
    source = notebooks.read(course.source / UNIT / f"{NB}.ipynb")
    with Gradebook(url, gradebook_db.COURSE_ID) as gb:
        gb.add_assignment(UNIT)
    info = {"db_url": url, "assignment": UNIT, "notebook": NB, "student": ""}
    SaveCells().preprocess(copy.deepcopy(source), {"nbgrader": info})
    with Gradebook(url, gradebook_db.COURSE_ID) as gb:
        for student, answer in ANSWERS.items():
            gb.add_student(student)
            gb.add_submission(UNIT, student)
            for name in TESTS:
                gb.find_grade(name, NB, UNIT, student).auto_score = 1.0
            nb = copy.deepcopy(source)
            next(c for c in nb.cells if notebooks.meta(c).get("grade_id") == WRITTEN).source = answer
            for folder in (course.submitted, course.autograded):
                notebooks.write(nb, folder / student / UNIT / f"{NB}.ipynb")
        gb.db.commit()
    return course


def course_copy(template: Course, folder: Path) -> Course:
    """A fresh copy of the SQLite course `template` (its folder and its checkout) under `folder`."""
    shutil.copytree(template.root, folder / "course")
    shutil.copytree(template.checkout, folder / "checkout")
    return Course(folder / "course", template.wrong, "", folder / "checkout")


def hand_grades(course: Course) -> dict[str, tuple]:
    """{student: (manual score, manual comment, needs manual grading)} of the written answer."""
    with Gradebook(gradebook_db.url(course), gradebook_db.COURSE_ID) as gb:
        found = {}
        for student in ANSWERS:
            grade = gb.find_grade(WRITTEN, NB, UNIT, student)
            comment = gb.find_comment(WRITTEN, NB, UNIT, student).manual_comment
            found[student] = (grade.manual_score, comment, grade.needs_manual_grade)
        return found
