# selftest-replaces: tl_best_tile
# selftest-must-fail: test_best_tile
# selftest-whole: searches square tiles only: another loop
# Mistake: only tries square tiles Bq = Bk, missing larger rectangular ones.
# 错误：只试了 Bq = Bk 的正方形块，漏掉了面积更大的长方形块。
def best_tile(sram_bytes, d, dtype):
    e = dtype.itemsize
    best, b = None, 16
    while e * d * 3 * b + 4 * (b * d + b * b + 2 * b) <= sram_bytes:
        best, b = (b, b), 2 * b
    return best
