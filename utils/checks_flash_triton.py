"""Graded checks of unit 08 (FlashAttention in Triton), run in a child process by `utils.isolation.run_check`.

The student module must define `FlashAttentionTriton` (`apply(Q, K, V, is_causal=False)`, Q (B, Nq, d),
K and V (B, Nk, d); saves Q, K, V, O and a float32 L (B, Nq); backward returns (dQ, dK, dV, None)).

Which cases run: on a GPU the full set (float32, float16, bfloat16; d in {16, 32, 64, 128}; N from 1 to
16384, odd N, Nq != Nk); in the interpreter a reduced set (float32 and float16, small N), because the
interpreter is slow and its bfloat16 `tl.dot` is wrong. Every report says which set ran.

Tolerances, against float64: O and L within `_TOL[dtype]` (absolute and relative). float32 allows
TF32 (the GPU default of `tl.dot` for float32, about 1e-3 relative error), so it shares float16's
tolerance; bfloat16 has 3 fewer mantissa bits than float16. Gradients sum over up to N terms, so their
absolute tolerance scales with the largest reference entry.
"""

from __future__ import annotations

import statistics

import torch

import utils
from utils.attention import course_kernels
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
from utils.measure import attention_flops, compare_ms
from utils.messages import bilingual
from utils.runtime import device, interpreter
from utils.triton_checks import ATTENTION_OPS, count_launches, forbid_torch_ops, require_launches

F32, F16, BF16 = torch.float32, torch.float16, torch.bfloat16
_TOL = {F32: 1e-2, F16: 1e-2, BF16: 3e-2}
_GRAD_TOL = {F32: 2e-2, F16: 2e-2, BF16: 6e-2}

# (batch, Nq, Nk, d, dtype)
_VISIBLE = [(1, 40, 40, 16, F32)]
_CPU_HIDDEN = [
    (2, 1, 1, 16, F32),
    (2, 70, 70, 32, F32),
    (1, 17, 100, 16, F16),
    (3, 100, 45, 64, F16),
    (1, 129, 129, 16, F32),
]
# Every dtype with several head dims, N from 1 up, odd N, Nq != Nk; two long sequences at the end.
_GPU_VARIANTS = [(F16, 16), (F16, 32), (F16, 64), (F16, 128), (F32, 32), (F32, 128), (BF16, 16), (BF16, 64)]
_GPU_SHAPES = [(2, 1, 1), (2, 127, 127), (1, 1000, 1000), (1, 257, 1531), (1, 4099, 4099)]
_GPU_HIDDEN = [(b, nq, nk, d, t) for t, d in _GPU_VARIANTS for b, nq, nk in _GPU_SHAPES]
_GPU_HIDDEN += [(1, 16384, 16384, 64, F16), (1, 16384, 16384, 128, BF16)]

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


def _cases(hidden: bool) -> tuple[str, list]:
    if not hidden:
        return bilingual("自检", "self-check"), _VISIBLE
    if interpreter():
        return bilingual(
            "解释器精简集（float32/float16，小 N）", "interpreter set (float32/float16, small N)"
        ), _CPU_HIDDEN
    return bilingual("GPU 完整集", "full GPU set"), _GPU_HIDDEN


def _describe(case, is_causal: bool) -> tuple[str, str]:
    b, n_q, n_k, d, dtype = case
    kind = "causal" if is_causal else "non-causal"
    return f"B={b}, Nq={n_q}, Nk={n_k}, d={d}, {str(dtype).removeprefix('torch.')}, {kind}", kind


def _forward(module, q, k, v, is_causal: bool, what: str):
    """Run the student's forward with all guards on; return O."""
    with (
        forbid_shortcuts(*_shortcuts()),
        count_launches(module) as launches,
        forbid_torch_ops(ATTENTION_OPS, what),
    ):
        out = module.FlashAttentionTriton.apply(q, k, v, is_causal)
    require_launches(launches, what)
    return out


def _saved_lse(out, q) -> torch.Tensor:
    return next(t for t in saved_tensors(out) if tuple(t.shape) == tuple(q.shape[:-1]))


def _report(label: str, n_cases: int, is_causal: bool) -> str:
    kind = bilingual("因果", "causal") if is_causal else bilingual("非因果", "non-causal")
    line = bilingual(f"通过 {n_cases} 个用例", f"passed {n_cases} cases") + f" [{label}; {kind}]"
    print(line)
    return line


def forward(module, is_causal: bool = False, hidden: bool = False) -> str:
    """O and L of FlashAttentionTriton against float64, with the saved-tensor contract."""
    label, cases = _cases(hidden)
    for case in cases:
        b, n_q, n_k, d, dtype = case
        shape, _ = _describe(case, is_causal)
        what = bilingual(f"前向（{shape}）", f"forward ({shape})")
        q, k, v = random_qkv(b, n_q, n_k, d, dtype=dtype, device=device())
        out = _forward(module, q, k, v, is_causal, what)
        o_ref, lse_ref = reference_attention(q, k, v, is_causal=is_causal)
        assert_close(out, o_ref, what + " O", atol=_TOL[dtype], rtol=_TOL[dtype])
        if out.dtype != dtype:
            raise AssertionError(
                bilingual(
                    f"{what}：O 的类型应为 {dtype}，得到 {out.dtype}",
                    f"{what}: O should be {dtype}, got {out.dtype}",
                )
            )
        check_saved_contract(out, q, k, v)
        assert_close(_saved_lse(out, q), lse_ref, what + " L", atol=_TOL[dtype], rtol=_TOL[dtype])
    return _report(label, len(cases), is_causal)


