"""Hand grading by rubric, by a team (issue 46, item 2): the rubric declared once in the source cell and cleared
from the release; sheets per grader split by question or by student, optionally anonymous; importing applies
scores and composed comments, idempotently; two graders' different marks are reported and neither applied; a
changed rubric re-scores; bad sheets and a second import at once change nothing; no hand grade is lost to a
regrade or to formgrader. A real SQLite gradebook, no notebook runs (PostgreSQL: tests/test_postgres_gradebook.py)."""

import csv
import json
from pathlib import Path

import pytest
from handgrade_fixture import (
    ANSWERS,
    NB,
    QUESTION,
    UNIT,
    WRITTEN,
    checkout_copy,
    course_copy,
    hand_grades,
    make_course,
)
from nbgrader.api import Gradebook

from course import ROOT, cli, notebooks, release
from course.grading import feedback_inputs, grade, gradebook_db, handgrade, lock, rubric, worker

PEAK, RAN_OUT, FLASH = (f"{QUESTION}:{item} (+1)" for item in ("peak", "ran_out", "flash"))
COMMENTS = {item.id: item.comment for item in rubric.unit_rubrics(ROOT / "source" / UNIT)[QUESTION].items}


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    folder = tmp_path_factory.mktemp("template")
    return make_course(folder / "course", checkout_copy(folder / "checkout"))


@pytest.fixture
def course(template, tmp_path):
    return course_copy(template, tmp_path)


def rows_of(sheet: Path) -> list[dict]:
    with sheet.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def mark(sheet: Path, marks: dict[str, tuple[list[str], str]]) -> Path:
    """Tick exactly these items and write the comment in each student's row (by the sheet's student column)."""
    rows = rows_of(sheet)
    for row in rows:
        if row["student"] in marks:
            items, comment = marks[row["student"]]
            row.update(
                {column: "x" if column in items else "" for column in row if column.startswith(QUESTION)}
            )
            row["comment"] = comment
    with sheet.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return sheet


def state(course) -> tuple:
    """What an import may change: the gradebook's hand grades and the ledger."""
    ledger = rubric.ledger_path(course.root, UNIT)
    return hand_grades(course), ledger.read_bytes() if ledger.exists() else None


# ---- the rubric ----------------------------------------------------------------------------------------------


def test_the_rubric_is_read_from_source_and_cleared_from_the_release():
    found = rubric.unit_rubrics(ROOT / "source" / UNIT)[QUESTION]
    assert [(item.id, item.points) for item in found.items] == [("peak", 1), ("ran_out", 1), ("flash", 1)]
    assert found.points == 3 and all(item.criterion and " / " in item.comment for item in found.items)
    released = (ROOT / "release" / UNIT / f"{NB}.ipynb").read_text(encoding="utf-8")
    assert "```rubric" not in released and found.items[0].comment not in released
    assert found.compose(["peak", "flash"], "good") == (
        2.0,
        f"{COMMENTS['peak']}\n\n{COMMENTS['flash']}\n\ngood",
    )


@pytest.mark.parametrize(
    ("block", "says"),
    [
        ('[[item]]\nid = "a"\npoints = "one"', "needs a number of points"),
        ('[[item]]\nid = "a b"\npoints = 1', "needs an id"),
        ('[[item]]\nid = "a"\npoints = 1\n[[item]]\nid = "a"\npoints = 2', "given twice"),
        ("[[item", "not valid TOML"),
        ("title = 1", "[[item]] tables only"),
    ],
)
def test_a_malformed_rubric_is_an_error_naming_its_cell(block, says):
    with pytest.raises(rubric.RubricError, match=r"nb\.ipynb cell_a.*/.*" + __import__("re").escape(says)):
        rubric.parse(
            f"### BEGIN SOLUTION\n```rubric\n{block}\n```\n### END SOLUTION", "nb.ipynb", "cell_a", 3
        )


# ---- export ------------------------------------------------------------------------------------------------


