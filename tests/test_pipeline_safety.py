"""Grading never loses a submission: submitted/ is graded in place, a run killed half-way leaves every
submission intact and a rerun completes, and the gradebook is backed up before each run."""

import hashlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from pipeline_fixture import FIXTURE, FIXTURE_COURSE, UNIT

from course import ROOT, release
from course.grading import grade, runner, submissions
from course.layout import Course


def digest(folder: Path) -> dict[str, str]:
    files = (p for p in folder.rglob("*") if p.is_file())
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() for p in files}


def fixture_course(root: Path, students: list[str]) -> Course:
    """A copy of the fixture course whose submitted/ holds correct submissions of `students`."""
    course = Course(root, FIXTURE_COURSE.wrong)
    shutil.copytree(FIXTURE / "source", course.source)
    release.build(FIXTURE_COURSE, [UNIT], course.release)
    for student in students:
        submissions.write_student(
            course.release / UNIT, course.source / UNIT, course.submitted / student / UNIT, {}
        )
    return course


def test_copying_submitted_onto_itself_keeps_every_file(tmp_path):
    course = fixture_course(tmp_path / "course", ["alice", "bob"])
    before = digest(course.submitted)
    placed = grade.copy_class(course, course.submitted)
    assert [(i.student, i.unit, i.refused) for i in placed] == [("alice", UNIT, ""), ("bob", UNIT, "")]
    assert digest(course.submitted) == before


def test_a_new_copy_replaces_the_old_one_completely(tmp_path):
    course = fixture_course(tmp_path / "course", ["alice"])
    (course.submitted / "alice" / UNIT / "stale.txt").write_text("from an earlier collection")
    incoming = tmp_path / "class"
    shutil.copytree(course.submitted, incoming)
    (incoming / "alice" / UNIT / "stale.txt").unlink()
    grade.copy_class(course, incoming)
    assert digest(course.submitted) == digest(incoming)
    assert not list(course.submitted.rglob(".*incoming")) and not list(course.submitted.rglob(".*outgoing"))


def test_the_gradebook_is_backed_up_before_a_run(tmp_path):
    course = fixture_course(tmp_path / "course", [])
    assert grade.back_up_gradebook(course) is None  # nothing to back up yet
    course.gradebook.write_bytes(b"grades")
    backup = grade.back_up_gradebook(course)
    assert backup.read_bytes() == b"grades" and backup.parent == course.root / "gradebook_backups"


GRADE_IN_PLACE = """
import sys
from pathlib import Path

import pytest
from course.grading import grade
from course.layout import Course
course = Course(Path(sys.argv[1]), Path(sys.argv[2]))
rows = grade.grade(course, course.submitted, timeout=300, jobs=1, everything=sys.argv[3] == "all")
print("SCORES", sorted((r.student, r.score, r.status) for r in rows))
"""


def run_grading(course: Course, everything: bool = False) -> subprocess.Popen:
    how = "all" if everything else "new"
    return subprocess.Popen(
        [sys.executable, "-c", GRADE_IN_PLACE, str(course.root), str(course.wrong), how],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )


def kill_after_first_pair(course: Course) -> None:
    """Start grading the course in place and SIGKILL it once the first student's unit is graded."""
    first = run_grading(course)
    log = course.autograded / "grading.log"
    deadline = time.monotonic() + 240
    jobs = Path(tempfile.gettempdir()).glob  # the grader's job folder: killed between two pairs, it has none
    while time.monotonic() < deadline and first.poll() is None and not (
        "########" in (log.read_text() if log.exists() else "")
        and any(jobs(f"{runner.JOB_PREFIX}{first.pid}-*"))
    ):
        time.sleep(0.2)  # wait until the first student's unit is graded and the next one's job has begun
    assert first.poll() is None, first.communicate()[0]
    os.killpg(first.pid, signal.SIGKILL)
    first.wait()


@pytest.mark.parametrize(
    "everything", [pytest.param(True, id="all", marks=pytest.mark.heavy), pytest.param(False, id="rerun")]
)
def test_grading_killed_half_way_loses_nothing_and_a_rerun_completes(tmp_path, everything):
    """Killed after the first pair: nothing is lost; a rerun grades only what the first run had not finished
    (the first pair is graded once in all), `--all` everything again."""
    students = ["alice", "bob", "carol"]
    course = fixture_course(tmp_path / "course", students)
    before = digest(course.submitted)
    kill_after_first_pair(course)
    abandoned = runner.abandoned_jobs()
    assert abandoned  # the killed grader's job folder, with its sandboxes, is still there
    assert digest(course.submitted) == before
    done = [s for s in students if f"######## {s}/" in (course.autograded / "grading.log").read_text()]
    assert len(done) >= 1
    second = run_grading(course, everything)
    out, _ = second.communicate(timeout=600)
    assert second.returncode == 0, out
    assert not [f for f in abandoned if f.exists()]  # the killed run's sandboxes were swept
    full = sum(grade.max_points(p) for p in (course.source / UNIT).glob("*.ipynb"))
    assert f"SCORES {sorted((s, full, 'graded') for s in students)}" in out
    assert digest(course.submitted) == before
    assert list((course.root / "gradebook_backups").glob("gradebook-*.db"))  # the rerun backed up the first's
    log = (course.autograded / "grading.log").read_text()
    if not everything:
        assert f"unchanged since graded, kept: {len(done)}" in out
        assert all(log.count(f"######## {s}/") == 1 for s in students), log.count("########")
        assert (course.root / "grades.csv").read_text().count("\n") == len(students) + 1
    else:
        assert all(log.count(f"######## {s}/") == 1 for s in students)  # a plain rerun starts a fresh log
