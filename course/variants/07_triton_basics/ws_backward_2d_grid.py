# selftest-replaces: ws_backward
# Variant: a 2-D grid (row tiles × column tiles), no loop over the columns inside the kernel. / 变体：二维网格（行分块 × 列分块），内核里不再沿列循环。
@triton.jit
def weighted_sum_bwd_kernel(x_ptr, w_ptr, grad_y_ptr, grad_x_ptr, partial_ptr, n_rows, n_cols,
                            stride_row, stride_col, stride_w, stride_gx_row, stride_gx_col,
                            BLOCK_ROWS: tl.constexpr, BLOCK_C: tl.constexpr):
    pid_r = tl.program_id(0)  # which tile of rows
    pid_c = tl.program_id(1)  # which tile of columns
    rows = pid_r * BLOCK_ROWS + tl.arange(0, BLOCK_ROWS)
    cols = pid_c * BLOCK_C + tl.arange(0, BLOCK_C)
    row_ok = rows < n_rows
    col_ok = cols < n_cols
    ok = row_ok[:, None] & col_ok[None, :]
    g = tl.load(grad_y_ptr + rows, mask=row_ok, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + cols * stride_w, mask=col_ok, other=0.0).to(tl.float32)
    x = tl.load(x_ptr + rows[:, None] * stride_row + cols[None, :] * stride_col, mask=ok, other=0.0)
    tl.store(grad_x_ptr + rows[:, None] * stride_gx_row + cols[None, :] * stride_gx_col,
             (g[:, None] * w[None, :]).to(grad_x_ptr.dtype.element_ty), mask=ok)
    # partial[pid_r, cols] = Σ over this program's rows of g · x
    tl.store(partial_ptr + pid_r * n_cols + cols, tl.sum(g[:, None] * x.to(tl.float32), axis=0), mask=col_ok)


def weighted_sum_backward(grad_y, x, weight):
    n_cols = x.shape[-1]
    x2 = x.reshape(-1, n_cols)
    n_rows = x2.shape[0]
    g = grad_y.reshape(-1).contiguous()  # may arrive as a stride-0 broadcast
    grad_x = torch.empty((n_rows, n_cols), device=x.device, dtype=x.dtype)
    row_tiles, col_tiles = triton.cdiv(n_rows, BLOCK_ROWS), triton.cdiv(n_cols, BLOCK_C)
    partial = torch.empty((row_tiles, n_cols), device=x.device, dtype=torch.float32)
    weighted_sum_bwd_kernel[(row_tiles, col_tiles)](
        x2, weight, g, grad_x, partial, n_rows, n_cols, x2.stride(0), x2.stride(1), weight.stride(0),
        grad_x.stride(0), grad_x.stride(1), BLOCK_ROWS=BLOCK_ROWS, BLOCK_C=BLOCK_C)
    return grad_x.view(x.shape), partial.sum(dim=0).to(weight.dtype)
