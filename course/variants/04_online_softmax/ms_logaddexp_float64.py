# selftest-replaces: os_merge_states
# Variant: through the log-sum-exp in float64: L = logaddexp(m1 + log l1, m2 + log l2), l = e^(L - m). / 变体：在 float64 中经由 log-sum-exp 合并。
def merge_softmax_states(m1, l1, m2, l2):
    m = torch.maximum(m1, m2)
    lse = torch.logaddexp(m1.double() + torch.log(l1.double()), m2.double() + torch.log(l2.double()))
    return m, torch.exp(lse - finite_max(m).double()).to(l1.dtype)
