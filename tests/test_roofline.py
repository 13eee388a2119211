"""utils.roofline: the ceilings, what the machine reports, and the plots (measurements kept tiny)."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import torch  # noqa: E402

from utils import roofline  # noqa: E402


def test_ridge_is_peak_over_bandwidth():
    ceilings = roofline.Ceilings("test machine", "float32", 1e12, 1e11)
    assert ceilings.ridge == 10
    assert "ridge 10 FLOP/B" in str(ceilings)


def test_machine_description_names_the_memory_levels():
    described = roofline.describe_machine()
    assert described["name"]
    if not torch.cuda.is_available():
        assert described["threads (torch)"] == torch.get_num_threads()
        sizes = [v for k, v in described.items() if "cache" in k]
        assert all(isinstance(v, int) and v > 0 for v in sizes)


def test_measurements_are_positive_rates():
    assert roofline.copy_bandwidth(2**16, repeats=2) > 0
    assert roofline.matmul_flops(64, torch.float32, repeats=2) > 0
    sweep = roofline.bandwidth_sweep([2**12, 2**14], budget_bytes=1e6)
    assert [size for size, _ in sweep] == [2**12, 2**14] and all(rate > 0 for _, rate in sweep)


def test_plots_draw_the_roof_and_the_points():
    ceilings = roofline.Ceilings("test machine", "float32", 1e12, 1e11)
    ax = roofline.plot_roofline(ceilings, [("softmax", 0.6, 5e10), ("matmul", 100.0, None)])
    x, y = ax.lines[0].get_data()
    assert y.max() == 1e12 and abs(y[0] - x[0] * 1e11) < 1e-3 * y[0]  # flat roof, memory slope
    assert {t.get_text() for t in ax.texts} >= {"softmax", "matmul"}
    roofline.plot_bandwidth_sweep([(2**12, 1e10), (2**20, 2e10)])
    plt.close("all")


def test_each_point_has_its_prediction_drawn_and_a_point_above_the_roof_is_named():
    """Issue 34: the text says squares are the model's prediction, so every point gets one, measured or not; a
    measurement above the roof is named (the notebook explains it) and ringed."""
    ceilings = roofline.Ceilings("test machine", "float32", 1e12, 1e11)
    points = [
        ("softmax", 0.6, 5e10, (4e10, 5.5e10)),
        ("cached", 2.0, 4e11, (1e11, 5e11)),
        ("fused", 100.0, None),
    ]
    assert roofline.above_roof(ceilings, points) == ["cached"]  # its roof is 2e11
    ax = roofline.plot_roofline(ceilings, points)
    squares = [line for line in ax.lines if line.get_marker() == "s" and len(line.get_xdata())]
    assert sorted(float(line.get_xdata()[0]) for line in squares) == [0.6, 2.0, 100.0]
    assert [float(line.get_ydata()[0]) for line in squares if line.get_xdata()[0] == 2.0] == [2e11]
    assert sum(line.get_markeredgecolor() == "red" for line in ax.lines) == 1
    plt.close("all")
