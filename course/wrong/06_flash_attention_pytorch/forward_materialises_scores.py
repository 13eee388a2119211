# selftest-replaces: fa_forward
# selftest-must-fail: test_forward, test_autograd_function
# selftest-whole: one whole-matrix forward instead of tiles
# Mistake: correct values, but builds the whole Nq x Nk score matrix at once.
# 错误：数值正确，但一次性构造了完整的 Nq×Nk 分数矩阵。
BLOCK_Q = 64
BLOCK_K = 64


def flash_forward(Q, K, V, is_causal=False):
    s = score_tile(Q, K, 0, 0, Q.shape[-1] ** -0.5, is_causal)
    L = torch.logsumexp(s, dim=-1)
    out = torch.exp(s - L[..., None]) @ V.float()
    return out.to(Q.dtype), L.float()
