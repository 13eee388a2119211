"""The feedback service (issue 48): submissions in nbgrader's exchange (or a submissions folder) graded in preview
and their feedback written where the student fetches it; a fair queue, the latest submission only, a daily quota,
the due date, bad input, a killed service. Every test but the last grades with a stand-in round (`fake_round`,
no notebook runs); the last grades the fixture course's unit through `course grade --feedback-only`'s own code
and fetches the feedback with nbgrader."""

import base64
import hashlib
import html
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pytest
from pipeline_fixture import FIXTURE, UNIT, course_copy

from course.grading import feedback_service as fs
from course.grading import submissions
from course.layout import Course

COURSE_ID = "flash-attention-first-principles"
OTHER_UNIT = "02_softmax_again"
LATER = 10.0  # the service's clock runs ahead: every submission made in a test has settled


def fake_round(course: Course, class_folder: Path, settings) -> dict:
    """Stands in for the preview: writes a page per staged notebook, as feedback_only writes feedback_preview/."""
    rows = {}
    for student_dir in sorted(class_folder.iterdir()):
        for unit_dir in sorted(student_dir.iterdir()):
            out = course.root / "feedback_preview" / student_dir.name / unit_dir.name
            out.mkdir(parents=True, exist_ok=True)
            for nb in unit_dir.glob("*.ipynb"):
                (out / f"{nb.stem}.html").write_text(f"<html><body><p>graded {nb.stem}</p></body></html>")
            rows[student_dir.name, unit_dir.name] = SimpleNamespace(status="graded", problems={})
    rounds = course.root / "rounds.jsonl"
    with rounds.open("a") as f:
        f.write(json.dumps(sorted(rows)) + "\n")
    return rows


def rounds(course: Course) -> list[list[list[str]]]:
    path = course.root / "rounds.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


@pytest.fixture
def setup(tmp_path):
    course = course_copy(tmp_path / "course")
    (course.source / OTHER_UNIT).mkdir()
    for nb in (course.source / UNIT).glob("*.ipynb"):
        (course.source / OTHER_UNIT / nb.name).write_bytes(nb.read_bytes())
    exchange = fs.Exchange(tmp_path / "exchange", COURSE_ID)
    exchange.inbound.mkdir(parents=True)
    service(course, exchange)  # started before the students hand in
    return course, exchange


def service(course: Course, exchange: fs.Exchange, jobs: int = 2, **settings) -> fs.Service:
    return fs.Service(
        course, fs.Settings(exchange, jobs=jobs, **settings), fake_round, clock=lambda: time.time() + LATER
    )


def notebook_text() -> str:
    return nbformat.writes(nbformat.v4.new_notebook())


def submit(exchange: fs.Exchange, student: str, unit: str = UNIT, files: dict | None = None) -> str:
    """An inbound folder as `nbgrader submit` writes it; its secret."""
    files = {"softmax.ipynb": notebook_text(), "logsumexp.ipynb": notebook_text()} if files is None else files
    stamp = f"2026-03-06 10:00:{time.time_ns() % 60:02d}.{time.time_ns() % 10**6:06d} UTC"
    folder = exchange.inbound / f"{student}+{unit}+{stamp}+{base64.urlsafe_b64encode(os.urandom(9)).decode()}"
    folder.mkdir()
    for name, text in files.items():
        (folder / name).write_text(text)
    (folder / "timestamp.txt").write_text(stamp)
    secret = os.urandom(32).hex()
    (folder / "submission_secret.txt").write_text(secret)
    return secret


def fetched(exchange: fs.Exchange, secret: str, notebook: str) -> str:
    """The text of the page the assignment list's Fetch Feedback finds for a notebook of a submission (under
    nbgrader's hash), its entities unescaped."""
    digest = hashlib.md5((secret + notebook).encode()).hexdigest()
    return html.unescape((exchange.feedback / f"{digest}.html").read_text())


def run_out(svc: fs.Service) -> None:
    while svc.step()[1]:
        pass


