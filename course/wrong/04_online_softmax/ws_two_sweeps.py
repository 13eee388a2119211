# selftest-replaces: os_weighted_sum
# selftest-must-fail: test_weighted_sum
# selftest-whole: two sweeps over the scores instead of one
# Mistake: finds m and l in a first sweep, then reads the scores again to accumulate P V (two reads of S).
# 错误：第一遍求 m 和 l，第二遍再读一次分数累加 P V（S 读了两遍）。
def online_softmax_weighted_sum(scores, values, block_size):
    n_k = scores.shape[-1]
    work = torch.promote_types(torch.promote_types(scores.dtype, values.dtype), torch.float32)
    rows = scores.shape[:-1]
    m = torch.full(rows, float("-inf"), dtype=work, device=scores.device)
    row_sum = torch.zeros(rows, dtype=work, device=scores.device)
    for c0 in range(0, n_k, block_size):
        s = scores[..., c0 : c0 + block_size].to(work)
        m_new = torch.maximum(m, s.amax(dim=-1))
        shift = finite_max(m_new)
        row_sum = row_sum * torch.exp(m - shift) + torch.exp(s - shift[..., None]).sum(dim=-1)
        m = m_new
    shift = finite_max(m)
    out = torch.zeros((*rows, values.shape[-1]), dtype=work, device=scores.device)
    for c0 in range(0, n_k, block_size):
        p = torch.exp(scores[..., c0 : c0 + block_size].to(work) - shift[..., None])
        out = out + p @ values[..., c0 : c0 + block_size, :].to(work)
    out = out / torch.where(row_sum > 0, row_sum, torch.ones_like(row_sum))[..., None]
    return out.to(values.dtype), (m + torch.log(row_sum)).float()
