"""`course import`: an LMS's bulk download (Canvas's "Download Submissions", Moodle's "Download all submissions"),
built here by hand in each layout, placed as `<student>/<unit>/<notebook>.ipynb` through the roster; students the
roster does not know and files in neither layout are reported, never dropped; the download is never changed."""

import csv
import datetime as dt
import hashlib
import json
import re
import shutil
import stat
import zipfile
from pathlib import Path

import pytest
from pipeline_fixture import FIXTURE, FIXTURE_COURSE, UNIT

from course import cli, demo, release
from course.grading import lms_import, semester
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


def test_canvas_late_files_in_any_case_and_resubmissions_keep_the_latest(course, tmp_path, capsys):
    """Canvas names a late file `<name>_LATE_<user id>_<submission id>_<file>` (upper case) and numbers a file
    handed in again `-1`, `-2` before its extension: `import` matched `_late` only and left every late student
    out (exit 1), and kept no rule for which of several numbered files counts. Names as a Canvas download of
    2026 writes them; the students are made up."""
    download = make_zip(
        tmp_path / "submissions.zip",
        {
            "lialice_LATE_101_48213377_softmax.ipynb": notebook("alice late"),
            "lialice_LATE_101_48213377_logsumexp.ipynb": notebook("alice lse"),
            "wangbob_102_48213378_softmax.ipynb": notebook("bob first"),
            "wangbob_102_48215120_softmax-1.ipynb": notebook("bob second"),
            "wangbob_102_48215999_softmax-2.ipynb": notebook("bob third"),
            "wangbob_102_48215999_logsumexp-1.ipynb": notebook("bob lse"),
            "chenjing_Late_103_48216001_softmax.ipynb": notebook("carol late"),
            "chenjing_late_104_48216002_softmax.ipynb": notebook("chen2 late"),
        },
    )
    into = tmp_path / "uploads"
    assert lms_import.main(course, str(download), "01", str(into), None) == 0
    out = capsys.readouterr().out

    def marker(student: str, name: str = "softmax.ipynb") -> str:
        return json.loads((into / student / UNIT / name).read_text())["metadata"]["marker"]

    assert (marker("alice"), marker("alice", "logsumexp.ipynb")) == ("alice late", "alice lse")
    assert (marker("bob"), marker("bob", "logsumexp.ipynb")) == ("bob third", "bob lse")
    assert (marker("carol"), marker("chen2")) == ("carol late", "chen2 late")
    assert sorted(p.name for p in (into / "bob" / UNIT).iterdir()) == ["logsumexp.ipynb", "softmax.ipynb"]
    assert "late according to Canvas: ['alice', 'carol', 'chen2']" in out
    lines = {line["lms_user"]: line for line in report(into)}
    assert [lines[u]["late"] for u in ("101", "102", "103", "104")] == ["yes", "", "yes", "yes"]
    assert lines["102"]["result"].startswith("placed") and "softmax-1.ipynb" in lines["102"]["result"]
    assert "softmax-2.ipynb" in lines["102"]["result"]  # which one was kept, and which were left out


LMS_RECORDS = Path(__file__).resolve().parent / "fixtures" / "lms"  # copies of the formats, made-up students


def import_with_times(course: Course, tmp_path: Path, members: dict[str, bytes], records: str) -> Path:
    """`course import` of a download of `members` with the LMS's `records` of times (exit 0); the class folder."""
    download = make_zip(tmp_path / "download.zip", members)
    into = tmp_path / "uploads"
    assert lms_import.main(course, str(download), "01", str(into), None, "auto", records) == 0
    return into


def timestamps(into: Path) -> dict[str, str]:
    with (into / "timestamps.csv").open(newline="", encoding="utf-8") as f:
        return {line["student_id"]: line["timestamp"] for line in csv.DictReader(f) if line["unit"] == UNIT}


