# selftest-replaces: fa_forward_kernel
# selftest-must-fail: test_performance
# selftest-whole: a row-at-a-time kernel without tl.dot
# Mistake: correct but pathologically slow: handles its query tile one row at a time and forms the scores with
# elementwise products and sums instead of tl.dot (no tensor cores, a reduction per row and key tile). It passes
# every correctness test; only test_performance (GPU-only) catches it.
# 错误：结果正确但极慢：一次只处理查询分块中的一行，用逐元素乘加代替 tl.dot 计算分数（用不上张量核心，
# 每行每个键分块都要做归约）。所有正确性测试都能通过，只有 test_performance（仅 GPU）能发现。
@triton.jit
def flash_fwd_kernel(
    q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr,
    stride_qb, stride_qn, stride_qd,
    stride_kb, stride_kn, stride_kd,
    stride_vb, stride_vn, stride_vd,
    stride_ob, stride_on, stride_od,
    stride_lb, stride_ln,
    n_q, n_k, scale,
    HEAD_DIM: tl.constexpr, BLOCK_Q: tl.constexpr, BLOCK_K: tl.constexpr, IS_CAUSAL: tl.constexpr,
):
    q_tile = tl.program_id(0)
    batch = tl.program_id(1)
    dims = tl.arange(0, HEAD_DIM)
    keys = tl.arange(0, BLOCK_K)
    k_tile_ptrs = k_ptr + batch * stride_kb + keys[:, None] * stride_kn + dims[None, :] * stride_kd
    v_tile_ptrs = v_ptr + batch * stride_vb + keys[:, None] * stride_vn + dims[None, :] * stride_vd
    first_row = q_tile * BLOCK_Q
    for row in range(first_row, tl.minimum(n_q, first_row + BLOCK_Q)):
        q = tl.load(q_ptr + batch * stride_qb + row * stride_qn + dims * stride_qd).to(tl.float32)
        m = tl.full([], float("-inf"), tl.float32)
        total = tl.zeros([], dtype=tl.float32)
        acc = tl.zeros((HEAD_DIM,), dtype=tl.float32)
        k_end = n_k
        if IS_CAUSAL:
            k_end = tl.minimum(n_k, row + 1)
        for k0 in range(0, k_end, BLOCK_K):
            visible = k0 + keys < k_end
            k = tl.load(k_tile_ptrs + k0 * stride_kn, mask=visible[:, None], other=0.0).to(tl.float32)
            v = tl.load(v_tile_ptrs + k0 * stride_vn, mask=visible[:, None], other=0.0).to(tl.float32)
            s = tl.where(visible, tl.sum(q[None, :] * k, axis=1) * scale, float("-inf"))
            m_new = tl.maximum(m, tl.max(s, axis=0))
            alpha = tl.exp(m - m_new)
            p = tl.exp(s - m_new)
            total = total * alpha + tl.sum(p, axis=0)
            acc = acc * alpha + tl.sum(p[:, None] * v, axis=0)
            m = m_new
        tl.store(o_ptr + batch * stride_ob + row * stride_on + dims * stride_od,
                 (acc / total).to(o_ptr.dtype.element_ty))
        tl.store(lse_ptr + batch * stride_lb + row * stride_ln, m + tl.log(total))
