# selftest-replaces: fa_forward
# Variant: small 32×16 tiles, exp2-based online softmax (scores scaled by log2 e). / 变体：32×16 的小分块，用 exp2 的在线 softmax（分数乘以 log2 e）。
BLOCK_Q = 32  # query tile size Bq: your choice, at least 16
BLOCK_K = 16  # key/value tile size Bk: your choice, at least 16

LOG2_E = 1.4426950408889634  # log2(e): exp(x) = exp2(x · log2 e)


def flash_forward(Q, K, V, is_causal=False):
    """Tiled forward pass with online softmax. Q (B, Nq, d), K and V (B, Nk, d).

    Returns O (B, Nq, d) in Q's dtype and L (B, Nq) in float32, L = m + log(ℓ) per query row.
    Never builds an Nq×Nk tensor; handles N that is not a multiple of the tile sizes.
    """
    B, Nq, d = Q.shape
    Nk = K.shape[1]
    ct = torch.promote_types(Q.dtype, torch.float32)
    O = torch.empty_like(Q)
    L = torch.empty((B, Nq), dtype=torch.float32, device=Q.device)
    for q_start in range(0, Nq, BLOCK_Q):
        q_stop = min(q_start + BLOCK_Q, Nq)
        q = Q[:, q_start:q_stop]
        # running statistics in base 2: m2 = max of s·log2 e, ell = Σ 2^(s·log2 e − m2)
        m2 = torch.full((B, q_stop - q_start, 1), -torch.inf, dtype=ct, device=Q.device)
        ell = torch.zeros((B, q_stop - q_start, 1), dtype=ct, device=Q.device)
        acc = torch.zeros((B, q_stop - q_start, d), dtype=ct, device=Q.device)
        last_key = min(Nk, q_stop) if is_causal else Nk
        for k_start in range(0, last_key, BLOCK_K):
            k_stop = min(k_start + BLOCK_K, Nk)
            s2 = score_tile(q, K[:, k_start:k_stop], q_start, k_start, 1 / math.sqrt(d), is_causal) * LOG2_E
            m2_new = torch.maximum(m2, s2.max(dim=-1, keepdim=True).values)
            p = torch.exp2(s2 - m2_new)
            correction = torch.exp2(m2 - m2_new)
            ell = ell * correction + p.sum(dim=-1, keepdim=True)
            acc = acc * correction + p @ V[:, k_start:k_stop].to(ct)
            m2 = m2_new
        O[:, q_start:q_stop] = (acc / ell).to(O.dtype)
        # back to natural log: L = ln(Σ e^s) = (m2 + log2 ell) / log2 e
        L[:, q_start:q_stop] = ((m2 + torch.log2(ell)) / LOG2_E).squeeze(-1).to(torch.float32)
    return O, L
