# selftest-replaces: fa_score_tile
# Variant: einsum for the product, scale applied to q first, torch.where for the mask. / 变体：用 einsum 求乘积，先把缩放乘到 q 上，用 torch.where 做掩码。
def score_tile(q_tile, k_tile, q0, k0, scale, is_causal):
    """Scaled scores of one tile: (B, bq, d) × (B, bk, d) → (B, bq, bk), computed in at least float32.

    q0 and k0 are the global positions of the tile's first query and first key. With is_causal, entries
    where key position j > query position i are -inf.
    """
    dtype = torch.promote_types(q_tile.dtype, torch.float32)
    q = q_tile.to(dtype) * scale  # scaling the (smaller) query tile once is the same as scaling S
    s = torch.einsum("bqd,bkd->bqk", q, k_tile.to(dtype))
    if not is_causal:
        return s
    query_pos = q0 + torch.arange(q_tile.shape[1], device=s.device)
    key_pos = k0 + torch.arange(k_tile.shape[1], device=s.device)
    hidden = key_pos.unsqueeze(0) > query_pos.unsqueeze(1)  # (bq, bk), broadcast over the batch
    return torch.where(hidden, torch.full_like(s, float("-inf")), s)
