"""Unit 02: the notebook runs top to bottom (every self-check passes, nothing on stderr in test cells); the
reference formulas equal what the traffic counter measures on the course's kernels; the judge gives the
solution full marks, decides the fused softmax's traffic from the element counts itself, and gives partial
credit to a softmax that reads S three times."""

import math

import pytest
import torch
from judge_cases import recorded_calls
from notebook_run import ROOT, execute, judged_self_checks, stdout_of

from course import notebooks, wrong
from course.judge import preprocessor, unit02, units
from course.judge.core import Cell, Judgement
from course.reference import io_aware as reference
from utils import io_kernels

NOTEBOOK = ROOT / "source" / "02_io_aware" / "io_aware.ipynb"
TESTS = {
    "test_arithmetic_intensity",
    "test_roofline",
    "test_fused_softmax",
    "test_hbm_standard",
    "test_hbm_flash",
}


def test_unit02_executes_cleanly(tmp_path):
    nb = execute(NOTEBOOK, tmp_path)
    assert set(judged_self_checks(nb, "02")) == TESTS
    check = next(c for c in nb.cells if "for n, d, block, dtype in" in c.source)
    assert stdout_of(check).count("✓") == 6 and "✗" not in stdout_of(check)


@pytest.mark.parametrize(
    ("n", "d", "dtype", "block_q"),
    [
        (33, 16, torch.float32, 16),
        (100, 64, torch.float16, 64),
        (129, 32, torch.bfloat16, 128),
        (70, 16, torch.float32, 32),
    ],
)
def test_standard_formula_is_what_the_unfused_kernels_move(n, d, dtype, block_q):
    assert unit02.counted_standard(n, d, dtype, block_q) == reference.hbm_bytes_standard(n, d, dtype, block_q)


@pytest.mark.parametrize(
    ("n", "d", "sram", "dtype"),
    [
        (100, 64, 100 * 1024, torch.float16),
        (201, 64, 48 * 1024, torch.float32),
        (77, 16, 250_000, torch.float32),
        (150, 32, 12_000, torch.bfloat16),
    ],
)
def test_flash_formula_is_what_the_reference_kernel_moves(n, d, sram, dtype):
    block = reference.flash_block_size(d, sram, dtype)
    counted = unit02.counted_flash(n, d, dtype, block)
    assert counted == reference.hbm_bytes_flash(n, d, sram, dtype)
    q, k, v = (torch.randn(1, n, d).to(torch.float16 if dtype == torch.bfloat16 else dtype) for _ in range(3))
    _, fused = io_kernels.fused_attention(q, k, v, block_q=block, count=True)
    assert fused.total_bytes() == counted  # the notebook's fused kernel moves the reference kernel's bytes


def test_tiling_rule():
    assert reference.flash_block_size(64, 228 * 1024, torch.bfloat16) == 256  # 233472 // 512 = 456 -> 256
    assert reference.flash_block_size(64, 4 * 16 * 64 * 4, torch.float32) == 16
    with pytest.raises(ValueError, match="cannot hold tiles of 16 rows"):
        reference.flash_block_size(64, 4 * 16 * 64 * 4 - 1, torch.float32)


def test_reference_intensities_and_roofline():
    assert reference.arithmetic_intensity("softmax", (7, 9), torch.float32) == 5 / 8
    n, d = 4096, 64
    fused = reference.arithmetic_intensity("fused_attention", (n, n, d), torch.bfloat16)
    assert math.isclose(fused, (4 * n * n * d + 6 * n * n) / (2 * 4 * n * d))
    assert reference.roofline(1e9, 1e9, 100e12, 2e12) == (2e12, "memory")
    assert reference.roofline(2**20 * 4, 2**20, 4.0, 1.0) == (4.0, "compute")  # exactly at the ridge


def judgement() -> Judgement:
    cell = Cell("test_fused_softmax", {unit02.TRAFFIC: 1}, check=lambda j: None)
    return Judgement(cell, child=None, seed=1, on_gpu=False)


@pytest.mark.parametrize(
    ("reads", "writes", "stats", "passes"),
    [
        (torch.ones(1, 4, 5), torch.ones(1, 4, 5), (("S", 80, 0), ("P", 0, 80)), True),
        (torch.ones(1, 4, 5).tril(), torch.ones(1, 4, 5), (("S", 40, 0), ("P", 0, 80)), True),  # causal skip
        (torch.full((1, 4, 5), 2), torch.ones(1, 4, 5), (("S", 160, 0), ("P", 0, 80)), False),  # read twice
        (
            torch.zeros(1, 4, 5),
            torch.ones(1, 4, 5),
            (("S", 0, 0), ("P", 0, 80)),
            False,
        ),  # bypassed the wrapper
        (
            torch.ones(1, 4, 5),
            torch.full((1, 4, 5), 2),
            (("S", 80, 0), ("P", 0, 160)),
            False,
        ),  # written twice
        (torch.ones(1, 4, 5), torch.ones(1, 4, 5), (("S", 80, 0), ("P", 0, 80), ("tmp", 80, 80)), False),
    ],
)
def test_the_judge_decides_the_traffic_from_the_element_counts(reads, writes, stats, passes):
    j = judgement()
    with j.case(unit02.TRAFFIC, "case"):
        unit02.check_traffic(j, reads.int(), writes.int(), stats, is_causal=True, what="case")
    assert j.passed(unit02.TRAFFIC) == passes, j.cases


