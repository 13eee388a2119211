"""Run a source notebook top to bottom in a fresh kernel (shared by the unit notebook tests)."""

from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent


def execute(notebook: Path, cwd: Path, timeout: int = 600):
    """Execute `notebook` in a fresh python3 kernel; raises CellExecutionError on the first failing cell."""
    nb = nbformat.read(notebook, as_version=4)
    client = NotebookClient(
        nb,
        timeout=timeout,
        kernel_name="python3",
        resources={"metadata": {"path": str(cwd)}},
        extra_arguments=["--IPKernelApp.log_level=ERROR"],  # ipykernel's TCP warning is not the notebook's
        skip_cells_with_tag="",  # run the demos that grading skips ("skip-execution") too
    )
    client.execute()
    return nb


def graded_cells(nb) -> dict:
    """{grade_id: cell} of the nbgrader test cells."""
    return {
        c["metadata"]["nbgrader"]["grade_id"]: c
        for c in nb.cells
        if c.get("metadata", {}).get("nbgrader", {}).get("grade", False)
    }


def stdout_of(cell) -> str:
    return "".join(o.get("text", "") for o in cell.outputs if o.get("name") == "stdout")


def stderr_of(cell) -> list:
    return [o for o in cell.outputs if o.get("name") == "stderr"]
