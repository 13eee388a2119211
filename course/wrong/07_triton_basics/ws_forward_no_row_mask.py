# selftest-notebook: triton_basics.ipynb
# selftest-replaces: ws_forward
# selftest-must-fail: test_ws_forward
# selftest-selfcheck-fails: test_ws_forward
# Mistake: no row mask: the last program reads and writes rows past the end (fails the same way every run). / 错误：没有行掩码：最后一个程序读写了末尾之后的行（每次都以同样的方式失败）。
BLOCK_ROWS = 16
BLOCK_C = 64


@triton.jit
def weighted_sum_fwd_kernel(x_ptr, w_ptr, y_ptr, n_rows, n_cols, stride_row, stride_col, stride_w,
                            BLOCK_ROWS: tl.constexpr, BLOCK_C: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_ROWS + tl.arange(0, BLOCK_ROWS)
    acc = tl.zeros((BLOCK_ROWS,), dtype=tl.float32)
    for c0 in range(0, n_cols, BLOCK_C):
        cols = c0 + tl.arange(0, BLOCK_C)
        col_ok = cols < n_cols
        x = tl.load(x_ptr + rows[:, None] * stride_row + cols[None, :] * stride_col,
                    mask=col_ok[None, :], other=0.0)
        w = tl.load(w_ptr + cols * stride_w, mask=col_ok, other=0.0)
        acc += tl.sum(x.to(tl.float32) * w.to(tl.float32)[None, :], axis=1)
    tl.store(y_ptr + rows, acc.to(y_ptr.dtype.element_ty))


def weighted_sum_forward(x, weight):
    n_cols = x.shape[-1]
    x2 = x.reshape(-1, n_cols)
    y = torch.empty(x2.shape[0], device=x.device, dtype=x.dtype)
    grid = (triton.cdiv(x2.shape[0], BLOCK_ROWS),)
    weighted_sum_fwd_kernel[grid](x2, weight, y, x2.shape[0], n_cols, x2.stride(0), x2.stride(1),
                                  weight.stride(0), BLOCK_ROWS=BLOCK_ROWS, BLOCK_C=BLOCK_C)
    return y.reshape(x.shape[:-1])
