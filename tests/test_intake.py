"""What happens to a submission before anything grades it (`course grade` runs as root on the instructor's host):
links, special files, hard links, unsafe names, zip tricks, oversized files and a student's own `timestamp.txt`
are refused or ignored per submission, with the reason; the rest of the class is placed and graded."""

import contextlib
import csv
import datetime as dt
import json
import os
import random
import shutil
import stat
import zipfile
from pathlib import Path

import pytest
from pipeline_fixture import FIXTURE, FIXTURE_COURSE, UNIT

from course import release
from course.grading import grade, intake, semester, submissions
from course.layout import Course

SECRET = "TOP-SECRET-7f3a9c"
MiB = 2**20


def fixture_course(root: Path) -> Course:
    course = Course(root, FIXTURE_COURSE.wrong)
    shutil.copytree(FIXTURE / "source", course.source)
    return course


def notebook_text(marker: str = "") -> str:
    """A valid notebook (the fixture's softmax.ipynb), with `marker` in its metadata."""
    nb = json.loads((FIXTURE / "source" / UNIT / "softmax.ipynb").read_text(encoding="utf-8"))
    nb["metadata"]["marker"] = marker
    return json.dumps(nb)


def hand_in(folder: Path, student: str, unit: str = UNIT) -> Path:
    """`folder/student/unit/` with one valid notebook."""
    path = folder / student / unit
    path.mkdir(parents=True)
    (path / "softmax.ipynb").write_text(notebook_text(), encoding="utf-8")
    return path


def secret_outside(tmp_path: Path) -> Path:
    """A host file the students must never see, and a unit folder of notebooks holding it, outside the class."""
    (tmp_path / "secret.txt").write_text(SECRET, encoding="utf-8")
    outside = tmp_path / "outside" / UNIT
    outside.mkdir(parents=True)
    (outside / "softmax.ipynb").write_text(notebook_text(SECRET), encoding="utf-8")
    return tmp_path / "secret.txt"


def leaked(root: Path) -> list[str]:
    """Every file under `root` (links not followed) whose bytes hold the secret."""
    return [
        str(p)
        for p in root.rglob("*")
        if p.is_file() and not p.is_symlink() and SECRET.encode() in p.read_bytes()
    ]


def report(intakes) -> dict:
    return {(i.student, i.unit): i for i in intakes}


def assert_only_alice_refused(course: Course, intakes, *words: str) -> None:
    """alice's submission is refused (the reason names `words`), bob's is placed."""
    assert (course.submitted / "bob" / UNIT / "softmax.ipynb").is_file()
    assert not (course.submitted / "alice").exists()
    found = report(intakes)
    assert found["bob", UNIT].refused == ""
    reason = found["alice", UNIT].refused
    assert all(word in reason for word in words), reason
    assert " / " in reason  # bilingual


LINKS = {
    "file": ("alice/01_softmax/notes.txt", "secret.txt"),
    "notebook": ("alice/01_softmax/softmax.ipynb", f"outside/{UNIT}/softmax.ipynb"),
    "unit folder": ("alice/01_softmax", f"outside/{UNIT}"),
    "student folder": ("alice", "outside"),
    "nested": ("alice/01_softmax/sub/deeper/notes.txt", "secret.txt"),
    "folder inside": ("alice/01_softmax/data", "outside"),
}


@pytest.mark.parametrize("where", LINKS)
def test_a_link_anywhere_in_an_upload_refuses_that_submission_only(tmp_path, where):
    course = fixture_course(tmp_path / "course")
    secret_outside(tmp_path)
    upload = tmp_path / "class"
    hand_in(upload, "bob")
    link, target = LINKS[where]
    if where not in ("unit folder", "student folder"):
        hand_in(upload, "alice")
    (upload / link).parent.mkdir(parents=True, exist_ok=True)
    (upload / link).unlink(missing_ok=True)
    (upload / link).symlink_to(tmp_path / target)
    intakes = grade.copy_class(course, upload)
    assert not leaked(course.root)
    assert_only_alice_refused(course, intakes, link, "symbolic link")


