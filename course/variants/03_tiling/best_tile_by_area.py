# selftest-replaces: tl_best_tile
# Variant: walks areas from large to small and, in each, Bq from large to small. / 变体：按面积从大到小搜索。
def best_tile(sram_bytes, d, dtype):
    e = dtype.itemsize

    def need(q, k):
        return e * d * q + 2 * e * d * k + 4 * q * d + 4 * q * k + 8 * q

    for log_area in range(30, 7, -1):
        for log_q in range(log_area - 4, 3, -1):
            q, k = 2**log_q, 2 ** (log_area - log_q)
            if k >= 16 and need(q, k) <= sram_bytes:
                return (q, k)
    return None