def test_submission_times_come_from_canvas_submissions_json(course, tmp_path, capsys):
    """Canvas's REST API submissions (`submitted_at` in UTC, null when unsubmitted): the placed students' times
    go to the class folder's timestamps.csv, which `course grade --timestamps` reads; a placed student the
    records lack (a JSON of one page of a paginated answer) is named."""
    members = {
        "lialice_LATE_101_48213377_softmax.ipynb": notebook("alice"),
        "wangbob_102_48213378_softmax-2.ipynb": notebook("bob"),
        "chenjing_104_48213390_softmax.ipynb": notebook("chen2"),
    }
    into = import_with_times(course, tmp_path, members, str(LMS_RECORDS / "canvas_submissions.json"))
    assert timestamps(into) == {"alice": "2026-03-07T04:12:31+00:00", "bob": "2026-03-06T10:00:05+00:00"}
    out = capsys.readouterr().out
    assert "timestamps.csv" in out and "without a time in its records: ['chen2']" in out
    lines = {line["lms_user"]: line for line in report(into)}
    assert lines["101"]["submitted_at"] == "2026-03-07T04:12:31+00:00" and lines["104"]["submitted_at"] == ""
    read = semester.read_timestamps(into / "timestamps.csv", course)  # as `course grade --timestamps` does
    assert read[("alice", UNIT)] == dt.datetime(2026, 3, 7, 4, 12, 31, tzinfo=dt.UTC)


def test_submission_times_come_from_moodles_grading_worksheet_in_the_semesters_zone(course, tmp_path):
    """Moodle's grading worksheet ("Last modified (submission)", written without an offset in the downloader's
    zone, "-" for none; a UTF-8 BOM first) read in semester.toml's time zone; its email addresses say who is who."""
    (course.root / "semester.toml").write_text('timezone = "Asia/Shanghai"\n')
    (course.root / "roster.csv").write_text(
        "student_id,name,email\nalice,Alice Li,alice@uni.example.edu\nbob,Bob Wang,bob@uni.example.edu\n",
        encoding="utf-8",
    )
    members = {
        "Alice Li_3301_assignsubmission_file_/softmax.ipynb": notebook("alice"),
        "Bob Wang_3302_assignsubmission_file_/softmax.ipynb": notebook("bob"),
    }
    worksheet = str(LMS_RECORDS / "moodle_worksheet.csv")
    into = import_with_times(course, tmp_path, members, worksheet)
    assert timestamps(into) == {"alice": "2026-03-07T03:03:00+08:00", "bob": "2026-03-06T21:15:00+08:00"}
    (into / "timestamps.csv").write_text(
        "student_id,unit,timestamp\nalice,02_other,2026-03-01T00:00:00+00:00\nalice,01_softmax,x\n"
    )
    import_with_times(course, tmp_path, members, worksheet)
    with (into / "timestamps.csv").open(newline="", encoding="utf-8") as f:
        lines = [(line["student_id"], line["unit"]) for line in csv.DictReader(f)]
    assert lines == [
        ("alice", "02_other"),
        ("alice", UNIT),
        ("bob", UNIT),
    ]  # this unit's replaced, others kept


@pytest.mark.parametrize(
    ("name", "text", "said"),
    [
        ("times.json", "{not json", "not JSON"),
        ("times.json", '{"submissions": []}', "not a list of submissions"),
        ("times.json", '[{"user_id": 101, "submitted_at": "next friday"}]', "submission number 1"),
        ("times.json", '[{"anonymous_id": "acJ4Q", "submitted_at": null}]', "anonymous grading hides"),
        ("times.csv", "Identifier,Status\n", "Last modified (submission)"),
        ("times.csv", 'Identifier,"Last modified (submission)"\n"Participant 3301",soon\n', "line 2"),
    ],
    ids=[
        "canvas-not-json",
        "canvas-not-a-list",
        "canvas-bad-time",
        "canvas-anonymous",
        "moodle-header",
        "moodle-bad-time",
    ],
)
def test_a_malformed_lms_record_is_refused_and_nothing_is_placed(course, tmp_path, name, text, said):
    layout = "canvas" if name.endswith(".json") else "moodle"
    member = (
        "lialice_101_9001_softmax.ipynb"
        if layout == "canvas"
        else "Alice Li_3301_assignsubmission_file_x.ipynb"
    )
    download = make_zip(tmp_path / "d.zip", {member: notebook("alice")})
    (tmp_path / name).write_text(text, encoding="utf-8")
    records = (tmp_path / name, dt.UTC)
    into = tmp_path / "uploads"
    with pytest.raises(semester.SettingError, match=re.escape(said)) as caught:
        lms_import.import_zip(course, download, UNIT, into, course.root / "roster.csv", records=records)
    assert str(tmp_path / name) in str(caught.value) and "改法" in str(caught.value)
    assert not into.exists()


