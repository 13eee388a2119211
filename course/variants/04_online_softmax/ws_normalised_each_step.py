# selftest-replaces: os_weighted_sum
# Variant: FlashAttention-1's form: the running output is kept normalised and re-normalised at every block. / 变体：FlashAttention-1 的写法：运行输出保持归一化，每块重新归一化。
def online_softmax_weighted_sum(scores, values, block_size):
    work = torch.promote_types(torch.promote_types(scores.dtype, values.dtype), torch.float32)
    rows = scores.shape[:-1]
    m = torch.full(rows, float("-inf"), dtype=work, device=scores.device)
    total = torch.zeros(rows, dtype=work, device=scores.device)
    out = torch.zeros((*rows, values.shape[-1]), dtype=work, device=scores.device)
    for c0 in range(0, scores.shape[-1], block_size):
        s = scores[..., c0 : c0 + block_size].to(work)
        m_new = torch.maximum(m, s.amax(dim=-1))
        shift = finite_max(m_new)
        p = torch.exp(s - shift[..., None])
        kept = total * torch.exp(m - shift)
        new_total = kept + p.sum(dim=-1)
        safe = torch.where(new_total > 0, new_total, torch.ones_like(new_total))[..., None]
        out = (out * kept[..., None] + p @ values[..., c0 : c0 + block_size, :].to(work)) / safe
        m, total = m_new, new_total
    return out.to(values.dtype), (m + torch.log(total)).float()
