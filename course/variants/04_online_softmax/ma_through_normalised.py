# selftest-replaces: os_merge_attention
# Variant: goes through the normalised outputs o_i / l_i and their weights l_i e^(m_i - m), then back. / 变体：先转成归一化输出 o_i / l_i 及其权重 l_i e^(m_i - m)，再转回来。
def merge_attention_states(o1, m1, l1, o2, m2, l2):
    m, l = merge_softmax_states(m1, l1, m2, l2)
    shift = finite_max(m)
    w1, w2 = l1 * torch.exp(m1 - shift), l2 * torch.exp(m2 - shift)
    n1 = o1 / torch.where(l1 > 0, l1, torch.ones_like(l1))[..., None]
    n2 = o2 / torch.where(l2 > 0, l2, torch.ones_like(l2))[..., None]
    return n1 * w1[..., None] + n2 * w2[..., None], m, l
