# selftest-replaces: os_weighted_sum
# Variant: base-2 exponentials as the Triton kernels use them (exp2 of scores times log2(e)), L converted back. / 变体：像 Triton 内核那样用以 2 为底的指数，最后把 L 换回自然对数。
def online_softmax_weighted_sum(scores, values, block_size):
    work = torch.promote_types(torch.promote_types(scores.dtype, values.dtype), torch.float32)
    rows = scores.shape[:-1]
    m2 = torch.full(rows, float("-inf"), dtype=work, device=scores.device)
    total = torch.zeros(rows, dtype=work, device=scores.device)
    acc = torch.zeros((*rows, values.shape[-1]), dtype=work, device=scores.device)
    for c0 in range(0, scores.shape[-1], block_size):
        s2 = scores[..., c0 : c0 + block_size].to(work) * math.log2(math.e)
        m_new = torch.maximum(m2, s2.amax(dim=-1))
        shift = finite_max(m_new)
        p = torch.exp2(s2 - shift[..., None])
        rescale = torch.exp2(m2 - shift)
        total = total * rescale + p.sum(dim=-1)
        acc = acc * rescale[..., None] + p @ values[..., c0 : c0 + block_size, :].to(work)
        m2 = m_new
    out = acc / torch.where(total > 0, total, torch.ones_like(total))[..., None]
    return out.to(values.dtype), ((m2 + torch.log2(total)) * math.log(2)).float()
