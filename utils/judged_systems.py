"""What the judge runs inside its sandboxed child for unit 09: the student's functions on workloads and models
built here (the child passes only tensors and plain values; the unit's preamble imports this module).

Nothing here decides a grade. The timing entry points report what the student's `benchmark` returned and how
often the workload was called; the judge chose the workload's durations and compares. The autocast entry
point builds the model from the weights the judge sent; the judge runs the same model on the same device type
in its own process and compares the tables. Residual risk, said plainly: the GPU timing case measures its
reference duration (CUDA events) in the child, the process the student's code runs in, as unit 06 measures
peak memory there.
"""

from __future__ import annotations

import statistics
import sys

import torch
from torch import nn

from utils import timing
from utils.isolation import MODULE_NAME
from utils.judged_run import resolve
from utils.toy_transformer import ToyModel, Transformer, TransformerConfig


def _student(target: str):
    return resolve(sys.modules[MODULE_NAME], target)


def _plain(result):
    """A (median, spread) answer as plain numbers where possible (tensors and NumPy scalars included)."""
    if isinstance(result, tuple | list):
        return tuple(float(v) if hasattr(v, "__float__") and not isinstance(v, bool) else v for v in result)
    return result


def benchmark_workload(target: str, warmup: int, reps: int, durations: list[float]):
    """`target(workload, warmup, reps)` on a `timing.Workload(durations)`: (answer, number of calls)."""
    workload = timing.Workload(durations)
    return _plain(_student(target)(workload, warmup, reps)), workload.calls


def benchmark_simulated(target: str, warmup: int, reps: int, seconds: float):
    """`target(device.launch, warmup, reps)` on a `timing.SimulatedDevice(seconds)`: (answer, launches)."""
    with timing.SimulatedDevice(seconds) as device:
        answer = _plain(_student(target)(device.launch, warmup, reps))
    return answer, device.launches


def benchmark_cuda_sleep(target: str, warmup: int, reps: int, cycles: int):
    """`target(fn, ...)` where `fn` launches `torch.cuda._sleep(cycles)` (returns at once, the GPU spins):
    (answer, the median seconds of one launch measured with CUDA events)."""

    def fn():
        torch.cuda._sleep(cycles)

    for _ in range(3):
        fn()
    samples = []
    for _ in range(9):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        samples.append(start.elapsed_time(end) / 1e3)
    return _plain(_student(target)(fn, warmup, reps)), statistics.median(samples)


def build_model(kind: str, sizes: list[int]) -> nn.Module:
    """The models of the autocast cases: "toy" (in, out, hidden), "sequential" (in, out, hidden) and
    "transformer" (the `TransformerConfig` fields in order)."""
    if kind == "toy":
        return ToyModel(*sizes)
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


def autocast_table(target: str, kind: str, sizes: list[int], dtype, x, y, *state):
    """`target(model, x, y, dtype)` on the model `kind` with the weights `state`, on the child's device."""
    model = load_parameters(build_model(kind, sizes), state).to(x.device)
    return dtype_names(_student(target)(model, x, y, dtype))


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
    "dtype_names",
    "load_parameters",
]
