"""Unit 04 (online softmax): the reference solutions of the graded exercises (instructor only).

The same code as the solution cells of `source/04_online_softmax/online_softmax.ipynb` (a test checks that
they agree). Conventions: statistics in float32 (float64 when an input is float64); the empty state is
(m, ℓ) = (−∞, 0) with output 0; a row whose scores are all −∞ gives softmax 0, output 0 and L = −∞; partial
attention outputs are unscaled (o = Σ e^{s−m} v, divided by ℓ only at the end).
"""

from __future__ import annotations

import torch

from utils.softmax_state import finite_max


def online_softmax(x, block_size):
    """softmax(x) over the last dim: one sweep over column blocks for (m, ℓ), one sweep to normalise."""
    n = x.shape[-1]
    work = torch.promote_types(x.dtype, torch.float32)
    m = torch.full(x.shape[:-1], float("-inf"), dtype=work, device=x.device)
    row_sum = torch.zeros(x.shape[:-1], dtype=work, device=x.device)
    for c0 in range(0, n, block_size):
        block = x[..., c0 : c0 + block_size].to(work)
        m_new = torch.maximum(m, block.amax(dim=-1))
        shift = finite_max(m_new)
        row_sum = row_sum * torch.exp(m - shift) + torch.exp(block - shift[..., None]).sum(dim=-1)
        m = m_new
    shift, inverse = finite_max(m), torch.where(row_sum > 0, 1 / row_sum, torch.zeros_like(row_sum))
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    for c0 in range(0, n, block_size):
        block = x[..., c0 : c0 + block_size].to(work)
        out[..., c0 : c0 + block_size] = (torch.exp(block - shift[..., None]) * inverse[..., None]).to(
            x.dtype
        )
    return out


def merge_softmax_states(m1, l1, m2, l2):
    """(m, ℓ) of the union of two parts of a row, from each part's (m, ℓ)."""
    m = torch.maximum(m1, m2)
    shift = finite_max(m)
    return m, l1 * torch.exp(m1 - shift) + l2 * torch.exp(m2 - shift)


def merge_attention_states(o1, m1, l1, o2, m2, l2):
    """(o, m, ℓ) of the union of two parts; o1, o2, o unscaled (Σ e^{s−m} v), shape (..., d)."""
    m, l = merge_softmax_states(m1, l1, m2, l2)  # noqa: E741 (ℓ, as in the notebook)
    shift = finite_max(m)
    o = o1 * torch.exp(m1 - shift)[..., None] + o2 * torch.exp(m2 - shift)[..., None]
    return o, m, l


def online_softmax_weighted_sum(scores, values, block_size):
    """(O, L) with O = softmax(scores) @ values and L = m + log ℓ, reading each score once.

    scores (..., Nq, Nk), values (..., Nk, d); O (..., Nq, d) in values' dtype, L (..., Nq) float32.
    """
    n_k = scores.shape[-1]
    work = torch.promote_types(torch.promote_types(scores.dtype, values.dtype), torch.float32)
    rows = scores.shape[:-1]
    m = torch.full(rows, float("-inf"), dtype=work, device=scores.device)
    row_sum = torch.zeros(rows, dtype=work, device=scores.device)
    acc = torch.zeros((*rows, values.shape[-1]), dtype=work, device=scores.device)
    for c0 in range(0, n_k, block_size):
        s = scores[..., c0 : c0 + block_size].to(work)
        v = values[..., c0 : c0 + block_size, :].to(work)
        m_new = torch.maximum(m, s.amax(dim=-1))
        shift = finite_max(m_new)
        p = torch.exp(s - shift[..., None])
        rescale = torch.exp(m - shift)
        row_sum = row_sum * rescale + p.sum(dim=-1)
        acc = acc * rescale[..., None] + p @ v
        m = m_new
    out = acc / torch.where(row_sum > 0, row_sum, torch.ones_like(row_sum))[..., None]
    return out.to(values.dtype), (m + torch.log(row_sum)).float()
