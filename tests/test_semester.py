"""Semester bookkeeping: due dates, extensions and late penalties; provenance and the pinned course version;
regrade requests; a narrowed regrade keeps the other lines of grades.csv; the private overlay replaces one
unit's judge (cases and salt) through nbgrader_config.py."""

import csv
import datetime as dt
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from course import ROOT, grade, overlay, semester
from course.layout import COURSE, Course

UTC8 = dt.timezone(dt.timedelta(hours=8))
SEMESTER = """
timezone = "+08:00"
[late]
penalty_per_day = 0.1
max_penalty = 0.3
grace_minutes = 10
[due]
"06" = 2026-03-06T23:59:00
"07_triton_basics" = 2026-03-13T23:59:00Z
[extensions.alice]
"06" = 2
[extensions.bob]
"07" = 2026-03-20T12:00:00+08:00
"""


@pytest.fixture
def policy(tmp_path):
    (tmp_path / "semester.toml").write_text(SEMESTER)
    return semester.load_policy(tmp_path / "semester.toml", COURSE)


def test_due_dates_and_extensions(policy):
    unit06, unit07 = "06_flash_attention_pytorch", "07_triton_basics"
    assert policy.due_for("carol", unit06) == dt.datetime(2026, 3, 6, 23, 59, tzinfo=UTC8)
    assert policy.due_for("carol", unit07) == dt.datetime(2026, 3, 13, 23, 59, tzinfo=dt.UTC)
    assert policy.due_for("alice", unit06) == dt.datetime(2026, 3, 8, 23, 59, tzinfo=UTC8)
    assert policy.due_for("bob", unit07) == dt.datetime(2026, 3, 20, 12, 0, tzinfo=UTC8)
    assert policy.due_for("carol", "08_flash_attention_triton") is None


def test_late_work_costs_per_started_day_up_to_the_cap(policy):
    unit, due = "06_flash_attention_pytorch", dt.datetime(2026, 3, 6, 23, 59, tzinfo=UTC8)
    assert not policy.late("carol", unit, due + dt.timedelta(minutes=9)).is_late  # within the grace
    late = policy.late("carol", unit, due + dt.timedelta(minutes=11))
    assert late.is_late and late.fraction == pytest.approx(0.1) and late.late_by_text() == "0d 00:11"
    assert policy.late("carol", unit, due + dt.timedelta(days=1, hours=1)).fraction == pytest.approx(0.2)
    assert policy.late("carol", unit, due + dt.timedelta(days=9)).fraction == pytest.approx(0.3)
    assert not policy.late("alice", unit, due + dt.timedelta(days=1)).is_late  # her extension
    assert not policy.late("carol", unit, None).is_late  # no timestamp: never marked late


def test_submission_times_from_nbgrader_or_the_uploads_csv(tmp_path):
    course = Course(tmp_path, COURSE.wrong)
    folder = course.submitted / "alice" / "06_flash_attention_pytorch"
    folder.mkdir(parents=True)
    (folder / "timestamp.txt").write_text("2026-03-06 15:04:05.123456 UTC")
    assert semester.submission_time(course, "alice", folder.name, {}) == dt.datetime(
        2026, 3, 6, 15, 4, 5, 123456, tzinfo=dt.UTC
    )
    uploads = tmp_path / "uploads.csv"
    uploads.write_text(
        "student_id,unit,timestamp\nalice,06_flash_attention_pytorch,2026-03-07T08:00:00+08:00\n"
    )
    read = semester.read_timestamps(uploads)
    assert semester.submission_time(course, "alice", folder.name, read) == dt.datetime(
        2026, 3, 7, tzinfo=dt.UTC
    )
    assert semester.submission_time(course, "bob", folder.name, read) is None


def test_an_extension_in_days_needs_a_due_date(tmp_path):
    (tmp_path / "semester.toml").write_text('[extensions.alice]\n"06" = 1\n')
    with pytest.raises(ValueError, match="no due date"):
        semester.load_policy(tmp_path / "semester.toml", COURSE)


