# selftest-notebook: flash_attention_triton.ipynb
# selftest-replaces: fa_function
# selftest-must-fail: test_forward
# Mistake: validates nothing: a float64, 4-D or mismatched input runs the kernel (or fails with some other
# error) instead of raising ValueError.
# 错误：不做任何输入检查：float64、4 维或形状不匹配的输入直接启动内核（或抛出别的错误），而不是 ValueError。
def block_size(q):
    """A tile size that fits in shared memory for every supported d and dtype."""
    return 64 if q.shape[-1] * q.element_size() <= 128 else 32


class FlashAttentionTriton(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v, is_causal=False):
        batch, n_q, d = q.shape
        n_k = k.shape[1]
        block = block_size(q)
        o = torch.empty_like(q)
        lse = torch.empty(batch, n_q, device=q.device, dtype=torch.float32)
        flash_fwd_kernel[(triton.cdiv(n_q, block), batch)](
            q, k, v, o, lse, *q.stride(), *k.stride(), *v.stride(), *o.stride(), *lse.stride(),
            n_q, n_k, d ** -0.5, HEAD_DIM=d, BLOCK_Q=block, BLOCK_K=block, IS_CAUSAL=is_causal)
        ctx.save_for_backward(q, k, v, o, lse)
        ctx.is_causal = is_causal
        return o

    @staticmethod
    def backward(ctx, grad_out):
        q, k, v, o, lse = ctx.saved_tensors
        delta = (grad_out.float() * o.float()).sum(-1)  # Δ = rowsum(dO ∘ O): float32, (B, Nq)
        dk, dv = launch_dkdv(q, k, v, grad_out, lse, delta, ctx.is_causal)
        dq = launch_dq(q, k, v, grad_out, lse, delta, ctx.is_causal)
        return dq, dk, dv, None
