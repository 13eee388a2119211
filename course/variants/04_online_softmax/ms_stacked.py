# selftest-replaces: os_merge_states
# Variant: stacks the two states and reduces over the new dimension (generalises to k states). / 变体：把两个状态堆叠起来，沿新维归约（可推广到 k 个状态）。
def merge_softmax_states(m1, l1, m2, l2):
    ms, ls = torch.stack([m1, m2]), torch.stack([l1, l2])
    m = ms.amax(dim=0)
    return m, (ls * torch.exp(ms - finite_max(m))).sum(dim=0)
