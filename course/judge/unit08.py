"""Unit 08 (FlashAttention in Triton): the hidden cases, tolerances and properties of each graded cell.

The graded steps: the forward (`FlashAttentionTriton.apply`), dV and dK (`launch_dkdv`), dQ (`launch_dq` and the
whole backward through autograd), memory, and speed (GPU only). The backward cells call the launchers directly
with L and Δ computed here in float64, so each step is judged on its own.

Numeric cases go through `utils.judged.triton_calls.run` in the child: it builds the strided views asked for
(transposed Q, K, V or dO; a stride-0 dO), runs the student's code and reports how often the student's
kernels were launched and which PyTorch operators ran. A case passes only when a kernel ran, no operator that
would do the kernel's work ran (matrix products, `exp`, softmax; Δ's `mul` and `sum` are allowed in backward),
and the outputs match the float64 reference within `utils.checks.flash_triton.TOL` / `GRAD_TOL` (TF32 allowed
for float32; gradients relative to their largest entry).

On a CPU (Triton's interpreter) the cases are small and bfloat16 is left out (the interpreter's bfloat16
`tl.dot` is wrong); on a GPU they add bfloat16, every head dimension, N up to 16384, and the memory cell's
capability case: a causal forward+backward at N = 262144, where one fp16 N×N score matrix takes 128 GiB and an
implementation that builds the scores holds several (P, dP, dS) at once: more than one GPU has.
"""

from __future__ import annotations

import math

import torch

from course.judge import triton_calls
from course.judge.core import Judgement, Unit
from course.judge.services import WATCH_SWITCHES
from course.judge.triton_calls import kernel_did_the_work, run, same_dtype
from utils import grading
from utils.checks import flash_triton as checks
from utils.checks.launches import ATTENTION_OPS
from utils.judged.student_module import LAYOUTS

UNIT = Unit(
    LAYOUTS["flash_attention_triton.ipynb"],
    banned=[
        *triton_calls.BANNED,
        "utils.checks.flash_triton:lse_and_delta",
        "utils.checks.flash_triton:reference_attention",
        "utils.checks.flash_triton:reference_gradients",
    ],
    suspicious={"numpy": "NumPy (work outside PyTorch and the kernels is not seen)", **WATCH_SWITCHES},
    parallel_cells_on_gpu=3,
)
F32, F16, BF16 = torch.float32, torch.float16, torch.bfloat16

ODD = "float32，N 不是分块的整数倍，多个批 · float32, N not a multiple of the tile, several batches"
CAUSAL = "因果掩码，Nq < Nk 与 Nq > Nk · causal mask, Nq < Nk and Nq > Nk"
DTYPES = "float16（GPU 上加 bfloat16），各种 d · float16 (on a GPU also bfloat16), every d"
STRIDED = "不连续的 Q、K、V（转置视图）· non-contiguous Q, K, V (transposed views)"
STRIDED_DO = "不连续与步长为 0 的 dO · non-contiguous and stride-0 dO"
CONTRACT = "恰好保存 Q、K、V、O 和 float32 的 L · saves exactly Q, K, V, O and a float32 L"
VALIDATION = "错误输入引发 ValueError · bad inputs raise ValueError"
AUTOGRAD = "经 autograd 的三个梯度（out.sum()，步长为 0 的 dO）· all three gradients through autograd (out.sum(), a stride-0 dO)"
LINEAR = "前向+反向不创建 N×N 中间张量 · no N×N intermediate in forward+backward"
PEAK = "N = 16384 时额外峰值显存低于 N²/8 个 fp16 字节 · extra peak memory below N²/8 fp16 bytes at N = 16384"
CAPABILITY = (
    "N = 262144 的因果前向+反向能运行且正确 · a causal forward+backward at N = 262144 runs and is right"
)
SPEED = "前向、前向+反向都达到 SDPA 吞吐量的 0.15 · forward and forward+backward each reach 0.15 of SDPA's throughput"

HOPPER_HINT = (
    "\n提示：dV 正确而 dK 错误，且在 Hopper（sm90）上：这很可能是 Triton 对 tl.dot(tl.trans(ds), q) 的已知编译错误，"
    "见本单元末尾的「排错」（改用转置的分数 Sᵀ = K Qᵀ）。"
    "\nHint: dV is right and dK is wrong on Hopper (sm90): most likely Triton's known miscompile of "
    "tl.dot(tl.trans(ds), q); see Troubleshooting at the end of the unit (compute the transposed scores Sᵀ = K Qᵀ)."
)


