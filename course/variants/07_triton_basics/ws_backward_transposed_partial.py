# selftest-notebook: triton_basics.ipynb
# selftest-replaces: ws_backward
# Variant: large 64×128 tiles, partial sums stored transposed as (D, programs) and summed over dim 1. / 变体：64×128 的大分块，部分和按 (D, 程序数) 转置存放，再沿第 1 维求和。
BWD_ROWS = 64
BWD_COLS = 128


@triton.jit
def weighted_sum_bwd_kernel(x_ptr, w_ptr, grad_y_ptr, grad_x_ptr, partial_ptr, n_rows, D,
                            stride_row, stride_col, stride_w, stride_gx_row, stride_gx_col,
                            BLOCK_ROWS: tl.constexpr, BLOCK_D: tl.constexpr):
    pid = tl.program_id(0)
    n_programs = tl.num_programs(0)
    rows = pid * BLOCK_ROWS + tl.arange(0, BLOCK_ROWS)
    in_rows = rows < n_rows
    g = tl.load(grad_y_ptr + rows, mask=in_rows, other=0.0).to(tl.float32)
    for d0 in range(0, D, BLOCK_D):
        cols = d0 + tl.arange(0, BLOCK_D)
        in_cols = cols < D
        inside = in_rows[:, None] & in_cols[None, :]
        x = tl.load(x_ptr + rows[:, None] * stride_row + cols[None, :] * stride_col,
                    mask=inside, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + cols * stride_w, mask=in_cols, other=0.0).to(tl.float32)
        tl.store(grad_x_ptr + rows[:, None] * stride_gx_row + cols[None, :] * stride_gx_col,
                 (g[:, None] * w[None, :]).to(grad_x_ptr.dtype.element_ty), mask=inside)
        # partial is (D, programs): column pid holds this program's partial sums
        tl.store(partial_ptr + cols * n_programs + pid, tl.sum(g[:, None] * x, axis=0), mask=in_cols)


def weighted_sum_backward(grad_y, x, weight):
    D = x.shape[-1]
    grad_x = torch.empty_like(x, memory_format=torch.contiguous_format)
    x2, gx2 = x.reshape(-1, D), grad_x.view(-1, D)
    n_rows = x2.shape[0]
    g = grad_y.reshape(-1).contiguous()
    n_programs = triton.cdiv(n_rows, BWD_ROWS)
    partial = torch.empty(D, n_programs, device=x.device, dtype=torch.float32)
    weighted_sum_bwd_kernel[(n_programs,)](
        x2, weight, g, gx2, partial, n_rows, D, x2.stride(0), x2.stride(1), weight.stride(0),
        gx2.stride(0), gx2.stride(1), BLOCK_ROWS=BWD_ROWS, BLOCK_D=BWD_COLS, num_warps=8)
    return grad_x, partial.sum(dim=1).to(weight.dtype)
