# selftest-replaces: memory_model
# selftest-must-fail: test_memory_model
# selftest-whole: measures on meta tensors instead of modelling
# Mistake: measures instead of modelling: runs attention on meta tensors under its own counting mode.
# 错误：测量而不是建模：在 meta 张量上运行注意力，用自己写的计数模式统计。
from torch.utils._python_dispatch import TorchDispatchMode


class Count(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.total = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if isinstance(out, torch.Tensor):
            self.total += out.numel() * out.element_size()
        return out


def attention_memory_bytes(batch, heads, n, d, dtype, training, device="cuda"):
    with Count() as count:
        q, k, v = (torch.empty(batch, heads, n, d, dtype=dtype, device="meta") for _ in range(3))
        s = q @ k.transpose(-2, -1) / math.sqrt(d)
        p = torch.softmax(s.float(), dim=-1).to(dtype)
        p @ v
    return {"everything allocated": count.total}
