"""Markdown a student wrote, made safe in the feedback HTML (nbgrader's `generate_feedback`).

nbgrader's feedback template renders every markdown cell as it is (nbconvert's `sanitize_html` does not reach
its markdown cells), so a `<script>` or an `onerror=` in a cell a student wrote would run in the browser of
whoever opens the feedback. The course's template (`TEMPLATES/course_feedback`, chosen in nbgrader_config.py
for the feedback only) extends nbgrader's and passes each rendered markdown cell through `safe_html`: the tags
markdown makes and nothing else (no script, style, frame, form or event handler), links to the web, mail or an
anchor, images only embedded in the notebook (never fetched from elsewhere). Outputs are made inert before, by
`course.judge.outputs`.
"""

from __future__ import annotations

import re
from pathlib import Path

import bleach
import nbgrader
from bleach.css_sanitizer import CSSSanitizer

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
