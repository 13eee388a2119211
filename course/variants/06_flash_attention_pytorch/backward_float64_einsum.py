# selftest-replaces: fa_backward
# Variant: computes every tile in float64 with einsum, 16-query × 48-key tiles of its own. / 变体：每个分块都用 float64 和 einsum 计算，自己定义 16 个查询 × 48 个键的分块。
def flash_backward(Q, K, V, out, L, dO, is_causal=False):
    """Tiled backward pass: rebuilds each tile of P from Q, K and L (recomputation).

    `out` is the forward output O and L its log-sum-exp (float32, (B, Nq)); dO is the upstream gradient.

    Returns dQ, dK, dV with the shapes and dtypes of Q, K, V. Never builds an Nq×Nk tensor.
    """
    tile_q, tile_k = 16, 48
    n_q, d = Q.shape[1], Q.shape[2]
    n_k = K.shape[1]
    scale = 1 / math.sqrt(d)
    f64 = torch.float64
    D = torch.einsum("bnd,bnd->bn", dO.to(f64), out.to(f64))
    dQ = torch.zeros(Q.shape, dtype=f64, device=Q.device)
    dK = torch.zeros(K.shape, dtype=f64, device=Q.device)
    dV = torch.zeros(V.shape, dtype=f64, device=Q.device)
    for k0 in range(0, n_k, tile_k):
        k1 = min(n_k, k0 + tile_k)
        k, v = K[:, k0:k1].to(f64), V[:, k0:k1].to(f64)
        q_first = k0 if is_causal else 0  # causal: queries before k0 see none of these keys
        for q0 in range(q_first - q_first % tile_q, n_q, tile_q):
            q1 = min(n_q, q0 + tile_q)
            q, do = Q[:, q0:q1].to(f64), dO[:, q0:q1].to(f64)
            s = score_tile(q, k, q0, k0, scale, is_causal)  # float64 in, float64 out
            p = torch.exp(s - L[:, q0:q1].to(f64)[:, :, None])
            dp = torch.einsum("bqd,bkd->bqk", do, v)
            ds = p * (dp - D[:, q0:q1, None])
            dV[:, k0:k1] += torch.einsum("bqk,bqd->bkd", p, do)
            dK[:, k0:k1] += scale * torch.einsum("bqk,bqd->bkd", ds, q)
            dQ[:, q0:q1] += scale * torch.einsum("bqk,bkd->bqd", ds, k)
    return dQ.to(Q.dtype), dK.to(K.dtype), dV.to(V.dtype)
