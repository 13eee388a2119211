# selftest-replaces: os_online_softmax
# Variant: each block's own (m, l), folded in with merge_softmax_states (the cell below). / 变体：每块先求自己的 (m, l)，再用下面单元格的 merge_softmax_states 合并。
def online_softmax(x, block_size):
    work = torch.promote_types(x.dtype, torch.float32)
    m = torch.full(x.shape[:-1], float("-inf"), dtype=work, device=x.device)
    total = torch.zeros(x.shape[:-1], dtype=work, device=x.device)
    for c0 in range(0, x.shape[-1], block_size):
        block = x[..., c0 : c0 + block_size].to(work)
        block_max = block.amax(dim=-1)
        block_sum = torch.exp(block - finite_max(block_max)[..., None]).sum(dim=-1)
        m, total = merge_softmax_states(m, total, block_max, block_sum)
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    safe_total = torch.where(total > 0, total, torch.ones_like(total))
    for c0 in range(0, x.shape[-1], block_size):
        block = x[..., c0 : c0 + block_size].to(work)
        out[..., c0 : c0 + block_size] = (torch.exp(block - finite_max(m)[..., None]) / safe_total[..., None]).to(x.dtype)
    return out
