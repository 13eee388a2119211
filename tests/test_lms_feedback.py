"""Feedback back through the LMS (issue 46 item 1): `course export --feedback-for moodle|canvas` lays the current
feedback pages out as the LMS takes them back (Moodle's feedback zip and its grading worksheet with grades and
comments; Canvas's per-student folders), refuses stale pages and bad worksheets before writing anything. Unit 01 in
a real SQLite gradebook made through nbgrader's API; the pages are stand-ins (no nbgrader feedback job runs), their
inputs recorded as `course grade` records them."""

import csv
import os
import re
import shutil
import zipfile
from pathlib import Path

import pytest
from handgrade_fixture import ANSWERS, NB, UNIT, WRITTEN, checkout_copy, course_copy, make_course
from nbgrader.api import Gradebook

from course import cli
from course.grading import feedback_inputs, gradebook_db, lms_feedback, semester
from course.grading.lock import grading_lock

WORKSHEET = Path(__file__).resolve().parent / "fixtures" / "lms" / "moodle_worksheet.csv"  # made-up students
ROSTER = (
    "student_id,name,canvas_id,email\nalice,Alice Li,101,alice@uni.example.edu\nbob,Bob Wang,102,bob@uni.example.edu\n"
    "carol,Chen Jing,,chen.jing@uni.example.edu\n"
)
SUBMITTED = "2026-03-07T10:00:00+00:00"  # a day late: due 2026-03-06T23:59 UTC, 10% a day
SEMESTER = '[late]\npenalty_per_day = 0.1\n[due]\n"01" = 2026-03-06T23:59:00\n'
GRADES_COLUMNS = ["student_id", "unit", "score", "submitted_at", "late", "late_by", "penalty_rate", "penalty"]
GRADES_COLUMNS += ["final_score"]
COMMENT = "<b>clear</b> accounting\x1b[31m\n\nsee the peak"  # a hand-grader's: HTML, an escape, lines


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    folder = tmp_path_factory.mktemp("template")
    course = make_course(folder / "course", checkout_copy(folder / "checkout"))
    (course.root / "semester.toml").write_text(SEMESTER, encoding="utf-8")
    (course.root / "roster.csv").write_text(ROSTER, encoding="utf-8")
    with (course.root / "grades.csv").open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, GRADES_COLUMNS)
        writer.writeheader()
        writer.writerows(
            {"student_id": s, "unit": UNIT, "score": "3", "submitted_at": SUBMITTED} for s in ANSWERS
        )
    with Gradebook(gradebook_db.url(course), gradebook_db.COURSE_ID) as gb:  # alice's answer graded by hand
        gb.find_grade(WRITTEN, NB, UNIT, "alice").manual_score = 2
        gb.find_comment(WRITTEN, NB, UNIT, "alice").manual_comment = COMMENT
        gb.db.commit()
    semester.refresh_late_columns(course)
    for student in ANSWERS:
        page = course.feedback / student / UNIT / f"{NB}.html"
        page.parent.mkdir(parents=True)
        page.write_text(f"<p>feedback of {student}</p>", encoding="utf-8")
    feedback_inputs.record_made(course, [(s, UNIT) for s in ANSWERS])
    return course


@pytest.fixture
def course(template, tmp_path):
    return course_copy(template, tmp_path)


def worksheet_lines(path: Path) -> dict[str, dict[str, str]]:
    with path.open(newline="", encoding="utf-8-sig") as f:
        return {line["Identifier"]: line for line in csv.DictReader(f)}


