"""FlashAttention in plain PyTorch: tiled forward with online softmax, tiled backward with recomputation.

The loops mirror the Triton kernels tile for tile, so the two can be read side by side. Only tiles of
size (block_q × block_k) ever exist; the N×N score matrix is never built.
"""

from __future__ import annotations

import torch

from utils.attention.validate import check_qkv, default_scale

BLOCK_Q = 64
BLOCK_K = 64


def _compute_dtype(dtype: torch.dtype) -> torch.dtype:
    """Accumulate in float32 (float64 stays float64)."""
    return torch.promote_types(dtype, torch.float32)


def _tile_scores(q_tile, k_tile, scale, q_start, k_start, is_causal):
    """Scaled scores of one tile; keys after the query (causal) get -inf."""
    s = q_tile @ k_tile.transpose(-2, -1) * scale
    k_end = k_start + k_tile.shape[-2]
    if is_causal and k_end - 1 > q_start:  # only tiles crossing the diagonal need a mask
        rows = torch.arange(q_start, q_start + q_tile.shape[-2], device=s.device)[:, None]
        cols = torch.arange(k_start, k_end, device=s.device)[None, :]
        s = s.masked_fill(cols > rows, float("-inf"))
    return s


def _visible_key_end(q_end: int, n_k: int, is_causal: bool) -> int:
    """Keys at or after this index are masked for every query before `q_end`."""
    return min(q_end, n_k) if is_causal else n_k


def tiled_forward(q, k, v, is_causal, scale, block_q=BLOCK_Q, block_k=BLOCK_K):
    """Returns O (dtype of q) and L = log-sum-exp of each row of scores (float32, shape (..., Nq))."""
    n_q, n_k = q.shape[-2], k.shape[-2]
    work = _compute_dtype(q.dtype)
    q, k, v = q.to(work), k.to(work), v.to(work)
    o = torch.empty_like(q)
    lse = torch.empty(q.shape[:-1], dtype=work, device=q.device)
    for q_start in range(0, n_q, block_q):
        q_end = min(q_start + block_q, n_q)
        q_tile = q[..., q_start:q_end, :]
        row_max = torch.full(q_tile.shape[:-1], float("-inf"), dtype=work, device=q.device)
        row_sum = torch.zeros_like(row_max)
        acc = torch.zeros_like(q_tile)
        for k_start in range(0, _visible_key_end(q_end, n_k, is_causal), block_k):
            k_end = min(k_start + block_k, n_k)
            s = _tile_scores(q_tile, k[..., k_start:k_end, :], scale, q_start, k_start, is_causal)
            new_max = torch.maximum(row_max, s.amax(dim=-1))
            p = torch.exp(s - new_max[..., None])
            correction = torch.exp(row_max - new_max)  # rescales what was summed under the old max
            row_sum = row_sum * correction + p.sum(dim=-1)
            acc = acc * correction[..., None] + p @ v[..., k_start:k_end, :]
            row_max = new_max
        o[..., q_start:q_end, :] = acc / row_sum[..., None]
        lse[..., q_start:q_end] = row_max + torch.log(row_sum)
    return o, lse.float()


def tiled_backward(q, k, v, o, lse, grad_out, is_causal, scale, block_q=BLOCK_Q, block_k=BLOCK_K):
    """(dQ, dK, dV): for each K/V tile, loop over the Q tiles that see it, rebuilding P from L."""
    n_q, n_k = q.shape[-2], k.shape[-2]
    work = _compute_dtype(q.dtype)
    in_dtype = q.dtype
    q, k, v, o, do = (t.to(work) for t in (q, k, v, o, grad_out))
    lse = lse.to(work)
    delta = (do * o).sum(dim=-1)  # Δ_i = Σ_d dO_id O_id = Σ_j P_ij dP_ij
    dq = torch.zeros_like(q)
    dk = torch.zeros_like(k)
    dv = torch.zeros_like(v)
    for k_start in range(0, n_k, block_k):
        k_end = min(k_start + block_k, n_k)
        k_tile, v_tile = k[..., k_start:k_end, :], v[..., k_start:k_end, :]
        first_q = (k_start // block_q) * block_q if is_causal else 0  # earlier queries see none of these keys
        for q_start in range(first_q, n_q, block_q):
            q_end = min(q_start + block_q, n_q)
            rows = slice(q_start, q_end)
            s = _tile_scores(q[..., rows, :], k_tile, scale, q_start, k_start, is_causal)
            p = torch.exp(s - lse[..., rows, None])
            dv[..., k_start:k_end, :] += p.transpose(-2, -1) @ do[..., rows, :]
            dp = do[..., rows, :] @ v_tile.transpose(-2, -1)
            ds = p * (dp - delta[..., rows, None])
            dq[..., rows, :] += ds @ k_tile * scale
            dk[..., k_start:k_end, :] += ds.transpose(-2, -1) @ q[..., rows, :] * scale
    return dq.to(in_dtype), dk.to(in_dtype), dv.to(in_dtype)


class FlashAttentionPyTorch(torch.autograd.Function):
    """FlashAttention-2 in PyTorch: `FlashAttentionPyTorch.apply(Q, K, V, is_causal=False, scale=None)`.

    Inputs are (..., N, d); Nq may differ from Nk. Saves exactly Q, K, V, O and L (float32, (..., Nq)).
    """

    @staticmethod
    def forward(ctx, q, k, v, is_causal=False, scale=None):
        check_qkv(q, k, v)
        scale = default_scale(q, scale)
        o, lse = tiled_forward(q, k, v, bool(is_causal), scale)
        o = o.to(q.dtype)
        ctx.save_for_backward(q, k, v, o, lse)
        ctx.is_causal, ctx.scale = bool(is_causal), scale
        return o

    @staticmethod
    def backward(ctx, grad_out):
        q, k, v, o, lse = ctx.saved_tensors
        dq, dk, dv = tiled_backward(q, k, v, o, lse, grad_out, ctx.is_causal, ctx.scale)
        return dq, dk, dv, None, None