def test_provenance_names_the_salt_without_revealing_it():
    made = semester.provenance("secret-salt", semester.course_version())
    assert made["salt_id"] == semester.salt_id("secret-salt") != semester.salt_id("other")
    assert "secret" not in json.dumps(made)
    assert made["device"] == "cpu" and made["torch"] != "none" and made["course_version"]
    assert grade.feedback_salt("secret-salt") not in ("secret-salt", grade.feedback_salt("other"))


def test_release_pins_the_version_and_grading_warns_when_it_changed(tmp_path):
    course = Course(tmp_path, COURSE.wrong)
    assert (
        semester.pin_release(course, ["06_flash_attention_pytorch"]) is None
    )  # no semester: nothing written
    (tmp_path / "semester.toml").write_text("")
    lock = semester.pin_release(course, ["06_flash_attention_pytorch"])
    pinned = json.loads(lock.read_text())["units"]["06_flash_attention_pytorch"]["course_version"]
    assert semester.version_warnings(course, ["06_flash_attention_pytorch"], pinned) == []
    (warning,) = semester.version_warnings(course, ["06_flash_attention_pytorch"], "abc123")
    assert "abc123" in warning and "警告" in warning and "warning" in warning


def test_a_narrowed_regrade_keeps_the_other_lines_and_is_logged(tmp_path):
    path = tmp_path / "grades.csv"
    rows = [grade.Row("alice", "u1", 10, 7), grade.Row("bob", "u1", 10, 5), grade.Row("alice", "u2", 4, 4)]
    grade.write_csv(rows, path, lambda row: {"final_score": f"{row.score:g}"})
    grade.write_csv(
        [grade.Row("bob", "u1", 10, 9)], path, lambda row: {"final_score": f"{row.score:g}"}, True
    )
    with path.open() as f:
        lines = {(r["student_id"], r["unit"]): r["final_score"] for r in csv.DictReader(f)}
    assert lines == {("alice", "u1"): "7", ("bob", "u1"): "9", ("alice", "u2"): "4"}
    course = Course(tmp_path, COURSE.wrong)
    assert semester.final_score(course, "bob", "u1") == "9"
    semester.record_regrade(course, "bob", "u1", "test_forward timed out", "5", "9")
    semester.record_regrade(course, "alice", "u1", "asked again", "7", "7", "denied: same inputs")
    with (tmp_path / semester.REGRADE_LOG).open() as f:
        log = list(csv.DictReader(f))
    assert [(r["student_id"], r["reason"], r["outcome"]) for r in log] == [
        ("bob", "test_forward timed out", "changed 5 -> 9"),
        ("alice", "asked again", "denied: same inputs"),
    ]
    selection = grade.Selection(students=("bob",))
    assert selection.narrowed and selection.accepts("bob", "u9") and not selection.accepts("alice", "u1")


OVERLAY_JUDGE = """
import torch
from course.judge import unit06 as public
from course.overlay import copy_unit

UNIT = copy_unit(public.UNIT)
NEGATED = "取负的分数 · negated scores"


@UNIT.cell("test_score_tile", {NEGATED: 1})
def negated(j):
    q, k = j.randn(1, 17, 16), j.randn(1, 19, 16)
    with j.case(NEGATED, "score_tile(q, k, 0, 0, 0.25, False)"):
        (s,) = j.tensors(j.call("score_tile", q, k, 0, 0, 0.25, False).result, 1, "s")
        j.expect(torch.allclose(s, -0.25 * q @ k.transpose(1, 2), atol=1e-5), "不是负的", "not negated")
"""

