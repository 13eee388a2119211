"""What a student's notebook displays or writes cannot run in the feedback HTML, nor blow it up (issue 31).

A notebook whose code displayed scripts (HTML, JavaScript, SVG, markdown output, widget state), printed one huge
line and drew a plot, and whose student wrote scripts into a markdown and a raw cell, goes through the autograde
preprocessors of nbgrader_config.py (those after the notebook's execution and before the gradebook; the judge
writes a fixed report) and through the HTML exporter nbgrader's generate_feedback builds from the same
configuration."""

import base64
import copy
import io
import re
import shutil
from types import SimpleNamespace

import nbformat
import pytest
from nbconvert.exporters import HTMLExporter, NotebookExporter
from nbconvert.filters import markdown2html
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output, new_raw_cell
from nbgrader.converters import GenerateFeedback
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import GetGrades
from nbgrader.utils import determine_grade
from traitlets.config.loader import PyFileConfigLoader

from course import ROOT, leaks, notebooks, selftest, wrong
from course.judge import preprocessor, units

HUGE = 8 << 20  # bytes of the one printed line
INERT = {"text/plain", "image/png", "image/jpeg"}
# they need a kernel, the sandbox or a gradebook
NOT_RUN_HERE = ("StartJudge", "SandboxedExecute", "SaveAutoGrades", "AssignLatePenalties")
REPORT = "评审 · judge: <forward> 2/3 properties hold\n  O off by 1e-2 > 1e-5"


def plot_png() -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(3, 2))
    ax.plot([0, 1, 2], [1, 0, 2])
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    plt.close(fig)
    return base64.b64encode(buffer.getvalue()).decode()


PLOT = plot_png()


def display(data: dict, metadata: dict | None = None):
    return new_output("display_data", data=data, metadata=metadata or {})


def hostile_notebook():
    """As the notebook's kernel left it: every output below came from the student's code."""
    answer = new_markdown_cell(
        "## My answer\n\n<script>alert('md')</script>\n\n<img src=x onerror=alert('md-img')>\n\n"
        "[click](javascript:alert('md-link')) <iframe src='https://evil.example/'></iframe>"
        "<style>body {display: none}</style>\n\nThe cost is $O(N^2)$."
    )
    raw = new_raw_cell("<script>alert('raw')</script><img src=x onerror=alert('raw')>")
    raw.metadata["raw_mimetype"] = "text/html"
    shown = new_code_cell("show()", execution_count=1)
    shown.metadata["tags"] = ['x" onmouseover="alert(1)']
    shown.outputs = [
        display({"text/html": "<script>alert('html')</script><b>bold</b>", "text/plain": "<HTML object>"}),
        display({"application/javascript": "alert('js')", "text/plain": "<Javascript object>"}),
        display({"image/svg+xml": "<svg xmlns='http://www.w3.org/2000/svg' onload=\"alert('svg')\"/>"}),
        display({"text/markdown": "<img src=x onerror=alert('md-out')>", "text/plain": "<Markdown object>"}),
        display({"application/vnd.jupyter.widget-view+json": {"model_id": "1"}, "text/plain": "IntSlider()"}),
        display(
            {"image/png": PLOT, "text/plain": "<Figure size 300x200 with 1 Axes>"},
            {
                "image/png": {"width": 300, "height": 200},
                "filenames": {"image/png": "https://evil.example/x"},
            },
        ),
        new_output("stream", name="stdout", text="<script>alert('stdout')</script>\n"),
        new_output(
            "execute_result",
            data={"text/html": "<script>alert('result')</script>", "text/plain": "'<b>'"},
            execution_count=1,
        ),
    ]
    huge = new_code_cell("print('A' * HUGE)", execution_count=2)
    huge.outputs = [new_output("stream", name="stdout", text="A" * HUGE + "\n")]
    test = new_code_cell("check()", execution_count=3)
    test.metadata["nbgrader"] = {
        "grade": True,
        "grade_id": "test_forward",
        "locked": True,
        "points": 1,
        "schema_version": 3,
        "solution": False,
    }
    test.outputs = [new_output("stream", name="stdout", text="self-check passed\n")]
    nb = new_notebook(cells=[answer, raw, shown, huge, test])
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}, "x": "</script>"}}
    return nb


def course_config():
    return PyFileConfigLoader("nbgrader_config.py", path=str(ROOT)).load_config()


