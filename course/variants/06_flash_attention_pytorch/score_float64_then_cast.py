# selftest-replaces: fa_score_tile
# Variant: multiplies in float64, then casts to promote_types(dtype, float32). / 变体：先用 float64 相乘，再转换为 promote_types(dtype, float32)。
def score_tile(q_tile, k_tile, q0, k0, scale, is_causal):
    """Scaled scores of one tile: (B, bq, d) × (B, bk, d) → (B, bq, bk), computed in at least float32.

    q0 and k0 are the global positions of the tile's first query and first key. With is_causal, entries
    where key position j > query position i are -inf.
    """
    out_dtype = torch.promote_types(q_tile.dtype, torch.float32)
    s = (q_tile.double() @ k_tile.double().mT) * scale  # extra precision costs nothing at tile size
    if is_causal:
        i = torch.arange(q_tile.size(-2), device=s.device).view(-1, 1) + q0
        j = torch.arange(k_tile.size(-2), device=s.device).view(1, -1) + k0
        s = s.masked_fill(j > i, float("-inf"))
    return s.to(out_dtype)
