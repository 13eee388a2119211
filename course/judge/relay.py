"""The relay between a sandboxed kernel's sockets and the grader's client: `python -m course.judge.relay SPEC.json`.

libzmq receives a message whole before anything reads it (its MAXMSGSIZE bounds one frame, not how many frames),
and a message's JSON grows ~25 times as it is parsed (nested empty lists). So the grader never receives what the
kernel sends: this process does, in the grading's memory cgroup and under an address-space limit of its own
(`MEMORY`: a message past it makes libzmq drop the connection, and the message). It reads each of the kernel's
messages frame by frame and passes on only one of at most `max_frames` frames and `max_message` bytes
(SMALL_MESSAGE on stdin, control and heartbeat) whose JSON parses to at most `max_values` values, MAX_DEPTH deep;
for a message it refuses, the running cell gets the grader's bilingual note on stdout instead. What the grader sends
the kernel passes as it is. `start` (in the grader) launches it; the kernel manager's client connects to it.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import subprocess
import sys
import uuid
from datetime import UTC, datetime
from pathlib import Path

import zmq

from course import ROOT
from course.judge.environment import outside_pythonpath

MEMORY = 1 << 30  # bytes of address space the relay may hold (where no memory cgroup bounds it anyway)
MAX_DEPTH = 64  # nesting of one message's JSON (the grader's parser and nbformat recurse)
QUEUED = 4  # messages a socket queues (the grader's client too): at most this many pass at once
DELIMITER = b"<IDS|MSG>"
# bytes of one message on the channels where the kernel only answers briefly, and which the grader's client reads
# only now and then (control, heartbeat) or never (stdin: nbclient allows no input): what waits there is small
SMALL_MESSAGE = 64 << 10
IDENTITY = b"course-relay"  # of each socket towards the kernel: it answers stdin to the shell's requester
# a JSON string, or one never closed up to the frame's end (no JSON then): found in one pass, never from each quote
STRING = re.compile(rb'"(?:[^"\\]++|\\.|\\\Z)*+(?:"|\Z)', re.S)


def start(
    work: Path, kernel: str, ports: dict[str, int], session, bounds: dict, note: str, prefix: list[str]
):
    """Start the relay of the kernel whose sockets are `kernel`-PORT, under the command `prefix` (the grading's
    cgroup, its limits): (its process, the prefix of its own sockets, in a folder of `work` only the grader
    enters). `note` is the bilingual note on a refused message (`str.format` fields: kind, frames, bytes)."""
    folder = work / "relay"
    folder.mkdir(mode=0o700)
    spec = folder / "spec.json"
    relayed = str(folder / "kernel")
    fields = {"kernel": kernel, "relay": relayed, "ports": ports, "note": note, **bounds}
    fields |= {"key": session.key.decode(), "scheme": session.signature_scheme, "session": session.session}
    spec.write_text(json.dumps(fields), encoding="utf-8")
    process = subprocess.Popen(
        [*prefix, sys.executable, "-m", "course.judge.relay", str(spec)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        env={"PYTHONPATH": os.pathsep.join([str(ROOT), *outside_pythonpath()]), "MALLOC_ARENA_MAX": "2"},
    )
    if process.stdout.readline() != b"ready\n":
        process.kill()
        raise RuntimeError(f"the kernel's relay did not start (exit status {process.wait()})")
    process.stdout.close()
    return process, relayed


def values(frame: bytes) -> int:
    """At most how many JSON values `frame` holds once parsed: its containers and commas outside strings, plus one
    (counted without parsing it)."""
    bare = STRING.sub(b"", frame)
    return bare.count(b"[") + bare.count(b"{") + bare.count(b",") + 1


def depth(value) -> int:
    """How deep `value` nests (a parsed message's values are bounded before this walks them)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        value, level = stack.pop()
        deepest = max(deepest, level)
        if isinstance(value, dict):
            stack += [(item, level + 1) for item in value.values()]
        elif isinstance(value, list):
            stack += [(item, level + 1) for item in value]
    return deepest


class Relay:
    def __init__(self, spec: dict):
        self.spec, self.parent = spec, None
        self.context = zmq.Context()
        self.kernel, self.grader = {}, {}
        for channel, port in spec["ports"].items():
            towards_kernel = self.socket(zmq.SUB if channel == "iopub" else zmq.DEALER)
            if channel == "iopub":
                towards_kernel.setsockopt(zmq.SUBSCRIBE, b"")
            else:
                towards_kernel.setsockopt(zmq.IDENTITY, IDENTITY)
            towards_kernel.connect(f"ipc://{spec['kernel']}-{port}")
            towards_grader = self.socket(zmq.PUB if channel == "iopub" else zmq.ROUTER)
            towards_grader.bind(f"ipc://{spec['relay']}-{port}")
            self.kernel[towards_kernel], self.grader[towards_grader] = channel, towards_kernel
        self.iopub = next(sock for sock, to in self.grader.items() if self.kernel[to] == "iopub")
        self.forward = {to: sock for sock, to in self.grader.items()}

    def socket(self, kind: int) -> zmq.Socket:
        sock = self.context.socket(kind)
        sock.setsockopt(zmq.SNDHWM, QUEUED)
        sock.setsockopt(zmq.RCVHWM, QUEUED)
        sock.setsockopt(zmq.LINGER, 0)
        return sock

    def run(self) -> None:
        poller = zmq.Poller()
        for sock in [*self.kernel, *self.grader]:
            poller.register(sock, zmq.POLLIN)
        print("ready", flush=True)
        while True:
            for sock, _ in poller.poll():
                if sock in self.grader:
                    frames = sock.recv_multipart()
                    if self.kernel[self.grader[sock]] == "shell":
                        self.remember_request(frames)
                    self.grader[sock].send_multipart(frames)
                else:
                    frames = self.receive(sock, self.kernel[sock])
                    if frames is not None:
                        self.forward[sock].send_multipart(frames)

    def remember_request(self, frames: list[bytes]) -> None:
        """Keep the header of the grader's last execute request: the parent of a note on a refused message."""
        if DELIMITER in frames:
            header = json.loads(frames[frames.index(DELIMITER) + 2])
            if header.get("msg_type") == "execute_request":
                self.parent = header

    def receive(self, sock: zmq.Socket, channel: str) -> list[zmq.Frame] | None:
        """The kernel's next message on `sock`, or None when it is refused (a note then says so): read frame by
        frame, no frame kept past the bounds."""
        frames, count, size = [], 0, 0
        most = self.spec["max_message"] if channel in ("shell", "iopub") else SMALL_MESSAGE
        while True:
            frame = sock.recv(copy=False)  # as libzmq holds it, never copied
            count, size = count + 1, size + len(frame)
            if count <= self.spec["max_frames"] and size <= most:
                frames.append(frame)
            else:
                frames.clear()
            if not sock.getsockopt(zmq.RCVMORE):
                break
        if len(frames) == count and (channel == "hb" or self.parses(frames)):
            return frames
        self.note(channel, count, size)
        return None

    def parses(self, frames: list[zmq.Frame]) -> bool:
        """Whether the message's header, parent, metadata and content hold at most `max_values` JSON values in all,
        each an object at most MAX_DEPTH deep (their values are counted before anything parses them)."""
        raw = [frame.bytes for frame in frames]
        if DELIMITER not in raw:
            return False
        parts = raw[raw.index(DELIMITER) + 2 :][:4]
        try:
            if len(parts) < 4 or sum(map(values, parts)) > self.spec["max_values"]:
                return False
            parsed = [json.loads(part) for part in parts]
        except (ValueError, RecursionError, MemoryError):
            return False
        return all(isinstance(part, dict) and depth(part) <= MAX_DEPTH for part in parsed)

    def note(self, channel: str, frames: int, size: int) -> None:
        """Tell the running cell, on stdout as the outputs' other notes (stderr would score a test cell 0), that a
        message of the kernel's was refused."""
        if self.parent is None:
            return
        text = self.spec["note"].format(kind=channel, frames=frames, bytes=size) + "\n"
        header = {
            "msg_id": uuid.uuid4().hex,
            "msg_type": "stream",
            "username": "grader",
            "session": self.spec["session"],
            "date": datetime.now(UTC).isoformat(),
            "version": "5.3",
        }
        parts = [
            json.dumps(part).encode() for part in (header, self.parent, {}, {"name": "stdout", "text": text})
        ]
        self.iopub.send_multipart([b"stream", DELIMITER, self.sign(parts), *parts])

    def sign(self, parts: list[bytes]) -> bytes:
        if not self.spec["key"]:
            return b""
        digest = getattr(hashlib, self.spec["scheme"].removeprefix("hmac-"))
        signer = hmac.new(self.spec["key"].encode(), digestmod=digest)
        for part in parts:
            signer.update(part)
        return signer.hexdigest().encode()


if __name__ == "__main__":
    Relay(json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))).run()
