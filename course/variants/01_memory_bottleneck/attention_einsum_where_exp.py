# selftest-replaces: standard_attention
# Variant: einsum for both products, torch.where for the mask, softmax written out with the row maximum.
# 变体：两个乘积都用 einsum，用 torch.where 做掩码，softmax 手写（减去行最大值）。
def standard_attention(Q, K, V, is_causal=False):
    S = torch.einsum("...id,...jd->...ij", Q, K) * Q.shape[-1] ** -0.5
    if is_causal:
        i = torch.arange(Q.shape[-2], device=Q.device)
        j = torch.arange(K.shape[-2], device=Q.device)
        S = torch.where(j[None, :] <= i[:, None], S, torch.full_like(S, float("-inf")))
    work = S.to(torch.promote_types(S.dtype, torch.float32))
    e = torch.exp(work - work.amax(dim=-1, keepdim=True))
    P = (e / e.sum(dim=-1, keepdim=True)).to(Q.dtype)
    O = torch.einsum("...ij,...jd->...id", P, V)
    return O, S, P
