# selftest-replaces: fa_forward
# Variant: 128×128 tiles, FlashAttention-1 style: the output is kept normalised and rescaled every step. / 变体：128×128 分块，FlashAttention-1 风格：输出始终保持归一化，每一步重新缩放。
BLOCK_Q = 128  # query tile size Bq: your choice, at least 16
BLOCK_K = 128  # key/value tile size Bk: your choice, at least 16


def flash_forward(Q, K, V, is_causal=False):
    """Tiled forward pass with online softmax. Q (B, Nq, d), K and V (B, Nk, d).

    Returns O (B, Nq, d) in Q's dtype and L (B, Nq) in float32, L = m + log(ℓ) per query row.
    Never builds an Nq×Nk tensor; handles N that is not a multiple of the tile sizes.
    """
    batch, n_q, d = Q.shape
    n_k = K.shape[1]
    scale = 1.0 / math.sqrt(d)
    dtype = torch.promote_types(Q.dtype, torch.float32)
    O = torch.zeros(batch, n_q, d, dtype=Q.dtype, device=Q.device)
    L = torch.zeros(batch, n_q, dtype=torch.float32, device=Q.device)
    for q0 in range(0, n_q, BLOCK_Q):
        q1 = min(n_q, q0 + BLOCK_Q)
        q = Q[:, q0:q1].to(dtype)
        o = torch.zeros(batch, q1 - q0, d, dtype=dtype, device=Q.device)  # normalised output so far
        m = torch.full((batch, q1 - q0), -math.inf, dtype=dtype, device=Q.device)
        ell = torch.zeros(batch, q1 - q0, dtype=dtype, device=Q.device)
        for k0 in range(0, n_k, BLOCK_K):
            if is_causal and k0 >= q1:
                break  # this key tile and all later ones lie entirely above the diagonal
            k1 = min(n_k, k0 + BLOCK_K)
            s = score_tile(q, K[:, k0:k1], q0, k0, scale, is_causal)
            m_new = torch.maximum(m, s.amax(-1))
            p = torch.exp(s - m_new.unsqueeze(-1))
            ell_new = torch.exp(m - m_new) * ell + p.sum(-1)
            # o = (ℓ e^{m - m'} o + P V) / ℓ': undo the old normalisation, add the tile, renormalise
            o = ((ell * torch.exp(m - m_new)).unsqueeze(-1) * o + p @ V[:, k0:k1].to(dtype)) / ell_new.unsqueeze(-1)
            m, ell = m_new, ell_new
        O[:, q0:q1] = o.to(Q.dtype)
        L[:, q0:q1] = (m + ell.log()).to(torch.float32)
    return O, L
