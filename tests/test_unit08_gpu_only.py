"""GPU-only test cells, on unit 08's `test_performance`: the metadata flag (kept by the release), how selftest
judges such cells without a GPU, the check's CPU path, and on a GPU the threshold's margins."""

import importlib.util
import shutil
import sys
from pathlib import Path

import pytest
import torch
import triton

import utils
from course import notebooks, selftest, wrong
from course.grading import grade
from course.layout import COURSE, Course
from utils.checks import flash_triton

HAS_GPU = utils.mode().is_gpu  # not `from conftest import`: tests/browser has a conftest module too

UNIT = "08_flash_attention_triton"
NOTEBOOK = "flash_attention_triton.ipynb"
SLOW = "fwd_row_by_row_no_dot"  # correct, but one query row at a time without tl.dot
TESTS = {"test_forward", "test_dv", "test_dk", "test_dq", "test_memory"}


def source_notebook():
    return notebooks.read(COURSE.source / UNIT / NOTEBOOK)


def graded_case(kind: str, scores: dict[str, float], must_fail: tuple[str, ...] = ()) -> selftest.Case:
    points = selftest.points(COURSE, UNIT, NOTEBOOK)
    case = selftest.Case(UNIT, NOTEBOOK, kind, kind, None, must_fail)
    case.result = {"status": "graded", "scores": {g: [scores.get(g, 0.0), pts] for g, pts in points.items()}}
    return case


def test_the_performance_cell_is_the_only_gpu_only_cell_and_the_release_keeps_the_flag():
    assert notebooks.gpu_only_tests(source_notebook()) == {"test_performance": 1.0}
    released = notebooks.read(COURSE.release / UNIT / NOTEBOOK)
    assert notebooks.gpu_only_tests(released) == {"test_performance": 1.0}
    assert not any(notebooks.is_gpu_only(c) for c in source_notebook().cells if c.cell_type == "markdown")


def test_selftest_skips_gpu_only_cells_exactly_when_there_is_no_gpu():
    expected = frozenset() if utils.mode().is_gpu else {"test_performance"}
    assert selftest.skipped(COURSE, UNIT, NOTEBOOK) == expected
    assert selftest.skipped(COURSE, "06_flash_attention_pytorch", "flash_attention_pytorch.ipynb") == set()


def test_without_a_gpu_the_solution_gets_full_marks_except_the_gpu_only_cell():
    points = selftest.points(COURSE, UNIT, NOTEBOOK)
    skipped = frozenset({"test_performance"})
    solution = graded_case("solution", {g: p for g, p in points.items() if g not in skipped})
    assert solution.verdict(points, skipped) is None
    assert "not full marks: ['test_performance']" in solution.verdict(points)  # what a GPU run would say
    short = graded_case("solution", {g: p for g, p in points.items() if g not in skipped | {"test_memory"}})
    assert "not full marks: ['test_memory']" in short.verdict(points, skipped)


def test_a_gpu_only_cell_that_scores_without_a_gpu_is_a_surprise_for_every_case():
    points = selftest.points(COURSE, UNIT, NOTEBOOK)
    skipped = frozenset({"test_performance"})
    for kind in ("solution", "stubs", "wrong"):
        case = graded_case(kind, dict(points), must_fail=("test_performance",))
        assert "GPU-only cells score without a GPU: ['test_performance']" in case.verdict(points, skipped)


def test_a_wrong_implementation_that_fails_only_gpu_only_cells_holds_trivially_without_a_gpu():
    points = selftest.points(COURSE, UNIT, NOTEBOOK)
    slow = next(w for w in wrong.load(COURSE.wrong / UNIT) if w.name == SLOW)
    assert set(slow.must_fail) == {"test_performance"}
    case = graded_case("wrong", {g: points[g] for g in TESTS}, slow.must_fail)
    assert case.verdict(points, frozenset({"test_performance"})) is None
    assert case.verdict(points) is None  # 0 on test_performance is also what a GPU must give it


def test_selftest_report_names_the_skipped_cells(capsys):
    points = selftest.points(COURSE, UNIT, NOTEBOOK)
    solution = graded_case("solution", {g: points[g] for g in TESTS})
    surprises = selftest.report(COURSE, [solution], [])
    out = capsys.readouterr().out
    assert "Skipped (GPU-only)" in out
    if utils.mode().is_gpu:
        assert surprises == 1 and "not full marks: ['test_performance']" in out
    else:
        assert surprises == 0 and "test_performance" in out.splitlines()[1]
        assert "GPU-only test cells must score 0" in out


