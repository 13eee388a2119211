# selftest-replaces: fa_forward
# selftest-caps: test_forward=0, test_causal=0, test_autograd_function=0.75
# selftest-class: huge-output
# selftest-whole: a forward of zeros that prints 48 MiB: nothing of the reference is left
# Attack: a wrong forward (the right shapes, all zeros) whose cell prints one line of 48 MiB when it runs, in the
# notebook and wherever the judge loads it, to bloat autograded/ and the feedback page past what a browser opens
# (nbgrader's LimitOutput counts lines, not bytes). Every output must come back cut to the cap.
# 攻击：错误的前向传播（形状正确，全为零）；它的单元格运行时（在笔记本中，以及评审程序加载它的任何地方）打印一行
# 48 MiB 的文字，企图把 autograded/ 和反馈页面撑大到浏览器打不开（nbgrader 的 LimitOutput 只数行数，不数字节）。
# 每个输出都必须被截到上限以内。
import sys

BLOCK_Q = 64
BLOCK_K = 64

sys.stdout.write("flash-attention!" * (3 << 20) + "\n")  # 16 characters times 3 Mi: 48 MiB


def flash_forward(Q, K, V, is_causal=False):
    return torch.zeros_like(Q), torch.zeros(Q.shape[:-1], dtype=torch.float32, device=Q.device)
