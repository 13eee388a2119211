# selftest-replaces: max_sequence
# Variant: fits total(N) = a·N² + b·N from two evaluations, solves the quadratic, then steps to the exact answer.
# 变体：用两次求值拟合 total(N) = a·N² + b·N，解二次方程，再逐步修正到准确答案。
def max_sequence_length(memory_bytes, batch, heads, d, dtype, training, device="cuda"):
    def total(n):
        return sum(attention_memory_bytes(batch, heads, n, d, dtype, training, device).values())

    t1, t2 = total(1), total(2)
    a = (t2 - 2 * t1) / 2
    b = t1 - a
    if a > 0:
        n = int((-b + math.sqrt(b * b + 4 * a * memory_bytes)) / (2 * a))
    else:
        n = int(memory_bytes // b)
    n = max(n, 0)
    while n > 0 and total(n) > memory_bytes:
        n -= 1
    while total(n + 1) <= memory_bytes:
        n += 1
    return n
