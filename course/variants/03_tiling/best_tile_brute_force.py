# selftest-replaces: tl_best_tile
# Variant: every pair of powers of two, max by (area, Bq). / 变体：穷举所有 2 的幂组合。
def best_tile(sram_bytes, d, dtype):
    e = torch.finfo(dtype).bits // 8
    pairs = [(2**a, 2**b) for a in range(4, 20) for b in range(4, 20)]
    fitting = [(q, k) for q, k in pairs if e * d * (q + 2 * k) + 4 * (q * d + q * k + 2 * q) <= sram_bytes]
    return max(fitting, key=lambda t: (t[0] * t[1], t[0])) if fitting else None
