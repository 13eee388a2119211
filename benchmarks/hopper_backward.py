"""The one-pass Hopper backward beside unit 08's two-kernel backward and cuDNN's, on the H100 (issue 21).

    python -m benchmarks.hopper_backward --out DIR [--n 4096] [--dtype bfloat16]

For d ∈ {64, 128}, causal and not, on the FlashAttention paper's grid (B·N = 16k tokens, H·d = 2048), times the
backward alone (Q, K, V, O, L and dO given) of: unit 08 (`flash_triton.triton_backward`, seven products per
tile), SDPA cuDNN (the backward of its own forward), and `course/reference/hopper_backward.py` (five products)
autotuned and in each variant of a small sweep, with dQ added by TMA reduce-add and by element-wise atomics.
Every one-pass variant is first checked against float64 at an odd shape (`CHECK_SHAPE`). Writes DIR/backward.json
(per variant: ms, speed relative to unit 08 and to cuDNN, registers, spills, shared memory, error) and
DIR/backward.md (the table `benchmarks/README.md` quotes). About 2 minutes on an H100.
"""

from __future__ import annotations

import argparse
import functools
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
from utils.messages import bilingual

SWEEP = [  # (BLOCK_Q, BLOCK_K, num_warps, num_stages, dQ by TMA)
    (64, 64, 4, 3, True),
    (64, 64, 4, 4, True),
    (32, 64, 4, 3, True),
    (64, 64, 8, 3, True),
    (32, 64, 8, 3, True),
    (128, 64, 8, 2, True),
    (64, 128, 8, 3, True),  # FlashAttention-3's tile for d = 128 (64 queries × 128 keys, two warpgroups)
    (64, 64, 4, 3, False),
    (32, 64, 4, 3, False),
]
CHECK_SHAPE = (3, 1031, 1537)  # heads, Nq, Nk
CHECK_TOL = {torch.bfloat16: 2e-2, torch.float16: 4e-3}  # max error / max |reference|, per gradient


def variant_name(block_q, block_k, warps, stages, by_tma) -> str:
    return f"{block_q}×{block_k} w{warps} s{stages} {'TMA' if by_tma else 'atomics'}"


def relative_errors(grads, expected) -> list[float]:
    return [
        ((g.double() - e).abs().max() / e.abs().max()).item() for g, e in zip(grads, expected, strict=True)
    ]


def check(d: int, causal: bool, dtype: torch.dtype, config, by_tma: bool) -> list[float]:
    """Relative errors of (dQ, dK, dV) against float64 at CHECK_SHAPE."""
    from course.reference import hopper, hopper_backward

    heads, n_q, n_k = CHECK_SHAPE
    q, k, v = grading.random_qkv(heads, n_q, n_k, d, dtype=dtype, device="cuda", requires_grad=False)
    grad_out = torch.randn_like(q)
    o, lse = hopper.hopper_forward(q, k, v, causal, d**-0.5)
    grads, _ = hopper_backward.hopper_backward(q, k, v, o, lse, grad_out, causal, d**-0.5, config, by_tma)
    return relative_errors(grads, grading.reference_gradients(q, k, v, grad_out, causal))


def panel(d: int, causal: bool, n: int, dtype: torch.dtype) -> list[dict]:
    from course.reference import flash_triton, hopper, hopper_backward

    batch, heads = attention.default_grid().batch_heads(n, d)
    q, k, v, grad_out = (torch.randn(batch * heads, n, d, device="cuda", dtype=dtype) for _ in range(4))
    scale = d**-0.5
    o, lse = hopper.hopper_forward(q, k, v, causal, scale)
    q4, k4, v4 = (t.view(batch, heads, n, d).clone().requires_grad_() for t in (q, k, v))
    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
        out4 = F.scaled_dot_product_attention(q4, k4, v4, is_causal=causal)
    do4 = grad_out.view(batch, heads, n, d)

    def bench(fn) -> float:
        return triton.testing.do_bench(fn, warmup=25, rep=200, return_mode="median")

    unit08 = bench(lambda: flash_triton.triton_backward(q, k, v, o, lse, grad_out, causal, scale))
    cudnn = bench(lambda: torch.autograd.grad(out4, (q4, k4, v4), do4, retain_graph=True))
    base = {"d": d, "causal": causal, "n": n, "dtype": str(dtype).removeprefix("torch.")}
    rows = [
        {**base, "variant": "unit 08 (two kernels)", "ms": unit08},
        {**base, "variant": "SDPA cuDNN", "ms": cudnn},
    ]

    def one_pass(config=None, by_tma=None):
        return hopper_backward.hopper_backward(q, k, v, o, lse, grad_out, causal, scale, config, by_tma)

    rows.append({**base, "variant": "one pass, autotuned", "ms": bench(one_pass)})
    for block_q, block_k, warps, stages, by_tma in SWEEP:
        config = hopper_backward.kernel_config(block_q, block_k, warps, stages)
        row = {**base, "variant": variant_name(block_q, block_k, warps, stages, by_tma)}
        try:
            errors = check(d, causal, dtype, config, by_tma)
            _, kernel = one_pass(config, by_tma)
        except triton.runtime.errors.OutOfResources as error:
            rows.append({**row, "error": str(error)})
            continue
        rows.append({
            **row, "ms": bench(functools.partial(one_pass, config, by_tma)), "registers": kernel.n_regs,
            "spills": kernel.n_spills, "shared": kernel.metadata.shared, "relative_errors": errors,
            "correct": max(errors) <= CHECK_TOL[dtype],
        })  # fmt: skip
    for row in rows:
        if "ms" in row:
            row["vs_unit08"], row["vs_cudnn"] = unit08 / row["ms"], cudnn / row["ms"]
    return rows


def table(rows: list[dict]) -> str:
    """The markdown table: one line per variant, speed relative to unit 08 and cuDNN (> 1 is faster)."""
    lines = [
        "| d | causal | variant | ms | × unit 08 | × cuDNN | registers | spills | max rel. error |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        if "ms" not in r:
            lines.append(
                f"| {r['d']} | {'yes' if r['causal'] else 'no'} | {r['variant']} | {r['error']} ||||||"
            )
            continue
        errors = f"{max(r['relative_errors']):.1e}" if "relative_errors" in r else ""
        flag = "" if r.get("correct", True) else " **wrong**"
        lines.append(
            f"| {r['d']} | {'yes' if r['causal'] else 'no'} | {r['variant']} | {r['ms']:.3f} | "
            f"{r['vs_unit08']:.2f} | {r['vs_cudnn']:.2f} | {r.get('registers', '')} | {r.get('spills', '')} | "
            f"{errors}{flag} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--n", type=int, default=4096)
    parser.add_argument("--dtype", default="bfloat16", choices=["bfloat16", "float16"])
    args = parser.parse_args(argv)
    if not utils.mode().is_gpu:
        print(
            bilingual(
                "这个基准需要 GPU（sm90 上才有 TMA 归约）", "this benchmark needs a GPU (TMA reduce on sm90)"
            )
        )
        return 2
    dtype = getattr(torch, args.dtype)
    rows = []
    for d in (64, 128):
        for causal in (False, True):
            rows += panel(d, causal, args.n, dtype)
            print(f"d = {d}, causal = {causal}: done", flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "backward.json").write_text(
        json.dumps({"environment": attention.environment(), "rows": rows}, indent=1), encoding="utf-8"
    )
    (args.out / "backward.md").write_text(table(rows), encoding="utf-8")
    print(table(rows))
    return 0 if all(r.get("correct", True) for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
