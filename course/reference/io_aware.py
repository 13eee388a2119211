"""Reference solutions of unit 02 (IO-aware design): FLOP and byte counts, the roofline, the HBM traffic
of standard and flash attention, and a fused scale + mask + softmax through the slow-memory wrapper.

FLOP conventions (the notebook states them): a multiply-add is 2 FLOPs; an add, multiply, comparison (max),
exp and division are 1 FLOP each; softmax costs 5 FLOPs per element (max, subtract, exp, sum, divide).
"""

from __future__ import annotations

import math

import torch

from utils.messages import bilingual

OPS = ("matmul", "scores", "softmax", "pv", "fused_attention")


def flops_and_bytes(op: str, shapes, dtype: torch.dtype) -> tuple[int, int]:
    """(FLOPs, bytes moved if every operand is read once and every result written once)."""
    e = torch.tensor([], dtype=dtype).element_size()
    if op == "matmul":
        m, k, n = shapes
        return 2 * m * k * n, e * (m * k + k * n + m * n)
    if op == "softmax":
        rows, cols = shapes
        return 5 * rows * cols, e * 2 * rows * cols
    n_q, n_k, d = shapes
    if op == "scores":
        return 2 * n_q * n_k * d + n_q * n_k, e * (n_q * d + n_k * d + n_q * n_k)
    if op == "pv":
        return 2 * n_q * n_k * d, e * (n_q * n_k + n_k * d + n_q * d)
    if op == "fused_attention":
        return 4 * n_q * n_k * d + 6 * n_q * n_k, e * (2 * n_q * d + 2 * n_k * d)
    raise ValueError(bilingual(f"未知的操作 {op!r}，可选 {OPS}", f"unknown op {op!r}, choose one of {OPS}"))


def arithmetic_intensity(op: str, shapes, dtype: torch.dtype) -> float:
    """FLOPs per byte of `op` on `shapes` in `dtype`."""
    flops, nbytes = flops_and_bytes(op, shapes, dtype)
    return flops / nbytes


def roofline(flops: float, nbytes: float, peak_flops: float, peak_bandwidth: float) -> tuple[float, str]:
    """(attainable FLOP/s, "memory" or "compute"): min(peak, intensity · bandwidth); at the ridge, "compute"."""
    intensity = flops / nbytes
    bound = "memory" if intensity < peak_flops / peak_bandwidth else "compute"
    return min(peak_flops, intensity * peak_bandwidth), bound


def hbm_bytes_standard(n: int, d: int, dtype: torch.dtype, block_q: int = 64) -> int:
    """Bytes the course's three unfused kernels read and write for one head (N×d inputs, forward).

    S = σQKᵀ reads Q once and K once per query tile, writes S; softmax reads S, writes P; O = PV reads P
    once and V once per query tile, writes O. S and P have the inputs' dtype.
    """
    e = torch.tensor([], dtype=dtype).element_size()
    tiles = math.ceil(n / block_q)
    return e * (2 * n * d + 2 * n * d * tiles + 4 * n * n)


def flash_block_size(d: int, sram_bytes: int, dtype: torch.dtype) -> int:
    """The tiling rule: the largest power of two B with four B×d tiles (Q, K, V, O) in SRAM, at least 16."""
    e = torch.tensor([], dtype=dtype).element_size()
    fit = sram_bytes // (4 * d * e)
    if fit < 16:
        raise ValueError(
            bilingual(
                f"SRAM {sram_bytes} 字节放不下 16 行的分块（d={d}，{e} 字节/元素）",
                f"{sram_bytes} bytes of SRAM cannot hold tiles of 16 rows (d={d}, {e} bytes per element)",
            )
        )
    return 1 << (fit.bit_length() - 1)


def hbm_bytes_flash(n: int, d: int, sram_bytes: int, dtype: torch.dtype) -> int:
    """Bytes a FlashAttention forward kernel reads and writes for one head, with B = flash_block_size:
    Q read once, K and V once per query tile, O written once, L (float32, one per row) written once."""
    e = torch.tensor([], dtype=dtype).element_size()
    tiles = math.ceil(n / flash_block_size(d, sram_bytes, dtype))
    return e * (2 * n * d + 2 * n * d * tiles) + 4 * n


BLOCK_ROWS = 32  # rows of scores on chip at a time (the notebook allows at most 64)


def fused_scale_mask_softmax(mem, scale: float, is_causal: bool) -> None:
    """P = softmax(mask(scale · S)) row block by row block: each element of S read once, of P written once."""
    batch, n_q, n_k = mem["S"].shape
    compute = torch.promote_types(mem["S"].dtype, torch.float32)
    cols = torch.arange(n_k, device=mem["S"].device)
    for b in range(batch):
        for r0 in range(0, n_q, BLOCK_ROWS):
            r1 = min(r0 + BLOCK_ROWS, n_q)
            s = mem["S"][b, r0:r1].to(compute) * scale
            if is_causal:
                rows = torch.arange(r0, r1, device=s.device)[:, None]
                s = s.masked_fill(cols[None, :] > rows, float("-inf"))
            mem["P"][b, r0:r1] = torch.softmax(s, dim=-1)
