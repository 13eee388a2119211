"""`python -m course formgrader [-- JUPYTER LAB OPTIONS]`: JupyterLab with nbgrader's formgrader on the course.

nbgrader's formgrader works only where the course folder (its course root) is inside the server's root folder; run
as `jupyter lab` in the checkout, the server's root is the checkout and the course folder lies outside it
(`~/flash-attention-semester` by default), so formgrader logs "The course directory root is not a subdirectory of
the notebook server root" and answers every page with an error. This command starts JupyterLab in the checkout
(where nbgrader_config.py is read) with the course folder as the server's root: formgrader is in the Nbgrader menu.

What a student wrote never runs there with the instructor's rights (issue 45): the server has no terminals, the
files a student handed in are served as sandboxed downloads and formgrader?path= is refused (the server extension
course/grading/formgrader_files.py), and formgrader's page of a submission shows its markdown sanitised and the
student's names escaped (nbgrader_config.py's formgrade template), under a CSP (course/grading/formgrader_csp.py).
"""

from __future__ import annotations

import os
import subprocess
import sys

from course import ROOT
from course.folder import ENV
from course.grading import gradebook_db
from course.layout import Course
from utils.messages import bilingual

FILES_AS_DOWNLOADS = "course.grading.formgrader_files"  # the server extension: a student's files, no ?path=
# A server that shows formgrader (issue 45): no terminals, a student's files served as sandboxed downloads; as
# options of `course formgrader`'s command line, and as lines of the hub's instructor server's config (course/hub).
SAFE_OPTIONS = [
    "--ServerApp.terminals_enabled=False",
    f"--ServerApp.jpserver_extensions={FILES_AS_DOWNLOADS}=True",
]
SAFE_CONFIG = (
    "c.ServerApp.terminals_enabled = False\n"
    f"c.ServerApp.jpserver_extensions = {{{FILES_AS_DOWNLOADS!r}: True}}\n"
)


def command(course: Course, options: list[str]) -> list[str]:
    """The `jupyter lab` command line: the course folder as the server's root, no terminals, a student's files
    served as downloads, then `options`."""
    return [
        sys.executable,
        "-m",
        "jupyterlab",
        f"--ServerApp.root_dir={course.root}",
        *SAFE_OPTIONS,
        *options,
    ]


def environment(course: Course) -> dict[str, str]:
    """The server's environment: nbgrader_config.py takes this course folder (and its gradebook's database)."""
    return dict(os.environ, **{ENV: str(course.root)})


def main(course: Course, options: list[str]) -> int:
    gradebook_db.settle(course)  # the gradebook formgrader will write is the course's
    course.root.mkdir(parents=True, exist_ok=True)
    print(
        bilingual(
            f"formgrader：课程文件夹 {course.root}（Ctrl-C 停止）",
            f"formgrader on the course folder {course.root} (Ctrl-C stops it)",
        )
    )
    return subprocess.call(command(course, options), cwd=ROOT, env=environment(course))
