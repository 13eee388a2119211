"""Unit 10's pictures: the schedules of one attention tile loop (FlashAttention-2, producer/consumer with pingpong,
intra-warpgroup overlap) and which program of a persistent grid computes which tile.

The schedules are drawn from step durations in arbitrary units (`SCHEDULE_UNITS`), not measured: they show
the order and overlap of the steps, which is what the text explains.
"""

from __future__ import annotations

from utils.plotting import axes, text, use_fonts

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
    """FA2's warps prefetch the next K/V tile with `cp.async` before computing this one, so the copy overlaps the
    computation, but they run S = QKᵀ (mma.sync), softmax and O += PV in order: the tensor cores wait during the
    softmax. The copies are issued by the same warps (no producer)."""
    load = SCHEDULE_UNITS["load"]
    copies, warps, t = [(0.0, load, "load")], [], 0.0
    for j in range(tiles):
        t = max(t, copies[j][0] + load)  # K_j and V_j have arrived
        if j + 1 < tiles:
            copies.append((t, load, "load"))  # the next tile's copy, issued before this tile's work
        for kind in ("gemm", "softmax", "gemm"):  # S = QKᵀ, softmax, O += PV
            warps.append((t, SCHEDULE_UNITS[kind], kind))
            t += SCHEDULE_UNITS[kind]
    return {
        text(
            "cp.async 拷贝（同一批 warp 发出）", "cp.async copies (issued by the same warps)", sep="\n"
        ): copies,
        text("warp（FA2 没有线程束组）", "warps (FA2 has no warpgroups)", sep="\n"): warps,
    }


def pingpong_schedule(tiles: int) -> dict[str, list[tuple[float, float, str]]]:
    """A producer warp issues the TMA loads of the K/V tiles ahead; two consumer warpgroups, each with its own rows
    of the query tile, walk all `tiles` key tiles (S_j = Q K_jᵀ, softmax, O += P_j V_j) and take turns on the
    tensor cores, which run one GEMM at a time: while one runs its softmax, the other's GEMMs keep them busy.
    Twice the work of the other schedules (two query row blocks), placed greedily, each step as early as its
    inputs and the tensor cores allow."""
    load = SCHEDULE_UNITS["load"]
    producer = [(i * load, load, "load") for i in range(tiles)]
    steps = ["gemm", "softmax", "gemm"] * tiles  # S_j = Q K_jᵀ, softmax_j, O += P_j V_j for each key tile
    done, ready, tensor_free = [0, 0], [0.0, 0.0], 0.0
    rows: list[list[tuple[float, float, str]]] = [[], []]

    def start(group: int) -> float:
        loaded = (done[group] // 3 + 1) * load  # K_j and V_j have arrived
        return max(ready[group], loaded, tensor_free if steps[done[group]] == "gemm" else 0.0)

    while min(done) < len(steps):
        waiting = [g for g in range(2) if done[g] < len(steps)]
        group = min(waiting, key=lambda g: (start(g), ready[g], g))
        kind, t = steps[done[group]], start(group)
        rows[group].append((t, SCHEDULE_UNITS[kind], kind))
        ready[group] = t + SCHEDULE_UNITS[kind]
        if kind == "gemm":
            tensor_free = ready[group]
        done[group] += 1
    return {
        text("生产者（TMA）", "producer (TMA)"): producer,
        text("消费者 1（查询行的前一半）", "consumer 1 (first half of the query rows)", sep="\n"): rows[0],
        text("消费者 2（查询行的后一半）", "consumer 2 (second half of the query rows)", sep="\n"): rows[1],
    }


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


def tensor_busy(rows: dict[str, list[tuple[float, float, str]]]) -> tuple[float, float]:
    """A schedule's total time and the share of it the tensor cores spend on GEMMs."""
    end = max(start + width for bars in rows.values() for start, width, _ in bars)
    gemms = sum(width for bars in rows.values() for _, width, kind in bars if kind == "gemm")
    return end, gemms / end


def plot_schedules(tiles: int = 4):
    """Three timelines of the same `tiles` key tiles, one panel each; returns the figure."""
    import matplotlib.pyplot as plt

    panels = [
        (fa2_schedule, "FlashAttention-2：计算按顺序，预取下一块", "FlashAttention-2: computation in order, next tile prefetched"),
        (pingpong_schedule, "生产者/消费者 + 乒乓调度（两个消费者，两倍的查询行）",
         "producer/consumer + pingpong (two consumers, twice the query rows)"),
        (intra_warpgroup_schedule, "线程束组内重叠", "intra-warpgroup overlap"),
    ]  # fmt: skip
    use_fonts()  # the Chinese titles and labels
    fig, grid = plt.subplots(len(panels), 1, figsize=(11, 8), sharex=True)
    end = 0.0
    for ax, (schedule, zh, en) in zip(grid, panels, strict=True):
        rows = schedule(tiles)
        total, busy = tensor_busy(rows)
        title = text(
            f"{zh}：{total:g} 个单位，张量核心忙 {busy:.0%}",
            f"{en}: {total:g} units, tensor cores busy {busy:.0%}",
            sep="\n",
        )
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
             "number = program id)", sep="\n"),
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
    "tensor_busy",
]
