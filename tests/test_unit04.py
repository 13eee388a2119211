"""Unit 04: the notebook runs top to bottom (every self-check passes, nothing on stderr in test cells); the
course's two row-softmax kernels agree with float64 and move exactly the bytes of three and two sweeps; the
read counter orders sweeps; the judge gives the solution full marks and specific mistakes lose specific
properties. GPU: the kernels on long rows, and the benchmark writes its figure."""

import ast
import inspect
import json
import math
import re

import pytest
import torch
from exercise_spec import calls_by_function, dtypes_sent, dtypes_stated, exercise_text
from notebook_run import ROOT, execute, judged_self_checks, stdout_of

from course import notebooks, wrong
from course.judge import preprocessor, unit04, units
from course.judge.child import Child
from course.judge.core import Cell, Judgement, judge_cell
from course.judge.student_code import module_source
from course.reference import online_softmax as reference
from utils import online_softmax_plots, softmax_kernels
from utils.softmax_state import finite_max
from utils.sweeps import CountedTensor, sweeps_in_order

NOTEBOOK = ROOT / "source" / "04_online_softmax" / "online_softmax.ipynb"
WRONG = ROOT / "course" / "wrong" / "04_online_softmax"
REDTEAM = ROOT / "course" / "redteam" / "04_online_softmax"
TESTS = {"test_online_softmax", "test_merge_states", "test_merge_attention", "test_weighted_sum"}
TOLERANCE = {torch.float32: 1e-6, torch.float16: 1e-3, torch.bfloat16: 8e-3}


def test_unit04_executes_cleanly(tmp_path):
    nb = execute(NOTEBOOK, tmp_path)
    assert set(judged_self_checks(nb, "04")) == TESTS
    counted = stdout_of(
        next(c for c in nb.cells if c.cell_type == "code" and "softmax_kernels.row_softmax(" in c.source)
    )
    assert counted.count("safe") == 2 and counted.count("-> 4 accesses per element") == 2
    assert counted.count("online") == 2 and counted.count("-> 3 accesses per element") == 2
    merges = stdout_of(next(c for c in nb.cells if c.cell_type == "code" and "def tree(parts)" in c.source))
    assert len(re.findall(r"\|Δm\| = 0\.0e\+00", merges)) == 3


def code_of(source: str, name: str) -> str:
    """The AST of function `name` in `source`, docstring left out (formatting and comments do not count)."""
    function = next(
        n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.FunctionDef) and n.name == name
    )
    return ast.dump(ast.Module(body=function.body[1:], type_ignores=[]))


def test_solution_cells_are_the_reference():
    nb = notebooks.read(NOTEBOOK)
    cells = {k: notebooks.without_markers(c.source) for k, c in notebooks.solution_cells(nb).items()}
    module = inspect.getsource(reference)
    for grade_id, name in {
        "os_online_softmax": "online_softmax",
        "os_merge_states": "merge_softmax_states",
        "os_merge_attention": "merge_attention_states",
        "os_weighted_sum": "online_softmax_weighted_sum",
    }.items():
        assert code_of(cells[grade_id], name) == code_of(module, name), (
            f"{grade_id} differs from the reference"
        )
    assert all("def finite_max" not in source for source in cells.values())  # given: utils.softmax_state


def test_finite_max_replaces_only_minus_infinity():
    m = torch.tensor([-math.inf, 2.0, -3.0, math.inf])
    assert torch.equal(finite_max(m), torch.tensor([0.0, 2.0, -3.0, math.inf]))


def test_a_lost_first_exercise_costs_no_other_exercise():
    """The given helper lives outside the exercises: with the first solution cell gone, the others keep
    their points (the sample class's crashing student crashes there)."""
    nb = notebooks.with_cell(notebooks.read(NOTEBOOK), "os_online_softmax", "import os\n\nos.abort()\n")
    scores = preprocessor.judge_notebook(nb, units.UNITS["online_softmax.ipynb"], "carol", "salt", "auto")[
        "scores"
    ]
    assert scores.pop("test_online_softmax")[0] == 0
    assert all(score == points for score, points in scores.values()), scores


@pytest.mark.parametrize(
    ("rows", "n", "dtype", "block"),
    [
        (3, 1, torch.float32, 16),
        (4, 1003, torch.float32, 128),
        (2, 777, torch.float16, 256),
        (3, 300, torch.bfloat16, 64),
    ],
)
@pytest.mark.parametrize("method", softmax_kernels.METHODS)
def test_kernels_agree_with_float64_and_move_the_bytes_of_their_sweeps(rows, n, dtype, block, method):
    x = (torch.randn(rows, n) * 4).to(dtype)
    x[0] = float("-inf")  # a fully masked row gives zeros
    if n > block:
        x[-1, : block + 3] = float("-inf")  # leading blocks entirely masked
    y, traffic = softmax_kernels.row_softmax(x, method, block=block, count=True)
    assert y.dtype == dtype and not y.isnan().any()
    expected = torch.softmax(x.double(), dim=-1).nan_to_num(0.0)
    assert torch.allclose(y.double(), expected, atol=1e-6, rtol=TOLERANCE[dtype])
    e = dtype.itemsize
    assert traffic.read_bytes() == softmax_kernels.READS[method] * rows * n * e
    assert traffic.written_bytes() == rows * n * e
    assert traffic.total_bytes() == softmax_kernels.expected_bytes(rows, n, dtype, method)


