"""Feedback a student can act on (issue 34, item 4): what failed at the top, hand grading shown as pending, totals
that agree with grades.csv, the weights explained once.

Unit 01's notebook goes through the judge (`judge_notebook`, with a stand-in unit whose checks need no
child process) and nbgrader's SaveAutoGrades into a small gradebook, then through the exporter nbgrader's
generate_feedback builds from the course's configuration, GetGrades reading that gradebook. No notebook runs.
"""

import copy
import csv
import re
from pathlib import Path
from types import SimpleNamespace

import pytest
from nbconvert.exporters import HTMLExporter
from nbgrader.api import Gradebook
from nbgrader.converters import GenerateFeedback
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import SaveAutoGrades, SaveCells
from traitlets.config.loader import PyFileConfigLoader

from course import ROOT, leaks, notebooks
from course.grading import grade, semester, worker
from course.judge import preprocessor, units
from course.judge.core import Unit
from course.judge.feedback_html import CourseFeedback
from course.layout import COURSE, Course

UNIT, NOTEBOOK, STUDENT = "01_memory_bottleneck", "memory_bottleneck", "alice"
HALF = "半精度 · <i>float16</i>"  # a property name with markup: shown as text, never as HTML
# grade_id -> ({property: weight}, the properties that fail); unit 01's points: 3, 4, 2 and 3 written by hand
JUDGED = {
    "test_standard_attention": ({"奇数形状 · odd shapes": 1, "因果 · causal": 1, HALF: 1}, {HALF}),
    "test_memory_model": ({"字节数 · bytes": 1}, set()),
    "test_max_sequence_length": ({"放得下 · fits": 1, "边界 · edges": 1}, {"放得下 · fits", "边界 · edges"}),
}
WRITTEN = "written_oom_accounting"
SOURCE = notebooks.read(ROOT / "source" / UNIT / f"{NOTEBOOK}.ipynb")
POINTS = {
    notebooks.meta(c)["grade_id"]: notebooks.meta(c)["points"]
    for c in SOURCE.cells
    if notebooks.meta(c).get("grade")
}
STANDARD, MEMORY, LONGEST = (POINTS[gid] for gid in JUDGED)
AUTOGRADED = round(STANDARD * 2 / 3, 2) + MEMORY  # what the judge gives JUDGED's verdicts
RULE = "每个测试单元格的分数按权重分给它的各个性质"  # the weights' explanation (its Chinese half)


def stand_in_unit() -> Unit:
    """Unit 01's layout with checks that pass or fail the properties of JUDGED, calling nothing."""
    unit = Unit(units.UNITS[f"{NOTEBOOK}.ipynb"].layout)
    for grade_id, (weights, failing) in JUDGED.items():

        def check(j, weights=weights, failing=failing):
            for prop in weights:
                with j.case(prop, f"case of {prop}"):
                    j.expect(prop not in failing, "不成立", "does not hold")

        unit.cell(grade_id, weights)(check)
    return unit


class NoChild:
    start_seconds = 0.0  # the judge's stage timings read it
    run_time_code = frozenset()  # nor any code made at run time: it runs none
    memory_resets = 0  # nor any reset of the GPU allocator's statistics

    def __init__(self, *args, **kwargs):
        pass

    def close(self):
        pass


def course_config():
    return PyFileConfigLoader("nbgrader_config.py", path=str(ROOT)).load_config()


@pytest.fixture(scope="module")
def gradebook(tmp_path_factory):
    """(db_url, the autograded notebook) of STUDENT, as `course grade`'s job leaves them before feedback."""
    import nbgrader.api

    nbgrader.api.get_alembic_version = worker.alembic_head  # as the course's jobs do (no `alembic` script)
    url = f"sqlite:///{tmp_path_factory.mktemp('gradebook') / 'gradebook.db'}"
    source = copy.deepcopy(SOURCE)
    with Gradebook(url) as gb:
        gb.add_assignment(UNIT)
    info = {"db_url": url, "assignment": UNIT, "notebook": NOTEBOOK, "student": STUDENT}
    SaveCells().preprocess(source, {"nbgrader": info})
    with Gradebook(url) as gb:
        gb.add_student(STUDENT)
        gb.add_submission(UNIT, STUDENT)
    nb = notebooks.read(
        ROOT / "source" / UNIT / f"{NOTEBOOK}.ipynb"
    )  # the reference answers: judged here anyway
    written = next(c for c in nb.cells if notebooks.meta(c).get("grade_id") == WRITTEN)
    written.source = "显存在注意力分数矩阵处耗尽。 / The scores matrix ran out of memory."
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(preprocessor, "Child", NoChild)
        preprocessor.judge_notebook(nb, stand_in_unit(), STUDENT, "salt", "none")
    SaveAutoGrades().preprocess(nb, {"nbgrader": info})
    return url, nb


