"""Unit 08 runs top to bottom in a fresh kernel: every staged self-check passes, and the judge gives the
solution full marks on every cell this machine can judge."""

from nbgrader.utils import determine_grade
from notebook_run import ROOT, execute, graded_cells, stderr_of, stdout_of

import utils
from course import notebooks
from course.judge.preprocessor import judge_notebook
from course.judge.units import UNITS
from utils.checks.flash_triton import CPU_PERFORMANCE_NOTE

NOTEBOOK = ROOT / "source" / "08_flash_attention_triton" / "flash_attention_triton.ipynb"
STAGES = {
    "test_forward": 4,
    "test_dv": 2,
    "test_dk": 2,
    "test_dq": 2,
    "test_memory": 1,
    "test_performance": 1,
}


def test_unit08_executes_cleanly_with_a_self_check_per_stage(tmp_path):
    nb = execute(NOTEBOOK, tmp_path)
    tests = graded_cells(nb)
    assert {gid: notebooks.meta(c)["points"] for gid, c in tests.items()} == STAGES
    for grade_id, cell in tests.items():
        assert not stderr_of(cell), f"{grade_id} wrote to stderr (nbgrader would score it 0)"
        assert "course/judge/unit08.py" in cell.source, grade_id  # the judge decides the points
        if grade_id not in ("test_memory", "test_performance"):
            assert "passed: " in stdout_of(cell) and "cases" in stdout_of(cell), (
                f"{grade_id}: {stdout_of(cell)!r}"
            )
    assert "no N×N intermediate" in stdout_of(tests["test_memory"]) or "peak extra memory" in stdout_of(
        tests["test_memory"]
    )
    # The performance self-check is GPU-only: it scores 0 in the interpreter by its value, without an error.
    performance = tests["test_performance"]
    assert notebooks.is_gpu_only(performance)
    score, max_points = determine_grade(performance)
    if utils.interpreter():
        assert score == 0 and CPU_PERFORMANCE_NOTE in stdout_of(performance)
    else:
        assert score == max_points, stdout_of(performance)


def test_the_judge_gives_the_solution_every_point_it_can_judge_here():
    nb = notebooks.read(NOTEBOOK)
    summary = judge_notebook(nb, UNITS[NOTEBOOK.name], "alice", "salt", "auto")
    on_gpu = utils.mode().is_gpu
    expected = {gid: [float(pts), float(pts)] for gid, pts in STAGES.items()}
    if not on_gpu:
        expected["test_performance"] = [0.0, 1.0]  # GPU-only: nothing to judge here
    assert summary["scores"] == expected and not summary["flagged"], summary
    performance = next(c for c in nb.cells if notebooks.meta(c).get("grade_id") == "test_performance")
    assert determine_grade(performance) == (expected["test_performance"][0], 1.0)
    assert not any(
        o.get("output_type") == "error" for o in performance.outputs
    )  # 0 by value, not by an error


def test_the_autograd_case_leaves_a_wide_key_tail_for_every_tile():
    """The non-causal autograd case's Nk leaves at least 15 padded keys, over a ninth of Nk, in the last tile of any
    power-of-two tile from 16 keys up, and 33 keys or more in a second 64-key tile: with any odd Nk,
    fwd_unmasked_key_tail kept test_dq on 2 of 8 seeds (Nk = 125: one padded key, its error within float16's
    tolerance); with Nk from 65, fwd_no_rescale kept it on the H100 (Nk = 65: one key in the second tile)."""
    import random
    from types import SimpleNamespace

    from course.judge.unit08 import wide_key_tail

    drawn = {wide_key_tail(SimpleNamespace(rng=random.Random(seed))) for seed in range(200)}
    assert len(drawn) > 1
    for n_k in drawn:
        padded = {tile: -n_k % tile for tile in (16, 32, 64, 128)}
        assert all(p >= 15 and p >= n_k / 9 for p in padded.values()), (n_k, padded)
        assert n_k - 64 >= 33, n_k
