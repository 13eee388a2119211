"""`bash course.sh hub` (course/hub): the hub starts for a roster, each student is a Unix account that reads only
its own files, passwords are set on first login and kept across a restart, the students' environment has no
`course` package and cannot reach the checkout, Ctrl-C stops the hub and its proxy, and a port in use or a
missing proxy is a clear bilingual error. The browser walk-through is tests/browser/test_hub_browser.py."""

import hashlib
import os
import shutil
import socket
import stat
import subprocess
import sys
import time

import pytest
from hub_fixture import ROOT, STUDENTS, as_user, course_hub, free_ports, hub_skip_reason, listening

from course.hub import accounts

ANA, BEN = STUDENTS


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    with course_hub(tmp_path_factory.mktemp("hub") / "course", options=("--feedback-service",)) as running:
        yield running


def test_first_login_sets_the_password_and_only_the_roster_logs_in(hub):
    assert not hub.login(ANA, "short"), "a first password under 8 characters"
    assert hub.login(ANA, "ana-first-pass")
    assert not hub.login(ANA, "someone-else-guess")
    assert hub.login(ANA, "ana-first-pass")
    assert not hub.login("mallory", "any-password-at-all")
    instructor = accounts.owner_of(ROOT)
    assert not hub.login(instructor, "any-password-at-all"), "the instructor's password is never first-use"
    assert hub.login(instructor, (hub.hub_dir / accounts.INSTRUCTOR_PASSWORD).read_text().strip())
    stored = (hub.hub_dir / accounts.PASSWORDS).read_text()
    assert "ana-first-pass" not in stored
    assert stat.S_IMODE((hub.hub_dir / accounts.PASSWORDS).stat().st_mode) == 0o600
    assert as_user(ANA, "ls", str(hub.hub_dir / "jupyterhub")).returncode != 0, (
        "JupyterHub's database is root's"
    )


def test_each_student_reads_only_their_own_files(hub):
    for name in STUDENTS:
        home = accounts.home_of(name)
        assert stat.S_IMODE(home.stat().st_mode) == 0o700
        assert accounts.owner_of(home) == name
    (accounts.home_of(ANA) / "answer.txt").write_text("ana's work")
    os.chown(accounts.home_of(ANA) / "answer.txt", *_ids(ANA))
    refused = as_user(BEN, "cat", str(accounts.home_of(ANA) / "answer.txt"))
    assert refused.returncode != 0 and "Permission denied" in refused.stderr
    assert as_user(ANA, "cat", str(accounts.home_of(ANA) / "answer.txt")).stdout == "ana's work"


def test_the_students_environment_has_no_course_and_no_solutions(hub):
    python = str(hub.hub_dir / "student-env" / "bin" / "python")
    works = as_user(ANA, python, "-c", "import utils, nbgrader, jupyterhub.singleuser; print('ok')")
    assert works.stdout.splitlines()[-1:] == ["ok"], works.stderr[-2000:]
    refused = as_user(ANA, python, "-c", "import course")
    assert "ModuleNotFoundError" in refused.stderr
    for private in (ROOT / "source", ROOT / "course", hub.course_dir):
        listing = as_user(ANA, "ls", str(private))
        assert listing.returncode != 0 and "Permission denied" in listing.stderr, private
    bundle = hub.hub_dir / "bundle" / "flash-attention-student"
    assert not (bundle / "source").exists() and not (bundle / "course").exists()


def test_ctrl_c_stops_the_hub_and_a_restart_keeps_the_passwords(hub):
    assert hub.login(BEN, "ben-first-pass")
    assert hub.stop() == 0
    assert not any(listening(hub.port + i) for i in range(3)), "the hub, its API and the proxy are gone"
    hub.start()
    assert hub.login(BEN, "ben-first-pass")
    assert not hub.login(BEN, "ben-other-pass")


