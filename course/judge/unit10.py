"""Unit 10 (the Hopper track): the hidden cases of the graded forward with tensor descriptors and a persistent grid.

One exercise, `hopper_attention(q, k, v, is_causal=False)` (Q (B, Nq, d), K and V (B, Nk, d), d ∈ {64, 128}),
judged on five properties plus a GPU-only speed cell:
- correctness without a mask, at N a multiple of every tile height (64 · k);
- the causal mask (top-left) with Nq < Nk and Nq > Nk;
- tails: odd N in both sequences, several batches (the descriptor reads zeros there; the key tail must be masked);
- rows whose scores are all far below 0 (`utils.checks.hopper.far_below_zero`: q = 4 against keys shifted by −4),
  where a running maximum started at 0 instead of −∞ underflows to ℓ = 0 and O = NaN;
- the persistent grid: exactly one launch of the student's kernel, Q, K, V and O passed as `TensorDescriptor`s,
  and at most `utils.hopper.num_sms()` programs where a one-program-per-tile grid would have more (the child
  reports the resolved grid of every launch, `utils.hopper.record_launches`; the judge decides);
- speed (GPU only): the forward at `utils.checks.hopper.SPEED_SHAPE` reaches `speed_bar()` times SDPA flash's
  throughput (`SPEEDUP_OVER_UNIT08` of the unit-08 kernel's, converted for the grading GPU's class by
  `utils.speed_bars`: the label names no number, so a property keeps its name on every GPU), the peer timed
  here, in rounds alternating with the student's (`course.judge.triton_calls.speed_ratios`): the same peer, bar
  and measurement as the visible self-check, which a student runs without the course's kernels (issue 47).

Every numeric case goes through `utils.judged.triton_calls.run` (via `utils.checks.hopper.judged_run`): a kernel must
have run and no PyTorch operator may have done its work. In the interpreter the cases are small, float32 and
float16 (its bfloat16 `tl.dot` is wrong); on a GPU float16 and bfloat16 at N up to 4k.
"""

from __future__ import annotations

import torch

from course.judge import triton_calls
from course.judge.core import Judgement, Unit
from course.judge.triton_calls import kernel_did_the_work, same_dtype
from utils import grading
from utils.checks import hopper as checks
from utils.checks.launches import ATTENTION_OPS
from utils.judged.student_module import LAYOUTS

UNIT = Unit(
    LAYOUTS["hopper.ipynb"],
    banned=[*triton_calls.BANNED, "utils.checks.flash_triton:reference_attention"],
    suspicious={"numpy": "NumPy (work outside PyTorch and the kernels is not seen)"},
)
F32, F16, BF16 = torch.float32, torch.float16, torch.bfloat16

FULL = "非因果，N 是分块的整数倍 · non-causal, N a multiple of the tile"
CAUSAL = "因果掩码，Nq < Nk 与 Nq > Nk · causal mask, Nq < Nk and Nq > Nk"
TAILS = "奇数 N（两个序列都有尾部），多个批 · odd N (tails in both sequences), several batches"
FAR_BELOW = (
    "分数全都远低于 0 的行：运行最大值从 −∞ 开始 · rows whose scores are all far below 0: m starts at −∞"
)
PERSISTENT = (
    "一次启动、Q/K/V/O 经张量描述符、网格不超过 SM 数 · one launch, Q/K/V/O through tensor descriptors, "
    "a grid of at most #SMs"
)
SPEED = (
    f"前向吞吐量达到本 GPU 类别的阈值（单元 08 内核的 {checks.SPEEDUP_OVER_UNIT08} 倍，换算成 SDPA flash 的倍数）"
    f" · forward throughput at the GPU class's bar ({checks.SPEEDUP_OVER_UNIT08}× the unit-08 kernel's, in "
    "multiples of SDPA flash's)"
)


def dtypes(j: Judgement) -> tuple:
    return (F16, BF16) if j.on_gpu else (F32, F16)


def judged_call(j: Judgement, what: str, q, k, v, is_causal) -> tuple:
    """The child's answer for `hopper_attention(q, k, v, is_causal)`: `utils.judged.triton_calls.run`'s seven values,
    the launch records and the SM count (`utils.checks.hopper.judged_run`)."""
    answer = j.call("utils.checks.hopper.judged_run", "hopper_attention", {}, q, k, v, is_causal).result
    j.expect(
        isinstance(answer, tuple) and len(answer) == 9,
        f"{what} 的调用没有返回可读的结果",
        f"the call of {what} returned nothing readable",
    )
    return answer


