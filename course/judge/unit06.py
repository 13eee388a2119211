"""Unit 06 (FlashAttention in PyTorch): the hidden cases, tolerances and properties of each graded cell.

Tolerances against float64: float32 tiled sums differ by ~1e-6, gradients by ~1e-5; bfloat16 results are
rounded to 8 mantissa bits (relative step 2^-8). L is float32 whatever the input dtype.
"""

from __future__ import annotations

import math

import torch

from course.judge.core import Judgement, Unit
from course.judge.services import WATCH_SWITCHES
from utils import grading
from utils.judged.student_module import LAYOUTS

UNIT = Unit(
    LAYOUTS["flash_attention_pytorch.ipynb"],
    banned=[
        "utils.grading:reference_attention",
        "utils.grading:reference_gradients",
        "utils.attention.naive:naive_attention",
        "utils:naive_attention",
    ],
    suspicious={
        "numpy": "NumPy (work outside PyTorch is not seen by the largest-tensor watch)",
        **WATCH_SWITCHES,
    },
)
TOLERANCE = {
    torch.float32: {"out": dict(atol=1e-4, rtol=1e-4), "grad": dict(atol=2e-4, rtol=1e-3)},
    torch.bfloat16: {"out": dict(atol=2e-2, rtol=2e-2), "grad": dict(atol=3e-2, rtol=3e-2)},
}
L_TOLERANCE = dict(atol=1e-4, rtol=1e-4)

NO_MASK = "不加掩码 · no mask"
MASK = "因果掩码（对角块、偏离中心的块）· causal mask (diagonal and off-centre tiles)"
ODD = "float32，N 不是分块的整数倍 · float32, N not a multiple of the tile"
UNEQUAL = "Nq ≠ Nk（键少于一个分块、键多于查询）· Nq ≠ Nk (fewer keys than a tile, more keys than queries)"
BF16 = "bfloat16 输入 · bfloat16 inputs"
LINEAR = "不创建 N×N 中间张量 · no N×N intermediate"
SQUARE = "方形因果 · square, causal"
CAUSAL_UNEQUAL = "Nq ≠ Nk 的因果 · causal with Nq ≠ Nk"
FORWARD = "apply 的输出 O · the output O of apply"
CONTRACT = "恰好保存 Q、K、V、O 和 float32 的 L · saves exactly Q, K, V, O and a float32 L"
GRADIENTS = "经 autograd 的梯度 · gradients through autograd"
PEAK = "N≈4000 时的峰值显存低于 N²/4 个 float32 · peak GPU memory below N²/4 floats at N≈4000"


def qkv(j: Judgement, batch: int, n_q: int, n_k: int, d: int, dtype=torch.float32):
    return (
        j.randn(batch, n_q, d, dtype=dtype),
        j.randn(batch, n_k, d, dtype=dtype),
        j.randn(batch, n_k, d, dtype=dtype),
    )


def label(name: str, batch: int, n_q: int, n_k: int, d: int, dtype, is_causal: bool) -> str:
    return f"{name}(B={batch}, Nq={n_q}, Nk={n_k}, d={d}, {str(dtype).removeprefix('torch.')}, is_causal={is_causal})"


def check_largest(answer, q, k, what: str) -> None:
    """The largest tensor the child saw created must stay below a quarter of the Nq×Nk scores."""
    largest = answer.largest
    grading.assert_small_intermediate(largest.get("numel", 0), tuple(largest.get("shape", ())), q, k, what)


@UNIT.cell("test_score_tile", {NO_MASK: 1, MASK: 1}, selfcheck=NO_MASK)
def score_tile(j: Judgement) -> None:
    cases = [(NO_MASK, torch.float32, False, j.rng.randrange(60), j.rng.randrange(60))]
    cases.append((NO_MASK, torch.bfloat16, False, j.rng.randrange(60), j.rng.randrange(60)))
    for dtype in (torch.float32, torch.bfloat16):
        start, shift = j.rng.randrange(60), j.rng.randrange(1, 16)
        cases += [(MASK, dtype, True, start, start), (MASK, dtype, True, start + shift, start)]
        cases.append((MASK, dtype, True, j.rng.randrange(60), j.rng.randrange(60)))
    for prop, dtype, is_causal, q0, k0 in cases:
        batch, bq, bk, d = j.rng.randint(1, 3), j.odd(17, 40), j.odd(17, 40), j.rng.choice([16, 32])
        q, k, _ = qkv(j, batch, bq, bk, d, dtype)
        scale = 1 / math.sqrt(d)
        what = f"score_tile(q0={q0}, k0={k0}, is_causal={is_causal}, {str(dtype).removeprefix('torch.')})"
        with j.case(prop, what):
            (s,) = j.tensors(j.call("score_tile", q, k, q0, k0, scale, is_causal).result, 1, what)
            j.expect(
                s.dtype == torch.float32,
                f"{what} 应返回 float32，得到 {s.dtype}",
                f"{what} should return float32, got {s.dtype}",
            )
            rows = torch.arange(q0, q0 + bq)[:, None]
            cols = torch.arange(k0, k0 + bk)[None, :]
            masked = (cols > rows) if is_causal else torch.zeros(bq, bk, dtype=torch.bool)
            j.expect(
                tuple(s.shape) == (batch, bq, bk),
                f"{what} 形状错误：{tuple(s.shape)}",
                f"{what} has the wrong shape {tuple(s.shape)}",
            )
            j.expect(
                torch.equal(torch.isneginf(s), masked.expand_as(s)),
                f"{what} 的掩码位置错误：应恰好在全局位置 j > i 处为 -inf",
                f"{what} masks the wrong entries: -inf exactly where global key position j > query position i",
            )
            expected = scale * q.double() @ k.double().transpose(-2, -1)
            j.close(s.masked_fill(masked, 0), expected.masked_fill(masked, 0), what, atol=1e-5, rtol=1e-5)


