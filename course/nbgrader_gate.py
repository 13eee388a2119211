"""nbgrader's own Autograde and Generate go through `python -m course` or not at all.

formgrader's Autograde button and plain `nbgrader autograde` would grade without the course's grading secret
(every student's hidden inputs derivable from their id), grades.csv, late penalties and provenance; its Generate
button and `nbgrader generate_assignment` would release without the course's leak check. nbgrader_config.py
gives both converters an exporter that refuses before anything is read or written (the gradebook, autograded/,
release/), unless the course's worker started the run (`course.grading.worker.make_api` sets `run_by_course`).
"""

from __future__ import annotations

from nbconvert.exporters import NotebookExporter
from nbgrader.converters.base import NbGraderException
from traitlets import Bool

from utils.messages import bilingual


class CourseCommandOnly(NotebookExporter):
    """nbgrader's notebook exporter, refusing to be made outside a run of `python -m course`."""

    run_by_course = Bool(False, help="set by the course's worker, never in nbgrader_config.py").tag(
        config=True
    )
    skipped = ("", "")  # what nbgrader's own run would skip (zh, en)
    command = ""  # the course's command to use instead

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        if not self.run_by_course:
            message = bilingual(
                f"已拒绝：nbgrader 自己的这一步会跳过{self.skipped[0]}；请用 `{self.command}`",
                f"refused: nbgrader's own run of this step skips {self.skipped[1]}; use `{self.command}`",
            )
            if self.parent is not None:
                self.parent.log.error(message)  # `nbgrader …` prints the log, formgrader shows it
            raise NbGraderException(message)


class AutogradeThroughCourse(CourseCommandOnly):
    """For `nbgrader autograde` and formgrader's Autograde button."""

    skipped = (
        "课程的评分密钥、grades.csv、迟交扣分和来源记录（nbgrader autograde / formgrader 的 Autograde 按钮）",
        "the course's grading secret, grades.csv, late penalties and provenance "
        "(nbgrader autograde / formgrader's Autograde button)",
    )
    command = "python -m course grade submitted/"


class GenerateThroughCourse(CourseCommandOnly):
    """For `nbgrader generate_assignment` and formgrader's Generate button."""

    skipped = (
        "课程的泄露检查（nbgrader generate_assignment / formgrader 的 Generate 按钮）",
        "the course's leak check (nbgrader generate_assignment / formgrader's Generate button)",
    )
    command = "python -m course release"
