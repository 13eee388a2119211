"""What the judges of Triton units share: the child's entry point and the checks of one call (their preamble:
`utils.judged.student_module.triton_preamble`)."""

from __future__ import annotations

from collections.abc import Callable

from course.judge.core import Judgement
from utils import measure
from utils.measure import round_ms

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


def speed_ratios(
    j: Judgement, target: str, peer: list[Callable[[], object]], threshold: float
) -> list[float]:
    """`utils.measure.speed_ratios` of the student's code against the peer: `peer`, the peer's zero-argument
    calls, run here; `target(repeats)`, the child's matching calls of the student's code, one round each."""

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

    return measure.speed_ratios(lambda repeats: round_ms(peer, repeats), student_ms, threshold)
