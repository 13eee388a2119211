"""utils.plotting: measurement plots and the tile-visit picture."""

import io
import warnings

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
from matplotlib import font_manager  # noqa: E402
from matplotlib.ft2font import FT2Font  # noqa: E402

from utils import plotting  # noqa: E402


def _records(gpu: bool):
    rows = []
    for name, per_n in (("naive", 4.0), ("flash", 1.0)):
        for n in (128, 256, 512):
            oom = name == "naive" and n == 512
            rows.append(
                {
                    "name": name,
                    "n": n,
                    "status": "oom" if oom else "ok",
                    "time_ms": None if oom else per_n * n / 128,
                    "peak_memory_bytes": None if oom else int(per_n * n * n),
                    "device": "NVIDIA H100" if gpu else "CPU (Triton interpreter)",
                    "gpu": gpu,
                }
            )
    return rows


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.mark.parametrize("gpu", [True, False])
def test_plot_vs_n_draws_lines_log_axes_and_labels(gpu):
    ax = plotting.plot_vs_n(_records(gpu), "peak_memory_bytes", title="memory")
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert "N" in ax.get_xlabel() and "MiB" in ax.get_ylabel()
    assert ("peak memory" in ax.get_ylabel()) == gpu
    assert ("H100" in ax.get_title()) == gpu and ("CPU" in ax.get_title()) == (not gpu)
    assert "Triton" not in ax.get_title()  # no Triton ran: the CPU mode's name is not the device (issue 34)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["naive (OOM ≥ N=512)", "flash"]
    naive_line = ax.get_lines()[0]
    assert list(naive_line.get_xdata()) == [128, 256]
    assert list(naive_line.get_ydata()) == pytest.approx([4 * 128 * 128 / 2**20, 4 * 256 * 256 / 2**20])


def test_plot_vs_n_time_units_and_bad_input():
    ax = plotting.plot_vs_n(_records(True), "time_ms")
    assert "ms" in ax.get_ylabel()
    with pytest.raises(ValueError, match="metric"):
        plotting.plot_vs_n(_records(True), "flops")
    with pytest.raises(ValueError, match="no records"):
        plotting.plot_vs_n([], "time_ms")


def test_labels_fall_back_to_english_without_cjk_font(monkeypatch):
    monkeypatch.setattr(plotting, "cjk_font", lambda: None)
    assert plotting.text("时间", "time") == "time"
    monkeypatch.setattr(plotting, "cjk_font", lambda: "Noto Sans CJK SC")
    assert plotting.text("时间", "time") == "时间 · time"


def test_cjk_font_is_installed_or_none():
    font = plotting.cjk_font()
    installed = {f.name for f in matplotlib.font_manager.fontManager.ttflist}
    assert font is None or font in installed


def _draws_chinese(path: str) -> bool:
    try:
        return FT2Font(path).get_char_index(ord("中")) != 0
    except (OSError, RuntimeError):
        return False


@pytest.fixture
def fresh_machine_fonts(monkeypatch):
    """matplotlib as on a fresh machine: none of its fonts draws Chinese (the packaged font not yet added)."""
    manager = font_manager.fontManager
    monkeypatch.setattr(manager, "ttflist", [f for f in manager.ttflist if not _draws_chinese(f.fname)])
    monkeypatch.setitem(matplotlib.rcParams, "font.sans-serif", list(matplotlib.rcParams["font.sans-serif"]))
    monkeypatch.setitem(matplotlib.rcParams, "font.family", list(matplotlib.rcParams["font.family"]))
    plotting.cjk_font.cache_clear()
    manager._findfont_cached.cache_clear()
    yield
    plotting.cjk_font.cache_clear()
    manager._findfont_cached.cache_clear()


def missing_glyphs() -> list[str]:
    """matplotlib's missing-glyph warnings while a figure with bilingual labels is drawn."""
    ax = plotting.axes()
    ax.set_xlabel(plotting.text("序列长度 N", "sequence length N"))
    ax.set_title(plotting.text("峰值显存（10⁸ 字节）", "peak memory (10⁸ bytes)"))  # no CJK font has ⁸
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ax.figure.savefig(io.BytesIO(), format="png")
    return [str(w.message) for w in caught if "missing from font" in str(w.message)]


