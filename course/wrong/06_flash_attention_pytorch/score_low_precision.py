# selftest-notebook: flash_attention_pytorch.ipynb
# selftest-replaces: fa_score_tile
# selftest-must-fail: test_score_tile
# Mistake: computes the scores in the input dtype (bfloat16 stays bfloat16) instead of float32.
# 错误：在输入精度下计算分数（bfloat16 没有转成 float32）。
def score_tile(q_tile, k_tile, q0, k0, scale, is_causal):
    """Scaled scores of one tile: (B, bq, d) × (B, bk, d) → (B, bq, bk), computed in at least float32.

    q0 and k0 are the global positions of the tile's first query and first key. With is_causal, entries
    where key position j > query position i are -inf.
    """
    s = q_tile @ k_tile.transpose(-2, -1) * scale
    if is_causal:
        rows = torch.arange(q0, q0 + q_tile.shape[-2], device=s.device)[:, None]
        cols = torch.arange(k0, k0 + k_tile.shape[-2], device=s.device)[None, :]
        s = s.masked_fill(cols > rows, float("-inf"))
    return s
