# selftest-replaces: ws_backward
# selftest-whole: another design, not the reference with a change
# Variant: the partial sums Σ_r g[r]·x[r, :] as a tl.dot of a 16×BLOCK_ROWS tile (g in row 0) with the x tile. / 变体：部分和 Σ_r g[r]·x[r, :] 用 tl.dot 计算：16×BLOCK_ROWS 的分块（g 在第 0 行）乘以 x 分块。
BWD_ROWS = 32
BWD_D = 32


@triton.jit
def weighted_sum_bwd_kernel(x_ptr, w_ptr, grad_y_ptr, grad_x_ptr, partial_ptr, n_rows, n_cols,
                            stride_row, stride_col, stride_w, stride_gx_row, stride_gx_col,
                            BLOCK_ROWS: tl.constexpr, BLOCK_C: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * BLOCK_ROWS + tl.arange(0, BLOCK_ROWS)
    row_ok = rows < n_rows
    g = tl.load(grad_y_ptr + rows, mask=row_ok, other=0.0).to(tl.float32)
    lane = tl.arange(0, 16)  # tl.dot needs dimensions of at least 16
    g_tile = tl.where(lane[:, None] == 0, g[None, :], 0.0)  # (16, BLOCK_ROWS), g in row 0
    for c0 in range(0, n_cols, BLOCK_C):
        cols = c0 + tl.arange(0, BLOCK_C)
        col_ok = cols < n_cols
        tile_ok = row_ok[:, None] & col_ok[None, :]
        x = tl.load(x_ptr + rows[:, None] * stride_row + cols[None, :] * stride_col,
                    mask=tile_ok, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + cols * stride_w, mask=col_ok, other=0.0).to(tl.float32)
        tl.store(grad_x_ptr + rows[:, None] * stride_gx_row + cols[None, :] * stride_gx_col,
                 (g[:, None] * w[None, :]).to(grad_x_ptr.dtype.element_ty), mask=tile_ok)
        sums = tl.dot(g_tile, x, input_precision="ieee")  # (16, BLOCK_C), only row 0 non-zero
        tl.store(partial_ptr + pid * n_cols + cols, tl.sum(sums, axis=0), mask=col_ok)


def weighted_sum_backward(grad_y, x, weight):
    n_cols = x.shape[-1]
    x2 = x.reshape(-1, n_cols)
    n = x2.shape[0]
    g = grad_y.reshape(-1).contiguous()
    grad_x = torch.empty_like(x2)
    grid = (triton.cdiv(n, BWD_ROWS),)
    partial = torch.empty(grid[0], n_cols, device=x.device, dtype=torch.float32)
    weighted_sum_bwd_kernel[grid](x2, weight, g, grad_x, partial, n, n_cols, x2.stride(0), x2.stride(1),
                                  weight.stride(0), grad_x.stride(0), grad_x.stride(1),
                                  BLOCK_ROWS=BWD_ROWS, BLOCK_C=BWD_D)
    return grad_x.reshape(x.shape), partial.sum(0).to(weight.dtype)
