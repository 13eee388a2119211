# selftest-replaces: softmax_rows
# Variant: per-lane running max and sum (vectors of BLOCK_C), combined once after the loop, with a -inf guard. / 变体：每个通道各自维护运行最大值和运行和（长 BLOCK_C 的向量），循环后合并一次，并防护 -inf。
@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, stride_x_row, stride_x_col, stride_y_row, stride_y_col,
                   BLOCK_C: tl.constexpr):
    row = tl.program_id(0)
    lanes = tl.arange(0, BLOCK_C)
    m_lane = tl.full((BLOCK_C,), float("-inf"), tl.float32)
    s_lane = tl.zeros((BLOCK_C,), dtype=tl.float32)
    for c0 in range(0, n_cols, BLOCK_C):
        cols = c0 + lanes
        x = tl.load(x_ptr + row * stride_x_row + cols * stride_x_col, mask=cols < n_cols,
                    other=float("-inf")).to(tl.float32)
        m_new = tl.maximum(m_lane, x)
        # a lane that has seen only masked entries keeps m = -inf: exp(-inf - (-inf)) would be NaN
        seen = m_new > float("-inf")
        shift = tl.where(seen, m_new, 0.0)
        s_lane = s_lane * tl.exp(m_lane - shift) + tl.exp(x - shift)
        m_lane = m_new
    m = tl.max(m_lane, axis=0)
    total = tl.sum(s_lane * tl.exp(m_lane - m), axis=0)  # lanes with m_lane = -inf contribute 0
    for c0 in range(0, n_cols, BLOCK_C):
        cols = c0 + lanes
        ok = cols < n_cols
        x = tl.load(x_ptr + row * stride_x_row + cols * stride_x_col, mask=ok, other=0.0).to(tl.float32)
        tl.store(y_ptr + row * stride_y_row + cols * stride_y_col,
                 (tl.exp(x - m) / total).to(y_ptr.dtype.element_ty), mask=ok)


def softmax_rows(x, block_c=128):
    y = torch.empty_like(x)
    grid = (x.shape[0],)
    softmax_kernel[grid](x, y, x.shape[1], x.stride(0), x.stride(1), y.stride(0), y.stride(1),
                         BLOCK_C=block_c, num_warps=4)
    return y