def test_a_moodle_student_renamed_as_a_classmate_is_not_placed_as_them(course, tmp_path):
    """Mallory (participant 3399, mallory@…) renames herself "Alice Li" in Moodle before Alice submits: the grading
    worksheet, given with the download, says whose participant 3399 is; her notebook must not become Alice's (before:
    placed as Alice's, found by the name alone). It is hers, found by the worksheet's email address."""
    (course.root / "roster.csv").write_text(
        "student_id,name,email\nalice,Alice Li,alice@uni.example.edu\nmallory,Mallory Ng,mallory@uni.example.edu\n",
        encoding="utf-8",
    )
    worksheet = tmp_path / "worksheet.csv"
    worksheet.write_text(
        'Identifier,"Full name","Email address","Last modified (submission)"\n'
        '"Participant 3399","Alice Li",mallory@uni.example.edu,"Friday, 6 March 2026, 9:15 PM"\n',
        encoding="utf-8",
    )
    members = {"Alice Li_3399_assignsubmission_file_/softmax.ipynb": notebook("mallory")}
    into = import_with_times(course, tmp_path, members, str(worksheet))
    assert not (into / "alice").exists()
    assert (
        json.loads((into / "mallory" / UNIT / "softmax.ipynb").read_text())["metadata"]["marker"] == "mallory"
    )


def test_a_canvas_group_submission_is_placed_for_every_member(course, tmp_path):
    """A Canvas group assignment's download holds one submission per group, under the member who handed it in;
    the submissions JSON (`include[]=group`, as `course lms pull` fetches it) names every member's group: each is
    given the group's notebooks and time, so each is graded and exported. Before, only the submitter was placed."""
    members = {
        "lialice_LATE_101_48213377_softmax.ipynb": notebook("team A"),
        "chenjing_104_48213380_softmax.ipynb": notebook("team B"),
    }
    into = import_with_times(course, tmp_path, members, str(LMS_RECORDS / "canvas_group_submissions.json"))
    for student, team in [("alice", "team A"), ("bob", "team A"), ("chen2", "team B"), ("carol", "team B")]:
        assert json.loads((into / student / UNIT / "softmax.ipynb").read_text())["metadata"]["marker"] == team
    lines = {line["lms_user"]: line for line in report(into)}
    result = lines["102"]["result"]
    assert (
        result.startswith("placed; 小组 Team A") and "group Team A (5101), handed in by 101 (alice)" in result
    )
    assert lines["102"]["late"] == "yes" and "105" not in lines  # 105 is in no group and handed nothing in
    assert timestamps(into)["bob"] == "2026-03-07T04:12:31+00:00" == timestamps(into)["alice"]


def test_a_moodle_group_submission_is_placed_for_every_member(course, tmp_path):
    """Moodle names a group's folder `<group>-<Full Name>_<participant id>_…`; the worksheet's `Group` column
    names the members: the group's name is dropped before the roster is read, and Bob gets Alice's notebook (each
    found by the worksheet's email address)."""
    (course.root / "roster.csv").write_text(
        "student_id,name,email\nalice,Alice Li,alice@uni.example.edu\nbob,Bob Wang,bob@uni.example.edu\n"
        "carol,Chen Jing,chen.jing@uni.example.edu\n",
        encoding="utf-8",
    )
    members = {"Team A-Alice Li_3301_assignsubmission_file_/softmax.ipynb": notebook("team A")}
    into = import_with_times(course, tmp_path, members, str(LMS_RECORDS / "moodle_group_worksheet.csv"))
    for student in ("alice", "bob"):
        assert (
            json.loads((into / student / UNIT / "softmax.ipynb").read_text())["metadata"]["marker"]
            == "team A"
        )
    assert sorted(p.name for p in into.iterdir() if p.is_dir()) == ["alice", "bob"]