def test_moodle_feedback_zip_and_worksheet_with_grades_and_comments(course, tmp_path, capsys):
    into = tmp_path / "out"
    status = lms_feedback.main(course, "moodle", "01", into, course.root / "roster.csv", WORKSHEET)
    out = capsys.readouterr().out
    assert status == 1 and "Zhang Wei (3304)" in out and "unknown student" in out  # not in the roster: named
    assert "not graded by hand yet (0 in the grade, said in the comment): ['bob', 'carol']" in out
    with zipfile.ZipFile(into / f"feedback_{UNIT}.zip") as archive:
        members = {name: archive.read(name).decode() for name in archive.namelist()}
    assert members == {  # Moodle's download names: the participant id of this assignment, from the worksheet
        f"Alice Li_3301_assignsubmission_file_/{NB}.html": "<p>feedback of alice</p>",
        f"Bob Wang_3302_assignsubmission_file_/{NB}.html": "<p>feedback of bob</p>",
        f"Chen Jing_3303_assignsubmission_file_/{NB}.html": "<p>feedback of carol</p>",
    }
    lines = worksheet_lines(into / f"worksheet_{UNIT}.csv")
    assert list(lines["Participant 3301"]) == list(
        next(iter(worksheet_lines(WORKSHEET).values()))
    )  # its columns
    alice, bob = lines["Participant 3301"], lines["Participant 3302"]
    assert alice["Grade"] == "37.50"  # (3 + 2) of 12, 10% off for a day late, on Moodle's scale of 100
    assert bob["Grade"] == "22.50" and lines["Participant 3304"]["Grade"] == ""  # no submission: unchanged
    comment = alice["Feedback comments"]
    assert f"{NB}/test_memory_model: 1 / 4<br>\n" in comment and "late penalty: 10%<br>\n" in comment
    assert (
        f"{NB}/{WRITTEN}: 2 / 3 — &lt;b&gt;clear&lt;/b&gt; accounting\\x1b[31m<br>\n    see the peak<br>\n"
        in comment
    )
    assert f"{WRITTEN}: needs manual grading / 3" in bob["Feedback comments"]
    assert (
        alice["Last modified (submission)"] == "Saturday, 7 March 2026, 3:03 AM"
    )  # the rest as Moodle wrote it


def test_canvas_feedback_folders_by_canvas_download_naming(course, tmp_path, capsys, monkeypatch):
    into = tmp_path / "out"
    argv = ["export", "--feedback-for", "canvas", "--unit", "01", "--into", str(into)]
    monkeypatch.setattr(cli, "_course", lambda *a, **k: course)  # the course with its own checkout copy
    assert cli.main(argv) == 1
    assert "carol: no canvas_id in the roster" in capsys.readouterr().out
    folder = into / f"canvas_feedback_{UNIT}"
    assert sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*")) == [
        "lialice_101_feedback",
        f"lialice_101_feedback/lialice_101_feedback_{NB}.html",
        "wangbob_102_feedback",
        f"wangbob_102_feedback/wangbob_102_feedback_{NB}.html",
    ]
    assert (folder / "wangbob_102_feedback" / f"wangbob_102_feedback_{NB}.html").read_text() == (
        "<p>feedback of bob</p>"
    )


def test_a_grades_option_with_feedback_for_or_a_feedback_option_without_is_refused(
    course, monkeypatch, capsys
):
    monkeypatch.setattr(cli, "_course", lambda *a, **k: course)
    assert cli.main(["export", "--feedback-for", "canvas", "--unit", "01", "--canvas", "c.csv"]) == 2
    assert "['--canvas'] belong to the grades export" in capsys.readouterr().out
    assert cli.main(["export", "--unit", "01", "--worksheet", "w.csv"]) == 2
    assert "['--unit', '--worksheet'] go with --feedback-for only" in capsys.readouterr().out
    assert not (course.root / "lms_feedback").exists() and not (course.root / "grades_by_cell.csv").exists()


