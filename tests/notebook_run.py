"""Run a source notebook top to bottom in a fresh kernel (shared by the unit notebook tests)."""

from pathlib import Path

import nbformat
from nbclient import NotebookClient

from course.judge.kernel import IOPUB_WAIT, SteppedKernelManager

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
        kernel_manager_class=SteppedKernelManager,  # a slider cell's reply is not left unread (nbclient#312)
        iopub_timeout=IOPUB_WAIT,  # a cell's last outputs are not dropped on a busy machine
    )
    client.execute()
    glyphs = missing_glyphs(nb)
    assert not glyphs, f"{notebook.name}: a figure drew boxes for characters its font lacks: {glyphs[:3]}"
    return nb


def missing_glyphs(nb) -> list[str]:
    """matplotlib's missing-glyph warnings in the outputs (`import utils` routes warnings to stdout): a figure whose
    Chinese was drawn without the course's CJK font (issue 47)."""
    return [
        line
        for cell in nb.cells
        for output in cell.get("outputs", [])
        for line in str(output.get("text", "")).splitlines()
        if "missing from font" in line
    ]


def graded_cells(nb) -> dict:
    """{grade_id: cell} of the nbgrader test cells."""
    return {
        c["metadata"]["nbgrader"]["grade_id"]: c
        for c in nb.cells
        if c.get("metadata", {}).get("nbgrader", {}).get("grade", False)
    }


def judged_self_checks(nb, unit: str) -> dict:
    """{grade_id: cell} of the executed notebook's graded code cells (written answers are graded by hand), each
    checked: nothing on stderr (nbgrader would score it 0), its self-check passed, the judge decides its points."""
    tests = {gid: cell for gid, cell in graded_cells(nb).items() if cell.cell_type == "code"}
    for grade_id, cell in tests.items():
        assert not stderr_of(cell), f"{grade_id} wrote to stderr (nbgrader would score it 0)"
        assert "self-check passed" in stdout_of(cell), f"{grade_id}: the self-check did not pass"
        assert f"course/judge/unit{unit}.py" in cell.source and "BEGIN HIDDEN TESTS" not in cell.source, (
            grade_id
        )
    return tests


def stdout_of(cell) -> str:
    return "".join(o.get("text", "") for o in cell.outputs if o.get("name") == "stdout")


def stderr_of(cell) -> list:
    return [o for o in cell.outputs if o.get("name") == "stderr"]


def run_cells(cells: list[str], tmp_path) -> list:
    """Execute code cells in one fresh kernel, errors allowed; return the executed cells."""
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    NotebookClient(
        nb,
        timeout=300,
        kernel_name="python3",
        allow_errors=True,
        resources={"metadata": {"path": str(tmp_path)}},
        extra_arguments=["--IPKernelApp.log_level=ERROR"],
        iopub_timeout=IOPUB_WAIT,  # `error_of` reads the outputs: none may be dropped on a busy machine
    ).execute()
    return nb.cells


def error_of(cell) -> str:
    errors = [o for o in cell.outputs if o.output_type == "error"]
    return f"{errors[0].ename}: {errors[0].evalue}" if errors else ""