def feedback(url: str, nb, root: Path, late: dict | None = None) -> str:
    """The feedback page of `nb`, exported as nbgrader's generate_feedback exports it in the course folder `root`
    (`late`: what `course grade` passes of the student's late work)."""
    config = course_config()
    config.CourseDirectory.root = str(root)
    if late is not None:
        config.CourseFeedback.late = {STUDENT: late}
    converter = GenerateFeedback(coursedir=CourseDirectory(config=config), config=config)
    exporter = HTMLExporter(parent=converter, config=converter.config)
    for step in converter.preprocessors:
        exporter.register_preprocessor(step)
    info = {"db_url": url, "assignment": UNIT, "notebook": NOTEBOOK, "student": STUDENT}
    html, _ = exporter.from_notebook_node(nb, {"nbgrader": info})
    return html


def summary_of(html: str) -> str:
    """The part of the page above the notebook's first cell."""
    return html.split("</head>", 1)[1].split('class="cell ', 1)[0]


def text_of(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]*>", " ", html))


def hand_grade(url: str, score: float | None) -> None:
    with Gradebook(url) as gb:
        gb.find_grade(WRITTEN, NOTEBOOK, UNIT, STUDENT).manual_score = score
        gb.db.commit()


LATE = {"fraction": 0.1, "late_by": "1d 00:00 <script>alert(1)</script>"}  # as `course grade` passes it


@pytest.fixture(scope="module")
def pages(gradebook, tmp_path_factory):
    """The feedback page: as graded (late work unknown), with the late work, graded by `course grade` after the
    hand grade of 2, and made again by nbgrader's generate_feedback after it (the late work from grades.csv)."""
    url, nb = gradebook
    folder = tmp_path_factory.mktemp("course")
    found = {"graded": feedback(url, nb, folder), "late": feedback(url, nb, folder, LATE)}
    hand_grade(url, 2.0)
    found["hand graded"] = feedback(url, nb, folder, LATE)
    line = {"student_id": STUDENT, "unit": UNIT, "score": f"{AUTOGRADED:g}", "penalty_rate": "0.1"}
    with (folder / "grades.csv").open("w", newline="") as f:
        writer = csv.DictWriter(f, [*line, "late_by"])
        writer.writeheader()
        writer.writerow(line | {"late_by": "0d 12:01"})
    found["made again"] = feedback(url, nb, folder)
    hand_grade(url, None)
    return found


def test_the_top_names_each_property_that_lost_points_with_its_points_and_a_link(pages):
    html = pages["graded"]
    top = summary_of(html)
    assert 'href="#test_standard_attention"' in top and 'href="#test_max_sequence_length"' in top
    assert 'name="test_standard_attention"' in html  # the link's target, at the cell
    lost = text_of(top)
    assert f"半精度 · &lt;i&gt;float16&lt;/i&gt; −{round(STANDARD / 3, 2):g}" in lost
    assert f"放得下 · fits −{LONGEST / 2:g}" in lost and f"边界 · edges −{LONGEST / 2:g}" in lost
    assert "odd shapes −" not in lost and "bytes −" not in lost  # what held lost nothing
    assert "失分" in lost and "lost" in lost


def test_the_weights_are_explained_once(pages):
    html = pages["graded"]
    assert html.count(RULE) == 1
    assert f"奇数形状 · odd shapes {round(STANDARD / 3, 2):g} ✓" in text_of(
        summary_of(html)
    )  # each property's share of the points


