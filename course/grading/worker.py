"""The nbgrader side of the pipeline, run in a child process: `python -m course.grading.worker REQUEST.json RESULT.json`.

The parent (`course.grading.runner`) gives each job a wall-clock limit and kills its whole process group when it
runs over, so a student's kernel that hangs or takes the machine down cannot stop the grading of others.
Results are rewritten after every notebook, so what finished before a kill is kept.

Concurrent nbgrader runs must not write one sqlite gradebook: `python -m course grade` gives each
(student, unit) job a private copy of the course's gradebook (`"gradebook"` in the request), and one
`merge` job then copies every graded submission into the course's gradebook through nbgrader's API, each one in
one transaction (`course.grading.gradebook_db`: SQLite, or PostgreSQL shared by several graders).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from unittest import mock

from course import ROOT
from course.folder import ENV
from course.grading import gradebook_db
from course.grading.atomic import replace_text
from course.neutral import visible

FAILURE = "There was an error processing assignment: "
# A kernel can fail to start for reasons of the machine, never of the student's code (two kernels starting at
# once can pick the same free TCP port; a loaded machine can miss the start-up deadline): such a notebook is
# graded again, up to this many attempts in all, before "kernel failed to start" is reported.
START_ATTEMPTS = 3
START_FAILURES = ("Kernel died before replying to kernel_info", "Kernel didn't respond in")
# What nbgrader's records of a submission are: the files release_feedback reads beside its pages
NBGRADER_RECORDS = ("timestamp.txt", "submission_secret.txt")


def make_api(root: str, judge: dict | None = None, **coursedir: str):
    """An NbGraderAPI for the course root, configured by the course's nbgrader_config.py; `judge` sets the
    judge's options (salt, sandbox, report_dir). `source/` and `release/` are the root's unless `coursedir` names
    others (`checkout`: a course folder's are in the checkout, `course.layout`)."""
    import nbgrader.api

    nbgrader.api.get_alembic_version = alembic_head
    one_line_records()
    from nbgrader.apps import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory
    from traitlets.config.loader import PyFileConfigLoader

    # nbgrader_config.py's course folder is this root (made here: a job's root is the code's, never a typo), so no
    # job makes the default one
    Path(root).mkdir(parents=True, exist_ok=True)
    with mock.patch.dict(os.environ, {ENV: root}):
        config = PyFileConfigLoader("nbgrader_config.py", path=str(ROOT)).load_config()
    config.CourseDirectory.root = root
    config.CourseDirectory.source_directory = "source"  # nbgrader_config.py names the checkout's
    config.CourseDirectory.release_directory = "release"
    config.CourseCommandOnly.run_by_course = True  # nbgrader's Autograde and Generate, through the course
    for key, value in coursedir.items():
        setattr(config.CourseDirectory, key, value)
    for key, value in (judge or {}).items():
        setattr(config.Judge, key, value)
    if judge and "sandbox" in judge:
        config.SandboxedKernelManager.sandbox = judge["sandbox"]
    return NbGraderAPI(coursedir=CourseDirectory(config=config), config=config)


def one_line_records() -> None:
    """nbgrader's captured log (each step's, which the job's log holds) one line per record, shown inert: a record
    quoting what the student wrote (a grade id with a line break: "Cell with id '%s' exists multiple times!")
    cannot start a forged line."""
    import nbgrader.utils
    from tornado.log import LogFormatter

    class OneLine(LogFormatter):
        def format(self, record):
            return visible(super().format(record))

    nbgrader.utils.LogFormatter = OneLine


@contextmanager
def records_beside_notebooks():
    """While it lasts, nbgrader's autograde and generate_feedback copy beside a submission's notebooks its
    NBGRADER_RECORDS alone (issue 45). They copied every other file too, from submitted/ into autograded/ and on into
    feedback/, where release_feedback takes every `*.html` into the exchange: a student's `feedback.html` was
    released beside the course's page, their `<notebook>.html` stood in for it wherever the course made none, and
    their `.js`, `.svg`, `nbgrader_config.py` sat beside it. A student's other files stay in submitted/ alone (the
    notebook's kernel runs without them, as the judge does; formgrader serves them from there as downloads)."""
    from nbgrader.converters import base

    every = base.find_all_files

    def records(path, exclude=None):
        return [found for found in every(path, exclude) if os.path.relpath(found, path) in NBGRADER_RECORDS]

    with mock.patch.object(base, "find_all_files", records):
        yield


def alembic_head() -> str:
    """The gradebook schema version nbgrader stamps on a new database, read in-process.

    nbgrader asks the `alembic` script instead, which costs seconds and fails where the script is
    missing or broken (e.g. a `pip install --target` on an offline GPU box).
    """
    from alembic.config import Config
    from alembic.script import ScriptDirectory
    from nbgrader.dbutil import ALEMBIC_DIR

    config = Config()
    config.set_main_option("script_location", ALEMBIC_DIR)
    return ScriptDirectory.from_config(config).get_current_head()


def failure_reasons(log: str) -> dict[str, str]:
    """{submission folder: reason} for every submission nbgrader reported as failed in `log`."""
    reasons, current, chunk = {}, None, []
    for line in [*log.splitlines(), FAILURE]:
        if FAILURE in line:
            if current is not None:
                reasons[current] = classify("\n".join(chunk))
            current, chunk = str(Path(line.split(FAILURE, 1)[1].strip()).resolve()), []
        else:
            chunk.append(line)
    return reasons


def classify(text: str) -> str:
    if any(sign in text for sign in START_FAILURES):
        return "kernel failed to start"
    if "DeadKernelError" in text or "Kernel died" in text:
        return "kernel died"
    if "UnresponsiveKernelError" in text or "became unresponsive" in text:
        return "timeout"
    return "error"


def graded_status(path: Path) -> str:
    """The status of a notebook nbgrader graded: a cell interrupted by its time limit, a kernel that died in
    a judged notebook (the judge's scores stand), or "graded"."""
    import nbformat

    from course.judge.kernel import KERNEL_DIED

    nb = nbformat.read(str(path), as_version=4)
    if any(out.get("ename") == "CellTimeoutError" for cell in nb.cells for out in cell.get("outputs", [])):
        return "cell timeout"
    return "kernel died" if KERNEL_DIED in nb.metadata else "graded"


def scores(api, unit: str, student: str, notebook: str) -> dict[str, list[float]]:
    """{grade_id: [score, max_score]} of one graded notebook, read from the gradebook."""
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(api.coursedir.db_url, api.coursedir.course_id) as gb:
        try:
            found = gb.find_submission_notebook(notebook, unit, student)
        except MissingEntry:
            return {}
        return {g.name: [float(g.score or 0.0), float(g.max_score)] for g in found.grades}


def reset(api, root: Path, unit: str, student: str) -> None:
    """Forget an earlier autograding of this submission (its autograded scores and comments, its autograded/ and
    feedback/ files), so a re-run never shows stale scores; what people did (hand scores and comments, extra
    credit, flags) stays, as in nbgrader's own autograde."""
    from nbgrader.api import Gradebook, MissingEntry

    with Gradebook(api.coursedir.db_url, api.coursedir.course_id) as gb:
        try:
            submission = gb.find_submission(unit, student)
        except MissingEntry:
            submission = None
        for notebook in submission.notebooks if submission else []:
            for grade in notebook.grades:
                grade.auto_score = None
            for comment in notebook.comments:
                comment.auto_comment = None
        gb.db.commit()
    for folder in ("autograded", "feedback"):
        shutil.rmtree(root / folder / student / unit, ignore_errors=True)


def gradebook_url(path: str | Path) -> str:
    return f"sqlite:///{Path(path).resolve()}"


def copy_submission(source, target, unit: str, student: str, resubmitted: bool = False) -> list[str]:
    """Bring the autograding of `student`'s `unit` from Gradebook `source` into Gradebook `target`, keeping what
    people did in `target` (hand scores and comments, extra credit, flags), even what they did while `source`
    was graded; the "notebook/grade_id" of the hand grades that need review again.

    Both gradebooks hold the same assignment (the source is a copy of the target, graded since). A hand grade
    needs review when its cell's autograded score changed or, with `resubmitted`, the student handed in a
    changed submission: the cell needs manual grading again and its notebook is flagged (formgrader shows both).
    """
    from nbgrader.api import MissingEntry

    try:
        graded = source.find_submission(unit, student)
    except MissingEntry:
        return []
    try:
        target.find_student(student)
    except MissingEntry:
        who = graded.student
        target.add_student(
            student,
            first_name=who.first_name,
            last_name=who.last_name,
            email=who.email,
            lms_user_id=who.lms_user_id,
        )
    target.update_or_create_submission(unit, student, timestamp=graded.timestamp)
    review = []
    for notebook in graded.notebooks:
        into_notebook = target.find_submission_notebook(notebook.name, unit, student)
        into_notebook.late_submission_penalty = notebook.late_submission_penalty
        grades = {grade.name: grade for grade in into_notebook.grades}
        to_review = []
        for grade in notebook.grades:
            into = grades[grade.name]
            if into.manual_score is None:
                into.needs_manual_grade = grade.auto_score is None  # as nbgrader's SaveAutoGrades decides
            elif resubmitted or into.auto_score != grade.auto_score:
                into.needs_manual_grade = True
                to_review.append(f"{notebook.name}/{grade.name}")
            into.auto_score = grade.auto_score
        comments = {comment.name: comment for comment in into_notebook.comments}
        for comment in notebook.comments:
            comments[comment.name].auto_comment = comment.auto_comment
        into_notebook.flagged = into_notebook.flagged or notebook.flagged or bool(to_review)
        review += to_review
    target.db.commit()
    return review


def merge(request: dict, result_path: Path) -> None:
    """Copy each graded submission from its private gradebook into the course's, one after another; each one's
    result is the hand grades that need review (`copy_submission`), or False when it failed."""
    import traceback

    from nbgrader.api import Gradebook

    api = make_api(request["root"], **course_gradebook(request), **checkout(request))
    course_id, results = api.coursedir.course_id, {}
    with Gradebook(api.coursedir.db_url, course_id) as target:
        for item in request["merges"]:
            key = f"{item['student']}/{item['unit']}"
            try:
                if not Path(item["gradebook"]).is_file():
                    raise FileNotFoundError(item["gradebook"])
                with (
                    Gradebook(gradebook_url(item["gradebook"]), course_id) as source,
                    gradebook_db.one_transaction(target),
                ):
                    review = copy_submission(
                        source, target, item["unit"], item["student"], item.get("resubmitted", False)
                    )
                    gradebook_db.pause_for_tests(item["student"], item["unit"])
                results[key] = {"review": review}
            except Exception:  # one broken private gradebook must not stop the others
                print(f"==== merge {key}: FAILED\n{traceback.format_exc()}", flush=True)
                results[key] = False
            save(result_path, results)


def course_gradebook(request: dict) -> dict[str, str]:
    """The course's gradebook a request names (`"db_url"`, e.g. PostgreSQL), else the course root's."""
    return {"db_url": request["db_url"]} if request.get("db_url") else {}


def checkout(request: dict) -> dict[str, str]:
    """The `source/` a request names (`"source"`: a course folder's is in the checkout), else the root's."""
    return {"source_directory": request["source"]} if request.get("source") else {}


def generate(request: dict, result_path: Path) -> None:
    api = make_api(
        request["root"],
        release_directory=request["release_dir"],
        **course_gradebook(request),
        **checkout(request),
    )
    results = {}
    for unit in request["units"]:
        with gradebook_db.exclusive(api.coursedir.db_url):
            out = api.generate_assignment(unit, force=True, create=True)
        report(f"generate_assignment {unit}", out)
        results[unit] = {"success": out["success"], "log": out.get("error", "") + out.get("log", "")}
        save(result_path, results)
    with gradebook_db.exclusive(api.coursedir.db_url):
        sync_students(api, request.get("students", {}))
    save(result_path, results | {STUDENTS: True})


STUDENTS = ":students"  # in a generate job's results: the roster's students are in the gradebook


def sync_students(api, students: dict[str, dict[str, str]]) -> None:
    """Write the course roster's students (names, email, LMS id) into the gradebook: formgrader lists the class of
    roster.csv; a student not on it stays, as do the fields the roster leaves empty."""
    from nbgrader.api import Gradebook

    with Gradebook(api.coursedir.db_url, api.coursedir.course_id) as gb:
        for student, fields in students.items():
            gb.update_or_create_student(student, **fields)


@records_beside_notebooks()
def autograde(request: dict, result_path: Path) -> None:
    """Grade one unit, notebook by notebook, for one student or (student "*") every submitted student.

    With `"gradebook"` in the request, grades go to that database instead of the course root's; with
    `"feedback"`, feedback HTML is written too (`feedback_students`), and each of that student's notebook entries
    gets the seconds the unit's page took ("page_seconds").
    """
    root, unit, student = Path(request["root"]), request["unit"], request["student"]
    private = {"db_url": gradebook_url(request["gradebook"])} if request.get("gradebook") else {}
    reports = Path(request.get("judge_reports") or root / "autograded" / ".judge")
    judge = {
        "salt": request.get("salt", ""),
        "sandbox": request.get("sandbox", "auto"),
        "report_dir": str(reports),
    }
    api = make_api(str(root), judge, **private, **checkout(request))
    if student != "*":
        reset(api, root, unit, student)
    results: dict[str, dict[str, dict]] = {}
    for notebook in request["notebooks"]:
        for attempt in range(1, START_ATTEMPTS + 1):
            entries = grade_notebook(api, root, unit, student, notebook)
            if all(e["status"] != "kernel failed to start" for e in entries.values()):
                break
            print(f"==== kernel failed to start (attempt {attempt} of {START_ATTEMPTS})", flush=True)
        for who, entry in entries.items():
            entry["judge"] = record_judgement(api, reports, who, unit, notebook)
            results.setdefault(who, {})[notebook] = entry
        save(result_path, results)
    api.coursedir.notebook_id = "*"
    tell_feedback_late(api, request)
    for who in feedback_students(request):
        if (root / "autograded" / who / unit).is_dir():
            began = time.monotonic()
            report(f"generate_feedback {unit} for {who}", api.generate_feedback(unit, who, force=True))
            for entry in results.get(who, {}).values():
                entry["page_seconds"] = round(time.monotonic() - began, 1)
    save(result_path, results)


@records_beside_notebooks()
def feedback(request: dict, result_path: Path) -> None:
    """Make again the feedback pages of some students of one unit (`course feedback`): {student: made}."""
    api = make_api(request["root"], **course_gradebook(request), **checkout(request))
    api.coursedir.notebook_id = "*"
    results = {}
    for student in request["students"]:
        out = api.generate_feedback(request["unit"], student, force=True)
        report(f"generate_feedback {request['unit']} for {student}", out)
        results[student] = out["success"]
        save(result_path, results)


def feedback_students(request: dict) -> list[str]:
    """Whose feedback HTML an autograde job writes: `"feedback": true` for the one student it grades, or a list
    of students (of those it grades)."""
    wanted, student = request.get("feedback"), request["student"]
    if isinstance(wanted, list):
        return [who for who in wanted if student in ("*", who)]
    return [student] if wanted and student != "*" else []


def tell_feedback_late(api, request: dict) -> None:
    """The feedback of the request's student shows its late work as `course grade` computed it (`"late"`)."""
    if request.get("late") is not None:
        api.config.CourseFeedback.late = {request["student"]: request["late"]}


def grade_notebook(api, root: Path, unit: str, student: str, notebook: str) -> dict[str, dict]:
    """{student: {"status", "scores"[, "log"]}} of one `nbgrader autograde` run of one notebook."""
    stem = notebook.removesuffix(".ipynb")
    api.coursedir.notebook_id = stem
    started = time.monotonic()
    out = api.autograde(unit, student, force=True, create=True)
    seconds = round(time.monotonic() - started, 1)
    report(f"autograde {unit}/{notebook} for {student}", out)
    failed = failure_reasons(out.get("log", ""))
    entries = {}
    for submitted in sorted((root / "submitted").glob(f"{student}/{unit}/{notebook}")):
        who = submitted.parent.parent.name
        graded = root / "autograded" / who / unit / notebook
        if graded.exists():
            status = graded_status(graded)
        else:
            status = failed.get(str(submitted.parent.resolve()), classify(out.get("error", "")))
        entries[who] = {"status": status, "scores": scores(api, unit, who, stem), "seconds": seconds}
        if status != "graded":
            entries[who]["log"] = (out.get("error", "") + out.get("log", ""))[-4000:]
    return entries


def record_judgement(api, reports: Path, student: str, unit: str, notebook: str) -> dict | None:
    """The judge's summary of one graded notebook (None if it judged none); a flag goes into the gradebook."""
    from nbgrader.api import Gradebook, MissingEntry

    from course.judge.preprocessor import summary_path

    summary = summary_path(reports, student, unit, notebook)
    if not summary.is_file():
        return None
    found = json.loads(summary.read_text(encoding="utf-8"))
    summary.unlink()
    if found.get("flagged"):
        with Gradebook(api.coursedir.db_url, api.coursedir.course_id) as gb:
            try:
                gb.find_submission_notebook(notebook.removesuffix(".ipynb"), unit, student).flagged = True
                gb.db.commit()
            except MissingEntry:
                pass
    return found


def report(what: str, out: dict) -> None:
    """Append nbgrader's log of one step to the job's log (stdout)."""
    status = "ok" if out["success"] else "FAILED"
    print(
        f"==== {time.strftime('%H:%M:%S')} {what}: {status}\n{out.get('log', '')}{out.get('error', '')}",
        flush=True,
    )


def save(path: Path, results: dict) -> None:
    replace_text(path, json.dumps(results, indent=1, ensure_ascii=False))


def main(argv: list[str]) -> int:
    request = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    actions = {"generate": generate, "autograde": autograde, "merge": merge, "feedback": feedback}
    actions[request["action"]](request, Path(argv[1]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
