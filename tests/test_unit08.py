"""Unit 08 runs top to bottom in a fresh kernel: every graded check passes and says which case set ran."""

from nbgrader.utils import determine_grade
from notebook_run import ROOT, execute, graded_cells, stderr_of, stdout_of

import utils
from course import notebooks
from utils.checks_flash_triton import CPU_PERFORMANCE_NOTE

NOTEBOOK = ROOT / "source" / "08_flash_attention_triton" / "flash_attention_triton.ipynb"


def test_unit08_executes_cleanly(tmp_path):
    nb = execute(NOTEBOOK, tmp_path)
    tests = graded_cells(nb)
    expected = {"test_forward", "test_forward_causal", "test_backward", "test_backward_causal"}
    assert set(tests) == expected | {"test_memory", "test_performance"}
    case_set = "interpreter set" if utils.interpreter() else "full GPU set"
    for grade_id, cell in tests.items():
        assert not stderr_of(cell), f"{grade_id} wrote to stderr (nbgrader would score it 0)"
        if grade_id in expected:
            printed = stdout_of(cell)
            assert "passed 1 cases [" in printed and case_set in printed, f"{grade_id}: {printed!r}"
    # The performance cell is GPU-only: it scores 0 in the interpreter (by its value, without an error,
    # so the notebook runs on) and its full points on a GPU, judged the way nbgrader judges it.
    performance = tests["test_performance"]
    assert notebooks.is_gpu_only(performance)
    score, max_points = determine_grade(performance)
    assert max_points == notebooks.meta(performance)["points"] > 0
    if utils.interpreter():
        assert score == 0 and CPU_PERFORMANCE_NOTE in stdout_of(performance)
    else:
        assert score == max_points, stdout_of(performance)
        assert "forward+backward: your kernels" in stdout_of(performance)
