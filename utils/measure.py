"""Measuring: FLOP counts, timing and peak memory (meaningful on a GPU only)."""

from __future__ import annotations


def attention_flops(
    batch_heads: int, n_q: int, n_k: int, d: int, is_causal: bool, backward: bool = False
) -> float:
    """FLOPs of attention: 4·B·H·Nq·Nk·d forward (halved for causal); forward+backward is 3.5× forward."""
    flops = 4.0 * batch_heads * n_q * n_k * d * (0.5 if is_causal else 1.0)
    return flops * 3.5 if backward else flops
