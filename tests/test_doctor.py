"""`python -m course check`: reports the mode, versions and known-bad combinations."""

import subprocess
import sys

import torch

from course import doctor


def test_known_bad_triton_numpy_combination_is_flagged_only_in_interpreter_mode():
    bad = {"triton": "3.6.0", "numpy": "2.4.1"}
    assert any("triton>=3.7" in w for w in doctor.known_bad(bad, interpreter=True))
    assert doctor.known_bad(bad, interpreter=False) == []
    assert doctor.known_bad({"triton": "3.7.0", "numpy": "2.4.1"}, interpreter=True) == []
    assert doctor.known_bad({"triton": "3.6.0", "numpy": "2.3.5"}, interpreter=True) == []


def test_version_parsing_handles_local_and_dev_tags():
    assert doctor.as_tuple("2.13.0+cpu") == (2, 13, 0)
    assert doctor.as_tuple("3.6.0rc1") == (3, 6, 0)
    assert doctor.as_tuple("2.4") == (2, 4)


def test_check_command_reports_this_machine():
    out = subprocess.run(
        [sys.executable, "-m", "course", "check"], capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stdout + out.stderr
    expected = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "CPU (Triton interpreter)"
    assert expected in out.stdout
    for dist in ("python", "torch", "triton", "numpy", "nbgrader"):
        assert dist in out.stdout
    assert "nbgrader" in out.stdout and ("CJK font" in out.stdout or "no CJK font" in out.stdout)


def test_the_sandbox_line_says_whether_gradings_get_a_memory_cgroup(monkeypatch):
    from course.judge import cgroup, sandbox

    monkeypatch.setattr(sandbox, "choose", lambda requested: ("bubblewrap", "allow-list root"))
    monkeypatch.setattr(cgroup, "unavailable", lambda: None)
    monkeypatch.setattr(sandbox, "workspaces_bounded", lambda: True)
    assert (
        doctor.sandbox_line().startswith(doctor.OK)
        and "each in a cgroup of 1/(2 × jobs at once)" in doctor.sandbox_line()
    )
    monkeypatch.setattr(cgroup, "unavailable", lambda: "the grader is not root")
    line = doctor.sandbox_line()
    assert line.startswith(doctor.WARN) and "no memory cgroup: the grader is not root" in line


def test_the_sandbox_line_says_where_working_copies_live(monkeypatch):
    from course.judge import cgroup, sandbox

    monkeypatch.setattr(sandbox, "choose", lambda requested: ("bubblewrap", "allow-list root"))
    monkeypatch.setattr(cgroup, "unavailable", lambda: None)
    monkeypatch.setattr(sandbox, "workspaces_bounded", lambda: True)
    assert "working copies on a 1 GiB tmpfs" in doctor.sandbox_line()
    monkeypatch.setattr(sandbox, "workspaces_bounded", lambda: False)
    line = doctor.sandbox_line()
    assert line.startswith(doctor.WARN) and "host's disk, bounded by the 2 s watch alone" in line
