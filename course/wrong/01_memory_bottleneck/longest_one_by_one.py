# selftest-replaces: max_sequence
# selftest-must-fail: test_max_sequence_length
# selftest-selfcheck-fails: test_max_sequence_length
# selftest-whole: a linear search instead of doubling and bisection
# Mistake: tries N = 1, 2, 3, … one by one: right, but never finishes for large memories.
# 错误：逐个尝试 N = 1, 2, 3, …：结果正确，但内存很大时算不完。
def max_sequence_length(memory_bytes, batch, heads, d, dtype, training, device="cuda"):
    n = 0
    while sum(attention_memory_bytes(batch, heads, n + 1, d, dtype, training, device).values()) <= memory_bytes:
        n += 1
    return n
