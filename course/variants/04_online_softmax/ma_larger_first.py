# selftest-replaces: os_merge_attention
# Variant: the state with the larger maximum keeps its output, the other is rescaled (torch.where picks). / 变体：最大值较大的状态保留输出，另一个被缩放。
def merge_attention_states(o1, m1, l1, o2, m2, l2):
    first = m1 >= m2
    big_m, small_m = torch.where(first, m1, m2), torch.where(first, m2, m1)
    factor = torch.where(torch.isneginf(small_m), torch.zeros_like(small_m), torch.exp(small_m - big_m))
    big_o = torch.where(first[..., None], o1, o2)
    small_o = torch.where(first[..., None], o2, o1)
    big_l, small_l = torch.where(first, l1, l2), torch.where(first, l2, l1)
    return big_o + small_o * factor[..., None], big_m, big_l + small_l * factor
