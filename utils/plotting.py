"""Plots shared by the units: measurements against N, and which tiles a FlashAttention loop visits.

Labels are bilingual (`中文 · English`) when a CJK-capable font is available: one the system has, else the Noto
Sans CJK that the course's dependencies bring from PyPI (`noto-cjk-sans-otc`), registered with matplotlib here.
Without either the labels are English only, so the figure never shows missing-glyph boxes.
"""

from __future__ import annotations

import functools
from pathlib import Path

import matplotlib.pyplot as plt
from matplotlib import font_manager
from matplotlib.patches import Patch, Rectangle

CJK_FONTS = (
    "Noto Sans CJK SC",
    "Noto Sans SC",
    "Source Han Sans SC",
    "WenQuanYi Zen Hei",
    "WenQuanYi Micro Hei",
    "Microsoft YaHei",
    "SimHei",
    "PingFang SC",
    "Heiti SC",
    "Arial Unicode MS",
)

_METRIC_LABELS = {
    "time_ms": (("时间 (ms)", "time (ms)"), ("时间 (ms)", "time (ms)")),
    "peak_memory_bytes": (
        ("张量峰值内存 (MiB)", "peak tensor memory (MiB)"),
        ("峰值显存 (MiB)", "peak memory (MiB)"),
    ),
    "tflops": (("吞吐量 (TFLOP/s)", "throughput (TFLOP/s)"), ("吞吐量 (TFLOP/s)", "throughput (TFLOP/s)")),
}
_MIB = 2**20
_TILE_COLOURS = {"full": "tab:blue", "partial": "tab:orange", "skipped": "whitesmoke"}


def _installed(names) -> str | None:
    """The first of `names` that matplotlib knows, or None."""
    known = {f.name for f in font_manager.fontManager.ttflist}
    return next((name for name in names if name in known), None)


def packaged_cjk_font() -> Path | None:
    """The Noto Sans CJK collection installed from PyPI with the course, or None where it is missing."""
    try:
        import noto_cjk_sans_otc
    except ImportError:
        return None
    path = Path(str(noto_cjk_sans_otc.FONT_PATH))
    return path if path.is_file() else None


@functools.cache
def cjk_font() -> str | None:
    """The name of a font that can draw Chinese: an installed one, else the packaged Noto Sans CJK (registered
    with matplotlib now; matplotlib >= 3.10 reads every face of the collection, older versions its first,
    Japanese, face, which draws Chinese as well), else None."""
    found = _installed(CJK_FONTS)
    packaged = packaged_cjk_font()
    if found is None and packaged is not None:
        font_manager.fontManager.addfont(str(packaged))
        found = _installed((*CJK_FONTS, font_manager.FontProperties(fname=packaged).get_name()))
    return found


def text(zh: str, en: str, sep: str = " · ") -> str:
    """A plot label: `中文 · English` (or the two joined by `sep`, e.g. a line break for a long title) when a CJK
    font is available (then put first by `use_fonts`, so a figure drawn outside the course's plot helpers draws
    the Chinese too), else the English text alone."""
    if not cjk_font():
        return en
    use_fonts()
    return f"{zh}{sep}{en}"


def use_fonts() -> None:
    """The CJK font first; matplotlib's own DejaVu Sans draws what it lacks (superscripts such as 10⁸)."""
    font = cjk_font()
    if font and plt.rcParams["font.sans-serif"][:1] != [font]:
        plt.rcParams["font.sans-serif"] = [font, *plt.rcParams["font.sans-serif"]]
        plt.rcParams["font.family"] = ["sans-serif", "DejaVu Sans"]
        plt.rcParams["axes.unicode_minus"] = False


def _new_axes(ax):
    use_fonts()
    if ax is None:
        _, ax = plt.subplots(figsize=(6.4, 4.2))
    return ax


