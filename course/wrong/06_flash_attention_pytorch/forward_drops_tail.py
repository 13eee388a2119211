# selftest-notebook: flash_attention_pytorch.ipynb
# selftest-replaces: fa_forward
# selftest-must-fail: test_forward, test_causal, test_autograd_function
# Mistake: loops over N // B full tiles only (like the seed notebook), so the tail rows and keys are dropped.
# 错误：只遍历 N // B 个完整的块（和原始笔记一样），尾部的行和键被丢掉。
BLOCK_Q = 64  # query tile size Bq: your choice, at least 16
BLOCK_K = 64  # key/value tile size Bk: your choice, at least 16


def flash_forward(Q, K, V, is_causal=False):
    """Tiled forward pass with online softmax. Q (B, Nq, d), K and V (B, Nk, d).

    Returns O (B, Nq, d) in Q's dtype and L (B, Nq) in float32, L = m + log(ℓ) per query row.
    Never builds an Nq×Nk tensor; handles N that is not a multiple of the tile sizes.
    """
    batch, n_q, d = Q.shape
    n_k = K.shape[-2]
    scale = d**-0.5
    compute = torch.promote_types(Q.dtype, torch.float32)
    out = torch.zeros_like(Q)
    L = torch.zeros(batch, n_q, device=Q.device, dtype=torch.float32)
    for q0 in range(0, n_q // BLOCK_Q * BLOCK_Q, BLOCK_Q):
        q1 = min(q0 + BLOCK_Q, n_q)
        q = Q[:, q0:q1]
        m = torch.full((batch, q1 - q0), float("-inf"), device=Q.device, dtype=compute)
        ell = torch.zeros(batch, q1 - q0, device=Q.device, dtype=compute)
        acc = torch.zeros(batch, q1 - q0, d, device=Q.device, dtype=compute)
        k_end = min(n_k, q1) if is_causal else n_k  # causal: later keys are all masked
        for k0 in range(0, k_end // BLOCK_K * BLOCK_K, BLOCK_K):
            k1 = min(k0 + BLOCK_K, n_k)
            s = score_tile(q, K[:, k0:k1], q0, k0, scale, is_causal)
            m_new = torch.maximum(m, s.amax(dim=-1))
            p = torch.exp(s - m_new[..., None])
            alpha = torch.exp(m - m_new)  # rescales what was accumulated under the old maximum
            ell = alpha * ell + p.sum(dim=-1)
            acc = alpha[..., None] * acc + p @ V[:, k0:k1].to(compute)
            m = m_new
        out[:, q0:q1] = (acc / ell[..., None]).to(Q.dtype)
        L[:, q0:q1] = (m + torch.log(ell)).float()
    return out, L
