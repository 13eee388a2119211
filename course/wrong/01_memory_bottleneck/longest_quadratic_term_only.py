# selftest-replaces: max_sequence
# selftest-must-fail: test_max_sequence_length
# selftest-whole: solves a quadratic instead of searching
# Mistake: solves memory = (bytes per score element) · B·H·N² and drops the N×d terms: N comes out too large.
# 错误：只解 内存 = (每个分数元素的字节数) · B·H·N²，丢掉了 N×d 的项：N 偏大。
def max_sequence_length(memory_bytes, batch, heads, d, dtype, training, device="cuda"):
    big = 2**20
    per_element = sum(attention_memory_bytes(1, 1, big, 0, dtype, training, device).values()) / big**2
    return int(math.sqrt(memory_bytes / (per_element * batch * heads)))
