"""Feedback that is never stale (issue 46, item 3): `course feedback` makes again exactly the pages whose inputs
changed (a hand grade in formgrader, an imported sheet, an extension in semester.toml) and no others, and the page
shows the rubric of a graded answer with the items given. Unit 01 in a real SQLite gradebook; nbgrader's
generate_feedback runs in the course's worker job (no notebook runs)."""

import csv
import re

import pytest
from handgrade_fixture import ANSWERS, NB, QUESTION, UNIT, WRITTEN, checkout_copy, course_copy, make_course
from nbgrader.api import Gradebook

from course.grading import feedback, feedback_inputs, gradebook_db, handgrade, rubric

SUBMITTED = "2026-03-07T10:00:00+00:00"  # a day late: due 2026-03-06T23:59 UTC
SEMESTER = '[late]\npenalty_per_day = 0.1\n[due]\n"01" = 2026-03-06T23:59:00\n'
COLUMNS = ["student_id", "unit", "score", "max_score", "submitted_at", "late", "late_by", "penalty_rate"]


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    folder = tmp_path_factory.mktemp("template")
    course = make_course(folder / "course", checkout_copy(folder / "checkout"))
    (course.root / "semester.toml").write_text(SEMESTER, encoding="utf-8")
    with (course.root / "grades.csv").open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, [*COLUMNS, "penalty", "final_score"])
        writer.writeheader()
        for student in ANSWERS:
            writer.writerow({"student_id": student, "unit": UNIT, "score": "3", "submitted_at": SUBMITTED})
    return course


@pytest.fixture
def course(template, tmp_path):
    return course_copy(template, tmp_path)


def page(course, student: str) -> str:
    html = (course.feedback / student / UNIT / f"{NB}.html").read_text(encoding="utf-8")
    return re.sub(r"\s+", " ", re.sub(r"<[^>]*>", " ", html.split('class="cell ', 1)[0]))


def test_feedback_is_made_again_for_exactly_the_students_whose_inputs_changed(course, tmp_path):
    assert feedback.refresh(course, [UNIT]) == (sorted((s, UNIT) for s in ANSWERS), [])  # none made yet
    assert "pending" in page(course, "bob") and "late by 0d 10:01" in page(course, "carol")
    assert feedback.refresh(course, [UNIT]) == ([], [])

    (sheet,) = handgrade.export(course, UNIT, ["ta1"], into=tmp_path / "sheets")
    rows = list(csv.DictReader(sheet.open(encoding="utf-8")))
    rows[1][f"{QUESTION}:peak (+1)"], rows[1]["comment"] = "x", "see the peak"  # bob
    with sheet.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    handgrade.import_sheets(course, [sheet])
    semester = course.root / "semester.toml"
    semester.write_text(SEMESTER + '[extensions.carol]\n"01" = 3\n', encoding="utf-8")
    assert feedback.refresh(course, [UNIT]) == ([("bob", UNIT), ("carol", UNIT)], [])  # alice's are unchanged
    items = rubric.unit_rubrics(course.source / UNIT)[QUESTION].items
    shown = page(course, "bob")
    assert "pending" not in shown and "rubric" in shown
    assert f"✓ +1 {items[0].criterion[:20]}" in shown and f"✗ +1 {items[1].criterion[:20]}" in shown
    assert "on time" in page(course, "carol") and "late by 0d 10:01" in page(course, "alice")

    with Gradebook(gradebook_db.url(course), gradebook_db.COURSE_ID) as gb:  # formgrader
        gb.find_grade(WRITTEN, NB, UNIT, "alice").manual_score = 2
        gb.db.commit()
    assert feedback.refresh(course, [UNIT]) == ([("alice", UNIT)], [])
    shown = page(course, "alice")
    assert "pending" not in shown and f"• +1 {items[0].criterion[:20]}" in shown  # graded, not by the sheets
    assert list(feedback.stale(course, [UNIT], force=True)) == [(s, UNIT) for s in sorted(ANSWERS)]


def test_a_grading_run_records_the_pages_it_made(course):
    """`course grade` records its pages' inputs: the next `course feedback` makes none of them again."""
    for student in ANSWERS:
        (course.feedback / student / UNIT).mkdir(parents=True)
    feedback_inputs.record_made(course, [(s, UNIT) for s in ANSWERS])
    assert feedback.stale(course, [UNIT]) == {}
    (course.feedback / "bob" / UNIT).rmdir()  # a page that is gone is made again
    assert list(feedback.stale(course, [UNIT])) == [("bob", UNIT)]


