# selftest-notebook: flash_attention_triton.ipynb
# selftest-replaces: fa_function
# Variant: the backward makes dO contiguous first (autograd's gradient of out.sum() is a stride-0 broadcast)
# and computes Δ with torch.sum. / 变体：反向先把 dO 变为连续（autograd 对 out.sum() 的梯度是步长为 0 的广播），
# 用 torch.sum 计算 Δ。
from utils.attention.validate import check_qkv


def block_size(q):
    """A tile size that fits in shared memory for every supported d and dtype."""
    return 64 if q.shape[-1] * q.element_size() <= 128 else 32


class FlashAttentionTriton(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v, is_causal=False):
        check_qkv(q, k, v, head_dims=(16, 32, 64, 128))
        if q.dim() != 3 or q.dtype not in (torch.float16, torch.bfloat16, torch.float32):
            raise ValueError(utils.bilingual(
                f"需要 (B, N, d) 的 float16/bfloat16/float32 张量，得到 {tuple(q.shape)} {q.dtype}",
                f"expected (B, N, d) float16/bfloat16/float32 tensors, got {tuple(q.shape)} {q.dtype}"))
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
        grad_out = grad_out.contiguous()
        delta = torch.sum(grad_out.float() * o.float(), dim=-1)
        dk, dv = launch_dkdv(q, k, v, grad_out, lse, delta, ctx.is_causal)
        dq = launch_dq(q, k, v, grad_out, lse, delta, ctx.is_causal)
        return dq, dk, dv, None
