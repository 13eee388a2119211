"""`python -m course demo` and `grade` on the fixture: a crashing student gets a status, the others correct
scores; originals are untouched; a re-run (from a zip, with one more student) is idempotent."""

import argparse
import csv
import hashlib
import io
import shutil
import zipfile

import pytest
from nbgrader.api import Gradebook
from pipeline_fixture import FIXTURE, FIXTURE_COURSE, UNIT

from course import cli, demo, notebooks, release
from course.grading import feedback, grade, gradebook_db, intake, submissions
from course.layout import Course


def digest(folder):
    files = (p for p in folder.rglob("*") if p.is_file())
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() for p in files}


def points(notebook):
    return sum(notebooks.meta(c)["points"] for c in notebooks.test_cells(notebooks.read(notebook)).values())


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The demo on the fixture, then a second grading of the same class plus a student whose code loops."""
    out = tmp_path_factory.mktemp("demo") / "course"
    mp = pytest.MonkeyPatch()
    mp.setenv("FLASH_COURSE_CELL_TIMEOUT", "10")
    first = {row.student: row for row in demo.run(FIXTURE_COURSE, out, timeout=300)}
    first_csv = (out / "grades.csv").read_text()
    again = tmp_path_factory.mktemp("again") / "class"
    shutil.copytree(out / "submissions", again)
    erin = again / "erin_loops" / UNIT
    submissions.write_student(out / "release" / UNIT, FIXTURE / "source" / UNIT, erin, {})
    nb = notebooks.with_cell(notebooks.read(erin / "logsumexp.ipynb"), "lse_impl", "while True:\n    pass")
    notebooks.write(nb, erin / "logsumexp.ipynb")
    before = digest(again)
    regraded = grade.grade(Course(out, FIXTURE_COURSE.wrong), again, timeout=300, everything=True)
    second = {row.student: row for row in regraded}
    mp.undo()
    return out, first, first_csv, second, before, digest(again)


def test_correct_student_gets_full_marks_and_feedback(graded):
    out, first, *_ = graded
    alice = first["alice_correct"]
    total = sum(points(p) for p in (FIXTURE / "source" / UNIT).glob("*.ipynb"))
    assert (alice.status, alice.score, alice.max_score) == ("graded", total, total)
    assert sorted(p.name for p in (out / "feedback" / "alice_correct" / UNIT).glob("*.html")) == [
        "logsumexp.html",
        "softmax.html",
    ]


def test_partial_student_loses_points_but_is_graded(graded):
    _, first, *_ = graded
    bob = first["bob_partial"]
    assert bob.status == "graded" and 0 < bob.score < bob.max_score


def test_crashing_student_gets_a_status_and_keeps_the_other_notebook(graded):
    out, first, *_ = graded
    carol = first["carol_crash"]
    assert carol.status == "kernel died (softmax.ipynb)"
    assert carol.score == points(FIXTURE / "source" / UNIT / "logsumexp.ipynb")
    assert (out / "feedback" / "carol_crash" / UNIT / "logsumexp.html").exists()


def test_grades_csv_lists_every_student(graded):
    out, first, first_csv, *_ = graded
    rows = list(csv.DictReader(first_csv.splitlines()))
    assert [(r["student_id"], r["status"]) for r in rows] == [(s, first[s].status) for s in sorted(first)]
    assert {r["student_id"]: float(r["score"]) for r in rows} == {s: r.score for s, r in first.items()}


def test_originals_are_untouched(graded):
    *_, before, after = graded
    assert before == after and before


def test_regrading_is_idempotent_and_an_endless_loop_times_out(graded):
    out, first, _, second, *_ = graded
    changed = [s for s, r in first.items() if (r.score, r.status) != (second[s].score, second[s].status)]
    log = (out / "autograded" / "grading.log").read_text().split("######## ")
    assert not changed, [part[-4000:] for part in log if part.split("/")[0] in changed]  # nbgrader's account
    erin = second["erin_loops"]
    assert erin.status == "cell timeout (logsumexp.ipynb)"
    assert erin.score == points(FIXTURE / "source" / UNIT / "softmax.ipynb")
    assert len(list(csv.DictReader((out / "grades.csv").read_text().splitlines()))) == len(first) + 1


def test_a_zipped_class_is_found_even_inside_one_top_folder(tmp_path):
    archive = tmp_path / "class.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("class/ann/01_softmax/softmax.ipynb", "{}")
        zf.writestr("class/ben/01_softmax/logsumexp.ipynb", "{}")
    with intake.class_uploads(archive) as uploads:
        assert [(u.student, u.unit) for u in uploads] == [("ann", UNIT), ("ben", UNIT)]
    assert archive.exists()


def test_missing_submissions_folder_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match="no submissions folder or zip"):
        grade.grade(Course(tmp_path, tmp_path), tmp_path / "nowhere")


SITECUSTOMIZE = """import os, sys
if "-f" in sys.argv:  # an ipykernel being launched with its connection file
    for token in sorted(os.listdir(os.environ["KERNEL_START_FAILURES"])):
        try:
            os.remove(os.path.join(os.environ["KERNEL_START_FAILURES"], token))
        except FileNotFoundError:
            continue
        os._exit(1)
