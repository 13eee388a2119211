# selftest-replaces: max_sequence
# Variant: galloping search for an upper bound, then bisect.bisect_right over range() with a key.
# 变体：先倍增找上界，再用 bisect.bisect_right 在 range() 上带 key 二分。
import bisect


def max_sequence_length(memory_bytes, batch, heads, d, dtype, training, device="cuda"):
    def total(n):
        return sum(attention_memory_bytes(batch, heads, n, d, dtype, training, device).values())

    upper = 1
    while total(upper) <= memory_bytes:
        upper *= 2
    return bisect.bisect_right(range(1, upper + 1), memory_bytes, key=total)