def half_precision(j: Judgement) -> list[tuple]:
    """(dtype, d) of the half-precision cases: on a GPU bfloat16 too and every head dimension (each a kernel
    compilation, which dominates the judge's time there); in the interpreter float16 only (its bfloat16
    `tl.dot` is wrong)."""
    if j.on_gpu:
        return [(F16, 16), (BF16, 32), (F16, 64), (BF16, 128)]
    return [(F16, 16), (F16, 64)]


def sent_and_seen(j: Judgement, shape: tuple[int, ...], dtype, layout) -> tuple[torch.Tensor, torch.Tensor]:
    """(what to send, what the student's code sees) for a random tensor of logical `shape`: "t" sends the
    transposed data (the child transposes it back as a view); "stride0" sends one value per row, broadcast."""
    if layout == "t":
        sent = j.randn(*shape[:-2], shape[-1], shape[-2], dtype=dtype)
        return sent, sent.transpose(-2, -1)
    if layout == "stride0":
        sent = j.randn(*shape[:-1], 1, dtype=dtype)
        return sent, sent.expand(*shape)
    sent = j.randn(*shape, dtype=dtype)
    return sent, sent


def view_of(layout, shape):
    return ["expand", list(shape)] if layout == "stride0" else layout


def kernels_did_the_work(j: Judgement, what: str, launches, ops) -> None:
    kernel_did_the_work(j, what, launches, ops, ATTENTION_OPS)


def forward_case(j: Judgement, prop: str, b, n_q, n_k, d, dtype, is_causal, layout=None) -> None:
    sent, seen = zip(*(sent_and_seen(j, (b, n, d), dtype, layout) for n in (n_q, n_k, n_k)), strict=True)
    what = "FlashAttentionTriton.apply " + checks.describe(b, n_q, n_k, d, dtype, is_causal, layout)
    with j.case(prop, what):
        plan = {"views": [layout] * 3}
        out, _, launches, ops = run(j, "FlashAttentionTriton.apply", plan, *sent, is_causal)
        (out,) = j.tensors(out, 1, what)
        kernels_did_the_work(j, what, launches, ops)
        same_dtype(j, out, dtype, f"{what}: O")
        expected, _ = grading.reference_attention(*seen, is_causal=is_causal)
        j.close(out, expected, f"{what}: O", atol=checks.TOL[dtype], rtol=checks.TOL[dtype])


def contract_case(j: Judgement, b, n_q, n_k, d, dtype, is_causal) -> None:
    q, k, v = (j.randn(b, n, d, dtype=dtype) for n in (n_q, n_k, n_k))
    what = "FlashAttentionTriton.apply " + checks.describe(b, n_q, n_k, d, dtype, is_causal)
    with j.case(CONTRACT, what):
        plan = {"grad_of": [0, 1, 2], "saved": True}
        answer = triton_calls.answer(j, "FlashAttentionTriton.apply", plan, q, k, v, is_causal)
        (out,) = j.tensors(answer[0], 1, what)
        _, ref_lse = grading.reference_attention(q, k, v, is_causal=is_causal)
        lse = grading.check_saved(answer[6] if isinstance(answer[6], tuple) else (), q, k, v, out)
        j.close(lse, ref_lse, f"{what}: saved L", atol=checks.TOL[dtype], rtol=checks.TOL[dtype])


def validation_cases(j: Judgement) -> None:
    for label, inputs in checks.BAD_INPUTS.items():
        what = f"FlashAttentionTriton.apply ({label})"
        with j.case(VALIDATION, what):
            try:
                j.call(
                    "FlashAttentionTriton.apply",
                    *(j.randn(*shape, dtype=dtype) for shape, dtype in inputs),
                    False,
                )
            except AssertionError as failure:
                j.expect(
                    str(failure).startswith("ValueError"),
                    f"{what} 应引发 ValueError，得到：{str(failure)[:200]}",
                    f"{what} should raise ValueError, got: {str(failure)[:200]}",
                )
            else:
                j.expect(
                    False,
                    f"{what} 应引发 ValueError，却正常返回",
                    f"{what} should raise ValueError but returned",
                )


