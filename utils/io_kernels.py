"""Triton kernels that unit 02 runs, times and counts (learners write Triton only from unit 07).

- `copy`: y = x, the kernel that measures memory bandwidth (one read and one write per element);
- `repeat`: applies y = a·y + b `repeats` times to each element in registers: FLOPs grow, traffic does not
  (Horace He's experiment);
- `scale_mask_softmax`: P = softmax(mask(σ·S)) row by row, fused (one kernel: S read once, P written once)
  or unfused (three kernels: scale, mask, softmax, each a round trip through global memory);
- `standard_attention`: the three kernels of standard attention, S = σ·Q Kᵀ, P = softmax(S), O = P V,
  which write S and P to global memory and read them back;
- `fused_attention`: one kernel per tile of `block_q` query rows that keeps S and P on chip and writes only
  O and the float32 log-sum-exp L. It holds a whole row of scores at once (exact softmax, no online
  rescaling), so it suits short sequences; FlashAttention (units 04, 06, 08) streams the keys in tiles with
  the online softmax and moves exactly the same bytes.

Every launcher takes `count=True` to run its kernels in Triton's interpreter through the traffic counter
(`utils.traffic.count_traffic`) and return `(result, Traffic)`. Tensors are (BH, N, d) or (BH, Nq, Nk).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import triton
import triton.language as tl

from utils.messages import bilingual
from utils.traffic import Traffic, count_traffic


@triton.jit
def copy_kernel(X, Y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    inside = offs < n
    tl.store(Y + offs, tl.load(X + offs, mask=inside), mask=inside)


@triton.jit
def repeat_kernel(X, Y, n, a, b, REPEATS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    inside = offs < n
    y = tl.load(X + offs, mask=inside).to(tl.float32)
    for _ in range(REPEATS):
        y = y * a + b  # 2 FLOPs per element per repeat, in registers
    tl.store(Y + offs, y.to(Y.dtype.element_ty), mask=inside)


@triton.jit
def scale_kernel(X, Y, n, scale, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    inside = offs < n
    x = tl.load(X + offs, mask=inside).to(tl.float32)
    tl.store(Y + offs, (x * scale).to(Y.dtype.element_ty), mask=inside)


@triton.jit
def causal_mask_kernel(X, Y, n, n_q, n_k, BLOCK: tl.constexpr):
    """Y = X where key j <= query i, else -inf (top-left aligned), for a contiguous (BH, Nq, Nk) X."""
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    inside = offs < n
    x = tl.load(X + offs, mask=inside)
    col = offs % n_k
    row = (offs // n_k) % n_q
    tl.store(Y + offs, tl.where(col <= row, x, float("-inf")).to(Y.dtype.element_ty), mask=inside)


@triton.jit
def softmax_kernel(
    S, P, n_q, n_k, scale, IS_CAUSAL: tl.constexpr, BLOCK_R: tl.constexpr, BLOCK_K: tl.constexpr
):
    """BLOCK_R whole rows per program: P = softmax(σ·S) over the keys each row sees. Masked keys are not read."""
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    cols = tl.arange(0, BLOCK_K)
    offs = (tl.program_id(1).to(tl.int64) * n_q + rows[:, None]) * n_k + cols[None, :]
    inside = (rows[:, None] < n_q) & (cols[None, :] < n_k)
    visible = inside
    if IS_CAUSAL:
        visible = visible & (cols[None, :] <= rows[:, None])
    s = tl.load(S + offs, mask=visible, other=float("-inf")).to(tl.float32) * scale
    s = tl.where(visible, s, float("-inf"))
    row_max = tl.where(rows < n_q, tl.max(s, 1), 0.0)  # rows past the end: all -inf, never stored
    p = tl.exp(s - row_max[:, None])
    row_sum = tl.sum(p, 1)
    p = p / tl.where(row_sum > 0, row_sum, 1.0)[:, None]
    tl.store(P + offs, p.to(P.dtype.element_ty), mask=inside)


@triton.jit
def scores_kernel(
    Q, K, S, n_q, n_k, scale, HEAD_DIM: tl.constexpr, BLOCK_Q: tl.constexpr, BLOCK_K: tl.constexpr
):
    """S = σ·Q Kᵀ. One program per tile of BLOCK_Q queries: its Q tile is read once, every key tile once."""
    bh = tl.program_id(1).to(tl.int64)
    rows = tl.program_id(0) * BLOCK_Q + tl.arange(0, BLOCK_Q)
    dims = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + bh * n_q * HEAD_DIM + rows[:, None] * HEAD_DIM + dims[None, :], mask=rows[:, None] < n_q)
    for start in range(0, n_k, BLOCK_K):
        cols = start + tl.arange(0, BLOCK_K)
        kt = tl.load(
            K + bh * n_k * HEAD_DIM + cols[None, :] * HEAD_DIM + dims[:, None], mask=cols[None, :] < n_k
        )
        s = tl.dot(q, kt) * scale
        inside = (rows[:, None] < n_q) & (cols[None, :] < n_k)
        tl.store(
            S + bh * n_q * n_k + rows[:, None] * n_k + cols[None, :], s.to(S.dtype.element_ty), mask=inside
        )


@triton.jit
def pv_kernel(P, V, Out, n_q, n_k, HEAD_DIM: tl.constexpr, BLOCK_Q: tl.constexpr, BLOCK_K: tl.constexpr):
    """O = P V. One program per tile of BLOCK_Q rows: reads its rows of P once and every tile of V."""
    bh = tl.program_id(1).to(tl.int64)
    rows = tl.program_id(0) * BLOCK_Q + tl.arange(0, BLOCK_Q)
    dims = tl.arange(0, HEAD_DIM)
    acc = tl.zeros([BLOCK_Q, HEAD_DIM], dtype=tl.float32)
    for start in range(0, n_k, BLOCK_K):
        cols = start + tl.arange(0, BLOCK_K)
        p = tl.load(
            P + bh * n_q * n_k + rows[:, None] * n_k + cols[None, :],
            mask=(rows[:, None] < n_q) & (cols[None, :] < n_k),
            other=0.0,
        )
        v = tl.load(
            V + bh * n_k * HEAD_DIM + cols[:, None] * HEAD_DIM + dims[None, :],
            mask=cols[:, None] < n_k,
            other=0.0,
        )
        acc = tl.dot(p, v, acc)
    tl.store(
        Out + bh * n_q * HEAD_DIM + rows[:, None] * HEAD_DIM + dims[None, :],
        acc.to(Out.dtype.element_ty),
        mask=rows[:, None] < n_q,
    )


@triton.jit
def fused_attention_kernel(
    Q, K, V, Out, L, n_q, n_k, scale, HEAD_DIM: tl.constexpr, BLOCK_Q: tl.constexpr, BLOCK_K: tl.constexpr
):
    """O and L for one tile of BLOCK_Q queries; BLOCK_K >= Nk, so a whole row of scores stays on chip.
    Reads its Q tile once and K, V once; writes its O tile and L (float32). S and P never leave the chip."""
    bh = tl.program_id(1).to(tl.int64)
    rows = tl.program_id(0) * BLOCK_Q + tl.arange(0, BLOCK_Q)
    cols = tl.arange(0, BLOCK_K)
    dims = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + bh * n_q * HEAD_DIM + rows[:, None] * HEAD_DIM + dims[None, :], mask=rows[:, None] < n_q)
    kt = tl.load(K + bh * n_k * HEAD_DIM + cols[None, :] * HEAD_DIM + dims[:, None], mask=cols[None, :] < n_k)
    v = tl.load(V + bh * n_k * HEAD_DIM + cols[:, None] * HEAD_DIM + dims[None, :], mask=cols[:, None] < n_k)
    s = tl.where(cols[None, :] < n_k, tl.dot(q, kt) * scale, float("-inf"))
    row_max = tl.max(s, 1)
    p = tl.exp(s - row_max[:, None])
    row_sum = tl.sum(p, 1)
    o = tl.dot(p.to(v.dtype), v) / row_sum[:, None]
    tl.store(
        Out + bh * n_q * HEAD_DIM + rows[:, None] * HEAD_DIM + dims[None, :],
        o.to(Out.dtype.element_ty),
        mask=rows[:, None] < n_q,
    )
    tl.store(L + bh * n_q + rows, row_max + tl.log(row_sum), mask=rows < n_q)


@dataclass
class Launches:
    """Kernel launches run one after another, or counted in the interpreter (`count=True`)."""

    count: bool
    traffic: Traffic | None = None

    def __call__(self, kernel, grid, *args, **kwargs) -> None:
        if not self.count:
            kernel[grid](*args, **kwargs)
            return
        traffic = count_traffic(kernel, grid, *args, **kwargs)
        self.traffic = traffic if self.traffic is None else self.traffic + traffic

    def result(self, value):
        return (value, self.traffic) if self.count else value


BLOCK = 1024


def _rows_per_program(block_k: int) -> int:
    """Whole rows per softmax program: 16, fewer for long rows (a program holds BLOCK_R × BLOCK_K scores)."""
    return max(1, min(16, 8192 // block_k))


def _check(x: torch.Tensor, dims: int, what: str) -> None:
    if not isinstance(x, torch.Tensor) or x.dim() != dims or not x.is_contiguous():
        shape = tuple(x.shape) if isinstance(x, torch.Tensor) else type(x).__name__
        raise ValueError(
            bilingual(
                f"{what} 需要 {dims} 维的连续张量，得到 {shape}",
                f"{what} needs a contiguous {dims}-D tensor, got {shape}",
            )
        )


def copy(x: torch.Tensor, count: bool = False):
    """y = x through `copy_kernel`."""
    y = torch.empty_like(x)
    run = Launches(count)
    run(copy_kernel, (triton.cdiv(x.numel(), BLOCK),), x, y, x.numel(), BLOCK=BLOCK)
    return run.result(y)


def repeat(x: torch.Tensor, repeats: int, count: bool = False):
    """y = a·y + b applied `repeats` times (a = 0.999, b = 0.001: values stay bounded). 2·repeats FLOPs/element."""
    y = torch.empty_like(x)
    run = Launches(count)
    run(
        repeat_kernel,
        (triton.cdiv(x.numel(), BLOCK),),
        x,
        y,
        x.numel(),
        0.999,
        0.001,
        REPEATS=repeats,
        BLOCK=BLOCK,
    )
    return run.result(y)


def scale_mask_softmax(
    s: torch.Tensor, scale: float, is_causal: bool, fused: bool = True, count: bool = False
):
    """P = softmax(mask(scale·S)) over the last dim of a contiguous (BH, Nq, Nk) S, in S's dtype."""
    _check(s, 3, "scale_mask_softmax")
    bh, n_q, n_k = s.shape
    run = Launches(count)
    p = torch.empty_like(s)
    block_k = triton.next_power_of_2(n_k)
    block_r = _rows_per_program(block_k)
    rows = (triton.cdiv(n_q, block_r), bh)
    if fused:
        run(
            softmax_kernel, rows, s, p, n_q, n_k, scale, IS_CAUSAL=is_causal, BLOCK_R=block_r, BLOCK_K=block_k
        )
        return run.result(p)
    scaled = torch.empty_like(s)
    grid = (triton.cdiv(s.numel(), BLOCK),)
    run(scale_kernel, grid, s, scaled, s.numel(), scale, BLOCK=BLOCK)
    if is_causal:
        masked = torch.empty_like(s)
        run(causal_mask_kernel, grid, scaled, masked, s.numel(), n_q, n_k, BLOCK=BLOCK)
        scaled = masked
    run(softmax_kernel, rows, scaled, p, n_q, n_k, 1.0, IS_CAUSAL=False, BLOCK_R=block_r, BLOCK_K=block_k)
    return run.result(p)


