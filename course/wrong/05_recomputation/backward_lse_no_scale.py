# selftest-notebook: recomputation.ipynb
# selftest-replaces: rc_backward_lse
# selftest-must-fail: test_backward_lse, test_backward_lse_causal
# Mistake: forgets the chain-rule factor σ = 1/√d in dQ and dK (S = σ Q Kᵀ).
# 错误：dQ 和 dK 中漏掉了链式法则带来的因子 σ = 1/√d（S = σ Q Kᵀ）。
def attention_backward_from_lse(Q, K, V, out, L, dO, is_causal=False):
    compute = torch.promote_types(Q.dtype, torch.float32)
    q, k, v, o, d_out = (t.to(compute) for t in (Q, K, V, out, dO))
    scale = Q.shape[-1] ** -0.5
    s = scale * q @ k.transpose(-2, -1)
    if is_causal:
        rows = torch.arange(Q.shape[-2], device=Q.device)[:, None]
        cols = torch.arange(K.shape[-2], device=Q.device)[None, :]
        s = s.masked_fill(cols > rows, float("-inf"))
    p = torch.exp(s - L.to(compute)[..., None])
    delta = (d_out * o).sum(dim=-1, keepdim=True)
    d_s = p * (d_out @ v.transpose(-2, -1) - delta)
    return (
        (d_s @ k).to(Q.dtype),
        (d_s.transpose(-2, -1) @ q).to(K.dtype),
        (p.transpose(-2, -1) @ d_out).to(V.dtype),
    )
