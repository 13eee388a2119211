# selftest-notebook: memory_bottleneck.ipynb
# selftest-replaces: standard_attention
# selftest-must-fail: test_standard_attention
# selftest-whole: a different program, not the reference with a change
# Mistake: aligns the causal mask bottom-right (query i sees keys j <= i + Nk - Nq): right only when Nq = Nk.
# 错误：因果掩码右下角对齐（查询 i 看键 j <= i + Nk - Nq），只有 Nq = Nk 时才对。
def standard_attention(Q, K, V, is_causal=False):
    S = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
    if is_causal:
        n_q, n_k = S.shape[-2:]
        rows = torch.arange(n_q, device=S.device)[:, None] + (n_k - n_q)
        S = S.masked_fill(torch.arange(n_k, device=S.device)[None, :] > rows, float("-inf"))
    P = torch.softmax(S.float(), dim=-1).to(Q.dtype)
    return P @ V, S, P
