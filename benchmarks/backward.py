"""The backward alone, the course's kernels against cuDNN's, over the issue-49 grid (a benchmark, not a test).

    python -m benchmarks.backward --out DIR [--ns 1024 ... 16384] [--dtypes bfloat16 float16]

For each dtype, d ∈ {64, 128}, causal and not, and N on the paper grid (B·N = 16k tokens, H·d = 2048): the
course's backward (`flash_triton.triton_backward`: Δ, dK/dV and dQ kernels, given O and L) and cuDNN's (the
backward of SDPA's cuDNN forward, `autograd.grad` on its graph), both with the same random dO, median of
`do_bench` (L2 flushed). The course's gradients are first checked against float64 on the first head (the suite's
`error_vs_tolerance`, ≤ 1 passes); a wrong point is not timed. Writes DIR/backward.json, DIR/backward.png (speed
relative to cuDNN against N, one panel per (d, causal)) and prints the issue's targets: median ≥ 1.0× cuDNN and no
point below 0.9×.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from benchmarks import attention

NS = (1024, 2048, 4096, 8192, 16384)
HEAD_DIMS = (64, 128)


def point(dtype: torch.dtype, d: int, causal: bool, n: int) -> dict:
    from course.reference import flash_triton

    batch, heads = attention.default_grid().batch_heads(n, d)
    q, k, v, grad_out = (torch.randn(batch, heads, n, d, device="cuda", dtype=dtype) for _ in range(4))
    scale = d**-0.5
    o, lse = flash_triton.triton_forward(q, k, v, causal, scale)
    record = {
        "dtype": attention.dtype_name(dtype),
        "d": d,
        "causal": causal,
        "n": n,
        "batch": batch,
        "heads": heads,
    }
    grads = flash_triton.triton_backward(q, k, v, o, lse, grad_out, causal, scale)
    head = [t[:1, :1] for t in (q, k, v, grad_out)]
    ref = attention.reference(*head, causal, with_grads=True)
    tol = attention.TOLERANCES[dtype][1]
    record["error_vs_tolerance"] = {
        name: attention.error_vs_tolerance(g[:1, :1], ref[name], tol)
        for name, g in zip(("dQ", "dK", "dV"), grads, strict=True)
    }
    if max(record["error_vs_tolerance"].values()) > 1:
        return record | {"status": "wrong"}
    leaves = [t.clone().requires_grad_() for t in (q, k, v)]
    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
        out = F.scaled_dot_product_attention(*leaves, is_causal=causal)
    course_ms = attention.measure_ms(
        lambda: flash_triton.triton_backward(q, k, v, o, lse, grad_out, causal, scale), []
    )
    cudnn_ms = attention.measure_ms(lambda: torch.autograd.grad(out, leaves, grad_out, retain_graph=True), [])
    return record | {
        "status": "ok",
        "course_ms": course_ms,
        "cudnn_ms": cudnn_ms,
        "vs_cudnn": cudnn_ms / course_ms,
    }


def targets(records: list[dict]) -> dict:
    """The issue's targets over the points that ran: median ≥ 1.0× cuDNN, none below 0.9×; any wrong point fails."""
    ratios = [r["vs_cudnn"] for r in records if r["status"] == "ok"]
    wrong = [r for r in records if r["status"] != "ok"]
    return {
        "median_vs_cudnn": statistics.median(ratios) if ratios else None,
        "min_vs_cudnn": min(ratios) if ratios else None,
        "median_met": bool(ratios) and not wrong and statistics.median(ratios) >= 1.0,
        "min_met": bool(ratios) and not wrong and min(ratios) >= 0.9,
        "wrong_points": len(wrong),
    }


def figure(records: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from utils.plotting import text

    fig, axes = plt.subplots(len(HEAD_DIMS), 2, figsize=(11, 7.5), squeeze=False)
    for ax, (d, causal) in zip(axes.flat, [(d, c) for d in HEAD_DIMS for c in (False, True)], strict=True):
        for dtype in sorted({r["dtype"] for r in records}):
            line = [
                r
                for r in records
                if (r["d"], r["causal"], r["dtype"], r["status"]) == (d, causal, dtype, "ok")
            ]
            ax.plot([r["n"] for r in line], [r["vs_cudnn"] for r in line], marker="o", label=dtype)
        ax.axhline(1.0, color="grey", linestyle="--", linewidth=1)
        ax.axhline(0.9, color="grey", linestyle=":", linewidth=1)
        ax.set_xscale("log", base=2)
        ax.set_xlabel(text("序列长度 N", "sequence length N"))
        ax.set_ylabel(text("相对 cuDNN 的速度（>1 更快）", "speed vs cuDNN (> 1 is faster)"))
        kind = text("因果", "causal") if causal else text("非因果", "non-causal")
        ax.set_title(f"d = {d}, {kind}")
        ax.legend()
    fig.suptitle(text("反向传播：课程内核 / cuDNN", "backward alone: course kernels / cuDNN"))
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--ns", type=int, nargs="+", default=list(NS))
    parser.add_argument(
        "--dtypes", nargs="+", default=["bfloat16", "float16"], choices=["bfloat16", "float16"]
    )
    args = parser.parse_args(argv)
    if not torch.cuda.is_available():
        print("this benchmark needs a GPU / 这个基准需要 GPU")
        return 2
    records = []
    for dtype in args.dtypes:
        for d in HEAD_DIMS:
            for causal in (False, True):
                for n in args.ns:
                    records.append(point(getattr(torch, dtype), d, causal, n))
                    r = records[-1]
                    print(f"{dtype} d{d} {'causal' if causal else 'full  '} N={n:6}: "
                          f"{r.get('course_ms', float('nan')):.3f} ms vs cuDNN {r.get('cudnn_ms', float('nan')):.3f}"
                          f" -> {r.get('vs_cudnn', float('nan')):.2f}x {r['status']}", flush=True)  # fmt: skip
    summary = targets(records)
    args.out.mkdir(parents=True, exist_ok=True)
    results = {"environment": attention.environment(), "records": records, "targets": summary}
    (args.out / "backward.json").write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    figure(records, args.out / "backward.png")
    print(json.dumps(summary))
    return 0 if summary["wrong_points"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
