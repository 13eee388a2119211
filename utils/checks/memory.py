"""Checks of unit 01 (the memory bottleneck), shared by the notebook's visible self-checks and the judge.

Each raises AssertionError with a bilingual message naming what failed:
  - `check_standard_attention`: (O, S, P) against float64, in the input dtype, S = -inf exactly where the
    causal mask hides a key (top-left aligned). S is rounded once to the input dtype (float32 ~1e-6
    relative, float16 2⁻¹¹, bfloat16 2⁻⁸); P and O inherit that rounding through the softmax.
  - `breakdown_total`: a memory model's {tensor: bytes} is a non-empty dict of non-negative numbers.
  - `expect_near`: a predicted peak within a relative tolerance of a measured one.
  - `check_devices`: a model's device="cuda" total is the CPU one plus one float32 N×N in training, equal in
    inference.
  - `check_longest`: N fits a memory budget by a model and N + 1 does not.
  - `calls_at_most`: a search calls the model at most so many times (no one-by-one scan).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterator

import torch

from utils.grading import assert_close
from utils.memory import mib
from utils.messages import bilingual

TOLERANCE = {
    torch.float32: dict(atol=1e-5, rtol=1e-4),
    torch.float16: dict(atol=5e-3, rtol=5e-3),
    torch.bfloat16: dict(atol=2e-2, rtol=2e-2),
}


def _fail(zh: str, en: str) -> None:
    raise AssertionError(bilingual(zh, en))


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def check_standard_attention(results, q, k, v, is_causal: bool, what: str) -> None:
    """`results` = (O, S, P) of standard attention on q, k, v, checked against float64."""
    if not (isinstance(results, tuple | list) and len(results) == 3):
        _fail(f"{what} 应返回 (O, S, P)", f"{what} should return (O, S, P)")
    for name, tensor in zip(("O", "S", "P"), results, strict=True):
        if not isinstance(tensor, torch.Tensor):
            _fail(f"{what}: {name} 应为张量", f"{what}: {name} should be a tensor")
        if tensor.dtype != q.dtype:
            _fail(
                f"{what}: {name} 应为 {dtype_name(q.dtype)}，得到 {dtype_name(tensor.dtype)}",
                f"{what}: {name} should be {dtype_name(q.dtype)}, got {dtype_name(tensor.dtype)}",
            )
    out, s, p = results
    n_q, n_k = q.shape[-2], k.shape[-2]
    later = torch.arange(n_k, device=q.device)[None, :] > torch.arange(n_q, device=q.device)[:, None]
    masked = later if is_causal else torch.zeros_like(later)
    expected_s = q.double() @ k.double().transpose(-2, -1) / math.sqrt(q.shape[-1])
    if tuple(s.shape) != tuple(expected_s.shape):
        _fail(
            f"{what}: S 的形状应为 {tuple(expected_s.shape)}，得到 {tuple(s.shape)}",
            f"{what}: S should have shape {tuple(expected_s.shape)}, got {tuple(s.shape)}",
        )
    if not torch.equal(torch.isneginf(s), masked.expand_as(s)):
        _fail(
            f"{what}: S 应恰好在键 j > 查询 i 处为 -inf（左上角对齐）",
            f"{what}: S must be -inf exactly where key j > query i (top-left alignment)",
        )
    tolerance = TOLERANCE[q.dtype]
    assert_close(s.masked_fill(masked, 0), expected_s.masked_fill(masked, 0), f"{what}: S", **tolerance)
    expected_p = torch.softmax(expected_s.masked_fill(masked, -math.inf), dim=-1)
    assert_close(p, expected_p, f"{what}: P", **tolerance)
    assert_close(out, expected_p @ v.double(), f"{what}: O", **tolerance)


def _is_bytes(value) -> bool:
    return (
        isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) and value >= 0
    )


def breakdown_total(breakdown, what: str) -> float:
    """The sum of a {tensor name: bytes} breakdown, after checking its form."""
    if not isinstance(breakdown, dict) or not breakdown:
        _fail(
            f"{what} 应返回非空的 {{张量名: 字节数}} 字典，得到 {type(breakdown).__name__}",
            f"{what} should return a non-empty {{tensor name: bytes}} dict, got {type(breakdown).__name__}",
        )
    bad = [name for name, value in breakdown.items() if not _is_bytes(value)]
    if bad:
        _fail(
            f"{what}：这些项不是非负的字节数：{bad}",
            f"{what}: these entries are not non-negative byte counts: {bad}",
        )
    return float(sum(breakdown.values()))


def expect_near(predicted: float, measured: float, tolerance: float, what: str) -> None:
    """`predicted` within `tolerance` (relative) of `measured`."""
    error = abs(predicted - measured) / measured
    if error > tolerance:
        _fail(
            f"{what}：模型 {mib(predicted)}，测得 {mib(measured)}（相差 {error:.1%}，允许 {tolerance:.0%}）",
            f"{what}: the model says {mib(predicted)}, measured {mib(measured)} "
            f"(off by {error:.1%}, allowed {tolerance:.0%})",
        )


def check_devices(total: Callable[[bool, str], float], batch: int, heads: int, n: int, what: str) -> None:
    """`total(training, device)` of a memory model: on "cuda" a training step also holds the softmax backward's
    float32 N×N scratch buffer (4·B·H·N² bytes); nothing else differs from "cpu"."""
    for training in (False, True):
        extra = total(training, "cuda") - total(training, "cpu")
        expected = 4 * batch * heads * n * n if training else 0
        if extra != expected:
            _fail(
                f"{what}，training={training}：device='cuda' 比 'cpu' 多 {extra:.0f} 字节，应多 {expected} 字节"
                "（训练时多一个 float32 的 N×N 临时缓冲区，推理时相同）",
                f"{what}, training={training}: device='cuda' adds {extra:.0f} bytes to 'cpu', it should add "
                f"{expected} (one float32 N×N scratch buffer in training, nothing in inference)",
            )


def check_longest(n, memory_bytes: float, total: Callable[[int], float], what: str) -> None:
    """`n` is a non-negative int with total(n) ≤ memory_bytes (when n ≥ 1) and total(n + 1) > memory_bytes."""
    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
        _fail(f"{what} 应返回非负整数，得到 {n!r}", f"{what} should return a non-negative int, got {n!r}")
    if n > 0 and (used := total(n)) > memory_bytes:
        _fail(
            f"{what} = {n}，但你的模型说 N = {n} 需要 {used:.0f} 字节，放不下",
            f"{what} = {n}, but your model says N = {n} needs {used:.0f} bytes: it does not fit",
        )
    if (over := total(n + 1)) <= memory_bytes:
        _fail(
            f"{what} = {n}，但你的模型说 N = {n + 1} 只需 {over:.0f} 字节，也放得下",
            f"{what} = {n}, but your model says N = {n + 1} needs only {over:.0f} bytes: it fits too",
        )


@contextlib.contextmanager
def calls_at_most(module, name: str, limit: int, what: str) -> Iterator[None]:
    """While active, `module.name` (a function the code under test looks up in its module) fails once it has
    been called more than `limit` times."""
    original, calls = getattr(module, name), 0

    def counted(*args, **kwargs):
        nonlocal calls
        calls += 1
        if calls > limit:
            _fail(
                f"{what} 调用你的 {name} 超过了 {limit} 次：不要一个一个地试 N（先倍增再二分，或解二次方程再修正）",
                f"{what} called your {name} more than {limit} times: do not try one N after another (double, "
                "then bisect; or solve the quadratic and correct)",
            )
        return original(*args, **kwargs)

    setattr(module, name, counted)
    try:
        yield
    finally:
        setattr(module, name, original)
