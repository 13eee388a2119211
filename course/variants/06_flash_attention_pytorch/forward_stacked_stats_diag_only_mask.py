# selftest-replaces: fa_forward
# Variant: 16×64 tiles, m and ℓ stacked in one tensor, mask requested only on diagonal tiles. / 变体：16×64 分块，m 和 ℓ 放在同一个张量里，只在对角线块上要求掩码。
BLOCK_Q = 16  # query tile size Bq: your choice, at least 16
BLOCK_K = 64  # key/value tile size Bk: your choice, at least 16


def flash_forward(Q, K, V, is_causal=False):
    """Tiled forward pass with online softmax. Q (B, Nq, d), K and V (B, Nk, d).

    Returns O (B, Nq, d) in Q's dtype and L (B, Nq) in float32, L = m + log(ℓ) per query row.
    Never builds an Nq×Nk tensor; handles N that is not a multiple of the tile sizes.
    """
    b, n_q, d = Q.shape
    n_k = K.shape[1]
    acc_dtype = torch.promote_types(Q.dtype, torch.float32)
    scale = 1 / d**0.5
    n_key_tiles = (n_k + BLOCK_K - 1) // BLOCK_K
    O = torch.empty_like(Q)
    L = Q.new_empty((b, n_q), dtype=torch.float32)
    for q0 in range(0, n_q, BLOCK_Q):
        q1 = min(q0 + BLOCK_Q, n_q)
        rows = q1 - q0
        stats = torch.zeros((2, b, rows), dtype=acc_dtype, device=Q.device)  # stats[0] = m, stats[1] = ℓ
        stats[0] = float("-inf")
        acc = torch.zeros((b, rows, d), dtype=acc_dtype, device=Q.device)
        # causal: the last key tile that holds a key ≤ q1 - 1
        n_tiles = min(n_key_tiles, (q1 - 1) // BLOCK_K + 1) if is_causal else n_key_tiles
        for t in range(n_tiles):
            k0, k1 = t * BLOCK_K, min((t + 1) * BLOCK_K, n_k)
            needs_mask = is_causal and k1 - 1 > q0  # some key of the tile lies after some query
            s = score_tile(Q[:, q0:q1], K[:, k0:k1], q0, k0, scale, needs_mask)
            m_prev, ell_prev = stats[0], stats[1]
            m_next = torch.max(m_prev, s.max(dim=2).values)
            p = (s - m_next.unsqueeze(2)).exp()
            rescale = (m_prev - m_next).exp()
            acc = acc * rescale.unsqueeze(2) + torch.bmm(p, V[:, k0:k1].to(acc_dtype))
            stats = torch.stack((m_next, ell_prev * rescale + p.sum(dim=2)))
        O[:, q0:q1] = (acc / stats[1].unsqueeze(2)).to(O.dtype)
        L[:, q0:q1] = stats[0] + stats[1].log()
    return O, L
