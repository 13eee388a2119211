"""FlashAttention-2 Triton kernels: forward, Δ preprocessing, dK/dV and dQ (no atomics).

Conventions shared by all kernels:
- Tensors are flattened to (BH, N, d); each program gets one (batch·head) index from axis 1 of the grid
  and walks the tensors with its strides (pointer arithmetic + masks only).
- Scores are kept in base 2: `qk_scale = scale · log2(e)`, so `exp(scale·s) = exp2(qk_scale·s)`.
  L is stored in natural log (the contract), and converted with one multiply per row where used.
- Accumulators are float32 and every product adds straight into its accumulator (`tl.dot(a, b, acc)`:
  the tensor cores accumulate in place, no extra tile-sized addition). Products take the input dtype;
  `PRECISION` is `triton_configs.FP32_PRECISION` for float32 inputs (fp32-level), else None.
- Causal loops are split in two: tiles that every row of the program fully sees (no mask at all), and
  the tiles on the diagonal or at a sequence tail (masked). Tiles no row can see are never visited.
- In the backward kernels dP is issued right after S, before S's exp2: the tensor cores compute dP while the
  exp2 runs (on the H200 at the leaderboard shape, 2-7 % faster than issuing it after the dV product:
  `benchmarks/results/h200/backward/`).
- Tail rows beyond N are loaded as zeros and never stored. In the backward kernels zero Q/dO rows
  (or zero K/V rows) add exactly nothing to the stored gradients, so only the causal mask is applied.
"""

import triton
import triton.language as tl


@triton.jit
def _query_tile(IS_CAUSAL: tl.constexpr):
    """This program's query tile. Causal: the last tiles (most keys to visit) start first, so the
    short programs fill the gaps at the end instead of one long program running alone."""
    if IS_CAUSAL:
        return tl.num_programs(0) - 1 - tl.program_id(0)
    return tl.program_id(0)


@triton.jit
def _forward_tile(
    acc,
    row_max,
    row_sum,
    q,
    k_ptr,
    v_ptr,
    stride_kn,
    stride_kd,
    stride_vn,
    stride_vd,
    k_start,
    n_k,
    offs_q,
    offs_d,
    qk_scale,
    BLOCK_K: tl.constexpr,
    MASKED: tl.constexpr,
    IS_CAUSAL: tl.constexpr,
    PRECISION: tl.constexpr,
):
    """One online-softmax step: fold keys [k_start, k_start + BLOCK_K) into (acc, row_max, row_sum)."""
    offs_k = k_start + tl.arange(0, BLOCK_K)
    kt_ptrs = k_ptr + offs_d[:, None] * stride_kd + offs_k[None, :] * stride_kn
    v_ptrs = v_ptr + offs_k[:, None] * stride_vn + offs_d[None, :] * stride_vd
    if MASKED:
        kt = tl.load(kt_ptrs, mask=offs_k[None, :] < n_k, other=0.0)
        v = tl.load(v_ptrs, mask=offs_k[:, None] < n_k, other=0.0)
    else:
        kt = tl.load(kt_ptrs)
        v = tl.load(v_ptrs)
    s = tl.dot(q, kt, input_precision=PRECISION) * qk_scale
    if MASKED:
        visible = offs_k[None, :] < n_k
        if IS_CAUSAL:
            visible = visible & (offs_k[None, :] <= offs_q[:, None])
        s = tl.where(visible, s, float("-inf"))
    # Key 0 is visible to every row and is always in the first tile visited, so new_max is finite.
    new_max = tl.maximum(row_max, tl.max(s, 1))
    p = tl.exp2(s - new_max[:, None])
    correction = tl.exp2(row_max - new_max)
    row_sum = row_sum * correction + tl.sum(p, 1)
    acc = tl.dot(p.to(v.dtype), v, acc * correction[:, None], input_precision=PRECISION)
    return acc, new_max, row_sum


