"""Row softmax over long rows, two Triton kernels that unit 04 runs, counts and times (learners write Triton
only from unit 07):

- `safe_softmax_kernel`: three sweeps over the row, one per statistic: the maximum m, the sum
  ℓ = Σ e^{x−m}, then y = e^{x−m} / ℓ. Reads each element three times, writes it once (4 accesses).
- `online_softmax_kernel`: the maximum and the sum in one sweep (the running sum is rescaled by e^{m−m'}
  whenever the maximum grows), then y = e^{x−m} / ℓ. Reads each element twice, writes it once (3 accesses).

One program per row; a row longer than `block` is read in column blocks of `block` (it need not fit on chip).
A row whose entries are all −∞ gives zeros (the course's convention), never NaN.

    y = row_softmax(x, "online")                       # x: (rows, n), float32/float16/bfloat16
    y, traffic = row_softmax(x, "safe", count=True)    # counted in Triton's interpreter

`python -m utils.softmax_kernels --out results/unit04` (on a GPU) times both kernels and PyTorch's softmax
on long rows and writes `softmax_passes.json` and `softmax_passes.png` there.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch
import triton
import triton.language as tl

from utils.io_kernels import Launches
from utils.messages import bilingual

METHODS = ("safe", "online")
READS = {"safe": 3, "online": 2}  # reads of each element; each kernel writes each element once


@triton.jit
def safe_softmax_kernel(X, Y, n_cols, stride_x, stride_y, BLOCK: tl.constexpr):
    x_row = X + tl.program_id(0).to(tl.int64) * stride_x
    y_row = Y + tl.program_id(0).to(tl.int64) * stride_y
    cols = tl.arange(0, BLOCK)
    m = -float("inf")
    for c0 in range(0, n_cols, BLOCK):  # sweep 1: the maximum
        inside = c0 + cols < n_cols
        x = tl.load(x_row + c0 + cols, mask=inside, other=float("-inf")).to(tl.float32)
        m = tl.maximum(m, tl.max(x, 0))
    shift = tl.where(m == float("-inf"), 0.0, m)  # a row of −∞ stays finite: e^{−∞−0} = 0
    row_sum = 0.0
    for c0 in range(0, n_cols, BLOCK):  # sweep 2: the sum
        inside = c0 + cols < n_cols
        x = tl.load(x_row + c0 + cols, mask=inside, other=float("-inf")).to(tl.float32)
        row_sum = row_sum + tl.sum(tl.exp(x - shift), 0)
    inverse = 1.0 / tl.where(row_sum > 0, row_sum, 1.0)  # an empty row: every e^{x−0} is 0 already
    for c0 in range(0, n_cols, BLOCK):  # sweep 3: normalise
        inside = c0 + cols < n_cols
        x = tl.load(x_row + c0 + cols, mask=inside, other=float("-inf")).to(tl.float32)
        tl.store(y_row + c0 + cols, (tl.exp(x - shift) * inverse).to(Y.dtype.element_ty), mask=inside)


@triton.jit
def online_softmax_kernel(X, Y, n_cols, stride_x, stride_y, BLOCK: tl.constexpr):
    x_row = X + tl.program_id(0).to(tl.int64) * stride_x
    y_row = Y + tl.program_id(0).to(tl.int64) * stride_y
    cols = tl.arange(0, BLOCK)
    m = -float("inf")
    row_sum = 0.0
    for c0 in range(0, n_cols, BLOCK):  # sweep 1: the maximum and the sum together
        inside = c0 + cols < n_cols
        x = tl.load(x_row + c0 + cols, mask=inside, other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(x, 0))
        shift = tl.where(m_new == float("-inf"), 0.0, m_new)
        row_sum = row_sum * tl.exp(m - shift) + tl.sum(
            tl.exp(x - shift), 0
        )  # rescale what was summed under the old m
        m = m_new
    shift = tl.where(m == float("-inf"), 0.0, m)
    inverse = 1.0 / tl.where(row_sum > 0, row_sum, 1.0)  # an empty row: every e^{x−0} is 0 already
    for c0 in range(0, n_cols, BLOCK):  # sweep 2: normalise
        inside = c0 + cols < n_cols
        x = tl.load(x_row + c0 + cols, mask=inside, other=float("-inf")).to(tl.float32)
        tl.store(y_row + c0 + cols, (tl.exp(x - shift) * inverse).to(Y.dtype.element_ty), mask=inside)


KERNELS = {"safe": safe_softmax_kernel, "online": online_softmax_kernel}


def row_softmax(x: torch.Tensor, method: str = "online", block: int = 1024, count: bool = False):
    """softmax over the last dim of a 2-D `x` (unit stride along the row) with the `method` kernel.

    `block`: columns per load (a power of two). Returns y (x's dtype), or (y, Traffic) with `count=True`.
    """
    if method not in KERNELS:
        raise ValueError(
            bilingual(f"未知的方法 {method!r}（{METHODS}）", f"unknown method {method!r} ({METHODS})")
        )
    if x.dim() != 2 or x.stride(-1) != 1 or block & (block - 1):
        raise ValueError(
            bilingual(
                f"需要 2 维、行内连续的 x 和 2 的幂的 block，得到 {tuple(x.shape)}、步长 {x.stride()}、block={block}",
                f"needs a 2-D x with unit stride along rows and a power-of-two block, got {tuple(x.shape)}, "
                f"strides {x.stride()}, block={block}",
            )
        )
    y = torch.empty_like(x)
    run = Launches(count)
    run(KERNELS[method], (x.shape[0],), x, y, x.shape[1], x.stride(0), y.stride(0), BLOCK=block)
    return run.result(y)


def expected_bytes(rows: int, n: int, dtype: torch.dtype, method: str) -> int:
    """The bytes each kernel requests: READS[method] reads and one write of every element."""
    return (READS[method] + 1) * rows * n * dtype.itemsize


# --- the GPU benchmark ----------------------------------------------------------------------------------


def benchmark(lengths: list[int], elements: int, dtype: torch.dtype, block: int) -> list[dict]:
    """Times of both kernels and torch.softmax on (elements / n, n) inputs, timed in turns (per-round ratios)."""
    from utils import measure

    records = []
    for n in lengths:
        x = torch.randn(max(1, elements // n), n, device="cuda", dtype=dtype)
        fns = {m: (lambda m=m, x=x: row_softmax(x, m, block)) for m in METHODS}
        fns["torch"] = lambda x=x: torch.softmax(x, dim=-1)
        rounds = measure.compare_ms(fns, rounds=5, repeats=10)
        speedups = sorted(s / o for s, o in zip(rounds["safe"], rounds["online"], strict=True))
        ms = {name: sorted(times)[len(times) // 2] for name, times in rounds.items()}
        record = {"n": n, "rows": x.shape[0], "dtype": str(dtype), "block": block, "ms": ms}
        record["speedup_online_over_safe"] = speedups[len(speedups) // 2]
        record["speedup_range"] = [speedups[0], speedups[-1]]  # the spread over rounds: how far to trust it
        record["GB_per_s"] = {m: expected_bytes(*x.shape, dtype, m) / (ms[m] * 1e-3) / 1e9 for m in METHODS}
        records.append(record)
        print(
            f"n={n:>8}  safe {ms['safe']:8.3f} ms  online {ms['online']:8.3f} ms  torch {ms['torch']:8.3f} ms  "
            f"speedup {record['speedup_online_over_safe']:.2f}×"
        )
    return records


def plot(records: list[dict], path: Path | None = None):
    """Times against the row length, and the speedup of the online kernel over the safe one with 4/3 and
    M&G's 1.3×; saved to `path` (and closed) when given, else returned."""
    import matplotlib.pyplot as plt

    from utils import plotting

    fig, axes = plt.subplots(1, 2, figsize=(12, 4.2))
    ns = [r["n"] for r in records]
    for name in (*METHODS, "torch"):
        axes[0].loglog(ns, [r["ms"][name] for r in records], "o-", label=name)
    axes[0].set_xlabel(plotting.text("行长 n", "row length n"))
    axes[0].set_ylabel(plotting.text("时间 (ms)", "time (ms)"))
    axes[0].legend()
    speedups = [r["speedup_online_over_safe"] for r in records]
    spread = [
        [s - r["speedup_range"][0] for s, r in zip(speedups, records, strict=True)],
        [r["speedup_range"][1] - s for s, r in zip(speedups, records, strict=True)],
    ]
    axes[1].errorbar(
        ns,
        speedups,
        yerr=spread,
        fmt="o-",
        capsize=3,
        label=plotting.text(
            "safe / online（中位数，竖线：各轮的最小–最大）",
            "safe / online (median; bars: min–max over rounds)",
        ),
    )
    axes[1].set_xscale("log")
    axes[1].axhline(4 / 3, color="k", ls=":", label=plotting.text("访存之比 4/3", "access ratio 4/3"))
    axes[1].axhline(1.3, color="tab:red", ls="--", label="Milakov & Gimelshein, V100 ≈ 1.3×")
    axes[1].set_xlabel(plotting.text("行长 n", "row length n"))
    axes[1].set_ylabel(plotting.text("加速比", "speedup"))
    axes[1].legend()
    for ax in axes:
        ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    if path is None:
        return fig
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return None


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Time the three-sweep and two-sweep row softmax kernels.")
    parser.add_argument("--out", type=Path, default=Path("results/unit04"))
    parser.add_argument("--dtype", default="float32", choices=["float32", "float16", "bfloat16"])
    parser.add_argument("--elements", type=int, default=2**28, help="rows × n of every input")
    parser.add_argument("--block", type=int, default=2048)
    args = parser.parse_args(argv)
    import utils

    if not utils.mode().is_gpu:
        raise SystemExit(bilingual("这个基准需要 GPU", "this benchmark needs a GPU"))
    records = benchmark(
        [2**k for k in range(10, 23, 2)], args.elements, getattr(torch, args.dtype), args.block
    )
    args.out.mkdir(parents=True, exist_ok=True)
    device = torch.cuda.get_device_name()
    (args.out / "softmax_passes.json").write_text(
        json.dumps({"device": device, "records": records}, indent=1)
    )
    plot(records, args.out / "softmax_passes.png")
    print(bilingual("已写入", "written"), args.out / "softmax_passes.json", args.out / "softmax_passes.png")


if __name__ == "__main__":
    main()

__all__ = ["KERNELS", "METHODS", "READS", "expected_bytes", "row_softmax"]
