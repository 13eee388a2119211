# selftest-replaces: ws_backward
# Variant: grad_x written into a float32 buffer and cast afterwards; loads without other= behind tl.where. / 变体：grad_x 先写入 float32 缓冲区再转换类型；不带 other= 的读取配合 tl.where。
@triton.jit
def weighted_sum_bwd_kernel(x_ptr, w_ptr, grad_y_ptr, grad_x_ptr, partial_ptr, n_rows, n_cols,
                            stride_row, stride_col, stride_w, stride_gx_row, stride_gx_col,
                            BLOCK_ROWS: tl.constexpr, BLOCK_C: tl.constexpr):
    pid = tl.program_id(0)
    rows = pid * BLOCK_ROWS + tl.arange(0, BLOCK_ROWS)
    row_ok = rows < n_rows
    g = tl.where(row_ok, tl.load(grad_y_ptr + rows, mask=row_ok).to(tl.float32), 0.0)
    for c0 in range(0, n_cols, BLOCK_C):
        cols = c0 + tl.arange(0, BLOCK_C)
        col_ok = cols < n_cols
        both = row_ok[:, None] & col_ok[None, :]
        x = tl.load(x_ptr + rows[:, None] * stride_row + cols[None, :] * stride_col, mask=both)
        x = tl.where(both, x.to(tl.float32), 0.0)  # rows past the end must not enter the sum
        w = tl.load(w_ptr + cols * stride_w, mask=col_ok).to(tl.float32)
        tl.store(grad_x_ptr + rows[:, None] * stride_gx_row + cols[None, :] * stride_gx_col,
                 g[:, None] * w[None, :], mask=both)  # float32 buffer
        tl.store(partial_ptr + pid * n_cols + cols, tl.sum(x * g[:, None], axis=0), mask=col_ok)


def weighted_sum_backward(grad_y, x, weight):
    n_cols = x.shape[-1]
    x2 = x.reshape(-1, n_cols)
    rows = x2.shape[0]
    g = grad_y.contiguous().view(-1)
    grad_x32 = torch.empty(rows, n_cols, device=x.device, dtype=torch.float32)
    n_prog = triton.cdiv(rows, BLOCK_ROWS)
    partial = torch.empty(n_prog, n_cols, device=x.device, dtype=torch.float32)
    weighted_sum_bwd_kernel[(n_prog,)](
        x2, weight, g, grad_x32, partial, rows, n_cols, x2.stride(0), x2.stride(1), weight.stride(0),
        grad_x32.stride(0), grad_x32.stride(1), BLOCK_ROWS=BLOCK_ROWS, BLOCK_C=BLOCK_C)
    return grad_x32.to(x.dtype).reshape(x.shape), partial.sum(0).to(weight.dtype)
