# selftest-replaces: os_merge_attention
# Variant: everything inline, without calling merge_softmax_states. / 变体：全部内联，不调用 merge_softmax_states。
def merge_attention_states(o1, m1, l1, o2, m2, l2):
    m = torch.maximum(m1, m2)
    shift = torch.where(torch.isinf(m), torch.zeros_like(m), m)
    a1, a2 = torch.exp(m1 - shift), torch.exp(m2 - shift)
    return o1 * a1.unsqueeze(-1) + o2 * a2.unsqueeze(-1), m, l1 * a1 + l2 * a2
