# selftest-replaces: fa_forward
# selftest-caps: test_score_tile=0, test_forward=0, test_backward=0, test_causal=0, test_autograd_function=0
# selftest-flagged: yes
# selftest-class: aten-op
# selftest-whole: calls the aten operator: nothing of the reference's tiles is left
# Attack: calls the aten operator behind fused attention directly. / 攻击：直接调用融合注意力背后的 aten 算子。
BLOCK_Q = 64
BLOCK_K = 64


def flash_forward(Q, K, V, is_causal=False):
    out, lse = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(Q, K, V, is_causal=is_causal)[:2]
    return out, lse.float()
