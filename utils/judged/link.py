"""Requests from the judge's sandboxed child to a service the judge runs in its own process, over a Unix socket
in the working copy: what the judge measures (slow-memory traffic, a workload's calls) is kept there, where the
student's code cannot read or rewrite it; the child only asks.

A message is a JSON object plus tensors (`utils.judged.tensor_files`: a JSON header and raw bytes, never pickle),
framed by three lengths. An answer either carries the result or names an error, which `Link.request` raises
again here with the judge's (bilingual) message.
"""

from __future__ import annotations

import json
import socket
import struct

import torch
from torch.utils._python_dispatch import _disable_current_modes

from utils.judged import tensor_files

LENGTHS = struct.Struct("!III")  # bytes of the message, of its tensors' header, of their raw data
HEADER_LIMIT = 1 << 20
ERRORS = {error.__name__: error for error in (KeyError, IndexError, ValueError, TypeError, RuntimeError)}


def send(sock: socket.socket, message: dict, tensors: dict[str, torch.Tensor] | None = None) -> None:
    body = json.dumps(message).encode()
    header, raw = tensor_files.pack(tensors or {})
    sock.sendall(LENGTHS.pack(len(body), len(header), len(raw)) + body + header + raw)


def receive(sock: socket.socket, raw_limit: int) -> tuple[dict, dict[str, torch.Tensor]]:
    """One message; ConnectionError when the other end closed, ValueError when it is malformed or too large."""
    sizes = LENGTHS.unpack(_exactly(sock, LENGTHS.size))
    if sizes[0] > HEADER_LIMIT or sizes[1] > HEADER_LIMIT or sizes[2] > raw_limit:
        raise ValueError(f"message too large: {sizes}")
    body, header, raw = (_exactly(sock, size) for size in sizes)
    try:
        message = json.loads(body)
    except (ValueError, RecursionError) as error:
        raise ValueError(f"malformed message: {type(error).__name__}") from None
    if not isinstance(message, dict):
        raise ValueError("malformed message")
    return message, tensor_files.parse(header, raw)


def _exactly(sock: socket.socket, size: int) -> bytes:
    chunks, left = [], size
    while left:
        chunk = sock.recv(min(left, 1 << 20))
        if not chunk:
            raise ConnectionError("the other end closed the connection")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


class Link:
    """The child's connection to one of the judge's services (`course.judge.services`)."""

    def __init__(self, address: str):
        self._socket = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._socket.connect(address)

    def request(self, message: dict, tensors: dict[str, torch.Tensor] | None = None):
        """(answer, tensors) of one request; the judge's error raised again as the same kind of exception. The
        tensors' bytes are the link's work, hidden from dispatch modes (the child's largest-tensor watch)."""
        with _disable_current_modes():
            send(self._socket, message, tensors)
            answer, returned = receive(self._socket, 1 << 40)
        if "error" in answer:
            raise ERRORS.get(answer.get("kind"), RuntimeError)(str(answer["error"]))
        return answer, returned

    def notify(self, message: dict) -> None:
        """Send a request that needs no answer (the judge sends none) and return at once."""
        send(self._socket, {**message, "answer": False})

    def close(self) -> None:
        self._socket.close()

    def __enter__(self) -> Link:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


__all__ = ["ERRORS", "Link", "receive", "send"]
