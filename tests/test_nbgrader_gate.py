"""nbgrader's own Autograde and Generate (issue 32): formgrader's buttons and plain `nbgrader autograde` /
`nbgrader generate_assignment`, run in a course root configured by the course's nbgrader_config.py, refuse
before anything is written, naming the course's command; the course's own runs go through (every pipeline test)."""

import os
import shutil
import subprocess
import sys

import pytest
from nbgrader.api import Gradebook
from pipeline_fixture import FIXTURE, FIXTURE_COURSE, UNIT

from course import ROOT
from course.grading import grade, submissions
from course.layout import COURSE, Course

COURSE_ID = "flash-attention-first-principles"


@pytest.fixture
def mini_course(tmp_path):
    """The fixture course with the course's nbgrader_config.py, its unit registered in the gradebook (through
    the course), alice's submission collected and a graded notebook of hers in autograded/."""
    course = Course(tmp_path / "course", FIXTURE_COURSE.wrong)
    shutil.copytree(FIXTURE / "source", course.source)
    shutil.copy(ROOT / "nbgrader_config.py", course.root)
    submissions.write_student(
        FIXTURE / "release" / UNIT, course.source / UNIT, course.submitted / "alice" / UNIT, {}
    )
    grade.register_units(course, [UNIT])
    graded = course.autograded / "alice" / UNIT / "softmax.ipynb"
    graded.parent.mkdir(parents=True)
    graded.write_text("the course's graded notebook")
    return course


def nbgrader_command(course: Course, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    nbgrader = shutil.which("nbgrader", path=os.path.dirname(sys.executable))
    return subprocess.run(
        [nbgrader, *args], cwd=course.root, env=env, capture_output=True, text=True, timeout=300
    )


def formgrader_api(course: Course):
    """The NbGraderAPI formgrader's buttons call, configured as formgrader is: by the course root's config."""
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(course.root)).load_config()
    config.CourseDirectory.root = str(course.root)
    return NbGraderAPI(coursedir=CourseDirectory(config=config), config=config)


def untouched(course: Course) -> bool:
    with Gradebook(f"sqlite:///{course.gradebook}", COURSE_ID) as gb:
        no_submission = not gb.find_assignment(UNIT).submissions
    graded = course.autograded / "alice" / UNIT / "softmax.ipynb"
    return (
        no_submission and graded.read_text() == "the course's graded notebook" and not course.release.exists()
    )


def test_plain_nbgrader_autograde_is_refused_naming_the_course_command(mini_course):
    run = nbgrader_command(mini_course, "autograde", UNIT, "--student", "alice")
    assert run.returncode != 0
    assert (
        "python -m course grade" in run.stdout + run.stderr
        and "nbgrader autograde" in run.stdout + run.stderr
    )
    assert untouched(mini_course)


def test_formgraders_autograde_button_is_refused_naming_the_course_command(mini_course):
    out = formgrader_api(mini_course).autograde(UNIT, "alice")
    assert not out["success"] and "python -m course grade" in out["error"]
    assert untouched(mini_course)


def test_plain_nbgrader_generate_assignment_is_refused_naming_the_course_command(mini_course):
    run = nbgrader_command(mini_course, "generate_assignment", UNIT)
    assert run.returncode != 0 and "python -m course release" in run.stdout + run.stderr
    assert untouched(mini_course)


def test_formgraders_generate_button_is_refused_naming_the_course_command(mini_course):
    out = formgrader_api(mini_course).generate_assignment(UNIT)
    assert not out["success"] and "python -m course release" in out["error"]
    assert untouched(mini_course)


def test_forced_past_the_gate_the_judge_still_refuses_without_the_course_secret(tmp_path):
    """`nbgrader autograde --CourseCommandOnly.run_by_course=True` on unit 01 (judged): the notebook runs, but
    the judge refuses to score it without the grading secret, naming the course's command."""
    unit = "01_memory_bottleneck"
    course = Course(tmp_path / "course", COURSE.wrong)
    shutil.copytree(COURSE.source / unit, course.source / unit)
    shutil.copy(ROOT / "nbgrader_config.py", course.root)
    submissions.write_student(
        COURSE.release / unit, course.source / unit, course.submitted / "alice" / unit, {}
    )
    grade.register_units(course, [unit])
    run = nbgrader_command(
        course, "autograde", unit, "--student", "alice", "--CourseCommandOnly.run_by_course=True"
    )
    assert run.returncode != 0
    assert "no grading secret: grade with `python -m course grade`" in run.stdout + run.stderr
    assert not (course.autograded / "alice" / unit).exists()
