# selftest-replaces: os_weighted_sum
# Variant: each block's own (o, m, l), folded in with merge_attention_states (Exercise 3). / 变体：每块先求自己的 (o, m, l)，再用练习三的 merge_attention_states 合并。
def online_softmax_weighted_sum(scores, values, block_size):
    work = torch.promote_types(torch.promote_types(scores.dtype, values.dtype), torch.float32)
    rows = scores.shape[:-1]
    state = (
        torch.zeros((*rows, values.shape[-1]), dtype=work, device=scores.device),
        torch.full(rows, float("-inf"), dtype=work, device=scores.device),
        torch.zeros(rows, dtype=work, device=scores.device),
    )
    for c0 in range(0, scores.shape[-1], block_size):
        s = scores[..., c0 : c0 + block_size].to(work)
        block_max = s.amax(dim=-1)
        p = torch.exp(s - finite_max(block_max)[..., None])
        block = (p @ values[..., c0 : c0 + block_size, :].to(work), block_max, p.sum(dim=-1))
        state = merge_attention_states(*state, *block)
    acc, m, total = state
    out = acc / torch.where(total > 0, total, torch.ones_like(total))[..., None]
    return out.to(values.dtype), (m + torch.log(total)).float()
