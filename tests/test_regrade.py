"""Regrades keep what people did (issue 32): manual scores, comments and extra credit survive `grade`, `regrade`
and a later run, and the export; a hand grade is flagged for review when its autograded part or the submission
changed; a run grades only new or changed submissions unless told `--all`; a second run on the same course is
refused."""

import argparse
import csv
import os
import re
import shutil
import subprocess
import sys
import types

import nbgrader.api
import pytest
from gradebook_fixture import COURSE_ID, NB, TESTS, UNIT, WRITTEN, unit01_gradebook
from nbgrader.api import Gradebook

from course import cli, notebooks, release, wrong
from course.grading import grade, gradebook_db, lms, lock, submissions, worker
from course.layout import COURSE, Course


def regrade_request(reason: str) -> argparse.Namespace:
    """`course regrade alice 01 --reason REASON` as the parser gives it to `run_regrade`."""
    return argparse.Namespace(
        student="alice", unit="01", reason=reason, outcome="", timeout=None, db=None, ray=None,
        allow_weaker_sandbox=False,
    )  # fmt: skip


def gradebook_url(course: Course) -> str:
    return f"sqlite:///{course.gradebook}"


# ---- the merge of a private gradebook into the course's ------------------------------------------------------


@pytest.fixture
def two_gradebooks(tmp_path, monkeypatch):
    """The course's gradebook with alice's unit 01 graded by hand since, and the private copy a regrade took
    before the hand grading (the instructor graded in formgrader while the run went on), graded again."""
    monkeypatch.setattr(nbgrader.api, "get_alembic_version", worker.alembic_head)
    target = tmp_path / "course.db"
    unit01_gradebook(f"sqlite:///{target}", {"alice": None})
    private = tmp_path / "private.db"
    shutil.copyfile(target, private)
    with Gradebook(f"sqlite:///{target}", COURSE_ID) as gb:  # formgrader, meanwhile
        written = gb.find_grade(WRITTEN, NB, UNIT, "alice")
        written.manual_score, written.needs_manual_grade = 2.5, False
        gb.find_comment(WRITTEN, NB, UNIT, "alice").manual_comment = "清楚 / clear"
        gb.find_grade(TESTS[0], NB, UNIT, "alice").extra_credit = 0.5
        override = gb.find_grade(TESTS[1], NB, UNIT, "alice")
        override.manual_score, override.needs_manual_grade = 3.0, False
        gb.db.commit()
    with Gradebook(f"sqlite:///{private}", COURSE_ID) as gb:  # the regrade: test_memory_model now scores 1
        for name, score in zip(TESTS, (3.0, 1.0, 2.0), strict=True):
            gb.find_grade(name, NB, UNIT, "alice").auto_score = score
        gb.db.commit()
    return f"sqlite:///{target}", f"sqlite:///{private}"


def merged(urls, resubmitted: bool) -> tuple[list[str], dict]:
    target_url, source_url = urls
    with Gradebook(target_url, COURSE_ID) as target, Gradebook(source_url, COURSE_ID) as source:
        review = worker.copy_submission(source, target, UNIT, "alice", resubmitted)
    with Gradebook(target_url, COURSE_ID) as gb:
        nb = gb.find_submission_notebook(NB, UNIT, "alice")
        grades = {
            g.name: (g.auto_score, g.manual_score, g.extra_credit, g.needs_manual_grade) for g in nb.grades
        }
        comment = gb.find_comment(WRITTEN, NB, UNIT, "alice").manual_comment
        return review, {"grades": grades, "comment": comment, "flagged": nb.flagged}


def test_a_merge_keeps_hand_grades_and_flags_the_one_whose_autograded_part_changed(two_gradebooks):
    review, state = merged(two_gradebooks, resubmitted=False)
    assert state["grades"] == {
        TESTS[0]: (3.0, None, 0.5, False),
        TESTS[1]: (1.0, 3.0, None, True),  # the autograder changed its mind: the override needs a look
        TESTS[2]: (2.0, None, None, False),
        WRITTEN: (None, 2.5, None, False),
    }
    assert state["comment"] == "清楚 / clear" and state["flagged"]
    assert review == [f"{NB}/{TESTS[1]}"]


