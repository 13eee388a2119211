# selftest-replaces: os_merge_states
# Variant: the larger state keeps its sum, the smaller is rescaled (torch.where picks; an empty side adds 0). / 变体：较大的状态保留它的和，较小的被缩放。
def merge_softmax_states(m1, l1, m2, l2):
    first_larger = m1 >= m2
    big_m, small_m = torch.where(first_larger, m1, m2), torch.where(first_larger, m2, m1)
    big_l, small_l = torch.where(first_larger, l1, l2), torch.where(first_larger, l2, l1)
    factor = torch.where(small_l > 0, torch.exp(small_m - big_m), torch.zeros_like(small_m))
    return big_m, big_l + small_l * factor
