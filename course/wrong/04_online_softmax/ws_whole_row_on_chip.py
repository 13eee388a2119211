# selftest-replaces: os_weighted_sum
# selftest-must-fail: test_weighted_sum
# selftest-whole: concatenates whole rows and calls torch.softmax instead of the running statistics
# Mistake: reads the scores block by block once but keeps every block, concatenates whole rows and calls torch.softmax.
# 错误：分块读一次分数，但把所有块留下来拼成整行，再调用 torch.softmax。
def online_softmax_weighted_sum(scores, values, block_size):
    work = torch.promote_types(torch.promote_types(scores.dtype, values.dtype), torch.float32)
    blocks = [scores[..., c0 : c0 + block_size].to(work) for c0 in range(0, scores.shape[-1], block_size)]
    s = torch.cat(blocks, dim=-1)
    p = torch.softmax(s, dim=-1).nan_to_num(0.0)
    return (p @ values.to(work)).to(values.dtype), torch.logsumexp(s, dim=-1).float()
