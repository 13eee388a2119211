# selftest-replaces: fa_function
# selftest-whole: another design, not the reference with a change
# Variant: runs the kernels under torch.no_grad, keeps is_causal in a dict on ctx, unpacks with a star. / 变体：在 torch.no_grad 下运行，把 is_causal 存在 ctx 上的字典里，用星号解包。
class FlashAttentionPyTorch(torch.autograd.Function):
    """FlashAttention-2 in plain PyTorch: apply(Q, K, V, is_causal=False) → O."""

    @staticmethod
    def forward(ctx, Q, K, V, is_causal=False):
        with torch.no_grad():
            O, L = flash_forward(Q, K, V, is_causal)
        ctx.options = {"is_causal": is_causal}
        ctx.save_for_backward(Q, K, V, O, L)
        return O

    @staticmethod
    def backward(ctx, dO):
        *qkv, O, L = ctx.saved_tensors
        with torch.no_grad():
            dQ, dK, dV = flash_backward(*qkv, O, L, dO, ctx.options["is_causal"])
        return dQ, dK, dV, None
