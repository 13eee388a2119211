# selftest-replaces: fa_score_tile
# selftest-whole: another design, not the reference with a change
# Variant: classifies the tile first (fully visible / fully hidden / cut by the diagonal). / 变体：先判断分块类型（全可见 / 全遮住 / 被对角线穿过）。
def score_tile(q_tile, k_tile, q0, k0, scale, is_causal):
    """Scaled scores of one tile: (B, bq, d) × (B, bk, d) → (B, bq, bk), computed in at least float32.

    q0 and k0 are the global positions of the tile's first query and first key. With is_causal, entries
    where key position j > query position i are -inf.
    """
    compute = torch.promote_types(q_tile.dtype, torch.float32)
    q_last = q0 + q_tile.shape[-2] - 1
    k_last = k0 + k_tile.shape[-2] - 1
    s = scale * (q_tile.to(compute) @ k_tile.to(compute).transpose(-1, -2))
    if not is_causal or k_last <= q0:
        return s  # every key is at or before every query: nothing to mask
    if k0 > q_last:
        return torch.full_like(s, -float("inf"))  # every key comes after every query
    rows = torch.arange(q0, q_last + 1, device=s.device)
    cols = torch.arange(k0, k_last + 1, device=s.device)
    keep = cols[None, :] <= rows[:, None]
    return s.where(keep, torch.tensor(-float("inf"), dtype=compute, device=s.device))
