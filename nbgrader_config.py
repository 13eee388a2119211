"""nbgrader configuration for the course (read by `nbgrader …` run from the course root and by `python -m course`).

Environment variables (all optional):
  FLASH_COURSE_DIR           the course folder: the semester's state (default ~/flash-attention-semester);
  FLASH_COURSE_CELL_TIMEOUT  seconds one notebook cell may run while autograding (overrides the defaults below);
  FLASH_COURSE_DEVICE        `cpu` forces the CPU defaults even on a GPU box (same variable as `utils.device`);
  FLASH_COURSE_OVERLAY       a private instructor overlay (hidden cases and salt outside the public repository,
                             see course/grading/overlay.py): its unit judges replace the public ones in this run.
"""

import os
from pathlib import Path

from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor
from nbgrader.preprocessors import GetGrades

from course import ROOT
from course.folder import ENV, course_folder, missing_message
from course.grading import gradebook_db
from course.judge import feedback_html
from course.noise import HARMLESS_STDERR

c = get_config()  # noqa: F821 (provided by traitlets when nbgrader loads this file)

c.CourseDirectory.course_id = "flash-attention-first-principles"

# The semester's state (submitted/, autograded/, feedback/, gradebook.db) lives in the course folder, apart from the
# checkout (course/layout.py): nbgrader run here (collect, release_feedback, formgrader, db) works in it and takes
# source/ and release/ from this checkout. A copy of this file in another course root keeps nbgrader's own layout.
if Path(__file__).resolve().parent == ROOT:
    # A folder FLASH_COURSE_DIR names must exist (a typo would collect into a new semester): SystemExit, since
    # traitlets logs any Exception here and goes on in the checkout. The default folder is made on first use.
    if os.environ.get(ENV) and not course_folder().is_dir():
        raise SystemExit(missing_message(course_folder()))
    course_folder().mkdir(parents=True, exist_ok=True)
    c.CourseDirectory.root = str(course_folder())
    c.CourseDirectory.source_directory = str(ROOT / "source")
    c.CourseDirectory.release_directory = str(ROOT / "release")
    # A course whose gradebook is in a database (`course grade --db`): nbgrader uses it too, never a SQLite file.
    if _db_url := gradebook_db.for_nbgrader(course_folder()):
        c.CourseDirectory.db_url = _db_url

# Instructor-only files never reach release/ (python -m course release also checks for them).
c.CourseDirectory.ignore = [
    ".ipynb_checkpoints",
    "*.pyc",
    "__pycache__",
    "feedback",
    "instructor",
    "*.solution.*",
    "*_solution.*",
    "*_answers.*",
]

# Bilingual stubs for cleared solutions; a solution region outside a solution cell is an error.
c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE / 在此作答\nraise NotImplementedError()"}
c.ClearSolutions.text_stub = "在此作答。 / YOUR ANSWER HERE"
c.ClearSolutions.enforce_metadata = True
c.ClearHiddenTests.enforce_metadata = True


def _on_gpu_box() -> bool:
    """A CUDA driver is present and the course is not forced onto the CPU (no torch import: this file is read often)."""
    if os.environ.get("FLASH_COURSE_DEVICE", "").strip().lower() == "cpu":
        return False
    return os.path.exists("/dev/nvidiactl") or os.path.exists("/proc/driver/nvidia/version")


# Per-cell timeout: Triton's CPU interpreter is orders of magnitude slower than a GPU.
_default_timeout = 120 if _on_gpu_box() else 600
c.Execute.timeout = int(os.environ.get("FLASH_COURSE_CELL_TIMEOUT", _default_timeout))
c.Execute.interrupt_on_timeout = True