def test_a_resubmission_flags_every_hand_grade_for_review(two_gradebooks):
    review, state = merged(two_gradebooks, resubmitted=True)
    assert state["grades"][WRITTEN] == (None, 2.5, None, True) and state["comment"] == "清楚 / clear"
    assert review == [f"{NB}/{TESTS[1]}", f"{NB}/{WRITTEN}"]


def test_resetting_a_submission_before_grading_forgets_only_the_autograder(two_gradebooks, tmp_path):
    target_url, _ = two_gradebooks
    (tmp_path / "autograded" / "alice" / UNIT).mkdir(parents=True)
    api = types.SimpleNamespace(coursedir=types.SimpleNamespace(db_url=target_url, course_id=COURSE_ID))
    worker.reset(api, tmp_path, UNIT, "alice")
    with Gradebook(target_url, COURSE_ID) as gb:
        grades = {
            g.name: (g.auto_score, g.manual_score, g.extra_credit)
            for g in gb.find_submission(UNIT, "alice").notebooks[0].grades
        }
        assert grades == {
            TESTS[0]: (None, None, 0.5),
            TESTS[1]: (None, 3.0, None),
            TESTS[2]: (None, None, None),
            WRITTEN: (None, 2.5, None),
        }
        assert gb.find_comment(WRITTEN, NB, UNIT, "alice").manual_comment == "清楚 / clear"
    assert not (tmp_path / "autograded" / "alice" / UNIT).exists()


def test_a_grading_jobs_private_gradebook_holds_its_own_pairs_hand_grades_and_nobody_elses(
    two_gradebooks, tmp_path
):
    """What a job grades into (and its feedback reads): the units and this student's earlier work on this unit,
    hand grades included; no other student's grades (a Ray node receives it)."""
    target_url, _ = two_gradebooks
    course = Course(tmp_path / "course", COURSE.wrong)
    course.root.mkdir()
    shutil.copyfile(target_url.removeprefix("sqlite:///"), course.gradebook)
    with Gradebook(gradebook_url(course), COURSE_ID) as gb:
        gb.add_student("bob")
        gb.add_submission(UNIT, "bob")
        gb.find_grade(WRITTEN, NB, UNIT, "bob").manual_score = 1.0
        gb.db.commit()
    job = tmp_path / "job.db"
    assert gradebook_db.save_copy(course, job, ("alice", UNIT))
    with Gradebook(f"sqlite:///{job}", COURSE_ID) as gb:
        assert [s.id for s in gb.students] == ["alice"] and [a.name for a in gb.assignments] == [UNIT]
        assert gb.find_grade(WRITTEN, NB, UNIT, "alice").manual_score == 2.5
        assert gb.find_grade(TESTS[0], NB, UNIT, "alice").extra_credit == 0.5
        assert gb.find_comment(WRITTEN, NB, UNIT, "alice").manual_comment == "清楚 / clear"


# ---- one course grade at a time --------------------------------------------------------------------------------


def test_a_second_grading_of_the_same_course_is_refused(tmp_path):
    course = Course(tmp_path, COURSE.wrong)
    with lock.grading_lock(course):
        with pytest.raises(ValueError, match=f"pid {os.getpid()}") as caught:
            grade.grade(course, tmp_path / "class")
    assert "另一个" in str(caught.value) and "another" in str(caught.value)


def test_the_lock_of_a_killed_run_is_taken_over(tmp_path):
    course = Course(tmp_path, COURSE.wrong)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (tmp_path / lock.LOCK_FILE).write_text(f"pid {dead.pid} since 2026-03-06T12:00:00+00:00\n")
    with lock.grading_lock(course):
        assert f"pid {os.getpid()}" in (tmp_path / lock.LOCK_FILE).read_text()


# ---- unit 01 graded, graded by hand, regraded, exported ----------------------------------------------------------


