"""Each student's failure is that student's alone (issue 45, principle 3): hostile bytes in one student's notebook
(Mallory's: a lone surrogate, NUL, control characters, a string of several MiB, deep nesting, odd Unicode forms)
go through `grade`, `similarity`, `stats`, `export`, `import`, `regrade`, `feedback` and `export --feedback-for canvas|moodle`
(her name in the LMS's roster and Moodle's worksheet taking the same bytes); no command stops, and every other
student's result is what it is when Mallory hands in the same notebook without them.

The class is the fixture course with a second unit after the first (a copy of it): Eve wrote her own code, Fay
renamed Eve's, Gus wrote his own way, Mallory handed in the published answer (flagged for it, before her hostile
notebook comes in: a flagged student's later submission is read by the next `grade`). Grading runs through
`course grade` with the notebooks' execution stood in for (`grade_pair`: every cell's points, Gus failing his
overflow test; `merge_gradebooks`: those points written into the gradebook) and so are the feedback pages (the
autograded notebook, escaped), so the test takes seconds; the similarity check, intake, flags, grades.csv,
checks.csv, stats, the LMS exports, feedback and import are the real ones."""

import csv
import html
import json
import re
import shutil
import zipfile
from pathlib import Path

import nbformat
import nbgrader.api
import pytest
from nbgrader.api import Gradebook
from pipeline_fixture import FIXTURE, FIXTURE_COURSE, UNIT
from test_class_review import EVE_LSE, GUS_LSE, renamed

from course import cli, notebooks
from course.grading import feedback, grade, gradebook_db, similarity, submissions, worker
from course.judge.sanitize import ReplaceLoneSurrogates
from course.judge.student_code import scan
from course.layout import Course
from utils.judged import student_module

SECOND = "02_again"  # a unit checked after the hostile one
NOTEBOOK = "logsumexp.ipynb"
CLASS = {
    "eve_own": {"lse_impl": EVE_LSE},
    "fay_renamed": {"lse_impl": renamed(EVE_LSE)},
    "gus_honest": {"lse_impl": GUS_LSE},
}
OTHERS = sorted(CLASS)
ROSTER = "student_id,name,canvas_id\n" + "".join(
    f"{s},{s.title()},{100 + i}\n" for i, s in enumerate([*OTHERS, "mallory"])
)
MARK = "# MALLORY"  # where her notebook's JSON text takes the hostile bytes (a comment of her solution cell)
LMS_NAME = 200  # characters of a name an LMS keeps (Moodle: 100 each for the first and the last name)
CANVAS_ID, PARTICIPANT = 100, 3300  # the class's LMS ids: these plus each one's place, Mallory's last
DEEP = 100_000


def in_comment(raw_json: str):
    return lambda text, folder: text.replace(MARK, MARK + raw_json, 1)


def beside(name: str, data: bytes):
    """A file handed in beside her notebook (the similarity check reads Python files)."""
    return lambda text, folder: (folder / name).write_bytes(data) and text


HOSTILE = {  # what each case does to the JSON text of Mallory's notebook (or beside it, in her folder)
    "lone surrogate": in_comment(r"\ud800 and \udfff"),
    "NUL": in_comment(r"\u0000"),
    "control characters": in_comment(r"\u001b]0;owned\u0007\u001b[2J\r\b\u0085\u2028\u202e"),
    "huge string": in_comment("x" * (6 << 20)),
    "deep JSON": lambda text, folder: text.replace(
        '"metadata": {}', '"metadata": {"x": ' + "[" * DEEP + "]" * DEEP + "}", 1
    ),
    "deep code": in_comment(r"\n    _ = " + "(" * 300 + "1" + ")" * 300),
    "deep code, many brackets": in_comment(r"\n    _ = " + "[" * DEEP + "]" * DEEP),
    "deep code, many operators": in_comment(r"\n    _ = " + "-" * DEEP + "1"),
    "many IPython magics": in_comment(r"\n    %time _ = 1" * 5000 + r"\n    " + "%time " * 5000 + "_ = 1"),
    "undecodable Python file": beside("helper.py", b"\xff\xfe\xed\xa0\x80 \x00 exec(" + b"(" * DEEP),
    "odd normal forms": in_comment(
        r"\n    \uff54\uff4f\uff50 = max(xs)\n    e\u0301 = \u00e9 = \ufeff\u2126\u212b"
        r"\n    return top + math.log(sum(math.exp(x - top) for x in xs))"
    ),
}


