# selftest-replaces: softmax_rows
# Variant: online softmax in base 2 (tl.exp2 with log2 e scaling), multiply by 1/ℓ instead of dividing. / 变体：以 2 为底的在线 softmax（tl.exp2 配合 log2 e 缩放），乘以 1/ℓ 代替除法。
@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, stride_x_row, stride_x_col, stride_y_row, stride_y_col,
                   BLOCK_C: tl.constexpr):
    LOG2E: tl.constexpr = 1.4426950408889634
    pid = tl.program_id(0)
    src = x_ptr + pid * stride_x_row
    dst = y_ptr + pid * stride_y_row
    m2 = tl.full((1,), float("-inf"), tl.float32)  # running max of x·log2 e
    ell = tl.zeros((1,), dtype=tl.float32)  # running Σ 2^(x·log2 e − m2)
    for start in range(0, n_cols, BLOCK_C):
        idx = start + tl.arange(0, BLOCK_C)
        t = tl.load(src + idx * stride_x_col, mask=idx < n_cols, other=float("-inf")).to(tl.float32) * LOG2E
        m2_new = tl.maximum(m2, tl.max(t, axis=0))
        ell = ell * tl.exp2(m2 - m2_new) + tl.sum(tl.exp2(t - m2_new), axis=0)
        m2 = m2_new
    inv = 1.0 / ell
    for start in range(0, n_cols, BLOCK_C):
        idx = start + tl.arange(0, BLOCK_C)
        ok = idx < n_cols
        t = tl.load(src + idx * stride_x_col, mask=ok, other=float("-inf")).to(tl.float32) * LOG2E
        tl.store(dst + idx * stride_y_col, (tl.exp2(t - m2) * inv).to(y_ptr.dtype.element_ty), mask=ok)


def softmax_rows(x, block_c=128):
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)  # contiguous output
    softmax_kernel[(x.shape[0],)](x, out, x.shape[1], *x.stride(), *out.stride(), BLOCK_C=block_c)
    return out