def shapes(j: Judgement) -> dict[str, list[tuple]]:
    """(B, Nq, Nk) per property: odd sizes over several tiles; causal with fewer and with more keys."""
    big = [(1, j.odd(1025, 2100), j.odd(1025, 2100)), (1, 4099, 4099)] if j.on_gpu else []
    return {
        ODD: [(1, 70, 70), (2, j.odd(65, 200), j.odd(65, 200)), *big],
        CAUSAL: [(1, j.odd(17, 64), j.odd(129, 256)), (2, j.odd(129, 256), j.odd(17, 64))],
    }


@UNIT.cell(
    "test_forward",
    {ODD: 1, CAUSAL: 1, DTYPES: 0.5, STRIDED: 0.5, CONTRACT: 0.5, VALIDATION: 0.5},
    selfcheck=ODD,
)
def forward(j: Judgement) -> None:
    for b, n_q, n_k in shapes(j)[ODD]:
        forward_case(j, ODD, b, n_q, n_k, j.rng.choice([16, 32, 64]), F32, False)
    for b, n_q, n_k in shapes(j)[CAUSAL]:
        forward_case(j, CAUSAL, b, n_q, n_k, j.rng.choice([16, 32]), F32, True)
    for dtype, d in half_precision(j):
        forward_case(j, DTYPES, 2, j.odd(65, 200), j.odd(65, 200), d, dtype, j.rng.random() < 0.5)
    forward_case(j, STRIDED, 1, j.odd(33, 130), j.odd(33, 130), 32, F32, False, "t")
    forward_case(j, STRIDED, 2, j.odd(33, 130), j.odd(33, 130), 16, F16, True, "t")
    contract_case(j, 2, j.odd(33, 100), j.odd(33, 100), 16, F32, False)
    contract_case(j, 1, j.odd(33, 100), j.odd(33, 100), 32, F16, True)  # L is float32 for half inputs too
    validation_cases(j)
    if j.on_gpu:
        forward_case(j, DTYPES, 1, 16384, 16384, 128, BF16, True)


def gradient_case(
    j: Judgement, prop: str, gradient: str, b, n_q, n_k, d, dtype, is_causal, layout=None
) -> None:
    """One gradient ("dq", "dk", "dv") from `launch_dq` / `launch_dkdv`, given L and Δ from float64."""
    q, k, v = (j.randn(b, n, d, dtype=dtype) for n in (n_q, n_k, n_k))
    sent_do, grad_out = sent_and_seen(j, (b, n_q, d), dtype, layout)
    lse, delta = checks.lse_and_delta(q, k, v, grad_out, is_causal)
    target = "launch_dq" if gradient == "dq" else "launch_dkdv"
    what = f"{target} {gradient[1:].upper()} " + checks.describe(b, n_q, n_k, d, dtype, is_causal, layout)
    with j.case(prop, what):
        plan = {"views": [None, None, None, view_of(layout, (b, n_q, d)), None, None]}
        result, _, launches, ops = run(j, target, plan, q, k, v, sent_do, lse, delta, is_causal)
        kernels_did_the_work(j, what, launches, ops)
        expected = grading.reference_gradients(q, k, v, grad_out, is_causal)
        if gradient == "dq":
            (grad,) = j.tensors(result, 1, what)
            checks.check_gradient(grad, expected[0], dtype, what)
            return
        dk, dv = j.tensors(result, 2, what)
        if gradient == "dv":
            checks.check_gradient(dv, expected[2], dtype, what)
            return
        try:
            checks.check_gradient(dk, expected[1], dtype, what)
        except AssertionError as failure:
            raise AssertionError(str(failure) + hopper_hint(dv, expected[2], dtype)) from None


def hopper_hint(dv, ref_dv, dtype) -> str:
    """The Troubleshooting pointer, when dV is right (dK being wrong) on an sm90 GPU in half precision."""
    if dtype == F32 or not torch.cuda.is_available() or torch.cuda.get_device_capability()[0] != 9:
        return ""
    try:
        checks.check_gradient(dv, ref_dv, dtype, "dV")
    except AssertionError:
        return ""
    return HOPPER_HINT