def test_stale_feedback_is_refused_before_anything_is_written(course, tmp_path):
    """A hand grade after the pages were made (formgrader): the export says to run `course feedback` first."""
    with Gradebook(gradebook_db.url(course), gradebook_db.COURSE_ID) as gb:
        gb.find_grade(WRITTEN, NB, UNIT, "bob").manual_score = 3
        gb.db.commit()
    into = tmp_path / "out"
    for lms in ("moodle", "canvas"):
        with pytest.raises(ValueError, match=f"out of date.*bob/{UNIT}.*course feedback 01"):
            lms_feedback.main(course, lms, "01", into, course.root / "roster.csv", WORKSHEET)
    assert not into.exists()
    with grading_lock(course, "course grade"):  # a grading run under way: refused, not read half-way
        with pytest.raises(ValueError, match="another course command is writing"):
            lms_feedback.main(course, "canvas", "01", into, course.root / "roster.csv", None)
    shutil.rmtree(course.feedback / "carol")  # a page that is gone is stale too
    with pytest.raises(ValueError, match=f"carol/{UNIT}"):
        lms_feedback.main(course, "canvas", "01", into, course.root / "roster.csv", None)


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("Identifier,Full name,Grade,Maximum Grade\n", "lacks ['Feedback comments']"),
        ("Identifier,Full name,Grade,Maximum Grade,Feedback comments\nme,Alice Li,,100,\n", "line 2"),
        (
            "Identifier,Full name,Grade,Maximum Grade,Feedback comments\nParticipant 1,Alice Li,,0,\n",
            "line 2",
        ),
        (  # blind marking, downloaded by an account that may not see identities: no name, no identity field
            "Identifier,Grade,Maximum Grade,Feedback comments\nParticipant 3301,,100,\n",
            "blind marking",
        ),
        (  # a comma in a name written unquoted: a field more than the header has
            "Identifier,Full name,Grade,Maximum Grade,Feedback comments\nParticipant 1,Li, Alice,,100,\n",
            "it has more fields than the header",
        ),
    ],
)
def test_a_bad_worksheet_is_refused_and_nothing_is_written(course, tmp_path, text, said):
    worksheet = tmp_path / "worksheet.csv"
    worksheet.write_text(text, encoding="utf-8")
    into = tmp_path / "out"
    with pytest.raises(semester.SettingError, match=re.escape(said) + ".*fix:.*grading worksheet"):
        lms_feedback.main(course, "moodle", "01", into, course.root / "roster.csv", worksheet)
    with pytest.raises(ValueError, match="Moodle needs --worksheet"):
        lms_feedback.main(course, "moodle", "01", into, course.root / "roster.csv", None)
    assert not into.exists()


def test_moodle_folder_names_hold_no_separator_of_their_own():
    """A name is the student's (Moodle may let them edit it): its `_`, a slash or a control cannot move the
    participant id Moodle reads from the folder name, nor climb out of the folder."""
    assert (
        lms_feedback.moodle_folder("Ann_3302_x/../Lee\n", "3301")
        == "Ann 3302 x..Lee_3301_assignsubmission_file_"
    )
    assert os.sep not in lms_feedback.moodle_folder("/", "7") and lms_feedback.moodle_folder(
        "", "7"
    ).startswith("Participant_7_")


def test_a_participant_renamed_as_a_classmate_leaves_the_classmates_feedback_where_it_belongs(
    course, tmp_path, capsys
):
    """Attack (it failed before: matched by the full name alone, Bob and Mallory read as one student and both were
    refused, so Mallory's renaming kept Bob from his feedback): Moodle may let a student edit their name. Mallory
    (participant 3309) renames herself "Bob Wang"; the worksheet's email addresses say who is who: Bob's page and
    grade go to participant 3302, and Mallory, who handed nothing in, gets nothing."""
    roster = tmp_path / "roster.csv"
    roster.write_text(
        "student_id,name,email\nalice,Alice Li,alice@uni.example.edu\nbob,Bob Wang,bob@uni.example.edu\n"
        "carol,Chen Jing,chen.jing@uni.example.edu\nmallory,Mallory Ng,mallory@uni.example.edu\n",
        encoding="utf-8",
    )
    worksheet = renamed_classmate_worksheet(tmp_path)
    into = tmp_path / "out"
    assert (
        lms_feedback.main(course, "moodle", "01", into, roster, worksheet) == 1
    )  # Zhang Wei: not in the roster
    out = capsys.readouterr().out
    assert "map to the student bob" not in out and "Bob Wang (3309)" not in out
    with zipfile.ZipFile(into / f"feedback_{UNIT}.zip") as archive:
        assert [name for name in archive.namelist() if "Bob Wang" in name] == [
            f"Bob Wang_3302_assignsubmission_file_/{NB}.html"
        ]
        assert archive.read(f"Bob Wang_3302_assignsubmission_file_/{NB}.html") == b"<p>feedback of bob</p>"
    lines = worksheet_lines(into / f"worksheet_{UNIT}.csv")
    assert lines["Participant 3302"]["Grade"] == "22.50" and lines["Participant 3309"]["Grade"] == ""
    assert lines["Participant 3309"]["Feedback comments"] == ""