def test_a_group_member_is_not_placed_when_the_groups_submission_is_refused(course, tmp_path):
    download = make_zip(tmp_path / "d.zip", {"chenjing_104_48213380_softmax.ipynb": b"{not a notebook"})
    into = tmp_path / "uploads"
    records = (LMS_RECORDS / "canvas_group_submissions.json", dt.UTC)
    people = {
        p.user: p
        for p in lms_import.import_zip(
            course, download, UNIT, into, course.root / "roster.csv", records=records
        )[0]
    }
    assert "not a valid notebook" in people["104"].result
    assert "not placed: the group's submitter 104 was not placed" in people["103"].result
    assert not (into / "carol").exists() and not (into / "chen2").exists()


@pytest.mark.heavy  # two pairs graded (~1 min on CI's 2 cores); the placing alone is tested above, in seconds
def test_a_canvas_group_is_graded_and_exported_for_every_member(tmp_path):
    """Issue 46 item 1: a group's one submission, placed for both members, is graded for each and exported for
    each, in Canvas's gradebook CSV with the same score."""
    from course.grading import grade, lms

    course = Course(tmp_path / "course", FIXTURE_COURSE.wrong)
    shutil.copytree(FIXTURE / "source", course.source)
    (course.root / "roster.csv").write_text(ROSTER, encoding="utf-8")
    release.build(FIXTURE_COURSE, [UNIT], tmp_path / "release")
    roster = tmp_path / "class.toml"
    roster.write_text('[[student]]\nid = "team"\nmistakes = 1\n', encoding="utf-8")
    demo.build_class(FIXTURE_COURSE, tmp_path / "release", roster, tmp_path / "class", [UNIT])
    handed_in = {
        f"lialice_LATE_101_48213377_{path.name}": path.read_bytes()
        for path in (tmp_path / "class" / "team" / UNIT).glob("*.ipynb")
    }
    into = import_with_times(course, tmp_path, handed_in, str(LMS_RECORDS / "canvas_group_submissions.json"))
    selection = grade.Selection(timestamps=into / "timestamps.csv")
    rows = {row.student: row for row in grade.grade(course, into, timeout=300, selection=selection)}
    assert (
        sorted(rows) == ["alice", "bob"]
        and 0 < rows["alice"].score == rows["bob"].score < rows["bob"].max_score
    )
    lms.export(course, course.root / "roster.csv", tmp_path / "canvas.csv", None, "idnumber")
    with (tmp_path / "canvas.csv").open(newline="", encoding="utf-8") as f:
        scores = {line["Student"]: line[UNIT] for line in csv.DictReader(f)}
    assert scores["Alice Li"] == scores["Bob Wang"] != "" and scores["Chen Jing"] == ""


