"""Unit 07 (Triton basics): the hidden cases, tolerances and properties of each graded cell.

Every call goes through `utils.judged.triton_calls.run` in the child: it builds the strided views asked for (a
transposed x, every other column, a stride-0 gradient), runs the student's function (and the backward
pass), and reports how often the student's own Triton kernels were launched and which PyTorch operators
ran. A case passes only when a kernel ran, none of the operators the notebook reserves for the kernel ran,
and the outputs (shape, dtype, values) match the judge's float64 reference.

Inputs sit between NaN margins and what the student's code allocates starts as a sentinel between guarded
margins (`plan["guard"]`, `utils.checks.guarded`), so a missing mask or store fails the same way every run.

Tolerances against float64: a sum of C products of N(0, 1) numbers is about √C in size, so the absolute
tolerance of y grows with √C (grad_w: with √rows); float32 results carry float32 rounding (2⁻²⁴ per
operation, summed in tiles), float16 results fp16 rounding (2⁻¹¹ relative). Softmax rows mostly use scores
around 100 (exp(100) overflows float32 unless the row maximum is subtracted); ordinary scores and scores
around −100 show masked lanes that load 0.0 instead of −inf.
"""

from __future__ import annotations

import torch

from course.judge import triton_calls
from course.judge.core import Judgement, Unit
from course.judge.triton_calls import kernel_did_the_work, same_dtype
from utils.checks.triton_basics import BACKWARD_OPS, FORWARD_OPS, LAYOUT, SOFTMAX_OPS, TOL, name
from utils.judged.student_module import LAYOUTS

UNIT = Unit(
    LAYOUTS["triton_basics.ipynb"],
    banned=triton_calls.BANNED,
)
ODD = (
    "float32：奇数行数与列数，多个程序、多个列分块 · "
    "float32: odd rows and columns, several programs and column tiles"
)
EDGES = "小尺寸：一行、C = 1（不足一个分块）· small sizes: a single row, C = 1 (less than one tile)"
HALF = "float16 输入（float32 累加，输出 float16）· float16 inputs (accumulated in float32, float16 result)"
STRIDED = "非连续的 x（转置视图、隔列取）· non-contiguous x (a transposed view, every other column)"
STRIDE0 = (
    "步长为 0 的 grad_y（y.sum() 的梯度）与非连续的 x · "
    "a stride-0 grad_y (the gradient of y.sum()) and a non-contiguous x"
)
LONG = (
    "float32，行比 block_c 长（多个列分块，分数约为 100）· "
    "float32, rows longer than block_c (several column tiles, scores around 100)"
)
TAIL = (
    "最后一个分块不满：普通分数与 −100 左右的分数（掩码外读 −∞）· "
    "a partial last tile: ordinary scores and scores around −100 (masked lanes load −inf)"
)
SHORT = "短行：1 列、少于 block_c 列 · short rows: one column, fewer columns than block_c"
HALF_SOFTMAX = "float16 输入与输出 · float16 inputs and output"
STRIDED_SOFTMAX = "非连续的 x（转置视图、隔列取）· non-contiguous x (a transposed view, every other column)"


def seen(sent: torch.Tensor, layout) -> torch.Tensor:
    """The view the student's code gets of the contiguous `sent` (`utils.judged.triton_calls.view`): None as is,
    "t" the last two dimensions swapped, "step2" every other element of the last dimension."""
    if layout == "t":
        return sent.transpose(-2, -1)
    if layout == "step2":
        return sent[..., ::2]
    return sent


def layout_data(j: Judgement, shape: tuple[int, ...], dtype, layout) -> tuple[torch.Tensor, torch.Tensor]:
    """(what to send, the tensor the student's code sees) for a random tensor of logical `shape` in `layout`."""
    sent_shape = {"t": (*shape[:-2], shape[-1], shape[-2]), "step2": (*shape[:-1], 2 * shape[-1])}
    sent = j.randn(*sent_shape.get(layout, shape), dtype=dtype)
    return sent, seen(sent, layout)


def run(j: Judgement, target: str, plan: dict, *tensors: torch.Tensor):
    """The student's `target` in the child, inside guarded allocations (`triton_calls.run`)."""
    return triton_calls.run(j, target, plan, *tensors, guard=True)


def forward_case(j: Judgement, prop: str, lead: tuple[int, ...], c: int, dtype, layout=None) -> None:
    sent, x = layout_data(j, (*lead, c), dtype, layout)
    weight = j.randn(c, dtype=dtype)
    what = f"weighted_sum_forward(x {(*lead, c)}{LAYOUT[layout]}, {name(dtype)})"
    with j.case(prop, what):
        plan = {"views": [layout, None]}
        y, _, launches, ops = run(j, "weighted_sum_forward", plan, sent, weight)
        (y,) = j.tensors(y, 1, what)
        kernel_did_the_work(j, what, launches, ops, FORWARD_OPS)
        expected = x.double() @ weight.double()
        j.close(y, expected, what, atol=TOL[dtype] * 10 * c**0.5, rtol=TOL[dtype] * 5)
        same_dtype(j, y, dtype, what)


