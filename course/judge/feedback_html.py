"""Markdown a student wrote, made safe in the feedback HTML (nbgrader's `generate_feedback`).

nbgrader's feedback template renders every markdown cell as it is (nbconvert's `sanitize_html` does not reach
its markdown cells), so a `<script>` or an `onerror=` in a cell a student wrote would run in the browser of
whoever opens the feedback. The course's template (`TEMPLATES/course_feedback`, chosen in nbgrader_config.py
for the feedback only) extends nbgrader's and passes each rendered markdown cell through `safe_html`: the tags
markdown makes and nothing else (no script, style, frame, form or event handler), links to the web, mail or an
anchor, images only embedded in the notebook (never fetched from elsewhere). Outputs are made inert before, by
`course.judge.outputs`. formgrader's page of a submission passes its markdown cells through `formgrader_html`
(`safe_html` less class and id) and escapes the student's names (`EscapedNames`): `TEMPLATES/course_formgrade.html.j2`,
issue 45.

Above the notebook the page says what a student can act on (`CourseFeedback`, after nbgrader's GetGrades): per test
cell the properties that lost points and how many (the judge records each judged property's weight and verdict in
the cell's metadata, `record_judged`), linked to the cell; hand-graded answers not graded yet as pending, never
as 0; the unit's total with its late penalty as the course records it (`course grade` passes what it writes in
grades.csv; feedback made again after hand grading takes the penalty rate from grades.csv and totals as
grades_by_cell.csv; where neither is known, the total is said to come before any penalty); each hand-graded
answer's rubric once it is graded (read from source/, the items `course handgrade` gave ticked); and, once, how a
cell's points are split among its properties.
"""

from __future__ import annotations

import csv
import functools
import html
import re
from pathlib import Path

import bleach
import jinja2
import nbgrader
from bleach.css_sanitizer import CSSSanitizer
from nbconvert.exporters import HTMLExporter, TemplateExporter
from nbconvert.filters.highlight import Highlight2HTML
from nbconvert.filters.widgetsdatatypefilter import WidgetsDataTypeFilter
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Dict

