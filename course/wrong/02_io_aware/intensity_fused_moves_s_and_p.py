# selftest-notebook: io_aware.ipynb
# selftest-replaces: ai_intensity
# selftest-must-fail: test_arithmetic_intensity
# Mistake: fused attention still counts the bytes of S and P (as if they went to slow memory), and a multiply-add as one FLOP.
# 错误：融合注意力仍然计入 S 和 P 的字节（好像它们进了慢速内存），并且把一次乘加算作 1 FLOP。
def arithmetic_intensity(op, shapes, dtype):
    """FLOPs per byte of `op` on `shapes` (see the table), every operand read once and result written once."""
    e = dtype.itemsize
    if op == "matmul":
        m, k, n = shapes
        flops, nbytes = m * k * n, e * (m * k + k * n + m * n)
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
            flops = 4 * n_q * n_k * d + 6 * n_q * n_k
            nbytes = e * (2 * n_q * d + 2 * n_k * d + 4 * n_q * n_k)
    else:
        raise ValueError(utils.bilingual(f"未知的操作 {op!r}", f"unknown op {op!r}"))
    return flops / nbytes
