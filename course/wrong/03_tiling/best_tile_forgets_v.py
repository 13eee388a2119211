# selftest-notebook: tiling.ipynb
# selftest-replaces: tl_best_tile
# selftest-must-fail: test_best_tile
# selftest-whole: a different program, not the reference with a change
# Mistake: leaves the V tile out of the budget (only Q and K tiles in the inputs' dtype).
# 错误：预算里漏掉了 V 块（只算了 Q 和 K 块）。
def best_tile(sram_bytes, d, dtype):
    e = dtype.itemsize
    best = None
    for p in range(4, 16):
        for r in range(4, 16):
            bq, bk = 2**p, 2**r
            if e * d * (bq + bk) + 4 * (bq * d + bq * bk + 2 * bq) <= sram_bytes:
                if best is None or (bq * bk, bq) > (best[0] * best[1], best[0]):
                    best = (bq, bk)
    return best
