# selftest-notebook: tiling.ipynb
# selftest-replaces: tl_best_tile
# selftest-must-fail: test_best_tile
# selftest-selfcheck-fails: test_best_tile
# selftest-whole: a different program, not the reference with a change
# Mistake: counts the score tile in the inputs' dtype instead of float32, so in float16 it picks tiles that do not fit.
# 错误：分数块按输入的 dtype 计，而不是 float32；float16 时选出的块放不下。
def best_tile(sram_bytes, d, dtype):
    e = dtype.itemsize

    def fits(bq, bk):
        return e * d * (bq + 2 * bk) + 4 * bq * d + e * bq * bk + 8 * bq <= sram_bytes

    best = None
    bq = 16
    while fits(bq, 16):
        bk = 16
        while fits(bq, 2 * bk):
            bk *= 2
        if best is None or (bq * bk, bq) > (best[0] * best[1], best[0]):
            best = (bq, bk)
        bq *= 2
    return best
