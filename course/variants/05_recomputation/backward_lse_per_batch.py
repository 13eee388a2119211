# selftest-replaces: rc_backward_lse
# Variant: one batch element at a time with 2-D matrix products, written into preallocated gradients. / 变体：逐个批元素用二维矩阵乘法计算，写入预先分配的梯度张量。
def attention_backward_from_lse(Q, K, V, out, L, dO, is_causal=False):
    compute = torch.promote_types(Q.dtype, torch.float32)
    dQ = torch.empty(Q.shape, dtype=compute, device=Q.device)
    dK = torch.empty(K.shape, dtype=compute, device=K.device)
    dV = torch.empty(V.shape, dtype=compute, device=V.device)
    scale = Q.shape[-1] ** -0.5
    n_q, n_k = Q.shape[1], K.shape[1]
    blocked = torch.arange(n_k, device=Q.device)[None, :] > torch.arange(n_q, device=Q.device)[:, None]
    for b in range(Q.shape[0]):
        q, k, v = Q[b].to(compute), K[b].to(compute), V[b].to(compute)
        o, g, lse = out[b].to(compute), dO[b].to(compute), L[b].to(compute)
        s = (q @ k.T) * scale
        if is_causal:
            s[blocked] = float("-inf")
        p = (s - lse[:, None]).exp()
        ds = p * (g @ v.T - (g * o).sum(1)[:, None])
        dQ[b] = ds @ k * scale
        dK[b] = ds.T @ q * scale
        dV[b] = p.T @ g
    return dQ.to(Q.dtype), dK.to(K.dtype), dV.to(V.dtype)
