"""`course import`: an LMS's bulk download (Canvas's "Download Submissions", Moodle's "Download all submissions"),
built here by hand in each layout, placed as `<student>/<unit>/<notebook>.ipynb` through the roster; students the
roster does not know and files in neither layout are reported, never dropped; the download is never changed."""

import csv
import hashlib
import json
import shutil
import stat
import zipfile
from pathlib import Path

import pytest
from pipeline_fixture import FIXTURE, FIXTURE_COURSE, UNIT

from course import cli
from course.grading import lms_import
from course.layout import Course

ROSTER = (
    "student_id,name,canvas_id\n"
    "alice,Alice Li,101\n"
    "bob,Bob Wang,102\n"
    "carol,Chen Jing,103\n"
    "chen2,Chen Jing,104\n"  # two students of one name
)


def notebook(marker: str) -> bytes:
    nb = json.loads((FIXTURE / "source" / UNIT / "softmax.ipynb").read_text(encoding="utf-8"))
    nb["metadata"]["marker"] = marker
    return json.dumps(nb).encode()


@pytest.fixture
def course(tmp_path) -> Course:
    course = Course(tmp_path / "course", FIXTURE_COURSE.wrong)
    shutil.copytree(FIXTURE / "source", course.source)
    (course.root / "roster.csv").write_text(ROSTER, encoding="utf-8")
    return course


