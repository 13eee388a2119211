# selftest-replaces: fa_forward_kernel
# selftest-whole: another design, not the reference with a change
# Variant: two loops, as Triton's tutorial does: interior key tiles without any mask or bounds check, then
# the edge tiles (partial last tile, causal diagonal) masked; the online-softmax step is a @triton.jit helper.
# / 变体：两个循环（同 Triton 教程）：内部键分块不做掩码和越界检查，边缘分块（不满的最后一块、因果对角线）
# 再做掩码；在线 softmax 的一步写成 @triton.jit 辅助函数。
@triton.jit
def online_softmax_step(q, k, v, m, total, acc, scale, visible):
    """One key tile of the online softmax: the new running maximum, sum and output accumulator."""
    s = tl.where(visible, tl.dot(q, tl.trans(k)) * scale, float("-inf"))
    m_new = tl.maximum(m, tl.max(s, axis=1))
    alpha = tl.exp(m - m_new)
    p = tl.exp(s - m_new[:, None])
    total = total * alpha + tl.sum(p, axis=1)
    acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
    return m_new, total, acc


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
    rows = q_tile * BLOCK_Q + tl.arange(0, BLOCK_Q)
    dims = tl.arange(0, HEAD_DIM)
    keys = tl.arange(0, BLOCK_K)
    row_ok = rows < n_q
    q = tl.load(q_ptr + batch * stride_qb + rows[:, None] * stride_qn + dims[None, :] * stride_qd,
                mask=row_ok[:, None], other=0.0)
    m = tl.full((BLOCK_Q,), float("-inf"), tl.float32)
    total = tl.zeros((BLOCK_Q,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_Q, HEAD_DIM), dtype=tl.float32)

    # Interior tiles: every key exists and (causal) precedes this tile's first query: no mask, no bounds.
    k_full = (n_k // BLOCK_K) * BLOCK_K
    k_end = n_k
    if IS_CAUSAL:
        k_full = tl.minimum(k_full, (q_tile * BLOCK_Q + 1) // BLOCK_K * BLOCK_K)
        k_end = tl.minimum(n_k, (q_tile + 1) * BLOCK_Q)
    everything = rows[:, None] >= 0
    for k0 in range(0, k_full, BLOCK_K):
        cols = k0 + keys
        k = tl.load(k_ptr + batch * stride_kb + cols[:, None] * stride_kn + dims[None, :] * stride_kd)
        v = tl.load(v_ptr + batch * stride_vb + cols[:, None] * stride_vn + dims[None, :] * stride_vd)
        m, total, acc = online_softmax_step(q, k, v, m, total, acc, scale, everything)

    # Edge tiles: the partial last tile and the tiles the causal diagonal crosses, masked.
    for k0 in range(k_full, k_end, BLOCK_K):
        cols = k0 + keys
        col_ok = cols < n_k
        k = tl.load(k_ptr + batch * stride_kb + cols[:, None] * stride_kn + dims[None, :] * stride_kd,
                    mask=col_ok[:, None], other=0.0)
        v = tl.load(v_ptr + batch * stride_vb + cols[:, None] * stride_vn + dims[None, :] * stride_vd,
                    mask=col_ok[:, None], other=0.0)
        visible = col_ok[None, :] & everything
        if IS_CAUSAL:
            visible = visible & (cols[None, :] <= rows[:, None])
        m, total, acc = online_softmax_step(q, k, v, m, total, acc, scale, visible)

    o = acc / total[:, None]
    tl.store(o_ptr + batch * stride_ob + rows[:, None] * stride_on + dims[None, :] * stride_od,
             o.to(o_ptr.dtype.element_ty), mask=row_ok[:, None])
    tl.store(lse_ptr + batch * stride_lb + rows * stride_ln, m + tl.log(total), mask=row_ok)
