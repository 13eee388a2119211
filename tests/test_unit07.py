"""Unit 07 runs top to bottom in a fresh kernel: every graded check passes, nothing on stderr in test cells."""

from notebook_run import ROOT, execute, graded_cells, stderr_of, stdout_of

NOTEBOOK = ROOT / "source" / "07_triton_basics" / "triton_basics.ipynb"


def test_unit07_executes_cleanly(tmp_path):
    nb = execute(NOTEBOOK, tmp_path)
    tests = graded_cells(nb)
    assert set(tests) == {"test_ws_forward", "test_ws_backward", "test_softmax_rows"}
    for grade_id, cell in tests.items():
        assert not stderr_of(cell), f"{grade_id} wrote to stderr (nbgrader would score it 0)"
        printed = stdout_of(cell)
        assert "passed: 1 cases" in printed, f"{grade_id}: the self-check did not report success"
        assert "hidden tests" in printed, f"{grade_id}: the hidden tests did not report success"
    masks = next(c for c in nb.cells if "double_kernel[(1,)]" in c.source)
    neighbours = [line for line in stdout_of(masks).splitlines() if "neighbour" in line]
    assert "[7.0, 7.0, 7.0" in neighbours[0] and "[14.0, 14.0, 14.0, 7.0" in neighbours[1], neighbours
