"""Unit 03: the notebook runs top to bottom (every self-check passes, nothing on stderr in test cells); the
formulas equal what the counters count on the course's kernels and on the reference; the judge gives the
solution full marks and takes specific properties from specific mistakes; the helpers of utils.tiling work.
GPU-only: tiles that do not fit raise OutOfResources, the kernels agree with float64 and the counter on a
GPU, and the block-size experiment writes its results."""

import importlib.util
import json

import pytest
import torch
from exercise_spec import calls_by_function, dtypes_sent, dtypes_stated, exercise_text
from notebook_run import ROOT, execute, judged_self_checks, stdout_of

import utils
from course import notebooks, wrong
from course.judge import preprocessor, unit03, units
from course.judge.core import Cell, Judgement
from course.reference import tiling as reference
from utils import grading, runtime, tiling
from utils.traffic import SlowMemory

NOTEBOOK = ROOT / "source" / "03_tiling" / "tiling.ipynb"
TESTS = {"test_tiled_matmul", "test_matmul_loads", "test_best_tile"}


def test_unit03_executes_cleanly(tmp_path):
    nb = execute(NOTEBOOK, tmp_path)
    assert set(judged_self_checks(nb, "03")) == TESTS
    text = "".join(stdout_of(c) for c in nb.cells if c.cell_type == "code")
    assert text.count("✓") == 9 and "✗" not in text  # formula = counter: 5 matmul checks, 4 block sizes
    assert "2N³ = 27,648" in text and "loads 27,648" in text
    slider = next(c for c in nb.cells if "loop_slider" in c.source)
    assert any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in slider.outputs)