def test_kernel_launcher_refuses_what_it_cannot_run():
    with pytest.raises(ValueError, match="unknown method"):
        softmax_kernels.row_softmax(torch.randn(2, 8), "fast")
    with pytest.raises(ValueError, match="power-of-two"):
        softmax_kernels.row_softmax(torch.randn(2, 8).t(), "safe")


def test_the_counter_sees_sweeps_and_their_order():
    x = torch.randn(2, 3, 70)
    counted = CountedTensor("x", x)
    reference.online_softmax(counted, 16)
    assert bool((counted.read_map() == 2).all()) and max(counted.widths) == 16
    assert bool(sweeps_in_order(counted.first, counted.second).all())
    interleaved = CountedTensor("x", x)
    for c0 in range(0, 70, 16):  # each block read twice in a row: the second sweep starts too early
        interleaved[..., c0 : c0 + 16]
        interleaved[..., c0 : c0 + 16]
    assert not bool(sweeps_in_order(interleaved.first, interleaved.second).any())
    whole = CountedTensor("x", x)
    whole[0, 1]
    assert whole.widths == [70] and int(whole.read_map().sum()) == 70


def test_reference_conventions_for_empty_rows_and_states():
    scores = torch.randn(3, 40)
    scores[1] = float("-inf")
    out, lse = reference.online_softmax_weighted_sum(scores, torch.randn(40, 5), 16)
    assert (
        bool((out[1] == 0).all())
        and math.isinf(lse[1].item())
        and lse[1].item() < 0
        and not out.isnan().any()
    )
    empty = (torch.full((4,), float("-inf")), torch.zeros(4))
    m, ell = reference.merge_softmax_states(*empty, *empty)
    assert bool(torch.isneginf(m).all()) and bool((ell == 0).all())


def test_the_picture_replays_the_recurrence():
    row, values = torch.randn(37) * 3, torch.randn(37, 4)
    steps = online_softmax_plots.steps(row, 8, values)
    assert [s.seen for s in steps] == [8, 16, 24, 32, 37]
    assert torch.allclose(steps[-1].estimate, torch.softmax(row.double(), 0))
    assert torch.allclose(steps[-1].output, torch.softmax(row.double(), 0) @ values.double())
    assert all(math.isnan(v) for v in steps[0].estimate[8:].tolist())
    figure = online_softmax_plots.strip(row, 8, values, max_frames=3)
    assert len(figure.axes) == 9


def judgement(props: list[str]) -> Judgement:
    return Judgement(
        Cell("test", dict.fromkeys(props, 1), check=lambda j: None), child=None, seed=1, on_gpu=False
    )


@pytest.mark.parametrize(
    ("reads", "times", "widths", "order_ok", "passes"),
    [
        (2, 2, [16, 16], True, True),
        (3, 2, [16, 16], True, False),  # a third sweep
        (2, 2, [64], True, False),  # a read wider than the block
        (2, 2, [16], False, False),  # second sweep before the first ended
        (1, 1, [16], True, True),
        (2, 1, [16], True, False),  # the weighted sum read S twice
    ],
)
def test_the_judge_decides_sweeps_from_the_maps(reads, times, widths, order_ok, passes):
    shape = (2, 5)
    first = torch.zeros(shape, dtype=torch.int64)
    second = torch.ones(shape, dtype=torch.int64) if order_ok else torch.zeros(shape, dtype=torch.int64)
    j = judgement([unit04.SWEEPS])
    with j.case(unit04.SWEEPS, "case"):
        unit04.check_reads(
            j, torch.full(shape, reads), first, second, torch.tensor(widths), 16, times, "case"
        )
    assert j.passed(unit04.SWEEPS) == passes, j.cases


def test_minus_infinity_must_sit_where_the_reference_has_it():
    j = judgement(["L"])
    expected = torch.tensor([1.0, -math.inf])
    for got, ok in [
        (torch.tensor([1.0, -math.inf]), True),
        (torch.tensor([1.0, 0.0]), False),
        (torch.tensor([1.0, math.nan]), False),
    ]:
        j.cases["L"].clear()
        with j.case("L", "case"):
            unit04.close_with_infinities(j, got, expected, "L", atol=1e-6, rtol=0)
        assert j.passed("L") == ok


