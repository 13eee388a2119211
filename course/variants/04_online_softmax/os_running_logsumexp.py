# selftest-replaces: os_online_softmax
# Variant: keeps the running log-sum-exp L = m + log l (torch.logaddexp, in float64: in float32 L near 1e4 loses the digits of log l) instead of m and l. / 变体：维护运行 log-sum-exp L = m + log l（torch.logaddexp，用 float64：float32 中接近 1e4 的 L 会丢掉 log l 的位数），而不是 m 和 l。
def online_softmax(x, block_size):
    n = x.shape[-1]
    work = torch.float64
    lse = torch.full(x.shape[:-1], float("-inf"), dtype=work, device=x.device)
    for c0 in range(0, n, block_size):
        lse = torch.logaddexp(lse, torch.logsumexp(x[..., c0 : c0 + block_size].to(work), dim=-1))
    shift = finite_max(lse)[..., None]
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    for c0 in range(0, n, block_size):
        block = x[..., c0 : c0 + block_size].to(work)
        out[..., c0 : c0 + block_size] = torch.exp(block - shift).to(x.dtype)
    return out
