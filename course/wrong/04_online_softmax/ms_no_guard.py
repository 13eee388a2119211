# selftest-notebook: online_softmax.ipynb
# selftest-replaces: os_merge_states
# selftest-must-fail: test_merge_states
# Mistake: subtracts m itself: merging two empty states gives e^(-inf + inf) = NaN.
# 错误：直接减去 m：两个空状态合并得到 e^(-inf + inf) = NaN。
def merge_softmax_states(m1, l1, m2, l2):
    m = torch.maximum(m1, m2)
    return m, l1 * torch.exp(m1 - m) + l2 * torch.exp(m2 - m)
