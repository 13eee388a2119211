# selftest-replaces: max_sequence
# Variant: a recursive bisection between a known fit and a known miss.
# 变体：在一个已知放得下、一个已知放不下的 N 之间递归二分。
def max_sequence_length(memory_bytes, batch, heads, d, dtype, training, device="cuda"):
    def fits(n):
        return n == 0 or sum(attention_memory_bytes(batch, heads, n, d, dtype, training, device).values()) <= memory_bytes

    def search(good, bad):
        if bad - good == 1:
            return good
        middle = (good + bad) // 2
        return search(middle, bad) if fits(middle) else search(good, middle)

    bad = 1
    while fits(bad):
        bad *= 4
    return search(0, bad)
