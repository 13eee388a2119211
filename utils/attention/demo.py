"""Attention for notebook demos: the course's reference kernels where the instructor package is installed,
else PyTorch's SDPA (students never receive the reference solutions)."""

from __future__ import annotations

import importlib

import torch.nn.functional as F

from utils.messages import bilingual

REFERENCE_PACKAGE = "course.reference"


def course_kernels():
    """The instructor package `course.reference`, or None where it is not installed."""
    try:
        return importlib.import_module(REFERENCE_PACKAGE)
    except ModuleNotFoundError as error:
        if error.name not in ("course", REFERENCE_PACKAGE):
            raise  # the package is there but broken: say so
        return None


def sdpa(q, k, v, is_causal: bool = False):
    """PyTorch's `scaled_dot_product_attention` for (..., N, d) inputs.

    The inputs are viewed as (1, BH, N, d): SDPA's fused kernels need 4-D inputs (3-D ones fall back to
    its slow math path). Causal masking is top-left aligned, as everywhere in the course.
    """
    q4, k4, v4 = (t.reshape(1, -1, *t.shape[-2:]) for t in (q, k, v))
    out = F.scaled_dot_product_attention(q4, k4, v4, is_causal=is_causal)
    return out.reshape(q.shape)


def demo_attention():
    """`(attention, label)` for comparisons: `attention(q, k, v, is_causal=False)` is the course's reference
    Triton FlashAttention, or SDPA (with a printed note) where the instructor package is not installed."""
    reference = course_kernels()
    if reference is not None:
        return reference.flash_attention, "course.reference.flash_attention"
    print(
        bilingual(
            "未安装课程参考实现（仅教师可用）：用 PyTorch 的 scaled_dot_product_attention 代替",
            "the course's reference kernels are not installed (instructors only): "
            "PyTorch's scaled_dot_product_attention stands in",
        )
    )
    return sdpa, "SDPA"
