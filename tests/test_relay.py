"""The relay between a kernel's sockets and the grader's client (`course.judge.relay`), against stand-in sockets of
a kernel: no kernel starts, so each bound is seen in about a second."""

from __future__ import annotations

import os
import time

import pytest
import zmq
from jupyter_client.session import Session

from course.judge import outputs, relay

PORTS = {"shell": 1, "iopub": 2, "stdin": 3, "control": 4, "hb": 5}
BOUNDS = {"max_message": 1 << 20, "max_frames": 16, "max_values": 1000}


@pytest.fixture
def wired(tmp_path):
    """(session, the kernel's stand-in shell and iopub, the grader's shell and iopub) with the relay between them."""
    session, context = Session(key=b"not-a-secret"), zmq.Context()
    kernel = {name: context.socket(zmq.PUB if name == "iopub" else zmq.ROUTER) for name in PORTS}
    for name, sock in kernel.items():
        sock.bind(f"ipc://{tmp_path}/kernel-{PORTS[name]}")
    process, relayed = relay.start(
        tmp_path, f"{tmp_path}/kernel", PORTS, session, BOUNDS, outputs.refused_note(), []
    )
    shell, iopub = context.socket(zmq.DEALER), context.socket(zmq.SUB)
    shell.connect(f"ipc://{relayed}-{PORTS['shell']}")
    iopub.connect(f"ipc://{relayed}-{PORTS['iopub']}")
    iopub.setsockopt(zmq.SUBSCRIBE, b"")
    for sock in [*kernel.values(), shell, iopub]:
        sock.setsockopt(zmq.LINGER, 0)
        sock.setsockopt(zmq.RCVTIMEO, 10_000)
    try:
        yield session, kernel["shell"], kernel["iopub"], shell, iopub
    finally:
        process.kill()
        process.wait()
        context.destroy()


def received(session: Session, sock: zmq.Socket) -> dict:
    _, frames = session.feed_identities(sock.recv_multipart())
    return session.deserialize(frames)


def subscribed(session: Session, kernel_iopub: zmq.Socket, iopub: zmq.Socket, request: dict) -> None:
    """Once the relay's subscription reached the stand-in kernel (its status messages then read and dropped)."""
    deadline = time.monotonic() + 10
    while not iopub.poll(100):
        assert time.monotonic() < deadline
        session.send(kernel_iopub, "status", {"execution_state": "busy"}, parent=request)
    while received(session, iopub)["msg_type"] == "status" and iopub.poll(300):
        pass


def test_the_relay_passes_what_is_within_bounds_and_notes_what_it_refuses(wired):
    """(e) What the grader sends reaches the kernel and the kernel's answers come back; a message of too many frames,
    too many JSON values or too deep JSON is refused, and the running cell gets a signed note on stdout instead."""
    session, kernel_shell, kernel_iopub, shell, iopub = wired
    request = session.send(shell, "execute_request", {"code": "1"})
    idents, frames = session.feed_identities(kernel_shell.recv_multipart())
    assert session.deserialize(frames)["header"]["msg_id"] == request["header"]["msg_id"]
    session.send(kernel_shell, "execute_reply", {"status": "ok"}, parent=request, ident=idents)
    assert received(session, shell)["parent_header"]["msg_id"] == request["header"]["msg_id"]
    subscribed(session, kernel_iopub, iopub, request)
    deep = []
    for _ in range(relay.MAX_DEPTH + 5):
        deep = [deep]
    attacks = [
        ({"name": "stdout", "text": "y"}, [b"x"] * 16),  # frames past 16 with the message's own
        ({"name": "stdout", "text": "y", "junk": [[]] * 1000}, []),
        ({"name": "stdout", "text": "y", "junk": deep}, []),
        ({"name": "stdout", "text": "y"}, [b"x" * (600 << 10)] * 2),  # 1.2 MiB in all
    ]
    for content, buffers in attacks:
        session.send(kernel_iopub, "stream", content, parent=request, buffers=buffers)
    session.send(kernel_iopub, "stream", {"name": "stdout", "text": "kept"}, parent=request)
    seen = [received(session, iopub) for _ in range(len(attacks) + 1)]
    notes = [msg["content"]["text"] for msg in seen[:-1]]
    assert all(msg["parent_header"]["msg_id"] == request["header"]["msg_id"] for msg in seen)
    assert all(
        msg["content"]["name"] == "stdout" and "over the grader's bounds" in text
        for msg, text in zip(seen, notes, strict=False)
    )
    assert "(22 frames" in notes[0] and seen[-1]["content"]["text"] == "kept"


def test_a_json_value_count_never_parses_the_message():
    assert relay.values(b'{"a": [1, 2, {"b": "x,[{"}]}') == 6
    assert relay.values(b'{"s": "\\" , ["}') == 2


def test_a_string_never_closed_is_counted_in_linear_time(wired):
    """Red team: a content frame of one quote and escaped quotes, never closed (`"\\"\\"…`), 400 KB. The value count
    looked for a string from each of its 200,000 quotes to the frame's end (9 s for 32 KB, about 25 min for this
    one, some 40 h for a 4 MiB message), the relay stuck the while: the message is now refused at once, and the
    next one passes."""
    session, _, kernel_iopub, shell, iopub = wired
    request = session.send(shell, "execute_request", {"code": "1"})
    subscribed(session, kernel_iopub, iopub, request)
    header, parent = (session.pack(part) for part in (session.msg_header("stream"), request["header"]))
    kernel_iopub.send_multipart(
        [b"stream", relay.DELIMITER, b"", header, parent, b"{}", b'"' + b'\\"' * 200_000]
    )
    session.send(kernel_iopub, "stream", {"name": "stdout", "text": "kept"}, parent=request)
    began = time.monotonic()
    seen = [received(session, iopub) for _ in range(2)]
    assert "over the grader's bounds" in seen[0]["content"]["text"] and seen[1]["content"]["text"] == "kept"
    assert time.monotonic() - began < 5


def test_the_relay_keeps_the_graders_python_path_outside_the_course(tmp_path, monkeypatch):
    """Where the grader's packages come from PYTHONPATH (a `pip install --target` folder, as on the GPU host), the
    relay finds pyzmq there too. Failed before: its environment named the course alone, and on the GPU host every
    kernel's relay died ("No module named 'zmq'")."""
    packages = tmp_path / "packages"
    packages.mkdir()
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(packages), os.environ.get("PYTHONPATH", "")]))
    seen = tmp_path / "seen"
    record = ["sh", "-c", 'printf %s "$PYTHONPATH" > "$0"; exec "$@"', str(seen)]  # then runs the relay
    process, _ = relay.start(
        tmp_path, f"{tmp_path}/kernel", PORTS, Session(key=b"k"), BOUNDS, outputs.refused_note(), record
    )
    process.kill()
    process.wait()
    assert str(packages) in seen.read_text().split(":")