def gradient_cell(j: Judgement, gradient: str) -> None:
    for b, n_q, n_k in shapes(j)[ODD]:
        gradient_case(j, ODD, gradient, b, n_q, n_k, j.rng.choice([16, 32, 64]), F32, False)
    for b, n_q, n_k in shapes(j)[CAUSAL]:
        gradient_case(j, CAUSAL, gradient, b, n_q, n_k, j.rng.choice([16, 32]), F32, True)
    for dtype, d in half_precision(j):
        gradient_case(j, DTYPES, gradient, 2, j.odd(65, 200), j.odd(65, 200), d, dtype, j.rng.random() < 0.5)
    gradient_case(j, STRIDED_DO, gradient, 1, j.odd(33, 130), j.odd(33, 130), 32, F32, True, "t")
    gradient_case(j, STRIDED_DO, gradient, 2, j.odd(33, 130), j.odd(33, 130), 16, F16, False, "stride0")
    if j.on_gpu:
        gradient_case(j, DTYPES, gradient, 1, 16384, 16384, 64, F16, True)


GRADIENT_PROPERTIES = {ODD: 1, CAUSAL: 0.5, DTYPES: 0.5, STRIDED_DO: 0.5}


@UNIT.cell("test_dv", GRADIENT_PROPERTIES, selfcheck=ODD)
def dv(j: Judgement) -> None:
    gradient_cell(j, "dv")


@UNIT.cell("test_dk", GRADIENT_PROPERTIES, selfcheck=ODD, after="test_dv")  # both launch_dkdv
def dk(j: Judgement) -> None:
    gradient_cell(j, "dk")


def autograd_case(j: Judgement, b, n_q, n_k, d, dtype, is_causal) -> None:
    q, k, v = (j.randn(b, n, d, dtype=dtype) for n in (n_q, n_k, n_k))
    what = "FlashAttentionTriton.apply(...).sum().backward() " + checks.describe(
        b, n_q, n_k, d, dtype, is_causal
    )
    with j.case(AUTOGRAD, what):
        plan = {"backward": "sum", "grad_of": [0, 1, 2]}
        _, grads, launches, ops = run(j, "FlashAttentionTriton.apply", plan, q, k, v, is_causal)
        kernels_did_the_work(j, what, launches, ops)
        grads = j.tensors(tuple(grads or ()), 3, what)
        expected = grading.reference_gradients(q, k, v, torch.ones(b, n_q, d, dtype=torch.float64), is_causal)
        for label, grad, ref in zip(("dQ", "dK", "dV"), grads, expected, strict=True):
            checks.check_gradient(grad, ref, dtype, f"{what}: {label}")


def wide_key_tail(j: Judgement) -> int:
    """Nk = 16·m + 1 in {97, 113, 129}: a tile of any power of two from 16 keys up leaves at least 15 padded keys in
    its last tile, over a ninth of the keys, so a forward that lets them into the softmax is off by several per cent
    on every seed (with any odd Nk, a one-key tail hid it within float16's tolerance); and 64-key tiles put 33 keys
    or more in a second tile, where a forward that forgets to rescale goes wrong on most query rows (Nk = 65 left it
    one key)."""
    return 16 * j.rng.randrange(6, 9) + 1


@UNIT.cell("test_dq", {**GRADIENT_PROPERTIES, AUTOGRAD: 1}, selfcheck=ODD)
def dq(j: Judgement) -> None:
    gradient_cell(j, "dq")
    autograd_case(j, 2, j.odd(65, 200), j.odd(17, 64), 32, F32, True)
    autograd_case(j, 1, j.odd(17, 64), wide_key_tail(j), 16, F16, False)


def forward_backward(j: Judgement, n: int, d: int, dtype, is_causal: bool):
    """Q, K, V, dO and the child's answer of a forward+backward through autograd."""
    q, k, v, grad_out = (j.randn(1, n, d, dtype=dtype) for _ in range(4))
    answer = j.call("FlashAttentionTriton.apply", q, k, v, is_causal, grad=grad_out, requires_grad=(0, 1, 2))
    return q, k, v, grad_out, answer


