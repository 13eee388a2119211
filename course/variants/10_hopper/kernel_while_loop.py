# selftest-notebook: hopper.ipynb
# selftest-replaces: hopper_kernel
# Variant: the persistent loop as a while loop over tile += programs.
# 变体：持久循环写成 while 循环，tile += 程序数。
@triton.jit
def attend_tile(acc, row_max, row_sum, q, k_desc, v_desc, b, k_start, n_k, rows, qk_scale,
                HEAD_DIM: tl.constexpr, BLOCK_K: tl.constexpr, MASKED: tl.constexpr, IS_CAUSAL: tl.constexpr):
    # One online-softmax step over keys [k_start, k_start + BLOCK_K), in base 2
    k = k_desc.load([b, k_start, 0]).reshape([BLOCK_K, HEAD_DIM])
    v = v_desc.load([b, k_start, 0]).reshape([BLOCK_K, HEAD_DIM])
    s = tl.dot(q, tl.trans(k)) * qk_scale
    if MASKED:  # the diagonal and the key tail (read as zeros: their scores must go)
        cols = k_start + tl.arange(0, BLOCK_K)
        visible = cols[None, :] < n_k
        if IS_CAUSAL:
            visible = visible & (cols[None, :] <= rows[:, None])
        s = tl.where(visible, s, float("-inf"))
    new_max = tl.maximum(row_max, tl.max(s, 1))
    p = tl.exp2(s - new_max[:, None])
    correction = tl.exp2(row_max - new_max)
    row_sum = row_sum * correction + tl.sum(p, 1)
    acc = tl.dot(p.to(v.dtype), v, acc * correction[:, None])
    return acc, new_max, row_sum


@triton.jit
def hopper_fwd_kernel(
    q_desc, k_desc, v_desc, o_desc, n_q, n_k, batch, qk_scale,
    HEAD_DIM: tl.constexpr, BLOCK_Q: tl.constexpr, BLOCK_K: tl.constexpr, IS_CAUSAL: tl.constexpr,
):
    q_tiles = tl.cdiv(n_q, BLOCK_Q)
    tile = tl.program_id(0)
    while tile < batch * q_tiles:
        b = tile // q_tiles
        q_start = (tile % q_tiles) * BLOCK_Q
        rows = q_start + tl.arange(0, BLOCK_Q)
        q = q_desc.load([b, q_start, 0]).reshape([BLOCK_Q, HEAD_DIM])
        row_max = tl.full([BLOCK_Q], float("-inf"), dtype=tl.float32)
        row_sum = tl.zeros([BLOCK_Q], dtype=tl.float32)
        acc = tl.zeros([BLOCK_Q, HEAD_DIM], dtype=tl.float32)
        full_end = (n_k // BLOCK_K) * BLOCK_K  # key tiles without a tail
        keys_end = n_k
        if IS_CAUSAL:
            full_end = tl.minimum(full_end, ((q_start + 1) // BLOCK_K) * BLOCK_K)
            keys_end = tl.minimum(n_k, q_start + BLOCK_Q)
        for k_start in tl.range(0, full_end, BLOCK_K):
            acc, row_max, row_sum = attend_tile(acc, row_max, row_sum, q, k_desc, v_desc, b, k_start, n_k, rows,
                                                qk_scale, HEAD_DIM, BLOCK_K, False, IS_CAUSAL)
        for k_start in tl.range(full_end, keys_end, BLOCK_K):
            acc, row_max, row_sum = attend_tile(acc, row_max, row_sum, q, k_desc, v_desc, b, k_start, n_k, rows,
                                                qk_scale, HEAD_DIM, BLOCK_K, True, IS_CAUSAL)
        o = (acc / row_sum[:, None]).to(o_desc.dtype)
        o_desc.store([b, q_start, 0], o.reshape([1, BLOCK_Q, HEAD_DIM]))  # rows beyond Nq are clipped
        tile += tl.num_programs(0)
