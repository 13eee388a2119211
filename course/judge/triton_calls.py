"""What the judges of Triton units share: the child's entry point and the checks of one call (their preamble:
`utils.judged.student_module.triton_preamble`)."""

from __future__ import annotations

import statistics
from collections.abc import Callable

from course.judge.core import Judgement
from utils.measure import assert_not_far_too_slow, far_too_slow, round_ms, timing_lock

ENTRY = "utils.judged.triton_calls.run"
BANNED = [
    "utils.grading:reference_attention",
    "utils.grading:reference_gradients",
    "utils.attention.naive:naive_attention",
    "utils:naive_attention",
]


def answer(j: Judgement, target: str, plan: dict, *tensors, guard: bool = False) -> tuple:
    """The whole answer of `utils.judged.triton_calls.run` for the student's `target`: (output, gradients, forward
    launches, backward launches, forward operators, backward operators, saved tensors). `guard`: guarded
    allocations."""
    result = j.call(ENTRY, target, {**plan, "guard": guard}, *tensors).result
    j.expect(
        isinstance(result, tuple) and len(result) == 7,
        f"{target} 的调用没有返回可读的结果",
        f"the call of {target} returned nothing readable",
    )
    return result


def run(j: Judgement, target: str, plan: dict, *tensors, guard: bool = False):
    """(output, gradients, launches, operators) of the graded phase of `target` (the backward pass when the plan
    asks for one)."""
    output, grads, fwd_launches, bwd_launches, fwd_ops, bwd_ops, _ = answer(
        j, target, plan, *tensors, guard=guard
    )
    if plan.get("backward"):
        return output, grads, bwd_launches, bwd_ops
    return output, grads, fwd_launches, fwd_ops


def kernel_did_the_work(j: Judgement, what: str, launches, ops, forbidden: tuple[str, ...]) -> None:
    """At least one of the student's kernels ran, and none of the `forbidden` PyTorch operators did."""
    j.expect(
        isinstance(launches, int) and launches > 0,
        f"{what} 没有启动任何你自己写的 Triton 内核：计算必须由 @triton.jit 内核完成",
        f"{what} launched none of your Triton kernels: the work must be done by your @triton.jit kernels",
    )
    used = sorted(set(ops if isinstance(ops, tuple) else ()) & set(forbidden))
    j.expect(
        not used,
        f"{what} 调用了 PyTorch 运算 {', '.join('torch.' + u for u in used)}：这部分计算应在你的 Triton 内核里完成",
        f"{what} called the PyTorch op(s) {', '.join('torch.' + u for u in used)}: "
        "this work belongs in your Triton kernel",
    )


def same_dtype(j: Judgement, tensor, dtype, what: str) -> None:
    j.expect(
        tensor.dtype == dtype,
        f"{what} 的数据类型应为 {dtype}，得到 {tensor.dtype}",
        f"{what} should have dtype {dtype}, got {tensor.dtype}",
    )


# The speed cells time the student's code (in the child) and the peer (here) in alternating rounds, both in a
# round under the GPU timing lock, and compare them round by round: other gradings' work on the GPU (not timed,
# so not excluded by the lock) then slows both alike. Before and after whole timings disagreed by 20 % with 9
# gradings at once on the H100 and flipped unit 10's verdict on a regrade.
ROUNDS, REPEATS = 5, 10
# A warm call over the far-too-slow limit is tried again, under the lock, before the cell fails: on the H200, 48
# unit-08 gradings at 16 jobs failed two legitimate variants on one warm call of 240 ms against a limit of 61 ms,
# waiting behind other gradings' kernels (their timed rounds were never reached). A far too slow kernel stays so.
WARM_TRIES = 3


def speed_ratios(
    j: Judgement, target: str, peer: list[Callable[[], object]], threshold: float
) -> list[float]:
    """Per measurement, the median over ROUNDS of the student's throughput over the peer's. `peer`: the peer's
    zero-argument calls, run here; `target(repeats)`: the child's matching calls of the student's code, each
    timed as the median of `repeats` calls after an untimed one (`utils.measure.round_ms`). First one warm
    call each outside the lock: a far too slow one fails there (`utils.measure.SLOW_CALL_FACTOR`)."""

    def student_ms(repeats: int) -> tuple[float, ...]:
        times = j.call(target, repeats).result
        j.expect(
            isinstance(times, tuple)
            and len(times) == len(peer)
            and all(isinstance(t, float) and t > 0 for t in times),
            "性能测量没有返回结果",
            "the performance measurement returned nothing",
        )
        return times

    peer_warm, warm = round_ms(peer, repeats=1), student_ms(1)
    for _ in range(WARM_TRIES - 1):  # one call can wait behind another grading's long kernel: try again
        if not far_too_slow(warm, peer_warm, threshold):
            break
        with timing_lock():
            peer_warm, warm = round_ms(peer, repeats=1), student_ms(1)
    assert_not_far_too_slow(warm, peer_warm, threshold)
    per_round = []
    for _ in range(ROUNDS):
        with timing_lock():
            peer_ms, ms = round_ms(peer, repeats=REPEATS), student_ms(REPEATS)
        per_round.append([p / t for p, t in zip(peer_ms, ms, strict=True)])
    return [statistics.median(ratios) for ratios in zip(*per_round, strict=True)]
