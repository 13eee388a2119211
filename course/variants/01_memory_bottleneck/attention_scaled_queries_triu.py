# selftest-replaces: standard_attention
# Variant: scales Q before the product, builds the causal mask with triu, softmax through dtype=.
# 变体：先把 Q 乘以缩放因子再做乘积，用 triu 构造因果掩码，softmax 用 dtype= 参数。
def standard_attention(Q, K, V, is_causal=False):
    d = Q.shape[-1]
    S = (Q * (1.0 / math.sqrt(d))) @ K.mT
    if is_causal:
        mask = torch.ones(S.shape[-2:], dtype=torch.bool, device=S.device).triu(1)
        S = S.masked_fill(mask, -math.inf)
    P = torch.softmax(S, dim=-1, dtype=torch.promote_types(S.dtype, torch.float32)).to(S.dtype)
    return P @ V, S, P
