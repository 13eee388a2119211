# selftest-replaces: tl_loads
# selftest-must-fail: test_matmul_loads
# selftest-whole: a one-line formula: the patch is longer than the cell
# Mistake: counts n // block_n and m // block_m tiles, so the loads of the remainder tiles are missing.
# 错误：块数算成 n // block_n、m // block_m，余数块的读取被漏掉了。
def matmul_hbm_loads(m, n, k, block_m, block_n, block_k):
    return m * k * (n // block_n), k * n * (m // block_m)
