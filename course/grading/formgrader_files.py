"""The Jupyter server extension `course formgrader` loads (issue 45): the files a student handed in beside a
notebook are served by formgrader as downloads, in a sandbox, and formgrader never reads another folder's
configuration.

nbgrader's formgrader serves them at formgrader/submissions/<submission>/<file>, on the instructor's server: an
.html or .svg a student wrote, opened there (a link in the answer), would run its script in the server's origin
with the instructor's rights (the contents API: the salt, the gradebook). Every response under that path but the
submission's page is sent as an attachment (the browser saves it, never shows it as a page), under a
Content-Security-Policy of no content and a sandbox (were it shown, no script runs, in a unique origin), and never
sniffed as another type. Images such a page loads are not affected (a browser ignores both headers for an <img>);
the submission's page itself (formgrader/submissions/<submission>/) is nbgrader's, its markdown sanitised by the
course's template (nbgrader_config.py).

nbgrader's /formgrader?path=FOLDER made formgrader load FOLDER's nbgrader_config.py, a Python file, in the
instructor's server: one click on such a link (in a student's answer, on any web page, since it is a plain GET)
ran the code of a student's handed-in folder (submitted/<student>/<unit>/nbgrader_config.py) as the instructor.
The course has one course folder; `path` is refused. nbgrader's pages of a unit, a notebook or a student write the
ids in their URL into their HTML unescaped: a link to formgrader/gradebook/x";alert(1);" ran its script; an id
that is not plain is not found. This extension's handlers come before nbgrader's for the same paths because
jupyter_server loads extensions in the order of their names ("course…" before "nbgrader…").
"""

from __future__ import annotations

import re

from jupyter_server.utils import url_path_join
from nbgrader.server_extensions.formgrader import handlers as nbgrader_pages
from tornado.web import HTTPError, OutputTransform

from utils.messages import bilingual

# after the server's base URL: what nbgrader routes under SUBMISSIONS is its page of one submission (SUBMISSION_PAGE,
# what follows SUBMISSIONS: the page ends there), else a submission's file (its route takes any path there, `//<id>/
# <file>` and a folder the student named formgrader/submissions/ too), its next/previous links, its own components:
# all but the page get the download headers (a redirect or a script it loads is not changed by them)
SUBMISSIONS = "/formgrader/submissions/"
SUBMISSION_PAGE = re.compile(r"[^/]+/?")
# nbgrader's pages that write ids from their URL (a unit, a notebook, a student) into their HTML and a script, as
# they are; an id of one of them is plain or the page is not found
PAGES_WITH_IDS = (
    nbgrader_pages.ManageSubmissionsHandler,
    nbgrader_pages.GradebookNotebooksHandler,
    nbgrader_pages.GradebookNotebookSubmissionsHandler,
    nbgrader_pages.ManageStudentsAssignmentsHandler,
    nbgrader_pages.ManageStudentNotebookSubmissionsHandler,
)
PLAIN_ID = re.compile(r"[\w.@-]+")  # nothing that ends an HTML text or attribute or a script's string
DOWNLOAD_HEADERS = {
    "Content-Disposition": "attachment",
    "Content-Security-Policy": "default-src 'none'; sandbox",
    "X-Content-Type-Options": "nosniff",
}


class StudentFilesAsDownloads(OutputTransform):
    """DOWNLOAD_HEADERS on every response to a request for a file of a submission."""

    def __init__(self, request):
        super().__init__(request)
        _, under, rest = request.path.partition(SUBMISSIONS)
        self.student_file = bool(under) and SUBMISSION_PAGE.fullmatch(rest) is None

    def transform_first_chunk(self, status_code, headers, chunk, finishing):
        if self.student_file:
            headers.update(DOWNLOAD_HEADERS)
        return status_code, headers, chunk


class PlainIds:
    """Before one of PAGES_WITH_IDS: 404 unless each id in its URL is plain (a link in an answer to
    formgrader/gradebook/x";alert(1);" ran that script in the instructor's formgrader)."""

    async def prepare(self, *args, **kwargs):
        if not all(PLAIN_ID.fullmatch(arg) for arg in self.path_args):
            raise HTTPError(
                404, bilingual("formgrader：网址中的名字不合规", "formgrader: a name in the URL is not plain")
            )
        return await super().prepare(*args, **kwargs)


def pages_with_plain_ids(base_url: str) -> list[tuple]:
    """nbgrader's routes to PAGES_WITH_IDS, each to its page behind PlainIds."""
    return [
        (url_path_join(base_url, pattern.lstrip("/")), type(page.__name__, (PlainIds, page), {}))
        for pattern, page, *_ in nbgrader_pages.default_handlers
        if page in PAGES_WITH_IDS
    ]


class FormgraderOnTheCourse(nbgrader_pages.FormgraderHandler):
    """nbgrader's /formgrader, refusing its `path` argument (another folder's nbgrader_config.py)."""

    def get(self):
        if self.get_argument("path", ""):
            raise HTTPError(
                403,
                bilingual(
                    "formgrader?path= 被拒绝：它会运行另一个文件夹中的 nbgrader_config.py",
                    "formgrader?path= is refused: it would run another folder's nbgrader_config.py",
                ),
            )
        return super().get()


def _load_jupyter_server_extension(serverapp) -> None:
    web_app = serverapp.web_app
    web_app.add_transform(StudentFilesAsDownloads)
    base_url = web_app.settings["base_url"]
    formgrader = url_path_join(base_url, "/formgrader/?")
    web_app.add_handlers(".*$", [(formgrader, FormgraderOnTheCourse), *pages_with_plain_ids(base_url)])