def test_sheets_split_by_question_or_student_and_keep_answers_inert(course, tmp_path):
    by_question = handgrade.export(course, UNIT, ["ta1", "ta2"], "question", into=tmp_path / "q")
    assert [p.name for p in by_question] == [f"{UNIT}__ta1.csv"]  # one question: ta2 gets none
    rows = rows_of(by_question[0])
    assert [r["student"] for r in rows] == sorted(ANSWERS) and list(rows[0])[-4:] == [
        PEAK,
        RAN_OUT,
        FLASH,
        "comment",
    ]
    assert rows[0]["answer"] == ANSWERS["alice"]
    long_answer = tmp_path / "q" / rows[1]["answer"]  # bob's is long: a file beside the sheet
    assert long_answer.read_text(encoding="utf-8") == ANSWERS["bob"]
    assert (tmp_path / "q" / f"{UNIT}__rubric.md").read_text(encoding="utf-8").count("(+1)") == 3
    by_student = handgrade.export(course, UNIT, ["ta1", "ta2"], "student", into=tmp_path / "s")
    shares = [[r["student"] for r in rows_of(p)] for p in by_student]
    assert shares == [["alice", "bob"], ["carol"]]
    with pytest.raises(ValueError, match="never overwritten"):
        handgrade.export(course, UNIT, ["ta1"], into=tmp_path / "s")


def test_a_spreadsheet_never_runs_an_answer_as_a_formula(course, tmp_path):
    nb = notebooks.read(course.submitted / "carol" / UNIT / f"{NB}.ipynb")
    next(c for c in nb.cells if notebooks.meta(c).get("grade_id") == WRITTEN).source = '=cmd|"/c calc"!A1'
    notebooks.write(nb, course.submitted / "carol" / UNIT / f"{NB}.ipynb")
    (sheet,) = handgrade.export(course, UNIT, ["ta1"], into=tmp_path / "q")
    assert rows_of(sheet)[2]["answer"] == '\'=cmd|"/c calc"!A1'


def test_anonymous_sheets_name_no_one_and_map_back_on_import(course, tmp_path):
    (sheet,) = handgrade.export(course, UNIT, ["ta1"], anonymous=True, into=tmp_path / "a")
    written = "".join(p.read_text(encoding="utf-8") for p in (tmp_path / "a").rglob("*") if p.is_file())
    written += "".join(p.name for p in (tmp_path / "a").rglob("*"))
    assert not any(student in written for student in ANSWERS)
    ids = [r["student"] for r in rows_of(sheet)]
    assert all(i.startswith("anon-") for i in ids) and len(set(ids)) == 3
    alice = handgrade.anonymous_id(grade.grading_salt(course), UNIT, "alice")
    handgrade.import_sheets(course, [mark(sheet, {alice: ([PEAK], "")})])
    assert hand_grades(course)["alice"] == (1.0, COMMENTS["peak"], False)


# ---- import ------------------------------------------------------------------------------------------------


def test_import_applies_the_ticked_items_and_is_idempotent(course, tmp_path):
    (sheet,) = handgrade.export(course, UNIT, ["ta1"], into=tmp_path / "q")
    mark(
        sheet,
        {"alice": ([PEAK, RAN_OUT, FLASH], "很好 / well done"), "bob": ([FLASH], ""), "carol": ([], "")},
    )
    report = handgrade.import_sheets(course, [sheet])
    everything = "\n\n".join([COMMENTS["peak"], COMMENTS["ran_out"], COMMENTS["flash"], "很好 / well done"])
    graded = {"alice": (3.0, everything, False), "bob": (1.0, COMMENTS["flash"], False)}
    assert hand_grades(course) == graded | {"carol": (None, None, True)}  # carol's row: not graded yet
    assert len(report.changed) == 2 and not report.conflicts
    before = state(course)
    again = handgrade.import_sheets(course, [sheet])
    assert state(course) == before and again.changed == [] and again.kept == 2


