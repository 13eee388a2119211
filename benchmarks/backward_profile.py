"""Profile the backward kernels at CS336's leaderboard shape with Nsight Compute (issue 49).

    ncu --profile-from-start off --csv --page details --section ... \\
        python -m benchmarks.backward_profile launch --d 64 > d64.csv
    python -m benchmarks.backward_profile summarize d64.csv --out d64.md

`launch` runs the leaderboard's backward, `o.sum().backward()` (a dO of ones with stride 0), causal, bf16, at
(16 sequences, 16384, 64) for d = 64 and (8, 16384, 128) for d = 128 (the same FLOPs per head dim's width). It
first checks the course's backward against cuDNN's, then profiles one backward of each: cuDNN's kernels, then the
course's (Δ, dK/dV, dQ). It prints nothing on stdout, which carries ncu's CSV. `summarize` writes the markdown table
(`hopper_profile.summarize`), one column per kernel, named by the kernel.
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from benchmarks import hopper_profile

SEQUENCES = {64: 16, 128: 8}  # d -> sequences of 16384 tokens (one head each)
N = 16384


def launch(d: int, dtype: torch.dtype) -> None:
    from course.reference import flash_triton

    shape = (SEQUENCES[d], N, d)
    q, k, v = (torch.randn(shape, device="cuda", dtype=dtype, requires_grad=True) for _ in range(3))
    scale = d**-0.5
    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
        out = F.scaled_dot_product_attention(q[:, None], k[:, None], v[:, None], is_causal=True)[:, 0]
    ones = torch.ones((), dtype=dtype, device="cuda").expand_as(out)  # what .sum().backward() sends
    o, lse = flash_triton.triton_forward(q.detach(), k.detach(), v.detach(), True, scale)

    def cudnn():
        return torch.autograd.grad(out, (q, k, v), ones, retain_graph=True)

    def course():
        return flash_triton.triton_backward(q.detach(), k.detach(), v.detach(), o, lse, ones, True, scale)

    expected, got = cudnn(), course()  # compile and check before profiling
    for name, e, g in zip("QKV", expected, got, strict=True):
        error = ((g.float() - e.float()).norm() / e.float().norm()).item()
        if not error < 2e-2:
            raise SystemExit(f"d{name}: course and cuDNN differ (relative error {error:.3g}), not profiled")
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStart()
    cudnn()
    course()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStop()
    print(f"profiled cuDNN's and the course's backward: d={d}, causal, N={N}, {dtype}", file=sys.stderr)


def kernel_labels(path: Path) -> tuple[str, ...]:
    """One short label per profiled launch: its kernel's name."""
    return tuple(e["kernel"].split("(")[0][:40] for e in hopper_profile.read_details(path).values())


def add_launch_arguments(parser) -> None:
    parser.add_argument("--d", type=int, choices=sorted(SEQUENCES), default=64)
    parser.add_argument("--dtype", default="bfloat16", choices=["bfloat16", "float16"])


def main(argv: list[str] | None = None) -> int:
    return hopper_profile.profile_cli(
        argv,
        __doc__.splitlines()[0],
        add_launch_arguments,
        lambda args: launch(args.d, getattr(torch, args.dtype)),
        kernel_labels,
    )


if __name__ == "__main__":
    sys.exit(main())
