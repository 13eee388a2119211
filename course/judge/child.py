"""The judge's end of the sandboxed child (`utils.judged.run`): send inputs, wait, read outputs as plain data.

A call that crashes the child or runs past its time fails alone: the child is killed and the next call
starts a fresh one. Nothing the child writes is trusted: answers are JSON and tensors raw bytes, read through a
descriptor of the output folder taken before the child started (the child cannot move it), never through a
link, regular files only, within byte limits; whatever is malformed is a failed call.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import shutil
import signal
import stat
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import torch

from course.judge import sandbox
from course.neutral import visible
from utils.judged import tensor_files
from utils.messages import bilingual

ANSWER_LIMIT = 1 << 20  # bytes of one call's JSON answer (and of its tensors' header)
OUTPUT_BASE_LIMIT = 64 << 20  # bytes of one call's tensors, plus OUTPUT_PER_INPUT times the inputs' bytes
OUTPUT_PER_INPUT = 16
LOG_TAIL_BYTES = 1 << 16
REPLY_LINE_LIMIT, REPLY_LINES_LIMIT = 64, 16
RUN_TIME_LIMIT, RUN_TIME_SHOWN = (
    10,
    100,
)  # entries kept of the code made at run time, characters of each  # bytes of a call id on the reply pipe; lines in one read
MEMORY_RESETS_LIMIT = 1 << 20  # resets of the GPU allocator's statistics counted (the child writes the count)


class CallFailed(AssertionError):
    """The student's code raised, crashed, timed out or returned something unreadable."""


@dataclass
class Answer:
    """What one call returned: its result (tensors, tuples, plain values) and what the child measured."""

    result: object
    grads: list | None = None
    saved: list | None = None
    largest: dict = field(default_factory=dict)
    peak_memory_bytes: int | None = None
    seconds: float = 0.0


class Opaque:
    """A returned object that is neither a tensor, a tuple nor a plain value (only its type name is known)."""

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"<{self.name}>"


def decode(node, tensors: dict[str, torch.Tensor]):
    if not isinstance(node, dict):
        raise ValueError("malformed answer")
    if "tensor" in node:
        return tensors[node["tensor"]]
    if "tuple" in node:
        return tuple(decode(item, tensors) for item in node["tuple"])
    if "dict" in node:
        return {str(key): decode(item, tensors) for key, item in node["dict"].items()}
    if "value" in node:
        return node["value"]
    return Opaque(str(node.get("repr", "?")))


def read_plain(folder: int, name: str, limit: int) -> bytes:
    """The bytes of the regular file `name` in the folder open as `folder`, written by the child: never through
    a link, never a FIFO or device, at most `limit` bytes (else ValueError)."""
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=folder)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1:
            raise ValueError(f"{name} is not a plain file")
        if info.st_size > limit:
            raise ValueError(f"{name} is too large ({info.st_size} bytes, at most {limit})")
        with open(fd, "rb", closefd=False) as data:
            content = data.read(limit + 1)
    finally:
        os.close(fd)
    if len(content) > limit:
        raise ValueError(f"{name} is too large (at most {limit} bytes)")
    return content


def empty(folder: Path) -> None:
    """Remove what lies in `folder` (a sandbox's files), never following a link."""
    for path in folder.iterdir():
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)


def tensor_bytes(tensors: dict[str, torch.Tensor]) -> int:
    return sum(t.numel() * t.element_size() for t in tensors.values())


