# selftest-notebook: io_aware.ipynb
# selftest-replaces: ai_intensity
# selftest-must-fail: test_arithmetic_intensity
# Mistake: assumes 4 bytes per element whatever the dtype (float16 halves the bytes and doubles the intensity).
# 错误：不管 dtype 都按每个元素 4 字节算（float16 的字节减半，强度翻倍）。
def arithmetic_intensity(op, shapes, dtype):
    """FLOPs per byte of `op` on `shapes` (see the table), every operand read once and result written once."""
    e = 4
    if op == "matmul":
        m, k, n = shapes
        flops, nbytes = 2 * m * k * n, e * (m * k + k * n + m * n)
    elif op == "softmax":
        rows, cols = shapes
        flops, nbytes = 5 * rows * cols, 2 * e * rows * cols
    elif op in ("scores", "pv", "fused_attention"):
        n_q, n_k, d = shapes
        if op == "scores":
            flops, nbytes = 2 * n_q * n_k * d + n_q * n_k, e * (n_q * d + n_k * d + n_q * n_k)
        elif op == "pv":
            flops, nbytes = 2 * n_q * n_k * d, e * (n_q * n_k + n_k * d + n_q * d)
        else:
            flops, nbytes = 4 * n_q * n_k * d + 6 * n_q * n_k, e * (2 * n_q * d + 2 * n_k * d)
    else:
        raise ValueError(utils.bilingual(f"未知的操作 {op!r}", f"unknown op {op!r}"))
    return flops / nbytes
