# selftest-replaces: fa_forward
# Variant: 64×32 tiles, keeps the running log-sum-exp itself (logaddexp) instead of m and ℓ. / 变体：64×32 分块，直接维护运行中的 log-sum-exp（logaddexp），而不是 m 和 ℓ。
BLOCK_Q = 64  # query tile size Bq: your choice, at least 16
BLOCK_K = 32  # key/value tile size Bk: your choice, at least 16


def flash_forward(Q, K, V, is_causal=False):
    """Tiled forward pass with online softmax. Q (B, Nq, d), K and V (B, Nk, d).

    Returns O (B, Nq, d) in Q's dtype and L (B, Nq) in float32, L = m + log(ℓ) per query row.
    Never builds an Nq×Nk tensor; handles N that is not a multiple of the tile sizes.
    """
    B, Nq, d = Q.shape
    Nk = K.shape[-2]
    scale = d**-0.5
    work = torch.promote_types(Q.dtype, torch.float32)
    out_tiles, lse_tiles = [], []
    for q0 in range(0, Nq, BLOCK_Q):
        q1 = min(q0 + BLOCK_Q, Nq)
        q = Q[:, q0:q1]
        lse = torch.full((B, q1 - q0, 1), float("-inf"), dtype=work, device=Q.device)
        o = torch.zeros((B, q1 - q0, d), dtype=work, device=Q.device)  # always Σ softmax-so-far · v
        n_keys = min(Nk, q1) if is_causal else Nk
        for k0 in range(0, n_keys, BLOCK_K):
            k1 = min(k0 + BLOCK_K, Nk)
            s = score_tile(q, K[:, k0:k1], q0, k0, scale, is_causal)
            lse_new = torch.logaddexp(lse, torch.logsumexp(s, dim=-1, keepdim=True))
            # exp(lse - lse') is the weight the old rows keep; exp(s - lse') the new tile's weights
            o = torch.exp(lse - lse_new) * o + torch.exp(s - lse_new) @ V[:, k0:k1].to(work)
            lse = lse_new
        out_tiles.append(o.to(Q.dtype))
        lse_tiles.append(lse.squeeze(-1).float())
    return torch.cat(out_tiles, dim=1), torch.cat(lse_tiles, dim=1)
