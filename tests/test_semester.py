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

from course import ROOT, doctor
from course.grading import grade, overlay, semester
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
    read = semester.read_timestamps(uploads, COURSE)
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
from course.grading.overlay import copy_unit

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
from course import notebooks
from course.grading import grade, submissions, worker
from course.judge import units
from course.judge.preprocessor import judge_notebook
from course.layout import COURSE
from course.grading.overlay import copy_unit
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

    from course import release
    from course.grading import submissions

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


# ---- every setting checked before any grading (issue 32) ----------------------------------------------------


def write_semester(tmp_path, text: str) -> Path:
    path = tmp_path / "semester.toml"
    path.write_text(text.lstrip("\n"))
    return path


def setting_error(path: Path, course: Course = COURSE) -> str:
    with pytest.raises(semester.SettingError) as caught:
        semester.load_policy(path, course)
    message = str(caught.value)
    assert str(path) in message and " / " in message  # the file, in both languages
    return message


def test_an_iana_time_zone_keeps_daylight_saving_right(tmp_path):
    path = write_semester(
        tmp_path,
        """
timezone = "Europe/Berlin"
[due]
"01" = 2026-03-06T23:59:00
"06_flash_attention_pytorch" = 2026-04-10T23:59:00
""",
    )
    policy = semester.load_policy(path, COURSE)
    winter = policy.due_for("carol", "01_memory_bottleneck")
    summer = policy.due_for("carol", "06_flash_attention_pytorch")
    assert winter.utcoffset() == dt.timedelta(hours=1) and summer.utcoffset() == dt.timedelta(hours=2)
    assert summer.astimezone(dt.UTC) == dt.datetime(2026, 4, 10, 21, 59, tzinfo=dt.UTC)


@pytest.mark.parametrize(
    ("text", "line", "named"),
    [
        ('timezone = "Europe/Berln"\n', 1, "Europe/Berlin"),
        ('timezone = "+8"\n', 1, "+08:00"),
        ("[late]\ngrace_minutes = 5\npenalty_per_day = 10\n", 3, "0.10"),
        ("[late]\nmax_penalty = 1.5\n", 2, "max_penalty"),
        ("[late]\ngrace_minutes = -5\n", 2, "grace_minutes"),
        ("[late]\npenalty_per_dya = 0.1\n", 2, "penalty_per_day"),
        ('timezone = "UTC"\n\n[due]\n"11" = 2026-03-06T23:59:00\n', 4, "01_memory_bottleneck"),
        ('[due]\n"06" = 2026-03-06T23:59:00\n"06_flash_attention_pytorch" = 2026-03-07T23:59:00\n', 3, "06"),
        ('[due]\n"06" = "next friday"\n', 2, "2026-03-06T23:59:00"),
        ('[due]\n"06" = 2026-03-06T23:59:00\n[extensions.alice]\n"07" = 2\n', 4, "no due date"),
        ('[due]\n"06" = 2026-03-06T23:59:00\n[extensions.alice]\n"06" = -1\n', 4, "days"),
        ("[late]\npenalty_per_day = 0.1\nwrong line\n", 3, "course/grading/semester.py"),
    ],
    ids=[
        "unknown-zone",
        "offset-without-minutes",
        "penalty-over-1",
        "cap-over-1",
        "negative-grace",
        "misspelt-key",
        "unknown-unit",
        "unit-twice",
        "not-a-time",
        "days-without-due-date",
        "negative-days",
        "toml-syntax",
    ],
)
def test_each_bad_setting_names_the_file_the_line_and_the_fix(tmp_path, text, line, named):
    message = setting_error(write_semester(tmp_path, text))
    assert f"line {line}" in message and named in message, message


def test_the_timestamps_csv_is_checked_and_reads_units_in_both_forms(tmp_path):
    berlin = semester.parse_zone("Europe/Berlin")
    path = tmp_path / "times.csv"
    path.write_text("student,unit,time\nalice,06,2026-03-06T12:00:00\n")
    with pytest.raises(semester.SettingError, match="line 1") as caught:
        semester.read_timestamps(path, COURSE, berlin)
    assert str(path) in str(caught.value) and "student_id,unit,timestamp" in str(caught.value)
    path.write_text("student_id,unit,timestamp\nalice,06,2026-03-06T12:00:00\nbob,11,2026-03-06T12:00:00\n")
    with pytest.raises(semester.SettingError, match="line 3"):
        semester.read_timestamps(path, COURSE, berlin)
    path.write_text(
        "student_id,unit,timestamp\nalice,06,2026-03-06T12:00:00\n"
        "bob,07_triton_basics,2026-03-06T12:00:00+08:00\n"
    )
    times = semester.read_timestamps(path, COURSE, berlin)
    assert times == {  # "06" is unit 06 (never silently ignored); no offset: the semester's zone
        ("alice", "06_flash_attention_pytorch"): dt.datetime(2026, 3, 6, 11, 0, tzinfo=dt.UTC),
        ("bob", "07_triton_basics"): dt.datetime(2026, 3, 6, 4, 0, tzinfo=dt.UTC),
    }