def test_the_judge_gives_the_solution_full_marks_and_a_three_pass_softmax_partial_credit():
    unit = units.UNITS["io_aware.ipynb"]
    summary = preprocessor.judge_notebook(notebooks.read(NOTEBOOK), unit, "alice", "salt", "auto")
    assert all(score == points for score, points in summary["scores"].values()), summary
    impl = wrong.parse(ROOT / "course" / "wrong" / "02_io_aware" / "fused_three_passes.py")
    nb = notebooks.with_cell(notebooks.read(NOTEBOOK), impl.replaces, impl.body)
    scores = preprocessor.judge_notebook(nb, unit, "alice", "salt", "auto")["scores"]
    assert 0 < scores["test_fused_softmax"][0] < scores["test_fused_softmax"][1]  # values right, traffic not
    assert scores["test_roofline"] == [1.0, 1.0]


# What each exercise's text says it takes (the exact phrases stand in the exercise's statement); the judge's cases
# must cover exactly that (issue 34: spec = judge).
STATED = {
    "cell-12": ["`dtype` a `torch.dtype` (float64, float32, float16, bfloat16;"],
    "cell-15": ['exactly at the ridge counts as `"compute"`', "(`flops` may be 0)"],
    "cell-26": ["S is float32, float16 or bfloat16", "also when Nq ≠ Nk"],
    "cell-35": ["(`dtype` is float32, float16 or bfloat16)", "`hbm_bytes_standard(n, d, dtype, block_q=64)`"],
}
KERNEL_DTYPES = {"torch.float32", "torch.float16", "torch.bfloat16"}


class RecordedMemory:
    """Stands in for the judge's slow memory: remembers the scores S it was given."""

    scores: list[torch.Tensor] = []

    def __init__(self, work, S, P):
        self.scores.append(S)
        self.address = "recorded"

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def result(self, names, out):
        counts = torch.zeros(self.scores[-1].shape, dtype=torch.int64)
        return self.scores[-1], (counts,), None, counts, []


def test_each_exercise_states_the_dtypes_and_shapes_its_judge_passes(tmp_path, monkeypatch):
    """The judge's calls, recorded without a child or the interpreter's counts: for every student (seed), each
    stated dtype is judged and nothing unstated; FLOPs of 0, the ridge, the default and other query tiles, and
    causal scores with more and fewer keys than queries are among the cases."""
    cells = {c.get("id"): c.source for c in notebooks.read(NOTEBOOK).cells}
    assert all(phrase in cells[cell] for cell, phrases in STATED.items() for phrase in phrases)
    unit = units.UNITS[NOTEBOOK.name]
    monkeypatch.setattr(unit02, "counted_standard", lambda *args: 0)
    monkeypatch.setattr(unit02, "counted_flash", lambda *args: 0)
    monkeypatch.setattr(unit02, "SlowMemoryService", RecordedMemory)
    for seed in range(5):

        def calls(grade_id, seed=seed):
            return [args for _, args in recorded_calls(unit, grade_id, tmp_path, seed=seed)]

        intensity = calls("test_arithmetic_intensity")
        assert {a[3] for a in intensity if a[1] != "conv"} == KERNEL_DTYPES | {"torch.float64"}
        assert {a[1] for a in intensity} == {"matmul", "softmax", "scores", "pv", "fused_attention", "conv"}
        flops = [a[1] / a[2] for a in calls("test_roofline")]
        assert 0.0 in flops
        standard = calls("test_hbm_standard")
        assert {a[3] for a in standard} == KERNEL_DTYPES and {len(a) for a in standard} == {4, 5}
        assert {a[4] for a in standard if len(a) == 5} >= {16, 32, 128}
        assert {a[4] for a in calls("test_hbm_flash")} == KERNEL_DTYPES
        RecordedMemory.scores.clear()
        calls("test_fused_softmax")
        assert {s.dtype for s in RecordedMemory.scores} == {torch.float32, torch.float16, torch.bfloat16}
        compared = {(s.shape[1] > s.shape[2]) - (s.shape[1] < s.shape[2]) for s in RecordedMemory.scores}
        assert compared >= {-1, 1}  # more queries than keys, and fewer
