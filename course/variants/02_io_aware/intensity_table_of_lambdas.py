# selftest-replaces: ai_intensity
# Variant: a table of (FLOPs, elements) functions per op; element size from torch.finfo. / 变体：按操作查表（FLOP 与元素数的函数），元素字节数来自 torch.finfo。
COSTS = {
    "matmul": lambda m, k, n: (2 * m * k * n, m * k + k * n + m * n),
    "softmax": lambda r, c: (5 * r * c, 2 * r * c),
    "scores": lambda q, k, d: (2 * q * k * d + q * k, q * d + k * d + q * k),
    "pv": lambda q, k, d: (2 * q * k * d, q * k + k * d + q * d),
    "fused_attention": lambda q, k, d: (4 * q * k * d + 6 * q * k, 2 * q * d + 2 * k * d),
}


def arithmetic_intensity(op, shapes, dtype):
    if op not in COSTS:
        raise ValueError(f"unknown op {op!r}")
    flops, elements = COSTS[op](*shapes)
    return flops / (elements * torch.finfo(dtype).bits // 8)
