# selftest-notebook: memory_bottleneck.ipynb
# selftest-replaces: standard_attention
# selftest-must-fail: test_standard_attention
# Mistake: normalises over the queries (dim=-2) instead of over the keys of each row.
# 错误：沿查询维（dim=-2）而不是沿每行的键做 softmax。
def standard_attention(Q, K, V, is_causal=False):
    S = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
    if is_causal:
        n_q, n_k = S.shape[-2:]
        later = torch.arange(n_k, device=S.device)[None, :] > torch.arange(n_q, device=S.device)[:, None]
        S = S.masked_fill(later, float("-inf"))
    P = torch.softmax(S.float(), dim=-2).to(Q.dtype)
    return P @ V, S, P
