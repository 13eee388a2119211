"""Run `course.grading.worker` jobs in child processes with a wall-clock limit (the parent never imports nbgrader)."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

from course import ROOT
from course.judge import bytecode, cgroup, sandbox, tables, triton_reference
from utils.judged.triton_cache import REFERENCE_ENV
from utils.measure import LOCK_DIR_ENV


def worker_env(threads: int | None = None) -> dict[str, str]:
    """The grader's environment, inherited by every notebook kernel: quiet progress bars, this Python first on
    PATH, and `threads` CPU threads per process (unless OMP_NUM_THREADS is set) when jobs share the cores."""
    env = dict(os.environ)
    if threads:
        env.setdefault("OMP_NUM_THREADS", str(threads))
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    env["TQDM_DISABLE"] = "1"  # a progress bar in graded code writes to stderr, which zeroes a test cell
    env["PYTHONUNBUFFERED"] = "1"
    env.setdefault(LOCK_DIR_ENV, lock_folder())  # each job's TMPDIR is its own: the GPU timing locks are not
    if (compiled := bytecode.prepare()) is not None:  # sandboxes read the environment's bytecode from there
        env["PYTHONPYCACHEPREFIX"] = str(compiled)
    if (reference := triton_reference.prepare()) is not None:  # the sandboxes read the course's kernels there
        env[REFERENCE_ENV] = str(reference)
    return env


@functools.cache
def lock_folder() -> str:
    """The folder of the GPU timing locks every grader of this user shares: in the user's own cache, which no other
    account can write (in the shared temp folder any local account, a student on the hub's host, could make the
    lock file first and hold it, stalling every timing); a private temporary folder where that cannot be."""
    folder = Path.home() / ".cache" / "flash-course-locks"
    with contextlib.suppress(OSError):
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        found = os.lstat(folder)
        if stat.S_ISDIR(found.st_mode) and found.st_uid == os.getuid() and not found.st_mode & 0o022:
            return str(folder)
    return tempfile.mkdtemp(prefix="flash-course-locks-")


def job_env(threads: int | None, scratch: Path, gpu: str | None, at_once: int = 1) -> dict[str, str]:
    """A job's environment: `worker_env`, its own temporary folder, the one GPU it runs on when given, and how many
    jobs run on this host at once (each grading's memory is its share of what they may hold together)."""
    env = {**worker_env(threads), "TMPDIR": str(scratch), cgroup.AT_ONCE_ENV: str(at_once)}
    env |= tables.job_env(at_once, sandbox.LIMITS)  # its sandboxes' limits, as this host's tables allow
    if gpu is not None:
        env["CUDA_VISIBLE_DEVICES"] = gpu
    return env


def kill_tree(pid: int) -> None:
    """Kill a process and all its descendants (Jupyter starts kernels in sessions of their own)."""
    import psutil

    try:
        parent = psutil.Process(pid)
    except psutil.NoSuchProcess:
        return
    for proc in [*parent.children(recursive=True), parent]:
        try:
            proc.kill()
        except psutil.NoSuchProcess:
            pass


JOB_PREFIX = "course-job-"  # + the grader's pid: a folder whose grader is gone was left by a killed run


def abandoned_jobs() -> list[Path]:
    """The job folders of graders that were killed before they could clean up: folders of this user's own (in the
    shared temp folder any local account may make one of that name, a link to a running job's among them)."""
    import psutil

    found = []
    for folder in Path(tempfile.gettempdir()).glob(f"{JOB_PREFIX}*-*"):
        pid = folder.name.removeprefix(JOB_PREFIX).split("-")[0]
        with contextlib.suppress(OSError):
            made = os.lstat(folder)
            ours = stat.S_ISDIR(made.st_mode) and made.st_uid == os.getuid()
            if ours and pid.isdigit() and not psutil.pid_exists(int(pid)):
                found.append(folder)
    return found


def sweep_abandoned_jobs() -> None:
    """Remove abandoned job folders, and the sandboxes in them."""
    for folder in abandoned_jobs():
        sandbox.unmount_under(folder)
        shutil.rmtree(folder, ignore_errors=True)


def run_job(
    request: dict,
    timeout: float,
    log: Path | None = None,
    threads: int | None = None,
    gpu: str | None = None,
    at_once: int = 1,
) -> tuple[dict, bool]:
    """(results, timed_out) of one worker job, on the GPU `gpu` when given (a name `CUDA_VISIBLE_DEVICES` takes),
    one of `at_once` jobs on this host; results hold whatever finished before a timeout."""
    sweep_abandoned_jobs()
    with (
        tempfile.TemporaryDirectory(prefix=f"{JOB_PREFIX}{os.getpid()}-") as tmp,
        contextlib.ExitStack() as stack,
    ):
        request_path, result_path = Path(tmp) / "request.json", Path(tmp) / "result.json"
        request_path.write_text(json.dumps(request), encoding="utf-8")
        sink = stack.enter_context(open(log, "a", encoding="utf-8")) if log else subprocess.DEVNULL
        scratch = Path(tmp) / "scratch"  # every sandbox of the job lives here: removed even when it is killed
        scratch.mkdir()
        stack.callback(sandbox.unmount_under, scratch)  # what a killed worker left mounted, before removal
        proc = subprocess.Popen(
            [sys.executable, "-m", "course.grading.worker", str(request_path), str(result_path)],
            cwd=ROOT,
            env=job_env(threads, scratch, gpu, at_once),
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
        try:
            proc.wait(timeout=timeout)
            timed_out = False
        except subprocess.TimeoutExpired:
            kill_tree(proc.pid)
            proc.wait()
            timed_out = True
        results = json.loads(result_path.read_text(encoding="utf-8")) if result_path.exists() else {}
        return results, timed_out