def check_long_sequence(j: Judgement, q, k, v, grad_out, answer, what: str) -> None:
    """O on a few random rows, and all three gradients where they depend only on the last `tail` queries:
    with a causal mask, key j is seen by queries i ≥ j only, so dK and dV of the last keys, and dQ of the
    last queries, need just those rows of P (a few × N scores, not N × N)."""
    (out,) = j.tensors(answer.result, 1, what)
    grads = j.tensors(tuple(answer.grads or ()), 3, f"{what} backward")
    n, d = q.shape[-2:]
    tail = 8
    rows = sorted({*j.rng.sample(range(n - tail), 8), *range(n - tail, n)})
    q64, k64, v64, do64 = (t[0].double() for t in (q, k, v, grad_out))
    scores = (q64[rows] @ k64.T) / math.sqrt(d)
    scores = scores.masked_fill(torch.arange(n)[None, :] > torch.tensor(rows)[:, None], -math.inf)
    p = torch.softmax(scores, dim=-1)
    ref_out = p @ v64
    j.close(out[0, rows], ref_out, f"{what}: O", atol=checks.TOL[q.dtype], rtol=checks.TOL[q.dtype])
    last = slice(len(rows) - tail, None)  # the last `tail` queries, and the keys only they see
    p_t, do_t, o_t = p[last], do64[n - tail :], ref_out[last]
    ds = p_t * (do_t @ v64.T - (do_t * o_t).sum(-1, keepdim=True))
    expected = {
        "dQ": (ds @ k64 / math.sqrt(d), grads[0][0, n - tail :]),
        "dK": (ds[:, n - tail :].T @ q64[n - tail :] / math.sqrt(d), grads[1][0, n - tail :]),
        "dV": (p_t[:, n - tail :].T @ do_t, grads[2][0, n - tail :]),
    }
    for label, (ref, grad) in expected.items():
        checks.check_gradient(grad, ref, q.dtype, f"{what}: {label} (last {tail} rows)")


@UNIT.cell(
    "test_memory",
    {LINEAR: 1, PEAK: 1, CAPABILITY: 1},
    selfcheck=LINEAR,
    gpu_only=frozenset({PEAK, CAPABILITY}),
    timeout=600,
)
def memory(j: Judgement) -> None:
    n = j.odd(4001, 4200) if j.on_gpu else j.odd(261, 320)
    for is_causal in (False, True):
        what = f"FlashAttentionTriton.apply (N={n}, d=16, is_causal={is_causal}) forward+backward"
        with j.case(LINEAR, what):
            q, k, _, _, answer = forward_backward(j, n, 16, F32, is_causal)
            largest = answer.largest
            grading.assert_small_intermediate(
                largest.get("numel", 0), tuple(largest.get("shape", ())), q, k, what
            )
    if not j.on_gpu:
        return
    what = "FlashAttentionTriton.apply (N=16384, d=64, float16, causal) forward+backward"
    with j.case(PEAK, what):
        *_, answer = forward_backward(j, 16384, 64, F16, True)
        checks.check_peak(
            int(answer.peak_memory_bytes or 0), 16384, what
        )  # the line it returns is not needed
    n = 2**18
    what = f"FlashAttentionTriton.apply (N={n}, d=64, float16, causal) forward+backward"
    with j.case(CAPABILITY, what):
        check_long_sequence(j, *forward_backward(j, n, 64, F16, True), what)


@UNIT.cell(
    "test_performance", {SPEED: 1}, selfcheck=SPEED, gpu_only=frozenset({SPEED}), timeout=600, timed=True
)
def performance(j: Judgement) -> None:
    """The student's kernels are timed in the child (`triton_calls.speed_ratios`); SDPA, the peer, is timed
    here, where the student's code cannot slow it down."""
    if not j.on_gpu:
        return
    with j.case(SPEED, "B·H = 16, N = 4096, d = 64, float16"):
        threshold = checks.PERF_FRACTION_OF_SDPA
        sdpa = list(checks.perf_calls(checks.sdpa).values())
        ratios = triton_calls.speed_ratios(j, "utils.checks.flash_triton.judged_performance", sdpa, threshold)
        j.expect(
            min(ratios) >= threshold,
            f"前向为 SDPA 吞吐量的 {ratios[0]:.2f} 倍，前向+反向为 {ratios[1]:.2f} 倍，阈值 {threshold} 倍",
            f"forward at {ratios[0]:.2f}× SDPA's throughput, forward+backward at {ratios[1]:.2f}×; "
            f"threshold {threshold}×",
        )
