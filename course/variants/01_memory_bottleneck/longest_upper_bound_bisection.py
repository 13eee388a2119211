# selftest-replaces: max_sequence
# Variant: an upper bound from the smallest possible bytes per score element, then a plain bisection loop.
# 变体：由每个分数元素最少的字节数得到上界，再做普通的二分循环。
def max_sequence_length(memory_bytes, batch, heads, d, dtype, training, device="cuda"):
    low, high = 0, int(math.isqrt(int(memory_bytes) // (batch * heads) + 1)) + 2  # at least 1 byte per score
    while low < high:
        middle = (low + high + 1) // 2
        if sum(attention_memory_bytes(batch, heads, middle, d, dtype, training, device).values()) <= memory_bytes:
            low = middle
        else:
            high = middle - 1
    return low
