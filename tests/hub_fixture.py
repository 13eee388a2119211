"""A course hub (`python -m course.hub`) for the tests: two students on a roster, a course folder and a hub folder
of its own, loopback ports; the students' Unix accounts are removed afterwards. Skips where it cannot run
(not root, no useradd, no configurable-http-proxy from `bash course/hub/install_proxy.sh`)."""

from __future__ import annotations

import contextlib
import http.cookiejar
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

from course.hub.__main__ import PROXY

ROOT = Path(__file__).resolve().parents[1]
STUDENTS = ["hubt-ana", "hubt-ben"]
START_TIMEOUT_S = 180  # the bundle and the students' environment are made before JupyterHub starts


def hub_skip_reason() -> str | None:
    if os.geteuid() != 0:
        return "hub 测试需要 root / the hub tests need root (they create Unix accounts)"
    if not shutil.which("useradd"):
        return "没有 useradd / no useradd"
    if not os.access(PROXY, os.X_OK):
        return (
            "没有 configurable-http-proxy（bash course/hub/install_proxy.sh 安装）"
            " / no configurable-http-proxy (bash course/hub/install_proxy.sh installs it)"
        )
    return None


def free_ports(count: int) -> int:
    """A port p with p … p+count-1 free on loopback."""
    for _ in range(50):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port + count < 65536 and all(port_free(port + i) for i in range(count)):
            return port
    raise RuntimeError("no free ports")


def port_free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


@dataclass
class Hub:
    port: int
    hub_dir: Path
    course_dir: Path
    process: subprocess.Popen | None = None
    options: tuple[str, ...] = ()  # more of `course.hub`'s options

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def command(self, *extra: str) -> list[str]:
        return [sys.executable, "-m", "course.hub", "--ip", "127.0.0.1", "--port", str(self.port)] + [
            "--hub-dir", str(self.hub_dir), "--course-dir", str(self.course_dir), *extra,
        ]  # fmt: skip

    def start(self) -> None:
        log = (self.hub_dir.parent / f"{self.hub_dir.name}.log").open("a")
        self.process = subprocess.Popen(
            self.command(*self.options), cwd=ROOT, stdout=log, stderr=subprocess.STDOUT
        )
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the hub exited ({self.process.returncode}):\n{self.log()[-3000:]}")
            try:
                urllib.request.urlopen(f"{self.url}hub/api", timeout=5).read()
                return
            except OSError:
                time.sleep(1)
        raise TimeoutError(f"the hub did not answer in {START_TIMEOUT_S} s:\n{self.log()[-3000:]}")

    def stop(self) -> int:
        """Ctrl-C, as an instructor would; the hub's exit status."""
        self.process.send_signal(signal.SIGINT)
        try:
            return self.process.wait(timeout=60)
        finally:
            if self.process.poll() is None:
                self.process.kill()

    def log(self) -> str:
        return (self.hub_dir.parent / f"{self.hub_dir.name}.log").read_text(errors="replace")

    def login(self, name: str, password: str) -> bool:
        """The login form, as a browser posts it (with its _xsrf token); True when the hub lets the user in."""
        jar = http.cookiejar.CookieJar()
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar), NoRedirect())
        page = opener.open(f"{self.url}hub/login", timeout=30).read().decode()
        xsrf = re.search(r'name="_xsrf"\s+value="([^"]+)"', page).group(1)
        form = urllib.parse.urlencode({"username": name, "password": password, "_xsrf": xsrf}).encode()
        try:
            opener.open(f"{self.url}hub/login", data=form, timeout=60)
        except urllib.error.HTTPError as answer:
            if answer.code == 302:
                return True
            if answer.code == 403:
                return False
            raise
        return False


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None  # a 302 comes back as an HTTPError: a login that succeeded, without spawning a server


def as_user(name: str, *command: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["runuser", "-u", name, "--", *command], capture_output=True, text=True, timeout=120
    )


def remove_accounts(names: list[str]) -> None:
    for name in names:
        subprocess.run(["userdel", "--remove", name], capture_output=True)


@contextlib.contextmanager
def course_hub(course_dir: Path, students: list[str] = STUDENTS, options: tuple[str, ...] = ()):
    """A hub for `students` (a roster in `course_dir`) started with `options`; stopped and its accounts removed on
    exit."""
    reason = hub_skip_reason()
    if reason:
        pytest.skip(reason)
    course_dir.mkdir(parents=True, exist_ok=True)
    (course_dir / "roster.csv").write_text("student_id\n" + "".join(f"{s}\n" for s in students))
    hub_dir = Path(tempfile.mkdtemp(prefix="flash-hub-test-"))  # under /tmp: students must reach its exchange
    hub = Hub(free_ports(3), hub_dir, course_dir, options=options)
    checkout_mode = ROOT.stat().st_mode  # the hub closes it to other accounts: given back after
    try:
        hub.start()
        yield hub
    finally:
        if hub.process and hub.process.poll() is None:
            hub.stop()
        remove_accounts(students)
        ROOT.chmod(checkout_mode)
        shutil.rmtree(hub_dir, ignore_errors=True)
        hub_dir.with_name(f"{hub_dir.name}.log").unlink(missing_ok=True)
