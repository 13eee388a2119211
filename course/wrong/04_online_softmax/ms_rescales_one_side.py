# selftest-notebook: online_softmax.ipynb
# selftest-replaces: os_merge_states
# selftest-must-fail: test_merge_states
# Mistake: rescales only the first state's sum (correct only when m2 is the larger maximum).
# 错误：只重新缩放第一个状态的和（只有 m2 更大时才对）。
def merge_softmax_states(m1, l1, m2, l2):
    m = torch.maximum(m1, m2)
    return m, l1 * torch.exp(m1 - finite_max(m)) + l2