def test_without_identity_fields_a_renamed_participant_blocks_the_classmate_and_is_named(
    course, tmp_path, capsys
):
    """A worksheet downloaded without the email address or ID number (Moodle's "Show user identity"): names are all
    there is, so the two participants reading as Bob are both refused, none guessed, and the export says how to
    find students by their identity instead."""
    with WORKSHEET.open(newline="", encoding="utf-8-sig") as f:
        lines = [line[:2] + line[3:] for line in csv.reader(f)]  # the Email address column left out
    worksheet = renamed_classmate_worksheet(tmp_path, lines)
    into = tmp_path / "out"
    assert lms_feedback.main(course, "moodle", "01", into, course.root / "roster.csv", worksheet) == 1
    out = capsys.readouterr().out
    assert "Bob Wang (3302): " in out and "Bob Wang (3309): " in out and "map to the student bob" in out
    assert "Show user identity" in out
    with zipfile.ZipFile(into / f"feedback_{UNIT}.zip") as archive:
        assert not [name for name in archive.namelist() if "Bob Wang" in name]
    lines = worksheet_lines(into / f"worksheet_{UNIT}.csv")
    assert lines["Participant 3309"]["Grade"] == lines["Participant 3302"]["Grade"] == ""


def renamed_classmate_worksheet(tmp_path: Path, lines: list[list[str]] | None = None) -> Path:
    """Moodle's worksheet (`lines`, else the fixture's) with Mallory's line added: participant 3309, renamed "Bob
    Wang", her email address in its column if it has one."""
    if lines is None:
        with WORKSHEET.open(newline="", encoding="utf-8-sig") as f:
            lines = list(csv.reader(f))
    mallory = {
        "Identifier": "Participant 3309",
        "Full name": "Bob Wang",
        "Email address": "mallory@uni.example.edu",
    }
    mallory |= {"Maximum Grade": "100.00"}
    worksheet = tmp_path / "worksheet.csv"
    with worksheet.open("w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows([*lines, [mallory.get(column, "") for column in lines[0]]])
    return worksheet


def test_a_team_assignments_worksheet_gets_grades_and_comments_but_no_feedback_zip(course, tmp_path, capsys):
    """A team assignment's worksheet (its `Group` column): Moodle 4.1+ names a team's download folder by its group
    id, and its feedback-zip import (importziplib.php, get_participant_mapping) may read a folder's number as a group
    id there, so a page in a folder named by Bob's participant id could reach another group's students. No zip is
    written (one from an earlier export removed); the worksheet's grades and comments are, per participant."""
    into = tmp_path / "out"
    into.mkdir()
    (into / f"feedback_{UNIT}.zip").write_bytes(b"an earlier export's")
    worksheet = WORKSHEET.parent / "moodle_group_worksheet.csv"
    lms_feedback.main(course, "moodle", "01", into, course.root / "roster.csv", worksheet)
    out = capsys.readouterr().out
    assert "team assignment" in out and "no feedback zip" in out
    assert sorted(p.name for p in into.iterdir()) == [f"worksheet_{UNIT}.csv"]
    lines = worksheet_lines(into / f"worksheet_{UNIT}.csv")
    assert (
        lines["Participant 3301"]["Grade"] == "37.50"
        and "late penalty: 10%" in lines["Participant 3301"]["Feedback comments"]
    )
