"""The nbgrader exchange end to end, as a semester runs it: the instructor releases unit 06 to an exchange
folder, two students (each with a home folder of their own) fetch it, answer and submit, the instructor
collects, grades with `course grade` (one student late, one with an extension), releases the feedback, and the
students fetch it. Unit 06 is PyTorch only and one of the fastest to grade on CPU (about 2-3 minutes here).

Alice hands in, beside her notebook, pages of her own (`feedback.html`, `flash_attention_pytorch.html`, the name of
the course's page), a script and an `nbgrader_config.py` (issue 45): they stay in `submitted/`, and the feedback
folders, and the exchange the students fetch from, hold the course's pages alone. Before, nbgrader copied them into
`autograded/` and `feedback/`, and `release_feedback` put her `feedback.html` into the exchange beside the course's
page.
"""

import csv
import datetime as dt
import os
import shutil
import subprocess
import sys
from pathlib import Path

from course import ROOT, notebooks
from course.grading import feedback, grade, submissions
from course.grading.feedback_exchange import page_hash
from course.layout import COURSE, Course

UNIT = "06_flash_attention_pytorch"
COURSE_ID = "flash-attention-first-principles"
NOTEBOOK = "flash_attention_pytorch.ipynb"
HANDED_IN = {  # alice's files beside her notebook
    "feedback.html": "<script>alert('feedback')</script>",
    "flash_attention_pytorch.html": "<h1>ALICE'S OWN PAGE: full marks</h1>",
    "notes.js": "alert('js')",
    "nbgrader_config.py": "c = get_config()\n",
}
RECORDS = {"timestamp.txt", "submission_secret.txt"}  # nbgrader's own, which release_feedback reads


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
        for file, text in HANDED_IN.items() if name == "alice" else ():
            (fetched.parent / file).write_text(text)
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

    assert feedback.refresh(course, [UNIT], force=True) == ([("alice", UNIT), ("bob", UNIT)], [])
    nbgrader("release_feedback", UNIT, *instructor, cwd=ROOT, home=tmp_path)
    kept = {p.name for p in (course.submitted / "alice" / UNIT).iterdir()}
    assert set(HANDED_IN) | RECORDS | {NOTEBOOK} == kept  # for review, as handed in
    for folder, made in ((course.autograded, NOTEBOOK), (course.feedback, "flash_attention_pytorch.html")):
        assert {p.name for p in (folder / "alice" / UNIT).iterdir()} == RECORDS | {made}
    secrets = {name: (course.submitted / name / UNIT / "submission_secret.txt").read_text() for name in homes}
    released = {p.name for p in (exchange / COURSE_ID / "feedback").iterdir()}
    assert released == {f"{page_hash(secret, NOTEBOOK)}.html" for secret in secrets.values()}
    for name, home in homes.items():
        nbgrader("fetch_feedback", UNIT, f"--student={name}", *student, cwd=home, home=home)
        html = list((home / UNIT / "feedback").glob("*/flash_attention_pytorch.html"))
        assert len(html) == 1 and name in str(course.feedback / name)
        assert "test_forward" in html[0].read_text() and "ALICE'S OWN PAGE" not in html[0].read_text()
