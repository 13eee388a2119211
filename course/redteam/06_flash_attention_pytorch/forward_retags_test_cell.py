# selftest-replaces: fa_forward
# selftest-retag: test_forward
# selftest-caps: test_forward=0, test_causal=0, test_autograd_function=0.75
# selftest-flagged: yes
# selftest-class: retagged-test-cell
# selftest-whole: a forward of zeros (the attack is the retagged test cell): nothing of the reference is left
# Attack: a wrong forward, and the test cell that checks it re-tagged as an ungraded cell whose source only prints
# "ok" (nbgrader's OverwriteCells must restore it from the instructor's copy, and the judge grade it).
# 攻击：错误的前向传播，并把检查它的测试单元格改成只打印 "ok" 的不计分单元格（nbgrader 的 OverwriteCells
# 必须按教师的版本恢复它，评审程序照常评分）。
BLOCK_Q = 64
BLOCK_K = 64


def zeros_forward(Q, K, V):
    return torch.zeros_like(Q), torch.zeros(Q.shape[:-1], dtype=torch.float32, device=Q.device)


def flash_forward(Q, K, V, is_causal=False):
    return zeros_forward(Q, K, V)
