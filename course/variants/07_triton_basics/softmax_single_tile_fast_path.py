# selftest-replaces: softmax_rows
# Variant: a one-read fast path when the row fits in one tile, the online loop otherwise. / 变体：整行放得进一个分块时只读一遍，否则走在线循环。
@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, stride_x_row, stride_x_col, stride_y_row, stride_y_col,
                   BLOCK_C: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK_C)
    x_base = x_ptr + row * stride_x_row
    y_base = y_ptr + row * stride_y_row
    if n_cols <= BLOCK_C:
        # the whole row is in registers: one read, one write
        ok = offs < n_cols
        x = tl.load(x_base + offs * stride_x_col, mask=ok, other=float("-inf")).to(tl.float32)
        e = tl.exp(x - tl.max(x, axis=0))
        tl.store(y_base + offs * stride_y_col, (e / tl.sum(e, axis=0)).to(y_ptr.dtype.element_ty), mask=ok)
    else:
        m = tl.full((1,), float("-inf"), tl.float32)
        ell = tl.zeros((1,), dtype=tl.float32)
        for c0 in range(0, n_cols, BLOCK_C):
            cols = c0 + offs
            x = tl.load(x_base + cols * stride_x_col, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
            m_next = tl.maximum(m, tl.max(x, axis=0))
            ell = ell * tl.exp(m - m_next) + tl.sum(tl.exp(x - m_next), axis=0)
            m = m_next
        for c0 in range(0, n_cols, BLOCK_C):
            cols = c0 + offs
            ok = cols < n_cols
            x = tl.load(x_base + cols * stride_x_col, mask=ok, other=float("-inf")).to(tl.float32)
            tl.store(y_base + cols * stride_y_col, (tl.exp(x - m) / ell).to(y_ptr.dtype.element_ty), mask=ok)


def softmax_rows(x, block_c=128):
    y = torch.empty_like(x)
    softmax_kernel[(x.shape[0],)](x, y, x.shape[1], x.stride(0), x.stride(1), y.stride(0), y.stride(1),
                                  BLOCK_C=block_c)
    return y
