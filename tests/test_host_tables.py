"""The host's file and pid tables stay ahead of the sum of every grading's limits (`course.judge.tables`), on a
faked small host: the real tables are only read, never filled."""

from __future__ import annotations

import pytest

from course import doctor
from course.grading import runner
from course.judge import cgroup, sandbox, tables

SMALL = {"files": (20_000, 1_000_000), "tasks": (300, 32_768)}  # a small VM's tables, partly in use


@pytest.fixture
def small_host(monkeypatch):
    monkeypatch.setattr(tables, "read", lambda: SMALL)


def limits_of(argv: list[str]) -> dict[str, int]:
    return {
        arg[2:].split("=")[0]: int(arg.split("=")[1]) for arg in argv if arg.startswith("--") and "=" in arg
    }


def test_every_gradings_limits_together_fit_in_the_hosts_tables(small_host, monkeypatch, tmp_path):
    """(e) A grading may run `nproc` tasks, each opening `nofile` files: 16 jobs at once (32 gradings) at 2048 × 4096
    could ask 268 million files of a table of one million, and 65,536 task ids of 32,768, which stops the host
    for everyone. Each job's sandboxes get limits that, for all its host's jobs together, fit in half of what each
    table has free."""
    monkeypatch.setattr(runner, "worker_env", lambda threads: {})
    for name, value in runner.job_env(None, tmp_path, None, at_once=16).items():
        monkeypatch.setenv(name, value)
    limits = limits_of(sandbox.limits_argv())
    gradings = cgroup.SANDBOXES_PER_JOB * 16
    (files, most_files), (tasks, most_tasks) = SMALL["files"], SMALL["tasks"]
    assert gradings * limits["nofile"] * limits["nproc"] <= (most_files - files) / 2
    assert gradings * limits["nproc"] <= (most_tasks - tasks) / 2


def test_too_many_jobs_for_the_tables_are_lowered_with_a_warning(small_host, capsys):
    """The grader's pool runs no more jobs at once than leave each grading at least `tables.FLOOR`."""
    jobs = tables.fit_jobs(64, sandbox.LIMITS)
    said = capsys.readouterr().out
    found = tables.limits_for(jobs, sandbox.LIMITS, SMALL)
    assert 1 <= jobs < 64 and found.nofile >= tables.FLOOR["nofile"] and found.nproc >= tables.FLOOR["nproc"]
    one_more = tables.limits_for(jobs + 1, sandbox.LIMITS, SMALL)
    assert one_more.nofile < tables.FLOOR["nofile"] or one_more.nproc < tables.FLOOR["nproc"]
    assert f"grading {jobs} at a time" in said and f"改为同时评 {jobs} 份" in said
    assert "each grading may open" in said and "每次评分的上限降为" in said


def test_a_jobs_environment_never_raises_its_limits(monkeypatch):
    monkeypatch.setenv(tables.LIMITS_ENV, "nofile=999999,nproc=7")
    assert tables.fitted(sandbox.LIMITS) == {**sandbox.LIMITS, "nproc": 7}


def test_course_check_says_how_the_tables_lower_each_gradings_limits(small_host, monkeypatch):
    monkeypatch.setattr(doctor.os, "cpu_count", lambda: 16)
    line = doctor.tables_line()
    assert (
        line.startswith(doctor.WARN)
        and "open files 20000/1000000" in line
        and "each grading may open" in line
    )
    monkeypatch.setattr(tables, "read", lambda: {"files": (0, 1 << 62), "tasks": (0, 1 << 22)})
    assert doctor.tables_line().startswith(doctor.OK)


def test_a_host_without_the_tables_keeps_its_jobs_and_limits(monkeypatch, capsys, tmp_path):
    """Off Linux (no /proc) nothing is lowered and nothing fails: `course check` says the tables are unknown."""
    monkeypatch.setattr(tables, "Path", lambda path: tmp_path / "no-proc" / path.lstrip("/"))
    assert tables.fit_jobs(8, sandbox.LIMITS) == 8 and capsys.readouterr().out == ""
    assert tables.job_env(8, sandbox.LIMITS) == {}
    assert doctor.tables_line().startswith(doctor.OK)