def special(kind: str, path: Path, secret: Path) -> None:
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "socket":
        os.mknod(path, stat.S_IFSOCK | 0o600)
    elif kind == "device":
        os.mknod(path, stat.S_IFCHR | 0o600, os.makedev(1, 3))  # /dev/null's numbers
    else:
        os.link(secret, path)


@pytest.mark.parametrize("kind", ["fifo", "socket", "device", "hard link"])
def test_special_files_and_hard_links_refuse_that_submission_only(tmp_path, kind):
    if kind == "device" and os.geteuid() != 0:
        pytest.skip("making a device file needs root")
    course = fixture_course(tmp_path / "course")
    secret = secret_outside(tmp_path)
    upload = tmp_path / "class"
    hand_in(upload, "bob")
    special(kind, hand_in(upload, "alice") / "notes.txt", secret)
    intakes = grade.copy_class(course, upload)
    assert not leaked(course.root)
    assert_only_alice_refused(course, intakes, "alice/01_softmax/notes.txt", kind)


def zipped(path: Path, members: dict[str, bytes | str], links: dict[str, str] | None = None) -> Path:
    """A zip of the class inside one top folder: `members` as files, `links` as symlink members."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("class/bob/01_softmax/softmax.ipynb", notebook_text())
        for name, data in members.items():
            zf.writestr(f"class/{name}", data)
        for name, target in (links or {}).items():
            info = zipfile.ZipInfo(f"class/{name}")
            info.create_system = 3  # unix: external_attr holds the mode
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            zf.writestr(info, target)
    return path


def test_a_symlink_member_of_a_zip_refuses_that_submission(tmp_path):
    course = fixture_course(tmp_path / "course")
    secret = secret_outside(tmp_path)
    archive = zipped(
        tmp_path / "class.zip",
        {"alice/01_softmax/softmax.ipynb": notebook_text()},
        {"alice/01_softmax/notes.txt": str(secret)},
    )
    intakes = grade.copy_class(course, archive)
    assert not list(course.root.rglob("notes.txt"))
    assert_only_alice_refused(course, intakes, "alice/01_softmax/notes.txt", "symbolic link")


@pytest.mark.parametrize(
    "name", ["alice/01_softmax/../../../escaped.txt", "alice/01_softmax/sub/../../x.txt"]
)
def test_a_zip_member_climbing_out_refuses_that_submission(tmp_path, name):
    course = fixture_course(tmp_path / "course")
    archive = zipped(tmp_path / "class.zip", {"alice/01_softmax/softmax.ipynb": notebook_text(), name: "x"})
    intakes = grade.copy_class(course, archive)
    assert not [p for p in tmp_path.rglob("*") if p.name in ("escaped.txt", "x.txt")]
    assert_only_alice_refused(course, intakes, "..")


def test_members_outside_any_submission_are_never_unpacked(tmp_path):
    course = fixture_course(tmp_path / "course")
    archive = zipped(tmp_path / "class.zip", {"alice/01_softmax/softmax.ipynb": notebook_text()})
    with zipfile.ZipFile(archive, "a") as zf:
        zf.writestr("/abs/evil.txt", "x")
        zf.writestr("../../evil.txt", "x")
        zf.writestr("class/readme.txt", "x")
    intakes = grade.copy_class(course, archive)
    assert sorted(report(intakes)) == [("alice", UNIT), ("bob", UNIT)]
    assert all(not i.refused for i in intakes)
    assert not [p for p in tmp_path.rglob("*") if p.name in ("evil.txt", "readme.txt")]


def big_notebook(size: int) -> str:
    nb = json.loads(notebook_text())
    nb["cells"].append({"cell_type": "markdown", "metadata": {}, "source": noise(size // 2).hex()})
    return json.dumps(nb)


def noise(size: int) -> bytes:
    """Bytes no zip packs (a zip member of them inflates no more than it is packed)."""
    return random.Random(size).randbytes(size)


# The default limits (course/grading/intake.py): 16 MiB per notebook and per file, 32 MiB and 1000 entries per
# submission.
@pytest.mark.parametrize(
    "members, words",
    [
        ({"alice/01_softmax/softmax.ipynb": big_notebook(17 * MiB)}, ["softmax.ipynb", "16 MiB"]),
        ({"alice/01_softmax/data.bin": noise(17 * MiB)}, ["data.bin", "16 MiB"]),
        ({f"alice/01_softmax/part{i}.bin": noise(12 * MiB) for i in range(3)}, ["32 MiB"]),
        ({f"alice/01_softmax/many/f{i}.txt": "x" for i in range(1001)}, ["1000"]),
    ],
    ids=["notebook", "file", "quota", "entries"],
)
def test_a_zip_over_a_limit_refuses_that_submission(tmp_path, members, words):
    course = fixture_course(tmp_path / "course")
    members.setdefault("alice/01_softmax/softmax.ipynb", notebook_text())
    intakes = grade.copy_class(course, zipped(tmp_path / "class.zip", members))
    assert_only_alice_refused(course, intakes, *words)
    assert not list(course.submitted.rglob(".*incoming"))


def test_a_folder_over_its_quota_is_refused_too(tmp_path):
    course = fixture_course(tmp_path / "course")
    upload = tmp_path / "class"
    hand_in(upload, "bob")
    with (hand_in(upload, "alice") / "big.bin").open("wb") as f:
        f.truncate(17 * MiB)  # sparse: costs no disk here
    assert_only_alice_refused(course, grade.copy_class(course, upload), "big.bin", "16 MiB")


def test_one_students_submissions_of_one_upload_are_bounded_together(tmp_path, monkeypatch):
    """A semester's zip: alice's second unit would take her past what one student may hold in one upload (here
    lowered to 2 MiB); it alone is refused, naming the limit; her first unit and bob's are placed."""
    course = fixture_course(tmp_path / "course")
    shutil.copytree(course.source / UNIT, course.source / "02_again")
    monkeypatch.setattr(intake, "LIMITS", intake.Limits(student_bytes=2 * MiB, disk_reserve=0))
    members = {
        f"{who}/{unit}/softmax.ipynb": notebook_text()
        for who in ("alice", "bob")
        for unit in (UNIT, "02_again")
    }
    members |= {f"alice/{unit}/data.bin": noise(MiB) for unit in (UNIT, "02_again")}
    del members[f"bob/{UNIT}/softmax.ipynb"]  # zipped() hands it in
    found = report(grade.copy_class(course, zipped(tmp_path / "class.zip", members)))
    assert [pair for pair, i in found.items() if i.refused] == [("alice", "02_again")]
    assert "2 MiB" in found["alice", "02_again"].refused and " / " in found["alice", "02_again"].refused
    assert sorted(p.relative_to(course.submitted).as_posix() for p in course.submitted.glob("*/*")) == [
        f"alice/{UNIT}",
        f"bob/{UNIT}",
        "bob/02_again",
    ]


