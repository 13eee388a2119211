# selftest-replaces: os_online_softmax
# Variant: statistics in float64 whatever the input (more than the float32 asked for), output blocks collected and concatenated. / 变体：不论输入如何都用 float64 统计量，输出块收集后拼接。
def online_softmax(x, block_size):
    starts = range(0, x.shape[-1], block_size)
    m = torch.full(x.shape[:-1], float("-inf"), dtype=torch.float64, device=x.device)
    total = torch.zeros_like(m)
    for c0 in starts:
        block = x[..., c0 : c0 + block_size].double()
        m_new = torch.maximum(m, block.amax(dim=-1))
        total = total * torch.exp(m - finite_max(m_new)) + torch.exp(block - finite_max(m_new)[..., None]).sum(dim=-1)
        m = m_new
    scale = torch.where(total > 0, total.reciprocal(), torch.zeros_like(total))[..., None]
    parts = [torch.exp(x[..., c0 : c0 + block_size].double() - finite_max(m)[..., None]) * scale for c0 in starts]
    return torch.cat(parts, dim=-1).to(x.dtype)
