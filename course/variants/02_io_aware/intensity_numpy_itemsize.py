# selftest-replaces: ai_intensity
# Variant: lists of operand sizes summed with NumPy; the element size from torch's itemsize. / 变体：把各操作数的大小列成表用 NumPy 求和。
import numpy as np


def arithmetic_intensity(op, shapes, dtype):
    if op == "matmul":
        m, k, n = shapes
        flops, sizes = 2 * m * k * n, [m * k, k * n, m * n]
    elif op == "softmax":
        rows, cols = shapes
        flops, sizes = 5 * rows * cols, [rows * cols, rows * cols]
    elif op in ("scores", "pv"):
        n_q, n_k, d = shapes
        flops = 2 * n_q * n_k * d + (n_q * n_k if op == "scores" else 0)
        sizes = [n_q * d, n_k * d, n_q * n_k]
    elif op == "fused_attention":
        n_q, n_k, d = shapes
        flops, sizes = 4 * n_q * n_k * d + 6 * n_q * n_k, [n_q * d, n_k * d, n_k * d, n_q * d]
    else:
        raise ValueError(f"op must be matmul, softmax, scores, pv or fused_attention, not {op!r}")
    return flops / float(np.sum(np.array(sizes, dtype=np.int64)) * dtype.itemsize)
