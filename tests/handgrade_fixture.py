"""A course folder with unit 01 graded for a few students and their written answers waiting for hand grading, in
a real gradebook (SQLite, or the database a test names): no notebook runs (tests/test_handgrade.py,
tests/test_feedback_fresh.py, the formgrader's tests); and a formgrader server on it."""

import contextlib
import copy
import os
import secrets
import shutil
import socket
import subprocess
import sys
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


@contextlib.contextmanager
def formgrader_running(course: Course, folder: Path, through_command: bool = True):
    """A `jupyter lab` on loopback for the course, started as `course formgrader` starts it (else as a plain `jupyter
    lab` in the checkout, the guide's former launch); yields (its URL, its token, its log file); stopped on exit."""
    from course.grading import formgrader

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    token = secrets.token_hex(16)
    options = ["--no-browser", "--ip=127.0.0.1", f"--port={port}", "--ServerApp.port_retries=0"]
    options += [f"--IdentityProvider.token={token}"] + (["--allow-root"] if os.geteuid() == 0 else [])
    env = formgrader.environment(course) | {
        "JUPYTER_CONFIG_DIR": str(folder / "config"),
        "JUPYTER_RUNTIME_DIR": str(folder / "runtime"),
    }
    argv = (
        formgrader.command(course, options)
        if through_command
        else [sys.executable, "-m", "jupyterlab", *options]
    )
    log = folder / "lab.log"
    with log.open("w") as out:
        server = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        yield f"http://127.0.0.1:{port}/", token, log, server
    finally:
        server.terminate()
        server.wait(timeout=30)
