# selftest-notebook: flash_attention_pytorch.ipynb
# selftest-replaces: fa_score_tile
# Variant: causal mask from torch.triu with the diagonal offset q0 - k0 + 1. / 变体：用 torch.triu 生成因果掩码，对角线偏移为 q0 - k0 + 1。
def score_tile(q_tile, k_tile, q0, k0, scale, is_causal):
    """Scaled scores of one tile: (B, bq, d) × (B, bk, d) → (B, bq, bk), computed in at least float32.

    q0 and k0 are the global positions of the tile's first query and first key. With is_causal, entries
    where key position j > query position i are -inf.
    """
    compute = torch.promote_types(q_tile.dtype, torch.float32)
    s = torch.matmul(q_tile.to(compute), k_tile.to(compute).transpose(1, 2)).mul_(scale)
    if is_causal:
        bq, bk = s.shape[-2], s.shape[-1]
        # k0 + c > q0 + r  <=>  c - r >= q0 - k0 + 1: the upper triangle starting at that diagonal
        above = torch.ones(bq, bk, dtype=torch.bool, device=s.device).triu(diagonal=q0 - k0 + 1)
        s.masked_fill_(above, -math.inf)
    return s
