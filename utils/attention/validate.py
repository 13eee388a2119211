"""Input checks shared by every attention implementation: one clear, bilingual ValueError per problem."""

from __future__ import annotations

import torch

from utils.messages import bilingual

SUPPORTED_HEAD_DIMS = (16, 32, 64, 128)


def _fail(zh: str, en: str) -> None:
    raise ValueError(bilingual(zh, en))


def check_qkv(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, head_dims=None) -> None:
    """Validate (..., N, d) inputs: same leading dims, device and dtype; K and V of equal length; no empties.

    `head_dims`, when given, lists the supported head dimensions (kernels have a fixed set).
    """
    for name, t in (("Q", q), ("K", k), ("V", v)):
        if not isinstance(t, torch.Tensor):
            _fail(
                f"{name} 必须是 torch.Tensor，得到 {type(t).__name__}",
                f"{name} must be a torch.Tensor, got {type(t).__name__}",
            )
        if t.dim() < 2:
            _fail(
                f"{name} 至少需要两维 (..., N, d)，得到形状 {tuple(t.shape)}",
                f"{name} needs at least 2 dims (..., N, d), got shape {tuple(t.shape)}",
            )
        if t.numel() == 0:
            _fail(f"{name} 是空张量，形状 {tuple(t.shape)}", f"{name} is empty, shape {tuple(t.shape)}")
        if not t.is_floating_point():
            _fail(f"{name} 必须是浮点张量，得到 {t.dtype}", f"{name} must be floating point, got {t.dtype}")
    if not (q.device == k.device == v.device):
        _fail(
            f"Q、K、V 不在同一设备上：{q.device}、{k.device}、{v.device}",
            f"Q, K, V are on different devices: {q.device}, {k.device}, {v.device}",
        )
    if not (q.dtype == k.dtype == v.dtype):
        _fail(
            f"Q、K、V 的数据类型不同：{q.dtype}、{k.dtype}、{v.dtype}",
            f"Q, K, V have different dtypes: {q.dtype}, {k.dtype}, {v.dtype}",
        )
    if not (q.dim() == k.dim() == v.dim()) or not (q.shape[:-2] == k.shape[:-2] == v.shape[:-2]):
        _fail(
            f"批/头维度不一致：Q {tuple(q.shape)}、K {tuple(k.shape)}、V {tuple(v.shape)}",
            f"batch/head dims differ: Q {tuple(q.shape)}, K {tuple(k.shape)}, V {tuple(v.shape)}",
        )
    if k.shape[-2] != v.shape[-2]:
        _fail(
            f"K 与 V 的序列长度不同：{k.shape[-2]} 与 {v.shape[-2]}",
            f"K and V have different sequence lengths: {k.shape[-2]} vs {v.shape[-2]}",
        )
    if not (q.shape[-1] == k.shape[-1] == v.shape[-1]):
        _fail(
            f"头维度 d 不一致：Q {q.shape[-1]}、K {k.shape[-1]}、V {v.shape[-1]}",
            f"head dim d differs: Q {q.shape[-1]}, K {k.shape[-1]}, V {v.shape[-1]}",
        )
    if head_dims is not None and q.shape[-1] not in head_dims:
        _fail(
            f"不支持的头维度 d={q.shape[-1]}，支持 {tuple(head_dims)}",
            f"unsupported head dim d={q.shape[-1]}, supported: {tuple(head_dims)}",
        )


def default_scale(q: torch.Tensor, scale: float | None) -> float:
    """The softmax scale: 1/sqrt(d) unless given."""
    return q.shape[-1] ** -0.5 if scale is None else float(scale)


def causal_mask(n_q: int, n_k: int, device, first_row: int = 0) -> torch.Tensor:
    """Boolean (n_q, n_k) mask, True where query i may attend to key j (j <= i, top-left aligned); the rows
    are queries first_row, first_row + 1, …"""
    rows = torch.arange(first_row, first_row + n_q, device=device)[:, None]
    cols = torch.arange(n_k, device=device)[None, :]
    return cols <= rows
