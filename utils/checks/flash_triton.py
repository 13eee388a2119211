"""Visible self-checks of unit 08 (FlashAttention in Triton), run in a child process by `utils.checks.isolation.run_check`.

The notebook fixes the interfaces: `FlashAttentionTriton.apply(Q, K, V, is_causal=False)` with Q (B, Nq, d), K and
V (B, Nk, d), saving Q, K, V, O and a float32 L (B, Nq); `launch_dkdv(q, k, v, grad_out, lse, delta, is_causal)`
returning (dK, dV) and `launch_dq(...)` returning dQ, where L and Δ = rowsum(dO ∘ O) are float32 (B, Nq).

Each check runs a few small cases that cover every requirement once (odd N, several programs and tiles, causal
with Nq < Nk and Nq > Nk, float16, non-contiguous and stride-0 inputs); the hidden cases, larger and random, are
the judge's (`course/judge/unit08.py`). The backward checks hand the kernels L and Δ computed in float64, so a
wrong forward cannot hide or cause a backward failure.

Tolerances, against float64: O and L within `TOL[dtype]` (absolute and relative). float32 allows TF32 (the GPU
default of `tl.dot` for float32, about 1e-3 relative error), so it shares float16's tolerance; bfloat16 has 3
fewer mantissa bits than float16. Gradients sum over up to N terms, so their absolute tolerance scales with the
largest reference entry (`GRAD_TOL`).
"""

from __future__ import annotations

import contextlib
import statistics
import sys
from collections.abc import Callable

import torch

import utils
from utils.attention import course_kernels
from utils.checks.launches import ATTENTION_OPS, count_launches, forbid_torch_ops, require_launches
from utils.grading import (
    assert_close,
    assert_no_quadratic_tensor,
    check_saved_contract,
    forbid_shortcuts,
    random_qkv,
    reference_attention,
    reference_gradients,
    saved_tensors,
)
from utils.measure import assert_warm_calls_not_far_too_slow, attention_flops, compare_ms, round_ms
from utils.messages import bilingual
from utils.runtime import device, interpreter

F32, F16, BF16 = torch.float32, torch.float16, torch.bfloat16
TOL = {F32: 1e-2, F16: 1e-2, BF16: 3e-2}
GRAD_TOL = {F32: 2e-2, F16: 2e-2, BF16: 6e-2}
GRADIENTS = {"dq": 0, "dk": 1, "dv": 2}

# (batch, Nq, Nk, d, dtype, is_causal, layout): "t" = Q, K, V (forward) or dO (backward) as transposed views;
# "stride0" = a dO broadcast along d (stride 0). 70 rows span two 64-row tiles.
FORWARD_CASES = [
    (1, 70, 70, 16, F32, False, None),
    (2, 45, 80, 32, F32, True, None),
    (1, 80, 33, 16, F16, True, None),
    (1, 50, 70, 16, F32, False, "t"),
]
BACKWARD_CASES = [
    (1, 70, 70, 16, F32, False, None),
    (2, 45, 80, 32, F32, True, "t"),
    (1, 80, 33, 16, F16, True, "stride0"),
]

BAD_INPUTS = {  # Q, K, V as (shape, dtype): each must raise ValueError; the judge sends the same, on fresh values
    "float64": [((1, 20, 16), torch.float64)] * 3,
    "d = 48": [((1, 20, 48), F32)] * 3,
    "4-D": [((1, 2, 20, 16), F32)] * 3,
    "K, V of different lengths · K、V 长度不同": [((1, 20, 16), F32), ((1, 20, 16), F32), ((1, 21, 16), F32)],
    "Q, K of different d · Q、K 的 d 不同": [((1, 20, 16), F32), ((1, 20, 32), F32), ((1, 20, 32), F32)],
}
# Performance (GPU only; the notebook's `test_performance` cell, 1 point, marked GPU-only): forward and
# forward+backward at B·H = 16, N = 4096, d = 64, float16, not causal; each must reach PERF_FRACTION_OF_SDPA
# of torch SDPA's throughput on the same inputs, measured in the same run: _PERF_ROUNDS rounds, each timing
# _PERF_REPEATS calls of the student's kernels then of SDPA's under a GPU lock that other graders' timings
# wait for (`utils.measure.compare_ms`); the ratio is the median of the per-round ratios. Both are checked: the backward is 2.5x the forward's work, so a
# pathological forward hides in the forward+backward figure (a forward 3x too slow costs the total only
# about 1.5x), and a slow backward shows in forward+backward.
# Calibration (H100, torch 2.11, Triton 3.6, `pytest -m gpu tests/test_unit08_gpu_only.py -s`): the unit's
# reference solution (straightforward kernels, one fixed tile size, no autotuning, default num_warps /
# num_stages) reaches 0.66 of SDPA forward and 0.57-0.64 forward+backward; a kernel that does not use
# `tl.dot` on tiles (one query row at a time: course/wrong/08_flash_attention_triton/fwd_row_by_row_no_dot.py)
# reaches 0.011 forward and 0.036 forward+backward. The threshold, 0.15, leaves a correct kernel written
# along the notebook's lines a 4x margin (smaller tiles, or other jobs on the GPU, still pass) and sits 4x
# above the row-by-row kernel. Being a ratio to SDPA on the same GPU, it carries over to other GPUs (only
# the H100 was measured).
PERF_SHAPE = (16, 4096, 4096, 64, F16)
PERF_FRACTION_OF_SDPA = 0.15
_PERF_WARMUP, _PERF_ROUNDS, _PERF_REPEATS = 5, 5, 10
CPU_PERFORMANCE_NOTE = bilingual(
    "性能只在 GPU 上评分：本单元格在这里得 0 分（解释器中无法测量速度）；教师会在 GPU 上评分",
    "performance is only graded on a GPU: 0 points here (speed cannot be measured in the interpreter); "
    "your instructor grades on a GPU",
)