def test_a_zip_bomb_is_refused_for_that_student_alone_before_much_is_written(tmp_path, monkeypatch):
    """A 120 KiB upload that unpacks to 120 MiB (two members of zeros, each within the old 64 MiB per file and
    together within the old 128 MiB per submission: placed whole before) is refused from the bytes it inflates to,
    once a few MiB are written; bob is placed."""
    course = fixture_course(tmp_path / "course")
    bomb = {f"alice/01_softmax/part{i}.bin": bytes(60 * MiB) for i in range(2)}
    bomb["alice/01_softmax/softmax.ipynb"] = notebook_text()
    upload = zipped(tmp_path / "class.zip", bomb)
    assert upload.stat().st_size < 200_000
    written = []

    def copy_capped(contents, target, cap):
        try:
            return copy(contents, target, cap)
        finally:
            written.append(target.stat().st_size)

    copy = intake.copy_capped
    monkeypatch.setattr(intake, "copy_capped", copy_capped)
    monkeypatch.setattr(intake, "LIMITS", intake.Limits(file_bytes=64 * MiB, submission_bytes=128 * MiB))
    assert_only_alice_refused(course, grade.copy_class(course, upload), "part0.bin", "100", "zip")
    assert max(written) < 8 * MiB, written
    assert sum(p.stat().st_size for p in course.root.rglob("*") if p.is_file()) < MiB


