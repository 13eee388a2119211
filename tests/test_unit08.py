"""Unit 08 runs top to bottom in a fresh kernel: every graded check passes and says which case set ran."""

import torch
from notebook_run import ROOT, execute, graded_cells, stderr_of, stdout_of

import utils

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
    performance = stdout_of(tests["test_performance"])
    assert ("skipped" in performance) == (not torch.cuda.is_available() or utils.interpreter())
    assert tests["test_performance"]["metadata"]["nbgrader"]["points"] == 0
