"""What unit 03 (tiling) runs, counts and draws: the course's Triton kernels and the pictures of the loop.

- `matmul_kernel` / `blocked_matmul`: C = A B, one program per `block_m`×`block_n` tile of C, accumulated in
  float32 on chip over the k-steps (the output-stationary loop order); remainder tiles are masked.
- `three_pass_attention_kernel` / `three_pass_attention`: exact attention tiled over keys in FlashAttention-1's
  loop order (outer loop over key blocks, inner over query tiles), *without* the online softmax of unit 04:
  a row's normaliser needs every column, so it streams K three times (row maxima, row sums, output) and
  keeps the row statistics and the float32 output in global memory between key blocks. Its traffic falls as
  the key block grows: the paper's block-size experiment. `three_pass_bytes` is that traffic as a formula.
- `loop_steps`, `draw_loop_step`, `loop_strip`, `loop_slider`: which tiles of Q, K, V, S and O are in fast
  memory at each step of a tiled attention loop (a static strip of frames, and a slider in JupyterLab).

Launchers take `count=True` to run in Triton's interpreter through the traffic counter and return
`(result, Traffic)`. Tensors are contiguous: (m, k) and (k, n) for the product, (BH, N, d) for attention.
"""

from __future__ import annotations

import math
import statistics

import matplotlib.pyplot as plt
import numpy as np
import torch
import triton
import triton.language as tl
from matplotlib.patches import Patch, Rectangle

from utils import runtime
from utils.io_kernels import Launches, _attention_inputs, _check
from utils.messages import bilingual
from utils.plotting import axes, text


