"""Shared helpers for the FlashAttention course (`import utils` in every notebook).

Importing this package first decides where kernels run (see `utils.runtime`): on a machine without a
CUDA GPU it switches Triton's interpreter on before anything imports triton.

Who each part is for:

- `utils.<module>` (this folder, and `utils.attention`, `utils.traffic`): the student's toolbox, what the
  notebooks call in demonstrations and exercises: measuring (`measure`, `memory`, `roofline`, `timing`), plots
  (`plotting`, `*_plots`), the course's kernels (`io_kernels`, `tiling`, `softmax_kernels`), models, the float64
  references (`grading`) and the device (`runtime`);
- `utils.checks`: the visible self-checks that a unit's test cells run;
- `utils.judged`: the judge's child side, run in its sandbox, and `utils.judged.student_module`, the one builder
  of the student's module that the self-checks and the judge share.
"""

from utils import runtime as _runtime
from utils.messages import route_warnings_to_stdout

MODE = _runtime.configure()
route_warnings_to_stdout()

from utils.attention import naive_attention  # noqa: E402
from utils.messages import bilingual  # noqa: E402
from utils.runtime import device, interpreter, mode  # noqa: E402

__all__ = [
    "MODE",
    "bilingual",
    "device",
    "interpreter",
    "mode",
    "naive_attention",
]