# In a fresh process, as nbgrader runs it: load nbgrader_config.py, then judge the reference answer of unit 06
# on its first test cell with the unit judge now registered.
JUDGE_WITH_CONFIG = """
import json, sys
from pathlib import Path
from course import grade, notebooks, submissions, worker
from course.judge import units
from course.judge.preprocessor import judge_notebook
from course.layout import COURSE
from course.overlay import copy_unit
worker.make_api(sys.argv[1])
name = "flash_attention_pytorch.ipynb"
unit = copy_unit(units.UNITS[name])
unit.cells = {"test_score_tile": unit.cells["test_score_tile"]}
source = notebooks.read(COURSE.source / "06_flash_attention_pytorch" / name)
nb = submissions.filled(notebooks.read(COURSE.release / "06_flash_attention_pytorch" / name),
                        submissions.reference_answers(source))
summary = judge_notebook(nb, unit, "alice", "s", "auto")
overlaid = sorted(n for n, u in units.UNITS.items()
                  if any(c.check.__module__.startswith("flash_course_overlay") for c in u.cells.values()))
module = units.UNITS[name].cells["test_score_tile"].check.__module__
score = summary["scores"]["test_score_tile"]
print("RESULT " + json.dumps({"module": module, "score": score, "others": overlaid, "salt": grade.grading_salt(COURSE)}))
"""


def judge_first_cell(tmp_path: Path, overlay_dir: Path | None) -> dict:
    env = {k: v for k, v in os.environ.items() if k != overlay.ENV}
    if overlay_dir:
        env[overlay.ENV] = str(overlay_dir)
    run = subprocess.run(
        [sys.executable, "-c", JUDGE_WITH_CONFIG, str(tmp_path)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert "RESULT " in run.stdout, run.stdout[-2000:] + run.stderr[-3000:]
    return json.loads(run.stdout.split("RESULT ", 1)[1])


def test_the_overlay_replaces_one_units_cases_and_the_salt(tmp_path):
    folder = tmp_path / "overlay"
    (folder / "judge").mkdir(parents=True)
    (folder / "judge" / "unit06.py").write_text(OVERLAY_JUDGE)
    (folder / "salt").write_text("private-salt\n")
    public = judge_first_cell(tmp_path, None)
    private = judge_first_cell(tmp_path, folder)
    assert public["module"] == "course.judge.unit06" and public["score"] == [1.0, 1.0]
    assert public["salt"] != "private-salt"
    assert private["module"] == "flash_course_overlay.unit06"
    assert private["score"] == [0.0, 1.0]  # the reference does not negate: the overlay's case fails it
    assert private["others"] == ["flash_attention_pytorch.ipynb"]  # every other unit keeps its public judge
    assert private["salt"] == "private-salt"


def test_an_overlay_that_does_not_exist_is_an_error(monkeypatch, tmp_path):
    monkeypatch.setenv(overlay.ENV, str(tmp_path / "missing"))
    with pytest.raises(ValueError, match="names no folder"):
        overlay.directory()


def test_feedback_only_writes_feedback_and_never_the_gradebook(tmp_path):
    """On the tiny fixture course: the preview's feedback is written, the course's gradebook, grades.csv,
    submitted/ and feedback/ stay as they were."""
    from pipeline_fixture import FIXTURE, FIXTURE_COURSE, UNIT

    from course import release, submissions

    course = Course(tmp_path / "course", FIXTURE_COURSE.wrong)
    shutil.copytree(FIXTURE / "source", course.source)
    release.build(FIXTURE_COURSE, [UNIT], course.release)
    submissions.write_student(
        course.release / UNIT, course.source / UNIT, course.submitted / "alice" / UNIT, {}
    )
    (course.root / "grades.csv").write_text("final grades\n")
    before = {p: p.read_bytes() for p in course.root.rglob("*") if p.is_file()}
    rows = grade.feedback_only(course, course.submitted, timeout=300, jobs=1)
    assert [(r.student, r.status) for r in rows] == [("alice", "graded")]
    assert {p: p.read_bytes() for p in before} == before
    assert not course.gradebook.exists() and not course.feedback.exists() and not course.autograded.exists()
    preview = course.root / "feedback_preview"
    assert sorted(p.name for p in (preview / "alice" / UNIT).glob("*.html")) == [
        "logsumexp.html",
        "softmax.html",
    ]
    assert (preview / "grades_preview.csv").read_text().startswith("student_id,unit,score")