def test_a_score_is_clamped_to_the_cells_points(course, tmp_path):
    checkout = course.source / UNIT / f"{NB}.ipynb"
    text = checkout.read_text(encoding="utf-8").replace(
        'id = \\"flash\\"\\n",\n    "points = 1', 'id = \\"flash\\"\\n",\n    "points = 2'
    )
    text = text.replace(
        'id = \\"ran_out\\"\\n",\n    "points = 1', 'id = \\"ran_out\\"\\n",\n    "points = -1'
    )
    checkout.write_text(text, encoding="utf-8")
    items = rubric.unit_rubrics(course.source / UNIT)[QUESTION].items
    assert [item.points for item in items] == [1, -1, 2]
    (sheet,) = handgrade.export(course, UNIT, ["ta1"], into=tmp_path / "q")
    columns = [c for c in rows_of(sheet)[0] if c.startswith(QUESTION)]
    mark(sheet, {"alice": ([columns[0], columns[2]], ""), "bob": ([columns[1]], "")})
    handgrade.import_sheets(course, [sheet])
    grades = hand_grades(course)
    assert grades["alice"][0] == 3.0 and grades["bob"][0] == 0.0  # 1 + 2 = 3 of 3; -1 clamped to 0


def test_two_graders_different_marks_are_reported_and_neither_applied(course, tmp_path, capsys):
    (first,) = handgrade.export(course, UNIT, ["ta1"], into=tmp_path / "one")
    (second,) = handgrade.export(course, UNIT, ["ta2"], into=tmp_path / "two")
    mark(first, {"alice": ([PEAK], ""), "bob": ([FLASH], "")})
    mark(second, {"alice": ([PEAK, FLASH], ""), "bob": ([FLASH], "")})
    handgrade.import_sheets(course, [first])
    assert hand_grades(course)["alice"][0] == 1.0
    status = cli.main(["--course-dir", str(course.root), "handgrade", "import", str(second)])
    out = capsys.readouterr().out
    assert status == 1 and "in conflict, not written: alice/" in out and "冲突" in out
    assert "bob" not in out.split("in conflict")[1]  # they agree on bob
    assert (
        hand_grades(course)["alice"][0] == 1.0
    )  # ta1's earlier mark stays as it was, ta2's is not merged in
    ledger = rubric.read_ledger(course.root, UNIT)[f"alice/{QUESTION}"]["marks"]
    assert ledger["ta1"]["items"] == ["peak"] and ledger["ta2"]["items"] == ["peak", "flash"]  # both kept
    mark(first, {"alice": ([PEAK, FLASH], "")})  # ta1 agrees now
    assert not handgrade.import_sheets(course, [first]).conflicts
    assert hand_grades(course)["alice"][0] == 2.0


def test_resolve_decides_for_its_own_sheets_marks(course, tmp_path):
    (first,) = handgrade.export(course, UNIT, ["ta1"], into=tmp_path / "one")
    (second,) = handgrade.export(course, UNIT, ["lead"], into=tmp_path / "two")
    handgrade.import_sheets(course, [mark(first, {"alice": ([PEAK], "")})])
    report = handgrade.import_sheets(course, [mark(second, {"alice": ([PEAK, RAN_OUT], "")})], resolve=True)
    assert not report.conflicts and hand_grades(course)["alice"][0] == 2.0


def test_changing_an_items_points_rescores_everyone_who_has_it(course, tmp_path, capsys):
    (sheet,) = handgrade.export(course, UNIT, ["ta1"], into=tmp_path / "q")
    handgrade.import_sheets(
        course, [mark(sheet, {"alice": ([PEAK], ""), "bob": ([FLASH], ""), "carol": ([FLASH, PEAK], "")})]
    )
    path = course.source / UNIT / f"{NB}.ipynb"
    path.write_text(
        path.read_text(encoding="utf-8").replace(
            'id = \\"peak\\"\\n",\n    "points = 1', 'id = \\"peak\\"\\n",\n    "points = 1.5'
        ),
        encoding="utf-8",
    )
    assert handgrade.main_rescore(course, UNIT) == 0
    assert {s: g[0] for s, g in hand_grades(course).items()} == {"alice": 1.5, "bob": 1.0, "carol": 2.5}
    assert "2 answers written" in capsys.readouterr().out


