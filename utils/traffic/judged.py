"""What the judge runs inside its sandboxed child for a slow-memory exercise: one call of the student's
function on a `SlowMemory` built here, returned as data.

The counting happens in the child, by this (course) code, next to the student's code; the judge in its own
process never trusts a total. It receives each element's read and write counts and the output as it ended
up in slow memory, and checks them itself: every output element written exactly once, every input element
read at most once, every element that the result depends on read at least once, and nothing else in slow
memory touched. What remains possible is deliberate tampering with this process (rewriting the counters
before they are returned), as with every check that runs in the student's process; the judge's static
scan flags the usual means.
"""

from __future__ import annotations

import sys

import torch

from utils.isolation import MODULE_NAME
from utils.judged_run import resolve
from utils.traffic.slow_memory import SlowMemory, bookkeeping


def run(target: str, inputs: list[str], output, *args):
    """Call `target(mem, *rest)` where `mem` holds the leading tensors of `args` under the names `inputs`
    and a NaN-filled output tensor typed like the first input: `output` is its name (shaped like the first
    input) or [name, shape]. Returns (output contents, one read map per input, the output's read map, its
    write map, ((name, read bytes, written bytes), ...) of every tensor). Slow memory lives on the CPU on every
    machine, as in the notebooks' self-checks (the judge's child receives its tensors on the GPU where one is)."""
    rest = args[len(inputs) :]
    with bookkeeping():  # the course's copies, not the student's tensors (the largest one created is judged)
        tensors = [t.cpu() for t in args[: len(inputs)]]
        name, shape = (output, tensors[0].shape) if isinstance(output, str) else output
        mem = SlowMemory(**dict(zip(inputs, tensors, strict=True)))
        mem.add(
            name, torch.full(tuple(shape), float("nan"), dtype=tensors[0].dtype, device=tensors[0].device)
        )
    resolve(sys.modules[MODULE_NAME], target)(mem, *rest)
    with bookkeeping():
        stats = tuple((n, s["read_bytes"], s["written_bytes"]) for n, s in mem.stats().items())
        return (
            mem.tensor(name).clone(),
            tuple(mem.read_map(n) for n in inputs),
            mem.read_map(name),
            mem.write_map(name),
            stats,
        )


def plain(value):
    """A JSON value as the student's function expects it: lists become tuples, "torch.float16" a dtype."""
    if isinstance(value, list):
        return tuple(plain(v) for v in value)
    if (
        isinstance(value, str)
        and value.startswith("torch.")
        and isinstance(getattr(torch, value[6:], None), torch.dtype)
    ):
        return getattr(torch, value[6:])
    return value


def call(target: str, *args):
    """Call `target(*args)` with the arguments the judge could only send as JSON turned back (`plain`)."""
    return resolve(sys.modules[MODULE_NAME], target)(*(plain(a) for a in args))


__all__ = ["call", "plain", "run"]