def autograded(nb, monkeypatch):
    """`nb` through the configured autograde preprocessors, the judge writing REPORT into the test cell."""

    def judge(nb, unit, student, salt, sandbox, ran=None):
        for cell in nb.cells:
            if notebooks.meta(cell).get("grade"):
                cell.outputs = preprocessor.verdict_outputs(REPORT, 0.5, 1.0)
        return {}

    monkeypatch.setitem(units.UNITS, "hostile.ipynb", SimpleNamespace(notebook="hostile.ipynb"))
    monkeypatch.setattr(preprocessor, "judge_notebook", judge)
    config = course_config()
    config.Judge.salt = "the round's secret"
    exporter = NotebookExporter(config=config)
    for name in config.Autograde.autograde_preprocessors:
        if name.rsplit(".", 1)[-1] not in NOT_RUN_HERE:
            exporter.register_preprocessor(name)
    resources = {"nbgrader": {"notebook": "hostile", "student": "mallory", "assignment": "unit"}}
    text, _ = exporter.from_notebook_node(nb, resources)
    return nbformat.reads(text, as_version=4)


def feedback_html(nb) -> str:
    """`nb` exported the way nbgrader's generate_feedback exports it (each test cell's score set here, as
    nbgrader's GetGrades sets it from the gradebook)."""
    nb = copy.deepcopy(nb)
    for cell in nb.cells:
        if notebooks.meta(cell).get("grade"):
            cell.metadata.nbgrader["score"] = 0.5
    config = course_config()
    converter = GenerateFeedback(coursedir=CourseDirectory(config=config), config=config)
    exporter = HTMLExporter(parent=converter, config=converter.config)
    for step in converter.preprocessors:
        if step is not GetGrades:
            exporter.register_preprocessor(step)
    resources = {"nbgrader": {"notebook": "hostile", "score": 0.5, "max_score": 1.0, "late_penalty": 0}}
    html, _ = exporter.from_notebook_node(nb, resources)
    return html


@pytest.fixture(scope="module")
def graded():
    with pytest.MonkeyPatch.context() as monkeypatch:
        nb = autograded(hostile_notebook(), monkeypatch)
    return nb, feedback_html(nb)


def test_only_inert_outputs_are_stored(graded):
    nb, _ = graded
    outputs = [out for cell in nb.cells if cell.cell_type == "code" for out in cell.outputs]
    assert all(set(out.get("data", {})) <= INERT for out in outputs)
    assert "widgets" not in nb.metadata
    assert "<script" not in nbformat.writes(nb).split('"cells"', 1)[1].split('"source"')[0]


def test_the_feedback_runs_nothing_the_student_wrote(graded):
    _, html = graded
    body = html.split("</head>", 1)[1]
    assert "<script" not in body.lower() and "<iframe" not in body.lower() and "<style" not in body.lower()
    assert leaks.active_html(html) == []  # no script-like tag, event handler or javascript: URL
    assert "evil.example" not in html


def test_the_huge_line_is_cut_with_a_note_saying_how_much(graded):
    nb, html = graded
    text = nb.cells[3].outputs[0].text
    assert len(text.encode()) < 1.01 * (1 << 20)
    assert f"{HUGE + 1 - (1 << 20)} bytes cut" in text
    assert max(len(line) for line in html.splitlines()) < 2 << 20
    assert len(html) < 4 << 20


def test_the_plot_the_judge_report_and_the_answer_survive(graded):
    nb, html = graded
    plot = next(out for out in nb.cells[2].outputs if "image/png" in out.get("data", {}))
    assert plot.data["image/png"] == PLOT and plot.metadata == {"image/png": {"width": 300, "height": 200}}
    assert f"data:image/png;base64,{PLOT}" in html
    assert nb.cells[4].outputs == preprocessor.verdict_outputs(REPORT, 0.5, 1.0)
    assert "O off by 1e-2 &gt; 1e-5" in html
    assert "My answer" in html and "$O(N^2)$" in html and "<h2" in html


def test_an_output_without_anything_inert_says_what_was_removed(graded):
    nb, _ = graded
    svg = nb.cells[2].outputs[2]
    assert "image/svg+xml" in svg.data["text/plain"] and "removed" in svg.data["text/plain"]


