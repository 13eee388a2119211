"""Visible self-checks of unit 07 (Triton basics), run in a child process by `utils.checks.isolation.run_check`.

Each check runs one small case per property the judge grades (course/judge/unit07.py), so a solution that
passes here fails a hidden case only on the judge's random, larger sizes:
  - `weighted_sum_forward(x, weight) -> y`, y = Σ_c x[..., c]·weight[c], for x (..., C), weight (C,):
    odd sizes over several programs and column tiles; one row and C = 1; float16 on a 3-D x (y in
    float16); a transposed x;
  - `WeightedSum.apply(x, weight)`, whose backward calls `weighted_sum_backward(grad_y, x, weight)`: the
    same, the last one backpropagating y.sum(), whose gradient arrives as a stride-0 tensor;
  - `softmax_rows(x, block_c)`: scores around 100 over several column tiles; ordinary scores with a
    partial last tile (masked lanes must not count); one column; float16; a transposed x.
Inputs sit between NaN margins and outputs the student's code allocates start as `UNWRITTEN`, inside
guarded margins (`utils.checks.guarded`): a missing mask or store fails the same way on every run.
Tolerances are relative to the size of the result: a sum of C products of N(0, 1) numbers is about
√C in size, so the absolute tolerance grows with √C; fp16 results also carry fp16 rounding (2⁻¹¹).
"""

from __future__ import annotations

import contextlib

import torch

from utils.checks.guarded import GuardedAllocations, padded
from utils.checks.launches import MATMUL_OPS, count_launches, forbid_torch_ops, require_launches
from utils.grading import assert_close
from utils.messages import bilingual
from utils.runtime import device

TOL = {torch.float32: 1e-5, torch.float16: 2e-3}
LAYOUT = {None: "", "t": ", transposed view", "step2": ", every other column"}

# (leading dims, C, dtype, layout): 37 rows and C = 101 span three programs of 16 rows and two tiles of 64
# columns (the skeleton's tiles); then one row and one column; float16 on a 3-D x; a transposed x.
WS_CASES = [
    ((37,), 101, torch.float32, None),
    ((1,), 1, torch.float32, None),
    ((3, 5), 33, torch.float16, None),
    ((21,), 69, torch.float32, "t"),
]
# (rows, columns, block_c, dtype, layout, score offset): large scores over several tiles; ordinary scores
# whose last tile is partial (13 of 16 columns); one column; float16; a transposed x.
SM_CASES = [
    (4, 101, 32, torch.float32, None, 100.0),
    (3, 45, 16, torch.float32, None, 0.0),
    (5, 1, 16, torch.float32, None, 100.0),
    (3, 69, 16, torch.float16, None, 100.0),
    (9, 45, 16, torch.float32, "t", 100.0),
]
# The PyTorch operators that would do the kernel's work (the notebook: "no torch multiply or sum"; backward:
# "torch may only add up the partial sums"; softmax: "the exp, max and sum must happen in your kernel"); the
# judge forbids the same ones.
FORWARD_OPS = (*MATMUL_OPS, "mul", "sum")
BACKWARD_OPS = (*MATMUL_OPS, "mul")
SOFTMAX_OPS = (
    "exp",
    "exp2",
    "_softmax",
    "softmax",
    "_log_softmax",
    "log_softmax",
    "logsumexp",
    "amax",
    "max",
    "sum",
    "div",
)


def name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def random_input(shape, dtype, layout=None, scale=1.0, offset=0.0) -> torch.Tensor:
    """Random N(offset, scale²) data of logical `shape`, between NaN margins; "t": a transposed view."""
    stored = (*shape[:-2], shape[-1], shape[-2]) if layout == "t" else shape
    data = padded((torch.randn(*stored, device=device()) * scale + offset).to(dtype))
    return data.transpose(-2, -1) if layout == "t" else data


@contextlib.contextmanager
def student_call(module, forbidden, what):
    """Run the student's code: guarded allocations, forbidden torch ops; then require a launch, no stray store."""
    with GuardedAllocations() as guard, count_launches(module) as launches, forbid_torch_ops(forbidden, what):
        yield
    require_launches(launches, what)
    guard.check(what)


