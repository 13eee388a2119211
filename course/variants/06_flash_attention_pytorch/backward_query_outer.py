# selftest-replaces: fa_backward
# Variant: query tiles outside, key tiles inside (dQ kept per tile, dK and dV added into global tensors). / 变体：外层遍历查询块、内层遍历键块（dQ 按块累加，dK、dV 加到全局张量上）。
def flash_backward(Q, K, V, out, L, dO, is_causal=False):
    """Tiled backward pass: rebuilds each tile of P from Q, K and L (recomputation).

    `out` is the forward output O and L its log-sum-exp (float32, (B, Nq)); dO is the upstream gradient.

    Returns dQ, dK, dV with the shapes and dtypes of Q, K, V. Never builds an Nq×Nk tensor.
    """
    n_q, d = Q.shape[-2:]
    n_k = K.shape[-2]
    scale = 1.0 / math.sqrt(d)
    ct = torch.promote_types(Q.dtype, torch.float32)
    dQ = torch.empty(Q.shape, dtype=ct, device=Q.device)
    dK = torch.zeros(K.shape, dtype=ct, device=K.device)
    dV = torch.zeros(V.shape, dtype=ct, device=V.device)
    for q0 in range(0, n_q, BLOCK_Q):
        q1 = min(q0 + BLOCK_Q, n_q)
        q = Q[:, q0:q1].to(ct)
        do = dO[:, q0:q1].to(ct)
        lse = L[:, q0:q1].to(ct).unsqueeze(-1)
        delta = (do * out[:, q0:q1].to(ct)).sum(-1, keepdim=True)  # D for these rows only
        dq = torch.zeros_like(q)
        for k0 in range(0, n_k, BLOCK_K):
            if is_causal and k0 >= q1:
                break  # all later key tiles are masked for these queries
            k1 = min(k0 + BLOCK_K, n_k)
            k, v = K[:, k0:k1].to(ct), V[:, k0:k1].to(ct)
            p = (score_tile(q, k, q0, k0, scale, is_causal) - lse).exp()
            dp = do @ v.transpose(-2, -1)
            ds = p * (dp - delta)
            dq += scale * (ds @ k)
            dK[:, k0:k1] += scale * (ds.transpose(-2, -1) @ q)
            dV[:, k0:k1] += p.transpose(-2, -1) @ do
        dQ[:, q0:q1] = dq
    return dQ.to(Q.dtype), dK.to(K.dtype), dV.to(V.dtype)
