"""Where kernels run: the one place that decides between a CUDA GPU and Triton's CPU interpreter.

The decision must happen before `triton` is first imported, because Triton reads
`TRITON_INTERPRET` when a kernel is decorated. `utils/__init__.py` calls `configure()` first thing.

Override with the environment variable `FLASH_COURSE_DEVICE`:
  - `gpu`: require a CUDA GPU (error if none);
  - `cpu`: force the interpreter even when a GPU is present;
  - unset or `auto`: use the GPU when there is one.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

import torch

from utils.messages import bilingual

ENV_VAR = "FLASH_COURSE_DEVICE"
BANNER_SHOWN = (
    "FLASH_COURSE_BANNER_SHOWN"  # set in a child's environment: its parent already showed the banner
)
CPU_BANNER = bilingual(
    "CPU 模式：Triton 内核在解释器中运行，计时没有参考意义",
    "CPU mode: Triton kernels run in the interpreter; timings are not meaningful",
)


@dataclass(frozen=True)
class Mode:
    """The chosen execution mode."""

    device: torch.device
    interpreter: bool
    name: str  # GPU name, or "CPU (Triton interpreter)"

    @property
    def is_gpu(self) -> bool:
        return not self.interpreter


_MODE: Mode | None = None


def _requested() -> str:
    value = os.environ.get(ENV_VAR, "auto").strip().lower() or "auto"
    if value not in ("auto", "gpu", "cpu"):
        raise ValueError(
            bilingual(
                f"环境变量 {ENV_VAR}={value!r} 无效，应为 auto、gpu 或 cpu",
                f"{ENV_VAR}={value!r} is invalid: use auto, gpu or cpu",
            )
        )
    return value


def _decide() -> Mode:
    requested = _requested()
    has_gpu = torch.cuda.is_available()
    if requested == "gpu" and not has_gpu:
        raise RuntimeError(
            bilingual(
                f"{ENV_VAR}=gpu，但没有可用的 CUDA GPU",
                f"{ENV_VAR}=gpu but no CUDA GPU is available",
            )
        )
    if has_gpu and requested != "cpu":
        return Mode(torch.device("cuda"), False, torch.cuda.get_device_name(0))
    return Mode(torch.device("cpu"), True, "CPU (Triton interpreter)")


def configure(announce: bool = True) -> Mode:
    """Decide the mode once per process; switch Triton's interpreter on when running on the CPU."""
    global _MODE
    if _MODE is not None:
        return _MODE
    mode = _decide()
    if mode.interpreter:
        if "triton" in sys.modules and os.environ.get("TRITON_INTERPRET") != "1":
            raise RuntimeError(
                bilingual(
                    "triton 在 utils 之前就被导入了，无法再切换到解释器模式；请先 `import utils`"
                    "（或设置 TRITON_INTERPRET=1）再重启内核",
                    "triton was imported before utils, too late to switch on the interpreter; "
                    "restart the kernel and `import utils` first (or set TRITON_INTERPRET=1)",
                )
            )
        os.environ["TRITON_INTERPRET"] = "1"
        if announce and os.environ.get(BANNER_SHOWN) != "1":
            print(CPU_BANNER)
    _MODE = mode
    return mode


def mode() -> Mode:
    """The current mode (deciding it if nobody has yet)."""
    return configure(announce=False) if _MODE is None else _MODE


def device() -> torch.device:
    """The device that tensors for kernels should live on."""
    return mode().device


def interpreter() -> bool:
    """True when Triton kernels run in the CPU interpreter."""
    return mode().interpreter
