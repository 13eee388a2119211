# selftest-notebook: tiling.ipynb
# selftest-replaces: tl_best_tile
# selftest-must-fail: test_best_tile
# selftest-whole: a different program, not the reference with a change
# Mistake: breaks ties of equal area towards the larger Bk instead of the larger Bq.
# 错误：面积相同时取了较大的 Bk，而不是较大的 Bq。
def best_tile(sram_bytes, d, dtype):
    e = dtype.itemsize
    fitting = [
        (2**p, 2**r)
        for p in range(4, 16)
        for r in range(4, 16)
        if e * d * (2**p + 2 * 2**r) + 4 * (2**p * d + 2**p * 2**r + 2 * 2**p) <= sram_bytes
    ]
    return max(fitting, key=lambda t: (t[0] * t[1], t[1])) if fitting else None