def cell_with(outputs):
    cell = new_code_cell("x", execution_count=1)
    cell.metadata["nbgrader"] = {
        "grade": True,
        "grade_id": "t",
        "points": 2,
        "solution": False,
        "locked": True,
    }
    cell.outputs = outputs
    return cell


@pytest.mark.parametrize(
    "decisive",
    [
        [new_output("stream", name="stderr", text="Traceback…\n")],
        [new_output("execute_result", data={"text/plain": "0.5"}, execution_count=1)],
        [new_output("error", ename="AssertionError", evalue="wrong", traceback=["x"] * 10)],
    ],
)
def test_past_the_budget_what_nbgrader_scores_by_survives(decisive):
    """A cell that prints more than its budget before failing scores what it scored before."""
    from course.judge import outputs

    flood = [new_output("stream", name="stdout", text="y" * (outputs.MAX_OUTPUT - 10)) for _ in range(6)]
    before = cell_with(flood + decisive)
    expected = determine_grade(before)
    after = cell_with([nbformat.from_dict(o) for o in flood + decisive])
    after.outputs, used = outputs.bounded(after.outputs, outputs.MAX_CELL)
    assert determine_grade(after) == expected
    assert used < outputs.MAX_CELL + 3 * outputs.KEPT_PAST_BUDGET
    assert "bytes) cut" in after.outputs[-1].text


def test_many_small_outputs_and_many_cells_stay_within_the_notebook_budget():
    from course.judge import outputs

    def output(text):
        return nbformat.from_dict(
            {"output_type": "display_data", "data": {"text/plain": text}, "metadata": {}}
        )

    many = new_code_cell("for i in range(10_000): display(...)")
    many.outputs = [output("z" * 500) for _ in range(10_000)]
    large = [new_code_cell("display(...)") for _ in range(10)]
    for cell in large:
        cell.outputs = [output("y" * (outputs.MAX_OUTPUT - 100)) for _ in range(3)]
    nb = outputs.sanitize(new_notebook(cells=[many, *large]))
    sizes = [sum(outputs.size(out) for out in cell.outputs) for cell in nb.cells]
    assert max(sizes) < outputs.MAX_CELL + outputs.MAX_OUTPUT and len(nb.cells[0].outputs) < 10_000
    assert sum(sizes) < outputs.MAX_NOTEBOOK + len(nb.cells) * outputs.KEPT_PAST_BUDGET
    assert "bytes) cut" in nb.cells[-1].outputs[-1].text


def tags_and_text(html: str) -> tuple[list[str], str]:
    tags = re.findall(r"<(/?[a-z0-9]+)", html)
    return tags, re.sub(r"\s+", " ", re.sub(r"<[^>]*>", "", html)).strip()


def test_the_courses_own_markdown_renders_as_before():
    """The markdown filter keeps every tag and all the text of every markdown cell of the course's notebooks."""
    from course.judge.feedback_html import safe_html

    for path in sorted((ROOT / "source").glob("*/*.ipynb")):
        for cell in notebooks.read(path).cells:
            if cell.cell_type == "markdown":
                html = markdown2html(cell.source)
                assert tags_and_text(safe_html(html)) == tags_and_text(html), (path.name, cell.source[:80])


# The red team's leak check (`selftest --red-team`, course/leaks.py) on the same pages.


def test_the_leak_check_passes_the_graded_pages_and_catches_the_raw_ones(graded, tmp_path):
    nb, html = graded
    clean = tmp_path / "clean.ipynb", tmp_path / "clean.html"
    clean[0].write_text(nbformat.writes(nb), encoding="utf-8")
    clean[1].write_text(html, encoding="utf-8")
    assert leaks.found(*clean, {"the grading salt": "0f" * 32}) == []

    raw = hostile_notebook()
    raw.cells[3].outputs[0].text = "A" * (3 << 20) + "\n"
    raw.cells[4].outputs = [new_output("stream", name="stdout", text=f"salt {'0f' * 32}\n")]
    page = HTMLExporter(template_name="classic").from_notebook_node(raw)[0]  # nbconvert's own, unsanitised
    dirty = tmp_path / "dirty.ipynb", tmp_path / "dirty.html"
    dirty[0].write_text(nbformat.writes(raw), encoding="utf-8")
    dirty[1].write_text(page + "<p>token 1234abcd</p>", encoding="utf-8")
    found = leaks.found(*dirty, {"the grading salt": "0f" * 32, "the canary token": "1234abcd"})
    for expected in (
        "active output (text/html) in the autograded notebook",
        f"an output line of {3 << 20} characters (cap {1 << 20}) in the autograded notebook",
        "the grading salt in the autograded notebook",
        "<script> in the feedback HTML",
        "<iframe> in the feedback HTML",
        "<a href=javascript:alert…> in the feedback HTML",
        "the canary token in the feedback HTML",
    ):
        assert expected in found, found
    assert leaks.found(tmp_path / "none.ipynb", tmp_path / "none.html", {}) == []
    assert leaks.found(clean[0], tmp_path / "none.html", {}) == ["unchecked: no feedback HTML none.html"]


