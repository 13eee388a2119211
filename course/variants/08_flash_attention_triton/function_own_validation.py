# selftest-notebook: flash_attention_triton.ipynb
# selftest-replaces: fa_function
# Variant: validates the inputs with its own checks (no check_qkv), each raising ValueError with its own message.
# / 变体：用自己的检查（不用 check_qkv）验证输入，每项都以自己的消息引发 ValueError。
def block_size(q):
    """A tile size that fits in shared memory for every supported d and dtype."""
    return 64 if q.shape[-1] * q.element_size() <= 128 else 32


class FlashAttentionTriton(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v, is_causal=False):
        if q.dim() != 3 or k.dim() != 3 or v.dim() != 3:
            raise ValueError(utils.bilingual("Q、K、V 必须是 (B, N, d)", "Q, K, V must be (B, N, d)"))
        if q.dtype not in (torch.float16, torch.bfloat16, torch.float32) or not q.dtype == k.dtype == v.dtype:
            raise ValueError(utils.bilingual(f"不支持的数据类型 {q.dtype}", f"unsupported dtype {q.dtype}"))
        if k.shape != v.shape or q.shape[0] != k.shape[0] or q.shape[2] != k.shape[2]:
            raise ValueError(utils.bilingual("Q、K、V 形状不匹配", "Q, K, V shapes do not match"))
        if q.shape[2] not in (16, 32, 64, 128):
            raise ValueError(utils.bilingual(f"不支持 d = {q.shape[2]}", f"d = {q.shape[2]} is not supported"))
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
