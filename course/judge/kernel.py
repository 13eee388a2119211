"""The notebook's own kernel in the sandbox too: nbgrader's Execute, with a kernel manager that launches
ipykernel through `course.judge.sandbox` and talks to it over unix sockets in its working copy.

While autograding, the student's notebook runs its cells (the visible self-checks among them). In the sandbox
that kernel cannot read `source/` or other students' files, change the judge or the gradebook, reach the
network, or signal processes outside its namespace; every process it starts dies with it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import stat
import threading
import time
import weakref
from datetime import datetime
from pathlib import Path

from jupyter_client.manager import AsyncKernelManager
from nbclient.exceptions import DeadKernelError
from nbgrader.preprocessors import Execute
from traitlets import Unicode

from course import ROOT
from course.judge import sandbox, triton_stats, units

# Notebook metadata: why the kernel died (the judge graded the notebook anyway).
KERNEL_DIED = "flash_course_kernel_died"
# resources: the notebook's stages, seconds (`SandboxedExecute.stages`, read by `course.judge.preprocessor`)
STAGES = "flash_course_stages"
# resources: (uid, Triton cache) the judge of the notebook shares with its kernel (`StartJudge`)
SHARED = "flash_course_shared"


def cell_seconds(cell) -> float:
    """Seconds the kernel spent in `cell`, from nbclient's timestamps (0 for a cell it did not run)."""
    timing = cell.get("metadata", {}).get("execution", {})
    try:
        started = datetime.fromisoformat(timing["iopub.execute_input"].replace("Z", "+00:00"))
        ended = datetime.fromisoformat(timing["shell.execute_reply"].replace("Z", "+00:00"))
    except (KeyError, TypeError, ValueError):
        return 0.0
    return (ended - started).total_seconds()


class SandboxedKernelManager(AsyncKernelManager):
    """A kernel manager whose kernel runs in the sandbox ("none": an ordinary local kernel)."""

    sandbox = Unicode("auto", help="'auto', 'namespaces' (required) or 'none'").tag(config=True)

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.mechanism, _ = sandbox.choose(self.sandbox)
        self.triton_cache: Path | None = None  # the kernel's own in its home, unless shared with the judge
        if self.mechanism != "none":
            self.use_workspace(sandbox.workspace("course-kernel-"))

    def use_workspace(self, work: Path) -> None:
        self.work = work
        weakref.finalize(self, shutil.rmtree, self.work, True)
        self.owner = sandbox.owner_of(self.work)
        sockets = sandbox.private_folder(self.work / "ipc", self.owner)
        self.transport, self.ip = "ipc", str(sockets / "kernel")
        self.connection_file = str(self.work / "kernel.json")

    def share_with_judge(self, owner: int, triton_cache: Path) -> None:
        """Before the start: run as the uid of the judge of the same notebook, with its Triton cache, so the
        student's kernels compile once for the kernel, its self-check children and the judge's children (one
        student's code, one notebook); the judge kills that uid's processes once both are done."""
        if self.mechanism == "none":
            return
        shutil.rmtree(self.work, ignore_errors=True)
        self.use_workspace(sandbox.workspace("course-kernel-", owner))
        self.triton_cache = triton_cache

    async def _async_pre_start_kernel(self, **kw):
        kernel_cmd, kw = await super()._async_pre_start_kernel(**kw)
        if self.mechanism == "none":
            return kernel_cmd, kw
        if os.geteuid() == 0:
            os.chown(self.connection_file, self.owner, self.owner)  # the kernel runs as the sandbox's uid
        cwd = self.work / "home" / "notebook"
        sandbox.copy_plain_tree(
            Path(kw.get("cwd") or "."), cwd, self.owner
        )  # the submission's files, no links
        argv, env = sandbox.command(
            kernel_cmd, self.work, self.mechanism, cwd=cwd, triton_cache=self.triton_cache
        )
        self.log_file = open(self.work / "kernel.log", "ab")  # noqa: SIM115 (the kernel's, closed with the manager)
        weakref.finalize(self, self.log_file.close)
        # not the grader's own stdout and stderr (its log, its terminal): a file the quota bounds
        return argv, {**kw, "env": env, "cwd": str(ROOT), "stdout": self.log_file, "stderr": self.log_file}

    async def _async_post_start_kernel(self, **kw):
        await super()._async_post_start_kernel(**kw)
        if self.mechanism == "none":
            return
        self.quota_watch = QuotaWatch(self.work, self.provisioner.pid, self.triton_cache)
        self.quota_watch.start()
        weakref.finalize(self, self.quota_watch.done.set)
        if self.triton_cache is None:  # a uid of its own (else the judge's, which kills its processes)
            weakref.finalize(self, sandbox.kill_processes_of, self.owner)
        await self.guard_sockets()

    async def guard_sockets(self, wait: float = 60.0) -> None:
        """Move the kernel's sockets, once it has bound them, out of the folder it can write, so that the
        grader's client never connects through a link the kernel put in their place (zmq reconnects by path)."""
        ports = [self.shell_port, self.iopub_port, self.stdin_port, self.control_port, self.hb_port]
        made = [Path(f"{self.ip}-{port}") for port in ports]
        deadline = time.monotonic() + wait
        while not all(path.exists() for path in made) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        guarded = self.work / "sockets"
        guarded.mkdir(mode=0o700, exist_ok=True)
        for path in made:
            with contextlib.suppress(FileNotFoundError):
                if stat.S_ISSOCK(os.lstat(path).st_mode):
                    os.rename(path, guarded / path.name)
        self.ip = str(guarded / Path(self.ip).name)


