"""The end of `course grade` for a class of hundreds: counts by outcome, then only the pairs that need a look (the
full table stays in grades.csv and behind --verbose); and progress from the first pair, a pair that needs a look
named as soon as it finishes."""

import shutil
import threading
import time

import pytest
from pipeline_fixture import FIXTURE, FIXTURE_COURSE
from pipeline_fixture import UNIT as FIXTURE_UNIT

from course.grading import grade
from course.layout import Course

UNIT = "01_memory_bottleneck"


def class_rows() -> list[grade.Row]:
    rows = [grade.Row(f"s{i:03d}", UNIT, 12.0, score=12.0) for i in range(500)]
    rows[3].flags.append("memory_bottleneck.ipynb: the judge saw a forged count")
    rows[7].problems["memory_bottleneck.ipynb"] = "timeout"
    rows[9].problems["memory_bottleneck.ipynb"] = "missing"
    rows.append(
        grade.Row("zed", UNIT, 12.0, problems={"": "not graded"}, flags=["refused zed/01: a symlink"])
    )
    rows.append(grade.Row("amy", "99_nothing", 0.0, problems={"": "unknown unit"}))
    return rows


def test_counts_first_then_only_the_pairs_that_need_a_look(capsys):
    rows = class_rows()
    grade.print_summary(rows)
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert "graded 497" in lines[0] and "flagged for review 1" in lines[0] and "failed 1" in lines[0]
    assert "missing 1" in lines[0] and "not graded 1" in lines[0] and "unknown unit 1" in lines[0]
    assert "502" in lines[0]
    assert len(lines) < 15, out  # not one line per pair
    for student in ("s003", "s007", "s009", "zed", "amy"):
        assert any(line.startswith(student) for line in lines), (student, out)
    assert not any(line.startswith("s000") for line in lines)
    assert "forged count" in out and "a symlink" in out and "grades.csv" in out


def test_verbose_shows_every_pair(capsys):
    grade.print_summary(class_rows(), verbose=True)
    out = capsys.readouterr().out
    assert sum(line.startswith("s") for line in out.splitlines()) >= 500


def test_a_class_without_problems_says_so(capsys):
    grade.print_summary([grade.Row("alice", UNIT, 12.0, score=12.0)])
    out = capsys.readouterr().out
    assert "graded 1" in out and "nothing needs a look" in out and "alice" not in out


def test_a_failed_pair_is_named_as_it_finishes_not_at_the_end(monkeypatch, tmp_path, capsys):
    """s0 times out at once while the other pairs are still grading: it is on screen before they finish."""
    seen = threading.Event()
    said = []

    def fake_grade(course, student, unit, *_):
        if student == "s0":
            return grade.Row(student, unit, 1.0, problems={"nb.ipynb": "timeout"})
        deadline = time.monotonic() + 10
        while not seen.is_set() and time.monotonic() < deadline:
            captured = capsys.readouterr()
            said.append(captured.out + captured.err)
            if "s0" in "".join(said):
                seen.set()
            time.sleep(0.05)
        return grade.Row(student, unit, 1.0, score=1.0)

    monkeypatch.setattr(grade, "grade_pair", fake_grade)
    monkeypatch.setattr(grade, "merge_gradebooks", lambda *_: None)
    monkeypatch.setattr(grade, "save_progress", lambda course, row: None)
    students = [f"s{i}" for i in range(3)]
    folders = [tmp_path / s for s in students]
    for folder in folders:
        folder.mkdir()
    rows = grade.grade_pairs(None, [(s, UNIT) for s in students], folders, 60, 3, tmp_path / "grading.log")
    assert seen.is_set(), said
    assert [row.student for row in rows] == students


def test_a_student_not_in_the_roster_needs_a_look():
    """roster.csv is the course's one list of students: a submission of anyone else is flagged for review."""
    rows = [grade.Row("alice", UNIT, 12.0, score=12.0), grade.Row("alcie", UNIT, 12.0, score=12.0)]
    grade.flag_unlisted(rows, {"alice": {"student_id": "alice"}})
    assert rows[0].flags == [] and grade.outcome(rows[1]) == "flagged for review"
    assert "alcie is not in roster.csv" in rows[1].flags[0]
    grade.flag_unlisted(rows[:1], None)  # no roster yet: nothing to check against
    assert rows[0].flags == []


