# selftest-replaces: os_online_softmax
# selftest-whole: another design, not the reference with a change
# Variant: no finite_max: exponentials of masked entries are zeroed with torch.where, NaN-free by construction. / 变体：不用 finite_max：用 torch.where 把被遮住位置的指数置 0。
def online_softmax(x, block_size):
    n = x.shape[-1]
    work = torch.promote_types(x.dtype, torch.float32)
    m = torch.full(x.shape[:-1], float("-inf"), dtype=work, device=x.device)
    total = torch.zeros(x.shape[:-1], dtype=work, device=x.device)
    for c0 in range(0, n, block_size):
        block = x[..., c0 : c0 + block_size].to(work)
        m_new = torch.maximum(m, block.amax(dim=-1))
        visible = ~torch.isneginf(m_new)
        old = torch.where(visible & ~torch.isneginf(m), torch.exp(m - m_new), torch.zeros_like(m))
        terms = torch.where(torch.isneginf(block), torch.zeros_like(block), torch.exp(block - m_new[..., None]))
        total = total * old + terms.sum(dim=-1)
        m = m_new
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    for c0 in range(0, n, block_size):
        block = x[..., c0 : c0 + block_size].to(work)
        p = torch.where(torch.isneginf(block), torch.zeros_like(block), torch.exp(block - m[..., None]) / total[..., None])
        out[..., c0 : c0 + block_size] = p.to(x.dtype)
    return out
