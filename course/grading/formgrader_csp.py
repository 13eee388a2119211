"""The Content-Security-Policy of formgrader's page of a submission (issue 45): the page that shows what a student
wrote (markdown cells, outputs, names), sanitised by the course's template and, as a second layer, under a policy
that runs no script but nbgrader's own.

nbgrader's page needs inline scripts (the page's ids, the name toggle) and two inline handlers (`onclick`): the
policy names each by its hash ('unsafe-hashes' for the handlers), taken from the page's template part alone, what
comes before the notebook (its first `<div id="notebook">`), read as a browser reads it (text that looks like a
handler is text), where nothing a student wrote is (the course escapes the names,
refuses ids that are not plain); a script a student's markdown or output got past the sanitiser is in the notebook
part and has no hash. Scripts by URL come from formgrader's static folder (its jQuery, Backbone, formgrade.js) and
MathJax's CDN alone, not 'self': a `.js` a student handed in (`formgrader/submissions/<id>/work.js`, `/files/…`) is
on the server's origin. No plugins, no `<base>`, framed by the server's own pages alone (JupyterLab's Formgrader tab).
"""

from __future__ import annotations

import base64
import hashlib
from html.parser import HTMLParser

MATHJAX = "https://cdnjs.cloudflare.com/ajax/libs/mathjax/"  # nbconvert's mathjax() loads it from there


class TemplateScripts(HTMLParser):
    """The inline scripts and handlers of a page before its notebook: `scripts` and `handlers`, their texts."""

    def __init__(self):
        super().__init__()
        self.scripts: list[str] = []
        self.handlers: list[str] = []
        self.script: list[str] | None = None  # the text of the inline script being read
        self.notebook = False  # the notebook has started: nothing more is the template's

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        self.notebook = self.notebook or (tag == "div" and attributes.get("id") == "notebook")
        if self.notebook:
            return
        self.handlers += [value for name, value in attrs if name.startswith("on") and value]
        if tag == "script" and "src" not in attributes:
            self.script = []

    def handle_data(self, data):
        if self.script is not None and not self.notebook:
            self.script.append(data)

    def handle_endtag(self, tag):
        if tag == "script" and self.script is not None:
            self.scripts.append("".join(self.script))
            self.script = None


def source_hash(text: str) -> str:
    """A CSP source naming a script or handler by its text."""
    return f"'sha256-{base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()}'"


def policy(page: bytes, static: str) -> str:
    """The policy of a submission's `page` (its bytes as sent), whose scripts by URL come from `static` (an origin
    and formgrader's static path); a page without a notebook gets no inline script at all."""
    found = TemplateScripts()
    found.feed(page.decode("utf-8", "replace"))
    found.close()
    scripts, handlers = (found.scripts, found.handlers) if found.notebook else ([], [])
    sources = [static, MATHJAX, *sorted({source_hash(text) for text in scripts})]
    if handlers:
        sources += ["'unsafe-hashes'", *sorted({source_hash(text) for text in handlers})]
    return f"script-src {' '.join(sources)}; object-src 'none'; base-uri 'none'; frame-ancestors 'self'"