def test_a_broken_roster_stops_grading_before_anything_is_placed(tmp_path):
    course = Course(tmp_path / "course", FIXTURE_COURSE.wrong)
    shutil.copytree(FIXTURE / "source", course.source)
    (course.root / "roster.csv").write_text(
        "student_id,name\nalice,Alice\nalice,Alice Li\n", encoding="utf-8"
    )
    uploads = tmp_path / "uploads" / "alice" / FIXTURE_UNIT
    uploads.mkdir(parents=True)
    shutil.copy(FIXTURE / "source" / FIXTURE_UNIT / "softmax.ipynb", uploads)
    with pytest.raises(ValueError, match="roster.csv") as refused:
        grade.grade(course, tmp_path / "uploads")
    assert "line 3" in str(refused.value)
    assert not course.submitted.exists()


def test_nbgrader_students_come_from_the_roster(tmp_path, monkeypatch):
    """Grading writes the roster's students (names, email, LMS id) into nbgrader's gradebook: formgrader lists the
    same class as roster.csv, with no second list kept by `nbgrader db student import`."""
    import nbgrader.api
    from nbgrader.api import Gradebook

    from course.grading import lms, semester, worker

    course = Course(tmp_path / "course", FIXTURE_COURSE.wrong)
    shutil.copytree(FIXTURE / "source", course.source)
    (course.root / "roster.csv").write_text(
        "student_id,name,email,canvas_id\nalice,Alice Li,alice@uni.edu,101\nwei,王伟,,\n", encoding="utf-8"
    )
    grade.register_units(course, [FIXTURE_UNIT], lms.nbgrader_students(semester.course_roster(course)))
    monkeypatch.setattr(nbgrader.api, "get_alembic_version", worker.alembic_head)
    with Gradebook(f"sqlite:///{course.gradebook}") as gb:
        found = {s.id: (s.first_name, s.last_name, s.email, s.lms_user_id) for s in gb.students}
    assert found == {"alice": ("Alice", "Li", "alice@uni.edu", "101"), "wei": (None, "王伟", None, None)}


def test_hand_graded_cells_count_in_the_maximum_and_in_stats_from_the_gradebook(
    tmp_path, monkeypatch, capsys
):
    """grades.csv and the summary printed `12 / 9` (the maximum left out unit 01's written answer, 3 points), and
    `course stats` counted the written answer failed by 8 of 8 when 5 had full marks by hand: the grading run saw
    it at 0 before anyone graded it. Now its maximum counts, and stats read the hand grades from the gradebook."""
    import nbgrader.api
    from gradebook_fixture import NB, UNIT, WRITTEN, unit01_gradebook

    from course.grading import stats, worker
    from course.layout import COURSE

    tests_points, written_points = 9.0, 3.0
    assert grade.unit_points(COURSE, UNIT) == tests_points + written_points
    grade.print_table([grade.Row("alice", UNIT, grade.unit_points(COURSE, UNIT), score=12.0)])
    assert "12 / 12" in capsys.readouterr().out

    monkeypatch.setattr(nbgrader.api, "get_alembic_version", worker.alembic_head)
    course = Course(tmp_path, COURSE.wrong)
    course.source.symlink_to(COURSE.source)
    hand = {f"s{i}": 3.0 for i in range(5)} | {"s5": 1.0, "s6": None, "s7": None}
    unit01_gradebook(f"sqlite:///{course.gradebook}", hand)
    entry = {"status": "graded", "scores": {WRITTEN: [0.0, written_points], "test_memory_model": [4.0, 4.0]}}
    cells = [f"{NB}.ipynb/{WRITTEN}", f"{NB}.ipynb/test_memory_model"]
    rows = [grade.Row(s, UNIT, 12.0, checks=stats.cell_checks(f"{NB}.ipynb", entry, {WRITTEN})) for s in hand]
    assert sorted(rows[0].checks) == cells[1:]  # what grading writes: the written answer is not judged there
    stats.write_checks(rows, course.root / stats.CHECKS_FILE)
    assert stats.main(course, "01") == 0
    out = capsys.readouterr().out
    (written_line,) = [line for line in out.splitlines() if WRITTEN in line]
    assert "1 / 6" in written_line and "full marks by hand" in written_line  # 5 full, 1 partial; 2 pending
    assert "2 answers" in out and "尚待人工评分" in out
