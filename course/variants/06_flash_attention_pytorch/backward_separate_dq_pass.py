# selftest-replaces: fa_backward
# Variant: two passes with their own 128×32 / 32×128 tiles: dK, dV with keys outside, then dQ with queries outside. / 变体：两遍，各用自己的 128×32 / 32×128 分块：先外层遍历键求 dK、dV，再外层遍历查询求 dQ。
BWD_KV_TILE = 32  # keys per tile in the dK/dV pass
BWD_Q_TILE = 128  # queries per tile in the dK/dV pass


def _p_tile(Q, K, L, q0, q1, k0, k1, scale, is_causal, ct):
    """One recomputed tile of P = exp(S - L)."""
    s = score_tile(Q[:, q0:q1].to(ct), K[:, k0:k1].to(ct), q0, k0, scale, is_causal)
    return torch.exp(s - L[:, q0:q1, None].to(ct))


def flash_backward(Q, K, V, out, L, dO, is_causal=False):
    """Tiled backward pass: rebuilds each tile of P from Q, K and L (recomputation).

    `out` is the forward output O and L its log-sum-exp (float32, (B, Nq)); dO is the upstream gradient.

    Returns dQ, dK, dV with the shapes and dtypes of Q, K, V. Never builds an Nq×Nk tensor.
    """
    n_q, d = Q.shape[-2], Q.shape[-1]
    n_k = K.shape[-2]
    scale = d**-0.5
    ct = torch.promote_types(Q.dtype, torch.float32)
    D = torch.sum(dO.to(ct) * out.to(ct), dim=-1)
    dK = torch.zeros(K.shape, dtype=ct, device=Q.device)
    dV = torch.zeros(V.shape, dtype=ct, device=Q.device)
    dQ = torch.zeros(Q.shape, dtype=ct, device=Q.device)

    # pass 1: each key tile collects its dK and dV over the query tiles that can see it
    for k0 in range(0, n_k, BWD_KV_TILE):
        k1 = min(k0 + BWD_KV_TILE, n_k)
        dk = torch.zeros(dK[:, k0:k1].shape, dtype=ct, device=Q.device)
        dv = torch.zeros_like(dk)
        for q0 in range(0, n_q, BWD_Q_TILE):
            q1 = min(q0 + BWD_Q_TILE, n_q)
            if is_causal and q1 <= k0:
                continue  # every query of this tile comes before every key
            p = _p_tile(Q, K, L, q0, q1, k0, k1, scale, is_causal, ct)
            do = dO[:, q0:q1].to(ct)
            dv += p.transpose(1, 2) @ do
            ds = p * (do @ V[:, k0:k1].to(ct).transpose(1, 2) - D[:, q0:q1, None])
            dk += ds.transpose(1, 2) @ Q[:, q0:q1].to(ct)
        dK[:, k0:k1] = dk * scale
        dV[:, k0:k1] = dv

    # pass 2: each query tile collects its dQ (tiles swapped: 32 queries × 128 keys)
    for q0 in range(0, n_q, BWD_KV_TILE):
        q1 = min(q0 + BWD_KV_TILE, n_q)
        do = dO[:, q0:q1].to(ct)
        for k0 in range(0, n_k, BWD_Q_TILE):
            k1 = min(k0 + BWD_Q_TILE, n_k)
            if is_causal and k0 > q1 - 1:
                break
            p = _p_tile(Q, K, L, q0, q1, k0, k1, scale, is_causal, ct)
            ds = p * (do @ V[:, k0:k1].to(ct).transpose(1, 2) - D[:, q0:q1, None])
            dQ[:, q0:q1] += (ds @ K[:, k0:k1].to(ct)) * scale
    return dQ.to(Q.dtype), dK.to(K.dtype), dV.to(V.dtype)
