"""Unit 06 runs top to bottom in a fresh kernel, with no error and nothing on stderr in graded test cells."""

from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "source" / "06_flash_attention_pytorch" / "flash_attention_pytorch.ipynb"


def _is_test_cell(cell) -> bool:
    return cell.get("metadata", {}).get("nbgrader", {}).get("grade", False)


def test_unit06_executes_cleanly(tmp_path):
    nb = nbformat.read(NOTEBOOK, as_version=4)
    client = NotebookClient(
        nb,
        timeout=300,
        kernel_name="python3",
        resources={"metadata": {"path": str(tmp_path)}},
        # ipykernel 7 logs a start-up warning (TCP without encryption) to stderr, and it can land in any
        # cell's output; it says nothing about the notebook, so keep the kernel's own log quiet.
        extra_arguments=["--IPKernelApp.log_level=ERROR"],
        skip_cells_with_tag="",  # run the demos that grading skips ("skip-execution") too
    )
    client.execute()  # raises CellExecutionError on the first failing cell
    test_cells = [c for c in nb.cells if _is_test_cell(c)]
    assert len(test_cells) == 5
    for cell in test_cells:
        grade_id = cell["metadata"]["nbgrader"]["grade_id"]
        stderr = [o for o in cell.outputs if o.get("name") == "stderr"]
        assert not stderr, f"{grade_id} wrote to stderr (nbgrader would score it 0): {stderr}"
        printed = "".join(o.get("text", "") for o in cell.outputs if o.get("name") == "stdout")
        assert "self-check passed" in printed, f"{grade_id} did not reach its self-check message"
