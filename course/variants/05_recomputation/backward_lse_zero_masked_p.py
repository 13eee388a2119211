# selftest-replaces: rc_backward_lse
# Variant: leaves the scores unmasked and zeroes the masked entries of P afterwards with torch.where. / 变体：分数不加掩码，之后用 torch.where 把 P 中被遮住的元素置零。
def attention_backward_from_lse(Q, K, V, out, L, dO, is_causal=False):
    dtype = torch.promote_types(Q.dtype, torch.float32)
    scale = Q.shape[-1] ** -0.5
    q, k, v = Q.to(dtype), K.to(dtype), V.to(dtype)
    p = torch.exp(scale * torch.matmul(q, k.transpose(1, 2)) - L.to(dtype)[:, :, None])
    if is_causal:
        visible = torch.ones(Q.shape[1], K.shape[1], device=Q.device).tril().bool()
        p = torch.where(visible, p, torch.zeros((), dtype=dtype, device=Q.device))
    g = dO.to(dtype)
    delta = torch.sum(g * out.to(dtype), dim=2, keepdim=True)
    ds = p * (torch.matmul(g, v.transpose(1, 2)) - delta)
    dq = torch.matmul(ds, k) * scale
    dk = torch.matmul(ds.transpose(1, 2), q) * scale
    dv = torch.matmul(p.transpose(1, 2), g)
    return dq.to(Q.dtype), dk.to(K.dtype), dv.to(V.dtype)
