# selftest-replaces: tl_loads
# selftest-must-fail: test_matmul_loads
# selftest-whole: a one-line formula: the patch is longer than the cell
# Mistake: thinks A is reloaded once per row tile and B once per column tile (the roles of the two loops swapped).
# 错误：以为 A 按行块数重读、B 按列块数重读（两层循环的作用弄反了）。
def matmul_hbm_loads(m, n, k, block_m, block_n, block_k):
    return m * k * math.ceil(m / block_m), k * n * math.ceil(n / block_n)
