"""Pictures of the online softmax of one row as its blocks arrive (unit 04).

`steps(x, block_size, values)` replays the recurrence in float64 and keeps, after each block, the running
maximum m, the running sum ℓ, the softmax estimate e^{x−m}/ℓ of the columns seen so far and, with `values`
(Nk, d), the running output o/ℓ. `strip` draws every step as one column of a static figure; `explore`
shows one step at a time under an ipywidgets slider (the static strip where ipywidgets is missing).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import matplotlib.pyplot as plt
import torch

from utils import plotting


@dataclass(frozen=True)
class Step:
    """The state after `seen` columns: m, ℓ, the softmax estimate (NaN where unseen) and the output row o/ℓ."""

    seen: int
    m: float
    ell: float
    estimate: torch.Tensor
    output: torch.Tensor | None


def steps(x: torch.Tensor, block_size: int, values: torch.Tensor | None = None) -> list[Step]:
    """The running state of the online softmax of the 1-D row `x` after each block of `block_size` columns."""
    x = x.double()
    n, m, ell = x.numel(), -math.inf, 0.0
    acc = None if values is None else torch.zeros(values.shape[-1], dtype=torch.float64)
    out = []
    for c0 in range(0, n, block_size):
        block = x[c0 : c0 + block_size]
        m_new = max(m, float(block.max()))
        shift = 0.0 if m_new == -math.inf else m_new
        p = torch.exp(block - shift)
        rescale = math.exp(m - shift)
        ell = ell * rescale + float(p.sum())
        if acc is not None:
            acc = acc * rescale + p @ values[c0 : c0 + block_size].double()
        m = m_new
        seen = min(n, c0 + block_size)
        estimate = torch.full((n,), math.nan, dtype=torch.float64)
        estimate[:seen] = torch.exp(x[:seen] - shift) / ell if ell > 0 else 0.0
        out.append(Step(seen, m, ell, estimate, None if acc is None else acc / ell if ell > 0 else acc))
    return out


def draw(all_steps: list[Step], index: int, x: torch.Tensor, axes_row) -> None:
    """Step `index` on three Axes: the row with the block just read and m; the estimate against the final
    softmax; the output row (or the history of m and ℓ without values)."""
    step, final = all_steps[index], all_steps[-1]
    n = x.numel()
    start = 0 if index == 0 else all_steps[index - 1].seen
    ax_x, ax_p, ax_o = axes_row
    colours = [
        "tab:orange" if start <= j < step.seen else "tab:blue" if j < start else "lightgrey" for j in range(n)
    ]
    ax_x.bar(range(n), x.double().numpy(), color=colours)
    ax_x.axhline(step.m, color="tab:red", ls="--", lw=1)
    ax_x.set_title(
        plotting.text(f"第 {index + 1} 块：m = {step.m:.3g}", f"block {index + 1}: m = {step.m:.3g}")
    )
    ax_p.bar(range(n), final.estimate.numpy(), color="none", edgecolor="black", lw=0.6)
    ax_p.bar(range(n), step.estimate.nan_to_num(0).numpy(), color="tab:green", alpha=0.7)
    ax_p.set_ylim(0, 1.05 * max(float(s.estimate.nan_to_num(0).max()) for s in all_steps))
    ax_p.set_title(plotting.text(f"e^(x−m)/ℓ，ℓ = {step.ell:.4g}", f"e^(x−m)/ℓ, ℓ = {step.ell:.4g}"))
    if step.output is not None:
        d = step.output.numel()
        ax_o.bar(range(d), final.output.numpy(), color="none", edgecolor="black", lw=0.6)
        ax_o.bar(range(d), step.output.numpy(), color="tab:purple", alpha=0.7)
        ax_o.set_title(plotting.text("输出行 o/ℓ（框：最终）", "output row o/ℓ (boxes: final)"))
    else:
        seen = [s.seen for s in all_steps[: index + 1]]
        ax_o.plot(seen, [s.m for s in all_steps[: index + 1]], "o-", color="tab:red", label="m")
        ax_o.plot(
            seen,
            [math.log(s.ell) if s.ell > 0 else math.nan for s in all_steps[: index + 1]],
            "s-",
            label="log ℓ",
        )
        ax_o.set_xlim(0, n)
        ax_o.legend()
        ax_o.set_title(plotting.text("m 与 log ℓ 的变化", "m and log ℓ so far"))


def strip(x: torch.Tensor, block_size: int, values: torch.Tensor | None = None, max_frames: int = 6):
    """A static figure: one row of three panels per step (at most `max_frames` steps, the last one included)."""
    all_steps = steps(x, block_size, values)
    shown = sorted({round(i * (len(all_steps) - 1) / max(1, max_frames - 1)) for i in range(max_frames)})
    fig, grid = plt.subplots(len(shown), 3, figsize=(13, 2.3 * len(shown)), squeeze=False)
    plotting.axes(grid[0, 0])  # switches the CJK font on where there is one
    for row, index in zip(grid, shown, strict=True):
        draw(all_steps, index, x, row)
    fig.tight_layout()
    return fig


def explore(x: torch.Tensor, block_size: int, values: torch.Tensor | None = None) -> None:
    """A slider over the steps in JupyterLab (ipywidgets); the static strip where ipywidgets is missing."""
    try:
        import ipywidgets
    except ImportError:
        strip(x, block_size, values)
        plt.show()
        return
    all_steps = steps(x, block_size, values)

    def show(block: int) -> None:
        fig, row = plt.subplots(1, 3, figsize=(13, 2.8))
        plotting.axes(row[0])
        draw(all_steps, block - 1, x, row)
        fig.tight_layout()
        plt.show()

    ipywidgets.interact(
        show, block=ipywidgets.IntSlider(min=1, max=len(all_steps), value=1, description="block")
    )


__all__ = ["Step", "draw", "explore", "steps", "strip"]
