"""Markdown a student wrote, made safe in the feedback HTML (nbgrader's `generate_feedback`).

nbgrader's feedback template renders every markdown cell as it is (nbconvert's `sanitize_html` does not reach
its markdown cells), so a `<script>` or an `onerror=` in a cell a student wrote would run in the browser of
whoever opens the feedback. The course's template (`TEMPLATES/course_feedback`, chosen in nbgrader_config.py
for the feedback only) extends nbgrader's and passes each rendered markdown cell through `safe_html`: the tags
markdown makes and nothing else (no script, style, frame, form or event handler), links to the web, mail or an
anchor, images only embedded in the notebook (never fetched from elsewhere). Outputs are made inert before, by
`course.judge.outputs`.

Above the notebook the page says what a student can act on (`CourseFeedback`, after nbgrader's GetGrades): per test
cell the properties that lost points and how many (the judge records each judged property's weight and verdict in
the cell's metadata, `record_judged`), linked to the cell; hand-graded answers not graded yet as pending, never
as 0; the unit's total as grades.csv holds it, with the late penalty `course grade` computed (or, where that is
unknown, said to come before it); and, once, how a cell's points are split among its properties.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import bleach
import nbgrader
from bleach.css_sanitizer import CSSSanitizer
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


def safe_html(html) -> str:
    """`html` (rendered markdown) with only the allowed tags and attributes; others removed, their text kept."""
    return bleach.clean(
        str(html),
        tags=TAGS,
        attributes=allowed_attribute,
        protocols=["http", "https", "mailto", "data"],
        css_sanitizer=TABLE_STYLE,
        strip=True,
        strip_comments=True,
    )


def template_dirs() -> list[str]:
    """Where nbconvert finds the course's feedback template and nbgrader's, which it extends."""
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
        late = self.late.get(info.get("student", ""))
        parts = [
            totals(info, graded, unit, late),
            lost_points(graded),
            awaiting(graded),
            weights(graded),
        ]
        resources["course_feedback"] = safe_html("\n".join(part for part in parts if part))
        return nb, resources

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


def totals(info: dict, graded: list, unit: tuple[float, float] | None, late: dict | None) -> str:
    """The notebook's score, the points awaiting hand grading, and the unit's total as grades.csv holds it."""
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
        lines.append(
            "<p>"
            + text(
                f"单元总分（grades.csv 的 score）：{total}，迟交扣分前（如有迟交，grades.csv 的 final_score 已扣除）",
                f"unit total (grades.csv's score): {total}, before any late penalty (grades.csv's final_score "
                "applies it, if any)",
            )
            + "</p>"
        )
        return "\n".join(lines)
    # imported here: it imports torch, which nbgrader's commands otherwise need not
    from course.grading.semester import late_penalty

    fraction = float(late.get("fraction", 0))
    penalty, final = late_penalty(score, fraction)
    final_total = f"{final:g} / {points:g}"
    if fraction:
        rate, late_by = number(100 * fraction), str(late.get("late_by", ""))
        said = text(
            f"单元总分 {total}；迟交 {late_by}，扣 {rate}%：−{penalty:g}；最终 {final_total}"
            "（与 grades.csv 的 score、penalty、final_score 相同）",
            f"unit total {total}; late by {late_by}, {rate}% off: −{penalty:g}; final {final_total} "
            "(grades.csv's score, penalty and final_score)",
        )
    else:
        said = text(
            f"单元总分 {total}，按时提交，最终 {final_total}（与 grades.csv 相同）",
            f"unit total {total}, on time, final {final_total} (as in grades.csv)",
        )
    lines.append(f"<p>{said}</p>")
    return "\n".join(lines)


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
