"""The course gradebook on PostgreSQL (issue 35): `--db postgresql://…` grades the class into a real server the test
starts (Debian's `postgresql`, initdb/pg_ctl in a temporary folder) with the scores SQLite gives; merges from two
graders at once both land; a grading run killed inside a merge's transaction loses nothing and the next run
completes; a wrong URL or password is a clear bilingual error and grades nothing."""

import csv
import glob
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbgrader.api
import pytest
from nbgrader.api import Gradebook
from pipeline_fixture import FIXTURE, FIXTURE_COURSE, UNIT

from course import ROOT, cli, demo, layout, release
from course.grading import feedback, feedback_inputs, grade, gradebook_db, lms, rubric, worker
from course.layout import Course

PASSWORD = "s3cret-pw"
COURSE_ID = "flash-attention-first-principles"


def postgres_bin() -> Path | None:
    """The folder of Debian's PostgreSQL programs (initdb, pg_ctl), if installed."""
    found = shutil.which("initdb") or next(iter(sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))), None)
    return Path(found).resolve().parent if found else None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server():
    """A PostgreSQL server of its own (superuser `grader`, password auth on 127.0.0.1), stopped at the end; as root
    it runs as `nobody` (initdb refuses root)."""
    programs = postgres_bin()
    if programs is None:
        pytest.skip("PostgreSQL is not installed (bash course.sh test installs Debian's postgresql)")
    pytest.importorskip("psycopg", reason="psycopg is not installed (pip install -e '.[cluster]')")
    folder = Path(tempfile.mkdtemp(prefix="course-pg-"))
    as_user = ["runuser", "-u", "nobody", "--"] if os.geteuid() == 0 else []
    if as_user:
        shutil.chown(folder, "nobody")
    (folder / "pw").write_text(PASSWORD, encoding="utf-8")
    port, data = free_port(), folder / "data"

    def run(*command: str) -> None:
        subprocess.run([*as_user, *command], cwd=folder, check=True, capture_output=True, timeout=120)

    run(
        str(programs / "initdb"),
        "-D",
        str(data),
        "-U",
        "grader",
        f"--pwfile={folder / 'pw'}",
        "--auth=scram-sha-256",
    )
    options = f"-p {port} -k {folder} -c listen_addresses=127.0.0.1"
    run(str(programs / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(folder / "log"), "-w", "start")
    try:
        yield f"postgresql://grader:{PASSWORD}@127.0.0.1:{port}"
    finally:
        run(str(programs / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(folder, ignore_errors=True)


def new_database(server: str, name: str) -> str:
    """A new empty database on the test's server; its URL."""
    import psycopg

    with psycopg.connect(f"{server}/postgres", autocommit=True) as db:
        db.execute(f'CREATE DATABASE "{name}"')
    return f"{server}/{name}"


def snapshot(url: str) -> dict:
    """Every grade and notebook flag in a gradebook, read through nbgrader's API."""
    entries = {}
    with Gradebook(gradebook_db.sqlalchemy_url(url), COURSE_ID) as gb:
        for assignment in gb.assignments:
            for submission in assignment.submissions:
                for nb in submission.notebooks:
                    key = (submission.student.id, assignment.name, nb.name)
                    entries[(*key, "flagged")] = nb.flagged
                    for g in nb.grades:
                        entries[(*key, g.name)] = (g.auto_score, g.manual_score, g.needs_manual_grade)
    return entries


def outcome(rows):
    return [(r.student, r.unit, r.score, r.max_score, r.status) for r in rows]


def course_copy(root: Path, db: str = "") -> Course:
    course = Course(root, FIXTURE_COURSE.wrong, db)
    shutil.copytree(FIXTURE / "source", course.source)
    return course


@pytest.fixture(scope="module")
def one_student(tmp_path_factory):
    """A class of one: bob, two mistakes in the fixture's one unit (grading costs ~10-30 s a pair here)."""
    tmp = tmp_path_factory.mktemp("pgclass")
    release.build(FIXTURE_COURSE, [UNIT], tmp / "release")
    roster = tmp / "class.toml"
    roster.write_text('[[student]]\nid = "bob"\nmistakes = 2\n', encoding="utf-8")
    demo.build_class(FIXTURE_COURSE, tmp / "release", roster, tmp / "class", [UNIT])
    return tmp / "class"


@pytest.fixture(scope="module")
def on_sqlite(tmp_path_factory, one_student):
    """The class graded into the course's SQLite gradebook, as without --db."""
    course = course_copy(tmp_path_factory.mktemp("sqlite") / "course")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("FLASH_COURSE_CELL_TIMEOUT", "10")
        rows = grade.grade(course, one_student, timeout=300, jobs=1)
    return course, rows


def registered_gradebook(url: str, units: list[str]) -> None:
    """A course gradebook knowing `units` (one notebook, two graded cells each) and no student."""
    with Gradebook(gradebook_db.sqlalchemy_url(url), COURSE_ID) as gb:
        for unit in units:
            gb.add_assignment(unit)
            gb.add_notebook("nb", unit)
            for cell in ("c1", "c2"):
                gb.add_grade_cell(cell, "nb", unit, max_score=2, cell_type="code")


def private_gradebook(url: str, folder: Path, unit: str, student: str, scores: tuple[float, float]) -> Path:
    """A grading job's private copy of the course's gradebook with `student`'s `unit` graded."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "gradebook.db"
    gradebook_db.snapshot(gradebook_db.sqlalchemy_url(url), path)
    with Gradebook(f"sqlite:///{path}", COURSE_ID) as gb:
        gb.add_student(student)
        gb.add_submission(unit, student)
        for cell, score in zip(("c1", "c2"), scores, strict=True):
            gb.find_grade(cell, "nb", unit, student).auto_score = score
        gb.db.commit()
    return path


def start_merge(url: str, private: Path, unit: str, student: str, pause: Path | None = None):
    """One grader's merge job (`python -m course.grading.worker`), optionally paused inside its transaction."""
    request = {
        "action": "merge",
        "root": str(private.parent),
        "db_url": gradebook_db.sqlalchemy_url(url),
        "merges": [{"gradebook": str(private), "unit": unit, "student": student}],
    }
    (private.parent / "request.json").write_text(json.dumps(request), encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop(gradebook_db.TEST_PAUSE, None)
    if pause:
        env[gradebook_db.TEST_PAUSE] = str(pause)
    command = [sys.executable, "-m", "course.grading.worker", "request.json", "result.json"]
    return subprocess.Popen(command, cwd=private.parent, env=env, start_new_session=True)


def wait_for(condition, what: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def blocked_backends(url: str) -> int:
    import psycopg

    with psycopg.connect(url, autocommit=True) as db:
        return db.execute("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'").fetchone()[
            0
        ]


def test_two_graders_merging_at_once_both_land(server, tmp_path, monkeypatch):
    """Grader A merges alice's unit 1 and stops inside its transaction (alice is new to the gradebook); grader B's
    merge of alice's unit 2 starts meanwhile. B waits for A instead of failing on the student A is adding."""
    monkeypatch.setattr(nbgrader.api, "get_alembic_version", worker.alembic_head)
    url = new_database(server, "two_graders")
    registered_gradebook(url, ["u1", "u2"])
    first = private_gradebook(url, tmp_path / "a", "u1", "alice", (2.0, 1.0))
    second = private_gradebook(url, tmp_path / "b", "u2", "alice", (0.5, 2.0))
    pause = tmp_path / "pause"
    pause.mkdir()
    a = start_merge(url, first, "u1", "alice", pause)
    wait_for((pause / "alice__u1").exists, "grader A inside its merge")
    b = start_merge(url, second, "u2", "alice")
    wait_for(lambda: blocked_backends(url) > 0, "grader B waiting on grader A")
    (pause / "alice__u1").unlink()
    assert a.wait(120) == 0 and b.wait(120) == 0
    for folder in (tmp_path / "a", tmp_path / "b"):
        assert (folder / "result.json").read_text(encoding="utf-8").count('"review": []') == 1
    grades = {key[1:]: value for key, value in snapshot(url).items()}
    assert grades[("u1", "nb", "c1")][0] == 2.0 and grades[("u1", "nb", "c2")][0] == 1.0
    assert grades[("u2", "nb", "c1")][0] == 0.5 and grades[("u2", "nb", "c2")][0] == 2.0


@pytest.fixture(scope="module")
def killed_then_resumed(server, on_sqlite, one_student, tmp_path_factory):
    """The class graded with --db into a new database by a run killed while its first merge held its transaction
    (the test's pause hook), then by the next run; the student whose merge was killed, and what the gradebook held
    then and in the end."""
    course = course_copy(tmp_path_factory.mktemp("pg") / "course", new_database(server, "graded"))
    pause = course.root.parent / "pause"
    pause.mkdir()
    script = (
        "import sys; from pathlib import Path; from course.grading import grade; from course.layout import Course; "
        "course = Course(Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]); "
        "grade.grade(course, Path(sys.argv[4]), timeout=300, jobs=1)"
    )
    env = dict(os.environ, FLASH_COURSE_CELL_TIMEOUT="10", **{gradebook_db.TEST_PAUSE: str(pause)})
    run = subprocess.Popen(
        [sys.executable, "-c", script, str(course.root), str(course.wrong), course.db, str(one_student)],
        cwd=ROOT,
        env=env,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for(lambda: any(pause.iterdir()), "the first merge inside its transaction", 300)
    finally:
        os.killpg(run.pid, signal.SIGKILL)
        run.wait()
    (held,) = [path.name.split("__")[0] for path in pause.iterdir()]
    after_kill = snapshot(course.db)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("FLASH_COURSE_CELL_TIMEOUT", "10")
        rows = grade.grade(course, one_student, timeout=300, jobs=1)
    return course, held, after_kill, rows


def test_a_run_killed_inside_a_merge_loses_nothing_and_the_next_run_completes(killed_then_resumed, on_sqlite):
    course, held, after_kill, rows = killed_then_resumed
    assert not any(key[0] == held for key in after_kill)  # rolled back: the gradebook as before that merge
    assert held == "bob" and [row.status for row in rows] == ["graded"]  # graded again and merged
    assert {key[0] for key in snapshot(course.db)} == {"bob"}


def test_grading_into_postgresql_gives_the_scores_of_sqlite(killed_then_resumed, on_sqlite):
    course, _, _, rows = killed_then_resumed
    reference, expected = on_sqlite
    assert outcome(rows) == outcome(expected) and 0 < rows[0].score < rows[0].max_score
    assert snapshot(course.db) == snapshot(f"sqlite:///{reference.gradebook}")
    assert not course.gradebook.exists()  # the database holds it, no SQLite file beside
    assert list((course.root / "gradebook_backups").glob("*.db"))  # a SQLite copy taken before each run
    assert lms.table(course).totals == lms.table(reference).totals  # the export reads it too


@pytest.mark.parametrize(
    "wrong",
    ["password", "port", "scheme", "database"],
)
def test_a_wrong_database_url_or_password_is_a_clear_error_and_grades_nothing(
    server, one_student, tmp_path, wrong
):
    url = {
        "password": server.replace(PASSWORD, "not-the-password") + "/postgres",
        "port": f"postgresql://grader:{PASSWORD}@127.0.0.1:{free_port()}/postgres",
        "scheme": f"mysql://grader:{PASSWORD}@127.0.0.1/postgres",
        "database": f"{server}/no_such_database",
    }[wrong]
    course = course_copy(tmp_path / "course", url)
    with pytest.raises(ValueError) as refused:
        grade.grade(course, one_student, timeout=300, jobs=1)
    message = str(refused.value)
    assert "成绩簿" in message and "gradebook database" in message and gradebook_db.shown(url) in message
    assert PASSWORD not in message and "not-the-password" not in message
    assert sorted(p.name for p in course.root.iterdir()) == ["source"]  # nothing placed, graded or backed up


def test_the_cli_takes_the_database_url(monkeypatch):
    args = cli.build_parser().parse_args(["grade", "class", "--db", "postgresql://grader@db.example/course"])
    assert args.db == "postgresql://grader@db.example/course"
    monkeypatch.setenv("FLASH_COURSE_DB", "postgresql://grader@db.example/course")
    assert cli.build_parser().parse_args(["export"]).db == "postgresql://grader@db.example/course"
    assert cli._course(args.db).db == args.db and cli._course(None).db == ""


def test_a_course_keeps_to_the_database_its_grades_are_in(server, one_student, tmp_path):
    """The first run with --db records the database (without its password); a run without --db, or with another
    database, is refused before anything is placed, graded or exported."""
    url = new_database(server, "kept")
    course = course_copy(tmp_path / "course", url)
    gradebook_db.settle(course)
    kept = (course.root / gradebook_db.RECORD).read_text(encoding="utf-8")
    assert "/kept" in kept and PASSWORD not in kept
    for other in (
        Course(course.root, course.wrong),
        Course(course.root, course.wrong, new_database(server, "b")),
    ):
        with pytest.raises(ValueError) as refused:
            grade.grade(other, one_student, timeout=300, jobs=1)
        assert "成绩簿在" in str(refused.value) and "this course's gradebook is in" in str(refused.value)
        with pytest.raises(ValueError):
            lms.export(other, None, None, None, "idnumber")
    assert sorted(p.name for p in course.root.iterdir()) == [gradebook_db.RECORD, "source"]


def test_release_with_the_database_registers_its_units_there(server, tmp_path, monkeypatch):
    """`course release UNIT --db URL` generates release/ and registers the unit in that database's gradebook (as
    nbgrader's generate_assignment would), never in a SQLite file of the course folder."""
    url = new_database(server, "released")
    checkout = tmp_path / "checkout"
    shutil.copytree(FIXTURE / "source", checkout / "source")
    course = Course(tmp_path / "semester", FIXTURE_COURSE.wrong, code=checkout)
    course.root.mkdir()  # a new course folder (`course init`)
    monkeypatch.setattr(layout, "open_course", lambda *_: course)
    assert cli.main(["release", UNIT, "--db", url]) == 0
    assert (checkout / "release" / UNIT).is_dir()
    with Gradebook(gradebook_db.sqlalchemy_url(url), COURSE_ID) as gb:
        assert [a.name for a in gb.assignments] == [UNIT]
    assert not course.gradebook.exists()
    assert "/released" in (course.root / gradebook_db.RECORD).read_text(encoding="utf-8")


def test_nbgrader_run_from_the_checkout_uses_the_courses_database(server, tmp_path, monkeypatch):
    """formgrader, `nbgrader generate_feedback` and `nbgrader db` read and write the database the course's grades
    are in (its password from PGPASSWORD), not a SQLite gradebook of their own."""
    monkeypatch.setattr(nbgrader.api, "get_alembic_version", worker.alembic_head)
    url = new_database(server, "formgrader")
    with Gradebook(gradebook_db.sqlalchemy_url(url), COURSE_ID) as gb:
        gb.add_student("bob")
    course = Course(tmp_path / "semester", FIXTURE_COURSE.wrong, url)
    gradebook_db.settle(course)  # as the course's first run with --db
    env = dict(os.environ, FLASH_COURSE_DIR=str(course.root), PGPASSWORD=PASSWORD)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    env.pop("FLASH_COURSE_DB", None)
    command = [sys.executable, "-m", "nbgrader", "db", "student", "list"]
    run = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "bob" in run.stdout + run.stderr
    assert not course.gradebook.exists()


def test_a_regrade_into_postgresql_keeps_the_hand_grade_in_its_feedback(killed_then_resumed, one_student):
    """A cell bob lost points on, graded by hand in the database (formgrader's override); `course grade --all`
    grades him again: the feedback it writes shows the hand score, as the gradebook keeps it (last in this file: it
    changes the graded course the tests above compare)."""
    course, *_ = killed_then_resumed
    with Gradebook(gradebook_db.sqlalchemy_url(course.db), COURSE_ID) as gb:
        notebook = gb.find_submission_notebook("softmax", UNIT, "bob")
        cell = next(g for g in notebook.grades if g.auto_score < g.max_score)
        name, points = cell.name, cell.max_score
        cell.manual_score, cell.needs_manual_grade = points, False
        gb.db.commit()
        judged = sum(g.auto_score or 0 for nb in gb.find_submission(UNIT, "bob").notebooks for g in nb.grades)
    assert lms.judge_points(course, "bob", UNIT) == judged  # the regrade log's judge part: no hand score
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("FLASH_COURSE_CELL_TIMEOUT", "10")
        (row,) = grade.grade(course, one_student, timeout=300, jobs=1, everything=True)
    assert row.status == "graded" and snapshot(course.db)[("bob", UNIT, "softmax", name)][1] == points
    assert lms.judge_points(course, "bob", UNIT) == judged
    page = (course.feedback / "bob" / UNIT / "softmax.html").read_text(encoding="utf-8")
    heading = " ".join(re.sub(r"<[^>]*>", " ", page.split(f'name="{name}"', 1)[1]).split())[:200]
    assert f"{points:g} / {points:g}" in heading, heading


def test_hand_grading_by_sheets_into_postgresql(server, tmp_path, capsys):
    """Two graders' sheets imported into a course whose gradebook is on PostgreSQL (issue 46): the agreed
    answers land there with their composed comments, the answer they disagree on is reported and left alone, and
    importing again changes nothing."""
    from handgrade_fixture import UNIT as UNIT01
    from handgrade_fixture import hand_grades, make_course

    url = new_database(server, "handgrade")
    course = make_course(tmp_path / "course", ROOT, url)
    sheets = []
    for grader, ticks in (("ta1", {"alice": "x", "bob": "x"}), ("ta2", {"alice": "", "bob": "x"})):
        folder = tmp_path / grader
        argv = ["--course-dir", str(course.root), "handgrade", "export", UNIT01, "--graders", grader]
        assert cli.main([*argv, "--into", str(folder), "--db", url]) == 0
        (sheet,) = folder.glob("*.csv")
        text = sheet.read_text(encoding="utf-8").splitlines()
        rows = [text[0]] + [
            line.replace(",,,,", f",{ticks[line.split(',')[2]]},,,ok", 1)
            if line.split(",")[2] in ticks
            else line
            for line in text[1:]
        ]
        sheet.write_text("\n".join(rows) + "\n", encoding="utf-8")
        sheets.append(str(sheet))
    capsys.readouterr()
    argv = ["--course-dir", str(course.root), "handgrade", "import", "--db", url, *sheets]
    assert cli.main(argv) == 1  # a conflict
    out = capsys.readouterr().out
    assert "in conflict, not written: alice/" in out and "1 answers written" in out
    (found,) = rubric.unit_rubrics(course.source / UNIT01).values()  # bob got its first item from both
    assert hand_grades(course) == {
        "alice": (None, None, True),
        "bob": (1.0, f"{found.items[0].comment}\n\nok", False),
        "carol": (None, None, True),
    }
    assert (
        cli.main(argv) == 1 and "0 answers written to the gradebook, 1 unchanged" in capsys.readouterr().out
    )
    # the feedback reads the gradebook in PostgreSQL: alice's and carol's pages were made before the import (their
    # inputs recorded then), so `course feedback` makes bob's alone, in a job on the database
    for student in ("alice", "carol"):
        (course.feedback / student / UNIT01).mkdir(parents=True)
    feedback_inputs.record(course, feedback_inputs.digests(course, [("alice", UNIT01), ("carol", UNIT01)]))
    assert feedback.refresh(course, [UNIT01]) == ([("bob", UNIT01)], [])
    page = (course.feedback / "bob" / UNIT01 / "memory_bottleneck.html").read_text(encoding="utf-8")
    assert f"✓ +1 {found.items[0].criterion[:20]}" in page and "pending" not in page.split('class="cell ')[0]


def test_feedback_back_through_moodle_reads_postgresql(server, tmp_path):
    """`export --feedback-for moodle` (issue 46 item 1) reads the grades, the hand-grader's comment and the pages'
    inputs from a gradebook on PostgreSQL; the pages are stand-ins, their inputs recorded as `course grade` does."""
    from handgrade_fixture import ANSWERS, NB, WRITTEN, make_course
    from handgrade_fixture import UNIT as UNIT01

    from course.grading import lms_feedback

    url = new_database(server, "lmsfeedback")
    course = make_course(tmp_path / "course", ROOT, url)
    with Gradebook(gradebook_db.sqlalchemy_url(url), COURSE_ID) as gb:
        gb.find_grade(WRITTEN, NB, UNIT01, "alice").manual_score = 2
        gb.find_comment(WRITTEN, NB, UNIT01, "alice").manual_comment = "clear"
        gb.db.commit()
    roster = course.root / "roster.csv"
    roster.write_text(  # the worksheet's email addresses say who is who
        "student_id,name,email\nalice,Alice Li,alice@uni.example.edu\nbob,Bob Wang,bob@uni.example.edu\n"
        "carol,Chen Jing,chen.jing@uni.example.edu\n",
        encoding="utf-8",
    )
    for student in ANSWERS:
        (course.feedback / student / UNIT01).mkdir(parents=True)
        (course.feedback / student / UNIT01 / f"{NB}.html").write_text(student, encoding="utf-8")
    feedback_inputs.record_made(course, [(s, UNIT01) for s in ANSWERS])
    worksheet = ROOT / "tests" / "fixtures" / "lms" / "moodle_worksheet.csv"
    assert (
        lms_feedback.main(course, "moodle", "01", tmp_path / "out", roster, worksheet) == 1
    )  # Zhang Wei: unknown
    with (tmp_path / "out" / f"worksheet_{UNIT01}.csv").open(newline="", encoding="utf-8") as f:
        alice = next(line for line in csv.DictReader(f) if line["Identifier"] == "Participant 3301")
    assert alice["Grade"] == "41.67" and f"{WRITTEN}: 2 / 3 — clear" in alice["Feedback comments"]  # 5 of 12
