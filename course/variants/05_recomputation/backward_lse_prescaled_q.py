# selftest-replaces: rc_backward_lse
# Variant: scales Q once (Q̃ = σQ, S = Q̃ Kᵀ), so dK = dSᵀ Q̃ needs no extra factor and dQ = σ dS K; Δ via torch.linalg.vecdot. / 变体：先缩放 Q（Q̃ = σQ，S = Q̃ Kᵀ），于是 dK = dSᵀ Q̃ 不再乘因子，dQ = σ dS K；Δ 用 torch.linalg.vecdot 计算。
def attention_backward_from_lse(Q, K, V, out, L, dO, is_causal=False):
    ct = torch.promote_types(Q.dtype, torch.float32)
    sigma = Q.shape[-1] ** -0.5
    q_scaled = Q.to(ct) * sigma
    k, v, d_out = K.to(ct), V.to(ct), dO.to(ct)
    scores = q_scaled @ k.transpose(-1, -2)
    if is_causal:
        scores = scores.masked_fill(torch.ones_like(scores, dtype=torch.bool).triu(1), float("-inf"))
    p = (scores - L.to(ct).unsqueeze(-1)).exp()
    delta = torch.linalg.vecdot(d_out, out.to(ct)).unsqueeze(-1)
    ds = p * (d_out @ v.transpose(-1, -2) - delta)
    return (
        (sigma * (ds @ k)).to(Q.dtype),
        (ds.transpose(-1, -2) @ q_scaled).to(K.dtype),
        (p.transpose(-1, -2) @ d_out).to(V.dtype),
    )
