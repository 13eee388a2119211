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
