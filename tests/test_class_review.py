"""Reviewing a graded class (issue 32): the similarity check flags copies for review and never changes a score;
each judged property's verdict is kept with the grades and `course stats` counts what the class got wrong."""

import csv
import shutil

import pytest
from pipeline_fixture import FIXTURE, FIXTURE_COURSE, UNIT

from course import ROOT, cli, notebooks, wrong
from course.grading import grade, similarity, stats, submissions
from course.judge import preprocessor, units
from course.layout import Course

# ~3 min on CI's 2 cores (a grading of 4 students, unit 06's judge): on the GPU host (tests/README.md)
pytestmark = pytest.mark.heavy

EVE_LSE = '''def logsumexp(xs):
    """log(sum(exp(x) for x in xs)) without overflow."""
    biggest = xs[0]
    for value in xs[1:]:
        if value > biggest:
            biggest = value
    acc = 0.0
    for value in xs:
        acc += math.exp(value - biggest)
    return biggest + math.log(acc)'''
GUS_LSE = '''def logsumexp(xs):
    """Log-sum-exp."""
    return math.log(math.fsum(map(math.exp, xs)))'''
RENAMED = {"biggest": "m", "value": "v", "acc": "total"}


def renamed(code: str) -> str:
    """Eve's code with every variable renamed and a comment added: the same program."""
    for old, new in RENAMED.items():
        code = code.replace(old, new)
    return code.replace("m = v\n", "m = v  # the largest so far\n", 1)


NOTEBOOK = "logsumexp.ipynb"
CLASS = {
    "dan_reference": {},  # the reference solution, as published
    "eve_own": {"lse_impl": EVE_LSE},
    "fay_renamed": {"lse_impl": renamed(EVE_LSE)},
    "gus_honest": {"lse_impl": GUS_LSE},  # his own way, which overflows
}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The fixture unit, its log-sum-exp notebook alone (half the grading time), graded for a class of four:
    the reference, Eve, Fay's renamed copy of Eve, and Gus."""
    tmp = tmp_path_factory.mktemp("review")
    course = Course(tmp / "course", FIXTURE_COURSE.wrong)
    for folder, root in ((course.source, FIXTURE / "source"), (tmp / "release", FIXTURE / "release")):
        (folder / UNIT).mkdir(parents=True)
        shutil.copyfile(root / UNIT / NOTEBOOK, folder / UNIT / NOTEBOOK)
    for student, answers in CLASS.items():
        dest = tmp / "class" / student / UNIT
        submissions.write_student(tmp / "release" / UNIT, course.source / UNIT, dest, answers)
    rows = grade.grade(course, tmp / "class", timeout=300, jobs=2)
    return course, tmp / "class", {row.student: row for row in rows}


def grades(course: Course) -> dict[str, dict[str, str]]:
    with (course.root / "grades.csv").open(newline="", encoding="utf-8") as f:
        return {line["student_id"]: line for line in csv.DictReader(f)}


def test_the_checks_are_kept_and_stats_count_the_failed_property(graded, monkeypatch, capsys):
    course, _, rows = graded
    assert rows["gus_honest"].score < rows["gus_honest"].max_score
    assert all(rows[s].score == rows[s].max_score for s in ("dan_reference", "eve_own", "fay_renamed"))
    lines = stats.read_checks(course.root / stats.CHECKS_FILE)
    failed = {(line["student_id"], line["cell"]) for line in lines if line["passed"] == "no"}
    assert failed == {("gus_honest", "test_lse_stable")}
    assert {line["student_id"] for line in lines} == set(CLASS)
    worst, *others = stats.failures(lines, UNIT)
    assert (worst.notebook, worst.cell, worst.failed, worst.judged) == (NOTEBOOK, "test_lse_stable", 1, 4)
    assert [(f.cell, f.failed, f.judged) for f in others] == [("test_lse_value", 0, 4)]
    monkeypatch.setattr(cli, "_course", lambda db=None: course)
    assert cli.main(["stats", UNIT]) == 0
    printed = capsys.readouterr().out
    assert "logsumexp.ipynb test_lse_stable" in printed and "1 / 4" in printed and "25%" in printed
    assert (course.root / "stats" / f"{UNIT}.png").read_bytes().startswith(b"\x89PNG")
    with (course.root / "stats" / f"{UNIT}.csv").open(newline="", encoding="utf-8") as f:
        assert next(csv.DictReader(f)) == {
            "notebook": NOTEBOOK,
            "cell": "test_lse_stable",
            "property": "",
            "failed": "1",
            "graded": "4",
            "share": "0.250",
        }


def test_similarity_flags_copies_for_review_and_changes_no_score(graded, monkeypatch):
    course, folder, _ = graded
    before = grades(course)
    monkeypatch.setattr(cli, "_course", lambda db=None: course)
    assert cli.main(["similarity", "--unit", UNIT]) == 0
    after = grades(course)
    flagged = {s for s, line in after.items() if "similarity" in line["flag_reasons"]}
    assert flagged == {"dan_reference", "eve_own", "fay_renamed"}  # never Gus, who wrote his own
    assert (
        "fay_renamed" in after["eve_own"]["flag_reasons"]
        and "eve_own" in after["fay_renamed"]["flag_reasons"]
    )
    assert "reference solution" in after["dan_reference"]["flag_reasons"]
    assert all(after[s]["flagged"] == "yes" for s in flagged)
    assert {s: line["score"] for s, line in after.items()} == {s: line["score"] for s, line in before.items()}
    assert "fay_renamed" in (course.root / "similarity" / UNIT / "report.html").read_text()

    assert cli.main(["similarity", "--unit", UNIT]) == 0  # checked again: the same flags, not twice
    assert grades(course) == after
    grade.grade(course, folder, timeout=300)  # nothing changed, nothing graded: the flags stay
    assert {s: line["flag_reasons"] for s, line in grades(course).items()} == {
        s: line["flag_reasons"] for s, line in after.items()
    }

    copied = course.submitted / "fay_renamed" / UNIT / NOTEBOOK
    kept = copied.read_bytes()
    notebooks.write(notebooks.with_cell(notebooks.read(copied), "lse_impl", GUS_LSE), copied)
    try:  # her code changed since the check: its flag no longer holds
        assert similarity.saved_flags(course, "fay_renamed", UNIT) == []
        assert similarity.saved_flags(course, "eve_own", UNIT)
    finally:
        copied.write_bytes(kept)


def test_the_judge_reports_each_property_it_judged():
    """Unit 06's forward that materialises the N×N scores loses one property of test_forward, and says which."""
    source = ROOT / "source" / "06_flash_attention_pytorch" / "flash_attention_pytorch.ipynb"
    impl = wrong.parse(
        ROOT / "course" / "wrong" / "06_flash_attention_pytorch" / "forward_materialises_scores.py"
    )
    nb = notebooks.with_cell(notebooks.read(source), impl.replaces, impl.body)
    summary = preprocessor.judge_notebook(nb, units.UNITS[source.name], "alice", "salt", "auto")
    judged = summary["properties"]["test_forward"]
    assert set(judged) <= set(units.UNITS[source.name].cells["test_forward"].properties)
    assert not all(judged.values()) and any(judged.values())
    entry = {"status": "graded", "scores": summary["scores"], "judge": summary}
    checks = stats.cell_checks(source.name, entry)
    assert checks[f"{source.name}/test_forward"] == judged
