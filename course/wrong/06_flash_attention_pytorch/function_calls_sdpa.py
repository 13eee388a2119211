# selftest-notebook: flash_attention_pytorch.ipynb
# selftest-replaces: fa_function
# selftest-must-fail: test_autograd_function
# Mistake: returns torch's scaled_dot_product_attention output from forward.
# 错误：forward 返回 torch 的 scaled_dot_product_attention 结果。
class FlashAttentionPyTorch(torch.autograd.Function):
    """FlashAttention-2 in plain PyTorch: apply(Q, K, V, is_causal=False) → O."""

    @staticmethod
    def forward(ctx, Q, K, V, is_causal=False):
        out, L = flash_forward(Q, K, V, is_causal)
        ctx.save_for_backward(Q, K, V, out, L)
        ctx.is_causal = is_causal
        return torch.nn.functional.scaled_dot_product_attention(Q, K, V, is_causal=is_causal)

    @staticmethod
    def backward(ctx, dO):
        Q, K, V, out, L = ctx.saved_tensors
        dQ, dK, dV = flash_backward(Q, K, V, out, L, dO, ctx.is_causal)
        return dQ, dK, dV, None