@UNIT.cell("test_ws_forward", {ODD: 1, EDGES: 0.5, HALF: 0.5, STRIDED: 0.5}, selfcheck=ODD, timeout=240)
def ws_forward(j: Judgement) -> None:
    forward_case(j, ODD, (37,), 101, torch.float32)  # the visible self-check's case
    forward_case(j, ODD, (j.odd(17, 120),), j.odd(65, 260), torch.float32)
    forward_case(j, ODD, (3, j.odd(7, 20)), j.odd(129, 200), torch.float32)
    forward_case(j, EDGES, (1,), 1, torch.float32)  # the visible self-check's case
    forward_case(j, EDGES, (1,), j.odd(3, 40), torch.float32)
    forward_case(j, EDGES, (j.odd(3, 16),), 1, torch.float16)
    forward_case(j, HALF, (3, 5), 33, torch.float16)  # the visible self-check's case
    forward_case(j, HALF, (j.odd(17, 120),), j.odd(65, 260), torch.float16)
    forward_case(j, STRIDED, (21,), 69, torch.float32, "t")  # the visible self-check's case
    forward_case(j, STRIDED, (j.odd(17, 80),), j.odd(65, 200), torch.float32, "step2")
    forward_case(j, STRIDED, (j.odd(17, 80),), j.odd(65, 200), torch.float16, "t")
    if j.on_gpu:  # thousands of rows and programs, C over a thousand
        forward_case(j, ODD, (j.odd(2001, 4100),), j.odd(1025, 2100), torch.float32)
        forward_case(j, HALF, (j.odd(2001, 4100),), j.odd(1025, 2100), torch.float16)
        forward_case(j, STRIDED, (j.odd(1025, 2100),), j.odd(1025, 2100), torch.float32, "t")


def backward_case(
    j: Judgement, prop: str, lead: tuple[int, ...], c: int, dtype, layout=None, how: str = "grad"
) -> None:
    """Gradients of `WeightedSum.apply(x, weight)` for a random upstream gradient (`how="grad"`), for
    `y.sum()` (`how="sum"`, autograd hands on a stride-0 grad_y) or of a direct call
    `weighted_sum_backward(grad_y, x, weight)` with a stride-0 grad_y (`how="direct"`)."""
    sent, x = layout_data(j, (*lead, c), dtype, layout)
    weight = j.randn(c, dtype=dtype)
    if how == "direct":
        row = j.randn(*lead[:-1], 1, dtype=dtype)  # one value per leading row, broadcast along the last axis
        grad_y = row.expand(*lead)
        target = "weighted_sum_backward"
        plan, tensors = {"views": [["expand", list(lead)], layout, None]}, (row, sent, weight)
    else:
        grad_y = j.randn(*lead, dtype=dtype) if how == "grad" else torch.ones(lead, dtype=dtype)
        target = "WeightedSum.apply"
        plan = {"views": [layout, None], "backward": how, "grad_of": [0, 1]}
        tensors = (sent, weight, grad_y) if how == "grad" else (sent, weight)
    label = {"grad": "", "sum": ", y.sum()", "direct": ", stride-0 grad_y"}[how]
    what = f"{target}(x {(*lead, c)}{LAYOUT[layout]}, {name(dtype)}{label})"
    with j.case(prop, what):
        output, grads, launches, ops = run(j, target, plan, *tensors)
        if how == "direct":
            grads = output
        grad_x, grad_w = j.tensors(grads, 2, what)
        kernel_did_the_work(j, what, launches, ops, BACKWARD_OPS)
        g, x64, w64 = grad_y.double(), x.double(), weight.double()
        rows = g.numel()
        j.close(grad_x, g[..., None] * w64, f"{what} grad_x", atol=TOL[dtype] * 10, rtol=TOL[dtype] * 5)
        expected_w = (g[..., None] * x64).reshape(rows, c).sum(0)
        atol = TOL[dtype] * 10 * rows**0.5
        j.close(grad_w, expected_w, f"{what} grad_w", atol=atol, rtol=TOL[dtype] * 5)
        same_dtype(j, grad_x, dtype, f"{what} grad_x")
        same_dtype(j, grad_w, dtype, f"{what} grad_w")


@UNIT.cell("test_ws_backward", {ODD: 1, EDGES: 0.5, HALF: 0.5, STRIDE0: 0.5}, selfcheck=ODD, timeout=240)
def ws_backward(j: Judgement) -> None:
    backward_case(j, ODD, (37,), 101, torch.float32)  # the visible self-check's case
    backward_case(j, ODD, (j.odd(17, 120),), j.odd(65, 260), torch.float32)
    backward_case(j, ODD, (3, j.odd(7, 20)), j.odd(129, 200), torch.float32)
    backward_case(j, EDGES, (1,), 1, torch.float32)  # the visible self-check's case
    backward_case(j, EDGES, (1,), j.odd(3, 40), torch.float32)
    backward_case(j, EDGES, (j.odd(3, 16),), 1, torch.float16)
    backward_case(j, HALF, (3, 5), 33, torch.float16)  # the visible self-check's case
    backward_case(j, HALF, (j.odd(17, 120),), j.odd(65, 260), torch.float16)
    backward_case(j, STRIDE0, (21,), 69, torch.float32, "t", how="sum")  # the visible self-check's case
    backward_case(j, STRIDE0, (j.odd(17, 80),), j.odd(65, 200), torch.float32, how="sum")
    backward_case(j, STRIDE0, (3, j.odd(7, 20)), j.odd(65, 200), torch.float16, "t", how="sum")
    backward_case(j, STRIDE0, (j.odd(17, 80),), j.odd(65, 200), torch.float32, "step2", how="direct")
    if j.on_gpu:  # thousands of rows and programs, C over a thousand
        backward_case(j, ODD, (j.odd(2001, 4100),), j.odd(1025, 2100), torch.float32)
        backward_case(j, HALF, (j.odd(2001, 4100),), j.odd(1025, 2100), torch.float16)
        backward_case(j, STRIDE0, (j.odd(1025, 2100),), j.odd(1025, 2100), torch.float32, "t", how="sum")


