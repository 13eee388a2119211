# selftest-replaces: rc_backward_lse
# Variant: base-2 exponentials as GPU kernels use them: P = 2^(S·log2 e − L·log2 e). / 变体：像 GPU 内核那样用以 2 为底的指数：P = 2^(S·log2 e − L·log2 e)。
LOG2_E = 1.4426950408889634


def attention_backward_from_lse(Q, K, V, out, L, dO, is_causal=False):
    work = torch.promote_types(Q.dtype, torch.float32)
    q, k, v, o, do = Q.to(work), K.to(work), V.to(work), out.to(work), dO.to(work)
    scale = 1 / math.sqrt(q.shape[-1])
    s2 = (q @ k.mT) * (scale * LOG2_E)
    if is_causal:
        i = torch.arange(q.shape[-2], device=q.device).view(-1, 1)
        j = torch.arange(k.shape[-2], device=q.device).view(1, -1)
        s2 = torch.where(j <= i, s2, torch.full_like(s2, -math.inf))
    p = torch.exp2(s2 - (L.to(work) * LOG2_E).unsqueeze(-1))
    dv = p.mT @ do
    dp = do @ v.mT
    ds = p * (dp - (do * o).sum(-1, keepdim=True))
    return (scale * (ds @ k)).to(Q.dtype), (scale * (ds.mT @ q)).to(K.dtype), dv.to(V.dtype)
