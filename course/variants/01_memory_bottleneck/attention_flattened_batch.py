# selftest-replaces: standard_attention
# Variant: flattens the batch dimensions, uses bmm and baddbmm-free scaling, then restores the shapes.
# 变体：把批维度展平，用 bmm 计算，最后恢复形状。
def standard_attention(Q, K, V, is_causal=False):
    *lead, n_q, d = Q.shape
    n_k = K.shape[-2]
    q, k, v = Q.reshape(-1, n_q, d), K.reshape(-1, n_k, d), V.reshape(-1, n_k, d)
    s = torch.bmm(q, k.transpose(1, 2)) / math.sqrt(d)
    if is_causal:
        keep = torch.ones(n_q, n_k, dtype=torch.bool, device=s.device).tril()
        s = torch.where(keep, s, float("-inf"))
    p = torch.softmax(s.to(torch.promote_types(s.dtype, torch.float32)), dim=2).to(s.dtype)
    o = torch.bmm(p, v)
    return o.reshape(*lead, n_q, d), s.reshape(*lead, n_q, n_k), p.reshape(*lead, n_q, n_k)
