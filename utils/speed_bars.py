"""Unit 10's speed bar per GPU class: how fast the student's forward must run, in multiples of SDPA flash's.

The speed point asks for `SPEEDUP_OVER_UNIT08` of the course's unit-08 kernel's forward throughput. The student
bundle has no unit-08 kernel, so the peer is SDPA's flash backend, in PyTorch everywhere, and the bar is converted:
`SPEEDUP_OVER_UNIT08` × (the unit-08 kernel's throughput over SDPA flash's on that GPU). That ratio depends on the
GPU: on Hopper, Triton's `wgmma` kernels beat SDPA flash (FA2, written for sm80) by about 1.4×; elsewhere the
course has measured nothing. Each row of `TABLE` says which committed numbers it comes from (tests/test_unit10.py
derives every row again from them); `FALLBACK` is the bar on any other GPU. The judge and the visible self-check
both call `utils.checks.hopper.speed_bar()`, which looks this GPU up here.

To add a GPU class: run `python -m benchmarks.hopper_check --out benchmarks/results/<gpu>/hopper` on it, commit its
`float16/results.json`, and add a row with that file's SDPA flash forward time over the unit-08 kernel's ("triton")
at d = 128, N = 4096, non-causal (what `utils.hopper_results.forward_ratio` reads from the H100's), and a test line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from utils.messages import bilingual

SPEEDUP_OVER_UNIT08 = 0.6  # of the unit-08 kernel's throughput (its calibration: utils/checks/hopper.py)
SM90 = (9, 0)


@dataclass(frozen=True)
class SpeedBar:
    family: str  # a word of the device name ("H100" matches "NVIDIA H100 80GB HBM3", not "GH200"); "" for FALLBACK
    capability: tuple[int, int] | None  # the compute capability the row was measured on; None for FALLBACK
    unit08_over_flash: float  # the unit-08 kernel's forward throughput over SDPA flash's, at the speed shape
    source: tuple[str, str]  # (zh, en): where `unit08_over_flash` comes from

    @property
    def bar(self) -> float:
        """The bar in multiples of SDPA flash's throughput."""
        return SPEEDUP_OVER_UNIT08 * self.unit08_over_flash

    def describe(self) -> str:
        """One bilingual line: the GPU class, its bar and where the bar comes from."""
        zh_gpu, en_gpu = (self.family, self.family) if self.family else ("其他 GPU", "any other GPU")
        return bilingual(
            f"{zh_gpu}：SDPA flash 的 {self.bar:.2f} 倍，{self.source[0]}",
            f"{en_gpu}: {self.bar:.2f}× SDPA flash, {self.source[1]}",
        )


TABLE = (
    SpeedBar(
        "H100",
        SM90,
        1.405,
        (
            "在 NVIDIA H100 80GB HBM3 上校准（benchmarks/results/h100/hopper/float16/results.json："
            "d = 128、N = 4096、非因果的 float16 前向，SDPA flash 的耗时除以单元 08 内核的耗时）",
            "calibrated on the NVIDIA H100 80GB HBM3 (benchmarks/results/h100/hopper/float16/results.json: the "
            "float16 forward at d = 128, N = 4096, non-causal, SDPA flash's time over the unit-08 kernel's)",
        ),
    ),
    SpeedBar(
        "H200",
        SM90,
        1.392,
        (
            "由 H100 的数值换算到 NVIDIA H200：乘以两块 GPU 上单元 08 内核与 SDPA flash 前向之比的比值"
            "（benchmarks/results/h200/leaderboard.json 与 h100/leaderboard.json：bfloat16、因果、N = 16384、"
            "d = 64；H200 上没有测过 d = 128 的前向）",
            "converted from the H100's for the NVIDIA H200: times the ratio of the two GPUs' unit-08-over-SDPA-flash "
            "forward ratios (benchmarks/results/h200/leaderboard.json and h100/leaderboard.json: bfloat16, causal, "
            "N = 16384, d = 64; no d = 128 forward was measured on the H200)",
        ),
    ),
)
FALLBACK = SpeedBar(
    "",
    None,
    0.5,
    (
        "未经测量的保守值：假设单元 08 内核只有 SDPA flash 吞吐量的一半（Hopper 以外 SDPA flash 就是为该硬件写的 FA2，"
        "可能领先）；只要单元 08 内核在这块 GPU 上至少有这一半，保住了它的速度的内核就能通过；最终成绩请在表中的 GPU 上评",
        "a conservative value, not a measurement: it assumes the unit-08 kernel may run at half SDPA flash's "
        "throughput (off Hopper SDPA flash is FA2 on the hardware it was written for, and may lead); wherever the "
        "unit-08 kernel reaches that half, a kernel that kept its speed passes; grade final marks on a GPU in the table",
    ),
)


def speed_bar(device_name: str, capability: tuple[int, int] | None) -> SpeedBar:
    """The row of `TABLE` whose family is a word of `device_name` and whose capability matches, else FALLBACK."""
    for row in TABLE:
        if capability == row.capability and re.search(rf"\b{row.family}\b", device_name):
            return row
    return FALLBACK


def table_lines() -> list[str]:
    """Every row and the fallback, one bilingual line each, for the page."""
    return [row.describe() for row in (*TABLE, FALLBACK)]


__all__ = ["FALLBACK", "SPEEDUP_OVER_UNIT08", "SM90", "TABLE", "SpeedBar", "speed_bar", "table_lines"]