def _shortcuts() -> list[tuple[object, str]]:
    """What graded code may not call: naive attention and, where installed, the course's reference."""
    reference = course_kernels()
    return [(utils, "naive_attention"), *([(reference, "flash_attention")] if reference else [])]


def describe(b, n_q, n_k, d, dtype, is_causal, layout=None) -> str:
    view = {None: "", "t": ", transposed view", "stride0": ", stride-0 dO"}[layout]
    kind = "causal" if is_causal else "non-causal"
    return f"B={b}, Nq={n_q}, Nk={n_k}, d={d}, {str(dtype).removeprefix('torch.')}, {kind}{view}"


def transposed(t: torch.Tensor) -> torch.Tensor:
    """The same values as a non-contiguous view (the last two dimensions' strides swapped)."""
    return t.transpose(-2, -1).contiguous().transpose(-2, -1)


def lse_and_delta(q, k, v, grad_out, is_causal: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """L and Δ = rowsum(dO ∘ O) from the float64 reference, as the float32 (B, Nq) tensors the kernels read."""
    out, lse = reference_attention(q, k, v, is_causal=is_causal)
    return lse.float(), (grad_out.double() * out).sum(-1).float()


def _report(n_cases: int) -> None:
    print(bilingual(f"通过：{n_cases} 个用例", f"passed: {n_cases} case" + ("s" if n_cases != 1 else "")))


def _guarded(module, what: str, forbidden=ATTENTION_OPS):
    """Shortcuts refused, PyTorch kept from the kernels' work, launches of the student's kernels counted."""
    stack = contextlib.ExitStack()
    stack.enter_context(forbid_shortcuts(*_shortcuts()))
    launches = stack.enter_context(count_launches(module))
    stack.enter_context(forbid_torch_ops(forbidden, what))
    return stack, launches


def _forward(module, q, k, v, is_causal: bool, what: str):
    stack, launches = _guarded(module, what)
    with stack:
        out = module.FlashAttentionTriton.apply(q, k, v, is_causal)
    require_launches(launches, what)
    return out


def forward(module) -> None:
    """O and L of FlashAttentionTriton against float64, the saved tensors, and a ValueError for bad input."""
    for b, n_q, n_k, d, dtype, is_causal, layout in FORWARD_CASES:
        what = bilingual("前向", "forward") + f" ({describe(b, n_q, n_k, d, dtype, is_causal, layout)})"
        q, k, v = random_qkv(b, n_q, n_k, d, dtype=dtype, device=device())
        if layout == "t":
            q, k, v = (transposed(t.detach()).requires_grad_() for t in (q, k, v))
        out = _forward(module, q, k, v, is_causal, what)
        o_ref, lse_ref = reference_attention(q, k, v, is_causal=is_causal)
        if out.dtype != dtype:
            raise AssertionError(
                bilingual(
                    f"{what}：O 的类型应为 {dtype}，得到 {out.dtype}",
                    f"{what}: O should be {dtype}, got {out.dtype}",
                )
            )
        assert_close(out, o_ref, what + " O", atol=TOL[dtype], rtol=TOL[dtype])
        check_saved_contract(out, q, k, v)
        lse = next(t for t in saved_tensors(out) if tuple(t.shape) == tuple(q.shape[:-1]))
        assert_close(lse, lse_ref, what + " L", atol=TOL[dtype], rtol=TOL[dtype])
    for label, inputs in BAD_INPUTS.items():
        bad_input_raises(
            module, label, [torch.randn(*shape, device=device()).to(dtype) for shape, dtype in inputs]
        )
    _report(len(FORWARD_CASES) + len(BAD_INPUTS))


def bad_input_raises(module, label: str, qkv: list[torch.Tensor]) -> None:
    """FlashAttentionTriton.apply on one of BAD_INPUTS raises ValueError (not another error, not a result)."""
    what = f"FlashAttentionTriton.apply ({label})"
    try:
        module.FlashAttentionTriton.apply(*qkv, False)
    except ValueError:
        return
    except Exception as error:  # noqa: BLE001  (any other error is the finding)
        raise AssertionError(
            bilingual(
                f"{what} 应引发 ValueError，得到 {type(error).__name__}: {str(error)[:200]}",
                f"{what} should raise ValueError, got {type(error).__name__}: {str(error)[:200]}",
            )
        ) from None
    raise AssertionError(
        bilingual(f"{what} 应引发 ValueError，却正常返回", f"{what} should raise ValueError but returned")
    )


def backward_inputs(b, n_q, n_k, d, dtype, is_causal, layout):
    """Q, K, V, dO (viewed as `layout` says) and the float32 L and Δ of one backward case."""
    q, k, v = (t.detach() for t in random_qkv(b, n_q, n_k, d, dtype=dtype, device=device()))
    if layout == "stride0":
        grad_out = torch.randn(b, n_q, 1, device=device()).to(dtype).expand(b, n_q, d)
    else:
        grad_out = torch.randn(b, n_q, d, device=device()).to(dtype)
        grad_out = transposed(grad_out) if layout == "t" else grad_out
    return (q, k, v, grad_out, *lse_and_delta(q, k, v, grad_out, is_causal))


def _launch(module, name: str, gradient: str) -> None:
    """One gradient from `launch_dkdv` or `launch_dq`, checked on BACKWARD_CASES."""
    for b, n_q, n_k, d, dtype, is_causal, layout in BACKWARD_CASES:
        what = f"{name} {gradient[1:].upper()} ({describe(b, n_q, n_k, d, dtype, is_causal, layout)})"
        q, k, v, grad_out, lse, delta = backward_inputs(b, n_q, n_k, d, dtype, is_causal, layout)
        stack, launches = _guarded(module, what)
        with stack:
            result = getattr(module, name)(q, k, v, grad_out, lse, delta, is_causal)
        require_launches(launches, what)
        grad = result[{"dk": 0, "dv": 1}[gradient]] if name == "launch_dkdv" else result
        ref = reference_gradients(q, k, v, grad_out, is_causal)[GRADIENTS[gradient]]
        check_gradient(grad, ref, dtype, what)


def check_gradient(grad, ref: torch.Tensor, dtype, what: str) -> None:
    """A gradient against its float64 reference: a tensor of the input's dtype, within GRAD_TOL."""
    if not isinstance(grad, torch.Tensor):
        raise AssertionError(
            bilingual(
                f"{what}：应为张量，得到 {type(grad).__name__}",
                f"{what}: expected a tensor, got {type(grad).__name__}",
            )
        )
    if grad.dtype != dtype:
        raise AssertionError(
            bilingual(
                f"{what}：类型应为 {dtype}，得到 {grad.dtype}", f"{what}: should be {dtype}, got {grad.dtype}"
            )
        )
    scale = max(1.0, ref.abs().max().item())
    assert_close(grad, ref, what, atol=GRAD_TOL[dtype] * scale, rtol=GRAD_TOL[dtype])


def dv(module) -> None:
    """dV of `launch_dkdv` against float64 (L and Δ given)."""
    _launch(module, "launch_dkdv", "dv")
    _report(len(BACKWARD_CASES))


def dk(module) -> None:
    """dK of `launch_dkdv` against float64 (L and Δ given)."""
    _launch(module, "launch_dkdv", "dk")
    _report(len(BACKWARD_CASES))


def dq(module) -> None:
    """dQ of `launch_dq`, then all three gradients of `out.sum()` through autograd (a stride-0 dO)."""
    _launch(module, "launch_dq", "dq")
    b, n_q, n_k, d, dtype = 2, 45, 80, 32, F32
    what = (
        bilingual("经 autograd 的反向", "backward through autograd")
        + f" ({describe(b, n_q, n_k, d, dtype, True)}, out.sum())"
    )
    q, k, v = random_qkv(b, n_q, n_k, d, dtype=dtype, device=device())
    out = _forward(module, q, k, v, True, what)
    stack, launches = _guarded(module, what)
    with stack:
        out.sum().backward()
    require_launches(launches, what)
    expected = reference_gradients(q, k, v, torch.ones_like(out), True)
    for name, leaf, ref in zip(("dQ", "dK", "dV"), (q, k, v), expected, strict=True):
        check_gradient(leaf.grad, ref, dtype, f"{what} {name}")
    _report(len(BACKWARD_CASES) + 1)


def memory(module) -> None:
    """No N×N tensor in forward + backward; on a GPU, peak memory far below the N² bytes of the scores."""
    n, d, dtype = (16384, 64, F16) if not interpreter() else (300, 16, F32)
    q, k, v = random_qkv(1, n, n, d, dtype=dtype, device=device())
    grad_out = torch.randn_like(q)

    def run():
        module.FlashAttentionTriton.apply(q, k, v, True).backward(grad_out)

    what = bilingual(f"前向+反向（N={n}）", f"forward+backward (N={n})")
    assert_no_quadratic_tensor(run, q, k, what)
    if interpreter():
        print(bilingual(f"没有 N×N 中间张量（N={n}，解释器）", f"no N×N intermediate (N={n}, interpreter)"))
        return
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    run()
    torch.cuda.synchronize()
    extra = torch.cuda.max_memory_allocated() - before
    print(check_peak(extra, n, what))


def peak_bound(n: int) -> int:
    """The extra peak memory allowed at sequence length n: 1/8 of an fp16 N×N score matrix."""
    return n * n * 2 // 8


def check_peak(extra: int, n: int, what: str) -> str:
    """Fail when `extra` bytes exceed `peak_bound(n)`; else the line that says how much was used."""
    budget = peak_bound(n)
    if extra > budget:
        raise AssertionError(
            bilingual(
                f"{what} 额外占用 {extra / 2**20:.0f} MiB 显存，超过上限 {budget / 2**20:.0f} MiB（N² 的 1/8）",
                f"{what} used {extra / 2**20:.0f} MiB extra, above the {budget / 2**20:.0f} MiB limit (N²/8)",
            )
        )
    return bilingual(
        f"峰值额外显存 {extra / 2**20:.1f} MiB（N={n}，N² 个 fp16 需 {n * n * 2 / 2**20:.0f} MiB）",
        f"peak extra memory {extra / 2**20:.1f} MiB (N={n}; N² fp16 would be {n * n * 2 / 2**20:.0f} MiB)",
    )


def perf_calls(attention) -> dict[str, Callable[[], object]]:
    """{"forward", "forward+backward"}: zero-argument calls of `attention(q, k, v)` on fresh PERF_SHAPE inputs."""
    b, n_q, n_k, d, dtype = PERF_SHAPE
    q, k, v = random_qkv(b, n_q, n_k, d, dtype=dtype, device=device())
    grad_out = torch.randn_like(q)
    return {
        "forward": lambda: attention(q, k, v),
        "forward+backward": lambda: attention(q, k, v).backward(grad_out),
    }


def sdpa(q, k, v):
    """SDPA on (B, N, d) inputs: its fused kernels need (B, H, N, d); a 3-D input falls back to the slow path."""
    return torch.nn.functional.scaled_dot_product_attention(q[None], k[None], v[None])[0]


def student_attention(module):
    return lambda q, k, v: module.FlashAttentionTriton.apply(q, k, v, False)


def measure_performance(module, give_up_below: float | None = None) -> dict[str, dict[str, float]]:
    """{"forward" | "forward+backward": {"student", "sdpa": median TFLOP/s, "ratio": median per-round
    student/SDPA throughput}} at PERF_SHAPE on this GPU, timed in turns (see `utils.measure.compare_ms`).
    `give_up_below`: a ratio; a warm call far too slow for it fails before the timed rounds."""
    b, n_q, n_k, d, _ = PERF_SHAPE
    calls = {"student": perf_calls(student_attention(module)), "sdpa": perf_calls(sdpa)}
    if give_up_below is not None:
        assert_warm_calls_not_far_too_slow(calls["student"].values(), calls["sdpa"].values(), give_up_below)
    results = {}
    for what in ("forward", "forward+backward"):
        flops = attention_flops(b, n_q, n_k, d, is_causal=False, backward=what != "forward")
        fns = {name: runs[what] for name, runs in calls.items()}
        ms = compare_ms(fns, rounds=_PERF_ROUNDS, warmup=_PERF_WARMUP, repeats=_PERF_REPEATS)
        results[what] = {name: flops / statistics.median(times) / 1e9 for name, times in ms.items()}
        ratios = [s / t for s, t in zip(ms["sdpa"], ms["student"], strict=True)]
        results[what]["ratio"] = statistics.median(ratios)
    return results


def performance(module) -> int | None:
    """The `test_performance` cell: the student's TFLOP/s beside SDPA's, forward and forward+backward.

    Returns 0 in the interpreter (the cell's value is its score under nbgrader's partial-credit rule, so
    the cell scores 0 without an error and without stderr) and None on a GPU when both ratios reach
    PERF_FRACTION_OF_SDPA (the cell earns its points); raises AssertionError on a GPU otherwise.
    """
    if interpreter():
        print(CPU_PERFORMANCE_NOTE)
        return 0
    b, n_q, _, d, _ = PERF_SHAPE
    print(f"B={b}, N={n_q}, d={d}, float16, {utils.mode().name}")
    slow = []
    for what, result in measure_performance(module, give_up_below=PERF_FRACTION_OF_SDPA).items():
        ratio = result["ratio"]
        zh_what = {"forward": "前向", "forward+backward": "前向+反向"}[what]
        print(
            bilingual(
                f"{zh_what}：你的内核 {result['student']:.1f} TFLOP/s，SDPA {result['sdpa']:.1f} TFLOP/s"
                f"（{ratio:.2f}×，阈值 {PERF_FRACTION_OF_SDPA:.2f}×）",
                f"{what}: your kernels {result['student']:.1f} TFLOP/s, SDPA {result['sdpa']:.1f} TFLOP/s "
                f"({ratio:.2f}×, threshold {PERF_FRACTION_OF_SDPA:.2f}×)",
            )
        )
        if ratio < PERF_FRACTION_OF_SDPA:
            slow.append((zh_what, what, ratio))
    if slow:
        raise AssertionError(
            bilingual(
                "吞吐量低于阈值（"
                + "，".join(f"{zh} 为 SDPA 的 {r:.2f} 倍" for zh, _, r in slow)
                + f"，阈值 {PERF_FRACTION_OF_SDPA} 倍）：用 tl.dot 处理整块（如 64×64），不要逐行或逐个键循环",
                "throughput below the threshold ("
                + ", ".join(f"{en} at {r:.2f}× SDPA's" for _, en, r in slow)
                + f"; threshold {PERF_FRACTION_OF_SDPA}×): use tl.dot on whole tiles (e.g. 64×64), "
                "not loops over single rows or keys",
            )
        )
    return None


def sweep_student(module, ns: list[int], batch_heads: int, d: int) -> list[dict]:
    """`utils.measure.sweep` records of the student's forward+backward (float16 on a GPU, float32 on CPU)."""
    from utils.measure import sweep
    from utils.plotting import text

    dtype = F16 if not interpreter() else F32

    def make(n):
        q, k, v = random_qkv(batch_heads, n, n, d, dtype=dtype, device=device())
        grad_out = torch.randn_like(q)
        return lambda: module.FlashAttentionTriton.apply(q, k, v, False).backward(grad_out)

    return sweep({text("你的内核", "your kernels"): make}, ns, progress=False)


def judged_performance(repeats: int) -> tuple[float, float]:
    """For the judge's child: one round of the student's (forward, forward+backward) at PERF_SHAPE, each the
    median ms of `repeats` calls after an untimed one. The judge times SDPA in its own process, where the
    student's code cannot reach it, in the same rounds."""
    from utils.judged.student_module import MODULE_NAME

    return round_ms(perf_calls(student_attention(sys.modules[MODULE_NAME])).values(), repeats)


__all__ = [
    "BACKWARD_CASES",
    "CPU_PERFORMANCE_NOTE",
    "FORWARD_CASES",
    "GRAD_TOL",
    "PERF_FRACTION_OF_SDPA",
    "TOL",
    "backward_inputs",
    "check_gradient",
    "check_peak",
    "dk",
    "dq",
    "dv",
    "forward",
    "judged_performance",
    "lse_and_delta",
    "measure_performance",
    "memory",
    "peak_bound",
    "perf_calls",
    "performance",
    "sdpa",
    "student_attention",
    "sweep_student",
    "transposed",
]
