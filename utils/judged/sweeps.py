"""What the judge runs inside its sandboxed child for unit 04: the student's function on the judge's counted tensor,
which stays in the judge's process.

`run` hands the student's function a `JudgedTensor` as its first argument: it knows the shape and dtype, and turns
each `x[index]` read into a request to the judge (`course.judge.services.SweepService`), which holds the data in a
`utils.sweeps.CountedTensor` and counts and orders every element read. Nothing in this process holds the data or
the counts, so no code here can read the row without being counted (as a one-shot softmax disguised as two sweeps
did through the tensor's private data) or rewrite what was counted. A sweep that reads twice still cannot show what
the code keeps in fast memory in between.
"""

from __future__ import annotations

import sys

from utils.judged.link import Link
from utils.judged.run import resolve
from utils.judged.slow_memory import JudgedMemory
from utils.judged.student_module import MODULE_NAME


def run(target: str, address: str, *args):
    """Call `target(x, *args)`, `x` the judge's counted tensor served at `address` (a Unix socket); returns the
    result."""
    with Link(address) as link:
        return resolve(sys.modules[MODULE_NAME], target)(JudgedMemory(link)["x"], *args)


__all__ = ["run"]