TEMPLATES = Path(__file__).resolve().parent / "templates"
NBGRADER_TEMPLATES = (
    Path(nbgrader.__file__).resolve().parent / "server_extensions" / "formgrader" / "templates"
)
TAGS = {
    *("a", "abbr", "b", "blockquote", "br", "code", "dd", "del", "details", "div", "dl", "dt", "em"),
    *("h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "img", "kbd", "li", "ol", "p", "pre", "s", "span"),
    *("strong", "sub", "summary", "sup", "table", "tbody", "td", "tfoot", "th", "thead", "tr", "ul"),
}
EVERYWHERE = ("class", "id", "title")
EMBEDDED_IMAGE = re.compile(r"data:image/(png|jpeg|gif|webp)[;,]")
HIDDEN_IN_URL = re.compile(r"[\x00-\x20\x7f-\xa0\s]+")  # what browsers ignore inside a URL's scheme
TABLE_STYLE = CSSSanitizer(allowed_css_properties=["text-align"])  # markdown's column alignment


def allowed_attribute(tag: str, name: str, value: str) -> bool:
    url = HIDDEN_IN_URL.sub("", value).lower()
    if name in EVERYWHERE:
        return True
    if tag == "a":
        return name == "name" or (name == "href" and not url.startswith("data:"))
    if tag == "img":
        return name in ("alt", "width", "height") or (name == "src" and bool(EMBEDDED_IMAGE.match(url)))
    return tag in ("th", "td") and name == "style"


def without_hooks(tag: str, name: str, value: str) -> bool:
    """`allowed_attribute` less class and id: formgrader's scripts find their buttons and inputs by class and id."""
    return name not in ("class", "id") and allowed_attribute(tag, name, value)


def safe_html(html, attributes=allowed_attribute) -> str:
    """`html` (rendered markdown) with only the allowed tags and `attributes`; others removed, their text kept."""
    return bleach.clean(
        str(html),
        tags=TAGS,
        attributes=attributes,
        protocols=["http", "https", "mailto", "data"],
        css_sanitizer=TABLE_STYLE,
        strip=True,
        strip_comments=True,
    )


def formgrader_html(html) -> str:
    """`safe_html` for formgrader's page of a submission: no class or id either, so an element a student wrote never
    acts as one of formgrader's (a <span> with the classes of its "Full credit" button gave full credit when
    clicked)."""
    return safe_html(html, without_hooks)


class EscapedNames(NbGraderPreprocessor):
    """formgrader's page of a submission: the student's names escaped (nbgrader's formgrade template writes them as
    they are, and a roster's names come from an LMS, where a student may choose their own)."""

    def preprocess(self, nb, resources):
        for key in ("first_name", "last_name", "student"):
            if isinstance(resources.get(key), str):
                resources[key] = html.escape(resources[key])
        return nb, resources


IMAGE_WITHOUT_ALT = re.compile(r"<img(?![^>]*\salt=)", re.IGNORECASE)
NO_ALT = "No description has been provided for this image"  # nbconvert's words


class CompiledOnce(jinja2.BytecodeCache):
    """The templates' compiled code, kept for the process: each page's exporter makes a Jinja environment of its
    own, which parsed and compiled the same ten templates again, a third of a page's CPU time (profiled: 5.3 of
    15.2 s for ten pages). A template is compiled again when its source changes (Jinja checks its digest)."""

    def __init__(self):
        self.code: dict[str, bytes] = {}

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        if (code := self.code.get(bucket.key)) is not None:
            bucket.bytecode_from_string(code)

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        self.code[bucket.key] = bucket.bytecode_to_string()


COMPILED = CompiledOnce()
# of a code cell, the characters past which its highlighting is not kept: the cells a unit gives (the same on every
# page) are short (4.2 KiB at most), and a job that keeps a class's long cells would hold them all; a cell highlights
# to up to ~26 times its size (`a<a<…`: a span and an escape a character), so 256 kept hold ~52 MiB at most
HIGHLIGHT_KEPT = 8 << 10


@functools.lru_cache(maxsize=256)
def highlighted(source: str, language: str, magics: str | None) -> str:
    """nbconvert's highlighting of a code cell (`Highlight2HTML`, default options) by all it depends on: the cell's
    source, its language and its `magics_language`."""
    return Highlight2HTML(pygments_lexer=language)(
        source, None, None if magics is None else {"magics_language": magics}
    )


class HighlightOnce(Highlight2HTML):
    """`Highlight2HTML`, each distinct short cell (HIGHLIGHT_KEPT) highlighted once a process: a unit's given cells
    are the same on every student's page, and highlighting was a quarter of a page's CPU time (profiled: 3.9 of
    15.2 s, ten pages)."""

    def __call__(self, source, language=None, metadata=None):
        if self.extra_formatter_options or len(source) > HIGHLIGHT_KEPT:  # as nbconvert does it
            return super().__call__(source, language, metadata)
        return highlighted(source, language or self.pygments_lexer, (metadata or {}).get("magics_language"))


class FeedbackExporter(HTMLExporter):
    """nbconvert's HTML exporter without its last pass, which parses the finished page with BeautifulSoup and
    writes it out again to give images without alt text nbconvert's, and JupyterLab's cells and outputs a tabindex:
    half of a feedback page's CPU time (unit 01: ~0.5 s of ~1 s a page; 300 pages are the week's slowest step). The
    feedback's template is the classic one, which has none of JupyterLab's cells; the alt text is given here, on
    the page's text. The page is the same document (tests/test_feedback_fresh.py compares the two)."""

    def _create_environment(self):
        environment = super()._create_environment()
        environment.bytecode_cache = COMPILED  # the templates compiled once a job, not once a page
        return environment

    def from_notebook_node(self, nb, resources=None, **kw):
        """HTMLExporter's, up to its BeautifulSoup pass (nbconvert 7)."""
        language = nb.metadata.get("language_info", {})
        lexer = language.get("pygments_lexer", language.get("name", None))
        highlight = self.filters.get("highlight_code", HighlightOnce(pygments_lexer=lexer, parent=self))
        resources = self._init_resources(resources)
        data_types = WidgetsDataTypeFilter(
            notebook_metadata=self._nb_metadata, parent=self, resources=resources
        )
        self.register_filter("highlight_code", highlight)
        self.register_filter("filter_data_type", data_types)
        page, resources = TemplateExporter.from_notebook_node(self, nb, resources, **kw)
        return IMAGE_WITHOUT_ALT.sub(f'<img alt="{NO_ALT}"', page), resources


def template_dirs() -> list[str]:
    """Where nbconvert finds the course's templates (the feedback's; formgrader's page, TEMPLATES's
    course_formgrade.html.j2) and nbgrader's, which they extend."""
    return [str(TEMPLATES), str(NBGRADER_TEMPLATES)]


# ---- what a student can act on, above the notebook ----------------------------------------------------------

# a judged test cell's metadata: [[property, weight, held], …], written by the judge
JUDGED = "judged_properties"
RULE = (
    "每个测试单元格的分数按权重分给它的各个性质；一个性质只有在它的所有用例都通过时才得到它的那一份。",
    "Each test cell's points are split among its properties by weight; a property earns its share only when "
    "every one of its cases passes.",
)


def record_judged(cell, weights: dict[str, float], held: dict[str, bool]) -> None:
    """Keep in the graded cell each judged property's weight and whether it held (for the feedback's summary)."""
    cell.metadata[JUDGED] = [[prop, weight, held[prop]] for prop, weight in weights.items()]


def forget_judged(nb) -> None:
    """Drop the judge's key from every cell: only the judge of this run writes it, never a submission."""
    for cell in nb.cells:
        cell.get("metadata", {}).pop(JUDGED, None)


def number(value: float) -> str:
    return f"{round(float(value), 2):g}"


def text(zh: str, en: str) -> str:
    return html.escape(f"{zh} · {en}")


def property_points(cell) -> list[tuple[str, float, bool]]:
    """(property, its points, held) of a judged cell: the cell's points split by the judged weights."""
    judged = cell.metadata.get(JUDGED) or []
    total = sum(weight for _, weight, _ in judged)
    points = float(cell.metadata.nbgrader.get("points", 0))
    return [(prop, points * weight / total, held) for prop, weight, held in judged if total]


def link(cell) -> str:
    grade_id = html.escape(cell.metadata.nbgrader["grade_id"])
    return f'<a href="#{grade_id}"><code>{grade_id}</code></a>'


class CourseFeedback(NbGraderPreprocessor):
    """The summary above the notebook (`resources["course_feedback"]`, sanitised HTML) and each hand-graded cell
    not graded yet marked `pending` (its heading says so, not 0)."""

    late = Dict(
        help="student -> {'fraction': share of the score lost, 'late_by': text}: the late work `course grade` "
        "computed for grades.csv (absent: unknown here)"
    ).tag(config=True)

    def preprocess(self, nb, resources):
        info = resources.get("nbgrader", {})
        pending, unit = self.from_gradebook(info)
        graded = [c for c in nb.cells if c.get("metadata", {}).get("nbgrader", {}).get("grade")]
        for cell in graded:
            cell.metadata.nbgrader["pending"] = cell.metadata.nbgrader["grade_id"] in pending
        parts = [
            totals(info, graded, unit, *self.late_work(info)),
            lost_points(graded),
            awaiting(graded),
            rubrics(graded, self.rubrics(info), Path(self.config.CourseDirectory.get("root") or ""), info),
            weights(graded),
        ]
        resources["course_feedback"] = safe_html("\n".join(part for part in parts if part))
        return nb, resources

    def late_work(self, info: dict) -> tuple[dict | None, bool]:
        """(the student's late work or None, whether this grading run computed it): what `course grade` passed
        (`late`), else the unit's line of grades.csv in the course folder (feedback made again after hand
        grading; `course export` keeps its late columns up to date)."""
        student, unit = info.get("student", ""), info.get("assignment", "")
        if student in self.late:
            return self.late[student], True
        root = self.config.CourseDirectory.get("root")
        path = Path(root or "") / "grades.csv"
        if not root or not path.is_file():
            return None, False
        with path.open(newline="", encoding="utf-8") as f:
            for line in csv.DictReader(f):
                if (line.get("student_id"), line.get("unit")) == (student, unit) and "penalty_rate" in line:
                    return {"fraction": float(line["penalty_rate"] or 0), "late_by": line["late_by"]}, False
        return None, False

    def rubrics(self, info: dict) -> dict:
        """{"notebook stem/grade_id": rubric} of the unit's hand-graded cells, from source/ (never the submission);
        {} where it cannot be read (`course handgrade` names the problem)."""
        from course.grading.rubric import RubricError, unit_rubrics

        directory = self.config.CourseDirectory
        source = Path(directory.get("root") or "") / directory.get("source_directory", "source")
        try:
            return unit_rubrics(source / info.get("assignment", ""))
        except (RubricError, OSError):
            return {}

    @staticmethod
    def from_gradebook(info: dict) -> tuple[set[str], tuple[float, float] | None]:
        """(the cells no one has graded yet, (the unit's score, its points)) from the gradebook GetGrades read;
        nothing where there is none."""
        if not info.get("db_url"):
            return set(), None
        from nbgrader.api import Gradebook

        with Gradebook(info["db_url"]) as gb:
            notebook = gb.find_submission_notebook(info["notebook"], info["assignment"], info["student"])
            pending = {g.name for g in notebook.grades if g.auto_score is None and g.manual_score is None}
            submission = gb.find_submission(info["assignment"], info["student"])
            return pending, (float(submission.score), float(submission.max_score))


def totals(
    info: dict, graded: list, unit: tuple[float, float] | None, late: dict | None, this_run: bool
) -> str:
    """The notebook's score, the points awaiting hand grading, and the unit's total with its late penalty as
    the course records them (`this_run`: grades.csv as this grading wrote it; else with the hand grades given
    since, as grades_by_cell.csv totals it)."""
    waiting = sum(
        float(c.metadata.nbgrader.get("points", 0)) for c in graded if c.metadata.nbgrader["pending"]
    )
    lines = [
        f"<h4>{html.escape(str(info.get('notebook', '')))} — {text('得分', 'score')}: "
        f"{number(info.get('score', 0))} / {number(info.get('max_score', 0))}</h4>"
    ]
    if waiting:
        lines.append(
            "<p>"
            + text(
                f"另有 {number(waiting)} 分待人工批改（批改前计 0 分）",
                f"{number(waiting)} points await hand grading (counted as 0 until then)",
            )
            + "</p>"
        )
    if unit is None:
        return "\n".join(lines)
    score, points = unit
    total = f"{score:g} / {points:g}"  # as grades.csv writes them
    if late is None:
        said = text(
            f"单元总分 {total}，迟交扣分前（如有迟交，课程记录的成绩会扣除）",
            f"unit total {total}, before any late penalty (the grade the course records deducts it, if any)",
        )
        return "\n".join([*lines, f"<p>{said}</p>"])
    # imported here: it imports torch, which nbgrader's commands otherwise need not
    from course.grading.semester import late_penalty

    fraction = float(late.get("fraction", 0))
    penalty, final = late_penalty(score, fraction)
    final_total = f"{final:g} / {points:g}"
    if this_run:
        where = (
            "与 grades.csv 的 score、penalty、final_score 相同",
            "grades.csv's score, penalty and final_score",
        )
    else:
        where = ("与 grades_by_cell.csv 的单元总分相同", "the unit's total in grades_by_cell.csv")
    if fraction:
        rate, late_by = number(100 * fraction), str(late.get("late_by", ""))
        said = text(
            f"单元总分 {total}；迟交 {late_by}，扣 {rate}%：−{penalty:g}；最终 {final_total}（{where[0]}）",
            f"unit total {total}; late by {late_by}, {rate}% off: −{penalty:g}; final {final_total} ({where[1]})",
        )
    else:
        said = text(
            f"单元总分 {total}，按时提交，最终 {final_total}（{where[0]}）",
            f"unit total {total}, on time, final {final_total} ({where[1]})",
        )
    return "\n".join([*lines, f"<p>{said}</p>"])


def lost_points(graded: list) -> str:
    """Each test cell that lost points, linked, with the properties that lost them and how many."""
    rows = []
    for cell in graded:
        grading = cell.metadata.nbgrader
        if grading.get("solution") or grading["pending"]:
            continue
        score, points = float(grading.get("score") or 0), float(grading.get("points", 0))
        if score >= points:
            continue
        failed = [
            f"{html.escape(p)} −{number(share)}" for p, share, held in property_points(cell) if not held
        ]
        why = "; ".join(failed) or text("见单元格的输出", "see the cell's output")
        rows.append(
            f"<tr><td>{link(cell)}</td><td>{number(score)} / {number(points)}</td><td>{why}</td></tr>"
        )
    if not rows:
        return ""
    head = f"<tr><th>{text('单元格', 'cell')}</th><th>{text('得分', 'score')}</th>"
    head += f"<th>{text('失分的性质', 'properties that lost points')}</th></tr>"
    return (
        f"<h5>{text('失分之处', 'where points were lost')}</h5>"
        f'<table class="table table-condensed"><thead>{head}</thead><tbody>{"".join(rows)}</tbody></table>'
    )


def awaiting(graded: list) -> str:
    """The hand-graded answers no one has graded yet, linked."""
    items = [
        f"<li>{link(c)}: {text('待批改', 'pending')}（{number(c.metadata.nbgrader.get('points', 0))} 分 · points）</li>"
        for c in graded
        if c.metadata.nbgrader["pending"]
    ]
    if not items:
        return ""
    return f"<h5>{text('待人工批改', 'awaiting hand grading')}</h5><ul>{''.join(items)}</ul>"


def rubrics(graded: list, found: dict, root: Path, info: dict) -> str:
    """Each hand-graded answer's rubric once it is graded: every item with its points, the given ones ticked
    where the sheets of `course handgrade` gave them (the ledger in the course folder `root`,
    `course.grading.rubric.given_items`)."""
    from course.grading.rubric import given_items

    parts = []
    for cell in graded:
        grading = cell.metadata.nbgrader
        question = f"{info.get('notebook', '')}/{grading['grade_id']}"
        rubric = found.get(question)
        if not grading.get("solution") or grading["pending"] or rubric is None:
            continue
        given = given_items(
            root,
            info.get("assignment", ""),
            info.get("student", ""),
            question,
            grading.get("score"),
            grading.get("comment"),
        )
        marks = {True: "✓", False: "✗", None: "•"}
        items = "".join(
            f"<li>{marks[None if given is None else item.id in given]} {item.points:+g} "
            f"{html.escape(item.criterion)}</li>"
            for item in rubric.items
        )
        parts.append(f"<p>{link(cell)}</p><ul>{items}</ul>")
    if not parts:
        return ""
    return f"<h5>{text('评分细则', 'rubric')}</h5>{''.join(parts)}"


def weights(graded: list) -> str:
    """How each judged cell's points split among its properties, with the rule said once."""
    items = []
    for cell in graded:
        split = property_points(cell)
        if split:
            shares = "; ".join(
                f"{html.escape(p)} {number(share)} {'✓' if held else '✗'}" for p, share, held in split
            )
            items.append(f"<li>{link(cell)}: {shares}</li>")
    if not items:
        return ""
    rule = html.escape(f"{RULE[0]} {RULE[1]}")
    return f"<h5>{text('分值', 'points per property')}</h5><p>{rule}</p><ul>{''.join(items)}</ul>"
