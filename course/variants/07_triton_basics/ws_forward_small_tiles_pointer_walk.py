# selftest-replaces: ws_forward
# Variant: small 8×16 tiles, num_warps=2, pointers advanced by BLOCK_C each step. / 变体：8×16 的小分块，num_warps=2，每步把指针前移 BLOCK_C。
BLOCK_ROWS = 8
BLOCK_C = 16


@triton.jit
def weighted_sum_fwd_kernel(x_ptr, w_ptr, y_ptr, n_rows, n_cols, stride_row, stride_col, stride_w,
                            BLOCK_ROWS: tl.constexpr, BLOCK_C: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * BLOCK_ROWS + tl.arange(0, BLOCK_ROWS)
    offs = tl.arange(0, BLOCK_C)
    row_mask = rows < n_rows
    x_ptrs = x_ptr + rows[:, None] * stride_row + offs[None, :] * stride_col
    w_ptrs = w_ptr + offs * stride_w
    acc = tl.zeros((BLOCK_ROWS,), dtype=tl.float32)
    for start in range(0, n_cols, BLOCK_C):
        col_mask = (start + offs) < n_cols
        x = tl.load(x_ptrs, mask=row_mask[:, None] & col_mask[None, :], other=0.0).to(tl.float32)
        w = tl.load(w_ptrs, mask=col_mask, other=0.0).to(tl.float32)
        acc += tl.sum(x * w[None, :], axis=1)
        x_ptrs += BLOCK_C * stride_col  # next column tile
        w_ptrs += BLOCK_C * stride_w
    tl.store(y_ptr + rows, acc.to(y_ptr.dtype.element_ty), mask=row_mask)


def weighted_sum_forward(x, weight):
    n_cols = x.shape[-1]
    x_rows = x.reshape(-1, n_cols)
    n_rows = x_rows.shape[0]
    y = x.new_empty(x.shape[:-1])  # contiguous: y.view(-1)[r] is row r
    grid = ((n_rows + BLOCK_ROWS - 1) // BLOCK_ROWS,)
    weighted_sum_fwd_kernel[grid](x_rows, weight, y, n_rows, n_cols, x_rows.stride(0), x_rows.stride(1),
                                  weight.stride(0), BLOCK_ROWS=BLOCK_ROWS, BLOCK_C=BLOCK_C, num_warps=2)
    return y
