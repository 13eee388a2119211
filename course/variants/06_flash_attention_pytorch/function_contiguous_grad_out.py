# selftest-replaces: fa_function
# selftest-whole: another design, not the reference with a change
# Variant: makes dO contiguous, calls flash_backward with keyword arguments, casts the gradients explicitly. / 变体：把 dO 变为连续张量，用关键字参数调用 flash_backward，并显式转换梯度的类型。
class FlashAttentionPyTorch(torch.autograd.Function):
    """FlashAttention-2 in plain PyTorch: apply(Q, K, V, is_causal=False) → O."""

    @staticmethod
    def forward(ctx, Q, K, V, is_causal=False):
        result = flash_forward(Q, K, V, is_causal)
        out, lse = result[0], result[1]
        ctx.is_causal = is_causal
        ctx.save_for_backward(Q, K, V, out, lse)
        return out

    @staticmethod
    def backward(ctx, dO):
        Q, K, V, out, lse = ctx.saved_tensors
        grads = flash_backward(
            Q=Q, K=K, V=V, out=out, L=lse, dO=dO.contiguous(), is_causal=ctx.is_causal
        )
        dQ, dK, dV = (g.to(t.dtype) for g, t in zip(grads, (Q, K, V)))
        return dQ, dK, dV, None
