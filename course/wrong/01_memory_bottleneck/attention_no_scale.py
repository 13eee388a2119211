# selftest-notebook: memory_bottleneck.ipynb
# selftest-replaces: standard_attention
# selftest-must-fail: test_standard_attention
# Mistake: forgets the softmax scale 1/√d.
# 错误：忘记 softmax 缩放因子 1/√d。
def standard_attention(Q, K, V, is_causal=False):
    S = Q @ K.transpose(-2, -1)
    if is_causal:
        n_q, n_k = S.shape[-2:]
        later = torch.arange(n_k, device=S.device)[None, :] > torch.arange(n_q, device=S.device)[:, None]
        S = S.masked_fill(later, float("-inf"))
    P = torch.softmax(S.to(torch.promote_types(S.dtype, torch.float32)), dim=-1).to(Q.dtype)
    return P @ V, S, P
