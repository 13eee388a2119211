"""What the judge measures while its sandboxed child runs a student's code, kept in the judge's own process.

The child reaches a service only by requests (`utils.judged.link`) over a Unix socket in its working copy, so
what is measured is out of the student's reach: nothing the child holds can be read or rewritten to change it.

- `SlowMemoryService` (units 02, 03): a `SlowMemory` holding the inputs and the output; each read and write the
  child's `mem[name][index]` makes is a request, counted here per element by the notebooks' own counter. The
  largest tile one access moves is recorded too: the part of "how much is on chip" seen from outside.
- `SweepService` (unit 04): the row the student's softmax sweeps, read-only, as a `CountedTensor`: each read the
  child's `x[index]` makes is a request, counted and ordered here (each element's first and second read, the
  columns each read spans).
- `TimingService` (unit 09): a sleeping `Workload` and a `SimulatedDevice`, kept here: a call of the child's
  workload returns once the judge has slept that call's duration, a launch queues the device's time here and a
  synchronize waits for it. The durations never reach the child; the judge counts the calls and launches and
  times each call itself, from when the child sent it (what the child's timer reports can only be longer).

A service serves one connection at a time on a thread of its own, answers a request it cannot serve with an
error, and never runs anything the child sent (JSON and raw tensor bytes only).

What stays in the child: the largest tensor the student's code creates (its fast memory) can only be watched in
the process that creates it, by a dispatch mode (`utils.judged.run`), which that process can switch off. The
judge checks the tiles it sees moved itself, and a slow-memory unit flags for review the names that switch the
watch off or reach it (`WATCH_SWITCHES`, in the unit's `suspicious`).
"""

from __future__ import annotations

import contextlib
import math
import os
import secrets
import select
import socket
import threading
import time
from pathlib import Path

import torch

from utils.judged import link, tensor_files
from utils.judged.slow_memory import decode_index
from utils.messages import bilingual
from utils.sweeps import CountedTensor
from utils.timing import SimulatedDevice, Workload
from utils.traffic.slow_memory import SlowMemory

WATCH_SWITCHES = {
    name: "switching off the largest-tensor watch (dispatch modes)"
    for name in (
        "bookkeeping",
        "_python_dispatch",
        "_disable_current_modes",
        "_pop_mode",
        "_pop_mode_temporarily",
        "_DisableTorchDispatch",
        "_get_current_dispatch_mode",
        "_get_current_dispatch_mode_stack",
        "TorchDispatchMode",
        "__torch_dispatch__",
        "gc",
    )
} | {
    name: "a custom operator (its kernel runs below the largest-tensor watch, which sees one call)"
    for name in ("library", "custom_op", "triton_op")  # torch.library
}
POLL_SECONDS = 0.05  # how often a waiting service checks whether it was closed
MESSAGE_SECONDS = 10.0  # a request that has begun arriving must arrive within this
TRANSIT_SECONDS = 0.003  # how long a request may take to reach the judge (below every duration it chooses)
RAW_LIMIT = 64 << 20  # bytes of tensors in one request
SCRATCH_LIMIT = 256 << 20  # bytes the child may add to slow memory (add, alloc)


class Service:
    """A Unix socket in `work` (the child's working copy) answered by `self.answer` on a thread, until closed."""

    def __init__(self, work: Path):
        self.address = str(Path(work) / f"judge-{secrets.token_hex(4)}.sock")
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._listener.bind(self.address)
        os.chmod(self.address, 0o666)  # the sandbox runs the child as a uid of its own
        self._listener.listen(4)
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="judge-service", daemon=True)
        self._thread.start()

    def answer(self, message: dict, tensors: dict[str, torch.Tensor]) -> tuple[dict, dict]:
        raise NotImplementedError

    def close(self) -> None:
        """Stop serving (a request being answered is finished first)."""
        self._closed.set()
        self._thread.join()
        self._listener.close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.address)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _ready(self, sock: socket.socket) -> bool:
        return bool(select.select([sock], [], [], POLL_SECONDS)[0]) and not self._closed.is_set()

    def _serve(self) -> None:
        while not self._closed.is_set():
            if self._ready(self._listener):
                connection, _ = self._listener.accept()
                with connection:
                    self._converse(connection)

    def _converse(self, connection: socket.socket) -> None:
        connection.settimeout(MESSAGE_SECONDS)
        while not self._closed.is_set():
            if not self._ready(connection):
                continue
            try:
                message, tensors = link.receive(connection, RAW_LIMIT)
            except (OSError, ValueError):  # closed, too slow, malformed: this connection ends
                return
            try:
                answer, returned = self.answer(message, tensors)
            except Exception as error:  # noqa: BLE001 (any request the child sends is answered, never fatal)
                text = error.args[0] if error.args and isinstance(error.args[0], str) else str(error)
                answer, returned = {"error": text[:2000], "kind": type(error).__name__}, {}
            if message.get("answer") is False:  # a notification (`Link.notify`): nothing is sent back
                continue
            try:
                link.send(connection, answer, returned)
            except OSError:
                return


