# selftest-replaces: os_merge_states
# Variant: handles the empty sides explicitly: if one side is empty the other is returned as it is. / 变体：显式处理空状态：一边为空时原样返回另一边。
def merge_softmax_states(m1, l1, m2, l2):
    m = torch.maximum(m1, m2)
    both = (l1 > 0) & (l2 > 0)
    shift = torch.where(both, m, torch.zeros_like(m))
    merged = l1 * torch.exp(m1 - shift) + l2 * torch.exp(m2 - shift)
    return m, torch.where(both, merged, torch.where(l1 > 0, l1, l2))
