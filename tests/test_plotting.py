"""utils.plotting: measurement plots and the tile-visit picture."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

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