def within(index, tensor) -> object:
    """`index` (decoded) where it selects at most `tensor`'s elements; index tensors broadcast against each other
    (`(N, 1)` with `(1, N)`: N² ids from 16N bytes sent) would make this process build more, so that is refused."""
    parts = index if isinstance(index, tuple) else (index,)
    shapes = [
        (int(p.count_nonzero()),) if p.dtype == torch.bool else p.shape
        for p in parts
        if isinstance(p, torch.Tensor)
    ]
    if shapes and math.prod(torch.broadcast_shapes(*shapes)) > tensor.numel():
        raise ValueError(
            bilingual(
                "一次读写选中的元素多于张量本身",
                "one read or write selects more elements than the tensor has",
            )
        )
    return index


def unknown(message: dict) -> ValueError:
    what = str(message.get("op"))[:100]
    return ValueError(bilingual(f"评审程序不认识请求 {what!r}", f"the judge knows no request {what!r}"))


def spec(tensor) -> dict:
    """A slow tensor's layout as the child's `JudgedMemory` reads it."""
    return {"shape": list(tensor.shape), "dtype": str(tensor.dtype).removeprefix("torch.")}


class SlowMemoryService(Service):
    """The judge's slow memory: `tensors` (moved to the CPU) under their names, counted per element."""

    def __init__(self, work: Path, **tensors: torch.Tensor):
        self.memory = SlowMemory(**{name: t.detach().cpu() for name, t in tensors.items()})
        self.largest = {"numel": 0, "shape": []}  # the largest tile one read or write moved
        self.scratch_bytes = 0
        super().__init__(work)

    def answer(self, message: dict, tensors: dict[str, torch.Tensor]) -> tuple[dict, dict]:
        ops = {
            "layout": self.layout,
            "read": self.read,
            "write": self.write,
            "add": self.add,
            "alloc": self.alloc,
        }
        if message.get("op") not in ops:
            raise unknown(message)
        return ops[message["op"]](message, tensors)

    def layout(self, message: dict, tensors: dict) -> tuple[dict, dict]:
        return {"tensors": {name: self.spec(name) for name in self.memory.names()}}, {}

    def read(self, message: dict, tensors: dict) -> tuple[dict, dict]:
        tensor = self.memory[message.get("name")]
        tile = tensor[within(decode_index(message.get("index"), tensors), tensor)]
        self.moved(tile)
        return {}, {"tile": tile}

    def write(self, message: dict, tensors: dict) -> tuple[dict, dict]:
        value = tensors["value"] if "value" in tensors else message.get("number")
        if not isinstance(value, torch.Tensor | bool | int | float):
            raise TypeError(
                bilingual("写入的值必须是张量或数", "the value written must be a tensor or a number")
            )
        tensor = self.memory[message.get("name")]
        tensor[within(decode_index(message.get("index"), tensors), tensor)] = value
        if isinstance(value, torch.Tensor):
            self.moved(value)
        return {}, {}

    def add(self, message: dict, tensors: dict) -> tuple[dict, dict]:
        value = tensors.get("value")
        self.reserve(value.numel() * value.element_size() if value is not None else 0)
        self.memory.add(self.new_name(message), value)
        return self.spec(message["name"]), {}

    def alloc(self, message: dict, tensors: dict) -> tuple[dict, dict]:
        shape, dtype = torch.Size(message.get("shape")), tensor_files.DTYPES[message.get("dtype")]
        self.reserve(shape.numel() * dtype.itemsize)
        self.memory.alloc(self.new_name(message), shape, dtype)
        return self.spec(message["name"]), {}

    def new_name(self, message: dict) -> str:
        if not isinstance(message.get("name"), str):
            raise TypeError(bilingual("名字必须是字符串", "the name must be a string"))
        return message["name"]

    def spec(self, name: str) -> dict:
        return spec(self.memory[name])

    def moved(self, tile: torch.Tensor) -> None:
        if tile.numel() > self.largest["numel"]:
            self.largest = {"numel": tile.numel(), "shape": list(tile.shape)}

    def fast_memory(self, created: dict) -> tuple[int, tuple[int, ...]]:
        """(elements, shape) of the largest tensor in fast memory: the largest tile one access moved (seen here)
        or `created`, the largest tensor the child's watch saw the student's code create, whichever is larger."""
        largest = max(created, self.largest, key=lambda seen: int(seen.get("numel", 0)))
        return int(largest.get("numel", 0)), tuple(largest.get("shape", ()))

    def reserve(self, nbytes: int) -> None:
        if nbytes < 0 or self.scratch_bytes + nbytes > SCRATCH_LIMIT:
            raise ValueError(
                bilingual(
                    f"慢速内存中新加的张量超过 {SCRATCH_LIMIT >> 20} MiB",
                    f"the tensors added to slow memory exceed {SCRATCH_LIMIT >> 20} MiB",
                )
            )
        self.scratch_bytes += nbytes

    def result(self, inputs: list[str], output: str):
        """(output contents, one read map per input, the output's read map, its write map, ((name, read bytes,
        written bytes), ...) of every tensor): what the judge checks, all counted here."""
        stats = tuple((n, s["read_bytes"], s["written_bytes"]) for n, s in self.memory.stats().items())
        return (
            self.memory.tensor(output).clone(),
            tuple(self.memory.read_map(n) for n in inputs),
            self.memory.read_map(output),
            self.memory.write_map(output),
            stats,
        )


