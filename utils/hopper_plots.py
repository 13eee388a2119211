"""Unit 10's pictures: the schedules of one attention tile loop (FlashAttention-2, producer/consumer with pingpong,
intra-warpgroup overlap) and which program of a persistent grid computes which tile.

The schedules are drawn from step durations in arbitrary units (`SCHEDULE_UNITS`), not measured: they show
the order and overlap of the steps, which is what the text explains.
"""

from __future__ import annotations

from utils.plotting import axes, text

# Relative step durations for d = 128 (one key tile): a GEMM, the softmax (exp on the special-function
# units), a TMA load. On an H100 the exponentials of one tile take about half as long as its two GEMMs.
SCHEDULE_UNITS = {"load": 1.0, "gemm": 1.0, "softmax": 1.0}
COLOURS = {"load": "#8da0cb", "gemm": "#66c2a5", "softmax": "#fc8d62", "idle": "#eeeeee"}
LABELS = {
    "load": ("加载 K/V", "load K/V"),
    "gemm": ("矩阵乘（张量核心）", "GEMM (tensor cores)"),
    "softmax": ("softmax（exp）", "softmax (exp)"),
}


def fa2_schedule(tiles: int) -> dict[str, list[tuple[float, float, str]]]:
    """One warpgroup does everything in order: load, S = QKᵀ, softmax, O += PV; the tensor cores wait."""
    t, row = 0.0, []
    for _ in range(tiles):
        for kind in ("load", "gemm", "softmax", "gemm"):  # load K/V, S = QKᵀ, softmax, O += PV
            row.append((t, SCHEDULE_UNITS[kind], kind))
            t += SCHEDULE_UNITS[kind]
    return {text("线程束组", "warpgroup"): row}


def pingpong_schedule(tiles: int) -> dict[str, list[tuple[float, float, str]]]:
    """A producer warp issues TMA loads ahead; two consumer warpgroups take turns: while one runs its softmax,
    the other's GEMMs keep the tensor cores busy."""
    gemm, soft, load = SCHEDULE_UNITS["gemm"], SCHEDULE_UNITS["softmax"], SCHEDULE_UNITS["load"]
    producer = [(i * load, load, "load") for i in range(tiles)]
    rows = {text("生产者（TMA）", "producer (TMA)"): producer}
    for group in range(2):  # each group's two GEMMs run while the other group computes its softmax
        row, t = [], load + group * 2 * gemm
        for _ in range(tiles // 2):
            row += [(t, gemm, "gemm"), (t + gemm, gemm, "gemm"), (t + 2 * gemm, soft, "softmax")]
            t += 4 * gemm
        rows[text(f"消费者 {group + 1}", f"consumer {group + 1}")] = row
    return rows


def intra_warpgroup_schedule(tiles: int) -> dict[str, list[tuple[float, float, str]]]:
    """One consumer warpgroup: the GEMM S_{j+1} = Q K_{j+1}ᵀ is issued (asynchronously, wgmma) before the
    softmax of S_j, so the tensor cores and the exponentials overlap inside the warpgroup."""
    gemm, soft, load = SCHEDULE_UNITS["gemm"], SCHEDULE_UNITS["softmax"], SCHEDULE_UNITS["load"]
    producer = [(i * load, load, "load") for i in range(tiles)]
    tensor, cuda = [(load, gemm, "gemm")], []
    t = load + gemm
    for j in range(tiles):
        cuda.append((t, soft, "softmax"))
        if j + 1 < tiles:
            tensor.append((t, gemm, "gemm"))  # S_{j+1} while softmax_j runs
        tensor.append((t + soft, gemm, "gemm"))  # O += P_j V_j
        t += soft + gemm
    return {
        text("生产者（TMA）", "producer (TMA)"): producer,
        text("张量核心", "tensor cores"): tensor,
        text("exp 单元", "exp units"): cuda,
    }


def plot_schedules(tiles: int = 4):
    """Three timelines of the same `tiles` key tiles, one panel each; returns the figure."""
    import matplotlib.pyplot as plt

    panels = [
        (fa2_schedule, text("FlashAttention-2：顺序执行", "FlashAttention-2: in order")),
        (pingpong_schedule, text("生产者/消费者 + 乒乓调度", "producer/consumer + pingpong")),
        (intra_warpgroup_schedule, text("线程束组内重叠", "intra-warpgroup overlap")),
    ]
    fig, grid = plt.subplots(len(panels), 1, figsize=(11, 7), sharex=True)
    end = 0.0
    for ax, (schedule, title) in zip(grid, panels, strict=True):
        rows = schedule(tiles)
        for y, bars in enumerate(rows.values()):
            for start, width, kind in bars:
                ax.broken_barh([(start, width * 0.96)], (y - 0.4, 0.8), color=COLOURS[kind])
                end = max(end, start + width)
        ax.set_yticks(range(len(rows)), list(rows))
        ax.set_title(title, fontsize=10, loc="left")
    handles = [plt.Rectangle((0, 0), 1, 1, color=COLOURS[k]) for k in LABELS]
    fig.legend(handles, [text(*LABELS[k]) for k in LABELS], loc="upper center", fontsize=9, ncol=3)
    grid[-1].set_xlabel(text("时间（任意单位）", "time (arbitrary units)"))
    grid[-1].set_xlim(0, end * 1.02)
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    return fig


def plot_tile_owners(owners, programs: int, shown: int = 40, ax=None):
    """Which program computed each tile of a persistent grid (`owners[t]` is tile t's program id): the first
    `shown` tiles as bars labelled with their program."""
    ax = axes(ax)
    owners = [int(o) for o in owners]
    first = owners[:shown]
    ax.bar(range(len(first)), [1] * len(first), color=[f"C{o % 10}" for o in first])
    for tile, owner in enumerate(first):
        ax.text(tile, 0.5, str(owner), ha="center", va="center", fontsize=8)
    ax.set_yticks([])
    ax.set_xlabel(text("分块编号", "tile index"))
    ax.set_title(
        text(f"持久网格：{programs} 个程序，{len(owners)} 个分块（显示前 {len(first)} 个；数字 = 程序编号）",
             f"persistent grid: {programs} programs, {len(owners)} tiles (first {len(first)} shown; "
             "number = program id)"),
        fontsize=10,
    )  # fmt: skip
    return ax


__all__ = [
    "SCHEDULE_UNITS",
    "fa2_schedule",
    "intra_warpgroup_schedule",
    "pingpong_schedule",
    "plot_schedules",
    "plot_tile_owners",
]