class QuotaWatch(threading.Thread):
    """Kills a sandboxed kernel whose working copy (and Triton cache, when shared with the judge) outgrows
    `sandbox.DISK_QUOTA` (the notebook then counts as a kernel that died: the judge still grades every test cell)."""

    def __init__(self, work: Path, pid: int, triton_cache: Path | None = None):
        super().__init__(daemon=True)
        self.work, self.pid, self.done = work, pid, threading.Event()
        self.triton_cache = triton_cache

    def run(self) -> None:
        while not self.done.wait(sandbox.QUOTA_POLL) and self.work.exists():
            cache = sandbox.bytes_used(self.triton_cache) if self.triton_cache else 0
            if sandbox.bytes_used(self.work) + cache > sandbox.DISK_QUOTA:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(self.pid, signal.SIGKILL)  # bwrap's sandbox dies with it (--die-with-parent)
                return


class SandboxedExecute(Execute):
    """nbgrader's Execute preprocessor, with the notebook's kernel in the sandbox.

    In a notebook the judge grades, a kernel that dies costs only what it had left to run (the judge still
    grades every test cell, and the notebook's metadata says the kernel died, for the status); elsewhere it
    fails the notebook as before, since nbgrader would count an unexecuted test cell as passed.
    """

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("kernel_manager_class", SandboxedKernelManager)
        super().__init__(*args, **kwargs)

    def preprocess(self, nb, resources=None, km=None):
        self.started, self.kernel_ready, self.manager = time.monotonic(), None, None
        self.shared = (resources or {}).get(SHARED)
        try:
            return super().preprocess(nb, resources, km)
        except DeadKernelError as error:
            notebook = f"{(resources or {}).get('nbgrader', {}).get('notebook', '')}.ipynb"
            if notebook not in units.UNITS:
                raise
            self.log.warning("kernel died while running %s (%s); the judge grades it anyway", notebook, error)
            nb.metadata[KERNEL_DIED] = str(error)[:500]
            return nb, resources
        finally:
            if resources is not None:
                resources[STAGES] = self.stages(nb)

    def create_kernel_manager(self):
        self.manager = super().create_kernel_manager()
        if self.shared is not None:
            self.manager.share_with_judge(*self.shared)
        return self.manager

    def start_new_kernel_client(self):  # nbconvert's Execute starts the kernel through the blocking calls
        client = super().start_new_kernel_client()
        self.kernel_ready = time.monotonic()
        return client

    def stages(self, nb) -> dict[str, float]:
        """Seconds of the notebook's run: the kernel's start (sandbox, interpreter, connection), its first code
        cell (the imports), the test cells (their visible self-checks), the other cells, the whole; and the
        kernels its processes compiled (their Triton cache, `course.judge.triton_stats`)."""
        cells = [cell for cell in nb.cells if cell.cell_type == "code"]
        seconds = [cell_seconds(cell) for cell in cells]
        tests = sum(
            s
            for cell, s in zip(cells, seconds, strict=True)
            if cell.metadata.get("nbgrader", {}).get("grade")
        )
        found = {
            "notebook": time.monotonic() - self.started,
            "kernel start": (self.kernel_ready or self.started) - self.started,
            "imports": seconds[0] if seconds else 0.0,
            "self-checks": tests,
            "other cells": sum(seconds[1:]) - tests,
        }
        work = getattr(self.manager, "work", None)
        if work is None or self.shared is not None:  # no cache of its own: the judge counts the shared one
            return found
        return found | triton_stats.stages("notebook", work / "home" / ".triton")
