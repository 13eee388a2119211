# selftest-replaces: ai_intensity
# Variant: a match statement returning (FLOPs, bytes), element size from an empty tensor. / 变体：用 match 语句返回（FLOP, 字节），元素字节数来自一个空张量。
def flops_and_bytes(op, shapes, dtype):
    e = torch.empty((), dtype=dtype).element_size()
    match op, tuple(shapes):
        case "matmul", (m, k, n):
            return 2 * m * k * n, e * (m * k + k * n + m * n)
        case "softmax", (rows, cols):
            return 5 * rows * cols, 2 * e * rows * cols
        case "scores", (nq, nk, d):
            return 2 * nq * nk * d + nq * nk, e * (nq * d + nk * d + nq * nk)
        case "pv", (nq, nk, d):
            return 2 * nq * nk * d, e * (nq * nk + nk * d + nq * d)
        case "fused_attention", (nq, nk, d):
            return 4 * nq * nk * d + 6 * nq * nk, e * 2 * (nq + nk) * d
    raise ValueError(f"unknown op {op!r} with shapes {shapes}")


def arithmetic_intensity(op, shapes, dtype):
    flops, nbytes = flops_and_bytes(op, shapes, dtype)
    return float(flops) / float(nbytes)