def failed_properties(nb) -> dict[str, list[str]]:
    """{grade_id: [properties marked ✗]} from the judge's reports in the graded notebook."""
    failed = {}
    for cell in nb.cells:
        text = "".join(o.get("text", "") for o in cell.get("outputs", []))
        match = re.search(r"评审 · Judge — (\w+)", text)
        if match:
            failed[match.group(1)] = re.findall(r"✗  (.+) \(\d+\)", text)
    return failed


def test_the_judge_gives_the_solution_full_marks_and_specific_mistakes_lose_specific_properties():
    unit = units.UNITS["online_softmax.ipynb"]
    summary = preprocessor.judge_notebook(notebooks.read(NOTEBOOK), unit, "alice", "salt", "auto")
    assert all(score == points for score, points in summary["scores"].values()), summary
    nb = notebooks.read(NOTEBOOK)
    for name in ("os_three_sweeps", "ms_no_guard", "ws_whole_row_on_chip"):
        impl = wrong.parse(WRONG / f"{name}.py")
        nb = notebooks.with_cell(nb, impl.replaces, impl.body)
    summary = preprocessor.judge_notebook(nb, unit, "alice", "salt", "auto")
    failed = failed_properties(nb)
    assert failed["test_online_softmax"] == [unit04.SWEEPS]
    assert failed["test_merge_states"] == [unit04.EMPTY]
    assert failed["test_weighted_sum"] == [unit04.ONE_PASS]
    assert summary["scores"]["test_online_softmax"] == [2.4, 3.0]


def test_a_one_shot_softmax_disguised_as_two_sweeps_earns_no_more_than_an_honest_one():
    """Issue 45, principle 6 (the red team's `os_one_shot_over_uncounted_data`): the counted tensor lived in the
    child, so a softmax of whole rows read through its private data, with two empty sweeps for the counter, earned
    full marks where the honest whole-row softmax earns 4 of 5. The tensor now stays in the judge's process."""
    attack = wrong.parse(REDTEAM / "os_one_shot_over_uncounted_data.py", "redteam")
    nb = notebooks.with_cell(notebooks.read(NOTEBOOK), attack.replaces, attack.body)
    unit = units.UNITS["online_softmax.ipynb"]
    child = Child(module_source(nb, unit.student_cells, unit.preamble), {}, "auto")
    try:
        j = judge_cell(unit.cells["test_online_softmax"], child, seed=1, on_gpu=False)
    finally:
        child.close()
    assert 5 * j.share() <= attack.caps["test_online_softmax"] and not j.passed(unit04.SWEEPS), j.cases


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("method", softmax_kernels.METHODS)
def test_kernels_on_long_rows_on_the_gpu(method, dtype):
    x = (torch.randn(64, 2**17 + 3, device="cuda") * 4).to(dtype)
    x[0] = float("-inf")
    x[1, :5000] = float("-inf")
    y = softmax_kernels.row_softmax(x, method, block=2048)
    expected = torch.softmax(x.double(), dim=-1).nan_to_num(0.0)
    assert torch.allclose(y.double(), expected, atol=1e-6, rtol=TOLERANCE[dtype])


@pytest.mark.gpu
def test_benchmark_writes_its_results(tmp_path):
    softmax_kernels.main(["--out", str(tmp_path), "--elements", str(2**22)])
    records = json.loads((tmp_path / "softmax_passes.json").read_text())["records"]
    assert len(records) == 7
    assert all(
        0 < r["speedup_range"][0] <= r["speedup_online_over_safe"] <= r["speedup_range"][1] for r in records
    )
    assert (tmp_path / "softmax_passes.png").stat().st_size > 0


class RecordedSweeps:
    """Stands in for the judge's counted tensor: serves nothing; its address is the tensor the judge put there, so
    a recorded call reads as the student's function receives it."""

    def __init__(self, work, x):
        self.address = x

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def result(self):
        return None, None, None, None


