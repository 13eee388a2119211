# selftest-replaces: fa_score_tile
# Variant: adds a 0 / -inf bias tile with torch.baddbmm (alpha = scale). / 变体：用 torch.baddbmm（alpha = scale）加上一个 0 / -inf 的偏置块。
def score_tile(q_tile, k_tile, q0, k0, scale, is_causal):
    """Scaled scores of one tile: (B, bq, d) × (B, bk, d) → (B, bq, bk), computed in at least float32.

    q0 and k0 are the global positions of the tile's first query and first key. With is_causal, entries
    where key position j > query position i are -inf.
    """
    dt = torch.promote_types(q_tile.dtype, torch.float32)
    q, k = q_tile.to(dt), k_tile.to(dt)
    batch, bq, bk = q.shape[0], q.shape[1], k.shape[1]
    bias = torch.zeros(bq, bk, dtype=dt, device=q.device)
    if is_causal:
        rel = torch.arange(bk, device=q.device)[None, :] - torch.arange(bq, device=q.device)[:, None]
        bias[rel > q0 - k0] = float("-inf")  # global j - i = rel + k0 - q0 > 0
    # out = bias + scale * q @ kᵀ; adding 0 leaves a score unchanged, adding -inf masks it
    return torch.baddbmm(bias.expand(batch, bq, bk), q, k.transpose(1, 2), beta=1.0, alpha=scale)