def check_forward(j: Judgement, prop: str, batch, n_q, n_k, d, dtype, is_causal, linear=False) -> None:
    q, k, v = qkv(j, batch, n_q, n_k, d, dtype)
    what = label("flash_forward", batch, n_q, n_k, d, dtype, is_causal)
    with j.case(prop, what):
        answer = j.call("flash_forward", q, k, v, is_causal)
        out, lse = j.tensors(answer.result, 2, what)
        ref_out, ref_lse = grading.reference_attention(q, k, v, is_causal=is_causal)
        j.expect(
            out.dtype == dtype,
            f"{what}: O 应为 {dtype}，得到 {out.dtype}",
            f"{what}: O should be {dtype}, got {out.dtype}",
        )
        j.expect(
            lse.dtype == torch.float32,
            f"{what}: L 应为 float32，得到 {lse.dtype}",
            f"{what}: L should be float32, got {lse.dtype}",
        )
        j.close(out, ref_out, f"{what}: O", **TOLERANCE[dtype]["out"])
        j.close(lse, ref_lse, f"{what}: L", **L_TOLERANCE)
        if linear:
            check_largest(answer, q, k, what)


def check_backward(j: Judgement, prop: str, batch, n_q, n_k, d, dtype, is_causal, linear=False) -> None:
    q, k, v = qkv(j, batch, n_q, n_k, d, dtype)
    d_out = j.randn(batch, n_q, d, dtype=dtype)
    what = label("flash_backward", batch, n_q, n_k, d, dtype, is_causal)
    with j.case(prop, what):
        ref_out, ref_lse = grading.reference_attention(q, k, v, is_causal=is_causal)
        answer = j.call("flash_backward", q, k, v, ref_out.to(dtype), ref_lse.float(), d_out, is_causal)
        grads = j.tensors(answer.result, 3, what)
        expected = grading.reference_gradients(q, k, v, d_out, is_causal=is_causal)
        for name, grad, ref, inp in zip(("dQ", "dK", "dV"), grads, expected, (q, k, v), strict=True):
            j.expect(
                grad.dtype == inp.dtype,
                f"{what}: {name} 应为 {inp.dtype}，得到 {grad.dtype}",
                f"{what}: {name} should be {inp.dtype}, got {grad.dtype}",
            )
            j.close(grad, ref, f"{what}: {name}", **TOLERANCE[dtype]["grad"])
        if linear:
            check_largest(answer, q, k, what)


@UNIT.cell("test_forward", {ODD: 1, UNEQUAL: 1, BF16: 0.5, LINEAR: 0.5}, selfcheck=ODD)
def forward(j: Judgement) -> None:
    check_forward(j, ODD, 1, 70, 70, 16, torch.float32, False)  # the visible self-check's case
    check_forward(j, ODD, 2, j.odd(65, 200), j.odd(65, 200), 64, torch.float32, False)
    check_forward(j, UNEQUAL, 1, j.odd(17, 64), j.odd(129, 256), 32, torch.float32, False)
    check_forward(j, UNEQUAL, 3, j.odd(129, 256), j.odd(1, 16), 16, torch.float32, False)
    check_forward(j, BF16, 2, j.odd(65, 160), j.odd(65, 160), 64, torch.bfloat16, False)
    n = j.odd(261, 300)
    check_forward(j, LINEAR, 1, n, n, 16, torch.float32, False, linear=True)


