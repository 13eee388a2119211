# selftest-replaces: fa_function
# selftest-whole: another design, not the reference with a change
# Variant: saves (L, O, Q, K, V) in another order and unpacks them the same way. / 变体：按另一种顺序保存 (L, O, Q, K, V)，并按同样顺序取出。
class FlashAttentionPyTorch(torch.autograd.Function):
    """FlashAttention-2 in plain PyTorch: apply(Q, K, V, is_causal=False) → O."""

    @staticmethod
    def forward(ctx, Q, K, V, is_causal=False):
        O, L = flash_forward(Q, K, V, is_causal=is_causal)
        ctx.save_for_backward(L, O, Q, K, V)
        ctx.causal = bool(is_causal)
        return O

    @staticmethod
    def backward(ctx, dO):
        L, O, Q, K, V = ctx.saved_tensors
        dQ, dK, dV = flash_backward(Q, K, V, O, L, dO, is_causal=ctx.causal)
        return dQ, dK, dV, None
