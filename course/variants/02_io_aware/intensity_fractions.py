# selftest-replaces: ai_intensity
# Variant: exact fractions, converted to float at the end; shapes unpacked by name. / 变体：用精确分数计算，最后转成 float。
from fractions import Fraction


def arithmetic_intensity(op, shapes, dtype):
    bytes_per_element = {torch.float64: 8, torch.float32: 4, torch.float16: 2, torch.bfloat16: 2}[dtype]
    if op == "softmax":
        rows, cols = shapes
        ratio = Fraction(5 * rows * cols, 2 * rows * cols * bytes_per_element)
    elif op == "matmul":
        m, k, n = shapes
        ratio = Fraction(2 * m * k * n, (m * k + k * n + m * n) * bytes_per_element)
    elif op == "scores":
        n_q, n_k, d = shapes
        ratio = Fraction(n_q * n_k * (2 * d + 1), (n_q * d + n_k * d + n_q * n_k) * bytes_per_element)
    elif op == "pv":
        n_q, n_k, d = shapes
        ratio = Fraction(2 * n_q * n_k * d, (n_q * n_k + n_k * d + n_q * d) * bytes_per_element)
    elif op == "fused_attention":
        n_q, n_k, d = shapes
        ratio = Fraction(n_q * n_k * (4 * d + 6), 2 * d * (n_q + n_k) * bytes_per_element)
    else:
        raise ValueError("unknown op: " + str(op))
    return float(ratio)
