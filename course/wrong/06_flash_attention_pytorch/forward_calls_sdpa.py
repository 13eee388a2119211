# selftest-replaces: fa_forward
# selftest-must-fail: test_forward, test_causal, test_autograd_function
# selftest-whole: calls the library instead of the tiles
# Mistake: calls torch's scaled_dot_product_attention instead of implementing the tiles.
# 错误：直接调用 torch 的 scaled_dot_product_attention，没有自己实现。
BLOCK_Q = 64
BLOCK_K = 64


def flash_forward(Q, K, V, is_causal=False):
    out = torch.nn.functional.scaled_dot_product_attention(Q, K, V, is_causal=is_causal)
    L = torch.logsumexp(score_tile(Q, K, 0, 0, Q.shape[-1] ** -0.5, is_causal), dim=-1)
    return out, L.float()
