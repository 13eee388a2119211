"""Reading, writing and inspecting nbgrader notebooks (cell metadata, solution and hidden-test regions)."""

from __future__ import annotations

import copy
import re
from pathlib import Path

import nbformat

SOLUTION = ("### BEGIN SOLUTION", "### END SOLUTION")
HIDDEN = ("### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS")
MARKERS = ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS")
COURSE_KEY = "flash_course"  # the course's own cell metadata, beside nbgrader's (see course/AUTHORING.md)
# JSON's "\ud800" escape decodes to a lone surrogate, which no UTF-8 file, digest or CSV can hold
LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def read(path: Path) -> nbformat.NotebookNode:
    """The notebook at `path`, without lone surrogates (`without_lone_surrogates`)."""
    return without_lone_surrogates(nbformat.read(str(path), as_version=4))


def without_lone_surrogates(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """`nb` (changed in place) with every lone surrogate in its strings and keys replaced by U+FFFD: whatever a
    student's notebook holds, what is read from it can be written, hashed and compared."""
    pending = [nb]
    while pending:
        node = pending.pop()
        for key, value in list(node.items() if isinstance(node, dict) else enumerate(node)):
            if isinstance(value, dict | list):
                pending.append(value)
            elif isinstance(value, str) and LONE_SURROGATE.search(value):
                node[key] = LONE_SURROGATE.sub("\ufffd", value)
            if isinstance(key, str) and LONE_SURROGATE.search(key):
                node[LONE_SURROGATE.sub("\ufffd", key)] = node.pop(key)
    return nb


def to_text(nb: nbformat.NotebookNode) -> str:
    """Byte-stable nbformat JSON: no outputs, no execution counts, cell ids filled in deterministically."""
    clean = copy.deepcopy(nb)
    for index, cell in enumerate(clean.cells):
        if clean.nbformat_minor >= 5:
            cell.setdefault("id", f"cell-{index}")
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    return nbformat.writes(clean).rstrip("\n") + "\n"


def write(nb: nbformat.NotebookNode, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(to_text(nb), encoding="utf-8")


def meta(cell) -> dict:
    """The cell's nbgrader metadata ({} when it has none)."""
    return cell.get("metadata", {}).get("nbgrader", {})


def course_meta(cell) -> dict:
    """The cell's course-specific metadata ({} when it has none)."""
    return cell.get("metadata", {}).get(COURSE_KEY, {})


def is_gpu_only(cell) -> bool:
    """True for a test cell marked `{"flash_course": {"gpu_only": true}}`: it can earn points only on a GPU."""
    return bool(course_meta(cell).get("gpu_only", False))


def graded_points(nb, gpu_only: bool = False) -> dict[str, float]:
    """{grade_id: points} of the test cells (with `gpu_only`, of those marked GPU-only)."""
    cells = test_cells(nb).items()
    return {gid: float(meta(c).get("points", 0)) for gid, c in cells if is_gpu_only(c) or not gpu_only}


def is_hand_graded(cell) -> bool:
    """A graded cell a person grades: a written answer, or a graded solution cell (nbgrader's manual answer)."""
    return bool(meta(cell).get("grade")) and (cell.cell_type != "code" or bool(meta(cell).get("solution")))


def all_points(nb, hand_only: bool = False) -> dict[str, float]:
    """{grade_id: points} of every graded cell, the test cells and those graded by hand (`hand_only`: those alone)."""
    graded = [c for c in nb.cells if meta(c).get("grade") and (is_hand_graded(c) or not hand_only)]
    return {meta(c)["grade_id"]: float(meta(c).get("points", 0)) for c in graded}


def gpu_only_tests(nb) -> dict[str, float]:
    """{grade_id: points} of the test cells marked GPU-only."""
    return graded_points(nb, gpu_only=True)


def solution_cells(nb) -> dict[str, nbformat.NotebookNode]:
    """Code solution cells (the graded exercises) by grade_id."""
    return {meta(c)["grade_id"]: c for c in nb.cells if c.cell_type == "code" and meta(c).get("solution")}


def test_cells(nb) -> dict[str, nbformat.NotebookNode]:
    """Auto-graded code cells (tests) by grade_id."""
    return {meta(c)["grade_id"]: c for c in nb.cells if c.cell_type == "code" and meta(c).get("grade")}


def marked_lines(source: str):
    """(line, region) for each line of a cell but the markers: region counts the solution / hidden-test
    regions from 0, None outside them."""
    region, count = None, 0
    for line in source.splitlines():
        if line.strip() in (SOLUTION[0], HIDDEN[0]):
            region, count = count, count + 1
        elif line.strip() in (SOLUTION[1], HIDDEN[1]):
            region = None
        else:
            yield line, region


def partition(source: str) -> tuple[list[str], list[str]]:
    """(secret, public) lines of a cell: inside solution / hidden-test regions, and outside them (no markers)."""
    secret, public = [], []
    for line, region in marked_lines(source):
        (public if region is None else secret).append(line)
    return secret, public


def regions(source: str) -> list[list[str]]:
    """The lines of each solution / hidden-test region of a cell, one list per BEGIN … END span."""
    found: dict[int, list[str]] = {}
    for line, region in marked_lines(source):
        if region is not None:
            found.setdefault(region, []).append(line)
    return list(found.values())


def without_markers(source: str) -> str:
    """The source with the solution marker lines dropped: the reference answer as a student would type it."""
    return "\n".join(line for line in source.splitlines() if line.strip() not in SOLUTION)


def with_cell(nb, grade_id: str, source: str):
    """A copy of `nb` whose cell `grade_id` has the given source."""
    changed = copy.deepcopy(nb)
    for cell in changed.cells:
        if meta(cell).get("grade_id") == grade_id:
            cell.source = source
            return changed
    raise KeyError(grade_id)