def mallory(course: Course, release_folder: Path, dest: Path, hostile=None) -> None:
    """Mallory's log-sum-exp notebook alone in each unit: the published answer, with the hostile bytes in the
    first unit."""
    for unit in (UNIT, SECOND):
        submissions.write_student(release_folder / unit, course.source / unit, dest / unit, {})
        (dest / unit / "softmax.ipynb").unlink()
    path = dest / UNIT / NOTEBOOK
    answer = notebooks.solution_cells(notebooks.read(path))["lse_impl"].source
    marked = answer.replace("    top = max(xs)", f"    {MARK}\n    top = max(xs)", 1)
    text = notebooks.to_text(notebooks.with_cell(notebooks.read(path), "lse_impl", marked))
    path.write_text(hostile(text, path.parent) if hostile else text, encoding="utf-8")


def stand_in_grading(course, student, unit, *_):
    """`course grade` without running the notebooks: every cell's points, but Gus's overflow test."""
    present = {p.name for p in (course.submitted / student / unit).glob("*.ipynb")}
    row = grade.Row(student, unit, grade.unit_points(course, unit))
    for name in course.notebooks(unit):
        if name not in present:
            row.problems[name] = "missing"
            continue
        for gid, points in grade.notebooks.graded_points(
            grade.notebooks.read(course.source / unit / name)
        ).items():
            passed = not (student == "gus_honest" and gid == "test_lse_stable")
            row.cells[f"{name}/{gid}"] = points * passed
            row.checks[f"{name}/{gid}"] = {"": passed}
    row.score = sum(row.cells.values())
    graded = course.autograded / student / unit
    graded.mkdir(parents=True, exist_ok=True)
    for name in present:  # as autograde leaves them: the notebooks alone
        shutil.copyfile(course.submitted / student / unit / name, graded / name)
    return row


def stand_in_merge(course, rows, *_):
    """The stood-in points into the course's gradebook, as the merge job writes them."""
    with Gradebook(gradebook_db.url(course), gradebook_db.COURSE_ID) as gb:
        for row in rows:
            gb.update_or_create_student(row.student)
            gb.update_or_create_assignment(row.unit)
            for name in course.notebooks(row.unit):
                stem = name.removesuffix(".ipynb")
                gb.update_or_create_notebook(stem, row.unit)
                cells = grade.notebooks.graded_points(grade.notebooks.read(course.source / row.unit / name))
                for gid, points in cells.items():
                    gb.update_or_create_grade_cell(gid, stem, row.unit, max_score=points, cell_type="code")
            gb.update_or_create_submission(row.unit, row.student)
            for cell, points in row.cells.items():
                name, gid = cell.split("/")
                gb.find_grade(gid, name.removesuffix(".ipynb"), row.unit, row.student).auto_score = points


def stand_in_pages(request, *_):
    """`course feedback`'s job without nbgrader: each page the autograded notebook's text, escaped."""
    root, unit = Path(request["root"]), request["unit"]
    for student in request["students"]:
        (root / "feedback" / student / unit).mkdir(parents=True, exist_ok=True)
        for graded in (root / "autograded" / student / unit).glob("*.ipynb"):
            page = f"<pre>{html.escape(graded.read_text(encoding='utf-8'))}</pre>"
            (root / "feedback" / student / unit / f"{graded.stem}.html").write_text(page, encoding="utf-8")
    return {student: True for student in request["students"]}, ""


