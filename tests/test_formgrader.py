"""`course formgrader` (issue 46, item 2): JupyterLab's formgrader works on the course folder. The guide's former
launch, `jupyter lab` in the checkout, serves formgrader's error (the course folder lies outside the server's
root); the command's launch answers formgrader's API with the course's units. Each case starts one real server
(~10 s); no browser (the formgrader's pages in Chromium are the browser suite's)."""

import json
import os
import secrets
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest
from handgrade_fixture import UNIT, make_course

from course import ROOT
from course.grading import formgrader


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def assignments(url: str, token: str, server: subprocess.Popen, seconds: float = 120) -> tuple[int, str]:
    """(status, body) of formgrader's list of assignments, once the server answers."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert server.poll() is None, "jupyter lab exited"
        request = urllib.request.Request(f"{url}formgrader/api/assignments")
        request.add_header("Authorization", f"token {token}")
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status, response.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode(errors="replace")
        except OSError:
            time.sleep(0.5)
    raise TimeoutError("jupyter lab did not answer")


@pytest.mark.parametrize("launch", ["course formgrader", "jupyter lab in the checkout"])
def test_formgrader_works_on_the_course_folder_only_through_the_command(launch, tmp_path):
    course = make_course(tmp_path / "course", ROOT)
    port, token = free_port(), secrets.token_hex(16)
    options = ["--no-browser", "--ip=127.0.0.1", f"--port={port}", "--ServerApp.port_retries=0"]
    options += [f"--IdentityProvider.token={token}"] + (["--allow-root"] if os.geteuid() == 0 else [])
    env = formgrader.environment(course) | {
        "JUPYTER_CONFIG_DIR": str(tmp_path / "config"),
        "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
    }
    if launch == "course formgrader":
        argv = formgrader.command(course, options)
    else:
        argv = [sys.executable, "-m", "jupyterlab", *options]
    with (tmp_path / "lab.log").open("w") as log:
        server = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        status, body = assignments(f"http://127.0.0.1:{port}/", token, server)
    finally:
        server.terminate()
        server.wait(timeout=30)
    logged = (tmp_path / "lab.log").read_text()
    if launch == "course formgrader":
        assert status == 200 and "not a subdirectory" not in logged
        assert {a["name"]: a["num_submissions"] for a in json.loads(body)}[UNIT] == 3  # the course's students
    else:  # formgrader's error page (with status 200) instead of the list
        assert "not a subdirectory of the notebook server root" in logged
        assert UNIT not in body and not body.startswith("[")
