# selftest-notebook: flash_attention_pytorch.ipynb
# selftest-replaces: fa_score_tile
# selftest-must-fail: test_score_tile, test_causal, test_autograd_function
# Mistake: off-by-one causal mask: also masks j == i, so the first query sees no key (NaN).
# 错误：因果掩码差一：把 j == i 也遮住，第一个查询看不到任何键（NaN）。
def score_tile(q_tile, k_tile, q0, k0, scale, is_causal):
    """Scaled scores of one tile: (B, bq, d) × (B, bk, d) → (B, bq, bk), computed in at least float32.

    q0 and k0 are the global positions of the tile's first query and first key. With is_causal, entries
    where key position j > query position i are -inf.
    """
    compute = torch.promote_types(q_tile.dtype, torch.float32)
    s = q_tile.to(compute) @ k_tile.to(compute).transpose(-2, -1) * scale
    if is_causal:
        rows = torch.arange(q0, q0 + q_tile.shape[-2], device=s.device)[:, None]
        cols = torch.arange(k0, k0 + k_tile.shape[-2], device=s.device)[None, :]
        s = s.masked_fill(cols >= rows, float("-inf"))
    return s
