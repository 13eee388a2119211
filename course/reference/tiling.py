"""Reference solutions of unit 03 (tiling): a tiled matmul through the slow-memory wrapper, the loads of the
output-stationary blocked matmul, and the largest FlashAttention tile that fits in on-chip memory."""

from __future__ import annotations

import math

import torch


def tiled_matmul(mem, block_m: int, block_n: int, block_k: int) -> None:
    """mem["C"] = mem["A"] @ mem["B"], one block_m×block_n tile of C at a time, accumulated in float32 over
    block_k-wide steps (remainder tiles smaller): A read ⌈n/block_n⌉ times, B ⌈m/block_m⌉ times, C written once."""
    (m, k), n = mem["A"].shape, mem["B"].shape[1]
    for i in range(0, m, block_m):
        for j in range(0, n, block_n):
            acc = torch.zeros(min(block_m, m - i), min(block_n, n - j), dtype=torch.float32)
            for p in range(0, k, block_k):
                a = mem["A"][i : i + block_m, p : p + block_k].float()
                b = mem["B"][p : p + block_k, j : j + block_n].float()
                acc += a @ b
            mem["C"][i : i + block_m, j : j + block_n] = acc


def matmul_hbm_loads(m: int, n: int, k: int, block_m: int, block_n: int, block_k: int) -> tuple[int, int]:
    """(elements of A loaded, elements of B loaded) by the output-stationary blocked matmul: every tile of C
    loads its whole row panel of A and column panel of B once; block_k does not change the totals."""
    return m * k * math.ceil(n / block_n), k * n * math.ceil(m / block_m)


def on_chip_bytes(block_q: int, block_k: int, d: int, dtype: torch.dtype) -> int:
    """Bytes on chip for one step of tiled attention: Q (Bq×d), K and V (Bk×d) tiles in `dtype`, the O
    accumulator (Bq×d) and the scores (Bq×Bk) in float32, and the row statistics m and ℓ (2·Bq float32)."""
    e = torch.tensor([], dtype=dtype).element_size()
    return e * d * (block_q + 2 * block_k) + 4 * (block_q * d + block_q * block_k + 2 * block_q)


def best_tile(sram_bytes: int, d: int, dtype: torch.dtype) -> tuple[int, int] | None:
    """The power-of-two (Bq, Bk), both at least 16, that fits in `sram_bytes` with the largest Bq·Bk; among
    equal products the larger Bq. None when (16, 16) does not fit."""
    best = None
    block_q = 16
    while on_chip_bytes(block_q, 16, d, dtype) <= sram_bytes:
        block_k = 16
        while on_chip_bytes(block_q, 2 * block_k, d, dtype) <= sram_bytes:
            block_k *= 2
        if best is None or (block_q * block_k, block_q) > (best[0] * best[1], best[0]):
            best = (block_q, block_k)
        block_q *= 2
    return best
