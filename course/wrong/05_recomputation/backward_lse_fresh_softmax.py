# selftest-notebook: recomputation.ipynb
# selftest-replaces: rc_backward_lse
# selftest-must-fail: test_backward_lse
# selftest-whole: a different program, not the reference with a change
# Mistake: ignores the saved L and recomputes P with a fresh softmax (a full row max and sum: what FlashAttention's
# tiles cannot do), so it answers for a different L than the one given.
# 错误：不用保存的 L，而是重新做一次 softmax（需要整行的最大值与和，FlashAttention 的分块做不到），答的不是给定 L 的梯度。
def attention_backward_from_lse(Q, K, V, out, L, dO, is_causal=False):
    compute = torch.promote_types(Q.dtype, torch.float32)
    q, k, v, o, d_out = (t.to(compute) for t in (Q, K, V, out, dO))
    scale = Q.shape[-1] ** -0.5
    s = scale * q @ k.transpose(-2, -1)
    if is_causal:
        rows = torch.arange(Q.shape[-2], device=Q.device)[:, None]
        cols = torch.arange(K.shape[-2], device=Q.device)[None, :]
        s = s.masked_fill(cols > rows, float("-inf"))
    p = torch.softmax(s, dim=-1)
    delta = (d_out * o).sum(dim=-1, keepdim=True)
    d_s = p * (d_out @ v.transpose(-2, -1) - delta)
    return (
        (scale * d_s @ k).to(Q.dtype),
        (scale * d_s.transpose(-2, -1) @ q).to(K.dtype),
        (p.transpose(-2, -1) @ d_out).to(V.dtype),
    )