@pytest.fixture(scope="module")
def flagged_class(tmp_path_factory):
    """The class graded and checked once with Mallory's plain notebook (she is flagged for the published answer):
    the course folder, the release and the class folder."""
    tmp = tmp_path_factory.mktemp("hostile")
    course = Course(tmp / "course", FIXTURE_COURSE.wrong)
    shutil.copytree(FIXTURE / "source", course.source)
    shutil.copytree(course.source / UNIT, course.source / SECOND)
    for unit in (UNIT, SECOND):  # the fixture's release, built by nbgrader
        shutil.copytree(FIXTURE / "release" / UNIT, tmp / "release" / unit)
    for student, answers in CLASS.items():
        for unit in (UNIT, SECOND):
            submissions.write_student(
                tmp / "release" / unit, course.source / unit, tmp / "class" / student / unit, answers
            )
    mallory(course, tmp / "release", tmp / "class" / "mallory")
    (course.root / "roster.csv").write_text(ROSTER, encoding="utf-8")
    with pytest.MonkeyPatch.context() as patch:
        fake_grading(patch)
        grade.grade(course, tmp / "class", jobs=1, sandbox="none")
        similarity.check(course, course.submitted, [UNIT, SECOND], similarity.DEFAULT_THRESHOLD)
    assert similarity.saved_flags(course, "mallory", UNIT) and similarity.saved_flags(
        course, "mallory", SECOND
    )
    return course, tmp / "release", tmp / "class"


def fake_grading(patch) -> None:
    patch.setattr(grade, "grade_pair", stand_in_grading)
    patch.setattr(grade, "register_units", lambda course, units, students=(): None)
    patch.setattr(grade, "merge_gradebooks", stand_in_merge)
    patch.setattr(nbgrader.api, "get_alembic_version", worker.alembic_head)  # a new gradebook, stamped
    patch.setattr(feedback, "run_job", stand_in_pages)
    patch.setattr(grade.judge_sandbox, "choose", lambda requested: ("none", ""))  # `regrade` asks for one


def lines(path: Path) -> list[dict[str, str]]:
    """A CSV's lines of the other students."""
    with path.open(newline="", encoding="utf-8") as f:
        return [line for line in csv.DictReader(f) if line["student_id"] in OTHERS]


def canvas_zip(class_folder: Path, path: Path) -> Path:
    """The class's first unit as Canvas's "Download Submissions" zip."""
    with zipfile.ZipFile(path, "w") as archive:
        for i, student in enumerate([*OTHERS, "mallory"]):
            for notebook in sorted((class_folder / student / UNIT).glob("*.ipynb")):
                archive.write(notebook, f"{student.replace('_', '')}_{100 + i}_{9000 + i}_{notebook.name}")
    return path


def lms_name(hostile, folder: Path) -> str:
    """Mallory's name in the LMS (its roster, Moodle's worksheet): the text her comment takes, as an LMS keeps a
    name (UTF-8, LMS_NAME characters)."""
    if hostile is None:
        return "Mallory"
    text = "Mallory " + json.loads(f'"{hostile(MARK, folder)}"')
    return text.encode("utf-8", "replace").decode("utf-8")[:LMS_NAME]


def lms_files(name: str, folder: Path) -> tuple[Path, Path]:
    """The roster of the LMS and Moodle's grading worksheet of the class, Mallory named `name`."""
    roster, worksheet = folder / "lms_roster.csv", folder / "worksheet.csv"
    names = {**{s: s.title() for s in OTHERS}, "mallory": name}
    with roster.open("w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(
            [["student_id", "name", "canvas_id", "email"]]
            + [[s, n, CANVAS_ID + i, f"{s}@uni.example.edu"] for i, (s, n) in enumerate(names.items())]
        )
    with worksheet.open("w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(
            [["Identifier", "Full name", "Email address", "Grade", "Maximum Grade", "Feedback comments"]]
            + [
                [f"Participant {PARTICIPANT + i}", n, f"{s}@uni.example.edu", "", "100.00", ""]
                for i, (s, n) in enumerate(names.items())
            ]
        )
    return roster, worksheet


