"""Attacks on a pair graded with its judge beside its notebook (`StartJudge`): the notebook's kernel runs code the
scan never reads (added cells, top-level statements), at the same time as the judge's children, so nothing it
writes may reach what those children load, and what the children write counts against the quota."""

import dataclasses
import os
import time

import nbformat
import pytest
import torch

from course import ROOT, notebooks
from course.judge import preprocessor, sandbox, units
from course.judge.child import CallFailed, Child
from course.judge.kernel import SandboxedExecute

AS_ROOT = pytest.mark.skipif(os.geteuid() != 0, reason="the grader runs as root (a uid per grading)")

LOOK = """import os


def planted():
    return sorted(os.listdir(os.environ['TRITON_CACHE_DIR']))
"""


@AS_ROOT
def test_the_notebooks_kernel_cannot_plant_in_the_cache_its_judges_children_load(tmp_path):
    """Attack: a cell the scan never reads writes a library where the kernel's Triton cache is, and where the judge's
    children's cache is (its path told to the cell), while the judge runs. On a GPU Triton loads the launcher and
    driver stubs it finds in its cache (`triton.runtime.build`): native code of the student's in the judge's child,
    unscanned and unflagged, forging every measurement made there."""
    owner = sandbox.new_owner()
    cache = sandbox.shared_folder("course-triton-test-", owner)
    resources = {"metadata": {"path": str(tmp_path)}, preprocessor.SHARED: (owner, cache)}
    plant = (
        "import os\n"
        f"for folder in (os.environ['TRITON_CACHE_DIR'], {str(cache)!r}):\n"
        "    try:\n"
        "        os.makedirs(os.path.join(folder, 'k'), exist_ok=True)\n"
        "        open(os.path.join(folder, 'k', 'cuda_utils.so'), 'wb').write(b'native code')\n"
        "    except OSError:\n"
        "        pass"
    )
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(plant)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    child = Child(LOOK, {}, sandbox.choose("auto")[0], triton_cache=cache, owner=owner)
    try:
        execute = SandboxedExecute(timeout=60)
        execute.preprocess(nb, resources)
        assert list(child.call("planted").result) == []
    finally:
        child.close()
        preprocessor.end_sharing(owner, cache)


FILL = """import os


def fill(x):
    for i in range(16):
        with open(os.path.join(os.environ['TRITON_CACHE_DIR'], f'f{i}'), 'wb') as f:
            f.write(os.urandom(1 << 20))
    return x
"""


def test_a_judge_child_that_fills_the_shared_cache_is_stopped(monkeypatch):
    """Attack: the judge's child writes past the quota into the Triton cache its notebook's children share (a folder
    of the host's temp disk); it must be stopped as one that fills its home is."""
    monkeypatch.setattr(sandbox, "DISK_QUOTA", 8 << 20)
    owner = sandbox.new_owner()
    cache = sandbox.shared_folder("course-triton-test-", owner)
    child = Child(FILL, {}, sandbox.choose("auto")[0], triton_cache=cache, owner=owner)
    try:
        with pytest.raises(CallFailed, match="MiB of files"):
            child.call("fill", torch.ones(1), timeout=50)
        assert sandbox.bytes_used(cache) < 8 << 20
    finally:
        child.close()
        preprocessor.end_sharing(owner, cache)


UNIT08 = ROOT / "source" / "08_flash_attention_triton" / "flash_attention_triton.ipynb"


def test_a_timed_cell_is_judged_once_the_notebooks_kernel_has_ended(monkeypatch):
    """Attack (on a GPU): the notebook's kernel, running beside the judge, loads the GPU while the judge times SDPA
    and rests while it times the student's kernels (the child tells it when, e.g. through the GPU's free memory), so
    a slow kernel reaches the threshold of `test_performance` (so could the judge's children of the other cells,
    told through the cache they share). A timed cell waits for the notebook and the other cells: only its child then
    runs code of this pair. Here stand-in cells record when they run; `StartJudge`, a notebook's run of a
    second, then `Judge`."""
    real = units.UNITS[UNIT08.name]
    started, ended = {}, {}

    def check(j):
        started[j.cell.grade_id] = time.monotonic()
        with j.case("p", "nothing to run"):
            time.sleep(0.05)
        ended[j.cell.grade_id] = time.monotonic()

    cells = {
        gid: dataclasses.replace(cell, properties={"p": 1}, check=check) for gid, cell in real.cells.items()
    }
    monkeypatch.setitem(units.UNITS, UNIT08.name, dataclasses.replace(real, cells=cells))
    resources = {"nbgrader": {"notebook": UNIT08.stem, "student": "alice", "assignment": "08"}}
    nb = notebooks.read(UNIT08)
    nb, resources = preprocessor.StartJudge(salt="salt").preprocess(nb, resources)
    time.sleep(1.0)
    notebook_ended = time.monotonic()
    preprocessor.Judge(salt="salt").preprocess(nb, resources)
    timed = {gid for gid, cell in cells.items() if cell.timed}
    assert timed == {"test_performance"}
    others_ended = max(ended[gid] for gid in cells.keys() - timed)
    assert all(started[gid] >= max(notebook_ended, others_ended) for gid in timed), (started, ended)
    assert all(
        started[gid] < notebook_ended for gid in cells.keys() - timed
    )  # the others beside the notebook
