# selftest-replaces: fa_backward
# Variant: rebuilds P with exp2 (log2 e scaling), keeps dK/dV of a key tile in local accumulators. / 变体：用 exp2（乘以 log2 e）重建 P，键块的 dK/dV 存在局部累加器里。
def flash_backward(Q, K, V, out, L, dO, is_causal=False):
    """Tiled backward pass: rebuilds each tile of P from Q, K and L (recomputation).

    `out` is the forward output O and L its log-sum-exp (float32, (B, Nq)); dO is the upstream gradient.

    Returns dQ, dK, dV with the shapes and dtypes of Q, K, V. Never builds an Nq×Nk tensor.
    """
    log2e = 1 / math.log(2)
    B, n_q, d = Q.shape
    n_k = K.shape[1]
    scale = d**-0.5
    ct = torch.promote_types(Q.dtype, torch.float32)
    Qc, Kc, Vc, dOc = (t.to(ct) for t in (Q, K, V, dO))
    L2 = L.to(ct) * log2e  # L in base 2
    D = (dOc * out.to(ct)).sum(dim=-1)
    dQ = torch.zeros_like(Qc)
    dK_tiles, dV_tiles = [], []
    for k0 in range(0, n_k, BLOCK_K):
        k1 = min(k0 + BLOCK_K, n_k)
        k, v = Kc[:, k0:k1], Vc[:, k0:k1]
        dk = torch.zeros_like(k)
        dv = torch.zeros_like(v)
        for q0 in range(0, n_q, BLOCK_Q):
            q1 = min(q0 + BLOCK_Q, n_q)
            if is_causal and q1 - 1 < k0:
                continue
            s = score_tile(Qc[:, q0:q1], k, q0, k0, scale, is_causal)
            p = torch.exp2(s * log2e - L2[:, q0:q1, None])  # = exp(S - L)
            do = dOc[:, q0:q1]
            dv += torch.bmm(p.transpose(1, 2), do)
            ds = p * (torch.bmm(do, v.transpose(1, 2)) - D[:, q0:q1, None]) * scale  # scale folded into dS
            dk += torch.bmm(ds.transpose(1, 2), Qc[:, q0:q1])
            dQ[:, q0:q1] += torch.bmm(ds, k)
        dK_tiles.append(dk)
        dV_tiles.append(dv)
    dK = torch.cat(dK_tiles, dim=1)
    dV = torch.cat(dV_tiles, dim=1)
    return dQ.to(Q.dtype), dK.to(K.dtype), dV.to(V.dtype)
