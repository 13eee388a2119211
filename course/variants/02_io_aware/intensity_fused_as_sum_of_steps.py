# selftest-replaces: ai_intensity
# Variant: fused attention's FLOPs as the sum of the three steps' FLOPs; counts kept as FLOPs and elements. / 变体：融合注意力的 FLOP 取三步之和；先数 FLOP 和元素数。
def _flops(op, shapes):
    if op == "matmul":
        m, k, n = shapes
        return 2 * m * k * n
    if op == "softmax":
        rows, cols = shapes
        return 5 * rows * cols
    n_q, n_k, d = shapes
    if op == "scores":
        return _flops("matmul", (n_q, d, n_k)) + n_q * n_k
    if op == "pv":
        return _flops("matmul", (n_q, n_k, d))
    return _flops("scores", shapes) + _flops("softmax", (n_q, n_k)) + _flops("pv", shapes)


def _elements(op, shapes):
    if op == "matmul":
        m, k, n = shapes
        return m * k + k * n + m * n
    if op == "softmax":
        return 2 * shapes[0] * shapes[1]
    n_q, n_k, d = shapes
    moved = {"scores": n_q * d + n_k * d + n_q * n_k, "pv": n_q * n_k + n_k * d + n_q * d}
    return moved.get(op, 2 * n_q * d + 2 * n_k * d)


def arithmetic_intensity(op, shapes, dtype):
    if op not in ("matmul", "softmax", "scores", "pv", "fused_attention"):
        raise ValueError(utils.bilingual(f"未知的操作 {op}", f"unknown op {op}"))
    return _flops(op, shapes) / (_elements(op, shapes) * dtype.itemsize)
