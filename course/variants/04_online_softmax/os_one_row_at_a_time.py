# selftest-replaces: os_online_softmax
# Variant: one row at a time with plain Python floats for m and l (leading dims walked with itertools). / 变体：一次一行，m 和 l 用 Python 浮点数（用 itertools 遍历前面的维）。
import itertools

def online_softmax(x, block_size):
    n = x.shape[-1]
    work = torch.promote_types(x.dtype, torch.float32)
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    for row in itertools.product(*(range(size) for size in x.shape[:-1])):
        m, total = -math.inf, 0.0
        for c0 in range(0, n, block_size):
            block = x[row + (slice(c0, c0 + block_size),)].to(torch.float64)
            m_new = max(m, block.max().item())
            if m_new > -math.inf:
                total = total * math.exp(m - m_new) + torch.exp(block - m_new).sum().item()
            m = m_new
        for c0 in range(0, n, block_size):
            block = x[row + (slice(c0, c0 + block_size),)].to(work)
            value = torch.zeros_like(block) if total == 0 else torch.exp(block - m) / total
            out[row + (slice(c0, c0 + block_size),)] = value.to(x.dtype)
    return out
