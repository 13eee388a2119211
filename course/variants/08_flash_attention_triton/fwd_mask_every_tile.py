# selftest-notebook: flash_attention_triton.ipynb
# selftest-replaces: fa_forward_kernel
# Variant: no causal tile skipping: every key tile is visited and the mask hides what a query may not see
# (slower for causal attention, same result). / 变体：不跳过因果分块：遍历每个键分块，由掩码隐藏查询看不到的键
# （因果注意力更慢，结果相同）。
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
    for k0 in range(0, n_k, BLOCK_K):
        cols = k0 + tl.arange(0, BLOCK_K)
        col_ok = cols < n_k
        k = tl.load(k_ptr + batch * stride_kb + cols[:, None] * stride_kn + dims[None, :] * stride_kd,
                    mask=col_ok[:, None], other=0.0)
        v = tl.load(v_ptr + batch * stride_vb + cols[:, None] * stride_vn + dims[None, :] * stride_vd,
                    mask=col_ok[:, None], other=0.0)
        s = tl.dot(q, tl.trans(k)) * scale
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
