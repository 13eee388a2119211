# selftest-notebook: flash_attention_triton.ipynb
# selftest-replaces: fa_forward_kernel
# Variant: loads each key tile already transposed, as a (d, Bk) block read through K's strides, so the scores
# are tl.dot(q, kᵀ) without tl.trans. / 变体：按 K 的步长直接读入转置的键分块 (d, Bk)，分数为 tl.dot(q, kᵀ)，
# 不用 tl.trans。
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
    row_ok = rows < n_q
    q = tl.load(q_ptr + batch * stride_qb + rows[:, None] * stride_qn + dims[None, :] * stride_qd,
                mask=row_ok[:, None], other=0.0)

    m = tl.full((BLOCK_Q,), float("-inf"), tl.float32)
    total = tl.zeros((BLOCK_Q,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_Q, HEAD_DIM), dtype=tl.float32)
    k_end = n_k
    if IS_CAUSAL:  # keys after this tile's last query are all masked: skip them
        k_end = tl.minimum(n_k, (q_tile + 1) * BLOCK_Q)
    for k0 in range(0, k_end, BLOCK_K):
        cols = k0 + tl.arange(0, BLOCK_K)
        col_ok = cols < n_k
        kt = tl.load(k_ptr + batch * stride_kb + dims[:, None] * stride_kd + cols[None, :] * stride_kn,
                     mask=col_ok[None, :], other=0.0)
        v = tl.load(v_ptr + batch * stride_vb + cols[:, None] * stride_vn + dims[None, :] * stride_vd,
                    mask=col_ok[:, None], other=0.0)
        s = tl.dot(q, kt) * scale
        visible = col_ok[None, :]
        if IS_CAUSAL:
            visible = visible & (cols[None, :] <= rows[:, None])
        s = tl.where(visible, s, float("-inf"))
        m_new = tl.maximum(m, tl.max(s, axis=1))
        alpha = tl.exp(m - m_new)
        p = tl.exp(s - m_new[:, None])
        total = total * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m = m_new

    o = acc / total[:, None]
    tl.store(o_ptr + batch * stride_ob + rows[:, None] * stride_on + dims[None, :] * stride_od,
             o.to(o_ptr.dtype.element_ty), mask=row_ok[:, None])
    tl.store(lse_ptr + batch * stride_lb + rows * stride_ln, m + tl.log(total), mask=row_ok)
