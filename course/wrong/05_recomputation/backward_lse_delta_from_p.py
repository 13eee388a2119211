# selftest-notebook: recomputation.ipynb
# selftest-replaces: rc_backward_lse
# selftest-must-fail: test_backward_lse
# selftest-whole: a different program, not the reference with a change
# Mistake: takes Δ = rowsum(P ∘ dP) instead of rowsum(dO ∘ O): equal only when O = P V exactly, and it needs whole
# rows of P and dP, which a tiled backward pass never has.
# 错误：用 Δ = rowsum(P ∘ dP) 代替 rowsum(dO ∘ O)：只在 O 恰好等于 P V 时相等，而且需要整行的 P 和 dP，分块的反向传播没有它们。
def attention_backward_from_lse(Q, K, V, out, L, dO, is_causal=False):
    compute = torch.promote_types(Q.dtype, torch.float32)
    q, k, v, d_out = (t.to(compute) for t in (Q, K, V, dO))
    scale = Q.shape[-1] ** -0.5
    s = scale * q @ k.transpose(-2, -1)
    if is_causal:
        rows = torch.arange(Q.shape[-2], device=Q.device)[:, None]
        cols = torch.arange(K.shape[-2], device=Q.device)[None, :]
        s = s.masked_fill(cols > rows, float("-inf"))
    p = torch.exp(s - L.to(compute)[..., None])
    d_p = d_out @ v.transpose(-2, -1)
    d_s = p * (d_p - (p * d_p).sum(dim=-1, keepdim=True))
    return (
        (scale * d_s @ k).to(Q.dtype),
        (scale * d_s.transpose(-2, -1) @ q).to(K.dtype),
        (p.transpose(-2, -1) @ d_out).to(V.dtype),
    )
