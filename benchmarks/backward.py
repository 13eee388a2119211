"""The backward alone, the course's kernels against cuDNN's, over the issue-49 grid (a benchmark, not a test).

    python -m benchmarks.backward --out DIR [--ns 1024 ... 16384] [--dtypes bfloat16 float16]

For each dtype, d ∈ {64, 128}, causal and not, and N on the paper grid (B·N = 16k tokens, H·d = 2048): the
course's two backwards, given O and L (`two_kernels`: unit 08's Δ, dK/dV and dQ kernels; `one_pass`: unit 10's
five-product pass with dQ by TMA reduce-add), and cuDNN's (the backward of SDPA's cuDNN forward, `autograd.grad`
on its graph), all with the same random dO, median of `do_bench` (L2 flushed). Each course path's gradients are
first checked against float64 on the first head (the suite's `error_vs_tolerance`, ≤ 1 passes); a wrong point is
not timed. Writes DIR/backward.json, DIR/backward.png (speed
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
PATHS = {"two_kernels": "o-", "one_pass": "s--"}  # the course's backwards and their line styles


def course_paths(q, k, v, o, lse, grad_out, causal, scale) -> dict:
    """The course's two backwards, each a function of nothing that returns (dQ, dK, dV)."""
    from course.reference import flash_triton, hopper_backward

    return {
        "two_kernels": lambda: flash_triton.triton_backward(q, k, v, o, lse, grad_out, causal, scale),
        "one_pass": lambda: hopper_backward.hopper_backward(q, k, v, o, lse, grad_out, causal, scale)[0],
    }


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
    head = [t[:1, :1] for t in (q, k, v, grad_out)]
    ref = attention.reference(*head, causal, with_grads=True)
    tol = attention.TOLERANCES[dtype][1]
    leaves = [t.clone().requires_grad_() for t in (q, k, v)]
    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
        out = F.scaled_dot_product_attention(*leaves, is_causal=causal)
    cudnn_ms = attention.measure_ms(lambda: torch.autograd.grad(out, leaves, grad_out, retain_graph=True), [])
    record["cudnn_ms"] = cudnn_ms
    for name, run in course_paths(q, k, v, o, lse, grad_out, causal, scale).items():
        errors = {
            grad: attention.error_vs_tolerance(g[:1, :1], ref[grad], tol)
            for grad, g in zip(("dQ", "dK", "dV"), run(), strict=True)
        }
        entry = {"error_vs_tolerance": errors, "status": "ok" if max(errors.values()) <= 1 else "wrong"}
        if entry["status"] == "ok":
            entry["ms"] = attention.measure_ms(run, [])
            entry["vs_cudnn"] = cudnn_ms / entry["ms"]
        record[name] = entry
    return record


def targets(records: list[dict], path: str) -> dict:
    """The issue's targets for one path over the points: median ≥ 1.0× cuDNN, none below 0.9×; a wrong point fails."""
    ratios = [r[path]["vs_cudnn"] for r in records if r[path]["status"] == "ok"]
    wrong = sum(r[path]["status"] != "ok" for r in records)
    return {
        "median_vs_cudnn": statistics.median(ratios) if ratios else None,
        "min_vs_cudnn": min(ratios) if ratios else None,
        "median_met": bool(ratios) and not wrong and statistics.median(ratios) >= 1.0,
        "min_met": bool(ratios) and not wrong and min(ratios) >= 0.9,
        "wrong_points": wrong,
    }


def figure(records: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from utils.plotting import text, use_fonts

    use_fonts()
    fig, axes = plt.subplots(len(HEAD_DIMS), 2, figsize=(11, 7.5), squeeze=False)
    for ax, (d, causal) in zip(axes.flat, [(d, c) for d in HEAD_DIMS for c in (False, True)], strict=True):
        panel = [r for r in records if (r["d"], r["causal"]) == (d, causal)]
        for dtype in sorted({r["dtype"] for r in panel}):
            for course_path, style in PATHS.items():
                ok = [r for r in panel if r["dtype"] == dtype and r[course_path]["status"] == "ok"]
                ns, ratios = [r["n"] for r in ok], [r[course_path]["vs_cudnn"] for r in ok]
                ax.plot(ns, ratios, style, label=f"{dtype}, {course_path}")
        ax.axhline(1.0, color="grey", linestyle="--", linewidth=1)
        ax.axhline(0.9, color="grey", linestyle=":", linewidth=1)
        if any(r[p]["status"] == "ok" for r in panel for p in PATHS):  # no N axis without a correct point
            ax.set_xscale("log", base=2)
        ax.set_xlabel(text("序列长度 N", "sequence length N"))
        ax.set_ylabel(text("速度 / cuDNN", "speed / cuDNN"))
        kind = text("因果", "causal") if causal else text("非因果", "non-causal")
        ax.set_title(f"d = {d}, {kind}")
        ax.legend()
    fig.suptitle(
        text(
            "单独的反向传播，相对 cuDNN 的速度（>1 更快）",
            "the backward alone, speed vs cuDNN (> 1 is faster)",
        )
    )
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
                    times = "  ".join(f"{p} {r[p].get('ms', float('nan')):.3f} ms ({r[p].get('vs_cudnn', 0):.2f}x)"
                                      f"{'' if r[p]['status'] == 'ok' else ' WRONG'}" for p in PATHS)  # fmt: skip
                    print(f"{dtype} d{d} {'causal' if causal else 'full  '} N={n:6}: cuDNN {r['cudnn_ms']:.3f} ms  "
                          f"{times}", flush=True)  # fmt: skip
    summary = {path: targets(records, path) for path in PATHS}
    args.out.mkdir(parents=True, exist_ok=True)
    results = {"environment": attention.environment(), "records": records, "targets": summary}
    (args.out / "backward.json").write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    figure(records, args.out / "backward.png")
    print(json.dumps(summary))
    return 0 if all(t["wrong_points"] == 0 for t in summary.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
