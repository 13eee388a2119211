"""What a red-team case's graded notebook and feedback must never show (`python -m course selftest --red-team`).

Every red-team case is checked: its autograded notebook and its feedback HTML (nbgrader's generate_feedback)
must hold no active HTML from the student's outputs (scripts, frames, event handlers, `javascript:` links), no
output line longer than the output cap (`course.judge.outputs.MAX_OUTPUT`), not the grading salt of the
scratch course, and not the canary token: before the red team is graded, `canaries` writes a fresh random token
where a sandboxed student must never look (the scratch course's root, /dev/shm, /var/tmp; in the files' names
too) and removes it afterwards, whatever happened.
"""

from __future__ import annotations

import contextlib
import json
import re
import secrets
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path

from course.judge.outputs import INERT, MAX_OUTPUT

CANARY_FILE = ".redteam_canary"
CANARY_PREFIX = "flash-course-canary-"
SHARED_FOLDERS = (Path("/dev/shm"), Path("/var/tmp"))
ACTIVE_TAGS = {
    "script",
    "iframe",
    "frame",
    "object",
    "embed",
    "applet",
    "svg",
    "math",
    "style",
    "link",
    "base",
}
ACTIVE_TAGS |= {"meta", "form"}
ACTIVE_URL = re.compile(r"(javascript|vbscript|data:text/html)", re.IGNORECASE)
HIDDEN_IN_URL = re.compile(r"[\x00-\x20\x7f-\xa0\s]+")  # what browsers ignore inside a URL's scheme
HTML_ESCAPE_GROWTH = 6  # `"` becomes `&quot;`: an output's line grows at most this much in the HTML


@contextlib.contextmanager
def canaries(roots: list[Path]) -> Iterator[str]:
    """A fresh token written to `.redteam_canary` in each course root and to /dev/shm and /var/tmp (as
    `flash-course-canary-<token>`); every file is removed on the way out."""
    token = secrets.token_hex(16)
    places = [root / CANARY_FILE for root in roots]
    places += [folder / f"{CANARY_PREFIX}{token}" for folder in SHARED_FOLDERS if folder.is_dir()]
    planted: list[Path] = []
    try:
        for path in places:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(token, encoding="utf-8")
            planted.append(path)
        yield token
    finally:
        for path in planted:
            path.unlink(missing_ok=True)


def canary_in(root: Path) -> str:
    """The token planted in a course root ("" where none is)."""
    path = root / CANARY_FILE
    return path.read_text(encoding="utf-8") if path.is_file() else ""


class ActiveParts(HTMLParser):
    """Collects what a browser would run: script-like tags, event handlers, script URLs."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ACTIVE_TAGS:
            self.found.append(f"<{tag}>")
        for name, value in attrs:
            if name.startswith("on"):
                self.found.append(f"<{tag} {name}=…>")
            elif value and ACTIVE_URL.match(HIDDEN_IN_URL.sub("", value)):
                self.found.append(f"<{tag} {name}={HIDDEN_IN_URL.sub('', value)[:16]}…>")

    handle_startendtag = handle_starttag


def active_html(page: str) -> list[str]:
    """The active parts of an HTML page's body (its head is the template's: styles, MathJax), each once."""
    parser = ActiveParts()
    parser.feed(page.split("</head>", 1)[-1])
    parser.close()
    return sorted(set(parser.found))


def longest_line(texts: list[str]) -> int:
    return max((len(line) for text in texts for line in text.splitlines()), default=0)


def output_texts(output: dict) -> list[str]:
    """Every string of one output (nbformat stores a long one as a list of lines; a traceback is one)."""
    values = [output.get("text"), output.get("evalue"), *output.get("traceback", [])]
    values += output.get("data", {}).values()
    return ["".join(v) if isinstance(v, list) else v for v in values if isinstance(v, str | list)]


def notebook_leaks(notebook: str) -> list[str]:
    """Active MIME types and lines over the cap among the outputs of a notebook (its JSON text)."""
    outputs = [out for cell in json.loads(notebook).get("cells", []) for out in cell.get("outputs", [])]
    found = [
        f"active output ({mime})" for out in outputs for mime in out.get("data", {}) if mime not in INERT
    ]
    longest = longest_line([text for out in outputs for text in output_texts(out)])
    if longest > MAX_OUTPUT:
        found.append(f"an output line of {longest} characters (cap {MAX_OUTPUT})")
    return found


def page_leaks(page: str) -> list[str]:
    """Active HTML and lines over the cap (grown by HTML escaping) in a feedback page."""
    cap = HTML_ESCAPE_GROWTH * MAX_OUTPUT
    longest = longest_line([page])
    return active_html(page) + ([f"a line of {longest} characters (cap {cap})"] if longest > cap else [])


def found(autograded: Path, feedback: Path, secret: dict[str, str]) -> list[str]:
    """What a red-team case's autograded notebook and feedback HTML show that they must not; `secret` maps a
    name ("the grading salt") to its value. Without an autograded notebook nothing was stored; a missing
    feedback HTML (the notebook graded) is a finding, since it cannot be checked."""
    if not autograded.is_file():
        return []
    notebook = autograded.read_text(encoding="utf-8")
    shown = notebook_leaks(notebook) + [name for name, value in secret.items() if value and value in notebook]
    findings = [f"{what} in the autograded notebook" for what in dict.fromkeys(shown)]
    if not feedback.is_file():
        return [*findings, f"unchecked: no feedback HTML {feedback.name}"]
    page = feedback.read_text(encoding="utf-8")
    shown = page_leaks(page) + [name for name, value in secret.items() if value and value in page]
    return findings + [f"{what} in the feedback HTML" for what in dict.fromkeys(shown)]