@UNIT.cell("test_backward", {ODD: 1, UNEQUAL: 1, BF16: 0.5, LINEAR: 0.5}, selfcheck=ODD)
def backward(j: Judgement) -> None:
    check_backward(j, ODD, 1, 70, 70, 16, torch.float32, False)  # the visible self-check's case
    check_backward(j, ODD, 2, j.odd(65, 200), j.odd(65, 200), 64, torch.float32, False)
    check_backward(j, UNEQUAL, 1, j.odd(17, 64), j.odd(129, 256), 32, torch.float32, False)
    check_backward(j, UNEQUAL, 3, j.odd(129, 256), j.odd(1, 16), 16, torch.float32, False)
    check_backward(j, BF16, 2, j.odd(65, 160), j.odd(65, 160), 64, torch.bfloat16, False)
    n = j.odd(261, 300)
    check_backward(j, LINEAR, 1, n, n, 16, torch.float32, False, linear=True)


@UNIT.cell("test_causal", {SQUARE: 1, CAUSAL_UNEQUAL: 1, BF16: 0.5}, selfcheck=SQUARE)
def causal(j: Judgement) -> None:
    n = j.odd(65, 200)
    for prop, batch, n_q, n_k, d, dtype in [
        (SQUARE, 1, 70, 70, 16, torch.float32),  # the visible self-check's case
        (SQUARE, 2, n, n, 64, torch.float32),
        (CAUSAL_UNEQUAL, 1, j.odd(17, 64), j.odd(129, 256), 32, torch.float32),  # Nq < Nk
        (CAUSAL_UNEQUAL, 2, j.odd(129, 256), j.odd(17, 64), 16, torch.float32),  # Nq > Nk
        (BF16, 2, j.odd(65, 160), j.odd(65, 160), 32, torch.bfloat16),
    ]:
        check_forward(j, prop, batch, n_q, n_k, d, dtype, True)
        check_backward(j, prop, batch, n_q, n_k, d, dtype, True)


@UNIT.cell(
    "test_autograd_function",
    {FORWARD: 1, CONTRACT: 1, GRADIENTS: 1, LINEAR: 0.5, PEAK: 0.5},
    selfcheck=FORWARD,
    gpu_only=frozenset({PEAK}),
)
def autograd_function(j: Judgement) -> None:
    cases = [(1, 70, 70, 16, False), (2, j.odd(65, 160), j.odd(65, 160), 32, False)]
    cases += [(2, j.odd(65, 160), j.odd(17, 64), 64, True), (1, j.odd(17, 64), j.odd(65, 160), 16, True)]
    n = j.odd(261, 300)
    cases += [(1, n, n, 16, False), (1, n, n, 16, True)]
    for batch, n_q, n_k, d, is_causal in cases:
        q, k, v = qkv(j, batch, n_q, n_k, d)
        d_out = j.randn(batch, n_q, d)
        what = label("FlashAttentionPyTorch.apply", batch, n_q, n_k, d, torch.float32, is_causal)
        answer, failed = j.attempt(
            "FlashAttentionPyTorch.apply", q, k, v, is_causal, grad=d_out, requires_grad=(0, 1, 2)
        )
        props = [LINEAR] if n_q == n_k == n else [FORWARD, CONTRACT, GRADIENTS]
        for prop in props:
            with j.case(prop, what):
                if failed is not None:
                    raise failed
                (out,) = j.tensors(answer.result, 1, what)
                ref_out, ref_lse = grading.reference_attention(q, k, v, is_causal=is_causal)
                if prop == FORWARD:
                    j.close(out, ref_out, f"{what}: O", **TOLERANCE[torch.float32]["out"])
                elif prop == CONTRACT:
                    saved = answer.saved if isinstance(answer.saved, tuple) else ()
                    lse = grading.check_saved(saved, q, k, v, out)
                    j.close(lse, ref_lse, f"{what}: saved L", **L_TOLERANCE)
                elif prop == GRADIENTS:
                    expected = grading.reference_gradients(q, k, v, d_out, is_causal=is_causal)
                    grads = j.tensors(tuple(answer.grads or ()), 3, f"{what} backward")
                    for name, grad, ref in zip(("dQ", "dK", "dV"), grads, expected, strict=True):
                        j.close(grad, ref, f"{what}: {name}", **TOLERANCE[torch.float32]["grad"])
                else:
                    check_largest(answer, q, k, f"{what} forward+backward")
    if j.on_gpu:
        n = j.odd(4001, 4100)
        q, k, v = qkv(j, 1, n, n, 64)
        what = f"FlashAttentionPyTorch.apply (N={n}, d=64) forward+backward"
        with j.case(PEAK, what):
            answer = j.call(
                "FlashAttentionPyTorch.apply", q, k, v, False, grad=j.randn(1, n, 64), requires_grad=(0, 1, 2)
            )
            peak, bound = answer.peak_memory_bytes or 0, n * n * 4 // 4
            j.expect(
                peak < bound,
                f"{what} 的峰值显存 {peak / 2**20:.1f} MiB 超过上限 {bound / 2**20:.1f} MiB",
                f"{what}: peak memory {peak / 2**20:.1f} MiB is above {bound / 2**20:.1f} MiB",
            )