@pytest.mark.parametrize(
    "student, file, words",
    [
        ("ev\u202elive", "notes.txt", ["student"]),
        ("new\nline", "notes.txt", ["student"]),
        ("a" * 65, "notes.txt", ["student"]),
        ("alice", "\u202etxt.exe", ["\\u202e"]),
        ("alice", "bad\x01name", ["\\x01"]),
    ],
    ids=["bidi student", "newline student", "long student", "bidi file", "control file"],
)
def test_unsafe_names_are_refused(tmp_path, student, file, words):
    course = fixture_course(tmp_path / "course")
    upload = tmp_path / "class"
    hand_in(upload, "bob")
    (hand_in(upload, student) / file).write_text("x")
    bob, other = sorted(grade.copy_class(course, upload), key=lambda i: i.student != "bob")
    assert sorted(p.name for p in course.submitted.iterdir()) == ["bob"]
    assert (bob.student, bob.refused) == ("bob", "")
    assert all(word in other.refused for word in words) and " / " in other.refused, other.refused


def test_a_notebook_that_is_not_json_refuses_that_submission(tmp_path):
    course = fixture_course(tmp_path / "course")
    upload = tmp_path / "class"
    hand_in(upload, "bob")
    (hand_in(upload, "alice") / "softmax.ipynb").write_text("{not json", encoding="utf-8")
    assert_only_alice_refused(course, grade.copy_class(course, upload), "softmax.ipynb", "notebook")


def test_a_timestamp_in_an_upload_never_sets_the_submission_time(tmp_path):
    """A student's own timestamp.txt is left out and flagged; the instructor's time (the timestamps CSV) is
    written in its place, where nbgrader and the late penalty read it."""
    course = fixture_course(tmp_path / "course")
    upload = tmp_path / "class"
    for student in ("alice", "bob"):
        (hand_in(upload, student) / "timestamp.txt").write_text("2020-01-01 00:00:00.000000 UTC")
    received = dt.datetime(2026, 3, 7, 8, 0, tzinfo=dt.UTC)
    intakes = report(grade.copy_class(course, upload, times={("bob", UNIT): received}))
    assert semester.submission_time(course, "alice", UNIT, {}) is None
    assert semester.submission_time(course, "bob", UNIT, {}) == received
    assert all("timestamp.txt" in " ".join(i.notes) for i in intakes.values())
    assert not any(i.refused for i in intakes.values())


def test_collects_timestamp_stays_when_submitted_is_graded_in_place(tmp_path):
    course = fixture_course(tmp_path / "course")
    stamp = hand_in(course.submitted, "alice") / "timestamp.txt"
    stamp.write_text("2026-03-06 15:04:05.123456 UTC")
    (intake,) = grade.copy_class(course, course.submitted)
    assert (intake.refused, intake.notes) == ("", [])
    assert stamp.read_text() == "2026-03-06 15:04:05.123456 UTC"


def world_writable(root: Path) -> list[str]:
    return [str(p) for p in [root, *root.rglob("*")] if p.lstat().st_mode & stat.S_IWOTH]


@contextlib.contextmanager
def open_umask():
    """umask 0: a folder or file made without an explicit mode is world-writable."""
    old = os.umask(0)
    try:
        yield
    finally:
        os.umask(old)


def test_nothing_placed_is_world_writable(tmp_path):
    course = fixture_course(tmp_path / "course")
    upload = tmp_path / "class"
    for student in ("alice", "bob"):
        folder = hand_in(upload, student)
        (folder / "sub").mkdir()
        (folder / "sub" / "notes.txt").write_text("x")
    for path in upload.rglob("*"):
        path.chmod(0o777)
    with open_umask():
        grade.copy_class(course, upload)
    assert not world_writable(course.submitted)


