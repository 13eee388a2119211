"""The baseline: materialise S = Q Kᵀ · scale and P = softmax(S), both of size N×N."""

from __future__ import annotations

import torch

from utils.attention.validate import causal_mask, check_qkv, default_scale


def naive_attention(
    q, k, v, is_causal: bool = False, scale: float | None = None, return_scores: bool = False
):
    """Standard attention O = softmax(Q Kᵀ · scale) V for (..., N, d) inputs.

    With `return_scores=True` it returns `(O, S, P)`, the N×N matrices the memory lessons measure.
    Causal masking lets query i see keys j <= i (top-left aligned, also when Nq != Nk).
    """
    check_qkv(q, k, v)
    s = torch.matmul(q, k.transpose(-2, -1)) * default_scale(q, scale)
    if is_causal:
        s = s.masked_fill(~causal_mask(q.shape[-2], k.shape[-2], q.device), float("-inf"))
    # The softmax runs in (at least) float32 on an explicit copy of S, on every device alike (PyTorch's
    # softmax(dtype=float32) skips that copy for float16 on CUDA only), so one memory model fits all.
    p = torch.softmax(s.to(torch.promote_types(s.dtype, torch.float32)), dim=-1).to(q.dtype)
    o = torch.matmul(p, v)
    return (o, s, p) if return_scores else o
