"""The FP8 forward (`course/reference/hopper_fp8.py`): its error against float64 and its speed on the H100.

    python -m benchmarks.hopper_fp8 --out DIR [--ns 4096 8192]

For d ∈ {64, 128}, causal and not: the error of O per row against float64 at `CHECK_SHAPE` (median and max of
‖O − O₆₄‖ / ‖O₆₄‖) for the FP8 kernel, for the bf16 Hopper forward, and for float64 attention of the FP8-quantised
inputs (what the e4m3 inputs cost by themselves); then, at each N of the FlashAttention paper's grid (B·N = 16k
tokens, H·d = 2048), the TFLOP/s of the FP8 kernel alone (inputs already quantised, autotuned), of the FP8 forward
with its quantising, of the bf16 Hopper forward and of SDPA cuDNN in bf16; at the largest N, each config of the FP8
kernel's search space alone. Writes DIR/fp8.json and DIR/fp8.md.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch
import torch.nn.functional as F
import triton
from torch.nn.attention import SDPBackend, sdpa_kernel

import utils
from benchmarks import attention
from utils import grading
from utils.measure import attention_flops
from utils.messages import bilingual

CHECK_SHAPE = (3, 1031, 1537)  # heads, Nq, Nk


def row_errors(out: torch.Tensor, exact: torch.Tensor) -> tuple[float, float]:
    """(median, max) over rows of ‖out − exact‖ / ‖exact‖."""
    errors = grading.row_errors(out, exact)
    return errors.median().item(), errors.max().item()


def accuracy(d: int, causal: bool) -> dict:
    from course.reference import hopper, hopper_fp8

    heads, n_q, n_k = CHECK_SHAPE
    q, k, v = grading.random_qkv(heads, n_q, n_k, d, dtype=torch.bfloat16, device="cuda", requires_grad=False)
    exact, _ = grading.reference_attention(q, k, v, is_causal=causal)
    x = hopper_fp8.prepare(q, k, v)
    out = hopper_fp8.fp8_attention(x, causal, d**-0.5)[0].reshape(exact.shape)
    on_fp8_inputs, _ = grading.reference_attention(*hopper_fp8.dequantize(x), is_causal=causal)
    return {
        "fp8 kernel": row_errors(out, exact),
        "bf16 Hopper forward": row_errors(hopper.hopper_forward(q, k, v, causal, d**-0.5)[0], exact),
        "float64 on fp8 inputs": row_errors(on_fp8_inputs, exact),
        "fp8 kernel vs float64 on its fp8 inputs": row_errors(out, on_fp8_inputs),
    }


def tflops(call, flops: float) -> float:
    return flops / triton.testing.do_bench(call, warmup=25, rep=200, return_mode="median") / 1e9


def inputs(d: int, n: int, causal: bool) -> tuple[tuple[torch.Tensor, ...], float]:
    """(Q, K, V) of the benchmark grid at N = n in bf16, and the forward's FLOPs."""
    batch, heads = attention.default_grid().batch_heads(n, d)
    q, k, v = (torch.randn(batch, heads, n, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    return (q, k, v), attention_flops(batch * heads, n, n, d, is_causal=causal, backward=False)


def config_label(config) -> str:
    return f"{config.kwargs['BLOCK_Q']}×{config.kwargs['BLOCK_K']} w{config.num_warps} s{config.num_stages}"


def config_speeds(d: int, causal: bool, n: int) -> dict:
    """TFLOP/s of the FP8 kernel forced to each config of its GPU search space."""
    from course.reference import hopper_fp8

    (q, k, v), flops = inputs(d, n, causal)
    prepared = hopper_fp8.prepare(q, k, v)
    return {
        config_label(c): tflops(lambda c=c: hopper_fp8.fp8_attention(prepared, causal, d**-0.5, c), flops)
        for c in hopper_fp8.GPU_CONFIGS
    }


def speed(d: int, causal: bool, n: int) -> dict:
    from course.reference import hopper, hopper_fp8

    (q, k, v), flops = inputs(d, n, causal)
    prepared = hopper_fp8.prepare(q, k, v)
    calls = {
        "fp8 kernel": lambda: hopper_fp8.fp8_attention(prepared, causal, d**-0.5),
        "fp8 with quantising": lambda: hopper_fp8.fp8_forward(q, k, v, causal),
        "bf16 Hopper forward": lambda: hopper.hopper_forward(q, k, v, causal, d**-0.5),
    }
    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
        calls["bf16 SDPA cuDNN"] = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        return {name: tflops(call, flops) for name, call in calls.items()}


def causal_cell(row: dict) -> str:
    return "yes" if row["causal"] else "no"


def markdown_table(header: list[str], rows: list[list[str]]) -> list[str]:
    return ["| " + " | ".join(header) + " |", "|---" * len(header) + "|"] + [
        "| " + " | ".join(cells) + " |" for cells in rows
    ]


def table(rows: list[dict]) -> str:
    """fp8.md: TFLOP/s and ratios per point, then (one row per d and causal) the errors and each config's speed."""
    names = list(rows[0]["tflops"])
    peers = ("bf16 Hopper forward", "bf16 SDPA cuDNN")
    lines = markdown_table(
        ["d", "causal", "N", *(f"{n} TFLOP/s" for n in names), *(f"fp8 kernel / {p}" for p in peers)],
        [
            [str(r["d"]), causal_cell(r), str(r["n"])]
            + [f"{r['tflops'][n]:.0f}" for n in names]
            + [f"{r['tflops']['fp8 kernel'] / r['tflops'][p]:.2f}" for p in peers]
            for r in rows
        ],
    )
    checked = [r for r in rows if "accuracy" in r]
    sections = (
        (
            f"Row error ‖O − O₆₄‖ / ‖O₆₄‖ at B·H, Nq, Nk = {CHECK_SHAPE} (bf16 inputs), median / max:",
            "accuracy",
            lambda error: f"{error[0]:.1e} / {error[1]:.1e}",
        ),
        (
            f"The FP8 kernel forced to each config at N = {checked[0]['configs_n']}, TFLOP/s:",
            "configs",
            "{:.0f}".format,
        ),
    )
    for title, key, cell in sections:
        lines += ["", title, ""] + markdown_table(
            ["d", "causal", *checked[0][key]],
            [[str(r["d"]), causal_cell(r), *map(cell, r[key].values())] for r in checked],
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--ns", nargs="+", type=int, default=[4096, 8192])
    args = parser.parse_args(argv)
    if not utils.mode().is_gpu:
        print(bilingual("这个基准需要 GPU", "this benchmark needs a GPU"))
        return 2
    rows = []
    for d in (64, 128):
        for causal in (False, True):
            rows += [{"d": d, "causal": causal, "n": n, "tflops": speed(d, causal, n)} for n in args.ns]
            rows[-1] |= {
                "accuracy": accuracy(d, causal),
                "configs_n": args.ns[-1],
                "configs": config_speeds(d, causal, args.ns[-1]),
            }
            print(f"d = {d}, causal = {causal}: done", flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "fp8.json").write_text(
        json.dumps(
            {"environment": attention.environment(), "check_shape": CHECK_SHAPE, "rows": rows}, indent=1
        ),
        encoding="utf-8",
    )
    markdown = table(rows)
    (args.out / "fp8.md").write_text(markdown, encoding="utf-8")
    print(markdown)
    return 0


if __name__ == "__main__":
    sys.exit(main())