def test_canaries_are_planted_where_a_student_must_not_look_and_removed_even_on_failure(tmp_path):
    with pytest.raises(RuntimeError), leaks.canaries([tmp_path]) as token:
        planted = [
            tmp_path / ".redteam_canary",
            *(p / f"flash-course-canary-{token}" for p in leaks.SHARED_FOLDERS),
        ]
        assert all(path.read_text() == token for path in planted)
        raise RuntimeError("the grading failed")
    assert not any(path.exists() for path in planted)


def test_a_red_team_case_that_leaks_fails_whatever_its_score():
    attack = wrong.WrongImpl(ROOT / "x.py", "nb.ipynb", "impl", (), "", caps={"t": 0.0}, flagged=None)
    case = selftest.Case("u", "nb.ipynb", "redteam-x", "redteam", None, attack=attack)
    case.result = {"status": "graded", "scores": {"t": [0.0, 1.0]}, "leaks": []}
    assert case.verdict({"t": 1.0}) is None
    case.result["leaks"] = ["the canary token in the feedback HTML"]
    assert case.verdict({"t": 1.0}) == "leaks: the canary token in the feedback HTML"


def test_a_hostile_submission_graded_by_the_course_shows_nothing_active_in_its_feedback(tmp_path):
    """`course grade` of the fixture's unit: a correct answer that also displays scripts and prints a huge line,
    beside a markdown cell its student wrote with a script, keeps its full score; autograded/ and the feedback
    hold nothing active, nothing over the caps, not the salt."""
    from pipeline_fixture import FIXTURE, FIXTURE_COURSE, UNIT

    from course.grading import grade, submissions
    from course.layout import Course

    course = Course(tmp_path / "course", FIXTURE_COURSE.wrong)
    shutil.copytree(FIXTURE / "source", course.source)
    answer = submissions.reference_answers(notebooks.read(course.source / UNIT / "softmax.ipynb"))[
        "softmax_impl"
    ]
    hostile = (
        "from IPython.display import HTML, Javascript, display\n\n"
        "display(HTML(\"<script>alert('html')</script><img src=x onerror=alert('img')>\"))\n"
        "display(Javascript(\"alert('js')\"))\n"
        f"print('A' * {3 << 20})\n\n" + answer  # under the relay's 4 MiB a message (past it: refused)
    )
    folder = tmp_path / "class" / "mallory" / UNIT
    submissions.write_student(
        FIXTURE / "release" / UNIT, course.source / UNIT, folder, {"softmax_impl": hostile}
    )
    nb = notebooks.read(folder / "softmax.ipynb")
    nb.cells.insert(1, new_markdown_cell("Notes <script>alert('md')</script><img src=x onerror=alert('md')>"))
    notebooks.write(nb, folder / "softmax.ipynb")

    (row,) = grade.grade(course, tmp_path / "class", timeout=300)
    assert (row.status, row.score) == ("graded", row.max_score)
    graded = course.autograded / "mallory" / UNIT / "softmax.ipynb"
    page = course.feedback / "mallory" / UNIT / "softmax.html"
    assert leaks.found(graded, page, {"the grading salt": grade.grading_salt(course)}) == []
    assert "<script" not in page.read_text(encoding="utf-8").split("</head>", 1)[1]
    assert "bytes cut" in graded.read_text(encoding="utf-8")
    summary = page.read_text(encoding="utf-8").split('id="summary"', 1)[1].split('class="cell ', 1)[0]
    assert "按时提交" in summary and "on time" in summary  # the late work `course grade` passed the feedback