def test_a_units_pages_are_shared_among_jobs_of_ten_pages_or_more():
    todo = {(f"s{i:02d}", UNIT): "digest" for i in range(25)} | {("alice", "02_io_aware"): "digest"}
    work = feedback.shares(todo, jobs=4)
    assert [(unit, len(students)) for unit, students in work] == [(UNIT, 13), (UNIT, 12), ("02_io_aware", 1)]
    assert sorted((s, unit) for unit, students in work for s in students) == sorted(todo)


def test_pages_made_by_jobs_at_once_are_each_made_once_and_recorded(course, monkeypatch):
    monkeypatch.setattr(feedback, "PAGES_PER_JOB", 1)  # three students: three jobs, two at once
    assert feedback.refresh(course, [UNIT], jobs=2) == (sorted((s, UNIT) for s in ANSWERS), [])
    assert all((course.feedback / s / UNIT / f"{NB}.html").is_file() for s in ANSWERS)
    assert feedback.refresh(course, [UNIT], jobs=2) == ([], [])


def test_the_feedback_exporter_writes_nbconverts_page_without_its_beautifulsoup_pass():
    """The page of a notebook with markdown, code, text and an image without alt text is, parsed, the very
    document nbconvert's HTMLExporter writes (its pass gives the image its alt text)."""
    import nbformat
    from bs4 import BeautifulSoup
    from nbconvert.exporters import HTMLExporter

    from course.judge.feedback_html import FeedbackExporter

    png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_markdown_cell("# 标题 · Title\n\nSome *text* & <b>bold</b>, `code`."),
            nbformat.v4.new_code_cell(
                "x = [i ** 2 for i in range(3)]  # a < b\nprint(x)",
                outputs=[
                    nbformat.v4.new_output("stream", text="[0, 1, 4]\n"),
                    nbformat.v4.new_output("display_data", data={"image/png": png, "text/plain": "<Figure>"}),
                ],
            ),
        ]
    )
    ours, _ = FeedbackExporter(template_name="classic").from_notebook_node(nb)
    theirs, _ = HTMLExporter(template_name="classic").from_notebook_node(nb)
    assert ours.count('alt="No description has been provided for this image"') == 1
    assert BeautifulSoup(ours, "html.parser") == BeautifulSoup(theirs, "html.parser")


def test_a_jobs_pages_share_compiled_templates_and_highlighting_and_are_the_same_bytes():
    """Pages after the first compile no template and highlight no cell already highlighted, and each page is,
    byte for byte, the page of a fresh compile and nbconvert's own highlighting (a cell's magics language, even
    an empty one, counts)."""
    from unittest import mock

    import jinja2
    import nbformat
    from nbconvert.filters.highlight import Highlight2HTML

    from course.judge import feedback_html

    cells = [nbformat.v4.new_code_cell("for i in range(3):\n    print(i < 2)")]
    for magics in ("bash", ""):
        cells.append(nbformat.v4.new_code_cell("echo $HOME | wc -c", metadata={"magics_language": magics}))
    nb = nbformat.v4.new_notebook(cells=cells)
    first, _ = feedback_html.FeedbackExporter(template_name="classic").from_notebook_node(nb)
    with (
        mock.patch.object(jinja2.Environment, "compile", side_effect=AssertionError("compiled again")),
        mock.patch.object(feedback_html, "Highlight2HTML", side_effect=AssertionError("highlighted again")),
    ):
        again, _ = feedback_html.FeedbackExporter(template_name="classic").from_notebook_node(nb)
    with mock.patch.object(feedback_html, "COMPILED", None):
        nbconverts = Highlight2HTML(pygments_lexer="ipython3")
        exporter = feedback_html.FeedbackExporter(
            template_name="classic", filters={"highlight_code": nbconverts}
        )
        fresh, _ = exporter.from_notebook_node(nb)
    assert first == again == fresh
    assert first.count("hl-ipython3") == 3
    kept = feedback_html.highlighted.cache_info().currsize
    long = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell("x = 1\n" * feedback_html.HIGHLIGHT_KEPT)]
    )
    feedback_html.FeedbackExporter(template_name="classic").from_notebook_node(long)
    assert feedback_html.highlighted.cache_info().currsize == kept  # a student's long cell is not kept