def test_each_exercise_states_the_dtypes_and_shapes_of_its_judges_cases(tmp_path, monkeypatch):
    """Spec = judge: the dtypes an exercise's text names are exactly those its judge sends, and the shapes it
    allows (leading dims or none, blocks longer than the row, any shape of states) occur among the judge's cases."""
    monkeypatch.setattr(unit04, "SweepService", RecordedSweeps)
    merges = {name: getattr(reference, name) for name in ("merge_softmax_states", "merge_attention_states")}
    # The merges answered by the reference, so the judge reaches its tree merges (states of two dims).
    calls = calls_by_function(unit04.UNIT, tmp_path, merges, seeds=(1,))
    for function in (
        "online_softmax",
        "merge_softmax_states",
        "merge_attention_states",
        "online_softmax_weighted_sum",
    ):
        assert dtypes_sent(calls[function]) == dtypes_stated(exercise_text(NOTEBOOK, function)), function
    text = exercise_text(NOTEBOOK, "online_softmax")
    assert "shape (..., n)" in text and "may exceed n" in text
    softmax_inputs = calls["online_softmax"]
    assert len({x.dim() for x, _ in softmax_inputs}) >= 2
    assert any(block > x.shape[-1] for x, block in softmax_inputs)
    assert any(x.shape[-1] % block for x, block in softmax_inputs)
    text = exercise_text(NOTEBOOK, "online_softmax_weighted_sum")
    assert "(possibly none)" in text
    weighted = [(s, v) for s, v, _ in calls["online_softmax_weighted_sum"]]
    assert {s.dim() for s, _ in weighted} >= {2, 3}
    assert all(s.shape[:-2] == v.shape[:-2] and s.shape[-1] == v.shape[-2] for s, v in weighted)
    assert "any shape" in exercise_text(NOTEBOOK, "merge_softmax_states")
    assert len({args[0].dim() for args in calls["merge_softmax_states"]}) >= 2
    assert "`m1.shape + (d,)`" in exercise_text(NOTEBOOK, "merge_attention_states")
    for o1, m1, l1, o2, m2, l2 in calls["merge_attention_states"]:
        assert o1.shape[:-1] == m1.shape == l1.shape and o2.shape[:-1] == m2.shape == l2.shape
        assert o1.dtype == m1.dtype == l1.dtype == o2.dtype


def test_the_speedup_plot_shows_the_spread_over_rounds():
    """The GPU benchmark's speedup is a median over rounds; the plot draws the rounds' range beside it."""
    records = [
        {"n": n, "ms": dict.fromkeys(("safe", "online", "torch"), 1.0), "speedup_online_over_safe": 1.2,
         "speedup_range": [1.1, 1.3]}
        for n in (4096, 16384)
    ]  # fmt: skip
    fig = softmax_kernels.plot(records)
    (bars,) = fig.axes[1].containers
    assert [tuple(seg[:, 1]) for seg in bars.lines[2][0].get_segments()] == [(1.1, 1.3), (1.1, 1.3)]


def test_scores_of_1e4_allow_one_rounding_of_each_score_and_catch_overflow():
    """Base-2 exponentials (the Triton kernels' exp2 of s·log₂e) round each float32 score once more: at ±1e4
    that moved O past 1e-5 + 1e-4·|O| on some draws (a legitimate variant lost the property for one salt in
    seven), never past the judge's rounding allowance; exponentials without the maximum overflow."""
    generator, worst, within = torch.Generator().manual_seed(0), 0.0, True
    for _ in range(100):
        scores = (torch.rand(9, 201, generator=generator) * 2 - 1) * 1e4
        values = torch.randn(201, 8, generator=generator)
        scaled = scores * math.log2(math.e)
        p = torch.exp2(scaled - scaled.amax(dim=-1, keepdim=True))
        error = (p @ values) / p.sum(dim=-1, keepdim=True) - torch.softmax(
            scores.double(), -1
        ) @ values.double()
        exact = (torch.softmax(scores.double(), -1) @ values.double()).abs()
        worst = max(worst, float((error.abs() - (1e-5 + 1e-4 * exact)).max()))
        allowed = 1e-5 + unit04.rounding_allowance(scores, values) + 1e-4 * exact
        within &= bool((error.abs() <= allowed).all())
    assert worst > 0 and within
    overflowing = torch.exp(scores) @ values / torch.exp(scores).sum(dim=-1, keepdim=True)
    assert not overflowing.isfinite().all()


def test_a_read_of_broadcast_index_tensors_is_refused_before_the_judge_makes_it(tmp_path):
    """Red team (2026-11-29): two index tensors of 3,000 elements each, shaped (N, 1) and (1, N), sent in one
    request (48 KB) made the judge's own process build N² = 9 million ids, reads and a tile of a 4×8 tensor (at
    N = 100,000 some 80 GB, outside the pair's sandbox); a read selects at most the tensor's elements, so more is
    refused (before: answered with a 3000×3000 tile)."""
    from course.judge.services import SweepService

    n = 3000
    rows = {"tensor": "rows"}
    index = {"tuple": [{"tensor": "rows"}, {"tensor": "columns"}]}
    tensors = {"rows": torch.zeros(n, 1, dtype=torch.int64), "columns": torch.zeros(1, n, dtype=torch.int64)}
    with SweepService(tmp_path, torch.ones(4, 8)) as counted:
        with pytest.raises(ValueError, match="more elements than the tensor"):
            counted.answer({"op": "read", "index": index}, tensors)
        assert counted.answer({"op": "read", "index": rows}, {"rows": torch.tensor([0, 3])})[1][
            "tile"
        ].shape == (2, 8)
    assert int(counted.result()[0].sum()) == 16