def softmax_case(
    j: Judgement, prop: str, rows: int, cols: int, block_c: int, dtype, layout=None, offset: float = 100.0
) -> None:
    """Scores N(offset, 5²), or N(0, 1) for offset 0: around 100, exp overflows unless the row maximum is
    subtracted; ordinary or around −100, a masked lane that loads 0.0 adds e^(0 − m) or becomes the maximum."""
    sent, _ = layout_data(j, (rows, cols), torch.float32, layout)
    sent = (sent * (5 if offset else 1) + offset).to(dtype)
    x = seen(sent, layout)
    what = f"softmax_rows(x ({rows}, {cols}){LAYOUT[layout]}, block_c={block_c}, {name(dtype)})"
    with j.case(prop, what):
        y, _, launches, ops = run(j, "softmax_rows", {"views": [layout]}, sent, block_c)
        (y,) = j.tensors(y, 1, what)
        kernel_did_the_work(j, what, launches, ops, SOFTMAX_OPS)
        expected = torch.softmax(x.double(), dim=-1)
        j.close(y, expected, what, atol=TOL[dtype] * 10, rtol=TOL[dtype] * 20)
        same_dtype(j, y, dtype, what)


@UNIT.cell(
    "test_softmax_rows",
    {LONG: 1, TAIL: 0.5, SHORT: 0.5, HALF_SOFTMAX: 0.5, STRIDED_SOFTMAX: 0.5},
    selfcheck=LONG,
    timeout=240,
)
def softmax_rows(j: Judgement) -> None:
    softmax_case(j, LONG, 4, 101, 32, torch.float32)  # the visible self-check's case
    softmax_case(j, LONG, j.odd(3, 30), j.odd(129, 600), j.rng.choice([32, 64]), torch.float32)
    softmax_case(j, LONG, 2, j.odd(1025, 2100), 128, torch.float32)
    softmax_case(j, TAIL, 3, 45, 16, torch.float32, offset=0.0)  # the visible self-check's case
    softmax_case(j, TAIL, j.odd(3, 20), j.odd(65, 300), j.rng.choice([32, 64]), torch.float32, offset=0.0)
    softmax_case(j, TAIL, j.odd(3, 20), j.odd(17, 200), 16, torch.float32, offset=-100.0)
    softmax_case(j, TAIL, j.odd(3, 20), j.odd(65, 300), 64, torch.float16, offset=0.0)
    softmax_case(j, SHORT, 5, 1, 16, torch.float32)  # the visible self-check's case
    softmax_case(j, SHORT, 1, 1, 16, torch.float32)
    softmax_case(j, SHORT, j.odd(3, 20), j.odd(3, 16), 16, torch.float32)
    softmax_case(j, SHORT, j.odd(3, 20), j.odd(33, 64), 64, torch.float32)
    softmax_case(j, HALF_SOFTMAX, 3, 69, 16, torch.float16)  # the visible self-check's case
    softmax_case(j, HALF_SOFTMAX, j.odd(3, 30), j.odd(129, 600), 64, torch.float16)
    softmax_case(j, HALF_SOFTMAX, j.odd(3, 20), j.odd(3, 16), 16, torch.float16)
    softmax_case(j, STRIDED_SOFTMAX, 9, 45, 16, torch.float32, "t")  # the visible self-check's case
    softmax_case(j, STRIDED_SOFTMAX, j.odd(17, 40), j.odd(65, 130), 32, torch.float32, "t")
    softmax_case(j, STRIDED_SOFTMAX, j.odd(3, 20), j.odd(129, 400), 64, torch.float16, "step2")
    if j.on_gpu:  # rows of many thousand columns, hundreds of programs
        softmax_case(j, LONG, j.odd(129, 300), j.odd(8193, 20000), 1024, torch.float32)
        softmax_case(j, TAIL, j.odd(129, 300), j.odd(8193, 20000), 1024, torch.float32, offset=-100.0)
        softmax_case(j, HALF_SOFTMAX, j.odd(129, 300), j.odd(8193, 20000), 1024, torch.float16)
        softmax_case(j, STRIDED_SOFTMAX, j.odd(1025, 2100), j.odd(1025, 2100), 256, torch.float32, "t")