class SweepService(Service):
    """Unit 04's input `x` (moved to the CPU) as the judge's `CountedTensor`, which the child may only read."""

    def __init__(self, work: Path, x: torch.Tensor):
        self.counted = CountedTensor("x", x.detach().cpu())
        super().__init__(work)

    def answer(self, message: dict, tensors: dict[str, torch.Tensor]) -> tuple[dict, dict]:
        if message.get("op") == "layout":
            return {"tensors": {"x": spec(self.counted)}}, {}
        if message.get("op") == "read":
            index = within(decode_index(message.get("index"), tensors), self.counted)
            return {}, {"tile": self.counted[index]}
        raise unknown(message)

    def result(self) -> tuple[torch.Tensor, ...]:
        """(each element's read count, the numbers of its first and second reads, the columns each read spanned as
        int64): what the judge checks, all counted here."""
        counted = self.counted
        return (
            counted.read_map(),
            counted.first.clone(),
            counted.second.clone(),
            torch.tensor(counted.widths, dtype=torch.int64),
        )


class TimingService(Service):
    """The judge's timed work: a sleeping `workload` (each call asks) or a simulated asynchronous `device`
    (launches and synchronisations ask); the judge reads `workload.calls`, `observed` (the seconds each call
    took here: on a busy machine a sleep wakes late) and `device.launches` afterwards."""

    def __init__(self, work: Path, workload: Workload | None = None, device: SimulatedDevice | None = None):
        self.workload, self.device = workload, device
        super().__init__(work)

    @property
    def observed(self) -> list[float]:
        return self.workload.observed if self.workload is not None else []

    def answer(self, message: dict, tensors: dict[str, torch.Tensor]) -> tuple[dict, dict]:
        op, start = message.get("op"), self.started(message)
        if op == "call" and self.workload is not None:
            self.workload(start)
        elif op == "launch" and self.device is not None:
            self.device.launch(start)
        elif op == "wait" and self.device is not None:
            self.device.wait()
        else:
            raise unknown(message)
        return {}, {}

    @staticmethod
    def started(message: dict) -> float:
        """When the child says it sent the request, believed up to TRANSIT_SECONDS before it arrived here: a
        busy machine may wake the judge's thread late, which must not lengthen the call. Shorter than every
        duration, a false reading can only shorten the child's own wait: what the judge observes is never
        less than the duration it chose."""
        arrived, start = time.perf_counter(), message.get("start")
        return min(arrived, max(start, arrived - TRANSIT_SECONDS)) if isinstance(start, float) else arrived


__all__ = ["WATCH_SWITCHES", "Service", "SlowMemoryService", "SweepService", "TimingService"]
