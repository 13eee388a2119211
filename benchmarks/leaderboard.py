"""Stanford CS336's FlashAttention leaderboard call, checked against float64 and timed beside SDPA's backends.

The call: q, k, v of shape (16, 16384, 64) in bfloat16 (here (16, 1, 16384, 64): one head), causal,
`o = flash(q, k, v, True); o.sum().backward()` — the gradient of a sum is a dO of ones with stride 0. Reported
apart: the whole call; the forward alone; the backward alone (the same graph, `o.backward(dO)` again with that
stride-0 dO); the GPU time of the call's kernels (torch.profiler, each kernel named) and what is left of the
whole call outside them (launches, allocations, copies on the host's side). On a CPU a tiny shape runs through
the Triton interpreter so that CI checks the script; its times mean nothing. The kernels' time comes from a
profiled run without `do_bench`'s L2 flush, so "outside the kernels" within ±0.1 ms of 0 means none measurable:
the host launches ahead of the GPU.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch

import utils
from benchmarks.attention import TOLERANCES, attempt, error_vs_tolerance, measure_ms, reference
from benchmarks.implementations import IMPLEMENTATIONS, call

GPU_SHAPE = (16, 1, 16384, 64)  # (batch, heads, N, d)
CPU_SHAPE = (2, 1, 40, 16)
CHECKED_SEQUENCES = (
    2  # the float64 check covers the first two sequences (one is 13 GB of float64 temporaries)
)
IMPLS = ("triton", "hopper", "sdpa_flash", "sdpa_cudnn")


def kernel_ms(fn, grads, calls: int = 5) -> tuple[float, dict[str, float]]:
    """GPU time of `fn`'s kernels per call, in all and per kernel name (ms), from torch.profiler's device events;
    the gradients are dropped before each call, as `do_bench` does (else each call adds into the last's)."""
    from torch.profiler import ProfilerActivity, profile

    def once():
        for t in grads:
            t.grad = None
        fn()

    once()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA], acc_events=True) as prof:
        for _ in range(calls):
            once()
        torch.cuda.synchronize()
    per_kernel: dict[str, float] = {}
    for event in prof.events():
        if event.device_type == torch.autograd.DeviceType.CUDA:
            per_kernel[event.name] = per_kernel.get(event.name, 0.0) + event.device_time / 1e3 / calls
    top = dict(sorted(per_kernel.items(), key=lambda kv: -kv[1])[:8])
    return sum(per_kernel.values()), {name[:120]: round(ms, 4) for name, ms in top.items()}


def check(impl, q, k, v) -> dict[str, float]:
    """The call's O and gradients for the first sequences against float64: error / tolerance (≤ 1 passes)."""
    out = call(impl, q, k, v, True)
    out.sum().backward()
    part = [t[:CHECKED_SEQUENCES].detach() for t in (q, k, v)]
    ref = reference(*part, torch.ones_like(part[0]), True, with_grads=True)
    out_tol, grad_tol = TOLERANCES[q.dtype]
    got = {"O": out, "dQ": q.grad, "dK": k.grad, "dV": v.grad}
    errors = {
        name: round(
            error_vs_tolerance(t[:CHECKED_SEQUENCES], ref[name], out_tol if name == "O" else grad_tol), 4
        )
        for name, t in got.items()
    }
    for t in (q, k, v):
        t.grad = None
    return errors


def measure(name: str, shape: tuple[int, ...], dtype: torch.dtype) -> dict:
    """One implementation at the leaderboard's call: its check, then its times."""
    impl = IMPLEMENTATIONS[name]
    q, k, v = (torch.randn(shape, dtype=dtype, device=utils.device(), requires_grad=True) for _ in range(3))
    errors = check(impl, q, k, v)
    if max(errors.values()) > 1:
        return {"status": "wrong", "error_vs_tolerance": errors}
    grads = [q, k, v]

    def whole():
        call(impl, q, k, v, True).sum().backward()

    out = call(impl, q, k, v, True)
    ones = torch.ones((), dtype=out.dtype, device=out.device).expand_as(out)  # what .sum().backward() sends

    def backward():
        out.backward(ones, retain_graph=True)

    times = {
        "whole_ms": measure_ms(whole, grads),
        "forward_ms": measure_ms(lambda: call(impl, q, k, v, True), grads),
        "backward_ms": measure_ms(backward, grads),
    }
    if utils.mode().is_gpu:
        kernels, top = kernel_ms(whole, grads)
        times |= {"kernels_ms": kernels, "outside_kernels_ms": times["whole_ms"] - kernels, "kernels": top}
    return {"status": "ok", "error_vs_tolerance": errors, **times}


def run(out_dir: Path, impls=IMPLS) -> dict:
    gpu = utils.mode().is_gpu
    shape, dtype = (GPU_SHAPE, torch.bfloat16) if gpu else (CPU_SHAPE, torch.float32)
    results = {
        "device": utils.mode().name,
        "meaningful": gpu,
        "shape": shape,
        "dtype": str(dtype).removeprefix("torch."),
        "call": "o = flash(q, k, v, True); o.sum().backward()",
        "records": {name: attempt(lambda name=name: measure(name, shape, dtype)) for name in impls},
    }
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "leaderboard.json").write_text(json.dumps(results, indent=1) + "\n")
    return results


def format_table(results: dict) -> str:
    columns = ("whole_ms", "forward_ms", "backward_ms", "kernels_ms", "outside_kernels_ms")
    lines = [f"{results['device']} · {results['dtype']} · {tuple(results['shape'])} · {results['call']}"]
    lines.append(f"{'':12}" + "".join(f"{c.removesuffix('_ms'):>17}" for c in columns))
    for name, record in results["records"].items():
        if record["status"] != "ok":
            lines.append(
                f"{name:12} {record['status']}: {record.get('reason') or record.get('error_vs_tolerance')}"
            )
            continue
        lines.append(f"{name:12}" + "".join(f"{record.get(c, float('nan')):17.3f}" for c in columns))
    return "\n".join(lines)
