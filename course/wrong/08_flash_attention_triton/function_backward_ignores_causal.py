# selftest-notebook: flash_attention_triton.ipynb
# selftest-replaces: fa_function
# selftest-must-fail: test_backward_causal
# Mistake: the backward pass always runs the non-causal kernels. / 错误：反向传播总是按非因果计算。
from utils.attention.validate import check_qkv


def _block_size(q):
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
        block = _block_size(q)
        o = torch.empty_like(q)
        lse = torch.empty(batch, n_q, device=q.device, dtype=torch.float32)
        flash_fwd_kernel[(triton.cdiv(n_q, block), batch)](
            q, k, v, o, lse, *q.stride(), *k.stride(), *v.stride(), *o.stride(), *lse.stride(),
            n_q, n_k, d ** -0.5, D=d, BLOCK_Q=block, BLOCK_K=block, IS_CAUSAL=is_causal)
        ctx.save_for_backward(q, k, v, o, lse)
        ctx.is_causal = is_causal
        return o

    @staticmethod
    def backward(ctx, grad_out):
        q, k, v, o, lse = ctx.saved_tensors
        batch, n_q, d = q.shape
        n_k = k.shape[1]
        block = _block_size(q)
        delta = (grad_out.float() * o.float()).sum(-1)  # Δ_i = rowsum(dO ∘ O), float32 (B, Nq)
        dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
        common = dict(D=d, BLOCK_Q=block, BLOCK_K=block, IS_CAUSAL=False)
        flash_bwd_dkdv_kernel[(triton.cdiv(n_k, block), batch)](
            q, k, v, grad_out, lse, delta, dk, dv,
            *q.stride(), *k.stride(), *v.stride(), *grad_out.stride(), *lse.stride(), *delta.stride(),
            *dk.stride(), *dv.stride(), n_q, n_k, d ** -0.5, **common)
        flash_bwd_dq_kernel[(triton.cdiv(n_q, block), batch)](
            q, k, v, grad_out, lse, delta, dq,
            *q.stride(), *k.stride(), *v.stride(), *grad_out.stride(), *lse.stride(), *delta.stride(),
            *dq.stride(), n_q, n_k, d ** -0.5, **common)
        return dq, dk, dv, None
