# selftest-notebook: online_softmax.ipynb
# selftest-replaces: os_weighted_sum
# selftest-must-fail: test_weighted_sum
# selftest-whole: a different program, not the reference with a change
# Mistake: keeps m, l and the output accumulator in the inputs' dtype (float16/bfloat16 on long rows).
# 错误：m、l 和输出累加器用输入的 dtype（长行上的 float16/bfloat16）。
def online_softmax_weighted_sum(scores, values, block_size):
    n_k = scores.shape[-1]
    rows = scores.shape[:-1]
    m = torch.full(rows, float("-inf"), dtype=values.dtype, device=scores.device)
    row_sum = torch.zeros(rows, dtype=values.dtype, device=scores.device)
    acc = torch.zeros((*rows, values.shape[-1]), dtype=values.dtype, device=scores.device)
    for c0 in range(0, n_k, block_size):
        s = scores[..., c0 : c0 + block_size]
        m_new = torch.maximum(m, s.amax(dim=-1))
        shift = finite_max(m_new)
        p = torch.exp(s - shift[..., None])
        rescale = torch.exp(m - shift)
        row_sum = row_sum * rescale + p.sum(dim=-1)
        acc = acc * rescale[..., None] + p @ values[..., c0 : c0 + block_size, :]
        m = m_new
    out = acc / torch.where(row_sum > 0, row_sum, torch.ones_like(row_sum))[..., None]
    return out, (m + torch.log(row_sum)).float()
