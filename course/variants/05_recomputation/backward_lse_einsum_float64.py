# selftest-replaces: rc_backward_lse
# Variant: computes in float64 throughout with einsum, the causal mask from torch.tril. / 变体：全程用 float64 和 einsum 计算，因果掩码来自 torch.tril。
def attention_backward_from_lse(Q, K, V, out, L, dO, is_causal=False):
    q, k, v, o, g = (t.double() for t in (Q, K, V, out, dO))
    sigma = 1.0 / math.sqrt(Q.shape[-1])
    s = torch.einsum("bid,bjd->bij", q, k) * sigma
    if is_causal:
        keep = torch.tril(torch.ones(Q.shape[-2], K.shape[-2], dtype=torch.bool, device=Q.device))
        s = s.masked_fill(~keep, -math.inf)
    p = torch.exp(s - L.double().unsqueeze(-1))
    delta = torch.einsum("bid,bid->bi", g, o).unsqueeze(-1)
    ds = p * (torch.einsum("bid,bjd->bij", g, v) - delta)
    dq = torch.einsum("bij,bjd->bid", ds, k) * sigma
    dk = torch.einsum("bij,bid->bjd", ds, q) * sigma
    dv = torch.einsum("bij,bid->bjd", p, g)
    return dq.to(Q.dtype), dk.to(K.dtype), dv.to(V.dtype)