def test_one_failing_pair_and_an_unreadable_time_stop_nobody(tmp_path, monkeypatch):
    """grade_pair raising for one student, and a timestamp.txt nobody can parse for another: both are reported
    in grades.csv, with the reason, beside the rest of the class."""
    course = fixture_course(tmp_path / "course")
    for student in ("alice", "bob", "carol"):
        hand_in(course.submitted, student)
    (course.submitted / "carol" / UNIT / "timestamp.txt").write_text("not a time")

    def grade_pair(course, student, unit, *_):
        if student == "bob":
            raise OSError("disk on fire")
        return grade.Row(student, unit, 2.0, 2.0)

    monkeypatch.setattr(grade, "grade_pair", grade_pair)
    monkeypatch.setattr(grade, "register_units", lambda course, units, students=(): None)
    monkeypatch.setattr(grade, "merge_gradebooks", lambda *args: None)
    rows = {row.student: row for row in grade.grade(course, course.submitted, jobs=2)}
    assert (rows["alice"].status, rows["alice"].score) == ("graded", 2.0)
    assert rows["bob"].status == "error" and "disk on fire" in " ".join(rows["bob"].flags)
    with (course.root / "grades.csv").open(newline="", encoding="utf-8") as f:
        table = {r["student_id"]: r for r in csv.DictReader(f)}
    assert sorted(table) == ["alice", "bob", "carol"]
    assert table["carol"]["status"] == "graded" and table["carol"]["submitted_at"] == ""
    assert "timestamp.txt" in table["carol"]["flag_reasons"]


def test_a_class_with_one_hostile_upload_is_graded_and_the_host_file_stays_out(tmp_path):
    """One real grading run (the fixture course, two notebooks of pure Python): alice's upload links to a host
    file and is refused with the reason; bob is graded in full, the file he handed in beside his notebooks kept;
    carol's own timestamp.txt is ignored and flagged. The secret appears nowhere in the course (submitted/, autograded/, feedback/), and nothing the run
    made is world-writable."""
    course = fixture_course(tmp_path / "course")
    release.build(FIXTURE_COURSE, [UNIT], tmp_path / "release")
    secret = secret_outside(tmp_path)
    upload = tmp_path / "class"
    for student in ("alice", "bob", "carol"):
        submissions.write_student(
            tmp_path / "release" / UNIT, course.source / UNIT, upload / student / UNIT, {}
        )
    (upload / "alice" / UNIT / "notes.txt").symlink_to(secret)
    (upload / "bob" / UNIT / "data.bin").write_bytes(bytes(MiB))
    (upload / "carol" / UNIT / "timestamp.txt").write_text("2020-01-01 00:00:00.000000 UTC")
    with open_umask():
        rows = {row.student: row for row in grade.grade(course, upload, timeout=300)}
    full = sum(grade.max_points(p) for p in (course.source / UNIT).glob("*.ipynb"))
    assert (rows["bob"].status, rows["bob"].score) == ("graded", full)
    assert (rows["carol"].status, rows["carol"].score) == ("graded", full)
    assert rows["alice"].status == "not graded" and rows["alice"].score == 0
    assert not leaked(course.root)
    assert (course.feedback / "bob" / UNIT / "softmax.html").is_file()
    assert (course.root / "submitted" / "bob" / UNIT / "data.bin").is_file()
    with (course.root / "grades.csv").open(newline="", encoding="utf-8") as f:
        table = {r["student_id"]: r for r in csv.DictReader(f)}
    assert "symbolic link" in table["alice"]["flag_reasons"] and "notes.txt" in table["alice"]["flag_reasons"]
    assert table["carol"]["submitted_at"] == "" and "timestamp.txt" in table["carol"]["flag_reasons"]
    assert not [p for top in course.root.iterdir() if top.name != "source" for p in world_writable(top)]


def test_a_bad_timestamps_csv_stops_the_run_before_anything_is_placed(tmp_path):
    course = fixture_course(tmp_path / "course")
    upload = tmp_path / "class"
    hand_in(upload, "alice")
    times = tmp_path / "times.csv"
    times.write_text(f"student_id,unit,timestamp\nalice,{UNIT},not a time\n")
    with pytest.raises(ValueError, match="line 2"):
        grade.grade(course, upload, selection=grade.Selection(timestamps=times))
    assert not course.submitted.exists()
