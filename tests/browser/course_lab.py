"""A student's JupyterLab for the browser suite: a temporary course root (the project's nbgrader configuration,
the release notebooks, unit 06 released to a local exchange), a user home of its own, and a `jupyter lab` on
loopback serving it. No Playwright here: the fixtures import this module even where Playwright is missing."""

import contextlib
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
COURSE_ID = "flash-attention-first-principles"
RELEASED = "06_flash_attention_pytorch"  # the unit the instructor puts in the exchange for the student tests
START_TIMEOUT_S = 90

# JupyterLab settings for the test user: no news pop-up, and every cell kept in the page (windowing off), so a
# test can read any cell of a long notebook without scrolling it into view.
LAB_SETTINGS = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false",
        "checkForUpdates": False,
    },
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
}


@dataclass(frozen=True)
class Lab:
    url: str  # ends with "/"
    token: str
    root: Path  # the server's root folder: a temporary course root
    home: Path
    log: Path

    def api(self, method: str, path: str):
        request = urllib.request.Request(f"{self.url}api/{path}", method=method)
        request.add_header("Authorization", f"token {self.token}")
        with urllib.request.urlopen(request, timeout=10) as response:
            body = response.read()
        return json.loads(body) if body else None


def chromium_executable() -> str:
    """Debian's Chromium (the COURSE_CHROMIUM path instead, if set); skips the test when there is none."""
    path = os.environ.get("COURSE_CHROMIUM") or shutil.which("chromium") or "chromium"
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        pytest.skip(
            f"浏览器测试已跳过：找不到 Chromium（{path}；以 root 运行 bash tests/browser/setup.sh 安装）"
            f" / browser suite skipped: no Chromium ({path}; bash tests/browser/setup.sh installs it, as root)"
        )
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def course_copy(root: Path) -> None:
    """A course root of its own: the project's nbgrader configuration, every release notebook, the released unit's
    source (for the formgrader and `nbgrader release_assignment`)."""
    shutil.copy(ROOT / "nbgrader_config.py", root / "nbgrader_config.py")
    shutil.copytree(ROOT / "release", root / "release")
    shutil.copytree(ROOT / "source" / RELEASED, root / "source" / RELEASED)


def user_home(home: Path, exchange: Path) -> dict:
    """The test user's home (Jupyter config with the local exchange, Lab settings); returns the server's env."""
    config = home / ".jupyter"
    config.mkdir(parents=True)
    (config / "nbgrader_config.py").write_text(
        f"c = get_config()  # noqa: F821\nc.Exchange.root = {str(exchange)!r}\n"
    )
    for name, values in LAB_SETTINGS.items():
        path = home / "lab-settings" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))
    return dict(
        os.environ,
        HOME=str(home),
        JUPYTER_CONFIG_DIR=str(config),
        JUPYTER_RUNTIME_DIR=str(home / "runtime"),
        JUPYTERLAB_SETTINGS_DIR=str(home / "lab-settings"),
        JUPYTERLAB_WORKSPACES_DIR=str(home / "lab-workspaces"),
        MPLCONFIGDIR=str(home / "matplotlib"),  # a fresh font cache: it sees the CJK font installed by setup
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",  # the kernel is this venv's python
    )


def wait_until_up(lab: Lab, server: subprocess.Popen) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"jupyter lab exited ({server.returncode}):\n{lab.log.read_text()[-3000:]}")
        try:
            lab.api("GET", "status")
            return
        except OSError:
            time.sleep(0.5)
    raise TimeoutError(f"jupyter lab did not answer in {START_TIMEOUT_S} s:\n{lab.log.read_text()[-3000:]}")


def release_to_exchange(root: Path, env: dict) -> None:
    """The instructor's `nbgrader release_assignment` of unit 06 into the local exchange."""
    release = subprocess.run(
        [sys.executable, "-m", "nbgrader", "release_assignment", RELEASED],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert release.returncode == 0, release.stdout[-2000:] + release.stderr[-2000:]


@contextlib.contextmanager
def serving(base: Path):
    """A running `jupyter lab` (loopback, a free port, a token, no browser) whose root is a course root under
    `base`, with unit 06 in a local exchange; stopped (terminated, then killed) on exit."""
    root, home, exchange = base / "course", base / "home", base / "exchange"
    root.mkdir()
    course_copy(root)
    env = user_home(home, exchange)
    release_to_exchange(root, env)
    port, token = free_port(), secrets.token_hex(16)
    log = base / "jupyter-lab.log"
    with log.open("w") as out:
        server = subprocess.Popen(
            [sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1", f"--port={port}"]
            + [
                "--ServerApp.port_retries=0",
                f"--IdentityProvider.token={token}",
                f"--ServerApp.root_dir={root}",
            ]
            + (["--allow-root"] if os.geteuid() == 0 else []),  # CI's containers run as root
            cwd=root,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    running = Lab(f"http://127.0.0.1:{port}/", token, root, home, log)
    try:
        wait_until_up(running, server)
        yield running
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=10)
