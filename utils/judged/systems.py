"""What the judge runs inside its sandboxed child for unit 09: the student's functions on workloads and models
built here (the child passes only tensors and plain values; the unit's preamble imports this module).

Nothing here decides a grade or measures what the judge grades. The timing entry points hand the student's
`benchmark` a workload or a simulated device that the judge keeps in its own process
(`course.judge.services.TimingService`): each call, launch and synchronisation is a request the judge answers
(after sleeping the call's duration, or once the device's queued time has passed), so the durations never
reach this process and the judge counts the calls itself; the entry points return only what `benchmark`
returned. The autocast entry point builds the model from the weights the judge sent and reports, beside the
table, the modules left holding a forward hook; the judge runs the same model on the same device type in its
own process and compares the tables. On a GPU the `torch.cuda._sleep`
case launches its kernel here (the child's GPU work is what is timed); the judge measures the kernel's duration
with CUDA events in its own process.
"""

from __future__ import annotations

import sys
import time

import torch
from torch import nn

from utils import timing
from utils.judged.link import Link
from utils.judged.run import resolve
from utils.judged.student_module import MODULE_NAME
from utils.toy_transformer import ToyModel, Transformer, TransformerConfig


def _student(target: str):
    return resolve(sys.modules[MODULE_NAME], target)


def _plain(result):
    """A (median, spread) answer as plain numbers where possible (tensors and NumPy scalars included)."""
    if isinstance(result, tuple | list):
        return tuple(float(v) if hasattr(v, "__float__") and not isinstance(v, bool) else v for v in result)
    return result


class JudgedWorkload:
    """The judge's sleeping workload (`utils.timing.Workload`, kept in the judge's process): a call returns when
    the judge has slept that call's duration; the judge counts the calls."""

    def __init__(self, link: Link):
        self._link = link

    def __call__(self) -> None:
        self._link.request({"op": "call", "start": time.perf_counter()})


class JudgedDevice(timing.SimulatedDevice):
    """The judge's simulated asynchronous device (`utils.timing.SimulatedDevice`, kept in the judge's process):
    `launch()` queues its time there and returns at once, `utils.timing.synchronize()` waits there."""

    def __init__(self, link: Link):
        self._link = link

    def launch(self) -> None:
        self._link.notify({"op": "launch", "start": time.perf_counter()})

    def wait(self) -> None:
        self._link.request({"op": "wait"})


def benchmark_workload(target: str, address: str, warmup: int, reps: int):
    """`target(workload, warmup, reps)` on the judge's workload served at `address` (a Unix socket)."""
    with Link(address) as link:
        return _plain(_student(target)(JudgedWorkload(link), warmup, reps))


def benchmark_simulated(target: str, address: str, warmup: int, reps: int):
    """`target(device.launch, warmup, reps)` on the judge's simulated device served at `address`."""
    with Link(address) as link, JudgedDevice(link) as device:
        return _plain(_student(target)(device.launch, warmup, reps))


def benchmark_cuda_sleep(target: str, warmup: int, reps: int, cycles: int):
    """`target(fn, warmup, reps)` where `fn` launches `torch.cuda._sleep(cycles)` (returns at once, the GPU spins)."""

    def fn():
        torch.cuda._sleep(cycles)

    return _plain(_student(target)(fn, warmup, reps))


class Residual(nn.Module):
    """A residual block and a head, `head(fc2(act(fc1(x))) + skip(x))`: not a chain of its leaves (`skip`, a Tanh,
    sees the input x, not fc2's output)."""

    def __init__(self, width_in: int, width_out: int, hidden: int):
        super().__init__()
        self.fc1 = nn.Linear(width_in, hidden)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(hidden, width_in)
        self.skip = nn.Tanh()
        self.head = nn.Linear(width_in, width_out)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.fc2(self.act(self.fc1(x))) + self.skip(x))


def build_model(kind: str, sizes: list[int]) -> nn.Module:
    """The models of the autocast cases: "toy", "sequential" and "residual" (in, out, hidden each), and
    "transformer" (the `TransformerConfig` fields in order)."""
    if kind == "toy":
        return ToyModel(*sizes)
    if kind == "residual":
        return Residual(*sizes)
    if kind == "sequential":
        width_in, width_out, hidden = sizes
        return nn.Sequential(
            nn.Linear(width_in, hidden),
            nn.GELU(),
            nn.Sequential(nn.LayerNorm(hidden), nn.Linear(hidden, hidden)),
            nn.Softmax(dim=-1),
            nn.Linear(hidden, width_out),
        )
    if kind == "transformer":
        return Transformer(TransformerConfig(*sizes))
    raise ValueError(f"unknown model kind {kind!r}")


def load_parameters(model: nn.Module, state) -> nn.Module:
    with torch.no_grad():
        for parameter, value in zip(model.parameters(), state, strict=True):
            parameter.copy_(value)
    return model


def dtype_names(table) -> dict | object:
    """A {name: dtype} table as {name: "torch.float16"} (anything else is returned as it is)."""
    if not isinstance(table, dict):
        return table
    return {str(key): str(value) for key, value in table.items()}


def hooked_modules(model: nn.Module) -> list[str]:
    """The names of the modules that hold a forward (or forward pre-) hook; "" is the model itself."""
    return [name for name, m in model.named_modules() if m._forward_hooks or m._forward_pre_hooks]


def autocast_table(target: str, kind: str, sizes: list[int], dtype, x, y, *state):
    """(`target(model, x, y, dtype)` on the model `kind` with the weights `state`, on the child's device; the
    modules that still hold a forward hook afterwards)."""
    model = load_parameters(build_model(kind, sizes), state).to(x.device)
    return dtype_names(_student(target)(model, x, y, dtype)), hooked_modules(model)


def activation_memory(target: str, config: dict, batch: int, seq_len: int, dtype):
    """`target(TransformerConfig(**config), batch, seq_len, dtype)`."""
    return _student(target)(TransformerConfig(**config), batch, seq_len, dtype)


__all__ = [
    "activation_memory",
    "autocast_table",
    "benchmark_cuda_sleep",
    "benchmark_simulated",
    "benchmark_workload",
    "build_model",
    "JudgedDevice",
    "JudgedWorkload",
    "Residual",
    "dtype_names",
    "hooked_modules",
    "load_parameters",
]