def test_two_students_are_graded_in_one_round_and_fetch_their_own_feedback(setup):
    course, exchange = setup
    alice, bob = submit(exchange, "alice"), submit(exchange, "bob")
    svc = service(course, exchange)
    assert svc.step() == (True, False)
    assert rounds(course) == [[["alice", UNIT], ["bob", UNIT]]]
    for secret in (alice, bob):
        page = fetched(exchange, secret, "softmax")
        assert "graded softmax" in page and "4 of 5 left today" in page and "今天还剩 4 次" in page
        assert "not your grade" in page and "不是你的成绩" in page
    assert oct(exchange.feedback.stat().st_mode & 0o777) == "0o711"  # found by hash, never listed
    assert svc.step() == (False, False) and len(rounds(course)) == 1  # nothing graded twice
    restarted = service(course, exchange)  # a new service reads the queue: nothing again
    assert restarted.step() == (False, False) and len(rounds(course)) == 1


def test_twenty_resubmissions_never_hold_back_a_classmate_and_only_the_latest_is_graded(setup):
    course, exchange = setup
    older = [submit(exchange, "alice") for _ in range(19)]
    latest = submit(exchange, "alice")
    submit(exchange, "alice", OTHER_UNIT)
    bob = submit(exchange, "bob")
    svc = service(course, exchange, jobs=1)
    run_out(svc)
    # alice's unit 01 first (seen first), then bob (never served) before alice's second unit
    assert rounds(course) == [[["alice", UNIT]], [["bob", UNIT]], [["alice", OTHER_UNIT]]]
    assert "graded softmax" in fetched(exchange, latest, "softmax")
    assert "graded" in fetched(exchange, bob, "softmax")
    for secret in older:
        page = fetched(exchange, secret, "softmax")
        assert "only the latest is graded" in page and "只评最新的一份" in page
    # alice, just served, hands in again; carol's first submission comes later but goes first
    submit(exchange, "alice")
    submit(exchange, "carol")
    run_out(svc)
    assert rounds(course)[3:] == [[["carol", UNIT]], [["alice", UNIT]]]


def test_the_daily_quota_is_counted_per_unit_and_shown(setup):
    course, exchange = setup
    (course.root / "semester.toml").write_text("[feedback]\nper_day = 2\n")
    svc = service(course, exchange)
    pages = []
    for _ in range(3):
        secret = submit(exchange, "alice")
        run_out(svc)
        pages.append(fetched(exchange, secret, "softmax"))
    assert "1 of 2 left today" in pages[0] and "0 of 2 left today" in pages[1]
    assert "used today's 2 feedback gradings" in pages[2] and "次预览反馈已用完" in pages[2]
    assert len(rounds(course)) == 2
    other = submit(exchange, "alice", OTHER_UNIT)  # another unit has its own quota
    run_out(svc)
    assert "1 of 2 left today" in fetched(exchange, other, "softmax")


@pytest.mark.parametrize(
    ("value", "problem"), [("0", "at least 1"), ('"5"', "at least 1"), ("2.5", "at least 1")]
)
def test_a_wrong_quota_is_a_setting_error_naming_its_line(tmp_path, value, problem):
    from course.grading import semester

    course = course_copy(tmp_path / "course")
    path = tmp_path / "semester.toml"
    path.write_text(f"[feedback]\nper_day = {value}\n")
    with pytest.raises(semester.SettingError, match=problem) as caught:
        semester.load_policy(path, course)
    assert "line 2" in str(caught.value) and "第 2 行" in str(caught.value)
    path.write_text("[feedback]\nper_dya = 3\n")
    with pytest.raises(semester.SettingError, match="unknown setting 'per_dya'"):
        semester.load_policy(path, course)


