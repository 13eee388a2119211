# selftest-notebook: flash_attention_triton.ipynb
# selftest-replaces: fa_backward_kernels
# selftest-must-fail: test_backward, test_backward_causal
# Mistake: accumulates dQ from P instead of dS. / 错误：dQ 用 P 而不是 dS 累加。
@triton.jit
def flash_bwd_dkdv_kernel(
    q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dk_ptr, dv_ptr,
    stride_qb, stride_qn, stride_qd, stride_kb, stride_kn, stride_kd,
    stride_vb, stride_vn, stride_vd, stride_dob, stride_don, stride_dod,
    stride_lb, stride_ln, stride_deltab, stride_deltan,
    stride_dkb, stride_dkn, stride_dkd, stride_dvb, stride_dvn, stride_dvd,
    n_q, n_k, scale,
    D: tl.constexpr, BLOCK_Q: tl.constexpr, BLOCK_K: tl.constexpr, IS_CAUSAL: tl.constexpr,
):
    k_tile = tl.program_id(0)
    batch = tl.program_id(1)
    cols = k_tile * BLOCK_K + tl.arange(0, BLOCK_K)
    dims = tl.arange(0, D)
    col_ok = cols < n_k
    k = tl.load(k_ptr + batch * stride_kb + cols[:, None] * stride_kn + dims[None, :] * stride_kd,
                mask=col_ok[:, None], other=0.0)
    v = tl.load(v_ptr + batch * stride_vb + cols[:, None] * stride_vn + dims[None, :] * stride_vd,
                mask=col_ok[:, None], other=0.0)
    dk = tl.zeros((BLOCK_K, D), dtype=tl.float32)
    dv = tl.zeros((BLOCK_K, D), dtype=tl.float32)
    q_start = 0
    if IS_CAUSAL:  # queries before this tile's first key see none of its keys
        q_start = (k_tile * BLOCK_K // BLOCK_Q) * BLOCK_Q
    for q0 in range(q_start, n_q, BLOCK_Q):
        rows = q0 + tl.arange(0, BLOCK_Q)
        row_ok = rows < n_q
        q = tl.load(q_ptr + batch * stride_qb + rows[:, None] * stride_qn + dims[None, :] * stride_qd,
                    mask=row_ok[:, None], other=0.0)
        do = tl.load(do_ptr + batch * stride_dob + rows[:, None] * stride_don + dims[None, :] * stride_dod,
                     mask=row_ok[:, None], other=0.0)
        lse = tl.load(lse_ptr + batch * stride_lb + rows * stride_ln, mask=row_ok, other=0.0)
        delta = tl.load(delta_ptr + batch * stride_deltab + rows * stride_deltan, mask=row_ok, other=0.0)
        s = tl.dot(q, tl.trans(k)) * scale
        visible = row_ok[:, None] & col_ok[None, :]
        if IS_CAUSAL:
            visible = visible & (cols[None, :] <= rows[:, None])
        p = tl.where(visible, tl.exp(s - lse[:, None]), 0.0)
        dv += tl.dot(tl.trans(p.to(do.dtype)), do)
        dp = tl.dot(do, tl.trans(v))
        ds = p * (dp - delta[:, None])
        dk += tl.dot(tl.trans(ds.to(q.dtype)), q)
    dk = dk * scale
    tl.store(dk_ptr + batch * stride_dkb + cols[:, None] * stride_dkn + dims[None, :] * stride_dkd,
             dk.to(dk_ptr.dtype.element_ty), mask=col_ok[:, None])
    tl.store(dv_ptr + batch * stride_dvb + cols[:, None] * stride_dvn + dims[None, :] * stride_dvd,
             dv.to(dv_ptr.dtype.element_ty), mask=col_ok[:, None])


@triton.jit
def flash_bwd_dq_kernel(
    q_ptr, k_ptr, v_ptr, do_ptr, lse_ptr, delta_ptr, dq_ptr,
    stride_qb, stride_qn, stride_qd, stride_kb, stride_kn, stride_kd,
    stride_vb, stride_vn, stride_vd, stride_dob, stride_don, stride_dod,
    stride_lb, stride_ln, stride_deltab, stride_deltan,
    stride_dqb, stride_dqn, stride_dqd,
    n_q, n_k, scale,
    D: tl.constexpr, BLOCK_Q: tl.constexpr, BLOCK_K: tl.constexpr, IS_CAUSAL: tl.constexpr,
):
    q_tile = tl.program_id(0)
    batch = tl.program_id(1)
    rows = q_tile * BLOCK_Q + tl.arange(0, BLOCK_Q)
    dims = tl.arange(0, D)
    row_ok = rows < n_q
    q = tl.load(q_ptr + batch * stride_qb + rows[:, None] * stride_qn + dims[None, :] * stride_qd,
                mask=row_ok[:, None], other=0.0)
    do = tl.load(do_ptr + batch * stride_dob + rows[:, None] * stride_don + dims[None, :] * stride_dod,
                 mask=row_ok[:, None], other=0.0)
    lse = tl.load(lse_ptr + batch * stride_lb + rows * stride_ln, mask=row_ok, other=0.0)
    delta = tl.load(delta_ptr + batch * stride_deltab + rows * stride_deltan, mask=row_ok, other=0.0)
    dq = tl.zeros((BLOCK_Q, D), dtype=tl.float32)
    k_end = n_k
    if IS_CAUSAL:
        k_end = tl.minimum(n_k, (q_tile + 1) * BLOCK_Q)
    for k0 in range(0, k_end, BLOCK_K):
        cols = k0 + tl.arange(0, BLOCK_K)
        col_ok = cols < n_k
        k = tl.load(k_ptr + batch * stride_kb + cols[:, None] * stride_kn + dims[None, :] * stride_kd,
                    mask=col_ok[:, None], other=0.0)
        v = tl.load(v_ptr + batch * stride_vb + cols[:, None] * stride_vn + dims[None, :] * stride_vd,
                    mask=col_ok[:, None], other=0.0)
        s = tl.dot(q, tl.trans(k)) * scale
        visible = row_ok[:, None] & col_ok[None, :]
        if IS_CAUSAL:
            visible = visible & (cols[None, :] <= rows[:, None])
        p = tl.where(visible, tl.exp(s - lse[:, None]), 0.0)
        dp = tl.dot(do, tl.trans(v))
        ds = p * (dp - delta[:, None])
        dq += tl.dot(p.to(k.dtype), k)
    dq = dq * scale
    tl.store(dq_ptr + batch * stride_dqb + rows[:, None] * stride_dqn + dims[None, :] * stride_dqd,
             dq.to(dq_ptr.dtype.element_ty), mask=row_ok[:, None])
