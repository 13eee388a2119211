"""The notebook's own kernel in the sandbox too: nbgrader's Execute, with a kernel manager that launches
ipykernel through `course.judge.sandbox` and talks to it over unix sockets in its working copy.

While autograding, the student's notebook runs its cells (the visible self-checks among them). In the sandbox
that kernel cannot read `source/` or other students' files, change the judge or the gradebook, reach the
network, or signal processes outside its namespace; every process it starts dies with it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import stat
import threading
import time
import weakref
from datetime import datetime
from pathlib import Path
from queue import Empty

import zmq
from jupyter_client.channels import AsyncZMQSocketChannel
from jupyter_client.manager import AsyncKernelManager
from nbclient.exceptions import DeadKernelError
from nbformat.v4 import new_output
from nbgrader.preprocessors import Execute
from traitlets import Unicode

from course import ROOT
from course.judge import cgroup, outputs, relay, sandbox, triton_stats, units

# Notebook metadata: why the kernel died (the judge graded the notebook anyway).
KERNEL_DIED = "flash_course_kernel_died"
# resources: the notebook's stages, seconds (`SandboxedExecute.stages`, read by `course.judge.preprocessor`)
STAGES = "flash_course_stages"
# resources: the indices of the cells whose execute reply came (`SandboxedExecute.on_cell_executed`); a test cell
# not among them never ran (its visible self-check neither passed nor failed)
RAN = "flash_course_ran"
# seconds nbclient waits, once a cell's reply came, for the rest of its outputs (its default, 4, drops them unseen
# on a busy host); a kernel that dies ends the wait
IOPUB_WAIT = 30
# resources: (uid, Triton cache) the judge's children of the notebook share (`StartJudge`), never with its kernel:
# the kernel runs code the scan never reads (added cells), which would plant there what those children load
SHARED = "flash_course_shared"
HELD_OUTPUT = 4 * outputs.MAX_CELL  # bytes of one cell's outputs the grader holds before it bounds them
# bytes of all the grader holds for a notebook: its outputs, widget and comm state, displays' updates and ids
HELD_NOTEBOOK = 4 * outputs.MAX_NOTEBOOK
# of one message from the kernel, what the relay passes on: bytes (the largest output kept is 1 MiB), frames (a
# widget's buffers among them), JSON values (each ~100 bytes once parsed)
MAX_MESSAGE, MAX_FRAMES, MAX_VALUES = 4 << 20, 64, 1 << 16
# the kernel's messages nbclient handles: another kind is dropped (nbclient would log each, its type in full)
HANDLED = ("status", "execute_input", "stream", "display_data", "execute_result", "error", "clear_output")
HANDLED += ("update_display_data", "comm_open", "comm_msg", "comm_close")
SHELL_POLL = 1.0  # seconds the grader waits on the kernel's shell socket before it looks at the socket again


def json_size(value) -> int:
    return len(json.dumps(value))


def message_size(msg) -> int:
    """Bytes of a message's content and buffers (what the grader may keep of it)."""
    return json_size(msg["content"]) + sum(len(buffer) for buffer in msg.get("buffers") or [])


def cell_seconds(cell) -> float:
    """Seconds the kernel spent in `cell`, from nbclient's timestamps (0 for a cell it did not run)."""
    timing = cell.get("metadata", {}).get("execution", {})
    try:
        started = datetime.fromisoformat(timing["iopub.execute_input"].replace("Z", "+00:00"))
        ended = datetime.fromisoformat(timing["shell.execute_reply"].replace("Z", "+00:00"))
    except (KeyError, TypeError, ValueError):
        return 0.0
    return (ended - started).total_seconds()


class SteppedShellChannel(AsyncZMQSocketChannel):
    """The shell channel, whose long waits look at the socket every SHELL_POLL seconds. An Output widget (the
    sliders of units 03 and 04) sends its updates on this socket while nbclient waits on it for the cell's reply,
    and a send can consume the wake-up of a zmq socket's edge-triggered descriptor: the reply then lay unread in
    the socket until the cell's timeout, 600 s (jupyter/nbclient#312; caught live in CI's selftest sample). A new
    wait checks the socket at once."""

    async def get_msg(self, timeout: float | None = None) -> dict:
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            try:
                return await super().get_msg(timeout=SHELL_POLL if left is None else min(SHELL_POLL, left))
            except Empty:
                if left is not None and left <= SHELL_POLL:
                    raise


class SteppedKernelManager(AsyncKernelManager):
    """A kernel manager whose clients' shell channel waits in steps (`SteppedShellChannel`): the grader's, and the
    tests' runs of whole notebooks."""

    def client(self, **kwargs):
        client = super().client(**kwargs)
        client.shell_channel_class = SteppedShellChannel  # its channels are made later
        return client