def test_nothing_after_the_due_date_unless_extended_or_allowed(setup):
    course, exchange = setup
    (course.root / "semester.toml").write_text(
        '[due]\n"01" = 2020-01-01T00:00:00Z\n[extensions.bob]\n"01" = 2999-01-01T00:00:00Z\n'
    )
    alice, bob = submit(exchange, "alice"), submit(exchange, "bob")
    run_out(service(course, exchange))
    assert "has passed" in fetched(exchange, alice, "softmax") and "已过" in fetched(
        exchange, alice, "softmax"
    )
    assert "graded softmax" in fetched(exchange, bob, "softmax")
    assert rounds(course) == [[["bob", UNIT]]]
    late = submit(exchange, "alice")
    run_out(service(course, exchange, allow_late=True))
    assert "graded softmax" in fetched(exchange, late, "softmax")


def test_bad_input_gets_a_bilingual_page_and_stops_nothing_else(setup):
    course, exchange = setup
    not_notebook = submit(exchange, "alice", files={"softmax.ipynb": "hello, not json"})
    renamed = submit(exchange, "carol", files={"my_softmax.ipynb": notebook_text()})
    unknown = submit(exchange, "dan", "99_nope", files={"softmax.ipynb": notebook_text()})
    partly = submit(exchange, "erin", files={"softmax.ipynb": notebook_text(), "copy.ipynb": notebook_text()})
    good = submit(exchange, "bob")
    run_out(service(course, exchange, jobs=8))
    assert rounds(course) == [[["bob", UNIT], ["erin", UNIT]]]
    assert "graded softmax" in fetched(exchange, good, "softmax")
    page = fetched(exchange, not_notebook, "softmax")
    assert "not a valid notebook" in page and "不是有效的笔记本" in page
    page = fetched(exchange, renamed, "my_softmax")
    assert (
        "not a notebook of 01_softmax" in page
        and "keep the released file name" in page
        and "发布时的文件名" in page
    )
    page = fetched(exchange, unknown, "softmax")
    assert "unknown unit 99_nope" in page and "未知单元" in page
    assert "graded softmax" in fetched(exchange, partly, "softmax")
    assert "not a notebook of 01_softmax" in fetched(exchange, partly, "copy")


def test_only_submissions_made_after_the_first_start_are_graded(tmp_path):
    course = course_copy(tmp_path / "course")
    exchange = fs.Exchange(tmp_path / "exchange", COURSE_ID)
    exchange.inbound.mkdir(parents=True)
    old = submit(exchange, "alice")  # an earlier unit's, long collected and graded
    svc = service(course, exchange)
    new = submit(exchange, "bob")
    run_out(svc)
    assert rounds(course) == [[["bob", UNIT]]]
    with pytest.raises(FileNotFoundError):  # its final feedback is the instructor's to release
        fetched(exchange, old, "softmax")
    assert "graded softmax" in fetched(exchange, new, "softmax")


def test_a_page_already_released_is_never_replaced(setup):
    course, exchange = setup
    secret = submit(exchange, "alice")
    exchange.feedback.mkdir()
    (exchange.feedback / f"{fs.page_hash(secret, 'softmax.ipynb')}.html").write_text("final feedback")
    run_out(service(course, exchange))
    assert fetched(exchange, secret, "softmax") == "final feedback"
    assert "graded logsumexp" in fetched(exchange, secret, "logsumexp")


def test_a_page_escapes_what_the_student_named():
    page = fs.message_page(("t", "t"), ["<script>alert(1)</script> / x"])
    assert "<script>" not in page and "&lt;script&gt;" in page


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to hand in as another account")
def test_a_submission_under_a_classmates_name_is_charged_to_no_one(setup):
    course, exchange = setup
    (course.root / "semester.toml").write_text("[feedback]\nper_day = 1\n")
    forged = submit(exchange, "alice")
    folder = next(exchange.inbound.glob("alice+*"))
    os.chown(folder, 65534, 65534)  # nobody's folder, claiming to be alice's
    run_out(service(course, exchange))
    assert "another account" in fetched(exchange, forged, "softmax")
    alice = submit(exchange, "alice")  # alice's own quota is untouched
    run_out(service(course, exchange))
    assert "graded softmax" in fetched(exchange, alice, "softmax")


