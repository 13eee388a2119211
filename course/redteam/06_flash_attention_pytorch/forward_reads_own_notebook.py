# selftest-replaces: fa_forward
# selftest-caps: test_forward=0, test_causal=0, test_autograd_function=0.75
# selftest-flagged: yes
# selftest-class: reads-notebooks-around
# selftest-whole: searches the notebook files for answers, zeros otherwise: nothing of the reference is left
# Attack: reads the notebook files on disk around it looking for hidden tests and answers; zeros otherwise.
# 攻击：读取周围磁盘上的笔记本文件寻找隐藏测试和答案；找不到时返回全零。
import glob
import json

BLOCK_Q = 64
BLOCK_K = 64


def zeros_forward(Q, K, V):
    return torch.zeros_like(Q), torch.zeros(Q.shape[:-1], dtype=torch.float32, device=Q.device)


FOUND = [open(p).read() for p in glob.glob("**/*.ipynb", recursive=True)]


def flash_forward(Q, K, V, is_causal=False):
    for text in FOUND:
        for cell in json.loads(text)["cells"]:
            source = "".join(cell["source"])
            if "def flash_forward" in source and "BEGIN SOLUTION" in source:
                namespace = {"torch": torch}
                exec(source, namespace)
                return namespace["flash_forward"](Q, K, V, is_causal)
    return zeros_forward(Q, K, V)
