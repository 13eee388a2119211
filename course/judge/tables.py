"""The host's tables every grading draws on: open files (`/proc/sys/fs/file-max`) and task ids (`pid_max`, a thread
takes one too).

A grading may run `nproc` tasks (its uid's RLIMIT_NPROC), each with `nofile` open files (RLIMIT_NOFILE): the
gradings that run at once, all at their limits, must stay within HOST_SHARE of what each table has free, or one
class's gradings could fill a table and stop the host (no process could open a file or start). `limits_for` lowers the
per-grading limits to that; `fit` lowers them down to FLOOR, and then the jobs at once. The grader's pool says so before a run
(`fit_jobs`), each job's sandboxes use the limits fitted at the job's start (`job_env`, LIMITS_ENV), and
`course check` prints them (`line`).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path

from course.judge import cgroup
from utils.messages import bilingual

HOST_SHARE = 0.5  # of each table's free entries, what all gradings at once may take (the host keeps the rest)
FLOOR = {"nofile": 256, "nproc": 128}  # limits below which fewer jobs run at once rather than lower limits
LIMITS_ENV = "COURSE_GRADING_LIMITS"  # in a job's environment: "nofile=N,nproc=N", the limits fitted for it


@dataclass
class Fit:
    jobs: int
    nofile: int
    nproc: int


def read() -> dict[str, tuple[int, int]] | None:
    """{"files": (in use, most), "tasks": (in use, most)} of this host; None where there is no such /proc (off
    Linux, where a grading has no sandbox to limit)."""
    try:
        allocated, unused, most = map(int, Path("/proc/sys/fs/file-nr").read_text().split())
        tasks = int(Path("/proc/loadavg").read_text().split()[3].split("/")[1])
        return {
            "files": (allocated - unused, most),
            "tasks": (tasks, int(Path("/proc/sys/kernel/pid_max").read_text())),
        }
    except (OSError, ValueError, IndexError):
        return None


def limits_for(jobs: int, limits: dict[str, int], tables: dict[str, tuple[int, int]]) -> Fit:
    """Per-grading limits (at most `limits`) whose gradings, `jobs` at once at their limits, take at most HOST_SHARE
    of each table's free entries: nofile and nproc lowered by one factor within the file table (nofile × nproc
    files a grading), nproc within the task table."""
    files, tasks = (int(HOST_SHARE * (most - used)) for used, most in (tables["files"], tables["tasks"]))
    gradings = cgroup.SANDBOXES_PER_JOB * jobs
    room = max(0, files) // gradings  # the files one grading may hold
    scale = min(1.0, math.sqrt(room / (limits["nofile"] * limits["nproc"])))
    nproc = max(1, min(int(limits["nproc"] * scale), tasks // gradings))
    return Fit(jobs, max(1, min(limits["nofile"], room // nproc)), nproc)


def fit(jobs: int, limits: dict[str, int], tables: dict[str, tuple[int, int]]) -> Fit:
    """`limits_for` the most jobs at once, at most `jobs`, that leave each grading at least FLOOR."""
    found = limits_for(jobs, limits, tables)
    while found.jobs > 1 and (found.nofile < FLOOR["nofile"] or found.nproc < FLOOR["nproc"]):
        found = limits_for(found.jobs - 1, limits, tables)
    return found


def fit_jobs(jobs: int, limits: dict[str, int]) -> int:
    """The jobs a run starts at once (`jobs`, fewer where the host's tables are too small), saying so, and how the
    per-grading limits are lowered, in both languages."""
    tables = read()
    if tables is None:
        return jobs
    found = fit(jobs, limits, tables)
    if found.jobs < jobs:
        print(
            bilingual(
                f"注意：主机的文件表或进程号表放不下同时 {jobs} 份评分的上限，改为同时评 {found.jobs} 份",
                f"warning: the host's file or pid table cannot hold the limits of {jobs} gradings at once: "
                f"grading {found.jobs} at a time",
            )
        )
    if (found.nofile, found.nproc) != (limits["nofile"], limits["nproc"]):
        print(bilingual(*lowered(found, limits)))
    return found.jobs


def lowered(found: Fit, limits: dict[str, int]) -> tuple[str, str]:
    return (
        f"为了不超出主机的文件表与进程号表，每次评分的上限降为 {found.nofile} 个打开的文件（原为 {limits['nofile']}）、"
        f"{found.nproc} 个进程与线程（原为 {limits['nproc']}）",
        f"to stay within the host's file and pid tables, each grading may open {found.nofile} files (was "
        f"{limits['nofile']}) in each of {found.nproc} processes and threads (was {limits['nproc']})",
    )


def job_env(at_once: int, limits: dict[str, int]) -> dict[str, str]:
    """LIMITS_ENV for a job that runs with `at_once` jobs on this host (the limits fitted now)."""
    tables = read()
    if tables is None:
        return {}
    found = limits_for(at_once, limits, tables)
    return {LIMITS_ENV: f"nofile={found.nofile},nproc={found.nproc}"}


def fitted(limits: dict[str, int]) -> dict[str, int]:
    """`limits`, lowered as the job's environment says (LIMITS_ENV), never raised."""
    lower = dict(item.split("=") for item in os.environ.get(LIMITS_ENV, "").split(",") if "=" in item)
    return {name: min(value, int(lower.get(name, value))) for name, value in limits.items()}


def line(jobs: int, limits: dict[str, int]) -> tuple[bool, str]:
    """(whether the limits stand as they are, `course check`'s line) for `jobs` at once here."""
    tables = read()
    if tables is None:
        return True, bilingual(
            "主机表：这里读不到（没有 /proc）", "host tables: not readable here (no /proc)"
        )
    found = fit(jobs, limits, tables)
    (files, most_files), (tasks, most_tasks) = tables["files"], tables["tasks"]
    zh = f"主机表：打开的文件 {files}/{most_files}，进程与线程 {tasks}/{most_tasks}；同时评 {jobs} 份时"
    en = f"host tables: open files {files}/{most_files}, tasks {tasks}/{most_tasks}; {jobs} at once:"
    if found.jobs < jobs:
        zh, en = zh + f"只能同时评 {found.jobs} 份，", en + f" only {found.jobs} fit,"
    if (found.nofile, found.nproc) == (limits["nofile"], limits["nproc"]):
        return found.jobs == jobs, bilingual(zh + "每次评分的上限不变", en + " each grading keeps its limits")
    reason_zh, reason_en = lowered(found, limits)
    return False, bilingual(zh + reason_zh, f"{en} {reason_en}")