def test_the_gpu_only_flag_on_a_cell_that_is_not_a_test_is_a_static_problem(tmp_path):
    course = Course(tmp_path / "course", COURSE.wrong)
    shutil.copytree(COURSE.source / UNIT, course.source / UNIT)
    nb = source_notebook()
    nb.cells[0].metadata[notebooks.COURSE_KEY] = {"gpu_only": True}
    notebooks.write(nb, course.source / UNIT / NOTEBOOK)
    impls, variants = wrong.load(COURSE.wrong / UNIT), wrong.load(COURSE.variants / UNIT, "variant")
    problems = selftest.static_problems(course, UNIT, impls, variants)
    assert problems == [f"{UNIT}/{NOTEBOOK}: cell 0 is marked GPU-only but is not a test cell"]
    assert selftest.static_problems(COURSE, UNIT, impls, variants) == []


@pytest.mark.skipif(HAS_GPU, reason="the interpreter's path; on a GPU the check measures (gpu tests below)")
def test_in_the_interpreter_the_performance_check_scores_zero_quietly(capsys):
    assert flash_triton.performance(module=None) == 0  # the cell's value is its nbgrader score
    out, err = capsys.readouterr()
    assert flash_triton.CPU_PERFORMANCE_NOTE in out and err == ""
    assert "0 points here" in out and "只在 GPU 上评分" in out


def student_module(tmp_path, replaced: str | None = None):
    """The unit's solution cells as an importable file (a GPU's @triton.jit reads it), one cell replaced."""
    impls = {w.replaces: w.body for w in wrong.load(COURSE.wrong / UNIT) if w.name == replaced}
    return module_from_cells(tmp_path, impls, replaced or "solution")


def module_from_cells(tmp_path, impls: dict[str, str], name: str):
    """The solution cells, those named in `impls` ({grade_id: source}) replaced, as an imported module."""
    cells = notebooks.solution_cells(source_notebook())
    parts = ["import utils\nimport torch\nimport triton\nimport triton.language as tl"]
    parts += [impls.get(gid) or notebooks.without_markers(cell.source) for gid, cell in cells.items()]
    name = f"student_{name}"
    path = tmp_path / f"{name}.py"
    path.write_text("\n\n\n".join(parts) + "\n", encoding="utf-8")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.gpu
def test_on_a_gpu_the_threshold_is_far_from_the_solution_and_from_the_slow_kernel(tmp_path):
    threshold = flash_triton.PERF_FRACTION_OF_SDPA
    ratios = {}
    for name in (None, SLOW):
        results = flash_triton.measure_performance(student_module(tmp_path, name))
        ratios[name] = {what: r["ratio"] for what, r in results.items()}
        print(name or "solution", {what: f"{r:.3f}" for what, r in ratios[name].items()}, results)
    assert min(ratios[None].values()) >= 1.5 * threshold, ratios
    assert ratios[SLOW]["forward"] <= threshold / 1.5, ratios
    assert flash_triton.performance(student_module(tmp_path)) is None
    # the row-by-row forward (~90x SDPA's time) is near the warm call's limit (67x): either failure is right
    with pytest.raises(AssertionError, match="far too slow|forward at"):
        flash_triton.performance(student_module(tmp_path, SLOW))


def test_grade_and_demo_say_which_gpu_only_points_a_cpu_run_could_not_award():
    rows = [
        grade.Row("alice", UNIT, 12.0, 11.0),
        grade.Row("alice", "06_flash_attention_pytorch", 12.0, 12.0),
    ]
    note = grade.gpu_only_note(COURSE, rows)
    if HAS_GPU:
        assert note is None
    else:
        assert f"{UNIT}/test_performance (1)" in note and "no GPU" in note and "没有 GPU" in note
    assert grade.gpu_only_note(COURSE, rows[1:]) is None  # unit 06 has no GPU-only cells


@pytest.mark.gpu
def test_on_hopper_the_trans_ds_trap_is_caught_and_the_feedback_points_to_troubleshooting():
    """The dK/dV kernel with dK += tl.dot(tl.trans(ds), q): right in math; on sm90 (Triton 3.2–3.6) its dK is
    miscompiled for fp16/bf16 with 64-row key blocks. The judge must then give test_dv full marks, take
    test_dk's half-precision points and say why; where the compiler gets it right, it earns full marks."""
    from course.judge.preprocessor import judge_notebook
    from course.judge.units import UNITS

    nb = source_notebook()
    trap = (Path(__file__).parent / "fixtures" / "unit08_dkdv_trans_ds.py").read_text(encoding="utf-8")
    cell = next(c for c in nb.cells if notebooks.meta(c).get("grade_id") == "fa_backward_dkdv")
    cell.source = trap
    summary = judge_notebook(nb, UNITS[NOTEBOOK], "trap", "salt", "auto")
    scores = summary["scores"]
    report = next(c for c in nb.cells if notebooks.meta(c).get("grade_id") == "test_dk").outputs[0]["text"]
    print(torch.cuda.get_device_name(), triton.__version__, scores["test_dk"], report)
    assert scores["test_dv"] == [2.0, 2.0]
    if torch.cuda.get_device_capability()[0] == 9 and scores["test_dk"][0] < 2.0:
        assert "Hint: dV is right and dK is wrong on Hopper" in report and "排错" in report
    else:
        assert scores["test_dk"] == [2.0, 2.0], report