@triton.jit
def matmul_kernel(A, B, C, m, n, k, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    """One BLOCK_M×BLOCK_N tile of C = A B: for each k-step load an A tile and a B tile, accumulate in fp32."""
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for start in range(0, k, BLOCK_K):
        inner = start + tl.arange(0, BLOCK_K)
        a = tl.load(
            A + rows[:, None].to(tl.int64) * k + inner[None, :],
            mask=(rows[:, None] < m) & (inner[None, :] < k),
            other=0.0,
        )
        b = tl.load(
            B + inner[:, None].to(tl.int64) * n + cols[None, :],
            mask=(inner[:, None] < k) & (cols[None, :] < n),
            other=0.0,
        )
        acc = tl.dot(a, b, acc)
    tl.store(
        C + rows[:, None].to(tl.int64) * n + cols[None, :],
        acc.to(C.dtype.element_ty),
        mask=(rows[:, None] < m) & (cols[None, :] < n),
    )


def _tile_sizes(*blocks: int) -> None:
    for b in blocks:
        if b < 16 or b & (b - 1):
            raise ValueError(
                bilingual(
                    f"块大小必须是不小于 16 的 2 的幂（tl.dot 的要求），得到 {b}",
                    f"tile sizes must be powers of two of at least 16 (tl.dot needs it), got {b}",
                )
            )


def blocked_matmul(a, b, block_m: int = 32, block_n: int = 32, block_k: int = 32, count: bool = False):
    """C = A B with `matmul_kernel` (C in A's dtype). Tile sizes: powers of two ≥ 16."""
    _check(a, 2, "blocked_matmul: A")
    _check(b, 2, "blocked_matmul: B")
    _tile_sizes(block_m, block_n, block_k)
    (m, k), n = a.shape, b.shape[1]
    if b.shape[0] != k:
        raise ValueError(
            bilingual(
                f"形状不符：A {tuple(a.shape)}、B {tuple(b.shape)}",
                f"shapes do not fit: A {tuple(a.shape)}, B {tuple(b.shape)}",
            )
        )
    c = torch.empty(m, n, dtype=a.dtype, device=a.device)
    run = Launches(count)
    grid = (triton.cdiv(m, block_m), triton.cdiv(n, block_n))
    run(matmul_kernel, grid, a, b, c, m, n, k, BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k)
    return run.result(c)


def try_tile(block: int, dtype: torch.dtype = torch.float16, size: int = 1024):
    """On a GPU: launch `matmul_kernel` with block×block×block tiles. Returns None when it ran, or the
    `triton.runtime.errors.OutOfResources` raised when the tiles do not fit in shared memory."""
    if not runtime.mode().is_gpu:
        raise RuntimeError(bilingual("try_tile 需要 GPU", "try_tile needs a GPU"))
    from triton.runtime.errors import OutOfResources

    a = torch.randn(size, size, device="cuda").to(dtype)
    try:
        blocked_matmul(a, a, block, block, block)
        torch.cuda.synchronize()
    except OutOfResources as error:
        return error
    return None


def shared_memory_per_block() -> int | None:
    """The shared memory one program (thread block) may use on this GPU, in bytes; None on a CPU."""
    if not runtime.mode().is_gpu:
        return None
    props = torch.cuda.get_device_properties(0)
    return getattr(props, "shared_memory_per_block_optin", None) or props.shared_memory_per_block


@triton.jit
def three_pass_attention_kernel(
    Q,
    K,
    V,
    Out,
    Mx,
    Ls,
    n_q,
    n_k,
    scale,
    HEAD_DIM: tl.constexpr,
    BLOCK_Q: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    """One program per head. Three passes over the key blocks (row maxima, row sums, output); in each, the
    key tile is loaded once and every query tile visits it, reading and writing its row statistics (and, in
    the last pass, its float32 output tile) in global memory. Mx starts at -inf, Ls and Out at 0."""
    bh = tl.program_id(0).to(tl.int64)
    dims = tl.arange(0, HEAD_DIM)
    q_base, k_base, v_base = Q + bh * n_q * HEAD_DIM, K + bh * n_k * HEAD_DIM, V + bh * n_k * HEAD_DIM
    o_base, m_base, l_base = Out + bh * n_q * HEAD_DIM, Mx + bh * n_q, Ls + bh * n_q
    for phase in tl.static_range(3):
        for k0 in range(0, n_k, BLOCK_K):
            cols = k0 + tl.arange(0, BLOCK_K)
            kt = tl.load(
                k_base + cols[None, :] * HEAD_DIM + dims[:, None], mask=cols[None, :] < n_k, other=0.0
            )
            if phase == 2:  # a compile-time branch: V is read once, in the output pass
                v = tl.load(
                    v_base + cols[:, None] * HEAD_DIM + dims[None, :], mask=cols[:, None] < n_k, other=0.0
                )
            for q0 in range(0, n_q, BLOCK_Q):
                rows = q0 + tl.arange(0, BLOCK_Q)
                inside = rows < n_q
                q = tl.load(
                    q_base + rows[:, None] * HEAD_DIM + dims[None, :], mask=inside[:, None], other=0.0
                )
                s = tl.where(cols[None, :] < n_k, tl.dot(q, kt) * scale, float("-inf"))
                row_max = tl.load(m_base + rows, mask=inside, other=0.0)
                if phase == 0:
                    tl.store(m_base + rows, tl.maximum(row_max, tl.max(s, 1)), mask=inside)
                else:
                    p = tl.exp(s - row_max[:, None])
                    row_sum = tl.load(l_base + rows, mask=inside, other=1.0)
                    if phase == 1:
                        tl.store(l_base + rows, row_sum + tl.sum(p, 1), mask=inside)
                    else:
                        o_ptrs = o_base + rows[:, None] * HEAD_DIM + dims[None, :]
                        o = tl.load(o_ptrs, mask=inside[:, None], other=0.0)
                        o += tl.dot((p / row_sum[:, None]).to(v.dtype), v)
                        tl.store(o_ptrs, o, mask=inside[:, None])
            tl.debug_barrier()  # this pass's stores are visible to every thread before the next key block


def three_pass_attention(q, k, v, block_q: int = 16, block_k: int = 32, count: bool = False):
    """O = softmax(σ·Q Kᵀ) V (non-causal) with `three_pass_attention_kernel`, in Q's dtype."""
    bh, n_q, n_k, d = _attention_inputs(q, k, v)
    _tile_sizes(block_q, block_k)
    out = torch.zeros(bh, n_q, d, dtype=torch.float32, device=q.device)
    row_max = torch.full((bh, n_q), float("-inf"), device=q.device)
    row_sum = torch.zeros(bh, n_q, device=q.device)
    run = Launches(count)
    run(
        three_pass_attention_kernel, (bh,), q, k, v, out, row_max, row_sum, n_q, n_k, d**-0.5,
        HEAD_DIM=d, BLOCK_Q=block_q, BLOCK_K=block_k,
    )  # fmt: skip
    return run.result(out.to(q.dtype))


def three_pass_bytes(n_q: int, n_k: int, d: int, dtype: torch.dtype, block_k: int) -> int:
    """Bytes `three_pass_attention_kernel` reads and writes for one head: K three times and V once, and per
    key block: Q in every pass (3·Nq·d·e), the statistics (pass 1: read and write m; pass 2: read m, ℓ,
    write ℓ; pass 3: read m, ℓ: 7·Nq float32) and the float32 output tile read and written (2·Nq·d·4)."""
    e = torch.tensor([], dtype=dtype).element_size()
    key_blocks = math.ceil(n_k / block_k)
    return 4 * n_k * d * e + key_blocks * (3 * n_q * d * e + 7 * n_q * 4 + 2 * n_q * d * 4)


def float16_ulp(x: torch.Tensor) -> torch.Tensor:
    """The float16 spacing at |x| (normal range; 2^-24 below it)."""
    exponent = torch.floor(torch.log2(x.abs().clamp_min(2.0**-14)))
    return torch.exp2(exponent - 10)


def float16_matmul_tolerance(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Per element of A B in float16: one float16 ulp of the exact product, plus 2^-16·(|A| |B|) for the
    rounding of a float32 accumulation in any summation order (k·2^-24·Σ|a·b| bounds it for k ≤ 256). Float32
    accumulation with one rounding at the end meets it; float16 partial products at each k-step miss it."""
    exact = a.double() @ b.double()
    return float16_ulp(exact) + 2.0**-16 * (a.double().abs() @ b.double().abs())


# ---- The picture of the loop -------------------------------------------------------------------------

ORDERS = ("q_outer", "kv_outer")
NOW, DONE, IDLE = "tab:orange", "#c6dbef", "white"


def loop_steps(
    n_q: int, n_k: int, block_q: int, block_k: int, order: str = "q_outer"
) -> list[tuple[int, int]]:
    """(query tile i, key tile j) at each step: "q_outer" is FlashAttention-2's order (units 06–08),
    "kv_outer" FlashAttention-1's (and `three_pass_attention`'s, one pass)."""
    if order not in ORDERS:
        raise ValueError(bilingual(f"order 应为 {ORDERS} 之一", f"order must be one of {ORDERS}"))
    tiles_q, tiles_k = math.ceil(n_q / block_q), math.ceil(n_k / block_k)
    if order == "q_outer":
        return [(i, j) for i in range(tiles_q) for j in range(tiles_k)]
    return [(i, j) for j in range(tiles_k) for i in range(tiles_q)]


def _span(index: int, block: int, n: int) -> tuple[int, int]:
    return index * block, min(block, n - index * block)


def draw_loop_step(axs, n_q, n_k, d, block_q, block_k, step: int, order: str = "q_outer") -> None:
    """Draw step `step` on five Axes (Q, K, V, S, O): orange = in fast memory now, blue = S tiles done."""
    steps = loop_steps(n_q, n_k, block_q, block_k, order)
    i, j = steps[step]
    q0, bq = _span(i, block_q, n_q)
    k0, bk = _span(j, block_k, n_k)
    panels = [("Q", n_q, d), ("K", n_k, d), ("V", n_k, d), ("S", n_q, n_k), ("O", n_q, d)]
    for ax, (name, rows, cols) in zip(axs, panels, strict=True):
        ax.clear()
        ax.add_patch(Rectangle((0, 0), cols, rows, facecolor=IDLE, edgecolor="black"))
        if name == "S":
            for ii, jj in steps[:step]:
                r0, r = _span(ii, block_q, n_q)
                c0, c = _span(jj, block_k, n_k)
                ax.add_patch(Rectangle((c0, r0), c, r, facecolor=DONE, edgecolor="grey", lw=0.5))
            ax.add_patch(Rectangle((k0, q0), bk, bq, facecolor=NOW, edgecolor="black"))
        elif name in ("Q", "O"):
            ax.add_patch(Rectangle((0, q0), cols, bq, facecolor=NOW, edgecolor="black"))
        else:
            ax.add_patch(Rectangle((0, k0), cols, bk, facecolor=NOW, edgecolor="black"))
        ax.set_xlim(0, cols)
        ax.set_ylim(rows, 0)
        ax.set_aspect("equal")
        ax.set_xticks([])
        ax.set_yticks([])
        ax.set_title(name)
    axs[0].set_ylabel(f"{step + 1}/{len(steps)}: i={i}, j={j}")


def _legend(fig) -> None:
    handles = [
        Patch(facecolor=NOW, edgecolor="black", label=text("此刻在快速内存中", "in fast memory now")),
        Patch(facecolor=DONE, edgecolor="grey", label=text("已算过的 S 块", "S tiles already computed")),
    ]
    fig.legend(handles=handles, loc="upper center", ncol=2, frameon=False)


def _figure(rows: int):
    axes()  # switch the CJK font on where there is one
    plt.close()
    return plt.subplots(rows, 5, figsize=(11, 2.3 * rows + 0.6), squeeze=False, width_ratios=[1, 1, 1, 4, 1])


def loop_strip(n_q, n_k, d, block_q, block_k, order: str = "q_outer", frames: int = 4):
    """A static strip of `frames` evenly spaced steps of the loop (works in exported HTML and PDFs)."""
    total = len(loop_steps(n_q, n_k, block_q, block_k, order))
    chosen = sorted({round(x) for x in np.linspace(0, total - 1, min(frames, total))})
    fig, grid = _figure(len(chosen))
    for row, step in zip(grid, chosen, strict=True):
        draw_loop_step(row, n_q, n_k, d, block_q, block_k, step, order)
    _legend(fig)
    fig.tight_layout(rect=(0, 0, 1, 0.94))
    return fig


def loop_slider(n_q, n_k, d, block_q, block_k, order: str = "q_outer"):
    """An ipywidgets slider over the steps of the loop (JupyterLab); None when ipywidgets is missing."""
    try:
        import ipywidgets
    except ImportError:
        print(
            bilingual(
                "没有安装 ipywidgets：请看上面的静态帧",
                "ipywidgets is not installed: see the static frames above",
            )
        )
        return None
    total = len(loop_steps(n_q, n_k, block_q, block_k, order))

    def show(step):
        fig, grid = _figure(1)
        draw_loop_step(grid[0], n_q, n_k, d, block_q, block_k, step, order)
        _legend(fig)
        fig.tight_layout(rect=(0, 0, 1, 0.8))
        plt.show()

    slider = ipywidgets.IntSlider(min=0, max=total - 1, value=0, description=text("步", "step"))
    return ipywidgets.interactive(show, step=slider)


# ---- The paper's block-size experiment ---------------------------------------------------------------


def block_size_sweep(
    block_ks, heads: int, n: int, d: int, dtype=torch.float16, block_q: int = 64
) -> list[dict]:
    """For each key block: the bytes `three_pass_attention` moves (formula, checked against the counter in
    tests) and, on a GPU, its measured time. Records: {"block_k", "bytes", "time_ms" (the median; None on a
    CPU), "time_range_ms" (the fastest and slowest of the repeats: how far to trust the median)}."""
    from utils import measure

    records = []
    q, k, v = (torch.randn(heads, n, d, device=runtime.device()).to(dtype) for _ in range(3))
    for block_k in block_ks:
        ms, spread = None, None
        if runtime.mode().is_gpu:
            samples = measure.time_samples_ms(
                lambda b=block_k: three_pass_attention(q, k, v, block_q, b), warmup=2, repeats=11
            )
            ms, spread = statistics.median(samples), [min(samples), max(samples)]
        bytes_moved = heads * three_pass_bytes(n, n, d, dtype, block_k)
        records.append({"block_k": block_k, "bytes": bytes_moved, "time_ms": ms, "time_range_ms": spread})
    return records


def plot_block_size(records: list[dict], title: str = ""):
    """HBM bytes (left axis) and, where measured, time (right axis) against the key block size."""
    ax = axes()
    ks = [r["block_k"] for r in records]
    ax.plot(
        ks, [r["bytes"] / 2**20 for r in records], "o-", color="tab:blue", label=text("HBM 字节", "HBM bytes")
    )
    ax.set_xscale("log", base=2)
    ax.set_xlabel(text("键块大小 Bk", "key block size Bk"))
    ax.set_ylabel(text("HBM 读写 (MiB)", "HBM reads + writes (MiB)"), color="tab:blue")
    timed = [r for r in records if r["time_ms"] is not None]
    if timed:
        right = ax.twinx()
        ms = [r["time_ms"] for r in timed]
        spread = [
            [m - r["time_range_ms"][0] for m, r in zip(ms, timed, strict=True)],
            [r["time_range_ms"][1] - m for m, r in zip(ms, timed, strict=True)],
        ]
        right.errorbar([r["block_k"] for r in timed], ms, yerr=spread, fmt="s--", capsize=3, color="tab:red")
        right.set_ylabel(
            text("时间 (ms，中位数与最小–最大)", "time (ms, median and min–max)"), color="tab:red"
        )
    ax.set_title(title or runtime.mode().name)
    ax.grid(True, which="both", alpha=0.3)
    return ax


def main(argv=None) -> None:
    """`python -m utils.tiling OUT_DIR`: the block-size experiment on this machine, as JSON and PNG."""
    import argparse
    import json
    from pathlib import Path

    parser = argparse.ArgumentParser(description="FlashAttention's block-size experiment (unit 03)")
    parser.add_argument("out", type=Path)
    parser.add_argument("--heads", type=int, default=64)
    parser.add_argument("--n", type=int, default=2048)
    parser.add_argument("--d", type=int, default=64)
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    records = block_size_sweep([16, 32, 64, 128, 256], args.heads, args.n, args.d)
    name = runtime.mode().name
    (args.out / "block_size.json").write_text(
        json.dumps({"device": name, **vars(args), "out": str(args.out), "records": records}, indent=1)
    )
    ax = plot_block_size(records, f"{name}: {args.heads} heads, N = {args.n}, d = {args.d}, fp16")
    ax.figure.tight_layout()
    ax.figure.savefig(args.out / "block_size.png", dpi=150)
    print(json.dumps(records, indent=1))


__all__ = [
    "block_size_sweep",
    "plot_block_size",
    "blocked_matmul",
    "draw_loop_step",
    "float16_matmul_tolerance",
    "float16_ulp",
    "loop_slider",
    "loop_steps",
    "loop_strip",
    "shared_memory_per_block",
    "three_pass_attention",
    "three_pass_bytes",
    "try_tile",
]


if __name__ == "__main__":
    main()
