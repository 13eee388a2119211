"""The browser suite's fixtures: a real `jupyter lab` on loopback, run from a temporary copy of the course root with
the project's nbgrader configuration and a local exchange, and Debian's Chromium driven by Playwright.

Without Chromium or Playwright every browser test is skipped, and the skip reason says why (`pytest -ra`).
A failing test saves a screenshot and the server's log under FAILURES and names the files in its report.
"""

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
FAILURES = Path(os.environ.get("COURSE_BROWSER_FAILURES", ROOT / "tests" / "browser" / "failures"))
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
    """Debian's Chromium (COURSE_CHROMIUM overrides); skips the test when it is missing."""
    path = os.environ.get("COURSE_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not path:
        pytest.skip(
            "浏览器测试已跳过：没有安装 Chromium（运行 bash tests/browser/setup.sh）"
            " / browser suite skipped: Chromium is not installed (run bash tests/browser/setup.sh as root)"
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


@pytest.fixture(scope="session")
def lab(tmp_path_factory):
    """A running `jupyter lab` (loopback, free port, token, no browser) whose root is a temporary course root, with
    unit 06 released to a local exchange; stopped at the end of the session."""
    chromium_executable()  # no server without a browser to drive it
    base = tmp_path_factory.mktemp("lab")
    root, home, exchange = base / "course", base / "home", base / "exchange"
    root.mkdir()
    course_copy(root)
    env = user_home(home, exchange)
    release = subprocess.run(
        [sys.executable, "-m", "nbgrader", "release_assignment", RELEASED],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert release.returncode == 0, release.stdout[-2000:] + release.stderr[-2000:]
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


@pytest.fixture(scope="session")
def browser(lab):
    """Headless Chromium from Debian (never a Playwright download)."""
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="browser suite skipped: the playwright package is not installed"
    )
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=chromium_executable(), headless=True)
        yield chromium
        chromium.close()


@pytest.fixture
def page(lab, browser):
    """A fresh browser page on JupyterLab in a workspace of its own; its kernels are shut down afterwards."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(30_000)
    page.goto(f"{lab.url}lab/workspaces/{secrets.token_hex(4)}?reset&token={lab.token}")
    page.locator("#jp-main-dock-panel").wait_for()
    page.locator("#jupyterlab-splash").wait_for(state="detached")
    yield page
    context.close()
    for session in lab.api("GET", "sessions"):
        lab.api("DELETE", f"sessions/{session['id']}")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """On a failure, a screenshot of the page and the server's log under FAILURES, named in the report."""
    outcome = yield
    report = outcome.get_result()
    page, lab = item.funcargs.get("page"), item.funcargs.get("lab")
    if report.when != "call" or not report.failed or page is None:
        return
    FAILURES.mkdir(parents=True, exist_ok=True)
    name = "".join(c if c.isalnum() or c in "-_." else "_" for c in item.name)
    saved = []
    try:
        page.screenshot(path=FAILURES / f"{name}.png", full_page=True)
        saved.append(f"{name}.png")
    except Exception as error:  # the page may be gone; the report still says where to look
        saved.append(f"(no screenshot: {error})")
    if lab is not None:
        shutil.copy(lab.log, FAILURES / f"{name}.jupyter-lab.log")
        saved.append(f"{name}.jupyter-lab.log")
    report.sections.append(("browser failure", f"saved under {FAILURES}: {', '.join(saved)}"))
