# selftest-notebook: memory_bottleneck.ipynb
# selftest-replaces: standard_attention
# selftest-must-fail: test_standard_attention
# selftest-whole: a different program, not the reference with a change
# Mistake: the causal mask also hides the diagonal (j >= i): the first row is all -inf and its softmax is NaN.
# 错误：因果掩码把对角线也遮住（j >= i）：第一行全是 -inf，softmax 得到 NaN。
def standard_attention(Q, K, V, is_causal=False):
    S = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
    if is_causal:
        n_q, n_k = S.shape[-2:]
        hidden = torch.arange(n_k, device=S.device)[None, :] >= torch.arange(n_q, device=S.device)[:, None]
        S = S.masked_fill(hidden, float("-inf"))
    P = torch.softmax(S.float(), dim=-1).to(Q.dtype)
    return P @ V, S, P