# The notebook's kernel runs in the sandbox (course/judge/kernel.py), and the judge decides every judged test
# cell's points after the notebook ran, outside the student's code (course/judge). Named as strings: nbconvert
# imports them when autograding starts, before any kernel runs.
# A test cell whose flags a student changed is restored (nbgrader alone would fail the whole notebook) and flagged;
# a lone surrogate is replaced (nbgrader could not write the notebook back).
c.Autograde.sanitize_preprocessors = [
    "course.judge.sanitize.ReplaceLoneSurrogates",
    "nbgrader.preprocessors.ClearOutput",
    "nbgrader.preprocessors.DeduplicateIds",
    "nbgrader.preprocessors.OverwriteKernelspec",
    "course.judge.restore.RestoreTestCells",
    "nbgrader.preprocessors.CheckCellMetadata",
]
c.Autograde.autograde_preprocessors = [
    "course.judge.preprocessor.StartJudge",  # the judge's children run while the kernel does; Judge finishes
    "course.judge.kernel.SandboxedExecute",
    "nbgrader.preprocessors.IgnorePattern",
    "course.judge.sanitize.SanitizeOutputs",
    "course.judge.preprocessor.Judge",
    "nbconvert.preprocessors.ClearMetadataPreprocessor",
    "nbgrader.preprocessors.LimitOutput",
    "nbgrader.preprocessors.SaveAutoGrades",
    "nbgrader.preprocessors.AssignLatePenalties",
    "nbgrader.preprocessors.CheckCellMetadata",
]

# nbgrader's own Autograde and Generate (formgrader's buttons, `nbgrader autograde` / `generate_assignment`) refuse,
# naming the course's command: they would skip its grading secret, grades.csv and provenance, or its leak check.
c.Autograde.exporter_class = "course.nbgrader_gate.AutogradeThroughCourse"
c.GenerateAssignment.exporter_class = "course.nbgrader_gate.GenerateThroughCourse"

# What the student's code displayed is made inert (no HTML, JavaScript, SVG, …) and bounded in bytes before the
# judge writes its reports and before autograded/ stores it; after IgnorePattern, which needs whole stderr chunks
# (course/judge/outputs.py). Every page nbconvert makes of a submission sanitises markdown cells too (a student may
# have written them), with nbconvert's sanitiser on for whatever else (course/judge/feedback_html.py): formgrader's
# page of a submission (nbgrader's formgrade template, which formgrader imposes, extended by the course's file:
# issue 45) and the feedback HTML (nbgrader's feedback template extended by the course's, under GenerateFeedback).
c.HTMLExporter.extra_template_paths = [str(feedback_html.TEMPLATES)]
c.HTMLExporter.template_file = "course_formgrade.html.j2"
c.HTMLExporter.extra_template_basedirs = feedback_html.template_dirs()
c.HTMLExporter.filters = {
    "safe_html": "course.judge.feedback_html.safe_html",
    "formgrader_html": "course.judge.feedback_html.formgrader_html",
}
c.HTMLExporter.sanitize_html = True
c.HTMLExporter.preprocessors = [feedback_html.EscapedNames]  # formgrader's page shows the roster's names
# The feedback's exporter: nbconvert's HTML exporter less its slow last pass over the finished page
# (course/judge/feedback_html.py).
c.GenerateFeedback.exporter_class = feedback_html.FeedbackExporter
c.GenerateFeedback.HTMLExporter.template_name = "course_feedback"
c.GenerateFeedback.HTMLExporter.template_file = "feedback.html.j2"
# Above the notebook, what a student can act on: what lost points, hand grades pending, the unit's total as
# grades.csv holds it, the weights explained once (course/judge/feedback_html.py).
c.GenerateFeedback.preprocessors = [GetGrades, CSSHTMLHeaderPreprocessor, feedback_html.CourseFeedback]

# nbgrader scores a test cell 0 if it wrote anything to stderr: drop stderr that only carries harmless noise
# (warnings, progress bars, the kernel's start-up log; see course/noise.py).
c.IgnorePattern.pattern = HARMLESS_STDERR
c.IgnorePattern.enabled = True

# A private instructor overlay (FLASH_COURSE_OVERLAY): its judges replace the public ones before any notebook is
# judged; `python -m course grade` takes the overlay's salt.
if os.environ.get("FLASH_COURSE_OVERLAY"):
    from course.grading import overlay

    overlay.activate()