def backward(module, is_causal: bool = False, hidden: bool = False) -> str:
    """dQ, dK, dV of FlashAttentionTriton against float64; the backward must launch the student's kernels."""
    label, cases = _cases(hidden)
    for case in cases:
        b, n_q, n_k, d, dtype = case
        shape, _ = _describe(case, is_causal)
        what = bilingual(f"反向（{shape}）", f"backward ({shape})")
        q, k, v = random_qkv(b, n_q, n_k, d, dtype=dtype, device=device())
        grad_out = torch.randn(b, n_q, d, device=device()).to(dtype)
        out = _forward(module, q, k, v, is_causal, what)
        # Δ = rowsum(dO ∘ O) may be computed with torch (mul, sum); matrix products and exp may not.
        with (
            forbid_shortcuts(*_shortcuts()),
            count_launches(module) as launches,
            forbid_torch_ops(ATTENTION_OPS, what),
        ):
            out.backward(grad_out)
        require_launches(launches, what)
        for name, grad, ref in zip(
            ("dQ", "dK", "dV"),
            (q.grad, k.grad, v.grad),
            reference_gradients(q, k, v, grad_out, is_causal),
            strict=True,
        ):
            if grad is None:
                raise AssertionError(bilingual(f"{what}：{name} 为 None", f"{what}: {name} is None"))
            scale = max(1.0, ref.abs().max().item())
            assert_close(grad, ref, f"{what} {name}", atol=_GRAD_TOL[dtype] * scale, rtol=_GRAD_TOL[dtype])
    return _report(label, len(cases), is_causal)


def memory(module) -> str:
    """No N×N tensor in forward + backward; on a GPU, peak memory far below the N² bytes of the scores."""
    n, d, dtype = (16384, 64, F16) if not interpreter() else (512, 16, F32)
    q, k, v = random_qkv(1, n, n, d, dtype=dtype, device=device())
    grad_out = torch.randn_like(q)

    def run():
        module.FlashAttentionTriton.apply(q, k, v, True).backward(grad_out)

    what = bilingual(f"前向+反向（N={n}）", f"forward+backward (N={n})")
    assert_no_quadratic_tensor(run, q, k, what)
    if interpreter():
        line = bilingual(f"没有 N×N 中间张量（N={n}，解释器）", f"no N×N intermediate (N={n}, interpreter)")
    else:
        torch.cuda.synchronize()
        before = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        run()
        torch.cuda.synchronize()
        extra = torch.cuda.max_memory_allocated() - before
        budget = n * n * q.element_size() // 8
        if extra > budget:
            raise AssertionError(
                bilingual(
                    f"{what} 额外占用 {extra / 2**20:.0f} MiB 显存，超过上限 {budget / 2**20:.0f} MiB（N² 的 1/8）",
                    f"{what} used {extra / 2**20:.0f} MiB extra, above the {budget / 2**20:.0f} MiB limit (N²/8)",
                )
            )
        line = bilingual(
            f"峰值额外显存 {extra / 2**20:.1f} MiB（N={n}，N² 个 fp16 需 {n * n * 2 / 2**20:.0f} MiB）",
            f"peak extra memory {extra / 2**20:.1f} MiB (N={n}; N² fp16 would be {n * n * 2 / 2**20:.0f} MiB)",
        )
    print(line)
    return line


def measure_performance(module) -> dict[str, dict[str, float]]:
    """{"forward" | "forward+backward": {"student", "sdpa": median TFLOP/s, "ratio": median per-round
    student/SDPA throughput}} at PERF_SHAPE on this GPU (see `utils.measure.compare_ms`)."""
    b, n_q, n_k, d, dtype = PERF_SHAPE
    q, k, v = random_qkv(b, n_q, n_k, d, dtype=dtype, device=device())
    grad_out = torch.randn_like(q)

    def student():
        return module.FlashAttentionTriton.apply(q, k, v, False)

    def sdpa():  # SDPA's fused kernels need (B, H, N, d): a 3-D input falls back to the slow math path
        return torch.nn.functional.scaled_dot_product_attention(q[None], k[None], v[None])[0]

    def with_backward(fn):
        return lambda: fn().backward(grad_out)

    runs = {
        "forward": {"student": student, "sdpa": sdpa},
        "forward+backward": {"student": with_backward(student), "sdpa": with_backward(sdpa)},
    }
    results = {}
    for what, fns in runs.items():
        flops = attention_flops(b, n_q, n_k, d, is_causal=False, backward=what != "forward")
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
    for what, result in measure_performance(module).items():
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


__all__ = [
    "CPU_PERFORMANCE_NOTE",
    "PERF_FRACTION_OF_SDPA",
    "backward",
    "forward",
    "measure_performance",
    "memory",
    "performance",
    "sweep_student",
]
