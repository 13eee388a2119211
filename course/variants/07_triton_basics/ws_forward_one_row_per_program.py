# selftest-replaces: ws_forward
# Variant: BLOCK_ROWS = 1 (one row per program), BLOCK_C = 128, int64 row offsets. / 变体：BLOCK_ROWS = 1（每个程序一行），BLOCK_C = 128，行偏移用 int64。
BLOCK_ROWS = 1
BLOCK_C = 128


@triton.jit
def weighted_sum_fwd_kernel(x_ptr, w_ptr, y_ptr, n_rows, n_cols, stride_row, stride_col, stride_w,
                            BLOCK_ROWS: tl.constexpr, BLOCK_C: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_ROWS + tl.arange(0, BLOCK_ROWS)
    valid_row = rows < n_rows
    row_start = rows.to(tl.int64) * stride_row  # 64-bit offsets: safe for very large inputs
    acc = tl.zeros((BLOCK_ROWS,), dtype=tl.float32)
    for c0 in range(0, n_cols, BLOCK_C):
        cols = c0 + tl.arange(0, BLOCK_C)
        valid_col = cols < n_cols
        x = tl.load(x_ptr + row_start[:, None] + cols[None, :] * stride_col,
                    mask=valid_row[:, None] & valid_col[None, :], other=0.0)
        w = tl.load(w_ptr + cols * stride_w, mask=valid_col, other=0.0)
        acc += tl.sum(x.to(tl.float32) * w[None, :].to(tl.float32), axis=1)
    tl.store(y_ptr + rows, acc.to(y_ptr.dtype.element_ty), mask=valid_row)


def weighted_sum_forward(x, weight):
    n_cols = x.shape[-1]
    flat = x.reshape(-1, n_cols)
    n_rows = flat.shape[0]
    out = torch.empty((n_rows,), device=x.device, dtype=x.dtype)
    weighted_sum_fwd_kernel[(n_rows,)](flat, weight, out, n_rows, n_cols, *flat.stride(), weight.stride(0),
                                       BLOCK_ROWS=BLOCK_ROWS, BLOCK_C=BLOCK_C)
    return out.reshape(*x.shape[:-1])
