"""FlashAttention-paper-style figures of the suite's records (drawn with `utils.plotting.plot_vs_n`)."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only; no display needed (CI, a GPU box over ssh)

import matplotlib.pyplot as plt  # noqa: E402

from utils.plotting import plot_vs_n, text  # noqa: E402

MODE_TITLES = {"fwd": ("前向", "forward"), "fwd_bwd": ("前向+反向", "forward + backward")}


def _device_line(results: dict) -> str:
    env, grid = results["environment"], results["grid"]
    where = (
        env["device"]
        if env["meaningful"]
        else f"{env['device']}: {text('CPU 数值无参考意义', 'CPU numbers are not meaningful')}"
    )
    return f"{where} · {grid['dtype']} · torch {env['torch']}, triton {env['triton']}"


def _drawable(records: list[dict]) -> list[dict]:
    """Records of implementations that ran (or ran out of memory) somewhere: the others have no line."""
    shown = {r["name"] for r in records if r["status"] in ("ok", "oom")}
    return [r for r in records if r["name"] in shown]


def throughput_figure(results: dict, mode: str):
    """TFLOP/s against N, one panel per (head dim, causal), one line per implementation."""
    grid = results["grid"]
    rows, cols = grid["head_dims"], grid["causal"]
    fig, axes = plt.subplots(len(rows), len(cols), figsize=(6.0 * len(cols), 4.2 * len(rows)), squeeze=False)
    for ax, (d, causal) in zip(axes.flat, [(d, c) for d in rows for c in cols], strict=True):
        panel = _drawable(
            [r for r in results["records"] if (r["mode"], r["d"], r["causal"]) == (mode, d, causal)]
        )
        kind = text("因果", "causal") if causal else text("非因果", "non-causal")
        if panel:
            plot_vs_n(panel, "tflops", ax=ax)
        ax.set_title(f"d = {d}, {kind}")
    fig.suptitle(f"{text(*MODE_TITLES[mode])} · {_device_line(results)}")
    fig.tight_layout()
    return fig


def memory_figure(results: dict):
    """Forward+backward peak memory of one head against N (log-log); × marks where it ran out."""
    fig, ax = plt.subplots(figsize=(7.5, 5.0))
    plot_vs_n(_drawable(results["memory"]), "peak_memory_bytes", ax=ax)
    what = text("一个头（B = H = 1），前向+反向", "one head (B = H = 1), forward + backward")
    ax.set_title(f"{what}, d = {results['grid']['memory_head_dim']}")
    fig.suptitle(_device_line(results), fontsize="medium")
    fig.tight_layout()
    return fig


def save_figures(results: dict, out_dir: Path) -> list[Path]:
    """fwd.png, fwd_bwd.png (for the modes measured) and memory.png (if the sweep ran) in `out_dir`."""
    figures = {f"{mode}.png": throughput_figure(results, mode) for mode in results["grid"]["modes"]}
    if _drawable(results["memory"]):
        figures["memory.png"] = memory_figure(results)
    paths = []
    for name, fig in figures.items():
        paths.append(out_dir / name)
        fig.savefig(paths[-1], dpi=120)
        plt.close(fig)
    return paths
