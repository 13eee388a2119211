# selftest-replaces: fa_forward
# Variant: key/value tiles outside, query tiles inside; m, ℓ and the accumulator kept for all rows. / 变体：外层遍历键/值块，内层遍历查询块；为所有行保存 m、ℓ 和累加器。
BLOCK_Q = 48  # query tile size Bq: your choice, at least 16
BLOCK_K = 64  # key/value tile size Bk: your choice, at least 16


def flash_forward(Q, K, V, is_causal=False):
    """Tiled forward pass with online softmax. Q (B, Nq, d), K and V (B, Nk, d).

    Returns O (B, Nq, d) in Q's dtype and L (B, Nq) in float32, L = m + log(ℓ) per query row.
    Never builds an Nq×Nk tensor; handles N that is not a multiple of the tile sizes.
    """
    batch, n_q, d = Q.shape
    n_k = K.shape[-2]
    compute = torch.promote_types(Q.dtype, torch.float32)
    sm_scale = d**-0.5
    # O(N) running state for every query row (no Nq×Nk tensor)
    m = torch.full((batch, n_q), float("-inf"), device=Q.device, dtype=compute)
    ell = torch.zeros((batch, n_q), device=Q.device, dtype=compute)
    acc = torch.zeros((batch, n_q, d), device=Q.device, dtype=compute)
    for k0 in range(0, n_k, BLOCK_K):
        k1 = min(k0 + BLOCK_K, n_k)
        k, v = K[:, k0:k1], V[:, k0:k1].to(compute)
        # causal: query tiles that end before k0 see none of these keys
        first_q = (k0 // BLOCK_Q) * BLOCK_Q if is_causal else 0
        for q0 in range(first_q, n_q, BLOCK_Q):
            q1 = min(q0 + BLOCK_Q, n_q)
            if is_causal and q1 - 1 < k0:
                continue
            s = score_tile(Q[:, q0:q1], k, q0, k0, sm_scale, is_causal)
            m_old = m[:, q0:q1]
            m_new = torch.maximum(m_old, s.amax(dim=-1))
            # a row may see no key of this tile yet (causal): keep its state untouched then
            safe = torch.where(torch.isinf(m_new), torch.zeros_like(m_new), m_new)
            alpha = torch.exp(m_old - safe)
            p = torch.exp(s - safe[..., None])
            ell[:, q0:q1] = alpha * ell[:, q0:q1] + p.sum(dim=-1)
            acc[:, q0:q1] = alpha[..., None] * acc[:, q0:q1] + p @ v
            m[:, q0:q1] = m_new
    out = (acc / ell[..., None]).to(Q.dtype)
    L = (m + torch.log(ell)).to(torch.float32)
    return out, L