def forward_case(j: Judgement, prop: str, b, n_q, n_k, d, dtype, is_causal, far_below: bool = False) -> None:
    q, k, v = (j.randn(b, n, d, dtype=dtype) for n in (n_q, n_k, n_k))
    if far_below:  # every third or fourth query row, from a random one of the first three
        q, k = checks.far_below_zero(q, k, slice(j.rng.randrange(3), None, j.rng.choice([3, 4])))
    what = "hopper_attention " + checks.describe(b, n_q, n_k, d, dtype, is_causal, far_below)
    with j.case(prop, what):
        out, _, launches, _, ops, *_ = judged_call(j, what, q, k, v, is_causal)
        (out,) = j.tensors(out, 1, what)
        kernel_did_the_work(j, what, launches, ops, ATTENTION_OPS)
        same_dtype(j, out, dtype, f"{what}: O")
        expected, _ = grading.reference_attention(q, k, v, is_causal=is_causal)
        j.close(out, expected, f"{what}: O", atol=checks.TOL[dtype], rtol=checks.TOL[dtype])


def persistent_case(j: Judgement, b, n, d, dtype, is_causal) -> None:
    q, k, v = (j.randn(b, n, d, dtype=dtype) for _ in range(3))
    what = "hopper_attention " + checks.describe(b, n, n, d, dtype, is_causal)
    with j.case(PERSISTENT, what):
        out, _, launches, _, ops, _, _, records, sms = judged_call(j, what, q, k, v, is_causal)
        kernel_did_the_work(j, what, launches, ops, ATTENTION_OPS)
        j.expect(
            b * -(-n // 128) > sms,
            f"{what}：用例的分块数不多于 SM 数（{sms}），无法判断",
            f"{what}: the case has no more tiles than SMs ({sms}), it cannot tell",
        )
        checks.check_launches(list(records), launches, what, persistent=True)  # AssertionError: case fails
        (out,) = j.tensors(out, 1, what)
        expected, _ = grading.reference_attention(q, k, v, is_causal=is_causal)
        j.close(out, expected, f"{what}: O", atol=checks.TOL[dtype], rtol=checks.TOL[dtype])


@UNIT.cell("test_hopper", {FULL: 1, CAUSAL: 1, TAILS: 1, FAR_BELOW: 1, PERSISTENT: 1}, selfcheck=TAILS)
def hopper_forward(j: Judgement) -> None:
    low, high = dtypes(j)
    big = 4096 if j.on_gpu else 128
    forward_case(j, FULL, 2, big, big, 64, low, False)
    forward_case(j, FULL, 1, 128, 256, 128, high, False)
    forward_case(j, CAUSAL, 2, j.odd(17, 60), j.odd(65, 130), 64, low, True)
    forward_case(j, CAUSAL, 1, j.odd(65, 130), j.odd(17, 60), 128, high, True)
    forward_case(j, TAILS, 3, j.odd(33, 100), j.odd(33, 100), 64, low, False)
    forward_case(j, TAILS, 2, j.odd(33, 100), j.odd(33, 100), 128, high, j.rng.random() < 0.5)
    forward_case(j, FAR_BELOW, 2, j.odd(33, 100), j.odd(33, 100), 64, low, False, far_below=True)
    forward_case(j, FAR_BELOW, 1, j.odd(17, 60), j.odd(65, 130), 128, high, True, far_below=True)
    if j.on_gpu:
        forward_case(j, TAILS, 1, j.odd(2049, 4200), j.odd(2049, 4200), 128, BF16, True)
        persistent_case(j, 16, j.odd(4097, 4200), 128, F16, False)
        persistent_case(j, 8, j.odd(4097, 4200), 64, BF16, True)
    else:
        persistent_case(j, checks.hopper.INTERPRETER_SMS + 2, j.odd(33, 60), 64, F32, False)
        persistent_case(j, checks.hopper.INTERPRETER_SMS + 1, j.odd(33, 60), 64, F16, True)


@UNIT.cell("test_hopper_speed", {SPEED: 1}, gpu_only=frozenset({SPEED}), timeout=600, timed=True)
def hopper_speed(j: Judgement) -> None:
    """The student's forward is timed in the child (`triton_calls.speed_ratios`); SDPA flash, the peer, is timed
    here, where the student's code cannot slow it down."""
    if not j.on_gpu:
        return
    b, n, d, _ = checks.SPEED_SHAPE
    with j.case(SPEED, f"B·H = {b}, N = {n}, d = {d}, float16, non-causal"):
        j.expect(checks.flash_available(), *checks.NO_FLASH)
        bar = checks.speed_bar()
        peer = [checks.speed_call(checks.sdpa_flash)]
        (ratio,) = triton_calls.speed_ratios(j, "utils.checks.hopper.judged_speed", peer, bar.bar)
        j.expect(ratio >= bar.bar, *checks.too_slow(ratio, bar))
