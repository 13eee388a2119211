"""The nbgrader exchange end to end, as a semester runs it: the instructor releases unit 06 to an exchange
folder, two students (each with a home folder of their own) fetch it, answer and submit, the instructor
collects, grades with `course grade` (one student late, one with an extension), releases the feedback, and the
students fetch it. Unit 06 is PyTorch only and one of the fastest to grade on CPU (about 2-3 minutes here).
"""

import csv
import datetime as dt
import os
import shutil
import subprocess
import sys
from pathlib import Path

from course import ROOT, notebooks
from course.grading import grade, submissions
from course.layout import COURSE, Course

UNIT = "06_flash_attention_pytorch"
COURSE_ID = "flash-attention-first-principles"


def nbgrader(*args: str, cwd: Path, home: Path) -> str:
    env = dict(
        os.environ, HOME=str(home), PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    )
    run = subprocess.run(
        [sys.executable, "-m", "nbgrader", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-3000:]
    return run.stdout + run.stderr


def test_release_fetch_submit_collect_grade_and_feedback(tmp_path):
    root, exchange = tmp_path / "course", tmp_path / "exchange"
    course = Course(root, COURSE.wrong)
    shutil.copytree(COURSE.source / UNIT, course.source / UNIT)
    shutil.copytree(COURSE.release / UNIT, course.release / UNIT)
    instructor = ("--Exchange.root=" + str(exchange), f"--CourseDirectory.root={root}")
    student = ("--Exchange.root=" + str(exchange), f"--CourseDirectory.course_id={COURSE_ID}")
    nbgrader("release_assignment", UNIT, *instructor, cwd=ROOT, home=tmp_path)

    homes = {name: tmp_path / "home" / name for name in ("alice", "bob")}
    for name, home in homes.items():
        home.mkdir(parents=True)
        nbgrader("fetch_assignment", UNIT, *student, cwd=home, home=home)
        fetched = home / UNIT / "flash_attention_pytorch.ipynb"
        answers = submissions.reference_answers(notebooks.read(course.source / UNIT / fetched.name))
        notebooks.write(submissions.filled(notebooks.read(fetched), answers), fetched)
        nbgrader("submit", UNIT, f"--student={name}", *student, cwd=home, home=home)

    # The deadline passed an hour before the students submitted; alice has a one-day extension.
    due = dt.datetime.now(dt.UTC) - dt.timedelta(hours=1)
    (root / "semester.toml").write_text(
        f'[late]\npenalty_per_day = 0.25\n[due]\n"06" = {due.isoformat(timespec="seconds")}\n'
        '[extensions.alice]\n"06" = 1\n'
    )
    nbgrader("collect", UNIT, *instructor, cwd=ROOT, home=tmp_path)
    collected = sorted(p.parent.parent.name for p in course.submitted.glob(f"*/{UNIT}/timestamp.txt"))
    assert collected == ["alice", "bob"]

    rows = {row.student: row for row in grade.grade(course, course.submitted, timeout=600)}
    full = grade.max_points(course.source / UNIT / "flash_attention_pytorch.ipynb")
    assert {name: (row.score, row.status) for name, row in rows.items()} == {
        "alice": (full, "graded"),
        "bob": (full, "graded"),
    }
    with (root / "grades.csv").open() as f:
        table = {r["student_id"]: r for r in csv.DictReader(f)}
    assert (table["alice"]["late"], table["alice"]["penalty"]) == ("", "0")
    assert table["bob"]["late"] == "yes" and table["bob"]["late_by"].startswith("0d 01:")
    assert float(table["bob"]["final_score"]) == full * 0.75
    assert table["bob"]["device"] == "cpu" and table["bob"]["salt_id"] not in ("", "none")

    nbgrader("release_feedback", UNIT, *instructor, cwd=ROOT, home=tmp_path)
    for name, home in homes.items():
        nbgrader("fetch_feedback", UNIT, f"--student={name}", *student, cwd=home, home=home)
        html = list((home / UNIT / "feedback").glob("*/flash_attention_pytorch.html"))
        assert len(html) == 1 and name in str(course.feedback / name)
        assert "test_forward" in html[0].read_text()
