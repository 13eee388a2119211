"""The course folder (issue 32 item 4): a semester's state lives apart from the checkout, so grading leaves the
checkout as it was, a second checkout (a GPU host) grades with the same salt and gradebook, nbgrader run from the
checkout works in the course folder, and a semester kept in the checkout by the earlier layout is refused until it
is moved, with nothing lost on the way."""

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from pipeline_fixture import FIXTURE, FIXTURE_COURSE, UNIT
from traitlets.config.loader import PyFileConfigLoader

from course import ROOT, cli, doctor, layout, wrong
from course.grading import grade, lms, submissions
from course.layout import Course


def listing(folder):
    """Every file and folder below `folder` (hidden ones too), a file with its digest."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "folder"
        for p in folder.rglob("*")
    }


@pytest.fixture(scope="module")
def semester(tmp_path_factory):
    """A checkout of the fixture course (source/, release/) and a class of two graded into a course folder
    outside it: alice answers as the reference, bob with a mistake."""
    tmp = tmp_path_factory.mktemp("state")
    checkout = tmp / "checkout"
    for part in ("source", "release"):
        shutil.copytree(FIXTURE / part, checkout / part)
    klass, mistake = tmp / "class", wrong.load(FIXTURE / "wrong" / UNIT)[0]
    for student, changed in (("alice", {}), ("bob", {mistake.replaces: mistake.body})):
        release, source = checkout / "release" / UNIT, checkout / "source" / UNIT
        submissions.write_student(release, source, klass / student / UNIT, changed)
    before = listing(checkout)
    first = Course(tmp / "semester", FIXTURE_COURSE.wrong, code=checkout)
    rows = {row.student: row for row in grade.grade(first, klass, timeout=300)}
    return tmp, checkout, before, first, rows


def test_grading_in_a_course_folder_leaves_the_checkout_as_it_was(semester):
    _, checkout, before, first, rows = semester
    assert listing(checkout) == before
    assert rows["alice"].score == rows["alice"].max_score > rows["bob"].score
    for state in (
        "gradebook.db",
        ".grading_salt",
        "grades.csv",
        f"submitted/bob/{UNIT}",
        f"feedback/alice/{UNIT}",
    ):
        assert (first.root / state).exists(), state


@pytest.mark.heavy  # one more grading (~1 min on CI's 2 cores)
def test_a_second_checkout_on_the_same_course_folder_grades_with_the_same_salt_and_gradebook(semester):
    tmp, checkout, _, first, rows = semester
    salt = (first.root / ".grading_salt").read_text()
    other = tmp / "gpu-host-checkout"
    shutil.copytree(checkout, other)
    second = Course(first.root, FIXTURE_COURSE.wrong, code=other)
    assert grade.grading_salt(second) == salt
    cells = lms.table(first).cells
    only_bob = grade.Selection(("bob",), (UNIT,))
    (again,) = grade.grade(second, second.submitted, timeout=300, everything=True, selection=only_bob)
    assert (again.score, again.status) == (rows["bob"].score, "graded")
    assert lms.table(second).cells == cells
    assert (first.root / ".grading_salt").read_text() == salt
    assert not (other / "gradebook.db").exists() and not (other / ".grading_salt").exists()


def test_nbgrader_run_from_the_checkout_works_in_the_course_folder(tmp_path, monkeypatch):
    """`nbgrader collect`, `release_feedback`, `db` and formgrader, run from the checkout, see the course folder
    as their course root and the checkout's source/ and release/."""
    monkeypatch.setenv("FLASH_COURSE_DIR", str(tmp_path / "semester"))
    nbgrader = [sys.executable, "-m", "nbgrader", "db", "student", "add", "alice"]
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    run = subprocess.run(nbgrader, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode != 0 and " init`" in run.stdout + run.stderr  # a named folder must exist
    assert not (tmp_path / "semester").exists() and not (ROOT / "gradebook.db").exists()
    (tmp_path / "semester").mkdir()  # `course init`
    config = PyFileConfigLoader("nbgrader_config.py", path=str(ROOT)).load_config()
    assert config.CourseDirectory.root == str(tmp_path / "semester")
    assert config.CourseDirectory.source_directory == str(ROOT / "source")
    assert config.CourseDirectory.release_directory == str(ROOT / "release")
    run = subprocess.run(nbgrader, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert (tmp_path / "semester" / "gradebook.db").is_file()
    assert not (ROOT / "gradebook.db").exists()


def earlier_layout(checkout):
    """A checkout holding a semester as the course kept it before the course folder."""
    (checkout / "autograded" / "alice").mkdir(parents=True)
    (checkout / "autograded" / "README.md").write_text("committed")
    (checkout / "autograded" / "alice" / "graded.ipynb").write_text("graded")
    (checkout / "submitted" / "alice").mkdir(parents=True)
    (checkout / "submitted" / "alice" / "answer.ipynb").write_text("answer")
    (checkout / "gradebook.db").write_bytes(b"hand grades")
    (checkout / ".grading_salt").write_text("salt")


def test_a_semester_left_in_the_checkout_is_refused_until_moved_and_moving_loses_nothing(tmp_path):
    checkout = tmp_path / "checkout"
    earlier_layout(checkout)
    kept = listing(checkout)
    course = layout.open_course(tmp_path / "semester", checkout)
    with pytest.raises(ValueError) as refused:
        layout.refuse_old_state(course)
    assert "migrate-state" in str(refused.value) and "旧布局" in str(refused.value)
    lines, fatal = doctor.folder_lines(course)
    assert fatal and str(course.root) in lines[0]

    assert sorted(layout.migrate_state(course)) == sorted(
        ["autograded", "submitted", "gradebook.db", ".grading_salt"]
    )
    layout.refuse_old_state(course)
    moved = listing(course.root)
    assert {name: digest for name, digest in kept.items() if name != "autograded/README.md"} == moved
    assert (checkout / "autograded" / "README.md").read_text() == "committed"


def test_moving_into_a_course_folder_that_has_the_same_file_moves_nothing(tmp_path):
    checkout = tmp_path / "checkout"
    earlier_layout(checkout)
    kept = listing(checkout)
    (tmp_path / "semester").mkdir()
    (tmp_path / "semester" / "gradebook.db").write_bytes(b"another semester")
    course = layout.open_course(tmp_path / "semester", checkout)
    with pytest.raises(ValueError, match="nothing was moved"):
        layout.migrate_state(course)
    assert listing(checkout) == kept
    assert listing(course.root) == {"gradebook.db": hashlib.sha256(b"another semester").hexdigest()}


def test_a_course_folder_inside_the_checkout_is_warned_about(tmp_path):
    lines, fatal = doctor.folder_lines(
        layout.open_course(tmp_path / "checkout" / "semester", tmp_path / "checkout")
    )
    assert not fatal and "git clean -xfd" in lines[1]


def test_course_dir_chooses_the_course_folder_of_every_command(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("FLASH_COURSE_DIR", str(tmp_path / "unused"))
    assert cli.main(["--course-dir", str(tmp_path / "chosen"), "migrate-state"]) == 0
    assert str(tmp_path / "chosen") in capsys.readouterr().out
    assert cli._course(check=False).root == tmp_path / "chosen"


def test_a_course_folder_named_but_missing_is_refused_and_course_init_starts_one(
    tmp_path, monkeypatch, capsys
):
    """A mistyped --course-dir (or FLASH_COURSE_DIR) used to start a new semester silently: new salt, no roster,
    no semester.toml, no late penalties. It is refused, naming `course init`, which makes the folder."""
    typo = tmp_path / "semster"
    for argv in (["--course-dir", str(typo), "grade"], ["--course-dir", str(typo), "check"]):
        assert cli.main(argv) == 2
        said = capsys.readouterr().out
        assert str(typo) in said and " init`" in said and "不存在" in said, said
    monkeypatch.setenv("FLASH_COURSE_DIR", str(typo))
    assert cli.main(["export"]) == 2 and " init`" in capsys.readouterr().out
    assert not typo.exists()

    assert cli.main(["--course-dir", str(typo), "init"]) == 0
    said = capsys.readouterr().out
    assert typo.is_dir() and "roster.csv" in said and "semester.toml" in said
    monkeypatch.setattr(grade, "grade", lambda *args, **kwargs: [])  # only what is said before grading
    assert cli.main(["--course-dir", str(typo), "grade", "--no-sandbox"]) == 0
    said = capsys.readouterr().out
    assert "roster.csv" in said and "semester.toml" in said and "警告" in said and "warning" in said
    (typo / "roster.csv").write_text("student_id,name\nalice,Alice Li\n")
    (typo / "semester.toml").write_text("")
    assert cli.main(["--course-dir", str(typo), "grade", "--no-sandbox"]) == 0
    assert "warning" not in capsys.readouterr().out
    assert cli.main(["--course-dir", str(typo), "init"]) == 0  # again: nothing changes
    assert (typo / "roster.csv").read_text() == "student_id,name\nalice,Alice Li\n"