class SandboxedKernelManager(SteppedKernelManager):
    """A kernel manager whose kernel runs in the sandbox ("none": an ordinary local kernel)."""

    sandbox = Unicode(
        "auto",
        help="'auto' (bubblewrap or refused), 'allow-weaker', 'bubblewrap', 'namespaces' or 'none' (`sandbox.choose`)",
    ).tag(config=True)

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.mechanism, _ = sandbox.choose(self.sandbox)
        if self.mechanism != "none":
            self.use_workspace(sandbox.workspace("course-kernel-"))

    def client(self, **kwargs):
        """The grader's client of the kernel (through its relay, `start_relay`), whose sockets queue at most
        `relay.QUEUED` messages and refuse one over MAX_MESSAGE, and whose shell channel waits in steps
        (`SteppedShellChannel`)."""
        client = super().client(**kwargs)
        if self.mechanism != "none":  # for the channels' sockets, made later
            client.context.setsockopt(zmq.MAXMSGSIZE, MAX_MESSAGE)
            client.context.setsockopt(zmq.RCVHWM, relay.QUEUED)
        return client

    def use_workspace(self, work: Path) -> None:
        self.work = work
        weakref.finalize(self, sandbox.remove_workspace, self.work)
        self.owner = sandbox.owner_of(self.work)
        sockets = sandbox.private_folder(self.work / "ipc", self.owner)
        self.transport, self.ip = "ipc", str(sockets / "kernel")
        self.connection_file = str(self.work / "kernel.json")

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
        argv, env = sandbox.command(kernel_cmd, self.work, self.mechanism, cwd=cwd)
        self.log_file = open(self.work / "kernel.log", "ab")  # noqa: SIM115 (the kernel's, closed with the manager)
        weakref.finalize(self, self.log_file.close)
        # not the grader's own stdout and stderr (its log, its terminal): a file the quota bounds
        return argv, {**kw, "env": env, "cwd": str(ROOT), "stdout": self.log_file, "stderr": self.log_file}

    async def _async_post_start_kernel(self, **kw):
        await super()._async_post_start_kernel(**kw)
        if self.mechanism == "none":
            return
        self.quota_watch = QuotaWatch(self.work, self.provisioner.pid)
        self.quota_watch.start()
        weakref.finalize(self, self.quota_watch.done.set)
        weakref.finalize(self, sandbox.kill_processes_of, self.owner)
        await self.guard_sockets()
        self.start_relay()

    def start_relay(self) -> None:
        """Put the relay (`course.judge.relay`), in the grading's memory cgroup, between the kernel's sockets and
        the grader's client: the kernel's messages are received, parsed and bounded there, not in the grader."""
        ports = {"shell": self.shell_port, "iopub": self.iopub_port, "stdin": self.stdin_port}
        ports |= {"control": self.control_port, "hb": self.hb_port}
        bounds = {"max_message": MAX_MESSAGE, "max_frames": MAX_FRAMES, "max_values": MAX_VALUES}
        prefix = [
            *cgroup.joining(cgroup.for_grading(self.owner)),
            sandbox.tool("prlimit"),
            f"--as={relay.MEMORY}",
        ]
        prefix += ["--", sandbox.tool("setpriv"), "--pdeathsig=KILL", "--"]
        self.relay, self.ip = relay.start(
            self.work, self.ip, ports, self.session, bounds, outputs.refused_note(), prefix
        )
        weakref.finalize(self, self.relay.kill)

    async def _async_is_alive(self) -> bool:
        """Whether the kernel runs; one whose relay died (its cgroup's OOM killer) is killed first, the relay's
        sockets being its only way to the grader (the grader asks every second while a cell runs)."""
        if self.has_kernel and hasattr(self, "relay") and self.relay.poll() is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(
                    self.provisioner.pid, signal.SIGKILL
                )  # the sandbox's namespace dies with its launcher
        return await super()._async_is_alive()

    async def _async_signal_kernel(self, signum: int) -> None:
        """Signal the sandbox's processes, not its launcher (jupyter_client signals the launcher's process group):
        bwrap or unshare dies of a SIGINT and takes the sandbox with it, so nbgrader's interrupt of a cell that
        timed out would kill the kernel (and, before bwrap's reaper was pid 1, leave it looping as an orphan)."""
        if self.mechanism == "none" or not self.has_kernel:
            return await super()._async_signal_kernel(signum)
        import psutil

        with contextlib.suppress(psutil.Error):
            for process in psutil.Process(self.provisioner.pid).children(recursive=True):
                with contextlib.suppress(psutil.Error):
                    process.send_signal(signum)  # bwrap's pid 1 has no handler: from outside it ignores them

    async def _async_cleanup_resources(self, restart: bool = False) -> None:
        """Once the kernel is gone, nothing of its grading runs on (a process that left the kernel's session), and
        its log is closed (open, it would keep its pages, all the kernel printed to its stdout, once removed)."""
        await super()._async_cleanup_resources(restart)
        if self.mechanism != "none":
            if hasattr(self, "relay"):  # before the cgroup it is in goes
                self.relay.kill()
                self.relay.wait()
            sandbox.kill_processes_of(self.owner)
            if hasattr(self, "log_file"):  # not if the launch failed before it began
                self.log_file.close()

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
            moved = guarded / path.name
            with contextlib.suppress(FileNotFoundError):
                if stat.S_ISSOCK(os.lstat(path).st_mode):
                    os.rename(path, moved)
                    if not stat.S_ISSOCK(os.lstat(moved).st_mode):  # swapped between the look and the move
                        moved.unlink()
        self.ip = str(guarded / Path(self.ip).name)