"""


def test_a_kernel_that_fails_to_start_is_retried_then_reported(tmp_path, monkeypatch):
    """Five kernel starts fail: logsumexp.ipynb fails its three attempts, softmax.ipynb is graded on its third."""
    hook, tokens = tmp_path / "hook", tmp_path / "tokens"
    hook.mkdir()
    tokens.mkdir()
    (hook / "sitecustomize.py").write_text(SITECUSTOMIZE)
    for i in range(5):
        (tokens / str(i)).touch()
    course = Course(tmp_path / "course", FIXTURE_COURSE.wrong)
    shutil.copytree(FIXTURE / "source", course.source)
    release.build(FIXTURE_COURSE, [UNIT], tmp_path / "release")
    submissions.write_student(
        tmp_path / "release" / UNIT, FIXTURE / "source" / UNIT, tmp_path / "class" / "fay" / UNIT, {}
    )
    monkeypatch.setenv("KERNEL_START_FAILURES", str(tokens))
    monkeypatch.setenv("PYTHONPATH", str(hook))
    # the hook reaches the kernel through the grader's environment, which the sandbox replaces: no sandbox here
    (fay,) = grade.grade(course, tmp_path / "class", timeout=300, sandbox="none")
    assert (fay.status, fay.score) == (
        "kernel failed to start (logsumexp.ipynb)",
        points(FIXTURE / "source" / UNIT / "softmax.ipynb"),
    )
    assert "内核未能启动" in fay.status_bilingual()
    assert not list(tokens.iterdir())
    assert (course.autograded / "grading.log").read_text().count("kernel failed to start (attempt") == 5
    # the run recorded the feedback page it made (issue 46): `course feedback` makes it again only once it changes
    assert feedback.stale(course, [UNIT]) == {}
    with Gradebook(gradebook_db.url(course), gradebook_db.COURSE_ID) as gb:
        gb.find_submission(UNIT, "fay").notebooks[0].comments[0].manual_comment = "nice"
        gb.db.commit()
    assert list(feedback.stale(course, [UNIT])) == [("fay", UNIT)]


def test_a_regrade_request_grades_one_pair_again_and_keeps_every_other_line(graded, monkeypatch):
    """`python -m course regrade STUDENT UNIT --reason …` on the graded class: that pair is graded again (same
    inputs, same score), every other line of grades.csv stays as it was, and the request is logged."""
    out, *_ = graded
    before = grades_by_pair((out / "grades.csv").read_text())
    monkeypatch.setattr(cli, "_course", lambda db=None: Course(out, FIXTURE_COURSE.wrong))
    request = argparse.Namespace(
        student="bob_partial", unit=UNIT, reason="the seed", outcome="", timeout=300, db=None, ray=None,
        allow_weaker_sandbox=False,
    )  # fmt: skip
    assert cli.run_regrade(request) == 0
    after = grades_by_pair((out / "grades.csv").read_text())
    assert after.keys() == before.keys()
    assert all(after[pair] == line for pair, line in before.items() if pair[0] != "bob_partial")
    assert after[("bob_partial", UNIT)]["score"] == before[("bob_partial", UNIT)]["score"]
    with (out / "regrades.csv").open(newline="", encoding="utf-8") as f:
        (logged,) = csv.DictReader(f)
    assert (logged["student_id"], logged["unit"], logged["reason"], logged["outcome"]) == (
        "bob_partial",
        UNIT,
        "the seed",
        "unchanged",
    )


def grades_by_pair(text: str) -> dict:
    return {(row["student_id"], row["unit"]): row for row in csv.DictReader(io.StringIO(text))}
