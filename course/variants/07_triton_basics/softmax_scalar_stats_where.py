# selftest-replaces: softmax_rows
# Variant: 0-d (scalar) running statistics; loads with other=0.0, then tl.where puts -inf in masked lanes. / 变体：运行统计量是 0 维标量；读取时 other=0.0，再用 tl.where 在被遮住的位置填 -inf。
@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, stride_x_row, stride_x_col, stride_y_row, stride_y_col,
                   BLOCK_C: tl.constexpr):
    r = tl.program_id(0)
    m = tl.full([], float("-inf"), tl.float32)  # 0-d scalars carried through the loop
    denom = tl.full([], 0.0, tl.float32)
    for c0 in tl.range(0, n_cols, BLOCK_C):
        cols = c0 + tl.arange(0, BLOCK_C)
        valid = cols < n_cols
        x = tl.load(x_ptr + r * stride_x_row + cols * stride_x_col, mask=valid, other=0.0).to(tl.float32)
        x = tl.where(valid, x, float("-inf"))  # a padded 0.0 must not win the max or add e^(0 - m)
        new_m = tl.maximum(m, tl.max(x, axis=0))
        denom = denom * tl.exp(m - new_m) + tl.sum(tl.exp(x - new_m), axis=0)
        m = new_m
    log_denom = tl.log(denom)
    for c0 in tl.range(0, n_cols, BLOCK_C):
        cols = c0 + tl.arange(0, BLOCK_C)
        valid = cols < n_cols
        x = tl.load(x_ptr + r * stride_x_row + cols * stride_x_col, mask=valid, other=0.0).to(tl.float32)
        y = tl.exp(x - m - log_denom)  # = exp(x - m) / denom
        tl.store(y_ptr + r * stride_y_row + cols * stride_y_col, y.to(y_ptr.dtype.element_ty), mask=valid)


def softmax_rows(x, block_c=128):
    rows, cols = x.shape
    y = x.new_empty((rows, cols))
    softmax_kernel[(rows,)](x, y, cols, x.stride(0), x.stride(1), y.stride(0), y.stride(1), BLOCK_C=block_c)
    return y