def test_links_in_the_inbound_folder_are_never_followed(setup, tmp_path):
    course, exchange = setup
    private = tmp_path / "private"
    private.mkdir()
    (private / "softmax.ipynb").write_text(notebook_text())
    (private / "submission_secret.txt").write_text("ab" * 8)
    (exchange.inbound / f"bob+{UNIT}+2026-03-06 10:00:00 UTC+x").symlink_to(private)
    secret = submit(exchange, "alice", files={"softmax.ipynb": notebook_text()})
    folder = next(exchange.inbound.glob("alice+*"))
    (folder / "logsumexp.ipynb").symlink_to(private / "softmax.ipynb")
    run_out(service(course, exchange))
    assert rounds(course) == []  # the link is not a submission; alice's holding a link is refused
    assert "symbolic link" in fetched(exchange, secret, "softmax")


def test_the_submissions_folder_without_an_exchange(setup, tmp_path):
    course, _ = setup
    folder = tmp_path / "uploads"
    (folder / "alice" / UNIT).mkdir(parents=True)
    (folder / "alice" / UNIT / "softmax.ipynb").write_text(notebook_text())
    svc = fs.Service(course, fs.Settings(submissions=folder), fake_round, clock=lambda: time.time() + LATER)
    run_out(svc)
    page = (course.root / "feedback_preview" / "alice" / UNIT / "softmax.html").read_text()
    assert "graded softmax" in page and "4 of 5 left today" in page
    (folder / "alice" / UNIT / "softmax.ipynb").write_text(notebook_text() + "\n")  # handed in again
    run_out(svc)
    assert len(rounds(course)) == 2


KILLABLE = """
import sys, time
sys.path.insert(0, {tests!r})
from pathlib import Path
import test_feedback_service as t
from course.grading import feedback_service as fs
from course.layout import Course

def slow(course, folder, settings):
    time.sleep({seconds})
    return t.fake_round(course, folder, settings)

course = Course(Path({root!r}), Path({root!r}) / "wrong")
exchange = fs.Exchange(Path({exchange!r}), t.COURSE_ID)
service = fs.Service(course, fs.Settings(exchange, jobs=1), slow, clock=lambda: time.time() + t.LATER)
fs.run(service, once=True, poll=0.1)
"""


def start(course: Course, exchange: fs.Exchange, seconds: float) -> subprocess.Popen:
    script = KILLABLE.format(
        tests=str(Path(__file__).parent), seconds=seconds, root=str(course.root), exchange=str(exchange.root)
    )
    return subprocess.Popen([sys.executable, "-c", script], start_new_session=True)


def states(course: Course) -> dict[str, str]:
    found = {}
    for path in (course.root / fs.FOLDER / "queue").glob("*.json"):
        found.update({e["student"]: e["state"] for e in json.loads(path.read_text())})
    return found


def test_a_killed_service_grades_nothing_twice_and_loses_nothing(setup):
    course, exchange = setup
    secrets = {name: submit(exchange, name) for name in ("alice", "bob", "carol")}
    proc = start(course, exchange, seconds=2.0)
    deadline = time.monotonic() + 60
    while states(course).get("bob") != fs.RUNNING or len(rounds(course)) != 1:
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)  # in the middle of bob's grading
    proc.wait()
    assert states(course) == {"alice": fs.DONE, "bob": fs.RUNNING, "carol": fs.WAITING}
    with pytest.raises(FileNotFoundError):
        fetched(exchange, secrets["bob"], "softmax")
    done_page = exchange.feedback / f"{hashlib.md5((secrets['alice'] + 'softmax').encode()).hexdigest()}.html"
    alice_written = done_page.stat().st_mtime_ns
    proc = start(course, exchange, seconds=0)
    assert proc.wait(timeout=60) == 0
    assert states(course) == dict.fromkeys(secrets, fs.DONE)
    assert rounds(course) == [[["alice", UNIT]], [["bob", UNIT]], [["carol", UNIT]]]  # alice once
    assert done_page.stat().st_mtime_ns == alice_written
    for secret in secrets.values():
        assert "graded softmax" in fetched(exchange, secret, "softmax")
    assert not list((course.root / fs.FOLDER / "queue").glob("*.partial"))


