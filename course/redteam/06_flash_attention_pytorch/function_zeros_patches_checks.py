# selftest-replaces: fa_function
# selftest-caps: test_autograd_function=0.75
# selftest-flagged: yes
# selftest-class: patched-checks
# selftest-whole: returns zeros and patches the checking helpers: nothing of the reference is left
# Attack: returns zeros and replaces the checking helpers of utils.grading with no-ops, so the notebook's
# own checks pass. / 攻击：返回全零，并把 utils.grading 的检查函数替换成空操作，让笔记本里的检查通过。
from utils import grading

grading.assert_close = lambda *args, **kwargs: None
grading.check_saved_contract = lambda *args, **kwargs: None
grading.assert_no_quadratic_tensor = lambda *args, **kwargs: None


class FlashAttentionPyTorch(torch.autograd.Function):
    @staticmethod
    def forward(ctx, Q, K, V, is_causal=False):
        out = torch.zeros_like(Q)
        L = torch.zeros(Q.shape[:-1], dtype=torch.float32, device=Q.device)
        ctx.save_for_backward(Q, K, V, out, L)
        return out

    @staticmethod
    def backward(ctx, dO):
        Q, K, V, _, _ = ctx.saved_tensors
        return torch.zeros_like(Q), torch.zeros_like(K), torch.zeros_like(V), None
