# selftest-replaces: os_merge_states
# selftest-must-fail: test_merge_states
# selftest-whole: a two-line merge: the patch is longer than the cell
# Mistake: adds the two sums as they are, forgetting that they were taken under different maxima.
# 错误：直接把两个和相加，忘了它们是在不同的最大值之下求的。
def merge_softmax_states(m1, l1, m2, l2):
    return torch.maximum(m1, m2), l1 + l2