class QuotaWatch(threading.Thread):
    """Kills a sandboxed kernel whose working copy (its Triton cache included) outgrows `sandbox.DISK_QUOTA`
    (the notebook then counts as a kernel that died: the judge still grades every test cell)."""

    def __init__(self, work: Path, pid: int):
        super().__init__(daemon=True)
        self.work, self.pid, self.done = work, pid, threading.Event()

    def run(self) -> None:
        while not self.done.wait(sandbox.QUOTA_POLL) and self.work.exists():
            if sandbox.bytes_used(self.work) > sandbox.DISK_QUOTA:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(self.pid, signal.SIGKILL)  # the sandbox's namespace dies with its launcher
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
        self.iopub_timeout = max(self.iopub_timeout, IOPUB_WAIT)

    def preprocess(self, nb, resources=None, km=None):
        self.started, self.kernel_ready, self.manager, self.ran = time.monotonic(), None, None, set()
        nb.metadata.pop(KERNEL_DIED, None)  # the grader's word alone, never the submission's
        self.held, self.beside, self.noted = (
            {},
            0,
            set(),
        )  # each cell's outputs' bytes, all else's; cells told
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
                resources[STAGES], resources[RAN] = self.stages(nb), set(self.ran)
            if km is None:  # the kernel this run started is shut down: its working copy goes now
                self.remove_workspace()

    def on_cell_executed(self, **kwargs) -> None:
        """nbgrader's (a reply's error shown where the cell's outputs lack it: a timeout, an output that never
        came), and the cell noted as run (`RAN`)."""
        super().on_cell_executed(**kwargs)
        self.ran.add(kwargs["cell_index"])

    def remove_workspace(self) -> None:
        """Remove the kernel's working copy (its filesystem, its Triton cache) as soon as the notebook ran: its
        manager may live until the worker ends, which grades the next notebooks meanwhile."""
        work = getattr(self.manager, "work", None)
        if work is not None:
            sandbox.remove_workspace(work)

    def create_kernel_manager(self):
        self.manager = super().create_kernel_manager()
        return self.manager

    def process_message(self, msg, cell, cell_index):
        """nbclient's, with what the grader keeps of a message beside a cell's outputs (widget and comm state, a
        display's updates and its id, outputs an Output widget captures) charged to the notebook's HELD_NOTEBOOK
        bytes with its outputs: past them such a message is dropped, and its cell says so once."""
        if msg["msg_type"] not in HANDLED:
            return None
        if self.kept_beside_outputs(msg):
            size = message_size(msg)
            if self.held_in_all() + size > HELD_NOTEBOOK:
                if cell_index not in self.noted:
                    self.noted.add(cell_index)
                    cell.outputs.append(
                        new_output("stream", name="stdout", text=outputs.over_budget_note() + "\n")
                    )
                return None
            self.beside += size
        return super().process_message(msg, cell, cell_index)

    def kept_beside_outputs(self, msg) -> bool:
        content = msg["content"]
        return (
            msg["msg_type"].startswith("comm")
            or msg["msg_type"] == "update_display_data"
            or bool((content.get("transient") or {}).get("display_id"))
            or bool(self.output_hook_stack.get(msg["parent_header"].get("msg_id")))
        )

    def held_in_all(self) -> int:
        return sum(self.held.values()) + self.beside

    def output(self, outs, msg, display_id, cell_index):
        """nbclient's, with a cell's outputs bounded as they come (`outputs.bounded`, as `outputs.sanitize` bounds
        them later; past HELD_OUTPUT bytes, or HELD_NOTEBOOK with all else held, its note counts only what it cut
        since the last time): the grader holds them, outside the sandbox's memory cgroup, and a cell printing until
        its timeout would fill the host's. An output's metadata counts too (bounding keeps only image sizes)."""
        out = super().output(outs, msg, display_id, cell_index)
        if out is not None:
            self.held[cell_index] = (
                self.held.get(cell_index, 0) + outputs.size(out) + json_size(out.get("metadata", {}))
            )
            if self.held[cell_index] > HELD_OUTPUT or self.held_in_all() > HELD_NOTEBOOK:
                others = sum(self.held.values()) - self.held[cell_index]
                budget = min(outputs.MAX_CELL, max(0, outputs.MAX_NOTEBOOK - others))
                outs[:], self.held[cell_index] = outputs.bounded(outs, budget)
                self.clear_display_id_mapping(cell_index)  # their places changed
        return out

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
        if work is None:
            return found
        return found | triton_stats.stages("notebook", work / "home" / ".triton")
