# selftest-replaces: ws_backward
# Variant: its own 8×32 tiles and num_warps=2, pointers advanced each step, grad_y copied with clone(). / 变体：自己的 8×32 分块和 num_warps=2，每步前移指针，grad_y 用 clone() 复制。
BWD_BLOCK_ROWS = 8
BWD_BLOCK_D = 32


@triton.jit
def weighted_sum_bwd_kernel(x_ptr, w_ptr, grad_y_ptr, grad_x_ptr, partial_ptr, n_rows, n_cols,
                            stride_row, stride_col, stride_w, stride_gx_row, stride_gx_col,
                            BLOCK_ROWS: tl.constexpr, BLOCK_C: tl.constexpr):
    pid = tl.program_id(0)
    r = pid * BLOCK_ROWS + tl.arange(0, BLOCK_ROWS)
    c = tl.arange(0, BLOCK_C)
    r_ok = r < n_rows
    g = tl.load(grad_y_ptr + r, mask=r_ok, other=0.0).to(tl.float32)
    x_ptrs = x_ptr + r[:, None] * stride_row + c[None, :] * stride_col
    gx_ptrs = grad_x_ptr + r[:, None] * stride_gx_row + c[None, :] * stride_gx_col
    w_ptrs = w_ptr + c * stride_w
    p_ptrs = partial_ptr + pid * n_cols + c
    for c0 in range(0, n_cols, BLOCK_C):
        c_ok = (c0 + c) < n_cols
        m2 = r_ok[:, None] & c_ok[None, :]
        w = tl.load(w_ptrs, mask=c_ok, other=0.0).to(tl.float32)
        x = tl.load(x_ptrs, mask=m2, other=0.0).to(tl.float32)
        tl.store(gx_ptrs, (g[:, None] * w[None, :]).to(grad_x_ptr.dtype.element_ty), mask=m2)
        tl.store(p_ptrs, tl.sum(x * g[:, None], axis=0), mask=c_ok)
        x_ptrs += BLOCK_C * stride_col
        gx_ptrs += BLOCK_C * stride_gx_col
        w_ptrs += BLOCK_C * stride_w
        p_ptrs += BLOCK_C


def weighted_sum_backward(grad_y, x, weight):
    n_cols = x.shape[-1]
    x2 = x.reshape(-1, n_cols)
    n_rows = x2.shape[0]
    g = grad_y.reshape(n_rows).clone(memory_format=torch.contiguous_format)  # read with stride 1
    grad_x = torch.empty(n_rows, n_cols, device=x.device, dtype=x.dtype)
    programs = (n_rows + BWD_BLOCK_ROWS - 1) // BWD_BLOCK_ROWS
    partial = torch.zeros(programs, n_cols, device=x.device, dtype=torch.float32)
    weighted_sum_bwd_kernel[(programs,)](
        x2, weight, g, grad_x, partial, n_rows, n_cols, x2.stride(0), x2.stride(1), weight.stride(0),
        grad_x.stride(0), grad_x.stride(1), BLOCK_ROWS=BWD_BLOCK_ROWS, BLOCK_C=BWD_BLOCK_D, num_warps=2)
    grad_w = partial.sum(0, dtype=torch.float32).to(weight.dtype)
    return grad_x.reshape(x.shape), grad_w