# ---- bad input changes nothing ----------------------------------------------------------------------------------


def edit(sheet: Path, change) -> Path:
    rows = rows_of(sheet)
    change(rows)
    with sheet.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return sheet


def rename_column(rows, old, new):
    for row in rows:
        row[new] = row.pop(old)


BAD_SHEETS = {
    "unknown student": (lambda rows: rows[1].update(student="mallory"), "no student 'mallory'"),
    "unknown item": (
        lambda rows: rename_column(rows, FLASH, f"{QUESTION}:style (+1)"),
        "unknown rubric item column",
    ),
    "another unit": (
        lambda rows: [r.update(unit="02_io_aware") for r in rows],
        "is a sheet of unit 02_io_aware",
    ),
    "two units": (lambda rows: rows[1].update(unit="02_io_aware"), "one unit and one grader"),
    "not a tick": (lambda rows: rows[1].update({PEAK: "half"}), "'half' is no tick"),
    "unknown question": (
        lambda rows: rows[0].update(question="memory_bottleneck/test_memory_model"),
        "unknown question",
    ),
}


@pytest.mark.parametrize("bad", sorted(BAD_SHEETS))
def test_a_bad_sheet_is_a_bilingual_error_and_changes_nothing(course, tmp_path, bad):
    (good,) = handgrade.export(course, UNIT, ["ta1"], into=tmp_path / "good")
    handgrade.import_sheets(course, [mark(good, {"alice": ([PEAK], "")})])
    (sheet,) = handgrade.export(course, UNIT, ["ta2"], into=tmp_path / "bad")
    mark(sheet, {"bob": ([FLASH], ""), "carol": ([PEAK], "")})
    change, says = BAD_SHEETS[bad]
    before = state(course)
    with pytest.raises(handgrade.SheetError, match="nothing was changed") as caught:
        handgrade.import_sheets(course, [good, edit(sheet, change)])
    assert says in str(caught.value) and "评分表" in str(caught.value)
    assert state(course) == before


def test_a_malformed_file_or_a_sheet_of_another_unit_asked_changes_nothing(course, tmp_path, capsys):
    (sheet,) = handgrade.export(course, UNIT, ["ta1"], into=tmp_path / "q")
    mark(sheet, {"alice": ([PEAK], "")})
    binary = tmp_path / "photo.csv"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\xff\xfe")
    wrong = tmp_path / "wrong.csv"
    wrong.write_text("name,score\nalice,3\n", encoding="utf-8")
    before = state(course)
    for given in ([sheet, binary], [wrong]):
        with pytest.raises(handgrade.SheetError, match="nothing was changed"):
            handgrade.import_sheets(course, given)
    assert (
        cli.main(["--course-dir", str(course.root), "handgrade", "import", "--unit", "02", str(sheet)]) == 2
    )
    assert state(course) == before


def test_two_imports_at_once_the_second_is_refused(course, tmp_path):
    (sheet,) = handgrade.export(course, UNIT, ["ta1"], into=tmp_path / "q")
    mark(sheet, {"alice": ([PEAK], "")})
    before = state(course)
    with lock.grading_lock(course, "course handgrade import"):
        with pytest.raises(ValueError, match="another course command") as caught:
            handgrade.import_sheets(course, [sheet])
    assert "handgrade import" in str(caught.value) and "另一个" in str(caught.value)
    assert state(course) == before


# ---- nothing a grader entered is lost -------------------------------------------------------------------------