def test_a_timestamp_without_an_offset_is_in_the_semesters_zone(tmp_path):
    course = Course(tmp_path, COURSE.wrong)
    folder = course.submitted / "alice" / "06_flash_attention_pytorch"
    folder.mkdir(parents=True)
    (folder / "timestamp.txt").write_text("2026-07-01 12:00:00")
    when = semester.submission_time(course, "alice", folder.name, {}, semester.parse_zone("Europe/Berlin"))
    assert when == dt.datetime(2026, 7, 1, 10, 0, tzinfo=dt.UTC)


def test_the_roster_header_and_ids_are_checked(tmp_path):
    roster = tmp_path / "roster.csv"
    roster.write_text("id,name\nalice,Alice\n")
    with pytest.raises(semester.SettingError, match="line 1") as caught:
        semester.read_roster(roster)
    assert str(roster) in str(caught.value) and "student_id" in str(caught.value)
    roster.write_text("student_id,name,sis_login\nalice,Alice,ali\n")
    with pytest.raises(semester.SettingError, match="sis_login_id"):
        semester.read_roster(roster)
    roster.write_text("student_id,name\nalice,Alice\nbob,Bob\nalice,Alice Li\n")
    with pytest.raises(semester.SettingError, match="line 4"):
        semester.read_roster(roster)


def test_a_bad_setting_stops_grading_before_anything_is_placed(tmp_path, monkeypatch):
    course = Course(tmp_path / "course", COURSE.wrong)
    shutil.copytree(COURSE.source / "01_memory_bottleneck", course.source / "01_memory_bottleneck")
    upload = tmp_path / "class" / "alice" / "01_memory_bottleneck"
    upload.mkdir(parents=True)
    shutil.copy(COURSE.release / "01_memory_bottleneck" / "memory_bottleneck.ipynb", upload)
    write_semester(course.root, "[late]\npenalty_per_day = 10\n")
    with pytest.raises(semester.SettingError, match="line 2"):
        grade.grade(course, tmp_path / "class")
    assert not course.submitted.exists() and not course.gradebook.exists()


def test_course_check_validates_the_semester_file_and_the_roster(tmp_path, monkeypatch, capsys):
    from course import cli

    monkeypatch.setenv("FLASH_COURSE_DIR", str(tmp_path))  # the course folder
    monkeypatch.delenv("FLASH_COURSE_SEMESTER", raising=False)
    write_semester(tmp_path, 'timezone = "Asia/Shanghai"\n[late]\npenalty_per_day = 0.1\n')
    (tmp_path / "roster.csv").write_text("student_id,name\nalice,Alice\n")
    assert cli.main(["check"]) == 0
    assert "semester.toml" in capsys.readouterr().out
    write_semester(tmp_path, 'timezone = "Mars/Olympus"\n')
    (tmp_path / "roster.csv").write_text("student,name\nalice,Alice\n")
    assert cli.main(["check"]) == 1
    out = capsys.readouterr().out
    assert "Mars/Olympus" in out and "line 1" in out and "roster.csv" in out and "student_id" in out


def test_an_extension_granted_after_grading_needs_no_regrade(tmp_path, capsys):
    """grades.csv keeps each submission's time; `course export` recomputes the late columns from semester.toml
    as it is now."""
    from course.grading import lms

    course = Course(tmp_path, COURSE.wrong)
    course.source.symlink_to(COURSE.source)
    unit = "06_flash_attention_pytorch"
    policy_text = (
        'timezone = "Europe/Berlin"\n[late]\npenalty_per_day = 0.25\n[due]\n"06" = 2026-03-06T23:59:00\n'
    )
    write_semester(tmp_path, policy_text)
    when = dt.datetime(2026, 3, 7, 12, 0, tzinfo=dt.UTC)  # a day late: 25 %
    columns = grade.grade_columns(
        semester.load_policy(tmp_path / "semester.toml", course), {("bob", unit): when}, {}
    )
    grade.write_csv([grade.Row("bob", unit, 20, 8)], tmp_path / "grades.csv", columns)

    def line() -> dict:
        with (tmp_path / "grades.csv").open(newline="") as f:
            (found,) = csv.DictReader(f)
        return found

    assert (line()["penalty_rate"], line()["final_score"]) == ("0.25", "6")
    write_semester(tmp_path, policy_text + '[extensions.bob]\n"06" = 2\n')
    lms.export(course, None, None, None, "idnumber")
    assert (line()["late"], line()["penalty_rate"], line()["final_score"]) == ("", "0", "8")
    assert line()["submitted_at"] == when.isoformat(timespec="seconds")


