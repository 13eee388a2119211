# selftest-replaces: os_weighted_sum
# Variant: float64 statistics and accumulator, einsum for the block product, masked exponentials zeroed. / 变体：float64 统计量和累加器，块乘积用 einsum，被遮住位置的指数置 0。
def online_softmax_weighted_sum(scores, values, block_size):
    rows = scores.shape[:-1]
    m = torch.full(rows, float("-inf"), dtype=torch.float64, device=scores.device)
    total = torch.zeros(rows, dtype=torch.float64, device=scores.device)
    acc = torch.zeros((*rows, values.shape[-1]), dtype=torch.float64, device=scores.device)
    for c0 in range(0, scores.shape[-1], block_size):
        s = scores[..., c0 : c0 + block_size].double()
        m_new = torch.maximum(m, s.amax(dim=-1))
        p = torch.where(torch.isneginf(s), torch.zeros_like(s), torch.exp(s - m_new[..., None]))
        rescale = torch.where(torch.isneginf(m), torch.zeros_like(m), torch.exp(m - m_new))
        total = total * rescale + p.sum(dim=-1)
        acc = acc * rescale[..., None] + torch.einsum("...qk,...kd->...qd", p, values[..., c0 : c0 + block_size, :].double())
        m = m_new
    out = torch.where(total[..., None] > 0, acc / total[..., None], torch.zeros_like(acc))
    return out.to(values.dtype), (m + torch.log(total)).float()
