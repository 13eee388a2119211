# selftest-replaces: ws_forward
# selftest-whole: another design, not the reference with a change
# Variant: the row sums as a tile matrix product tl.dot (w in column 0 of a BLOCK_C×16 tile, float32 "ieee"). / 变体：用分块矩阵乘 tl.dot 求行和（w 放在 BLOCK_C×16 分块的第 0 列，float32 "ieee" 精度）。
BLOCK_ROWS = 32
BLOCK_C = 32


@triton.jit
def weighted_sum_fwd_kernel(x_ptr, w_ptr, y_ptr, n_rows, n_cols, stride_row, stride_col, stride_w,
                            BLOCK_ROWS: tl.constexpr, BLOCK_C: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_ROWS + tl.arange(0, BLOCK_ROWS)
    row_ok = rows < n_rows
    lane = tl.arange(0, 16)  # tl.dot needs every dimension to be at least 16
    acc = tl.zeros((BLOCK_ROWS, 16), dtype=tl.float32)
    for c0 in range(0, n_cols, BLOCK_C):
        cols = c0 + tl.arange(0, BLOCK_C)
        col_ok = cols < n_cols
        x = tl.load(x_ptr + rows[:, None] * stride_row + cols[None, :] * stride_col,
                    mask=row_ok[:, None] & col_ok[None, :], other=0.0).to(tl.float32)
        w = tl.load(w_ptr + cols * stride_w, mask=col_ok, other=0.0).to(tl.float32)
        w_tile = tl.where(lane[None, :] == 0, w[:, None], 0.0)  # (BLOCK_C, 16), w in column 0
        acc = tl.dot(x, w_tile, acc, input_precision="ieee")
    y = tl.sum(acc, axis=1)  # columns 1..15 are zero
    tl.store(y_ptr + rows, y.to(y_ptr.dtype.element_ty), mask=row_ok)


def weighted_sum_forward(x, weight):
    n_cols = x.shape[-1]
    x2 = x.reshape(-1, n_cols)
    y = torch.empty(x2.shape[0], device=x.device, dtype=x.dtype)
    weighted_sum_fwd_kernel[(triton.cdiv(x2.shape[0], BLOCK_ROWS),)](
        x2, weight, y, x2.shape[0], n_cols, x2.stride(0), x2.stride(1), weight.stride(0),
        BLOCK_ROWS=BLOCK_ROWS, BLOCK_C=BLOCK_C, num_warps=4)
    return y.reshape(x.shape[:-1])