def plot_vs_n(records: list[dict], metric: str, ax=None, title: str | None = None):
    """Plot `metric` ("time_ms", "peak_memory_bytes" in MiB or "tflops") against N, one line per name.

    `records` come from `utils.measure.sweep`. Both axes are logarithmic (throughput: y linear from 0).
    Points that ran out of memory are drawn as × on the top edge and named in the legend. The title names the device; CPU results
    are labelled as not representative of a GPU. Returns the matplotlib Axes.
    """
    if metric not in _METRIC_LABELS:
        raise ValueError(f"metric must be one of {sorted(_METRIC_LABELS)}, got {metric!r}")
    if not records:
        raise ValueError("no records to plot")
    ax = _new_axes(ax)
    on_gpu = all(r["gpu"] for r in records)
    scale = 1 / _MIB if metric == "peak_memory_bytes" else 1
    for name in dict.fromkeys(r["name"] for r in records):
        rows = sorted((r for r in records if r["name"] == name), key=lambda r: r["n"])
        done = [r for r in rows if r["status"] == "ok" and r[metric] is not None]
        oom = [r["n"] for r in rows if r["status"] == "oom"]
        label = name + (f" (OOM ≥ N={oom[0]})" if oom else "")
        (line,) = ax.plot([r["n"] for r in done], [r[metric] * scale for r in done], "o-", label=label)
        if oom:
            ax.plot(oom, [1.0] * len(oom), "x", color=line.get_color(), transform=ax.get_xaxis_transform())
    ax.set_xscale("log", base=2)
    if metric == "tflops":
        ax.set_ylim(bottom=0)
    else:
        ax.set_yscale("log")
    ax.set_xlabel(text("序列长度 N", "sequence length N"))
    ax.set_ylabel(text(*_METRIC_LABELS[metric][on_gpu]))
    # On a CPU the mode's name says how Triton would run ("CPU (Triton interpreter)"), not what ran: just "CPU".
    where = (
        records[0]["device"] if on_gpu else f"CPU — {text('CPU 数值不代表 GPU', 'CPU numbers, not a GPU')}"
    )
    ax.set_title(f"{title} ({where})" if title else where)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    return ax


def _tile_status(rows: range, cols: range, is_causal: bool) -> str:
    """'full' (every score used), 'partial' (causal mask cuts through it) or 'skipped' (all masked)."""
    if not is_causal or cols[-1] <= rows[0]:
        return "full"
    return "skipped" if cols[0] > rows[-1] else "partial"


def plot_tile_visits(n_q: int, n_k: int, block_q: int, block_k: int, is_causal: bool = False, ax=None):
    """Draw the Nq×Nk score matrix cut into Bq×Bk tiles, numbered in the order a FlashAttention loop
    (outer loop over query tiles, inner over key tiles) visits them. Causal: tiles above the diagonal
    are skipped, tiles the diagonal cuts through need the mask. Tail tiles are drawn at their true size.
    """
    if min(n_q, n_k, block_q, block_k) < 1:
        raise ValueError("sizes and block sizes must be positive")
    ax = _new_axes(ax)
    step = 0
    for q0 in range(0, n_q, block_q):
        rows = range(q0, min(q0 + block_q, n_q))
        for k0 in range(0, n_k, block_k):
            cols = range(k0, min(k0 + block_k, n_k))
            status = _tile_status(rows, cols, is_causal)
            ax.add_patch(
                Rectangle((k0, q0), len(cols), len(rows), facecolor=_TILE_COLOURS[status], edgecolor="black")
            )
            if status != "skipped":
                step += 1
                ax.text(k0 + len(cols) / 2, q0 + len(rows) / 2, str(step), ha="center", va="center")
    ax.set_xlim(0, n_k)
    ax.set_ylim(n_q, 0)
    ax.set_aspect("equal")
    ax.set_xlabel(text("键的位置 j", "key position j"))
    ax.set_ylabel(text("查询的位置 i", "query position i"))
    kind = text("因果", "causal") if is_causal else text("非因果", "non-causal")
    ax.set_title(f"Nq={n_q}, Nk={n_k}, Bq={block_q}, Bk={block_k}, {kind}")
    legend = {
        "full": text("完整计算", "computed"),
        "partial": text("需要掩码", "computed with mask"),
        "skipped": text("跳过", "skipped"),
    }
    shown = legend if is_causal else {"full": legend["full"]}
    handles = [Patch(facecolor=_TILE_COLOURS[k], edgecolor="black", label=v) for k, v in shown.items()]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    return ax


def axes(ax=None):
    """Matplotlib Axes ready for `text(zh, en)` labels (the CJK font switched on where there is one); a new
    figure's Axes when `ax` is None. For a unit's own plots."""
    return _new_axes(ax)
