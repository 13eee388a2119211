# selftest-replaces: standard_attention
# Variant: P = exp(S - logsumexp(S)) per row; the mask comes from a row/column comparison helper.
# 变体：按行 P = exp(S - logsumexp(S))；掩码由一个比较行列下标的小函数给出。
def later_keys(n_q, n_k, device):
    return torch.arange(n_k, device=device).unsqueeze(0) > torch.arange(n_q, device=device).unsqueeze(1)


def standard_attention(Q, K, V, is_causal=False):
    scale = 1 / math.sqrt(Q.size(-1))
    S = torch.matmul(Q, K.transpose(-2, -1)).mul(scale)
    if is_causal:
        S = S.masked_fill(later_keys(Q.size(-2), K.size(-2), Q.device), float("-inf"))
    S32 = S.float() if S.dtype != torch.float64 else S
    P = torch.exp(S32 - torch.logsumexp(S32, dim=-1, keepdim=True)).to(Q.dtype)
    return torch.matmul(P, V), S, P