@pytest.mark.parametrize("problem", ["port", "proxy"])
def test_a_port_in_use_or_no_proxy_is_a_bilingual_error(tmp_path, problem):
    reason = hub_skip_reason()
    if reason and "configurable-http-proxy" not in reason:
        pytest.skip(reason)
    port = free_ports(3)
    command = [sys.executable, "-m", "course.hub", "--ip", "127.0.0.1", "--port", str(port)]
    command += ["--hub-dir", str(tmp_path / "hub"), "--course-dir", str(tmp_path / "course")]
    with socket.socket() as taken:
        if problem == "port":
            taken.bind(("127.0.0.1", port + 1))
            taken.listen()
        else:
            command += ["--proxy", str(tmp_path / "no-proxy")]
        run = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 2
    if problem == "port":
        assert f"端口 {port + 1} 已被占用" in run.stderr and f"port {port + 1} is in use" in run.stderr
    else:
        assert "找不到 configurable-http-proxy" in run.stderr and "no configurable-http-proxy" in run.stderr
    assert not (tmp_path / "hub").exists(), "nothing set up before the check"


def _ids(name: str) -> tuple[int, int]:
    info = os.stat(accounts.home_of(name))
    return info.st_uid, info.st_gid


def test_a_forgotten_password_is_chosen_again_and_the_instructors_is_random(hub):
    assert hub.login(ANA, "ana-first-pass")
    reset = [sys.executable, "-m", "course.hub", "--hub-dir", str(hub.hub_dir), "--reset-password"]
    subprocess.run([*reset, ANA], cwd=ROOT, check=True, capture_output=True, timeout=120)
    assert hub.login(ANA, "ana-second-pass")
    assert not hub.login(ANA, "ana-first-pass")
    instructor = accounts.owner_of(ROOT)
    note = hub.hub_dir / accounts.INSTRUCTOR_PASSWORD
    old = note.read_text().strip()
    subprocess.run([*reset, instructor], cwd=ROOT, check=True, capture_output=True, timeout=120)
    new = note.read_text().strip()
    assert new != old and not hub.login(instructor, "a-first-use-guess") and hub.login(instructor, new)


def test_no_npm_is_a_bilingual_error(tmp_path):
    """install_proxy.sh where npm is missing and cannot be installed (no apt-get on PATH): the reason in both
    languages."""
    script = tmp_path / "install_proxy.sh"
    shutil.copy(ROOT / "course" / "hub" / "install_proxy.sh", script)  # no node_modules beside this copy
    tools = tmp_path / "bin"
    tools.mkdir()
    for tool in ("id", "dirname"):
        (tools / tool).symlink_to(shutil.which(tool))
    run = subprocess.run(
        ["/bin/bash", str(script)], env={"PATH": str(tools)}, capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 1
    assert "找不到 npm" in run.stderr and "no npm" in run.stderr, run.stderr


def test_the_feedback_service_beside_the_hub_answers_each_student_in_their_own_feedback(hub):
    """`--feedback-service`: the service runs as the instructor on the hub's exchange; a student's submission of
    an unknown unit, and one handed in under a classmate's name, each get their page in the exchange's feedback
    folder, readable by the student who holds the submission's secret (no grading: both are refused)."""
    course = hub.hub_dir / "exchange" / "flash-attention-first-principles"
    inbound = course / "inbound"
    inbound.mkdir(mode=0o733, exist_ok=True)  # as nbgrader's release_assignment makes it
    inbound.chmod(0o733)
    pages = {}
    for who, named in ((ANA, ANA), (BEN, ANA)):
        folder = inbound / f"{named}+99_nope+2026-03-06 10:00:00.000000 UTC+{who}"
        secret = os.urandom(16).hex()
        script = (
            f'mkdir "{folder}" && echo {{}} > "{folder}/x.ipynb"'
            f' && printf {secret} > "{folder}/submission_secret.txt" && chmod 777 "{folder}"'
        )
        made = as_user(who, "sh", "-c", script)
        assert made.returncode == 0, made.stderr
        pages[who] = course / "feedback" / f"{hashlib.md5((secret + 'x').encode()).hexdigest()}.html"
    deadline = time.monotonic() + 90
    while not all(page.exists() for page in pages.values()):
        assert time.monotonic() < deadline, hub.log()[-3000:]
        time.sleep(1)
    ana = as_user(ANA, "cat", str(pages[ANA]))
    assert ana.returncode == 0 and "unknown unit 99_nope" in ana.stdout
    ben = as_user(BEN, "cat", str(pages[BEN]))
    assert ben.returncode == 0 and f"under {ANA}&#x27;s name by another account ({BEN})" in ben.stdout
    assert as_user(ANA, "ls", str(course / "feedback")).returncode != 0, "the feedback folder is not listable"