def _attention_inputs(q, k, v) -> tuple[int, int, int, int]:
    for name, t in (("Q", q), ("K", k), ("V", v)):
        _check(t, 3, name)
    bh, n_q, d = q.shape
    if k.shape != v.shape or k.shape[0] != bh or k.shape[2] != d or d not in (16, 32, 64, 128):
        raise ValueError(
            bilingual(
                f"形状不符：Q {tuple(q.shape)}、K {tuple(k.shape)}、V {tuple(v.shape)}（d ∈ 16, 32, 64, 128）",
                f"shapes do not fit: Q {tuple(q.shape)}, K {tuple(k.shape)}, V {tuple(v.shape)} (d in 16, 32, 64, 128)",
            )
        )
    return bh, n_q, k.shape[1], d


def standard_attention(q, k, v, block_q: int = 64, block_k: int = 64, count: bool = False):
    """O = softmax(σ·Q Kᵀ) V in three kernels that write S and P (in the inputs' dtype) to global memory."""
    bh, n_q, n_k, d = _attention_inputs(q, k, v)
    run = Launches(count)
    s = torch.empty(bh, n_q, n_k, dtype=q.dtype, device=q.device)
    p, out = torch.empty_like(s), torch.empty_like(q)
    tiles = (triton.cdiv(n_q, block_q), bh)
    run(scores_kernel, tiles, q, k, s, n_q, n_k, d**-0.5, HEAD_DIM=d, BLOCK_Q=block_q, BLOCK_K=block_k)
    block_k_row = triton.next_power_of_2(n_k)
    block_r = _rows_per_program(block_k_row)
    rows = (triton.cdiv(n_q, block_r), bh)
    run(softmax_kernel, rows, s, p, n_q, n_k, 1.0, IS_CAUSAL=False, BLOCK_R=block_r, BLOCK_K=block_k_row)
    run(pv_kernel, tiles, p, v, out, n_q, n_k, HEAD_DIM=d, BLOCK_Q=block_q, BLOCK_K=block_k)
    return run.result(out)


def fused_attention(q, k, v, block_q: int = 64, count: bool = False):
    """(O, L): attention in one kernel per query tile; only O and L (float32) are written."""
    bh, n_q, n_k, d = _attention_inputs(q, k, v)
    run = Launches(count)
    out = torch.empty_like(q)
    lse = torch.empty(bh, n_q, dtype=torch.float32, device=q.device)
    grid = (triton.cdiv(n_q, block_q), bh)
    block_k = max(16, triton.next_power_of_2(n_k))
    run(
        fused_attention_kernel,
        grid,
        q,
        k,
        v,
        out,
        lse,
        n_q,
        n_k,
        d**-0.5,
        HEAD_DIM=d,
        BLOCK_Q=block_q,
        BLOCK_K=block_k,
    )
    return run.result((out, lse))


__all__ = ["copy", "fused_attention", "repeat", "scale_mask_softmax", "standard_attention"]
