# selftest-replaces: standard_attention
# Variant: computes both products in float32 and rounds S, P and O to the input dtype at the end.
# 变体：两个乘积都用 float32 计算，最后把 S、P、O 舍入到输入的 dtype。
def standard_attention(Q, K, V, is_causal=False):
    work = torch.promote_types(Q.dtype, torch.float32)
    q, k, v = Q.to(work), K.to(work), V.to(work)
    s = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(Q.shape[-1])
    if is_causal:
        n_q, n_k = s.shape[-2], s.shape[-1]
        allowed = torch.tril(torch.ones(n_q, n_k, dtype=torch.bool, device=s.device))
        s = s.masked_fill(~allowed, float("-inf"))
    p = torch.softmax(s, dim=-1)
    return torch.matmul(p, v).to(Q.dtype), s.to(Q.dtype), p.to(Q.dtype)
