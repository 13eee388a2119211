# selftest-replaces: max_sequence
# Variant: Newton's method on the model as a function of a real N, then integer correction.
# 变体：把模型看作实数 N 的函数用牛顿法求根，再做整数修正。
def max_sequence_length(memory_bytes, batch, heads, d, dtype, training, device="cuda"):
    def total(n):
        return sum(attention_memory_bytes(batch, heads, n, d, dtype, training, device).values())

    if total(1) > memory_bytes:
        return 0
    x = 1.0
    for _ in range(200):
        n = max(1, int(x))
        slope = max(total(n + 1) - total(n), 1)
        step = (memory_bytes - total(n)) / slope
        x = max(1.0, x + step)
        if abs(step) < 0.5:
            break
    n = max(1, int(x))
    while n > 1 and total(n) > memory_bytes:
        n -= 1
    while total(n + 1) <= memory_bytes:
        n += 1
    return n