def test_the_packaged_cjk_font_makes_plots_bilingual_without_a_system_font(fresh_machine_fonts):
    assert plotting.packaged_cjk_font() is not None, "noto-cjk-sans-otc is a dependency of the course"
    font = plotting.cjk_font()
    assert font is not None and "CJK" in font
    assert plotting.text("时间", "time") == "时间 · time"
    assert missing_glyphs() == []


def test_without_any_cjk_font_labels_are_english_and_draw_every_glyph(fresh_machine_fonts, monkeypatch):
    monkeypatch.setattr(plotting, "packaged_cjk_font", lambda: None)
    assert plotting.cjk_font() is None and plotting.text("时间", "time") == "time"
    assert missing_glyphs() == []


@pytest.mark.parametrize("is_causal", [False, True])
def test_tile_visits_cover_the_matrix_with_true_tail_sizes(is_causal):
    n_q, n_k, bq, bk = 70, 45, 32, 16
    ax = plotting.plot_tile_visits(n_q, n_k, bq, bk, is_causal=is_causal)
    rects = ax.patches
    assert len(rects) == 3 * 3  # ceil(70/32) × ceil(45/16)
    assert sum(r.get_width() * r.get_height() for r in rects) == n_q * n_k
    assert sorted({r.get_height() for r in rects}) == [6, 32]
    assert sorted({r.get_width() for r in rects}) == [13, 16]
    numbers = [int(t.get_text()) for t in ax.texts]
    assert numbers == list(range(1, len(numbers) + 1))
    if not is_causal:
        assert len(numbers) == 9
    else:
        # Query tiles [0,32), [32,64), [64,70); key tiles [0,16), [16,32), [32,45): only key tile
        # [32,45) for query rows 0..31 lies entirely above the diagonal.
        assert len(numbers) == 8


def test_tile_status_classification():
    assert plotting._tile_status(range(32, 64), range(0, 16), True) == "full"
    assert plotting._tile_status(range(0, 32), range(16, 32), True) == "partial"
    assert plotting._tile_status(range(0, 32), range(32, 45), True) == "skipped"
    assert plotting._tile_status(range(0, 32), range(32, 45), False) == "full"
    with pytest.raises(ValueError):
        plotting.plot_tile_visits(0, 4, 2, 2)


# --- every figure the units draw (issue 47 item 3) --------------------------------------------------------------