def same_dtype(result, dtype, what):
    if result.dtype != dtype:
        raise AssertionError(
            bilingual(
                f"{what} 的数据类型应为 {name(dtype)}，得到 {name(result.dtype)}",
                f"{what} should have dtype {name(dtype)}, got {name(result.dtype)}",
            )
        )


def report(n_cases: int) -> None:
    """Print the pass line (nothing returned: the notebook would echo it a second time)."""
    plural = "case" if n_cases == 1 else "cases"
    print(bilingual(f"自检通过：{n_cases} 个用例", f"self-check passed: {n_cases} {plural}"))


def weighted_sum_forward(module) -> None:
    """y = weighted_sum_forward(x, w) against float64, computed by the student's kernel."""
    for lead, c, dtype, layout in WS_CASES:
        what = f"weighted_sum_forward(x {(*lead, c)}{LAYOUT[layout]}, {name(dtype)})"
        x, weight = random_input((*lead, c), dtype, layout), random_input((c,), dtype)
        with student_call(module, FORWARD_OPS, what):
            y = module.weighted_sum_forward(x, weight)
        assert_close(
            y, x.double() @ weight.double(), what, atol=TOL[dtype] * 10 * c**0.5, rtol=TOL[dtype] * 5
        )
        same_dtype(y, dtype, what)
    report(len(WS_CASES))


def weighted_sum_backward(module) -> None:
    """Gradients of WeightedSum.apply(x, w) against float64, computed by the student's kernels; the
    transposed case backpropagates y.sum(), whose gradient reaches the backward as a stride-0 tensor."""
    for lead, c, dtype, layout in WS_CASES:
        by_sum = layout == "t"
        what = (
            f"WeightedSum.apply(x {(*lead, c)}{LAYOUT[layout]}, {name(dtype)}{', y.sum()' if by_sum else ''})"
        )
        x = random_input((*lead, c), dtype, layout).requires_grad_(True)
        weight = random_input((c,), dtype).requires_grad_(True)
        grad_y = torch.ones(lead, device=device(), dtype=dtype) if by_sum else random_input(lead, dtype)
        with GuardedAllocations() as guard:
            y = module.WeightedSum.apply(x, weight)
        guard.check(what)
        seed = y.sum() if by_sum else y
        with student_call(module, BACKWARD_OPS, what):
            seed.backward(None if by_sum else grad_y)
        g, x64, w64 = grad_y.double(), x.detach().double(), weight.detach().double()
        rows = g.numel()
        atol, rtol = TOL[dtype] * 10, TOL[dtype] * 5
        assert_close(x.grad, g[..., None] * w64, what + " grad_x", atol=atol, rtol=rtol)
        expected_w = (g[..., None] * x64).reshape(rows, c).sum(0)
        assert_close(weight.grad, expected_w, what + " grad_w", atol=atol * rows**0.5, rtol=rtol)
        same_dtype(x.grad, dtype, what + " grad_x")
        same_dtype(weight.grad, dtype, what + " grad_w")
    report(len(WS_CASES))


def softmax_rows(module) -> None:
    """softmax_rows(x, block_c) against float64: rows longer than one tile, large and ordinary scores."""
    for rows, cols, block_c, dtype, layout, offset in SM_CASES:
        what = f"softmax_rows(x ({rows}, {cols}){LAYOUT[layout]}, block_c={block_c}, {name(dtype)})"
        # Scores around 100 overflow exp() unless the row maximum is subtracted; ordinary scores show masked
        # lanes that load 0.0 instead of -inf (they add e^(0 - m) to the sum).
        x = random_input((rows, cols), dtype, layout, scale=5.0 if offset else 1.0, offset=offset)
        with student_call(module, SOFTMAX_OPS, what):
            y = module.softmax_rows(x, block_c)
        assert_close(y, torch.softmax(x.double(), dim=-1), what, atol=TOL[dtype] * 10, rtol=TOL[dtype] * 20)
        same_dtype(y, dtype, what)
    report(len(SM_CASES))


__all__ = ["softmax_rows", "weighted_sum_backward", "weighted_sum_forward"]
