# selftest-notebook: flash_attention_triton.ipynb
# selftest-replaces: fa_function
# Variant: the forward uses tall query tiles and short key tiles (Bq = 128, Bk = 32 where a query row fits in
# 128 bytes, else 64 × 32) with 8 warps for the tall tiles; the backward keeps block_size.
# / 变体：前向用高查询分块、矮键分块（一行查询不超过 128 字节时 Bq = 128、Bk = 32，否则 64 × 32），高分块用
# 8 个 warp；反向仍用 block_size。
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
        block_q = 128 if d * q.element_size() <= 128 else 64
        o = torch.empty_like(q)
        lse = torch.empty(batch, n_q, device=q.device, dtype=torch.float32)
        flash_fwd_kernel[(triton.cdiv(n_q, block_q), batch)](
            q, k, v, o, lse, *q.stride(), *k.stride(), *v.stride(), *o.stride(), *lse.stride(),
            n_q, n_k, d ** -0.5, HEAD_DIM=d, BLOCK_Q=block_q, BLOCK_K=32, IS_CAUSAL=is_causal,
            num_warps=8 if block_q == 128 else 4)
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