def test_an_extension_for_a_student_not_in_the_roster_is_an_error_naming_the_nearest_id(
    tmp_path, monkeypatch, capsys
):
    """A mistyped id (`[extensions.wangmx]` for wangmq) used to pass `check` and be ignored: the student was
    exported at 10 instead of 12.5. It is refused by `check`, before grading and before the export."""
    from course import cli

    course = Course(tmp_path, COURSE.wrong)
    course.source.symlink_to(COURSE.source)
    (tmp_path / "roster.csv").write_text("student_id,name\nwangmq,Wang Mingqi\nalice,Alice Li\n")
    write_semester(tmp_path, '[due]\n"06" = 2026-03-06T23:59:00\n\n[extensions.wangmx]\n"06" = 2\n')
    message = setting_error(tmp_path / "semester.toml", course)
    assert "line 4" in message and "wangmx" in message and "wangmq" in message and "roster.csv" in message

    monkeypatch.setenv("FLASH_COURSE_DIR", str(tmp_path))
    monkeypatch.delenv("FLASH_COURSE_SEMESTER", raising=False)
    assert cli.main(["check"]) == 1
    assert "wangmq" in capsys.readouterr().out
    upload = tmp_path / "class" / "wangmq" / "06_flash_attention_pytorch"
    upload.mkdir(parents=True)
    with pytest.raises(semester.SettingError, match="wangmq"):
        grade.grade(course, tmp_path / "class", sandbox="none")  # the sandbox is not what is tested
    assert not course.submitted.exists() and not course.gradebook.exists()
    grade.write_csv([grade.Row("wangmq", "06_flash_attention_pytorch", 20, 10)], tmp_path / "grades.csv")
    from course.grading import lms

    with pytest.raises(semester.SettingError, match="wangmq"):
        lms.export(course, None, None, None, "idnumber")


def test_a_pair_with_a_due_date_but_no_submission_time_is_named_never_silently_on_time(tmp_path, capsys):
    """A zip upload without a --timestamps line for it used to be graded on time without a word: it is flagged,
    so the summary lists it among the pairs that need a look."""
    course = Course(tmp_path, COURSE.wrong)
    course.source.symlink_to(COURSE.source)
    policy = semester.load_policy(write_semester(tmp_path, SEMESTER), course)
    unit06, unit01 = "06_flash_attention_pytorch", "01_memory_bottleneck"
    stamped = course.submitted / "carol" / unit06
    stamped.mkdir(parents=True)
    (stamped / "timestamp.txt").write_text("2026-03-06 15:04:05 UTC")
    rows = [grade.Row(s, u, 20, 20) for s, u in (("alice", unit06), ("carol", unit06), ("dave", unit01))]
    times = grade.submission_times(course, rows, {}, policy)
    assert times[("alice", unit06)] is None and times[("carol", unit06)] is not None
    assert [bool(row.flags) for row in rows] == [True, False, False]  # unit 01 has no due date
    assert "no submission time" in rows[0].flags[0] and "--timestamps" in rows[0].flags[0]
    grade.print_summary(rows)
    out = capsys.readouterr().out
    assert "1 need a look" in out and "alice" in out and "no submission time" in out


def test_an_overlay_judge_that_fails_to_load_is_named_with_its_own_error(monkeypatch, tmp_path):
    """A private overlay written against the old `course.overlay` path stopped grading with "nbgrader could not
    register unit" and no cause: its own error, file and the new path are named, before anything is placed."""
    folder = tmp_path / "overlay"
    (folder / "judge").mkdir(parents=True)
    (folder / "judge" / "unit06.py").write_text(
        OVERLAY_JUDGE.replace("course.grading.overlay", "course.overlay")
    )
    monkeypatch.setenv(overlay.ENV, str(folder))
    with pytest.raises(ValueError) as caught:
        overlay.check()
    said = str(caught.value)
    assert (
        "unit06.py" in said
        and "No module named 'course.overlay'" in said
        and "course.grading.overlay" in said
    )
    assert "覆盖层" in said and "overlay" in said
    course = Course(tmp_path / "course", COURSE.wrong)
    course.source.parent.mkdir()
    course.source.symlink_to(COURSE.source)
    (tmp_path / "class" / "alice" / "06_flash_attention_pytorch").mkdir(parents=True)
    with pytest.raises(ValueError, match="unit06.py"):
        grade.grade(course, tmp_path / "class", sandbox="none")
    assert not course.submitted.exists() and not course.gradebook.exists()
    lines, fatal = doctor.settings_lines(course, None)  # `course check` says so too
    assert fatal and "unit06.py" in lines[-1]
    (folder / "judge" / "unit06.py").write_text("import torch\n")  # no UNIT
    with pytest.raises(ValueError, match="UNIT"):
        overlay.check()
