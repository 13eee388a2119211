# selftest-replaces: fa_backward
# Variant: recomputes the scores inline (no score_tile) and masks with torch.where; 64×16 tiles. / 变体：不调用 score_tile，直接重计算分数并用 torch.where 掩码；64×16 分块。
def flash_backward(Q, K, V, out, L, dO, is_causal=False):
    """Tiled backward pass: rebuilds each tile of P from Q, K and L (recomputation).

    `out` is the forward output O and L its log-sum-exp (float32, (B, Nq)); dO is the upstream gradient.

    Returns dQ, dK, dV with the shapes and dtypes of Q, K, V. Never builds an Nq×Nk tensor.
    """
    bq, bk = 64, 16
    n_q, n_k, d = Q.shape[-2], K.shape[-2], Q.shape[-1]
    sigma = d**-0.5
    work = torch.promote_types(Q.dtype, torch.float32)
    D = (dO.to(work) * out.to(work)).sum(-1)
    grads = [torch.zeros(t.shape, dtype=work, device=t.device) for t in (Q, K, V)]
    dQ, dK, dV = grads
    q_pos = torch.arange(n_q, device=Q.device)
    k_pos = torch.arange(n_k, device=Q.device)
    for j0 in range(0, n_k, bk):
        j1 = min(j0 + bk, n_k)
        k, v = K[:, j0:j1].to(work), V[:, j0:j1].to(work)
        for i0 in range(0, n_q, bq):
            i1 = min(i0 + bq, n_q)
            if is_causal and j0 >= i1:
                continue
            q, do = Q[:, i0:i1].to(work), dO[:, i0:i1].to(work)
            s = sigma * q @ k.transpose(-2, -1)
            if is_causal:
                hidden = k_pos[None, j0:j1] > q_pos[i0:i1, None]
                s = torch.where(hidden, float("-inf"), s)
            p = torch.exp(s - L[:, i0:i1, None].to(work))
            ds = p * (do @ v.transpose(-2, -1) - D[:, i0:i1, None])
            dV[:, j0:j1] += p.transpose(-2, -1) @ do
            dK[:, j0:j1] += sigma * ds.transpose(-2, -1) @ q
            dQ[:, i0:i1] += sigma * ds @ k
    return dQ.to(Q.dtype), dK.to(K.dtype), dV.to(V.dtype)
