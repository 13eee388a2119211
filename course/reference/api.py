"""One functional entry point for every attention implementation in the course."""

from __future__ import annotations

from course.reference.flash_pytorch import FlashAttentionPyTorch
from course.reference.flash_triton import FlashAttentionTriton
from utils.attention.naive import naive_attention
from utils.messages import bilingual

BACKENDS = ("triton", "pytorch", "naive")


def flash_attention(q, k, v, is_causal: bool = False, scale: float | None = None, backend: str = "triton"):
    """softmax(Q Kᵀ · scale) V for (..., N, d) inputs, differentiable, computed by `backend`:

    - "triton": the FlashAttention-2 Triton kernels (GPU, or the CPU interpreter);
    - "pytorch": the tiled PyTorch version (same algorithm, readable, any device);
    - "naive": the baseline that materialises the N×N scores.
    `scale` defaults to 1/sqrt(d); causal masking lets query i see keys j <= i.
    """
    if backend == "triton":
        return FlashAttentionTriton.apply(q, k, v, is_causal, scale)
    if backend == "pytorch":
        return FlashAttentionPyTorch.apply(q, k, v, is_causal, scale)
    if backend == "naive":
        return naive_attention(q, k, v, is_causal=is_causal, scale=scale)
    raise ValueError(
        bilingual(
            f"未知的 backend={backend!r}，可选 {BACKENDS}",
            f"unknown backend={backend!r}, choose one of {BACKENDS}",
        )
    )