# The figure functions of utils (found by `figure_functions`) and small inputs for each. The sliders
# (`explore`, `loop_slider`) draw their frames with the functions their static strips use.
SLIDERS = {"utils.online_softmax_plots.explore", "utils.tiling.loop_slider"}
FIGURES = {
    "utils.plotting.plot_vs_n": lambda: plotting.plot_vs_n(_records(False), "time_ms"),
    "utils.plotting.plot_tile_visits": lambda: plotting.plot_tile_visits(70, 45, 32, 16, is_causal=True),
    "utils.roofline.plot_roofline": lambda: _roofline(),
    "utils.roofline.plot_bandwidth_sweep": lambda: _module("roofline").plot_bandwidth_sweep(
        [(2**16, 4e10), (2**22, 2e10), (2**26, 1e10)]
    ),
    "utils.tiling.plot_block_size": lambda: _module("tiling").plot_block_size(
        [
            {"block_k": b, "bytes": 2**20 * 64 // b, "time_ms": 2.0 / b, "time_range_ms": [1.5 / b, 2.5 / b]}
            for b in (16, 32, 64)
        ]
    ),  # fmt: skip
    "utils.tiling.loop_strip": lambda: _module("tiling").loop_strip(70, 45, 16, 32, 16),
    "utils.online_softmax_plots.strip": lambda: _module("online_softmax_plots").strip(_torch().randn(20), 4),
    "utils.softmax_kernels.plot": lambda: _module("softmax_kernels").plot(
        [
            {
                "n": n,
                "ms": {"safe": n / 1e3, "online": n / 1.3e3, "torch": n / 1.5e3},
                "speedup_online_over_safe": 1.3,
                "speedup_range": [1.2, 1.4],
            }
            for n in (1024, 4096)
        ]
    ),  # fmt: skip
    "utils.hopper_plots.plot_schedules": lambda: _module("hopper_plots").plot_schedules(tiles=2),
    "utils.hopper_plots.plot_tile_owners": lambda: _module("hopper_plots").plot_tile_owners(
        [0, 1, 2, 3, 0, 1], 4
    ),
    "utils.snapshots.plot_timelines": lambda: _module("snapshots").plot_timelines(
        {
            plotting.text("只做前向", "forward only"): [0, 2**20, 2**21, 0],
            plotting.text("一步训练", "training step"): [0, 2**21, 2**22, 2**20],
        },
        "N = 2048 (" + plotting.text("CPU（小规模）", "CPU (small sizes)") + ")",
    ),  # fmt: skip
}


def _module(name: str):
    import importlib

    return importlib.import_module(f"utils.{name}")


def _torch():
    import torch

    return torch


def _roofline():
    roofline = _module("roofline")
    ceilings = roofline.Ceilings("CPU", "float32", 1e11, 2e10)
    return roofline.plot_roofline(ceilings, [("naive", 2.0, 1e9, (8e8, 1.1e9)), ("flash", 50.0, None)])


def figure_functions() -> set[str]:
    """utils' public functions that make a figure or axes (they call plt.subplots, plt.figure or the course's
    axes helpers), less `utils.plotting.axes` itself."""
    import ast
    from pathlib import Path

    draws = {"subplots", "figure", "axes", "_new_axes", "_figure"}
    root = Path(plotting.__file__).parent
    found = set()
    for path in root.rglob("*.py"):
        module = ".".join(path.relative_to(root.parent).with_suffix("").parts)
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
                calls = {
                    c.func.attr if isinstance(c.func, ast.Attribute) else getattr(c.func, "id", None)
                    for c in ast.walk(node)
                    if isinstance(c, ast.Call)
                }
                if calls & draws:
                    found.add(f"{module}.{node.name}")
    return found - {"utils.plotting.axes"}


def title_boxes(fig) -> list[tuple[object, str, object]]:
    """(axes, text, drawn box) of every visible title of the figure's axes."""
    renderer = fig.canvas.get_renderer()
    return [
        (ax, t.get_text(), t.get_window_extent(renderer))
        for ax in fig.axes
        for t in (ax.title, ax._left_title, ax._right_title)
        if t.get_text() and t.get_visible()
    ]


def overlapping_titles(fig) -> list[tuple[str, str]]:
    """Pairs of titles of different axes whose drawn boxes overlap."""
    boxes = title_boxes(fig)
    return [
        (a, b)
        for i, (ax_a, a, box_a) in enumerate(boxes)
        for ax_b, b, box_b in boxes[i + 1 :]
        if ax_a is not ax_b and box_a.overlaps(box_b)
    ]


def clipped_titles(fig) -> list[str]:
    """Titles running past the figure's edges (cut off in the saved picture)."""
    edge = fig.bbox
    return [
        text
        for _, text, box in title_boxes(fig)
        if box.x0 < edge.x0 - 1 or box.x1 > edge.x1 + 1 or box.y1 > edge.y1 + 1
    ]


def test_every_figure_function_of_utils_is_rendered_here():
    assert figure_functions() == set(FIGURES) | SLIDERS


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_every_figure_draws_every_glyph_and_no_two_titles_overlap(name):
    """Drawn from matplotlib's default settings, as a fresh kernel starts: a Chinese label drawn without the
    course's CJK font warns of a missing glyph (the schedule diagram's labels were boxes); unit 09's two memory
    timelines had titles running into each other, and the schedules' titles ran past the figure's right edge. Each unit's notebook run also fails on a missing glyph
    (tests/notebook_run.py), for the figures its cells draw themselves."""
    with plt.rc_context(matplotlib.rcParamsDefault), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        made = FIGURES[name]()
        fig = made if isinstance(made, matplotlib.figure.Figure) else made.figure
        fig.canvas.draw()
        assert not overlapping_titles(fig), overlapping_titles(fig)
        assert not clipped_titles(fig), clipped_titles(fig)
    assert not [str(w.message) for w in caught if "missing from font" in str(w.message)]


def test_a_notebook_run_fails_on_a_figure_with_missing_glyphs(tmp_path):
    """Every unit's notebook run (`notebook_run.execute`) fails when a cell's figure draws Chinese in a font
    without it, so the figures the cells draw themselves are checked where each unit's notebook is run."""
    import nbformat
    from notebook_run import execute

    cell = (
        "import utils\nimport matplotlib.pyplot as plt\n"
        "plt.rcParams['font.sans-serif'] = ['DejaVu Sans']  # no Chinese in it\n"
        "plt.plot([1, 2])\nplt.title('峰值')\nplt.show()"
    )
    notebook = tmp_path / "boxes.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(cell)]), notebook)
    with pytest.raises(AssertionError, match="missing from font"):
        execute(notebook, tmp_path)