@pytest.mark.parametrize(
    ("m", "n", "k", "blocks"),
    [
        (77, 45, 53, (16, 32, 16)),
        (9, 130, 21, (16, 64, 32)),
        (64, 64, 64, (32, 32, 32)),
        (5, 7, 3, (64, 16, 16)),
    ],
)
def test_loads_formula_is_what_the_triton_counter_counts(m, n, k, blocks):
    a, b = torch.randn(m, k), torch.randn(k, n)
    c, traffic = tiling.blocked_matmul(a, b, *blocks, count=True)
    assert torch.allclose(c, a @ b, atol=1e-4)
    loads = (traffic.read_bytes("A") // 4, traffic.read_bytes("B") // 4)
    assert loads == reference.matmul_hbm_loads(m, n, k, *blocks)
    assert traffic.written_bytes("C") == 4 * m * n and traffic.written_bytes() == 4 * m * n


@pytest.mark.parametrize(("m", "n", "k", "blocks"), [(45, 31, 77, (8, 12, 10)), (13, 3, 50, (4, 7, 64))])
def test_loads_formula_is_what_the_slow_memory_counts_on_the_reference(m, n, k, blocks):
    for dtype in (torch.float32, torch.float16):
        a, b = torch.randn(m, k).to(dtype), torch.randn(k, n).to(dtype)
        mem = SlowMemory(A=a, B=b, C=torch.full((m, n), float("nan"), dtype=dtype))
        reference.tiled_matmul(mem, *blocks)
        stats = mem.stats()
        assert (stats["A"]["read_elements"], stats["B"]["read_elements"]) == reference.matmul_hbm_loads(
            m, n, k, *blocks
        )
        assert bool((mem.write_map("C") == 1).all()) and int(mem.read_map("C").max()) == 0
        expected = a.double() @ b.double()
        if dtype == torch.float32:
            grading.assert_close(mem.tensor("C"), expected, "C", atol=1e-4, rtol=1e-5)
        else:  # float32 accumulation, one rounding: within one float16 ulp (the judge's rule)
            assert bool(
                ((mem.tensor("C").double() - expected).abs() <= tiling.float16_matmul_tolerance(a, b)).all()
            )


def test_float16_partial_products_break_the_one_ulp_rule():
    """The judge's float16 tolerance separates float32 accumulation from float16 partial products."""
    torch.manual_seed(0)
    a, b = torch.randn(70, 151).half(), torch.randn(151, 60).half()
    expected = a.double() @ b.double()
    partial = sum((a[:, p : p + 16] @ b[p : p + 16]).float() for p in range(0, 151, 16)).half()
    assert bool(((partial.double() - expected).abs() > tiling.float16_matmul_tolerance(a, b)).any())
    assert tiling.float16_ulp(torch.tensor([1.0, 3.0, 1e-6])).tolist() == [2**-10, 2**-9, 2**-24]


@pytest.mark.parametrize(
    ("bh", "n_q", "n_k", "d", "dtype", "blocks"),
    [
        (2, 70, 70, 16, torch.float32, (16, 32)),
        (1, 33, 100, 32, torch.float16, (32, 16)),
        (1, 100, 33, 16, torch.float32, (16, 64)),
    ],
)
def test_three_pass_kernel_is_exact_and_moves_the_formulas_bytes(bh, n_q, n_k, d, dtype, blocks):
    q = torch.randn(bh, n_q, d).to(dtype)
    k, v = (torch.randn(bh, n_k, d).to(dtype) for _ in range(2))
    out, traffic = tiling.three_pass_attention(q, k, v, *blocks, count=True)
    expected, _ = grading.reference_attention(q, k, v)
    tolerance = 1e-5 if dtype == torch.float32 else 2e-3
    grading.assert_close(out, expected, "O", atol=tolerance, rtol=tolerance)
    assert traffic.total_bytes() == bh * tiling.three_pass_bytes(n_q, n_k, d, dtype, blocks[1])
    assert traffic.read_bytes("K") == 3 * traffic.read_bytes("V")  # K in all three passes, V in the last


def test_best_tile_is_the_largest_fitting_power_of_two_pair():
    assert reference.best_tile(228 * 1024, 64, torch.float16) == (256, 64)
    assert reference.best_tile(100 * 1024, 128, torch.float32) == (64, 16)
    assert (
        reference.best_tile(reference.on_chip_bytes(16, 16, 64, torch.float16) - 1, 64, torch.float16) is None
    )
    for sram, d, dtype in [
        (50_000, 32, torch.float16),
        (123_456, 64, torch.float32),
        (260_000, 128, torch.bfloat16),
    ]:
        tiles = unit03.fitting(sram, d, dtype)
        best = reference.best_tile(sram, d, dtype)
        assert best == max(tiles, key=lambda t: (t[0] * t[1], t[0]))
        assert reference.on_chip_bytes(*best, d, dtype) <= sram
    # the stated budget, term by term: Q, K, V in the inputs' dtype, O and S in float32, m and l
    assert reference.on_chip_bytes(32, 16, 8, torch.float16) == 2 * 8 * (32 + 32) + 4 * (
        32 * 8 + 32 * 16 + 64
    )


def judgement(cell: str, props: dict) -> Judgement:
    return Judgement(Cell(cell, props, check=lambda j: None), child=None, seed=1, on_gpu=False)


@pytest.mark.parametrize(
    ("reads_a", "reads_b", "reads_c", "writes_c", "extra", "passes"),
    [
        (2, 3, 0, 1, (), True),
        (1, 3, 0, 1, (), False),  # A reused across column tiles: fewer loads than the formula
        (2, 1, 0, 1, (), False),  # a panel of B kept on chip
        (2, 3, 2, 3, (), False),  # C accumulated in slow memory
        (2, 3, 0, 1, (("tmp", 40, 40),), False),  # an intermediate in slow memory
    ],
)
def test_the_judge_decides_the_matmul_traffic_from_the_element_counts(
    reads_a, reads_b, reads_c, writes_c, extra, passes
):
    m, n, k, blocks = 9, 12, 5, (4, 8, 2)  # ⌈12/8⌉ = 2 reads of A, ⌈9/4⌉ = 3 reads of B
    stats = (("A", 1, 0), ("B", 1, 0), ("C", 0, 1), *extra)
    j = judgement("test_tiled_matmul", {unit03.TRAFFIC: 1})
    with j.case(unit03.TRAFFIC, "case"):
        unit03.check_traffic(
            j,
            (m, n, k),
            blocks,
            torch.full((m, k), reads_a),
            torch.full((k, n), reads_b),
            torch.full((m, n), reads_c),
            torch.full((m, n), writes_c),
            stats,
            "case",
        )
    assert j.passed(unit03.TRAFFIC) == passes, j.cases


def scores_with(name: str) -> dict:
    unit = units.UNITS["tiling.ipynb"]
    impl = wrong.parse(ROOT / "course" / "wrong" / "03_tiling" / name)
    nb = notebooks.with_cell(notebooks.read(NOTEBOOK), impl.replaces, impl.body)
    return preprocessor.judge_notebook(nb, unit, "alice", "salt", "auto")["scores"]


def test_the_judge_gives_full_marks_and_takes_the_right_properties():
    unit = units.UNITS["tiling.ipynb"]
    summary = preprocessor.judge_notebook(notebooks.read(NOTEBOOK), unit, "alice", "salt", "auto")
    assert all(score == points for score, points in summary["scores"].values()), summary
    # C accumulated in slow memory: float32 values stay right; the traffic property (1 of 3) is lost, and
    # the float16 one (0.5) too, since every partial sum is rounded to float16 when it is stored.
    assert scores_with("matmul_accumulates_in_slow_memory.py")["test_tiled_matmul"] == [1.5, 3.0]
    # Float16 partial products: only the float16 property (0.5 of 3) is lost.
    assert scores_with("matmul_half_partial_products.py")["test_tiled_matmul"] == [2.5, 3.0]


def test_loop_steps_and_pictures():
    assert tiling.loop_steps(40, 20, 16, 16, "q_outer") == [(0, 0), (0, 1), (1, 0), (1, 1), (2, 0), (2, 1)]
    assert tiling.loop_steps(40, 20, 16, 16, "kv_outer")[:3] == [(0, 0), (1, 0), (2, 0)]
    with pytest.raises(ValueError, match="order"):
        tiling.loop_steps(8, 8, 4, 4, "diagonal")
    fig = tiling.loop_strip(96, 128, 16, 32, 32, frames=4)
    assert len(fig.axes) == 4 * 5
    s_panel = fig.axes[3 * 5 + 3]  # last frame's S panel: every S tile but the current one is done
    assert len(s_panel.patches) == 1 + 12
    widget = tiling.loop_slider(96, 128, 16, 32, 32)
    if importlib.util.find_spec("ipywidgets"):
        assert widget.children[0].max == 11
    else:  # the static strip above stands in for the slider
        assert widget is None


def test_argument_checks():
    with pytest.raises(ValueError, match="powers of two"):
        tiling.blocked_matmul(torch.randn(8, 8), torch.randn(8, 8), 24, 16, 16)
    with pytest.raises(ValueError, match="shapes do not fit"):
        tiling.blocked_matmul(torch.randn(8, 8), torch.randn(9, 8))
    assert tiling.shared_memory_per_block() is None or runtime.mode().is_gpu
    records = tiling.block_size_sweep([16, 32], heads=2, n=64, d=16, dtype=torch.float32)
    assert [r["bytes"] for r in records] == [
        2 * tiling.three_pass_bytes(64, 64, 16, torch.float32, b) for b in (16, 32)
    ]


@pytest.mark.gpu
def test_tiles_that_do_not_fit_raise_out_of_resources_on_a_gpu():
    from triton.runtime.errors import OutOfResources

    assert tiling.try_tile(64) is None
    assert isinstance(tiling.try_tile(256), OutOfResources)
    assert tiling.shared_memory_per_block() > 48 * 1024


@pytest.mark.gpu
def test_kernels_on_a_gpu_agree_with_float64_and_the_counter():
    a, b = torch.randn(300, 200, device="cuda").half(), torch.randn(200, 150, device="cuda").half()
    c, traffic = tiling.blocked_matmul(a, b, 64, 32, 32, count=True)  # counted in an interpreter child
    grading.assert_close(
        tiling.blocked_matmul(a, b, 64, 32, 32), a.double() @ b.double(), "C", atol=2e-2, rtol=2e-3
    )
    assert (traffic.read_bytes("A") // 2, traffic.read_bytes("B") // 2) == reference.matmul_hbm_loads(
        300, 150, 200, 64, 32, 32
    )
    q, k, v = (torch.randn(4, 1000, 64, device="cuda").half() for _ in range(3))
    expected, _ = grading.reference_attention(q, k, v)
    for block_k in (16, 64, 256):
        grading.assert_close(
            tiling.three_pass_attention(q, k, v, 64, block_k), expected, "O", atol=2e-3, rtol=2e-3
        )
    _, counted = tiling.three_pass_attention(q[:1, :200], k[:1, :200], v[:1, :200], 64, 64, count=True)
    assert counted.total_bytes() == tiling.three_pass_bytes(200, 200, 64, torch.float16, 64)


@pytest.mark.gpu
def test_block_size_experiment_writes_its_results(tmp_path):
    tiling.main([str(tmp_path), "--heads", "8", "--n", "1024"])
    results = json.loads((tmp_path / "block_size.json").read_text())
    assert results["device"] == utils.mode().name
    assert all(0 < r["time_range_ms"][0] <= r["time_ms"] <= r["time_range_ms"][1] for r in results["records"])
    assert (tmp_path / "block_size.png").stat().st_size > 10_000


class RecordedSlowMemory:
    """Stands in for the judge's slow memory: keeps the tensors the judge puts there, runs nothing."""

    def __init__(self, work, **tensors):
        self.tensors, self.address = tensors, "recorded"

    def __enter__(self):
        RECORDED.append(self.tensors)
        return self

    def __exit__(self, *exc):
        return False

    def result(self, *names):
        return None, (None, None), None, None, []


RECORDED: list[dict] = []


def test_each_exercise_states_the_dtypes_and_shapes_of_its_judges_cases(tmp_path, monkeypatch):
    """Spec = judge: the dtypes an exercise's text names are exactly those its judge uses, and the shapes it allows
    (remainder tiles, m ≠ n, tiles larger than the matrices, positive ints) occur among the judge's cases."""
    RECORDED.clear()
    monkeypatch.setattr(unit03, "SlowMemoryService", RecordedSlowMemory)
    calls = calls_by_function(unit03.UNIT, tmp_path)
    text = exercise_text(NOTEBOOK, "tiled_matmul")
    spec = text.split("Tolerances:")[0]  # the tolerances compare with float64 products
    assert {str(t["A"].dtype).removeprefix("torch.") for t in RECORDED} == dtypes_stated(spec)
    assert all(t["A"].dtype == t["B"].dtype == t["C"].dtype for t in RECORDED)
    assert "need not be multiples of the tiles" in text
    cases = [
        (*t["A"].shape, t["B"].shape[1], args[1:])
        for t, args in zip(RECORDED, calls["tiled_matmul"], strict=True)
    ]
    assert any(m % bm and k % bk and n % bn for m, k, n, (bm, bn, bk) in cases)
    assert any(m != n for m, _, n, _ in cases)
    text = exercise_text(NOTEBOOK, "matmul_hbm_loads")
    assert not dtypes_stated(text) and not dtypes_sent(calls["matmul_hbm_loads"])
    assert "All arguments are positive ints" in text and "tiles may be larger than the matrices" in text
    loads = calls["matmul_hbm_loads"]
    assert all(type(x) is int and x > 0 for args in loads for x in args)
    assert any(bm > m and bn > n and bk > k for m, n, k, bm, bn, bk in loads)
    assert dtypes_sent(calls["best_tile"]) == dtypes_stated(exercise_text(NOTEBOOK, "best_tile"))


def test_the_block_size_plot_shows_the_spread_of_the_times():
    """On a GPU the sweep's time is the median of the repeats; the plot draws their range beside it."""
    records = [
        {"block_k": b, "bytes": 1000 // b, "time_ms": 2.0, "time_range_ms": [1.5, 3.0]} for b in (16, 32)
    ]
    ax = tiling.plot_block_size(records)
    (bars,) = ax.figure.axes[1].containers
    assert [tuple(seg[:, 1]) for seg in bars.lines[2][0].get_segments()] == [(1.5, 3.0), (1.5, 3.0)]
