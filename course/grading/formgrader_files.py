"""The Jupyter server extension `course formgrader` loads (issue 45): the files a student handed in beside a
notebook are served by formgrader as downloads, in a sandbox.

nbgrader's formgrader serves them at formgrader/submissions/<submission>/<file>, on the instructor's server: an
.html or .svg a student wrote, opened there (a link in the answer), would run its script in the server's origin
with the instructor's rights (the contents API: the salt, the gradebook). Every response under that path but the
submission's page is sent as an attachment (the browser saves it, never shows it as a page), under a Content-Security-Policy of no content
and a sandbox (were it shown, no script runs, in a unique origin), and never sniffed as another type. Images such
a page loads are not affected (a browser ignores both headers for an <img>); the submission's page itself
(formgrader/submissions/<submission>/) is nbgrader's, its markdown sanitised by the course's template
(nbgrader_config.py).
"""

from __future__ import annotations

import re

from tornado.web import OutputTransform

# after the server's base URL: what nbgrader routes under SUBMISSIONS is its page of one submission (SUBMISSION_PAGE),
# else a submission's file (its route takes any path there, `//<id>/<file>` too), its next/previous links, its own
# components: all but the page get the download headers (a redirect or a script it loads is not changed by them)
SUBMISSIONS = "/formgrader/submissions/"
SUBMISSION_PAGE = re.compile(r"/formgrader/submissions/[^/]+/?$")
DOWNLOAD_HEADERS = {
    "Content-Disposition": "attachment",
    "Content-Security-Policy": "default-src 'none'; sandbox",
    "X-Content-Type-Options": "nosniff",
}


class StudentFilesAsDownloads(OutputTransform):
    """DOWNLOAD_HEADERS on every response to a request for a file of a submission."""

    def __init__(self, request):
        super().__init__(request)
        path = request.path
        self.student_file = SUBMISSIONS in path and SUBMISSION_PAGE.search(path) is None

    def transform_first_chunk(self, status_code, headers, chunk, finishing):
        if self.student_file:
            headers.update(DOWNLOAD_HEADERS)
        return status_code, headers, chunk


def _load_jupyter_server_extension(serverapp) -> None:
    serverapp.web_app.add_transform(StudentFilesAsDownloads)
