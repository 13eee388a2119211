# selftest-replaces: fa_function
# selftest-whole: another design, not the reference with a change
# Variant: routes both passes through extra static helpers; L forced to float32 before saving. / 变体：两个方向都经由额外的静态辅助方法；保存前把 L 明确转为 float32。
class FlashAttentionPyTorch(torch.autograd.Function):
    """FlashAttention-2 in plain PyTorch: apply(Q, K, V, is_causal=False) → O."""

    @staticmethod
    def _attend(Q, K, V, is_causal):
        out, L = flash_forward(Q, K, V, is_causal)
        return out, L.to(torch.float32)  # already float32: .to returns the same tensor

    @staticmethod
    def _grads(saved, dO, is_causal):
        Q, K, V, out, L = saved
        return flash_backward(Q, K, V, out, L, dO, is_causal)

    @staticmethod
    def forward(ctx, Q, K, V, is_causal=False):
        out, L = FlashAttentionPyTorch._attend(Q, K, V, is_causal)
        ctx.save_for_backward(Q, K, V, out, L)
        ctx.is_causal = is_causal
        return out

    @staticmethod
    def backward(ctx, dO):
        dQ, dK, dV = FlashAttentionPyTorch._grads(ctx.saved_tensors, dO, ctx.is_causal)
        return dQ, dK, dV, None
