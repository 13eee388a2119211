# selftest-notebook: memory_bottleneck.ipynb
# selftest-replaces: max_sequence
# selftest-must-fail: test_max_sequence_length
# Mistake: returns the first N that no longer fits instead of the last one that does.
# 错误：返回第一个放不下的 N，而不是最后一个放得下的 N。
def max_sequence_length(memory_bytes, batch, heads, d, dtype, training, device="cuda"):
    def fits(n):
        return sum(attention_memory_bytes(batch, heads, n, d, dtype, training, device).values()) <= memory_bytes

    low, high = 0, 1
    while fits(high):
        low, high = high, 2 * high
    while high - low > 1:
        middle = (low + high) // 2
        if fits(middle):
            low = middle
        else:
            high = middle
    return high
