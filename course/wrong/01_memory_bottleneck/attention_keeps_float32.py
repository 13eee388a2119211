# selftest-notebook: memory_bottleneck.ipynb
# selftest-replaces: standard_attention
# selftest-must-fail: test_standard_attention
# Mistake: computes everything in float32 and returns S, P and O in float32 for half-precision inputs.
# 错误：全程用 float32 计算，半精度输入时也返回 float32 的 S、P、O。
def standard_attention(Q, K, V, is_causal=False):
    Q, K, V = Q.float(), K.float(), V.float()
    S = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
    if is_causal:
        n_q, n_k = S.shape[-2:]
        later = torch.arange(n_k, device=S.device)[None, :] > torch.arange(n_q, device=S.device)[:, None]
        S = S.masked_fill(later, float("-inf"))
    P = torch.softmax(S, dim=-1)
    return P @ V, S, P
