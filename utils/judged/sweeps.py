"""What the judge runs inside its sandboxed child for unit 04: the student's function on a `CountedTensor`.

`run` wraps one argument in a `utils.sweeps.CountedTensor`, calls the student's function and returns the result
and the read maps as data; the judge decides from them in its own process. As with `utils.judged.slow_memory`,
what stays possible is deliberate tampering with the child's own process; and a sweep that reads twice cannot
show what the code keeps in fast memory in between.
"""

from __future__ import annotations

import sys

import torch

from utils.judged.run import resolve
from utils.judged.student_module import MODULE_NAME
from utils.sweeps import CountedTensor
from utils.traffic.slow_memory import bookkeeping


def run(target: str, position: int, *args):
    """Call `target(*args)` with `args[position]` in a `CountedTensor`; returns (result, read map, first, second,
    widths as an int64 tensor)."""
    args = list(args)
    counted = CountedTensor("x", args[position])
    args[position] = counted
    result = resolve(sys.modules[MODULE_NAME], target)(*args)
    with bookkeeping():
        widths = torch.tensor(counted.widths, dtype=torch.int64)
        return result, counted.read_map(), counted.first.clone(), counted.second.clone(), widths


__all__ = ["run"]
