# selftest-replaces: softmax_rows
# Variant: wrapper copies x to contiguous memory and narrows the tile to next_power_of_2(n_cols) when that is smaller. / 变体：包装函数先把 x 复制为连续张量，并在更小时把分块缩到 next_power_of_2(n_cols)。
@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, stride_x_row, stride_x_col, stride_y_row, stride_y_col,
                   BLOCK_C: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_x_row
    y_row = y_ptr + row * stride_y_row
    m = tl.full((1,), -float("inf"), tl.float32)
    total = tl.full((1,), 0.0, tl.float32)
    for c0 in range(0, n_cols, BLOCK_C):
        cols = c0 + tl.arange(0, BLOCK_C)
        x = tl.load(x_row + cols * stride_x_col, mask=cols < n_cols, other=-float("inf")).to(tl.float32)
        block_max = tl.max(x, axis=0)
        m_new = tl.maximum(m, block_max)
        total = total * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
        m = m_new
    for c0 in range(0, n_cols, BLOCK_C):
        cols = c0 + tl.arange(0, BLOCK_C)
        x = tl.load(x_row + cols * stride_x_col, mask=cols < n_cols, other=-float("inf")).to(tl.float32)
        tl.store(y_row + cols * stride_y_col, (tl.exp(x - m) / total).to(y_ptr.dtype.element_ty),
                 mask=cols < n_cols)


def softmax_rows(x, block_c=128):
    x = x.contiguous()  # a copy for transposed input; strides are still passed
    n_rows, n_cols = x.shape
    block = min(block_c, triton.next_power_of_2(n_cols))  # never more than block_c columns at a time
    y = torch.empty((n_rows, n_cols), device=x.device, dtype=x.dtype)
    softmax_kernel[(n_rows, 1, 1)](x, y, n_cols, x.stride(0), x.stride(1), y.stride(0), y.stride(1),
                                   BLOCK_C=block, num_warps=4 if block < 2048 else 8)
    return y
