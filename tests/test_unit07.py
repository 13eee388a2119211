"""Unit 07: the notebook runs top to bottom (every self-check passes once, nothing on stderr in test cells, no
repeated banner); the child's entry point reports views, gradients, launches and operators; the judge gives the
solution full marks and partial credit to a kernel that ignores the strides."""

import sys
import types

import pytest
import torch
import triton  # noqa: I001  (after utils: it chooses the interpreter first)
import triton.language as tl
from notebook_run import ROOT, execute, graded_cells, stderr_of, stdout_of

import utils
from course import notebooks, wrong
from course.judge import preprocessor, units
from utils.judged import triton_calls
from utils.runtime import CPU_BANNER

NOTEBOOK = ROOT / "source" / "07_triton_basics" / "triton_basics.ipynb"


def test_unit07_executes_cleanly(tmp_path):
    nb = execute(NOTEBOOK, tmp_path)
    tests = graded_cells(nb)
    assert set(tests) == {"test_ws_forward", "test_ws_backward", "test_softmax_rows"}
    for grade_id, cell in tests.items():
        assert not stderr_of(cell), f"{grade_id} wrote to stderr (nbgrader would score it 0)"
        printed = stdout_of(cell)
        assert printed.count("self-check passed:") == 1, (
            f"{grade_id}: the pass line should appear once: {printed}"
        )
        assert CPU_BANNER not in printed, (
            f"{grade_id}: the CPU banner belongs to the notebook's first cell only"
        )
        assert not [o for o in cell.outputs if o.output_type == "execute_result"], (
            "run_check's value was echoed"
        )
        assert "BEGIN HIDDEN TESTS" not in cell.source, f"{grade_id}: hidden tests belong to the judge"
        assert "course/judge/unit07.py" in cell.source
    masks = next(c for c in nb.cells if "double_kernel[(1,)]" in c.source)
    neighbours = [line for line in stdout_of(masks).splitlines() if "neighbour" in line]
    assert "[7.0, 7.0, 7.0" in neighbours[0] and "[14.0, 14.0, 14.0, 7.0" in neighbours[1], neighbours


@triton.jit
def _copy_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr, MASKED: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = offsets < n if MASKED else offsets >= 0
    tl.store(dst_ptr + offsets, tl.load(src_ptr + offsets, mask=inside), mask=inside)


def _copy(x, masked=True):
    x = x.contiguous()
    y = torch.empty_like(x)
    _copy_kernel[(triton.cdiv(x.numel(), 16),)](x, y, x.numel(), BLOCK=16, MASKED=masked)
    return y


def test_the_childs_entry_point_reports_views_gradients_launches_and_operators(monkeypatch):
    student = types.ModuleType(triton_calls.MODULE_NAME)
    student.copy_kernel, student.copy, student.triple = _copy_kernel, _copy, lambda x: x * 3
    monkeypatch.setitem(sys.modules, triton_calls.MODULE_NAME, student)
    data = torch.randn(5, 7, device=utils.device())
    out, grads, launches, _, ops, _, _ = triton_calls.run("copy", {"views": ["t"]}, data)
    assert torch.equal(out, data.T) and grads == () and launches == 1 and "mul" not in ops
    out, _, launches, _, ops, _, _ = triton_calls.run("triple", {"views": ["step2"]}, data)
    assert torch.equal(out, data[:, ::2] * 3) and launches == 0 and "mul" in ops
    plan = {"views": ["t"], "backward": "sum", "grad_of": [0]}
    out, (grad,), _, backward_launches, _, backward_ops, _ = triton_calls.run("triple", plan, data)
    assert grad.shape == (7, 5) and torch.equal(grad, torch.full((7, 5), 3.0, device=grad.device))
    assert backward_launches == 0 and "mul" in backward_ops
    row = torch.randn(1, device=utils.device())
    out, *_ = triton_calls.run("copy", {"views": [["expand", [4]]]}, row)
    assert torch.equal(out, row.expand(4))


def test_the_childs_guard_catches_a_store_past_the_end(monkeypatch):
    student = types.ModuleType(triton_calls.MODULE_NAME)
    student.copy_kernel, student.copy = _copy_kernel, _copy
    student.copy_unmasked = lambda x: _copy(x, masked=False)
    monkeypatch.setitem(sys.modules, triton_calls.MODULE_NAME, student)
    data = torch.randn(13, device=utils.device())
    out, *_ = triton_calls.run("copy", {"guard": True}, data)
    assert torch.equal(out, data)
    with pytest.raises(AssertionError, match="stored 3 element"):
        triton_calls.run("copy_unmasked", {"guard": True}, data)


def test_the_judge_gives_the_solution_full_marks_and_strided_bugs_partial_credit():
    unit = units.UNITS[NOTEBOOK.name]
    summary = preprocessor.judge_notebook(notebooks.read(NOTEBOOK), unit, "alice", "salt", "auto")
    assert all(score == points for score, points in summary["scores"].values()), summary
    impl = wrong.parse(ROOT / "course" / "wrong" / "07_triton_basics" / "softmax_assumes_contiguous.py")
    nb = notebooks.with_cell(notebooks.read(NOTEBOOK), impl.replaces, impl.body)
    scores = preprocessor.judge_notebook(nb, unit, "alice", "salt", "auto")["scores"]
    assert 0 < scores["test_softmax_rows"][0] < scores["test_softmax_rows"][1]
    assert scores["test_ws_forward"] == [2.0, 2.0] and scores["test_ws_backward"] == [2.0, 2.0]
    cell = next(c for c in nb.cells if notebooks.meta(c).get("grade_id") == "test_softmax_rows")
    assert "✗  非连续的 x" in cell.outputs[0].text and "transposed view" in cell.outputs[0].text
