# selftest-replaces: os_merge_attention
# Variant: stacks both states and reduces over the new leading dimension. / 变体：把两个状态堆叠，沿新的第 0 维归约。
def merge_attention_states(o1, m1, l1, o2, m2, l2):
    ms = torch.stack([m1, m2])
    m = ms.amax(dim=0)
    factors = torch.exp(ms - finite_max(m))
    o = (torch.stack([o1, o2]) * factors[..., None]).sum(dim=0)
    return o, m, (torch.stack([l1, l2]) * factors).sum(dim=0)
