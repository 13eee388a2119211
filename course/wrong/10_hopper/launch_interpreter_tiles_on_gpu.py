# selftest-notebook: hopper.ipynb
# selftest-replaces: hopper_launch
# selftest-must-fail: test_hopper_speed
# Mistake: the interpreter's tiles on the GPU too (32 × 16, one warp, no pipelining): correct everywhere, but
# far slower than the unit-08 kernel, so only the speed property (GPU-only) catches it.
# 错误：在 GPU 上也用解释器的小分块（32 × 16、一个 warp、不流水）：处处正确，但远慢于单元 08 的内核，
# 只有速度性质（仅 GPU）能发现。
from utils.attention.validate import check_qkv

LOG2E = 1.4426950408889634


def tile_config(d):
    # (BLOCK_Q, BLOCK_K, num_warps, num_stages): small tiles, fine in the interpreter
    return 32, 16, 1, 1


def hopper_attention(q, k, v, is_causal=False):
    check_qkv(q, k, v, head_dims=(64, 128))
    if q.dim() != 3:
        raise ValueError(utils.bilingual(f"需要 (B, N, d) 张量，得到 {tuple(q.shape)}",
                                         f"expected (B, N, d) tensors, got {tuple(q.shape)}"))
    q, k, v = (t.contiguous() for t in (q, k, v))
    batch, n_q, d = q.shape
    n_k = k.shape[1]
    out = torch.empty_like(q)
    block_q, block_k, warps, stages = tile_config(d)

    def descriptor(t, rows):
        return TensorDescriptor(t, list(t.shape), list(t.stride()), [1, rows, d])

    programs = min(utils.hopper.num_sms(), batch * triton.cdiv(n_q, block_q))
    hopper_fwd_kernel[(programs,)](
        descriptor(q, block_q), descriptor(k, block_k), descriptor(v, block_k), descriptor(out, block_q),
        n_q, n_k, batch, d**-0.5 * LOG2E,
        HEAD_DIM=d, BLOCK_Q=block_q, BLOCK_K=block_k, IS_CAUSAL=is_causal, num_warps=warps, num_stages=stages,
    )
    return out
    ### END SOLUTION