def gradebook_state(course: Course) -> dict:
    with Gradebook(gradebook_url(course), COURSE_ID) as gb:
        nb = gb.find_submission_notebook(NB, UNIT, "alice")
        return {
            "grades": {
                g.name: (g.auto_score, g.manual_score, g.extra_credit, g.needs_manual_grade)
                for g in nb.grades
            },
            "comment": gb.find_comment(WRITTEN, NB, UNIT, "alice").manual_comment,
            "flagged": nb.flagged,
        }


def exported(course: Course, tmp_path) -> dict[str, str]:
    roster, canvas = tmp_path / "roster.csv", tmp_path / "canvas.csv"
    roster.write_text("student_id,name,sis_login_id\nalice,Alice Li,ali\n")
    lms.export(course, roster, canvas, None, "idnumber")
    with (course.root / lms.CELLS_FILE).open(newline="") as f:
        cells = {r["student_id"]: r for r in csv.DictReader(f)}["alice"]
    with canvas.open(newline="") as f:
        canvas_total = list(csv.DictReader(f))[1][UNIT]
    return {
        "written": cells[f"{UNIT}/{NB}/{WRITTEN}"],
        "total": cells[f"{UNIT} total"],
        "canvas": canvas_total,
    }


def hand_in(course: Course, overrides: dict[str, str]) -> None:
    """alice's unit 01: the reference answers but `overrides`, and a written answer."""
    folder = course.submitted / "alice" / UNIT
    submissions.write_student(course.release / UNIT, course.source / UNIT, folder, overrides)
    nb = notebooks.read(folder / f"{NB}.ipynb")
    notebooks.write(
        notebooks.with_cell(nb, WRITTEN, "S 和 P 各占 N² 个元素 / S and P hold N² each."),
        folder / f"{NB}.ipynb",
    )


def graded_times(course: Course) -> int:
    return (course.autograded / "grading.log").read_text().count(f"######## alice/{UNIT}")


def test_hand_grades_survive_a_regrade_a_later_run_and_the_export(tmp_path, monkeypatch, capsys):
    """Unit 01 (the reference answers) graded; in formgrader's place, nbgrader's Gradebook API gives the written
    answer 2.5 points and a comment, a test cell extra credit and another a hand score; `course regrade` keeps
    all of it, and so does the export; the next `course grade` leaves the unchanged submission alone; a changed
    resubmission is graded again, its hand grades kept and flagged for review."""
    course = Course(tmp_path / "course", COURSE.wrong)
    shutil.copytree(COURSE.source / UNIT, course.source / UNIT)
    release.build(COURSE, [UNIT], course.release)
    hand_in(course, {})
    grade.grade(course, course.submitted, jobs=1)
    with Gradebook(gradebook_url(course), COURSE_ID) as gb:
        written = gb.find_grade(WRITTEN, NB, UNIT, "alice")
        written.manual_score, written.needs_manual_grade = 2.5, False
        gb.find_comment(WRITTEN, NB, UNIT, "alice").manual_comment = "清楚 / clear"
        gb.find_grade(TESTS[0], NB, UNIT, "alice").extra_credit = 0.5
        override = gb.find_grade(TESTS[2], NB, UNIT, "alice")
        override.manual_score, override.needs_manual_grade = 1.5, False
        gb.db.commit()
    by_hand = gradebook_state(course)
    assert by_hand["grades"][WRITTEN] == (None, 2.5, None, False)
    expected_export = {"written": "2.5", "total": "11.5", "canvas": "11.5"}  # 3 + 0.5 + 4 + 1.5 + 2.5
    assert exported(course, tmp_path) == expected_export

    monkeypatch.setattr(cli, "_course", lambda db=None: course)
    request = regrade_request("the seed")
    assert cli.run_regrade(request) == 0
    assert graded_times(course) == 2  # graded again (a narrowed run appends to the log)
    assert gradebook_state(course) == by_hand
    assert exported(course, tmp_path) == expected_export
    page = (course.feedback / "alice" / UNIT / f"{NB}.html").read_text(encoding="utf-8")
    assert "pending" not in page and "待批改" not in page  # the feedback shows the hand grade kept
    assert (
        "2.5 / 3" in re.sub(r"\s+", " ", re.sub(r"<[^>]*>", " ", page.split(f'name="{WRITTEN}"', 1)[1]))[:300]
    )

    capsys.readouterr()
    grade.grade(course, course.submitted, jobs=1)  # the weekly run: nothing new
    assert "unchanged since graded, kept: 1" in capsys.readouterr().out and graded_times(course) == 2
    assert gradebook_state(course) == by_hand and exported(course, tmp_path) == expected_export

    (mistake,) = [w for w in wrong.load(COURSE.wrong / UNIT) if w.path.stem == "longest_off_by_one"]
    hand_in(course, {mistake.replaces: mistake.body})
    (row,) = grade.grade(course, course.submitted, jobs=1)
    assert graded_times(course) == 1  # graded again, in a fresh log
    after = gradebook_state(course)
    assert after["grades"][TESTS[2]][0] < 2.0 and after["grades"][TESTS[2]][1:] == (1.5, None, True)
    assert after["grades"][WRITTEN] == (None, 2.5, None, True) and after["comment"] == "清楚 / clear"
    assert after["grades"][TESTS[0]][2] == 0.5 and after["flagged"]
    assert any(WRITTEN in flag and "review" in flag for flag in row.flags)
    with (course.root / "grades.csv").open(newline="") as f:
        (line,) = csv.DictReader(f)
    assert line["flagged"] == "yes" and "review" in line["flag_reasons"]
    assert exported(course, tmp_path) == expected_export


