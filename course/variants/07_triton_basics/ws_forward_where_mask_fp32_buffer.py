# selftest-replaces: ws_forward
# Variant: masked loads without other= cleaned by tl.where, a float32 output buffer cast afterwards, grid as a lambda. / 变体：不带 other= 的掩码读取再用 tl.where 清零，先写入 float32 缓冲区再转换类型，网格用 lambda 给出。
BLOCK_ROWS = 32
BLOCK_C = 32


@triton.jit
def weighted_sum_fwd_kernel(x_ptr, w_ptr, y_ptr, n_rows, n_cols, stride_row, stride_col, stride_w,
                            BLOCK_ROWS: tl.constexpr, BLOCK_C: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_ROWS + tl.arange(0, BLOCK_ROWS)
    row_ok = rows < n_rows
    total = tl.zeros((BLOCK_ROWS,), dtype=tl.float32)
    for c0 in range(0, n_cols, BLOCK_C):
        cols = c0 + tl.arange(0, BLOCK_C)
        col_ok = cols < n_cols
        tile_ok = row_ok[:, None] & col_ok[None, :]
        x = tl.load(x_ptr + rows[:, None] * stride_row + cols[None, :] * stride_col, mask=tile_ok)
        w = tl.load(w_ptr + cols * stride_w, mask=col_ok)
        # masked lanes hold unspecified values: select 0 there before summing
        prod = tl.where(tile_ok, x.to(tl.float32) * w.to(tl.float32)[None, :], 0.0)
        total += tl.sum(prod, axis=1)
    tl.store(y_ptr + rows, total, mask=row_ok)  # y_ptr points to a float32 buffer


def weighted_sum_forward(x, weight):
    n_cols = x.size(-1)
    x2 = x.reshape(-1, n_cols)
    n_rows = x2.size(0)
    y32 = torch.empty(n_rows, device=x.device, dtype=torch.float32)
    grid = lambda meta: (triton.cdiv(n_rows, meta["BLOCK_ROWS"]),)  # noqa: E731
    weighted_sum_fwd_kernel[grid](x2, weight, y32, n_rows, n_cols, x2.stride(0), x2.stride(1), weight.stride(0),
                                  BLOCK_ROWS=BLOCK_ROWS, BLOCK_C=BLOCK_C)
    return y32.to(x.dtype).reshape(x.shape[:-1])
