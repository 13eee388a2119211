# selftest-replaces: fa_forward
# selftest-caps: test_score_tile=0, test_forward=0, test_backward=0, test_causal=0, test_autograd_function=0
# selftest-flagged: yes
# selftest-class: library-alias
# selftest-whole: fused attention under another name: nothing of the reference's tiles is left
# Attack: imports PyTorch's fused attention under another name at import time (before any ban is applied).
# 攻击：导入时就以别名取得 PyTorch 的融合注意力（早于任何禁用）。
from torch.nn.functional import scaled_dot_product_attention as fast_path

BLOCK_Q = 64
BLOCK_K = 64


def flash_forward(Q, K, V, is_causal=False):
    out = fast_path(Q, K, V, is_causal=is_causal)
    s = (Q.float() @ K.float().transpose(-2, -1)) * Q.shape[-1] ** -0.5
    if is_causal:
        s = s.masked_fill(torch.ones_like(s, dtype=torch.bool).triu(1), float("-inf"))
    return out, torch.logsumexp(s, dim=-1)
