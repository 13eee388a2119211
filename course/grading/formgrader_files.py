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
course's template (nbgrader_config.py), sent under the policy of course.grading.formgrader_csp.

nbgrader's /formgrader?path=FOLDER made formgrader load FOLDER's nbgrader_config.py, a Python file, in the
instructor's server: one click on such a link (in a student's answer, on any web page, since it is a plain GET)
ran the code of a student's handed-in folder (submitted/<student>/<unit>/nbgrader_config.py) as the instructor.
The course has one course folder; `path` is refused. nbgrader's pages of a unit, a notebook or a student write the
ids in their URL into their HTML unescaped: a link to formgrader/gradebook/x";alert(1);" ran its script; an id
that is not plain is not found.

autograded/ holds a submission's notebooks alone (course.grading.worker.records_beside_notebooks): the files a
student handed in beside them are served from submitted/, where intake put them, as downloads.

This extension's routes are nbgrader's own, in nbgrader's order, with the pages it changes swapped for the course's;
they go ahead of every other extension's whatever order the extensions load in (jupyter_server loads them by name,
and nbgrader's routes end in a 404 for any other formgrader path).
"""

from __future__ import annotations

import os
import re

from jupyter_server.utils import url_path_join
from nbgrader.api import MissingEntry
from nbgrader.server_extensions.formgrader import handlers as nbgrader_pages
from tornado.web import HTTPError, OutputTransform

from course.grading.formgrader_csp import policy
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


def page_base(path: str) -> str | None:
    """The server's base URL where `path` is formgrader's page of one submission (SUBMISSIONS, then SUBMISSION_PAGE
    and nothing more), else None."""
    base, under, rest = path.partition(SUBMISSIONS)
    return base if under and SUBMISSION_PAGE.fullmatch(rest) else None


class StudentFilesAsDownloads(OutputTransform):
    """DOWNLOAD_HEADERS on every response to a request for a file of a submission."""

    def __init__(self, request):
        super().__init__(request)
        self.student_file = SUBMISSIONS in request.path and page_base(request.path) is None

    def transform_first_chunk(self, status_code, headers, chunk, finishing):
        if self.student_file:
            headers.update(DOWNLOAD_HEADERS)
        return status_code, headers, chunk


class SubmissionPagePolicy(OutputTransform):
    """formgrader_csp's policy on formgrader's page of a submission, computed from the page as sent (nbgrader
    writes it whole, so it is the first chunk)."""

    def __init__(self, request):
        super().__init__(request)
        base = page_base(request.path)
        self.static = (
            None if base is None else f"{request.protocol}://{request.host}{base}/formgrader/static/"
        )

    def transform_first_chunk(self, status_code, headers, chunk, finishing):
        if self.static is not None:
            headers["Content-Security-Policy"] = policy(chunk if finishing else b"", self.static)
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


class SubmittedFiles(nbgrader_pages.SubmissionFilesHandler):
    """nbgrader's files of a submission (formgrader/submissions/<submission>/<file>), read from submitted/, where
    what the student handed in beside the notebook stays (nbgrader's read autograded/)."""

    def parse_url_path(self, url_path):
        found = re.match(r"([^/]+)/(.*)", url_path.lstrip("/"))
        try:
            submission = self.gradebook.find_submission_notebook_by_id(found[1] if found else "")
        except MissingEntry:
            raise HTTPError(404, bilingual("没有这份提交", "no such submission")) from None
        folder = self.coursedir.format_path(
            self.coursedir.submitted_directory, submission.student.id, submission.assignment.assignment.name
        )
        return os.path.join(os.path.abspath(folder), found[2])


class WholeSubmissionPage(nbgrader_pages.SubmissionHandler):
    """nbgrader's page of a submission, always sent whole (no ETag, so never a 304): its policy is computed from the
    page, and a 304, which has no page, would carry one that runs none of its scripts."""

    def compute_etag(self):
        return None


# nbgrader's pages the course changes, and the course's page for each
COURSE_PAGES = {
    nbgrader_pages.FormgraderHandler: FormgraderOnTheCourse,
    nbgrader_pages.SubmissionHandler: WholeSubmissionPage,
    nbgrader_pages.SubmissionFilesHandler: SubmittedFiles,
    **{page: type(page.__name__, (PlainIds, page), {}) for page in PAGES_WITH_IDS},
}


def course_routes(base_url: str) -> list[tuple]:
    """nbgrader's routes of its pages, in its order (a submission's files after its page and its links), each
    page the course changes swapped for the course's."""
    return [
        (url_path_join(base_url, pattern.lstrip("/")), COURSE_PAGES.get(page, page), *options)
        for pattern, page, *options in nbgrader_pages.default_handlers
    ]


def _load_jupyter_server_extension(serverapp) -> None:
    web_app = serverapp.web_app
    web_app.add_transform(StudentFilesAsDownloads)
    web_app.transforms.insert(0, SubmissionPagePolicy)  # before a compression transform: the page as written
    web_app.add_handlers(".*$", course_routes(web_app.settings["base_url"]))
    # tornado tries its rules in the order they were added (each extension's, the server's own): the course's goes
    # first, whether nbgrader's formgrader loaded before this extension or loads after it
    rules = web_app.default_router.rules
    rules.insert(0, rules.pop(-2))