def after(html: str, anchor: str, chars: int = 300) -> str:
    return text_of(html.split(f'name="{anchor}"', 1)[1])[:chars]


def test_a_written_answer_not_yet_graded_by_hand_is_pending_then_shows_its_score(pages):
    html = pages["graded"]
    assert "待批改" in after(html, WRITTEN) and "pending" in after(html, WRITTEN)
    assert not re.search(r"\b0(\.0+)? / ", after(html, WRITTEN))
    assert "待批改" in summary_of(html) and f'href="#{WRITTEN}"' in summary_of(html)

    html = pages["hand graded"]
    assert "待批改" not in html and "pending" not in html
    assert f"2 / {POINTS[WRITTEN]:g}" in after(html, WRITTEN)


@pytest.mark.parametrize(("page", "hand"), [("late", 0), ("hand graded", 2)])
def test_the_total_is_the_one_grades_csv_holds_late_penalty_included(pages, page, hand):
    score = AUTOGRADED + hand  # what `course grade` writes in grades.csv's score column
    policy = SimpleNamespace(late=lambda *_: semester.Late(semester.DAY, LATE["fraction"]))
    row = semester.late_columns(policy, STUDENT, UNIT, None, score)
    top = text_of(summary_of(pages[page]))
    possible = sum(POINTS.values())
    assert f"{score:g} / {possible:g}" in top
    assert f"−{row['penalty']}" in top and f"{row['final_score']} / {possible:g}" in top
    assert "grades.csv" in top


def test_feedback_made_again_after_hand_grading_totals_as_the_course_does(pages):
    """grades.csv's penalty rate on the total with the hand grade: the unit's total of grades_by_cell.csv."""
    score = AUTOGRADED + 2
    penalty, final = semester.late_penalty(score, 0.1)
    top = text_of(summary_of(pages["made again"]))
    assert f"unit total {score:g} / " in top and f"−{penalty:g}" in top and f"final {final:g} / " in top
    assert "grades_by_cell.csv" in top


def test_without_the_late_work_known_the_total_says_it_is_before_any_late_penalty(pages):
    top = text_of(summary_of(pages["graded"]))
    assert (
        f"{AUTOGRADED:g} / {sum(POINTS.values()):g}" in top
        and "迟交扣分前" in top
        and "before any late penalty" in top
    )


def test_the_summary_holds_nothing_active(pages):
    for html in pages.values():
        assert leaks.active_html(html) == []
        assert "<i>float16" not in html and "<script>alert" not in html


def test_course_grade_hands_each_pairs_late_work_to_its_feedback(tmp_path):
    """What grades.csv's late columns take (semester.toml, the submission's time) reaches the feedback's
    configuration in the grading job."""
    course = Course(tmp_path, COURSE.wrong)
    course.source.symlink_to(COURSE.source)
    (tmp_path / "semester.toml").write_text(
        '[late]\npenalty_per_day = 0.1\n[due]\n"01" = 2026-03-06T23:59:00\n'
    )
    for student, stamp in (
        (STUDENT, "2026-03-07 12:00:00"),
        ("bob", "2026-03-06 20:00:00"),
        ("carol", "soon"),
    ):
        (course.submitted / student / UNIT).mkdir(parents=True)
        (course.submitted / student / UNIT / "timestamp.txt").write_text(stamp)
    policy = semester.load_policy(tmp_path / "semester.toml", course)
    late = grade.late_work(course, [(s, UNIT) for s in (STUDENT, "bob", "carol")], {}, policy)
    assert late == {
        (STUDENT, UNIT): {"fraction": 0.1, "late_by": "0d 12:01"},
        ("bob", UNIT): {"fraction": 0.0, "late_by": ""},
    }  # carol's time cannot be read: her row is flagged, her feedback says "before any late penalty"

    api = worker.make_api(str(tmp_path / "job"))
    worker.tell_feedback_late(api, {"student": STUDENT, "late": late[STUDENT, UNIT]})
    converter = GenerateFeedback(coursedir=api.coursedir, parent=api)
    assert CourseFeedback(parent=converter).late == {STUDENT: late[STUDENT, UNIT]}
