# selftest-replaces: fa_function
# selftest-whole: another design, not the reference with a change
# Variant: saves a tuple built beforehand, reads ctx.saved_tensors by index, returns a tuple expression. / 变体：先组好元组再保存，按下标读取 ctx.saved_tensors，返回一个元组表达式。
class FlashAttentionPyTorch(torch.autograd.Function):
    """FlashAttention-2 in plain PyTorch: apply(Q, K, V, is_causal=False) → O."""

    @staticmethod
    def forward(ctx, Q, K, V, is_causal=False):
        O, L = flash_forward(Q, K, V, is_causal)
        to_save = (Q, K, V, O, L)
        ctx.save_for_backward(*to_save)
        ctx.is_causal = is_causal
        return O

    @staticmethod
    def backward(ctx, dO):
        saved = ctx.saved_tensors
        grads = flash_backward(saved[0], saved[1], saved[2], saved[3], saved[4], dO, ctx.is_causal)
        return tuple(grads) + (None,)
