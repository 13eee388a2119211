# selftest-replaces: os_merge_attention
# Variant: computes in float64 and returns the inputs' dtypes. / 变体：在 float64 中计算，返回输入的 dtype。
def merge_attention_states(o1, m1, l1, o2, m2, l2):
    m, l = merge_softmax_states(m1.double(), l1.double(), m2.double(), l2.double())
    shift = finite_max(m)
    o = o1.double() * torch.exp(m1.double() - shift)[..., None] + o2.double() * torch.exp(m2.double() - shift)[..., None]
    return o.to(o1.dtype), m.to(m1.dtype), l.to(l1.dtype)
