# selftest-replaces: os_weighted_sum
# Variant: one query row at a time (leading dims walked with itertools), each row's keys in blocks. / 变体：一次一行查询（用 itertools 遍历前面的维），每行的键分块处理。
import itertools


def online_softmax_weighted_sum(scores, values, block_size):
    work = torch.promote_types(torch.promote_types(scores.dtype, values.dtype), torch.float32)
    *lead, n_q, n_k = scores.shape
    out = torch.zeros((*lead, n_q, values.shape[-1]), dtype=values.dtype, device=scores.device)
    lse = torch.full((*lead, n_q), float("-inf"), dtype=torch.float32, device=scores.device)
    for row in itertools.product(*(range(size) for size in (*lead, n_q))):
        m = torch.tensor(float("-inf"), dtype=work, device=scores.device)
        total = torch.zeros((), dtype=work, device=scores.device)
        acc = torch.zeros(values.shape[-1], dtype=work, device=scores.device)
        for c0 in range(0, n_k, block_size):
            s = scores[row + (slice(c0, c0 + block_size),)].to(work)
            m_new = torch.maximum(m, s.max())
            shift = finite_max(m_new)
            p = torch.exp(s - shift)
            rescale = torch.exp(m - shift)
            total = total * rescale + p.sum()
            acc = acc * rescale + p @ values[tuple(row[:-1])][c0 : c0 + block_size].to(work)
            m = m_new
        if total > 0:
            out[row] = (acc / total).to(values.dtype)
        lse[row] = m + torch.log(total)
    return out, lse