@triton.jit
def forward_kernel(
    Q,
    K,
    V,
    Out,
    L,
    stride_qb,
    stride_qn,
    stride_qd,
    stride_kb,
    stride_kn,
    stride_kd,
    stride_vb,
    stride_vn,
    stride_vd,
    stride_ob,
    stride_on,
    stride_od,
    n_q,
    n_k,
    qk_scale,
    HEAD_DIM: tl.constexpr,
    BLOCK_Q: tl.constexpr,
    BLOCK_K: tl.constexpr,
    IS_CAUSAL: tl.constexpr,
    PRECISION: tl.constexpr,
):
    """Grid (cdiv(Nq, BLOCK_Q), BH): one program computes O and L for one tile of queries."""
    q_start = _query_tile(IS_CAUSAL) * BLOCK_Q
    bh = tl.program_id(1).to(tl.int64)
    offs_q = q_start + tl.arange(0, BLOCK_Q)
    offs_d = tl.arange(0, HEAD_DIM)
    q_rows = offs_q[:, None] < n_q
    q = tl.load(
        Q + bh * stride_qb + offs_q[:, None] * stride_qn + offs_d[None, :] * stride_qd, mask=q_rows, other=0.0
    )
    k_ptr = K + bh * stride_kb
    v_ptr = V + bh * stride_vb

    row_max = tl.full([BLOCK_Q], float("-inf"), dtype=tl.float32)
    row_sum = tl.zeros([BLOCK_Q], dtype=tl.float32)
    acc = tl.zeros([BLOCK_Q, HEAD_DIM], dtype=tl.float32)

    full_tiles_end = (n_k // BLOCK_K) * BLOCK_K  # tiles without a sequence tail
    keys_end = n_k
    if IS_CAUSAL:
        # fully visible: the tile's last key <= the program's first query; none visible: key > last query
        full_tiles_end = tl.minimum(full_tiles_end, ((q_start + 1) // BLOCK_K) * BLOCK_K)
        keys_end = tl.minimum(n_k, q_start + BLOCK_Q)
    for k_start in range(0, full_tiles_end, BLOCK_K):
        acc, row_max, row_sum = _forward_tile(
            acc, row_max, row_sum, q, k_ptr, v_ptr, stride_kn, stride_kd, stride_vn, stride_vd,
            k_start, n_k, offs_q, offs_d, qk_scale, BLOCK_K, False, IS_CAUSAL, PRECISION,
        )  # fmt: skip
    for k_start in range(full_tiles_end, keys_end, BLOCK_K):
        acc, row_max, row_sum = _forward_tile(
            acc, row_max, row_sum, q, k_ptr, v_ptr, stride_kn, stride_kd, stride_vn, stride_vd,
            k_start, n_k, offs_q, offs_d, qk_scale, BLOCK_K, True, IS_CAUSAL, PRECISION,
        )  # fmt: skip

    o = acc / row_sum[:, None]
    o_ptrs = Out + bh * stride_ob + offs_q[:, None] * stride_on + offs_d[None, :] * stride_od
    tl.store(o_ptrs, o.to(Out.dtype.element_ty), mask=q_rows)
    lse = (row_max + tl.log2(row_sum)) * 0.6931471805599453  # back from base 2 to natural log
    tl.store(L + bh * n_q + offs_q, lse, mask=offs_q < n_q)


@triton.jit
def preprocess_kernel(
    Out,
    DO,
    Delta,
    stride_ob,
    stride_on,
    stride_od,
    stride_dob,
    stride_don,
    stride_dod,
    n_q,
    HEAD_DIM: tl.constexpr,
    BLOCK: tl.constexpr,
):
    """Δ_i = Σ_d dO_id · O_id (float32), the row term of dS = P ∘ (dP − Δ)."""
    bh = tl.program_id(1).to(tl.int64)
    offs_q = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    offs_d = tl.arange(0, HEAD_DIM)
    rows = offs_q[:, None] < n_q
    o = tl.load(
        Out + bh * stride_ob + offs_q[:, None] * stride_on + offs_d[None, :] * stride_od, mask=rows, other=0.0
    )
    do = tl.load(
        DO + bh * stride_dob + offs_q[:, None] * stride_don + offs_d[None, :] * stride_dod,
        mask=rows,
        other=0.0,
    )
    delta = tl.sum(o.to(tl.float32) * do.to(tl.float32), axis=1)
    tl.store(Delta + bh * n_q + offs_q, delta, mask=offs_q < n_q)


@triton.jit
def _dkdv_tile(
    dk,
    dv,
    k,
    v,
    q_ptr,
    do_ptr,
    lse_ptr,
    delta_ptr,
    stride_qn,
    stride_qd,
    stride_don,
    stride_dod,
    q_start,
    n_q,
    offs_k,
    offs_d,
    qk_scale,
    BLOCK_Q: tl.constexpr,
    MASKED: tl.constexpr,
    PRECISION: tl.constexpr,
):
    """Add one tile of queries' contribution to dK and dV (scores transposed: keys are rows)."""
    offs_q = q_start + tl.arange(0, BLOCK_Q)
    rows = offs_q < n_q
    q = tl.load(
        q_ptr + offs_q[:, None] * stride_qn + offs_d[None, :] * stride_qd, mask=rows[:, None], other=0.0
    )
    do = tl.load(
        do_ptr + offs_q[:, None] * stride_don + offs_d[None, :] * stride_dod, mask=rows[:, None], other=0.0
    )
    lse2 = tl.load(lse_ptr + offs_q, mask=rows, other=0.0) * 1.4426950408889634  # to base 2
    delta = tl.load(delta_ptr + offs_q, mask=rows, other=0.0)
    st = tl.dot(k, tl.trans(q), input_precision=PRECISION)
    dpt = tl.dot(v, tl.trans(do), input_precision=PRECISION)  # issued before exp2: runs while exp2 does
    pt = tl.exp2(st * qk_scale - lse2[None, :])
    if MASKED:
        pt = tl.where(offs_k[:, None] <= offs_q[None, :], pt, 0.0)
    dv = tl.dot(pt.to(do.dtype), do, dv, input_precision=PRECISION)
    dst = pt * (dpt - delta[None, :])
    dk = tl.dot(dst.to(q.dtype), q, dk, input_precision=PRECISION)
    return dk, dv


@triton.jit
def dkdv_kernel(
    Q,
    K,
    V,
    DO,
    L,
    Delta,
    DK,
    DV,
    stride_qb,
    stride_qn,
    stride_qd,
    stride_kb,
    stride_kn,
    stride_kd,
    stride_vb,
    stride_vn,
    stride_vd,
    stride_dob,
    stride_don,
    stride_dod,
    stride_dkb,
    stride_dkn,
    stride_dkd,
    stride_dvb,
    stride_dvn,
    stride_dvd,
    n_q,
    n_k,
    scale,
    qk_scale,
    HEAD_DIM: tl.constexpr,
    BLOCK_Q: tl.constexpr,
    BLOCK_K: tl.constexpr,
    IS_CAUSAL: tl.constexpr,
    PRECISION: tl.constexpr,
):
    """Grid (cdiv(Nk, BLOCK_K), BH): one program owns one tile of keys and loops over query tiles."""
    k_start = tl.program_id(0) * BLOCK_K
    bh = tl.program_id(1).to(tl.int64)
    offs_k = k_start + tl.arange(0, BLOCK_K)
    offs_d = tl.arange(0, HEAD_DIM)
    k_rows = offs_k[:, None] < n_k
    k = tl.load(
        K + bh * stride_kb + offs_k[:, None] * stride_kn + offs_d[None, :] * stride_kd, mask=k_rows, other=0.0
    )
    v = tl.load(
        V + bh * stride_vb + offs_k[:, None] * stride_vn + offs_d[None, :] * stride_vd, mask=k_rows, other=0.0
    )
    q_ptr = Q + bh * stride_qb
    do_ptr = DO + bh * stride_dob
    lse_ptr = L + bh * n_q
    delta_ptr = Delta + bh * n_q

    dk = tl.zeros([BLOCK_K, HEAD_DIM], dtype=tl.float32)
    dv = tl.zeros([BLOCK_K, HEAD_DIM], dtype=tl.float32)
    full_tiles_start = 0
    if IS_CAUSAL:
        # earlier query tiles see none of these keys; from full_tiles_start on, every query sees every key
        first_q = (k_start // BLOCK_Q) * BLOCK_Q
        full_tiles_start = tl.cdiv(k_start + BLOCK_K - 1, BLOCK_Q) * BLOCK_Q
        for q_start in range(first_q, tl.minimum(full_tiles_start, n_q), BLOCK_Q):
            dk, dv = _dkdv_tile(
                dk, dv, k, v, q_ptr, do_ptr, lse_ptr, delta_ptr, stride_qn, stride_qd, stride_don, stride_dod,
                q_start, n_q, offs_k, offs_d, qk_scale, BLOCK_Q, True, PRECISION,
            )  # fmt: skip
    for q_start in range(full_tiles_start, n_q, BLOCK_Q):
        dk, dv = _dkdv_tile(
            dk, dv, k, v, q_ptr, do_ptr, lse_ptr, delta_ptr, stride_qn, stride_qd, stride_don, stride_dod,
            q_start, n_q, offs_k, offs_d, qk_scale, BLOCK_Q, False, PRECISION,
        )  # fmt: skip

    dk_ptrs = DK + bh * stride_dkb + offs_k[:, None] * stride_dkn + offs_d[None, :] * stride_dkd
    dv_ptrs = DV + bh * stride_dvb + offs_k[:, None] * stride_dvn + offs_d[None, :] * stride_dvd
    tl.store(dk_ptrs, (dk * scale).to(DK.dtype.element_ty), mask=k_rows)
    tl.store(dv_ptrs, dv.to(DV.dtype.element_ty), mask=k_rows)


@triton.jit
def _dq_tile(
    dq,
    q,
    do,
    lse2,
    delta,
    k_ptr,
    v_ptr,
    stride_kn,
    stride_kd,
    stride_vn,
    stride_vd,
    k_start,
    n_k,
    offs_q,
    offs_d,
    qk_scale,
    BLOCK_K: tl.constexpr,
    MASKED: tl.constexpr,
    IS_CAUSAL: tl.constexpr,
    PRECISION: tl.constexpr,
):
    """Add one tile of keys' contribution to dQ."""
    offs_k = k_start + tl.arange(0, BLOCK_K)
    keys = offs_k < n_k
    kt = tl.load(
        k_ptr + offs_d[:, None] * stride_kd + offs_k[None, :] * stride_kn, mask=keys[None, :], other=0.0
    )
    vt = tl.load(
        v_ptr + offs_d[:, None] * stride_vd + offs_k[None, :] * stride_vn, mask=keys[None, :], other=0.0
    )
    s = tl.dot(q, kt, input_precision=PRECISION)
    dp = tl.dot(do, vt, input_precision=PRECISION)  # issued before exp2: runs while exp2 does
    p = tl.exp2(s * qk_scale - lse2[:, None])
    if MASKED:
        visible = keys[None, :]
        if IS_CAUSAL:
            visible = visible & (offs_k[None, :] <= offs_q[:, None])
        p = tl.where(visible, p, 0.0)
    ds = p * (dp - delta[:, None])
    dq = tl.dot(ds.to(kt.dtype), tl.trans(kt), dq, input_precision=PRECISION)
    return dq


@triton.jit
def dq_kernel(
    Q,
    K,
    V,
    DO,
    L,
    Delta,
    DQ,
    stride_qb,
    stride_qn,
    stride_qd,
    stride_kb,
    stride_kn,
    stride_kd,
    stride_vb,
    stride_vn,
    stride_vd,
    stride_dob,
    stride_don,
    stride_dod,
    stride_dqb,
    stride_dqn,
    stride_dqd,
    n_q,
    n_k,
    scale,
    qk_scale,
    HEAD_DIM: tl.constexpr,
    BLOCK_Q: tl.constexpr,
    BLOCK_K: tl.constexpr,
    IS_CAUSAL: tl.constexpr,
    PRECISION: tl.constexpr,
):
    """Grid (cdiv(Nq, BLOCK_Q), BH): one program owns one tile of queries and loops over key tiles."""
    q_start = _query_tile(IS_CAUSAL) * BLOCK_Q
    bh = tl.program_id(1).to(tl.int64)
    offs_q = q_start + tl.arange(0, BLOCK_Q)
    offs_d = tl.arange(0, HEAD_DIM)
    rows = offs_q < n_q
    q = tl.load(
        Q + bh * stride_qb + offs_q[:, None] * stride_qn + offs_d[None, :] * stride_qd,
        mask=rows[:, None],
        other=0.0,
    )
    do = tl.load(
        DO + bh * stride_dob + offs_q[:, None] * stride_don + offs_d[None, :] * stride_dod,
        mask=rows[:, None],
        other=0.0,
    )
    lse2 = tl.load(L + bh * n_q + offs_q, mask=rows, other=0.0) * 1.4426950408889634  # to base 2
    delta = tl.load(Delta + bh * n_q + offs_q, mask=rows, other=0.0)
    k_ptr = K + bh * stride_kb
    v_ptr = V + bh * stride_vb

    dq = tl.zeros([BLOCK_Q, HEAD_DIM], dtype=tl.float32)
    full_tiles_end = (n_k // BLOCK_K) * BLOCK_K
    keys_end = n_k
    if IS_CAUSAL:
        full_tiles_end = tl.minimum(full_tiles_end, ((q_start + 1) // BLOCK_K) * BLOCK_K)
        keys_end = tl.minimum(n_k, q_start + BLOCK_Q)
    for k_start in range(0, full_tiles_end, BLOCK_K):
        dq = _dq_tile(
            dq, q, do, lse2, delta, k_ptr, v_ptr, stride_kn, stride_kd, stride_vn, stride_vd,
            k_start, n_k, offs_q, offs_d, qk_scale, BLOCK_K, False, IS_CAUSAL, PRECISION,
        )  # fmt: skip
    for k_start in range(full_tiles_end, keys_end, BLOCK_K):
        dq = _dq_tile(
            dq, q, do, lse2, delta, k_ptr, v_ptr, stride_kn, stride_kd, stride_vn, stride_vd,
            k_start, n_k, offs_q, offs_d, qk_scale, BLOCK_K, True, IS_CAUSAL, PRECISION,
        )  # fmt: skip

    dq_ptrs = DQ + bh * stride_dqb + offs_q[:, None] * stride_dqn + offs_d[None, :] * stride_dqd
    tl.store(dq_ptrs, (dq * scale).to(DQ.dtype.element_ty), mask=rows[:, None])