class Child:
    """A sandboxed `utils.judged.run` process over one student module, restarted after a crash or timeout."""

    def __init__(
        self,
        module_source: str,
        settings: dict,
        mechanism: str,
        triton_cache: Path | None = None,
        owner: int | None = None,
    ):
        self.work = sandbox.workspace(owner=owner)
        self.shared_owner = owner is not None  # the caller's uid: it kills the uid's processes when done
        self.out = os.open(self.work / "out", os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        self.triton_cache = triton_cache
        (self.work / "in").mkdir()
        (self.work / "student_code.py").write_text(module_source, encoding="utf-8")
        self.settings, self.mechanism = settings, mechanism
        self.process: subprocess.Popen | None = None
        self.calls = 0
        self.run_time_code: set[str] = set()  # what its answers said the student's code made at run time
        self.memory_resets = 0  # the allocator's statistics its student's code tried to reset in judged calls
        self.start_seconds = 0.0  # waited for its starts: sandbox, interpreter, imports, student's module

    def start(self) -> None:
        read_end, write_end = os.pipe()
        argv, env = sandbox.command(
            [sys.executable, "-m", "utils.judged.run", str(self.work), str(write_end)],
            self.work,
            self.mechanism,
            triton_cache=self.triton_cache,
        )
        self.log = open(self.work / "child.log", "ab")  # noqa: SIM115 (closed in stop)
        self.process = subprocess.Popen(
            argv,
            env=env,
            stdin=subprocess.PIPE,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            pass_fds=(write_end,),
            start_new_session=True,
        )
        os.close(write_end)
        self.reply, self.pending, self.answered = read_end, b"", set()
        self.send(self.settings)

    def send(self, message: dict) -> None:
        self.process.stdin.write((json.dumps(message) + "\n").encode())
        self.process.stdin.flush()

    def stop(self) -> None:
        if self.process is not None:
            if self.process.poll() is None:
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
            os.close(self.reply)
            self.log.close()
        self.process = None

    def close(self) -> None:
        self.stop()
        if not self.shared_owner:  # one that left its session and process group (a shared uid: the caller's)
            sandbox.kill_processes_of(sandbox.owner_of(self.work))
        if self.out is not None:
            os.close(self.out)
            self.out = None
        sandbox.remove_workspace(self.work)

    def exit_code(self, grace: float = 10.0) -> int | None:
        """The child's exit status once it has ended (its pipe closes a moment before the process is reaped)."""
        try:
            return self.process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            return None

    def log_tail(self, lines: int = 8) -> str:
        """The last lines of what the child printed (its log is the judge's file, read from its end only)."""
        with open(self.work / "child.log", "rb") as log:
            log.seek(max(0, log.seek(0, os.SEEK_END) - LOG_TAIL_BYTES))
            text = log.read().decode("utf-8", errors="replace")
        return "\n".join(line[:500] for line in text.strip().splitlines()[-lines:])

    def wait_for(self, call_id: int, timeout: float) -> str:
        """ "done", "timeout", "crashed" or "quota" (its files, with the Triton cache it shares, outgrew
        `sandbox.DISK_QUOTA`): how waiting for the child's answer to `call_id` ended."""
        deadline = time.monotonic() + timeout
        while str(call_id).encode() not in self.answered:
            left = deadline - time.monotonic()
            if left <= 0:
                return "timeout"
            ready, _, _ = select.select([self.reply], [], [], min(left, sandbox.QUOTA_POLL))
            if sandbox.bytes_used(self.work) + self.cache_bytes() > sandbox.DISK_QUOTA:
                return "quota"
            if not ready:
                continue
            chunk = os.read(self.reply, 4096)
            if not chunk:
                return "crashed"
            *lines, self.pending = (self.pending + chunk).split(b"\n")
            self.answered.update(line for line in lines if line == str(call_id).encode())
            if len(self.pending) > REPLY_LINE_LIMIT or len(lines) > REPLY_LINES_LIMIT:
                return "crashed"  # the reply pipe carries call ids, nothing else
        return "done"

    def call(
        self, target: str, *args, grad: torch.Tensor | None = None, requires_grad=(), timeout: float = 120
    ) -> Answer:
        """Run `target(*args)` (a dotted name in the student's module) in the child; raise CallFailed if it
        fails. Arguments are tensors, torch dtypes or JSON values; results come back as tensors, tuples,
        dicts with string keys and plain values. With `grad`, also backpropagate it from the first output
        and return the gradients of the arguments at the `requires_grad` positions and the tensors saved
        for backward."""
        began, starting = time.monotonic(), self.process is None
        if starting:
            self.start()
        self.calls += 1
        call_id, tensors, specs = self.calls, {}, []
        for i, arg in enumerate(args):
            if isinstance(arg, torch.Tensor):
                tensors[f"a{i}"] = arg
                specs.append({"tensor": f"a{i}"})
            elif isinstance(arg, torch.dtype):
                specs.append({"dtype": str(arg).removeprefix("torch.")})
            else:
                specs.append({"value": arg})
        if grad is not None:
            tensors["grad"] = grad
        tensor_files.save(tensors, self.work / "in" / str(call_id))
        self.output_limit = OUTPUT_BASE_LIMIT + OUTPUT_PER_INPUT * tensor_bytes(tensors)
        request = {"id": call_id, "target": target, "args": specs, "requires_grad": list(requires_grad)}
        request["grad"] = "grad" if grad is not None else None
        try:
            self.send(request)
        except BrokenPipeError:
            pass  # the child died at start-up: reported below as a crash
        how = self.wait_for(call_id, timeout)
        if how != "done":
            code = self.exit_code() if how == "crashed" else None
            self.stop()
            if how == "quota":
                self.clear_outputs()
                empty(self.work / "home")  # the child's own files: over quota, gone
                if self.triton_cache is not None:  # a folder on the host's disk too, counted with them
                    empty(self.triton_cache)
                raise CallFailed(
                    bilingual(
                        f"{target} 写入的文件超过 {sandbox.DISK_QUOTA >> 20} MiB，进程已被终止",
                        f"{target} wrote more than {sandbox.DISK_QUOTA >> 20} MiB of files; the process was stopped",
                    )
                )
            if how == "timeout":
                raise CallFailed(
                    bilingual(f"{target} 超时（{timeout:g} 秒）", f"{target} timed out (after {timeout:g} s)")
                )
            raise CallFailed(
                bilingual(
                    f"{target} 使进程崩溃（退出码 {code}）",
                    f"{target} crashed the process (exit code {code})",
                )
                + "\n"
                + self.log_tail()
            )
        answer = None
        try:
            answer = self.read_answer(call_id, target)
            return answer
        finally:
            self.clear_outputs()
            if starting:  # the first call's wait but the call as the child timed it (all of a failed one)
                waited = time.monotonic() - began - (answer.seconds if answer else 0.0)
                self.start_seconds += max(0.0, waited)

    def cache_bytes(self) -> int:
        """Bytes of the Triton cache this child shares with the other children of its notebook (its own, in its
        home, counts with its working copy)."""
        return sandbox.bytes_used(self.triton_cache) if self.triton_cache is not None else 0

    def clear_outputs(self) -> None:
        """Remove what the child wrote into `out/` (read already) and the inputs sent: nothing piles up."""
        for name in os.listdir(self.out):
            with contextlib.suppress(OSError):
                os.unlink(name, dir_fd=self.out)
        for path in (self.work / "in").iterdir():
            path.unlink(missing_ok=True)

    def read_answer(self, call_id: int, target: str) -> Answer:
        try:
            answer = json.loads(read_plain(self.out, f"{call_id}.answer", ANSWER_LIMIT))
            for entry in answer.get("run_time_code") or []:
                if len(self.run_time_code) < RUN_TIME_LIMIT:
                    self.run_time_code.add(visible(str(entry))[:RUN_TIME_SHOWN])
            resets = int(answer.get("memory_resets") or 0)
            self.memory_resets = max(self.memory_resets, min(resets, MEMORY_RESETS_LIMIT))
            if not answer.get("ok"):
                where = str(answer.get("where", ""))
                raise CallFailed(f"{str(answer.get('error', ''))[:3000]}\n{where[:3000]}".rstrip())
            header = read_plain(self.out, f"{call_id}.json", ANSWER_LIMIT)
            tensors = tensor_files.parse(header, read_plain(self.out, str(call_id), self.output_limit))
            peak = answer.get("peak_memory_bytes")
            return Answer(
                result=decode(answer["result"], tensors),
                grads=[decode(g, tensors) for g in answer["grads"]]
                if answer.get("grads") is not None
                else None,
                saved=decode(answer["saved"], tensors) if answer.get("saved") is not None else None,
                largest=dict(answer.get("largest") or {}),
                peak_memory_bytes=int(peak) if peak is not None else None,
                seconds=float(answer.get("seconds", 0.0)),
            )
        except CallFailed:
            raise
        except Exception as error:  # noqa: BLE001 (whatever the child wrote, a malformed answer fails the call)
            raise CallFailed(
                bilingual(
                    f"{target} 的输出无法读取：{error}", f"the output of {target} is unreadable: {error}"
                )[:1000]
            ) from None