def test_moodle_identities_in_the_worksheet_must_name_one_roster_student(course, tmp_path, capsys):
    """The worksheet's ID number and email address are matched with the roster's `idnumber` and `email` (case aside):
    a participant the worksheet lacks, or whose fields name nobody or two students, is refused, never found by name;
    a worksheet without either field is refused before anything is placed."""
    (course.root / "roster.csv").write_text(
        "student_id,name,email,idnumber\n"
        "alice,Alice Li,alice@uni.example.edu,S1\nbob,Bob Wang,bob@uni.example.edu,S2\n",
        encoding="utf-8",
    )
    header = 'Identifier,"Full name","ID number","Email address","Last modified (submission)"\n'
    worksheet = tmp_path / "worksheet.csv"
    worksheet.write_text(
        header + '"Participant 3301","Alice Li",S1,ALICE@uni.example.edu,-\n'
        '"Participant 3302","Bob Wang",-,nobody@uni.example.edu,-\n'
        '"Participant 3303","Carl",S2,alice@uni.example.edu,-\n',
        encoding="utf-8",
    )
    members = {
        f"{name}_{user}_assignsubmission_file_/softmax.ipynb": notebook(user)
        for user, name in [("3301", "Bob Wang"), ("3302", "Bob Wang"), ("3303", "Carl"), ("3304", "Alice Li")]
    }
    download = make_zip(tmp_path / "download.zip", members)
    into = tmp_path / "uploads"
    assert lms_import.main(course, str(download), "01", str(into), None, "auto", str(worksheet)) == 1
    people = {line["lms_user"]: line for line in report(into)}
    assert people["3301"]["student_id"] == "alice" and people["3301"]["result"] == "placed"
    assert (
        "no roster line" in people["3302"]["result"] and "nobody@uni.example.edu" in people["3302"]["result"]
    )
    assert "refused" in people["3303"]["result"] and "alice, bob" in people["3303"]["result"]
    assert "worksheet has no such participant" in people["3304"]["result"]
    assert sorted(p.name for p in into.iterdir() if p.is_dir()) == ["alice"]
    worksheet.write_text(
        'Identifier,"Full name","Last modified (submission)"\n"Participant 3301","Bob Wang",-\n'
    )
    shutil.rmtree(into)
    with pytest.raises(semester.SettingError, match="Show user identity"):
        lms_import.main(course, str(download), "01", str(into), None, "auto", str(worksheet))
    assert not into.exists()
    lms_import.main(course, str(download), "01", str(into), None, "auto", None)
    assert "found by their full name, which a student may edit" in capsys.readouterr().out


EMAIL_ROSTER = (
    "student_id,name,email\nalice,Alice Li,alice@uni.example.edu\nbob,Bob Wang,bob@uni.example.edu\n"
    "carol,Chen Jing,chen.jing@uni.example.edu\nzhang,Zhang Wei,zhang.wei@uni.example.edu\n"
)


def marker_of(into: Path, student: str) -> str:
    return json.loads((into / student / UNIT / "softmax.ipynb").read_text())["metadata"]["marker"]


@pytest.mark.parametrize(
    "names", [("Alice Li", "Bob Wang"), ("Participant", "Participant")], ids=["by-name", "blind-marking"]
)
def test_a_moodle_4_download_names_folders_without_the_last_underscore(course, tmp_path, names):
    """Moodle 4.1+ (mod/assign/classes/downloader.php) names a student's folder `<Full Name>_<id>_assignsubmission_
    file/`, without the `_` before the slash of earlier versions (before, every member was left out as in neither
    layout); under blind marking, `Participant_<id>_…`, the id the worksheet's: a worksheet downloaded by an account
    that may see identities (or after they are revealed) says who each is."""
    (course.root / "roster.csv").write_text(EMAIL_ROSTER, encoding="utf-8")
    members = {
        f"{names[0]}_3301_assignsubmission_file/softmax.ipynb": notebook("alice"),
        f"{names[1]}_3302_assignsubmission_file_softmax.ipynb": notebook("bob"),  # unfolded, as before 4.1
    }
    into = import_with_times(course, tmp_path, members, str(LMS_RECORDS / "moodle_worksheet.csv"))
    assert (marker_of(into, "alice"), marker_of(into, "bob")) == ("alice", "bob")


