# selftest-replaces: ws_backward
# Variant: large 64×128 tiles, partial sums stored transposed as (n_cols, programs) and summed over dim 1. / 变体：64×128 的大分块，部分和按 (列数, 程序数) 转置存放，再沿第 1 维求和。
BWD_ROWS = 64
BWD_COLS = 128


@triton.jit
def weighted_sum_bwd_kernel(x_ptr, w_ptr, grad_y_ptr, grad_x_ptr, partial_ptr, n_rows, n_cols,
                            stride_row, stride_col, stride_w, stride_gx_row, stride_gx_col,
                            BLOCK_ROWS: tl.constexpr, BLOCK_C: tl.constexpr):
    pid = tl.program_id(0)
    n_programs = tl.num_programs(0)
    rows = pid * BLOCK_ROWS + tl.arange(0, BLOCK_ROWS)
    in_rows = rows < n_rows
    g = tl.load(grad_y_ptr + rows, mask=in_rows, other=0.0).to(tl.float32)
    for c0 in range(0, n_cols, BLOCK_C):
        cols = c0 + tl.arange(0, BLOCK_C)
        in_cols = cols < n_cols
        inside = in_rows[:, None] & in_cols[None, :]
        x = tl.load(x_ptr + rows[:, None] * stride_row + cols[None, :] * stride_col,
                    mask=inside, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + cols * stride_w, mask=in_cols, other=0.0).to(tl.float32)
        tl.store(grad_x_ptr + rows[:, None] * stride_gx_row + cols[None, :] * stride_gx_col,
                 (g[:, None] * w[None, :]).to(grad_x_ptr.dtype.element_ty), mask=inside)
        # partial is (n_cols, programs): column pid holds this program's partial sums
        tl.store(partial_ptr + cols * n_programs + pid, tl.sum(g[:, None] * x, axis=0), mask=in_cols)


def weighted_sum_backward(grad_y, x, weight):
    n_cols = x.shape[-1]
    grad_x = torch.empty_like(x, memory_format=torch.contiguous_format)
    x2, gx2 = x.reshape(-1, n_cols), grad_x.view(-1, n_cols)
    n_rows = x2.shape[0]
    g = grad_y.reshape(-1).contiguous()
    n_programs = triton.cdiv(n_rows, BWD_ROWS)
    partial = torch.empty(n_cols, n_programs, device=x.device, dtype=torch.float32)
    weighted_sum_bwd_kernel[(n_programs,)](
        x2, weight, g, gx2, partial, n_rows, n_cols, x2.stride(0), x2.stride(1), weight.stride(0),
        gx2.stride(0), gx2.stride(1), BLOCK_ROWS=BWD_ROWS, BLOCK_C=BWD_COLS, num_warps=8)
    return grad_x, partial.sum(dim=1).to(weight.dtype)
