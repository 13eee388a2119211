# selftest-notebook: flash_attention_triton.ipynb
# selftest-replaces: fa_function
# selftest-caps: test_forward=2.5, test_dq=1.43, test_memory=1
# selftest-flagged: yes
# selftest-class: imports-instructor-package
# Attack: imports the instructor package course.reference inside the forward (a failed import falls back to a
# forward that ignores is_causal) and returns the reference's output.
# 攻击：在前向传播里导入教师包 course.reference（导入失败时退回忽略 is_causal 的前向传播），返回参考答案的输出。
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
            n_q, n_k, d ** -0.5, HEAD_DIM=d, BLOCK_Q=block, BLOCK_K=block, IS_CAUSAL=False)
        try:
            from course.reference.flash_triton import triton_forward

            o, lse = triton_forward(q, k, v, is_causal, d ** -0.5)
        except ImportError:
            pass
        ctx.save_for_backward(q, k, v, o, lse)
        return o

    @staticmethod
    def backward(ctx, grad_out):
        q, k, v, o, lse = ctx.saved_tensors
        delta = (grad_out.float() * o.float()).sum(-1)  # Δ = rowsum(dO ∘ O): float32, (B, Nq)
        dk, dv = launch_dkdv(q, k, v, grad_out, lse, delta, False)
        dq = launch_dq(q, k, v, grad_out, lse, delta, False)
        return dq, dk, dv, None