def test_a_moodle_4_team_folder_is_placed_for_every_member_of_its_group(course, tmp_path):
    """Moodle 4.1+ names a team submission's folder by its group, `<group name>_<group id>` (the name's `_` a
    space), and `Default group` (no id) for those in no group (downloader.php, get_student_prefix): the worksheet's
    `Group` column names the members, each given the group's notebooks and their own time. Before: "Team A" was
    looked up as a student's name, the default group's folder left out."""
    (course.root / "roster.csv").write_text(EMAIL_ROSTER, encoding="utf-8")
    members = {
        "Team A_5101_assignsubmission_file/softmax.ipynb": notebook("team A"),
        "Team B_5102_assignsubmission_file_softmax.ipynb": notebook("team B"),  # unfolded; group Team_B
        "Default group_assignsubmission_file/softmax.ipynb": notebook("no group"),
    }
    into = import_with_times(course, tmp_path, members, str(LMS_RECORDS / "moodle4_team_worksheet.csv"))
    placed = {student: marker_of(into, student) for student in ("alice", "bob", "carol", "zhang")}
    assert placed == {"alice": "team A", "bob": "team A", "carol": "team B", "zhang": "no group"}
    lines = {line["lms_user"]: line for line in report(into)}
    assert (
        lines["3302"]["student_id"] == "bob"
        and "group Team A, Moodle's folder Team A_5101" in lines["3302"]["result"]
    )
    assert timestamps(into)["carol"] == "2026-03-07T03:03:00+00:00" != timestamps(into)["alice"]


def test_a_moodle_4_team_folder_of_an_unknown_or_ambiguous_group_is_refused(course, tmp_path, capsys):
    """A group folder the worksheet's `Group` column does not name, or that reads as two of its groups (`Lab_1` and
    `Lab 1` both give the folder `Lab 1`), is refused, none guessed; without the worksheet, a folder without a
    participant id (`Default group`) cannot be placed and says to give it."""
    (course.root / "roster.csv").write_text(EMAIL_ROSTER, encoding="utf-8")
    worksheet = tmp_path / "worksheet.csv"
    worksheet.write_text(
        'Identifier,"Email address",Group,"Last modified (submission)"\n'
        '"Participant 3301",alice@uni.example.edu,Lab_1,-\n"Participant 3302",bob@uni.example.edu,"Lab 1",-\n',
        encoding="utf-8",
    )
    members = {
        "Lab 1_5201_assignsubmission_file/softmax.ipynb": notebook("lab 1"),
        "Team Z_5299_assignsubmission_file/softmax.ipynb": notebook("team Z"),
    }
    download = make_zip(tmp_path / "download.zip", members)
    into = tmp_path / "uploads"
    assert lms_import.main(course, str(download), "01", str(into), None, "auto", str(worksheet)) == 1
    lines = {line["lms_name"]: line["result"] for line in report(into)}
    assert "reads as 2 groups of the grading worksheet: Lab 1, Lab_1" in lines["Lab 1"]
    assert "unknown group" in lines["Team Z"] and not [p for p in into.iterdir() if p.is_dir()]
    shutil.rmtree(into)
    download = make_zip(
        tmp_path / "default.zip", {"Default group_assignsubmission_file/x.ipynb": notebook("?")}
    )
    assert lms_import.main(course, str(download), "01", str(into), None) == 1
    assert "Default group (): " in capsys.readouterr().out
    assert "give the grading worksheet (--times)" in report(into)[0]["result"]


def test_moodle_blind_marking_without_identities_is_refused_saying_what_to_do(course, tmp_path):
    """Without identities (no worksheet, or the one Moodle gives an account that may not see them: `Identifier`
    alone) a blind-marked participant cannot be placed: refused, saying how to get a worksheet that tells (before:
    "unknown student: no roster line has this name")."""
    (course.root / "roster.csv").write_text(EMAIL_ROSTER, encoding="utf-8")
    download = make_zip(
        tmp_path / "d.zip", {"Participant_3301_assignsubmission_file/softmax.ipynb": notebook("alice")}
    )
    into = tmp_path / "uploads"
    assert lms_import.main(course, str(download), "01", str(into), None) == 1
    (line,) = report(into)
    assert (
        "blind marking" in line["result"] and "viewblinddetails" in line["result"] and not line["student_id"]
    )
    worksheet = tmp_path / "blind.csv"
    worksheet.write_text('Identifier,Status,"Last modified (submission)"\n"Participant 3301",Submitted,-\n')
    shutil.rmtree(into)
    with pytest.raises(semester.SettingError, match="blind marking.*viewblinddetails"):
        lms_import.main(course, str(download), "01", str(into), None, "auto", str(worksheet))
    assert not into.exists()