def test_a_regrade_keeps_the_imported_grades_and_a_reimport_changes_nothing(course, tmp_path):
    (sheet,) = handgrade.export(course, UNIT, ["ta1"], into=tmp_path / "q")
    handgrade.import_sheets(course, [mark(sheet, {"alice": ([PEAK, FLASH], "ok")})])
    imported = hand_grades(course)
    private = tmp_path / "private.db"
    gradebook_db.save_copy(course, private, ("alice", UNIT))  # a regrade's job, graded again since
    url = gradebook_db.url(course)
    with Gradebook(f"sqlite:///{private}", gradebook_db.COURSE_ID) as source:
        source.find_grade("test_memory_model", NB, UNIT, "alice").auto_score = 0.5
        source.find_grade(WRITTEN, NB, UNIT, "alice").manual_score = None  # the job's copy is older
        source.db.commit()
        with Gradebook(url, gradebook_db.COURSE_ID) as target:
            worker.copy_submission(source, target, UNIT, "alice")
    assert hand_grades(course) == imported
    again = handgrade.import_sheets(course, [sheet])
    assert again.changed == [] and not again.conflicts and hand_grades(course) == imported


def test_a_grade_changed_in_formgrader_is_kept_unless_resolved_and_then_remembered(course, tmp_path):
    (sheet,) = handgrade.export(course, UNIT, ["ta1"], into=tmp_path / "q")
    handgrade.import_sheets(course, [mark(sheet, {"alice": ([PEAK], "")})])
    with Gradebook(gradebook_db.url(course), gradebook_db.COURSE_ID) as gb:  # formgrader
        gb.find_grade(WRITTEN, NB, UNIT, "alice").manual_score = 2.5
        gb.find_comment(WRITTEN, NB, UNIT, "alice").manual_comment = "by hand"
        gb.db.commit()
    mark(sheet, {"alice": ([RAN_OUT], "")})
    report = handgrade.import_sheets(course, [sheet])
    assert "changed elsewhere" in report.conflicts[0] and hand_grades(course)["alice"][:2] == (2.5, "by hand")
    handgrade.import_sheets(course, [sheet], resolve=True)
    assert hand_grades(course)["alice"][:2] == (1.0, COMMENTS["ran_out"])
    ledger = json.loads(rubric.ledger_path(course.root, UNIT).read_text(encoding="utf-8"))
    replaced = ledger["answers"][f"alice/{QUESTION}"]["replaced"]
    assert [(r["score"], r["comment"]) for r in replaced] == [(2.5, "by hand")]


def test_release_refuses_a_rubric_it_cannot_read_and_grading_still_records_feedback(course):
    path = course.source / UNIT / f"{NB}.ipynb"
    old = 'id = \\"peak\\"\\n",\n    "points = 1'
    path.write_text(path.read_text(encoding="utf-8").replace(old, old[:-1] + '\\"one\\"'), encoding="utf-8")
    with pytest.raises(release.ReleaseError, match=f"{NB}.ipynb {WRITTEN}.*needs a number of points"):
        release.check_metadata(course.source / UNIT)
    assert (
        len(feedback_inputs.digests(course, [("alice", UNIT)])) == 1
    )  # what `course grade` records, unbroken


def test_an_item_leaving_the_rubric_while_answers_have_it_stops_rescore_and_changes_nothing(course, tmp_path):
    (sheet,) = handgrade.export(course, UNIT, ["ta1"], into=tmp_path / "q")
    handgrade.import_sheets(course, [mark(sheet, {"alice": ([FLASH], ""), "bob": ([PEAK], "")})])
    path = course.source / UNIT / f"{NB}.ipynb"
    path.write_text(
        path.read_text(encoding="utf-8").replace('id = \\"flash\\"', 'id = \\"flash2\\"'), encoding="utf-8"
    )
    before = state(course)
    with pytest.raises(
        ValueError, match=r"alice/.*no longer in the rubric: \['flash'\] \(nothing was changed\)"
    ):
        handgrade.rescore(course, UNIT)
    assert state(course) == before
