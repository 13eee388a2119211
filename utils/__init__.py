"""Shared helpers for the FlashAttention course (`import utils` in every notebook).

Importing this package first decides where kernels run (see `utils.runtime`): on a machine without a
CUDA GPU it switches Triton's interpreter on before anything imports triton.
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