def lms_feedback(course: Course, name: str, tmp: Path) -> tuple[dict, dict]:
    """`course feedback`, then `export --feedback-for canvas` and `moodle`: each command's exit status, and the
    other students' pages, Canvas files, Moodle zip members and worksheet lines."""
    roster, worksheet = lms_files(name, tmp)
    into, hers = tmp / "lms_feedback", len(OTHERS)
    status = {"feedback": cli.main(["feedback", UNIT])}
    for lms, more in (("canvas", []), ("moodle", ["--worksheet", str(worksheet)])):
        command = [
            "export",
            "--feedback-for",
            lms,
            "--unit",
            UNIT,
            "--roster",
            str(roster),
            "--into",
            str(into),
        ]
        status[f"export --feedback-for {lms}"] = cli.main(command + more)
    found = {
        "feedback pages": {
            str(p.relative_to(course.feedback)): p.read_bytes()
            for p in sorted(course.feedback.rglob("*.html"))
            if p.relative_to(course.feedback).parts[0] in OTHERS
        },
        "canvas feedback": {
            str(p.relative_to(into)): p.read_bytes()
            for p in sorted((into / f"canvas_feedback_{UNIT}").rglob("*"))
            if p.is_file() and f"_{CANVAS_ID + hers}_" not in p.name
        },
    }
    with zipfile.ZipFile(into / f"feedback_{UNIT}.zip") as archive:
        found["moodle zip"] = {
            m: archive.read(m) for m in archive.namelist() if f"_{PARTICIPANT + hers}_" not in m
        }
    with (into / f"worksheet_{UNIT}.csv").open(newline="", encoding="utf-8") as f:
        found["moodle worksheet"] = [
            line for line in csv.DictReader(f) if line["Identifier"] != f"Participant {PARTICIPANT + hers}"
        ]
    return status, found


def run_commands(flagged_class, tmp: Path, monkeypatch, hostile=None) -> tuple[dict, dict]:
    """Every command of the class after Mallory's new notebook (`hostile`'s, or the plain one again): each
    command's exit status, and what each left of the other students."""
    course_before, release_folder, class_before = flagged_class
    course = Course(tmp / "course", FIXTURE_COURSE.wrong)
    shutil.copytree(course_before.root, course.root)
    class_folder = tmp / "class"
    shutil.copytree(class_before, class_folder)
    shutil.rmtree(class_folder / "mallory")
    mallory(course, release_folder, class_folder / "mallory", hostile)
    fake_grading(monkeypatch)
    monkeypatch.setattr(cli, "_course", lambda db=None, check=True: course)
    status = {"grade": cli.main(["grade", str(class_folder), "--jobs", "1", "--no-sandbox"])}
    found = {}
    found["grades after grade"] = lines(course.root / "grades.csv")
    with (course.root / "grades.csv").open(newline="", encoding="utf-8") as f:
        found["Mallory's lines"] = sorted(
            line["unit"] for line in csv.DictReader(f) if line["student_id"] == "mallory"
        )
    shutil.rmtree(course.root / similarity.FOLDER / SECOND)  # made again by a check that reaches it
    status["similarity"] = cli.main(["similarity"])
    found["second unit checked"] = (course.root / similarity.FOLDER / SECOND / "report.html").is_file()
    found["flags"] = {
        key: v for key, v in similarity.read_flags(course).items() if key.split("/")[0] in OTHERS
    }
    found["grades after similarity"] = lines(course.root / "grades.csv")
    status["stats"] = cli.main(["stats"])
    with (course.root / "stats" / f"{UNIT}.csv").open(newline="", encoding="utf-8") as f:
        found["failed in stats"] = [(line["cell"], line["failed"]) for line in csv.DictReader(f)]
    found["checks"] = lines(course.root / "checks.csv")
    status["export"] = cli.main(["export", "--canvas", str(tmp / "canvas.csv")])
    found["canvas"] = (tmp / "canvas.csv").read_text(encoding="utf-8").splitlines()[: 1 + len(OTHERS)]
    found["grades after export"] = lines(course.root / "grades.csv")
    into = tmp / "imported"
    status["import"] = cli.main(
        ["import", str(canvas_zip(class_folder, tmp / "download.zip")), "--unit", UNIT, "--into", str(into)]
    )
    for student in ("mallory", "eve_own"):
        status[f"regrade {student}"] = cli.main(["regrade", student, UNIT, "--reason", "asked"])
    found["grades after regrade"] = lines(course.root / "grades.csv")
    found["imported"] = {
        str(p.relative_to(into)): p.read_bytes()
        for p in sorted(into.rglob("*.ipynb"))
        if p.relative_to(into).parts[0] in OTHERS
    }
    lms_status, lms_found = lms_feedback(course, lms_name(hostile, tmp), tmp)
    return status | lms_status, found | lms_found