def test_the_regrade_log_tells_the_judges_change_from_a_hand_change(tmp_path, monkeypatch):
    """`course regrade` logged "changed 9 -> 11.5" where the judge's result had not changed: the 2.5 was a hand
    score given after grading. The log now says what the judge gave before and after. Grading itself is a
    stand-in here (it writes what a regrade would: the gradebook's autograded scores and grades.csv's line)."""
    monkeypatch.setattr(nbgrader.api, "get_alembic_version", worker.alembic_head)
    course = Course(tmp_path, COURSE.wrong)
    course.source.symlink_to(COURSE.source)
    (course.submitted / "alice" / UNIT).mkdir(parents=True)
    unit01_gradebook(gradebook_url(course), {"alice": None})
    grade.write_csv(
        [grade.Row("alice", UNIT, 12, 9)], course.root / "grades.csv", lambda row: {"final_score": "9"}
    )
    with Gradebook(gradebook_url(course), COURSE_ID) as gb:  # formgrader, after grading
        written = gb.find_grade(WRITTEN, NB, UNIT, "alice")
        written.manual_score, written.needs_manual_grade = 2.5, False
        gb.db.commit()

    def regrading(judged: float, final: str):
        def stand_in(*args, **kwargs):
            with Gradebook(gradebook_url(course), COURSE_ID) as gb:
                gb.find_grade(TESTS[1], NB, UNIT, "alice").auto_score = judged
                gb.db.commit()
            line = grade.Row("alice", UNIT, 12, float(final))
            grade.write_csv([line], course.root / "grades.csv", lambda row: {"final_score": final})

        return stand_in

    monkeypatch.setattr(cli, "_course", lambda db=None: course)
    request = regrade_request("r")
    monkeypatch.setattr(grade, "grade", regrading(4.0, "11.5"))  # the judge gives what it gave
    assert cli.run_regrade(request) == 0
    monkeypatch.setattr(grade, "grade", regrading(1.0, "8.5"))  # the judge now takes 3 points off
    assert cli.run_regrade(request) == 0
    with (course.root / "regrades.csv").open(newline="") as f:
        first, second = (line["outcome"] for line in csv.DictReader(f))
    assert "judge unchanged (9)" in first and "9 -> 11.5" in first and "hand" in first, first
    assert "judge changed 9 -> 6" in second and "11.5 -> 8.5" in second, second
