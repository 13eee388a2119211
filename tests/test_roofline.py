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