@pytest.fixture(scope="module")
def plain(flagged_class, tmp_path_factory):
    with pytest.MonkeyPatch.context() as monkeypatch:
        return run_commands(flagged_class, tmp_path_factory.mktemp("plain"), monkeypatch)


@pytest.mark.parametrize("case", HOSTILE)
def test_one_students_hostile_notebook_changes_nobody_elses_result(
    case, flagged_class, plain, tmp_path, monkeypatch
):
    status, found = run_commands(flagged_class, tmp_path, monkeypatch, HOSTILE[case])
    expected_status, expected = plain
    assert set(expected_status.values()) == {0}
    assert expected["flags"] and expected["checks"] and expected["imported"]
    assert len(expected["canvas feedback"]) == len(expected["feedback pages"]) == 2 * len(OTHERS)
    assert len(expected["moodle zip"]) == 2 * len(OTHERS)
    assert [bool(line["Grade"]) for line in expected["moodle worksheet"]] == [True] * len(OTHERS)
    # Mallory's refusal makes `import` say 1, her name unmatched in the worksheet the Moodle export
    left_out = {"import": 0, "export --feedback-for moodle": 0}
    assert status["export --feedback-for moodle"] in (0, 1)
    assert status | left_out == expected_status
    for what, result in found.items():
        assert result == expected[what], what


def test_a_lone_surrogate_read_from_a_notebook_can_be_written_again(tmp_path):
    """JSON's "\\ud800" in a cell and in a metadata key: read as U+FFFD, by the course and by nbgrader's autograde
    (whose first step replaces them: it could not write the notebook back, and the whole notebook failed)."""
    text = notebooks.to_text(notebooks.read(FIXTURE / "source" / UNIT / NOTEBOOK))
    text = text.replace('"metadata": {}', '"metadata": {"\\ud800": "\\udfff"}', 1)
    text = text.replace("import math", "import math  # \\ud800", 1)
    (tmp_path / "nb.ipynb").write_text(text, encoding="utf-8")
    as_read = notebooks.read(tmp_path / "nb.ipynb")
    as_graded, _ = ReplaceLoneSurrogates().preprocess(nbformat.reads(text, as_version=4), {})
    for nb in (as_read, as_graded):
        assert nb.cells[0].metadata == {"\ufffd": "\ufffd"} and nb.cells[1].source == "import math  # \ufffd"
        written = nbformat.writes(nb)
        assert written.encode("utf-8") and "\ufffd" in written


def test_code_too_deep_to_parse_is_read_as_a_cell_that_does_not_parse():
    """100,000 unary minuses, which Python's parser refuses (MemoryError from 3.13, "Parser stack overflowed" before):
    the judge's module says the cell does not parse (building it raised before, stopping the judge), and the scans
    read nothing from it."""
    deep = "_ = " + "-" * DEEP + "1"
    module = student_module.module_source([("lse_impl", deep)], "")
    assert re.search(
        r"raise SyntaxError\('cell lse_impl: (MemoryError|Parser stack overflowed[^']*)'\)", module
    )
    assert scan(deep) == [] and similarity.made_at_run_time(deep) == set()
