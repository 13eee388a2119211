# selftest-replaces: fa_forward
# Variant: loops over the batch too, computes every tile in float64, then casts O and L. / 变体：也对 batch 循环，每个分块都用 float64 计算，最后再转换 O 和 L。
BLOCK_Q = 64  # query tile size Bq: your choice, at least 16
BLOCK_K = 96  # key/value tile size Bk: your choice, at least 16


def flash_forward(Q, K, V, is_causal=False):
    """Tiled forward pass with online softmax. Q (B, Nq, d), K and V (B, Nk, d).

    Returns O (B, Nq, d) in Q's dtype and L (B, Nq) in float32, L = m + log(ℓ) per query row.
    Never builds an Nq×Nk tensor; handles N that is not a multiple of the tile sizes.
    """
    n_batch, n_q, d = Q.shape
    n_k = K.shape[1]
    O = torch.empty_like(Q)
    L = torch.empty(n_batch, n_q, dtype=torch.float32, device=Q.device)
    for b in range(n_batch):
        for q0 in range(0, n_q, BLOCK_Q):
            q1 = min(q0 + BLOCK_Q, n_q)
            q = Q[b : b + 1, q0:q1].double()  # keep a batch axis of size 1 for score_tile
            m = torch.full((q1 - q0,), -math.inf, dtype=torch.float64, device=Q.device)
            ell = torch.zeros(q1 - q0, dtype=torch.float64, device=Q.device)
            acc = torch.zeros(q1 - q0, d, dtype=torch.float64, device=Q.device)
            k0 = 0
            while k0 < n_k and not (is_causal and k0 > q1 - 1):
                k1 = min(k0 + BLOCK_K, n_k)
                s = score_tile(q, K[b : b + 1, k0:k1].double(), q0, k0, d**-0.5, is_causal)[0]
                m_new = torch.maximum(m, s.max(dim=1).values)
                alpha = torch.exp(m - m_new)
                p = torch.exp(s - m_new[:, None])
                ell = alpha * ell + p.sum(dim=1)
                acc = alpha[:, None] * acc + p @ V[b, k0:k1].double()
                m = m_new
                k0 = k1
            O[b, q0:q1] = (acc / ell[:, None]).to(Q.dtype)
            L[b, q0:q1] = (m + torch.log(ell)).float()
    return O, L
