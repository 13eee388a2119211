# selftest-replaces: os_merge_states
# selftest-must-fail: test_merge_states
# selftest-whole: merges through l·e^m: the patch is longer than the cell
# Mistake: merges through Z = l·e^m (e^m overflows for scores near 1e4: inf·0 = NaN).
# 错误：通过 Z = l·e^m 合并（分数接近 1e4 时 e^m 上溢：inf·0 = NaN）。
def merge_softmax_states(m1, l1, m2, l2):
    m = torch.maximum(m1, m2)
    z = l1 * torch.exp(m1) + l2 * torch.exp(m2)
    return m, z * torch.exp(-finite_max(m))