def test_preview_grading_end_to_end_and_fetched_by_nbgrader(setup, tmp_path):
    """The fixture unit graded by `course grade --feedback-only`'s code (sandboxed notebooks, the feedback salt),
    alice's feedback fetched with `nbgrader fetch_feedback` from her cache; her next submission (over the quota)
    a message."""
    from course import release

    course, exchange = setup
    (course.root / "semester.toml").write_text("[feedback]\nper_day = 1\n")
    release.build(Course(FIXTURE, FIXTURE / "wrong"), [UNIT], course.release)
    home = tmp_path / "home" / "alice"
    answers = home / "answers"
    submissions.write_student(course.release / UNIT, course.source / UNIT, answers, {})
    files = {p.name: p.read_text() for p in answers.glob("*.ipynb")}
    alice = submit(exchange, "alice", files=files)
    svc = fs.Service(course, fs.Settings(exchange, jobs=1), clock=lambda: time.time() + LATER)
    run_out(svc)
    page = fetched(exchange, alice, "softmax")
    assert "0 of 1 left today" in page and "test_matches_reference" in page and "score: 5 / 5" in page
    assert not course.gradebook.exists() and not course.feedback.exists()
    over = submit(exchange, "alice", files=files)
    run_out(svc)
    assert "used today's 1 feedback gradings" in fetched(exchange, over, "softmax")

    # alice's nbgrader cache, as `nbgrader submit` left it; the assignment list's Fetch Feedback reads it
    inbound = min(exchange.inbound.glob("alice+*"), key=lambda f: f.stat().st_ctime_ns)  # the graded one
    _, _, stamp, _ = inbound.name.split("+")
    cache = home / ".local" / "share" / "jupyter" / "nbgrader_cache" / COURSE_ID / f"alice+{UNIT}+{stamp}"
    cache.mkdir(parents=True)
    for name in [*files, "timestamp.txt", "submission_secret.txt"]:
        (cache / name).write_bytes((inbound / name).read_bytes())
    env = dict(os.environ, HOME=str(home))
    run = subprocess.run(
        [sys.executable, "-m", "nbgrader", "fetch_feedback", UNIT, "--student=alice",
         f"--Exchange.root={exchange.root}", f"--CourseDirectory.course_id={COURSE_ID}"],
        cwd=home, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    got = list((home / UNIT / "feedback").glob("*/softmax.html"))
    assert len(got) == 1 and "0 of 1 left today" in got[0].read_text()


def test_a_flood_from_one_account_holds_back_no_one(setup):
    course, exchange = setup
    (course.root / "semester.toml").write_text("[feedback]\nper_day = 2\n")
    for _ in range(300):
        submit(exchange, "aaron", files={"softmax.ipynb": notebook_text()})
    submit(exchange, "bob")
    svc = service(course, exchange, jobs=1)
    began = time.monotonic()
    assert svc.step()[0] and svc.step()[0]
    assert rounds(course) == [[["aaron", UNIT]], [["bob", UNIT]]]  # aaron's latest, then bob
    for _ in range(5):
        submit(exchange, "aaron", files={"softmax.ipynb": notebook_text()})
    run_out(svc)
    assert rounds(course) == [
        [["aaron", UNIT]],
        [["bob", UNIT]],
        [["aaron", UNIT]],
    ]  # then his quota is spent
    assert time.monotonic() - began < 60


def test_the_preview_round_goes_through_feedback_only_with_the_services_pool(monkeypatch, tmp_path):
    from course.grading import grade

    calls = []
    monkeypatch.setattr(grade, "feedback_only", lambda *args, **kwargs: calls.append((args, kwargs)) or [])
    settings = fs.Settings(jobs=3, timeout=50.0, ray="head:6379")
    course = Course(tmp_path, tmp_path)
    assert fs.preview_round(course, tmp_path / "class", settings) == {}
    assert calls == [((course, tmp_path / "class", 50.0, 3, "auto"), {"ray": "head:6379"})]


def test_the_command_needs_a_source(capsys):
    from course import cli

    assert cli.main(["feedback-service"]) == 2
    said = capsys.readouterr().out
    assert "--exchange" in said and "--submissions" in said and "给出" in said
    assert cli.main(["feedback-service", "--submissions", "x", "--ray", "head:6379"]) == 2
    assert "--ray needs --jobs" in capsys.readouterr().out


def test_the_rush_benchmark_serves_in_turn_and_ends_rounds_with_their_slowest():
    from benchmarks import feedback_rush as rush

    subs = [rush.Submission(0.0, 1, "u", 100.0), rush.Submission(0.0, 1, "u", 10.0)]
    subs += [rush.Submission(1.0, 2, "u", 10.0), rush.Submission(1.0, 3, "u", 10.0)]
    done, _ = rush.simulate(subs, slots=2, overhead=5.0, per_day=5, continuous=False)
    assert [s.fate for s in done] == ["superseded", "graded", "graded", "graded"]
    assert [s.done for s in done[1:]] == [15.0, 30.0, 30.0]  # student 1 alone, then 2 and 3 in one round
    done, _ = rush.simulate(subs, slots=1, overhead=0.0, per_day=1, continuous=True)
    assert [s.done for s in done[1:]] == [10.0, 20.0, 30.0]


def test_a_jobs_feedback_page_is_timed_beside_its_notebooks(monkeypatch, tmp_path):
    """The rush benchmark's costs say how much of a pair is its feedback page (issue 48): the job that grades a
    pair records the seconds its page took in each of the student's notebook entries, and `grade` reads them as
    the row's `FEEDBACK_PAGE`, a stage of its own in benchmarks.grading_throughput. A stand-in API takes 0.2 s a
    page."""
    from benchmarks import grading_throughput
    from course.grading import grade, worker

    class Api:
        coursedir = SimpleNamespace(notebook_id="")

        def generate_feedback(self, unit, student, force):
            time.sleep(0.2)
            return {"success": True, "log": ""}

    def graded(api, root, unit, student, notebook):
        return {student: {"status": "graded", "scores": {}, "seconds": 1.0}}

    monkeypatch.setattr(worker, "make_api", lambda *args, **kwargs: Api())
    monkeypatch.setattr(worker, "reset", lambda *args: None)
    monkeypatch.setattr(worker, "grade_notebook", graded)
    monkeypatch.setattr(worker, "record_judgement", lambda *args: None)
    (tmp_path / "autograded" / "alice" / UNIT).mkdir(parents=True)
    request = {"root": str(tmp_path), "unit": UNIT, "student": "alice", "notebooks": ["a.ipynb", "b.ipynb"]}
    worker.autograde({**request, "feedback": True}, tmp_path / "results.json")
    entries = json.loads((tmp_path / "results.json").read_text())["alice"]
    pages = {entry["page_seconds"] for entry in entries.values()}
    assert len(pages) == 1 and 0.2 <= pages.pop() < 2, entries  # one page for the unit, on every notebook
    worker.autograde(request, tmp_path / "no_page.json")  # no page asked for: none timed
    assert not any(
        "page_seconds" in e for e in json.loads((tmp_path / "no_page.json").read_text())["alice"].values()
    )
    assert grading_throughput.stage_of(grade.FEEDBACK_PAGE) == "feedback page"


def test_one_service_at_a_time_and_a_broken_semester_file_stops_the_start(setup):
    import fcntl

    from course.grading import semester

    course, exchange = setup
    with (course.root / fs.FOLDER / ".lock").open("a") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)  # a service already running
        with pytest.raises(ValueError, match="another feedback service"):
            fs.run(service(course, exchange), once=True)
    (course.root / "semester.toml").write_text("[feedback]\nper_day = -1\n")
    with pytest.raises(semester.SettingError, match="per_day"):
        service(course, exchange)  # never graded with no due dates by mistake
