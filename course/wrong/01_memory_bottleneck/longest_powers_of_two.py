# selftest-replaces: max_sequence
# selftest-must-fail: test_max_sequence_length
# selftest-whole: doubling without bisection: the patch replaces the whole search
# Mistake: doubles N until it no longer fits and returns the last power of two, without bisecting.
# 错误：N 加倍直到放不下，返回最后一个 2 的幂，没有再二分。
def max_sequence_length(memory_bytes, batch, heads, d, dtype, training, device="cuda"):
    def fits(n):
        return sum(attention_memory_bytes(batch, heads, n, d, dtype, training, device).values()) <= memory_bytes

    if not fits(1):
        return 0
    n = 1
    while fits(2 * n):
        n *= 2
    return n
