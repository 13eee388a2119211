"""Instructor package: the course's reference solutions. Students never receive it.

`FlashAttentionPyTorch` (unit 06), `FlashAttentionTriton` with its kernels and tuned tile configs (unit 08),
and `flash_attention`, one entry point for every backend (benchmarks, tests, notebook demos through
`utils.attention.demo_attention`).
"""

import utils  # noqa: F401  (first: it picks the GPU or switches Triton's interpreter on)
from course.reference.api import BACKENDS, flash_attention
from course.reference.flash_pytorch import FlashAttentionPyTorch
from course.reference.flash_triton import FlashAttentionTriton

__all__ = ["BACKENDS", "FlashAttentionPyTorch", "FlashAttentionTriton", "flash_attention"]