def make_zip(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return path


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def report(into: Path) -> list[dict[str, str]]:
    with (into / f"lms_import_{UNIT}.csv").open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_canvas_download_is_placed_through_the_roster(course, tmp_path, capsys):
    download = make_zip(
        tmp_path / "submissions.zip",
        {
            "lialice_101_9001_softmax.ipynb": notebook("alice softmax"),
            "lialice_101_9002_logsumexp-1.ipynb": notebook("alice lse"),  # Canvas numbered a resubmission
            "wangbob_late_102_9003_softmax.ipynb": notebook("bob"),
            "zhangwei_555_9004_softmax.ipynb": notebook("stranger"),  # not in the roster
            "notes.txt": b"not a submission",
        },
    )
    before = digest(download)
    into = tmp_path / "uploads"
    assert lms_import.main(course, str(download), "01", str(into), None) == 1
    out = capsys.readouterr().out
    placed = into / "alice" / UNIT
    assert sorted(p.name for p in placed.iterdir()) == ["logsumexp.ipynb", "softmax.ipynb"]
    assert json.loads((placed / "logsumexp.ipynb").read_text())["metadata"]["marker"] == "alice lse"
    assert json.loads((into / "bob" / UNIT / "softmax.ipynb").read_text())["metadata"]["marker"] == "bob"
    assert sorted(p.name for p in into.iterdir() if p.is_dir()) == ["alice", "bob"]
    assert "zhangwei" in out and "555" in out and "unknown student" in out
    assert "notes.txt" in out and "late according to Canvas: ['bob']" in out
    lines = {line["lms_user"] or line["files"]: line for line in report(into)}
    assert lines["555"]["student_id"] == "" and "unknown student" in lines["555"]["result"]
    assert lines["102"]["late"] == "yes" and lines["102"]["result"] == "placed"
    assert "left out" in lines["notes.txt"]["result"]
    assert digest(download) == before


def test_moodle_download_by_name_in_folders_or_flat(course, tmp_path, capsys):
    download = make_zip(
        tmp_path / "moodle.zip",
        {
            "Alice Li_3301_assignsubmission_file_/softmax.ipynb": notebook("alice"),
            "Alice Li_3301_assignsubmission_file_/logsumexp.ipynb": notebook("alice lse"),
            "Bob Wang_3302_assignsubmission_file_softmax.ipynb": notebook("bob"),  # without folders
            "Bob Wang_3302_assignsubmission_onlinetext_/onlinetext.html": b"<p>hi</p>",
            "Chen Jing_3303_assignsubmission_file_/softmax.ipynb": notebook("which Chen?"),
        },
    )
    into = tmp_path / "uploads"
    people, stray = lms_import.import_zip(course, download, UNIT, into, course.root / "roster.csv")
    results = {p.name: p for p in people}
    assert results["Alice Li"].student == "alice" and results["Alice Li"].result == "placed"
    assert (into / "alice" / UNIT / "logsumexp.ipynb").is_file()
    assert (into / "bob" / UNIT / "softmax.ipynb").is_file()
    chen = results["Chen Jing"].result  # two roster lines have the name: not guessed, both named
    assert "refused" in chen and "carol" in chen and "chen2" in chen and " / " in chen
    assert not (into / "carol").exists() and not (into / "chen2").exists()
    assert stray == ["Bob Wang_3302_assignsubmission_onlinetext_/onlinetext.html"]


def test_moodle_names_are_compared_as_people_read_them(course, tmp_path):
    """A name is found as people read it (NFKC, case, spaces, zero-width characters: `lms_import.as_read`). One
    that reads as a roster name but is written otherwise (a no-break space, the Kelvin sign, full-width letters,
    a zero-width space: how a classmate poses as Bob or Kim) is refused naming the student it reads as; one that
    reads as two roster names is refused naming both. Before, the first two were placed as Bob and Kim, the next two
    were unknown, and the last named nobody."""
    roster = course.root / "roster.csv"
    roster.write_text(ROSTER + "kim,Kim Li,105\nann,Ann Lee,106\nann2,ＡＮＮ LEE,107\n", encoding="utf-8")
    names = {
        "3301": "Bob\u00a0Wang",
        "3302": "\u212aim Li",
        "3303": "Ａlice Li",
        "3304": "Alice\u200b Li",
        "3305": "Ann Lee",
        "3306": "alice  li",  # written as the roster has it, but for case and spaces: Alice
    }
    download = make_zip(
        tmp_path / "moodle.zip",
        {
            f"{name}_{user}_assignsubmission_file_/softmax.ipynb": notebook(user)
            for user, name in names.items()
        },
    )
    into = tmp_path / "uploads"
    people = {p.user: p for p in lms_import.import_zip(course, download, UNIT, into, roster)[0]}
    for user, student, odd in [
        ("3301", "bob", "U+00A0 NO-BREAK SPACE"),
        ("3302", "kim", "U+212A KELVIN SIGN"),
        ("3303", "alice", "U+FF21 FULLWIDTH LATIN CAPITAL LETTER A"),
        ("3304", "alice", "U+200B ZERO WIDTH SPACE"),
    ]:
        result = people[user].result
        assert "refused" in result and f"{student} (" in result and odd in result and " / " in result, result
    assert "ann (Ann Lee)" in people["3305"].result and "ann2 (ＡＮＮ LEE)" in people["3305"].result
    assert people["3306"].result == "placed" and people["3306"].student == "alice"
    assert sorted(p.name for p in into.iterdir() if p.is_dir()) == ["alice"]
    assert json.loads((into / "alice" / UNIT / "softmax.ipynb").read_text())["metadata"]["marker"] == "3306"
    roster.write_text(ROSTER + "kim,\u212aim Li,105\n", encoding="utf-8")  # the roster as the LMS writes it
    people = {p.user: p for p in lms_import.import_zip(course, download, UNIT, into, roster)[0]}
    assert people["3302"].result == "placed" and people["3302"].student == "kim"


def test_the_layout_is_detected_or_named(course, tmp_path):
    canvas = make_zip(tmp_path / "c.zip", {"lialice_101_9001_softmax.ipynb": notebook("a")})
    assert (
        lms_import.import_zip(course, canvas, UNIT, tmp_path / "a", course.root / "roster.csv")[0][0].student
        == "alice"
    )
    people, stray = lms_import.import_zip(
        course, canvas, UNIT, tmp_path / "b", course.root / "roster.csv", "moodle"
    )
    assert people == [] and stray == ["lialice_101_9001_softmax.ipynb"]
    other = make_zip(tmp_path / "o.zip", {"alice/01_softmax/softmax.ipynb": notebook("a")})
    with pytest.raises(ValueError, match="neither Canvas"):
        lms_import.import_zip(course, other, UNIT, tmp_path / "c", course.root / "roster.csv")


def test_intake_refuses_a_link_or_a_broken_notebook_per_student(course, tmp_path):
    download = tmp_path / "hostile.zip"
    with zipfile.ZipFile(download, "w") as archive:
        archive.writestr("lialice_101_9001_softmax.ipynb", notebook("alice"))
        link = zipfile.ZipInfo("wangbob_102_9002_softmax.ipynb")
        link.create_system, link.external_attr = 3, (stat.S_IFLNK | 0o777) << 16
        archive.writestr(link, "/etc/shadow")
        archive.writestr("chenjing_103_9003_softmax.ipynb", b"{not a notebook")
    into = tmp_path / "uploads"
    people, _ = lms_import.import_zip(course, download, UNIT, into, course.root / "roster.csv")
    results = {p.student: p.result for p in people}
    assert results["alice"] == "placed"
    assert "symbolic link" in results["bob"] and "not a valid notebook" in results["carol"]
    assert sorted(p.name for p in into.iterdir() if p.is_dir()) == ["alice"]


def test_the_only_notebook_of_a_unit_takes_its_name(tmp_path):
    course = Course(tmp_path / "course", FIXTURE_COURSE.wrong)
    (course.source / "02_single").mkdir(parents=True)
    shutil.copy(FIXTURE / "source" / UNIT / "softmax.ipynb", course.source / "02_single")
    (course.root / "roster.csv").write_text(ROSTER, encoding="utf-8")
    download = make_zip(tmp_path / "c.zip", {"lialice_101_9001_my_homework (2).ipynb": notebook("a")})
    people, _ = lms_import.import_zip(
        course, download, "02_single", tmp_path / "in", course.root / "roster.csv"
    )
    assert people[0].result == "placed"
    assert [p.name for p in (tmp_path / "in" / "alice" / "02_single").iterdir()] == ["softmax.ipynb"]


def test_the_command_line(tmp_path, capsys):
    """`python -m course --course-dir DIR import ZIP --unit 01 --into FOLDER`, the roster from the course folder."""
    folder = tmp_path / "semester"
    folder.mkdir()
    (folder / "roster.csv").write_text(ROSTER, encoding="utf-8")
    download = make_zip(tmp_path / "c.zip", {"lialice_101_9001_memory_bottleneck.ipynb": notebook("a")})
    into = tmp_path / "uploads"
    argv = ["--course-dir", str(folder), "import", str(download), "--unit", "01", "--into", str(into)]
    assert cli.main([*argv, "--lms", "canvas"]) == 0
    assert (into / "alice" / "01_memory_bottleneck" / "memory_bottleneck.ipynb").is_file()
    assert "placed in" in capsys.readouterr().out
